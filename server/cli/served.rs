//! Which journals the servers running on this computer serve, so that a command run without
//! `--journal` acts on the journal being served, or says plainly which one it used.
//!
//! Each `journal serve` writes `<data folder>/journal-servers/<pid>.json` (its journal folder and its
//! address) once it listens, and removes it when it stops. A file whose process is gone (a server
//! that was killed) is passed over and removed by the next reader. The list is a convenience for
//! the owner's commands, never a source of access: it names folders the owner's own account can
//! open anyway.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// A running server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Served {
    /// Its journal folder, as it opened it.
    pub journal: PathBuf,
    /// Its MCP address on this computer.
    pub url: String,
}

/// The folder of the list.
fn folder() -> Option<PathBuf> {
    crate::config::data_dir().ok().map(|data| data.join("journal-servers"))
}

/// This server's entry in the list, removed when dropped.
pub struct Registration(PathBuf);

impl Drop for Registration {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Puts this process's server in the list. Best effort: without a data folder, or one it cannot
/// write, commands simply do not find it (and say which journal they used).
pub fn register(journal: &Path, url: &str) -> Option<Registration> {
    let folder = folder()?;
    std::fs::create_dir_all(&folder).ok()?;
    let path = folder.join(format!("{}.json", std::process::id()));
    let entry = Served {
        journal: journal.to_path_buf(),
        url: url.to_string(),
    };
    let text = serde_json::to_vec(&entry).ok()?;
    crate::fsio::write_atomic(&path, &text).ok()?;
    Some(Registration(path))
}

/// The servers running now, by their entries whose process is alive.
pub fn running() -> Vec<Served> {
    let Some(folder) = folder() else {
        return Vec::new();
    };
    let Ok(entries) = std::fs::read_dir(&folder) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        let Some(pid) = path
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_suffix(".json"))
            .and_then(|n| n.parse::<i32>().ok())
        else {
            continue;
        };
        if !alive(pid) {
            let _ = std::fs::remove_file(&path);
            continue;
        }
        if let Some(served) = std::fs::read(&path).ok().and_then(|b| serde_json::from_slice(&b).ok()) {
            found.push(served);
        }
    }
    found.sort_by(|a: &Served, b| a.url.cmp(&b.url));
    found
}

/// Whether a process of this id runs (one of another user's answers EPERM: it runs too).
fn alive(pid: i32) -> bool {
    let Some(pid) = rustix::process::Pid::from_raw(pid) else {
        return false;
    };
    match rustix::process::test_kill_process(pid) {
        Ok(()) => true,
        Err(error) => error == rustix::io::Errno::PERM,
    }
}

/// Whether two folders are the same folder (by their resolved paths).
pub fn same(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_alive_and_a_made_up_one_is_not() {
        assert!(alive(std::process::id() as i32));
        assert!(!alive(i32::MAX - 7));
        assert!(!alive(0));
    }
}
