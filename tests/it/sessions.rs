//! Sessions and protocol versions: issue, bind, expire, end; negotiation; batches.

use hyper::{Method, StatusCode};
use serde_json::json;

use crate::harness::{Client, TestServer};

#[tokio::test]
async fn negotiates_every_supported_version_and_offers_the_latest_otherwise() {
    let server = TestServer::start().await;
    let key = server.key("k", &["transcripts"], None).await;
    for (asked, answered) in [
        ("2025-03-26", "2025-03-26"),
        ("2025-06-18", "2025-06-18"),
        ("2025-11-25", "2025-11-25"),
        ("2024-11-05", "2025-11-25"),
        ("2026-07-28", "2025-11-25"),
    ] {
        let mut client = Client::new(&server.url(), Some(&key));
        let reply = client.initialize(asked).await;
        assert_eq!(reply.json()["result"]["protocolVersion"], answered, "{asked}");
        let session = reply.header("mcp-session-id").unwrap();
        assert!(session.len() >= 22 && session.bytes().all(|b| (0x21..=0x7e).contains(&b)));
    }
    let mut client = Client::new(&server.url(), Some(&key));
    let reply = client
        .post(&json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}))
        .await;
    assert_eq!(reply.json()["error"]["code"], -32602, "protocolVersion is required");
    client.initialize("2025-03-26").await;
}

/// Every tool a full grant offers has schemas every client reads without a warning: only formats
/// JSON Schema defines (no `uint`), no subschema that is a bare `true`.
#[tokio::test]
async fn every_tools_schemas_are_plain_json_schema() {
    let server = TestServer::start().await;
    let key = server
        .key("full", &["transcripts", "entities", "facets", "notes", "graph"], None)
        .await;
    let connection = journal::auth::connections::find_key(&server.journal.db, "full")
        .await
        .unwrap();
    journal::auth::connections::set_grant(
        &server.journal.db,
        &connection.id,
        &connection.grant.categories,
        None,
        journal::auth::WriteMode::Force,
    )
    .await
    .unwrap();
    let client = Client::connected(&server.url(), &key).await;
    let listed = client.rpc("tools/list", json!({})).await;
    let tools = listed["result"]["tools"].as_array().unwrap();
    assert!(tools.len() >= 25, "{}", tools.len());
    for tool in tools {
        for which in ["inputSchema", "outputSchema"] {
            let found = journal::mcp::schema::nonstandard(&tool[which]);
            assert!(found.is_empty(), "{} {which}: {found:?}", tool["name"]);
        }
    }
}

#[tokio::test]
async fn titles_output_schemas_and_structured_content_only_from_2025_06_18() {
    let server = TestServer::start().await;
    let key = server.key("k", &["transcripts"], None).await;
    let mut old = Client::new(&server.url(), Some(&key));
    old.initialize("2025-03-26").await;
    let tool = old.tool("search").await;
    assert!(
        tool.get("title").is_none() && tool.get("outputSchema").is_none(),
        "{tool}"
    );
    let result = old.call("list_facets", json!({})).await;
    assert!(result.get("structuredContent").is_none());
    assert!(result["content"][0]["text"].as_str().unwrap().contains("facets"));

    let new = Client::connected(&server.url(), &key).await;
    let tool = new.tool("search").await;
    assert_eq!(tool["title"], "search the journal");
    assert_eq!(tool["outputSchema"]["type"], "object");
    assert!(
        new.call("list_facets", json!({}))
            .await
            .get("structuredContent")
            .is_some()
    );
}

#[tokio::test]
async fn session_rules() {
    let server = TestServer::start().await;
    let key = server.key("a", &[], None).await;
    let other_key = server.key("b", &[], None).await;
    let mut client = Client::connected(&server.url(), &key).await;
    let session = client.session.clone().unwrap();

    client.session = None;
    let reply = client.post(&json!({"jsonrpc": "2.0", "id": 1, "method": "ping"})).await;
    assert_eq!(reply.status, StatusCode::BAD_REQUEST, "no session header");

    client.session = Some("AAAAAAAAAAAAAAAAAAAAAA".into());
    assert_eq!(
        client
            .post(&json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}))
            .await
            .status,
        StatusCode::NOT_FOUND
    );

    let mut stranger = Client::new(&server.url(), Some(&other_key));
    stranger.session = Some(session.clone());
    stranger.version = client.version.clone();
    assert_eq!(
        stranger
            .post(&json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}))
            .await
            .status,
        StatusCode::NOT_FOUND,
        "another credential's session"
    );
    assert_eq!(
        stranger.send(Method::DELETE, "").await.status,
        StatusCode::NOT_FOUND,
        "nor may it end it"
    );

    client.session = Some(session.clone());
    client.version = Some("2024-01-01".into());
    assert_eq!(
        client
            .post(&json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}))
            .await
            .status,
        StatusCode::BAD_REQUEST,
        "unsupported version"
    );
    client.version = Some("2025-03-26".into());
    let tools = client
        .post(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
        .await;
    assert_eq!(tools.status, StatusCode::OK, "another supported version is accepted");
    assert!(
        tools.json()["result"]["tools"][0].get("title").is_some(),
        "and the session keeps its negotiated version"
    );
    client.version = None;
    assert_eq!(
        client
            .post(&json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}))
            .await
            .status,
        StatusCode::OK,
        "no header: the session's version"
    );
    client.version = Some("2025-11-25".into());

    let again = client.rpc("initialize", json!({"protocolVersion": "2025-11-25"})).await;
    assert_eq!(
        again["result"]["protocolVersion"], "2025-11-25",
        "initialize always starts a new session"
    );

    client.session = None;
    assert_eq!(
        client.send(Method::DELETE, "").await.status,
        StatusCode::BAD_REQUEST,
        "DELETE without a session"
    );
    client.session = Some(session);
    assert_eq!(client.send(Method::DELETE, "").await.status, StatusCode::NO_CONTENT);
    assert_eq!(client.send(Method::DELETE, "").await.status, StatusCode::NOT_FOUND);
    assert_eq!(
        client
            .post(&json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}))
            .await
            .status,
        StatusCode::NOT_FOUND
    );
}

