//! Transcript import: turns the text of a transcript file (WebVTT, SubRip, JSON Lines or plain
//! text) into [`Utterance`]s, each with an offset in whole seconds, an optional speaker and one
//! line of text.
//!
//! This module only parses text. It deliberately does no I/O (the caller reads the file and caps
//! its size), touches no storage, and does not sort, merge or deduplicate: utterances come back
//! in file order, as written. Input it cannot make sense of is refused with a [`ParseError`]
//! naming the 1-based line and the problem in words a person can act on, rather than being
//! silently skipped, so a half-imported transcript never looks like a complete one.
//!
//! Conventions shared by all formats live here: line splitting (BOM and CRLF tolerant), markup
//! stripping, text normalisation, speaker cleaning and the `Speaker: text` heuristic.

mod jsonl;
mod srt;
mod text;
mod timecode;
mod vtt;

use std::path::Path;

use timecode::{Timecode, TimecodeError};

/// The transcript formats we can read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Vtt,
    Srt,
    Jsonl,
    Text,
}

impl Format {
    /// By file extension, case-insensitive: .vtt, .srt, .jsonl, .txt. None for anything else.
    pub fn from_path(path: &Path) -> Option<Format> {
        let extension = path.extension()?.to_str()?.to_ascii_lowercase();
        match extension.as_str() {
            "vtt" => Some(Format::Vtt),
            "srt" => Some(Format::Srt),
            "jsonl" => Some(Format::Jsonl),
            "txt" => Some(Format::Text),
            _ => None,
        }
    }

    /// The name people know the format by, for messages.
    pub fn name(self) -> &'static str {
        match self {
            Format::Vtt => "WebVTT",
            Format::Srt => "SubRip",
            Format::Jsonl => "JSON Lines",
            Format::Text => "plain text",
        }
    }
}

/// One thing said, at a point in the recording.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Utterance {
    /// Whole seconds from the start of the file (timestamps are truncated to seconds).
    pub offset_seconds: u32,
    /// Who said it, when the file says so: trimmed, 1-100 characters.
    pub speaker: Option<String>,
    /// One line: inner whitespace (newlines included) collapsed to single spaces, markup
    /// removed, trimmed, never empty.
    pub text: String,
}

/// Why a file was refused, and where.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {message}")]
pub struct ParseError {
    /// 1-based line of the input where the problem is.
    pub line: usize,
    /// What is wrong, in plain words.
    pub message: String,
}

impl ParseError {
    fn at(line: usize, message: impl Into<String>) -> Self {
        Self {
            line,
            message: message.into(),
        }
    }
}

/// Parses a whole transcript. Never panics; any input either yields at least one utterance
/// or a [`ParseError`].
pub fn parse(format: Format, input: &str) -> Result<Vec<Utterance>, ParseError> {
    // A BOM is an encoding marker, not content; every format accepts one.
    let input = input.strip_prefix('\u{feff}').unwrap_or(input);
    if input.trim().is_empty() {
        return Err(ParseError::at(1, "no utterances found in this file: it is empty"));
    }
    let lines = split_lines(input);
    let utterances = match format {
        Format::Vtt => vtt::parse(&lines)?,
        Format::Srt => srt::parse(&lines)?,
        Format::Jsonl => jsonl::parse(&lines)?,
        Format::Text => text::parse(&lines)?,
    };
    if utterances.is_empty() {
        return Err(ParseError::at(1, "no utterances found in this file"));
    }
    Ok(utterances)
}

/// Longest utterance text accepted, in bytes after normalisation. Anything longer is almost
/// certainly a file in the wrong format (a whole document read as one cue).
const MAX_TEXT_BYTES: usize = 16_384;

/// Longest speaker name kept; longer "names" are dropped rather than refused.
const MAX_SPEAKER_CHARS: usize = 100;

/// How much offending text an error message quotes.
const QUOTE_CHARS: usize = 60;

