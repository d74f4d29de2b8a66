//! Applying one agent change to a note file in the vault, with every rule a write keeps: the
//! path is a note path outside quarantine reached through real folders only (never a link out of
//! the vault); the note as it is on disk now (not as the last sync saw it) decides what the agent
//! may do, by the one rule `sight` (hidden answers as missing, read-only refuses); `expected_hash`
//! guards against a change made since the agent read the note; the result must still be a note the
//! agent can see, without a protected key changed (`edit`); and the file is replaced atomically and
//! durably (`fsio`), a new note never clobbering anything.
//!
//! Synchronous and file-level: the caller runs it off the async threads, then syncs the catalog.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::access::{Reader, Sight, sight};
use super::edit::{self, EditError, Place, SectionOp};
use super::note::{self, hash_hex};
use super::ops::{self, Target};
use super::rules;
use super::set::NoteSet;
use super::walls::Walls;
use crate::fsio;

/// One change an agent asks for. Stored with a proposal (as JSON) until the owner accepts it.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum NoteChange {
    /// A new note with this whole text (frontmatter allowed).
    Create {
        content: String,
    },
    /// The body replaced and/or frontmatter keys patched (`null` removes a key).
    Write {
        body: Option<String>,
        patch: Option<Map<String, Value>>,
    },
    Append {
        text: String,
        ensure_newline: bool,
    },
    EditSection {
        place: Place,
        op: SectionOp,
        content: String,
    },
    /// The note removed (it stays in the history: the trash); with `folder`, every note in the
    /// folder the agent may change.
    Delete {
        folder: bool,
    },
    /// The note (or, with `folder`, every note of the folder the agent may change) moved to `to`,
    /// and the links to it in other notes written again (`moves`).
    Move {
        to: String,
        folder: bool,
    },
}

/// At most this many notes go in one deletion or move of a folder.
pub const MAX_FOLDER_NOTES: usize = 1000;

/// What a write did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    pub path: String,
    /// Where a moved note was.
    pub moved_from: Option<String>,
    /// SHA-256 of the new file (None: the note was removed).
    pub hash: Option<String>,
    /// The file's bytes before the change (None: the note is new), for the note's history.
    pub previous: Option<Vec<u8>>,
}

/// Why a write was not made. Nothing changed in any case.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WriteError {
    /// Missing, hidden, unreadable or quarantined: one answer for all, in the words reads use
    /// (`ops::missing`), so that a write tells no more than a read.
    #[error("{0}")]
    Missing(String),
    /// `note_create` where something the agent may not know of is, or cannot be: the same answer
    /// for a quarantined path, a hidden note and a folder in the way.
    #[error("no note can be created at \"{0}\"; choose another path")]
    NotCreatable(String),
    /// `note_create` where a note the agent can see already is.
    #[error("a note already exists at \"{0}\"; read it and use note_write or note_edit_section to change it")]
    Exists(String),
    #[error("the note \"{0}\" is read-only for agents; propose your change in a new note instead")]
    ReadOnly(String),
    /// The file changed since the agent read it (or since it was compared).
    #[error(
        "conflict: the note changed since you read it; its hash is now {current}. Read it again and redo the change"
    )]
    Conflict { current: String },
    #[error("{0}")]
    Edit(#[from] EditError),
    /// The change would leave a note the agent could not read or could not see.
    #[error("{0}")]
    Refused(String),
    /// The disk failed; the detail is for the log.
    #[error("the note could not be written: {0}")]
    Io(String),
}

/// A checked change, not made yet: what the note is now and what it will be. `commit` makes it;
/// between the two the caller keeps the previous version (the note's history) or only shows the
/// change (a proposal's diff).
#[derive(Debug)]
pub struct Plan {
    /// The note's path from the top of the vault.
    pub path: String,
    pub(super) file: PathBuf,
    /// The file's bytes now (None: no note there yet).
    pub before: Option<Vec<u8>>,
    /// The note's whole new text (None: the note is removed).
    pub after: Option<String>,
    /// The permissions the note has now, which the new file keeps.
    pub(super) permissions: Option<fs::Permissions>,
    /// For a move: the note at its old place, removed once the new file is made.
    pub source: Option<MovedFrom>,
}

/// Where a moving note is now.
#[derive(Debug)]
pub struct MovedFrom {
    pub path: String,
    pub(super) file: PathBuf,
    pub bytes: Vec<u8>,
}

impl Plan {
    /// Where the note is before the change: its old place for a move.
    pub fn original_path(&self) -> &str {
        self.source.as_ref().map_or(&self.path, |s| &s.path)
    }

    /// The note's bytes before the change (None: no note there yet).
    pub fn original(&self) -> Option<&[u8]> {
        match &self.source {
            Some(source) => Some(&source.bytes),
            None => self.before.as_deref(),
        }
    }

    /// SHA-256 of the note before the change (None: no note there yet).
    pub fn before_hash(&self) -> Option<String> {
        self.original().map(hash_hex)
    }

