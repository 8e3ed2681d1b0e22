//! Every bound in Tarn, in one place.
//!
//! A queue, cache, buffer or count without a stated bound is a bug: it turns overload
//! into unbounded memory use or latency instead of a clear error or back-pressure.
//! Settings are validated against these bounds ([`crate::settings`]); structures assert
//! them. Later layers add their bounds here too.

// --- Pages and files -------------------------------------------------------------

/// Page sizes a data directory may be created with.
pub const PAGE_SIZES_BYTES: [u32; 5] = [4 << 10, 8 << 10, 16 << 10, 32 << 10, 64 << 10];
pub const PAGE_SIZE_DEFAULT_BYTES: u32 = 16 << 10;

/// Data files grow by whole extents of this size: one `fallocate` per megabyte keeps
/// file-system metadata updates off the page-write path and keeps files contiguous.
pub const EXTENT_SIZE_BYTES: u64 = 1 << 20;

/// The largest page number a file may hold (page numbers are `u32`).
pub const FILE_PAGES_MAX: u64 = u32::MAX as u64;

/// Files open at once in one data directory.
pub const OPEN_FILES_MAX: usize = 4096;

// --- I/O paths ------------------------------------------------------------------

/// io_uring submission queue entries per ring.
pub const IO_URING_QUEUE_DEPTH_MIN: u32 = 1;
pub const IO_URING_QUEUE_DEPTH_MAX: u32 = 4096;
pub const IO_URING_QUEUE_DEPTH_DEFAULT: u32 = 128;

/// Queue depth of the small per-thread ring used for synchronous page I/O on the
/// uring path.
pub const IO_URING_SYNC_QUEUE_DEPTH: u32 = 4;

/// Asynchronous rings (each with one completion thread) on the uring path.
pub const IO_URING_ASYNC_RINGS: usize = 1;

/// Threads that serve asynchronous requests on the buffered and direct paths.
pub const IO_THREADS_MIN: u32 = 1;
pub const IO_THREADS_MAX: u32 = 64;
pub const IO_THREADS_DEFAULT: u32 = 4;

/// Requests waiting for an I/O thread. A submitter blocks while the queue is full.
pub const IO_THREAD_QUEUE_CAPACITY: usize = 1024;

// --- Buffer pool ----------------------------------------------------------------

pub const BUFFER_POOL_INSTANCES_MIN: u32 = 1;
pub const BUFFER_POOL_INSTANCES_MAX: u32 = 64;
pub const BUFFER_POOL_INSTANCES_DEFAULT: u32 = 8;

/// Frames each instance must have: enough for a B+tree descent with latch coupling,
/// a split, and the flusher's batch, with room to spare.
pub const BUFFER_POOL_FRAMES_PER_INSTANCE_MIN: usize = 16;

/// Frames per instance fit in a `u32` frame index with room for a "none" marker.
pub const BUFFER_POOL_FRAMES_PER_INSTANCE_MAX: usize = (u32::MAX - 1) as usize;

pub const BUFFER_POOL_SIZE_DEFAULT_BYTES: u64 = 128 << 20;
pub const BUFFER_POOL_SIZE_MAX_BYTES: u64 = 1 << 40;

/// Share of the LRU list kept as the "old" sublist where new pages enter (InnoDB's
/// `innodb_old_blocks_pct`).
pub const LRU_OLD_PCT_MIN: u32 = 5;
pub const LRU_OLD_PCT_MAX: u32 = 95;
pub const LRU_OLD_PCT_DEFAULT: u32 = 37;

/// A page in the old sublist is promoted only when accessed again this long after it
/// was read (InnoDB's `innodb_old_blocks_time`).
pub const LRU_OLD_BLOCKS_TIME_MS_MAX: u32 = 60_000;
pub const LRU_OLD_BLOCKS_TIME_MS_DEFAULT: u32 = 1000;

/// Frames from the LRU tail that one eviction attempt inspects before giving up.
pub const LRU_SCAN_DEPTH_MAX: usize = 1024;

