//! `search`: ranked hits across the categories the grant holds, within its facets.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::args::{Cursor, DayArg, FacetId, Limit};
use super::fetch;
use super::{Need, ToolContext, ToolDef, ToolError, ToolOutput, check_len, day_range, nothing_matched, searchable};
use std::sync::Arc;

use crate::auth::Category;
use crate::journal::content::Scope;
use crate::journal::day::Day;
use crate::journal::index::{Mode, ModelError, NoteFilter, SearchQuery, pattern};
use crate::journal::notes::{self, filters, query, rules};

pub const DEF: ToolDef = ToolDef {
    name: "search",
    title: "search the journal",
    description: "Search the journal's text (transcripts, entities, facets, notes, as granted) by meaning and \
                  words: a question in your own words finds what it means, an item holding more of its words ranks \
                  higher, and an exact name still ranks its item first. mode: hybrid (the default), lexical (words \
                  only: items holding every word first, then those holding more of them), semantic (meaning only, \
                  nearest first) or all_words (only items holding every word). Use \"quotes\" for a phrase and \
                  -word to exclude. Filters in the query narrow it: path:Folder/ tag:name \
                  has:key -has:key [key:op value] (ops: is, is not, contains, exists, missing, gt, lt, under) \
                  facet:name after:YYYY-MM-DD before:YYYY-MM-DD (or the path and where arguments); a query of \
                  filters only lists what passes them. like: a hit's reference finds the items nearest in meaning \
                  to it; regex: true makes the query a case-insensitive pattern; fields: metadata searches notes' \
                  frontmatter values. Returns ranked hits, each with its score, how it matched, a snippet and a reference.",
    needs: Need::AnyRead,
    read_only: true,
    destructive: false,
    idempotent: true,
    input: crate::schema::of::<Args>,
    output: crate::schema::of::<Output>,
    handler: handler!(read),
    asks: None,
};

/// Arguments of search.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// What to look for, up to 4096 bytes: words, "phrases", -exclusions and filters (path:, tag:, has:, -has:,
    /// [key:op value], facet:, after:, before:). May be left out with `like`, or hold only filters.
    #[serde(default)]
    pub query: String,
    /// How many hits, 1-100 (default 10).
    #[serde(default)]
    pub limit: Limit<10, 100>,
    /// The next_cursor of the previous page.
    pub cursor: Option<Cursor>,
    /// Only this day (YYYY-MM-DD or YYYYMMDD).
    pub day: Option<DayArg>,
    /// Only on or after this day.
    pub day_from: Option<DayArg>,
    /// Only on or before this day.
    pub day_to: Option<DayArg>,
    /// Only this category.
    pub category: Option<String>,
    /// Only this facet (an id from list_facets).
    pub facet: Option<FacetId>,
    /// How to rank: "hybrid" (the default: meaning and words), "lexical" (words only: items holding every word
    /// first, then those holding more of them), "semantic" (meaning only, nearest first) or "all_words" (only
    /// items holding every word, ranked by BM25).
    pub mode: Option<SearchMode>,
    /// Only notes in this folder (`Projects/`) or this note (`Projects/alpha.md`), as the path: filter.
    pub path: Option<String>,
    /// Only notes whose frontmatter passes these conditions, in base_query's `where` language: `status is
    /// "active" and due lt now`, `priority gt 2 or tags contains "urgent"` (`and` binds tighter).
    #[serde(rename = "where")]
    pub where_: Option<String>,
    /// Items like this one instead of words: a reference from a search or listing; the nearest in meaning
    /// (never the item itself), under the same filters. The query then holds no words.
    pub like: Option<String>,
    /// What the words are looked for in: "all" (the default: titles, text, note paths and tags) or
    /// "metadata" (notes' frontmatter values only; every word must match, and hits carry no snippet).
    pub fields: Option<SearchFields>,
    /// true: the whole query is a case-insensitive regular expression matched against titles and text (no
    /// inline filters: narrow with path, where and the other arguments); hits rank by how often they match.
    #[serde(default)]
    pub regex: bool,
}

