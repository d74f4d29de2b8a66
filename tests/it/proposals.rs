//! Propose mode and the owner's review, and the history that undoes any agent change: a proposal
//! changes nothing until accepted; accepting makes the change by every rule of a write and never
//! over a note changed since (unless the owner accepts onto the current note); the agent learns
//! each outcome; every agent change keeps the previous version, and the owner's undo is kept too.

use serde_json::json;

use crate::harness::{Client, TestServer};
use journal::auth::{WriteMode, connections};
use journal::journal::demo_notes;
use journal::journal::notes::changes::{self, ChangeError};
use journal::journal::notes::history;
use journal::journal::notes::write::WriteError;
use journal::journal::proposals::{self, Status};
use journal::review::{self, Onto, ReviewError};

async fn writer(server: &TestServer, label: &str, mode: WriteMode) -> (Client, String) {
    server.writer(label, mode).await
}

fn file(server: &TestServer, path: &str) -> String {
    std::fs::read_to_string(server.root().join("notes").join(path)).unwrap()
}

fn put(server: &TestServer, path: &str, text: &str) {
    std::fs::write(server.root().join("notes").join(path), text).unwrap();
}

fn sha256(text: &str) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Accepts an agent's proposal (made as the connection that proposed it, by its grant today).
async fn accept(server: &TestServer, proposal: &serde_json::Value) -> Result<String, ReviewError> {
    let id = proposal["proposal_id"].as_i64().unwrap();
    review::accept(&server.journal, id, Onto::Proposed)
        .await
        .map(|accepted| accepted.hash.unwrap_or_default())
}

#[tokio::test]
async fn a_proposal_changes_nothing_until_accepted_and_the_agent_learns_each_outcome() {
    let server = TestServer::start().await;
    let (client, _) = writer(&server, "Proposer", WriteMode::Propose).await;
    let inbox = file(&server, "Inbox.md");

    let appended = client
        .ok("note_append", json!({"path": "Inbox.md", "text": "- call the framer"}))
        .await;
    assert_eq!(appended["status"], "proposed");
    assert_eq!(appended["hash"], sha256(&inbox), "the note's hash now, unchanged");
    let created = client
        .ok("note_create", json!({"path": "Ideas/kiln.md", "content": "# Kiln\n"}))
        .await;
    assert_eq!(created["status"], "proposed");
    assert!(created.get("hash").is_none(), "no note there yet: {created}");
    assert_eq!(file(&server, "Inbox.md"), inbox);
    assert!(!server.root().join("notes/Ideas/kiln.md").exists());
    let read = client.ok("note_read", json!({"path": "Inbox.md"})).await;
    let body = read["body"].as_str().expect("note_read answers the body");
    assert!(
        !body.is_empty() && inbox.ends_with(body),
        "the body of the file as it is: {read}"
    );
    assert!(!body.contains("framer"), "a proposal changes nothing: {body}");

    // The proposal keeps who, what, the note's hash then and the diff.
    let stored = proposals::get(&server.journal.db, appended["proposal_id"].as_i64().unwrap())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (stored.label.as_str(), stored.tool.as_str()),
        ("Proposer", "note_append")
    );
    assert_eq!(stored.base_hash.as_deref(), Some(sha256(&inbox).as_str()));
    assert!(
        stored.diff.starts_with("--- a/Inbox.md\n+++ b/Inbox.md\n"),
        "{}",
        stored.diff
    );
    assert!(stored.diff.contains("+- call the framer"), "{}", stored.diff);
    assert!(stored.arguments.contains("call the framer"));
    assert_eq!(proposals::pending_count(&server.journal.db).await.unwrap(), 2);

    let mine = client.ok("my_proposals", json!({"status": "pending"})).await;
    assert_eq!(mine["proposals"].as_array().unwrap().len(), 2, "{mine}");
    assert_eq!(
        mine["proposals"][0]["proposal_id"], created["proposal_id"],
        "newest first"
    );

    // Accepted: the change is made, as the agent, and kept in the history.
    let hash = accept(&server, &appended).await.unwrap();
    assert!(file(&server, "Inbox.md").contains("- call the framer"));
    assert_eq!(hash, sha256(&file(&server, "Inbox.md")));
    let hits = client.ok("search", json!({"query": "framer"})).await;
    assert!(hits["results"].to_string().contains("Inbox.md"), "{hits}");
    let versions = history::of_path(&server.journal.db, "Inbox.md", 10).await.unwrap();
    assert_eq!(versions.len(), 1);
    assert_eq!(versions[0].proposal_id, appended["proposal_id"].as_i64());
    assert_eq!(versions[0].actor, "agent:proposer");

    // Rejected, with a reason for the agent: nothing is made.
    let kiln = created["proposal_id"].as_i64().unwrap();
    // A reason longer than the owner may give is refused, and the proposal still waits.
    assert!(matches!(
        review::reject(&server.journal, kiln, &"x".repeat(review::MAX_REASON_CHARS + 1)).await,
        Err(ReviewError::ReasonTooLong)
    ));
    let waiting = proposals::get(&server.journal.db, kiln).await.unwrap().unwrap();
    assert_eq!((waiting.status, waiting.kind), (Status::Pending, proposals::Kind::Note));
    review::reject(&server.journal, kiln, "not this week").await.unwrap();
    assert!(!server.root().join("notes/Ideas/kiln.md").exists());
    let decided = client.ok("my_proposals", json!({})).await;
    let listed = decided["proposals"].as_array().unwrap();
    assert_eq!(listed[0]["status"], "rejected");
    assert_eq!(listed[0]["reason"], "not this week");
    assert_eq!(listed[1]["status"], "accepted");
    assert_eq!(listed[1]["hash"], hash);
    let pending = client.ok("my_proposals", json!({"status": "pending"})).await;
    assert!(pending["proposals"].as_array().unwrap().is_empty());
    assert!(pending["note"].as_str().unwrap().contains("complete"));

    // A decision is final.
    assert!(matches!(
        accept(&server, &created).await,
        Err(ReviewError::Decided { status: "rejected", .. })
    ));
    assert!(matches!(
        review::reject(&server.journal, appended["proposal_id"].as_i64().unwrap(), "").await,
        Err(ReviewError::Decided { status: "accepted", .. })
    ));
    assert!(matches!(
        review::reject(&server.journal, 9999, "").await,
        Err(ReviewError::NotFound(_))
    ));
}

