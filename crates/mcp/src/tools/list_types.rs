//! `list_types`: the connection types in use, with how many connections the caller sees of each.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::graph::load;
use super::{Need, ToolContext, ToolDef, ToolError, ToolOutput};
use crate::auth::Category;
use crate::journal::graph::items::Items;

pub const DEF: ToolDef = ToolDef {
    name: "list_types",
    title: "list connection types",
    description: "List the connection types in use (supports, mentions, ...) with how many connections of each you can \
                  see, so that a new connection reuses a type rather than inventing a synonym.",
    needs: Need::Category(Category::Graph),
    read_only: true,
    destructive: false,
    idempotent: true,
    input: crate::schema::of::<Args>,
    output: crate::schema::of::<Output>,
    handler: handler!(read),
    asks: None,
};

/// list_types takes no arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {}

/// What list_types answers.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Output {
    /// Most used first.
    pub types: Vec<TypeCount>,
    /// Connections without a type.
    pub untyped: usize,
}

/// One type and how many visible connections have it.
#[derive(Debug, Serialize, JsonSchema)]
pub struct TypeCount {
    #[serde(rename = "type")]
    pub kind: String,
    pub connections: usize,
}

pub async fn run(context: &ToolContext<'_>, _args: Args) -> Result<ToolOutput, ToolError> {
    let viewer = context.viewer();
    let mut items = Items::new(context.journal, &viewer);
    let graph = load(context).await?;
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    let mut untyped = 0;
    for connection in graph.connections() {
        if !items.reaches_both(&connection.from, &connection.to).await? {
            continue;
        }
        match &connection.kind {
            Some(kind) => *counts.entry(kind.clone()).or_default() += 1,
            None => untyped += 1,
        }
    }
    let mut types: Vec<TypeCount> = counts
        .into_iter()
        .map(|(kind, connections)| TypeCount { kind, connections })
        .collect();
    types.sort_by(|a, b| b.connections.cmp(&a.connections).then_with(|| a.kind.cmp(&b.kind)));
    let empty = types.is_empty() && untyped == 0;
    ToolOutput::of(&Output { types, untyped }, empty)
}
