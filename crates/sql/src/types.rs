//! The types of SQL expressions and result columns.
//!
//! Every expression the binder produces has a [`SqlType`], fixed before execution: the
//! executor sizes its vectors from it and the server (a later layer) describes result
//! columns with it. Values at run time are [`tarn_row::Value`]s; which variant a value
//! of a type holds is the same as for a stored column (see `tarn_row::value`), plus:
//!
//! - booleans (comparisons, `AND`, `IS NULL`, ...) are `SqlType::Int` holding
//!   `Value::Int(0 | 1)`, as in MySQL;
//! - the NULL literal has `SqlType::Null` and is always `Value::Null`;
//! - YEAR is `Value::UInt` and takes part in expressions as a SMALLINT UNSIGNED
//!   ([`SqlType::numeric_form`]); only its description and text (`0000`) differ.
//!
//! ENUM and SET values are their members' text (`Value::Bytes`, see
//! `tarn_row::members`): strings wherever a string is read, while numeric context
//! (`e + 0`, `e = 1`, `CAST(e AS UNSIGNED)`) and ORDER BY read the index or bitmask
//! through [`crate::scalar::cast::CastTarget::Number`], which the binder puts in. BIT
//! values are numbers (`Value::UInt`), except where a string is read (CONCAT, CAST AS
//! CHAR, LIKE, ...): there they are their big-endian bytes, through
//! [`crate::scalar::cast::CastTarget::BitBytes`], which the binder puts in
//! (`bind::as_text`). The client also receives their bytes.

