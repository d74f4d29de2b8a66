//! Crash safety: the real binary is killed with SIGKILL while clients save memories, again and again;
//! every save it acknowledged must be there afterwards, on disk and through recall, and the journal
//! must open and search as before.

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

fn random_below(n: u64) -> u64 {
    let mut bytes = [0u8; 8];
    getrandom::fill(&mut bytes).unwrap();
    u64::from_le_bytes(bytes) % n
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
        tokio::time::sleep(Duration::from_millis(50 + random_below(350))).await;
        child.kill().unwrap();
        child.wait().unwrap();
        for writer in writers {
            let _ = writer.await;
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
    let hits = client.ok("search", json!({"query": "lease"})).await;
    assert!(
        !hits["results"].as_array().unwrap().is_empty(),
        "the journal searches after the crashes"
    );
    child.kill().unwrap();
    child.wait().unwrap();
}
