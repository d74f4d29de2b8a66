//! The vault's walls: the one place that turns a note path into a file on disk, for reads and
//! writes alike, the agents' and the owner's.
//!
//! A path passes the walls when it is a note path outside quarantine (`rules`, whose names are
//! compared case-folded, so `_Private/` on a file system that ignores case is `_private/`), every
//! folder on the way to it is a real folder (a link never leads out of the vault), and none of those
//! folders is the journal's own folder. That last check is by identity (device and inode), not by
//! name: when the owner keeps the journal inside the vault, `JDIR/memory` on a case-insensitive
//! file system, or the folder reached under any other spelling, is still the journal's and is
//! refused. Folders not there yet are fine: a new note creates them. And none of them, nor the note,
//! is left out of the vault as git would leave it out (`ignored`: `node_modules`, `.gitignore`).

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use super::ignored::Ignores;
use super::rules;

/// What identifies a folder on disk whatever its path is spelled as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct FolderId {
    device: u64,
    inode: u64,
}

impl FolderId {
    #[cfg(unix)]
    fn of(meta: &fs::Metadata) -> FolderId {
        use std::os::unix::fs::MetadataExt;
        FolderId {
            device: meta.dev(),
            inode: meta.ino(),
        }
    }
}

/// The vault folder and the one folder inside it that is never the vault's: the journal's own.
#[derive(Debug, Clone)]
pub struct Walls {
    root: PathBuf,
    /// The journal's folder, when it exists (it may lie in the vault, or not).
    #[cfg(unix)]
    own: Option<FolderId>,
    #[cfg(not(unix))]
    own: Option<PathBuf>,
    /// What the vault leaves out the way git would.
    ignores: Ignores,
}

impl Walls {
    /// The walls of a vault that holds no journal folder (tests, and vaults outside the journal).
    pub fn new(root: &Path) -> Walls {
        Walls {
            root: root.to_path_buf(),
            own: None,
            ignores: Ignores::new(root),
        }
    }

    /// The walls of the vault at `root` for the journal at `journal_root`.
    pub fn with_journal(root: &Path, journal_root: &Path) -> Walls {
        #[cfg(unix)]
        let own = fs::metadata(journal_root).ok().map(|m| FolderId::of(&m));
        #[cfg(not(unix))]
        let own = journal_root.canonicalize().ok();
        Walls {
            root: root.to_path_buf(),
            own,
            ignores: Ignores::new(root),
        }
    }

    /// The vault folder.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// What the vault leaves out the way git would (the scan asks it folder by folder).
    pub fn ignores(&self) -> &Ignores {
        &self.ignores
    }

    /// Whether the folder `dir` (with its metadata, not followed through a link) is the journal's own.
    pub fn is_own(&self, dir: &Path, meta: &fs::Metadata) -> bool {
        #[cfg(unix)]
        {
            let _ = dir;
            self.own.is_some_and(|own| meta.is_dir() && FolderId::of(meta) == own)
        }
        #[cfg(not(unix))]
        {
            let _ = meta;
            self.own
                .as_ref()
                .is_some_and(|own| dir.canonicalize().ok().as_ref() == Some(own))
        }
    }

    /// The file of the note at `path`, when the path passes the walls: a note path outside
    /// quarantine, reached through real folders only, none of them the journal's, none ignored.
    pub fn file(&self, path: &str) -> Option<PathBuf> {
        if !rules::is_note_path(path) || self.ignores.ignored(path, false) {
            return None;
        }
        self.reach(path)
    }

    /// The folder at `folder` (a folder path from the top of the vault, not `""`), by the same
    /// walls as a note's file.
    pub fn folder(&self, folder: &str) -> Option<PathBuf> {
        if folder.is_empty()
            || rules::quarantined(folder)
            || !folder.split('/').all(rules::plain_name)
            || self.ignores.ignored(folder, true)
        {
            return None;
        }
        let dir = self.reach(&format!("{folder}/x.md"))?.parent()?.to_path_buf();
        match fs::symlink_metadata(&dir) {
            Ok(meta) if self.is_own(&dir, &meta) => None,
            _ => Some(dir),
        }
    }

