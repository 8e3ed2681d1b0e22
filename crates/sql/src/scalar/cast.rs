//! Conversions between values, as MySQL makes them.
//!
//! Two families with different tempers:
//!
//! - **Lenient** ([`to_bool`], [`to_f64`], [`to_i64`], [`to_decimal`], [`to_text`],
//!   [`cast`]): what an expression in a SELECT does. A string used as a number is read
//!   up to the end of its longest numeric prefix (`'12abc'` is 12, `'abc'` is 0, MySQL
//!   adds a warning that comes later here); a date used as a number is `YYYYMMDD`
//!   (a datetime `YYYYMMDDhhmmss`, with six fraction digits when it has microseconds;
//!   a TIME `HHMMSS`, see [`super::time`]). Only NULL converts to None. An invalid
//!   date in `CAST(... AS DATE)` is NULL; a TIME where a date is needed is put on the
//!   current date.
//! - **Strict** ([`to_column`]): what INSERT and UPDATE do under
//!   `STRICT_TRANS_TABLES`. A string must be entirely a number (surrounding spaces
//!   allowed) or it is error 1366; a number out of the column's range is 1264; a string
//!   too long is 1406; a bad date or TIME is 1292. Numbers round half away from zero.
//!   TIME and YEAR columns follow [`super::time::to_time_column`] and
//!   [`super::time::to_year_column`].
//!
//! Numbers print as MySQL prints them ([`format_double`]): DOUBLE in its shortest
//! round-trip digits, in fixed notation while the decimal point is within 15 places
//! of the first digit (and `|x| >= 1e-15`), else as `1e21`; FLOAT with six significant
//! digits; DECIMAL with its scale.

use tarn_common::{Error, Result};
use tarn_row::datetime::{Date, DateTime};
use tarn_row::decimal::Decimal;
use tarn_row::types::{Collation, ColumnType};
use tarn_row::value::Value;

use super::decimal::{self, RoundMode};

// --- Reading numbers from strings -----------------------------------------------------

/// The longest numeric prefix of `bytes` after leading whitespace:
/// `[+-]digits[.digits][e[+-]digits]` (at least one mantissa digit), and whether only
/// whitespace follows it. None when there is no digit.
pub fn numeric_prefix(bytes: &[u8]) -> Option<(&str, bool)> {
    let start = bytes
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(bytes.len());
    let mut i = start;
    if matches!(bytes.get(i), Some(b'+' | b'-')) {
        i += 1;
    }
    let mut digits = 0;
    while bytes.get(i).is_some_and(u8::is_ascii_digit) {
        i += 1;
        digits += 1;
    }
    if bytes.get(i) == Some(&b'.') {
        let mut j = i + 1;
        while bytes.get(j).is_some_and(u8::is_ascii_digit) {
            j += 1;
            digits += 1;
        }
        i = j;
    }
    if digits == 0 {
        return None;
    }
    if matches!(bytes.get(i), Some(b'e' | b'E')) {
        let mut j = i + 1;
        if matches!(bytes.get(j), Some(b'+' | b'-')) {
            j += 1;
        }
        if bytes.get(j).is_some_and(u8::is_ascii_digit) {
            while bytes.get(j).is_some_and(u8::is_ascii_digit) {
                j += 1;
            }
            i = j;
        }
    }
    let clean = bytes[i..].iter().all(u8::is_ascii_whitespace);
    // The prefix is ASCII by construction.
    let text = std::str::from_utf8(&bytes[start..i]).ok()?;
    Some((text, clean))
}

fn parse_f64(text: &str) -> f64 {
    let v: f64 = text.parse().unwrap_or(0.0);
    v.clamp(-f64::MAX, f64::MAX)
}

/// The value of a numeric prefix as an exact decimal, or as the nearest DOUBLE's
/// decimal when it has more than 65 digits.
fn parse_decimal(text: &str) -> Option<Decimal> {
    Decimal::parse(text)
        .ok()
        .or_else(|| Decimal::from_f64(parse_f64(text)))
}

// --- Dates as numbers and numbers as dates ------------------------------------------

/// A date as the number `YYYYMMDD`.
pub fn date_number(d: &Date) -> i64 {
    i64::from(d.year) * 10_000 + i64::from(d.month) * 100 + i64::from(d.day)
}

/// A datetime as `YYYYMMDDhhmmss` (without its microseconds).
pub fn datetime_number(dt: &DateTime) -> i64 {
    date_number(&dt.date) * 1_000_000
        + i64::from(dt.hour) * 10_000
        + i64::from(dt.minute) * 100
        + i64::from(dt.second)
}

/// A date, datetime or TIME as the number MySQL uses in numeric context: an `Int`, or
/// a `Decimal` with six fraction digits when it has microseconds. Other values are
/// returned unchanged.
pub fn temporal_to_number(v: &Value) -> Value {
    match v {
        Value::Time(t) => super::time::time_number(t),
        Value::Date(d) => Value::Int(date_number(d)),
        Value::DateTime(dt) if dt.micros == 0 => Value::Int(datetime_number(dt)),
        Value::DateTime(dt) => {
            let m = i128::from(datetime_number(dt)) * 1_000_000 + i128::from(dt.micros);
            Decimal::from_i128(m, 6).map_or(Value::Null, Value::Decimal)
        }
        other => other.clone(),
    }
}

fn two_digit_year(year: u32) -> u32 {
    if year < 70 { 2000 + year } else { 1900 + year }
}

fn build(y: u32, mo: u32, d: u32, h: u32, mi: u32, s: u32, micros: u32) -> Option<DateTime> {
    let date = Date::new(
        u16::try_from(y).ok()?,
        u8::try_from(mo).ok()?,
        u8::try_from(d).ok()?,
    )
    .ok()?;
    DateTime::new(
        date,
        u8::try_from(h).ok()?,
        u8::try_from(mi).ok()?,
        u8::try_from(s).ok()?,
        micros,
    )
    .ok()
}

/// A number as a datetime, as MySQL reads one: `YYMMDD`, `YYYYMMDD`, `YYMMDDhhmmss`
/// or `YYYYMMDDhhmmss` (by digit count; two-digit years 70-99 are 19xx, 00-69 20xx),
/// with `micros` as the fraction. None for anything that is not a valid date.
pub fn number_to_datetime(n: i64, micros: u32) -> Option<DateTime> {
    if n <= 0 {
        return None;
    }
    let n = n as u64;
    let digits = n.ilog10() + 1;
    let (date_part, time_part) = if digits <= 8 {
        (n, 0)
    } else {
        (n / 1_000_000, n % 1_000_000)
    };
    let (mut y, mo, d) = (
        (date_part / 10_000) as u32,
        (date_part / 100 % 100) as u32,
        (date_part % 100) as u32,
    );
    let short_year = if digits <= 8 {
        digits <= 6
    } else {
        digits <= 12
    };
    if digits > 14 {
        return None;
    }
    if short_year {
        y = two_digit_year(y);
    }
    let (h, mi, s) = (
        (time_part / 10_000) as u32,
        (time_part / 100 % 100) as u32,
        (time_part % 100) as u32,
    );
    build(y, mo, d, h, mi, s, micros)
}

