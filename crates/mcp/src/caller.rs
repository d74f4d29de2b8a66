//! Who is asking (a connection, in a protocol version, within a 2025 session or on its own), and how
//! an answer is written for them: a stateless (2026-07-28) result carries that era's fields. Every
//! offer and the dispatcher answer through these.

use std::sync::Arc;

use serde_json::{Map, Value};

use super::jsonrpc::{self, Encoded, METHOD_NOT_FOUND};
use super::protocol::Version;
use super::stateless::{self, Cache};
use crate::auth::Connection;

/// Who is asking, in which version and session.
pub struct Caller {
    pub connection: Arc<Connection>,
    pub version: Version,
    /// The client's capabilities as this request declares them (2026-07-28; empty in a session).
    pub capabilities: Map<String, Value>,
    /// The 2025 session the request belongs to; None for a stateless (2026-07-28) request.
    pub session: Option<SessionView>,
}

/// What a request needs of its session.
pub struct SessionView {
    pub id: String,
    /// The grant generation whose tool list the client last saw.
    pub listed_generation: i64,
}

/// A successful reply: a stateless one with that era's fields added.
pub fn reply(caller: &Caller, id: &Value, result: &str, cache: Option<Cache>) -> Encoded {
    if caller.version.is_stateless() {
        Encoded::result_text(id, &stateless::complete(result, cache))
    } else {
        Encoded::result_text(id, result)
    }
}

/// The answer to a method this server does not have.
pub fn not_found(id: Value, method: &str) -> Encoded {
    Encoded::value(&jsonrpc::error(
        id,
        METHOD_NOT_FOUND,
        format!("method not found: {method}"),
    ))
}
