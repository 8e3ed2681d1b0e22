//! The row format: the value part of a clustered-index entry.
//!
//! ```text
//! offset                      size              field
//! 0                           1                 flags (bit 0: delete-marked; others 0)
//! 1                           1                 reserved, 0
//! 2                           6                 transaction id, little-endian
//! 8                           8                 roll pointer (older version; 0 = none), LE
//! 16                          ceil(ncols/8)     null bitmap: bit i%8 of byte i/8 = column i
//! N = 16 + ceil(ncols/8)      ceil(nvar/8)      external bitmap, one bit per variable column
//! F = N + ceil(nvar/8)        sum of widths     fixed-width area, columns in schema order
//! V = F + fixed widths        2 * nvar          u16 LE end offset of each variable column
//! D = V + 2 * nvar            rest              variable-length data, in column order
//! ```
//!
//! Fixed-width columns (integers, DECIMAL, FLOAT, DOUBLE, DATE, DATETIME, TIMESTAMP,
//! TIME, YEAR, ENUM, SET, BIT) have offsets computed from the schema alone
//! ([`RowLayout::new`]), so any of them is read in O(1); a NULL one occupies zeroed
//! bytes. Variable-length columns (the strings: CHAR, VARCHAR, BINARY, VARBINARY, TEXT,
//! BLOB, and JSON) are numbered 0..nvar in
//! schema order; the end offset of one is relative to D, and its start is the end of
//! the previous one (0 for the first). A NULL variable column has length 0.
//!
//! A variable value longer than [`RowLimits::overflow_threshold_bytes`] is written to an
//! [`OverflowStore`] and replaced by a 12-byte [`OverflowRef`] (first page number u32 LE,
//! length u64 LE), with its external bit set. If the row is still longer than
//! [`RowLimits::max_row_bytes`], the largest remaining inline values move out too; if it
//! still does not fit, encoding fails with `RowTooLarge` and nothing stays written.
//!
//! Invariants of a row that [`RowLayout::view`] accepts (it checks them all up front,
//! so no accessor can read out of bounds, whatever the bytes):
//!
//! 1. The row is at least D bytes long and D + (last end offset) is exactly its length.
//! 2. End offsets never decrease; the variable area is at most 65535 bytes.
//! 3. Only nullable columns have their null bit set; bits past the last column are 0.
//! 4. A NULL variable column has length 0 and no external bit; an external one has
//!    length 12 and a reference of at most [`VALUE_LEN_MAX_BYTES`].
//!
//! Values in the fixed area are checked when read (a DECIMAL group or a day number
//! that no value encodes is `IncorrectValue`). Integers and floats are stored
//! little-endian in their type's width; DECIMAL in its memcmp binary form
//! ([`crate::decimal`]); DATE as the u32 day number and DATETIME/TIMESTAMP as the u64
//! microsecond number ([`crate::datetime`]); TIME as its signed microseconds (i64 LE,
//! 8 bytes, checked to be within `±838:59:59` when read); YEAR as the year number
//! (u16 LE, 0 or 1901..=2155; read like a SMALLINT UNSIGNED). ENUM is its member's
//! 1-based index (0 for the `''` error value), little-endian in 1 byte (up to 255
//! members) or 2; SET its bitmask (bit i - 1 for member i), little-endian in 1, 2, 3, 4
//! or 8 bytes ([`crate::members`]); BIT(n) its number big-endian in ceil(n / 8) bytes.
//! An index, bitmask or number the column's type cannot hold (an index past the
//! members, a bit past the last member or past n) is `CorruptData` when read.

use tarn_common::{Error, Result};

use crate::check::with_column;
use crate::datetime::{Date, DateTime, Time};
use crate::decimal::{Decimal, Decimal64Form, Decimal64Parts};
use crate::limits::{
    COLUMNS_MAX, OVERFLOW_REF_BYTES, ROW_HEADER_BYTES, ROW_VAR_AREA_MAX_BYTES, TRX_ID_MAX,
    VALUE_LEN_MAX_BYTES,
};
use crate::types::{Column, ColumnType, Members};
use crate::value::Value;

/// Flag bit: the row is delete-marked (set by transactions, purged later).
pub const ROW_FLAG_DELETE_MARKED: u8 = 1;

/// The fixed 16-byte header every row starts with, for MVCC.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct RowHeader {
    pub flags: u8,
    /// At most [`TRX_ID_MAX`] (6 bytes).
    pub trx_id: u64,
    /// Pointer to the previous version of the row; 0 = none.
    pub roll_ptr: u64,
}

impl RowHeader {
    /// Reads the header at the start of `row`; `IncorrectValue` if it is too short.
    pub fn read(row: &[u8]) -> Result<RowHeader> {
        if row.len() < ROW_HEADER_BYTES {
            return Err(corrupt(format!(
                "{} bytes cannot hold a row header",
                row.len()
            )));
        }
        let mut trx_id = [0u8; 8];
        trx_id[..6].copy_from_slice(&row[2..8]);
        let mut roll_ptr = [0u8; 8];
        roll_ptr.copy_from_slice(&row[8..16]);
        Ok(RowHeader {
            flags: row[0],
            trx_id: u64::from_le_bytes(trx_id),
            roll_ptr: u64::from_le_bytes(roll_ptr),
        })
    }

