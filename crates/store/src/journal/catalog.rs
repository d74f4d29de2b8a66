//! The catalog: keeps `items` in journal.db and the search index in step with the files.
//!
//! A sync walks the content folders, compares each file's size and modification time with the
//! catalog, parses what changed, updates the index (commit first) and then the catalog. Because the
//! index is written first and every file's documents are replaced as a whole, a crash between the two
//! steps only means the next sync indexes those files again. A file that cannot be parsed is recorded
//! with its error (and left out of search) until it changes again. Sync runs at start, after the
//! journal's own writes, and periodically in the server, so hand edits appear without a restart.

use std::collections::HashMap;
use std::fs;
use std::path::Path;
use std::sync::Arc;
use std::time::UNIX_EPOCH;

use sqlx::Row;

use super::background;
use super::entity::Entity;
use super::facet::Facet;
use super::index::IndexDoc;
use super::prepared::{Prepared, Written};
use super::transcript::Segment;
use super::{Journal, JournalError};

/// What a sync did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct SyncReport {
    pub indexed: usize,
    pub removed: usize,
    /// Files that could not be read, with why.
    pub failed: Vec<(String, String)>,
    pub facets_changed: bool,
    /// True when another process holds the index writer; the changes wait for the next sync.
    pub deferred: bool,
    /// Bytes of text indexed.
    pub bytes: u64,
    /// Content folders whose files were listed.
    pub folders_scanned: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Facet,
    Transcript,
    Entity,
}

impl Kind {
    fn as_str(self) -> &'static str {
        match self {
            Kind::Facet => "facet",
            Kind::Transcript => "transcript",
            Kind::Entity => "entity",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    mtime_ns: i64,
    size: i64,
}

impl SyncReport {
    /// Adds what one chunk (or the notes' part) of a sync did.
    pub fn add(&mut self, chunk: SyncReport) {
        self.indexed += chunk.indexed;
        self.removed += chunk.removed;
        self.failed.extend(chunk.failed);
        self.facets_changed |= chunk.facets_changed;
        self.bytes += chunk.bytes;
        self.deferred |= chunk.deferred;
        self.folders_scanned += chunk.folders_scanned;
    }
}

/// A file to index: its path, kind and stamp, and its segment when this process just wrote it.
type ChangedFile = (String, Kind, Stamp, Option<Written<Segment>>);

/// The catalog row of one parsed file.
struct Parsed {
    path: String,
    kind: Kind,
    stamp: Stamp,
    day: Option<i64>,
    start: Option<i64>,
    title: String,
    facets: Vec<String>,
    error: Option<String>,
    docs: Vec<IndexDoc>,
}

/// How thorough a sync is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Depth {
    /// Every file is checked (at open, on reindex, and periodically for edits made in place).
    Full,
    /// Only folders whose modification time changed are listed: a file created, renamed or deleted
    /// changes its folder's time, so new and removed files (and the journal's own atomic writes) show
    /// up at once, at the cost of a `stat` per folder instead of one per file.
    Quick,
}

