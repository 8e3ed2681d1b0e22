//! OK, ERR and EOF packets, column definitions, and rows.
//!
//! Column types on the wire come from the result column's [`SqlType`], and rows are
//! encoded from the same type, so a binary row always has the width its column
//! definition announced (an `INT` column is `LONG`, 4 bytes; an expression is
//! `LONGLONG`); only a stored `tinyint(1)` column's length differs from its type's
//! (1, not 4: `OutputColumn::tinyint1`). Row encoders append whole packets to a
//! buffer with a zero sequence byte (see [`super::packet`]).

use std::io::Write;

use tarn_common::Result;
use tarn_row::{
    Batch, ColumnType, ColumnVector, Date, Decimal64Parts, OverflowStore, RowSerializer, RowView,
    Value, VarBytes,
};
use tarn_sql::SqlType;
use tarn_sql::plan::OutputColumn;

use super::packet::{begin, finish};
use super::{charset, column_type, put_lenenc_bytes, put_lenenc_int};
use crate::limits::DATE_TEXT_CACHE_SLOTS;

/// Column definition flags.
mod flag {
    pub const NOT_NULL: u16 = 1;
    pub const BLOB: u16 = 1 << 4;
    pub const UNSIGNED: u16 = 1 << 5;
    pub const ZEROFILL: u16 = 1 << 6;
    pub const BINARY: u16 = 1 << 7;
    pub const ENUM: u16 = 1 << 8;
    pub const SET: u16 = 1 << 11;
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
        // Every BLOB class is BLOB on the wire; the length tells them apart.
        SqlType::Blob { size } => WireType {
            column_type: t::BLOB,
            length: u32::try_from(size.declared_len_max_bytes()).unwrap_or(u32::MAX),
            charset: charset::BINARY,
            flags: not_null | flag::BLOB | flag::BINARY,
            decimals: 0,
        },
        SqlType::Time { fsp } => WireType {
            flags: not_null | flag::BINARY,
            decimals: fsp,
            ..number(
                t::TIME,
                10 + if fsp > 0 { fsp as u32 + 1 } else { 0 },
                false,
            )
        },
        // MySQL describes YEAR as a zero-filled unsigned number of 4 digits.
        SqlType::Year => WireType {
            flags: not_null | flag::NUM | flag::BINARY | flag::UNSIGNED | flag::ZEROFILL,
            ..number(t::YEAR, 4, true)
        },
        // Charset 63 with the BINARY flag is how clients (and mariadb-dump's
        // --hex-blob) tell bytes from text.
        SqlType::Binary { len_bytes, fixed } => WireType {
            column_type: if fixed { t::STRING } else { t::VAR_STRING },
            length: len_bytes,
            charset: charset::BINARY,
            flags: not_null | flag::BINARY,
            decimals: 0,
        },
        // As MySQL 8 describes JSON: its own type, charset 63 and the BLOB flag
        // (clients such as PyMySQL decode it as UTF-8 text by its type).
        SqlType::Json => WireType {
            column_type: t::JSON,
            length: u32::MAX,
            charset: charset::BINARY,
            flags: not_null | flag::BLOB | flag::BINARY,
            decimals: 0,
        },
        // As MySQL: STRING with the ENUM or SET flag (not the ENUM and SET types,
        // which only the server uses internally), the longest value's bytes.
        SqlType::Enum { members, .. } => WireType {
            column_type: t::STRING,
            length: members.len_max_chars().saturating_mul(4),
            charset: charset::UTF8MB4_0900_AI_CI,
            flags: not_null | flag::ENUM,
            decimals: 0,
        },
        SqlType::Set { members, .. } => WireType {
            column_type: t::STRING,
            length: members.joined_len_chars().saturating_mul(4),
            charset: charset::UTF8MB4_0900_AI_CI,
            flags: not_null | flag::SET,
            decimals: 0,
        },
        // BIT(n): n is the length; values are ceil(n / 8) bytes, big-endian.
        SqlType::Bit { len_bits } => WireType {
            column_type: t::BIT,
            length: u32::from(len_bits),
            charset: charset::BINARY,
            flags: not_null | flag::UNSIGNED,
            decimals: 0,
        },
    }
}

/// A BIT(`len_bits`) value as the client receives it: ceil(n / 8) bytes, big-endian.
fn put_bit_bytes(out: &mut Vec<u8>, n: u64, len_bits: u8) {
    let width = usize::from(len_bits).div_ceil(8).clamp(1, 8);
    out.push(width as u8);
    out.extend_from_slice(&n.to_be_bytes()[8 - width..]);
}

