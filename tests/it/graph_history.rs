//! The graph's history: every change an agent (or the owner) makes to the graph is kept with the
//! connection before and after; the owner undoes it from the command line and the app while the
//! connection is as the change left it; an agent's changes count against its history budget; a
//! change a dead process left unfinished is undone at the next open, its proposal still pending.

use serde_json::json;

use crate::app::{get, own_origin, post_form, text};
use crate::app_pages::{owner_of, submit};
use crate::harness::{Client, TestServer};
use hyper::StatusCode;
use journal::auth::WriteMode;
use journal::journal::graph::history::{self, NewEntry, Origin};
use journal::journal::graph::{Author, gate, store};
use journal::journal::proposals;

fn demo_options() -> journal::journal::demo::DemoOptions {
    journal::journal::demo::DemoOptions {
        days: 2,
        segments_per_day: 2,
        seed: 5,
        end: journal::journal::day::Day::parse(crate::harness::LAST_DAY).unwrap(),
        notes: 12,
    }
}

const ALL: [&str; 5] = ["transcripts", "entities", "facets", "notes", "graph"];

async fn agent(server: &TestServer, label: &str, mode: WriteMode) -> (Client, String) {
    crate::graph::agent(server, label, &ALL, mode).await
}

fn connection(server: &TestServer, id: &str) -> Option<journal::journal::graph::Edge> {
    store::load(server.root()).unwrap().get(id).cloned()
}

#[tokio::test]
async fn the_owner_sees_and_undoes_each_graph_change_an_agent_made() {
    let server = TestServer::start().await;
    let (client, _) = agent(&server, "Helper", WriteMode::Force).await;
    let made = client
        .ok(
            "connect",
            json!({"from": "Inbox.md", "to": "Ada Okafor", "type": "mentions"}),
        )
        .await;
    let id = made["connection"]["id"].as_str().unwrap().to_string();
    client
        .ok("write_connection_note", json!({"id": id, "text": "Seen in the inbox."}))
        .await;
    client
        .ok("set_connection_type", json!({"id": id, "type": "about"}))
        .await;

    let root = server.root();
    let listed = crate::cli::ok(root, &["graph", "history"]);
    for word in [
        "connected",
        "noted",
        "retyped",
        "(mentions → about)",
        "agent:helper (Helper)",
        &id,
    ] {
        assert!(listed.contains(word), "{word}: {listed}");
    }
    let entries = history::recent(&server.journal.db, 10).await.unwrap();
    let [retyped, noted, connected] = [&entries[0], &entries[1], &entries[2]];
    assert_eq!(
        (retyped.what(), noted.what(), connected.what()),
        ("retyped", "noted", "connected")
    );
    assert_eq!(connected.before, None);
    assert_eq!(retyped.after.as_ref(), connection(&server, &id).as_ref());

    // What changed since cannot be undone from under the later change.
    let refused = crate::cli::fails(root, &["graph", "revert", &connected.id.to_string()]);
    assert!(refused.contains("changed after change"), "{refused}");
    assert!(connection(&server, &id).is_some());
    let missing = crate::cli::fails(root, &["graph", "revert", "999999"]);
    assert!(missing.contains("has no change 999999"), "{missing}");

    // Newest first, each goes back.
    crate::cli::ok(root, &["graph", "revert", &retyped.id.to_string()]);
    assert_eq!(connection(&server, &id).unwrap().kind.as_deref(), Some("mentions"));
    crate::cli::ok(root, &["graph", "revert", &noted.id.to_string()]);
    assert!(connection(&server, &id).unwrap().notes.is_empty());
    let undone = crate::cli::ok(root, &["graph", "revert", &connected.id.to_string()]);
    assert!(undone.contains("undid change"), "{undone}");
    assert_eq!(connection(&server, &id), None);

    // The undo is in the history, and undoing it brings the agent's connection back as it was.
    let entries = history::recent(&server.journal.db, 10).await.unwrap();
    assert_eq!(entries[0].reverted, Some(connected.id));
    assert_eq!(entries[0].actor, "owner");
    crate::cli::ok(root, &["graph", "revert", &entries[0].id.to_string()]);
    let back = connection(&server, &id).unwrap();
    assert_eq!(back.created_by, Some(Author::agent("Helper")));
    assert_eq!(back.kind.as_deref(), Some("mentions"));
}