use tarn_row::types::{Collation, ColumnType, LobSize, Members};

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
    /// Binary strings (`Value::Bytes`, any bytes) described as a BLOB: the BLOB
    /// columns (`size` is their class, which the protocol announces) and expressions
    /// such as UNHEX() and X'..' (`Regular`).
    Blob {
        size: LobSize,
    },
    /// Binary strings of at most `len_bytes` bytes: BINARY(n) (`fixed`) and
    /// VARBINARY(n) columns, and CAST(x AS BINARY(n)).
    Binary {
        len_bytes: u32,
        fixed: bool,
    },
    /// JSON: a document as its normalized text (`Value::Bytes`, see `crate::json`),
    /// from a JSON column, a JSON function or CAST(... AS JSON).
    Json,
    /// TIME(fsp) (`Value::Time`).
    Time {
        fsp: u8,
    },
    /// YEAR (`Value::UInt`, 0 or 1901..=2155).
    Year,
    /// ENUM columns (`Value::Bytes`, the member's text).
    Enum {
        members: Members,
        collation: Collation,
    },
    /// SET columns (`Value::Bytes`, the members' text joined by commas).
    Set {
        members: Members,
        collation: Collation,
    },
    /// BIT(n) columns (`Value::UInt`): numbers, sent to clients as ceil(n / 8) bytes.
    Bit {
        len_bits: u8,
    },
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

    /// A binary string described as a BLOB (the type of UNHEX(), X'..' and `_binary`).
    pub const BLOB: SqlType = SqlType::Blob {
        size: LobSize::Regular,
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
            ColumnType::Text
            | ColumnType::TinyText
            | ColumnType::MediumText
            | ColumnType::LongText => SqlType::Text {
                len_chars: None,
                collation,
                fixed: false,
            },
            ColumnType::Blob
            | ColumnType::TinyBlob
            | ColumnType::MediumBlob
            | ColumnType::LongBlob => SqlType::Blob {
                size: ty.blob_size().expect("a BLOB type"),
            },
            ColumnType::Binary { len_bytes } => SqlType::Binary {
                len_bytes,
                fixed: true,
            },
            ColumnType::VarBinary { len_bytes } => SqlType::Binary {
                len_bytes,
                fixed: false,
            },
            ColumnType::Json => SqlType::Json,
            ColumnType::Time { fsp } => SqlType::Time { fsp },
            ColumnType::Year => SqlType::Year,
            ColumnType::Enum { members } => SqlType::Enum { members, collation },
            ColumnType::Set { members } => SqlType::Set { members, collation },
            ColumnType::Bit { len_bits } => SqlType::Bit { len_bits },
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
            SqlType::Blob { size } => (ColumnType::blob_of_size(size), Collation::Binary),
            SqlType::Binary { len_bytes, fixed } => (
                if fixed {
                    ColumnType::Binary { len_bytes }
                } else {
                    ColumnType::VarBinary { len_bytes }
                },
                Collation::Binary,
            ),
            SqlType::Json => (ColumnType::Json, Collation::Binary),
            SqlType::Time { fsp } => (ColumnType::Time { fsp }, Collation::Binary),
            SqlType::Year => (ColumnType::Year, Collation::Binary),
            SqlType::Enum { members, collation } => (ColumnType::Enum { members }, collation),
            SqlType::Set { members, collation } => (ColumnType::Set { members }, collation),
            SqlType::Bit { len_bits } => (ColumnType::Bit { len_bits }, Collation::Binary),
        }
    }

    /// The member list of an ENUM or SET; None for other types.
    pub fn members(self) -> Option<Members> {
        match self {
            SqlType::Enum { members, .. } | SqlType::Set { members, .. } => Some(members),
            _ => None,
        }
    }

    /// The type a value of this type is once it leaves its column's own semantics (a
    /// branch of CASE or UNION mixed with other types, an operand of arithmetic): an
    /// ENUM or SET is a VARCHAR of its longest value, a BIT a BIGINT UNSIGNED; other
    /// types are themselves.
    pub fn plain(self) -> SqlType {
        match self {
            SqlType::Enum { members, collation } => SqlType::Text {
                len_chars: Some(members.len_max_chars()),
                collation,
                fixed: false,
            },
            SqlType::Set { members, collation } => SqlType::Text {
                len_chars: Some(members.joined_len_chars()),
                collation,
                fixed: false,
            },
            SqlType::Bit { .. } => SqlType::UInt { bits: 64 },
            other => other,
        }
    }

    /// The type this one computes as in arithmetic, comparisons and unions: YEAR is
    /// a SMALLINT UNSIGNED there (as in MySQL, where `y - 2100` is out of range for
    /// BIGINT UNSIGNED); every other type is itself.
    pub fn numeric_form(self) -> SqlType {
        match self {
            SqlType::Year => SqlType::UInt { bits: 16 },
            other => other,
        }
    }

    /// The integers, YEAR among them.
    pub fn is_integer(self) -> bool {
        matches!(
            self,
            SqlType::Int { .. } | SqlType::UInt { .. } | SqlType::Year
        )
    }

    /// Integers (YEAR among them), DECIMAL, FLOAT and DOUBLE.
    pub fn is_numeric(self) -> bool {
        matches!(
            self,
            SqlType::Int { .. }
                | SqlType::UInt { .. }
                | SqlType::Year
                | SqlType::Decimal { .. }
                | SqlType::Float
                | SqlType::Double
        )
    }

    /// Text, binary strings, ENUM and SET.
    pub fn is_string(self) -> bool {
        matches!(
            self,
            SqlType::Text { .. }
                | SqlType::Blob { .. }
                | SqlType::Binary { .. }
                | SqlType::Enum { .. }
                | SqlType::Set { .. }
        )
    }

    /// Binary strings (BLOB, BINARY, VARBINARY): any bytes, compared bytewise.
    pub fn is_binary_string(self) -> bool {
        matches!(self, SqlType::Blob { .. } | SqlType::Binary { .. })
    }

    /// DATE, DATETIME and TIMESTAMP (not TIME: see [`SqlType::is_time_or_temporal`]).
    pub fn is_temporal(self) -> bool {
        matches!(self, SqlType::Date | SqlType::DateTime { .. })
    }

    /// The temporal types and TIME.
    pub fn is_time_or_temporal(self) -> bool {
        self.is_temporal() || matches!(self, SqlType::Time { .. })
    }

    /// The most characters a value of this type has as text: a number's digits, sign
    /// and point, a date's `YYYY-MM-DD`, a string's declared length; None for the
    /// TEXT and BLOB sizes and JSON. What a string mixed with another type in a UNION
    /// or CASE is as long as (MySQL's VARCHAR of the longest branch).
    pub fn text_len_chars(self) -> Option<u32> {
        let fraction = |fsp: u8| if fsp > 0 { u32::from(fsp) + 1 } else { 0 };
        Some(match self {
            SqlType::Null => 0,
            SqlType::Int { bits } => match bits {
                8 => 4,
                16 => 6,
                32 => 11,
                _ => 20,
            },
            SqlType::UInt { bits } => match bits {
                8 => 3,
                16 => 5,
                32 => 10,
                _ => 20,
            },
            SqlType::Decimal { precision, scale } => {
                u32::from(precision) + u32::from(scale > 0) + 1
            }
            SqlType::Float => 12,
            SqlType::Double => 22,
            SqlType::Date => 10,
            SqlType::DateTime { fsp, .. } => 19 + fraction(fsp),
            SqlType::Time { fsp } => 10 + fraction(fsp),
            SqlType::Year => 4,
            SqlType::Text { len_chars, .. } => return len_chars,
            SqlType::Binary { len_bytes, .. } => len_bytes,
            SqlType::Blob { .. } | SqlType::Json => return None,
            SqlType::Enum { members, .. } => members.len_max_chars(),
            SqlType::Set { members, .. } => members.joined_len_chars(),
            SqlType::Bit { .. } => 20,
        })
    }

    /// How values of this type compare when they are strings.
    pub fn collation(self) -> Collation {
        match self {
            SqlType::Text { collation, .. }
            | SqlType::Enum { collation, .. }
            | SqlType::Set { collation, .. } => collation,
            _ => Collation::Binary,
        }
    }
}

