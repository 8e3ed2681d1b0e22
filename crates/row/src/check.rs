//! Checking and normalising a value for its column (MySQL strict mode).
//!
//! [`check_value`] is the single gate a value passes before the row format or the key
//! encoding sees it. After it, a value has the variant its column's type names (see
//! [`Value`]), is within the type's range, and is in normal form:
//!
//! - DECIMAL values carry exactly the column's scale (rounded half away from zero);
//! - DATETIME/TIMESTAMP and TIME values are rounded to the column's fsp;
//! - YEAR values are `UInt` years, 0 or 1901..=2155;
//! - CHAR values have no trailing spaces (MySQL strips them on read; PAD SPACE);
//! - BINARY(n) values are exactly n bytes, padded with `0x00` (MySQL stores and returns
//!   the padding);
//! - JSON is UTF-8 text within LONGTEXT's bound (its document was checked by the SQL
//!   layer);
//! - text is valid UTF-8 and within the column's length in characters (CHAR/VARCHAR) or
//!   bytes (the TEXT types); binary strings are any bytes within their length in bytes;
//! - ENUM values are one member's text as declared (or `''`, the error value), SET
//!   values their members' text in declared order joined by commas
//!   ([`crate::members`]); BIT values are `UInt`s of at most n bits.
//!
//! Conversions follow MySQL where they are unambiguous: numbers into any numeric type,
//! strings into numbers, dates and text, dates into datetimes and back.

use tarn_common::{Error, Result};

use crate::datetime::{Date, DateTime, Time};
use crate::decimal::Decimal;
use crate::limits::{LONG_LOB_LEN_MAX_BYTES, YEAR_TYPE_MAX, YEAR_TYPE_MIN};
use crate::types::{Collation, Column, ColumnType, Members};
use crate::value::Value;

/// TIMESTAMP's range, '1970-01-01 00:00:01' to '2038-01-19 03:14:07.999999' (UTC).
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

/// Validates and normalises `value` for `column` (see the module documentation).
/// Errors name the column: `NullNotAllowed`, `ValueOutOfRange`, `DataTooLong`, or
/// `IncorrectValue` for a value that cannot be converted.
pub fn check_value(column: &Column, value: Value) -> Result<Value> {
    if value.is_null() {
        return if column.nullable {
            Ok(Value::Null)
        } else {
            Err(Error::NullNotAllowed {
                column: column.name.clone(),
            })
        };
    }
    normalize(column.ty, column.collation, value).map_err(|error| with_column(error, &column.name))
}

/// Fills in the column name of a value error raised where the column was unknown.
pub(crate) fn with_column(error: Error, name: &str) -> Error {
    match error {
        Error::ValueOutOfRange { reason, .. } => Error::ValueOutOfRange {
            column: name.to_string(),
            reason,
        },
        Error::IncorrectValue { reason, .. } => Error::IncorrectValue {
            column: name.to_string(),
            reason,
        },
        Error::DataTooLong { .. } => Error::DataTooLong {
            column: name.to_string(),
        },
        other => other,
    }
}

fn incorrect(reason: String) -> Error {
    Error::IncorrectValue {
        column: String::new(),
        reason,
    }
}

fn out_of_range(reason: String) -> Error {
    Error::ValueOutOfRange {
        column: String::new(),
        reason,
    }
}

fn too_long() -> Error {
    Error::DataTooLong {
        column: String::new(),
    }
}

fn text_of(bytes: &[u8]) -> Result<&str> {
    std::str::from_utf8(bytes).map_err(|_| incorrect("invalid utf8mb4 string".into()))
}

