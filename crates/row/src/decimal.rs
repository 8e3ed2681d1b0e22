//! Exact decimals (MySQL's DECIMAL), up to 65 digits.
//!
//! A [`Decimal`] is a sign, an unsigned coefficient and a scale: the value is
//! `coefficient / 10^scale`, negated when the sign is set.
//!
//! Invariants, held by every constructor and checked in tests:
//!
//! 1. The coefficient has at most [`DECIMAL_PRECISION_MAX`] (65) digits.
//! 2. The scale is at most [`DECIMAL_SCALE_MAX`] (30).
//! 3. Zero is never negative.
//!
//! Equality, ordering and hashing follow the numeric value, so `1.50 == 1.5`; the scale
//! is kept only so that [`fmt::Display`] shows what the column declares (`1.50`).
//!
//! # Binary form
//!
//! [`Decimal::write_binary`] stores a value of a DECIMAL(p, s) column in
//! [`binary_len_bytes`]`(p, s)` bytes whose unsigned byte order (memcmp) is the
//! numeric order. It is MySQL's `decimal2bin` layout: the integer digits and the
//! fraction digits are cut into groups of 9 decimal digits, each stored big-endian in 4
//! bytes; a partial group of 1..=8 digits takes 1, 1, 2, 2, 3, 3, 4, 4 bytes. The
//! partial integer group comes first, the partial fraction group last. A negative
//! value has every byte inverted, then the top bit of the first byte is flipped, so
//! positive values start with a set top bit and negative ones with a clear one. The row
//! format and the key encoding share this form.

use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::str::FromStr;

use tarn_common::{Error, Result};

use crate::limits::{DECIMAL_PRECISION_MAX, DECIMAL_SCALE_MAX};

const DIGITS_MAX: usize = DECIMAL_PRECISION_MAX as usize;
const POW10_U64: [u64; 20] = {
    let mut table = [1u64; 20];
    let mut i = 1;
    while i < 20 {
        table[i] = table[i - 1] * 10;
        i += 1;
    }
    table
};
/// Bytes taken by a group of 0..=9 digits in the binary form.
const GROUP_BYTES: [usize; 10] = [0, 1, 1, 2, 2, 3, 3, 4, 4, 4];
/// Enough room for every digit a `U256` can hold (78) rounded up to whole 19-digit chunks.
const DIGIT_BUFFER_LEN: usize = 95;

/// A 256-bit unsigned integer, little-endian limbs: room for 77 decimal digits, so a
/// 65-digit coefficient can be scaled up by 10^12 before any overflow check matters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
struct U256([u64; 4]);

impl U256 {
    const ZERO: U256 = U256([0; 4]);

    fn from_u128(value: u128) -> U256 {
        U256([value as u64, (value >> 64) as u64, 0, 0])
    }

    fn is_zero(&self) -> bool {
        self.0 == [0; 4]
    }

    /// `self * multiplier + addend`, or None on overflow.
    fn checked_mul_add(self, multiplier: u64, addend: u64) -> Option<U256> {
        let mut carry = u128::from(addend);
        let mut out = [0u64; 4];
        for (limb_out, limb) in out.iter_mut().zip(self.0) {
            let t = u128::from(limb) * u128::from(multiplier) + carry;
            *limb_out = t as u64;
            carry = t >> 64;
        }
        (carry == 0).then_some(U256(out))
    }

    fn divrem_small(self, divisor: u64) -> (U256, u64) {
        debug_assert!(divisor != 0);
        let mut rem = 0u128;
        let mut out = [0u64; 4];
        for i in (0..4).rev() {
            let cur = (rem << 64) | u128::from(self.0[i]);
            out[i] = (cur / u128::from(divisor)) as u64;
            rem = cur % u128::from(divisor);
        }
        (U256(out), rem as u64)
    }

    fn to_u128(self) -> Option<u128> {
        (self.0[2] == 0 && self.0[3] == 0)
            .then(|| u128::from(self.0[0]) | (u128::from(self.0[1]) << 64))
    }

    /// `self * 10^exponent`, or None on overflow.
    fn checked_scale_up(self, mut exponent: u32) -> Option<U256> {
        let mut value = self;
        while exponent > 0 {
            let step = exponent.min(19);
            value = value.checked_mul_add(POW10_U64[step as usize], 0)?;
            exponent -= step;
        }
        Some(value)
    }

    /// `self / 10^exponent`, truncated.
    fn scale_down(self, mut exponent: u32) -> U256 {
        let mut value = self;
        while exponent > 0 {
            let step = exponent.min(19);
            value = value.divrem_small(POW10_U64[step as usize]).0;
            exponent -= step;
        }
        value
    }

