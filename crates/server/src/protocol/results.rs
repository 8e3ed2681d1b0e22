//! OK, ERR and EOF packets, column definitions, and rows.
//!
//! Column types on the wire come from the result column's [`SqlType`], and rows are
//! encoded from the same type, so a binary row always has the width its column
//! definition announced (an `INT` column is `LONG`, 4 bytes; an expression is
//! `LONGLONG`). Row encoders append whole packets to a buffer with a zero sequence
//! byte (see [`super::packet`]).

use std::io::Write;

use tarn_row::Value;
use tarn_sql::SqlType;
use tarn_sql::plan::OutputColumn;

use super::packet::{begin, finish};
use super::{charset, column_type, put_lenenc_bytes, put_lenenc_int};

/// Column definition flags.
mod flag {
    pub const NOT_NULL: u16 = 1;
    pub const BLOB: u16 = 1 << 4;
    pub const UNSIGNED: u16 = 1 << 5;
    pub const BINARY: u16 = 1 << 7;
    pub const NUM: u16 = 1 << 15;
}

/// An OK packet (`header` 0x00), or the 0xfe-headed OK that ends a result set when
/// the client asked for DEPRECATE_EOF.
pub fn ok(
    out: &mut Vec<u8>,
    header: u8,
    affected_rows: u64,
    last_insert_id: u64,
    status: u16,
    warnings: u16,
    info: &str,
) {
    let start = begin(out);
    out.push(header);
    put_lenenc_int(out, affected_rows);
    put_lenenc_int(out, last_insert_id);
    out.extend_from_slice(&status.to_le_bytes());
    out.extend_from_slice(&warnings.to_le_bytes());
    // Servers send the info length-encoded (MySQL's net_send_ok), and libmariadb
    // reads it so, whatever the protocol documentation says.
    if !info.is_empty() {
        put_lenenc_bytes(out, info.as_bytes());
    }
    finish(out, start);
}

/// An ERR packet. Messages longer than MySQL's 512 bytes are cut at a char boundary.
pub fn err(out: &mut Vec<u8>, code: u16, sqlstate: &str, message: &str) {
    let start = begin(out);
    out.push(0xff);
    out.extend_from_slice(&code.to_le_bytes());
    out.push(b'#');
    let state = sqlstate.as_bytes();
    out.extend((0..5).map(|i| state.get(i).copied().unwrap_or(b'0')));
    let mut end = message.len().min(512);
    while !message.is_char_boundary(end) {
        end -= 1;
    }
    out.extend_from_slice(&message.as_bytes()[..end]);
    finish(out, start);
}

/// An EOF packet (clients without DEPRECATE_EOF).
pub fn eof(out: &mut Vec<u8>, status: u16, warnings: u16) {
    let start = begin(out);
    out.push(0xfe);
    out.extend_from_slice(&warnings.to_le_bytes());
    out.extend_from_slice(&status.to_le_bytes());
    finish(out, start);
}

/// How a column is described on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WireType {
    pub column_type: u8,
    pub length: u32,
    pub charset: u8,
    pub flags: u16,
    pub decimals: u8,
}

pub fn wire_type(ty: &SqlType, nullable: bool) -> WireType {
    use column_type as t;
    let not_null = if nullable { 0 } else { flag::NOT_NULL };
    let number = |column_type, length, unsigned: bool| WireType {
        column_type,
        length,
        charset: charset::BINARY,
        flags: not_null | flag::NUM | flag::BINARY | if unsigned { flag::UNSIGNED } else { 0 },
        decimals: 0,
    };
    let int = |bits: u8, unsigned: bool| match bits {
        8 => number(t::TINY, 4, unsigned),
        16 => number(t::SHORT, 6, unsigned),
        32 => number(t::LONG, 11, unsigned),
        _ => number(t::LONGLONG, 20, unsigned),
    };
    match *ty {
        SqlType::Null => WireType {
            column_type: t::NULL,
            length: 0,
            charset: charset::BINARY,
            flags: flag::BINARY,
            decimals: 0,
        },
        SqlType::Int { bits } => int(bits, false),
        SqlType::UInt { bits } => int(bits, true),
        SqlType::Decimal { precision, scale } => WireType {
            decimals: scale,
            ..number(
                t::NEWDECIMAL,
                precision as u32 + u32::from(scale > 0) + 1,
                false,
            )
        },
        SqlType::Float => WireType {
            decimals: 31,
            ..number(t::FLOAT, 12, false)
        },
        SqlType::Double => WireType {
            decimals: 31,
            ..number(t::DOUBLE, 22, false)
        },
        SqlType::Date => WireType {
            flags: not_null | flag::BINARY,
            ..number(t::DATE, 10, false)
        },
        SqlType::DateTime { fsp, timestamp } => WireType {
            flags: not_null | flag::BINARY,
            decimals: fsp,
            ..number(
                if timestamp { t::TIMESTAMP } else { t::DATETIME },
                19 + if fsp > 0 { fsp as u32 + 1 } else { 0 },
                false,
            )
        },
        SqlType::Text {
            len_chars, fixed, ..
        } => WireType {
            column_type: if fixed { t::STRING } else { t::VAR_STRING },
            length: len_chars.unwrap_or(65_535).saturating_mul(4),
            charset: charset::UTF8MB4_0900_AI_CI,
            flags: not_null,
            decimals: 0,
        },
        SqlType::Blob => WireType {
            column_type: t::BLOB,
            length: 65_535,
            charset: charset::BINARY,
            flags: not_null | flag::BLOB | flag::BINARY,
            decimals: 0,
        },
    }
}

