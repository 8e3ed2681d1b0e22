//! One client connection: the handshake, authentication and the command loop.
//!
//! A connection is an async task on the network threads, which do protocol I/O
//! only: the handshake, authentication, and waiting for an idle client's next
//! command. Commands run on runner threads (`crate::runners`), which take the
//! connection's socket (and TLS session) and answer straight into it while the
//! client keeps them busy ([`run_job`]). A command the task reads while its buffer
//! holds more (a client that sent several at once) runs on a statement thread
//! (`tokio::task::spawn_blocking`), which owns the connection's [`Conn`] state for
//! the command's duration and writes the answer into the connection's output (see
//! [`crate::send`]); meanwhile the task forwards output buffers to the socket and
//! watches the socket: a client that closes it stops the statement (KILL QUERY),
//! which releases its locks through statement rollback.
//!
//! A commit is acknowledged only once the log has made it durable (as
//! `flush_log_at_commit` asks), but no thread sleeps for that: sessions defer their
//! commits' waits (`Session::set_defer_commit_acks`), and at the end of a command
//! whose commit is not yet durable the runner holds the whole answer back and goes
//! on to other connections ([`Ran::Committing`], `Runners::hold_for_commit`). A
//! statement that follows a commit in the same command waits for it first
//! (`Session::run_statement`), so no byte after a commit's OK leaves before the
//! commit is durable. A command run on a statement thread waits for its commit
//! there ([`Conn::command`]).
//!
//! Errors that break the protocol (a wrong sequence number, a packet over
//! `max_allowed_packet`, a malformed handshake) end the connection with an ERR
//! packet where the protocol allows one; they never reach the engine or other
//! connections.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use rustls::ServerConnection;
use tarn_common::{Error, Result};
use tarn_sql::accounts::{Account, AuthPlugin};
use tarn_sql::{CommitTicket, QueryResult, Session};

use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio::sync::mpsc::Receiver;

use crate::limits::{LONG_DATA_BYTES_MAX, RESULT_BUFFERS_IN_FLIGHT_MAX, RESULT_FLUSH_BYTES};
use crate::protocol::handshake::{self, HandshakeResponse};
use crate::protocol::packet::{self, ReadError, read_payload};
use crate::protocol::stmt::{ParamState, decode_params};
use crate::protocol::{Malformed, Reader, auth, caps, command, results, status};
use crate::runners::{Job, Returned};
use crate::send::{Direct, Output, ResultSender, RowFormat, Stream};
use crate::server::Shared;
use crate::tls_stream::{AsyncTls, SharedTls};

/// Any byte stream a connection runs over (TCP, or TLS over TCP).
pub trait ByteStream: AsyncRead + AsyncWrite + Unpin + Send {
    /// The TCP socket under this stream, taken out of the runtime's reactor (its
    /// readiness then wakes no network thread) for the runners to keep
    /// (`crate::runners`), and the TLS session over it if there is one.
    fn into_parts(
        self: Box<Self>,
    ) -> std::io::Result<(std::net::TcpStream, Option<ServerConnection>)>;
}

impl ByteStream for TcpStream {
    fn into_parts(
        self: Box<Self>,
    ) -> std::io::Result<(std::net::TcpStream, Option<ServerConnection>)> {
        Ok(((*self).into_std()?, None))
    }
}

impl ByteStream for AsyncTls {
    fn into_parts(
        self: Box<Self>,
    ) -> std::io::Result<(std::net::TcpStream, Option<ServerConnection>)> {
        let (socket, tls) = (*self).into_parts()?;
        Ok((socket, Some(tls)))
    }
}

type Boxed = Box<dyn ByteStream>;
type StreamReader = BufReader<Resumed<tokio::io::ReadHalf<Boxed>>>;

/// Splits `stream` for the network task; `ahead` is read first.
fn split_stream(stream: Boxed, ahead: Vec<u8>) -> (StreamReader, tokio::io::WriteHalf<Boxed>) {
    let (reader, writer) = tokio::io::split(stream);
    let reader = BufReader::with_capacity(
        64 * 1024,
        Resumed {
            ahead,
            at: 0,
            inner: reader,
        },
    );
    (reader, writer)
}

fn access_denied(user: &str, host: &str, with_password: bool) -> Error {
    Error::sql(
        1045,
        "28000",
        format!(
            "Access denied for user '{user}'@'{host}' (using password: {})",
            if with_password { "YES" } else { "NO" }
        ),
    )
}

fn protocol_error(e: &ReadError) -> Option<Error> {
    match e {
        ReadError::TooLarge { .. } => Some(Error::sql(
            1153,
            "08S01",
            "Got a packet bigger than 'max_allowed_packet' bytes",
        )),
        ReadError::OutOfOrder { .. } => Some(Error::sql(1156, "08S01", "Got packets out of order")),
        ReadError::Closed | ReadError::Io(_) => None,
    }
}

fn malformed(m: Malformed) -> Error {
    Error::sql(1047, "08S01", format!("Unknown command or {m}"))
}

/// Sends one packet with sequence number `seq` (then incremented).
async fn send_packet<S: AsyncWrite + Unpin>(
    s: &mut S,
    seq: &mut u8,
    payload: &[u8],
) -> std::io::Result<()> {
    let mut buf = Vec::with_capacity(payload.len() + 4);
    packet::put(&mut buf, payload);
    *seq = packet::stamp_sequence(&mut buf, *seq);
    s.write_all(&buf).await?;
    s.flush().await
}

async fn send_error<S: AsyncWrite + Unpin>(s: &mut S, seq: &mut u8, e: &Error) {
    let mut buf = Vec::new();
    results::err(&mut buf, e.mysql_code(), e.sqlstate(), &e.to_string());
    *seq = packet::stamp_sequence(&mut buf, *seq);
    let _ = s.write_all(&buf).await;
    let _ = s.flush().await;
}

/// A session's numeric variable (`default` if unset; negative values count as 0).
fn session_u64(session: &Session, name: &str, default: u64) -> u64 {
    session
        .variables()
        .get(name)
        .and_then(|v| tarn_sql::scalar::cast::to_i64(&v))
        .map_or(default, |v| v.max(0) as u64)
}

/// The session's `max_allowed_packet`: the largest command payload it accepts.
fn packet_limit_bytes(session: &Session) -> usize {
    session
        .variables()
        .hot()
        .max_allowed_packet
        .unwrap_or(64 << 20) as usize
}

