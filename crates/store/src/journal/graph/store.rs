//! `graph.jsonl`: the graph's one file, a connection a line, as JSON.
//!
//! Loading never fails on content: a line that is not a valid connection (or repeats an id) is
//! reported with its line number and passed over, and kept as it is when the file is written again,
//! so a typo in a hand edit is never lost to an agent's write. Every change is a read, change and
//! write of the whole file under `graph.lock` (an advisory lock the system drops when its process
//! dies, so a crashed process never keeps it), written atomically and durably (`fsio`). Several
//! processes (a server, stdio agents, the CLI) may change the graph at once; each change sees the
//! ones before it.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::Edge;
use crate::fsio;

/// The graph's file in the journal folder.
pub const FILE: &str = "graph.jsonl";
/// The lock beside it.
const LOCK: &str = "graph.lock";
/// How long a change waits for another process's change before giving up.
pub const LOCK_WAIT: Duration = Duration::from_secs(5);
/// The most connections the graph holds; beyond it, new ones are refused.
pub const MAX_CONNECTIONS: usize = 100_000;
/// The most connections one agent may have made: no agent fills the graph for the others.
pub const MAX_CONNECTIONS_PER_AGENT: usize = 10_000;
/// The most bytes of notes one agent may keep on connections (about 500 notes of the longest kind,
/// or thousands of sentences): with the connections' own cap, what one agent adds to the file every
/// graph write rewrites stays a few megabytes.
pub const MAX_NOTE_BYTES_PER_AGENT: usize = 2 * 1024 * 1024;
/// The most connections between the same two items, one per type: distinct types do not make an
/// endless number of them.
pub const MAX_CONNECTIONS_PER_PAIR: usize = 16;

/// Why the graph could not be read or changed. Nothing changed in any case.
#[derive(Debug, thiserror::Error)]
pub enum GraphFileError {
    #[error("the graph file could not be read or written: {0}")]
    Io(#[from] io::Error),
    #[error("another process is changing the graph; try again in a moment")]
    Busy,
}

/// A line that is not a connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// 1-based.
    pub line: usize,
    pub message: String,
}

/// One line of the file as read.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Line {
    Edge(Edge),
    /// Kept as written (a bad line, or a blank one).
    Other(String),
}

/// The graph as its file holds it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Graph {
    lines: Vec<Line>,
    /// The lines that were passed over.
    pub problems: Vec<Problem>,
}

/// What reading `graph.jsonl` keeps, whatever its text (the fuzz target `graph_lines` and its
/// proptest twin check it): no panic; written again and read back, the same connections and the
/// same lines kept as they were; no id twice. Panics with the input when one does not hold.
pub fn check_lines(text: &str) {
    let graph = Graph::parse(text);
    let again = Graph::parse(&graph.to_text());
    assert_eq!(graph.lines, again.lines, "{text:?}");
    let mut ids: Vec<&str> = graph.connections().map(|c| c.id.as_str()).collect();
    let count = ids.len();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), count, "an id twice: {text:?}");
    assert!(
        graph
            .problems
            .iter()
            .all(|p| p.line >= 1 && p.line <= text.lines().count()),
        "{text:?}"
    );
}

impl Graph {
    /// Reads the file's text.
    pub fn parse(text: &str) -> Graph {
        let mut graph = Graph::default();
        let mut ids = std::collections::HashSet::new();
        for (at, raw) in text.lines().enumerate() {
            if raw.trim().is_empty() {
                graph.lines.push(Line::Other(raw.to_string()));
                continue;
            }
            let read = serde_json::from_str::<Edge>(raw)
                .map_err(|e| format!("not a connection: {e}"))
                .and_then(|c| c.check().map(|()| c))
                .and_then(|c| {
                    if ids.insert(c.id.clone()) {
                        Ok(c)
                    } else {
                        Err(format!("the id {} is on an earlier line too", c.id))
                    }
                });
            match read {
                Ok(connection) => graph.lines.push(Line::Edge(connection)),
                Err(message) => {
                    graph.problems.push(Problem { line: at + 1, message });
                    graph.lines.push(Line::Other(raw.to_string()));
                }
            }
        }
        graph
    }

