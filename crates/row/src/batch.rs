//! Columnar batches: rows decoded column by column for the vectorised executor.
//!
//! Scan workers each own a [`Batch`] and fill it in parallel with
//! [`RowLayout::decode_into`] (technique S1), which decodes only the projected columns
//! of a row straight into typed vectors: no allocation per row for fixed-width columns
//! (the vectors grow amortised), no reads of external values for columns not projected.
//!
//! Invariants (checked by [`Batch::check_invariants`]):
//!
//! 1. Every column vector holds exactly `len` values and `len` null flags; a NULL slot
//!    holds the type's zero value (empty bytes).
//! 2. A `Bytes` vector has `len + 1` offsets, starting at 0, never decreasing, the last
//!    equal to `data.len()`; value `i` is `data[offsets[i]..offsets[i + 1]]`.
//! 3. A row that fails to decode leaves the batch as it was.
//! 4. A serialized batch ([`Batch::serialized`]) has no column vectors: its `len` rows
//!    are the bytes in `serialized`, one row after another.

use tarn_common::{Error, Result};

use crate::datetime::{Date, DateTime, Time};
use crate::decimal::{DECIMAL64_PRECISION_MAX, Decimal};
use crate::limits::{BATCH_COLUMN_BYTES_MAX, BATCH_ROWS_MAX};
use crate::row::{
    OverflowStore, Physical, RowLayout, RowSerializer, RowView, VarBytes, read_external, read_fixed,
};
use crate::value::Value;

/// The values of one column of a batch, by physical type, with a NULL flag per row.
#[derive(Clone, Debug, PartialEq)]
pub enum ColumnVector {
    /// TINYINT..BIGINT (signed).
    Int {
        values: Vec<i64>,
        nulls: Vec<bool>,
    },
    /// TINYINT..BIGINT UNSIGNED, and BIT.
    UInt {
        values: Vec<u64>,
        nulls: Vec<bool>,
    },
    Float {
        values: Vec<f32>,
        nulls: Vec<bool>,
    },
    Double {
        values: Vec<f64>,
        nulls: Vec<bool>,
    },
    /// DECIMAL of more than 18 digits.
    Decimal {
        values: Vec<Decimal>,
        nulls: Vec<bool>,
    },
    /// DECIMAL of at most 18 digits, as `i64` coefficients: the value is
    /// `values[i] / 10^scale` (the fast path for the money columns of most schemas).
    Decimal64 {
        values: Vec<i64>,
        scale: u8,
        nulls: Vec<bool>,
    },
    /// DATE, as day numbers ([`Date::to_days`]): comparing and subtracting dates in
    /// a vector needs no calendar arithmetic.
    Date {
        values: Vec<u32>,
        nulls: Vec<bool>,
    },
    /// DATETIME and TIMESTAMP.
    DateTime {
        values: Vec<DateTime>,
        nulls: Vec<bool>,
    },
    /// TIME. (YEAR is a `UInt` vector.)
    Time {
        values: Vec<Time>,
        nulls: Vec<bool>,
    },
    /// The strings: CHAR, VARCHAR, BINARY, VARBINARY, the TEXT and BLOB types; and
    /// ENUM and SET, as their members' text.
    Bytes {
        data: Vec<u8>,
        offsets: Vec<u32>,
        nulls: Vec<bool>,
    },
}

