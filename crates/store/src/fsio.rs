//! Durable file writes: every file the journal writes goes through here.
//!
//! A write lands in a temporary file in the same folder, is flushed to disk, renamed over the target
//! and then the folder itself is flushed, so that after a crash or power loss a reader sees either the
//! old file or the whole new one, never a torn mix, and an acknowledged write is on disk.
//! Files are created readable by the owner only (0600, folders 0700): a journal is private.
//! This module knows nothing about what the files mean.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::Path;

/// Writes `bytes` to `path` atomically and durably, creating parent folders as needed.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let (parent, temp) = write_temp(path, bytes, true)?;
    let result = fs::rename(&temp, path).and_then(|()| sync_dir(parent));
    if result.is_err() {
        let _ = fs::remove_file(&temp);
    }
    result
}

/// Creates `path` only if nothing is there yet (never clobbers), atomically and durably.
/// Answers `AlreadyExists` when the name is taken.
pub fn create_new_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let (parent, temp) = write_temp(path, bytes, true)?;
    // A hard link fails when the target exists, which makes "create if absent" atomic.
    let result = fs::hard_link(&temp, path).and_then(|()| sync_dir(parent));
    let _ = fs::remove_file(&temp);
    result
}

/// Writes `bytes` to a new temporary file beside `path` (dot-named, so catalog scans pass it by),
/// flushed to disk when `flush`; a failed write leaves no temporary file behind.
fn write_temp<'a>(path: &'a Path, bytes: &[u8], flush: bool) -> io::Result<(&'a Path, std::path::PathBuf)> {
    let parent = path
        .parent()
        .ok_or_else(|| io::Error::other("a file to write needs a parent folder"))?;
    create_dir_all_durable(parent)?;
    let file_name = path.file_name().and_then(|n| n.to_str()).unwrap_or("file");
    let temp = parent.join(format!(".{file_name}.{}.tmp", random_suffix()));
    let written = (|| {
        let mut file = private_options().open(&temp)?;
        file.write_all(bytes)?;
        if flush { file.sync_all() } else { Ok(()) }
    })();
    match written {
        Ok(()) => Ok((parent, temp)),
        Err(error) => {
            let _ = fs::remove_file(&temp);
            Err(error)
        }
    }
}

/// Writes a new file whole (no reader sees a part of it) without flushing it to disk: for data that
/// can be made again, such as the demo journal. Not for anything acknowledged to a caller.
pub fn write_unflushed(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let (_, temp) = write_temp(path, bytes, false)?;
    let result = fs::rename(&temp, path);
    if result.is_err() {
        let _ = fs::remove_file(&temp);
    }
    result
}

/// How many files `create_many` writes at once when it flushes each.
const WRITERS: usize = 16;
/// From how many files `create_many` flushes the filesystem once rather than each file.
const FLUSH_FILESYSTEM_FROM: usize = 64;

/// Creates new files (refusing any name that is taken), each written and flushed to disk. The
/// folders' entries are not flushed: the caller flushes each folder once. On failure every file this
/// call created is removed again and the first error is answered.
///
/// A few files are written and flushed several at a time: a flush waits on the disk rather than the
/// CPU, and the filesystem's journal commits the flushes that wait together. Many files (on Linux)
/// are written by one thread and then flushed with one `syncfs` of their filesystem: flushing each
/// file commits the filesystem's journal again for its blocks, and several threads creating files
/// in one folder only wait on its lock (10,000 small files: 0.53 s flushed one by one, 0.29 s this
/// way; docs/performance.md). `syncfs` also writes out what other programs left unflushed on that
/// filesystem, which is why a few files are flushed on their own. It reports a failed write-back
/// since the folder was opened (Linux 5.8 and later).
pub fn create_many(files: &[(std::path::PathBuf, &[u8])]) -> io::Result<()> {
    #[cfg(target_os = "linux")]
    if files.len() >= FLUSH_FILESYSTEM_FROM {
        return create_then_flush_filesystem(files);
    }
    create_each_flushed(files)
}