fn normalize(ty: ColumnType, collation: Collation, value: Value) -> Result<Value> {
    match ty {
        // '' is also the error value (index 0) that MySQL stores outside strict mode
        // (INSERT IGNORE); refusing it is the SQL layer's strict-mode rule.
        ColumnType::Enum { members } => match enum_index_for(members, collation, &value) {
            Some(index) => Ok(Value::Bytes(members.name(index).as_bytes().to_vec())),
            None if value == Value::Bytes(Vec::new()) => Ok(value),
            None => Err(incorrect(format!(
                "{value} is not one of the ENUM's members"
            ))),
        },
        ColumnType::Set { members } => {
            let bits = set_bits_for(members, collation, &value)
                .ok_or_else(|| incorrect(format!("{value} is not a set of the SET's members")))?;
            Ok(Value::Bytes(members.set_text(bits)))
        }
        ColumnType::Bit { len_bits } => bit_number_for(len_bits, &value)
            .map(Value::UInt)
            .ok_or_else(too_long),
        ColumnType::TinyInt { .. }
        | ColumnType::SmallInt { .. }
        | ColumnType::Int { .. }
        | ColumnType::BigInt { .. } => normalize_int(ty, value),
        ColumnType::Decimal { precision, scale } => Ok(Value::Decimal(
            to_decimal(&value)?.rescale(precision, scale)?,
        )),
        ColumnType::Float => {
            let v = to_f64(&value)?;
            if !v.is_finite() || v.abs() > f64::from(f32::MAX) {
                return Err(out_of_range(format!("{v} does not fit FLOAT")));
            }
            Ok(Value::Float(v as f32))
        }
        ColumnType::Double => {
            let v = to_f64(&value)?;
            if !v.is_finite() {
                return Err(out_of_range(format!("{v} does not fit DOUBLE")));
            }
            Ok(Value::Double(v))
        }
        ColumnType::Date => Ok(Value::Date(to_datetime(value)?.date)),
        ColumnType::DateTime { fsp } => Ok(Value::DateTime(to_datetime(value)?.round_to_fsp(fsp)?)),
        ColumnType::Timestamp { fsp } => {
            let v = to_datetime(value)?.round_to_fsp(fsp)?;
            if !(TIMESTAMP_MIN..=TIMESTAMP_MAX).contains(&v) {
                return Err(out_of_range(format!("{v} is outside TIMESTAMP's range")));
            }
            Ok(Value::DateTime(v))
        }
        ColumnType::Time { fsp } => match value {
            Value::Time(t) => Ok(Value::Time(t.round_to_fsp(fsp)?)),
            Value::Bytes(bytes) => Ok(Value::Time(
                Time::parse(text_of(&bytes)?)?.round_to_fsp(fsp)?,
            )),
            other => Err(incorrect(format!("{other:?} is not a TIME"))),
        },
        ColumnType::Year => {
            let year = match &value {
                Value::Int(v) => i128::from(*v),
                Value::UInt(v) => i128::from(*v),
                Value::Bytes(_) => to_decimal(&value)?
                    .round_to_i128()
                    .ok_or_else(|| out_of_range(format!("{value} is not a YEAR")))?,
                other => return Err(incorrect(format!("{other:?} is not a YEAR"))),
            };
            let range = i128::from(YEAR_TYPE_MIN)..=i128::from(YEAR_TYPE_MAX);
            if year != 0 && !range.contains(&year) {
                return Err(out_of_range(format!("{year} is not a YEAR")));
            }
            Ok(Value::UInt(year as u64))
        }
        ColumnType::Char { len } => {
            let mut bytes = to_bytes(value);
            let kept = bytes.iter().rposition(|b| *b != b' ').map_or(0, |i| i + 1);
            bytes.truncate(kept);
            check_chars(bytes, len)
        }
        ColumnType::VarChar { len } => check_chars(to_bytes(value), len),
        ColumnType::Binary { len_bytes } => {
            let bytes = check_binary_len(to_bytes(value), len_bytes)?;
            Ok(Value::Bytes(pad_binary(bytes, len_bytes)))
        }
        ColumnType::VarBinary { len_bytes } => {
            Ok(Value::Bytes(check_binary_len(to_bytes(value), len_bytes)?))
        }
        ColumnType::Text
        | ColumnType::TinyText
        | ColumnType::MediumText
        | ColumnType::LongText
        | ColumnType::Blob
        | ColumnType::TinyBlob
        | ColumnType::MediumBlob
        | ColumnType::LongBlob => {
            let bytes = to_bytes(value);
            if ty.is_text() {
                text_of(&bytes)?;
            }
            let len_max_bytes = ty.lob_len_max_bytes().expect("a TEXT or BLOB type");
            if bytes.len() as u64 > len_max_bytes {
                return Err(too_long());
            }
            Ok(Value::Bytes(bytes))
        }
        // The SQL layer parses and normalizes the document before it gets here
        // (`tarn_sql::json`); the row format only needs UTF-8 text within its bound.
        ColumnType::Json => {
            let bytes = to_bytes(value);
            text_of(&bytes)?;
            if bytes.len() as u64 > LONG_LOB_LEN_MAX_BYTES {
                return Err(too_long());
            }
            Ok(Value::Bytes(bytes))
        }
    }
}

