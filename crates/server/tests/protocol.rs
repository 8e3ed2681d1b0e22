//! The server over real sockets, byte by byte: handshake and authentication, bad
//! packets, limits, multi-statements, prepared statements with binary rows, large
//! packets, and a client that disconnects holding locks.
//!
//! Each test starts a server on a free port over a fresh data directory. The
//! client here is deliberately raw (built from the protocol module's pieces) so
//! it can send what real clients never would; the real clients' tests are in
//! `crates/tarn/tests/clients.rs`.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tarn_common::settings::Settings;
use tarn_server::protocol::{Reader, auth, caps, column_type, packet, put_lenenc_bytes};
use tarn_server::server::{Shared, serve};

struct TestServer {
    address: SocketAddr,
    _runtime: tokio::runtime::Runtime,
    _dir: tempfile::TempDir,
    engine: Arc<tarn_sql::Engine>,
}

fn test_dir() -> tempfile::TempDir {
    let base = std::env::var_os("TARN_TEST_DIR").map(std::path::PathBuf::from);
    match base {
        Some(base) => {
            std::fs::create_dir_all(&base).unwrap();
            tempfile::tempdir_in(base).unwrap()
        }
        None => tempfile::tempdir().unwrap(),
    }
}

fn start(globals: &[(&str, &str)]) -> TestServer {
    start_with_log(globals, Settings::default().log_file_size_bytes)
}

/// [`start`] with redo log files of `log_file_size_bytes` each.
fn start_with_log(globals: &[(&str, &str)], log_file_size_bytes: u64) -> TestServer {
    start_server(globals, log_file_size_bytes, false)
}

/// [`start`] with TLS: a self-signed certificate generated into the data directory.
fn start_tls() -> TestServer {
    start_server(&[], Settings::default().log_file_size_bytes, true)
}

fn start_server(globals: &[(&str, &str)], log_file_size_bytes: u64, tls: bool) -> TestServer {
    let dir = test_dir();
    let mut settings = Settings {
        data_dir: dir.path().to_path_buf(),
        buffer_pool_size_bytes: 16 << 20,
        log_file_size_bytes,
        ..Settings::default()
    };
    settings.set("io_method", "buffered").unwrap();
    let engine = tarn_sql::Engine::open(&settings).unwrap();
    for (name, value) in globals {
        engine.set_global(name, value).unwrap();
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let tls = if tls {
        let source = tarn_server::tls::CertificateSource::Generated {
            dir: dir.path().to_path_buf(),
        };
        tarn_server::tls::server_config(&source).unwrap()
    } else {
        None
    };
    let shared = Shared::new(engine.clone(), tls, 2, runtime.handle().clone()).unwrap();
    let listener = runtime
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let address = listener.local_addr().unwrap();
    runtime.spawn(serve(
        shared,
        listener,
        std::future::pending(),
        Duration::from_secs(1),
    ));
    TestServer {
        address,
        _runtime: runtime,
        _dir: dir,
        engine,
    }
}

/// A byte stream to the server: TCP, or TLS over it.
trait Duplex: Read + Write + Send {
    /// Sends `bytes` as it would travel whole (for TLS: one record), but split on the
    /// wire in two pieces `pause` apart.
    fn write_in_two(&mut self, bytes: &[u8], pause: Duration);
}

impl Duplex for TcpStream {
    fn write_in_two(&mut self, bytes: &[u8], pause: Duration) {
        let half = bytes.len() / 2;
        self.write_all(&bytes[..half]).unwrap();
        std::thread::sleep(pause);
        self.write_all(&bytes[half..]).unwrap();
    }
}

impl Duplex for rustls::StreamOwned<rustls::ClientConnection, TcpStream> {
    fn write_in_two(&mut self, bytes: &[u8], pause: Duration) {
        self.conn.writer().write_all(bytes).unwrap();
        let mut record = Vec::new();
        while self.conn.wants_write() {
            self.conn.write_tls(&mut record).unwrap();
        }
        self.sock.write_in_two(&record, pause);
    }
}

/// A raw client: whole packets in and out, sequence numbers tracked.
struct Client {
    socket: Box<dyn Duplex>,
    seq: u8,
}

#[derive(Debug)]
enum Reply {
    Ok {
        affected_rows: u64,
        status: u16,
    },
    Err {
        code: u16,
        message: String,
    },
    /// A result set: rows as lists of optional texts (or binary payloads).
    Rows {
        rows: Vec<Vec<u8>>,
        status: u16,
        columns: Vec<u8>,
    },
}

fn connect_tcp(address: SocketAddr) -> TcpStream {
    let socket = TcpStream::connect(address).unwrap();
    socket
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    socket
}

/// TLS over `tcp` (the handshake happens at the first read or write), accepting any
/// certificate: the server's is self-signed, and what is tested here is the stream.
fn tls_client(tcp: TcpStream) -> rustls::StreamOwned<rustls::ClientConnection, TcpStream> {
    use rustls::DigitallySignedStruct;
    use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
    use rustls::pki_types::{CertificateDer, ServerName, UnixTime};

    #[derive(Debug)]
    struct AnyCertificate(Arc<rustls::crypto::CryptoProvider>);

    impl ServerCertVerifier for AnyCertificate {
        fn verify_server_cert(
            &self,
            _end_entity: &CertificateDer<'_>,
            _intermediates: &[CertificateDer<'_>],
            _server_name: &ServerName<'_>,
            _ocsp_response: &[u8],
            _now: UnixTime,
        ) -> Result<ServerCertVerified, rustls::Error> {
            Ok(ServerCertVerified::assertion())
        }

        fn verify_tls12_signature(
            &self,
            message: &[u8],
            cert: &CertificateDer<'_>,
            dss: &DigitallySignedStruct,
        ) -> Result<HandshakeSignatureValid, rustls::Error> {
            rustls::crypto::verify_tls12_signature(
                message,
                cert,
                dss,
                &self.0.signature_verification_algorithms,
            )
        }

        fn verify_tls13_signature(
            &self,
            message: &[u8],
            cert: &CertificateDer<'_>,
            dss: &DigitallySignedStruct,
        ) -> Result<HandshakeSignatureValid, rustls::Error> {
            rustls::crypto::verify_tls13_signature(
                message,
                cert,
                dss,
                &self.0.signature_verification_algorithms,
            )
        }

        fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
            self.0.signature_verification_algorithms.supported_schemes()
        }
    }

    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .unwrap()
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(AnyCertificate(provider)))
        .with_no_client_auth();
    let name = ServerName::try_from("localhost").unwrap();
    let connection = rustls::ClientConnection::new(Arc::new(config), name).unwrap();
    rustls::StreamOwned::new(connection, tcp)
}

impl Client {
    fn connect(address: SocketAddr) -> Client {
        Client {
            socket: Box::new(connect_tcp(address)),
            seq: 0,
        }
    }

    fn read(&mut self) -> Option<Vec<u8>> {
        let mut header = [0u8; 4];
        self.socket.read_exact(&mut header).ok()?;
        let len = u32::from_le_bytes([header[0], header[1], header[2], 0]) as usize;
        assert_eq!(header[3], self.seq, "the server's sequence number");
        self.seq = self.seq.wrapping_add(1);
        let mut payload = vec![0; len];
        self.socket.read_exact(&mut payload).ok()?;
        if len == packet::MAX_PAYLOAD_BYTES {
            payload.extend(self.read()?);
        }
        Some(payload)
    }

