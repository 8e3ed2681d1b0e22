//! The redo log (write-ahead log): a concurrent log buffer, group commit, four log
//! devices (technique S3), checkpoints, and the recovery reader.
//!
//! # Assumptions about the storage
//!
//! - A successful `fdatasync` (or an `O_DSYNC` write, or a stored and written-back
//!   cache line on persistent memory) makes the bytes before it durable.
//! - A write interrupted by a crash may leave any subset of its bytes on the device
//!   (torn at any granularity); bytes that were not being written keep their value.
//! - A failed `fdatasync` may have dropped dirty pages: it is never retried, and the
//!   log stops for good ([`tarn_common::Error::WritesStopped`]).
//!
//! # LSNs and records
//!
//! An LSN is a byte position in the logical log stream, starting at
//! [`format::BASE_LSN`]. A record occupies `[start, end)`, 8-byte aligned, and
//! [`Wal::append`] returns its END LSN: pages are stamped with end LSNs, and recovery
//! applies a record to a page iff `page_lsn < end`. The byte layout is in [`format`].
//!
//! # The path of a commit
//!
//! 1. [`Wal::append`] reserves `[start, end)` with one `fetch_add` on the reserved LSN
//!    (`buffer::LogBuffer::reserve`), waits only if the log buffer, the link window or
//!    the ring is full (back-pressure, `Shared::wait_for_space`), copies the record into
//!    the ring buffer (pmem: into the mapped file, flushing its cache lines) with no lock
//!    held, and publishes it in the link buffer (`LogBuffer::publish`).
//! 2. [`Wal::commit_wait`] raises the flush request and wakes the log writer if it
//!    sleeps, then sleeps on the waiter shard of its LSN (`wait::Waiters`).
//!    [`Wal::commit_ready`] is the same without the sleep: a thread serving many
//!    sessions (the server's worker pool) parks the session instead of itself and
//!    blocks only when no session is ready.
//! 3. The log writer thread (`writer_main` → `write_step`) advances the copied frontier
//!    along the links (`LogBuffer::advance_copied`), lowers it so it cuts no open or
//!    recent multi-record group (`groups::Groups::limit`), writes the prefix to the files
//!    in chunks (`write_chunk`: stamps the chunk's first record with the chunk end,
//!    then `pwrite`), `fdatasync`s once for every waiter at once, publishes the new
//!    durable LSN and wakes two of the committers it released; each woken committer
//!    wakes two more (`wait::ParkWaiters`), so the writer returns to syncing at once.
//!
//! On `pmem` and `none` there is no writer hop: the committer moves the durable LSN
//! itself (`Shared::try_advance_inline`); on pmem that is a 12-byte chunk stamp plus a
//! cache-line write-back, no system call. A committer that finds another stamping, or
//! an earlier append still copying, or a group still open, sleeps; whichever thread
//! finishes the blocking step moves the frontier for it, with a 10 ms recheck as the
//! only fallback (`INLINE_RECHECK`).
//!
//! | device | written by | durable when | `durable_lsn` |
//! |---|---|---|---|
//! | `fsync` | writer `pwrite` | writer `fdatasync` | after the sync |
//! | `dsync` | writer `pwrite` on `O_DSYNC` (+`O_DIRECT`, 4 KiB aligned) | the write returns | after the write |
//! | `pmem` | appenders, into the mapping | copied, flushed and stamped | the stamp |
//! | `none` | writer, lazily | never | the copied frontier (UNSAFE) |
//!
//! # Invariants
//!
//! 1. `checkpoint <= durable <= written <= copied <= reserved` (file devices; see
//!    [`Wal::check_invariants`]). All five only grow.
//! 2. The log never overwrites unreclaimed log: a record is copied only once
//!    `end <= checkpoint + capacity`, so the ring bytes it lands on hold log below the
//!    checkpoint.
//! 3. Every durability point (chunk end) is a record boundary that cuts no group:
//!    a crash keeps a prefix of whole chunks, hence every group entirely or not at all.
//!    A chunk torn by a crash is invisible to the reader, which checks a whole chunk
//!    before returning its first record (see [`reader`]).
//! 4. A chunk's records all carry the generation of the opening that wrote them; each
//!    [`Wal::open`] makes a new generation durable before its first append, so stale
//!    records beyond the torn end can never complete a newer chunk. A checkpoint
//!    records the durable LSN it was written at (its complete LSN), past which the
//!    reader takes no record outside a stamped chunk, so stale records beyond the
//!    torn end are not read either when a later checkpoint lands right on one.
//! 5. After a write or sync error, nothing more is written or synced, and every wait
//!    returns `WritesStopped` forever.
//!
//! # Groups (multi-record mini-transactions)
//!
//! A B+tree split logs several records and releases page latches before the last one.
//! [`Wal::begin_multi`] returns a guard; between it and the guard's drop, durability may
//! not stop inside the group's LSN range, so commits of other threads that land after
//! the group's start wait for the group to close. Overlapping groups chain: a closed
//! group that overlaps an open one holds durability at its own start too, so an open
//! group can hold back LSNs below its start. Code that may run inside a group (buffer
//! pool eviction) uses [`Wal::flush_to_nowait`], which refuses rather than wait on such
//! a chain.
//!
//! # Existing logs and settings
//!
//! `log_file_size` and `log_files` apply only when a log is created. Opening an
//! existing log with other values keeps the log's own geometry and says so in a
//! `tracing::info` line (resizing needs a clean shutdown and a new log, not done here).
//! `log_buffer_size`, `log_device` and `flush_log_at_commit` may change between runs.

mod buffer;
mod files;
pub mod format;
mod groups;
pub mod reader;
mod wait;
mod wal;

pub use reader::{LogReader, LogRecord};
pub use wal::{MultiGuard, ProgressHook, Wal, WalStats};
