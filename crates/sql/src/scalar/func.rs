//! Scalar built-in functions, by case-insensitive name.
//!
//! [`return_type`] types a call for the binder (unknown name: error 1305; wrong
//! number of arguments: 1582); [`call`] evaluates it. The binder may pass constant
//! arguments to [`return_type_with_constants`] so that `ROUND(x, 2)` on a DECIMAL gets
//! scale 2 and `STR_TO_DATE(s, '%Y-%m-%d')` is a DATE, as MySQL types them. The bodies
//! of the longer functions live beside this module: [`super::strings`],
//! [`super::math`], [`super::regexp`], [`super::uuid`] and [`super::date`]. A few
//! calls never reach here: the binder turns `RAND` into [`crate::expr::Expr::Rand`]
//! (it keeps a sequence per call site), `TIMESTAMPADD` into a date addition, and
//! `COLLATION`, `CHARSET` and `COERCIBILITY` into constants of the argument's type.
//!
//! NULL handling: most functions return NULL when any argument is NULL. The
//! exceptions are `IF`, `IFNULL`, `COALESCE`, `NULLIF`, `CONCAT_WS` (NULL only for a
//! NULL separator; NULL values are skipped), `ISNULL`, `FIELD` and `ELT`, `CHAR` and
//! `MAKE_SET` (skip NULLs), `QUOTE` (the word NULL), `UUID_TO_BIN`/`BIN_TO_UUID` (a
//! NULL swap flag is false) and the `REGEXP_` functions (which check their other
//! arguments before answering NULL, as MySQL). NULL is also returned where MySQL
//! returns NULL with a warning (warnings come later): `SQRT(-1)`, `LN(0)`, `ASIN(2)`,
//! an invalid date, a string result longer than [`SQL_STRING_RESULT_BYTES_MAX`],
//! `LPAD(s, n, '')`.
//!
//! Functions that pick one of their arguments (`IF`, `IFNULL`, `COALESCE`, `NULLIF`,
//! `GREATEST`, `LEAST`, `ELT`) return it as it is: the executor converts the result to
//! the call's [`return_type`] with [`super::cast::coerce`].
//!
//! `IF`, `IFNULL` and `COALESCE` evaluated here are eager (all arguments evaluated);
//! the executor may evaluate them lazily instead. String searches and comparisons
//! (`INSTR`, `LOCATE`, `FIELD`, `STRCMP`, `FIND_IN_SET`, the `REGEXP_` functions) use
//! the collation [`call_with_collation`] is given: the binder passes the arguments'
//! (binary when a string argument is binary); [`call`] is case-insensitive.
//! `NOW()` and the other clock functions answer in the session's `time_zone`
//! ([`FnContext::now`]), the `UTC_` ones in UTC; `UNIX_TIMESTAMP(x)` reads `x` and
//! `FROM_UNIXTIME` answers in the session's zone, and `CONVERT_TZ` converts between
//! any two zones ([`super::tz`]).
//!
//! `UUID()` and `UUID_SHORT()` are volatile ([`is_volatile`]): each row gets a new
//! value, so the planner never uses one as an index key.
//!
//! The JSON functions are [`super::json`]'s: [`call_with_collation`] hands them over
//! (the binder types them, `crate::bind`).
//!
//! `SLEEP` and the user-level lock functions (`GET_LOCK`, `RELEASE_LOCK`, ...) are
//! [`crate::user_locks`]'s; they act on the session ([`FnContext::session`]), so
//! they are volatile and run on the statement's thread, row after row.
//!
//! `LAST_INSERT_ID(expr)` returns `expr` as a BIGINT UNSIGNED and records it for the
//! session ([`take_last_insert_id_set`]); `LAST_INSERT_ID()` is the binder's.
//!
//! `TRIM(LEADING|TRAILING|BOTH x FROM s)` arrives as `TRIM_LEADING(s, x)`,
//! `TRIM_TRAILING(s, x)` or `TRIM_BOTH(s, x)` (string first); [`trim`] is public. The
//! bit operators `& | ^ << >> ~` arrive as functions of those names.

use std::cell::Cell;
use std::cmp::Ordering;

use tarn_common::limits::SQL_STRING_RESULT_BYTES_MAX;
use tarn_common::{Error, Result};
use tarn_row::datetime::{Date, DateTime};
use tarn_row::decimal::Decimal;
use tarn_row::types::Collation;
use tarn_row::value::Value;

use super::arith::{self, ArithOp};
use super::cast::{self, char_boundary_after, char_count, to_datetime, to_f64, to_i64, to_text};
use super::compare::{compare, comparison_type};
use super::date::{self, IntervalUnit};
use super::decimal::{self as dec, RoundMode};
use super::tz::TimeZone;
use super::{FnContext, out_of_range};
use super::{like, math, regexp, strings, time, uuid};
use crate::types::SqlType;

const MANY: usize = usize::MAX;

thread_local! {
    /// The value the last `LAST_INSERT_ID(expr)` evaluated on this thread set.
    static LAST_INSERT_ID_SET: Cell<Option<u64>> = const { Cell::new(None) };
}

/// What `LAST_INSERT_ID(expr)` set since the last call, if it ran: the session
/// resets this when a statement starts and makes it its last insert id when the
/// statement ends (a function reaches only the session's shared parts,
/// [`FnContext::session`], not its `&mut` state).
pub fn take_last_insert_id_set() -> Option<u64> {
    LAST_INSERT_ID_SET.with(Cell::take)
}

/// (fewest, most) arguments of a function, by its uppercase name.
fn arity(name: &str) -> Option<(usize, usize)> {
    Some(match name {
        "PI" | "CURDATE" | "CURRENT_DATE" | "UTC_DATE" | "UUID" | "UUID_SHORT"
        | "RELEASE_ALL_LOCKS" => (0, 0),
        "NOW" | "CURRENT_TIMESTAMP" | "SYSDATE" | "LOCALTIME" | "LOCALTIMESTAMP" | "CURTIME"
        | "CURRENT_TIME" | "UTC_TIMESTAMP" | "UTC_TIME" | "UNIX_TIMESTAMP" => (0, 1),
        "LENGTH" | "OCTET_LENGTH" | "CHAR_LENGTH" | "CHARACTER_LENGTH" | "UPPER" | "UCASE"
        | "LOWER" | "LCASE" | "LTRIM" | "RTRIM" | "REVERSE" | "ABS" | "FLOOR" | "CEIL"
        | "CEILING" | "SQRT" | "EXP" | "LN" | "LOG10" | "LOG2" | "SIGN" | "DATE" | "YEAR"
        | "MONTH" | "DAY" | "DAYOFMONTH" | "DAYOFWEEK" | "DAYOFYEAR" | "WEEKDAY" | "HOUR"
        | "MINUTE" | "SECOND" | "MICROSECOND" | "QUARTER" | "LAST_DAY" | "MONTHNAME"
        | "DAYNAME" | "TO_DAYS" | "FROM_DAYS" | "HEX" | "UNHEX" | "ASCII" | "ORD" | "ISNULL"
        | "SPACE" | "LAST_INSERT_ID" | "SHA1" | "SHA" | "MD5" | "TO_BASE64" | "FROM_BASE64"
        | "QUOTE" | "SOUNDEX" | "CRC32" | "BIN" | "OCT" | "IS_UUID" | "SIN" | "COS" | "TAN"
        | "COT" | "ASIN" | "ACOS" | "DEGREES" | "RADIANS" | "~" | "BIT_COUNT" | "BIT_LENGTH"
        | "INET_ATON" | "INET_NTOA" | "WEEKOFYEAR" | "TO_SECONDS" | "TIME" | "TIME_TO_SEC"
        | "SEC_TO_TIME" | "SLEEP" | "RELEASE_LOCK" | "IS_FREE_LOCK" | "IS_USED_LOCK" => (1, 1),
        "TRIM" | "ROUND" | "LOG" | "WEEK" | "YEARWEEK" | "FROM_UNIXTIME" | "ATAN"
        | "UUID_TO_BIN" | "BIN_TO_UUID" => (1, 2),
        "IFNULL" | "NULLIF" | "LEFT" | "RIGHT" | "REPEAT" | "INSTR" | "POSITION" | "TRUNCATE"
        | "MOD" | "POWER" | "POW" | "DATEDIFF" | "DATE_FORMAT" | "STR_TO_DATE" | "TRIM_LEADING"
        | "TRIM_TRAILING" | "TRIM_BOTH" | "STRCMP" | "FIND_IN_SET" | "SHA2" | "ATAN2" | "&"
        | "|" | "^" | "<<" | ">>" | "TIMEDIFF" | "ADDTIME" | "SUBTIME" | "TIME_FORMAT"
        | "GET_LOCK" => (2, 2),
        "SUBSTRING" | "SUBSTR" | "MID" | "LOCATE" | "FORMAT" | "ADDDATE" | "SUBDATE"
        | "DATE_ADD" | "DATE_SUB" | "REGEXP_LIKE" => (2, 3),
        "REGEXP_SUBSTR" => (2, 5),
        "REGEXP_INSTR" => (2, 6),
        "IF" | "REPLACE" | "LPAD" | "RPAD" | "TIMESTAMPDIFF" | "SUBSTRING_INDEX" | "CONV"
        | "CONVERT_TZ" | "MAKETIME" => (3, 3),
        "EXPORT_SET" => (3, 5),
        "REGEXP_REPLACE" => (3, 6),
        "INSERT" => (4, 4),
        "COALESCE" | "CONCAT" | "CHAR" => (1, MANY),
        "CONCAT_WS" | "GREATEST" | "LEAST" | "FIELD" | "ELT" | "MAKE_SET" => (2, MANY),
        _ => return None,
    })
}

/// Functions whose value differs between calls with the same arguments (each row
/// gets its own), or that act on the session (SLEEP, the user-level locks): never
/// folded into a constant or used as an index key.
pub fn is_volatile(name: &str) -> bool {
    matches!(name, "UUID" | "UUID_SHORT") || crate::user_locks::is_function(name)
}

