//! Comparison with MySQL's coercion rules, the sort order, and grouping keys.
//!
//! [`compare`] decides how two values compare from their variants, as MySQL does from
//! their types:
//!
//! 1. NULL on either side: unknown (None).
//! 2. Two strings: by the collation's weights (case-insensitive collations compare
//!    uppercase folds with trailing spaces ignored, PAD SPACE; binary compares bytes).
//! 3. Two exact numbers (integers, signed or not, and DECIMALs): exactly.
//! 4. A FLOAT or DOUBLE with any number, or a string with a number: as DOUBLEs
//!    (the string read by its numeric prefix, `'abc'` is 0).
//! 5. Two dates/datetimes: chronologically (a DATE is its midnight).
//! 6. A date with a string: the string read as a datetime; when it is not one, both
//!    compare as binary strings.
//! 7. A date with a number: the number read as a datetime (`20200101`); when it is not
//!    one, both compare as DOUBLEs (the date as `YYYYMMDD[hhmmss]`).
//! 8. Two TIMEs: as durations. A TIME with a date: the TIME on the current date, as
//!    datetimes. A TIME with a string or number: that read as a TIME
//!    ([`super::time::to_time`]); when it is not one, as strings (a string) or as
//!    DOUBLEs (a number, the TIME as `HHMMSS`).
//!
//! [`sort_cmp`] is the total order ORDER BY, MIN and MAX use: NULL first, then
//! [`compare`]. [`group_key`] writes bytes that are equal exactly when [`compare`]
//! says Equal, for two values of one [`SqlType`] (the property test checks it); values
//! of different types may collide or differ as the rules above are not transitive
//! across types (`'1.0' = 1` and `1 = '1'` but `'1.0' <> '1'`). So a hash join (or
//! an IN subquery's set) over an `=` of two types whose values key differently
//! first converts both sides to the form `=` compares them in ([`key_form`],
//! [`to_key_form`]); after that the keys agree with `compare` again.
//!
//! Key layout: a tag byte, then
//!
//! | tag | values | bytes |
//! |---|---|---|
//! | 0 | NULL | none |
//! | 1 | integers, and DECIMALs and DOUBLEs with an integral value that fits an `i128` | `i128` big-endian, sign bit flipped |
//! | 2 | other DECIMALs | length (u32 BE), then the normalised decimal text |
//! | 3 | other DOUBLEs and FLOATs | the `f64` bits big-endian |
//! | 4 | DATE, DATETIME | microseconds since 0000-01-01 (u64 BE) |
//! | 5 | strings | length (u32 BE), then the collation weight |
//! | 6 | TIME | microseconds (i64 BE, sign bit flipped) |
//!
//! Every key is self-delimiting, so keys of several columns concatenate.

use std::cmp::Ordering;

use tarn_row::datetime::{DateTime, Time};
use tarn_row::decimal::Decimal;
use tarn_row::key::weight;
use tarn_row::types::{Collation, ColumnType};
use tarn_row::value::Value;

use super::cast::{self, to_f64};
use super::time;
use crate::types::SqlType;

fn exact_int(v: &Value) -> Option<i128> {
    match v {
        Value::Int(x) => Some(i128::from(*x)),
        Value::UInt(x) => Some(i128::from(*x)),
        _ => None,
    }
}

fn exact_decimal(v: &Value) -> Option<Decimal> {
    match v {
        Value::Int(x) => Some(Decimal::from(*x)),
        Value::UInt(x) => Some(Decimal::from(*x)),
        Value::Decimal(d) => Some(*d),
        _ => None,
    }
}

fn is_number(v: &Value) -> bool {
    matches!(
        v,
        Value::Int(_) | Value::UInt(_) | Value::Decimal(_) | Value::Float(_) | Value::Double(_)
    )
}

fn temporal(v: &Value) -> Option<DateTime> {
    match v {
        Value::Date(d) => Some(DateTime::from_date(*d)),
        Value::DateTime(dt) => Some(*dt),
        _ => None,
    }
}

/// Two DOUBLEs, with -0.0 equal to 0.0 (and a total order should a NaN appear).
pub fn cmp_f64(a: f64, b: f64) -> Ordering {
    a.partial_cmp(&b).unwrap_or_else(|| a.total_cmp(&b))
}