    /// The file's text: a connection a line, the other lines as they were.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        for line in &self.lines {
            match line {
                Line::Edge(c) => out.push_str(&serde_json::to_string(c).unwrap_or_default()),
                Line::Other(raw) => out.push_str(raw),
            }
            out.push('\n');
        }
        out
    }

    pub fn connections(&self) -> impl Iterator<Item = &Edge> {
        self.lines.iter().filter_map(|line| match line {
            Line::Edge(c) => Some(c),
            Line::Other(_) => None,
        })
    }

    pub fn len(&self) -> usize {
        self.connections().count()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn get(&self, id: &str) -> Option<&Edge> {
        self.connections().find(|c| c.id == id)
    }

    pub fn get_mut(&mut self, id: &str) -> Option<&mut Edge> {
        self.lines.iter_mut().find_map(|line| match line {
            Line::Edge(c) if c.id == id => Some(c),
            _ => None,
        })
    }

    /// Adds a connection at the end (its id must be new; `add` checks).
    pub fn push(&mut self, connection: Edge) {
        self.lines.push(Line::Edge(connection));
    }

    /// Removes a connection; answers it.
    pub fn remove(&mut self, id: &str) -> Option<Edge> {
        let at = self
            .lines
            .iter()
            .position(|line| matches!(line, Line::Edge(c) if c.id == id))?;
        match self.lines.remove(at) {
            Line::Edge(c) => Some(c),
            Line::Other(_) => None,
        }
    }

    /// Makes the connection `id` what `state` is: replaced where it is, added at the end, or (None)
    /// removed. How the history puts a connection back as it was.
    pub fn put(&mut self, id: &str, state: Option<Edge>) {
        match (state, self.get_mut(id)) {
            (Some(state), Some(now)) => *now = state,
            (Some(state), None) => self.push(state),
            (None, _) => {
                self.remove(id);
            }
        }
    }

    /// Renames an item wherever a connection names it (a note that moved).
    pub fn rename_item(&mut self, from: &str, to: &str) -> usize {
        let mut renamed = 0;
        for line in &mut self.lines {
            // A connection would never join an item to itself: such a one keeps its old name.
            if let Line::Edge(c) = line
                && c.touches(from)
                && !c.touches(to)
            {
                for end in [&mut c.from, &mut c.to] {
                    if end == from {
                        *end = to.to_string();
                        renamed += 1;
                    }
                }
            }
        }
        renamed
    }
}

/// The graph's file in the journal folder `root`.
pub fn path(root: &Path) -> PathBuf {
    root.join(FILE)
}

/// Reads the graph (an empty one when there is no file yet).
pub fn load(root: &Path) -> Result<Graph, GraphFileError> {
    match fs::read_to_string(path(root)) {
        Ok(text) => Ok(Graph::parse(&text)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Graph::default()),
        Err(e) => Err(GraphFileError::Io(e)),
    }
}

/// Changes the graph: reads it under the lock, lets `change` change it, and writes it back when
/// `change` answers `Ok` (nothing is written otherwise). Blocking: call it off the async threads.
pub fn update<T, E: From<GraphFileError>>(
    root: &Path,
    change: impl FnOnce(&mut Graph) -> Result<T, E>,
) -> Result<T, E> {
    update_then(root, LOCK_WAIT, change, |_| Ok(()))
}

/// `update`, then `written` once the file is written (or left as it was), still under the lock:
/// the history marks a change done there, so that no other process sees it recorded and not done
/// while its writer lives. Waits `wait` for the lock.
pub fn update_then<T, E: From<GraphFileError>>(
    root: &Path,
    wait: Duration,
    change: impl FnOnce(&mut Graph) -> Result<T, E>,
    written: impl FnOnce(&T) -> Result<(), E>,
) -> Result<T, E> {
    let _lock = fsio::Lock::take(&root.join(LOCK), wait).map_err(|e| match e {
        fsio::LockError::Busy => GraphFileError::Busy,
        fsio::LockError::Io(e) => GraphFileError::Io(e),
    })?;
    remove_stale_temps(root);
    let mut graph = load(root)?;
    let before = graph.clone();
    let answer = change(&mut graph)?;
    if graph != before {
        fsio::write_atomic(&path(root), graph.to_text().as_bytes()).map_err(GraphFileError::Io)?;
    }
    written(&answer)?;
    Ok(answer)
}

