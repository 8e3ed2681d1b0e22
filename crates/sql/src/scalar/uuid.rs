//! `UUID()`, `UUID_SHORT()`, `UUID_TO_BIN()`, `BIN_TO_UUID()` and `IS_UUID()`.
//!
//! `UUID()` is an RFC 4122 version 1 UUID as MySQL makes them: a 60-bit timestamp in
//! 100 ns steps since 1582-10-15, a 14-bit clock sequence and a 48-bit node, printed
//! as 36 lowercase characters. MySQL takes the node from a network card; Tarn draws a
//! random node once per process (with the multicast bit set, as RFC 4122 section 4.5
//! asks of a node that is not a card's address) and a random clock sequence. Every
//! value the process makes is unique: the timestamp of each is past the previous one
//! even within one clock tick (at most ten million values a second, as MySQL).
//!
//! `UUID_SHORT()` is MySQL's: `(server_id & 255) << 56` plus the process's start in
//! seconds `<< 24`, plus one more per call (Tarn's server id is 1).
//!
//! `UUID_TO_BIN(text[, swap])` accepts the three forms `IS_UUID` accepts (36
//! characters with dashes, 32 hexadecimal digits, or the dashed form in braces) and
//! anything else is error 1411; `BIN_TO_UUID(bytes[, swap])` wants 16 bytes (else
//! 1411). With `swap` true the time-low and time-high groups trade places, so that
//! version 1 UUIDs sort by time.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use parking_lot::Mutex;
use tarn_common::{Error, Result};

use super::rand::os_random;

/// 100 ns steps from 1582-10-15 (the Gregorian reform) to 1970-01-01.
const GREGORIAN_TO_UNIX_100NS: u64 = 0x01B2_1DD2_1381_4000;

struct Generator {
    /// The last timestamp handed out.
    last: u64,
    clock_seq: u16,
    node: [u8; 6],
}

static GENERATOR: Mutex<Option<Generator>> = Mutex::new(None);

fn now_100ns() -> u64 {
    let since = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    (since.as_nanos() / 100) as u64 + GREGORIAN_TO_UNIX_100NS
}

/// `UUID()`.
pub fn uuid_v1() -> String {
    let (time, clock_seq, node) = {
        let mut generator = GENERATOR.lock();
        let g = generator.get_or_insert_with(|| {
            let random = os_random();
            let mut node = [0u8; 6];
            node.copy_from_slice(&random.to_be_bytes()[..6]);
            node[0] |= 0x01;
            Generator {
                last: 0,
                clock_seq: (os_random() & 0x3FFF) as u16,
                node,
            }
        });
        g.last = now_100ns().max(g.last + 1);
        (g.last, g.clock_seq, g.node)
    };
    let mut bytes = [0u8; 16];
    bytes[0..4].copy_from_slice(&(time as u32).to_be_bytes());
    bytes[4..6].copy_from_slice(&((time >> 32) as u16).to_be_bytes());
    bytes[6..8].copy_from_slice(&(((time >> 48) as u16 & 0x0FFF) | 0x1000).to_be_bytes());
    bytes[8..10].copy_from_slice(&((clock_seq & 0x3FFF) | 0x8000).to_be_bytes());
    bytes[10..16].copy_from_slice(&node);
    format_uuid(&bytes)
}

/// `UUID_SHORT()`.
pub fn uuid_short() -> u64 {
    static NEXT: OnceLock<AtomicU64> = OnceLock::new();
    const SERVER_ID: u64 = 1;
    NEXT.get_or_init(|| {
        let start_s = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_secs();
        AtomicU64::new(((SERVER_ID & 255) << 56).wrapping_add(start_s << 24))
    })
    .fetch_add(1, Ordering::Relaxed)
}

/// The 36-character text of 16 bytes.
fn format_uuid(bytes: &[u8; 16]) -> String {
    let mut out = String::with_capacity(36);
    for (i, b) in bytes.iter().enumerate() {
        if matches!(i, 4 | 6 | 8 | 10) {
            out.push('-');
        }
        out.push_str(&format!("{b:02x}"));
    }
    out
}

/// The 16 bytes of a UUID in one of the three accepted forms.
fn parse(text: &[u8]) -> Option<[u8; 16]> {
    let digits: Vec<u8> = match text.len() {
        32 => text.to_vec(),
        36 => dashed(text)?,
        38 if text[0] == b'{' && text[37] == b'}' => dashed(&text[1..37])?,
        _ => return None,
    };
    let mut out = [0u8; 16];
    for (i, pair) in digits.chunks_exact(2).enumerate() {
        let hex = |b: u8| (b as char).to_digit(16);
        out[i] = (hex(pair[0])? * 16 + hex(pair[1])?) as u8;
    }
    Some(out)
}

fn dashed(text: &[u8]) -> Option<Vec<u8>> {
    let dashes_right = [8, 13, 18, 23].iter().all(|&i| text[i] == b'-');
    dashes_right.then(|| text.iter().copied().filter(|&b| b != b'-').collect())
}