/// A parsed date or datetime string.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParsedDateTime {
    pub value: DateTime,
    /// A time of day was written (so the string is a DATETIME, not a DATE).
    pub has_time: bool,
    /// Nothing but whitespace followed the value (strict conversions require it).
    pub clean: bool,
}

/// Reads a run of ASCII digits at `*i` (at most `max` of them).
fn digit_run(bytes: &[u8], i: &mut usize, max: usize) -> Option<(u32, usize)> {
    let start = *i;
    let mut v = 0u32;
    while *i < bytes.len() && bytes[*i].is_ascii_digit() && *i - start < max {
        v = v * 10 + u32::from(bytes[*i] - b'0');
        *i += 1;
    }
    (*i > start).then_some((v, *i - start))
}

/// Parses a date or datetime string the way MySQL does: `YYYY-MM-DD`, any ASCII
/// punctuation as the delimiter, two-digit years, one-digit months and days, then
/// optionally `[ T]hh[:mm[:ss[.ffffff]]]`; or the digit-only forms `YYYYMMDD`,
/// `YYMMDD`, `YYYYMMDDhhmmss`, `YYMMDDhhmmss` (with an optional `.ffffff`). More than
/// six fraction digits are truncated. None for anything else or an invalid date.
pub fn parse_datetime(bytes: &[u8]) -> Option<ParsedDateTime> {
    let text = bytes.trim_ascii();
    let digits_end = text
        .iter()
        .position(|b| !b.is_ascii_digit())
        .unwrap_or(text.len());
    if digits_end >= 6 && (digits_end == text.len() || text[digits_end] == b'.') {
        return parse_digit_form(text, digits_end);
    }
    let mut i = 0;
    let (y, year_len) = digit_run(text, &mut i, 4)?;
    let year = if year_len <= 2 { two_digit_year(y) } else { y };
    let mut date_fields = [0u32; 2];
    for field in &mut date_fields {
        if !text.get(i).is_some_and(u8::is_ascii_punctuation) {
            return None;
        }
        i += 1;
        *field = digit_run(text, &mut i, 2)?.0;
    }
    let [month, day] = date_fields;
    let mut clock = [0u32; 3];
    let mut micros = 0;
    let mut has_time = false;
    if i < text.len() && matches!(text[i], b' ' | b'T' | b'\t') {
        let mut j = i;
        while j < text.len() && matches!(text[j], b' ' | b'T' | b'\t') {
            j += 1;
        }
        if let Some((h, _)) = digit_run(text, &mut j, 2) {
            has_time = true;
            clock[0] = h;
            i = j;
            for field in clock.iter_mut().skip(1) {
                if text.get(i) == Some(&b':') {
                    let mut k = i + 1;
                    match digit_run(text, &mut k, 2) {
                        Some((v, _)) => {
                            *field = v;
                            i = k;
                        }
                        None => break,
                    }
                } else {
                    break;
                }
            }
            if text.get(i) == Some(&b'.') {
                let mut k = i + 1;
                if let Some((f, len)) = digit_run(text, &mut k, 6) {
                    micros = f * 10u32.pow(6 - len as u32);
                    while k < text.len() && text[k].is_ascii_digit() {
                        k += 1;
                    }
                    i = k;
                }
            }
        }
    }
    let value = build(year, month, day, clock[0], clock[1], clock[2], micros)?;
    Some(ParsedDateTime {
        value,
        has_time,
        clean: i == text.len(),
    })
}

fn parse_digit_form(text: &[u8], digits_end: usize) -> Option<ParsedDateTime> {
    let number: i64 = std::str::from_utf8(&text[..digits_end])
        .ok()?
        .parse()
        .ok()?;
    if !matches!(digits_end, 6 | 8 | 12 | 14) {
        return None;
    }
    let mut micros = 0;
    let mut end = digits_end;
    if digits_end < text.len() {
        let mut k = digits_end + 1;
        if let Some((f, len)) = digit_run(text, &mut k, 6) {
            micros = f * 10u32.pow(6 - len as u32);
        }
        while k < text.len() && text[k].is_ascii_digit() {
            k += 1;
        }
        end = k;
    }
    let value = number_to_datetime(number, micros)?;
    Some(ParsedDateTime {
        value,
        has_time: digits_end > 8,
        clean: end == text.len(),
    })
}

/// Any value as a datetime, leniently (strings parsed, numbers read as
/// [`number_to_datetime`], a TIME on the current date); None for NULL and anything
/// that is not a valid date.
pub fn to_datetime(v: &Value) -> Option<DateTime> {
    match v {
        Value::Time(t) => super::time::time_on_date(t, super::time::today()),
        Value::Date(d) => Some(DateTime::from_date(*d)),
        Value::DateTime(dt) => Some(*dt),
        Value::Bytes(b) => parse_datetime(b).map(|p| p.value),
        Value::Int(n) => number_to_datetime(*n, 0),
        Value::UInt(n) => number_to_datetime(i64::try_from(*n).ok()?, 0),
        Value::Decimal(d) => {
            let whole = decimal::to_integer(d, RoundMode::Truncate).ok()?;
            let frac = decimal::round_to(d, 6, RoundMode::Truncate).ok()?;
            let (m, _) = decimal::parts(&frac).ok()?;
            let micros = (m % 1_000_000).unsigned_abs() as u32;
            number_to_datetime(i64::try_from(whole).ok()?, micros)
        }
        Value::Float(_) | Value::Double(_) => {
            let f = to_f64(v)?;
            if !(0.0..1e15).contains(&f) {
                return None;
            }
            let micros = ((f.fract() * 1e6).round() as u32).min(999_999);
            number_to_datetime(f.trunc() as i64, micros)
        }
        Value::Null => None,
    }
}

// --- Lenient conversions ---------------------------------------------------------------

/// MySQL truthiness: nonzero numbers are true; strings by their numeric prefix
/// (`'abc'` false, `'1x'` true, `'0.5'` true); dates are true. None for NULL.
pub fn to_bool(v: &Value) -> Option<bool> {
    Some(match v {
        Value::Null => return None,
        Value::Int(x) => *x != 0,
        Value::UInt(x) => *x != 0,
        Value::Decimal(d) => !d.is_zero(),
        Value::Float(x) => *x != 0.0,
        Value::Double(x) => *x != 0.0,
        Value::Date(_) | Value::DateTime(_) => true,
        Value::Time(t) => t.micros() != 0,
        Value::Bytes(_) => to_f64(v)? != 0.0,
    })
}

/// A value as a DOUBLE: strings by their longest numeric prefix (0 when there is
/// none), dates as numbers. None for NULL.
pub fn to_f64(v: &Value) -> Option<f64> {
    Some(match v {
        Value::Null => return None,
        Value::Int(x) => *x as f64,
        Value::UInt(x) => *x as f64,
        Value::Decimal(d) => d.to_f64(),
        Value::Float(x) => f64::from(*x),
        Value::Double(x) => *x,
        Value::Date(_) | Value::DateTime(_) | Value::Time(_) => {
            return to_f64(&temporal_to_number(v));
        }
        Value::Bytes(b) => numeric_prefix(b).map_or(0.0, |(text, _)| parse_f64(text)),
    })
}

/// `f` rounded half away from zero and saturated to the `i64` range.
fn f64_to_i64(f: f64) -> i64 {
    let r = f.round();
    if r.is_nan() {
        0
    } else if r >= 9.223_372_036_854_776e18 {
        i64::MAX
    } else if r <= -9.223_372_036_854_776e18 {
        i64::MIN
    } else {
        r as i64
    }
}