/// Lines of the input with `\n` or `\r\n` endings removed; index `i` is line `i + 1`.
fn split_lines(input: &str) -> Vec<&str> {
    input
        .split('\n')
        .map(|line| line.strip_suffix('\r').unwrap_or(line))
        .collect()
}

/// 1-based line number of a line index.
fn line_number(index: usize) -> usize {
    index.saturating_add(1)
}

/// Whitespace-only lines separate blocks just like empty ones; people cannot see the difference.
fn is_blank(line: &str) -> bool {
    line.trim().is_empty()
}

/// Index of the first non-blank line at or after `from`.
fn next_non_blank(lines: &[&str], from: usize) -> Option<usize> {
    (from..lines.len()).find(|&i| lines.get(i).is_some_and(|line| !is_blank(line)))
}

/// Index of the first line at or after `from` for which `stop` holds, or the end of input.
fn first_line_where(lines: &[&str], from: usize, stop: impl Fn(&str) -> bool) -> usize {
    (from..lines.len())
        .find(|&i| lines.get(i).is_some_and(|line| stop(line)))
        .unwrap_or(lines.len())
}

/// Reads one timestamp of a timing line. A malformed one is described by the caller's
/// `malformed` (which knows what the whole line should look like); an impossible value gets
/// its own message quoting just the timestamp.
fn read_timestamp(
    line: usize,
    timestamp: &str,
    decimal_separators: &[char],
    malformed: impl FnOnce() -> ParseError,
) -> Result<Timecode, ParseError> {
    match timecode::parse(timestamp, decimal_separators) {
        Ok(timecode) => Ok(timecode),
        Err(TimecodeError::Malformed) => Err(malformed()),
        Err(error) => Err(ParseError::at(
            line,
            format!("timestamp {} {}", quote(timestamp), error.reason()),
        )),
    }
}

/// `s` in double quotes with escapes, cut to [`QUOTE_CHARS`] characters so a huge line cannot
/// flood an error message.
fn quote(s: &str) -> String {
    let mut shown: String = s.chars().take(QUOTE_CHARS).collect();
    if s.chars().nth(QUOTE_CHARS).is_some() {
        shown.push('…');
    }
    format!("{shown:?}")
}

/// Builds an utterance from already de-marked-up text, or `None` if nothing is left of it.
/// `line` is where the text starts, for the too-long error.
fn utterance(
    line: usize,
    offset_seconds: u32,
    speaker: Option<String>,
    text: &str,
) -> Result<Option<Utterance>, ParseError> {
    let text = normalize_text(text);
    if text.is_empty() {
        return Ok(None);
    }
    if text.len() > MAX_TEXT_BYTES {
        return Err(ParseError::at(
            line,
            format!(
                "this utterance is {} bytes long; the limit is {MAX_TEXT_BYTES} \
                 (is the file in the right format?)",
                text.len()
            ),
        ));
    }
    Ok(Some(Utterance {
        offset_seconds,
        speaker,
        text,
    }))
}

