//! Live changes: `subscriptions/listen` at 2026-07-28, a 2025 session's GET stream, and stdio. The
//! owner narrowing or revoking a grant reaches the connection's open streams at once; a note that
//! changes reaches its subscribers; the server ends its streams when it stops. Every wait is bounded.

use std::time::Duration;

use hyper::{Method, StatusCode};
use serde_json::{Value, json};

use crate::harness::{Client, Events, TestServer};
use journal::auth::connections;
use journal::mcp::resources::uri_of;

/// How long a change may take to arrive: the listener looks four times a second, and a note edited
/// by hand reaches the notes at the next sync.
const WAIT: Duration = Duration::from_secs(15);

fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    })
}

async fn listen(server: &TestServer, key: &str, id: Value, notifications: Value) -> Events {
    let auth = format!("Bearer {key}");
    let body = json!({"jsonrpc": "2.0", "id": id, "method": "subscriptions/listen",
        "params": {"_meta": meta(), "notifications": notifications}});
    let headers = [
        ("authorization", auth.as_str()),
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "subscriptions/listen"),
    ];
    Events::open(&server.url(), Method::POST, &headers, body.to_string()).await
}

/// The method of the next message (a result has none).
async fn next_method(events: &mut Events) -> String {
    let message = events.next(WAIT).await.expect("a message within the wait");
    message["method"].as_str().unwrap_or("(a result)").to_string()
}

