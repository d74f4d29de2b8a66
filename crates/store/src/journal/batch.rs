//! Several new files written as one: an import of many transcripts is all or nothing, even when the
//! process is killed halfway, and costs a few disk flushes in all rather than a few per file.
//!
//! A batch first writes every file under a hidden name in its folder (`.batch-<id>-<n>.md`, which
//! the catalog passes by) and flushes them, many at a time, then links each under its real name (a
//! hard link, so an existing file is never replaced), writes the list of real names to its marker
//! and flushes it once, removes the hidden names and flushes the folder once. The marker, in
//! `.batches/` beside the journal's folders, says which batch is in progress and which folder it
//! writes to; the process that writes the batch holds a lock on it. Only when the folder is flushed
//! is the marker removed, and only then is the batch done.
//!
//! A batch whose marker is still there and no longer locked belongs to a process that died: `recover`
//! takes it back, every published file and every hidden one (a file linked under its real name
//! before the marker named it shares its hidden twin's inode, and the hidden names are removed only
//! after the marker names every real one). So after a crash the folder holds the whole batch or none
//! of it.

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
    created: Vec<PathBuf>,
}

impl Batch {
    /// Begins a batch of new files in `dir`: a folder under the journal's `root`, or the notes vault
    /// wherever it is (its marker is kept under `root` either way).
    pub fn begin(root: &Path, dir: &Path) -> io::Result<Batch> {
        // Relative to the journal's folder when inside it; a vault elsewhere is named whole (joining
        // an absolute path to the root gives the path itself, so `recover` reads both alike).
        let relative = dir
            .strip_prefix(root)
            .unwrap_or(dir)
            .to_str()
            .ok_or_else(|| io::Error::other("a batch's folder name must be UTF-8"))?
            .to_string();
        // The folders this batch creates, deepest first: a batch taken back removes them again
        // when they are empty, so that a refused import leaves no trace.
        let created: Vec<PathBuf> = dir
            .ancestors()
            .take_while(|folder| !folder.exists())
            .map(Path::to_path_buf)
            .collect();
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
            created,
        })
    }

    /// Writes the files of the batch under their hidden names, each flushed to disk (several at a
    /// time, see `fsio::create_many`). Called once per batch.
    pub fn stage<T: AsRef<[u8]>>(&mut self, files: &[T]) -> io::Result<()> {
        let first = self.staged.len();
        let named: Vec<(PathBuf, &[u8])> = files
            .iter()
            .enumerate()
            .map(|(n, bytes)| (self.hidden(first + n), bytes.as_ref()))
            .collect();
        fsio::create_many(&named)?;
        self.staged.extend(named.into_iter().map(|(path, _)| path));
        Ok(())
    }

    /// The hidden name of the batch's `n`th staged file.
    fn hidden(&self, n: usize) -> PathBuf {
        self.dir.join(format!(".batch-{}-{}.md", self.id, n))
    }

    /// The paths `publish_each(stems)` will give if nothing else writes to the folder meanwhile,
    /// from one listing of it: what an import indexes its files under while they are written (see
    /// `preindex`), used only if publishing gives exactly these.
    pub fn plan(&self, stems: &[String]) -> io::Result<Vec<PathBuf>> {
        let mut taken: std::collections::HashSet<String> = std::collections::HashSet::new();
        for entry in fs::read_dir(&self.dir)? {
            taken.insert(entry?.file_name().to_string_lossy().into_owned());
        }
        let mut next: std::collections::HashMap<&str, u32> = std::collections::HashMap::new();
        let mut planned = Vec::with_capacity(stems.len());
        for stem in stems {
            let from = next.entry(stem.as_str()).or_insert(1);
            let name = loop {
                if *from >= MAX_NAMES {
                    return Err(no_free_name(stem, &self.dir));
                }
                let name = numbered(stem, *from);
                *from += 1;
                if !taken.contains(&name) {
                    break name;
                }
            };
            planned.push(self.dir.join(&name));
            taken.insert(name);
        }
        Ok(planned)
    }

    /// Publishes every staged file as `<stem>.md`, or `<stem>-2.md`, `-3`, ... when the name is
    /// taken, in the order staged, and ends the batch. Answers the published paths. On failure the
    /// whole batch is taken back.
    pub fn publish(self, stem: &str) -> io::Result<Vec<PathBuf>> {
        let stems = vec![stem.to_string(); self.staged.len()];
        self.publish_each(&stems)
    }

    /// Publishes each staged file under its own stem (one for each, in the order staged), as `publish`.
    pub fn publish_each(mut self, stems: &[String]) -> io::Result<Vec<PathBuf>> {
        let mut published = Vec::with_capacity(self.staged.len());
        let result = (|| {
            if stems.len() != self.staged.len() {
                return Err(io::Error::other("a batch needs one name for each of its files"));
            }
            // Names are taken in order, so each stem's search starts after the last name this batch
            // took for it.
            let mut next: std::collections::HashMap<&str, u32> = std::collections::HashMap::new();
            for (staged, stem) in self.staged.iter().zip(stems) {
                let from = next.entry(stem.as_str()).or_insert(1);
                published.push(link_unique(staged, &self.dir, stem, from)?);
            }
            let mut list = String::new();
            for path in &published {
                list.push_str(&path.strip_prefix(&self.root).unwrap_or(path).to_string_lossy());
                list.push('\n');
            }
            self.marker.write_all(list.as_bytes())?;
            self.marker.sync_data()?;
            for staged in &self.staged {
                fs::remove_file(staged)?;
            }
            fsio::sync_dir(&self.dir)?;
            fsio::remove_durable(&self.marker_path)
        })();
        match result {
            Ok(()) => Ok(published),
            Err(error) => {
                self.take_back();
                Err(error)
            }
        }
    }

    /// Removes what this batch wrote, and the folders it created if they are empty.
    fn take_back(&self) {
        take_back(&self.root, &self.marker_path, &self.id);
        for folder in &self.created {
            if fs::remove_dir(folder).is_err() {
                break;
            }
        }
    }
}

