//! The inline filters of the `search` tool's query: `path:Projects/ tag:atlas "cutover plan"`.
//!
//! An agent types one string; this module takes the filters out of it and leaves the words and
//! "quoted phrases" as the text to search. The filters are ANDed with the tool's structured arguments
//! by the caller:
//!
//! | filter | meaning |
//! |---|---|
//! | `path:Projects/`, `-path:Daily/` | notes in (or not in) a folder; a note's own path works too |
//! | `tag:atlas`, `-tag:done` | notes with (or without) a tag; `tag:#atlas` is the same filter |
//! | `has:due`, `-has:due` | notes whose frontmatter has (or lacks) a key |
//! | `[status:is "in progress"]` | a frontmatter condition in `base_query`'s language |
//! | `facet:work` | items in a facet |
//! | `after:2026-01-31`, `before:2026-03-01` | items dated strictly after or before a day |
//!
//! A token is a filter when the part before its first `:` is ASCII letters (with an optional leading
//! `-`). A name that is not a known filter is refused rather than searched for as words: an agent that
//! writes `title:atlas` meant a filter, and silently searching "title" and "atlas" returns confident,
//! wrong results. Text with a colon is searched by quoting it (`"10:30"` or `"https://x.org"`); tokens
//! such as `10:30` whose prefix is not letters are text already.
//!
//! This module only reads the query. It does not parse `[key:op value]` conditions (the caller hands
//! them to `base_query`'s condition parser), check that a facet exists or that the caller may read it,
//! or look anything up in the index.

use crate::journal::day::Day;

/// The filters this module knows, as listed in error messages.
pub const KNOWN: &str = "path:, -path:, tag:, -tag:, has:, -has:, [key:op value], facet:, after:, before:";

/// The most filters one query may hold: each one becomes a clause of the index query, and no honest
/// search needs more.
pub const MAX_FILTERS: usize = 32;

/// A search query split into its text and its filters.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Filters {
    /// The words and "quoted phrases" left after the filters are taken out, in order, as the text to search
    /// (`-word` exclusions kept as written). May be empty: a query of filters only.
    pub text: String,
    /// Folders (`path:Projects/` gives `Projects`) or note paths (`path:Projects/a.md`) the results must
    /// be in; each one narrows the results further.
    pub paths: Vec<String>,
    /// Folders or note paths the results must not be in (`-path:`).
    pub not_paths: Vec<String>,
    /// Tags the results must carry, lowercased and without leading `#`s.
    pub tags: Vec<String>,
    /// Tags the results must not carry (`-tag:`), lowercased and without leading `#`s.
    pub not_tags: Vec<String>,
    /// Frontmatter keys the results must have (`has:`).
    pub has: Vec<String>,
    /// Frontmatter keys the results must not have (`-has:`).
    pub not_has: Vec<String>,
    /// `[key:op value]` as the text `key op value` (the caller parses it with base_query's condition parser), with the
    /// character column where the bracket opened, for error messages.
    pub conditions: Vec<(String, usize)>,
    /// Facets the results must be in (`facet:`), as written.
    pub facets: Vec<String>,
    /// Results must be dated strictly after this day; the latest of several `after:` wins.
    pub after: Option<Day>,
    /// Results must be dated strictly before this day; the earliest of several `before:` wins.
    pub before: Option<Day>,
}

/// Why a query could not be read. The message is meant for the agent: it says what to change.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct FilterError(pub String);

impl Filters {
    /// Whether the query holds any filter at all (a query of filters only is a listing).
    pub fn any(&self) -> bool {
        self.notes_only() || !self.facets.is_empty() || self.after.is_some() || self.before.is_some()
    }

    /// Whether a filter applies to notes alone (paths, tags and frontmatter are theirs), so that
    /// nothing else can match.
    pub fn notes_only(&self) -> bool {
        !(self.paths.is_empty()
            && self.not_paths.is_empty()
            && self.tags.is_empty()
            && self.not_tags.is_empty()
            && self.has.is_empty()
            && self.not_has.is_empty()
            && self.conditions.is_empty())
    }
}