#[tokio::test]
async fn my_proposals_pages_and_sees_only_the_callers_own() {
    let server = TestServer::start().await;
    let (one, _) = writer(&server, "One", WriteMode::Propose).await;
    let (two, _) = writer(&server, "Two", WriteMode::Propose).await;
    for n in 0..3 {
        one.ok("note_append", json!({"path": "Inbox.md", "text": format!("one {n}")}))
            .await;
    }
    two.ok("note_append", json!({"path": "Inbox.md", "text": "two"})).await;
    let first = one.ok("my_proposals", json!({"limit": 2})).await;
    assert_eq!(first["proposals"].as_array().unwrap().len(), 2);
    let rest = one
        .ok("my_proposals", json!({"limit": 2, "cursor": first["next_cursor"]}))
        .await;
    assert_eq!(rest["proposals"].as_array().unwrap().len(), 1);
    assert!(rest.get("next_cursor").is_none());
    let all = [
        first["proposals"].as_array().unwrap().clone(),
        rest["proposals"].as_array().unwrap().clone(),
    ]
    .concat();
    assert!(
        all.iter()
            .all(|p| p["path"] == "Inbox.md" && p["tool"] == "note_append")
    );
    let ids: std::collections::HashSet<_> = all.iter().map(|p| p["proposal_id"].as_i64().unwrap()).collect();
    assert_eq!(ids.len(), 3);
    // Another's cursor, or one for another filter, is refused.
    let refused = two
        .refused("my_proposals", json!({"limit": 2, "cursor": first["next_cursor"]}))
        .await;
    assert!(refused.contains("cursor"), "{refused}");
    let refused = one
        .refused(
            "my_proposals",
            json!({"status": "accepted", "cursor": first["next_cursor"]}),
        )
        .await;
    assert!(refused.contains("cursor"), "{refused}");
    let refused = one.refused("my_proposals", json!({"status": "maybe"})).await;
    assert!(refused.contains("invalid arguments"), "{refused}");
}

