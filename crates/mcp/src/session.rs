//! MCP sessions: issued on `initialize`, bound to the credential that made them, bounded in number
//! and idle time.
//!
//! Sessions live in memory only: after a restart a client's next request gets 404 and it starts over
//! with `initialize`, as the specification intends. When a credential is at its cap, its least
//! recently used session makes room for the new one; when the whole store is full, the least recently
//! used session of the credential holding the most does. Refusing instead would lock users out:
//! Claude Code and Gemini CLI never end their sessions (no DELETE), so every start leaves one open,
//! and after 16 starts the journal's tools would silently vanish. An evicted session answers 404 and
//! its client initializes again. One credential can only ever evict its own sessions, or those of a
//! credential holding at least as many, so a client opening many sessions crowds out itself first.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use tokio::time::Instant;

use super::protocol::Version;

/// Bounds on the session store.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub per_credential: usize,
    pub total: usize,
    pub idle: Duration,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            per_credential: 16,
            total: 1024,
            idle: Duration::from_secs(30 * 60),
        }
    }
}

/// One open session.
#[derive(Debug, Clone)]
pub struct Session {
    pub connection_id: String,
    /// The connection's label when the session opened, to name it when it is evicted.
    pub label: String,
    pub version: Version,
    last_seen: Instant,
    /// When the session was last used, as a tick of the store's counter: a strict order for
    /// eviction even when two uses read the same instant.
    last_use: u64,
    /// The grant generation the client last saw the tool list for.
    pub listed_generation: i64,
}

/// What a request needs of the session it resumes (a copy, so the store's lock is held briefly and
/// nothing is allocated).
#[derive(Debug, Clone, Copy)]
pub struct Resumed {
    pub version: Version,
    /// The grant generation the client last saw the tool list for.
    pub listed_generation: i64,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SessionError {
    #[error("the server could not make a session id (no secure random source); try again")]
    NoRandom,
    #[error("no such session: it ended or expired; start a new one with initialize")]
    NotFound,
}

/// Which cap made room for a new session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cap {
    /// The credential's own cap (`Limits::per_credential`).
    Credential,
    /// The whole store's cap (`Limits::total`).
    Server,
}

/// A session ended to make room for a new one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Evicted {
    pub session_id: String,
    pub connection_id: String,
    pub label: String,
    pub cap: Cap,
}

/// A new session, and the session it displaced, if any.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Opened {
    pub id: String,
    pub evicted: Option<Evicted>,
}

/// All open sessions.
#[derive(Debug, Default)]
pub struct Sessions {
    limits: Limits,
    open: Mutex<HashMap<String, Session>>,
    /// Counts uses (creations and touches), taken under the lock of `open`.
    ticks: AtomicU64,
}

impl Sessions {
    pub fn new(limits: Limits) -> Sessions {
        Sessions {
            limits,
            open: Mutex::new(HashMap::new()),
            ticks: AtomicU64::new(0),
        }
    }

    /// Opens a session for `connection_id` (named `label` in logs) and returns its id: 16 random
    /// bytes, base64url. At a cap, the session `victim` chooses is ended first.
    pub fn create(
        &self,
        connection_id: &str,
        label: &str,
        version: Version,
        generation: i64,
    ) -> Result<Opened, SessionError> {
        let mut bytes = [0u8; 16];
        getrandom::fill(&mut bytes).map_err(|_| SessionError::NoRandom)?;
        let id = URL_SAFE_NO_PAD.encode(bytes);
        let now = Instant::now();
        let mut open = self.lock();
        open.retain(|_, s| now.duration_since(s.last_seen) < self.limits.idle);
        let evicted = victim(&open, connection_id, &self.limits).and_then(|(victim_id, cap)| {
            open.remove(&victim_id).map(|s| Evicted {
                session_id: victim_id,
                connection_id: s.connection_id,
                label: s.label,
                cap,
            })
        });
        let session = Session {
            connection_id: connection_id.to_string(),
            label: label.to_string(),
            version,
            last_seen: now,
            last_use: self.tick(),
            listed_generation: generation,
        };
        open.insert(id.clone(), session);
        Ok(Opened { id, evicted })
    }

