//! Routes: the ways of reaching the journal. Each has a router, Host rules and its own origin, which
//! is the issuer of its sign-ins and the base of its resource: `local` (loopback, plain HTTP, keys and
//! sign-ins), `lan` (the owner's private network or VPN, HTTPS from the journal's own CA, sign-ins
//! only) and `domain` (the owner's hostname, HTTPS from an ACME CA, sign-ins only). The endpoints themselves are the same on every route (`endpoints`); what differs is the
//! guard in front of them and whether the owner app is mounted.

pub mod domain;
pub mod lan;
pub mod layers;
pub mod local;
pub mod status;

use std::convert::Infallible;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use axum::extract::{ConnectInfo, FromRequestParts};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Extension, Router};
use serde_json::json;

use crate::app::AppState;
use crate::mcp::transport;
use crate::oauth::{authorize, discovery, register, revoke, token};

/// The local route's name.
pub const LOCAL: &str = "local";
/// The LAN route's name.
pub const LAN: &str = "lan";
/// The own-domain route's name.
pub const DOMAIN: &str = "domain";

/// One route, as its handlers need to know it.
#[derive(Debug, Clone)]
pub struct Route {
    /// `local`, `lan` or `domain`: grants, tokens and pairing codes are bound to it.
    pub name: &'static str,
    /// The port agents use in the route's URLs and Host.
    pub port: u16,
    /// The address the route's listener is bound to (its port is `port`, but on the domain route,
    /// where `port` is the public one).
    pub address: SocketAddr,
    /// The own-domain route's hostname (the others are reached at their address).
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

    /// Whether minted keys work here (only on the owner's own computer).
    pub fn accepts_keys(&self) -> bool {
        self.name == LOCAL
    }
}

/// The endpoints every route serves (MCP, discovery, registration, consent, tokens) and the route's
/// own (`extra`), all told which route they are on. Endpoints that browser-based clients call from
/// their own page answer CORS, with preflight.
pub fn endpoints(route: Route, extra: Router<AppState>) -> Router<AppState> {
    let cors = Router::new()
        .route(
            "/mcp",
            post(transport::post)
                .delete(transport::delete)
                .options(preflight)
                .fallback(transport::method_not_allowed),
        )
        .route(
            "/.well-known/oauth-protected-resource",
            get(discovery::protected_resource).options(preflight),
        )
        .route(
            "/.well-known/oauth-protected-resource/mcp",
            get(discovery::protected_resource).options(preflight),
        )
        .route(
            "/.well-known/oauth-authorization-server",
            get(discovery::authorization_server).options(preflight),
        )
        .route(
            "/.well-known/openid-configuration",
            get(discovery::authorization_server).options(preflight),
        )
        .route("/token", post(token::token).options(preflight))
        .route("/register", post(register::register).options(preflight))
        .route("/revoke", post(revoke::revoke).options(preflight))
        .layer(layers::AnyOrigin);
    Router::new()
        .route("/authorize", get(authorize::start).post(authorize::decide))
        .merge(cors)
        .merge(extra)
        .fallback(not_found)
        .layer(Extension(Arc::new(route)))
}

/// The refusal of a request with more than one `Host` header (400), which `layers::Guard` checks
/// before every route's own rules: each reads the first, and a server or proxy in front might read
/// another.
pub fn repeated_host(headers: &HeaderMap) -> Option<Response> {
    (headers.get_all(header::HOST).iter().count() > 1).then(|| {
        (
            StatusCode::BAD_REQUEST,
            [(header::CONTENT_TYPE, "application/json")],
            json!({ "error": "invalid_request", "error_description": "the request has more than one Host header" })
                .to_string(),
        )
            .into_response()
    })
}

/// A guard's refusal: 403 with a JSON error and a description.
pub fn forbidden(error: &str, description: &str) -> Response {
    (
        StatusCode::FORBIDDEN,
        [(header::CONTENT_TYPE, "application/json")],
        json!({ "error": error, "error_description": description }).to_string(),
    )
        .into_response()
}

/// CORS preflight: any origin the guard let through may call with these headers.
async fn preflight() -> Response {
    let mut response = StatusCode::NO_CONTENT.into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_METHODS,
        HeaderValue::from_static("GET, POST, DELETE, OPTIONS"),
    );
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_HEADERS,
        HeaderValue::from_static("authorization, content-type, mcp-protocol-version, mcp-session-id"),
    );
    headers.insert(header::ACCESS_CONTROL_MAX_AGE, HeaderValue::from_static("600"));
    response
}

async fn not_found() -> Response {
    (
        StatusCode::NOT_FOUND,
        [(header::CONTENT_TYPE, "application/json")],
        json!({"error": "not_found", "error_description": "nothing is served here; MCP is at /mcp"}).to_string(),
    )
        .into_response()
}

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
    match crate::tls::private_range::canonical(ip) {
        IpAddr::V6(v6) if by_prefix => IpAddr::V6(std::net::Ipv6Addr::from(u128::from(v6) & !((1u128 << 64) - 1))),
        other => other,
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
        let ip = |text: &str| text.parse::<IpAddr>().unwrap();
        assert_eq!(source_key(ip("2001:db8:1:2:aaaa::1"), true), ip("2001:db8:1:2::"));
        assert_eq!(
            source_key(ip("2001:db8:1:2:aaaa::1"), false),
            ip("2001:db8:1:2:aaaa::1")
        );
        assert_eq!(source_key(ip("::ffff:192.0.2.7"), true), ip("192.0.2.7"));
        assert_eq!(source_key(ip("192.0.2.7"), true), ip("192.0.2.7"));
        let test_port = Route::domain("journal.test", 5001, "127.0.0.1:5001".parse().unwrap());
        assert_eq!(test_port.mcp_url(), "https://journal.test:5001/mcp");
    }
}
