//! Several new files written as one: an import of many transcripts is all or nothing, even when the
//! process is killed halfway.
//!
//! A batch first writes every file under a hidden name in its folder (`.batch-<id>-<n>.md`, which
//! the catalog passes by), then publishes them one by one under their real names (a hard link, so an
//! existing file is never replaced, then the hidden name removed). A marker in `.batches/` beside
//! the journal's folders says which batch is in progress, which folder it writes to and every name
//! it published so far; the process that writes the batch holds a lock on it. Only when the last
//! file is published is the marker removed, and only then is the batch done.
//!
//! A batch whose marker is still there and no longer locked belongs to a process that died: `recover`
//! takes it back, every published file and every hidden one (including a file linked under its real
//! name just before the process died, before the marker named it: it shares its hidden twin's inode).
//! So after a crash the folder holds the whole batch or none of it.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use crate::fsio;

/// The folder, under the journal's root, that holds the markers of batches in progress.
const MARKERS: &str = ".batches";

/// A batch in progress: its marker (locked while this value lives) and its files.
pub struct Batch {
    root: PathBuf,
    dir: PathBuf,
    id: String,
    marker: File,
    marker_path: PathBuf,
    staged: Vec<PathBuf>,
}

impl Batch {
    /// Begins a batch of new files in `dir`, a folder under the journal's `root`.
    pub fn begin(root: &Path, dir: &Path) -> io::Result<Batch> {
        let relative = dir
            .strip_prefix(root)
            .map_err(|_| io::Error::other("a batch writes inside the journal's folder"))?
            .to_str()
            .ok_or_else(|| io::Error::other("a batch's folder name must be UTF-8"))?
            .to_string();
        fsio::create_dir_all_durable(dir)?;
        let markers = root.join(MARKERS);
        fsio::create_dir_all_durable(&markers)?;
        let id = crate::secret::generate("")
            .map_err(io::Error::other)?
            .chars()
            .filter(char::is_ascii_alphanumeric)
            .take(16)
            .collect::<String>();
        let marker_path = markers.join(format!("{id}.pending"));
        let mut marker = private_new_file(&marker_path)?;
        // Locked before anything is written that `recover` could see as abandoned.
        marker.lock()?;
        writeln!(marker, "{relative}")?;
        marker.sync_all()?;
        File::open(&markers)?.sync_all()?;
        Ok(Batch {
            root: root.to_path_buf(),
            dir: dir.to_path_buf(),
            id,
            marker,
            marker_path,
            staged: Vec::new(),
        })
    }

    /// Writes one file of the batch under its hidden name.
    pub fn stage(&mut self, bytes: &[u8]) -> io::Result<()> {
        let path = self.dir.join(format!(".batch-{}-{}.md", self.id, self.staged.len()));
        fsio::write_atomic(&path, bytes)?;
        self.staged.push(path);
        Ok(())
    }

    /// Publishes every staged file as `<stem>.md`, or `<stem>-2.md`, `-3`, ... when the name is
    /// taken, in the order staged, and ends the batch. Answers the published paths. On failure the
    /// whole batch is taken back.
    pub fn publish(mut self, stem: &str) -> io::Result<Vec<PathBuf>> {
        let mut published = Vec::new();
        let result = (|| {
            for staged in &self.staged {
                let path = link_unique(staged, &self.dir, stem)?;
                let relative = path
                    .strip_prefix(&self.root)
                    .unwrap_or(&path)
                    .to_string_lossy()
                    .into_owned();
                writeln!(self.marker, "{relative}")?;
                self.marker.sync_data()?;
                published.push(path);
                fs::remove_file(staged)?;
            }
            File::open(&self.dir)?.sync_all()?;
            fsio::remove_durable(&self.marker_path)
        })();
        match result {
            Ok(()) => Ok(published),
            Err(error) => {
                take_back(&self.root, &self.marker_path, &self.id);
                Err(error)
            }
        }
    }
}

impl Drop for Batch {
    fn drop(&mut self) {
        // A batch dropped before `publish` (an error while staging) is taken back at once; after a
        // successful publish its marker is gone and this finds nothing to do.
        if self.marker_path.exists() {
            take_back(&self.root, &self.marker_path, &self.id);
        }
    }
}

/// Takes back every batch whose writer died (its marker is there and not locked). Answers how many.
pub fn recover(root: &Path) -> io::Result<usize> {
    let markers = root.join(MARKERS);
    let entries = match fs::read_dir(&markers) {
        Ok(entries) => entries,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(0),
        Err(error) => return Err(error),
    };
    let mut recovered = 0;
    for entry in entries {
        let path = entry?.path();
        let Some(id) = path
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_suffix(".pending"))
            .map(str::to_string)
        else {
            continue;
        };
        let Ok(marker) = OpenOptions::new().read(true).write(true).open(&path) else {
            continue;
        };
        // Locked: its writer is alive (in this process or another). Leave it.
        if marker.try_lock().is_err() {
            continue;
        }
        take_back(root, &path, &id);
        recovered += 1;
    }
    Ok(recovered)
}

