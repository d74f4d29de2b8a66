//! SubRip (`.srt`) subtitles to utterances.
//!
//! A SubRip file is a sequence of blocks: a subtitle number, a timing line
//! `00:01:02,500 --> 00:01:04,000`, one or more text lines, a blank line. Real files stray from
//! that, so we also accept `.` as the decimal separator, a missing number, a missing blank line
//! between blocks or at the end, and trailing display coordinates after the timing. SubRip has
//! no speaker field: the `Speaker: text` convention (shared with plain text) supplies one.
//! Formatting (`<i>`, `<font color=..>`, `{\an8}`) is dropped; dialogue dashes (`- Hi`) are
//! kept as written, with the lines joined.

use super::timecode::Timecode;
use super::{
    ParseError, Utterance, is_blank, line_number, next_non_blank, normalize_text, quote, read_timestamp, split_speaker,
    strip_tags, utterance,
};

/// What a timing line looks like, for error messages.
const TIMING_EXAMPLE: &str = r#""00:01:02,500 --> 00:01:04,000""#;

/// Separates a subtitle's start and end; its presence is what makes a line a timing line.
const ARROW: &str = "-->";

/// Longest `{\...}` override code removed; a longer brace group is left as text.
const MAX_CODE_BYTES: usize = 200;

pub(super) fn parse(lines: &[&str]) -> Result<Vec<Utterance>, ParseError> {
    let mut index = 0;
    let mut utterances = Vec::new();
    while let Some(start) = next_non_blank(lines, index) {
        index = parse_block(lines, start, &mut utterances)?;
    }
    Ok(utterances)
}

/// Parses the block starting at `start` (a non-blank line) and returns where to continue.
/// Always returns an index past `start`, so the caller's loop terminates.
fn parse_block(lines: &[&str], start: usize, utterances: &mut Vec<Utterance>) -> Result<usize, ParseError> {
    let first = lines.get(start).copied().unwrap_or_default();
    let timing_index = if first.contains(ARROW) {
        start
    } else if is_number(first) {
        let next_index = start.saturating_add(1);
        match lines.get(next_index) {
            Some(next) if !is_blank(next) => next_index,
            _ => {
                return Err(ParseError::at(
                    line_number(start),
                    format!(
                        "subtitle {} has no timing line after it; expected one like {TIMING_EXAMPLE}",
                        first.trim()
                    ),
                ));
            }
        }
    } else {
        return Err(ParseError::at(
            line_number(start),
            format!(
                "expected a subtitle number like \"12\" or a timing like {TIMING_EXAMPLE}, found {}",
                quote(first)
            ),
        ));
    };
    let timing_line = lines.get(timing_index).copied().unwrap_or_default();
    let cue_start = parse_timing(line_number(timing_index), timing_line)?;
    let text_start = timing_index.saturating_add(1);
    let text_end = (text_start..lines.len())
        .find(|&i| ends_text(lines, i))
        .unwrap_or(lines.len());
    let text = lines
        .get(text_start..text_end)
        .unwrap_or_default()
        .iter()
        .map(|line| strip_tags(&strip_override_codes(line)))
        .collect::<Vec<_>>()
        .join("\n");
    let text = normalize_text(&text);
    let (speaker, text) = split_speaker(&text);
    let line = line_number(text_start);
    utterances.extend(utterance(line, cue_start.seconds(), speaker, text)?);
    Ok(text_end)
}

/// Whether line `index` is past a subtitle's text: a blank line, or (when the blank line
/// before the next block was forgotten) a timing line or a number followed by one.
fn ends_text(lines: &[&str], index: usize) -> bool {
    let Some(line) = lines.get(index) else {
        return true;
    };
    is_blank(line)
        || line.contains(ARROW)
        || (is_number(line)
            && lines
                .get(index.saturating_add(1))
                .is_some_and(|next| next.contains(ARROW)))
}

