//! The nine tools: results, limits, references, cursors, empty answers and the audit log.

use serde_json::{Value, json};

use crate::harness::{Client, LAST_DAY, TestServer};

async fn full_client(server: &TestServer) -> Client {
    let key = server.key("full", &["transcripts", "entities", "facets"], None).await;
    Client::connected(&server.url(), &key).await
}

#[tokio::test]
async fn search_then_fetch_and_page_with_cursors() {
    let server = TestServer::start().await;
    let client = full_client(&server).await;
    let page = client.ok("search", json!({"query": "lease renewal", "limit": 2})).await;
    let results = page["results"].as_array().unwrap();
    assert_eq!(results.len(), 2);
    for hit in results {
        assert!(
            hit["snippet"].as_str().unwrap().to_lowercase().contains("lease"),
            "{hit}"
        );
        assert!(hit["snippet"].as_str().unwrap().chars().count() <= 800);
        assert_eq!(hit["category"], "transcripts");
        assert!(hit["date"].as_str().unwrap().starts_with("2026-11-"));
    }
    let cursor = page["next_cursor"].as_str().unwrap();
    let next = client
        .ok(
            "search",
            json!({"query": "lease renewal", "limit": 2, "cursor": cursor}),
        )
        .await;
    let first_refs: Vec<&Value> = results.iter().map(|h| &h["reference"]).collect();
    for hit in next["results"].as_array().unwrap() {
        assert!(!first_refs.contains(&&hit["reference"]), "a new page has new hits");
    }
    let misuse = client
        .refused("search", json!({"query": "other words", "limit": 2, "cursor": cursor}))
        .await;
    assert!(misuse.contains("cursor is not valid"), "{misuse}");

    let fetched = client.ok("fetch", json!({"reference": results[0]["reference"]})).await;
    assert_eq!(fetched["title"], results[0]["title"]);
    assert!(fetched["text"].as_str().unwrap().contains("lease renewal"));
    assert_eq!(fetched["truncated"], false);

    let entity_hits = client
        .ok("search", json!({"query": "Okafor", "category": "entities"}))
        .await;
    let entity = client
        .ok("fetch", json!({"reference": entity_hits["results"][0]["reference"]}))
        .await;
    assert!(entity["text"].as_str().unwrap().contains("Ada Okafor (person)"));
    let dated = client
        .ok(
            "search",
            json!({"query": "lease", "day": LAST_DAY, "category": "transcripts", "limit": 100}),
        )
        .await;
    for hit in dated["results"].as_array().unwrap() {
        assert_eq!(hit["date"], LAST_DAY);
    }
}

#[tokio::test]
async fn references_are_bound_and_tamper_proof() {
    let server = TestServer::start().await;
    let client = full_client(&server).await;
    let other_key = server.key("other", &["transcripts", "entities", "facets"], None).await;
    let other = Client::connected(&server.url(), &other_key).await;
    let hits = client.ok("search", json!({"query": "lease"})).await;
    let reference = hits["results"][0]["reference"].as_str().unwrap().to_string();

    let refused = other.refused("fetch", json!({"reference": reference})).await;
    assert!(
        refused.contains("not valid here"),
        "another connection's reference: {refused}"
    );
    let mut tampered = reference.clone().into_bytes();
    tampered[5] = if tampered[5] == b'A' { b'B' } else { b'A' };
    let refused = client
        .refused("fetch", json!({"reference": String::from_utf8(tampered).unwrap()}))
        .await;
    assert!(refused.contains("not valid here"), "{refused}");
    for bad in ["", "x", "a.b", &"A".repeat(2049)] {
        client.refused("fetch", json!({"reference": bad})).await;
    }
    let refused = client.refused("get_entity", json!({"reference": reference})).await;
    assert!(
        refused.contains("not valid here"),
        "a transcript reference is not an entity reference: {refused}"
    );
}

#[tokio::test]
async fn transcripts_list_by_day_and_facet_and_read_in_pages() {
    let server = TestServer::start().await;
    let client = full_client(&server).await;
    let all = client.ok("list_transcripts", json!({"limit": 100})).await;
    let segments = all["segments"].as_array().unwrap();
    assert_eq!(segments.len(), 9);
    let dates: Vec<&str> = segments.iter().map(|s| s["date"].as_str().unwrap()).collect();
    let mut sorted = dates.clone();
    sorted.sort_by(|a, b| b.cmp(a));
    assert_eq!(dates, sorted, "newest first");
    let one_day = client
        .ok("list_transcripts", json!({"day": "20261130", "limit": 100}))
        .await;
    assert_eq!(one_day["segments"].as_array().unwrap().len(), 3);
    let work = client
        .ok(
            "list_transcripts",
            json!({"facet": server.facet_id("work"), "limit": 100}),
        )
        .await;
    for segment in work["segments"].as_array().unwrap() {
        assert_eq!(segment["title"], "Work conversation");
    }
    let limited = client.ok("list_transcripts", json!({"limit": 2})).await;
    assert_eq!(limited["segments"].as_array().unwrap().len(), 2);

    let reference = &segments[0]["reference"];
    let page = client.ok("get_transcript", json!({"reference": reference})).await;
    let entries = page["entries"].as_array().unwrap();
    assert!(entries.len() >= 8);
    assert!(
        entries[0].as_str().unwrap().chars().nth(2) == Some(':'),
        "{}",
        entries[0]
    );
    assert!(page.get("next_cursor").is_none(), "short segments fit one page");
    let refused = client
        .refused("get_transcript", json!({"reference": reference, "cursor": "bogus"}))
        .await;
    assert!(refused.contains("cursor"), "{refused}");
}