    /// True if the value has at most `digits` decimal digits.
    fn fits_digits(self, digits: u32) -> bool {
        match U256::from_u128(1).checked_scale_up(digits) {
            Some(limit) => self < limit,
            None => true,
        }
    }

    /// Writes the decimal digits (values 0..=9, no leading zeros; none for zero) to the
    /// end of `buf` and returns where they start.
    fn to_digits(self, buf: &mut [u8; DIGIT_BUFFER_LEN]) -> usize {
        let mut value = self;
        let mut end = DIGIT_BUFFER_LEN;
        while !value.is_zero() {
            let (quotient, mut chunk) = value.divrem_small(POW10_U64[19]);
            for _ in 0..19 {
                end -= 1;
                buf[end] = (chunk % 10) as u8;
                chunk /= 10;
            }
            value = quotient;
        }
        while end < DIGIT_BUFFER_LEN && buf[end] == 0 {
            end += 1;
        }
        end
    }

    /// Builds a value from decimal digits (each 0..=9); None on overflow.
    fn from_digits(digits: &[u8]) -> Option<U256> {
        let mut value = U256::ZERO;
        for chunk in digits.chunks(19) {
            let chunk_value = chunk.iter().fold(0u64, |acc, d| acc * 10 + u64::from(*d));
            value = value.checked_mul_add(POW10_U64[chunk.len()], chunk_value)?;
        }
        Some(value)
    }
}

impl Ord for U256 {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.iter().rev().cmp(other.0.iter().rev())
    }
}

impl PartialOrd for U256 {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// An exact decimal number. See the module documentation for its invariants.
#[derive(Clone, Copy)]
pub struct Decimal {
    coefficient: U256,
    scale: u8,
    negative: bool,
}

fn incorrect(reason: String) -> Error {
    Error::IncorrectValue {
        column: String::new(),
        reason,
    }
}

/// Stored bytes that no value encodes: corruption (MySQL error 3000), not bad input.
fn corrupt(reason: String) -> Error {
    Error::CorruptData(reason)
}

fn out_of_range(reason: String) -> Error {
    Error::ValueOutOfRange {
        column: String::new(),
        reason,
    }
}

/// Decimals of at most this many digits fit an `i64` coefficient; batches hold them so.
pub const DECIMAL64_PRECISION_MAX: u8 = 18;

/// The binary form of a DECIMAL(precision, scale) of at most
/// [`DECIMAL64_PRECISION_MAX`] digits, worked out once per column so that reading a
/// value does no layout arithmetic. A value of up to 8 bytes is read as one
/// big-endian integer: the fraction's groups are its low bits, the integer part's the
/// high ones, and each part has at most two groups.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Decimal64Form {
    precision: u8,
    scale: u8,
    len_bytes: u8,
    integer: PartForm,
    fraction: PartForm,
}

/// The integer or fraction part of a [`Decimal64Form`]: a group in the low bits, and
/// maybe one above it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct PartForm {
    bits: u32,
    low_bits: u32,
    /// 10^(the low group's digits), and 10^(the high group's digits) (1 when none).
    low_limit: u64,
    high_limit: u64,
}

impl PartForm {
    /// A part of `digits` digits whose low group has `low_digits` of them.
    fn new(digits: usize, low_digits: usize) -> PartForm {
        let high_digits = digits - low_digits;
        let low_bits = 8 * GROUP_BYTES[low_digits] as u32;
        PartForm {
            bits: low_bits + 8 * GROUP_BYTES[high_digits] as u32,
            low_bits,
            low_limit: POW10_U64[low_digits],
            high_limit: POW10_U64[high_digits],
        }
    }

    /// The part's value from its bits, or None if a group holds more digits than
    /// it may.
    #[inline]
    fn read(&self, bits: u64) -> Option<u64> {
        let low = bits & low_mask(self.low_bits);
        let high = bits.checked_shr(self.low_bits).unwrap_or(0);
        (low < self.low_limit && high < self.high_limit).then_some(high * self.low_limit + low)
    }
}

/// The low `bits` bits set (`bits` <= 64).
#[inline]
fn low_mask(bits: u32) -> u64 {
    1u64.checked_shl(bits).unwrap_or(0).wrapping_sub(1)
}

/// A stored DECIMAL of at most 18 digits taken apart: `integer.fraction`, the
/// fraction as an integer of exactly `scale` digits (`12.05` is 12 and 5 at scale 2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Decimal64Parts {
    pub negative: bool,
    pub integer: u64,
    pub fraction: u64,
}

