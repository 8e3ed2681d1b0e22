//! Arithmetic: `+ - * / DIV %` and unary minus, with MySQL's result types.
//!
//! The domain an operation runs in follows from its operands (as [`result_type`] does
//! from their types):
//!
//! 1. NULL on either side gives NULL.
//! 2. A FLOAT, DOUBLE or string operand makes it DOUBLE arithmetic (strings read by
//!    their numeric prefix). A result that is not finite is error 1690.
//! 3. Else a DECIMAL operand makes it exact decimal arithmetic ([`super::decimal`]).
//! 4. Else both are integers: BIGINT arithmetic, checked. When either operand is
//!    unsigned (for `%`, the first) the result is BIGINT UNSIGNED and must be
//!    non-negative (`1 - CAST(2 AS UNSIGNED)` is error 1690, as in MySQL without
//!    `NO_UNSIGNED_SUBTRACTION`). `/` on integers is DECIMAL division.
//!
//! Dates in arithmetic are numbers (`YYYYMMDD`, see [`super::cast::temporal_to_number`]),
//! a TIME is `[-]HHMMSS`, and a YEAR a SMALLINT UNSIGNED.
//! `/` gives `div_precision_increment` (4) more fraction digits than its dividend;
//! `DIV` truncates toward zero to a BIGINT. Dividing by zero (`/`, `DIV`, `%`) is NULL
//! and counted in a per-thread counter ([`divisions_by_zero`]): the session resets it
//! when a statement starts and turns what it counted into warnings 1365 when the
//! statement ends, and INSERT and UPDATE in strict mode turn it into error 1365
//! (`crate::dml`). A counter rather than a field of [`FnContext`] because the context
//! is a `Copy` value handed to every function; parallel workers hand their counts to
//! the session's thread with their last message (`crate::parallel`). Overflow is error 1690
//! "BIGINT value is out of range in '(a + b)'" (with the operand values as the
//! expression text, where MySQL shows the expression as written).

use std::cell::Cell;

use tarn_common::Result;
use tarn_row::decimal::Decimal;
use tarn_row::value::Value;

use super::cast::{self, temporal_to_number, to_f64};
use super::compare::decimal_shape;
use super::decimal;
use super::{FnContext, out_of_range};
use crate::types::SqlType;

/// A binary arithmetic operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ArithOp {
    Add,
    Sub,
    Mul,
    /// `/`
    Div,
    /// `DIV`
    IntDiv,
    /// `%` and `MOD`
    Mod,
}

impl ArithOp {
    pub fn symbol(self) -> &'static str {
        match self {
            ArithOp::Add => "+",
            ArithOp::Sub => "-",
            ArithOp::Mul => "*",
            ArithOp::Div => "/",
            ArithOp::IntDiv => "DIV",
            ArithOp::Mod => "%",
        }
    }
}

/// The `div_precision_increment` the binder types `/` with (MySQL's default).
pub const DIV_PRECISION_INCREMENT_DEFAULT: u8 = 4;

/// How an operand type takes part in arithmetic.
fn arith_operand(t: SqlType) -> SqlType {
    match t.plain() {
        SqlType::Null => SqlType::BIGINT,
        SqlType::Date => SqlType::BIGINT,
        SqlType::DateTime { fsp: 0, .. } => SqlType::BIGINT,
        SqlType::DateTime { fsp, .. } => SqlType::Decimal {
            precision: 14 + fsp,
            scale: fsp,
        },
        // `[-]HHHMMSS[.f]`: seven integer digits.
        SqlType::Time { fsp: 0 } => SqlType::BIGINT,
        SqlType::Time { fsp } => SqlType::Decimal {
            precision: 7 + fsp,
            scale: fsp,
        },
        SqlType::Year => SqlType::UInt { bits: 16 },
        SqlType::Text { .. }
        | SqlType::Blob { .. }
        | SqlType::Binary { .. }
        | SqlType::Json
        | SqlType::Float => SqlType::Double,
        other => other,
    }
}