/// Whether `upper` reads its argument at `position` (from 0) as a string, so that a
/// DATETIME or TIME argument there is its type's text and a BIT its bytes
/// (`crate::bind::as_text`). Functions that pick an argument (IF, COALESCE, ...) or
/// read dates are not among them, nor are the arguments read as numbers (lengths,
/// positions, counts: `LEFT(s, n)`'s `n`).
pub fn reads_argument_as_text(upper: &str, position: usize) -> bool {
    match upper {
        "CONCAT" | "CONCAT_WS" | "TRIM" | "TRIM_LEADING" | "TRIM_TRAILING" | "TRIM_BOTH"
        | "REPLACE" | "INSTR" | "STRCMP" | "FIND_IN_SET" | "REGEXP_LIKE" => true,
        "LENGTH" | "OCTET_LENGTH" | "CHAR_LENGTH" | "CHARACTER_LENGTH" | "BIT_LENGTH" | "UPPER"
        | "UCASE" | "LOWER" | "LCASE" | "LTRIM" | "RTRIM" | "REVERSE" | "LEFT" | "RIGHT"
        | "SUBSTRING" | "SUBSTR" | "MID" | "REPEAT" | "HEX" | "MD5" | "SHA1" | "SHA" | "SHA2"
        | "CRC32" | "TO_BASE64" | "QUOTE" | "SOUNDEX" | "ASCII" | "ORD" => position == 0,
        "SUBSTRING_INDEX" | "LOCATE" | "POSITION" => position < 2,
        "LPAD" | "RPAD" => position != 1,
        "INSERT" => matches!(position, 0 | 3),
        "REGEXP_INSTR" => matches!(position, 0 | 1 | 5),
        "REGEXP_SUBSTR" => matches!(position, 0 | 1 | 4),
        "REGEXP_REPLACE" => matches!(position, 0 | 1 | 2 | 5),
        _ => false,
    }
}

/// Whether `name` is a scalar function this module knows (the JSON functions
/// included).
pub fn is_function(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    arity(&upper).is_some() || super::json::is_function(&upper)
}

fn check_arity(name: &str, upper: &str, count: usize) -> Result<()> {
    let Some((min, max)) = arity(upper) else {
        return Err(Error::sql(
            1305,
            "42000",
            format!("FUNCTION {name} does not exist"),
        ));
    };
    if count < min || count > max {
        return Err(Error::sql(
            1582,
            "42000",
            format!("Incorrect parameter count in the call to native function '{name}'"),
        ));
    }
    Ok(())
}

// --- Types ----------------------------------------------------------------------------------

/// The type of a value that may come from either of two expressions (IF, COALESCE,
/// GREATEST, ...): numbers widen (integers to DECIMAL to DOUBLE), dates to DATETIME,
/// and anything mixed with a string, or a date with a number, is a string.
pub fn union_type(a: SqlType, b: SqlType) -> SqlType {
    use SqlType::*;
    if let Some(t) = crate::types::binary_string_union(a, b) {
        return t;
    }
    match (a, b) {
        (Null, t) | (t, Null) => t,
        (Json, Json) => Json,
        (Json, _) | (_, Json) => SqlType::TEXT,
        (Year, Year) => Year,
        (Year, _) | (_, Year) => union_type(a.numeric_form(), b.numeric_form()),
        (Time { fsp: x }, Time { fsp: y }) => Time { fsp: x.max(y) },
        (
            Text {
                len_chars: la,
                collation,
                fixed: fa,
            },
            Text {
                len_chars: lb,
                fixed: fb,
                ..
            },
        ) => Text {
            len_chars: la.zip(lb).map(|(x, y)| x.max(y)),
            collation,
            fixed: fa && fb,
        },
        (Text { collation, .. }, _) | (_, Text { collation, .. }) => Text {
            len_chars: None,
            collation,
            fixed: false,
        },
        (Float, Float) => Float,
        _ if a.is_time_or_temporal() && b.is_time_or_temporal() => comparison_type(a, b),
        _ if a.is_time_or_temporal() || b.is_time_or_temporal() => SqlType::varchar(26),
        (Int { bits: x }, Int { bits: y }) => Int { bits: x.max(y) },
        (UInt { bits: x }, UInt { bits: y }) => UInt { bits: x.max(y) },
        _ => comparison_type(a, b),
    }
}

fn text_type(args: &[SqlType]) -> SqlType {
    let collation = args
        .iter()
        .find_map(|t| match t {
            SqlType::Text { collation, .. } => Some(*collation),
            _ => None,
        })
        .unwrap_or(Collation::CaseInsensitive);
    SqlType::Text {
        len_chars: None,
        collation,
        fixed: false,
    }
}

/// The type of ROUND/TRUNCATE of `arg` to `digits` places (None: not a constant).
fn rounded_type(arg: SqlType, digits: Option<i64>) -> SqlType {
    match arg {
        SqlType::Int { .. } | SqlType::Null => SqlType::BIGINT,
        SqlType::UInt { .. } => SqlType::UInt { bits: 64 },
        SqlType::Decimal { precision, scale } => {
            let new_scale = digits.map_or(scale, |d| d.clamp(0, 30) as u8);
            let integer = precision - scale;
            SqlType::Decimal {
                precision: (integer + new_scale + 1).clamp(1, 65),
                scale: new_scale,
            }
        }
        _ => SqlType::Double,
    }
}

/// [`return_type_with_constants`] without constants.
pub fn return_type(name: &str, args: &[SqlType]) -> Result<SqlType> {
    return_type_with_constants(name, args, &[])
}