#[tokio::test]
async fn a_proposal_is_never_applied_over_a_note_changed_since() {
    let server = TestServer::start().await;
    let (client, _) = writer(&server, "Proposer", WriteMode::Propose).await;
    let proposed = client
        .ok("note_append", json!({"path": "Inbox.md", "text": "- from the agent"}))
        .await;
    let owner = format!("{}- the owner saved this meanwhile\n", file(&server, "Inbox.md"));
    put(&server, "Inbox.md", &owner);

    let stale = accept(&server, &proposed).await.unwrap_err();
    assert!(matches!(stale, ReviewError::Stale { .. }), "{stale}");
    assert_eq!(file(&server, "Inbox.md"), owner, "nothing applied blindly");
    let pid = proposed["proposal_id"].as_i64().unwrap();
    let stored = proposals::get(&server.journal.db, pid).await.unwrap().unwrap();
    assert_eq!(stored.status, Status::Pending);

    // The review shows the change against the note as it is now; accepting onto it keeps both.
    let preview = review::preview(&server.journal, &stored).await.unwrap();
    assert!(preview.stale);
    assert_eq!(preview.current_hash.as_deref(), Some(sha256(&owner).as_str()));
    let diff = preview.diff_now.unwrap();
    assert!(
        diff.contains(" - the owner saved this meanwhile") && diff.contains("+- from the agent"),
        "{diff}"
    );
    // Onto a hash the owner saw earlier than now: still refused.
    let old = sha256("an older look");
    assert!(matches!(
        review::accept(&server.journal, pid, Onto::Seen(&old)).await,
        Err(ReviewError::Stale { .. })
    ));
    review::accept(
        &server.journal,
        pid,
        preview.current_hash.as_deref().map_or(Onto::Proposed, Onto::Seen),
    )
    .await
    .unwrap();
    let text = file(&server, "Inbox.md");
    assert!(text.starts_with(&owner) && text.ends_with("- from the agent"), "{text}");

    // A new note proposed where the owner has since made one: the same conflict.
    let create = client
        .ok(
            "note_create",
            json!({"path": "Ideas/glaze.md", "content": "# Agent's\n"}),
        )
        .await;
    std::fs::create_dir_all(server.root().join("notes/Ideas")).unwrap();
    put(&server, "Ideas/glaze.md", "# Owner's\n");
    assert!(matches!(accept(&server, &create).await, Err(ReviewError::Stale { .. })));
    assert_eq!(file(&server, "Ideas/glaze.md"), "# Owner's\n");
}