/// MySQL's result type of `a op b` (see the module documentation): integers give
/// BIGINT (UNSIGNED when either is unsigned; for `%` when the first is), `/` gives
/// DECIMAL with 4 more fraction digits, DECIMAL keeps the scales MySQL gives
/// (`+ -`: max of the scales, one more integer digit; `*`: sum of precisions and
/// scales), anything with a FLOAT, DOUBLE or string gives DOUBLE; `DIV` is always
/// BIGINT. Precision is capped at 65 and scale at 30.
pub fn result_type(op: ArithOp, a: SqlType, b: SqlType) -> SqlType {
    result_type_with(op, a, b, DIV_PRECISION_INCREMENT_DEFAULT)
}

/// [`result_type`] with a session's `div_precision_increment`.
pub fn result_type_with(op: ArithOp, a: SqlType, b: SqlType, increment: u8) -> SqlType {
    let (a, b) = (arith_operand(a), arith_operand(b));
    let unsigned = match op {
        ArithOp::Mod => matches!(a, SqlType::UInt { .. }),
        _ => matches!(a, SqlType::UInt { .. }) || matches!(b, SqlType::UInt { .. }),
    };
    if op == ArithOp::IntDiv {
        return if unsigned {
            SqlType::UInt { bits: 64 }
        } else {
            SqlType::BIGINT
        };
    }
    if a == SqlType::Double || b == SqlType::Double {
        return SqlType::Double;
    }
    if a.is_integer() && b.is_integer() && op != ArithOp::Div {
        return if unsigned {
            SqlType::UInt { bits: 64 }
        } else {
            SqlType::BIGINT
        };
    }
    let (Some((pa, sa)), Some((pb, sb))) = (decimal_shape(a), decimal_shape(b)) else {
        return SqlType::Double;
    };
    let (ia, ib) = (pa - sa, pb - sb);
    let (precision, scale) = match op {
        ArithOp::Add | ArithOp::Sub => {
            let scale = sa.max(sb);
            (u16::from(ia.max(ib)) + u16::from(scale) + 1, scale)
        }
        ArithOp::Mul => (u16::from(pa) + u16::from(pb), (sa + sb).min(30)),
        ArithOp::Div => {
            let scale = sa.saturating_add(increment).min(30);
            (u16::from(pa) + u16::from(sb) + u16::from(increment), scale)
        }
        ArithOp::Mod => {
            let scale = sa.max(sb);
            (u16::from(ia.max(ib)) + u16::from(scale), scale)
        }
        ArithOp::IntDiv => (19, 0),
    };
    let precision = precision.clamp(u16::from(scale).max(1), 65) as u8;
    SqlType::Decimal { precision, scale }
}

fn expression(op: ArithOp, a: &Value, b: &Value) -> String {
    let text =
        |v: &Value| String::from_utf8_lossy(&cast::to_text(v).unwrap_or_default()).into_owned();
    format!("({} {} {})", text(a), op.symbol(), text(b))
}

thread_local! {
    /// Divisions by zero evaluated on this thread since the last
    /// [`take_divisions_by_zero`].
    static DIVISIONS_BY_ZERO: Cell<u64> = const { Cell::new(0) };
}

/// The divisions by zero this thread evaluated since the last
/// [`take_divisions_by_zero`].
pub fn divisions_by_zero() -> u64 {
    DIVISIONS_BY_ZERO.with(Cell::get)
}

/// Returns [`divisions_by_zero`] and resets it.
pub fn take_divisions_by_zero() -> u64 {
    DIVISIONS_BY_ZERO.with(|c| c.replace(0))
}

/// Adds divisions by zero counted on another thread (a parallel worker's).
pub fn add_divisions_by_zero(count: u64) {
    DIVISIONS_BY_ZERO.with(|c| c.set(c.get().saturating_add(count)));
}

/// The NULL a division by zero gives, counted.
fn division_by_zero() -> Result<Value> {
    add_divisions_by_zero(1);
    Ok(Value::Null)
}

