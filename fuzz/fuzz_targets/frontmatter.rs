//! Fuzzes hand-edited journal files: splitting and reading the YAML frontmatter of every kind of
//! file never panics, an error names a line, and what was read, written again, reads back the same.
#![no_main]

use std::collections::BTreeMap;
use std::fmt::Debug;

use journal::journal::entity::Entity;
use journal::journal::facet::Facet;
use journal::journal::frontmatter::{self, FrontmatterError};
use journal::journal::memory::Memory;
use journal::journal::transcript::{Segment, SegmentHead};
use libfuzzer_sys::fuzz_target;
use serde::Serialize;
use serde::de::DeserializeOwned;

/// The line an error names (`line N`), if it names one.
fn named_line(error: &str) -> Option<usize> {
    let (_, after) = error.split_once("line ")?;
    let digits: String = after.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

fn holds<T: Serialize + DeserializeOwned + PartialEq + Debug>(text: &str) {
    match frontmatter::parse::<T>(text) {
        Ok((value, body)) => {
            let again = frontmatter::render(&value, body);
            let back = frontmatter::parse::<T>(&again);
            assert_eq!(back, Ok((value, body)), "{text:?} rendered as {again:?}");
        }
        Err(FrontmatterError::MissingOpen) => {}
        // Names no line: the whole file was searched for the closing line.
        Err(FrontmatterError::MissingClose) => {}
        Err(FrontmatterError::Yaml(why)) => {
            // A line of the file inside the block (which starts on the file's line 2).
            let (yaml, _) = frontmatter::split(text).unwrap();
            let line = named_line(&why).unwrap_or_else(|| panic!("{text:?}: {why} names no line"));
            // YAML counts a lone carriage return as a line break too.
            let lines = yaml.replace("\r\n", "\n").replace('\r', "\n").lines().count();
            assert!((2..=lines + 2).contains(&line), "{text:?}: {why}");
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok((yaml, body)) = frontmatter::split(text) {
        assert!(yaml.is_empty() || yaml.ends_with('\n'));
        let rebuilt = format!("---\n{yaml}---\n{body}");
        assert_eq!(frontmatter::split(&rebuilt), Ok((yaml, body)));
    }
    holds::<Facet>(text);
    holds::<Entity>(text);
    holds::<SegmentHead>(text);
    holds::<Memory>(text);
    holds::<BTreeMap<String, String>>(text);
    if let Ok(facet) = Facet::parse(text) {
        assert_eq!(Facet::parse(&facet.render("")), Ok(facet));
    }
    if let Ok((entity, body)) = Entity::parse(text) {
        assert_eq!(Entity::parse(&entity.render(&body)), Ok((entity, body)));
    }
    match Segment::parse(text) {
        Ok(segment) => {
            let again = Segment::render(&segment.head, &segment.lines);
            assert_eq!(Segment::parse(&again), Ok(segment), "{text:?} rendered as {again:?}");
        }
        Err(why) => {
            // A transcript line's error names the file's line and quotes it.
            if let Some((_, quoted)) = why.split_once("found \"") {
                let quoted = quoted.strip_suffix('"').unwrap_or(quoted);
                let line = named_line(&why).unwrap();
                let named = text.lines().nth(line - 1).unwrap_or_default();
                assert!(named.starts_with(quoted), "{text:?}: {why}");
            }
        }
    }
});
