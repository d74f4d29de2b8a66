//! WebVTT (`.vtt`) cues to utterances.
//!
//! Follows the W3C WebVTT syntax closely enough for real captions and transcripts (YouTube,
//! Zoom, Teams, Whisper) and is lenient where the spec's own parser is: a cue may follow the
//! header or another cue's text without a blank line. Unlike a browser, which silently drops
//! what it cannot read, it refuses a block it cannot understand, so an import is all or
//! nothing.
//!
//! Speakers come from voice tags (`<v Bob>`, `<v.loud Bob>`); a cue with several voices yields
//! one utterance per voice. Cues without a voice tag fall back to the `Speaker: text`
//! convention, which is how Zoom writes its transcripts.

use super::timecode::Timecode;
use super::{
    ParseError, Utterance, clean_speaker, find_tag, first_line_where, is_blank, line_number, next_non_blank,
    normalize_text, quote, read_timestamp, split_speaker, utterance,
};

/// What a timing line looks like, for error messages.
const TIMING_EXAMPLE: &str = r#""00:01:02.500 --> 00:01:04.000""#;

/// Separates a cue's start and end; its presence is what makes a line a timing line.
const ARROW: &str = "-->";

/// Blocks that carry no cue text and are skipped whole.
const NON_CUE_BLOCKS: &[&str] = &["NOTE", "STYLE", "REGION"];

/// Character references WebVTT files use; the rest of HTML's list does not occur in practice.
const ENTITIES: &[(&str, char)] = &[
    ("&amp;", '&'),
    ("&lt;", '<'),
    ("&gt;", '>'),
    ("&nbsp;", '\u{a0}'),
    ("&lrm;", '\u{200e}'),
    ("&rlm;", '\u{200f}'),
    ("&quot;", '"'),
    ("&apos;", '\''),
];

pub(super) fn parse(lines: &[&str]) -> Result<Vec<Utterance>, ParseError> {
    check_signature(lines.first().copied().unwrap_or_default())?;
    let mut index = header_end(lines);
    let mut utterances = Vec::new();
    while let Some(start) = next_non_blank(lines, index) {
        index = parse_block(lines, start, &mut utterances)?;
    }
    Ok(utterances)
}

/// The first line must be `WEBVTT`, optionally followed by a space or tab and anything.
fn check_signature(first: &str) -> Result<(), ParseError> {
    let valid = first
        .strip_prefix("WEBVTT")
        .is_some_and(|rest| rest.is_empty() || rest.starts_with([' ', '\t']));
    if valid {
        return Ok(());
    }
    Err(ParseError::at(
        1,
        format!(
            "a WebVTT file must start with a line \"WEBVTT\", found {}",
            quote(first)
        ),
    ))
}

/// Index just past the header. The header runs to the first blank line, but a timing line
/// there starts the first cue, as in the spec's parser.
fn header_end(lines: &[&str]) -> usize {
    first_line_where(lines, 1, |line| is_blank(line) || line.contains(ARROW))
}

/// Parses the block starting at `start` (a non-blank line) and returns where to continue.
/// Always returns an index past `start`, so the caller's loop terminates.
fn parse_block(lines: &[&str], start: usize, utterances: &mut Vec<Utterance>) -> Result<usize, ParseError> {
    let first = lines.get(start).copied().unwrap_or_default();
    if is_non_cue_block(first) {
        return Ok(first_line_where(lines, start, is_blank));
    }
    let timing_index = if first.contains(ARROW) {
        start
    } else {
        // The first line is a cue identifier; the timing must come right after it.
        let next_index = start.saturating_add(1);
        match lines.get(next_index) {
            Some(next) if !is_blank(next) => next_index,
            _ => return Err(timing_expected(line_number(start), first)),
        }
    };
    let timing_line = lines.get(timing_index).copied().unwrap_or_default();
    let cue_start = parse_timing(line_number(timing_index), timing_line)?;
    let text_start = timing_index.saturating_add(1);
    // A timing line inside the text starts the next cue: the blank line was forgotten.
    let text_end = first_line_where(lines, text_start, |line| is_blank(line) || line.contains(ARROW));
    let payload = lines.get(text_start..text_end).unwrap_or_default().join("\n");
    push_cue(line_number(text_start), cue_start.seconds(), &payload, utterances)?;
    Ok(text_end)
}

fn is_non_cue_block(first: &str) -> bool {
    NON_CUE_BLOCKS.iter().any(|keyword| {
        first
            .strip_prefix(keyword)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with([' ', '\t']))
    })
}

fn timing_expected(line: usize, found: &str) -> ParseError {
    ParseError::at(
        line,
        format!("expected a cue timing like {TIMING_EXAMPLE}, found {}", quote(found)),
    )
}

