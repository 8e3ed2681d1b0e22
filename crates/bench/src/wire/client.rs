//! A lean, blocking MySQL protocol client for measuring result streaming: it reads
//! rows and throws them away, counting rows and bytes, with no per-row allocation.
//!
//! What it speaks (enough for Tarn and MariaDB, nothing more):
//! - the initial handshake v10 and a `HandshakeResponse41` with `CLIENT_PROTOCOL_41`,
//!   `SECURE_CONNECTION`, `PLUGIN_AUTH` and, when the server offers it,
//!   `DEPRECATE_EOF`; the password as a `mysql_native_password` scramble (empty for an
//!   empty password), and one `AuthSwitchRequest` to `mysql_native_password`;
//! - `COM_QUERY` with a text result set, OK or ERR; several result sets when the server
//!   says more follow;
//! - packets of 16 MiB and more (continuation packets), with every sequence id checked.
//!
//! Rows are skipped inside the read buffer: the reader looks at a row packet's first
//! byte (to tell a row from the final EOF/OK or an ERR) and advances past it, so
//! streaming costs one `read` per buffer and a few comparisons per packet.
//! [`Client::query_rows`] collects small results (settings, counts) as text.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// The read buffer of the client, also the buffer size of the loopback baseline.
pub const READ_BUFFER_BYTES: usize = 1 << 20;

/// The largest payload of one physical packet; a payload of exactly this size is
/// continued by the next packet.
const MAX_PACKET_PAYLOAD: usize = 0xFF_FFFF;

const CLIENT_LONG_PASSWORD: u32 = 0x1;
const CLIENT_LONG_FLAG: u32 = 0x4;
const CLIENT_CONNECT_WITH_DB: u32 = 0x8;
const CLIENT_PROTOCOL_41: u32 = 0x200;
const CLIENT_TRANSACTIONS: u32 = 0x2000;
const CLIENT_SECURE_CONNECTION: u32 = 0x8000;
const CLIENT_MULTI_RESULTS: u32 = 0x2_0000;
const CLIENT_PLUGIN_AUTH: u32 = 0x8_0000;
const CLIENT_DEPRECATE_EOF: u32 = 0x100_0000;

const SERVER_MORE_RESULTS_EXISTS: u16 = 0x8;
const COM_QUERY: u8 = 0x03;
const COM_QUIT: u8 = 0x01;
const UTF8MB4_GENERAL_CI: u8 = 45;
const NATIVE_PASSWORD: &str = "mysql_native_password";

/// Why a client call failed.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("{what}: {source}")]
    Io {
        what: &'static str,
        #[source]
        source: std::io::Error,
    },
    /// The server sent an ERR packet.
    #[error("server error {code} ({sqlstate}): {message}")]
    Server {
        code: u16,
        sqlstate: String,
        message: String,
    },
    /// The server sent something this client does not understand.
    #[error("protocol: {0}")]
    Protocol(String),
}

type Result<T> = std::result::Result<T, ClientError>;

/// What one streamed query read.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StreamStats {
    /// Row packets across all result sets.
    pub rows: u64,
    /// Every byte read from the socket for the query, headers included.
    pub bytes: u64,
    /// From sending the query to reading its last packet.
    pub seconds: f64,
}

/// One connection to a MySQL-protocol server.
pub struct Client {
    stream: TcpStream,
    buf: Box<[u8]>,
    start: usize,
    end: usize,
    /// Bytes read from the socket since the counter was last reset.
    bytes_read: u64,
    /// The sequence id the next packet read must carry.
    seq: u8,
    capabilities: u32,
    server_version: String,
}

impl Client {
    /// Connects to `host:port` and logs in as `user` with `password`, with `database`
    /// as the default database if given.
    pub fn connect(
        host: &str,
        port: u16,
        user: &str,
        password: &str,
        database: Option<&str>,
    ) -> Result<Client> {
        let stream = TcpStream::connect((host, port)).map_err(io("connecting"))?;
        stream
            .set_nodelay(true)
            .map_err(io("setting TCP_NODELAY"))?;
        let mut client = Client {
            stream,
            buf: vec![0u8; READ_BUFFER_BYTES].into_boxed_slice(),
            start: 0,
            end: 0,
            bytes_read: 0,
            seq: 0,
            capabilities: 0,
            server_version: String::new(),
        };
        client.handshake(user, password, database)?;
        Ok(client)
    }

