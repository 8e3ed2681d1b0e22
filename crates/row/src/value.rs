//! Values as the engine passes them around, one per column.

use crate::decimal::Decimal;
use crate::datetime::{Date, DateTime};

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
/// | CHAR, VARCHAR, TEXT, BLOB    | `Bytes`      |
///
/// Strings are UTF-8 bytes (utf8mb4); BLOBs are any bytes.
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
}