#[tokio::test]
async fn proposals_keep_every_rule_when_made_and_again_when_accepted() {
    let server = TestServer::start().await;
    let (client, id) = writer(&server, "Proposer", WriteMode::Propose).await;
    let read_only = client
        .refused("note_append", json!({"path": demo_notes::READ_ONLY_NOTE, "text": "x"}))
        .await;
    assert!(read_only.contains("read-only"), "{read_only}");
    let private = client
        .refused("note_append", json!({"path": demo_notes::PRIVATE_NOTE, "text": "x"}))
        .await;
    let missing = client
        .refused("note_append", json!({"path": "Nowhere/absent.md", "text": "x"}))
        .await;
    assert_eq!(
        private.replace(demo_notes::PRIVATE_NOTE, "P"),
        missing.replace("Nowhere/absent.md", "P"),
        "a private note answers as a missing one"
    );
    let protected = client
        .refused(
            "note_set_properties",
            json!({"path": "Inbox.md", "properties": {"access": "read-only"}}),
        )
        .await;
    assert!(protected.contains("access"), "{protected}");
    let conflict = client
        .refused(
            "note_write",
            json!({"path": "Inbox.md", "body": "x", "expected_hash": sha256("stale")}),
        )
        .await;
    assert!(conflict.starts_with("conflict:"), "{conflict}");
    assert_eq!(
        proposals::pending_count(&server.journal.db).await.unwrap(),
        0,
        "nothing refused is staged"
    );

    // Made read-only after the proposal: accepting refuses, and the proposal still waits.
    let proposed = client
        .ok("note_append", json!({"path": "Inbox.md", "text": "- late"}))
        .await;
    let locked = format!("---\naccess: read-only\n---\n{}", file(&server, "Inbox.md"));
    put(&server, "Inbox.md", &locked);
    let refused = review::accept(
        &server.journal,
        proposed["proposal_id"].as_i64().unwrap(),
        Onto::Seen(&sha256(&locked)),
    )
    .await
    .unwrap_err();
    assert!(
        matches!(refused, ReviewError::Note(ChangeError::Write(WriteError::ReadOnly(_)))),
        "{refused}"
    );
    assert_eq!(file(&server, "Inbox.md"), locked);

    // The proposer removed: its proposals can be rejected, not accepted.
    put(&server, "Inbox.md", "# Inbox\n");
    let other = client
        .ok("note_append", json!({"path": "Inbox.md", "text": "- gone"}))
        .await;
    connections::revoke(&server.journal.db, &id).await.unwrap();
    let gone = accept(&server, &other).await.unwrap_err();
    assert!(gone.to_string().contains("was removed"), "{gone}");
    let stored = proposals::get(&server.journal.db, other["proposal_id"].as_i64().unwrap())
        .await
        .unwrap()
        .unwrap();
    assert!(matches!(
        review::preview(&server.journal, &stored).await,
        Err(ReviewError::Removed { .. })
    ));
    assert_eq!(file(&server, "Inbox.md"), "# Inbox\n");
    review::reject(&server.journal, other["proposal_id"].as_i64().unwrap(), "")
        .await
        .unwrap();
}

#[tokio::test]
async fn every_agent_change_keeps_the_version_before_and_the_owner_undoes_any_of_them() {
    let server = TestServer::start().await;
    let (client, _) = writer(&server, "Force Writer", WriteMode::Force).await;
    client
        .ok("note_create", json!({"path": "Ideas/log.md", "content": "# Log\n"}))
        .await;
    client
        .ok("note_append", json!({"path": "Ideas/log.md", "text": "one"}))
        .await;
    client
        .ok("note_write", json!({"path": "Ideas/log.md", "body": "# Rewritten\n"}))
        .await;
    assert_eq!(file(&server, "Ideas/log.md"), "# Rewritten\n");
    let versions = history::of_path(&server.journal.db, "Ideas/log.md", 10).await.unwrap();
    let tools: Vec<&str> = versions.iter().map(|v| v.tool.as_str()).collect();
    assert_eq!(tools, ["note_write", "note_append", "note_create"], "newest first");
    assert!(versions.iter().all(|v| v.actor == "agent:force-writer"));
    assert_eq!(versions[2].before_hash, None, "the create kept no earlier file");

    // Undo the rewrite: back to the appended text. The undo is a version itself.
    let undone = changes::revert(&server.journal, versions[0].id, None).await.unwrap();
    assert_eq!(file(&server, "Ideas/log.md"), "# Log\none");
    assert_eq!(undone.hash, Some(sha256("# Log\none")));
    let read = client.ok("note_read", json!({"path": "Ideas/log.md"})).await;
    assert_eq!(read["hash"], sha256("# Log\none"), "reads see the undo at once");
    let latest = &history::of_path(&server.journal.db, "Ideas/log.md", 10).await.unwrap()[0];
    assert_eq!((latest.actor.as_str(), latest.tool.as_str()), ("owner", "revert"));
    assert_eq!(latest.reverted, Some(versions[0].id));

    // Undo the creation: the note goes; undo that undo: it is back.
    let removed = changes::revert(&server.journal, versions[2].id, None).await.unwrap();
    assert_eq!(removed.hash, None);
    assert!(!server.root().join("notes/Ideas/log.md").exists());
    let gone = client.refused("note_read", json!({"path": "Ideas/log.md"})).await;
    assert!(!gone.is_empty());
    let removal = history::of_path(&server.journal.db, "Ideas/log.md", 1).await.unwrap()[0].id;
    changes::revert(&server.journal, removal, None).await.unwrap();
    assert_eq!(file(&server, "Ideas/log.md"), "# Log\none");

    // An undo aimed at what the owner saw refuses when the note changed since.
    let stale = changes::revert(&server.journal, versions[1].id, Some(&sha256("not it")))
        .await
        .unwrap_err();
    assert!(
        matches!(stale, ChangeError::Write(WriteError::Conflict { .. })),
        "{stale}"
    );
    assert_eq!(file(&server, "Ideas/log.md"), "# Log\none");
    assert!(matches!(
        changes::revert(&server.journal, 99_999, None).await,
        Err(ChangeError::NotFound(_))
    ));
}

