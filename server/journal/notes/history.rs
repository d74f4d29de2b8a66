//! The notes' history (`note_changes`, `note_versions` in `journal.db`): every change an agent made
//! to notes and every undo of the owner, with each touched note's file as it was before, so that any
//! agent change can be seen and undone.
//!
//! A version is recorded before the change reaches the file and forgotten if it then fails, so that
//! no change is ever on disk without the version that undoes it. Versions are kept for `KEEP_DAYS`
//! days, whoever made them. Space is budgeted per agent connection: one whose changes already keep
//! its budget of earlier versions (`KEEP_BYTES_PER_CONNECTION`, or `[notes] history_mib`) makes
//! no more until some pass their days. Nothing is ever dropped for space: an agent's churn can
//! never push out the owner's undo of what it did before, nor the trash, nor another agent's
//! versions.

use sqlx::Row;

use crate::db::{self, Pool};

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

/// Who made a change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Author {
    /// `agent:<slug of the label>`, or `owner`.
    pub actor: String,
    /// The agent's connection (None: the owner).
    pub connection_id: Option<String>,
    /// The connection's label (empty for the owner).
    pub label: String,
}

impl Author {
    pub fn agent(connection_id: &str, label: &str) -> Author {
        Author {
            actor: format!("agent:{}", super::access::slug(label)),
            connection_id: Some(connection_id.to_string()),
            label: label.to_string(),
        }
    }

    pub fn owner() -> Author {
        Author {
            actor: "owner".into(),
            connection_id: None,
            label: String::new(),
        }
    }
}

/// What a change is, beyond its versions.
#[derive(Debug, Clone)]
pub struct ChangeRecord {
    pub author: Author,
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
    /// Bytes of the file kept.
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
    if let Some(connection_id) = &change.author.connection_id {
        let kept: i64 = sqlx::query_scalar(
            "SELECT coalesce(sum(v.size), 0) FROM note_versions v JOIN note_changes c ON c.id = v.change_id
             WHERE c.connection_id = ?",
        )
        .bind(connection_id)
        .fetch_one(&mut *tx)
        .await?;
        let adding: i64 = versions
            .iter()
            .map(|v| v.before.as_ref().map_or(0, |b| b.len() as i64))
            .sum();
        if kept + adding > budget {
            return Err(RecordError::Full { limit: budget });
        }
    }
    let change_id: i64 = sqlx::query_scalar(
        "INSERT INTO note_changes (at, actor, connection_id, label, tool, proposal_id, reverted, done)
         VALUES (?, ?, ?, ?, ?, ?, ?, 0) RETURNING id",
    )
    .bind(crate::clock::unix_now())
    .bind(&change.author.actor)
    .bind(&change.author.connection_id)
    .bind(&change.author.label)
    .bind(&change.tool)
    .bind(change.proposal_id)
    .bind(change.reverted)
    .fetch_one(&mut *tx)
    .await?;
    for version in versions {
        sqlx::query(
            "INSERT INTO note_versions (change_id, path, new_path, before, before_hash, after_hash, size)
             VALUES (?, ?, ?, ?, ?, ?, ?)",
        )
        .bind(change_id)
        .bind(&version.path)
        .bind(&version.new_path)
        .bind(&version.before)
        .bind(&version.before_hash)
        .bind(&version.after_hash)
        .bind(version.before.as_ref().map_or(0, |b| b.len() as i64))
        .execute(&mut *tx)
        .await?;
    }
    tx.commit().await?;
    Ok(change_id)
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

/// Forgets a change whose files were not changed after all.
pub async fn forget(pool: &Pool, change_id: i64) -> Result<(), sqlx::Error> {
    sqlx::query("DELETE FROM note_changes WHERE id = ?")
        .bind(change_id)
        .execute(pool)
        .await?;
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
        "SELECT {VERSION_COLUMNS}, v.before FROM note_versions v JOIN note_changes c ON c.id = v.change_id
         WHERE v.path = ?1 OR v.new_path = ?1 ORDER BY v.id DESC LIMIT ?2"
    )))
    .bind(path)
    .bind(limit)
    .fetch_all(pool)
    .await?;
    Ok(rows.iter().map(|row| (version_of(row), row.get(13))).collect())
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
        "SELECT {VERSION_COLUMNS}, v.before FROM note_versions v JOIN note_changes c ON c.id = v.change_id
         WHERE v.id = ?"
    )))
    .bind(id)
    .fetch_optional(pool)
    .await?;
    Ok(row.map(|row| (version_of(&row), row.get(13))))
}

/// Every version of one change, with the files they keep.
pub async fn of_change(pool: &Pool, change_id: i64) -> Result<Vec<(Version, Option<Vec<u8>>)>, sqlx::Error> {
    let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT {VERSION_COLUMNS}, v.before FROM note_versions v JOIN note_changes c ON c.id = v.change_id
         WHERE v.change_id = ? ORDER BY v.path"
    )))
    .bind(change_id)
    .fetch_all(pool)
    .await?;
    Ok(rows.iter().map(|row| (version_of(row), row.get(13))).collect())
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

/// Drops the changes older than `KEEP_DAYS`, with their versions. Answers how many changes went.
pub async fn prune(pool: &Pool, now: i64) -> Result<u64, sqlx::Error> {
    Ok(sqlx::query("DELETE FROM note_changes WHERE at < ?")
        .bind(now - KEEP_DAYS * 86_400)
        .execute(pool)
        .await?
        .rows_affected())
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
            author: Author::agent("c1", "Claude Code"),
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
            author: Author::agent("c2", "Codex"),
            ..change("note_append")
        };
        record(&pool, &other, &[version("scratch.md", Some(b"123456789"))], budget)
            .await
            .unwrap();
        let owner = ChangeRecord {
            author: Author::owner(),
            ..change("revert")
        };
        record(&pool, &owner, &[version("scratch.md", Some(&[0; 64]))], budget)
            .await
            .unwrap();
    }
}
