//! Notes: the owner's markdown vault, read in place.
//!
//! The vault is `notes/` in the journal folder, or the folder `[notes] dir` in `journal.toml` names
//! (`journal notes use DIR`): an existing vault (often Obsidian's) that the journal reads and
//! indexes and never moves, rewrites or adds to (writes arrive with the write tools, through one
//! gate). Every `.md` file outside quarantine is a note (`rules`); `note` reads one into its
//! metadata, `markdown` its headings, tags and links; `scan` and `sync` keep the catalog (the
//! `notes` table), the search index and the in-memory `NoteSet` in step with the files, so that the
//! owner's own edits show within a sync; `access` decides who sees what, in one function; `query`
//! is `base_query`'s language and `filters` the inline filters of `search`.

pub mod access;
pub mod changes;
mod chunks;
pub mod diff;
pub mod edit;
pub mod filters;
mod flat;
pub mod history;
mod ignored;
pub mod import;
pub mod links;
pub mod markdown;
pub mod moves;
pub mod note;
pub mod ops;
pub mod query;
pub mod recovery;
pub mod rowset;
pub mod rules;
pub mod scan;
pub mod set;
pub mod sync;
pub mod walls;
pub mod write;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use serde::Deserialize;

use super::JournalError;
use crate::db::Pool;
pub use access::{Reader, Sight};
pub use note::Note;
pub use set::NoteSet;

/// `[notes]` in `journal.toml`.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NotesSettings {
    /// The vault folder: absolute, or relative to the journal folder. Default: `notes/` in it.
    pub dir: Option<String>,
    /// How many MiB of earlier versions the changes of one agent connection may keep for the
    /// owner's undo (default 256). A change beyond it is refused, never made at the cost of older
    /// versions.
    pub history_mib: Option<u32>,
}

/// The journal's own folders, which can never be (or hold) the vault.
const OWN_FOLDERS: [&str; 4] = ["facets", "entities", "transcripts", "memory"];

/// The vault the journal serves, and what it knows of it.
pub struct Vault {
    /// The vault folder (canonical when it exists).
    root: PathBuf,
    /// The vault folder and the journal's own folder, which every path to a note passes
    /// (`walls`): the scan skips it and no read or write reaches into it when the vault holds it.
    walls: walls::Walls,
    set: RwLock<Arc<NoteSet>>,
    /// Folders and their times as of the last scan (None: never scanned), for quick syncs.
    folder_stamps: Mutex<Option<HashMap<String, i64>>>,
    /// The catalog describes another folder (or none), or a reindex starts over: the next sync forgets
    /// what the catalog and the index hold of notes first.
    reset: AtomicBool,
    /// Whether `set` holds the catalog's notes (a journal opened for a command that never reads notes
    /// leaves them unread; its first sync reads them).
    loaded: AtomicBool,
    /// Bytes of earlier versions one agent connection's changes may keep (`history_mib`).
    history_budget: i64,
    /// Whether the folder was missing at the last sync (said once, not every two seconds).
    missing: AtomicBool,
    /// When the last full scan began and how long it took, to space full scans (see `sync`).
    full_scan: Mutex<Option<(std::time::Instant, std::time::Duration)>>,
}

impl Vault {
    /// Finds the vault from `journal.toml`, creates the default `notes/` folder, and, with `load`,
    /// loads the catalog's notes (unless it describes another folder, which the next sync forgets).
    pub async fn open(journal_root: &Path, pool: &Pool, load: bool) -> Result<Vault, JournalError> {
        let root = location(journal_root)?;
        let history_budget = settings(journal_root)?
            .history_mib
            .map_or(history::KEEP_BYTES_PER_CONNECTION, |mib| i64::from(mib) * 1024 * 1024);
        if root == journal_root.join("notes") {
            crate::fsio::create_dir_all_durable(&root).map_err(|e| JournalError::io(&root, e))?;
        }
        let root = root.canonicalize().unwrap_or(root);
        let described: Option<String> =
            sqlx::query_scalar("SELECT value FROM journal_state WHERE name = 'notes_vault'")
                .fetch_optional(pool)
                .await?;
        let reset = described.as_deref() != Some(&root.to_string_lossy());
        let set = if reset || !load {
            NoteSet::default()
        } else {
            sync::load(pool).await?
        };
        Ok(Vault {
            walls: walls::Walls::with_journal(&root, journal_root),
            root,
            set: RwLock::new(Arc::new(set)),
            folder_stamps: Mutex::new(None),
            reset: AtomicBool::new(reset),
            history_budget,
            loaded: AtomicBool::new(reset || load),
            missing: AtomicBool::new(false),
            full_scan: Mutex::new(None),
        })
    }

    /// The vault folder.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Bytes of earlier versions one agent connection's changes may keep.
    pub fn history_budget(&self) -> i64 {
        self.history_budget
    }

    /// The walls every path to a note passes.
    pub fn walls(&self) -> &walls::Walls {
        &self.walls
    }

    /// The notes as of the last sync.
    pub fn set(&self) -> Arc<NoteSet> {
        self.set.read().map(|s| Arc::clone(&s)).unwrap_or_default()
    }

    fn replace_set(&self, set: NoteSet) {
        if let Ok(mut slot) = self.set.write() {
            *slot = Arc::new(set);
        }
    }

