//! Column types, following MySQL's.
//!
//! A [`Column`] is what the catalog stores per column: a name, a [`ColumnType`],
//! nullability and, for strings, a [`Collation`]. The row format and the key encoding
//! both take their layout from these definitions alone.

/// How strings compare. Stored per column in the catalog.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Collation {
    /// Bytes compare as unsigned bytes (MySQL's `binary`, `utf8mb4_bin` without pad).
    Binary,
    /// Case-insensitive, PAD SPACE: `'abc' = 'ABC '` (MySQL's `utf8mb4_general_ci`).
    CaseInsensitive,
}

/// A column's type. Lengths are in characters for CHAR/VARCHAR, as in MySQL.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ColumnType {
    TinyInt { unsigned: bool },
    SmallInt { unsigned: bool },
    Int { unsigned: bool },
    BigInt { unsigned: bool },
    /// Exact decimal: `precision` 1..=65 digits, `scale` 0..=30 and <= precision.
    Decimal { precision: u8, scale: u8 },
    Float,
    Double,
    Date,
    /// `fsp`: fractional seconds digits, 0..=6.
    DateTime { fsp: u8 },
    Timestamp { fsp: u8 },
    Char { len: u32 },
    VarChar { len: u32 },
    Text,
    Blob,
}

/// One column of a table.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Column {
    pub name: String,
    pub ty: ColumnType,
    pub nullable: bool,
    /// Meaningful for CHAR, VARCHAR and TEXT; BLOB and non-strings use `Binary`.
    pub collation: Collation,
}
