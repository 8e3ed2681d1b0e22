//! Date arithmetic and formatting: `+ INTERVAL`, `EXTRACT`, `DATE_FORMAT`,
//! `STR_TO_DATE`, MySQL's week numbers, `TIMESTAMPDIFF` and `CONVERT_TZ`.
//!
//! Inputs are read leniently ([`super::cast::to_datetime`]): DATE and DATETIME values,
//! strings such as `'2020-01-31'` and numbers such as `20200131`. An input that is not
//! a valid date gives NULL, as MySQL does (with a warning, which comes later); so does
//! a result outside `0000-01-01 .. 9999-12-31`.
//!
//! Result types of [`add_interval`] follow MySQL: a DATE plus a unit of days or larger
//! stays a DATE; a DATE plus a time unit, and a DATETIME plus anything, is a DATETIME;
//! a string or number operand gives a string (the date, or the datetime when the input
//! had a time or the unit is a time unit). Month arithmetic clamps the day to the
//! length of the month (`'2020-01-31' + INTERVAL 1 MONTH` is `2020-02-29`). A TIME
//! plus a unit of hours or less ([`IntervalUnit::is_time_unit`]) stays a TIME (NULL
//! past `±838:59:59`); plus a larger unit it is put on the current date first and
//! gives a DATETIME, as in MySQL 8.
//!
//! Week numbers follow MySQL's `calc_week` with its three mode bits (Monday first,
//! week-of-year counting into the neighbouring year, first week is the one with the
//! first Sunday/Monday rather than the one with four days).

use tarn_common::{Error, Result};
use tarn_row::datetime::{Date, DateTime};
use tarn_row::value::Value;

use super::cast::{self, parse_datetime, to_datetime};
use super::tz::TimeZone;
use crate::types::SqlType;

/// An interval unit, simple or compound (`DAY_HOUR` is `'D H'`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IntervalUnit {
    Microsecond,
    Second,
    Minute,
    Hour,
    Day,
    Week,
    Month,
    Quarter,
    Year,
    SecondMicrosecond,
    MinuteMicrosecond,
    MinuteSecond,
    HourMicrosecond,
    HourSecond,
    HourMinute,
    DayMicrosecond,
    DaySecond,
    DayMinute,
    DayHour,
    YearMonth,
}

/// The fields of an interval, largest first; microseconds last.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Field {
    Year,
    Month,
    Day,
    Hour,
    Minute,
    Second,
    Micro,
}

impl IntervalUnit {
    fn fields(self) -> &'static [Field] {
        use Field::*;
        match self {
            IntervalUnit::Microsecond => &[Micro],
            IntervalUnit::Second => &[Second],
            IntervalUnit::Minute => &[Minute],
            IntervalUnit::Hour => &[Hour],
            IntervalUnit::Day | IntervalUnit::Week => &[Day],
            IntervalUnit::Month | IntervalUnit::Quarter => &[Month],
            IntervalUnit::Year => &[Year],
            IntervalUnit::SecondMicrosecond => &[Second, Micro],
            IntervalUnit::MinuteMicrosecond => &[Minute, Second, Micro],
            IntervalUnit::MinuteSecond => &[Minute, Second],
            IntervalUnit::HourMicrosecond => &[Hour, Minute, Second, Micro],
            IntervalUnit::HourSecond => &[Hour, Minute, Second],
            IntervalUnit::HourMinute => &[Hour, Minute],
            IntervalUnit::DayMicrosecond => &[Day, Hour, Minute, Second, Micro],
            IntervalUnit::DaySecond => &[Day, Hour, Minute, Second],
            IntervalUnit::DayMinute => &[Day, Hour, Minute],
            IntervalUnit::DayHour => &[Day, Hour],
            IntervalUnit::YearMonth => &[Year, Month],
        }
    }

    /// Units of a day or larger: a DATE plus one of them stays a DATE.
    pub fn is_date_unit(self) -> bool {
        matches!(
            self,
            IntervalUnit::Day
                | IntervalUnit::Week
                | IntervalUnit::Month
                | IntervalUnit::Quarter
                | IntervalUnit::Year
                | IntervalUnit::YearMonth
        )
    }

    /// Units MySQL 8 adds to a TIME giving a TIME (`HOUR` .. `MICROSECOND` and the
    /// compound units from `HOUR_MINUTE` on, `DAY_MICROSECOND` among them); the others
    /// turn a TIME into a DATETIME.
    pub fn is_time_unit(self) -> bool {
        matches!(
            self,
            IntervalUnit::Hour
                | IntervalUnit::Minute
                | IntervalUnit::Second
                | IntervalUnit::Microsecond
                | IntervalUnit::HourMinute
                | IntervalUnit::HourSecond
                | IntervalUnit::MinuteSecond
                | IntervalUnit::DayMicrosecond
                | IntervalUnit::HourMicrosecond
                | IntervalUnit::MinuteMicrosecond
                | IntervalUnit::SecondMicrosecond
        )
    }

    fn is_month_based(self) -> bool {
        matches!(
            self,
            IntervalUnit::Month
                | IntervalUnit::Quarter
                | IntervalUnit::Year
                | IntervalUnit::YearMonth
        )
    }

    /// The unit's SQL name (`DAY_HOUR`).
    pub fn name(self) -> &'static str {
        match self {
            IntervalUnit::Microsecond => "MICROSECOND",
            IntervalUnit::Second => "SECOND",
            IntervalUnit::Minute => "MINUTE",
            IntervalUnit::Hour => "HOUR",
            IntervalUnit::Day => "DAY",
            IntervalUnit::Week => "WEEK",
            IntervalUnit::Month => "MONTH",
            IntervalUnit::Quarter => "QUARTER",
            IntervalUnit::Year => "YEAR",
            IntervalUnit::SecondMicrosecond => "SECOND_MICROSECOND",
            IntervalUnit::MinuteMicrosecond => "MINUTE_MICROSECOND",
            IntervalUnit::MinuteSecond => "MINUTE_SECOND",
            IntervalUnit::HourMicrosecond => "HOUR_MICROSECOND",
            IntervalUnit::HourSecond => "HOUR_SECOND",
            IntervalUnit::HourMinute => "HOUR_MINUTE",
            IntervalUnit::DayMicrosecond => "DAY_MICROSECOND",
            IntervalUnit::DaySecond => "DAY_SECOND",
            IntervalUnit::DayMinute => "DAY_MINUTE",
            IntervalUnit::DayHour => "DAY_HOUR",
            IntervalUnit::YearMonth => "YEAR_MONTH",
        }
    }
}

