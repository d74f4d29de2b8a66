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

fn sync_dir(path: &Path) -> io::Result<()> {
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
