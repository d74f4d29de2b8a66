//! The owner's skills as MCP prompts and notes as MCP resources, in a 2025 session and at
//! 2026-07-28: the notes grant decides, private = missing on every path, each read is audited, and
//! the answers carry each era's fields.

use hyper::StatusCode;
use serde_json::{Value, json};

use crate::harness::{Client, TestServer, eventually};
use journal::journal::demo_notes;
use journal::mcp::resources::{self, path_of, uri_of};

fn names(list: &Value, field: &str, key: &str) -> Vec<String> {
    list[field]
        .as_array()
        .unwrap_or_else(|| panic!("no {field} in {list}"))
        .iter()
        .map(|item| item[key].as_str().unwrap().to_string())
        .collect()
}

/// Every resource of every page, following nextCursor.
async fn all_resources(client: &Client) -> Vec<Value> {
    let mut all = Vec::new();
    let mut cursor = Value::Null;
    for _ in 0..20 {
        let page = client.rpc("resources/list", json!({ "cursor": cursor })).await["result"].clone();
        all.extend(page["resources"].as_array().unwrap().iter().cloned());
        cursor = page["nextCursor"].clone();
        if cursor.is_null() {
            return all;
        }
    }
    panic!("resources/list never ended");
}

#[tokio::test]
async fn skills_are_prompts_under_the_notes_grant() {
    let server = TestServer::start().await;
    let key = server.key("notes", &["notes"], None).await;
    let client = Client::connected(&server.url(), &key).await;
    let initialized = client.rpc("ping", json!({})).await;
    assert!(initialized["result"].is_object());

    let listed = client.rpc("prompts/list", json!({})).await["result"].clone();
    assert_eq!(names(&listed, "prompts", "name"), ["meeting-notes", "weekly-review"]);
    let review = &listed["prompts"][1];
    assert!(review["description"].as_str().unwrap().contains("Fridays"));
    assert_eq!(review["arguments"][0]["name"], "request");
    assert_eq!(review["arguments"][0]["required"], false);

    let got = client
        .rpc(
            "prompts/get",
            json!({"name": "weekly-review", "arguments": {"request": "for the week of the move"}}),
        )
        .await["result"]
        .clone();
    let text = got["messages"][0]["content"]["text"].as_str().unwrap();
    assert_eq!(got["messages"][0]["role"], "user");
    let file = std::fs::read_to_string(server.root().join("notes").join(demo_notes::SKILL_FILES[0])).unwrap();
    let body_line = file.lines().find(|l| l.starts_with("# Weekly review")).unwrap();
    assert!(text.contains(body_line), "{text}");
    assert!(text.ends_with("for the week of the move"), "{text}");

    // Unknown, hidden and malformed names are one answer.
    for name in ["no-such-skill", "../Areas", ".hidden", ""] {
        let refused = client.rpc("prompts/get", json!({"name": name})).await;
        assert_eq!(refused["error"]["code"], -32602, "{name}");
        assert_eq!(
            refused["error"]["message"],
            format!("unknown prompt: {name}; see prompts/list"),
            "{name}"
        );
    }
    let last = journal::auth::audit::recent(&server.journal.db, 2, None).await.unwrap();
    assert_eq!(last[0].tool, "prompts/get");
    assert_eq!(last[0].outcome.as_str(), "refused");
    let served = journal::auth::audit::recent(&server.journal.db, 10, None)
        .await
        .unwrap();
    assert!(
        served
            .iter()
            .any(|r| r.tool == "prompts/get" && r.outcome.as_str() == "served")
    );

    // Without the notes grant: no prompts, and the skill is unknown.
    server.grant_by_label("notes", &["transcripts"], None).await;
    let narrowed = client.rpc("prompts/list", json!({})).await["result"].clone();
    assert_eq!(narrowed["prompts"], json!([]));
    let refused = client.rpc("prompts/get", json!({"name": "weekly-review"})).await;
    assert_eq!(
        refused["error"]["message"],
        "unknown prompt: weekly-review; see prompts/list"
    );
}

