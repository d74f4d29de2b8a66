//! Reads a query, clause by clause, into a [`Query`].
//!
//! The parser takes the text a line at a time and pulls tokens from the lexer as it needs them, so the first error
//! in reading order is the one reported. It never recurses (a `where` line is a flat list of conditions joined by
//! `and` and `or`), and the limits on size, clauses, conditions and columns are checked as it goes, so a hostile
//! query is refused early with a message rather than costing time. Every error says what was expected where.

use super::condition::{alternatives, condition, field};
use super::lexer::{Kind, Token, Tokens};
use super::{
    Condition, DEFAULT_LIMIT, Field, MAX_CLAUSES, MAX_COLUMNS, MAX_LIMIT, MAX_QUERY_BYTES, Query, QueryError, SortKey,
};

const CLAUSES: &str = "from, where, sort, columns, group by, limit";

/// Reads a whole query.
pub(super) fn parse_query(dsl: &str) -> Result<Query, QueryError> {
    if dsl.len() > MAX_QUERY_BYTES {
        return Err(QueryError {
            line: 1,
            column: 1,
            message: format!(
                "expected a query of at most {MAX_QUERY_BYTES} bytes, found {} bytes",
                dsl.len()
            ),
        });
    }
    let mut query = Query {
        folder: None,
        filters: Vec::new(),
        sort: Vec::new(),
        columns: Vec::new(),
        group_by: None,
        limit: DEFAULT_LIMIT,
    };
    // The line each once-only clause was first seen on, for the message when it comes again.
    let mut seen = Seen::default();
    let mut clauses = 0;
    for (index, line) in dsl.split('\n').enumerate() {
        let line = line.strip_suffix('\r').unwrap_or(line);
        let trimmed = line.trim_start();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let line_number = index + 1;
        let mut tokens = Tokens::new(line, line_number);
        clauses += 1;
        if clauses > MAX_CLAUSES {
            let column = line.chars().count() - trimmed.chars().count() + 1;
            return Err(tokens.error_at_column(column, format!("expected at most {MAX_CLAUSES} clauses in a query")));
        }
        clause(&mut query, &mut seen, &mut tokens, clauses == 1)?;
    }
    if query.columns.is_empty() {
        query.columns = vec![Field::Path, Field::Title, Field::Modified];
    }
    Ok(query)
}

/// Reads one condition, alone on a line (the search tool's inline filter).
pub(super) fn parse_condition(text: &str) -> Result<Condition, QueryError> {
    if text.len() > MAX_QUERY_BYTES {
        return Err(QueryError {
            line: 1,
            column: 1,
            message: format!(
                "expected a condition of at most {MAX_QUERY_BYTES} bytes, found {} bytes",
                text.len()
            ),
        });
    }
    let mut tokens = Tokens::new(text, 1);
    let parsed = condition(&mut tokens, "at the start of the condition")?;
    match tokens.next()? {
        None => Ok(parsed),
        token => Err(tokens.expected(
            token.as_ref(),
            "nothing after the condition (a filter holds one condition)",
        )),
    }
}

/// Reads the conditions of one `where` line (without the keyword): alternatives joined by `or`,
/// each a list of conditions joined by `and`.
pub(super) fn parse_where(text: &str) -> Result<Vec<Vec<Condition>>, QueryError> {
    if text.len() > MAX_QUERY_BYTES {
        return Err(QueryError {
            line: 1,
            column: 1,
            message: format!(
                "expected conditions of at most {MAX_QUERY_BYTES} bytes, found {} bytes",
                text.len()
            ),
        });
    }
    let mut tokens = Tokens::new(text, 1);
    if text.contains('\n') {
        return Err(tokens.error_at_column(1, "expected the conditions on one line"));
    }
    alternatives(&mut tokens)
}

/// The line each once-only clause was first seen on, for the message when it comes again.
#[derive(Default)]
struct Seen {
    from: Option<usize>,
    columns: Option<usize>,
    group_by: Option<usize>,
    limit: Option<usize>,
}

