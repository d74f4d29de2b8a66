//! The one gate every change to the graph goes through, whoever makes it: an agent in force mode,
//! an agent's proposal (checked now, staged for the owner), the owner accepting that proposal, the
//! owner from the CLI or the app.
//!
//! A change names connections by id and items by key. Before it is made (or staged), the viewer
//! must reach what it names: both items of a new connection, both ends of an existing one (a
//! connection it cannot see answers exactly as one that does not exist). Then the rules of
//! `rules` decide, under the graph file's lock (`store::update`).

use std::cell::Cell;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::history::{self, HistoryError, NewEntry, Origin};
use super::items::{Items, Viewer};
use super::rules::{self, RuleError};
use super::store::{self, Graph, GraphFileError};
use super::{Author, Edge};
use crate::journal::proposals::{self, Kind, NewProposal, Proposal};
use crate::journal::{Journal, JournalError};

/// One change to the graph, as a proposal keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
pub enum GraphChange {
    Connect {
        from: String,
        to: String,
        #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
        kind: Option<String>,
    },
    SetType {
        id: String,
        /// None clears the type.
        #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
        kind: Option<String>,
    },
    Disconnect {
        id: String,
    },
    /// The author's own note; empty text removes it.
    Note {
        id: String,
        text: String,
    },
}

impl GraphChange {
    /// The tool that asks for this change.
    pub fn tool(&self) -> &'static str {
        match self {
            GraphChange::Connect { .. } => "connect",
            GraphChange::SetType { .. } => "set_connection_type",
            GraphChange::Disconnect { .. } => "disconnect",
            GraphChange::Note { .. } => "write_connection_note",
        }
    }

    fn id(&self) -> Option<&str> {
        match self {
            GraphChange::Connect { .. } => None,
            GraphChange::SetType { id, .. } | GraphChange::Disconnect { id } | GraphChange::Note { id, .. } => Some(id),
        }
    }

    /// Makes the change in `graph` by the rules; answers the connection as it is after (a removed
    /// one as it was).
    pub fn apply(&self, graph: &mut Graph, author: &Author, now: &str) -> Result<Edge, RuleError> {
        match self {
            GraphChange::Connect { from, to, kind } => rules::connect(graph, author, from, to, kind.as_deref(), now),
            GraphChange::SetType { id, kind } => rules::set_type(graph, author, id, kind.as_deref()),
            GraphChange::Disconnect { id } => rules::disconnect(graph, author, id),
            GraphChange::Note { id, text } => rules::write_note(graph, author, id, text, now),
        }
    }

    /// The change in one line for the owner's review: what it does to which connection.
    pub fn describe(&self, graph: &Graph) -> String {
        let ends = |id: &str| {
            graph.get(id).map_or_else(
                || format!("connection {id}"),
                |c| format!("{} → {} ({id})", c.from, c.to),
            )
        };
        match self {
            GraphChange::Connect { from, to, kind } => match kind {
                Some(kind) => format!("connect {from} → {to} as {kind}"),
                None => format!("connect {from} → {to}"),
            },
            GraphChange::SetType { id, kind } => match kind {
                Some(kind) => format!("set the type of {} to {kind}", ends(id)),
                None => format!("clear the type of {}", ends(id)),
            },
            GraphChange::Disconnect { id } => format!("disconnect {}", ends(id)),
            GraphChange::Note { id, text } if text.trim().is_empty() => format!("remove its note on {}", ends(id)),
            GraphChange::Note { id, .. } => format!("write its note on {}", ends(id)),
        }
    }

    /// The change as diff lines for the owner's review.
    fn diff(&self, graph: &Graph) -> String {
        let mut lines = vec![format!("@@ {}", self.describe(graph))];
        match self {
            GraphChange::Connect { from, to, kind } => {
                lines.push(format!("+ from: {from}"));
                lines.push(format!("+ to: {to}"));
                if let Some(kind) = kind {
                    lines.push(format!("+ type: {kind}"));
                }
            }
            GraphChange::SetType { id, kind } => {
                if let Some(old) = graph.get(id).and_then(|c| c.kind.clone()) {
                    lines.push(format!("- type: {old}"));
                }
                if let Some(kind) = kind {
                    lines.push(format!("+ type: {kind}"));
                }
            }
            GraphChange::Disconnect { id } => {
                if let Some(c) = graph.get(id) {
                    lines.push(format!("- {} → {}", c.from, c.to));
                }
            }
            GraphChange::Note { text, .. } => lines.extend(text.lines().map(|l| format!("+ {l}"))),
        }
        lines.join("\n")
    }
}