const ALL_UNITS: [IntervalUnit; 20] = [
    IntervalUnit::Microsecond,
    IntervalUnit::Second,
    IntervalUnit::Minute,
    IntervalUnit::Hour,
    IntervalUnit::Day,
    IntervalUnit::Week,
    IntervalUnit::Month,
    IntervalUnit::Quarter,
    IntervalUnit::Year,
    IntervalUnit::SecondMicrosecond,
    IntervalUnit::MinuteMicrosecond,
    IntervalUnit::MinuteSecond,
    IntervalUnit::HourMicrosecond,
    IntervalUnit::HourSecond,
    IntervalUnit::HourMinute,
    IntervalUnit::DayMicrosecond,
    IntervalUnit::DaySecond,
    IntervalUnit::DayMinute,
    IntervalUnit::DayHour,
    IntervalUnit::YearMonth,
];

/// A unit by its SQL name, case-insensitively (`day_hour`, `SQL_TSI_DAY`).
pub fn parse_unit(name: &str) -> Option<IntervalUnit> {
    let name = name.trim();
    let name = name
        .get(..8)
        .filter(|p| p.eq_ignore_ascii_case("SQL_TSI_"))
        .map_or(name, |_| &name[8..]);
    ALL_UNITS
        .into_iter()
        .find(|u| u.name().eq_ignore_ascii_case(name))
}

const MICROS_PER_SECOND: i128 = 1_000_000;

fn field_micros(field: Field) -> i128 {
    match field {
        Field::Day => 86_400 * MICROS_PER_SECOND,
        Field::Hour => 3_600 * MICROS_PER_SECOND,
        Field::Minute => 60 * MICROS_PER_SECOND,
        Field::Second => MICROS_PER_SECOND,
        Field::Micro => 1,
        Field::Year | Field::Month => 0,
    }
}

/// An interval as (negative, the value of each field), read from `amount`.
fn interval_fields(amount: &Value, unit: IntervalUnit) -> Option<(bool, Vec<(Field, i128)>)> {
    let fields = unit.fields();
    if fields.len() == 1 {
        // A simple unit: a number (SECOND keeps a fraction as microseconds).
        if unit == IntervalUnit::Second && !matches!(amount, Value::Int(_) | Value::UInt(_)) {
            let micros = match amount {
                Value::Bytes(_) | Value::Decimal(_) => {
                    let d = cast::to_decimal(amount)?;
                    let r = super::decimal::round_to(
                        &d,
                        6,
                        super::decimal::RoundMode::HalfAwayFromZero,
                    )
                    .ok()?;
                    super::decimal::parts(&r).ok()?.0
                }
                _ => (cast::to_f64(amount)? * 1e6).round() as i128,
            };
            return Some((micros < 0, vec![(Field::Micro, micros.saturating_abs())]));
        }
        let n = match amount {
            // A string amount is read as its leading integer, as MySQL does.
            Value::Bytes(b) => {
                let text = b.trim_ascii_start();
                let negative = text.first() == Some(&b'-');
                let digits = text.strip_prefix(b"-").unwrap_or(text);
                let magnitude = digits
                    .iter()
                    .take_while(|c| c.is_ascii_digit())
                    .fold(0i128, |acc, c| {
                        (acc * 10 + i128::from(c - b'0')).min(1 << 80)
                    });
                if negative { -magnitude } else { magnitude }
            }
            Value::UInt(x) => i128::from(*x),
            other => i128::from(cast::to_i64(other)?),
        };
        let n = match unit {
            IntervalUnit::Week => n * 7,
            IntervalUnit::Quarter => n * 3,
            _ => n,
        };
        return Some((n < 0, vec![(fields[0], n.abs())]));
    }
    // A compound unit: the digit groups of the text, right-aligned to the fields.
    let text = cast::to_text(amount)?;
    let trimmed = text.trim_ascii();
    let negative = trimmed.first() == Some(&b'-');
    let mut groups: Vec<(i128, usize)> = Vec::new();
    let mut i = 0;
    while i < trimmed.len() {
        if trimmed[i].is_ascii_digit() {
            let start = i;
            let mut v = 0i128;
            while i < trimmed.len() && trimmed[i].is_ascii_digit() {
                v = (v * 10 + i128::from(trimmed[i] - b'0')).min(1 << 80);
                i += 1;
            }
            groups.push((v, i - start));
        } else {
            i += 1;
        }
    }
    if groups.is_empty() || groups.len() > fields.len() {
        return None;
    }
    let offset = fields.len() - groups.len();
    let values = groups
        .into_iter()
        .enumerate()
        .map(|(k, (v, len))| {
            let field = fields[offset + k];
            if field == Field::Micro && len < 6 {
                (field, v * 10i128.pow(6 - len as u32))
            } else {
                (field, v)
            }
        })
        .collect();
    Some((negative, values))
}

fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        _ if (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 => 29,
        _ => 28,
    }
}

/// `dt` plus `months` (day clamped to the month's end); None outside years 0..=9999.
pub fn add_months(dt: &DateTime, months: i128) -> Option<DateTime> {
    let index = i128::from(dt.date.year) * 12 + i128::from(dt.date.month) - 1 + months;
    if !(0..10_000 * 12).contains(&index) {
        return None;
    }
    let (year, month) = ((index / 12) as i64, (index % 12 + 1) as i64);
    let day = i64::from(dt.date.day).min(days_in_month(year, month));
    let date = Date::new(year as u16, month as u8, day as u8).ok()?;
    Some(DateTime { date, ..*dt })
}