impl Drop for Batch {
    fn drop(&mut self) {
        // A batch dropped before `publish` (an error while staging) is taken back at once; after a
        // successful publish its marker is gone and this finds nothing to do.
        if self.marker_path.exists() {
            self.take_back();
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
    // Only whole lines: a list cut short by a crash names no file by a part of its name.
    let whole = &text[..text.rfind('\n').map_or(0, |end| end + 1)];
    let mut lines = whole.lines();
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
    // A file being staged by an older version of this code when the writer died is still under the
    // atomic write's temporary name, `.<hidden name>.<random>.tmp`.
    let unfinished = format!(".{prefix}");
    let mut linked = Vec::new();
    if let Ok(entries) = fs::read_dir(&dir) {
        for entry in entries.flatten() {
            let staged = entry.path();
            let Some(name) = staged.file_name().and_then(|n| n.to_str()) else {
                continue;
            };
            let ours = name.starts_with(&prefix) || (name.starts_with(&unfinished) && name.ends_with(".tmp"));
            if !ours {
                continue;
            }
            if let Some(id) = twin_id(&staged) {
                linked.push(id);
            }
            if fs::remove_file(&staged).is_err() {
                clean = false;
            }
        }
    }
    // Published under its real name just before the writer died, before the marker named it: the
    // real name is the same file (a hard link), found by its inode in one pass over the folder.
    if !linked.is_empty() && !remove_twins(&dir, &linked) {
        clean = false;
    }
    if let Ok(folder) = File::open(&dir) {
        let _ = folder.sync_all();
    }
    if clean {
        let _ = fsio::remove_durable(marker_path);
    }
}

/// The identity (device, inode) of a staged file that has another name.
#[cfg(unix)]
fn twin_id(staged: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    let meta = fs::metadata(staged).ok()?;
    (meta.nlink() >= 2).then(|| (meta.dev(), meta.ino()))
}

#[cfg(not(unix))]
fn twin_id(_staged: &Path) -> Option<(u64, u64)> {
    None
}

/// Removes the files in `dir` that are one of `ids`. Answers whether every one went.
#[cfg(unix)]
fn remove_twins(dir: &Path, ids: &[(u64, u64)]) -> bool {
    use std::os::unix::fs::MetadataExt;
    let ids: std::collections::HashSet<&(u64, u64)> = ids.iter().collect();
    let Ok(entries) = fs::read_dir(dir) else { return false };
    let mut clean = true;
    for entry in entries.flatten() {
        let path = entry.path();
        if let Ok(meta) = fs::symlink_metadata(&path)
            && ids.contains(&(meta.dev(), meta.ino()))
            && fs::remove_file(&path).is_err()
        {
            clean = false;
        }
    }
    clean
}

#[cfg(not(unix))]
fn remove_twins(_dir: &Path, _ids: &[(u64, u64)]) -> bool {
    true
}

/// How many names `unique_names` offers.
const MAX_NAMES: u32 = 1_000_000;

/// The names a new file `<stem>` may take, in order: `<stem>.md`, then `<stem>-2.md`, `-3`, ...
pub fn unique_names(stem: &str) -> impl Iterator<Item = String> + '_ {
    (1..MAX_NAMES).map(move |n| numbered(stem, n))
}

/// The `n`th name of `unique_names` (from 1).
fn numbered(stem: &str, n: u32) -> String {
    if n == 1 {
        format!("{stem}.md")
    } else {
        format!("{stem}-{n}.md")
    }
}

/// Links `staged` as the first free name of `unique_names(stem)` from the `next`th on (moved past
/// the name taken); never replaces a file.
fn link_unique(staged: &Path, dir: &Path, stem: &str, next: &mut u32) -> io::Result<PathBuf> {
    while *next < MAX_NAMES {
        let path = dir.join(numbered(stem, *next));
        *next += 1;
        match fs::hard_link(staged, &path) {
            Ok(()) => return Ok(path),
            Err(error) if error.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(error) => return Err(error),
        }
    }
    Err(no_free_name(stem, dir))
}

/// The error of a stem whose every name `unique_names` offers is taken.
fn no_free_name(stem: &str, dir: &Path) -> io::Error {
    io::Error::other(format!(
        "no free name for {stem} in {}: every name up to {stem}-{}.md is taken; import under another time or into another folder",
        dir.display(),
        MAX_NAMES - 1
    ))
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
        batch.stage(&[b"one", b"two"]).unwrap();
        assert_eq!(recover(root.path()).unwrap(), 0, "a live batch is left alone");
        let published = batch.publish("0930").unwrap();
        assert_eq!(published, [dir.join("0930-2.md"), dir.join("0930-3.md")]);
        assert_eq!(names(&dir), ["0930-2.md", "0930-3.md", "0930.md"]);
        assert_eq!(fs::read_to_string(dir.join("0930.md")).unwrap(), "the owner's");
        assert!(names(&root.path().join(MARKERS)).is_empty());
    }

