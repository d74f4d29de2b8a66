//! journal: a personal journal served to AI agents over MCP, safely. This crate is the server:
//! everything that speaks HTTP, TLS or HTML, and the CLI. It stands on two floors, each its own
//! crate so that the compiler holds the layers: `journal-store` (the content and its storage) and
//! `journal-access` (who may see what); it re-exports them under the names its code uses.
//!
//! How the parts depend on each other (arrows point at what is used):
//!
//! ```text
//! cli ──► server ──► routes ──► mcp ───► auth, review (journal-access) ──► journal (journal-store)
//!  │        │           │  └──► oauth ──┤
//!  │        │           └─────► web ────┘
//!  │        └──► listener, lan, domain, proxy, relay, tls
//!  └── everything above the floors uses `context` (Route, Source, Host rules) and `page`
//! ```
//!
//! - `journal` (journal-store): the content (plain files), their catalog and search index, the
//!   notes vault, the graph, histories and proposals. Knows nothing of HTTP, MCP or who is asking.
//! - `auth` and `review` (journal-access): connections, keys, grants, the audit log; the owner's
//!   review of what agents proposed.
//! - `context`: the request's context below every feature: which route, from where, each route's
//!   Host and Origin rules.
//! - `mcp`: JSON-RPC, sessions, the Streamable HTTP and stdio transports and the tools.
//! - `oauth`: the authorization server (discovery, registration, consent, tokens) that lets agents sign in.
//! - `web`: the owner app at `/app`, on the local route only.
//! - `routes`: the routers, assembled (the one module that imports every feature's handlers), and
//!   what each route is doing (`routes::status`).
//! - `listener`: serving one listener's connections with their limits; `server`: starting the
//!   listeners, background upkeep, shutdown. `cli`: the commands people type.
//! - `tls`, `lan`, `domain`, `proxy`, `relay`: the LAN route's CA and TLS settings, its listeners
//!   on this computer's private addresses, the own-domain route (DNS and CAA checks, ACME, its
//!   certificate), the route behind the owner's tunnel (a loopback listener), and the relay the
//!   owner runs on a server with the journal's route through it.
//! - Below every feature: `db`, `secret`, `clock`, `fsio` (in journal-store) and `page` (what every
//!   HTML page and form shares). `mcp` gets connections resolved by `auth::credentials` (checked by
//!   `tests/it/layers.rs` until MCP is a crate of its own).
//!
//! docs/ARCHITECTURE.md has the module map and the path of a request.

pub mod alloc;
pub mod app;
pub mod bench;
pub mod cli;
pub mod config;
pub mod domain;
pub mod lan;
pub mod listener;
pub mod oauth;
pub mod page;
pub mod proxy;
pub mod relay;
pub mod routes;
pub mod server;
pub mod tls;
pub mod web;

// The floors below, under the names the server's code and its tests use for them.
pub use journal_access::{auth, review};
pub use journal_context as context;
pub use journal_mcp as mcp;
pub use journal_store::{clock, db, fsio, journal, secret};
