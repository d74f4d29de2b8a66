//! `write_connection_note`: the caller's own note on a connection; empty text removes it.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::args::ConnectionId;
use super::graph::{WriteOutput, write};
use super::{Need, ToolContext, ToolDef, ToolError, ToolOutput, check_len};
use crate::auth::Category;
use crate::journal::graph::gate::GraphChange;

pub const DEF: ToolDef = ToolDef {
    name: "write_connection_note",
    title: "write your note on a connection",
    description: "Write your own note on a connection (why it holds, what you make of it), replacing your earlier one; \
                  empty text removes yours. Every author keeps their own note: other authors' notes are never changed.",
    needs: Need::Write(Category::Graph),
    read_only: false,
    destructive: true,
    idempotent: true,
    input: crate::schema::of::<Args>,
    output: crate::schema::of::<WriteOutput>,
    handler: handler!(write),
    asks: None,
};

/// Arguments of write_connection_note.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The connection's id (from find_connections or connect).
    pub id: ConnectionId,
    /// At most 4000 characters; empty removes your note.
    #[schemars(length(max = 16000))]
    pub text: String,
}

impl super::Touches for Args {
    fn touched(&self) -> String {
        self.id.to_string()
    }
}

pub async fn run(context: &ToolContext<'_>, args: Args, arguments: Value) -> Result<ToolOutput, ToolError> {
    check_len("text", &args.text, 16_000)?;
    let change = GraphChange::Note {
        id: args.id.into_string(),
        text: args.text,
    };
    write(context, arguments, change).await
}
