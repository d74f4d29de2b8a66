//! Fuzzes reading a vault note (`note::read`): any bytes read as a note never panic, and a note
//! that reads keeps the limits (size and hash of the file, at most 1,000 tags, none twice, a title,
//! frontmatter that stands for at most 1 MiB). The proptest twin is in `notes/note.rs`.
#![no_main]

use journal::journal::notes::note;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    note::check_read("Folder/n.md", data);
});
