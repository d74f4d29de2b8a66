//! What the note write tools share: one `notes::write::NoteChange` asked for by the calling connection,
//! made now (force mode) or staged as a proposal for the owner (propose mode) through the one gate
//! (`notes::changes`), and the one result shape every write answers with.

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

use super::args::ExpectedHash;
use super::{ToolContext, ToolError, ToolOutput};
use crate::auth::WriteMode;
use crate::journal::notes::changes::{self, ChangeError, Request};
use crate::journal::notes::history::ChangedBy;
use crate::journal::notes::write::{NoteChange, WriteError};
use crate::journal::proposals::ProposalError;

/// What a note write answers.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Output {
    /// "written": the change is in the note. "deleted": the note (or the folder's notes) went to the
    /// journal's trash. "moved": the note (or the folder's notes) is at its new path. "proposed":
    /// nothing changed yet; the owner reviews the change (my_proposals tells the outcome).
    pub status: String,
    /// The note's path from the top of the notes folder (for a move, its new path).
    pub path: String,
    /// SHA-256 of the note's file now (hex): the expected_hash of a next change. Absent when there
    /// is no note there (a proposed new note).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hash: Option<String>,
    /// The proposal's id, when proposed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub proposal_id: Option<i64>,
    /// The notes a deletion removed or a move moved (at their new paths); proposed, the ones it
    /// would.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// For a move: the other notes whose links to what moved were updated (proposed: would be).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub links_updated: Vec<String>,
    /// Why a change this connection may make at once was proposed instead.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why_proposed: Option<String>,
}

/// Why an AGENTS.md or a skill was proposed rather than written.
const INSTRUCTIONS_WAIT: &str =
    "AGENTS.md and skills instruct other agents, so a change to them always waits for the owner's review";

/// Asks for `change` to the note at `path` as the calling connection, by its write mode.
/// `arguments` are the call's arguments as sent, kept with a proposal.
pub async fn apply(
    context: &ToolContext<'_>,
    tool: &str,
    arguments: Value,
    path: String,
    change: NoteChange,
    expected_hash: Option<ExpectedHash>,
) -> Result<ToolOutput, ToolError> {
    let connection = context.connection;
    let request = Request {
        by: ChangedBy::agent(&connection.id, &connection.label),
        reader: context.reader(),
        tool: tool.to_string(),
        arguments,
        path,
        change,
        expected_hash: expected_hash.map(|h| h.as_str().to_string()),
    };
    // Which notes a result names: every note of a deletion or a move; a single write names none.
    let (many, status, path) = match &request.change {
        NoteChange::Delete { .. } => (true, "deleted", request.path.clone()),
        NoteChange::Move { to, .. } => (true, "moved", to.clone()),
        _ => (false, "written", request.path.clone()),
    };
    let proposed = |proposed: changes::Proposed, why: Option<&str>| Output {
        status: "proposed".into(),
        path: path.clone(),
        // A move's combined hash of every note it touches means nothing to the agent.
        hash: if matches!(request.change, NoteChange::Move { .. }) {
            None
        } else {
            proposed.base_hash
        },
        proposal_id: Some(proposed.id),
        notes: if many { proposed.notes } else { Vec::new() },
        links_updated: proposed.links,
        why_proposed: why.map(str::to_string),
    };
    let output = match connection.grant.write_mode {
        WriteMode::Force => match changes::apply(context.journal, &request).await {
            Ok(made) => {
                let (notes, links_updated) = made.summary(&request.change);
                Output {
                    status: status.into(),
                    path: path.clone(),
                    hash: made.hash,
                    proposal_id: None,
                    notes: if many { notes } else { Vec::new() },
                    links_updated,
                    why_proposed: None,
                }
            }
            // Instructions for other agents wait for the owner even from a force-mode agent.
            Err(ChangeError::Instructions) => proposed(
                changes::propose(context.journal, &request).await.map_err(refusal)?,
                Some(INSTRUCTIONS_WAIT),
            ),
            Err(error) => return Err(refusal(error)),
        },
        WriteMode::Propose => proposed(
            changes::propose(context.journal, &request).await.map_err(refusal)?,
            None,
        ),
        // Not offered; checked again here so that no path can write without a mode.
        WriteMode::None => {
            return Err(ToolError::Refused(
                "this connection may not change notes; the owner can change that".into(),
            ));
        }
    };
    ToolOutput::of(&output, false)
}

fn refusal(error: ChangeError) -> ToolError {
    match error {
        ChangeError::Write(WriteError::Io(detail)) => ToolError::Failed(detail),
        ChangeError::Write(error @ (WriteError::Edit(_) | WriteError::Refused(_))) => {
            ToolError::Invalid(error.to_string())
        }
        ChangeError::Write(other) => ToolError::Refused(other.to_string()),
        ChangeError::Store(error @ (ProposalError::TooMany | ProposalError::TooLarge)) => {
            ToolError::Refused(error.to_string())
        }
        ChangeError::Invalid(message) => ToolError::Invalid(message),
        error @ (ChangeError::HistoryFull(_) | ChangeError::Busy) => ToolError::Refused(error.to_string()),
        other => ToolError::Failed(other.to_string()),
    }
}
