//! Order-preserving (memcmp) key encoding.
//!
//! The B+tree compares keys as raw bytes. [`encode_key`] turns a tuple of column values
//! into bytes whose unsigned lexicographic order is the SQL order of the tuples, column
//! by column; [`compare_values`] is that SQL order for one column, and the tests check
//! that the two agree on random values of every type.
//!
//! Each column is a marker byte, `0x00` for NULL (nothing follows, so NULL sorts
//! first) or `0x01` for a value, followed by:
//!
//! | type | bytes |
//! |---|---|
//! | signed integers | value minus the type's minimum (sign bit flipped), big-endian, in the type's width (1, 2, 4, 8) |
//! | unsigned integers | big-endian in the type's width |
//! | FLOAT, DOUBLE | IEEE bits big-endian; -0.0 becomes 0.0 first; a set sign bit inverts every bit, a clear one is flipped |
//! | DECIMAL(p, s) | the binary form of [`crate::decimal`] (`binary_len_bytes(p, s)` bytes) |
//! | DATE | day number (u32) big-endian |
//! | DATETIME, TIMESTAMP | microsecond number (u64) big-endian |
//! | TIME | signed microseconds (i64) with the sign bit flipped, big-endian |
//! | YEAR | the year (u16) big-endian (0 for `0000` sorts first) |
//! | ENUM | the member's index big-endian in the type's width (1 or 2): MySQL sorts ENUMs by index |
//! | SET | the bitmask big-endian in the type's width (1, 2, 3, 4, 8): MySQL sorts SETs by number |
//! | BIT(n) | the number big-endian in ceil(n / 8) bytes |
//! | strings (CHAR, VARCHAR, BINARY, VARBINARY, the TEXT and BLOB types) | the weight string with each `0x00` written as `0x00 0xFF`, then the terminator `0x00 0x00` |
//!
//! The escaping makes string encodings prefix-free, so the column after a string still
//! compares correctly, and keeps `"a" < "a\0" < "ab"`.
//!
//! The weight string of a value: for binary strings (BINARY, VARBINARY, BLOB) and
//! `Binary` text, the bytes themselves (CHAR loses trailing spaces, which
//! [`crate::check_value`] already strips; BINARY keeps its `0x00` padding, which is
//! part of the value, so binary keys order bytewise as MySQL compares them). For
//! `CaseInsensitive` text, each character mapped to its simple uppercase (when that is a
//! single character; `ß` stays `ß`), bytes that are not UTF-8 kept as they are, then
//! trailing spaces removed (PAD SPACE). So `'abc'`, `'ABC'` and `'Abc  '` encode the
//! same. Unlike MySQL's PAD SPACE, which pads the shorter string with spaces, a value
//! with a trailing control character below the space (`'a\t'`) sorts after `'a'`.
//!
//! The encoding is not meant to be decoded (case-insensitive weights lose the case);
//! secondary-index entries carry the primary key's encoding, which the table finds
//! with [`key_prefix_len`]. A key longer than [`KEY_LEN_MAX_BYTES`] is `KeyTooLong`.

use std::borrow::Cow;
use std::cmp::Ordering;

use tarn_common::{Error, Result};

use crate::datetime::DateTime;
use crate::decimal::{Decimal, binary_len_bytes};
use crate::limits::KEY_LEN_MAX_BYTES;
use crate::types::{Collation, ColumnType};
use crate::value::Value;

const MARKER_NULL: u8 = 0x00;
const MARKER_VALUE: u8 = 0x01;
const ESCAPE: u8 = 0xff;

fn incorrect(reason: String) -> Error {
    Error::IncorrectValue {
        column: String::new(),
        reason,
    }
}

fn corrupt(reason: &str) -> Error {
    Error::CorruptData(format!("key: {reason}"))
}

/// Appends the encoding of `values` (a prefix of `columns`: fewer values than columns
/// encode a prefix key for range scans) to `out`. Values must fit their column as
/// [`crate::check_value`] leaves them; a DECIMAL is never rounded here. On error `out`
/// is as it was.
pub fn encode_key(
    columns: &[(ColumnType, Collation)],
    values: &[Value],
    out: &mut Vec<u8>,
) -> Result<()> {
    if values.len() > columns.len() {
        return Err(incorrect(format!(
            "{} key values for {} key columns",
            values.len(),
            columns.len()
        )));
    }
    let start = out.len();
    let mut result = Ok(());
    for ((ty, collation), value) in columns.iter().zip(values) {
        if value.is_null() {
            out.push(MARKER_NULL);
            continue;
        }
        out.push(MARKER_VALUE);
        result = encode_value(*ty, *collation, value, out);
        if result.is_err() {
            break;
        }
    }
    if result.is_ok() && out.len() - start > KEY_LEN_MAX_BYTES {
        result = Err(Error::KeyTooLong {
            max_bytes: KEY_LEN_MAX_BYTES,
        });
    }
    if result.is_err() {
        out.truncate(start);
    }
    result
}