/// `start --> end [settings]`; returns the start. Cue settings are irrelevant to a transcript.
fn parse_timing(line: usize, text: &str) -> Result<Timecode, ParseError> {
    let malformed = || timing_expected(line, text);
    let (start, rest) = text.split_once(ARROW).ok_or_else(malformed)?;
    let start = start.trim();
    let end = rest.split_whitespace().next().ok_or_else(malformed)?;
    let start_time = read_timestamp(line, start, &['.'], malformed)?;
    let end_time = read_timestamp(line, end, &['.'], malformed)?;
    if end_time < start_time {
        return Err(ParseError::at(
            line,
            format!("this cue ends at {end} before it starts at {start}"),
        ));
    }
    Ok(start_time)
}

/// Turns one cue's text into utterances (one per voice) and appends them.
fn push_cue(
    line: usize,
    offset_seconds: u32,
    payload: &str,
    utterances: &mut Vec<Utterance>,
) -> Result<(), ParseError> {
    for (voice, raw) in voice_segments(payload) {
        let text = normalize_text(&decode_entities(&raw));
        let (speaker, text) = match voice {
            Some(speaker) => (Some(speaker), text.as_str()),
            None => split_speaker(&text),
        };
        utterances.extend(utterance(line, offset_seconds, speaker, text)?);
    }
    Ok(())
}

/// Splits cue text at voice tags into (speaker, text) pieces, dropping all markup tags.
/// Text outside any voice span gets no speaker; empty pieces are left for the caller to skip.
fn voice_segments(payload: &str) -> Vec<(Option<String>, String)> {
    let mut segments = Vec::new();
    let mut speaker = None;
    let mut current = String::new();
    let mut rest = payload;
    while let Some((open, close)) = find_tag(rest) {
        current.push_str(rest.get(..open).unwrap_or_default());
        let inner = rest
            .get(open.saturating_add(1)..close.saturating_sub(1))
            .unwrap_or_default();
        if let Some(annotation) = voice_annotation(inner) {
            segments.push((speaker, std::mem::take(&mut current)));
            speaker = clean_speaker(&decode_entities(annotation));
        } else if inner.eq_ignore_ascii_case("/v") {
            segments.push((speaker.take(), std::mem::take(&mut current)));
        }
        rest = rest.get(close..).unwrap_or_default();
    }
    current.push_str(rest);
    segments.push((speaker, current));
    segments
}

/// For a voice tag's inside (`v Bob`, `v.loud.x Bob Smith`, `v`), the annotation after the
/// first whitespace, which names the speaker (empty if none); `None` for any other tag.
fn voice_annotation(inner: &str) -> Option<&str> {
    let tail = inner.strip_prefix(['v', 'V'])?;
    if !(tail.is_empty() || tail.starts_with('.') || tail.starts_with(char::is_whitespace)) {
        return None;
    }
    Some(
        tail.split_once(char::is_whitespace)
            .map(|(_, name)| name)
            .unwrap_or_default(),
    )
}

/// Decodes the named references in [`ENTITIES`] and numeric ones (`&#39;`, `&#x27;`); anything
/// else starting with `&` is left as written.
fn decode_entities(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('&') {
        out.push_str(rest.get(..at).unwrap_or_default());
        let tail = rest.get(at..).unwrap_or_default();
        let (decoded, used) = decode_reference(tail).unwrap_or(('&', 1));
        out.push(decoded);
        rest = tail.get(used..).unwrap_or_default();
    }
    out.push_str(rest);
    out
}

/// The character a reference at the start of `tail` stands for, and its length in bytes.
fn decode_reference(tail: &str) -> Option<(char, usize)> {
    if let Some((name, decoded)) = ENTITIES.iter().find(|(name, _)| tail.starts_with(name)) {
        return Some((*decoded, name.len()));
    }
    let number = tail.strip_prefix("&#")?;
    let (digits, radix, prefix_len): (&str, u32, usize) = match number.strip_prefix(['x', 'X']) {
        Some(hex) => (hex, 16, 3),
        None => (number, 10, 2),
    };
    let end = digits.find(';')?;
    let digits = digits.get(..end)?;
    // Bounded so the value cannot overflow; `from_u32` then rejects non-characters.
    if digits.is_empty() || digits.len() > 7 || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    let value = u32::from_str_radix(digits, radix).ok()?;
    // `end` indexes the `;`, which is one byte.
    let used = prefix_len.saturating_add(end).saturating_add(1);
    Some((char::from_u32(value)?, used))
}

#[cfg(test)]
mod tests {
    use super::super::test_support::said;
    use super::super::{Format, Utterance, parse as parse_any};