/// The host part accounts match against: loopback is `localhost`.
fn client_host(peer: &SocketAddr) -> String {
    if peer.ip().is_loopback() {
        "localhost".to_string()
    } else {
        peer.ip().to_string()
    }
}

/// Serves one accepted socket to the end.
pub async fn run(shared: Arc<Shared>, tcp: TcpStream, peer: SocketAddr) {
    let _ = tcp.set_nodelay(true);
    let mut tcp = tcp;
    let engine = shared.engine.clone();
    let max = engine.global_u64("max_connections");
    // The counter is decremented by `Shared::connection_closed` when this returns.
    if shared.connections.load(Ordering::Relaxed) > max {
        shared.engine.note_connect_aborted();
        let mut seq = 0;
        send_error(
            &mut tcp,
            &mut seq,
            &Error::sql(1040, "08004", "Too many connections"),
        )
        .await;
        return;
    }
    let id = engine.reserve_connection_id();
    let host = client_host(&peer);
    let handshake = tokio::time::timeout(
        Duration::from_secs(engine.global_u64("connect_timeout").max(1)),
        handshake(&shared, tcp, &host, id),
    )
    .await;
    let (stream, conn, rx) = match handshake {
        Ok(Ok(established)) => established,
        Ok(Err(())) | Err(_) => {
            shared.engine.note_connect_aborted();
            return;
        }
    };
    command_loop(&shared, stream, conn, rx, &host, peer).await;
}

/// What a connection keeps between commands. Moved to a statement thread for each
/// command.
pub struct Conn {
    pub shared: Arc<Shared>,
    pub session: Session,
    pub account: Account,
    pub stream: Arc<Mutex<Stream>>,
    pub capabilities: u32,
    /// Parameter types and long data per prepared statement.
    pub params: HashMap<u32, ParamState>,
}

/// How the runners gave the connection back.
pub enum HandBack {
    /// The client went quiet: the network task waits for its next command.
    Idle,
    Close,
    /// The client said COM_QUIT.
    Quit,
    /// A command the network task must run itself (COM_CHANGE_USER), with the
    /// sequence number that follows it and the bytes read after it.
    Deferred(Vec<u8>, u8, Vec<u8>),
}

fn is_timeout(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
    )
}

/// A blocking socket whose read timeout is `SOCKET_WAIT_TICK_MS` ([`runner_socket`]),
/// read by the runner that holds a connection (`crate::runners`), through the
/// connection's TLS session if it has one (`crate::tls_stream`). With `patience`
/// None a read does not wait at all (`WouldBlock`: the client has sent nothing
/// more); with `Some(limit)` it waits, a tick at a time, until it has waited `limit`
/// (`net_read_timeout`), as inside a packet.
pub struct PatientSocket {
    socket: std::net::TcpStream,
    tls: Option<SharedTls>,
    patience: Option<Duration>,
}

impl PatientSocket {
    pub fn socket(&self) -> &std::net::TcpStream {
        &self.socket
    }

    pub fn into_parts(self) -> (std::net::TcpStream, Option<SharedTls>) {
        (self.socket, self.tls)
    }
}

/// Reads from a runner's `socket`, waiting as [`PatientSocket`] says.
fn read_patiently(
    socket: &std::net::TcpStream,
    patience: Option<Duration>,
    buf: &mut [u8],
) -> std::io::Result<usize> {
    let Some(limit) = patience else {
        return tarn_io::os::recv_nowait(socket, buf);
    };
    let tick = Duration::from_millis(crate::limits::SOCKET_WAIT_TICK_MS);
    let mut waited = Duration::ZERO;
    loop {
        match std::io::Read::read(&mut &*socket, buf) {
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) if is_timeout(&e) && waited + tick < limit => {
                if waited.is_zero() {
                    // A client slow to send the rest: other connections need not
                    // wait for it.
                    tarn_common::blocking::about_to_block();
                }
                waited += tick;
            }
            other => return other,
        }
    }
}

impl std::io::Read for PatientSocket {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let (socket, patience) = (&self.socket, self.patience);
        match &self.tls {
            None => read_patiently(socket, patience, buf),
            Some(tls) => crate::tls_stream::read_blocking(socket, tls, buf, |raw| {
                read_patiently(socket, patience, raw)
            }),
        }
    }
}

/// Sets up a socket taken from the reactor for the runners: blocking, with read and
/// write timeouts of a tick (`SOCKET_WAIT_TICK_MS`), set once, so that a runner
/// kept waiting by its client notices and says so (`PatientSocket`,
/// `tls_stream::PatientWriter`). Returns a second handle on it, for the connection's
/// output to write through.
fn runner_socket(socket: &std::net::TcpStream) -> std::io::Result<std::net::TcpStream> {
    let tick = Duration::from_millis(crate::limits::SOCKET_WAIT_TICK_MS);
    socket.set_nonblocking(false)?;
    socket.set_read_timeout(Some(tick))?;
    socket.set_write_timeout(Some(tick))?;
    socket.try_clone()
}

/// How [`run_job`] left a job.
pub(crate) enum Ran {
    /// The client has sent nothing more: park it.
    Quiet,
    /// The last command's answer is buffered, not sent: it commits, and the log has
    /// not made the commit durable yet. Send it once the ticket is ready.
    Committing(CommitTicket),
    /// The connection goes back to its network task.
    End(HandBack),
}

