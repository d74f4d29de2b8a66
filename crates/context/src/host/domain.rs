//! The own-domain route: `https://<owner's hostname>/mcp`, for agents anywhere, including the ones
//! that run in someone's cloud (Claude on the web, ChatGPT). TLS with the route's ACME certificate
//! is terminated by the listener; this router adds the Host rule (exactly the hostname, with the
//! port when it is not 443) and serves the same endpoints as every route, without the owner app and
//! without keys: agents here sign in.
//!
//! The proxy route, behind the owner's tunnel, answers under the tunnel's public name by the same
//! rules (its route carries that name and the public port).
//!
//! Browser-based clients call the route from their own pages (CORS), so the Origin is not restricted
//! for the API: a bearer token, never a cookie, is what authorizes a call there. The consent form
//! (`POST /authorize`) is the exception: it must come from this route's own page, since a form
//! posted from another site would carry the owner's browser into a decision.

use axum::http::{HeaderMap, Method, header};

use crate::Route;

/// Checks Host, and that the consent form comes from this route's own page; answers the refusal
/// code and a description.
pub fn check(
    method: &Method,
    path: &str,
    headers: &HeaderMap,
    route: &Route,
) -> Result<(), (&'static str, &'static str)> {
    if !host_allowed(headers, route) {
        return Err((
            "host_not_allowed",
            "this address only answers requests for its own hostname",
        ));
    }
    if method == Method::POST && path == "/authorize" && !own_origin_or_none(headers, route) {
        return Err((
            "cross_origin_blocked",
            "the consent form is answered from its own page only",
        ));
    }
    Ok(())
}

/// No Origin, or this route's own.
fn own_origin_or_none(headers: &HeaderMap, route: &Route) -> bool {
    headers
        .get(header::ORIGIN)
        .is_none_or(|origin| origin.to_str().ok() == Some(route.bound_origin().as_str()))
}

/// The Host is the route's hostname (in any case), with its public port when that is not 443
/// (and optionally `:443` when it is); the port the listener is bound to does not matter.
pub fn host_allowed(headers: &HeaderMap, route: &Route) -> bool {
    let Some(hostname) = route.hostname.as_deref() else {
        return false;
    };
    let host = headers.get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or("");
    // `:+443` and `:0443` parse as 443 but are not how the port is written: refused, as on the
    // local route, so that only the one spelling is ever echoed into a URL.
    let port_ok = match host.rsplit_once(':') {
        Some((_, port)) => super::local::written_as(port, route.port),
        None => route.port == 443,
    };
    let name = host.rsplit_once(':').map_or(host, |(name, _)| name);
    port_ok && name.eq_ignore_ascii_case(hostname)
}

#[cfg(test)]
mod tests {
    use axum::http::HeaderValue;

    use super::*;

    fn allowed(host: &str, route: &Route) -> bool {
        let mut headers = HeaderMap::new();
        headers.insert(header::HOST, HeaderValue::from_str(host).unwrap());
        host_allowed(&headers, route)
    }

    #[test]
    fn hosts() {
        let standard = Route::domain("journal.example.org", 443, "[::]:8443".parse().unwrap());
        for good in ["journal.example.org", "JOURNAL.example.org", "journal.example.org:443"] {
            assert!(allowed(good, &standard), "{good}");
        }
        for bad in [
            "journal.example.org:8443",
            "journal.example.org:+443",
            "journal.example.org:0443",
            "journal.example.org:443 ",
            "evil.example.org",
            "journal.example.org.evil.com",
            "203.0.113.5",
            "localhost",
            "",
            "journal.example.org:",
        ] {
            assert!(!allowed(bad, &standard), "{bad}");
        }
        let test_port = Route::domain("journal.test", 5001, "127.0.0.1:5001".parse().unwrap());
        assert!(allowed("journal.test:5001", &test_port));
        assert!(!allowed("journal.test", &test_port));
        assert!(!allowed("127.0.0.1:5001", &test_port));
        // Listening on 8443 behind a forward from 443: agents still say the hostname alone.
        assert!(!allowed("journal.example.org:8443", &standard));
        assert_eq!(standard.bound_origin(), "https://journal.example.org");
    }

    #[test]
    fn the_consent_form_comes_from_its_own_page() {
        let route = Route::domain("journal.example.org", 443, "[::]:443".parse().unwrap());
        let with = |origin: Option<&str>| {
            let mut headers = HeaderMap::new();
            if let Some(origin) = origin {
                headers.insert(header::ORIGIN, HeaderValue::from_str(origin).unwrap());
            }
            own_origin_or_none(&headers, &route)
        };
        assert!(with(None));
        assert!(with(Some("https://journal.example.org")));
        assert!(!with(Some("https://evil.example")));
        assert!(!with(Some("null")));
    }
}
