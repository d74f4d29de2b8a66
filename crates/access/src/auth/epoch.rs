//! The access epoch: how every process that opens a journal tells a running server that access
//! state (connections, keys, grants, tokens) changed, so its in-memory credential cache
//! (`auth::cache`) is never trusted past a change.
//!
//! Two signals, one fast and one durable:
//!
//! - `.access-epoch` beside `journal.db` holds 8 random bytes, rewritten by `announce` after every
//!   commit that narrows or ends access. A server reads it (one `pread` of a page-cache page) on
//!   every request, so a change made by the CLI applies to the next request after the command
//!   returns. Random values rather than a counter: a read torn by a concurrent write is then a value
//!   that matches nothing, which only costs a reload.
//! - `access_epoch` in `journal.db` is counted up by triggers on every access table (migration
//!   0004), in the same transaction as the change. A server compares it every 2 seconds, so a change
//!   whose announcement was lost (a crash between the commit and the write, a path that forgot to
//!   announce, a hand edit with `sqlite3`) still applies within seconds.
//!
//! This module does not decide what is cached; it only tells whether what was cached is still
//! current.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::{FileExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::RwLock;

use crate::db::Pool;

/// The fast signal's file name, beside `journal.db`.
pub const FILE_NAME: &str = ".access-epoch";

/// Where the fast signal of the journal behind `pool` lives.
pub fn path_for(pool: &Pool) -> PathBuf {
    let options = pool.connect_options();
    options
        .get_filename()
        .parent()
        .unwrap_or(Path::new("."))
        .join(FILE_NAME)
}

/// Tells every process that access state changed. Call it after the change is committed: a reader
/// that refills its cache before the commit would otherwise keep the old state under the new epoch.
/// A failure is logged, not returned: the change is committed, and the durable epoch carries it to
/// running servers within seconds.
pub fn announce(pool: &Pool) {
    if let Err(error) = write_random(&path_for(pool)) {
        tracing::warn!(%error, "could not announce an access change; running servers apply it within 2 seconds");
    }
}

fn write_random(path: &Path) -> std::io::Result<()> {
    let file = open(path)?;
    file.write_all_at(&fresh_value().to_le_bytes(), 0)
}

fn open(path: &Path) -> std::io::Result<File> {
    options().open(path)
}

/// The file opened for reading and writing, created (owner only) when missing, never truncated.
fn options() -> OpenOptions {
    let mut options = OpenOptions::new();
    options.read(true).write(true).create(true).truncate(false).mode(0o600);
    options
}

/// The watch's own handle: read on every request, so without updating the file's access time
/// (a tenth of the read's cost). `O_NOATIME` is refused to anyone but the file's owner; then the
/// plain handle serves.
fn open_for_reading(path: &Path) -> std::io::Result<File> {
    #[cfg(target_os = "linux")]
    {
        if let Ok(file) = options().custom_flags(libc::O_NOATIME).open(path) {
            return Ok(file);
        }
    }
    open(path)
}

/// A value no reader holds: fresh random bytes (the clock, should the random source fail).
fn fresh_value() -> u64 {
    let mut bytes = [0u8; 8];
    if getrandom::fill(&mut bytes).is_err() {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        return now.as_nanos() as u64;
    }
    u64::from_le_bytes(bytes)
}

/// The durable epoch, counted by triggers in `journal.db`.
pub async fn durable(pool: &Pool) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar("SELECT value FROM access_epoch WHERE id = 1")
        .fetch_one(pool)
        .await
}

/// A server's view of the fast signal: the file held open and read on every request.
pub struct EpochWatch {
    path: PathBuf,
    /// The open file and its (device, inode), or None when it could not be opened.
    file: RwLock<Option<(File, (u64, u64))>>,
}

impl EpochWatch {
    /// Opens (creating when missing) the signal of the journal behind `pool`.
    pub fn open(pool: &Pool) -> EpochWatch {
        let watch = EpochWatch {
            path: path_for(pool),
            file: RwLock::new(None),
        };
        watch.reopen_if_replaced();
        watch
    }

