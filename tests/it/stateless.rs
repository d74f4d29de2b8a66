//! MCP 2026-07-28 over HTTP beside the 2025 sessions: requests that carry their version in `_meta`,
//! `server/discover`, the standard headers, caching hints, and every refusal the era defines.

use hyper::{Method, StatusCode};
use serde_json::{Value, json};

use crate::harness::{Client, Reply, TestServer};
use journal::auth::connections;

const V: &str = "2026-07-28";

fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": V,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "it", "version": "1"},
    })
}

/// The params of a request with the era's `_meta` added.
fn with_meta(params: Value) -> Value {
    let mut params = params;
    params["_meta"] = meta();
    params
}

/// Posts one request with the standard headers a 2026-07-28 client sends (and `extra`, which
/// replaces a standard header of the same name).
async fn send(key: &str, url: &str, id: Value, method: &str, params: Value, extra: &[(&str, &str)]) -> Reply {
    let auth = format!("Bearer {key}");
    let name = params
        .get("name")
        .or_else(|| params.get("uri"))
        .and_then(Value::as_str)
        .map(str::to_string);
    let mut headers: Vec<(&str, &str)> = vec![
        ("authorization", &auth),
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
        ("mcp-protocol-version", V),
        ("mcp-method", method),
    ];
    if let Some(name) = &name
        && matches!(method, "tools/call" | "prompts/get" | "resources/read")
    {
        headers.push(("mcp-name", name));
    }
    for (header, value) in extra {
        headers.retain(|(h, _)| !h.eq_ignore_ascii_case(header));
        if !value.is_empty() {
            headers.push((header, value));
        }
    }
    let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    Client::new(url, None)
        .raw(Method::POST, &headers, body.to_string())
        .await
}

async fn ok(key: &str, url: &str, method: &str, params: Value) -> Value {
    let reply = send(key, url, json!(7), method, with_meta(params), &[]).await;
    assert_eq!(reply.status, StatusCode::OK, "{method}: {:?}", reply.body);
    assert!(reply.header("mcp-session-id").is_none(), "no session is minted");
    let body = reply.json();
    assert_eq!(body["id"], 7);
    let result = body["result"].clone();
    assert_eq!(result["resultType"], "complete", "{method}: {result}");
    assert_eq!(result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "journal");
    assert!(result["_meta"]["io.modelcontextprotocol/serverInfo"]["version"].is_string());
    result
}

#[tokio::test]
async fn discover_lists_both_eras_and_what_the_server_offers() {
    let server = TestServer::start().await;
    let key = server.key("modern", &["transcripts"], None).await;
    let result = ok(&key, &server.url(), "server/discover", json!({})).await;
    assert_eq!(
        result["supportedVersions"],
        json!(["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"])
    );
    assert!(result["capabilities"]["tools"].is_object());
    assert!(result["instructions"].as_str().unwrap().contains("list_facets"));
    assert_eq!(result["cacheScope"], "public", "the same for every caller");
    assert!(result["ttlMs"].as_u64().unwrap() > 0);
    assert!(result.get("protocolVersion").is_none());
    // clientInfo is optional.
    let mut params = with_meta(json!({}));
    params["_meta"]
        .as_object_mut()
        .unwrap()
        .remove("io.modelcontextprotocol/clientInfo");
    let reply = send(&key, &server.url(), json!(105), "server/discover", params, &[]).await;
    assert_eq!(reply.status, StatusCode::OK);
    // A 2025 session does not know the method.
    let session = Client::connected(&server.url(), &key).await;
    let legacy = session.rpc("server/discover", json!({})).await;
    assert_eq!(legacy["error"]["code"], -32601);
}