/// Brings the catalog and index up to date with the files. Callers hold the journal's sync lock.
pub(super) async fn sync(
    journal: &Arc<Journal>,
    depth: Depth,
    prepared: &mut Prepared,
) -> Result<SyncReport, JournalError> {
    let root = journal.root().to_path_buf();
    let folders = background::run("scanning", move || content_folders(&root)).await??;
    let previous = journal.folder_stamps.lock().map(|s| s.clone()).unwrap_or_default();
    let full = depth == Depth::Full || previous.is_none();
    let (to_scan, gone): (Vec<String>, Vec<String>) = match &previous {
        Some(previous) if !full => (
            folders
                .iter()
                .filter(|(dir, time)| previous.get(*dir) != Some(time))
                .map(|(dir, _)| dir.clone())
                .collect(),
            previous
                .keys()
                .filter(|dir| !folders.contains_key(*dir))
                .cloned()
                .collect(),
        ),
        _ => (folders.keys().cloned().collect(), Vec::new()),
    };
    if !full && to_scan.is_empty() && gone.is_empty() {
        return Ok(SyncReport::default());
    }
    let known = if full {
        known_rows(journal, None).await?
    } else {
        let mut known = HashMap::new();
        for dir in to_scan.iter().chain(&gone) {
            known.extend(known_rows(journal, Some(dir)).await?);
        }
        known
    };
    let worker = Arc::clone(journal);
    let scope = (!full).then(|| to_scan.clone());
    let (changed, removed) = background::run("scanning", move || plan_changes(&worker, known, scope)).await??;
    let mut changed: Vec<ChangedFile> = changed
        .into_iter()
        .map(|(path, kind, stamp)| {
            let segment = (kind == Kind::Transcript)
                .then(|| prepared.take_segment(&path, stamp.size))
                .flatten();
            (path, kind, stamp, segment)
        })
        .collect();
    let mut report = SyncReport::default();
    // Removals go with the first chunk; every chunk is indexed and committed, then cataloged, so
    // a sync holds one chunk's text at a time and a crash or a busy writer keeps every chunk done.
    // A chunk's catalog rows are written while the next chunk is parsed and indexed: SQLite and
    // tantivy then share the two cores instead of taking turns.
    let mut gone_now = removed;
    let mut cataloging: Option<tokio::task::JoinHandle<Result<(), JournalError>>> = None;
    while !changed.is_empty() || !gone_now.is_empty() {
        let rest = changed.split_off(changed.len().min(CHUNK_FILES));
        let chunk = std::mem::replace(&mut changed, rest);
        let gone = std::mem::take(&mut gone_now);
        let worker = Arc::clone(journal);
        let outcome = tokio::task::spawn_blocking(move || index_chunk(&worker, chunk, gone)).await;
        if let Some(previous) = cataloging.take() {
            finish(previous).await?;
        }
        let outcome = outcome.map_err(|e| JournalError::Invalid(format!("the indexing task failed: {e}")))??;
        let Some((parsed, gone, done)) = outcome else {
            report.deferred = true;
            return Ok(report);
        };
        report.add(done);
        let worker = Arc::clone(journal);
        cataloging = Some(tokio::spawn(
            async move { write_catalog(&worker, &parsed, &gone).await },
        ));
    }
    if let Some(previous) = cataloging.take() {
        finish(previous).await?;
    }
    let new_stamps = match previous {
        Some(mut stamps) if !full => {
            for dir in &to_scan {
                stamps.insert(dir.clone(), folders[dir]);
            }
            for dir in &gone {
                stamps.remove(dir);
            }
            stamps
        }
        _ => folders,
    };
    report.folders_scanned = to_scan.len();
    if let Ok(mut stamps) = journal.folder_stamps.lock() {
        *stamps = Some(new_stamps);
    }
    for (path, error) in &report.failed {
        tracing::warn!(file = %path, %error, "a journal file could not be read; it is left out of search until it changes");
    }
    Ok(report)
}

/// Waits for a chunk's catalog transaction.
pub(super) async fn finish(task: tokio::task::JoinHandle<Result<(), JournalError>>) -> Result<(), JournalError> {
    task.await
        .map_err(|e| JournalError::Invalid(format!("the catalog task failed: {e}")))?
}

/// Files indexed per index commit and catalog transaction: what bounds a sync's memory (one chunk's
/// parsed text, about 27 MB of demo transcripts) however large the journal is. Larger chunks mean
/// fewer commits, each of which waits for tantivy's merges.
// Unit tests use tiny chunks, so that a journal of a few dozen files is synced in many.
const CHUNK_FILES: usize = if cfg!(test) { 7 } else { 20_000 };