    /// SHA-256 of the new file (None: the note is removed).
    pub fn after_hash(&self) -> Option<String> {
        self.after.as_deref().map(|a| hash_hex(a.as_bytes()))
    }

    /// The unified diff of the change.
    pub fn diff(&self) -> String {
        let before = self.original().map(String::from_utf8_lossy);
        match &self.source {
            Some(source) => super::diff::moved(&source.path, &self.path, before.as_deref(), self.after.as_deref()),
            None => super::diff::unified(&self.path, before.as_deref(), self.after.as_deref()),
        }
    }
}

/// Applies `change` to the note at `path` (already a normalized note path) in the vault at `root`.
pub fn apply(
    walls: &Walls,
    reader: &Reader,
    path: &str,
    change: &NoteChange,
    expected_hash: Option<&str>,
) -> Result<Written, WriteError> {
    commit(plan(walls, reader, path, change, expected_hash)?)
}

/// Checks `change` against every rule and works out every file it changes (several for a folder),
/// changing nothing. `expected_hash` is compared with `base_hash` of the plans.
pub fn plan_all(
    walls: &Walls,
    set: &NoteSet,
    reader: &Reader,
    path: &str,
    change: &NoteChange,
    expected_hash: Option<&str>,
) -> Result<Vec<Plan>, WriteError> {
    let plans = match change {
        NoteChange::Delete { folder: true } => plan_folder_delete(walls, reader, path)?,
        NoteChange::Move { to, folder } => super::moves::plan(walls, reader, set, path, to, *folder)?,
        _ => {
            let plans = vec![plan(walls, reader, path, change, expected_hash)?];
            check_ids(&plans, set, reader)?;
            return Ok(plans);
        }
    };
    check_ids(&plans, set, reader)?;
    let hash = base_hash(&plans);
    if let Some(expected) = expected_hash
        && hash.as_deref() != Some(expected)
    {
        return Err(WriteError::Conflict {
            current: hash.unwrap_or_default(),
        });
    }
    Ok(plans)
}

/// What a set of plans changes, as one hash: the one note's hash, or for several (or a move) a
/// SHA-256 over each note's path and hash (so a proposal over a folder notices a change to any of
/// its notes).
pub fn base_hash(plans: &[Plan]) -> Option<String> {
    match plans {
        [one] if one.source.is_none() => one.before_hash(),
        many => {
            let mut lines: Vec<String> = many
                .iter()
                .map(|p| format!("{}\0{}\n", p.original_path(), p.before_hash().unwrap_or_default()))
                .collect();
            lines.sort();
            Some(hash_hex(lines.concat().as_bytes()))
        }
    }
}

/// Makes planned changes in order; when one fails, those already made are put back as they were.
pub fn commit_all(plans: Vec<Plan>) -> Result<Vec<Written>, WriteError> {
    let mut made: Vec<(PathBuf, Option<Vec<u8>>, Option<fs::Permissions>)> = Vec::new();
    let mut written = Vec::new();
    for plan in plans {
        let mut undo = vec![(plan.file.clone(), plan.before.clone(), plan.permissions.clone())];
        if let Some(source) = &plan.source {
            undo.push((
                source.file.clone(),
                Some(source.bytes.clone()),
                plan.permissions.clone(),
            ));
        }
        match commit(plan) {
            Ok(done) => {
                made.extend(undo);
                written.push(done);
            }
            Err(error) => {
                for (file, before, permissions) in made.into_iter().rev() {
                    put_back(&file, before.as_deref(), permissions);
                }
                return Err(error);
            }
        }
    }
    Ok(written)
}

fn put_back(file: &Path, before: Option<&[u8]>, permissions: Option<fs::Permissions>) {
    let result = match before {
        Some(bytes) => fsio::write_atomic(file, bytes).and_then(|()| match permissions {
            Some(p) => fs::set_permissions(file, p),
            None => Ok(()),
        }),
        None => fsio::remove_durable(file),
    };
    if let Err(error) = result {
        tracing::error!(%error, file = %file.display(), "a change made before a failed one could not be put back");
    }
}

/// Checks `change` against every rule and works out the new text, changing nothing.
pub fn plan(
    walls: &Walls,
    reader: &Reader,
    path: &str,
    change: &NoteChange,
    expected_hash: Option<&str>,
) -> Result<Plan, WriteError> {
    match change {
        NoteChange::Create { content } => plan_create(walls, reader, path, content),
        _ => plan_update(walls, reader, path, change, expected_hash),
    }
}

