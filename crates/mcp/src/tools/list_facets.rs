//! `list_facets`: the facets this connection's grant reaches; descriptions only with the `facets`
//! category.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::args::Limit;
use super::{Need, ToolContext, ToolDef, ToolError, ToolOutput, nothing_matched};
use crate::auth::Category;

pub const DEF: ToolDef = ToolDef {
    name: "list_facets",
    title: "list facets",
    description: "List the facets (areas of the owner's life or work) you can read, with the ids that other tools' facet argument takes.",
    needs: Need::Nothing,
    read_only: true,
    destructive: false,
    idempotent: true,
    input: crate::schema::of::<Args>,
    output: crate::schema::of::<Output>,
    handler: handler!(read),
    asks: None,
};

/// Arguments of list_facets.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// How many facets, 1-100 (default 100).
    #[serde(default)]
    pub limit: Limit<100, 100>,
}

/// What list_facets answers.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Output {
    pub facets: Vec<FacetView>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// One facet.
#[derive(Debug, Serialize, JsonSchema)]
pub struct FacetView {
    pub id: String,
    pub name: String,
    pub title: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

pub async fn run(context: &ToolContext<'_>, args: Args) -> Result<ToolOutput, ToolError> {
    let limit = args.limit.get();
    let with_descriptions = context.connection.grant.has(Category::Facets);
    let facets: Vec<FacetView> = context
        .connection
        .grant
        .reachable(&context.facets)
        .into_iter()
        .take(limit)
        .map(|f| FacetView {
            id: f.id.clone(),
            name: f.name.clone(),
            title: f.display_title().to_string(),
            description: with_descriptions.then(|| f.description.clone()),
        })
        .collect();
    let empty = facets.is_empty();
    let note = empty.then(|| nothing_matched("facets"));
    ToolOutput::of(&Output { facets, note }, empty)
}
