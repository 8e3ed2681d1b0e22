//! The MySQL client/server protocol, written by hand.
//!
//! - [`packet`]: framing. A packet is a 3-byte little-endian length, a 1-byte
//!   sequence number and the payload; payloads of 16 MiB - 1 or more continue in the
//!   next packet, and a payload of exactly a multiple of that ends with an empty one.
//! - [`handshake`]: the server's Protocol::HandshakeV10, the client's
//!   HandshakeResponse41 and SSLRequest.
//! - [`auth`]: mysql_native_password and caching_sha2_password scrambles.
//! - [`results`]: OK, ERR and EOF packets, column definitions, and rows in the text
//!   and binary encodings.
//! - [`stmt`]: COM_STMT_EXECUTE's parameters.
//!
//! Decoding never panics on bad input: every read goes through [`Reader`], which
//! returns [`Malformed`] when the payload is shorter than the field.

pub mod auth;
pub mod handshake;
pub mod packet;
pub mod results;
pub mod stmt;

/// Capability flags (the ones Tarn speaks or checks).
pub mod caps {
    pub const LONG_PASSWORD: u32 = 1;
    pub const FOUND_ROWS: u32 = 1 << 1;
    pub const LONG_FLAG: u32 = 1 << 2;
    pub const CONNECT_WITH_DB: u32 = 1 << 3;
    pub const NO_SCHEMA: u32 = 1 << 4;
    pub const LOCAL_FILES: u32 = 1 << 7;
    pub const IGNORE_SPACE: u32 = 1 << 8;
    pub const PROTOCOL_41: u32 = 1 << 9;
    pub const INTERACTIVE: u32 = 1 << 10;
    pub const SSL: u32 = 1 << 11;
    pub const TRANSACTIONS: u32 = 1 << 13;
    pub const SECURE_CONNECTION: u32 = 1 << 15;
    pub const MULTI_STATEMENTS: u32 = 1 << 16;
    pub const MULTI_RESULTS: u32 = 1 << 17;
    pub const PS_MULTI_RESULTS: u32 = 1 << 18;
    pub const PLUGIN_AUTH: u32 = 1 << 19;
    pub const CONNECT_ATTRS: u32 = 1 << 20;
    pub const PLUGIN_AUTH_LENENC_CLIENT_DATA: u32 = 1 << 21;
    pub const SESSION_TRACK: u32 = 1 << 23;
    pub const DEPRECATE_EOF: u32 = 1 << 24;

    /// What the server offers (SSL is added when a certificate is configured).
    pub const SERVER: u32 = LONG_PASSWORD
        | FOUND_ROWS
        | LONG_FLAG
        | CONNECT_WITH_DB
        | NO_SCHEMA
        | LOCAL_FILES
        | IGNORE_SPACE
        | PROTOCOL_41
        | INTERACTIVE
        | TRANSACTIONS
        | SECURE_CONNECTION
        | MULTI_STATEMENTS
        | MULTI_RESULTS
        | PS_MULTI_RESULTS
        | PLUGIN_AUTH
        | CONNECT_ATTRS
        | PLUGIN_AUTH_LENENC_CLIENT_DATA
        | DEPRECATE_EOF;
}

/// Server status flags (OK and EOF packets).
pub mod status {
    pub const IN_TRANS: u16 = 1;
    pub const AUTOCOMMIT: u16 = 1 << 1;
    pub const MORE_RESULTS_EXISTS: u16 = 1 << 3;
    pub const NO_INDEX_USED: u16 = 1 << 5;
    pub const CURSOR_EXISTS: u16 = 1 << 6;
    pub const LAST_ROW_SENT: u16 = 1 << 7;
}