/// Claude Code and Gemini CLI never send DELETE: every start leaves a session open. A credential at
/// its cap ends its least recently used session instead of refusing (which locked users out).
#[tokio::test]
async fn two_hundred_initializes_on_one_key_all_succeed_and_the_newest_sixteen_answer() {
    let server = TestServer::start().await;
    let key = server.key("a", &[], None).await;
    let other = server.key("b", &[], None).await;
    let mut bystander = Client::connected(&server.url(), &other).await;
    let mut clients = Vec::new();
    for _ in 0..200 {
        let mut client = Client::new(&server.url(), Some(&key));
        let reply = client.initialize("2025-11-25").await;
        assert_eq!(reply.status, StatusCode::OK);
        clients.push(client);
    }
    for client in &clients[184..] {
        assert_eq!(client.rpc("ping", json!({})).await["result"], json!({}));
    }
    let evicted = &clients[183];
    let reply = evicted
        .post(&json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}))
        .await;
    assert_eq!(reply.status, StatusCode::NOT_FOUND, "an evicted session is gone");
    assert_eq!(
        reply.json()["error"]["message"].as_str().unwrap(),
        "no such session: it ended or expired; start a new one with initialize"
    );
    assert_eq!(
        bystander.rpc("ping", json!({})).await["result"],
        json!({}),
        "another credential's session is never evicted by this one"
    );
    assert_eq!(bystander.send(Method::DELETE, "").await.status, StatusCode::NO_CONTENT);
    bystander.session = None;
}

/// A session in use is not the least recently used: using the oldest keeps it, and the next oldest goes.
#[tokio::test]
async fn a_session_in_use_outlives_newer_idle_ones() {
    let server = TestServer::start().await;
    let key = server.key("a", &[], None).await;
    let first = Client::connected(&server.url(), &key).await;
    let mut rest = Vec::new();
    for _ in 1..16 {
        rest.push(Client::connected(&server.url(), &key).await);
    }
    assert_eq!(first.rpc("ping", json!({})).await["result"], json!({}));
    Client::connected(&server.url(), &key).await;
    assert_eq!(
        first.rpc("ping", json!({})).await["result"],
        json!({}),
        "used last, kept"
    );
    let reply = rest[0]
        .post(&json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}))
        .await;
    assert_eq!(
        reply.status,
        StatusCode::NOT_FOUND,
        "the least recently used one was ended"
    );
    assert_eq!(rest[1].rpc("ping", json!({})).await["result"], json!({}));
}

/// The server's cap: when every session is taken, the least recently used session of the credential
/// holding the most makes room, never one of a credential holding fewer.
#[tokio::test]
async fn a_full_server_ends_a_session_of_the_credential_holding_the_most() {
    let server = TestServer::start_with(journal::server::Options {
        sessions: journal::mcp::session::Limits {
            per_credential: 16,
            total: 6,
            idle: std::time::Duration::from_secs(600),
        },
        ..Default::default()
    })
    .await;
    let few = server.key("few", &[], None).await;
    let many = server.key("many", &[], None).await;
    let newcomer = server.key("newcomer", &[], None).await;
    let small = Client::connected(&server.url(), &few).await;
    let mut big = Vec::new();
    for _ in 0..5 {
        big.push(Client::connected(&server.url(), &many).await);
    }
    assert_eq!(small.rpc("ping", json!({})).await["result"], json!({}));
    for _ in 0..2 {
        let reply = Client::new(&server.url(), Some(&newcomer))
            .initialize("2025-11-25")
            .await;
        assert_eq!(reply.status, StatusCode::OK);
    }
    for gone in &big[..2] {
        let reply = gone.post(&json!({"jsonrpc": "2.0", "id": 1, "method": "ping"})).await;
        assert_eq!(reply.status, StatusCode::NOT_FOUND);
    }
    for kept in &big[2..] {
        assert_eq!(kept.rpc("ping", json!({})).await["result"], json!({}));
    }
    assert_eq!(
        small.rpc("ping", json!({})).await["result"],
        json!({}),
        "the smaller holder keeps its session"
    );
}