/// Where search looks for the words.
#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
#[serde(try_from = "String")]
pub enum SearchFields {
    All,
    Metadata,
}

impl JsonSchema for SearchFields {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> std::borrow::Cow<'static, str> {
        "SearchFields".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({ "type": "string", "enum": ["all", "metadata"] })
    }
}

impl TryFrom<String> for SearchFields {
    type Error = String;

    fn try_from(fields: String) -> Result<SearchFields, String> {
        match fields.as_str() {
            "all" => Ok(SearchFields::All),
            "metadata" => Ok(SearchFields::Metadata),
            _ => {
                let shown: String = fields.chars().filter(|c| !c.is_control()).take(64).collect();
                Err(format!("fields must be all or metadata, not \"{shown}\""))
            }
        }
    }
}

/// How search ranks.
#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
#[serde(try_from = "String")]
pub enum SearchMode {
    Hybrid,
    Lexical,
    Semantic,
    AllWords,
}

impl JsonSchema for SearchMode {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> std::borrow::Cow<'static, str> {
        "SearchMode".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({ "type": "string", "enum": ["hybrid", "lexical", "semantic", "all_words"] })
    }
}

impl TryFrom<String> for SearchMode {
    type Error = String;

    fn try_from(mode: String) -> Result<SearchMode, String> {
        match mode.as_str() {
            "hybrid" => Ok(SearchMode::Hybrid),
            "lexical" => Ok(SearchMode::Lexical),
            "semantic" => Ok(SearchMode::Semantic),
            "all_words" => Ok(SearchMode::AllWords),
            _ => {
                let shown: String = mode.chars().filter(|c| !c.is_control()).take(64).collect();
                Err(format!(
                    "mode must be hybrid, lexical, semantic or all_words, not \"{shown}\""
                ))
            }
        }
    }
}

/// What search answers.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Output {
    pub results: Vec<Hit>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// One hit.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Hit {
    pub title: String,
    /// The day of the item (YYYY-MM-DD), when it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub date: Option<String>,
    pub category: String,
    /// A note's path from the top of the notes folder.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The passage where the words weigh most (none for a search of metadata).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub snippet: String,
    /// Pass to fetch for the whole item.
    pub reference: String,
    /// The ranking's score: higher is better, comparable within one search only.
    pub score: f32,
    /// How the hit matched.
    pub matched: Matched,
}

/// How a hit matched the query.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Matched {
    /// The share of the query's words the item holds, 0 to 1 (rarer words weigh more), when words found it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub words: Option<f32>,
    /// Its similarity in meaning to the query, -1 to 1, when meaning found it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub meaning: Option<f32>,
}

