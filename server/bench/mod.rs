//! The load generator behind `journal-bench`: concurrent MCP clients over loopback running a mix of
//! calls, a baseline server to compare with, and the statistics both report.
//!
//! It measures any MCP endpoint that takes a bearer credential, so other servers can be measured with
//! the same tool. Every run is bounded by a request count and a time limit; nothing here loops forever.

pub mod baseline;
pub mod load;
pub mod relay;
pub mod stats;

pub use load::{LoadOptions, LoadReport, Op, run};
