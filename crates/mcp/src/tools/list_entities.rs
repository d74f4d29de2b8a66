//! `list_entities`: people, places, projects and organisations, by facet.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::args::{FacetId, Limit};
use super::{Need, ToolContext, ToolDef, ToolError, ToolOutput, nothing_matched};
use crate::auth::Category;
use crate::journal::content;

pub const DEF: ToolDef = ToolDef {
    name: "list_entities",
    title: "list entities",
    description: "List the people, places, projects and organisations the journal knows, optionally in one facet, with references for get_entity.",
    needs: Need::Category(Category::Entities),
    read_only: true,
    destructive: false,
    idempotent: true,
    input: crate::schema::of::<Args>,
    output: crate::schema::of::<Output>,
    handler: handler!(read),
    asks: None,
};

/// Arguments of list_entities.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// How many entities, 1-100 (default 100).
    #[serde(default)]
    pub limit: Limit<100, 100>,
    /// Only this facet (an id from list_facets).
    pub facet: Option<FacetId>,
}

/// What list_entities answers.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Output {
    pub entities: Vec<EntityView>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// One entity in a listing.
#[derive(Debug, Serialize, JsonSchema)]
pub struct EntityView {
    pub name: String,
    pub reference: String,
}

pub async fn run(context: &ToolContext<'_>, args: Args) -> Result<ToolOutput, ToolError> {
    let limit = args.limit.get();
    let scope = context.scope(args.facet.as_ref())?;
    let rows = content::list_entities(context.journal, &scope, limit).await?;
    let entities: Vec<EntityView> = rows
        .into_iter()
        .map(|row| EntityView {
            reference: context.reference("entity", &row.path),
            name: row.title,
        })
        .collect();
    let empty = entities.is_empty();
    let note = empty.then(|| nothing_matched("entities"));
    ToolOutput::of(&Output { entities, note }, empty)
}
