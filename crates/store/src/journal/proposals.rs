//! Proposals (`proposals` in `journal.db`): the changes agents in propose mode asked for, of either
//! kind (a change to notes, a change to the graph), each with the connection that asked, the tool
//! and arguments, the note's hash then and the diff, waiting for the owner's decision, and kept after
//! it so that the agent learns the outcome. This is their storage; the owner's review of them (one
//! at a time, either kind) is `journal_access::review`.

use sqlx::Row;

use crate::db::Pool;

/// At most this many proposals of one connection wait at once, holding at most this many bytes of
/// changes and diffs: an agent cannot bury the owner's review, nor fill the disk, with proposals.
pub const MAX_PENDING_PER_CONNECTION: i64 = 200;
pub const MAX_PENDING_BYTES_PER_CONNECTION: i64 = 64 * 1024 * 1024;
/// Decided proposals are kept this long for `my_proposals`, then forgotten.
pub const KEEP_DECIDED_DAYS: i64 = 90;

/// Where a proposal stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Pending,
    Accepted,
    Rejected,
}

impl Status {
    pub const ALL: [Status; 3] = [Status::Pending, Status::Accepted, Status::Rejected];

    pub fn as_str(self) -> &'static str {
        match self {
            Status::Pending => "pending",
            Status::Accepted => "accepted",
            Status::Rejected => "rejected",
        }
    }

    pub fn parse(text: &str) -> Option<Status> {
        Status::ALL.into_iter().find(|s| s.as_str() == text)
    }
}

/// What a proposal changes, stored with it: the kind decides which gate makes it when accepted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Notes in the vault (`notes::changes`); its change is a `notes::write::NoteChange`.
    Note,
    /// The graph (`graph::gate`); its change is a `graph::gate::GraphChange`.
    Graph,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Note => "note",
            Kind::Graph => "graph",
        }
    }

    pub fn parse(text: &str) -> Option<Kind> {
        [Kind::Note, Kind::Graph].into_iter().find(|k| k.as_str() == text)
    }
}

/// A proposal to store.
#[derive(Debug, Clone)]
pub struct NewProposal {
    pub kind: Kind,
    pub connection_id: String,
    pub label: String,
    pub tool: String,
    /// The arguments as the agent sent them (JSON).
    pub arguments: String,
    /// The checked change (JSON of the kind's change).
    pub change: String,
    pub path: String,
    pub base_hash: Option<String>,
    pub diff: String,
}

/// A stored proposal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Proposal {
    pub id: i64,
    pub at: i64,
    pub kind: Kind,
    pub connection_id: String,
    pub label: String,
    pub tool: String,
    pub arguments: String,
    pub change: String,
    pub path: String,
    pub base_hash: Option<String>,
    pub diff: String,
    pub status: Status,
    pub decided_at: Option<i64>,
    pub reason: String,
    pub result_hash: Option<String>,
}

impl Proposal {
    /// Whether accepting it changes instructions for other agents (an `AGENTS.md`, a skill): every
    /// note it touches is named in its diff's headers, so a folder's move is judged by its notes.
    pub fn instructs(&self) -> bool {
        super::notes::rules::instructs(&self.path)
            || self.diff.lines().any(|line| {
                let path = ["--- a/", "+++ b/", "rename from ", "rename to "]
                    .iter()
                    .find_map(|header| line.strip_prefix(header))
                    .map(|p| p.trim_end());
                path.is_some_and(super::notes::rules::instructs)
            })
    }
}

/// Why a proposal was not stored.
#[derive(Debug, thiserror::Error)]
pub enum ProposalError {
    #[error(
        "{MAX_PENDING_PER_CONNECTION} of your proposals already wait for the owner's review; wait until the owner has \
         decided on some (my_proposals shows them)"
    )]
    TooMany,
    #[error(
        "your proposals that wait for the owner's review already hold 64 MiB of changes; wait until the owner has \
         decided on some (my_proposals shows them)"
    )]
    TooLarge,
    #[error(transparent)]
    Db(#[from] sqlx::Error),
}