#[tokio::test]
async fn a_deletion_goes_to_the_trash_keeps_what_it_may_not_touch_and_comes_back() {
    let server = TestServer::start().await;
    let (client, _) = writer(&server, "Deleter", WriteMode::Force).await;
    let inbox = file(&server, "Inbox.md");
    let unconfirmed = client
        .refused("note_delete", json!({"path": "Inbox.md", "confirm": false}))
        .await;
    assert!(unconfirmed.contains("confirm: true"), "{unconfirmed}");
    let deleted = client
        .ok("note_delete", json!({"path": "Inbox.md", "confirm": true}))
        .await;
    assert_eq!(deleted["status"], "deleted");
    assert_eq!(deleted["notes"], json!(["Inbox.md"]));
    assert!(!server.root().join("notes/Inbox.md").exists());
    assert!(
        !client
            .refused("note_read", json!({"path": "Inbox.md"}))
            .await
            .is_empty()
    );
    let trash = history::deletions(&server.journal.db, 10).await.unwrap();
    assert_eq!(trash.len(), 1);
    changes::restore(&server.journal, trash[0].0).await.unwrap();
    assert_eq!(file(&server, "Inbox.md"), inbox, "back, byte for byte");

    // A folder: the notes the agent may change go; a private note and other files stay, and the
    // folders left empty go too.
    let notes = server.root().join("notes");
    std::fs::create_dir_all(notes.join("Old/sub")).unwrap();
    put(&server, "Old/a.md", "# A\n");
    put(&server, "Old/sub/b.md", "# B\n");
    put(&server, "Old/secret.md", "---\naccess: private\n---\nhidden\n");
    std::fs::write(notes.join("Old/photo.png"), b"png").unwrap();
    let folder = client.ok("note_delete", json!({"path": "Old", "confirm": true})).await;
    assert_eq!(folder["notes"], json!(["Old/a.md", "Old/sub/b.md"]), "{folder}");
    assert!(!notes.join("Old/a.md").exists() && !notes.join("Old/sub").exists());
    assert!(notes.join("Old/secret.md").exists() && notes.join("Old/photo.png").exists());
    // Taken again: the restore refuses and restores nothing.
    put(&server, "Old/a.md", "# A new one\n");
    let id = history::deletions(&server.journal.db, 1).await.unwrap()[0].0;
    let taken = changes::restore(&server.journal, id).await.unwrap_err();
    assert!(taken.to_string().contains("Old/a.md is taken again"), "{taken}");
    assert!(!notes.join("Old/sub/b.md").exists(), "all or nothing");
    std::fs::remove_file(notes.join("Old/a.md")).unwrap();
    changes::restore(&server.journal, id).await.unwrap();
    assert_eq!(file(&server, "Old/sub/b.md"), "# B\n");
    assert!(matches!(
        changes::restore(&server.journal, 99_999).await,
        Err(ChangeError::NotFound(_))
    ));

    // A read-only note refuses, alone or in a folder; a private one answers as missing.
    let locked = client
        .refused(
            "note_delete",
            json!({"path": demo_notes::READ_ONLY_NOTE, "confirm": true}),
        )
        .await;
    assert!(locked.contains("read-only"), "{locked}");
    let folder_of_locked = demo_notes::READ_ONLY_NOTE.rsplit_once('/').unwrap().0;
    let refused = client
        .refused(
            "note_delete",
            json!({"path": format!("{folder_of_locked}/"), "confirm": true}),
        )
        .await;
    assert!(refused.contains("read-only"), "{refused}");
    assert!(server.root().join("notes").join(demo_notes::READ_ONLY_NOTE).exists());
    let private = client
        .refused(
            "note_delete",
            json!({"path": demo_notes::PRIVATE_NOTE, "confirm": true}),
        )
        .await;
    let missing = client
        .refused("note_delete", json!({"path": "Nowhere/absent.md", "confirm": true}))
        .await;
    assert_eq!(
        private.replace(demo_notes::PRIVATE_NOTE, "P"),
        missing.replace("Nowhere/absent.md", "P")
    );
    // A folder of notes the agent may not see answers as a folder that is not there.
    std::fs::create_dir_all(notes.join("Hush")).unwrap();
    put(&server, "Hush/secret.md", "---\naccess: private\n---\nhidden\n");
    let only_hidden = client
        .refused("note_delete", json!({"path": "Hush/", "confirm": true}))
        .await;
    let no_folder = client
        .refused("note_delete", json!({"path": "Gone/", "confirm": true}))
        .await;
    assert_eq!(only_hidden.replace("Hush", "F"), no_folder.replace("Gone", "F"));
    assert!(notes.join("Hush/secret.md").exists());
    for whole in ["/", "./"] {
        let refused = client
            .refused("note_delete", json!({"path": whole, "confirm": true}))
            .await;
        assert!(refused.contains("whole notes folder"), "{refused}");
    }
}

