//! `note_append`: text added at the end of a note's body.

use schemars::JsonSchema;
use serde::Deserialize;

use super::args::NotePath;
use super::note_change::{self, Output};
use super::{Need, ToolContext, ToolDef, ToolError, ToolOutput};
use crate::auth::Category;
use crate::journal::notes::write::NoteChange;

pub const DEF: ToolDef = ToolDef {
    name: "note_append",
    title: "append to a note",
    description: "Add text at the end of a note's body, on a line of its own unless ensure_newline is false.",
    needs: Need::Write(Category::Notes),
    read_only: false,
    destructive: false,
    idempotent: false,
    input: crate::schema::of::<Args>,
    output: crate::schema::of::<Output>,
    handler: handler!(write),
    asks: None,
};

fn yes() -> bool {
    true
}

/// Arguments of note_append.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The note's path from the top of the notes folder.
    pub path: NotePath,
    /// The text to add.
    pub text: String,
    /// Start the text on a new line when the body does not end with one (default true).
    #[serde(default = "yes")]
    pub ensure_newline: bool,
}

impl super::Touches for Args {
    fn touched(&self) -> String {
        self.path.to_string()
    }
}

pub async fn run(context: &ToolContext<'_>, args: Args, raw: serde_json::Value) -> Result<ToolOutput, ToolError> {
    let change = NoteChange::Append {
        text: args.text,
        ensure_newline: args.ensure_newline,
    };
    note_change::apply(context, DEF.name, raw, args.path.into_string(), change, None).await
}