pub async fn run(context: &ToolContext<'_>, args: Args) -> Result<ToolOutput, ToolError> {
    check_len("query", &args.query, 4096)?;
    let pattern = match args.regex {
        true => {
            if args.mode.is_some() || args.like.is_some() || args.fields.is_some() {
                return Err(ToolError::Invalid(
                    "regex: true matches the pattern alone: leave mode, like and fields out".into(),
                ));
            }
            if args.query.is_empty() {
                return Err(ToolError::Invalid("regex: true needs a pattern in query".into()));
            }
            let compiled = pattern::compile(&args.query).map_err(|e| ToolError::Invalid(format!("regex: {e}")))?;
            Some(compiled)
        }
        false => None,
    };
    // A pattern is the whole query: its brackets and colons are the pattern's, not filters.
    let mut filters = match pattern {
        Some(_) => filters::Filters::default(),
        None => filters::parse(&args.query).map_err(|e| ToolError::Invalid(e.to_string()))?,
    };
    if let Some(path) = &args.path {
        check_len("path", path, 1024)?;
        filters.paths.push(path.clone());
    }
    let alternatives = match &args.where_ {
        Some(text) => {
            check_len("where", text, 4096)?;
            query::parse_where(text).map_err(|e| ToolError::Invalid(format!("where: {}", e.message)))?
        }
        None => Vec::new(),
    };
    let like = match &args.like {
        Some(reference) => Some(like(context, reference, &filters, args.mode).await?),
        None => None,
    };
    if filters.text.trim().is_empty()
        && !filters.any()
        && alternatives.is_empty()
        && like.is_none()
        && pattern.is_none()
    {
        return Err(ToolError::Invalid(
            "query must not be empty: give words or filters, or the path, where or like argument".into(),
        ));
    }
    let limit = args.limit.get();
    let (from, to) = day_range(args.day, args.day_from, args.day_to)?;
    // after: and before: are strict, and narrow the day range further.
    let from = latest(from, filters.after.map(|d| Day::from_epoch_days(d.epoch_days() + 1)));
    let to = earliest(to, filters.before.map(|d| d.minus_days(1)));
    let granted = searchable(context.connection);
    let mut categories: Vec<Category> = match &args.category {
        None => granted,
        Some(name) => {
            check_len("category", name, 64)?;
            let category = Category::parse(name).filter(|c| granted.contains(c)).ok_or_else(|| {
                ToolError::Invalid(format!("category \"{name}\" is not one this connection can search"))
            })?;
            vec![category]
        }
    };
    let metadata = args.fields == Some(SearchFields::Metadata);
    if metadata {
        if like.is_some() || args.mode.is_some_and(|mode| mode != SearchMode::AllWords) {
            return Err(ToolError::Invalid(
                "fields: metadata looks for every word in notes' frontmatter values: leave mode and like out".into(),
            ));
        }
        if filters.text.trim().is_empty() {
            return Err(ToolError::Invalid("fields: metadata needs words in query".into()));
        }
    }
    if filters.notes_only() || !alternatives.is_empty() || metadata {
        // Paths, tags and frontmatter belong to notes alone.
        categories.retain(|c| *c == Category::Notes);
    }
    let mut scope = context.scope(args.facet.as_ref())?;
    for name in &filters.facets {
        scope = narrow(&scope, &context.facet_by_name(name)?);
    }
    let conditions = conditions(&filters)?;
    let mode = match args.mode {
        None | Some(SearchMode::Hybrid) => Mode::Hybrid,
        Some(SearchMode::AllWords) => Mode::AllWords,
        Some(SearchMode::Lexical) => Mode::Lexical,
        Some(SearchMode::Semantic) => Mode::Semantic,
    };
    // Frontmatter values are searched by their words alone, and a pattern by itself.
    let mode = if metadata || pattern.is_some() {
        Mode::AllWords
    } else {
        mode
    };
    let unranked_by_meaning = unranked_by_meaning(mode, context.journal.index.meaning_ready());
    let request = format!(
        "{}\n{:?}\n{:?}\n{:?}\n{:?}\n{limit}\n{mode:?}\n{:?}\n{:?}\n{:?}",
        args.query, from, to, args.category, args.facet, args.path, args.where_, like
    ) + if metadata { "\nmetadata" } else { "" }
        + if pattern.is_some() { "\nregex" } else { "" };
    let offset = context.offset("search", &request, args.cursor.as_ref())?;
    let empty_range = matches!((from, to), (Some(from), Some(to)) if from > to);
    if categories.is_empty() || empty_range || scope == Scope::Facets(Vec::new()) {
        return answer(Vec::new(), None, None);
    }
    let reader = context.reader();
    let set = context.journal.notes.set();
    let with_notes = categories.contains(&Category::Notes);
    let now_ms = crate::clock::unix_now() * 1000;
    let mut query = SearchQuery {
        text: filters.text.clone(),
        categories: categories.iter().map(|c| c.as_str().to_string()).collect(),
        facets: scope.names(),
        day_from: from.map(Day::as_number),
        day_to: to.map(Day::as_number),
        tags: filters.tags.clone(),
        not_tags: filters.not_tags.clone(),
        folders: folders(&filters.paths)?,
        not_folders: folders(&filters.not_paths)?,
        mode,
        offset,
        limit,
        like: like.clone(),
        metadata,
        ..SearchQuery::default()
    };
    let (worker_set, worker_reader) = (Arc::clone(&set), reader.clone());
    let journal = context.journal.clone();
    let worker_pattern = pattern.clone();
    // A pruned search reads the few documents that can make the top, so it runs here: handing a few
    // hundred microseconds to the blocking pool costs two thread switches, a tenth of the search.
    // Any other (filters alone, frontmatter conditions that need a scan of the notes or something
    // built first) may take milliseconds, and runs on the blocking pool.
    // By meaning, every document with a vector is scored: that is no pruned search.
    let bounded = mode == Mode::AllWords
        && like.is_none()
        && pattern.is_none()
        && alternatives.is_empty()
        && crate::journal::index::is_pruned(&filters.text)
        && (conditions.is_empty() || notes::ops::passing_is_quick(&set, &reader, &conditions));
    let mut work = move || {
        if with_notes {
            query.not_files = notes::ops::hidden_by_overrides(&worker_set, &worker_reader);
            if !conditions.is_empty() || !alternatives.is_empty() {
                let mut passing = notes::ops::passing(&worker_set, &worker_reader, &conditions, now_ms);
                if !alternatives.is_empty() {
                    passing.intersect(&notes::ops::passing_any(
                        &worker_set,
                        &worker_reader,
                        &alternatives,
                        now_ms,
                    ));
                }
                let set = Arc::clone(&worker_set);
                let passes = move |key: u64| set.row_of_index_key(key).is_some_and(|row| passing.contains(row));
                query.note_filter = Some(NoteFilter(Arc::new(passes)));
            }
        }
        match &worker_pattern {
            Some(pattern) => journal
                .index
                .search_regex(&query, pattern)
                .map(|found| (found.hits, found.more, found.partial)),
            None => journal.index.search(&query).map(|(hits, more)| (hits, more, false)),
        }
    };
    let searched = if bounded {
        work()
    } else {
        tokio::task::spawn_blocking(work).await?
    };
    let (hits, more, partial) = searched.map_err(|e| ToolError::Failed(e.to_string()))?;
    let mut seen = std::collections::HashSet::new();
    let results: Vec<Hit> = hits
        .into_iter()
        // An entity can match through several of its documents; show it once a page.
        .filter(|hit| seen.insert((hit.category.clone(), hit.path.clone())))
        // A note is shown only while the reader may see it as the set knows it now.
        .filter(|hit| hit.category != "notes" || set.find_path(&hit.path, &reader).is_some())
        .map(|hit| {
            let kind = kind_of(&hit.category);
            Hit {
                reference: context.reference(kind, &hit.path),
                date: hit.day.and_then(format_day),
                path: (hit.category == "notes").then(|| hit.path.clone()),
                title: hit.title,
                category: hit.category,
                snippet: hit.snippet,
                score: hit.score,
                matched: Matched {
                    words: hit.words,
                    meaning: hit.meaning,
                },
            }
        })
        .collect();
    let next_cursor = more.then(|| context.cursor("search", &request, offset + limit));
    // A question no item holds a word of is still answered by meaning: the agent is told, so that
    // it reads the hits as the nearest there are, not as matches.
    let by_meaning_alone = (mode == Mode::Hybrid
        && like.is_none()
        && !filters.text.trim().is_empty()
        && !results.is_empty()
        && results.iter().all(|hit| hit.matched.words.is_none()))
    .then(|| "no hit holds a word of the query: these are the nearest in meaning (matched.meaning)".to_string());
    // An index made anew (a first start, a new version of the index or the model) is filled by the
    // first sync: until it ends, an answer may lack items, and says so rather than being complete.
    let building = context.journal.index_building().then(|| {
        "the search index is being built (a first start, or a new version of the journal): some items may be \
         missing from these results; ask again shortly"
            .to_string()
    });
    let read_part = partial.then(|| {
        format!(
            "regex read the first {} items that pass the filters, not all: narrow it with path, where, category, \
             facet or a day range to read them all",
            pattern::SCAN_LIMIT
        )
    });
    answer(
        results,
        next_cursor,
        building.or(read_part).or(unranked_by_meaning).or(by_meaning_alone),
    )
}

