//! Markdown files brought into the vault as notes (`journal import note`), all or nothing: every file
//! is read and checked as a note before the first is written, then all are written as one batch
//! (`journal::batch`: flushed together, whole or absent after a crash) and the vault is synced.
//! A note keeps its file's name; a name that is taken gets `-2`, `-3`, ...

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::{note, rules};
use crate::journal::batch::Batch;
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
    if !folder.is_empty() && !rules::is_note_path(&format!("{folder}/x.md")) {
        return Err(JournalError::Invalid(format!(
            "--folder: \"{folder}\" is not a folder notes can be in (no part may start with a dot)"
        )));
    }
    tracing::debug!(files = files.len(), "import: begun");
    let read = parallel::map(files, |file| read_one(file, &folder));
    let notes = read
        .into_iter()
        .collect::<Result<Vec<(String, Vec<u8>)>, JournalError>>()?;
    tracing::debug!("import: read and checked");
    let dir = if folder.is_empty() {
        journal.notes.root().to_path_buf()
    } else {
        journal.notes.root().join(&folder)
    };
    let mut batch = Batch::begin(journal.root(), &dir).map_err(|e| JournalError::io(&dir, e))?;
    let bytes: Vec<&[u8]> = notes.iter().map(|(_, bytes)| bytes.as_slice()).collect();
    batch.stage(&bytes).map_err(|e| JournalError::io(&dir, e))?;
    tracing::debug!("import: written and flushed under hidden names");
    let stems: Vec<String> = notes.into_iter().map(|(stem, _)| stem).collect();
    let written = batch.publish_each(&stems).map_err(|e| JournalError::io(&dir, e))?;
    tracing::debug!("import: published");
    journal.sync().await?;
    tracing::debug!("import: catalogued and indexed");
    Ok(written
        .iter()
        .map(|path| {
            let name = path.file_name().map(|n| n.to_string_lossy()).unwrap_or_default();
            in_folder(&folder, &name)
        })
        .collect())
}

/// A note's path in the vault: `name` in `folder` (`""`: the vault's top).
fn in_folder(folder: &str, name: &str) -> String {
    if folder.is_empty() {
        name.to_string()
    } else {
        format!("{folder}/{name}")
    }
}

/// One file read and checked as a note of `folder`: its name's stem and its bytes.
fn read_one(file: &Path, folder: &str) -> Result<(String, Vec<u8>), JournalError> {
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
    let bytes = std::fs::read(file).map_err(|e| JournalError::io(file, e))?;
    note::read(&path, &bytes, 0).map_err(|e| JournalError::Invalid(format!("{}: {e}", file.display())))?;
    Ok((stem.to_string(), bytes))
}
