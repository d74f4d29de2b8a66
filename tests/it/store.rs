//! The store across restarts, hand edits and a lost index.

use serde_json::json;

use crate::harness::{Client, TestServer, eventually};

#[tokio::test]
async fn references_and_memories_survive_a_restart() {
    let server = TestServer::start().await;
    let key = server.key("r", &["transcripts"], None).await;
    let client = Client::connected(&server.url(), &key).await;
    let hits = client.ok("search", json!({"query": "lease"})).await;
    let reference = hits["results"][0]["reference"].clone();
    client
        .ok("save_memory", json!({"content": "kept", "operation_id": "keep-1"}))
        .await;

    let server = server.restart().await;
    let mut client = Client::new(&server.url(), Some(&key));
    client.session = Some("stale".into());
    assert_eq!(
        client
            .post(&json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}))
            .await
            .status,
        404
    );
    client.session = None;
    client.initialize("2025-11-25").await;
    let fetched = client.ok("fetch", json!({"reference": reference})).await;
    assert!(fetched["text"].as_str().unwrap().contains("lease"));
    let recalled = client.ok("recall_memory", json!({})).await;
    assert_eq!(recalled["memories"][0]["content"], "kept");
}

#[tokio::test]
async fn hand_written_files_are_found_without_a_restart() {
    let server = TestServer::start().await;
    let key = server.key("h", &["transcripts"], None).await;
    let client = Client::connected(&server.url(), &key).await;
    let empty = client.ok("search", json!({"query": "zanzibar"})).await;
    assert!(empty["results"].as_array().unwrap().is_empty());
    let dir = server.root().join("transcripts/2026-12-01");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("070000.md"),
        "---\nday: 2026-12-01\nstart: \"07:00:00\"\nduration_seconds: 10\ntitle: Trip plans\n---\n- 07:00:00 **Me:** book the ferry to Zanzibar\n",
    )
    .unwrap();
    let found = eventually(60, || async {
        !client.ok("search", json!({"query": "zanzibar"})).await["results"]
            .as_array()
            .unwrap()
            .is_empty()
    })
    .await;
    assert!(found, "the periodic sync indexes a new file");

    std::fs::write(
        dir.join("080000.md"),
        "---\nday: not a day\nstart: '08:00:00'\nduration_seconds: 0\n---\n",
    )
    .unwrap();
    std::fs::remove_file(dir.join("070000.md")).unwrap();
    let gone = eventually(60, || async {
        client.ok("search", json!({"query": "zanzibar"})).await["results"]
            .as_array()
            .unwrap()
            .is_empty()
    })
    .await;
    assert!(gone, "a deleted file leaves the index");
    // A sync commits the index before it writes the catalog rows (the next chunk overlaps them), so
    // the row may land a moment after the search changed.
    let db = &server.journal.db;
    let recorded = eventually(60, || async {
        let error: Option<Option<String>> =
            sqlx::query_scalar("SELECT error FROM items WHERE path = 'transcripts/2026-12-01/080000.md'")
                .fetch_optional(db)
                .await
                .unwrap();
        error.flatten().is_some_and(|error| error.contains("day"))
    })
    .await;
    assert!(recorded, "a broken file is recorded with its error");
}

#[tokio::test]
async fn a_deleted_index_is_rebuilt_from_the_files() {
    let server = TestServer::start().await;
    let key = server.key("i", &["transcripts"], None).await;
    let before = Client::connected(&server.url(), &key)
        .await
        .ok("search", json!({"query": "lease", "limit": 100}))
        .await;
    let dir = server.dir;
    drop(server.journal);
    std::fs::remove_dir_all(dir.path().join(".index")).unwrap();
    let server = crate::harness::TestServer::start_in(dir).await;
    let after = Client::connected(&server.url(), &key)
        .await
        .ok("search", json!({"query": "lease", "limit": 100}))
        .await;
    assert_eq!(
        before["results"].as_array().unwrap().len(),
        after["results"].as_array().unwrap().len()
    );
    assert!(!after["results"].as_array().unwrap().is_empty());
}

#[tokio::test]
async fn what_another_process_adds_shows_up_in_the_running_server() {
    let server = TestServer::start().await;
    let key = server.key("p", &["transcripts", "facets"], None).await;
    let client = Client::connected(&server.url(), &key).await;
    // A second handle on the same folder stands for the CLI run beside the server: it writes the
    // files, the catalog and the index itself, so the server's own sync sees nothing new to do.
    let cli = journal::journal::Journal::open(server.root()).await.unwrap();
    let new = journal::journal::content::NewFacet {
        name: "garden".into(),
        ..Default::default()
    };
    journal::journal::content::create_facet(&cli, new).await.unwrap();
    let file = server.dir.path().join("quokka.txt");
    std::fs::write(&file, "Me: the quokka exhibit opens in May\n").unwrap();
    let options = journal::journal::content::ImportOptions {
        day: journal::journal::day::Day::parse("2026-12-01").unwrap(),
        start: 0,
        facets: vec!["garden".into()],
    };
    journal::journal::content::import_transcripts(&cli, &[file], &options)
        .await
        .unwrap();

    let found = eventually(60, || async {
        // Every word required: by meaning a neighbour would answer before the reload.
        !client
            .ok("search", json!({"query": "quokka", "mode": "all_words"}))
            .await["results"]
            .as_array()
            .unwrap()
            .is_empty()
    })
    .await;
    assert!(found, "the server reloads the index another process committed to");
    let facets = client.ok("list_facets", json!({})).await;
    assert!(
        facets["facets"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["name"] == "garden"),
        "{facets}"
    );
}

