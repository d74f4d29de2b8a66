//! The SQLite database `journal.db`: opening it, its pragmas and its migrations.
//!
//! The database holds access state (connections, keys, grants), the audit log, server keys and the
//! catalog of indexed files. WAL lets readers run beside the single writer; `synchronous = FULL`
//! because an acknowledged change to access state or the audit log must survive power loss.
//! This module does not know what any table means; the modules that own the tables do.

use std::path::Path;
use std::str::FromStr;
use std::time::Duration;

use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};

pub use sqlx::SqlitePool as Pool;

/// Opens (creating when missing) the database at `path` and applies pending migrations.
pub async fn open(path: &Path) -> Result<Pool, sqlx::Error> {
    let options = SqliteConnectOptions::from_str("sqlite://")?
        .filename(path)
        .create_if_missing(true)
        .journal_mode(SqliteJournalMode::Wal)
        .synchronous(SqliteSynchronous::Full)
        .foreign_keys(true)
        // A CLI command and the server may write at the same moment; wait rather than fail.
        .busy_timeout(Duration::from_secs(5));
    let fresh = !path.exists();
    let pool = SqlitePoolOptions::new()
        .max_connections(4)
        .connect_with(options)
        .await?;
    if fresh {
        // SQLite creates the file with the process umask; the WAL and shared-memory files copy its mode.
        crate::fsio::make_private(path)?;
    }
    sqlx::migrate!("./migrations").run(&pool).await?;
    Ok(pool)
}

/// Begins a transaction that will write, taking SQLite's write lock at once (`BEGIN IMMEDIATE`).
///
/// A deferred transaction that reads and then writes cannot wait for a writer of another process or
/// connection: when its snapshot is stale SQLite answers "database is locked" at once, whatever the
/// busy timeout. Taking the lock first makes concurrent writers queue under the busy timeout, and
/// what the transaction reads is what it writes over. Every transaction of this program writes, so
/// every one begins here.
pub async fn begin_write(pool: &Pool) -> Result<sqlx::Transaction<'static, sqlx::Sqlite>, sqlx::Error> {
    pool.begin_with("BEGIN IMMEDIATE").await
}

/// True when the error is a violated UNIQUE or PRIMARY KEY constraint.
pub fn is_unique_violation(error: &sqlx::Error) -> bool {
    matches!(error, sqlx::Error::Database(db) if db.is_unique_violation())
}