/// The result type of `name(args)`; `constants[i]` is the value of argument `i` when
/// it is a constant (missing entries: not constant). Errors: 1305 for an unknown
/// function, 1582 for a wrong number of arguments.
pub fn return_type_with_constants(
    name: &str,
    args: &[SqlType],
    constants: &[Option<Value>],
) -> Result<SqlType> {
    let upper = name.to_ascii_uppercase();
    check_arity(name, &upper, args.len())?;
    let constant = |i: usize| constants.get(i).and_then(Option::as_ref);
    let const_int = |i: usize| constant(i).and_then(to_i64);
    let arg = |i: usize| args.get(i).copied().unwrap_or(SqlType::Null);
    let fsp = |i: usize| const_int(i).map_or(0, |f| f.clamp(0, 6) as u8);
    Ok(match upper.as_str() {
        "IF" => union_type(arg(1), arg(2)),
        "IFNULL" => union_type(arg(0), arg(1)),
        "NULLIF" => arg(0),
        "COALESCE" | "GREATEST" | "LEAST" => args.iter().copied().fold(SqlType::Null, union_type),
        "ELT" => text_type(&args[1..]),
        "CONCAT" | "CONCAT_WS" | "SUBSTRING" | "SUBSTR" | "MID" | "UPPER" | "UCASE" | "LOWER"
        | "LCASE" | "TRIM" | "LTRIM" | "RTRIM" | "TRIM_LEADING" | "TRIM_TRAILING" | "TRIM_BOTH"
        | "REPLACE" | "LEFT" | "RIGHT" | "REPEAT" | "REVERSE" | "LPAD" | "RPAD" | "SPACE" => {
            if args.iter().any(|t| t.is_binary_string()) {
                SqlType::BLOB
            } else {
                text_type(args)
            }
        }
        "SUBSTRING_INDEX" | "QUOTE" | "SOUNDEX" | "REGEXP_SUBSTR" | "REGEXP_REPLACE" => {
            if arg(0).is_binary_string() {
                SqlType::BLOB
            } else {
                text_type(args)
            }
        }
        "INSERT" => {
            if arg(0).is_binary_string() || arg(3).is_binary_string() {
                SqlType::BLOB
            } else {
                text_type(args)
            }
        }
        "MAKE_SET" => text_type(&args[1..]),
        "EXPORT_SET" => text_type(&args[1..]),
        "HEX" | "FORMAT" | "DATE_FORMAT" | "TO_BASE64" => SqlType::TEXT,
        "BIN" | "OCT" | "CONV" => SqlType::varchar(64),
        "UUID" | "BIN_TO_UUID" => SqlType::varchar(36),
        "MD5" => SqlType::varchar(32),
        "SHA1" | "SHA" => SqlType::varchar(40),
        "SHA2" => SqlType::varchar(128),
        "UNHEX" | "CHAR" | "FROM_BASE64" | "UUID_TO_BIN" => SqlType::BLOB,
        "UUID_SHORT" | "&" | "|" | "^" | "<<" | ">>" | "~" => SqlType::UInt { bits: 64 },
        "CRC32" => SqlType::UInt { bits: 32 },
        "CONVERT_TZ" => SqlType::DateTime {
            fsp: match arg(0) {
                SqlType::DateTime { fsp, .. } => fsp,
                SqlType::Date | SqlType::Int { .. } | SqlType::UInt { .. } => 0,
                SqlType::Decimal { scale, .. } => scale.min(6),
                _ => match constant(0) {
                    Some(Value::Bytes(b)) => date::string_fsp(b),
                    _ => 6,
                },
            },
            timestamp: false,
        },
        "MONTHNAME" | "DAYNAME" => SqlType::varchar(9),
        "CURTIME" | "CURRENT_TIME" | "UTC_TIME" => SqlType::Time { fsp: fsp(0) },
        "TIME" => SqlType::Time {
            fsp: time::time_precision(arg(0), constant(0)),
        },
        "TIMEDIFF" => SqlType::Time {
            fsp: time::time_precision(arg(0), constant(0))
                .max(time::time_precision(arg(1), constant(1))),
        },
        "ADDTIME" | "SUBTIME" => time::add_time_type(
            arg(0),
            time::time_precision(arg(0), constant(0))
                .max(time::time_precision(arg(1), constant(1))),
        ),
        "SEC_TO_TIME" => SqlType::Time {
            fsp: seconds_fsp(arg(0)),
        },
        "MAKETIME" => SqlType::Time {
            fsp: seconds_fsp(arg(2)),
        },
        "TIME_FORMAT" => SqlType::TEXT,
        "TIME_TO_SEC" => SqlType::BIGINT,
        "LENGTH" | "OCTET_LENGTH" | "CHAR_LENGTH" | "CHARACTER_LENGTH" | "INSTR" | "LOCATE"
        | "POSITION" | "ASCII" | "ORD" | "FIELD" | "ISNULL" | "STRCMP" | "SIGN" | "YEAR"
        | "MONTH" | "DAY" | "DAYOFMONTH" | "DAYOFWEEK" | "DAYOFYEAR" | "WEEKDAY" | "HOUR"
        | "MINUTE" | "SECOND" | "MICROSECOND" | "QUARTER" | "WEEK" | "YEARWEEK" | "TO_DAYS"
        | "DATEDIFF" | "TIMESTAMPDIFF" | "FIND_IN_SET" | "IS_UUID" | "REGEXP_LIKE"
        | "REGEXP_INSTR" | "BIT_COUNT" | "BIT_LENGTH" | "WEEKOFYEAR" | "TO_SECONDS" => {
            SqlType::BIGINT
        }
        "SLEEP" | "GET_LOCK" | "RELEASE_LOCK" | "IS_FREE_LOCK" | "RELEASE_ALL_LOCKS" => {
            SqlType::BIGINT
        }
        "INET_ATON" | "IS_USED_LOCK" => SqlType::UInt { bits: 64 },
        "INET_NTOA" => SqlType::varchar(15),
        "UNIX_TIMESTAMP" => match arg(0) {
            SqlType::DateTime { fsp, .. } if fsp > 0 => SqlType::Decimal {
                precision: 12 + fsp,
                scale: fsp,
            },
            _ => SqlType::BIGINT,
        },
        "LAST_INSERT_ID" => SqlType::UInt { bits: 64 },
        "ABS" => match arg(0) {
            SqlType::Int { .. } | SqlType::Null => SqlType::BIGINT,
            SqlType::UInt { .. } => SqlType::UInt { bits: 64 },
            d @ SqlType::Decimal { .. } => d,
            _ => SqlType::Double,
        },
        "ROUND" => rounded_type(
            arg(0),
            if args.len() == 1 {
                Some(0)
            } else {
                const_int(1)
            },
        ),
        "TRUNCATE" => rounded_type(arg(0), const_int(1)),
        "FLOOR" | "CEIL" | "CEILING" => match arg(0) {
            SqlType::Int { .. } | SqlType::Null => SqlType::BIGINT,
            SqlType::UInt { .. } => SqlType::UInt { bits: 64 },
            SqlType::Decimal { precision, scale } if precision - scale < 18 => SqlType::BIGINT,
            SqlType::Decimal { precision, scale } => SqlType::Decimal {
                precision: (precision - scale + 1).min(65),
                scale: 0,
            },
            _ => SqlType::Double,
        },
        "MOD" => arith::result_type(ArithOp::Mod, arg(0), arg(1)),
        "POWER" | "POW" | "SQRT" | "EXP" | "LN" | "LOG" | "LOG10" | "LOG2" | "PI" | "SIN"
        | "COS" | "TAN" | "COT" | "ASIN" | "ACOS" | "ATAN" | "ATAN2" | "DEGREES" | "RADIANS" => {
            SqlType::Double
        }
        "NOW" | "CURRENT_TIMESTAMP" | "SYSDATE" | "LOCALTIME" | "LOCALTIMESTAMP"
        | "UTC_TIMESTAMP" => SqlType::DateTime {
            fsp: fsp(0),
            timestamp: false,
        },
        "CURDATE" | "CURRENT_DATE" | "UTC_DATE" | "DATE" | "LAST_DAY" | "FROM_DAYS" => {
            SqlType::Date
        }
        "STR_TO_DATE" => match constant(1).and_then(to_text) {
            Some(format) if !date::format_has_time(&format) => SqlType::Date,
            Some(format) => SqlType::DateTime {
                fsp: if format.windows(2).any(|w| w == b"%f") {
                    6
                } else {
                    0
                },
                timestamp: false,
            },
            None => SqlType::DateTime {
                fsp: 6,
                timestamp: false,
            },
        },
        "FROM_UNIXTIME" if args.len() == 2 => SqlType::TEXT,
        "FROM_UNIXTIME" => SqlType::DateTime {
            fsp: match arg(0) {
                SqlType::Int { .. } | SqlType::UInt { .. } => 0,
                SqlType::Decimal { scale, .. } => scale.min(6),
                _ => 6,
            },
            timestamp: false,
        },
        "ADDDATE" | "SUBDATE" | "DATE_ADD" | "DATE_SUB" => {
            let unit = if args.len() == 3 {
                constant(2)
                    .and_then(to_text)
                    .and_then(|u| date::parse_unit(&String::from_utf8_lossy(&u)))
                    .unwrap_or(IntervalUnit::Day)
            } else {
                IntervalUnit::Day
            };
            date::add_interval_type(arg(0), unit)
        }
        _ => SqlType::TEXT,
    })
}

// --- Evaluation -----------------------------------------------------------------------------

/// Functions that return their own answer for NULL arguments (all others return NULL
/// when any argument is NULL).
fn handles_nulls(upper: &str) -> bool {
    matches!(
        upper,
        "IF" | "IFNULL"
            | "COALESCE"
            | "NULLIF"
            | "CONCAT_WS"
            | "ISNULL"
            | "FIELD"
            | "ELT"
            | "CHAR"
            | "QUOTE"
            | "MAKE_SET"
            | "UUID_TO_BIN"
            | "BIN_TO_UUID"
            | "REGEXP_LIKE"
            | "REGEXP_INSTR"
            | "REGEXP_SUBSTR"
            | "REGEXP_REPLACE"
    ) || crate::user_locks::is_function(upper)
}

/// `name(args)` with the case-insensitive collation for string searches.
pub fn call(name: &str, args: &[Value], ctx: &FnContext) -> Result<Value> {
    call_with_collation(name, args, ctx, Collation::CaseInsensitive)
}

