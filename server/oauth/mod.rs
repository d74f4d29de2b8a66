//! The OAuth 2.1 authorization server that lets agents sign in: discovery documents, dynamic client
//! registration, the consent page gated on a pairing code, authorization codes with PKCE, and
//! rotating refresh tokens.
//!
//! Rules live in plain functions (`pairing`, `pkce`, `redirect`, `resource`) and the state in
//! `store`; the handlers in `discovery`, `register`, `authorize`, `token` and `revoke` only read the
//! request, call them and shape the answer. No OAuth framework: none covers dynamic registration,
//! RFC 9728/8414 metadata, resource indicators and refresh reuse detection without fighting it.
//! An OAuth connection is a `connections` row with a grant like a key's, so tool lists and per-call
//! checks are the same mechanism for both.

pub mod authorize;
pub mod client_metadata;
pub mod discovery;
pub mod error;
pub mod known_clients;
pub mod pages;
pub mod pairing;
pub mod pkce;
pub mod redirect;
pub mod register;
pub mod registration;
pub mod resource;
pub mod revoke;
pub mod store;
pub mod token;

pub use error::OAuthError;

/// How long an authorization code lives, in seconds.
pub const CODE_SECONDS: i64 = 5 * 60;
/// How long a pending authorization waits for the owner, in seconds.
pub const PENDING_SECONDS: i64 = 10 * 60;
/// How long an access token lives, in seconds.
pub const ACCESS_SECONDS: i64 = 60 * 60;
/// How long a grant lives after pairing, however often it is refreshed, in seconds.
pub const GRANT_SECONDS: i64 = 30 * 24 * 60 * 60;
/// How long a rotated-out refresh token still answers with the pair that replaced it (a retry after a
/// lost response), in seconds.
pub const REFRESH_RETRY_SECONDS: u64 = 30;
/// How many rotated-out refresh tokens are remembered per grant to detect their reuse.
pub const ROTATED_KEPT: i64 = 16;

/// Prefixes that make the journal's secrets recognisable to people and secret scanners.
pub use crate::auth::credentials::ACCESS_PREFIX;
pub const REFRESH_PREFIX: &str = "jrt_";
pub const CODE_PREFIX: &str = "jac_";
pub const CLIENT_PREFIX: &str = "jc_";

/// Limits on what outsiders can make the server store.
pub const MAX_CLIENTS: i64 = 1024;
pub const MAX_CLIENTS_PER_SOURCE: i64 = 16;
pub const MAX_PENDING: i64 = 256;
pub const MAX_PENDING_PER_SOURCE: i64 = 8;
pub const MAX_GRANTS: i64 = 1024;
/// Clients without a grant are forgotten this many seconds after they were made (not after their last
/// use: use must not keep a stranger's client alive).
pub const UNUSED_CLIENT_SECONDS: i64 = 24 * 60 * 60;

/// A random secret with a prefix (`crate::secret`), as an OAuth error when none can be made.
pub fn secret(prefix: &str) -> Result<String, OAuthError> {
    crate::secret::generate(prefix).map_err(|e| OAuthError::server(e.to_string()))
}
