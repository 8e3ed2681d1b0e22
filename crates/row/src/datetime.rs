//! Dates and times (MySQL's DATE, DATETIME, TIMESTAMP and TIME).
//!
//! Invariants, held by every constructor:
//!
//! 1. A [`Date`] is a real day of the proleptic Gregorian calendar with a year in
//!    `0..=9999` (no zero month or day: Tarn behaves like MySQL's strict mode with
//!    `NO_ZERO_DATE` and `NO_ZERO_IN_DATE`).
//! 2. A [`DateTime`] holds a valid date, `hour < 24`, `minute < 60`, `second < 60` and
//!    `micros < 1_000_000`.
//! 3. A [`Time`] is a signed duration of at most [`TIME_MAX_MICROS`] either way
//!    (MySQL's `-838:59:59` to `838:59:59`; no fraction at the ends, as in MySQL 8).
//!
//! All three order chronologically (derived `Ord`; a [`Time`] is its microseconds).
//!
//! Days are counted from 0000-01-01, which is day 0 ([`Date::to_days`]); from
//! 0001-01-01 on this equals MySQL's `TO_DAYS` (MySQL treats year 0 differently). Microseconds are counted from 0000-01-01 00:00:00
//! ([`DateTime::to_micros`]). These counts are what the row format and the key encoding
//! store, so a date is 4 bytes and a datetime 8.

use std::fmt;

use tarn_common::{Error, Result};

use crate::limits::{FSP_MAX, YEAR_MAX};

const MICROS_PER_SECOND: u64 = 1_000_000;
const MICROS_PER_DAY: u64 = 86_400 * MICROS_PER_SECOND;
/// `days_from_civil(0, 1, 1)`: days from 1970-01-01 back to 0000-01-01.
pub const DAYS_0000_TO_1970: i64 = 719_528;
/// Days in 400 Gregorian years.
const ERA_DAYS: u32 = 146_097;
/// Day number of 9999-12-31.
pub const DAYS_MAX: u32 = 3_652_424;
/// Microsecond number of 9999-12-31 23:59:59.999999.
pub const MICROS_MAX: u64 = (DAYS_MAX as u64 + 1) * MICROS_PER_DAY - 1;
/// Microseconds of TIME's largest value, `838:59:59` (MySQL's `TIME_MAX_VALUE`).
pub const TIME_MAX_MICROS: i64 = (838 * 3600 + 59 * 60 + 59) * MICROS_PER_SECOND as i64;

fn incorrect(reason: String) -> Error {
    Error::IncorrectValue {
        column: String::new(),
        reason,
    }
}

/// A calendar date.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Date {
    pub year: u16,
    pub month: u8,
    pub day: u8,
}

/// A date and a time of day with microseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DateTime {
    pub date: Date,
    pub hour: u8,
    pub minute: u8,
    pub second: u8,
    pub micros: u32,
}

/// A TIME value: a signed duration in microseconds, within `±TIME_MAX_MICROS`. Hours
/// are not limited to a day (`'34:00:00'` is a day and ten hours).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Time {
    micros: i64,
}

fn is_leap_year(year: u16) -> bool {
    (year.is_multiple_of(4) && !year.is_multiple_of(100)) || year.is_multiple_of(400)
}

/// Days in `month` (1 to 12) of `year`; 0 for any other month.
pub fn days_in_month(year: u16, month: u8) -> u8 {
    match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if is_leap_year(year) => 29,
        2 => 28,
        _ => 0,
    }
}