    pub fn server_version(&self) -> &str {
        &self.server_version
    }

    /// Sets a read timeout on the socket (`None`: wait forever).
    pub fn set_read_timeout(&self, timeout: Option<Duration>) -> Result<()> {
        self.stream
            .set_read_timeout(timeout)
            .map_err(io("setting the read timeout"))
    }

    fn handshake(&mut self, user: &str, password: &str, database: Option<&str>) -> Result<()> {
        self.seq = 0;
        let greeting = self.read_packet()?;
        if greeting.first() == Some(&0xFF) {
            return Err(parse_error(&greeting));
        }
        let mut r = Cursor::new(&greeting);
        let protocol = r.u8()?;
        if protocol != 10 {
            return Err(ClientError::Protocol(format!(
                "handshake protocol {protocol}, expected 10"
            )));
        }
        self.server_version = String::from_utf8_lossy(r.nul_str()?).into_owned();
        let _connection_id = r.bytes(4)?;
        let mut seed = r.bytes(8)?.to_vec();
        r.bytes(1)?;
        let mut server_caps = u32::from(r.u16()?);
        let mut plugin = NATIVE_PASSWORD.to_string();
        if !r.is_empty() {
            let _charset = r.u8()?;
            let _status = r.u16()?;
            server_caps |= u32::from(r.u16()?) << 16;
            let auth_data_len = r.u8()?;
            r.bytes(10)?;
            if server_caps & CLIENT_SECURE_CONNECTION != 0 {
                let rest = (usize::from(auth_data_len).saturating_sub(8)).max(13);
                let part2 = r.bytes(rest.min(r.remaining()))?;
                seed.extend_from_slice(part2.strip_suffix(&[0]).unwrap_or(part2));
            }
            if server_caps & CLIENT_PLUGIN_AUTH != 0 && !r.is_empty() {
                plugin = String::from_utf8_lossy(r.nul_str_or_rest()).into_owned();
            }
        }
        for needed in [CLIENT_PROTOCOL_41, CLIENT_SECURE_CONNECTION] {
            if server_caps & needed == 0 {
                return Err(ClientError::Protocol(format!(
                    "the server lacks capability {needed:#x}"
                )));
            }
        }
        let wanted = CLIENT_LONG_PASSWORD
            | CLIENT_LONG_FLAG
            | CLIENT_PROTOCOL_41
            | CLIENT_TRANSACTIONS
            | CLIENT_SECURE_CONNECTION
            | CLIENT_MULTI_RESULTS
            | CLIENT_PLUGIN_AUTH
            | CLIENT_DEPRECATE_EOF
            | if database.is_some() {
                CLIENT_CONNECT_WITH_DB
            } else {
                0
            };
        self.capabilities = wanted & server_caps;
        if database.is_some() && self.capabilities & CLIENT_CONNECT_WITH_DB == 0 {
            return Err(ClientError::Protocol(
                "the server cannot take a database at connect".into(),
            ));
        }
        let auth = if plugin == NATIVE_PASSWORD {
            native_password_scramble(password, &seed)
        } else {
            // Answer with nothing and expect an AuthSwitchRequest to a plugin we speak.
            Vec::new()
        };
        let mut response = Vec::with_capacity(128);
        response.extend_from_slice(&self.capabilities.to_le_bytes());
        response.extend_from_slice(&(MAX_PACKET_PAYLOAD as u32).to_le_bytes());
        response.push(UTF8MB4_GENERAL_CI);
        response.extend_from_slice(&[0u8; 23]);
        response.extend_from_slice(user.as_bytes());
        response.push(0);
        response.push(auth.len() as u8);
        response.extend_from_slice(&auth);
        if let Some(database) = database {
            response.extend_from_slice(database.as_bytes());
            response.push(0);
        }
        if self.capabilities & CLIENT_PLUGIN_AUTH != 0 {
            response.extend_from_slice(plugin.as_bytes());
            response.push(0);
        }
        self.write_packet(&response)?;
        let mut switched = false;
        loop {
            let reply = self.read_packet()?;
            match reply.first() {
                Some(0x00) => return Ok(()),
                Some(0xFF) => return Err(parse_error(&reply)),
                Some(0xFE) if !switched => {
                    switched = true;
                    let mut r = Cursor::new(&reply[1..]);
                    let name = String::from_utf8_lossy(r.nul_str_or_rest()).into_owned();
                    if name != NATIVE_PASSWORD {
                        return Err(ClientError::Protocol(format!(
                            "the server asks for auth plugin '{name}'; only \
                             {NATIVE_PASSWORD} is supported"
                        )));
                    }
                    let data = r.rest();
                    let seed = data.strip_suffix(&[0]).unwrap_or(data);
                    let auth = native_password_scramble(password, seed);
                    self.write_packet(&auth)?;
                }
                other => {
                    return Err(ClientError::Protocol(format!(
                        "unexpected authentication reply starting with {other:?}"
                    )));
                }
            }
        }
    }

