//! The read operations on notes that tools perform: list, read one (with its AGENTS.md), skills,
//! `base_query` runs and the parts of a search that concern notes.
//!
//! Each takes a `Reader` and goes through `access::sight` (through the `NoteSet` lookups, and again
//! on the file as it is read now, so a note made private a moment ago is not served before the next
//! sync). A note that is missing, hidden or quarantined gives the same `NoteError::Missing`, built
//! by one function, before any file is opened for the first two.

use std::sync::Arc;

use serde_json::Value;

use super::access::{Reader, Sight, sight};
use super::note::{self, Note, Override};
use super::query::{self, Catalog, Condition, NoteFields, Query, QueryOutput, ValueIndex};
use super::rowset::RowSet;
use super::set::{NoteSet, skill_name};
use super::{Vault, rules};

/// How a tool names a note.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A vault-relative path, already read with `rules::typed_note_path`.
    Path(String),
    /// A frontmatter id or `path:<path>`.
    Id(String),
    /// A skill's name (`Skills/<name>/SKILL.md`).
    Skill(String),
}

/// Why a note could not be given.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NoteError {
    /// Missing, hidden or quarantined: one answer for all three.
    #[error("{0}")]
    Missing(String),
    /// Several notes the reader sees share the frontmatter id it named.
    #[error("several notes have the id \"{id}\": {}; read the one you mean by its path", paths.join(", "))]
    Ambiguous { id: String, paths: Vec<String> },
}

/// The answer for a note that is not there for this reader, whatever the reason.
pub fn missing(target: &Target) -> NoteError {
    NoteError::Missing(match target {
        Target::Path(path) => format!("there is no note at \"{path}\"; see notes_list or search"),
        Target::Id(id) => format!("there is no note with id \"{id}\"; see notes_list or search"),
        Target::Skill(name) => format!("there is no skill \"{name}\"; see skills_list"),
    })
}

/// A note read for an agent.
#[derive(Debug, Clone)]
pub struct NoteText {
    /// The note as read just now.
    pub note: Note,
    pub body: String,
    /// The whole file as it is, frontmatter and body.
    pub text: String,
    pub sight: Sight,
    /// The governing AGENTS.md: its path and body.
    pub agents_md: Option<(String, String)>,
}

/// Which notes a listing wants.
#[derive(Debug, Clone, Default)]
pub struct ListFilter {
    /// Only notes in this folder or below (`""`: all).
    pub folder: String,
    /// Only notes with this tag (ignoring case; `a` also matches `a/b`).
    pub tag: Option<String>,
    /// Only notes modified at or after this time (Unix milliseconds).
    pub since_ms: Option<i64>,
}

/// A page of notes `reader` may see, newest first, and whether more follow.
pub fn list(
    set: &NoteSet,
    reader: &Reader,
    filter: &ListFilter,
    offset: usize,
    limit: usize,
) -> (Vec<Arc<Note>>, bool) {
    let tag = filter.tag.as_deref().map(|t| t.trim_start_matches('#').to_lowercase());
    let mut page = Vec::with_capacity(limit.min(1000));
    let mut matched = 0usize;
    for (note, _) in set.visible(reader) {
        // Newest first: once past `since`, nothing older can match.
        if let Some(since) = filter.since_ms
            && note.modified_ms < since
        {
            break;
        }
        if !rules::under(&note.path, &filter.folder) {
            continue;
        }
        if let Some(tag) = &tag
            && !has_tag(note, tag)
        {
            continue;
        }
        matched += 1;
        if matched <= offset {
            continue;
        }
        if page.len() == limit {
            return (page, true);
        }
        page.push(Arc::clone(note));
    }
    (page, false)
}

/// Whether a note carries `tag` (lowercase) or a tag nested under it.
pub fn has_tag(note: &Note, tag: &str) -> bool {
    note.tags.iter().any(|t| {
        let t = t.to_lowercase();
        t == tag || (t.starts_with(tag) && t.as_bytes().get(tag.len()) == Some(&b'/'))
    })
}

/// Reads one note for `reader`, with its governing AGENTS.md.
pub fn read(vault: &Vault, reader: &Reader, target: &Target) -> Result<NoteText, NoteError> {
    let set = vault.set();
    let found = match target {
        Target::Path(path) => set.find_path(path, reader),
        Target::Id(id) => {
            // Never one of several at random: a note that copies another's id must not pass for it.
            let paths = set.paths_with_id(id, reader);
            if paths.len() > 1 {
                return Err(NoteError::Ambiguous { id: id.clone(), paths });
            }
            set.find_id(id, reader)
        }
        Target::Skill(name) => {
            let path = format!("Skills/{name}/SKILL.md");
            set.find_path(&path, reader)
                .filter(|(n, _)| skill_name(&n.path) == Some(name.as_str()))
        }
    };
    let path = found.ok_or_else(|| missing(target))?.0.path.clone();
    let (note, body, text, seen) = fresh(vault, reader, &path).ok_or_else(|| missing(target))?;
    let agents_md = set
        .agents_md(&path, reader)
        .and_then(|governing| fresh(vault, reader, &governing.path))
        .map(|(governing, body, _, _)| (governing.path, body));
    Ok(NoteText {
        note,
        body,
        text,
        sight: seen,
        agents_md,
    })
}

