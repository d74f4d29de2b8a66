//! The command line, run as a person would: the real binary, real files, exit codes and messages.

use std::path::Path;
use std::process::{Command, Output};

fn journal(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_journal"))
        .arg("--journal")
        .arg(dir)
        .args(args)
        .env_remove("JOURNAL_HOME")
        .output()
        .unwrap()
}

pub(crate) fn ok(dir: &Path, args: &[&str]) -> String {
    let out = journal(dir, args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// A failure: exit status 1 and one line on stderr starting with "error: ".
pub(crate) fn fails(dir: &Path, args: &[&str]) -> String {
    let out = journal(dir, args);
    assert_eq!(out.status.code(), Some(1), "{args:?} should fail");
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.starts_with("error: "), "{stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "one line: {stderr}");
    stderr
}

/// Every file under the journal's content folders, with its contents.
fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<(String, Vec<u8>)> = ["facets", "entities", "transcripts", "memory"]
        .into_iter()
        .flat_map(|top| {
            tree(&dir.join(top))
                .into_iter()
                .map(move |(name, bytes)| (format!("{top}/{name}"), bytes))
        })
        .collect();
    files.sort();
    files
}

/// Every file under `dir`, hidden ones included, with its bytes.
fn tree(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(path) = stack.pop() {
        if path.is_dir() {
            stack.extend(std::fs::read_dir(&path).unwrap().map(|e| e.unwrap().path()));
        } else if path.exists() {
            let name = path.strip_prefix(dir).unwrap().display().to_string();
            files.push((name, std::fs::read(&path).unwrap()));
        }
    }
    files.sort();
    files
}

#[test]
fn keys_and_grants_from_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    ok(dir, &["facet", "create", "work", "--emoji", "💼"]);
    let created = ok(dir, &["mcp", "token", "create", "--label", "my-script"]);
    let key = created.lines().last().unwrap();
    assert!(
        key.starts_with("jk_") && key.len() == 46,
        "the key alone on the last line: {created}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&ok(dir, &["mcp", "token", "create", "--label", "second", "--json"])).unwrap();
    assert_eq!(json["label"], "second");
    assert!(json["key"].as_str().unwrap().starts_with("jk_"));
    assert!(fails(dir, &["mcp", "token", "create", "--label", "MY-SCRIPT"]).contains("already exists"));
    assert!(fails(dir, &["mcp", "token", "create", "--label", "bad-"]).contains("not allowed"));

    let listed = ok(dir, &["mcp", "token", "list"]);
    assert!(listed.contains("my-script") && listed.contains("never"), "{listed}");
    assert!(!listed.contains(key), "the key is never shown again");
    let db = std::fs::read(dir.join("journal.db")).unwrap();
    assert!(
        !db.windows(key.len()).any(|w| w == key.as_bytes()),
        "the key is not stored in plaintext"
    );

    let set = ok(
        dir,
        &[
            "mcp",
            "permission",
            "set",
            "--token",
            "my-script",
            "--category",
            "transcripts",
            "--facet",
            "work",
        ],
    );
    assert!(
        set.contains("transcripts; reach: work") && set.contains("generation 2"),
        "{set}"
    );
    assert!(
        fails(
            dir,
            &[
                "mcp",
                "permission",
                "set",
                "--token",
                "my-script",
                "--category",
                "transcripts",
                "--facet",
                "nope"
            ]
        )
        .contains("no facet named nope")
    );
    assert!(
        fails(
            dir,
            &[
                "mcp",
                "permission",
                "set",
                "--token",
                "my-script",
                "--category",
                "secrets"
            ]
        )
        .contains("unknown category")
    );
    assert!(
        fails(
            dir,
            &[
                "mcp",
                "permission",
                "set",
                "--token",
                "ghost",
                "--category",
                "transcripts"
            ]
        )
        .contains("no key is labelled")
    );
    let shown = ok(dir, &["mcp", "permission", "show", "--token", "my-script"]);
    assert!(
        shown.contains("generation 2") && shown.contains("writes: none"),
        "a refused change changed nothing: {shown}"
    );
    let set_notes = |extra: &[&'static str]| -> Vec<&'static str> {
        let mut args = vec![
            "mcp",
            "permission",
            "set",
            "--token",
            "my-script",
            "--category",
            "notes",
        ];
        args.extend_from_slice(extra);
        args
    };
    let proposing = ok(dir, &set_notes(&["--write", "propose"]));
    assert!(
        proposing.contains("writes: propose") && proposing.contains("generation 3"),
        "{proposing}"
    );
    let kept = ok(dir, &set_notes(&[]));
    assert!(
        kept.contains("writes: propose"),
        "without --write the mode stays: {kept}"
    );
    for bad in ["FORCE", "yes", ""] {
        let refused = fails(dir, &set_notes(&["--write", bad]));
        assert!(
            refused.contains("unknown write mode") && refused.contains("none, propose or force"),
            "{refused}"
        );
    }
    let forced = ok(dir, &set_notes(&["--write", "force"]));
    assert!(
        forced.contains("writes: force") && forced.contains("without your review"),
        "{forced}"
    );
    let shown = ok(dir, &["mcp", "permission", "show", "--token", "my-script"]);
    assert!(
        shown.contains("writes: force") && shown.contains("generation 5"),
        "refused modes changed nothing: {shown}"
    );
    let cleared = ok(dir, &["mcp", "permission", "clear", "--token", "my-script"]);
    assert!(
        cleared.contains("its own memory only") && cleared.contains("generation 6"),
        "{cleared}"
    );
    let after = ok(dir, &set_notes(&[]));
    assert!(
        after.contains("writes: none"),
        "clearing takes writes back too: {after}"
    );
    assert!(ok(dir, &["mcp", "token", "revoke", "--label", "my-script"]).contains("revoked"));
    assert!(fails(dir, &["mcp", "token", "revoke", "--label", "my-script"]).contains("no key is labelled"));
    assert!(ok(dir, &["mcp", "activity"]).contains("no tool calls"));

    let out = journal(dir, &["mcp", "token", "create"]);
    assert_eq!(out.status.code(), Some(2), "a usage error");
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(stderr.trim_end().lines().count(), 1, "one line: {stderr}");
    assert!(stderr.contains("--label") && stderr.contains("--help"), "{stderr}");
}

#[test]
fn content_commands_and_their_refusals() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    assert!(fails(dir, &["facet", "create", "Work"]).contains("lowercase"));
    ok(
        dir,
        &["facet", "create", "work", "--title", "Work", "--color", "#112233"],
    );
    assert!(fails(dir, &["facet", "create", "work"]).contains("already exists"));
    assert!(fails(dir, &["facet", "create", "home", "--color", "red"]).contains("#rrggbb"));
    assert!(ok(dir, &["facet", "list"]).contains("work  Work"));
    ok(
        dir,
        &[
            "entity",
            "add",
            "Ada Lovelace",
            "--type",
            "person",
            "--aka",
            "Ada",
            "--facet",
            "work",
            "--description",
            "Analyst",
        ],
    );
    assert!(fails(dir, &["entity", "add", "ada lovelace", "--type", "person"]).contains("already exists"));
    assert!(fails(dir, &["entity", "add", "X", "--type", "alien"]).contains("person, place, project or organization"));
    assert!(
        fails(
            dir,
            &[
                "entity",
                "add",
                "Y",
                "--type",
                "place",
                "--facet",
                "nope",
                "--description",
                "d"
            ]
        )
        .contains("no facet named nope")
    );
    let entity = std::fs::read_to_string(dir.join("entities/ada-lovelace.md")).unwrap();
    assert!(
        entity.contains("Analyst") && entity.contains("type: person"),
        "{entity}"
    );
}

/// Markdown files imported as notes: all or nothing, each under its own name (a taken one gets -2),
/// every refusal naming what to fix, and the notes served at once.
#[test]
fn notes_are_imported_whole_under_their_names() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let inputs = tempfile::tempdir().unwrap();
    let input = |name: &str, text: &str| {
        let path = inputs.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        path.to_str().unwrap().to_string()
    };
    let idea = input("Idea.md", "# An idea\n\nplant the #garden early\n");
    let plan = input("Plan.md", "---\nstatus: active\n---\n# Plan\n");
    let again = input("sub/Idea.md", "# Another idea\n");
    let broken = input("broken.md", "---\nstatus: [unclosed\n---\nbody\n");
    let text = input("readme.txt", "not a note");
    let hidden = input(".hidden.md", "# Hidden\n");
    ok(dir, &["facet", "create", "work"]);
    let notes = dir.join("notes");
    let before = tree(&notes);
    let refusals = [
        (vec![idea.as_str(), broken.as_str(), "--folder", "Inbox"], "broken.md"),
        (vec![idea.as_str(), text.as_str()], "readme.txt: not a markdown note"),
        (vec![hidden.as_str()], "may not start with a dot"),
        (vec![idea.as_str(), "--folder", "../outside"], "--folder"),
        (vec![idea.as_str(), "--folder", "Inbox/.hidden"], "--folder"),
    ];
    for (args, says) in refusals {
        let mut all = vec!["import", "note"];
        all.extend(args);
        let error = fails(dir, &all);
        assert!(error.contains(says), "{all:?}: {error}");
    }
    assert_eq!(tree(&notes), before, "refusals change nothing");

    let out = ok(dir, &["import", "note", &idea, &plan, &again, "--folder", "Inbox"]);
    for line in [
        "imported note Inbox/Idea.md",
        "imported note Inbox/Plan.md",
        "imported note Inbox/Idea-2.md",
    ] {
        assert!(out.contains(line), "{out}");
    }
    let inbox = tree(&notes.join("Inbox"));
    let names: Vec<&str> = inbox.iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(names, ["Idea-2.md", "Idea.md", "Plan.md"], "nothing hidden is left");
    assert_eq!(inbox[0].1, b"# Another idea\n");
    assert_eq!(inbox[2].1, b"---\nstatus: active\n---\n# Plan\n");
    assert!(ok(dir, &["import", "note", &idea]).contains("imported note Idea.md"));
    let status = ok(dir, &["notes", "status"]);
    let count = |text: &str| {
        text.lines()
            .nth(1)
            .and_then(|l| l.split(' ').next())
            .map(|n| n.to_string())
    };
    let before_count = before
        .iter()
        .filter(|(name, _)| name.ends_with(".md") && !name.starts_with('.'))
        .count();
    assert_eq!(count(&status), Some((before_count + 4).to_string()), "{status}");

    // A vault outside the journal's folder takes a batch the same way.
    let vault = tempfile::tempdir().unwrap();
    ok(dir, &["notes", "use", vault.path().to_str().unwrap()]);
    assert!(ok(dir, &["import", "note", &plan, "--folder", "Inbox"]).contains("imported note Inbox/Plan.md"));
    let names: Vec<String> = tree(vault.path()).into_iter().map(|(name, _)| name).collect();
    assert!(names.contains(&"Inbox/Plan.md".to_string()), "{names:?}");
    assert!(!names.iter().any(|name| name.contains(".batch-")), "{names:?}");
    assert!(std::fs::read_dir(dir.join(".batches")).unwrap().next().is_none());
}