/// The member an ENUM column stores for `value` under MySQL's assignment rules: a
/// string names a member (see [`Members::find`]), else, if it is a short unsigned
/// number (fewer than 6 characters, spaces around allowed), is the index; a number
/// with an integral value is the index. None when neither names a member (MySQL's
/// 1265 in strict mode; index 0, the error value, is never returned).
pub fn enum_index_for(members: Members, collation: Collation, value: &Value) -> Option<u32> {
    let index = match value {
        Value::Bytes(text) => {
            if let Some(index) = members.find(text, collation) {
                return Some(index);
            }
            let stripped = std::str::from_utf8(text).ok()?.trim_end_matches(' ');
            let digits = stripped.trim_start_matches(' ');
            if stripped.len() >= 6
                || digits.is_empty()
                || !digits.bytes().all(|b| b.is_ascii_digit())
            {
                return None;
            }
            digits.parse::<u64>().ok()?
        }
        other => integral(other)?,
    };
    (1..=members.len() as u64)
        .contains(&index)
        .then_some(index as u32)
}

/// The bitmask a SET column stores for `value` under MySQL's assignment rules: a
/// string of comma-separated members (see [`Members::find_set`]), else, if it is
/// wholly an unsigned number, the bitmask; a number with an integral value is the
/// bitmask. None when a part names no member or a bit is past the last member.
pub fn set_bits_for(members: Members, collation: Collation, value: &Value) -> Option<u64> {
    let bits = match value {
        Value::Bytes(text) => {
            if let Some(bits) = members.find_set(text, collation) {
                return Some(bits);
            }
            let digits = std::str::from_utf8(text).ok()?.trim_end_matches(' ');
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            digits.parse::<u64>().ok()?
        }
        other => integral(other)?,
    };
    (bits & !members.set_mask() == 0).then_some(bits)
}

/// The number a BIT(`len_bits`) column stores for `value`, as MySQL stores it: a
/// number as its 64-bit two's complement (rounded half away from zero), a string as its
/// bytes read big-endian. None when it needs more than `len_bits` bits (MySQL's 1406).
pub fn bit_number_for(len_bits: u8, value: &Value) -> Option<u64> {
    let n = match value {
        Value::UInt(v) => *v,
        Value::Int(v) => *v as u64,
        Value::Bytes(bytes) => {
            let start = bytes.iter().position(|b| *b != 0).unwrap_or(bytes.len());
            let significant = &bytes[start..];
            if significant.len() > 8 {
                return None;
            }
            let mut word = [0u8; 8];
            word[8 - significant.len()..].copy_from_slice(significant);
            u64::from_be_bytes(word)
        }
        Value::Decimal(_) | Value::Float(_) | Value::Double(_) => {
            let n = to_decimal(value).ok()?.round_to_i128()?;
            match u64::try_from(n) {
                Ok(n) => n,
                Err(_) => i64::try_from(n).ok()? as u64,
            }
        }
        Value::Date(_) | Value::DateTime(_) | Value::Time(_) | Value::Null => return None,
    };
    (n <= crate::row::bit_max(len_bits)).then_some(n)
}

/// A number with an integral value that is not negative, as a `u64`.
fn integral(value: &Value) -> Option<u64> {
    match value {
        Value::Int(v) => u64::try_from(*v).ok(),
        Value::UInt(v) => Some(*v),
        Value::Decimal(_) | Value::Float(_) | Value::Double(_) => {
            let d = to_decimal(value).ok()?;
            let n = d.round_to_i128()?;
            (Decimal::from_i128(n, 0).ok()? == d)
                .then(|| u64::try_from(n).ok())
                .flatten()
        }
        _ => None,
    }
}

/// `bytes` if they fit a BINARY or VARBINARY of `len_bytes`; `DataTooLong` if not.
/// Unlike text, excess trailing spaces are data too (MySQL and MariaDB refuse them).
fn check_binary_len(bytes: Vec<u8>, len_bytes: u32) -> Result<Vec<u8>> {
    if bytes.len() > len_bytes as usize {
        return Err(too_long());
    }
    Ok(bytes)
}