/// Collapses every run of whitespace (newlines and no-break spaces included) into one space
/// and trims, so an utterance is always a single tidy line.
fn normalize_text(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A speaker name as given by the file, or `None` if it is empty or implausibly long.
fn clean_speaker(name: &str) -> Option<String> {
    let name = normalize_text(name);
    let chars = name.chars().count();
    (1..=MAX_SPEAKER_CHARS).contains(&chars).then_some(name)
}

/// Longest name the `Speaker: text` heuristic accepts, in characters.
const MAX_PREFIX_SPEAKER_CHARS: usize = 40;

/// Most words the `Speaker: text` heuristic accepts in a name.
const MAX_PREFIX_SPEAKER_WORDS: usize = 4;

/// Splits `Speaker: text` (SubRip, plain text, and WebVTT cues without a voice tag).
///
/// Text has no speaker field, so this is a heuristic tuned to refuse ordinary prose: the part
/// before the first colon must be 1-40 characters, at most 4 words, start with a letter that
/// is not lower-case, and contain none of `. ! ? , ; "` (so "Dr. Smith: hi", "Well, then: go"
/// and "so: yes" stay text); the colon must be followed by whitespace (so "12:30" and
/// "https://" are not names) and by some text.
fn split_speaker(text: &str) -> (Option<String>, &str) {
    let Some((name, rest)) = text.split_once(':') else {
        return (None, text);
    };
    if !rest.starts_with(char::is_whitespace) || rest.trim().is_empty() {
        return (None, text);
    }
    match looks_like_speaker(name.trim()).then(|| clean_speaker(name)).flatten() {
        Some(speaker) => (Some(speaker), rest.trim_start()),
        None => (None, text),
    }
}

fn looks_like_speaker(name: &str) -> bool {
    let starts_well = name
        .chars()
        .next()
        .is_some_and(|c| c.is_alphabetic() && !c.is_lowercase());
    starts_well
        && name.chars().count() <= MAX_PREFIX_SPEAKER_CHARS
        && !name.contains(['.', '!', '?', ',', ';', '"'])
        && name.split_whitespace().count() <= MAX_PREFIX_SPEAKER_WORDS
}

/// Longest tag recognised, in bytes; keeps a stray `<` from swallowing a paragraph.
const MAX_TAG_BYTES: usize = 200;

/// Tag names stripped as markup (WebVTT's, plus the HTML ones SubRip files use). Anything else
/// in angle brackets, like `<Alice>` in a chat log or `a <b` in maths, is kept as text.
const KNOWN_TAGS: &[&str] = &[
    "b", "br", "c", "em", "font", "i", "lang", "p", "rt", "ruby", "s", "span", "strong", "sub", "sup", "u", "v",
];

/// Removes markup tags, keeping the text between them.
fn strip_tags(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some((start, end)) = find_tag(rest) {
        out.push_str(rest.get(..start).unwrap_or_default());
        rest = rest.get(end..).unwrap_or_default();
    }
    out.push_str(rest);
    out
}

/// Byte range (from `<` to just past `>`) of the first markup tag in `text`.
fn find_tag(text: &str) -> Option<(usize, usize)> {
    let mut from = 0;
    while let Some(found) = text.get(from..)?.find('<') {
        let open = from.saturating_add(found);
        // `<` and `>` are one byte each, so these offsets are character boundaries.
        let inner_start = open.saturating_add(1);
        if let Some(inner_len) = tag_inner_len(text.get(inner_start..)?) {
            return Some((open, inner_start.saturating_add(inner_len).saturating_add(1)));
        }
        from = inner_start;
    }
    None
}

/// Given the text just after a `<`, the byte length of the tag's inside if this is a tag.
fn tag_inner_len(after_open: &str) -> Option<usize> {
    let stop = after_open.find(['<', '>', '\n'])?;
    let inner = after_open.get(..stop)?;
    let closed = after_open.get(stop..)?.starts_with('>');
    (closed && stop <= MAX_TAG_BYTES && is_tag_inner(inner)).then_some(stop)
}

/// `i`, `/i`, `c.yellow`, `v.loud Bob`, `font color="red"`, `br/`, or a WebVTT timestamp.
fn is_tag_inner(inner: &str) -> bool {
    let body = inner.strip_prefix('/').unwrap_or(inner);
    let name_len = body.find(|c: char| !c.is_ascii_alphanumeric()).unwrap_or(body.len());
    let Some((name, tail)) = body.split_at_checked(name_len) else {
        return false;
    };
    if KNOWN_TAGS.iter().any(|tag| tag.eq_ignore_ascii_case(name)) {
        return tail.is_empty() || tail.starts_with(['.', '/']) || tail.starts_with(char::is_whitespace);
    }
    // WebVTT karaoke timestamps like `<00:01.500>` carry no text.
    inner.contains(':')
        && inner.starts_with(|c: char| c.is_ascii_digit())
        && inner.chars().all(|c| c.is_ascii_digit() || c == ':' || c == '.')
}

/// Helpers the parsers' tests share.
#[cfg(test)]
pub(crate) mod test_support {
    use super::{Format, Utterance, parse};

    /// An utterance as a parser should yield it.
    pub fn said(offset_seconds: u32, speaker: Option<&str>, text: &str) -> Utterance {
        Utterance {
            offset_seconds,
            speaker: speaker.map(str::to_string),
            text: text.to_string(),
        }
    }

    /// The line and message of a refusal (panics if the input parses).
    pub fn refusal(format: Format, input: &str) -> (usize, String) {
        let error = parse(format, input).unwrap_err();
        (error.line, error.message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_from_path_by_extension_case_insensitive() {
        assert_eq!(Format::from_path(Path::new("a/b.vtt")), Some(Format::Vtt));
        assert_eq!(Format::from_path(Path::new("B.VTT")), Some(Format::Vtt));
        assert_eq!(Format::from_path(Path::new("x.Srt")), Some(Format::Srt));
        assert_eq!(Format::from_path(Path::new("x.jsonl")), Some(Format::Jsonl));
        assert_eq!(Format::from_path(Path::new("notes.TXT")), Some(Format::Text));
        assert_eq!(Format::from_path(Path::new("x.json")), None);
        assert_eq!(Format::from_path(Path::new("x.md")), None);
        assert_eq!(Format::from_path(Path::new("vtt")), None);
        assert_eq!(Format::from_path(Path::new("")), None);
    }

    #[test]
    fn format_names() {
        assert_eq!(Format::Vtt.name(), "WebVTT");
        assert_eq!(Format::Srt.name(), "SubRip");
        assert_eq!(Format::Jsonl.name(), "JSON Lines");
        assert_eq!(Format::Text.name(), "plain text");
    }

    #[test]
    fn error_display_names_the_line() {
        let error = ParseError::at(7, "bad timing");
        assert_eq!(error.to_string(), "line 7: bad timing");
    }

    #[test]
    fn empty_files_are_refused_in_every_format() {
        for format in [Format::Vtt, Format::Srt, Format::Jsonl, Format::Text] {
            for input in ["", "\u{feff}", " \r\n\n\t\n"] {
                let error = parse(format, input).unwrap_err();
                assert_eq!(error.line, 1, "{format:?} {input:?}");
                assert!(error.message.contains("no utterances found"), "{error}");
            }
        }
    }

    #[test]
    fn quote_truncates_long_and_multibyte_text() {
        assert_eq!(quote("00:01 -> 2"), "\"00:01 -> 2\"");
        let long = "é".repeat(100);
        let quoted = quote(&long);
        assert_eq!(quoted.chars().filter(|&c| c == 'é').count(), QUOTE_CHARS);
        assert!(quoted.ends_with("…\""));
        assert_eq!(quote("say \"hi\""), "\"say \\\"hi\\\"\"");
    }

    #[test]
    fn normalize_collapses_whitespace() {
        assert_eq!(normalize_text("  a\n b\r\n\tc  "), "a b c");
        assert_eq!(normalize_text("a\u{a0}b"), "a b");
        assert_eq!(normalize_text(" \n "), "");
    }

    #[test]
    fn strip_tags_removes_known_markup_only() {
        assert_eq!(strip_tags("<i>Hi</i> <b>there</b>"), "Hi there");
        assert_eq!(strip_tags("<font color=\"red\">red</font>"), "red");
        assert_eq!(strip_tags("<c.yellow.bg>x</c><00:00:01.000>y"), "xy");
        assert_eq!(strip_tags("<v.loud Bob>hey</v>"), "hey");
        assert_eq!(strip_tags("line<br/>break"), "linebreak");
        assert_eq!(strip_tags("I <3 you"), "I <3 you");
        assert_eq!(strip_tags("if a < b and c > d"), "if a < b and c > d");
        assert_eq!(strip_tags("<Alice> hello"), "<Alice> hello");
        assert_eq!(strip_tags("<<i>>"), "<>");
        assert_eq!(strip_tags("<i"), "<i");
        assert_eq!(strip_tags("é<i>é</i>é"), "ééé");
    }

    #[test]
    fn speaker_prefix_accepted() {
        assert_eq!(
            split_speaker("John Smith: hello there"),
            (Some("John Smith".to_string()), "hello there")
        );
        assert_eq!(split_speaker("SPEAKER 1: yes"), (Some("SPEAKER 1".to_string()), "yes"));
        assert_eq!(split_speaker("Zoë: ok: fine"), (Some("Zoë".to_string()), "ok: fine"));
        assert_eq!(split_speaker("李雷: 你好"), (Some("李雷".to_string()), "你好"));
    }

    #[test]
    fn speaker_prefix_refused_for_prose() {
        for text in [
            "Dr. Smith: hello",
            "Well, then: go",
            "Why?: because",
            "so here it is: yes",
            "One two three four five: x",
            "12:30 we met",
            "See https://example.com",
            "Note:",
            "Note:   ",
            "Time:12",
            "- John: hi",
            "[Music]: la",
            ": nothing",
            "A very long speaker name that goes on and on: x",
        ] {
            assert_eq!(split_speaker(text), (None, text), "{text:?}");
        }
    }

    #[test]
    fn speakers_are_trimmed_and_bounded() {
        assert_eq!(clean_speaker("  Ann  "), Some("Ann".to_string()));
        assert_eq!(clean_speaker("   "), None);
        assert_eq!(clean_speaker(&"x".repeat(100)), Some("x".repeat(100)));
        assert_eq!(clean_speaker(&"x".repeat(101)), None);
        assert_eq!(clean_speaker(&"é".repeat(100)), Some("é".repeat(100)));
    }

    #[test]
    fn utterance_text_limit() {
        let ok = "a".repeat(MAX_TEXT_BYTES);
        assert!(utterance(3, 0, None, &ok).unwrap().is_some());
        let error = utterance(3, 0, None, &format!("{ok}b")).unwrap_err();
        assert_eq!(error.line, 3);
        assert!(error.message.contains("the limit is 16384"), "{error}");
        assert_eq!(utterance(3, 0, None, " \n ").unwrap(), None);
    }

    /// Hand-made nasty inputs: none may panic, and every refusal must point at a real line.
    const NASTY: &[&str] = &[
        "-->",
        " --> ",
        "WEBVTT\n\n-->",
        "WEBVTT\n\n-->\n",
        "WEBVTT\n\nid\n-->",
        "WEBVTT\n-->\n",
        "WEBVTT\n\n00:00.000 -->",
        "WEBVTT\n\n00:00.000 --> é",
        "WEBVTT\n\né --> 00:00.000",
        "WEBVTT\n\n00:00.000 --> 00:01.000\n<",
        "WEBVTT\n\n00:00.000 --> 00:01.000\n<v",
        "WEBVTT\n\n00:00.000 --> 00:01.000\n<v >",
        "WEBVTT\n\n00:00.000 --> 00:01.000\n<v.>x</v",
        "WEBVTT\n\n00:00.000 --> 00:01.000\n&",
        "WEBVTT\n\n00:00.000 --> 00:01.000\n&#",
        "WEBVTT\n\n00:00.000 --> 00:01.000\n&#x;&#xFFFFFFFFFF;&#1114112;&#55296;",
        "WEBVTT\n\nNOTE",
        "\u{feff}",
        "\u{feff}\u{feff}",
        "\r",
        "\r\n\r\n",
        "\n\n\n",
        "1",
        "1\n",
        "1\n-->",
        "1\n00:00:00,000 --> 00:00:01,000",
        "1\n00:00:00,000 --> 00:00:01,000\n{\\",
        "1\n00:00:00,000 --> 00:00:01,000\n{\\an8",
        "1\n00:00:00,000 --> 00:00:01,000\né:",
        "1\n\n2",
        "{}",
        "{\"start\":",
        "{\"start\": 1e400, \"text\": \"x\"}",
        "{\"start\": -0.0, \"text\": \"x\"}",
        "{\"start\": 18446744073709551615, \"text\": \"x\"}",
        "{\"start\": -9223372036854775808, \"text\": \"x\"}",
        "{\"start\": \"é\", \"text\": \"é\"}",
        "[",
        "[]",
        "[:]",
        "[::]",
        "[é:é]",
        ":",
        "::",
        "00:00:00",
        "99999999999999999999999:00:00 x",
        "é",
        "é:",
        "é: é",
        "<",
        ">",
        "<v",
        "&amp",
    ];

    fn assert_never_panics(input: &str) {
        let line_count = split_lines(input.strip_prefix('\u{feff}').unwrap_or(input)).len();
        for format in [Format::Vtt, Format::Srt, Format::Jsonl, Format::Text] {
            let result = std::panic::catch_unwind(|| parse(format, input));
            let Ok(result) = result else {
                panic!("{format:?} panicked on {input:?}");
            };
            if let Err(error) = result {
                assert!(
                    (1..=line_count).contains(&error.line),
                    "{format:?} on {input:?}: {error} (file has {line_count} lines)"
                );
            } else if let Ok(utterances) = result {
                for u in utterances {
                    assert!(!u.text.is_empty());
                    assert_eq!(u.text, u.text.trim());
                    assert!(!u.text.contains('\n'));
                }
            }
        }
    }

    #[test]
    fn nasty_inputs_never_panic() {
        for input in NASTY {
            assert_never_panics(input);
        }
        let long = "é".repeat(20_000);
        assert_never_panics(&long);
        assert_never_panics(&format!("WEBVTT\n\n00:00.000 --> 00:01.000\n{long}"));
        assert_never_panics(&format!("1\n00:00:00,000 --> 00:00:01,000\n<i>{long}"));
        assert_never_panics(&format!("{{\"start\": 0, \"text\": \"{long}\"}}"));
        assert_never_panics(&format!("[00:00:01] {long}"));
        assert_never_panics(&format!("<{long}"));
        assert_never_panics(&"<i".repeat(5_000));
        assert_never_panics(&"-->\n".repeat(1_000));
    }

    #[test]
    fn multibyte_text_cut_at_every_byte_never_panics() {
        let samples = [
            "WEBVTT\n\nné\n00:00.000 --> 00:01.000 align:é\n<v Zoë>café &amp; crème</v>\n",
            "1\n00:00:00,000 --> 00:00:01,000\n{\\an8}<i>Zoë: déjà vu</i>\n",
            "{\"start\": \"00:01\", \"speaker\": \"Zoë\", \"text\": \"déjà\"}\n",
            "[00:01] Zoë: déjà vu\n00:00:02 ünïcödé\n",
        ];
        for sample in samples {
            // Every char-boundary prefix and suffix, so cuts land right next to multi-byte chars.
            for (at, _) in sample.char_indices() {
                assert_never_panics(sample.get(..at).unwrap_or_default());
                assert_never_panics(sample.get(at..).unwrap_or_default());
            }
        }
    }

    #[test]
    fn pseudo_random_garbage_never_panics() {
        const PIECES: &[&str] = &[
            "WEBVTT", "NOTE", "-->", " --> ", ":", "0", "9", "59", "99", ".", ",", "\n", "\r\n", " ", "é", "€", "😀",
            "<", ">", "<v ", "</v>", "<i>", "&amp;", "&", "{\\an8}", "{", "}", "\"", "[", "]", "start", "text", "1",
            "\u{feff}", "-", "Bob: ",
        ];
        // A fixed linear congruential generator keeps the test deterministic without a crate.
        let mut state: u64 = 0x2545_f491_4f6c_dd1d;
        for _ in 0..3_000 {
            let mut input = String::new();
            state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            let pieces = (state >> 33) % 40;
            for _ in 0..pieces {
                state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                let index = usize::try_from((state >> 33) % PIECES.len() as u64).unwrap_or(0);
                input.push_str(PIECES[index]);
            }
            assert_never_panics(&input);
        }
    }
}
