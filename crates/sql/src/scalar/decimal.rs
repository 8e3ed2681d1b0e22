//! Exact DECIMAL arithmetic.
//!
//! `tarn_row::Decimal` stores up to 65 digits but has no arithmetic; this module adds
//! it. Operands are taken apart into an `i128` mantissa and a scale (the value is
//! `mantissa / 10^scale`), so **arithmetic is exact up to 38 digits**: an operand or a
//! result whose mantissa does not fit an `i128` is error 1690 ("DECIMAL value is out
//! of range"), where MySQL would go on to 65 digits. Intermediate products and
//! dividends are widened to 256 bits, so only the operands and the final result are
//! bound by the 38 digits.
//!
//! Result scales follow MySQL:
//!
//! | operation | scale of the result |
//! |---|---|
//! | `a + b`, `a - b`, `a % b` | `max(sa, sb)` |
//! | `a * b` | `min(sa + sb, 30)`, rounded half away from zero |
//! | `a / b` | `min(sa + div_precision_increment, 30)`, rounded half away from zero |
//! | `a DIV b` | an integer, truncated toward zero |
//!
//! Division and remainder by zero return `None` (NULL in SQL, with a warning later).
//! Rounding is always half away from zero, as MySQL's is for exact values.

use tarn_common::Result;
use tarn_row::decimal::Decimal;
use tarn_row::limits::DECIMAL_SCALE_MAX;

use super::out_of_range;

/// Decimal digits an `i128` mantissa always holds (the bound of this module).
pub const DECIMAL_ARITH_DIGITS_MAX: u32 = 38;

const POW10_U64: [u64; 20] = {
    let mut table = [1u64; 20];
    let mut i = 1;
    while i < 20 {
        table[i] = table[i - 1] * 10;
        i += 1;
    }
    table
};

/// `10^exponent` if it fits an `i128`.
pub fn pow10(exponent: u32) -> Option<i128> {
    10i128.checked_pow(exponent)
}

/// A 256-bit unsigned integer (little-endian limbs) for widened intermediates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Wide([u64; 4]);

impl Wide {
    fn from_u128(value: u128) -> Wide {
        Wide([value as u64, (value >> 64) as u64, 0, 0])
    }

    /// The full product of two `u128`s.
    fn mul_u128(a: u128, b: u128) -> Wide {
        let (a_lo, a_hi) = (a as u64 as u128, a >> 64);
        let (b_lo, b_hi) = (b as u64 as u128, b >> 64);
        let mut out = Wide([0; 4]);
        for (i, x) in [a_lo, a_hi].into_iter().enumerate() {
            let mut carry = 0u128;
            for (j, y) in [b_lo, b_hi].into_iter().enumerate() {
                let t = x * y + u128::from(out.0[i + j]) + carry;
                out.0[i + j] = t as u64;
                carry = t >> 64;
            }
            let mut k = i + 2;
            while carry != 0 && k < 4 {
                let t = u128::from(out.0[k]) + carry;
                out.0[k] = t as u64;
                carry = t >> 64;
                k += 1;
            }
        }
        out
    }

    fn checked_mul_small(self, multiplier: u64) -> Option<Wide> {
        let mut carry = 0u128;
        let mut out = [0u64; 4];
        for (o, limb) in out.iter_mut().zip(self.0) {
            let t = u128::from(limb) * u128::from(multiplier) + carry;
            *o = t as u64;
            carry = t >> 64;
        }
        (carry == 0).then_some(Wide(out))
    }

    fn checked_scale_up(self, mut exponent: u32) -> Option<Wide> {
        let mut value = self;
        while exponent > 0 {
            let step = exponent.min(19);
            value = value.checked_mul_small(POW10_U64[step as usize])?;
            exponent -= step;
        }
        Some(value)
    }

    fn to_u128(self) -> Option<u128> {
        (self.0[2] == 0 && self.0[3] == 0)
            .then(|| u128::from(self.0[0]) | (u128::from(self.0[1]) << 64))
    }

    fn bit(&self, index: usize) -> bool {
        self.0[index / 64] >> (index % 64) & 1 == 1
    }

