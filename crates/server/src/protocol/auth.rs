//! Authentication scrambles.
//!
//! The server keeps only hashes (see `tarn_sql::accounts`):
//! - mysql_native_password: `H = SHA1(SHA1(pw))`. The client sends
//!   `SHA1(pw) XOR SHA1(nonce ++ H)`; XOR-ing that with `SHA1(nonce ++ H)` gives a
//!   candidate `SHA1(pw)`, right when its SHA1 is `H`.
//! - caching_sha2_password: `H = SHA256(SHA256(pw))`. The client sends
//!   `SHA256(pw) XOR SHA256(H ++ nonce)` (the fast path); the same check in SHA256.
//!   The full path sends the password itself, over TLS only, and the server checks
//!   `SHA256(SHA256(pw)) = H`.
//!
//! Comparisons are constant-time in the hash length.

use sha1::{Digest, Sha1};
use sha2::Sha256;

pub const NATIVE_PASSWORD: &str = "mysql_native_password";
pub const CACHING_SHA2_PASSWORD: &str = "caching_sha2_password";

/// caching_sha2_password's second-round messages (after a 0x01 "more data" byte).
pub const SHA2_FAST_AUTH_SUCCESS: u8 = 3;
pub const SHA2_PERFORM_FULL_AUTHENTICATION: u8 = 4;

fn sha1(parts: &[&[u8]]) -> [u8; 20] {
    let mut h = Sha1::new();
    for p in parts {
        h.update(p);
    }
    h.finalize().into()
}

fn sha256(parts: &[&[u8]]) -> [u8; 32] {
    let mut h = Sha256::new();
    for p in parts {
        h.update(p);
    }
    h.finalize().into()
}

fn equal(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Checks a mysql_native_password answer to `nonce` against `stored` =
/// SHA1(SHA1(password)).
pub fn verify_native(nonce: &[u8; 20], stored: &[u8], response: &[u8]) -> bool {
    if response.len() != 20 || stored.len() != 20 {
        return false;
    }
    let mask = sha1(&[nonce, stored]);
    let mut candidate = [0u8; 20];
    for i in 0..20 {
        candidate[i] = response[i] ^ mask[i];
    }
    equal(&sha1(&[&candidate]), stored)
}

/// Checks a caching_sha2_password fast-path answer against `stored` =
/// SHA256(SHA256(password)).
pub fn verify_sha2_scramble(nonce: &[u8; 20], stored: &[u8], response: &[u8]) -> bool {
    if response.len() != 32 || stored.len() != 32 {
        return false;
    }
    let mask = sha256(&[stored, nonce]);
    let mut candidate = [0u8; 32];
    for i in 0..32 {
        candidate[i] = response[i] ^ mask[i];
    }
    equal(&sha256(&[&candidate]), stored)
}

/// Checks a password sent in clear (the full path, over TLS) against `stored`.
pub fn verify_sha2_cleartext(stored: &[u8], password: &[u8]) -> bool {
    let password = password.strip_suffix(&[0]).unwrap_or(password);
    equal(&sha256(&[&sha256(&[password])]), stored)
}

/// What a client computes for mysql_native_password (tests and the bench client).
pub fn native_scramble(nonce: &[u8; 20], password: &[u8]) -> [u8; 20] {
    let h1 = sha1(&[password]);
    let h2 = sha1(&[&h1]);
    let mask = sha1(&[nonce, &h2]);
    std::array::from_fn(|i| h1[i] ^ mask[i])
}

/// What a client computes for caching_sha2_password's fast path.
pub fn sha2_scramble(nonce: &[u8; 20], password: &[u8]) -> [u8; 32] {
    let h1 = sha256(&[password]);
    let h2 = sha256(&[&h1]);
    let mask = sha256(&[&h2, nonce]);
    std::array::from_fn(|i| h1[i] ^ mask[i])
}

/// A fresh 20-byte challenge from the OS's random source, without NUL or `$`
/// bytes (clients treat the nonce as a C string).
pub fn nonce() -> [u8; 20] {
    use std::io::Read;
    let mut raw = [0u8; 20];
    if std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut raw))
        .is_err()
    {
        // No /dev/urandom: fall back to the clock and address-space entropy. The
        // nonce only needs to be unpredictable to a client that can't read us.
        let seed = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()) as u64
            ^ (&raw as *const _ as u64);
        raw = std::array::from_fn(|i| (seed.rotate_left(i as u32 * 7) >> 3) as u8);
    }
    raw.map(|b| 1 + (b % 0x7e) + u8::from(b % 0x7e + 1 == b'$'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn native_password_verifies_the_right_password_only() {
        let nonce = nonce();
        let stored = sha1(&[&sha1(&[b"secret"])]);
        assert!(verify_native(
            &nonce,
            &stored,
            &native_scramble(&nonce, b"secret")
        ));
        assert!(!verify_native(
            &nonce,
            &stored,
            &native_scramble(&nonce, b"Secret")
        ));
        assert!(!verify_native(&nonce, &stored, &[]));
        let other = nonce.map(|b| b ^ 1);
        assert!(!verify_native(
            &other,
            &stored,
            &native_scramble(&nonce, b"secret")
        ));
    }

    #[test]
    fn caching_sha2_fast_and_full_paths_verify_the_right_password_only() {
        let nonce = nonce();
        let stored = sha256(&[&sha256(&[b"pw"])]);
        assert!(verify_sha2_scramble(
            &nonce,
            &stored,
            &sha2_scramble(&nonce, b"pw")
        ));
        assert!(!verify_sha2_scramble(
            &nonce,
            &stored,
            &sha2_scramble(&nonce, b"pW")
        ));
        assert!(verify_sha2_cleartext(&stored, b"pw\0"));
        assert!(!verify_sha2_cleartext(&stored, b"pw2"));
    }

    #[test]
    fn nonces_have_no_nul_or_dollar_and_differ() {
        let (a, b) = (nonce(), nonce());
        assert!(a.iter().all(|&c| c != 0 && c != b'$' && c < 0x80));
        assert_ne!(a, b);
    }
}
