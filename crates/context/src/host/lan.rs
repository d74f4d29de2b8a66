//! The LAN route: `https://<private address>:7660/mcp`, for agents on the owner's other devices at
//! home, at the office or over a VPN. TLS (from the journal's own CA) is terminated by the listener
//! before a request gets here; this router adds the route's Host rule and serves the same endpoints
//! as every route, without the owner app (which stays on the owner's own computer) and without keys
//! (`Route::accepts_keys`): agents here sign in.
//!
//! Host must be this listener's IP literal with its port, exactly: a name that merely resolves here
//! (DNS rebinding) is refused. A present Origin must be this origin or a loopback one (a browser-based
//! tool such as the MCP Inspector, running on the device that connects).

use axum::http::{HeaderMap, header};

use super::local;
use crate::Route;

/// Checks Host and Origin; answers the refusal code and a description.
pub fn check(headers: &HeaderMap, route: &Route) -> Result<(), (&'static str, &'static str)> {
    let host = headers.get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or("");
    if !host_allowed(host, route) {
        return Err((
            "host_not_allowed",
            "this address only answers requests for its own IP address and port",
        ));
    }
    if let Some(origin) = headers.get(header::ORIGIN) {
        let origin = origin.to_str().unwrap_or("");
        if origin != route.bound_origin() && !local::origin_allowed(origin) {
            return Err((
                "cross_origin_blocked",
                "requests from web pages of other sites are refused",
            ));
        }
    }
    Ok(())
}

/// Exactly this route's address as a URL authority: `192.168.1.20:7660`, `[fd00::1]:7660`, and on
/// port 443 also without the port (as browsers send it).
pub fn host_allowed(host: &str, route: &Route) -> bool {
    let authority = route.bound_origin();
    let authority = authority.trim_start_matches("https://");
    let with_port = route.address.to_string();
    // IPv6 literals are compared case-insensitively (`[FD00::1]`); a spelling other than the
    // canonical one (`[fd00:0::1]`) is refused, as no client writes it.
    host.eq_ignore_ascii_case(authority) || host.eq_ignore_ascii_case(&with_port)
}

#[cfg(test)]
mod tests {
    use axum::http::HeaderValue;

    use super::*;

    fn route(address: &str) -> Route {
        Route::lan(address.parse().unwrap())
    }

    #[test]
    fn hosts() {
        let v4 = route("192.168.1.20:7660");
        assert!(host_allowed("192.168.1.20:7660", &v4));
        for bad in [
            "192.168.1.20",
            "192.168.1.20:7659",
            "192.168.1.21:7660",
            "journal.local:7660",
            "192.168.1.20.nip.io:7660",
            "localhost:7660",
            "127.0.0.1:7660",
            "",
            ":7660",
            "192.168.1.20:7660 ",
        ] {
            assert!(!host_allowed(bad, &v4), "{bad:?}");
        }
        let v6 = route("[fd00::1]:7660");
        assert!(host_allowed("[fd00::1]:7660", &v6));
        assert!(host_allowed("[FD00::1]:7660", &v6));
        assert!(!host_allowed("[fd00::1]", &v6));
        assert!(!host_allowed("fd00::1:7660", &v6));
        let standard = route("10.0.0.2:443");
        assert!(host_allowed("10.0.0.2", &standard));
        assert!(host_allowed("10.0.0.2:443", &standard));
        assert!(!host_allowed("10.0.0.2:7660", &standard));
    }

    #[test]
    fn origins() {
        let lan = route("192.168.1.20:7660");
        let with = |host: &str, origin: Option<&str>| {
            let mut headers = HeaderMap::new();
            headers.insert(header::HOST, HeaderValue::from_str(host).unwrap());
            if let Some(origin) = origin {
                headers.insert(header::ORIGIN, HeaderValue::from_str(origin).unwrap());
            }
            check(&headers, &lan).map_err(|(error, _)| error)
        };
        assert_eq!(with("192.168.1.20:7660", None), Ok(()));
        assert_eq!(with("192.168.1.20:7660", Some("https://192.168.1.20:7660")), Ok(()));
        assert_eq!(with("192.168.1.20:7660", Some("http://localhost:6274")), Ok(()));
        assert_eq!(with("evil.example:7660", None), Err("host_not_allowed"));
        for foreign in [
            "https://evil.example",
            "http://192.168.1.20:7660",
            "https://192.168.1.21:7660",
            "null",
        ] {
            assert_eq!(
                with("192.168.1.20:7660", Some(foreign)),
                Err("cross_origin_blocked"),
                "{foreign}"
            );
        }
    }
}
