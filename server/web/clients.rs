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
    matches!(route, "domain" | "relay" | "proxy")
}

/// The clients, in the order the page lists them, for a route and its MCP address. The lines were
/// checked against the clients' own help (Claude Code 2.1, Codex 0.171, Gemini CLI 0.61) and run by
/// `tests/clients/`; README.md and docs/oauth.md show the same lines (`tests/it/app_pages.rs` checks).
pub fn for_route(route: &str, address: &str) -> Vec<ClientSetup> {
    let hosted = (!public(route)).then_some(if route == "lan" {
        "It connects from the internet, so it needs a route the internet reaches (your own domain or your tunnel); this route answers only on your own network."
    } else {
        "It connects from the internet, so it needs a route the internet reaches (your own domain or your tunnel); this route answers only on this computer."
    });
    vec![
        ClientSetup {
            name: "Claude Code",
            add: format!("claude mcp add --scope user --transport http journal {address}"),
            is_command: true,
            then: "Then run claude mcp login journal in a terminal (or type /mcp in Claude Code and choose journal).",
            unavailable: None,
        },
        ClientSetup {
            name: "Codex",
            add: format!("codex mcp add journal --url {address}"),
            is_command: true,
            then: "Make the pairing code first: Codex starts the sign-in by itself. To sign in again later, run codex mcp login journal (add --oauth-client-registration dcr if its usual sign-in fails).",
            unavailable: None,
        },
        ClientSetup {
            name: "Gemini CLI",
            add: format!("gemini mcp add -s user --transport http journal {address}"),
            is_command: true,
            then: "Start gemini in a folder you trust (it disables every server in other folders), then type /mcp auth journal.",
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
/// The key goes into one `export`; the client lines name the variable, so no key lands in a command
/// history or (for Gemini CLI, which expands `${JOURNAL_KEY}` itself) in a settings file. Codex reads
/// the variable each time it starts, so the export belongs in the shell's profile.
pub fn with_key(address: &str, key: &str) -> Vec<KeyLine> {
    vec![
        KeyLine {
            name: "First, in your shell and in its profile (Codex and Gemini CLI read the key from it every time they start)",
            line: format!("export JOURNAL_KEY={key}"),
        },
        KeyLine {
            name: "Claude Code",
            line: format!(
                "claude mcp add --scope user --transport http journal {address} --header \"Authorization: Bearer $JOURNAL_KEY\""
            ),
        },
        KeyLine {
            name: "Codex",
            line: format!("codex mcp add journal --url {address} --bearer-token-env-var JOURNAL_KEY"),
        },
        KeyLine {
            name: "Gemini CLI (then start it in a folder you trust)",
            line: format!(
                "gemini mcp add -s user --transport http journal {address} --header 'Authorization: Bearer ${{JOURNAL_KEY}}'"
            ),
        },
        KeyLine {
            name: "curl (starts a session; the answer's Mcp-Session-Id header names it)",
            line: format!(
                "curl -si {address} -H \"Authorization: Bearer $JOURNAL_KEY\" -H \"Content-Type: application/json\" -d '{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{{}},\"clientInfo\":{{\"name\":\"curl\",\"version\":\"1\"}}}}}}'"
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
        assert_eq!(
            local[0].add,
            format!("claude mcp add --scope user --transport http journal {LOCAL}")
        );
        let lan = for_route("lan", "https://192.168.1.20:7660/mcp");
        let why = lan.iter().find(|c| c.name == "ChatGPT").unwrap().unavailable.unwrap();
        assert!(why.contains("your own network"), "{why}");
    }

    #[test]
    fn key_lines_carry_the_key_and_valid_json() {
        let lines = with_key(LOCAL, "jk_secret");
        assert_eq!(lines[0].line, "export JOURNAL_KEY=jk_secret");
        assert!(
            lines[1..]
                .iter()
                .all(|l| !l.line.contains("jk_secret") && l.line.contains(LOCAL) && l.line.contains("JOURNAL_KEY")),
            "the key is in the export only"
        );
        assert!(
            lines[3].line.contains("'Authorization: Bearer ${JOURNAL_KEY}'"),
            "Gemini CLI expands it itself"
        );
        let curl = &lines.last().unwrap().line;
        let body = curl.split("-d '").nth(1).unwrap().trim_end_matches('\'');
        let parsed: serde_json::Value = serde_json::from_str(body).unwrap();
        assert_eq!(parsed["method"], "initialize");
    }
}