/// `dt` plus `micros` (may be negative); None outside the DATETIME range.
pub fn add_micros(dt: &DateTime, micros: i128) -> Option<DateTime> {
    let total = i128::from(dt.to_micros()).checked_add(micros)?;
    DateTime::from_micros(u64::try_from(total).ok()?).ok()
}

/// The input of a date function: the datetime, whether it was a DATE (or a string or
/// number without a time), and whether it was a string or number (so the result is a
/// string too).
struct Temporal {
    value: DateTime,
    date_only: bool,
    textual: bool,
}

fn read_temporal(v: &Value) -> Option<Temporal> {
    Some(match v {
        Value::Time(t) => Temporal {
            value: super::time::time_on_date(t, super::time::today())?,
            date_only: false,
            textual: false,
        },
        Value::Date(d) => Temporal {
            value: DateTime::from_date(*d),
            date_only: true,
            textual: false,
        },
        Value::DateTime(dt) => Temporal {
            value: *dt,
            date_only: false,
            textual: false,
        },
        Value::Bytes(b) => {
            let parsed = parse_datetime(b)?;
            Temporal {
                value: parsed.value,
                date_only: !parsed.has_time,
                textual: true,
            }
        }
        other => {
            let value = to_datetime(other)?;
            let digits = cast::to_i64(other).map_or(0, |n| n.max(1).ilog10() + 1);
            Temporal {
                value,
                date_only: digits <= 8,
                textual: true,
            }
        }
    })
}

/// `v + INTERVAL amount unit` (or `-` when `subtract`); see the module documentation
/// for result types. NULL for NULL inputs, an invalid date, an unreadable interval or
/// a result out of range (MySQL warns; warnings come later). Never an error today.
pub fn add_interval(
    v: &Value,
    amount: &Value,
    unit: IntervalUnit,
    subtract: bool,
) -> Result<Value> {
    if v.is_null() || amount.is_null() {
        return Ok(Value::Null);
    }
    if let (Value::Time(t), true) = (v, unit.is_time_unit()) {
        let Some((negative, values)) = interval_fields(amount, unit) else {
            return Ok(Value::Null);
        };
        let micros = values.iter().fold(0i128, |sum, (field, value)| {
            sum.saturating_add(value.saturating_mul(field_micros(*field)))
        });
        let signed = if negative != subtract {
            -micros
        } else {
            micros
        };
        return Ok(super::time::add_interval_micros(t, signed));
    }
    let (Some(input), Some((negative, values))) = (read_temporal(v), interval_fields(amount, unit))
    else {
        return Ok(Value::Null);
    };
    let negative = negative != subtract;
    let result = if unit.is_month_based() {
        let mut months = 0i128;
        for (field, value) in &values {
            months += match field {
                Field::Year => value.saturating_mul(12),
                _ => *value,
            };
        }
        add_months(&input.value, if negative { -months } else { months })
    } else {
        let mut micros = 0i128;
        for (field, value) in &values {
            micros = micros.saturating_add(value.saturating_mul(field_micros(*field)));
        }
        add_micros(&input.value, if negative { -micros } else { micros })
    };
    let Some(result) = result else {
        return Ok(Value::Null);
    };
    let as_date = input.date_only && unit.is_date_unit();
    Ok(match (as_date, input.textual) {
        (true, false) => Value::Date(result.date),
        (false, false) => Value::DateTime(result),
        (true, true) => Value::Bytes(result.date.to_string().into_bytes()),
        (false, true) => Value::Bytes(result.to_string().into_bytes()),
    })
}

/// The result type of `arg + INTERVAL n unit`.
pub fn add_interval_type(arg: SqlType, unit: IntervalUnit) -> SqlType {
    match arg {
        SqlType::Date if unit.is_date_unit() => SqlType::Date,
        SqlType::Date => SqlType::DateTime {
            fsp: if matches!(unit.fields().last(), Some(Field::Micro)) {
                6
            } else {
                0
            },
            timestamp: false,
        },
        SqlType::DateTime { fsp, .. } | SqlType::Time { fsp } => {
            let fsp = if matches!(unit.fields().last(), Some(Field::Micro)) {
                6
            } else {
                fsp
            };
            match arg {
                SqlType::Time { .. } if unit.is_time_unit() => SqlType::Time { fsp },
                _ => SqlType::DateTime {
                    fsp,
                    timestamp: false,
                },
            }
        }
        _ => SqlType::varchar(26),
    }
}

