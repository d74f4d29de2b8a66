//! `note_set_properties`: frontmatter keys set or removed, tags included.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value};

use super::args::NotePath;
use super::note_change::{self, Output};
use super::{Need, ToolContext, ToolDef, ToolError, ToolOutput};
use crate::auth::Category;
use crate::journal::notes::write::NoteChange;

pub const DEF: ToolDef = ToolDef {
    name: "note_set_properties",
    title: "set a note's properties",
    description: "Set frontmatter properties of a note (tags included): each key to its value, or removed when the \
                  value is null. Other keys and their lines stay as they are; access and agent_overrides cannot be changed.",
    needs: Need::Write(Category::Notes),
    read_only: false,
    destructive: true,
    idempotent: true,
    input: crate::schema::of::<Args>,
    output: crate::schema::of::<Output>,
    handler: handler!(write),
    asks: None,
};

/// Arguments of note_set_properties.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The note's path from the top of the notes folder.
    pub path: NotePath,
    /// Keys to set; a null value removes the key.
    pub properties: Map<String, Value>,
}

impl super::Touches for Args {
    fn touched(&self) -> String {
        self.path.to_string()
    }
}

pub async fn run(context: &ToolContext<'_>, args: Args, raw: serde_json::Value) -> Result<ToolOutput, ToolError> {
    if args.properties.is_empty() {
        return Err(ToolError::Invalid("properties is empty: give at least one key".into()));
    }
    let change = NoteChange::Write {
        body: None,
        patch: Some(args.properties),
    };
    note_change::apply(context, DEF.name, raw, args.path.into_string(), change, None).await
}