#[tokio::test]
async fn a_proposed_folder_deletion_notices_a_change_to_any_of_its_notes() {
    let server = TestServer::start().await;
    let (client, _) = writer(&server, "Proposer", WriteMode::Propose).await;
    let notes = server.root().join("notes");
    std::fs::create_dir_all(notes.join("Drafts")).unwrap();
    put(&server, "Drafts/one.md", "# One\n");
    put(&server, "Drafts/two.md", "# Two\n");
    put(&server, "Drafts/hidden.md", "---\naccess: private\n---\nx\n");
    let proposed = client
        .ok("note_delete", json!({"path": "Drafts/", "confirm": true}))
        .await;
    assert_eq!(proposed["status"], "proposed");
    assert_eq!(proposed["notes"], json!(["Drafts/one.md", "Drafts/two.md"]));
    assert!(notes.join("Drafts/one.md").exists());
    let stored = proposals::get(&server.journal.db, proposed["proposal_id"].as_i64().unwrap())
        .await
        .unwrap()
        .unwrap();
    assert!(stored.diff.contains("--- a/Drafts/one.md\n+++ /dev/null") && !stored.diff.contains("hidden"));
    put(&server, "Drafts/two.md", "# Two, edited\n");
    assert!(matches!(
        accept(&server, &proposed).await,
        Err(ReviewError::Stale { .. })
    ));
    assert!(notes.join("Drafts/two.md").exists());
    let preview = review::preview(&server.journal, &stored).await.unwrap();
    review::accept(
        &server.journal,
        stored.id,
        preview.current_hash.as_deref().map_or(Onto::Proposed, Onto::Seen),
    )
    .await
    .unwrap();
    assert!(!notes.join("Drafts/one.md").exists() && !notes.join("Drafts/two.md").exists());
    assert!(
        notes.join("Drafts/hidden.md").exists(),
        "what the agent may not see stays"
    );
}