impl Decimal64Form {
    /// The form of DECIMAL(precision, scale); `CorruptData` when the definition is not
    /// one of at most [`DECIMAL64_PRECISION_MAX`] digits.
    pub fn new(precision: u8, scale: u8) -> Result<Decimal64Form> {
        if precision == 0 || precision > DECIMAL64_PRECISION_MAX || scale > precision {
            return Err(corrupt(format!(
                "DECIMAL({precision},{scale}) is not a decimal of at most \
                 {DECIMAL64_PRECISION_MAX} digits"
            )));
        }
        let (integer_digits, fraction_digits) =
            (usize::from(precision - scale), usize::from(scale));
        // The integer part's last group is whole when it has two; the fraction's last
        // group is its partial one (or a whole one).
        let form = Decimal64Form {
            precision,
            scale,
            len_bytes: binary_len_bytes(precision, scale) as u8,
            integer: PartForm::new(integer_digits, integer_digits.min(9)),
            fraction: PartForm::new(
                fraction_digits,
                if fraction_digits > 9 {
                    fraction_digits - 9
                } else {
                    fraction_digits
                },
            ),
        };
        debug_assert_eq!(
            8 * usize::from(form.len_bytes),
            (form.integer.bits + form.fraction.bits) as usize
        );
        Ok(form)
    }

    /// Bytes a value takes.
    pub fn len_bytes(&self) -> usize {
        usize::from(self.len_bytes)
    }

    pub fn scale(&self) -> u8 {
        self.scale
    }

    /// Takes a stored value apart, with [`Decimal::read_binary`]'s checks.
    #[inline]
    pub fn read_parts(&self, bytes: &[u8]) -> Result<Decimal64Parts> {
        if bytes.len() != self.len_bytes() {
            return Err(corrupt(format!(
                "{} bytes are not a DECIMAL({},{})",
                bytes.len(),
                self.precision,
                self.scale
            )));
        }
        // Every form of up to 8 bytes (all but a few of 17 and 18 digits) is read as one
        // u64, with a copy of constant length per width.
        let stored = match *bytes {
            [a] => u64::from(a),
            [a, b] => u64::from(u16::from_be_bytes([a, b])),
            [a, b, c] => u64::from(u32::from_be_bytes([0, a, b, c])),
            [a, b, c, d] => u64::from(u32::from_be_bytes([a, b, c, d])),
            [a, b, c, d, e] => u64::from_be_bytes([0, 0, 0, a, b, c, d, e]),
            [a, b, c, d, e, f] => u64::from_be_bytes([0, 0, a, b, c, d, e, f]),
            [a, b, c, d, e, f, g] => u64::from_be_bytes([0, a, b, c, d, e, f, g]),
            [a, b, c, d, e, f, g, h] => u64::from_be_bytes([a, b, c, d, e, f, g, h]),
            _ => return self.read_parts_wide(bytes),
        };
        let bits = 8 * bytes.len() as u32;
        let negative = stored >> (bits - 1) == 0;
        // Undo the sign encoding: flip the top bit, and invert a negative value.
        let stored = stored ^ (1 << (bits - 1)) ^ if negative { low_mask(bits) } else { 0 };
        let fraction = self.fraction.read(stored & low_mask(self.fraction.bits));
        let integer = self
            .integer
            .read(stored.checked_shr(self.fraction.bits).unwrap_or(0));
        let (Some(integer), Some(fraction)) = (integer, fraction) else {
            return Err(corrupt("corrupt DECIMAL digit group".into()));
        };
        if negative && integer == 0 && fraction == 0 {
            return Err(corrupt("corrupt DECIMAL: negative zero".into()));
        }
        Ok(Decimal64Parts {
            negative,
            integer,
            fraction,
        })
    }

    /// [`Decimal64Form::read_parts`] of a 9-byte form, through [`Decimal::read_binary`].
    #[cold]
    fn read_parts_wide(&self, bytes: &[u8]) -> Result<Decimal64Parts> {
        let value = Decimal::read_binary(bytes, self.precision, self.scale)?;
        let coefficient = value
            .to_i128_mantissa()
            .and_then(|m| u64::try_from(m.unsigned_abs()).ok())
            .ok_or_else(|| corrupt("corrupt DECIMAL".into()))?;
        let one = POW10_U64[usize::from(self.scale)];
        Ok(Decimal64Parts {
            negative: value.is_negative(),
            integer: coefficient / one,
            fraction: coefficient % one,
        })
    }