fn i128_to_i64_saturating(v: i128) -> i64 {
    i64::try_from(v).unwrap_or(if v < 0 { i64::MIN } else { i64::MAX })
}

/// A value as a BIGINT: fractions round half away from zero (`3.5` -> 4, `-3.5` -> -4),
/// values beyond the range saturate to `i64::MIN`/`i64::MAX` (a BIGINT UNSIGNED above
/// `i64::MAX` too); strings by their numeric prefix. None for NULL.
pub fn to_i64(v: &Value) -> Option<i64> {
    Some(match v {
        Value::Null => return None,
        Value::Int(x) => *x,
        Value::UInt(x) => i64::try_from(*x).unwrap_or(i64::MAX),
        Value::Decimal(d) => match decimal::to_integer(d, RoundMode::HalfAwayFromZero) {
            Ok(x) => i128_to_i64_saturating(x),
            Err(_) => {
                if d.is_negative() {
                    i64::MIN
                } else {
                    i64::MAX
                }
            }
        },
        Value::Float(_) | Value::Double(_) => f64_to_i64(to_f64(v)?),
        Value::Date(_) | Value::DateTime(_) | Value::Time(_) => {
            return to_i64(&temporal_to_number(v));
        }
        Value::Bytes(b) => match numeric_prefix(b) {
            None => 0,
            Some((text, _)) => match parse_decimal(text) {
                Some(d) => return to_i64(&Value::Decimal(d)),
                None => f64_to_i64(parse_f64(text)),
            },
        },
    })
}

/// A value as an exact decimal: DOUBLEs by their shortest round-trip digits, strings
/// by their numeric prefix, dates as numbers. None for NULL and for a DOUBLE beyond
/// 65 integer digits.
pub fn to_decimal(v: &Value) -> Option<Decimal> {
    match v {
        Value::Null => None,
        Value::Int(x) => Some(Decimal::from(*x)),
        Value::UInt(x) => Some(Decimal::from(*x)),
        Value::Decimal(d) => Some(*d),
        Value::Float(x) => Decimal::parse(&format_float(*x)).ok(),
        Value::Double(x) => Decimal::from_f64(*x),
        Value::Date(_) | Value::DateTime(_) | Value::Time(_) => to_decimal(&temporal_to_number(v)),
        Value::Bytes(b) => match numeric_prefix(b) {
            None => Some(Decimal::ZERO),
            Some((text, _)) => parse_decimal(text),
        },
    }
}

/// How MySQL prints a value as a string. None for NULL.
pub fn to_text(v: &Value) -> Option<Vec<u8>> {
    Some(match v {
        Value::Null => return None,
        Value::Bytes(b) => b.clone(),
        Value::Int(x) => x.to_string().into_bytes(),
        Value::UInt(x) => x.to_string().into_bytes(),
        Value::Decimal(d) => d.to_string().into_bytes(),
        Value::Float(x) => format_float(*x).into_bytes(),
        Value::Double(x) => format_double(*x).into_bytes(),
        Value::Date(d) => d.to_string().into_bytes(),
        Value::DateTime(dt) => dt.to_string().into_bytes(),
        Value::Time(t) => t.to_string().into_bytes(),
    })
}

/// How a value of a result column of type `ty` shows in the text protocol (what the
/// server sends, the local shell and the tests print): a DATETIME or TIME with the
/// type's fraction digits, a YEAR with four (`0000`); anything else as [`to_text`].
/// None for NULL.
pub fn to_text_as(v: &Value, ty: crate::types::SqlType) -> Option<Vec<u8>> {
    use crate::types::SqlType;
    Some(match (v, ty) {
        (Value::DateTime(dt), SqlType::DateTime { fsp, .. }) => dt.display_fsp(fsp).into_bytes(),
        (Value::Time(t), SqlType::Time { fsp }) => t.display_fsp(fsp).into_bytes(),
        (Value::UInt(y), SqlType::Year) => super::time::year_text(*y).into_bytes(),
        _ => return to_text(v),
    })
}

/// Lays out significant `digits` (ASCII, no leading zero) with the decimal point
/// `decpt` places after the first digit, as MySQL's `my_gcvt` chooses: fixed notation
/// when `-14 <= decpt` and either `decpt <= 15` or the number has a fraction; else
/// `d.ddde±x` without a `+`.
fn layout(negative: bool, digits: &str, decpt: i32) -> String {
    let len = digits.len() as i32;
    let mut out = String::with_capacity(digits.len() + 24);
    if negative {
        out.push('-');
    }
    if decpt >= -14 && (decpt <= 15 || len > decpt) {
        if decpt <= 0 {
            out.push_str("0.");
            out.extend(std::iter::repeat_n('0', (-decpt) as usize));
            out.push_str(digits);
        } else if decpt >= len {
            out.push_str(digits);
            out.extend(std::iter::repeat_n('0', (decpt - len) as usize));
        } else {
            out.push_str(&digits[..decpt as usize]);
            out.push('.');
            out.push_str(&digits[decpt as usize..]);
        }
    } else {
        out.push_str(&digits[..1]);
        if len > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        out.push('e');
        out.push_str(&(decpt - 1).to_string());
    }
    out
}

/// Splits Rust's `{:e}` output into (negative, digits, decpt).
fn scientific_parts(text: &str) -> (bool, String, i32) {
    let (negative, rest) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let (mantissa, exponent) = rest.split_once('e').unwrap_or((rest, "0"));
    let mut digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    while digits.len() > 1 && digits.ends_with('0') {
        digits.pop();
    }
    let exponent: i32 = exponent.parse().unwrap_or(0);
    (negative, digits, exponent + 1)
}

/// A DOUBLE as MySQL prints it: shortest round-trip digits (`0.1 + 0.2` is
/// `0.30000000000000004`), `1e21`, `1e-16`, `100`, `-0.5`.
pub fn format_double(f: f64) -> String {
    if f == 0.0 || !f.is_finite() {
        return "0".to_string();
    }
    let (negative, digits, decpt) = scientific_parts(&format!("{f:e}"));
    layout(negative, &digits, decpt)
}

/// A FLOAT as MySQL prints it: six significant digits (`1234567` is `1234570`).
pub fn format_float(f: f32) -> String {
    if f == 0.0 || !f.is_finite() {
        return "0".to_string();
    }
    let (negative, digits, decpt) = scientific_parts(&format!("{:.5e}", f64::from(f)));
    layout(negative, &digits, decpt)
}

// --- CAST ------------------------------------------------------------------------------