/// A batch of hundreds of files is read on several threads and written together: the first bad file
/// in the order given is the one named, nothing is written, and a good batch lands whole, in order.
#[test]
fn a_large_import_names_the_first_bad_file_and_lands_whole_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let inputs = tempfile::tempdir().unwrap();
    let mut files = Vec::new();
    for n in 0..300 {
        let file = inputs.path().join(format!("talk-{n:03}.txt"));
        std::fs::write(&file, format!("[00:00:{:02}] Ada: talk number {n}\n", n % 60)).unwrap();
        files.push(file.to_str().unwrap().to_string());
    }
    let broken = |n: usize| {
        let file = inputs.path().join(format!("broken-{n:03}.txt"));
        std::fs::write(&file, "[00:00:01] Ada: fine\n[00:99:00] Ada: no such minute\n").unwrap();
        file.to_str().unwrap().to_string()
    };
    ok(dir, &["facet", "create", "work"]);
    let before = snapshot(dir);
    let mut bad = files.clone();
    bad[150] = broken(150);
    bad[299] = broken(299);
    let mut args = vec!["import", "transcript", "--day", "2026-11-21"];
    args.extend(bad.iter().map(String::as_str));
    let error = fails(dir, &args);
    assert!(
        error.contains("broken-150.txt") && !error.contains("broken-299"),
        "{error}"
    );
    assert_eq!(snapshot(dir), before, "nothing was written");

    let mut args = vec!["import", "transcript", "--day", "2026-11-21", "--time", "08:00"];
    args.extend(files.iter().map(String::as_str));
    let out = ok(dir, &args);
    assert_eq!(out.lines().filter(|l| l.starts_with("imported ")).count(), 300, "{out}");
    let day = dir.join("transcripts/2026-11-21");
    let names: Vec<String> = std::fs::read_dir(&day)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 300, "no hidden file is left: {names:?}");
    for (n, name) in [(0, "080000.md"), (1, "080000-2.md"), (299, "080000-300.md")] {
        let text = std::fs::read_to_string(day.join(name)).unwrap();
        assert!(text.contains(&format!("talk number {n}\n")), "{name}: {text}");
        assert!(text.contains(&format!("title: talk-{n:03}")), "{name}: {text}");
    }
    assert!(std::fs::read_dir(dir.join(".batches")).unwrap().next().is_none());

    // Whoever reads the list of imported files may stop reading (`| head`): the import is done,
    // and says so by its exit status, without a panic.
    let mut args = vec![
        "--journal",
        dir.to_str().unwrap(),
        "import",
        "transcript",
        "--day",
        "2026-11-22",
    ];
    args.extend(files.iter().map(String::as_str));
    let mut child = Command::new(env!("CARGO_BIN_EXE_journal"))
        .args(&args)
        .env_remove("JOURNAL_HOME")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(
        std::fs::read_dir(dir.join("transcripts/2026-11-22")).unwrap().count(),
        300
    );
}