/// Dropping a file's pages from the pool waits for each page's pins and I/O to end,
/// polling every `DISCARD_WAIT_STEP_US` up to this many times (5 s) before failing.
pub const DISCARD_WAIT_ATTEMPTS_MAX: u32 = 100_000;
pub const DISCARD_WAIT_STEP_US: u64 = 50;

/// Pages one flusher round writes per instance (one batch of asynchronous writes).
pub const FLUSH_BATCH_PAGES_MAX: usize = 64;

/// Free frames the background flusher tries to keep in each instance, as a share of
/// the instance's frames.
pub const FREE_TARGET_PCT_DEFAULT: u32 = 5;
pub const FREE_TARGET_PCT_MAX: u32 = 50;

/// Prefetch reads in flight at once, across the pool.
pub const PREFETCH_IN_FLIGHT_MIN: u32 = 1;
pub const PREFETCH_IN_FLIGHT_MAX: u32 = 4096;
pub const PREFETCH_IN_FLIGHT_DEFAULT: u32 = 256;

/// Optimistic page reads retried this many times before falling back to a shared latch.
pub const OPTIMISTIC_READ_RETRIES_MAX: u32 = 8;

// --- Latch accounting -----------------------------------------------------------

/// Each latch counter is split into this many cache-line stripes, one per thread
/// (modulo), so that counting does not itself become a contended cache line.
pub const LATCH_COUNTER_STRIPES: usize = 32;

/// Latch statistics objects one registry holds (classes x instances).
pub const LATCH_REGISTRY_ENTRIES_MAX: usize = 8192;

// --- Benchmarks -------------------------------------------------------------------

/// Threads a benchmark may start.
pub const BENCH_THREADS_MAX: usize = 1024;

// --- Tables, scans and prefetch ----------------------------------------------------

/// Workers of one parallel scan (S1). The setting `scan_threads = 0` means one per core.
pub const SCAN_THREADS_MAX: u32 = 256;

/// Key ranges a parallel scan cuts per worker: workers take ranges in order, so
/// uneven ranges balance out and ordered delivery keeps several workers busy.
pub const SCAN_RANGES_PER_THREAD: usize = 4;

/// Key ranges an ordered parallel scan cuts per worker: small ranges, each of a few
/// batches, so that a worker scanning ahead of the range being delivered finishes
/// its range within its queue instead of waiting for the consumer.
pub const SCAN_ORDERED_RANGES_PER_THREAD: usize = 1024;

/// Ranges an ordered parallel scan's workers may start ahead of the range being
/// delivered, per worker: with `SCAN_QUEUED_BATCHES_PER_THREAD`, it bounds the batches
/// waiting for the consumer.
pub const SCAN_ORDERED_RANGES_AHEAD_PER_THREAD: usize = 4;

/// Rows in one columnar batch a scan worker fills before handing it on.
pub const SCAN_BATCH_ROWS: usize = 1024;

/// Finished batches that may wait for the consumer, per range in flight (ordered
/// delivery) or per worker (unordered): bounds a scan's memory when the consumer is slow.
pub const SCAN_QUEUED_BATCHES_PER_THREAD: usize = 4;

/// Leaves each scan worker keeps in flight ahead of itself (S1 read-ahead).
pub const SCAN_READAHEAD_PAGES_MAX: u32 = 1024;
pub const SCAN_READAHEAD_PAGES_DEFAULT: u32 = 64;

/// Secondary-index entries kept ahead of the consumer whose clustered-index leaves are
/// prefetched (S2's prefetch unit). Adaptive prefetch starts at the start value and
/// doubles up to the maximum.
pub const PREFETCH_UNIT_MAX: u32 = 1024;
pub const PREFETCH_UNIT_ADAPTIVE_START: u32 = 8;

/// How full bulk builds pack B+tree nodes, in percent.
pub const BULK_FILL_FACTOR_PCT_MIN: u32 = 50;
pub const BULK_FILL_FACTOR_PCT_MAX: u32 = 100;
pub const BULK_FILL_FACTOR_PCT_DEFAULT: u32 = 90;

