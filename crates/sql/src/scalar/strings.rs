//! String functions beyond the basic ones in [`super::func`]: `SUBSTRING_INDEX`,
//! `FIND_IN_SET`, `INSERT`, `QUOTE`, `SOUNDEX`, `MAKE_SET`, `EXPORT_SET`, base64 and
//! the digests (`MD5`, `SHA1`, `SHA2`).
//!
//! Each follows MySQL 8's code for its edge cases (named per function). Strings are
//! UTF-8 and counted in characters ([`super::cast::char_count`]); delimiters are
//! matched byte for byte, case-sensitively, as MySQL does for `SUBSTRING_INDEX`, while
//! `FIND_IN_SET` compares its elements under the arguments' collation.

use std::cmp::Ordering;

use sha1::Digest;
use tarn_row::types::Collation;

use super::cast::{char_boundary_after, char_count, utf8_char_len};
use super::compare::cmp_strings;

/// `SUBSTRING_INDEX(s, delimiter, count)`: the text before the `count`-th delimiter
/// (counting from the left), or after the `-count`-th (counting from the right);
/// the whole string when there are fewer; empty for an empty delimiter or a zero
/// count. `count` is taken as a 32-bit integer, as MySQL does. Occurrences never
/// overlap and are found from the left in both directions (MySQL's multi-byte path:
/// `SUBSTRING_INDEX('aaa', 'aa', -1)` is `'a'`).
pub fn substring_index(s: &[u8], delimiter: &[u8], count: i64) -> Vec<u8> {
    let count = count as i32;
    if s.is_empty() || delimiter.is_empty() || count == 0 {
        return Vec::new();
    }
    let mut starts = Vec::new();
    let mut at = 0;
    while at + delimiter.len() <= s.len() {
        if s[at..].starts_with(delimiter) {
            starts.push(at);
            // MySQL's count > 0 pass stops at the count-th occurrence.
            if count > 0 && starts.len() == count as usize {
                return s[..at].to_vec();
            }
            at += delimiter.len();
        } else {
            at += utf8_char_len(s, at);
        }
    }
    if count > 0 {
        return s.to_vec();
    }
    let from_left = starts.len() as i64 + i64::from(count);
    match usize::try_from(from_left) {
        Ok(i) => s[starts[i] + delimiter.len()..].to_vec(),
        Err(_) => s.to_vec(),
    }
}

/// `FIND_IN_SET(needle, list)`: the 1-based position of `needle` among the
/// comma-separated elements of `list`; 0 when absent, when `list` is empty or when
/// `needle` holds a comma.
pub fn find_in_set(needle: &[u8], list: &[u8], collation: Collation) -> i64 {
    if list.is_empty() || needle.contains(&b',') {
        return 0;
    }
    list.split(|&b| b == b',')
        .position(|element| cmp_strings(element, needle, collation) == Ordering::Equal)
        .map_or(0, |p| p as i64 + 1)
}

/// `INSERT(s, pos, len, new)`: `s` with `len` characters from `pos` (1-based) replaced
/// by `new`; `s` itself when `pos` is outside it; the rest of `s` when `len` is
/// negative or runs past its end.
pub fn insert(s: &[u8], pos: i64, len: i64, new: &[u8]) -> Vec<u8> {
    let total = char_count(s) as i64;
    if pos < 1 || pos > total {
        return s.to_vec();
    }
    let start = (pos - 1) as usize;
    let len = if len < 0 || len > total { total } else { len } as usize;
    let from = char_boundary_after(s, start);
    let to = from + char_boundary_after(&s[from..], len);
    [&s[..from], new, &s[to..]].concat()
}

/// `QUOTE(s)`: `s` in single quotes with `\`, `'`, NUL (`\0`) and Ctrl-Z (`\Z`)
/// escaped by a backslash.
pub fn quote(s: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.len() + 2);
    out.push(b'\'');
    for &b in s {
        match b {
            b'\\' | b'\'' => out.extend_from_slice(&[b'\\', b]),
            0 => out.extend_from_slice(b"\\0"),
            0x1a => out.extend_from_slice(b"\\Z"),
            _ => out.push(b),
        }
    }
    out.push(b'\'');
    out
}