    fn write(&mut self, payload: &[u8]) {
        let mut buf = Vec::new();
        packet::put(&mut buf, payload);
        self.seq = packet::stamp_sequence(&mut buf, self.seq);
        self.socket.write_all(&buf).unwrap();
    }

    /// Logs in with mysql_native_password.
    fn login(address: SocketAddr, user: &str, password: &str) -> Result<Client, (u16, String)> {
        Client::login_over(address, user, password, false)
    }

    /// Logs in with mysql_native_password, over TLS if `tls` (the server's
    /// certificate is not checked).
    fn login_over(
        address: SocketAddr,
        user: &str,
        password: &str,
        tls: bool,
    ) -> Result<Client, (u16, String)> {
        let tcp = connect_tcp(address);
        let mut c = Client {
            socket: Box::new(tcp.try_clone().unwrap()),
            seq: 0,
        };
        let greeting = c.read().expect("a greeting");
        if greeting[0] == 0xff {
            return Err(error_of(&greeting));
        }
        let mut r = Reader::new(&greeting);
        assert_eq!(r.u8().unwrap(), 10);
        r.null_terminated();
        r.u32().unwrap();
        let mut nonce = [0u8; 20];
        nonce[..8].copy_from_slice(r.bytes(8, "").unwrap());
        r.bytes(1 + 2 + 1 + 2 + 2 + 1 + 10, "").unwrap();
        nonce[8..].copy_from_slice(r.bytes(12, "").unwrap());
        let capabilities = caps::PROTOCOL_41
            | caps::SECURE_CONNECTION
            | caps::PLUGIN_AUTH
            | caps::PLUGIN_AUTH_LENENC_CLIENT_DATA
            | caps::MULTI_STATEMENTS
            | caps::MULTI_RESULTS
            | caps::TRANSACTIONS
            | if tls { caps::SSL } else { 0 };
        if tls {
            // SSLRequest: the first 32 bytes of the response, then the TLS handshake.
            let mut request = Vec::new();
            request.extend_from_slice(&capabilities.to_le_bytes());
            request.extend_from_slice(&(1u32 << 30).to_le_bytes());
            request.push(45);
            request.extend_from_slice(&[0; 23]);
            c.write(&request);
            c.socket = Box::new(tls_client(tcp));
        }
        let mut p = Vec::new();
        p.extend_from_slice(&capabilities.to_le_bytes());
        p.extend_from_slice(&(1u32 << 30).to_le_bytes());
        p.push(45);
        p.extend_from_slice(&[0; 23]);
        p.extend_from_slice(user.as_bytes());
        p.push(0);
        let scramble = if password.is_empty() {
            Vec::new()
        } else {
            auth::native_scramble(&nonce, password.as_bytes()).to_vec()
        };
        put_lenenc_bytes(&mut p, &scramble);
        p.extend_from_slice(b"mysql_native_password\0");
        c.write(&p);
        let reply = c.read().expect("an answer to the login");
        match reply[0] {
            0 => Ok(c),
            _ => Err(error_of(&reply)),
        }
    }

    fn root(address: SocketAddr) -> Client {
        Client::login(address, "root", "").expect("root logs in")
    }

    fn command(&mut self, payload: &[u8]) {
        self.seq = 0;
        self.write(payload);
    }

    fn query(&mut self, sql: &str) -> Reply {
        let mut p = vec![0x03];
        p.extend_from_slice(sql.as_bytes());
        self.command(&p);
        self.reply()
    }

    fn reply(&mut self) -> Reply {
        let first = self.read().expect("a reply");
        match first[0] {
            0x00 => ok_of(&first),
            0xff => {
                let (code, message) = error_of(&first);
                Reply::Err { code, message }
            }
            _ => {
                let count = Reader::new(&first).lenenc_int().unwrap() as usize;
                let mut columns = Vec::new();
                for _ in 0..count {
                    let def = self.read().unwrap();
                    let mut r = Reader::new(&def);
                    for _ in 0..6 {
                        r.lenenc_bytes().unwrap();
                    }
                    r.bytes(1 + 2 + 4, "").unwrap();
                    columns.push(r.u8().unwrap());
                }
                let eof = self.read().unwrap();
                assert_eq!(eof[0], 0xfe, "EOF after the column definitions");
                let mut rows = Vec::new();
                loop {
                    let p = self.read().unwrap();
                    if p[0] == 0xfe && p.len() < 9 {
                        let status = u16::from_le_bytes([p[3], p[4]]);
                        return Reply::Rows {
                            rows,
                            status,
                            columns,
                        };
                    }
                    if p[0] == 0xff {
                        let (code, message) = error_of(&p);
                        return Reply::Err { code, message };
                    }
                    rows.push(p);
                }
            }
        }
    }
}

fn ok_of(p: &[u8]) -> Reply {
    let mut r = Reader::new(&p[1..]);
    let affected_rows = r.lenenc_int().unwrap();
    r.lenenc_int().unwrap();
    Reply::Ok {
        affected_rows,
        status: r.u16().unwrap(),
    }
}

fn error_of(p: &[u8]) -> (u16, String) {
    assert_eq!(p[0], 0xff, "an ERR packet: {p:?}");
    let code = u16::from_le_bytes([p[1], p[2]]);
    let message = String::from_utf8_lossy(&p[9..]).into_owned();
    (code, message)
}

/// The text cells of a text-protocol row.
fn cells(row: &[u8]) -> Vec<Option<String>> {
    let mut r = Reader::new(row);
    let mut out = Vec::new();
    while !r.is_empty() {
        if row[row.len() - r.remaining()] == 0xfb {
            r.u8().unwrap();
            out.push(None);
        } else {
            out.push(Some(
                String::from_utf8_lossy(r.lenenc_bytes().unwrap()).into_owned(),
            ));
        }
    }
    out
}

fn expect_err(reply: Reply, code: u16) -> String {
    match reply {
        Reply::Err { code: c, message } if c == code => message,
        other => panic!("expected error {code}, got {other:?}"),
    }
}