/// A ColumnDefinition41 packet for `column`: schema, table and name as the client
/// sees them, and the stored table and column it comes from (empty for expressions).
pub fn column_definition(out: &mut Vec<u8>, column: &OutputColumn) {
    let w = wire_type(&column.ty, column.nullable);
    let start = begin(out);
    put_lenenc_bytes(out, b"def");
    let (schema, org_table, org_name) = match &column.origin {
        Some((db, table, name)) => (db.as_str(), table.as_str(), name.as_str()),
        None => ("", "", ""),
    };
    put_lenenc_bytes(out, schema.as_bytes());
    put_lenenc_bytes(out, column.table.as_deref().unwrap_or("").as_bytes());
    put_lenenc_bytes(out, org_table.as_bytes());
    put_lenenc_bytes(out, column.name.as_bytes());
    put_lenenc_bytes(out, org_name.as_bytes());
    out.push(0x0c);
    out.extend_from_slice(&(w.charset as u16).to_le_bytes());
    out.extend_from_slice(&w.length.to_le_bytes());
    out.push(w.column_type);
    out.extend_from_slice(&w.flags.to_le_bytes());
    out.push(w.decimals);
    out.extend_from_slice(&[0, 0]);
    finish(out, start);
}

/// A parameter's definition in a COM_STMT_PREPARE answer.
pub fn parameter_definition(out: &mut Vec<u8>) {
    let column = OutputColumn {
        name: "?".into(),
        table: None,
        origin: None,
        ty: SqlType::TEXT,
        nullable: true,
    };
    column_definition(out, &column);
}

/// Appends `n` in decimal.
fn put_int(out: &mut Vec<u8>, n: i64) {
    if n < 0 {
        out.push(b'-');
    }
    put_uint(out, n.unsigned_abs());
}

fn put_uint(out: &mut Vec<u8>, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[i..]);
}

/// Appends `digits` decimal digits of `n`, zero-padded.
fn put_padded(out: &mut Vec<u8>, mut n: u32, digits: usize) {
    let at = out.len();
    out.resize(at + digits, b'0');
    for i in (0..digits).rev() {
        out[at + i] = b'0' + (n % 10) as u8;
        n /= 10;
    }
}

/// `YYYY-MM-DD` (the caller checked the fields' ranges).
fn put_date(out: &mut Vec<u8>, d: &tarn_row::datetime::Date) {
    put_padded(out, d.year as u32, 4);
    out.push(b'-');
    put_padded(out, d.month as u32, 2);
    out.push(b'-');
    put_padded(out, d.day as u32, 2);
}

/// A decimal from its mantissa and scale, as MySQL prints it (`-0.05`, `12.50`).
fn put_decimal(out: &mut Vec<u8>, mantissa: i128, scale: u8) {
    if mantissa < 0 {
        out.push(b'-');
    }
    let mut digits = [0u8; 40];
    let mut n = mantissa.unsigned_abs();
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    let digits = &digits[i..];
    let scale = scale as usize;
    if digits.len() <= scale {
        out.push(b'0');
        if scale > 0 {
            out.push(b'.');
            out.resize(out.len() + scale - digits.len(), b'0');
            out.extend_from_slice(digits);
        }
    } else {
        let (integer, fraction) = digits.split_at(digits.len() - scale);
        out.extend_from_slice(integer);
        if scale > 0 {
            out.push(b'.');
            out.extend_from_slice(fraction);
        }
    }
}