/// Runs `job`'s commands while its client has sent them, and says how it stopped.
pub(crate) fn run_job(job: &mut Job) -> Ran {
    let net_read_timeout = Duration::from_secs(job.conn.shared.net_read_timeout_s());
    loop {
        let seq = match job.command.take() {
            Some(seq) => seq,
            None => {
                // A command the client sent already is in the buffer: no system call.
                if job.input.buffer().is_empty() {
                    job.input.get_mut().patience = None;
                    match std::io::BufRead::fill_buf(&mut job.input) {
                        Ok([]) => return Ran::End(HandBack::Close),
                        Ok(_) => {}
                        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return Ran::Quiet,
                        Err(_) => return Ran::End(HandBack::Close),
                    }
                }
                // The rest of the packet may take up to net_read_timeout per read.
                job.input.get_mut().patience = Some(net_read_timeout);
                let mut seq = 0;
                let limit = packet_limit_bytes(&job.conn.session);
                let read = packet::read_payload_blocking(
                    &mut job.input,
                    &mut seq,
                    limit,
                    &mut job.payload,
                );
                if let Err(e) = read {
                    if let Some(err) = protocol_error(&e) {
                        let mut out = job.conn.stream.lock();
                        out.output.seq = seq;
                        out.output.err(&err);
                        let _ = out.output.flush();
                    }
                    return Ran::End(HandBack::Close);
                }
                match job.payload.first() {
                    Some(&command::QUIT) => return Ran::End(HandBack::Quit),
                    // Whatever the client sent after these goes back with them: the
                    // network task authenticates (COM_CHANGE_USER) or asks for the
                    // file (`receive_local_file`).
                    Some(&command::CHANGE_USER) => {
                        let ahead = job.input.buffer().to_vec();
                        return Ran::End(HandBack::Deferred(
                            std::mem::take(&mut job.payload),
                            seq,
                            ahead,
                        ));
                    }
                    Some(&command::QUERY)
                        if local_infile_request(&job.conn, &job.payload).is_some() =>
                    {
                        let ahead = job.input.buffer().to_vec();
                        return Ran::End(HandBack::Deferred(
                            std::mem::take(&mut job.payload),
                            seq,
                            ahead,
                        ));
                    }
                    _ => {}
                }
                seq
            }
        };
        job.conn.stream.lock().output.seq = seq;
        if let Some(watched) = &job.watched {
            watched.statement_started();
        }
        let flow = job.conn.dispatch(&job.payload);
        if let Some(watched) = &job.watched {
            watched.statement_ended();
        }
        let closing = flow == Flow::Close || job.conn.session.is_killed();
        // A client that sent more already (pipelined commands) is answered in order
        // here: a held job is parked when released, and bytes already read would
        // never wake it.
        let pipelined = !job.input.buffer().is_empty();
        if let Some(ticket) = job.conn.session.take_commit_ticket() {
            let ready = match ticket.ready() {
                Ok(false) if !closing && !pipelined => return Ran::Committing(ticket),
                Ok(false) => ticket.wait(),
                other => other.map(|_| ()),
            };
            if ready.is_err() {
                // The log failed: the commit's fate is unknown to the client.
                return Ran::End(HandBack::Close);
            }
        }
        let flushed = job.conn.stream.lock().output.flush();
        if closing || flushed.is_err() {
            return Ran::End(HandBack::Close);
        }
    }
}

/// The read half of a connection, giving first the bytes a runner read past the
/// command it handed back (`HandBack::Deferred`).
struct Resumed<R> {
    ahead: Vec<u8>,
    at: usize,
    inner: R,
}

impl<R: AsyncRead + Unpin> AsyncRead for Resumed<R> {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        let this = &mut *self;
        if this.at < this.ahead.len() {
            let n = buf.remaining().min(this.ahead.len() - this.at);
            buf.put_slice(&this.ahead[this.at..this.at + n]);
            this.at += n;
            if this.at == this.ahead.len() {
                this.ahead = Vec::new();
                this.at = 0;
            }
            return std::task::Poll::Ready(Ok(()));
        }
        std::pin::Pin::new(&mut this.inner).poll_read(cx, buf)
    }
}

/// Ends the command loop or not.
#[derive(PartialEq, Eq)]
enum Flow {
    Continue,
    Close,
}

async fn handshake(
    shared: &Arc<Shared>,
    mut tcp: TcpStream,
    host: &str,
    id: u64,
) -> std::result::Result<(Boxed, Conn, Receiver<Vec<u8>>), ()> {
    let engine = &shared.engine;
    let mut nonce = auth::nonce();
    let mut capabilities = caps::SERVER;
    if shared.tls.is_some() {
        capabilities |= caps::SSL;
    }
    let version = tarn_sql::sysvars::SERVER_VERSION;
    let greeting = handshake::greeting(
        version,
        id as u32,
        &nonce,
        capabilities,
        status::AUTOCOMMIT,
        auth::NATIVE_PASSWORD,
    );
    let mut seq = 0u8;
    send_packet(&mut tcp, &mut seq, &greeting)
        .await
        .map_err(|_| ())?;
    let limit = engine.global_u64("max_allowed_packet") as usize;
    let mut payload = Vec::new();
    if let Err(e) = read_payload(&mut tcp, &mut seq, limit, &mut payload).await {
        if let Some(err) = protocol_error(&e) {
            send_error(&mut tcp, &mut seq, &err).await;
        }
        return Err(());
    }
    let bad_handshake = || Error::sql(1043, "08S01", "Bad handshake");
    let mut response = match handshake::parse_response(&payload) {
        Ok(r) => r,
        Err(_) => {
            send_error(&mut tcp, &mut seq, &bad_handshake()).await;
            return Err(());
        }
    };
    let mut stream: Boxed;
    let tls = response.ssl_request;
    if tls {
        let Some(acceptor) = &shared.tls else {
            send_error(&mut tcp, &mut seq, &bad_handshake()).await;
            return Err(());
        };
        let tls_stream = acceptor.accept(tcp).await.map_err(|e| {
            tracing::debug!("TLS handshake with a client failed: {e}");
        })?;
        // Our own stream from here on: the runners can take its parts and give
        // them back (`crate::tls_stream`).
        let (tcp, session) = tls_stream.into_inner();
        stream = Box::new(AsyncTls::new(tcp, session));
        if let Err(e) = read_payload(&mut stream, &mut seq, limit, &mut payload).await {
            if let Some(err) = protocol_error(&e) {
                send_error(&mut stream, &mut seq, &err).await;
            }
            return Err(());
        }
        response = match handshake::parse_response(&payload) {
            Ok(r) if !r.ssl_request => r,
            _ => {
                send_error(&mut stream, &mut seq, &bad_handshake()).await;
                return Err(());
            }
        };
    } else {
        stream = Box::new(tcp);
    }
    let client_caps = response.capabilities & capabilities;
    let account = match authenticate(
        shared,
        &mut stream,
        &mut seq,
        &mut nonce,
        &response,
        host,
        tls,
    )
    .await
    {
        Ok(account) => account,
        Err(e) => {
            send_error(&mut stream, &mut seq, &e).await;
            return Err(());
        }
    };
    if !tls && engine.global_bool("require_secure_transport") {
        let e = Error::sql(
            3159,
            "HY000",
            "Connections using insecure transport are prohibited while --require_secure_transport=ON.",
        );
        send_error(&mut stream, &mut seq, &e).await;
        return Err(());
    }
    let mut session = engine.session_for_id(&account, host, id);
    if let Some(db) = &response.database
        && let Err(e) = session.use_database(db)
    {
        send_error(&mut stream, &mut seq, &e).await;
        drop_session(session);
        return Err(());
    }
    if client_caps & caps::INTERACTIVE != 0 {
        let t = engine.global_u64("interactive_timeout");
        let _ = session.execute(&format!("SET SESSION wait_timeout = {t}"));
    }
    let mut ok = Vec::new();
    results::ok(&mut ok, 0, 0, 0, status::AUTOCOMMIT, 0, "");
    seq = packet::stamp_sequence(&mut ok, seq);
    let _ = seq;
    if stream.write_all(&ok).await.is_err() || stream.flush().await.is_err() {
        drop_session(session);
        return Err(());
    }
    // `result_buffer_max_bytes` bounds what waits for the socket, in buffers of
    // RESULT_FLUSH_BYTES.
    let buffers = (session_u64(&session, "result_buffer_max_bytes", 0) as usize
        / RESULT_FLUSH_BYTES)
        .clamp(1, RESULT_BUFFERS_IN_FLIGHT_MAX);
    let (tx, rx) = tokio::sync::mpsc::channel(buffers);
    let output = Output::new(tx, client_caps & caps::DEPRECATE_EOF != 0);
    let stream_state = Arc::new(Mutex::new(Stream::new(output, shared.encoders.clone())));
    session.set_row_sink(Some(Box::new(ResultSender(stream_state.clone()))));
    session.set_found_rows(client_caps & caps::FOUND_ROWS != 0);
    session.set_defer_commit_acks(true);
    let conn = Conn {
        shared: shared.clone(),
        session,
        account,
        stream: stream_state,
        capabilities: client_caps,
        params: HashMap::new(),
    };
    Ok((stream, conn, rx))
}