/// The target of `CAST(x AS ...)` / `CONVERT(x, ...)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CastTarget {
    Signed,
    Unsigned,
    Decimal {
        precision: u8,
        scale: u8,
    },
    /// CHAR[(n)]: at most `n` characters.
    Char(Option<u32>),
    /// BINARY[(n)]: exactly `n` bytes (cut or padded with `0x00`) when given.
    Binary(Option<u32>),
    Date,
    /// DATETIME(fsp).
    DateTime(u8),
    Double,
    /// TIME(fsp).
    Time(u8),
    /// YEAR ([`super::time::cast_to_year`]).
    Year,
    /// JSON: CAST(x AS JSON), and the conversions the binder puts around JSON
    /// functions' arguments and JSON comparisons ([`crate::json::convert`]).
    Json(JsonCast),
    /// The number of an ENUM value (its index) or a SET value (`set`: its bitmask),
    /// from its text: what MySQL reads in numeric context. Not a SQL cast; the
    /// binder puts it around ENUM and SET operands that are read as numbers.
    Number {
        members: tarn_row::Members,
        set: bool,
    },
    /// A DATETIME or TIME as the text MySQL shows for a value of its type, with `fsp`
    /// fraction digits (`TIME(3)` '01:02:03.500'); other values as [`to_text`] shows
    /// them. Not a SQL cast: the binder puts it around temporal operands that are
    /// read as strings (CONCAT, LIKE, CAST AS CHAR, ...), whose values do not carry
    /// their type's digits.
    Text {
        fsp: u8,
    },
    /// A BIT(`len_bits`) value (a number) as the string MySQL reads it as: its
    /// ceil(n / 8) bytes, big-endian (a BIT(12) of 65 is `0x0041`; [`bit_bytes`]).
    /// Not a SQL cast: the binder puts it around BIT operands that are read as
    /// strings (CONCAT, LIKE, CAST AS CHAR, ...); `b + 0` and HEX(b) read the number.
    BitBytes {
        len_bits: u8,
    },
}

/// A BIT(`len_bits`) value's bytes: ceil(n / 8) of them (at least 1), big-endian, as
/// MySQL reads a BIT in string context and sends it to clients.
pub fn bit_bytes(n: u64, len_bits: u8) -> Vec<u8> {
    let width = usize::from(len_bits).div_ceil(8).clamp(1, 8);
    n.to_be_bytes()[8 - width..].to_vec()
}

/// The ways a value becomes JSON (see [`crate::json::convert`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JsonCast {
    /// CAST(x AS JSON): a string is read as JSON text (error 3141 when it is none);
    /// another value becomes the JSON scalar it is. `boolean`: `x` is a predicate, so
    /// 1 and 0 are `true` and `false`.
    Parse { boolean: bool },
    /// A value put into a document: a string becomes a JSON string (it is not read),
    /// other values as with `Parse`.
    Scalar { boolean: bool },
    /// JSON text to the bytes it compares by ([`crate::json::Json::compare_key`]):
    /// both sides of a comparison with a JSON value go through it.
    CompareKey,
}

impl CastTarget {
    /// The numeric reading of a value of `ty` when it is an ENUM or SET, else None.
    pub fn number_of(ty: crate::types::SqlType) -> Option<CastTarget> {
        match ty {
            crate::types::SqlType::Enum { members, .. } => Some(CastTarget::Number {
                members,
                set: false,
            }),
            crate::types::SqlType::Set { members, .. } => {
                Some(CastTarget::Number { members, set: true })
            }
            _ => None,
        }
    }
}

/// An ENUM's index or a SET's bitmask from the value's text (see
/// [`CastTarget::Number`]): BIGINT, or BIGINT UNSIGNED for a SET of 64 members, whose
/// bitmask may not fit.
fn member_number(v: &Value, members: tarn_row::Members, set: bool) -> Value {
    let n = match v {
        Value::Bytes(text) if set => members.set_bits_of(text).unwrap_or(0),
        Value::Bytes(text) => members.index_of(text).map_or(0, u64::from),
        Value::UInt(n) => *n,
        other => to_i64(other).unwrap_or(0) as u64,
    };
    if set && members.len() >= 64 {
        Value::UInt(n)
    } else {
        Value::Int(n as i64)
    }
}

/// Leading integer of a string, as MySQL's `my_strtoll10`: whitespace, a sign, digits
/// (no fraction, no exponent); saturated. `(negative, magnitude)`.
fn integer_prefix(bytes: &[u8]) -> (bool, u64) {
    let text = bytes.trim_ascii_start();
    let (negative, digits) = match text.first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let mut magnitude = 0u64;
    for &b in digits.iter().take_while(|b| b.is_ascii_digit()) {
        magnitude = magnitude
            .saturating_mul(10)
            .saturating_add(u64::from(b - b'0'));
    }
    (negative, magnitude)
}

/// `CAST()` semantics as in a SELECT (lenient; MySQL's warnings come later):
///
/// - SIGNED: fractions round half away from zero, out-of-range saturates; a BIGINT
///   UNSIGNED wraps (`CAST(18446744073709551615 AS SIGNED)` is -1); a string takes its
///   leading integer (`'3.7'` is 3, `'-1'` is -1, `'1e3'` is 1).
/// - UNSIGNED: a negative BIGINT wraps (`CAST(-1 AS UNSIGNED)` is 18446744073709551615),
///   as does a negative string; negative DECIMAL and DOUBLE clip to 0.
/// - DECIMAL(p, s): rounded to `s`; beyond the type clips to its largest value.
/// - CHAR(n), BINARY(n): the text cut to `n` characters / `n` bytes (BINARY pads).
/// - DATE, DATETIME: strings and numbers read as dates; invalid is NULL.
/// - TIME(fsp): read as [`super::time::to_time`] reads, rounded to `fsp`; no TIME
///   is NULL.
/// - DOUBLE: [`to_f64`].
/// - YEAR: as a YEAR column reads it (1..=69 are 2001..=2069, 70..=99 are 1970..=1999,
///   the string '0' is 2000 and the number 0 is 0); out of range is NULL.
///
/// Errors: only for a DECIMAL target with an invalid precision or scale.
pub fn cast(v: &Value, target: CastTarget) -> Result<Value> {
    if v.is_null() {
        return Ok(Value::Null);
    }
    if let CastTarget::Json(how) = target {
        return crate::json::convert(v, how);
    }
    Ok(match target {
        CastTarget::Signed => Value::Int(match v {
            Value::UInt(x) => *x as i64,
            Value::Bytes(b) => {
                let (negative, magnitude) = integer_prefix(b);
                if negative {
                    if magnitude > i64::MIN.unsigned_abs() {
                        i64::MIN
                    } else {
                        0i64.wrapping_sub_unsigned(magnitude)
                    }
                } else {
                    magnitude as i64
                }
            }
            other => to_i64(other).unwrap_or(0),
        }),
        CastTarget::Unsigned => Value::UInt(match v {
            Value::Int(x) => *x as u64,
            Value::UInt(x) => *x,
            Value::Bytes(b) => {
                let (negative, magnitude) = integer_prefix(b);
                if negative {
                    0u64.wrapping_sub(magnitude.min(i64::MIN.unsigned_abs()))
                } else {
                    magnitude
                }
            }
            Value::Decimal(d) => match decimal::to_integer(d, RoundMode::HalfAwayFromZero) {
                Ok(x) => u64::try_from(x.max(0)).unwrap_or(u64::MAX),
                Err(_) if d.is_negative() => 0,
                Err(_) => u64::MAX,
            },
            Value::Date(_) | Value::DateTime(_) | Value::Time(_) => {
                return cast(&temporal_to_number(v), CastTarget::Unsigned);
            }
            other => {
                let f = to_f64(other).unwrap_or(0.0).round();
                if f <= 0.0 {
                    0
                } else if f >= 1.844_674_407_370_955_2e19 {
                    u64::MAX
                } else {
                    f as u64
                }
            }
        }),
        CastTarget::Decimal { precision, scale } => {
            tarn_row::decimal::check_precision_scale(precision, scale)?;
            let Some(d) = to_decimal(v) else {
                let negative = to_f64(v).is_some_and(|f| f < 0.0);
                return Ok(Value::Decimal(decimal::max_of(precision, scale, negative)));
            };
            match d.rescale(precision, scale) {
                Ok(r) => Value::Decimal(r),
                Err(_) => Value::Decimal(decimal::max_of(precision, scale, d.is_negative())),
            }
        }
        CastTarget::Char(len) => {
            let text = to_text(v).unwrap_or_default();
            Value::Bytes(match len {
                Some(n) => truncate_chars(text, n),
                None => text,
            })
        }
        CastTarget::Binary(len) => {
            let mut bytes = to_text(v).unwrap_or_default();
            if let Some(n) = len {
                bytes.truncate(n as usize);
                bytes = tarn_row::pad_binary(bytes, n);
            }
            Value::Bytes(bytes)
        }
        CastTarget::Date => match to_datetime(v) {
            Some(dt) => Value::Date(dt.date),
            None => Value::Null,
        },
        CastTarget::DateTime(fsp) => match to_datetime(v) {
            Some(dt) => dt
                .round_to_fsp(fsp.min(tarn_row::limits::FSP_MAX))
                .map_or(Value::Null, Value::DateTime),
            None => Value::Null,
        },
        CastTarget::Double => Value::Double(to_f64(v).unwrap_or(0.0)),
        CastTarget::Json(how) => return crate::json::convert(v, how),
        CastTarget::Time(fsp) => super::time::to_time(v)
            .and_then(|t| t.round_to_fsp(fsp.min(tarn_row::limits::FSP_MAX)).ok())
            .map_or(Value::Null, Value::Time),
        CastTarget::Year => super::time::cast_to_year(v).map_or(Value::Null, Value::UInt),
        CastTarget::Number { members, set } => member_number(v, members, set),
        CastTarget::Text { fsp } => Value::Bytes(match v {
            Value::DateTime(dt) => dt.display_fsp(fsp).into_bytes(),
            Value::Time(t) => t.display_fsp(fsp).into_bytes(),
            other => to_text(other).unwrap_or_default(),
        }),
        CastTarget::BitBytes { len_bits } => Value::Bytes(match v {
            Value::UInt(n) => bit_bytes(*n, len_bits),
            other => to_text(other).unwrap_or_default(),
        }),
    })
}