/// Removes what a batch wrote, then its marker. Best effort: what cannot be removed now is tried
/// again by the next `recover`, since the marker stays until everything else is gone.
fn take_back(root: &Path, marker_path: &Path, id: &str) {
    let Ok(text) = fs::read_to_string(marker_path) else {
        return;
    };
    let mut lines = text.lines();
    let Some(dir) = lines.next().map(|relative| root.join(relative)) else {
        let _ = fsio::remove_durable(marker_path);
        return;
    };
    let mut clean = true;
    for published in lines.filter(|l| !l.is_empty()) {
        match fs::remove_file(root.join(published)) {
            Ok(()) => {}
            Err(error) if error.kind() == io::ErrorKind::NotFound => {}
            Err(_) => clean = false,
        }
    }
    let prefix = format!(".batch-{id}-");
    // A file being staged when the writer died is still under `write_atomic`'s temporary name,
    // `.<hidden name>.<random>.tmp`.
    let unfinished = format!(".{prefix}");
    if let Ok(entries) = fs::read_dir(&dir) {
        for entry in entries.flatten() {
            let staged = entry.path();
            let Some(name) = staged.file_name().and_then(|n| n.to_str()) else {
                continue;
            };
            if name.starts_with(&unfinished) && name.ends_with(".tmp") {
                if fs::remove_file(&staged).is_err() {
                    clean = false;
                }
                continue;
            }
            if !name.starts_with(&prefix) {
                continue;
            }
            // Published under its real name just before the writer died, before the marker named
            // it: the real name is the same file (a hard link), found by its inode.
            remove_twins(&dir, &staged);
            if fs::remove_file(&staged).is_err() {
                clean = false;
            }
        }
    }
    if let Ok(folder) = File::open(&dir) {
        let _ = folder.sync_all();
    }
    if clean {
        let _ = fsio::remove_durable(marker_path);
    }
}

/// Removes the other names of `staged` in `dir` (hard links to the same file).
#[cfg(unix)]
fn remove_twins(dir: &Path, staged: &Path) {
    use std::os::unix::fs::MetadataExt;
    let Ok(meta) = fs::metadata(staged) else { return };
    if meta.nlink() < 2 {
        return;
    }
    let Ok(entries) = fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if path != staged
            && let Ok(other) = fs::metadata(&path)
            && other.ino() == meta.ino()
            && other.dev() == meta.dev()
        {
            let _ = fs::remove_file(&path);
        }
    }
}

#[cfg(not(unix))]
fn remove_twins(_dir: &Path, _staged: &Path) {}

/// The names a new file `<stem>` may take, in order: `<stem>.md`, then `<stem>-2.md`, `-3`, ...
pub fn unique_names(stem: &str) -> impl Iterator<Item = String> + '_ {
    (1..10_000).map(move |n| {
        if n == 1 {
            format!("{stem}.md")
        } else {
            format!("{stem}-{n}.md")
        }
    })
}

/// Links `staged` as `<dir>/<stem>.md`, or the first free `<stem>-N.md`; never replaces a file.
fn link_unique(staged: &Path, dir: &Path, stem: &str) -> io::Result<PathBuf> {
    for name in unique_names(stem) {
        let path = dir.join(name);
        match fs::hard_link(staged, &path) {
            Ok(()) => return Ok(path),
            Err(error) if error.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(error) => return Err(error),
        }
    }
    Err(io::Error::other(format!(
        "no free name for {stem} in {}",
        dir.display()
    )))
}

fn private_new_file(path: &Path) -> io::Result<File> {
    let mut options = OpenOptions::new();
    options.read(true).write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options.open(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn a_published_batch_is_every_file_under_its_name_and_nothing_else() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("transcripts/2026-12-01");
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join("0930.md"), "the owner's").unwrap();
        let mut batch = Batch::begin(root.path(), &dir).unwrap();
        batch.stage(b"one").unwrap();
        batch.stage(b"two").unwrap();
        assert_eq!(recover(root.path()).unwrap(), 0, "a live batch is left alone");
        let published = batch.publish("0930").unwrap();
        assert_eq!(published, [dir.join("0930-2.md"), dir.join("0930-3.md")]);
        assert_eq!(names(&dir), ["0930-2.md", "0930-3.md", "0930.md"]);
        assert_eq!(fs::read_to_string(dir.join("0930.md")).unwrap(), "the owner's");
        assert!(names(&root.path().join(MARKERS)).is_empty());
    }

    #[test]
    fn a_batch_dropped_before_publishing_leaves_nothing() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("transcripts/2026-12-01");
        let mut batch = Batch::begin(root.path(), &dir).unwrap();
        batch.stage(b"one").unwrap();
        drop(batch);
        assert!(names(&dir).is_empty());
        assert!(names(&root.path().join(MARKERS)).is_empty());
    }

    /// What a killed writer leaves at its worst moment: files published and named by the marker,
    /// one linked under its real name but not yet named, one only staged and one half written.
    #[test]
    fn recovery_takes_back_a_batch_whose_writer_died_mid_publish() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("transcripts/2026-12-01");
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join("1000.md"), "the owner's").unwrap();
        let markers = root.path().join(MARKERS);
        fs::create_dir_all(&markers).unwrap();
        fs::write(
            markers.join("abc.pending"),
            "transcripts/2026-12-01\ntranscripts/2026-12-01/0930.md\n",
        )
        .unwrap();
        fs::write(dir.join("0930.md"), "published").unwrap();
        fs::write(dir.join(".batch-abc-1.md"), "linked").unwrap();
        fs::hard_link(dir.join(".batch-abc-1.md"), dir.join("0930-2.md")).unwrap();
        fs::write(dir.join(".batch-abc-2.md"), "staged").unwrap();
        // Killed while staging the next one: still under the atomic write's temporary name.
        fs::write(dir.join("..batch-abc-3.md.x7Yq.tmp"), "half").unwrap();
        // Another batch's or the owner's files are not this batch's.
        fs::write(dir.join("..batch-abd-1.md.x7Yq.tmp"), "other").unwrap();
        assert_eq!(recover(root.path()).unwrap(), 1);
        assert_eq!(
            names(&dir),
            ["..batch-abd-1.md.x7Yq.tmp", "1000.md"],
            "the owner's file stays, the batch is gone"
        );
        assert!(names(&markers).is_empty());
        assert_eq!(recover(root.path()).unwrap(), 0);
    }
}