/// `a op b` with MySQL's semantics (see the module documentation). NULL in gives NULL
/// out; division by zero is NULL; overflow is error 1690.
pub fn binary(op: ArithOp, a: &Value, b: &Value, ctx: &FnContext) -> Result<Value> {
    if a.is_null() || b.is_null() {
        return Ok(Value::Null);
    }
    let (x, y) = (temporal_to_number(a), temporal_to_number(b));
    let is_approx = |v: &Value| matches!(v, Value::Float(_) | Value::Double(_) | Value::Bytes(_));
    if is_approx(&x) || is_approx(&y) {
        return double_op(op, &x, &y);
    }
    if matches!(x, Value::Decimal(_)) || matches!(y, Value::Decimal(_)) || op == ArithOp::Div {
        return decimal_op(op, &x, &y, ctx);
    }
    int_op(op, &x, &y)
}

fn double_op(op: ArithOp, a: &Value, b: &Value) -> Result<Value> {
    let (x, y) = (to_f64(a).unwrap_or(0.0), to_f64(b).unwrap_or(0.0));
    let r = match op {
        ArithOp::Add => x + y,
        ArithOp::Sub => x - y,
        ArithOp::Mul => x * y,
        ArithOp::Div if y == 0.0 => return division_by_zero(),
        ArithOp::Div => x / y,
        ArithOp::Mod if y == 0.0 => return division_by_zero(),
        ArithOp::Mod => x % y,
        ArithOp::IntDiv if y == 0.0 => return division_by_zero(),
        ArithOp::IntDiv => {
            let q = (x / y).trunc();
            if !(-9.223_372_036_854_776e18..9.223_372_036_854_776e18).contains(&q) {
                return Err(out_of_range("BIGINT", &expression(op, a, b)));
            }
            return Ok(Value::Int(q as i64));
        }
    };
    if !r.is_finite() {
        return Err(out_of_range("DOUBLE", &expression(op, a, b)));
    }
    Ok(Value::Double(r))
}

fn decimal_op(op: ArithOp, a: &Value, b: &Value, ctx: &FnContext) -> Result<Value> {
    let as_decimal = |v: &Value| cast::to_decimal(v).unwrap_or(Decimal::ZERO);
    let (x, y) = (as_decimal(a), as_decimal(b));
    let r = match op {
        ArithOp::Add => decimal::add(&x, &y)?,
        ArithOp::Sub => decimal::sub(&x, &y)?,
        ArithOp::Mul => decimal::mul(&x, &y)?,
        ArithOp::Div => match decimal::div(&x, &y, ctx.div_precision_increment)? {
            Some(q) => q,
            None => return division_by_zero(),
        },
        ArithOp::Mod => match decimal::rem(&x, &y)? {
            Some(r) => r,
            None => return division_by_zero(),
        },
        ArithOp::IntDiv => {
            let Some(q) = decimal::int_div(&x, &y)? else {
                return division_by_zero();
            };
            let unsigned = matches!(a, Value::UInt(_)) || matches!(b, Value::UInt(_));
            return int_result(q, unsigned, op, a, b);
        }
    };
    Ok(Value::Decimal(r))
}

fn int_result(r: i128, unsigned: bool, op: ArithOp, a: &Value, b: &Value) -> Result<Value> {
    if unsigned {
        u64::try_from(r)
            .map(Value::UInt)
            .map_err(|_| out_of_range("BIGINT UNSIGNED", &expression(op, a, b)))
    } else {
        i64::try_from(r)
            .map(Value::Int)
            .map_err(|_| out_of_range("BIGINT", &expression(op, a, b)))
    }
}

