//! `base_query`: a small query language over the owner's markdown notes.
//!
//! An agent writes one clause a line and gets back a table: which notes match, in what order, and which of their
//! fields to show. The MCP tool hands the text to [`parse`] and runs the [`Query`] over the catalog's notes with
//! [`Query::run`]; the search tool's inline `[key:op value]` filter reads a single condition with
//! [`parse_condition`]. This module reads no files and knows nothing of MCP or of grants: the caller builds one
//! [`NoteFields`] per note it may show (without `agent_overrides`, which is never a field) and serializes the
//! [`QueryOutput`]. The full grammar, the meaning of each operator and worked examples are in docs/mcp.md.
//!
//! ```text
//! query     = { line "\n" } ;          blank lines and lines starting with "#" are ignored
//! clause    = "from" "notes" [ "in" string ]                    first, at most once
//!           | "where" condition { ( "and" | "or" ) condition }  lines AND together; "and" binds tighter
//!           | "sort" field [ "asc" | "desc" ]                   repeatable; the first is the primary key
//!           | "columns" field { "," field }                     at most once
//!           | "group" "by" field                                at most once
//!           | "limit" integer                                   1 to 1000, at most once (default 100)
//! condition = field ( "exists" | "missing" | operator value )
//! operator  = "is" | "is" "not" | "contains" | "gt" | "lt" | "under"
//! value     = string | number | "true" | "false" | date | relative-date | field
//! field     = identifier | "`" text "`" | "__title" | "__path" | "__folder" | "__modified" | "__tags"
//! ```
//!
//! The text is read by a lexer (tokens that keep their line and column) and a parser that handles one line at a
//! time without recursion: the grammar has no nesting, so hostile input costs linear time and cannot exhaust the
//! stack, and every error names the line and column where something else was expected. Evaluation borrows from the
//! notes and the query and allocates nothing per note on the `where` path, because `run` reads the whole catalog.
//! Deliberately absent: parentheses (separate `where` lines AND together), `null` (use `missing`), and anything
//! that reads a note's body.

mod compare;
mod condition;
mod eval;
mod lexer;
mod parser;
mod plan;
mod run;

#[cfg(test)]
mod tests;

use serde_json::{Map, Value};

pub use plan::{Catalog, ValueIndex, answered_by_indexes, passing, run_over};

/// The longest query text accepted, in bytes.
pub const MAX_QUERY_BYTES: usize = 8 * 1024;
/// The most clauses (lines that are neither blank nor comments) a query may hold.
pub const MAX_CLAUSES: usize = 64;
/// The most conditions one `where` line may join with `and` and `or`.
pub const MAX_CONDITIONS_PER_LINE: usize = 32;
/// The most fields a `columns` clause may name.
pub const MAX_COLUMNS: usize = 32;
/// The largest `limit`.
pub const MAX_LIMIT: usize = 1000;
/// The limit when the query names none.
pub const DEFAULT_LIMIT: usize = 100;

/// One note as the query sees it. The caller builds it from its catalog; `frontmatter` never holds
/// `agent_overrides`.
#[derive(Debug, Clone, Copy)]
pub struct NoteFields<'a> {
    /// The vault-relative path, `/`-separated, such as `Projects/alpha.md`.
    pub path: &'a str,
    /// The note's title (`__title`).
    pub title: &'a str,
    /// The last modification, in Unix milliseconds (`__modified`).
    pub modified_ms: i64,
    /// The note's tags (`__tags`).
    pub tags: &'a [String],
    /// The frontmatter as parsed from YAML.
    pub frontmatter: Frontmatter<'a>,
}

/// Where a note's frontmatter values are read from: its own map, or columns that the caller built
/// for the keys a query names (one vector a key, indexed by the note's row). A scan of 100,000 notes
/// through their maps is bound by memory (each map is its own allocations, and each lookup compares
/// keys on the heap); a column keeps the values one query reads side by side.
#[derive(Debug, Clone, Copy)]
pub enum Frontmatter<'a> {
    Map(&'a Map<String, Value>),
    Columns {
        /// (key, the values of that key by row); keys not among them are read from `map`.
        columns: &'a [(&'a str, &'a [Option<Value>])],
        row: usize,
        map: &'a Map<String, Value>,
    },
}

