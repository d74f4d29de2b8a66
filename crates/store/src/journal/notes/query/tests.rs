//! Queries run end to end over a small vault and a large one; `properties` feeds them generated text.

mod properties;

use serde_json::{Map, Value, json};

use super::*;

/// A note that owns what [`NoteFields`] borrows.
struct Note {
    path: String,
    title: String,
    modified_ms: i64,
    tags: Vec<String>,
    frontmatter: Map<String, Value>,
}

impl Note {
    fn new(path: &str, modified: &str, tags: &[&str], frontmatter: Value) -> Note {
        let title = path.rsplit('/').next().unwrap_or(path).trim_end_matches(".md");
        let mut title: Vec<char> = title.chars().collect();
        if let Some(first) = title.first_mut() {
            *first = first.to_ascii_uppercase();
        }
        Note {
            path: path.to_string(),
            title: title.into_iter().collect(),
            modified_ms: instant(modified),
            tags: tags.iter().map(|tag| tag.to_string()).collect(),
            frontmatter: frontmatter.as_object().cloned().unwrap_or_default(),
        }
    }

    fn fields(&self) -> NoteFields<'_> {
        NoteFields {
            path: &self.path,
            title: &self.title,
            modified_ms: self.modified_ms,
            tags: &self.tags,
            frontmatter: super::Frontmatter::Map(&self.frontmatter),
        }
    }
}

fn instant(text: &str) -> i64 {
    compare::parse_instant(text).unwrap_or_else(|| panic!("{text} is not an instant"))
}

/// Noon UTC on 2026-12-01: "now" for every test here.
fn now() -> i64 {
    instant("2026-12-01T12:00:00Z")
}

fn vault() -> Vec<Note> {
    vec![
        Note::new(
            "Projects/alpha.md",
            "2026-11-30T14:03:22Z",
            &["work", "urgent"],
            json!({ "status": "Open", "priority": 3, "due": "2026-11-03", "done": false,
                    "owners": ["Ann", "Bob"], "reviewed": "2026-11-30T15:00:00Z" }),
        ),
        Note::new(
            "Projects/beta.md",
            "2026-11-01T00:00:00Z",
            &["work"],
            json!({ "status": "done", "priority": 1, "due": "2026-12-15", "done": true }),
        ),
        Note::new(
            "Projects/Archive/gamma.md",
            "2025-06-01T08:00:00Z",
            &[],
            json!({ "status": "done", "priority": 2.5, "meta": { "x": 1 } }),
        ),
        Note::new(
            "Projectsx/delta.md",
            "2026-10-01T00:00:00Z",
            &["home"],
            json!({ "status": null, "priority": "high" }),
        ),
        Note::new("inbox.md", "2026-11-29T23:59:59Z", &[], json!({})),
    ]
}

fn run(dsl: &str) -> QueryOutput {
    let notes = vault();
    match parse(dsl) {
        Ok(query) => query.run(notes.iter().map(Note::fields), now()),
        Err(error) => panic!("{dsl:?}: {error}"),
    }
}

/// The names (file stems) of the notes a query returns, in order.
fn names(dsl: &str) -> Vec<String> {
    let output = run(&format!("{dsl}\ncolumns __path"));
    output
        .rows
        .iter()
        .filter_map(|row| {
            row.first()?
                .as_str()?
                .rsplit('/')
                .next()?
                .strip_suffix(".md")
                .map(str::to_string)
        })
        .collect()
}

#[test]
fn is_and_is_not() {
    assert_eq!(names("where status is \"OPEN\""), ["alpha"]);
    assert_eq!(names("where priority is 3"), ["alpha"]);
    assert_eq!(names("where done is true"), ["beta"]);
    assert_eq!(names("where done is false"), ["alpha"]);
    assert_eq!(names("where due is 2026-11-03"), ["alpha"]);
    assert_eq!(names("where owners is 'ann'"), ["alpha"]);
    // `is not` is the negation of `is`: notes without the field (or with null) are "not" anything.
    assert_eq!(names("where status is not \"done\""), ["alpha", "delta", "inbox"]);
}

#[test]
fn contains_exists_and_missing() {
    assert_eq!(names("where __title contains \"PH\""), ["alpha"]);
    assert_eq!(names("where owners contains \"bob\""), ["alpha"]);
    assert_eq!(names("where __tags contains \"WORK\""), ["alpha", "beta"]);
    assert_eq!(names("where __tags is 'home'"), ["delta"]);
    assert_eq!(names("where status exists"), ["gamma", "alpha", "beta"]);
    assert_eq!(names("where status missing"), ["delta", "inbox"]);
    assert_eq!(names("where meta exists"), ["gamma"]);
    assert_eq!(names("where agent_overrides exists"), Vec::<String>::new());
}

#[test]
fn gt_and_lt_with_numbers_text_and_dates() {
    // "high" is text: it is neither greater nor less than a number.
    assert_eq!(names("where priority gt 1"), ["gamma", "alpha"]);
    assert_eq!(names("where priority lt 3"), ["gamma", "beta"]);
    assert_eq!(names("where due gt 2026-11-30"), ["beta"]);
    assert_eq!(names("where __title gt \"beta\""), ["gamma", "delta", "inbox"]);
    assert_eq!(names("where __modified lt 2026-01-01"), ["gamma"]);
}

