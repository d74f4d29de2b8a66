//! What each operator means, as plain functions over borrowed values.
//!
//! A [`Val`] is a view of a frontmatter value, a built-in field or a constant of the query, borrowed rather than
//! copied, so that testing a condition on each of 100,000 notes allocates nothing. For the same reason text is
//! compared case-insensitively by lowercasing characters as they are read, never by building lowercase strings.
//! Where two values of different kinds meet (a number and a string, say), every comparison is false; the one
//! deliberate exception is dates, which frontmatter can only hold as text: a text that starts with `YYYY-MM-DD`
//! counts as that day when it meets a date.

use std::cmp::Ordering;

use serde_json::Value;

use crate::journal::day::Day;

/// Milliseconds in a day, to take the UTC day of an instant.
pub(super) const MS_PER_DAY: i64 = 86_400_000;

/// A present value of a field or a constant (a missing field or a null has no `Val`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Val<'a> {
    Text(&'a str),
    Number(f64),
    Bool(bool),
    /// A calendar day, as days since 1970-01-01: a date or relative date of the query.
    Day(i64),
    /// An instant, in Unix milliseconds: `__modified`.
    Instant(i64),
    List(List<'a>),
    /// An object, or a list inside a list: present, but equal to nothing and comparable with nothing.
    Other,
}

/// A list of values: a frontmatter array or the note's tags.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum List<'a> {
    Json(&'a [Value]),
    Tags(&'a [String]),
}

impl<'a> List<'a> {
    /// Every element, `None` for a null; an element is never a list, so what reads them recurses at most once.
    pub(super) fn elements(self) -> impl Iterator<Item = Option<Val<'a>>> {
        let length = match self {
            List::Json(values) => values.len(),
            List::Tags(tags) => tags.len(),
        };
        (0..length).map(move |index| match self {
            List::Json(values) => match values.get(index) {
                Some(Value::Array(_)) => Some(Val::Other),
                Some(value) => from_json(value),
                None => None,
            },
            List::Tags(tags) => tags.get(index).map(|tag| Val::Text(tag)),
        })
    }

    /// The elements that are present.
    fn present(self) -> impl Iterator<Item = Val<'a>> {
        self.elements().flatten()
    }
}

/// The value a frontmatter value holds; `None` for null, which counts as missing.
pub(super) fn from_json(value: &Value) -> Option<Val<'_>> {
    Some(match value {
        Value::Null => return None,
        Value::Bool(flag) => Val::Bool(*flag),
        Value::Number(number) => number.as_f64().map_or(Val::Other, Val::Number),
        Value::String(text) => Val::Text(text),
        Value::Array(values) => Val::List(List::Json(values)),
        Value::Object(_) => Val::Other,
    })
}

/// `is`: equal numbers, text equal but for case, equal flags, the same day; a list when any element is.
pub(super) fn is(left: Val<'_>, right: Val<'_>) -> bool {
    match (left, right) {
        (Val::List(items), _) => items.present().any(|item| is(item, right)),
        (_, Val::List(items)) => items.present().any(|item| is(left, item)),
        (Val::Number(a), Val::Number(b)) => a == b,
        (Val::Text(a), Val::Text(b)) => fold_eq(a, b),
        (Val::Bool(a), Val::Bool(b)) => a == b,
        _ => time_order(left, right) == Some(Ordering::Equal),
    }
}

/// `contains`: text holds the other as a substring, ignoring case; a list holds an element that `is` the value.
pub(super) fn contains(left: Val<'_>, right: Val<'_>) -> bool {
    match (left, right) {
        (Val::Text(text), Val::Text(part)) => fold_contains(text, part),
        (Val::List(items), _) => items.present().any(|item| is(item, right)),
        _ => false,
    }
}

/// The order `gt` and `lt` use: numbers, days or instants, or text ignoring case; `None` when the two do not
/// compare, which makes both operators false.
pub(super) fn order(left: Val<'_>, right: Val<'_>) -> Option<Ordering> {
    match (left, right) {
        (Val::Number(a), Val::Number(b)) => a.partial_cmp(&b),
        (Val::Text(a), Val::Text(b)) => Some(fold_cmp(a, b)),
        _ => time_order(left, right),
    }
}

/// `under`: a path or folder that is the folder or lies below it by `/` segments (a list when any element is).
pub(super) fn under(value: Val<'_>, folder: Val<'_>) -> bool {
    let Val::Text(folder) = folder else {
        return false;
    };
    match value {
        Val::Text(path) => path_under(path, folder),
        Val::List(items) => items
            .present()
            .any(|item| matches!(item, Val::Text(path) if path_under(path, folder))),
        _ => false,
    }
}