/// The first `n` characters of UTF-8 text (bytes that are not UTF-8 count as one
/// character each).
pub fn truncate_chars(mut text: Vec<u8>, n: u32) -> Vec<u8> {
    let cut = char_boundary_after(&text, n as usize);
    text.truncate(cut);
    text
}

/// The byte offset after the first `n` characters of `text` (or its length).
pub fn char_boundary_after(text: &[u8], n: usize) -> usize {
    let mut offset = 0;
    for _ in 0..n {
        if offset >= text.len() {
            return text.len();
        }
        offset += utf8_char_len(text, offset);
    }
    offset.min(text.len())
}

/// The length of the UTF-8 character starting at `offset` (1 for a byte that does not
/// start a valid character).
pub fn utf8_char_len(text: &[u8], offset: usize) -> usize {
    let width = match text[offset] {
        0x00..=0x7f => 1,
        0xc2..=0xdf => 2,
        0xe0..=0xef => 3,
        0xf0..=0xf4 => 4,
        _ => return 1,
    };
    let end = offset + width;
    if end <= text.len() && std::str::from_utf8(&text[offset..end]).is_ok() {
        width
    } else {
        1
    }
}

/// Characters in UTF-8 text (bytes that are not UTF-8 count one each).
pub fn char_count(text: &[u8]) -> usize {
    if text.is_ascii() {
        return text.len();
    }
    let mut count = 0;
    let mut offset = 0;
    while offset < text.len() {
        offset += utf8_char_len(text, offset);
        count += 1;
    }
    count
}

/// Converts a value to the variant a [`SqlType`] holds (leniently, as [`cast`]): what
/// the executor applies to a function's result when the function may return an
/// argument of another type (IF, COALESCE, GREATEST, ...). NULL stays NULL.
pub fn coerce(v: Value, ty: crate::types::SqlType) -> Value {
    use crate::types::SqlType;
    if v.is_null() {
        return v;
    }
    let target = match ty {
        SqlType::Null => return v,
        SqlType::Int { .. } => match v {
            Value::Int(_) => return v,
            _ => return Value::Int(to_i64(&v).unwrap_or(0)),
        },
        SqlType::UInt { .. } => match v {
            Value::UInt(_) => return v,
            _ => CastTarget::Unsigned,
        },
        SqlType::Decimal { precision, scale } => CastTarget::Decimal { precision, scale },
        SqlType::Float => return Value::Float(to_f64(&v).unwrap_or(0.0) as f32),
        SqlType::Double => match v {
            Value::Double(_) => return v,
            _ => CastTarget::Double,
        },
        SqlType::Date => CastTarget::Date,
        SqlType::DateTime { fsp, .. } => CastTarget::DateTime(fsp),
        SqlType::Text { .. }
        | SqlType::Blob { .. }
        | SqlType::Binary { .. }
        | SqlType::Json
        | SqlType::Enum { .. }
        | SqlType::Set { .. } => match v {
            Value::Bytes(_) => return v,
            _ => CastTarget::Char(None),
        },
        SqlType::Time { fsp } => match v {
            Value::Time(_) => return v,
            _ => CastTarget::Time(fsp),
        },
        SqlType::Year => match v {
            Value::UInt(_) => return v,
            _ => CastTarget::Unsigned,
        },
        SqlType::Bit { .. } => match v {
            Value::UInt(_) => return v,
            _ => CastTarget::Unsigned,
        },
    };
    cast(&v, target).unwrap_or(Value::Null)
}

// --- Storing into a column ---------------------------------------------------------------

fn quoted(v: &Value) -> String {
    match v {
        Value::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
        other => String::from_utf8_lossy(&to_text(other).unwrap_or_default()).into_owned(),
    }
}

/// ER_TRUNCATED_WRONG_VALUE_FOR_FIELD (1366).
pub fn incorrect_value(kind: &str, v: &Value, column: &str, row: u64) -> Error {
    Error::sql(
        1366,
        "HY000",
        format!(
            "Incorrect {kind} value: '{}' for column '{column}' at row {row}",
            quoted(v)
        ),
    )
}

/// ER_WARN_DATA_OUT_OF_RANGE (1264).
pub fn column_out_of_range(column: &str, row: u64) -> Error {
    Error::sql(
        1264,
        "22003",
        format!("Out of range value for column '{column}' at row {row}"),
    )
}

/// ER_DATA_TOO_LONG (1406).
pub fn data_too_long(column: &str, row: u64) -> Error {
    Error::sql(
        1406,
        "22001",
        format!("Data too long for column '{column}' at row {row}"),
    )
}

/// ER_TRUNCATED_WRONG_VALUE (1292) for dates.
pub fn incorrect_datetime(kind: &str, v: &Value, column: &str, row: u64) -> Error {
    Error::sql(
        1292,
        "22007",
        format!(
            "Incorrect {kind} value: '{}' for column '{column}' at row {row}",
            quoted(v)
        ),
    )
}

