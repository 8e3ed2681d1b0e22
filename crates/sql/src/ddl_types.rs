//! SQL type names to Tarn's column types (CREATE TABLE, ALTER TABLE, CAST).

use sqlparser::ast::{BinaryLength, CharacterLength, DataType, EnumMember, ExactNumberInfo};
use tarn_common::{Error, Result};
use tarn_row::limits::{
    BIT_LEN_MAX_BITS, ENUM_MEMBERS_MAX, MEMBER_LEN_MAX_CHARS, MEMBER_LIST_MAX_BYTES,
    SET_MEMBERS_MAX, VARBINARY_LEN_MAX_BYTES,
};
use tarn_row::types::{Collation, ColumnType, LobSize, Members};

use crate::scalar::cast::{CastTarget, JsonCast};

fn unsupported(what: &str) -> Error {
    Error::sql(
        1235,
        "42000",
        format!("This version of Tarn doesn't yet support '{what}'"),
    )
}

fn char_len(len: &Option<CharacterLength>, default: u32) -> Result<u32> {
    match len {
        None => Ok(default),
        Some(CharacterLength::IntegerLength { length, .. }) => u32::try_from(*length)
            .map_err(|_| Error::sql(1074, "42000", format!("Column length too big ({length})"))),
        Some(CharacterLength::Max) => Err(unsupported("VARCHAR(MAX)")),
    }
}

/// A BINARY length (bytes); bounds are checked with the definition
/// ([`ColumnType::validate`]).
fn binary_len(len: Option<u64>, default: u32) -> Result<u32> {
    match len {
        None => Ok(default),
        Some(length) => u32::try_from(length)
            .map_err(|_| Error::sql(1074, "42000", format!("Column length too big ({length})"))),
    }
}

fn varbinary_len(len: &BinaryLength) -> Result<u32> {
    match len {
        BinaryLength::IntegerLength { length } => binary_len(Some(*length), 0),
        BinaryLength::Max => Err(unsupported("VARBINARY(MAX)")),
    }
}

fn decimal(info: &ExactNumberInfo) -> Result<(u8, u8)> {
    let (precision, scale) = match *info {
        ExactNumberInfo::None => (10, 0),
        ExactNumberInfo::Precision(p) => (p, 0),
        ExactNumberInfo::PrecisionAndScale(p, s) => (p, s.max(0) as u64),
    };
    if precision > 65 {
        return Err(Error::sql(
            1426,
            "42000",
            format!("Too-big precision {precision} specified. Maximum is 65."),
        ));
    }
    if scale > 30 {
        return Err(Error::sql(
            1425,
            "42000",
            format!("Too big scale {scale} specified. Maximum is 30."),
        ));
    }
    if scale > precision {
        return Err(Error::sql(
            1427,
            "42000",
            "For float(M,D), double(M,D) or decimal(M,D), M must be >= D",
        ));
    }
    Ok((precision.max(1) as u8, scale as u8))
}

fn fsp(value: &Option<u64>) -> Result<u8> {
    match value {
        None => Ok(0),
        Some(p) if *p <= 6 => Ok(*p as u8),
        Some(p) => Err(Error::sql(
            1426,
            "42000",
            format!("Too-big precision {p} specified. Maximum is 6."),
        )),
    }
}

/// Whether a type the parser does not know is `YEAR`.
fn is_year(name: &sqlparser::ast::ObjectName) -> bool {
    name.to_string().eq_ignore_ascii_case("year")
}