fn mismatch(ty: ColumnType, value: &Value) -> Error {
    incorrect(format!("{value:?} is not a key value of type {ty:?}"))
}

fn int_of(value: &Value) -> Option<i128> {
    match value {
        Value::Int(v) => Some(i128::from(*v)),
        Value::UInt(v) => Some(i128::from(*v)),
        _ => None,
    }
}

fn float_of(value: &Value) -> Option<f64> {
    match value {
        Value::Float(v) => Some(f64::from(*v)),
        Value::Double(v) => Some(*v),
        _ => None,
    }
}

fn decimal_of(value: &Value) -> Option<Decimal> {
    match value {
        Value::Decimal(v) => Some(*v),
        Value::Int(v) => Some(Decimal::from(*v)),
        Value::UInt(v) => Some(Decimal::from(*v)),
        _ => None,
    }
}

/// -0.0 becomes 0.0, so the two encode (and compare) equal.
fn f32_key(value: f32) -> f32 {
    if value == 0.0 { 0.0 } else { value }
}

fn f64_key(value: f64) -> f64 {
    if value == 0.0 { 0.0 } else { value }
}

fn encode_value(
    ty: ColumnType,
    collation: Collation,
    value: &Value,
    out: &mut Vec<u8>,
) -> Result<()> {
    match ty {
        ColumnType::TinyInt { .. }
        | ColumnType::SmallInt { .. }
        | ColumnType::Int { .. }
        | ColumnType::BigInt { .. } => {
            let (min, max) = ty.int_range().expect("an integer type");
            let width = ty.fixed_len_bytes().expect("integers are fixed-width");
            let v = int_of(value).ok_or_else(|| mismatch(ty, value))?;
            if v < min || v > max {
                return Err(Error::ValueOutOfRange {
                    column: String::new(),
                    reason: format!("{v} is outside {min}..={max}"),
                });
            }
            let biased = (v - min) as u64;
            out.extend_from_slice(&biased.to_be_bytes()[8 - width..]);
        }
        ColumnType::Float => {
            let v = f32_key(float_of(value).ok_or_else(|| mismatch(ty, value))? as f32);
            let bits = v.to_bits();
            let ordered = if bits >> 31 == 1 {
                !bits
            } else {
                bits ^ (1 << 31)
            };
            out.extend_from_slice(&ordered.to_be_bytes());
        }
        ColumnType::Double => {
            let v = f64_key(float_of(value).ok_or_else(|| mismatch(ty, value))?);
            let bits = v.to_bits();
            let ordered = if bits >> 63 == 1 {
                !bits
            } else {
                bits ^ (1 << 63)
            };
            out.extend_from_slice(&ordered.to_be_bytes());
        }
        ColumnType::Decimal { precision, scale } => {
            let v = decimal_of(value).ok_or_else(|| mismatch(ty, value))?;
            let at = out.len();
            out.resize(at + binary_len_bytes(precision, scale), 0);
            v.write_binary(precision, scale, &mut out[at..])?;
        }
        ColumnType::Date => match value {
            Value::Date(v) if v.is_valid() => out.extend_from_slice(&v.to_days().to_be_bytes()),
            _ => return Err(mismatch(ty, value)),
        },
        ColumnType::DateTime { .. } | ColumnType::Timestamp { .. } => match value {
            Value::DateTime(v) if v.is_valid() => {
                out.extend_from_slice(&v.to_micros().to_be_bytes())
            }
            _ => return Err(mismatch(ty, value)),
        },
        ColumnType::Time { .. } => match value {
            Value::Time(v) => {
                out.extend_from_slice(&((v.micros() as u64) ^ (1 << 63)).to_be_bytes())
            }
            _ => return Err(mismatch(ty, value)),
        },
        ColumnType::Year => match value {
            Value::UInt(v) => {
                let year = u16::try_from(*v).map_err(|_| Error::ValueOutOfRange {
                    column: String::new(),
                    reason: format!("{v} is not a YEAR"),
                })?;
                out.extend_from_slice(&year.to_be_bytes())
            }
            _ => return Err(mismatch(ty, value)),
        },
        ColumnType::Enum { .. } | ColumnType::Set { .. } | ColumnType::Bit { .. } => {
            let n = number_of(ty, value).ok_or_else(|| mismatch(ty, value))?;
            let width = ty
                .fixed_len_bytes()
                .expect("ENUM, SET and BIT are fixed-width");
            out.extend_from_slice(&n.to_be_bytes()[8 - width..]);
        }
        ColumnType::Char { .. }
        | ColumnType::VarChar { .. }
        | ColumnType::Text
        | ColumnType::Blob
        | ColumnType::Binary { .. }
        | ColumnType::VarBinary { .. }
        | ColumnType::TinyText
        | ColumnType::MediumText
        | ColumnType::LongText
        | ColumnType::TinyBlob
        | ColumnType::MediumBlob
        | ColumnType::LongBlob
        | ColumnType::Json => {
            let Value::Bytes(bytes) = value else {
                return Err(mismatch(ty, value));
            };
            for &byte in weight(ty, collation, bytes).iter() {
                out.push(byte);
                if byte == 0 {
                    out.push(ESCAPE);
                }
            }
            out.extend_from_slice(&[0, 0]);
        }
    }
    Ok(())
}

