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
pub(crate) fn serve(dir: &std::path::Path) -> (Child, String) {
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

/// Rounds of: start the server, let four writers run `write(client, round, writer)` against it, kill
/// it with SIGKILL after a random 50-400 ms, once `acknowledged()` (how many writes were
/// acknowledged so far) has grown by at least 2 in the round, or after 30 s at most: a slow machine
/// still tests the kill in the middle of a stream of writes. A writer ends when the server dies
/// under it.
async fn kill_rounds<W, F, A>(root: &std::path::Path, key: &str, random: &mut Seeded, acknowledged: A, write: W)
where
    A: Fn() -> usize,
    W: Fn(Client, usize, usize) -> F,
    F: std::future::Future<Output = ()> + Send + 'static,
{
    for round in 0..5 {
        let (mut child, url) = serve(root);
        let mut writers = Vec::new();
        for writer in 0..4 {
            let mut client = Client::new(&url, Some(key));
            let initialize =
                json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25"}});
            if let Ok(reply) = client.try_post(&initialize).await {
                client.session = reply.header("mcp-session-id");
                writers.push(tokio::spawn(write(client, round, writer)));
            }
        }
        let before = acknowledged();
        tokio::time::sleep(Duration::from_millis(50 + random.below(350))).await;
        // Bounded: 1,500 waits of 20 ms.
        for _ in 0..1500 {
            if acknowledged() >= before + 2 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        child.kill().unwrap();
        child.wait().unwrap();
        for writer in writers {
            writer.await.expect("a writer panicked");
        }
    }
}

/// One tool call: Some(true) when it was acknowledged (served), Some(false) when refused, None when
/// the server is gone.
async fn call(client: &Client, id: usize, tool: &str, arguments: serde_json::Value) -> Option<bool> {
    let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": tool, "arguments": arguments}});
    let reply = client.try_post(&body).await.ok()?;
    let value = serde_json::from_slice::<serde_json::Value>(&reply.body).ok()?;
    Some(value["result"]["isError"] == false)
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
        notes: 0,
    };
    journal::journal::demo::write(&root, &options).unwrap();
    let key = {
        let opened = journal::journal::Journal::open(&root).await.unwrap();
        let (connection, key) = journal::auth::connections::create_key(&opened.db, "crash")
            .await
            .unwrap();
        let all = journal::auth::Category::ALL.into_iter().collect();
        journal::auth::connections::set_grant(&opened.db, &connection.id, &all, None, journal::auth::WriteMode::None)
            .await
            .unwrap();
        key
    };
    let acknowledged: Arc<Mutex<Vec<(String, String)>>> = Arc::default();
    let mut random = Seeded::from_env_or_random();
    let saved = acknowledged.clone();
    let counted = acknowledged.clone();
    let count = move || counted.lock().unwrap().len();
    kill_rounds(&root, &key, &mut random, count, move |client, round, writer| {
        let acknowledged = saved.clone();
        async move {
            // Bounded: at most 200 saves per writer per round; the kill usually ends it sooner.
            for n in 0..200 {
                let operation = format!("round{round}-writer{writer}-{n}");
                let content = format!(
                    "note {n} of writer {writer} in round {round}: {}",
                    "x".repeat(n * 7 % 500)
                );
                let arguments = json!({"content": content, "operation_id": operation});
                match call(&client, n, "save_memory", arguments).await {
                    Some(true) => acknowledged.lock().unwrap().push((operation, content)),
                    Some(false) => {}
                    None => return,
                }
            }
        }
    })
    .await;

    let acknowledged = acknowledged.lock().unwrap().clone();
    assert!(
        acknowledged.len() >= 10,
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
    let served: std::collections::HashSet<String> =
        sqlx::query_scalar("SELECT arguments_sha256 FROM audit WHERE tool = 'save_memory' AND outcome = 'served'")
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

/// Force-mode note writes under SIGKILL: every note whose creation was acknowledged is there with its
/// exact text, every acknowledged append is in its note in order, and no note is torn (each holds
/// only whole lines its writer sent).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acknowledged_note_writes_survive_sigkill() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("journal");
    let key = notes_writer(&root, "writer").await;
    let logs = root.join("notes").join("Crash");
    std::fs::create_dir_all(&logs).unwrap();
    for writer in 0..4 {
        std::fs::write(
            logs.join(format!("log-{writer}.md")),
            "# Log
",
        )
        .unwrap();
    }
    let created: Arc<Mutex<Vec<(String, String)>>> = Arc::default();
    let appended: Arc<Mutex<Vec<Vec<String>>>> = Arc::new(Mutex::new(vec![Vec::new(); 4]));
    let mut random = Seeded::from_env_or_random();
    let (made, lines) = (created.clone(), appended.clone());
    let counted = created.clone();
    let count = move || counted.lock().unwrap().len();
    kill_rounds(&root, &key, &mut random, count, move |client, round, writer| {
        let (created, appended) = (made.clone(), lines.clone());
        async move {
            // Bounded: at most 100 pairs of calls per writer per round.
            for n in 0..100 {
                let path = format!("Crash/r{round}/w{writer}-{n}.md");
                let content = note_content(n);
                // A refusal is a failure here: every path is new and every append allowed.
                match call(&client, 2 * n, "note_create", json!({"path": path, "content": content})).await {
                    Some(true) => created.lock().unwrap().push((path, content)),
                    Some(false) => panic!("note_create {path} was refused"),
                    None => return,
                }
                let line = format!("line {n} of writer {writer} in round {round}");
                let arguments = json!({"path": format!("Crash/log-{writer}.md"), "text": line});
                match call(&client, 2 * n + 1, "note_append", arguments).await {
                    Some(true) => appended.lock().unwrap()[writer].push(line),
                    Some(false) => panic!("note_append to log {writer} was refused"),
                    None => return,
                }
            }
        }
    })
    .await;

    // The next open undoes what the last kill left half-made (its temporary file with it), as
    // every round's server start did for the round before.
    drop(journal::journal::Journal::open(&root).await.unwrap());
    let created = created.lock().unwrap().clone();
    let appended = appended.lock().unwrap().clone();
    for round in 0..5 {
        let made = created
            .iter()
            .filter(|(p, _)| p.starts_with(&format!("Crash/r{round}/")))
            .count();
        assert!(made >= 1, "round {round} acknowledged a creation before its kill");
    }
    for (path, content) in &created {
        let text = std::fs::read_to_string(root.join("notes").join(path))
            .unwrap_or_else(|e| panic!("acknowledged note {path} is there: {e}"));
        assert_eq!(&text, content, "acknowledged note {path} is whole");
    }
    // What was never acknowledged is whole or absent, and no temporary file is left.
    for round in 0..5 {
        let Ok(entries) = std::fs::read_dir(root.join(format!("notes/Crash/r{round}"))) else {
            continue;
        };
        for entry in entries {
            let name = entry.unwrap().file_name().into_string().unwrap();
            let n: usize = name
                .strip_suffix(".md")
                .and_then(|stem| stem.split_once('-'))
                .and_then(|(_, n)| n.parse().ok())
                .unwrap_or_else(|| panic!("only notes are left in round {round}'s folder: {name}"));
            let text = std::fs::read_to_string(root.join(format!("notes/Crash/r{round}/{name}"))).unwrap();
            assert_eq!(text, note_content(n), "{name} is whole");
        }
    }
    for (writer, lines) in appended.iter().enumerate() {
        let text = std::fs::read_to_string(logs.join(format!("log-{writer}.md"))).unwrap();
        let held: Vec<&str> = text.lines().skip(1).collect();
        let whole = |line: &str| {
            let words: Vec<&str> = line.split(' ').collect();
            words.len() == 8
                && [words[0], words[2], words[3], words[5], words[6]] == ["line", "of", "writer", "in", "round"]
                && words[4] == writer.to_string()
                && words[1].parse::<u32>().is_ok()
                && words[7].parse::<u32>().is_ok()
        };
        assert!(
            held.iter().all(|l| whole(l)),
            "log {writer} holds only whole lines: {text}"
        );
        // Every acknowledged line, in the order acknowledged (unacknowledged ones may sit between).
        let mut at = 0;
        for line in lines {
            let found = held[at..].iter().position(|h| h == line);
            assert!(found.is_some(), "acknowledged append {line:?} is in log {writer}");
            at += found.unwrap() + 1;
        }
    }
    // The journal opens and reads the notes as before.
    let (mut child, url) = serve(&root);
    let client = Client::connected(&url, &key).await;
    let (path, content) = &created[0];
    let read = client.ok("note_read", json!({"path": path})).await;
    assert_eq!(read["body"], content.as_str());
    child.kill().unwrap();
    child.wait().unwrap();
}

/// A key named `label` that may change notes at once, in a new journal at `root`.
pub(crate) async fn notes_writer(root: &std::path::Path, label: &str) -> String {
    let opened = journal::journal::Journal::open(root).await.unwrap();
    let (connection, key) = journal::auth::connections::create_key(&opened.db, label).await.unwrap();
    let notes = [journal::auth::Category::Notes].into_iter().collect();
    journal::auth::connections::set_grant(
        &opened.db,
        &connection.id,
        &notes,
        None,
        journal::auth::WriteMode::Force,
    )
    .await
    .unwrap();
    key
}

/// The note writer `n` of `acknowledged_note_writes_survive_sigkill` creates.
fn note_content(n: usize) -> String {
    format!("# Note {n}\n\n{}\n", "body ".repeat(n * 13 % 400))
}

/// Writes `count` plain-text transcripts of about `lines` lines each into `dir`.
fn transcripts(dir: &std::path::Path, count: usize, lines: usize) -> Vec<std::path::PathBuf> {
    (0..count)
        .map(|n| {
            let path = dir.join(format!("meeting-{n}.txt"));
            let text: String = (0..lines)
                .map(|l| {
                    format!(
                        "Speaker {}: line {l} of meeting {n}, about the lease and the garden.\n",
                        l % 3
                    )
                })
                .collect();
            std::fs::write(&path, text).unwrap();
            path
        })
        .collect()
}

/// The segments visible on a day (hidden names are not content), and whatever a batch left behind.
fn day_state(root: &std::path::Path, day: &str) -> (usize, Vec<String>) {
    let mut visible = 0;
    let mut leftovers = Vec::new();
    if let Ok(entries) = std::fs::read_dir(root.join("transcripts").join(day)) {
        for entry in entries {
            let name = entry.unwrap().file_name().to_string_lossy().into_owned();
            if name.starts_with('.') {
                leftovers.push(name);
            } else {
                visible += 1;
            }
        }
    }
    if let Ok(entries) = std::fs::read_dir(root.join(".batches")) {
        leftovers.extend(entries.map(|e| e.unwrap().file_name().to_string_lossy().into_owned()));
    }
    (visible, leftovers)
}

/// An import of several files killed with SIGKILL at any moment leaves the whole import or none of
/// it, once the journal is opened again; a complete import afterwards works as usual.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_import_killed_halfway_is_whole_or_absent() {
    let scratch = tempfile::tempdir().unwrap();
    let files = transcripts(scratch.path(), 6, 4000);
    let root = scratch.path().join("journal");
    journal::journal::Journal::open(&root).await.unwrap();
    let import = |day: &str| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_journal"));
        command
            .arg("--journal")
            .arg(&root)
            .args(["import", "transcript", "--day", day, "--time", "09:30"])
            .args(&files)
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        command
    };
    // How long a whole import takes here, to spread the kills over it.
    let started = std::time::Instant::now();
    assert!(import("2026-11-01").status().unwrap().success());
    let whole = started.elapsed().as_millis().max(20) as u64;
    assert_eq!(day_state(&root, "2026-11-01"), (6, vec![]));

    let mut random = Seeded::from_env_or_random();
    let mut outcomes = (0, 0);
    for round in 0..12 {
        let day = format!("2026-12-{:02}", round + 1);
        let mut child = import(&day).spawn().unwrap();
        std::thread::sleep(Duration::from_millis(random.below(2 * whole)));
        let _ = child.kill();
        let status = child.wait().unwrap();
        // Opening takes back what a killed import left (as `serve` and every command do).
        journal::journal::Journal::open(&root).await.unwrap();
        let (visible, leftovers) = day_state(&root, &day);
        assert!(leftovers.is_empty(), "round {round}: left behind {leftovers:?}");
        assert!(
            visible == 0 || visible == 6,
            "round {round} ({status}): {visible} of 6 segments"
        );
        if status.success() {
            assert_eq!(visible, 6, "round {round}: an import that said it succeeded is whole");
        }
        if visible == 0 { outcomes.0 += 1 } else { outcomes.1 += 1 }
    }
    eprintln!(
        "killed imports ({whole} ms for a whole one): {} absent, {} whole",
        outcomes.0, outcomes.1
    );
    assert!(import("2026-12-20").status().unwrap().success());
    assert_eq!(day_state(&root, "2026-12-20"), (6, vec![]));
}