/// Two strings under `collation`.
pub fn cmp_strings(a: &[u8], b: &[u8], collation: Collation) -> Ordering {
    match collation {
        Collation::Binary => a.cmp(b),
        Collation::CaseInsensitive => {
            if let Some(order) = cmp_ascii_case_insensitive(a, b) {
                return order;
            }
            let ty = ColumnType::Text;
            weight(ty, collation, a).cmp(&weight(ty, collation, b))
        }
    }
}

/// The order of the weights of `a` and `b` (upper-cased, trailing spaces dropped),
/// found in one pass up to their first difference without building them; None where
/// that takes the general path (a byte past ASCII, or a space against another byte).
fn cmp_ascii_case_insensitive(a: &[u8], b: &[u8]) -> Option<Ordering> {
    let common = a.len().min(b.len());
    for i in 0..common {
        let (x, y) = (a[i], b[i]);
        if x == y {
            if !x.is_ascii() {
                return None;
            }
            continue;
        }
        // A space may be trailing (not in the weight): the general path decides.
        if !x.is_ascii() || !y.is_ascii() || x == b' ' || y == b' ' {
            return None;
        }
        let (ux, uy) = (x.to_ascii_uppercase(), y.to_ascii_uppercase());
        if ux != uy {
            return Some(ux.cmp(&uy));
        }
    }
    // One is a prefix of the other (upper-cased): equal if the rest is spaces, else
    // the longer one's weight is longer.
    let (longer, order) = if a.len() > b.len() {
        (&a[common..], Ordering::Greater)
    } else {
        (&b[common..], Ordering::Less)
    };
    if longer.iter().all(|&c| c == b' ') {
        Some(Ordering::Equal)
    } else {
        Some(order)
    }
}

/// MySQL comparison with its coercion rules (see the module documentation); None when
/// either side is NULL. `collation` applies when both sides are strings.
pub fn compare(a: &Value, b: &Value, collation: Collation) -> Option<Ordering> {
    if a.is_null() || b.is_null() {
        return None;
    }
    if let (Value::Bytes(x), Value::Bytes(y)) = (a, b) {
        return Some(cmp_strings(x, y, collation));
    }
    if let (Some(x), Some(y)) = (exact_int(a), exact_int(b)) {
        return Some(x.cmp(&y));
    }
    if let (Some(x), Some(y)) = (exact_decimal(a), exact_decimal(b)) {
        return Some(x.cmp(&y));
    }
    match (a, b) {
        (Value::Time(x), Value::Time(y)) => return Some(x.cmp(y)),
        (Value::Time(x), other) => return Some(time_vs_other(x, a, other)),
        (other, Value::Time(y)) => return Some(time_vs_other(y, b, other).reverse()),
        _ => {}
    }
    match (temporal(a), temporal(b)) {
        (Some(x), Some(y)) => return Some(x.cmp(&y)),
        (Some(x), None) => return Some(temporal_vs_other(&x, a, b)),
        (None, Some(y)) => return Some(temporal_vs_other(&y, b, a).reverse()),
        (None, None) => {}
    }
    Some(cmp_f64(to_f64(a)?, to_f64(b)?))
}

/// A date `t` (the value `tv`) against a value `other` that is not a date.
fn temporal_vs_other(t: &DateTime, tv: &Value, other: &Value) -> Ordering {
    match other {
        Value::Bytes(bytes) => match cast::parse_datetime(bytes) {
            Some(parsed) => t.cmp(&parsed.value),
            None => cast::to_text(tv).unwrap_or_default().as_slice().cmp(bytes),
        },
        _ if is_number(other) => match cast::to_datetime(other) {
            Some(dt) => t.cmp(&dt),
            None => cmp_f64(to_f64(tv).unwrap_or(0.0), to_f64(other).unwrap_or(0.0)),
        },
        _ => Ordering::Equal,
    }
}

/// A TIME `t` (the value `tv`) against a value `other` that is not a TIME.
fn time_vs_other(t: &Time, tv: &Value, other: &Value) -> Ordering {
    match other {
        Value::Date(_) | Value::DateTime(_) => match (cast::to_datetime(tv), temporal(other)) {
            (Some(x), Some(y)) => x.cmp(&y),
            _ => Ordering::Equal,
        },
        Value::Bytes(bytes) => match time::parse_time(bytes) {
            Some(parsed) => t.cmp(&parsed.value),
            None => cast::to_text(tv).unwrap_or_default().as_slice().cmp(bytes),
        },
        _ => match time::to_time(other) {
            Some(o) => t.cmp(&o),
            None => cmp_f64(to_f64(tv).unwrap_or(0.0), to_f64(other).unwrap_or(0.0)),
        },
    }
}

