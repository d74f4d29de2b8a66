//! TLS for the routes beyond loopback. So far: the private certificate authority of the LAN route
//! and its leaves (`ca`), the address ranges that route may serve and be reached from
//! (`private_range`), and the server side of a route's TLS (`serving`: TLS 1.3 with ring, and a
//! certificate slot swapped without a restart). The listeners and ACME for the own-domain route
//! build on these.

pub mod ca;
pub mod private_range;
pub mod serving;