/// A note's file as it is now, if `reader` may still see it: the note, its body, its whole text.
fn fresh(vault: &Vault, reader: &Reader, path: &str) -> Option<(Note, String, String, Sight)> {
    let (bytes, modified_ms) = vault.read_file(path)?;
    let read = note::read(path, &bytes, modified_ms).ok()?;
    let seen = sight(&read.note, reader);
    if !seen.visible() {
        return None;
    }
    let body = read.body.to_string();
    let text = String::from_utf8_lossy(&bytes).into_owned();
    Some((read.note, body, text, seen))
}

/// Runs a query over the notes `reader` may see.
pub fn run_query(set: &NoteSet, reader: &Reader, query: &Query, now_ms: i64) -> QueryOutput {
    with_catalog(set, &query.keys(), |catalog| {
        query::run_over(query, catalog, &set.visible_rows(reader), now_ms)
    })
}

/// The rows of the notes `reader` may see for which every condition holds: the filter a search
/// with frontmatter conditions (`has:`, `[key:op value]`) applies.
pub fn passing(set: &NoteSet, reader: &Reader, conditions: &[Condition], now_ms: i64) -> RowSet {
    let keys = keys_of(conditions);
    with_catalog(set, &keys, |catalog| {
        query::passing(conditions, catalog, &set.visible_rows(reader), now_ms)
    })
}

/// The visible notes for which any of `alternatives` holds (each a list of conditions that must
/// all hold): a `where` line with `or`.
pub fn passing_any(set: &NoteSet, reader: &Reader, alternatives: &[Vec<Condition>], now_ms: i64) -> RowSet {
    let mut rows: Option<RowSet> = None;
    for conditions in alternatives {
        let passing = passing(set, reader, conditions, now_ms);
        match rows.as_mut() {
            Some(rows) => rows.unite(&passing),
            None => rows = Some(passing),
        }
    }
    rows.unwrap_or_else(|| passing(set, reader, &[], now_ms))
}

/// Whether `passing` is a few operations on bitmaps, with nothing to build and no note to test.
pub fn passing_is_quick(set: &NoteSet, reader: &Reader, conditions: &[Condition]) -> bool {
    query::answered_by_indexes(conditions) && set.prepared(reader, &keys_of(conditions))
}

/// The frontmatter keys that conditions name, each once.
fn keys_of(conditions: &[Condition]) -> Vec<&str> {
    let mut keys: Vec<&str> = Vec::new();
    for key in conditions.iter().flat_map(Condition::keys) {
        if !keys.contains(&key) {
            keys.push(key);
        }
    }
    keys
}

/// The search index's file keys of the notes that `agent_overrides` hide from `reader` (a search
/// excludes them by name; private notes are not indexed at all).
pub fn hidden_by_overrides(set: &NoteSet, reader: &Reader) -> Vec<String> {
    set.with_overrides()
        .filter(|note| reader.override_in(note) == Some(Override::NoAccess))
        .map(|note| super::note::file_key(&note.path))
        .collect()
}

/// The set as a query's catalog, its frontmatter `keys` read from the set's columns.
struct SetCatalog<'a> {
    set: &'a NoteSet,
    columns: &'a [(&'a str, &'a [Option<Value>])],
}

impl<'a> Catalog<'a> for SetCatalog<'a> {
    fn row_count(&self) -> usize {
        self.set.len()
    }

    fn fields(&self, row: usize) -> NoteFields<'a> {
        self.set.fields_at(row, self.columns)
    }

    fn values(&self, key: &str) -> Arc<ValueIndex> {
        self.set.value_index(key)
    }

    fn order(&self, name: &str, build: &dyn Fn() -> Vec<u32>) -> Arc<Vec<u32>> {
        self.set.order(name, build)
    }
}

