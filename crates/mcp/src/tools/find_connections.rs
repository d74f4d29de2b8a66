//! `find_connections`: the connections of one item, newest first, by type and direction.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::args::{ConnectionType, Cursor, ItemArg, Limit};
use super::graph::{ConnectionOut, ItemOut, load};
use super::{Need, ToolContext, ToolDef, ToolError, ToolOutput, nothing_matched};
use crate::auth::Category;
use crate::journal::graph::items::Items;

pub const DEF: ToolDef = ToolDef {
    name: "find_connections",
    title: "find an item's connections",
    description: "List the connections of one item (a note's path or id, an entity's or a facet's name, a reference \
                  from search, or an item key from another graph tool), newest first, optionally of one type or in one \
                  direction. Each connection shows both items, its type, who made it and every author's note.",
    needs: Need::Category(Category::Graph),
    read_only: true,
    destructive: false,
    idempotent: true,
    input: crate::schema::of::<Args>,
    output: crate::schema::of::<Output>,
    handler: handler!(read),
    asks: None,
};

/// Which way a connection runs from the item.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// Connections from the item to others.
    Out,
    /// Connections from others to the item.
    In,
    #[default]
    Both,
}

/// Arguments of find_connections.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    pub item: ItemArg,
    /// Only connections of this type.
    #[serde(rename = "type")]
    pub kind: Option<ConnectionType>,
    /// out (from the item), in (to the item) or both (the default).
    #[serde(default)]
    pub direction: Direction,
    /// How many connections, 1-100 (default 50).
    #[serde(default)]
    pub limit: Limit<50, 100>,
    /// The next_cursor of the previous page.
    pub cursor: Option<Cursor>,
}

/// What find_connections answers.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Output {
    pub item: ItemOut,
    pub connections: Vec<ConnectionOut>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

pub async fn run(context: &ToolContext<'_>, args: Args) -> Result<ToolOutput, ToolError> {
    let viewer = context.viewer();
    let mut items = Items::new(context.journal, &viewer);
    let item = context.item(&mut items, &args.item).await?;
    let limit = args.limit.get();
    let kind = args.kind.as_ref().map(ConnectionType::as_str);
    let request = format!("{}\n{kind:?}\n{:?}\n{limit}", item.key, args.direction);
    let offset = context.offset("find_connections", &request, args.cursor.as_ref())?;
    let graph = load(context).await?;
    let mut matching: Vec<_> = graph
        .connections()
        .filter(|c| match args.direction {
            Direction::Out => c.from == item.key,
            Direction::In => c.to == item.key,
            Direction::Both => c.from == item.key || c.to == item.key,
        })
        .filter(|c| kind.is_none() || c.kind.as_deref() == kind)
        .collect();
    matching.sort_by(|a, b| b.created_at.cmp(&a.created_at).then_with(|| a.id.cmp(&b.id)));
    let mut connections = Vec::new();
    let mut seen = 0;
    let mut more = false;
    for connection in matching {
        let Some(shown) = context.connection_out(&mut items, connection).await? else {
            continue;
        };
        seen += 1;
        if seen <= offset {
            continue;
        }
        if connections.len() == limit {
            more = true;
            break;
        }
        connections.push(shown);
    }
    let next_cursor = more.then(|| context.cursor("find_connections", &request, offset + limit));
    let empty = connections.is_empty();
    ToolOutput::of(
        &Output {
            item: context.item_out(&item),
            connections,
            next_cursor,
            note: empty.then(|| nothing_matched("connections")),
        },
        empty,
    )
}