/// The index path of the item `reference` names, once the connection is found to reach it (a
/// reference outlives a note's privacy or a narrowed grant: those answer as a missing item). The
/// query may hold filters but no words, and the mode, if given, must be semantic.
async fn like(
    context: &ToolContext<'_>,
    reference: &str,
    filters: &filters::Filters,
    mode: Option<SearchMode>,
) -> Result<String, ToolError> {
    if !filters.text.trim().is_empty() {
        return Err(ToolError::Invalid(
            "like finds items like the one given: leave the words out of query (its filters are kept)".into(),
        ));
    }
    if mode.is_some_and(|mode| mode != SearchMode::Semantic) {
        return Err(ToolError::Invalid("like ranks by meaning: leave mode out".into()));
    }
    let (kind, path) = context.open_reference(reference, &fetch::KINDS)?;
    let category = fetch::category_of(&kind);
    if category == Category::Notes {
        if !context.connection.grant.has(Category::Notes) {
            return Err(ToolError::Refused(
                "this connection's access no longer includes notes".into(),
            ));
        }
        // As the hits of a search are checked: the note as the set knows it now, seen by this reader.
        if context
            .journal
            .notes
            .set()
            .find_path(&path, &context.reader())
            .is_none()
        {
            return Err(fetch::gone());
        }
    } else {
        fetch::reachable_item(context, category, &kind, &path).await?;
    }
    Ok(path)
}

