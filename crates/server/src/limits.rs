//! Every bound the server keeps, in one place. The SQL layer's are in
//! `tarn_sql::limits`, the engine's in `tarn_common::limits`.

/// The most connections `max_connections` may allow (MySQL's own ceiling).
pub const CONNECTIONS_MAX: u64 = 100_000;

/// Threads that run statements at once. A statement holds one while it runs,
/// including while it waits for a row lock, so this bounds how many statements can
/// wait at once; idle connections hold none.
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

/// How long a statement thread keeps a plain-TCP connection after answering, waiting
/// for its next command, before handing it back to the network threads. A busy
/// connection so keeps one thread and needs no hand-off per statement (like
/// MySQL's thread per connection); an idle one holds no thread after this.
pub const STATEMENT_THREAD_LINGER_MS: u64 = 20;

/// The read buffer of a statement thread that keeps a connection: a command (and
/// any the client sent after it) arrives with one system call. Larger packets are
/// read past it.
pub const STICKY_READ_BUFFER_BYTES: usize = 16 * 1024;

/// How often the watch thread looks for clients that disconnected while their
/// statement runs on a kept connection (`crate::watch`): such a statement is stopped
/// within about two of these.
pub const WATCH_INTERVAL_MS: u64 = 100;
