//! Grants shape the tool list and are checked again on every call.

use hyper::StatusCode;
use serde_json::{Value, json};

use crate::harness::{Client, TestServer, eventually};

fn enum_of(tool: &Value, property: &str) -> Option<Vec<String>> {
    tool["inputSchema"]["properties"].get(property).map(|p| {
        p["enum"]
            .as_array()
            .map(|values| values.iter().map(|v| v.as_str().unwrap().to_string()).collect())
            .unwrap_or_default()
    })
}

#[tokio::test]
async fn a_new_key_sees_only_its_memory_and_the_facet_list() {
    let server = TestServer::start().await;
    let key = server.key("new", &[], None).await;
    let client = Client::connected(&server.url(), &key).await;
    assert_eq!(
        client.tool_names().await,
        ["save_memory", "recall_memory", "list_facets"]
    );
    let facets = client.ok("list_facets", json!({})).await;
    assert!(
        facets["facets"].as_array().unwrap().is_empty(),
        "a new key learns no facet names"
    );
    assert!(facets["note"].as_str().unwrap().contains("This answer is complete"));
    let refused = client.refused("search", json!({"query": "lease"})).await;
    assert!(refused.contains("does not include search"), "{refused}");
}

#[tokio::test]
async fn all_three_categories_offer_all_nine_tools_with_grant_enums() {
    let server = TestServer::start().await;
    let key = server.key("all", &["transcripts", "entities", "facets"], None).await;
    let client = Client::connected(&server.url(), &key).await;
    let names = client.tool_names().await;
    assert_eq!(names.len(), 9, "{names:?}");
    let list = client.rpc("tools/list", json!({})).await;
    for tool in list["result"]["tools"].as_array().unwrap() {
        assert_eq!(tool["inputSchema"]["additionalProperties"], false, "{}", tool["name"]);
        let read_only = tool["annotations"]["readOnlyHint"].as_bool().unwrap();
        assert_eq!(read_only, tool["name"] != "save_memory", "{}", tool["name"]);
    }
    let search = client.tool("search").await;
    let mut facet_ids: Vec<String> = ["family", "health", "side-project", "work"]
        .iter()
        .map(|n| server.facet_id(n))
        .collect();
    facet_ids.sort();
    let mut offered = enum_of(&search, "facet").unwrap();
    offered.sort();
    assert_eq!(offered, facet_ids);
    assert_eq!(
        enum_of(&search, "category").unwrap(),
        ["transcripts", "entities", "facets"]
    );
    let facets = client.ok("list_facets", json!({})).await;
    assert!(facets["facets"][0]["description"].as_str().unwrap().len() > 10);

    let names_only = server.key("entities-only", &["entities"], None).await;
    let names_only = Client::connected(&server.url(), &names_only).await;
    let facets = names_only.ok("list_facets", json!({})).await;
    assert_eq!(
        facets["facets"].as_array().unwrap().len(),
        4,
        "names of the facets the grant reaches"
    );
    assert!(
        facets["facets"][0].get("description").is_none(),
        "descriptions need the facets category"
    );
}