#[tokio::test]
async fn an_agents_disconnect_is_undone_with_its_notes_from_the_app() {
    let server = TestServer::start().await;
    let (client, _) = agent(&server, "Helper", WriteMode::Force).await;
    let made = client
        .ok("connect", json!({"from": "Inbox.md", "to": "Ada Okafor"}))
        .await;
    let id = made["connection"]["id"].as_str().unwrap().to_string();
    client
        .ok("write_connection_note", json!({"id": id, "text": "Mine."}))
        .await;
    let kept = connection(&server, &id).unwrap();
    client.ok("disconnect", json!({"id": id})).await;
    assert_eq!(connection(&server, &id), None);

    let owner = owner_of(&server).await;
    let page = text(&get(&server, "/app/changes", Some(&owner.secret)).await);
    let removal = history::recent(&server.journal.db, 1).await.unwrap().remove(0);
    assert_eq!(removal.what(), "disconnected");
    let undo = format!("/app/graph-changes/{}/revert", removal.id);
    assert!(
        page.contains("Changes to the graph") && page.contains(&format!("/graph-changes/{}/revert\"", removal.id)),
        "{page}"
    );
    // A form without the page's token, or for a change there is not, changes nothing.
    let forged = post_form(
        &server,
        &undo,
        Some(&owner.secret),
        Some(&own_origin(&server)),
        "csrf=wrong",
    )
    .await;
    assert_eq!(forged.status, StatusCode::FORBIDDEN);
    let missing = submit(&server, &owner, "/app/graph-changes/99999/revert", "").await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND);
    assert_eq!(connection(&server, &id), None);

    let done = submit(&server, &owner, &undo, "").await;
    assert_eq!(done.status, StatusCode::SEE_OTHER);
    let location = done.header("location").unwrap();
    assert!(location.ends_with("/changes?notice=graph-reverted#graph"), "{location}");
    assert_eq!(connection(&server, &id), Some(kept));
    let page = text(&get(&server, "/app/changes?notice=graph-reverted", Some(&owner.secret)).await);
    assert!(page.contains("the connection is back as it was"), "{page}");
    // Once more is refused: the connection is no longer as that change left it.
    let again = submit(&server, &owner, &undo, "").await;
    assert_eq!(again.status, StatusCode::CONFLICT);
    assert!(text(&again).contains("Nothing was undone"), "{}", text(&again));
}

#[tokio::test]
async fn an_agents_graph_churn_stops_at_its_history_budget() {
    let dir = tempfile::tempdir().unwrap();
    journal::journal::demo::write(dir.path(), &demo_options()).unwrap();
    std::fs::write(dir.path().join("journal.toml"), "[notes]\nhistory_mib = 1\n").unwrap();
    let server = TestServer::start_in(dir).await;
    let (client, _) = agent(&server, "Churner", WriteMode::Force).await;
    let owner_made = client
        .ok("connect", json!({"from": "Inbox.md", "to": "Ada Okafor"}))
        .await;
    let id = owner_made["connection"]["id"].as_str().unwrap().to_string();
    let first = history::recent(&server.journal.db, 1).await.unwrap().remove(0);
    // Each note of 4,000 characters keeps about 8 KB (before and after): 1 MiB holds about 130.
    let mut refused = None;
    for n in 0..400 {
        let text = format!("{n:04} {}", "x".repeat(3990));
        let answer = client
            .call("write_connection_note", json!({"id": id, "text": text}))
            .await;
        if answer["isError"] == true {
            refused = Some((n, answer.to_string()));
            break;
        }
    }
    let (n, message) = refused.expect("the churn was refused before 400 notes");
    assert!(n > 50, "refused only at the budget, after {n}");
    assert!(
        message.contains("history that lets the owner undo your changes is full"),
        "{message}"
    );
    // The refused note was not written, and the first change is still there to undo.
    let note = &connection(&server, &id).unwrap().notes[0].text;
    assert!(note.starts_with(&format!("{:04} ", n - 1)), "{note}");
    assert!(history::get(&server.journal.db, first.id).await.unwrap().is_some());
}