/// `EXTRACT(unit FROM v)`: an integer (compound units concatenate their fields, as
/// `DAY_HOUR` of `'2020-01-02 03:00'` is 203). NULL for NULL or an invalid date.
pub fn extract(unit: IntervalUnit, v: &Value) -> Result<Value> {
    // MySQL reads the value as a TIME for the units of a day or less and the DAY_
    // composites (whose day is 0 then, so `DAY_HOUR` of TIME '30:00:00' is 30), and
    // as a date for the others (a TIME on the current date).
    let as_time = unit.is_time_unit()
        || matches!(
            unit,
            IntervalUnit::DayHour | IntervalUnit::DayMinute | IntervalUnit::DaySecond
        );
    // A string is a TIME there when it has a clock but is no date with one
    // (`'10:11:12'`, which would read as the date 2010-11-12).
    let time_string = match v {
        Value::Bytes(b) if as_time => {
            b.contains(&b':') && !cast::parse_datetime(b).is_some_and(|p| p.has_time)
        }
        _ => false,
    };
    if time_string {
        return Ok(super::time::to_time(v).map_or(Value::Null, |t| extract_time(unit, &t)));
    }
    if let (Value::Time(t), true) = (v, as_time) {
        return Ok(extract_time(unit, t));
    }
    let Some(dt) = to_datetime(v) else {
        return Ok(Value::Null);
    };
    let d = &dt.date;
    let (year, month, day) = (i64::from(d.year), i64::from(d.month), i64::from(d.day));
    let (h, mi, s, us) = (
        i64::from(dt.hour),
        i64::from(dt.minute),
        i64::from(dt.second),
        i64::from(dt.micros),
    );
    Ok(Value::Int(match unit {
        IntervalUnit::Microsecond => us,
        IntervalUnit::Second => s,
        IntervalUnit::Minute => mi,
        IntervalUnit::Hour => h,
        IntervalUnit::Day => day,
        IntervalUnit::Week => i64::from(week(d, 0).0),
        IntervalUnit::Month => month,
        IntervalUnit::Quarter => (month + 2) / 3,
        IntervalUnit::Year => year,
        IntervalUnit::SecondMicrosecond => s * 1_000_000 + us,
        IntervalUnit::MinuteMicrosecond => (mi * 100 + s) * 1_000_000 + us,
        IntervalUnit::MinuteSecond => mi * 100 + s,
        IntervalUnit::HourMicrosecond => (h * 10_000 + mi * 100 + s) * 1_000_000 + us,
        IntervalUnit::HourSecond => h * 10_000 + mi * 100 + s,
        IntervalUnit::HourMinute => h * 100 + mi,
        IntervalUnit::DayMicrosecond => {
            (day * 1_000_000 + h * 10_000 + mi * 100 + s) * 1_000_000 + us
        }
        IntervalUnit::DaySecond => day * 1_000_000 + h * 10_000 + mi * 100 + s,
        IntervalUnit::DayMinute => day * 10_000 + h * 100 + mi,
        IntervalUnit::DayHour => day * 100 + h,
        IntervalUnit::YearMonth => year * 100 + month,
    }))
}

/// `EXTRACT` of a unit of hours or less (or a DAY_ composite, whose day is 0) from a
/// TIME: its fields (hours may pass 23), negative for a negative TIME, as in MySQL.
fn extract_time(unit: IntervalUnit, t: &tarn_row::Time) -> Value {
    let (h, mi, s, us) = (
        i64::from(t.hours()),
        i64::from(t.minute()),
        i64::from(t.second()),
        i64::from(t.fraction_micros()),
    );
    let magnitude = match unit {
        IntervalUnit::Microsecond => us,
        IntervalUnit::Second => s,
        IntervalUnit::Minute => mi,
        IntervalUnit::Hour => h,
        IntervalUnit::SecondMicrosecond => s * 1_000_000 + us,
        IntervalUnit::MinuteMicrosecond => (mi * 100 + s) * 1_000_000 + us,
        IntervalUnit::MinuteSecond => mi * 100 + s,
        IntervalUnit::HourMicrosecond | IntervalUnit::DayMicrosecond => {
            (h * 10_000 + mi * 100 + s) * 1_000_000 + us
        }
        IntervalUnit::HourSecond | IntervalUnit::DaySecond => h * 10_000 + mi * 100 + s,
        IntervalUnit::DayHour => h,
        _ => h * 100 + mi,
    };
    Value::Int(if t.is_negative() {
        -magnitude
    } else {
        magnitude
    })
}

// --- Weeks -----------------------------------------------------------------------------

const WEEK_MONDAY_FIRST: u8 = 1;
const WEEK_YEAR: u8 = 2;
const WEEK_FIRST_WEEKDAY: u8 = 4;

/// MySQL's day number (`TO_DAYS`).
pub fn day_number(d: &Date) -> i64 {
    i64::from(d.to_days())
}

/// The weekday, 0 = Monday .. 6 = Sunday (MySQL's WEEKDAY()).
pub fn weekday(d: &Date) -> u32 {
    ((day_number(d) + 5) % 7) as u32
}

fn days_in_year(year: i64) -> i64 {
    if (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 {
        366
    } else {
        365
    }
}

/// MySQL's `calc_week` with behaviour bits; returns (week, year the week belongs to).
fn calc_week(d: &Date, behaviour: u8) -> (u32, i64) {
    let daynr = day_number(d);
    let mut year = i64::from(d.year);
    let jan1 = Date {
        year: d.year,
        month: 1,
        day: 1,
    };
    let mut first_daynr = day_number(&jan1);
    let monday_first = behaviour & WEEK_MONDAY_FIRST != 0;
    let mut week_year = behaviour & WEEK_YEAR != 0;
    let first_weekday = behaviour & WEEK_FIRST_WEEKDAY != 0;
    let mut wd = (first_daynr + 5 + i64::from(!monday_first)) % 7;
    let starts_late = |wd: i64| (first_weekday && wd != 0) || (!first_weekday && wd >= 4);
    if d.month == 1 && i64::from(d.day) <= 7 - wd {
        if !week_year && starts_late(wd) {
            return (0, year);
        }
        week_year = true;
        year -= 1;
        let days = days_in_year(year);
        first_daynr -= days;
        wd = (wd + 53 * 7 - days) % 7;
    }
    let days = if starts_late(wd) {
        daynr - (first_daynr + (7 - wd))
    } else {
        daynr - (first_daynr - wd)
    };
    if week_year && days >= 52 * 7 {
        let wd_next = (wd + days_in_year(year)) % 7;
        if (!first_weekday && wd_next < 4) || (first_weekday && wd_next == 0) {
            return (1, year + 1);
        }
    }
    ((days / 7 + 1) as u32, year)
}

/// `WEEK(d, mode)` (mode 0..=7): (week, year of the week).
pub fn week(d: &Date, mode: u8) -> (u32, i64) {
    let mut behaviour = mode & 7;
    if behaviour & WEEK_MONDAY_FIRST == 0 {
        behaviour ^= WEEK_FIRST_WEEKDAY;
    }
    calc_week(d, behaviour)
}

// --- DATE_FORMAT ------------------------------------------------------------------------

const MONTH_NAMES: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];
const DAY_NAMES: [&str; 7] = [
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
    "Sunday",
];

