//! Reads the conditions of `where` lines and the fields that clauses name.
//!
//! A `where` line is a flat list: conditions joined by `and` and `or`, with `and` binding tighter and no
//! parentheses, so it is read in one loop into alternatives of conjunctions, never by recursion. A condition is
//! `<field> <operator> [value]`; which words are values (`true`, `now-30d`) and which are fields is decided here.

use super::lexer::{Kind, Token, Tokens};
use super::{Condition, Field, MAX_CONDITIONS_PER_LINE, Op, Operand, QueryError};

const OPERATORS: &str = "is, is not, contains, exists, missing, gt, lt, under";
const VALUES: &str =
    "a quoted string, a number, true, false, a date like 2026-11-03, a relative date like now-30d, or a field";

/// Reads the conditions of a `where` line: alternatives joined by `or`, each a run of conditions joined by `and`.
pub(super) fn alternatives(tokens: &mut Tokens<'_>) -> Result<Vec<Vec<Condition>>, QueryError> {
    let mut alternatives = Vec::new();
    let mut current = Vec::new();
    let mut after = "after `where`";
    let mut count = 0;
    loop {
        count += 1;
        if count > MAX_CONDITIONS_PER_LINE {
            let column = tokens.next_column()?;
            return Err(tokens.error_at_column(
                column,
                format!("expected at most {MAX_CONDITIONS_PER_LINE} conditions on one `where` line"),
            ));
        }
        current.push(condition(tokens, after)?);
        if tokens.take_word("and")? {
            after = "after `and`";
        } else if tokens.take_word("or")? {
            after = "after `or`";
            alternatives.push(std::mem::take(&mut current));
        } else if tokens.peek()?.is_none() {
            alternatives.push(current);
            return Ok(alternatives);
        } else {
            let token = tokens.next()?;
            return Err(tokens.expected(token.as_ref(), "`and`, `or` or the end of the line after the condition"));
        }
    }
}

/// Reads `<field> <operator> [value]`.
pub(super) fn condition(tokens: &mut Tokens<'_>, after: &str) -> Result<Condition, QueryError> {
    let field = field(tokens, after)?;
    let token = tokens.next()?;
    let op = match token.as_ref() {
        Some(token) if token.is_word("is") => match tokens.take_word("not")? {
            true => Op::IsNot,
            false => Op::Is,
        },
        Some(token) if token.is_word("contains") => Op::Contains,
        Some(token) if token.is_word("exists") => Op::Exists,
        Some(token) if token.is_word("missing") => Op::Missing,
        Some(token) if token.is_word("gt") => Op::Gt,
        Some(token) if token.is_word("lt") => Op::Lt,
        Some(token) if token.is_word("under") => Op::Under,
        _ => {
            let what = format!("an operator ({OPERATORS}) after the field `{}`", field.name());
            return Err(tokens.expected(token.as_ref(), &what));
        }
    };
    let operand = match op {
        Op::Exists | Op::Missing => None,
        _ => Some(operand(tokens, op)?),
    };
    Ok(Condition { field, op, operand })
}

/// Reads a field name; `after` says where it stands ("after `where`"), for the message.
pub(super) fn field(tokens: &mut Tokens<'_>, after: &str) -> Result<Field, QueryError> {
    let token = tokens.next()?;
    match token.as_ref().map(|token| &token.kind) {
        Some(Kind::Word) => word_field(tokens, token.as_ref()),
        Some(Kind::Backquoted(name)) => Ok(Field::Key(name.clone())),
        Some(Kind::Text(_)) => Err(tokens.expected(
            token.as_ref(),
            &format!(
                "a field name {after} (names are not quoted: write a key with spaces in backquotes, like `my key`)"
            ),
        )),
        _ => Err(tokens.expected(token.as_ref(), &format!("a field name {after}"))),
    }
}