    fn parse(input: &str) -> Result<Vec<Utterance>, super::ParseError> {
        parse_any(Format::Vtt, input)
    }

    fn refusal(input: &str) -> (usize, String) {
        super::super::test_support::refusal(Format::Vtt, input)
    }

    #[test]
    fn simple_cues() {
        let input = "WEBVTT\n\n00:00:01.000 --> 00:00:04.000\nHello there.\n\n\
                     00:00:05.500 --> 00:00:07.000\nGeneral Kenobi.\n";
        assert_eq!(
            parse(input).unwrap(),
            vec![said(1, None, "Hello there."), said(5, None, "General Kenobi.")]
        );
    }

    #[test]
    fn header_text_metadata_and_identifiers() {
        let input = "WEBVTT - Interview\nKind: captions\nLanguage: en\n\n\
                     intro\n00:00:02.000 --> 00:00:03.000 align:start position:10%\nHi\n\n\
                     2\n00:00:03.000 --> 00:00:04.000\nBye\n";
        assert_eq!(parse(input).unwrap(), vec![said(2, None, "Hi"), said(3, None, "Bye")]);
        assert!(parse("WEBVTT\tfoo\n\n00:01.000 --> 00:02.000\nx").is_ok());
    }

    #[test]
    fn bom_and_crlf() {
        let input = "\u{feff}WEBVTT\r\n\r\n1\r\n00:01:02.000 --> 00:01:03.000\r\nline one\r\nline two\r\n";
        assert_eq!(parse(input).unwrap(), vec![said(62, None, "line one line two")]);
    }

    #[test]
    fn minutes_seconds_form_and_truncation() {
        let input = "WEBVTT\n\n01:02.999 --> 01:04.000\nshort form\n";
        assert_eq!(parse(input).unwrap(), vec![said(62, None, "short form")]);
    }

    #[test]
    fn note_style_and_region_blocks_are_skipped() {
        let input = "WEBVTT\n\nSTYLE\n::cue { color: red }\n\nREGION\nid:fred\n\n\
                     NOTE this is\na comment\n\nNOTE\n\n00:00:01.000 --> 00:00:02.000\nreal\n";
        assert_eq!(parse(input).unwrap(), vec![said(1, None, "real")]);
    }

    #[test]
    fn voice_tags_give_speakers() {
        let input = "WEBVTT\n\n00:00:01.000 --> 00:00:02.000\n<v Alice>Hi Bob\nhow are you?</v>\n\n\
                     00:00:03.000 --> 00:00:04.000\n<v.loud.angry   Bob  Smith >Fine!\n";
        assert_eq!(
            parse(input).unwrap(),
            vec![
                said(1, Some("Alice"), "Hi Bob how are you?"),
                said(3, Some("Bob Smith"), "Fine!")
            ]
        );
    }

    #[test]
    fn several_voices_in_one_cue_become_several_utterances() {
        let input = "WEBVTT\n\n00:00:09.000 --> 00:00:12.000\n<v Ann>Yes?</v>\n<v Ben>No.</v>\n";
        assert_eq!(
            parse(input).unwrap(),
            vec![said(9, Some("Ann"), "Yes?"), said(9, Some("Ben"), "No.")]
        );
    }

    #[test]
    fn voice_without_name_and_overlong_name_give_no_speaker() {
        let long = "x".repeat(101);
        let input = format!("WEBVTT\n\n00:01.000 --> 00:02.000\n<v>anon\n\n00:02.000 --> 00:03.000\n<v {long}>long\n");
        assert_eq!(
            parse(&input).unwrap(),
            vec![said(1, None, "anon"), said(2, None, "long")]
        );
    }

    #[test]
    fn tags_stripped_and_entities_decoded() {
        let input = "WEBVTT\n\n00:01.000 --> 00:02.000\n\
                     <i>Tom</i> &amp; <c.yellow>Jerry</c> <00:01.500>say &lt;hi&gt;&nbsp;&lrm;&#39;ok&#x27;\n";
        assert_eq!(
            parse(input).unwrap(),
            vec![said(1, None, "Tom & Jerry say <hi> \u{200e}'ok'")]
        );
        let entity_speaker = "WEBVTT\n\n00:01.000 --> 00:02.000\n<v Tom &amp; Jerry>hi\n";
        assert_eq!(parse(entity_speaker).unwrap(), vec![said(1, Some("Tom & Jerry"), "hi")]);
    }

    #[test]
    fn unknown_entities_are_kept() {
        let input = "WEBVTT\n\n00:01.000 --> 00:02.000\nA&B &copy; &#xD800; &#;\n";
        assert_eq!(parse(input).unwrap(), vec![said(1, None, "A&B &copy; &#xD800; &#;")]);
    }