/// Splits `query` into its filters and the text left to search.
///
/// Columns in error messages and in [`Filters::conditions`] count characters from 1.
pub fn parse(query: &str) -> Result<Filters, FilterError> {
    let mut filters = Filters::default();
    let mut text: Vec<&str> = Vec::new();
    let mut count = 0;
    for token in tokens(query)? {
        let filter = filter_name(token.text);
        if !token.bracket && filter.is_none() {
            text.push(token.text);
            continue;
        }
        count += 1;
        if count > MAX_FILTERS {
            return Err(FilterError(format!(
                "too many filters: at most {MAX_FILTERS} in one query"
            )));
        }
        if token.bracket {
            filters.conditions.push((condition(&token)?, token.column));
        } else if let Some((name, value)) = filter {
            add_filter(&mut filters, name, value)?;
        }
    }
    filters.text = text.join(" ");
    Ok(filters)
}

/// One whitespace-separated piece of the query, as written (quotes and brackets included).
struct Token<'q> {
    text: &'q str,
    /// The character column (from 1) where the token starts.
    column: usize,
    /// Whether the token is a `[ ... ]` condition.
    bracket: bool,
}

/// Splits the query on whitespace outside quotes and brackets.
///
/// A `"` opens a quoted stretch anywhere in a token (so `path:"My Folder/"` is one token); a `[` opens a
/// condition only at the start of a token, and the condition ends at its matching `]` even when more
/// text follows without a space. Quotes have no escapes: a phrase cannot contain a `"`.
fn tokens(query: &str) -> Result<Vec<Token<'_>>, FilterError> {
    let mut tokens = Vec::new();
    // (character column from 0, byte offset, character)
    let mut chars = query
        .char_indices()
        .enumerate()
        .map(|(column, (byte, c))| (column, byte, c))
        .peekable();
    while let Some(&(column, start, first)) = chars.peek() {
        if first.is_whitespace() {
            chars.next();
            continue;
        }
        let mut end = start;
        let mut open_quote: Option<usize> = None;
        let bracket = first == '[';
        if bracket {
            let mut depth = 0usize;
            let mut closed = false;
            for (at, byte, c) in chars.by_ref() {
                end = byte + c.len_utf8();
                match c {
                    '"' => open_quote = if open_quote.is_some() { None } else { Some(at) },
                    '[' if open_quote.is_none() => depth += 1,
                    ']' if open_quote.is_none() => {
                        depth = depth.saturating_sub(1);
                        if depth == 0 {
                            closed = true;
                            break;
                        }
                    }
                    _ => {}
                }
            }
            if open_quote.is_none() && !closed {
                return Err(FilterError(format!(
                    "unclosed bracket: the [ at column {} has no closing ]; a condition looks like \
                     [key:op value], e.g. [status:is done]",
                    column + 1
                )));
            }
        } else {
            while let Some(&(at, byte, c)) = chars.peek() {
                if open_quote.is_none() && c.is_whitespace() {
                    break;
                }
                chars.next();
                end = byte + c.len_utf8();
                if c == '"' {
                    open_quote = if open_quote.is_some() { None } else { Some(at) };
                }
            }
        }
        if let Some(at) = open_quote {
            return Err(FilterError(format!(
                "unclosed quote: the \" at column {} has no closing \"",
                at + 1
            )));
        }
        tokens.push(Token {
            text: query.get(start..end).unwrap_or_default(),
            column: column + 1,
            bracket,
        });
    }
    Ok(tokens)
}

/// The filter name of a token (`tag`, `-has`, `Title`, as written) and its raw value, when the part
/// before the first `:` is ASCII letters with an optional leading `-`. Anything else is text.
fn filter_name(token: &str) -> Option<(&str, &str)> {
    let (name, value) = token.split_once(':')?;
    let letters = name.strip_prefix('-').unwrap_or(name);
    let is_name = !letters.is_empty() && letters.bytes().all(|b| b.is_ascii_alphabetic());
    is_name.then_some((name, value))
}

