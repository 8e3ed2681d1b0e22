//! Sending results: one connection's output, and parallel row encoding (S1, §3).
//!
//! A statement runs on a statement thread and writes its answer into the
//! connection's [`Output`]: packets accumulate in one buffer that is handed to the
//! connection's network task when the statement ends, or earlier whenever it
//! passes [`RESULT_FLUSH_BYTES`]. The hand-off is a bounded channel, so a slow
//! client stops the statement (back-pressure) instead of growing memory.
//!
//! Result sets stream through [`ResultSender`], the session's `RowSink`:
//! - a result that runs as a parallel pipeline (a scan with filters, projections
//!   or hash-join probes) is encoded by the executor's workers themselves, each
//!   morsel into a buffer of its own, straight from the storage batch's typed
//!   vectors when the morsel needs no step but a choice of columns
//!   ([`WireEncoder`], `tarn_sql::parallel::stream_encoded`), or, for a text
//!   result of a scan that only chooses columns, by the scan's own workers from the
//!   stored rows (`results::TextRowSerializer`); the statement thread receives the
//!   buffers in order and only numbers and writes them;
//! - with parallel sending off (`send_threads` 1), such a scan's batches, decoded by
//!   the scan's workers, are encoded on the statement thread with the same
//!   typed encoder (`tarn_sql::parallel::stream_encoded` asks
//!   `RowEncoder::parallel`);
//! - otherwise the first chunk of a result is encoded on the statement thread (the
//!   direct path: a result of up to one chunk never leaves it);
//! - later chunks go to the [`EncodePool`], whose threads each encode one chunk into
//!   a buffer of their own, while the statement thread goes on producing rows;
//! - the statement thread takes finished buffers back in submission order, so rows
//!   stay in order, numbers their packets ([`packet::stamp_sequence`]) and hands
//!   them to the network task, which writes each with one `write` call.
//!
//! Invariants: at most `send_threads * ENCODE_JOBS_PER_THREAD` chunks are being
//! encoded for one result; the sequence number in [`Output`] is always the next
//! one the client expects.

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};

use parking_lot::Mutex;
use tarn_common::{Error, Result};
use tarn_sql::SqlType;
use tarn_sql::chunk::Chunk;
use tarn_sql::plan::OutputColumn;

use crate::limits::{ENCODE_JOBS_PER_THREAD, RESULT_FLUSH_BYTES};
use crate::protocol::{packet, put_lenenc_int, results};
use crate::tls_stream::{self, PatientWriter, SharedTls};

/// Error 1160/08S01: the client is gone or stopped reading.
fn network_error() -> Error {
    Error::sql(1160, "08S01", "Got an error writing communication packets")
}

/// A connection's outgoing packets, as one statement thread writes them.
pub struct Output {
    pub buf: Vec<u8>,
    /// The next sequence number.
    pub seq: u8,
    tx: tokio::sync::mpsc::Sender<Vec<u8>>,
    /// The socket itself, while the runners hold the connection (`crate::runners`):
    /// buffers are written here, blocking, not handed over.
    pub direct: Option<Direct>,
    /// The client asked for DEPRECATE_EOF (no EOF after column definitions; an
    /// 0xfe-headed OK ends a result set).
    pub deprecate_eof: bool,
}

/// Where a connection the runners hold writes: its socket, through its TLS session
/// if it has one (`crate::tls_stream`).
pub enum Direct {
    Tcp(std::net::TcpStream),
    Tls(std::net::TcpStream, SharedTls),
}

impl Direct {
    /// Writes all of `buf`, blocking. The socket's write timeout is a tick
    /// (`connection::runner_socket`): a client slow to read makes the runner say it
    /// is about to block (`tarn_common::blocking`) once, then wait as long as it
    /// takes ([`PatientWriter`]). A client that went away fails the write, or the
    /// watch kills the statement.
    fn write_all(&self, buf: &[u8]) -> Result<()> {
        let written = match self {
            Direct::Tcp(socket) => std::io::Write::write_all(&mut PatientWriter::new(socket), buf),
            Direct::Tls(socket, tls) => tls_stream::write_blocking(socket, tls, buf),
        };
        written.map_err(|_| network_error())
    }
}

impl Output {
    pub fn new(tx: tokio::sync::mpsc::Sender<Vec<u8>>, deprecate_eof: bool) -> Output {
        Output {
            buf: Vec::with_capacity(4096),
            seq: 0,
            tx,
            direct: None,
            deprecate_eof,
        }
    }

    /// Numbers the packets added since the last flush.
    fn stamp(&mut self, from: usize) {
        self.seq = packet::stamp_sequence(&mut self.buf[from..], self.seq);
    }