/// Catalog objects: databases, tables per database, and indexes per table (MySQL
/// allows 64 secondary indexes).
pub const DATABASES_MAX: usize = 10_000;
pub const TABLES_PER_DATABASE_MAX: usize = 100_000;
pub const INDEXES_PER_TABLE_MAX: usize = 64;

/// Sorted rows a bulk index build keeps in memory before it fails (index builds on
/// larger tables need an external sort, not yet written).
pub const INDEX_BUILD_ROWS_MAX: usize = 200_000_000;

/// The SQL text of one column's DEFAULT expression, as the catalog stores it.
pub const COLUMN_DEFAULT_TEXT_BYTES_MAX: usize = 64 << 10;

/// CHECK constraints per table (MySQL sets no number of its own; every row a
/// statement writes evaluates each enforced one), and the SQL text of one
/// constraint's condition as the catalog stores it.
pub const CHECKS_PER_TABLE_MAX: usize = 256;
pub const CHECK_CLAUSE_TEXT_BYTES_MAX: usize = 64 << 10;

/// The SQL text of one generated column's expression as the catalog stores it (every
/// row a statement writes evaluates it).
pub const GENERATED_COLUMN_TEXT_BYTES_MAX: usize = 64 << 10;

/// The SELECT text of one view, as the catalog stores it.
pub const VIEW_DEFINITION_BYTES_MAX: usize = 1 << 20;

/// Rows a table rebuild (ALTER TABLE ... ADD/DROP COLUMN) sorts in memory when its
/// new primary key does not come out of the old table in order; the common case (the
/// same key) streams and keeps nothing.
pub const REBUILD_SORT_ROWS_MAX: usize = 20_000_000;

// --- Statistics (ANALYZE TABLE) ------------------------------------------------------

/// A table estimated at no more rows than this is analysed by a full scan of each of
/// its trees; a larger one from a sample of its key ranges.
pub const ANALYZE_FULL_SCAN_ROWS_MAX: u64 = 100_000;

/// Key ranges a sampling ANALYZE cuts each tree into (`Tree::partition`; on a tree
/// with fewer leaves than this, one range per leaf), and how many of them it reads.
pub const ANALYZE_PARTITION_RANGES: usize = 4096;
pub const ANALYZE_SAMPLE_RANGES: usize = 64;

/// Rows (or index entries) one sampling ANALYZE reads per tree at most: once it has
/// this many it stops reading further sampled ranges.
pub const ANALYZE_SAMPLE_ROWS_MAX: usize = 200_000;

/// Rows whose values column statistics are computed from: a uniform sample
/// (reservoir) of the rows ANALYZE reads. A table this small is described exactly.
pub const ANALYZE_COLUMN_SAMPLE_ROWS: usize = 30_000;

/// Buckets of a column's equi-height histogram.
pub const HISTOGRAM_BUCKETS_MAX: usize = 64;

/// Bytes of a value's key encoding a histogram bound keeps (longer bounds are cut: a
/// cut bound still orders correctly against every value that does not share the cut
/// prefix).
pub const HISTOGRAM_BOUND_BYTES_MAX: usize = 64;

// --- Redo log (WAL) ----------------------------------------------------------------

/// Size of each redo log file; the log is `log_files` files used as one ring.
pub const LOG_FILE_SIZE_MIN_BYTES: u64 = 1 << 20;
pub const LOG_FILE_SIZE_MAX_BYTES: u64 = 64 << 30;
pub const LOG_FILE_SIZE_DEFAULT_BYTES: u64 = 64 << 20;

/// Redo log files in the ring.
pub const LOG_FILES_MIN: u32 = 1;
pub const LOG_FILES_MAX: u32 = 64;
pub const LOG_FILES_DEFAULT: u32 = 2;

/// The in-memory log buffer that committers copy their records into. A writer that
/// finds it full waits for the log writer (back-pressure, never unbounded growth).
pub const LOG_BUFFER_SIZE_MIN_BYTES: u64 = 256 << 10;
pub const LOG_BUFFER_SIZE_MAX_BYTES: u64 = 1 << 30;
pub const LOG_BUFFER_SIZE_DEFAULT_BYTES: u64 = 16 << 20;

