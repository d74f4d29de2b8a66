//! Calendar days and times of day as the journal writes them.
//!
//! A day is a proleptic Gregorian date, accepted as `YYYY-MM-DD` or `YYYYMMDD` and always written as
//! `YYYY-MM-DD`. The arithmetic here (days since the Unix epoch and back) is the small, well-known
//! civil-calendar algorithm; it exists so that the journal needs no date crate for the little it does.
//! This module does not know about time zones: the journal's days are the owner's local days as given.

use std::fmt;

/// A valid calendar day between the years 1000 and 9999.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Day {
    year: u16,
    month: u8,
    day: u8,
}

/// Why a day or time could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DayError {
    #[error("\"{0}\" is not a day: use YYYY-MM-DD or YYYYMMDD")]
    Format(String),
    #[error("\"{0}\" is not a real calendar day")]
    NotADay(String),
    #[error("\"{0}\" is not a time of day: use HH:MM:SS or HH:MM")]
    Time(String),
}

impl Day {
    /// Builds a day from its parts, refusing impossible dates such as February 30.
    pub fn from_parts(year: u16, month: u8, day: u8) -> Option<Day> {
        if !(1000..=9999).contains(&year) || !(1..=12).contains(&month) || day == 0 {
            return None;
        }
        (day <= days_in_month(year, month)).then_some(Day { year, month, day })
    }

    /// Parses `YYYY-MM-DD` or `YYYYMMDD` (the two forms agents are told about).
    pub fn parse(text: &str) -> Result<Day, DayError> {
        let digits: String = match text.len() {
            10 if text.as_bytes()[4] == b'-' && text.as_bytes()[7] == b'-' => {
                text.chars().filter(|c| *c != '-').collect()
            }
            8 => text.to_string(),
            _ => return Err(DayError::Format(text.to_string())),
        };
        if digits.len() != 8 || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(DayError::Format(text.to_string()));
        }
        let year: u16 = digits[0..4].parse().map_err(|_| DayError::Format(text.to_string()))?;
        let month: u8 = digits[4..6].parse().map_err(|_| DayError::Format(text.to_string()))?;
        let day: u8 = digits[6..8].parse().map_err(|_| DayError::Format(text.to_string()))?;
        Day::from_parts(year, month, day).ok_or_else(|| DayError::NotADay(text.to_string()))
    }

    /// Today in UTC. The journal has no time zone setting yet; UTC is the documented default.
    pub fn today() -> Day {
        Day::from_epoch_days(crate::clock::unix_now() / 86_400)
    }

    /// The day `n` days before this one (saturating at the earliest supported day).
    pub fn minus_days(self, n: i64) -> Day {
        Day::from_epoch_days(self.epoch_days() - n)
    }

    /// Days since 1970-01-01 (negative before it).
    pub fn epoch_days(self) -> i64 {
        let (y, m, d) = (i64::from(self.year), i64::from(self.month), i64::from(self.day));
        let y = if m <= 2 { y - 1 } else { y };
        let era = y.div_euclid(400);
        let yoe = y - era * 400;
        let mp = (m + 9) % 12;
        let doy = (153 * mp + 2) / 5 + d - 1;
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
        era * 146_097 + doe - 719_468
    }

    /// The day that is `days` after 1970-01-01, clamped to the supported years.
    pub fn from_epoch_days(days: i64) -> Day {
        let z = days + 719_468;
        let era = z.div_euclid(146_097);
        let doe = z - era * 146_097;
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let d = doy - (153 * mp + 2) / 5 + 1;
        let m = if mp < 10 { mp + 3 } else { mp - 9 };
        let y = yoe + era * 400 + i64::from(m <= 2);
        match y {
            ..1000 => Day {
                year: 1000,
                month: 1,
                day: 1,
            },
            10_000.. => Day {
                year: 9999,
                month: 12,
                day: 31,
            },
            _ => Day {
                year: y as u16,
                month: m as u8,
                day: d as u8,
            },
        }
    }

    /// The day as a number `YYYYMMDD`, the form the search index filters on.
    pub fn as_number(self) -> u64 {
        u64::from(self.year) * 10_000 + u64::from(self.month) * 100 + u64::from(self.day)
    }

    pub fn year(self) -> u16 {
        self.year
    }
}