    /// Hands everything buffered to the network task (blocking while the channel
    /// is full). Called from statement threads only.
    pub fn flush(&mut self) -> Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let buf = std::mem::replace(&mut self.buf, Vec::with_capacity(4096));
        if let Some(direct) = &self.direct {
            return direct.write_all(&buf);
        }
        self.tx.blocking_send(buf).map_err(|_| network_error())
    }

    /// Appends packets built by `f`, numbered.
    pub fn packets(&mut self, f: impl FnOnce(&mut Vec<u8>)) {
        let from = self.buf.len();
        f(&mut self.buf);
        self.stamp(from);
    }

    /// Appends an already-encoded buffer of whole packets, numbered; flushes when
    /// the buffer is large.
    fn append_encoded(&mut self, mut encoded: Vec<u8>) -> Result<()> {
        self.seq = packet::stamp_sequence(&mut encoded, self.seq);
        if !self.buf.is_empty() && encoded.len() >= RESULT_FLUSH_BYTES / 4 {
            // A large buffer is written as it is rather than copied behind a small one.
            self.flush()?;
        }
        if self.buf.is_empty() {
            self.buf = encoded;
        } else {
            self.buf.extend_from_slice(&encoded);
        }
        if self.buf.len() >= RESULT_FLUSH_BYTES {
            self.flush()?;
        }
        Ok(())
    }

    pub fn ok(
        &mut self,
        affected_rows: u64,
        last_insert_id: u64,
        status: u16,
        warnings: u16,
        info: &str,
    ) {
        self.packets(|b| results::ok(b, 0, affected_rows, last_insert_id, status, warnings, info));
    }

    pub fn err(&mut self, error: &Error) {
        let (code, state) = (error.mysql_code(), error.sqlstate());
        let message = error.to_string();
        self.packets(|b| results::err(b, code, state, &message));
    }

    /// Ends a result set's rows.
    pub fn end_of_rows(&mut self, status: u16, warnings: u16) {
        if self.deprecate_eof {
            self.packets(|b| results::ok(b, 0xfe, 0, 0, status, warnings, ""));
        } else {
            self.packets(|b| results::eof(b, status, warnings));
        }
    }

    /// A result set's header: the column count and definitions (and an EOF
    /// unless the client deprecated it).
    pub fn result_header(&mut self, columns: &[OutputColumn], status: u16) {
        let deprecate_eof = self.deprecate_eof;
        self.packets(|b| {
            let start = packet::begin(b);
            put_lenenc_int(b, columns.len() as u64);
            packet::finish(b, start);
            for column in columns {
                results::column_definition(b, column);
            }
            if !deprecate_eof {
                results::eof(b, status, 0);
            }
        });
    }
}

/// Encodes rows for the executor's workers (`tarn_sql::RowEncoder`), or for the
/// statement thread when parallel sending is off.
struct WireEncoder {
    format: RowFormat,
    types: Arc<[SqlType]>,
    /// `send_threads` is not 1.
    parallel: bool,
}

impl tarn_sql::RowEncoder for WireEncoder {
    fn parallel(&self) -> bool {
        self.parallel
    }

    fn encode_batch(&self, batch: &tarn_row::Batch, columns: &[usize], out: &mut Vec<u8>) {
        match self.format {
            RowFormat::Text => results::text_rows_batch(out, batch, columns, &self.types),
            RowFormat::Binary => results::binary_rows_batch(out, batch, columns, &self.types),
        }
    }

    fn encode_chunk(&self, chunk: &Chunk, out: &mut Vec<u8>) {
        encode(self.format, chunk, &self.types, out);
    }

    /// Text rows are serialized by the scan's workers; binary rows come in batches.
    fn row_serializer(
        &self,
        columns: &[usize],
        column_types: &[tarn_row::ColumnType],
    ) -> Option<Arc<dyn tarn_row::RowSerializer>> {
        (self.format == RowFormat::Text).then(|| {
            Arc::new(results::TextRowSerializer::new(
                columns,
                column_types,
                &self.types,
            )) as Arc<dyn tarn_row::RowSerializer>
        })
    }
}

/// Row encoding: text (COM_QUERY) or binary (COM_STMT_EXECUTE).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RowFormat {
    Text,
    Binary,
}

fn encode(format: RowFormat, chunk: &Chunk, types: &[SqlType], out: &mut Vec<u8>) {
    match format {
        RowFormat::Text => results::text_rows(out, chunk.columns(), types, 0..chunk.len()),
        RowFormat::Binary => results::binary_rows(out, chunk.columns(), types, 0..chunk.len()),
    }
}

type Job = Box<dyn FnOnce() + Send>;

/// The threads that encode rows for every connection: a fixed number, one per
/// core, with a bounded queue. Separate from the executor's pool on purpose: the
/// executor's workers may be blocked handing chunks to a statement thread that is
/// itself waiting for an encoded buffer.
pub struct EncodePool {
    jobs: SyncSender<Job>,
    threads: usize,
}

impl EncodePool {
    pub fn new(threads: usize) -> Arc<EncodePool> {
        let threads = threads.max(1);
        let (jobs, rx) = sync_channel::<Job>(threads * ENCODE_JOBS_PER_THREAD * 8);
        let rx = Arc::new(Mutex::new(rx));
        for i in 0..threads {
            let rx = rx.clone();
            std::thread::Builder::new()
                .name(format!("tarn-encode-{i}"))
                .spawn(move || {
                    loop {
                        let job = rx.lock().recv();
                        match job {
                            Ok(job) => job(),
                            Err(_) => return,
                        }
                    }
                })
                .expect("spawning an encoder thread");
        }
        Arc::new(EncodePool { jobs, threads })
    }

