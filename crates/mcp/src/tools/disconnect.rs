//! `disconnect`: removes a connection the caller made.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::args::ConnectionId;
use super::graph::{WriteOutput, write};
use super::{Need, ToolContext, ToolDef, ToolError, ToolOutput};
use crate::auth::Category;
use crate::journal::graph::gate::GraphChange;

pub const DEF: ToolDef = ToolDef {
    name: "disconnect",
    title: "remove a connection",
    description: "Remove a connection you made, with every note on it. A connection someone else made is theirs: the \
                  call answers forbidden, and you add your view with write_connection_note instead.",
    needs: Need::Write(Category::Graph),
    read_only: false,
    destructive: true,
    idempotent: false,
    input: crate::schema::of::<Args>,
    output: crate::schema::of::<WriteOutput>,
    handler: handler!(write),
    asks: None,
};

/// Arguments of disconnect.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The connection's id (from find_connections or connect).
    pub id: ConnectionId,
}

impl super::Touches for Args {
    fn touched(&self) -> String {
        self.id.to_string()
    }
}

pub async fn run(context: &ToolContext<'_>, args: Args, arguments: Value) -> Result<ToolOutput, ToolError> {
    write(
        context,
        arguments,
        GraphChange::Disconnect {
            id: args.id.into_string(),
        },
    )
    .await
}