impl<'a> Frontmatter<'a> {
    /// The value of a key, `None` when the note lacks it.
    pub fn get(&self, key: &str) -> Option<&'a Value> {
        match *self {
            Frontmatter::Map(map) => map.get(key),
            Frontmatter::Columns { columns, row, map } => match columns.iter().find(|(name, _)| *name == key) {
                Some((_, values)) => values.get(row).and_then(Option::as_ref),
                None => map.get(key),
            },
        }
    }
}

/// Why a query could not be read: where, and what was expected there.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, schemars::JsonSchema, thiserror::Error)]
#[error("line {line}, column {column}: {message}")]
pub struct QueryError {
    /// The line, from 1.
    pub line: usize,
    /// The column, from 1, counted in characters.
    pub column: usize,
    /// What was expected and what was found instead.
    pub message: String,
}

/// What a query returns: a table, or a table split into groups.
#[derive(Debug, serde::Serialize, schemars::JsonSchema)]
pub struct QueryOutput {
    /// The column names, as the query wrote them (or `__path`, `__title`, `__modified`).
    pub columns: Vec<String>,
    /// One row per note, each value in the order of `columns`; empty when the query groups.
    pub rows: Vec<Vec<Value>>,
    /// The groups, ordered by key, when the query has `group by`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub groups: Option<Vec<Group>>,
    /// How many notes matched before the limit.
    pub total: usize,
    /// Whether the limit left some matching notes out.
    pub truncated: bool,
}

/// The notes that share one value of the `group by` field.
#[derive(Debug, serde::Serialize, schemars::JsonSchema)]
pub struct Group {
    /// The shared value; `null` for the notes that lack the field (that group comes last).
    pub key: Value,
    /// How many matching notes the group holds, including those the limit left out.
    pub count: usize,
    /// The group's rows that fit within the limit, which counts rows across all groups.
    pub rows: Vec<Vec<Value>>,
}

/// A parsed query, ready to run over any number of notes.
#[derive(Debug, Clone, PartialEq)]
pub struct Query {
    /// From `from notes in "..."`, without leading or trailing `/`.
    folder: Option<String>,
    /// The `where` lines, all of which must hold. Each line is a list of alternatives (joined by `or`), and each
    /// alternative a list of conditions that must all hold (joined by `and`).
    filters: Vec<Vec<Vec<Condition>>>,
    /// The sort keys, primary first.
    sort: Vec<SortKey>,
    /// The fields shown, in order.
    columns: Vec<Field>,
    group_by: Option<Field>,
    limit: usize,
}

/// One `<field> <operator> [value]` test.
#[derive(Debug, Clone, PartialEq)]
pub struct Condition {
    field: Field,
    op: Op,
    /// The value compared with; `None` exactly for `exists` and `missing`.
    operand: Option<Operand>,
}

/// A field of a note: a built-in one or a frontmatter key.
#[derive(Debug, Clone, PartialEq)]
enum Field {
    Title,
    Path,
    Folder,
    Modified,
    Tags,
    Key(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Is,
    IsNot,
    Contains,
    Exists,
    Missing,
    Gt,
    Lt,
    Under,
}

/// The right-hand side of a condition as the query wrote it.
#[derive(Debug, Clone, PartialEq)]
enum Operand {
    /// A quoted string, and its lowercase form computed once for case-insensitive comparisons.
    Text {
        raw: String,
        folded: String,
    },
    Number(f64),
    Bool(bool),
    /// A date, as days since 1970-01-01.
    Day(i64),
    /// `now` plus this many days, resolved when the query runs.
    Relative(i64),
    /// Another field of the same note.
    Field(Field),
}

#[derive(Debug, Clone, PartialEq)]
struct SortKey {
    field: Field,
    descending: bool,
}

impl Condition {
    /// The frontmatter keys the condition reads.
    pub fn keys(&self) -> Vec<&str> {
        let mut fields: Vec<&Field> = Vec::new();
        self.visit_fields(&mut |field| fields.push(field));
        key_names(fields)
    }