/// Writes the catalog rows of one indexed chunk in one transaction. The rows travel as one JSON
/// array per statement (`json_each`), so a chunk costs four statements rather than a few per file,
/// and every statement stays a fixed string with bound parameters.
async fn write_catalog(journal: &Journal, parsed: &[Parsed], removed: &[String]) -> Result<(), JournalError> {
    let rows: Vec<serde_json::Value> = parsed
        .iter()
        .map(|item| {
            serde_json::json!([
                item.path,
                item.kind.as_str(),
                item.day,
                item.start,
                item.title,
                item.stamp.mtime_ns,
                item.stamp.size,
                item.error
            ])
        })
        .collect();
    let paths: Vec<&str> = parsed.iter().map(|item| item.path.as_str()).collect();
    let facets: Vec<(&str, &str)> = parsed
        .iter()
        .flat_map(|item| item.facets.iter().map(|facet| (item.path.as_str(), facet.as_str())))
        .collect();
    let mut tx = crate::db::begin_write(&journal.db).await?;
    if !removed.is_empty() {
        sqlx::query("DELETE FROM items WHERE path IN (SELECT value FROM json_each(?))")
            .bind(json_array(&removed))
            .execute(&mut *tx)
            .await?;
    }
    if !parsed.is_empty() {
        sqlx::query(
            "INSERT INTO items (path, kind, day, start, title, mtime_ns, size, error)
             SELECT value ->> 0, value ->> 1, value ->> 2, value ->> 3, value ->> 4, value ->> 5, value ->> 6, value ->> 7
             FROM json_each(?) WHERE true
             ON CONFLICT (path) DO UPDATE SET kind = excluded.kind, day = excluded.day, start = excluded.start,
               title = excluded.title, mtime_ns = excluded.mtime_ns, size = excluded.size, error = excluded.error",
        )
        .bind(json_array(&rows))
        .execute(&mut *tx)
        .await?;
        sqlx::query("DELETE FROM item_facets WHERE path IN (SELECT value FROM json_each(?))")
            .bind(json_array(&paths))
            .execute(&mut *tx)
            .await?;
        sqlx::query(
            "INSERT OR IGNORE INTO item_facets (path, facet) SELECT value ->> 0, value ->> 1 FROM json_each(?)",
        )
        .bind(json_array(&facets))
        .execute(&mut *tx)
        .await?;
    }
    tx.commit().await?;
    Ok(())
}

/// Rows as one JSON array for `json_each`. Strings, numbers and nulls always serialize.
fn json_array<T: serde::Serialize>(rows: &T) -> String {
    serde_json::to_string(rows).unwrap_or_else(|_| "[]".into())
}

/// The catalog's rows, all of them or those of one folder. Read in pages by path, so a journal of a
/// million files never holds a million database rows at once, only the map being built.
async fn known_rows(journal: &Journal, folder: Option<&str>) -> Result<HashMap<String, Stamp>, JournalError> {
    // `folder/` up to `folder0` ('0' follows '/'): the rows inside the folder, by the primary key.
    let (mut after, below) = match folder {
        None => (String::new(), None),
        Some(folder) => (format!("{folder}/"), Some(format!("{folder}0"))),
    };
    let mut known = HashMap::new();
    loop {
        let rows = sqlx::query(
            "SELECT path, mtime_ns, size FROM items WHERE path >= ?1 AND (?2 IS NULL OR path < ?2)
             AND (?3 = 0 OR path > ?1) ORDER BY path LIMIT ?4",
        )
        .bind(&after)
        .bind(&below)
        .bind(!known.is_empty())
        .bind(KNOWN_PAGE as i64)
        .fetch_all(&journal.db)
        .await?;
        let full_page = rows.len() == KNOWN_PAGE;
        for row in rows {
            let path: String = row.get(0);
            after.clone_from(&path);
            let stamp = Stamp {
                mtime_ns: row.get(1),
                size: row.get(2),
            };
            known.insert(path, stamp);
        }
        if !full_page {
            return Ok(known);
        }
    }
}

/// Catalog rows read per query by `known_rows`.
const KNOWN_PAGE: usize = if cfg!(test) { 5 } else { 10_000 };

/// Files that changed (path, kind, stamp), and catalog rows whose files are gone.
type Plan = (Vec<(String, Kind, Stamp)>, Vec<String>);

/// Compares the files on disk (all, or those of some folders) with the catalog's rows.
fn plan_changes(
    journal: &Journal,
    mut known: HashMap<String, Stamp>,
    folders: Option<Vec<String>>,
) -> Result<Plan, JournalError> {
    let on_disk = match folders {
        None => scan(journal.root())?,
        Some(folders) => scan_folders(journal.root(), &folders)?,
    };
    let mut changed = Vec::new();
    for (path, (kind, stamp)) in on_disk {
        if known.remove(&path) != Some(stamp) {
            changed.push((path, kind, stamp));
        }
    }
    // In path order, so chunks follow the folders (and a day's files are indexed together).
    changed.sort_by(|a, b| a.0.cmp(&b.0));
    Ok((changed, known.into_keys().collect()))
}

/// What one chunk left for the catalog: its parsed rows (without their text), the removed paths and
/// its part of the report. None: another process holds the index writer.
type Chunk = Option<(Vec<Parsed>, Vec<String>, SyncReport)>;