/// The total order for ORDER BY, MIN, MAX and sorting: NULL first, then [`compare`].
pub fn sort_cmp(a: &Value, b: &Value, collation: Collation) -> Ordering {
    match (a.is_null(), b.is_null()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Less,
        (false, true) => Ordering::Greater,
        (false, false) => compare(a, b, collation).unwrap_or(Ordering::Equal),
    }
}

fn push_int_key(v: i128, out: &mut Vec<u8>) {
    out.push(1);
    out.extend_from_slice(&((v as u128) ^ (1 << 127)).to_be_bytes());
}

fn push_len_prefixed(tag: u8, bytes: &[u8], out: &mut Vec<u8>) {
    out.push(tag);
    out.extend_from_slice(&(bytes.len() as u32).to_be_bytes());
    out.extend_from_slice(bytes);
}

fn push_f64_key(f: f64, out: &mut Vec<u8>) {
    // Below 2^100 an integral double converts to i128 exactly.
    if f.fract() == 0.0 && f.abs() < 1.2676506002282294e30 {
        push_int_key(f as i128, out);
    } else {
        out.push(3);
        out.extend_from_slice(&f.to_bits().to_be_bytes());
    }
}

/// Appends a byte key such that two values of the same [`SqlType`] are equal under
/// [`compare`] iff their keys are equal (see the module documentation for the layout).
/// Used for GROUP BY, DISTINCT, hash joins and IN lists.
pub fn group_key(v: &Value, collation: Collation, out: &mut Vec<u8>) {
    match v {
        Value::Null => out.push(0),
        Value::Int(x) => push_int_key(i128::from(*x), out),
        Value::UInt(x) => push_int_key(i128::from(*x), out),
        Value::Decimal(d) => {
            let n = d.normalized();
            match n.to_i128_mantissa() {
                Some(m) if n.scale() == 0 => push_int_key(m, out),
                _ => push_len_prefixed(2, n.to_string().as_bytes(), out),
            }
        }
        Value::Float(f) => push_f64_key(f64::from(*f), out),
        Value::Double(f) => push_f64_key(*f, out),
        Value::Date(d) => {
            out.push(4);
            out.extend_from_slice(&DateTime::from_date(*d).to_micros().to_be_bytes());
        }
        Value::DateTime(dt) => {
            out.push(4);
            out.extend_from_slice(&dt.to_micros().to_be_bytes());
        }
        Value::Bytes(bytes) => match collation {
            Collation::Binary => push_len_prefixed(5, bytes, out),
            Collation::CaseInsensitive => {
                push_len_prefixed(5, &weight(ColumnType::Text, collation, bytes), out)
            }
        },
        Value::Time(t) => {
            out.push(6);
            out.extend_from_slice(&((t.micros() as u64) ^ (1 << 63)).to_be_bytes());
        }
    }
}

fn int_digits(bits: u8, unsigned: bool) -> u8 {
    match (bits, unsigned) {
        (8, _) => 3,
        (16, _) => 5,
        (32, _) => 10,
        (_, false) => 19,
        (_, true) => 20,
    }
}

/// The precision and scale an exact numeric type has as a DECIMAL; a YEAR is a
/// SMALLINT UNSIGNED and a TIME(fsp) the number `[-]HHHMMSS[.f]` (what SUM and AVG
/// add up).
pub fn decimal_shape(t: SqlType) -> Option<(u8, u8)> {
    match t.numeric_form() {
        SqlType::Int { bits } => Some((int_digits(bits, false), 0)),
        SqlType::UInt { bits } => Some((int_digits(bits, true), 0)),
        SqlType::Decimal { precision, scale } => Some((precision, scale)),
        SqlType::Time { fsp } => Some((7 + fsp, fsp)),
        _ => None,
    }
}

