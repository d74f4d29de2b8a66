//! journal: a personal journal served to AI agents over MCP, safely. This crate is the server:
//! everything that speaks HTTP, TLS or HTML, and the CLI. It stands on two floors, each its own
//! crate so that the compiler holds the layers: `journal-store` (the content and its storage) and
//! `journal-access` (who may see what); it re-exports them under the names its code uses.
//!
//! How the parts depend on each other (arrows point at what is used):
//!
//! ```text
//! cli ──► server ──► routes ──► mcp ───► auth (journal-access) ──► db
//!  │                     │         │        ▲
//!  │                     ├──────► oauth ────┤
//!  │                     └──────► web ──────┘
//!  └─────────────────────────────────┴──────────► journal (journal-store) ──► db
//! ```
//!
//! - `journal` (journal-store): the content (plain files), their catalog and search index. Knows
//!   nothing of HTTP, MCP or who is asking.
//! - `auth` (journal-access): connections, keys, grants, the audit log.
//! - `mcp`: JSON-RPC, sessions, the Streamable HTTP transport and the tools.
//! - `oauth`: the authorization server (discovery, registration, consent, tokens) that lets agents sign in.
//! - `web`: the owner app at `/app` (sign-in with a one-time link, the overview), on the local route only.
//! - `routes`: one router per way of reaching the journal (loopback, LAN, own domain), with its Host rules, and
//!   what each route is doing (`routes::status`).
//! - `tls`: the LAN route's private certificate authority, the private address ranges it serves, and
//!   a route's TLS settings with a certificate swapped without a restart.
//! - `domain`: serving the own-domain route: DNS and CAA checks, ACME, its certificate.
//! - `lan`: serving the LAN route: its listeners on this computer's private addresses, its leaf,
//!   connection limits.
//! - `server`: listeners, background upkeep, shutdown. `cli`: the commands people type.
//! - Below every feature: `db` (the pool, write transactions), `secret` (random secrets and their
//!   digests), `clock`, `fsio` (durable private files), all in journal-store, and `page` (what every
//!   HTML page and form shares). `mcp` gets connections resolved by `auth::credentials` (checked by
//!   `tests/it/layers.rs` until the features are crates of their own).
//!
//! docs/ARCHITECTURE.md has the module map and the path of a request.

pub mod alloc;
pub mod app;
pub mod bench;
pub mod cli;
pub mod config;
pub mod context;
pub mod domain;
pub mod lan;
pub mod listener;
pub mod mcp;
pub mod oauth;
pub mod page;
pub mod routes;
pub mod server;
pub mod tls;
pub mod web;

// The floors below, under the names the server's code and its tests use for them.
pub use journal_access::{auth, review};
pub use journal_store::{clock, db, fsio, journal, secret};
