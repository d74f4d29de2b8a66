//! Keeping the notes catalog, the search index and the in-memory `NoteSet` in step with the vault.
//!
//! Same order as the journal's catalog (`catalog.rs`): the index is committed first, then the
//! `notes` rows, then the set is swapped, so a crash between steps only means reading some notes
//! again. A private note is catalogued (its metadata says it is private) but never indexed, so its
//! words cannot surface in any search. A note that cannot be read keeps its row with the error and
//! is served nowhere until it changes.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use sqlx::Row;
use tantivy::IndexWriter;

use super::note::{self, Access, Note, file_key};
use super::scan::{self, Stamp};
use super::set::NoteSet;
use super::{index_key, rules};
use crate::db::Pool;
use crate::journal::background;
use crate::journal::catalog::{Depth, SyncReport, finish};
use crate::journal::day::Day;
use crate::journal::index::IndexDoc;
use crate::journal::prepared::{Prepared, PreparedNote, Written, body_at};
use crate::journal::{Journal, JournalError};

/// A full scan (a `stat` of every note) runs at the latest this many times its own duration after
/// the last one began: at most about 5% of a core, however large the vault. Editors often save in
/// place, which changes no folder's time, so a small vault (a full scan of a few milliseconds) is
/// scanned whole on every pass and an edit shows within the sync interval; a vault of 100,000
/// notes every few passes.
const FULL_SCAN_SPACING: u32 = 20;

/// Notes read and indexed per index commit and catalog transaction.
const CHUNK_NOTES: usize = if cfg!(test) { 5 } else { 20_000 };

/// The catalog's readable notes, for the set at open.
pub(super) async fn load(pool: &Pool) -> Result<NoteSet, JournalError> {
    let rows = sqlx::query("SELECT path, meta FROM notes WHERE meta IS NOT NULL")
        .fetch_all(pool)
        .await?;
    let mut notes = Vec::with_capacity(rows.len());
    for row in rows {
        let meta: String = row.get(1);
        match serde_json::from_str::<Note>(&meta) {
            Ok(note) => notes.push(Arc::new(note)),
            // A row this version cannot read is read again from its file by the first full sync.
            Err(_) => {
                let path: String = row.get(0);
                tracing::debug!(%path, "a catalogued note will be read again");
            }
        }
    }
    Ok(NoteSet::new(notes))
}

/// What this process's set lacks of what other processes catalogued.
#[derive(Default)]
struct Behind {
    /// Paths whose catalog rows are newer than the set's notes.
    adopt: Vec<String>,
    /// Paths the set holds that are gone from the vault and the catalog.
    drop: Vec<String>,
}

/// The catalogued notes at these paths (a note that could not be read has no row to adopt).
async fn catalogued(pool: &Pool, paths: &[String]) -> Result<Vec<Arc<Note>>, JournalError> {
    if paths.is_empty() {
        return Ok(Vec::new());
    }
    let paths = serde_json::to_string(paths).unwrap_or_else(|_| "[]".into());
    let rows: Vec<String> = sqlx::query_scalar(
        "SELECT meta FROM notes WHERE meta IS NOT NULL AND path IN (SELECT value FROM json_each(?))",
    )
    .bind(paths)
    .fetch_all(pool)
    .await?;
    Ok(rows
        .iter()
        .filter_map(|meta| serde_json::from_str::<Note>(meta).ok())
        .map(Arc::new)
        .collect())
}

/// A changed file: its path and stamp, and the note when this process just wrote it.
type ChangedNote = (String, Stamp, Option<Written<PreparedNote>>);

/// One changed file, read.
struct Parsed {
    path: String,
    stamp: Stamp,
    /// The note, or why it could not be read.
    outcome: Result<Arc<Note>, String>,
}

