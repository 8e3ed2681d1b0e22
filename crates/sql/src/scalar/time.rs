//! TIME and YEAR: reading them as MySQL does, and the TIME functions.
//!
//! **Reading a TIME** ([`parse_time`], [`to_time`]) follows MySQL's `str_to_time` and
//! `number_to_time`:
//!
//! - Text: `[-][D ]H[:M[:S]][.f]` (`'1 12:00'` is 36 hours), or digits alone read as
//!   `[H]HMMSS` (`'1234'` is `00:12:34`), or a datetime of at least 12 characters,
//!   whose time of day is taken (`'2020-01-01 10:00:00'`). A seventh fraction digit
//!   rounds. Minutes or seconds above 59 make it no TIME at all; more than
//!   `838:59:59` is clipped to it (and noted, [`ParsedTime::clipped`]); characters
//!   after the value are noted ([`ParsedTime::truncated`]); text that starts with no
//!   digit is no TIME.
//! - Numbers: `HHMMSS[.ffffff]` (`123456.5` is `12:34:56.5`), negative allowed; a
//!   number of at least 11 digits is read as a datetime (its time of day). Out of
//!   range, or minutes or seconds above 59, is no TIME (NULL, where text clips).
//! - DATETIME: its time of day; DATE: `00:00:00`.
//!
//! A TIME used with a date (`CAST(t AS DATETIME)`, compared with a DATETIME) is put
//! on the current date ([`today`]), as MySQL does. In numeric context a TIME is the
//! number `[-]HHMMSS` (with six fraction digits when it has a fraction,
//! [`time_number`]).
//!
//! **Storing** (strict mode, [`to_time_column`] and [`to_year_column`]): every value
//! that is not a TIME, is clipped or has characters after it is error 1292 `Incorrect
//! time value`, as MySQL's strict mode turns each of those warnings into it. YEAR
//! follows MySQL's `Field_year`: integers 1..=69 are 2001..=2069, 70..=99 are
//! 1970..=1999, 0 is `0000`; the strings `'0'` and `'00'` are 2000 (only `'0000'` is
//! `0000`); numbers round half away from zero first; anything else outside
//! 1901..=2155 is 1264, text that is no number 1366 and a number with text after it
//! 1265.
//!
//! MySQL 8 rounds a fraction to a column's fsp (`CAST('1.5' AS TIME)` is
//! `00:00:02`); MariaDB cuts it. Tarn rounds.
//!
//! Where Tarn differs: a value does not carry its type, so in string context
//! (`CONCAT`, `LENGTH`, `CAST(.. AS CHAR)`) a TIME shows six fraction digits whenever
//! it has a fraction, whatever its fsp (as a DATETIME does here), and a YEAR 0 is `0`
//! (MySQL shows the type's digits and `0000`). Result columns show both as MySQL does
//! ([`super::cast::to_text_as`]).

use std::fmt::Write as _;

use tarn_common::{Error, Result};
use tarn_row::datetime::{Date, DateTime, Time};
use tarn_row::decimal::Decimal;
use tarn_row::limits::{FSP_MAX, YEAR_TYPE_MAX, YEAR_TYPE_MIN};
use tarn_row::value::Value;

use super::cast::{self, incorrect_datetime, incorrect_value, numeric_prefix};
use super::decimal::{self as dec, RoundMode};
use crate::types::SqlType;

const MICROS_PER_SECOND: i64 = 1_000_000;
/// `838:59:59` as the number `HHMMSS` (MySQL's `TIME_MAX_VALUE`).
const TIME_MAX_NUMBER: u64 = 8_385_959;
/// From this magnitude on a number is read as a datetime (`'0001-00-00 00-00-00'`).
const DATETIME_NUMBER_MIN: u64 = 10_000_000_000;

/// A TIME read from text, with what MySQL would warn about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParsedTime {
    pub value: Time,
    /// Fraction digits as written, at most 6: the fsp a constant types with.
    pub fraction_digits: u8,
    /// Characters other than spaces followed the value.
    pub truncated: bool,
    /// The value was beyond `±838:59:59` and was clipped to it.
    pub clipped: bool,
    /// The text was a datetime; this is its date and time (`value` is its time of day).
    pub datetime: Option<DateTime>,
}

/// Reads a run of digits at `*i`, saturating; None when there is none.
fn digits(text: &[u8], i: &mut usize) -> Option<u64> {
    let start = *i;
    let mut v = 0u64;
    while *i < text.len() && text[*i].is_ascii_digit() {
        v = v
            .saturating_mul(10)
            .saturating_add(u64::from(text[*i] - b'0'));
        *i += 1;
    }
    (*i > start).then_some(v)
}