/// The common type two operands are compared in, following the rules of [`compare`]:
/// NULL takes the other side's type; two strings compare as text (a binary string on
/// either side makes it a BLOB, compared bytewise); two integers as BIGINT (or BIGINT
/// UNSIGNED when both are unsigned, or DECIMAL(20,0) when the signs differ); exact
/// numbers as the DECIMAL that holds both; anything with a FLOAT or DOUBLE, and
/// strings with numbers, as DOUBLE; dates as DATE when both are, else DATETIME with
/// the larger fsp; TIMEs as TIME, and a TIME with a date as DATETIME. YEAR is an
/// integer here.
pub fn comparison_type(a: SqlType, b: SqlType) -> SqlType {
    use SqlType::*;
    let (a, b) = (a.plain().numeric_form(), b.plain().numeric_form());
    match (a, b) {
        (Null, other) | (other, Null) => other,
        (Time { fsp: x }, Time { fsp: y }) => Time { fsp: x.max(y) },
        (Time { fsp }, t) | (t, Time { fsp }) if !t.is_temporal() => Time { fsp },
        _ if a.is_string() && b.is_string() && (a.is_binary_string() || b.is_binary_string()) => {
            SqlType::BLOB
        }
        // The binder compares JSON by its comparison key (`JsonCast::CompareKey`);
        // JSON text met anywhere else compares bytewise.
        (Json, _) | (_, Json) => SqlType::BLOB,
        (Text { .. }, Text { .. }) => a,
        (Int { .. }, Int { .. }) => SqlType::BIGINT,
        (UInt { .. }, UInt { .. }) => UInt { bits: 64 },
        (Int { .. } | UInt { .. }, Int { .. } | UInt { .. }) => Decimal {
            precision: 20,
            scale: 0,
        },
        (Date, Date) => Date,
        _ if a.is_temporal() || b.is_temporal() => {
            let fsp = |t: SqlType| match t {
                DateTime { fsp, .. } | Time { fsp } => fsp,
                _ => 0,
            };
            DateTime {
                fsp: fsp(a).max(fsp(b)),
                timestamp: false,
            }
        }
        _ => match (decimal_shape(a), decimal_shape(b)) {
            (Some((pa, sa)), Some((pb, sb))) => {
                let scale = sa.max(sb);
                let integer = (pa - sa).max(pb - sb);
                Decimal {
                    precision: (integer + scale).min(65),
                    scale,
                }
            }
            _ => Double,
        },
    }
}

/// The form both sides of an `=` are hashed in when their types differ in a way
/// [`group_key`] alone would not follow: [`compare`] converts one side (or both) to
/// the other's kind, so equal values of the two types can have different keys
/// (`'02'` and `2`, DECIMAL `0.1` and DOUBLE `0.1`, `'2020-1-1'` and a DATE). A hash
/// join or an IN subquery's set converts each side's values with [`to_key_form`]
/// before keying them; then keys are equal exactly when `=` holds. The conversion
/// is `compare`'s own, so it is exact (the property test checks it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyForm {
    /// A number with a string, or an exact number with a FLOAT or DOUBLE: as DOUBLEs.
    Double,
    /// A DATE or DATETIME with a string or number, or with a TIME: as DATETIMEs.
    DateTime,
    /// A TIME with a string or number: as TIMEs.
    Time,
}

impl KeyForm {
    /// The type of the values [`to_key_form`] returns.
    pub fn sql_type(self) -> SqlType {
        match self {
            KeyForm::Double => SqlType::Double,
            KeyForm::DateTime => SqlType::DateTime {
                fsp: 6,
                timestamp: false,
            },
            KeyForm::Time => SqlType::Time { fsp: 6 },
        }
    }
}

/// The [`KeyForm`] an `=` between types `a` and `b` hashes its sides in; None when
/// their values key alike already (same kinds: two strings, two exact numbers, two
/// floating-point numbers, two dates, two TIMEs; NULL or JSON on either side).
pub fn key_form(a: SqlType, b: SqlType) -> Option<KeyForm> {
    use SqlType::*;
    let (a, b) = (a.plain().numeric_form(), b.plain().numeric_form());
    let exact = |t: SqlType| matches!(t, Int { .. } | UInt { .. } | Decimal { .. });
    let float = |t: SqlType| matches!(t, Float | Double);
    let time = |t: SqlType| matches!(t, Time { .. });
    match (a, b) {
        (Null, _) | (_, Null) | (Json, _) | (_, Json) => None,
        _ if a.is_string() && b.is_string() => None,
        _ if (exact(a) && exact(b)) || (float(a) && float(b)) => None,
        _ if (a.is_temporal() && b.is_temporal()) || (time(a) && time(b)) => None,
        _ if (time(a) && b.is_temporal()) || (a.is_temporal() && time(b)) => {
            Some(KeyForm::DateTime)
        }
        _ if time(a) || time(b) => Some(KeyForm::Time),
        _ if a.is_temporal() || b.is_temporal() => Some(KeyForm::DateTime),
        _ => Some(KeyForm::Double),
    }
}