/// Brings the vault's catalog, index and set up to date. Callers hold the journal's sync lock.
pub async fn sync(journal: &Arc<Journal>, depth: Depth, prepared: &mut Prepared) -> Result<SyncReport, JournalError> {
    let vault = &journal.notes;
    let mut report = SyncReport::default();
    if !vault.root.is_dir() {
        // A vault on a drive that is not mounted: serve no notes, forget nothing.
        if !vault.missing.swap(true, Ordering::SeqCst) {
            tracing::warn!(folder = %vault.root.display(), "the notes folder is missing; no notes are served until it is back");
        }
        if !vault.set().is_empty() {
            vault.replace_set(NoteSet::default());
        }
        vault.forget_stamps();
        return Ok(report);
    }
    let reset = vault.needs_reset();
    let back = vault.missing.swap(false, Ordering::SeqCst);
    if !reset && (back || !vault.loaded.load(Ordering::SeqCst)) {
        // Back again, or never read: read the catalog's notes, then check every file.
        vault.replace_set(load(&journal.db).await?);
        vault.loaded.store(true, Ordering::SeqCst);
    }
    let full_due = match vault.full_scan.lock().ok().and_then(|s| *s) {
        None => true,
        Some((at, took)) => at.elapsed() >= took * FULL_SCAN_SPACING,
    };
    let started = std::time::Instant::now();
    let previous = if depth == Depth::Full || reset || full_due {
        None
    } else {
        vault.folder_stamps.lock().ok().and_then(|s| s.clone())
    };
    let walls = vault.walls.clone();
    let scanned = {
        let previous = previous.clone();
        background::run("scanning", move || scan::scan(&walls, previous.as_ref()))
            .await?
            .map_err(|e| JournalError::io(&vault.root, e))?
    };
    let full = previous.is_none();
    if !full && scanned.listed.is_empty() && scanned.gone.is_empty() {
        return Ok(report);
    }
    // What the catalog knows of the scanned folders; what is left after the scan is gone.
    let known = if reset {
        "[]".to_string()
    } else if full {
        known_rows(&journal.db, None).await?
    } else {
        let folders: Vec<String> = scanned.listed.iter().chain(&scanned.gone).cloned().collect();
        known_rows(&journal.db, Some(&folders)).await?
    };
    // Comparing 100,000 stamps takes tens of milliseconds, kept off the runtime's threads, which
    // answer requests meanwhile, and below their priority.
    let current = vault.set();
    let (mut scanned, changed, mut removed, dropped, behind) = background::run("comparing", move || {
        let mut known = stamps_of(&known)?;
        let mut changed: Vec<(String, Stamp)> = Vec::new();
        // Files the catalog has as they are but this process's set does not: another process (a
        // stdio agent, the server, the CLI) catalogued them. Their rows are read, not indexed again.
        let mut behind = Behind::default();
        for (path, stamp) in &scanned.files {
            if known.remove(path) != Some(*stamp) {
                changed.push((path.clone(), *stamp));
            } else if !current.at(path).is_some_and(|n| stamp.describes(n)) {
                behind.adopt.push(path.clone());
            }
        }
        changed.sort_by(|a, b| a.0.cmp(&b.0));
        let mut removed: Vec<String> = known.into_keys().collect();
        removed.sort();
        // A note of a listed folder that is neither on disk nor in the catalog any more: another
        // process took it out.
        let listed: std::collections::HashSet<&str> = scanned.listed.iter().map(String::as_str).collect();
        behind.drop = current
            .all()
            .iter()
            .filter(|n| listed.contains(super::rules::folder_of(&n.path)) && !scanned.files.contains_key(&n.path))
            .filter(|n| removed.binary_search(&n.path).is_err())
            .map(|n| n.path.clone())
            .collect();
        // After a full scan, a note the set holds but the vault does not is gone too (the catalog
        // may have been emptied by a reindex while the set was loaded).
        let dropped = full && current.all().iter().any(|n| !scanned.files.contains_key(&n.path));
        Ok::<_, JournalError>((scanned, changed, removed, dropped, behind))
    })
    .await??;

    let mut changed: Vec<ChangedNote> = changed
        .into_iter()
        .map(|(path, stamp)| {
            let written = prepared.take_note(&path, stamp.size);
            (path, stamp, written)
        })
        .collect();
    let mut updated: HashMap<String, Option<Arc<Note>>> = HashMap::new();
    if !reset {
        for path in behind.drop {
            updated.insert(path, None);
        }
        for note in catalogued(&journal.db, &behind.adopt).await? {
            updated.insert(note.path.clone(), Some(note));
        }
    }
    // Notes moved by hand show as one gone and one new with the same bytes: their connections in the
    // graph follow them (`moved_by_hand`).
    let prior = vault.set();
    let mut went: Vec<(String, String)> = Vec::new();
    let mut arrived: Vec<(String, String)> = Vec::new();
    let mut cataloging: Option<tokio::task::JoinHandle<Result<(), JournalError>>> = None;
    let mut first = true;
    while first || !changed.is_empty() {
        let rest = changed.split_off(changed.len().min(CHUNK_NOTES));
        let chunk = std::mem::replace(&mut changed, rest);
        let gone = if first {
            std::mem::take(&mut removed)
        } else {
            Vec::new()
        };
        let clear = first && reset;
        first = false;
        if chunk.is_empty() && gone.is_empty() && !clear {
            break;
        }
        let worker = Arc::clone(journal);
        let outcome = tokio::task::spawn_blocking(move || index_chunk(&worker, chunk, gone, clear, reset)).await;
        // The previous chunk's rows were written while this one was read and indexed.
        if let Some(previous) = cataloging.take() {
            finish(previous).await?;
        }
        let outcome = outcome.map_err(|e| JournalError::Invalid(format!("the indexing task failed: {e}")))??;
        let Some((parsed, gone, done)) = outcome else {
            report.deferred = true;
            return Ok(report);
        };
        report.indexed += done.indexed;
        report.removed += done.removed;
        report.bytes += done.bytes;
        report.failed.extend(done.failed);
        for path in &gone {
            updated.insert(path.clone(), None);
            if let Some(note) = prior.at(path) {
                went.push((path.clone(), note.hash.clone()));
            }
        }
        for item in &parsed {
            updated.insert(item.path.clone(), item.outcome.as_ref().ok().cloned());
            if let Ok(note) = &item.outcome
                && prior.at(&item.path).is_none()
            {
                arrived.push((item.path.clone(), note.hash.clone()));
            }
        }
        let worker = Arc::clone(journal);
        cataloging = Some(tokio::spawn(async move {
            write_catalog(&worker, &parsed, &gone, clear).await
        }));
    }
    if let Some(previous) = cataloging.take() {
        finish(previous).await?;
    }
    let mut renames = Vec::new();
    for (from, to) in moved_by_hand(&went, &arrived) {
        // A note the changes' gate wrote (an agent's, whose own moves follow their connections, or
        // an undo) is no hand move: no agent's new note takes a deleted note's connections by
        // copying its bytes.
        let hash = arrived.iter().find(|(path, _)| *path == to).map(|(_, h)| h.as_str());
        if !super::history::wrote(&journal.db, &to, hash.unwrap_or_default()).await? {
            renames.push((from, to));
        }
    }
    if !renames.is_empty() {
        crate::journal::graph::store::rename_notes(journal.root(), renames).await;
    }
    if reset {
        vault.reset.store(false, Ordering::SeqCst);
        vault.loaded.store(true, Ordering::SeqCst);
    }
    if !updated.is_empty() || reset || dropped {
        let current = vault.set();
        let files = std::mem::take(&mut scanned.files);
        // A new set indexes every note: off the runtime's threads too.
        let set = tokio::task::spawn_blocking(move || {
            let mut notes: Vec<Arc<Note>> = if reset {
                Vec::new()
            } else {
                current
                    .all()
                    .iter()
                    .filter(|n| !updated.contains_key(&n.path) && (!full || files.contains_key(&n.path)))
                    .cloned()
                    .collect()
            };
            notes.extend(updated.into_values().flatten());
            NoteSet::new(notes)
        })
        .await
        .map_err(|e| JournalError::Invalid(format!("the note set's task failed: {e}")))?;
        vault.replace_set(set);
    }
    let stamps = match previous {
        Some(mut stamps) => {
            for folder in &scanned.gone {
                stamps.remove(folder);
            }
            stamps.extend(scanned.folders);
            stamps
        }
        None => scanned.folders,
    };
    if let Ok(mut slot) = vault.folder_stamps.lock() {
        *slot = Some(stamps);
    }
    if full && let Ok(mut slot) = vault.full_scan.lock() {
        *slot = Some((started, started.elapsed()));
    }
    report.folders_scanned = scanned.listed.len();
    for (path, error) in &report.failed {
        tracing::warn!(note = %path, %error, "a note could not be read; agents do not see it until it changes");
    }
    Ok(report)
}

