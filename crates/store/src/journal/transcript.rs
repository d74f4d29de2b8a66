//! Transcript segments: what was said during one stretch of a day, as text (never audio).
//!
//! A segment is `transcripts/<YYYY-MM-DD>/<HHMMSS>.md` (a `-2`, `-3`, ... suffix when two start in
//! the same second). The YAML frontmatter holds the day, start time, duration, facet names, a title and
//! where it came from; the body holds one markdown list item per utterance:
//!
//! ```text
//! - 09:30:05 **Ada:** shall we look at the lease renewal?
//! - 09:30:12 yes, before Friday
//! ```
//!
//! The time is the time of day the utterance began; the speaker part is optional. A line without a
//! speaker whose text itself begins with `**` is written with a backslash first (`- 09:31:00
//! \**bold** move`, as markdown escapes it), so that reading the file again never takes the text for
//! a speaker: what is read, written again, reads back the same.

use serde::{Deserialize, Serialize};

use super::day::{self, Day};
use super::frontmatter;

/// The frontmatter of a segment file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SegmentHead {
    pub day: String,
    /// Time of day the segment starts, `HH:MM:SS`.
    pub start: String,
    pub duration_seconds: u32,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub facets: Vec<String>,
    #[serde(default)]
    pub title: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

/// One utterance within a segment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    /// Seconds after midnight of the segment's day (may run past 24 hours for a long night).
    pub time: u32,
    pub speaker: Option<String>,
    pub text: String,
}

impl Line {
    /// How the line reads to a person or an agent: `09:30:05 Ada: text`.
    pub fn display(&self) -> String {
        match &self.speaker {
            Some(speaker) => format!("{} {}: {}", day::format_time(self.time), speaker, self.text),
            None => format!("{} {}", day::format_time(self.time), self.text),
        }
    }
}

/// A whole segment, parsed and checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Segment {
    pub head: SegmentHead,
    pub day: Day,
    pub start: u32,
    pub lines: Vec<Line>,
}

impl Segment {
    /// Parses a segment file; errors name the line of the file.
    pub fn parse(text: &str) -> Result<Segment, String> {
        let (head, body): (SegmentHead, _) = frontmatter::parse(text).map_err(|e| e.to_string())?;
        let day = Day::parse(&head.day).map_err(|e| format!("day: {e}"))?;
        let start = day::parse_time(&head.start).map_err(|e| format!("start: {e}"))?;
        for facet in &head.facets {
            super::facet::validate_name(facet).map_err(|e| e.to_string())?;
        }
        let body_first_line = text.lines().count() - body.lines().count() + 1;
        let mut lines = Vec::new();
        for (index, raw) in body.lines().enumerate() {
            if raw.trim().is_empty() {
                continue;
            }
            let line = parse_line(raw).ok_or_else(|| {
                format!(
                    "line {}: expected \"- HH:MM:SS **Speaker:** text\" or \"- HH:MM:SS text\", found \"{}\"",
                    body_first_line + index,
                    raw.chars().take(60).collect::<String>()
                )
            })?;
            lines.push(line);
        }
        Ok(Segment {
            head,
            day,
            start,
            lines,
        })
    }

    /// Renders the segment file.
    pub fn render(head: &SegmentHead, lines: &[Line]) -> String {
        let mut body = String::new();
        for line in lines {
            body.push_str("- ");
            body.push_str(&day::format_time(line.time));
            body.push(' ');
            match &line.speaker {
                Some(speaker) => {
                    body.push_str("**");
                    body.push_str(speaker);
                    body.push_str(":** ");
                }
                // Text that would read as a speaker, or as this escape, is escaped.
                None if needs_escape(&line.text) => body.push('\\'),
                None => {}
            }
            body.push_str(&line.text);
            body.push('\n');
        }
        frontmatter::render(head, &body)
    }

    /// The title to show: the stored one, else the day and start time.
    pub fn title(&self) -> String {
        if self.head.title.is_empty() {
            format!("Transcript {} {}", self.day, day::format_time(self.start))
        } else {
            self.head.title.clone()
        }
    }

    /// The text that search indexes: every utterance with its speaker.
    pub fn searchable_text(&self) -> String {
        let mut text = String::new();
        for line in &self.lines {
            if let Some(speaker) = &line.speaker {
                text.push_str(speaker);
                text.push_str(": ");
            }
            text.push_str(&line.text);
            text.push('\n');
        }
        text
    }
}

/// Whether text without a speaker must be written with a backslash first: when it begins, after
/// any backslashes, with `**`.
fn needs_escape(text: &str) -> bool {
    text.trim_start_matches('\\').starts_with("**")
}

