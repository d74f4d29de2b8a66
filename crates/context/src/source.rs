//! Where a request came from, as per-source quotas count it.

use std::convert::Infallible;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use axum::extract::{ConnectInfo, FromRequestParts};
use axum::http::HeaderMap;
use axum::http::request::Parts;

use super::route::Route;

/// The address a request came from, for per-source quotas (client registrations, pending
/// authorizations, pairing tries); `unknown` when the server did not record it (routers driven
/// without a socket in tests). Behind the owner's tunnel (the proxy route) it is the address the
/// tunnel reported ([`Forwarded`]). On the routes the internet reaches an IPv6 source is its /64,
/// as for the connection limits: one host there usually has a whole /64 to pick addresses from, so
/// counting single addresses would give it billions of quotas.
#[derive(Debug, Clone)]
pub struct Source(pub String);

impl<S: Send + Sync> FromRequestParts<S> for Source {
    type Rejection = Infallible;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Source, Infallible> {
        let by_prefix = parts.extensions.get::<Arc<Route>>().is_some_and(|route| route.public());
        let forwarded = parts.extensions.get::<Forwarded>().map(|forwarded| forwarded.0);
        let ip = forwarded
            .or_else(|| {
                parts
                    .extensions
                    .get::<ConnectInfo<SocketAddr>>()
                    .map(|info| info.0.ip())
            })
            .map(|ip| source_key(ip, by_prefix).to_string());
        Ok(Source(ip.unwrap_or_else(|| "unknown".into())))
    }
}

/// The address of the client as the owner's tunnel or reverse proxy reported it, which the proxy
/// route puts on a request for [`Source`] and nothing else: it counts the per-source quotas, and
/// grants nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Forwarded(pub IpAddr);

impl Forwarded {
    /// The client a forwarder in front of this computer named: the last entry of the last
    /// `X-Forwarded-For` header, the one the nearest forwarder added (entries before it are the
    /// client's own to write, and may lie). Only a peer on loopback is a forwarder here: from any
    /// other peer, and for an entry that is not an address, None.
    pub fn of(peer: IpAddr, headers: &HeaderMap) -> Option<Forwarded> {
        if !peer.to_canonical().is_loopback() {
            return None;
        }
        let last = headers.get_all("x-forwarded-for").iter().next_back()?;
        let entry = last.to_str().ok()?.rsplit(',').next()?.trim();
        let ip = entry
            .parse::<IpAddr>()
            .ok()
            .or_else(|| entry.parse::<SocketAddr>().ok().map(|addr| addr.ip()))?;
        Some(Forwarded(ip.to_canonical()))
    }
}

/// The address a source is counted by: IPv4-mapped IPv6 as IPv4, and with `by_prefix` an IPv6
/// address as its /64.
pub fn source_key(ip: IpAddr, by_prefix: bool) -> IpAddr {
    match ip.to_canonical() {
        IpAddr::V6(v6) if by_prefix => IpAddr::V6(std::net::Ipv6Addr::from(u128::from(v6) & !((1u128 << 64) - 1))),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_are_counted_by_address_or_prefix() {
        let ip = |text: &str| text.parse::<IpAddr>().unwrap();
        assert_eq!(source_key(ip("2001:db8:1:2:aaaa::1"), true), ip("2001:db8:1:2::"));
        assert_eq!(
            source_key(ip("2001:db8:1:2:aaaa::1"), false),
            ip("2001:db8:1:2:aaaa::1")
        );
        assert_eq!(source_key(ip("::ffff:192.0.2.7"), true), ip("192.0.2.7"));
        assert_eq!(source_key(ip("192.0.2.7"), true), ip("192.0.2.7"));
    }

    #[test]
    fn a_forwarder_on_loopback_names_the_client_in_its_last_entry() {
        let ip = |text: &str| text.parse::<IpAddr>().unwrap();
        let headers = |values: &[&str]| {
            let mut headers = HeaderMap::new();
            for value in values {
                headers.append("x-forwarded-for", value.parse().unwrap());
            }
            headers
        };
        let of = |peer: &str, values: &[&str]| Forwarded::of(ip(peer), &headers(values)).map(|f| f.0);
        assert_eq!(of("127.0.0.1", &["198.51.100.7"]), Some(ip("198.51.100.7")));
        // What the client wrote itself comes first; the forwarder's entry is the last.
        assert_eq!(of("127.0.0.1", &["10.0.0.1, 203.0.113.9"]), Some(ip("203.0.113.9")));
        assert_eq!(of("::1", &["1.2.3.4", "2001:db8::5"]), Some(ip("2001:db8::5")));
        assert_eq!(of("127.0.0.1", &["203.0.113.9:4711"]), Some(ip("203.0.113.9")));
        assert_eq!(of("::ffff:127.0.0.1", &["::ffff:192.0.2.1"]), Some(ip("192.0.2.1")));
        // Not from loopback, no header, or not an address: the peer counts.
        assert_eq!(of("192.168.1.5", &["198.51.100.7"]), None);
        assert_eq!(of("127.0.0.1", &[]), None);
        assert_eq!(of("127.0.0.1", &["198.51.100.7, unknown"]), None);
        assert_eq!(of("127.0.0.1", &["198.51.100.7,"]), None);
    }
}