#[test]
fn imports_are_all_or_nothing_and_name_the_bad_line() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let inputs = tempfile::tempdir().unwrap();
    let good = inputs.path().join("standup.vtt");
    std::fs::write(&good, "WEBVTT\n\n00:00:01.000 --> 00:00:04.000\n<v Ada>the lease renewal is due\n\n00:00:05.000 --> 00:00:07.000\n<v Ben>before Friday\n").unwrap();
    let bad = inputs.path().join("broken.srt");
    std::fs::write(
        &bad,
        "1\n00:00:01,000 --> 00:00:02,000\nhello\n\n2\n00:00:03 -> 4\nworld\n",
    )
    .unwrap();
    let json = inputs.path().join("call.jsonl");
    std::fs::write(
        &json,
        "{\"start\": 0, \"speaker\": \"Ada\", \"text\": \"hi\"}\n{\"start\": 2.5, \"text\": \"there\"}\n",
    )
    .unwrap();
    ok(dir, &["facet", "create", "work"]);
    let before = snapshot(dir);

    let error = fails(
        dir,
        &[
            "import",
            "transcript",
            good.to_str().unwrap(),
            bad.to_str().unwrap(),
            "--day",
            "2026-11-20",
        ],
    );
    assert!(error.contains("broken.srt") && error.contains("line 6"), "{error}");
    assert_eq!(snapshot(dir), before, "nothing was written");
    assert!(
        fails(
            dir,
            &["import", "transcript", good.to_str().unwrap(), "--day", "2026-13-01"]
        )
        .contains("--day")
    );
    assert!(
        fails(
            dir,
            &[
                "import",
                "transcript",
                good.to_str().unwrap(),
                "--day",
                "2026-11-20",
                "--time",
                "25:00"
            ]
        )
        .contains("--time")
    );
    assert!(
        fails(
            dir,
            &[
                "import",
                "transcript",
                good.to_str().unwrap(),
                "--day",
                "2026-11-20",
                "--facet",
                "nope"
            ]
        )
        .contains("no facet named nope")
    );
    let pdf = inputs.path().join("notes.pdf");
    std::fs::write(&pdf, "x").unwrap();
    assert!(
        fails(
            dir,
            &["import", "transcript", pdf.to_str().unwrap(), "--day", "2026-11-20"]
        )
        .contains("unknown transcript format")
    );
    let missing = inputs.path().join("missing.vtt");
    assert!(
        fails(
            dir,
            &["import", "transcript", missing.to_str().unwrap(), "--day", "2026-11-20"]
        )
        .contains("missing.vtt")
    );
    assert_eq!(snapshot(dir), before, "refusals change nothing");

    let out = ok(
        dir,
        &[
            "import",
            "transcript",
            good.to_str().unwrap(),
            json.to_str().unwrap(),
            "--day",
            "2026-11-20",
            "--time",
            "09:30",
            "--facet",
            "work",
        ],
    );
    assert!(
        out.contains("transcripts/2026-11-20/093000.md") && out.contains("transcripts/2026-11-20/093000-2.md"),
        "{out}"
    );
    let text = std::fs::read_to_string(dir.join("transcripts/2026-11-20/093000.md")).unwrap();
    assert!(text.contains("- 09:30:01 **Ada:** the lease renewal is due"), "{text}");
    assert!(text.contains("- work"), "{text}");
    let text = std::fs::read_to_string(dir.join("transcripts/2026-11-20/093000-2.md")).unwrap();
    assert!(text.contains("- 09:30:02 there"), "{text}");
}