/// Refreshes a token at `origin`'s token endpoint; answers the status and the JSON body.
async fn refresh_at(
    origin: &str,
    client_id: &str,
    token: &str,
) -> Result<(hyper::StatusCode, serde_json::Value), String> {
    let client = Client::new(&format!("{origin}/token"), None);
    let body = format!(
        "grant_type=refresh_token&refresh_token={token}&client_id={}",
        form_urlencoded::byte_serialize(client_id.as_bytes()).collect::<String>()
    );
    let reply = client
        .try_raw(
            hyper::Method::POST,
            &[("content-type", "application/x-www-form-urlencoded")],
            body,
        )
        .await?;
    let json = serde_json::from_slice(&reply.body).unwrap_or(serde_json::Value::Null);
    Ok((reply.status, json))
}

/// The server killed with SIGKILL while an app refreshes its tokens, again and again: afterwards the
/// last pair it acknowledged is either still the live one (its refresh token rotates) or was already
/// rotated by a request whose answer never arrived, which the restarted server, without the lost
/// pair in memory, treats as the reuse it looks like (the grant ends, and the app signs in again).
/// Never a 500, never an acknowledged token forgotten, and the database stays whole.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tokens_rotated_while_the_server_is_killed_stay_consistent() {
    let signer = crate::harness::TestServer::start().await;
    let root = signer.root().to_path_buf();
    let mut random = Seeded::from_env_or_random();
    let mut outcomes = (0, 0);
    for round in 0..4 {
        let (client_id, first) = crate::oauth::sign_in(&signer, &["transcripts"], None).await;
        let mut acknowledged = (
            first["access_token"].as_str().unwrap().to_string(),
            first["refresh_token"].as_str().unwrap().to_string(),
        );
        let (mut child, url) = serve(&root);
        let origin = url.trim_end_matches("/mcp").to_string();
        let deadline = std::time::Instant::now() + Duration::from_millis(100 + random.below(400));
        let refresher = {
            let (origin, client_id, mut current) = (origin.clone(), client_id.clone(), acknowledged.clone());
            tokio::spawn(async move {
                // Bounded: at most 500 rotations; the kill usually ends it sooner.
                for _ in 0..500 {
                    match refresh_at(&origin, &client_id, &current.1).await {
                        Ok((status, body)) if status == hyper::StatusCode::OK => {
                            current = (
                                body["access_token"].as_str().unwrap().to_string(),
                                body["refresh_token"].as_str().unwrap().to_string(),
                            );
                        }
                        Ok((status, body)) => panic!("a live server refused a rotation: {status} {body}"),
                        Err(_) => break,
                    }
                }
                current
            })
        };
        while std::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        child.kill().unwrap();
        child.wait().unwrap();
        acknowledged = refresher.await.expect("the refresher panicked");

        let (mut child, url) = serve(&root);
        let origin = url.trim_end_matches("/mcp").to_string();
        let (status, body) = refresh_at(&origin, &client_id, &acknowledged.1).await.unwrap();
        let probe = |token: String| {
            let url = url.clone();
            async move {
                Client::new(&url, Some(&token))
                    .post(&json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25"}}))
                    .await
                    .status
            }
        };
        if status == hyper::StatusCode::OK {
            outcomes.0 += 1;
            let access = body["access_token"].as_str().unwrap().to_string();
            assert_eq!(
                probe(access).await,
                hyper::StatusCode::OK,
                "round {round}: the new pair works"
            );
        } else {
            outcomes.1 += 1;
            assert_eq!(status, hyper::StatusCode::BAD_REQUEST, "round {round}: {body}");
            assert_eq!(body["error"], "invalid_grant", "round {round}: {body}");
            assert!(
                body["error_description"].as_str().unwrap().contains("already used"),
                "round {round}: an acknowledged refresh token is never forgotten: {body}"
            );
            assert_eq!(
                probe(acknowledged.0.clone()).await,
                hyper::StatusCode::UNAUTHORIZED,
                "round {round}: revoked"
            );
        }
        child.kill().unwrap();
        child.wait().unwrap();
    }
    eprintln!(
        "after the kills: {} pairs live, {} grants ended as reused",
        outcomes.0, outcomes.1
    );
    let integrity: String = sqlx::query_scalar("PRAGMA integrity_check")
        .fetch_one(&signer.journal.db)
        .await
        .unwrap();
    assert_eq!(integrity, "ok");
}

