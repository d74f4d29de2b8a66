//! The audit log: every tool call, recorded before its result is released.
//!
//! Arguments are kept only as a SHA-256 digest: the log says who did what and when without becoming
//! a second copy of what agents searched for or saved.

use sha2::{Digest, Sha256};
use sqlx::Row;

use super::AuthError;
use crate::clock::unix_now;
use crate::db::Pool;

/// How a call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Served,
    Empty,
    Refused,
    Error,
}

impl Outcome {
    pub const ALL: [Outcome; 4] = [Outcome::Served, Outcome::Empty, Outcome::Refused, Outcome::Error];

    pub fn parse(text: &str) -> Option<Outcome> {
        Outcome::ALL.into_iter().find(|outcome| outcome.as_str() == text)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Served => "served",
            Outcome::Empty => "empty",
            Outcome::Refused => "refused",
            Outcome::Error => "error",
        }
    }
}

/// One recorded call.
#[derive(Debug, Clone)]
pub struct Entry {
    /// The record's place in the log (newer records have larger ids).
    pub id: i64,
    pub at: i64,
    pub connection_id: String,
    pub connection_label: String,
    pub tool: String,
    pub arguments_sha256: String,
    pub outcome: String,
    pub detail: String,
    /// For a call of a write tool: the note it named and the connection's write mode then.
    pub change: Option<WriteTarget>,
}

/// What a write tool's record adds: which note, and in which write mode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteTarget {
    pub path: String,
    pub write_mode: String,
}

/// One call to record.
#[derive(Debug, Clone)]
pub struct Record {
    pub connection_id: String,
    pub connection_label: String,
    pub tool: String,
    pub arguments: serde_json::Value,
    pub outcome: Outcome,
    pub detail: String,
    pub change: Option<WriteTarget>,
}

