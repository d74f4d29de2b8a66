//! The built-in catalog of well-known client ID metadata documents.
//!
//! Claude Code and Codex sign in with a metadata document by default. Fetching it needs the
//! internet, and a journal on a laptop without it (or behind a DNS filter) would leave the user at a
//! dead end on the consent page. The documents of the well-known clients are therefore known here,
//! each with the name shown on the consent page and the rule its callbacks follow, and are used
//! without fetching. A `client_id` matches only exactly as written (no normalisation), as other
//! servers pin them; any other document URL is fetched as before.
//!
//! Each rule is at least as strict as the client's published document: the loopback callback path it
//! uses, on `localhost` or `127.0.0.1` with any port (native clients listen on a random one).

use url::{Host, Url};

/// A client the journal knows without fetching its document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KnownClient {
    /// The name on the consent page.
    pub name: &'static str,
    /// Where it may send the browser back.
    pub callbacks: Callbacks,
}

/// The callbacks a known client may use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Callbacks {
    /// `http://localhost:PORT<path>` or `http://127.0.0.1:PORT<path>`, any port.
    LoopbackPath(String),
    /// Any loopback callback over http, any port and path, and these hosted ones exactly.
    LoopbackAnyOr(&'static [&'static str]),
    /// Exactly these.
    Exact(&'static [&'static str]),
}

/// The longest id in a Codex per-installation document URL.
const MAX_CODEX_ID: usize = 64;

/// The known client behind `client_id`, if it is one of the catalog's documents, exactly.
pub fn lookup(client_id: &str) -> Option<KnownClient> {
    let loopback = |path: &str| Callbacks::LoopbackPath(path.to_string());
    let known = match client_id {
        "https://claude.ai/oauth/claude-code-client-metadata" => KnownClient {
            name: "Claude Code",
            callbacks: loopback("/callback"),
        },
        "https://chatgpt.com/oauth/codex/client.json" => KnownClient {
            name: "Codex",
            callbacks: loopback("/callback"),
        },
        "https://chatgpt.com/oauth/client.json" => KnownClient {
            name: "ChatGPT",
            callbacks: Callbacks::Exact(&["https://chatgpt.com/connector_platform_oauth_redirect"]),
        },
        "https://vscode.dev/oauth/client-metadata.json" => KnownClient {
            name: "Visual Studio Code",
            callbacks: Callbacks::LoopbackAnyOr(&["https://vscode.dev/redirect"]),
        },
        "https://zed.dev/oauth/client-metadata.json" => KnownClient {
            name: "Zed",
            callbacks: Callbacks::LoopbackAnyOr(&[]),
        },
        other => {
            let id = other
                .strip_prefix("https://chatgpt.com/oauth/codex/")?
                .strip_suffix("/client.json")?;
            if !codex_id(id) {
                return None;
            }
            KnownClient {
                name: "Codex",
                callbacks: Callbacks::LoopbackPath(format!("/callback/{id}")),
            }
        }
    };
    Some(known)
}

impl KnownClient {
    /// Whether the client may send the browser back to `uri`.
    pub fn allows(&self, uri: &str) -> bool {
        match &self.callbacks {
            Callbacks::LoopbackPath(path) => {
                loopback(uri).is_some_and(|url| url.path() == path && url.query().is_none())
            }
            Callbacks::LoopbackAnyOr(hosted) => loopback(uri).is_some() || hosted.contains(&uri),
            Callbacks::Exact(hosted) => hosted.contains(&uri),
        }
    }

    /// Callbacks to store and show for the client (the rule itself is what `allows` checks).
    pub fn examples(&self) -> Vec<String> {
        match &self.callbacks {
            Callbacks::LoopbackPath(path) => vec![format!("http://127.0.0.1{path}"), format!("http://localhost{path}")],
            Callbacks::LoopbackAnyOr(hosted) => ["http://127.0.0.1/", "http://localhost/"]
                .into_iter()
                .chain(hosted.iter().copied())
                .map(str::to_string)
                .collect(),
            Callbacks::Exact(hosted) => hosted.iter().map(|uri| uri.to_string()).collect(),
        }
    }
}