/// Days since 1970-01-01 (Howard Hinnant's `days_from_civil`); any year, month 1 to 12.
pub fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let year_of_era = y - era * 400;
    let month_index = (month + 9) % 12;
    let day_of_year = (153 * month_index + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// Parses exactly `width` ASCII digits.
fn parse_digits(bytes: &[u8]) -> Option<u32> {
    if bytes.is_empty() || !bytes.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(
        bytes
            .iter()
            .fold(0, |acc, b| acc * 10 + u32::from(b - b'0')),
    )
}

impl Date {
    pub const MIN: Date = Date {
        year: 0,
        month: 1,
        day: 1,
    };
    pub const MAX: Date = Date {
        year: YEAR_MAX,
        month: 12,
        day: 31,
    };

    /// A validated date.
    pub fn new(year: u16, month: u8, day: u8) -> Result<Date> {
        let date = Date { year, month, day };
        if date.is_valid() {
            Ok(date)
        } else {
            Err(incorrect(format!(
                "{year:04}-{month:02}-{day:02} is not a valid date"
            )))
        }
    }

    pub fn is_valid(&self) -> bool {
        self.year <= YEAR_MAX
            && (1..=12).contains(&self.month)
            && self.day >= 1
            && self.day <= days_in_month(self.year, self.month)
    }

    /// Days since 0000-01-01 (which is day 0).
    pub fn to_days(&self) -> u32 {
        let days = days_from_civil(
            i64::from(self.year),
            i64::from(self.month),
            i64::from(self.day),
        ) + DAYS_0000_TO_1970;
        debug_assert!((0..=i64::from(DAYS_MAX)).contains(&days));
        days as u32
    }

    /// `days` if it is a day number [`Date::from_days`] accepts.
    pub fn check_days(days: u32) -> Result<u32> {
        if days > DAYS_MAX {
            return Err(Error::CorruptData(format!(
                "stored day number {days} is after 9999-12-31"
            )));
        }
        Ok(days)
    }

    /// The date `days` after 0000-01-01; `IncorrectValue` beyond 9999-12-31.
    #[inline]
    pub fn from_days(days: u32) -> Result<Date> {
        if days > DAYS_MAX {
            return Err(incorrect(format!("day number {days} is after 9999-12-31")));
        }
        // Howard Hinnant's `civil_from_days` in unsigned arithmetic (divisions by
        // constants become multiplications): days are counted from 0000-03-01, shifted
        // one 400-year era later so that January and February of year 0 stay
        // non-negative.
        let z = days + ERA_DAYS - 60;
        let era = z / ERA_DAYS;
        let day_of_era = z - era * ERA_DAYS;
        let year_of_era =
            (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
        let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
        let month_index = (5 * day_of_year + 2) / 153;
        let day = day_of_year - (153 * month_index + 2) / 5 + 1;
        let month = if month_index < 10 {
            month_index + 3
        } else {
            month_index - 9
        };
        let year = year_of_era + era * 400 + u32::from(month <= 2) - 400;
        Ok(Date {
            year: year as u16,
            month: month as u8,
            day: day as u8,
        })
    }

    /// Parses `YYYY-MM-DD` (1 to 2 digit month and day accepted, as MySQL does).
    pub fn parse(text: &str) -> Result<Date> {
        let bad = || incorrect(format!("'{text}' is not a date (YYYY-MM-DD)"));
        let mut parts = text.trim().split('-');
        let (Some(y), Some(m), Some(d), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(bad());
        };
        if y.len() != 4 || m.len() > 2 || d.len() > 2 {
            return Err(bad());
        }
        let year = parse_digits(y.as_bytes()).ok_or_else(bad)?;
        let month = parse_digits(m.as_bytes()).ok_or_else(bad)?;
        let day = parse_digits(d.as_bytes()).ok_or_else(bad)?;
        Date::new(year as u16, month as u8, day as u8)
    }
}

impl DateTime {
    pub const MIN: DateTime = DateTime {
        date: Date::MIN,
        hour: 0,
        minute: 0,
        second: 0,
        micros: 0,
    };
    pub const MAX: DateTime = DateTime {
        date: Date::MAX,
        hour: 23,
        minute: 59,
        second: 59,
        micros: 999_999,
    };

    /// A validated date and time.
    pub fn new(date: Date, hour: u8, minute: u8, second: u8, micros: u32) -> Result<DateTime> {
        let value = DateTime {
            date,
            hour,
            minute,
            second,
            micros,
        };
        if value.is_valid() {
            Ok(value)
        } else {
            Err(incorrect(format!("{value:?} is not a valid datetime")))
        }
    }

    /// Midnight of `date`.
    pub fn from_date(date: Date) -> DateTime {
        DateTime {
            date,
            ..DateTime::MIN
        }
    }

    pub fn is_valid(&self) -> bool {
        self.date.is_valid()
            && self.hour < 24
            && self.minute < 60
            && self.second < 60
            && u64::from(self.micros) < MICROS_PER_SECOND
    }

    /// Microseconds since 0000-01-01 00:00:00.
    pub fn to_micros(&self) -> u64 {
        let seconds =
            u64::from(self.hour) * 3600 + u64::from(self.minute) * 60 + u64::from(self.second);
        u64::from(self.date.to_days()) * MICROS_PER_DAY
            + seconds * MICROS_PER_SECOND
            + u64::from(self.micros)
    }

    /// The datetime `micros` after 0000-01-01 00:00:00; `IncorrectValue` beyond
    /// 9999-12-31 23:59:59.999999.
    pub fn from_micros(micros: u64) -> Result<DateTime> {
        if micros > MICROS_MAX {
            return Err(incorrect(format!(
                "{micros} microseconds is after 9999-12-31"
            )));
        }
        let date = Date::from_days((micros / MICROS_PER_DAY) as u32)?;
        let in_day = micros % MICROS_PER_DAY;
        let seconds = in_day / MICROS_PER_SECOND;
        Ok(DateTime {
            date,
            hour: (seconds / 3600) as u8,
            minute: (seconds / 60 % 60) as u8,
            second: (seconds % 60) as u8,
            micros: (in_day % MICROS_PER_SECOND) as u32,
        })
    }

    /// This value rounded (half up, as MySQL does) to `fsp` fractional-second digits.
    /// The carry can reach the year; past 9999-12-31 it is `ValueOutOfRange`.
    pub fn round_to_fsp(&self, fsp: u8) -> Result<DateTime> {
        assert!(fsp <= FSP_MAX, "fsp {fsp} above {FSP_MAX}");
        let unit = 10u64.pow(u32::from(FSP_MAX - fsp));
        if unit == 1 || u64::from(self.micros) % unit == 0 {
            return Ok(*self);
        }
        let micros = self.to_micros();
        let rounded = (micros + unit / 2) / unit * unit;
        DateTime::from_micros(rounded).map_err(|_| Error::ValueOutOfRange {
            column: String::new(),
            reason: format!("{self} rounds past 9999-12-31"),
        })
    }

    /// Parses `YYYY-MM-DD[( |T)HH:MM:SS[.f...]]`. Fraction digits beyond 6 round half up.
    pub fn parse(text: &str) -> Result<DateTime> {
        let bad = || incorrect(format!("'{text}' is not a datetime (YYYY-MM-DD HH:MM:SS)"));
        let trimmed = text.trim();
        let (date_part, time_part) = match trimmed.find([' ', 'T']) {
            Some(at) => (&trimmed[..at], Some(trimmed[at + 1..].trim_start())),
            None => (trimmed, None),
        };
        let date = Date::parse(date_part).map_err(|_| bad())?;
        let Some(time) = time_part else {
            return Ok(DateTime::from_date(date));
        };
        let (clock, fraction) = match time.split_once('.') {
            Some((clock, fraction)) => (clock, Some(fraction)),
            None => (time, None),
        };
        let mut fields = clock.split(':');
        let (Some(h), Some(m), Some(s), None) =
            (fields.next(), fields.next(), fields.next(), fields.next())
        else {
            return Err(bad());
        };
        if h.len() > 2 || m.len() > 2 || s.len() > 2 {
            return Err(bad());
        }
        let hour = parse_digits(h.as_bytes()).ok_or_else(bad)?;
        let minute = parse_digits(m.as_bytes()).ok_or_else(bad)?;
        let second = parse_digits(s.as_bytes()).ok_or_else(bad)?;
        let (mut micros, mut round_up) = (0u32, false);
        if let Some(fraction) = fraction {
            let digits = fraction.as_bytes();
            if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
                return Err(bad());
            }
            for k in 0..6 {
                micros = micros * 10 + digits.get(k).map_or(0, |b| u32::from(b - b'0'));
            }
            round_up = digits.get(6).is_some_and(|b| *b >= b'5');
        }
        if hour > 23 || minute > 59 || second > 59 {
            return Err(bad());
        }
        let value = DateTime::new(date, hour as u8, minute as u8, second as u8, micros)?;
        if round_up {
            return DateTime::from_micros(value.to_micros() + 1).map_err(|_| bad());
        }
        Ok(value)
    }

    /// Formats with exactly `fsp` fraction digits (truncating), as a column of that
    /// fsp shows its values.
    pub fn display_fsp(&self, fsp: u8) -> String {
        let base = format!(
            "{} {:02}:{:02}:{:02}",
            self.date, self.hour, self.minute, self.second
        );
        if fsp == 0 {
            return base;
        }
        let fsp = usize::from(fsp.min(FSP_MAX));
        let fraction = format!("{:06}", self.micros);
        format!("{base}.{}", &fraction[..fsp])
    }
}

impl Time {
    pub const ZERO: Time = Time { micros: 0 };
    pub const MIN: Time = Time {
        micros: -TIME_MAX_MICROS,
    };
    pub const MAX: Time = Time {
        micros: TIME_MAX_MICROS,
    };

    /// The TIME of `micros` microseconds; `ValueOutOfRange` beyond `±838:59:59`.
    pub fn from_micros(micros: i64) -> Result<Time> {
        if !(-TIME_MAX_MICROS..=TIME_MAX_MICROS).contains(&micros) {
            return Err(Error::ValueOutOfRange {
                column: String::new(),
                reason: format!("{micros} microseconds is outside TIME's range"),
            });
        }
        Ok(Time { micros })
    }

    /// [`Time::from_micros`] for a stored value: out of range is `CorruptData`.
    pub fn from_stored_micros(micros: i64) -> Result<Time> {
        Time::from_micros(micros)
            .map_err(|_| Error::CorruptData(format!("stored TIME of {micros} microseconds")))
    }

    /// The TIME `hours:minutes:seconds.micros`, negated when `negative`; None when a
    /// field is out of its range (minutes or seconds above 59, a fraction of a million
    /// or more) or the total is beyond `±838:59:59`.
    pub fn from_parts(
        negative: bool,
        hours: u64,
        minutes: u64,
        seconds: u64,
        micros: u64,
    ) -> Option<Time> {
        if minutes > 59 || seconds > 59 || micros >= MICROS_PER_SECOND {
            return None;
        }
        let total = hours
            .checked_mul(3600)?
            .checked_add(minutes * 60 + seconds)?
            .checked_mul(MICROS_PER_SECOND)?
            .checked_add(micros)?;
        let total = i64::try_from(total).ok()?;
        Time::from_micros(if negative { -total } else { total }).ok()
    }

    /// Parses `[-]H:MM:SS[.f...]` (any number of hour digits; fraction digits beyond
    /// six round half up). The SQL layer reads MySQL's many other forms itself.
    pub fn parse(text: &str) -> Result<Time> {
        let bad = || incorrect(format!("'{text}' is not a time (HH:MM:SS)"));
        let trimmed = text.trim();
        let (negative, body) = match trimmed.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, trimmed),
        };
        let (clock, fraction) = body.split_once('.').unwrap_or((body, ""));
        let mut fields = clock.split(':');
        let (Some(h), Some(m), Some(s), None) =
            (fields.next(), fields.next(), fields.next(), fields.next())
        else {
            return Err(bad());
        };
        if h.len() > 4 || m.len() > 2 || s.len() > 2 {
            return Err(bad());
        }
        let field = |f: &str| parse_digits(f.as_bytes()).map(u64::from).ok_or_else(bad);
        let (hours, minutes, seconds) = (field(h)?, field(m)?, field(s)?);
        let digits = fraction.as_bytes();
        if body.contains('.') && (digits.is_empty() || !digits.iter().all(u8::is_ascii_digit)) {
            return Err(bad());
        }
        let mut micros = 0u64;
        for k in 0..6 {
            micros = micros * 10 + digits.get(k).map_or(0, |b| u64::from(b - b'0'));
        }
        let time = Time::from_parts(negative, hours, minutes, seconds, micros).ok_or_else(bad)?;
        if digits.get(6).is_some_and(|b| *b >= b'5') {
            let step = if negative { -1 } else { 1 };
            return Time::from_micros(time.micros + step);
        }
        Ok(time)
    }

    /// Signed microseconds.
    pub fn micros(&self) -> i64 {
        self.micros
    }

    pub fn is_negative(&self) -> bool {
        self.micros < 0
    }

    /// Whole hours of the magnitude (0..=838).
    pub fn hours(&self) -> u32 {
        (self.micros.unsigned_abs() / (3600 * MICROS_PER_SECOND)) as u32
    }

    /// Minutes of the magnitude past its hours (0..=59).
    pub fn minute(&self) -> u8 {
        (self.micros.unsigned_abs() / (60 * MICROS_PER_SECOND) % 60) as u8
    }

    /// Seconds of the magnitude past its minutes (0..=59).
    pub fn second(&self) -> u8 {
        (self.micros.unsigned_abs() / MICROS_PER_SECOND % 60) as u8
    }

    /// Microseconds of the magnitude past its seconds.
    pub fn fraction_micros(&self) -> u32 {
        (self.micros.unsigned_abs() % MICROS_PER_SECOND) as u32
    }

    /// This value rounded to `fsp` fraction digits, half away from zero as MySQL 8
    /// rounds; a carry past `838:59:59` is `ValueOutOfRange`.
    pub fn round_to_fsp(&self, fsp: u8) -> Result<Time> {
        assert!(fsp <= FSP_MAX, "fsp {fsp} above {FSP_MAX}");
        let unit = 10i64.pow(u32::from(FSP_MAX - fsp));
        let magnitude = self.micros.abs();
        let rounded = (magnitude + unit / 2) / unit * unit;
        Time::from_micros(if self.micros < 0 { -rounded } else { rounded })
    }

    /// This value with its fraction cut to `fsp` digits (toward zero).
    pub fn truncate_to_fsp(&self, fsp: u8) -> Time {
        let unit = 10i64.pow(u32::from(FSP_MAX - fsp.min(FSP_MAX)));
        Time {
            micros: self.micros / unit * unit,
        }
    }

    /// `[-]HH:MM:SS` with exactly `fsp` fraction digits (truncating), as a column of
    /// that fsp shows its values; hours take as many digits as they need.
    pub fn display_fsp(&self, fsp: u8) -> String {
        let sign = if self.is_negative() { "-" } else { "" };
        let base = format!(
            "{sign}{:02}:{:02}:{:02}",
            self.hours(),
            self.minute(),
            self.second()
        );
        if fsp == 0 {
            return base;
        }
        let fsp = usize::from(fsp.min(FSP_MAX));
        let fraction = format!("{:06}", self.fraction_micros());
        format!("{base}.{}", &fraction[..fsp])
    }
}