/// An ENUM's or SET's member list for column `column`, with MySQL's checks and
/// errors: trailing spaces are cut from each member (as MySQL stores them); more than
/// 65535 ENUM members is 3504, more than 64 SET members 1097, a member of more than
/// 255 characters 3505, a comma in a SET member 1367. Duplicates depend on the
/// collation, which the column's options set later: [`check_duplicate_members`].
fn members(column: &str, names: Vec<String>, set: bool) -> Result<Members> {
    let names: Vec<String> = names
        .into_iter()
        .map(|n| n.trim_end_matches(' ').to_string())
        .collect();
    let too_many = |detail: &str| {
        if set {
            Error::sql(
                1097,
                "HY000",
                format!("Too many strings for column {column} and SET{detail}"),
            )
        } else {
            Error::sql(
                3504,
                "HY000",
                format!("Too many enumeration values for column {column}.{detail}"),
            )
        }
    };
    let count_max = if set {
        SET_MEMBERS_MAX
    } else {
        ENUM_MEMBERS_MAX
    };
    if names.len() > count_max {
        return Err(too_many(""));
    }
    if names
        .iter()
        .any(|n| n.chars().count() > MEMBER_LEN_MAX_CHARS)
    {
        return Err(Error::sql(
            3505,
            "HY000",
            format!("Too long enumeration/set value for column {column}."),
        ));
    }
    if set {
        if let Some(bad) = names.iter().find(|n| n.contains(',')) {
            return Err(Error::sql(
                1367,
                "22007",
                format!("Illegal set '{bad}' value found during parsing"),
            ));
        }
    }
    let bytes: usize = names.iter().map(String::len).sum();
    if bytes > MEMBER_LIST_MAX_BYTES {
        return Err(too_many(&format!(
            " (the members take {bytes} bytes; at most {MEMBER_LIST_MAX_BYTES})"
        )));
    }
    Members::intern(&names)
}

/// MySQL's 1291 for an ENUM or SET column with two members that are equal under the
/// column's collation (`'a'` and `'A'` unless it is binary).
pub fn check_duplicate_members(column: &str, ty: ColumnType, collation: Collation) -> Result<()> {
    let Some(members) = ty.members() else {
        return Ok(());
    };
    let kind = if matches!(ty, ColumnType::Set { .. }) {
        "SET"
    } else {
        "ENUM"
    };
    match members.duplicate(collation) {
        Some(name) => Err(Error::sql(
            1291,
            "HY000",
            format!("Column '{column}' has duplicated value '{name}' in {kind}"),
        )),
        None => Ok(()),
    }
}

/// BIT(n): 1 bit without a length, 1..=64 bits; 0 is 3013 and past 64 1439, as in
/// MySQL 8 (MariaDB takes BIT(0) as BIT(1)).
fn bit_len(column: &str, len: Option<u64>) -> Result<u8> {
    match len {
        None => Ok(1),
        Some(0) => Err(Error::sql(
            3013,
            "HY000",
            format!("Invalid size for column '{column}'."),
        )),
        Some(n) if n > u64::from(BIT_LEN_MAX_BITS) => Err(Error::sql(
            1439,
            "42000",
            format!("Display width out of range for column '{column}' (max = {BIT_LEN_MAX_BITS})"),
        )),
        Some(n) => Ok(n as u8),
    }
}

/// Whether a definition type is `tinyint(1)` (signed or unsigned), BOOL or BOOLEAN:
/// the one integer display width MySQL 8.0.19+ keeps and shows
/// (`TableDef::column_tinyint1`). Every other width (`tinyint(4)`, `int(11)`) is
/// dropped, as there.
pub fn is_tinyint1(ty: &DataType) -> bool {
    matches!(
        ty,
        DataType::TinyInt(Some(1))
            | DataType::TinyIntUnsigned(Some(1))
            | DataType::Bool
            | DataType::Boolean
    )
}

