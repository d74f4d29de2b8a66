//! The notes' history (`note_changes`, `note_versions` in `journal.db`): every change an agent made
//! to notes and every undo of the owner, with each touched note's file as it was before, so that any
//! agent change can be seen and undone.
//!
//! A version is recorded before the change reaches the file and forgotten if it then fails, so that
//! no change is ever on disk without the version that undoes it. The files are kept in chunks, each
//! stored once (`chunks`), so a version costs what changed, not the whole note. Versions are kept for `KEEP_DAYS`
//! days, whoever made them. Space is budgeted per agent connection: one whose changes already keep
//! its budget of earlier versions (`KEEP_BYTES_PER_CONNECTION`, or `[notes] history_mib`) makes
//! no more until some pass their days. Nothing is ever dropped for space: an agent's churn can
//! never push out the owner's undo of what it did before, nor the trash, nor another agent's
//! versions.

use std::collections::HashSet;

use sqlx::Row;

use super::chunks;
use crate::db::{self, Pool};
use crate::journal::author::Author;

/// How long versions are kept.
pub const KEEP_DAYS: i64 = 90;
/// How many bytes of earlier files one agent connection's changes may keep, by default.
pub const KEEP_BYTES_PER_CONNECTION: i64 = 256 * 1024 * 1024;

/// Why a change was not recorded (and so not made).
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    /// The connection's changes already keep its budget of earlier versions.
    #[error(
        "the history that lets the owner undo your changes is full ({} MiB for this connection); nothing was \
         changed. It frees as your changes pass {KEEP_DAYS} days",
        .limit / (1024 * 1024)
    )]
    Full { limit: i64 },
    #[error(transparent)]
    Db(#[from] sqlx::Error),
}

/// Who made a change: the author the history shows (`agent:<slug of the label>`, or `owner`) and
/// the connection it acted through.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangedBy {
    pub author: Author,
    /// The agent's connection (None: the owner).
    pub connection_id: Option<String>,
    /// The connection's label (empty for the owner).
    pub label: String,
}

impl ChangedBy {
    pub fn agent(connection_id: &str, label: &str) -> ChangedBy {
        ChangedBy {
            author: Author::agent(label),
            connection_id: Some(connection_id.to_string()),
            label: label.to_string(),
        }
    }

    pub fn owner() -> ChangedBy {
        ChangedBy {
            author: Author::owner(),
            connection_id: None,
            label: String::new(),
        }
    }
}

/// What a change is, beyond its versions.
#[derive(Debug, Clone)]
pub struct ChangeRecord {
    pub by: ChangedBy,
    /// The write tool, or `revert`.
    pub tool: String,
    /// The accepted proposal the change applied.
    pub proposal_id: Option<i64>,
    /// The version an undo restored.
    pub reverted: Option<i64>,
}

/// One note's part in a change: where it was and what it held, where it is after.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewVersion {
    pub path: String,
    /// None: the change deleted the note.
    pub new_path: Option<String>,
    /// None: the change created the note.
    pub before: Option<Vec<u8>>,
    pub before_hash: Option<String>,
    /// None: the change deleted the note.
    pub after_hash: Option<String>,
}

/// A version as the history lists it (without the file it keeps).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Version {
    pub id: i64,
    pub change_id: i64,
    pub at: i64,
    pub actor: String,
    pub label: String,
    pub tool: String,
    pub proposal_id: Option<i64>,
    pub reverted: Option<i64>,
    pub path: String,
    pub new_path: Option<String>,
    pub before_hash: Option<String>,
    pub after_hash: Option<String>,
    /// Bytes of the file kept (its length, whatever it costs to keep).
    pub size: i64,
}

impl Version {
    /// Whether the change moved the note (from `path` to `new_path`).
    pub fn moved(&self) -> bool {
        self.new_path.as_deref().is_some_and(|new| new != self.path)
    }

    /// Whether this version is of the note at `path` (where it was, or where the change put it).
    pub fn touches(&self, path: &str) -> bool {
        self.path == path || self.new_path.as_deref() == Some(path)
    }
}