/// The first of `items` some connection names, if any. Reads the file without the lock (it is
/// only ever replaced whole), and parses it only when one of the items' keys appears in it.
pub fn names_any(root: &Path, items: &[String]) -> Result<Option<String>, GraphFileError> {
    let text = match fs::read_to_string(path(root)) {
        Ok(text) => text,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(GraphFileError::Io(e)),
    };
    let appears = |item: &String| serde_json::to_string(item).is_ok_and(|quoted| text.contains(&quoted));
    if !items.iter().any(appears) {
        return Ok(None);
    }
    let graph = Graph::parse(&text);
    Ok(items
        .iter()
        .find(|item| graph.connections().any(|c| c.touches(item)))
        .cloned())
}

/// The temporary files (`.graph.jsonl.<random>.tmp`) in the journal folder: under the lock, what a
/// writer killed before its rename left.
pub fn stale_temps(root: &Path) -> Vec<PathBuf> {
    let Ok(entries) = fs::read_dir(root) else {
        return Vec::new();
    };
    let prefix = format!(".{FILE}.");
    entries
        .flatten()
        .filter(|entry| {
            let name = entry.file_name();
            name.to_str()
                .is_some_and(|n| n.starts_with(&prefix) && n.ends_with(".tmp"))
        })
        .map(|entry| entry.path())
        .collect()
}

/// Removes the temporary files a writer killed before its rename left. Called under the lock,
/// when no live writer has one.
fn remove_stale_temps(root: &Path) {
    for temp in stale_temps(root) {
        let _ = fs::remove_file(temp);
    }
}