    pub fn threads(&self) -> usize {
        self.threads
    }

    /// Encodes `chunk` on a pool thread; the receiver gets the packets.
    fn submit(
        &self,
        format: RowFormat,
        chunk: Chunk,
        types: Arc<[SqlType]>,
    ) -> Result<Receiver<Vec<u8>>> {
        let (tx, rx) = sync_channel(1);
        let job: Job = Box::new(move || {
            let mut out = Vec::with_capacity(chunk.len() * 64);
            encode(format, &chunk, &types, &mut out);
            let _ = tx.send(out);
        });
        self.jobs
            .send(job)
            .map_err(|_| Error::sql(1105, "HY000", "the encoder pool has stopped"))?;
        Ok(rx)
    }
}

/// The state of one streaming result, shared between the session's row sink and
/// the connection code that ends the result.
pub struct Stream {
    pub output: Output,
    format: RowFormat,
    pool: Arc<EncodePool>,
    /// Encoding threads for this result (1: all on the statement thread).
    threads: usize,
    types: Arc<[SqlType]>,
    /// Chunks seen so far in this result.
    chunks: u64,
    /// Buffers being encoded, oldest first.
    pending: VecDeque<Receiver<Vec<u8>>>,
    /// Status flags for the column-definition EOF (set by the connection).
    pub status: u16,
}

impl Stream {
    pub fn new(output: Output, pool: Arc<EncodePool>) -> Stream {
        Stream {
            output,
            format: RowFormat::Text,
            pool,
            threads: 1,
            types: Arc::from(Vec::new()),
            chunks: 0,
            pending: VecDeque::new(),
            status: 0,
        }
    }

    /// Prepares for a statement's result in `format`, encoded by `threads` threads
    /// (0: the pool's size).
    pub fn start_statement(&mut self, format: RowFormat, threads: usize, status: u16) {
        self.format = format;
        self.threads = match threads {
            0 => self.pool.threads(),
            n => n.min(self.pool.threads()),
        };
        self.chunks = 0;
        self.status = status;
    }

    /// Sends a result's header and remembers its column types.
    pub fn begin_result(&mut self, columns: &[OutputColumn]) -> Result<()> {
        self.types = columns.iter().map(|c| c.ty).collect();
        self.output.result_header(columns, self.status);
        Ok(())
    }

    /// Encodes a chunk of rows, here or on the pool.
    pub fn add_chunk(&mut self, chunk: Chunk) -> Result<()> {
        self.chunks += 1;
        if self.threads <= 1 || self.chunks == 1 {
            // The direct path.
            let from = self.output.buf.len();
            encode(self.format, &chunk, &self.types, &mut self.output.buf);
            self.output.stamp(from);
            if self.output.buf.len() >= RESULT_FLUSH_BYTES {
                self.output.flush()?;
            }
            return Ok(());
        }
        let rx = self.pool.submit(self.format, chunk, self.types.clone())?;
        self.pending.push_back(rx);
        while self.pending.len() >= self.threads * ENCODE_JOBS_PER_THREAD {
            self.take_oldest()?;
        }
        Ok(())
    }

    fn take_oldest(&mut self) -> Result<()> {
        let Some(rx) = self.pending.pop_front() else {
            return Ok(());
        };
        let encoded = rx
            .recv()
            .map_err(|_| Error::sql(1105, "HY000", "an encoder thread failed"))?;
        self.output.append_encoded(encoded)
    }

    /// Waits for every buffer still being encoded and appends them in order.
    pub fn drain(&mut self) -> Result<()> {
        while !self.pending.is_empty() {
            self.take_oldest()?;
        }
        Ok(())
    }

    /// Drops what is still being encoded (the statement failed).
    pub fn discard(&mut self) {
        self.pending.clear();
    }
}

/// The session's row sink: a handle on the connection's [`Stream`].
pub struct ResultSender(pub Arc<Mutex<Stream>>);

impl tarn_sql::RowSink for ResultSender {
    fn begin(&mut self, columns: &[OutputColumn]) -> Result<()> {
        self.0.lock().begin_result(columns)
    }

    fn chunk(&mut self, chunk: Chunk) -> Result<()> {
        self.0.lock().add_chunk(chunk)
    }

    /// With parallel sending on (`send_threads` other than 1) the executor's
    /// workers encode; with it off, a plain scan's batches are encoded on the
    /// statement thread, as MySQL's one sending thread would.
    fn encoder(&self) -> Option<Arc<dyn tarn_sql::RowEncoder>> {
        let stream = self.0.lock();
        Some(Arc::new(WireEncoder {
            format: stream.format,
            types: stream.types.clone(),
            parallel: stream.threads > 1,
        }))
    }

    fn encoded(&mut self, rows: tarn_sql::EncodedRows) -> Result<()> {
        let mut stream = self.0.lock();
        stream.chunks += 1;
        stream.output.append_encoded(rows.bytes)
    }
}