    /// Writes the header over the first 16 bytes of `row` (in place, e.g. to delete-mark
    /// a stored row). Panics if `row` is shorter or `trx_id` exceeds [`TRX_ID_MAX`]:
    /// both are programmer errors.
    pub fn write(&self, row: &mut [u8]) {
        assert!(row.len() >= ROW_HEADER_BYTES, "row shorter than its header");
        assert!(
            self.trx_id <= TRX_ID_MAX,
            "trx id {} exceeds 6 bytes",
            self.trx_id
        );
        row[0] = self.flags;
        row[1] = 0;
        row[2..8].copy_from_slice(&self.trx_id.to_le_bytes()[..6]);
        row[8..16].copy_from_slice(&self.roll_ptr.to_le_bytes());
    }

    pub fn is_delete_marked(&self) -> bool {
        self.flags & ROW_FLAG_DELETE_MARKED != 0
    }
}

/// Where an external (overflow) value lives: the first page of its chain and its length.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct OverflowRef {
    pub first_page_no: u32,
    pub len_bytes: u64,
}

impl OverflowRef {
    /// The 12-byte inline form: first page number u32 LE, then length u64 LE.
    pub fn to_bytes(&self) -> [u8; OVERFLOW_REF_BYTES] {
        let mut out = [0u8; OVERFLOW_REF_BYTES];
        out[..4].copy_from_slice(&self.first_page_no.to_le_bytes());
        out[4..].copy_from_slice(&self.len_bytes.to_le_bytes());
        out
    }

    /// Reads the inline form; `IncorrectValue` unless `bytes` is exactly 12 bytes.
    pub fn from_bytes(bytes: &[u8]) -> Result<OverflowRef> {
        if bytes.len() != OVERFLOW_REF_BYTES {
            return Err(corrupt(format!(
                "overflow reference of {} bytes",
                bytes.len()
            )));
        }
        let mut page = [0u8; 4];
        page.copy_from_slice(&bytes[..4]);
        let mut len = [0u8; 8];
        len.copy_from_slice(&bytes[4..]);
        Ok(OverflowRef {
            first_page_no: u32::from_le_bytes(page),
            len_bytes: u64::from_le_bytes(len),
        })
    }
}

/// Storage for values too long to keep in a row (the B+tree crate provides the real
/// one, on overflow pages).
pub trait OverflowStore: Send + Sync {
    /// Stores `bytes` and returns a reference with `len_bytes == bytes.len()`.
    fn write(&self, bytes: &[u8]) -> Result<OverflowRef>;
    /// Appends the value's bytes to `out`. This crate always passes an empty `out` and
    /// checks that exactly `r.len_bytes` bytes arrive.
    fn read(&self, r: &OverflowRef, out: &mut Vec<u8>) -> Result<()>;
    /// Releases the value's storage.
    fn free(&self, r: &OverflowRef) -> Result<()>;
}

/// An [`OverflowStore`] for rows that must never have external values (reading or
/// writing one is an error). Useful for schemas without long columns and for tests.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoOverflow;

impl OverflowStore for NoOverflow {
    fn write(&self, bytes: &[u8]) -> Result<OverflowRef> {
        Err(Error::RowTooLarge(format!(
            "a {}-byte value needs overflow storage, which is not available here",
            bytes.len()
        )))
    }

    fn read(&self, _: &OverflowRef, _: &mut Vec<u8>) -> Result<()> {
        Err(corrupt(
            "external value where no overflow storage exists".into(),
        ))
    }

    fn free(&self, _: &OverflowRef) -> Result<()> {
        Ok(())
    }
}

/// Size rules for one row, set by the table from its page size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RowLimits {
    /// Variable values longer than this (and longer than 12 bytes) are stored
    /// externally. The table passes a quarter page.
    pub overflow_threshold_bytes: usize,
    /// The encoded row may not be longer than this.
    pub max_row_bytes: usize,
}

/// How a column is stored, resolved once from its type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Physical {
    I8,
    I16,
    I32,
    I64,
    U8,
    U16,
    U32,
    U64,
    Decimal {
        precision: u8,
        scale: u8,
    },
    F32,
    F64,
    Date,
    DateTime,
    /// TIME: signed microseconds, i64 LE.
    Time,
    /// ENUM: the index, little-endian in the slot's width.
    Enum {
        members: Members,
    },
    /// SET: the bitmask, little-endian in the slot's width.
    Set {
        members: Members,
    },
    /// BIT(n): the number, big-endian in the slot's width.
    Bit {
        len_bits: u8,
    },
    Var,
}