/// Records a change and its versions; answers the change's id. An agent's change is refused when
/// its connection's versions and these would keep more than `budget` bytes; the owner's never is.
pub async fn record(
    pool: &Pool,
    change: &ChangeRecord,
    versions: &[NewVersion],
    budget: i64,
) -> Result<i64, RecordError> {
    let mut tx = db::begin_write(pool).await?;
    let change_id: i64 = sqlx::query_scalar(
        "INSERT INTO note_changes (at, actor, connection_id, label, tool, proposal_id, reverted, done)
         VALUES (?, ?, ?, ?, ?, ?, ?, 0) RETURNING id",
    )
    .bind(crate::clock::unix_now())
    .bind(change.by.author.as_str())
    .bind(&change.by.connection_id)
    .bind(&change.by.label)
    .bind(&change.tool)
    .bind(change.proposal_id)
    .bind(change.reverted)
    .fetch_one(&mut *tx)
    .await?;
    let connection_id = change.by.connection_id.as_deref();
    let mut charged_in_change = HashSet::new();
    let mut adding = 0;
    for version in versions {
        let version_id: i64 = sqlx::query_scalar(
            "INSERT INTO note_versions (change_id, path, new_path, before, before_hash, after_hash, size, chunked)
             VALUES (?, ?, ?, NULL, ?, ?, ?, ?) RETURNING id",
        )
        .bind(change_id)
        .bind(&version.path)
        .bind(&version.new_path)
        .bind(&version.before_hash)
        .bind(&version.after_hash)
        .bind(version.before.as_ref().map_or(0, |b| b.len() as i64))
        .bind(version.before.is_some())
        .fetch_one(&mut *tx)
        .await?;
        if let Some(before) = &version.before {
            let charged = chunks::store(&mut tx, version_id, before, connection_id, &mut charged_in_change).await?;
            sqlx::query("UPDATE note_versions SET charged = ? WHERE id = ?")
                .bind(charged)
                .bind(version_id)
                .execute(&mut *tx)
                .await?;
            adding += charged;
        }
    }
    if let Some(connection_id) = connection_id {
        // What this change adds was counted against the connection's own earlier versions only, so
        // the sum below (which includes it) is what the connection keeps with it.
        let kept = kept_by(&mut tx, connection_id).await?;
        if adding > 0 && kept > budget {
            return Err(RecordError::Full { limit: budget });
        }
    }
    tx.commit().await?;
    Ok(change_id)
}

/// The bytes an agent connection's history keeps against its budget: what its notes' versions were
/// charged, and the graph's changes it made (`graph::history`), which count the same way.
pub async fn kept_by(conn: &mut sqlx::SqliteConnection, connection_id: &str) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar(
        "SELECT (SELECT coalesce(sum(v.charged), 0) FROM note_versions v JOIN note_changes c ON c.id = v.change_id
                 WHERE c.connection_id = ?1)
              + (SELECT coalesce(sum(size), 0) FROM graph_changes WHERE connection_id = ?1)",
    )
    .bind(connection_id)
    .fetch_one(conn)
    .await
}

/// Whether a change of the history left the note at `path` with the bytes of `hash` (the changes'
/// gate wrote it, not the owner's hand).
pub async fn wrote(pool: &Pool, path: &str, hash: &str) -> Result<bool, sqlx::Error> {
    let found: Option<i64> =
        sqlx::query_scalar("SELECT 1 FROM note_versions WHERE new_path = ? AND after_hash = ? LIMIT 1")
            .bind(path)
            .bind(hash)
            .fetch_optional(pool)
            .await?;
    Ok(found.is_some())
}

/// Marks a change whose files are all written as done (in the caller's transaction, which for an
/// accepted proposal also records the decision).
pub async fn finish(tx: &mut sqlx::SqliteConnection, change_id: i64) -> Result<(), sqlx::Error> {
    sqlx::query("UPDATE note_changes SET done = 1 WHERE id = ?")
        .bind(change_id)
        .execute(tx)
        .await?;
    Ok(())
}

/// The changes recorded and never marked done, oldest first: left by a process that died while
/// writing their files (the caller holds the notes' writer, so no live process is writing them).
pub async fn unfinished(pool: &Pool) -> Result<Vec<i64>, sqlx::Error> {
    sqlx::query_scalar("SELECT id FROM note_changes WHERE done = 0 ORDER BY id")
        .fetch_all(pool)
        .await
}

/// Forgets a change whose files were not changed after all, with the chunks only it held.
pub async fn forget(pool: &Pool, change_id: i64) -> Result<(), sqlx::Error> {
    let mut tx = db::begin_write(pool).await?;
    sqlx::query("DELETE FROM note_changes WHERE id = ?")
        .bind(change_id)
        .execute(&mut *tx)
        .await?;
    chunks::drop_unheld(&mut tx).await?;
    tx.commit().await?;
    Ok(())
}