/// WARN_DATA_TRUNCATED (1265), MySQL's error for a value that names no member of an
/// ENUM or SET in strict mode.
pub fn data_truncated(column: &str, row: u64) -> Error {
    Error::sql(
        1265,
        "01000",
        format!("Data truncated for column '{column}' at row {row}"),
    )
}

/// [`to_column_at`] for row 1 of a column with the default (case-insensitive)
/// collation.
pub fn to_column(v: Value, ty: ColumnType, column: &str) -> Result<Value> {
    to_column_at(v, ty, Collation::CaseInsensitive, column, 1)
}

/// Converts `v` for storing into a column of type `ty` with MySQL's
/// `STRICT_TRANS_TABLES` semantics (see the module documentation); `row` is the
/// 1-based row number errors name. NULL stays NULL (nullability is the caller's check).
/// `collation` is the column's: ENUM and SET members are matched under it. The result
/// is in the normal form `tarn_row::check_value` leaves values in.
pub fn to_column_at(
    v: Value,
    ty: ColumnType,
    collation: Collation,
    column: &str,
    row: u64,
) -> Result<Value> {
    if v.is_null() {
        return Ok(Value::Null);
    }
    match ty {
        // A string names a member (case as the collation says, trailing spaces cut)
        // or is a small index; a number is the index or bitmask (see
        // `tarn_row::enum_index_for`). Anything else is 1265.
        ColumnType::Enum { members } => {
            let index = tarn_row::enum_index_for(members, collation, &v)
                .ok_or_else(|| data_truncated(column, row))?;
            Ok(Value::Bytes(members.name(index).as_bytes().to_vec()))
        }
        ColumnType::Set { members } => {
            let bits = tarn_row::set_bits_for(members, collation, &v)
                .ok_or_else(|| data_truncated(column, row))?;
            Ok(Value::Bytes(members.set_text(bits)))
        }
        // A number as its bits, a string as its bytes: more than n bits is 1406.
        ColumnType::Bit { len_bits } => tarn_row::bit_number_for(len_bits, &v)
            .map(Value::UInt)
            .ok_or_else(|| data_too_long(column, row)),
        ColumnType::TinyInt { .. }
        | ColumnType::SmallInt { .. }
        | ColumnType::Int { .. }
        | ColumnType::BigInt { .. } => to_int_column(v, ty, column, row),
        ColumnType::Decimal { precision, scale } => {
            let d = strict_decimal(&v, column, row)?;
            let r = d
                .rescale(precision, scale)
                .map_err(|_| column_out_of_range(column, row))?;
            Ok(Value::Decimal(r))
        }
        ColumnType::Float | ColumnType::Double => {
            let f = match &v {
                Value::Bytes(b) => match numeric_prefix(b) {
                    Some((text, true)) => text.parse::<f64>().unwrap_or(f64::INFINITY),
                    _ => return Err(incorrect_value("double", &v, column, row)),
                },
                other => to_f64(other).unwrap_or(0.0),
            };
            let limit = if ty == ColumnType::Float {
                f64::from(f32::MAX)
            } else {
                f64::MAX
            };
            if !f.is_finite() || f.abs() > limit {
                return Err(column_out_of_range(column, row));
            }
            Ok(if ty == ColumnType::Float {
                Value::Float(f as f32)
            } else {
                Value::Double(f)
            })
        }
        ColumnType::Date | ColumnType::DateTime { .. } | ColumnType::Timestamp { .. } => {
            to_temporal_column(v, ty, column, row)
        }
        ColumnType::Time { fsp } => super::time::to_time_column(v, fsp, column, row),
        ColumnType::Year => super::time::to_year_column(v, column, row),
        ColumnType::Char { len } | ColumnType::VarChar { len } => {
            let mut bytes = text_for_column(v, column, row)?;
            if matches!(ty, ColumnType::Char { .. }) {
                let kept = bytes.iter().rposition(|b| *b != b' ').map_or(0, |i| i + 1);
                bytes.truncate(kept);
            }
            let cut = char_boundary_after(&bytes, len as usize);
            if cut < bytes.len() {
                if bytes[cut..].iter().any(|b| *b != b' ') {
                    return Err(data_too_long(column, row));
                }
                bytes.truncate(cut);
            }
            Ok(Value::Bytes(bytes))
        }
        ColumnType::Text | ColumnType::TinyText | ColumnType::MediumText | ColumnType::LongText => {
            let bytes = text_for_column(v, column, row)?;
            if bytes.len() as u64 > ty.lob_len_max_bytes().expect("a TEXT type") {
                return Err(data_too_long(column, row));
            }
            Ok(Value::Bytes(bytes))
        }
        // Binary strings take any bytes as they are (a number as its text); only
        // their length is checked, and BINARY(n) is padded to n with 0x00.
        ColumnType::Blob | ColumnType::TinyBlob | ColumnType::MediumBlob | ColumnType::LongBlob => {
            let bytes = to_text(&v).unwrap_or_default();
            if bytes.len() as u64 > ty.lob_len_max_bytes().expect("a BLOB type") {
                return Err(data_too_long(column, row));
            }
            Ok(Value::Bytes(bytes))
        }
        ColumnType::Json => crate::json::column_value(v, column),
        ColumnType::Binary { len_bytes } | ColumnType::VarBinary { len_bytes } => {
            let bytes = to_text(&v).unwrap_or_default();
            // Excess bytes are data even when they are spaces or zeros (unlike
            // text's trailing spaces): MySQL and MariaDB refuse them.
            if bytes.len() > len_bytes as usize {
                return Err(data_too_long(column, row));
            }
            Ok(Value::Bytes(if matches!(ty, ColumnType::Binary { .. }) {
                tarn_row::pad_binary(bytes, len_bytes)
            } else {
                bytes
            }))
        }
    }
}

fn text_for_column(v: Value, column: &str, row: u64) -> Result<Vec<u8>> {
    let bytes = match v {
        Value::Bytes(b) => b,
        other => to_text(&other).unwrap_or_default(),
    };
    if let Err(e) = std::str::from_utf8(&bytes) {
        let at = e.valid_up_to();
        let shown: String = bytes[at..]
            .iter()
            .take(4)
            .map(|b| format!("\\x{b:02X}"))
            .collect();
        return Err(Error::sql(
            1366,
            "HY000",
            format!("Incorrect string value: '{shown}' for column '{column}' at row {row}"),
        ));
    }
    Ok(bytes)
}

/// A value as a decimal for a strict conversion: strings must be wholly numeric.
fn strict_decimal(v: &Value, column: &str, row: u64) -> Result<Decimal> {
    match v {
        Value::Bytes(b) => match numeric_prefix(b) {
            Some((text, true)) => match Decimal::parse(text) {
                Ok(d) => Ok(d),
                Err(_) => Err(column_out_of_range(column, row)),
            },
            _ => Err(incorrect_value("decimal", v, column, row)),
        },
        Value::Float(_) | Value::Double(_) => {
            to_decimal(v).ok_or_else(|| column_out_of_range(column, row))
        }
        other => to_decimal(other).ok_or_else(|| column_out_of_range(column, row)),
    }
}