#[test]
fn relative_dates_count_from_the_day_of_now() {
    assert_eq!(names("where __modified gt now-7d"), ["alpha", "inbox"]);
    assert_eq!(names("where __modified gt now-2w"), ["alpha", "inbox"]);
    assert_eq!(names("where __modified is now-1d"), ["alpha"]);
    assert_eq!(names("where due lt now"), ["alpha"]);
    assert_eq!(names("where due lt now+30d"), ["alpha", "beta"]);
    // A query is evaluated against the `now_ms` it is given, not the clock.
    let notes = vault();
    let query = parse("where __modified gt now-7d").unwrap_or_else(|error| panic!("{error}"));
    let later = now() + 30 * compare::MS_PER_DAY;
    assert_eq!(query.run(notes.iter().map(Note::fields), later).total, 0);
}

#[test]
fn a_value_can_be_another_field_of_the_same_note() {
    assert_eq!(names("where due lt __modified"), ["alpha"]);
    assert_eq!(names("where reviewed gt __modified"), ["alpha"]);
    assert_eq!(names("where `status` is status"), ["gamma", "alpha", "beta"]);
    assert_eq!(names("where priority gt status"), Vec::<String>::new());
    assert_eq!(names("where priority is nothing"), Vec::<String>::new());
}

#[test]
fn under_and_from_in_follow_folders() {
    assert_eq!(names("where __path under \"Projects\""), ["gamma", "alpha", "beta"]);
    assert_eq!(names("where __folder under 'Projects/Archive'"), ["gamma"]);
    assert_eq!(
        names("where __folder under ''"),
        ["gamma", "alpha", "beta", "delta", "inbox"]
    );
    assert_eq!(names("from notes in \"Projects\""), ["gamma", "alpha", "beta"]);
    assert_eq!(names("from notes in \"Projects/Archive/\""), ["gamma"]);
    let query = parse("from notes in \"Projects/\"").unwrap_or_else(|error| panic!("{error}"));
    assert_eq!(query.folder(), Some("Projects"));
    assert_eq!(query.limit(), DEFAULT_LIMIT);
}

#[test]
fn and_binds_tighter_than_or_and_lines_all_hold() {
    assert_eq!(
        names("where status is \"done\" and priority lt 2 or __title is \"inbox\""),
        ["beta", "inbox"]
    );
    assert_eq!(
        names("where status is \"done\" or __tags contains 'work'\nwhere priority lt 3"),
        ["gamma", "beta"]
    );
}

#[test]
fn sorting_puts_missing_values_last_and_breaks_ties_by_path() {
    // Numbers sort before text; the note without a priority comes last in both directions.
    assert_eq!(names("sort priority"), ["beta", "gamma", "alpha", "delta", "inbox"]);
    assert_eq!(
        names("sort priority desc"),
        ["delta", "alpha", "gamma", "beta", "inbox"]
    );
    assert_eq!(names("sort status"), ["gamma", "beta", "alpha", "delta", "inbox"]);
    assert_eq!(names("sort status desc"), ["alpha", "gamma", "beta", "delta", "inbox"]);
    assert_eq!(
        names("sort status desc\nsort priority"),
        ["alpha", "beta", "gamma", "delta", "inbox"]
    );
    assert_eq!(names("sort __modified desc\nlimit 2"), ["alpha", "inbox"]);
    assert_eq!(names("sort __tags"), ["gamma", "inbox", "delta", "beta", "alpha"]);
}

#[test]
fn columns_show_values_as_they_are_and_null_when_missing() {
    let output = run("where __title is 'alpha'\ncolumns __title, priority, owners, meta, __tags, __modified, __folder");
    assert_eq!(
        output.columns,
        [
            "__title",
            "priority",
            "owners",
            "meta",
            "__tags",
            "__modified",
            "__folder"
        ]
    );
    assert_eq!(
        output.rows,
        [vec![
            json!("Alpha"),
            json!(3),
            json!(["Ann", "Bob"]),
            Value::Null,
            json!(["work", "urgent"]),
            json!("2026-11-30T14:03:22Z"),
            json!("Projects"),
        ]]
    );
    let output = run("where __path is 'inbox.md'");
    assert_eq!(output.columns, ["__path", "__title", "__modified"]);
    assert_eq!(
        output.rows,
        [vec![json!("inbox.md"), json!("Inbox"), json!("2026-11-29T23:59:59Z")]]
    );
}

#[test]
fn limit_reports_total_and_truncated() {
    let output = run("sort __path\nlimit 2");
    assert_eq!((output.rows.len(), output.total, output.truncated), (2, 5, true));
    let output = run("limit 5");
    assert_eq!((output.rows.len(), output.total, output.truncated), (5, 5, false));
    let output = run("where status is 'nothing'");
    assert_eq!((output.rows.len(), output.total, output.truncated), (0, 0, false));
    let serialized = serde_json::to_value(&output).unwrap_or_default();
    assert_eq!(
        serialized,
        json!({ "columns": ["__path", "__title", "__modified"], "rows": [], "total": 0, "truncated": false })
    );
}

