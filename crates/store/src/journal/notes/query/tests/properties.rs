//! Properties over generated text: any text parses or points inside itself, and well-formed queries parse.

use proptest::prelude::*;

use super::*;
use crate::journal::day::Day;

/// The line and column of an error lie within the text (or just past the end of its line).
fn points_inside(text: &str, error: &QueryError) -> bool {
    let lines: Vec<&str> = text.split('\n').collect();
    let length = lines
        .get(error.line.wrapping_sub(1))
        .map_or(0, |line| line.chars().count());
    error.line >= 1 && error.line <= text.lines().count() + 1 && error.column >= 1 && error.column <= length + 1
}

fn well_formed_query() -> impl Strategy<Value = String> {
    let field = prop_oneof![
        Just("status".to_string()),
        Just("due".to_string()),
        Just("`my key`".to_string()),
        Just("a.b-c".to_string()),
        Just("__title".to_string()),
        Just("__path".to_string()),
        Just("__folder".to_string()),
        Just("__modified".to_string()),
        Just("__tags".to_string()),
    ];
    let value = prop_oneof![
        "[a-zA-Z0-9 é/]{0,8}".prop_map(|text| format!("\"{text}\"")),
        (-1000i32..1000).prop_map(|n| n.to_string()),
        (0u32..100).prop_map(|n| format!("{n}.5")),
        Just("true".to_string()),
        Just("FALSE".to_string()),
        (0i64..40_000).prop_map(|days| Day::from_epoch_days(days).to_string()),
        (0u32..500, prop::bool::ANY, prop::bool::ANY).prop_map(|(n, minus, weeks)| format!(
            "now{}{n}{}",
            if minus { "-" } else { "+" },
            if weeks { "w" } else { "d" }
        )),
        field.clone(),
    ];
    let op = prop_oneof![Just("is"), Just("is not"), Just("contains"), Just("gt"), Just("LT")];
    let condition = prop_oneof![
        (field.clone(), op, value).prop_map(|(field, op, value)| format!("{field} {op} {value}")),
        (field.clone(), prop_oneof![Just("exists"), Just("missing")]).prop_map(|(field, op)| format!("{field} {op}")),
        (field.clone(), "[A-Za-z/]{0,10}").prop_map(|(field, folder)| format!("{field} under '{folder}'")),
    ];
    let where_line = (
        prop::collection::vec(condition, 1..5),
        prop::collection::vec(prop::bool::ANY, 4),
    )
        .prop_map(|(conditions, joins)| {
            let mut line = "where".to_string();
            for (index, condition) in conditions.iter().enumerate() {
                if index > 0 {
                    line.push_str(if joins.get(index).copied().unwrap_or(false) {
                        " and"
                    } else {
                        " OR"
                    });
                }
                line.push(' ');
                line.push_str(condition);
            }
            line
        });
    let sort_line = (field.clone(), prop_oneof![Just(""), Just(" asc"), Just(" desc")])
        .prop_map(|(field, direction)| format!("sort {field}{direction}"));
    let middle = prop::collection::vec(
        prop_oneof![
            where_line,
            sort_line,
            Just("# a comment".to_string()),
            Just("   ".to_string())
        ],
        0..8,
    );
    let from = prop_oneof![
        Just(String::new()),
        Just("from notes".to_string()),
        Just("From Notes in \"Projects\"".to_string())
    ];
    let columns = prop::option::of(prop::collection::vec(field.clone(), 1..5).prop_map(|fields| fields.join(", ")));
    let group = prop::option::of(field);
    let limit = prop::option::of(1usize..=1000);
    (from, middle, columns, group, limit).prop_map(|(from, middle, columns, group, limit)| {
        let mut lines = vec![from];
        lines.extend(middle);
        lines.extend(columns.map(|columns| format!("columns {columns}")));
        lines.extend(group.map(|field| format!("group by {field}")));
        lines.extend(limit.map(|limit| format!("limit {limit}")));
        lines.join("\n")
    })
}

/// Text built from the language's own words, to reach deeper into the parser than random characters do.
fn query_like_text() -> impl Strategy<Value = String> {
    let word = prop_oneof![
        Just("from"),
        Just("notes"),
        Just("in"),
        Just("where"),
        Just("sort"),
        Just("columns"),
        Just("group"),
        Just("by"),
        Just("limit"),
        Just("is"),
        Just("not"),
        Just("and"),
        Just("or"),
        Just("exists"),
        Just("contains"),
        Just("under"),
        Just("gt"),
        Just("now-3d"),
        Just("__tags"),
        Just("\"x\""),
        Just("'"),
        Just("`k`"),
        Just(","),
        Just("12"),
        Just("2026-02-30"),
        Just("\n"),
        Just("#"),
        Just("é"),
        Just("("),
    ];
    prop::collection::vec(word, 0..30).prop_map(|words| words.join(" "))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn any_text_parses_or_points_inside_itself(text in prop_oneof![any::<String>(), query_like_text()]) {
        let notes = vault();
        match parse(&text) {
            Ok(query) => {
                let output = query.run(notes.iter().map(Note::fields), now());
                prop_assert!(output.total <= notes.len());
                prop_assert!(output.rows.len() <= query.limit());
            }
            Err(error) => prop_assert!(points_inside(&text, &error), "{text:?}: {error}"),
        }
        if let Err(error) = parse_condition(&text) {
            prop_assert!(error.line == 1 && error.column >= 1 && error.column <= text.chars().count() + 1);
        }
    }

    #[test]
    fn well_formed_queries_parse(text in well_formed_query()) {
        let notes = vault();
        match parse(&text) {
            Ok(query) => {
                let output = query.run(notes.iter().map(Note::fields), now());
                prop_assert!(output.total <= notes.len());
            }
            Err(error) => prop_assert!(false, "{text:?}: {error}"),
        }
    }
}
