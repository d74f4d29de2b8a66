//! Agent writes over MCP in force mode: which connections are offered the write tools, each tool's
//! change on disk and in reads and search at once, and every refusal: read-only, private and
//! quarantined notes, collisions, conflicts, protected keys, ambiguous edits, and a grant narrowed
//! mid-session. Nothing refused changes a byte.

use serde_json::json;

use crate::harness::{Client, TestServer};
use journal::auth::WriteMode;
use journal::journal::demo_notes;

const WRITE_TOOLS: [&str; 5] = [
    "note_create",
    "note_write",
    "note_append",
    "note_edit_section",
    "note_set_properties",
];

async fn writer(server: &TestServer, label: &str, mode: WriteMode) -> (Client, String) {
    server.writer(label, mode).await
}

async fn set_mode(server: &TestServer, id: &str, mode: WriteMode) {
    server.set_write_mode(id, mode).await;
}

fn file(server: &TestServer, path: &str) -> String {
    std::fs::read_to_string(server.root().join("notes").join(path)).unwrap()
}

fn sha256(text: &str) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[tokio::test]
async fn a_grant_with_a_write_mode_is_offered_the_write_tools_and_a_narrowed_one_loses_them_at_once() {
    let server = TestServer::start().await;
    let (client, _) = writer(&server, "reader-none", WriteMode::None).await;
    let names = client.tool_names().await;
    assert!(
        WRITE_TOOLS
            .iter()
            .chain(&["my_proposals"])
            .all(|t| !names.contains(&t.to_string())),
        "{names:?}"
    );
    let refused = client
        .refused("note_create", json!({"path": "x.md", "content": "x"}))
        .await;
    assert!(!refused.is_empty());
    assert!(!server.root().join("notes/x.md").exists());
    // Propose mode is offered the same tools; its note_create stages a proposal and writes nothing.
    let (client, _) = writer(&server, "reader-propose", WriteMode::Propose).await;
    let names = client.tool_names().await;
    assert!(
        WRITE_TOOLS
            .iter()
            .chain(&["my_proposals"])
            .all(|t| names.contains(&t.to_string())),
        "{names:?}"
    );
    let proposed = client.ok("note_create", json!({"path": "x.md", "content": "x"})).await;
    assert_eq!(proposed["status"], "proposed");
    assert!(!server.root().join("notes/x.md").exists());
    let (client, id) = writer(&server, "writer", WriteMode::Force).await;
    let names = client.tool_names().await;
    assert!(WRITE_TOOLS.iter().all(|t| names.contains(&t.to_string())), "{names:?}");
    let create = client.tool("note_create").await;
    assert_eq!(create["annotations"]["readOnlyHint"], false);
    assert_eq!(client.tool("note_write").await["annotations"]["destructiveHint"], true);

    set_mode(&server, &id, WriteMode::None).await;
    let refused = client
        .refused("note_append", json!({"path": "Inbox.md", "text": "late"}))
        .await;
    assert!(!refused.is_empty());
    assert!(
        !file(&server, "Inbox.md").contains("late"),
        "the narrowed grant applies to the next call"
    );

    // Every write call is audited with its note, the mode it was made in and its outcome.
    let entries = journal::auth::audit::recent(&server.journal.db, 50, None)
        .await
        .unwrap();
    let appended = &entries[0];
    assert_eq!(
        (appended.tool.as_str(), appended.outcome.as_str()),
        ("note_append", "refused")
    );
    let change = appended.change.clone().expect("a write call records its note");
    assert_eq!((change.path.as_str(), change.write_mode.as_str()), ("Inbox.md", "none"));
    let proposed = entries
        .iter()
        .find(|e| e.connection_label == "reader-propose" && e.tool == "note_create")
        .unwrap();
    assert_eq!(proposed.change.as_ref().unwrap().write_mode, "propose");
    assert_eq!(proposed.change.as_ref().unwrap().path, "x.md");
    assert!(
        entries
            .iter()
            .filter(|e| !e.tool.starts_with("note_"))
            .all(|e| e.change.is_none()),
        "reads are not changes"
    );
}

