//! Walking the vault: which folders and note files are there, with their modification times.
//!
//! A full scan lists every folder. A quick scan looks only at folders whose modification time
//! changed since the last scan (a file created, renamed or deleted changes its folder's time; a
//! folder created changes its parent's), and walks any new folder whole. Quarantined folders
//! (dot folders, `_private`, top-level `Widgets`) are never entered, symbolic links are never
//! followed (a link could lead out of the vault), the journal's own folder is skipped when the
//! vault holds it, and what git would leave out (`ignored`) is left out. A quick scan that finds an
//! ignore file changed scans everything, since a changed rule can hide or show any folder.

use std::collections::HashMap;
use std::fs;
use std::path::Path;
use std::time::UNIX_EPOCH;

use super::rules;
use super::walls::Walls;

/// A file's size and modification time, to tell whether it changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    pub mtime_ns: i64,
    pub size: i64,
}

impl Stamp {
    /// Whether a note was read from the file with this stamp.
    pub fn describes(&self, note: &super::Note) -> bool {
        note.modified_ms == self.mtime_ns / 1_000_000 && i64::try_from(note.size).ok() == Some(self.size)
    }
}

/// What one scan found.
#[derive(Debug, Default)]
pub struct Scan {
    /// Folders whose files were listed (`""` is the top of the vault).
    pub listed: Vec<String>,
    /// Note files in the listed folders.
    pub files: HashMap<String, Stamp>,
    /// Folders known before that are gone.
    pub gone: Vec<String>,
    /// Every folder of the vault with its modification time, for the next quick scan.
    pub folders: HashMap<String, i64>,
}

/// Scans the vault: every folder when `previous` is None, else only what changed since.
pub fn scan(walls: &Walls, previous: Option<&HashMap<String, i64>>) -> std::io::Result<Scan> {
    let root = walls.root();
    let mut scan = Scan::default();
    match previous {
        None => walk(walls, String::new(), &mut scan)?,
        Some(previous) if walls.ignores().changed_since_last_scan(previous.keys()) => {
            walk(walls, String::new(), &mut scan)?;
        }
        Some(previous) => {
            let mut stale = Vec::new();
            for (folder, time) in previous {
                match folder_time(&root.join(folder)) {
                    None => scan.gone.push(folder.clone()),
                    Some(now) if now != *time => stale.push(folder.clone()),
                    Some(now) => {
                        scan.folders.insert(folder.clone(), now);
                    }
                }
            }
            // A folder is listed again, and any folder it holds that was not known is walked whole.
            stale.sort();
            for folder in stale {
                let subfolders = list(walls, &folder, &mut scan)?;
                for sub in subfolders {
                    if !previous.contains_key(&sub) {
                        walk(walls, sub, &mut scan)?;
                    }
                }
            }
        }
    }
    if previous.is_none() {
        // What the next quick scan compares the rules with.
        walls.ignores().changed_since_last_scan(scan.folders.keys());
    }
    scan.gone.sort();
    Ok(scan)
}

/// Lists one folder and everything below it.
fn walk(walls: &Walls, folder: String, scan: &mut Scan) -> std::io::Result<()> {
    let mut pending = vec![folder];
    while let Some(folder) = pending.pop() {
        let subfolders = list(walls, &folder, scan)?;
        pending.extend(subfolders);
    }
    Ok(())
}

/// Lists one folder's note files into `scan` and answers its subfolders (not quarantined, not links).
fn list(walls: &Walls, folder: &str, scan: &mut Scan) -> std::io::Result<Vec<String>> {
    let dir = if folder.is_empty() {
        walls.root().to_path_buf()
    } else {
        walls.root().join(folder)
    };
    let Some(time) = folder_time(&dir) else {
        return Ok(Vec::new());
    };
    let entries = match fs::read_dir(&dir) {
        Ok(entries) => entries,
        // A folder removed while it was being walked is simply gone.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    scan.folders.insert(folder.to_string(), time);
    scan.listed.push(folder.to_string());
    let ignores = walls.ignores().folder_rules(folder);
    let mut subfolders = Vec::new();
    for entry in entries {
        let entry = entry?;
        let Some(name) = entry.file_name().to_str().map(str::to_string) else {
            continue;
        };
        if rules::quarantined_name(&name) || !rules::plain_name(&name) {
            continue;
        }
        // The kind comes with the listing (no system call where the file system gives it) and is
        // the entry's own: a link is neither a folder nor a file here.
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if ignores.ignores(&name, kind.is_dir()) {
            continue;
        }
        let rel = if folder.is_empty() {
            name
        } else {
            format!("{folder}/{name}")
        };
        if kind.is_dir() {
            let own = entry.metadata().is_ok_and(|meta| walls.is_own(&entry.path(), &meta));
            if !own && !rules::quarantined(&rel) {
                subfolders.push(rel);
            }
        } else if kind.is_file() && rules::is_note_path(&rel) {
            // Looked up from the open folder, not by walking the whole path again, and without
            // following a link (a file replaced by one since the listing is left out).
            let Ok(meta) = entry.metadata() else {
                continue;
            };
            if meta.is_file() {
                scan.files.insert(
                    rel,
                    Stamp {
                        mtime_ns: nanos(&meta),
                        size: meta.len() as i64,
                    },
                );
            }
        }
    }
    Ok(subfolders)
}

/// A folder's modification time, None when it is not a folder (any more).
fn folder_time(dir: &Path) -> Option<i64> {
    let meta = fs::symlink_metadata(dir).ok()?;
    meta.is_dir().then(|| nanos(&meta))
}

fn nanos(meta: &fs::Metadata) -> i64 {
    meta.modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos() as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn touch(root: &Path, rel: &str) {
        let path = root.join(rel);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, rel).unwrap();
    }

    #[test]
    fn full_and_quick_scans_skip_quarantine_links_and_the_journal() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for rel in [
            "a.md",
            "Projects/b.md",
            "Projects/deep/c.md",
            "Projects/notes.txt",
            ".obsidian/x.md",
            "_private/d.md",
            "Widgets/w.md",
            "journal/transcripts/e.md",
        ] {
            touch(root, rel);
        }
        std::os::unix::fs::symlink(root.join("Projects"), root.join("linked")).unwrap();
        std::os::unix::fs::symlink(root.join("a.md"), root.join("alias.md")).unwrap();
        let walls = Walls::with_journal(root, &root.join("journal"));
        let full = scan(&walls, None).unwrap();
        let mut files: Vec<&str> = full.files.keys().map(String::as_str).collect();
        files.sort();
        assert_eq!(files, ["Projects/b.md", "Projects/deep/c.md", "a.md"]);

        // Nothing changed: a quick scan lists nothing.
        let quiet = scan(&walls, Some(&full.folders)).unwrap();
        assert!(quiet.listed.is_empty() && quiet.files.is_empty() && quiet.gone.is_empty());
        assert_eq!(quiet.folders, full.folders);

        // A new folder with a note, and a removed folder, are seen by a quick scan.
        std::thread::sleep(std::time::Duration::from_millis(20));
        touch(root, "Projects/new/f.md");
        fs::remove_dir_all(root.join("Projects/deep")).unwrap();
        let quick = scan(&walls, Some(&full.folders)).unwrap();
        let mut listed = quick.listed.clone();
        listed.sort();
        assert_eq!(listed, ["Projects", "Projects/new"]);
        assert!(quick.files.contains_key("Projects/new/f.md"));
        assert_eq!(quick.gone, ["Projects/deep"]);
    }
}