#[test]
fn a_query_returns_typed_rows_and_status_flags() {
    let server = start(&[]);
    let mut c = Client::root(server.address);
    match c.query("SELECT 1 + 1, 'a', NULL, CAST(2.50 AS DECIMAL(4,2))") {
        Reply::Rows {
            rows,
            status,
            columns,
        } => {
            assert_eq!(
                cells(&rows[0]),
                vec![
                    Some("2".into()),
                    Some("a".into()),
                    None,
                    Some("2.50".into())
                ]
            );
            assert_eq!(status & 2, 2, "autocommit");
            assert_eq!(columns[0], column_type::LONGLONG);
            assert_eq!(columns[3], column_type::NEWDECIMAL);
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(c.query("BEGIN"), Reply::Ok { status, .. } if status & 1 == 1));
    assert!(matches!(c.query("COMMIT"), Reply::Ok { status, .. } if status & 1 == 0));
    expect_err(c.query("SELEC 1"), 1064);
    expect_err(c.query("SELECT * FROM nowhere.t"), 1146);
}

/// COM_REFRESH (`mysqldump --flush-logs`, `mysqladmin flush-*`) runs the FLUSH
/// statements its flags name: the ones Tarn has are OK, the others the error their
/// statement gives, and a missing flag byte is a malformed packet.
#[test]
fn com_refresh_runs_the_flush_statements_its_flags_name() {
    let server = start(&[]);
    let mut c = Client::root(server.address);
    // REFRESH_GRANT, _LOG, _TABLES, _HOSTS, _THREADS, and all of them.
    for flags in [1u8, 2, 4, 8, 32, 1 | 2 | 4 | 8 | 32] {
        c.command(&[0x07, flags]);
        assert!(
            matches!(c.reply(), Reply::Ok { .. }),
            "COM_REFRESH {flags:#x}"
        );
    }
    // REFRESH_STATUS: FLUSH STATUS is not supported, and its error is the answer,
    // also after a flag that worked.
    for flags in [16u8, 2 | 16] {
        c.command(&[0x07, flags]);
        expect_err(c.reply(), 1235);
    }
    c.command(&[0x07]);
    expect_err(c.reply(), 1047);
    assert!(matches!(c.query("SELECT 1"), Reply::Rows { .. }));
}

#[test]
fn multi_statements_set_more_results_and_stop_at_the_first_error() {
    let server = start(&[]);
    let mut c = Client::root(server.address);
    c.command(b"\x03CREATE DATABASE d; SELECT 1; SELECT * FROM d.missing; SELECT 2");
    assert!(matches!(c.reply(), Reply::Ok { status, .. } if status & 8 == 8));
    assert!(matches!(c.reply(), Reply::Rows { status, .. } if status & 8 == 8));
    expect_err(c.reply(), 1146);
    // Nothing more: the connection answers the next command.
    assert!(matches!(c.query("SELECT 3"), Reply::Rows { .. }));
}

#[test]
fn bad_packets_end_only_their_own_connection() {
    let server = start(&[]);
    // Garbage instead of a handshake response.
    let mut c = Client::connect(server.address);
    c.read().unwrap();
    c.socket.write_all(b"GET / HTTP/1.1\r\n\r\n").unwrap();
    let mut rest = Vec::new();
    let _ = c.socket.read_to_end(&mut rest);

    // A wrong sequence number in the command phase: 1156, then closed.
    let mut c = Client::root(server.address);
    c.seq = 5;
    c.write(b"\x03SELECT 1");
    c.seq = 0;
    let reply = c.read().unwrap();
    assert_eq!(error_of(&reply).0, 1156);

    // A truncated frame, then silence: the server doesn't wait for ever.
    let mut c = Client::root(server.address);
    c.socket.write_all(&[10, 0, 0, 0, 3, b'S']).unwrap();
    drop(c);

    let mut healthy = Client::root(server.address);
    assert!(matches!(healthy.query("SELECT 1"), Reply::Rows { .. }));
}

#[test]
fn a_packet_over_max_allowed_packet_is_1153_and_max_connections_is_1040() {
    let server = start(&[("max_allowed_packet", "4096"), ("max_connections", "2")]);
    let mut c = Client::root(server.address);
    let big = format!("SELECT '{}'", "x".repeat(5000));
    expect_err(c.query(&big), 1153);
    drop(c);

    // The server closed that connection; its slot is free once its task has ended,
    // which may be a moment after the client sees the close.
    let admitted = || {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        loop {
            match Client::login(server.address, "root", "") {
                Ok(client) => return client,
                Err(e) if e.0 == 1040 && std::time::Instant::now() < deadline => {
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
                Err(e) => panic!("root logs in: {e:?}"),
            }
        }
    };
    let _a = admitted();
    let _b = admitted();
    let refused = Client::login(server.address, "root", "");
    assert_eq!(refused.err().map(|e| e.0), Some(1040));
}

#[test]
fn wrong_passwords_and_unknown_users_are_1045() {
    let server = start(&[]);
    let e = Client::login(server.address, "root", "nope").err().unwrap();
    assert_eq!(e.0, 1045, "{}", e.1);
    let e = Client::login(server.address, "nobody", "").err().unwrap();
    assert_eq!(e.0, 1045, "{}", e.1);
}

#[test]
fn prepared_statements_return_binary_rows_and_reuse_parameter_types() {
    let server = start(&[]);
    let mut c = Client::root(server.address);
    c.query("CREATE DATABASE d");
    c.query("CREATE TABLE d.t (id INT PRIMARY KEY, v VARCHAR(10), x DOUBLE)");
    c.query("INSERT INTO d.t VALUES (1, 'one', 1.5), (2, NULL, 2.5)");
    c.command(b"\x16SELECT id, v, x FROM d.t WHERE id = ?");
    let prepared = c.read().unwrap();
    assert_eq!(prepared[0], 0);
    let id = u32::from_le_bytes(prepared[1..5].try_into().unwrap());
    let (ncols, nparams) = (
        u16::from_le_bytes([prepared[5], prepared[6]]),
        u16::from_le_bytes([prepared[7], prepared[8]]),
    );
    assert_eq!((ncols, nparams), (3, 1));
    for _ in 0..(nparams + 1 + ncols + 1) {
        c.read().unwrap();
    }
    let execute = |c: &mut Client, key: i64, send_types: bool| {
        let mut p = vec![0x17];
        p.extend_from_slice(&id.to_le_bytes());
        p.push(0);
        p.extend_from_slice(&1u32.to_le_bytes());
        p.push(0); // null bitmap
        p.push(u8::from(send_types));
        if send_types {
            p.extend_from_slice(&[column_type::LONGLONG, 0]);
        }
        p.extend_from_slice(&key.to_le_bytes());
        c.command(&p);
        c.reply()
    };
    for (key, send_types) in [(1, true), (2, false)] {
        match execute(&mut c, key, send_types) {
            Reply::Rows { rows, columns, .. } => {
                assert_eq!(
                    columns,
                    vec![
                        column_type::LONG,
                        column_type::VAR_STRING,
                        column_type::DOUBLE
                    ]
                );
                let row = &rows[0];
                assert_eq!(row[0], 0, "binary row header");
                let mut r = Reader::new(&row[2..]);
                assert_eq!(r.u32().unwrap() as i64, key);
                if key == 1 {
                    assert_eq!(row[1], 0, "no NULLs");
                    assert_eq!(r.lenenc_bytes().unwrap(), b"one");
                    assert_eq!(f64::from_bits(r.u64().unwrap()), 1.5);
                } else {
                    assert_eq!(row[1], 1 << 3, "column 1 is NULL");
                    assert_eq!(f64::from_bits(r.u64().unwrap()), 2.5);
                }
            }
            other => panic!("{other:?}"),
        }
    }
    // An unpreparable statement is 1295 (clients fall back to text).
    c.command(b"\x16PREPARE s FROM 'SELECT 1'");
    let reply = c.read().unwrap();
    assert_eq!(error_of(&reply).0, 1295);
}

/// `LIMIT ?` over COM_STMT_PREPARE / COM_STMT_EXECUTE (Go's database/sql, mysql2's
/// execute(), JDBC with useServerPrepStmts): each execution's value is the count,
/// with the parameter types sent once and reused; a string holding an integer is a
/// count (MySQL 8 converts it); a negative one is 1210 naming mysqld_stmt_execute.
#[test]
fn prepared_limit_parameter_is_read_at_each_execution() {
    let server = start(&[]);
    let mut c = Client::root(server.address);
    c.query("CREATE DATABASE d");
    c.query("CREATE TABLE d.t (id INT PRIMARY KEY)");
    c.query("INSERT INTO d.t VALUES (1), (2), (3), (4)");
    c.command(b"\x16SELECT id FROM d.t ORDER BY id LIMIT ?");
    let prepared = c.read().unwrap();
    assert_eq!(prepared[0], 0, "{}", error_of(&prepared).1);
    let id = u32::from_le_bytes(prepared[1..5].try_into().unwrap());
    let (ncols, nparams) = (
        u16::from_le_bytes([prepared[5], prepared[6]]),
        u16::from_le_bytes([prepared[7], prepared[8]]),
    );
    assert_eq!((ncols, nparams), (1, 1));
    for _ in 0..(nparams + 1 + ncols + 1) {
        c.read().unwrap();
    }
    // (type sent with the execution, if any; the parameter's value bytes)
    let execute = |c: &mut Client, ty: Option<u8>, value: &[u8]| {
        let mut p = vec![0x17];
        p.extend_from_slice(&id.to_le_bytes());
        p.push(0);
        p.extend_from_slice(&1u32.to_le_bytes());
        p.push(0); // null bitmap
        p.push(u8::from(ty.is_some()));
        if let Some(ty) = ty {
            p.extend_from_slice(&[ty, 0]);
        }
        p.extend_from_slice(value);
        c.command(&p);
        c.reply()
    };
    let ids = |reply: Reply| match reply {
        Reply::Rows { rows, .. } => rows
            .iter()
            .map(|row| Reader::new(&row[2..]).u32().unwrap())
            .collect::<Vec<_>>(),
        other => panic!("{other:?}"),
    };
    let longlong = Some(column_type::LONGLONG);
    assert_eq!(
        ids(execute(&mut c, longlong, &2i64.to_le_bytes())),
        vec![1, 2]
    );
    // The types are not sent again: the first execution's are reused.
    assert_eq!(
        ids(execute(&mut c, None, &3i64.to_le_bytes())),
        vec![1, 2, 3]
    );
    assert_eq!(
        ids(execute(&mut c, None, &0i64.to_le_bytes())),
        Vec::<u32>::new()
    );
    let string = Some(column_type::VAR_STRING);
    assert_eq!(ids(execute(&mut c, string, b"\x011")), vec![1]);
    match execute(&mut c, longlong, &(-1i64).to_le_bytes()) {
        Reply::Err { code, message } => {
            assert_eq!(code, 1210);
            assert!(message.contains("mysqld_stmt_execute"), "{message}");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        ids(execute(&mut c, None, &10i64.to_le_bytes())),
        vec![1, 2, 3, 4]
    );
}

/// A column definition's (type, charset, length, flags).
type ColumnDef = (u8, u16, u32, u16);

/// Sends `sql` (a query with a result set) and returns its full column definitions
/// and its text rows.
fn query_definitions(c: &mut Client, sql: &str) -> (Vec<ColumnDef>, Vec<Vec<u8>>) {
    let mut p = vec![0x03];
    p.extend_from_slice(sql.as_bytes());
    c.command(&p);
    let first = c.read().unwrap();
    assert!(first[0] != 0xff, "{sql}: {}", error_of(&first).1);
    let count = Reader::new(&first).lenenc_int().unwrap() as usize;
    let mut definitions = Vec::new();
    for _ in 0..count {
        let def = c.read().unwrap();
        let mut r = Reader::new(&def);
        for _ in 0..6 {
            r.lenenc_bytes().unwrap();
        }
        r.u8().unwrap(); // length of the fixed fields
        let charset = r.u16().unwrap();
        let length = r.u32().unwrap();
        let ty = r.u8().unwrap();
        let flags = r.u16().unwrap();
        definitions.push((ty, charset, length, flags));
    }
    assert_eq!(
        c.read().unwrap()[0],
        0xfe,
        "EOF after the column definitions"
    );
    let mut rows = Vec::new();
    loop {
        let p = c.read().unwrap();
        if p[0] == 0xfe && p.len() < 9 {
            return (definitions, rows);
        }
        rows.push(p);
    }
}

/// BINARY, VARBINARY and the BLOB classes are described as bytes (charset 63, the
/// BINARY flag, their declared length), and take bytes that are not UTF-8 from a
/// prepared statement's parameters and give them back in both protocols.
#[test]
fn binary_strings_are_described_as_bytes_and_take_any_bytes() {
    const BINARY_CHARSET: u16 = 63;
    const BLOB_FLAG: u16 = 1 << 4;
    const BINARY_FLAG: u16 = 1 << 7;
    let server = start(&[]);
    let mut c = Client::root(server.address);
    c.query("CREATE DATABASE d");
    let created = c.query(
        "CREATE TABLE d.b (id INT PRIMARY KEY, u BINARY(16), v VARBINARY(8), t TINYBLOB, \
         l LONGBLOB)",
    );
    assert!(matches!(created, Reply::Ok { .. }), "{created:?}");
    c.command(b"\x16INSERT INTO d.b VALUES (?, ?, ?, ?, ?)");
    let prepared = c.read().unwrap();
    assert_eq!(prepared[0], 0, "{}", error_of(&prepared).1);
    let id = u32::from_le_bytes(prepared[1..5].try_into().unwrap());
    let nparams = u16::from_le_bytes([prepared[7], prepared[8]]);
    assert_eq!(nparams, 5);
    for _ in 0..nparams + 1 {
        c.read().unwrap();
    }
    let (u, v, t, l): (&[u8], &[u8], &[u8], &[u8]) =
        (b"\xff\x00\xfe", b"\xfe\xff\x00", b"\x80", b"\xc3\x28");
    let mut p = vec![0x17];
    p.extend_from_slice(&id.to_le_bytes());
    p.push(0);
    p.extend_from_slice(&1u32.to_le_bytes());
    p.push(0); // null bitmap
    p.push(1); // types follow
    p.extend_from_slice(&[column_type::LONGLONG, 0]);
    p.extend_from_slice(&[column_type::BLOB, 0].repeat(4));
    p.extend_from_slice(&1i64.to_le_bytes());
    for bytes in [u, v, t, l] {
        put_lenenc_bytes(&mut p, bytes);
    }
    c.command(&p);
    let inserted = c.reply();
    assert!(
        matches!(
            inserted,
            Reply::Ok {
                affected_rows: 1,
                ..
            }
        ),
        "{inserted:?}"
    );
    let (definitions, rows) = query_definitions(&mut c, "SELECT u, v, t, l FROM d.b");
    assert_eq!(
        definitions,
        vec![
            (column_type::STRING, BINARY_CHARSET, 16, BINARY_FLAG),
            (column_type::VAR_STRING, BINARY_CHARSET, 8, BINARY_FLAG),
            (
                column_type::BLOB,
                BINARY_CHARSET,
                255,
                BLOB_FLAG | BINARY_FLAG
            ),
            (
                column_type::BLOB,
                BINARY_CHARSET,
                u32::MAX,
                BLOB_FLAG | BINARY_FLAG
            ),
        ]
    );
    let mut padded = u.to_vec();
    padded.resize(16, 0);
    let mut r = Reader::new(&rows[0]);
    for want in [&padded[..], v, t, l] {
        assert_eq!(r.lenenc_bytes().unwrap(), want);
    }
    // The binary protocol: the same bytes, and a point lookup by the padded key.
    let rows = execute_prepared(
        &mut c,
        "SELECT u, v FROM d.b WHERE u = X'FF00FE00000000000000000000000000'",
    );
    assert_eq!(rows.len(), 1);
    let mut r = Reader::new(&rows[0][2..]);
    assert_eq!(r.lenenc_bytes().unwrap(), &padded[..]);
    assert_eq!(r.lenenc_bytes().unwrap(), v);
}

/// A JSON column is described as MySQL 8 describes one (type 245, charset 63, the
/// BLOB flag) and its rows hold the normalized document in both protocols.
#[test]
fn json_is_described_as_mysql_8_does() {
    const BINARY_CHARSET: u16 = 63;
    const BLOB_FLAG: u16 = 1 << 4;
    const BINARY_FLAG: u16 = 1 << 7;
    const NOT_NULL_FLAG: u16 = 1;
    let server = start(&[]);
    let mut c = Client::root(server.address);
    c.query("CREATE DATABASE d");
    c.query("CREATE TABLE d.j (id INT PRIMARY KEY, doc JSON, req JSON NOT NULL)");
    let inserted = c.query(r#"INSERT INTO d.j VALUES (1, '{"b":2,"a":[1,"x"]}', 'true')"#);
    assert!(matches!(inserted, Reply::Ok { .. }), "{inserted:?}");
    let (definitions, rows) = query_definitions(
        &mut c,
        "SELECT doc, req, doc->'$.a', doc->>'$.a[1]' FROM d.j",
    );
    let json = (
        column_type::JSON,
        BINARY_CHARSET,
        u32::MAX,
        BLOB_FLAG | BINARY_FLAG,
    );
    assert_eq!(definitions[0], json);
    assert_eq!(
        definitions[1],
        (json.0, json.1, json.2, json.3 | NOT_NULL_FLAG)
    );
    assert_eq!(definitions[2], json);
    // ->> is text.
    assert_eq!(definitions[3].0, column_type::VAR_STRING);
    assert_eq!(
        cells(&rows[0]),
        [
            Some(r#"{"a": [1, "x"], "b": 2}"#.to_string()),
            Some("true".to_string()),
            Some(r#"[1, "x"]"#.to_string()),
            Some("x".to_string()),
        ]
    );
    let binary = execute_prepared(&mut c, "SELECT doc FROM d.j");
    let mut r = Reader::new(&binary[0][2..]);
    assert_eq!(r.lenenc_bytes().unwrap(), br#"{"a": [1, "x"], "b": 2}"#);
}

/// ENUM and SET columns are STRING with the ENUM (256) or SET (2048) flag and send
/// their text; BIT(n) is type BIT, length n, charset 63, UNSIGNED, and sends its value
/// as ceil(n / 8) big-endian bytes; in both protocols, and through the scan's own
/// encoders (a plain `SELECT` of stored columns) as through expressions.
#[test]
fn enum_set_and_bit_columns_are_described_and_sent_as_mysql_does() {
    const UTF8MB4: u16 = 255;
    const BINARY_CHARSET: u16 = 63;
    const NOT_NULL_FLAG: u16 = 1;
    const UNSIGNED_FLAG: u16 = 1 << 5;
    const ENUM_FLAG: u16 = 1 << 8;
    const SET_FLAG: u16 = 1 << 11;
    let server = start(&[]);
    let mut c = Client::root(server.address);
    c.query("CREATE DATABASE d");
    let created = c.query(
        "CREATE TABLE d.t (id INT PRIMARY KEY, e ENUM('small', 'medium') NOT NULL, \
         s SET('r', 'w', 'x'), b BIT(1), w BIT(12))",
    );
    assert!(matches!(created, Reply::Ok { .. }), "{created:?}");
    let inserted = c.query("INSERT INTO d.t VALUES (1, 'MEDIUM', 'x,r', 1, X'00A5')");
    assert!(matches!(inserted, Reply::Ok { .. }), "{inserted:?}");
    for sql in [
        "SELECT e, s, b, w FROM d.t",
        "SELECT e, s, b, w FROM d.t WHERE id + 0 = 1",
    ] {
        let (definitions, rows) = query_definitions(&mut c, sql);
        assert_eq!(
            definitions,
            vec![
                (column_type::STRING, UTF8MB4, 24, NOT_NULL_FLAG | ENUM_FLAG),
                (column_type::STRING, UTF8MB4, 20, SET_FLAG),
                (column_type::BIT, BINARY_CHARSET, 1, UNSIGNED_FLAG),
                (column_type::BIT, BINARY_CHARSET, 12, UNSIGNED_FLAG),
            ],
            "{sql}"
        );
        let mut r = Reader::new(&rows[0]);
        for want in [&b"medium"[..], b"r,x", b"\x01", b"\x00\xa5"] {
            assert_eq!(r.lenenc_bytes().unwrap(), want, "{sql}");
        }
        let rows = execute_prepared(&mut c, sql);
        let mut r = Reader::new(&rows[0][2..]);
        for want in [&b"medium"[..], b"r,x", b"\x01", b"\x00\xa5"] {
            assert_eq!(r.lenenc_bytes().unwrap(), want, "{sql}, binary protocol");
        }
    }
    // In numeric context a BIT is a number and an ENUM its index.
    let rows = rows_of(c.query("SELECT w + 0, e + 0, s + 0 FROM d.t"));
    assert_eq!(
        cells(&rows[0]),
        [Some("165".into()), Some("2".into()), Some("5".into())]
    );
}

/// A `tinyint(1)` (or BOOL) column selected as it is, also through `*` or a derived
/// table, is TINY of length 1 (Connector/J maps that to Boolean), as in MySQL; another
/// TINYINT, or an expression over a tinyint(1), is length 4.
#[test]
fn tinyint1_columns_are_described_with_length_1() {
    const BINARY_CHARSET: u16 = 63;
    let server = start(&[]);
    let mut c = Client::root(server.address);
    c.query("CREATE DATABASE d");
    let created =
        c.query("CREATE TABLE d.t (id INT PRIMARY KEY, a TINYINT(1), b BOOL, e TINYINT(4))");
    assert!(matches!(created, Reply::Ok { .. }), "{created:?}");
    let inserted = c.query("INSERT INTO d.t VALUES (1, 1, 0, 7)");
    assert!(matches!(inserted, Reply::Ok { .. }), "{inserted:?}");
    for sql in [
        "SELECT a, b, e, IF(a, a, a) FROM d.t",
        "SELECT a, b, e, IF(a, a, a) FROM d.t WHERE id + 0 = 1",
        "SELECT x.a, x.b, x.e, IF(a, a, a) FROM (SELECT * FROM d.t) AS x",
    ] {
        let (definitions, rows) = query_definitions(&mut c, sql);
        let lengths: Vec<(u8, u16, u32)> = definitions
            .iter()
            .map(|&(ty, charset, length, _)| (ty, charset, length))
            .collect();
        assert_eq!(
            lengths,
            [
                (column_type::TINY, BINARY_CHARSET, 1),
                (column_type::TINY, BINARY_CHARSET, 1),
                (column_type::TINY, BINARY_CHARSET, 4),
                (column_type::TINY, BINARY_CHARSET, 4),
            ],
            "{sql}"
        );
        assert_eq!(
            cells(&rows[0]),
            [
                Some("1".into()),
                Some("0".into()),
                Some("7".into()),
                Some("1".into())
            ],
            "{sql}"
        );
    }
    let (definitions, _) = query_definitions(&mut c, "SELECT * FROM d.t");
    let lengths: Vec<u32> = definitions.iter().map(|d| d.2).collect();
    assert_eq!(lengths, [11, 1, 1, 4]);
}

/// The rows of `reply`, which must be a result set.
fn rows_of(reply: Reply) -> Vec<Vec<u8>> {
    match reply {
        Reply::Rows { rows, .. } => rows,
        other => panic!("{other:?}"),
    }
}

/// Prepares `sql` (no parameters), executes it and returns its binary rows.
fn execute_prepared(c: &mut Client, sql: &str) -> Vec<Vec<u8>> {
    let mut p = vec![0x16];
    p.extend_from_slice(sql.as_bytes());
    c.command(&p);
    let prepared = c.read().unwrap();
    assert_eq!(prepared[0], 0, "{}", error_of(&prepared).1);
    let id = u32::from_le_bytes(prepared[1..5].try_into().unwrap());
    let ncols = u16::from_le_bytes([prepared[5], prepared[6]]);
    for _ in 0..ncols + 1 {
        c.read().unwrap();
    }
    let mut p = vec![0x17];
    p.extend_from_slice(&id.to_le_bytes());
    p.push(0);
    p.extend_from_slice(&1u32.to_le_bytes());
    c.command(&p);
    rows_of(c.reply())
}

#[test]
fn results_encoded_by_the_pipeline_workers_are_the_rows_encoded_serially() {
    let server = start(&[]);
    let mut c = Client::root(server.address);
    c.query("CREATE DATABASE d");
    c.query(
        "CREATE TABLE d.big (id INT PRIMARY KEY, v VARCHAR(20), price DECIMAL(15,2), \
         shipped DATE, at DATETIME(3), ratio DOUBLE, n BIGINT UNSIGNED, doc JSON)",
    );
    // Past PARALLEL_MIN_ROWS (16,384): a full scan runs as a parallel pipeline.
    const ROWS: usize = 20_000;
    for start in (0..ROWS).step_by(2_000) {
        let values: Vec<String> = (start..start + 2_000)
            .map(|id| {
                if id % 11 == 0 {
                    format!("({id}, NULL, NULL, NULL, NULL, NULL, NULL, NULL)")
                } else {
                    format!(
                        "({id}, 'v{}', {}.{:02}, DATE '1995-01-01' + INTERVAL {} DAY, \
                         '2024-02-29 12:34:56.{:03}', {id} / 7, {}, \
                         '{{\"tags\":[\"a\",{}],\"id\":{id}}}')",
                        id * 31 % 1000,
                        id * 7 % 100_000,
                        id % 100,
                        id % 3000,
                        id % 1000,
                        u64::MAX - id as u64,
                        id % 5
                    )
                }
            })
            .collect();
        assert!(matches!(
            c.query(&format!("INSERT INTO d.big VALUES {}", values.join(","))),
            Reply::Ok { .. }
        ));
    }
    let plan = rows_of(c.query("EXPLAIN SELECT * FROM d.big"));
    assert!(
        plan.iter()
            .any(|row| String::from_utf8_lossy(row).contains("parallel pipeline")),
        "a full scan of d.big is a parallel pipeline (needs 2 cores)"
    );
    let queries = [
        // Serialized by the scan's workers (send_threads 2), or decoded into batches
        // by them and encoded on the statement thread (send_threads 1).
        "SELECT * FROM d.big",
        "SELECT v, id, v FROM d.big",
        // Through the pipeline's steps, then encoded by its workers (send_threads
        // 2) or as values on the statement thread (send_threads 1).
        "SELECT id, v, price FROM d.big WHERE id % 3 = 0",
        "SELECT id + 1, CONCAT(v, '!'), shipped FROM d.big",
        // A pruned scan: the filter reads one column, the output two others.
        "SELECT shipped, price FROM d.big WHERE id % 3 = 0",
        // JSON: stored text straight out, and through the JSON functions.
        "SELECT doc, id FROM d.big",
        "SELECT id, doc->'$.tags[1]', doc->>'$.tags[0]' FROM d.big WHERE id % 3 = 0",
    ];
    for sql in queries {
        c.query("SET send_threads = 1");
        let serial = rows_of(c.query(sql));
        let serial_binary = execute_prepared(&mut c, sql);
        c.query("SET send_threads = 2");
        let parallel = rows_of(c.query(sql));
        let parallel_binary = execute_prepared(&mut c, sql);
        let expected = if sql.contains("WHERE") {
            ROWS.div_ceil(3)
        } else {
            ROWS
        };
        assert_eq!(serial.len(), expected, "{sql}");
        assert!(serial == parallel, "{sql}: text rows differ");
        assert!(
            serial_binary == parallel_binary,
            "{sql}: binary rows differ"
        );
        assert_eq!(parallel_binary.len(), expected, "{sql}");
    }
    // In primary-key order, every row present.
    let ids: Vec<i64> = rows_of(c.query("SELECT id FROM d.big"))
        .iter()
        .map(|row| cells(row)[0].as_ref().unwrap().parse().unwrap())
        .collect();
    assert_eq!(ids, (0..ROWS as i64).collect::<Vec<_>>());
}

#[test]
fn payloads_over_16_mib_are_joined_and_split() {
    // A row's long values may take at most a tenth of the redo log (1118 beyond, as in
    // InnoDB): this one is over 16 MiB, so the log is larger than the default.
    let log_files = u64::from(Settings::default().log_files);
    let server = start_with_log(
        &[("max_allowed_packet", "67108864")],
        (256 << 20) / log_files,
    );
    let mut c = Client::root(server.address);
    c.query("CREATE DATABASE d");
    c.query("CREATE TABLE d.b (id INT PRIMARY KEY, v LONGBLOB)");
    let len = packet::MAX_PAYLOAD_BYTES + 1000;
    let sql = format!("INSERT INTO d.b VALUES (1, '{}')", "z".repeat(len));
    assert!(matches!(
        c.query(&sql),
        Reply::Ok {
            affected_rows: 1,
            ..
        }
    ));
    match c.query("SELECT LENGTH(v), v FROM d.b") {
        Reply::Rows { rows, .. } => {
            let cells = cells(&rows[0]);
            assert_eq!(cells[0].as_deref(), Some(len.to_string().as_str()));
            assert_eq!(cells[1].as_ref().map(String::len), Some(len));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_client_that_disconnects_releases_its_locks() {
    let server = start(&[]);
    let mut a = Client::root(server.address);
    a.query("CREATE DATABASE d");
    a.query("CREATE TABLE d.t (id INT PRIMARY KEY, v INT)");
    a.query("INSERT INTO d.t VALUES (1, 0)");
    a.query("BEGIN");
    assert!(matches!(
        a.query("SELECT * FROM d.t WHERE id = 1 FOR UPDATE"),
        Reply::Rows { .. }
    ));
    drop(a);
    let mut b = Client::root(server.address);
    b.query("SET innodb_lock_wait_timeout = 10");
    assert!(matches!(
        b.query("UPDATE d.t SET v = 1 WHERE id = 1"),
        Reply::Ok {
            affected_rows: 1,
            ..
        }
    ));
    // And the process list no longer shows the first connection.
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(server.engine.processes().len(), 1);
}

/// A client that disconnects while its statement waits for a row lock: the statement
/// stops at once (not after `lock_wait_timeout`), and the connection's end rolls
/// back its transaction, releasing the locks it held.
#[test]
fn a_client_that_disconnects_mid_statement_stops_it_and_releases_its_locks() {
    let server = start(&[]);
    let mut a = Client::root(server.address);
    a.query("CREATE DATABASE d");
    a.query("CREATE TABLE d.t (id INT PRIMARY KEY, v INT)");
    a.query("INSERT INTO d.t VALUES (1, 0), (2, 0)");
    a.query("BEGIN");
    assert!(matches!(
        a.query("UPDATE d.t SET v = 1 WHERE id = 1"),
        Reply::Ok { .. }
    ));
    let mut b = Client::root(server.address);
    b.query("SET innodb_lock_wait_timeout = 120");
    b.query("BEGIN");
    assert!(matches!(
        b.query("UPDATE d.t SET v = 2 WHERE id = 2"),
        Reply::Ok { .. }
    ));
    // B waits for A's lock on row 1, holding its own on row 2, and goes away.
    let mut p = vec![0x03];
    p.extend_from_slice(b"UPDATE d.t SET v = 2 WHERE id = 1");
    b.command(&p);
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(server.engine.processes().len(), 2);
    drop(b);
    // C needs row 2: it gets it once B's statement stopped and B's transaction
    // rolled back, long before B's lock wait (120 s) or C's own (20 s) would end.
    let mut c = Client::root(server.address);
    c.query("SET innodb_lock_wait_timeout = 20");
    let started = Instant::now();
    match c.query("UPDATE d.t SET v = 3 WHERE id = 2") {
        Reply::Ok { affected_rows, .. } => assert_eq!(affected_rows, 1),
        other => panic!("C did not get row 2: {other:?}"),
    }
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "C waited {:?} for the row of a client that had gone",
        started.elapsed()
    );
    assert!(matches!(a.query("COMMIT"), Reply::Ok { .. }));
    match c.query("SELECT v FROM d.t ORDER BY id") {
        Reply::Rows { rows, .. } => {
            let values: Vec<_> = rows.iter().map(|r| cells(r)[0].clone()).collect();
            assert_eq!(values, vec![Some("1".into()), Some("3".into())]);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn require_secure_transport_refuses_plain_tcp_with_3159() {
    let server = start(&[("require_secure_transport", "ON")]);
    let e = Client::login(server.address, "root", "").err().unwrap();
    assert_eq!(e.0, 3159, "{}", e.1);
}

/// The runners, holding a plain-TCP connection, answer commands the client sent in
/// one write, wait out a packet that arrives in pieces further apart than the read
/// tick, and hand the connection back when the client goes quiet.
#[test]
fn a_kept_connection_answers_pipelined_and_split_commands() {
    kept_connection_answers(false);
}

/// The same over TLS: the runners read and write through the connection's rustls
/// session, which moves with the socket between them and the network task.
#[test]
fn a_kept_tls_connection_answers_pipelined_and_split_commands() {
    kept_connection_answers(true);
}

fn kept_connection_answers(tls: bool) {
    let server = if tls { start_tls() } else { start(&[]) };
    let mut c = Client::login_over(server.address, "root", "", tls).expect("root logs in");
    assert!(matches!(c.query("SELECT 0"), Reply::Rows { .. }));
    let command = |sql: &str| {
        let mut p = vec![0x03];
        p.extend_from_slice(sql.as_bytes());
        let mut buf = Vec::new();
        packet::put(&mut buf, &p);
        packet::stamp_sequence(&mut buf, 0);
        buf
    };
    let together: Vec<u8> = ["SELECT 1", "SELECT 2", "SELECT 3"]
        .iter()
        .flat_map(|sql| command(sql))
        .collect();
    c.socket.write_all(&together).unwrap();
    for expected in ["1", "2", "3"] {
        c.seq = 1;
        match c.reply() {
            Reply::Rows { rows, .. } => assert_eq!(cells(&rows[0]), vec![Some(expected.into())]),
            other => panic!("{other:?}"),
        }
    }
    let tick = Duration::from_millis(tarn_server::limits::SOCKET_WAIT_TICK_MS);
    let park_max = Duration::from_millis(tarn_server::limits::RUNNER_PARK_MAX_MS);
    // Over TLS the record itself comes in two pieces: the runner parks the connection
    // with half a record in its session, and the rest wakes it.
    c.socket.write_in_two(&command("SELECT 4"), tick * 5);
    c.seq = 1;
    match c.reply() {
        Reply::Rows { rows, .. } => assert_eq!(cells(&rows[0]), vec![Some("4".into())]),
        other => panic!("{other:?}"),
    }
    // A result larger than the output's flush size and rustls's send buffer.
    let wide = 2000;
    let count = 900;
    let sql = format!(
        "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < {count}) \
         SELECT n, REPEAT('x', {wide}) FROM r"
    );
    let check_wide = |reply: Reply| match reply {
        Reply::Rows { rows, .. } => {
            assert_eq!(rows.len(), count);
            for (i, row) in rows.iter().enumerate() {
                let cells = cells(row);
                assert_eq!(cells[0].as_deref(), Some((i + 1).to_string().as_str()));
                assert_eq!(cells[1].as_ref().map(String::len), Some(wide));
            }
        }
        other => panic!("{other:?}"),
    };
    check_wide(c.query(&sql));
    // Quiet past the runners' park time: the network threads have the connection
    // again.
    std::thread::sleep(park_max * 2);
    match c.query("SELECT 5") {
        Reply::Rows { rows, .. } => assert_eq!(cells(&rows[0]), vec![Some("5".into())]),
        other => panic!("{other:?}"),
    }
    check_wide(c.query(&sql));
}

/// Runners go from one ready connection to the next (`tarn_server::runners`): many
/// clients at once each get their own answers, in order, and none is left behind.
#[test]
fn many_connections_on_the_runners_each_get_their_own_answers() {
    many_connections_each_get_their_own_answers(false);
}

#[test]
fn many_tls_connections_on_the_runners_each_get_their_own_answers() {
    many_connections_each_get_their_own_answers(true);
}

fn many_connections_each_get_their_own_answers(tls: bool) {
    let server = if tls { start_tls() } else { start(&[]) };
    let threads: Vec<_> = (0..48)
        .map(|client| {
            let address = server.address;
            std::thread::spawn(move || {
                let mut c = Client::login_over(address, "root", "", tls).expect("root logs in");
                for i in 0..150 {
                    let n = client * 1000 + i;
                    match c.query(&format!("SELECT {n}")) {
                        Reply::Rows { rows, .. } => {
                            assert_eq!(cells(&rows[0]), vec![Some(n.to_string())]);
                        }
                        other => panic!("client {client}, query {i}: {other:?}"),
                    }
                }
            })
        })
        .collect();
    for t in threads {
        t.join().expect("a client thread failed");
    }
    // SHOW STATUS reports the runners, one of which runs this very statement.
    let mut c = Client::root(server.address);
    let figures = match c.query("SHOW GLOBAL STATUS LIKE 'Threadpool%'") {
        Reply::Rows { rows, .. } => rows
            .iter()
            .map(|r| {
                let cells = cells(r);
                let value: u64 = cells[1].as_deref().unwrap().parse().unwrap();
                (cells[0].clone().unwrap(), value)
            })
            .collect::<Vec<_>>(),
        other => panic!("{other:?}"),
    };
    assert_eq!(figures.len(), 2, "{figures:?}");
    assert_eq!(figures[1].0, "Threadpool_threads");
    assert!(figures[1].1 >= 1, "{figures:?}");
}

/// Commits are answered without a runner sleeping for the log
/// (`tarn_server::runners`, `hold_for_commit`): many clients committing at once each
/// get their own answer, a statement after a COMMIT in the same command sees it, and
/// SHOW STATUS counts the answers held for the log and none left held. (That no answer
/// leaves before its commit is durable is the power-loss cycle of
/// tests/clients/crash_check.py.)
#[test]
fn commits_held_for_the_log_are_each_answered() {
    commits_held_for_the_log_are_answered(false);
}

#[test]
fn commits_held_for_the_log_are_each_answered_over_tls() {
    commits_held_for_the_log_are_answered(true);
}

fn commits_held_for_the_log_are_answered(tls: bool) {
    let server = if tls { start_tls() } else { start(&[]) };
    let mut admin = Client::root(server.address);
    admin.query("CREATE DATABASE d");
    admin.query("CREATE TABLE d.t (client INT, i INT, PRIMARY KEY (client, i))");
    let clients = 8;
    let inserts = 40;
    let threads: Vec<_> = (0..clients)
        .map(|client| {
            let address = server.address;
            std::thread::spawn(move || {
                let mut c = Client::login_over(address, "root", "", tls).expect("root logs in");
                for i in 0..inserts {
                    let sql = if i % 4 == 3 {
                        // An explicit transaction, and a statement after its COMMIT.
                        format!(
                            "BEGIN; INSERT INTO d.t VALUES ({client}, {i}); COMMIT; \
                             SELECT COUNT(*) FROM d.t WHERE client = {client}"
                        )
                    } else {
                        format!("INSERT INTO d.t VALUES ({client}, {i})")
                    };
                    let mut replies = vec![c.query(&sql)];
                    while more_results(replies.last().unwrap()) {
                        replies.push(c.reply());
                    }
                    match replies.last() {
                        Some(Reply::Ok { affected_rows, .. }) => assert_eq!(*affected_rows, 1),
                        Some(Reply::Rows { rows, .. }) => {
                            assert_eq!(cells(&rows[0]), vec![Some((i + 1).to_string())]);
                        }
                        other => panic!("client {client}, insert {i}: {other:?}"),
                    }
                }
            })
        })
        .collect();
    for t in threads {
        t.join().expect("a client thread failed");
    }
    match admin.query("SELECT COUNT(*) FROM d.t") {
        Reply::Rows { rows, .. } => {
            assert_eq!(cells(&rows[0]), vec![Some((clients * inserts).to_string())]);
        }
        other => panic!("{other:?}"),
    }
    let figures: std::collections::HashMap<String, u64> =
        match admin.query("SHOW GLOBAL STATUS LIKE 'Tarn_runner_held_commits%'") {
            Reply::Rows { rows, .. } => rows
                .iter()
                .map(|r| {
                    let cells = cells(r);
                    (
                        cells[0].clone().unwrap(),
                        cells[1].as_deref().unwrap().parse().unwrap(),
                    )
                })
                .collect(),
            other => panic!("{other:?}"),
        };
    assert_eq!(figures["Tarn_runner_held_commits"], 0, "{figures:?}");
    // Each commit's answer is held unless the log was durable at the end of its
    // command, which takes the log writer's fsync in between: some were held.
    assert!(figures["Tarn_runner_held_commits_total"] > 0, "{figures:?}");
}

/// SERVER_MORE_RESULTS_EXISTS: another reply follows this one.
fn more_results(reply: &Reply) -> bool {
    match reply {
        Reply::Ok { status, .. } | Reply::Rows { status, .. } => status & 8 != 0,
        Reply::Err { .. } => false,
    }
}

/// More statements wait for a row lock than there are runners waiting for work: the
/// holder's COMMIT must still run (a runner about to sleep in a lock wait hands its
/// watch for ready connections on), and every waiter then gets the row in turn.
#[test]
fn lock_waiters_on_every_runner_do_not_hold_up_the_holders_commit() {
    let server = start(&[]);
    let mut holder = Client::root(server.address);
    holder.query("CREATE DATABASE d");
    holder.query("CREATE TABLE d.t (id INT PRIMARY KEY, v INT)");
    holder.query("INSERT INTO d.t VALUES (1, 0)");
    holder.query("BEGIN");
    assert!(matches!(
        holder.query("UPDATE d.t SET v = 100 WHERE id = 1"),
        Reply::Ok { .. }
    ));
    let waiters = 8;
    let mut clients: Vec<Client> = (0..waiters)
        .map(|_| {
            let mut c = Client::root(server.address);
            c.query("SET innodb_lock_wait_timeout = 60");
            c
        })
        .collect();
    for c in &mut clients {
        let mut p = vec![0x03];
        p.extend_from_slice(b"UPDATE d.t SET v = v + 1 WHERE id = 1");
        c.command(&p);
    }
    // Every waiter's statement is running (waiting) before the holder commits.
    let deadline = Instant::now() + Duration::from_secs(30);
    while server
        .engine
        .processes()
        .iter()
        .filter(|p| p.info.as_deref().is_some_and(|q| q.starts_with("UPDATE")))
        .count()
        < waiters
    {
        assert!(Instant::now() < deadline, "the waiters never all started");
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(matches!(holder.query("COMMIT"), Reply::Ok { .. }));
    for c in &mut clients {
        c.seq = 1;
        match c.reply() {
            Reply::Ok { affected_rows, .. } => assert_eq!(affected_rows, 1),
            other => panic!("a waiter did not get the row: {other:?}"),
        }
    }
    match holder.query("SELECT v FROM d.t") {
        Reply::Rows { rows, .. } => {
            assert_eq!(cells(&rows[0]), vec![Some((100 + waiters).to_string())]);
        }
        other => panic!("{other:?}"),
    }
}

/// KILL CONNECTION of a connection that just answered (so the runners hold it,
/// parked): the server closes it, and its session ends, without the client saying
/// anything more.
#[test]
fn kill_connection_closes_a_quiet_connection_the_runners_hold() {
    kill_connection_closes_a_parked_connection(false);
}

#[test]
fn kill_connection_closes_a_quiet_tls_connection_the_runners_hold() {
    kill_connection_closes_a_parked_connection(true);
}

fn kill_connection_closes_a_parked_connection(tls: bool) {
    let server = if tls { start_tls() } else { start(&[]) };
    let mut a = Client::root(server.address);
    let mut b = Client::login_over(server.address, "root", "", tls).expect("root logs in");
    let b_id = match b.query("SELECT CONNECTION_ID()") {
        Reply::Rows { rows, .. } => cells(&rows[0])[0].clone().expect("an id"),
        other => panic!("{other:?}"),
    };
    // b, quiet now, is parked in the runners (not back with its network task, which
    // takes RUNNER_PARK_MAX_MS): SHOW STATUS counts it once its runner has parked it.
    let parked = |a: &mut Client| match a
        .query("SHOW GLOBAL STATUS LIKE 'Tarn_runner_parked_connections'")
    {
        Reply::Rows { rows, .. } => cells(&rows[0])[1]
            .as_deref()
            .unwrap()
            .parse::<u64>()
            .unwrap(),
        other => panic!("{other:?}"),
    };
    // A slow machine may take longer than RUNNER_PARK_MAX_MS to look, by which time b
    // went back to its network task: then b asks again and a looks again.
    let park_max = Duration::from_millis(tarn_server::limits::RUNNER_PARK_MAX_MS);
    let mut seen = 0;
    for _ in 0..5 {
        let since = Instant::now();
        seen = parked(&mut a);
        while seen == 0 && since.elapsed() < park_max / 2 {
            std::thread::sleep(Duration::from_millis(5));
            seen = parked(&mut a);
        }
        if seen >= 1 {
            break;
        }
        assert!(matches!(b.query("SELECT 1"), Reply::Rows { .. }));
    }
    assert!(seen >= 1, "b was never parked in the runners");
    assert!(matches!(
        a.query(&format!("KILL CONNECTION {b_id}")),
        Reply::Ok { .. }
    ));
    // The server closes b's socket: a read sees the end (or an error packet first,
    // then the end), well within the client's 20 s read timeout.
    let mut rest = Vec::new();
    match b.socket.read_to_end(&mut rest) {
        Ok(_) => {}
        Err(e) => panic!("b's connection was not closed: {e}"),
    }
    let deadline = Instant::now() + Duration::from_secs(20);
    while server.engine.processes().len() > 1 {
        assert!(Instant::now() < deadline, "b's session never ended");
        std::thread::sleep(Duration::from_millis(10));
    }
}