/// `bytes` padded with `0x00` to `len_bytes`, as MySQL stores a BINARY(n) value (and
/// returns it: the padding is part of the value, so `'a'` in a BINARY(2) reads back
/// as `'a\0'` and no longer equals `'a'`). Longer input is left as it is.
pub fn pad_binary(mut bytes: Vec<u8>, len_bytes: u32) -> Vec<u8> {
    if bytes.len() < len_bytes as usize {
        bytes.resize(len_bytes as usize, 0);
    }
    bytes
}

/// Text of at most `len` characters; excess trailing spaces are cut (as MySQL does,
/// with a note), any other excess is `DataTooLong`.
fn check_chars(mut bytes: Vec<u8>, len: u32) -> Result<Value> {
    let text = text_of(&bytes)?;
    if let Some((cut, _)) = text.char_indices().nth(len as usize) {
        if text.as_bytes()[cut..].iter().any(|b| *b != b' ') {
            return Err(too_long());
        }
        bytes.truncate(cut);
    }
    Ok(Value::Bytes(bytes))
}

fn normalize_int(ty: ColumnType, value: Value) -> Result<Value> {
    let (min, max) = ty.int_range().expect("an integer type");
    let v: i128 = match &value {
        Value::Int(v) => i128::from(*v),
        Value::UInt(v) => i128::from(*v),
        Value::Float(_) | Value::Double(_) => {
            let f = to_f64(&value)?;
            if !f.is_finite() || f.abs() > 1e39 {
                return Err(out_of_range(format!("{f} is not an integer in range")));
            }
            f.round() as i128
        }
        Value::Decimal(_) | Value::Bytes(_) => to_decimal(&value)?
            .round_to_i128()
            .ok_or_else(|| out_of_range(format!("{value} is too large")))?,
        Value::Date(_) | Value::DateTime(_) | Value::Time(_) | Value::Null => {
            return Err(incorrect(format!("{value} is not an integer")));
        }
    };
    if v < min || v > max {
        return Err(out_of_range(format!("{v} is outside {min}..={max}")));
    }
    Ok(if ty.is_unsigned_int() {
        Value::UInt(v as u64)
    } else {
        Value::Int(v as i64)
    })
}

fn to_decimal(value: &Value) -> Result<Decimal> {
    match value {
        Value::Int(v) => Ok(Decimal::from(*v)),
        Value::UInt(v) => Ok(Decimal::from(*v)),
        Value::Decimal(v) => Ok(*v),
        Value::Float(v) => Decimal::from_f64(f64::from(*v))
            .ok_or_else(|| out_of_range(format!("{v} is not a decimal in range"))),
        Value::Double(v) => Decimal::from_f64(*v)
            .ok_or_else(|| out_of_range(format!("{v} is not a decimal in range"))),
        Value::Bytes(bytes) => Decimal::parse(text_of(bytes)?),
        Value::Date(_) | Value::DateTime(_) | Value::Time(_) | Value::Null => {
            Err(incorrect(format!("{value} is not a number")))
        }
    }
}

fn to_f64(value: &Value) -> Result<f64> {
    match value {
        Value::Int(v) => Ok(*v as f64),
        Value::UInt(v) => Ok(*v as f64),
        Value::Decimal(v) => Ok(v.to_f64()),
        Value::Float(v) => Ok(f64::from(*v)),
        Value::Double(v) => Ok(*v),
        Value::Bytes(bytes) => {
            let text = text_of(bytes)?.trim();
            // Rust also parses "inf" and "NaN"; SQL numbers are digits, sign, point, exponent.
            let numeric = text
                .bytes()
                .all(|b| b.is_ascii_digit() || matches!(b, b'+' | b'-' | b'.' | b'e' | b'E'));
            numeric
                .then(|| text.parse::<f64>().ok())
                .flatten()
                .ok_or_else(|| incorrect(format!("'{text}' is not a number")))
        }
        Value::Date(_) | Value::DateTime(_) | Value::Time(_) | Value::Null => {
            Err(incorrect(format!("{value} is not a number")))
        }
    }
}

fn to_datetime(value: Value) -> Result<DateTime> {
    match value {
        Value::Date(d) if d.is_valid() => Ok(DateTime::from_date(d)),
        Value::DateTime(dt) if dt.is_valid() => Ok(dt),
        Value::Bytes(bytes) => DateTime::parse(text_of(&bytes)?),
        other => Err(incorrect(format!(
            "{other:?} is not a valid date or datetime"
        ))),
    }
}