/// Drops a session on a statement thread (a rollback may do I/O).
fn drop_session(session: Session) {
    tokio::task::spawn_blocking(move || drop(session));
}

/// Runs the authentication exchange for `response` and returns the account.
async fn authenticate<S: AsyncRead + AsyncWrite + Unpin>(
    shared: &Shared,
    stream: &mut S,
    seq: &mut u8,
    nonce: &mut [u8; 20],
    response: &HandshakeResponse,
    host: &str,
    tls: bool,
) -> Result<Account> {
    let user = &response.user;
    let denied = || access_denied(user, host, !response.auth_response.is_empty());
    let Some(account) = shared.engine.find_account(user, host) else {
        return Err(denied());
    };
    let limit = 64 * 1024;
    let mut answer = response.auth_response.clone();
    let client_plugin = response
        .auth_plugin
        .as_deref()
        .unwrap_or(auth::NATIVE_PASSWORD);
    let wanted = account.plugin.name();
    let io_error = |_| Error::sql(2013, "HY000", "Lost connection during authentication");
    if client_plugin != wanted {
        send_packet(stream, seq, &handshake::auth_switch(wanted, nonce))
            .await
            .map_err(io_error)?;
        read_payload(stream, seq, limit, &mut answer)
            .await
            .map_err(|_| denied())?;
    }
    let stored = account.stored_hash.as_deref();
    let ok = match (account.plugin, stored) {
        (_, None) => answer.is_empty() || answer == [0],
        (AuthPlugin::NativePassword, Some(h)) => auth::verify_native(nonce, h, &answer),
        (AuthPlugin::CachingSha2Password, Some(h)) => {
            let key = (account.user.clone(), account.host.clone());
            if tls && !shared.sha2_full_auth_done.lock().contains(&key) {
                // The full path: the password itself, safe only inside TLS.
                send_packet(stream, seq, &[1, auth::SHA2_PERFORM_FULL_AUTHENTICATION])
                    .await
                    .map_err(io_error)?;
                let mut password = Vec::new();
                read_payload(stream, seq, limit, &mut password)
                    .await
                    .map_err(|_| denied())?;
                let ok = auth::verify_sha2_cleartext(h, &password);
                if ok {
                    shared.sha2_full_auth_done.lock().insert(key);
                }
                ok
            } else {
                let ok = auth::verify_sha2_scramble(nonce, h, &answer);
                if ok {
                    send_packet(stream, seq, &[1, auth::SHA2_FAST_AUTH_SUCCESS])
                        .await
                        .map_err(io_error)?;
                }
                ok
            }
        }
    };
    // A fresh challenge for a later COM_CHANGE_USER.
    *nonce = auth::nonce();
    if ok { Ok(account) } else { Err(denied()) }
}

