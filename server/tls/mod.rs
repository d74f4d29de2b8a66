//! TLS for the routes beyond loopback. So far: the private certificate authority of the LAN route
//! and its leaves (`ca`), and the address ranges that route may serve and be reached from
//! (`private_range`). The listeners, the certificate resolver and ACME for the own-domain route
//! build on these.

pub mod ca;
pub mod private_range;