/// The number an ENUM (its index), SET (its bitmask) or BIT value is stored and
/// ordered by; None for a value that is none of the type's.
fn number_of(ty: ColumnType, value: &Value) -> Option<u64> {
    match (ty, value) {
        (ColumnType::Enum { members }, Value::Bytes(text)) => members.index_of(text).map(u64::from),
        (ColumnType::Set { members }, Value::Bytes(text)) => members.set_bits_of(text),
        (ColumnType::Bit { len_bits }, Value::UInt(v)) if *v <= crate::row::bit_max(len_bits) => {
            Some(*v)
        }
        _ => None,
    }
}

fn strip_trailing_spaces(bytes: &[u8]) -> &[u8] {
    let kept = bytes.iter().rposition(|b| *b != b' ').map_or(0, |i| i + 1);
    &bytes[..kept]
}

/// The bytes a string compares by (see the module documentation).
pub fn weight<'a>(ty: ColumnType, collation: Collation, bytes: &'a [u8]) -> Cow<'a, [u8]> {
    match (ty, collation) {
        // JSON text compares bytewise (it is never an index key; SQL comparisons of
        // JSON values go through `tarn_sql::json`'s comparison key).
        (ty, _) if ty.is_binary_string() || ty == ColumnType::Json => Cow::Borrowed(bytes),
        (_, Collation::Binary) => match ty {
            ColumnType::Char { .. } => Cow::Borrowed(strip_trailing_spaces(bytes)),
            _ => Cow::Borrowed(bytes),
        },
        (_, Collation::CaseInsensitive) => {
            let trimmed = strip_trailing_spaces(bytes);
            if trimmed.is_ascii() {
                return Cow::Owned(trimmed.to_ascii_uppercase());
            }
            let mut folded = Vec::with_capacity(trimmed.len());
            for chunk in trimmed.utf8_chunks() {
                for c in chunk.valid().chars() {
                    let mut upper = c.to_uppercase();
                    let mapped = match (upper.next(), upper.next()) {
                        (Some(single), None) => single,
                        _ => c,
                    };
                    let mut buf = [0u8; 4];
                    folded.extend_from_slice(mapped.encode_utf8(&mut buf).as_bytes());
                }
                folded.extend_from_slice(chunk.invalid());
            }
            // Uppercasing never produces a space from a non-space, but be exact anyway.
            let kept = strip_trailing_spaces(&folded).len();
            folded.truncate(kept);
            Cow::Owned(folded)
        }
    }
}

/// Byte length of the first `ncols` encoded columns of `key` (for splitting a secondary
/// index entry, `secondary key ++ primary key`). Malformed bytes are `IncorrectValue`;
/// never panics.
pub fn key_prefix_len(
    columns: &[(ColumnType, Collation)],
    key: &[u8],
    ncols: usize,
) -> Result<usize> {
    if ncols > columns.len() {
        return Err(incorrect(format!(
            "asked for {ncols} of {} key columns",
            columns.len()
        )));
    }
    let mut pos = 0;
    for (ty, _) in &columns[..ncols] {
        let marker = *key.get(pos).ok_or_else(|| corrupt("too short"))?;
        pos += 1;
        match marker {
            MARKER_NULL => continue,
            MARKER_VALUE => {}
            _ => return Err(corrupt("bad NULL marker")),
        }
        match ty.fixed_len_bytes() {
            Some(width) => {
                pos += width;
                if pos > key.len() {
                    return Err(corrupt("too short"));
                }
            }
            None => loop {
                let zero = key[pos..]
                    .iter()
                    .position(|b| *b == 0)
                    .ok_or_else(|| corrupt("unterminated string"))?;
                let after = key.get(pos + zero + 1).copied();
                pos += zero + 2;
                match after {
                    Some(0) => break,
                    Some(ESCAPE) => continue,
                    _ => return Err(corrupt("bad string escape")),
                }
            },
        }
    }
    Ok(pos)
}