fn parse_line(raw: &str) -> Option<Line> {
    let rest = raw.trim_end().strip_prefix("- ")?;
    let (time, rest) = rest.split_once(' ').unwrap_or((rest, ""));
    let time = parse_clock(time)?;
    // Spaces after the time are not part of what was said (and must not hide a speaker).
    let rest = rest.trim();
    if let Some(escaped) = rest.strip_prefix('\\').filter(|text| needs_escape(text)) {
        return Some(Line {
            time,
            speaker: None,
            text: escaped.to_string(),
        });
    }
    if let Some((speaker, text)) = rest.strip_prefix("**").and_then(|after| after.split_once(":**"))
        && !speaker.trim().is_empty()
    {
        return Some(Line {
            time,
            speaker: Some(speaker.trim().to_string()),
            text: text.trim().to_string(),
        });
    }
    // Anything else, `**bold**` text included, is text without a speaker.
    Some(Line {
        time,
        speaker: None,
        text: rest.to_string(),
    })
}

/// `HH:MM:SS` where hours may exceed 23 (a segment that runs past midnight).
fn parse_clock(text: &str) -> Option<u32> {
    let mut parts = text.split(':');
    let (h, m, s) = (parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some() || m.len() != 2 || s.len() != 2 || h.is_empty() || h.len() > 3 {
        return None;
    }
    let all_digits = |p: &str| p.bytes().all(|b| b.is_ascii_digit());
    if !all_digits(h) || !all_digits(m) || !all_digits(s) {
        return None;
    }
    let (h, m, s): (u32, u32, u32) = (h.parse().ok()?, m.parse().ok()?, s.parse().ok()?);
    (m < 60 && s < 60).then_some(h * 3600 + m * 60 + s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn head() -> SegmentHead {
        SegmentHead {
            day: "2026-11-20".into(),
            start: "09:30:00".into(),
            duration_seconds: 125,
            facets: vec!["work".into()],
            title: "Standup".into(),
            source: Some("standup.vtt".into()),
        }
    }

    #[test]
    fn text_that_looks_like_a_speaker_round_trips() {
        let head = SegmentHead {
            day: "2026-12-01".into(),
            start: "09:00:00".into(),
            duration_seconds: 0,
            facets: vec![],
            title: "t".into(),
            source: None,
        };
        let texts = [
            "**Ada:** hi",
            "**bold** move",
            "**",
            "\\**x",
            "\\\\**y",
            "\\plain",
            "a **b:** c",
        ];
        let lines: Vec<Line> = texts
            .iter()
            .enumerate()
            .map(|(n, text)| Line {
                time: 32_400 + n as u32,
                speaker: None,
                text: text.to_string(),
            })
            .chain(std::iter::once(Line {
                time: 32_500,
                speaker: Some("Ada".into()),
                text: "**not** a speaker".into(),
            }))
            .collect();
        let text = Segment::render(&head, &lines);
        assert!(text.contains("- 09:00:00 \\**Ada:** hi\n"), "{text}");
        let back = Segment::parse(&text).unwrap();
        assert_eq!(back.lines, lines, "{text}");
        // Hand-written: spaces after the time do not hide a speaker, and `**text` is text.
        let hand = "---\nday: 2026-12-01\nstart: '09:00:00'\nduration_seconds: 0\nfacets: []\ntitle: t\n---\n- 09:00:00  **Ada:** hi\n- 09:00:01 **hi\n";
        let read = Segment::parse(hand).unwrap();
        assert_eq!(read.lines[0].speaker.as_deref(), Some("Ada"));
        assert_eq!(
            (read.lines[1].speaker.as_deref(), read.lines[1].text.as_str()),
            (None, "**hi")
        );
        assert_eq!(
            Segment::parse(&Segment::render(&read.head, &read.lines)).unwrap().lines,
            read.lines
        );
    }

    #[test]
    fn round_trips() {
        let lines = vec![
            Line {
                time: 34_205,
                speaker: Some("Ada Lovelace".into()),
                text: "lease renewal: before Friday?".into(),
            },
            Line {
                time: 34_212,
                speaker: None,
                text: "yes".into(),
            },
        ];
        let text = Segment::render(&head(), &lines);
        assert!(text.contains("- 09:30:05 **Ada Lovelace:** lease renewal: before Friday?\n"));
        let segment = Segment::parse(&text).unwrap();
        assert_eq!(segment.lines, lines);
        assert_eq!(segment.start, 34_200);
        assert_eq!(segment.title(), "Standup");
        assert_eq!(
            segment.lines[0].display(),
            "09:30:05 Ada Lovelace: lease renewal: before Friday?"
        );
    }

    #[test]
    fn names_the_bad_line() {
        let text = Segment::render(&head(), &[]) + "- 09:30:05 fine\nnot a line\n";
        let err = Segment::parse(&text).unwrap_err();
        assert!(err.starts_with("line 11:"), "{err}");
        let text = Segment::render(
            &SegmentHead {
                day: "2026-02-30".into(),
                ..head()
            },
            &[],
        );
        assert!(Segment::parse(&text).unwrap_err().starts_with("day:"));
    }
}
