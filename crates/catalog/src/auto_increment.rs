//! AUTO_INCREMENT counters.
//!
//! Each table with an AUTO_INCREMENT column has one counter in memory: the next value
//! to hand out. [`Table::reserve_auto_increment`] takes a run of fresh values with one
//! compare-and-swap loop (no lock), and [`Table::observe_auto_increment`] moves the
//! counter past a value a statement inserted explicitly.
//!
//! # Where the counter starts
//! MySQL 8 persists the counter (in the redo log and the data dictionary), so a value
//! once handed out is never handed out again, even across a restart. Tarn persists
//! only the table's `start` (`AUTO_INCREMENT = n` of CREATE or ALTER TABLE, in
//! catalog.json). When a table is opened, its counter starts at the larger of `start`
//! and 1 + the largest value in the column, found by one descent to the last key of the
//! index the column leads (the clustered index when it leads the primary key). Rows
//! deleted but not yet purged still have their keys there, so their values count.
//! What a restart can hand out again, as MySQL 5.7 could: values reserved by inserts
//! that rolled back, and values of the largest rows once they were deleted and purged.
//!
//! # Invariants
//! 1. The counter never decreases except through `set` (ALTER TABLE ... AUTO_INCREMENT
//!    and TRUNCATE, both DDL) and never wraps: a reservation that would pass
//!    `u64::MAX` fails with 1467, and the value `u64::MAX` itself is never handed out.
//!    The SQL layer checks the column type's own range.
//! 2. Handles that DDL replaces without rebuilding the table's files (an index added
//!    or dropped, a rename, ALTER TABLE ... AUTO_INCREMENT) share one counter, so no
//!    value is handed out twice across a replacement.

use std::sync::atomic::{AtomicU64, Ordering};

use tarn_common::{Error, Result};
use tarn_row::ColumnType;

/// ER_AUTOINC_READ_FAILED (1467), MySQL's error when the counter cannot go on.
pub(crate) fn exhausted(table: &str) -> Error {
    Error::sql(
        1467,
        "HY000",
        format!("Failed to read auto-increment value from storage engine (table '{table}')"),
    )
}

/// The counter of one table's AUTO_INCREMENT column.
#[derive(Debug)]
pub(crate) struct AutoIncrementCounter {
    /// The column's position in the table.
    pub(crate) column: usize,
    /// The next value to hand out.
    next: AtomicU64,
}

impl AutoIncrementCounter {
    pub(crate) fn new(column: usize, next: u64) -> AutoIncrementCounter {
        AutoIncrementCounter {
            column,
            next: AtomicU64::new(next),
        }
    }

    pub(crate) fn next(&self) -> u64 {
        self.next.load(Ordering::Acquire)
    }

    /// Takes `count` consecutive values; returns the first. `None` if that would pass
    /// `u64::MAX` (nothing is taken then).
    pub(crate) fn reserve(&self, count: u64) -> Option<u64> {
        self.next
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |next| {
                next.checked_add(count)
            })
            .ok()
    }

    /// Moves the counter past `value` (never back).
    pub(crate) fn observe(&self, value: u64) {
        self.next
            .fetch_max(value.saturating_add(1), Ordering::AcqRel);
    }

    /// Sets the counter (DDL only).
    pub(crate) fn set(&self, next: u64) {
        self.next.store(next, Ordering::Release);
    }
}

/// The integer value of the first column of an encoded key whose first column has
/// integer type `ty` (see the key encoding in `tarn_row::key`: a marker byte, then the
/// value minus the type's minimum, big-endian, in the type's width). `None` for NULL.
pub(crate) fn leading_int(ty: ColumnType, key: &[u8]) -> Result<Option<i128>> {
    let corrupt = || {
        Error::CorruptData(format!(
            "a key of {} bytes does not start with an integer of type {ty:?}",
            key.len()
        ))
    };
    let (Some((min, _)), Some(width)) = (ty.int_range(), ty.fixed_len_bytes()) else {
        return Err(corrupt());
    };
    match key.first() {
        Some(0x00) => Ok(None),
        Some(0x01) => {
            let bytes = key.get(1..1 + width).ok_or_else(corrupt)?;
            let raw = bytes
                .iter()
                .fold(0i128, |acc, &b| (acc << 8) | i128::from(b));
            Ok(Some(if ty.is_unsigned_int() { raw } else { raw + min }))
        }
        _ => Err(corrupt()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tarn_row::{Collation, Value, encode_key};

    #[test]
    fn leading_integers_decode_as_encoded() {
        let cases: &[(ColumnType, Value, i128)] = &[
            (
                ColumnType::TinyInt { unsigned: false },
                Value::Int(-128),
                -128,
            ),
            (
                ColumnType::TinyInt { unsigned: false },
                Value::Int(127),
                127,
            ),
            (
                ColumnType::TinyInt { unsigned: true },
                Value::UInt(255),
                255,
            ),
            (ColumnType::SmallInt { unsigned: false }, Value::Int(-2), -2),
            (
                ColumnType::Int { unsigned: false },
                Value::Int(70_000),
                70_000,
            ),
            (
                ColumnType::Int { unsigned: true },
                Value::UInt(4_000_000_000),
                4_000_000_000,
            ),
            (
                ColumnType::BigInt { unsigned: false },
                Value::Int(i64::MIN),
                i128::from(i64::MIN),
            ),
            (
                ColumnType::BigInt { unsigned: false },
                Value::Int(i64::MAX),
                i128::from(i64::MAX),
            ),
            (
                ColumnType::BigInt { unsigned: true },
                Value::UInt(u64::MAX),
                i128::from(u64::MAX),
            ),
        ];
        for (ty, value, expected) in cases {
            let mut key = Vec::new();
            let types = [
                (*ty, Collation::Binary),
                (ColumnType::Int { unsigned: false }, Collation::Binary),
            ];
            encode_key(&types, &[value.clone(), Value::Int(7)], &mut key).unwrap();
            assert_eq!(
                leading_int(*ty, &key).unwrap(),
                Some(*expected),
                "{ty:?} {value:?}"
            );
        }
        let mut key = Vec::new();
        let ty = ColumnType::Int { unsigned: false };
        encode_key(&[(ty, Collation::Binary)], &[Value::Null], &mut key).unwrap();
        assert_eq!(leading_int(ty, &key).unwrap(), None);
        assert!(leading_int(ty, &[0x01, 0x00]).is_err());
        assert!(leading_int(ColumnType::Double, &[0x01; 9]).is_err());
    }

    #[test]
    fn the_counter_never_wraps() {
        let counter = AutoIncrementCounter::new(0, u64::MAX - 3);
        assert_eq!(counter.reserve(2), Some(u64::MAX - 3));
        assert_eq!(counter.reserve(2), None);
        assert_eq!(counter.reserve(1), Some(u64::MAX - 1));
        assert_eq!(counter.reserve(1), None);
        let counter = AutoIncrementCounter::new(0, 10);
        counter.observe(5);
        assert_eq!(counter.next(), 10);
        counter.observe(20);
        assert_eq!(counter.next(), 21);
        counter.observe(u64::MAX);
        assert_eq!(counter.reserve(1), None);
    }
}
