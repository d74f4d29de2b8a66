//! Runs a query over many notes: filter, order, limit, group, and build the rows.
//!
//! `run` sees the whole catalog (100,000 notes must take milliseconds), so it does the expensive work only for the
//! notes that matter: only matching notes are kept, their sort keys are read once into one flat vector rather than
//! looked up again on every comparison, and a selection finds the rows within the limit before only those are
//! sorted. Groups are counted with a hash map in one pass rather than by sorting every match. Rows, the only
//! per-note allocation, are built for the shown notes alone.
//!
//! Output stays bounded by the limit even when grouping: rows fill the groups in key order up to the limit, and at
//! most `limit` groups are listed, each with its full count (so a group can show a count and no rows).

use std::cmp::Ordering;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};

use serde_json::Value;

use super::compare::{self, Val};
use super::eval::{field_json, field_value};
use super::{Field, Group, NoteFields, Query, QueryOutput};

pub(super) fn run<'a>(query: &Query, notes: impl Iterator<Item = NoteFields<'a>>, now_ms: i64) -> QueryOutput {
    run_matched(query, notes.filter(|note| query.matches(note, now_ms)))
}

/// [`run`] over notes already known to match.
pub(super) fn run_matched<'a>(query: &Query, notes: impl Iterator<Item = NoteFields<'a>>) -> QueryOutput {
    let matched: Vec<NoteFields<'a>> = notes.collect();
    let total = matched.len();
    let limit = query.limit;

    let order_by = order_by(query);
    let width = order_by.len();
    let keys: Vec<Option<Val<'a>>> = matched
        .iter()
        .flat_map(|note| order_by.iter().map(move |(field, _)| field_value(field, note)))
        .collect();
    let keys_of = |index: usize| keys.get(index * width..(index + 1) * width).unwrap_or_default();
    let path_of = |index: usize| matched.get(index).map_or("", |note| note.path);
    let compare = |a: &usize, b: &usize| -> Ordering {
        compare_keys(&order_by, keys_of(*a), keys_of(*b)).then_with(|| path_of(*a).cmp(path_of(*b)))
    };
    let mut shown: Vec<usize> = (0..total).collect();
    first_in_order(&mut shown, limit, compare);

    let row = |index: usize| -> Vec<Value> { matched.get(index).map(|note| row_of(query, note)).unwrap_or_default() };
    let columns = column_names(query);
    let truncated = total > shown.len();
    let Some(group_field) = &query.group_by else {
        let rows = shown.iter().map(|index| row(*index)).collect();
        return QueryOutput {
            columns,
            rows,
            groups: None,
            total,
            truncated,
        };
    };

    // Count every group in one pass. The key shown is that of the member with the first path, since members can
    // differ in form (`1` and `1.0`, or two objects) and the output must not depend on the notes' order.
    let group_key = |index: usize| GroupKey(keys_of(index).first().copied().flatten());
    let mut counts: HashMap<GroupKey<'a>, (usize, usize)> = HashMap::new();
    for index in 0..total {
        let (count, first) = counts.entry(group_key(index)).or_insert((0, index));
        *count += 1;
        if path_of(index) < path_of(*first) {
            *first = index;
        }
    }
    let mut listed: Vec<(GroupKey<'a>, usize, usize)> = counts
        .into_iter()
        .map(|(key, (count, first))| (key, count, first))
        .collect();
    first_in_order(&mut listed, limit, |a, b| compare::missing_last(a.0.0, b.0.0));

    let mut groups: Vec<Group> = listed
        .iter()
        .map(|(key, count, first)| Group {
            key: match (key.0, matched.get(*first)) {
                (Some(_), Some(note)) => field_json(group_field, note),
                _ => Value::Null,
            },
            count: *count,
            rows: Vec::new(),
        })
        .collect();
    // The shown rows are in group order and fill the first groups, so one walk places them.
    let mut current = 0;
    for index in shown {
        let key = group_key(index);
        while listed.get(current).is_some_and(|(listed_key, _, _)| *listed_key != key) {
            current += 1;
        }
        if let Some(group) = groups.get_mut(current) {
            group.rows.push(row(index));
        }
    }
    QueryOutput {
        columns,
        rows: Vec::new(),
        groups: Some(groups),
        total,
        truncated,
    }
}

/// What orders the notes: the group key first, then the sort keys (a flag for descending); then the path, which
/// the callers compare last, so that the order is total and the output the same on every run.
fn order_by(query: &Query) -> Vec<(&Field, bool)> {
    query
        .group_by
        .iter()
        .map(|field| (field, false))
        .chain(query.sort.iter().map(|key| (&key.field, key.descending)))
        .collect()
}

/// Compares two notes by their keys, read in the order of [`order_by`].
fn compare_keys(order_by: &[(&Field, bool)], a: &[Option<Val<'_>>], b: &[Option<Val<'_>>]) -> Ordering {
    for ((x, y), (_, descending)) in a.iter().zip(b).zip(order_by) {
        // Missing values come last in both directions, so `desc` reverses only present values.
        let order = match (x, y) {
            (Some(x), Some(y)) if *descending => compare::sort_order(*y, *x),
            _ => compare::missing_last(*x, *y),
        };
        if order != Ordering::Equal {
            return order;
        }
    }
    Ordering::Equal
}

/// Every row of a catalog of `len` notes in the order [`run`] shows them (the query has no `group by`), so that
/// a large match is shown by walking this order, kept across queries, instead of sorting the match each time.
pub(super) fn sorted_rows<'a>(query: &Query, len: usize, fields: impl Fn(usize) -> NoteFields<'a>) -> Vec<u32> {
    let order_by = order_by(query);
    let width = order_by.len();
    let notes: Vec<NoteFields<'a>> = (0..len).map(fields).collect();
    let keys: Vec<Option<Val<'a>>> = notes
        .iter()
        .flat_map(|note| order_by.iter().map(move |(field, _)| field_value(field, note)))
        .collect();
    let keys_of = |row: usize| keys.get(row * width..(row + 1) * width).unwrap_or_default();
    let mut rows: Vec<u32> = (0..len as u32).collect();
    rows.sort_unstable_by(|a, b| {
        let (a, b) = (*a as usize, *b as usize);
        compare_keys(&order_by, keys_of(a), keys_of(b))
            .then_with(|| notes.get(a).map(|n| n.path).cmp(&notes.get(b).map(|n| n.path)))
    });
    rows
}