#[tokio::test]
async fn a_folder_move_keeps_links_is_proposed_accepted_and_undone_whole() {
    let server = TestServer::start().await;
    let notes = server.root().join("notes");
    std::fs::create_dir_all(notes.join("Garden/beds")).unwrap();
    put(
        &server,
        "Garden/plan.md",
        "---\nid: garden-plan\n---\n# Plan\nBeds: [[tomatoes]], [photo](beds/p%201.png)\n",
    );
    put(
        &server,
        "Garden/beds/tomatoes.md",
        "# Tomatoes\nBack to [the plan](../plan.md).\n",
    );
    put(&server, "Garden/beds/secret.md", "---\naccess: private\n---\nhidden\n");
    std::fs::write(notes.join("Garden/beds/p 1.png"), b"png").unwrap();
    put(
        &server,
        "Links.md",
        "See [[Garden/plan|the plan]] and [beds](Garden/beds/tomatoes.md#Sowing).\n",
    );
    server.journal.sync().await.unwrap();
    let links_before = file(&server, "Links.md");
    // Connections in the graph name the notes by path; they follow the notes.
    let graph = server.root().join("graph.jsonl");
    let graph_before = "{\"id\":\"c-aaaaaaaaaa\",\"from\":\"note:Garden/plan.md\",\"to\":\"entity:e-1\",\"created_at\":\"2026-12-04T18:00:00Z\"}\n\
                        {\"id\":\"c-bbbbbbbbbb\",\"from\":\"note:Garden/beds/tomatoes.md\",\"to\":\"note:Garden/plan.md\",\"created_at\":\"2026-12-04T18:00:00Z\"}\n";
    std::fs::write(&graph, graph_before).unwrap();

    // Proposed: nothing moves; the owner accepts, and the move is made as the agent's.
    let (proposer, _) = writer(&server, "suggester", WriteMode::Propose).await;
    let proposed = proposer
        .ok("note_move", json!({"from": "Garden/", "to": "Archive/Garden 2026"}))
        .await;
    assert_eq!(proposed["status"], "proposed", "{proposed}");
    assert_eq!(
        proposed["notes"],
        json!(["Archive/Garden 2026/beds/tomatoes.md", "Archive/Garden 2026/plan.md"])
    );
    assert_eq!(proposed["links_updated"], json!(["Links.md"]));
    assert!(notes.join("Garden/plan.md").exists());
    let stored = proposals::get(&server.journal.db, proposed["proposal_id"].as_i64().unwrap())
        .await
        .unwrap()
        .unwrap();
    assert!(
        stored
            .diff
            .contains("rename from Garden/plan.md\nrename to Archive/Garden 2026/plan.md"),
        "{}",
        stored.diff
    );
    accept(&server, &proposed).await.unwrap();

    // The notes moved with their bytes (their ids), links between them hold, the link to the file
    // left behind and the links from elsewhere follow; the private note and the image stay.
    let plan = file(&server, "Archive/Garden 2026/plan.md");
    assert!(plan.starts_with("---\nid: garden-plan\n---\n"), "{plan}");
    assert!(
        plan.contains("[[tomatoes]], [photo](../../Garden/beds/p%201.png)"),
        "{plan}"
    );
    assert_eq!(
        file(&server, "Archive/Garden 2026/beds/tomatoes.md"),
        "# Tomatoes\nBack to [the plan](../plan.md).\n"
    );
    assert_eq!(
        file(&server, "Links.md"),
        "See [[plan|the plan]] and [beds](Archive/Garden%202026/beds/tomatoes.md#Sowing).\n"
    );
    assert!(notes.join("Garden/beds/secret.md").exists() && notes.join("Garden/beds/p 1.png").exists());
    assert!(!notes.join("Garden/plan.md").exists());
    assert_eq!(
        std::fs::read_to_string(&graph).unwrap(),
        graph_before.replace("note:Garden/", "note:Archive/Garden 2026/"),
        "the connections follow the moved notes"
    );
    let (reader_client, _) = writer(&server, "reader", WriteMode::None).await;
    let read = reader_client
        .ok("note_read", json!({"path": "Archive/Garden 2026/plan.md"}))
        .await;
    assert_eq!(read["id"], "garden-plan", "the server sees the move: {read}");

    // The undo of any of its versions undoes the whole move, links included; the undo of the undo
    // moves it again.
    let versions = history::of_path(&server.journal.db, "Links.md", 1).await.unwrap();
    assert_eq!(versions[0].tool, "note_move");
    changes::revert(&server.journal, versions[0].id, None).await.unwrap();
    assert_eq!(file(&server, "Links.md"), links_before);
    assert!(notes.join("Garden/plan.md").exists() && notes.join("Garden/beds/tomatoes.md").exists());
    assert!(!notes.join("Archive/Garden 2026/plan.md").exists());
    assert_eq!(
        std::fs::read_to_string(&graph).unwrap(),
        graph_before,
        "and come back with the undo"
    );
    let undo = history::of_path(&server.journal.db, "Garden/plan.md", 1).await.unwrap();
    assert_eq!(undo[0].tool, "revert");
    changes::revert(&server.journal, undo[0].id, None).await.unwrap();
    assert!(notes.join("Archive/Garden 2026/plan.md").exists() && !notes.join("Garden/plan.md").exists());

    // Never undone over an owner's edit made since: refused, nothing changed.
    let edited = format!("{}\nthe owner's line\n", file(&server, "Links.md"));
    put(&server, "Links.md", &edited);
    let redo = history::of_path(&server.journal.db, "Links.md", 1).await.unwrap();
    let refused = changes::revert(&server.journal, redo[0].id, None).await.unwrap_err();
    assert!(
        refused.to_string().contains("Links.md changed since the move"),
        "{refused}"
    );
    assert_eq!(file(&server, "Links.md"), edited);
    assert!(notes.join("Archive/Garden 2026/plan.md").exists());
}