    /// Runs `sql` and throws its rows away; returns the rows and bytes read.
    pub fn stream(&mut self, sql: &str) -> Result<StreamStats> {
        let started = Instant::now();
        self.send_query(sql)?;
        let buffered_before = (self.end - self.start) as u64;
        self.bytes_read = 0;
        let mut rows = 0;
        loop {
            let (set_rows, more) = self.read_result(None)?;
            rows += set_rows;
            if !more {
                break;
            }
        }
        Ok(StreamStats {
            rows,
            bytes: buffered_before + self.bytes_read - (self.end - self.start) as u64,
            seconds: started.elapsed().as_secs_f64(),
        })
    }

    /// Runs `sql` (any statement) and ignores what it returns.
    pub fn execute(&mut self, sql: &str) -> Result<()> {
        self.stream(sql).map(|_| ())
    }

    /// Runs `sql` and returns its rows as text (`None` for NULL). For small results.
    pub fn query_rows(&mut self, sql: &str) -> Result<Vec<Vec<Option<String>>>> {
        self.send_query(sql)?;
        let mut out = Vec::new();
        loop {
            let (_, more) = self.read_result(Some(&mut out))?;
            if !more {
                return Ok(out);
            }
        }
    }

    /// The first column of the first row of `sql`'s result.
    pub fn query_value(&mut self, sql: &str) -> Result<Option<String>> {
        let rows = self.query_rows(sql)?;
        rows.into_iter()
            .next()
            .and_then(|row| row.into_iter().next())
            .ok_or_else(|| ClientError::Protocol(format!("'{sql}' returned no rows")))
    }

    /// Says goodbye (`COM_QUIT`); dropping the client closes the socket anyway.
    pub fn quit(mut self) {
        self.seq = 0;
        let _ = self.write_packet(&[COM_QUIT]);
    }

    fn send_query(&mut self, sql: &str) -> Result<()> {
        self.seq = 0;
        let mut packet = Vec::with_capacity(sql.len() + 1);
        packet.push(COM_QUERY);
        packet.extend_from_slice(sql.as_bytes());
        self.write_packet(&packet)
    }

    /// Reads one result (OK, ERR or a result set). With `collect`, each row is decoded
    /// as text and pushed there; without, rows are skipped in the buffer. Returns the
    /// rows and whether more results follow.
    fn read_result(
        &mut self,
        mut collect: Option<&mut Vec<Vec<Option<String>>>>,
    ) -> Result<(u64, bool)> {
        let first = self.read_packet()?;
        match first.first() {
            Some(0x00) => return Ok((0, ok_more_results(&first[1..])?)),
            Some(0xFF) => return Err(parse_error(&first)),
            Some(0xFB) => {
                return Err(ClientError::Protocol(
                    "LOAD DATA LOCAL is not supported by this client".into(),
                ));
            }
            None => return Err(ClientError::Protocol("empty result packet".into())),
            _ => {}
        }
        let columns = Cursor::new(&first).lenenc()?;
        for _ in 0..columns {
            self.skip_packet()?;
        }
        let deprecate_eof = self.capabilities & CLIENT_DEPRECATE_EOF != 0;
        if !deprecate_eof {
            let eof = self.read_packet()?;
            if eof.first() != Some(&0xFE) {
                return Err(ClientError::Protocol(
                    "no EOF after the column definitions".into(),
                ));
            }
        }
        let mut rows = 0u64;
        loop {
            let (head, length) = self.peek_packet()?;
            let is_end =
                head == 0xFE && length < MAX_PACKET_PAYLOAD && (deprecate_eof || length < 9);
            if is_end || head == 0xFF || collect.is_some() {
                let packet = self.read_packet()?;
                if head == 0xFF {
                    return Err(parse_error(&packet));
                }
                if is_end {
                    let more = if deprecate_eof {
                        ok_more_results(&packet[1..])?
                    } else {
                        let mut r = Cursor::new(&packet[1..]);
                        r.u16()?;
                        r.u16()? & SERVER_MORE_RESULTS_EXISTS != 0
                    };
                    return Ok((rows, more));
                }
                if let Some(out) = collect.as_deref_mut() {
                    out.push(text_row(&packet, columns)?);
                }
            } else {
                self.skip_packet()?;
            }
            rows += 1;
        }
    }

