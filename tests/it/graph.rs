//! The graph over MCP: the tools a grant offers, items named the ways tools name them, the rules of
//! "add, not override" between two agents and the owner, the identity that comes from the
//! credential, a connection shown only when the grant reaches both ends, and propose mode.

use serde_json::json;

use crate::harness::{Client, TestServer};
use journal::auth::{Category, WriteMode, connections};
use journal::journal::demo_notes::{OVERRIDDEN_FOR, OVERRIDDEN_NOTE, PRIVATE_NOTE};
use journal::journal::graph::gate;
use journal::journal::graph::{Author, store};
use journal::journal::proposals;
use journal::review::{self, Onto};

const GRAPH_TOOLS: [&str; 8] = [
    "find_connections",
    "describe_item",
    "list_types",
    "recent_activity",
    "connect",
    "set_connection_type",
    "write_connection_note",
    "disconnect",
];
const GRAPH_WRITES: [&str; 4] = ["connect", "set_connection_type", "write_connection_note", "disconnect"];

/// A key granted `categories` (with the graph) and the write mode, connected.
pub(crate) async fn agent(server: &TestServer, label: &str, categories: &[&str], mode: WriteMode) -> (Client, String) {
    let key = server.key(label, categories, None).await;
    let connection = connections::find_key(&server.journal.db, label).await.unwrap();
    connections::set_grant(
        &server.journal.db,
        &connection.id,
        &connection.grant.categories,
        None,
        mode,
    )
    .await
    .unwrap();
    (Client::connected(&server.url(), &key).await, connection.id)
}

const ALL: [&str; 5] = ["transcripts", "entities", "facets", "notes", "graph"];

/// The agent connects Inbox.md to Ada Okafor as `mentions` and writes its note on it; answers the id.
async fn inbox_mentions_ada(client: &Client, note: &str) -> String {
    let made = client
        .ok(
            "connect",
            json!({"from": "Inbox.md", "to": "Ada Okafor", "type": "mentions"}),
        )
        .await;
    let id = made["connection"]["id"].as_str().unwrap().to_string();
    client
        .ok("write_connection_note", json!({"id": id, "text": note}))
        .await;
    id
}

fn graph_file(server: &TestServer) -> String {
    std::fs::read_to_string(store::path(server.root())).unwrap_or_default()
}

#[tokio::test]
async fn the_graph_tools_are_offered_with_the_graph_and_writes_with_a_write_mode() {
    let server = TestServer::start().await;
    let (reader, _) = agent(&server, "Reader", &["notes", "graph"], WriteMode::None).await;
    let names = reader.tool_names().await;
    for tool in GRAPH_TOOLS {
        assert_eq!(
            names.contains(&tool.to_string()),
            !GRAPH_WRITES.contains(&tool),
            "{tool}: {names:?}"
        );
    }
    let (without, _) = agent(&server, "Notes only", &["notes"], WriteMode::Force).await;
    let names = without.tool_names().await;
    assert!(GRAPH_TOOLS.iter().all(|t| !names.contains(&t.to_string())), "{names:?}");
    // Called anyway, a tool outside the grant is refused.
    let refused = without.refused("find_connections", json!({"item": "Inbox.md"})).await;
    assert!(refused.contains("does not include find_connections"), "{refused}");
    // my_proposals follows any write: a graph-only writer learns its proposals' outcomes too.
    let (graph_writer, _) = agent(&server, "Graph writer", &["graph"], WriteMode::Propose).await;
    let names = graph_writer.tool_names().await;
    assert!(
        names.contains(&"my_proposals".to_string()) && !names.contains(&"note_write".to_string()),
        "{names:?}"
    );
    let (writer, _) = agent(&server, "Writer", &["notes", "graph"], WriteMode::Propose).await;
    let names = writer.tool_names().await;
    assert!(GRAPH_TOOLS.iter().all(|t| names.contains(&t.to_string())), "{names:?}");
    // The graph is not a search category.
    let search = writer.tool("search").await;
    let categories = &search["inputSchema"]["properties"]["category"]["enum"];
    assert_eq!(categories, &json!(["notes"]), "{search}");
}