/// Shows six fraction digits when there is a fraction, none otherwise; use
/// [`Time::display_fsp`] for a column's exact form.
impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let fsp = if self.fraction_micros() == 0 {
            0
        } else {
            FSP_MAX
        };
        f.pad(&self.display_fsp(fsp))
    }
}

impl fmt::Display for Date {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(&format!(
            "{:04}-{:02}-{:02}",
            self.year, self.month, self.day
        ))
    }
}

/// Shows six fraction digits when the microseconds are not zero, none otherwise; use
/// [`DateTime::display_fsp`] for a column's exact form.
impl fmt::Display for DateTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let fsp = if self.micros == 0 { 0 } else { FSP_MAX };
        f.pad(&self.display_fsp(fsp))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tarn_common::rng::{Rng, test_seed};

    #[test]
    fn days_round_trip_and_match_known_values() {
        assert_eq!(Date::MIN.to_days(), 0);
        assert_eq!(Date::MAX.to_days(), DAYS_MAX);
        assert_eq!(
            Date::new(1970, 1, 1).unwrap().to_days() as i64,
            DAYS_0000_TO_1970
        );
        // MySQL: TO_DAYS('2000-01-01') = 730485, TO_DAYS('9999-12-31') = 3652424.
        assert_eq!(Date::new(2000, 1, 1).unwrap().to_days(), 730_485);
        assert_eq!(Date::MAX.to_days(), 3_652_424);
        let mut previous = None;
        for days in 0..=DAYS_MAX {
            let date = Date::from_days(days).unwrap();
            assert!(date.is_valid(), "{date:?}");
            assert_eq!(date.to_days(), days);
            if let Some(p) = previous {
                assert!(p < date);
            }
            previous = Some(date);
        }
        assert!(Date::from_days(DAYS_MAX + 1).is_err());
    }

    #[test]
    fn validates_and_parses() {
        assert!(Date::new(2024, 2, 29).is_ok());
        assert!(Date::new(2023, 2, 29).is_err());
        assert!(Date::new(1900, 2, 29).is_err());
        assert!(Date::new(2000, 2, 29).is_ok());
        assert!(Date::new(2024, 0, 1).is_err());
        assert!(Date::new(2024, 13, 1).is_err());
        assert!(Date::new(10000, 1, 1).is_err());
        assert_eq!(Date::parse("2024-3-7").unwrap().to_string(), "2024-03-07");
        for bad in ["2024-03", "24-03-07", "2024-03-07x", "2024/03/07", ""] {
            assert!(Date::parse(bad).is_err(), "{bad}");
        }
        let dt = DateTime::parse("2024-03-07 13:04:05.123456").unwrap();
        assert_eq!(dt.to_string(), "2024-03-07 13:04:05.123456");
        assert_eq!(dt.display_fsp(2), "2024-03-07 13:04:05.12");
        assert_eq!(
            DateTime::parse("2024-03-07T13:04:05").unwrap().to_string(),
            "2024-03-07 13:04:05"
        );
        assert_eq!(
            DateTime::parse("2024-03-07").unwrap().to_string(),
            "2024-03-07 00:00:00"
        );
        assert_eq!(
            DateTime::parse("2024-12-31 23:59:59.9999995")
                .unwrap()
                .to_string(),
            "2025-01-01 00:00:00"
        );
        assert_eq!(
            DateTime::parse("2024-03-07 1:2:3.5").unwrap().to_string(),
            "2024-03-07 01:02:03.500000"
        );
        for bad in [
            "2024-03-07 24:00:00",
            "2024-03-07 10:60:00",
            "2024-03-07 10:00",
            "2024-03-07 10:00:00.",
            "2024-03-07 10:00:00.x",
        ] {
            assert!(DateTime::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn fsp_rounding_carries() {
        let dt = DateTime::parse("1999-12-31 23:59:59.999999").unwrap();
        assert_eq!(dt.round_to_fsp(6).unwrap(), dt);
        assert_eq!(
            dt.round_to_fsp(0).unwrap().to_string(),
            "2000-01-01 00:00:00"
        );
        let dt = DateTime::parse("2000-01-01 00:00:00.123456").unwrap();
        assert_eq!(
            dt.round_to_fsp(3).unwrap().display_fsp(3),
            "2000-01-01 00:00:00.123"
        );
        assert_eq!(dt.round_to_fsp(5).unwrap().micros, 123_460);
        assert!(DateTime::MAX.round_to_fsp(0).is_err());
    }

    #[test]
    fn times_have_mysql_range_fields_and_rounding() {
        let t = Time::from_parts(true, 34, 5, 6, 700_000).unwrap();
        assert_eq!(t.to_string(), "-34:05:06.700000");
        assert_eq!(t.display_fsp(0), "-34:05:06");
        assert_eq!(t.display_fsp(2), "-34:05:06.70");
        assert_eq!((t.hours(), t.minute(), t.second()), (34, 5, 6));
        assert_eq!(t.round_to_fsp(0).unwrap().display_fsp(0), "-34:05:07");
        assert_eq!(Time::MAX.display_fsp(0), "838:59:59");
        assert_eq!(Time::MIN.to_string(), "-838:59:59");
        assert!(Time::from_parts(false, 838, 59, 59, 1).is_none());
        assert!(Time::from_parts(false, 1, 60, 0, 0).is_none());
        assert!(Time::from_parts(false, u64::MAX, 0, 0, 0).is_none());
        let almost = Time::from_parts(false, 838, 59, 58, 999_999).unwrap();
        assert!(almost.round_to_fsp(0).is_ok());
        assert!(
            Time::from_micros(TIME_MAX_MICROS - 1)
                .unwrap()
                .round_to_fsp(0)
                .is_ok()
        );
        assert!(
            Time::from_parts(false, 838, 59, 58, 600_000)
                .unwrap()
                .round_to_fsp(0)
                .is_ok()
        );
        assert_eq!(
            Time::from_parts(false, 0, 0, 1, 999_999)
                .unwrap()
                .truncate_to_fsp(3)
                .to_string(),
            "00:00:01.999000"
        );
        assert!(Time::from_micros(TIME_MAX_MICROS + 1).is_err());
        assert!(Time::from_parts(true, 0, 0, 0, 1).unwrap() < Time::ZERO);
        assert_eq!(
            Time::parse("-1:02:03.5").unwrap().to_string(),
            "-01:02:03.500000"
        );
        assert_eq!(
            Time::parse("100:00:00.0000005").unwrap().to_string(),
            "100:00:00.000001"
        );
        for bad in [
            "1:2",
            "1:60:00",
            "x:00:00",
            "1:00:00.",
            "839:00:00",
            "1:00:00:00",
        ] {
            assert!(Time::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn micros_round_trip() {
        let mut rng = Rng::new(test_seed("micros_round_trip"));
        for _ in 0..100_000 {
            let micros = rng.below(MICROS_MAX + 1);
            let dt = DateTime::from_micros(micros).unwrap();
            assert!(dt.is_valid());
            assert_eq!(dt.to_micros(), micros);
        }
        assert!(DateTime::from_micros(MICROS_MAX + 1).is_err());
    }
}
