//! `base_query`: the query language over notes' frontmatter (grammar in docs/mcp.md).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Need, ToolContext, ToolDef, ToolError, ToolOutput, check_len};
use crate::auth::Category;
use crate::journal::notes::{self, query};

pub const DEF: ToolDef = ToolDef {
    name: "base_query",
    title: "query notes",
    description: "Query the owner's notes by their frontmatter, one clause a line: `from notes in \"Projects\"`, \
                  `where status is \"active\"` (ops: is, is not, contains, exists, missing, gt, lt, under; `or` on one \
                  line; several where lines must all hold), `sort due asc`, `columns __title, status, due`, `group by \
                  status`, `limit 50` (at most 1000). Fields: frontmatter keys and __title, __path, __folder, \
                  __modified, __tags. Values: \"text\", numbers, true/false, 2026-11-30, now-30d, or another field. \
                  A mistake in the query comes back in `error` with its line and column.",
    needs: Need::Category(Category::Notes),
    read_only: true,
    destructive: false,
    idempotent: true,
    input: crate::schema::of::<Args>,
    output: crate::schema::of::<Output>,
    handler: handler!(read),
    asks: None,
};

/// Arguments of base_query.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The query, one clause a line, up to 8 KiB.
    pub dsl: String,
}

/// What base_query answers: the rows, or where the query went wrong.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Output {
    pub columns: Vec<String>,
    /// One array of values a note, in the order of `columns` (empty when grouped).
    pub rows: Vec<Vec<serde_json::Value>>,
    /// With `group by`: the groups in order of their key, each with its rows.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub groups: Option<Vec<query::Group>>,
    /// How many notes matched, before the limit.
    pub total: usize,
    /// True when more notes matched than the limit let through.
    pub truncated: bool,
    /// What is wrong with the query, with its line and column; nothing else is answered then.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<query::QueryError>,
}

pub async fn run(context: &ToolContext<'_>, args: Args) -> Result<ToolOutput, ToolError> {
    check_len("dsl", &args.dsl, 8 * 1024)?;
    let parsed = match query::parse(&args.dsl) {
        Ok(parsed) => parsed,
        Err(error) => {
            let output = Output {
                columns: Vec::new(),
                rows: Vec::new(),
                groups: None,
                total: 0,
                truncated: false,
                error: Some(error),
            };
            return ToolOutput::of(&output, true);
        }
    };
    let reader = context.reader();
    let set = context.journal.notes.set();
    let now_ms = crate::clock::unix_now() * 1000;
    // A scan of every note: off the async workers.
    let result = tokio::task::spawn_blocking(move || notes::ops::run_query(&set, &reader, &parsed, now_ms)).await?;
    let empty = result.total == 0;
    ToolOutput::of(
        &Output {
            columns: result.columns,
            rows: result.rows,
            groups: result.groups,
            total: result.total,
            truncated: result.truncated,
            error: None,
        },
        empty,
    )
}