/// What a process killed in the middle of accepting a graph proposal leaves (its change recorded
/// and written, not done, the proposal pending) is undone at the next open; the proposal then
/// applies once.
#[tokio::test]
async fn a_graph_accept_cut_short_is_undone_and_applies_once_later() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_path_buf();
    journal::journal::demo::write(&root, &demo_options()).unwrap();
    let proposal_id = {
        let server = TestServer::start_at(tempfile::tempdir().unwrap(), &root, Default::default()).await;
        let (client, connection_id) = agent(&server, "Proposer", WriteMode::Propose).await;
        let proposed = client
            .ok(
                "connect",
                json!({"from": "Inbox.md", "to": "Ada Okafor", "type": "mentions"}),
            )
            .await;
        let proposal_id = proposed["proposal_id"].as_i64().unwrap();
        let origin = Origin {
            connection_id: Some(connection_id),
            label: "Proposer".into(),
            proposal_id: Some(proposal_id),
        };
        let change = gate::GraphChange::Connect {
            from: "note:Inbox.md".into(),
            to: "entity:ada-okafor".into(),
            kind: Some("mentions".into()),
        };
        let (pool, graph_root) = (server.journal.db.clone(), root.clone());
        let handle = tokio::runtime::Handle::current();
        tokio::task::spawn_blocking(move || {
            store::update(&graph_root, |graph| {
                let made = change
                    .apply(graph, &Author::agent("Proposer"), "2026-12-05T10:00:00Z")
                    .unwrap();
                let after = graph.get(&made.id).cloned();
                let entry = NewEntry {
                    actor: &Author::agent("Proposer"),
                    origin: &origin,
                    tool: "connect",
                    reverted: None,
                    connection: &made.id,
                    before: None,
                    after: after.as_ref(),
                };
                handle.block_on(history::record(&pool, &entry, i64::MAX)).unwrap();
                Ok::<_, store::GraphFileError>(())
            })
        })
        .await
        .unwrap()
        .unwrap();
        assert_eq!(store::load(server.root()).unwrap().len(), 1);
        proposal_id
    };
    // The next open (any command) undoes it.
    let listed = crate::cli::ok(&root, &["proposals", "list"]);
    assert!(listed.contains("pending"), "{listed}");
    assert_eq!(store::load(&root).unwrap().len(), 0);
    assert!(crate::cli::ok(&root, &["graph", "history"]).contains("no changes to the graph"));
    crate::cli::ok(&root, &["proposals", "accept", &proposal_id.to_string()]);
    assert_eq!(store::load(&root).unwrap().len(), 1);
    let again = crate::cli::fails(&root, &["proposals", "accept", &proposal_id.to_string()]);
    assert!(again.contains("already accepted"), "{again}");
    assert_eq!(store::load(&root).unwrap().len(), 1);
    let opened = journal::journal::Journal::open(&root).await.unwrap();
    let decided = proposals::get(&opened.db, proposal_id).await.unwrap().unwrap();
    assert_eq!(decided.status, proposals::Status::Accepted);
    let entries = history::recent(&opened.db, 5).await.unwrap();
    assert_eq!(entries.len(), 1);
    assert_eq!(entries[0].proposal_id, Some(proposal_id));
}
