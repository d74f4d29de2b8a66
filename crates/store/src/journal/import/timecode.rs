//! Clock-style timestamps (`hh:mm:ss.mmm`, `mm:ss`) shared by every transcript format.
//!
//! One grammar serves all parsers so that "what counts as a timestamp" cannot drift between
//! formats; callers only choose which decimal separators they accept (SubRip writes `,`).
//!
//! Grammar: `[hours ":"] minutes ":" seconds [separator fraction]`, all ASCII digits.
//! Hours may have any number of digits; with hours present, minutes are 1-2 digits below 60;
//! without hours, minutes may be any number (`75:30` is 75 minutes); seconds are 1-2 digits
//! below 60; the fraction is 1-9 digits of which the first three (milliseconds) are kept.

/// Largest whole-second offset an utterance can carry (`Utterance::offset_seconds` is a `u32`).
const MAX_SECONDS: u64 = u32::MAX as u64;

/// Digits kept after the decimal separator are milliseconds; longer fractions are accepted
/// (some tools write microseconds) but only this many digits count.
const MAX_FRACTION_DIGITS: usize = 9;

/// A point in the file. Kept in milliseconds so a cue's end can be compared with its start
/// precisely, even though utterances only record whole seconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct Timecode {
    millis: u64,
}

/// Why a string or number is not a usable timestamp. Callers add the context (which line,
/// which field, what was expected) because only they know it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum TimecodeError {
    /// Not shaped like a timestamp at all.
    Malformed,
    /// Shaped like one, but minutes or seconds are 60 or more.
    OutOfRange,
    /// Later than a `u32` number of seconds can express.
    TooLarge,
}

impl TimecodeError {
    /// A phrase that completes "timestamp X ..." or "field \"start\" ...".
    pub(super) fn reason(self) -> &'static str {
        match self {
            TimecodeError::Malformed => "is not a timestamp like 00:01:02.500",
            TimecodeError::OutOfRange => "is out of range (minutes and seconds must be below 60)",
            TimecodeError::TooLarge => "is too large (offsets must be under 4294967296 seconds, about 136 years)",
        }
    }
}

impl Timecode {
    /// Refuses anything whose whole seconds would not fit a `u32`.
    pub(super) fn from_millis(millis: u64) -> Result<Self, TimecodeError> {
        if millis / 1000 > MAX_SECONDS {
            return Err(TimecodeError::TooLarge);
        }
        Ok(Self { millis })
    }

    /// From a JSON-style number of seconds. Fractions below a millisecond are truncated.
    pub(super) fn from_seconds(seconds: f64) -> Result<Self, TimecodeError> {
        if !seconds.is_finite() || seconds < 0.0 {
            return Err(TimecodeError::Malformed);
        }
        // `as` saturates for huge values, which `from_millis` then refuses as too large.
        Self::from_millis((seconds * 1000.0).floor() as u64)
    }

    /// Whole seconds, truncated (1.999 s is second 1).
    pub(super) fn seconds(self) -> u32 {
        // `from_millis` guarantees the fit; saturate rather than panic if that ever changes.
        u32::try_from(self.millis / 1000).unwrap_or(u32::MAX)
    }
}

/// Parses `text` (already trimmed) with the given decimal separators.
pub(super) fn parse(text: &str, decimal_separators: &[char]) -> Result<Timecode, TimecodeError> {
    let (clock, fraction) = match text.split_once(decimal_separators) {
        Some((clock, fraction)) => (clock, fraction_millis(fraction)?),
        None => (text, 0),
    };
    let fields: Vec<&str> = clock.split(':').collect();
    let (hours, minutes, seconds) = match fields.as_slice() {
        [minutes, seconds] => (0, number(minutes, usize::MAX)?, below_60(seconds)?),
        [hours, minutes, seconds] => (number(hours, usize::MAX)?, below_60(minutes)?, below_60(seconds)?),
        _ => return Err(TimecodeError::Malformed),
    };
    let total = hours
        .checked_mul(3600)
        .and_then(|h| minutes.checked_mul(60)?.checked_add(h))
        .and_then(|hm| hm.checked_add(seconds))
        .ok_or(TimecodeError::TooLarge)?;
    let millis = total
        .checked_mul(1000)
        .and_then(|ms| ms.checked_add(fraction))
        .ok_or(TimecodeError::TooLarge)?;
    Timecode::from_millis(millis)
}

/// A 1-2 digit field that must be below 60 (minutes after hours, or seconds).
fn below_60(digits: &str) -> Result<u64, TimecodeError> {
    let value = number(digits, 2)?;
    if value >= 60 {
        return Err(TimecodeError::OutOfRange);
    }
    Ok(value)
}