pub fn month_name(month: u8) -> &'static str {
    MONTH_NAMES[usize::from(month.clamp(1, 12) - 1)]
}

pub fn day_name(d: &Date) -> &'static str {
    DAY_NAMES[weekday(d) as usize]
}

fn ordinal_suffix(day: u8) -> &'static str {
    match (day % 10, day % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    }
}

/// Day of the year, 1..=366.
pub fn day_of_year(d: &Date) -> i64 {
    let jan1 = Date {
        year: d.year,
        month: 1,
        day: 1,
    };
    day_number(d) - day_number(&jan1) + 1
}

/// Formats `dt` by a MySQL format string (every specifier of DATE_FORMAT).
pub fn format_datetime(dt: &DateTime, format: &[u8]) -> Vec<u8> {
    use std::fmt::Write;
    let d = &dt.date;
    let mut out = String::with_capacity(format.len() * 2);
    let hour12 = match dt.hour % 12 {
        0 => 12,
        h => h,
    };
    let am_pm = if dt.hour < 12 { "AM" } else { "PM" };
    let mut i = 0;
    while i < format.len() {
        let b = format[i];
        if b != b'%' || i + 1 == format.len() {
            // Copy literal bytes through a lossless path.
            let start = i;
            while i < format.len() && !(format[i] == b'%' && i + 1 < format.len()) {
                i += 1;
            }
            out.push_str(&String::from_utf8_lossy(&format[start..i]));
            continue;
        }
        let spec = format[i + 1];
        i += 2;
        let _ = match spec {
            b'Y' => write!(out, "{:04}", d.year),
            b'y' => write!(out, "{:02}", d.year % 100),
            b'm' => write!(out, "{:02}", d.month),
            b'c' => write!(out, "{}", d.month),
            b'd' => write!(out, "{:02}", d.day),
            b'e' => write!(out, "{}", d.day),
            b'D' => write!(out, "{}{}", d.day, ordinal_suffix(d.day)),
            b'H' => write!(out, "{:02}", dt.hour),
            b'k' => write!(out, "{}", dt.hour),
            b'h' | b'I' => write!(out, "{hour12:02}"),
            b'l' => write!(out, "{hour12}"),
            b'i' => write!(out, "{:02}", dt.minute),
            b's' | b'S' => write!(out, "{:02}", dt.second),
            b'f' => write!(out, "{:06}", dt.micros),
            b'p' => write!(out, "{am_pm}"),
            b'r' => write!(out, "{hour12:02}:{:02}:{:02} {am_pm}", dt.minute, dt.second),
            b'T' => write!(out, "{:02}:{:02}:{:02}", dt.hour, dt.minute, dt.second),
            b'W' => write!(out, "{}", day_name(d)),
            b'a' => write!(out, "{}", &day_name(d)[..3]),
            b'M' => write!(out, "{}", month_name(d.month)),
            b'b' => write!(out, "{}", &month_name(d.month)[..3]),
            b'j' => write!(out, "{:03}", day_of_year(d)),
            b'w' => write!(out, "{}", (weekday(d) + 1) % 7),
            b'U' => write!(out, "{:02}", calc_week(d, WEEK_FIRST_WEEKDAY).0),
            b'u' => write!(out, "{:02}", calc_week(d, WEEK_MONDAY_FIRST).0),
            b'V' => write!(out, "{:02}", calc_week(d, WEEK_YEAR | WEEK_FIRST_WEEKDAY).0),
            b'v' => write!(out, "{:02}", calc_week(d, WEEK_YEAR | WEEK_MONDAY_FIRST).0),
            b'X' => write!(out, "{:04}", calc_week(d, WEEK_YEAR | WEEK_FIRST_WEEKDAY).1),
            b'x' => write!(out, "{:04}", calc_week(d, WEEK_YEAR | WEEK_MONDAY_FIRST).1),
            other => {
                // `%%` is `%`, and any other `%c` is `c`, as in MySQL.
                out.push(char::from(other));
                Ok(())
            }
        };
    }
    out.into_bytes()
}

/// `DATE_FORMAT(v, format)`: a string; NULL for NULL or an invalid date.
pub fn date_format(v: &Value, format: &[u8]) -> Result<Value> {
    match to_datetime(v) {
        Some(dt) => Ok(Value::Bytes(format_datetime(&dt, format))),
        None => Ok(Value::Null),
    }
}

// --- STR_TO_DATE -------------------------------------------------------------------------

fn read_number(text: &[u8], i: &mut usize, max_digits: usize) -> Option<u32> {
    let start = *i;
    let mut v = 0u32;
    while *i < text.len() && text[*i].is_ascii_digit() && *i - start < max_digits {
        v = v * 10 + u32::from(text[*i] - b'0');
        *i += 1;
    }
    (*i > start).then_some(v)
}

fn read_name(text: &[u8], i: &mut usize, names: &[&str], abbreviated: bool) -> Option<u32> {
    for (k, name) in names.iter().enumerate() {
        let name = if abbreviated { &name[..3] } else { name };
        let end = *i + name.len();
        if end <= text.len() && text[*i..end].eq_ignore_ascii_case(name.as_bytes()) {
            *i = end;
            return Some(k as u32);
        }
    }
    None
}