    /// Reads a note's file as it is now. `None` when it cannot be read (gone since the last sync, or
    /// reached only through a link: the same rule as writes, so nothing outside the vault is read).
    pub fn read_file(&self, path: &str) -> Option<(Vec<u8>, i64)> {
        let file = self.walls.file(path)?;
        let meta = std::fs::symlink_metadata(&file).ok()?;
        if !meta.is_file() || meta.len() > note::MAX_NOTE_BYTES {
            return None;
        }
        let modified_ms = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_millis() as i64);
        std::fs::read(&file).ok().map(|bytes| (bytes, modified_ms))
    }

    /// Forgets the folder stamps, so the next sync lists every folder.
    pub(crate) fn forget_stamps(&self) {
        if let Ok(mut stamps) = self.folder_stamps.lock() {
            *stamps = None;
        }
    }

    pub(crate) fn needs_reset(&self) -> bool {
        self.reset.load(Ordering::SeqCst)
    }

    /// Makes the next sync start over: forget every note the catalog and the index hold, and read
    /// the whole vault (see `Journal::reindex`).
    pub(crate) fn start_over(&self) {
        self.reset.store(true, Ordering::SeqCst);
        self.forget_stamps();
    }
}

/// The vault folder `journal.toml` names (relative to the journal folder when not absolute), or
/// `notes/` in the journal folder. Refused: the journal folder itself and its own content folders.
pub fn location(journal_root: &Path) -> Result<PathBuf, JournalError> {
    let settings = settings(journal_root)?;
    let Some(dir) = settings.dir.filter(|d| !d.trim().is_empty()) else {
        return Ok(journal_root.join("notes"));
    };
    let dir = journal_root.join(dir.trim());
    check_location(journal_root, &dir)?;
    Ok(dir)
}

/// `[notes]` of `journal.toml` (the defaults when there is none).
fn settings(journal_root: &Path) -> Result<NotesSettings, JournalError> {
    let file = journal_root.join("journal.toml");
    let settings = match std::fs::read_to_string(&file) {
        Ok(text) => {
            let table: toml::Table = text.parse().map_err(|e: toml::de::Error| {
                JournalError::Invalid(format!("{}: {}", file.display(), one_line(&e.to_string())))
            })?;
            match table.get("notes") {
                None => NotesSettings::default(),
                Some(value) => value.clone().try_into().map_err(|e: toml::de::Error| {
                    JournalError::Invalid(format!("{}: [notes]: {}", file.display(), one_line(&e.to_string())))
                })?,
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => NotesSettings::default(),
        Err(e) => return Err(JournalError::io(&file, e)),
    };
    if settings.history_mib == Some(0) {
        return Err(JournalError::Invalid(format!(
            "{}: [notes] history_mib must be at least 1 (MiB of earlier versions per agent)",
            file.display()
        )));
    }
    Ok(settings)
}

/// Refuses a vault folder that is the journal's folder or lies in one of its own folders.
pub fn check_location(journal_root: &Path, dir: &Path) -> Result<(), JournalError> {
    let canonical = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
    let (root, dir) = (canonical(journal_root), canonical(dir));
    if dir == root {
        return Err(JournalError::Invalid(
            "the notes folder cannot be the journal folder itself; name the vault's own folder".into(),
        ));
    }
    if let Ok(inside) = dir.strip_prefix(&root) {
        let first = inside
            .components()
            .next()
            .map(|c| c.as_os_str().to_string_lossy().to_string());
        if let Some(first) = first
            && (OWN_FOLDERS.contains(&first.as_str()) || first.starts_with('.'))
        {
            return Err(JournalError::Invalid(format!(
                "the notes folder cannot be inside the journal's own {first}/ folder; name the vault's own folder"
            )));
        }
    }
    Ok(())
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The hasher of maps keyed by `index_key`, which is the first bytes of a SHA-256 digest, already
/// uniform: a key is its own hash (a search's filter looks a key up for each candidate, and SipHash
/// cost more than the rest of the lookup).
#[derive(Debug, Default, Clone, Copy)]
pub struct KeyHasher(u64);

impl std::hash::Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        // Only `u64`s are hashed here (see `write_u64`); any other input is folded in all the same.
        for byte in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(*byte);
        }
    }

    fn write_u64(&mut self, key: u64) {
        self.0 = key;
    }
}

/// A 64-bit key of a note path, as the search index stores it so a filter over notes' metadata
/// can select documents without a term per note.
pub fn index_key(path: &str) -> u64 {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(path.as_bytes());
    u64::from_be_bytes(digest[..8].try_into().unwrap_or([0; 8]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_vault_is_notes_by_default_and_never_the_journal_itself() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        assert_eq!(location(root).unwrap(), root.join("notes"));
        std::fs::write(root.join("journal.toml"), "[notes]\ndir = \"vault\"\n").unwrap();
        assert_eq!(location(root).unwrap(), root.join("vault"));
        for (toml, expected) in [
            ("[notes]\ndir = \".\"\n", "journal folder itself"),
            ("[notes]\ndir = \"transcripts/x\"\n", "transcripts/"),
            ("[notes]\ndir = \".index\"\n", ".index/"),
            ("[notes]\nfolder = \"x\"\n", "unknown field"),
            ("[notes\n", "journal.toml"),
        ] {
            std::fs::write(root.join("journal.toml"), toml).unwrap();
            let error = location(root).unwrap_err().to_string();
            assert!(error.contains(expected), "{toml}: {error}");
            assert!(!error.contains('\n'));
        }
    }
}