/// Whether `text` starts like a date followed by a time (`2020-01-01 10:...`): digits,
/// punctuation, digits, punctuation, digits, then a space or `T`. Such text that is
/// not a valid datetime is no TIME either (MySQL's `str_to_datetime` error).
fn looks_like_datetime(text: &[u8]) -> bool {
    let mut i = 0;
    for k in 0..3 {
        if digits(text, &mut i).is_none() {
            return false;
        }
        let separator = text.get(i).copied();
        let wanted = match k {
            2 => matches!(separator, Some(b' ' | b'T')),
            _ => separator.is_some_and(|b| b.is_ascii_punctuation()),
        };
        if !wanted {
            return false;
        }
        i += 1;
    }
    true
}

/// A TIME from text as MySQL's `str_to_time` reads it (see the module documentation);
/// None when the text is no TIME.
pub fn parse_time(bytes: &[u8]) -> Option<ParsedTime> {
    let text = bytes.trim_ascii_start();
    let (negative, text) = match text.strip_prefix(b"-") {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    if text.is_empty() {
        return None;
    }
    if text.len() >= 12 {
        if let Some(parsed) = cast::parse_datetime(text).filter(|p| p.has_time) {
            let dt = parsed.value;
            let micros = (i64::from(dt.hour) * 3600 + i64::from(dt.minute) * 60)
                * MICROS_PER_SECOND
                + i64::from(dt.second) * MICROS_PER_SECOND
                + i64::from(dt.micros);
            return Some(ParsedTime {
                value: Time::from_micros(micros).ok()?,
                fraction_digits: fraction_digits_of(text),
                truncated: !parsed.clean,
                clipped: false,
                datetime: Some(dt),
            });
        }
        if looks_like_datetime(text) {
            return None;
        }
    }
    // [days] hours : minutes : seconds, or HHMMSS.
    let mut i = 0;
    let first = digits(text, &mut i)?;
    if first > u64::from(u32::MAX) {
        return None;
    }
    let end_of_days = i;
    while i < text.len() && text[i].is_ascii_whitespace() {
        i += 1;
    }
    let mut fields = [0u64; 4]; // days, hours, minutes, seconds
    let rest = text.len() - i;
    let hhmmss = if rest > 1 && i != end_of_days && text[i].is_ascii_digit() {
        fields[0] = first;
        Some(1)
    } else if rest > 1 && text[i] == b':' && text[i + 1].is_ascii_digit() {
        fields[1] = first;
        i += 1;
        Some(2)
    } else {
        i = end_of_days;
        fields[1] = first / 10_000;
        fields[2] = first / 100 % 100;
        fields[3] = first % 100;
        None
    };
    if let Some(mut state) = hhmmss {
        loop {
            fields[state] = digits(text, &mut i).unwrap_or(0);
            state += 1;
            if state == 4 || text.len() - i < 2 || text[i] != b':' || !text[i + 1].is_ascii_digit()
            {
                break;
            }
            i += 1;
        }
    }
    // The fraction: six digits, a seventh rounds, the rest are skipped.
    let (mut micros, mut fraction_digits, mut round_up) = (0u64, 0u8, false);
    if text.len() - i >= 2 && text[i] == b'.' && text[i + 1].is_ascii_digit() {
        i += 1;
        let mut count = 0;
        while i < text.len() && text[i].is_ascii_digit() {
            let digit = u64::from(text[i] - b'0');
            match count {
                0..6 => micros = micros * 10 + digit,
                6 => round_up = digit >= 5,
                _ => {}
            }
            count += 1;
            i += 1;
        }
        fraction_digits = count.min(6) as u8;
        micros *= 10u64.pow(6 - u32::from(fraction_digits));
    } else if text.len() - i == 1 && text[i] == b'.' {
        i += 1;
    }
    // An exponent means the text was a number in scientific notation: no TIME.
    if text.len() - i > 1
        && matches!(text[i], b'e' | b'E')
        && (text[i + 1].is_ascii_digit()
            || (matches!(text[i + 1], b'+' | b'-')
                && text.get(i + 2).is_some_and(u8::is_ascii_digit)))
    {
        return None;
    }
    let [days, hours, minutes, seconds] = fields;
    if minutes > 59 || seconds > 59 {
        return None;
    }
    let hours = days.checked_mul(24)?.checked_add(hours)?;
    let total = hours
        .checked_mul(3600)
        .and_then(|s| s.checked_add(minutes * 60 + seconds))
        .and_then(|s| s.checked_mul(MICROS_PER_SECOND as u64))
        .and_then(|m| m.checked_add(micros + u64::from(round_up)));
    let max = Time::MAX.micros() as u64;
    let (magnitude, clipped) = match total {
        Some(m) if m <= max => (m as i64, false),
        _ => (max as i64, true),
    };
    let value = Time::from_micros(if negative { -magnitude } else { magnitude }).ok()?;
    let truncated = text[i..].iter().any(|b| !b.is_ascii_whitespace());
    Some(ParsedTime {
        value,
        fraction_digits,
        truncated,
        clipped,
        datetime: None,
    })
}

/// Digits after the last `.` of a datetime string, at most 6.
fn fraction_digits_of(text: &[u8]) -> u8 {
    text.iter().rposition(|&b| b == b'.').map_or(0, |dot| {
        text[dot + 1..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count()
            .min(6) as u8
    })
}

/// A TIME from a number `[-]HHMMSS` and a fraction in microseconds (already
/// rounded, at most a million); None when it is no TIME (see the module
/// documentation).
fn number_to_time(negative: bool, magnitude: u64, micros: u64) -> Option<Time> {
    if magnitude > TIME_MAX_NUMBER {
        if negative || magnitude < DATETIME_NUMBER_MIN {
            return None;
        }
        let dt = cast::number_to_datetime(i64::try_from(magnitude).ok()?, 0)?;
        return time_of_day(&dt, micros.min(999_999) as u32);
    }
    let (hours, minutes, seconds) = (magnitude / 10_000, magnitude / 100 % 100, magnitude % 100);
    if minutes > 59 || seconds > 59 {
        return None;
    }
    let whole = Time::from_parts(negative, hours, minutes, seconds, 0)?;
    let step = i64::try_from(micros).ok()?;
    Time::from_micros(whole.micros() + if negative { -step } else { step }).ok()
}

fn time_of_day(dt: &DateTime, micros: u32) -> Option<Time> {
    Time::from_parts(
        false,
        u64::from(dt.hour),
        u64::from(dt.minute),
        u64::from(dt.second),
        u64::from(micros),
    )
}

/// A decimal as `[-]HHMMSS.ffffff` (fraction rounded to microseconds).
fn decimal_to_time(d: &Decimal) -> Option<Time> {
    let rounded = dec::round_to(d, 6, RoundMode::HalfAwayFromZero).ok()?;
    let (mantissa, scale) = dec::parts(&rounded).ok()?;
    let per_unit = 10i128.pow(u32::from(scale));
    let magnitude = mantissa.unsigned_abs();
    let whole = u64::try_from(magnitude / per_unit as u128).ok()?;
    let fraction = (magnitude % per_unit as u128) as u64 * 10u64.pow(6 - u32::from(scale));
    number_to_time(mantissa < 0, whole, fraction)
}

/// Any value as a TIME, leniently (a SELECT's conversion; see the module
/// documentation); None for NULL and anything that is no TIME.
pub fn to_time(v: &Value) -> Option<Time> {
    match v {
        Value::Null => None,
        Value::Time(t) => Some(*t),
        Value::DateTime(dt) => time_of_day(dt, dt.micros),
        Value::Date(_) => Some(Time::ZERO),
        Value::Bytes(b) => parse_time(b).map(|p| p.value),
        Value::Int(n) => number_to_time(*n < 0, n.unsigned_abs(), 0),
        Value::UInt(n) => number_to_time(false, *n, 0),
        Value::Decimal(d) => decimal_to_time(d),
        Value::Float(_) | Value::Double(_) => {
            let f = cast::to_f64(v)?;
            if !f.is_finite() || f.abs() >= 1e18 {
                return None;
            }
            decimal_to_time(&Decimal::from_f64(f)?)
        }
    }
}

/// A TIME as the number MySQL uses in numeric context: `[-]HHMMSS` as an `Int`, or a
/// `Decimal` with six fraction digits when it has a fraction.
pub fn time_number(t: &Time) -> Value {
    let whole = i64::from(t.hours()) * 10_000 + i64::from(t.minute()) * 100 + i64::from(t.second());
    let sign = if t.is_negative() { -1 } else { 1 };
    if t.fraction_micros() == 0 {
        return Value::Int(sign * whole);
    }
    let m = (i128::from(whole) * 1_000_000 + i128::from(t.fraction_micros())) * i128::from(sign);
    Decimal::from_i128(m, 6).map_or(Value::Null, Value::Decimal)
}

/// The current date (of the same clock as `NOW()`): what a TIME is put on when a
/// date is needed.
pub fn today() -> Date {
    crate::session::now().date
}

/// `t` on `date` (a negative or long TIME moves to other days); None past the
/// DATETIME range.
pub fn time_on_date(t: &Time, date: Date) -> Option<DateTime> {
    super::date::add_micros(&DateTime::from_date(date), i128::from(t.micros()))
}

/// The TIME or datetime a time function reads from its argument: a string that is a
/// datetime, a DATE or a DATETIME is a datetime; anything else that reads as a TIME
/// is a TIME.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Moment {
    Time(Time),
    DateTime(DateTime),
}

pub fn to_moment(v: &Value) -> Option<Moment> {
    match v {
        Value::Date(d) => Some(Moment::DateTime(DateTime::from_date(*d))),
        Value::DateTime(dt) => Some(Moment::DateTime(*dt)),
        Value::Bytes(b) => {
            let parsed = parse_time(b)?;
            Some(match parsed.datetime {
                Some(dt) => Moment::DateTime(dt),
                None => Moment::Time(parsed.value),
            })
        }
        Value::Int(_) | Value::UInt(_) | Value::Decimal(_)
            if cast::to_i64(v).is_some_and(|n| n.unsigned_abs() >= DATETIME_NUMBER_MIN) =>
        {
            cast::to_datetime(v).map(Moment::DateTime)
        }
        other => to_time(other).map(Moment::Time),
    }
}

/// A TIME of `micros`, clipped to `±838:59:59` (as MySQL clips, with a warning).
fn clipped_time(micros: i128) -> Time {
    let max = i128::from(Time::MAX.micros());
    Time::from_micros(micros.clamp(-max, max) as i64).expect("a clipped TIME is in range")
}

// --- Types -------------------------------------------------------------------------------

/// The fraction digits a value of type `ty` brings to a TIME function (MySQL's
/// `time_precision`): a temporal type's fsp, a DECIMAL's scale, none for integers, the
/// digits written in a constant string, and six for anything else.
pub fn time_precision(ty: SqlType, constant: Option<&Value>) -> u8 {
    match ty {
        SqlType::Time { fsp } | SqlType::DateTime { fsp, .. } => fsp,
        SqlType::Date | SqlType::Int { .. } | SqlType::UInt { .. } | SqlType::Year => 0,
        SqlType::Null => 0,
        SqlType::Decimal { scale, .. } => scale.min(FSP_MAX),
        _ => match constant {
            Some(Value::Bytes(b)) => parse_time(b).map_or(FSP_MAX, |p| p.fraction_digits),
            _ => FSP_MAX,
        },
    }
}

/// The result type of `ADDTIME`/`SUBTIME` on a first argument of type `first`: a
/// DATETIME stays one, a TIME stays one, anything else gives a string (the datetime
/// or the time as text).
pub fn add_time_type(first: SqlType, fsp: u8) -> SqlType {
    match first {
        SqlType::DateTime { .. } | SqlType::Date => SqlType::DateTime {
            fsp,
            timestamp: false,
        },
        SqlType::Time { .. } => SqlType::Time { fsp },
        _ => SqlType::varchar(26),
    }
}

// --- Functions ---------------------------------------------------------------------------

/// `TIMEDIFF(a, b)`: `a - b` as a TIME (clipped to the range). NULL unless both are
/// TIMEs or both datetimes.
pub fn timediff(a: &Value, b: &Value) -> Value {
    let micros = match (to_moment(a), to_moment(b)) {
        (Some(Moment::Time(x)), Some(Moment::Time(y))) => {
            i128::from(x.micros()) - i128::from(y.micros())
        }
        (Some(Moment::DateTime(x)), Some(Moment::DateTime(y))) => {
            i128::from(x.to_micros()) - i128::from(y.to_micros())
        }
        _ => return Value::Null,
    };
    Value::Time(clipped_time(micros))
}

/// `ADDTIME(a, b)` (`SUBTIME` when `subtract`): a datetime or TIME `a` moved by the
/// TIME `b`. NULL when `b` is a datetime, `a` is neither, or a datetime result leaves
/// the DATETIME range; a TIME result is clipped. `as_text` gives the result as a
/// string (the call's type is a string when `a` is not typed as a date or TIME).
pub fn add_time(a: &Value, b: &Value, subtract: bool, as_text: bool) -> Value {
    let Some(Moment::Time(delta)) = to_moment(b) else {
        return Value::Null;
    };
    let delta = if subtract {
        -i128::from(delta.micros())
    } else {
        i128::from(delta.micros())
    };
    let result = match to_moment(a) {
        Some(Moment::DateTime(dt)) => match super::date::add_micros(&dt, delta) {
            Some(dt) => Value::DateTime(dt),
            None => return Value::Null,
        },
        Some(Moment::Time(t)) => Value::Time(clipped_time(i128::from(t.micros()) + delta)),
        None => return Value::Null,
    };
    if as_text {
        return cast::to_text(&result).map_or(Value::Null, Value::Bytes);
    }
    result
}

/// `SEC_TO_TIME(n)`: `n` seconds (a fraction kept to microseconds), clipped to the
/// TIME range.
pub fn sec_to_time(v: &Value) -> Value {
    let micros = match v {
        Value::Int(n) => i128::from(*n) * i128::from(MICROS_PER_SECOND),
        Value::UInt(n) => i128::from(*n) * i128::from(MICROS_PER_SECOND),
        other => {
            let Some(d) = cast::to_decimal(other) else {
                return Value::Null;
            };
            match dec::round_to(&d, 6, RoundMode::HalfAwayFromZero)
                .ok()
                .and_then(|r| dec::parts(&r).ok())
            {
                Some((mantissa, scale)) => mantissa * 10i128.pow(6 - u32::from(scale)),
                None if d.is_negative() => i128::MIN,
                None => i128::MAX,
            }
        }
    };
    Value::Time(clipped_time(micros))
}

/// `TIME_TO_SEC(t)`: whole seconds (the fraction dropped, as MySQL 8's integer
/// result), negative for a negative TIME.
pub fn time_to_sec(v: &Value) -> Value {
    match to_time(v) {
        Some(t) => Value::Int(t.micros() / MICROS_PER_SECOND),
        None => Value::Null,
    }
}

/// `MAKETIME(h, m, s)`: NULL for minutes or seconds outside 0..=59 (seconds may
/// have a fraction); the hours' sign makes the TIME negative; clipped to the range.
pub fn maketime(h: &Value, m: &Value, s: &Value) -> Value {
    let (Some(hours), Some(minutes)) = (cast::to_i64(h), cast::to_i64(m)) else {
        return Value::Null;
    };
    let Some(seconds) = cast::to_decimal(s)
        .and_then(|d| dec::round_to(&d, 6, RoundMode::HalfAwayFromZero).ok())
        .and_then(|d| dec::parts(&d).ok())
        .map(|(mantissa, scale)| mantissa * 10i128.pow(6 - u32::from(scale)))
    else {
        return Value::Null;
    };
    if !(0..=59).contains(&minutes) || !(0..60 * i128::from(MICROS_PER_SECOND)).contains(&seconds) {
        return Value::Null;
    }
    // A negative zero hour (`MAKETIME(-0, ...)`) cannot be told from zero: positive.
    let magnitude = i128::from(hours.unsigned_abs()) * 3600 * i128::from(MICROS_PER_SECOND)
        + i128::from(minutes) * 60 * i128::from(MICROS_PER_SECOND)
        + seconds;
    Value::Time(clipped_time(if hours < 0 { -magnitude } else { magnitude }))
}

/// `TIME_FORMAT(t, format)`: the time and hour specifiers of `DATE_FORMAT` (`%H`
/// and `%k` show all the hours, `%h %I %l %p %r` the hour of the day); `%Y %y %m %d
/// %c %e` show zeros and the other date specifiers make the result NULL, as in MySQL.
/// A negative TIME starts with `-`.
pub fn time_format(v: &Value, format: &[u8]) -> Value {
    let Some(t) = to_time(v) else {
        return Value::Null;
    };
    let mut out = String::with_capacity(format.len() * 2);
    if t.is_negative() {
        out.push('-');
    }
    let hours = t.hours();
    let hour_of_day = hours % 24;
    let hour12 = (hour_of_day + 11) % 12 + 1;
    let am_pm = if hour_of_day >= 12 { "PM" } else { "AM" };
    let (minute, second) = (t.minute(), t.second());
    let mut i = 0;
    while i < format.len() {
        if format[i] != b'%' || i + 1 == format.len() {
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
            b'H' => write!(out, "{hours:02}"),
            b'k' => write!(out, "{hours}"),
            b'h' | b'I' => write!(out, "{hour12:02}"),
            b'l' => write!(out, "{hour12}"),
            b'i' => write!(out, "{minute:02}"),
            b's' | b'S' => write!(out, "{second:02}"),
            b'f' => write!(out, "{:06}", t.fraction_micros()),
            b'p' => write!(out, "{am_pm}"),
            b'r' => write!(out, "{hour12:02}:{minute:02}:{second:02} {am_pm}"),
            b'T' => write!(out, "{hours:02}:{minute:02}:{second:02}"),
            b'Y' => write!(out, "0000"),
            b'y' | b'm' | b'd' => write!(out, "00"),
            b'c' | b'e' => write!(out, "0"),
            b'M' | b'b' | b'W' | b'a' | b'D' | b'j' | b'U' | b'u' | b'V' | b'v' | b'X' | b'x'
            | b'w' => return Value::Null,
            other => {
                out.push(char::from(other));
                Ok(())
            }
        };
    }
    Value::Bytes(out.into_bytes())
}

/// `CURTIME(fsp)`: the time of day of `now`, cut to `fsp` digits.
pub fn curtime(now: &DateTime, fsp: u8) -> Value {
    match time_of_day(now, now.micros) {
        Some(t) => Value::Time(t.truncate_to_fsp(fsp)),
        None => Value::Null,
    }
}

/// A TIME moved by an interval of `micros` (`DATE_ADD(t, INTERVAL ...)` with a unit
/// of days or less); NULL when the result leaves the TIME range.
pub fn add_interval_micros(t: &Time, micros: i128) -> Value {
    i64::try_from(i128::from(t.micros()) + micros)
        .ok()
        .and_then(|m| Time::from_micros(m).ok())
        .map_or(Value::Null, Value::Time)
}

// --- Storing ---------------------------------------------------------------------------

/// Converts `v` for a TIME(`fsp`) column in strict mode (see the module
/// documentation); errors are 1292 naming the value, the column and the row.
pub fn to_time_column(v: Value, fsp: u8, column: &str, row: u64) -> Result<Value> {
    let bad = |v: &Value| incorrect_datetime("time", v, column, row);
    let time = match &v {
        Value::Null => return Ok(Value::Null),
        Value::Bytes(b) => match parse_time(b) {
            Some(p) if !p.truncated && !p.clipped => p.value,
            _ => return Err(bad(&v)),
        },
        other => to_time(other).ok_or_else(|| bad(&v))?,
    };
    time.round_to_fsp(fsp.min(FSP_MAX))
        .map(Value::Time)
        .map_err(|_| bad(&v))
}

/// A year number as a YEAR column stores it (MySQL's `Field_year::store`):
/// `text_len` is the length of the text it came from, if any (`'0000'` is `0000`
/// where `'0'` is 2000); None when it is no YEAR.
fn year_of(n: i128, text_len: Option<usize>) -> Option<u64> {
    // 100..=1900 is neither a two-digit year nor a YEAR.
    if n < 0 || (100..i128::from(YEAR_TYPE_MIN)).contains(&n) || n > i128::from(YEAR_TYPE_MAX) {
        return None;
    }
    let n = n as u64;
    Some(match (n, text_len) {
        (0, None) | (0, Some(4)) => 0,
        (0..=69, _) => n + 2000,
        (70..=99, _) => n + 1900,
        _ => n,
    })
}

/// Converts `v` for a YEAR column in strict mode (see the module documentation).
pub fn to_year_column(v: Value, column: &str, row: u64) -> Result<Value> {
    let out_of_range = || cast::column_out_of_range(column, row);
    let (n, text_len) = match &v {
        Value::Null => return Ok(Value::Null),
        Value::Int(n) => (i128::from(*n), None),
        Value::UInt(n) => (i128::from(*n), None),
        Value::Bytes(b) => {
            let Some((number, clean)) = numeric_prefix(b) else {
                return Err(incorrect_value("integer", &v, column, row));
            };
            let d = Decimal::parse(number).map_err(|_| out_of_range())?;
            let n = dec::to_integer(&d, RoundMode::HalfAwayFromZero).map_err(|_| out_of_range())?;
            let year = year_of(n, Some(b.len())).ok_or_else(out_of_range)?;
            if !clean {
                return Err(Error::sql(
                    1265,
                    "01000",
                    format!("Data truncated for column '{column}' at row {row}"),
                ));
            }
            return Ok(Value::UInt(year));
        }
        Value::Decimal(d) => {
            if d.is_negative() && !d.is_zero() {
                return Err(out_of_range());
            }
            let n = dec::to_integer(d, RoundMode::HalfAwayFromZero).map_err(|_| out_of_range())?;
            (n, None)
        }
        Value::Float(_) | Value::Double(_) => {
            let f = cast::to_f64(&v).unwrap_or(0.0);
            if !(0.0..=f64::from(YEAR_TYPE_MAX)).contains(&f) {
                return Err(out_of_range());
            }
            (f.round() as i128, None)
        }
        Value::Date(d) => (i128::from(d.year), None),
        Value::DateTime(dt) => (i128::from(dt.date.year), None),
        Value::Time(t) => match time_on_date(t, today()) {
            Some(dt) => (i128::from(dt.date.year), None),
            None => return Err(out_of_range()),
        },
    };
    year_of(n, text_len)
        .map(Value::UInt)
        .ok_or_else(out_of_range)
}

/// `CAST(v AS YEAR)`: the year a YEAR column would hold, None (NULL) where the column
/// refuses the value; a string with trailing characters is read by its leading
/// number (`'2012x'` is 2012), where the column refuses it.
pub fn cast_to_year(v: &Value) -> Option<u64> {
    if let Value::Bytes(b) = v {
        let (number, _clean) = numeric_prefix(b)?;
        let d = Decimal::parse(number).ok()?;
        let n = dec::to_integer(&d, RoundMode::HalfAwayFromZero).ok()?;
        let digits = number.trim_start_matches(['-', '+']).len();
        return year_of(n, Some(digits));
    }
    match to_year_column(v.clone(), "", 1) {
        Ok(Value::UInt(y)) => Some(y),
        _ => None,
    }
}

/// `y` as a YEAR shows it: four digits, `0000` for 0.
pub fn year_text(y: u64) -> String {
    format!("{y:04}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(text: &str) -> Value {
        Value::Bytes(text.as_bytes().to_vec())
    }

    fn parsed(text: &str) -> Option<String> {
        parse_time(text.as_bytes()).map(|p| p.value.to_string())
    }

    #[test]
    fn text_reads_as_mysql_str_to_time() {
        // MySQL's type_time test: the values and what they store as.
        for (text, want) in [
            ("10:22:33", "10:22:33"),
            ("12:34:56.78", "12:34:56.780000"),
            ("1", "00:00:01"),
            ("1:23", "01:23:00"),
            ("1:23:45", "01:23:45"),
            ("10.22", "00:00:10.220000"),
            ("-10  1:22:33.45", "-241:22:33.450000"),
            ("20 10:22:33", "490:22:33"),
            ("1999-02-03 20:33:34", "20:33:34"),
            ("1230", "00:12:30"),
            ("12:30", "12:30:00"),
            ("1 12:30:31.32", "36:30:31.320000"),
            ("10 22:22", "262:22:00"),
            ("1 12", "36:00:00"),
            ("10:10:10.9999995", "10:10:11"),
        ] {
            assert_eq!(parsed(text).as_deref(), Some(want), "{text}");
        }
        for bad in [
            "",
            "-",
            "abc",
            "10:60:00",
            "-10:59:60",
            "1e5",
            "2020-13-01 10:00:00",
        ] {
            assert_eq!(parsed(bad), None, "{bad}");
        }
        let p = parse_time(b"12.45a").unwrap();
        assert!(p.truncated && !p.clipped);
        assert_eq!(p.value.to_string(), "00:00:12.450000");
        let p = parse_time(b"1000009:10:10").unwrap();
        assert!(p.clipped);
        assert_eq!(p.value.to_string(), "838:59:59");
        assert_eq!(parse_time(b"10:00:00.5").unwrap().fraction_digits, 1);
        assert!(
            parse_time(b"2020-01-01 10:00:00")
                .unwrap()
                .datetime
                .is_some()
        );
    }

    /// Every TIME reads back from its text and from its number (seeded).
    #[test]
    fn text_and_numbers_round_trip() {
        use tarn_common::rng::{Rng, test_seed};
        let mut rng = Rng::new(test_seed("text_and_numbers_round_trip"));
        let max = Time::MAX.micros() as u64;
        for _ in 0..20_000 {
            let micros = rng.below(2 * max + 1) as i64 - max as i64;
            let t = Time::from_micros(micros).unwrap();
            let text = t.to_string();
            assert_eq!(parse_time(text.as_bytes()).unwrap().value, t, "{text}");
            assert_eq!(to_time(&time_number(&t)), Some(t), "{text} as a number");
            let whole = t.truncate_to_fsp(0);
            assert_eq!(
                to_time(&Value::Bytes(whole.display_fsp(0).into_bytes())),
                Some(whole)
            );
        }
    }

    #[test]
    fn numbers_read_as_hhmmss() {
        let t = |v: Value| to_time(&v).map(|t| t.to_string());
        assert_eq!(t(Value::Int(123456)).as_deref(), Some("12:34:56"));
        assert_eq!(t(Value::Int(-10)).as_deref(), Some("-00:00:10"));
        assert_eq!(t(Value::Int(1234)).as_deref(), Some("00:12:34"));
        assert_eq!(t(Value::Int(890)), None);
        assert_eq!(t(Value::Int(1234567)), None);
        assert_eq!(t(Value::Int(8385960)), None);
        assert_eq!(t(Value::Int(20200102030405)).as_deref(), Some("03:04:05"));
        let d = |text: &str| Value::Decimal(Decimal::parse(text).unwrap());
        assert_eq!(t(d("235959.1234567")).as_deref(), Some("23:59:59.123457"));
        assert_eq!(t(d("-0.5")).as_deref(), Some("-00:00:00.500000"));
        assert_eq!(
            t(Value::Double(154559.616)).as_deref(),
            Some("15:45:59.616000")
        );
        assert_eq!(t(Value::Double(1e300)), None);
    }

    #[test]
    fn times_are_numbers_in_numeric_context() {
        let t = Time::parse("-10:10:10").unwrap();
        assert_eq!(time_number(&t), Value::Int(-101010));
        let t = Time::parse("100:00:00.25").unwrap();
        assert_eq!(time_number(&t).to_string(), "1000000.250000");
    }

    #[test]
    fn functions() {
        let text = |v: Value| v.to_string();
        assert_eq!(
            text(timediff(&s("10:00:00"), &s("12:30:15.5"))),
            "-02:30:15.500000"
        );
        assert_eq!(
            text(timediff(
                &s("2020-01-02 00:00:00"),
                &s("2020-01-01 12:00:00")
            )),
            "12:00:00"
        );
        assert_eq!(
            timediff(&s("2020-01-01 00:00:00"), &s("10:00:00")),
            Value::Null
        );
        assert_eq!(
            text(add_time(
                &s("2020-01-01 23:00:00"),
                &s("2:00:00"),
                false,
                true
            )),
            "2020-01-02 01:00:00"
        );
        assert_eq!(
            text(add_time(&s("10:00:00"), &s("11:00:00"), true, true)),
            "-01:00:00"
        );
        assert_eq!(
            text(add_time(
                &Value::Time(Time::parse("800:00:00").unwrap()),
                &s("100:00:00"),
                false,
                false
            )),
            "838:59:59"
        );
        assert_eq!(text(sec_to_time(&Value::Int(3661))), "01:01:01");
        assert_eq!(
            text(sec_to_time(&Value::Decimal(
                Decimal::parse("-3661.5").unwrap()
            ))),
            "-01:01:01.500000"
        );
        assert_eq!(text(sec_to_time(&Value::Int(99_999_999))), "838:59:59");
        assert_eq!(time_to_sec(&s("-1:00:00.5")), Value::Int(-3600));
        assert_eq!(
            text(maketime(&Value::Int(-1), &Value::Int(2), &s("3.5"))),
            "-01:02:03.500000"
        );
        assert_eq!(
            maketime(&Value::Int(10), &Value::Int(60), &Value::Int(0)),
            Value::Null
        );
        assert_eq!(
            text(maketime(&Value::Int(900), &Value::Int(0), &Value::Int(0))),
            "838:59:59"
        );
        assert_eq!(
            text(time_format(
                &s("100:05:06.7"),
                b"%H %k %h %I %l %i %s %S %f %p %r %T %%"
            )),
            "100 100 04 04 4 05 06 06 700000 AM 04:05:06 AM 100:05:06 %"
        );
        assert_eq!(text(time_format(&s("-10:05:06"), b"%H:%i")), "-10:05");
        assert_eq!(time_format(&s("13:00"), b"%a"), Value::Null);
    }

    #[test]
    fn strict_stores() {
        let code = |r: Result<Value>| r.unwrap_err().mysql_code();
        assert_eq!(code(to_time_column(s("abc"), 0, "t", 1)), 1292);
        assert_eq!(code(to_time_column(s("12:34:56x"), 0, "t", 1)), 1292);
        assert_eq!(code(to_time_column(s("900:00:00"), 0, "t", 1)), 1292);
        assert_eq!(code(to_time_column(Value::Int(890), 0, "t", 1)), 1292);
        assert_eq!(
            to_time_column(s("-1:2:3.4567"), 3, "t", 1)
                .unwrap()
                .to_string(),
            "-01:02:03.457000"
        );
        let year = |v: Value| to_year_column(v, "y", 1);
        for (v, want) in [
            (Value::Int(0), 0),
            (Value::Int(1), 2001),
            (Value::Int(69), 2069),
            (Value::Int(70), 1970),
            (Value::Int(2155), 2155),
            (s("0"), 2000),
            (s("00"), 2000),
            (s("0000"), 0),
            (s("  2001"), 2001),
            (s("2001.6"), 2002),
            (Value::Decimal(Decimal::parse("1900.6").unwrap()), 1901),
            (Value::Double(0.4), 0),
        ] {
            assert_eq!(year(v.clone()).unwrap(), Value::UInt(want), "{v:?}");
        }
        assert_eq!(code(year(Value::Int(1900))), 1264);
        assert_eq!(code(year(Value::Int(2156))), 1264);
        assert_eq!(code(year(Value::Double(-0.4))), 1264);
        assert_eq!(code(year(s("abc"))), 1366);
        assert_eq!(code(year(s(""))), 1366);
        assert_eq!(code(year(s("2001x"))), 1265);
        assert_eq!(code(year(s("3000x"))), 1264);
        assert_eq!(year_text(0), "0000");
    }
}
