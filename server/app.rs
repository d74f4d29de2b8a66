//! The state every request handler shares: cheap, cloneable handles, no globals.

use std::sync::Arc;

use crate::auth::audit::AuditLog;
use crate::auth::cache::CredentialCache;
use crate::journal::Journal;
use crate::mcp::listing::Listings;
use crate::mcp::session::Sessions;
use crate::oauth::client_metadata::Fetcher;
use crate::oauth::store::RetryCache;
use crate::routes::status::Board;

/// Shared by all routes and requests: one `Arc`, since axum clones the state for every handler and
/// middleware a request passes (a struct of eight handles cost a twentieth of a `ping`'s CPU in
/// reference counting).
#[derive(Clone)]
pub struct AppState(Arc<Shared>);

impl std::ops::Deref for AppState {
    type Target = Shared;

    fn deref(&self) -> &Shared {
        &self.0
    }
}

/// What the state holds.
pub struct Shared {
    pub journal: Arc<Journal>,
    pub sessions: Arc<Sessions>,
    /// Token pairs recently issued by refresh rotation, for a client's retry (memory only).
    pub refresh_retries: Arc<RetryCache>,
    /// Fetches client metadata documents (guarded against requests into the owner's network).
    pub fetcher: Arc<dyn Fetcher>,
    /// Writes the audit log, committing calls that arrive together in one transaction.
    pub audit: AuditLog,
    /// Credentials verified recently, trusted until the access epoch moves.
    pub credentials: Arc<CredentialCache>,
    /// `tools/list` answers, serialized once per shape of grant.
    pub listings: Arc<Listings>,
    /// The routes beyond loopback that this server serves, for the owner app.
    pub routes: Arc<Board>,
}

impl AppState {
    pub fn new(journal: Arc<Journal>, sessions: Sessions, fetcher: Arc<dyn Fetcher>) -> AppState {
        // The writer task starts here, so AppState is made inside the runtime (as the server does).
        let audit = AuditLog::start(journal.db.clone());
        let credentials = Arc::new(CredentialCache::new(&journal.db));
        AppState(Arc::new(Shared {
            journal,
            sessions: Arc::new(sessions),
            refresh_retries: Arc::new(RetryCache::default()),
            fetcher,
            audit,
            credentials,
            listings: Arc::default(),
            routes: Arc::default(),
        }))
    }
}
