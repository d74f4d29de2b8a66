//! How many connections a TLS route holds open: on the LAN route at most 64 in all and 16 from any
//! one address, so one device on the network (a misbehaving agent, a compromised gadget) cannot take
//! every slot; on the own-domain route, which faces the internet, 256 in all and 16 per source, where
//! an IPv6 source is its whole /64 (one host usually has a /64 to pick addresses from). A connection
//! over either limit is closed before its TLS handshake costs anything.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};

/// At most this many connections in all.
pub const MAX_CONNECTIONS: usize = 64;
/// At most this many from one address.
pub const MAX_PER_SOURCE: usize = 16;
/// At most this many connections in all on the own-domain route.
pub const MAX_PUBLIC_CONNECTIONS: usize = 256;

/// Counts open connections, in all and per source address.
#[derive(Debug, Clone)]
pub struct ConnectionLimiter {
    inner: Arc<Mutex<Counts>>,
    total: usize,
    per_source: usize,
    /// Count an IPv6 source by its /64.
    by_prefix: bool,
}

#[derive(Debug, Default)]
struct Counts {
    open: usize,
    by_source: HashMap<IpAddr, usize>,
}

/// Why a connection was not admitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Full {
    Route,
    Source,
}

/// One admitted connection; its slot is given back when this is dropped.
#[derive(Debug)]
pub struct Admission {
    inner: Arc<Mutex<Counts>>,
    source: IpAddr,
}

impl ConnectionLimiter {
    pub fn new(total: usize, per_source: usize) -> ConnectionLimiter {
        ConnectionLimiter {
            inner: Arc::default(),
            total,
            per_source,
            by_prefix: false,
        }
    }

    /// The own-domain route's limits.
    pub fn public() -> ConnectionLimiter {
        ConnectionLimiter::new_public(MAX_PUBLIC_CONNECTIONS, MAX_PER_SOURCE)
    }

    /// Limits for a listener the internet reaches, where an IPv6 source is its /64.
    pub fn new_public(total: usize, per_source: usize) -> ConnectionLimiter {
        ConnectionLimiter {
            by_prefix: true,
            ..ConnectionLimiter::new(total, per_source)
        }
    }

    /// Takes a slot for a connection from `source`, or says which limit is reached.
    pub fn admit(&self, source: IpAddr) -> Result<Admission, Full> {
        let source = crate::context::source_key(source, self.by_prefix);
        let mut counts = self.inner.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if counts.open >= self.total {
            return Err(Full::Route);
        }
        let from_source = counts.by_source.entry(source).or_default();
        if *from_source >= self.per_source {
            return Err(Full::Source);
        }
        *from_source += 1;
        counts.open += 1;
        Ok(Admission {
            inner: self.inner.clone(),
            source,
        })
    }

    /// Connections open now.
    pub fn open(&self) -> usize {
        self.inner.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).open
    }
}

impl Default for ConnectionLimiter {
    fn default() -> ConnectionLimiter {
        ConnectionLimiter::new(MAX_CONNECTIONS, MAX_PER_SOURCE)
    }
}

impl Drop for Admission {
    fn drop(&mut self) {
        let mut counts = self.inner.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        counts.open = counts.open.saturating_sub(1);
        if let Some(from_source) = counts.by_source.get_mut(&self.source) {
            *from_source -= 1;
            if *from_source == 0 {
                // Forget the address, so the map holds only sources with open connections.
                counts.by_source.remove(&self.source);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    #[test]
    fn sixteen_per_source_and_slots_come_back() {
        let limiter = ConnectionLimiter::default();
        let a = ip("192.168.1.10");
        let held: Vec<Admission> = (0..MAX_PER_SOURCE).map(|_| limiter.admit(a).unwrap()).collect();
        assert_eq!(limiter.admit(a).unwrap_err(), Full::Source);
        // The same address written as IPv4-mapped IPv6 is the same source.
        assert_eq!(limiter.admit(ip("::ffff:192.168.1.10")).unwrap_err(), Full::Source);
        assert!(
            limiter.admit(ip("192.168.1.11")).is_ok(),
            "another device still gets in"
        );
        drop(held);
        assert_eq!(limiter.open(), 0);
        assert!(limiter.admit(a).is_ok());
        assert!(
            limiter.inner.lock().unwrap().by_source.is_empty(),
            "no address is remembered once closed"
        );
    }

    #[test]
    fn the_public_route_counts_an_ipv6_source_by_its_slash_64() {
        let limiter = ConnectionLimiter::public();
        let held: Vec<Admission> = (0..MAX_PER_SOURCE)
            .map(|i| limiter.admit(ip(&format!("2001:db8:1:2::{:x}", i + 1))).unwrap())
            .collect();
        assert_eq!(limiter.admit(ip("2001:db8:1:2:ffff::9")).unwrap_err(), Full::Source);
        assert!(
            limiter.admit(ip("2001:db8:1:3::1")).is_ok(),
            "another /64 is another source"
        );
        drop(held);
        assert_eq!(limiter.open(), 0);
        // The LAN limiter counts each address.
        let lan = ConnectionLimiter::default();
        let _held: Vec<Admission> = (0..MAX_PER_SOURCE)
            .map(|i| lan.admit(ip(&format!("fd00::{:x}", i + 1))).unwrap())
            .collect();
        assert!(lan.admit(ip("fd00::ff")).is_ok());
    }

    #[test]
    fn sixty_four_in_all() {
        let limiter = ConnectionLimiter::default();
        let mut held: Vec<Admission> = (0..MAX_CONNECTIONS)
            .map(|i| limiter.admit(ip(&format!("10.0.{}.{}", i / 4, i % 4 + 1))).unwrap())
            .collect();
        assert_eq!(limiter.open(), MAX_CONNECTIONS);
        assert_eq!(limiter.admit(ip("10.9.9.9")).unwrap_err(), Full::Route);
        held.pop();
        assert_eq!(limiter.open(), MAX_CONNECTIONS - 1);
        assert!(limiter.admit(ip("10.9.9.9")).is_ok());
    }
}