fn answer(results: Vec<Hit>, next_cursor: Option<String>, said: Option<String>) -> Result<ToolOutput, ToolError> {
    let empty = results.is_empty();
    let note = said.or_else(|| empty.then(|| nothing_matched("items")));
    ToolOutput::of(
        &Output {
            results,
            next_cursor,
            note,
        },
        empty,
    )
}

/// The frontmatter conditions of a query's filters: `has:`, `-has:` and `[key:op value]`, read by
/// base_query's own condition parser so both mean the same.
fn conditions(filters: &filters::Filters) -> Result<Vec<query::Condition>, ToolError> {
    let mut conditions = Vec::new();
    for key in &filters.has {
        conditions.push(condition(&format!("{} exists", field(key)?), &format!("has:{key}"))?);
    }
    for key in &filters.not_has {
        conditions.push(condition(&format!("{} missing", field(key)?), &format!("-has:{key}"))?);
    }
    // A path filter that names a note (`path:Projects/alpha.md`) is a condition on its path; one
    // that names a folder is an indexed term (`folders`).
    for (paths, op) in [(&filters.paths, "is"), (&filters.not_paths, "is not")] {
        for path in paths.iter().filter(|p| p.ends_with(".md")) {
            let path = rules::typed_note_path(path).map_err(|e| ToolError::Invalid(format!("path:{path}: {e}")))?;
            conditions.push(condition(
                &format!("__path {op} {}", quoted(&path)),
                &format!("path:{path}"),
            )?);
        }
    }
    for (text, column) in &filters.conditions {
        conditions.push(condition(text, &format!("the filter at column {column}"))?);
    }
    Ok(conditions)
}

/// The folders of path filters, read like a typed folder (a leading `/` is dropped); note paths
/// (`.md`) are conditions instead.
fn folders(paths: &[String]) -> Result<Vec<String>, ToolError> {
    paths
        .iter()
        .filter(|p| !p.ends_with(".md"))
        .map(|p| rules::typed_folder(p).map_err(|e| ToolError::Invalid(format!("path:{p}: {e}"))))
        .filter(|f| !matches!(f, Ok(folder) if folder.is_empty()))
        .collect()
}

