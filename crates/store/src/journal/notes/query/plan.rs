//! Runs a query over a large catalog without testing or sorting every note.
//!
//! [`run`](super::run) reads every note it is given, which over 100,000 notes costs about 100 ns a note. Here the
//! catalog answers two things from structures it keeps across queries: a [`ValueIndex`] per frontmatter key (the
//! rows where the key holds each value, as `is` compares values), and the whole catalog in a query's sort order.
//! A query's `where` lines become sets of rows wherever their conditions allow (`is` and `is not` a constant,
//! `exists`, `missing`); what they cannot say is tested on the rows that remain. A large match is then shown by
//! walking the kept order until the limit is reached. The output is the same as [`run`](super::run)'s on the same
//! notes, which the tests check on random notes and queries.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::Value;

use super::compare::{self, Val};
use super::run;
use super::{Condition, Field, NoteFields, Op, Operand, Query, QueryOutput};
use crate::journal::notes::rowset::RowSet;

/// Below this many matches, sorting them costs less than walking the kept order (which the first query of a sort
/// builds for the whole catalog). Tests use a small bound, so that small catalogs take both ways.
const SORT_DIRECTLY_BELOW: usize = if cfg!(test) { 64 } else { 4096 };

/// What a catalog of notes offers a query: its notes by row and the structures it keeps for them.
pub trait Catalog<'a> {
    /// How many rows the catalog holds.
    fn row_count(&self) -> usize;
    /// The note in a row.
    fn fields(&self, row: usize) -> NoteFields<'a>;
    /// The value index of a frontmatter key.
    fn values(&self, key: &str) -> Arc<ValueIndex>;
    /// Every row in an order that `name` identifies, built with `build` when the catalog does not keep it yet.
    fn order(&self, name: &str, build: &dyn Fn() -> Vec<u32>) -> Arc<Vec<u32>>;
}

/// One frontmatter key's values, inverted: the rows where the key holds each value, as `is` compares them.
#[derive(Debug, Default)]
pub struct ValueIndex {
    /// By text lowercased as `compare::fold_eq` compares it.
    text: HashMap<String, Vec<u32>>,
    /// By a number's bits (`0.0` for `-0.0`; NaN, which equals nothing, is left out).
    numbers: HashMap<u64, Vec<u32>>,
    /// `false` and `true`.
    flags: [Vec<u32>; 2],
    /// The rows where the key holds any value (null counts as missing).
    present: Vec<u32>,
}

impl ValueIndex {
    /// Indexes one key's values by row. A list is indexed under each of its elements, as `is` matches a list when
    /// any element matches.
    pub fn build(column: &[Option<Value>]) -> ValueIndex {
        let mut index = ValueIndex::default();
        for (row, value) in column.iter().enumerate() {
            let Some(value) = value.as_ref().and_then(compare::from_json) else {
                continue;
            };
            let row = row as u32;
            index.present.push(row);
            match value {
                Val::List(items) => {
                    for item in items.elements().flatten() {
                        index.add(item, row);
                    }
                }
                value => index.add(value, row),
            }
        }
        index
    }

    fn add(&mut self, value: Val<'_>, row: u32) {
        let rows = match value {
            Val::Text(text) => self.text.entry(compare::fold_key(text)).or_default(),
            Val::Number(number) if !number.is_nan() => self.numbers.entry(number_key(number)).or_default(),
            Val::Bool(flag) => &mut self.flags[usize::from(flag)],
            _ => return,
        };
        // A list can hold one value twice ("a" and "A"): a row is listed once a value.
        if rows.last() != Some(&row) {
            rows.push(row);
        }
    }

    /// The rows where the key `is` a constant, or `None` when the constant is not one the index keeps (a date, or
    /// another field), whose matches only a test of each note can find.
    fn rows_equal(&self, constant: &Operand) -> Option<&[u32]> {
        let rows = match constant {
            Operand::Text { folded, .. } => self.text.get(&compare::fold_key(folded)),
            Operand::Number(number) if number.is_nan() => None,
            Operand::Number(number) => self.numbers.get(&number_key(*number)),
            Operand::Bool(flag) => Some(&self.flags[usize::from(*flag)]),
            Operand::Day(_) | Operand::Relative(_) | Operand::Field(_) => return None,
        };
        Some(rows.map_or(&[], Vec::as_slice))
    }
}

/// The key of a number in the index: equal numbers (`0.0 == -0.0`) share it.
fn number_key(number: f64) -> u64 {
    if number == 0.0 {
        0.0f64.to_bits()
    } else {
        number.to_bits()
    }
}

