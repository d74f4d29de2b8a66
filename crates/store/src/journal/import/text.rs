//! Plain-text (`.txt`) transcripts to utterances: each non-empty line is one utterance.
//!
//! A line may start with a timestamp (`[01:02:03]`, `[02:03]` or bare `01:02:03`, then
//! whitespace) and then a `Speaker: ` prefix (the convention shared with SubRip). A line without
//! a timestamp takes the previous one's offset (0 at the start), and a line holding only a
//! timestamp sets the offset for the lines after it, a common layout for exported notes.
//! Timestamps may go backwards; they are taken as given.
//!
//! Bare `mm:ss` is deliberately not a timestamp: "12:30 we met for lunch" is prose.

use super::timecode::{self, Timecode, TimecodeError};
use super::{ParseError, Utterance, line_number, normalize_text, quote, split_speaker, strip_tags};

pub(super) fn parse(lines: &[&str]) -> Result<Vec<Utterance>, ParseError> {
    let mut offset_seconds = 0;
    let mut utterances = Vec::new();
    for (index, raw) in lines.iter().enumerate() {
        let line = line_number(index);
        let (timestamp, rest) = leading_timestamp(line, raw.trim())?;
        if let Some(timestamp) = timestamp {
            offset_seconds = timestamp.seconds();
        }
        let text = normalize_text(&strip_tags(rest));
        let (speaker, text) = split_speaker(&text);
        utterances.extend(super::utterance(line, offset_seconds, speaker, text)?);
    }
    Ok(utterances)
}

/// Splits a leading timestamp off `text` (already trimmed). Something that merely resembles
/// one (`[Music]`, `10:30am`) stays text; one with an impossible value is refused, because the
/// writer clearly meant a timestamp and guessing would misplace every line after it.
fn leading_timestamp(line: usize, text: &str) -> Result<(Option<Timecode>, &str), ParseError> {
    let (token, rest) = text.split_once(char::is_whitespace).unwrap_or((text, ""));
    let clock = match token.strip_prefix('[').and_then(|t| t.strip_suffix(']')) {
        Some(inner) if looks_like_clock(inner, 1) => inner,
        None if looks_like_clock(token, 2) => token,
        _ => return Ok((None, text)),
    };
    match timecode::parse(clock, &['.']) {
        Ok(timestamp) => Ok((Some(timestamp), rest)),
        Err(TimecodeError::Malformed) => Ok((None, text)),
        Err(error) => Err(ParseError::at(
            line,
            format!("timestamp {} {}", quote(token), error.reason()),
        )),
    }
}

/// Digits, colons and dots only, starting with a digit, with at least `min_colons` colons.
fn looks_like_clock(token: &str, min_colons: usize) -> bool {
    token.starts_with(|c: char| c.is_ascii_digit())
        && token.chars().all(|c| c.is_ascii_digit() || c == ':' || c == '.')
        && token.matches(':').count() >= min_colons
}

#[cfg(test)]
mod tests {
    use super::super::test_support::said;
    use super::super::{Format, Utterance, parse as parse_any};

    fn parse(input: &str) -> Result<Vec<Utterance>, super::ParseError> {
        parse_any(Format::Text, input)
    }

    fn refusal(input: &str) -> (usize, String) {
        super::super::test_support::refusal(Format::Text, input)
    }

    #[test]
    fn each_line_is_an_utterance_at_zero_without_timestamps() {
        let input = "First thought.\n\n  Second   thought.  \n";
        assert_eq!(
            parse(input).unwrap(),
            vec![said(0, None, "First thought."), said(0, None, "Second thought.")]
        );
    }

    #[test]
    fn timestamp_forms_and_carried_offsets() {
        let input = "[00:01:05] one\n[02:03]\ttwo\n01:00:00 three\nfour\n[00:00:01.900] five\n";
        assert_eq!(
            parse(input).unwrap(),
            vec![
                said(65, None, "one"),
                said(123, None, "two"),
                said(3600, None, "three"),
                said(3600, None, "four"),
                said(1, None, "five"),
            ]
        );
    }

    #[test]
    fn timestamp_only_lines_set_the_offset() {
        let input = "[00:00:10]\nhello\n00:00:20\nworld\n";
        assert_eq!(
            parse(input).unwrap(),
            vec![said(10, None, "hello"), said(20, None, "world")]
        );
    }

    #[test]
    fn speakers_after_timestamps() {
        let input = "\u{feff}[00:00:03] Alice: Shall we start?\r\nBob: Yes.\r\nDr. No: hmm\r\n";
        assert_eq!(
            parse(input).unwrap(),
            vec![
                said(3, Some("Alice"), "Shall we start?"),
                said(3, Some("Bob"), "Yes."),
                said(3, None, "Dr. No: hmm"),
            ]
        );
    }

    #[test]
    fn look_alikes_stay_text() {
        let input = "12:30 we met for lunch\n[Music]\n10:30:00am is not one\n[1::2] odd\n[00:00:01]x\n";
        assert_eq!(
            parse(input).unwrap(),
            vec![
                said(0, None, "12:30 we met for lunch"),
                said(0, None, "[Music]"),
                said(0, None, "10:30:00am is not one"),
                said(0, None, "[1::2] odd"),
                said(0, None, "[00:00:01]x"),
            ]
        );
    }

    #[test]
    fn markup_is_dropped() {
        assert_eq!(
            parse("<b>Ann:</b> <i>really</i>?\n").unwrap(),
            vec![said(0, Some("Ann"), "really?")]
        );
    }

    #[test]
    fn refuses_impossible_timestamps() {
        let (line, message) = refusal("fine\n[00:75:00] late\n");
        assert_eq!(line, 2);
        assert!(
            message.contains("timestamp \"[00:75:00]\" is out of range"),
            "{message}"
        );
        let (line, message) = refusal("a\nb\n99999999:00:00 far away\n");
        assert_eq!(line, 3);
        assert!(message.contains("\"99999999:00:00\" is too large"), "{message}");
    }

    #[test]
    fn only_timestamps_is_no_utterances() {
        let (line, message) = refusal("[00:00:01]\n[00:00:02]\n");
        assert_eq!(line, 1);
        assert!(message.contains("no utterances found"), "{message}");
    }

    #[test]
    fn refuses_too_long_line() {
        let long = "ab ".repeat(6_000);
        let (line, message) = refusal(&format!("short\n\n{long}\n"));
        assert_eq!(line, 3);
        assert!(message.contains("the limit is 16384"), "{message}");
    }
}