/// `v` in `form`, converted as [`compare`] converts it; NULL when it is not a value of
/// that form (a string that is no date against a DATE: `=` never holds then, as
/// `compare` falls back to comparing texts that cannot be equal).
pub fn to_key_form(v: &Value, form: KeyForm) -> Value {
    let converted = match (form, v) {
        (_, Value::Null) => return Value::Null,
        (KeyForm::Double, Value::Double(_))
        | (KeyForm::DateTime, Value::Date(_) | Value::DateTime(_))
        | (KeyForm::Time, Value::Time(_)) => return v.clone(),
        (KeyForm::Double, _) => to_f64(v).map(Value::Double),
        (KeyForm::DateTime, _) => cast::to_datetime(v).map(Value::DateTime),
        (KeyForm::Time, _) => time::to_time(v).map(Value::Time),
    };
    converted.unwrap_or(Value::Null)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tarn_common::rng::{Rng, test_seed};
    use tarn_row::datetime::Date;

    fn s(text: &str) -> Value {
        Value::Bytes(text.as_bytes().to_vec())
    }

    fn dec(text: &str) -> Value {
        Value::Decimal(Decimal::parse(text).unwrap())
    }

    const CI: Collation = Collation::CaseInsensitive;
    use Ordering::*;

    /// The ASCII path of `cmp_strings` orders as the weights do.
    #[test]
    fn case_insensitive_ascii_agrees_with_weights() {
        let mut rng = Rng::new(test_seed("case_insensitive_ascii_agrees_with_weights"));
        let alphabet = b"aAbBzZ _-09~!\x01\x7f";
        let string = |rng: &mut Rng| -> Vec<u8> {
            let len = rng.below(6) as usize;
            let mut v: Vec<u8> = (0..len)
                .map(|_| alphabet[rng.below(alphabet.len() as u64) as usize])
                .collect();
            if rng.percent(10) {
                v.extend_from_slice("é".as_bytes());
            }
            v
        };
        for _ in 0..20_000 {
            let (a, b) = (string(&mut rng), string(&mut rng));
            let ty = ColumnType::Text;
            let expected = weight(ty, CI, &a).cmp(&weight(ty, CI, &b));
            assert_eq!(cmp_strings(&a, &b, CI), expected, "{a:?} {b:?}");
        }
    }

    #[test]
    fn mysql_comparisons() {
        assert_eq!(compare(&Value::Null, &Value::Int(1), CI), None);
        assert_eq!(compare(&s("abc"), &s("ABC "), CI), Some(Equal));
        assert_eq!(
            compare(&s("abc"), &s("ABC"), Collation::Binary),
            Some(Greater)
        );
        assert_eq!(compare(&s("a"), &s("b"), CI), Some(Less));
        assert_eq!(
            compare(&Value::Int(-1), &Value::UInt(u64::MAX), CI),
            Some(Less)
        );
        assert_eq!(compare(&Value::Int(1), &dec("1.00"), CI), Some(Equal));
        assert_eq!(compare(&dec("0.1"), &Value::Double(0.1), CI), Some(Equal));
        assert_eq!(
            compare(&Value::Double(-0.0), &Value::Int(0), CI),
            Some(Equal)
        );
        assert_eq!(compare(&s("1.0"), &Value::Int(1), CI), Some(Equal));
        assert_eq!(compare(&s("abc"), &Value::Int(0), CI), Some(Equal));
        assert_eq!(compare(&s("10"), &Value::Int(9), CI), Some(Greater));
        // Strings compare as strings: '10' < '9'.
        assert_eq!(compare(&s("10"), &s("9"), CI), Some(Less));
        let day = Value::Date(Date::new(2020, 1, 1).unwrap());
        let dt = Value::DateTime(DateTime::from_date(Date::new(2020, 1, 1).unwrap()));
        assert_eq!(compare(&day, &dt, CI), Some(Equal));
        assert_eq!(compare(&day, &s("2020-01-01"), CI), Some(Equal));
        assert_eq!(compare(&day, &s("2020-1-1 00:00:00"), CI), Some(Equal));
        assert_eq!(compare(&s("2019-12-31"), &day, CI), Some(Less));
        assert_eq!(compare(&day, &Value::Int(20200101), CI), Some(Equal));
        assert_eq!(compare(&day, &Value::Int(20200102), CI), Some(Less));
        assert_eq!(sort_cmp(&Value::Null, &Value::Int(i64::MIN), CI), Less);
        assert_eq!(sort_cmp(&Value::Null, &Value::Null, CI), Equal);
    }

    #[test]
    fn comparison_types() {
        let int = SqlType::Int { bits: 32 };
        let uint = SqlType::UInt { bits: 64 };
        assert_eq!(comparison_type(int, SqlType::Null), int);
        assert_eq!(comparison_type(int, int), SqlType::BIGINT);
        assert_eq!(
            comparison_type(int, uint),
            SqlType::Decimal {
                precision: 20,
                scale: 0
            }
        );
        assert_eq!(
            comparison_type(
                int,
                SqlType::Decimal {
                    precision: 5,
                    scale: 2
                }
            ),
            SqlType::Decimal {
                precision: 12,
                scale: 2
            }
        );
        assert_eq!(comparison_type(int, SqlType::TEXT), SqlType::Double);
        assert_eq!(comparison_type(SqlType::Double, int), SqlType::Double);
        assert_eq!(comparison_type(SqlType::TEXT, SqlType::TEXT), SqlType::TEXT);
        assert_eq!(comparison_type(SqlType::Date, SqlType::Date), SqlType::Date);
        assert_eq!(
            comparison_type(SqlType::Date, SqlType::TEXT),
            SqlType::DateTime {
                fsp: 0,
                timestamp: false
            }
        );
    }

    fn random_value(rng: &mut Rng, kind: u64) -> Value {
        match kind {
            0 => Value::Int(rng.below(7) as i64 - 3),
            1 => Value::UInt(rng.below(5)),
            2 => {
                let m = rng.below(40) as i128 - 20;
                Value::Decimal(
                    Decimal::from_i128(m * 10i128.pow(rng.below(3) as u32), rng.below(3) as u8)
                        .unwrap(),
                )
            }
            3 => Value::Double([-0.0, 0.0, 0.5, 1.0, -1.0, 2.0, 1e300, 0.1][rng.below(8) as usize]),
            4 => Value::Float([-0.0f32, 0.0, 0.5, 1.0, 0.1][rng.below(5) as usize]),
            5 => {
                let words = [
                    "a", "A", "a ", "b", "B  ", "", " ", "ä", "Ä", "ab", "aB", "a\t",
                ];
                s(words[rng.below(words.len() as u64) as usize])
            }
            6 => Value::Date(Date::from_days(730_000 + rng.below(3) as u32).unwrap()),
            _ => {
                let base = DateTime::from_date(Date::from_days(730_000).unwrap()).to_micros();
                Value::DateTime(DateTime::from_micros(base + rng.below(3) * 500_000).unwrap())
            }
        }
    }

    /// Same-typed values: keys equal iff compare says Equal; with NULLs, keys equal iff
    /// both are NULL.
    #[test]
    fn group_key_agrees_with_compare() {
        let mut rng = Rng::new(test_seed("group_key_agrees_with_compare"));
        for _ in 0..20_000 {
            let kind = rng.below(8);
            let collation = if rng.percent(50) {
                CI
            } else {
                Collation::Binary
            };
            let pick = |rng: &mut Rng| {
                if rng.percent(5) {
                    Value::Null
                } else {
                    random_value(rng, kind)
                }
            };
            let (a, b) = (pick(&mut rng), pick(&mut rng));
            let (mut ka, mut kb) = (Vec::new(), Vec::new());
            group_key(&a, collation, &mut ka);
            group_key(&b, collation, &mut kb);
            let equal = match (a.is_null(), b.is_null()) {
                (true, true) => true,
                (false, false) => compare(&a, &b, collation) == Some(Equal),
                _ => false,
            };
            assert_eq!(ka == kb, equal, "{a:?} vs {b:?} ({collation:?})");
            assert_eq!(
                sort_cmp(&a, &b, collation) == Equal,
                equal,
                "{a:?} vs {b:?}"
            );
        }
    }

    /// Values of two different types, each side converted to the pair's key form
    /// (when it has one): hash join keys are equal iff `compare` says Equal.
    #[test]
    fn key_forms_agree_with_compare() {
        let mut rng = Rng::new(test_seed("key_forms_agree_with_compare"));
        // 2020-01-01 and 2020-01-02.
        let day = |d: u32| Date::new(2020, 1, 1 + d as u8).unwrap();
        let types = [
            SqlType::BIGINT,
            SqlType::Decimal {
                precision: 10,
                scale: 2,
            },
            SqlType::Double,
            SqlType::TEXT,
            SqlType::Date,
            SqlType::DateTime {
                fsp: 0,
                timestamp: false,
            },
            SqlType::Time { fsp: 0 },
        ];
        const STRINGS: [&str; 18] = [
            "1",
            "01",
            "1.0",
            " 1",
            "x",
            "0",
            "2.5",
            "2.50",
            "0.1",
            "3abc",
            "10:10:10",
            "101010",
            "2020-01-01",
            "2020-1-1",
            "20200101",
            "2020-01-02 10:00:00",
            "2020-01-01 00:00:00",
            "abc",
        ];
        let value = |rng: &mut Rng, ty: SqlType| -> Value {
            let date = Value::Date(day(rng.below(2) as u32));
            let date_number = 20_200_101;
            match ty {
                SqlType::Int { .. } => Value::Int(
                    [0, 1, 2, 3, 101010, date_number, 9_007_199_254_740_993][rng.below(7) as usize],
                ),
                SqlType::Decimal { .. } => {
                    dec(["0.10", "1.00", "2.50", "3.00", "101010.00"][rng.below(5) as usize])
                }
                SqlType::Double => Value::Double(
                    [0.1, 1.0, 2.5, 3.0, 101010.0, 9_007_199_254_740_992.0][rng.below(6) as usize],
                ),
                SqlType::Date => date,
                SqlType::DateTime { .. } => {
                    let base = DateTime::from_date(day(rng.below(2) as u32)).to_micros();
                    Value::DateTime(
                        DateTime::from_micros(base + rng.below(2) * 36_000_000_000).unwrap(),
                    )
                }
                SqlType::Time { .. } => Value::Time(
                    time::parse_time(
                        ["10:10:10", "0:0:1", "00:00:00"][rng.below(3) as usize].as_bytes(),
                    )
                    .unwrap()
                    .value,
                ),
                _ => s(STRINGS[rng.below(STRINGS.len() as u64) as usize]),
            }
        };
        for _ in 0..20_000 {
            let ta = types[rng.below(types.len() as u64) as usize];
            let tb = types[rng.below(types.len() as u64) as usize];
            let (a, b) = (value(&mut rng, ta), value(&mut rng, tb));
            let key = |v: &Value| {
                let v = match key_form(ta, tb) {
                    Some(form) => to_key_form(v, form),
                    None => v.clone(),
                };
                let mut out = Vec::new();
                crate::exec::join_key(&v, CI, &mut out);
                (v.is_null(), out)
            };
            let ((null_a, ka), (null_b, kb)) = (key(&a), key(&b));
            let equal = compare(&a, &b, CI) == Some(Equal);
            assert_eq!(
                !null_a && !null_b && ka == kb,
                equal,
                "{a:?} ({ta:?}) vs {b:?} ({tb:?})"
            );
        }
    }

    #[test]
    fn integral_numbers_share_keys_across_types() {
        let key = |v: &Value| {
            let mut out = Vec::new();
            group_key(v, CI, &mut out);
            out
        };
        assert_eq!(key(&Value::Int(5)), key(&Value::UInt(5)));
        assert_eq!(key(&Value::Int(5)), key(&dec("5.000")));
        assert_eq!(key(&Value::Int(5)), key(&Value::Double(5.0)));
        assert_ne!(key(&dec("0.5")), key(&dec("0.50")).split_off(1));
        assert_eq!(key(&dec("0.5")), key(&dec("0.50")));
    }
}