fn int_op(op: ArithOp, a: &Value, b: &Value) -> Result<Value> {
    let int = |v: &Value| match v {
        Value::Int(x) => i128::from(*x),
        Value::UInt(x) => i128::from(*x),
        _ => 0,
    };
    let (x, y) = (int(a), int(b));
    let unsigned = match op {
        ArithOp::Mod => matches!(a, Value::UInt(_)),
        _ => matches!(a, Value::UInt(_)) || matches!(b, Value::UInt(_)),
    };
    let r = match op {
        ArithOp::Add => x.checked_add(y),
        ArithOp::Sub => x.checked_sub(y),
        ArithOp::Mul => x.checked_mul(y),
        ArithOp::IntDiv | ArithOp::Mod | ArithOp::Div if y == 0 => return division_by_zero(),
        ArithOp::IntDiv => x.checked_div(y),
        ArithOp::Mod => x.checked_rem(y),
        // Integer `/` is DECIMAL division; `binary` never sends it here.
        ArithOp::Div => None,
    };
    let overflow_kind = if unsigned {
        "BIGINT UNSIGNED"
    } else {
        "BIGINT"
    };
    let r = r.ok_or_else(|| out_of_range(overflow_kind, &expression(op, a, b)))?;
    int_result(r, unsigned, op, a, b)
}

