//! Values as the engine passes them around, one per column.

use crate::datetime::{Date, DateTime, Time};
use crate::decimal::Decimal;

/// A single column value. Which variant a column holds follows from its type:
///
/// | type                         | variant      |
/// |------------------------------|--------------|
/// | signed integers              | `Int`        |
/// | unsigned integers            | `UInt`       |
/// | DECIMAL                      | `Decimal`    |
/// | FLOAT                        | `Float`      |
/// | DOUBLE                       | `Double`     |
/// | DATE                         | `Date`       |
/// | DATETIME, TIMESTAMP          | `DateTime`   |
/// | TIME                         | `Time`       |
/// | YEAR                         | `UInt`       |
/// | strings                      | `Bytes`      |
///
/// Text (CHAR, VARCHAR, the TEXT types) is UTF-8 bytes (utf8mb4); binary strings
/// (BINARY, VARBINARY, the BLOB types) are any bytes.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Null,
    Int(i64),
    UInt(u64),
    Decimal(Decimal),
    Float(f32),
    Double(f64),
    Date(Date),
    DateTime(DateTime),
    Bytes(Vec<u8>),
    /// TIME; the last variant, so that other types' variants keep their places.
    Time(Time),
}

impl Value {
    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }
}

/// The SQL text of a value: `NULL`, numbers, dates, and strings as (lossy) UTF-8.
impl std::fmt::Display for Value {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Value::Null => f.write_str("NULL"),
            Value::Int(v) => write!(f, "{v}"),
            Value::UInt(v) => write!(f, "{v}"),
            Value::Decimal(v) => write!(f, "{v}"),
            Value::Float(v) => write!(f, "{v}"),
            Value::Double(v) => write!(f, "{v}"),
            Value::Date(v) => write!(f, "{v}"),
            Value::DateTime(v) => write!(f, "{v}"),
            Value::Bytes(v) => f.write_str(&String::from_utf8_lossy(v)),
            Value::Time(v) => write!(f, "{v}"),
        }
    }
}