impl ColumnVector {
    fn for_physical(physical: Physical, capacity_rows: usize) -> ColumnVector {
        let nulls = Vec::with_capacity(capacity_rows);
        match physical {
            Physical::I8 | Physical::I16 | Physical::I32 | Physical::I64 => ColumnVector::Int {
                values: Vec::with_capacity(capacity_rows),
                nulls,
            },
            Physical::U8 | Physical::U16 | Physical::U32 | Physical::U64 | Physical::Bit { .. } => {
                ColumnVector::UInt {
                    values: Vec::with_capacity(capacity_rows),
                    nulls,
                }
            }
            Physical::F32 => ColumnVector::Float {
                values: Vec::with_capacity(capacity_rows),
                nulls,
            },
            Physical::F64 => ColumnVector::Double {
                values: Vec::with_capacity(capacity_rows),
                nulls,
            },
            Physical::Decimal { precision, scale } if precision <= DECIMAL64_PRECISION_MAX => {
                ColumnVector::Decimal64 {
                    values: Vec::with_capacity(capacity_rows),
                    scale,
                    nulls,
                }
            }
            Physical::Decimal { .. } => ColumnVector::Decimal {
                values: Vec::with_capacity(capacity_rows),
                nulls,
            },
            Physical::Date => ColumnVector::Date {
                values: Vec::with_capacity(capacity_rows),
                nulls,
            },
            Physical::DateTime => ColumnVector::DateTime {
                values: Vec::with_capacity(capacity_rows),
                nulls,
            },
            Physical::Time => ColumnVector::Time {
                values: Vec::with_capacity(capacity_rows),
                nulls,
            },
            Physical::Var | Physical::Enum { .. } | Physical::Set { .. } => {
                let mut offsets = Vec::with_capacity(capacity_rows + 1);
                offsets.push(0);
                ColumnVector::Bytes {
                    data: Vec::new(),
                    offsets,
                    nulls,
                }
            }
        }
    }

    /// The NULL flags, one per row.
    pub fn nulls(&self) -> &[bool] {
        match self {
            ColumnVector::Int { nulls, .. }
            | ColumnVector::UInt { nulls, .. }
            | ColumnVector::Float { nulls, .. }
            | ColumnVector::Double { nulls, .. }
            | ColumnVector::Decimal { nulls, .. }
            | ColumnVector::Decimal64 { nulls, .. }
            | ColumnVector::Date { nulls, .. }
            | ColumnVector::DateTime { nulls, .. }
            | ColumnVector::Time { nulls, .. }
            | ColumnVector::Bytes { nulls, .. } => nulls,
        }
    }

    pub fn len(&self) -> usize {
        self.nulls().len()
    }

    pub fn is_empty(&self) -> bool {
        self.nulls().is_empty()
    }

    pub fn is_null(&self, row: usize) -> bool {
        self.nulls()[row]
    }

    /// The bytes of row `row` of a `Bytes` vector (None when NULL or another type).
    pub fn bytes(&self, row: usize) -> Option<&[u8]> {
        match self {
            ColumnVector::Bytes {
                data,
                offsets,
                nulls,
            } if !nulls[row] => Some(&data[offsets[row] as usize..offsets[row + 1] as usize]),
            _ => None,
        }
    }

    /// Row `row` as a [`Value`].
    pub fn value(&self, row: usize) -> Value {
        if self.is_null(row) {
            return Value::Null;
        }
        match self {
            ColumnVector::Int { values, .. } => Value::Int(values[row]),
            ColumnVector::UInt { values, .. } => Value::UInt(values[row]),
            ColumnVector::Float { values, .. } => Value::Float(values[row]),
            ColumnVector::Double { values, .. } => Value::Double(values[row]),
            ColumnVector::Decimal { values, .. } => Value::Decimal(values[row]),
            ColumnVector::Decimal64 { values, scale, .. } => Value::Decimal(
                Decimal::from_i128(i128::from(values[row]), *scale)
                    .expect("an 18-digit coefficient with a valid scale"),
            ),
            ColumnVector::Date { values, .. } => {
                Value::Date(Date::from_days(values[row]).expect("batches hold valid day numbers"))
            }
            ColumnVector::DateTime { values, .. } => Value::DateTime(values[row]),
            ColumnVector::Time { values, .. } => Value::Time(values[row]),
            ColumnVector::Bytes { .. } => {
                Value::Bytes(self.bytes(row).unwrap_or_default().to_vec())
            }
        }
    }