/// A record as the row it becomes: `[at, connection_id, connection_label, tool, arguments_sha256,
/// outcome, detail, path, write_mode]`.
fn row(record: &Record, at: i64) -> serde_json::Value {
    let digest = Sha256::digest(record.arguments.to_string().as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    serde_json::json!([
        at,
        record.connection_id,
        record.connection_label,
        record.tool,
        hex,
        record.outcome.as_str(),
        record.detail.chars().take(500).collect::<String>(),
        record
            .change
            .as_ref()
            .map(|c| c.path.chars().take(1024).collect::<String>()),
        record.change.as_ref().map(|c| c.write_mode.clone()),
    ])
}

/// Writes a batch of records in one statement, which SQLite commits as one transaction (one disk
/// flush). One statement is also one exchange with the database's worker thread: a transaction of a
/// statement a record cost two thread switches a record, a fifth of a search's CPU on one core.
async fn insert_all(pool: &Pool, records: &[&Record]) -> Result<(), AuthError> {
    let at = unix_now();
    let rows = serde_json::Value::Array(records.iter().map(|record| row(record, at)).collect());
    sqlx::query(
        "INSERT INTO audit (at, connection_id, connection_label, tool, arguments_sha256, outcome, detail, path, write_mode)
         SELECT value ->> 0, value ->> 1, value ->> 2, value ->> 3, value ->> 4, value ->> 5, value ->> 6,
                value ->> 7, value ->> 8
         FROM json_each(?) ORDER BY key",
    )
    .bind(rows.to_string())
    .execute(pool)
    .await?;
    Ok(())
}

/// What a change's record says until its outcome is written: the call was begun, and if the
/// outcome never comes (the process died, the database failed), the log says so honestly.
pub const BEGUN: &str = "begun; its outcome was not recorded";

/// Records a call that may change something before it runs, with the outcome `error` and `BEGUN`,
/// and answers the record's id for `finish`. A change is thus never made without its record: if
/// this fails, the call does not run.
pub async fn begin(pool: &Pool, record: &Record) -> Result<i64, AuthError> {
    let row = row(
        &Record {
            outcome: Outcome::Error,
            detail: BEGUN.into(),
            ..record.clone()
        },
        unix_now(),
    );
    let id: i64 = sqlx::query_scalar(
        "INSERT INTO audit (at, connection_id, connection_label, tool, arguments_sha256, outcome, detail, path, write_mode)
         SELECT value ->> 0, value ->> 1, value ->> 2, value ->> 3, value ->> 4, value ->> 5, value ->> 6,
                value ->> 7, value ->> 8
         FROM json_each(?) RETURNING id",
    )
    .bind(serde_json::Value::Array(vec![row]).to_string())
    .fetch_one(pool)
    .await?;
    Ok(id)
}

/// Writes the outcome of a call `begin` recorded.
pub async fn finish(pool: &Pool, id: i64, outcome: Outcome, detail: &str) -> Result<(), AuthError> {
    sqlx::query("UPDATE audit SET outcome = ?, detail = ? WHERE id = ?")
        .bind(outcome.as_str())
        .bind(detail.chars().take(500).collect::<String>())
        .bind(id)
        .execute(pool)
        .await?;
    Ok(())
}

/// The most records one statement writes.
const MAX_BATCH: usize = 512;

type Waiting = (Record, tokio::sync::oneshot::Sender<Result<(), String>>);

/// The server's audit writer: calls that arrive together are written in one statement (one disk
/// flush for all of them), and each caller is answered only once its record is committed. Under
/// load this keeps "audited before released" from costing a flush per call.
#[derive(Clone)]
pub struct AuditLog {
    sender: tokio::sync::mpsc::Sender<Waiting>,
}

impl AuditLog {
    /// Starts the writer task (it ends when the last handle is dropped).
    pub fn start(pool: Pool) -> AuditLog {
        let (sender, mut receiver) = tokio::sync::mpsc::channel::<Waiting>(4096);
        tokio::spawn(async move {
            let mut batch = Vec::new();
            while receiver.recv_many(&mut batch, MAX_BATCH).await > 0 {
                // Let the calls that are ready to run finish first, so that their records join this
                // batch: every batch costs a disk flush and the database thread's wake-ups, and on a
                // fast disk batches were a record or two. When nothing else is ready (an idle server),
                // the yield returns at once and adds no wait.
                for _ in 0..2 {
                    tokio::task::yield_now().await;
                    while batch.len() < MAX_BATCH {
                        match receiver.try_recv() {
                            Ok(waiting) => batch.push(waiting),
                            Err(_) => break,
                        }
                    }
                }
                let outcome = write_batch(&pool, &batch).await.map_err(|e| e.to_string());
                for (_, reply) in batch.drain(..) {
                    let _ = reply.send(outcome.clone());
                }
            }
        });
        AuditLog { sender }
    }

    /// Records a call; returns once it is committed.
    pub async fn record(&self, record: Record) -> Result<(), AuthError> {
        let (reply, answer) = tokio::sync::oneshot::channel();
        let gone = || AuthError::Invalid("the audit writer has stopped".into());
        self.sender.send((record, reply)).await.map_err(|_| gone())?;
        answer.await.map_err(|_| gone())?.map_err(AuthError::Invalid)
    }
}

async fn write_batch(pool: &Pool, batch: &[Waiting]) -> Result<(), AuthError> {
    let records: Vec<&Record> = batch.iter().map(|(record, _)| record).collect();
    insert_all(pool, &records).await
}

/// How many calls were recorded at or after `since` (Unix seconds).
pub async fn count_since(pool: &Pool, since: i64) -> Result<i64, AuthError> {
    Ok(sqlx::query_scalar("SELECT count(*) FROM audit WHERE at >= ?")
        .bind(since)
        .fetch_one(pool)
        .await?)
}

/// How many calls each connection made, by connection id (connections without calls are absent).
pub async fn counts_by_connection(pool: &Pool) -> Result<std::collections::HashMap<String, i64>, AuthError> {
    let rows = sqlx::query("SELECT connection_id, count(*) FROM audit GROUP BY connection_id")
        .fetch_all(pool)
        .await?;
    Ok(rows.into_iter().map(|row| (row.get(0), row.get(1))).collect())
}

/// The newest entries first, optionally for one connection label (ignoring case).
pub async fn recent(pool: &Pool, limit: i64, label: Option<&str>) -> Result<Vec<Entry>, AuthError> {
    let rows = sqlx::query(
        "SELECT id, at, connection_id, connection_label, tool, arguments_sha256, outcome, detail, path, write_mode
         FROM audit WHERE ?1 IS NULL OR lower(connection_label) = lower(?1) ORDER BY id DESC LIMIT ?2",
    )
    .bind(label)
    .bind(limit)
    .fetch_all(pool)
    .await?;
    Ok(rows.iter().map(entry_from).collect())
}

/// An entry from a row of `id, at, connection_id, connection_label, tool, arguments_sha256,
/// outcome, detail, path, write_mode`.
pub(super) fn entry_from(row: &sqlx::sqlite::SqliteRow) -> Entry {
    Entry {
        id: row.get(0),
        at: row.get(1),
        connection_id: row.get(2),
        connection_label: row.get(3),
        tool: row.get(4),
        arguments_sha256: row.get(5),
        outcome: row.get(6),
        detail: row.get(7),
        change: match (row.get::<Option<String>, _>(8), row.get::<Option<String>, _>(9)) {
            (Some(path), Some(write_mode)) => Some(WriteTarget { path, write_mode }),
            _ => None,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn concurrent_records_are_all_committed() {
        let dir = tempfile::tempdir().unwrap();
        let pool = crate::db::open(&dir.path().join("journal.db")).await.unwrap();
        let log = AuditLog::start(pool.clone());
        let mut calls = Vec::new();
        for i in 0..200 {
            let log = log.clone();
            calls.push(tokio::spawn(async move {
                let record = Record {
                    connection_id: "c".into(),
                    connection_label: "label".into(),
                    tool: format!("tool{i}"),
                    arguments: serde_json::json!({"i": i}),
                    outcome: Outcome::Served,
                    detail: String::new(),
                    change: (i % 2 == 0).then(|| WriteTarget {
                        path: format!("n{i}.md"),
                        write_mode: "force".into(),
                    }),
                };
                log.record(record).await
            }));
        }
        for call in calls {
            call.await.unwrap().unwrap();
        }
        let entries = recent(&pool, 1000, Some("LABEL")).await.unwrap();
        assert_eq!(entries.len(), 200, "every acknowledged record is there");
        assert!(
            entries
                .iter()
                .all(|e| e.arguments_sha256.len() == 64 && e.outcome == "served")
        );
        let changes: Vec<&Entry> = entries.iter().filter(|e| e.change.is_some()).collect();
        assert_eq!(changes.len(), 100, "a write's path and mode are kept");
        assert!(
            changes
                .iter()
                .all(|e| e.change.as_ref().unwrap().path == format!("n{}.md", &e.tool[4..]))
        );
    }
}
