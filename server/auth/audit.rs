//! The audit log: every tool call, recorded before its result is released.
//!
//! Arguments are kept only as a SHA-256 digest: the log says who did what and when without becoming
//! a second copy of what agents searched for or saved.

use sha2::{Digest, Sha256};
use sqlx::Row;

use super::AuthError;
use crate::db::Pool;
use crate::journal::day::unix_now;

/// How a call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Served,
    Empty,
    Refused,
    Error,
}

impl Outcome {
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
    pub at: i64,
    pub connection_id: String,
    pub connection_label: String,
    pub tool: String,
    pub arguments_sha256: String,
    pub outcome: String,
    pub detail: String,
}

/// Records a call. The caller releases the result only after this returns Ok.
pub async fn record(
    pool: &Pool,
    connection_id: &str,
    connection_label: &str,
    tool: &str,
    arguments: &serde_json::Value,
    outcome: Outcome,
    detail: &str,
) -> Result<(), AuthError> {
    let digest = Sha256::digest(arguments.to_string().as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    sqlx::query(
        "INSERT INTO audit (at, connection_id, connection_label, tool, arguments_sha256, outcome, detail) VALUES (?, ?, ?, ?, ?, ?, ?)",
    )
    .bind(unix_now())
    .bind(connection_id)
    .bind(connection_label)
    .bind(tool)
    .bind(hex)
    .bind(outcome.as_str())
    .bind(detail.chars().take(500).collect::<String>())
    .execute(pool)
    .await?;
    Ok(())
}

/// The newest entries first, optionally for one connection label (ignoring case).
pub async fn recent(pool: &Pool, limit: i64, label: Option<&str>) -> Result<Vec<Entry>, AuthError> {
    let rows = sqlx::query(
        "SELECT at, connection_id, connection_label, tool, arguments_sha256, outcome, detail FROM audit
         WHERE ?1 IS NULL OR lower(connection_label) = lower(?1) ORDER BY id DESC LIMIT ?2",
    )
    .bind(label)
    .bind(limit)
    .fetch_all(pool)
    .await?;
    Ok(rows
        .into_iter()
        .map(|row| Entry {
            at: row.get(0),
            connection_id: row.get(1),
            connection_label: row.get(2),
            tool: row.get(3),
            arguments_sha256: row.get(4),
            outcome: row.get(5),
            detail: row.get(6),
        })
        .collect())
}