impl Physical {
    fn of(ty: ColumnType) -> Physical {
        match ty {
            ColumnType::TinyInt { unsigned: false } => Physical::I8,
            ColumnType::SmallInt { unsigned: false } => Physical::I16,
            ColumnType::Int { unsigned: false } => Physical::I32,
            ColumnType::BigInt { unsigned: false } => Physical::I64,
            ColumnType::TinyInt { unsigned: true } => Physical::U8,
            ColumnType::SmallInt { unsigned: true } => Physical::U16,
            ColumnType::Int { unsigned: true } => Physical::U32,
            ColumnType::BigInt { unsigned: true } => Physical::U64,
            ColumnType::Decimal { precision, scale } => Physical::Decimal { precision, scale },
            ColumnType::Float => Physical::F32,
            ColumnType::Double => Physical::F64,
            ColumnType::Date => Physical::Date,
            ColumnType::DateTime { .. } | ColumnType::Timestamp { .. } => Physical::DateTime,
            ColumnType::Time { .. } => Physical::Time,
            ColumnType::Year => Physical::U16,
            ColumnType::Enum { members } => Physical::Enum { members },
            ColumnType::Set { members } => Physical::Set { members },
            ColumnType::Bit { len_bits } => Physical::Bit { len_bits },
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
            | ColumnType::Json => Physical::Var,
        }
    }
}

/// Where one column lives in a row.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Slot {
    pub(crate) physical: Physical,
    /// Fixed columns: the byte offset in the row. Variable columns: the ordinal.
    pub(crate) position: usize,
    /// Fixed columns: the width in bytes. Variable columns: 0.
    pub(crate) width: usize,
    /// A DECIMAL of at most 18 digits: its binary form, worked out once.
    pub(crate) decimal64: Option<Decimal64Form>,
}

/// The precomputed layout of rows of one schema. Cheap to share between threads.
#[derive(Clone, Debug)]
pub struct RowLayout {
    columns: Vec<Column>,
    slots: Vec<Slot>,
    /// Null-bitmap bits that must be clear: NOT NULL columns and padding.
    null_forbidden_mask: Vec<u8>,
    external_bitmap_offset: usize,
    external_bitmap_bytes: usize,
    var_offsets_offset: usize,
    var_columns: Vec<usize>,
    var_data_offset: usize,
}

/// A variable-length column's stored form: inline bytes or a reference to an external
/// value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VarBytes<'a> {
    Inline(&'a [u8]),
    External(OverflowRef),
}

/// Turns stored rows straight into bytes of another format (a client's wire format)
/// for a scan whose output needs no values: one pass over the row instead of
/// decoding it into a [`crate::Batch`] and encoding that ([`crate::Batch::serialize_row`]).
pub trait RowSerializer: Send + Sync {
    /// Appends `view`'s row to `out`, reading external values from `overflow`; on
    /// error `out` may hold part of the row (the caller truncates it).
    fn serialize(
        &self,
        view: &RowView<'_>,
        overflow: &dyn OverflowStore,
        out: &mut Vec<u8>,
    ) -> Result<()>;
}

/// A validated row: typed O(1) access to any column without decoding the others.
#[derive(Clone, Copy, Debug)]
pub struct RowView<'a> {
    layout: &'a RowLayout,
    bytes: &'a [u8],
}

pub(crate) fn corrupt(reason: String) -> Error {
    Error::CorruptData(format!("row: {reason}"))
}

fn mismatch(column: &Column, value: &Value) -> Error {
    Error::IncorrectValue {
        column: column.name.clone(),
        reason: format!("{value:?} is not a value of type {:?}", column.ty),
    }
}

fn bitmap_bytes(bits: usize) -> usize {
    bits.div_ceil(8)
}

#[inline]
fn read_u16(bytes: &[u8], offset: usize) -> usize {
    usize::from(u16::from_le_bytes([bytes[offset], bytes[offset + 1]]))
}

#[inline]
fn bit(bytes: &[u8], offset: usize, index: usize) -> bool {
    bytes[offset + index / 8] >> (index % 8) & 1 == 1
}

fn set_bit(bytes: &mut [u8], offset: usize, index: usize) {
    bytes[offset + index / 8] |= 1 << (index % 8);
}

fn le<const N: usize>(bytes: &[u8]) -> [u8; N] {
    let mut out = [0u8; N];
    out.copy_from_slice(&bytes[..N]);
    out
}