/// Appends a length-encoded value whose text is shorter than 251 bytes, written by
/// `write` straight into `out` (the length byte is patched afterwards).
fn put_short(out: &mut Vec<u8>, write: impl FnOnce(&mut Vec<u8>)) {
    let at = out.len();
    out.push(0);
    write(out);
    let len = out.len() - at - 1;
    debug_assert!(len < 251);
    out[at] = len as u8;
}

/// One value in the text protocol.
fn put_text_value(out: &mut Vec<u8>, value: &Value, ty: &SqlType) {
    match value {
        Value::Null => out.push(0xfb),
        Value::Int(n) => put_short(out, |o| put_int(o, *n)),
        Value::UInt(n) => put_short(out, |o| put_uint(o, *n)),
        Value::Bytes(b) => put_lenenc_bytes(out, b),
        Value::Decimal(d) => put_short(out, |o| match d.to_i128_mantissa() {
            Some(m) => put_decimal(o, m, d.scale()),
            None => {
                let _ = write!(o, "{d}");
            }
        }),
        Value::Date(d) if d.year <= 9999 && d.month <= 12 && d.day <= 31 => {
            out.push(10);
            put_date(out, d);
        }
        Value::Date(d) => put_short(out, |o| {
            let _ = write!(o, "{d}");
        }),
        Value::DateTime(dt) => put_short(out, |o| match ty {
            SqlType::DateTime { fsp, .. } => o.extend_from_slice(dt.display_fsp(*fsp).as_bytes()),
            _ => {
                let _ = write!(o, "{dt}");
            }
        }),
        Value::Float(_) | Value::Double(_) => {
            let text = tarn_sql::scalar::cast::to_text(value).unwrap_or_default();
            put_lenenc_bytes(out, &text);
        }
    }
}

/// Text-protocol row packets for rows `rows` of the column vectors `columns`.
pub fn text_rows(
    out: &mut Vec<u8>,
    columns: &[Vec<Value>],
    types: &[SqlType],
    rows: std::ops::Range<usize>,
) {
    for r in rows {
        let start = begin(out);
        for (column, ty) in columns.iter().zip(types) {
            put_text_value(out, &column[r], ty);
        }
        finish(out, start);
    }
}

/// One non-NULL value in the binary protocol, in the width `ty` announced.
fn put_binary_value(out: &mut Vec<u8>, value: &Value, ty: &SqlType) {
    let as_i64 = |v: &Value| match v {
        Value::Int(n) => *n,
        Value::UInt(n) => *n as i64,
        Value::Double(x) => *x as i64,
        Value::Float(x) => *x as i64,
        other => tarn_sql::scalar::cast::to_i64(other).unwrap_or(0),
    };
    let as_f64 = |v: &Value| match v {
        Value::Double(x) => *x,
        Value::Float(x) => *x as f64,
        Value::Int(n) => *n as f64,
        Value::UInt(n) => *n as f64,
        other => tarn_sql::scalar::cast::to_f64(other).unwrap_or(0.0),
    };
    match *ty {
        SqlType::Int { bits } | SqlType::UInt { bits } => {
            let n = as_i64(value).to_le_bytes();
            let width = match bits {
                8 => 1,
                16 => 2,
                32 => 4,
                _ => 8,
            };
            out.extend_from_slice(&n[..width]);
        }
        SqlType::Float => out.extend_from_slice(&(as_f64(value) as f32).to_le_bytes()),
        SqlType::Double => out.extend_from_slice(&as_f64(value).to_le_bytes()),
        SqlType::Date | SqlType::DateTime { .. } => {
            let dt = match value {
                Value::Date(d) => tarn_row::datetime::DateTime::from_date(*d),
                Value::DateTime(dt) => *dt,
                _ => {
                    out.push(0);
                    return;
                }
            };
            let d = dt.date;
            let with_time = matches!(ty, SqlType::DateTime { .. });
            let len: u8 = if dt.micros != 0 && with_time {
                11
            } else if (dt.hour, dt.minute, dt.second) != (0, 0, 0) && with_time {
                7
            } else {
                4
            };
            out.push(len);
            out.extend_from_slice(&d.year.to_le_bytes());
            out.extend_from_slice(&[d.month, d.day]);
            if len >= 7 {
                out.extend_from_slice(&[dt.hour, dt.minute, dt.second]);
            }
            if len == 11 {
                out.extend_from_slice(&dt.micros.to_le_bytes());
            }
        }
        SqlType::Null | SqlType::Decimal { .. } | SqlType::Text { .. } | SqlType::Blob => {
            put_text_value(out, value, ty)
        }
    }
}

