//! Asking the person at 2026-07-28: `note_delete` without `confirm` answers a client that declared
//! elicitation with an `input_required` result, and deletes only on the person's yes, with the
//! signed state this server gave for that very call. Any other client sees the tool as before.

use hyper::{Method, StatusCode};
use serde_json::{Value, json};

use crate::harness::{Client, TestServer};
use journal::auth::WriteMode;

fn params(arguments: Value, capabilities: Value, extra: Value) -> Value {
    let mut params = json!({
        "name": "note_delete",
        "arguments": arguments,
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": capabilities,
        },
    });
    for (key, value) in extra.as_object().unwrap() {
        params[key] = value.clone();
    }
    params
}

async fn call(server: &TestServer, key: &str, params: Value) -> Value {
    let auth = format!("Bearer {key}");
    let headers = [
        ("authorization", auth.as_str()),
        ("content-type", "application/json"),
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "tools/call"),
        ("mcp-name", "note_delete"),
    ];
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params});
    let reply = Client::new(&server.url(), None)
        .raw(Method::POST, &headers, body.to_string())
        .await;
    assert_eq!(reply.status, StatusCode::OK, "{:?}", reply.body);
    reply.json()
}

fn yes() -> Value {
    json!({"confirm": {"action": "accept", "content": {"confirm": true}}})
}

#[tokio::test]
async fn a_delete_asks_the_person_and_happens_only_on_their_yes_for_that_call() {
    let server = TestServer::start().await;
    let (client, _) = server.writer("asker", WriteMode::Force).await;
    let key = client.key.clone().unwrap();
    let notes = server.root().join("notes");
    let elicit = json!({"elicitation": {}});

    let first = call(
        &server,
        &key,
        params(json!({"path": "Ideas.md"}), elicit.clone(), json!({})),
    )
    .await;
    let result = &first["result"];
    assert_eq!(result["resultType"], "input_required", "{first}");
    let request = &result["inputRequests"]["confirm"];
    assert_eq!(request["method"], "elicitation/create");
    assert!(request["params"]["message"].as_str().unwrap().contains("Ideas.md"));
    let state = result["requestState"].as_str().unwrap().to_string();
    assert!(notes.join("Ideas.md").exists(), "nothing happens before the answer");

    // A state altered, or given for another note, is refused as a protocol error.
    for (arguments, token) in [
        (json!({"path": "Ideas.md"}), format!("{state}-TAMPERED")),
        (json!({"path": "Inbox.md"}), state.clone()),
    ] {
        let refused = call(
            &server,
            &key,
            params(
                arguments,
                elicit.clone(),
                json!({"inputResponses": yes(), "requestState": token}),
            ),
        )
        .await;
        assert_eq!(refused["error"]["code"], -32602, "{refused}");
    }
    let not_text = call(
        &server,
        &key,
        params(
            json!({"path": "Ideas.md"}),
            elicit.clone(),
            json!({"inputResponses": yes(), "requestState": 5}),
        ),
    )
    .await;
    assert_eq!(not_text["error"]["code"], -32602, "a state is the string given");
    // An answer to another question asks again; a no deletes nothing.
    let other = json!({"other": {"action": "accept", "content": {"other": true}}});
    let again = call(
        &server,
        &key,
        params(
            json!({"path": "Ideas.md"}),
            elicit.clone(),
            json!({"inputResponses": other, "requestState": state}),
        ),
    )
    .await;
    assert_eq!(again["result"]["resultType"], "input_required");
    let no = json!({"confirm": {"action": "decline"}});
    let declined = call(
        &server,
        &key,
        params(
            json!({"path": "Ideas.md"}),
            elicit.clone(),
            json!({"inputResponses": no, "requestState": state}),
        ),
    )
    .await;
    assert_eq!(declined["result"]["isError"], true);
    assert!(
        declined["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("did not say yes")
    );
    assert!(notes.join("Ideas.md").exists() && notes.join("Inbox.md").exists());

    // The person's yes, with the state of that call: the note goes to the trash.
    let done = call(
        &server,
        &key,
        params(
            json!({"path": "Ideas.md"}),
            elicit.clone(),
            json!({"inputResponses": yes(), "requestState": state}),
        ),
    )
    .await;
    assert_eq!(done["result"]["resultType"], "complete", "{done}");
    assert_eq!(done["result"]["isError"], false, "{done}");
    assert!(!notes.join("Ideas.md").exists());
    let log = journal::auth::audit::recent(&server.journal.db, 10, None)
        .await
        .unwrap();
    assert!(
        log.iter()
            .any(|r| r.tool == "note_delete" && r.detail.starts_with("input required"))
    );
    assert_eq!(
        (log[0].tool.as_str(), log[0].outcome.as_str()),
        ("note_delete", "served")
    );
}

#[tokio::test]
async fn a_client_that_cannot_ask_sees_the_tool_as_before() {
    let server = TestServer::start().await;
    let (client, _) = server.writer("plain", WriteMode::Force).await;
    let key = client.key.clone().unwrap();
    let notes = server.root().join("notes");
    // 2026-07-28 without elicitation: refused, as before, saying what to send.
    let refused = call(&server, &key, params(json!({"path": "Ideas.md"}), json!({}), json!({}))).await;
    assert_eq!(refused["result"]["isError"], true);
    assert!(
        refused["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("confirm: true")
    );
    // A 2025 session: the same.
    let text = client.refused("note_delete", json!({"path": "Ideas.md"})).await;
    assert!(text.contains("confirm: true"), "{text}");
    assert!(notes.join("Ideas.md").exists());
    // confirm: true needs no question, whoever asks.
    let done = call(
        &server,
        &key,
        params(
            json!({"path": "Ideas.md", "confirm": true}),
            json!({"elicitation": {}}),
            json!({}),
        ),
    )
    .await;
    assert_eq!(done["result"]["isError"], false, "{done}");
    assert!(!notes.join("Ideas.md").exists());
}
