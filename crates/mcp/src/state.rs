//! What MCP needs to answer a request, and nothing more: the journal, what the server offers, the
//! sessions, the audit log's writer, the credential cache, the serialized tool lists, the open
//! streams and the requests to clients awaiting answers. The HTTP server's `AppState` holds
//! one (axum's `FromRef` hands it to the `/mcp` handlers); `journal mcp stdio` builds only this, so
//! it makes nothing of sign-in (no metadata fetcher, no refresh cache).

use std::sync::Arc;

use super::listing::Listings;
use super::offer::{Offer, Pending};
use super::session::Sessions;
use super::streams::Streams;
use crate::auth::audit::AuditLog;
use crate::auth::cache::CredentialCache;
use crate::journal::Journal;

/// Cloned for every request: one `Arc`.
#[derive(Clone)]
pub struct McpState(Arc<Shared>);

impl std::ops::Deref for McpState {
    type Target = Shared;

    fn deref(&self) -> &Shared {
        &self.0
    }
}

/// What the state holds.
pub struct Shared {
    pub journal: Arc<Journal>,
    /// Tools, prompts, resources: the journal's own, or (for the conformance fixture) another's.
    offer: Arc<dyn Offer<McpState>>,
    pub sessions: Arc<Sessions>,
    /// Writes the audit log, committing calls that arrive together in one transaction.
    pub audit: AuditLog,
    /// Credentials verified recently, trusted until the access epoch moves.
    pub credentials: Arc<CredentialCache>,
    /// `tools/list` answers, serialized once per shape of grant.
    pub listings: Arc<Listings>,
    /// The streams of live changes open now.
    pub streams: Arc<Streams>,
    /// This server's requests to 2025 sessions' clients, awaiting their answers.
    pub pending: Arc<Pending>,
    /// Set when the server stops: every stream ends then, rather than holding the drain.
    closing: tokio::sync::watch::Sender<bool>,
}

impl McpState {
    /// Starts the audit log's writer task, so it is made inside the runtime.
    /// The journal's own offer is `catalog::state`'s; the conformance fixture brings another.
    pub fn offering(journal: Arc<Journal>, sessions: Sessions, offer: Arc<dyn Offer<McpState>>) -> McpState {
        let audit = AuditLog::start(journal.db.clone());
        let credentials = Arc::new(CredentialCache::new(&journal.db));
        McpState(Arc::new(Shared {
            journal,
            offer,
            sessions: Arc::new(sessions),
            audit,
            credentials,
            listings: Arc::default(),
            streams: Arc::default(),
            pending: Arc::default(),
            closing: tokio::sync::watch::Sender::new(false),
        }))
    }

    /// What this server offers.
    pub fn offer(&self) -> &dyn Offer<McpState> {
        self.offer.as_ref()
    }

    /// Ends every open stream (the server is stopping).
    pub fn close_streams(&self) {
        self.closing.send_replace(true);
    }

    /// What a stream waits on to learn that the server is stopping.
    pub fn closing(&self) -> tokio::sync::watch::Receiver<bool> {
        self.closing.subscribe()
    }
}