    #[test]
    fn empty_cues_are_skipped() {
        let input = "WEBVTT\n\n00:01.000 --> 00:02.000\n\n00:02.000 --> 00:03.000\n<i> </i>&nbsp;\n\n\
                     00:03.000 --> 00:04.000\nkept\n";
        assert_eq!(parse(input).unwrap(), vec![said(3, None, "kept")]);
    }

    #[test]
    fn file_of_only_empty_cues_has_no_utterances() {
        let (line, message) = refusal("WEBVTT\n\nNOTE hi\n\n00:01.000 --> 00:02.000\n<b></b>\n");
        assert_eq!(line, 1);
        assert!(message.contains("no utterances found"), "{message}");
        let (line, message) = refusal("WEBVTT\n");
        assert_eq!(line, 1);
        assert!(message.contains("no utterances found"), "{message}");
    }

    #[test]
    fn missing_blank_lines_are_tolerated() {
        let input = "WEBVTT\n00:00:01.000 --> 00:00:02.000\none\n00:00:02.000 --> 00:00:03.000\ntwo\n";
        assert_eq!(parse(input).unwrap(), vec![said(1, None, "one"), said(2, None, "two")]);
    }

    #[test]
    fn speaker_prefix_without_voice_tag_zoom_style() {
        let input = "WEBVTT\n\n1\n00:00:00.000 --> 00:00:05.000\nJane Doe: Welcome everyone.\n";
        assert_eq!(
            parse(input).unwrap(),
            vec![said(0, Some("Jane Doe"), "Welcome everyone.")]
        );
    }

    #[test]
    fn refuses_missing_header() {
        let (line, message) = refusal("00:00:01.000 --> 00:00:02.000\nhi\n");
        assert_eq!(line, 1);
        assert!(message.contains("must start with a line \"WEBVTT\""), "{message}");
        let (line, _) = refusal("WEBVTTX\n\n00:01.000 --> 00:02.000\nhi\n");
        assert_eq!(line, 1);
        let (line, _) = refusal("\n\nWEBVTT\n\n00:01.000 --> 00:02.000\nhi\n");
        assert_eq!(line, 1);
    }

    #[test]
    fn refuses_bad_timing_with_the_brief_example() {
        let input = "WEBVTT\n\n00:00:01.000 --> 00:00:02.000\nfine\n\nid\n00:01 -> 2\ntext\n";
        let error = parse(input).unwrap_err();
        assert_eq!(
            error.to_string(),
            r#"line 7: expected a cue timing like "00:01:02.500 --> 00:01:04.000", found "00:01 -> 2""#
        );
    }

    #[test]
    fn refuses_timing_variants() {
        for (timing, needle) in [
            ("00:00:01.000 -->", "expected a cue timing"),
            ("--> 00:00:01.000", "expected a cue timing"),
            ("00:00:01,000 --> 00:00:02,000", "expected a cue timing"),
            ("00:61:00.000 --> 01:00:00.000", "\"00:61:00.000\" is out of range"),
            ("00:00:00.000 --> 99999999:00:00.000", "too large"),
        ] {
            let (line, message) = refusal(&format!("WEBVTT\n\n{timing}\nhi\n"));
            assert_eq!(line, 3, "{timing}");
            assert!(message.contains(needle), "{timing}: {message}");
        }
    }

    #[test]
    fn refuses_end_before_start() {
        let (line, message) = refusal("WEBVTT\n\n00:00:05.000 --> 00:00:04.999\nhi\n");
        assert_eq!(line, 3);
        assert!(message.contains("ends at 00:00:04.999 before it starts at 00:00:05.000"));
        // Equal is fine: zero-length cues exist.
        assert!(parse("WEBVTT\n\n00:05.000 --> 00:05.000\nhi\n").is_ok());
    }

    #[test]
    fn refuses_stray_text_and_identifier_without_timing() {
        let (line, message) = refusal("WEBVTT\n\n00:01.000 --> 00:02.000\na\n\nstray paragraph\n");
        assert_eq!(line, 6);
        assert!(message.contains("found \"stray paragraph\""), "{message}");
        let (line, message) = refusal("WEBVTT\n\nid\nnot a timing\n");
        assert_eq!(line, 4);
        assert!(message.contains("found \"not a timing\""), "{message}");
    }

    #[test]
    fn refuses_too_long_text_at_its_first_line() {
        let long = "word ".repeat(4_000);
        let input = format!("WEBVTT\n\n00:01.000 --> 00:02.000\nshort\n{long}\n");
        let (line, message) = refusal(&input);
        assert_eq!(line, 4);
        assert!(message.contains("the limit is 16384"), "{message}");
    }
}