/// Calls `work` with the set as a catalog whose frontmatter `keys` are read from columns.
fn with_catalog<T>(set: &NoteSet, keys: &[&str], work: impl FnOnce(&SetCatalog<'_>) -> T) -> T {
    let built: Vec<_> = keys.iter().map(|key| set.column(key)).collect();
    let columns: Vec<(&str, &[Option<Value>])> = keys
        .iter()
        .zip(&built)
        .map(|(key, values)| (*key, values.as_slice()))
        .collect();
    work(&SetCatalog { set, columns: &columns })
}

/// A skill as listed.
#[derive(Debug, Clone)]
pub struct Skill {
    /// The skill's folder name, which `skill_read` takes.
    pub id: String,
    pub name: String,
    pub description: String,
    pub path: String,
}

/// The skills `reader` may see, by id.
pub fn skills(set: &NoteSet, reader: &Reader) -> Vec<Skill> {
    set.skills(reader)
        .into_iter()
        .filter_map(|note| skill_of(note))
        .collect()
}

/// A skill's listing from its note's frontmatter (`name`, `description`).
pub fn skill_of(note: &Note) -> Option<Skill> {
    let id = skill_name(&note.path)?.to_string();
    let text = |key: &str| {
        note.frontmatter
            .get(key)
            .and_then(|v| v.as_str())
            .map(|s| s.trim().to_string())
    };
    Some(Skill {
        name: text("name").filter(|n| !n.is_empty()).unwrap_or_else(|| id.clone()),
        description: text("description").unwrap_or_default(),
        path: note.path.clone(),
        id,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::journal::content::Scope;

    fn note(path: &str, text: &str, modified_ms: i64) -> Arc<Note> {
        Arc::new(note::read(path, text.as_bytes(), modified_ms).unwrap().note)
    }

    #[test]
    fn listings_filter_page_and_hide_alike() {
        let set = NoteSet::new(vec![
            note("a.md", "#Project/alpha", 50),
            note("P/b.md", "---\ntags: [project]\n---\n", 40),
            note("P/c.md", "---\naccess: private\ntags: [project]\n---\n", 30),
            note("P/d.md", "#projects", 20),
            note("Q/e.md", "#project", 10),
        ]);
        let reader = Reader {
            scope: Scope::WholeJournal,
            label: "k".into(),
        };
        let tagged = ListFilter {
            tag: Some("#PROJECT".into()),
            ..ListFilter::default()
        };
        let paths = |page: Vec<Arc<Note>>| page.iter().map(|n| n.path.clone()).collect::<Vec<_>>();
        assert_eq!(
            paths(list(&set, &reader, &tagged, 0, 10).0),
            ["a.md", "P/b.md", "Q/e.md"]
        );
        let (first, more) = list(&set, &reader, &tagged, 0, 2);
        assert!(more);
        assert_eq!(paths(first), ["a.md", "P/b.md"]);
        let (rest, more) = list(&set, &reader, &tagged, 2, 2);
        assert!(!more);
        assert_eq!(paths(rest), ["Q/e.md"]);
        let in_p = ListFilter {
            folder: "P".into(),
            ..ListFilter::default()
        };
        assert_eq!(paths(list(&set, &reader, &in_p, 0, 10).0), ["P/b.md", "P/d.md"]);
        let since = ListFilter {
            since_ms: Some(30),
            ..ListFilter::default()
        };
        assert_eq!(paths(list(&set, &reader, &since, 0, 10).0), ["a.md", "P/b.md"]);
        assert_eq!(
            missing(&Target::Path("P/c.md".into())).to_string(),
            missing(&Target::Path("P/c.md".into())).to_string()
        );
    }

    /// A search runs `passing` on the runtime's thread only when it builds nothing and tests no note.
    #[test]
    fn passing_is_quick_once_its_indexes_are_built_and_only_for_conditions_they_answer() {
        let set = NoteSet::new(vec![
            note("a.md", "---\nstatus: todo\npriority: 2\n---\n", 50),
            note("b.md", "---\nstatus: done\n---\n", 40),
        ]);
        let reader = Reader {
            scope: Scope::WholeJournal,
            label: "k".into(),
        };
        let condition = |text: &str| vec![query::parse_condition(text).unwrap()];
        let todo = condition("status is \"todo\"");
        assert!(!passing_is_quick(&set, &reader, &todo), "nothing is built yet");
        assert_eq!(passing(&set, &reader, &todo, 0).rows().count(), 1);
        assert!(passing_is_quick(&set, &reader, &todo));
        let other = Reader {
            scope: Scope::WholeJournal,
            label: "other".into(),
        };
        assert!(
            !passing_is_quick(&set, &other, &todo),
            "another reader's rows are not built"
        );
        let priority = condition("priority exists");
        assert!(
            !passing_is_quick(&set, &reader, &priority),
            "another key's index is not built"
        );
        passing(&set, &reader, &priority, 0);
        assert!(passing_is_quick(&set, &reader, &priority));
        // `contains` and `gt` test each note: never quick.
        for text in ["status contains \"to\"", "priority gt 1"] {
            let tested = condition(text);
            passing(&set, &reader, &tested, 0);
            assert!(!passing_is_quick(&set, &reader, &tested), "{text}");
        }
    }
}