async fn command_loop(
    shared: &Arc<Shared>,
    stream: Boxed,
    mut conn: Conn,
    mut rx: Receiver<Vec<u8>>,
    host: &str,
    peer: SocketAddr,
) {
    let id = conn.session.connection_id();
    let (mut reader, mut writer) = split_stream(stream, Vec::new());
    let mut payload = Vec::new();
    let engine = shared.engine.clone();
    tracing::debug!("connection {id} from {peer} as {}", conn.account.user);
    let mut deferred: Option<(Vec<u8>, u8)> = None;
    // Whether the client ended with COM_QUIT (else: SHOW STATUS Aborted_clients).
    let mut quit = false;
    // When a connection the runners handed back last answered.
    let mut quiet_since: Option<Instant> = None;
    'commands: loop {
        // Idle: wait for the next command, checking for KILL, shutdown and
        // wait_timeout once a second.
        let idle_since = quiet_since.take().unwrap_or_else(Instant::now);
        while deferred.is_none() {
            match tokio::time::timeout(Duration::from_secs(1), reader.fill_buf()).await {
                Ok(Ok([])) | Ok(Err(_)) => break 'commands,
                Ok(Ok(_)) => break,
                Err(_) => {
                    if conn.session.is_killed() || shared.shutting_down.load(Ordering::Relaxed) {
                        break 'commands;
                    }
                    let wait_timeout_s = session_u64(&conn.session, "wait_timeout", 28_800).max(1);
                    if idle_since.elapsed() >= Duration::from_secs(wait_timeout_s) {
                        let mut seq = 0;
                        let e = Error::sql(
                            4031,
                            "HY000",
                            "The client was disconnected by the server because of inactivity. See wait_timeout and interactive_timeout for configuring this behavior.",
                        );
                        send_error(&mut writer, &mut seq, &e).await;
                        break 'commands;
                    }
                }
            }
        }
        let mut seq = 0u8;
        if let Some((p, next)) = deferred.take() {
            payload = p;
            seq = next;
        } else {
            let limit = packet_limit_bytes(&conn.session);
            let read = tokio::time::timeout(
                Duration::from_secs(shared.net_read_timeout_s()),
                read_payload(&mut reader, &mut seq, limit, &mut payload),
            )
            .await;
            match read {
                Ok(Ok(())) => {}
                Ok(Err(e)) => {
                    if let Some(err) = protocol_error(&e) {
                        send_error(&mut writer, &mut seq, &err).await;
                    }
                    break;
                }
                Err(_) => break,
            }
        }
        if payload.first() == Some(&command::QUIT) {
            quit = true;
            break;
        }
        if payload.first() == Some(&command::CHANGE_USER) {
            // Authentication needs the socket: done here, not on a statement thread.
            let mut both = tokio::io::join(&mut reader, &mut writer);
            match change_user(&mut conn, &mut both, &mut seq, &payload[1..], host).await {
                Flow::Continue => continue,
                Flow::Close => break,
            }
        }
        if let Some(file) = local_infile_request(&conn, &payload) {
            // LOAD DATA LOCAL: the file comes before the statement runs, read here,
            // where the socket is; the statement then answers as any other.
            let limit = packet_limit_bytes(&conn.session);
            let timeout = Duration::from_secs(shared.net_read_timeout_s());
            let mut both = tokio::io::join(&mut reader, &mut writer);
            match receive_local_file(&mut both, &mut seq, &file, limit, timeout).await {
                Some((data, complete)) => conn.session.set_local_infile(file, data, complete),
                None => break,
            }
        }
        if reader.buffer().is_empty() {
            // The common case: the runners take the connection and keep it while
            // the client keeps it busy (`crate::runners`). The socket leaves the
            // reactor meanwhile: else every command that arrives would wake a
            // network thread too.
            let stream = reader.into_inner().inner.unsplit(writer);
            let Ok((socket, tls)) = stream.into_parts() else {
                tracing::error!("connection {id}: could not take the socket from the reactor");
                engine.note_client_aborted();
                tokio::task::spawn_blocking(move || drop(conn));
                return;
            };
            let command_payload = std::mem::take(&mut payload);
            let (reply, returned) = tokio::sync::oneshot::channel();
            let Ok(output) = runner_socket(&socket) else {
                tracing::error!("connection {id}: could not set up the socket for the runners");
                engine.note_client_aborted();
                tokio::task::spawn_blocking(move || drop(conn));
                return;
            };
            let job = conn.into_job(socket, output, tls, command_payload, seq, reply);
            shared.runners.start(job);
            let Ok(Returned {
                conn: c,
                end,
                socket,
                tls,
                quiet_since: quiet,
            }) = returned.await
            else {
                tracing::error!("connection {id}: a runner failed");
                return;
            };
            conn = c;
            // Back to the reactor, with what the thread read past a command it
            // hands back (Deferred).
            let (end, ahead) = match end {
                HandBack::Deferred(p, next, ahead) => {
                    (HandBack::Deferred(p, next, Vec::new()), ahead)
                }
                other => (other, Vec::new()),
            };
            let tcp = match socket
                .set_nonblocking(true)
                .and_then(|()| TcpStream::from_std(socket))
            {
                Ok(tcp) => tcp,
                Err(e) => {
                    tracing::error!("connection {id}: could not give the socket back: {e}");
                    engine.note_client_aborted();
                    tokio::task::spawn_blocking(move || drop(conn));
                    return;
                }
            };
            let stream: Boxed = match tls {
                Some(session) => Box::new(AsyncTls::new(tcp, session)),
                None => Box::new(tcp),
            };
            (reader, writer) = split_stream(stream, ahead);
            match end {
                HandBack::Idle => {
                    quiet_since = Some(quiet);
                    continue;
                }
                HandBack::Close => break,
                HandBack::Quit => {
                    quit = true;
                    break;
                }
                HandBack::Deferred(p, next, _) => {
                    deferred = Some((p, next));
                    continue;
                }
            }
        }
        conn.stream.lock().output.seq = seq;
        let command_payload = std::mem::take(&mut payload);
        let mut job = tokio::task::spawn_blocking(move || {
            let (flow, tail) = conn.command(&command_payload);
            (conn, command_payload, flow, tail)
        });
        let mut watching = true;
        let mut write_failed = false;
        let mut client_gone = false;
        let (returned, flow, tail) = loop {
            tokio::select! {
                biased;
                Some(buf) = rx.recv() => {
                    if !write_failed && writer.write_all(&buf).await.is_err() {
                        write_failed = true;
                        let _ = engine.kill(id, false);
                    }
                }
                done = &mut job => match done {
                    Ok((c, p, flow, tail)) => {
                        payload = p;
                        break (c, flow, tail);
                    }
                    Err(e) => {
                        tracing::error!("connection {id}: a statement thread failed: {e}");
                        return;
                    }
                },
                r = reader.fill_buf(), if watching => {
                    watching = false;
                    if matches!(r, Ok([]) | Err(_)) {
                        // The client went away mid-command: stop the statement.
                        client_gone = true;
                        let _ = engine.kill(id, false);
                    }
                }
            }
        };
        conn = returned;
        while let Ok(buf) = rx.try_recv() {
            if !write_failed && writer.write_all(&buf).await.is_err() {
                write_failed = true;
            }
        }
        if !write_failed && !tail.is_empty() && writer.write_all(&tail).await.is_err() {
            write_failed = true;
        }
        // TLS keeps what the socket did not take in its own buffer until a flush:
        // without one, the end of a large answer to a slow reader would never go.
        if !write_failed && writer.flush().await.is_err() {
            write_failed = true;
        }
        if write_failed || client_gone || flow == Flow::Close || conn.session.is_killed() {
            break;
        }
    }
    if !quit {
        engine.note_client_aborted();
    }
    // Over TLS this sends what the session still holds, then close_notify: bounded,
    // since a client that stopped reading must not keep the session (and its locks).
    let write_timeout =
        Duration::from_secs(session_u64(&conn.session, "net_write_timeout", 60).max(1));
    let _ = tokio::time::timeout(write_timeout, writer.shutdown()).await;
    tokio::task::spawn_blocking(move || drop(conn));
}

