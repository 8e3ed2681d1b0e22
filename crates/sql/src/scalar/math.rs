//! Numeric functions beyond the basic ones in [`super::func`]: `CONV` (and `BIN`,
//! `OCT`), `CRC32`, `INET_ATON`, and the bit operators `& | ^ << >> ~`.
//!
//! `CONV` follows MySQL's `Item_func_conv`: the number is read from its text in the
//! source base (`my_strntoull`, or `my_strntoll` for a negative base: leading spaces
//! and a sign allowed, reading stops at the first character that is not a digit of
//! the base, an overflow saturates), and written in the target base (`ll2str`: signed
//! for a negative base, upper-case digits). The bit operators work on 64-bit unsigned
//! integers, as MySQL's do on numbers.

use tarn_row::value::Value;

use super::cast::to_i64;

/// A value as the unsigned 64-bit integer MySQL's bit operators and BIT_ aggregates
/// use: BIGINT UNSIGNED as is, anything else rounded to BIGINT and taken by its two's
/// complement.
pub fn to_bits(v: &Value) -> u64 {
    match v {
        Value::UInt(x) => *x,
        other => to_i64(other).unwrap_or(0) as u64,
    }
}

/// `a op b` for the bit operators `&`, `|`, `^`, `<<`, `>>` (a shift by 64 or more
/// is 0), and `~a` (with `b` ignored).
pub fn bit_op(op: &str, a: &Value, b: &Value) -> Value {
    let (x, y) = (to_bits(a), to_bits(b));
    Value::UInt(match op {
        "&" => x & y,
        "|" => x | y,
        "^" => x ^ y,
        "<<" => x
            .checked_shl(u32::try_from(y).unwrap_or(u32::MAX))
            .unwrap_or(0),
        ">>" => x
            .checked_shr(u32::try_from(y).unwrap_or(u32::MAX))
            .unwrap_or(0),
        _ => !x,
    })
}

/// Reads digits of `base` (2..=36) after optional spaces and a sign: the magnitude,
/// whether it was negative, and whether it overflowed 64 bits. None when no digit
/// was read.
fn read_digits(text: &[u8], base: u32) -> Option<(u64, bool, bool)> {
    let mut rest = text.trim_ascii_start();
    let negative = match rest.first() {
        Some(b'-') => {
            rest = &rest[1..];
            true
        }
        Some(b'+') => {
            rest = &rest[1..];
            false
        }
        _ => false,
    };
    let mut value = 0u64;
    let mut overflow = false;
    let mut digits = 0;
    for &b in rest {
        let Some(d) = (b as char).to_digit(36).filter(|d| *d < base) else {
            break;
        };
        digits += 1;
        match value
            .checked_mul(u64::from(base))
            .and_then(|v| v.checked_add(u64::from(d)))
        {
            Some(v) if !overflow => value = v,
            _ => overflow = true,
        }
    }
    (digits > 0).then_some((value, negative, overflow))
}

/// `my_strntoull`: negative numbers wrap; an overflow is `u64::MAX`.
fn strntoull(text: &[u8], base: u32) -> u64 {
    match read_digits(text, base) {
        None => 0,
        Some((_, _, true)) => u64::MAX,
        Some((v, negative, false)) => {
            if negative {
                v.wrapping_neg()
            } else {
                v
            }
        }
    }
}

/// `my_strntoll`: an overflow saturates at the sign's end of BIGINT.
fn strntoll(text: &[u8], base: u32) -> i64 {
    match read_digits(text, base) {
        None => 0,
        Some((v, negative, overflow)) => {
            if negative {
                if overflow || v > i64::MIN.unsigned_abs() {
                    i64::MIN
                } else {
                    (v as i64).wrapping_neg()
                }
            } else if overflow || v > i64::MAX as u64 {
                i64::MAX
            } else {
                v as i64
            }
        }
    }
}

fn to_radix(mut v: u64, base: u32) -> String {
    const DIGITS: &[u8; 36] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";
    if v == 0 {
        return "0".into();
    }
    let mut out = Vec::new();
    while v > 0 {
        out.push(DIGITS[(v % u64::from(base)) as usize]);
        v /= u64::from(base);
    }
    out.reverse();
    String::from_utf8(out).expect("ASCII digits")
}

/// `CONV(text, from_base, to_base)`: None (NULL) for an empty `text` or a base whose
/// magnitude is outside 2..=36.
pub fn conv(text: &[u8], from_base: i64, to_base: i64) -> Option<String> {
    let (from_base, to_base) = (from_base as i32, to_base as i32);
    let valid = |b: i32| (2..=36).contains(&b.unsigned_abs());
    if text.is_empty() || !valid(from_base) || !valid(to_base) {
        return None;
    }
    let n = if from_base < 0 {
        strntoll(text, from_base.unsigned_abs()) as u64
    } else {
        strntoull(text, from_base as u32)
    };
    Some(if to_base < 0 && (n as i64) < 0 {
        format!(
            "-{}",
            to_radix((n as i64).unsigned_abs(), to_base.unsigned_abs())
        )
    } else {
        to_radix(n, to_base.unsigned_abs())
    })
}

