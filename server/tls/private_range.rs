//! Which addresses the LAN route may serve on and be reached from: the private ranges of a home or
//! office network or a VPN, and never loopback or link-local.
//!
//! The LAN route binds only addresses in these ranges, its certificate authority is name-constrained
//! to them, and a peer outside them is refused. Plain functions over `IpAddr`, unit-tested at every
//! edge.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// The private IPv4 ranges, as (network, prefix length): RFC 1918 and the shared address space of
/// RFC 6598 (100.64/10, which VPNs such as Tailscale use).
pub const V4_RANGES: [([u8; 4], u8); 4] = [
    ([10, 0, 0, 0], 8),
    ([172, 16, 0, 0], 12),
    ([192, 168, 0, 0], 16),
    ([100, 64, 0, 0], 10),
];

/// The private IPv6 range: unique local addresses (RFC 4193), fc00::/7.
pub const V6_RANGE: ([u8; 16], u8) = ([0xfc, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], 7);

/// Whether the LAN route may bind to `ip` and put it in its certificate.
pub fn is_private(ip: IpAddr) -> bool {
    match canonical(ip) {
        IpAddr::V4(v4) => V4_RANGES.iter().any(|(net, prefix)| in_v4(v4, *net, *prefix)),
        IpAddr::V6(v6) => in_v6(v6, V6_RANGE.0, V6_RANGE.1),
    }
}

/// Whether a peer at `ip` may talk to the LAN route: it must be on a private network itself.
/// Loopback peers belong on the local route, and link-local or public ones are not the owner's
/// network.
pub fn peer_allowed(ip: IpAddr) -> bool {
    is_private(ip)
}

/// Why an address given for the LAN route cannot be used, in words for the owner; None when it can.
pub fn refusal(ip: IpAddr) -> Option<String> {
    let ip = canonical(ip);
    if is_private(ip) {
        return None;
    }
    let what = if ip.is_loopback() {
        "a loopback address, which the local route already serves"
    } else if ip.is_unspecified() {
        "the unspecified address; name one private address of this computer"
    } else if is_link_local(ip) {
        "a link-local address, which changes and cannot be named in a certificate"
    } else {
        "not a private address (the LAN route serves 10/8, 172.16/12, 192.168/16, 100.64/10 and fc00::/7)"
    };
    Some(format!("{ip} is {what}"))
}

/// An IPv4 address written as IPv6 (`::ffff:192.168.1.2`) is the IPv4 address it is: judged,
/// certified and compared as that.
pub fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        IpAddr::V4(_) => ip,
    }
}

fn is_link_local(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4.is_link_local(),
        IpAddr::V6(v6) => (v6.segments()[0] & 0xffc0) == 0xfe80,
    }
}

fn in_v4(ip: Ipv4Addr, net: [u8; 4], prefix: u8) -> bool {
    let mask = u32::MAX.checked_shl(32 - u32::from(prefix)).unwrap_or(0);
    (u32::from(ip) & mask) == (u32::from_be_bytes(net) & mask)
}

fn in_v6(ip: Ipv6Addr, net: [u8; 16], prefix: u8) -> bool {
    let mask = u128::MAX.checked_shl(128 - u32::from(prefix)).unwrap_or(0);
    (u128::from(ip) & mask) == (u128::from_be_bytes(net) & mask)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    #[test]
    fn every_private_range_is_served_to_its_edges() {
        for inside in [
            "10.0.0.0",
            "10.255.255.255",
            "172.16.0.0",
            "172.31.255.255",
            "192.168.0.0",
            "192.168.255.255",
            "100.64.0.0",
            "100.127.255.255",
            "fc00::",
            "fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
            "fd12:3456:789a::1",
            "::ffff:192.168.1.20",
        ] {
            assert!(is_private(ip(inside)), "{inside}");
            assert!(peer_allowed(ip(inside)), "{inside}");
            assert_eq!(refusal(ip(inside)), None, "{inside}");
        }
    }

    #[test]
    fn the_addresses_just_outside_and_the_special_ones_are_refused() {
        for outside in [
            "9.255.255.255",
            "11.0.0.0",
            "172.15.255.255",
            "172.32.0.0",
            "192.167.255.255",
            "192.169.0.0",
            "100.63.255.255",
            "100.128.0.0",
            "8.8.8.8",
            "fbff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
            "fe00::",
            "2001:db8::1",
            "::ffff:8.8.8.8",
        ] {
            assert!(!is_private(ip(outside)), "{outside}");
            assert!(
                refusal(ip(outside)).unwrap().contains("not a private address"),
                "{outside}"
            );
        }
        for (special, why) in [
            ("127.0.0.1", "loopback"),
            ("::1", "loopback"),
            ("::ffff:127.0.0.1", "loopback"),
            ("169.254.10.1", "link-local"),
            ("fe80::1", "link-local"),
            ("febf::1", "link-local"),
            ("0.0.0.0", "unspecified"),
            ("::", "unspecified"),
        ] {
            assert!(!peer_allowed(ip(special)), "{special}");
            assert!(refusal(ip(special)).unwrap().contains(why), "{special}: {why}");
        }
    }
}