/// `IS_UUID(text)`.
pub fn is_uuid(text: &[u8]) -> bool {
    parse(text).is_some()
}

fn swap(bytes: &mut [u8; 16]) {
    // time-low (0..4), time-mid (4..6), time-high (6..8) <-> time-high, time-mid,
    // time-low.
    let original = *bytes;
    bytes[0..2].copy_from_slice(&original[6..8]);
    bytes[2..4].copy_from_slice(&original[4..6]);
    bytes[4..8].copy_from_slice(&original[0..4]);
}

fn unswap(bytes: &mut [u8; 16]) {
    let original = *bytes;
    bytes[0..4].copy_from_slice(&original[4..8]);
    bytes[4..6].copy_from_slice(&original[2..4]);
    bytes[6..8].copy_from_slice(&original[0..2]);
}

/// ER_WRONG_VALUE_FOR_TYPE (1411), with the value as MySQL prints it (bytes outside
/// printable ASCII as `\xHH`).
fn wrong_value(value: &[u8], function: &str) -> Error {
    let mut printed = String::new();
    for &b in value {
        if (0x20..0x7f).contains(&b) {
            printed.push(b as char);
        } else {
            printed.push_str(&format!("\\x{b:02X}"));
        }
    }
    Error::sql(
        1411,
        "HY000",
        format!("Incorrect string value: '{printed}' for function {function}"),
    )
}

/// `UUID_TO_BIN(text, swap)`.
pub fn uuid_to_bin(text: &[u8], swap_times: bool) -> Result<Vec<u8>> {
    let mut bytes = parse(text).ok_or_else(|| wrong_value(text, "uuid_to_bin"))?;
    if swap_times {
        swap(&mut bytes);
    }
    Ok(bytes.to_vec())
}

/// `BIN_TO_UUID(bytes, swap)`.
pub fn bin_to_uuid(value: &[u8], swap_times: bool) -> Result<String> {
    let mut bytes: [u8; 16] = value
        .try_into()
        .map_err(|_| wrong_value(value, "bin_to_uuid"))?;
    if swap_times {
        unswap(&mut bytes);
    }
    Ok(format_uuid(&bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIXED: &str = "6ccd780c-baba-1026-9564-5b8c656024db";

    #[test]
    fn version_1_text() {
        let a = uuid_v1();
        let b = uuid_v1();
        assert_ne!(a, b);
        for u in [&a, &b] {
            assert_eq!(u.len(), 36);
            assert!(is_uuid(u.as_bytes()));
            assert_eq!(&u[14..15], "1", "version 1: {u}");
            assert!("89ab".contains(&u[19..20]), "RFC 4122 variant: {u}");
        }
        // The same node for the whole process.
        assert_eq!(a[24..], b[24..]);
        // Time-ordered: later values have a later timestamp.
        let time = |u: &str| {
            let hex = format!("{}{}{}", &u[15..18], &u[9..13], &u[0..8]);
            u64::from_str_radix(&hex, 16).unwrap()
        };
        assert!(time(&b) > time(&a));
    }

    #[test]
    fn short_ids_increase() {
        let a = uuid_short();
        let b = uuid_short();
        assert!(b > a);
        assert_eq!(a >> 56, 1);
    }

    /// MySQL's manual's example.
    #[test]
    fn binary_round_trip() {
        let plain = uuid_to_bin(FIXED.as_bytes(), false).unwrap();
        assert_eq!(plain[..4], [0x6c, 0xcd, 0x78, 0x0c]);
        let swapped = uuid_to_bin(FIXED.as_bytes(), true).unwrap();
        let hex: String = swapped.iter().map(|b| format!("{b:02X}")).collect();
        assert_eq!(hex, "1026BABA6CCD780C95645B8C656024DB");
        assert_eq!(bin_to_uuid(&plain, false).unwrap(), FIXED);
        assert_eq!(bin_to_uuid(&swapped, true).unwrap(), FIXED);
        assert_eq!(
            bin_to_uuid(&swapped, false).unwrap(),
            "1026baba-6ccd-780c-9564-5b8c656024db"
        );
        let braces = format!("{{{FIXED}}}");
        assert_eq!(uuid_to_bin(braces.as_bytes(), false).unwrap(), plain);
        let digits = FIXED.replace('-', "");
        assert_eq!(uuid_to_bin(digits.as_bytes(), false).unwrap(), plain);
        let e = uuid_to_bin(b"not-a-uuid", false).unwrap_err();
        assert_eq!(e.mysql_code(), 1411);
        assert_eq!(
            e.to_string(),
            "Incorrect string value: 'not-a-uuid' for function uuid_to_bin"
        );
        assert_eq!(bin_to_uuid(b"\x01", false).unwrap_err().mysql_code(), 1411);
        assert!(!is_uuid(b"6ccd780c-baba-1026-9564-5b8c656024d"));
        assert!(!is_uuid(b"6ccd780cbaba-1026-9564-5b8c656024db0"));
        assert!(!is_uuid(b"{6ccd780cbaba10269564-5b8c656024db}"));
    }
}