/// The file to ask the client for, if `payload` is a COM_QUERY whose (first)
/// statement is LOAD DATA LOCAL and both sides allow it: the client set
/// CLIENT_LOCAL_FILES and the server's `local_infile` is on. Otherwise the statement
/// runs without a file and fails with 3948, as MySQL's does.
fn local_infile_request(conn: &Conn, payload: &[u8]) -> Option<String> {
    let (&command::QUERY, body) = payload.split_first()? else {
        return None;
    };
    if conn.capabilities & caps::LOCAL_FILES == 0 {
        return None;
    }
    let text = crate::text::query_text(body);
    if !crate::text::first_word_is(&text, "LOAD") || !conn.session.local_infile_enabled() {
        return None;
    }
    let first = tarn_sql::parse::parse_each_in(&text, conn.session.parse_mode())
        .into_iter()
        .next()?
        .ok()?;
    match first.statement {
        tarn_sql::parse::Statement::LoadData(load) if load.local => Some(load.file),
        _ => None,
    }
}

/// LOAD DATA LOCAL: asks the client for `file` (a 0xFB packet with its name) and
/// reads what it sends up to the empty packet that ends it. Returns the data and
/// whether it is whole: past `LOAD_DATA_LOCAL_BYTES_MAX` the rest is read and
/// dropped, since the protocol cannot stop the client. None: the connection broke
/// (or sent a malformed packet) and must close.
async fn receive_local_file<S: AsyncRead + AsyncWrite + Unpin>(
    s: &mut S,
    seq: &mut u8,
    file: &str,
    limit_bytes: usize,
    timeout: Duration,
) -> Option<(Vec<u8>, bool)> {
    let mut request = Vec::with_capacity(file.len() + 1);
    request.push(0xfb);
    request.extend_from_slice(file.as_bytes());
    send_packet(s, seq, &request).await.ok()?;
    let mut data = Vec::new();
    let mut complete = true;
    let mut packet = Vec::new();
    loop {
        let read = tokio::time::timeout(timeout, read_payload(s, seq, limit_bytes, &mut packet));
        if !matches!(read.await, Ok(Ok(()))) {
            return None;
        }
        if packet.is_empty() {
            return Some((data, complete));
        }
        if complete && data.len() + packet.len() <= tarn_sql::limits::LOAD_DATA_LOCAL_BYTES_MAX {
            data.extend_from_slice(&packet);
        } else {
            complete = false;
            data = Vec::new();
        }
    }
}

/// COM_CHANGE_USER: authenticates as another account and replaces the session
/// (rolling back the old one), keeping the connection id.
async fn change_user<S: AsyncRead + AsyncWrite + Unpin + Send>(
    conn: &mut Conn,
    stream: &mut S,
    seq: &mut u8,
    payload: &[u8],
    host: &str,
) -> Flow {
    let shared = conn.shared.clone();
    let response = match handshake::parse_change_user(payload, conn.capabilities) {
        Ok(r) => r,
        Err(m) => {
            send_error(stream, seq, &malformed(m)).await;
            return Flow::Close;
        }
    };
    // Always challenge afresh: the client's first answer was made with the
    // handshake's nonce, which has been used.
    let user = response.user.clone();
    let Some(account) = shared.engine.find_account(&user, host) else {
        send_error(stream, seq, &access_denied(&user, host, true)).await;
        return Flow::Close;
    };
    let mut nonce = auth::nonce();
    if send_packet(
        stream,
        seq,
        &handshake::auth_switch(account.plugin.name(), &nonce),
    )
    .await
    .is_err()
    {
        return Flow::Close;
    }
    let mut answer = Vec::new();
    if read_payload(stream, seq, 64 * 1024, &mut answer)
        .await
        .is_err()
    {
        return Flow::Close;
    }
    let switched = HandshakeResponse {
        user: user.clone(),
        auth_response: answer,
        auth_plugin: Some(account.plugin.name().to_string()),
        ..response.clone()
    };
    let authenticated =
        authenticate(&shared, stream, seq, &mut nonce, &switched, host, false).await;
    let account = match authenticated {
        Ok(a) => a,
        Err(e) => {
            send_error(stream, seq, &e).await;
            return Flow::Close;
        }
    };
    let id = conn.session.connection_id();
    let mut session = shared.engine.session_for_id(&account, host, id);
    if let Some(db) = &response.database
        && let Err(e) = session.use_database(db)
    {
        send_error(stream, seq, &e).await;
        return Flow::Close;
    }
    session.set_row_sink(Some(Box::new(ResultSender(conn.stream.clone()))));
    session.set_found_rows(conn.capabilities & caps::FOUND_ROWS != 0);
    session.set_defer_commit_acks(true);
    let old = std::mem::replace(&mut conn.session, session);
    drop_session(old);
    conn.account = account;
    conn.params.clear();
    let mut ok = Vec::new();
    results::ok(&mut ok, 0, 0, 0, status::AUTOCOMMIT, 0, "");
    *seq = packet::stamp_sequence(&mut ok, *seq);
    if stream.write_all(&ok).await.is_err() || stream.flush().await.is_err() {
        return Flow::Close;
    }
    Flow::Continue
}

impl Conn {
    fn status(&self) -> u16 {
        let mut flags = 0;
        if self.session.autocommit() {
            flags |= status::AUTOCOMMIT;
        }
        if self.session.in_transaction() {
            flags |= status::IN_TRANS;
        }
        flags
    }

    fn warnings(&self) -> u16 {
        self.session.warnings().len().min(u16::MAX as usize) as u16
    }

    fn send_threads(&self) -> usize {
        self.session.variables().hot().send_threads.unwrap_or(0) as usize
    }

    fn ok(&self) {
        let (status, warnings) = (self.status(), self.warnings());
        self.stream.lock().output.ok(0, 0, status, warnings, "");
    }

    fn err(&self, e: &Error) {
        let mut stream = self.stream.lock();
        stream.discard();
        stream.output.err(e);
    }