/// `create_many` for many files: written in order by this thread, then one flush of each folder's
/// filesystem.
#[cfg(target_os = "linux")]
fn create_then_flush_filesystem(files: &[(std::path::PathBuf, &[u8])]) -> io::Result<()> {
    let mut folders: Vec<(&Path, File)> = Vec::new();
    let mut created = 0;
    let result = (|| {
        // Opened before the first write, so that `syncfs` reports any write-back failure after it.
        for (path, _) in files {
            let folder = path.parent().unwrap_or(Path::new("."));
            if !folders.iter().any(|(known, _)| *known == folder) {
                folders.push((folder, File::open(folder)?));
            }
        }
        for (path, bytes) in files {
            let mut file = private_options().open(path)?;
            created += 1;
            file.write_all(bytes)?;
        }
        for (_, folder) in &folders {
            rustix::fs::syncfs(folder)?;
        }
        Ok(())
    })();
    if result.is_err() {
        for (path, _) in &files[..created] {
            let _ = fs::remove_file(path);
        }
    }
    result
}

/// `create_many` for a few files: each written and flushed, several at a time.
fn create_each_flushed(files: &[(std::path::PathBuf, &[u8])]) -> io::Result<()> {
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let failure: Mutex<Option<io::Error>> = Mutex::new(None);
    let created: Vec<AtomicBool> = files.iter().map(|_| AtomicBool::new(false)).collect();
    let work = || {
        while !failed.load(Ordering::Relaxed) {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some((path, bytes)) = files.get(i) else { return };
            let written = private_options().open(path).and_then(|mut file| {
                created[i].store(true, Ordering::Relaxed);
                file.write_all(bytes)?;
                file.sync_all()
            });
            if let Err(error) = written {
                failed.store(true, Ordering::Relaxed);
                if let Ok(mut slot) = failure.lock() {
                    slot.get_or_insert(error);
                }
            }
        }
    };
    std::thread::scope(|scope| {
        for _ in 1..WRITERS.min(files.len()) {
            scope.spawn(work);
        }
        work();
    });
    if !failed.load(Ordering::Relaxed) {
        return Ok(());
    }
    for ((path, _), made) in files.iter().zip(&created) {
        if made.load(Ordering::Relaxed) {
            let _ = fs::remove_file(path);
        }
    }
    Err(failure
        .into_inner()
        .ok()
        .flatten()
        .unwrap_or_else(|| io::Error::other("a file could not be written")))
}

/// Removes the temporary files a write of `path` left behind when its process died before the
/// rename (`.<name>.<12 hex digits>.tmp` beside it). Best effort: what cannot be removed stays.
pub fn remove_temps(path: &Path) {
    let (Some(parent), Some(name)) = (path.parent(), path.file_name().and_then(|n| n.to_str())) else {
        return;
    };
    let Ok(entries) = fs::read_dir(parent) else { return };
    let prefix = format!(".{name}.");
    for entry in entries.filter_map(Result::ok) {
        let file_name = entry.file_name();
        let Some(entry_name) = file_name.to_str() else { continue };
        let is_temp = entry_name
            .strip_prefix(&prefix)
            .and_then(|rest| rest.strip_suffix(".tmp"))
            .is_some_and(|suffix| suffix.len() == 12 && suffix.bytes().all(|b| b.is_ascii_hexdigit()));
        if is_temp {
            let _ = fs::remove_file(entry.path());
        }
    }
}

