//! Fuzzes the frontmatter editor (`edit::patch_frontmatter`): any text as the note, a key and a
//! value from the first line; setting the key never panics and is either refused or holds exactly
//! that value, with the body kept. The proptest twin is in `notes/edit.rs`.
#![no_main]

use journal::journal::notes::edit;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let (first, note) = text.split_once('\n').unwrap_or((text, ""));
    let (key, value) = first.split_once('=').unwrap_or((first, ""));
    if key.is_empty() || !key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return;
    }
    edit::check_patch(note, key, value);
});