impl RowLayout {
    /// The layout of `columns`; `InvalidDefinition` for a bad type, no columns, or more
    /// than [`COLUMNS_MAX`].
    pub fn new(columns: &[Column]) -> Result<RowLayout> {
        if columns.is_empty() || columns.len() > COLUMNS_MAX {
            return Err(Error::InvalidDefinition(format!(
                "a table has 1..={COLUMNS_MAX} columns, not {}",
                columns.len()
            )));
        }
        for column in columns {
            column.ty.validate().map_err(|error| match error {
                Error::InvalidDefinition(reason) => {
                    Error::InvalidDefinition(format!("column '{}': {reason}", column.name))
                }
                other => other,
            })?;
        }
        let ncols = columns.len();
        let var_columns: Vec<usize> = (0..ncols)
            .filter(|i| columns[*i].ty.is_variable_len())
            .collect();
        let null_bitmap_bytes = bitmap_bytes(ncols);
        let external_bitmap_offset = ROW_HEADER_BYTES + null_bitmap_bytes;
        let external_bitmap_bytes = bitmap_bytes(var_columns.len());
        let mut offset = external_bitmap_offset + external_bitmap_bytes;
        let mut slots = Vec::with_capacity(ncols);
        let mut var_ordinal = 0;
        for column in columns {
            let physical = Physical::of(column.ty);
            let decimal64 = match physical {
                Physical::Decimal { precision, scale } => Decimal64Form::new(precision, scale).ok(),
                _ => None,
            };
            match column.ty.fixed_len_bytes() {
                Some(width) => {
                    slots.push(Slot {
                        physical,
                        position: offset,
                        width,
                        decimal64,
                    });
                    offset += width;
                }
                None => {
                    slots.push(Slot {
                        physical,
                        position: var_ordinal,
                        width: 0,
                        decimal64: None,
                    });
                    var_ordinal += 1;
                }
            }
        }
        let mut null_forbidden_mask = vec![0u8; null_bitmap_bytes];
        for index in 0..null_bitmap_bytes * 8 {
            if columns.get(index).is_none_or(|column| !column.nullable) {
                set_bit(&mut null_forbidden_mask, 0, index);
            }
        }
        Ok(RowLayout {
            columns: columns.to_vec(),
            slots,
            null_forbidden_mask,
            external_bitmap_offset,
            external_bitmap_bytes,
            var_offsets_offset: offset,
            var_data_offset: offset + 2 * var_columns.len(),
            var_columns,
        })
    }

    pub fn columns(&self) -> &[Column] {
        &self.columns
    }

    pub fn column_count(&self) -> usize {
        self.columns.len()
    }

    /// Bytes before the variable data: the shortest possible row.
    pub fn fixed_prefix_len_bytes(&self) -> usize {
        self.var_data_offset
    }

    pub(crate) fn slot(&self, index: usize) -> Slot {
        self.slots[index]
    }

    /// Appends the row for `values` (one per column, as [`crate::check_value`] leaves
    /// them) to `out`. Long values go to `overflow` (see the module documentation). On
    /// error `out` is as it was and no external value stays written.
    pub fn encode(
        &self,
        values: &[Value],
        header: RowHeader,
        overflow: &dyn OverflowStore,
        limits: RowLimits,
        out: &mut Vec<u8>,
    ) -> Result<()> {
        let start = out.len();
        let result = self.encode_at(values, header, overflow, limits, out, start);
        if result.is_err() {
            out.truncate(start);
        }
        result
    }

    fn encode_at(
        &self,
        values: &[Value],
        header: RowHeader,
        overflow: &dyn OverflowStore,
        limits: RowLimits,
        out: &mut Vec<u8>,
        start: usize,
    ) -> Result<()> {
        if values.len() != self.columns.len() {
            return Err(Error::IncorrectValue {
                column: String::new(),
                reason: format!(
                    "row has {} values for {} columns",
                    values.len(),
                    self.columns.len()
                ),
            });
        }
        out.resize(start + self.var_data_offset, 0);
        let row = &mut out[start..];
        header.write(row);
        let mut var_values: Vec<Option<&[u8]>> = Vec::with_capacity(self.var_columns.len());
        for (index, (value, column)) in values.iter().zip(&self.columns).enumerate() {
            let slot = self.slots[index];
            if value.is_null() {
                if !column.nullable {
                    return Err(Error::NullNotAllowed {
                        column: column.name.clone(),
                    });
                }
                set_bit(row, ROW_HEADER_BYTES, index);
                if slot.physical == Physical::Var {
                    var_values.push(None);
                }
                continue;
            }
            if slot.physical == Physical::Var {
                let Value::Bytes(bytes) = value else {
                    return Err(mismatch(column, value));
                };
                if bytes.len() as u64 > VALUE_LEN_MAX_BYTES {
                    return Err(Error::DataTooLong {
                        column: column.name.clone(),
                    });
                }
                var_values.push(Some(bytes));
            } else {
                let dst = &mut row[slot.position..slot.position + slot.width];
                write_fixed(slot.physical, value, dst)
                    .map_err(|error| with_column(error, &column.name))?
                    .then_some(())
                    .ok_or_else(|| mismatch(column, value))?;
            }
        }
        let external = self.plan_external(&var_values, limits)?;
        let refs = write_external(&var_values, &external, overflow)?;
        let mut end = 0usize;
        for (ordinal, value) in var_values.iter().enumerate() {
            if let Some(reference) = refs[ordinal] {
                out.extend_from_slice(&reference.to_bytes());
                end += OVERFLOW_REF_BYTES;
                set_bit(out, start + self.external_bitmap_offset, ordinal);
            } else if let Some(bytes) = value {
                out.extend_from_slice(bytes);
                end += bytes.len();
            }
            let at = start + self.var_offsets_offset + 2 * ordinal;
            debug_assert!(end <= ROW_VAR_AREA_MAX_BYTES);
            out[at..at + 2].copy_from_slice(&(end as u16).to_le_bytes());
        }
        Ok(())
    }

