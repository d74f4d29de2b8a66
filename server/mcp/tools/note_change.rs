//! What the note write tools share: applying one `notes::write::Change` for the calling connection
//! (off the async threads), bringing the catalog, index and note set up to date so that the next
//! read, list or search sees the change, and the one result shape every write answers with.

use schemars::JsonSchema;
use serde::Serialize;

use super::args::{ExpectedHash, NotePath};
use super::{ToolContext, ToolError, ToolOutput};
use crate::journal::notes::write::{self, Change, WriteError};

/// What a note write answers.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Output {
    /// "written": the change is in the note.
    pub status: String,
    /// The note's path from the top of the notes folder.
    pub path: String,
    /// SHA-256 of the note's file now (hex): the expected_hash of a next change.
    pub hash: String,
}

/// Applies `change` to the note at `path` as the calling connection, and answers the new hash.
pub async fn apply(
    context: &ToolContext<'_>,
    path: NotePath,
    change: Change,
    expected_hash: Option<ExpectedHash>,
) -> Result<ToolOutput, ToolError> {
    let reader = context.reader();
    let root = context.journal.notes.root().to_path_buf();
    let written = tokio::task::spawn_blocking(move || {
        write::apply(
            &root,
            &reader,
            path.as_str(),
            &change,
            expected_hash.as_ref().map(ExpectedHash::as_str),
        )
    })
    .await
    .map_err(|e| ToolError::Failed(e.to_string()))?
    .map_err(refusal)?;
    // The change is on disk (acknowledged from here on); the sync makes it visible to reads and
    // searches. A failed sync is retried by the upkeep and does not undo the write.
    if let Err(error) = context.journal.sync().await {
        tracing::warn!(%error, path = %written.path, "a written note is not in the catalog yet; the upkeep retries");
    }
    ToolOutput::of(
        &Output {
            status: "written".into(),
            path: written.path,
            hash: written.hash,
        },
        false,
    )
}

fn refusal(error: WriteError) -> ToolError {
    match error {
        WriteError::Io(detail) => ToolError::Failed(detail),
        WriteError::Edit(_) | WriteError::Refused(_) => ToolError::Invalid(error.to_string()),
        other => ToolError::Refused(other.to_string()),
    }
}