    /// A stored value as its coefficient (the value is `coefficient / 10^scale`).
    #[inline]
    pub fn read_i64(&self, bytes: &[u8]) -> Result<i64> {
        let parts = self.read_parts(bytes)?;
        let coefficient =
            (parts.integer * POW10_U64[usize::from(self.scale)] + parts.fraction) as i64;
        Ok(if parts.negative {
            -coefficient
        } else {
            coefficient
        })
    }
}

/// Checks a DECIMAL(precision, scale) definition.
pub fn check_precision_scale(precision: u8, scale: u8) -> Result<()> {
    if precision == 0 || precision > DECIMAL_PRECISION_MAX {
        return Err(Error::InvalidDefinition(format!(
            "DECIMAL precision {precision} is outside 1..={DECIMAL_PRECISION_MAX}"
        )));
    }
    if scale > DECIMAL_SCALE_MAX || scale > precision {
        return Err(Error::InvalidDefinition(format!(
            "DECIMAL scale {scale} must be at most {DECIMAL_SCALE_MAX} and at most the \
             precision {precision}"
        )));
    }
    Ok(())
}

/// Bytes a DECIMAL(precision, scale) value takes in the binary form.
pub fn binary_len_bytes(precision: u8, scale: u8) -> usize {
    debug_assert!(scale <= precision);
    let integer_digits = usize::from(precision - scale);
    let fraction_digits = usize::from(scale);
    integer_digits / 9 * 4
        + GROUP_BYTES[integer_digits % 9]
        + fraction_digits / 9 * 4
        + GROUP_BYTES[fraction_digits % 9]
}

/// The digit counts of the groups of DECIMAL(precision, scale), in storage order.
fn groups(precision: u8, scale: u8) -> impl Iterator<Item = usize> {
    let integer_digits = usize::from(precision - scale);
    let fraction_digits = usize::from(scale);
    std::iter::once(integer_digits % 9)
        .chain(std::iter::repeat_n(9, integer_digits / 9))
        .chain(std::iter::repeat_n(9, fraction_digits / 9))
        .chain(std::iter::once(fraction_digits % 9))
        .filter(|digits| *digits > 0)
}

/// Drops the last `drop` digits, rounding half away from zero (on the magnitude).
fn round_off_digits(digits: &mut Vec<u8>, drop: usize) {
    if drop == 0 {
        return;
    }
    if drop > digits.len() {
        digits.clear();
        return;
    }
    let first_dropped = digits[digits.len() - drop];
    digits.truncate(digits.len() - drop);
    if first_dropped >= 5 {
        let mut i = digits.len();
        loop {
            if i == 0 {
                digits.insert(0, 1);
                break;
            }
            i -= 1;
            if digits[i] == 9 {
                digits[i] = 0;
            } else {
                digits[i] += 1;
                break;
            }
        }
    }
}

fn strip_leading_zeros(digits: &mut Vec<u8>) {
    let zeros = digits.iter().take_while(|d| **d == 0).count();
    digits.drain(..zeros);
}

impl Decimal {
    pub const ZERO: Decimal = Decimal {
        coefficient: U256::ZERO,
        scale: 0,
        negative: false,
    };

    fn from_raw(coefficient: U256, scale: u8, negative: bool) -> Decimal {
        debug_assert!(coefficient.fits_digits(DIGITS_MAX as u32));
        debug_assert!(scale <= DECIMAL_SCALE_MAX);
        Decimal {
            coefficient,
            scale,
            negative: negative && !coefficient.is_zero(),
        }
    }

    /// `mantissa / 10^scale`: the fast path for values that fit an `i128`.
    /// Fails if `scale` exceeds [`DECIMAL_SCALE_MAX`].
    pub fn from_i128(mantissa: i128, scale: u8) -> Result<Decimal> {
        if scale > DECIMAL_SCALE_MAX {
            return Err(out_of_range(format!(
                "decimal scale {scale} exceeds {DECIMAL_SCALE_MAX}"
            )));
        }
        Ok(Decimal::from_raw(
            U256::from_u128(mantissa.unsigned_abs()),
            scale,
            mantissa < 0,
        ))
    }

    /// The value as `mantissa / 10^scale()` if the mantissa fits an `i128`.
    pub fn to_i128_mantissa(&self) -> Option<i128> {
        let magnitude = i128::try_from(self.coefficient.to_u128()?).ok()?;
        Some(if self.negative { -magnitude } else { magnitude })
    }

    /// Digits after the decimal point.
    pub fn scale(&self) -> u8 {
        self.scale
    }

    pub fn is_negative(&self) -> bool {
        self.negative
    }

    pub fn is_zero(&self) -> bool {
        self.coefficient.is_zero()
    }

