//! Notes over MCP: the five notes tools, notes in search and fetch, the inline filters, facet-limited
//! and whole-journal grants over the demo vault, and "private = missing" walked on every path.

use std::collections::BTreeSet;

use serde_json::{Value, json};

use crate::harness::{Client, TestServer, eventually};
use journal::journal::demo_notes;

const NOTES_TOOLS: [&str; 5] = ["notes_list", "note_read", "base_query", "skills_list", "skill_read"];

async fn notes_client(server: &TestServer, label: &str, facets: Option<&[&str]>) -> Client {
    let key = server.key(label, &["notes", "transcripts"], facets).await;
    Client::connected(&server.url(), &key).await
}

fn paths(list: &Value) -> Vec<String> {
    list["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["path"].as_str().unwrap().to_string())
        .collect()
}

/// Checks an answer against the tool's declared output schema, as strict clients (the Python SDK)
/// do: every required property is present, at the top and in the objects of arrays it lists.
async fn conforms(client: &Client, tool: &str, answer: &Value) {
    let schema = client.tool(tool).await["outputSchema"].clone();
    check_required(&schema, &schema, answer, tool);
}

fn check_required(root: &Value, schema: &Value, value: &Value, at: &str) {
    let schema = match schema.get("$ref").and_then(Value::as_str) {
        Some(reference) => {
            let name = reference.rsplit('/').next().unwrap();
            &root["$defs"][name]
        }
        None => schema,
    };
    for name in schema["required"].as_array().into_iter().flatten() {
        let name = name.as_str().unwrap();
        assert!(value.get(name).is_some(), "{at}: required {name} missing in {value}");
        let property = &schema["properties"][name];
        if let (Some(items), Some(elements)) = (property.get("items"), value[name].as_array()) {
            for element in elements.iter().filter(|e| e.is_object()) {
                check_required(root, items, element, &format!("{at}.{name}[]"));
            }
        }
    }
}

/// Every note a listing reaches, following its cursors. Every page but the last is full: a note
/// hidden from the caller takes no place in a page (a short page would tell of it).
async fn all_notes(client: &Client) -> Vec<String> {
    let mut found = Vec::new();
    let mut arguments = json!({"limit": 7});
    for _ in 0..100 {
        let page = client.ok("notes_list", arguments.clone()).await;
        let listed = paths(&page);
        match page["next_cursor"].as_str() {
            Some(cursor) => {
                assert_eq!(listed.len(), 7, "a page before the last is full: {page}");
                arguments["cursor"] = json!(cursor);
            }
            None => {
                found.extend(listed);
                return found;
            }
        }
        found.extend(listed);
    }
    panic!("the listing never ended");
}

#[tokio::test]
async fn the_notes_tools_are_offered_with_the_notes_category_only() {
    let server = TestServer::start().await;
    let without = server
        .key("without", &["transcripts", "entities", "facets"], None)
        .await;
    let without = Client::connected(&server.url(), &without).await;
    let names = without.tool_names().await;
    for tool in NOTES_TOOLS {
        assert!(!names.contains(&tool.to_string()), "{tool} without the category");
    }
    let refused = without.refused("note_read", json!({"path": "Home.md"})).await;
    assert!(refused.contains("does not include note_read"), "{refused}");
    // Words of a note are not found without the category; a filter of notes alone finds nothing.
    let hits = without.ok("search", json!({"query": "Atlas decision log"})).await;
    assert!(
        hits["results"]
            .as_array()
            .unwrap()
            .iter()
            .all(|h| h["category"] != "notes")
    );
    let tagged = without.ok("search", json!({"query": "tag:atlas"})).await;
    assert!(tagged["results"].as_array().unwrap().is_empty());

    let with = notes_client(&server, "with", None).await;
    let names = with.tool_names().await;
    for tool in NOTES_TOOLS {
        assert!(names.contains(&tool.to_string()), "{tool} with the category");
    }
    let listing = with.tool("notes_list").await;
    assert_eq!(listing["inputSchema"]["properties"]["limit"]["maximum"], 1000);
    assert_eq!(listing["annotations"]["readOnlyHint"], true);
}

#[tokio::test]
async fn listing_reading_and_querying_the_demo_vault() {
    let server = TestServer::start().await;
    let client = notes_client(&server, "reader", None).await;
    let everything = all_notes(&client).await;
    assert_eq!(everything.len(), demo_notes::NOTE_COUNT - 1, "all but the private note");
    let unique: BTreeSet<&String> = everything.iter().collect();
    assert_eq!(unique.len(), everything.len(), "pages do not repeat");
    let first = client.ok("notes_list", json!({})).await;
    let modified: Vec<&str> = first["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["modified"].as_str().unwrap())
        .collect();
    assert!(modified.windows(2).all(|w| w[0] >= w[1]), "newest first");
    assert!(
        first.get("next_cursor").is_none(),
        "200 by default holds the whole demo vault"
    );

    let atlas = client.ok("notes_list", json!({"folder": "Projects/Atlas/"})).await;
    assert!(paths(&atlas).iter().all(|p| p.starts_with("Projects/Atlas/")));
    assert_eq!(paths(&atlas).len(), 6);
    let tagged = client.ok("notes_list", json!({"tag": "#Atlas"})).await;
    assert!(paths(&tagged).contains(&"Meetings/atlas-kickoff.md".to_string()));
    assert!(
        client.ok("notes_list", json!({"tag": "travel"})).await["notes"]
            .as_array()
            .unwrap()
            .is_empty()
    );
    let future = client.ok("notes_list", json!({"since": "2100-01-01"})).await;
    assert!(future["notes"].as_array().unwrap().is_empty());
    assert!(future["note"].as_str().unwrap().contains("complete"));
    for (arguments, expected) in [
        (json!({"limit": 0}), "limit must be between 1 and 1000"),
        (json!({"limit": 1001}), "limit must be between 1 and 1000"),
        (json!({"since": "last week"}), "since"),
        (json!({"folder": "../x"}), "folder"),
        (json!({"cursor": "forged"}), "cursor"),
        (json!({"colour": "red"}), "unknown field"),
    ] {
        let refused = client.refused("notes_list", arguments.clone()).await;
        assert!(refused.contains(expected), "{arguments}: {refused}");
    }

    let log = client
        .ok("note_read", json!({"path": "Projects/Atlas/decision-log"}))
        .await;
    assert_eq!(log["id"], "atlas-decisions");
    assert_eq!(log["title"], "Atlas decision log");
    assert_eq!(log["read_only"], true);
    assert_eq!(log["frontmatter"]["access"], "read-only");
    assert_eq!(log["agents_md"]["path"], "Projects/AGENTS.md");
    let bytes = std::fs::read(server.root().join("notes").join(demo_notes::READ_ONLY_NOTE)).unwrap();
    use sha2::Digest;
    let expected: String = sha2::Sha256::digest(&bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(log["hash"], expected);
    assert!(
        String::from_utf8(bytes)
            .unwrap()
            .ends_with(log["body"].as_str().unwrap())
    );
    let by_id = client.ok("note_read", json!({"id": "atlas-decisions"})).await;
    assert_eq!(by_id["path"], demo_notes::READ_ONLY_NOTE);
    let home = client.ok("note_read", json!({"path": "Home.md"})).await;
    assert_eq!(home["agents_md"]["path"], "AGENTS.md");
    assert_eq!(home["read_only"], false);
    assert_eq!(home["truncated"], false);
    let synthetic = client
        .ok("note_read", json!({"id": format!("path:{}", "Inbox.md")}))
        .await;
    assert_eq!(synthetic["title"], "Inbox");
    for (arguments, expected) in [
        (json!({}), "either path or id"),
        (json!({"path": "a.md", "id": "b"}), "either path or id"),
        (json!({"path": "../journal.db"}), "path"),
        (json!({"path": "a\\b.md"}), "path"),
        (json!({"id": "x".repeat(2000)}), "id is too long"),
    ] {
        let refused = client.refused("note_read", arguments.clone()).await;
        assert!(refused.contains(expected), "{arguments}: {refused}");
    }
    // agent_overrides name other connections: never shown.
    let pricing = client
        .ok("note_read", json!({"path": demo_notes::OVERRIDDEN_NOTE}))
        .await;
    assert!(pricing["frontmatter"].get("agent_overrides").is_none(), "{pricing}");

    let query =
        "from notes in \"Projects\"\nwhere status is \"active\"\nsort priority asc\ncolumns __title, status, priority";
    let active = client.ok("base_query", json!({"dsl": query})).await;
    assert_eq!(active["columns"], json!(["__title", "status", "priority"]));
    let rows = active["rows"].as_array().unwrap();
    assert!(!rows.is_empty());
    assert!(rows.iter().all(|r| r[1] == "active"));
    assert_eq!(rows[0][0], "Project Atlas", "priority 1 first");
    assert!(active.get("error").is_none());
    let broken = client
        .ok("base_query", json!({"dsl": "from notes\nwhere status banana \"x\""}))
        .await;
    assert_eq!(broken["error"]["line"], 2);
    assert!(broken["error"]["column"].as_u64().unwrap() > 1);
    assert!(
        broken["error"]["message"].as_str().unwrap().contains("expected"),
        "{broken}"
    );
    let long = client
        .refused("base_query", json!({"dsl": "#".repeat(8 * 1024 + 1)}))
        .await;
    assert!(long.contains("dsl is too long"), "{long}");
    let grouped = client
        .ok("base_query", json!({"dsl": "where status exists\ngroup by status"}))
        .await;
    assert!(grouped["groups"].as_array().unwrap().len() >= 3, "{grouped}");

    conforms(&client, "base_query", &active).await;
    conforms(&client, "base_query", &broken).await;
    conforms(&client, "base_query", &grouped).await;
    let skills = client.ok("skills_list", json!({})).await;
    let ids: Vec<&str> = skills["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["meeting-notes", "weekly-review"]);
    let review = client.ok("skill_read", json!({"id": "weekly-review"})).await;
    assert_eq!(review["path"], "Skills/weekly-review/SKILL.md");
    assert!(review["description"].as_str().unwrap().contains("Fridays"));
    assert!(review["body"].as_str().unwrap().contains("# Weekly review"));
    conforms(&client, "skills_list", &skills).await;
    conforms(&client, "skill_read", &review).await;
    assert!(
        client
            .refused("skill_read", json!({"id": "../x"}))
            .await
            .contains("skills_list")
    );
}

#[tokio::test]
async fn search_finds_notes_and_its_filters_narrow_them() {
    let server = TestServer::start().await;
    let client = notes_client(&server, "searcher", None).await;
    let hits = client.ok("search", json!({"query": "decision log warehouse"})).await;
    let first = &hits["results"][0];
    assert_eq!(first["category"], "notes");
    assert_eq!(first["path"], demo_notes::READ_ONLY_NOTE);
    let fetched = client.ok("fetch", json!({"reference": first["reference"]})).await;
    assert_eq!(fetched["title"], "Atlas decision log");
    conforms(&client, "search", &hits).await;
    conforms(&client, "fetch", &fetched).await;
    assert!(fetched["text"].as_str().unwrap().contains("One warehouse"));

    let note_paths = |page: &Value| -> Vec<String> {
        page["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| {
                assert_eq!(h["category"], "notes", "{h}");
                h["path"].as_str().unwrap().to_string()
            })
            .collect()
    };
    let tagged = client.ok("search", json!({"query": "tag:atlas", "limit": 100})).await;
    let tagged = note_paths(&tagged);
    assert!(tagged.len() >= 6, "{tagged:?}");
    for path in &tagged {
        let note = client.ok("note_read", json!({"path": path})).await;
        let tags: Vec<String> = note["frontmatter"]["tags"]
            .as_array()
            .map(|t| t.iter().map(|t| t.as_str().unwrap().to_lowercase()).collect())
            .unwrap_or_default();
        assert!(
            tags.contains(&"atlas".to_string()) || note["body"].as_str().unwrap().contains("#atlas"),
            "{path}"
        );
    }
    let in_folder = note_paths(
        &client
            .ok("search", json!({"query": "path:Projects/Atlas/ warehouse"}))
            .await,
    );
    assert!(!in_folder.is_empty());
    assert!(in_folder.iter().all(|p| p.starts_with("Projects/Atlas/")));
    let outside = note_paths(
        &client
            .ok(
                "search",
                json!({"query": "warehouse -path:Projects/", "category": "notes"}),
            )
            .await,
    );
    assert!(outside.iter().all(|p| !p.starts_with("Projects/")), "{outside:?}");
    let active = note_paths(
        &client
            .ok("search", json!({"query": "[status:is \"active\"]", "limit": 100}))
            .await,
    );
    assert!(active.contains(&"Projects/Atlas/Atlas.md".to_string()));
    for path in &active {
        let note = client.ok("note_read", json!({"path": path})).await;
        assert_eq!(note["frontmatter"]["status"], "active", "{path}");
    }
    let due = note_paths(
        &client
            .ok("search", json!({"query": "has:due -has:priority", "limit": 100}))
            .await,
    );
    for path in &due {
        let note = client.ok("note_read", json!({"path": path})).await;
        assert!(
            note["frontmatter"].get("due").is_some() && note["frontmatter"].get("priority").is_none(),
            "{path}"
        );
    }
    let one = note_paths(
        &client
            .ok("search", json!({"query": "path:Projects/Atlas/retro.md"}))
            .await,
    );
    assert_eq!(one, ["Projects/Atlas/retro.md"]);
    let nothing = client
        .ok("search", json!({"query": "warehouse after:2100-01-01"}))
        .await;
    assert!(nothing["results"].as_array().unwrap().is_empty());
    let phrase = note_paths(
        &client
            .ok("search", json!({"query": "\"One warehouse\" tag:decisions"}))
            .await,
    );
    assert_eq!(phrase, [demo_notes::READ_ONLY_NOTE]);

    let unknown = client.refused("search", json!({"query": "title:atlas"})).await;
    for known in [
        "path:",
        "tag:",
        "has:",
        "-has:",
        "[key:op value]",
        "facet:",
        "after:",
        "before:",
    ] {
        assert!(unknown.contains(known), "{known} in {unknown}");
    }
    for (query, expected) in [
        ("tag:", "tag:"),
        ("after:yesterday", "after:"),
        ("[status is done]", "[key:op value]"),
        ("[status:banana x]", "expected"),
        ("\"unclosed", "quote"),
        ("facet:nowhere x", "facet:nowhere"),
    ] {
        let refused = client.refused("search", json!({"query": query})).await;
        assert!(refused.contains(expected), "{query}: {refused}");
    }
}

#[tokio::test]
async fn a_facet_limited_grant_reaches_only_the_notes_filed_in_its_facets() {
    let server = TestServer::start().await;
    let work = notes_client(&server, "work only", Some(&["work"])).await;
    let reached: BTreeSet<String> = all_notes(&work).await.into_iter().collect();
    let expected: BTreeSet<String> = demo_notes::notes_in_facet("work")
        .into_iter()
        .filter(|p| *p != demo_notes::PRIVATE_NOTE)
        .map(str::to_string)
        .collect();
    assert_eq!(reached, expected);
    let hits = work.ok("search", json!({"query": "tag:atlas", "limit": 100})).await;
    for hit in hits["results"].as_array().unwrap() {
        assert!(expected.contains(hit["path"].as_str().unwrap()), "{hit}");
    }
    let outside = "Home.md";
    let missing = work.refused("note_read", json!({"path": outside})).await;
    assert_eq!(
        missing,
        format!("there is no note at \"{outside}\"; see notes_list or search")
    );
    let rows = work
        .ok("base_query", json!({"dsl": "columns __path\nlimit 1000"}))
        .await;
    assert_eq!(rows["total"].as_u64().unwrap() as usize, expected.len());
    // A note in no facet has no AGENTS.md to offer here either: the root one is in no facet.
    let log = work.ok("note_read", json!({"path": demo_notes::READ_ONLY_NOTE})).await;
    assert!(log.get("agents_md").is_none(), "{log}");
    assert!(
        work.ok("skills_list", json!({})).await["skills"]
            .as_array()
            .unwrap()
            .is_empty()
    );
}

/// The answers an agent gets about one note path on every path it could learn it from.
async fn what_an_agent_learns(client: &Client, path: &str, word: &str) -> Vec<String> {
    let mut seen = Vec::new();
    let read = client.refused("note_read", json!({"path": path})).await;
    seen.push(read.replace(path, "<path>"));
    let by_id = client.refused("note_read", json!({"id": format!("path:{path}")})).await;
    seen.push(by_id.replace(path, "<path>"));
    let listed = all_notes(client).await;
    seen.push(format!("listed: {}", listed.contains(&path.to_string())));
    let count = client
        .ok("base_query", json!({"dsl": "columns __path\nlimit 1000"}))
        .await["total"]
        .clone();
    seen.push(format!("counted: {count}"));
    let query = format!("where __path is \"{path}\"");
    let queried = client.ok("base_query", json!({"dsl": query})).await;
    seen.push(format!("queried: {} {}", queried["total"], queried["rows"]));
    // Every word required: the answer is exactly a missing note's. By meaning the answer depends on
    // the words asked, so there the note must simply never be among the hits.
    let searched = client.ok("search", json!({"query": word, "mode": "all_words"})).await;
    seen.push(format!("searched: {}", searched["results"]));
    for mode in ["hybrid", "semantic", "lexical"] {
        let hits = client
            .ok("search", json!({"query": word, "mode": mode, "limit": 100}))
            .await;
        let shown = hits["results"]
            .as_array()
            .unwrap()
            .iter()
            .any(|hit| hit["path"] == path);
        seen.push(format!("searched {mode}: shown {shown}"));
    }
    let by_path = client.ok("search", json!({"query": format!("path:{path}")})).await;
    seen.push(format!("searched by path: {}", by_path["results"]));
    // The private note's tag and folder, as search filters and as groups with their counts.
    let by_tag = client.ok("search", json!({"query": "tag:travel", "limit": 100})).await;
    seen.push(format!("searched by tag: {}", by_tag["results"]));
    let folder = path.rsplit_once('/').map_or("", |(folder, _)| folder);
    let in_folder = client
        .ok(
            "search",
            json!({"query": format!("path:{folder}/ facet:family {word}"), "limit": 100, "mode": "all_words"}),
        )
        .await;
    seen.push(format!("searched in its folder: {}", in_folder["results"]));
    let grouped = client
        .ok(
            "base_query",
            json!({"dsl": "columns __path\ngroup by __folder\nlimit 1000"}),
        )
        .await;
    seen.push(format!("grouped: {} {}", grouped["total"], grouped["groups"]));
    let by_tags = client
        .ok(
            "base_query",
            json!({"dsl": "where __tags contains \"travel\"\ngroup by __folder"}),
        )
        .await;
    seen.push(format!("grouped by tag: {} {}", by_tags["total"], by_tags["groups"]));
    // A write with a guessed hash answers as for a missing note, whatever the guess.
    for (tool, arguments) in [
        (
            "note_write",
            json!({"path": path, "body": "x", "expected_hash": "0".repeat(64)}),
        ),
        (
            "note_edit_section",
            json!({"path": path, "anchor": word, "op": "replace", "content": "x"}),
        ),
        (
            "note_set_properties",
            json!({"path": path, "properties": {"status": "x"}}),
        ),
    ] {
        let refused = client.refused(tool, arguments).await;
        // Refused for the note, not for the call's shape (which would answer alike for anything).
        assert!(!refused.starts_with("invalid arguments"), "{tool}: {refused}");
        seen.push(format!("{tool}: {}", refused.replace(path, "<path>")));
    }
    seen
}

#[tokio::test]
async fn private_overridden_and_quarantined_notes_answer_exactly_as_missing_ones() {
    let server = TestServer::start().await;
    // The overridden note names this connection by its label.
    let client = notes_client(&server, demo_notes::OVERRIDDEN_FOR, None).await;
    let missing = what_an_agent_learns(&client, "Areas/no-such-note.md", "nonexistentword").await;
    assert!(missing[0].contains("there is no note"), "{missing:?}");
    for (path, word) in [
        (demo_notes::PRIVATE_NOTE, demo_notes::PRIVATE_WORD),
        (demo_notes::OVERRIDDEN_NOTE, demo_notes::OVERRIDDEN_WORD),
        ("_private/diary.md", demo_notes::QUARANTINED_WORD),
        (".obsidian/workspace.md", demo_notes::QUARANTINED_WORD),
        ("Widgets/tasks.md", demo_notes::QUARANTINED_WORD),
        (".trash/old.md", demo_notes::QUARANTINED_WORD),
    ] {
        let learned = what_an_agent_learns(&client, path, word).await;
        assert_eq!(learned, missing, "{path}");
    }
    // Another connection is not named by the override and sees the note.
    let other = notes_client(&server, "other", None).await;
    other
        .ok("note_read", json!({"path": demo_notes::OVERRIDDEN_NOTE}))
        .await;
    let found = other.ok("search", json!({"query": demo_notes::OVERRIDDEN_WORD})).await;
    assert_eq!(found["results"][0]["path"], demo_notes::OVERRIDDEN_NOTE);
}

#[tokio::test]
async fn notes_made_private_by_hand_vanish_from_fetch_agents_md_and_skills_like_deleted_ones() {
    let server = TestServer::start().await;
    let client = notes_client(&server, "watcher", None).await;
    let vault = server.root().join("notes");
    // References to two notes, taken while both were visible.
    let reference = |page: &Value, path: &str| -> String {
        page["results"]
            .as_array()
            .unwrap()
            .iter()
            .find(|h| h["path"] == path)
            .map(|h| h["reference"].as_str().unwrap().to_string())
            .unwrap_or_else(|| panic!("{path} in {page}"))
    };
    let retro = client
        .ok("search", json!({"query": "path:Projects/Atlas/retro.md"}))
        .await;
    let retro = reference(&retro, "Projects/Atlas/retro.md");
    let dashboards = client
        .ok("search", json!({"query": "path:Projects/Atlas/dashboards.md"}))
        .await;
    let dashboards = reference(&dashboards, "Projects/Atlas/dashboards.md");
    let before = client.ok("note_read", json!({"path": "Projects/Atlas/retro.md"})).await;
    assert_eq!(before["agents_md"]["path"], "Projects/AGENTS.md");

    // One note made private, one deleted; the project AGENTS.md and a skill made private.
    let make_private = |rel: &str| {
        let path = vault.join(rel);
        let text = std::fs::read_to_string(&path).unwrap();
        let text = match text.strip_prefix("---\n") {
            Some(rest) => format!("---\naccess: private\n{rest}"),
            None => format!("---\naccess: private\n---\n{text}"),
        };
        std::fs::write(&path, text).unwrap();
    };
    make_private("Projects/Atlas/retro.md");
    std::fs::remove_file(vault.join("Projects/Atlas/dashboards.md")).unwrap();
    make_private("Projects/AGENTS.md");
    make_private("Skills/meeting-notes/SKILL.md");

    // Even before a sync, a read checks the file as it is now.
    let private_now = client.refused("fetch", json!({"reference": retro})).await;
    assert_eq!(private_now, "that item no longer exists");
    let synced = eventually(100, || async {
        client.ok("skills_list", json!({})).await["skills"]
            .as_array()
            .unwrap()
            .len()
            == 1
    })
    .await;
    assert!(synced, "the server's sync sees the hand edits");
    let deleted = client.refused("fetch", json!({"reference": dashboards})).await;
    assert_eq!(private_now, deleted);
    let governed = client.ok("note_read", json!({"path": "Projects/Atlas/Atlas.md"})).await;
    assert_eq!(governed["agents_md"]["path"], "AGENTS.md", "the private one is skipped");
    let hidden_skill = client.refused("skill_read", json!({"id": "meeting-notes"})).await;
    let no_skill = client.refused("skill_read", json!({"id": "no-such-skill"})).await;
    assert_eq!(
        hidden_skill.replace("meeting-notes", "<id>"),
        no_skill.replace("no-such-skill", "<id>")
    );
}

#[tokio::test]
async fn hand_edits_new_notes_renames_and_deletions_show_without_a_restart() {
    let server = TestServer::start().await;
    let client = notes_client(&server, "editor", None).await;
    let vault = server.root().join("notes");
    std::fs::create_dir_all(vault.join("Inbox")).unwrap();
    std::fs::write(
        vault.join("Inbox/fresh.md"),
        "---\ntags: [fresh]\n---\n# Fresh idea\n\nplatypus-orbit\n",
    )
    .unwrap();
    let appeared = eventually(100, || async {
        paths(&client.ok("notes_list", json!({"folder": "Inbox"})).await) == ["Inbox/fresh.md"]
    })
    .await;
    assert!(appeared, "a new note is listed within the sync interval");
    let hits = client.ok("search", json!({"query": "platypus-orbit"})).await;
    assert_eq!(hits["results"][0]["path"], "Inbox/fresh.md");
    std::fs::rename(vault.join("Inbox/fresh.md"), vault.join("Inbox/renamed.md")).unwrap();
    let renamed = eventually(100, || async {
        paths(&client.ok("notes_list", json!({"folder": "Inbox"})).await) == ["Inbox/renamed.md"]
    })
    .await;
    assert!(renamed);
    std::fs::remove_file(vault.join("Inbox/renamed.md")).unwrap();
    let gone = eventually(100, || async {
        client.ok("notes_list", json!({"folder": "Inbox"})).await["notes"]
            .as_array()
            .unwrap()
            .is_empty()
    })
    .await;
    assert!(gone);
    let after = client
        .ok("search", json!({"query": "platypus-orbit", "limit": 100}))
        .await;
    let inbox = after["results"].as_array().unwrap().iter().filter(|hit| {
        hit["path"].as_str().is_some_and(|p| p.starts_with("Inbox/")) || hit["matched"]["words"].is_number()
    });
    assert_eq!(
        inbox.count(),
        0,
        "a deleted note is neither found nor its words: {after}"
    );
}
