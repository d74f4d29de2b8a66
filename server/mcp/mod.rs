//! The MCP server: JSON-RPC messages, protocol versions, sessions, the Streamable HTTP transport and
//! the tools.
//!
//! Layers, outside in: `transport` turns HTTP requests into messages and back (status codes,
//! headers, sessions); `dispatch` answers one message for one authenticated connection; `tools`
//! holds one file per tool, each a thin adapter from validated arguments to a `journal` operation.
//! Nothing here decides what a grant allows; that is `auth::grant`.

pub mod dispatch;
pub mod jsonrpc;
pub mod listing;
pub mod protocol;
pub mod refusal;
pub mod schema;
pub mod session;
pub mod state;
pub mod stdio;
pub mod tools;
pub mod transport;