#[tokio::test]
async fn a_move_refuses_overwrites_hidden_notes_in_the_way_and_kind_changes() {
    let server = TestServer::start().await;
    let (client, _) = writer(&server, "mover", WriteMode::Force).await;
    put(&server, "Notes A.md", "a\n");
    put(&server, "Hidden.md", "---\naccess: private\n---\nx\n");
    server.journal.sync().await.unwrap();
    let before = file(&server, "Notes A.md");
    let cases = [
        (json!({"from": "Notes A.md", "to": "Inbox.md"}), "already exists"),
        (json!({"from": "Notes A.md", "to": "Notes A.md"}), "already there"),
        (json!({"from": "Notes A.md", "to": "Notes A.html"}), "not a note"),
        (json!({"from": "Notes A.md", "to": "../outside.md"}), "path"),
        (json!({"from": "Projects/", "to": "Projects/Deeper"}), "into itself"),
        (json!({"from": "Projects/", "to": "Elsewhere.md"}), "moves to a folder"),
        (json!({"from": "Hidden.md", "to": "Shown.md"}), "there is no note at"),
        (json!({"from": demo_notes::READ_ONLY_NOTE, "to": "log.md"}), "read-only"),
    ];
    for (arguments, expected) in cases {
        let message = client.refused("note_move", arguments.clone()).await;
        assert!(message.contains(expected), "{arguments}: {message}");
    }
    let onto_hidden = client
        .refused("note_move", json!({"from": "Notes A.md", "to": "Hidden.md"}))
        .await;
    let onto_quarantine = client
        .refused("note_move", json!({"from": "Notes A.md", "to": ".obsidian/a.md"}))
        .await;
    assert_eq!(
        onto_hidden.replace("Hidden.md", "P"),
        onto_quarantine.replace(".obsidian/a.md", "P")
    );
    assert_eq!(file(&server, "Notes A.md"), before);
    assert_eq!(file(&server, "Hidden.md"), "---\naccess: private\n---\nx\n");
    // Into a folder by its path ending in /.
    let moved = client
        .ok("note_move", json!({"from": "Notes A.md", "to": "Filed/"}))
        .await;
    assert_eq!(moved["path"], "Filed/Notes A.md", "{moved}");
    assert_eq!(moved["hash"], sha256(&before));
    assert_eq!(file(&server, "Filed/Notes A.md"), before);
}