#[tokio::test]
async fn a_facet_whose_name_differs_from_its_folder_is_left_out() {
    // The edit below is made in place (as many editors save), which only a full sync notices.
    let options = journal::server::Options {
        full_sync_every: 1,
        ..Default::default()
    };
    let server = TestServer::start_with(options).await;
    let key = server.key("f", &["facets"], None).await;
    let client = Client::connected(&server.url(), &key).await;
    let path = server.root().join("facets/health/facet.md");
    let text = std::fs::read_to_string(&path)
        .unwrap()
        .replace("name: health", "name: fitness");
    std::fs::write(&path, text).unwrap();
    let gone = eventually(60, || async {
        let facets = client.ok("list_facets", json!({})).await;
        facets["facets"].as_array().unwrap().len() == 3
    })
    .await;
    assert!(gone, "the renamed facet is refused, not guessed at");
    // The facets are read from their files at every sync, the catalog's row only by a full one,
    // which may come a pass later.
    let error = || async {
        sqlx::query_scalar::<_, Option<String>>("SELECT error FROM items WHERE path = 'facets/health/facet.md'")
            .fetch_one(&server.journal.db)
            .await
            .unwrap()
    };
    let said = eventually(60, || async { error().await.is_some() }).await;
    assert!(said, "the catalog says why the facet is left out");
    assert!(error().await.unwrap().contains("differs from its folder"));
}

#[cfg(unix)]
#[tokio::test]
async fn the_journal_is_private_to_its_owner() {
    use std::os::unix::fs::PermissionsExt;
    let server = TestServer::start().await;
    let key = server.key("m", &[], None).await;
    Client::connected(&server.url(), &key)
        .await
        .ok("save_memory", json!({"content": "x", "operation_id": "1"}))
        .await;
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&server.root().join("journal.db")), 0o600);
    let memory = std::fs::read_dir(server.root().join("memory"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    assert_eq!(mode(&memory), 0o700);
    let note = std::fs::read_dir(&memory).unwrap().next().unwrap().unwrap().path();
    assert_eq!(mode(&note), 0o600);
}

#[tokio::test]
async fn quick_syncs_list_only_the_folders_that_changed() {
    use journal::journal::catalog::Depth;
    let dir = tempfile::tempdir().unwrap();
    let options = journal::journal::demo::DemoOptions {
        days: 3,
        segments_per_day: 2,
        seed: 5,
        end: journal::journal::day::Day::parse("2026-11-30").unwrap(),
        notes: 0,
    };
    journal::journal::demo::write(dir.path(), &options).unwrap();
    let journal = journal::journal::Journal::open(dir.path()).await.unwrap();
    let report = journal.sync().await.unwrap();
    assert_eq!(
        (report.folders_scanned, report.indexed),
        (0, 0),
        "nothing changed: nothing listed"
    );

    let day = dir.path().join("transcripts/2026-11-29");
    std::fs::write(
        day.join("230000.md"),
        "---\nday: 2026-11-29\nstart: \"23:00:00\"\nduration_seconds: 1\n---\n- 23:00:00 a new quokka\n",
    )
    .unwrap();
    let report = journal.sync().await.unwrap();
    assert_eq!(
        (report.folders_scanned, report.indexed),
        (1, 1),
        "one folder changed, one file new"
    );

    // An edit in place leaves the folder's time alone: a quick sync does not see it, a full one does.
    std::fs::write(
        day.join("230000.md"),
        "---\nday: 2026-11-29\nstart: \"23:00:00\"\nduration_seconds: 1\n---\n- 23:00:00 an edited wombat\n",
    )
    .unwrap();
    assert_eq!(journal.sync().await.unwrap().indexed, 0);
    assert_eq!(journal.sync_to(Depth::Full).await.unwrap().indexed, 1);

    std::fs::remove_dir_all(&day).unwrap();
    let report = journal.sync().await.unwrap();
    assert_eq!(report.removed, 3, "a removed folder's files leave the catalog");
    let left: i64 = sqlx::query_scalar("SELECT count(*) FROM items WHERE kind = 'transcript'")
        .fetch_one(&journal.db)
        .await
        .unwrap();
    assert_eq!(left, 4);
}