/// `name(args)`; `collation` applies to string comparisons and searches.
pub fn call_with_collation(
    name: &str,
    args: &[Value],
    ctx: &FnContext,
    collation: Collation,
) -> Result<Value> {
    let upper = name.to_ascii_uppercase();
    if super::json::is_function(&upper) {
        return super::json::call(&upper, args, collation);
    }
    check_arity(name, &upper, args.len())?;
    if !handles_nulls(&upper) && args.iter().any(Value::is_null) {
        return Ok(Value::Null);
    }
    let text = |i: usize| to_text(&args[i]).unwrap_or_default();
    let int = |i: usize| to_i64(&args[i]).unwrap_or(0);
    if crate::user_locks::is_function(&upper) {
        return crate::user_locks::call(&upper, args, ctx.session.as_deref());
    }
    match upper.as_str() {
        "LAST_INSERT_ID" => {
            let id = int(0) as u64;
            LAST_INSERT_ID_SET.with(|c| c.set(Some(id)));
            Ok(Value::UInt(id))
        }
        // Control flow.
        "IF" => Ok(if cast::to_bool(&args[0]) == Some(true) {
            args[1].clone()
        } else {
            args[2].clone()
        }),
        "IFNULL" => Ok(if args[0].is_null() {
            args[1].clone()
        } else {
            args[0].clone()
        }),
        "COALESCE" => Ok(args
            .iter()
            .find(|v| !v.is_null())
            .cloned()
            .unwrap_or(Value::Null)),
        "NULLIF" => Ok(
            if compare(&args[0], &args[1], collation) == Some(Ordering::Equal) {
                Value::Null
            } else {
                args[0].clone()
            },
        ),
        "ISNULL" => Ok(Value::Int(i64::from(args[0].is_null()))),
        "GREATEST" | "LEAST" => Ok(extreme(args, upper == "GREATEST", collation)),

        // Strings.
        "CONCAT" => Ok(string_result(
            args.iter()
                .flat_map(|v| to_text(v).unwrap_or_default())
                .collect(),
        )),
        "CONCAT_WS" => {
            let Some(separator) = to_text(&args[0]) else {
                return Ok(Value::Null);
            };
            let parts: Vec<Vec<u8>> = args[1..].iter().filter_map(to_text).collect();
            Ok(string_result(parts.join(separator.as_slice())))
        }
        "LENGTH" | "OCTET_LENGTH" => Ok(Value::Int(text(0).len() as i64)),
        "CHAR_LENGTH" | "CHARACTER_LENGTH" => Ok(Value::Int(char_count(&text(0)) as i64)),
        "UPPER" | "UCASE" => Ok(Value::Bytes(change_case(&text(0), true))),
        "LOWER" | "LCASE" => Ok(Value::Bytes(change_case(&text(0), false))),
        "SUBSTRING" | "SUBSTR" | "MID" => {
            let len = (args.len() == 3).then(|| int(2));
            Ok(Value::Bytes(substring(&text(0), int(1), len)))
        }
        "LEFT" => {
            let s = text(0);
            let cut = char_boundary_after(&s, int(1).max(0) as usize);
            Ok(Value::Bytes(s[..cut].to_vec()))
        }
        "RIGHT" => {
            let s = text(0);
            let n = int(1).max(0) as usize;
            let total = char_count(&s);
            let skip = char_boundary_after(&s, total.saturating_sub(n));
            Ok(Value::Bytes(s[skip..].to_vec()))
        }
        "TRIM" => {
            let remove = if args.len() == 2 {
                text(1)
            } else {
                b" ".to_vec()
            };
            Ok(Value::Bytes(trim(&text(0), &remove, TrimWhere::Both)))
        }
        "LTRIM" => Ok(Value::Bytes(trim(&text(0), b" ", TrimWhere::Leading))),
        "RTRIM" => Ok(Value::Bytes(trim(&text(0), b" ", TrimWhere::Trailing))),
        "TRIM_LEADING" => Ok(Value::Bytes(trim(&text(0), &text(1), TrimWhere::Leading))),
        "TRIM_TRAILING" => Ok(Value::Bytes(trim(&text(0), &text(1), TrimWhere::Trailing))),
        "TRIM_BOTH" => Ok(Value::Bytes(trim(&text(0), &text(1), TrimWhere::Both))),
        "REPLACE" => Ok(replace(&text(0), &text(1), &text(2))),
        "REPEAT" => {
            let (s, n) = (text(0), int(1).max(0) as usize);
            match s.len().checked_mul(n) {
                Some(total) if total <= SQL_STRING_RESULT_BYTES_MAX => {
                    Ok(Value::Bytes(s.repeat(n)))
                }
                _ => Ok(Value::Null),
            }
        }
        "SPACE" => {
            let n = int(0).max(0) as usize;
            Ok(if n <= SQL_STRING_RESULT_BYTES_MAX {
                Value::Bytes(vec![b' '; n])
            } else {
                Value::Null
            })
        }
        "REVERSE" => Ok(Value::Bytes(reverse(&text(0)))),
        "LPAD" | "RPAD" => Ok(pad(&text(0), int(1), &text(2), upper == "LPAD")),
        "INSTR" => Ok(Value::Int(locate(&text(1), &text(0), 1, collation))),
        "POSITION" => Ok(Value::Int(locate(&text(0), &text(1), 1, collation))),
        "LOCATE" => {
            let start = if args.len() == 3 { int(2) } else { 1 };
            Ok(Value::Int(locate(&text(0), &text(1), start, collation)))
        }
        "STRCMP" => Ok(Value::Int(
            match super::compare::cmp_strings(&text(0), &text(1), collation) {
                Ordering::Less => -1,
                Ordering::Equal => 0,
                Ordering::Greater => 1,
            },
        )),
        "HEX" => Ok(Value::Bytes(hex(&args[0]))),
        "UNHEX" => Ok(unhex(&text(0)).map_or(Value::Null, Value::Bytes)),
        "ASCII" => Ok(Value::Int(text(0).first().map_or(0, |b| i64::from(*b)))),
        "ORD" => {
            let s = text(0);
            let len = if s.is_empty() {
                0
            } else {
                cast::utf8_char_len(&s, 0)
            };
            Ok(Value::Int(
                s[..len]
                    .iter()
                    .fold(0i64, |acc, b| acc * 256 + i64::from(*b)),
            ))
        }
        "CHAR" => {
            let mut out = Vec::new();
            for v in args.iter().filter(|v| !v.is_null()) {
                let n = to_i64(v).unwrap_or(0) as u32;
                let bytes = n.to_be_bytes();
                let skip = bytes.iter().take_while(|b| **b == 0).count().min(3);
                out.extend_from_slice(&bytes[skip..]);
            }
            Ok(Value::Bytes(out))
        }
        "FIELD" => {
            if args[0].is_null() {
                return Ok(Value::Int(0));
            }
            let position = args[1..]
                .iter()
                .position(|v| compare(&args[0], v, collation) == Some(Ordering::Equal));
            Ok(Value::Int(position.map_or(0, |p| p as i64 + 1)))
        }
        "ELT" => {
            let n = to_i64(&args[0]).unwrap_or(0);
            Ok(usize::try_from(n)
                .ok()
                .filter(|n| (1..args.len()).contains(n))
                .map_or(Value::Null, |n| args[n].clone()))
        }
        "FORMAT" => Ok(format_number(&args[0], int(1))),
        "SUBSTRING_INDEX" => Ok(Value::Bytes(strings::substring_index(
            &text(0),
            &text(1),
            int(2),
        ))),
        "FIND_IN_SET" => Ok(Value::Int(strings::find_in_set(
            &text(0),
            &text(1),
            collation,
        ))),
        "INSERT" => Ok(string_result(strings::insert(
            &text(0),
            int(1),
            int(2),
            &text(3),
        ))),
        "QUOTE" => Ok(Value::Bytes(match to_text(&args[0]) {
            Some(s) => strings::quote(&s),
            None => b"NULL".to_vec(),
        })),
        "SOUNDEX" => Ok(Value::Bytes(strings::soundex(&text(0)))),
        "MAKE_SET" => {
            if args[0].is_null() {
                return Ok(Value::Null);
            }
            let strings: Vec<Option<Vec<u8>>> = args[1..].iter().map(to_text).collect();
            Ok(string_result(strings::make_set(
                math::to_bits(&args[0]),
                &strings,
            )))
        }
        "EXPORT_SET" => {
            let separator = if args.len() > 3 {
                text(3)
            } else {
                b",".to_vec()
            };
            let count = if args.len() > 4 { int(4) } else { 64 };
            Ok(string_result(strings::export_set(
                math::to_bits(&args[0]),
                &text(1),
                &text(2),
                &separator,
                count,
            )))
        }
        "TO_BASE64" => Ok(string_result(strings::to_base64(&text(0)))),
        "FROM_BASE64" => Ok(strings::from_base64(&text(0)).map_or(Value::Null, Value::Bytes)),
        "MD5" => Ok(Value::Bytes(strings::md5(&text(0)))),
        "SHA1" | "SHA" => Ok(Value::Bytes(strings::sha1(&text(0)))),
        "SHA2" => Ok(strings::sha2(&text(0), int(1)).map_or(Value::Null, Value::Bytes)),
        "REGEXP_LIKE" | "REGEXP_INSTR" | "REGEXP_SUBSTR" | "REGEXP_REPLACE" => {
            regexp::call(&upper, args, collation)
        }

        // Identifiers.
        "UUID" => Ok(Value::Bytes(uuid::uuid_v1().into_bytes())),
        "UUID_SHORT" => Ok(Value::UInt(uuid::uuid_short())),
        "IS_UUID" => Ok(Value::Int(i64::from(uuid::is_uuid(&text(0))))),
        "UUID_TO_BIN" | "BIN_TO_UUID" => {
            let Some(value) = to_text(&args[0]) else {
                return Ok(Value::Null);
            };
            // A NULL swap flag is false, as MySQL reads it.
            let swap = args.get(1).and_then(cast::to_bool) == Some(true);
            Ok(Value::Bytes(if upper == "UUID_TO_BIN" {
                uuid::uuid_to_bin(&value, swap)?
            } else {
                uuid::bin_to_uuid(&value, swap)?.into_bytes()
            }))
        }

        // Numbers.
        "ABS" => abs(&args[0]),
        "SIGN" => Ok(Value::Int(match &args[0] {
            Value::Decimal(d) if d.is_zero() => 0,
            Value::Decimal(d) if d.is_negative() => -1,
            Value::Decimal(_) => 1,
            v => {
                let f = to_f64(v).unwrap_or(0.0);
                if f > 0.0 {
                    1
                } else if f < 0.0 {
                    -1
                } else {
                    0
                }
            }
        })),
        "ROUND" => {
            let digits = if args.len() == 2 { int(1) } else { 0 };
            round(&args[0], digits, false)
        }
        "TRUNCATE" => round(&args[0], int(1), true),
        "FLOOR" => floor_ceil(&args[0], RoundMode::Floor),
        "CEIL" | "CEILING" => floor_ceil(&args[0], RoundMode::Ceiling),
        "MOD" => arith::binary(ArithOp::Mod, &args[0], &args[1], ctx),
        "POWER" | "POW" => {
            let (x, y) = (
                to_f64(&args[0]).unwrap_or(0.0),
                to_f64(&args[1]).unwrap_or(0.0),
            );
            double_result(x.powf(y), || format!("pow({x},{y})"))
        }
        "SQRT" => {
            let x = to_f64(&args[0]).unwrap_or(0.0);
            Ok(if x < 0.0 {
                Value::Null
            } else {
                Value::Double(x.sqrt())
            })
        }
        "EXP" => {
            let x = to_f64(&args[0]).unwrap_or(0.0);
            double_result(x.exp(), || format!("exp({x})"))
        }
        "LN" => Ok(log(to_f64(&args[0]).unwrap_or(0.0), f64::ln)),
        "LOG" if args.len() == 1 => Ok(log(to_f64(&args[0]).unwrap_or(0.0), f64::ln)),
        "LOG" => {
            let (base, x) = (
                to_f64(&args[0]).unwrap_or(0.0),
                to_f64(&args[1]).unwrap_or(0.0),
            );
            Ok(if base <= 0.0 || base == 1.0 || x <= 0.0 {
                Value::Null
            } else {
                Value::Double(x.ln() / base.ln())
            })
        }
        "LOG10" => Ok(log(to_f64(&args[0]).unwrap_or(0.0), f64::log10)),
        "LOG2" => Ok(log(to_f64(&args[0]).unwrap_or(0.0), f64::log2)),
        "PI" => Ok(Value::Double(std::f64::consts::PI)),
        "SIN" | "COS" | "TAN" | "COT" | "ASIN" | "ACOS" | "DEGREES" | "RADIANS" => {
            let x = to_f64(&args[0]).unwrap_or(0.0);
            let y = match upper.as_str() {
                "SIN" => x.sin(),
                "COS" => x.cos(),
                "TAN" => x.tan(),
                "COT" => 1.0 / x.tan(),
                "ASIN" => x.asin(),
                "ACOS" => x.acos(),
                "DEGREES" => x.to_degrees(),
                _ => x.to_radians(),
            };
            double_result(y, || format!("{}({x})", upper.to_ascii_lowercase()))
        }
        "ATAN" | "ATAN2" => {
            let y = to_f64(&args[0]).unwrap_or(0.0);
            Ok(Value::Double(match args.get(1) {
                Some(x) => y.atan2(to_f64(x).unwrap_or(0.0)),
                None => y.atan(),
            }))
        }
        "CRC32" => Ok(Value::UInt(u64::from(math::crc32(&text(0))))),
        "BIT_COUNT" => Ok(Value::Int(i64::from(math::to_bits(&args[0]).count_ones()))),
        "BIT_LENGTH" => Ok(Value::Int(text(0).len() as i64 * 8)),
        "INET_ATON" => Ok(math::inet_aton(&text(0)).map_or(Value::Null, Value::UInt)),
        "INET_NTOA" => Ok(u32::try_from(int(0)).map_or(Value::Null, |n| {
            Value::Bytes(std::net::Ipv4Addr::from(n).to_string().into_bytes())
        })),
        "CONV" | "BIN" | "OCT" => {
            let (from, to) = match upper.as_str() {
                "CONV" => (int(1), int(2)),
                "BIN" => (10, 2),
                _ => (10, 8),
            };
            Ok(
                math::conv(&text(0), from, to)
                    .map_or(Value::Null, |s| Value::Bytes(s.into_bytes())),
            )
        }
        "&" | "|" | "^" | "<<" | ">>" | "~" => Ok(math::bit_op(
            &upper,
            &args[0],
            args.get(1).unwrap_or(&Value::Null),
        )),

        // Dates.
        "NOW" | "CURRENT_TIMESTAMP" | "SYSDATE" | "LOCALTIME" | "LOCALTIMESTAMP"
        | "UTC_TIMESTAMP" => {
            let fsp = args.first().map_or(0, |v| to_i64(v).unwrap_or(0));
            fsp_arg(fsp, &upper)?;
            let clock = if upper == "UTC_TIMESTAMP" {
                &ctx.utc_now
            } else {
                &ctx.now
            };
            Ok(Value::DateTime(truncate_fsp(clock, fsp as u32)))
        }
        "CURDATE" | "CURRENT_DATE" => Ok(Value::Date(ctx.now.date)),
        "UTC_DATE" => Ok(Value::Date(ctx.utc_now.date)),
        "CURTIME" | "CURRENT_TIME" | "UTC_TIME" => {
            let fsp = args.first().map_or(0, |v| to_i64(v).unwrap_or(0));
            fsp_arg(fsp, &upper)?;
            let clock = if upper == "UTC_TIME" {
                &ctx.utc_now
            } else {
                &ctx.now
            };
            Ok(time::curtime(clock, fsp as u8))
        }
        "TIME" => Ok(time::to_time(&args[0]).map_or(Value::Null, Value::Time)),
        "TIMEDIFF" => Ok(time::timediff(&args[0], &args[1])),
        "ADDTIME" | "SUBTIME" => {
            // The call is a string unless its first argument is a date or TIME.
            let as_text = !matches!(
                args[0],
                Value::Date(_) | Value::DateTime(_) | Value::Time(_)
            );
            Ok(time::add_time(
                &args[0],
                &args[1],
                upper == "SUBTIME",
                as_text,
            ))
        }
        "SEC_TO_TIME" => Ok(time::sec_to_time(&args[0])),
        "TIME_TO_SEC" => Ok(time::time_to_sec(&args[0])),
        "MAKETIME" => Ok(time::maketime(&args[0], &args[1], &args[2])),
        "TIME_FORMAT" => Ok(time::time_format(&args[0], &text(1))),
        "DATE" => Ok(with_datetime(&args[0], |dt| Value::Date(dt.date))),
        "YEAR" => Ok(with_date(&args[0], |d| i64::from(d.year))),
        "MONTH" => Ok(with_date(&args[0], |d| i64::from(d.month))),
        "DAY" | "DAYOFMONTH" => Ok(with_date(&args[0], |d| i64::from(d.day))),
        "QUARTER" => Ok(with_date(&args[0], |d| (i64::from(d.month) + 2) / 3)),
        "DAYOFWEEK" => Ok(with_date(&args[0], |d| {
            i64::from((date::weekday(d) + 1) % 7 + 1)
        })),
        "WEEKDAY" => Ok(with_date(&args[0], |d| i64::from(date::weekday(d)))),
        "DAYOFYEAR" => Ok(with_date(&args[0], date::day_of_year)),
        "TO_DAYS" => Ok(with_date(&args[0], date::day_number)),
        "TO_SECONDS" => Ok(with_datetime(&args[0], |dt| {
            Value::Int(
                date::day_number(&dt.date) * 86_400
                    + i64::from(dt.hour) * 3600
                    + i64::from(dt.minute) * 60
                    + i64::from(dt.second),
            )
        })),
        "WEEKOFYEAR" => Ok(with_date(&args[0], |d| i64::from(date::week(d, 3).0))),
        "WEEK" => {
            let mode = if args.len() == 2 { int(1) } else { 0 };
            Ok(with_date(&args[0], |d| {
                i64::from(date::week(d, (mode & 7) as u8).0)
            }))
        }
        "YEARWEEK" => {
            let mode = if args.len() == 2 { int(1) } else { 0 };
            Ok(with_date(&args[0], |d| {
                let (w, y) = date::week(d, ((mode & 7) as u8) | 2);
                y * 100 + i64::from(w)
            }))
        }
        "HOUR" => Ok(time_part(&args[0], |t| i64::from(t.hours()))),
        "MINUTE" => Ok(time_part(&args[0], |t| i64::from(t.minute()))),
        "SECOND" => Ok(time_part(&args[0], |t| i64::from(t.second()))),
        "MICROSECOND" => Ok(time_part(&args[0], |t| i64::from(t.fraction_micros()))),
        "MONTHNAME" => Ok(with_datetime(&args[0], |dt| {
            Value::Bytes(date::month_name(dt.date.month).as_bytes().to_vec())
        })),
        "DAYNAME" => Ok(with_datetime(&args[0], |dt| {
            Value::Bytes(date::day_name(&dt.date).as_bytes().to_vec())
        })),
        "LAST_DAY" => Ok(with_datetime(&args[0], |dt| {
            let mut d = dt.date;
            d.day = 28;
            while Date::new(d.year, d.month, d.day + 1).is_ok() {
                d.day += 1;
            }
            Value::Date(d)
        })),
        "FROM_DAYS" => {
            let n = int(0);
            Ok(u32::try_from(n)
                .ok()
                .and_then(|n| Date::from_days(n).ok())
                .map_or(Value::Null, Value::Date))
        }
        "DATEDIFF" => Ok(match (to_datetime(&args[0]), to_datetime(&args[1])) {
            (Some(a), Some(b)) => Value::Int(date::day_number(&a.date) - date::day_number(&b.date)),
            _ => Value::Null,
        }),
        "TIMESTAMPDIFF" => {
            let unit_name = String::from_utf8_lossy(&text(0)).into_owned();
            let unit = date::parse_unit(&unit_name).ok_or_else(|| {
                Error::sql(
                    1064,
                    "42000",
                    format!("You have an error in your SQL syntax near '{unit_name}'"),
                )
            })?;
            date::timestamp_diff(unit, &args[1], &args[2])
        }
        "DATE_FORMAT" => date::date_format(&args[0], &text(1)),
        "CONVERT_TZ" => Ok(date::convert_tz(&args[0], &text(1), &text(2))),
        "STR_TO_DATE" => Ok(date::str_to_date(&text(0), &text(1))),
        "UNIX_TIMESTAMP" => Ok(match args.first() {
            Some(v) => unix_timestamp(v, &ctx.time_zone),
            None => unix_timestamp(
                &Value::DateTime(truncate_fsp(&ctx.utc_now, 0)),
                &TimeZone::UTC,
            ),
        }),
        "FROM_UNIXTIME" => {
            let v = from_unixtime(&args[0], &ctx.time_zone);
            if args.len() == 2 && !v.is_null() {
                return date::date_format(&v, &text(1));
            }
            Ok(v)
        }
        "ADDDATE" | "SUBDATE" | "DATE_ADD" | "DATE_SUB" => {
            let unit = if args.len() == 3 {
                let unit_name = String::from_utf8_lossy(&text(2)).into_owned();
                date::parse_unit(&unit_name).ok_or_else(|| {
                    Error::sql(
                        1064,
                        "42000",
                        format!("You have an error in your SQL syntax near '{unit_name}'"),
                    )
                })?
            } else {
                IntervalUnit::Day
            };
            let subtract = matches!(upper.as_str(), "SUBDATE" | "DATE_SUB");
            date::add_interval(&args[0], &args[1], unit, subtract)
        }
        _ => Err(Error::sql(
            1305,
            "42000",
            format!("FUNCTION {name} does not exist"),
        )),
    }
}