/// Renames notes in the graph (`(from, to)` note paths), if the journal has a graph.
pub async fn rename_notes(root: &std::path::Path, renames: Vec<(String, String)>) {
    let root = root.to_path_buf();
    // No graph yet, nothing to follow (and no lock file made for nothing).
    if renames.is_empty() || !path(&root).exists() {
        return;
    }
    let renamed = tokio::task::spawn_blocking(move || {
        update(&root, |graph| {
            Ok::<usize, GraphFileError>(
                renames
                    .iter()
                    .map(|(from, to)| graph.rename_item(&format!("note:{from}"), &format!("note:{to}")))
                    .sum(),
            )
        })
    })
    .await;
    match renamed {
        Ok(Ok(_)) => {}
        Ok(Err(error)) => {
            tracing::error!(%error, "moved notes' connections still name their old paths; fix graph.jsonl by hand")
        }
        Err(error) => tracing::error!(%error, "moved notes' connections could not be followed"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::journal::graph::Author;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

        /// The twin of the fuzz target `graph_lines`: lines that are connections, near-connections
        /// and anything else, in any order.
        #[test]
        fn any_graph_file_reads_and_writes_back_the_same(lines in prop::collection::vec(prop_oneof![
            (prop::sample::select(vec!["c-aaaaaaaaaa", "c-bbbbbbbbbb", "c-AAAA", "x"]),
             prop::sample::select(vec!["note:a.md", "entity:e", "facet:work", "segment:2026-12-04/101500", "a.md", ""]),
             prop::sample::select(vec!["note:b.md", "note:a.md", "entity:f"]))
                .prop_map(|(id, from, to)| line(id, from, to)),
            "[ -~]{0,40}",
            Just(String::new()),
            Just(r#"{"id":"c-cccccccccc","from":"note:a.md","to":"note:b.md","created_at":"2026-12-04T18:00:00Z","notes":[{"author":"agent:x~0123abcd","text":"t","at":"2026-12-04T18:00:00Z"}]}"#.to_string()),
        ], 0..12)) {
            check_lines(&lines.join("\n"));
        }
    }

    fn line(id: &str, from: &str, to: &str) -> String {
        format!(r#"{{"id":"{id}","from":"{from}","to":"{to}","created_at":"2026-12-04T18:00:00Z"}}"#)
    }

    #[test]
    fn a_writers_temporary_file_left_by_a_kill_goes_with_the_next_change() {
        let dir = tempfile::tempdir().unwrap();
        let stale = dir.path().join(".graph.jsonl.0123456789ab.tmp");
        let other = dir.path().join(".journal.toml.0123456789ab.tmp");
        fs::write(&stale, "half a graph").unwrap();
        fs::write(&other, "not the graph's").unwrap();
        update(dir.path(), |_| Ok::<_, GraphFileError>(())).unwrap();
        assert!(!stale.exists());
        assert!(other.exists());
    }

    #[test]
    fn a_bad_line_is_reported_with_its_number_skipped_and_kept() {
        let text = [
            line("c-aaaaaaaaaa", "note:a.md", "note:b.md"),
            "{not json".to_string(),
            String::new(),
            line("c-aaaaaaaaaa", "note:a.md", "note:c.md"),
            line("c-bbbbbbbbbb", "note:a.md", "page:c"),
            r#"{"id":"c-cccccccccc","from":"note:a.md","to":"note:c.md","created_at":"2026-12-04T18:00:00Z","colour":"red"}"#
                .to_string(),
            line("c-dddddddddd", "facet:f-1", "entity:e-1"),
        ]
        .join("\n")
            + "\n";
        let graph = Graph::parse(&text);
        assert_eq!(graph.len(), 2);
        let lines: Vec<usize> = graph.problems.iter().map(|p| p.line).collect();
        assert_eq!(lines, [2, 4, 5, 6]);
        assert!(
            graph.problems[1].message.contains("earlier line"),
            "{:?}",
            graph.problems
        );
        assert!(graph.problems[2].message.contains("to:"), "{:?}", graph.problems);
        assert!(graph.problems[3].message.contains("colour"), "{:?}", graph.problems);
        // Written again, every line is where it was, the bad ones as they were.
        assert_eq!(graph.to_text(), text);
    }

    #[test]
    fn changes_are_written_whole_and_only_when_something_changed() {
        let dir = tempfile::tempdir().unwrap();
        assert!(load(dir.path()).unwrap().is_empty());
        let added: Result<(), GraphFileError> = update(dir.path(), |graph| {
            graph.push(super::super::Edge {
                id: "c-aaaaaaaaaa".into(),
                from: "note:a.md".into(),
                to: "note:b.md".into(),
                kind: None,
                created_by: Some(Author::agent("claude")),
                created_at: "2026-12-04T18:00:00Z".into(),
                type_by: None,
                notes: Vec::new(),
            });
            Ok(())
        });
        added.unwrap();
        let text = fs::read_to_string(path(dir.path())).unwrap();
        assert_eq!(
            text,
            "{\"id\":\"c-aaaaaaaaaa\",\"from\":\"note:a.md\",\"to\":\"note:b.md\",\"created_by\":\"agent:claude\",\
             \"created_at\":\"2026-12-04T18:00:00Z\"}\n"
        );
        // A refused change writes nothing.
        let refused: Result<(), GraphFileError> = update(dir.path(), |graph| {
            graph.remove("c-aaaaaaaaaa");
            Err(GraphFileError::Busy)
        });
        assert!(refused.is_err());
        assert_eq!(load(dir.path()).unwrap().len(), 1);
        let renamed: Result<usize, GraphFileError> =
            update(dir.path(), |graph| Ok(graph.rename_item("note:a.md", "note:z.md")));
        assert_eq!(renamed.unwrap(), 1);
        assert_eq!(load(dir.path()).unwrap().get("c-aaaaaaaaaa").unwrap().from, "note:z.md");
        // Never onto its other end: that connection keeps its name.
        let onto_itself: Result<usize, GraphFileError> =
            update(dir.path(), |graph| Ok(graph.rename_item("note:z.md", "note:b.md")));
        assert_eq!(onto_itself.unwrap(), 0);
        assert!(load(dir.path()).unwrap().problems.is_empty());
    }

    #[test]
    fn changes_from_many_threads_are_all_kept() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_path_buf();
        let threads: Vec<_> = (0..8)
            .map(|t| {
                let root = root.clone();
                std::thread::spawn(move || {
                    for i in 0..10 {
                        let done: Result<(), GraphFileError> = update(&root, |graph| {
                            graph.push(super::super::Edge {
                                id: format!("c-{t}{i:09}"),
                                from: format!("note:{t}.md"),
                                to: format!("note:{i}-x.md"),
                                kind: None,
                                created_by: None,
                                created_at: "2026-12-04T18:00:00Z".into(),
                                type_by: None,
                                notes: Vec::new(),
                            });
                            Ok(())
                        });
                        done.unwrap();
                    }
                })
            })
            .collect();
        for thread in threads {
            thread.join().unwrap();
        }
        let graph = load(&root).unwrap();
        assert_eq!(graph.len(), 80);
        assert!(graph.problems.is_empty());
    }
}