/// Reads one clause line into the query.
fn clause(query: &mut Query, seen: &mut Seen, tokens: &mut Tokens<'_>, first: bool) -> Result<(), QueryError> {
    let keyword = match tokens.next()? {
        Some(token) if token.kind == Kind::Word => token,
        other => return Err(tokens.expected(other.as_ref(), &format!("a clause ({CLAUSES})"))),
    };
    if keyword.is_word("from") {
        if !first || seen.from.is_some() {
            return Err(tokens.error_at_column(
                keyword.column,
                "expected `from` only as the first clause of the query, and only once",
            ));
        }
        seen.from = Some(tokens.line_number());
        return from(query, tokens);
    }
    if keyword.is_word("where") {
        query.filters.push(alternatives(tokens)?);
        return Ok(());
    }
    if keyword.is_word("sort") {
        query.sort.push(sort(tokens)?);
        return Ok(());
    }
    if keyword.is_word("columns") {
        once(&mut seen.columns, &keyword, "columns", tokens)?;
        query.columns = columns(tokens)?;
        return Ok(());
    }
    if keyword.is_word("group") {
        once(&mut seen.group_by, &keyword, "group by", tokens)?;
        if !tokens.take_word("by")? {
            let token = tokens.next()?;
            return Err(tokens.expected(token.as_ref(), "`by` after `group`"));
        }
        query.group_by = Some(field(tokens, "after `group by`")?);
        return tokens.end("the `group by` field");
    }
    if keyword.is_word("limit") {
        once(&mut seen.limit, &keyword, "limit", tokens)?;
        query.limit = limit(tokens)?;
        return tokens.end("the limit");
    }
    Err(tokens.expected(Some(&keyword), &format!("a clause ({CLAUSES})")))
}

/// Records a once-only clause, or refuses it when `seen` says it came before.
fn once(seen: &mut Option<usize>, keyword: &Token<'_>, name: &str, tokens: &Tokens<'_>) -> Result<(), QueryError> {
    if let Some(earlier) = *seen {
        return Err(tokens.error_at_column(
            keyword.column,
            format!("expected at most one `{name}` clause, found a second (the first is on line {earlier})"),
        ));
    }
    *seen = Some(tokens.line_number());
    Ok(())
}

/// Reads the rest of `from notes [in "folder"]`.
fn from(query: &mut Query, tokens: &mut Tokens<'_>) -> Result<(), QueryError> {
    let source = tokens.next()?;
    if !source.as_ref().is_some_and(|token| token.is_word("notes")) {
        return Err(tokens.expected(source.as_ref(), "`notes` after `from` (the only source is notes)"));
    }
    if tokens.take_word("in")? {
        let folder = tokens.next()?;
        let Some(Kind::Text(folder)) = folder.as_ref().map(|token| &token.kind) else {
            return Err(tokens.expected(folder.as_ref(), "a quoted folder after `in`, like in \"Projects\""));
        };
        // Paths in the vault neither start nor end with `/`.
        query.folder = Some(folder.trim_matches('/').to_string());
    }
    tokens.end("`from notes`")
}

/// Reads the rest of `sort <field> [asc|desc]`.
fn sort(tokens: &mut Tokens<'_>) -> Result<SortKey, QueryError> {
    let field = field(tokens, "after `sort`")?;
    let descending = tokens.take_word("desc")?;
    if !descending {
        tokens.take_word("asc")?;
    }
    match tokens.next()? {
        None => Ok(SortKey { field, descending }),
        token => {
            let what = format!(
                "asc, desc or the end of the line after the sort field `{}` (give each further sort key its own \
                 `sort` line)",
                field.name()
            );
            Err(tokens.expected(token.as_ref(), &what))
        }
    }
}

/// Reads the rest of `columns a, b, c`.
fn columns(tokens: &mut Tokens<'_>) -> Result<Vec<Field>, QueryError> {
    let mut columns = Vec::new();
    let mut after = "after `columns`".to_string();
    loop {
        let column = tokens.next_column()?;
        let field = field(tokens, &after)?;
        if columns.len() == MAX_COLUMNS {
            return Err(tokens.error_at_column(column, format!("expected at most {MAX_COLUMNS} columns")));
        }
        after = format!("after the `,` that follows the column `{}`", field.name());
        let what = format!("`,` or the end of the line after the column `{}`", field.name());
        columns.push(field);
        let token = tokens.next()?;
        match token.as_ref().map(|token| &token.kind) {
            None => return Ok(columns),
            Some(Kind::Comma) => continue,
            Some(_) => return Err(tokens.expected(token.as_ref(), &what)),
        }
    }
}

/// Reads the number of `limit N`.
fn limit(tokens: &mut Tokens<'_>) -> Result<usize, QueryError> {
    let token = tokens.next()?;
    match token.as_ref().map(|token| &token.kind) {
        Some(Kind::Number(n)) if n.fract() == 0.0 && (1.0..=MAX_LIMIT as f64).contains(n) => Ok(*n as usize),
        _ => {
            let what = format!("a whole number from 1 to {MAX_LIMIT} after `limit`");
            Err(tokens.expected(token.as_ref(), &what))
        }
    }
}

#[cfg(test)]
mod tests;
