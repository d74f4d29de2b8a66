//! Operations on journal content: creating facets and entities, importing transcripts, and the
//! bounded listings and reads that tools perform.
//!
//! Reads take a `Scope` (which facet names the caller may see); they never decide who the caller is.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use sqlx::Row;

use super::batch::Batch;
use super::catalog;
use super::day::{self, Day};
use super::entity::{self, Entity, EntityType};
use super::facet::{self, Facet};
use super::import::{self, Format};
use super::preindex::Preindex;
use super::prepared::Prepared;
use super::transcript::{Line, Segment, SegmentHead};
use super::{Journal, JournalError};
use crate::fsio;

/// The largest transcript file `import` reads.
pub const MAX_IMPORT_BYTES: u64 = 64 * 1024 * 1024;

/// Which facets a reader may see.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    WholeJournal,
    /// Only items filed under at least one of these facet names.
    Facets(Vec<String>),
}

impl Scope {
    pub fn allows(&self, item_facets: &[String]) -> bool {
        match self {
            Scope::WholeJournal => true,
            Scope::Facets(allowed) => item_facets.iter().any(|f| allowed.contains(f)),
        }
    }

    pub fn allows_facet(&self, name: &str) -> bool {
        match self {
            Scope::WholeJournal => true,
            Scope::Facets(allowed) => allowed.iter().any(|f| f == name),
        }
    }

    /// The facet names to filter on, or None for no restriction.
    pub fn names(&self) -> Option<Vec<String>> {
        match self {
            Scope::WholeJournal => None,
            Scope::Facets(names) => Some(names.clone()),
        }
    }
}

/// A catalog row, as listings return it.
#[derive(Debug, Clone)]
pub struct ItemRow {
    pub path: String,
    pub title: String,
    pub day: Option<Day>,
    pub start: Option<u32>,
}

/// Reads every facet file, sorted by name. A damaged facet file is skipped with a warning.
pub fn read_facets(root: &Path) -> Result<Vec<Facet>, JournalError> {
    let dir = root.join("facets");
    let mut facets = Vec::new();
    let entries = fs::read_dir(&dir).map_err(|e| JournalError::io(&dir, e))?;
    for entry in entries.flatten() {
        let path = entry.path().join("facet.md");
        let Ok(text) = fs::read_to_string(&path) else { continue };
        match Facet::parse(&text).and_then(|f| facet::matches_folder(f, &entry.file_name().to_string_lossy())) {
            Ok(facet) => facets.push(facet),
            Err(error) => tracing::warn!(file = %path.display(), %error, "skipping an unreadable facet"),
        }
    }
    facets.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(facets)
}

/// The fields of a new facet.
#[derive(Debug, Clone, Default)]
pub struct NewFacet {
    pub name: String,
    pub title: Option<String>,
    pub description: Option<String>,
    pub emoji: Option<String>,
    pub color: Option<String>,
}

/// Creates a facet; refuses a name that is taken.
pub async fn create_facet(journal: &Arc<Journal>, new: NewFacet) -> Result<Facet, JournalError> {
    facet::validate_name(&new.name).map_err(|e| JournalError::Invalid(e.to_string()))?;
    let facet = Facet {
        id: uuid::Uuid::new_v4().to_string(),
        title: new.title.unwrap_or_else(|| title_case(&new.name)),
        name: new.name,
        description: new.description.unwrap_or_default(),
        color: new.color,
        emoji: new.emoji,
        muted: false,
    };
    facet.validate().map_err(|e| JournalError::Invalid(e.to_string()))?;
    let path = journal.root().join("facets").join(&facet.name).join("facet.md");
    match fsio::create_new_atomic(&path, facet.render("").as_bytes()) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            return Err(JournalError::Invalid(format!(
                "a facet named {} already exists",
                facet.name
            )));
        }
        Err(e) => return Err(JournalError::io(&path, e)),
    }
    journal.sync().await?;
    Ok(facet)
}