#[test]
fn grouping_orders_groups_by_key_and_limits_rows_across_them() {
    let output = run("group by status\ncolumns __title");
    assert!(output.rows.is_empty());
    let groups: Vec<(Value, usize, Vec<Vec<Value>>)> = output
        .groups
        .unwrap_or_default()
        .into_iter()
        .map(|group| (group.key, group.count, group.rows))
        .collect();
    assert_eq!(
        groups,
        [
            (json!("done"), 2, vec![vec![json!("Gamma")], vec![json!("Beta")]]),
            (json!("Open"), 1, vec![vec![json!("Alpha")]]),
            (Value::Null, 2, vec![vec![json!("Delta")], vec![json!("Inbox")]]),
        ]
    );

    let output = run("group by status\nsort priority desc\ncolumns __title\nlimit 2");
    assert_eq!((output.total, output.truncated), (5, true));
    let groups: Vec<(Value, usize, usize)> = output
        .groups
        .unwrap_or_default()
        .into_iter()
        .map(|group| (group.key, group.count, group.rows.len()))
        .collect();
    // At most `limit` groups are listed, each with its full count, and the rows fill them in order.
    assert_eq!(groups, [(json!("done"), 2, 2), (json!("Open"), 1, 0)]);
    let serialized = serde_json::to_value(run("group by done\ncolumns __title\nlimit 3")).unwrap_or_default();
    assert_eq!(
        serialized["groups"],
        json!([
            { "key": false, "count": 1, "rows": [["Alpha"]] },
            { "key": true, "count": 1, "rows": [["Beta"]] },
            { "key": null, "count": 3, "rows": [["Gamma"]] },
        ])
    );
    assert_eq!(serialized["rows"], json!([]));

    // Members of a group that differ in form show the key of the one with the first path, in any input order.
    let notes = [
        Note::new("b.md", "2026-01-01T00:00:00Z", &[], json!({ "n": 1.0 })),
        Note::new("a.md", "2026-01-01T00:00:00Z", &[], json!({ "n": 1 })),
    ];
    let query = parse("group by n").unwrap_or_else(|error| panic!("{error}"));
    for order in [[0, 1], [1, 0]] {
        let output = query.run(order.iter().filter_map(|i| notes.get(*i)).map(Note::fields), now());
        let groups = output.groups.unwrap_or_default();
        let keys: Vec<(&Value, usize)> = groups.iter().map(|group| (&group.key, group.count)).collect();
        assert_eq!(keys, [(&json!(1), 2)]);
    }
}

#[test]
fn matches_checks_the_folder_and_every_line() {
    let notes = vault();
    let query = parse("from notes in 'Projects'\nwhere priority gt 1").unwrap_or_else(|error| panic!("{error}"));
    let matching: Vec<bool> = notes.iter().map(|note| query.matches(&note.fields(), now())).collect();
    assert_eq!(matching, [true, false, true, false, false]);
    let condition = parse_condition("due lt now").unwrap_or_else(|error| panic!("{error}"));
    let matching: Vec<bool> = notes
        .iter()
        .map(|note| condition.matches(&note.fields(), now()))
        .collect();
    assert_eq!(matching, [true, false, false, false, false]);
}

#[test]
fn errors_serialize_and_display_with_their_position() {
    let error = parse("where a is").err().unwrap_or_else(|| QueryError {
        line: 0,
        column: 0,
        message: String::new(),
    });
    assert!(
        error
            .to_string()
            .starts_with("line 1, column 11: expected a value after `is`")
    );
    let serialized = serde_json::to_value(&error).unwrap_or_default();
    assert_eq!(serialized["line"], json!(1));
    assert_eq!(serialized["column"], json!(11));
    let schema = serde_json::to_value(schemars::schema_for!(QueryOutput)).unwrap_or_default();
    assert!(schema.to_string().contains("truncated"));
}

#[test]
fn runs_over_a_hundred_thousand_notes() {
    let notes: Vec<Note> = (0..100_000)
        .map(|n| Note {
            path: format!("n/{n:06}.md"),
            title: format!("Note {n}"),
            modified_ms: n * 1000,
            tags: Vec::new(),
            frontmatter: json!({ "n": n, "kind": if n % 3 == 0 { "a" } else { "b" } })
                .as_object()
                .cloned()
                .unwrap_or_default(),
        })
        .collect();
    let query = parse("where kind is \"A\"\nwhere n lt 90000\nsort n desc\ncolumns n\nlimit 3")
        .unwrap_or_else(|error| panic!("{error}"));
    let output = query.run(notes.iter().map(Note::fields), now());
    assert_eq!(output.total, 30_000);
    assert!(output.truncated);
    assert_eq!(
        output.rows,
        [vec![json!(89_997)], vec![json!(89_994)], vec![json!(89_991)]]
    );
}
