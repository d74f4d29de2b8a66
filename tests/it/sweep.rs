//! The bad-input sweep: a corpus of malformed requests, each answered with the right HTTP status or
//! JSON-RPC error; afterwards the server still answers and the journal is unchanged.

use hyper::{Method, StatusCode};
use serde_json::{Value, json};

use crate::harness::{Client, TestServer};

/// Request headers of a case.
type Headers<'a> = Vec<(&'a str, &'a str)>;

/// What a case must get back.
enum Expect {
    Status(u16),
    /// HTTP status and JSON-RPC error code.
    Rpc(u16, i64),
    /// A tool result with isError.
    ToolError,
}

async fn journal_state(server: &TestServer) -> (i64, i64, usize) {
    let items: i64 = sqlx::query_scalar("SELECT count(*) FROM items")
        .fetch_one(&server.journal.db)
        .await
        .unwrap();
    let served: i64 = sqlx::query_scalar("SELECT count(*) FROM audit WHERE outcome IN ('served', 'empty')")
        .fetch_one(&server.journal.db)
        .await
        .unwrap();
    let memories = walk(&server.root().join("memory"));
    (items, served, memories)
}

fn walk(dir: &std::path::Path) -> usize {
    std::fs::read_dir(dir).map_or(0, |entries| {
        entries
            .flatten()
            .map(|e| if e.path().is_dir() { walk(&e.path()) } else { 1 })
            .sum()
    })
}

