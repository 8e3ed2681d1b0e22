//! Every bound of the SQL layer, in one place (the engine's own are in
//! `tarn_common::limits`).

/// Rows per chunk passed between operators.
pub const CHUNK_ROWS: usize = 1024;

/// Memory a query's operators may hold (hash tables, sorts, materialised results)
/// before it fails with error 1038 (ER_OUT_OF_SORTMEMORY); a spill to disk is later
/// work. The `query_memory_max_bytes` session variable may lower or raise it, up to
/// [`QUERY_MEMORY_MAX_BYTES_CEILING`].
pub const QUERY_MEMORY_DEFAULT_BYTES: u64 = 1 << 30;
pub const QUERY_MEMORY_MAX_BYTES_CEILING: u64 = 64 << 30;

/// `max_prepared_stmt_count`: the prepared statements (COM_STMT_PREPARE and SQL
/// PREPARE) all sessions together may hold, MySQL's default and the most it may be
/// set to (MySQL's too). Each holds its parsed and bound form.
pub const PREPARED_STMT_COUNT_DEFAULT: u64 = 16_382;
pub const PREPARED_STMT_COUNT_MAX: u64 = 4_194_304;

/// Temporary tables one session may hold at once (MySQL has no such bound). Each is
/// a catalog entry with its data files (an extent each, a megabyte) until it is
/// dropped or the session ends.
pub const TEMPORARY_TABLES_PER_SESSION_MAX: usize = 256;

/// Warnings kept per statement (MySQL's max_error_count default).
pub const WARNINGS_MAX: usize = 1024;

/// Subquery nesting and view expansion depth.
pub const NESTING_DEPTH_MAX: usize = 32;

/// Arguments of one `GROUPING()` call (MySQL's limit: its result is a bitmask of one
/// bit per argument in a 64-bit integer); more is error 3601.
pub const GROUPING_ARGS_MAX: usize = 64;

/// `cte_max_recursion_depth`'s default (MySQL's): the runs of a recursive CTE's
/// recursive part one statement may make before error 3636. The variable may raise
/// it to 2^32 - 1; [`RECURSIVE_CTE_HELD_ROWS_MAX`] and the memory bound still apply.
pub const CTE_MAX_RECURSION_DEPTH_DEFAULT: u64 = 1000;

/// Rows a recursive CTE's operator may hold at once: the previous run's rows (the
/// work table the recursive part reads), the rows the running one has produced, and
/// with UNION DISTINCT the key of every row produced so far. Past it the statement
/// fails with 1041: a recursion that goes wide rather than deep, which
/// `cte_max_recursion_depth` does not catch, stops here even when its rows are small
/// enough for `query_memory_max_bytes` (which the held rows are charged to too).
pub const RECURSIVE_CTE_HELD_ROWS_MAX: usize = 1 << 24;

/// Distinct windows one SELECT may compute (MySQL's bound): each is a node that
/// holds and sorts every row of the block again.
pub const WINDOWS_PER_SELECT_MAX: usize = 127;

/// Results memoised per correlated subquery (by the values of its outer references).
pub const CORRELATED_CACHE_ENTRIES_MAX: usize = 65_536;

/// Rows an INSERT ... VALUES may carry in one statement.
pub const INSERT_ROWS_MAX: usize = 1 << 20;

/// User variables per session, and the bytes of one.
pub const USER_VARIABLES_MAX: usize = 4096;

/// The most bytes of one LOAD DATA LOCAL file the server takes: the file is held in
/// memory while its rows are inserted. A larger file is read to its end (the
/// protocol has no way to stop the client) and the statement fails, changing nothing.
pub const LOAD_DATA_LOCAL_BYTES_MAX: usize = 256 << 20;

/// Jobs waiting for the executor's worker pool; past it a job runs on the thread
/// that submits it.
pub const EXEC_QUEUED_JOBS_MAX: usize = 4096;

/// Tables the planner expects to be smaller than this are scanned on the session's
/// thread: a parallel pipeline's set-up would cost more than it saves.
pub const PARALLEL_MIN_ROWS: u64 = 16_384;

/// Hash-join build sides of at least this many rows are keyed and indexed by the
/// executor's workers.
pub const PARALLEL_BUILD_ROWS_MIN: usize = 16_384;

/// Sorts of at least this many rows are split into runs sorted by the executor's
/// workers and merged.
pub const PARALLEL_SORT_ROWS_MIN: usize = 32_768;

/// Chunks each worker of a parallel pipeline may have in flight to the consumer.
pub const PARALLEL_QUEUED_CHUNKS_PER_WORKER: usize = 4;

/// Tables of fewer rows are not analyzed automatically (the planner's defaults serve
/// them); larger ones are when their statistics are missing or stale.
pub const AUTO_ANALYZE_ROWS_MIN: u64 = 1000;

/// Rows a point or small range access reads before the planner would rather scan.
pub const SMALL_RANGE_ROWS: u64 = 4096;

/// `send_threads`: threads encoding one large result set in parallel (0 means one per
/// core).
pub const SEND_THREADS_MAX: u64 = 256;