/// Why a graph change was not made (or not staged). Nothing changed in any case.
#[derive(Debug, thiserror::Error)]
pub enum GateError {
    /// A rule refused it (`forbidden: ...`), the connection does not exist (or is out of sight), or
    /// the change is malformed.
    #[error(transparent)]
    Rule(#[from] RuleError),
    /// An item it names does not exist, or is out of the viewer's reach (the same words).
    #[error("{0}")]
    Missing(String),
    #[error(transparent)]
    Store(#[from] GraphFileError),
    #[error(transparent)]
    Proposal(#[from] proposals::ProposalError),
    #[error("the journal: {0}")]
    Journal(#[from] JournalError),
    #[error("{0}")]
    Review(String),
    #[error(transparent)]
    History(#[from] HistoryError),
}

impl From<sqlx::Error> for GateError {
    fn from(error: sqlx::Error) -> GateError {
        GateError::Journal(JournalError::from(error))
    }
}

/// What a made change answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Made {
    pub connection: Edge,
    /// The connection was removed.
    pub removed: bool,
}

/// Makes a change now as `viewer` (the owner, or an agent as its grant sees the graph), recorded in
/// the history as from `origin`.
pub async fn make(
    journal: &Arc<Journal>,
    origin: &Origin,
    viewer: &Viewer,
    change: &GraphChange,
) -> Result<Made, GateError> {
    let graph = load(journal).await?;
    check_reach(journal, viewer, change, &graph).await?;
    let removed = matches!(change, GraphChange::Disconnect { .. });
    let (author, change) = (viewer.author(), change.clone());
    let tool = change.tool();
    let (connection, _) = commit(journal, origin.clone(), author.clone(), tool, None, move |graph| {
        let before = change.id().and_then(|id| graph.get(id).cloned());
        let made = change.apply(graph, &author, &super::now())?;
        Ok((made, before))
    })
    .await?;
    if let Err(error) = history::prune(&journal.db, crate::clock::unix_now()).await {
        tracing::warn!(%error, "the graph's history could not be pruned; it is tried again with the next change");
    }
    Ok(Made { connection, removed })
}

/// Undoes the change `id` of the graph's history, as the owner: puts its connection back as it was
/// before the change, while the connection is still as the change left it (anything made since
/// would be lost otherwise; the refusal says so). The undo is kept in the history too, so it can be
/// undone in turn. Answers the undo's own entry.
pub async fn revert(journal: &Arc<Journal>, id: i64) -> Result<history::Entry, GateError> {
    let Some(entry) = history::get(&journal.db, id).await? else {
        return Err(GateError::Review(format!(
            "the graph's history has no change {id}; `journal graph history` lists them"
        )));
    };
    let connection = entry.connection.clone();
    let undone = entry.clone();
    let made = commit(
        journal,
        Origin::owner(),
        Author::owner(),
        "revert",
        Some(id),
        move |graph| {
            if !history::unchanged_since(graph, &undone) {
                return Err(GateError::Review(format!(
                    "connection {} changed after change {}; undo the later changes first, or change it yourself \
                 (`journal graph ...`)",
                    undone.connection, undone.id
                )));
            }
            let before = graph.get(&undone.connection).cloned();
            graph.put(&undone.connection, undone.before.clone());
            let shown = undone.before.clone().or(before.clone());
            let shown = shown.ok_or_else(|| GateError::Review(format!("change {} changed nothing", undone.id)))?;
            Ok((shown, before))
        },
    )
    .await?;
    let entry = match made.1 {
        Some(undo) => history::get(&journal.db, undo).await?,
        None => None,
    };
    entry.ok_or_else(|| GateError::Review(format!("change {id} of {connection} changed nothing to undo")))
}

/// Makes a change under the graph's lock, with its entry in the history: undoes what a dead writer
/// left unfinished, lets `change` change the graph (it answers the connection to answer with and
/// the connection's state before), records the entry (refused past the agent's budget, or when its
/// proposal was decided meanwhile), writes the file, and marks the entry done, all under the lock.
/// A change that failed before the file was written is forgotten; one that failed after is left
/// unfinished, for the next writer to undo (it was not acknowledged). Answers the connection and
/// the entry's id (None: the change changed nothing and is not in the history).
async fn commit(
    journal: &Arc<Journal>,
    origin: Origin,
    actor: Author,
    tool: &'static str,
    reverted: Option<i64>,
    change: impl FnOnce(&mut Graph) -> Result<(Edge, Option<Edge>), GateError> + Send + 'static,
) -> Result<(Edge, Option<i64>), GateError> {
    let root = journal.root().to_path_buf();
    let pool = journal.db.clone();
    let budget = journal.notes.history_budget();
    let handle = tokio::runtime::Handle::current();
    blocking(move || {
        let recorded = Cell::new(None);
        let written = Cell::new(false);
        let made = store::update_then(
            &root,
            store::LOCK_WAIT,
            |graph| {
                handle.block_on(history::recover(&pool, graph))?;
                let (made, before) = change(graph)?;
                let after = graph.get(&made.id);
                // A proposal is decided with its entry, even when it changes nothing now.
                if after != before.as_ref() || origin.proposal_id.is_some() {
                    let entry = NewEntry {
                        actor: &actor,
                        origin: &origin,
                        tool,
                        reverted,
                        connection: &made.id,
                        before: before.as_ref(),
                        after,
                    };
                    recorded.set(Some(handle.block_on(history::record(&pool, &entry, budget))?));
                }
                Ok(made)
            },
            |_| {
                written.set(true);
                match recorded.get() {
                    Some(id) => Ok(handle.block_on(history::finish(&pool, id, origin.proposal_id))?),
                    None => Ok(()),
                }
            },
        );
        if made.is_err()
            && !written.get()
            && let Some(id) = recorded.get()
            && let Err(error) = handle.block_on(history::forget(&pool, id))
        {
            tracing::warn!(%error, id, "a graph change that was not made stays recorded until the next change");
        }
        made.map(|made| (made, recorded.get()))
    })
    .await
}

/// At open: undoes what a graph writer that died left unfinished (its entry, its temporary file),
/// unless a live writer holds the graph now (then it, or the next, does).
pub async fn recover_at_open(journal: &Journal) -> Result<(), GateError> {
    // Every command opens the journal: the graph is read and locked only when there is something
    // to undo, never for nothing.
    if store::stale_temps(journal.root()).is_empty() && !history::any_unfinished(&journal.db).await? {
        return Ok(());
    }
    let root = journal.root().to_path_buf();
    let pool = journal.db.clone();
    let handle = tokio::runtime::Handle::current();
    let recovered = blocking(move || {
        store::update_then(
            &root,
            std::time::Duration::ZERO,
            |graph| Ok::<_, GateError>(handle.block_on(history::recover(&pool, graph))?),
            |_| Ok(()),
        )
    })
    .await;
    match recovered {
        Err(GateError::Store(GraphFileError::Busy)) => Ok(()),
        other => other.map(|_| ()),
    }
}

/// Stages a change as a proposal of the connection `connection_id` (labelled `label`): checked now
/// by every rule, as if it were made, and nothing changed. Answers the proposal's id.
pub async fn propose(
    journal: &Arc<Journal>,
    connection_id: &str,
    label: &str,
    viewer: &Viewer,
    arguments: &Value,
    change: &GraphChange,
) -> Result<i64, GateError> {
    let graph = load(journal).await?;
    check_reach(journal, viewer, change, &graph).await?;
    // The rules answer now, on a copy: a forbidden change is refused, not staged.
    let mut trial = graph.clone();
    change.apply(&mut trial, &viewer.author(), &super::now())?;
    let stored = serde_json::to_string(change).map_err(|e| GateError::Review(e.to_string()))?;
    let id = proposals::insert(
        &journal.db,
        &NewProposal {
            kind: Kind::Graph,
            connection_id: connection_id.to_string(),
            label: label.to_string(),
            tool: change.tool().to_string(),
            arguments: arguments.to_string(),
            change: stored,
            path: change.describe(&graph),
            base_hash: None,
            diff: change.diff(&graph),
        },
    )
    .await?;
    Ok(id)
}

/// Makes a pending graph proposal's change, as the agent that proposed it seen by its grant today
/// (`viewer`). Only the owner's review calls it (`journal_access::review`), which has checked that the
/// proposal is pending and holds the review lock.
pub async fn accept(journal: &Arc<Journal>, proposal: &Proposal, viewer: &Viewer) -> Result<Made, GateError> {
    let change: GraphChange = serde_json::from_str(&proposal.change)
        .map_err(|e| GateError::Review(format!("proposal {} cannot be read: {e}", proposal.id)))?;
    let origin = Origin {
        connection_id: Some(proposal.connection_id.clone()),
        label: proposal.label.clone(),
        proposal_id: Some(proposal.id),
    };
    // Decided in one transaction with the change's entry, under the graph's lock: a crash leaves it
    // made and accepted, or neither, and a second accept (here or in another process) is refused.
    make(journal, &origin, viewer, &change)
        .await
        .map_err(|error| match error {
            GateError::History(HistoryError::Decided(id)) => {
                GateError::Review(format!("proposal {id} was decided meanwhile"))
            }
            other => other,
        })
}

/// The graph as it is now.
pub async fn load(journal: &Journal) -> Result<Graph, GateError> {
    let root = journal.root().to_path_buf();
    blocking(move || store::load(&root).map_err(GateError::from)).await
}

/// Checks that `viewer` reaches everything `change` names.
async fn check_reach(journal: &Journal, viewer: &Viewer, change: &GraphChange, graph: &Graph) -> Result<(), GateError> {
    let mut items = Items::new(journal, viewer);
    if let GraphChange::Connect { from, to, .. } = change {
        for key in [from, to] {
            if items.get(key).await?.is_none() {
                return Err(GateError::Missing(super::items::missing(key)));
            }
        }
        return Ok(());
    }
    let id = change.id().unwrap_or_default();
    let seen = match graph.get(id) {
        Some(connection) => items.reaches_both(&connection.from, &connection.to).await?,
        None => false,
    };
    if seen {
        Ok(())
    } else {
        Err(GateError::Rule(RuleError::NotFound(id.to_string())))
    }
}

async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, GateError> + Send + 'static,
) -> Result<T, GateError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| GateError::Review(format!("the graph change stopped: {e}")))?
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_keeps_as_json_and_says_what_it_does() {
        let mut graph = Graph::default();
        let owner = Author::owner();
        let made = GraphChange::Connect {
            from: "note:a.md".into(),
            to: "facet:work".into(),
            kind: Some("supports".into()),
        }
        .apply(&mut graph, &owner, "2026-12-04T18:00:00Z")
        .unwrap();
        let changes = [
            GraphChange::SetType {
                id: made.id.clone(),
                kind: None,
            },
            GraphChange::Note {
                id: made.id.clone(),
                text: "line one\nline two".into(),
            },
            GraphChange::Disconnect { id: made.id.clone() },
        ];
        for change in &changes {
            let json = serde_json::to_string(change).unwrap();
            assert_eq!(&serde_json::from_str::<GraphChange>(&json).unwrap(), change);
            assert!(["set_connection_type", "write_connection_note", "disconnect"].contains(&change.tool()));
        }
        assert_eq!(
            changes[0].describe(&graph),
            format!("clear the type of note:a.md → facet:work ({})", made.id)
        );
        assert_eq!(changes[0].diff(&graph).lines().nth(1), Some("- type: supports"));
        assert_eq!(changes[1].diff(&graph).lines().count(), 3);
        assert!(changes[2].diff(&graph).contains("- note:a.md → facet:work"));
        assert!(serde_json::from_str::<GraphChange>(r#"{"op":"disconnect","id":"c-aaaaaaaaaa","x":1}"#).is_err());
    }
}
