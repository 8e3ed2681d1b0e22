//! Every bound the server keeps, in one place. The SQL layer's are in
//! `tarn_sql::limits`, the engine's in `tarn_common::limits`.

/// The most connections `max_connections` may allow (MySQL's own ceiling).
pub const CONNECTIONS_MAX: u64 = 100_000;

/// Threads that run statements at once (runners and the statement threads of TLS
/// connections). A statement holds one while it runs, including while it waits for
/// a row lock, so this bounds how many statements can wait at once; idle
/// connections hold none.
pub const STATEMENT_THREADS_MAX: usize = 4096;

/// A connection's output buffer is handed to the network once it holds this many
/// bytes (and at the end of every statement).
pub const RESULT_FLUSH_BYTES: usize = 256 * 1024;

/// The most buffers of about `RESULT_FLUSH_BYTES` each that may wait for the
/// network per connection (`result_buffer_max_bytes` / `RESULT_FLUSH_BYTES`, at
/// least 1): with the chunks being encoded, the per-connection result buffer bound.
/// A client that stops reading stops its statement here.
pub const RESULT_BUFFERS_IN_FLIGHT_MAX: usize = 256;

/// Chunks (of up to `tarn_sql::limits::CHUNK_ROWS` rows) one result may have being
/// encoded per encoding thread.
pub const ENCODE_JOBS_PER_THREAD: usize = 2;

/// Dates each encoding thread keeps formatted, by day number (direct-mapped; a power
/// of two): a table's dates span a few thousand days and repeat, 14 bytes a slot.
pub const DATE_TEXT_CACHE_SLOTS: usize = 4096;

/// Bytes of COM_STMT_SEND_LONG_DATA one statement parameter may collect.
pub const LONG_DATA_BYTES_MAX: usize = 1 << 30;

/// How long the runners keep a quiet plain-TCP connection parked after answering
/// it, waiting for its next command, before handing it back to the network threads
/// (`crate::runners`), which watch `wait_timeout`, KILL and shutdown once a second.
/// A busy connection so needs no hand-off per statement; a parked one holds no
/// thread, only its place in the runners' epoll set.
///
/// Runner threads come from tokio's blocking pool (at most `STATEMENT_THREADS_MAX`);
/// at most one per core waits for ready connections, and parked connections are
/// bounded by the open connections.
pub const RUNNER_PARK_MAX_MS: u64 = 1000;

/// The read and write timeouts of a socket the runners hold, set once: a runner
/// reading a packet that arrives in pieces waits this long at a time, up to
/// `net_read_timeout` in all, and one kept waiting by its client (reading or
/// writing) notices after one of these and lets another runner take over.
pub const SOCKET_WAIT_TICK_MS: u64 = 20;

/// The read buffer of a connection the runners hold: a command (and any the client
/// sent after it) arrives with one system call. Larger packets are read past it.
pub const RUNNER_READ_BUFFER_BYTES: usize = 16 * 1024;

/// How often the watch thread looks for clients that disconnected while their
/// statement runs on a kept connection (`crate::watch`): such a statement is stopped
/// within about two of these.
pub const WATCH_INTERVAL_MS: u64 = 100;
