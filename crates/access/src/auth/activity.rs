//! Reading the audit log for the owner: entries filtered by connection, tool, outcome and day, a
//! page at a time, and calls per day for the activity chart. The owner app and `journal mcp
//! activity` both read through here, so they filter alike.
//!
//! Days are UTC days, as everywhere in the journal's access state. Every query is fixed SQL with
//! bound parameters; a filter that is not given matches everything.

use std::collections::BTreeMap;

use sqlx::Row;

use super::AuthError;
use super::audit::{self, Entry, Outcome};
use crate::db::Pool;
use crate::journal::day::Day;

/// Which calls to show. Every field narrows; none set shows every call.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Filter {
    /// One connection, by id (the log keeps the id of revoked connections too).
    pub connection_id: Option<String>,
    /// One tool, by name.
    pub tool: Option<String>,
    pub outcome: Option<Outcome>,
    /// One UTC day.
    pub day: Option<Day>,
    /// Only changes (calls of write tools) or only the other calls.
    pub kind: Option<Kind>,
}

/// Calls of write tools, or every other call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Changes,
    Reads,
}

impl Kind {
    pub const ALL: [Kind; 2] = [Kind::Changes, Kind::Reads];

    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Changes => "changes",
            Kind::Reads => "reads",
        }
    }

    pub fn parse(text: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.as_str() == text)
    }

    /// The SQL parameter: whether the call's `write_mode` is set.
    fn is_change(kind: Option<Kind>) -> Option<bool> {
        kind.map(|k| k == Kind::Changes)
    }
}

impl Filter {
    fn day_start(&self) -> Option<i64> {
        self.day.map(|day| day.epoch_days() * SECONDS_PER_DAY)
    }
}

const SECONDS_PER_DAY: i64 = 86_400;

/// One page of entries, newest first.
#[derive(Debug, Clone)]
pub struct Page {
    pub entries: Vec<Entry>,
    /// Where the next (older) page starts, when there is one: pass it back as `before`.
    pub older: Option<i64>,
}

/// The entries that match `filter`, newest first, at most `limit`, older than the entry `before`
/// when given (the `older` of the page before).
pub async fn page(pool: &Pool, filter: &Filter, before: Option<i64>, limit: i64) -> Result<Page, AuthError> {
    let limit = limit.clamp(1, 10_000);
    let rows = sqlx::query(
        "SELECT id, at, connection_id, connection_label, tool, arguments_sha256, outcome, detail, path, write_mode
         FROM audit
         WHERE (?1 IS NULL OR connection_id = ?1) AND (?2 IS NULL OR tool = ?2) AND (?3 IS NULL OR outcome = ?3)
           AND (?4 IS NULL OR (at >= ?4 AND at < ?4 + 86400)) AND (?5 IS NULL OR id < ?5)
           AND (?7 IS NULL OR (write_mode IS NOT NULL) = ?7)
         ORDER BY id DESC LIMIT ?6",
    )
    .bind(&filter.connection_id)
    .bind(&filter.tool)
    .bind(filter.outcome.map(Outcome::as_str))
    .bind(filter.day_start())
    .bind(before)
    .bind(limit + 1)
    .bind(Kind::is_change(filter.kind))
    .fetch_all(pool)
    .await?;
    let mut entries: Vec<Entry> = rows.iter().map(audit::entry_from).collect();
    let older = (entries.len() as i64 > limit).then(|| {
        entries.truncate(limit as usize);
        entries.last().map_or(0, |entry| entry.id)
    });
    Ok(Page { entries, older })
}

/// Calls on one day by one connection with one outcome.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DayCount {
    pub day: Day,
    pub connection_id: String,
    /// The connection's label at its latest call that day.
    pub connection_label: String,
    pub outcome: String,
    pub calls: i64,
}