/// One redo record's largest payload (a page image at the largest page size plus its
/// header fits).
pub const LOG_RECORD_BYTES_MAX: usize = 128 << 10;

/// A fuzzy checkpoint starts when the log since the last checkpoint fills this share
/// of the ring, so recovery never replays more than about this much.
pub const LOG_CHECKPOINT_TRIGGER_PCT: u64 = 50;

/// A row change waits while the log since the last checkpoint fills more than this
/// share of the ring (the rest is kept for rollbacks, which the log must always have
/// room for), and fails after waiting this long.
pub const LOG_ADMIT_PCT: u64 = 75;
pub const LOG_ADMIT_WAIT_S: u64 = 30;

/// A row's long values (those stored in overflow chains) may take at most this share
/// of the ring: a longer one fails up front with 1118, as InnoDB refuses BLOB/TEXT data
/// over 10% of its redo log. A row's chain is written between two admission checks, so
/// admission (`LOG_ADMIT_PCT`) plus one row stays below a full ring.
pub const LOG_ROW_EXTERNAL_PCT_MAX: u64 = 10;

/// A transaction that holds the checkpoint back while the log is over
/// `LOG_ADMIT_PCT` logs its live undo records again and moves its first LSN up to
/// them, so the checkpoint can pass its older log (pages are flushed as usual). Its
/// undo may take at most this share of the ring; a statement that needs more fails
/// with 1197 (and is rolled back). The copy is written above `LOG_ADMIT_PCT` while
/// the transaction still holds the checkpoint, so it must fit well inside the rest
/// of the ring, and leave the statement's rollback room in it.
pub const LOG_UNDO_CARRY_PCT_MAX: u64 = 10;

/// A rollback never fails for want of log, but between two undone changes it waits
/// (at most `LOG_ADMIT_WAIT_S`) while the log fills more than this share of the ring,
/// so that it never fills the ring inside a page change.
pub const LOG_ROLLBACK_WAIT_PCT: u64 = 90;

/// With `flush_log_at_commit` 0 or 2 the log writer flushes at least this often.
pub const LOG_BACKGROUND_FLUSH_INTERVAL_MS: u64 = 1000;

// --- Transactions, undo and locks ---------------------------------------------------

/// Transactions open at once. Beginning one more fails with `OutOfResources`.
pub const TRX_ACTIVE_MAX: usize = 65_536;

/// Undo bytes one transaction may hold in memory; a statement that would exceed it
/// fails (and is rolled back) with `OutOfResources`.
pub const TRX_UNDO_BYTES_MAX: u64 = 256 << 20;

/// Committed transactions queued for purge above which every thread that commits
/// through `Storage::commit` (a thread per client) also purges, up to
/// `PURGE_HELP_ITEMS` of them, before it waits for the log: the backlog then stays
/// near this bound however few CPU turns the purge thread gets among many client
/// threads. (`Storage::commit_nowait`, for a few pooled workers, leaves purge to its
/// thread, which those few leave enough CPU.) It can grow past the bound only while
/// an open read view still needs the old versions (as InnoDB's history list does).
pub const PURGE_HELP_BACKLOG_TRX: usize = 1024;
pub const PURGE_HELP_ITEMS: usize = 4;

/// Savepoints one transaction may hold.
pub const SAVEPOINTS_PER_TRX_MAX: usize = 1024;

/// Shards of the lock table: unrelated records hash to different shards, each with
/// its own latch (`lock.shard`).
pub const LOCK_TABLE_SHARDS: usize = 64;

/// Lock requests (granted plus waiting) the lock table holds at once.
pub const LOCK_REQUESTS_MAX: usize = 4 << 20;

/// How often a lock wait that can be interrupted (KILL QUERY, a client that went
/// away) looks at its statement's kill flag: the longest a killed waiter sleeps on.
/// (A `max_execution_time` deadline needs no looking: the waiter sleeps until it.)
pub const LOCK_WAIT_INTERRUPT_CHECK_MS: u64 = 50;

