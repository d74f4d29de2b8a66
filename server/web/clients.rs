//! What to type into each agent to connect it: for a route's address, the command or setting each
//! client takes and what to do next; for a minted key, the lines that use it. Plain functions of
//! the address, so the pages, the docs and the tests agree.

/// How one client is added to a route.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientSetup {
    pub name: &'static str,
    /// A shell command to copy, or the setting to fill in (see `is_command`).
    pub add: String,
    pub is_command: bool,
    /// What to do after adding it, to sign in.
    pub then: &'static str,
    /// Why this client cannot use this route, when it cannot.
    pub unavailable: Option<&'static str>,
}

/// Whether a route is reachable from the internet (clients that run in someone's cloud, such as
/// Claude on the web and ChatGPT, connect from there).
fn public(route: &str) -> bool {
    matches!(route, "domain" | "relay")
}

/// The clients, in the order the page lists them, for a route and its MCP address.
pub fn for_route(route: &str, address: &str) -> Vec<ClientSetup> {
    let hosted = (!public(route)).then_some(if route == "lan" {
        "It connects from the internet, so it needs your own-domain route; this route answers only on your own network."
    } else {
        "It connects from the internet, so it needs your own-domain route; this route answers only on this computer."
    });
    vec![
        ClientSetup {
            name: "Claude Code",
            add: format!("claude mcp add --transport http journal {address}"),
            is_command: true,
            then: "In Claude Code, type /mcp and choose journal.",
            unavailable: None,
        },
        ClientSetup {
            name: "Codex",
            add: format!("codex mcp add journal --url {address}"),
            is_command: true,
            then: "Then run codex mcp login journal.",
            unavailable: None,
        },
        ClientSetup {
            name: "Gemini CLI",
            add: format!("gemini mcp add --transport http journal {address}"),
            is_command: true,
            then: "In Gemini CLI, type /mcp auth journal.",
            unavailable: None,
        },
        ClientSetup {
            name: "Claude on the web",
            add: format!("Settings → Connectors → Add custom connector, with the URL {address}"),
            is_command: false,
            then: "Then choose Connect beside it.",
            unavailable: hosted,
        },
        ClientSetup {
            name: "ChatGPT",
            add: format!("Settings → Apps & Connectors → Create (developer mode), with the URL {address} and OAuth"),
            is_command: false,
            then: "Then connect it from the same page.",
            unavailable: hosted,
        },
        ClientSetup {
            name: "Any other MCP client",
            add: format!("Add a Streamable HTTP server at {address}"),
            is_command: false,
            then: "It should find the journal's sign-in by itself.",
            unavailable: None,
        },
    ]
}

/// One line that uses a minted key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyLine {
    pub name: &'static str,
    pub line: String,
}

/// The lines that connect a client with a key instead of signing in (keys work on the local route).
pub fn with_key(address: &str, key: &str) -> Vec<KeyLine> {
    vec![
        KeyLine {
            name: "Claude Code",
            line: format!("claude mcp add --transport http journal {address} --header \"Authorization: Bearer {key}\""),
        },
        KeyLine {
            name: "Codex (reads the key from JOURNAL_KEY when it runs)",
            line: format!(
                "export JOURNAL_KEY={key}\ncodex mcp add journal --url {address} --bearer-token-env-var JOURNAL_KEY"
            ),
        },
        KeyLine {
            name: "Gemini CLI",
            line: format!("gemini mcp add --transport http journal {address} --header \"Authorization: Bearer {key}\""),
        },
        KeyLine {
            name: "curl (starts a session; the answer's Mcp-Session-Id header names it)",
            line: format!(
                "curl -si {address} -H \"Authorization: Bearer {key}\" -H \"Content-Type: application/json\" -d '{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{{}},\"clientInfo\":{{\"name\":\"curl\",\"version\":\"1\"}}}}}}'"
            ),
        },
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOCAL: &str = "http://127.0.0.1:7659/mcp";

    #[test]
    fn every_client_gets_the_address_and_hosted_ones_need_a_public_route() {
        let local = for_route("local", LOCAL);
        assert_eq!(local.len(), 6);
        assert!(local.iter().all(|client| client.add.contains(LOCAL)));
        let unavailable: Vec<_> = local
            .iter()
            .filter(|c| c.unavailable.is_some())
            .map(|c| c.name)
            .collect();
        assert_eq!(unavailable, ["Claude on the web", "ChatGPT"]);
        assert!(
            for_route("domain", "https://journal.example/mcp")
                .iter()
                .all(|client| client.unavailable.is_none())
        );
        assert_eq!(local[0].add, format!("claude mcp add --transport http journal {LOCAL}"));
        let lan = for_route("lan", "https://192.168.1.20:7660/mcp");
        let why = lan.iter().find(|c| c.name == "ChatGPT").unwrap().unavailable.unwrap();
        assert!(why.contains("your own network"), "{why}");
    }

    #[test]
    fn key_lines_carry_the_key_and_valid_json() {
        let lines = with_key(LOCAL, "jk_secret");
        assert!(
            lines
                .iter()
                .all(|l| l.line.contains("jk_secret") && l.line.contains(LOCAL))
        );
        let curl = &lines.last().unwrap().line;
        let body = curl.split("-d '").nth(1).unwrap().trim_end_matches('\'');
        let parsed: serde_json::Value = serde_json::from_str(body).unwrap();
        assert_eq!(parsed["method"], "initialize");
    }
}