/// `SOUNDEX(s)`, MySQL's variant: the first letter, then the code of each later
/// letter that differs from the previous letter's code (vowels, `H`, `W`, `Y` and
/// letters outside A-Z code as 0: skipped, and not separating equal codes), padded
/// with `0` to four characters but not cut to four. Characters from U+00C0 on count
/// as letters; other non-letters are skipped. Empty when `s` has no letter.
pub fn soundex(s: &[u8]) -> Vec<u8> {
    const MAP: &[u8; 26] = b"01230120022455012623010202";
    let code = |c: char| match c.to_ascii_uppercase() {
        u @ 'A'..='Z' => MAP[(u as u8 - b'A') as usize],
        _ => b'0',
    };
    let is_letter = |c: char| c.is_ascii_alphabetic() || u32::from(c) >= 0xC0;
    let text = String::from_utf8_lossy(s);
    let mut letters = text.chars().filter(|&c| is_letter(c));
    let Some(first) = letters.next() else {
        return Vec::new();
    };
    let mut out = first.to_ascii_uppercase().to_string().into_bytes();
    let mut last = code(first);
    let mut chars = 1;
    for c in letters {
        let code = code(c);
        if code != b'0' && code != last {
            out.push(code);
            chars += 1;
            last = code;
        }
    }
    while chars < 4 {
        out.push(b'0');
        chars += 1;
    }
    out
}

/// `MAKE_SET(bits, s1, s2, ...)`: the strings whose bit is set (bit 0 for `s1`),
/// NULLs skipped, joined by commas.
pub fn make_set(bits: u64, strings: &[Option<Vec<u8>>]) -> Vec<u8> {
    let chosen: Vec<&[u8]> = strings
        .iter()
        .enumerate()
        .take(64)
        .filter(|(i, _)| bits >> i & 1 == 1)
        .filter_map(|(_, s)| s.as_deref())
        .collect();
    chosen.join(&b","[..])
}

/// `EXPORT_SET(bits, on, off, separator, count)`: `on` or `off` for each of the
/// lowest `count` bits (0..=64; anything else is 64), lowest first.
pub fn export_set(bits: u64, on: &[u8], off: &[u8], separator: &[u8], count: i64) -> Vec<u8> {
    let count = if (0..=64).contains(&count) { count } else { 64 } as usize;
    let parts: Vec<&[u8]> = (0..count)
        .map(|i| if bits >> i & 1 == 1 { on } else { off })
        .collect();
    parts.join(separator)
}

const BASE64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// `TO_BASE64(s)`: padded with `=`, a newline after every 76 characters of output
/// (not at its end), as MySQL's `base64_encode`.
pub fn to_base64(s: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.len().div_ceil(3) * 4 + s.len() / 57);
    for (i, chunk) in s.chunks(3).enumerate() {
        if i > 0 && i % 19 == 0 {
            out.push(b'\n');
        }
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |acc, (j, &b)| acc | u32::from(b) << (16 - 8 * j));
        for j in 0..4 {
            if j <= chunk.len() {
                out.push(BASE64[(n >> (18 - 6 * j) & 63) as usize]);
            } else {
                out.push(b'=');
            }
        }
    }
    out
}