    /// An empty vector of the same type with room for `capacity_rows` values, and for
    /// as many bytes as this one holds if it is a `Bytes` vector.
    fn empty_like(&self, capacity_rows: usize) -> ColumnVector {
        let nulls = Vec::with_capacity(capacity_rows);
        match self {
            ColumnVector::Int { .. } => ColumnVector::Int {
                values: Vec::with_capacity(capacity_rows),
                nulls,
            },
            ColumnVector::UInt { .. } => ColumnVector::UInt {
                values: Vec::with_capacity(capacity_rows),
                nulls,
            },
            ColumnVector::Float { .. } => ColumnVector::Float {
                values: Vec::with_capacity(capacity_rows),
                nulls,
            },
            ColumnVector::Double { .. } => ColumnVector::Double {
                values: Vec::with_capacity(capacity_rows),
                nulls,
            },
            ColumnVector::Decimal { .. } => ColumnVector::Decimal {
                values: Vec::with_capacity(capacity_rows),
                nulls,
            },
            ColumnVector::Decimal64 { scale, .. } => ColumnVector::Decimal64 {
                values: Vec::with_capacity(capacity_rows),
                scale: *scale,
                nulls,
            },
            ColumnVector::Date { .. } => ColumnVector::Date {
                values: Vec::with_capacity(capacity_rows),
                nulls,
            },
            ColumnVector::DateTime { .. } => ColumnVector::DateTime {
                values: Vec::with_capacity(capacity_rows),
                nulls,
            },
            ColumnVector::Time { .. } => ColumnVector::Time {
                values: Vec::with_capacity(capacity_rows),
                nulls,
            },
            ColumnVector::Bytes { data, .. } => {
                let mut offsets = Vec::with_capacity(capacity_rows + 1);
                offsets.push(0);
                ColumnVector::Bytes {
                    data: Vec::with_capacity(data.len()),
                    offsets,
                    nulls,
                }
            }
        }
    }

    /// Keeps the first `len` rows.
    fn truncate(&mut self, len: usize) {
        match self {
            ColumnVector::Int { values, nulls } => {
                values.truncate(len);
                nulls.truncate(len);
            }
            ColumnVector::UInt { values, nulls } => {
                values.truncate(len);
                nulls.truncate(len);
            }
            ColumnVector::Float { values, nulls } => {
                values.truncate(len);
                nulls.truncate(len);
            }
            ColumnVector::Double { values, nulls } => {
                values.truncate(len);
                nulls.truncate(len);
            }
            ColumnVector::Decimal { values, nulls } => {
                values.truncate(len);
                nulls.truncate(len);
            }
            ColumnVector::Decimal64 { values, nulls, .. } => {
                values.truncate(len);
                nulls.truncate(len);
            }
            ColumnVector::Date { values, nulls } => {
                values.truncate(len);
                nulls.truncate(len);
            }
            ColumnVector::DateTime { values, nulls } => {
                values.truncate(len);
                nulls.truncate(len);
            }
            ColumnVector::Time { values, nulls } => {
                values.truncate(len);
                nulls.truncate(len);
            }
            ColumnVector::Bytes {
                data,
                offsets,
                nulls,
            } => {
                offsets.truncate(len + 1);
                data.truncate(offsets[len] as usize);
                nulls.truncate(len);
            }
        }
    }

    fn check_invariants(&self, len: usize) {
        assert_eq!(self.len(), len);
        let values_len = match self {
            ColumnVector::Int { values, .. } => values.len(),
            ColumnVector::UInt { values, .. } => values.len(),
            ColumnVector::Float { values, .. } => values.len(),
            ColumnVector::Double { values, .. } => values.len(),
            ColumnVector::Decimal { values, .. } => values.len(),
            ColumnVector::Decimal64 { values, .. } => values.len(),
            ColumnVector::Date { values, .. } => values.len(),
            ColumnVector::DateTime { values, .. } => values.len(),
            ColumnVector::Time { values, .. } => values.len(),
            ColumnVector::Bytes { data, offsets, .. } => {
                assert_eq!(offsets.len(), len + 1);
                assert_eq!(offsets[0], 0);
                assert!(offsets.windows(2).all(|w| w[0] <= w[1]));
                assert_eq!(offsets[len] as usize, data.len());
                len
            }
        };
        assert_eq!(values_len, len);
    }
}

