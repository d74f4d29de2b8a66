//! Tests one condition on one note: finds the values of the fields it names and applies the operator.
//!
//! The operators' meaning lives in `compare`; this file only connects a parsed [`Condition`] to a note's fields
//! and to the clock, and renders a field as the JSON a row shows.

use std::cmp::Ordering;

use serde_json::Value;

use super::compare::{self, List, MS_PER_DAY, Val};
use super::{Condition, Field, NoteFields, Op, Operand};
use crate::journal::day::format_timestamp;

/// Whether `note` passes `condition`, with relative dates counted from the UTC day of `now_ms`.
pub(super) fn condition_holds(condition: &Condition, note: &NoteFields<'_>, now_ms: i64) -> bool {
    let left = field_value(&condition.field, note);
    let right = || {
        condition
            .operand
            .as_ref()
            .and_then(|operand| operand_value(operand, condition.op, note, now_ms))
    };
    let both = |test: fn(Val<'_>, Val<'_>) -> bool| match (left, right()) {
        (Some(left), Some(right)) => test(left, right),
        _ => false,
    };
    match condition.op {
        Op::Exists => left.is_some(),
        Op::Missing => left.is_none(),
        Op::Is => both(compare::is),
        // The negation of `is`, so that a note without the field is "not" anything.
        Op::IsNot => !both(compare::is),
        Op::Contains => both(compare::contains),
        Op::Gt => both(|left, right| compare::order(left, right) == Some(Ordering::Greater)),
        Op::Lt => both(|left, right| compare::order(left, right) == Some(Ordering::Less)),
        Op::Under => both(compare::under),
    }
}

/// The value of a field of a note; `None` when the note lacks it or it is null.
pub(super) fn field_value<'a>(field: &Field, note: &NoteFields<'a>) -> Option<Val<'a>> {
    Some(match field {
        Field::Title => Val::Text(note.title),
        Field::Path => Val::Text(note.path),
        Field::Folder => Val::Text(folder_of(note.path)),
        Field::Modified => Val::Instant(note.modified_ms),
        Field::Tags => Val::List(List::Tags(note.tags)),
        Field::Key(key) => return note.frontmatter.get(key.as_str()).and_then(compare::from_json),
    })
}

/// A field of a note as a row shows it: `__modified` as RFC 3339 UTC, frontmatter as it was, `null` when missing.
pub(super) fn field_json(field: &Field, note: &NoteFields<'_>) -> Value {
    match field {
        Field::Title => Value::from(note.title),
        Field::Path => Value::from(note.path),
        Field::Folder => Value::from(folder_of(note.path)),
        Field::Modified => Value::from(format_timestamp(note.modified_ms.div_euclid(1000))),
        Field::Tags => Value::from(note.tags.to_vec()),
        Field::Key(key) => note.frontmatter.get(key.as_str()).cloned().unwrap_or(Value::Null),
    }
}

/// The folder of a vault-relative path: `Projects` for `Projects/alpha.md`, empty at the top.
pub(super) fn folder_of(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(folder, _)| folder)
}

/// The value an operand stands for in this note. A string is its lowercase form for the operators that ignore
/// case (folded once, when the query was read), and as written for `under`, which compares paths exactly.
fn operand_value<'a>(operand: &'a Operand, op: Op, note: &NoteFields<'a>, now_ms: i64) -> Option<Val<'a>> {
    Some(match operand {
        Operand::Text { raw, .. } if op == Op::Under => Val::Text(raw),
        Operand::Text { folded, .. } => Val::Text(folded),
        Operand::Number(number) => Val::Number(*number),
        Operand::Bool(flag) => Val::Bool(*flag),
        Operand::Day(day) => Val::Day(*day),
        Operand::Relative(days) => Val::Day(now_ms.div_euclid(MS_PER_DAY).saturating_add(*days)),
        Operand::Field(field) => return field_value(field, note),
    })
}

#[cfg(test)]
mod tests {
    use serde_json::{Map, json};

    use super::*;

    #[test]
    fn built_in_fields_read_from_the_note() {
        let tags = vec!["a".to_string(), "b".to_string()];
        let frontmatter: Map<String, Value> = json!({ "status": "open", "gone": null, "nested": { "x": 1 } })
            .as_object()
            .cloned()
            .unwrap_or_default();
        let note = NoteFields {
            path: "Projects/2026/alpha.md",
            title: "Alpha",
            modified_ms: 1_764_667_800_123,
            tags: &tags,
            frontmatter: super::super::Frontmatter::Map(&frontmatter),
        };
        assert_eq!(field_value(&Field::Folder, &note), Some(Val::Text("Projects/2026")));
        assert_eq!(field_value(&Field::Key("gone".into()), &note), None);
        assert_eq!(field_value(&Field::Key("absent".into()), &note), None);
        assert_eq!(field_value(&Field::Key("nested".into()), &note), Some(Val::Other));
        assert_eq!(field_json(&Field::Modified, &note), json!("2025-12-02T09:30:00Z"));
        assert_eq!(field_json(&Field::Tags, &note), json!(["a", "b"]));
        assert_eq!(field_json(&Field::Folder, &note), json!("Projects/2026"));
        assert_eq!(field_json(&Field::Key("nested".into()), &note), json!({ "x": 1 }));
        assert_eq!(field_json(&Field::Key("absent".into()), &note), Value::Null);
        assert_eq!(folder_of("top.md"), "");
    }
}
