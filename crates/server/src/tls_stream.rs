//! TLS over a connection's socket once the handshake is done, in the two places a
//! connection lives: the network task ([`AsyncTls`], tokio's reactor) and the runners
//! (blocking reads and writes through [`SharedTls`], `crate::runners`).
//!
//! The handshake itself is tokio-rustls's; right after it the connection becomes an
//! [`AsyncTls`], which, unlike tokio-rustls's stream, gives its socket and rustls
//! session back ([`AsyncTls::into_parts`]) so that the runners can take a busy TLS
//! connection as they take a plain one, and rebuilds from them when the runners hand
//! it back.
//!
//! Invariants and why they hold:
//! - **No byte is lost across a move.** Everything a side has read from the socket
//!   but not yet handed up is inside the rustls session (whole records decrypted into
//!   its plaintext buffer, a partial record in its input buffer), and the session
//!   moves with the socket. The callers' own read buffers are empty at a hand-off
//!   (`connection::command_loop` checks) or travel with it (`HandBack::Deferred`).
//! - **A runner parks a TLS connection only when the session holds no plaintext**:
//!   [`read_blocking`] returns `WouldBlock` only after the session's plaintext
//!   buffer was empty and the socket had nothing more, so the socket's readiness
//!   (epoll) is the only thing left to wait for.
//! - **Everything written reaches the socket before a write returns** on the
//!   runners' side ([`write_blocking`]); on the network task's side a flush sends
//!   what the session still holds (`AsyncWrite::poll_flush`), as with tokio-rustls.

use std::io::{self, Read, Write};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};

use parking_lot::Mutex;
use rustls::ServerConnection;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// A TLS session shared by the reader and the writer of a connection the runners
/// hold. Both run on the runner that holds the connection, one after the other, so
/// the lock is never contended.
pub type SharedTls = Arc<Mutex<ServerConnection>>;

fn tls_failure(e: rustls::Error) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, e)
}

/// A TLS connection on tokio's reactor.
pub struct AsyncTls {
    io: tokio::net::TcpStream,
    tls: ServerConnection,
}

/// `std::io` over a socket on the reactor, never waiting (`WouldBlock` clears its
/// readiness, so the next poll waits for the socket).
struct Nonblocking<'a>(&'a tokio::net::TcpStream);

impl Read for Nonblocking<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.0.try_read(buf)
    }
}

impl Write for Nonblocking<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.try_write(buf)
    }

    /// rustls hands its queued records over as one vector: one `writev` for them all.
    fn write_vectored(&mut self, bufs: &[io::IoSlice<'_>]) -> io::Result<usize> {
        self.0.try_write_vectored(bufs)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl AsyncTls {
    /// A session whose handshake is done (or one handed back by the runners).
    pub fn new(io: tokio::net::TcpStream, tls: ServerConnection) -> AsyncTls {
        AsyncTls { io, tls }
    }

    /// The socket (taken out of the reactor, still non-blocking) and the session.
    pub fn into_parts(self) -> io::Result<(std::net::TcpStream, ServerConnection)> {
        Ok((self.io.into_std()?, self.tls))
    }

    /// Writes what the session holds for the socket; Pending while the socket is full.
    fn poll_send_records(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while self.tls.wants_write() {
            ready!(self.io.poll_write_ready(cx))?;
            match self.tls.write_tls(&mut Nonblocking(&self.io)) {
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) => return Poll::Ready(Err(e)),
            }
        }
        Poll::Ready(Ok(()))
    }
}

impl AsyncRead for AsyncTls {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if buf.remaining() == 0 {
            return Poll::Ready(Ok(()));
        }
        loop {
            match this.tls.reader().read(buf.initialize_unfilled()) {
                Ok(n) => {
                    buf.advance(n);
                    return Poll::Ready(Ok(()));
                }
                // A peer that closed without close_notify: the end, as for plain TCP.
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Poll::Ready(Ok(())),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) => return Poll::Ready(Err(e)),
            }
            ready!(this.io.poll_read_ready(cx))?;
            match this.tls.read_tls(&mut Nonblocking(&this.io)) {
                // End of the stream: the session's reader says how (close_notify or not).
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
                Err(e) => return Poll::Ready(Err(e)),
            }
            let processed = this.tls.process_new_packets();
            // An alert for a bad record, or an answer to what came (a key update):
            // sent now if the socket takes it, else with the next write.
            if let Poll::Ready(Err(e)) = this.poll_send_records(cx) {
                return Poll::Ready(Err(e));
            }
            if let Err(e) = processed {
                return Poll::Ready(Err(tls_failure(e)));
            }
        }
    }
}