/// Rows of a projection, column by column.
#[derive(Clone, Debug)]
pub struct Batch {
    /// One vector per projected column, in projection order.
    pub columns: Vec<ColumnVector>,
    len: usize,
    capacity_rows: usize,
    projection: Vec<usize>,
    /// Reused buffer for external values.
    scratch: Vec<u8>,
    /// The rows of a serialized batch, as a [`RowSerializer`] wrote them.
    pub serialized: Vec<u8>,
}

impl Batch {
    /// An empty batch for `projection` (column indexes of `layout`) sized for
    /// `capacity_rows` rows (at most [`BATCH_ROWS_MAX`]). Panics on an index out of
    /// range: a programmer error.
    pub fn new(layout: &RowLayout, projection: &[usize], capacity_rows: usize) -> Batch {
        assert!(
            capacity_rows <= BATCH_ROWS_MAX,
            "batch of {capacity_rows} rows"
        );
        let columns = projection
            .iter()
            .map(|&index| {
                assert!(index < layout.column_count(), "column {index} out of range");
                ColumnVector::for_physical(layout.slot(index).physical, capacity_rows)
            })
            .collect();
        Batch {
            columns,
            len: 0,
            capacity_rows,
            projection: projection.to_vec(),
            scratch: Vec::new(),
            serialized: Vec::new(),
        }
    }

    /// An empty batch for up to `capacity_rows` rows turned into bytes by a
    /// [`RowSerializer`] ([`Batch::serialize_row`]) instead of decoded into vectors.
    pub fn serialized(capacity_rows: usize) -> Batch {
        assert!(
            capacity_rows <= BATCH_ROWS_MAX,
            "batch of {capacity_rows} rows"
        );
        Batch {
            columns: Vec::new(),
            len: 0,
            capacity_rows,
            projection: Vec::new(),
            scratch: Vec::new(),
            serialized: Vec::new(),
        }
    }

    /// Appends `view`'s row to a serialized batch. On error the batch is unchanged.
    pub fn serialize_row(
        &mut self,
        view: &RowView<'_>,
        serializer: &dyn RowSerializer,
        overflow: &dyn OverflowStore,
    ) -> Result<()> {
        debug_assert!(self.columns.is_empty(), "a serialized batch has no vectors");
        let before = self.serialized.len();
        if let Err(error) = serializer.serialize(view, overflow, &mut self.serialized) {
            self.serialized.truncate(before);
            return Err(error);
        }
        self.len += 1;
        Ok(())
    }

    /// An empty batch for the same projection and rows, with room for as many bytes
    /// per variable-length column (or serialized rows) as this one holds: the next
    /// batch of a scan fills without growing (and copying) its byte vectors again.
    pub fn empty_like(&self) -> Batch {
        let columns = self
            .columns
            .iter()
            .map(|column| column.empty_like(self.capacity_rows))
            .collect();
        Batch {
            columns,
            len: 0,
            capacity_rows: self.capacity_rows,
            projection: self.projection.clone(),
            scratch: Vec::new(),
            serialized: Vec::with_capacity(self.serialized.len()),
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn capacity_rows(&self) -> usize {
        self.capacity_rows
    }

    /// True once `len() >= capacity_rows()` (or a serialized batch holds
    /// [`BATCH_COLUMN_BYTES_MAX`] bytes); [`RowLayout::decode_into`] still appends past
    /// it, so callers flush when this turns true.
    pub fn is_full(&self) -> bool {
        self.len >= self.capacity_rows || self.serialized.len() >= BATCH_COLUMN_BYTES_MAX
    }

    /// The column indexes this batch was created for.
    pub fn projection(&self) -> &[usize] {
        &self.projection
    }

    /// Empties the batch, keeping its allocations.
    pub fn clear(&mut self) {
        for column in &mut self.columns {
            column.truncate(0);
        }
        self.serialized.clear();
        self.len = 0;
    }

    /// Row `row` as values, in projection order.
    pub fn row(&self, row: usize) -> Vec<Value> {
        assert!(row < self.len, "row {row} of {}", self.len);
        self.columns
            .iter()
            .map(|column| column.value(row))
            .collect()
    }

    /// The value of projected column `column` in row `row`.
    pub fn value(&self, column: usize, row: usize) -> Value {
        assert!(row < self.len, "row {row} of {}", self.len);
        self.columns[column].value(row)
    }

    /// Asserts the invariants in the module documentation.
    pub fn check_invariants(&self) {
        assert_eq!(self.columns.len(), self.projection.len());
        for column in &self.columns {
            column.check_invariants(self.len);
        }
    }
}

#[inline]
pub(crate) fn read_int(physical: Physical, bytes: &[u8]) -> i64 {
    match physical {
        Physical::I8 => i64::from(bytes[0] as i8),
        Physical::I16 => i64::from(i16::from_le_bytes([bytes[0], bytes[1]])),
        Physical::I32 => i64::from(i32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]])),
        _ => {
            let mut word = [0u8; 8];
            word.copy_from_slice(&bytes[..8]);
            i64::from_le_bytes(word)
        }
    }
}