#[tokio::test]
async fn entities_respect_facet_scope() {
    let server = TestServer::start().await;
    let client = full_client(&server).await;
    let listed = client.ok("list_entities", json!({})).await;
    assert_eq!(listed["entities"].as_array().unwrap().len(), 10);
    let key = server.key("family-only", &["entities"], Some(&["family"])).await;
    let family = Client::connected(&server.url(), &key).await;
    let listed = family.ok("list_entities", json!({})).await;
    let names: Vec<&str> = listed["entities"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["Elm Street School", "Maya", "Sam"]);
    let maya = family
        .ok("get_entity", json!({"reference": listed["entities"][1]["reference"]}))
        .await;
    assert_eq!(maya["type"], "person");
    assert!(maya["descriptions"]["family"].as_str().unwrap().contains("daughter"));
    let hits = family
        .ok("search", json!({"query": "manager", "mode": "all_words"}))
        .await;
    assert!(
        hits["results"].as_array().unwrap().is_empty(),
        "a work description never matches for a family-only grant"
    );
    assert!(hits["note"].as_str().unwrap().contains("This answer is complete"));
    // By meaning too: the entities it reaches are shown by their family descriptions only.
    let near = family.ok("search", json!({"query": "manager", "limit": 100})).await;
    assert!(!near.to_string().to_lowercase().contains("manager"), "{near}");
}

#[tokio::test]
async fn memory_is_idempotent_private_and_recallable() {
    let server = TestServer::start().await;
    let key = server.key("mem", &[], None).await;
    let client = Client::connected(&server.url(), &key).await;
    let saved = client
        .ok(
            "save_memory",
            json!({"content": "The owner prefers short answers.", "operation_id": "op-1"}),
        )
        .await;
    assert_eq!(saved["status"], "saved");
    let again = client
        .ok(
            "save_memory",
            json!({"content": "The owner prefers short answers.", "operation_id": "op-1"}),
        )
        .await;
    assert_eq!(again["status"], "replayed");
    assert_eq!(again["memory"], saved["memory"]);
    let conflict = client
        .refused(
            "save_memory",
            json!({"content": "something else", "operation_id": "op-1"}),
        )
        .await;
    assert!(conflict.contains("already used"), "{conflict}");
    for i in 2..=8 {
        client
            .ok(
                "save_memory",
                json!({"content": format!("note {i} about lease"), "operation_id": format!("op-{i}")}),
            )
            .await;
    }
    let page = client.ok("recall_memory", json!({"query": "LEASE", "limit": 3})).await;
    assert_eq!(page["memories"].as_array().unwrap().len(), 3);
    let rest = client
        .ok(
            "recall_memory",
            json!({"query": "LEASE", "limit": 20, "continuation": page["continuation"]}),
        )
        .await;
    assert_eq!(rest["memories"].as_array().unwrap().len(), 4);
    assert!(rest.get("continuation").is_none());
    let today = client
        .ok("recall_memory", json!({"day": saved["memory"]["day"], "limit": 20}))
        .await;
    assert_eq!(today["memories"].as_array().unwrap().len(), 8);
    let none = client.ok("recall_memory", json!({"day_to": "2000-01-01"})).await;
    assert!(none["memories"].as_array().unwrap().is_empty());
    assert!(none["note"].as_str().unwrap().contains("No memories matched"));

    let other_key = server.key("other", &[], None).await;
    let other = Client::connected(&server.url(), &other_key).await;
    let theirs = other.ok("recall_memory", json!({"limit": 20})).await;
    assert!(
        theirs["memories"].as_array().unwrap().is_empty(),
        "memory is the connection's own"
    );
    let misuse = other
        .refused(
            "recall_memory",
            json!({"query": "LEASE", "limit": 3, "continuation": page["continuation"]}),
        )
        .await;
    assert!(misuse.contains("not valid"), "{misuse}");
}

