//! Markdown files brought into the vault as notes (`journal import note`), all or nothing: every file
//! is read and checked as a note before the first is written, then all are written as one batch
//! (`journal::batch`: flushed together, whole or absent after a crash), indexed meanwhile
//! (`journal::preindex`), and the vault is synced from the notes in memory (`journal::prepared`).
//! A note keeps its file's name; a name that is taken gets `-2`, `-3`, ...

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::note::{self, Note};
use super::{rules, sync};
use crate::journal::batch::Batch;
use crate::journal::preindex::Preindex;
use crate::journal::prepared::{Prepared, PreparedNote};
use crate::journal::{Journal, JournalError, parallel};

/// Imports `files` into `folder` of the vault (`""`: its top). Answers the new notes' paths in the vault.
pub async fn import_notes(
    journal: &Arc<Journal>,
    files: &[PathBuf],
    folder: &str,
) -> Result<Vec<String>, JournalError> {
    if files.is_empty() {
        return Err(JournalError::Invalid(
            "name at least one markdown file to import".into(),
        ));
    }
    let folder = rules::typed_folder(folder).map_err(|e| JournalError::Invalid(format!("--folder: {e}")))?;
    let dir = if folder.is_empty() {
        journal.notes.root().to_path_buf()
    } else {
        journal.notes.walls().folder(&folder).ok_or_else(|| {
            JournalError::Invalid(format!(
                "--folder: \"{folder}\" is not a folder notes can be in (quarantined: a part starting with a dot, \
                 _private or Widgets; reached through a link; or the journal's own folder); name another"
            ))
        })?
    };
    tracing::debug!(files = files.len(), "import: begun");
    let read = parallel::map(files, |file| read_one(file, &folder));
    let notes = read.into_iter().collect::<Result<Vec<Checked>, JournalError>>()?;
    tracing::debug!("import: read and checked");
    let mut batch = Batch::begin(journal.root(), &dir).map_err(|e| JournalError::io(&dir, e))?;
    let stems: Vec<String> = notes.iter().map(|checked| checked.stem.clone()).collect();
    // Indexed under the names the batch will take while its files are written (`preindex`).
    let planned = batch.plan(&stems).map_err(|e| JournalError::io(&dir, e))?;
    let bytes: Vec<Arc<[u8]>> = notes.iter().map(|checked| Arc::clone(&checked.bytes)).collect();
    let now_ms = crate::clock::unix_now() * 1000;
    let items = notes
        .into_iter()
        .zip(&planned)
        .map(|(checked, path)| prepare(checked, &in_folder(&folder, &file_name(path)), now_ms))
        .collect::<Result<Vec<PreparedNote>, JournalError>>()?;
    let preindex = Preindex::start(journal, items, |note| sync::search_document(&note.note, note.body()))?;
    batch.stage(&bytes).map_err(|e| JournalError::io(&dir, e))?;
    tracing::debug!("import: written and flushed under hidden names");
    let written = batch.publish_each(&stems).map_err(|e| JournalError::io(&dir, e))?;
    tracing::debug!("import: published");
    let held = written == planned;
    let (items, indexed) = preindex.finish(journal, held);
    tracing::debug!(indexed, "import: search documents committed");
    let mut prepared = Prepared::default();
    if held {
        // Read under the names they were published as (a note's title may come from its name).
        for item in items {
            prepared.add_note(item.note.path.clone(), item, indexed);
        }
    }
    journal.sync_written(prepared).await?;
    tracing::debug!("import: catalogued and indexed");
    Ok(written
        .iter()
        .map(|path| in_folder(&folder, &file_name(path)))
        .collect())
}

/// A file's name as text (the batch names files from UTF-8 stems).
fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// A file read and checked as a note: its name's stem, its bytes and what they read as.
struct Checked {
    stem: String,
    bytes: Arc<[u8]>,
    note: Note,
    body_start: usize,
}

/// A checked note as it will be written at `path` in the vault, filed under the day of `now_ms`
/// until its file's time is known.
fn prepare(checked: Checked, path: &str, now_ms: i64) -> Result<PreparedNote, JournalError> {
    let (mut note, body_start) = if checked.note.path == path {
        (checked.note, checked.body_start)
    } else {
        // Published under another name (`-2`): its title may come from the name.
        let read = note::read(path, &checked.bytes, 0).map_err(|e| JournalError::Invalid(format!("{path}: {e}")))?;
        let start = checked.bytes.len() - read.body.len();
        (read.note, start)
    };
    note.modified_ms = now_ms;
    let day = sync::day_of(&note);
    Ok(PreparedNote {
        note,
        bytes: checked.bytes,
        body_start,
        day,
    })
}

/// A note's path in the vault: `name` in `folder` (`""`: the vault's top).
fn in_folder(folder: &str, name: &str) -> String {
    if folder.is_empty() {
        name.to_string()
    } else {
        format!("{folder}/{name}")
    }
}

/// One file read and checked as a note of `folder`.
fn read_one(file: &Path, folder: &str) -> Result<Checked, JournalError> {
    let name = file.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let Some(stem) = name.strip_suffix(".md").filter(|stem| !stem.is_empty()) else {
        return Err(JournalError::Invalid(format!(
            "{}: not a markdown note; name .md files",
            file.display()
        )));
    };
    let path = in_folder(folder, name);
    if !rules::is_note_path(&path) {
        return Err(JournalError::Invalid(format!(
            "{}: a note's name may not start with a dot or hold a control character",
            file.display()
        )));
    }
    let size = std::fs::metadata(file).map_err(|e| JournalError::io(file, e))?.len();
    if size > note::MAX_NOTE_BYTES {
        return Err(JournalError::Invalid(format!(
            "{}: the note is larger than 8 MiB",
            file.display()
        )));
    }
    let bytes: Arc<[u8]> = std::fs::read(file).map_err(|e| JournalError::io(file, e))?.into();
    let read = note::read(&path, &bytes, 0).map_err(|e| JournalError::Invalid(format!("{}: {e}", file.display())))?;
    let body_start = bytes.len() - read.body.len();
    let note = read.note;
    Ok(Checked {
        stem: stem.to_string(),
        bytes,
        note,
        body_start,
    })
}