const VERSION_COLUMNS: &str = "v.id, v.change_id, c.at, c.actor, c.label, c.tool, c.proposal_id, c.reverted, \
                               v.path, v.new_path, v.before_hash, v.after_hash, v.size";

fn version_of(row: &sqlx::sqlite::SqliteRow) -> Version {
    Version {
        id: row.get(0),
        change_id: row.get(1),
        at: row.get(2),
        actor: row.get(3),
        label: row.get(4),
        tool: row.get(5),
        proposal_id: row.get(6),
        reverted: row.get(7),
        path: row.get(8),
        new_path: row.get(9),
        before_hash: row.get(10),
        after_hash: row.get(11),
        size: row.get(12),
    }
}

/// The versions of rows selected with `v.before, v.chunked` after the version's columns, each with
/// the file it keeps (None: the change created the note).
async fn with_files(
    pool: &Pool,
    rows: &[sqlx::sqlite::SqliteRow],
) -> Result<Vec<(Version, Option<Vec<u8>>)>, sqlx::Error> {
    let mut db = pool.acquire().await?;
    let mut out = Vec::with_capacity(rows.len());
    for row in rows {
        let version = version_of(row);
        let inline: Option<Vec<u8>> = row.get(13);
        let chunked: bool = row.get(14);
        let file = match (inline, chunked) {
            (Some(bytes), _) => Some(bytes),
            (None, true) => Some(chunks::load(&mut db, version.id, version.before_hash.as_deref()).await?),
            (None, false) => None,
        };
        out.push((version, file));
    }
    Ok(out)
}

/// The versions of the note at `path` (as it was or became), newest first.
pub async fn of_path(pool: &Pool, path: &str, limit: i64) -> Result<Vec<Version>, sqlx::Error> {
    let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT {VERSION_COLUMNS} FROM note_versions v JOIN note_changes c ON c.id = v.change_id
         WHERE v.path = ?1 OR v.new_path = ?1 ORDER BY v.id DESC LIMIT ?2"
    )))
    .bind(path)
    .bind(limit)
    .fetch_all(pool)
    .await?;
    Ok(rows.iter().map(version_of).collect())
}

/// The versions of the note at `path` with the files they keep (None: the change created the
/// note), newest first: one query for a note's page.
pub async fn of_path_kept(pool: &Pool, path: &str, limit: i64) -> Result<Vec<(Version, Option<Vec<u8>>)>, sqlx::Error> {
    let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT {VERSION_COLUMNS}, v.before, v.chunked FROM note_versions v JOIN note_changes c ON c.id = v.change_id
         WHERE v.path = ?1 OR v.new_path = ?1 ORDER BY v.id DESC LIMIT ?2"
    )))
    .bind(path)
    .bind(limit)
    .fetch_all(pool)
    .await?;
    with_files(pool, &rows).await
}

/// The most recent versions of any note, newest first.
pub async fn recent(pool: &Pool, limit: i64) -> Result<Vec<Version>, sqlx::Error> {
    let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT {VERSION_COLUMNS} FROM note_versions v JOIN note_changes c ON c.id = v.change_id
         ORDER BY v.id DESC LIMIT ?"
    )))
    .bind(limit)
    .fetch_all(pool)
    .await?;
    Ok(rows.iter().map(version_of).collect())
}

/// One version and the file it keeps (None: the change created the note).
pub async fn get(pool: &Pool, id: i64) -> Result<Option<(Version, Option<Vec<u8>>)>, sqlx::Error> {
    let row = sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT {VERSION_COLUMNS}, v.before, v.chunked FROM note_versions v JOIN note_changes c ON c.id = v.change_id
         WHERE v.id = ?"
    )))
    .bind(id)
    .fetch_optional(pool)
    .await?;
    Ok(with_files(pool, row.as_slice()).await?.pop())
}

/// Every version of one change, with the files they keep.
pub async fn of_change(pool: &Pool, change_id: i64) -> Result<Vec<(Version, Option<Vec<u8>>)>, sqlx::Error> {
    let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT {VERSION_COLUMNS}, v.before, v.chunked FROM note_versions v JOIN note_changes c ON c.id = v.change_id
         WHERE v.change_id = ? ORDER BY v.path"
    )))
    .bind(change_id)
    .fetch_all(pool)
    .await?;
    with_files(pool, &rows).await
}