#[tokio::test]
async fn batches_only_in_2025_03_26_sessions() {
    let server = TestServer::start().await;
    let key = server.key("k", &[], None).await;
    let mut old = Client::new(&server.url(), Some(&key));
    old.initialize("2025-03-26").await;
    let reply = old
        .post(&json!([
            {"jsonrpc": "2.0", "id": 1, "method": "ping"},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
            {"jsonrpc": "2.0", "id": 3},
        ]))
        .await;
    assert_eq!(reply.status, StatusCode::OK);
    let replies = reply.json();
    let replies = replies.as_array().unwrap();
    assert_eq!(replies.len(), 3);
    assert_eq!(replies[0]["id"], 1);
    assert_eq!(replies[1]["result"]["tools"].as_array().unwrap().len(), 3);
    assert_eq!(replies[2]["error"]["code"], -32600);
    let reply = old
        .post(&json!([{"jsonrpc": "2.0", "method": "notifications/initialized"}]))
        .await;
    assert_eq!(reply.status, StatusCode::ACCEPTED);
    let reply = old.post(&json!([])).await;
    assert_eq!(reply.status, StatusCode::BAD_REQUEST);

    let new = Client::connected(&server.url(), &key).await;
    let reply = new.post(&json!([{"jsonrpc": "2.0", "id": 1, "method": "ping"}])).await;
    assert_eq!(reply.status, StatusCode::BAD_REQUEST);
    assert_eq!(reply.json()["error"]["code"], -32600);
}

/// A batch is bounded in messages and in the bytes of its reply: one small body must not make the
/// server hold hundreds of results at once.
#[tokio::test]
async fn batches_are_bounded_in_messages_and_reply_bytes() {
    let server = TestServer::start().await;
    let key = server.key("k", &[], None).await;
    let mut old = Client::new(&server.url(), Some(&key));
    old.initialize("2025-03-26").await;
    let too_many: Vec<_> = (0..33)
        .map(|i| json!({"jsonrpc": "2.0", "id": i, "method": "ping"}))
        .collect();
    let reply = old.post(&json!(too_many)).await;
    assert_eq!(reply.status, StatusCode::BAD_REQUEST);
    assert!(
        reply.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("at most 32 messages")
    );
    let most: Vec<_> = (0..32)
        .map(|i| json!({"jsonrpc": "2.0", "id": i, "method": "ping"}))
        .collect();
    assert_eq!(old.post(&json!(most)).await.json().as_array().unwrap().len(), 32);

    // Two memories of 32 KB make every recall about 130 KB of reply (text and structured content).
    for n in 0..2 {
        let content = format!("{n}{}", "m".repeat(32_000));
        let saved = old
            .post(
                &json!({"jsonrpc": "2.0", "id": 100 + n, "method": "tools/call", "params": {
                "name": "save_memory", "arguments": {"content": content, "operation_id": format!("op-{n}")}}}),
            )
            .await;
        assert_eq!(saved.json()["result"]["isError"], false, "{}", saved.json());
    }
    let recalls: Vec<_> = (0..32)
        .map(|i| json!({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": "recall_memory", "arguments": {}}}))
        .collect();
    let reply = old.post(&json!(recalls)).await;
    assert_eq!(reply.status, StatusCode::OK);
    let replies = reply.json();
    let replies = replies.as_array().unwrap();
    assert_eq!(replies.len(), 32, "every request is answered");
    let run = replies.iter().filter(|r| r.get("result").is_some()).count();
    let not_run: Vec<_> = replies.iter().filter(|r| r.get("error").is_some()).collect();
    assert!(run >= 1 && !not_run.is_empty(), "run {run}, not run {}", not_run.len());
    assert_eq!(run + not_run.len(), 32);
    for refused in not_run {
        assert_eq!(refused["error"]["code"], -32603);
        assert!(
            refused["error"]["message"]
                .as_str()
                .unwrap()
                .contains("send it again on its own")
        );
    }
    let largest = replies
        .iter()
        .filter(|r| r.get("result").is_some())
        .map(|r| r.to_string().len())
        .max()
        .unwrap();
    assert!(
        reply.body.len() <= journal::mcp::transport::MAX_BATCH_REPLY_BYTES + largest + 32 * 256,
        "the reply stops growing at the bound: {} bytes",
        reply.body.len()
    );
}