#[test]
fn demo_reindex_and_config_errors() {
    let parent = tempfile::tempdir().unwrap();
    let demo = parent.path().join("demo");
    let out = ok(
        parent.path(),
        &["demo", demo.to_str().unwrap(), "--days", "2", "--segments-per-day", "2"],
    );
    assert!(
        out.contains("4 facets, 10 entities, 4 transcript segments, 60 notes"),
        "{out}"
    );
    assert!(fails(parent.path(), &["demo", demo.to_str().unwrap()]).contains("not empty"));
    let reindexed = ok(&demo, &["reindex"]);
    assert!(reindexed.starts_with("indexed 78 files"), "{reindexed}");
    std::fs::write(demo.join("journal.toml"), "[local]\naddr = \"0.0.0.0:7659\"\n").unwrap();
    assert!(fails(&demo, &["serve"]).contains("not a loopback address"));
    std::fs::write(demo.join("journal.toml"), "[local\n").unwrap();
    assert!(fails(&demo, &["serve"]).contains("journal.toml"));
    std::fs::remove_file(demo.join("journal.toml")).unwrap();
    assert!(fails(&demo, &["serve", "--local-addr", "nonsense"]).contains("IP:PORT"));
}

#[test]
fn demo_needs_no_home_and_a_bare_group_is_a_usage_error() {
    let parent = tempfile::tempdir().unwrap();
    let demo = parent.path().join("demo");
    let out = Command::new(env!("CARGO_BIN_EXE_journal"))
        .args(["demo", demo.to_str().unwrap(), "--days", "1", "--segments-per-day", "1"])
        .env_remove("HOME")
        .env_remove("JOURNAL_HOME")
        .env_remove("XDG_DATA_HOME")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let out = Command::new(env!("CARGO_BIN_EXE_journal"))
        .args(["--journal", demo.to_str().unwrap(), "mcp"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("token"),
        "lists what can follow"
    );
    let out = Command::new(env!("CARGO_BIN_EXE_journal"))
        .arg("--version")
        .output()
        .unwrap();
    assert!(out.status.success() && String::from_utf8_lossy(&out.stdout).starts_with("journal "));
}

#[test]
fn io_errors_name_the_file_once() {
    let dir = tempfile::tempdir().unwrap();
    let error = fails(
        dir.path(),
        &["import", "transcript", "/nonexistent/nosuch.txt", "--day", "2026-11-22"],
    );
    assert_eq!(error.matches("No such file").count(), 1, "{error}");
    assert!(error.contains("/nonexistent/nosuch.txt"), "{error}");
}

/// `journal serve` on an ephemeral loopback port, with its stdout to read (the first line names the
/// address).
fn serve(
    dir: &Path,
) -> (
    std::process::Child,
    std::io::Lines<std::io::BufReader<std::process::ChildStdout>>,
) {
    use std::io::BufRead;
    let mut child = Command::new(env!("CARGO_BIN_EXE_journal"))
        .arg("--journal")
        .arg(dir)
        .args(["serve", "--local-addr", "127.0.0.1:0"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    (child, lines)
}

#[test]
fn a_server_whose_stdout_is_closed_keeps_serving_and_stops_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    ok(dir.path(), &["init"]);
    let (mut child, mut lines) = serve(dir.path());
    let first = lines.next().unwrap().unwrap();
    assert!(first.contains("at http://127.0.0.1:"), "{first}");
    drop(lines);
    // The server prints a line when it stops: with nobody reading, that write fails, and must not panic.
    // No pause before the signal: the handlers are installed before the address is printed.
    let pid = child.id().to_string();
    assert!(Command::new("kill").args(["-TERM", &pid]).status().unwrap().success());
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0), "a clean stop");
}