/// The field a word names: a built-in one when it starts with `__`, otherwise a frontmatter key.
fn word_field(tokens: &Tokens<'_>, token: Option<&Token<'_>>) -> Result<Field, QueryError> {
    let Some(token) = token else {
        return Err(tokens.expected(None, "a field name"));
    };
    if !token.text.starts_with("__") {
        return Ok(Field::Key(token.text.to_string()));
    }
    match Field::BUILT_IN.iter().find(|(name, _)| *name == token.text) {
        Some((_, field)) => Ok(field.clone()),
        None => Err(tokens.error_at_column(
            token.column,
            format!(
                "expected a built-in field (__title, __path, __folder, __modified, __tags), found `{}` (write a \
                 frontmatter key that starts with __ in backquotes)",
                token.text
            ),
        )),
    }
}

/// Reads the value after an operator.
fn operand(tokens: &mut Tokens<'_>, op: Op) -> Result<Operand, QueryError> {
    let name = match op {
        Op::Is => "is",
        Op::IsNot => "is not",
        Op::Contains => "contains",
        Op::Gt => "gt",
        Op::Lt => "lt",
        Op::Under | Op::Exists | Op::Missing => "under",
    };
    let token = tokens.next()?;
    let Some(token) = token else {
        return Err(tokens.expected(None, &format!("a value after `{name}` ({VALUES})")));
    };
    if op == Op::Under {
        return match &token.kind {
            Kind::Text(folder) => Ok(text(folder.trim_matches('/'))),
            Kind::Backquoted(key) => Ok(Operand::Field(Field::Key(key.clone()))),
            Kind::Word if !is_constant_word(token.text) => Ok(Operand::Field(word_field(tokens, Some(&token))?)),
            _ => Err(tokens.expected(
                Some(&token),
                "a quoted folder or a field after `under`, like under \"Projects\"",
            )),
        };
    }
    match &token.kind {
        Kind::Text(value) => Ok(text(value)),
        Kind::Number(number) => Ok(Operand::Number(*number)),
        Kind::Date(days) => Ok(Operand::Day(*days)),
        Kind::Backquoted(key) => Ok(Operand::Field(Field::Key(key.clone()))),
        Kind::Word if token.is_word("true") => Ok(Operand::Bool(true)),
        Kind::Word if token.is_word("false") => Ok(Operand::Bool(false)),
        Kind::Word if token.is_word("null") => Err(tokens.error_at_column(
            token.column,
            format!("expected a value after `{name}`, found `null`: there is no null; write `<field> missing` instead"),
        )),
        Kind::Word if is_constant_word(token.text) => match relative_days(token.text) {
            Some(days) => Ok(Operand::Relative(days)),
            None => Err(tokens.expected(
                Some(&token),
                "a relative date like now, now-30d or now+2w (a whole number of days d or weeks w)",
            )),
        },
        Kind::Word => Ok(Operand::Field(word_field(tokens, Some(&token))?)),
        Kind::Comma => Err(tokens.expected(Some(&token), &format!("a value after `{name}` ({VALUES})"))),
    }
}

fn text(value: &str) -> Operand {
    Operand::Text {
        raw: value.to_string(),
        folded: value.to_lowercase(),
    }
}

/// Whether a word is a value rather than a field: `true`, `false`, `null`, `now` or `now` with an offset.
fn is_constant_word(word: &str) -> bool {
    let lower = |prefix: &str| {
        word.get(..prefix.len())
            .is_some_and(|start| start.eq_ignore_ascii_case(prefix))
    };
    ["true", "false", "null", "now"]
        .iter()
        .any(|constant| word.eq_ignore_ascii_case(constant))
        || lower("now-")
        || lower("now+")
}

/// The days `now`, `now-30d` or `now+2w` lies from today, or `None` when the word is not such a date.
fn relative_days(word: &str) -> Option<i64> {
    if word.eq_ignore_ascii_case("now") {
        return Some(0);
    }
    let rest = word.get(3..)?;
    let sign = match rest.as_bytes().first()? {
        b'-' => -1,
        b'+' => 1,
        _ => return None,
    };
    let amount = rest.get(1..rest.len().checked_sub(1)?)?;
    let unit = match rest.as_bytes().last()? {
        b'd' | b'D' => 1,
        b'w' | b'W' => 7,
        _ => return None,
    };
    // Six digits reach 19,000 years: far past any real date, and no overflow.
    if amount.is_empty() || amount.len() > 6 || !amount.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    amount.parse::<i64>().ok().map(|n| sign * n * unit)
}