#[tokio::test]
async fn each_write_tool_changes_the_note_and_reads_and_search_see_it_at_once() {
    let server = TestServer::start().await;
    let (client, _) = writer(&server, "writer", WriteMode::Force).await;

    let content =
        "---\ntags: [draft]\nstatus: new\n---\n# Kestrel plan\n\n## Steps\n\nFirst.\n\n## Risks\n\nNone yet.\n";
    let made = client
        .ok("note_create", json!({"path": "Projects/kestrel", "content": content}))
        .await;
    assert_eq!(made["status"], "written");
    assert_eq!(made["path"], "Projects/kestrel.md");
    assert_eq!(made["hash"], sha256(content));
    assert_eq!(file(&server, "Projects/kestrel.md"), content);
    let read = client.ok("note_read", json!({"path": "Projects/kestrel.md"})).await;
    assert_eq!(read["title"], "Kestrel plan");
    assert_eq!(read["hash"], made["hash"]);
    let hits = client.ok("search", json!({"query": "kestrel"})).await;
    assert!(hits["results"].to_string().contains("Projects/kestrel.md"), "{hits}");

    let appended = client
        .ok(
            "note_append",
            json!({"path": "Projects/kestrel.md", "text": "Appended line."}),
        )
        .await;
    assert!(file(&server, "Projects/kestrel.md").ends_with("None yet.\nAppended line."));
    assert_eq!(appended["hash"], sha256(&file(&server, "Projects/kestrel.md")));

    let edited = client
        .ok(
            "note_edit_section",
            json!({"path": "Projects/kestrel.md", "heading": "## Steps", "op": "append_within",
                   "content": "Second.\n", "expected_hash": appended["hash"]}),
        )
        .await;
    assert!(file(&server, "Projects/kestrel.md").contains("First.\n\nSecond.\n## Risks"));

    let set = client
        .ok(
            "note_set_properties",
            json!({"path": "Projects/kestrel.md", "properties": {"status": "active", "tags": null}}),
        )
        .await;
    let text = file(&server, "Projects/kestrel.md");
    assert!(text.starts_with("---\nstatus: active\n---\n# Kestrel plan"), "{text}");
    assert_ne!(set["hash"], edited["hash"]);
    let queried = client
        .ok(
            "base_query",
            json!({"dsl": "from notes\nwhere status is \"active\"\ncolumns __path"}),
        )
        .await;
    assert!(queried.to_string().contains("Projects/kestrel.md"), "{queried}");

    let rewritten = client
        .ok(
            "note_write",
            json!({"path": "Projects/kestrel.md", "body": "# Kestrel\n\nShort now.\n",
                   "frontmatter_patch": {"owner": "me"}, "expected_hash": set["hash"]}),
        )
        .await;
    assert_eq!(
        file(&server, "Projects/kestrel.md"),
        "---\nstatus: active\nowner: me\n---\n# Kestrel\n\nShort now.\n"
    );
    assert_eq!(rewritten["hash"], sha256(&file(&server, "Projects/kestrel.md")));
}

#[tokio::test]
async fn refused_writes_say_why_and_change_nothing() {
    let server = TestServer::start().await;
    let (client, _) = writer(&server, "writer", WriteMode::Force).await;
    let notes = server.root().join("notes");
    let before: Vec<(String, String)> = [demo_notes::READ_ONLY_NOTE, demo_notes::PRIVATE_NOTE, "Inbox.md"]
        .iter()
        .map(|p| (p.to_string(), file(&server, p)))
        .collect();

    let locked = client
        .refused("note_append", json!({"path": demo_notes::READ_ONLY_NOTE, "text": "x"}))
        .await;
    assert!(locked.contains("read-only"), "{locked}");

    let hidden = client
        .refused("note_append", json!({"path": demo_notes::PRIVATE_NOTE, "text": "x"}))
        .await;
    let absent = client
        .refused("note_append", json!({"path": "Areas/absent.md", "text": "x"}))
        .await;
    assert_eq!(
        hidden.replace(demo_notes::PRIVATE_NOTE, "P"),
        absent.replace("Areas/absent.md", "P"),
        "private answers as missing"
    );

    let onto_private = client
        .refused("note_create", json!({"path": demo_notes::PRIVATE_NOTE, "content": "x"}))
        .await;
    let quarantined = client
        .refused("note_create", json!({"path": "_private/new.md", "content": "x"}))
        .await;
    assert_eq!(
        onto_private.replace(demo_notes::PRIVATE_NOTE, "P"),
        quarantined.replace("_private/new.md", "P"),
        "a private note's path answers like any path that cannot be written"
    );
    let taken = client
        .refused("note_create", json!({"path": "Inbox.md", "content": "x"}))
        .await;
    assert!(taken.contains("already exists"), "{taken}");

    let stale = sha256("not the note");
    let conflict = client
        .refused(
            "note_write",
            json!({"path": "Inbox.md", "body": "x", "expected_hash": stale}),
        )
        .await;
    assert!(conflict.starts_with("conflict:"), "{conflict}");
    assert!(
        conflict.contains(&sha256(&file(&server, "Inbox.md"))),
        "the current hash: {conflict}"
    );

    for (tool, arguments, expected) in [
        (
            "note_set_properties",
            json!({"path": "Inbox.md", "properties": {"access": "private"}}),
            "access",
        ),
        (
            "note_write",
            json!({"path": "Inbox.md", "frontmatter_patch": {"agent_overrides": null}}),
            "agent_overrides",
        ),
        (
            "note_create",
            json!({"path": "new.md", "content": "---\naccess: read-only\n---\n"}),
            "access",
        ),
        (
            "note_write",
            json!({"path": "Inbox.md"}),
            "body, frontmatter_patch or both",
        ),
        (
            "note_edit_section",
            json!({"path": "Inbox.md", "anchor": "zzz-not-there", "op": "replace", "content": ""}),
            "does not occur",
        ),
        (
            "note_edit_section",
            json!({"path": "Inbox.md", "op": "replace", "content": ""}),
            "either anchor or heading",
        ),
        (
            "note_edit_section",
            json!({"path": "Inbox.md", "anchor": "a", "op": "rewrite", "content": ""}),
            "unknown variant",
        ),
        (
            "note_write",
            json!({"path": "Inbox.md", "body": "x", "expected_hash": "abc"}),
            "64 hex digits",
        ),
        ("note_create", json!({"path": "../escape.md", "content": "x"}), "path"),
        (
            "note_set_properties",
            json!({"path": "Inbox.md", "properties": {}}),
            "at least one key",
        ),
    ] {
        let refused = client.refused(tool, arguments.clone()).await;
        assert!(refused.contains(expected), "{tool} {arguments}: {refused}");
    }
    for (path, text) in &before {
        assert_eq!(&file(&server, path), text, "{path} unchanged");
    }
    assert!(!notes.join("new.md").exists() && !notes.join("_private/new.md").exists());
    assert!(!server.root().join("escape.md").exists());
}
