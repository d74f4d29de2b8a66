//! Fuzzes base_query's language: reading any text as a query or a single condition never panics, an
//! error points at a line and column inside the text, and a query that is read runs over a few notes
//! within its limit.
#![no_main]

use journal::journal::notes::query::{self, NoteFields, QueryError};
use libfuzzer_sys::fuzz_target;
use serde_json::{Map, Value, json};

/// Noon UTC on 2026-12-01.
const NOW_MS: i64 = 1_796_126_400_000;

/// Whether an error's line and column lie within the text (a column may stand just past a line's end).
fn inside(text: &str, error: &QueryError) -> bool {
    let Some(line) = text.split('\n').nth(error.line.wrapping_sub(1)) else {
        return false;
    };
    error.column >= 1 && error.column <= line.chars().count() + 1
}

fn frontmatter(value: Value) -> Map<String, Value> {
    value.as_object().cloned().unwrap_or_default()
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let tags = vec!["work".to_string(), "Urgent".to_string()];
    let maps = [
        frontmatter(json!({ "status": "Open", "due": "2026-11-03", "n": 3, "list": ["a", 1, null, [2]], "o": {} })),
        frontmatter(json!({ "status": null, "due": "2026-11-03T10:00:00+01:00", "n": -2.5, "done": true })),
        Map::new(),
    ];
    let notes: Vec<NoteFields<'_>> = ["Projects/a.md", "Projects/b/c.md", "top.md"]
        .iter()
        .zip(&maps)
        .map(|(path, frontmatter)| NoteFields {
            path,
            title: path,
            modified_ms: NOW_MS,
            tags: &tags,
            frontmatter: query::Frontmatter::Map(frontmatter),
        })
        .collect();
    match query::parse(text) {
        Ok(parsed) => {
            let output = parsed.run(notes.iter().copied(), NOW_MS);
            assert!(output.total <= notes.len());
            assert_eq!(output.truncated, output.total > parsed.limit());
            // Grouped or not, the rows shown are the first `limit` matches.
            let rows = match &output.groups {
                Some(groups) => groups.iter().map(|group| group.rows.len()).sum(),
                None => output.rows.len(),
            };
            assert_eq!(rows, output.total.min(parsed.limit()), "{text:?}");
            assert!(output.columns.len() <= query::MAX_COLUMNS);
        }
        Err(error) => assert!(inside(text, &error), "{text:?}: {error}"),
    }
    match query::parse_condition(text) {
        Ok(condition) => notes.iter().for_each(|note| {
            condition.matches(note, NOW_MS);
        }),
        // A condition is one line: a line break in it is only a space, and columns count across it.
        Err(error) => assert!(
            error.line == 1 && inside(&text.replace('\n', " "), &error),
            "{text:?}: {error}"
        ),
    }
});
