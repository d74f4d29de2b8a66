//! The journal's store: the floor every other crate stands on.
//!
//! - `journal`: the content (plain files), their catalog and search index, the notes vault with its
//!   walls, the graph, the history of changes and the storage of proposals. Knows nothing of HTTP,
//!   MCP or who is asking: callers pass the bounds of the caller's grant.
//! - `db`: the SQLite pool and write transactions; `fsio`: durable private files; `secret`: random
//!   secrets and their digests; `clock`: the time, one place to read it.
//!
//! Nothing here depends on a crate that speaks HTTP, TLS or HTML: `Cargo.toml` lists none, so the
//! compiler holds the layer.

pub mod clock;
pub mod db;
pub mod fsio;
pub mod journal;
pub mod secret;
