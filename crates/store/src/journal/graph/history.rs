//! The graph's history: every change made through the graph's gate, whoever made it, with the
//! connection it changed as it was before and after, so that the owner sees what each agent did to
//! the graph and can undo it (`journal graph history` and `revert`, the app's changes page).
//!
//! A change is recorded (not done) under `graph.lock`, after the rules made it in memory and before
//! `graph.jsonl` is written, and marked done, with an accepted proposal's decision, after the file
//! is written and before the lock is let go. So a row not done that a graph writer finds under the
//! lock belongs to a process that died: its change was never acknowledged and is undone (`recover`),
//! its proposal left pending. An agent's rows count against its connection's history budget, with
//! its notes' versions (`notes::history::kept_by`); past it, the change is refused, never an older
//! row dropped. Rows go only by age, as notes' versions do.

use serde::Serialize;

use super::store::Graph;
use super::{Author, Edge};
use crate::db::{self, Pool};
use crate::journal::notes::history::{self as notes_history, KEEP_DAYS, RecordError};
use crate::journal::proposals::{self, Status};

/// The history's columns, read as an `Entry` (`entry`), with the rest of a query.
macro_rules! select {
    ($rest:literal) => {
        concat!(
            "SELECT id, at, actor, label, tool, proposal_id, reverted, graph_connection, before, after
             FROM graph_changes ",
            $rest
        )
    };
}

/// Who a change is from beyond its graph author: the agent connection (for the budget and the
/// review), and the proposal it applied.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Origin {
    /// The agent's connection; None for the owner.
    pub connection_id: Option<String>,
    /// The connection's label then ('' for the owner).
    pub label: String,
    /// The accepted proposal the change applies.
    pub proposal_id: Option<i64>,
}

impl Origin {
    pub fn owner() -> Origin {
        Origin::default()
    }

    pub fn agent(connection_id: &str, label: &str) -> Origin {
        Origin {
            connection_id: Some(connection_id.to_string()),
            label: label.to_string(),
            proposal_id: None,
        }
    }
}

/// One change of the graph, as the history keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Entry {
    pub id: i64,
    pub at: i64,
    /// The graph author: `owner`, `agent:<slug>` or `agent:<slug>~<8 hex>`.
    pub actor: String,
    pub label: String,
    /// The tool, or `revert`.
    pub tool: String,
    pub proposal_id: Option<i64>,
    /// The change an undo undid.
    pub reverted: Option<i64>,
    /// The connection's id in the graph.
    pub connection: String,
    /// The connection before (None: the change made it) and after (None: it removed it).
    pub before: Option<Edge>,
    pub after: Option<Edge>,
}

impl Entry {
    /// What the change did, in a few words.
    pub fn what(&self) -> &'static str {
        match (&self.before, &self.after) {
            (None, Some(_)) => "connected",
            (Some(_), None) => "disconnected",
            (Some(before), Some(after)) if before.kind != after.kind => "retyped",
            (Some(before), Some(after)) if before.from != after.from || before.to != after.to => "moved",
            (Some(_), Some(_)) => "noted",
            (None, None) => "nothing",
        }
    }

    /// The connection it concerns, as it was last (after, or before for a removal).
    pub fn shown(&self) -> Option<&Edge> {
        self.after.as_ref().or(self.before.as_ref())
    }
}

/// Why a change could not be recorded, or an undo made.
#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    #[error(transparent)]
    Record(#[from] RecordError),
    #[error("the graph's history: {0}")]
    Db(#[from] sqlx::Error),
    /// The proposal a change applies was decided while it waited.
    #[error("proposal {0} was already decided")]
    Decided(i64),
}

/// What a change records: which connection, and its state before and after.
pub struct NewEntry<'a> {
    pub actor: &'a Author,
    pub origin: &'a Origin,
    pub tool: &'a str,
    pub reverted: Option<i64>,
    pub connection: &'a str,
    pub before: Option<&'a Edge>,
    pub after: Option<&'a Edge>,
}

/// Records a change, not done yet (the caller holds `graph.lock` and writes the file next); answers
/// its id. An agent's change is refused when its connection's history would keep more than
/// `budget` bytes, and a change that applies a proposal no longer pending is refused.
pub async fn record(pool: &Pool, entry: &NewEntry<'_>, budget: i64) -> Result<i64, HistoryError> {
    let line = |c: Option<&Edge>| c.map(|c| serde_json::to_string(c).unwrap_or_default());
    let (before, after) = (line(entry.before), line(entry.after));
    let size = before.as_ref().map_or(0, String::len) + after.as_ref().map_or(0, String::len);
    let mut tx = db::begin_write(pool).await?;
    if let Some(proposal_id) = entry.origin.proposal_id {
        let status: Option<String> = sqlx::query_scalar("SELECT status FROM proposals WHERE id = ?")
            .bind(proposal_id)
            .fetch_optional(&mut *tx)
            .await?;
        if status.as_deref() != Some(Status::Pending.as_str()) {
            return Err(HistoryError::Decided(proposal_id));
        }
    }
    let id: i64 = sqlx::query_scalar(
        "INSERT INTO graph_changes (at, actor, connection_id, label, tool, proposal_id, reverted,
                                    graph_connection, before, after, size, done)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0) RETURNING id",
    )
    .bind(crate::clock::unix_now())
    .bind(entry.actor.as_str())
    .bind(&entry.origin.connection_id)
    .bind(&entry.origin.label)
    .bind(entry.tool)
    .bind(entry.origin.proposal_id)
    .bind(entry.reverted)
    .bind(entry.connection)
    .bind(&before)
    .bind(&after)
    .bind(size as i64)
    .fetch_one(&mut *tx)
    .await?;
    if let Some(connection_id) = &entry.origin.connection_id
        && notes_history::kept_by(&mut tx, connection_id).await? > budget
    {
        return Err(RecordError::Full { limit: budget }.into());
    }
    tx.commit().await?;
    Ok(id)
}