    #[test]
    fn a_plan_is_what_publishing_gives_unless_a_name_is_taken_meanwhile() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("notes");
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join("a.md"), "the owner's").unwrap();
        fs::write(dir.join("a-3.md"), "the owner's").unwrap();
        let stems: Vec<String> = ["a", "b", "a", "a"].map(String::from).to_vec();
        let mut batch = Batch::begin(root.path(), &dir).unwrap();
        batch.stage(&[b"1", b"2", b"3", b"4"]).unwrap();
        let planned = batch.plan(&stems).unwrap();
        let expected: Vec<PathBuf> = ["a-2.md", "b.md", "a-4.md", "a-5.md"]
            .iter()
            .map(|n| dir.join(n))
            .collect();
        assert_eq!(planned, expected);
        assert_eq!(batch.publish_each(&stems).unwrap(), planned);

        // Another writer takes a planned name between the plan and the publishing.
        let mut batch = Batch::begin(root.path(), &dir).unwrap();
        batch.stage(&[b"5"]).unwrap();
        let planned = batch.plan(&["b".to_string()]).unwrap();
        assert_eq!(planned, [dir.join("b-2.md")]);
        fs::write(dir.join("b-2.md"), "someone else's").unwrap();
        assert_ne!(batch.publish_each(&["b".to_string()]).unwrap(), planned);
    }

    #[test]
    fn a_batch_taken_back_removes_the_folders_it_created() {
        let root = tempfile::tempdir().unwrap();
        fs::create_dir_all(root.path().join("notes")).unwrap();
        let dir = root.path().join("notes/New/Deeper");
        let mut batch = Batch::begin(root.path(), &dir).unwrap();
        batch.stage(&[b"one"]).unwrap();
        drop(batch);
        assert!(!root.path().join("notes/New").exists(), "both new folders are gone");
        assert!(root.path().join("notes").is_dir(), "the folder that was there stays");

        // A folder that is not empty any more (another writer's file) stays.
        let mut batch = Batch::begin(root.path(), &dir).unwrap();
        batch.stage(&[b"one"]).unwrap();
        fs::write(dir.join("theirs.md"), "another writer's").unwrap();
        drop(batch);
        assert_eq!(names(&dir), ["theirs.md"]);
    }

    #[test]
    fn a_batch_dropped_before_publishing_leaves_nothing() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("transcripts/2026-12-01");
        let mut batch = Batch::begin(root.path(), &dir).unwrap();
        batch.stage(&[b"one"]).unwrap();
        drop(batch);
        assert!(!dir.exists(), "the folder it created is gone too");
        assert!(names(&root.path().join(MARKERS)).is_empty());
    }

    #[test]
    fn a_marker_cut_short_names_no_file_by_a_part_of_its_name() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("transcripts/2026-12-01");
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join("0930.md"), "published").unwrap();
        fs::write(dir.join("1000"), "the owner's").unwrap();
        let markers = root.path().join(MARKERS);
        fs::create_dir_all(&markers).unwrap();
        fs::write(
            markers.join("abc.pending"),
            "transcripts/2026-12-01\ntranscripts/2026-12-01/0930.md\ntranscripts/2026-12-01/1000",
        )
        .unwrap();
        assert_eq!(recover(root.path()).unwrap(), 1);
        assert_eq!(names(&dir), ["1000"]);
    }

    #[test]
    fn a_large_batch_takes_the_free_names_in_order() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("transcripts/2026-12-01");
        fs::create_dir_all(&dir).unwrap();
        for taken in ["0930.md", "0930-3.md", "0930-40.md"] {
            fs::write(dir.join(taken), "the owner's").unwrap();
        }
        let mut batch = Batch::begin(root.path(), &dir).unwrap();
        let files: Vec<String> = (0..100).map(|n| format!("file {n}")).collect();
        batch.stage(&files).unwrap();
        let published = batch.publish("0930").unwrap();
        assert_eq!(published.len(), 100);
        assert_eq!(published[0], dir.join("0930-2.md"));
        assert_eq!(published[1], dir.join("0930-4.md"));
        assert_eq!(published[99], dir.join("0930-103.md"));
        assert!(!published.contains(&dir.join("0930-40.md")));
        assert_eq!(fs::read_to_string(dir.join("0930-40.md")).unwrap(), "the owner's");
        assert_eq!(fs::read_to_string(&published[99]).unwrap(), "file 99");
        assert_eq!(names(&dir).len(), 103, "no hidden file is left");
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