/// Parses and indexes one chunk of changed files (and removes the documents of gone ones), and
/// commits the index.
fn index_chunk(journal: &Journal, changed: Vec<ChangedFile>, removed: Vec<String>) -> Result<Chunk, JournalError> {
    if removed.is_empty()
        && changed
            .iter()
            .all(|change| change.3.as_ref().is_some_and(|w| w.indexed))
    {
        // Every file was indexed while it was written: no writer (and no commit) is needed.
        let mut report = SyncReport::default();
        let parsed: Vec<Parsed> = changed
            .into_iter()
            .filter_map(|(path, _, stamp, written)| Some(from_segment(&path, stamp, written?.value, false)))
            .collect();
        report.indexed = parsed.len();
        return Ok(Some((parsed, removed, report)));
    }
    let writer = match journal.index.writer() {
        Ok(writer) => writer,
        Err(tantivy::TantivyError::LockFailure(..)) => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    let mut report = SyncReport::default();
    let mut parsed = Vec::with_capacity(changed.len());
    for (path, kind, stamp, segment) in changed {
        report.facets_changed |= kind == Kind::Facet;
        let mut item = match segment {
            // Indexed while it was written (`preindex`): only its row is left to write.
            Some(written) if written.indexed => {
                parsed.push(from_segment(&path, stamp, written.value, false));
                report.indexed += 1;
                continue;
            }
            Some(written) => from_segment(&path, stamp, written.value, true),
            None => parse(journal.root(), &path, kind, stamp),
        };
        journal.index.remove(&writer, &path);
        for doc in std::mem::take(&mut item.docs) {
            report.bytes += doc.body.len() as u64;
            journal.index.put(&writer, &doc)?;
        }
        report.indexed += usize::from(item.error.is_none());
        if let Some(error) = &item.error {
            report.failed.push((item.path.clone(), error.clone()));
        }
        parsed.push(item);
    }
    for path in &removed {
        report.facets_changed |= path.starts_with("facets/");
        journal.index.remove(&writer, path);
    }
    report.removed = removed.len();
    journal.index.commit(writer)?;
    Ok(Some((parsed, removed, report)))
}

/// The content folders (`facets/<name>`, `entities`, `transcripts/<day>`) with their modification
/// times in nanoseconds.
fn content_folders(root: &Path) -> Result<HashMap<String, i64>, JournalError> {
    let mut folders = HashMap::new();
    let mut add = |rel: String| {
        if let Ok(meta) = fs::metadata(root.join(&rel))
            && meta.is_dir()
        {
            let time = meta
                .modified()
                .ok()
                .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos() as i64);
            folders.insert(rel, time);
        }
    };
    add("entities".to_string());
    for dir in list(root, "facets")?.into_iter().chain(list(root, "transcripts")?) {
        add(dir);
    }
    Ok(folders)
}

/// The content files of some folders, as `scan` reports them.
fn scan_folders(root: &Path, folders: &[String]) -> Result<HashMap<String, (Kind, Stamp)>, JournalError> {
    let mut files = HashMap::new();
    for folder in folders {
        if folder.starts_with("facets/") {
            let rel = format!("{folder}/facet.md");
            if let Some(stamp) = stamp(&root.join(&rel)) {
                files.insert(rel, (Kind::Facet, stamp));
            }
            continue;
        }
        let kind = if folder == "entities" {
            Kind::Entity
        } else {
            Kind::Transcript
        };
        for rel in list(root, folder)? {
            if rel.ends_with(".md")
                && let Some(stamp) = stamp(&root.join(&rel))
            {
                files.insert(rel, (kind, stamp));
            }
        }
    }
    Ok(files)
}

/// Lists every content file with its kind and stamp, by relative path.
fn scan(root: &Path) -> Result<HashMap<String, (Kind, Stamp)>, JournalError> {
    let mut files = HashMap::new();
    for facet_dir in list(root, "facets")? {
        let rel = format!("{facet_dir}/facet.md");
        if let Some(stamp) = stamp(&root.join(&rel)) {
            files.insert(rel, (Kind::Facet, stamp));
        }
    }
    for rel in list(root, "entities")? {
        if rel.ends_with(".md")
            && let Some(stamp) = stamp(&root.join(&rel))
        {
            files.insert(rel, (Kind::Entity, stamp));
        }
    }
    for day_dir in list(root, "transcripts")? {
        for rel in list(root, &day_dir)? {
            if rel.ends_with(".md")
                && let Some(stamp) = stamp(&root.join(&rel))
            {
                files.insert(rel, (Kind::Transcript, stamp));
            }
        }
    }
    Ok(files)
}