// `serve` listens before it brings the catalog up to date (a full sync of a large journal takes
// seconds), and its first upkeep pass picks up what changed while no server ran.
#[tokio::test]
async fn serve_picks_up_what_changed_while_it_was_stopped() {
    let parent = tempfile::tempdir().unwrap();
    let root = parent.path().join("journal");
    let demo_args = ["demo", root.to_str().unwrap(), "--days", "2", "--segments-per-day", "2"];
    ok(parent.path(), &demo_args);
    let key = ok(&root, &["mcp", "token", "create", "--label", "reader"])
        .trim()
        .lines()
        .last()
        .unwrap()
        .to_string();
    ok(
        &root,
        &[
            "mcp",
            "permission",
            "set",
            "--token",
            "reader",
            "--category",
            "transcripts",
        ],
    );
    // A segment written by hand while the server is stopped: a copy of one with a word of its own.
    let day = std::fs::read_dir(root.join("transcripts"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let segment = std::fs::read_dir(&day).unwrap().next().unwrap().unwrap().path();
    let text = std::fs::read_to_string(&segment).unwrap();
    let marker = text.lines().rfind(|l| l.starts_with("- ")).unwrap();
    std::fs::write(
        day.join("235900.md"),
        text.replace(marker, &format!("{marker} zebracorn")),
    )
    .unwrap();

    let (mut child, mut lines) = serve(&root);
    let first = lines.next().unwrap().unwrap();
    let url = first.split(" at ").last().unwrap().trim().to_string();
    let client = crate::harness::Client::connected(&url, &key).await;
    let found = crate::harness::eventually(60, || async {
        let hits = client.ok("search", serde_json::json!({"query": "zebracorn"})).await;
        hits["results"].as_array().is_some_and(|r| r.len() == 1)
    })
    .await;
    let _ = Command::new("kill").args(["-TERM", &child.id().to_string()]).status();
    let _ = child.wait();
    assert!(found, "the hand-written segment is found after the server's first sync");
}

#[test]
fn the_lan_ca_is_made_once_and_printed_without_its_key() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let first = ok(dir, &["route", "ca"]);
    let fingerprint = first
        .lines()
        .find_map(|line| line.strip_prefix("SHA-256 "))
        .expect("a fingerprint line")
        .to_string();
    assert_eq!(fingerprint.split(':').count(), 32, "{fingerprint}");
    assert!(first.contains("-----BEGIN CERTIFICATE-----"), "{first}");
    assert!(!first.contains("PRIVATE KEY"), "the key is never printed");
    let again = ok(dir, &["route", "ca"]);
    assert!(again.contains(&fingerprint), "the same CA on every run");
    let pem = ok(dir, &["route", "ca", "--pem"]);
    assert!(pem.starts_with("-----BEGIN CERTIFICATE-----") && pem.trim_end().ends_with("-----END CERTIFICATE-----"));
    assert!(first.ends_with(&pem), "the PEM is the one printed with the fingerprint");
    let key = dir.join(".tls/ca-key.pem");
    assert_eq!(std::fs::metadata(&key).unwrap().permissions().mode() & 0o777, 0o600);

    std::fs::write(&key, "garbage").unwrap();
    assert!(fails(dir, &["route", "ca"]).contains("not a key this journal made"));
}

#[test]
fn a_relative_journal_folder_works_from_the_folder_it_is_in() {
    let parent = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_journal"))
            .current_dir(parent.path())
            .args(args)
            .env_remove("JOURNAL_HOME")
            .output()
            .unwrap()
    };
    let demo = run(&["demo", "relative", "--days", "1", "--segments-per-day", "1"]);
    assert!(demo.status.success(), "{}", String::from_utf8_lossy(&demo.stderr));
    assert!(parent.path().join("relative/facets").is_dir());
    let listed = run(&["--journal", "relative", "route", "list"]);
    assert!(listed.status.success(), "{}", String::from_utf8_lossy(&listed.stderr));
    let enabled = run(&["--journal", "relative", "route", "enable", "lan"]);
    assert!(enabled.status.success(), "{}", String::from_utf8_lossy(&enabled.stderr));
    assert!(parent.path().join("relative/journal.toml").is_file());
}

/// `journal mcp oauth register`: a client for an app that cannot use its metadata document; a
/// callback the journal does not allow, or no name, is refused and nothing is registered.
#[test]
fn the_owner_registers_a_client_and_bad_ones_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    ok(dir.path(), &["init"]);
    fn register<'a>(args: &[&'a str]) -> Vec<&'a str> {
        [&["mcp", "oauth", "register"][..], args].concat()
    }
    for (args, says) in [
        (
            register(&["--name", "X", "--redirect-uri", "https://evil.example/cb"]),
            "no redirect URI is allowed",
        ),
        (
            register(&[
                "--name",
                "X",
                "--redirect-uri",
                "http://localhost/cb",
                "--redirect-uri",
                "https://evil.example/cb",
            ]),
            "https://evil.example/cb is not a callback this journal allows",
        ),
        (
            register(&["--name", "", "--redirect-uri", "http://localhost/cb"]),
            "client_name must be",
        ),
    ] {
        let error = fails(dir.path(), &args);
        assert!(error.contains(says), "{args:?}: {error}");
        assert_eq!(error.trim().lines().count(), 1, "one line: {error}");
    }
    let out = ok(
        dir.path(),
        &register(&["--name", "Claude Code", "--redirect-uri", "http://localhost/callback"]),
    );
    let id = out.trim().lines().last().unwrap();
    assert!(id.starts_with("jc_"), "{out}");
    let again = ok(
        dir.path(),
        &register(&["--name", "Claude Code", "--redirect-uri", "http://localhost/callback"]),
    );
    assert_eq!(
        again.trim().lines().last().unwrap(),
        id,
        "the same registration answers the same client"
    );
}

