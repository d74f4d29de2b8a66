//! Answers one JSON-RPC request for one authenticated connection: within its 2025 session, or on
//! its own at 2026-07-28 (the transport has admitted it by `stateless::admit` then).
//!
//! The protocol's own methods (`ping`, `server/discover`, a second `initialize`) are answered here
//! the same for every server; everything else goes to the server's `Offer` (the journal's is
//! `catalog`). A stateless result carries that era's fields (`resultType`, the server in `_meta`,
//! caching hints on what may be kept).

use serde_json::{Map, Value, json};

use super::caller::{Caller, not_found, reply};
use super::jsonrpc::{self, Encoded};
use super::offer::{Offer, Outgoing, Request};
use super::protocol::Version;
use super::state::McpState;
use super::stateless::{self, Cache};

/// The result of `initialize` in the negotiated `version`, on every transport.
pub fn initialized(offer: &dyn Offer<McpState>, version: Version) -> Value {
    json!({
        "protocolVersion": version.as_str(),
        "capabilities": offer.capabilities(false),
        "serverInfo": { "name": "journal", "title": "journal", "version": env!("CARGO_PKG_VERSION") },
        "instructions": offer.instructions(),
    })
}

/// Answers one request (never a notification) with a JSON-RPC response. `out` is where the offer
/// may send messages before it (an event stream the transport opened, or nowhere).
pub async fn request(
    state: &McpState,
    caller: &Caller,
    id: Value,
    method: &str,
    params: Map<String, Value>,
    out: &Outgoing,
) -> Encoded {
    let stateless = caller.version.is_stateless();
    match method {
        // Written as text: the one reply every keep-alive sends, with nothing to build.
        "ping" if !stateless => Encoded::result_text(&id, "{}"),
        "server/discover" if stateless => {
            let offer = state.offer();
            let result = stateless::discover(&offer.capabilities(true), offer.instructions()).to_string();
            let cache = Cache {
                ttl_ms: stateless::DISCOVER_TTL_MS,
                private: false,
            };
            reply(caller, &id, &result, Some(cache))
        }
        "initialize" if !stateless => Encoded::value(&jsonrpc::error(
            id,
            jsonrpc::INVALID_REQUEST,
            "this session is already initialized; initialize starts a new session on its own request",
        )),
        "server/discover" | "initialize" | "ping" => not_found(id, method),
        method => {
            let request = Request {
                caller,
                id,
                method,
                params,
                out,
            };
            state.offer().answer(state, request).await
        }
    }
}