fn title_case(name: &str) -> String {
    let spaced = name.replace('-', " ");
    let mut chars = spaced.chars();
    chars
        .next()
        .map(|c| c.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

/// The fields of a new entity.
#[derive(Debug, Clone)]
pub struct NewEntity {
    pub name: String,
    pub kind: EntityType,
    pub aka: Vec<String>,
    /// (facet name, description)
    pub facet: Option<(String, String)>,
}

/// Adds an entity in its own file.
pub async fn add_entity(journal: &Arc<Journal>, new: NewEntity) -> Result<Entity, JournalError> {
    let mut facets = BTreeMap::new();
    if let Some((facet, description)) = new.facet {
        let known = journal.facet(&facet).ok_or_else(|| unknown_facet(&facet))?;
        facets.insert(known.name, description);
    }
    let entity = Entity {
        id: uuid::Uuid::new_v4().to_string(),
        name: new.name,
        kind: new.kind,
        aka: new.aka,
        facets,
        last_seen: None,
    };
    entity.validate().map_err(JournalError::Invalid)?;
    let taken: Option<String> =
        sqlx::query_scalar("SELECT path FROM items WHERE kind = 'entity' AND lower(title) = lower(?)")
            .bind(&entity.name)
            .fetch_optional(&journal.db)
            .await?;
    if let Some(path) = taken {
        return Err(JournalError::Invalid(format!(
            "an entity named {} already exists ({path})",
            entity.name
        )));
    }
    let text = entity.render("");
    let slug = entity::slug(&entity.name);
    write_unique(&journal.root().join("entities"), &slug, text.as_bytes())?;
    journal.sync().await?;
    Ok(entity)
}

/// Writes `<dir>/<stem>.md`, or `<stem>-2.md`, `-3`, ... when the name is taken. Returns the path.
fn write_unique(dir: &Path, stem: &str, bytes: &[u8]) -> Result<PathBuf, JournalError> {
    for name in super::batch::unique_names(stem) {
        let path = dir.join(name);
        match fsio::create_new_atomic(&path, bytes) {
            Ok(()) => return Ok(path),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(JournalError::io(&path, e)),
        }
    }
    Err(JournalError::Invalid(format!(
        "too many files named {stem} in {}",
        dir.display()
    )))
}

fn unknown_facet(name: &str) -> JournalError {
    JournalError::Invalid(format!(
        "there is no facet named {name}: see `journal facet list`, or create it with `journal facet create {name}`"
    ))
}

/// Where and how to file imported transcripts.
#[derive(Debug, Clone)]
pub struct ImportOptions {
    pub day: Day,
    /// Seconds after midnight; each file's utterance offsets count from here.
    pub start: u32,
    pub facets: Vec<String>,
}

/// Imports transcript files as segments, all or nothing: every file is read and checked before the
/// first segment is written, and segments already written are removed again if a later write fails.
pub async fn import_transcripts(
    journal: &Arc<Journal>,
    files: &[PathBuf],
    options: &ImportOptions,
) -> Result<Vec<PathBuf>, JournalError> {
    let mut facet_names = Vec::new();
    for facet in &options.facets {
        let known = journal.facet(facet).ok_or_else(|| unknown_facet(facet))?;
        if !facet_names.contains(&known.name) {
            facet_names.push(known.name);
        }
    }
    if files.is_empty() {
        return Err(JournalError::Invalid(
            "name at least one transcript file to import".into(),
        ));
    }
    tracing::debug!(files = files.len(), "import: begun");
    // Read and parsed on a thread per core; the first file in the given order that fails is the
    // one reported, and nothing has been written yet.
    let (rendered, segments): (Vec<String>, Vec<Segment>) =
        crate::journal::parallel::map(files, |file| render_import(file, options, &facet_names))
            .into_iter()
            .collect::<Result<Vec<(String, Segment)>, JournalError>>()?
            .into_iter()
            .unzip();
    tracing::debug!(files = rendered.len(), "import: read and rendered");
    let dir = journal.root().join("transcripts").join(options.day.to_string());
    let stem = day::format_time(options.start).replace(':', "");
    // One batch: staged under hidden names, then published; a crash on the way is taken back by
    // the next open or sync, so the import is whole or absent even if the process is killed.
    let mut batch = Batch::begin(journal.root(), &dir).map_err(|e| JournalError::io(&dir, e))?;
    // Indexed under the names the batch will take while its files are written (`preindex`).
    let planned = batch
        .plan(&vec![stem.clone(); rendered.len()])
        .map_err(|e| JournalError::io(&dir, e))?;
    let items: Vec<(String, Segment)> = planned
        .iter()
        .map(|path| relative(journal, path))
        .zip(segments)
        .collect();
    let preindex = Preindex::start(journal, items, |(path, segment)| {
        (path.clone(), Some(catalog::segment_doc(path, segment)))
    })?;
    batch.stage(&rendered).map_err(|e| JournalError::io(&dir, e))?;
    tracing::debug!("import: written and flushed under hidden names");
    let written = batch.publish(&stem).map_err(|e| JournalError::io(&dir, e))?;
    tracing::debug!("import: published");
    let (items, indexed) = preindex.finish(journal, written == planned);
    tracing::debug!(indexed, "import: search documents committed");
    // Catalogued from the segments in memory: the files hold exactly what was rendered from them
    // (in the order written, whatever names they took).
    let mut prepared = Prepared::default();
    for ((path, text), (_, segment)) in written.iter().zip(&rendered).zip(items) {
        prepared.add_segment(relative(journal, path), text.len(), segment, indexed);
    }
    journal.sync_written(prepared).await?;
    tracing::debug!("import: catalogued and indexed");
    Ok(written)
}

/// A path under the journal's root as the catalog names it.
fn relative(journal: &Journal, path: &Path) -> String {
    path.strip_prefix(journal.root())
        .unwrap_or(path)
        .to_string_lossy()
        .into_owned()
}

/// One transcript file read, checked and rendered as a segment: the file's text, and the segment
/// that parsing the text gives back.
fn render_import(
    file: &Path,
    options: &ImportOptions,
    facet_names: &[String],
) -> Result<(String, Segment), JournalError> {
    let format = Format::from_path(file).ok_or_else(|| {
        JournalError::Invalid(format!(
            "{}: unknown transcript format; use .vtt, .srt, .jsonl or .txt",
            file.display()
        ))
    })?;
    let size = fs::metadata(file).map_err(|e| JournalError::io(file, e))?.len();
    if size > MAX_IMPORT_BYTES {
        return Err(JournalError::Invalid(format!(
            "{}: the file is larger than 64 MiB",
            file.display()
        )));
    }
    let bytes = fs::read(file).map_err(|e| JournalError::io(file, e))?;
    let text = String::from_utf8(bytes).map_err(|e| {
        JournalError::Invalid(format!(
            "{}: the file is not UTF-8 text (byte {})",
            file.display(),
            e.utf8_error().valid_up_to()
        ))
    })?;
    let utterances = import::parse(format, &text)
        .map_err(|e| JournalError::Invalid(format!("{}: {} {e}", file.display(), format.name())))?;
    let lines: Vec<Line> = utterances
        .into_iter()
        .map(|u| Line {
            time: options.start.saturating_add(u.offset_seconds),
            speaker: u.speaker,
            text: u.text,
        })
        .collect();
    let last = lines.iter().map(|l| l.time).max().unwrap_or(options.start);
    let head = SegmentHead {
        day: options.day.to_string(),
        start: day::format_time(options.start),
        duration_seconds: last - options.start,
        facets: facet_names.to_vec(),
        title: file
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or("transcript")
            .to_string(),
        source: file.file_name().and_then(|s| s.to_str()).map(str::to_string),
    };
    let text = Segment::render(&head, &lines);
    let segment = Segment {
        head,
        day: options.day,
        start: options.start,
        lines,
    };
    Ok((text, segment))
}

/// Transcript segments, newest first, optionally on one day, within the scope.
pub async fn list_transcripts(
    journal: &Journal,
    day: Option<Day>,
    scope: &Scope,
    limit: usize,
) -> Result<Vec<ItemRow>, JournalError> {
    list_items(journal, "transcript", day, scope, limit).await
}

/// Entities by name, within the scope.
pub async fn list_entities(journal: &Journal, scope: &Scope, limit: usize) -> Result<Vec<ItemRow>, JournalError> {
    list_items(journal, "entity", None, scope, limit).await
}

async fn list_items(
    journal: &Journal,
    kind: &str,
    day: Option<Day>,
    scope: &Scope,
    limit: usize,
) -> Result<Vec<ItemRow>, JournalError> {
    let facets = scope
        .names()
        .map(|names| serde_json::to_string(&names).unwrap_or_else(|_| "[]".into()));
    // Two fixed statements rather than one assembled string: nothing from a caller reaches the SQL text.
    const TRANSCRIPTS: &str = "SELECT path, title, day, start FROM items
         WHERE kind = ?1 AND error IS NULL AND (?2 IS NULL OR day = ?2)
           AND (?3 IS NULL OR EXISTS (SELECT 1 FROM item_facets f WHERE f.path = items.path
                                       AND f.facet IN (SELECT value FROM json_each(?3))))
         ORDER BY day DESC, start DESC, path LIMIT ?4";
    const BY_TITLE: &str = "SELECT path, title, day, start FROM items
         WHERE kind = ?1 AND error IS NULL AND (?2 IS NULL OR day = ?2)
           AND (?3 IS NULL OR EXISTS (SELECT 1 FROM item_facets f WHERE f.path = items.path
                                       AND f.facet IN (SELECT value FROM json_each(?3))))
         ORDER BY lower(title), path LIMIT ?4";
    let sql = if kind == "transcript" { TRANSCRIPTS } else { BY_TITLE };
    let rows = sqlx::query(sql)
        .bind(kind)
        .bind(day.map(|d| d.as_number() as i64))
        .bind(facets)
        .bind(limit as i64)
        .fetch_all(&journal.db)
        .await?;
    Ok(rows
        .into_iter()
        .map(|row| ItemRow {
            path: row.get(0),
            title: row.get(1),
            day: row.get::<Option<i64>, _>(2).and_then(day_from_number),
            start: row.get::<Option<i64>, _>(3).and_then(|s| u32::try_from(s).ok()),
        })
        .collect())
}

fn day_from_number(n: i64) -> Option<Day> {
    Day::from_parts(u16::try_from(n / 10_000).ok()?, (n / 100 % 100) as u8, (n % 100) as u8)
}

/// The facet names of a catalogued, readable item of `kind`, or None when there is no such item.
pub async fn item_facets(journal: &Journal, path: &str, kind: &str) -> Result<Option<Vec<String>>, JournalError> {
    let exists: Option<i64> = sqlx::query_scalar("SELECT 1 FROM items WHERE path = ? AND kind = ? AND error IS NULL")
        .bind(path)
        .bind(kind)
        .fetch_optional(&journal.db)
        .await?;
    if exists.is_none() {
        return Ok(None);
    }
    let facets = sqlx::query_scalar("SELECT facet FROM item_facets WHERE path = ? ORDER BY facet")
        .bind(path)
        .fetch_all(&journal.db)
        .await?;
    Ok(Some(facets))
}

/// Reads a transcript segment by its relative path.
pub fn read_segment(journal: &Journal, path: &str) -> Result<Segment, JournalError> {
    let text = read_item(journal, path)?;
    Segment::parse(&text).map_err(|e| JournalError::NotFound(format!("{path} can no longer be read: {e}")))
}

/// Reads an entity by its relative path.
pub fn read_entity(journal: &Journal, path: &str) -> Result<Entity, JournalError> {
    let text = read_item(journal, path)?;
    Entity::parse(&text)
        .map(|(e, _)| e)
        .map_err(|e| JournalError::NotFound(format!("{path} can no longer be read: {e}")))
}

fn read_item(journal: &Journal, path: &str) -> Result<String, JournalError> {
    // Paths come from signed references the journal itself made, but stay inside the folder anyway.
    if path.split('/').any(|part| part.is_empty() || part.starts_with('.')) {
        return Err(JournalError::NotFound("no such item".into()));
    }
    fs::read_to_string(journal.root().join(path))
        .map_err(|_| JournalError::NotFound("that item no longer exists".into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An import catalogues the segments it keeps in memory (`journal::prepared`), so each must be
    /// exactly what parsing the file it wrote gives back, for any name and text an import accepts.
    #[test]
    fn an_imported_segment_is_what_its_file_parses_as() {
        let dir = tempfile::tempdir().unwrap();
        let texts = [
            "plain words",
            "**Bold:** not a speaker",
            "Sam: said it in the text",
            "- 00:00:01 **Me:** a line that looks like a line",
            "\\\\ back\\slashes \\* and * stars **",
            "  leading and trailing spaces  ",
            "ünïcødé, emoji 🎙️, right-to-left שלום",
            "---",
            "key: value # a comment",
            "'quotes' \"double\" `ticks`",
        ];
        let stems = [
            "null",
            "true",
            "123",
            "~",
            "- dash",
            "a: b",
            "#hash",
            "[list]",
            "{map}",
            "ünï 🎙️",
            "2026-11-01",
        ];
        let mut files = Vec::new();
        for (n, stem) in stems.iter().enumerate() {
            let path = dir.path().join(format!("{stem}.jsonl"));
            let mut lines = String::new();
            for (i, text) in texts.iter().enumerate() {
                let speaker = match (n + i) % 3 {
                    0 => serde_json::Value::Null,
                    1 => "Ada Okafor".into(),
                    _ => "Dr. J. \"Jay\" O'Neil".into(),
                };
                let line = serde_json::json!({"start": i * 37 + n, "speaker": speaker, "text": text});
                lines.push_str(&line.to_string());
                lines.push('\n');
            }
            // A long night: offsets past midnight of the next day.
            lines.push_str(&serde_json::json!({"start": 90_000, "text": "late"}).to_string());
            fs::write(&path, lines).unwrap();
            files.push(path);
        }
        let facets = vec!["work".to_string(), "home-life".to_string()];
        for start in [0, 23 * 3600 + 59 * 60 + 59] {
            let options = ImportOptions {
                day: Day::parse("2026-11-01").unwrap(),
                start,
                facets: facets.clone(),
            };
            for file in &files {
                let (text, segment) = render_import(file, &options, &facets).unwrap();
                assert_eq!(Segment::parse(&text).unwrap(), segment, "{}", file.display());
            }
        }
    }
}
