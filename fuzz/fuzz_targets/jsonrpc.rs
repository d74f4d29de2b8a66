//! Fuzzes the JSON-RPC envelope: whatever bytes arrive, parsing and classifying never panics, and a
//! request always has a string or number id.
#![no_main]

use journal::mcp::jsonrpc::{self, Message};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(value) = serde_json::from_slice::<serde_json::Value>(data) {
        if let Ok(Message::Request { id, .. }) = jsonrpc::classify(value) {
            assert!(id.is_string() || id.is_number());
        }
    }
});