    /// Makes at least `n` bytes available at `buf[start..]`, moving what is there to the
    /// front of the buffer when it must.
    fn fill(&mut self, n: usize) -> Result<()> {
        debug_assert!(n <= self.buf.len());
        if self.end - self.start >= n {
            return Ok(());
        }
        if self.start + n > self.buf.len() {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        while self.end - self.start < n {
            let read = self
                .stream
                .read(&mut self.buf[self.end..])
                .map_err(io("reading from the server"))?;
            if read == 0 {
                return Err(ClientError::Protocol(
                    "the server closed the connection".into(),
                ));
            }
            self.end += read;
            self.bytes_read += read as u64;
        }
        Ok(())
    }

    /// Reads the next header, checks its sequence id and returns the payload length.
    fn read_header(&mut self) -> Result<usize> {
        self.fill(4)?;
        let h = &self.buf[self.start..self.start + 4];
        let length = usize::from(h[0]) | usize::from(h[1]) << 8 | usize::from(h[2]) << 16;
        let seq = h[3];
        if seq != self.seq {
            return Err(ClientError::Protocol(format!(
                "packet sequence id {seq}, expected {}",
                self.seq
            )));
        }
        self.seq = self.seq.wrapping_add(1);
        self.start += 4;
        Ok(length)
    }

    /// The next packet's first payload byte and payload length, without consuming it.
    fn peek_packet(&mut self) -> Result<(u8, usize)> {
        self.fill(5)?;
        let h = &self.buf[self.start..self.start + 5];
        let length = usize::from(h[0]) | usize::from(h[1]) << 8 | usize::from(h[2]) << 16;
        if length == 0 {
            return Ok((0, 0));
        }
        Ok((h[4], length))
    }

    /// Advances past `n` bytes of payload, reading as needed.
    fn skip_bytes(&mut self, mut n: usize) -> Result<()> {
        loop {
            let here = (self.end - self.start).min(n);
            self.start += here;
            n -= here;
            if n == 0 {
                return Ok(());
            }
            self.start = 0;
            self.end = 0;
            self.fill(1)?;
        }
    }

    /// Skips one logical packet (with its continuations).
    fn skip_packet(&mut self) -> Result<()> {
        loop {
            let length = self.read_header()?;
            self.skip_bytes(length)?;
            if length < MAX_PACKET_PAYLOAD {
                return Ok(());
            }
        }
    }

    /// Reads one logical packet (with its continuations) into a new vector.
    fn read_packet(&mut self) -> Result<Vec<u8>> {
        let mut payload = Vec::new();
        loop {
            let mut length = self.read_header()?;
            let last = length < MAX_PACKET_PAYLOAD;
            while length > 0 {
                if self.start == self.end {
                    self.fill(1)?;
                }
                let here = (self.end - self.start).min(length);
                payload.extend_from_slice(&self.buf[self.start..self.start + here]);
                self.start += here;
                length -= here;
            }
            if last {
                return Ok(payload);
            }
        }
    }

    /// Writes `payload` as one logical packet, split at 16 MiB.
    fn write_packet(&mut self, payload: &[u8]) -> Result<()> {
        let mut out = Vec::with_capacity(payload.len() + 8);
        for chunk in payload.chunks(MAX_PACKET_PAYLOAD) {
            out.extend_from_slice(&(chunk.len() as u32).to_le_bytes()[..3]);
            out.push(self.seq);
            self.seq = self.seq.wrapping_add(1);
            out.extend_from_slice(chunk);
        }
        // A payload that fills its last packet (or is empty) ends with an empty one.
        if payload.len().is_multiple_of(MAX_PACKET_PAYLOAD) {
            out.extend_from_slice(&[0, 0, 0, self.seq]);
            self.seq = self.seq.wrapping_add(1);
        }
        self.stream
            .write_all(&out)
            .map_err(io("writing to the server"))
    }
}

/// `SHA1(password) XOR SHA1(seed + SHA1(SHA1(password)))` (the server's own
/// [`tarn_server::protocol::auth::native_scramble`]); empty for an empty password.
pub fn native_password_scramble(password: &str, seed: &[u8]) -> Vec<u8> {
    if password.is_empty() {
        return Vec::new();
    }
    let mut nonce = [0u8; 20];
    let n = seed.len().min(20);
    nonce[..n].copy_from_slice(&seed[..n]);
    tarn_server::protocol::auth::native_scramble(&nonce, password.as_bytes()).to_vec()
}

/// Whether an OK packet's (after its 0x00/0xFE header) status says more results follow.
fn ok_more_results(body: &[u8]) -> Result<bool> {
    let mut r = Cursor::new(body);
    r.lenenc()?;
    r.lenenc()?;
    Ok(r.u16()? & SERVER_MORE_RESULTS_EXISTS != 0)
}

fn text_row(packet: &[u8], columns: u64) -> Result<Vec<Option<String>>> {
    let mut r = Cursor::new(packet);
    let mut row = Vec::with_capacity(columns as usize);
    for _ in 0..columns {
        if r.peek() == Some(0xFB) {
            r.u8()?;
            row.push(None);
        } else {
            let length = r.lenenc()? as usize;
            row.push(Some(String::from_utf8_lossy(r.bytes(length)?).into_owned()));
        }
    }
    Ok(row)
}

fn parse_error(packet: &[u8]) -> ClientError {
    let mut r = Cursor::new(packet.get(1..).unwrap_or_default());
    let code = r.u16().unwrap_or(0);
    let mut sqlstate = "HY000".to_string();
    if r.peek() == Some(b'#') && r.remaining() >= 6 {
        let _ = r.u8();
        if let Ok(state) = r.bytes(5) {
            sqlstate = String::from_utf8_lossy(state).into_owned();
        }
    }
    ClientError::Server {
        code,
        sqlstate,
        message: String::from_utf8_lossy(r.rest()).into_owned(),
    }
}

fn io(what: &'static str) -> impl Fn(std::io::Error) -> ClientError {
    move |source| ClientError::Io { what, source }
}

/// Reads protocol fields from a packet.
struct Cursor<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    fn new(data: &'a [u8]) -> Cursor<'a> {
        Cursor { data, pos: 0 }
    }

    fn is_empty(&self) -> bool {
        self.pos >= self.data.len()
    }

    fn remaining(&self) -> usize {
        self.data.len().saturating_sub(self.pos)
    }

    fn peek(&self) -> Option<u8> {
        self.data.get(self.pos).copied()
    }

    fn bytes(&mut self, n: usize) -> Result<&'a [u8]> {
        if self.remaining() < n {
            return Err(ClientError::Protocol("packet too short".into()));
        }
        let out = &self.data[self.pos..self.pos + n];
        self.pos += n;
        Ok(out)
    }