/// Command bytes (the first byte of a client packet in the command phase).
pub mod command {
    pub const QUIT: u8 = 0x01;
    pub const INIT_DB: u8 = 0x02;
    pub const QUERY: u8 = 0x03;
    pub const FIELD_LIST: u8 = 0x04;
    pub const REFRESH: u8 = 0x07;
    pub const SHUTDOWN: u8 = 0x08;
    pub const STATISTICS: u8 = 0x09;
    pub const PROCESS_INFO: u8 = 0x0a;
    pub const PROCESS_KILL: u8 = 0x0c;
    pub const DEBUG: u8 = 0x0d;
    pub const PING: u8 = 0x0e;
    pub const CHANGE_USER: u8 = 0x11;
    pub const STMT_PREPARE: u8 = 0x16;
    pub const STMT_EXECUTE: u8 = 0x17;
    pub const STMT_SEND_LONG_DATA: u8 = 0x18;
    pub const STMT_CLOSE: u8 = 0x19;
    pub const STMT_RESET: u8 = 0x1a;
    pub const SET_OPTION: u8 = 0x1b;
    pub const STMT_FETCH: u8 = 0x1c;
    pub const RESET_CONNECTION: u8 = 0x1f;
}

/// COM_REFRESH's flag bits, and the FLUSH statement each stands for (`None`: a
/// cache Tarn does not have, so nothing to do). The deprecated command is what
/// `mysqldump --flush-logs` and `mysqladmin flush-*` send.
pub const REFRESH_FLAGS: [(u8, Option<&str>); 8] = [
    (1, Some("FLUSH PRIVILEGES")),
    (1 << 1, Some("FLUSH LOGS")),
    (1 << 2, Some("FLUSH TABLES")),
    (1 << 3, Some("FLUSH HOSTS")),
    (1 << 4, Some("FLUSH STATUS")),
    // The thread cache: Tarn's connections have no threads to cache.
    (1 << 5, None),
    (1 << 6, Some("RESET REPLICA")),
    (1 << 7, Some("RESET MASTER")),
];

/// Column types on the wire (`enum_field_types`).
pub mod column_type {
    pub const DECIMAL: u8 = 0x00;
    pub const TINY: u8 = 0x01;
    pub const SHORT: u8 = 0x02;
    pub const LONG: u8 = 0x03;
    pub const FLOAT: u8 = 0x04;
    pub const DOUBLE: u8 = 0x05;
    pub const NULL: u8 = 0x06;
    pub const TIMESTAMP: u8 = 0x07;
    pub const LONGLONG: u8 = 0x08;
    pub const INT24: u8 = 0x09;
    pub const DATE: u8 = 0x0a;
    pub const TIME: u8 = 0x0b;
    pub const DATETIME: u8 = 0x0c;
    pub const YEAR: u8 = 0x0d;
    pub const VARCHAR: u8 = 0x0f;
    pub const BIT: u8 = 0x10;
    pub const JSON: u8 = 0xf5;
    pub const NEWDECIMAL: u8 = 0xf6;
    pub const ENUM: u8 = 0xf7;
    pub const SET: u8 = 0xf8;
    pub const TINY_BLOB: u8 = 0xf9;
    pub const MEDIUM_BLOB: u8 = 0xfa;
    pub const LONG_BLOB: u8 = 0xfb;
    pub const BLOB: u8 = 0xfc;
    pub const VAR_STRING: u8 = 0xfd;
    pub const STRING: u8 = 0xfe;
    pub const GEOMETRY: u8 = 0xff;
}

/// Collation ids sent in the handshake and column definitions.
pub mod charset {
    /// utf8mb4_0900_ai_ci: what MySQL 8 announces and Tarn's text columns hold.
    pub const UTF8MB4_0900_AI_CI: u8 = 255;
    /// utf8mb4_general_ci (what MariaDB clients often ask for).
    pub const UTF8MB4_GENERAL_CI: u8 = 45;
    /// binary: numbers, dates and BLOBs.
    pub const BINARY: u8 = 63;
}

/// A payload too short for the field being read, or otherwise not what the protocol
/// allows. The connection answers with error 1047/1156 or closes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Malformed(pub &'static str);

impl std::fmt::Display for Malformed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "malformed packet: {}", self.0)
    }
}