/// `result_buffer_max_bytes`: the bound on one connection's encoded but unsent result
/// bytes; the default, and the least and most it may be set to.
pub const RESULT_BUFFER_DEFAULT_BYTES: u64 = 4 << 20;
pub const RESULT_BUFFER_MIN_BYTES: u64 = 16 << 10;
pub const RESULT_BUFFER_MAX_BYTES: u64 = 1 << 30;

/// Compiled regular expressions each thread keeps (`scalar::regexp`), most recently
/// used first, each at most [`REGEXP_CACHED_PROGRAM_BYTES_MAX`]: a statement's
/// constant patterns compile once per thread. With the one larger program a thread
/// also keeps and the DFA bound below, a thread's cache holds at most about
/// 16 x 1.5 MiB + 16.5 MiB.
pub const REGEXP_CACHE_ENTRIES_MAX: usize = 16;

/// The largest compiled program the cache above keeps among its entries (ordinary
/// patterns take kilobytes).
pub const REGEXP_CACHED_PROGRAM_BYTES_MAX: usize = 1 << 20;

/// The largest compiled regular expression program (a bounded repetition of a Unicode
/// class, `\w{1,300}`, takes megabytes); a pattern that needs more is error 3700
/// (MySQL's ER_REGEXP_PATTERN_TOO_BIG).
pub const REGEXP_PROGRAM_BYTES_MAX: usize = 16 << 20;

/// The lazy DFA cache of one compiled regular expression (the engine falls back to
/// slower matching when a search needs more, it does not fail).
pub const REGEXP_DFA_BYTES_MAX: usize = 512 << 10;

/// `CHECK TABLE` compares every secondary index with the rows' entries only for
/// tables the planner estimates at no more rows than this: the comparison holds every
/// entry in memory. Larger tables get the B+tree walks alone, which hold page numbers.
pub const CHECK_TABLE_VERIFY_ROWS_MAX: u64 = 1 << 20;

/// How long `CHECK TABLE` waits for purge to remove what committed deletes left
/// (which the check would otherwise report) before it gives up on the table.
pub const CHECK_TABLE_PURGE_WAIT_MS: u64 = 10_000;

/// The deepest a JSON document may nest (MySQL's `JSON_DOCUMENT_MAX_DEPTH`): a
/// scalar is depth 1, each array or object around it adds one. Parsing a deeper text
/// and printing a deeper value are error 3157, so every recursion over a document
/// (printing, comparing, searching, merging) goes at most this deep.
pub const JSON_DEPTH_MAX: usize = 100;

/// The most user-level locks (`GET_LOCK`) held at once across all sessions; one more
/// is error 1206. Each costs its name (at most 256 bytes) and a map slot.
pub const USER_LOCKS_MAX: usize = 65_536;

/// The most metadata locks (`metadata_locks.rs`) held at once across all sessions,
/// counting a name once per session holding it; a request past it is error 1206.
/// LOCK TABLES holds two per table named (the table and its database), so a dump
/// may lock well over a hundred thousand tables at once. Each costs a name (two
/// strings of at most 64 characters) and a map slot.
pub const METADATA_LOCK_HOLDS_MAX: usize = 1 << 20;

/// The longest user-level lock name, in characters (MySQL's limit; longer: 3057).
pub const USER_LOCK_NAME_CHARS_MAX: usize = 64;

/// How often a session waiting in `GET_LOCK` or `SLEEP` checks its statement's
/// interrupt (KILL QUERY, `max_execution_time`).
pub const USER_LOCK_WAIT_TICK_MS: u64 = 10;

/// The longest `SLEEP(n)` sleeps, in seconds (a year; MySQL has no bound, but
/// `Duration` has one).
pub const SLEEP_SECONDS_MAX: f64 = 365.0 * 24.0 * 3600.0;

/// How deep FOREIGN KEY cascades (ON DELETE / ON UPDATE CASCADE or SET NULL) may
/// nest, a change of a child row setting off a change of its own children: MySQL's
/// bound (`FK_MAX_CASCADE_DEL`), past which a statement fails with 3008. It bounds
/// the recursion of `foreign_keys::Enforcer`.
pub const FK_CASCADE_DEPTH_MAX: usize = 15;

/// The longest COMMENT of a table, in characters: MySQL's limit, past which CREATE
/// and ALTER TABLE fail with 1628. The catalog keeps the text with the table.
pub const TABLE_COMMENT_CHARS_MAX: usize = 2048;

/// The longest COMMENT of a column, in characters: MySQL's limit (1629 past it).
pub const COLUMN_COMMENT_CHARS_MAX: usize = 1024;

/// Named time zones (`Europe/Berlin`) kept in memory once read from the system's
/// time zone database; the database has about 600. A name looked up past this bound
/// is read from its file each time.
pub const TIME_ZONES_CACHED_MAX: usize = 1024;

/// The longest time zone name looked up, and the largest TZif file read (the
/// largest in tzdata is under 4 KiB).
pub const TIME_ZONE_NAME_MAX_BYTES: usize = 64;
pub const TIME_ZONE_FILE_MAX_BYTES: u64 = 256 << 10;