/// Names in a folder as relative paths, skipping dot-names (temporary files, hidden state) and names
/// that are not plain printable UTF-8 (they could not be referred to safely).
fn list(root: &Path, rel: &str) -> Result<Vec<String>, JournalError> {
    let dir = root.join(rel);
    let entries = match fs::read_dir(&dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound || e.kind() == std::io::ErrorKind::NotADirectory => {
            return Ok(Vec::new());
        }
        Err(e) => return Err(JournalError::io(&dir, e)),
    };
    let mut names = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| JournalError::io(&dir, e))?;
        let Some(name) = entry.file_name().to_str().map(str::to_string) else {
            continue;
        };
        if name.starts_with('.') || name.chars().any(char::is_control) {
            continue;
        }
        names.push(format!("{rel}/{name}"));
    }
    names.sort();
    Ok(names)
}

fn stamp(path: &Path) -> Option<Stamp> {
    let meta = fs::metadata(path).ok()?;
    if !meta.is_file() {
        return None;
    }
    let mtime_ns = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos() as i64);
    Some(Stamp {
        mtime_ns,
        size: meta.len() as i64,
    })
}

/// A catalog row not filled in yet.
fn unfilled(rel: &str, kind: Kind, stamp: Stamp) -> Parsed {
    Parsed {
        path: rel.to_string(),
        kind,
        stamp,
        day: None,
        start: None,
        title: rel.to_string(),
        facets: Vec::new(),
        error: None,
        docs: Vec::new(),
    }
}

/// The row of a segment this process just wrote, as `parse` would make it from the file, with its
/// search document unless it was indexed while written.
fn from_segment(rel: &str, stamp: Stamp, segment: Segment, with_doc: bool) -> Parsed {
    let mut item = unfilled(rel, Kind::Transcript, stamp);
    fill_segment(&mut item, segment, with_doc);
    item
}

fn parse(root: &Path, rel: &str, kind: Kind, stamp: Stamp) -> Parsed {
    let mut item = unfilled(rel, kind, stamp);
    let text = match fs::read_to_string(root.join(rel)) {
        Ok(text) => text,
        Err(e) => {
            item.error = Some(e.to_string());
            return item;
        }
    };
    let result = match kind {
        Kind::Facet => {
            let folder = rel.split('/').nth(1).unwrap_or_default();
            Facet::parse(&text)
                .and_then(|facet| super::facet::matches_folder(facet, folder))
                .map(|facet| fill_facet(&mut item, facet))
        }
        Kind::Entity => Entity::parse(&text).map(|(entity, _body)| fill_entity(&mut item, entity)),
        Kind::Transcript => Segment::parse(&text).map(|segment| fill_segment(&mut item, segment, true)),
    };
    if let Err(error) = result {
        item.error = Some(error);
    }
    item
}

fn fill_facet(item: &mut Parsed, facet: Facet) {
    item.title = facet.display_title().to_string();
    item.facets = vec![facet.name.clone()];
    item.docs.push(IndexDoc {
        file: item.path.clone(),
        path: item.path.clone(),
        category: "facets",
        day: None,
        facets: item.facets.clone(),
        title: item.title.clone(),
        body: format!("{}\n{}", facet.name, facet.description),
        ..IndexDoc::default()
    });
}

fn fill_entity(item: &mut Parsed, entity: Entity) {
    item.title = entity.name.clone();
    item.facets = entity.facets.keys().cloned().collect();
    let day = entity
        .last_seen
        .as_deref()
        .and_then(|d| super::day::Day::parse(d).ok())
        .map(|d| d.as_number());
    item.docs.push(IndexDoc {
        file: item.path.clone(),
        path: item.path.clone(),
        category: "entities",
        day,
        facets: item.facets.clone(),
        title: entity.name.clone(),
        body: format!("{} ({})\n{}", entity.name, entity.kind.as_str(), entity.aka.join("\n")),
        ..IndexDoc::default()
    });
    // Each description is its own document filed under only its facet, so that a search scoped to
    // other facets can never match or quote it.
    for (facet, description) in &entity.facets {
        item.docs.push(IndexDoc {
            file: item.path.clone(),
            path: item.path.clone(),
            category: "entities",
            day,
            facets: vec![facet.clone()],
            title: entity.name.clone(),
            body: description.clone(),
            ..IndexDoc::default()
        });
    }
}

