//! Which route a request came in on: its name, its port and address, its origins and URLs. Every
//! handler is told its route (an `Extension<Arc<Route>>` that `routes::endpoints` adds), since
//! grants, tokens and pairing codes are bound to a route and discovery names the origin a client
//! reached.

use std::net::SocketAddr;

use axum::http::{HeaderMap, header};

use super::host::local;

/// The local route's name.
pub const LOCAL: &str = "local";
/// The LAN route's name.
pub const LAN: &str = "lan";
/// The own-domain route's name.
pub const DOMAIN: &str = "domain";
/// The name of the route behind the owner's tunnel or reverse proxy.
pub const PROXY: &str = "proxy";
/// The name of the route through a relay the owner runs (`journal relay serve`).
pub const RELAY: &str = "relay";

/// One route, as its handlers need to know it.
#[derive(Debug, Clone)]
pub struct Route {
    /// `local`, `lan`, `domain`, `proxy` or `relay`: grants, tokens and pairing codes are bound to it.
    pub name: &'static str,
    /// The port agents use in the route's URLs and Host.
    pub port: u16,
    /// The address the route's listener is bound to (its port is `port`, but on the domain route,
    /// where `port` is the public one).
    pub address: SocketAddr,
    /// The hostname of the own-domain, proxy and relay routes (the others are reached at their
    /// address).
    pub hostname: Option<String>,
}

impl Route {
    pub fn local(address: SocketAddr) -> Route {
        Route {
            name: LOCAL,
            port: address.port(),
            address,
            hostname: None,
        }
    }

    /// The LAN route as served on one of its addresses.
    pub fn lan(address: SocketAddr) -> Route {
        Route {
            name: LAN,
            port: address.port(),
            address,
            hostname: None,
        }
    }

    /// The own-domain route at `hostname` and the port agents use (`public_port`, 443 unless a
    /// forward says otherwise), served by a listener bound to `address` (whose port may differ: a
    /// router may forward 443 to 8443).
    pub fn domain(hostname: &str, public_port: u16, address: SocketAddr) -> Route {
        Route {
            name: DOMAIN,
            port: public_port,
            address,
            hostname: Some(hostname.to_string()),
        }
    }

    /// The route behind the owner's tunnel or reverse proxy, which agents reach at
    /// `https://hostname[:public_port]` and which forwards to the loopback `address`.
    pub fn proxy(hostname: &str, public_port: u16, address: SocketAddr) -> Route {
        Route {
            name: PROXY,
            port: public_port,
            address,
            hostname: Some(hostname.to_string()),
        }
    }

    /// The route through the owner's relay, at `NAME.<relay host>` and the relay's port; the
    /// journal is not listening anywhere (`address` is unspecified): the relay hands it connections.
    pub fn relay(hostname: &str, public_port: u16) -> Route {
        Route {
            name: RELAY,
            port: public_port,
            address: SocketAddr::from(([0, 0, 0, 0], public_port)),
            hostname: Some(hostname.to_string()),
        }
    }

    /// Whether anyone on the internet may reach the route: its sources are counted by IPv6 /64.
    pub fn public(&self) -> bool {
        self.name == DOMAIN || self.name == PROXY || self.name == RELAY
    }

    fn secure(&self) -> bool {
        self.name != LOCAL
    }

    /// The origin at the bound address: `http://127.0.0.1:7659`, `https://192.168.1.20:7660`,
    /// `https://[fd00::1]:7660`; the port is left out where it is the scheme's own.
    pub fn bound_origin(&self) -> String {
        let (scheme, default_port) = if self.secure() { ("https", 443) } else { ("http", 80) };
        if let Some(hostname) = &self.hostname {
            return if self.port == default_port {
                format!("{scheme}://{hostname}")
            } else {
                format!("{scheme}://{hostname}:{}", self.port)
            };
        }
        if self.port == default_port {
            let host = match self.address {
                SocketAddr::V4(v4) => v4.ip().to_string(),
                SocketAddr::V6(v6) => format!("[{}]", v6.ip()),
            };
            format!("{scheme}://{host}")
        } else {
            format!("{scheme}://{}", self.address)
        }
    }

