//! A bounded soak: thousands of sessions opened, used and ended by concurrent clients while grants
//! change under them. Every call the grant allows must be served, and afterwards the session limits
//! hold exactly (every ended session was freed).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use hyper::{Method, StatusCode};
use serde_json::json;

use crate::harness::{Client, TestServer};

const WORKERS_PER_KEY: usize = 4;
const ROUNDS: usize = 120;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_churn_under_grant_changes_within_the_limits() {
    let server = Arc::new(TestServer::start().await);
    let mut keys = Vec::new();
    for k in 0..3 {
        keys.push(
            server
                .key(&format!("soak{k}"), &["transcripts", "entities"], None)
                .await,
        );
    }
    let stop = Arc::new(AtomicBool::new(false));
    // Grant changes mid-run: the first key's grant flips between wide and narrow (bounded).
    let flipper = {
        let (server, stop) = (server.clone(), stop.clone());
        tokio::spawn(async move {
            for n in 0..200 {
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                let categories: &[&str] = if n % 2 == 0 {
                    &["entities"]
                } else {
                    &["transcripts", "entities"]
                };
                server.grant_by_label("soak0", categories, None).await;
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        })
    };
    let mut workers = Vec::new();
    for (k, key) in keys.iter().enumerate() {
        for w in 0..WORKERS_PER_KEY {
            let (url, key) = (server.url(), key.clone());
            workers.push(tokio::spawn(async move {
                let mut sessions = 0;
                for round in 0..ROUNDS {
                    let mut client = Client::new(&url, Some(&key));
                    client.initialize("2025-11-25").await;
                    let list = client.rpc("tools/list", json!({})).await;
                    let tools = list["result"]["tools"].as_array().unwrap().len();
                    assert!(tools == 7 || tools == 9, "a grant's whole tool list, never a torn one: {tools}");
                    let tool = if (round + w) % 2 == 0 { "search" } else { "save_memory" };
                    let arguments = if tool == "search" {
                        json!({"query": "lease"})
                    } else {
                        json!({"content": format!("soak {k} {w} {round}"), "operation_id": format!("soak-{k}-{w}-{round}")})
                    };
                    // Both tools are offered under either grant, so every call must be served.
                    let result = client.call(tool, arguments).await;
                    assert_eq!(result["isError"], false, "{tool}: {result}");
                    assert_eq!(client.send(Method::DELETE, "").await.status, StatusCode::NO_CONTENT);
                    sessions += 1;
                }
                sessions
            }));
        }
    }
    let mut total = 0;
    for worker in workers {
        total += worker.await.unwrap();
    }
    stop.store(true, Ordering::Relaxed);
    flipper.await.unwrap();
    assert_eq!(total, 3 * WORKERS_PER_KEY * ROUNDS);

    // Every ended session was freed: nothing is open, and a key then holds exactly 16, the 17th
    // ending the oldest of them (had an ended session leaked, it would have been the one to go).
    assert_eq!(server.state().mcp.sessions.len(), 0, "every DELETE freed its session");
    let mut open = Vec::new();
    for _ in 0..16 {
        open.push(Client::connected(&server.url(), &keys[1]).await);
    }
    assert_eq!(server.state().mcp.sessions.len(), 16);
    let reply = Client::new(&server.url(), Some(&keys[1]))
        .post(&json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25"}}))
        .await;
    assert_eq!(reply.status, StatusCode::OK);
    assert_eq!(server.state().mcp.sessions.len(), 16);
    let oldest = open[0]
        .post(&json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}))
        .await;
    assert_eq!(oldest.status, StatusCode::NOT_FOUND);
    for client in &open[1..] {
        assert_eq!(client.rpc("ping", json!({})).await["result"], json!({}));
    }
    let saved = std::fs::read_dir(server.root().join("memory"))
        .unwrap()
        .map(|d| std::fs::read_dir(d.unwrap().path()).unwrap().count())
        .sum::<usize>();
    assert_eq!(
        saved,
        3 * WORKERS_PER_KEY * ROUNDS / 2,
        "every acknowledged save is a file"
    );
}