/// A segment's row, and its search document when `with_doc`.
fn fill_segment(item: &mut Parsed, segment: Segment, with_doc: bool) {
    item.title = segment.title();
    item.day = Some(segment.day.as_number() as i64);
    item.start = Some(i64::from(segment.start));
    item.facets = segment.head.facets.clone();
    if with_doc {
        item.docs.push(segment_doc(&item.path, &segment));
    }
}

/// The search document of the segment at `path` (under the journal's root).
pub fn segment_doc(path: &str, segment: &Segment) -> IndexDoc {
    IndexDoc {
        file: path.to_string(),
        path: path.to_string(),
        category: "transcripts",
        day: Some(segment.day.as_number()),
        facets: segment.head.facets.clone(),
        title: segment.title(),
        body: segment.searchable_text(),
        ..IndexDoc::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::journal::day::Day;
    use crate::journal::demo;

    async fn count(journal: &Journal, sql: &'static str) -> usize {
        let n: i64 = sqlx::query_scalar(sql).fetch_one(&journal.db).await.unwrap();
        n as usize
    }

    #[tokio::test]
    async fn a_sync_of_many_chunks_catalogs_and_indexes_every_file_once() {
        let dir = tempfile::tempdir().unwrap();
        let options = demo::DemoOptions {
            days: 5,
            segments_per_day: 5,
            seed: 3,
            end: Day::parse("2026-11-30").unwrap(),
            notes: 0,
        };
        let written = demo::write(dir.path(), &options).unwrap();
        let files = written.facets + written.entities + written.segments;
        assert!(files > 3 * CHUNK_FILES, "{files} files make several chunks");
        let journal = Journal::open(dir.path()).await.unwrap();
        assert_eq!(count(&journal, "SELECT count(*) FROM items").await, files);
        assert_eq!(
            count(&journal, "SELECT count(*) FROM items WHERE error IS NOT NULL").await,
            0
        );
        assert_eq!(
            count(
                &journal,
                "SELECT count(DISTINCT path) FROM item_facets WHERE path LIKE 'transcripts/%'"
            )
            .await,
            written.segments,
            "every segment's facets are cataloged"
        );
        let documents = journal.index.len();
        assert!(documents as usize >= files);

        let segments: Vec<String> = sqlx::query_scalar("SELECT path FROM items WHERE kind = 'transcript' LIMIT 2")
            .fetch_all(&journal.db)
            .await
            .unwrap();
        for path in &segments {
            std::fs::remove_file(dir.path().join(path)).unwrap();
        }
        let report = journal.sync_to(Depth::Full).await.unwrap();
        assert_eq!((report.indexed, report.removed), (0, 2));
        assert_eq!(count(&journal, "SELECT count(*) FROM items").await, files - 2);
        assert_eq!(journal.index.len(), documents - 2);

        let report = journal.reindex().await.unwrap();
        assert_eq!(report.indexed, files - 2 + crate::journal::demo_notes::NOTE_COUNT);
        assert_eq!(journal.index.len(), documents - 2, "replaced, not added twice");
        assert_eq!(count(&journal, "SELECT count(*) FROM items").await, files - 2);
        let notes = count(&journal, "SELECT count(*) FROM notes").await;
        assert_eq!(notes, crate::journal::demo_notes::NOTE_COUNT);

        // Another holder of the index (a running server): the reindex changes nothing.
        let held = journal.index.writer().unwrap();
        let report = journal.reindex().await.unwrap();
        assert!(report.deferred);
        assert_eq!(report.indexed, 0);
        assert_eq!(count(&journal, "SELECT count(*) FROM items").await, files - 2);
        assert_eq!(count(&journal, "SELECT count(*) FROM notes").await, notes);
        assert_eq!(journal.index.len(), documents - 2);
        drop(held);
        assert!(!journal.notes.needs_reset(), "the notes are not forgotten either");
    }
}
