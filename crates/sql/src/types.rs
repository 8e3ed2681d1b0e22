//! The types of SQL expressions and result columns.
//!
//! Every expression the binder produces has a [`SqlType`], fixed before execution: the
//! executor sizes its vectors from it and the server (a later layer) describes result
//! columns with it. Values at run time are [`tarn_row::Value`]s; which variant a value
//! of a type holds is the same as for a stored column (see `tarn_row::value`), plus:
//!
//! - booleans (comparisons, `AND`, `IS NULL`, ...) are `SqlType::Int` holding
//!   `Value::Int(0 | 1)`, as in MySQL;
//! - the NULL literal has `SqlType::Null` and is always `Value::Null`.

use tarn_row::types::{Collation, ColumnType};

/// The type of an expression or result column.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SqlType {
    /// The type of a bare NULL.
    Null,
    /// A signed integer (`Value::Int`); `bits` is 8, 16, 32 or 64 (what the column
    /// was, for describing results; arithmetic is always on 64 bits).
    Int {
        bits: u8,
    },
    /// An unsigned integer (`Value::UInt`).
    UInt {
        bits: u8,
    },
    /// Exact decimal (`Value::Decimal`): `precision` 1..=65, `scale` 0..=30.
    Decimal {
        precision: u8,
        scale: u8,
    },
    Float,
    Double,
    Date,
    /// DATETIME (and TIMESTAMP, described as itself when `timestamp`).
    DateTime {
        fsp: u8,
        timestamp: bool,
    },
    /// Text (`Value::Bytes`, UTF-8). `len_chars`: the declared or derived maximum
    /// length (`None`: TEXT-sized); `fixed`: CHAR.
    Text {
        len_chars: Option<u32>,
        collation: Collation,
        fixed: bool,
    },
    /// Binary strings (BLOB, and text converted with BINARY).
    Blob,
}

impl SqlType {
    /// A boolean: what comparisons and logical operators return.
    pub const BOOL: SqlType = SqlType::Int { bits: 64 };
    /// BIGINT.
    pub const BIGINT: SqlType = SqlType::Int { bits: 64 };
    /// A string of unknown length with the default (case-insensitive) collation.
    pub const TEXT: SqlType = SqlType::Text {
        len_chars: None,
        collation: Collation::CaseInsensitive,
        fixed: false,
    };

    /// A VARCHAR of at most `len_chars`, case-insensitive.
    pub fn varchar(len_chars: u32) -> SqlType {
        SqlType::Text {
            len_chars: Some(len_chars),
            collation: Collation::CaseInsensitive,
            fixed: false,
        }
    }

    /// The type of a stored column.
    pub fn of_column(ty: ColumnType, collation: Collation) -> SqlType {
        match ty {
            ColumnType::TinyInt { unsigned } => int(8, unsigned),
            ColumnType::SmallInt { unsigned } => int(16, unsigned),
            ColumnType::Int { unsigned } => int(32, unsigned),
            ColumnType::BigInt { unsigned } => int(64, unsigned),
            ColumnType::Decimal { precision, scale } => SqlType::Decimal { precision, scale },
            ColumnType::Float => SqlType::Float,
            ColumnType::Double => SqlType::Double,
            ColumnType::Date => SqlType::Date,
            ColumnType::DateTime { fsp } => SqlType::DateTime {
                fsp,
                timestamp: false,
            },
            ColumnType::Timestamp { fsp } => SqlType::DateTime {
                fsp,
                timestamp: true,
            },
            ColumnType::Char { len } => SqlType::Text {
                len_chars: Some(len),
                collation,
                fixed: true,
            },
            ColumnType::VarChar { len } => SqlType::Text {
                len_chars: Some(len),
                collation,
                fixed: false,
            },
            ColumnType::Text => SqlType::Text {
                len_chars: None,
                collation,
                fixed: false,
            },
            ColumnType::Blob => SqlType::Blob,
        }
    }

    /// The column type a table created from this expression gets (CREATE TABLE ... AS,
    /// derived tables that are materialised), and its collation.
    pub fn to_column(self) -> (ColumnType, Collation) {
        match self {
            SqlType::Null => (ColumnType::Blob, Collation::Binary),
            SqlType::Int { bits } => (int_column(bits, false), Collation::Binary),
            SqlType::UInt { bits } => (int_column(bits, true), Collation::Binary),
            SqlType::Decimal { precision, scale } => {
                (ColumnType::Decimal { precision, scale }, Collation::Binary)
            }
            SqlType::Float => (ColumnType::Float, Collation::Binary),
            SqlType::Double => (ColumnType::Double, Collation::Binary),
            SqlType::Date => (ColumnType::Date, Collation::Binary),
            SqlType::DateTime { fsp, timestamp } => (
                if timestamp {
                    ColumnType::Timestamp { fsp }
                } else {
                    ColumnType::DateTime { fsp }
                },
                Collation::Binary,
            ),
            SqlType::Text {
                len_chars: Some(len),
                collation,
                fixed,
            } => (
                if fixed {
                    ColumnType::Char { len }
                } else {
                    ColumnType::VarChar { len }
                },
                collation,
            ),
            SqlType::Text {
                len_chars: None,
                collation,
                ..
            } => (ColumnType::Text, collation),
            SqlType::Blob => (ColumnType::Blob, Collation::Binary),
        }
    }

    pub fn is_integer(self) -> bool {
        matches!(self, SqlType::Int { .. } | SqlType::UInt { .. })
    }

    /// Integers, DECIMAL, FLOAT and DOUBLE.
    pub fn is_numeric(self) -> bool {
        matches!(
            self,
            SqlType::Int { .. }
                | SqlType::UInt { .. }
                | SqlType::Decimal { .. }
                | SqlType::Float
                | SqlType::Double
        )
    }

    pub fn is_string(self) -> bool {
        matches!(self, SqlType::Text { .. } | SqlType::Blob)
    }

    pub fn is_temporal(self) -> bool {
        matches!(self, SqlType::Date | SqlType::DateTime { .. })
    }

    /// How values of this type compare when they are strings.
    pub fn collation(self) -> Collation {
        match self {
            SqlType::Text { collation, .. } => collation,
            _ => Collation::Binary,
        }
    }
}

fn int(bits: u8, unsigned: bool) -> SqlType {
    if unsigned {
        SqlType::UInt { bits }
    } else {
        SqlType::Int { bits }
    }
}

fn int_column(bits: u8, unsigned: bool) -> ColumnType {
    match bits {
        8 => ColumnType::TinyInt { unsigned },
        16 => ColumnType::SmallInt { unsigned },
        32 => ColumnType::Int { unsigned },
        _ => ColumnType::BigInt { unsigned },
    }
}