/// Rows that may match, and whether exactly those match (no note needs testing).
struct Narrowed {
    rows: RowSet,
    exact: bool,
}

/// Whether the value indexes answer every condition exactly, so that `passing` tests no note one by
/// one.
pub fn answered_by_indexes(conditions: &[Condition]) -> bool {
    conditions.iter().all(indexed)
}

/// Whether the value indexes answer a condition: `condition_rows` gives its rows exactly when this holds.
fn indexed(condition: &Condition) -> bool {
    matches!(condition.field, Field::Key(_))
        && match (condition.op, &condition.operand) {
            (Op::Exists | Op::Missing, _) => true,
            (Op::Is | Op::IsNot, Some(constant)) => {
                matches!(constant, Operand::Text { .. } | Operand::Number(_) | Operand::Bool(_))
            }
            _ => false,
        }
}

/// The rows a condition holds for, when the catalog's indexes can say.
fn condition_rows<'a>(condition: &Condition, catalog: &impl Catalog<'a>) -> Option<RowSet> {
    let Field::Key(key) = &condition.field else {
        return None;
    };
    if !indexed(condition) {
        return None;
    }
    let len = catalog.row_count();
    let (rows, negated) = match (condition.op, &condition.operand) {
        (Op::Exists, _) => return Some(RowSet::from_rows(len, catalog.values(key).present.iter().copied())),
        (Op::Missing, _) => (
            RowSet::from_rows(len, catalog.values(key).present.iter().copied()),
            true,
        ),
        (Op::Is | Op::IsNot, Some(constant)) => {
            let index = catalog.values(key);
            let rows = RowSet::from_rows(len, index.rows_equal(constant)?.iter().copied());
            (rows, condition.op == Op::IsNot)
        }
        _ => return None,
    };
    let mut rows = rows;
    if negated {
        rows.invert();
    }
    Some(rows)
}

/// The rows that may pass every condition (they all must hold), or `None` when no condition narrows them.
fn narrow_all<'a>(conditions: &[Condition], catalog: &impl Catalog<'a>) -> Option<Narrowed> {
    let mut narrowed: Option<RowSet> = None;
    let mut exact = true;
    for condition in conditions {
        match condition_rows(condition, catalog) {
            Some(rows) => match &mut narrowed {
                Some(kept) => kept.intersect(&rows),
                None => narrowed = Some(rows),
            },
            None => exact = false,
        }
    }
    narrowed.map(|rows| Narrowed { rows, exact })
}

/// The rows that may pass a `where` line (one of its alternatives must hold), or `None` when some alternative
/// cannot be narrowed (then any note may pass).
fn narrow_line<'a>(alternatives: &[Vec<Condition>], catalog: &impl Catalog<'a>) -> Option<Narrowed> {
    let mut union = Narrowed {
        rows: RowSet::empty(catalog.row_count()),
        exact: true,
    };
    for alternative in alternatives {
        let narrowed = narrow_all(alternative, catalog)?;
        union.rows.unite(&narrowed.rows);
        union.exact &= narrowed.exact;
    }
    Some(union)
}

/// The rows among `visible` that may match the query, and whether exactly those do.
fn narrow<'a>(query: &Query, catalog: &impl Catalog<'a>, visible: &RowSet) -> Narrowed {
    let mut rows = visible.clone();
    let mut exact = query.folder.is_none();
    for line in &query.filters {
        match narrow_line(line, catalog) {
            Some(narrowed) => {
                rows.intersect(&narrowed.rows);
                exact &= narrowed.exact;
            }
            None => exact = false,
        }
    }
    Narrowed { rows, exact }
}

/// The rows among `visible` for which every condition holds: the notes a search's filters let through.
pub fn passing<'a>(conditions: &[Condition], catalog: &impl Catalog<'a>, visible: &RowSet, now_ms: i64) -> RowSet {
    let mut rows = visible.clone();
    let narrowed = narrow_all(conditions, catalog);
    if let Some(narrowed) = &narrowed {
        rows.intersect(&narrowed.rows);
    }
    if !narrowed.is_some_and(|narrowed| narrowed.exact) {
        rows.retain(|row| {
            let note = catalog.fields(row);
            conditions.iter().all(|condition| condition.matches(&note, now_ms))
        });
    }
    rows
}

