//! Fuzzes reading `graph.jsonl` (`store::Graph::parse`): any text never panics; written again and
//! read back it gives the same connections and keeps every other line as it was; no id twice. The
//! proptest twin is in `graph/store.rs`.
#![no_main]

use journal::journal::graph::store;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    store::check_lines(text);
});