/// Removes a file durably; a missing file is not an error.
pub fn remove_durable(path: &Path) -> io::Result<()> {
    match fs::remove_file(path) {
        Ok(()) => path.parent().map_or(Ok(()), sync_dir),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

/// Creates a folder and its parents, flushing each new entry so the folder survives a crash.
pub fn create_dir_all_durable(path: &Path) -> io::Result<()> {
    // The parent of a relative name such as `journal` is the empty path: the working folder.
    if path.as_os_str().is_empty() || path.is_dir() {
        return Ok(());
    }
    if let Some(parent) = path.parent() {
        create_dir_all_durable(parent)?;
    }
    match private_dir_builder().create(path) {
        Ok(()) => path.parent().map_or(Ok(()), sync_dir),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(e),
    }
}

/// Options for a new file only its owner can read.
fn private_options() -> OpenOptions {
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options
}

fn private_dir_builder() -> fs::DirBuilder {
    #[allow(unused_mut)]
    let mut builder = fs::DirBuilder::new();
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder
}

/// Makes an existing file readable by its owner only (for files other code creates, like the database).
pub fn make_private(path: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(path, fs::Permissions::from_mode(0o600))?;
    }
    #[cfg(not(unix))]
    let _ = path;
    Ok(())
}

/// An advisory lock on a file beside what it guards (`graph.lock`, `notes.lock`), held until it is
/// dropped. The system drops it when its process dies, so a killed writer never leaves it taken.
/// It excludes other processes and, being a lock of an open file, other holders in this process too.
#[derive(Debug)]
pub struct Lock {
    file: File,
}

/// How a lock was not taken.
#[derive(Debug)]
pub enum LockError {
    /// Another holder kept it for the whole wait.
    Busy,
    Io(io::Error),
}

impl Lock {
    /// Takes the lock at `path` (created when missing), waiting at most `wait` for its holder.
    /// Blocking: call it off the async threads.
    pub fn take(path: &Path, wait: std::time::Duration) -> Result<Lock, LockError> {
        let mut options = OpenOptions::new();
        options.create(true).truncate(false).write(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let file = options.open(path).map_err(LockError::Io)?;
        let started = std::time::Instant::now();
        loop {
            match file.try_lock() {
                Ok(()) => return Ok(Lock { file }),
                Err(fs::TryLockError::WouldBlock) if started.elapsed() < wait => {
                    std::thread::sleep(std::time::Duration::from_millis(5));
                }
                Err(fs::TryLockError::WouldBlock) => return Err(LockError::Busy),
                Err(fs::TryLockError::Error(e)) => return Err(LockError::Io(e)),
            }
        }
    }
}

impl Drop for Lock {
    fn drop(&mut self) {
        let _ = self.file.unlock();
    }
}

/// Flushes a folder's entries (names created, renamed or removed in it) to disk.
pub fn sync_dir(path: &Path) -> io::Result<()> {
    let path = if path.as_os_str().is_empty() {
        Path::new(".")
    } else {
        path
    };
    File::open(path)?.sync_all()
}

fn random_suffix() -> String {
    let mut bytes = [0u8; 6];
    // A failed random source only weakens uniqueness; create_new still refuses a collision.
    let _ = getrandom::fill(&mut bytes);
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn many_files_are_created_whole_or_not_at_all() {
        // Below and above the count from which the filesystem is flushed once.
        for count in [FLUSH_FILESYSTEM_FROM - 1, FLUSH_FILESYSTEM_FROM * 3] {
            let dir = tempfile::tempdir().unwrap();
            let named = |n: usize| dir.path().join(format!("f{n}.md"));
            let texts: Vec<String> = (0..count).map(|n| format!("file {n}")).collect();
            let files: Vec<(std::path::PathBuf, &[u8])> = texts
                .iter()
                .enumerate()
                .map(|(n, t)| (named(n), t.as_bytes()))
                .collect();
            create_many(&files).unwrap();
            assert_eq!(fs::read_dir(dir.path()).unwrap().count(), count);
            assert_eq!(
                fs::read_to_string(named(count - 2)).unwrap(),
                format!("file {}", count - 2)
            );

            // A name that is taken fails the call, and whatever it created is removed again.
            let other = tempfile::tempdir().unwrap();
            let taken = format!("f{}.md", count * 3 / 4);
            fs::write(other.path().join(&taken), "the owner's").unwrap();
            let files: Vec<(std::path::PathBuf, &[u8])> = texts
                .iter()
                .enumerate()
                .map(|(n, t)| (other.path().join(format!("f{n}.md")), t.as_bytes()))
                .collect();
            let error = create_many(&files).unwrap_err();
            assert_eq!(error.kind(), io::ErrorKind::AlreadyExists);
            let left: Vec<_> = fs::read_dir(other.path())
                .unwrap()
                .map(|e| e.unwrap().file_name())
                .collect();
            assert_eq!(left, [taken.as_str()], "{count} files");
            assert_eq!(fs::read_to_string(other.path().join(&taken)).unwrap(), "the owner's");
        }
    }

    #[test]
    fn writes_replace_and_leave_no_temp_files() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a/b/c.md");
        write_atomic(&path, b"one").unwrap();
        write_atomic(&path, b"two").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"two");
        let names: Vec<_> = fs::read_dir(path.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 1);
    }

    #[cfg(unix)]
    #[test]
    fn files_and_folders_are_private() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("new/folder/x.md");
        write_atomic(&path, b"x").unwrap();
        let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&path), 0o600);
        assert_eq!(mode(&dir.path().join("new/folder")), 0o700);
        create_new_atomic(&dir.path().join("y.md"), b"y").unwrap();
        assert_eq!(mode(&dir.path().join("y.md")), 0o600);
    }

    #[test]
    fn create_new_never_clobbers() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.md");
        create_new_atomic(&path, b"first").unwrap();
        let err = create_new_atomic(&path, b"second").unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::AlreadyExists);
        assert_eq!(fs::read(&path).unwrap(), b"first");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}
