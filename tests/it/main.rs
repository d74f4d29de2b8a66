//! Integration tests: the real server on an ephemeral loopback port, a real SQLite journal in a
//! temporary folder, and the real binary for the CLI. One test binary, shared helpers in `harness`.

mod harness;

mod app;
mod app_pages;
mod asking;
mod cli;
mod crash;
mod fetcher;
mod grants;
mod graph;
mod graph_history;
mod http;
mod imports;
mod layers;
mod live;
mod meaning;
mod note_writes;
mod notes;
mod oauth;
mod prompts_resources;
mod properties;
mod proposals;
mod relay;
mod routes;
mod sdk_rust;
mod sessions;
mod soak;
mod stateless;
mod store;
mod sweep;
mod tools;
mod write_safety;
