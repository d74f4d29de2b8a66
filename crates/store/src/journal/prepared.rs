//! What this process has just written (an import's segments and notes), handed to the sync that
//! follows so that it catalogues them from memory instead of reading and parsing the files again (an
//! import of 10,000 files spent most of its sync doing that), and does not index them again when
//! they were indexed while being written (`preindex`).
//!
//! A file is matched by its path and the size it was written with: a file whose size changed
//! meanwhile was edited and is read as usual.

use std::collections::HashMap;
use std::sync::Arc;

use super::notes::note::Note;
use super::transcript::Segment;

/// A note as it was written: its bytes and the note they read as (under the path it was written
/// to), and the day its search document was filed under if it was indexed beforehand.
pub struct PreparedNote {
    pub note: Note,
    pub bytes: Arc<[u8]>,
    /// Where the body begins in `bytes` (after the frontmatter).
    pub body_start: usize,
    /// `notes::sync::day_of` the note as indexed: a note without a `date` is filed under the day of
    /// its file's time, which is known only once the file is written.
    pub day: u64,
}

impl PreparedNote {
    /// The note's body, as indexed.
    pub fn body(&self) -> &str {
        body_at(&self.bytes, self.body_start)
    }
}

/// The text of a note's bytes from `start` on (its body, when `start` is where the body begins).
pub fn body_at(bytes: &[u8], start: usize) -> &str {
    std::str::from_utf8(bytes.get(start..).unwrap_or_default()).unwrap_or_default()
}

/// One file's prepared contents and whether its search documents are committed already.
pub struct Written<T> {
    pub value: T,
    pub indexed: bool,
}

/// Files just written, by path (segments under the journal's root, notes in the vault), each with
/// the size it was written as.
#[derive(Default)]
pub struct Prepared {
    segments: HashMap<String, (i64, Written<Segment>)>,
    notes: HashMap<String, (i64, Written<PreparedNote>)>,
}

impl Prepared {
    /// Notes that the file at `path` (under the root) was written as `size` bytes holding `segment`.
    pub fn add_segment(&mut self, path: String, size: usize, segment: Segment, indexed: bool) {
        self.segments.insert(
            path,
            (
                size as i64,
                Written {
                    value: segment,
                    indexed,
                },
            ),
        );
    }

    /// Notes that the note at `path` (in the vault) was written as `note.bytes`.
    pub fn add_note(&mut self, path: String, note: PreparedNote, indexed: bool) {
        let size = note.bytes.len() as i64;
        self.notes.insert(path, (size, Written { value: note, indexed }));
    }

    /// The segment written at `path`, if the file still has the size it was written with.
    pub(super) fn take_segment(&mut self, path: &str, size: i64) -> Option<Written<Segment>> {
        take(&mut self.segments, path, size)
    }

    /// The note written at `path`, if the file still has the size it was written with.
    pub(super) fn take_note(&mut self, path: &str, size: i64) -> Option<Written<PreparedNote>> {
        take(&mut self.notes, path, size)
    }
}

fn take<T>(map: &mut HashMap<String, (i64, Written<T>)>, path: &str, size: i64) -> Option<Written<T>> {
    match map.remove(path) {
        Some((written, value)) if written == size => Some(value),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_taken_once_and_only_at_the_size_it_was_written_with() {
        let note = |text: &str| {
            let bytes: Arc<[u8]> = Arc::from(text.as_bytes());
            let read = crate::journal::notes::note::read("a.md", &bytes, 0).unwrap();
            PreparedNote {
                note: read.note,
                body_start: 0,
                bytes: Arc::clone(&bytes),
                day: 0,
            }
        };
        let mut prepared = Prepared::default();
        prepared.add_note("a.md".into(), note("# A\nbody"), true);
        prepared.add_note("b.md".into(), note("# B"), false);
        assert!(prepared.take_note("a.md", 3).is_none(), "another size: changed since");
        assert!(
            prepared.take_note("a.md", 8).is_none(),
            "taken (and dropped) by the mismatch"
        );
        let b = prepared.take_note("b.md", 3).expect("written as 3 bytes");
        assert!(!b.indexed);
        assert_eq!(b.value.body(), "# B");
        assert!(prepared.take_note("b.md", 3).is_none(), "taken once");
        assert!(prepared.take_segment("b.md", 3).is_none(), "segments apart from notes");
    }
}