#[tokio::test]
async fn bad_arguments_are_is_error_results_that_say_what_is_wrong() {
    let server = TestServer::start().await;
    let client = full_client(&server).await;
    let cases = [
        ("search", json!({"query": "x", "surprise": 1}), "unknown field"),
        ("search", json!({}), "query must not be empty: give words or filters"),
        ("search", json!({"query": 5}), "invalid type"),
        ("search", json!({"query": "   "}), "must not be empty"),
        ("search", json!({"query": "x".repeat(4097)}), "too long"),
        ("search", json!({"query": "x", "limit": 0}), "between 1 and 100"),
        ("search", json!({"query": "x", "limit": 101}), "between 1 and 100"),
        (
            "search",
            json!({"query": "x", "limit": -1}),
            "between 1 and 100, not -1",
        ),
        ("search", json!({"query": "x", "day": "yesterday"}), "is not a day"),
        (
            "search",
            json!({"query": "x", "day": "2026-02-30"}),
            "not a real calendar day",
        ),
        (
            "search",
            json!({"query": "x", "day_from": "2026-11-30", "day_to": "2026-11-01"}),
            "after day_to",
        ),
        ("search", json!({"query": "x", "facet": "f".repeat(257)}), "too long"),
        ("list_facets", json!({"limit": 1000}), "between 1 and 100"),
        ("recall_memory", json!({"limit": 21}), "between 1 and 20"),
        (
            "save_memory",
            json!({"content": "", "operation_id": "a"}),
            "1 to 32768 bytes",
        ),
        (
            "save_memory",
            json!({"content": "x".repeat(32_769), "operation_id": "a"}),
            "1 to 32768 bytes",
        ),
        (
            "save_memory",
            json!({"content": "x", "operation_id": "a/b"}),
            "operation_id must be",
        ),
        (
            "save_memory",
            json!({"content": "x", "operation_id": "a".repeat(129)}),
            "operation_id must be",
        ),
        ("list_transcripts", json!({"day": "2".repeat(33)}), "too long"),
    ];
    for (tool, arguments, expected) in cases {
        let text = client.refused(tool, arguments.clone()).await;
        assert!(text.contains(expected), "{tool} {arguments:.80}: {text}");
    }
    let unknown = client
        .rpc("tools/call", json!({"name": "drop_tables", "arguments": {}}))
        .await;
    assert_eq!(unknown["error"]["code"], -32602);
    let last = journal::auth::audit::recent(&server.journal.db, 1, None).await.unwrap();
    assert_eq!(
        (last[0].tool.as_str(), last[0].outcome.as_str()),
        ("drop_tables", "refused"),
        "unknown tools are audited"
    );
    let no_name = client.rpc("tools/call", json!({"arguments": {}})).await;
    assert_eq!(no_name["error"]["code"], -32602);
    let bad_args = client
        .rpc("tools/call", json!({"name": "search", "arguments": [1]}))
        .await;
    assert_eq!(bad_args["error"]["code"], -32602);
    let bad_cursor = client.rpc("tools/list", json!({"cursor": "nope"})).await;
    assert_eq!(bad_cursor["error"]["code"], -32602);
    let no_next = client.rpc("tools/list", json!({})).await;
    assert!(no_next["result"].get("nextCursor").is_none(), "nine tools fit one page");
}

#[tokio::test]
async fn every_call_is_audited_with_its_outcome() {
    let server = TestServer::start().await;
    let key = server.key("audited", &["transcripts"], None).await;
    let client = Client::connected(&server.url(), &key).await;
    client.ok("search", json!({"query": "lease"})).await;
    client
        .ok("search", json!({"query": "zzzzqqq", "mode": "all_words"}))
        .await;
    client.refused("search", json!({"query": "x", "limit": 0})).await;
    client.refused("list_entities", json!({})).await;
    let entries = journal::auth::audit::recent(&server.journal.db, 10, Some("AUDITED"))
        .await
        .unwrap();
    let seen: Vec<(&str, &str)> = entries.iter().map(|e| (e.tool.as_str(), e.outcome.as_str())).collect();
    assert_eq!(
        seen,
        [
            ("list_entities", "refused"),
            ("search", "refused"),
            ("search", "empty"),
            ("search", "served")
        ]
    );
    assert!(entries.iter().all(|e| e.arguments_sha256.len() == 64));
    let raw: Vec<String> = sqlx::query_scalar("SELECT arguments_sha256 || detail FROM audit")
        .fetch_all(&server.journal.db)
        .await
        .unwrap();
    assert!(
        raw.iter().all(|r| !r.contains("lease")),
        "arguments are kept only as digests"
    );
}