#[tokio::test]
async fn tools_are_listed_and_called_without_a_session_under_the_grant_as_it_is_now() {
    let server = TestServer::start().await;
    let key = server.key("modern", &["transcripts", "entities", "facets"], None).await;
    let url = server.url();
    let listed = ok(&key, &url, "tools/list", json!({})).await;
    assert_eq!(listed["cacheScope"], "private", "the list follows the credential");
    assert!(listed["ttlMs"].as_u64().unwrap() > 0);
    let names = |result: &Value| -> Vec<String> {
        result["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_string())
            .collect()
    };
    // The same tools, in the same order, as a 2025-11-25 session sees, and the same on every call.
    let session = Client::connected(&url, &key).await;
    let in_session = session.rpc("tools/list", json!({})).await["result"].clone();
    assert_eq!(names(&listed), names(&in_session));
    assert!(in_session.get("resultType").is_none(), "2025 results are as they were");
    assert_eq!(names(&ok(&key, &url, "tools/list", json!({})).await), names(&listed));
    assert!(listed["tools"][0]["outputSchema"].is_object(), "structured tools");

    let called = ok(
        &key,
        &url,
        "tools/call",
        json!({"name": "list_facets", "arguments": {}}),
    )
    .await;
    assert_eq!(called["isError"], false);
    assert!(called["structuredContent"].is_object());
    assert!(called.get("ttlMs").is_none(), "a call's result is not kept");
    let last = journal::auth::audit::recent(&server.journal.db, 1, None).await.unwrap();
    assert_eq!(
        (last[0].tool.as_str(), last[0].outcome.as_str()),
        ("list_facets", "served")
    );

    // The owner narrows the grant: the next request sees it, with no session to refresh.
    server.grant_by_label("modern", &[], None).await;
    let narrowed = ok(&key, &url, "tools/list", json!({})).await;
    assert!(!names(&narrowed).contains(&"list_transcripts".to_string()));
    let refused = ok(
        &key,
        &url,
        "tools/call",
        json!({"name": "list_transcripts", "arguments": {}}),
    )
    .await;
    assert_eq!(refused["isError"], true);
    assert!(
        refused["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("does not include")
    );

    // And revokes the key: the credential is checked on every request.
    connections::revoke_key(&server.journal.db, "modern").await.unwrap();
    let reply = send(&key, &url, json!(1), "tools/list", with_meta(json!({})), &[]).await;
    assert_eq!(reply.status, StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn every_refusal_has_the_specifications_code_status_and_the_requests_id() {
    let server = TestServer::start().await;
    let key = server.key("modern", &["transcripts"], None).await;
    let url = server.url();
    let without = |field: &str| {
        let mut params = with_meta(json!({}));
        params["_meta"].as_object_mut().unwrap().remove(field);
        params
    };
    let unknown_version = {
        let mut params = with_meta(json!({}));
        params["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("v999.0.0");
        params
    };
    let call = || with_meta(json!({"name": "list_facets", "arguments": {}}));
    type Case<'a> = (&'a str, &'a str, Value, Vec<(&'a str, &'a str)>, u16, i64);
    let cases: Vec<Case> = vec![
        ("no _meta", "server/discover", json!({}), vec![], 400, -32602),
        (
            "no version in _meta",
            "server/discover",
            without("io.modelcontextprotocol/protocolVersion"),
            vec![],
            400,
            -32602,
        ),
        (
            "no capabilities",
            "tools/list",
            without("io.modelcontextprotocol/clientCapabilities"),
            vec![],
            400,
            -32602,
        ),
        (
            "an unknown version, in both",
            "server/discover",
            unknown_version.clone(),
            vec![("mcp-protocol-version", "v999.0.0")],
            400,
            -32022,
        ),
        (
            "the header disagrees with _meta",
            "server/discover",
            unknown_version,
            vec![],
            400,
            -32020,
        ),
        (
            "no version header",
            "tools/list",
            with_meta(json!({})),
            vec![("mcp-protocol-version", "")],
            400,
            -32020,
        ),
        (
            "no method header",
            "tools/list",
            with_meta(json!({})),
            vec![("mcp-method", "")],
            400,
            -32020,
        ),
        (
            "a method header in capitals",
            "tools/list",
            with_meta(json!({})),
            vec![("mcp-method", "TOOLS/LIST")],
            400,
            -32020,
        ),
        (
            "no name header",
            "tools/call",
            call(),
            vec![("mcp-name", "")],
            400,
            -32020,
        ),
        (
            "another tool's name",
            "tools/call",
            call(),
            vec![("mcp-name", "search")],
            400,
            -32020,
        ),
        (
            "a name that is not base64",
            "tools/call",
            call(),
            vec![("mcp-name", "=?base64?***?=")],
            400,
            -32020,
        ),
        ("initialize", "initialize", with_meta(json!({})), vec![], 404, -32601),
        ("ping", "ping", with_meta(json!({})), vec![], 404, -32601),
        (
            "logging/setLevel",
            "logging/setLevel",
            with_meta(json!({"level": "debug"})),
            vec![],
            404,
            -32601,
        ),
        (
            "resources/subscribe",
            "resources/subscribe",
            with_meta(json!({"uri": "x"})),
            vec![],
            404,
            -32601,
        ),
        (
            "an unknown method",
            "unknown/method",
            with_meta(json!({})),
            vec![],
            404,
            -32601,
        ),
    ];
    let calls_before = journal::auth::audit::recent(&server.journal.db, 100, None)
        .await
        .unwrap()
        .len();
    for (i, (why, method, params, extra, status, code)) in cases.into_iter().enumerate() {
        let id = json!(format!("req-{i}"));
        let reply = send(&key, &url, id.clone(), method, params, &extra).await;
        assert_eq!(reply.status.as_u16(), status, "{why}: {:?}", reply.body);
        let body = reply.json();
        assert_eq!(body["error"]["code"], code, "{why}: {body}");
        assert_eq!(body["id"], id, "{why}: the error names the request");
        if code == -32022 {
            assert_eq!(body["error"]["data"]["requested"], "v999.0.0");
            assert!(
                body["error"]["data"]["supported"]
                    .as_array()
                    .unwrap()
                    .contains(&json!(V))
            );
        }
    }
    let calls_after = journal::auth::audit::recent(&server.journal.db, 100, None)
        .await
        .unwrap()
        .len();
    assert_eq!(calls_before, calls_after, "a refused request runs no tool");

    // Surrounding spaces are not part of a value, and a name may come base64-encoded.
    for name in ["  list_facets  ", "=?base64?bGlzdF9mYWNldHM=?="] {
        let reply = send(&key, &url, json!(1), "tools/call", call(), &[("mcp-name", name)]).await;
        assert_eq!(reply.status, StatusCode::OK, "{name}");
        assert_eq!(reply.json()["result"]["isError"], false);
    }
    // Header names in any case.
    let reply = send(
        &key,
        &url,
        json!(1),
        "tools/list",
        with_meta(json!({})),
        &[("MCP-METHOD", "tools/list")],
    )
    .await;
    assert_eq!(reply.status, StatusCode::OK);
}

#[tokio::test]
async fn a_stranger_learns_nothing_and_the_eras_do_not_mix() {
    let server = TestServer::start().await;
    let key = server.key("modern", &["transcripts"], None).await;
    let url = server.url();
    // Credentials first: without one, even a malformed 2026 request gets only the challenge.
    let reply = send("", &url, json!(1), "ping", json!({}), &[("authorization", "")]).await;
    assert_eq!(reply.status, StatusCode::UNAUTHORIZED);
    assert!(reply.header("www-authenticate").unwrap().contains("resource_metadata"));

    // A session id beside a 2026 request is ignored, never looked up.
    let reply = send(
        &key,
        &url,
        json!(1),
        "tools/list",
        with_meta(json!({})),
        &[("mcp-session-id", "no-such-session")],
    )
    .await;
    assert_eq!(reply.status, StatusCode::OK);

    // A notification is accepted; a batch and a response are not taken.
    let auth = format!("Bearer {key}");
    let headers = [
        ("authorization", auth.as_str()),
        ("content-type", "application/json"),
        ("mcp-protocol-version", V),
    ];
    let raw = Client::new(&url, None);
    let note = json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}});
    let reply = raw.raw(Method::POST, &headers, note.to_string()).await;
    assert_eq!(reply.status, StatusCode::ACCEPTED);
    let batch = json!([{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": with_meta(json!({}))}]);
    let reply = raw.raw(Method::POST, &headers, batch.to_string()).await;
    assert_eq!(reply.status, StatusCode::BAD_REQUEST);
    assert_eq!(reply.json()["error"]["code"], -32600);
    let response = json!({"jsonrpc": "2.0", "id": 1, "result": {}});
    let reply = raw.raw(Method::POST, &headers, response.to_string()).await;
    assert_eq!(reply.status, StatusCode::BAD_REQUEST);

    // A 2025 request without a session still needs one; initialize still opens one, and a request
    // in it that names 2026-07-28 in _meta is served statelessly beside it.
    let mut session = Client::new(&url, Some(&key));
    let reply = session
        .post(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}))
        .await;
    assert_eq!(reply.status, StatusCode::BAD_REQUEST);
    assert!(String::from_utf8_lossy(&reply.body).contains("initialize"));
    session.initialize("2026-07-28").await;
    assert_eq!(
        session.version.as_deref(),
        Some("2025-11-25"),
        "initialize selects 2025 semantics"
    );
    let plain = session.rpc("tools/list", json!({})).await;
    assert!(plain["result"].get("resultType").is_none());
}

/// Over stdio: a line that names 2026-07-28 in `_meta` is answered on its own (no headers there),
/// `server/discover` is the probe a client that speaks both sends first, and an `initialize` in
/// the same process still opens its 2025 session.
#[tokio::test]
async fn stdio_serves_both_eras_line_by_line() {
    use journal::mcp::catalog;
    use journal::mcp::session::{Limits, Sessions};

    let server = TestServer::start().await;
    server.key("local", &["transcripts"], None).await;
    let connection = connections::find_key(&server.journal.db, "local").await.unwrap();
    let state = catalog::state(server.journal.clone(), Sessions::new(Limits::default()));
    let lines = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": with_meta(json!({}))}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": with_meta(json!({}))}),
        json!({"jsonrpc": "2.0", "id": 3, "method": "ping", "params": with_meta(json!({}))}),
        json!({"jsonrpc": "2.0", "id": 4, "method": "tools/list", "params": {"_meta": {
            "io.modelcontextprotocol/protocolVersion": "2027-01-01",
            "io.modelcontextprotocol/clientCapabilities": {}}}}),
        json!({"jsonrpc": "2.0", "id": 5, "method": "tools/list", "params": {"_meta": {
            "io.modelcontextprotocol/protocolVersion": V}}}),
        json!({"jsonrpc": "2.0", "id": 6, "method": "tools/list"}),
        json!({"jsonrpc": "2.0", "id": 7, "method": "initialize", "params": {"protocolVersion": "2025-11-25"}}),
        json!({"jsonrpc": "2.0", "id": 8, "method": "tools/list"}),
        json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": with_meta(json!({"name": "list_facets"}))}),
    ];
    let input: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let mut output = Vec::new();
    journal::mcp::stdio::serve(&state, &connection, input.as_bytes(), &mut output)
        .await
        .unwrap();
    let replies: Vec<Value> = String::from_utf8(output)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(replies.len(), lines.len());
    let discovered = &replies[0]["result"];
    assert_eq!(discovered["resultType"], "complete");
    assert_eq!(discovered["supportedVersions"][0], V);
    assert_eq!(replies[1]["result"]["cacheScope"], "private");
    assert!(replies[1]["result"]["tools"].as_array().unwrap().len() > 1);
    assert_eq!(replies[2]["error"]["code"], -32601, "ping is gone at 2026-07-28");
    assert_eq!(replies[3]["error"]["code"], -32022);
    assert_eq!(replies[3]["error"]["data"]["supported"][0], V);
    assert_eq!(replies[4]["error"]["code"], -32602, "no capabilities");
    assert!(
        replies[5]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("initialize first"),
        "a 2025 request before initialize: {}",
        replies[5]
    );
    assert_eq!(replies[6]["result"]["protocolVersion"], "2025-11-25");
    assert!(replies[7]["result"]["tools"].is_array() && replies[7]["result"].get("resultType").is_none());
    assert_eq!(replies[8]["result"]["resultType"], "complete");
    assert_eq!(replies[8]["result"]["isError"], false);
    for (reply, line) in replies.iter().zip(&lines) {
        assert_eq!(reply["id"], line["id"]);
    }
}

/// A 2026-07-28 client in a browser page sends the standard headers across origins: the preflight
/// allows them.
#[tokio::test]
async fn the_preflight_allows_the_standard_headers() {
    let server = TestServer::start().await;
    let reply = Client::new(&server.url(), None)
        .raw(
            Method::OPTIONS,
            &[
                ("origin", "http://localhost:6274"),
                ("access-control-request-method", "POST"),
                (
                    "access-control-request-headers",
                    "mcp-method, mcp-name, mcp-protocol-version",
                ),
            ],
            "",
        )
        .await;
    assert_eq!(reply.status, StatusCode::NO_CONTENT);
    let allowed = reply.header("access-control-allow-headers").unwrap();
    for header in ["mcp-method", "mcp-name", "mcp-protocol-version", "authorization"] {
        assert!(allowed.split(", ").any(|h| h == header), "{header}: {allowed}");
    }
}
