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

use super::entity::Entity;
use super::facet::Facet;
use super::index::IndexDoc;
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
pub(super) async fn sync(journal: &Arc<Journal>, depth: Depth) -> Result<SyncReport, JournalError> {
    let root = journal.root().to_path_buf();
    let folders = tokio::task::spawn_blocking(move || content_folders(&root))
        .await
        .map_err(|e| JournalError::Invalid(format!("the scanning task failed: {e}")))??;
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
    let outcome = tokio::task::spawn_blocking(move || index_changes(&worker, known, scope))
        .await
        .map_err(|e| JournalError::Invalid(format!("the indexing task failed: {e}")))??;
    let Some((parsed, removed, mut report)) = outcome else {
        return Ok(SyncReport {
            deferred: true,
            ..SyncReport::default()
        });
    };
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
    let mut tx = journal.db.begin().await?;
    for path in &removed {
        sqlx::query("DELETE FROM items WHERE path = ?")
            .bind(path)
            .execute(&mut *tx)
            .await?;
    }
    for item in &parsed {
        sqlx::query(
            "INSERT INTO items (path, kind, day, start, title, mtime_ns, size, error) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
             ON CONFLICT (path) DO UPDATE SET kind = excluded.kind, day = excluded.day, start = excluded.start,
               title = excluded.title, mtime_ns = excluded.mtime_ns, size = excluded.size, error = excluded.error",
        )
        .bind(&item.path)
        .bind(item.kind.as_str())
        .bind(item.day)
        .bind(item.start)
        .bind(&item.title)
        .bind(item.stamp.mtime_ns)
        .bind(item.stamp.size)
        .bind(&item.error)
        .execute(&mut *tx)
        .await?;
        sqlx::query("DELETE FROM item_facets WHERE path = ?")
            .bind(&item.path)
            .execute(&mut *tx)
            .await?;
        for facet in &item.facets {
            sqlx::query("INSERT OR IGNORE INTO item_facets (path, facet) VALUES (?, ?)")
                .bind(&item.path)
                .bind(facet)
                .execute(&mut *tx)
                .await?;
        }
        if let Some(error) = &item.error {
            report.failed.push((item.path.clone(), error.clone()));
        }
    }
    tx.commit().await?;
    report.folders_scanned = to_scan.len();
    if let Ok(mut stamps) = journal.folder_stamps.lock() {
        *stamps = Some(new_stamps);
    }
    for (path, error) in &report.failed {
        tracing::warn!(file = %path, %error, "a journal file could not be read; it is left out of search until it changes");
    }
    Ok(report)
}

/// The catalog's rows, all of them or those of one folder.
async fn known_rows(journal: &Journal, folder: Option<&str>) -> Result<HashMap<String, Stamp>, JournalError> {
    let rows = match folder {
        None => {
            sqlx::query("SELECT path, mtime_ns, size FROM items")
                .fetch_all(&journal.db)
                .await?
        }
        // `folder/` up to `folder0` ('0' follows '/'): the rows inside the folder, by the primary key.
        Some(folder) => {
            sqlx::query("SELECT path, mtime_ns, size FROM items WHERE path >= ? AND path < ?")
                .bind(format!("{folder}/"))
                .bind(format!("{folder}0"))
                .fetch_all(&journal.db)
                .await?
        }
    };
    Ok(rows
        .into_iter()
        .map(|row| {
            (
                row.get::<String, _>(0),
                Stamp {
                    mtime_ns: row.get(1),
                    size: row.get(2),
                },
            )
        })
        .collect())
}

type Changes = Option<(Vec<Parsed>, Vec<String>, SyncReport)>;

fn index_changes(
    journal: &Journal,
    mut known: HashMap<String, Stamp>,
    folders: Option<Vec<String>>,
) -> Result<Changes, JournalError> {
    let on_disk = match folders {
        None => scan(journal.root())?,
        Some(folders) => scan_folders(journal.root(), &folders)?,
    };
    let mut changed = Vec::new();
    for (path, (kind, stamp)) in &on_disk {
        if known.remove(path) != Some(*stamp) {
            changed.push((path.clone(), *kind, *stamp));
        }
    }
    let removed: Vec<String> = known.into_keys().collect();
    if changed.is_empty() && removed.is_empty() {
        return Ok(Some((Vec::new(), Vec::new(), SyncReport::default())));
    }
    let writer = match journal.index.writer() {
        Ok(writer) => writer,
        Err(tantivy::TantivyError::LockFailure(..)) => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    let mut report = SyncReport::default();
    let mut parsed = Vec::with_capacity(changed.len());
    for (path, kind, stamp) in changed {
        report.facets_changed |= kind == Kind::Facet;
        let item = parse(journal.root(), &path, kind, stamp);
        journal.index.remove(&writer, &path);
        for doc in &item.docs {
            report.bytes += doc.body.len() as u64;
            journal.index.put(&writer, doc)?;
        }
        report.indexed += usize::from(item.error.is_none());
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

fn parse(root: &Path, rel: &str, kind: Kind, stamp: Stamp) -> Parsed {
    let mut item = Parsed {
        path: rel.to_string(),
        kind,
        stamp,
        day: None,
        start: None,
        title: rel.to_string(),
        facets: Vec::new(),
        error: None,
        docs: Vec::new(),
    };
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
                .and_then(|facet| super::content::matches_folder(facet, folder))
                .map(|facet| fill_facet(&mut item, facet))
        }
        Kind::Entity => Entity::parse(&text).map(|(entity, _body)| fill_entity(&mut item, entity)),
        Kind::Transcript => Segment::parse(&text).map(|segment| fill_segment(&mut item, segment)),
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
        });
    }
}

fn fill_segment(item: &mut Parsed, segment: Segment) {
    item.title = segment.title();
    item.day = Some(segment.day.as_number() as i64);
    item.start = Some(i64::from(segment.start));
    item.facets = segment.head.facets.clone();
    item.docs.push(IndexDoc {
        file: item.path.clone(),
        path: item.path.clone(),
        category: "transcripts",
        day: Some(segment.day.as_number()),
        facets: item.facets.clone(),
        title: item.title.clone(),
        body: segment.searchable_text(),
    });
}