    /// Runs one command (on a statement thread). Returns the answer's last buffer,
    /// which the network task writes itself: a small answer never goes through the
    /// output channel (one thread hand-off fewer per statement).
    fn command(&mut self, payload: &[u8]) -> (Flow, Vec<u8>) {
        let mut flow = self.dispatch(payload);
        if let Some(ticket) = self.session.take_commit_ticket()
            && ticket.wait().is_err()
        {
            // The log failed: the commit's fate is unknown to the client.
            self.stream.lock().output.buf.clear();
            flow = Flow::Close;
        }
        let tail = std::mem::take(&mut self.stream.lock().output.buf);
        (flow, tail)
    }

    /// Makes the job that runs `payload` (read with sequence number `seq` next) and
    /// the client's later commands on the runners ([`crate::runners`]), answering
    /// straight into `socket` (through `tls`, the connection's TLS session, if it has
    /// one). A client that disconnects while a statement runs is noticed by the watch
    /// thread ([`crate::watch`]), which stops the statement, or at the statement's
    /// first write. `output` is the socket's own handle for writing
    /// ([`runner_socket`]).
    fn into_job(
        self,
        socket: std::net::TcpStream,
        output: std::net::TcpStream,
        tls: Option<ServerConnection>,
        payload: Vec<u8>,
        seq: u8,
        reply: tokio::sync::oneshot::Sender<Returned>,
    ) -> Job {
        let tls: Option<SharedTls> = tls.map(|session| Arc::new(Mutex::new(session)));
        self.stream.lock().output.direct = Some(match &tls {
            Some(session) => Direct::Tls(output, session.clone()),
            None => Direct::Tcp(output),
        });
        let watched = self
            .shared
            .watch
            .register(self.session.connection_id(), &socket);
        let input = std::io::BufReader::with_capacity(
            crate::limits::RUNNER_READ_BUFFER_BYTES,
            PatientSocket {
                socket,
                tls,
                patience: None,
            },
        );
        Job::new(self, input, watched, payload, seq, reply)
    }

    fn dispatch(&mut self, payload: &[u8]) -> Flow {
        let Some((&cmd, body)) = payload.split_first() else {
            self.err(&malformed(Malformed("an empty command packet")));
            return Flow::Close;
        };
        match cmd {
            command::QUERY => self.query(body),
            command::INIT_DB => {
                let db = String::from_utf8_lossy(body);
                match self.session.use_database(&db) {
                    Ok(()) => self.ok(),
                    Err(e) => self.err(&e),
                }
            }
            command::PING => self.ok(),
            // The deprecated COM_SHUTDOWN is the SHUTDOWN statement (same privilege).
            command::SHUTDOWN => self.query(b"SHUTDOWN"),
            command::STATISTICS => {
                let s = self.session.engine().server_status();
                let text = format!(
                    "Uptime: {}  Threads: {}  Questions: {}  Slow queries: 0  Opens: 0  Flush tables: 0  Open tables: 0  Queries per second avg: {:.3}",
                    s.uptime_s,
                    self.shared.connections.load(Ordering::Relaxed),
                    s.questions,
                    s.questions as f64 / s.uptime_s.max(1) as f64
                );
                self.stream
                    .lock()
                    .output
                    .packets(|b| packet::put(b, text.as_bytes()));
            }
            command::FIELD_LIST => self.field_list(body),
            command::REFRESH => self.refresh(body),
            command::PROCESS_KILL => match Reader::new(body).u32() {
                Ok(target) => match self.session.engine().kill(target as u64, true) {
                    Ok(()) => self.ok(),
                    Err(e) => self.err(&e),
                },
                Err(m) => self.err(&malformed(m)),
            },
            command::RESET_CONNECTION => {
                self.session.reset();
                self.params.clear();
                self.ok();
            }
            command::SET_OPTION => match Reader::new(body).u16() {
                Ok(0) => {
                    self.capabilities |= caps::MULTI_STATEMENTS;
                    let status = self.status();
                    self.stream
                        .lock()
                        .output
                        .packets(|b| results::eof(b, status, 0));
                }
                Ok(1) => {
                    self.capabilities &= !caps::MULTI_STATEMENTS;
                    let status = self.status();
                    self.stream
                        .lock()
                        .output
                        .packets(|b| results::eof(b, status, 0));
                }
                _ => self.err(&Error::sql(1047, "08S01", "Unknown command")),
            },
            command::STMT_PREPARE => self.prepare(body),
            command::STMT_EXECUTE => self.execute(body),
            command::STMT_SEND_LONG_DATA => self.long_data(body),
            command::STMT_CLOSE => {
                if let Ok(id) = Reader::new(body).u32() {
                    self.session.close_prepared(id);
                    self.params.remove(&id);
                }
            }
            command::STMT_RESET => match Reader::new(body).u32() {
                Ok(id) if self.session.prepared(id).is_some() => {
                    if let Some(state) = self.params.get_mut(&id) {
                        state.long_data.iter_mut().for_each(|d| *d = None);
                    }
                    self.ok();
                }
                Ok(id) => self.err(&unknown_statement(id, "mysqld_stmt_reset")),
                Err(m) => self.err(&malformed(m)),
            },
            _ => self.err(&Error::sql(1047, "08S01", "Unknown command")),
        }
        Flow::Continue
    }

    /// COM_REFRESH: the FLUSH statements its flag byte names
    /// ([`crate::protocol::REFRESH_FLAGS`]), in order; the first to fail is the
    /// answer.
    fn refresh(&mut self, body: &[u8]) {
        let flags = match Reader::new(body).u8() {
            Ok(flags) => flags,
            Err(m) => return self.err(&malformed(m)),
        };
        for (bit, statement) in crate::protocol::REFRESH_FLAGS {
            let Some(statement) = statement.filter(|_| flags & bit != 0) else {
                continue;
            };
            if let Err(e) = self.session.execute(statement) {
                return self.err(&e);
            }
        }
        self.ok();
    }