/// The values a row shows for a note, in the order of the query's columns.
pub(super) fn row_of(query: &Query, note: &NoteFields<'_>) -> Vec<Value> {
    query.columns.iter().map(|field| field_json(field, note)).collect()
}

/// The names of the query's columns.
pub(super) fn column_names(query: &Query) -> Vec<String> {
    query.columns.iter().map(|field| field.name().to_string()).collect()
}

/// Keeps the first `limit` items in order, sorted. A selection first, so that only those are sorted.
fn first_in_order<T>(items: &mut Vec<T>, limit: usize, compare: impl Fn(&T, &T) -> Ordering) {
    if limit == 0 {
        items.clear();
        return;
    }
    if items.len() > limit {
        items.select_nth_unstable_by(limit - 1, &compare);
        items.truncate(limit);
    }
    items.sort_unstable_by(compare);
}

/// A `group by` value as a hash-map key: equal exactly when [`compare::missing_last`] says so.
#[derive(Clone, Copy)]
struct GroupKey<'a>(Option<Val<'a>>);

impl PartialEq for GroupKey<'_> {
    fn eq(&self, other: &Self) -> bool {
        compare::missing_last(self.0, other.0) == Ordering::Equal
    }
}

impl Eq for GroupKey<'_> {}

impl Hash for GroupKey<'_> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        hash_value(self.0, state);
    }
}

/// Hashes what the order compares: the exact text (equal text is equal byte for byte, not only but for case), a
/// number's bits (`total_cmp` is equal exactly for equal bits), a list's elements; objects are all alike.
fn hash_value<H: Hasher>(value: Option<Val<'_>>, state: &mut H) {
    let Some(value) = value else {
        return state.write_u8(0);
    };
    match value {
        Val::Number(number) => (1u8, number.to_bits()).hash(state),
        Val::Day(day) => (2u8, day).hash(state),
        Val::Instant(ms) => (3u8, ms).hash(state),
        Val::Text(text) => (4u8, text).hash(state),
        Val::Bool(flag) => (5u8, flag).hash(state),
        Val::List(items) => {
            state.write_u8(6);
            let mut length = 0usize;
            for item in items.elements() {
                // Elements are never lists, so this recurses once at most.
                hash_value(item, state);
                length += 1;
            }
            state.write_usize(length);
        }
        Val::Other => state.write_u8(7),
    }
}
