//! JSON Lines (`.jsonl`) transcripts to utterances: one JSON object per non-empty line, as
//! written by Whisper-style tools and by scripts people write themselves.
//!
//! Fields: `start` (required; seconds as a number, or a string `hh:mm:ss[.mmm]` / `mm:ss`),
//! `end` (optional, same forms, not before `start`), `speaker` (optional string) and `text`
//! (required, non-empty string). Unknown fields are ignored so richer exports (word timings,
//! confidences) import as they are. Unlike the other formats, an empty `text` is an error
//! rather than skipped: the field is explicit, so an empty one means the export went wrong.

use serde_json::{Map, Number, Value};

use super::timecode::{self, Timecode, TimecodeError};
use super::{ParseError, Utterance, clean_speaker, is_blank, line_number, quote, strip_tags};

/// How much of an offending JSON value an error message shows.
const SHOWN_VALUE_CHARS: usize = 60;

pub(super) fn parse(lines: &[&str]) -> Result<Vec<Utterance>, ParseError> {
    lines
        .iter()
        .enumerate()
        .filter(|(_, line)| !is_blank(line))
        .map(|(index, line)| parse_line(line_number(index), line))
        .collect()
}

fn parse_line(line: usize, raw: &str) -> Result<Utterance, ParseError> {
    let value: Value = serde_json::from_str(raw).map_err(|error| {
        ParseError::at(
            line,
            format!(
                "this line is not valid JSON ({}): {}",
                json_problem(&error),
                quote(raw.trim())
            ),
        )
    })?;
    let Value::Object(fields) = value else {
        return Err(ParseError::at(
            line,
            format!(
                "expected a JSON object like {{\"start\": 12.5, \"text\": \"...\"}}, found {}",
                show(&value)
            ),
        ));
    };
    let start = time_field(line, &fields, "start")?
        .ok_or_else(|| missing(line, "start", "the offset in seconds, like 12.5"))?;
    if let Some(end) = time_field(line, &fields, "end")?
        && end < start
    {
        return Err(ParseError::at(
            line,
            format!(
                "field \"end\" ({}) is before field \"start\" ({})",
                show_field(&fields, "end"),
                show_field(&fields, "start")
            ),
        ));
    }
    let speaker = speaker_field(line, &fields)?;
    let text = text_field(line, &fields)?;
    super::utterance(line, start.seconds(), speaker, &strip_tags(text))?
        .ok_or_else(|| ParseError::at(line, "field \"text\" is empty; every line needs something said"))
}

/// serde_json's message without its "at line 1 column N" suffix (every line is line 1 to it),
/// with the column kept because it helps find the problem in a long line.
fn json_problem(error: &serde_json::Error) -> String {
    let message = error.to_string();
    let reason = message.split(" at line ").next().unwrap_or_default().to_string();
    format!("{reason} at column {}", error.column())
}

/// A time field, `None` when absent or null. `start`'s absence is handled by the caller.
fn time_field(line: usize, fields: &Map<String, Value>, name: &str) -> Result<Option<Timecode>, ParseError> {
    let value = match fields.get(name) {
        None | Some(Value::Null) => return Ok(None),
        Some(value) => value,
    };
    let wrong = |reason: &str| ParseError::at(line, format!("field \"{name}\" {reason}, found {}", show(value)));
    let parsed = match value {
        Value::Number(number) => seconds(number),
        Value::String(text) => timecode::parse(text.trim(), &['.']),
        _ => Err(TimecodeError::Malformed),
    };
    match parsed {
        Ok(timecode) => Ok(Some(timecode)),
        Err(TimecodeError::Malformed) if is_negative(value) => Err(wrong("must not be negative")),
        Err(TimecodeError::Malformed) => Err(wrong("must be seconds or hh:mm:ss")),
        Err(error) => Err(wrong(error.reason())),
    }
}

/// A JSON number of seconds; integers are taken exactly, others as floating point.
fn seconds(number: &Number) -> Result<Timecode, TimecodeError> {
    if let Some(whole) = number.as_u64() {
        let millis = whole.checked_mul(1000).ok_or(TimecodeError::TooLarge)?;
        return Timecode::from_millis(millis);
    }
    Timecode::from_seconds(number.as_f64().unwrap_or(f64::NAN))
}

fn is_negative(value: &Value) -> bool {
    value.as_f64().is_some_and(|number| number < 0.0)
}

fn speaker_field(line: usize, fields: &Map<String, Value>) -> Result<Option<String>, ParseError> {
    match fields.get("speaker") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(name)) => Ok(clean_speaker(name)),
        Some(other) => Err(ParseError::at(
            line,
            format!("field \"speaker\" must be a string, found {}", show(other)),
        )),
    }
}

