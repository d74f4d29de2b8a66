//! The local route: `http://127.0.0.1:7659/mcp`, for agents on the journal's own computer.
//!
//! Loopback is only safe if the request really is local: a web page the owner visits could make the
//! browser send requests here (DNS rebinding, cross-origin forms). So every request must name a
//! loopback Host with this listener's port, and a present Origin must be a loopback origin.

use axum::http::{HeaderMap, header};

/// Checks Host and Origin; answers the refusal code and a description.
pub fn check(headers: &HeaderMap, port: u16) -> Result<(), (&'static str, &'static str)> {
    let host = headers.get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or("");
    if !host_allowed(host, port) {
        return Err((
            "host_not_allowed",
            "this address only answers requests for 127.0.0.1, localhost or [::1] with its own port",
        ));
    }
    if let Some(origin) = headers.get(header::ORIGIN) {
        let origin = origin.to_str().unwrap_or("");
        if !origin_allowed(origin) {
            return Err((
                "cross_origin_blocked",
                "requests from web pages of other sites are refused",
            ));
        }
    }
    Ok(())
}

/// A loopback host name with this listener's port, written as the port is (`7659`: not `+7659`
/// nor `07659`, which a number parser accepts but which would then be echoed into the issuer).
pub fn host_allowed(host: &str, port: u16) -> bool {
    let Some((name, host_port)) = host.rsplit_once(':') else {
        return false;
    };
    written_as(host_port, port) && is_loopback_name(name)
}

/// Whether `text` is `port` in decimal with no sign and no leading zero (checked on every request,
/// so without formatting the port anew). Every route reads a Host's port this way.
pub(super) fn written_as(text: &str, port: u16) -> bool {
    !text.starts_with('0') && text.bytes().all(|b| b.is_ascii_digit()) && text.parse::<u16>() == Ok(port)
}

/// `http(s)://` and a loopback host, with any port: local tools such as the MCP Inspector run in
/// the browser on their own port.
pub fn origin_allowed(origin: &str) -> bool {
    let Some(rest) = origin
        .strip_prefix("http://")
        .or_else(|| origin.strip_prefix("https://"))
    else {
        return false;
    };
    if rest.contains('/') {
        return false;
    }
    let name = match rest.rsplit_once(':') {
        Some((name, port)) if !name.is_empty() && (port.parse::<u16>().is_ok()) && !rest.ends_with(']') => name,
        _ => rest,
    };
    is_loopback_name(name)
}

fn is_loopback_name(name: &str) -> bool {
    ["127.0.0.1", "localhost", "[::1]"]
        .iter()
        .any(|loopback| name.eq_ignore_ascii_case(loopback))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts() {
        for good in ["127.0.0.1:7659", "localhost:7659", "LOCALHOST:7659", "[::1]:7659"] {
            assert!(host_allowed(good, 7659), "{good}");
        }
        for bad in [
            "127.0.0.1",
            "127.0.0.1:7660",
            "evil.com:7659",
            "127.0.0.2:7659",
            "localhost.evil.com:7659",
            "",
            ":7659",
            "[::1]",
            "localhost:+7659",
            "localhost:07659",
            "localhost: 7659",
            "localhost:7659 ",
            "localhost:65536",
            "localhost:7659x",
            "localhost:0",
        ] {
            assert!(!host_allowed(bad, 7659), "{bad}");
        }
    }

    #[test]
    fn origins() {
        for good in [
            "http://127.0.0.1:7659",
            "http://localhost:6274",
            "https://localhost",
            "http://[::1]:3000",
        ] {
            assert!(origin_allowed(good), "{good}");
        }
        for bad in [
            "null",
            "http://evil.com",
            "http://localhost.evil.com",
            "file://",
            "http://127.0.0.1:7659/x",
            "ftp://localhost",
            "http://[::1]x",
        ] {
            assert!(!origin_allowed(bad), "{bad}");
        }
    }
}