/// Whether `path` is `folder` or lies below it; a trailing `/` on the folder is ignored, and every path is under
/// the empty folder (the top of the vault). Paths compare exactly, as the files are named.
pub(super) fn path_under(path: &str, folder: &str) -> bool {
    let folder = folder.trim_end_matches('/');
    folder.is_empty()
        || path
            .strip_prefix(folder)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
}

/// The total order of `sort` and `group by` for present values: numbers, then dates and instants, then text
/// (ignoring case first, then exactly, so that the order never depends on the input's order), then flags, then
/// lists (element by element), then objects.
pub(super) fn sort_order(left: Val<'_>, right: Val<'_>) -> Ordering {
    fn rank(value: Val<'_>) -> u8 {
        match value {
            Val::Number(_) => 0,
            Val::Day(_) | Val::Instant(_) => 1,
            Val::Text(_) => 2,
            Val::Bool(_) => 3,
            Val::List(_) => 4,
            Val::Other => 5,
        }
    }
    rank(left).cmp(&rank(right)).then_with(|| match (left, right) {
        (Val::Number(a), Val::Number(b)) => a.total_cmp(&b),
        (Val::Day(a), Val::Day(b)) | (Val::Instant(a), Val::Instant(b)) => a.cmp(&b),
        (Val::Day(a), Val::Instant(b)) => a.cmp(&b.div_euclid(MS_PER_DAY)).then(Ordering::Less),
        (Val::Instant(a), Val::Day(b)) => a.div_euclid(MS_PER_DAY).cmp(&b).then(Ordering::Greater),
        (Val::Text(a), Val::Text(b)) => fold_cmp(a, b).then_with(|| a.cmp(b)),
        (Val::Bool(a), Val::Bool(b)) => a.cmp(&b),
        (Val::List(a), Val::List(b)) => {
            let (mut a, mut b) = (a.elements(), b.elements());
            loop {
                let next = match (a.next(), b.next()) {
                    (None, None) => return Ordering::Equal,
                    (None, Some(_)) => return Ordering::Less,
                    (Some(_), None) => return Ordering::Greater,
                    (Some(x), Some(y)) => missing_last(x, y),
                };
                if next != Ordering::Equal {
                    return next;
                }
            }
        }
        _ => Ordering::Equal,
    })
}

/// [`sort_order`] for values that may be missing, which come after every present value.
pub(super) fn missing_last(left: Option<Val<'_>>, right: Option<Val<'_>>) -> Ordering {
    match (left, right) {
        (Some(a), Some(b)) => sort_order(a, b),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => Ordering::Equal,
    }
}

/// A point in time on one side of a comparison.
#[derive(Clone, Copy)]
enum Time {
    Day(i64),
    Instant(i64),
}

/// Compares two values as times when one of them is a date or an instant: by instant when both are instants (a
/// text with a time of day meeting `__modified`), otherwise by UTC day.
fn time_order(left: Val<'_>, right: Val<'_>) -> Option<Ordering> {
    fn as_time(value: Val<'_>, other: Val<'_>) -> Option<Time> {
        match value {
            Val::Day(day) => Some(Time::Day(day)),
            Val::Instant(ms) => Some(Time::Instant(ms)),
            Val::Text(text) if matches!(other, Val::Day(_) | Val::Instant(_)) => {
                let instant = matches!(other, Val::Instant(_)).then(|| parse_instant(text)).flatten();
                instant.map(Time::Instant).or_else(|| day_prefix(text).map(Time::Day))
            }
            _ => None,
        }
    }
    let day = |time: Time| match time {
        Time::Day(day) => day,
        Time::Instant(ms) => ms.div_euclid(MS_PER_DAY),
    };
    match (as_time(left, right)?, as_time(right, left)?) {
        (Time::Instant(a), Time::Instant(b)) => Some(a.cmp(&b)),
        (a, b) => Some(day(a).cmp(&day(b))),
    }
}

/// Text equal but for case.
pub(super) fn fold_eq(a: &str, b: &str) -> bool {
    if a.is_ascii() && b.is_ascii() {
        a.eq_ignore_ascii_case(b)
    } else {
        folded(a).eq(folded(b))
    }
}

/// Text ordered by its lowercase characters.
pub(super) fn fold_cmp(a: &str, b: &str) -> Ordering {
    // Sorting calls this millions of times, mostly on ASCII that differs early: walk the bytes, and lowercase
    // whole characters only from the first difference that is not plain ASCII. Equal bytes before it belong to
    // equal characters, so the two orders agree.
    for (x, y) in a.bytes().zip(b.bytes()) {
        if x == y {
            continue;
        }
        if !x.is_ascii() || !y.is_ascii() {
            return folded(a).cmp(folded(b));
        }
        match x.to_ascii_lowercase().cmp(&y.to_ascii_lowercase()) {
            Ordering::Equal => continue,
            order => return order,
        }
    }
    a.len().cmp(&b.len())
}