fn string_result(bytes: Vec<u8>) -> Value {
    if bytes.len() > SQL_STRING_RESULT_BYTES_MAX {
        Value::Null
    } else {
        Value::Bytes(bytes)
    }
}

fn extreme(args: &[Value], greatest: bool, collation: Collation) -> Value {
    let mut best = &args[0];
    for v in &args[1..] {
        let ordering = compare(v, best, collation).unwrap_or(Ordering::Equal);
        if (greatest && ordering == Ordering::Greater) || (!greatest && ordering == Ordering::Less)
        {
            best = v;
        }
    }
    best.clone()
}

fn change_case(s: &[u8], upper: bool) -> Vec<u8> {
    if s.is_ascii() {
        return if upper {
            s.to_ascii_uppercase()
        } else {
            s.to_ascii_lowercase()
        };
    }
    let mut out = Vec::with_capacity(s.len());
    for chunk in s.utf8_chunks() {
        let valid = chunk.valid();
        let changed = if upper {
            valid.to_uppercase()
        } else {
            valid.to_lowercase()
        };
        out.extend_from_slice(changed.as_bytes());
        out.extend_from_slice(chunk.invalid());
    }
    out
}

/// SUBSTRING(s, pos[, len]) on characters: `pos` counts from 1, or from the end when
/// negative; `pos` 0 or a `len` below 1 is the empty string.
pub fn substring(s: &[u8], pos: i64, len: Option<i64>) -> Vec<u8> {
    let total = char_count(s) as i64;
    let start = match pos {
        0 => return Vec::new(),
        p if p > 0 => p - 1,
        p => total + p,
    };
    if start < 0 || start >= total {
        return Vec::new();
    }
    let count = match len {
        Some(l) if l < 1 => return Vec::new(),
        Some(l) => l.min(total - start),
        None => total - start,
    };
    let from = char_boundary_after(s, start as usize);
    let to = from + char_boundary_after(&s[from..], count as usize);
    s[from..to].to_vec()
}

