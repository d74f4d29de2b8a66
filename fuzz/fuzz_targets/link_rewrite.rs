//! Fuzzes link rewriting (`moves::check_rewrite`): any text as a note in a small vault, rewritten
//! for the move of one note (the first byte picks which note is rewritten and which move); never
//! a panic, the result reads with as many links, every wikilink names what it named (where it
//! moved), and a second rewrite changes nothing. The proptest twin is in `notes/moves.rs`.
#![no_main]

use journal::journal::notes::moves;
use libfuzzer_sys::fuzz_target;

const PATHS: [&str; 4] = ["Plan.md", "Notes/Plan.md", "Notes/Other.md", "Archive/Plan.md"];
// With twins of the vault's paths, which moves refuse, and a case-only rename, which they make.
const TO: [&str; 7] = [
    "Archive/Moved.md",
    "Deep/Plan.md",
    "Notes/Renamed.md",
    "Notes/other.md.bak.md",
    "plan.md",
    "Notes/plan.md",
    "notes/Plan.md",
];

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else { return };
    let Ok(text) = std::str::from_utf8(rest) else { return };
    let pick = usize::from(pick);
    moves::check_rewrite(text, &PATHS, PATHS[pick % 4], PATHS[(pick / 4) % 4], TO[(pick / 16) % TO.len()]);
});
