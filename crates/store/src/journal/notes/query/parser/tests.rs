//! Every clause, and every mistake with the line, column and words of its error.

use super::*;
use crate::journal::day::Day;
use crate::journal::notes::query::{MAX_CONDITIONS_PER_LINE, Op, Operand};

fn query(dsl: &str) -> Query {
    match parse_query(dsl) {
        Ok(query) => query,
        Err(error) => panic!("{dsl:?} should parse: {error}"),
    }
}

fn error(dsl: &str) -> (usize, usize, String) {
    match parse_query(dsl) {
        Ok(query) => panic!("{dsl:?} should be refused, read as {query:?}"),
        Err(error) => (error.line, error.column, error.message),
    }
}

fn key(name: &str) -> Field {
    Field::Key(name.to_string())
}

fn text(value: &str) -> Option<Operand> {
    Some(Operand::Text {
        raw: value.to_string(),
        folded: value.to_lowercase(),
    })
}

fn condition(field: Field, op: Op, operand: Option<Operand>) -> Condition {
    Condition { field, op, operand }
}

#[test]
fn an_empty_query_is_every_note_with_the_default_columns() {
    for dsl in ["", "\n\n", "  # only a comment\n\t\n"] {
        let parsed = query(dsl);
        assert_eq!(parsed.folder, None);
        assert!(parsed.filters.is_empty() && parsed.sort.is_empty() && parsed.group_by.is_none());
        assert_eq!(parsed.columns, [Field::Path, Field::Title, Field::Modified]);
        assert_eq!(parsed.limit, DEFAULT_LIMIT);
    }
}

#[test]
fn reads_every_clause() {
    let parsed = query(
        "FROM notes IN \"/Projects/Active/\"\r\n\
         # a comment\n\
         where status is \"Open\" and priority gt 2 or __tags contains 'urgent'\n\
         Where due lt now-2w\n\
         sort due desc\n\
         sort `my key`\n\
         sort __title ASC\n\
         columns __title, due, `my key`\n\
         group by status\n\
         limit 25\n",
    );
    assert_eq!(parsed.folder.as_deref(), Some("Projects/Active"));
    assert_eq!(
        parsed.filters,
        [
            vec![
                vec![
                    condition(key("status"), Op::Is, text("Open")),
                    condition(key("priority"), Op::Gt, Some(Operand::Number(2.0))),
                ],
                vec![condition(Field::Tags, Op::Contains, text("urgent"))],
            ],
            vec![vec![condition(key("due"), Op::Lt, Some(Operand::Relative(-14)))]],
        ]
    );
    let sort: Vec<(Field, bool)> = parsed
        .sort
        .iter()
        .map(|key| (key.field.clone(), key.descending))
        .collect();
    assert_eq!(
        sort,
        [(key("due"), true), (key("my key"), false), (Field::Title, false)]
    );
    assert_eq!(parsed.columns, [Field::Title, key("due"), key("my key")]);
    assert_eq!(parsed.group_by, Some(key("status")));
    assert_eq!(parsed.limit, 25);
}

#[test]
fn reads_every_operator_and_value() {
    let read = |text: &str| match parse_condition(text) {
        Ok(condition) => (condition.field, condition.op, condition.operand),
        Err(error) => panic!("{text:?}: {error}"),
    };
    let day = Day::parse("2026-11-03").map(Day::epoch_days).unwrap_or_default();
    assert_eq!(read("a is not 'x'"), (key("a"), Op::IsNot, text("x")));
    assert_eq!(read("a exists"), (key("a"), Op::Exists, None));
    assert_eq!(read("a MISSING"), (key("a"), Op::Missing, None));
    assert_eq!(read("a is -2.5"), (key("a"), Op::Is, Some(Operand::Number(-2.5))));
    assert_eq!(read("a is TRUE"), (key("a"), Op::Is, Some(Operand::Bool(true))));
    assert_eq!(read("a is false"), (key("a"), Op::Is, Some(Operand::Bool(false))));
    assert_eq!(read("a gt 2026-11-03"), (key("a"), Op::Gt, Some(Operand::Day(day))));
    assert_eq!(read("a lt now"), (key("a"), Op::Lt, Some(Operand::Relative(0))));
    assert_eq!(read("a lt now+3d"), (key("a"), Op::Lt, Some(Operand::Relative(3))));
    assert_eq!(
        read("due lt __modified"),
        (key("due"), Op::Lt, Some(Operand::Field(Field::Modified)))
    );
    assert_eq!(
        read("a is b.c-d"),
        (key("a"), Op::Is, Some(Operand::Field(key("b.c-d"))))
    );
    assert_eq!(read("a is `now`"), (key("a"), Op::Is, Some(Operand::Field(key("now")))));
    assert_eq!(
        read("`__x` is nowhere"),
        (key("__x"), Op::Is, Some(Operand::Field(key("nowhere"))))
    );
    assert_eq!(
        read("__path under \"Projects/\""),
        (Field::Path, Op::Under, text("Projects"))
    );
    assert_eq!(
        read("__folder under home"),
        (Field::Folder, Op::Under, Some(Operand::Field(key("home"))))
    );
}