    /// `(self / divisor, self % divisor)` by binary long division; `divisor > 0`.
    fn divrem_u128(self, divisor: u128) -> (Wide, u128) {
        debug_assert!(divisor > 0);
        if let Some(small) = self.to_u128() {
            return (Wide::from_u128(small / divisor), small % divisor);
        }
        let mut quotient = Wide([0; 4]);
        let mut rem = 0u128;
        for index in (0..256).rev() {
            let overflow = rem >> 127 == 1;
            rem = (rem << 1) | u128::from(self.bit(index));
            if overflow || rem >= divisor {
                rem = rem.wrapping_sub(divisor);
                quotient.0[index / 64] |= 1 << (index % 64);
            }
        }
        (quotient, rem)
    }

    /// `self / 10^exponent` rounded half away from zero (on the magnitude).
    fn div_pow10_round(self, exponent: u32) -> Wide {
        let mut value = self;
        let mut remaining = exponent;
        // Divide by all but the last power of ten, truncating, then round on the last.
        while remaining > 1 {
            let step = (remaining - 1).min(19);
            value = value.divrem_u128(u128::from(POW10_U64[step as usize])).0;
            remaining -= step;
        }
        if remaining == 1 {
            let (q, r) = value.divrem_u128(10);
            value = if r >= 5 {
                q.checked_add_one().unwrap_or(q)
            } else {
                q
            };
        }
        value
    }

    fn checked_add_one(self) -> Option<Wide> {
        let mut out = self.0;
        for limb in out.iter_mut() {
            let (sum, carry) = limb.overflowing_add(1);
            *limb = sum;
            if !carry {
                return Some(Wide(out));
            }
        }
        None
    }
}

/// The expression text used in out-of-range errors.
fn expr(a: &Decimal, op: &str, b: &Decimal) -> String {
    format!("({a} {op} {b})")
}

/// `d` as `(mantissa, scale)`; a mantissa beyond `i128` is error 1690.
pub fn parts(d: &Decimal) -> Result<(i128, u8)> {
    match d.to_i128_mantissa() {
        Some(m) => Ok((m, d.scale())),
        None => Err(out_of_range("DECIMAL", &d.to_string())),
    }
}

/// `mantissa / 10^scale`; the scale must be at most 30.
pub fn make(mantissa: i128, scale: u8, expression: impl FnOnce() -> String) -> Result<Decimal> {
    Decimal::from_i128(mantissa, scale).map_err(|_| out_of_range("DECIMAL", &expression()))
}

/// `m` rescaled from scale `from` up to scale `to` (`to >= from`), if it fits.
fn scale_up(m: i128, from: u8, to: u8) -> Option<i128> {
    m.checked_mul(pow10(u32::from(to - from))?)
}

/// Both operands at the larger of their scales.
fn aligned(a: &Decimal, b: &Decimal, op: &str) -> Result<(i128, i128, u8)> {
    let (am, sa) = parts(a)?;
    let (bm, sb) = parts(b)?;
    let s = sa.max(sb);
    match (scale_up(am, sa, s), scale_up(bm, sb, s)) {
        (Some(x), Some(y)) => Ok((x, y, s)),
        _ => Err(out_of_range("DECIMAL", &expr(a, op, b))),
    }
}

pub fn add(a: &Decimal, b: &Decimal) -> Result<Decimal> {
    let (x, y, s) = aligned(a, b, "+")?;
    let sum = x
        .checked_add(y)
        .ok_or_else(|| out_of_range("DECIMAL", &expr(a, "+", b)))?;
    make(sum, s, || expr(a, "+", b))
}

pub fn sub(a: &Decimal, b: &Decimal) -> Result<Decimal> {
    let (x, y, s) = aligned(a, b, "-")?;
    let difference = x
        .checked_sub(y)
        .ok_or_else(|| out_of_range("DECIMAL", &expr(a, "-", b)))?;
    make(difference, s, || expr(a, "-", b))
}

/// A signed result from a widened magnitude, if it fits an `i128`.
fn signed(magnitude: Wide, negative: bool) -> Option<i128> {
    let m = i128::try_from(magnitude.to_u128()?).ok()?;
    Some(if negative { -m } else { m })
}

pub fn mul(a: &Decimal, b: &Decimal) -> Result<Decimal> {
    let (am, sa) = parts(a)?;
    let (bm, sb) = parts(b)?;
    let scale = sa + sb;
    let mut product = Wide::mul_u128(am.unsigned_abs(), bm.unsigned_abs());
    let result_scale = scale.min(DECIMAL_SCALE_MAX);
    if scale > result_scale {
        product = product.div_pow10_round(u32::from(scale - result_scale));
    }
    let m = signed(product, (am < 0) != (bm < 0))
        .ok_or_else(|| out_of_range("DECIMAL", &expr(a, "*", b)))?;
    make(m, result_scale, || expr(a, "*", b))
}