    /// Digits in the coefficient (0 for zero).
    pub fn digit_count(&self) -> usize {
        let mut buf = [0u8; DIGIT_BUFFER_LEN];
        DIGIT_BUFFER_LEN - self.coefficient.to_digits(&mut buf)
    }

    /// Parses `[+-]digits[.digits][e[+-]digits]`, with surrounding whitespace allowed.
    /// More than 30 fraction digits, or more than 65 digits in all, are rounded half
    /// away from zero; more than 65 integer digits is `ValueOutOfRange`; anything that
    /// is not a number is `IncorrectValue`. Column names in errors are empty: callers
    /// that know the column fill it in.
    pub fn parse(text: &str) -> Result<Decimal> {
        let bad = || incorrect(format!("'{text}' is not a decimal number"));
        let bytes = text.trim().as_bytes();
        let (negative, mut i) = match bytes.first() {
            Some(b'-') => (true, 1),
            Some(b'+') => (false, 1),
            _ => (false, 0),
        };
        let mut digits = Vec::with_capacity(bytes.len());
        let mut fraction_len = 0i64;
        let mut seen_point = false;
        while i < bytes.len() {
            match bytes[i] {
                digit @ b'0'..=b'9' => {
                    digits.push(digit - b'0');
                    fraction_len += i64::from(seen_point);
                }
                b'.' if !seen_point => seen_point = true,
                _ => break,
            }
            i += 1;
        }
        if digits.is_empty() {
            return Err(bad());
        }
        let mut exponent = 0i64;
        if i < bytes.len() && (bytes[i] == b'e' || bytes[i] == b'E') {
            i += 1;
            let exponent_negative = match bytes.get(i) {
                Some(b'-') => {
                    i += 1;
                    true
                }
                Some(b'+') => {
                    i += 1;
                    false
                }
                _ => false,
            };
            let start = i;
            while i < bytes.len() && bytes[i].is_ascii_digit() {
                exponent = (exponent * 10 + i64::from(bytes[i] - b'0')).min(1_000_000);
                i += 1;
            }
            if i == start {
                return Err(bad());
            }
            if exponent_negative {
                exponent = -exponent;
            }
        }
        if i != bytes.len() {
            return Err(bad());
        }
        Decimal::from_digit_vec(digits, fraction_len - exponent, negative)
            .ok_or_else(|| out_of_range(format!("'{text}' has more than 65 integer digits")))
    }

    /// `digits / 10^scale` with rounding to the bounds; None if too many integer digits.
    fn from_digit_vec(mut digits: Vec<u8>, mut scale: i64, negative: bool) -> Option<Decimal> {
        strip_leading_zeros(&mut digits);
        if digits.is_empty() {
            return Some(Decimal::ZERO);
        }
        if scale < 0 {
            let zeros = usize::try_from(-scale).ok()?;
            if digits.len().checked_add(zeros)? > DIGITS_MAX {
                return None;
            }
            digits.resize(digits.len() + zeros, 0);
            scale = 0;
        }
        let scale_max = i64::from(DECIMAL_SCALE_MAX);
        if scale > scale_max {
            let drop = usize::try_from(scale - scale_max).unwrap_or(usize::MAX);
            round_off_digits(&mut digits, drop);
            scale = scale_max;
        }
        strip_leading_zeros(&mut digits);
        let integer_digits = digits.len() as i64 - scale;
        if integer_digits > DIGITS_MAX as i64 {
            return None;
        }
        if digits.len() > DIGITS_MAX {
            let drop = digits.len() - DIGITS_MAX;
            round_off_digits(&mut digits, drop);
            scale -= drop as i64;
            // A carry can add a digit; drop trailing zeros of the fraction to make room.
            while digits.len() > DIGITS_MAX && scale > 0 && digits.last() == Some(&0) {
                digits.pop();
                scale -= 1;
            }
            if digits.len() > DIGITS_MAX {
                return None;
            }
        }
        let coefficient = U256::from_digits(&digits)?;
        Some(Decimal::from_raw(coefficient, scale as u8, negative))
    }