#[tokio::test]
async fn malformed_requests_get_clear_errors_and_change_nothing() {
    let server = TestServer::start().await;
    let key = server.key("sweep", &["transcripts", "entities", "facets"], None).await;
    let client = Client::connected(&server.url(), &key).await;
    let before = journal_state(&server).await;
    let deep = format!("{}{}", "[".repeat(5000), "]".repeat(5000));
    let deep_object = format!("{}1{}", "{\"a\":".repeat(300), "}".repeat(300));
    let call = |name: &str, arguments: Value| {
        json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": name, "arguments": arguments}})
            .to_string()
    };
    let cases: Vec<(&str, Vec<u8>, Expect)> = vec![
        (
            "broken JSON",
            b"{\"jsonrpc\": \"2.0\", ".to_vec(),
            Expect::Rpc(400, -32700),
        ),
        ("deeply nested arrays", deep.into_bytes(), Expect::Rpc(400, -32700)),
        (
            "deeply nested objects",
            deep_object.into_bytes(),
            Expect::Rpc(400, -32700),
        ),
        (
            "a number too large for a float",
            br#"{"jsonrpc":"2.0","id":1e999999,"method":"ping"}"#.to_vec(),
            Expect::Rpc(400, -32700),
        ),
        ("invalid UTF-8", vec![b'{', 0xc3, 0x28, b'}'], Expect::Rpc(400, -32700)),
        (
            "a lone surrogate escape",
            br#"{"jsonrpc":"2.0","id":1,"method":"\ud800"}"#.to_vec(),
            Expect::Rpc(400, -32700),
        ),
        (
            "a string, not a message",
            br#""ping""#.to_vec(),
            Expect::Rpc(400, -32600),
        ),
        ("null", b"null".to_vec(), Expect::Rpc(400, -32600)),
        (
            "method of the wrong type",
            br#"{"jsonrpc":"2.0","id":1,"method":7}"#.to_vec(),
            Expect::Rpc(400, -32600),
        ),
        (
            "params of the wrong type",
            br#"{"jsonrpc":"2.0","id":1,"method":"ping","params":"x"}"#.to_vec(),
            Expect::Rpc(400, -32600),
        ),
        (
            "jsonrpc 1.0",
            br#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#.to_vec(),
            Expect::Rpc(400, -32600),
        ),
        (
            "a batch in a 2025-11-25 session",
            br#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#.to_vec(),
            Expect::Rpc(400, -32600),
        ),
        ("an empty body", Vec::new(), Expect::Rpc(400, -32700)),
        (
            "an unknown method",
            br#"{"jsonrpc":"2.0","id":1,"method":"sampling/createMessage"}"#.to_vec(),
            Expect::Rpc(200, -32601),
        ),
        (
            "a bad tools/list cursor",
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":"zzz"}}"#.to_vec(),
            Expect::Rpc(200, -32602),
        ),
        (
            "an unknown tool",
            call("rm_rf", json!({})).into_bytes(),
            Expect::Rpc(200, -32602),
        ),
        (
            "tool arguments not an object",
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search","arguments":"q"}}"#.to_vec(),
            Expect::Rpc(200, -32602),
        ),
        (
            "a forged reference",
            call(
                "fetch",
                json!({"reference": "cmVmCnRyYW5zY3JpcHQ.AAAAAAAAAAAAAAAAAAAAAA"}),
            )
            .into_bytes(),
            Expect::ToolError,
        ),
        (
            "an oversized reference",
            call("fetch", json!({"reference": "a".repeat(3000)})).into_bytes(),
            Expect::ToolError,
        ),
        (
            "a forged cursor",
            call("search", json!({"query": "lease", "cursor": "bogus.bogus"})).into_bytes(),
            Expect::ToolError,
        ),
        (
            "a huge limit",
            call("search", json!({"query": "lease", "limit": 1u64 << 40})).into_bytes(),
            Expect::ToolError,
        ),
        (
            "a negative limit",
            call("list_transcripts", json!({"limit": -5})).into_bytes(),
            Expect::ToolError,
        ),
        (
            "a float limit",
            call("list_entities", json!({"limit": 2.5})).into_bytes(),
            Expect::ToolError,
        ),
        (
            "an unknown argument",
            call("list_facets", json!({"limit": 5, "sql": "drop"})).into_bytes(),
            Expect::ToolError,
        ),
        (
            "a path for a day",
            call("list_transcripts", json!({"day": "../../etc"})).into_bytes(),
            Expect::ToolError,
        ),
        (
            "an empty operation id",
            call("save_memory", json!({"content": "x", "operation_id": ""})).into_bytes(),
            Expect::ToolError,
        ),
        (
            "a traversal operation id",
            call("save_memory", json!({"content": "x", "operation_id": "../../x"})).into_bytes(),
            Expect::ToolError,
        ),
        (
            "a body over 64 KiB",
            format!("{{\"x\":\"{}\"}}", "a".repeat(70_000)).into_bytes(),
            Expect::Status(413),
        ),
    ];
    for (what, body, expect) in cases {
        let reply = client.send(Method::POST, body).await;
        match expect {
            Expect::Status(status) => assert_eq!(reply.status.as_u16(), status, "{what}"),
            Expect::Rpc(status, code) => {
                assert_eq!(
                    reply.status.as_u16(),
                    status,
                    "{what}: {:?}",
                    String::from_utf8_lossy(&reply.body)
                );
                assert_eq!(reply.json()["error"]["code"], code, "{what}");
                assert!(
                    !reply.json()["error"]["message"].as_str().unwrap().is_empty(),
                    "{what}: says why"
                );
            }
            Expect::ToolError => {
                assert_eq!(reply.status, StatusCode::OK, "{what}");
                let value = reply.json();
                assert_eq!(value["result"]["isError"], true, "{what}: {value}");
                assert!(
                    !value["result"]["content"][0]["text"].as_str().unwrap().is_empty(),
                    "{what}: says why"
                );
            }
        }
    }
    // Headers and media types.
    let auth = format!("Bearer {key}");
    let wrong_scheme = format!("Token {key}");
    let session = client.session.clone().unwrap();
    let bad_headers: Vec<(&str, Headers, u16)> = vec![
        (
            "no content type",
            vec![("authorization", &auth), ("mcp-session-id", &session)],
            415,
        ),
        (
            "form content type",
            vec![
                ("authorization", &auth),
                ("mcp-session-id", &session),
                ("content-type", "application/x-www-form-urlencoded"),
            ],
            415,
        ),
        (
            "an unsupported protocol version",
            vec![
                ("authorization", &auth),
                ("mcp-session-id", &session),
                ("content-type", "application/json"),
                ("mcp-protocol-version", "1999-01-01"),
            ],
            400,
        ),
        (
            "an unknown session",
            vec![
                ("authorization", &auth),
                ("mcp-session-id", "nope"),
                ("content-type", "application/json"),
            ],
            404,
        ),
        (
            "a session id of control characters",
            vec![
                ("authorization", &auth),
                ("mcp-session-id", "\t"),
                ("content-type", "application/json"),
            ],
            404,
        ),
        (
            "a malformed authorization",
            vec![("authorization", "Bearer"), ("content-type", "application/json")],
            401,
        ),
        (
            "a key in the wrong scheme",
            vec![("authorization", &wrong_scheme), ("content-type", "application/json")],
            401,
        ),
    ];
    for (what, headers, status) in bad_headers {
        let reply = client
            .raw(Method::POST, &headers, r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#)
            .await;
        assert_eq!(reply.status.as_u16(), status, "{what}");
    }

    assert_eq!(
        client.rpc("ping", json!({})).await["result"],
        json!({}),
        "the server is alive"
    );
    assert_eq!(
        journal_state(&server).await,
        before,
        "nothing was indexed, served or saved"
    );
}
