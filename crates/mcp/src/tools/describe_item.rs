//! `describe_item`: what an item is, its connections, and who wrote what about them.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::args::ItemArg;
use super::graph::{ConnectionOut, ItemOut, load};
use super::{Need, ToolContext, ToolDef, ToolError, ToolOutput};
use crate::auth::Category;
use crate::journal::graph::items::Items;

pub const DEF: ToolDef = ToolDef {
    name: "describe_item",
    title: "describe an item",
    description: "Describe one item of the journal (a note's path or id, an entity's or a facet's name, a reference from \
                  search): what it is, its connections (newest first, up to 100) and, for each author, how many of them \
                  they made and how many notes they wrote on them.",
    needs: Need::Category(Category::Graph),
    read_only: true,
    destructive: false,
    idempotent: true,
    input: crate::schema::of::<Args>,
    output: crate::schema::of::<Output>,
    handler: handler!(read),
    asks: None,
};

/// The connections one answer shows; find_connections pages through more.
const SHOWN: usize = 100;

/// Arguments of describe_item.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    pub item: ItemArg,
}

/// What describe_item answers.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Output {
    pub item: ItemOut,
    /// How many connections it has that you can see.
    pub connection_count: usize,
    /// Up to 100, newest first (find_connections pages through all).
    pub connections: Vec<ConnectionOut>,
    /// Who made its connections and who wrote notes on them.
    pub authors: Vec<AuthorSummary>,
}

/// One author's part in an item's connections.
#[derive(Debug, Default, Serialize, JsonSchema)]
pub struct AuthorSummary {
    /// owner, or agent:<name>.
    pub author: String,
    pub connections_made: usize,
    pub notes_written: usize,
}

pub async fn run(context: &ToolContext<'_>, args: Args) -> Result<ToolOutput, ToolError> {
    let viewer = context.viewer();
    let mut items = Items::new(context.journal, &viewer);
    let item = context.item(&mut items, &args.item).await?;
    let graph = load(context).await?;
    let mut touching: Vec<_> = graph.connections().filter(|c| c.touches(&item.key)).collect();
    touching.sort_by(|a, b| b.created_at.cmp(&a.created_at).then_with(|| a.id.cmp(&b.id)));
    let mut connections = Vec::new();
    let mut count = 0;
    let mut authors: BTreeMap<String, AuthorSummary> = BTreeMap::new();
    for connection in touching {
        let Some(shown) = context.connection_out(&mut items, connection).await? else {
            continue;
        };
        count += 1;
        authors.entry(shown.created_by.clone()).or_default().connections_made += 1;
        for note in &shown.notes {
            authors.entry(note.author.clone()).or_default().notes_written += 1;
        }
        if connections.len() < SHOWN {
            connections.push(shown);
        }
    }
    let authors = authors
        .into_iter()
        .map(|(author, summary)| AuthorSummary { author, ..summary })
        .collect();
    ToolOutput::of(
        &Output {
            item: context.item_out(&item),
            connection_count: count,
            connections,
            authors,
        },
        false,
    )
}