    /// Decides which variable values are stored externally (see the module docs).
    fn plan_external(&self, var_values: &[Option<&[u8]>], limits: RowLimits) -> Result<Vec<bool>> {
        let threshold = limits.overflow_threshold_bytes.max(OVERFLOW_REF_BYTES);
        let limit = limits
            .max_row_bytes
            .min(self.var_data_offset + ROW_VAR_AREA_MAX_BYTES);
        let mut external: Vec<bool> = var_values
            .iter()
            .map(|v| v.is_some_and(|bytes| bytes.len() > threshold))
            .collect();
        let inline_len = |ordinal: usize, external: &[bool]| match var_values[ordinal] {
            None => 0,
            Some(_) if external[ordinal] => OVERFLOW_REF_BYTES,
            Some(bytes) => bytes.len(),
        };
        let mut var_len: usize = (0..var_values.len())
            .map(|k| inline_len(k, &external))
            .sum();
        while self.var_data_offset + var_len > limit {
            let largest = (0..var_values.len())
                .filter(|k| !external[*k] && inline_len(*k, &external) > OVERFLOW_REF_BYTES)
                .max_by_key(|k| inline_len(*k, &external));
            let Some(ordinal) = largest else {
                return Err(Error::RowTooLarge(format!(
                    "the row needs {} bytes with every long value stored externally; at most \
                     {limit} fit",
                    self.var_data_offset + var_len
                )));
            };
            var_len -= inline_len(ordinal, &external) - OVERFLOW_REF_BYTES;
            external[ordinal] = true;
        }
        Ok(external)
    }

    /// Checks `bytes` against every invariant in the module documentation and returns
    /// a view for O(1) column access. Never panics, whatever the bytes.
    pub fn view<'a>(&'a self, bytes: &'a [u8]) -> Result<RowView<'a>> {
        if bytes.len() < self.var_data_offset {
            return Err(corrupt(format!(
                "{} bytes, but the schema needs at least {}",
                bytes.len(),
                self.var_data_offset
            )));
        }
        let null_bitmap = &bytes[ROW_HEADER_BYTES..self.external_bitmap_offset];
        if null_bitmap
            .iter()
            .zip(&self.null_forbidden_mask)
            .any(|(bits, forbidden)| bits & forbidden != 0)
        {
            return Err(corrupt("NULL in a NOT NULL column".into()));
        }
        let var_count = self.var_columns.len();
        if !var_count.is_multiple_of(8) {
            let last = bytes[self.external_bitmap_offset + self.external_bitmap_bytes - 1];
            if last >> (var_count % 8) != 0 {
                return Err(corrupt("external bit past the last column".into()));
            }
        }
        let mut previous_end = 0;
        for (ordinal, &column) in self.var_columns.iter().enumerate() {
            let end = read_u16(bytes, self.var_offsets_offset + 2 * ordinal);
            if end < previous_end {
                return Err(corrupt(format!(
                    "variable column {ordinal} ends before it starts"
                )));
            }
            let len = end - previous_end;
            let external = bit(bytes, self.external_bitmap_offset, ordinal);
            let null = bit(bytes, ROW_HEADER_BYTES, column);
            if null && (len != 0 || external) {
                return Err(corrupt(format!("NULL column {column} has data")));
            }
            if external {
                let at = self.var_data_offset + previous_end;
                let reference = bytes
                    .get(at..at + len)
                    .ok_or_else(|| corrupt("variable data past the end of the row".into()))
                    .and_then(OverflowRef::from_bytes)?;
                if reference.len_bytes > VALUE_LEN_MAX_BYTES {
                    return Err(corrupt(format!(
                        "external value of {} bytes",
                        reference.len_bytes
                    )));
                }
            }
            previous_end = end;
        }
        if self.var_data_offset + previous_end != bytes.len() {
            return Err(corrupt(format!(
                "{} bytes, but its offsets describe {}",
                bytes.len(),
                self.var_data_offset + previous_end
            )));
        }
        Ok(RowView {
            layout: self,
            bytes,
        })
    }

    /// Decodes every column, reading external values from `overflow`.
    pub fn decode(&self, bytes: &[u8], overflow: &dyn OverflowStore) -> Result<Vec<Value>> {
        let view = self.view(bytes)?;
        (0..self.columns.len())
            .map(|index| view.value(index, overflow))
            .collect()
    }

    /// Frees every external value of a row (before deleting it or replacing it).
    pub fn free_overflow(&self, bytes: &[u8], store: &dyn OverflowStore) -> Result<()> {
        let view = self.view(bytes)?;
        for &column in &self.var_columns {
            if let Some(VarBytes::External(reference)) = view.bytes(column) {
                store.free(&reference)?;
            }
        }
        Ok(())
    }
}