/// Folder moves killed at random moments: after each restart every note of the folder is whole and
/// in exactly one place, all of them on the same side (a move is whole or absent), and no temporary
/// file is left in the vault.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_folder_move_killed_halfway_is_whole_or_absent() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("journal");
    let key = notes_writer(&root, "mover").await;
    let vault = root.join("notes");
    const NOTES: usize = 40;
    let text = |n: usize| {
        format!(
            "# Note {n}\n\nNext: [[n-{}]]. {}\n",
            (n + 1) % NOTES,
            "words ".repeat(50)
        )
    };
    std::fs::create_dir_all(vault.join("A")).unwrap();
    for n in 0..NOTES {
        std::fs::write(vault.join(format!("A/n-{n}.md")), text(n)).unwrap();
    }
    let moved = Arc::new(Mutex::new(0usize));
    let (counted, made) = (moved.clone(), moved.clone());
    let mut random = Seeded::from_env_or_random();
    kill_rounds(
        &root,
        &key,
        &mut random,
        move || *counted.lock().unwrap(),
        move |client, _round, writer| {
            let moved = made.clone();
            async move {
                // Bounded: at most 40 moves per writer per round.
                for n in 0..40 {
                    let (from, to) = if (n + writer) % 2 == 0 {
                        ("A/", "B")
                    } else {
                        ("B/", "A")
                    };
                    match call(&client, n, "note_move", json!({"from": from, "to": to})).await {
                        Some(true) => *moved.lock().unwrap() += 1,
                        Some(false) => {}
                        None => return,
                    }
                }
            }
        },
    )
    .await;
    // The next start undoes what the last kill left half-made, before it serves.
    let (mut child, url) = serve(&root);
    let client = Client::connected(&url, &key).await;
    let listed = client.ok("notes_list", json!({"limit": 200})).await;
    child.kill().unwrap();
    child.wait().unwrap();
    let side = |folder: &str| {
        (0..NOTES)
            .filter(|n| vault.join(format!("{folder}/n-{n}.md")).exists())
            .count()
    };
    let (in_a, in_b) = (side("A"), side("B"));
    assert!(
        (in_a, in_b) == (NOTES, 0) || (in_a, in_b) == (0, NOTES),
        "the folder is whole on one side: {in_a} in A, {in_b} in B"
    );
    let folder = if in_a == NOTES { "A" } else { "B" };
    for n in 0..NOTES {
        assert_eq!(
            std::fs::read_to_string(vault.join(format!("{folder}/n-{n}.md"))).unwrap(),
            text(n)
        );
    }
    assert_eq!(listed["notes"].as_array().unwrap().len(), NOTES, "{listed}");
    assert!(*moved.lock().unwrap() >= 5, "moves were acknowledged between the kills");
    let mut stack = vec![vault.clone()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            assert!(
                !path.to_string_lossy().ends_with(".tmp"),
                "a temporary file is left: {}",
                path.display()
            );
            if path.is_dir() {
                stack.push(path);
            }
        }
    }
}