/// A cursor over a payload; every read checks the length.
pub struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    pub fn new(data: &'a [u8]) -> Reader<'a> {
        Reader { data, pos: 0 }
    }

    pub fn remaining(&self) -> usize {
        self.data.len() - self.pos
    }

    pub fn is_empty(&self) -> bool {
        self.remaining() == 0
    }

    pub fn u8(&mut self) -> Result<u8, Malformed> {
        Ok(self.bytes(1, "u8")?[0])
    }

    pub fn u16(&mut self) -> Result<u16, Malformed> {
        let b = self.bytes(2, "u16")?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }

    pub fn u24(&mut self) -> Result<u32, Malformed> {
        let b = self.bytes(3, "u24")?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], 0]))
    }

    pub fn u32(&mut self) -> Result<u32, Malformed> {
        let b = self.bytes(4, "u32")?;
        Ok(u32::from_le_bytes(b.try_into().expect("4 bytes")))
    }

    pub fn u64(&mut self) -> Result<u64, Malformed> {
        let b = self.bytes(8, "u64")?;
        Ok(u64::from_le_bytes(b.try_into().expect("8 bytes")))
    }

    pub fn bytes(&mut self, n: usize, what: &'static str) -> Result<&'a [u8], Malformed> {
        if self.remaining() < n {
            return Err(Malformed(what));
        }
        let out = &self.data[self.pos..self.pos + n];
        self.pos += n;
        Ok(out)
    }

    pub fn rest(&mut self) -> &'a [u8] {
        let out = &self.data[self.pos..];
        self.pos = self.data.len();
        out
    }

    /// A NUL-terminated string (the NUL is consumed; a missing NUL takes the rest).
    pub fn null_terminated(&mut self) -> &'a [u8] {
        let rest = &self.data[self.pos..];
        match rest.iter().position(|&b| b == 0) {
            Some(i) => {
                self.pos += i + 1;
                &rest[..i]
            }
            None => self.rest(),
        }
    }

    /// A length-encoded integer. `0xfb` (NULL in rows) and `0xff` are not integers.
    pub fn lenenc_int(&mut self) -> Result<u64, Malformed> {
        match self.u8()? {
            n @ 0..=0xfa => Ok(n as u64),
            0xfc => Ok(self.u16()? as u64),
            0xfd => Ok(self.u24()? as u64),
            0xfe => self.u64(),
            _ => Err(Malformed("length-encoded integer")),
        }
    }

    pub fn lenenc_bytes(&mut self) -> Result<&'a [u8], Malformed> {
        let n = self.lenenc_int()?;
        let n = usize::try_from(n).map_err(|_| Malformed("length-encoded string"))?;
        self.bytes(n, "length-encoded string")
    }
}

/// Appends a length-encoded integer.
pub fn put_lenenc_int(out: &mut Vec<u8>, n: u64) {
    if n < 0xfb {
        out.push(n as u8);
    } else if n <= 0xffff {
        out.push(0xfc);
        out.extend_from_slice(&(n as u16).to_le_bytes());
    } else if n <= 0xff_ffff {
        out.push(0xfd);
        out.extend_from_slice(&(n as u32).to_le_bytes()[..3]);
    } else {
        out.push(0xfe);
        out.extend_from_slice(&n.to_le_bytes());
    }
}

/// Appends a length-encoded string.
pub fn put_lenenc_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    put_lenenc_int(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lenenc_integers_round_trip_at_every_width_boundary() {
        for n in [
            0u64,
            250,
            251,
            0xffff,
            0x1_0000,
            0xff_ffff,
            0x100_0000,
            u64::MAX,
        ] {
            let mut out = Vec::new();
            put_lenenc_int(&mut out, n);
            let mut r = Reader::new(&out);
            assert_eq!(r.lenenc_int(), Ok(n));
            assert!(r.is_empty());
        }
    }

    #[test]
    fn short_payloads_are_malformed_not_panics() {
        let mut r = Reader::new(&[0xfe, 1, 2]);
        assert!(r.lenenc_int().is_err());
        let mut r = Reader::new(&[5, b'a']);
        assert!(r.lenenc_bytes().is_err());
        let mut r = Reader::new(&[]);
        assert!(r.u8().is_err());
        assert_eq!(Reader::new(b"abc").null_terminated(), b"abc");
    }
}