/// The notes that moved, from the notes gone and the notes new in one sync (path and hash each): a
/// gone note moved where exactly one new note has its bytes, and no other gone note had them (two
/// copies of one template are not told apart, so neither is taken as moved).
fn moved_by_hand(went: &[(String, String)], arrived: &[(String, String)]) -> Vec<(String, String)> {
    if went.is_empty() || arrived.is_empty() {
        return Vec::new();
    }
    // By hash: the paths that had it (gone) and that have it (new).
    let mut by_hash: HashMap<&str, (Vec<&str>, Vec<&str>)> = HashMap::new();
    for (path, hash) in went {
        by_hash.entry(hash).or_default().0.push(path);
    }
    for (path, hash) in arrived {
        if let Some(entry) = by_hash.get_mut(hash.as_str()) {
            entry.1.push(path);
        }
    }
    let mut moves: Vec<(String, String)> = by_hash
        .into_values()
        .filter_map(|(from, to)| match (from.as_slice(), to.as_slice()) {
            ([from], [to]) => Some((from.to_string(), to.to_string())),
            _ => None,
        })
        .collect();
    moves.sort();
    moves
}

/// The catalog's stamps (path, time, size), of every note or of the notes directly in some folders,
/// as one JSON array of `[path, mtime_ns, size]`. One row instead of 100,000: handing each row from
/// the database's thread to this one cost more than the statements themselves.
async fn known_rows(pool: &Pool, folders: Option<&[String]>) -> Result<String, JournalError> {
    let folders = folders.map(|f| serde_json::to_string(f).unwrap_or_else(|_| "[]".into()));
    let rows: String = sqlx::query_scalar(
        "SELECT json_group_array(json_array(path, mtime_ns, size)) FROM notes
         WHERE ?1 IS NULL OR folder IN (SELECT value FROM json_each(?1))",
    )
    .bind(folders)
    .fetch_one(pool)
    .await?;
    Ok(rows)
}

