//! Where a request came from, as per-source quotas count it.

use std::convert::Infallible;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use axum::extract::{ConnectInfo, FromRequestParts};
use axum::http::request::Parts;

use super::route::{DOMAIN, Route};

/// The address a request came from, for per-source quotas (client registrations, pending
/// authorizations, pairing tries); `unknown` when the server did not record it (routers driven
/// without a socket in tests). On the own-domain route an IPv6 source is its /64, as for the
/// connection limits: one host there usually has a whole /64 to pick addresses from, so counting
/// single addresses would give it billions of quotas.
#[derive(Debug, Clone)]
pub struct Source(pub String);

impl<S: Send + Sync> FromRequestParts<S> for Source {
    type Rejection = Infallible;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Source, Infallible> {
        let by_prefix = parts
            .extensions
            .get::<Arc<Route>>()
            .is_some_and(|route| route.name == DOMAIN);
        let ip = parts
            .extensions
            .get::<ConnectInfo<SocketAddr>>()
            .map(|info| source_key(info.0.ip(), by_prefix).to_string());
        Ok(Source(ip.unwrap_or_else(|| "unknown".into())))
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
}