/// Whether `text` holds `part`, ignoring case.
pub(super) fn fold_contains(text: &str, part: &str) -> bool {
    // The search below tries every start, which costs up to the product of the lengths (think "aaa…ab" in a
    // long run of "a"). Past a million steps, lowercased copies and the linear `str::contains` cost less; notes
    // rarely hold such long values, so the common path still allocates nothing.
    if part.is_empty() {
        return true;
    }
    if text.len().saturating_mul(part.len()) > 1 << 20 {
        let lowercase = |text: &str| -> String { folded(text).collect() };
        return lowercase(text).contains(&lowercase(part));
    }
    if text.is_ascii() && part.is_ascii() {
        return text
            .as_bytes()
            .windows(part.len())
            .any(|window| window.eq_ignore_ascii_case(part.as_bytes()));
    }
    text.char_indices().any(|(start, _)| {
        let mut rest = text.get(start..).map(folded).into_iter().flatten();
        folded(part).all(|c| rest.next() == Some(c))
    })
}

/// Text as [`fold_eq`] compares it: two texts are `fold_eq` exactly when their keys are equal.
pub(super) fn fold_key(text: &str) -> String {
    folded(text).collect()
}

fn folded(text: &str) -> impl Iterator<Item = char> + Clone + '_ {
    text.chars().flat_map(char::to_lowercase)
}

/// The day a text starts with (`2026-11-03`, `2026-11-03T10:00:00Z`), as days since 1970-01-01.
pub(super) fn day_prefix(text: &str) -> Option<i64> {
    let bytes = text.as_bytes();
    if bytes.get(4) != Some(&b'-') || bytes.get(7) != Some(&b'-') || bytes.get(10).is_some_and(u8::is_ascii_digit) {
        return None;
    }
    let year = digits(bytes.get(0..4)?)?;
    let month = digits(bytes.get(5..7)?)?;
    let day = digits(bytes.get(8..10)?)?;
    let day = Day::from_parts(
        u16::try_from(year).ok()?,
        u8::try_from(month).ok()?,
        u8::try_from(day).ok()?,
    )?;
    Some(day.epoch_days())
}

/// An RFC 3339 date and time (`2026-11-03T10:00:00Z`, `2026-11-03 10:00`, `...T10:00:00.5+01:00`; UTC when no
/// offset is given), in Unix milliseconds. A bare date is not an instant.
pub(super) fn parse_instant(text: &str) -> Option<i64> {
    let day = day_prefix(text)?;
    let bytes = text.as_bytes();
    if !matches!(bytes.get(10)?, b'T' | b't' | b' ') || bytes.get(13) != Some(&b':') {
        return None;
    }
    let (hour, minute) = (digits(bytes.get(11..13)?)?, digits(bytes.get(14..16)?)?);
    let mut at = 16;
    let mut second = 0;
    if bytes.get(at) == Some(&b':') {
        second = digits(bytes.get(17..19)?)?;
        at = 19;
    }
    let mut millis = 0;
    if bytes.get(at) == Some(&b'.') {
        // Milliseconds are all `__modified` has; further digits are read and dropped.
        let fraction = bytes.get(at + 1..)?.iter().take_while(|b| b.is_ascii_digit()).count();
        let kept = bytes.get(at + 1..at + 1 + fraction.min(3))?;
        millis = digits(kept)? * [100, 10, 1].get(kept.len().checked_sub(1)?)?;
        at += 1 + fraction;
    }
    let offset_minutes = match bytes.get(at..)? {
        [] | [b'Z' | b'z'] => 0,
        [sign @ (b'+' | b'-'), h1, h2, b':', m1, m2] => {
            let (hours, minutes) = (digits(&[*h1, *h2])?, digits(&[*m1, *m2])?);
            if hours > 23 || minutes > 59 {
                return None;
            }
            let offset = hours * 60 + minutes;
            if *sign == b'-' { -offset } else { offset }
        }
        _ => return None,
    };
    if hour > 23 || minute > 59 || second > 60 {
        return None;
    }
    let seconds = day * 86_400 + hour * 3600 + minute * 60 + second - offset_minutes * 60;
    Some(seconds * 1000 + millis)
}

/// The number written by ASCII digits (at most a few).
fn digits(bytes: &[u8]) -> Option<i64> {
    if bytes.is_empty() || bytes.len() > 4 || !bytes.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(bytes.iter().fold(0, |n, b| n * 10 + i64::from(b - b'0')))
}

#[cfg(test)]
mod tests;