    /// Whether a folder or file on the way to `path` is there under another spelling of the same
    /// name (`notes/plan.md` beside `Notes/Plan.md`, compared as `rules::same_name` compares). On a
    /// file system that tells case apart both can exist, but links find notes ignoring case, so one
    /// would take the other's links, and a case-insensitive copy of the vault (a Mac, a sync) would
    /// merge them. `moving` is the note or folder that moves (to `path`, or to a folder on its
    /// way): a case-only rename meets itself, which is no twin. The folder a moving note leaves is
    /// not the note, and is a twin like any other.
    pub fn twin(&self, path: &str, moving: Option<&str>) -> bool {
        let parts: Vec<&str> = path.split('/').collect();
        let source: Vec<&str> = moving.map(|m| m.split('/').collect()).unwrap_or_default();
        let mut at = self.root.clone();
        for (i, part) in parts.iter().enumerate() {
            let Ok(entries) = fs::read_dir(&at) else {
                // Not there yet (or not a folder): nothing further down can be a twin.
                return false;
            };
            let wanted = part.trim_end_matches(['.', ' ']);
            for entry in entries.flatten() {
                let name = entry.file_name();
                let Some(name) = name.to_str() else { continue };
                if name == *part || !rules::same_name(name, wanted) {
                    continue;
                }
                let itself = source.len() == i + 1 && source[..i] == parts[..i] && source[i] == name;
                if !itself {
                    return true;
                }
            }
            at.push(part);
        }
        false
    }

    /// Walks `path`'s folders from the root: each a real folder or not there yet, never the journal's.
    fn reach(&self, path: &str) -> Option<PathBuf> {
        let mut at = self.root.clone();
        let parts: Vec<&str> = path.split('/').collect();
        let (name, folders) = parts.split_last()?;
        for folder in folders {
            at.push(folder);
            match fs::symlink_metadata(&at) {
                Ok(meta) if meta.is_dir() && !self.is_own(&at, &meta) => {}
                Ok(_) => return None,
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(_) => return None,
            }
        }
        at.push(name);
        Some(at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_journal_folder_inside_the_vault_is_outside_the_walls() {
        let dir = tempfile::tempdir().unwrap();
        let vault = dir.path();
        let journal = vault.join("sub/jdir");
        fs::create_dir_all(journal.join("memory")).unwrap();
        fs::write(journal.join("memory/m.md"), "secret").unwrap();
        fs::create_dir_all(vault.join("sub/Projects")).unwrap();
        let walls = Walls::with_journal(vault, &journal);
        assert_eq!(walls.file("sub/jdir/memory/m.md"), None);
        assert_eq!(walls.file("sub/jdir/new.md"), None);
        assert_eq!(walls.folder("sub/jdir"), None);
        assert_eq!(walls.folder("sub/jdir/memory"), None);
        assert_eq!(walls.file("sub/Projects/a.md"), Some(vault.join("sub/Projects/a.md")));
        assert_eq!(walls.folder("sub"), Some(vault.join("sub")));
        // Without the journal's identity, the same folder is an ordinary one.
        assert!(Walls::new(vault).file("sub/jdir/memory/m.md").is_some());
    }

    #[cfg(unix)]
    #[test]
    fn the_journal_folder_is_known_by_identity_not_by_spelling() {
        let dir = tempfile::tempdir().unwrap();
        let vault = dir.path();
        let journal = vault.join("jdir");
        fs::create_dir_all(journal.join("memory")).unwrap();
        // A second name for the same folder (what a case-insensitive file system gives `JDIR`): a
        // bind mount would do the same; a hard link to a folder is not allowed, so a link's target
        // stands in, reached as the link's own folder by the walls' identity check.
        let walls = Walls::with_journal(vault, &journal);
        let meta = fs::symlink_metadata(&journal).unwrap();
        assert!(walls.is_own(&vault.join("JDIR"), &meta));
        let other = fs::symlink_metadata(vault).unwrap();
        assert!(!walls.is_own(vault, &other));
    }

    #[test]
    fn quarantine_and_links_are_outside_the_walls() {
        let dir = tempfile::tempdir().unwrap();
        let vault = dir.path();
        let walls = Walls::new(vault);
        for path in [
            "_private/a.md",
            "_Private/a.md",
            ".git/a.md",
            "Widgets/a.md",
            "widgets/a.md",
            "a.txt",
        ] {
            assert_eq!(walls.file(path), None, "{path}");
        }
        assert_eq!(walls.folder(""), None);
        assert_eq!(walls.folder("_PRIVATE"), None);
        #[cfg(unix)]
        {
            let outside = tempfile::tempdir().unwrap();
            std::os::unix::fs::symlink(outside.path(), vault.join("Linked")).unwrap();
            assert_eq!(walls.file("Linked/a.md"), None);
            assert_eq!(walls.folder("Linked"), None);
        }
    }
}
