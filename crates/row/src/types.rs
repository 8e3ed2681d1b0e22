//! Column types, following MySQL's.
//!
//! A [`Column`] is what the catalog stores per column: a name, a [`ColumnType`],
//! nullability and, for strings, a [`Collation`]. The row format and the key encoding
//! both take their layout from these definitions alone.
//!
//! Invariant: a [`ColumnType`] that passed [`ColumnType::validate`] has a fixed width
//! ([`ColumnType::fixed_len_bytes`]) that never changes, so rows written under a
//! definition stay readable under it.

use tarn_common::{Error, Result};

use crate::limits::{CHAR_LEN_MAX_CHARS, FSP_MAX, VARCHAR_LEN_MAX_CHARS};

/// How strings compare. Stored per column in the catalog.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Collation {
    /// Bytes compare as unsigned bytes (MySQL's `binary`, `utf8mb4_bin` without pad).
    Binary,
    /// Case-insensitive, PAD SPACE: `'abc' = 'ABC '` (MySQL's `utf8mb4_general_ci`).
    CaseInsensitive,
}

/// A column's type. Lengths are in characters for CHAR/VARCHAR, as in MySQL.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum ColumnType {
    TinyInt {
        unsigned: bool,
    },
    SmallInt {
        unsigned: bool,
    },
    Int {
        unsigned: bool,
    },
    BigInt {
        unsigned: bool,
    },
    /// Exact decimal: `precision` 1..=65 digits, `scale` 0..=30 and <= precision.
    Decimal {
        precision: u8,
        scale: u8,
    },
    Float,
    Double,
    Date,
    /// `fsp`: fractional seconds digits, 0..=6.
    DateTime {
        fsp: u8,
    },
    Timestamp {
        fsp: u8,
    },
    Char {
        len: u32,
    },
    VarChar {
        len: u32,
    },
    Text,
    Blob,
}

/// One column of a table.
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Column {
    pub name: String,
    pub ty: ColumnType,
    pub nullable: bool,
    /// Meaningful for CHAR, VARCHAR and TEXT; BLOB and non-strings use `Binary`.
    pub collation: Collation,
}

impl ColumnType {
    /// Checks a definition against MySQL's bounds (see [`crate::limits`]); a bad one
    /// is `InvalidDefinition`.
    pub fn validate(&self) -> Result<()> {
        let fail = |reason: String| Err(Error::InvalidDefinition(reason));
        match *self {
            ColumnType::Decimal { precision, scale } => {
                crate::decimal::check_precision_scale(precision, scale)
            }
            ColumnType::DateTime { fsp } | ColumnType::Timestamp { fsp } if fsp > FSP_MAX => fail(
                format!("fractional seconds precision {fsp} is above {FSP_MAX}"),
            ),
            ColumnType::Char { len } if len > CHAR_LEN_MAX_CHARS => {
                fail(format!("CHAR({len}) is longer than {CHAR_LEN_MAX_CHARS}"))
            }
            ColumnType::VarChar { len } if len > VARCHAR_LEN_MAX_CHARS => fail(format!(
                "VARCHAR({len}) is longer than {VARCHAR_LEN_MAX_CHARS}"
            )),
            _ => Ok(()),
        }
    }

    /// Bytes the type takes in the fixed-width area of a row (and, plus the marker
    /// byte, in a key); None for variable-length types.
    pub fn fixed_len_bytes(&self) -> Option<usize> {
        Some(match *self {
            ColumnType::TinyInt { .. } => 1,
            ColumnType::SmallInt { .. } => 2,
            ColumnType::Int { .. } => 4,
            ColumnType::BigInt { .. } => 8,
            ColumnType::Decimal { precision, scale } => {
                crate::decimal::binary_len_bytes(precision, scale)
            }
            ColumnType::Float => 4,
            ColumnType::Double => 8,
            ColumnType::Date => 4,
            ColumnType::DateTime { .. } | ColumnType::Timestamp { .. } => 8,
            ColumnType::Char { .. }
            | ColumnType::VarChar { .. }
            | ColumnType::Text
            | ColumnType::Blob => return None,
        })
    }

    /// CHAR, VARCHAR, TEXT and BLOB.
    pub fn is_variable_len(&self) -> bool {
        self.fixed_len_bytes().is_none()
    }

    /// CHAR, VARCHAR and TEXT: UTF-8 text that a collation applies to.
    pub fn is_text(&self) -> bool {
        matches!(
            self,
            ColumnType::Char { .. } | ColumnType::VarChar { .. } | ColumnType::Text
        )
    }

    /// The inclusive range of an integer type; None for other types.
    pub fn int_range(&self) -> Option<(i128, i128)> {
        let (bits, unsigned) = match *self {
            ColumnType::TinyInt { unsigned } => (8, unsigned),
            ColumnType::SmallInt { unsigned } => (16, unsigned),
            ColumnType::Int { unsigned } => (32, unsigned),
            ColumnType::BigInt { unsigned } => (64, unsigned),
            _ => return None,
        };
        Some(if unsigned {
            (0, (1i128 << bits) - 1)
        } else {
            (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
        })
    }

    /// True for the unsigned integer types (their values are `Value::UInt`).
    pub fn is_unsigned_int(&self) -> bool {
        matches!(
            self,
            ColumnType::TinyInt { unsigned: true }
                | ColumnType::SmallInt { unsigned: true }
                | ColumnType::Int { unsigned: true }
                | ColumnType::BigInt { unsigned: true }
        )
    }

    /// True for the signed integer types (their values are `Value::Int`).
    pub fn is_signed_int(&self) -> bool {
        self.int_range().is_some() && !self.is_unsigned_int()
    }
}

impl Column {
    /// A column with the `Binary` collation.
    pub fn new(name: impl Into<String>, ty: ColumnType, nullable: bool) -> Column {
        Column {
            name: name.into(),
            ty,
            nullable,
            collation: Collation::Binary,
        }
    }

    pub fn with_collation(mut self, collation: Collation) -> Column {
        self.collation = collation;
        self
    }
}