    /// The MCP endpoint's URL at the bound address, as the owner's pages show it to paste into an
    /// agent (`http://127.0.0.1:7659/mcp`, or `http://[::1]:7659/mcp` on IPv6 loopback).
    pub fn mcp_url(&self) -> String {
        format!("{}/mcp", self.bound_origin())
    }

    /// Every origin this route answers under. On loopback a client may use any of the three names;
    /// the LAN route answers only at its own address.
    pub fn origins(&self) -> Vec<String> {
        if self.secure() {
            return vec![self.bound_origin()];
        }
        ["127.0.0.1", "localhost", "[::1]"]
            .iter()
            .map(|host| format!("http://{host}:{}", self.port))
            .collect()
    }

    /// The origin a request used, from its (already checked) Host header: discovery documents name
    /// the origin the client actually reached, as RFC 8414 requires of the issuer.
    pub fn origin(&self, headers: &HeaderMap) -> String {
        if self.secure() {
            return self.bound_origin();
        }
        let host = headers.get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or("");
        if local::host_allowed(host, self.port) {
            format!("http://{}", host.to_ascii_lowercase())
        } else {
            format!("http://{}", self.address)
        }
    }

    /// Whether minted keys work here: on the owner's own computer, and through the owner's relay,
    /// where the journal terminates TLS itself (scripts that run elsewhere reach it there). The
    /// domain and proxy routes are sign-ins only.
    pub fn accepts_keys(&self) -> bool {
        self.name == LOCAL || self.name == RELAY
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_of_each_route() {
        let local = Route::local("127.0.0.1:7659".parse().unwrap());
        assert_eq!(local.mcp_url(), "http://127.0.0.1:7659/mcp");
        assert_eq!(local.origins().len(), 3);
        assert!(local.accepts_keys());
        let lan = Route::lan("192.168.1.20:7660".parse().unwrap());
        assert_eq!(lan.mcp_url(), "https://192.168.1.20:7660/mcp");
        assert_eq!(lan.origins(), ["https://192.168.1.20:7660"]);
        assert_eq!(lan.origin(&HeaderMap::new()), "https://192.168.1.20:7660");
        assert!(!lan.accepts_keys());
        let v6 = Route::lan("[fd00::1]:7660".parse().unwrap());
        assert_eq!(v6.mcp_url(), "https://[fd00::1]:7660/mcp");
        let standard = Route::lan("[fd00::1]:443".parse().unwrap());
        assert_eq!(standard.bound_origin(), "https://[fd00::1]");
        assert_eq!(
            Route::lan("10.1.2.3:443".parse().unwrap()).bound_origin(),
            "https://10.1.2.3"
        );
        let domain = Route::domain("journal.example.org", 443, "[::]:8443".parse().unwrap());
        assert_eq!(domain.mcp_url(), "https://journal.example.org/mcp");
        assert_eq!(domain.origins(), ["https://journal.example.org"]);
        assert!(!domain.accepts_keys());
        let test_port = Route::domain("journal.test", 5001, "127.0.0.1:5001".parse().unwrap());
        assert_eq!(test_port.mcp_url(), "https://journal.test:5001/mcp");
        // Behind a tunnel: served in plain HTTP on loopback, named by the tunnel's HTTPS URL.
        let proxy = Route::proxy("journal.tail1234.ts.net", 443, "127.0.0.1:7661".parse().unwrap());
        assert_eq!(proxy.mcp_url(), "https://journal.tail1234.ts.net/mcp");
        assert_eq!(proxy.origin(&HeaderMap::new()), "https://journal.tail1234.ts.net");
        assert!(!proxy.accepts_keys(), "keys are for the owner's own computer");
        assert!(proxy.public() && domain.public() && !lan.public() && !local.public());
        let relay = Route::relay("alice.relay.example.org", 443);
        assert_eq!(relay.mcp_url(), "https://alice.relay.example.org/mcp");
        assert!(relay.public() && relay.accepts_keys());
    }
}