/// Writes a non-NULL fixed-width value; `Ok(false)` if the value's variant does not
/// belong to the column's type.
fn write_fixed(physical: Physical, value: &Value, dst: &mut [u8]) -> Result<bool> {
    let range = |v: &dyn std::fmt::Display| Error::ValueOutOfRange {
        column: String::new(),
        reason: format!("{v} does not fit the column's type"),
    };
    match (physical, value) {
        (Physical::I8, Value::Int(v)) => {
            dst.copy_from_slice(&i8::try_from(*v).map_err(|_| range(v))?.to_le_bytes())
        }
        (Physical::I16, Value::Int(v)) => {
            dst.copy_from_slice(&i16::try_from(*v).map_err(|_| range(v))?.to_le_bytes())
        }
        (Physical::I32, Value::Int(v)) => {
            dst.copy_from_slice(&i32::try_from(*v).map_err(|_| range(v))?.to_le_bytes())
        }
        (Physical::I64, Value::Int(v)) => dst.copy_from_slice(&v.to_le_bytes()),
        (Physical::U8, Value::UInt(v)) => {
            dst.copy_from_slice(&u8::try_from(*v).map_err(|_| range(v))?.to_le_bytes())
        }
        (Physical::U16, Value::UInt(v)) => {
            dst.copy_from_slice(&u16::try_from(*v).map_err(|_| range(v))?.to_le_bytes())
        }
        (Physical::U32, Value::UInt(v)) => {
            dst.copy_from_slice(&u32::try_from(*v).map_err(|_| range(v))?.to_le_bytes())
        }
        (Physical::U64, Value::UInt(v)) => dst.copy_from_slice(&v.to_le_bytes()),
        (Physical::Decimal { precision, scale }, Value::Decimal(v)) => {
            v.write_binary(precision, scale, dst)?
        }
        (Physical::F32, Value::Float(v)) => dst.copy_from_slice(&v.to_le_bytes()),
        (Physical::F64, Value::Double(v)) => dst.copy_from_slice(&v.to_le_bytes()),
        (Physical::Date, Value::Date(v)) if v.is_valid() => {
            dst.copy_from_slice(&v.to_days().to_le_bytes())
        }
        (Physical::DateTime, Value::DateTime(v)) if v.is_valid() => {
            dst.copy_from_slice(&v.to_micros().to_le_bytes())
        }
        (Physical::Time, Value::Time(v)) => dst.copy_from_slice(&v.micros().to_le_bytes()),
        (Physical::Enum { members }, Value::Bytes(text)) => {
            let index = members.index_of(text).ok_or_else(|| no_member(text))?;
            dst.copy_from_slice(&u64::from(index).to_le_bytes()[..dst.len()]);
        }
        (Physical::Set { members }, Value::Bytes(text)) => {
            let bits = members.set_bits_of(text).ok_or_else(|| no_member(text))?;
            dst.copy_from_slice(&bits.to_le_bytes()[..dst.len()]);
        }
        (Physical::Bit { len_bits }, Value::UInt(v)) => {
            if *v > bit_max(len_bits) {
                return Err(range(v));
            }
            dst.copy_from_slice(&v.to_be_bytes()[8 - dst.len()..]);
        }
        _ => return Ok(false),
    }
    Ok(true)
}

fn no_member(text: &[u8]) -> Error {
    Error::IncorrectValue {
        column: String::new(),
        reason: format!(
            "'{}' is not a value of the column's members",
            String::from_utf8_lossy(text)
        ),
    }
}

/// The largest value of a BIT(`len_bits`).
pub(crate) fn bit_max(len_bits: u8) -> u64 {
    match len_bits {
        64.. => u64::MAX,
        n => (1u64 << n) - 1,
    }
}

/// A little-endian unsigned number of up to 8 bytes.
fn le_uint(bytes: &[u8]) -> u64 {
    let mut word = [0u8; 8];
    word[..bytes.len()].copy_from_slice(bytes);
    u64::from_le_bytes(word)
}

/// A big-endian unsigned number of up to 8 bytes.
pub(crate) fn be_uint(bytes: &[u8]) -> u64 {
    let mut word = [0u8; 8];
    word[8 - bytes.len()..].copy_from_slice(bytes);
    u64::from_be_bytes(word)
}

/// Writes the values chosen to be external; on failure frees those already written.
fn write_external(
    var_values: &[Option<&[u8]>],
    external: &[bool],
    overflow: &dyn OverflowStore,
) -> Result<Vec<Option<OverflowRef>>> {
    let mut refs = vec![None; var_values.len()];
    for (ordinal, value) in var_values.iter().enumerate() {
        let (true, Some(bytes)) = (external[ordinal], value) else {
            continue;
        };
        match overflow.write(bytes) {
            Ok(reference) => refs[ordinal] = Some(reference),
            Err(error) => {
                for reference in refs.iter().flatten() {
                    // The first error is the one to report; a failed free leaks the
                    // chain's pages (they stay allocated, reachable from nowhere).
                    let _ = overflow.free(reference);
                }
                return Err(error);
            }
        }
    }
    Ok(refs)
}

