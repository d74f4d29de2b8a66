//! The MCP server: JSON-RPC messages, protocol versions, sessions, the Streamable HTTP transport and
//! the tools.
//!
//! Layers, outside in: `transport` turns HTTP requests into messages and back (status codes,
//! headers, sessions); `dispatch` answers one message for one authenticated connection; `tools`
//! holds one file per tool, each a thin adapter from validated arguments to a `journal` operation.
//! Nothing here decides what a grant allows; that is `auth::grant`.
//!
//! A crate of its own above the floors (`journal-store`, `journal-access`) and the request's context
//! (`journal-context`): it cannot reach sign-in, the owner app or the CLI, which the server crate
//! holds; the server mounts `transport` on its routes and runs `stdio` for `journal mcp stdio`.

pub mod asking;
pub mod caller;
pub mod catalog;
pub mod changes;
pub mod completion;
pub mod dispatch;
pub mod jsonrpc;
pub mod listen;
pub mod listing;
pub mod offer;
pub mod paging;
pub mod prompts;
pub mod protocol;
pub mod refusal;
pub mod resources;
pub mod schema;
pub mod session;
pub mod state;
pub mod stateless;
pub mod stdio;
pub mod streams;
pub mod tools;
pub mod transport;

/// The floors and the request's context, under the names this crate's code uses for them.
pub(crate) use journal_access::{auth, review};
pub(crate) use journal_context as context;
pub(crate) use journal_store::{clock, journal};