/// Reads one `name:value` filter into `filters`.
fn add_filter(filters: &mut Filters, name: &str, raw_value: &str) -> Result<(), FilterError> {
    let lowered = name.to_ascii_lowercase();
    // Quotes only group: `path:"My Folder/"` is the folder `My Folder`.
    let value = raw_value.replace('"', "");
    let value = value.trim();
    let needs_value = |example: &str| {
        FilterError(format!(
            "the filter \"{lowered}:\" needs a value, e.g. {lowered}:{example}"
        ))
    };
    match lowered.as_str() {
        "path" | "-path" => {
            let path = value.trim_end_matches(|c: char| c == '/' || c.is_whitespace());
            if path.is_empty() {
                return Err(needs_value("Projects/"));
            }
            let list = if lowered == "path" {
                &mut filters.paths
            } else {
                &mut filters.not_paths
            };
            list.push(path.to_string());
        }
        "tag" | "-tag" => {
            let tag = value.trim_start_matches('#').trim().to_lowercase();
            if tag.is_empty() {
                return Err(needs_value("atlas"));
            }
            let list = if lowered == "tag" {
                &mut filters.tags
            } else {
                &mut filters.not_tags
            };
            list.push(tag);
        }
        "has" | "-has" => {
            if value.is_empty() {
                return Err(needs_value("due"));
            }
            let list = if lowered == "has" {
                &mut filters.has
            } else {
                &mut filters.not_has
            };
            list.push(value.to_string());
        }
        "facet" => {
            if value.is_empty() {
                return Err(needs_value("work"));
            }
            filters.facets.push(value.to_string());
        }
        "after" | "before" => {
            if value.is_empty() {
                return Err(needs_value("2026-01-31"));
            }
            let day = Day::parse(value).map_err(|e| FilterError(format!("the filter \"{lowered}:\": {e}")))?;
            // Several bounds narrow: the latest `after` and the earliest `before` are the ones that count.
            if lowered == "after" {
                filters.after = Some(filters.after.map_or(day, |known| known.max(day)));
            } else {
                filters.before = Some(filters.before.map_or(day, |known| known.min(day)));
            }
        }
        _ => {
            return Err(FilterError(format!(
                "unknown filter \"{name}:\"; the filters are {KNOWN} (put text with a colon in quotes to \
                 search for it)"
            )));
        }
    }
    Ok(())
}