/// Reads a fixed-width value from its bytes (`bytes.len()` is the slot's width).
pub(crate) fn read_fixed(physical: Physical, bytes: &[u8]) -> Result<Value> {
    Ok(match physical {
        Physical::I8 => Value::Int(i64::from(bytes[0] as i8)),
        Physical::I16 => Value::Int(i64::from(i16::from_le_bytes(le(bytes)))),
        Physical::I32 => Value::Int(i64::from(i32::from_le_bytes(le(bytes)))),
        Physical::I64 => Value::Int(i64::from_le_bytes(le(bytes))),
        Physical::U8 => Value::UInt(u64::from(bytes[0])),
        Physical::U16 => Value::UInt(u64::from(u16::from_le_bytes(le(bytes)))),
        Physical::U32 => Value::UInt(u64::from(u32::from_le_bytes(le(bytes)))),
        Physical::U64 => Value::UInt(u64::from_le_bytes(le(bytes))),
        Physical::Decimal { precision, scale } => {
            Value::Decimal(Decimal::read_binary(bytes, precision, scale)?)
        }
        Physical::F32 => Value::Float(f32::from_le_bytes(le(bytes))),
        Physical::F64 => Value::Double(f64::from_le_bytes(le(bytes))),
        Physical::Date => Value::Date(Date::from_days(u32::from_le_bytes(le(bytes)))?),
        Physical::DateTime => {
            Value::DateTime(DateTime::from_micros(u64::from_le_bytes(le(bytes)))?)
        }
        Physical::Time => Value::Time(Time::from_stored_micros(i64::from_le_bytes(le(bytes)))?),
        Physical::Enum { members } => {
            let index = le_uint(bytes);
            if index > members.len() as u64 {
                return Err(corrupt(format!(
                    "ENUM index {index} of {} members",
                    members.len()
                )));
            }
            Value::Bytes(members.name(index as u32).as_bytes().to_vec())
        }
        Physical::Set { members } => {
            let bits = le_uint(bytes);
            if bits & !members.set_mask() != 0 {
                return Err(corrupt(format!(
                    "SET bitmask {bits:#x} of {} members",
                    members.len()
                )));
            }
            Value::Bytes(members.set_text(bits))
        }
        Physical::Bit { len_bits } => {
            let v = be_uint(bytes);
            if v > bit_max(len_bits) {
                return Err(corrupt(format!("{v} in a BIT({len_bits})")));
            }
            Value::UInt(v)
        }
        Physical::Var => unreachable!("variable columns have no fixed bytes"),
    })
}

/// Reads an external value and checks its length.
pub(crate) fn read_external(
    reference: &OverflowRef,
    overflow: &dyn OverflowStore,
    out: &mut Vec<u8>,
) -> Result<()> {
    let before = out.len();
    overflow.read(reference, out)?;
    if (out.len() - before) as u64 != reference.len_bytes {
        return Err(corrupt(format!(
            "external value of {} bytes read back as {}",
            reference.len_bytes,
            out.len() - before
        )));
    }
    Ok(())
}

impl<'a> RowView<'a> {
    /// True if some column's value lives on overflow pages.
    pub fn has_external(&self) -> bool {
        let layout = self.layout;
        self.bytes[layout.external_bitmap_offset
            ..layout.external_bitmap_offset + layout.external_bitmap_bytes]
            .iter()
            .any(|&b| b != 0)
    }

    pub fn header(&self) -> RowHeader {
        RowHeader::read(self.bytes).expect("a validated row has a header")
    }