/// The owner's restore of a note to `bytes` (None: no note), over whatever is at `path` now (when
/// given, only if its hash is `expected_hash`; `""` expects no note there). The owner may change any note: no access rule
/// applies, only that the path is a note's, inside the vault.
pub fn plan_restore(
    walls: &Walls,
    path: &str,
    bytes: Option<Vec<u8>>,
    expected_hash: Option<&str>,
) -> Result<Plan, WriteError> {
    let missing = || missing(path);
    let file = walls.file(path).ok_or_else(missing)?;
    let (before, permissions) = match fs::symlink_metadata(&file) {
        Ok(meta) if meta.is_file() => (
            Some(fs::read(&file).map_err(|e| WriteError::Io(e.to_string()))?),
            Some(meta.permissions()),
        ),
        Ok(_) => return Err(WriteError::NotCreatable(path.to_string())),
        Err(e) if e.kind() == io::ErrorKind::NotFound => (None, None),
        Err(e) => return Err(WriteError::Io(e.to_string())),
    };
    let current = before.as_deref().map(hash_hex);
    if let Some(expected) = expected_hash
        && current.as_deref().unwrap_or("") != expected
    {
        return Err(WriteError::Conflict {
            current: current.unwrap_or_else(|| "(no note)".into()),
        });
    }
    let after = match bytes {
        Some(bytes) => {
            Some(String::from_utf8(bytes).map_err(|_| WriteError::Refused("the kept version is not text".into()))?)
        }
        None => None,
    };
    Ok(Plan {
        path: path.to_string(),
        file,
        before,
        after,
        permissions,
        source: None,
    })
}

/// The owner's undo of a move: the note now at `now` (only if its hash is still `expected`) back to
/// `back` as `bytes` (the note as it was before the move), where nothing may be now.
pub fn plan_move_back(
    walls: &Walls,
    now: &str,
    expected: Option<&str>,
    back: &str,
    bytes: Vec<u8>,
) -> Result<Plan, WriteError> {
    let current = plan_restore(walls, now, None, expected)?;
    let Some(current_bytes) = current.before else {
        return Err(missing(now));
    };
    let target = plan_restore(walls, back, Some(bytes), Some(""))?;
    Ok(Plan {
        source: Some(MovedFrom {
            path: current.path,
            file: current.file,
            bytes: current_bytes,
        }),
        permissions: current.permissions,
        ..target
    })
}

/// Makes a planned change, unless the note changed since it was planned.
pub fn commit(plan: Plan) -> Result<Written, WriteError> {
    let hash = plan.after_hash();
    let Some(before) = &plan.before else {
        let Some(after) = &plan.after else {
            return Ok(Written {
                path: plan.path,
                moved_from: None,
                hash: None,
                previous: None,
            });
        };
        match fsio::create_new_atomic(&plan.file, after.as_bytes()) {
            Ok(()) => {}
            // Created meanwhile, by the owner or another agent: as if it had been there.
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => return Err(WriteError::NotCreatable(plan.path)),
            Err(e) => return Err(WriteError::Io(e.to_string())),
        }
        keep_permissions(&plan);
        let Some(source) = plan.source else {
            return Ok(Written {
                path: plan.path,
                moved_from: None,
                hash,
                previous: None,
            });
        };
        // The new file is there: the old one goes, unless it changed since the plan (then the new
        // one goes again, and nothing moved). A crash between the two leaves both, never neither.
        let removed = match fs::read(&source.file) {
            Ok(now) if now == source.bytes => {
                fsio::remove_durable(&source.file).map_err(|e| WriteError::Io(e.to_string()))
            }
            Ok(now) => Err(WriteError::Conflict {
                current: hash_hex(&now),
            }),
            Err(_) => Err(missing(&source.path)),
        };
        if let Err(error) = removed {
            put_back(&plan.file, None, None);
            return Err(error);
        }
        return Ok(Written {
            path: plan.path,
            moved_from: Some(source.path),
            hash,
            previous: Some(source.bytes),
        });
    };
    // The owner may have saved since the plan: compare once more just before replacing, so that a
    // save is never overwritten unseen (the window left is the rename itself).
    let now = fs::read(&plan.file).map_err(|_| missing(&plan.path))?;
    if now != *before {
        return Err(WriteError::Conflict {
            current: hash_hex(&now),
        });
    }
    let Some(after) = &plan.after else {
        fsio::remove_durable(&plan.file).map_err(|e| WriteError::Io(e.to_string()))?;
        return Ok(Written {
            path: plan.path,
            moved_from: None,
            hash: None,
            previous: Some(now),
        });
    };
    fsio::write_atomic(&plan.file, after.as_bytes()).map_err(|e| WriteError::Io(e.to_string()))?;
    keep_permissions(&plan);
    Ok(Written {
        path: plan.path,
        moved_from: None,
        hash,
        previous: Some(now),
    })
}

/// The new file is made owner-only; the note keeps the permissions the owner gave it (a crash
/// before this leaves it owner-only, never more open).
fn keep_permissions(plan: &Plan) {
    if let Some(permissions) = &plan.permissions
        && let Err(error) = fs::set_permissions(&plan.file, permissions.clone())
    {
        tracing::warn!(%error, path = plan.path, "a changed note kept owner-only permissions");
    }
}

