//! Routes: one router per way of reaching the journal. Only the loopback route exists so far; the LAN
//! and own-domain routes arrive with their own listeners, Host rules and certificates.

pub mod local;
