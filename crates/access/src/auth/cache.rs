//! Verified credentials kept in a server's memory, so that a request whose credential was checked
//! a moment ago needs no query of `journal.db`.
//!
//! An entry is the connection (with its grant) that a credential named when it was last checked in
//! the database. It is trusted only while the access epoch (`auth::epoch`) still reads what it read
//! before that check: any change to access state, in this process or another, empties the cache,
//! and the next request checks again. Time limits (an access token's hour, a grant's 30 days) are
//! kept with the entry and checked on every hit.
//!
//! Entries are keyed by the route and the credential's SHA-256 digest, never the credential itself.
//! Only credentials that were found valid are kept, so a stranger's guesses cannot fill the cache;
//! it is bounded all the same, and emptied when full.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use super::Connection;
use super::epoch::EpochWatch;
use crate::db::Pool;

/// How many credentials are kept at most (a journal has at most 1,024 sign-ins plus its keys).
pub const MAX_ENTRIES: usize = 4096;

/// How often `last_used_at` is written at most (as `auth::connections` does on a database check).
pub const LAST_USED_GRANULARITY_SECONDS: i64 = 60;

/// A credential's digest as the cache keys it: the route's name and SHA-256 of the credential.
type Key = (&'static str, [u8; 32]);

/// The verified credentials of one server.
pub struct CredentialCache {
    watch: EpochWatch,
    state: Mutex<State>,
}

struct State {
    /// The epoch every entry was filled under.
    epoch: u64,
    /// The durable epoch as the last upkeep read it (None: not read yet).
    durable: Option<i64>,
    entries: HashMap<Key, Entry>,
}

struct Entry {
    /// Shared with the requests that found it, so a hit copies no strings.
    connection: Arc<Connection>,
    /// When the connection's use was last noted (kept here: the shared connection is not changed).
    last_used_at: Option<i64>,
    /// Unix seconds from which the credential is no longer valid (None: never, as for keys).
    valid_until: Option<i64>,
}

/// A credential found in the cache.
pub struct Hit {
    pub connection: Arc<Connection>,
    /// True when `last_used_at` is due to be written (the cache has already noted the new time).
    pub note_use: bool,
}

impl CredentialCache {
    /// A cache for the journal behind `pool`, empty.
    pub fn new(pool: &Pool) -> CredentialCache {
        let watch = EpochWatch::open(pool);
        let epoch = watch.current();
        CredentialCache {
            watch,
            state: Mutex::new(State {
                epoch,
                durable: None,
                entries: HashMap::new(),
            }),
        }
    }

    /// The epoch as it reads now. Read it before checking a credential in the database and hand it
    /// to `put`, so a change committed during the check is never cached as current.
    pub fn epoch(&self) -> u64 {
        self.watch.current()
    }

    /// The connection a credential names, if it was verified under `epoch` and is still in time.
    pub fn get(&self, route: &'static str, digest: &[u8; 32], epoch: u64, now: i64) -> Option<Hit> {
        let mut state = self.lock();
        if state.epoch != epoch {
            state.entries.clear();
            state.epoch = epoch;
            return None;
        }
        let key = (route, *digest);
        let entry = state.entries.get_mut(&key)?;
        if entry.valid_until.is_some_and(|until| now >= until) {
            state.entries.remove(&key);
            return None;
        }
        let note_use = is_use_due(entry.last_used_at, now);
        if note_use {
            entry.last_used_at = Some(now);
        }
        Some(Hit {
            connection: entry.connection.clone(),
            note_use,
        })
    }

    /// Keeps a credential that was just verified in the database, unless the epoch moved meanwhile.
    pub fn put(
        &self,
        route: &'static str,
        digest: &[u8; 32],
        epoch: u64,
        connection: &Arc<Connection>,
        valid_until: Option<i64>,
    ) {
        let mut state = self.lock();
        if state.epoch != epoch {
            // Either the epoch moved during the check (the result may be stale) or another request
            // already emptied the cache under a newer one; in both cases the next request checks again.
            return;
        }
        if state.entries.len() >= MAX_ENTRIES {
            state.entries.clear();
        }
        state.entries.insert(
            (route, *digest),
            Entry {
                last_used_at: connection.last_used_at,
                connection: connection.clone(),
                valid_until,
            },
        );
    }

    /// How many credentials are kept.
    pub fn len(&self) -> usize {
        self.lock().entries.len()
    }

    /// True when nothing is kept.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The periodic check (every 2 seconds in the server): follows a replaced epoch file, and empties
    /// the cache when the durable epoch in `journal.db` moved, which catches an access change whose
    /// announcement never came.
    pub async fn upkeep(&self, pool: &Pool) -> Result<(), sqlx::Error> {
        self.watch.reopen_if_replaced();
        let durable = super::epoch::durable(pool).await?;
        let mut state = self.lock();
        // The first reading clears too: a change before it could have been cached unannounced.
        if state.durable != Some(durable) {
            state.entries.clear();
        }
        state.durable = Some(durable);
        Ok(())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// True when a connection last used at `last_used_at` should have its use written at `now`.
pub fn is_use_due(last_used_at: Option<i64>, now: i64) -> bool {
    last_used_at.is_none_or(|t| now - t >= LAST_USED_GRANULARITY_SECONDS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::Grant;

    fn connection(id: &str, last_used_at: Option<i64>) -> Arc<Connection> {
        Arc::new(Connection {
            id: id.into(),
            kind: "key".into(),
            label: id.into(),
            created_at: 0,
            last_used_at,
            grant: Grant::empty(),
        })
    }

    async fn cache() -> (tempfile::TempDir, Pool, CredentialCache) {
        let dir = tempfile::tempdir().unwrap();
        let pool = crate::db::open(&dir.path().join("journal.db")).await.unwrap();
        let cache = CredentialCache::new(&pool);
        (dir, pool, cache)
    }

    #[tokio::test]
    async fn a_hit_needs_the_same_route_digest_and_epoch() {
        let (_dir, pool, cache) = cache().await;
        let epoch = cache.epoch();
        cache.put("local", &[1; 32], epoch, &connection("a", Some(100)), None);
        assert_eq!(cache.get("local", &[1; 32], epoch, 110).unwrap().connection.id, "a");
        assert!(cache.get("lan", &[1; 32], epoch, 110).is_none(), "another route");
        assert!(cache.get("local", &[2; 32], epoch, 110).is_none(), "another credential");
        super::super::epoch::announce(&pool);
        let moved = cache.epoch();
        assert_ne!(moved, epoch);
        assert!(
            cache.get("local", &[1; 32], moved, 110).is_none(),
            "a change empties the cache"
        );
        assert!(cache.is_empty());
    }

    #[tokio::test]
    async fn a_check_that_overlapped_a_change_is_not_kept() {
        let (_dir, pool, cache) = cache().await;
        let before = cache.epoch();
        super::super::epoch::announce(&pool);
        let after = cache.epoch();
        // A request under the new epoch comes first and empties the cache ...
        assert!(cache.get("local", &[1; 32], after, 0).is_none());
        // ... then the check that began before the change finishes: it is not kept.
        cache.put("local", &[1; 32], before, &connection("stale", None), None);
        assert!(cache.is_empty());
        // Nor is one that began before a change nobody has observed yet: the next request empties it.
        cache.put("local", &[1; 32], after, &connection("fresh", None), None);
        super::super::epoch::announce(&pool);
        assert!(cache.get("local", &[1; 32], cache.epoch(), 0).is_none());
    }

    #[tokio::test]
    async fn an_entry_ends_with_its_credential() {
        let (_dir, _pool, cache) = cache().await;
        let epoch = cache.epoch();
        cache.put("local", &[1; 32], epoch, &connection("a", Some(0)), Some(1000));
        assert!(cache.get("local", &[1; 32], epoch, 999).is_some());
        assert!(cache.get("local", &[1; 32], epoch, 1000).is_none());
        assert!(cache.is_empty());
    }

    #[tokio::test]
    async fn last_use_is_due_once_a_minute() {
        let (_dir, _pool, cache) = cache().await;
        let epoch = cache.epoch();
        cache.put("local", &[1; 32], epoch, &connection("a", Some(1000)), None);
        assert!(!cache.get("local", &[1; 32], epoch, 1059).unwrap().note_use);
        assert!(cache.get("local", &[1; 32], epoch, 1060).unwrap().note_use);
        assert!(
            !cache.get("local", &[1; 32], epoch, 1061).unwrap().note_use,
            "noted once"
        );
        assert!(is_use_due(None, 0));
    }

    #[tokio::test]
    async fn the_durable_epoch_empties_the_cache_without_an_announcement() {
        let (_dir, pool, cache) = cache().await;
        let epoch = cache.epoch();
        cache.put("local", &[1; 32], epoch, &connection("a", None), None);
        cache.upkeep(&pool).await.unwrap();
        assert!(cache.is_empty(), "the first reading starts afresh");
        cache.put("local", &[1; 32], epoch, &connection("a", None), None);
        cache.upkeep(&pool).await.unwrap();
        assert_eq!(cache.len(), 1, "nothing changed");
        // A change made without announcing it, as a crashed process or a hand edit would leave it.
        sqlx::query("UPDATE access_epoch SET value = value + 1")
            .execute(&pool)
            .await
            .unwrap();
        cache.upkeep(&pool).await.unwrap();
        assert!(cache.is_empty());
    }

    #[tokio::test]
    async fn a_full_cache_starts_over() {
        let (_dir, _pool, cache) = cache().await;
        let epoch = cache.epoch();
        for n in 0..MAX_ENTRIES {
            let mut digest = [0u8; 32];
            digest[..8].copy_from_slice(&(n as u64).to_le_bytes());
            cache.put("local", &digest, epoch, &connection("a", None), None);
        }
        assert_eq!(cache.len(), MAX_ENTRIES);
        cache.put("local", &[9; 32], epoch, &connection("b", None), None);
        assert_eq!(cache.len(), 1);
    }
}