/// `FROM_BASE64(s)`: None (NULL) unless `s` is whole groups of four base64
/// characters, the last one padded with at most two `=`; spaces, tabs and line
/// breaks between characters are skipped, as MySQL's `base64_decode`.
pub fn from_base64(s: &[u8]) -> Option<Vec<u8>> {
    let digits: Vec<u8> = s
        .iter()
        .copied()
        .filter(|b| !matches!(b, b' ' | b'\t' | b'\r' | b'\n'))
        .collect();
    if digits.len() % 4 != 0 {
        return None;
    }
    let value = |b: u8| BASE64.iter().position(|&c| c == b).map(|p| p as u32);
    let groups = digits.len() / 4;
    let mut out = Vec::with_capacity(groups * 3);
    for (g, group) in digits.chunks_exact(4).enumerate() {
        let padding = group.iter().rev().take_while(|&&b| b == b'=').count();
        if padding > 2 || (padding > 0 && g + 1 != groups) {
            return None;
        }
        let mut n = 0u32;
        for &b in &group[..4 - padding] {
            n = n << 6 | value(b)?;
        }
        n <<= 6 * padding as u32;
        out.extend_from_slice(&n.to_be_bytes()[1..4 - padding]);
    }
    Some(out)
}

fn lower_hex(bytes: &[u8]) -> Vec<u8> {
    bytes
        .iter()
        .flat_map(|b| format!("{b:02x}").into_bytes())
        .collect()
}

/// `MD5(s)`: 32 lowercase hexadecimal digits.
pub fn md5(s: &[u8]) -> Vec<u8> {
    lower_hex(&<md5::Md5 as md5::Digest>::digest(s))
}

/// `SHA1(s)` / `SHA(s)`: 40 lowercase hexadecimal digits.
pub fn sha1(s: &[u8]) -> Vec<u8> {
    lower_hex(&sha1::Sha1::digest(s))
}