fn plan_create(walls: &Walls, reader: &Reader, path: &str, content: &str) -> Result<Plan, WriteError> {
    let refused = || WriteError::NotCreatable(path.to_string());
    let file = walls.file(path).ok_or_else(refused)?;
    if let Ok(meta) = fs::symlink_metadata(&file) {
        // A note the agent may see is named; anything else there (hidden note, folder, link) is not.
        return Err(match current(&file, path, &meta) {
            Some((_, note)) if sight(&note, reader).visible() => WriteError::Exists(path.into()),
            _ => refused(),
        });
    }
    if walls.twin(path, None) {
        // `notes/plan.md` beside `Notes/Plan.md`: answered as any path no note can take, so that
        // the answer is the same whether the twin is a note the agent sees, a hidden one or a folder.
        return Err(refused());
    }
    let text = edit::create(content)?;
    check_result(path, &text, reader, None)?;
    Ok(Plan {
        path: path.to_string(),
        file,
        before: None,
        after: Some(text),
        permissions: None,
        source: None,
    })
}

fn plan_update(
    walls: &Walls,
    reader: &Reader,
    path: &str,
    change: &NoteChange,
    expected_hash: Option<&str>,
) -> Result<Plan, WriteError> {
    let found = changeable(walls, reader, path)?;
    if let Some(expected) = expected_hash {
        let hash = hash_hex(&found.bytes);
        if expected != hash {
            return Err(WriteError::Conflict { current: hash });
        }
    }
    let text = std::str::from_utf8(&found.bytes).map_err(|_| missing(path))?;
    let new = match change {
        NoteChange::Delete { .. } => None,
        _ => {
            let new = changed(text, change)?;
            check_result(path, &new, reader, Some(&found.bytes))?;
            Some(new)
        }
    };
    Ok(Plan {
        path: found.path,
        file: found.file,
        before: Some(found.bytes),
        after: new,
        permissions: Some(found.meta.permissions()),
        source: None,
    })
}

/// A note on disk that a writer may change, as it is now.
pub(super) struct Found {
    pub path: String,
    pub file: PathBuf,
    pub bytes: Vec<u8>,
    pub meta: fs::Metadata,
}

/// The note at `path` if `reader` may change it: hidden answers as missing, read-only refuses.
pub(super) fn changeable(walls: &Walls, reader: &Reader, path: &str) -> Result<Found, WriteError> {
    let missing = || missing(path);
    let file = walls.file(path).ok_or_else(missing)?;
    let meta = fs::symlink_metadata(&file).map_err(|_| missing())?;
    let (bytes, note) = current(&file, path, &meta).ok_or_else(missing)?;
    match sight(&note, reader) {
        Sight::Hidden => Err(missing()),
        Sight::ReadOnly => Err(WriteError::ReadOnly(path.to_string())),
        Sight::Open => Ok(Found {
            path: path.to_string(),
            file,
            bytes,
            meta,
        }),
    }
}

/// Every note in `folder` (and below) that `reader` may change, in path order. Notes it may not
/// see, quarantined folders, links and other files are passed over and not named; a read-only note
/// refuses the whole folder. A folder with no note the reader can see answers as a missing one.
pub(super) fn changeable_in(walls: &Walls, reader: &Reader, folder: &str) -> Result<Vec<Found>, WriteError> {
    let missing = || missing(folder);
    let dir = walls.folder(folder).ok_or_else(missing)?;
    if !fs::symlink_metadata(&dir).is_ok_and(|m| m.is_dir()) {
        return Err(missing());
    }
    let mut found = Vec::new();
    let mut folders = vec![(dir, folder.to_string())];
    while let Some((dir, relative)) = folders.pop() {
        let entries = fs::read_dir(&dir).map_err(|e| WriteError::Io(e.to_string()))?;
        let mut names: Vec<(String, fs::Metadata)> = entries
            .filter_map(Result::ok)
            .filter_map(|e| Some((e.file_name().into_string().ok()?, e.metadata().ok()?)))
            .collect();
        names.sort_by(|a, b| a.0.cmp(&b.0));
        for (name, meta) in names {
            let path = format!("{relative}/{name}");
            let file = dir.join(&name);
            if meta.is_dir() {
                // Never into quarantine nor into the journal's own folder, which the vault may hold.
                if !rules::quarantined(&path) && !walls.is_own(&file, &meta) {
                    folders.push((file, path));
                }
                continue;
            }
            if !rules::is_note_path(&path) || rules::quarantined(&path) {
                continue;
            }
            let Some((bytes, note)) = current(&file, &path, &meta) else {
                continue;
            };
            match sight(&note, reader) {
                Sight::Hidden => continue,
                Sight::ReadOnly => return Err(WriteError::ReadOnly(path)),
                Sight::Open => {}
            }
            if found.len() == MAX_FOLDER_NOTES {
                return Err(WriteError::Refused(format!(
                    "the folder holds more than {MAX_FOLDER_NOTES} notes; take its folders one at a time"
                )));
            }
            found.push(Found {
                path,
                file,
                bytes,
                meta,
            });
        }
    }
    if found.is_empty() {
        return Err(missing());
    }
    found.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(found)
}