/// Stores a proposal, unless too many of the connection's already wait; answers its id.
pub async fn insert(pool: &Pool, proposal: &NewProposal) -> Result<i64, ProposalError> {
    let mut tx = crate::db::begin_write(pool).await?;
    let (waiting, bytes): (i64, i64) = sqlx::query_as(
        "SELECT count(*), coalesce(sum(length(change) + length(diff)), 0) FROM proposals
         WHERE connection_id = ? AND status = 'pending'",
    )
    .bind(&proposal.connection_id)
    .fetch_one(&mut *tx)
    .await?;
    if waiting >= MAX_PENDING_PER_CONNECTION {
        return Err(ProposalError::TooMany);
    }
    if bytes + (proposal.change.len() + proposal.diff.len()) as i64 > MAX_PENDING_BYTES_PER_CONNECTION {
        return Err(ProposalError::TooLarge);
    }
    let id: i64 = sqlx::query_scalar(
        "INSERT INTO proposals (at, kind, connection_id, label, tool, arguments, change, path, base_hash, diff)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
    )
    .bind(crate::clock::unix_now())
    .bind(proposal.kind.as_str())
    .bind(&proposal.connection_id)
    .bind(&proposal.label)
    .bind(&proposal.tool)
    .bind(&proposal.arguments)
    .bind(&proposal.change)
    .bind(&proposal.path)
    .bind(&proposal.base_hash)
    .bind(&proposal.diff)
    .fetch_one(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(id)
}

const COLUMNS: &str = "id, at, connection_id, label, tool, arguments, change, path, base_hash, diff, status, \
                       decided_at, reason, result_hash, kind";

fn proposal_of(row: &sqlx::sqlite::SqliteRow) -> Proposal {
    let status: String = row.get(10);
    let kind: String = row.get(14);
    Proposal {
        id: row.get(0),
        at: row.get(1),
        connection_id: row.get(2),
        label: row.get(3),
        tool: row.get(4),
        arguments: row.get(5),
        change: row.get(6),
        path: row.get(7),
        base_hash: row.get(8),
        diff: row.get(9),
        // The table's CHECK allows only the three.
        status: Status::parse(&status).unwrap_or(Status::Pending),
        decided_at: row.get(11),
        reason: row.get(12),
        result_hash: row.get(13),
        // The table's CHECK allows only the two.
        kind: Kind::parse(&kind).unwrap_or(Kind::Note),
    }
}

/// Which proposals to list.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    pub connection_id: Option<String>,
    pub status: Option<Status>,
    /// Only proposals with a smaller id (the next page of a listing).
    pub before_id: Option<i64>,
    pub limit: i64,
}

/// Proposals, newest first.
pub async fn list(pool: &Pool, filter: &Filter) -> Result<Vec<Proposal>, sqlx::Error> {
    let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM proposals
         WHERE (?1 IS NULL OR connection_id = ?1) AND (?2 IS NULL OR status = ?2) AND (?3 IS NULL OR id < ?3)
         ORDER BY id DESC LIMIT ?4"
    )))
    .bind(&filter.connection_id)
    .bind(filter.status.map(Status::as_str))
    .bind(filter.before_id)
    .bind(filter.limit)
    .fetch_all(pool)
    .await?;
    Ok(rows.iter().map(proposal_of).collect())
}

pub async fn get(pool: &Pool, id: i64) -> Result<Option<Proposal>, sqlx::Error> {
    let row = sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM proposals WHERE id = ?"
    )))
    .bind(id)
    .fetch_optional(pool)
    .await?;
    Ok(row.as_ref().map(proposal_of))
}

/// How many proposals wait, of all connections.
pub async fn pending_count(pool: &Pool) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar("SELECT count(*) FROM proposals WHERE status = 'pending'")
        .fetch_one(pool)
        .await
}