/// How long a NOWAIT or SKIP LOCKED lock request that only brief holders (purge)
/// block keeps retrying before it fails or skips as its policy says. Purge holds a
/// row for one page operation; this bounds the wait should a holder be slow.
pub const LOCK_BRIEF_WAIT_MS: u64 = 1000;

/// The pause between two retries of such a request.
pub const LOCK_BRIEF_RETRY_US: u64 = 50;

/// `lock_wait_timeout`, in seconds (InnoDB's `innodb_lock_wait_timeout`).
pub const LOCK_WAIT_TIMEOUT_S_MIN: u32 = 1;
pub const LOCK_WAIT_TIMEOUT_S_MAX: u32 = 1_073_741_824;
pub const LOCK_WAIT_TIMEOUT_S_DEFAULT: u32 = 50;

/// Nodes the deadlock detector visits in one search before it gives up and treats
/// the request as a deadlock (InnoDB's `LOCK_MAX_DEPTH_IN_DEADLOCK_CHECK` idea).
pub const DEADLOCK_SEARCH_NODES_MAX: usize = 1_000_000;

/// Grant rounds in which CATS may pass over a waiting lock request in favour of a
/// younger one with a larger weight. A request passed over this many times is served
/// in arrival order from then on (its queue is scheduled FIFO until it is granted), so
/// no request starves under a steady stream of heavier newcomers.
pub const LOCK_CATS_OVERTAKES_MAX: u32 = 8;

// --- Doublewrite ---------------------------------------------------------------------

/// Pages in one doublewrite batch (the flusher's batch fits in one).
pub const DOUBLEWRITE_BATCH_PAGES: usize = 64;

/// Doublewrite batches in progress at once: the doublewrite file holds this many groups
/// of `DOUBLEWRITE_BATCH_PAGES` slots, so an eviction's single page need not wait for a
/// whole flusher batch (two writes and two syncs) to finish.
pub const DOUBLEWRITE_SLOT_GROUPS: usize = 2;

// --- SQL text ------------------------------------------------------------------------

/// The longest SQL text one query may have (MySQL's `max_allowed_packet` ceiling is
/// 1 GiB; Tarn keeps a query's text, its rewritten copy and its tokens in memory at
/// once, so it stops well below). A longer text fails with error 1153 before any of it
/// is scanned.
pub const SQL_TEXT_BYTES_MAX: usize = 64 << 20;

/// How deep one statement's syntax tree may grow through chains that sqlparser builds
/// without recursing (`a + b + c ..`, `x AND y AND ..`, `.. UNION ..`): the parser
/// counts operators along each chain, across parentheses, and rejects a statement over
/// this bound (error 1064), so that dropping the tree, and the binder walking it, stay
/// within a thread's stack. Nesting that sqlparser parses by recursion (parentheses,
/// subqueries, prefix operators) is bounded separately by its recursion limit (50).
pub const SQL_EXPRESSION_DEPTH_MAX: usize = 4096;

/// Tables one statement may join (MySQL's limit for one join, applied per statement):
/// sqlparser parses `t JOIN u JOIN v` by recursion that its own limit does not count.
pub const SQL_JOINS_MAX: usize = 61;

// --- SQL values -----------------------------------------------------------------------

/// The longest string a scalar function may build (REPEAT, LPAD, REPLACE, CONCAT, ...).
/// A longer result is NULL, as MySQL returns NULL (with a warning) past
/// `max_allowed_packet`, whose default this is.
pub const SQL_STRING_RESULT_BYTES_MAX: usize = 64 << 20;

/// GROUP_CONCAT's result is cut at this many bytes (MySQL's default
/// `group_concat_max_len`; a warning comes later).
pub const GROUP_CONCAT_MAX_LEN_BYTES: usize = 1024;

/// How long opening a data directory waits for its lock when the holder is this same
/// process (an engine still shutting down, e.g. a benchmark reopening between runs).
/// A lock held by another process is refused at once.
pub const DATADIR_SAME_PROCESS_WAIT_MS: u64 = 10_000;
