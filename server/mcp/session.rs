//! MCP sessions: issued on `initialize`, bound to the credential that made them, bounded in number
//! and idle time.
//!
//! Sessions live in memory only: after a restart a client's next request gets 404 and it starts over
//! with `initialize`, as the specification intends. When the store is full, new sessions are refused;
//! nothing is evicted, so one client cannot end another's sessions by opening many.

use std::collections::HashMap;
use std::sync::Mutex;
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
    pub version: Version,
    last_seen: Instant,
    /// The grant generation the client last saw the tool list for.
    pub listed_generation: i64,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SessionError {
    #[error("this credential already has {0} open sessions; end one (DELETE /mcp) or wait for one to expire")]
    CredentialFull(usize),
    #[error("the server has {0} open sessions, its limit; try again later")]
    ServerFull(usize),
    #[error("no such session: it ended or expired; start a new one with initialize")]
    NotFound,
}

/// All open sessions.
#[derive(Debug, Default)]
pub struct Sessions {
    limits: Limits,
    open: Mutex<HashMap<String, Session>>,
}

impl Sessions {
    pub fn new(limits: Limits) -> Sessions {
        Sessions {
            limits,
            open: Mutex::new(HashMap::new()),
        }
    }

    /// Opens a session and returns its id: 16 random bytes, base64url.
    pub fn create(&self, connection_id: &str, version: Version, generation: i64) -> Result<String, SessionError> {
        let mut bytes = [0u8; 16];
        getrandom::fill(&mut bytes).map_err(|_| SessionError::ServerFull(0))?;
        let id = URL_SAFE_NO_PAD.encode(bytes);
        let now = Instant::now();
        let mut open = self.lock();
        open.retain(|_, s| now.duration_since(s.last_seen) < self.limits.idle);
        if open.len() >= self.limits.total {
            return Err(SessionError::ServerFull(self.limits.total));
        }
        let mine = open.values().filter(|s| s.connection_id == connection_id).count();
        if mine >= self.limits.per_credential {
            return Err(SessionError::CredentialFull(self.limits.per_credential));
        }
        let session = Session {
            connection_id: connection_id.to_string(),
            version,
            last_seen: now,
            listed_generation: generation,
        };
        open.insert(id.clone(), session);
        Ok(id)
    }

    /// The session `id` if it is open and belongs to `connection_id`; marks it used. Another
    /// credential's session answers exactly like a missing one.
    pub fn touch(&self, id: &str, connection_id: &str) -> Result<Session, SessionError> {
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
        Ok(session.clone())
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

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Session>> {
        // A panic while holding the lock cannot leave the map inconsistent (every change is one call).
        self.open.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
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
        let id = sessions.create("a", v(), 1).unwrap();
        assert_eq!(id.len(), 22);
        assert!(id.bytes().all(|b| (0x21..=0x7e).contains(&b)));
        assert!(sessions.touch(&id, "a").is_ok());
        assert_eq!(sessions.touch(&id, "b").unwrap_err(), SessionError::NotFound);
        assert_eq!(sessions.end(&id, "b").unwrap_err(), SessionError::NotFound);
        sessions.end(&id, "a").unwrap();
        assert_eq!(sessions.touch(&id, "a").unwrap_err(), SessionError::NotFound);
    }

    #[test]
    fn refuses_when_full_without_evicting() {
        let sessions = Sessions::new(Limits {
            per_credential: 2,
            total: 3,
            idle: Duration::from_secs(60),
        });
        let first = sessions.create("a", v(), 1).unwrap();
        sessions.create("a", v(), 1).unwrap();
        assert_eq!(
            sessions.create("a", v(), 1).unwrap_err(),
            SessionError::CredentialFull(2)
        );
        sessions.create("b", v(), 1).unwrap();
        assert_eq!(sessions.create("c", v(), 1).unwrap_err(), SessionError::ServerFull(3));
        assert!(sessions.touch(&first, "a").is_ok());
    }

    #[tokio::test(start_paused = true)]
    async fn expires_idle_sessions() {
        let sessions = Sessions::new(Limits {
            per_credential: 2,
            total: 3,
            idle: Duration::from_secs(60),
        });
        let id = sessions.create("a", v(), 1).unwrap();
        tokio::time::advance(Duration::from_secs(59)).await;
        assert!(sessions.touch(&id, "a").is_ok(), "use keeps a session alive");
        tokio::time::advance(Duration::from_secs(60)).await;
        assert_eq!(sessions.touch(&id, "a").unwrap_err(), SessionError::NotFound);
        sessions.create("a", v(), 1).unwrap();
        tokio::time::advance(Duration::from_secs(61)).await;
        assert_eq!(sessions.purge_expired(), 1);
        assert!(sessions.is_empty());
    }
}