#[test]
fn notes_use_serves_a_vault_in_place_and_refuses_what_cannot_be_one() {
    let parent = tempfile::tempdir().unwrap();
    let journal = parent.path().join("journal");
    let vault = parent.path().join("vault");
    std::fs::create_dir_all(vault.join("Projects")).unwrap();
    std::fs::write(vault.join("Projects/alpha.md"), "---\nstatus: active\n---\n# Alpha\n").unwrap();
    std::fs::write(vault.join("secret.md"), "---\naccess: private\n---\n").unwrap();
    std::fs::write(vault.join("broken.md"), "---\naccess: private\n").unwrap();
    std::fs::write(vault.join("file.txt"), "not a folder").unwrap();
    let before: Vec<(String, Vec<u8>)> = ["Projects/alpha.md", "secret.md", "broken.md"]
        .iter()
        .map(|p| (p.to_string(), std::fs::read(vault.join(p)).unwrap()))
        .collect();

    let vault_arg = vault.to_str().unwrap();
    let out = ok(&journal, &["notes", "use", vault_arg]);
    assert!(out.contains("2 notes"), "{out}");
    assert!(out.contains("not served: broken.md: no closing '---'"), "{out}");
    let settings = std::fs::read_to_string(journal.join("journal.toml")).unwrap();
    assert!(settings.contains("[notes]") && settings.contains("vault"), "{settings}");
    let status = ok(&journal, &["notes", "status"]);
    assert!(status.contains("2 notes (0 read-only, 1 private)"), "{status}");
    assert!(
        status.contains(vault.canonicalize().unwrap().to_str().unwrap()),
        "{status}"
    );
    for (path, bytes) in &before {
        assert_eq!(
            &std::fs::read(vault.join(path)).unwrap(),
            bytes,
            "{path} is never rewritten"
        );
    }
    let entries = std::fs::read_dir(&vault).unwrap().count();
    assert_eq!(entries, 4, "nothing added to the vault");

    for (dir, expected) in [
        (parent.path().join("nowhere"), "cannot be used as the notes folder"),
        (vault.join("file.txt"), "is not a folder"),
        (journal.clone(), "cannot be the journal folder itself"),
        (journal.join("transcripts"), "journal's own transcripts/ folder"),
    ] {
        let error = fails(&journal, &["notes", "use", dir.to_str().unwrap()]);
        assert!(error.contains(expected), "{dir:?}: {error}");
    }
    let after = std::fs::read_to_string(journal.join("journal.toml")).unwrap();
    assert_eq!(after, settings, "a refused folder changes nothing");
    std::fs::write(journal.join("journal.toml"), "[notes]\ndir = 3\n").unwrap();
    assert!(fails(&journal, &["notes", "status"]).contains("[notes]"));
}

/// `journal proposals` and `journal notes history|revert`: the owner's review and undo in the
/// terminal, with every refusal in one line.
#[tokio::test]
async fn proposals_are_reviewed_and_agent_changes_undone_from_the_command_line() {
    use journal::journal::notes::changes::{self, Request};
    use journal::journal::notes::history::ChangedBy;
    use journal::journal::notes::write::NoteChange;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_path_buf();
    std::fs::create_dir_all(root.join("notes")).unwrap();
    std::fs::write(root.join("notes/plan.md"), "# Plan\n").unwrap();
    let (id, stale_id) = {
        let opened = journal::journal::Journal::open(&root).await.unwrap();
        let (connection, _) = journal::auth::connections::create_key(&opened.db, "Helper")
            .await
            .unwrap();
        let notes = [journal::auth::Category::Notes].into_iter().collect();
        journal::auth::connections::set_grant(
            &opened.db,
            &connection.id,
            &notes,
            None,
            journal::auth::WriteMode::Propose,
        )
        .await
        .unwrap();
        let request = |text: &str| Request {
            by: ChangedBy::agent(&connection.id, &connection.label),
            reader: journal::journal::notes::Reader {
                scope: journal::journal::content::Scope::WholeJournal,
                label: connection.label.clone(),
            },
            tool: "note_append".into(),
            arguments: serde_json::json!({"path": "plan.md", "text": text}),
            path: "plan.md".into(),
            change: NoteChange::Append {
                text: text.into(),
                ensure_newline: true,
            },
            expected_hash: None,
        };
        let first = changes::propose(&opened, &request("- step one")).await.unwrap();
        let second = changes::propose(&opened, &request("- step two")).await.unwrap();
        (first.id, second.id)
    };
    let (id, stale_id) = (id.to_string(), stale_id.to_string());

    let listed = ok(&root, &["proposals", "list"]);
    assert_eq!(listed.lines().count(), 2, "{listed}");
    assert!(
        listed.contains("pending") && listed.contains("Helper") && listed.contains("plan.md"),
        "{listed}"
    );
    let shown = ok(&root, &["proposals", "show", &id]);
    assert!(
        shown.contains("+- step one") && shown.contains("note_append"),
        "{shown}"
    );

    let accepted = ok(&root, &["proposals", "accept", &id]);
    assert!(accepted.contains("accepted"), "{accepted}");
    assert_eq!(
        std::fs::read_to_string(root.join("notes/plan.md")).unwrap(),
        "# Plan\n- step one"
    );
    // The second was proposed against the note before the first was accepted: refused, then
    // shown against the note now, then accepted onto it.
    let stale = fails(&root, &["proposals", "accept", &stale_id]);
    assert!(
        stale.contains("changed since") && stale.contains("--onto-current"),
        "{stale}"
    );
    let shown = ok(&root, &["proposals", "show", &stale_id]);
    assert!(
        shown.contains("changed since")
            && shown.contains("-- step one\n\\ No newline at end of file\n+- step one\n+- step two"),
        "{shown}"
    );
    ok(&root, &["proposals", "accept", &stale_id, "--onto-current"]);
    let text = std::fs::read_to_string(root.join("notes/plan.md")).unwrap();
    assert_eq!(text, "# Plan\n- step one\n- step two");
    assert!(fails(&root, &["proposals", "reject", &id]).contains("already accepted"));
    assert!(fails(&root, &["proposals", "show", "999"]).contains("no proposal 999"));
    assert!(fails(&root, &["proposals", "list", "--status", "maybe"]).contains("pending, accepted, rejected or all"));
    assert!(ok(&root, &["proposals", "list"]).contains("no proposals are pending"));
    assert_eq!(ok(&root, &["proposals", "list", "--status", "all"]).lines().count(), 2);

    let history = ok(&root, &["notes", "history", "plan"]);
    assert!(
        history.contains("agent:helper (Helper)") && history.contains("proposal"),
        "{history}"
    );
    let newest: String = history
        .lines()
        .next()
        .unwrap()
        .split_whitespace()
        .nth(1)
        .unwrap()
        .to_string();
    let reverted = ok(&root, &["notes", "revert", "plan.md", &newest]);
    assert!(reverted.contains("back as it was"), "{reverted}");
    assert_eq!(
        std::fs::read_to_string(root.join("notes/plan.md")).unwrap(),
        "# Plan\n- step one"
    );
    assert!(ok(&root, &["notes", "history", "plan.md"]).contains("owner"));
    assert!(fails(&root, &["notes", "revert", "other.md", &newest]).contains("has no version"));
    assert!(fails(&root, &["notes", "revert", "../x.md", "1"]).contains("not a note path"));
    assert!(ok(&root, &["notes", "history", "other.md"]).contains("no agent has changed"));
}