/// An entity described in two facets, read through a grant of one: no path (search snippets,
/// fetch, get_entity, list_entities) shows the other facet's description.
#[tokio::test]
async fn an_entity_in_two_facets_shows_a_one_facet_grant_only_its_facet() {
    let server = TestServer::start().await;
    let entity = journal::journal::entity::Entity {
        id: "6f1c2a9e-3b7d-4c2e-9a51-2f8e0d4b7c11".into(),
        name: "Robin Vale".into(),
        kind: journal::journal::entity::EntityType::Person,
        aka: vec![],
        facets: [
            (
                "work".to_string(),
                "Runs the zanzibar budget review every quarter.".to_string(),
            ),
            (
                "family".to_string(),
                "Plays the cello at every piano recital.".to_string(),
            ),
        ]
        .into_iter()
        .collect(),
        last_seen: None,
    };
    std::fs::write(server.root().join("entities/robin-vale.md"), entity.render("")).unwrap();
    server.journal.sync().await.unwrap();
    let family_key = server.key("family-only", &["entities"], Some(&["family"])).await;
    let family = Client::connected(&server.url(), &family_key).await;

    let hidden = family.ok("search", json!({"query": "zanzibar"})).await;
    assert!(hidden["results"].as_array().unwrap().is_empty(), "{hidden}");
    let found = family.ok("search", json!({"query": "cello recital"})).await;
    let hit = found["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["title"] == "Robin Vale")
        .unwrap_or_else(|| panic!("the family description is found: {found}"))
        .clone();
    assert!(!hit.to_string().contains("zanzibar"), "snippet: {hit}");
    let fetched = family.ok("fetch", json!({"reference": hit["reference"]})).await;
    assert!(fetched["text"].as_str().unwrap().contains("cello"), "{fetched}");
    assert!(!fetched.to_string().contains("zanzibar"), "fetch: {fetched}");

    let listed = family.ok("list_entities", json!({})).await;
    let robin = listed["entities"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == "Robin Vale")
        .unwrap()
        .clone();
    assert!(!robin.to_string().contains("zanzibar"));
    let got = family.ok("get_entity", json!({"reference": robin["reference"]})).await;
    assert_eq!(got["descriptions"].as_object().unwrap().len(), 1, "{got}");
    assert!(got["descriptions"]["family"].as_str().unwrap().contains("cello"));
    assert!(!got.to_string().contains("zanzibar"), "get_entity: {got}");

    // And the other way round.
    let work_key = server.key("work-only", &["entities"], Some(&["work"])).await;
    let work = Client::connected(&server.url(), &work_key).await;
    let found = work.ok("search", json!({"query": "zanzibar budget"})).await;
    let text = found.to_string();
    assert!(text.contains("Robin Vale") && !text.contains("cello"), "{found}");
}

/// No result leaves without its audit record: when the record cannot be written, the caller gets an
/// error and not the result, and nothing was served.
#[tokio::test]
async fn a_call_whose_audit_record_cannot_be_written_gets_no_result() {
    let server = TestServer::start().await;
    let client = full_client(&server).await;
    sqlx::query("CREATE TRIGGER refuse_audit BEFORE INSERT ON audit BEGIN SELECT RAISE(ABORT, 'audit refused by the test'); END")
        .execute(&server.journal.db)
        .await
        .unwrap();
    let reply = client
        .rpc("tools/call", json!({"name": "search", "arguments": {"query": "lease"}}))
        .await;
    assert!(reply.get("result").is_none(), "the result is withheld: {reply}");
    assert_eq!(reply["error"]["code"], -32603);
    assert!(
        reply["error"]["message"].as_str().unwrap().contains("withheld"),
        "{reply}"
    );
    let saved = client
        .rpc(
            "tools/call",
            json!({"name": "save_memory", "arguments": {"content": "x", "operation_id": "op-withheld"}}),
        )
        .await;
    assert!(saved.get("result").is_none(), "{saved}");
    // A malformed call is refused only once its refusal is recorded; a note read as a resource
    // is answered only once its read is.
    let malformed = client
        .rpc("tools/call", json!({"name": "no_such_tool", "arguments": {}}))
        .await;
    assert_eq!(malformed["error"]["code"], -32603, "{malformed}");
    let read = client
        .rpc("resources/read", json!({"uri": "journal://notes/Home.md"}))
        .await;
    assert_eq!(read["error"]["code"], -32603, "{read}");
    assert!(
        read["error"]["message"].as_str().unwrap().contains("withheld"),
        "{read}"
    );
    sqlx::query("DROP TRIGGER refuse_audit")
        .execute(&server.journal.db)
        .await
        .unwrap();
    let served = client.ok("search", json!({"query": "lease"})).await;
    assert!(!served["results"].as_array().unwrap().is_empty());
    let count: i64 = sqlx::query_scalar("SELECT count(*) FROM audit WHERE tool = 'search'")
        .fetch_one(&server.journal.db)
        .await
        .unwrap();
    assert_eq!(count, 1, "only the call that was answered is in the log");
}