/// A ColumnDefinition41 packet for `column`: schema, table and name as the client
/// sees them, and the stored table and column it comes from (empty for expressions).
pub fn column_definition(out: &mut Vec<u8>, column: &OutputColumn) {
    let mut w = wire_type(&column.ty, column.nullable);
    // A `tinyint(1)` column keeps its display width on the wire, as in MySQL
    // (Connector/J reads TINY of length 1 as a boolean).
    if column.tinyint1
        && matches!(
            column.ty,
            SqlType::Int { bits: 8 } | SqlType::UInt { bits: 8 }
        )
    {
        w.length = 1;
    }
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
        tinyint1: false,
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

fn put_uint(out: &mut Vec<u8>, n: u64) {
    let mut digits = [0u8; 20];
    let start = digits_u64(n, &mut digits);
    out.extend_from_slice(&digits[start..]);
}

/// "00" to "99".
const DIGIT_PAIRS: [u8; 200] = {
    let mut pairs = [0u8; 200];
    let mut i = 0;
    while i < 100 {
        pairs[2 * i] = b'0' + (i / 10) as u8;
        pairs[2 * i + 1] = b'0' + (i % 10) as u8;
        i += 1;
    }
    pairs
};

/// Writes the decimal digits of `n` at the end of `buf`, two at a time, and returns
/// where they start.
fn digits_u64<const N: usize>(mut n: u64, buf: &mut [u8; N]) -> usize {
    let mut i = N;
    while n >= 100 {
        let pair = (n % 100) as usize * 2;
        n /= 100;
        i -= 2;
        buf[i..i + 2].copy_from_slice(&DIGIT_PAIRS[pair..pair + 2]);
    }
    if n >= 10 {
        let pair = n as usize * 2;
        i -= 2;
        buf[i..i + 2].copy_from_slice(&DIGIT_PAIRS[pair..pair + 2]);
    } else {
        i -= 1;
        buf[i] = b'0' + n as u8;
    }
    i
}

/// Appends `d` as [`date_text`] writes it.
fn put_date(out: &mut Vec<u8>, d: &Date) {
    out.extend_from_slice(&date_text(d));
}

/// `YYYY-MM-DD` (the caller checked the fields' ranges).
fn date_text(d: &Date) -> [u8; 10] {
    let pair = |n: u16| {
        let i = usize::from(n) * 2;
        [DIGIT_PAIRS[i], DIGIT_PAIRS[i + 1]]
    };
    let (century, year, month, day) = (
        pair(d.year / 100),
        pair(d.year % 100),
        pair(u16::from(d.month)),
        pair(u16::from(d.day)),
    );
    [
        century[0], century[1], year[0], year[1], b'-', month[0], month[1], b'-', day[0], day[1],
    ]
}

thread_local! {
    /// Dates this thread formatted lately, by day number: (day, its text), the day
    /// `u32::MAX` for an empty slot.
    static DATE_TEXT: std::cell::RefCell<[(u32, [u8; 10]); DATE_TEXT_CACHE_SLOTS]> =
        const { std::cell::RefCell::new([(u32::MAX, [0; 10]); DATE_TEXT_CACHE_SLOTS]) };
}

/// A date from its day number ([`Date::to_days`]), as [`put_text_value`] writes it.
fn put_day(out: &mut Vec<u8>, days: u32) -> Result<()> {
    const _: () = assert!(DATE_TEXT_CACHE_SLOTS.is_power_of_two());
    DATE_TEXT.with_borrow_mut(|cache| {
        let slot = &mut cache[days as usize & (DATE_TEXT_CACHE_SLOTS - 1)];
        if slot.0 != days {
            // Every day number is a date of years 0 to 9999: always ten characters.
            *slot = (days, date_text(&Date::from_days(days)?));
        }
        out.push(10);
        out.extend_from_slice(&slot.1);
        Ok(())
    })
}

/// A decimal from its mantissa and scale, as MySQL prints it (`-0.05`, `12.50`).
fn put_decimal(out: &mut Vec<u8>, mantissa: i128, scale: u8) {
    if mantissa < 0 {
        out.push(b'-');
    }
    let mut digits = [0u8; 40];
    let start = match u64::try_from(mantissa.unsigned_abs()) {
        // The common case, without 128-bit divisions.
        Ok(n) => digits_u64(n, &mut digits),
        Err(_) => {
            let mut n = mantissa.unsigned_abs();
            let mut i = digits.len();
            loop {
                i -= 1;
                digits[i] = b'0' + (n % 10) as u8;
                n /= 10;
                if n == 0 {
                    break i;
                }
            }
        }
    };
    let digits = &digits[start..];
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

/// A length-encoded string of bytes stored inline in `row`. A short one is appended as
/// a window of constant length of the row (the bytes after it are the row's too), and
/// `out` is cut back: a constant-length copy is a few moves, where a copy of the
/// string's own length is a call into `memcpy` for a few bytes.
#[inline]
fn put_row_bytes(out: &mut Vec<u8>, bytes: &[u8], row: &[u8]) {
    const WINDOW_BYTES: usize = 16;
    let at = (bytes.as_ptr() as usize).wrapping_sub(row.as_ptr() as usize);
    if bytes.len() < WINDOW_BYTES
        && let Some(window) = row.get(at..).and_then(|rest| rest.get(..WINDOW_BYTES))
    {
        let window: &[u8; WINDOW_BYTES] = window.try_into().expect("a window");
        let keep = out.len() + 1 + bytes.len();
        out.push(bytes.len() as u8);
        out.extend_from_slice(window);
        out.truncate(keep);
        return;
    }
    put_lenenc_bytes(out, bytes);
}

/// A DECIMAL of at most 18 digits from its stored parts, as [`put_decimal`] writes
/// its coefficient (with the length byte): no coefficient to divide back into digits.
fn put_decimal_parts(out: &mut Vec<u8>, parts: Decimal64Parts, scale: u8) {
    put_short(out, |o| {
        if parts.negative {
            o.push(b'-');
        }
        put_uint(o, parts.integer);
        if scale == 0 {
            return;
        }
        o.push(b'.');
        if scale == 2 {
            // Money and rates: one digit pair.
            let pair = parts.fraction as usize * 2;
            o.extend_from_slice(&DIGIT_PAIRS[pair..pair + 2]);
        } else {
            let mut digits = [b'0'; 20];
            digits_u64(parts.fraction, &mut digits);
            o.extend_from_slice(&digits[20 - usize::from(scale)..]);
        }
    })
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
        Value::UInt(n) if let SqlType::Bit { len_bits } = ty => put_bit_bytes(out, *n, *len_bits),
        Value::Int(n) => put_short(out, |o| put_int(o, *n)),
        // A YEAR shows four digits (`0000`).
        Value::UInt(n) if *ty == SqlType::Year => put_short(out, |o| {
            let _ = write!(o, "{n:04}");
        }),
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
        Value::Time(t) => put_short(out, |o| match ty {
            SqlType::Time { fsp } => o.extend_from_slice(t.display_fsp(*fsp).as_bytes()),
            _ => {
                let _ = write!(o, "{t}");
            }
        }),
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

/// The vectors of `batch` that make output columns `columns`.
fn vectors<'b>(batch: &'b Batch, columns: &[usize]) -> Vec<&'b ColumnVector> {
    columns.iter().map(|&c| &batch.columns[c]).collect()
}

/// One value of a typed vector in the text protocol: what [`put_text_value`] writes
/// for the vector's value, made without the value for the common types.
fn put_text_cell(out: &mut Vec<u8>, vector: &ColumnVector, row: usize, ty: &SqlType) {
    if vector.is_null(row) {
        out.push(0xfb);
        return;
    }
    match vector {
        ColumnVector::Int { values, .. } => put_short(out, |o| put_int(o, values[row])),
        ColumnVector::UInt { values, .. } if *ty != SqlType::Year => match ty {
            SqlType::Bit { len_bits } => put_bit_bytes(out, values[row], *len_bits),
            _ => put_short(out, |o| put_uint(o, values[row])),
        },
        ColumnVector::Decimal64 { values, scale, .. } => {
            put_short(out, |o| put_decimal(o, i128::from(values[row]), *scale))
        }
        ColumnVector::Bytes { .. } => put_lenenc_bytes(out, vector.bytes(row).unwrap_or_default()),
        ColumnVector::Date { values, .. } => {
            put_day(out, values[row]).expect("batches hold valid day numbers")
        }
        _ => put_text_value(out, &vector.value(row), ty),
    }
}

/// Text-protocol row packets straight from a storage batch (output column `i` is
/// `batch.columns[columns[i]]`): the bytes [`text_rows`] writes for the batch's
/// values, without making the values.
pub fn text_rows_batch(out: &mut Vec<u8>, batch: &Batch, columns: &[usize], types: &[SqlType]) {
    let vectors = vectors(batch, columns);
    for r in 0..batch.len() {
        let start = begin(out);
        for (vector, ty) in vectors.iter().zip(types) {
            put_text_cell(out, vector, r, ty);
        }
        finish(out, start);
    }
}

/// A binary-protocol integer in the width of a `bits`-bit column (two's complement,
/// little-endian: an unsigned value's bits are the same).
fn put_integer(out: &mut Vec<u8>, n: i64, bits: u8) {
    let width = match bits {
        8 => 1,
        16 => 2,
        32 => 4,
        _ => 8,
    };
    out.extend_from_slice(&n.to_le_bytes()[..width]);
}

/// How [`TextRowSerializer`] reads an output column from a stored row.
#[derive(Clone, Copy, Debug)]
enum StoredCell {
    Int,
    /// An unsigned integer, or a BIT (as its bytes, when the output type says so).
    UInt,
    Decimal64 {
        scale: u8,
    },
    Date,
    Bytes,
    /// Through a [`Value`] (FLOAT, DOUBLE, DATETIME, TIME, YEAR, wide DECIMAL).
    Value,
}

/// Text-protocol row packets straight from stored rows, in the scan's workers: the
/// bytes [`text_rows_batch`] writes for the same rows, without a batch in between.
pub struct TextRowSerializer {
    /// Per output column: the table column, how to read it, its result type.
    cells: Vec<(usize, StoredCell, SqlType)>,
}

impl TextRowSerializer {
    /// Output column `i` is table column `columns[i]`, stored as `column_types[i]`,
    /// described to the client as `types[i]`.
    pub fn new(columns: &[usize], column_types: &[ColumnType], types: &[SqlType]) -> Self {
        let cells = columns
            .iter()
            .zip(column_types)
            .zip(types)
            .map(|((&column, column_type), ty)| {
                let cell = match *column_type {
                    ColumnType::TinyInt { unsigned }
                    | ColumnType::SmallInt { unsigned }
                    | ColumnType::Int { unsigned }
                    | ColumnType::BigInt { unsigned } => {
                        if unsigned {
                            StoredCell::UInt
                        } else {
                            StoredCell::Int
                        }
                    }
                    ColumnType::Decimal { precision, scale }
                        if precision <= tarn_row::decimal::DECIMAL64_PRECISION_MAX =>
                    {
                        StoredCell::Decimal64 { scale }
                    }
                    ColumnType::Date => StoredCell::Date,
                    ColumnType::Bit { .. } => StoredCell::UInt,
                    ty if ty.is_variable_len() => StoredCell::Bytes,
                    // ENUM and SET through their text.
                    _ => StoredCell::Value,
                };
                (column, cell, *ty)
            })
            .collect();
        TextRowSerializer { cells }
    }
}

impl RowSerializer for TextRowSerializer {
    fn serialize(
        &self,
        view: &RowView<'_>,
        overflow: &dyn OverflowStore,
        out: &mut Vec<u8>,
    ) -> Result<()> {
        let start = begin(out);
        let mut scratch = Vec::new();
        for (index, cell, ty) in &self.cells {
            let index = *index;
            match cell {
                StoredCell::Int => match view.i64(index) {
                    Some(n) => put_short(out, |o| put_int(o, n)),
                    None => out.push(0xfb),
                },
                StoredCell::UInt => match (view.u64(index), ty) {
                    (Some(n), SqlType::Bit { len_bits }) => put_bit_bytes(out, n, *len_bits),
                    (Some(n), _) => put_short(out, |o| put_uint(o, n)),
                    (None, _) => out.push(0xfb),
                },
                StoredCell::Decimal64 { scale } => match view.decimal64_parts(index)? {
                    Some(parts) => put_decimal_parts(out, parts, *scale),
                    None => out.push(0xfb),
                },
                StoredCell::Date => match view.date_days(index)? {
                    Some(days) => put_day(out, days)?,
                    None => out.push(0xfb),
                },
                StoredCell::Bytes => match view.bytes(index) {
                    Some(VarBytes::Inline(bytes)) => put_row_bytes(out, bytes, view.as_bytes()),
                    Some(VarBytes::External(_)) => {
                        let bytes = view.var_bytes(index, overflow, &mut scratch)?;
                        put_lenenc_bytes(out, bytes.unwrap_or_default());
                    }
                    None => out.push(0xfb),
                },
                StoredCell::Value => put_text_value(out, &view.value(index, overflow)?, ty),
            }
        }
        finish(out, start);
        Ok(())
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
        SqlType::Int { bits } | SqlType::UInt { bits } => put_integer(out, as_i64(value), bits),
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
        SqlType::Time { .. } => match value {
            Value::Time(t) => put_binary_time(out, t),
            other => match tarn_sql::scalar::time::to_time(other) {
                Some(t) => put_binary_time(out, &t),
                None => out.push(0),
            },
        },
        SqlType::Year => put_integer(out, as_i64(value), 16),
        // BIT: its bytes, as a length-encoded string (as MySQL sends it).
        SqlType::Null
        | SqlType::Decimal { .. }
        | SqlType::Text { .. }
        | SqlType::Blob { .. }
        | SqlType::Binary { .. }
        | SqlType::Json
        | SqlType::Enum { .. }
        | SqlType::Set { .. }
        | SqlType::Bit { .. } => put_text_value(out, value, ty),
    }
}

/// A TIME in the binary protocol: length 0 for zero, else 8 (sign, days, hours,
/// minutes, seconds) or 12 (and microseconds).
fn put_binary_time(out: &mut Vec<u8>, t: &tarn_row::Time) {
    if t.micros() == 0 {
        out.push(0);
        return;
    }
    let micros = t.fraction_micros();
    out.push(if micros == 0 { 8 } else { 12 });
    out.push(u8::from(t.is_negative()));
    out.extend_from_slice(&(t.hours() / 24).to_le_bytes());
    out.extend_from_slice(&[(t.hours() % 24) as u8, t.minute(), t.second()]);
    if micros != 0 {
        out.extend_from_slice(&micros.to_le_bytes());
    }
}

/// Binary-protocol row packets (COM_STMT_EXECUTE results).
pub fn binary_rows(
    out: &mut Vec<u8>,
    columns: &[Vec<Value>],
    types: &[SqlType],
    rows: std::ops::Range<usize>,
) {
    for r in rows {
        binary_row(out, columns.len(), |out, i| {
            let value = &columns[i][r];
            if value.is_null() {
                return false;
            }
            put_binary_value(out, value, &types[i]);
            true
        });
    }
}

/// One binary-protocol row packet of `width` values; `put(out, i)` appends value `i`
/// and returns true, or returns false for a NULL (marked in the bitmap).
fn binary_row(out: &mut Vec<u8>, width: usize, mut put: impl FnMut(&mut Vec<u8>, usize) -> bool) {
    let bitmap_bytes = (width + 7 + 2) / 8;
    let start = begin(out);
    out.push(0);
    let bitmap_at = out.len();
    out.resize(bitmap_at + bitmap_bytes, 0);
    for i in 0..width {
        if !put(out, i) {
            let bit = i + 2;
            out[bitmap_at + bit / 8] |= 1 << (bit % 8);
        }
    }
    finish(out, start);
}

/// Binary-protocol row packets straight from a storage batch (see
/// [`text_rows_batch`]): the bytes [`binary_rows`] writes for the batch's values.
pub fn binary_rows_batch(out: &mut Vec<u8>, batch: &Batch, columns: &[usize], types: &[SqlType]) {
    let vectors = vectors(batch, columns);
    for r in 0..batch.len() {
        binary_row(out, vectors.len(), |out, i| {
            let vector = vectors[i];
            if vector.is_null(r) {
                return false;
            }
            match (vector, &types[i]) {
                (
                    ColumnVector::Int { values, .. },
                    SqlType::Int { bits } | SqlType::UInt { bits },
                ) => put_integer(out, values[r], *bits),
                (
                    ColumnVector::UInt { values, .. },
                    SqlType::Int { bits } | SqlType::UInt { bits },
                ) => put_integer(out, values[r] as i64, *bits),
                (
                    ColumnVector::Bytes { .. },
                    SqlType::Text { .. }
                    | SqlType::Blob { .. }
                    | SqlType::Binary { .. }
                    | SqlType::Json
                    | SqlType::Enum { .. }
                    | SqlType::Set { .. },
                ) => put_lenenc_bytes(out, vector.bytes(r).unwrap_or_default()),
                (ColumnVector::UInt { values, .. }, SqlType::Bit { len_bits }) => {
                    put_bit_bytes(out, values[r], *len_bits)
                }
                (_, ty) => put_binary_value(out, &vector.value(r), ty),
            }
            true
        });
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

    /// ENUM and SET are STRING with the ENUM or SET flag and their longest value's
    /// bytes; BIT(n) is BIT of length n, UNSIGNED, binary, its values big-endian bytes.
    #[test]
    fn enum_set_and_bit_columns_as_mysql_describes_them() {
        use tarn_row::{Collation, Members};
        let collation = Collation::CaseInsensitive;
        let members = Members::intern(&["small", "medium", "x"]).unwrap();
        let e = wire_type(&SqlType::Enum { members, collation }, false);
        assert_eq!(
            (e.column_type, e.length, e.charset, e.flags),
            (
                column_type::STRING,
                24,
                charset::UTF8MB4_0900_AI_CI,
                flag::NOT_NULL | flag::ENUM
            )
        );
        let s = wire_type(&SqlType::Set { members, collation }, true);
        assert_eq!(
            (s.column_type, s.length, s.flags),
            (column_type::STRING, 56, flag::SET)
        );
        let b = wire_type(&SqlType::Bit { len_bits: 10 }, true);
        assert_eq!(
            (b.column_type, b.length, b.charset, b.flags),
            (column_type::BIT, 10, charset::BINARY, flag::UNSIGNED)
        );
        let bit = SqlType::Bit { len_bits: 10 };
        let mut text = Vec::new();
        text_rows(&mut text, &[vec![Value::UInt(0x2ff)]], &[bit], 0..1);
        assert_eq!(payloads(&text)[0], &[2, 0x02, 0xff]);
        let mut binary = Vec::new();
        binary_rows(
            &mut binary,
            &[vec![Value::UInt(1)]],
            &[SqlType::Bit { len_bits: 1 }],
            0..1,
        );
        assert_eq!(payloads(&binary)[0], &[0, 0, 1, 1]);
    }

    #[test]
    fn json_is_type_245_charset_63_with_the_blob_flag() {
        // MySQL 8 describes a JSON column so (PyMySQL and Connector/Python decode it
        // by its type, as UTF-8 text).
        let json = wire_type(&SqlType::Json, true);
        assert_eq!(
            (json.column_type, json.length, json.charset, json.flags),
            (0xf5, u32::MAX, 63, flag::BLOB | flag::BINARY)
        );
        assert_eq!(
            wire_type(&SqlType::Json, false).flags & flag::NOT_NULL,
            flag::NOT_NULL
        );
        let mut out = Vec::new();
        text_rows(
            &mut out,
            &[vec![
                Value::Bytes(br#"{"a": [1, 2]}"#.to_vec()),
                Value::Null,
            ]],
            &[SqlType::Json],
            0..2,
        );
        let p = payloads(&out);
        assert_eq!(p[0], b"\x0d{\"a\": [1, 2]}");
        assert_eq!(p[1], b"\xfb");
    }

    #[test]
    fn binary_strings_are_charset_63_with_the_binary_flag() {
        use tarn_row::LobSize;
        let varbinary = wire_type(
            &SqlType::Binary {
                len_bytes: 8,
                fixed: false,
            },
            true,
        );
        assert_eq!(
            (varbinary.column_type, varbinary.length, varbinary.charset),
            (column_type::VAR_STRING, 8, charset::BINARY)
        );
        assert_eq!(varbinary.flags, flag::BINARY);
        let binary = wire_type(
            &SqlType::Binary {
                len_bytes: 16,
                fixed: true,
            },
            false,
        );
        assert_eq!(
            (binary.column_type, binary.length, binary.charset),
            (column_type::STRING, 16, charset::BINARY)
        );
        assert_eq!(binary.flags, flag::NOT_NULL | flag::BINARY);
        for (size, length) in [
            (LobSize::Tiny, 255),
            (LobSize::Regular, 65_535),
            (LobSize::Medium, 16_777_215),
            (LobSize::Long, u32::MAX),
        ] {
            let blob = wire_type(&SqlType::Blob { size }, true);
            assert_eq!(
                (blob.column_type, blob.length, blob.charset, blob.flags),
                (
                    column_type::BLOB,
                    length,
                    charset::BINARY,
                    flag::BLOB | flag::BINARY
                )
            );
        }
    }

    #[test]
    fn time_and_year_are_described_and_sent_as_mysql_does() {
        let time = wire_type(&SqlType::Time { fsp: 3 }, true);
        assert_eq!(
            (time.column_type, time.length, time.charset, time.decimals),
            (column_type::TIME, 14, charset::BINARY, 3)
        );
        assert_eq!(time.flags, flag::BINARY);
        assert_eq!(wire_type(&SqlType::Time { fsp: 0 }, true).length, 10);
        let year = wire_type(&SqlType::Year, false);
        assert_eq!(
            (year.column_type, year.length, year.charset),
            (column_type::YEAR, 4, charset::BINARY)
        );
        assert_eq!(
            year.flags & (flag::NOT_NULL | flag::UNSIGNED | flag::ZEROFILL),
            flag::NOT_NULL | flag::UNSIGNED | flag::ZEROFILL
        );
        let t = |text: &str| Value::Time(tarn_row::Time::parse(text).unwrap());
        let columns = vec![
            vec![t("-34:05:06.5"), t("00:00:00"), t("838:59:59")],
            vec![Value::UInt(0), Value::UInt(2155), Value::Null],
        ];
        let types = [SqlType::Time { fsp: 2 }, SqlType::Year];
        let mut buf = Vec::new();
        text_rows(&mut buf, &columns, &types, 0..3);
        let p = payloads(&buf);
        assert_eq!(p[0], b"\x0c-34:05:06.50\x040000");
        assert_eq!(p[1], b"\x0b00:00:00.00\x042155");
        assert_eq!(p[2], b"\x0c838:59:59.00\xfb");
        let mut buf = Vec::new();
        binary_rows(&mut buf, &columns, &types, 0..3);
        let p = payloads(&buf);
        // Header, NULL bitmap, then TIME: length 12, negative, 1 day, 10:05:06, 500000
        // microseconds; YEAR: two bytes.
        let mut want = vec![0, 0, 12, 1, 1, 0, 0, 0, 10, 5, 6];
        want.extend_from_slice(&500_000u32.to_le_bytes());
        want.extend_from_slice(&0u16.to_le_bytes());
        assert_eq!(p[0], want.as_slice());
        assert_eq!(p[1], [0, 0, 0, 0x6b, 0x08]);
        assert_eq!(p[2], [0, 0b0000_1000, 8, 0, 34, 0, 0, 0, 22, 59, 59]);
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
        for text in [
            "0",
            "-0.05",
            "12.50",
            "0.001",
            "-123456789012.345678",
            "7",
            "18446744073709551615",
            "-123456789012345678901234.5678",
        ] {
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

    /// Random rows of every physical type, stored and as a storage batch decodes
    /// them, with a column chosen twice.
    struct RandomRows {
        batch: Batch,
        layout: tarn_row::RowLayout,
        stored: Vec<Vec<u8>>,
        chosen: Vec<usize>,
        column_types: Vec<ColumnType>,
        types: Vec<SqlType>,
    }

    fn random_rows(seed: u64) -> RandomRows {
        use tarn_row::row::{NoOverflow, RowHeader, RowLayout, RowLimits};
        use tarn_row::{Collation, Column, ColumnType, DateTime, Decimal, Members};
        let sizes = Members::intern(&["small", "medium", "large"]).unwrap();
        let perms = Members::intern(&["read", "write", "admin"]).unwrap();
        let types = [
            ColumnType::TinyInt { unsigned: false },
            ColumnType::Int { unsigned: true },
            ColumnType::BigInt { unsigned: false },
            ColumnType::Decimal {
                precision: 15,
                scale: 2,
            },
            ColumnType::Decimal {
                precision: 30,
                scale: 4,
            },
            ColumnType::Float,
            ColumnType::Double,
            ColumnType::Date,
            ColumnType::DateTime { fsp: 3 },
            ColumnType::VarChar { len: 40 },
            // A short string before another (the serializer copies a window of the row),
            // a 9-byte DECIMAL of 18 digits and an odd scale.
            ColumnType::Char { len: 20 },
            ColumnType::Decimal {
                precision: 18,
                scale: 1,
            },
            ColumnType::Decimal {
                precision: 10,
                scale: 5,
            },
            ColumnType::Json,
            ColumnType::Time { fsp: 0 },
            ColumnType::Time { fsp: 3 },
            ColumnType::Year,
            // ENUM and SET as their text, BIT as its bytes.
            ColumnType::Enum { members: sizes },
            ColumnType::Set { members: perms },
            ColumnType::Bit { len_bits: 1 },
            ColumnType::Bit { len_bits: 10 },
            ColumnType::Bit { len_bits: 64 },
        ];
        let columns: Vec<Column> = types
            .iter()
            .enumerate()
            .map(|(i, ty)| Column {
                name: format!("c{i}"),
                ty: *ty,
                nullable: true,
                collation: if ty.has_collation() {
                    Collation::CaseInsensitive
                } else {
                    Collation::Binary
                },
            })
            .collect();
        let layout = RowLayout::new(&columns).unwrap();
        let projection: Vec<usize> = (0..columns.len()).collect();
        let mut batch = Batch::new(&layout, &projection, 64);
        let mut rng = tarn_common::rng::Rng::new(seed);
        let mut stored = Vec::new();
        let limits = RowLimits {
            overflow_threshold_bytes: 4096,
            max_row_bytes: 65535,
        };
        for _ in 0..64 {
            let mut r = |bound: u64| rng.below(bound);
            let mut values = vec![
                Value::Int(r(256) as i64 - 128),
                Value::UInt(r(u32::MAX as u64)),
                Value::Int(r(u64::MAX) as i64),
                Value::Decimal(
                    Decimal::from_i128(r(2_000_000_000) as i128 - 1_000_000_000, 2).unwrap(),
                ),
                Value::Decimal(Decimal::from_i128(r(u64::MAX) as i128 * 1000, 4).unwrap()),
                Value::Float(r(1 << 20) as f32 / 7.0),
                Value::Double(r(u64::MAX) as f64 / 3.0e9),
                Value::Date(Date::from_days(r(2_900_000) as u32).unwrap()),
                Value::DateTime(DateTime::parse("2024-02-29 13:14:15.678").unwrap()),
                Value::Bytes((0..r(41)).map(|i| b'a' + (i % 26) as u8).collect()),
                Value::Bytes((0..r(21)).map(|i| b'A' + (i % 26) as u8).collect()),
                Value::Decimal(
                    Decimal::from_i128(r(2 * 10u64.pow(17)) as i128 - 10i128.pow(17), 1).unwrap(),
                ),
                Value::Decimal(
                    Decimal::from_i128(r(2 * 10u64.pow(10)) as i128 - 10i128.pow(10), 5).unwrap(),
                ),
                Value::Bytes(format!(r#"{{"k": [{}, "x"]}}"#, r(1000)).into_bytes()),
                // Whole seconds, and milliseconds, either side of zero and past a day.
                Value::Time(
                    tarn_row::Time::from_micros((r(2_000_000) as i64 - 1_000_000) * 1_000_000)
                        .unwrap(),
                ),
                Value::Time(
                    tarn_row::Time::from_micros((r(6_000_000_000) as i64 - 3_000_000_000) * 1_000)
                        .unwrap(),
                ),
                Value::UInt(if r(4) == 0 { 0 } else { 1901 + r(255) }),
                // Index 0 is the error value ''.
                Value::Bytes(sizes.name(r(4) as u32).as_bytes().to_vec()),
                Value::Bytes(perms.set_text(r(8))),
                Value::UInt(r(2)),
                Value::UInt(r(1024)),
                Value::UInt(r(u64::MAX) << r(2)),
            ];
            for v in values.iter_mut() {
                if r(8) == 0 {
                    *v = Value::Null;
                }
            }
            let mut bytes = Vec::new();
            layout
                .encode(
                    &values,
                    RowHeader::default(),
                    &NoOverflow,
                    limits,
                    &mut bytes,
                )
                .unwrap();
            layout
                .decode_into(&bytes, &projection, &mut batch, &NoOverflow)
                .unwrap();
            stored.push(bytes);
        }
        let chosen = vec![
            9, 0, 1, 2, 3, 4, 5, 6, 7, 8, 3, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21,
        ];
        RandomRows {
            batch,
            layout,
            stored,
            types: chosen
                .iter()
                .map(|&c| SqlType::of_column(types[c], columns[c].collation))
                .collect(),
            column_types: chosen.iter().map(|&c| types[c]).collect(),
            chosen,
        }
    }

    #[test]
    fn rows_from_a_batch_are_the_rows_of_its_values() {
        let seed = tarn_common::rng::test_seed("rows_from_a_batch_are_the_rows_of_its_values");
        for round in 0..20 {
            let RandomRows {
                batch,
                layout,
                stored,
                chosen,
                column_types,
                types,
            } = random_rows(seed.wrapping_add(round));
            let values: Vec<Vec<Value>> = chosen
                .iter()
                .map(|&c| (0..batch.len()).map(|r| batch.value(c, r)).collect())
                .collect();
            let (mut typed, mut from_values) = (Vec::new(), Vec::new());
            text_rows_batch(&mut typed, &batch, &chosen, &types);
            text_rows(&mut from_values, &values, &types, 0..batch.len());
            assert_eq!(typed, from_values, "text rows, seed {seed} round {round}");
            let (mut typed, mut from_values) = (Vec::new(), Vec::new());
            binary_rows_batch(&mut typed, &batch, &chosen, &types);
            binary_rows(&mut from_values, &values, &types, 0..batch.len());
            assert_eq!(typed, from_values, "binary rows, seed {seed} round {round}");
            let serializer = TextRowSerializer::new(&chosen, &column_types, &types);
            let mut serialized = Vec::new();
            for row in &stored {
                let view = layout.view(row).unwrap();
                serializer
                    .serialize(&view, &tarn_row::NoOverflow, &mut serialized)
                    .unwrap();
            }
            let mut typed = Vec::new();
            text_rows_batch(&mut typed, &batch, &chosen, &types);
            assert_eq!(
                serialized, typed,
                "serialized rows, seed {seed} round {round}"
            );
        }
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
