//! Fuzzes the transcript importers (WebVTT, SubRip, JSON Lines, plain text): no input panics, and
//! every utterance they yield is one non-empty line.
#![no_main]

use journal::journal::import::{self, Format};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    for format in [Format::Vtt, Format::Srt, Format::Jsonl, Format::Text] {
        if let Ok(utterances) = import::parse(format, text) {
            for utterance in utterances {
                assert!(!utterance.text.is_empty() && !utterance.text.contains('\n'));
            }
        }
    }
});
