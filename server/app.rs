//! The state every request handler shares: cheap, cloneable handles, no globals.

use std::sync::Arc;

use crate::journal::Journal;
use crate::mcp::session::Sessions;

/// Shared by all routes and requests.
#[derive(Clone)]
pub struct AppState {
    pub journal: Arc<Journal>,
    pub sessions: Arc<Sessions>,
}

impl AppState {
    pub fn new(journal: Arc<Journal>, sessions: Sessions) -> AppState {
        AppState {
            journal,
            sessions: Arc::new(sessions),
        }
    }
}