/// Calls per day, connection and outcome over the days `first..=last`, for the calls that match
/// `filter` apart from its day (the chart shows the days around the one chosen).
pub async fn per_day(pool: &Pool, filter: &Filter, first: Day, last: Day) -> Result<Vec<DayCount>, AuthError> {
    let from = first.epoch_days() * SECONDS_PER_DAY;
    let to = (last.epoch_days() + 1) * SECONDS_PER_DAY;
    let rows = sqlx::query(
        // SQLite takes a bare column from the row that holds the one max(): the label of the newest call.
        "SELECT at / 86400 AS day, connection_id, connection_label, outcome, count(*), max(id) FROM audit
         WHERE at >= ?1 AND at < ?2 AND (?3 IS NULL OR connection_id = ?3) AND (?4 IS NULL OR tool = ?4)
           AND (?5 IS NULL OR outcome = ?5) AND (?6 IS NULL OR (write_mode IS NOT NULL) = ?6)
         GROUP BY day, connection_id, outcome ORDER BY day, connection_id, outcome",
    )
    .bind(from)
    .bind(to)
    .bind(&filter.connection_id)
    .bind(&filter.tool)
    .bind(filter.outcome.map(Outcome::as_str))
    .bind(Kind::is_change(filter.kind))
    .fetch_all(pool)
    .await?;
    Ok(rows
        .into_iter()
        .map(|row| DayCount {
            day: Day::from_epoch_days(row.get(0)),
            connection_id: row.get(1),
            connection_label: row.get(2),
            outcome: row.get(3),
            calls: row.get(4),
        })
        .collect())
}