/// Whether a change moved a note (a move, or the undo of one): one look at its paths, without the
/// files its versions keep.
pub async fn moved_any(pool: &Pool, change_id: i64) -> Result<bool, sqlx::Error> {
    sqlx::query_scalar(
        "SELECT EXISTS (SELECT 1 FROM note_versions WHERE change_id = ? AND new_path IS NOT NULL AND new_path != path)",
    )
    .bind(change_id)
    .fetch_one(pool)
    .await
}

/// The trash: the deletions agents made (`note_delete`), newest first, each with the notes it took.
pub async fn deletions(pool: &Pool, limit: i64) -> Result<Vec<(i64, Vec<Version>)>, sqlx::Error> {
    let ids: Vec<i64> =
        sqlx::query_scalar("SELECT id FROM note_changes WHERE tool = 'note_delete' ORDER BY id DESC LIMIT ?")
            .bind(limit)
            .fetch_all(pool)
            .await?;
    let mut out = Vec::new();
    for id in ids {
        let versions = of_change(pool, id).await?.into_iter().map(|(v, _)| v).collect();
        out.push((id, versions));
    }
    Ok(out)
}

/// Drops the changes older than `KEEP_DAYS`, with their versions and the chunks no other version
/// holds. Answers how many changes went.
pub async fn prune(pool: &Pool, now: i64) -> Result<u64, sqlx::Error> {
    let mut tx = db::begin_write(pool).await?;
    let gone = sqlx::query("DELETE FROM note_changes WHERE at < ?")
        .bind(now - KEEP_DAYS * 86_400)
        .execute(&mut *tx)
        .await?
        .rows_affected();
    if gone > 0 {
        chunks::drop_unheld(&mut tx).await?;
    }
    tx.commit().await?;
    Ok(gone)
}

#[cfg(test)]
mod tests {
    use super::*;

    const BUDGET: i64 = KEEP_BYTES_PER_CONNECTION;

    async fn pool() -> (tempfile::TempDir, Pool) {
        let dir = tempfile::tempdir().unwrap();
        let pool = db::open(&dir.path().join("journal.db")).await.unwrap();
        (dir, pool)
    }

    fn change(tool: &str) -> ChangeRecord {
        ChangeRecord {
            by: ChangedBy::agent("c1", "Claude Code"),
            tool: tool.into(),
            proposal_id: None,
            reverted: None,
        }
    }

    fn version(path: &str, before: Option<&[u8]>) -> NewVersion {
        NewVersion {
            path: path.into(),
            new_path: Some(path.into()),
            before: before.map(<[u8]>::to_vec),
            before_hash: before.map(crate::journal::notes::note::hash_hex),
            after_hash: Some("after".into()),
        }
    }

    #[tokio::test]
    async fn records_lists_and_forgets() {
        let (_dir, pool) = pool().await;
        let first = record(&pool, &change("note_create"), &[version("a.md", None)], BUDGET)
            .await
            .unwrap();
        let second = record(&pool, &change("note_append"), &[version("a.md", Some(b"one"))], BUDGET)
            .await
            .unwrap();
        let listed = of_path(&pool, "a.md", 10).await.unwrap();
        assert_eq!(listed.len(), 2);
        assert_eq!(listed[0].change_id, second);
        assert_eq!(listed[0].actor, "agent:claude-code");
        assert_eq!(listed[0].size, 3);
        let (kept, before) = get(&pool, listed[0].id).await.unwrap().unwrap();
        assert_eq!(kept.tool, "note_append");
        assert_eq!(before.as_deref(), Some(&b"one"[..]));
        assert_eq!(get(&pool, listed[1].id).await.unwrap().unwrap().1, None);
        forget(&pool, first).await.unwrap();
        assert_eq!(of_path(&pool, "a.md", 10).await.unwrap().len(), 1);
        assert!(of_path(&pool, "b.md", 10).await.unwrap().is_empty());
    }