/// The type of a value that is either of two types, one of which is a binary string
/// (CASE, IF, COALESCE, UNION, ...); None when neither is. NULL leaves the other type;
/// otherwise, mixed with a binary string, anything becomes bytes: BINARY/VARBINARY with
/// each other give the longer (BINARY only for two BINARY(n) of one n), anything else
/// a BLOB of the larger class.
pub fn binary_string_union(a: SqlType, b: SqlType) -> Option<SqlType> {
    use SqlType as T;
    Some(match (a, b) {
        (T::Null, t) | (t, T::Null) if t.is_binary_string() => t,
        (
            T::Binary {
                len_bytes: la,
                fixed: fa,
            },
            T::Binary {
                len_bytes: lb,
                fixed: fb,
            },
        ) => T::Binary {
            len_bytes: la.max(lb),
            fixed: fa && fb && la == lb,
        },
        (T::Blob { size: x }, T::Blob { size: y }) => T::Blob { size: x.max(y) },
        // At least a BLOB: a TINYBLOB's 255 bytes may not hold the other side's values.
        (T::Blob { size }, _) | (_, T::Blob { size }) => T::Blob {
            size: size.max(LobSize::Regular),
        },
        (T::Binary { .. }, _) | (_, T::Binary { .. }) => T::BLOB,
        _ => return None,
    })
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binary_and_blob_columns_keep_their_type_through_expressions() {
        for ty in [
            ColumnType::Binary { len_bytes: 16 },
            ColumnType::VarBinary { len_bytes: 8 },
            ColumnType::TinyBlob,
            ColumnType::Blob,
            ColumnType::MediumBlob,
            ColumnType::LongBlob,
        ] {
            let sql = SqlType::of_column(ty, Collation::Binary);
            assert!(sql.is_binary_string() && sql.is_string(), "{ty:?}");
            assert_eq!(sql.collation(), Collation::Binary);
            assert_eq!(sql.to_column(), (ty, Collation::Binary), "{ty:?}");
        }
    }

    #[test]
    fn a_mix_with_a_binary_string_is_bytes() {
        let binary = |len_bytes, fixed| SqlType::Binary { len_bytes, fixed };
        let tiny = SqlType::Blob {
            size: LobSize::Tiny,
        };
        let union = binary_string_union;
        assert_eq!(
            union(SqlType::Null, binary(16, true)),
            Some(binary(16, true))
        );
        assert_eq!(
            union(binary(16, true), binary(16, true)),
            Some(binary(16, true))
        );
        assert_eq!(
            union(binary(4, true), binary(8, false)),
            Some(binary(8, false))
        );
        assert_eq!(
            union(binary(4, true), binary(8, true)),
            Some(binary(8, false))
        );
        assert_eq!(union(binary(4, true), SqlType::TEXT), Some(SqlType::BLOB));
        assert_eq!(union(tiny, tiny), Some(tiny));
        assert_eq!(union(tiny, SqlType::TEXT), Some(SqlType::BLOB));
        assert_eq!(union(SqlType::TEXT, SqlType::BIGINT), None);
    }
}