/// Every note in `folder` that `reader` may change, planned for removal (`changeable_in`).
fn plan_folder_delete(walls: &Walls, reader: &Reader, folder: &str) -> Result<Vec<Plan>, WriteError> {
    Ok(changeable_in(walls, reader, folder)?
        .into_iter()
        .map(|found| Plan {
            permissions: Some(found.meta.permissions()),
            path: found.path,
            file: found.file,
            before: Some(found.bytes),
            after: None,
            source: None,
        })
        .collect())
}

/// Removes the folders under (and including) `folder` that a deletion left empty; anything else
/// stays. Best effort: a folder that cannot be removed is simply left.
pub fn remove_empty_folders(walls: &Walls, folder: &str) {
    let Some(dir) = walls.folder(folder) else {
        return;
    };
    fn prune(walls: &Walls, dir: &Path) {
        let Ok(entries) = fs::read_dir(dir) else { return };
        for entry in entries.filter_map(Result::ok) {
            let name = entry.file_name();
            let Ok(meta) = entry.metadata() else { continue };
            // Only the vault's own folders: quarantined ones and the journal's are left as they are.
            if meta.is_dir()
                && !name.to_str().is_none_or(rules::quarantined_name)
                && !walls.is_own(&entry.path(), &meta)
            {
                prune(walls, &entry.path());
            }
        }
        // Fails (and leaves it) unless empty.
        let _ = fs::remove_dir(dir);
    }
    prune(walls, &dir);
}

/// A note or a folder as `note_delete` or `note_move` was given it: a path ending in `/` is a
/// folder, one ending in `.md` a note; otherwise a folder when a real folder is there, else a note.
/// Answers the normalized path and whether it is a folder.
pub fn typed_target(walls: &Walls, typed: &str) -> Result<(String, bool), rules::PathError> {
    let trimmed = typed.trim();
    if trimmed.ends_with('/') {
        let folder = rules::typed_folder(trimmed)?;
        if folder.is_empty() {
            return Err(rules::PathError(
                "path names the whole notes folder; give a note or a folder inside it".into(),
            ));
        }
        return Ok((folder, true));
    }
    if trimmed.ends_with(".md") {
        return Ok((rules::typed_note_path(trimmed)?, false));
    }
    if let Ok(folder) = rules::typed_folder(trimmed)
        && !folder.is_empty()
        && walls
            .folder(&folder)
            .is_some_and(|d| fs::symlink_metadata(d).is_ok_and(|m| m.is_dir()))
    {
        return Ok((folder, true));
    }
    Ok((rules::typed_note_path(trimmed)?, false))
}

/// Where `note_move` moves what is at `from` (a note or a folder, `typed_target`): `to` as typed is
/// the new path of a folder, or of a note (`.md` added when missing; ending in `/`, the folder the
/// note goes into under its own name). Answers the normalized `from`, `to` and whether a folder
/// moves. A note stays a markdown note: `to` may not name another kind of file.
pub fn move_target(walls: &Walls, from: &str, to: &str) -> Result<(String, String, bool), rules::PathError> {
    let (from, folder) = typed_target(walls, from)?;
    let typed = to.trim();
    if folder {
        if typed.ends_with(".md") {
            return Err(rules::PathError(format!(
                "\"{from}\" is a folder and moves to a folder: give `to` without .md"
            )));
        }
        let to = rules::typed_folder(typed)?;
        if to.is_empty() {
            return Err(rules::PathError(
                "to names the whole notes folder; give a folder inside it".into(),
            ));
        }
        return Ok((from, to, true));
    }
    if typed.ends_with('/') {
        let into = rules::typed_folder(typed)?;
        let name = from.rsplit('/').next().unwrap_or(&from);
        let to = if into.is_empty() {
            name.to_string()
        } else {
            format!("{into}/{name}")
        };
        return Ok((from, to, false));
    }
    Ok((from, rules::typed_note_path(typed)?, false))
}

/// The answer for a note that is not there for this writer, whatever the reason.
pub(super) fn missing(path: &str) -> WriteError {
    WriteError::Missing(ops::missing(&Target::Path(path.to_string())).to_string())
}

/// The note's new text for a change of an existing note.
fn changed(text: &str, change: &NoteChange) -> Result<String, EditError> {
    match change {
        NoteChange::Create { content } => edit::create(content),
        NoteChange::Write { body, patch } => {
            let mut text = text.to_string();
            if let Some(patch) = patch {
                text = edit::patch_frontmatter(&text, patch)?;
            }
            if let Some(body) = body {
                text = edit::replace_body(&text, body)?;
            }
            Ok(text)
        }
        NoteChange::Append {
            text: addition,
            ensure_newline,
        } => edit::append(text, addition, *ensure_newline),
        NoteChange::EditSection { place, op, content } => edit::edit_section(text, place, *op, content),
        // Planned apart (`plan_all`).
        NoteChange::Delete { .. } | NoteChange::Move { .. } => Ok(String::new()),
    }
}