    fn u8(&mut self) -> Result<u8> {
        Ok(self.bytes(1)?[0])
    }

    fn u16(&mut self) -> Result<u16> {
        let b = self.bytes(2)?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }

    fn lenenc(&mut self) -> Result<u64> {
        let first = self.u8()?;
        let width = match first {
            0..=0xFA => return Ok(u64::from(first)),
            0xFC => 2,
            0xFD => 3,
            0xFE => 8,
            _ => {
                return Err(ClientError::Protocol(format!(
                    "bad length-encoded integer prefix {first:#x}"
                )));
            }
        };
        let mut value = 0u64;
        for (i, b) in self.bytes(width)?.iter().enumerate() {
            value |= u64::from(*b) << (8 * i);
        }
        Ok(value)
    }

    fn nul_str(&mut self) -> Result<&'a [u8]> {
        let rest = &self.data[self.pos.min(self.data.len())..];
        let end = rest
            .iter()
            .position(|b| *b == 0)
            .ok_or_else(|| ClientError::Protocol("unterminated string".into()))?;
        self.pos += end + 1;
        Ok(&rest[..end])
    }

    /// A NUL-terminated string, or the rest of the packet when there is no NUL.
    fn nul_str_or_rest(&mut self) -> &'a [u8] {
        let rest = self.rest();
        match rest.iter().position(|b| *b == 0) {
            Some(end) => {
                self.pos -= rest.len() - end - 1;
                &rest[..end]
            }
            None => rest,
        }
    }

    fn rest(&mut self) -> &'a [u8] {
        let rest = &self.data[self.pos.min(self.data.len())..];
        self.pos = self.data.len();
        rest
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_native_password_scramble_matches_a_known_value() {
        use sha1::{Digest, Sha1};
        // Computed with MySQL's algorithm for password "secret" and a seed of 1..=20.
        let seed: Vec<u8> = (1..=20).collect();
        let scramble = native_password_scramble("secret", &seed);
        assert_eq!(scramble.len(), 20);
        assert!(native_password_scramble("", &seed).is_empty());
        // XOR with SHA1(seed + SHA1(SHA1(pw))) gives back SHA1(pw).
        let stage1 = Sha1::digest(b"secret");
        let stage2 = Sha1::digest(stage1.as_slice());
        let mut hasher = Sha1::new();
        hasher.update(&seed);
        hasher.update(stage2.as_slice());
        let mix = hasher.finalize();
        let back: Vec<u8> = scramble
            .iter()
            .zip(mix.iter())
            .map(|(a, b)| a ^ b)
            .collect();
        assert_eq!(back, stage1.as_slice());
    }

    /// Writes `payload` as packets from `seq` (split at 16 MiB, an empty packet after a
    /// full one); returns the next sequence id.
    fn send(out: &mut Vec<u8>, payload: &[u8], mut seq: u8) -> u8 {
        let mut chunks: Vec<&[u8]> = payload.chunks(MAX_PACKET_PAYLOAD).collect();
        if payload.len().is_multiple_of(MAX_PACKET_PAYLOAD) {
            chunks.push(&[]);
        }
        for chunk in chunks {
            out.extend_from_slice(&(chunk.len() as u32).to_le_bytes()[..3]);
            out.push(seq);
            out.extend_from_slice(chunk);
            seq = seq.wrapping_add(1);
        }
        seq
    }

    fn read_packet(stream: &mut TcpStream) -> Vec<u8> {
        let mut header = [0u8; 4];
        stream.read_exact(&mut header).unwrap();
        let length = u32::from_le_bytes([header[0], header[1], header[2], 0]) as usize;
        let mut payload = vec![0u8; length];
        stream.read_exact(&mut payload).unwrap();
        payload
    }

    /// A one-connection server: handshake, an AuthSwitchRequest that checks the
    /// scramble, then a result set with rows of 16 MiB and more, then an error.
    fn mock_server(deprecate_eof: bool) -> (u16, std::thread::JoinHandle<u64>) {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let handle = std::thread::spawn(move || {
            let (mut stream, _) = listener.accept().unwrap();
            let caps = CLIENT_PROTOCOL_41
                | CLIENT_SECURE_CONNECTION
                | CLIENT_PLUGIN_AUTH
                | if deprecate_eof {
                    CLIENT_DEPRECATE_EOF
                } else {
                    0
                };
            let mut greeting = vec![10];
            greeting.extend_from_slice(b"8.0.0-mock\0");
            greeting.extend_from_slice(&7u32.to_le_bytes());
            greeting.extend_from_slice(b"abcdefgh\0");
            greeting.extend_from_slice(&(caps as u16).to_le_bytes());
            greeting.push(45);
            greeting.extend_from_slice(&2u16.to_le_bytes());
            greeting.extend_from_slice(&((caps >> 16) as u16).to_le_bytes());
            greeting.push(21);
            greeting.extend_from_slice(&[0; 10]);
            greeting.extend_from_slice(b"ijklmnopqrst\0");
            greeting.extend_from_slice(b"mysql_native_password\0");
            let mut out = Vec::new();
            send(&mut out, &greeting, 0);
            stream.write_all(&out).unwrap();
            let response = read_packet(&mut stream);
            assert_eq!(&response[32..37], b"user\0");
            let switch_seed: Vec<u8> = (b'A'..b'A' + 20).collect();
            let mut switch = vec![0xFE];
            switch.extend_from_slice(b"mysql_native_password\0");
            switch.extend_from_slice(&switch_seed);
            switch.push(0);
            out.clear();
            send(&mut out, &switch, 2);
            stream.write_all(&out).unwrap();
            let answer = read_packet(&mut stream);
            assert_eq!(answer, native_password_scramble("pw", &switch_seed));
            out.clear();
            send(&mut out, &[0, 0, 0, 2, 0, 0, 0], 4);
            stream.write_all(&out).unwrap();

            assert_eq!(read_packet(&mut stream)[0], COM_QUERY);
            out.clear();
            let mut seq = send(&mut out, &[1], 1);
            seq = send(&mut out, b"\x03def\0\0\0\x01c\0", seq);
            if !deprecate_eof {
                seq = send(&mut out, &[0xFE, 0, 0, 2, 0], seq);
            }
            seq = send(&mut out, b"\x02hi", seq);
            for length in [MAX_PACKET_PAYLOAD + 10, MAX_PACKET_PAYLOAD - 4] {
                let mut row = vec![0xFD];
                row.extend_from_slice(&(length as u32).to_le_bytes()[..3]);
                row.resize(4 + length, b'x');
                seq = send(&mut out, &row, seq);
            }
            if deprecate_eof {
                send(&mut out, &[0xFE, 0, 0, 2, 0, 0, 0], seq);
            } else {
                send(&mut out, &[0xFE, 0, 0, 2, 0], seq);
            }
            stream.write_all(&out).unwrap();
            let streamed = out.len() as u64;

            assert_eq!(read_packet(&mut stream)[0], COM_QUERY);
            out.clear();
            let mut error = vec![0xFF, 0x28, 0x04, b'#'];
            error.extend_from_slice(b"42000Syntax");
            send(&mut out, &error, 1);
            stream.write_all(&out).unwrap();
            streamed
        });
        (port, handle)
    }

    #[test]
    fn the_client_logs_in_streams_large_rows_and_reports_errors() {
        for deprecate_eof in [true, false] {
            let (port, server) = mock_server(deprecate_eof);
            let mut client = Client::connect("127.0.0.1", port, "user", "pw", None).unwrap();
            assert_eq!(client.server_version(), "8.0.0-mock");
            let stats = client.stream("SELECT c FROM t").unwrap();
            assert_eq!(stats.rows, 3);
            match client.execute("SELEC") {
                Err(ClientError::Server { code, sqlstate, .. }) => {
                    assert_eq!((code, sqlstate.as_str()), (1064, "42000"));
                }
                other => panic!("{other:?}"),
            }
            assert_eq!(stats.bytes, server.join().unwrap());
        }
    }

    #[test]
    fn length_encoded_integers_and_errors_parse() {
        assert_eq!(Cursor::new(&[0xFA]).lenenc().unwrap(), 250);
        assert_eq!(Cursor::new(&[0xFC, 0x01, 0x02]).lenenc().unwrap(), 0x0201);
        assert_eq!(Cursor::new(&[0xFD, 1, 2, 3]).lenenc().unwrap(), 0x030201);
        let mut packet = vec![0xFF, 0x7A, 0x04, b'#'];
        packet.extend_from_slice(b"42S02Table missing");
        match parse_error(&packet) {
            ClientError::Server {
                code,
                sqlstate,
                message,
            } => {
                assert_eq!(code, 1146);
                assert_eq!(sqlstate, "42S02");
                assert_eq!(message, "Table missing");
            }
            other => panic!("{other:?}"),
        }
    }
}