/// Rank of a value's variant, to order values of different variants deterministically
/// (only reached when a caller mixes types; never within one well-typed column).
fn variant_rank(value: &Value) -> u8 {
    match value {
        Value::Null => 0,
        Value::Int(_) | Value::UInt(_) => 1,
        Value::Decimal(_) => 2,
        Value::Float(_) | Value::Double(_) => 3,
        Value::Date(_) => 4,
        Value::DateTime(_) => 5,
        Value::Bytes(_) => 6,
        Value::Time(_) => 7,
    }
}

/// The SQL order of two values of one column, consistent with [`encode_key`]: NULL
/// first, numbers numerically (-0.0 = 0.0), dates chronologically, strings by their
/// weight, ENUM and SET by their index and bitmask (see the module documentation).
pub fn compare_values(ty: ColumnType, collation: Collation, a: &Value, b: &Value) -> Ordering {
    let by_rank = || variant_rank(a).cmp(&variant_rank(b));
    match (a, b) {
        (Value::Null, Value::Null) => return Ordering::Equal,
        (Value::Null, _) => return Ordering::Less,
        (_, Value::Null) => return Ordering::Greater,
        _ => {}
    }
    match ty {
        ColumnType::TinyInt { .. }
        | ColumnType::SmallInt { .. }
        | ColumnType::Int { .. }
        | ColumnType::BigInt { .. }
        | ColumnType::Year => match (int_of(a), int_of(b)) {
            (Some(x), Some(y)) => x.cmp(&y),
            _ => by_rank(),
        },
        ColumnType::Float => match (float_of(a), float_of(b)) {
            (Some(x), Some(y)) => f32_key(x as f32).total_cmp(&f32_key(y as f32)),
            _ => by_rank(),
        },
        ColumnType::Double => match (float_of(a), float_of(b)) {
            (Some(x), Some(y)) => f64_key(x).total_cmp(&f64_key(y)),
            _ => by_rank(),
        },
        ColumnType::Decimal { .. } => match (decimal_of(a), decimal_of(b)) {
            (Some(x), Some(y)) => x.cmp(&y),
            _ => by_rank(),
        },
        ColumnType::Date | ColumnType::DateTime { .. } | ColumnType::Timestamp { .. } => {
            match (a, b) {
                (Value::Date(x), Value::Date(y)) => x.cmp(y),
                (Value::DateTime(x), Value::DateTime(y)) => x.cmp(y),
                (Value::Date(x), Value::DateTime(y)) => DateTime::from_date(*x).cmp(y),
                (Value::DateTime(x), Value::Date(y)) => x.cmp(&DateTime::from_date(*y)),
                _ => by_rank(),
            }
        }
        ColumnType::Time { .. } => match (a, b) {
            (Value::Time(x), Value::Time(y)) => x.cmp(y),
            _ => by_rank(),
        },
        ColumnType::Enum { .. } | ColumnType::Set { .. } | ColumnType::Bit { .. } => {
            match (number_of(ty, a), number_of(ty, b)) {
                (Some(x), Some(y)) => x.cmp(&y),
                _ => by_rank(),
            }
        }
        ColumnType::Char { .. }
        | ColumnType::VarChar { .. }
        | ColumnType::Text
        | ColumnType::Blob
        | ColumnType::Binary { .. }
        | ColumnType::VarBinary { .. }
        | ColumnType::TinyText
        | ColumnType::MediumText
        | ColumnType::LongText
        | ColumnType::TinyBlob
        | ColumnType::MediumBlob
        | ColumnType::LongBlob
        | ColumnType::Json => match (a, b) {
            (Value::Bytes(x), Value::Bytes(y)) => {
                weight(ty, collation, x).cmp(&weight(ty, collation, y))
            }
            _ => by_rank(),
        },
    }
}