/// `SHA2(s, bits)`: SHA-224, -256, -384 or -512 (0 is 256) in lowercase hexadecimal;
/// None (NULL) for any other length.
pub fn sha2(s: &[u8], bits: i64) -> Option<Vec<u8>> {
    Some(match bits {
        224 => lower_hex(&sha2::Sha224::digest(s)),
        0 | 256 => lower_hex(&sha2::Sha256::digest(s)),
        384 => lower_hex(&sha2::Sha384::digest(s)),
        512 => lower_hex(&sha2::Sha512::digest(s)),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(v: Vec<u8>) -> String {
        String::from_utf8(v).unwrap()
    }

    /// Answers of MySQL's manual and of MariaDB 10.11 (the same code).
    #[test]
    fn mysql_answers() {
        let si = |s: &str, d: &str, n| text(substring_index(s.as_bytes(), d.as_bytes(), n));
        assert_eq!(si("www.mysql.com", ".", 2), "www.mysql");
        assert_eq!(si("www.mysql.com", ".", -2), "mysql.com");
        assert_eq!(si("www.mysql.com", ".", 0), "");
        assert_eq!(si("a..b..c", "..", 2), "a..b");
        assert_eq!(si("aXbxc", "x", 1), "aXb");
        assert_eq!(si("abc", "", 1), "");
        assert_eq!(si("a.b", ".", 100), "a.b");
        assert_eq!(si("a.b.c", ".", -100), "a.b.c");
        assert_eq!(si("aaa", "aa", -1), "a");
        assert_eq!(si("aaa", "aa", 1), "");
        assert_eq!(si("é.ü.ö", ".", -1), "ö");
        assert_eq!(si("a.b", ".", (1 << 32) + 1), "a");
        let fis =
            |n: &str, l: &str| find_in_set(n.as_bytes(), l.as_bytes(), Collation::CaseInsensitive);
        assert_eq!(fis("b", "a,b,c"), 2);
        assert_eq!(fis("B", "a,b,c"), 2);
        assert_eq!(find_in_set(b"B", b"a,b,c", Collation::Binary), 0);
        assert_eq!(fis("", "a,,c"), 2);
        assert_eq!(fis("a,b", "a,b"), 0);
        assert_eq!(fis("x", ""), 0);
        assert_eq!(fis("", ""), 0);
        let ins = |p, l| text(insert(b"Quadratic", p, l, b"What"));
        assert_eq!(ins(3, 4), "QuWhattic");
        assert_eq!(ins(-1, 4), "Quadratic");
        assert_eq!(ins(3, 100), "QuWhat");
        assert_eq!(ins(10, 1), "Quadratic");
        assert_eq!(ins(9, 1), "QuadratiWhat");
        assert_eq!(ins(3, -1), "QuWhat");
        assert_eq!(ins(3, 0), "QuWhatadratic");
        assert_eq!(text(quote(b"Don't!")), "'Don\\'t!'");
        assert_eq!(text(quote(b"a\\b\x00\x1a")), "'a\\\\b\\0\\Z'");
        let sx = |s: &str| text(soundex(s.as_bytes()));
        assert_eq!(sx("Hello"), "H400");
        assert_eq!(sx("Quadratically"), "Q36324");
        assert_eq!(sx("Tymczak"), "T520");
        assert_eq!(sx("Pfister"), "P236");
        assert_eq!(sx("Ashcraft"), "A2613");
        assert_eq!(sx("  1 hello"), "H400");
        assert_eq!(sx("123"), "");
        let opt = |s: &str| Some(s.as_bytes().to_vec());
        assert_eq!(text(make_set(1, &[opt("a"), opt("b"), opt("c")])), "a");
        assert_eq!(
            text(make_set(1 | 4, &[opt("hello"), opt("nice"), opt("world")])),
            "hello,world"
        );
        assert_eq!(
            text(make_set(
                1 | 4,
                &[opt("hello"), opt("nice"), None, opt("world")]
            )),
            "hello"
        );
        assert_eq!(text(make_set(0, &[opt("a")])), "");
        assert_eq!(text(export_set(5, b"Y", b"N", b",", 4)), "Y,N,Y,N");
        assert_eq!(
            text(export_set(6, b"1", b"0", b",", 10)),
            "0,1,1,0,0,0,0,0,0,0"
        );
        assert_eq!(export_set(6, b"1", b"0", b"", 100).len(), 64);
        assert_eq!(text(to_base64(b"abc")), "YWJj");
        assert_eq!(text(to_base64(b"ab")), "YWI=");
        assert_eq!(text(to_base64(b"a")), "YQ==");
        assert_eq!(
            text(to_base64(&[b'a'; 60])),
            format!("{}\nYWFh", "YWFh".repeat(19))
        );
        assert_eq!(from_base64(b"YWJj").unwrap(), b"abc");
        assert_eq!(from_base64(b"YWI=").unwrap(), b"ab");
        assert_eq!(from_base64(b"YW I=").unwrap(), b"ab");
        assert_eq!(from_base64(b"YWJj\nZGVm").unwrap(), b"abcdef");
        assert_eq!(from_base64(b"YQ==").unwrap(), b"a");
        assert_eq!(from_base64(b"").unwrap(), b"");
        for bad in [
            &b"YWI"[..],
            b"YQ",
            b"YQ=",
            b"Y",
            b"YQ==YQ==",
            b"YW=j",
            b"Y!Jj",
        ] {
            assert_eq!(from_base64(bad), None, "{:?}", String::from_utf8_lossy(bad));
        }
        assert_eq!(text(md5(b"abc")), "900150983cd24fb0d6963f7d28e17f72");
        assert_eq!(
            text(sha1(b"abc")),
            "a9993e364706816aba3e25717850c26c9cd0d89d"
        );
        assert_eq!(
            text(sha2(b"abc", 0).unwrap()),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(sha2(b"abc", 1), None);
        assert_eq!(sha2(b"abc", 512).unwrap().len(), 128);
    }

    /// Decoding what was encoded gives the bytes back, for every length and byte.
    #[test]
    fn base64_round_trip() {
        let mut rng = tarn_common::rng::Rng::new(tarn_common::rng::test_seed("base64_round_trip"));
        for len in 0..300 {
            let mut bytes = vec![0u8; len];
            rng.fill(&mut bytes);
            assert_eq!(from_base64(&to_base64(&bytes)).unwrap(), bytes);
        }
    }
}