/// Non-empty ASCII digits, at most `max_digits` of them, without overflowing.
fn number(digits: &str, max_digits: usize) -> Result<u64, TimecodeError> {
    if digits.is_empty() || digits.len() > max_digits {
        return Err(TimecodeError::Malformed);
    }
    digits.chars().try_fold(0u64, |acc, c| {
        let digit = c.to_digit(10).ok_or(TimecodeError::Malformed)?;
        acc.checked_mul(10)
            .and_then(|v| v.checked_add(u64::from(digit)))
            .ok_or(TimecodeError::TooLarge)
    })
}

/// Milliseconds from the digits after the decimal separator (".5" is 500 ms).
fn fraction_millis(digits: &str) -> Result<u64, TimecodeError> {
    if digits.is_empty() || digits.len() > MAX_FRACTION_DIGITS {
        return Err(TimecodeError::Malformed);
    }
    // Validate every digit, then read the first three, padding ".5" to 500.
    let values = digits
        .chars()
        .map(|c| c.to_digit(10).ok_or(TimecodeError::Malformed))
        .collect::<Result<Vec<u32>, _>>()?;
    let millis = (0..3).fold(0u32, |acc, i| {
        acc.saturating_mul(10)
            .saturating_add(values.get(i).copied().unwrap_or(0))
    });
    Ok(u64::from(millis))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secs(text: &str) -> Result<u32, TimecodeError> {
        parse(text, &['.']).map(Timecode::seconds)
    }

    #[test]
    fn hours_minutes_seconds_with_and_without_fraction() {
        assert_eq!(secs("01:02:03.456"), Ok(3723));
        assert_eq!(secs("01:02:03"), Ok(3723));
        assert_eq!(secs("1:02:03"), Ok(3723));
        assert_eq!(secs("100:00:00"), Ok(360_000));
    }

    #[test]
    fn minutes_seconds_form_allows_long_minutes() {
        assert_eq!(secs("02:03.999"), Ok(123));
        assert_eq!(secs("75:30"), Ok(4530));
    }

    #[test]
    fn fraction_is_milliseconds_and_truncated_to_seconds() {
        let half = parse("00:00:01.5", &['.']).map(|t| t.millis);
        assert_eq!(half, Ok(1500));
        let long = parse("00:00:01.123456789", &['.']).map(|t| t.millis);
        assert_eq!(long, Ok(1123));
        assert_eq!(secs("00:00:01.999"), Ok(1));
    }

    #[test]
    fn separators_are_chosen_by_the_caller() {
        assert_eq!(parse("00:00:02,500", &[',', '.']).map(Timecode::seconds), Ok(2));
        assert_eq!(parse("00:00:02,500", &['.']), Err(TimecodeError::Malformed));
    }

    #[test]
    fn out_of_range_minutes_and_seconds() {
        assert_eq!(secs("00:60:00"), Err(TimecodeError::OutOfRange));
        assert_eq!(secs("00:00:60"), Err(TimecodeError::OutOfRange));
        assert_eq!(secs("10:99"), Err(TimecodeError::OutOfRange));
    }

    #[test]
    fn offsets_must_fit_u32_seconds() {
        assert_eq!(secs("1193046:28:15"), Ok(u32::MAX));
        assert_eq!(secs("1193046:28:16"), Err(TimecodeError::TooLarge));
        assert_eq!(secs("99999999:00:00"), Err(TimecodeError::TooLarge));
        let digits = "9".repeat(40);
        assert_eq!(secs(&format!("{digits}:00:00")), Err(TimecodeError::TooLarge));
        assert_eq!(secs(&format!("{digits}:00")), Err(TimecodeError::TooLarge));
    }

    #[test]
    fn malformed_shapes() {
        for bad in [
            "",
            ":",
            "::",
            "1:2:3:4",
            "a:00",
            "00:00.",
            "00:0a",
            "-1:00",
            "00:00:00.1234567890",
            "é:00",
            "00:é",
            "00:00.é",
            "00:000",
            " 00:00",
            "00",
            "00:00:00.5.5",
        ] {
            assert_eq!(secs(bad), Err(TimecodeError::Malformed), "{bad:?}");
        }
    }

    #[test]
    fn json_style_seconds() {
        assert_eq!(Timecode::from_seconds(12.75).map(Timecode::seconds), Ok(12));
        assert_eq!(Timecode::from_seconds(0.0).map(Timecode::seconds), Ok(0));
        assert_eq!(Timecode::from_seconds(-0.5), Err(TimecodeError::Malformed));
        assert_eq!(Timecode::from_seconds(f64::NAN), Err(TimecodeError::Malformed));
        assert_eq!(Timecode::from_seconds(1e300), Err(TimecodeError::TooLarge));
        assert_eq!(Timecode::from_seconds(4_294_967_296.0), Err(TimecodeError::TooLarge));
    }
}
