//! Agent memory: what one connection saved for itself with `save_memory`.
//!
//! Each memory is `memory/<connection id>/<digest>.md`, where the digest is the SHA-256 of the
//! operation id. Deriving the file name from the operation id makes a save idempotent and crash-safe
//! without any other bookkeeping: the file either exists whole (the save happened, a retry replays it)
//! or not at all. Only the owning connection's folder is ever read for it.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::day::{self, Day};
use super::frontmatter;
use crate::fsio;

/// Limits from the reference: content 1-32,768 bytes, operation ids 1-128 of `[A-Za-z0-9._:-]`.
pub const MAX_CONTENT_BYTES: usize = 32_768;
pub const MAX_OPERATION_ID_BYTES: usize = 128;

/// A saved memory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Memory {
    pub operation_id: String,
    /// RFC 3339 UTC.
    pub saved_at: String,
    pub day: String,
    #[serde(skip)]
    pub content: String,
}

/// How a save ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SaveOutcome {
    Saved,
    /// The operation id was saved before with the same content: nothing new was written.
    Replayed,
}

#[derive(Debug, thiserror::Error)]
pub enum MemoryError {
    #[error("content must be 1 to {MAX_CONTENT_BYTES} bytes")]
    ContentSize,
    #[error("operation_id must be 1 to {MAX_OPERATION_ID_BYTES} characters of A-Z, a-z, 0-9, '.', '_', ':' and '-'")]
    OperationId,
    #[error("operation_id {0} was already used for different content; use a new operation_id for a new memory")]
    Conflict(String),
    #[error("could not store the memory: {0}")]
    Io(#[from] io::Error),
    #[error("a stored memory is unreadable: {0}")]
    Corrupt(String),
}

/// Checks an operation id against the allowed characters and length.
pub fn validate_operation_id(id: &str) -> bool {
    (1..=MAX_OPERATION_ID_BYTES).contains(&id.len())
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b':' | b'-'))
}

fn folder(root: &Path, connection_id: &str) -> PathBuf {
    root.join("memory").join(connection_id)
}

fn file_for(root: &Path, connection_id: &str, operation_id: &str) -> PathBuf {
    let digest = Sha256::digest(operation_id.as_bytes());
    let name: String = digest[..16].iter().map(|b| format!("{b:02x}")).collect();
    folder(root, connection_id).join(format!("{name}.md"))
}

/// Saves a memory durably, or replays the earlier save of the same operation id.
pub fn save(
    root: &Path,
    connection_id: &str,
    operation_id: &str,
    content: &str,
    now: i64,
) -> Result<(Memory, SaveOutcome), MemoryError> {
    if content.is_empty() || content.len() > MAX_CONTENT_BYTES {
        return Err(MemoryError::ContentSize);
    }
    if !validate_operation_id(operation_id) {
        return Err(MemoryError::OperationId);
    }
    let path = file_for(root, connection_id, operation_id);
    let memory = Memory {
        operation_id: operation_id.to_string(),
        saved_at: day::format_timestamp(now),
        day: Day::from_epoch_days(now.div_euclid(86_400)).to_string(),
        content: content.to_string(),
    };
    let text = frontmatter::render(&memory, &body_of(content));
    match fsio::create_new_atomic(&path, text.as_bytes()) {
        Ok(()) => Ok((memory, SaveOutcome::Saved)),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
            let earlier = read(&path)?;
            if earlier.content == content && earlier.operation_id == operation_id {
                Ok((earlier, SaveOutcome::Replayed))
            } else {
                Err(MemoryError::Conflict(operation_id.to_string()))
            }
        }
        Err(e) => Err(MemoryError::Io(e)),
    }
}

/// The body stores the content exactly; a trailing newline is added for people reading the file and
/// removed again on reading.
fn body_of(content: &str) -> String {
    format!("{content}\n")
}

fn read(path: &Path) -> Result<Memory, MemoryError> {
    let text = fs::read_to_string(path)?;
    let (mut memory, body): (Memory, _) =
        frontmatter::parse(&text).map_err(|e| MemoryError::Corrupt(format!("{}: {e}", path.display())))?;
    memory.content = body.strip_suffix('\n').unwrap_or(body).to_string();
    Ok(memory)
}

/// Every memory of a connection, newest first. Unreadable files are skipped (and logged): one bad
/// hand edit must not hide the rest.
pub fn all(root: &Path, connection_id: &str) -> Result<Vec<Memory>, MemoryError> {
    let dir = folder(root, connection_id);
    let entries = match fs::read_dir(&dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e.into()),
    };
    let mut memories = Vec::new();
    for entry in entries {
        let path = entry?.path();
        let is_memory = path.extension().is_some_and(|e| e == "md")
            && !path
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or(".")
                .starts_with('.');
        if !is_memory {
            continue;
        }
        match read(&path) {
            Ok(memory) => memories.push(memory),
            Err(e) => tracing::warn!(error = %e, "skipping an unreadable memory file"),
        }
    }
    memories.sort_by(|a, b| {
        b.saved_at
            .cmp(&a.saved_at)
            .then_with(|| a.operation_id.cmp(&b.operation_id))
    });
    Ok(memories)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn saves_replays_and_refuses_conflicts() {
        let dir = tempfile::tempdir().unwrap();
        let (memory, outcome) = save(dir.path(), "c1", "op:1", "remember the milk\n---\nx", 1_764_667_800).unwrap();
        assert_eq!(outcome, SaveOutcome::Saved);
        assert_eq!(memory.day, "2025-12-02");
        let (again, outcome) = save(dir.path(), "c1", "op:1", "remember the milk\n---\nx", 1_764_667_900).unwrap();
        assert_eq!(outcome, SaveOutcome::Replayed);
        assert_eq!(again, memory);
        assert!(matches!(
            save(dir.path(), "c1", "op:1", "other", 0),
            Err(MemoryError::Conflict(_))
        ));
        save(dir.path(), "c1", "op:2", "second", 1_764_667_999).unwrap();
        let all = all(dir.path(), "c1").unwrap();
        assert_eq!(
            all.iter().map(|m| m.operation_id.as_str()).collect::<Vec<_>>(),
            ["op:2", "op:1"]
        );
        assert_eq!(all[1].content, "remember the milk\n---\nx");
        assert!(super::all(dir.path(), "c2").unwrap().is_empty());
    }

    #[test]
    fn refuses_bad_input() {
        let dir = tempfile::tempdir().unwrap();
        assert!(matches!(
            save(dir.path(), "c", "..", "", 0),
            Err(MemoryError::ContentSize)
        ));
        assert!(matches!(
            save(dir.path(), "c", "a/b", "x", 0),
            Err(MemoryError::OperationId)
        ));
        assert!(matches!(
            save(dir.path(), "c", "", "x", 0),
            Err(MemoryError::OperationId)
        ));
        assert!(matches!(
            save(dir.path(), "c", &"a".repeat(129), "x", 0),
            Err(MemoryError::OperationId)
        ));
        let big = "x".repeat(MAX_CONTENT_BYTES + 1);
        assert!(matches!(
            save(dir.path(), "c", "ok", &big, 0),
            Err(MemoryError::ContentSize)
        ));
        assert!(validate_operation_id("..") && validate_operation_id("a.b_c:d-1"));
        assert!(!dir.path().join("memory").exists());
    }
}