/// `STR_TO_DATE(text, format)`: a DATE when the format has no time specifier, else a
/// DATETIME; NULL when the text does not match or is not a valid date. Supports
/// `%Y %y %m %c %d %e %H %k %h %I %l %i %s %S %f %p %M %b %W %a %j %T %r %%`; spaces in
/// the format match any run of spaces; other characters match themselves.
pub fn str_to_date(text: &[u8], format: &[u8]) -> Value {
    let (mut year, mut month, mut day) = (0u32, 0u32, 0u32);
    let (mut hour, mut minute, mut second, mut micros) = (0u32, 0u32, 0u32, 0u32);
    let (mut pm, mut twelve_hour, mut has_time) = (None::<bool>, false, false);
    let mut day_of_year = None;
    let (mut i, mut f) = (0usize, 0usize);
    macro_rules! num {
        ($max:expr) => {
            match read_number(text, &mut i, $max) {
                Some(v) => v,
                None => return Value::Null,
            }
        };
    }
    while f < format.len() {
        let c = format[f];
        if c.is_ascii_whitespace() {
            while i < text.len() && text[i].is_ascii_whitespace() {
                i += 1;
            }
            f += 1;
            continue;
        }
        if c != b'%' || f + 1 == format.len() {
            if text.get(i) != Some(&c) {
                return Value::Null;
            }
            i += 1;
            f += 1;
            continue;
        }
        let spec = format[f + 1];
        f += 2;
        // MySQL skips spaces in the text before each specifier.
        while i < text.len() && text[i].is_ascii_whitespace() {
            i += 1;
        }
        match spec {
            b'Y' => {
                let start = i;
                year = num!(4);
                if i - start <= 2 {
                    year = if year < 70 { 2000 + year } else { 1900 + year };
                }
            }
            b'y' => {
                let y = num!(2);
                year = if y < 70 { 2000 + y } else { 1900 + y };
            }
            b'm' | b'c' => month = num!(2),
            b'd' | b'e' => day = num!(2),
            b'j' => day_of_year = Some(num!(3)),
            b'H' | b'k' => {
                hour = num!(2);
                has_time = true;
            }
            b'h' | b'I' | b'l' => {
                hour = num!(2);
                twelve_hour = true;
                has_time = true;
            }
            b'i' => {
                minute = num!(2);
                has_time = true;
            }
            b's' | b'S' => {
                second = num!(2);
                has_time = true;
            }
            b'f' => {
                let start = i;
                let v = num!(6);
                micros = v * 10u32.pow(6 - (i - start) as u32);
                has_time = true;
            }
            b'p' => {
                let rest = &text[i.min(text.len())..];
                if rest.len() >= 2 && rest[..2].eq_ignore_ascii_case(b"AM") {
                    pm = Some(false);
                } else if rest.len() >= 2 && rest[..2].eq_ignore_ascii_case(b"PM") {
                    pm = Some(true);
                } else {
                    return Value::Null;
                }
                i += 2;
            }
            b'M' | b'b' => match read_name(text, &mut i, &MONTH_NAMES, spec == b'b') {
                Some(k) => month = k + 1,
                None => return Value::Null,
            },
            b'W' | b'a' => {
                if read_name(text, &mut i, &DAY_NAMES, spec == b'a').is_none() {
                    return Value::Null;
                }
            }
            b'T' | b'r' => {
                hour = num!(2);
                for field in [&mut minute, &mut second] {
                    if text.get(i) != Some(&b':') {
                        return Value::Null;
                    }
                    i += 1;
                    *field = num!(2);
                }
                has_time = true;
                if spec == b'r' {
                    twelve_hour = true;
                    while i < text.len() && text[i] == b' ' {
                        i += 1;
                    }
                    let rest = &text[i.min(text.len())..];
                    if rest.len() >= 2 && rest[..2].eq_ignore_ascii_case(b"PM") {
                        pm = Some(true);
                        i += 2;
                    } else if rest.len() >= 2 && rest[..2].eq_ignore_ascii_case(b"AM") {
                        pm = Some(false);
                        i += 2;
                    }
                }
            }
            other => {
                if text.get(i) != Some(&other) {
                    return Value::Null;
                }
                i += 1;
            }
        }
    }
    if twelve_hour {
        if !(1..=12).contains(&hour) {
            return Value::Null;
        }
        hour %= 12;
        if pm == Some(true) {
            hour += 12;
        }
    } else if pm == Some(true) && hour < 12 {
        hour += 12;
    }
    if let Some(n) = day_of_year {
        let Ok(jan1) = Date::new(year as u16, 1, 1) else {
            return Value::Null;
        };
        let dt = add_micros(
            &DateTime::from_date(jan1),
            (i128::from(n) - 1) * field_micros(Field::Day),
        );
        match dt {
            Some(dt) if n >= 1 && i64::from(n) <= days_in_year(i64::from(year)) => {
                (month, day) = (u32::from(dt.date.month), u32::from(dt.date.day));
            }
            _ => return Value::Null,
        }
    }
    let Some(date) = u16::try_from(year)
        .ok()
        .and_then(|y| Date::new(y, u8::try_from(month).ok()?, u8::try_from(day).ok()?).ok())
    else {
        return Value::Null;
    };
    if !has_time {
        return Value::Date(date);
    }
    let (Ok(h), Ok(m), Ok(s)) = (
        u8::try_from(hour),
        u8::try_from(minute),
        u8::try_from(second),
    ) else {
        return Value::Null;
    };
    DateTime::new(date, h, m, s, micros).map_or(Value::Null, Value::DateTime)
}

/// Whether a STR_TO_DATE format has time specifiers (its result is then a DATETIME).
pub fn format_has_time(format: &[u8]) -> bool {
    format
        .windows(2)
        .any(|w| w[0] == b'%' && b"HkhIlisSfTrp".contains(&w[1]))
}

// --- Differences ----------------------------------------------------------------------------

/// Whole months from `a` to `b`, truncated toward zero (a month counts once the day
/// and time of day of `b` reach those of `a`).
fn months_between(a: &DateTime, b: &DateTime) -> i64 {
    let months = (i64::from(b.date.year) * 12 + i64::from(b.date.month))
        - (i64::from(a.date.year) * 12 + i64::from(a.date.month));
    let rest = |x: &DateTime| (x.date.day, x.hour, x.minute, x.second, x.micros);
    if months > 0 && rest(b) < rest(a) {
        months - 1
    } else if months < 0 && rest(b) > rest(a) {
        months + 1
    } else {
        months
    }
}

