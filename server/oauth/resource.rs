//! Resource indicators (RFC 8707): whether the `resource` a client names is this route's MCP endpoint.
//!
//! Clients differ: some send `https://host/mcp`, some add a trailing slash, some send only the origin,
//! and case varies in scheme and host. All of these name the same resource; anything else is refused.

use url::Url;

/// Whether `resource` names the `/mcp` endpoint at one of `origins` (each `scheme://host[:port]`,
/// as `Url::origin` writes it).
pub fn matches(resource: &str, origins: &[String]) -> bool {
    let Ok(url) = Url::parse(resource) else { return false };
    if url.query().is_some() || url.fragment().is_some() || !url.username().is_empty() || url.password().is_some() {
        return false;
    }
    if !matches!(url.path(), "" | "/" | "/mcp" | "/mcp/") {
        return false;
    }
    let origin = url.origin().ascii_serialization();
    origins.iter().any(|o| o.eq_ignore_ascii_case(&origin))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_the_variants_clients_send_and_nothing_else() {
        let origins = vec!["https://journal.example".to_string()];
        for good in [
            "https://journal.example/mcp",
            "https://journal.example/mcp/",
            "https://journal.example",
            "https://journal.example/",
            "HTTPS://Journal.Example/mcp",
            "https://journal.example:443/mcp",
        ] {
            assert!(matches(good, &origins), "{good}");
        }
        for bad in [
            "https://journal.example/other",
            "https://journal.example/mcp/x",
            "https://journal.example/MCP",
            "https://journal.example:8443/mcp",
            "http://journal.example/mcp",
            "https://evil.example/mcp",
            "https://journal.example.evil.example/mcp",
            "https://journal.example/mcp?x=1",
            "https://journal.example/mcp#x",
            "https://user@journal.example/mcp",
            "journal.example/mcp",
            "",
        ] {
            assert!(!matches(bad, &origins), "{bad}");
        }
        let local = vec!["http://127.0.0.1:7659".to_string(), "http://localhost:7659".to_string()];
        assert!(matches("http://localhost:7659/mcp", &local));
        assert!(matches("http://127.0.0.1:7659", &local));
        assert!(!matches("http://127.0.0.1:7660/mcp", &local));
    }
}