#[tokio::test]
async fn a_facet_scoped_grant_names_only_its_facets() {
    let server = TestServer::start().await;
    let key = server.key("scoped", &["transcripts"], Some(&["work", "health"])).await;
    let client = Client::connected(&server.url(), &key).await;
    assert_eq!(
        client.tool_names().await,
        [
            "save_memory",
            "recall_memory",
            "list_facets",
            "search",
            "fetch",
            "list_transcripts",
            "get_transcript"
        ]
    );
    let search = client.tool("search").await;
    let mut expected = vec![server.facet_id("work"), server.facet_id("health")];
    expected.sort();
    let mut offered = enum_of(&search, "facet").unwrap();
    offered.sort();
    assert_eq!(offered, expected);
    assert_eq!(enum_of(&search, "category").unwrap(), ["transcripts"]);
    let text = search.to_string();
    assert!(
        !text.contains(&server.facet_id("family")),
        "another facet's id never appears"
    );
    let facets = client.ok("list_facets", json!({})).await;
    let names: Vec<&str> = facets["facets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["health", "work"]);

    let refused = client
        .refused("search", json!({"query": "lease", "facet": server.facet_id("family")}))
        .await;
    assert!(refused.contains("not one of the facets"), "{refused}");
    let unknown = client
        .refused(
            "search",
            json!({"query": "lease", "facet": "00000000-0000-4000-8000-000000000000"}),
        )
        .await;
    assert_eq!(
        refused.replace(&server.facet_id("family"), "X"),
        unknown.replace("00000000-0000-4000-8000-000000000000", "X"),
        "an unknown facet and a forbidden one answer alike"
    );
    let refused = client
        .refused("search", json!({"query": "lease", "category": "entities"}))
        .await;
    assert!(refused.contains("not one this connection can search"), "{refused}");

    let hits = client.ok("search", json!({"query": "the", "limit": 100})).await;
    for hit in hits["results"].as_array().unwrap() {
        let fetched = client.ok("fetch", json!({"reference": hit["reference"]})).await;
        assert!(!fetched["text"].as_str().unwrap().is_empty());
    }
    let listed = client.ok("list_transcripts", json!({"limit": 100})).await;
    for segment in listed["segments"].as_array().unwrap() {
        assert!(
            segment["title"] == "Work conversation" || segment["title"] == "Health conversation",
            "{segment}"
        );
    }
}

#[tokio::test]
async fn a_facet_enum_is_left_out_when_no_facet_is_reachable() {
    let server = TestServer::start().await;
    let key = server.key("none", &["transcripts"], Some(&[])).await;
    let client = Client::connected(&server.url(), &key).await;
    let search = client.tool("search").await;
    assert!(enum_of(&search, "facet").is_none(), "{search}");
    let hits = client.ok("search", json!({"query": "lease"})).await;
    assert!(hits["results"].as_array().unwrap().is_empty());
}

#[tokio::test]
async fn changes_take_effect_at_once_in_open_sessions() {
    let server = TestServer::start().await;
    let key = server.key("live", &["transcripts", "entities"], None).await;
    let client = Client::connected(&server.url(), &key).await;
    assert_eq!(client.tool_names().await.len(), 9);
    let hits = client.ok("search", json!({"query": "lease"})).await;
    let reference = hits["results"][0]["reference"].clone();
    let first = client.call("list_facets", json!({})).await;
    assert!(first.get("_meta").is_none(), "nothing changed yet");

    server.grant_by_label("live", &["entities"], None).await;
    let refused = client.refused("list_transcripts", json!({})).await;
    assert!(refused.contains("does not include list_transcripts"), "{refused}");
    let result = client.call("list_facets", json!({})).await;
    assert_eq!(
        result["_meta"]["tools_list_changed"], true,
        "results say the list changed"
    );
    let stale = client.refused("fetch", json!({"reference": reference})).await;
    assert!(stale.contains("before this connection's access changed"), "{stale}");
    assert_eq!(client.tool_names().await.len(), 7);
    let result = client.call("list_facets", json!({})).await;
    assert!(result.get("_meta").is_none(), "seen the new list: no more flag");

    journal::auth::connections::revoke_key(&server.journal.db, "live")
        .await
        .unwrap();
    let reply = client.post(&json!({"jsonrpc": "2.0", "id": 5, "method": "ping"})).await;
    assert_eq!(
        reply.status,
        StatusCode::UNAUTHORIZED,
        "a revoked key is refused in its open session"
    );
}

/// The CLI beside a running server, as the owner runs it.
async fn cli(server: &TestServer, args: &'static [&'static str]) -> String {
    let root = server.root().to_path_buf();
    tokio::task::spawn_blocking(move || crate::cli::ok(&root, args))
        .await
        .unwrap()
}

async fn ping_status(client: &Client) -> StatusCode {
    client
        .post(&json!({"jsonrpc": "2.0", "id": 9, "method": "ping"}))
        .await
        .status
}

// The server keeps verified credentials in memory; another process's change must reach it as soon
// as that process has committed it, through the access epoch.
#[tokio::test]
async fn the_cli_beside_a_running_server_narrows_and_revokes_at_once() {
    let server = TestServer::start().await;
    let key = server.key("script", &["transcripts", "entities"], None).await;
    let client = Client::connected(&server.url(), &key).await;
    assert_eq!(client.tool_names().await.len(), 9);
    assert_eq!(ping_status(&client).await, StatusCode::OK, "the key is cached now");

    cli(
        &server,
        &[
            "mcp",
            "permission",
            "set",
            "--token",
            "script",
            "--category",
            "entities",
        ],
    )
    .await;
    assert_eq!(client.tool_names().await.len(), 7, "narrowed by another process");
    let refused = client.refused("list_transcripts", json!({})).await;
    assert!(refused.contains("does not include list_transcripts"), "{refused}");

    cli(&server, &["mcp", "token", "revoke", "--label", "script"]).await;
    assert_eq!(ping_status(&client).await, StatusCode::UNAUTHORIZED);
}

// Should the fast signal be lost (here: its file deleted under the running server, which keeps the
// old one open), the durable epoch in journal.db still carries the change within seconds.
#[tokio::test]
async fn a_lost_announcement_still_applies_within_seconds() {
    let server = TestServer::start().await;
    let key = server.key("script", &["transcripts"], None).await;
    let client = Client::connected(&server.url(), &key).await;
    assert_eq!(ping_status(&client).await, StatusCode::OK);
    std::fs::remove_file(server.root().join(journal::auth::epoch::FILE_NAME)).unwrap();
    cli(&server, &["mcp", "token", "revoke", "--label", "script"]).await;
    let refused = eventually(60, || async { ping_status(&client).await == StatusCode::UNAUTHORIZED }).await;
    assert!(
        refused,
        "the revoked key is refused once the server reads the durable epoch"
    );
    // And the server follows the new file from then on, once its periodic upkeep (every 2 seconds)
    // has looked at the file again: under load the refusal above can come before that look (this
    // test once failed so in a full run), so wait out one upkeep first.
    tokio::time::sleep(std::time::Duration::from_secs(3)).await;
    let other = server.key("other", &["transcripts"], None).await;
    let client = Client::connected(&server.url(), &other).await;
    assert_eq!(ping_status(&client).await, StatusCode::OK);
    cli(&server, &["mcp", "token", "revoke", "--label", "other"]).await;
    assert_eq!(ping_status(&client).await, StatusCode::UNAUTHORIZED);
}