    #[tokio::test]
    async fn prune_drops_only_what_passed_its_days() {
        let (_dir, pool) = pool().await;
        let old = record(&pool, &change("note_write"), &[version("a.md", Some(b"x"))], BUDGET)
            .await
            .unwrap();
        sqlx::query("UPDATE note_changes SET at = at - ? WHERE id = ?")
            .bind((KEEP_DAYS + 1) * 86_400)
            .bind(old)
            .execute(&pool)
            .await
            .unwrap();
        let kept = record(&pool, &change("note_write"), &[version("a.md", Some(b"y"))], BUDGET)
            .await
            .unwrap();
        assert_eq!(prune(&pool, crate::clock::unix_now()).await.unwrap(), 1);
        let left = of_path(&pool, "a.md", 10).await.unwrap();
        assert_eq!(left.iter().map(|v| v.change_id).collect::<Vec<_>>(), vec![kept]);
    }

    /// An agent's churn never pushes out what it did before (the owner's undo, the trash): past its
    /// budget its changes are refused, while another agent and the owner go on.
    #[tokio::test]
    async fn an_agent_past_its_budget_is_refused_and_nothing_older_goes() {
        let (_dir, pool) = pool().await;
        let budget = 10;
        let delete = NewVersion {
            new_path: None,
            after_hash: None,
            ..version("precious.md", Some(b"12345"))
        };
        let deletion = record(&pool, &change("note_delete"), &[delete], budget).await.unwrap();
        record(
            &pool,
            &change("note_append"),
            &[version("scratch.md", Some(b"1234"))],
            budget,
        )
        .await
        .unwrap();
        let full = record(
            &pool,
            &change("note_append"),
            &[version("scratch.md", Some(b"12"))],
            budget,
        )
        .await
        .unwrap_err();
        assert!(matches!(full, RecordError::Full { limit: 10 }), "{full}");
        assert!(full.to_string().contains("nothing was changed"));
        assert_eq!(prune(&pool, crate::clock::unix_now()).await.unwrap(), 0);
        assert_eq!(deletions(&pool, 10).await.unwrap()[0].0, deletion);
        let other = ChangeRecord {
            by: ChangedBy::agent("c2", "Codex"),
            ..change("note_append")
        };
        record(&pool, &other, &[version("scratch.md", Some(b"123456789"))], budget)
            .await
            .unwrap();
        let owner = ChangeRecord {
            by: ChangedBy::owner(),
            ..change("revert")
        };
        record(&pool, &owner, &[version("scratch.md", Some(&[0; 64]))], budget)
            .await
            .unwrap();
    }

    async fn charged(pool: &Pool, change_id: i64) -> i64 {
        sqlx::query_scalar("SELECT sum(charged) FROM note_versions WHERE change_id = ?")
            .bind(change_id)
            .fetch_one(pool)
            .await
            .unwrap()
    }

    async fn stored_bytes(pool: &Pool) -> i64 {
        sqlx::query_scalar("SELECT coalesce(sum(length(bytes)), 0) FROM history_chunks")
            .fetch_one(pool)
            .await
            .unwrap()
    }

    /// Text that does not repeat (a linear congruential stream of letters, spaces and lines).
    fn prose(len: usize, seed: u8) -> Vec<u8> {
        let mut state = u64::from(seed) + 1;
        (0..len)
            .map(|_| {
                state = state
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                b"abcdefghijklmnopqrstuvwxyz  \n"[((state >> 33) % 29) as usize]
            })
            .collect()
    }

    /// The churn of the finding: appends to one long note keep what each added, not the note again.
    #[tokio::test]
    async fn appends_keep_what_they_added_and_files_come_back_whole() {
        let (_dir, pool) = pool().await;
        let mut note = prose(200_000, 1);
        let mut changes = Vec::new();
        for round in 0..20u8 {
            let id = record(
                &pool,
                &change("note_append"),
                &[version("long.md", Some(&note))],
                BUDGET,
            )
            .await
            .unwrap();
            changes.push((id, note.clone()));
            note.extend_from_slice(&prose(3_000, round));
        }
        let total_charged: i64 = sqlx::query_scalar("SELECT sum(charged) FROM note_versions")
            .fetch_one(&pool)
            .await
            .unwrap();
        // The first keeps the whole note; each later one about 3 KB and the chunk it ended in.
        assert!(total_charged < 200_000 + 20 * (3_000 + 16 * 1024), "{total_charged}");
        assert!(stored_bytes(&pool).await < 200_000 + 20 * (3_000 + 16 * 1024));
        for (id, file) in changes {
            let kept = of_change(&pool, id).await.unwrap();
            assert_eq!(kept[0].1.as_deref(), Some(&file[..]), "change {id}");
            assert_eq!(kept[0].0.size, file.len() as i64);
        }
    }

