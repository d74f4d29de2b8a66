//! `note_write`: a note's body replaced and/or frontmatter keys patched.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value};

use super::args::{ExpectedHash, NotePath};
use super::note_change::{self, Output};
use super::{Need, ToolContext, ToolDef, ToolError, ToolOutput};
use crate::auth::Category;
use crate::journal::notes::write::NoteChange;

pub const DEF: ToolDef = ToolDef {
    name: "note_write",
    title: "rewrite a note",
    description: "Replace a note's body and/or patch its frontmatter (frontmatter_patch: keys to set; null removes a \
                  key; other keys and their lines stay as they are). Give at least one. Pass the hash from note_read \
                  as expected_hash so that a change made since is not overwritten.",
    needs: Need::Write(Category::Notes),
    read_only: false,
    destructive: true,
    idempotent: true,
    input: crate::schema::of::<Args>,
    output: crate::schema::of::<Output>,
    handler: handler!(write),
    asks: None,
};

/// Arguments of note_write.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The note's path from the top of the notes folder.
    pub path: NotePath,
    /// The new body (everything after the frontmatter).
    pub body: Option<String>,
    /// Frontmatter keys to set; a null value removes the key. access and agent_overrides cannot be changed.
    pub frontmatter_patch: Option<Map<String, Value>>,
    /// The note's hash as note_read or the last write answered it; a different current hash is a conflict.
    pub expected_hash: Option<ExpectedHash>,
}

impl super::Touches for Args {
    fn touched(&self) -> String {
        self.path.to_string()
    }
}

pub async fn run(context: &ToolContext<'_>, args: Args, raw: serde_json::Value) -> Result<ToolOutput, ToolError> {
    if args.body.is_none() && args.frontmatter_patch.is_none() {
        return Err(ToolError::Invalid("give body, frontmatter_patch or both".into()));
    }
    let change = NoteChange::Write {
        body: args.body,
        patch: args.frontmatter_patch,
    };
    note_change::apply(
        context,
        DEF.name,
        raw,
        args.path.into_string(),
        change,
        args.expected_hash,
    )
    .await
}