/// Connections that appear in the log, by id, with their latest label: revoked connections keep
/// their history, and the owner can still filter by them.
pub async fn connections_seen(pool: &Pool) -> Result<BTreeMap<String, String>, AuthError> {
    // A skip scan over the (connection_id, id) index: each step seeks the next connection id, and
    // its newest record gives the label. A GROUP BY read every record (1.9 s on a million; this
    // takes about a millisecond).
    let rows = sqlx::query(
        "WITH RECURSIVE ids(id) AS (
           SELECT min(connection_id) FROM audit
           UNION ALL
           SELECT (SELECT min(connection_id) FROM audit WHERE connection_id > ids.id) FROM ids WHERE ids.id IS NOT NULL)
         SELECT id, (SELECT connection_label FROM audit WHERE connection_id = ids.id ORDER BY id DESC LIMIT 1)
         FROM ids WHERE id IS NOT NULL",
    )
    .fetch_all(pool)
    .await?;
    Ok(rows.into_iter().map(|row| (row.get(0), row.get(1))).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::audit::{AuditLog, Record};

    async fn log_with_calls() -> (tempfile::TempDir, Pool) {
        let dir = tempfile::tempdir().unwrap();
        let pool = crate::db::open(&dir.path().join("journal.db")).await.unwrap();
        let log = AuditLog::start(pool.clone());
        let calls = [
            ("a", "alpha", "search", Outcome::Served),
            ("a", "alpha", "search", Outcome::Empty),
            ("b", "beta", "fetch", Outcome::Refused),
            ("a", "Alpha renamed", "fetch", Outcome::Served),
        ];
        for (id, label, tool, outcome) in calls {
            log.record(Record {
                connection_id: id.into(),
                connection_label: label.into(),
                tool: tool.into(),
                arguments: serde_json::json!({}),
                outcome,
                detail: String::new(),
                change: tool.starts_with("note_").then(|| crate::auth::audit::WriteTarget {
                    path: "Inbox.md".into(),
                    write_mode: "force".into(),
                }),
            })
            .await
            .unwrap();
        }
        (dir, pool)
    }

    #[tokio::test]
    async fn changes_are_shown_apart_from_reads() {
        let (_dir, pool) = log_with_calls().await;
        let log = AuditLog::start(pool.clone());
        log.record(Record {
            connection_id: "b".into(),
            connection_label: "beta".into(),
            tool: "note_append".into(),
            arguments: serde_json::json!({"path": "Inbox.md"}),
            outcome: Outcome::Served,
            detail: String::new(),
            change: Some(crate::auth::audit::WriteTarget {
                path: "Inbox.md".into(),
                write_mode: "force".into(),
            }),
        })
        .await
        .unwrap();
        let of = |kind| Filter {
            kind: Some(kind),
            ..Filter::default()
        };
        let changes = page(&pool, &of(Kind::Changes), None, 100).await.unwrap().entries;
        assert_eq!(changes.len(), 1);
        let change = changes[0].change.clone().unwrap();
        assert_eq!(
            (change.path.as_str(), change.write_mode.as_str()),
            ("Inbox.md", "force")
        );
        let reads = page(&pool, &of(Kind::Reads), None, 100).await.unwrap().entries;
        assert_eq!(reads.len(), 4);
        assert!(reads.iter().all(|e| e.change.is_none()));
        let today = Day::from_epoch_days(changes[0].at.div_euclid(86_400));
        let counted: i64 = per_day(&pool, &of(Kind::Changes), today, today)
            .await
            .unwrap()
            .iter()
            .map(|c| c.calls)
            .sum();
        assert_eq!(counted, 1);
        assert_eq!(Kind::parse("changes"), Some(Kind::Changes));
        assert_eq!(Kind::parse("writes"), None);
    }

    #[tokio::test]
    async fn filters_narrow_and_pages_continue() {
        let (_dir, pool) = log_with_calls().await;
        let all = page(&pool, &Filter::default(), None, 100).await.unwrap();
        assert_eq!(all.entries.len(), 4);
        assert_eq!(all.older, None);
        assert!(all.entries.windows(2).all(|w| w[0].id > w[1].id), "newest first");

        let first = page(&pool, &Filter::default(), None, 3).await.unwrap();
        assert_eq!(first.entries.len(), 3);
        let rest = page(&pool, &Filter::default(), first.older, 3).await.unwrap();
        assert_eq!(rest.entries.len(), 1);
        assert_eq!(rest.older, None);
        assert_eq!(rest.entries[0].tool, "search");

        let only = |filter: Filter| {
            let pool = pool.clone();
            async move { page(&pool, &filter, None, 100).await.unwrap().entries.len() }
        };
        let by = |connection: &str| Filter {
            connection_id: Some(connection.into()),
            ..Filter::default()
        };
        assert_eq!(only(by("a")).await, 3);
        assert_eq!(only(by("nobody")).await, 0);
        let fetches = Filter {
            tool: Some("fetch".into()),
            ..Filter::default()
        };
        assert_eq!(only(fetches).await, 2);
        let refused = Filter {
            outcome: Some(Outcome::Refused),
            ..Filter::default()
        };
        assert_eq!(only(refused).await, 1);
        // The day the calls were recorded on (read back, so a run across midnight still agrees).
        let recorded = Day::from_epoch_days(all.entries[0].at.div_euclid(86_400));
        assert_eq!(all.entries[3].at.div_euclid(86_400), recorded.epoch_days(), "one day");
        let that_day = Filter {
            day: Some(recorded),
            ..Filter::default()
        };
        assert_eq!(only(that_day).await, 4);
        let the_day_before = Filter {
            day: Some(recorded.minus_days(1)),
            ..Filter::default()
        };
        assert_eq!(only(the_day_before).await, 0);
    }

    #[tokio::test]
    async fn calls_per_day_group_by_connection_and_outcome() {
        let (_dir, pool) = log_with_calls().await;
        let newest = page(&pool, &Filter::default(), None, 1).await.unwrap().entries[0].at;
        let today = Day::from_epoch_days(newest.div_euclid(86_400));
        let counts = per_day(&pool, &Filter::default(), today.minus_days(13), today)
            .await
            .unwrap();
        let total: i64 = counts.iter().map(|c| c.calls).sum();
        assert_eq!(total, 4);
        let alpha_served = counts
            .iter()
            .find(|c| c.connection_id == "a" && c.outcome == "served")
            .unwrap();
        assert_eq!(alpha_served.calls, 2);
        assert_eq!(alpha_served.day, today);
        assert_eq!(alpha_served.connection_label, "Alpha renamed");
        let before = per_day(&pool, &Filter::default(), today.minus_days(20), today.minus_days(1))
            .await
            .unwrap();
        assert!(before.is_empty());

        let seen = connections_seen(&pool).await.unwrap();
        assert_eq!(seen.get("a").map(String::as_str), Some("Alpha renamed"));
        assert_eq!(seen.get("b").map(String::as_str), Some("beta"));
    }
}