#[inline]
pub(crate) fn read_uint(physical: Physical, bytes: &[u8]) -> u64 {
    match physical {
        Physical::U8 => u64::from(bytes[0]),
        Physical::U16 => u64::from(u16::from_le_bytes([bytes[0], bytes[1]])),
        Physical::U32 => u64::from(u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]])),
        Physical::Bit { .. } => crate::row::be_uint(bytes),
        _ => {
            let mut word = [0u8; 8];
            word.copy_from_slice(&bytes[..8]);
            u64::from_le_bytes(word)
        }
    }
}

/// Appends column `index` of `view` to `vector`, which was made for its type.
fn push_column(
    view: &RowView<'_>,
    layout: &RowLayout,
    index: usize,
    vector: &mut ColumnVector,
    overflow: &dyn OverflowStore,
    scratch: &mut Vec<u8>,
) -> Result<()> {
    let null = view.is_null(index);
    let physical = layout.slot(index).physical;
    if physical == Physical::Var {
        let ColumnVector::Bytes {
            data,
            offsets,
            nulls,
        } = vector
        else {
            unreachable!("a batch vector matches its column's type");
        };
        match view.bytes(index) {
            None => {}
            Some(VarBytes::Inline(bytes)) => data.extend_from_slice(bytes),
            Some(VarBytes::External(reference)) => {
                scratch.clear();
                read_external(&reference, overflow, scratch)?;
                data.extend_from_slice(scratch);
            }
        }
        let end = u32::try_from(data.len())
            .ok()
            .filter(|end| *end as usize <= BATCH_COLUMN_BYTES_MAX)
            .ok_or_else(|| {
                Error::OutOfResources(format!(
                    "a batch column holds at most {BATCH_COLUMN_BYTES_MAX} bytes"
                ))
            })?;
        offsets.push(end);
        nulls.push(null);
        return Ok(());
    }
    let bytes = view.fixed_bytes(index);
    if let Physical::Enum { .. } | Physical::Set { .. } | Physical::Bit { .. } = physical {
        return push_member_or_bits(physical, bytes, null, vector);
    }
    match vector {
        ColumnVector::Int { values, nulls } => {
            values.push(if null { 0 } else { read_int(physical, bytes) });
            nulls.push(null);
        }
        ColumnVector::UInt { values, nulls } => {
            values.push(if null { 0 } else { read_uint(physical, bytes) });
            nulls.push(null);
        }
        ColumnVector::Float { values, nulls } => {
            let word = [bytes[0], bytes[1], bytes[2], bytes[3]];
            values.push(if null { 0.0 } else { f32::from_le_bytes(word) });
            nulls.push(null);
        }
        ColumnVector::Double { values, nulls } => {
            let mut word = [0u8; 8];
            word.copy_from_slice(&bytes[..8]);
            values.push(if null { 0.0 } else { f64::from_le_bytes(word) });
            nulls.push(null);
        }
        ColumnVector::Decimal64 { values, nulls, .. } => {
            let value = match (null, layout.slot(index).decimal64) {
                (false, Some(form)) => form.read_i64(bytes)?,
                _ => 0,
            };
            values.push(value);
            nulls.push(null);
        }
        ColumnVector::Decimal { values, nulls } => {
            let value = match (null, physical) {
                (false, Physical::Decimal { precision, scale }) => {
                    Decimal::read_binary(bytes, precision, scale)?
                }
                _ => Decimal::ZERO,
            };
            values.push(value);
            nulls.push(null);
        }
        ColumnVector::Date { values, nulls } => {
            let value = if null {
                0
            } else {
                Date::check_days(u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]))?
            };
            values.push(value);
            nulls.push(null);
        }
        ColumnVector::DateTime { values, nulls } => {
            let value = if null {
                DateTime::MIN
            } else {
                match read_fixed(physical, bytes)? {
                    Value::DateTime(v) => v,
                    _ => unreachable!("DATETIME columns decode to datetimes"),
                }
            };
            values.push(value);
            nulls.push(null);
        }
        ColumnVector::Time { values, nulls } => {
            let value = if null {
                Time::ZERO
            } else {
                let mut word = [0u8; 8];
                word.copy_from_slice(&bytes[..8]);
                Time::from_stored_micros(i64::from_le_bytes(word))?
            };
            values.push(value);
            nulls.push(null);
        }
        ColumnVector::Bytes { .. } => unreachable!("a batch vector matches its column's type"),
    }
    Ok(())
}