impl AsyncWrite for AsyncTls {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let mut n = this.tls.writer().write(buf)?;
        if n == 0 && !buf.is_empty() {
            // The session's outgoing buffer is full: empty it into the socket first.
            ready!(this.poll_send_records(cx))?;
            n = this.tls.writer().write(buf)?;
        }
        if let Poll::Ready(Err(e)) = this.poll_send_records(cx) {
            return Poll::Ready(Err(e));
        }
        Poll::Ready(Ok(n))
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.get_mut().poll_send_records(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        this.tls.send_close_notify();
        ready!(this.poll_send_records(cx))?;
        Pin::new(&mut this.io).poll_shutdown(cx)
    }
}

/// A runner's blocking socket for writing: one whose write timeout is a tick
/// (`connection::runner_socket`). A client slow to read makes the runner say once
/// that it is about to block (`tarn_common::blocking`), then wait as long as it
/// takes; a client that went away fails the write, or the watch kills the statement.
pub struct PatientWriter<'a> {
    socket: &'a std::net::TcpStream,
    announced: bool,
}

impl<'a> PatientWriter<'a> {
    pub fn new(socket: &'a std::net::TcpStream) -> PatientWriter<'a> {
        PatientWriter {
            socket,
            announced: false,
        }
    }

    /// Runs `write` until it writes something or fails otherwise than by waiting a
    /// tick, announcing the wait once.
    fn patiently(&mut self, mut write: impl FnMut() -> io::Result<usize>) -> io::Result<usize> {
        loop {
            match write() {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                    ) =>
                {
                    if !self.announced {
                        self.announced = true;
                        tarn_common::blocking::about_to_block();
                    }
                }
                other => return other,
            }
        }
    }
}

impl Write for PatientWriter<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let socket = self.socket;
        self.patiently(|| (&mut &*socket).write(buf))
    }

    /// rustls hands its queued records over as one vector: one `writev` for them all.
    fn write_vectored(&mut self, bufs: &[io::IoSlice<'_>]) -> io::Result<usize> {
        let socket = self.socket;
        self.patiently(|| (&mut &*socket).write_vectored(bufs))
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Sends all of `buf` through `tls` on a runner's `socket`, waiting as
/// [`PatientWriter`] does.
pub fn write_blocking(socket: &std::net::TcpStream, tls: &SharedTls, buf: &[u8]) -> io::Result<()> {
    let mut tls = tls.lock();
    let mut out = PatientWriter::new(socket);
    let mut at = 0;
    while at < buf.len() || tls.wants_write() {
        // The session takes up to its buffer limit; the socket then takes records.
        at += tls.writer().write(&buf[at..])?;
        while tls.wants_write() {
            if tls.write_tls(&mut out)? == 0 {
                return Err(io::ErrorKind::WriteZero.into());
            }
        }
    }
    Ok(())
}

/// Reads plaintext through `tls` for a runner: what the session holds, else what
/// `read_raw` (the socket, waiting or not) brings. `WouldBlock` only when the session
/// holds nothing and the socket had nothing; `Ok(0)` at the end of the stream.
pub fn read_blocking(
    socket: &std::net::TcpStream,
    tls: &SharedTls,
    buf: &mut [u8],
    mut read_raw: impl FnMut(&mut [u8]) -> io::Result<usize>,
) -> io::Result<usize> {
    struct Raw<F>(F);
    impl<F: FnMut(&mut [u8]) -> io::Result<usize>> Read for Raw<F> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            (self.0)(buf)
        }
    }
    let mut tls = tls.lock();
    loop {
        match tls.reader().read(buf) {
            Ok(n) => return Ok(n),
            // A peer that closed without close_notify: the end, as for plain TCP.
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(0),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
            Err(e) => return Err(e),
        }
        tls.read_tls(&mut Raw(&mut read_raw))?;
        let processed = tls.process_new_packets();
        // An alert, or an answer to what came: best effort, a tick at most per
        // attempt (the socket's write timeout), since the client may be gone or not
        // reading; what stays queued goes with the next answer.
        while tls.wants_write() {
            if !matches!(tls.write_tls(&mut &*socket), Ok(n) if n > 0) {
                break;
            }
        }
        processed.map_err(tls_failure)?;
    }
}
