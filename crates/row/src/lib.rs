//! Column types, values, the row format, columnar batches and the key encoding.
//!
//! This crate turns SQL values into the bytes the B+tree stores and back. It knows
//! nothing of pages: the B+tree stores `(key bytes, value bytes)` entries and compares
//! keys as raw bytes; this crate produces both.
//!
//! - [`types`]: [`ColumnType`], [`Collation`], [`Column`] and definition checks;
//!   [`members`]: the interned member lists of ENUM and SET types.
//! - [`value`]: [`Value`], one per column; [`decimal`] and [`datetime`] hold the exact
//!   DECIMAL and the DATE/DATETIME/TIME types.
//! - [`check_value`]: validates and normalises a value for its column (MySQL strict
//!   mode). Everything after it may assume normal-form values.
//! - [`row`]: the row format (value part of a clustered-index entry): an MVCC header,
//!   null and external bitmaps, O(1) fixed-width columns, variable columns, and
//!   overflow of long values to an [`OverflowStore`].
//! - [`batch`]: columnar batches filled by [`RowLayout::decode_into`] (technique S1).
//! - [`key`]: the memcmp-ordered key encoding and the matching [`compare_values`].
//! - [`limits`]: every bound this crate enforces.
//!
//! The byte layouts are specified in `docs/file-format.md` ("Rows" and "Keys").

#![forbid(unsafe_code)]

pub mod batch;
mod check;
pub mod datetime;
pub mod decimal;
pub mod key;
pub mod limits;
pub mod members;
pub mod row;
pub mod types;
pub mod value;

pub use batch::{Batch, ColumnVector};
pub use check::{bit_number_for, check_value, enum_index_for, pad_binary, set_bits_for};
pub use datetime::{Date, DateTime, Time};
pub use decimal::{Decimal, Decimal64Form, Decimal64Parts};
pub use key::{compare_values, encode_key, key_prefix_len};
pub use row::{
    NoOverflow, OverflowRef, OverflowStore, RowHeader, RowLayout, RowLimits, RowSerializer,
    RowView, VarBytes,
};
pub use types::{Collation, Column, ColumnType, LobSize, Members};
pub use value::Value;