/// The result must be a note the reader could read and see: a change may not make a note
/// unreadable (its access unknowable) nor take it out of the agent's own reach. A facet-limited
/// writer files notes only within its facets: it may not add a facet it does not reach (which would
/// hand the note to the agents of that facet) nor remove one (which would take it from them).
fn check_result(path: &str, text: &str, reader: &Reader, before: Option<&[u8]>) -> Result<(), WriteError> {
    if text.len() as u64 > note::MAX_NOTE_BYTES {
        return Err(WriteError::Refused("the note would be larger than 8 MiB".into()));
    }
    let read = note::read(path, text.as_bytes(), 0)
        .map_err(|e| WriteError::Refused(format!("the result would not be a readable note: {e}")))?;
    if !sight(&read.note, reader).visible() {
        return Err(WriteError::Refused(
            "the change would take the note out of your reach (its facets); keep a facet your connection can read"
                .into(),
        ));
    }
    if let crate::journal::content::Scope::Facets(allowed) = &reader.scope {
        let was: Vec<String> = before
            .and_then(|bytes| note::read(path, bytes, 0).ok())
            .map(|r| r.note.facets)
            .unwrap_or_default();
        let now = &read.note.facets;
        let mut outside: Vec<&str> = now
            .iter()
            .filter(|f| !was.contains(f))
            .chain(was.iter().filter(|f| !now.contains(f)))
            .filter(|f| !allowed.contains(f))
            .map(String::as_str)
            .collect();
        outside.sort_unstable();
        outside.dedup();
        if !outside.is_empty() {
            return Err(WriteError::Refused(format!(
                "your connection files notes only in its own facets ({}); it may not add or remove the facet {}",
                allowed.join(", "),
                outside.join(", ")
            )));
        }
    }
    Ok(())
}

/// A note an agent writes may not take a frontmatter `id` that another note the agent can see
/// already has: `note_read {id}` would then find the agent's note in place of the owner's. (Ids of
/// notes it cannot see are never compared, so the answer tells nothing of them; a reader who sees
/// two notes with one id is asked for a path instead, see `ops::read`.)
fn check_ids(plans: &[Plan], set: &NoteSet, reader: &Reader) -> Result<(), WriteError> {
    let id_of = |path: &str, bytes: &[u8]| note::read(path, bytes, 0).ok().and_then(|r| r.note.id);
    for plan in plans {
        let Some(after) = &plan.after else { continue };
        // Only frontmatter (after a byte order mark, maybe) holds an id: most notes need no second
        // read (`check_result` read this one).
        if !after.strip_prefix('\u{feff}').unwrap_or(after).starts_with("---") {
            continue;
        }
        let Some(id) = id_of(&plan.path, after.as_bytes()) else {
            continue;
        };
        if plan.original().and_then(|b| id_of(plan.original_path(), b)).as_deref() == Some(id.as_str()) {
            continue;
        }
        let taken = set.visible(reader).any(|(other, _)| {
            other.id.as_deref() == Some(id.as_str()) && other.path != plan.path && other.path != plan.original_path()
        });
        if taken {
            return Err(WriteError::Refused(format!(
                "the id \"{id}\" is another note's already; choose another id, or none (a note without one is known \
                 by its path)"
            )));
        }
    }
    Ok(())
}

