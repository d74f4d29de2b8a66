//! `set_connection_type`: a connection's type, when it has none or the caller set it.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::args::{ConnectionId, ConnectionType};
use super::graph::{WriteOutput, write};
use super::{Need, ToolContext, ToolDef, ToolError, ToolOutput};
use crate::auth::Category;
use crate::journal::graph::gate::GraphChange;

pub const DEF: ToolDef = ToolDef {
    name: "set_connection_type",
    title: "set a connection's type",
    description: "Set the type of a connection that has none, or whose type you set. A type someone else set is theirs: \
                  the call answers forbidden, and you add your view with write_connection_note instead.",
    needs: Need::Write(Category::Graph),
    read_only: false,
    destructive: true,
    idempotent: true,
    input: crate::schema::of::<Args>,
    output: crate::schema::of::<WriteOutput>,
    handler: handler!(write),
    asks: None,
};

/// Arguments of set_connection_type.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The connection's id (from find_connections or connect).
    pub id: ConnectionId,
    /// 1-64 lowercase letters, digits, - or _ (supports, part-of).
    #[serde(rename = "type")]
    pub kind: ConnectionType,
}

impl super::Touches for Args {
    fn touched(&self) -> String {
        self.id.to_string()
    }
}

pub async fn run(context: &ToolContext<'_>, args: Args, arguments: Value) -> Result<ToolOutput, ToolError> {
    let change = GraphChange::SetType {
        id: args.id.into_string(),
        kind: Some(args.kind.into_string()),
    };
    write(context, arguments, change).await
}