    /// The session `id` if it is open and belongs to `connection_id`; marks it used. Another
    /// credential's session answers exactly like a missing one.
    pub fn touch(&self, id: &str, connection_id: &str) -> Result<Resumed, SessionError> {
        let now = Instant::now();
        let mut open = self.lock();
        let Some(session) = open.get_mut(id) else {
            return Err(SessionError::NotFound);
        };
        if now.duration_since(session.last_seen) >= self.limits.idle {
            open.remove(id);
            return Err(SessionError::NotFound);
        }
        if session.connection_id != connection_id {
            return Err(SessionError::NotFound);
        }
        session.last_seen = now;
        session.last_use = self.tick();
        Ok(Resumed {
            version: session.version,
            listed_generation: session.listed_generation,
        })
    }

    /// Records that the client has seen the tool list of `generation`.
    pub fn set_listed(&self, id: &str, generation: i64) {
        if let Some(session) = self.lock().get_mut(id) {
            session.listed_generation = generation;
        }
    }

    /// Ends a session of `connection_id`.
    pub fn end(&self, id: &str, connection_id: &str) -> Result<(), SessionError> {
        self.touch(id, connection_id)?;
        self.lock().remove(id);
        Ok(())
    }

    /// Drops expired sessions; the server calls this periodically so memory stays bounded.
    pub fn purge_expired(&self) -> usize {
        let now = Instant::now();
        let mut open = self.lock();
        let before = open.len();
        open.retain(|_, s| now.duration_since(s.last_seen) < self.limits.idle);
        before - open.len()
    }

