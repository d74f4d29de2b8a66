//! Redirect URIs: which ones a client may register, and when a presented one matches a registered one.
//!
//! Allowed: loopback addresses over http with any port and path (native clients listen on a random
//! port), and the exact callbacks of the hosted agents the journal recognises. Everything is parsed
//! with a real URL parser and compared in its canonical form, so tricks such as userinfo
//! (`https://claude.ai@evil.example/`), odd case or encoded dots do not slip through.

use url::{Host, Url};

/// Hosted callbacks accepted exactly as written.
const HOSTED_EXACT: [&str; 4] = [
    "https://claude.ai/api/mcp/auth_callback",
    "https://claude.com/api/mcp/auth_callback",
    "https://chatgpt.com/connector_platform_oauth_redirect",
    "https://grok.com/connectors-oauth-exchange-code/",
];

/// Hosted callbacks that end in an id of the agent's own: (prefix, what the id may hold).
const HOSTED_PREFIX: [&str; 2] = [
    "https://chatgpt.com/connector/oauth/",
    "https://oauth-redirect.googleusercontent.com/r/user_bound_custom-mcp-",
];

/// Whether a client may register `uri`.
pub fn allowed(uri: &str) -> bool {
    let Ok(url) = Url::parse(uri) else { return false };
    if url.fragment().is_some() || !url.username().is_empty() || url.password().is_some() {
        return false;
    }
    if is_loopback(&url) {
        return url.scheme() == "http" || url.scheme() == "https";
    }
    // Hosted callbacks: the canonical form must be exactly what was sent.
    if url.as_str() != uri || url.query().is_some() {
        return false;
    }
    HOSTED_EXACT.contains(&uri)
        || HOSTED_PREFIX.iter().any(|prefix| {
            uri.strip_prefix(prefix).is_some_and(|id| {
                (1..=128).contains(&id.len()) && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
            })
        })
}

/// Whether a presented redirect URI matches a registered one: exactly, except that a loopback
/// URI may use another port (RFC 8252 7.3; Claude Code registers none and listens on a random one).
pub fn matches(registered: &str, presented: &str) -> bool {
    if registered == presented {
        return true;
    }
    let (Ok(mut registered), Ok(mut presented)) = (Url::parse(registered), Url::parse(presented)) else {
        return false;
    };
    if !is_loopback(&registered) || !is_loopback(&presented) || presented.fragment().is_some() {
        return false;
    }
    let _ = registered.set_port(None);
    let _ = presented.set_port(None);
    registered == presented
}

/// The origin (`scheme://host[:port]`) of a redirect URI, for the consent page's CSP.
pub fn origin(uri: &str) -> Option<String> {
    Url::parse(uri)
        .ok()
        .map(|url| url.origin().ascii_serialization())
        .filter(|o| o != "null")
}

/// The host a person should see on the consent page.
pub fn host(uri: &str) -> String {
    Url::parse(uri)
        .ok()
        .and_then(|u| u.host_str().map(str::to_string))
        .unwrap_or_else(|| uri.to_string())
}

fn is_loopback(url: &Url) -> bool {
    match url.host() {
        Some(Host::Domain(name)) => name.eq_ignore_ascii_case("localhost"),
        Some(Host::Ipv4(ip)) => ip.is_loopback(),
        Some(Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registration_allow_list() {
        for good in [
            "http://localhost:8080/callback",
            "http://127.0.0.1:51234/callback/abc123",
            "http://localhost/callback",
            "http://127.0.0.1/callback",
            "http://[::1]:9000/oauth/callback",
            "http://localhost:7777/oauth/callback",
            "https://claude.ai/api/mcp/auth_callback",
            "https://claude.com/api/mcp/auth_callback",
            "https://chatgpt.com/connector_platform_oauth_redirect",
            "https://chatgpt.com/connector/oauth/abc_123-X",
            "https://grok.com/connectors-oauth-exchange-code/",
            "https://oauth-redirect.googleusercontent.com/r/user_bound_custom-mcp-42",
        ] {
            assert!(allowed(good), "{good}");
        }
        for bad in [
            "https://evil.example/callback",
            "https://claude.ai@evil.example/api/mcp/auth_callback",
            "https://claude.ai/api/mcp/auth_callback?x=1",
            "https://claude.ai/api/mcp/auth_callback#frag",
            "https://CLAUDE.ai/api/mcp/auth_callback",
            "https://claude.ai/api/mcp/auth_callback/../../x",
            "https://chatgpt.com/connector/oauth/",
            "https://chatgpt.com/connector/oauth/a/b",
            "http://claude.ai/api/mcp/auth_callback",
            "http://localhost.evil.example/callback",
            "http://127.0.0.2.evil.example/cb",
            "http://user:pw@localhost:8080/cb",
            "javascript:alert(1)",
            "ftp://localhost/cb",
            "not a url",
            "",
        ] {
            assert!(!allowed(bad), "{bad}");
        }
    }

    #[test]
    fn matching_allows_only_loopback_ports_to_differ() {
        assert!(matches("http://localhost/callback", "http://localhost:53682/callback"));
        assert!(matches("http://127.0.0.1:1/callback", "http://127.0.0.1:2/callback"));
        assert!(!matches("http://localhost/callback", "http://localhost:53682/other"));
        assert!(!matches("http://localhost/callback", "http://127.0.0.1:53682/callback"));
        assert!(!matches(
            "https://claude.ai/api/mcp/auth_callback",
            "https://claude.ai/api/mcp/auth_callback/"
        ));
        assert!(matches(
            "https://claude.ai/api/mcp/auth_callback",
            "https://claude.ai/api/mcp/auth_callback"
        ));
        assert!(!matches("http://localhost/cb", "http://localhost:1/cb#x"));
        assert_eq!(origin("http://localhost:8080/cb").unwrap(), "http://localhost:8080");
        assert_eq!(host("https://claude.ai/api/mcp/auth_callback"), "claude.ai");
    }
}