/// A regular file's bytes and the note they make, if readable as one.
pub(super) fn current(file: &Path, path: &str, meta: &fs::Metadata) -> Option<(Vec<u8>, note::Note)> {
    if !meta.is_file() || meta.len() > note::MAX_NOTE_BYTES {
        return None;
    }
    let bytes = fs::read(file).ok()?;
    let note = note::read(path, &bytes, 0).ok()?.note;
    Some((bytes, note))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::journal::content::Scope;
    use serde_json::json;

    fn reader(scope: Scope) -> Reader {
        Reader {
            scope,
            label: "Test Agent".into(),
        }
    }

    fn whole() -> Reader {
        reader(Scope::WholeJournal)
    }

    fn vault(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (path, text) in files {
            let file = dir.path().join(path);
            fs::create_dir_all(file.parent().unwrap()).unwrap();
            fs::write(file, text).unwrap();
        }
        dir
    }

    fn read(dir: &tempfile::TempDir, path: &str) -> String {
        fs::read_to_string(dir.path().join(path)).unwrap()
    }

    fn create_change(content: &str) -> NoteChange {
        NoteChange::Create {
            content: content.into(),
        }
    }

    fn append_change(text: &str) -> NoteChange {
        NoteChange::Append {
            text: text.into(),
            ensure_newline: true,
        }
    }

    #[test]
    fn no_note_is_created_beside_a_twin_that_differs_only_in_case() {
        let dir = vault(&[("Notes/Plan.md", "mine"), ("secret.md", "---\naccess: private\n---\nx")]);
        let walls = Walls::new(dir.path());
        for path in [
            "Notes/plan.md",
            "NOTES/Plan.md",
            "notes/new.md",
            "Secret.md",
            "notes./x.md",
        ] {
            let refused = apply(&walls, &whole(), path, &create_change("x"), None).unwrap_err();
            assert_eq!(refused, WriteError::NotCreatable(path.into()), "{path}");
            assert!(!dir.path().join(path).exists(), "{path}");
        }
        // A hidden twin answers exactly as a twin the agent sees, and as any path no note can take.
        let hidden = apply(&walls, &whole(), "SECRET.md", &create_change("x"), None).unwrap_err();
        let seen = apply(&walls, &whole(), "notes/plan.md", &create_change("x"), None).unwrap_err();
        assert_eq!(
            hidden.to_string().replace("SECRET.md", "P"),
            seen.to_string().replace("notes/plan.md", "P")
        );
        apply(&walls, &whole(), "Notes/Plan2.md", &create_change("x"), None).unwrap();
    }

    #[test]
    fn create_makes_the_note_and_its_folders_and_never_clobbers() {
        let dir = vault(&[("Inbox.md", "old")]);
        let made = apply(
            &Walls::new(dir.path()),
            &whole(),
            "Projects/new/a.md",
            &create_change("# A\n"),
            None,
        )
        .unwrap();
        assert_eq!(read(&dir, "Projects/new/a.md"), "# A\n");
        assert_eq!(made.hash, Some(hash_hex(b"# A\n")));
        assert_eq!(made.previous, None);
        let again = apply(
            &Walls::new(dir.path()),
            &whole(),
            "Inbox.md",
            &create_change("new"),
            None,
        )
        .unwrap_err();
        assert_eq!(again, WriteError::Exists("Inbox.md".into()));
        assert_eq!(read(&dir, "Inbox.md"), "old");
    }

    #[test]
    fn a_hidden_note_and_a_quarantined_path_answer_alike_on_create() {
        let dir = vault(&[
            ("secret.md", "---\naccess: private\n---\nx"),
            ("mine.md", "---\nagent_overrides:\n  test agent: no-access\n---\nx"),
        ]);
        fs::create_dir_all(dir.path().join("folder.md")).unwrap();
        let answers: Vec<String> = [
            "secret.md",
            "mine.md",
            "_private/a.md",
            ".obsidian/a.md",
            "Widgets/a.md",
            "folder.md",
        ]
        .iter()
        .map(|path| {
            apply(&Walls::new(dir.path()), &whole(), path, &create_change("x"), None)
                .unwrap_err()
                .to_string()
                .replace(path, "PATH")
        })
        .collect();
        assert!(answers.iter().all(|a| a == &answers[0]), "{answers:?}");
        assert_eq!(read(&dir, "secret.md"), "---\naccess: private\n---\nx");
        assert!(!dir.path().join("_private").exists());
    }

    #[test]
    fn changes_follow_sight_hidden_is_missing_and_read_only_refuses() {
        let dir = vault(&[
            ("open.md", "text"),
            ("locked.md", "---\naccess: read-only\n---\nx"),
            ("secret.md", "---\naccess: private\n---\nx"),
            ("_private/q.md", "x"),
        ]);
        assert!(
            apply(
                &Walls::new(dir.path()),
                &whole(),
                "open.md",
                &append_change("more"),
                None
            )
            .is_ok()
        );
        assert_eq!(read(&dir, "open.md"), "text\nmore");
        assert_eq!(
            apply(
                &Walls::new(dir.path()),
                &whole(),
                "locked.md",
                &append_change("y"),
                None
            ),
            Err(WriteError::ReadOnly("locked.md".into()))
        );
        for path in ["secret.md", "_private/q.md", "absent.md"] {
            assert_eq!(
                apply(&Walls::new(dir.path()), &whole(), path, &append_change("y"), None),
                Err(missing(path)),
                "{path}"
            );
        }
        assert_eq!(read(&dir, "secret.md"), "---\naccess: private\n---\nx");
    }

    #[test]
    fn an_expected_hash_guards_against_a_change_made_since() {
        let dir = vault(&[("a.md", "one")]);
        let stale = hash_hex(b"something else");
        let conflict = apply(
            &Walls::new(dir.path()),
            &whole(),
            "a.md",
            &append_change("two"),
            Some(&stale),
        )
        .unwrap_err();
        assert_eq!(
            conflict,
            WriteError::Conflict {
                current: hash_hex(b"one")
            }
        );
        assert!(conflict.to_string().starts_with("conflict:"));
        let written = apply(
            &Walls::new(dir.path()),
            &whole(),
            "a.md",
            &append_change("two"),
            Some(&hash_hex(b"one")),
        )
        .unwrap();
        assert_eq!(written.previous.as_deref(), Some(&b"one"[..]));
        assert_eq!(written.hash, Some(hash_hex(b"one\ntwo")));
    }

    #[test]
    fn a_change_may_not_hide_the_note_from_its_writer_nor_break_it() {
        let dir = vault(&[("w.md", "---\nfacets: [work]\n---\nx")]);
        let work = reader(Scope::Facets(vec!["work".into()]));
        let away = NoteChange::Write {
            body: None,
            patch: Some(json!({"facets": ["home"]}).as_object().unwrap().clone()),
        };
        let refused = apply(&Walls::new(dir.path()), &work, "w.md", &away, None).unwrap_err();
        assert!(refused.to_string().contains("out of your reach"), "{refused}");
        let broken = NoteChange::Write {
            body: Some("---\nunclosed".into()),
            patch: None,
        };
        let dir2 = vault(&[("plain.md", "x")]);
        let refused = apply(&Walls::new(dir2.path()), &whole(), "plain.md", &broken, None).unwrap_err();
        assert!(refused.to_string().contains("not be a readable note"), "{refused}");
        assert_eq!(read(&dir2, "plain.md"), "x");
    }

    #[test]
    fn protected_keys_are_refused_in_every_change() {
        let dir = vault(&[("a.md", "---\ntitle: a\n---\nbody")]);
        let sneaky = NoteChange::Write {
            body: None,
            patch: Some(json!({"access": "private"}).as_object().unwrap().clone()),
        };
        assert!(matches!(
            apply(&Walls::new(dir.path()), &whole(), "a.md", &sneaky, None),
            Err(WriteError::Edit(EditError::Protected(_)))
        ));
        let create = create_change("---\naccess: read-only\n---\n");
        assert!(matches!(
            apply(&Walls::new(dir.path()), &whole(), "b.md", &create, None),
            Err(WriteError::Edit(EditError::Protected(_)))
        ));
        assert!(!dir.path().join("b.md").exists());
    }

    #[test]
    fn a_move_target_keeps_kinds_and_reads_a_folder_to_go_into() {
        let dir = vault(&[("Projects/a.md", "a"), ("Inbox.md", "i")]);
        let target = |from: &str, to: &str| move_target(&Walls::new(dir.path()), from, to);
        assert_eq!(
            target("Inbox", "Filed/"),
            Ok(("Inbox.md".into(), "Filed/Inbox.md".into(), false))
        );
        assert_eq!(
            target("Inbox.md", "Done"),
            Ok(("Inbox.md".into(), "Done.md".into(), false))
        );
        assert_eq!(
            target("Projects", "Archive/P"),
            Ok(("Projects".into(), "Archive/P".into(), true))
        );
        assert_eq!(
            target("Projects/", "Archive/P/"),
            Ok(("Projects".into(), "Archive/P".into(), true))
        );
        assert!(target("Inbox.md", "Inbox.html").unwrap_err().0.contains("not a note"));
        assert!(target("Projects", "P.md").unwrap_err().0.contains("moves to a folder"));
        assert!(target("Projects", "/").is_err());
        assert!(target("Inbox.md", "../out.md").is_err());
    }

    #[cfg(unix)]
    #[test]
    fn a_changed_note_keeps_its_permissions() {
        use std::os::unix::fs::PermissionsExt;
        let dir = vault(&[("shared.md", "x")]);
        let file = dir.path().join("shared.md");
        fs::set_permissions(&file, fs::Permissions::from_mode(0o644)).unwrap();
        apply(
            &Walls::new(dir.path()),
            &whole(),
            "shared.md",
            &append_change("y"),
            None,
        )
        .unwrap();
        assert_eq!(fs::metadata(&file).unwrap().permissions().mode() & 0o777, 0o644);
        assert_eq!(read(&dir, "shared.md"), "x\ny");
    }

    #[cfg(unix)]
    #[test]
    fn a_link_never_leads_a_write_out_of_the_vault() {
        let outside = tempfile::tempdir().unwrap();
        fs::write(outside.path().join("t.md"), "outside").unwrap();
        let dir = vault(&[]);
        std::os::unix::fs::symlink(outside.path(), dir.path().join("Linked")).unwrap();
        std::os::unix::fs::symlink(outside.path().join("t.md"), dir.path().join("l.md")).unwrap();
        assert!(
            apply(
                &Walls::new(dir.path()),
                &whole(),
                "Linked/n.md",
                &create_change("x"),
                None
            )
            .is_err()
        );
        assert!(
            apply(
                &Walls::new(dir.path()),
                &whole(),
                "Linked/t.md",
                &append_change("x"),
                None
            )
            .is_err()
        );
        assert!(apply(&Walls::new(dir.path()), &whole(), "l.md", &append_change("x"), None).is_err());
        assert!(!outside.path().join("n.md").exists());
        assert_eq!(fs::read_to_string(outside.path().join("t.md")).unwrap(), "outside");
    }
}