/// Appends an ENUM or SET (its members' text, to a `Bytes` vector) or a BIT (its
/// number, to a `UInt` vector) from its stored bytes.
fn push_member_or_bits(
    physical: Physical,
    bytes: &[u8],
    null: bool,
    vector: &mut ColumnVector,
) -> Result<()> {
    let value = if null {
        Value::Null
    } else {
        read_fixed(physical, bytes)?
    };
    match (vector, value) {
        (
            ColumnVector::Bytes {
                data,
                offsets,
                nulls,
            },
            value,
        ) => {
            if let Value::Bytes(text) = value {
                data.extend_from_slice(&text);
            }
            // A member list's text is far below the batch bound, but a batch holds
            // many rows of it.
            let end = u32::try_from(data.len())
                .ok()
                .filter(|end| *end as usize <= BATCH_COLUMN_BYTES_MAX)
                .ok_or_else(|| {
                    Error::OutOfResources(format!(
                        "a batch column holds at most {BATCH_COLUMN_BYTES_MAX} bytes"
                    ))
                })?;
            offsets.push(end);
            nulls.push(null);
        }
        (ColumnVector::UInt { values, nulls }, value) => {
            values.push(match value {
                Value::UInt(v) => v,
                _ => 0,
            });
            nulls.push(null);
        }
        _ => unreachable!("a batch vector matches its column's type"),
    }
    Ok(())
}

impl RowLayout {
    /// Decodes the `projection` columns of one row and appends them to `batch`, which
    /// must have been created for the same projection. Columns outside the projection
    /// are not decoded, and their external values are not read. On error (corrupt
    /// bytes, a failed overflow read) the batch is unchanged.
    pub fn decode_into(
        &self,
        bytes: &[u8],
        projection: &[usize],
        batch: &mut Batch,
        overflow: &dyn OverflowStore,
    ) -> Result<()> {
        // Once per row: the full comparison only in debug builds.
        debug_assert_eq!(
            batch.projection, projection,
            "the batch was created for another projection"
        );
        assert_eq!(
            batch.columns.len(),
            projection.len(),
            "the batch was created for another projection"
        );
        let view = self.view(bytes)?;
        let Batch {
            columns,
            len,
            scratch,
            ..
        } = batch;
        for (k, &index) in projection.iter().enumerate() {
            if let Err(error) = push_column(&view, self, index, &mut columns[k], overflow, scratch)
            {
                let name = &self.columns()[index].name;
                for column in columns.iter_mut() {
                    column.truncate(*len);
                }
                return Err(crate::check::with_column(error, name));
            }
        }
        *len += 1;
        Ok(())
    }
}
