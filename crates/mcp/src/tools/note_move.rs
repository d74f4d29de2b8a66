//! `note_move`: a note or a folder to a new path, keeping each note's bytes (its id with them) and
//! writing again the links in other notes that named what moved (`notes::moves`).

use schemars::JsonSchema;
use serde::Deserialize;

use super::note_change::{self, Output};
use super::{Need, ToolContext, ToolDef, ToolError, ToolOutput, check_len};
use crate::auth::Category;
use crate::journal::notes::rules::MAX_PATH_BYTES;
use crate::journal::notes::write::{self, NoteChange};

pub const DEF: ToolDef = ToolDef {
    name: "note_move",
    title: "move or rename a note",
    description: "Move or rename a note, or a folder (a path ending in /, or naming a folder) with the notes in it \
                  you may change. Never replaces anything at the new path. Links to what moved ([[wikilinks]] and \
                  relative markdown links) in notes you may change are updated; the result lists the moved notes \
                  and the notes whose links changed. to ending in / moves a note into that folder.",
    needs: Need::Write(Category::Notes),
    read_only: false,
    destructive: false,
    idempotent: false,
    input: crate::schema::of::<Args>,
    output: crate::schema::of::<Output>,
    handler: handler!(write),
    asks: None,
};

/// Arguments of note_move.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The note (Inbox/idea.md) or folder (Projects/old/) to move, from the top of the notes folder.
    #[schemars(length(min = 1, max = 1024))]
    pub from: String,
    /// Its new path: a note's (Projects/idea.md), a folder to put the note in (Projects/), or for a
    /// folder the folder's new path (Archive/old).
    #[schemars(length(min = 1, max = 1024))]
    pub to: String,
}

impl super::Touches for Args {
    fn touched(&self) -> String {
        format!("{} → {}", super::named_path(&self.from), super::named_path(&self.to))
    }
}

pub async fn run(context: &ToolContext<'_>, args: Args, raw: serde_json::Value) -> Result<ToolOutput, ToolError> {
    check_len("from", &args.from, MAX_PATH_BYTES)?;
    check_len("to", &args.to, MAX_PATH_BYTES)?;
    let walls = context.journal.notes.walls().clone();
    let (from, to, folder) = tokio::task::spawn_blocking(move || write::move_target(&walls, &args.from, &args.to))
        .await?
        .map_err(|e| ToolError::Invalid(e.to_string()))?;
    note_change::apply(context, DEF.name, raw, from, NoteChange::Move { to, folder }, None).await
}