#[tokio::test]
async fn notes_are_resources_and_private_is_missing() {
    let server = TestServer::start().await;
    let key = server.key("notes", &["notes"], None).await;
    let client = Client::connected(&server.url(), &key).await;
    // More notes than one page holds.
    let bulk = server.root().join("notes/Bulk");
    std::fs::create_dir_all(&bulk).unwrap();
    for n in 0..60 {
        std::fs::write(bulk.join(format!("note {n}.md")), format!("# Bulk {n}\n")).unwrap();
    }
    let synced = eventually(100, || async {
        client.ok("notes_list", json!({"folder": "Bulk", "limit": 100})).await["notes"]
            .as_array()
            .unwrap()
            .len()
            == 60
    })
    .await;
    assert!(synced, "the new notes are listed within the sync interval");
    let resources = all_resources(&client).await;
    let paths: Vec<String> = resources
        .iter()
        .map(|r| path_of(r["uri"].as_str().unwrap()).unwrap())
        .collect();
    assert!(paths.contains(&"Inbox.md".to_string()));
    assert!(
        !paths.contains(&demo_notes::PRIVATE_NOTE.to_string()),
        "private = missing"
    );
    for path in demo_notes::QUARANTINED_FILES {
        assert!(!paths.iter().any(|p| p == path), "{path} is quarantined");
    }
    let mut expected = Vec::new();
    let mut arguments = json!({"limit": 100});
    for _ in 0..10 {
        let listed = client.ok("notes_list", arguments.clone()).await;
        expected.extend(names(&listed, "notes", "path"));
        match listed["next_cursor"].as_str() {
            Some(cursor) => arguments["cursor"] = json!(cursor),
            None => break,
        }
    }
    let mut sorted = paths.clone();
    expected.sort();
    sorted.sort();
    assert_eq!(sorted, expected, "the notes notes_list shows");
    assert!(paths.len() > resources::PAGE, "more than one page: {}", paths.len());
    for resource in &resources {
        assert_eq!(resource["mimeType"], "text/markdown");
        assert_eq!(
            resource["name"].as_str().map(uri_of),
            resource["uri"].as_str().map(String::from)
        );
    }

    let templates = client.rpc("resources/templates/list", json!({})).await["result"].clone();
    assert_eq!(
        templates["resourceTemplates"][0]["uriTemplate"],
        "journal://notes/{+path}"
    );

    let read = client.rpc("resources/read", json!({"uri": uri_of("Inbox.md")})).await["result"].clone();
    let file = std::fs::read_to_string(server.root().join("notes/Inbox.md")).unwrap();
    assert_eq!(read["contents"][0]["text"], file, "the file as it is");
    let with_frontmatter =
        std::fs::read_to_string(server.root().join("notes").join(demo_notes::READ_ONLY_NOTE)).unwrap();
    assert!(with_frontmatter.starts_with("---"));
    let fronted = client
        .rpc("resources/read", json!({"uri": uri_of(demo_notes::READ_ONLY_NOTE)}))
        .await["result"]
        .clone();
    assert_eq!(fronted["contents"][0]["text"], with_frontmatter, "frontmatter and all");
    assert_eq!(read["contents"][0]["uri"], uri_of("Inbox.md"));

    // A private note, a missing one, another scheme and a path that climbs out: one answer (-32002
    // in a 2025 session), naming the URI asked for.
    for uri in [
        uri_of(demo_notes::PRIVATE_NOTE),
        uri_of("No/such.md"),
        "file:///etc/passwd".to_string(),
        "journal://notes/../journal.sqlite".to_string(),
    ] {
        let refused = client.rpc("resources/read", json!({ "uri": uri })).await;
        assert_eq!(refused["error"]["code"], -32002, "{uri}");
        assert_eq!(refused["error"]["message"], format!("resource not found: {uri}"));
        assert_eq!(refused["error"]["data"]["uri"], uri);
    }
    let audited = journal::auth::audit::recent(&server.journal.db, 5, None).await.unwrap();
    assert_eq!(audited[0].tool, "resources/read");
    assert!(
        audited[0].detail.contains("journal://notes/../journal.sqlite"),
        "{}",
        audited[0].detail
    );

    let bad_cursor = client.rpc("resources/list", json!({"cursor": "prompts-100"})).await;
    assert_eq!(bad_cursor["error"]["code"], -32602);

    server.grant_by_label("notes", &["transcripts"], None).await;
    assert_eq!(all_resources(&client).await, Vec::<Value>::new());
    let templates = client.rpc("resources/templates/list", json!({})).await["result"].clone();
    assert_eq!(templates["resourceTemplates"], json!([]));
    let refused = client.rpc("resources/read", json!({"uri": uri_of("Inbox.md")})).await;
    assert_eq!(refused["error"]["code"], -32002);
}