    pub fn len(&self) -> usize {
        self.lock().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn tick(&self) -> u64 {
        self.ticks.fetch_add(1, Ordering::Relaxed)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Session>> {
        // A panic while holding the lock cannot leave the map inconsistent (every change is one call).
        self.open.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// The session to end so that one more of `connection_id` fits, and the cap that asks for it: the
/// credential's least recently used session when the credential is at its cap; otherwise, when the
/// store is full, the least recently used session of the credential holding the most (ties: the
/// oldest session among them). `None` while there is room.
fn victim(open: &HashMap<String, Session>, connection_id: &str, limits: &Limits) -> Option<(String, Cap)> {
    let oldest_of = |owner: &str| {
        open.iter()
            .filter(|(_, s)| s.connection_id == owner)
            .min_by_key(|(_, s)| s.last_use)
            .map(|(id, _)| id.clone())
    };
    let mine = open.values().filter(|s| s.connection_id == connection_id).count();
    if mine >= limits.per_credential.max(1) {
        return oldest_of(connection_id).map(|id| (id, Cap::Credential));
    }
    if open.len() < limits.total.max(1) {
        return None;
    }
    let mut counts: HashMap<&str, (usize, u64)> = HashMap::new();
    for session in open.values() {
        let entry = counts.entry(&session.connection_id).or_insert((0, session.last_use));
        entry.0 += 1;
        entry.1 = entry.1.min(session.last_use);
    }
    // The most sessions first; among equals, the one whose oldest session is oldest.
    let heaviest = counts
        .into_iter()
        .max_by(|a, b| a.1.0.cmp(&b.1.0).then(b.1.1.cmp(&a.1.1)).then(b.0.cmp(a.0)))?
        .0
        .to_string();
    oldest_of(&heaviest).map(|id| (id, Cap::Server))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v() -> Version {
        Version::negotiate("2025-06-18")
    }

    #[test]
    fn binds_sessions_to_their_credential() {
        let sessions = Sessions::default();
        let id = sessions.create("a", "a", v(), 1).unwrap().id;
        assert_eq!(id.len(), 22);
        assert!(id.bytes().all(|b| (0x21..=0x7e).contains(&b)));
        assert!(sessions.touch(&id, "a").is_ok());
        assert_eq!(sessions.touch(&id, "b").unwrap_err(), SessionError::NotFound);
        assert_eq!(sessions.end(&id, "b").unwrap_err(), SessionError::NotFound);
        sessions.end(&id, "a").unwrap();
        assert_eq!(sessions.touch(&id, "a").unwrap_err(), SessionError::NotFound);
    }

    #[tokio::test(start_paused = true)]
    async fn a_credential_at_its_cap_ends_its_least_recently_used_session() {
        let sessions = Sessions::new(Limits {
            per_credential: 3,
            total: 100,
            idle: Duration::from_secs(600),
        });
        let mut ids = Vec::new();
        for _ in 0..3 {
            ids.push(sessions.create("a", "key a", v(), 1).unwrap().id);
            tokio::time::advance(Duration::from_secs(1)).await;
        }
        let other = sessions.create("b", "key b", v(), 1).unwrap().id;
        // Using the oldest makes the second the least recently used.
        sessions.touch(&ids[0], "a").unwrap();
        tokio::time::advance(Duration::from_secs(1)).await;
        let opened = sessions.create("a", "key a", v(), 1).unwrap();
        let evicted = opened.evicted.expect("one session made room");
        assert_eq!(evicted.session_id, ids[1]);
        assert_eq!((evicted.connection_id.as_str(), evicted.label.as_str()), ("a", "key a"));
        assert_eq!(evicted.cap, Cap::Credential);
        assert_eq!(sessions.touch(&ids[1], "a").unwrap_err(), SessionError::NotFound);
        for id in [&ids[0], &ids[2], &opened.id] {
            assert!(sessions.touch(id, "a").is_ok());
        }
        assert!(
            sessions.touch(&other, "b").is_ok(),
            "another credential's session is never touched"
        );
        assert_eq!(sessions.len(), 4);
    }

    #[tokio::test(start_paused = true)]
    async fn a_full_store_ends_a_session_of_the_credential_holding_the_most() {
        let sessions = Sessions::new(Limits {
            per_credential: 10,
            total: 5,
            idle: Duration::from_secs(600),
        });
        let quiet = sessions.create("quiet", "quiet", v(), 1).unwrap().id;
        tokio::time::advance(Duration::from_secs(1)).await;
        let mut busy = Vec::new();
        for _ in 0..3 {
            busy.push(sessions.create("busy", "busy", v(), 1).unwrap().id);
            tokio::time::advance(Duration::from_secs(1)).await;
        }
        let third = sessions.create("third", "third", v(), 1).unwrap();
        assert_eq!(third.evicted, None, "room for five");
        let opened = sessions.create("new", "new", v(), 1).unwrap();
        let evicted = opened.evicted.expect("the full store made room");
        assert_eq!(evicted.cap, Cap::Server);
        assert_eq!(
            evicted.session_id, busy[0],
            "the oldest of the credential holding the most"
        );
        assert!(
            sessions.touch(&quiet, "quiet").is_ok(),
            "the oldest session overall belongs to a small holder"
        );
        assert_eq!(sessions.len(), 5);
    }

    #[test]
    fn two_hundred_sessions_in_a_row_on_one_credential_keep_the_newest() {
        let sessions = Sessions::default();
        let ids: Vec<String> = (0..200)
            .map(|_| sessions.create("a", "a", v(), 1).unwrap().id)
            .collect();
        assert_eq!(sessions.len(), 16);
        for id in &ids[184..] {
            assert!(sessions.touch(id, "a").is_ok());
        }
        assert_eq!(sessions.touch(&ids[183], "a").unwrap_err(), SessionError::NotFound);
    }

    #[tokio::test(start_paused = true)]
    async fn expires_idle_sessions() {
        let sessions = Sessions::new(Limits {
            per_credential: 2,
            total: 3,
            idle: Duration::from_secs(60),
        });
        let id = sessions.create("a", "a", v(), 1).unwrap().id;
        tokio::time::advance(Duration::from_secs(59)).await;
        assert!(sessions.touch(&id, "a").is_ok(), "use keeps a session alive");
        tokio::time::advance(Duration::from_secs(60)).await;
        assert_eq!(sessions.touch(&id, "a").unwrap_err(), SessionError::NotFound);
        sessions.create("a", "a", v(), 1).unwrap();
        tokio::time::advance(Duration::from_secs(61)).await;
        assert_eq!(sessions.purge_expired(), 1);
        assert!(sessions.is_empty());
    }
}
