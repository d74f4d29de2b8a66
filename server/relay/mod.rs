//! Reach from anywhere without a domain or an open port: a relay the owner runs on any small server
//! with a public address and a wildcard DNS name, and the journal's tunnel to it.
//!
//! The journal dials out to the relay (`tunnel`), proves its key in a mutual-TLS handshake
//! (`identity`), and asks for its tunnel with HTTP/1.1; the relay checks the key against the
//! journals its owner enrolled (`enrolments`) and upgrades the connection to HTTP/2, on which the
//! relay opens one CONNECT stream for each connection an agent makes to `NAME.<relay host>`
//! (`serve`). The relay reads only the agent's TLS hello, for its server name (`hello`), and passes
//! every byte through: the journal terminates TLS with its own certificate, so the relay holds no
//! key of it and sees no plaintext.

pub mod enrolments;
pub mod hello;
pub mod identity;
pub mod route;
pub mod serve;
pub mod tunnel;
