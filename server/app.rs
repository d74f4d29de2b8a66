//! The state every request handler of the HTTP server shares: cheap, cloneable handles, no
//! globals. Each feature takes only its part (axum's `FromRef`): MCP its `McpState`.

use std::sync::Arc;

use axum::extract::FromRef;

use crate::journal::Journal;
use crate::mcp::state::McpState;
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
    /// What MCP uses: sessions, the audit log, the credential cache, the tool lists.
    pub mcp: McpState,
    /// Token pairs recently issued by refresh rotation, for a client's retry (memory only).
    pub refresh_retries: Arc<RetryCache>,
    /// Fetches client metadata documents (guarded against requests into the owner's network).
    pub fetcher: Arc<dyn Fetcher>,
    /// The routes beyond loopback that this server serves, for the owner app.
    pub routes: Arc<Board>,
}

impl AppState {
    pub fn new(mcp: McpState, fetcher: Arc<dyn Fetcher>) -> AppState {
        AppState(Arc::new(Shared {
            journal: Arc::clone(&mcp.journal),
            mcp,
            refresh_retries: Arc::new(RetryCache::default()),
            fetcher,
            routes: Arc::default(),
        }))
    }
}

impl FromRef<AppState> for McpState {
    fn from_ref(state: &AppState) -> McpState {
        state.mcp.clone()
    }
}