    /// The row's bytes.
    pub fn as_bytes(&self) -> &'a [u8] {
        self.bytes
    }

    #[inline]
    pub fn is_null(&self, index: usize) -> bool {
        assert!(
            index < self.layout.columns.len(),
            "column {index} out of range"
        );
        bit(self.bytes, ROW_HEADER_BYTES, index)
    }

    /// The bytes of fixed-width column `index` (zero when NULL).
    #[inline]
    pub(crate) fn fixed_bytes(&self, index: usize) -> &'a [u8] {
        let slot = self.layout.slots[index];
        assert!(
            slot.physical != Physical::Var,
            "column {index} is variable-length"
        );
        &self.bytes[slot.position..slot.position + slot.width]
    }

    #[inline]
    fn slot_checked(&self, index: usize, want: &str, ok: fn(Physical) -> bool) -> Slot {
        let slot = self.layout.slots[index];
        assert!(ok(slot.physical), "column {index} is not {want}");
        slot
    }

    /// A signed integer column; None when NULL. Panics for another type.
    #[inline]
    pub fn i64(&self, index: usize) -> Option<i64> {
        let slot = self.slot_checked(index, "a signed integer", |p| {
            matches!(
                p,
                Physical::I8 | Physical::I16 | Physical::I32 | Physical::I64
            )
        });
        if self.is_null(index) {
            return None;
        }
        Some(crate::batch::read_int(
            slot.physical,
            self.fixed_bytes(index),
        ))
    }

    /// An unsigned integer or BIT column; None when NULL. Panics for another type.
    #[inline]
    pub fn u64(&self, index: usize) -> Option<u64> {
        let slot = self.slot_checked(index, "an unsigned integer", |p| {
            matches!(
                p,
                Physical::U8 | Physical::U16 | Physical::U32 | Physical::U64 | Physical::Bit { .. }
            )
        });
        if self.is_null(index) {
            return None;
        }
        Some(crate::batch::read_uint(
            slot.physical,
            self.fixed_bytes(index),
        ))
    }

    /// A FLOAT or DOUBLE column; None when NULL. Panics for another type.
    pub fn f64(&self, index: usize) -> Option<f64> {
        let slot = self.slot_checked(index, "FLOAT or DOUBLE", |p| {
            matches!(p, Physical::F32 | Physical::F64)
        });
        if self.is_null(index) {
            return None;
        }
        let bytes = self.fixed_bytes(index);
        Some(match slot.physical {
            Physical::F32 => f64::from(f32::from_le_bytes(le(bytes))),
            _ => f64::from_le_bytes(le(bytes)),
        })
    }

    /// A DECIMAL column of at most [`crate::decimal::DECIMAL64_PRECISION_MAX`] digits as
    /// its `i64` coefficient (the value is `coefficient / 10^scale`); None when NULL.
    /// Panics for another type.
    #[inline]
    pub fn decimal64(&self, index: usize) -> Result<Option<i64>> {
        let form = self.decimal64_form(index);
        if self.is_null(index) {
            return Ok(None);
        }
        form.read_i64(self.fixed_bytes(index)).map(Some)
    }

    /// [`RowView::decimal64`] taken apart into its integer and fraction parts.
    #[inline]
    pub fn decimal64_parts(&self, index: usize) -> Result<Option<Decimal64Parts>> {
        let form = self.decimal64_form(index);
        if self.is_null(index) {
            return Ok(None);
        }
        form.read_parts(self.fixed_bytes(index)).map(Some)
    }

    #[inline]
    fn decimal64_form(&self, index: usize) -> Decimal64Form {
        self.layout.slots[index]
            .decimal64
            .unwrap_or_else(|| panic!("column {index} is not a DECIMAL of at most 18 digits"))
    }

    /// A DATE column as its day number ([`crate::Date::to_days`]); None when NULL.
    /// Panics for another type.
    #[inline]
    pub fn date_days(&self, index: usize) -> Result<Option<u32>> {
        self.slot_checked(index, "a DATE", |p| p == Physical::Date);
        if self.is_null(index) {
            return Ok(None);
        }
        let bytes = self.fixed_bytes(index);
        crate::Date::check_days(u32::from_le_bytes(le(bytes))).map(Some)
    }

    /// A variable-length column: inline bytes or an external reference; None when NULL.
    /// Panics for a fixed-width column.
    #[inline]
    pub fn bytes(&self, index: usize) -> Option<VarBytes<'a>> {
        let slot = self.slot_checked(index, "variable-length", |p| p == Physical::Var);
        if self.is_null(index) {
            return None;
        }
        let layout = self.layout;
        let ordinal = slot.position;
        let end = read_u16(self.bytes, layout.var_offsets_offset + 2 * ordinal);
        let start = match ordinal {
            0 => 0,
            _ => read_u16(self.bytes, layout.var_offsets_offset + 2 * (ordinal - 1)),
        };
        let data = &self.bytes[layout.var_data_offset + start..layout.var_data_offset + end];
        Some(if bit(self.bytes, layout.external_bitmap_offset, ordinal) {
            VarBytes::External(OverflowRef::from_bytes(data).expect("validated by view"))
        } else {
            VarBytes::Inline(data)
        })
    }

    /// A variable-length column's bytes, inline or read from `overflow` into
    /// `scratch`; None when NULL. Panics for a fixed-width column.
    #[inline]
    pub fn var_bytes<'s>(
        &self,
        index: usize,
        overflow: &dyn OverflowStore,
        scratch: &'s mut Vec<u8>,
    ) -> Result<Option<&'s [u8]>>
    where
        'a: 's,
    {
        match self.bytes(index) {
            None => Ok(None),
            Some(VarBytes::Inline(bytes)) => Ok(Some(bytes)),
            Some(VarBytes::External(reference)) => {
                scratch.clear();
                read_external(&reference, overflow, scratch)?;
                Ok(Some(&scratch[..]))
            }
        }
    }

    /// Any column as a [`Value`], reading an external value from `overflow`.
    pub fn value(&self, index: usize, overflow: &dyn OverflowStore) -> Result<Value> {
        if self.is_null(index) {
            return Ok(Value::Null);
        }
        let slot = self.layout.slots[index];
        let name = &self.layout.columns[index].name;
        if slot.physical != Physical::Var {
            return read_fixed(slot.physical, self.fixed_bytes(index))
                .map_err(|error| with_column(error, name));
        }
        match self.bytes(index) {
            Some(VarBytes::Inline(bytes)) => Ok(Value::Bytes(bytes.to_vec())),
            Some(VarBytes::External(reference)) => {
                let mut out = Vec::new();
                read_external(&reference, overflow, &mut out)
                    .map_err(|error| with_column(error, name))?;
                Ok(Value::Bytes(out))
            }
            None => Ok(Value::Null),
        }
    }
}