/// Turns `[key:op value]` into `key op value`.
fn condition(token: &Token<'_>) -> Result<String, FilterError> {
    let inner = token
        .text
        .strip_prefix('[')
        .and_then(|t| t.strip_suffix(']'))
        .unwrap_or(token.text);
    let shape = "a condition looks like [key:op value], e.g. [status:is done]";
    let Some((key, rest)) = inner.split_once(':') else {
        return Err(FilterError(format!(
            "the condition {} at column {} has no \":\"; {shape}",
            token.text, token.column
        )));
    };
    let (key, rest) = (key.trim(), rest.trim());
    if key.is_empty() {
        return Err(FilterError(format!(
            "the condition {} at column {} names no key before \":\"; {shape}",
            token.text, token.column
        )));
    }
    if rest.is_empty() {
        return Err(FilterError(format!(
            "the condition {} at column {} has no operator after \":\"; {shape}",
            token.text, token.column
        )));
    }
    Ok(format!("{key} {rest}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn ok(query: &str) -> Filters {
        parse(query).unwrap_or_else(|e| panic!("{query:?}: {e}"))
    }

    fn error(query: &str) -> String {
        match parse(query) {
            Ok(filters) => panic!("{query:?} should be refused, got {filters:?}"),
            Err(FilterError(message)) => message,
        }
    }

    fn day(text: &str) -> Day {
        Day::parse(text).unwrap()
    }

    #[test]
    fn each_filter_is_taken_out_of_the_text() {
        let filters = ok("cutover path:Projects/ tag:Atlas has:due facet:work after:2026-01-31 before:20260301 plan");
        assert_eq!(
            filters,
            Filters {
                text: "cutover plan".into(),
                paths: vec!["Projects".into()],
                tags: vec!["atlas".into()],
                has: vec!["due".into()],
                facets: vec!["work".into()],
                after: Some(day("2026-01-31")),
                before: Some(day("2026-03-01")),
                ..Filters::default()
            }
        );
    }

    #[test]
    fn negations_go_to_their_own_lists() {
        let filters = ok("-path:Daily/ -tag:#Done -has:due -draft");
        assert_eq!(filters.not_paths, vec!["Daily"]);
        assert_eq!(filters.not_tags, vec!["done"]);
        assert_eq!(filters.not_has, vec!["due"]);
        assert_eq!(filters.text, "-draft", "a word exclusion stays in the text as written");
        assert!(filters.paths.is_empty() && filters.tags.is_empty() && filters.has.is_empty());
    }

    #[test]
    fn paths_drop_the_trailing_slash_and_keep_note_paths() {
        let filters = ok(r#"path:Projects/Atlas/ path:Projects/a.md path:Reading path:"Old notes //""#);
        assert_eq!(
            filters.paths,
            vec!["Projects/Atlas", "Projects/a.md", "Reading", "Old notes"]
        );
    }

    #[test]
    fn tags_lose_their_hash_and_case() {
        assert_eq!(ok("tag:#Atlas tag:x tag:##y").tags, vec!["atlas", "x", "y"]);
        assert_eq!(ok("tag:Größe").tags, vec!["größe"]);
    }

    #[test]
    fn filter_names_ignore_case() {
        let filters = ok("TAG:x Path:A/ -HAS:k FACET:work AFTER:2026-01-01");
        assert_eq!(filters.tags, vec!["x"]);
        assert_eq!(filters.paths, vec!["A"]);
        assert_eq!(filters.not_has, vec!["k"]);
        assert_eq!(filters.facets, vec!["work"]);
        assert_eq!(filters.after, Some(day("2026-01-01")));
    }

    #[test]
    fn values_may_be_quoted() {
        let filters = ok(r#"path:"My Folder/" tag:"two words" has:"due""#);
        assert_eq!(filters.paths, vec!["My Folder"]);
        assert_eq!(filters.tags, vec!["two words"]);
        assert_eq!(filters.has, vec!["due"]);
        assert_eq!(filters.text, "");
    }

    #[test]
    fn quoted_phrases_stay_text_with_their_quotes() {
        let filters = ok(r#"tag:atlas "warehouse cutover"  -"old plan" "x:y" "10:30""#);
        assert_eq!(filters.text, r#""warehouse cutover" -"old plan" "x:y" "10:30""#);
        assert_eq!(filters.tags, vec!["atlas"]);
    }

    #[test]
    fn several_dates_narrow() {
        let filters = ok("after:2026-01-01 after:2026-02-01 before:2026-06-01 before:2026-05-01");
        assert_eq!(filters.after, Some(day("2026-02-01")));
        assert_eq!(filters.before, Some(day("2026-05-01")));
    }

    #[test]
    fn brackets_become_conditions_with_their_column() {
        let filters = ok(r#"plan [status:is "in progress"] [ priority : gt 2 ]tail"#);
        assert_eq!(
            filters.conditions,
            vec![
                (r#"status is "in progress""#.to_string(), 6),
                ("priority gt 2".to_string(), 32)
            ]
        );
        assert_eq!(filters.text, "plan tail");
        // Columns count characters, not bytes.
        assert_eq!(ok("é [due:exists]").conditions, vec![("due exists".to_string(), 3)]);
        // Nested brackets and brackets inside quotes belong to the condition.
        assert_eq!(
            ok(r#"[tags:contains [a, b]] [title:is "x ] y"]"#).conditions,
            vec![
                ("tags contains [a, b]".to_string(), 1),
                (r#"title is "x ] y""#.to_string(), 24)
            ]
        );
    }

    #[test]
    fn malformed_brackets_show_the_expected_shape() {
        for query in ["[done]", "[[Atlas]]", "[:is done]", "[status:]", "[ ]"] {
            let message = error(query);
            assert!(message.contains("[key:op value]"), "{query}: {message}");
            assert!(message.contains("column 1"), "{query}: {message}");
        }
    }

    #[test]
    fn unknown_filters_are_refused_with_the_known_list() {
        for (query, name) in [
            ("title:atlas", "\"title:\""),
            ("plan Author:bob", "\"Author:\""),
            ("-facet:work", "\"-facet:\""),
            ("https://x.org", "\"https:\""),
        ] {
            let message = error(query);
            assert!(message.contains(&format!("unknown filter {name}")), "{message}");
            assert!(message.contains(KNOWN), "{message}");
            assert!(message.contains("in quotes"), "{message}");
        }
    }

    #[test]
    fn text_with_a_colon_that_is_no_filter_name_stays_text() {
        let filters = ok(r#"meet at 10:30 a1:b :x -:y "https://x.org" C++:z"#);
        assert_eq!(filters.text, r#"meet at 10:30 a1:b :x -:y "https://x.org" C++:z"#);
        assert_eq!(
            filters,
            Filters {
                text: filters.text.clone(),
                ..Filters::default()
            }
        );
    }

    #[test]
    fn empty_values_name_their_filter() {
        for (query, name) in [
            ("tag:", "\"tag:\""),
            ("has: due", "\"has:\""),
            ("-has:", "\"-has:\""),
            ("path:/", "\"path:\""),
            ("path:\"\"", "\"path:\""),
            ("tag:#", "\"tag:\""),
            ("facet:", "\"facet:\""),
            ("after:", "\"after:\""),
            ("Before:", "\"before:\""),
        ] {
            let message = error(query);
            assert!(
                message.contains(name) && message.contains("needs a value"),
                "{query}: {message}"
            );
        }
    }

    #[test]
    fn bad_dates_name_the_filter_and_the_value() {
        for (query, name, value) in [
            ("after:2026-13-01", "after:", "2026-13-01"),
            ("before:yesterday", "before:", "yesterday"),
            ("after:2026-02-30", "after:", "2026-02-30"),
        ] {
            let message = error(query);
            assert!(message.contains(name) && message.contains(value), "{query}: {message}");
        }
    }

    #[test]
    fn unclosed_quotes_and_brackets_are_refused() {
        assert!(error(r#"plan "warehouse cutover"#).contains("unclosed quote: the \" at column 6"));
        assert!(error(r#"path:"My Folder"#).contains("unclosed quote"));
        assert!(error(r#"[status:is "done]"#).contains("unclosed quote: the \" at column 12"));
        assert!(error("x [status:is done").contains("unclosed bracket: the [ at column 3"));
        assert!(error("[a:in [b]").contains("unclosed bracket"));
    }

    #[test]
    fn plain_text_comes_back_with_single_spaces() {
        assert_eq!(ok("  warehouse   cutover\tplan\n").text, "warehouse cutover plan");
        assert_eq!(ok("").text, "");
        assert_eq!(ok("café -draft #atlas").text, "café -draft #atlas");
    }

    #[test]
    fn a_query_of_filters_only_has_no_text() {
        let filters = ok("tag:a path:b/ [status:is done]");
        assert_eq!(filters.text, "");
        assert_eq!(filters.conditions.len(), 1);
    }

    #[test]
    fn too_many_filters_are_refused() {
        let many = |n: usize| (0..n).map(|i| format!("tag:t{i}")).collect::<Vec<_>>().join(" ");
        assert_eq!(ok(&many(MAX_FILTERS)).tags.len(), MAX_FILTERS);
        assert!(error(&format!("{} [a:exists]", many(MAX_FILTERS))).contains("too many filters"));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn never_panics(query in any::<String>()) {
            let _ = parse(&query);
        }

        #[test]
        fn never_panics_on_filter_shaped_input(query in r#"[a-zA-Z:"\[\]# /.\-0-9é]{0,60}"#) {
            if let Ok(filters) = parse(&query) {
                // The text is stable: read again, it is all text and unchanged.
                let again = parse(&filters.text).unwrap();
                prop_assert_eq!(&again, &Filters { text: filters.text.clone(), ..Filters::default() });
            }
        }

        #[test]
        fn plain_words_are_the_text(
            words in proptest::collection::vec("[a-zA-Zéß]{1,8}", 0..8),
            gaps in "[ \t]{1,3}",
        ) {
            let query = words.join(&gaps);
            prop_assert_eq!(parse(&format!(" {query} ")).unwrap().text, words.join(" "));
        }
    }
}