/// `TIMESTAMPDIFF(unit, a, b)`: `b - a` in whole units (truncated toward zero).
/// NULL for NULL or invalid dates; error 1064-style for a compound unit (MySQL's
/// grammar allows only simple units here).
pub fn timestamp_diff(unit: IntervalUnit, a: &Value, b: &Value) -> Result<Value> {
    let (Some(x), Some(y)) = (to_datetime(a), to_datetime(b)) else {
        return Ok(Value::Null);
    };
    let micros = i128::from(y.to_micros()) - i128::from(x.to_micros());
    let per = |field| micros / field_micros(field);
    let n = match unit {
        IntervalUnit::Microsecond => micros,
        IntervalUnit::Second => per(Field::Second),
        IntervalUnit::Minute => per(Field::Minute),
        IntervalUnit::Hour => per(Field::Hour),
        IntervalUnit::Day => per(Field::Day),
        IntervalUnit::Week => per(Field::Day) / 7,
        IntervalUnit::Month => i128::from(months_between(&x, &y)),
        IntervalUnit::Quarter => i128::from(months_between(&x, &y) / 3),
        IntervalUnit::Year => i128::from(months_between(&x, &y) / 12),
        other => {
            return Err(Error::sql(
                1064,
                "42000",
                format!(
                    "You have an error in your SQL syntax; TIMESTAMPDIFF does not take the unit {}",
                    other.name()
                ),
            ));
        }
    };
    Ok(Value::Int(n as i64))
}

/// The seconds since 1970 a TIMESTAMP may hold on a 64-bit MySQL 8 (1970-01-01
/// 00:00:01 to 3001-01-18 23:59:59 UTC), the range in which `CONVERT_TZ` converts.
const TIMESTAMP_SECONDS: std::ops::RangeInclusive<i128> = 1..=32_536_771_199;

/// `CONVERT_TZ(v, from, to)`: the DATETIME `v` read in zone `from`, shown in zone `to`
/// (zones as [`TimeZone::resolve`] reads them; `SYSTEM` is UTC). NULL for an invalid
/// date or an unknown zone. A value whose UTC time falls outside the TIMESTAMP range
/// is returned unchanged, as MySQL does.
pub fn convert_tz(v: &Value, from: &[u8], to: &[u8]) -> Value {
    let zone = |name: &[u8]| TimeZone::resolve(std::str::from_utf8(name).ok()?);
    let (Some(dt), Some(from), Some(to)) = (to_datetime(v), zone(from), zone(to)) else {
        return Value::Null;
    };
    let utc_micros = from.local_to_unix_micros(&dt);
    if !TIMESTAMP_SECONDS.contains(&utc_micros.div_euclid(1_000_000)) {
        return Value::DateTime(dt);
    }
    to.to_local(utc_micros).map_or(Value::Null, Value::DateTime)
}

