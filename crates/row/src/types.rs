//! Column types, following MySQL's.
//!
//! A [`Column`] is what the catalog stores per column: a name, a [`ColumnType`],
//! nullability and, for strings, a [`Collation`]. The row format and the key encoding
//! both take their layout from these definitions alone.
//!
//! Invariant: a [`ColumnType`] that passed [`ColumnType::validate`] has a fixed width
//! ([`ColumnType::fixed_len_bytes`]) that never changes, so rows written under a
//! definition stay readable under it.
//!
//! The catalog stores these types as JSON by variant name, so a new type is a new
//! variant and an existing variant keeps its name and fields: the TEXT and BLOB size
//! classes are variants of their own (`TinyBlob`, ...) rather than a size field on
//! `Text` and `Blob`, which catalogs written before the classes existed name bare.
//!
//! ENUM and SET carry their member lists ([`Members`], interned so that the type
//! stays `Copy`; in the catalog a list is a JSON array of its members). BIT(n) is an
//! unsigned number of n bits (its values are `Value::UInt`).

use tarn_common::{Error, Result};

use crate::limits::{
    BINARY_LEN_MAX_BYTES, BIT_LEN_MAX_BITS, BLOB_LEN_MAX_BYTES, CHAR_LEN_MAX_CHARS, FSP_MAX,
    LONG_LOB_LEN_MAX_BYTES, MEDIUM_LOB_LEN_MAX_BYTES, SET_MEMBERS_MAX, TEXT_LEN_MAX_BYTES,
    TINY_LOB_LEN_MAX_BYTES, VARBINARY_LEN_MAX_BYTES, VARCHAR_LEN_MAX_CHARS,
};
pub use crate::members::Members;

/// How strings compare. Stored per column in the catalog.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Collation {
    /// Bytes compare as unsigned bytes (MySQL's `binary`, `utf8mb4_bin` without pad).
    Binary,
    /// Case-insensitive, PAD SPACE: `'abc' = 'ABC '` (MySQL's `utf8mb4_general_ci`).
    CaseInsensitive,
}

/// A column's type. Lengths are in characters for CHAR/VARCHAR and in bytes for
/// BINARY/VARBINARY, as in MySQL.
///
/// Strings come in two kinds. Text (CHAR, VARCHAR, the TEXT types) is UTF-8 that a
/// [`Collation`] applies to. Binary strings (BINARY, VARBINARY, the BLOB types) are
/// any bytes and compare bytewise, whatever the column's collation says.
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
    /// TEXT. Catalogs written before the size classes existed also used it for
    /// TINYTEXT, MEDIUMTEXT and LONGTEXT, so it holds up to [`TEXT_LEN_MAX_BYTES`].
    Text,
    /// BLOB; like `Text`, it stood in for the other classes, up to
    /// [`BLOB_LEN_MAX_BYTES`].
    Blob,
    /// BINARY(n): exactly `len_bytes` bytes, shorter values padded with `0x00`.
    Binary {
        len_bytes: u32,
    },
    /// VARBINARY(n): at most `len_bytes` bytes.
    VarBinary {
        len_bytes: u32,
    },
    TinyText,
    MediumText,
    LongText,
    TinyBlob,
    MediumBlob,
    LongBlob,
    /// JSON: a validated document, stored as UTF-8 text in MySQL's normalized form
    /// (the SQL layer parses and prints it, `tarn_sql::json`; here it is text of at
    /// most [`LONG_LOB_LEN_MAX_BYTES`]). It cannot be part of an index key.
    Json,
    /// TIME(fsp): a signed duration, `-838:59:59` to `838:59:59`; `fsp` 0..=6.
    Time {
        fsp: u8,
    },
    /// YEAR: 1901..=2155, or 0 (shown `0000`); its values are `Value::UInt`.
    Year,
    /// ENUM('a', 'b', ...): one of 1 to 65535 members, stored as its 1-based index in
    /// 1 byte (up to 255 members) or 2; 0 is MySQL's `''` error value. Values are the
    /// member's text (see [`crate::members`]); keys order by the index.
    Enum {
        members: Members,
    },
    /// SET('a', 'b', ...): any subset of up to 64 members (none contains a comma),
    /// stored as a bitmask (bit i - 1 for member i) in 1, 2, 3, 4 or 8 bytes. Values
    /// are the members' text joined by commas in declared order; keys order by the
    /// bitmask's number.
    Set {
        members: Members,
    },
    /// BIT(n): an unsigned number of `len_bits` (1..=64) bits, stored big-endian in
    /// ceil(n / 8) bytes. Values are `Value::UInt`.
    Bit {
        len_bits: u8,
    },
}