#[test]
fn limit_accepts_one_to_a_thousand() {
    assert_eq!(query("limit 1").limit, 1);
    assert_eq!(query("limit 1000").limit, 1000);
    assert_eq!(query("limit 010").limit, 10);
    assert_eq!(
        query(&"where a exists\n".repeat(MAX_CLAUSES)).filters.len(),
        MAX_CLAUSES
    );
}

/// Every refusal, with the line and column it points at and what it says was expected.
#[test]
fn errors_say_where_and_what_was_expected() {
    let cases: &[(&str, (usize, usize, &str))] = &[
        (
            "select *",
            (
                1,
                1,
                "expected a clause (from, where, sort, columns, group by, limit), found `select`",
            ),
        ),
        (
            "\n  \"where\" a is 1",
            (
                2,
                3,
                "expected a clause (from, where, sort, columns, group by, limit), found the string \"where\"",
            ),
        ),
        (
            "where a is 1\nfrom notes",
            (
                2,
                1,
                "expected `from` only as the first clause of the query, and only once",
            ),
        ),
        (
            "from tasks",
            (
                1,
                6,
                "expected `notes` after `from` (the only source is notes), found `tasks`",
            ),
        ),
        (
            "from notes in Projects",
            (
                1,
                15,
                "expected a quoted folder after `in`, like in \"Projects\", found `Projects`",
            ),
        ),
        (
            "from notes where",
            (1, 12, "expected the end of the line after `from notes`, found `where`"),
        ),
        (
            "where",
            (1, 6, "expected a field name after `where`, found the end of the line"),
        ),
        (
            "where \"my key\" is 1",
            (
                1,
                7,
                "expected a field name after `where` (names are not quoted: write a key with spaces in backquotes, like `my key`), found the string \"my key\"",
            ),
        ),
        (
            "where __name is 1",
            (
                1,
                7,
                "expected a built-in field (__title, __path, __folder, __modified, __tags), found `__name` (write a frontmatter key that starts with __ in backquotes)",
            ),
        ),
        (
            "where status",
            (
                1,
                13,
                "expected an operator (is, is not, contains, exists, missing, gt, lt, under) after the field `status`, found the end of the line",
            ),
        ),
        (
            "where status equals 1",
            (
                1,
                14,
                "expected an operator (is, is not, contains, exists, missing, gt, lt, under) after the field `status`, found `equals`",
            ),
        ),
        (
            "where status is",
            (
                1,
                16,
                "expected a value after `is` (a quoted string, a number, true, false, a date like 2026-11-03, a relative date like now-30d, or a field), found the end of the line",
            ),
        ),
        (
            "where status is not",
            (
                1,
                20,
                "expected a value after `is not` (a quoted string, a number, true, false, a date like 2026-11-03, a relative date like now-30d, or a field), found the end of the line",
            ),
        ),
        (
            "where due exists \"x\"",
            (
                1,
                18,
                "expected `and`, `or` or the end of the line after the condition, found the string \"x\"",
            ),
        ),
        (
            "where status is null",
            (
                1,
                17,
                "expected a value after `is`, found `null`: there is no null; write `<field> missing` instead",
            ),
        ),
        (
            "where due lt now-3m",
            (
                1,
                14,
                "expected a relative date like now, now-30d or now+2w (a whole number of days d or weeks w), found `now-3m`",
            ),
        ),
        (
            "where due lt 2026-02-30",
            (
                1,
                14,
                "expected a real calendar day between 1000-01-01 and 9999-12-31, found `2026-02-30`",
            ),
        ),
        (
            "where a is 1 and",
            (1, 17, "expected a field name after `and`, found the end of the line"),
        ),
        (
            "where a is 1 or , b",
            (1, 17, "expected a field name after `or`, found `,`"),
        ),
        (
            "where (a is 1 or b is 2)",
            (
                1,
                7,
                "expected a condition: there are no parentheses; `and` binds tighter than `or`, and separate `where` lines must all hold, so write each group of alternatives on its own `where` line",
            ),
        ),
        (
            "where a = 1",
            (1, 9, "expected an operator word: write `is` instead of `=`"),
        ),
        (
            "where title is \"open",
            (1, 16, "expected a closing \" for the string that starts here"),
        ),
        (
            "where __path under 3",
            (
                1,
                20,
                "expected a quoted folder or a field after `under`, like under \"Projects\", found `3`",
            ),
        ),
        (
            "sort due, title",
            (
                1,
                9,
                "expected asc, desc or the end of the line after the sort field `due` (give each further sort key its own `sort` line), found `,`",
            ),
        ),
        (
            "columns a,",
            (
                1,
                11,
                "expected a field name after the `,` that follows the column `a`, found the end of the line",
            ),
        ),
        (
            "columns a b",
            (
                1,
                11,
                "expected `,` or the end of the line after the column `a`, found `b`",
            ),
        ),
        (
            "columns a\ncolumns b",
            (
                2,
                1,
                "expected at most one `columns` clause, found a second (the first is on line 1)",
            ),
        ),
        ("group status", (1, 7, "expected `by` after `group`, found `status`")),
        (
            "group by a\n\ngroup by b",
            (
                3,
                1,
                "expected at most one `group by` clause, found a second (the first is on line 1)",
            ),
        ),
        (
            "group by a desc",
            (
                1,
                12,
                "expected the end of the line after the `group by` field, found `desc`",
            ),
        ),
        (
            "limit 0",
            (1, 7, "expected a whole number from 1 to 1000 after `limit`, found `0`"),
        ),
        (
            "limit 1001",
            (
                1,
                7,
                "expected a whole number from 1 to 1000 after `limit`, found `1001`",
            ),
        ),
        (
            "limit 2.5",
            (
                1,
                7,
                "expected a whole number from 1 to 1000 after `limit`, found `2.5`",
            ),
        ),
        (
            "limit ten",
            (
                1,
                7,
                "expected a whole number from 1 to 1000 after `limit`, found `ten`",
            ),
        ),
        (
            "limit 5\nlimit 6",
            (
                2,
                1,
                "expected at most one `limit` clause, found a second (the first is on line 1)",
            ),
        ),
        (
            "limit 5 rows",
            (1, 9, "expected the end of the line after the limit, found `rows`"),
        ),
        (
            "where é is 1",
            (
                1,
                7,
                "expected a field, an operator or a value, found `é` (write a field name with other characters in backquotes, like `my key`)",
            ),
        ),
    ];
    for (dsl, (line, column, message)) in cases {
        assert_eq!(error(dsl), (*line, *column, message.to_string()), "{dsl:?}");
    }
}