/// Marks a recorded change done, and decides the proposal it applied, in one transaction.
pub async fn finish(pool: &Pool, id: i64, proposal_id: Option<i64>) -> Result<(), HistoryError> {
    let mut tx = db::begin_write(pool).await?;
    sqlx::query("UPDATE graph_changes SET done = 1 WHERE id = ?")
        .bind(id)
        .execute(&mut *tx)
        .await?;
    if let Some(proposal_id) = proposal_id
        && !proposals::decide(&mut *tx, proposal_id, Status::Accepted, "", None).await?
    {
        return Err(HistoryError::Decided(proposal_id));
    }
    tx.commit().await?;
    Ok(())
}

/// Forgets a change that was recorded and not made.
pub async fn forget(pool: &Pool, id: i64) -> Result<(), sqlx::Error> {
    sqlx::query("DELETE FROM graph_changes WHERE id = ? AND done = 0")
        .bind(id)
        .execute(pool)
        .await?;
    Ok(())
}

/// Whether some change is recorded and not done (a cheap look before taking the lock at open).
pub async fn any_unfinished(pool: &Pool) -> Result<bool, sqlx::Error> {
    let found: Option<i64> = sqlx::query_scalar("SELECT id FROM graph_changes WHERE done = 0 LIMIT 1")
        .fetch_optional(pool)
        .await?;
    Ok(found.is_some())
}

/// Undoes, in `graph`, every change recorded and not done, and forgets it. The caller holds
/// `graph.lock`, under which every live writer records, writes and finishes: these are a dead
/// process's, never acknowledged. A connection goes back only from the state that change left it
/// in, so a later hand edit of `graph.jsonl` is kept. Answers how many were undone.
pub async fn recover(pool: &Pool, graph: &mut Graph) -> Result<usize, HistoryError> {
    let rows: Vec<(i64, String, Option<String>, Option<String>)> =
        sqlx::query_as("SELECT id, graph_connection, before, after FROM graph_changes WHERE done = 0 ORDER BY id DESC")
            .fetch_all(pool)
            .await?;
    for (id, connection, before, after) in &rows {
        let (before, after) = (parse(before.as_deref()), parse(after.as_deref()));
        if graph.get(connection) == after.as_ref() {
            graph.put(connection, before);
        }
        forget(pool, *id).await?;
        tracing::warn!(
            id,
            "a graph change left unfinished by a process that stopped was undone"
        );
    }
    Ok(rows.len())
}

/// The newest changes first (done ones only).
pub async fn recent(pool: &Pool, limit: i64) -> Result<Vec<Entry>, sqlx::Error> {
    let rows: Vec<Row> = sqlx::query_as(select!("WHERE done = 1 ORDER BY id DESC LIMIT ?"))
        .bind(limit)
        .fetch_all(pool)
        .await?;
    Ok(rows.into_iter().map(entry).collect())
}

/// One change, done.
pub async fn get(pool: &Pool, id: i64) -> Result<Option<Entry>, sqlx::Error> {
    let row: Option<Row> = sqlx::query_as(select!("WHERE done = 1 AND id = ?"))
        .bind(id)
        .fetch_optional(pool)
        .await?;
    Ok(row.map(entry))
}

/// Forgets changes older than the history keeps (`KEEP_DAYS`, as notes' versions); answers how many.
pub async fn prune(pool: &Pool, now: i64) -> Result<u64, sqlx::Error> {
    let gone = sqlx::query("DELETE FROM graph_changes WHERE done = 1 AND at < ?")
        .bind(now - KEEP_DAYS * 86_400)
        .execute(pool)
        .await?;
    Ok(gone.rows_affected())
}

/// Whether `graph` has the connection as `entry` left it (so undoing it loses nothing made since).
pub fn unchanged_since(graph: &Graph, entry: &Entry) -> bool {
    graph.get(&entry.connection) == entry.after.as_ref()
}

type Row = (
    i64,
    i64,
    String,
    String,
    String,
    Option<i64>,
    Option<i64>,
    String,
    Option<String>,
    Option<String>,
);

fn entry(row: Row) -> Entry {
    let (id, at, actor, label, tool, proposal_id, reverted, connection, before, after) = row;
    Entry {
        id,
        at,
        actor,
        label,
        tool,
        proposal_id,
        reverted,
        connection,
        before: parse(before.as_deref()),
        after: parse(after.as_deref()),
    }
}

/// A kept line back as a connection (a line that no longer reads is taken as none).
fn parse(line: Option<&str>) -> Option<Edge> {
    line.and_then(|line| serde_json::from_str(line).ok())
}