/// Runs `query` over the rows of `catalog` in `visible`, with the output of [`Query::run`] over the same notes.
pub fn run_over<'a>(query: &Query, catalog: &impl Catalog<'a>, visible: &RowSet, now_ms: i64) -> QueryOutput {
    let Narrowed { mut rows, exact } = narrow(query, catalog, visible);
    if !exact {
        rows.retain(|row| query.matches(&catalog.fields(row), now_ms));
    }
    let total = rows.count();
    if query.group_by.is_some() || total < SORT_DIRECTLY_BELOW {
        return run::run_matched(query, rows.rows().map(|row| catalog.fields(row)));
    }
    // The sort keys name the order; `{:?}` tells a frontmatter key from a built-in field of the same name.
    let name = format!("{:?}", query.sort);
    let order = catalog.order(&name, &|| {
        run::sorted_rows(query, catalog.row_count(), |row| catalog.fields(row))
    });
    let shown: Vec<Vec<Value>> = order
        .iter()
        .map(|row| *row as usize)
        .filter(|row| rows.contains(*row))
        .take(query.limit)
        .map(|row| run::row_of(query, &catalog.fields(row)))
        .collect();
    QueryOutput {
        columns: run::column_names(query),
        truncated: total > shown.len(),
        rows: shown,
        groups: None,
        total,
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use proptest::prelude::*;
    use serde_json::json;

    use super::super::{Frontmatter, parse};
    use super::*;

    /// Notes in memory, keeping what a real catalog keeps, and counting the orders it builds.
    struct Notes {
        paths: Vec<String>,
        tags: Vec<Vec<String>>,
        frontmatter: Vec<serde_json::Map<String, Value>>,
        orders: Mutex<HashMap<String, Arc<Vec<u32>>>>,
    }

    impl Notes {
        fn new(frontmatter: Vec<Value>) -> Notes {
            let count = frontmatter.len();
            Notes {
                paths: (0..count)
                    .map(|i| format!("n/{:05}.md", (i * 7919) % 100_000))
                    .collect(),
                tags: (0..count).map(|i| vec![format!("t{}", i % 3)]).collect(),
                frontmatter: frontmatter
                    .into_iter()
                    .map(|value| value.as_object().cloned().unwrap_or_default())
                    .collect(),
                orders: Mutex::new(HashMap::new()),
            }
        }
    }

    impl<'a> Catalog<'a> for &'a Notes {
        fn row_count(&self) -> usize {
            self.paths.len()
        }
        fn fields(&self, row: usize) -> NoteFields<'a> {
            let notes: &'a Notes = self;
            NoteFields {
                path: &notes.paths[row],
                title: &notes.paths[row],
                modified_ms: row as i64,
                tags: &notes.tags[row],
                frontmatter: Frontmatter::Map(&notes.frontmatter[row]),
            }
        }
        fn values(&self, key: &str) -> Arc<ValueIndex> {
            let column: Vec<Option<Value>> = self.frontmatter.iter().map(|map| map.get(key).cloned()).collect();
            Arc::new(ValueIndex::build(&column))
        }
        fn order(&self, name: &str, build: &dyn Fn() -> Vec<u32>) -> Arc<Vec<u32>> {
            let mut orders = self.orders.lock().unwrap();
            Arc::clone(orders.entry(name.to_string()).or_insert_with(|| Arc::new(build())))
        }
    }

    /// Both ways of running a query, which must agree.
    fn both(notes: &Notes, dsl: &str, visible: &RowSet) -> (QueryOutput, QueryOutput) {
        let query = parse(dsl).unwrap();
        let catalog = notes;
        let scanned = query.run(visible.rows().map(|row| catalog.fields(row)), 0);
        (run_over(&query, &catalog, visible, 0), scanned)
    }

    fn same(a: &QueryOutput, b: &QueryOutput) {
        assert_eq!(a.rows, b.rows);
        assert_eq!(a.total, b.total);
        assert_eq!(a.truncated, b.truncated);
        assert_eq!(a.columns, b.columns);
        assert_eq!(
            serde_json::to_value(&a.groups).unwrap(),
            serde_json::to_value(&b.groups).unwrap()
        );
    }

    #[test]
    fn the_index_compares_as_is_does() {
        let column = vec![
            Some(json!("Done")),
            Some(json!(["done", "DONE", 3])),
            Some(json!(-0.0)),
            Some(json!(null)),
            Some(json!(true)),
            Some(json!({"done": 1})),
            Some(json!([["done"]])),
            None,
            Some(json!("K")),
        ];
        let index = ValueIndex::build(&column);
        let text = |raw: &str| Operand::Text {
            raw: raw.into(),
            folded: raw.to_lowercase(),
        };
        assert_eq!(index.rows_equal(&text("dOnE")), Some(&[0, 1][..]));
        assert_eq!(index.rows_equal(&Operand::Number(0.0)), Some(&[2][..]));
        assert_eq!(index.rows_equal(&Operand::Number(3.0)), Some(&[1][..]));
        assert_eq!(
            index.rows_equal(&Operand::Number(f64::NAN)),
            Some(&[][..]),
            "NaN equals nothing"
        );
        assert_eq!(index.rows_equal(&Operand::Bool(true)), Some(&[4][..]));
        assert_eq!(index.rows_equal(&Operand::Bool(false)), Some(&[][..]));
        // The Kelvin sign lowercases to an ASCII k, as `is` compares it.
        assert_eq!(index.rows_equal(&text("\u{212A}")), Some(&[8][..]));
        assert_eq!(
            index.rows_equal(&Operand::Day(3)),
            None,
            "dates are tested note by note"
        );
        assert_eq!(index.present, [0, 1, 2, 4, 5, 6, 8]);
    }

    #[test]
    fn large_matches_walk_the_kept_order_and_agree_with_a_scan() {
        let notes = Notes::new(
            (0..2_000)
                .map(|i| {
                    let status = ["todo", "done"][i % 2];
                    json!({"status": status, "due": format!("2026-01-{:02}", i % 28 + 1)})
                })
                .collect(),
        );
        let visible = RowSet::from_rows(20_000, (0..2_000).filter(|row| row % 10 != 3));
        for dsl in [
            "where status is \"todo\"\nsort due desc\nlimit 50",
            "where status is not \"todo\"\nsort due\nsort __path desc",
            "where due exists\nsort __title",
            "where status is \"TODO\" or due lt 2026-01-05\nsort due desc",
            "where status missing",
            "where due gt 2026-01-20\ngroup by status",
        ] {
            let (indexed, scanned) = both(&notes, dsl, &visible);
            same(&indexed, &scanned);
        }
        assert!(
            notes.orders.lock().unwrap().len() >= 2,
            "large matches were shown through kept orders"
        );
    }

    fn value() -> impl Strategy<Value = Value> {
        prop_oneof![
            Just(Value::Null),
            prop::sample::select(vec!["a", "A", "b", "2026-01-02", "é", "É"]).prop_map(Value::from),
            (-2i64..3).prop_map(Value::from),
            any::<bool>().prop_map(Value::from),
            prop::collection::vec(prop::sample::select(vec!["a", "b", "B"]).prop_map(Value::from), 0..3)
                .prop_map(Value::Array),
        ]
    }

    fn condition() -> impl Strategy<Value = String> {
        let key = prop::sample::select(vec!["x", "y"]);
        let constant = prop::sample::select(vec!["\"a\"", "\"É\"", "1", "0", "true", "2026-01-02", "y", "\"b\""]);
        (key, 0..5usize, constant).prop_map(|(key, op, constant)| match op {
            0 => format!("{key} is {constant}"),
            1 => format!("{key} is not {constant}"),
            2 => format!("{key} exists"),
            3 => format!("{key} missing"),
            _ => format!("{key} contains {constant}"),
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn indexed_runs_equal_scans(
            xs in prop::collection::vec((value(), value()), 150..300),
            lines in prop::collection::vec(prop::collection::vec(prop::collection::vec(condition(), 1..3), 1..3), 0..3),
            sort in prop::sample::select(vec!["", "sort x", "sort y desc\nsort x", "sort __path desc"]),
            hidden in 0..7usize,
        ) {
            let frontmatter = xs.into_iter().map(|(x, y)| json!({"x": x, "y": y})).collect();
            let notes = Notes::new(frontmatter);
            let len = notes.paths.len();
            let visible = RowSet::from_rows(len, (0..len as u32).filter(|row| hidden == 0 || *row as usize % 7 != hidden));
            let mut dsl = String::new();
            for line in &lines {
                let alternatives: Vec<String> = line.iter().map(|all| all.join(" and ")).collect();
                dsl += &format!("where {}\n", alternatives.join(" or "));
            }
            dsl += sort;
            let (indexed, scanned) = both(&notes, &dsl, &visible);
            same(&indexed, &scanned);
            let query = parse(&dsl).unwrap();
            let conditions: Vec<Condition> = query.filters.iter().flatten().flatten().cloned().collect();
            if !conditions.is_empty() {
                let exact = narrow_all(&conditions, &&notes).is_some_and(|narrowed| narrowed.exact);
                prop_assert_eq!(answered_by_indexes(&conditions), exact);
            }
            let passed = passing(&conditions, &&notes, &visible, 0);
            let tested: Vec<usize> = visible.rows().filter(|row| {
                let note = (&notes).fields(*row);
                conditions.iter().all(|condition| condition.matches(&note, 0))
            }).collect();
            prop_assert_eq!(passed.rows().collect::<Vec<_>>(), tested);
        }
    }
}