/// `journal trash list|restore`: the notes an agent deleted, and bringing them back.
#[tokio::test]
async fn the_trash_lists_deletions_and_restores_them() {
    use journal::journal::notes::changes::{self, Request};
    use journal::journal::notes::history::ChangedBy;
    use journal::journal::notes::write::NoteChange;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_path_buf();
    std::fs::create_dir_all(root.join("notes/Old")).unwrap();
    std::fs::write(root.join("notes/Old/a.md"), "# A\n").unwrap();
    std::fs::write(root.join("notes/Old/b.md"), "# B\n").unwrap();
    // Not a journal yet: the trash is refused, and nothing is made.
    assert!(fails(&root, &["trash", "list"]).contains("there is no journal in"));
    assert!(!root.join("journal.db").exists());
    {
        let opened = journal::journal::Journal::open(&root).await.unwrap();
        assert!(ok(&root, &["trash", "list"]).contains("the trash is empty"));
        let request = Request {
            by: ChangedBy::agent("c1", "Tidy Bot"),
            reader: journal::journal::notes::Reader {
                scope: journal::journal::content::Scope::WholeJournal,
                label: "Tidy Bot".into(),
            },
            tool: "note_delete".into(),
            arguments: serde_json::json!({"path": "Old", "confirm": true}),
            path: "Old".into(),
            change: NoteChange::Delete { folder: true },
            expected_hash: None,
        };
        changes::apply(&opened, &request).await.unwrap();
    }
    assert!(!root.join("notes/Old/a.md").exists());
    let listed = ok(&root, &["trash", "list"]);
    assert!(
        listed.contains("agent:tidy-bot (Tidy Bot)") && listed.contains("Old/a.md and 1 more"),
        "{listed}"
    );
    let id = listed.split_whitespace().next().unwrap().to_string();
    let restored = ok(&root, &["trash", "restore", &id]);
    assert!(
        restored.contains("restored Old/a.md") && restored.contains("restored Old/b.md"),
        "{restored}"
    );
    assert_eq!(std::fs::read_to_string(root.join("notes/Old/b.md")).unwrap(), "# B\n");
    assert!(ok(&root, &["trash", "list"]).contains("(back in place)"));
    let again = fails(&root, &["trash", "restore", &id]);
    assert!(again.contains("taken again"), "{again}");
    assert!(fails(&root, &["trash", "restore", "999"]).contains("no deletion 999"));
}

/// `journal ... | head`: a reader that stops reading is no error and no panic, for any command.
#[test]
fn a_closed_standard_output_is_no_panic() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    ok(dir, &["demo", dir.to_str().unwrap()]);
    for args in [
        vec!["facet", "list"],
        vec!["graph", "list"],
        vec!["notes", "status"],
        vec!["mcp", "activity"],
    ] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_journal"))
            .arg("--journal")
            .arg(dir)
            .args(&args)
            .env_remove("JOURNAL_HOME")
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
}

/// `journal ARGS` as a new user runs it: no --journal, no JOURNAL_HOME, the data folder `data`.
fn as_user(data: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_journal"))
        .args(args)
        .env_remove("JOURNAL_HOME")
        .env("XDG_DATA_HOME", data)
        .output()
        .unwrap()
}

/// Starts `journal serve --demo` (and `extra`) as a new user; answers the child, what it printed up
/// to "press Ctrl-C", and its MCP address.
/// A demo server that is killed if the test fails before stopping it (a failing assertion must not
/// leave a server running).
struct Served(Option<std::process::Child>);

