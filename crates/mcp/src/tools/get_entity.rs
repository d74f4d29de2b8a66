//! `get_entity`: one entity, with descriptions only from the facets the grant reaches.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::fetch::reachable_item;
use super::{Need, ToolContext, ToolDef, ToolError, ToolOutput};
use crate::auth::Category;
use crate::journal::content;

pub const DEF: ToolDef = ToolDef {
    name: "get_entity",
    title: "read an entity",
    description: "Read one entity (name, type, other names, what it is in each facet, when last seen) by its reference.",
    needs: Need::Category(Category::Entities),
    read_only: true,
    destructive: false,
    idempotent: true,
    input: crate::schema::of::<Args>,
    output: crate::schema::of::<Output>,
    handler: handler!(read),
    asks: None,
};

/// Arguments of get_entity.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// An entity reference from search or list_entities.
    pub reference: String,
}

/// What get_entity answers.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Output {
    pub name: String,
    /// person, place, project or organization.
    #[serde(rename = "type")]
    pub kind: String,
    pub aka: Vec<String>,
    /// What the entity is in each facet, by facet name.
    pub descriptions: BTreeMap<String, String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_seen: Option<String>,
}

pub async fn run(context: &ToolContext<'_>, args: Args) -> Result<ToolOutput, ToolError> {
    let (_, path) = context.open_reference(&args.reference, &["entity"])?;
    reachable_item(context, Category::Entities, "entity", &path).await?;
    let entity = content::read_entity(context.journal, &path)?;
    let scope = context.connection.grant.scope(&context.facets);
    let descriptions = entity
        .facets
        .into_iter()
        .filter(|(facet, _)| scope.allows_facet(facet))
        .collect();
    let output = Output {
        name: entity.name,
        kind: entity.kind.as_str().into(),
        aka: entity.aka,
        descriptions,
        last_seen: entity.last_seen,
    };
    ToolOutput::of(&output, false)
}