/// Records the owner's decision on a pending proposal. Answers false when it was no longer pending
/// (decided meanwhile, in another window or by the CLI).
pub async fn decide(
    db: impl sqlx::SqliteExecutor<'_>,
    id: i64,
    status: Status,
    reason: &str,
    result_hash: Option<&str>,
) -> Result<bool, sqlx::Error> {
    let done = sqlx::query(
        "UPDATE proposals SET status = ?, decided_at = ?, reason = ?, result_hash = ? WHERE id = ? AND status = 'pending'",
    )
    .bind(status.as_str())
    .bind(crate::clock::unix_now())
    .bind(reason)
    .bind(result_hash)
    .bind(id)
    .execute(db)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Forgets decided proposals older than `KEEP_DECIDED_DAYS`; answers how many.
pub async fn prune(pool: &Pool, now: i64) -> Result<u64, sqlx::Error> {
    let done = sqlx::query("DELETE FROM proposals WHERE status != 'pending' AND decided_at < ?")
        .bind(now - KEEP_DECIDED_DAYS * 86_400)
        .execute(pool)
        .await?;
    Ok(done.rows_affected())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn proposal(connection: &str, path: &str) -> NewProposal {
        NewProposal {
            kind: Kind::Note,
            connection_id: connection.into(),
            label: "Codex".into(),
            tool: "note_append".into(),
            arguments: "{}".into(),
            change: "{}".into(),
            path: path.into(),
            base_hash: None,
            diff: String::new(),
        }
    }

    #[tokio::test]
    async fn stores_lists_decides_once_and_caps_what_waits() {
        let dir = tempfile::tempdir().unwrap();
        let pool = crate::db::open(&dir.path().join("journal.db")).await.unwrap();
        let a = insert(&pool, &proposal("c1", "a.md")).await.unwrap();
        let b = insert(&pool, &proposal("c2", "b.md")).await.unwrap();
        assert_eq!(pending_count(&pool).await.unwrap(), 2);
        assert!(decide(&pool, a, Status::Rejected, "not now", None).await.unwrap());
        assert!(!decide(&pool, a, Status::Accepted, "", Some("h")).await.unwrap());
        let got = get(&pool, a).await.unwrap().unwrap();
        assert_eq!((got.status, got.reason.as_str()), (Status::Rejected, "not now"));
        let mine = list(
            &pool,
            &Filter {
                connection_id: Some("c2".into()),
                limit: 10,
                ..Filter::default()
            },
        )
        .await
        .unwrap();
        assert_eq!(mine.iter().map(|p| p.id).collect::<Vec<_>>(), vec![b]);
        let pending = Filter {
            status: Some(Status::Pending),
            limit: 10,
            ..Filter::default()
        };
        assert_eq!(list(&pool, &pending).await.unwrap().len(), 1);
        for _ in 1..MAX_PENDING_PER_CONNECTION {
            insert(&pool, &proposal("c2", "b.md")).await.unwrap();
        }
        assert!(matches!(
            insert(&pool, &proposal("c2", "b.md")).await,
            Err(ProposalError::TooMany)
        ));
        // Another connection is not held back by it.
        insert(&pool, &proposal("c1", "a.md")).await.unwrap();
    }

    #[tokio::test]
    async fn waiting_proposals_are_bounded_in_bytes_and_old_decided_ones_are_forgotten() {
        let dir = tempfile::tempdir().unwrap();
        let pool = crate::db::open(&dir.path().join("journal.db")).await.unwrap();
        let mut big = proposal("c1", "a.md");
        big.diff = "x".repeat(20 * 1024 * 1024);
        for _ in 0..3 {
            insert(&pool, &big).await.unwrap();
        }
        assert!(matches!(insert(&pool, &big).await, Err(ProposalError::TooLarge)));
        assert!(decide(&pool, 1, Status::Rejected, "", None).await.unwrap());
        insert(&pool, &big).await.unwrap();
        let now = crate::clock::unix_now();
        assert_eq!(prune(&pool, now).await.unwrap(), 0, "a recent decision is kept");
        assert_eq!(prune(&pool, now + (KEEP_DECIDED_DAYS + 1) * 86_400).await.unwrap(), 1);
        assert!(get(&pool, 1).await.unwrap().is_none());
        assert!(
            get(&pool, 2).await.unwrap().is_some(),
            "waiting proposals are never forgotten"
        );
    }
}