/// A frontmatter key as the query language writes it: bare when it is a plain name, else in
/// backquotes.
fn field(key: &str) -> Result<String, ToolError> {
    let plain = key.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && key.chars().all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c));
    if plain {
        Ok(key.to_string())
    } else if key.contains('`') {
        Err(ToolError::Invalid(format!(
            "has:{key}: a key with a backquote cannot be searched"
        )))
    } else {
        Ok(format!("`{key}`"))
    }
}

/// A string as a quoted value of the query language.
fn quoted(text: &str) -> String {
    format!("\"{}\"", text.replace('\\', "\\\\").replace('"', "\\\""))
}

fn condition(text: &str, name: &str) -> Result<query::Condition, ToolError> {
    query::parse_condition(text).map_err(|e| ToolError::Invalid(format!("{name}: {}", e.message)))
}

/// The part of a scope inside another (a facet named twice must be in both).
fn narrow(scope: &Scope, other: &Scope) -> Scope {
    match (scope, other) {
        (Scope::WholeJournal, other) => other.clone(),
        (scope, Scope::WholeJournal) => scope.clone(),
        (Scope::Facets(a), Scope::Facets(b)) => Scope::Facets(a.iter().filter(|f| b.contains(f)).cloned().collect()),
    }
}

fn latest(a: Option<Day>, b: Option<Day>) -> Option<Day> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    }
}

fn earliest(a: Option<Day>, b: Option<Day>) -> Option<Day> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// The reference kind of an index category.
pub fn kind_of(category: &str) -> &'static str {
    match category {
        "transcripts" => "transcript",
        "entities" => "entity",
        "notes" => "note",
        _ => "facet",
    }
}

/// Without its model, meaning cannot rank: words do, and the answer says so (for the modes that
/// would have asked the model).
fn unranked_by_meaning(mode: Mode, model: Result<(), &ModelError>) -> Option<String> {
    match mode {
        Mode::Hybrid | Mode::Semantic => model
            .err()
            .map(|error| format!("ranked by words only: search by meaning is unavailable ({error})")),
        Mode::Lexical | Mode::AllWords => None,
    }
}

/// `YYYYMMDD` as `YYYY-MM-DD`.
pub fn format_day(number: u64) -> Option<String> {
    Day::parse(&number.to_string()).ok().map(|d| d.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mode_is_one_of_four_and_its_schema_says_which() {
        let schema = crate::schema::of::<Args>();
        let mode = serde_json::to_string(&schema["properties"]["mode"]).unwrap();
        assert!(
            mode.contains(r#""enum":["hybrid","lexical","semantic","all_words""#),
            "{mode}"
        );
        assert_eq!(SearchMode::try_from("semantic".to_string()), Ok(SearchMode::Semantic));
        let refused = SearchMode::try_from("Hybrid".to_string()).unwrap_err();
        assert_eq!(
            refused,
            "mode must be hybrid, lexical, semantic or all_words, not \"Hybrid\""
        );
    }

    #[test]
    fn a_model_that_did_not_load_is_named_where_meaning_was_asked_for() {
        let damaged = ModelError::Dims { dims: 384, wanted: 256 };
        let note = unranked_by_meaning(Mode::Hybrid, Err(&damaged)).unwrap();
        assert_eq!(
            note,
            "ranked by words only: search by meaning is unavailable \
             (the model makes vectors of 384 numbers and the index keeps 256)"
        );
        assert!(unranked_by_meaning(Mode::Semantic, Err(&damaged)).is_some());
        assert_eq!(
            unranked_by_meaning(Mode::Lexical, Err(&damaged)),
            None,
            "words were asked for"
        );
        assert_eq!(unranked_by_meaning(Mode::AllWords, Err(&damaged)), None);
        assert_eq!(unranked_by_meaning(Mode::Hybrid, Ok(())), None);
    }
}