fn to_bytes(value: Value) -> Vec<u8> {
    match value {
        Value::Bytes(bytes) => bytes,
        other => other.to_string().into_bytes(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::Collation;

    fn col(ty: ColumnType) -> Column {
        Column::new("c", ty, false)
    }

    #[test]
    fn nulls_and_integer_ranges() {
        let c = col(ColumnType::TinyInt { unsigned: false });
        assert!(
            matches!(check_value(&c, Value::Null), Err(Error::NullNotAllowed { column }) if column == "c")
        );
        assert_eq!(
            check_value(&Column::new("n", c.ty, true), Value::Null).unwrap(),
            Value::Null
        );
        assert_eq!(check_value(&c, Value::Int(-128)).unwrap(), Value::Int(-128));
        assert!(
            matches!(check_value(&c, Value::Int(128)), Err(Error::ValueOutOfRange { column, .. }) if column == "c")
        );
        let u = col(ColumnType::BigInt { unsigned: true });
        assert_eq!(check_value(&u, Value::Int(5)).unwrap(), Value::UInt(5));
        assert_eq!(
            check_value(&u, Value::UInt(u64::MAX)).unwrap(),
            Value::UInt(u64::MAX)
        );
        assert!(check_value(&u, Value::Int(-1)).is_err());
        let i = col(ColumnType::Int { unsigned: false });
        assert_eq!(
            check_value(&i, Value::Bytes(b" 42 ".to_vec())).unwrap(),
            Value::Int(42)
        );
        assert_eq!(check_value(&i, Value::Double(2.5)).unwrap(), Value::Int(3));
        assert!(check_value(&i, Value::Bytes(b"4x".to_vec())).is_err());
        assert!(check_value(&i, Value::Int(i64::from(i32::MAX) + 1)).is_err());
    }

    #[test]
    fn decimals_floats_and_dates() {
        let d = col(ColumnType::Decimal {
            precision: 5,
            scale: 2,
        });
        assert_eq!(
            check_value(&d, Value::Bytes(b"1.005".to_vec()))
                .unwrap()
                .to_string(),
            "1.01"
        );
        assert_eq!(check_value(&d, Value::Int(7)).unwrap().to_string(), "7.00");
        assert!(matches!(
            check_value(&d, Value::Int(1000)),
            Err(Error::ValueOutOfRange { .. })
        ));
        let f = col(ColumnType::Float);
        assert!(check_value(&f, Value::Double(1e39)).is_err());
        assert!(check_value(&f, Value::Double(f64::NAN)).is_err());
        assert_eq!(
            check_value(&f, Value::Double(1.5)).unwrap(),
            Value::Float(1.5)
        );
        let dt = col(ColumnType::DateTime { fsp: 2 });
        assert_eq!(
            check_value(&dt, Value::Bytes(b"2024-01-01 10:00:00.125".to_vec()))
                .unwrap()
                .to_string(),
            "2024-01-01 10:00:00.130000"
        );
        let ts = col(ColumnType::Timestamp { fsp: 0 });
        assert!(check_value(&ts, Value::Bytes(b"1969-12-31 23:59:59".to_vec())).is_err());
        assert!(check_value(&ts, Value::Bytes(b"2038-01-19 03:14:08".to_vec())).is_err());
        assert!(check_value(&ts, Value::Bytes(b"2038-01-19 03:14:07".to_vec())).is_ok());
        let date = col(ColumnType::Date);
        assert!(
            check_value(
                &date,
                Value::Date(Date {
                    year: 2023,
                    month: 2,
                    day: 29
                })
            )
            .is_err()
        );
        assert_eq!(
            check_value(&date, Value::Bytes(b"2024-02-29 13:00:00".to_vec())).unwrap(),
            Value::Date(Date::new(2024, 2, 29).unwrap())
        );
    }

    #[test]
    fn times_round_and_years_keep_their_range() {
        let t = col(ColumnType::Time { fsp: 1 });
        assert_eq!(
            check_value(&t, Value::Bytes(b"-838:59:58.96".to_vec()))
                .unwrap()
                .to_string(),
            "-838:59:59"
        );
        assert!(check_value(&t, Value::Bytes(b"838:59:59.99".to_vec())).is_err());
        assert!(check_value(&t, Value::Int(1)).is_err());
        let y = col(ColumnType::Year);
        assert_eq!(
            check_value(&y, Value::Int(2155)).unwrap(),
            Value::UInt(2155)
        );
        assert_eq!(check_value(&y, Value::UInt(0)).unwrap(), Value::UInt(0));
        assert_eq!(
            check_value(&y, Value::Bytes(b"1901".to_vec())).unwrap(),
            Value::UInt(1901)
        );
        for bad in [1900, 2156, 70, -1] {
            assert!(
                matches!(
                    check_value(&y, Value::Int(bad)),
                    Err(Error::ValueOutOfRange { .. })
                ),
                "{bad}"
            );
        }
    }

    #[test]
    fn strings_count_characters() {
        let c = col(ColumnType::Char { len: 3 }).with_collation(Collation::CaseInsensitive);
        assert_eq!(
            check_value(&c, Value::Bytes(b"ab   ".to_vec())).unwrap(),
            Value::Bytes(b"ab".to_vec())
        );
        assert_eq!(
            check_value(&c, Value::Bytes("éßü".into())).unwrap(),
            Value::Bytes("éßü".into())
        );
        assert!(
            matches!(check_value(&c, Value::Bytes(b"abcd".to_vec())), Err(Error::DataTooLong { column }) if column == "c")
        );
        let v = col(ColumnType::VarChar { len: 2 });
        assert_eq!(
            check_value(&v, Value::Bytes(b"a   ".to_vec())).unwrap(),
            Value::Bytes(b"a ".to_vec())
        );
        assert!(check_value(&v, Value::Bytes(vec![0xff])).is_err());
        assert_eq!(
            check_value(&v, Value::Int(12)).unwrap(),
            Value::Bytes(b"12".to_vec())
        );
        let t = col(ColumnType::Text);
        // TEXT stands in for MEDIUMTEXT/LONGTEXT: past MySQL's 65,535-byte TEXT.
        assert!(check_value(&t, Value::Bytes(vec![b'x'; 70_000])).is_ok());
        assert!(check_value(&t, Value::Bytes(vec![0xff])).is_err());
        let b = col(ColumnType::Blob);
        assert!(check_value(&b, Value::Bytes(vec![0xff; 70_000])).is_ok());
    }

    #[test]
    fn binary_strings_hold_any_bytes_within_their_length() {
        let too_long = |r: Result<Value>| matches!(r, Err(Error::DataTooLong { .. }));
        let b = col(ColumnType::Binary { len_bytes: 4 });
        assert_eq!(
            check_value(&b, Value::Bytes(vec![0xff, 0x00])).unwrap(),
            Value::Bytes(vec![0xff, 0x00, 0x00, 0x00])
        );
        assert_eq!(
            check_value(&b, Value::Bytes(b"ab  ".to_vec())).unwrap(),
            Value::Bytes(b"ab  ".to_vec())
        );
        assert!(too_long(check_value(&b, Value::Bytes(vec![1; 5]))));
        // Trailing spaces or zeros past the length are data, not padding.
        assert!(too_long(check_value(&b, Value::Bytes(b"abcd ".to_vec()))));
        assert!(too_long(check_value(&b, Value::Bytes(b"abcd\0".to_vec()))));
        let v = col(ColumnType::VarBinary { len_bytes: 3 });
        assert_eq!(
            check_value(&v, Value::Bytes(vec![0xfe])).unwrap(),
            Value::Bytes(vec![0xfe])
        );
        assert!(too_long(check_value(&v, Value::Bytes(b"ab  ".to_vec()))));
        assert_eq!(
            check_value(&v, Value::Int(12)).unwrap(),
            Value::Bytes(b"12".to_vec())
        );
        let tiny = col(ColumnType::TinyBlob);
        assert!(check_value(&tiny, Value::Bytes(vec![0xff; 255])).is_ok());
        assert!(too_long(check_value(&tiny, Value::Bytes(vec![0xff; 256]))));
        let tiny_text = col(ColumnType::TinyText);
        assert!(too_long(check_value(
            &tiny_text,
            Value::Bytes(vec![b'x'; 256])
        )));
        assert!(check_value(&tiny_text, Value::Bytes(vec![0xff])).is_err());
        let medium = col(ColumnType::MediumBlob);
        assert!(check_value(&medium, Value::Bytes(vec![0; 70_000])).is_ok());
    }
}