    /// This value rounded (half away from zero) or padded to `scale` digits after the
    /// point, checked to fit DECIMAL(precision, scale). An invalid precision or scale is
    /// `InvalidDefinition`; a value too large is `ValueOutOfRange`.
    pub fn rescale(&self, precision: u8, scale: u8) -> Result<Decimal> {
        check_precision_scale(precision, scale)?;
        let too_large =
            || out_of_range(format!("{self} does not fit DECIMAL({precision},{scale})"));
        let coefficient = if scale >= self.scale {
            self.coefficient
                .checked_scale_up(u32::from(scale - self.scale))
                .ok_or_else(too_large)?
        } else {
            let drop = u32::from(self.scale - scale);
            let (truncated, first_dropped) = self.coefficient.scale_down(drop - 1).divrem_small(10);
            if first_dropped >= 5 {
                truncated.checked_mul_add(1, 1).ok_or_else(too_large)?
            } else {
                truncated
            }
        };
        if !coefficient.fits_digits(u32::from(precision)) {
            return Err(too_large());
        }
        Ok(Decimal::from_raw(coefficient, scale, self.negative))
    }

    /// The value rounded half away from zero to an integer, if it fits an `i128`.
    pub fn round_to_i128(&self) -> Option<i128> {
        let rounded = self.rescale(DECIMAL_PRECISION_MAX, 0).ok()?;
        rounded.to_i128_mantissa()
    }

    /// The nearest `f64`.
    pub fn to_f64(&self) -> f64 {
        self.to_string().parse().unwrap_or(0.0)
    }

    /// The exact decimal form of a finite `f64` as printed by Rust's shortest
    /// round-trip formatting, rounded to the bounds. None for NaN, infinities and
    /// magnitudes beyond 65 integer digits.
    pub fn from_f64(value: f64) -> Option<Decimal> {
        if !value.is_finite() {
            return None;
        }
        Decimal::parse(&format!("{value:e}")).ok()
    }

    /// Stores the value in the binary form of DECIMAL(precision, scale) (see the module
    /// documentation). `out` must be exactly [`binary_len_bytes`] long. The value must
    /// fit the column without rounding (as [`crate::check_value`] leaves it), else
    /// `IncorrectValue` or `ValueOutOfRange`.
    pub fn write_binary(&self, precision: u8, scale: u8, out: &mut [u8]) -> Result<()> {
        assert_eq!(out.len(), binary_len_bytes(precision, scale));
        let value = self.rescale(precision, scale)?;
        if value != *self {
            return Err(incorrect(format!(
                "{self} would be rounded to fit DECIMAL({precision},{scale})"
            )));
        }
        let mut buf = [0u8; DIGIT_BUFFER_LEN];
        let start = value.coefficient.to_digits(&mut buf);
        // Left-pad to exactly `precision` digits (the value fits, so start >= that).
        let padded = &buf[DIGIT_BUFFER_LEN - usize::from(precision)..];
        debug_assert!(start >= DIGIT_BUFFER_LEN - usize::from(precision));
        let mask = if value.negative { 0xff } else { 0 };
        let (mut digit_pos, mut byte_pos) = (0, 0);
        for group_digits in groups(precision, scale) {
            let group = padded[digit_pos..digit_pos + group_digits]
                .iter()
                .fold(0u32, |acc, d| acc * 10 + u32::from(*d));
            digit_pos += group_digits;
            let width = GROUP_BYTES[group_digits];
            let be = group.to_be_bytes();
            for (o, b) in out[byte_pos..byte_pos + width]
                .iter_mut()
                .zip(&be[4 - width..])
            {
                *o = b ^ mask;
            }
            byte_pos += width;
        }
        out[0] ^= 0x80;
        Ok(())
    }

    /// Reads the binary form of DECIMAL(precision, scale). Bytes that no value encodes
    /// (a group above its digit count, a negative zero, a wrong length) are
    /// `IncorrectValue`; this never panics.
    pub fn read_binary(bytes: &[u8], precision: u8, scale: u8) -> Result<Decimal> {
        if check_precision_scale(precision, scale).is_err()
            || bytes.len() != binary_len_bytes(precision, scale)
        {
            return Err(corrupt(format!(
                "{} bytes are not a DECIMAL({precision},{scale})",
                bytes.len()
            )));
        }
        let negative = bytes[0] & 0x80 == 0;
        let mask = if negative { 0xff } else { 0 };
        let mut coefficient = U256::ZERO;
        let mut byte_pos = 0;
        for group_digits in groups(precision, scale) {
            let width = GROUP_BYTES[group_digits];
            let mut group = 0u32;
            for (k, byte) in bytes[byte_pos..byte_pos + width].iter().enumerate() {
                let flip = if byte_pos + k == 0 { 0x80 } else { 0 };
                group = (group << 8) | u32::from(byte ^ flip ^ mask);
            }
            byte_pos += width;
            if u64::from(group) >= POW10_U64[group_digits] {
                return Err(corrupt("corrupt DECIMAL digit group".into()));
            }
            coefficient = coefficient
                .checked_mul_add(POW10_U64[group_digits], u64::from(group))
                .ok_or_else(|| corrupt("corrupt DECIMAL".into()))?;
        }
        if negative && coefficient.is_zero() {
            return Err(corrupt("corrupt DECIMAL: negative zero".into()));
        }
        Ok(Decimal::from_raw(coefficient, scale, negative))
    }

