//! `note_create`: a new note at a path where there is none; it never replaces anything.

use schemars::JsonSchema;
use serde::Deserialize;

use super::args::NotePath;
use super::note_change::{self, Output};
use super::{Need, ToolContext, ToolDef, ToolError, ToolOutput};
use crate::auth::Category;
use crate::journal::notes::write::NoteChange;

pub const DEF: ToolDef = ToolDef {
    name: "note_create",
    title: "create a note",
    description: "Create a new note at a path where there is none (it never replaces a note). content is the whole \
                  markdown text and may start with --- frontmatter ---. Answers the new note's hash.",
    needs: Need::Write(Category::Notes),
    read_only: false,
    destructive: false,
    idempotent: false,
    input: crate::schema::of::<Args>,
    output: crate::schema::of::<Output>,
    handler: handler!(write),
    asks: None,
};

/// Arguments of note_create.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// Where the note goes, from the top of the notes folder, e.g. Projects/alpha.md (.md may be left out).
    pub path: NotePath,
    /// The note's whole text: markdown, optionally starting with --- frontmatter ---.
    pub content: String,
}

impl super::Touches for Args {
    fn touched(&self) -> String {
        self.path.to_string()
    }
}

pub async fn run(context: &ToolContext<'_>, args: Args, raw: serde_json::Value) -> Result<ToolOutput, ToolError> {
    let change = NoteChange::Create { content: args.content };
    note_change::apply(context, DEF.name, raw, args.path.into_string(), change, None).await
}