    /// The current value. When the file cannot be read, a value that matches nothing, so nothing
    /// cached is trusted.
    pub fn current(&self) -> u64 {
        let guard = self.file.read().unwrap_or_else(|e| e.into_inner());
        let mut bytes = [0u8; 8];
        match guard.as_ref().map(|(file, _)| file.read_at(&mut bytes, 0)) {
            Some(Ok(8)) => u64::from_le_bytes(bytes),
            // Created and not yet written: a stable value, so the cache works before the first change.
            Some(Ok(0)) => 0,
            _ => fresh_value(),
        }
    }

    /// Opens the file again if it was deleted or replaced since it was opened (a server holding the
    /// old inode would never see another process's announcements). Called from the periodic upkeep.
    pub fn reopen_if_replaced(&self) {
        let on_disk = std::fs::metadata(&self.path).ok().map(|m| (m.dev(), m.ino()));
        {
            let guard = self.file.read().unwrap_or_else(|e| e.into_inner());
            if let (Some((_, held)), Some(on_disk)) = (guard.as_ref(), on_disk)
                && *held == on_disk
            {
                return;
            }
        }
        let opened = open_for_reading(&self.path).and_then(|file| {
            let meta = file.metadata()?;
            Ok((file, (meta.dev(), meta.ino())))
        });
        if let Err(error) = &opened {
            tracing::warn!(path = %self.path.display(), %error, "cannot open the access epoch; credentials are checked in journal.db on every request");
        }
        *self.file.write().unwrap_or_else(|e| e.into_inner()) = opened.ok();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn pool_in(dir: &Path) -> Pool {
        crate::db::open(&dir.join("journal.db")).await.unwrap()
    }

    #[tokio::test]
    async fn an_announcement_changes_what_a_watch_reads() {
        let dir = tempfile::tempdir().unwrap();
        let pool = pool_in(dir.path()).await;
        let watch = EpochWatch::open(&pool);
        let before = watch.current();
        assert_eq!(before, watch.current(), "a quiet epoch reads the same every time");
        announce(&pool);
        let after = watch.current();
        assert_ne!(before, after);
        assert_eq!(after, watch.current());
        let mode = std::fs::metadata(dir.path().join(FILE_NAME)).unwrap().mode() & 0o777;
        assert_eq!(mode, 0o600);
    }

    #[tokio::test]
    async fn a_replaced_file_is_followed_after_upkeep() {
        let dir = tempfile::tempdir().unwrap();
        let pool = pool_in(dir.path()).await;
        let watch = EpochWatch::open(&pool);
        std::fs::remove_file(dir.path().join(FILE_NAME)).unwrap();
        announce(&pool); // creates a new file the watch does not hold yet
        let stale = watch.current();
        watch.reopen_if_replaced();
        let fresh = watch.current();
        assert_ne!(stale, fresh);
        announce(&pool);
        assert_ne!(fresh, watch.current());
    }

    #[tokio::test]
    async fn an_unreadable_epoch_matches_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let pool = pool_in(dir.path()).await;
        let watch = EpochWatch::open(&pool);
        *watch.file.write().unwrap() = None;
        assert_ne!(watch.current(), watch.current());
    }

    #[tokio::test]
    async fn access_tables_count_the_durable_epoch_and_last_use_does_not() {
        let dir = tempfile::tempdir().unwrap();
        let pool = pool_in(dir.path()).await;
        let start = durable(&pool).await.unwrap();
        let (connection, _) = crate::auth::connections::create_key(&pool, "script").await.unwrap();
        let created = durable(&pool).await.unwrap();
        sqlx::query("UPDATE connections SET last_used_at = 1 WHERE id = ?")
            .bind(&connection.id)
            .execute(&pool)
            .await
            .unwrap();
        assert_eq!(
            durable(&pool).await.unwrap(),
            created,
            "noting use is not an access change"
        );
        let all = [crate::auth::Category::Transcripts].into_iter().collect();
        crate::auth::connections::set_grant(
            &pool,
            &connection.id,
            &all,
            Some(&["f1".into()]),
            crate::auth::WriteMode::None,
        )
        .await
        .unwrap();
        let granted = durable(&pool).await.unwrap();
        assert!(granted > created.max(start));
        crate::auth::connections::revoke_key(&pool, "script").await.unwrap();
        assert!(durable(&pool).await.unwrap() > granted);
    }
}