#[tokio::test]
async fn at_2026_07_28_lists_carry_caching_hints_and_a_missing_resource_is_invalid_params() {
    let server = TestServer::start().await;
    let key = server.key("notes", &["notes"], None).await;
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    let auth = format!("Bearer {key}");
    let send = |method: &'static str, mut params: Value| {
        params["_meta"] = meta.clone();
        let name = params
            .get("name")
            .or_else(|| params.get("uri"))
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let url = server.url();
        let auth = auth.clone();
        async move {
            let mut headers = vec![
                ("authorization", auth.as_str()),
                ("content-type", "application/json"),
                ("mcp-protocol-version", "2026-07-28"),
                ("mcp-method", method),
            ];
            if !name.is_empty() {
                headers.push(("mcp-name", name.as_str()));
            }
            let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
            Client::new(&url, None)
                .raw(hyper::Method::POST, &headers, body.to_string())
                .await
        }
    };
    for method in ["prompts/list", "resources/list", "resources/templates/list"] {
        let reply = send(method, json!({})).await;
        assert_eq!(reply.status, StatusCode::OK, "{method}");
        let result = reply.json()["result"].clone();
        assert_eq!(result["resultType"], "complete", "{method}");
        assert_eq!(result["cacheScope"], "private", "{method}");
        assert_eq!(result["ttlMs"], 60000, "{method}");
    }
    let read = send("resources/read", json!({"uri": uri_of("Inbox.md")})).await.json()["result"].clone();
    assert_eq!(
        (read["ttlMs"].as_u64(), read["cacheScope"].as_str()),
        (Some(0), Some("private"))
    );
    assert_eq!(read["resultType"], "complete");
    let got = send("prompts/get", json!({"name": "meeting-notes"})).await.json()["result"].clone();
    assert_eq!(got["resultType"], "complete");
    assert!(got.get("ttlMs").is_none(), "a prompt's answer is not kept");
    let missing = send("resources/read", json!({"uri": uri_of(demo_notes::PRIVATE_NOTE)})).await;
    assert_eq!(missing.status, StatusCode::OK);
    assert_eq!(missing.json()["error"]["code"], -32602);
    // The name header must match the uri too.
    let reply = send("resources/read", json!({"uri": uri_of("Inbox.md")})).await;
    assert_eq!(reply.status, StatusCode::OK);

    let discovered = send("server/discover", json!({})).await.json()["result"].clone();
    assert!(discovered["capabilities"]["prompts"].is_object());
    assert!(discovered["capabilities"]["resources"].is_object());
}

#[tokio::test]
async fn note_paths_complete_as_typed_and_private_stays_missing() {
    let server = TestServer::start().await;
    let key = server.key("notes", &["notes"], None).await;
    let client = Client::connected(&server.url(), &key).await;
    let complete = |typed: &'static str| {
        client.rpc(
            "completion/complete",
            json!({"ref": {"type": "ref/resource", "uri": "journal://notes/{+path}"},
                "argument": {"name": "path", "value": typed}}),
        )
    };
    let offered = complete("areas/").await["result"]["completion"].clone();
    let values: Vec<&str> = offered["values"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert!(
        !values.is_empty() && values.iter().all(|v| v.starts_with("Areas/")),
        "{values:?}"
    );
    assert!(!values.contains(&demo_notes::PRIVATE_NOTE), "private = missing");
    assert_eq!(offered["total"], values.len());
    assert_eq!(offered["hasMore"], false);
    let mut sorted = values.clone();
    sorted.sort_unstable();
    assert_eq!(values, sorted);
    let everything = complete("").await["result"]["completion"].clone();
    let listed = all_resources(&client).await;
    assert_eq!(everything["total"], listed.len(), "as many as resources/list shows");
    // A prompt's argument, an unknown template: nothing to offer, and no error that would tell.
    for reference in [
        json!({"type": "ref/prompt", "name": "weekly-review"}),
        json!({"type": "ref/prompt", "name": "no-such-prompt"}),
        json!({"type": "ref/resource", "uri": "file:///{path}"}),
    ] {
        let answer = client
            .rpc(
                "completion/complete",
                json!({"ref": reference, "argument": {"name": "path", "value": ""}}),
            )
            .await;
        assert_eq!(answer["result"]["completion"]["values"], json!([]), "{reference}");
    }
    let malformed = client
        .rpc("completion/complete", json!({"ref": {"type": "ref/tool"}}))
        .await;
    assert_eq!(malformed["error"]["code"], -32602);
    server.grant_by_label("notes", &["transcripts"], None).await;
    assert_eq!(complete("").await["result"]["completion"]["values"], json!([]));
}