    fn visit_fields<'q>(&'q self, visit: &mut impl FnMut(&'q Field)) {
        visit(&self.field);
        if let Some(Operand::Field(field)) = &self.operand {
            visit(field);
        }
    }
}

/// The frontmatter keys among some fields, each once, in order.
fn key_names(fields: Vec<&Field>) -> Vec<&str> {
    let mut keys: Vec<&str> = Vec::new();
    for field in fields {
        if let Field::Key(key) = field
            && !keys.contains(&key.as_str())
        {
            keys.push(key);
        }
    }
    keys
}

impl Field {
    /// The built-in fields, by the names queries use.
    const BUILT_IN: [(&'static str, Field); 5] = [
        ("__title", Field::Title),
        ("__path", Field::Path),
        ("__folder", Field::Folder),
        ("__modified", Field::Modified),
        ("__tags", Field::Tags),
    ];

    /// The name a column of this field carries.
    fn name(&self) -> &str {
        match self {
            Field::Title => "__title",
            Field::Path => "__path",
            Field::Folder => "__folder",
            Field::Modified => "__modified",
            Field::Tags => "__tags",
            Field::Key(key) => key,
        }
    }
}

/// Reads a whole query.
pub fn parse(dsl: &str) -> Result<Query, QueryError> {
    parser::parse_query(dsl)
}

/// Reads one `<field> <operator> [value]` condition, such as `status is "done"` or `due lt now`.
pub fn parse_condition(text: &str) -> Result<Condition, QueryError> {
    parser::parse_condition(text)
}

/// Reads the conditions of a `where` line without its keyword (`status is "done" and due lt now or
/// priority gt 2`): alternatives joined by `or` (any may hold), each conditions joined by `and`
/// (all must hold), `and` binding tighter, as in a query.
pub fn parse_where(text: &str) -> Result<Vec<Vec<Condition>>, QueryError> {
    parser::parse_where(text)
}

impl Query {
    /// The frontmatter keys the query reads to choose and order notes (its `where`, `sort` and
    /// `group by`), each once: the columns worth building before a run.
    pub fn keys(&self) -> Vec<&str> {
        let mut fields: Vec<&Field> = Vec::new();
        for condition in self.filters.iter().flatten().flatten() {
            condition.visit_fields(&mut |field| fields.push(field));
        }
        fields.extend(self.sort.iter().map(|key| &key.field));
        fields.extend(self.group_by.iter());
        key_names(fields)
    }

    /// The folder from `from notes in "..."`, if the query names one.
    pub fn folder(&self) -> Option<&str> {
        self.folder.as_deref()
    }

    /// The most rows the query returns.
    pub fn limit(&self) -> usize {
        self.limit
    }

    /// Whether a note lies in the query's folder and passes every `where` line. Relative dates such as `now-30d`
    /// count from the UTC day of `now_ms`.
    pub fn matches(&self, note: &NoteFields<'_>, now_ms: i64) -> bool {
        self.folder
            .as_deref()
            .is_none_or(|folder| compare::path_under(note.path, folder))
            && self.filters.iter().all(|line| {
                line.iter()
                    .any(|alternative| alternative.iter().all(|condition| condition.matches(note, now_ms)))
            })
    }

    /// Runs the query over notes: keeps those that match, sorts, limits and groups them, and builds the rows.
    pub fn run<'a>(&self, notes: impl Iterator<Item = NoteFields<'a>>, now_ms: i64) -> QueryOutput {
        run::run(self, notes, now_ms)
    }
}

impl Condition {
    /// Whether a note passes this condition. Relative dates count from the UTC day of `now_ms`.
    pub fn matches(&self, note: &NoteFields<'_>, now_ms: i64) -> bool {
        eval::condition_holds(self, note, now_ms)
    }
}