/// `INET_ATON(text)`: a dotted IPv4 address as a number, MySQL's way: each part at
/// most 255, short forms `a.b` (`a.0.0.b`) and `a.b.c` (`a.b.0.c`), more than four
/// parts shifted in as well; None (NULL) for another character, a part over 255, an
/// empty string or a trailing dot.
pub fn inet_aton(text: &[u8]) -> Option<u64> {
    let (mut result, mut part, mut dots) = (0u64, 0u64, 0);
    for &c in text {
        match c {
            b'0'..=b'9' => {
                part = part * 10 + u64::from(c - b'0');
                if part > 255 {
                    return None;
                }
            }
            b'.' => {
                dots += 1;
                result = (result << 8).wrapping_add(part);
                part = 0;
            }
            _ => return None,
        }
    }
    if text.last().is_none_or(|&c| c == b'.') {
        return None;
    }
    match dots {
        1 => result <<= 16,
        2 => result <<= 8,
        _ => {}
    }
    Some((result << 8).wrapping_add(part))
}

/// The CRC-32 table of the IEEE polynomial (reflected 0xEDB88320), as zlib's.
const CRC32_TABLE: [u32; 256] = {
    let mut table = [0u32; 256];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u32;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 == 1 {
                0xEDB8_8320 ^ (c >> 1)
            } else {
                c >> 1
            };
            k += 1;
        }
        table[i] = c;
        i += 1;
    }
    table
};

/// `CRC32(s)`: zlib's CRC-32, as MySQL computes it.
pub fn crc32(bytes: &[u8]) -> u32 {
    !bytes.iter().fold(!0u32, |c, &b| {
        CRC32_TABLE[((c ^ u32::from(b)) & 0xFF) as usize] ^ (c >> 8)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Answers of MySQL's manual and of MariaDB 10.11.
    #[test]
    fn conv_answers() {
        let c = |t: &str, f, to| conv(t.as_bytes(), f, to);
        assert_eq!(c("a", 16, 2).unwrap(), "1010");
        assert_eq!(c("6E", 18, 8).unwrap(), "172");
        assert_eq!(c("-17", 10, -18).unwrap(), "-H");
        assert_eq!(c("40", 10, 10).unwrap(), "40");
        assert_eq!(c("-1", 10, 16).unwrap(), "FFFFFFFFFFFFFFFF");
        assert_eq!(c("zz", 36, 10).unwrap(), "1295");
        assert_eq!(c("12", 37, 10), None);
        assert_eq!(c("1x2", 10, 10).unwrap(), "1");
        assert_eq!(c("10.9", 10, 2).unwrap(), "1010");
        assert_eq!(c("", 10, 2), None);
        assert_eq!(c("-", 10, 2).unwrap(), "0");
        assert_eq!(
            c("18446744073709551616", 10, 10).unwrap(),
            "18446744073709551615"
        );
        assert_eq!(
            c("-18446744073709551616", -10, -10).unwrap(),
            "-9223372036854775808"
        );
        assert_eq!(c("  ff", 16, 10).unwrap(), "255");
        assert_eq!(c("12", 10, 1), None);
        assert_eq!(c("-1", 10, 2).unwrap(), "1".repeat(64));
    }

    /// MySQL's manual and MariaDB 10.11 (the same code).
    #[test]
    fn inet_aton_answers() {
        let a = |t: &str| inet_aton(t.as_bytes());
        assert_eq!(a("10.0.0.1"), Some(167_772_161));
        assert_eq!(a("127.1"), Some(2_130_706_433));
        assert_eq!(a("127.2.1"), Some(2_130_837_505));
        assert_eq!(a("127"), Some(127));
        assert_eq!(a("1.2.3.4.5"), Some(4_328_719_365));
        for bad in ["1.2.3.", "", "256.1.1.1", " 1.2.3.4", "1.a.2.3"] {
            assert_eq!(a(bad), None, "{bad}");
        }
    }

    #[test]
    fn crc32_answers() {
        assert_eq!(crc32(b"MySQL"), 3_259_397_556);
        assert_eq!(crc32(b"mysql"), 2_501_908_538);
        assert_eq!(crc32(b""), 0);
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
    }

    #[test]
    fn bit_operators() {
        let (a, b) = (Value::Int(5), Value::Int(3));
        assert_eq!(bit_op("&", &a, &b), Value::UInt(1));
        assert_eq!(bit_op("|", &a, &b), Value::UInt(7));
        assert_eq!(bit_op("^", &a, &b), Value::UInt(6));
        assert_eq!(bit_op("<<", &a, &Value::Int(2)), Value::UInt(20));
        assert_eq!(bit_op(">>", &a, &Value::Int(64)), Value::UInt(0));
        assert_eq!(bit_op("<<", &a, &Value::Int(-1)), Value::UInt(0));
        assert_eq!(
            bit_op("~", &Value::Int(0), &Value::Null),
            Value::UInt(u64::MAX)
        );
        assert_eq!(
            bit_op("&", &Value::Int(-1), &Value::Int(255)),
            Value::UInt(255)
        );
    }
}
