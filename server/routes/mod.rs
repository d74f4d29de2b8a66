//! Routes: the ways of reaching the journal. Each has a router, Host rules and its own origin, which
//! is the issuer of its sign-ins and the base of its resource. Only the loopback route exists so far;
//! the LAN and own-domain routes arrive with their own listeners and certificates.

pub mod local;

use std::convert::Infallible;
use std::net::SocketAddr;

use axum::extract::{ConnectInfo, FromRequestParts};
use axum::http::request::Parts;
use axum::http::{HeaderMap, header};

/// One route, as its handlers need to know it.
#[derive(Debug, Clone)]
pub struct Route {
    /// `local`, later `lan` or `domain`: grants, tokens and pairing codes are bound to it.
    pub name: &'static str,
    pub port: u16,
    /// The address the route's listener is bound to (its port is `port`).
    pub address: SocketAddr,
}

impl Route {
    pub fn local(address: SocketAddr) -> Route {
        Route {
            name: "local",
            port: address.port(),
            address,
        }
    }

    /// The MCP endpoint's URL at the bound address, as the owner's pages show it to paste into an
    /// agent (`http://127.0.0.1:7659/mcp`, or `http://[::1]:7659/mcp` on IPv6 loopback).
    pub fn mcp_url(&self) -> String {
        format!("http://{}/mcp", self.address)
    }

    /// Every origin this route answers under. On loopback a client may use any of the three names.
    pub fn origins(&self) -> Vec<String> {
        ["127.0.0.1", "localhost", "[::1]"]
            .iter()
            .map(|host| format!("http://{host}:{}", self.port))
            .collect()
    }

    /// The origin a request used, from its (already checked) Host header: discovery documents name
    /// the origin the client actually reached, as RFC 8414 requires of the issuer.
    pub fn origin(&self, headers: &HeaderMap) -> String {
        let host = headers.get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or("");
        if local::host_allowed(host, self.port) {
            format!("http://{}", host.to_ascii_lowercase())
        } else {
            format!("http://{}", self.address)
        }
    }

    /// Whether minted keys work here (only on the owner's own computer).
    pub fn accepts_keys(&self) -> bool {
        self.name == "local"
    }
}

/// The address a request came from, for per-source quotas; `unknown` when the server did not record
/// it (routers driven without a socket in tests).
#[derive(Debug, Clone)]
pub struct Source(pub String);

impl<S: Send + Sync> FromRequestParts<S> for Source {
    type Rejection = Infallible;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Source, Infallible> {
        let ip = parts
            .extensions
            .get::<ConnectInfo<SocketAddr>>()
            .map(|info| info.0.ip().to_string());
        Ok(Source(ip.unwrap_or_else(|| "unknown".into())))
    }
}
