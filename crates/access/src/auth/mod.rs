//! Who may call, and what they may see: minted keys, grants, the per-request credential check and
//! the audit log.
//!
//! Secrets never rest here in plaintext: a key is shown once when minted and stored only as its
//! SHA-256 digest. Grants have the same shape for every kind of connection, so tool-list shaping and
//! per-call checks are one mechanism.

pub mod activity;
pub mod audit;
pub mod cache;
pub mod connections;
pub mod credentials;
pub mod epoch;
pub mod grant;
pub mod keys;
pub mod owner;
pub mod passphrase;

pub use connections::Connection;
pub use grant::{Category, Grant, WriteMode};

/// Why an access-state operation failed.
#[derive(Debug, thiserror::Error)]
pub enum AuthError {
    #[error("{0}")]
    Invalid(String),
    #[error("{0}")]
    NotFound(String),
    #[error("the journal database: {0}")]
    Db(#[from] sqlx::Error),
}