/// The column type (and collation, for strings) of column `column`'s definition type.
pub fn column_type(column: &str, ty: &DataType) -> Result<(ColumnType, Collation)> {
    use ColumnType as C;
    let ci = Collation::CaseInsensitive;
    let bin = Collation::Binary;
    Ok(match ty {
        DataType::TinyInt(_) | DataType::Bool | DataType::Boolean => {
            (C::TinyInt { unsigned: false }, bin)
        }
        DataType::TinyIntUnsigned(_) | DataType::UTinyInt => (C::TinyInt { unsigned: true }, bin),
        DataType::SmallInt(_) | DataType::Int2(_) => (C::SmallInt { unsigned: false }, bin),
        DataType::SmallIntUnsigned(_) | DataType::Int2Unsigned(_) | DataType::USmallInt => {
            (C::SmallInt { unsigned: true }, bin)
        }
        DataType::MediumInt(_) | DataType::Int(_) | DataType::Integer(_) | DataType::Int4(_) => {
            (C::Int { unsigned: false }, bin)
        }
        DataType::MediumIntUnsigned(_)
        | DataType::IntUnsigned(_)
        | DataType::IntegerUnsigned(_)
        | DataType::Int4Unsigned(_) => (C::Int { unsigned: true }, bin),
        DataType::BigInt(_) | DataType::Int8(_) | DataType::Int64 => {
            (C::BigInt { unsigned: false }, bin)
        }
        DataType::BigIntUnsigned(_) | DataType::Int8Unsigned(_) | DataType::UBigInt => {
            (C::BigInt { unsigned: true }, bin)
        }
        DataType::Decimal(info)
        | DataType::Numeric(info)
        | DataType::Dec(info)
        | DataType::DecimalUnsigned(info)
        | DataType::DecUnsigned(info) => {
            let (precision, scale) = decimal(info)?;
            (C::Decimal { precision, scale }, bin)
        }
        DataType::Float(info) | DataType::FloatUnsigned(info) => match info {
            ExactNumberInfo::Precision(p) if *p > 24 => (C::Double, bin),
            _ => (C::Float, bin),
        },
        DataType::Real | DataType::Float4 => (C::Float, bin),
        DataType::Double(_)
        | DataType::DoubleUnsigned(_)
        | DataType::DoublePrecision
        | DataType::DoublePrecisionUnsigned
        | DataType::Float8
        | DataType::Float64 => (C::Double, bin),
        DataType::Date => (C::Date, bin),
        DataType::Datetime(p) => (C::DateTime { fsp: fsp(p)? }, bin),
        DataType::Timestamp(p, _) => (C::Timestamp { fsp: fsp(p)? }, bin),
        DataType::Time(p, _) => (C::Time { fsp: fsp(p)? }, bin),
        DataType::Custom(name, modifiers) if is_year(name) => {
            // YEAR(4) is the same type; MySQL 8 refuses any other width.
            if !(modifiers.is_empty() || modifiers.iter().map(String::as_str).eq(["4"])) {
                return Err(Error::sql(
                    1818,
                    "HY000",
                    "Supports only YEAR or YEAR(4) column.",
                ));
            }
            (C::Year, bin)
        }
        DataType::Char(len) | DataType::Character(len) => (
            C::Char {
                len: char_len(len, 1)?,
            },
            ci,
        ),
        DataType::Varchar(len)
        | DataType::Nvarchar(len)
        | DataType::CharVarying(len)
        | DataType::CharacterVarying(len) => match len {
            None => {
                return Err(Error::sql(
                    1064,
                    "42000",
                    "You have an error in your SQL syntax: VARCHAR needs a length",
                ));
            }
            _ => (
                C::VarChar {
                    len: char_len(len, 0)?,
                },
                ci,
            ),
        },
        DataType::Binary(len) => (
            C::Binary {
                len_bytes: binary_len(*len, 1)?,
            },
            bin,
        ),
        DataType::Varbinary(len) => match len {
            None => {
                return Err(Error::sql(
                    1064,
                    "42000",
                    "You have an error in your SQL syntax: VARBINARY needs a length",
                ));
            }
            Some(len) => (
                C::VarBinary {
                    len_bytes: varbinary_len(len)?,
                },
                bin,
            ),
        },
        DataType::TinyText => (C::TinyText, ci),
        DataType::Text | DataType::String(_) => (C::Text, ci),
        DataType::MediumText => (C::MediumText, ci),
        DataType::LongText => (C::LongText, ci),
        DataType::TinyBlob => (C::TinyBlob, bin),
        // BLOB(n): the smallest class that holds n bytes, as in MySQL.
        DataType::Blob(len) => (
            C::blob_of_size(len.map_or(LobSize::Regular, LobSize::holding)),
            bin,
        ),
        DataType::MediumBlob => (C::MediumBlob, bin),
        DataType::LongBlob => (C::LongBlob, bin),
        DataType::JSON => (C::Json, bin),
        DataType::Enum(list, _) => {
            let mut names = Vec::with_capacity(list.len());
            for member in list {
                match member {
                    EnumMember::Name(name) => names.push(name.clone()),
                    EnumMember::NamedValue(..) => {
                        return Err(unsupported("ENUM members with values"));
                    }
                }
            }
            (
                C::Enum {
                    members: members(column, names, false)?,
                },
                ci,
            )
        }
        DataType::Set(names) => (
            C::Set {
                members: members(column, names.clone(), true)?,
            },
            ci,
        ),
        DataType::Bit(len) => (
            C::Bit {
                len_bits: bit_len(column, *len)?,
            },
            bin,
        ),
        other => return Err(unsupported(&format!("column type {other}"))),
    })
}

