//! Which of this computer's addresses the LAN route serves when the owner has not named one: every
//! private address of an interface that is up, with one exception. 100.64/10 is the shared address
//! space of RFC 6598: VPNs such as Tailscale use it, but so do carriers for their customers' routers
//! (CGNAT), where an address in it faces the carrier's network, not the owner's. So an address in
//! 100.64/10 is served only on an interface that looks like a VPN (point-to-point, or named like
//! one), and never on an ordinary Ethernet or Wi-Fi interface.

use std::net::{IpAddr, Ipv4Addr};

use crate::tls::private_range;

/// One address of one interface, as the chooser needs to see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InterfaceAddress {
    pub interface: String,
    pub ip: IpAddr,
    /// Up and running (an interface that is down has addresses nobody can reach).
    pub up: bool,
    /// Point-to-point, as tunnels (WireGuard, Tailscale, OpenVPN's tun) are.
    pub point_to_point: bool,
}

/// Name prefixes of VPN interfaces on Linux, macOS and the BSDs.
const VPN_PREFIXES: [&str; 8] = ["tailscale", "wg", "tun", "utun", "zt", "nordlynx", "ipsec", "ppp"];

/// The addresses to serve, sorted and without repeats.
pub fn choose(addresses: &[InterfaceAddress]) -> Vec<IpAddr> {
    let mut chosen: Vec<IpAddr> = addresses
        .iter()
        .filter(|a| a.up && private_range::is_private(a.ip))
        .filter(|a| !in_shared_space(a.ip) || looks_like_vpn(a))
        .map(|a| private_range::canonical(a.ip))
        .collect();
    chosen.sort();
    chosen.dedup();
    chosen
}

/// This computer's interface addresses, read from the operating system.
pub fn current() -> std::io::Result<Vec<InterfaceAddress>> {
    Ok(if_addrs::get_if_addrs()?
        .into_iter()
        .map(|interface| InterfaceAddress {
            ip: interface.ip(),
            up: interface.is_oper_up() || interface.oper_status == if_addrs::IfOperStatus::Unknown,
            point_to_point: interface.is_p2p(),
            interface: interface.name,
        })
        .collect())
}

fn looks_like_vpn(address: &InterfaceAddress) -> bool {
    let name = address.interface.to_ascii_lowercase();
    address.point_to_point || VPN_PREFIXES.iter().any(|prefix| name.starts_with(prefix))
}

fn in_shared_space(ip: IpAddr) -> bool {
    match private_range::canonical(ip) {
        IpAddr::V4(v4) => (u32::from(v4) & 0xffc0_0000) == u32::from(Ipv4Addr::new(100, 64, 0, 0)),
        IpAddr::V6(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(interface: &str, ip: &str) -> InterfaceAddress {
        InterfaceAddress {
            interface: interface.into(),
            ip: ip.parse().unwrap(),
            up: true,
            point_to_point: false,
        }
    }

    fn chosen(addresses: &[InterfaceAddress]) -> Vec<String> {
        choose(addresses).iter().map(ToString::to_string).collect()
    }

    #[test]
    fn serves_every_private_address_and_nothing_else() {
        let addresses = [
            at("lo", "127.0.0.1"),
            at("lo", "::1"),
            at("eth0", "192.168.1.20"),
            at("eth0", "fe80::1"),
            at("eth0", "2001:db8::5"),
            at("eth0", "fd12:3456::20"),
            at("wlan0", "10.0.0.7"),
            at("wlan0", "169.254.3.4"),
            at("docker0", "172.17.0.1"),
            at("eth1", "8.8.8.8"),
            at("eth0", "192.168.1.20"),
        ];
        assert_eq!(
            chosen(&addresses),
            ["10.0.0.7", "172.17.0.1", "192.168.1.20", "fd12:3456::20"]
        );
        assert!(chosen(&[at("lo", "127.0.0.1"), at("eth0", "203.0.113.9")]).is_empty());
    }

    #[test]
    fn shared_address_space_only_on_a_vpn() {
        assert!(
            chosen(&[at("eth0", "100.72.1.2")]).is_empty(),
            "CGNAT on Ethernet faces the carrier"
        );
        assert!(chosen(&[at("wlp3s0", "100.127.255.254")]).is_empty());
        assert_eq!(chosen(&[at("tailscale0", "100.101.102.103")]), ["100.101.102.103"]);
        assert_eq!(chosen(&[at("wg0", "100.64.0.1")]), ["100.64.0.1"]);
        assert_eq!(chosen(&[at("utun4", "100.64.0.2")]), ["100.64.0.2"]);
        let mut tunnel = at("corp", "100.64.9.9");
        tunnel.point_to_point = true;
        assert_eq!(chosen(&[tunnel]), ["100.64.9.9"]);
        // Just outside the range is not shared space, and not private either.
        assert!(chosen(&[at("eth0", "100.128.0.1"), at("eth0", "100.63.255.255")]).is_empty());
    }

    #[test]
    fn skips_interfaces_that_are_down_and_folds_mapped_addresses() {
        let mut down = at("eth0", "192.168.1.20");
        down.up = false;
        assert!(chosen(&[down]).is_empty());
        assert_eq!(
            chosen(&[at("eth0", "::ffff:192.168.1.20"), at("eth0", "192.168.1.20")]),
            ["192.168.1.20"]
        );
    }
}