#[tokio::test]
async fn agents_connect_items_by_their_names_and_each_keeps_their_own_part() {
    let server = TestServer::start().await;
    let (claude, _) = agent(&server, "Claude Code", &ALL, WriteMode::Force).await;
    let (codex, _) = agent(&server, "Codex", &ALL, WriteMode::Force).await;

    let made = claude
        .ok(
            "connect",
            json!({"from": "Projects/Atlas/Atlas.md", "to": "Project Atlas", "type": "about"}),
        )
        .await;
    assert_eq!(made["status"], "connected");
    let connection = &made["connection"];
    let id = connection["id"].as_str().unwrap().to_string();
    assert_eq!(connection["from"]["item"], "note:Projects/Atlas/Atlas.md");
    assert_eq!(connection["from"]["title"], "Project Atlas");
    assert_eq!(connection["to"]["item"], "entity:project-atlas");
    assert_eq!(
        connection["created_by"], "agent:claude-code",
        "the identity is the label's slug"
    );
    assert_eq!(connection["type_by"], "agent:claude-code");
    // The same two items with the same type again: the same connection.
    let again = claude
        .ok(
            "connect",
            json!({"from": "note:Projects/Atlas/Atlas.md", "to": "entity:project-atlas", "type": "about"}),
        )
        .await;
    assert_eq!(again["connection"]["id"], json!(id));
    // A reference from the items' own result opens the same item (fetch takes it too).
    let fetched = claude
        .ok("fetch", json!({"reference": connection["to"]["reference"]}))
        .await;
    assert!(fetched["text"].as_str().unwrap().contains("Project Atlas"), "{fetched}");
    let facet = claude.ok("connect", json!({"from": "work", "to": "Ada Okafor"})).await;
    assert_eq!(facet["connection"]["from"]["item"], "facet:work");
    assert_eq!(facet["connection"]["to"]["item"], "entity:ada-okafor");
    assert!(facet["connection"].get("type").is_none());
    let facet_id = facet["connection"]["id"].as_str().unwrap().to_string();

    // Another agent may not retype it, nor remove it; it adds its own note.
    let forbidden = codex
        .refused("set_connection_type", json!({"id": id, "type": "mentions"}))
        .await;
    assert!(
        forbidden.starts_with("forbidden: agent:claude-code set this connection's type"),
        "{forbidden}"
    );
    let forbidden = codex.refused("disconnect", json!({"id": id})).await;
    assert!(
        forbidden.starts_with("forbidden: agent:claude-code made this connection"),
        "{forbidden}"
    );
    let noted = codex
        .ok(
            "write_connection_note",
            json!({"id": id, "text": "The overview names the project."}),
        )
        .await;
    assert_eq!(noted["status"], "noted");
    claude
        .ok("write_connection_note", json!({"id": id, "text": "Mine."}))
        .await;
    // An untyped connection takes a type from anyone; then it is theirs.
    let typed = codex
        .ok("set_connection_type", json!({"id": facet_id, "type": "includes"}))
        .await;
    assert_eq!(typed["connection"]["type_by"], "agent:codex");
    let forbidden = claude
        .refused("set_connection_type", json!({"id": facet_id, "type": "other"}))
        .await;
    assert!(
        forbidden.starts_with("forbidden: agent:codex set this connection's type"),
        "{forbidden}"
    );

    let found = codex.ok("find_connections", json!({"item": "Project Atlas"})).await;
    assert_eq!(found["item"]["item"], "entity:project-atlas");
    let connections = found["connections"].as_array().unwrap();
    assert_eq!(connections.len(), 1, "{found}");
    let notes: Vec<(&str, &str)> = connections[0]["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| (n["author"].as_str().unwrap(), n["text"].as_str().unwrap()))
        .collect();
    assert_eq!(
        notes,
        [
            ("agent:claude-code", "Mine."),
            ("agent:codex", "The overview names the project.")
        ]
    );
    let out = codex
        .ok("find_connections", json!({"item": "Project Atlas", "direction": "out"}))
        .await;
    assert_eq!(out["connections"], json!([]));
    let other_type = codex
        .ok("find_connections", json!({"item": "Project Atlas", "type": "mentions"}))
        .await;
    assert_eq!(other_type["connections"], json!([]));

    // Empty text removes only the caller's note.
    codex.ok("write_connection_note", json!({"id": id, "text": ""})).await;
    let described = claude
        .ok("describe_item", json!({"item": "Projects/Atlas/Atlas"}))
        .await;
    assert_eq!(described["item"]["kind"], "note");
    assert_eq!(described["connection_count"], 1);
    assert_eq!(described["connections"][0]["notes"].as_array().unwrap().len(), 1);
    assert_eq!(
        described["authors"],
        json!([{"author": "agent:claude-code", "connections_made": 1, "notes_written": 1}])
    );

    let types = claude.ok("list_types", json!({})).await;
    assert_eq!(
        types["types"],
        json!([{"type": "about", "connections": 1}, {"type": "includes", "connections": 1}])
    );
    assert_eq!(types["untyped"], 0);
    let activity = claude.ok("recent_activity", json!({"limit": 10})).await;
    let events = activity["events"].as_array().unwrap();
    assert_eq!(events.len(), 3, "two connections and one note: {activity}");
    assert!(
        events
            .iter()
            .any(|e| e["action"] == "wrote a note" && e["author"] == "agent:claude-code")
    );
    let none = claude.ok("recent_activity", json!({"since": "2999-01-01"})).await;
    assert_eq!(none["events"], json!([]));

    // Its own connection an agent removes; the file keeps the other.
    let removed = claude.ok("disconnect", json!({"id": facet_id})).await;
    assert_eq!(removed["status"], "disconnected");
    let forbidden = codex.refused("disconnect", json!({"id": id})).await;
    assert!(forbidden.starts_with("forbidden:"), "{forbidden}");
    let file = graph_file(&server);
    assert_eq!(file.lines().count(), 1, "{file}");
    assert!(file.contains(&id));
}

#[tokio::test]
async fn a_codex_removal_of_its_own_connection_after_claude_typed_it_is_still_its_own() {
    // disconnect follows the creator, not the type's setter.
    let server = TestServer::start().await;
    let (claude, _) = agent(&server, "Claude", &ALL, WriteMode::Force).await;
    let (codex, _) = agent(&server, "Codex", &ALL, WriteMode::Force).await;
    let made = codex.ok("connect", json!({"from": "Inbox.md", "to": "family"})).await;
    let id = made["connection"]["id"].as_str().unwrap().to_string();
    claude
        .ok("set_connection_type", json!({"id": id, "type": "mentions"}))
        .await;
    let gone = codex.ok("disconnect", json!({"id": id})).await;
    assert_eq!(gone["status"], "disconnected");
    assert_eq!(gone["connection"]["type"], "mentions", "answered as it was");
    let again = codex.refused("disconnect", json!({"id": id})).await;
    assert!(again.starts_with(&format!("there is no connection {id}")), "{again}");
}

#[tokio::test]
async fn a_connection_shows_only_when_the_grant_reaches_both_ends() {
    let server = TestServer::start().await;
    // The owner connects everything (no reach limits for the owner).
    let viewer = journal::journal::graph::items::Viewer::Owner;
    let owner = journal::journal::graph::history::Origin::owner();
    let connect = |from: &str, to: &str| gate::GraphChange::Connect {
        from: from.into(),
        to: to.into(),
        kind: None,
    };
    let private = format!("note:{PRIVATE_NOTE}");
    let overridden = format!("note:{OVERRIDDEN_NOTE}");
    for (from, to) in [
        ("note:Inbox.md", "entity:ada-okafor"),
        (private.as_str(), "entity:ada-okafor"),
        (overridden.as_str(), "facet:work"),
        ("note:Inbox.md", "facet:health"),
    ] {
        gate::make(&server.journal, &owner, &viewer, &connect(from, to))
            .await
            .unwrap();
    }
    let owned = gate::load(&server.journal).await.unwrap();
    assert_eq!(owned.len(), 4);

    // Notes and graph, but not entities: nothing that touches an entity shows.
    let (notes_only, _) = agent(&server, "Notes", &["notes", "graph"], WriteMode::Force).await;
    let found = notes_only.ok("find_connections", json!({"item": "Inbox.md"})).await;
    let ends: Vec<&str> = found["connections"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["to"]["item"].as_str().unwrap())
        .collect();
    assert_eq!(ends, ["facet:health"], "{found}");
    let missing = notes_only
        .refused("find_connections", json!({"item": "Ada Okafor"}))
        .await;
    let private_answer = notes_only
        .refused("find_connections", json!({"item": PRIVATE_NOTE}))
        .await;
    let nothing = notes_only
        .refused("find_connections", json!({"item": "Areas/no-such-note.md"}))
        .await;
    // A private note, an entity out of reach and a note that does not exist answer alike.
    let shape = |text: &str| text.split('"').next().unwrap().to_string() + text.rsplit('"').next().unwrap();
    assert_eq!(shape(&private_answer), shape(&nothing));
    assert_eq!(shape(&missing), shape(&nothing));
    assert!(nothing.starts_with("there is no item"), "{nothing}");
    let refused = notes_only
        .refused("connect", json!({"from": "Inbox.md", "to": PRIVATE_NOTE}))
        .await;
    assert_eq!(shape(&refused), shape(&nothing));
    let activity = notes_only.ok("recent_activity", json!({})).await;
    // Inbox.md to health, and the note hidden only from another connection to work.
    assert_eq!(activity["events"].as_array().unwrap().len(), 2, "{activity}");
    let types = notes_only.ok("list_types", json!({})).await;
    assert_eq!(types["untyped"], 2);

    // A connection the agent cannot see answers as one that does not exist, to every write.
    let hidden = owned.connections().find(|c| c.from == private).unwrap().id.clone();
    let (full, _) = agent(&server, OVERRIDDEN_FOR, &ALL, WriteMode::Force).await;
    for (tool, arguments) in [
        ("write_connection_note", json!({"id": hidden, "text": "hi"})),
        ("disconnect", json!({"id": hidden})),
        ("set_connection_type", json!({"id": hidden, "type": "x"})),
    ] {
        let answer = full.refused(tool, arguments).await;
        assert!(
            answer.starts_with(&format!("there is no connection {hidden}")),
            "{tool}: {answer}"
        );
    }
    // The note its overrides hide from this one connection hides its connections too.
    let seen = full.ok("find_connections", json!({"item": "work"})).await;
    assert_eq!(seen["connections"], json!([]), "{seen}");
    let (other, _) = agent(&server, "Someone else", &ALL, WriteMode::None).await;
    let seen = other.ok("find_connections", json!({"item": "work"})).await;
    assert_eq!(seen["connections"].as_array().unwrap().len(), 1, "{seen}");

    // A facet-limited grant sees the connections within its facets only.
    let key = server.key("Health only", &["notes", "graph"], Some(&["health"])).await;
    let limited = Client::connected(&server.url(), &key).await;
    let types = limited.ok("list_types", json!({})).await;
    assert_eq!(
        types["untyped"], 0,
        "Inbox.md is in no facet: out of a facet-limited reach"
    );
    let facet = limited.refused("describe_item", json!({"item": "family"})).await;
    assert!(facet.starts_with("there is no item"), "{facet}");
    assert!(graph_file(&server).lines().count() == 4, "reads changed nothing");
}

#[tokio::test]
async fn items_are_named_unambiguously_and_bad_arguments_change_nothing() {
    let server = TestServer::start().await;
    let (client, _) = agent(&server, "Agent", &ALL, WriteMode::Force).await;
    // A note named like a facet: the bare name is ambiguous, a key is not.
    std::fs::write(server.root().join("notes/work.md"), "# Work notes\n").unwrap();
    server.journal.sync().await.unwrap();
    let ambiguous = client.refused("describe_item", json!({"item": "work"})).await;
    assert!(
        ambiguous.contains("names more than one item") && ambiguous.contains("note:work.md, facet:work"),
        "{ambiguous}"
    );
    assert_eq!(
        client.ok("describe_item", json!({"item": "facet:work"})).await["item"]["kind"],
        "facet"
    );
    for (tool, arguments, says) in [
        (
            "connect",
            json!({"from": "Inbox.md", "to": "Inbox.md"}),
            "the same item",
        ),
        (
            "connect",
            json!({"from": "Inbox.md", "to": "family", "type": "Has Space"}),
            "not a connection type",
        ),
        ("connect", json!({"from": "", "to": "family"}), "item is empty"),
        (
            "set_connection_type",
            json!({"id": "c-zzzzzzzzzz", "type": "x"}),
            "there is no connection",
        ),
        ("disconnect", json!({"id": "nope"}), "is not a connection id"),
        (
            "write_connection_note",
            json!({"id": "c-zzzzzzzzzz", "text": "x", "extra": 1}),
            "unknown field",
        ),
        (
            "find_connections",
            json!({"item": "Inbox.md", "direction": "sideways"}),
            "unknown variant",
        ),
        ("find_connections", json!({"item": "Inbox.md", "limit": 101}), "100"),
        ("recent_activity", json!({"since": "yesterday"}), "neither a day"),
    ] {
        let answer = client.refused(tool, arguments.clone()).await;
        assert!(answer.contains(says), "{tool} {arguments}: {answer}");
    }
    let made = client.ok("connect", json!({"from": "Inbox.md", "to": "family"})).await;
    let id = made["connection"]["id"].as_str().unwrap();
    let long = "x".repeat(4001);
    let answer = client
        .refused("write_connection_note", json!({"id": id, "text": long}))
        .await;
    assert!(answer.contains("at most 4000 characters"), "{answer}");
    let file = graph_file(&server);
    assert_eq!(file.lines().count(), 1);
    assert!(!file.contains("\"notes\""), "{file}");
}

#[tokio::test]
async fn in_propose_mode_a_graph_write_waits_for_the_owner() {
    let server = TestServer::start().await;
    let (client, connection_id) = agent(&server, "Proposer", &ALL, WriteMode::Propose).await;
    let proposed = client
        .ok(
            "connect",
            json!({"from": "Inbox.md", "to": "Ada Okafor", "type": "mentions"}),
        )
        .await;
    assert_eq!(proposed["status"], "proposed");
    assert!(proposed.get("connection").is_none());
    assert_eq!(graph_file(&server), "", "nothing changed");
    let id = proposed["proposal_id"].as_i64().unwrap();
    let mine = client.ok("my_proposals", json!({})).await;
    assert!(mine.to_string().contains("connect"), "{mine}");
    let stored = proposals::get(&server.journal.db, id).await.unwrap().unwrap();
    assert_eq!(stored.path, "connect note:Inbox.md → entity:ada-okafor as mentions");

    // A proposal the rules would refuse is refused now, not staged.
    let owner = journal::journal::graph::history::Origin::owner();
    let made = gate::make(
        &server.journal,
        &owner,
        &journal::journal::graph::items::Viewer::Owner,
        &gate::GraphChange::Connect {
            from: "note:Inbox.md".into(),
            to: "facet:family".into(),
            kind: Some("about".into()),
        },
    )
    .await
    .unwrap();
    let forbidden = client
        .refused("set_connection_type", json!({"id": made.connection.id, "type": "x"}))
        .await;
    assert!(forbidden.starts_with("forbidden: owner set"), "{forbidden}");

    // Accepted, it is made as the agent that proposed it, by the grant it has now.
    review::accept(&server.journal, id, Onto::Proposed).await.unwrap();
    let graph = gate::load(&server.journal).await.unwrap();
    let accepted = graph
        .connections()
        .find(|c| c.from == "note:Inbox.md" && c.to == "entity:ada-okafor")
        .unwrap()
        .clone();
    assert_eq!(accepted.created_by, Some(Author::agent("Proposer")));
    let stored = proposals::get(&server.journal.db, id).await.unwrap().unwrap();
    assert_eq!(stored.status, proposals::Status::Accepted);
    assert_eq!(stored.kind, proposals::Kind::Graph);
    let again = review::accept(&server.journal, id, Onto::Proposed).await.unwrap_err();
    assert!(again.to_string().contains("already accepted"), "{again}");
    assert_eq!(gate::load(&server.journal).await.unwrap().len(), 2);

    // Narrowed since it proposed, the connection's proposal can no longer be made.
    let second = client
        .ok(
            "write_connection_note",
            json!({"id": accepted.id, "text": "Seen in the inbox."}),
        )
        .await;
    let narrowed = [Category::Notes, Category::Graph].into_iter().collect();
    connections::set_grant(&server.journal.db, &connection_id, &narrowed, None, WriteMode::Propose)
        .await
        .unwrap();
    let second = second["proposal_id"].as_i64().unwrap();
    let refused = review::accept(&server.journal, second, Onto::Proposed)
        .await
        .unwrap_err();
    assert!(refused.to_string().starts_with("there is no connection"), "{refused}");
    let graph = gate::load(&server.journal).await.unwrap();
    assert!(graph.connections().all(|c| c.notes.is_empty()));

    // Removed since it proposed, the connection's proposal can only be rejected.
    connections::revoke(&server.journal.db, &connection_id).await.unwrap();
    let gone = review::accept(&server.journal, second, Onto::Proposed)
        .await
        .unwrap_err();
    assert!(
        gone.to_string()
            .contains("\"Proposer\" that proposed this was removed; reject it"),
        "{gone}"
    );
}

/// Every call of one tool through the audit: a graph write is recorded with what it named.
#[tokio::test]
async fn graph_writes_are_audited_with_what_they_named() {
    let server = TestServer::start().await;
    let (client, _) = agent(&server, "Audited", &ALL, WriteMode::Force).await;
    let made = client.ok("connect", json!({"from": "Inbox.md", "to": "family"})).await;
    let id = made["connection"]["id"].as_str().unwrap().to_string();
    client.ok("disconnect", json!({"id": id})).await;
    let rows: Vec<(String, String)> = sqlx::query_as("SELECT tool, path FROM audit WHERE path IS NOT NULL ORDER BY id")
        .fetch_all(&server.journal.db)
        .await
        .unwrap();
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert!(rows[0].1.contains("Inbox.md → family"), "{rows:?}");
    assert!(rows[1].1.contains(&id), "{rows:?}");
}

/// The owner's CLI overrides what an agent made, keeps the owner's own note beside the agent's, and
/// reports a bad line of a hand-edited file without losing it.
#[tokio::test]
async fn the_owner_overrides_anything_from_the_command_line() {
    use crate::cli::{fails, ok};
    let server = TestServer::start().await;
    let (client, _) = agent(&server, "Claude", &ALL, WriteMode::Force).await;
    let id = inbox_mentions_ada(&client, "Named in the inbox.").await;
    let dir = server.root().to_path_buf();

    let retyped = ok(&dir, &["graph", "set-type", &id, "about"]);
    assert!(retyped.contains("[about]"), "{retyped}");
    ok(&dir, &["graph", "note", &id, "Right."]);
    let listed = ok(&dir, &["graph", "list", "Ada Okafor"]);
    assert!(
        listed.contains("note:Inbox.md → entity:ada-okafor [about]  by agent:claude"),
        "{listed}"
    );
    assert!(
        listed.contains("agent:claude (") && listed.contains("Named in the inbox."),
        "{listed}"
    );
    assert!(listed.contains("owner (") && listed.contains("Right."), "{listed}");
    // The agent may no longer retype what the owner typed.
    let forbidden = client
        .refused("set_connection_type", json!({"id": id, "type": "mentions"}))
        .await;
    assert!(forbidden.starts_with("forbidden: owner set"), "{forbidden}");

    let own = ok(
        &dir,
        &["graph", "connect", "work", "Project Atlas", "--type", "includes"],
    );
    assert!(
        own.contains("facet:work → entity:project-atlas [includes]  by owner"),
        "{own}"
    );
    assert!(fails(&dir, &["graph", "connect", "nowhere", "work"]).contains("there is no item \"nowhere\""));
    assert!(fails(&dir, &["graph", "set-type", &id, "Not A Type"]).contains("not a connection type"));
    assert!(fails(&dir, &["graph", "disconnect", "c-zzzzzzzzzz"]).contains("`journal graph list`"));
    let before = graph_file(&server);
    std::fs::write(store::path(&dir), format!("{before}{{broken\n")).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_journal"))
        .args(["--journal", dir.to_str().unwrap(), "graph", "list"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let warning = String::from_utf8(out.stderr).unwrap();
    assert!(warning.contains("graph.jsonl line 3"), "{warning}");
    // The owner removes the agent's connection; the bad line stays as it was.
    ok(&dir, &["graph", "disconnect", &id]);
    let after = graph_file(&server);
    assert_eq!(after.lines().count(), 2, "{after}");
    assert!(after.ends_with("{broken\n"), "{after}");
    let described = client.ok("describe_item", json!({"item": "Inbox.md"})).await;
    assert_eq!(described["connection_count"], 0, "{described}");
}

/// The owner app: the graph page, an item's page with its neighbourhood drawn by the server, the
/// owner's note and removal through the same gate, and the graph writes on the activity page.
#[tokio::test]
async fn the_owner_app_shows_an_items_neighbourhood_and_overrides_anything() {
    use crate::app::{get, text};
    use crate::app_pages::{owner_of, submit};
    use hyper::StatusCode;
    let server = TestServer::start().await;
    let (client, _) = agent(&server, "Claude", &ALL, WriteMode::Force).await;
    let id = inbox_mentions_ada(&client, "Ada <b>asked</b> about it.").await;
    let owner = owner_of(&server).await;

    let latest = text(&get(&server, "/app/graph", Some(&owner.secret)).await);
    assert!(
        latest.contains("1 connection<") && latest.contains("<strong>mentions</strong>"),
        "{latest}"
    );
    let page = get(&server, "/app/graph?item=Ada%20Okafor", Some(&owner.secret)).await;
    assert_eq!(page.status, StatusCode::OK);
    let page = text(&page);
    assert!(page.contains("<svg") && page.contains("entity:ada-okafor"), "{page}");
    assert!(
        page.contains("Ada &#60;b&#62;asked&#60;/b&#62; about it."),
        "notes are escaped: {page}"
    );
    assert!(!page.contains("<b>asked"), "{page}");
    assert!(page.contains("<line "), "a line to its one neighbour");

    let noted = submit(
        &server,
        &owner,
        &format!("/app/graph/{id}/note"),
        "text=Owner%27s+view&item=Ada+Okafor",
    )
    .await;
    assert_eq!(noted.status, StatusCode::SEE_OTHER);
    let graph = gate::load(&server.journal).await.unwrap();
    let notes: Vec<(String, String)> = graph
        .get(&id)
        .unwrap()
        .notes
        .iter()
        .map(|n| (n.author.to_string(), n.text.clone()))
        .collect();
    assert_eq!(
        notes,
        [
            ("agent:claude".to_string(), "Ada <b>asked</b> about it.".to_string()),
            ("owner".to_string(), "Owner's view".to_string())
        ]
    );
    let bad = submit(&server, &owner, "/app/graph/not-an-id/disconnect", "item=x").await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST);
    let gone = submit(&server, &owner, "/app/graph/c-zzzzzzzzzz/disconnect", "item=x").await;
    assert_eq!(gone.status, StatusCode::CONFLICT);
    assert!(text(&gone).contains("there is no connection c-zzzzzzzzzz"));
    let removed = submit(&server, &owner, &format!("/app/graph/{id}/disconnect"), "item=Inbox.md").await;
    assert_eq!(removed.status, StatusCode::SEE_OTHER);
    assert!(gate::load(&server.journal).await.unwrap().is_empty());
    let unknown = get(&server, "/app/graph?item=nothing-here", Some(&owner.secret)).await;
    assert_eq!(unknown.status, StatusCode::NOT_FOUND);
    assert!(text(&unknown).contains("there is no item"));

    let activity = text(&get(&server, "/app/activity?tool=connect", Some(&owner.secret)).await);
    assert!(activity.contains("Inbox.md → Ada Okafor"), "{activity}");

    // A graph proposal waits on the Proposals page and is made when the owner accepts it there.
    let (proposer, _) = agent(&server, "Proposer", &ALL, WriteMode::Propose).await;
    let proposed = proposer
        .ok("connect", json!({"from": "Inbox.md", "to": "family", "type": "about"}))
        .await;
    let proposal = proposed["proposal_id"].as_i64().unwrap();
    let waiting = text(&get(&server, "/app/proposals", Some(&owner.secret)).await);
    assert!(
        waiting.contains("connect note:Inbox.md → facet:family as about"),
        "{waiting}"
    );
    let accepted = submit(&server, &owner, &format!("/app/proposals/{proposal}/accept"), "").await;
    assert_eq!(accepted.status, StatusCode::SEE_OTHER, "{}", text(&accepted));
    let graph = gate::load(&server.journal).await.unwrap();
    let made: Vec<_> = graph.connections().collect();
    assert_eq!(made.len(), 1);
    assert_eq!(made[0].created_by, Some(Author::agent("Proposer")));
    let twice = submit(&server, &owner, &format!("/app/proposals/{proposal}/accept"), "").await;
    assert_eq!(twice.status, StatusCode::CONFLICT);
}

/// An app that signs in under a name a key already has (here "Test Agent") is its own author: it
/// cannot remove the key's connections; and a connection another author wrote a note on stays.
#[tokio::test]
async fn a_signed_in_app_is_its_own_author_whatever_its_name_and_others_notes_stay() {
    let server = TestServer::start().await;
    let (key_agent, _) = agent(&server, "Test Agent", &ALL, WriteMode::Force).await;
    let (other, _) = agent(&server, "Other", &ALL, WriteMode::Force).await;
    let id = inbox_mentions_ada(&key_agent, "Mine, by key.").await;
    let (_, tokens) = crate::oauth::sign_in(&server, &ALL, None).await;
    let app_id: String = sqlx::query_scalar("SELECT id FROM connections WHERE kind = 'oauth'")
        .fetch_one(&server.journal.db)
        .await
        .unwrap();
    let categories = connections::load(&server.journal.db, &app_id)
        .await
        .unwrap()
        .unwrap()
        .grant
        .categories;
    connections::set_grant(&server.journal.db, &app_id, &categories, None, WriteMode::Force)
        .await
        .unwrap();
    let app = Client::connected(&server.url(), tokens["access_token"].as_str().unwrap()).await;
    let refused = app.refused("disconnect", json!({"id": id})).await;
    assert!(
        refused.starts_with("forbidden: agent:test-agent made this connection"),
        "{refused}"
    );
    let made = app
        .ok(
            "connect",
            json!({"from": "Inbox.md", "to": "Ada Okafor", "type": "about"}),
        )
        .await;
    let identity = made["connection"]["created_by"].as_str().unwrap().to_string();
    assert_eq!(identity, format!("agent:test-agent~{}", &app_id.replace('-', "")[..8]));
    let key_refused = key_agent
        .refused("disconnect", json!({"id": made["connection"]["id"]}))
        .await;
    assert!(key_refused.contains(&identity), "{key_refused}");
    // Another author's note keeps the key's own connection from going.
    other
        .ok("write_connection_note", json!({"id": id, "text": "I agree."}))
        .await;
    let kept = key_agent.refused("disconnect", json!({"id": id})).await;
    assert!(
        kept.starts_with("forbidden: agent:other added to this connection"),
        "{kept}"
    );
    assert!(graph_file(&server).contains("I agree.") && graph_file(&server).contains("Mine, by key."));
}