/// The target of CAST(x AS type) / CONVERT(x, type).
pub fn cast_target(ty: &DataType) -> Result<CastTarget> {
    Ok(match ty {
        DataType::Signed
        | DataType::SignedInteger
        | DataType::Int(_)
        | DataType::Integer(_)
        | DataType::BigInt(_) => CastTarget::Signed,
        DataType::Unsigned
        | DataType::UnsignedInteger
        | DataType::IntUnsigned(_)
        | DataType::BigIntUnsigned(_) => CastTarget::Unsigned,
        DataType::Decimal(info) | DataType::Numeric(info) | DataType::Dec(info) => {
            let (precision, scale) = decimal(info)?;
            CastTarget::Decimal { precision, scale }
        }
        DataType::Char(len) | DataType::Varchar(len) | DataType::Nvarchar(len) => {
            CastTarget::Char(match len {
                None => None,
                Some(_) => Some(char_len(len, 0)?),
            })
        }
        DataType::Text => CastTarget::Char(None),
        DataType::Binary(len) => CastTarget::Binary(len.map(|l| l as u32)),
        DataType::Date => CastTarget::Date,
        DataType::Datetime(p) | DataType::Timestamp(p, _) => CastTarget::DateTime(fsp(p)?),
        DataType::Time(p, _) => CastTarget::Time(fsp(p)?),
        DataType::Double(_) | DataType::DoublePrecision | DataType::Float(_) | DataType::Real => {
            CastTarget::Double
        }
        // The binder makes it `boolean` for a predicate.
        DataType::JSON => CastTarget::Json(JsonCast::Parse { boolean: false }),
        // MySQL 8.0.22's CAST(x AS YEAR); sqlparser does not know the type.
        DataType::Custom(name, modifiers) if is_year(name) && modifiers.is_empty() => {
            CastTarget::Year
        }
        other => return Err(unsupported(&format!("CAST to {other}"))),
    })
}

/// The type of CAST(x AS target).
pub fn cast_type(target: CastTarget) -> crate::types::SqlType {
    use crate::types::SqlType;
    match target {
        CastTarget::Signed => SqlType::BIGINT,
        CastTarget::Unsigned => SqlType::UInt { bits: 64 },
        CastTarget::Decimal { precision, scale } => SqlType::Decimal { precision, scale },
        CastTarget::Char(len) => SqlType::Text {
            len_chars: len,
            collation: Collation::CaseInsensitive,
            fixed: false,
        },
        // VARBINARY(n) on the wire, as MariaDB describes it; a BLOB without a length
        // or with one no VARBINARY has.
        CastTarget::Binary(Some(len_bytes)) if len_bytes <= VARBINARY_LEN_MAX_BYTES => {
            SqlType::Binary {
                len_bytes,
                fixed: false,
            }
        }
        CastTarget::Binary(_) => SqlType::BLOB,
        CastTarget::Date => SqlType::Date,
        CastTarget::DateTime(fsp) => SqlType::DateTime {
            fsp,
            timestamp: false,
        },
        CastTarget::Double => SqlType::Double,
        CastTarget::Json(JsonCast::CompareKey) => SqlType::BLOB,
        CastTarget::Json(_) => SqlType::Json,
        CastTarget::Time(fsp) => SqlType::Time { fsp },
        CastTarget::Year => SqlType::Year,
        CastTarget::Number { members, set } if set && members.len() >= 64 => {
            SqlType::UInt { bits: 64 }
        }
        CastTarget::Number { .. } => SqlType::BIGINT,
        // '-838:59:59.999999' and 'YYYY-MM-DD hh:mm:ss.ffffff' fit.
        CastTarget::Text { .. } => SqlType::varchar(26),
        // A BIT's charset is binary: VARBINARY of its bytes.
        CastTarget::BitBytes { len_bits } => SqlType::Binary {
            len_bytes: u32::from(len_bits).div_ceil(8).max(1),
            fixed: false,
        },
    }
}