    /// Ends one statement's answer: rows' terminator, OK or ERR.
    fn finish_statement(
        &mut self,
        result: Result<QueryResult>,
        format: RowFormat,
        more: bool,
    ) -> bool {
        let warnings = self.warnings();
        let mut status = self.status();
        if more {
            status |= status::MORE_RESULTS_EXISTS;
        }
        let mut stream = self.stream.lock();
        let outcome = match result {
            Ok(QueryResult::Rows { columns, chunks }) => {
                // A collected result (SHOW, EXPLAIN, ...): sent through the same path.
                stream.start_statement(format, 1, status);
                stream
                    .begin_result(&columns)
                    .and_then(|()| chunks.into_iter().try_for_each(|c| stream.add_chunk(c)))
                    .map(|()| true)
            }
            Ok(QueryResult::Streamed { .. }) => stream.drain().map(|()| true),
            Ok(QueryResult::Ok {
                affected_rows,
                last_insert_id,
                info,
            }) => {
                stream
                    .output
                    .ok(affected_rows, last_insert_id, status, warnings, &info);
                Ok(false)
            }
            Err(e) => Err(e),
        };
        match outcome {
            Ok(true) => {
                stream.output.end_of_rows(status, warnings);
                true
            }
            Ok(false) => true,
            Err(e) => {
                stream.discard();
                stream.output.err(&e);
                false
            }
        }
    }

    fn query(&mut self, body: &[u8]) {
        let sql = crate::text::query_text(body);
        let mut batch = tarn_sql::parse::Batch::new(&sql);
        if batch.len() > 1 && self.capabilities & caps::MULTI_STATEMENTS == 0 {
            let near: String = batch.text(1).chars().take(80).collect();
            self.err(&Error::sql(
                1064,
                "42000",
                format!(
                    "You have an error in your SQL syntax; check the manual that corresponds to your MySQL server version for the right syntax to use near '{near}' at line 1"
                ),
            ));
            return;
        }
        let count = batch.len();
        let threads = self.send_threads();
        let mut i = 0;
        while let Some(parsed) = batch.next(self.session.parse_mode()) {
            i += 1;
            let status = self.status();
            self.stream
                .lock()
                .start_statement(RowFormat::Text, threads, status);
            let result = parsed.and_then(|p| self.session.execute_parsed(&p));
            if !self.finish_statement(result, RowFormat::Text, i < count) {
                return;
            }
        }
    }

    fn field_list(&mut self, body: &[u8]) {
        let mut r = Reader::new(body);
        let table = String::from_utf8_lossy(r.null_terminated()).into_owned();
        let sql = format!("SELECT * FROM `{}` LIMIT 0", table.replace('`', "``"));
        let columns = match self.session.prepare(&sql) {
            Ok(id) => {
                let columns = self
                    .session
                    .prepared(id)
                    .map(|p| p.columns.clone())
                    .unwrap_or_default();
                self.session.close_prepared(id);
                columns
            }
            Err(e) => return self.err(&e),
        };
        let status = self.status();
        let mut stream = self.stream.lock();
        stream.output.packets(|b| {
            for column in &columns {
                let start = b.len();
                results::column_definition(b, column);
                // COM_FIELD_LIST adds the default value (none: a NULL marker).
                b.push(0xfb);
                let len = b.len() - start - 4;
                b[start..start + 3].copy_from_slice(&(len as u32).to_le_bytes()[..3]);
            }
        });
        stream.output.end_of_rows(status, 0);
    }

    fn prepare(&mut self, body: &[u8]) {
        let sql = crate::text::query_text(body);
        let id = match self.session.prepare(&sql) {
            Ok(id) => id,
            Err(e) => return self.err(&e),
        };
        let Some(prepared) = self.session.prepared(id) else {
            return self.err(&unknown_statement(id, "mysqld_stmt_prepare"));
        };
        let param_count = prepared.parsed.param_count;
        let columns = prepared.columns.clone();
        self.params.insert(id, ParamState::new(param_count));
        let (status, warnings) = (self.status(), self.warnings());
        let mut stream = self.stream.lock();
        let deprecate_eof = stream.output.deprecate_eof;
        stream.output.packets(|b| {
            let start = packet::begin(b);
            b.push(0);
            b.extend_from_slice(&id.to_le_bytes());
            b.extend_from_slice(&(columns.len() as u16).to_le_bytes());
            b.extend_from_slice(&(param_count as u16).to_le_bytes());
            b.push(0);
            b.extend_from_slice(&warnings.to_le_bytes());
            packet::finish(b, start);
            for _ in 0..param_count {
                results::parameter_definition(b);
            }
            if param_count > 0 && !deprecate_eof {
                results::eof(b, status, 0);
            }
            for column in &columns {
                results::column_definition(b, column);
            }
            if !columns.is_empty() && !deprecate_eof {
                results::eof(b, status, 0);
            }
        });
    }

    fn execute(&mut self, body: &[u8]) {
        let mut r = Reader::new(body);
        let id = match r.u32() {
            Ok(id) => id,
            Err(m) => return self.err(&malformed(m)),
        };
        let Some(param_count) = self.session.prepared(id).map(|p| p.parsed.param_count) else {
            return self.err(&unknown_statement(id, "mysqld_stmt_execute"));
        };
        let state = self
            .params
            .entry(id)
            .or_insert_with(|| ParamState::new(param_count));
        let params = match decode_params(&mut r, param_count, state) {
            Ok(p) => p,
            Err(m) => {
                return self.err(&Error::sql(
                    1210,
                    "HY000",
                    format!("Incorrect arguments to mysqld_stmt_execute ({m})"),
                ));
            }
        };
        let threads = self.send_threads();
        let status = self.status();
        self.stream
            .lock()
            .start_statement(RowFormat::Binary, threads, status);
        let result = self.session.execute_prepared(id, &params);
        self.finish_statement(result, RowFormat::Binary, false);
    }

    fn long_data(&mut self, body: &[u8]) {
        let mut r = Reader::new(body);
        let (Ok(id), Ok(param)) = (r.u32(), r.u16()) else {
            return;
        };
        let data = r.rest();
        if let Some(state) = self.params.get_mut(&id)
            && let Some(slot) = state.long_data.get_mut(param as usize)
        {
            let buf = slot.get_or_insert_with(Vec::new);
            if buf.len() + data.len() <= LONG_DATA_BYTES_MAX {
                buf.extend_from_slice(data);
            }
        }
    }
}

fn unknown_statement(id: u32, what: &str) -> Error {
    Error::sql(
        1243,
        "HY000",
        format!("Unknown prepared statement handler ({id}) given to {what}"),
    )
}