fn is_number(line: &str) -> bool {
    let line = line.trim();
    !line.is_empty() && line.bytes().all(|b| b.is_ascii_digit())
}

fn timing_expected(line: usize, found: &str) -> ParseError {
    ParseError::at(
        line,
        format!(
            "expected a subtitle timing like {TIMING_EXAMPLE}, found {}",
            quote(found)
        ),
    )
}

/// `start --> end [X1:.. Y2:..]`; returns the start.
fn parse_timing(line: usize, text: &str) -> Result<Timecode, ParseError> {
    let malformed = || timing_expected(line, text);
    let (start, rest) = text.split_once(ARROW).ok_or_else(malformed)?;
    let start = start.trim();
    let end = rest.split_whitespace().next().ok_or_else(malformed)?;
    let start_time = read_timestamp(line, start, &[',', '.'], malformed)?;
    let end_time = read_timestamp(line, end, &[',', '.'], malformed)?;
    if end_time < start_time {
        return Err(ParseError::at(
            line,
            format!("this subtitle ends at {end} before it starts at {start}"),
        ));
    }
    Ok(start_time)
}

/// Removes SSA/ASS override codes such as `{\an8}` or `{\i1}` that many SubRip files carry.
fn strip_override_codes(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(open) = rest.find("{\\") {
        let after = rest.get(open..).unwrap_or_default();
        let Some(close) = after.find('}').filter(|&close| close <= MAX_CODE_BYTES) else {
            break;
        };
        out.push_str(rest.get(..open).unwrap_or_default());
        // `}` is one byte, so one past it is a character boundary.
        rest = after.get(close.saturating_add(1)..).unwrap_or_default();
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::super::test_support::said;
    use super::super::{Format, Utterance, parse as parse_any};

    fn parse(input: &str) -> Result<Vec<Utterance>, super::ParseError> {
        parse_any(Format::Srt, input)
    }

    fn refusal(input: &str) -> (usize, String) {
        super::super::test_support::refusal(Format::Srt, input)
    }

    #[test]
    fn simple_blocks_with_speakers() {
        let input = "1\n00:00:01,000 --> 00:00:04,000\nAlice: Hello there.\n\n\
                     2\n00:01:05,500 --> 00:01:07,000\nGeneral Kenobi.\n";
        assert_eq!(
            parse(input).unwrap(),
            vec![
                said(1, Some("Alice"), "Hello there."),
                said(65, None, "General Kenobi.")
            ]
        );
    }

    #[test]
    fn multi_line_text_and_dialogue_dashes() {
        let input = "1\n00:00:01,000 --> 00:00:02,000\nfirst line\nsecond line\n\n\
                     2\n00:00:03,000 --> 00:00:04,000\n- Coming?\n- Yes.\n";
        assert_eq!(
            parse(input).unwrap(),
            vec![
                said(1, None, "first line second line"),
                said(3, None, "- Coming? - Yes.")
            ]
        );
    }

    #[test]
    fn tags_and_override_codes_are_stripped() {
        let input = "1\n00:00:01,000 --> 00:00:02,000\n{\\an8}<i>Bob:</i> <font color=\"#ff0000\">run</font>!\n\n\
                     2\n00:00:02,000 --> 00:00:03,000\n{not a code} <b>{\\b1}bold{\\b0}</b>\n";
        assert_eq!(
            parse(input).unwrap(),
            vec![said(1, Some("Bob"), "run!"), said(2, None, "{not a code} bold")]
        );
    }

    #[test]
    fn bom_crlf_dot_separator_and_no_trailing_newline() {
        let input = "\u{feff}1\r\n00:00:09.250 --> 00:00:10.000\r\nhi\r\n\r\n2\r\n00:00:11,000 --> 00:00:12,000\r\nbye";
        assert_eq!(parse(input).unwrap(), vec![said(9, None, "hi"), said(11, None, "bye")]);
    }

    #[test]
    fn missing_numbers_blank_lines_and_coordinates_are_tolerated() {
        let input = "00:00:01,000 --> 00:00:02,000 X1:100 X2:200 Y1:10 Y2:20\none\n\
                     2\n00:00:03,000 --> 00:00:04,000\ntwo\n00:00:05,000 --> 00:00:06,000\nthree\n";
        assert_eq!(
            parse(input).unwrap(),
            vec![said(1, None, "one"), said(3, None, "two"), said(5, None, "three")]
        );
    }

    #[test]
    fn numeric_text_line_is_kept_when_not_followed_by_a_timing() {
        let input = "1\n00:00:01,000 --> 00:00:02,000\nThe answer is\n42\n";
        assert_eq!(parse(input).unwrap(), vec![said(1, None, "The answer is 42")]);
    }

    #[test]
    fn empty_subtitles_are_skipped() {
        let input = "1\n00:00:01,000 --> 00:00:02,000\n\n2\n00:00:02,000 --> 00:00:03,000\n<i></i>\n\n\
                     3\n00:00:03,000 --> 00:00:04,000\nkept\n";
        assert_eq!(parse(input).unwrap(), vec![said(3, None, "kept")]);
        let (line, message) = refusal("1\n00:00:01,000 --> 00:00:02,000\n<i> </i>\n");
        assert_eq!(line, 1);
        assert!(message.contains("no utterances found"), "{message}");
    }

    #[test]
    fn refuses_text_where_a_number_should_be() {
        let (line, message) = refusal("1\n00:00:01,000 --> 00:00:02,000\nok\n\nhello\nworld\n");
        assert_eq!(line, 5);
        assert!(message.contains("expected a subtitle number"), "{message}");
        assert!(message.contains("found \"hello\""), "{message}");
    }

    #[test]
    fn refuses_bad_timing() {
        let (line, message) = refusal("1\n00:00:01,000 --> 00:00:02,000\nok\n\n2\n00:00:03 to 00:00:04\nx\n");
        assert_eq!(line, 6);
        assert!(
            message.contains(
                r#"expected a subtitle timing like "00:01:02,500 --> 00:01:04,000", found "00:00:03 to 00:00:04""#
            ),
            "{message}"
        );
        let (line, message) = refusal("1\n00:00:01,000 --> \nx\n");
        assert_eq!(line, 2);
        assert!(message.contains("expected a subtitle timing"), "{message}");
    }

    #[test]
    fn refuses_number_without_timing() {
        let (line, message) = refusal("1\n00:00:01,000 --> 00:00:02,000\nok\n\n2\n");
        assert_eq!(line, 5);
        assert!(message.contains("subtitle 2 has no timing line"), "{message}");
        let (line, _) = refusal("7\n\n00:00:01,000 --> 00:00:02,000\nok\n");
        assert_eq!(line, 1);
    }

    #[test]
    fn refuses_end_before_start() {
        let (line, message) = refusal("1\n00:00:02,000 --> 00:00:01,000\nx\n");
        assert_eq!(line, 2);
        assert!(message.contains("ends at 00:00:01,000 before it starts at 00:00:02,000"));
    }

    #[test]
    fn refuses_overflowing_and_out_of_range_timestamps() {
        let (line, message) = refusal("1\n99999999:00:00,000 --> 99999999:00:01,000\nx\n");
        assert_eq!(line, 2);
        assert!(message.contains("\"99999999:00:00,000\" is too large"), "{message}");
        let (line, message) = refusal("1\n00:00:75,000 --> 00:00:76,000\nx\n");
        assert_eq!(line, 2);
        assert!(message.contains("out of range"), "{message}");
    }

    #[test]
    fn refuses_too_long_text() {
        let long = "é".repeat(9_000);
        let (line, message) = refusal(&format!("1\n00:00:01,000 --> 00:00:02,000\n{long}\n"));
        assert_eq!(line, 3);
        assert!(message.contains("the limit is 16384"), "{message}");
    }
}