/// `uri` parsed, when it is an http URL on `localhost` or `127.0.0.1` written in canonical form,
/// without credentials or a fragment.
fn loopback(uri: &str) -> Option<Url> {
    let url = Url::parse(uri).ok()?;
    let host_ok = match url.host() {
        Some(Host::Domain(name)) => name == "localhost",
        Some(Host::Ipv4(ip)) => ip == std::net::Ipv4Addr::LOCALHOST,
        _ => false,
    };
    let plain = url.scheme() == "http"
        && url.username().is_empty()
        && url.password().is_none()
        && url.fragment().is_none()
        && url.as_str() == uri;
    (host_ok && plain).then_some(url)
}

fn codex_id(id: &str) -> bool {
    (1..=MAX_CODEX_ID).contains(&id.len()) && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_only_the_exact_document_urls() {
        assert_eq!(
            lookup("https://claude.ai/oauth/claude-code-client-metadata")
                .unwrap()
                .name,
            "Claude Code"
        );
        assert_eq!(
            lookup("https://chatgpt.com/oauth/codex/client.json").unwrap().name,
            "Codex"
        );
        assert_eq!(lookup("https://chatgpt.com/oauth/client.json").unwrap().name, "ChatGPT");
        assert_eq!(
            lookup("https://vscode.dev/oauth/client-metadata.json").unwrap().name,
            "Visual Studio Code"
        );
        assert_eq!(
            lookup("https://zed.dev/oauth/client-metadata.json").unwrap().name,
            "Zed"
        );
        assert_eq!(
            lookup("https://chatgpt.com/oauth/codex/abc_DEF-9/client.json")
                .unwrap()
                .name,
            "Codex"
        );
        for near in [
            "https://Claude.ai/oauth/claude-code-client-metadata",
            "https://claude.ai/oauth/claude-code-client-metadata/",
            "https://claude.ai/oauth/claude-code-client-metadata?x=1",
            "https://claude.ai:443/oauth/claude-code-client-metadata",
            "http://claude.ai/oauth/claude-code-client-metadata",
            "https://claude.ai.evil.example/oauth/claude-code-client-metadata",
            "https://chatgpt.com/oauth/codex//client.json",
            "https://chatgpt.com/oauth/codex/a/b/client.json",
            "https://chatgpt.com/oauth/codex/a.b/client.json",
            "https://claude.ai/oauth/mcp-oauth-client-metadata",
        ] {
            assert_eq!(lookup(near), None, "{near}");
        }
        let long = format!("https://chatgpt.com/oauth/codex/{}/client.json", "a".repeat(65));
        assert_eq!(lookup(&long), None);
    }

    #[test]
    fn each_client_keeps_to_its_callbacks() {
        let claude = lookup("https://claude.ai/oauth/claude-code-client-metadata").unwrap();
        for good in [
            "http://localhost:51234/callback",
            "http://127.0.0.1:9/callback",
            "http://localhost/callback",
        ] {
            assert!(claude.allows(good), "{good}");
        }
        for bad in [
            "http://localhost:51234/callback/x",
            "http://localhost:51234/other",
            "https://localhost:51234/callback",
            "http://[::1]:51234/callback",
            "http://evil.example/callback",
            "http://localhost:51234/callback?x=1",
            "http://user@localhost:51234/callback",
            "http://LOCALHOST:51234/callback",
            "https://claude.ai/api/mcp/auth_callback",
        ] {
            assert!(!claude.allows(bad), "{bad}");
        }
        let codex = lookup("https://chatgpt.com/oauth/codex/k1/client.json").unwrap();
        assert!(codex.allows("http://127.0.0.1:1455/callback/k1"));
        assert!(!codex.allows("http://127.0.0.1:1455/callback"));
        assert!(!codex.allows("http://127.0.0.1:1455/callback/k2"));
        let chatgpt = lookup("https://chatgpt.com/oauth/client.json").unwrap();
        assert!(chatgpt.allows("https://chatgpt.com/connector_platform_oauth_redirect"));
        assert!(!chatgpt.allows("http://localhost:1/callback"));
        let vscode = lookup("https://vscode.dev/oauth/client-metadata.json").unwrap();
        assert!(vscode.allows("http://127.0.0.1:33418/"));
        assert!(vscode.allows("https://vscode.dev/redirect"));
        assert!(!vscode.allows("https://vscode.dev/redirect/x"));
        assert_eq!(
            claude.examples(),
            ["http://127.0.0.1/callback", "http://localhost/callback"]
        );
    }
}