impl fmt::Display for Day {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:04}-{:02}-{:02}", self.year, self.month, self.day)
    }
}

fn is_leap(year: u16) -> bool {
    (year.is_multiple_of(4) && !year.is_multiple_of(100)) || year.is_multiple_of(400)
}

fn days_in_month(year: u16, month: u8) -> u8 {
    match month {
        2 if is_leap(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Formats Unix seconds as an RFC 3339 UTC timestamp (`2026-12-02T09:30:00Z`).
pub fn format_timestamp(unix_seconds: i64) -> String {
    let day = Day::from_epoch_days(unix_seconds.div_euclid(86_400));
    let secs = unix_seconds.rem_euclid(86_400) as u32;
    format!("{day}T{}Z", format_time(secs))
}

/// Parses `HH:MM:SS` or `HH:MM` into seconds after midnight.
pub fn parse_time(text: &str) -> Result<u32, DayError> {
    let err = || DayError::Time(text.to_string());
    let parts: Vec<&str> = text.split(':').collect();
    if !(2..=3).contains(&parts.len())
        || parts
            .iter()
            .any(|p| p.len() != 2 || !p.bytes().all(|b| b.is_ascii_digit()))
    {
        return Err(err());
    }
    let number = |i: usize| -> u32 { parts.get(i).and_then(|p| p.parse().ok()).unwrap_or(0) };
    let (h, m, s) = (number(0), number(1), number(2));
    if h > 23 || m > 59 || s > 59 {
        return Err(err());
    }
    Ok(h * 3600 + m * 60 + s)
}

/// Formats seconds after midnight as `HH:MM:SS` (hours keep counting past 24 for long offsets).
pub fn format_time(seconds: u32) -> String {
    format!("{:02}:{:02}:{:02}", seconds / 3600, seconds / 60 % 60, seconds % 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_both_forms_and_writes_one() {
        assert_eq!(Day::parse("2026-03-01").unwrap().to_string(), "2026-03-01");
        assert_eq!(Day::parse("20260301").unwrap().to_string(), "2026-03-01");
        assert_eq!(Day::parse("20260301").unwrap().as_number(), 20_260_301);
    }

    #[test]
    fn refuses_impossible_and_malformed_days() {
        assert_eq!(Day::parse("2026-02-29"), Err(DayError::NotADay("2026-02-29".into())));
        assert!(Day::parse("2024-02-29").is_ok());
        assert_eq!(Day::parse("1900-02-29"), Err(DayError::NotADay("1900-02-29".into())));
        for bad in [
            "",
            "2026-1-01",
            "2026/01/01",
            "202601011",
            "2026-13-01",
            "abcdefgh",
            "2026-01-00",
            "+2026010",
            "0999-01-01",
            "2026-01-é1",
        ] {
            assert!(Day::parse(bad).is_err(), "{bad} should be refused");
        }
    }

    #[test]
    fn epoch_days_round_trip() {
        assert_eq!(Day::parse("1970-01-01").unwrap().epoch_days(), 0);
        assert_eq!(Day::parse("2000-03-01").unwrap().epoch_days(), 11_017);
        for n in [-200_000, -1, 0, 1, 59, 365, 11_016, 20_000, 2_000_000] {
            let day = Day::from_epoch_days(n);
            assert_eq!(Day::from_epoch_days(day.epoch_days()), day);
        }
        assert_eq!(
            Day::parse("2026-03-01").unwrap().minus_days(1).to_string(),
            "2026-02-28"
        );
    }

    #[test]
    fn times_of_day() {
        assert_eq!(parse_time("09:30:05"), Ok(34_205));
        assert_eq!(parse_time("09:30"), Ok(34_200));
        for bad in ["24:00:00", "9:30", "09:60", "09:30:5", "", "aa:bb"] {
            assert!(parse_time(bad).is_err(), "{bad} should be refused");
        }
        assert_eq!(format_time(34_205), "09:30:05");
        assert_eq!(format_timestamp(0), "1970-01-01T00:00:00Z");
        assert_eq!(format_timestamp(1_764_667_800), "2025-12-02T09:30:00Z");
    }
}