/// Which ends TRIM removes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TrimWhere {
    Both,
    Leading,
    Trailing,
}

/// `TRIM(where remove FROM s)`: removes whole repetitions of `remove` (bytes, case
/// sensitive, as MySQL) from the chosen ends. An empty `remove` removes nothing.
pub fn trim(s: &[u8], remove: &[u8], where_: TrimWhere) -> Vec<u8> {
    let mut slice = s;
    if remove.is_empty() {
        return s.to_vec();
    }
    if where_ != TrimWhere::Trailing {
        while slice.starts_with(remove) {
            slice = &slice[remove.len()..];
        }
    }
    if where_ != TrimWhere::Leading {
        while slice.ends_with(remove) {
            slice = &slice[..slice.len() - remove.len()];
        }
    }
    slice.to_vec()
}

fn replace(s: &[u8], from: &[u8], to: &[u8]) -> Value {
    if from.is_empty() {
        return Value::Bytes(s.to_vec());
    }
    let mut out = Vec::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        if s[i..].starts_with(from) {
            out.extend_from_slice(to);
            i += from.len();
            if out.len() > SQL_STRING_RESULT_BYTES_MAX {
                return Value::Null;
            }
        } else {
            out.push(s[i]);
            i += 1;
        }
    }
    Value::Bytes(out)
}

fn reverse(s: &[u8]) -> Vec<u8> {
    let mut chars = Vec::new();
    let mut offset = 0;
    while offset < s.len() {
        let len = cast::utf8_char_len(s, offset);
        chars.push(&s[offset..offset + len]);
        offset += len;
    }
    chars.into_iter().rev().flatten().copied().collect()
}

fn pad(s: &[u8], len: i64, padding: &[u8], left: bool) -> Value {
    let Ok(len) = usize::try_from(len) else {
        return Value::Null;
    };
    let have = char_count(s);
    if have >= len {
        return Value::Bytes(s[..char_boundary_after(s, len)].to_vec());
    }
    if padding.is_empty() || len.saturating_mul(4) > SQL_STRING_RESULT_BYTES_MAX {
        return Value::Null;
    }
    let need = len - have;
    let pad_chars = char_count(padding);
    let mut fill = padding.repeat(need / pad_chars);
    fill.extend_from_slice(&padding[..char_boundary_after(padding, need % pad_chars)]);
    Value::Bytes(if left {
        [fill.as_slice(), s].concat()
    } else {
        [s, fill.as_slice()].concat()
    })
}

/// LOCATE(needle, haystack, start): the 1-based character position of the first
/// occurrence at or after `start`, 0 when none.
fn locate(needle: &[u8], haystack: &[u8], start: i64, collation: Collation) -> i64 {
    let (mut n, mut h) = (Vec::new(), Vec::new());
    like::decode(needle, collation, &mut n);
    like::decode(haystack, collation, &mut h);
    if start < 1 || start as usize > h.len() + 1 {
        return 0;
    }
    let from = start as usize - 1;
    if n.is_empty() {
        return start;
    }
    (from..h.len())
        .find(|&i| h[i..].starts_with(&n))
        .map_or(0, |i| i as i64 + 1)
}

fn hex(v: &Value) -> Vec<u8> {
    let bytes_to_hex = |b: &[u8]| b.iter().map(|x| format!("{x:02X}")).collect::<String>();
    match v {
        Value::Bytes(b) => bytes_to_hex(b).into_bytes(),
        Value::Date(_) | Value::DateTime(_) => {
            bytes_to_hex(&to_text(v).unwrap_or_default()).into_bytes()
        }
        Value::UInt(x) => format!("{x:X}").into_bytes(),
        other => {
            let n = match other {
                Value::Decimal(d) if d.is_negative() => to_i64(other).unwrap_or(0),
                Value::Decimal(_) => {
                    return format!(
                        "{:X}",
                        dec::to_integer(
                            match other {
                                Value::Decimal(d) => d,
                                _ => &Decimal::ZERO,
                            },
                            RoundMode::HalfAwayFromZero
                        )
                        .ok()
                        .and_then(|x| u64::try_from(x).ok())
                        .unwrap_or(u64::MAX)
                    )
                    .into_bytes();
                }
                _ => to_i64(other).unwrap_or(0),
            };
            format!("{:X}", n as u64).into_bytes()
        }
    }
}

fn unhex(s: &[u8]) -> Option<Vec<u8>> {
    let digit = |b: u8| (b as char).to_digit(16).map(|d| d as u8);
    let mut out = Vec::with_capacity(s.len() / 2 + 1);
    let mut rest = s;
    if s.len() % 2 == 1 {
        out.push(digit(s[0])?);
        rest = &s[1..];
    }
    for pair in rest.chunks_exact(2) {
        out.push(digit(pair[0])? << 4 | digit(pair[1])?);
    }
    Some(out)
}

/// FORMAT(x, d): rounded half away from zero to `d` places (0..=30), with `,` between
/// thousands, as `'1,234.57'`.
fn format_number(v: &Value, digits: i64) -> Value {
    let d = digits.clamp(0, 30);
    let rounded =
        match cast::to_decimal(v).map(|x| dec::round_to(&x, d, RoundMode::HalfAwayFromZero)) {
            Some(Ok(r)) => r.to_string(),
            _ => format!("{:.*}", d as usize, to_f64(v).unwrap_or(0.0)),
        };
    let (sign, body) = match rounded.strip_prefix('-') {
        Some(rest) => ("-", rest),
        None => ("", rounded.as_str()),
    };
    let (integer, fraction) = body.split_once('.').unwrap_or((body, ""));
    let mut grouped = String::with_capacity(integer.len() + integer.len() / 3);
    for (i, c) in integer.chars().enumerate() {
        if i > 0 && (integer.len() - i) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(c);
    }
    let mut out = format!("{sign}{grouped}");
    if !fraction.is_empty() {
        out.push('.');
        out.push_str(fraction);
    }
    Value::Bytes(out.into_bytes())
}

fn double_result(x: f64, expression: impl FnOnce() -> String) -> Result<Value> {
    if x.is_nan() {
        Ok(Value::Null)
    } else if x.is_infinite() {
        Err(out_of_range("DOUBLE", &expression()))
    } else {
        Ok(Value::Double(x))
    }
}

fn log(x: f64, f: fn(f64) -> f64) -> Value {
    if x <= 0.0 {
        Value::Null
    } else {
        Value::Double(f(x))
    }
}

fn abs(v: &Value) -> Result<Value> {
    Ok(match v {
        Value::Int(x) => Value::Int(
            x.checked_abs()
                .ok_or_else(|| out_of_range("BIGINT", &format!("abs({x})")))?,
        ),
        Value::UInt(x) => Value::UInt(*x),
        Value::Decimal(d) => Value::Decimal(dec::abs(d)),
        Value::Date(_) | Value::DateTime(_) => return abs(&cast::temporal_to_number(v)),
        other => Value::Double(to_f64(other).unwrap_or(0.0).abs()),
    })
}

/// ROUND (or TRUNCATE when `truncate`) of `v` to `digits` places: exact for integers
/// and DECIMALs (half away from zero); DOUBLEs round half to even on `v * 10^digits`
/// as MySQL's `rint` does (`ROUND(2.5e0)` is 2).
fn round(v: &Value, digits: i64, truncate: bool) -> Result<Value> {
    let mode = if truncate {
        RoundMode::Truncate
    } else {
        RoundMode::HalfAwayFromZero
    };
    let digits = digits.clamp(-400, 400);
    match v {
        Value::Int(_) | Value::UInt(_) if digits >= 0 => Ok(v.clone()),
        Value::Int(_) | Value::UInt(_) => {
            let d = cast::to_decimal(v).unwrap_or(Decimal::ZERO);
            let r = dec::round_to(&d, digits, mode)?;
            let n = dec::to_integer(&r, RoundMode::Truncate)?;
            let too_large = || out_of_range("BIGINT", &format!("round({d},{digits})"));
            Ok(if matches!(v, Value::UInt(_)) {
                Value::UInt(u64::try_from(n).map_err(|_| too_large())?)
            } else {
                Value::Int(i64::try_from(n).map_err(|_| too_large())?)
            })
        }
        Value::Decimal(d) => Ok(Value::Decimal(dec::round_to(d, digits, mode)?)),
        Value::Date(_) | Value::DateTime(_) => {
            round(&cast::temporal_to_number(v), digits, truncate)
        }
        other => {
            let x = to_f64(other).unwrap_or(0.0);
            Ok(Value::Double(round_double(x, digits, truncate)))
        }
    }
}

/// MySQL's `my_double_round`.
pub fn round_double(x: f64, digits: i64, truncate: bool) -> f64 {
    let scale = 10f64.powi(digits.unsigned_abs().min(400) as i32);
    let scaled = if digits < 0 { x / scale } else { x * scale };
    if !scaled.is_finite() {
        return x;
    }
    let r = if truncate {
        scaled.trunc()
    } else {
        scaled.round_ties_even()
    };
    let back = if digits < 0 { r * scale } else { r / scale };
    if back.is_finite() { back } else { x }
}

fn floor_ceil(v: &Value, mode: RoundMode) -> Result<Value> {
    match v {
        Value::Int(_) | Value::UInt(_) => Ok(v.clone()),
        Value::Decimal(d) => {
            let r = dec::round_to(d, 0, mode)?;
            Ok(
                match dec::to_integer(&r, RoundMode::Truncate)
                    .ok()
                    .and_then(|n| i64::try_from(n).ok())
                {
                    Some(n) => Value::Int(n),
                    None => Value::Decimal(r),
                },
            )
        }
        Value::Date(_) | Value::DateTime(_) => floor_ceil(&cast::temporal_to_number(v), mode),
        other => {
            let x = to_f64(other).unwrap_or(0.0);
            Ok(Value::Double(if mode == RoundMode::Floor {
                x.floor()
            } else {
                x.ceil()
            }))
        }
    }
}

