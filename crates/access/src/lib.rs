//! Who may see and change what: connections (keys and signed-in apps), grants, the audit log,
//! activity and the owner's sessions.
//!
//! Stands on the store (`journal_store`) and below every feature: MCP, OAuth and the owner app
//! ask here who a credential is and what it may do; nothing here knows of HTTP.

pub mod auth;
pub mod review;

/// The store's modules, under the names this crate's code uses for them.
pub(crate) use journal_store::{clock, db, journal, secret};