/// The stamps of `known_rows`, by path.
fn stamps_of(rows: &str) -> Result<HashMap<String, Stamp>, JournalError> {
    let rows: Vec<(String, i64, i64)> = serde_json::from_str(rows)
        .map_err(|e| JournalError::Invalid(format!("the notes catalog's stamps could not be read: {e}")))?;
    Ok(rows
        .into_iter()
        .map(|(path, mtime_ns, size)| (path, Stamp { mtime_ns, size }))
        .collect())
}

/// What one chunk left for the catalog: its read notes, the removed paths and its report. None:
/// another process holds the index writer.
type Chunk = Option<(Vec<Parsed>, Vec<String>, SyncReport)>;

/// Reads and indexes one chunk of changed notes (and removes gone ones), and commits the index.
/// `clear` first removes every note from the index; `fresh` says the index holds none of the
/// changed notes (this sync cleared them), so that they are added without looking for old copies.
fn index_chunk(
    journal: &Journal,
    changed: Vec<ChangedNote>,
    removed: Vec<String>,
    clear: bool,
    fresh: bool,
) -> Result<Chunk, JournalError> {
    let index = &journal.index;
    let writer = match index.writer() {
        Ok(writer) => writer,
        Err(tantivy::TantivyError::LockFailure(..)) => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    if clear {
        index.remove_category(&writer, "notes");
    }
    // Reading and parsing a note costs more than indexing it (YAML, markdown), so the chunk is
    // read on a thread per core, each adding its documents to the one writer.
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).clamp(1, 4);
    let per_thread = changed.len().div_ceil(threads).max(1);
    let mut pieces: Vec<Vec<ChangedNote>> = Vec::with_capacity(threads);
    let mut rest = changed;
    while rest.len() > per_thread {
        let tail = rest.split_off(per_thread);
        pieces.push(rest);
        rest = tail;
    }
    pieces.push(rest);
    let done: Vec<(Vec<Parsed>, SyncReport)> = std::thread::scope(|scope| {
        let writer = &writer;
        let handles: Vec<_> = pieces
            .into_iter()
            .map(|piece| scope.spawn(move || read_and_index(journal, writer, piece, fresh)))
            .collect();
        handles
            .into_iter()
            .map(|handle| handle.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
            .collect()
    });
    let mut report = SyncReport::default();
    let mut parsed = Vec::new();
    for (piece, piece_report) in done {
        parsed.extend(piece);
        report.indexed += piece_report.indexed;
        report.bytes += piece_report.bytes;
        report.failed.extend(piece_report.failed);
    }
    for path in &removed {
        index.remove(&writer, &file_key(path));
    }
    report.removed = removed.len();
    index.commit(writer)?;
    Ok(Some((parsed, removed, report)))
}

/// Reads, parses and indexes some changed notes (those this process just wrote, from memory).
fn read_and_index(
    journal: &Journal,
    writer: &IndexWriter,
    changed: Vec<ChangedNote>,
    fresh: bool,
) -> (Vec<Parsed>, SyncReport) {
    let mut report = SyncReport::default();
    let mut parsed = Vec::with_capacity(changed.len());
    for (path, stamp, written) in changed {
        let modified_ms = stamp.mtime_ns / 1_000_000;
        let outcome = match written {
            Some(written) => {
                let PreparedNote {
                    mut note,
                    bytes,
                    body_start,
                    day,
                } = written.value;
                note.modified_ms = modified_ms;
                // Indexed while written, under the day its file has (unless this sync cleared the
                // index): nothing left to index.
                if !(written.indexed && !fresh && day_of(&note) == day) {
                    index_note(journal, writer, &note, body_at(&bytes, body_start), fresh, &mut report);
                }
                Ok(Arc::new(note))
            }
            None => match journal.notes.read_file(&path) {
                None => Err("the file could not be read".to_string()),
                Some((bytes, _)) => note::read(&path, &bytes, modified_ms).map(|read| {
                    index_note(journal, writer, &read.note, read.body, fresh, &mut report);
                    Arc::new(read.note)
                }),
            },
        };
        match &outcome {
            Ok(_) => report.indexed += 1,
            Err(error) => report.failed.push((path.clone(), error.clone())),
        }
        parsed.push(Parsed { path, stamp, outcome });
    }
    (parsed, report)
}

/// Indexes a note read by this sync: its old copy goes (unless the index holds no note's), then
/// its document if it has one.
fn index_note(journal: &Journal, writer: &IndexWriter, note: &Note, body: &str, fresh: bool, report: &mut SyncReport) {
    let (key, doc) = search_document(note, body);
    if !fresh {
        // A copy indexed before a crash (the index is committed before the catalog) goes.
        journal.index.remove(writer, &key);
    }
    if let Some(doc) = doc {
        report.bytes += doc.body.len() as u64;
        if let Err(error) = journal.index.put(writer, &doc) {
            tracing::warn!(note = %note.path, %error, "a note could not be indexed");
        }
    }
}

/// A note's index key, and its search document: none for a private note, whose words must never
/// surface in a search.
pub fn search_document(note: &Note, body: &str) -> (String, Option<IndexDoc>) {
    let doc = (note.access != Access::Private).then(|| document(note, body));
    (file_key(&note.path), doc)
}

/// A note's search document: its title, body, and its path and tags as hidden words.
fn document(note: &Note, body: &str) -> IndexDoc {
    let mut tags: Vec<String> = Vec::new();
    for tag in &note.tags {
        let lower = tag.to_lowercase();
        for (at, _) in lower.match_indices('/') {
            tags.push(lower[..at].to_string());
        }
        tags.push(lower);
    }
    let mut folders = Vec::new();
    let folder = rules::folder_of(&note.path);
    if !folder.is_empty() {
        for (at, _) in folder.match_indices('/') {
            folders.push(folder[..at].to_string());
        }
        folders.push(folder.to_string());
    }
    let extra = format!(
        "{} {}",
        note.path.replace(['/', '-', '_', '.'], " "),
        note.tags.join(" ").replace('/', " ")
    );
    IndexDoc {
        file: file_key(&note.path),
        path: note.path.clone(),
        category: "notes",
        day: Some(day_of(note)),
        facets: note.facets.clone(),
        title: note.title.clone(),
        body: body.to_string(),
        extra,
        metadata: metadata_words(&note.frontmatter),
        tags,
        folders,
        note_key: Some(index_key(&note.path)),
    }
}

/// A note's frontmatter values as words, for a search of metadata alone: every text, number and
/// true/false value, in lists and maps too; the keys are names, not values, and are left out.
fn metadata_words(frontmatter: &serde_json::Map<String, serde_json::Value>) -> String {
    fn add(value: &serde_json::Value, words: &mut Vec<String>) {
        match value {
            serde_json::Value::Null => {}
            serde_json::Value::String(text) => words.push(text.clone()),
            serde_json::Value::Array(values) => values.iter().for_each(|v| add(v, words)),
            serde_json::Value::Object(map) => map.values().for_each(|v| add(v, words)),
            other => words.push(other.to_string()),
        }
    }
    let mut words = Vec::new();
    frontmatter.values().for_each(|value| add(value, &mut words));
    words.join("\n")
}

/// The day a note is filed on for day ranges: its frontmatter `date` when that is a day, else the
/// day (UTC) it was last modified.
pub fn day_of(note: &Note) -> u64 {
    let dated = note
        .frontmatter
        .get("date")
        .and_then(|v| v.as_str())
        .and_then(|text| Day::parse(text.get(..10).unwrap_or(text)).ok());
    dated
        .unwrap_or_else(|| Day::from_epoch_days(note.modified_ms.div_euclid(86_400_000)))
        .as_number()
}

/// Catalog rows per `INSERT`: six values a row, well under SQLite's 32,766 bound values.
const ROWS_PER_INSERT: usize = 1000;

/// Writes one chunk's rows (and removes gone ones) in one transaction; `clear` first forgets every
/// row and records the vault the catalog now describes.
async fn write_catalog(
    journal: &Journal,
    parsed: &[Parsed],
    removed: &[String],
    clear: bool,
) -> Result<(), JournalError> {
    // Each row's metadata as JSON, made before the write lock is taken.
    let rows: Vec<(&Parsed, Option<String>, Option<&str>)> = parsed
        .iter()
        .map(|item| match &item.outcome {
            Ok(note) => (item, serde_json::to_string(note.as_ref()).ok(), None),
            Err(error) => (item, None, Some(error.as_str())),
        })
        .collect();
    let mut tx = crate::db::begin_write(&journal.db).await?;
    if clear {
        sqlx::query("DELETE FROM notes").execute(&mut *tx).await?;
        sqlx::query(
            "INSERT INTO journal_state (name, value) VALUES ('notes_vault', ?)
             ON CONFLICT (name) DO UPDATE SET value = excluded.value",
        )
        .bind(journal.notes.root.to_string_lossy().to_string())
        .execute(&mut *tx)
        .await?;
    }
    if !removed.is_empty() {
        sqlx::query("DELETE FROM notes WHERE path IN (SELECT value FROM json_each(?))")
            .bind(serde_json::to_string(removed).unwrap_or_else(|_| "[]".into()))
            .execute(&mut *tx)
            .await?;
    }
    // Rows go in statements of many rows with bound values: one statement per row costs a round
    // trip to the database thread each, and one JSON array of the whole chunk made SQLite parse
    // 30 MB of JSON (12% of a reindex's CPU).
    for batch in rows.chunks(ROWS_PER_INSERT) {
        let mut insert = sqlx::QueryBuilder::new("INSERT INTO notes (path, folder, mtime_ns, size, meta, error) ");
        insert.push_values(batch, |mut row, (item, meta, error)| {
            row.push_bind(item.path.as_str())
                .push_bind(rules::folder_of(&item.path))
                .push_bind(item.stamp.mtime_ns)
                .push_bind(item.stamp.size)
                .push_bind(meta.as_deref())
                .push_bind(*error);
        });
        insert.push(
            " ON CONFLICT (path) DO UPDATE SET folder = excluded.folder, mtime_ns = excluded.mtime_ns,
               size = excluded.size, meta = excluded.meta, error = excluded.error",
        );
        insert.build().execute(&mut *tx).await?;
    }
    tx.commit().await?;
    Ok(())
}

#[cfg(test)]
mod moved_tests {
    use super::moved_by_hand;

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect()
    }

    #[test]
    fn a_note_moved_by_hand_is_one_gone_and_one_new_with_its_bytes() {
        let went = pairs(&[("Plan.md", "h1"), ("Old.md", "h2"), ("T1.md", "tpl"), ("T2.md", "tpl")]);
        let arrived = pairs(&[
            ("Archive/Plan.md", "h1"),
            ("New.md", "h3"),
            ("T3.md", "tpl"),
            ("Dup.md", "h2"),
            ("Dup2.md", "h2"),
        ]);
        assert_eq!(moved_by_hand(&went, &arrived), pairs(&[("Plan.md", "Archive/Plan.md")]));
        assert!(moved_by_hand(&went, &[]).is_empty());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_words_are_the_values_not_the_keys() {
        let frontmatter: serde_json::Map<String, serde_json::Value> = serde_json::from_str(
            r#"{"status": "in progress", "owner": {"name": "Ada"}, "tags": ["x", null], "priority": 2, "done": false, "empty": null}"#,
        )
        .unwrap();
        let words = metadata_words(&frontmatter);
        for value in ["in progress", "Ada", "x", "2", "false"] {
            assert!(words.contains(value), "{words:?}");
        }
        for key in ["status", "owner", "name", "priority", "null"] {
            assert!(!words.contains(key), "{words:?}");
        }
    }
    use crate::journal::content::Scope;
    use crate::journal::demo_notes;
    use crate::journal::index::SearchQuery;
    use crate::journal::notes::Reader;

    fn search(journal: &Journal, text: &str) -> Vec<String> {
        let query = SearchQuery {
            text: text.into(),
            categories: vec!["notes".into()],
            limit: 50,
            ..SearchQuery::default()
        };
        journal
            .index
            .search(&query)
            .unwrap()
            .0
            .into_iter()
            .map(|h| h.path)
            .collect()
    }

    fn whole() -> Reader {
        Reader {
            scope: Scope::WholeJournal,
            label: "test".into(),
        }
    }

    #[tokio::test]
    async fn a_process_learns_the_notes_another_process_catalogued() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("notes/Agents")).unwrap();
        let one = Journal::open(dir.path()).await.unwrap();
        let other = Journal::open(dir.path()).await.unwrap();
        // `one` writes and catalogs a note; the catalog then matches the file, so `other` has no
        // change to index, yet its set must learn the note.
        std::fs::write(dir.path().join("notes/Agents/new.md"), "# New\n").unwrap();
        one.sync().await.unwrap();
        assert!(one.notes.set().at("Agents/new.md").is_some());
        let report = other.sync().await.unwrap();
        assert_eq!(report.indexed, 0, "nothing indexed twice");
        assert_eq!(
            other.notes.set().at("Agents/new.md").map(|n| n.title.as_str()),
            Some("New")
        );
        // Changed and then removed by `one`: `other` follows both.
        // (An edit leaves the folder's time alone: the spaced full scan finds it.)
        std::fs::write(dir.path().join("notes/Agents/new.md"), "# Renamed title, longer\n").unwrap();
        one.sync_to(Depth::Full).await.unwrap();
        other.sync_to(Depth::Full).await.unwrap();
        assert_eq!(
            other.notes.set().at("Agents/new.md").map(|n| n.title.as_str()),
            Some("Renamed title, longer")
        );
        std::fs::remove_file(dir.path().join("notes/Agents/new.md")).unwrap();
        one.sync().await.unwrap();
        other.sync().await.unwrap();
        assert!(other.notes.set().at("Agents/new.md").is_none());
    }

    #[tokio::test]
    async fn the_vault_is_catalogued_indexed_and_followed_through_edits_renames_and_deletions() {
        let dir = tempfile::tempdir().unwrap();
        let end = Day::parse("2026-11-30").unwrap();
        demo_notes::write(&dir.path().join("notes"), end).unwrap();
        let journal = Journal::open(dir.path()).await.unwrap();
        let set = journal.notes.set();
        assert_eq!(
            set.len(),
            demo_notes::NOTE_COUNT,
            "every reachable note, the private one included"
        );
        assert!(set.at(demo_notes::PRIVATE_NOTE).is_some());
        assert_eq!(set.visible(&whole()).count(), demo_notes::NOTE_COUNT - 1);
        assert!(
            search(&journal, demo_notes::PRIVATE_WORD).is_empty(),
            "a private note is never indexed"
        );
        assert!(search(&journal, demo_notes::QUARANTINED_WORD).is_empty());
        assert_eq!(
            search(&journal, demo_notes::OVERRIDDEN_WORD),
            [demo_notes::OVERRIDDEN_NOTE]
        );

        // A new note, an edit, a rename and a deletion, seen by quick syncs.
        let vault = dir.path().join("notes");
        std::fs::write(vault.join("Inbox-new.md"), "# Fresh\n\nwombat-sprocket\n").unwrap();
        journal.sync().await.unwrap();
        assert_eq!(search(&journal, "wombat-sprocket"), ["Inbox-new.md"]);
        std::fs::create_dir_all(vault.join("Moved")).unwrap();
        std::fs::rename(vault.join("Inbox-new.md"), vault.join("Moved/renamed.md")).unwrap();
        journal.sync().await.unwrap();
        assert_eq!(search(&journal, "wombat-sprocket"), ["Moved/renamed.md"]);
        let set = journal.notes.set();
        assert!(set.at("Inbox-new.md").is_none());
        assert_eq!(set.at("Moved/renamed.md").unwrap().title, "Fresh");
        // An edit in place that keeps the size is caught by a full sync.
        std::fs::write(vault.join("Moved/renamed.md"), "# Fresh\n\nwombat-gearbox\n").unwrap();
        journal.sync_to(Depth::Full).await.unwrap();
        assert_eq!(search(&journal, "wombat-gearbox"), ["Moved/renamed.md"]);
        // Made private by hand: gone from search and from what readers see.
        std::fs::write(
            vault.join("Moved/renamed.md"),
            "---\naccess: private\n---\nwombat-gearbox\n",
        )
        .unwrap();
        journal.sync_to(Depth::Full).await.unwrap();
        assert!(search(&journal, "wombat-gearbox").is_empty());
        assert!(journal.notes.set().find_path("Moved/renamed.md", &whole()).is_none());
        std::fs::remove_dir_all(vault.join("Moved")).unwrap();
        journal.sync().await.unwrap();
        assert!(journal.notes.set().at("Moved/renamed.md").is_none());
        assert_eq!(journal.notes.set().len(), demo_notes::NOTE_COUNT);

        // Unreadable frontmatter: catalogued with its error, served nowhere.
        std::fs::write(vault.join("broken.md"), "---\naccess: private\nwombat-broken\n").unwrap();
        let report = journal.sync().await.unwrap();
        assert_eq!(report.failed.len(), 1, "{report:?}");
        assert!(journal.notes.set().at("broken.md").is_none());
        assert!(search(&journal, "wombat-broken").is_empty());

        // Opened again: the set comes from the catalog, without reading the files.
        drop(journal);
        let journal = Journal::open_unsynced(dir.path()).await.unwrap();
        assert_eq!(journal.notes.set().len(), demo_notes::NOTE_COUNT);
    }

    #[tokio::test]
    async fn another_vault_replaces_the_first_in_catalog_and_index() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("notes")).unwrap();
        std::fs::write(dir.path().join("notes/first.md"), "aardvark-one\n").unwrap();
        let journal = Journal::open(dir.path()).await.unwrap();
        assert_eq!(search(&journal, "aardvark-one"), ["first.md"]);
        drop(journal);
        let other = tempfile::tempdir().unwrap();
        std::fs::write(other.path().join("second.md"), "aardvark-two\n").unwrap();
        std::fs::write(
            dir.path().join("journal.toml"),
            format!("[notes]\ndir = \"{}\"\n", other.path().display()),
        )
        .unwrap();
        let journal = Journal::open(dir.path()).await.unwrap();
        assert!(
            search(&journal, "aardvark-one").is_empty(),
            "the first vault's notes are forgotten"
        );
        assert_eq!(search(&journal, "aardvark-two"), ["second.md"]);
        let paths: Vec<String> = journal.notes.set().all().iter().map(|n| n.path.clone()).collect();
        assert_eq!(paths, ["second.md"]);
        // A missing vault serves nothing and forgets nothing; back again, it serves again.
        let moved = other.path().with_extension("away");
        std::fs::rename(other.path(), &moved).unwrap();
        journal.sync().await.unwrap();
        assert!(journal.notes.set().is_empty());
        std::fs::rename(&moved, other.path()).unwrap();
        journal.sync().await.unwrap();
        assert_eq!(journal.notes.set().len(), 1);
    }
}
