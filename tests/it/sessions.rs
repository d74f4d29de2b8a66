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

#[tokio::test]
async fn at_most_sixteen_sessions_per_credential_and_none_evicted() {
    let server = TestServer::start().await;
    let key = server.key("a", &[], None).await;
    let other = server.key("b", &[], None).await;
    let mut first = Client::connected(&server.url(), &key).await;
    for _ in 1..16 {
        Client::connected(&server.url(), &key).await;
    }
    let mut one_more = Client::new(&server.url(), Some(&key));
    let reply = one_more
        .post(&json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25"}}))
        .await;
    assert_eq!(reply.status, StatusCode::TOO_MANY_REQUESTS);
    assert!(
        reply.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("16 open sessions")
    );
    assert_eq!(
        first.rpc("ping", json!({})).await["result"],
        json!({}),
        "the oldest session still works"
    );
    Client::connected(&server.url(), &other).await;
    assert_eq!(first.send(Method::DELETE, "").await.status, StatusCode::NO_CONTENT);
    first.session = None;
    one_more.initialize("2025-11-25").await;
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
