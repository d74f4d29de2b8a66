//! `note_delete`: a note, or every note of a folder the caller may change, moved to the journal's
//! trash (kept in the notes' history, from which the owner restores it). Never a hard unlink.

use schemars::JsonSchema;
use serde::Deserialize;

use super::args::ExpectedHash;
use super::note_change::{self, Output};
use super::{Need, ToolContext, ToolDef, ToolError, ToolOutput, check_len};
use crate::asking::Question;
use crate::auth::Category;
use crate::journal::notes::rules::MAX_PATH_BYTES;
use crate::journal::notes::write::{self, NoteChange};

pub const DEF: ToolDef = ToolDef {
    name: "note_delete",
    title: "delete a note",
    description: "Move a note, or every note in a folder (a path ending in /, or naming a folder), to the journal's \
                  trash, from which the owner can bring it back. Needs confirm: true. Notes you cannot change stay.",
    needs: Need::Write(Category::Notes),
    read_only: false,
    destructive: true,
    idempotent: false,
    input: crate::schema::of::<Args>,
    output: crate::schema::of::<Output>,
    handler: handler!(write),
    asks: Some(question),
};

/// Arguments of note_delete.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The note (Projects/old.md) or folder (Projects/old/) from the top of the notes folder.
    #[schemars(length(min = 1, max = 1024))]
    pub path: String,
    /// Must be true: a deletion is never made by accident. A client that can ask the person
    /// (2026-07-28 with elicitation) may leave it out, and the person is asked.
    pub confirm: Option<bool>,
    /// The note's hash as note_read answered it; a different current hash is a conflict.
    pub expected_hash: Option<ExpectedHash>,
}

impl super::Touches for Args {
    fn touched(&self) -> String {
        super::named_path(&self.path)
    }
}

/// A call without `confirm: true` asks the person, where the client can ask.
fn question(arguments: &serde_json::Value) -> Option<Question> {
    if arguments.get("confirm") == Some(&serde_json::Value::Bool(true)) {
        return None;
    }
    let path = arguments.get("path").and_then(serde_json::Value::as_str).unwrap_or("?");
    let path: String = path.chars().filter(|c| !c.is_control()).take(200).collect();
    Some(Question {
        key: "confirm",
        message: format!("Move \"{path}\" to the journal's trash? The owner can bring it back from there."),
    })
}

pub async fn run(context: &ToolContext<'_>, args: Args, raw: serde_json::Value) -> Result<ToolOutput, ToolError> {
    if args.confirm != Some(true) {
        return Err(ToolError::Invalid(
            "note_delete needs confirm: true; the note goes to the journal's trash, and the owner can bring it back"
                .into(),
        ));
    }
    check_len("path", &args.path, MAX_PATH_BYTES)?;
    let walls = context.journal.notes.walls().clone();
    let typed = args.path.clone();
    let (path, folder) = tokio::task::spawn_blocking(move || write::typed_target(&walls, &typed))
        .await?
        .map_err(|e| ToolError::Invalid(e.to_string()))?;
    note_change::apply(
        context,
        DEF.name,
        raw,
        path,
        NoteChange::Delete { folder },
        args.expected_hash,
    )
    .await
}