fn fsp_arg(fsp: i64, name: &str) -> Result<()> {
    if (0..=6).contains(&fsp) {
        Ok(())
    } else {
        Err(Error::sql(
            1426,
            "42000",
            format!(
                "Too-big precision {fsp} specified for '{}'. Maximum is 6.",
                name.to_ascii_lowercase()
            ),
        ))
    }
}

fn truncate_fsp(dt: &DateTime, fsp: u32) -> DateTime {
    let unit = 10u32.pow(6 - fsp.min(6));
    DateTime {
        micros: dt.micros / unit * unit,
        ..*dt
    }
}

fn with_datetime(v: &Value, f: impl FnOnce(&DateTime) -> Value) -> Value {
    to_datetime(v).map_or(Value::Null, |dt| f(&dt))
}

fn with_date(v: &Value, f: impl FnOnce(&Date) -> i64) -> Value {
    to_datetime(v).map_or(Value::Null, |dt| Value::Int(f(&dt.date)))
}

/// HOUR/MINUTE/SECOND/MICROSECOND of the value read as a TIME ([`time::to_time`]: a
/// datetime's time of day, a TIME string or `HHMMSS` number); the magnitude's fields,
/// so HOUR can pass 23 and a negative TIME gives positive fields, as in MySQL.
fn time_part(v: &Value, f: impl FnOnce(&tarn_row::Time) -> i64) -> Value {
    time::to_time(v).map_or(Value::Null, |t| Value::Int(f(&t)))
}

/// The fraction digits of a TIME made from a number of seconds of type `ty`
/// (SEC_TO_TIME, MAKETIME's seconds): none for integers, a DECIMAL's scale, six
/// for anything else (MySQL's `decimals` of a DOUBLE or string).
fn seconds_fsp(ty: SqlType) -> u8 {
    match ty {
        SqlType::Int { .. } | SqlType::UInt { .. } | SqlType::Year | SqlType::Null => 0,
        SqlType::Decimal { scale, .. } => scale.min(6),
        _ => 6,
    }
}

/// Seconds from 1970-01-01 00:00:00 UTC to `v` read in `zone`; 0 before it or past
/// 3001-01-18 (MySQL's 64-bit range); a DECIMAL(.., 6) with microseconds.
fn unix_timestamp(v: &Value, zone: &TimeZone) -> Value {
    let Some(dt) = to_datetime(v) else {
        return Value::Null;
    };
    let micros = zone.local_to_unix_micros(&dt);
    if !(0..=32_536_771_199 * 1_000_000).contains(&micros) {
        return Value::Int(0);
    }
    if micros % 1_000_000 == 0 {
        Value::Int((micros / 1_000_000) as i64)
    } else {
        Decimal::from_i128(micros, 6).map_or(Value::Null, Value::Decimal)
    }
}