/// The fraction digits a constant datetime string is written with (0..=6): what
/// MySQL types a function of it by (`CONVERT_TZ('2004-01-01 12:00:00.5', ...)` is a
/// DATETIME(1)).
pub fn string_fsp(text: &[u8]) -> u8 {
    let text = text.trim_ascii();
    match parse_datetime(text) {
        Some(p) if p.has_time => text.iter().rposition(|&b| b == b'.').map_or(0, |dot| {
            text[dot + 1..]
                .iter()
                .take_while(|b| b.is_ascii_digit())
                .count()
                .min(6) as u8
        }),
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(text: &str) -> Value {
        Value::Bytes(text.as_bytes().to_vec())
    }

    fn date(y: u16, m: u8, d: u8) -> Date {
        Date::new(y, m, d).unwrap()
    }

    fn dt(text: &str) -> Value {
        Value::DateTime(DateTime::parse(text).unwrap())
    }

    fn text(v: Value) -> String {
        String::from_utf8(cast::to_text(&v).unwrap_or(b"NULL".to_vec())).unwrap()
    }

    fn add(v: Value, n: Value, unit: &str) -> String {
        text(add_interval(&v, &n, parse_unit(unit).unwrap(), false).unwrap())
    }

    #[test]
    fn intervals() {
        let d = Value::Date(date(2020, 1, 31));
        assert_eq!(add(d.clone(), Value::Int(1), "month"), "2020-02-29");
        assert!(matches!(
            add_interval(&d, &Value::Int(1), IntervalUnit::Day, false).unwrap(),
            Value::Date(_)
        ));
        assert_eq!(add(d.clone(), Value::Int(1), "DAY"), "2020-02-01");
        assert_eq!(add(d.clone(), Value::Int(1), "HOUR"), "2020-01-31 01:00:00");
        assert_eq!(add(d.clone(), Value::Int(-1), "YEAR"), "2019-01-31");
        assert_eq!(add(d.clone(), Value::Int(1), "QUARTER"), "2020-04-30");
        assert_eq!(add(d.clone(), Value::Int(2), "WEEK"), "2020-02-14");
        assert_eq!(add(d.clone(), s("1-2"), "YEAR_MONTH"), "2021-03-31");
        assert_eq!(
            add(dt("2020-12-31 23:59:59"), s("1 1:1:1"), "DAY_SECOND"),
            "2021-01-02 01:01:00"
        );
        assert_eq!(
            add(
                dt("1992-12-31 23:59:59.000002"),
                s("1.999999"),
                "SECOND_MICROSECOND"
            ),
            "1993-01-01 00:00:01.000001"
        );
        assert_eq!(
            add(dt("2020-01-01 00:00:00"), s("1:30"), "HOUR_SECOND"),
            "2020-01-01 00:01:30"
        );
        assert_eq!(add(s("2020-01-01"), Value::Int(1), "DAY"), "2020-01-02");
        assert_eq!(
            add(s("2020-01-01"), Value::Int(1), "SECOND"),
            "2020-01-01 00:00:01"
        );
        assert_eq!(
            add(dt("2020-01-01 00:00:00"), Value::Double(1.5), "SECOND"),
            "2020-01-01 00:00:01.500000"
        );
        assert_eq!(add(s("not a date"), Value::Int(1), "DAY"), "NULL");
        assert_eq!(
            add(dt("2020-01-01 00:00:00"), s("-1e999"), "SECOND"),
            "NULL"
        );
        assert_eq!(
            add(dt("2020-01-01 00:00:00"), Value::Double(-1e300), "SECOND"),
            "NULL"
        );
        assert_eq!(
            add(Value::Date(date(9999, 12, 31)), Value::Int(1), "DAY"),
            "NULL"
        );
        assert_eq!(
            add(Value::Date(date(2020, 3, 1)), Value::Int(1 << 40), "DAY"),
            "NULL"
        );
        let sub = add_interval(&d, &Value::Int(1), IntervalUnit::Month, true).unwrap();
        assert_eq!(text(sub), "2019-12-31");
        assert_eq!(parse_unit("sql_tsi_day"), Some(IntervalUnit::Day));
        assert_eq!(parse_unit("fortnight"), None);
    }

    #[test]
    fn extracts() {
        let v = dt("2020-01-02 03:04:05.000006");
        let e = |u: IntervalUnit| extract(u, &v).unwrap();
        assert_eq!(e(IntervalUnit::Year), Value::Int(2020));
        assert_eq!(e(IntervalUnit::YearMonth), Value::Int(202001));
        assert_eq!(e(IntervalUnit::DayHour), Value::Int(203));
        assert_eq!(e(IntervalUnit::DayMicrosecond), Value::Int(2030405000006));
        assert_eq!(e(IntervalUnit::Quarter), Value::Int(1));
        assert_eq!(e(IntervalUnit::Microsecond), Value::Int(6));
        assert_eq!(extract(IntervalUnit::Day, &s("bad")).unwrap(), Value::Null);
    }

    #[test]
    fn weeks_match_mysql() {
        // MySQL: WEEK('2008-02-20') = 7, WEEK('2008-02-20', 1) = 8,
        // WEEK('2008-12-31', 1) = 53, YEARWEEK('1987-01-01') = 198652.
        assert_eq!(week(&date(2008, 2, 20), 0).0, 7);
        assert_eq!(week(&date(2008, 2, 20), 1).0, 8);
        assert_eq!(week(&date(2008, 12, 31), 1).0, 53);
        assert_eq!(week(&date(2000, 1, 1), 0).0, 0);
        assert_eq!(week(&date(2000, 1, 1), 2), (52, 1999));
        assert_eq!(week(&date(1987, 1, 1), 2), (52, 1986));
        assert_eq!(weekday(&date(2020, 1, 1)), 2);
    }

    #[test]
    fn formats() {
        let v = dt("2009-10-04 22:23:00");
        let f = |fmt: &str| text(date_format(&v, fmt.as_bytes()).unwrap());
        assert_eq!(f("%W %M %Y"), "Sunday October 2009");
        assert_eq!(f("%H:%i:%s"), "22:23:00");
        assert_eq!(f("%D %y %a %d %m %b %j"), "4th 09 Sun 04 10 Oct 277");
        assert_eq!(
            f("%H %k %I %r %T %S %w"),
            "22 22 10 10:23:00 PM 22:23:00 00 0"
        );
        assert_eq!(f("%c/%e %l%p %f %% %q"), "10/4 10PM 000000 % q");
        let y = Value::Date(date(1999, 1, 1));
        assert_eq!(text(date_format(&y, b"%X %V").unwrap()), "1998 52");
        assert_eq!(
            text(date_format(&y, b"%U %u %v %x").unwrap()),
            "00 00 53 1998"
        );
        assert_eq!(
            text(date_format(&Value::Date(date(2006, 6, 1)), b"%d").unwrap()),
            "01"
        );
        assert_eq!(date_format(&Value::Null, b"%d").unwrap(), Value::Null);
    }

    #[test]
    fn str_to_dates() {
        let p = |t: &str, f: &str| text(str_to_date(t.as_bytes(), f.as_bytes()));
        assert_eq!(p("01,5,2013", "%d,%m,%Y"), "2013-05-01");
        assert_eq!(p("May 1, 2013", "%M %d,%Y"), "2013-05-01");
        assert_eq!(p("a09:30:17", "a%h:%i:%s"), "NULL");
        assert_eq!(
            p("2013-05-01 09:30:17 pm", "%Y-%m-%d %h:%i:%s %p"),
            "2013-05-01 21:30:17"
        );
        assert_eq!(p("2013-02-30", "%Y-%m-%d"), "NULL");
        assert_eq!(p("20130501 1230", "%Y%m%d %H%i"), "2013-05-01 12:30:00");
        assert_eq!(p("2013 032", "%Y %j"), "2013-02-01");
        assert!(format_has_time(b"%Y %H"));
        assert!(!format_has_time(b"%Y-%m-%d"));
    }

    #[test]
    fn timestamp_diffs() {
        let d = |u: &str, a: &str, b: &str| {
            timestamp_diff(parse_unit(u).unwrap(), &s(a), &s(b)).unwrap()
        };
        assert_eq!(d("MONTH", "2003-02-01", "2003-05-01"), Value::Int(3));
        assert_eq!(d("YEAR", "2002-05-01", "2001-01-01"), Value::Int(-1));
        assert_eq!(
            d("MINUTE", "2003-02-01", "2003-05-01 12:05:55"),
            Value::Int(128885)
        );
        assert_eq!(d("MONTH", "2020-01-31", "2020-02-29"), Value::Int(0));
        assert_eq!(d("DAY", "2020-01-02", "2020-01-01 00:00:01"), Value::Int(0));
        assert!(timestamp_diff(IntervalUnit::DayHour, &s("2020-01-01"), &s("2020-01-01")).is_err());
    }
}