    /// The value with trailing fraction zeros removed (`1.50` -> `1.5`).
    pub fn normalized(&self) -> Decimal {
        let mut value = *self;
        while value.scale > 0 {
            let (quotient, rem) = value.coefficient.divrem_small(10);
            if rem != 0 {
                break;
            }
            value.coefficient = quotient;
            value.scale -= 1;
        }
        value
    }

    fn cmp_magnitude(&self, other: &Decimal) -> Ordering {
        match self.scale.cmp(&other.scale) {
            Ordering::Equal => self.coefficient.cmp(&other.coefficient),
            // Coefficients are below 10^65 < 2^256: one that overflows when scaled up
            // is larger than any coefficient.
            Ordering::Less => match self
                .coefficient
                .checked_scale_up(u32::from(other.scale - self.scale))
            {
                Some(scaled) => scaled.cmp(&other.coefficient),
                None => Ordering::Greater,
            },
            Ordering::Greater => match other
                .coefficient
                .checked_scale_up(u32::from(self.scale - other.scale))
            {
                Some(scaled) => self.coefficient.cmp(&scaled),
                None => Ordering::Less,
            },
        }
    }
}

impl Default for Decimal {
    fn default() -> Self {
        Decimal::ZERO
    }
}

impl Ord for Decimal {
    fn cmp(&self, other: &Self) -> Ordering {
        match (self.negative, other.negative) {
            (false, true) => Ordering::Greater,
            (true, false) => Ordering::Less,
            (false, false) => self.cmp_magnitude(other),
            (true, true) => other.cmp_magnitude(self),
        }
    }
}

impl PartialOrd for Decimal {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Decimal {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Decimal {}

impl Hash for Decimal {
    fn hash<H: Hasher>(&self, state: &mut H) {
        let normalized = self.normalized();
        normalized.coefficient.hash(state);
        normalized.scale.hash(state);
        normalized.negative.hash(state);
    }
}

impl From<i64> for Decimal {
    fn from(value: i64) -> Self {
        Decimal::from_raw(
            U256::from_u128(u128::from(value.unsigned_abs())),
            0,
            value < 0,
        )
    }
}

impl From<u64> for Decimal {
    fn from(value: u64) -> Self {
        Decimal::from_raw(U256::from_u128(u128::from(value)), 0, false)
    }
}

impl FromStr for Decimal {
    type Err = Error;

    fn from_str(text: &str) -> Result<Decimal> {
        Decimal::parse(text)
    }
}

impl fmt::Display for Decimal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut digits = [0u8; DIGIT_BUFFER_LEN];
        let start = self.coefficient.to_digits(&mut digits);
        let digits = &digits[start..];
        let scale = usize::from(self.scale);
        let mut text = String::with_capacity(digits.len() + scale + 3);
        if self.negative {
            text.push('-');
        }
        let ascii = |d: &u8| char::from(b'0' + d);
        if digits.len() <= scale {
            text.push('0');
            if scale > 0 {
                text.push('.');
                text.extend(std::iter::repeat_n('0', scale - digits.len()));
                text.extend(digits.iter().map(ascii));
            }
        } else {
            let (integer, fraction) = digits.split_at(digits.len() - scale);
            text.extend(integer.iter().map(ascii));
            if scale > 0 {
                text.push('.');
                text.extend(fraction.iter().map(ascii));
            }
        }
        f.pad(&text)
    }
}

