//! The owner's review of what agents proposed, of every kind: list, look, accept, reject. The owner
//! app, `journal proposals` and `my_proposals` all come here.
//!
//! A proposal's stored kind (`proposals::Kind`) says which gate makes it: a note change goes through
//! `notes::changes`, a graph change through `graph::gate`, each as the proposing connection seen by
//! its grant today (a connection removed since can only be rejected). Decisions are one at a time in
//! this process (the review lock), and each is recorded in the same transaction as the change it
//! makes, so a second accept, here or in another process, is refused.

use std::sync::Arc;

use crate::auth::{AuthError, connections};
use crate::journal::Journal;
use crate::journal::graph::gate::{self, GateError};
use crate::journal::graph::store::GraphFileError;
use crate::journal::notes::changes::{self, ChangeError, Preview};
use crate::journal::proposals::{self, Filter, Kind, Proposal, Status};

/// The longest reason the owner may give with a rejection, in characters.
pub const MAX_REASON_CHARS: usize = 1000;

/// One decision at a time in this process: two windows accepting the same proposal make it once.
static REVIEW: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// Why a proposal was not listed, shown or decided. Nothing changed in any case.
#[derive(Debug, thiserror::Error)]
pub enum ReviewError {
    #[error("there is no proposal {0}")]
    NotFound(i64),
    #[error("proposal {id} was already {status}")]
    Decided { id: i64, status: &'static str },
    /// The proposing connection was removed: there is no grant to make the change by.
    #[error("the connection \"{label}\" that proposed this was removed; reject it, or make the change yourself")]
    Removed { label: String },
    #[error("the reason is too long: at most {MAX_REASON_CHARS} characters")]
    ReasonTooLong,
    /// The note changed since the proposal (or since the owner looked): nothing applied blindly.
    #[error(
        "the note {path} changed since this was proposed (its hash is now {current}); review the change against the \
         note as it is now and accept it onto the current note, or reject it"
    )]
    Stale { path: String, current: String },
    /// The notes' gate refused the change (a rule, the history's budget, a busy writer).
    #[error(transparent)]
    Note(ChangeError),
    /// The graph's gate refused the change.
    #[error(transparent)]
    Graph(#[from] GateError),
    #[error(transparent)]
    Access(#[from] AuthError),
    #[error("the journal database: {0}")]
    Db(#[from] sqlx::Error),
}

impl ReviewError {
    /// Whether the journal could not be read or written (rather than the decision being refused):
    /// the owner is told to try again, and the details go to the log.
    pub fn is_failure(&self) -> bool {
        matches!(
            self,
            ReviewError::Db(_)
                | ReviewError::Access(_)
                | ReviewError::Note(ChangeError::Failed(_))
                | ReviewError::Graph(GateError::Journal(_) | GateError::Store(GraphFileError::Io(_)))
        )
    }
}

impl From<ChangeError> for ReviewError {
    fn from(error: ChangeError) -> ReviewError {
        match error {
            ChangeError::Stale { path, current } => ReviewError::Stale { path, current },
            ChangeError::Db(error) => ReviewError::Db(error),
            other => ReviewError::Note(other),
        }
    }
}

/// Where an accepted note change is made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Onto<'a> {
    /// Onto the note as it was when proposed (refused as stale if it changed since).
    Proposed,
    /// Onto the note with this hash, as the owner saw it in the review.
    Seen(&'a str),
    /// Onto the note as it is now, whatever it holds.
    Current,
}

/// What an accepted proposal did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Accepted {
    pub kind: Kind,
    /// The note changed (where it is now), or the graph change as the proposal describes it.
    pub path: String,
    /// The note's hash after the change (None for a graph change or a deletion).
    pub hash: Option<String>,
}

/// Proposals, newest first.
pub async fn list(journal: &Journal, filter: &Filter) -> Result<Vec<Proposal>, ReviewError> {
    Ok(proposals::list(&journal.db, filter).await?)
}

/// One proposal, in whatever state.
pub async fn get(journal: &Journal, id: i64) -> Result<Proposal, ReviewError> {
    proposals::get(&journal.db, id).await?.ok_or(ReviewError::NotFound(id))
}

/// What accepting a proposal would do now. A graph change has no note to compare: its diff says
/// what it does, checked when it is accepted.
pub async fn preview(journal: &Arc<Journal>, proposal: &Proposal) -> Result<Preview, ReviewError> {
    match proposal.kind {
        Kind::Graph => Ok(Preview {
            current_hash: None,
            stale: false,
            diff_now: Ok(proposal.diff.clone()),
        }),
        Kind::Note => {
            let reader = connections::reader(&journal.db, &proposal.connection_id, &journal.facets())
                .await?
                .ok_or_else(|| removed(proposal))?;
            Ok(changes::preview(journal, proposal, reader).await?)
        }
    }
}

/// Accepts a pending proposal: makes its change as the connection that proposed it, by that
/// connection's grant today and every rule of its kind's gate.
pub async fn accept(journal: &Arc<Journal>, id: i64, onto: Onto<'_>) -> Result<Accepted, ReviewError> {
    let _review = REVIEW.lock().await;
    let proposal = pending(journal, id).await?;
    match proposal.kind {
        Kind::Graph => {
            let viewer = connections::viewer(&journal.db, &proposal.connection_id, &journal.facets())
                .await?
                .ok_or_else(|| removed(&proposal))?;
            gate::accept(journal, &proposal, &viewer).await?;
            Ok(Accepted {
                kind: Kind::Graph,
                path: proposal.path,
                hash: None,
            })
        }
        Kind::Note => {
            let reader = connections::reader(&journal.db, &proposal.connection_id, &journal.facets())
                .await?
                .ok_or_else(|| removed(&proposal))?;
            let seen = match onto {
                Onto::Proposed => None,
                Onto::Seen(hash) => Some(hash.to_string()),
                Onto::Current => changes::preview(journal, &proposal, reader.clone()).await?.current_hash,
            };
            let made = changes::accept(journal, &proposal, reader, seen.as_deref()).await?;
            Ok(Accepted {
                kind: Kind::Note,
                path: made.path,
                hash: made.hash,
            })
        }
    }
}

/// Rejects a pending proposal, with the owner's words for the agent (may be empty).
pub async fn reject(journal: &Journal, id: i64, reason: &str) -> Result<(), ReviewError> {
    let _review = REVIEW.lock().await;
    pending(journal, id).await?;
    if reason.chars().count() > MAX_REASON_CHARS {
        return Err(ReviewError::ReasonTooLong);
    }
    // Decided meanwhile by another process: its decision stands, and this one changes nothing.
    proposals::decide(&journal.db, id, Status::Rejected, reason.trim(), None).await?;
    if let Err(error) = proposals::prune(&journal.db, crate::clock::unix_now()).await {
        tracing::warn!(%error, "old decided proposals could not be forgotten; it is tried again with the next decision");
    }
    Ok(())
}

async fn pending(journal: &Journal, id: i64) -> Result<Proposal, ReviewError> {
    let proposal = get(journal, id).await?;
    if proposal.status != Status::Pending {
        return Err(ReviewError::Decided {
            id,
            status: proposal.status.as_str(),
        });
    }
    Ok(proposal)
}

fn removed(proposal: &Proposal) -> ReviewError {
    ReviewError::Removed {
        label: proposal.label.clone(),
    }
}
