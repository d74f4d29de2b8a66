//! The own-domain route: `https://<owner's hostname>/mcp`, reachable from the internet, with a
//! certificate from an ACME CA (Let's Encrypt by default). `serving` runs it; `acme`, `caa`, `dns`,
//! `certificate` and `keeper` are its parts (the relay route keeps its certificate with the last
//! three too).

pub mod acme;
pub mod caa;
pub mod certificate;
pub mod dns;
pub mod keeper;
pub mod serving;