fn to_int_column(v: Value, ty: ColumnType, column: &str, row: u64) -> Result<Value> {
    let (min, max) = ty
        .int_range()
        .unwrap_or((i128::from(i64::MIN), i128::from(i64::MAX)));
    let n: i128 = match &v {
        Value::Int(x) => i128::from(*x),
        Value::UInt(x) => i128::from(*x),
        Value::Float(_) | Value::Double(_) => {
            let f = to_f64(&v).unwrap_or(0.0).round();
            if !f.is_finite() || f.abs() > 1e30 {
                return Err(column_out_of_range(column, row));
            }
            f as i128
        }
        Value::Bytes(b) => {
            let d = match numeric_prefix(b) {
                Some((text, true)) => {
                    Decimal::parse(text).map_err(|_| column_out_of_range(column, row))?
                }
                _ => return Err(incorrect_value("integer", &v, column, row)),
            };
            decimal::to_integer(&d, RoundMode::HalfAwayFromZero)
                .map_err(|_| column_out_of_range(column, row))?
        }
        Value::Decimal(d) => decimal::to_integer(d, RoundMode::HalfAwayFromZero)
            .map_err(|_| column_out_of_range(column, row))?,
        Value::Date(_) | Value::DateTime(_) | Value::Time(_) => {
            return to_int_column(temporal_to_number(&v), ty, column, row);
        }
        Value::Null => return Ok(Value::Null),
    };
    if n < min || n > max {
        return Err(column_out_of_range(column, row));
    }
    Ok(if ty.is_unsigned_int() {
        Value::UInt(n as u64)
    } else {
        Value::Int(n as i64)
    })
}

fn to_temporal_column(v: Value, ty: ColumnType, column: &str, row: u64) -> Result<Value> {
    let kind = if ty == ColumnType::Date {
        "date"
    } else {
        "datetime"
    };
    let dt = match &v {
        Value::Bytes(b) => match parse_datetime(b) {
            Some(p) if p.clean => p.value,
            _ => return Err(incorrect_datetime(kind, &v, column, row)),
        },
        Value::Float(_) | Value::Double(_) | Value::Decimal(_) | Value::Int(_) | Value::UInt(_) => {
            to_datetime(&v).ok_or_else(|| incorrect_datetime(kind, &v, column, row))?
        }
        other => to_datetime(other).ok_or_else(|| incorrect_datetime(kind, &v, column, row))?,
    };
    match ty {
        ColumnType::Date => Ok(Value::Date(dt.date)),
        ColumnType::DateTime { fsp } | ColumnType::Timestamp { fsp } => {
            let rounded = dt
                .round_to_fsp(fsp.min(tarn_row::limits::FSP_MAX))
                .map_err(|_| incorrect_datetime(kind, &v, column, row))?;
            if matches!(ty, ColumnType::Timestamp { .. })
                && !(TIMESTAMP_MIN..=TIMESTAMP_MAX).contains(&rounded)
            {
                return Err(incorrect_datetime(kind, &v, column, row));
            }
            Ok(Value::DateTime(rounded))
        }
        _ => Ok(Value::DateTime(dt)),
    }
}

const TIMESTAMP_MIN: DateTime = DateTime {
    date: Date {
        year: 1970,
        month: 1,
        day: 1,
    },
    hour: 0,
    minute: 0,
    second: 1,
    micros: 0,
};
const TIMESTAMP_MAX: DateTime = DateTime {
    date: Date {
        year: 2038,
        month: 1,
        day: 19,
    },
    hour: 3,
    minute: 14,
    second: 7,
    micros: 999_999,
};

#[cfg(test)]
mod tests {
    use super::*;

    fn s(text: &str) -> Value {
        Value::Bytes(text.as_bytes().to_vec())
    }

    fn dec(text: &str) -> Value {
        Value::Decimal(Decimal::parse(text).unwrap())
    }

    fn text(v: &Value) -> String {
        String::from_utf8(to_text(v).unwrap()).unwrap()
    }

    #[test]
    fn truthiness() {
        assert_eq!(to_bool(&s("abc")), Some(false));
        assert_eq!(to_bool(&s("1x")), Some(true));
        assert_eq!(to_bool(&s("0.5")), Some(true));
        assert_eq!(to_bool(&s(" 0 ")), Some(false));
        assert_eq!(to_bool(&Value::Double(0.0)), Some(false));
        assert_eq!(to_bool(&Value::Double(-0.0)), Some(false));
        assert_eq!(to_bool(&dec("0.00")), Some(false));
        assert_eq!(to_bool(&dec("0.01")), Some(true));
        assert_eq!(to_bool(&Value::Null), None);
    }

    #[test]
    fn numbers_from_strings_and_dates() {
        assert_eq!(to_f64(&s("  12.5e1xyz")), Some(125.0));
        assert_eq!(to_f64(&s("1e")), Some(1.0));
        assert_eq!(to_f64(&s("-.5")), Some(-0.5));
        assert_eq!(to_f64(&s("abc")), Some(0.0));
        assert_eq!(to_f64(&s("1e999")), Some(f64::MAX));
        assert_eq!(to_i64(&s("3.5")), Some(4));
        assert_eq!(to_i64(&s("-3.5")), Some(-4));
        assert_eq!(to_i64(&Value::Double(2.5)), Some(3));
        assert_eq!(to_i64(&Value::Double(1e30)), Some(i64::MAX));
        assert_eq!(to_i64(&Value::UInt(u64::MAX)), Some(i64::MAX));
        assert_eq!(to_i64(&dec("-2.5")), Some(-3));
        assert_eq!(to_i64(&s("99999999999999999999999")), Some(i64::MAX));
        let date = Value::Date(Date::new(2020, 1, 2).unwrap());
        assert_eq!(to_i64(&date), Some(20200102));
        let dt = DateTime::new(Date::new(2020, 1, 2).unwrap(), 3, 4, 5, 500_000).unwrap();
        assert_eq!(
            to_decimal(&Value::DateTime(dt)).unwrap().to_string(),
            "20200102030405.500000"
        );
        assert_eq!(to_decimal(&s("1.50abc")).unwrap().to_string(), "1.50");
        assert_eq!(to_decimal(&Value::Double(0.1)).unwrap().to_string(), "0.1");
    }

    #[test]
    fn doubles_print_like_mysql() {
        for (v, shown) in [
            (0.1 + 0.2, "0.30000000000000004"),
            (1e21, "1e21"),
            (1e15, "1e15"),
            (1e14, "100000000000000"),
            (123456789012345678.0, "1.2345678901234568e17"),
            (100.0, "100"),
            (-0.5, "-0.5"),
            (0.00001, "0.00001"),
            (1e-15, "0.000000000000001"),
            (1e-16, "1e-16"),
            (1.5e-20, "1.5e-20"),
            (1234567890123456.8, "1234567890123456.8"),
            (0.0, "0"),
        ] {
            assert_eq!(format_double(v), shown, "{v:e}");
        }
        assert_eq!(format_float(1234567.0), "1234570");
        assert_eq!(format_float(0.1), "0.1");
        assert_eq!(format_float(1.234_567_9), "1.23457");
        assert_eq!(format_float(3.4e38), "3.4e38");
        assert_eq!(text(&dec("1.50")), "1.50");
        let dt = DateTime::new(Date::new(2020, 1, 2).unwrap(), 3, 4, 5, 0).unwrap();
        assert_eq!(text(&Value::DateTime(dt)), "2020-01-02 03:04:05");
    }