fn text_field(line: usize, fields: &Map<String, Value>) -> Result<&str, ParseError> {
    match fields.get("text") {
        Some(Value::String(text)) => Ok(text),
        None => Err(missing(line, "text", "what was said, as a string")),
        Some(other) => Err(ParseError::at(
            line,
            format!("field \"text\" must be a string, found {}", show(other)),
        )),
    }
}

fn missing(line: usize, name: &str, what: &str) -> ParseError {
    ParseError::at(line, format!("missing field \"{name}\" ({what})"))
}

/// A JSON value as written, cut short so a huge value cannot flood the message.
fn show(value: &Value) -> String {
    let json = value.to_string();
    let mut shown: String = json.chars().take(SHOWN_VALUE_CHARS).collect();
    if json.chars().nth(SHOWN_VALUE_CHARS).is_some() {
        shown.push('…');
    }
    shown
}

fn show_field(fields: &Map<String, Value>, name: &str) -> String {
    fields.get(name).map(show).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::super::test_support::said;
    use super::super::{Format, Utterance, parse as parse_any};

    fn parse(input: &str) -> Result<Vec<Utterance>, super::ParseError> {
        parse_any(Format::Jsonl, input)
    }

    fn refusal(input: &str) -> (usize, String) {
        super::super::test_support::refusal(Format::Jsonl, input)
    }

    #[test]
    fn objects_with_and_without_speakers() {
        let input = r#"{"start": 0, "end": 2, "speaker": "Ann", "text": "Hello."}
{"start": 3, "text": "Anyone?"}
"#;
        assert_eq!(
            parse(input).unwrap(),
            vec![said(0, Some("Ann"), "Hello."), said(3, None, "Anyone?")]
        );
    }

    #[test]
    fn fractional_seconds_are_truncated() {
        let input = r#"{"start": 12.999, "end": 13.0, "text": "x"}"#;
        assert_eq!(parse(input).unwrap(), vec![said(12, None, "x")]);
    }

    #[test]
    fn string_timestamps() {
        let input = r#"{"start": "01:02:03", "text": "a"}
{"start": "01:02:03.750", "end": "01:02:04", "text": "b"}
{"start": "02:05", "text": "c"}
{"start": " 00:00:07 ", "text": "d"}"#;
        assert_eq!(
            parse(input).unwrap(),
            vec![
                said(3723, None, "a"),
                said(3723, None, "b"),
                said(125, None, "c"),
                said(7, None, "d")
            ]
        );
    }

    #[test]
    fn unknown_fields_null_optionals_and_blank_lines() {
        let input = "\u{feff}{\"start\": 1, \"text\": \"a\", \"words\": [1, 2], \"confidence\": 0.9}\r\n\r\n   \r\n\
                     {\"start\": 2, \"end\": null, \"speaker\": null, \"text\": \"b\"}\r\n";
        assert_eq!(parse(input).unwrap(), vec![said(1, None, "a"), said(2, None, "b")]);
    }

    #[test]
    fn speaker_and_text_are_cleaned() {
        let long = "n".repeat(101);
        let input = format!(
            "{{\"start\": 0, \"speaker\": \"  Bo  \", \"text\": \" two\\nlines <i>here</i> \"}}\n\
             {{\"start\": 1, \"speaker\": \"   \", \"text\": \"x\"}}\n\
             {{\"start\": 2, \"speaker\": \"{long}\", \"text\": \"y\"}}"
        );
        assert_eq!(
            parse(&input).unwrap(),
            vec![
                said(0, Some("Bo"), "two lines here"),
                said(1, None, "x"),
                said(2, None, "y")
            ]
        );
    }

    #[test]
    fn speaker_prefix_in_text_is_not_interpreted() {
        let input = r#"{"start": 0, "text": "Ann: hi"}"#;
        assert_eq!(parse(input).unwrap(), vec![said(0, None, "Ann: hi")]);
    }

    #[test]
    fn refuses_non_json_line() {
        let (line, message) = refusal("{\"start\": 0, \"text\": \"a\"}\n\n{start: 1}\n");
        assert_eq!(line, 3);
        assert!(
            message.starts_with("this line is not valid JSON (key must be a string at column 2)"),
            "{message}"
        );
        assert!(message.ends_with("\"{start: 1}\""), "{message}");
        let (line, _) = refusal("{\"start\": 0, \"text\": \"a\"} trailing\n");
        assert_eq!(line, 1);
    }

    #[test]
    fn refuses_non_objects() {
        let (line, message) = refusal("[1, 2]\n");
        assert_eq!(line, 1);
        assert!(message.contains("expected a JSON object"), "{message}");
        assert!(message.ends_with("found [1,2]"), "{message}");
        let (_, message) = refusal("\"just text\"\n");
        assert!(message.ends_with("found \"just text\""), "{message}");
    }

    #[test]
    fn refuses_missing_fields() {
        let (line, message) = refusal("{\"start\": 0, \"text\": \"a\"}\n{\"start\": 1}\n");
        assert_eq!(line, 2);
        assert!(message.contains("missing field \"text\""), "{message}");
        let (line, message) = refusal("{\"text\": \"a\"}\n");
        assert_eq!(line, 1);
        assert!(message.contains("missing field \"start\""), "{message}");
        let (_, message) = refusal("{\"start\": null, \"text\": \"a\"}\n");
        assert!(message.contains("missing field \"start\""), "{message}");
    }

    #[test]
    fn refuses_wrong_types_with_the_brief_example() {
        let input =
            "{\"start\": 0, \"text\": \"a\"}\n{\"start\": 1, \"text\": \"b\"}\n{\"start\": true, \"text\": \"c\"}\n";
        let error = parse(input).unwrap_err();
        assert_eq!(
            error.to_string(),
            "line 3: field \"start\" must be seconds or hh:mm:ss, found true"
        );
        for (json, needle) in [
            (
                r#"{"start": "soon", "text": "a"}"#,
                "field \"start\" must be seconds or hh:mm:ss, found \"soon\"",
            ),
            (
                r#"{"start": [1], "text": "a"}"#,
                "field \"start\" must be seconds or hh:mm:ss, found [1]",
            ),
            (
                r#"{"start": 1, "end": "x", "text": "a"}"#,
                "field \"end\" must be seconds or hh:mm:ss, found \"x\"",
            ),
            (
                r#"{"start": 1, "speaker": 5, "text": "a"}"#,
                "field \"speaker\" must be a string, found 5",
            ),
            (r#"{"start": 1, "text": 5}"#, "field \"text\" must be a string, found 5"),
            (
                r#"{"start": 1, "text": null}"#,
                "field \"text\" must be a string, found null",
            ),
        ] {
            let (line, message) = refusal(json);
            assert_eq!(line, 1, "{json}");
            assert!(message.contains(needle), "{json}: {message}");
        }
    }

    #[test]
    fn refuses_negative_and_too_large_times() {
        for (json, needle) in [
            (
                r#"{"start": -1, "text": "a"}"#,
                "field \"start\" must not be negative, found -1",
            ),
            (r#"{"start": -0.5, "text": "a"}"#, "must not be negative, found -0.5"),
            (r#"{"start": 4294967296, "text": "a"}"#, "field \"start\" is too large"),
            (r#"{"start": 1e300, "text": "a"}"#, "is too large"),
            (r#"{"start": 18446744073709551615, "text": "a"}"#, "is too large"),
            (r#"{"start": "99999999:00:00", "text": "a"}"#, "is too large"),
            (
                r#"{"start": "00:99:00", "text": "a"}"#,
                "field \"start\" is out of range",
            ),
        ] {
            let (line, message) = refusal(json);
            assert_eq!(line, 1, "{json}");
            assert!(message.contains(needle), "{json}: {message}");
        }
        assert_eq!(
            parse(r#"{"start": 4294967295.5, "text": "max"}"#).unwrap(),
            vec![said(u32::MAX, None, "max")]
        );
    }

    #[test]
    fn refuses_end_before_start() {
        let (line, message) =
            refusal("{\"start\": 0, \"text\": \"a\"}\n{\"start\": 5.5, \"end\": \"00:00:05\", \"text\": \"b\"}\n");
        assert_eq!(line, 2);
        assert_eq!(message, "field \"end\" (\"00:00:05\") is before field \"start\" (5.5)");
    }

    #[test]
    fn refuses_empty_text() {
        for json in [
            r#"{"start": 1, "text": ""}"#,
            r#"{"start": 1, "text": "  \n "}"#,
            r#"{"start": 1, "text": "<i></i>"}"#,
        ] {
            let (line, message) = refusal(json);
            assert_eq!(line, 1, "{json}");
            assert!(message.contains("field \"text\" is empty"), "{json}: {message}");
        }
    }

    #[test]
    fn refuses_too_long_text() {
        let long = "a".repeat(16_385);
        let input = format!("{{\"start\": 1, \"text\": \"ok\"}}\n{{\"start\": 2, \"text\": \"{long}\"}}\n");
        let (line, message) = refusal(&input);
        assert_eq!(line, 2);
        assert!(message.contains("the limit is 16384"), "{message}");
    }
}