/// The instant `v` seconds after 1970-01-01 00:00:00 UTC, in `zone`.
fn from_unixtime(v: &Value, zone: &TimeZone) -> Value {
    let micros = match v {
        Value::Int(_) | Value::UInt(_) => to_i64(v).map(|s| i128::from(s) * 1_000_000),
        other => cast::to_decimal(other)
            .and_then(|d| dec::round_to(&d, 6, RoundMode::HalfAwayFromZero).ok())
            .and_then(|d| dec::parts(&d).ok())
            .map(|(m, _)| m),
    };
    match micros {
        Some(m) if m >= 0 => zone.to_local(m).map_or(Value::Null, Value::DateTime),
        _ => Value::Null,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx() -> FnContext {
        FnContext::new(DateTime::parse("2024-03-15 13:14:15.123456").unwrap())
    }

    fn s(text: &str) -> Value {
        Value::Bytes(text.as_bytes().to_vec())
    }

    fn dec(text: &str) -> Value {
        Value::Decimal(Decimal::parse(text).unwrap())
    }

    fn run(name: &str, args: &[Value]) -> String {
        let v = call(name, args, &ctx()).unwrap();
        String::from_utf8(to_text(&v).unwrap_or(b"NULL".to_vec())).unwrap()
    }

    fn i(n: i64) -> Value {
        Value::Int(n)
    }

    #[test]
    fn errors() {
        let e = call("nosuch", &[], &ctx()).unwrap_err();
        assert_eq!(
            (e.mysql_code(), e.to_string().as_str()),
            (1305, "FUNCTION nosuch does not exist")
        );
        let e = return_type("left", &[SqlType::TEXT]).unwrap_err();
        assert_eq!(e.mysql_code(), 1582);
        assert_eq!(
            e.to_string(),
            "Incorrect parameter count in the call to native function 'left'"
        );
        assert!(is_function("Concat"));
        assert_eq!(
            call("abs", &[i(i64::MIN)], &ctx())
                .unwrap_err()
                .mysql_code(),
            1690
        );
        assert_eq!(
            call("EXP", &[i(1000)], &ctx()).unwrap_err().mysql_code(),
            1690
        );
    }

    #[test]
    fn control_flow() {
        assert_eq!(run("IF", &[i(1), s("a"), s("b")]), "a");
        assert_eq!(run("if", &[s("abc"), s("a"), s("b")]), "b");
        assert_eq!(run("IF", &[Value::Null, i(1), i(2)]), "2");
        assert_eq!(run("IFNULL", &[Value::Null, i(2)]), "2");
        assert_eq!(run("COALESCE", &[Value::Null, Value::Null, i(3)]), "3");
        assert_eq!(run("COALESCE", &[Value::Null]), "NULL");
        assert_eq!(run("NULLIF", &[i(1), i(1)]), "NULL");
        assert_eq!(run("NULLIF", &[i(1), i(2)]), "1");
        assert_eq!(run("ISNULL", &[Value::Null]), "1");
        assert_eq!(run("GREATEST", &[i(2), i(0), i(7)]), "7");
        assert_eq!(run("LEAST", &[s("b"), s("A"), s("c")]), "A");
        assert_eq!(run("GREATEST", &[i(1), Value::Null]), "NULL");
        assert_eq!(
            return_type(
                "IF",
                &[SqlType::BOOL, SqlType::Int { bits: 32 }, SqlType::Double]
            )
            .unwrap(),
            SqlType::Double
        );
        assert_eq!(
            return_type(
                "COALESCE",
                &[
                    SqlType::Null,
                    SqlType::Int { bits: 32 },
                    SqlType::Int { bits: 8 }
                ]
            )
            .unwrap(),
            SqlType::Int { bits: 32 }
        );
        assert!(
            return_type("IFNULL", &[SqlType::Int { bits: 32 }, SqlType::TEXT])
                .unwrap()
                .is_string()
        );
    }

    #[test]
    fn strings() {
        assert_eq!(run("CONCAT", &[s("a"), i(1), dec("1.50")]), "a11.50");
        assert_eq!(run("CONCAT", &[s("a"), Value::Null]), "NULL");
        assert_eq!(
            run("CONCAT_WS", &[s(","), s("a"), Value::Null, s("b")]),
            "a,b"
        );
        assert_eq!(run("CONCAT_WS", &[Value::Null, s("a")]), "NULL");
        assert_eq!(run("SUBSTRING", &[s("Quadratically"), i(5)]), "ratically");
        assert_eq!(
            run("SUBSTRING", &[s("Quadratically"), i(5), i(6)]),
            "ratica"
        );
        assert_eq!(run("SUBSTRING", &[s("Sakila"), i(-3)]), "ila");
        assert_eq!(run("SUBSTR", &[s("Sakila"), i(-5), i(3)]), "aki");
        assert_eq!(run("MID", &[s("Sakila"), i(0)]), "");
        assert_eq!(run("SUBSTRING", &[s("héllo"), i(2), i(2)]), "él");
        assert_eq!(run("LENGTH", &[s("héllo")]), "6");
        assert_eq!(run("CHAR_LENGTH", &[s("héllo")]), "5");
        assert_eq!(run("UPPER", &[s("héllo")]), "HÉLLO");
        assert_eq!(run("LCASE", &[s("QUADRATICALLY")]), "quadratically");
        assert_eq!(run("TRIM", &[s("  bar   ")]), "bar");
        assert_eq!(run("LTRIM", &[s("  barbar ")]), "barbar ");
        assert_eq!(run("RTRIM", &[s("barbar   ")]), "barbar");
        assert_eq!(run("TRIM_LEADING", &[s("xxxbarxxx"), s("x")]), "barxxx");
        assert_eq!(run("TRIM_BOTH", &[s("xxxbarxxx"), s("x")]), "bar");
        assert_eq!(run("TRIM_TRAILING", &[s("barxxyz"), s("xyz")]), "barx");
        assert_eq!(
            run("REPLACE", &[s("www.mysql.com"), s("w"), s("Ww")]),
            "WwWwWw.mysql.com"
        );
        assert_eq!(run("LEFT", &[s("foobarbar"), i(5)]), "fooba");
        assert_eq!(run("RIGHT", &[s("foobarbar"), i(4)]), "rbar");
        assert_eq!(run("RIGHT", &[s("ab"), i(-1)]), "");
        assert_eq!(run("REPEAT", &[s("MySQL"), i(3)]), "MySQLMySQLMySQL");
        assert_eq!(run("REPEAT", &[s("x"), i(1 << 40)]), "NULL");
        assert_eq!(run("REVERSE", &[s("abcé")]), "écba");
        assert_eq!(run("LPAD", &[s("hi"), i(4), s("??")]), "??hi");
        assert_eq!(run("LPAD", &[s("hi"), i(1), s("??")]), "h");
        assert_eq!(run("RPAD", &[s("hi"), i(5), s("?")]), "hi???");
        assert_eq!(run("LPAD", &[s("hi"), i(5), s("")]), "NULL");
        assert_eq!(run("INSTR", &[s("foobarbar"), s("bar")]), "4");
        assert_eq!(run("INSTR", &[s("xbar"), s("foobar")]), "0");
        assert_eq!(run("LOCATE", &[s("bar"), s("foobarbar")]), "4");
        assert_eq!(run("LOCATE", &[s("bar"), s("foobarbar"), i(5)]), "7");
        assert_eq!(run("LOCATE", &[s("BAR"), s("foobarbar")]), "4");
        assert_eq!(run("POSITION", &[s("bar"), s("foobarbar")]), "4");
        assert_eq!(run("HEX", &[s("abc")]), "616263");
        assert_eq!(run("HEX", &[i(255)]), "FF");
        assert_eq!(run("HEX", &[i(-1)]), "FFFFFFFFFFFFFFFF");
        assert_eq!(run("UNHEX", &[s("4D7953514C")]), "MySQL");
        assert_eq!(run("UNHEX", &[s("GG")]), "NULL");
        assert_eq!(run("ASCII", &[s("2")]), "50");
        assert_eq!(run("ASCII", &[s("")]), "0");
        assert_eq!(
            run("CHAR", &[i(77), i(121), Value::Null, i(83), i(81), i(76)]),
            "MySQL"
        );
        assert_eq!(run("FIELD", &[s("Bb"), s("Aa"), s("Bb"), s("Cc")]), "2");
        assert_eq!(run("FIELD", &[s("Gg"), s("Aa"), s("Bb")]), "0");
        assert_eq!(run("ELT", &[i(2), s("Aa"), s("Bb")]), "Bb");
        assert_eq!(run("ELT", &[i(3), s("Aa"), s("Bb")]), "NULL");
        assert_eq!(
            run("FORMAT", &[Value::Double(12332.123456), i(4)]),
            "12,332.1235"
        );
        assert_eq!(run("FORMAT", &[dec("-1234567.891"), i(2)]), "-1,234,567.89");
        assert_eq!(run("FORMAT", &[i(12332), i(0)]), "12,332");
        assert_eq!(run("STRCMP", &[s("text"), s("text2")]), "-1");
        assert_eq!(run("SPACE", &[i(3)]), "   ");
    }

    #[test]
    fn numbers() {
        assert_eq!(run("ABS", &[i(-32)]), "32");
        assert_eq!(run("ABS", &[dec("-1.50")]), "1.50");
        assert_eq!(run("ROUND", &[dec("-1.23")]), "-1");
        assert_eq!(run("ROUND", &[dec("-1.58")]), "-2");
        assert_eq!(run("ROUND", &[dec("1.298"), i(1)]), "1.3");
        assert_eq!(run("ROUND", &[dec("23.298"), i(-1)]), "20");
        assert_eq!(run("ROUND", &[i(155), i(-1)]), "160");
        assert_eq!(run("ROUND", &[dec("2.5")]), "3");
        assert_eq!(run("ROUND", &[Value::Double(2.5)]), "2");
        assert_eq!(run("ROUND", &[Value::Double(1.298), i(1)]), "1.3");
        let e = call("ROUND", &[i(i64::MAX), i(-1)], &ctx()).unwrap_err();
        assert_eq!(e.mysql_code(), 1690);
    }

    #[test]
    fn more_numbers() {
        assert_eq!(run("TRUNCATE", &[dec("1.223"), i(1)]), "1.2");
        assert_eq!(run("TRUNCATE", &[dec("1.999"), i(0)]), "1");
        assert_eq!(run("TRUNCATE", &[dec("-1.999"), i(1)]), "-1.9");
        assert_eq!(run("TRUNCATE", &[i(122), i(-2)]), "100");
        assert_eq!(run("TRUNCATE", &[Value::Double(1.223), i(1)]), "1.2");
        assert_eq!(run("FLOOR", &[dec("1.23")]), "1");
        assert_eq!(run("FLOOR", &[dec("-1.23")]), "-2");
        assert_eq!(run("CEILING", &[dec("1.23")]), "2");
        assert_eq!(run("CEIL", &[Value::Double(-1.23)]), "-1");
        assert_eq!(run("MOD", &[i(234), i(10)]), "4");
        assert_eq!(run("MOD", &[i(29), i(0)]), "NULL");
        assert_eq!(run("POW", &[i(2), i(-2)]), "0.25");
        assert_eq!(run("SQRT", &[i(4)]), "2");
        assert_eq!(run("SQRT", &[i(-16)]), "NULL");
        assert_eq!(run("LN", &[i(0)]), "NULL");
        assert_eq!(run("LOG", &[i(2), i(65536)]), "16");
        assert_eq!(run("LOG10", &[i(100)]), "2");
        assert_eq!(run("LOG2", &[i(65536)]), "16");
        assert_eq!(run("SIGN", &[i(-32)]), "-1");
        assert_eq!(run("SIGN", &[dec("0.00")]), "0");
        assert_eq!(run("PI", &[]), "3.141592653589793");
        assert_eq!(
            return_type_with_constants(
                "ROUND",
                &[
                    SqlType::Decimal {
                        precision: 5,
                        scale: 3
                    },
                    SqlType::BIGINT
                ],
                &[None, Some(i(1))]
            )
            .unwrap(),
            SqlType::Decimal {
                precision: 4,
                scale: 1
            }
        );
        assert_eq!(
            return_type(
                "FLOOR",
                &[SqlType::Decimal {
                    precision: 5,
                    scale: 3
                }]
            )
            .unwrap(),
            SqlType::BIGINT
        );
    }

    #[test]
    fn dates() {
        assert_eq!(run("NOW", &[]), "2024-03-15 13:14:15");
        assert_eq!(run("NOW", &[i(3)]), "2024-03-15 13:14:15.123000");
        assert_eq!(call("NOW", &[i(7)], &ctx()).unwrap_err().mysql_code(), 1426);
        assert_eq!(run("CURDATE", &[]), "2024-03-15");
        assert_eq!(run("CURTIME", &[]), "13:14:15");
        // A TIME cut to two digits; the call's type, TIME(2), shows two.
        assert_eq!(run("CURTIME", &[i(2)]), "13:14:15.120000");
        assert_eq!(
            return_type("CURTIME", &[SqlType::BIGINT]).unwrap(),
            SqlType::Time { fsp: 0 }
        );
        assert_eq!(run("DATE", &[s("2003-12-31 01:02:03")]), "2003-12-31");
        assert_eq!(run("YEAR", &[s("1987-01-01")]), "1987");
        assert_eq!(run("MONTH", &[s("2008-02-03")]), "2");
        assert_eq!(run("DAY", &[s("2007-02-03")]), "3");
        assert_eq!(run("DAYOFWEEK", &[s("2007-02-03")]), "7");
        assert_eq!(run("WEEKDAY", &[s("2008-02-03 22:23:00")]), "6");
        assert_eq!(run("DAYOFYEAR", &[s("2007-02-03")]), "34");
        assert_eq!(run("HOUR", &[s("10:05:03")]), "10");
        assert_eq!(run("MINUTE", &[s("2008-02-03 10:05:03")]), "5");
        assert_eq!(run("SECOND", &[s("10:05:03")]), "3");
        assert_eq!(run("QUARTER", &[s("2008-04-01")]), "2");
        assert_eq!(run("LAST_DAY", &[s("2004-02-05")]), "2004-02-29");
        assert_eq!(run("LAST_DAY", &[s("2003-03-32")]), "NULL");
        assert_eq!(
            run("DATEDIFF", &[s("2007-12-31 23:59:59"), s("2007-12-30")]),
            "1"
        );
        assert_eq!(
            run("DATEDIFF", &[s("2010-11-30 23:59:59"), s("2010-12-31")]),
            "-31"
        );
        assert_eq!(
            run(
                "TIMESTAMPDIFF",
                &[s("MONTH"), s("2003-02-01"), s("2003-05-01")]
            ),
            "3"
        );
        assert_eq!(
            run("DATE_FORMAT", &[s("2009-10-04 22:23:00"), s("%W %M %Y")]),
            "Sunday October 2009"
        );
        assert_eq!(
            run("STR_TO_DATE", &[s("01,5,2013"), s("%d,%m,%Y")]),
            "2013-05-01"
        );
        assert_eq!(
            run("UNIX_TIMESTAMP", &[s("2015-11-13 10:20:19")]),
            "1447410019"
        );
        assert_eq!(
            run("UNIX_TIMESTAMP", &[s("2015-11-13 10:20:19.012")]),
            "1447410019.012000"
        );
        assert_eq!(
            run("FROM_UNIXTIME", &[i(1447430881)]),
            "2015-11-13 16:08:01"
        );
        assert_eq!(run("FROM_UNIXTIME", &[i(1447430881), s("%Y")]), "2015");
        assert_eq!(run("TO_DAYS", &[s("2007-10-07")]), "733321");
        assert_eq!(run("FROM_DAYS", &[i(730669)]), "2000-07-03");
        assert_eq!(run("MONTHNAME", &[s("2008-02-03")]), "February");
        assert_eq!(run("DAYNAME", &[s("2007-02-03")]), "Saturday");
        assert_eq!(run("WEEK", &[s("2008-02-20"), i(1)]), "8");
        assert_eq!(run("YEARWEEK", &[s("1987-01-01")]), "198652");
        assert_eq!(run("ADDDATE", &[s("2008-01-02"), i(31)]), "2008-02-02");
        assert_eq!(
            run(
                "DATE_SUB",
                &[
                    Value::Date(Date::new(2008, 1, 2).unwrap()),
                    i(1),
                    s("month")
                ]
            ),
            "2007-12-02"
        );
        assert_eq!(run("YEAR", &[Value::Null]), "NULL");
        assert_eq!(
            return_type_with_constants(
                "STR_TO_DATE",
                &[SqlType::TEXT, SqlType::TEXT],
                &[None, Some(s("%Y-%m-%d"))]
            )
            .unwrap(),
            SqlType::Date
        );
    }
}