    /// What one connection is charged depends on its own versions only: text another author's
    /// version holds costs it the same, so the budget tells nothing of what is in the history.
    #[tokio::test]
    async fn a_connection_is_charged_whatever_other_authors_hold() {
        let (_dir, pool) = pool().await;
        let secret = prose(30_000, 7);
        let owner = ChangeRecord {
            by: ChangedBy::owner(),
            ..change("revert")
        };
        let by_owner = record(&pool, &owner, &[version("hidden.md", Some(&secret))], BUDGET)
            .await
            .unwrap();
        assert_eq!(charged(&pool, by_owner).await, 0);
        let stored = stored_bytes(&pool).await;
        let first = record(
            &pool,
            &change("note_write"),
            &[version("mine.md", Some(&secret))],
            BUDGET,
        )
        .await
        .unwrap();
        assert_eq!(charged(&pool, first).await, secret.len() as i64);
        assert_eq!(stored_bytes(&pool).await, stored, "stored once");
        let again = record(
            &pool,
            &change("note_write"),
            &[version("mine.md", Some(&secret))],
            BUDGET,
        )
        .await
        .unwrap();
        assert_eq!(charged(&pool, again).await, 0, "its own versions held it already");
    }

    #[tokio::test]
    async fn chunks_go_with_the_last_version_that_held_them() {
        let (_dir, pool) = pool().await;
        let shared = prose(40_000, 2);
        let old = record(&pool, &change("note_write"), &[version("a.md", Some(&shared))], BUDGET)
            .await
            .unwrap();
        let mut other = shared.clone();
        other.extend_from_slice(&prose(20_000, 3));
        let kept = record(&pool, &change("note_write"), &[version("b.md", Some(&other))], BUDGET)
            .await
            .unwrap();
        let lonely = record(
            &pool,
            &change("note_write"),
            &[version("c.md", Some(&prose(9_000, 9)))],
            BUDGET,
        )
        .await
        .unwrap();
        let before = stored_bytes(&pool).await;
        forget(&pool, lonely).await.unwrap();
        assert!(stored_bytes(&pool).await <= before - 9_000);
        sqlx::query("UPDATE note_changes SET at = at - ? WHERE id = ?")
            .bind((KEEP_DAYS + 1) * 86_400)
            .bind(old)
            .execute(&pool)
            .await
            .unwrap();
        assert_eq!(prune(&pool, crate::clock::unix_now()).await.unwrap(), 1);
        assert_eq!(of_change(&pool, kept).await.unwrap()[0].1.as_deref(), Some(&other[..]));
        let held: i64 = sqlx::query_scalar(
            "SELECT coalesce(sum(length(c.bytes)), 0) FROM history_chunks c
             WHERE c.hash IN (SELECT hash FROM version_chunks)",
        )
        .fetch_one(&pool)
        .await
        .unwrap();
        assert_eq!(
            held,
            stored_bytes(&pool).await,
            "no chunk is left that no version holds"
        );
    }

    #[tokio::test]
    async fn a_damaged_chunk_is_an_error_not_a_wrong_file() {
        let (_dir, pool) = pool().await;
        let id = record(
            &pool,
            &change("note_write"),
            &[version("a.md", Some(b"the note as it was"))],
            BUDGET,
        )
        .await
        .unwrap();
        sqlx::query("UPDATE history_chunks SET bytes = 'something else'")
            .execute(&pool)
            .await
            .unwrap();
        let error = of_change(&pool, id).await.unwrap_err();
        assert!(error.to_string().contains("damaged"), "{error}");
    }

    /// Versions recorded before the chunks (the file in `before`) still read back.
    #[tokio::test]
    async fn versions_from_before_the_chunks_still_read() {
        let (_dir, pool) = pool().await;
        let id = record(
            &pool,
            &change("note_write"),
            &[version("a.md", Some(b"new way"))],
            BUDGET,
        )
        .await
        .unwrap();
        sqlx::query("UPDATE note_versions SET before = 'old way', chunked = 0, before_hash = NULL")
            .execute(&pool)
            .await
            .unwrap();
        assert_eq!(
            of_change(&pool, id).await.unwrap()[0].1.as_deref(),
            Some(&b"old way"[..])
        );
    }
}