#[test]
fn hostile_sizes_are_refused_with_a_message() {
    let long = format!("where a is \"{}\"", "x".repeat(MAX_QUERY_BYTES));
    assert_eq!(
        error(&long),
        (
            1,
            1,
            format!("expected a query of at most 8192 bytes, found {} bytes", long.len())
        )
    );

    let clauses = "where a exists\n".repeat(MAX_CLAUSES) + "  limit 3";
    assert_eq!(
        error(&clauses),
        (65, 3, "expected at most 64 clauses in a query".to_string())
    );

    let conditions = format!("where {}", vec!["a exists"; MAX_CONDITIONS_PER_LINE + 1].join(" or "));
    let column = "where ".len() + MAX_CONDITIONS_PER_LINE * "a exists or ".len() + 1;
    assert_eq!(
        error(&conditions),
        (
            1,
            column,
            "expected at most 32 conditions on one `where` line".to_string()
        )
    );

    let names: Vec<String> = (0..=MAX_COLUMNS).map(|n| format!("c{n:02}")).collect();
    let columns = format!("columns {}", names.join(", "));
    let column = "columns ".len() + MAX_COLUMNS * "c00, ".len() + 1;
    assert_eq!(error(&columns), (1, column, "expected at most 32 columns".to_string()));
}

#[test]
fn a_single_condition_stands_alone() {
    let refused = |text: &str| parse_condition(text).map_err(|error| (error.line, error.column, error.message));
    assert_eq!(
        refused("a is 1 and b is 2"),
        Err((
            1,
            8,
            "expected nothing after the condition (a filter holds one condition), found `and`".to_string()
        ))
    );
    assert_eq!(
        refused(""),
        Err((
            1,
            1,
            "expected a field name at the start of the condition, found the end of the line".to_string()
        ))
    );
    assert!(refused(&"a".repeat(MAX_QUERY_BYTES + 1)).is_err());
}