impl Drop for Served {
    fn drop(&mut self) {
        if let Some(mut child) = self.0.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

fn serve_demo(data: &Path, extra: &[&str]) -> (Served, String, String) {
    use std::io::{BufRead, BufReader};
    let mut child = Command::new(env!("CARGO_BIN_EXE_journal"))
        .args(["serve", "--demo", "--local-addr", "127.0.0.1:0"])
        .args(extra)
        .env_remove("JOURNAL_HOME")
        .env("XDG_DATA_HOME", data)
        // `journal` is on PATH only once the test puts it in `data/bin`.
        .env("PATH", format!("{}:/usr/bin:/bin", data.join("bin").display()))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut printed = String::new();
    // Bounded: the banner is a few dozen lines.
    for _ in 0..400 {
        let Some(Ok(line)) = lines.next() else { break };
        printed.push_str(&line);
        printed.push('\n');
        if line.contains("press Ctrl-C") {
            break;
        }
    }
    std::thread::spawn(move || lines.for_each(drop));
    let at = printed.find("at http://").expect("the address is printed") + 3;
    let url = printed[at..].split_whitespace().next().unwrap().to_string();
    (Served(Some(child)), printed, url)
}

/// Stops a demo server as Ctrl-C would, and checks that it stopped cleanly.
fn stop(mut served: Served) {
    let mut child = served.0.take().unwrap();
    rustix::process::kill_process(
        rustix::process::Pid::from_raw(child.id() as i32).unwrap(),
        rustix::process::Signal::TERM,
    )
    .unwrap();
    assert!(child.wait().unwrap().success());
}

/// The demo a new user starts stays: the second start serves the same journal, whose key (printed
/// once) still works; each start prints a pairing code for that journal and the clients' lines;
/// commands run without --journal act on the journal being served and say so; `--fresh` starts
/// afresh. A command that only reads or pairs never makes an empty journal.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_demo_stays_and_commands_find_the_journal_being_served() {
    let data = tempfile::tempdir().unwrap();
    let (child, printed, url) = serve_demo(data.path(), &[]);
    let demo = data.path().join("journal-demo");
    assert!(
        printed.contains(&format!("serving {}", demo.canonicalize().unwrap().display())),
        "{printed}"
    );
    let at = printed.find("jk_").expect("the key is printed");
    let key: String = printed[at..]
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-')
        .collect();
    assert_eq!(key.len(), 46, "{key}");
    assert!(printed.contains("pairing code works once"), "{printed}");
    assert!(
        printed.contains(&format!("claude mcp add --scope user --transport http journal {url}")),
        "{printed}"
    );
    assert!(printed.contains("/app/signin?t="), "{printed}");
    // The key works.
    crate::harness::Client::connected(&url, &key).await;
    // `journal` is not on PATH (as after `cargo run`): the commands printed name this program's
    // path, and run as printed.
    let exe = std::path::Path::new(env!("CARGO_BIN_EXE_journal"))
        .canonicalize()
        .unwrap();
    let at = printed
        .find("mcp pairing generate` makes another")
        .expect("the command is printed");
    let command = &printed[printed[..at].rfind('`').unwrap() + 1..at + "mcp pairing generate".len()];
    assert_ne!(command, "journal mcp pairing generate", "{printed}");
    assert!(printed.contains("`journal` is not on your PATH yet"), "{printed}");
    assert!(printed.contains(&format!("{} app", command.trim_end_matches(" mcp pairing generate"))));
    let ran = Command::new("sh")
        .args(["-c", command])
        .env_remove("JOURNAL_HOME")
        .env("XDG_DATA_HOME", data.path())
        .env("PATH", "/usr/bin:/bin")
        .output()
        .unwrap();
    assert!(ran.status.success(), "{}", String::from_utf8_lossy(&ran.stderr));

    // Without --journal, while it is served, commands act on it (there is no default journal).
    let listed = as_user(data.path(), &["mcp", "token", "list"]);
    assert!(listed.status.success(), "{}", String::from_utf8_lossy(&listed.stderr));
    assert!(String::from_utf8_lossy(&listed.stdout).contains("demo"));
    let said = String::from_utf8_lossy(&listed.stderr).to_string();
    assert!(
        said.contains(&format!("using the journal the server at {url} serves")),
        "{said}"
    );
    let code = as_user(data.path(), &["mcp", "pairing", "generate"]);
    assert!(code.status.success(), "{}", String::from_utf8_lossy(&code.stderr));
    assert!(
        !data.path().join("journal").exists(),
        "no empty default journal was made"
    );
    stop(child);

    // Stopped: a command that only reads or pairs says what to run, and makes nothing.
    let refused = as_user(data.path(), &["mcp", "pairing", "generate"]);
    assert_eq!(refused.status.code(), Some(1));
    let said = String::from_utf8_lossy(&refused.stderr).to_string();
    assert!(
        said.contains("there is no journal in") && said.contains("journal init"),
        "{said}"
    );
    assert_eq!(said.trim_end().lines().count(), 1, "{said}");
    assert!(!data.path().join("journal").exists());
    let named = data.path().join("named");
    let refused = as_user(data.path(), &["--journal", named.to_str().unwrap(), "app", "--no-open"]);
    assert_eq!(refused.status.code(), Some(1));
    assert!(!named.exists(), "no journal made at a named folder either");

    // Started again: the same journal, the same key, a new pairing code; with `journal` on PATH
    // now, the commands name it.
    std::fs::create_dir(data.path().join("bin")).unwrap();
    std::os::unix::fs::symlink(&exe, data.path().join("bin/journal")).unwrap();
    let (child, printed, url) = serve_demo(data.path(), &[]);
    assert!(printed.contains("`journal mcp pairing generate`"), "{printed}");
    assert!(!printed.contains("not on your PATH"), "{printed}");
    assert!(printed.contains("made at the first start still works"), "{printed}");
    assert!(!printed.contains("jk_"), "a key is shown once: {printed}");
    assert!(printed.contains("pairing code works once"), "{printed}");
    crate::harness::Client::connected(&url, &key).await;
    // Afresh is refused while it is served.
    let (busy, busy_printed, _) = {
        let out = as_user(
            data.path(),
            &["serve", "--demo", "--fresh", "--local-addr", "127.0.0.1:0"],
        );
        (out.status, String::from_utf8_lossy(&out.stderr).to_string(), ())
    };
    assert_eq!(busy.code(), Some(1), "{busy_printed}");
    assert!(busy_printed.contains("being served"), "{busy_printed}");
    stop(child);

    // Afresh: a new journal, a new key; the old one no longer works.
    let (child, printed, url) = serve_demo(data.path(), &["--fresh"]);
    assert!(printed.contains("jk_"), "{printed}");
    let old = crate::harness::Client::new(&url, Some(&key));
    let init = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    assert_eq!(old.post(&init).await.status, 401);
    stop(child);
    // What --fresh removes is only what `serve --demo` made.
    std::fs::remove_file(demo.join(".journal-demo")).unwrap();
    let out = as_user(
        data.path(),
        &["serve", "--demo", "--fresh", "--local-addr", "127.0.0.1:0"],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("was not made by `journal serve --demo`"));
    assert!(demo.join("journal.db").exists());
}