/// `a / b` with `min(scale(a) + increment, 30)` fraction digits, rounded half away from
/// zero; None when `b` is zero.
pub fn div(a: &Decimal, b: &Decimal, increment: u8) -> Result<Option<Decimal>> {
    let (am, sa) = parts(a)?;
    let (bm, sb) = parts(b)?;
    if bm == 0 {
        return Ok(None);
    }
    let result_scale = sa.saturating_add(increment).min(DECIMAL_SCALE_MAX);
    // a/b = am * 10^(sb + rs - sa) / bm, in units of 10^-rs.
    let exponent = u32::from(sb) + u32::from(result_scale) - u32::from(sa);
    let too_large = || out_of_range("DECIMAL", &expr(a, "/", b));
    let numerator = Wide::from_u128(am.unsigned_abs())
        .checked_scale_up(exponent)
        .ok_or_else(too_large)?;
    let divisor = bm.unsigned_abs();
    let (mut quotient, rem) = numerator.divrem_u128(divisor);
    // Round half away from zero: rem >= divisor - rem, without overflow.
    if rem >= divisor - rem {
        quotient = quotient.checked_add_one().ok_or_else(too_large)?;
    }
    let m = signed(quotient, (am < 0) != (bm < 0)).ok_or_else(too_large)?;
    make(m, result_scale, || expr(a, "/", b)).map(Some)
}

/// `a % b` (the sign of `a`, scale `max(sa, sb)`); None when `b` is zero.
pub fn rem(a: &Decimal, b: &Decimal) -> Result<Option<Decimal>> {
    let (x, y, s) = aligned(a, b, "%")?;
    if y == 0 {
        return Ok(None);
    }
    // checked_rem fails only for i128::MIN % -1, whose remainder is 0.
    make(x.checked_rem(y).unwrap_or(0), s, || expr(a, "%", b)).map(Some)
}

/// `a DIV b`: the quotient truncated toward zero; None when `b` is zero.
pub fn int_div(a: &Decimal, b: &Decimal) -> Result<Option<i128>> {
    let (x, y, _) = aligned(a, b, "DIV")?;
    if y == 0 {
        return Ok(None);
    }
    x.checked_div(y)
        .map(Some)
        .ok_or_else(|| out_of_range("DECIMAL", &expr(a, "DIV", b)))
}

/// `-a`. Total: values beyond `i128` are negated through their text.
pub fn neg(a: &Decimal) -> Decimal {
    if let Some(d) = a
        .to_i128_mantissa()
        .and_then(|m| Decimal::from_i128(-m, a.scale()).ok())
    {
        return d;
    }
    let text = a.to_string();
    let flipped = match text.strip_prefix('-') {
        Some(rest) => rest.to_string(),
        None => format!("-{text}"),
    };
    Decimal::parse(&flipped).unwrap_or(*a)
}

pub fn abs(a: &Decimal) -> Decimal {
    if a.is_negative() { neg(a) } else { *a }
}

/// How [`round_to`] drops digits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RoundMode {
    /// Half away from zero (ROUND).
    HalfAwayFromZero,
    /// Toward zero (TRUNCATE).
    Truncate,
    /// Toward negative infinity (FLOOR).
    Floor,
    /// Toward positive infinity (CEILING).
    Ceiling,
}

/// `mantissa / 10^drop` rounded by `mode`; `drop` may exceed 38 (the result is then 0
/// or ±1 for the directed modes).
fn div_round(m: i128, drop: u32, mode: RoundMode) -> i128 {
    let Some(unit) = pow10(drop) else {
        return match mode {
            RoundMode::Floor if m < 0 => -1,
            RoundMode::Ceiling if m > 0 => 1,
            _ => 0,
        };
    };
    let (q, r) = (m / unit, m % unit);
    if r == 0 {
        return q;
    }
    match mode {
        RoundMode::Truncate => q,
        RoundMode::Floor => q - i128::from(m < 0),
        RoundMode::Ceiling => q + i128::from(m > 0),
        RoundMode::HalfAwayFromZero => {
            if r.unsigned_abs() >= unit.unsigned_abs() - r.unsigned_abs() {
                q + m.signum()
            } else {
                q
            }
        }
    }
}