/// One tool call's structured answer when it was acknowledged; None when refused or the server is gone.
async fn call_answer(
    client: &Client,
    id: usize,
    tool: &str,
    arguments: serde_json::Value,
) -> Option<serde_json::Value> {
    let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": tool, "arguments": arguments}});
    let reply = client.try_post(&body).await.ok()?;
    let value = serde_json::from_slice::<serde_json::Value>(&reply.body).ok()?;
    if value["result"]["isError"] != false {
        return None;
    }
    value["result"].get("structuredContent").cloned()
}

/// Graph writes killed at random: every acknowledged connection and note is in `graph.jsonl`, every
/// line reads, and the graph's history holds, for every connection on disk, an entry that left it
/// exactly as it is (no change on disk without its entry, none recorded and not done).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acknowledged_graph_writes_survive_sigkill_with_their_history() {
    use journal::journal::graph::{history, store};
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("journal");
    let key = notes_writer(&root, "linker").await;
    {
        let opened = journal::journal::Journal::open(&root).await.unwrap();
        let connection = journal::auth::connections::find_key(&opened.db, "linker")
            .await
            .unwrap();
        let categories = [journal::auth::Category::Notes, journal::auth::Category::Graph]
            .into_iter()
            .collect();
        journal::auth::connections::set_grant(
            &opened.db,
            &connection.id,
            &categories,
            None,
            journal::auth::WriteMode::Force,
        )
        .await
        .unwrap();
    }
    const TARGETS: usize = 60;
    let vault = root.join("notes/G");
    std::fs::create_dir_all(&vault).unwrap();
    for n in 0..TARGETS {
        std::fs::write(vault.join(format!("t{n}.md")), format!("# Target {n}\n")).unwrap();
    }
    for round in 0..5 {
        for writer in 0..4 {
            std::fs::write(vault.join(format!("r{round}-w{writer}.md")), "# Source\n").unwrap();
        }
    }
    // (connection id, from, to) and (connection id, note) as acknowledged.
    let connected: Arc<Mutex<Vec<(String, String, String)>>> = Arc::default();
    let noted: Arc<Mutex<Vec<(String, String)>>> = Arc::default();
    let mut random = Seeded::from_env_or_random();
    let (made, wrote) = (connected.clone(), noted.clone());
    let counted = connected.clone();
    // Meanwhile the owner connects from the command line, process after process, on the same
    // graph (bounded: 30 commands; each waits its turn at graph.lock).
    let owner = {
        let root = root.clone();
        std::thread::spawn(move || {
            let mut made = Vec::new();
            for n in 0..30 {
                let (from, to) = ("G/t0.md".to_string(), format!("G/t{}.md", n + 1));
                let done = Command::new(env!("CARGO_BIN_EXE_journal"))
                    .arg("--journal")
                    .arg(&root)
                    .args(["graph", "connect", &from, &to, "--type", "owner-made"])
                    .output()
                    .unwrap();
                if done.status.success() {
                    let line = String::from_utf8(done.stdout).unwrap();
                    made.push(line.split_whitespace().next().unwrap().to_string());
                }
            }
            made
        })
    };
    kill_rounds(
        &root,
        &key,
        &mut random,
        move || counted.lock().unwrap().len(),
        move |client, round, writer| {
            let (connected, noted) = (made.clone(), wrote.clone());
            async move {
                // Bounded: at most TARGETS pairs of calls per writer per round.
                for n in 0..TARGETS {
                    let (from, to) = (format!("G/r{round}-w{writer}.md"), format!("G/t{n}.md"));
                    let arguments = json!({"from": from, "to": to});
                    let Some(made) = call_answer(&client, 2 * n, "connect", arguments).await else {
                        return;
                    };
                    let id = made["connection"]["id"].as_str().unwrap().to_string();
                    connected
                        .lock()
                        .unwrap()
                        .push((id.clone(), format!("note:{from}"), format!("note:{to}")));
                    let text = format!("note {n} of writer {writer} in round {round}");
                    let arguments = json!({"id": id, "text": text});
                    if call_answer(&client, 2 * n + 1, "write_connection_note", arguments)
                        .await
                        .is_none()
                    {
                        return;
                    }
                    noted.lock().unwrap().push((id, text));
                }
            }
        },
    )
    .await;

    let owners = owner.join().unwrap();
    assert!(!owners.is_empty(), "the owner's commands connected");
    // The next open undoes what a killed server left unfinished.
    let opened = journal::journal::Journal::open(&root).await.unwrap();
    let graph = store::load(&root).unwrap();
    for id in &owners {
        let made = graph
            .get(id)
            .unwrap_or_else(|| panic!("the owner's connection {id} is there"));
        assert_eq!(made.kind.as_deref(), Some("owner-made"));
    }
    assert!(graph.problems.is_empty(), "every line reads: {:?}", graph.problems);
    let connected = connected.lock().unwrap().clone();
    assert!(
        connected.len() >= 5,
        "connections were acknowledged: {}",
        connected.len()
    );
    for (id, from, to) in &connected {
        let on_disk = graph
            .get(id)
            .unwrap_or_else(|| panic!("acknowledged connection {id} is there"));
        assert_eq!((&on_disk.from, &on_disk.to), (from, to));
    }
    for (id, text) in noted.lock().unwrap().iter() {
        let notes = &graph.get(id).unwrap().notes;
        assert_eq!(notes.len(), 1, "{id}");
        assert_eq!(&notes[0].text, text, "acknowledged note on {id}");
    }
    let unfinished: i64 = sqlx::query_scalar("SELECT count(*) FROM graph_changes WHERE done = 0")
        .fetch_one(&opened.db)
        .await
        .unwrap();
    assert_eq!(unfinished, 0);
    let entries = history::recent(&opened.db, 10_000).await.unwrap();
    for connection in graph.connections() {
        let last = entries
            .iter()
            .find(|e| e.connection == connection.id)
            .unwrap_or_else(|| panic!("connection {} on disk has its history", connection.id));
        assert_eq!(last.after.as_ref(), Some(connection), "its last entry left it as it is");
    }
    for entry in entries.iter().filter(|e| e.after.is_some()) {
        assert!(
            graph.get(&entry.connection).is_some(),
            "entry {} has its connection",
            entry.id
        );
    }
    let leftovers: Vec<String> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