/// The size class of a TEXT or BLOB type: MySQL's TINY, plain, MEDIUM and LONG.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum LobSize {
    Tiny,
    Regular,
    Medium,
    Long,
}

impl LobSize {
    /// The most bytes MySQL's type of this class holds: what the protocol and
    /// `information_schema` announce (255, 65535, 16777215, 4294967295).
    pub fn declared_len_max_bytes(self) -> u64 {
        match self {
            LobSize::Tiny => 255,
            LobSize::Regular => 65_535,
            LobSize::Medium => 16_777_215,
            LobSize::Long => 4_294_967_295,
        }
    }

    /// The smallest class that holds `len_bytes` bytes.
    pub fn holding(len_bytes: u64) -> LobSize {
        [LobSize::Tiny, LobSize::Regular, LobSize::Medium]
            .into_iter()
            .find(|size| len_bytes <= size.declared_len_max_bytes())
            .unwrap_or(LobSize::Long)
    }
}

/// One column of a table.
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Column {
    pub name: String,
    pub ty: ColumnType,
    pub nullable: bool,
    /// Meaningful for CHAR, VARCHAR and the TEXT types; binary strings and
    /// non-strings use `Binary`.
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
            ColumnType::DateTime { fsp }
            | ColumnType::Timestamp { fsp }
            | ColumnType::Time { fsp }
                if fsp > FSP_MAX =>
            {
                fail(format!(
                    "fractional seconds precision {fsp} is above {FSP_MAX}"
                ))
            }
            ColumnType::Char { len } if len > CHAR_LEN_MAX_CHARS => {
                fail(format!("CHAR({len}) is longer than {CHAR_LEN_MAX_CHARS}"))
            }
            ColumnType::VarChar { len } if len > VARCHAR_LEN_MAX_CHARS => fail(format!(
                "VARCHAR({len}) is longer than {VARCHAR_LEN_MAX_CHARS}"
            )),
            ColumnType::Binary { len_bytes } if len_bytes > BINARY_LEN_MAX_BYTES => fail(format!(
                "BINARY({len_bytes}) is longer than {BINARY_LEN_MAX_BYTES}"
            )),
            ColumnType::VarBinary { len_bytes } if len_bytes > VARBINARY_LEN_MAX_BYTES => fail(
                format!("VARBINARY({len_bytes}) is longer than {VARBINARY_LEN_MAX_BYTES}"),
            ),
            ColumnType::Enum { members } if members.is_empty() => {
                fail("an ENUM has at least one member".into())
            }
            ColumnType::Set { members }
                if members.is_empty() || members.len() > SET_MEMBERS_MAX =>
            {
                fail(format!(
                    "a SET has 1 to {SET_MEMBERS_MAX} members, not {}",
                    members.len()
                ))
            }
            ColumnType::Set { members } if members.names().iter().any(|n| n.contains(',')) => {
                fail("a SET member contains a comma".into())
            }
            ColumnType::Bit { len_bits } if len_bits == 0 || len_bits > BIT_LEN_MAX_BITS => {
                fail(format!("BIT({len_bits}) is outside 1..={BIT_LEN_MAX_BITS}"))
            }
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
            ColumnType::Time { .. } => 8,
            ColumnType::Year => 2,
            ColumnType::Enum { members } => members.enum_width_bytes(),
            ColumnType::Set { members } => members.set_width_bytes(),
            ColumnType::Bit { len_bits } => usize::from(len_bits).div_ceil(8).max(1),
            // BINARY(n) has a fixed width too, but is stored like CHAR (whose width
            // in bytes varies): one variable-length path for every string.
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
            | ColumnType::Json => return None,
        })
    }

    /// The strings: CHAR, VARCHAR, BINARY, VARBINARY and the TEXT and BLOB types, and
    /// JSON.
    pub fn is_variable_len(&self) -> bool {
        self.fixed_len_bytes().is_none()
    }

    /// CHAR, VARCHAR and the TEXT types: UTF-8 text that a collation applies to.
    pub fn is_text(&self) -> bool {
        matches!(
            self,
            ColumnType::Char { .. } | ColumnType::VarChar { .. } | ColumnType::Text
        ) || self.text_size().is_some()
    }

    /// The types a collation applies to: the text types, ENUM and SET.
    pub fn has_collation(&self) -> bool {
        self.is_text() || self.members().is_some()
    }

    /// The member list of an ENUM or SET; None for other types.
    pub fn members(&self) -> Option<Members> {
        match *self {
            ColumnType::Enum { members } | ColumnType::Set { members } => Some(members),
            _ => None,
        }
    }

    /// True when rows and keys written for a column of type `old` read as the same
    /// values under this type: the same type, or an ENUM or SET that only appends
    /// members to `old`'s and keeps its width (MySQL's in-place ALTER of such a column).
    pub fn stores_like(&self, old: &ColumnType) -> bool {
        let appended = |new: Members, old: Members| {
            new.len() >= old.len() && new.names()[..old.len()] == *old.names()
        };
        match (*self, *old) {
            (ColumnType::Enum { members: new }, ColumnType::Enum { members: was })
            | (ColumnType::Set { members: new }, ColumnType::Set { members: was }) => {
                appended(new, was) && self.fixed_len_bytes() == old.fixed_len_bytes()
            }
            _ => self == old,
        }
    }

    /// BINARY, VARBINARY and the BLOB types: any bytes, compared bytewise.
    pub fn is_binary_string(&self) -> bool {
        matches!(
            self,
            ColumnType::Binary { .. } | ColumnType::VarBinary { .. }
        ) || self.blob_size().is_some()
    }

    /// The size class of a TEXT type; None for other types.
    pub fn text_size(&self) -> Option<LobSize> {
        Some(match self {
            ColumnType::TinyText => LobSize::Tiny,
            ColumnType::Text => LobSize::Regular,
            ColumnType::MediumText => LobSize::Medium,
            ColumnType::LongText => LobSize::Long,
            _ => return None,
        })
    }

    /// The size class of a BLOB type; None for other types.
    pub fn blob_size(&self) -> Option<LobSize> {
        Some(match self {
            ColumnType::TinyBlob => LobSize::Tiny,
            ColumnType::Blob => LobSize::Regular,
            ColumnType::MediumBlob => LobSize::Medium,
            ColumnType::LongBlob => LobSize::Long,
            _ => return None,
        })
    }

    /// The TEXT type of a size class.
    pub fn text_of_size(size: LobSize) -> ColumnType {
        match size {
            LobSize::Tiny => ColumnType::TinyText,
            LobSize::Regular => ColumnType::Text,
            LobSize::Medium => ColumnType::MediumText,
            LobSize::Long => ColumnType::LongText,
        }
    }

    /// The BLOB type of a size class.
    pub fn blob_of_size(size: LobSize) -> ColumnType {
        match size {
            LobSize::Tiny => ColumnType::TinyBlob,
            LobSize::Regular => ColumnType::Blob,
            LobSize::Medium => ColumnType::MediumBlob,
            LobSize::Long => ColumnType::LongBlob,
        }
    }

    /// The most bytes a value of a TEXT or BLOB type holds here: MySQL's bound for
    /// the TINY and MEDIUM classes, Tarn's value bound for LONG, and for plain TEXT
    /// and BLOB the value bound too (they stood in for the larger classes, see
    /// [`ColumnType::Text`]). None for other types.
    pub fn lob_len_max_bytes(&self) -> Option<u64> {
        let size = self.text_size().or(self.blob_size())?;
        Some(match (size, self.is_text()) {
            (LobSize::Tiny, _) => TINY_LOB_LEN_MAX_BYTES,
            (LobSize::Regular, true) => TEXT_LEN_MAX_BYTES,
            (LobSize::Regular, false) => BLOB_LEN_MAX_BYTES,
            (LobSize::Medium, _) => MEDIUM_LOB_LEN_MAX_BYTES,
            (LobSize::Long, _) => LONG_LOB_LEN_MAX_BYTES,
        })
    }

    /// The TEXT and BLOB types, which an index cannot cover without a prefix length.
    pub fn is_lob(&self) -> bool {
        self.text_size().is_some() || self.blob_size().is_some()
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