impl fmt::Debug for Decimal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Decimal({self})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(text: &str) -> Decimal {
        Decimal::parse(text).unwrap()
    }

    #[test]
    fn parses_and_displays() {
        for (input, shown) in [
            ("0", "0"),
            ("-0", "0"),
            ("1.50", "1.50"),
            ("-123.456", "-123.456"),
            ("0.001", "0.001"),
            ("+7", "7"),
            (" 12 ", "12"),
            ("1e3", "1000"),
            ("1.5E-2", "0.015"),
            (".5", "0.5"),
            ("5.", "5"),
            ("000123.4500", "123.4500"),
        ] {
            assert_eq!(d(input).to_string(), shown, "{input}");
        }
        for bad in ["", "-", ".", "1..2", "abc", "1e", "1 2", "0x10"] {
            assert!(Decimal::parse(bad).is_err(), "{bad}");
        }
        let nines = "9".repeat(65);
        assert_eq!(d(&nines).to_string(), nines);
        assert!(matches!(
            Decimal::parse(&format!("{nines}9")),
            Err(Error::ValueOutOfRange { .. })
        ));
        // Fractions beyond 30 digits round half away from zero.
        assert_eq!(
            d(&format!("0.{}5", "0".repeat(30))).to_string(),
            format!("0.{}1", "0".repeat(29))
        );
        assert_eq!(
            d(&format!("-0.{}4", "0".repeat(30))).to_string(),
            format!("0.{}", "0".repeat(30))
        );
    }

    #[test]
    fn equality_and_order_follow_the_numeric_value() {
        assert_eq!(d("1.50"), d("1.5"));
        assert_eq!(d("0.000"), d("-0"));
        assert!(d("-1") < d("-0.5"));
        assert!(d("-0.5") < d("0"));
        assert!(d("0.1") < d("0.10001"));
        assert!(d(&"9".repeat(65)) > d("0.000000000000000000000000000001"));
        use std::collections::hash_map::DefaultHasher;
        let hash = |x: Decimal| {
            let mut h = DefaultHasher::new();
            x.hash(&mut h);
            h.finish()
        };
        assert_eq!(hash(d("1.50")), hash(d("1.5")));
    }

    #[test]
    fn rescale_rounds_half_away_from_zero() {
        assert_eq!(d("1.245").rescale(5, 2).unwrap().to_string(), "1.25");
        assert_eq!(d("-1.245").rescale(5, 2).unwrap().to_string(), "-1.25");
        assert_eq!(d("1.244").rescale(5, 2).unwrap().to_string(), "1.24");
        assert_eq!(d("2.5").rescale(5, 0).unwrap().to_string(), "3");
        assert_eq!(d("-0.4").rescale(5, 0).unwrap().to_string(), "0");
        assert_eq!(d("1.5").rescale(5, 3).unwrap().to_string(), "1.500");
        assert!(matches!(
            d("999.995").rescale(5, 2),
            Err(Error::ValueOutOfRange { .. })
        ));
        assert!(matches!(
            d("1").rescale(0, 0),
            Err(Error::InvalidDefinition(_))
        ));
        assert!(matches!(
            d("1").rescale(5, 6),
            Err(Error::InvalidDefinition(_))
        ));
        assert_eq!(d("99.99").rescale(4, 2).unwrap(), d("99.99"));
    }

    #[test]
    fn conversions() {
        assert_eq!(Decimal::from(i64::MIN).to_string(), i64::MIN.to_string());
        assert_eq!(Decimal::from(u64::MAX).to_string(), u64::MAX.to_string());
        assert_eq!(
            Decimal::from_i128(-12345, 2).unwrap().to_string(),
            "-123.45"
        );
        assert_eq!(Decimal::from_i128(5, 3).unwrap().to_string(), "0.005");
        assert!(Decimal::from_i128(5, 31).is_err());
        assert_eq!(d("-123.45").to_i128_mantissa(), Some(-12345));
        assert_eq!(d("2.5").round_to_i128(), Some(3));
        assert_eq!(d("-2.5").round_to_i128(), Some(-3));
        assert_eq!(d("0.25").to_f64(), 0.25);
        assert_eq!(Decimal::from_f64(0.1).unwrap(), d("0.1"));
    }

    #[test]
    fn binary_form_round_trips_and_sorts() {
        assert_eq!(binary_len_bytes(65, 30), 30);
        assert_eq!(binary_len_bytes(10, 2), 5);
        assert_eq!(binary_len_bytes(1, 0), 1);
        assert_eq!(binary_len_bytes(5, 5), 3);
        let values = ["-999.99", "-1.5", "-0.01", "0", "0.01", "1.5", "999.99"];
        let mut previous: Option<Vec<u8>> = None;
        for text in values {
            let mut out = vec![0; binary_len_bytes(5, 2)];
            let value = d(text).rescale(5, 2).unwrap();
            value.write_binary(5, 2, &mut out).unwrap();
            assert_eq!(Decimal::read_binary(&out, 5, 2).unwrap(), value);
            if let Some(p) = previous {
                assert!(p < out, "{text}");
            }
            previous = Some(out);
        }
        let mut out = vec![0; binary_len_bytes(5, 2)];
        assert!(d("1.234").write_binary(5, 2, &mut out).is_err());
        assert!(Decimal::read_binary(&[0xff, 0xff, 0xff], 5, 2).is_err());
        assert!(Decimal::read_binary(&[0x80], 5, 2).is_err());
    }
}
