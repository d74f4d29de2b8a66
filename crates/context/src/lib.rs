//! The request's context, below every feature: which route a request came in on (`Route`), where
//! it came from (`Source`) and each route's Host and Origin rules (`host`). MCP, OAuth and the
//! owner app read it; `routes/` assembles the routers that put it in front of them. It imports no
//! feature.

pub mod host;
mod route;
mod source;

pub use route::{DOMAIN, LAN, LOCAL, PROXY, RELAY, Route};
pub use source::{Forwarded, Source, source_key};