    #[test]
    fn casts() {
        assert_eq!(
            cast(&Value::UInt(u64::MAX), CastTarget::Signed).unwrap(),
            Value::Int(-1)
        );
        assert_eq!(
            cast(&Value::Int(-1), CastTarget::Unsigned).unwrap(),
            Value::UInt(u64::MAX)
        );
        assert_eq!(
            cast(&s("-1"), CastTarget::Unsigned).unwrap(),
            Value::UInt(u64::MAX)
        );
        assert_eq!(cast(&s("3.7"), CastTarget::Signed).unwrap(), Value::Int(3));
        assert_eq!(cast(&s("1e3"), CastTarget::Signed).unwrap(), Value::Int(1));
        assert_eq!(
            cast(&Value::Double(3.5), CastTarget::Signed).unwrap(),
            Value::Int(4)
        );
        assert_eq!(
            cast(&dec("-1.5"), CastTarget::Unsigned).unwrap(),
            Value::UInt(0)
        );
        let d = cast(
            &Value::Int(1000),
            CastTarget::Decimal {
                precision: 3,
                scale: 0,
            },
        )
        .unwrap();
        assert_eq!(d, dec("999"));
        let d = cast(
            &s("1.255"),
            CastTarget::Decimal {
                precision: 5,
                scale: 2,
            },
        )
        .unwrap();
        assert_eq!(text(&d), "1.26");
        assert!(
            cast(
                &Value::Int(1),
                CastTarget::Decimal {
                    precision: 0,
                    scale: 0
                }
            )
            .is_err()
        );
        assert_eq!(
            cast(&s("héllo"), CastTarget::Char(Some(2))).unwrap(),
            s("hé")
        );
        assert_eq!(
            cast(&s("ab"), CastTarget::Binary(Some(3))).unwrap(),
            Value::Bytes(b"ab\0".to_vec())
        );
        let day = Value::Date(Date::new(2020, 1, 31).unwrap());
        assert_eq!(
            cast(&s("2020-01-31 10:00:00"), CastTarget::Date).unwrap(),
            day
        );
        assert_eq!(cast(&Value::Int(20200131), CastTarget::Date).unwrap(), day);
        assert_eq!(cast(&s("20-1-31"), CastTarget::Date).unwrap(), day);
        assert_eq!(cast(&s("2020/01/31"), CastTarget::Date).unwrap(), day);
        assert_eq!(
            cast(&s("2020-02-30"), CastTarget::Date).unwrap(),
            Value::Null
        );
        assert_eq!(cast(&s("garbage"), CastTarget::Date).unwrap(), Value::Null);
        let dt = cast(&s("2020-01-31T10:11:12.123456"), CastTarget::DateTime(2)).unwrap();
        assert_eq!(text(&dt), "2020-01-31 10:11:12.120000");
        let dt = cast(&s("20200131101112"), CastTarget::DateTime(0)).unwrap();
        assert_eq!(text(&dt), "2020-01-31 10:11:12");
        assert_eq!(
            cast(&s("1.5x"), CastTarget::Double).unwrap(),
            Value::Double(1.5)
        );
    }

    #[test]
    fn strict_column_conversions() {
        let int = ColumnType::Int { unsigned: false };
        assert_eq!(to_column(s("12"), int, "c").unwrap(), Value::Int(12));
        assert_eq!(to_column(s(" 12 "), int, "c").unwrap(), Value::Int(12));
        assert_eq!(
            to_column(Value::Double(3.5), int, "c").unwrap(),
            Value::Int(4)
        );
        assert_eq!(to_column(s("3.5"), int, "c").unwrap(), Value::Int(4));
        assert_eq!(to_column(s("1e3"), int, "c").unwrap(), Value::Int(1000));
        let e = to_column(s("12abc"), int, "c").unwrap_err();
        assert_eq!(e.mysql_code(), 1366);
        assert_eq!(
            e.to_string(),
            "Incorrect integer value: '12abc' for column 'c' at row 1"
        );
        assert_eq!(to_column(s(""), int, "c").unwrap_err().mysql_code(), 1366);
        let e = to_column(Value::Int(1 << 40), int, "c").unwrap_err();
        assert_eq!(e.mysql_code(), 1264);
        assert_eq!(e.to_string(), "Out of range value for column 'c' at row 1");
        let tiny_u = ColumnType::TinyInt { unsigned: true };
        assert_eq!(
            to_column(Value::Int(-1), tiny_u, "c")
                .unwrap_err()
                .mysql_code(),
            1264
        );
        assert_eq!(
            to_column(Value::Int(255), tiny_u, "c").unwrap(),
            Value::UInt(255)
        );
        let dec_ty = ColumnType::Decimal {
            precision: 5,
            scale: 2,
        };
        assert_eq!(to_column(s("1.005"), dec_ty, "c").unwrap(), dec("1.01"));
        assert_eq!(
            to_column(s("1000"), dec_ty, "c").unwrap_err().mysql_code(),
            1264
        );
        assert_eq!(
            to_column(s("x"), dec_ty, "c").unwrap_err().mysql_code(),
            1366
        );
        let vc = ColumnType::VarChar { len: 3 };
        assert_eq!(to_column(s("abc  "), vc, "c").unwrap(), s("abc"));
        let e = to_column(s("abcd"), vc, "name").unwrap_err();
        assert_eq!(
            (e.mysql_code(), e.to_string().as_str()),
            (1406, "Data too long for column 'name' at row 1")
        );
        assert_eq!(to_column(Value::Int(123), vc, "c").unwrap(), s("123"));
        assert_eq!(
            to_column(Value::Bytes(vec![0xff]), vc, "c")
                .unwrap_err()
                .mysql_code(),
            1366
        );
        let ch = ColumnType::Char { len: 2 };
        assert_eq!(to_column(s("a   "), ch, "c").unwrap(), s("a"));
        let date = ColumnType::Date;
        let day = Value::Date(Date::new(2020, 1, 1).unwrap());
        assert_eq!(to_column(s("2020-01-01"), date, "c").unwrap(), day);
        assert_eq!(to_column(Value::Int(20200101), date, "c").unwrap(), day);
        assert_eq!(to_column(s("2020-01-01 10:00:00"), date, "c").unwrap(), day);
        let e = to_column(s("2020-13-01"), date, "d").unwrap_err();
        assert_eq!(e.mysql_code(), 1292);
        assert_eq!(
            e.to_string(),
            "Incorrect date value: '2020-13-01' for column 'd' at row 1"
        );
        let dt_ty = ColumnType::DateTime { fsp: 0 };
        let v = to_column(s("2020-01-01 10:00:00.6"), dt_ty, "c").unwrap();
        assert_eq!(text(&v), "2020-01-01 10:00:01");
        let ts = ColumnType::Timestamp { fsp: 0 };
        assert_eq!(
            to_column(s("1969-01-01"), ts, "c")
                .unwrap_err()
                .mysql_code(),
            1292
        );
        assert_eq!(
            to_column(s("1e400"), ColumnType::Double, "c")
                .unwrap_err()
                .mysql_code(),
            1264
        );
        assert_eq!(to_column(Value::Null, int, "c").unwrap(), Value::Null);
    }
}