/// Binary-protocol row packets (COM_STMT_EXECUTE results).
pub fn binary_rows(
    out: &mut Vec<u8>,
    columns: &[Vec<Value>],
    types: &[SqlType],
    rows: std::ops::Range<usize>,
) {
    let bitmap_bytes = (columns.len() + 7 + 2) / 8;
    for r in rows {
        let start = begin(out);
        out.push(0);
        let bitmap_at = out.len();
        out.resize(bitmap_at + bitmap_bytes, 0);
        for (i, (column, ty)) in columns.iter().zip(types).enumerate() {
            let value = &column[r];
            if value.is_null() {
                let bit = i + 2;
                out[bitmap_at + bit / 8] |= 1 << (bit % 8);
            } else {
                put_binary_value(out, value, ty);
            }
        }
        finish(out, start);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::Reader;

    fn payloads(buf: &[u8]) -> Vec<&[u8]> {
        let mut out = Vec::new();
        let mut pos = 0;
        while pos < buf.len() {
            let len = u32::from_le_bytes([buf[pos], buf[pos + 1], buf[pos + 2], 0]) as usize;
            out.push(&buf[pos + 4..pos + 4 + len]);
            pos += 4 + len;
        }
        out
    }

    #[test]
    fn text_rows_hold_mysql_text_and_null_markers() {
        let columns = vec![
            vec![Value::Int(-42), Value::Null],
            vec![Value::Bytes(b"abc".to_vec()), Value::UInt(u64::MAX)],
        ];
        let types = [SqlType::BIGINT, SqlType::TEXT];
        let mut buf = Vec::new();
        text_rows(&mut buf, &columns, &types, 0..2);
        let p = payloads(&buf);
        assert_eq!(p[0], b"\x03-42\x03abc");
        assert_eq!(p[1], b"\xfb\x1418446744073709551615");
    }

    #[test]
    fn decimals_and_dates_print_as_their_display_does() {
        for text in ["0", "-0.05", "12.50", "0.001", "-123456789012.345678", "7"] {
            let d = tarn_row::decimal::Decimal::parse(text).unwrap();
            let mut out = Vec::new();
            put_text_value(&mut out, &Value::Decimal(d), &SqlType::BIGINT);
            assert_eq!(&out[1..], d.to_string().as_bytes(), "{text}");
        }
        for text in ["2024-02-29", "0001-01-01", "9999-12-31"] {
            let d = tarn_row::datetime::Date::parse(text).unwrap();
            let mut out = Vec::new();
            put_text_value(&mut out, &Value::Date(d), &SqlType::Date);
            assert_eq!(&out[1..], text.as_bytes());
        }
    }

    #[test]
    fn binary_rows_use_the_announced_widths_and_the_null_bitmap() {
        let columns = vec![
            vec![Value::Int(7)],
            vec![Value::Null],
            vec![Value::Double(1.5)],
            vec![Value::Bytes(b"hi".to_vec())],
        ];
        let types = [
            SqlType::Int { bits: 32 },
            SqlType::BIGINT,
            SqlType::Double,
            SqlType::TEXT,
        ];
        let mut buf = Vec::new();
        binary_rows(&mut buf, &columns, &types, 0..1);
        let p = payloads(&buf);
        let mut r = Reader::new(p[0]);
        assert_eq!(r.u8().unwrap(), 0);
        assert_eq!(r.u8().unwrap(), 0b0000_1000, "column 1 is NULL: bit 3");
        assert_eq!(r.u32().unwrap(), 7);
        assert_eq!(f64::from_bits(r.u64().unwrap()), 1.5);
        assert_eq!(r.lenenc_bytes().unwrap(), b"hi");
        assert!(r.is_empty());
    }

    #[test]
    fn ok_and_err_packets_have_their_fields() {
        let mut buf = Vec::new();
        ok(&mut buf, 0, 3, 300, 2, 1, "");
        assert_eq!(payloads(&buf)[0], &[0, 3, 0xfc, 44, 1, 2, 0, 1, 0]);
        let mut buf = Vec::new();
        err(&mut buf, 1146, "42S02", "Table 'a.b' doesn't exist");
        assert_eq!(&payloads(&buf)[0][..9], b"\xff\x7a\x04#42S02");
    }
}