/// `a` rounded to `digits` places after the point (negative: before it), as ROUND,
/// TRUNCATE, FLOOR and CEILING do. The result has scale `clamp(digits, 0, 30)`.
pub fn round_to(a: &Decimal, digits: i64, mode: RoundMode) -> Result<Decimal> {
    let (m, s) = parts(a)?;
    let target = digits.clamp(-100, i64::from(DECIMAL_SCALE_MAX));
    let result_scale = target.max(0) as u8;
    let too_large = || out_of_range("DECIMAL", &format!("round({a}, {digits})"));
    if target >= i64::from(s) {
        let scaled = scale_up(m, s, result_scale).ok_or_else(too_large)?;
        return make(scaled, result_scale, || a.to_string());
    }
    // Drop the digits below 10^-target, then scale back up to result_scale.
    let drop = (i64::from(s) - target) as u32;
    let kept = div_round(m, drop, mode);
    let back = if target < 0 && kept != 0 {
        pow10(target.unsigned_abs() as u32).and_then(|p| kept.checked_mul(p))
    } else {
        Some(kept)
    };
    let back = back.ok_or_else(too_large)?;
    make(back, result_scale, || a.to_string())
}

/// The integer nearest `a` under `mode`, as an `i128`.
pub fn to_integer(a: &Decimal, mode: RoundMode) -> Result<i128> {
    let (m, s) = parts(a)?;
    Ok(div_round(m, u32::from(s), mode))
}