/// Unary minus. `-BIGINT_MIN` is error 1690; an unsigned operand gives a signed
/// result (`-CAST(5 AS UNSIGNED)` is -5); strings negate as DOUBLEs.
pub fn negate(v: &Value) -> Result<Value> {
    let overflow = |v: &Value| {
        let text = String::from_utf8_lossy(&cast::to_text(v).unwrap_or_default()).into_owned();
        out_of_range("BIGINT", &format!("-({text})"))
    };
    Ok(match v {
        Value::Null => Value::Null,
        Value::Int(x) => Value::Int(x.checked_neg().ok_or_else(|| overflow(v))?),
        Value::UInt(x) => {
            let r = -i128::from(*x);
            Value::Int(i64::try_from(r).map_err(|_| overflow(v))?)
        }
        Value::Decimal(d) => Value::Decimal(decimal::neg(d)),
        Value::Float(f) => Value::Float(-f),
        Value::Double(f) => Value::Double(-f),
        Value::Bytes(_) => Value::Double(-to_f64(v).unwrap_or(0.0)),
        Value::Date(_) | Value::DateTime(_) | Value::Time(_) => {
            return negate(&temporal_to_number(v));
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use tarn_row::datetime::{Date, DateTime};

    fn ctx() -> FnContext {
        FnContext::new(DateTime::from_date(Date::new(2024, 1, 1).unwrap()))
    }

    fn dec(text: &str) -> Value {
        Value::Decimal(Decimal::parse(text).unwrap())
    }

    fn s(text: &str) -> Value {
        Value::Bytes(text.as_bytes().to_vec())
    }

    fn run(op: ArithOp, a: Value, b: Value) -> Result<Value> {
        binary(op, &a, &b, &ctx())
    }

    fn shown(r: Result<Value>) -> String {
        String::from_utf8(cast::to_text(&r.unwrap()).unwrap_or(b"NULL".to_vec())).unwrap()
    }

    use ArithOp::*;

    #[test]
    fn mysql_answers() {
        assert_eq!(shown(run(Add, Value::Int(1), Value::Int(2))), "3");
        assert_eq!(shown(run(Div, Value::Int(1), Value::Int(3))), "0.3333");
        assert_eq!(shown(run(Div, Value::Int(2), Value::Int(3))), "0.6667");
        assert_eq!(shown(run(Div, Value::Int(6), Value::Int(3))), "2.0000");
        assert_eq!(shown(run(Div, dec("1.5"), Value::Int(2))), "0.75000");
        assert_eq!(shown(run(Div, Value::Int(1), Value::Int(0))), "NULL");
        assert_eq!(shown(run(Mod, Value::Int(-7), Value::Int(2))), "-1");
        assert_eq!(shown(run(Mod, Value::Int(7), Value::Int(0))), "NULL");
        assert_eq!(shown(run(IntDiv, Value::Int(-7), Value::Int(2))), "-3");
        assert_eq!(shown(run(IntDiv, dec("7.5"), dec("0.5"))), "15");
        assert_eq!(
            shown(run(Add, Value::Double(0.1), Value::Double(0.2))),
            "0.30000000000000004"
        );
        assert_eq!(shown(run(Add, dec("0.1"), dec("0.2"))), "0.3");
        assert_eq!(shown(run(Mul, dec("1.10"), dec("2.5"))), "2.750");
        assert_eq!(shown(run(Add, s("1"), Value::Int(1))), "2");
        assert_eq!(shown(run(Add, s("1.5abc"), Value::Int(1))), "2.5");
        assert_eq!(shown(run(Mod, Value::Double(5.5), Value::Int(2))), "1.5");
        assert_eq!(shown(run(Add, Value::Null, Value::Int(1))), "NULL");
        let day = Value::Date(Date::new(2020, 1, 1).unwrap());
        assert_eq!(shown(run(Add, day, Value::Int(1))), "20200102");
        assert_eq!(shown(run(Sub, Value::UInt(5), Value::Int(3))), "2");
    }

    #[test]
    fn overflow_is_1690() {
        let e = run(Add, Value::Int(i64::MAX), Value::Int(1)).unwrap_err();
        assert_eq!(e.mysql_code(), 1690);
        assert_eq!(
            e.to_string(),
            "BIGINT value is out of range in '(9223372036854775807 + 1)'"
        );
        let e = run(Sub, Value::Int(1), Value::UInt(2)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "BIGINT UNSIGNED value is out of range in '(1 - 2)'"
        );
        assert!(run(Mul, Value::Int(i64::MIN), Value::Int(-1)).is_err());
        assert!(run(IntDiv, Value::Int(i64::MIN), Value::Int(-1)).is_err());
        assert_eq!(
            run(Mod, Value::Int(i64::MIN), Value::Int(-1)).unwrap(),
            Value::Int(0)
        );
        assert_eq!(
            run(Add, Value::UInt(u64::MAX - 1), Value::Int(1)).unwrap(),
            Value::UInt(u64::MAX)
        );
        assert!(run(Mul, Value::Double(1e300), Value::Double(1e300)).is_err());
        assert!(run(Mul, Value::UInt(u64::MAX), Value::UInt(u64::MAX)).is_err());
        assert!(negate(&Value::Int(i64::MIN)).is_err());
        assert_eq!(negate(&Value::UInt(5)).unwrap(), Value::Int(-5));
        assert_eq!(negate(&dec("1.5")).unwrap(), dec("-1.5"));
    }

    #[test]
    fn result_types() {
        let int = SqlType::Int { bits: 32 };
        let big = SqlType::BIGINT;
        let uint = SqlType::UInt { bits: 32 };
        assert_eq!(result_type(Add, int, int), big);
        assert_eq!(result_type(Sub, int, uint), SqlType::UInt { bits: 64 });
        assert_eq!(result_type(Mod, int, uint), big);
        assert_eq!(
            result_type(Div, int, int),
            SqlType::Decimal {
                precision: 14,
                scale: 4
            }
        );
        let d52 = SqlType::Decimal {
            precision: 5,
            scale: 2,
        };
        assert_eq!(
            result_type(Add, d52, d52),
            SqlType::Decimal {
                precision: 6,
                scale: 2
            }
        );
        assert_eq!(
            result_type(Mul, d52, d52),
            SqlType::Decimal {
                precision: 10,
                scale: 4
            }
        );
        assert_eq!(
            result_type(Div, d52, int),
            SqlType::Decimal {
                precision: 9,
                scale: 6
            }
        );
        assert_eq!(
            result_type(Add, d52, int),
            SqlType::Decimal {
                precision: 13,
                scale: 2
            }
        );
        assert_eq!(result_type(Add, int, SqlType::Double), SqlType::Double);
        assert_eq!(result_type(Add, int, SqlType::TEXT), SqlType::Double);
        assert_eq!(result_type(IntDiv, d52, d52), big);
    }
}
