//! `connect`: a new connection between two items, as the caller.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::args::{ConnectionType, ItemArg};
use super::graph::{WriteOutput, write};
use super::{Need, ToolContext, ToolDef, ToolError, ToolOutput};
use crate::auth::Category;
use crate::journal::graph::gate::GraphChange;
use crate::journal::graph::items::Items;

pub const DEF: ToolDef = ToolDef {
    name: "connect",
    title: "connect two items",
    description: "Connect two items of the journal (notes by path or id, entities and facets by name, transcript \
                  segments by their search reference), optionally with a type such as supports or mentions (see \
                  list_types). Connecting the same two items with the same type again answers the existing connection. \
                  Add your reasons with write_connection_note.",
    needs: Need::Write(Category::Graph),
    read_only: false,
    destructive: false,
    idempotent: true,
    input: crate::schema::of::<Args>,
    output: crate::schema::of::<WriteOutput>,
    handler: handler!(write),
    asks: None,
};

/// Arguments of connect.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    pub from: ItemArg,
    pub to: ItemArg,
    /// 1-64 lowercase letters, digits, - or _ (supports, part-of).
    #[serde(rename = "type")]
    pub kind: Option<ConnectionType>,
}

impl super::Touches for Args {
    fn touched(&self) -> String {
        format!("{} → {}", self.from, self.to)
    }
}

pub async fn run(context: &ToolContext<'_>, args: Args, arguments: Value) -> Result<ToolOutput, ToolError> {
    let viewer = context.viewer();
    let mut items = Items::new(context.journal, &viewer);
    let from = context.item(&mut items, &args.from).await?;
    let to = context.item(&mut items, &args.to).await?;
    let change = GraphChange::Connect {
        from: from.key,
        to: to.key,
        kind: args.kind.map(ConnectionType::into_string),
    };
    write(context, arguments, change).await
}