/// Runs `journal ARGS` on the journal at `root` and kills it with SIGKILL after `after` (it may have
/// finished by then).
fn cli_killed_after(root: &std::path::Path, args: &[&str], after: Duration) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_journal"))
        .arg("--journal")
        .arg(root)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(after);
    let _ = child.kill();
    child.wait().unwrap();
}

/// Every file under `dir` whose name ends in `.tmp`.
fn temporary_files(dir: &std::path::Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.to_string_lossy().ends_with(".tmp") {
                found.push(path.display().to_string());
            }
        }
    }
    found
}

/// An agent's folder delete (its server killed), the owner's trash restore and the owner's accept of
/// an agent's folder move (each a `journal` process killed), at random moments: after the next
/// open each change is whole or absent (every note of the folder in one place, byte for byte), a
/// proposal is accepted exactly when its move is made, and no temporary file is left.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deletes_restores_and_accepts_killed_halfway_are_whole_or_absent() {
    use journal::journal::notes::history;
    use journal::journal::proposals;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("journal");
    let key = notes_writer(&root, "tidier").await;
    let vault = root.join("notes");
    const NOTES: usize = 30;
    let text = |n: usize| format!("# Note {n}\n\n{}\n", "words ".repeat(40 + n));
    std::fs::create_dir_all(vault.join("D")).unwrap();
    for n in 0..NOTES {
        std::fs::write(vault.join(format!("D/n-{n}.md")), text(n)).unwrap();
    }
    // Where the folder's notes are after the next open: "D", "E" or "" (gone to the trash); whole.
    let count = |folder: &str| {
        (0..NOTES)
            .filter(|n| vault.join(format!("{folder}/n-{n}.md")).exists())
            .count()
    };
    let whereabouts = || async {
        let (d, e) = (count("D"), count("E"));
        if ![(NOTES, 0), (0, NOTES), (0, 0)].contains(&(d, e)) {
            // Printed: that the kills do land in the middle of a change, for the record.
            eprintln!("left split by a kill ({d} in D, {e} in E); the next open makes it whole");
        }
        let opened = journal::journal::Journal::open(&root).await.unwrap();
        let place = match (count("D"), count("E")) {
            (NOTES, 0) => "D",
            (0, NOTES) => "E",
            (0, 0) => "",
            (d, e) => panic!("the folder is split: {d} in D, {e} in E"),
        };
        for n in 0..NOTES {
            if !place.is_empty() {
                let held = std::fs::read_to_string(vault.join(format!("{place}/n-{n}.md"))).unwrap();
                assert_eq!(held, text(n), "n-{n} is whole");
            }
        }
        let left = temporary_files(&vault);
        assert!(left.is_empty(), "temporary files are left: {left:?}");
        (opened, place)
    };
    let mut random = Seeded::from_env_or_random();
    let mut kinds = [0usize; 3];
    // Bounded: 24 rounds, each kind in turn where the folder allows it.
    for round in 0..24 {
        let (opened, place) = whereabouts().await;
        eprintln!("round {round}: the folder is at {place:?}");
        match round % 3 {
            0 if !place.is_empty() => {
                drop(opened);
                let (mut child, url) = serve(&root);
                let client = Client::connected(&url, &key).await;
                let folder = format!("{place}/");
                let call = tokio::spawn(async move {
                    call(&client, 1, "note_delete", json!({"path": folder, "confirm": true})).await
                });
                tokio::time::sleep(Duration::from_millis(random.below(120))).await;
                child.kill().unwrap();
                child.wait().unwrap();
                if call.await.unwrap() == Some(true) {
                    kinds[0] += 1;
                }
            }
            1 if place.is_empty() => {
                let deletion = history::deletions(&opened.db, 1).await.unwrap()[0].0;
                drop(opened);
                let after = Duration::from_millis(random.below(500));
                let id = deletion.to_string();
                tokio::task::spawn_blocking({
                    let root = root.clone();
                    move || cli_killed_after(&root, &["trash", "restore", &id], after)
                })
                .await
                .unwrap();
                kinds[1] += 1;
            }
            _ if !place.is_empty() => {
                // An agent in propose mode asks to move the folder; the owner's accept is killed.
                let other = if place == "D" { "E" } else { "D" };
                let connection = journal::auth::connections::find_key(&opened.db, "tidier")
                    .await
                    .unwrap();
                let request = journal::journal::notes::changes::Request {
                    by: history::ChangedBy::agent(&connection.id, &connection.label),
                    reader: journal::journal::notes::Reader {
                        scope: journal::journal::content::Scope::WholeJournal,
                        label: connection.label.clone(),
                    },
                    tool: "note_move".into(),
                    arguments: json!({"from": format!("{place}/"), "to": other}),
                    path: place.to_string(),
                    change: journal::journal::notes::write::NoteChange::Move {
                        to: other.to_string(),
                        folder: true,
                    },
                    expected_hash: None,
                };
                let proposed = journal::journal::notes::changes::propose(&opened, &request)
                    .await
                    .unwrap();
                drop(opened);
                let after = Duration::from_millis(random.below(500));
                let id = proposed.id.to_string();
                tokio::task::spawn_blocking({
                    let root = root.clone();
                    move || cli_killed_after(&root, &["proposals", "accept", &id], after)
                })
                .await
                .unwrap();
                let (opened, now) = whereabouts().await;
                let status = proposals::get(&opened.db, proposed.id).await.unwrap().unwrap().status;
                assert_eq!(
                    status == proposals::Status::Accepted,
                    now == other,
                    "proposal {} is {status:?} and the folder is in {now:?}",
                    proposed.id
                );
                if status == proposals::Status::Pending {
                    let reject = ["proposals", "reject", &proposed.id.to_string()];
                    drop(opened);
                    crate::cli::ok(&root, &reject);
                }
                kinds[2] += 1;
            }
            _ => {}
        }
    }
    let (opened, place) = whereabouts().await;
    if place.is_empty() {
        let deletion = history::deletions(&opened.db, 1).await.unwrap()[0].0;
        drop(opened);
        crate::cli::ok(&root, &["trash", "restore", &deletion.to_string()]);
        assert_ne!(whereabouts().await.1, "", "the trash brings the folder back");
    }
    assert!(kinds.iter().sum::<usize>() >= 3, "the rounds ran: {kinds:?}");
}