/// The largest value of DECIMAL(precision, scale) with the sign of `negative`
/// (what CAST clips to).
pub fn max_of(precision: u8, scale: u8, negative: bool) -> Decimal {
    let integer = "9".repeat(usize::from(precision.saturating_sub(scale)));
    let fraction = "9".repeat(usize::from(scale));
    let sign = if negative { "-" } else { "" };
    let text = if scale > 0 {
        format!(
            "{sign}{}.{fraction}",
            if integer.is_empty() { "0" } else { &integer }
        )
    } else {
        format!("{sign}{integer}")
    };
    Decimal::parse(&text).unwrap_or(Decimal::ZERO)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tarn_common::rng::{Rng, test_seed};

    fn d(text: &str) -> Decimal {
        Decimal::parse(text).unwrap()
    }

    fn show(r: Result<Decimal>) -> String {
        r.unwrap().to_string()
    }

    #[test]
    fn mysql_answers() {
        assert_eq!(show(add(&d("1.5"), &d("2.25"))), "3.75");
        assert_eq!(show(sub(&d("1.5"), &d("2.25"))), "-0.75");
        assert_eq!(show(mul(&d("1.5"), &d("2.25"))), "3.375");
        assert_eq!(show(mul(&d("-0.1"), &d("0.1"))), "-0.01");
        assert_eq!(
            div(&d("1"), &d("3"), 4).unwrap().unwrap().to_string(),
            "0.3333"
        );
        assert_eq!(
            div(&d("2"), &d("3"), 4).unwrap().unwrap().to_string(),
            "0.6667"
        );
        assert_eq!(
            div(&d("-2"), &d("3"), 4).unwrap().unwrap().to_string(),
            "-0.6667"
        );
        assert_eq!(
            div(&d("1.00"), &d("8"), 4).unwrap().unwrap().to_string(),
            "0.125000"
        );
        assert_eq!(div(&d("1"), &d("0"), 4).unwrap(), None);
        assert_eq!(
            rem(&d("-7.5"), &d("2")).unwrap().unwrap().to_string(),
            "-1.5"
        );
        assert_eq!(rem(&d("7"), &d("0")).unwrap(), None);
        assert_eq!(int_div(&d("7.9"), &d("2")).unwrap(), Some(3));
        assert_eq!(int_div(&d("-7.9"), &d("2")).unwrap(), Some(-3));
        assert_eq!(neg(&d("1.50")).to_string(), "-1.50");
        assert_eq!(neg(&d("0")).to_string(), "0");
        let big = "9".repeat(65);
        assert_eq!(neg(&d(&big)).to_string(), format!("-{big}"));
        assert!(add(&d(&big), &d("1")).is_err());
    }

    #[test]
    fn rounding() {
        let r = |x: &str, n: i64, mode| round_to(&d(x), n, mode).unwrap().to_string();
        use RoundMode::*;
        assert_eq!(r("1.298", 1, HalfAwayFromZero), "1.3");
        assert_eq!(r("1.298", 0, HalfAwayFromZero), "1");
        assert_eq!(r("23.298", -1, HalfAwayFromZero), "20");
        assert_eq!(r("2.5", 0, HalfAwayFromZero), "3");
        assert_eq!(r("-2.5", 0, HalfAwayFromZero), "-3");
        assert_eq!(r("1.223", 1, Truncate), "1.2");
        assert_eq!(r("-1.999", 1, Truncate), "-1.9");
        assert_eq!(r("122", -2, Truncate), "100");
        assert_eq!(r("-1.5", 0, Floor), "-2");
        assert_eq!(r("1.5", 0, Ceiling), "2");
        assert_eq!(r("-1.5", 0, Ceiling), "-1");
        assert_eq!(r("1.2", 3, HalfAwayFromZero), "1.200");
        assert_eq!(r("5", -50, HalfAwayFromZero), "0");
        // 10^50 is beyond the 38 digits of this module.
        assert!(round_to(&d("0.5"), -50, Ceiling).is_err());
    }

    #[test]
    fn scale_overflow_in_products_rounds_to_thirty() {
        let a = d(&format!("0.{}1", "0".repeat(19)));
        let p = mul(&a, &a).unwrap();
        assert_eq!(p.to_string(), format!("0.{}", "0".repeat(30)));
        let b = d("1.000000000000000000000000000001");
        assert_eq!(
            mul(&b, &b).unwrap().to_string(),
            "1.000000000000000000000000000002"
        );
    }

    #[test]
    fn wide_division_matches_u128() {
        let mut rng = Rng::new(test_seed("wide_division_matches_u128"));
        for _ in 0..2000 {
            let a = rng.next_u64() as u128 * rng.next_u64() as u128;
            let b = (rng.next_u64() >> rng.below(64)) as u128 + 1;
            let (q, r) = Wide::mul_u128(a, 1).divrem_u128(b);
            assert_eq!((q.to_u128().unwrap(), r), (a / b, a % b));
            // (a * b) / b == a through the full 256-bit path.
            let (q, r) = Wide::mul_u128(a, b).divrem_u128(b);
            assert_eq!((q.to_u128(), r), (Some(a), 0));
        }
    }

    /// Random decimals of up to 18 digits against an i128 model (exact) and f64 (div).
    #[test]
    fn random_arithmetic_against_models() {
        let mut rng = Rng::new(test_seed("random_arithmetic_against_models"));
        let random = |rng: &mut Rng| {
            let digits = 1 + rng.below(18) as u32;
            let m = (rng.next_u64() % 10u64.pow(digits)) as i128;
            let m = if rng.percent(50) { -m } else { m };
            let s = rng.below(u64::from(digits.min(10)) + 1) as u8;
            (m, s)
        };
        for _ in 0..5000 {
            let ((am, sa), (bm, sb)) = (random(&mut rng), random(&mut rng));
            let (a, b) = (
                Decimal::from_i128(am, sa).unwrap(),
                Decimal::from_i128(bm, sb).unwrap(),
            );
            let s = sa.max(sb);
            let (x, y) = (
                am * 10i128.pow(u32::from(s - sa)),
                bm * 10i128.pow(u32::from(s - sb)),
            );
            assert_eq!(add(&a, &b).unwrap(), Decimal::from_i128(x + y, s).unwrap());
            assert_eq!(sub(&a, &b).unwrap(), Decimal::from_i128(x - y, s).unwrap());
            assert_eq!(
                mul(&a, &b).unwrap(),
                Decimal::from_i128(am * bm, sa + sb).unwrap()
            );
            assert_eq!(add(&a, &b).unwrap().scale(), s);
            if y != 0 {
                assert_eq!(
                    rem(&a, &b).unwrap().unwrap(),
                    Decimal::from_i128(x % y, s).unwrap()
                );
                assert_eq!(int_div(&a, &b).unwrap().unwrap(), x / y);
                let q = div(&a, &b, 4).unwrap().unwrap();
                let model = a.to_f64() / b.to_f64();
                let ulp = 10f64.powi(-i32::from(q.scale()));
                assert!(
                    (q.to_f64() - model).abs() <= ulp * 0.5 + model.abs() * 1e-12,
                    "{a} / {b} = {q}, model {model}"
                );
            } else {
                assert_eq!(div(&a, &b, 4).unwrap(), None);
            }
        }
    }
}
