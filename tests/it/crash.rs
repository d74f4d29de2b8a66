//! Crash safety: the real binary is killed with SIGKILL while clients save memories, again and again;
//! every save it acknowledged must be there afterwards, as a file on disk, through recall, and with its
//! record in the audit log (no result leaves without one), and the journal must open and search as
//! before. The kill times come from a seed that the test prints; `JOURNAL_CRASH_SEED=N` replays one.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;

use crate::harness::Client;

/// Starts `journal serve` on an ephemeral port; answers the child and its MCP URL.
fn serve(dir: &std::path::Path) -> (Child, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_journal"))
        .arg("--journal")
        .arg(dir)
        .args(["serve", "--local-addr", "127.0.0.1:0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let url = loop {
        let line = lines.next().expect("the server printed its address").unwrap();
        if let Some(at) = line.find("at http://") {
            break line[at + 3..].trim().to_string();
        }
    };
    // Keep reading whatever else it prints until it dies.
    std::thread::spawn(move || lines.for_each(drop));
    (child, url)
}

/// A small seeded generator (splitmix64): the kill times of a failing run can be replayed.
struct Seeded(u64);

impl Seeded {
    fn from_env_or_random() -> Seeded {
        let seed = std::env::var("JOURNAL_CRASH_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| {
                let mut bytes = [0u8; 8];
                getrandom::fill(&mut bytes).unwrap();
                u64::from_le_bytes(bytes)
            });
        // Printed so that a failure (whose output the test runner shows) can be run again.
        eprintln!("crash test seed: {seed} (JOURNAL_CRASH_SEED={seed} replays it)");
        Seeded(seed)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        (z ^ (z >> 31)) % n
    }
}

/// The digest the audit log keeps of a call's arguments.
fn arguments_digest(arguments: &serde_json::Value) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(arguments.to_string().as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acknowledged_saves_survive_sigkill() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("journal");
    let options = journal::journal::demo::DemoOptions {
        days: 2,
        segments_per_day: 2,
        seed: 3,
        end: journal::journal::day::Day::parse("2026-11-30").unwrap(),
    };
    journal::journal::demo::write(&root, &options).unwrap();
    let key = {
        let opened = journal::journal::Journal::open(&root).await.unwrap();
        let (connection, key) = journal::auth::connections::create_key(&opened.db, "crash")
            .await
            .unwrap();
        let all = journal::auth::Category::ALL.into_iter().collect();
        journal::auth::connections::set_grant(&opened.db, &connection.id, &all, None)
            .await
            .unwrap();
        key
    };
    let acknowledged: Arc<Mutex<Vec<(String, String)>>> = Arc::default();
    let mut random = Seeded::from_env_or_random();

    for round in 0..5 {
        let (mut child, url) = serve(&root);
        let mut writers = Vec::new();
        for writer in 0..4 {
            let (url, key, acknowledged) = (url.clone(), key.clone(), acknowledged.clone());
            writers.push(tokio::spawn(async move {
                let mut client = Client::new(&url, Some(&key));
                                let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25"}});
                let Ok(reply) = client.try_post(&initialize).await else { return };
                client.session = reply.header("mcp-session-id");
                // Bounded: at most 200 saves per writer per round; the kill usually ends it sooner.
                for n in 0..200 {
                    let operation = format!("round{round}-writer{writer}-{n}");
                    let content = format!("note {n} of writer {writer} in round {round}: {}", "x".repeat(n * 7 % 500));
                    let body = json!({"jsonrpc": "2.0", "id": n, "method": "tools/call",
                        "params": {"name": "save_memory", "arguments": {"content": content, "operation_id": operation}}});
                    let Ok(reply) = client.try_post(&body).await else { return };
                    let Ok(value) = serde_json::from_slice::<serde_json::Value>(&reply.body) else { return };
                    if value["result"]["isError"] == false {
                        acknowledged.lock().unwrap().push((operation, content));
                    }
                }
            }));
        }
        tokio::time::sleep(Duration::from_millis(50 + random.below(350))).await;
        child.kill().unwrap();
        child.wait().unwrap();
        // A writer ends when the server dies under it; a panic in one is a failure of the test.
        for writer in writers {
            writer.await.expect("a writer panicked");
        }
    }

    let acknowledged = acknowledged.lock().unwrap().clone();
    assert!(
        acknowledged.len() > 20,
        "the rounds acknowledged saves ({})",
        acknowledged.len()
    );
    let (mut child, url) = serve(&root);
    let client = Client::connected(&url, &key).await;
    let mut recalled = std::collections::HashMap::new();
    let mut continuation: Option<String> = None;
    for _ in 0..1000 {
        let mut arguments = json!({"limit": 20});
        if let Some(token) = &continuation {
            arguments["continuation"] = json!(token);
        }
        let page = client.ok("recall_memory", arguments).await;
        for memory in page["memories"].as_array().unwrap() {
            recalled.insert(
                memory["operation_id"].as_str().unwrap().to_string(),
                memory["content"].as_str().unwrap().to_string(),
            );
        }
        continuation = page["continuation"].as_str().map(str::to_string);
        if continuation.is_none() {
            break;
        }
    }
    for (operation, content) in &acknowledged {
        assert_eq!(
            recalled.get(operation),
            Some(content),
            "acknowledged save {operation} is there, whole"
        );
    }
    // On disk: the file of each acknowledged save (named by its operation id's digest), whole.
    let folders: Vec<std::path::PathBuf> = std::fs::read_dir(root.join("memory"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    assert_eq!(folders.len(), 1, "one connection saved");
    for (operation, content) in &acknowledged {
        use sha2::{Digest, Sha256};
        let name: String = Sha256::digest(operation.as_bytes())[..16]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        let text = std::fs::read_to_string(folders[0].join(format!("{name}.md")))
            .unwrap_or_else(|e| panic!("acknowledged save {operation} has its file: {e}"));
        assert!(
            text.contains(operation.as_str()) && text.contains(content.as_str()),
            "acknowledged save {operation} is whole on disk"
        );
    }
    // In the audit log: every acknowledged call was recorded (as served) before it was answered.
    let db = journal::db::open(&root.join("journal.db")).await.unwrap();
    let served: std::collections::HashSet<String> = sqlx::query_scalar(
        "SELECT arguments_sha256 FROM audit WHERE tool = 'save_memory' AND outcome = 'served'",
    )
    .fetch_all(&db)
    .await
    .unwrap()
    .into_iter()
    .collect();
    for (operation, content) in &acknowledged {
        let arguments = json!({"content": content, "operation_id": operation});
        assert!(
            served.contains(&arguments_digest(&arguments)),
            "acknowledged save {operation} has its audit record"
        );
    }
    let hits = client.ok("search", json!({"query": "lease"})).await;
    assert!(
        !hits["results"].as_array().unwrap().is_empty(),
        "the journal searches after the crashes"
    );
    child.kill().unwrap();
    child.wait().unwrap();
}