#[tokio::test]
async fn a_listen_stream_hears_the_owners_changes_and_ends_when_the_key_is_revoked() {
    let server = TestServer::start().await;
    let key = server.key("watcher", &["notes", "transcripts"], None).await;
    let inbox = uri_of("Inbox.md");
    let mut events = listen(
        &server,
        &key,
        json!("sub-1"),
        json!({"toolsListChanged": true, "promptsListChanged": true, "resourceSubscriptions": [inbox]}),
    )
    .await;
    assert_eq!(events.status, StatusCode::OK);
    assert!(
        events.headers["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/event-stream")
    );
    assert!(events.headers.get("mcp-session-id").is_none());
    let ack = events.next(WAIT).await.unwrap();
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(
        ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        "sub-1"
    );
    assert_eq!(
        ack["params"]["notifications"],
        json!({"toolsListChanged": true, "promptsListChanged": true, "resourceSubscriptions": [inbox]})
    );

    // A note the stream follows changes on disk.
    let path = server.root().join("notes/Inbox.md");
    let mut text = std::fs::read_to_string(&path).unwrap();
    text.push_str("\n- a new line\n");
    std::fs::write(&path, text).unwrap();
    let updated = events.next(WAIT).await.unwrap();
    assert_eq!(updated["method"], "notifications/resources/updated");
    assert_eq!(updated["params"]["uri"], inbox);
    assert_eq!(
        updated["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        "sub-1"
    );

    // The owner takes the notes away: the tool list and the prompts change (and the note is gone
    // for this connection, which is an update of it too). Resource list changes were not asked for.
    server.grant_by_label("watcher", &["transcripts"], None).await;
    let mut heard = Vec::new();
    for _ in 0..3 {
        heard.push(next_method(&mut events).await);
    }
    heard.sort();
    assert_eq!(
        heard,
        [
            "notifications/prompts/list_changed",
            "notifications/resources/updated",
            "notifications/tools/list_changed"
        ]
    );

    // Revoked: the stream ends with its result.
    connections::revoke_key(&server.journal.db, "watcher").await.unwrap();
    let last = events.next(WAIT).await.unwrap();
    assert_eq!(last["id"], "sub-1");
    assert_eq!(last["result"]["resultType"], "complete");
    assert_eq!(
        last["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        "sub-1"
    );
    assert!(events.ends_within(WAIT).await);
    assert!(
        server.state().mcp.streams.is_empty() || {
            tokio::time::sleep(Duration::from_millis(300)).await;
            server.state().mcp.streams.is_empty()
        }
    );
}

#[tokio::test]
async fn a_listen_request_is_checked_like_any_other_and_streams_are_bounded() {
    let server = TestServer::start().await;
    let key = server.key("watcher", &["notes"], None).await;
    let mut refused = listen(&server, &key, json!(1), json!("everything")).await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST);
    assert_eq!(refused.next(WAIT).await, None, "a JSON answer, not a stream");
    let many: Vec<String> = (0..101).map(|n| uri_of(&format!("n{n}.md"))).collect();
    let refused = listen(&server, &key, json!(1), json!({"resourceSubscriptions": many})).await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST);
    let stranger = listen(&server, "not-a-key", json!(1), json!({"toolsListChanged": true})).await;
    assert_eq!(stranger.status, StatusCode::UNAUTHORIZED);

    let mut open = Vec::new();
    for n in 0..16 {
        let mut events = listen(&server, &key, json!(n), json!({"toolsListChanged": true})).await;
        assert_eq!(events.status, StatusCode::OK);
        events.next(WAIT).await.unwrap();
        open.push(events);
    }
    let over = listen(&server, &key, json!(99), json!({"toolsListChanged": true})).await;
    assert_eq!(over.status, StatusCode::SERVICE_UNAVAILABLE);
    // A closed stream makes room.
    drop(open.pop());
    let mut room = None;
    for _ in 0..40 {
        let events = listen(&server, &key, json!(100), json!({"toolsListChanged": true})).await;
        if events.status == StatusCode::OK {
            room = Some(events);
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(room.is_some(), "room comes back once a stream is closed");
}

#[tokio::test]
async fn a_2025_sessions_get_stream_hears_list_changes_and_the_server_ends_streams_when_it_stops() {
    let server = TestServer::start().await;
    let key = server.key("session", &["notes"], None).await;
    let client = Client::connected(&server.url(), &key).await;
    let auth = format!("Bearer {key}");
    let session = client.session.clone().unwrap();
    let headers = [
        ("authorization", auth.as_str()),
        ("accept", "text/event-stream"),
        ("mcp-session-id", session.as_str()),
    ];
    let mut events = Events::open(&server.url(), Method::GET, &headers, String::new()).await;
    assert_eq!(events.status, StatusCode::OK);
    let initialized = client.rpc("initialize", json!({})).await;
    assert!(initialized["error"].is_object(), "the session is initialized already");

    server.grant_by_label("session", &["notes", "transcripts"], None).await;
    let heard = events.next(WAIT).await.unwrap();
    assert_eq!(heard["method"], "notifications/tools/list_changed");
    assert!(heard["params"].get("_meta").is_none(), "untagged on a session's stream");

    let mut listened = listen(&server, &key, json!(5), json!({"toolsListChanged": true})).await;
    listened.next(WAIT).await.unwrap();
    let capabilities = client
        .post(&json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25"}}))
        .await
        .json()["result"]["capabilities"]
        .clone();
    assert_eq!(capabilities["tools"]["listChanged"], true);
    assert_eq!(
        capabilities["resources"]["subscribe"], false,
        "2025 sessions subscribe to nothing"
    );

    let stopped = tokio::spawn(server.restart());
    // The listen stream ends with its result; the session's stream just ends.
    let last = listened.next(WAIT).await.unwrap();
    assert_eq!(
        (last["id"].clone(), last["result"]["resultType"].clone()),
        (json!(5), json!("complete"))
    );
    assert!(listened.ends_within(WAIT).await);
    assert!(events.ends_within(WAIT).await);
    let _restarted = stopped.await.unwrap();
}

#[tokio::test]
async fn stdio_carries_notifications_between_answers_and_a_cancel_ends_a_subscription() {
    use journal::mcp::catalog;
    use journal::mcp::session::{Limits, Sessions};
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

    let server = TestServer::start().await;
    server.key("local", &["notes"], None).await;
    let connection = connections::find_key(&server.journal.db, "local").await.unwrap();
    let state = catalog::state(server.journal.clone(), Sessions::new(Limits::default()));
    let (mut to_server, server_in) = tokio::io::duplex(64 * 1024);
    let (server_out, from_server) = tokio::io::duplex(64 * 1024);
    let serving = {
        let state = state.clone();
        tokio::spawn(async move {
            journal::mcp::stdio::serve(&state, &connection, BufReader::new(server_in), server_out).await
        })
    };
    let mut lines = BufReader::new(from_server).lines();
    let mut send = async |message: Value| {
        to_server.write_all(format!("{message}\n").as_bytes()).await.unwrap();
    };
    let mut next = async || -> Value {
        let line = tokio::time::timeout(WAIT, lines.next_line())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        serde_json::from_str(&line).unwrap()
    };
    send(json!({"jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen",
        "params": {"_meta": meta(), "notifications": {"toolsListChanged": true}}}))
    .await;
    let ack = next().await;
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], 1);
    send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"_meta": meta()}})).await;
    assert_eq!(
        next().await["id"],
        2,
        "requests are answered while a subscription is open"
    );
    // A second subscription under an open one's id, and a filter that is not one, are refused.
    send(json!({"jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen",
        "params": {"_meta": meta(), "notifications": {"toolsListChanged": true}}}))
    .await;
    let taken = next().await;
    assert_eq!(
        (taken["id"].clone(), taken["error"]["code"].clone()),
        (json!(1), json!(-32600))
    );
    send(json!({"jsonrpc": "2.0", "id": 9, "method": "subscriptions/listen",
        "params": {"_meta": meta(), "notifications": ["tools"]}}))
    .await;
    let bad = next().await;
    assert_eq!(
        (bad["id"].clone(), bad["error"]["code"].clone()),
        (json!(9), json!(-32602))
    );
    server.grant_by_label("local", &["notes", "transcripts"], None).await;
    let heard = next().await;
    assert_eq!(heard["method"], "notifications/tools/list_changed");
    assert_eq!(heard["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], 1);
    // The client cancels the subscription: nothing more comes of it.
    send(json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}})).await;
    send(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {"_meta": meta()}})).await;
    assert_eq!(next().await["id"], 3);
    let mut streams_closed = false;
    for _ in 0..40 {
        if state.streams.is_empty() {
            streams_closed = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(streams_closed, "the cancelled subscription's stream is closed");
    server.grant_by_label("local", &["notes"], None).await;
    // A 2025 session over stdio hears list changes without asking.
    send(json!({"jsonrpc": "2.0", "id": 4, "method": "initialize", "params": {"protocolVersion": "2025-11-25"}})).await;
    assert_eq!(next().await["id"], 4);
    server.grant_by_label("local", &["notes", "entities"], None).await;
    let heard = next().await;
    assert_eq!(heard["method"], "notifications/tools/list_changed");
    assert!(heard["params"].get("_meta").is_none(), "untagged in a session");
    drop(to_server);
    tokio::time::timeout(WAIT, serving).await.unwrap().unwrap().unwrap();
}
