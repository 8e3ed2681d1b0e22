//! The system tables, and the engine's figures as SQL.
//!
//! [`SYSTEM_TABLES`] lists every table of `information_schema` and
//! `performance_schema` with a function for its columns and one for its rows, so
//! that `information_schema.TABLES` and `COLUMNS` can describe the system tables
//! themselves without computing them.
//!
//! The `performance_schema.tarn_*` tables read the engine's counters at the moment of
//! the query (each is a snapshot, not a consistent cut across tables):
//!
//! | table | figures | source |
//! |---|---|---|
//! | `tarn_latch_waits` | acquisitions, contended acquisitions, wait time per latch class and instance (S4) | `LatchRegistry::snapshot` |
//! | `tarn_latch_classes` | the same summed per class | `LatchRegistry::snapshot_by_class` |
//! | `tarn_lock_stats` | lock requests, waits, wait time, timeouts, deadlocks, grants by FIFO / CATS / starvation (S3) | `LockManager::stats` |
//! | `tarn_lock_waits` | each waiting transaction: its CATS weight (MySQL's `TRX_SCHEDULE_WEIGHT`), work, mode, what it waits for and for whom (S3) | `LockManager::waiting_transactions` |
//! | `tarn_io_path` | the I/O path in use, why it was chosen, page reads and writes (S5) | `IoEngine`, `BufferPool::stats` |
//! | `tarn_io_files` | every data file: owner, path, pages, bytes (S5) | `DataDir::file` |
//! | `tarn_buffer_pool` | frames, free and dirty pages, hits, misses, prefetches, evictions, doublewrite | `BufferPool::stats` |
//! | `tarn_log` | LSNs (current, written, durable, checkpoint), ring use, writes, flushes, group commit | `Wal` |
//! | `tarn_transactions` | active transactions, open views, commits, rollbacks, purge backlog, undo | `TrxSys::stats` |
//! | `tarn_recovery` | what recovery did when the engine opened | `Storage::recovery_report` |
//!
//! plus MySQL's `global_variables`, `session_variables` and `global_status`.

use std::fmt::Write as _;

use tarn_common::{FileId, Result};
use tarn_row::Value;
use tarn_txn::lock::LockTarget;

use super::empty_tables as empty;
use super::{
    Column, INFORMATION_SCHEMA, PERFORMANCE_SCHEMA, Rows, ViewContext, bigint_unsigned,
    file_owners, varchar,
};
use crate::types::SqlType;

/// One system table.
pub struct SystemTable {
    /// `information_schema` or `performance_schema`.
    pub db: &'static str,
    /// As listed (MySQL's upper case for `information_schema`, lower case for
    /// `performance_schema`); looked up case-insensitively.
    pub name: &'static str,
    pub columns: fn() -> Vec<Column>,
    pub rows: fn(&ViewContext) -> Result<Vec<Vec<Value>>>,
}

const fn system(
    db: &'static str,
    name: &'static str,
    columns: fn() -> Vec<Column>,
    rows: fn(&ViewContext) -> Result<Vec<Vec<Value>>>,
) -> SystemTable {
    SystemTable {
        db,
        name,
        columns,
        rows,
    }
}

const IS: &str = INFORMATION_SCHEMA;
const PS: &str = PERFORMANCE_SCHEMA;

/// Every system table.
pub static SYSTEM_TABLES: &[SystemTable] = &[
    system(
        IS,
        "CHARACTER_SETS",
        super::character_sets_columns,
        super::character_sets,
    ),
    system(
        IS,
        "COLLATIONS",
        super::collations_columns,
        super::collations,
    ),
    system(
        IS,
        "CHECK_CONSTRAINTS",
        empty::check_constraints_columns,
        super::check_constraints,
    ),
    system(IS, "COLUMNS", super::columns_columns, super::columns),
    system(
        IS,
        "COLUMN_STATISTICS",
        empty::column_statistics_columns,
        empty::no_rows,
    ),
    system(IS, "ENGINES", super::engines_columns, super::engines),
    system(IS, "EVENTS", empty::events_columns, empty::no_rows),
    system(IS, "FILES", empty::files_columns, empty::no_rows),
    system(
        IS,
        "KEY_COLUMN_USAGE",
        super::key_column_usage_columns,
        super::key_column_usage,
    ),
    system(IS, "PARAMETERS", empty::parameters_columns, empty::no_rows),
    system(
        IS,
        "PARTITIONS",
        super::partitions_columns,
        super::partitions,
    ),
    system(
        IS,
        "PROCESSLIST",
        super::processlist_columns,
        super::processlist,
    ),
    system(
        IS,
        "REFERENTIAL_CONSTRAINTS",
        super::referential_constraints_columns,
        super::referential_constraints,
    ),
    system(IS, "ROUTINES", empty::routines_columns, empty::no_rows),
    system(IS, "SCHEMATA", super::schemata_columns, super::schemata),
    system(
        IS,
        "STATISTICS",
        super::statistics_columns,
        super::statistics,
    ),
    system(
        IS,
        "TABLE_CONSTRAINTS",
        super::table_constraints_columns,
        super::table_constraints,
    ),
    system(IS, "TABLES", super::tables_columns, super::tables),
    system(IS, "TRIGGERS", empty::triggers_columns, empty::no_rows),
    system(IS, "VIEWS", super::views_columns, super::views),
    system(PS, "global_status", status_columns, global_status),
    system(PS, "global_variables", variables_columns, global_variables),
    system(
        PS,
        "session_variables",
        variables_columns,
        session_variables,
    ),
    system(PS, "tarn_buffer_pool", buffer_pool_columns, buffer_pool),
    system(PS, "tarn_io_files", io_files_columns, io_files),
    system(PS, "tarn_io_path", io_path_columns, io_path),
    system(PS, "tarn_latch_classes", latch_columns, latch_classes),
    system(PS, "tarn_latch_waits", latch_columns, latch_waits),
    system(PS, "tarn_lock_stats", lock_stats_columns, lock_stats),
    system(PS, "tarn_lock_waits", lock_waits_columns, lock_waits),
    system(PS, "tarn_log", log_columns, log),
    system(PS, "tarn_recovery", recovery_columns, recovery),
    system(PS, "tarn_transactions", transactions_columns, transactions),
];

/// The system table `db.name` (both case-insensitive).
pub fn find(db: &str, name: &str) -> Option<&'static SystemTable> {
    SYSTEM_TABLES
        .iter()
        .find(|t| t.db.eq_ignore_ascii_case(db) && t.name.eq_ignore_ascii_case(name))
}

/// The system tables of schema `db`.
pub fn system_tables_of(db: &str) -> impl Iterator<Item = &'static SystemTable> {
    let db = db.to_string();
    SYSTEM_TABLES
        .iter()
        .filter(move |t| t.db.eq_ignore_ascii_case(&db))
}

/// The rows of system table `db.name`; None if `db.name` is not a system table.
pub fn system_table(cx: &ViewContext, db: &str, name: &str) -> Option<Result<Rows>> {
    let table = find(db, name)?;
    Some((table.rows)(cx).map(|rows| ((table.columns)(), rows)))
}

fn text(s: &str) -> Value {
    Value::Bytes(s.as_bytes().to_vec())
}

fn uint(v: u64) -> Value {
    Value::UInt(v)
}

fn double(name: &str) -> Column {
    Column {
        name: name.to_string(),
        ty: SqlType::Double,
    }
}

/// Columns named `names`, all BIGINT UNSIGNED.
fn counters(names: &[&str]) -> Vec<Column> {
    names.iter().map(|n| bigint_unsigned(n)).collect()
}

// ---- Variables and status ----

fn variables_columns() -> Vec<Column> {
    vec![
        varchar("VARIABLE_NAME", 64),
        varchar("VARIABLE_VALUE", 1024),
    ]
}

fn global_variables(cx: &ViewContext) -> Result<Vec<Vec<Value>>> {
    Ok(super::show_variables(cx.global_vars).1)
}

fn session_variables(cx: &ViewContext) -> Result<Vec<Vec<Value>>> {
    Ok(super::show_variables(&cx.session_vars.with_globals(cx.global_vars)).1)
}

fn status_columns() -> Vec<Column> {
    vec![
        varchar("VARIABLE_NAME", 64),
        varchar("VARIABLE_VALUE", 1024),
    ]
}

fn global_status(cx: &ViewContext) -> Result<Vec<Vec<Value>>> {
    Ok(show_status(cx).1)
}

/// `SHOW [GLOBAL] STATUS`: `Variable_name`, `Value`, sorted by name. MySQL's names
/// where Tarn has the same figure (`Innodb_buffer_pool_read_requests` is the pool's
/// page accesses, `Innodb_row_lock_waits` the lock manager's waits, ...), `Tarn_*`
/// for the rest.
pub fn show_status(cx: &ViewContext) -> Rows {
    let storage = cx.storage;
    let pool = storage.pool().stats();
    let ctx = storage.txn_context();
    let locks = ctx.locks.stats();
    let wal = ctx.wal.stats();
    let trx = ctx.sys.stats();
    let page_size = storage.pool().page_size_bytes() as u64;
    let lock_wait_ms = locks.wait_ns_total / 1_000_000;
    let mut figures: Vec<(&str, String)> = Vec::new();
    if let Some(runners) = cx.server.runners {
        // MariaDB's names for its thread pool's figures, then Tarn's own.
        figures.extend([
            ("Threadpool_threads", runners.threads.to_string()),
            ("Threadpool_idle_threads", runners.idle_threads.to_string()),
            (
                "Tarn_runner_parked_connections",
                runners.parked_connections.to_string(),
            ),
            (
                "Tarn_runners_started_for_waits",
                runners.started_for_waits.to_string(),
            ),
            (
                "Tarn_runners_started_for_stalls",
                runners.started_for_stalls.to_string(),
            ),
            ("Tarn_runner_held_commits", runners.held_commits.to_string()),
            (
                "Tarn_runner_held_commits_total",
                runners.held_commits_total.to_string(),
            ),
        ]);
    }
    figures.extend([
        ("Aborted_clients", cx.server.aborted_clients.to_string()),
        ("Aborted_connects", cx.server.aborted_connects.to_string()),
        ("Connections", cx.server.connections.to_string()),
        (
            "Innodb_buffer_pool_pages_data",
            (pool.frames - pool.free_frames).to_string(),
        ),
        (
            "Innodb_buffer_pool_pages_dirty",
            pool.dirty_pages.to_string(),
        ),
        (
            "Innodb_buffer_pool_pages_free",
            pool.free_frames.to_string(),
        ),
        ("Innodb_buffer_pool_pages_total", pool.frames.to_string()),
        (
            "Innodb_buffer_pool_read_ahead",
            pool.prefetch_issued.to_string(),
        ),
        ("Innodb_buffer_pool_read_requests", pool.fetches.to_string()),
        ("Innodb_buffer_pool_reads", pool.misses.to_string()),
        (
            "Innodb_dblwr_pages_written",
            pool.doublewrite_pages.to_string(),
        ),
        ("Innodb_dblwr_writes", pool.doublewrite_syncs.to_string()),
        ("Innodb_log_waits", wal.append_waits.to_string()),
        ("Innodb_log_writes", wal.writes.to_string()),
        ("Innodb_os_log_fsyncs", wal.flushes.to_string()),
        ("Innodb_os_log_written", wal.bytes_written.to_string()),
        ("Innodb_page_size", page_size.to_string()),
        ("Innodb_pages_read", pool.page_reads.to_string()),
        ("Innodb_pages_written", pool.page_writes.to_string()),
        ("Innodb_row_lock_current_waits", locks.waiting.to_string()),
        ("Innodb_row_lock_time", lock_wait_ms.to_string()),
        (
            "Innodb_row_lock_time_avg",
            lock_wait_ms
                .checked_div(locks.waits)
                .unwrap_or(0)
                .to_string(),
        ),
        ("Innodb_row_lock_waits", locks.waits.to_string()),
        (
            "Max_used_connections",
            cx.server.max_used_connections.to_string(),
        ),
        ("Questions", cx.server.questions.to_string()),
        ("Tarn_buffer_pool_evictions", pool.evictions.to_string()),
        ("Tarn_buffer_pool_io_waits", pool.io_waits.to_string()),
        (
            "Tarn_buffer_pool_optimistic_reads",
            pool.optimistic_reads.to_string(),
        ),
        (
            "Tarn_buffer_pool_optimistic_retries",
            pool.optimistic_retries.to_string(),
        ),
        (
            "Tarn_buffer_pool_prefetch_cached",
            pool.prefetch_cached.to_string(),
        ),
        (
            "Tarn_buffer_pool_prefetch_failed",
            pool.prefetch_failed.to_string(),
        ),
        (
            "Tarn_buffer_pool_prefetch_requested",
            pool.prefetch_requested.to_string(),
        ),
        (
            "Tarn_buffer_pool_prefetch_skipped",
            pool.prefetch_skipped.to_string(),
        ),
        ("Tarn_lock_deadlocks", locks.deadlocks.to_string()),
        ("Tarn_lock_grants_cats", locks.grants_cats.to_string()),
        ("Tarn_lock_grants_fifo", locks.grants_fifo.to_string()),
        (
            "Tarn_lock_grants_starvation",
            locks.grants_starvation.to_string(),
        ),
        ("Tarn_lock_timeouts", locks.timeouts.to_string()),
        ("Tarn_log_bytes_appended", wal.bytes_appended.to_string()),
        ("Tarn_log_commit_waits", wal.commit_waits.to_string()),
        (
            "Tarn_log_lsn_checkpoint",
            ctx.wal.checkpoint_lsn().0.to_string(),
        ),
        ("Tarn_log_lsn_current", ctx.wal.current_lsn().0.to_string()),
        ("Tarn_log_lsn_durable", ctx.wal.durable_lsn().0.to_string()),
        ("Tarn_log_records", wal.records.to_string()),
        (
            "Tarn_purge_backlog_bytes",
            trx.purge_backlog_bytes.to_string(),
        ),
        ("Tarn_purge_backlog_trx", trx.purge_backlog_trx.to_string()),
        (
            "Tarn_purge_rounds_helped",
            storage.purge_rounds_helped().to_string(),
        ),
        ("Tarn_trx_active", trx.active.to_string()),
        ("Tarn_trx_commits", trx.commits.to_string()),
        ("Tarn_trx_rollbacks", trx.rollbacks.to_string()),
        ("Tarn_undo_bytes", trx.undo_bytes.to_string()),
        ("Tarn_views_open", trx.views_open.to_string()),
        ("Threads_connected", cx.processes.len().to_string()),
        ("Uptime", cx.server.uptime_s.to_string()),
    ]);
    figures.sort_by(|a, b| a.0.cmp(b.0));
    let rows = figures
        .into_iter()
        .map(|(name, value)| vec![text(name), text(&value)])
        .collect();
    (
        vec![varchar("Variable_name", 64), varchar("Value", 1024)],
        rows,
    )
}

// ---- Latches (S4) ----

fn latch_columns() -> Vec<Column> {
    let mut columns = vec![
        varchar("CLASS", 64),
        Column {
            name: "INSTANCE".into(),
            ty: SqlType::UInt { bits: 32 },
        },
    ];
    columns.extend(counters(&["ACQUISITIONS", "CONTENDED", "WAIT_NS"]));
    columns
}

fn latch_rows(snapshot: Vec<tarn_common::latch::LatchSnapshot>) -> Vec<Vec<Value>> {
    snapshot
        .into_iter()
        .map(|l| {
            vec![
                text(l.class),
                l.instance.map_or(Value::Null, |i| uint(u64::from(i))),
                uint(l.acquisitions),
                uint(l.contended),
                uint(l.wait_ns),
            ]
        })
        .collect()
}

fn latch_waits(cx: &ViewContext) -> Result<Vec<Vec<Value>>> {
    Ok(latch_rows(cx.storage.datadir().latches().snapshot()))
}

fn latch_classes(cx: &ViewContext) -> Result<Vec<Vec<Value>>> {
    Ok(latch_rows(
        cx.storage.datadir().latches().snapshot_by_class(),
    ))
}

// ---- Locks (S3) ----

const LOCK_STATS: &[&str] = &[
    "REQUESTS",
    "ALREADY_HELD",
    "GRANTED_IMMEDIATELY",
    "WAITS",
    "WAIT_NS",
    "TIMEOUTS",
    "DEADLOCKS",
    "NOWAIT_FAILURES",
    "SKIPPED",
    "GRANTS_FIFO",
    "GRANTS_CATS",
    "GRANTS_STARVATION",
    "ENTRIES",
    "WAITING",
];

fn lock_stats_columns() -> Vec<Column> {
    let mut columns = vec![varchar("SCHEDULING", 8)];
    columns.extend(counters(LOCK_STATS));
    columns
}

fn lock_stats(cx: &ViewContext) -> Result<Vec<Vec<Value>>> {
    let s = cx.storage.txn_context().locks.stats();
    // From the lock manager itself: SET GLOBAL lock_scheduling changes it live.
    let scheduling = cx.storage.txn_context().locks.scheduling().name();
    let mut row = vec![text(scheduling)];
    row.extend(
        [
            s.requests,
            s.already_held,
            s.granted_immediately,
            s.waits,
            s.wait_ns_total,
            s.timeouts,
            s.deadlocks,
            s.nowait_failures,
            s.skipped,
            s.grants_fifo,
            s.grants_cats,
            s.grants_starvation,
            s.entries,
            s.waiting,
        ]
        .map(uint),
    );
    Ok(vec![row])
}

fn lock_waits_columns() -> Vec<Column> {
    vec![
        bigint_unsigned("TRX_ID"),
        bigint_unsigned("TRX_SCHEDULE_WEIGHT"),
        bigint_unsigned("TRX_WORK"),
        varchar("LOCK_MODE", 32),
        varchar("LOCK_TYPE", 8),
        varchar("OBJECT_SCHEMA", 64),
        varchar("OBJECT_NAME", 64),
        varchar("INDEX_NAME", 64),
        varchar("LOCK_DATA", 256),
        varchar("BLOCKING_TRX_IDS", 1024),
        bigint_unsigned("WAIT_NS"),
    ]
}

/// The key bytes of a record lock, as hex (`supremum pseudo-record` for the empty
/// key, as InnoDB names it).
fn lock_data(key: &[u8]) -> String {
    if key.is_empty() {
        return "supremum pseudo-record".into();
    }
    let mut out = String::from("0x");
    for b in key.iter().take(120) {
        let _ = write!(out, "{b:02X}");
    }
    out
}

fn lock_waits(cx: &ViewContext) -> Result<Vec<Vec<Value>>> {
    let waiting = cx.storage.txn_context().locks.waiting_transactions();
    if waiting.is_empty() {
        return Ok(Vec::new());
    }
    let owners = file_owners(cx.storage);
    let owner = |id: u32| owners.get(&id);
    Ok(waiting
        .into_iter()
        .map(|w| {
            let (kind, space, data) = match &w.target {
                LockTarget::Table { table_id } => ("TABLE", *table_id, Value::Null),
                LockTarget::Record { index_id, key } => {
                    ("RECORD", *index_id, text(&lock_data(key)))
                }
            };
            let (schema, table, index) = match owner(space) {
                Some((db, table, index)) => (text(db), text(table), text(index)),
                None => (Value::Null, Value::Null, Value::Null),
            };
            let index = if kind == "TABLE" { Value::Null } else { index };
            let blocking: Vec<String> = w.blocking_trx_ids.iter().map(u64::to_string).collect();
            vec![
                uint(w.trx_id),
                uint(w.weight),
                uint(w.work),
                text(&w.mode),
                text(kind),
                schema,
                table,
                index,
                data,
                text(&blocking.join(",")),
                uint(w.wait_ns),
            ]
        })
        .collect())
}

// ---- I/O (S5) ----

fn io_path_columns() -> Vec<Column> {
    let mut columns = vec![
        varchar("IO_METHOD", 16),
        varchar("REQUESTED", 16),
        varchar("REASON", 1024),
    ];
    columns.extend(counters(&[
        "PAGE_SIZE",
        "PAGE_READS",
        "PAGE_WRITES",
        "DOUBLEWRITE_PAGES",
        "DOUBLEWRITE_SYNCS",
    ]));
    columns
}

fn io_path(cx: &ViewContext) -> Result<Vec<Vec<Value>>> {
    let engine = cx.storage.datadir().engine();
    let pool = cx.storage.pool();
    let stats = pool.stats();
    Ok(vec![vec![
        text(engine.method().name()),
        text(cx.storage.settings().io_method.name()),
        text(engine.selection_reason()),
        uint(pool.page_size_bytes() as u64),
        uint(stats.page_reads),
        uint(stats.page_writes),
        uint(stats.doublewrite_pages),
        uint(stats.doublewrite_syncs),
    ]])
}

fn io_files_columns() -> Vec<Column> {
    let mut columns = vec![
        bigint_unsigned("FILE_ID"),
        varchar("OBJECT_SCHEMA", 64),
        varchar("OBJECT_NAME", 64),
        varchar("INDEX_NAME", 64),
        varchar("FILE_NAME", 4096),
        varchar("IO_METHOD", 16),
    ];
    columns.extend(counters(&["PAGES", "BYTES"]));
    columns
}

fn io_files(cx: &ViewContext) -> Result<Vec<Vec<Value>>> {
    let datadir = cx.storage.datadir();
    let page_size = cx.storage.pool().page_size_bytes() as u64;
    let mut owners: Vec<(u32, (String, String, String))> =
        file_owners(cx.storage).into_iter().collect();
    owners.sort_by_key(|(id, _)| *id);
    let mut rows = Vec::with_capacity(owners.len());
    for (file_id, (db, table, index)) in owners {
        let file = datadir.file(FileId(file_id))?;
        rows.push(vec![
            uint(u64::from(file_id)),
            text(&db),
            text(&table),
            text(&index),
            text(&file.path().display().to_string()),
            text(file.method().name()),
            uint(file.page_count()),
            uint(file.page_count() * page_size),
        ]);
    }
    Ok(rows)
}

// ---- Buffer pool ----

const POOL_FIGURES: &[&str] = &[
    "INSTANCES",
    "POOL_SIZE",
    "PAGE_SIZE",
    "FRAMES",
    "FREE_FRAMES",
    "DIRTY_PAGES",
    "FETCHES",
    "HITS",
    "MISSES",
    "IO_WAITS",
    "OPTIMISTIC_READS",
    "OPTIMISTIC_RETRIES",
    "PREFETCH_REQUESTED",
    "PREFETCH_ISSUED",
    "PREFETCH_CACHED",
    "PREFETCH_SKIPPED",
    "PREFETCH_FAILED",
    "PREFETCH_IN_FLIGHT_PEAK",
    "PAGE_READS",
    "PAGE_WRITES",
    "EVICTIONS",
];

fn buffer_pool_columns() -> Vec<Column> {
    let mut columns = counters(POOL_FIGURES);
    columns.push(double("HIT_RATE"));
    columns
}

fn buffer_pool(cx: &ViewContext) -> Result<Vec<Vec<Value>>> {
    let pool = cx.storage.pool();
    let s = pool.stats();
    let config = pool.config();
    let mut row: Vec<Value> = [
        u64::from(config.instances),
        config.size_bytes,
        pool.page_size_bytes() as u64,
        s.frames,
        s.free_frames,
        s.dirty_pages,
        s.fetches,
        s.hits,
        s.misses,
        s.io_waits,
        s.optimistic_reads,
        s.optimistic_retries,
        s.prefetch_requested,
        s.prefetch_issued,
        s.prefetch_cached,
        s.prefetch_skipped,
        s.prefetch_failed,
        s.prefetch_in_flight_peak,
        s.page_reads,
        s.page_writes,
        s.evictions,
    ]
    .map(uint)
    .to_vec();
    row.push(if s.fetches == 0 {
        Value::Null
    } else {
        Value::Double(s.hits as f64 / s.fetches as f64)
    });
    Ok(vec![row])
}

// ---- Log ----

const LOG_FIGURES: &[&str] = &[
    "CURRENT_LSN",
    "WRITTEN_LSN",
    "DURABLE_LSN",
    "CHECKPOINT_LSN",
    "CAPACITY_BYTES",
    "USED_BYTES",
    "BYTES_APPENDED",
    "RECORDS",
    "WRITES",
    "BYTES_WRITTEN",
    "FLUSHES",
    "COMMIT_WAITS",
    "APPEND_WAITS",
];

fn log_columns() -> Vec<Column> {
    let mut columns = vec![varchar("DEVICE", 8)];
    columns.extend(counters(LOG_FIGURES));
    columns.push(double("GROUP_COMMIT_FACTOR"));
    columns.push(varchar("FAILURE", 1024));
    columns
}

fn log(cx: &ViewContext) -> Result<Vec<Vec<Value>>> {
    let wal = &cx.storage.txn_context().wal;
    let s = wal.stats();
    let mut row = vec![text(wal.device().name())];
    row.extend(
        [
            wal.current_lsn().0,
            wal.written_lsn().0,
            wal.durable_lsn().0,
            wal.checkpoint_lsn().0,
            wal.log_capacity_bytes(),
            wal.log_used_bytes(),
            s.bytes_appended,
            s.records,
            s.writes,
            s.bytes_written,
            s.flushes,
            s.commit_waits,
            s.append_waits,
        ]
        .map(uint),
    );
    row.push(Value::Double(s.group_commit_factor()));
    row.push(wal.failure().map_or(Value::Null, |f| text(&f)));
    Ok(vec![row])
}

// ---- Transactions and recovery ----

fn transactions_columns() -> Vec<Column> {
    counters(&[
        "ACTIVE",
        "VIEWS_OPEN",
        "COMMITS",
        "ROLLBACKS",
        "PURGE_BACKLOG_TRX",
        "PURGE_BACKLOG_BYTES",
        "UNDO_BYTES",
        "PURGE_ROUNDS_HELPED",
    ])
}

fn transactions(cx: &ViewContext) -> Result<Vec<Vec<Value>>> {
    let s = cx.storage.txn_context().sys.stats();
    Ok(vec![
        [
            s.active as u64,
            s.views_open as u64,
            s.commits,
            s.rollbacks,
            s.purge_backlog_trx as u64,
            s.purge_backlog_bytes,
            s.undo_bytes,
            cx.storage.purge_rounds_helped(),
        ]
        .map(uint)
        .to_vec(),
    ])
}

fn recovery_columns() -> Vec<Column> {
    counters(&[
        "START_LSN",
        "END_LSN",
        "LOG_BYTES",
        "RECORDS_READ",
        "PAGE_CHANGES_REPLAYED",
        "PAGE_CHANGES_SKIPPED",
        "TRANSACTIONS_ROLLED_BACK",
        "CHANGES_UNDONE",
        "TORN_PAGES_REPAIRED",
        "REDO_MS",
        "UNDO_MS",
    ])
}

fn recovery(cx: &ViewContext) -> Result<Vec<Vec<Value>>> {
    let r = cx.storage.recovery_report();
    Ok(vec![
        [
            r.start_lsn,
            r.end_lsn,
            r.log_bytes,
            r.records_read,
            r.pages_changes_replayed,
            r.page_changes_skipped,
            r.transactions_rolled_back,
            r.changes_undone,
            r.torn_pages_repaired,
            r.redo_ms,
            r.undo_ms,
        ]
        .map(uint)
        .to_vec(),
    ])
}

// ---- SHOW ENGINE TARN STATUS ----

/// `SHOW ENGINE TARN STATUS`: the figures of the `tarn_*` tables as one readable
/// text, section by section.
pub fn show_engine_status(cx: &ViewContext) -> Result<String> {
    let mut out = String::new();
    let storage = cx.storage;
    let settings = storage.settings();
    let section = |out: &mut String, title: &str| {
        let _ = write!(
            out,
            "\n{}\n{title}\n{}\n",
            "-".repeat(title.len()),
            "-".repeat(title.len())
        );
    };
    let _ = writeln!(
        out,
        "=====================================\nTARN ENGINE STATUS\n====================================="
    );

    section(&mut out, "BUFFER POOL (S4)");
    let pool = storage.pool();
    let p = pool.stats();
    let _ = writeln!(
        out,
        "Instances {}, pool size {} bytes, page size {} bytes\n\
         Frames {}, free {}, dirty {}\n\
         Page accesses {}, hits {}, misses {}, waits for reads in flight {}\n\
         Optimistic reads {}, retried {}\n\
         Prefetch: requested {}, issued {}, already cached {}, skipped {}, failed {}, peak in flight {}\n\
         Pages read {}, written {}, evicted {}; doublewrite pages {}, syncs {}",
        pool.config().instances,
        pool.config().size_bytes,
        pool.page_size_bytes(),
        p.frames,
        p.free_frames,
        p.dirty_pages,
        p.fetches,
        p.hits,
        p.misses,
        p.io_waits,
        p.optimistic_reads,
        p.optimistic_retries,
        p.prefetch_requested,
        p.prefetch_issued,
        p.prefetch_cached,
        p.prefetch_skipped,
        p.prefetch_failed,
        p.prefetch_in_flight_peak,
        p.page_reads,
        p.page_writes,
        p.evictions,
        p.doublewrite_pages,
        p.doublewrite_syncs,
    );

    section(&mut out, "LATCHES (S4)");
    let latches = storage.datadir().latches();
    if !latches.is_enabled() {
        let _ = writeln!(out, "Latch accounting is off (latch_accounting = off).");
    }
    let _ = writeln!(
        out,
        "{:<28} {:>8} {:>14} {:>12} {:>14}",
        "class", "instance", "acquisitions", "contended", "wait ns"
    );
    for l in latches.snapshot_by_class() {
        let _ = writeln!(
            out,
            "{:<28} {:>8} {:>14} {:>12} {:>14}",
            l.class, "all", l.acquisitions, l.contended, l.wait_ns
        );
    }
    for l in latches
        .snapshot()
        .into_iter()
        .filter(|l| l.contended > 0 && l.instance.is_some())
    {
        let instance = l.instance.map(|i| i.to_string()).unwrap_or_default();
        let _ = writeln!(
            out,
            "{:<28} {:>8} {:>14} {:>12} {:>14}",
            l.class, instance, l.acquisitions, l.contended, l.wait_ns
        );
    }

    section(&mut out, "LOCKS (S3)");
    let ctx = storage.txn_context();
    let l = ctx.locks.stats();
    let _ = writeln!(
        out,
        "Scheduling {}, lock wait timeout {} s\n\
         Requests {}, already held {}, granted at once {}, waited {} ({} ns in all)\n\
         Timeouts {}, deadlocks {}, NOWAIT failures {}, skipped (SKIP LOCKED) {}\n\
         Waiters granted: in arrival order {}, by CATS weight {}, against starvation {}\n\
         Lock table entries {}, transactions waiting now {}",
        ctx.locks.scheduling(),
        ctx.locks.wait_timeout().as_secs(),
        l.requests,
        l.already_held,
        l.granted_immediately,
        l.waits,
        l.wait_ns_total,
        l.timeouts,
        l.deadlocks,
        l.nowait_failures,
        l.skipped,
        l.grants_fifo,
        l.grants_cats,
        l.grants_starvation,
        l.entries,
        l.waiting,
    );
    for w in ctx.locks.waiting_transactions() {
        let _ = writeln!(
            out,
            "  trx {} waits {} ns for {} (weight {}, work {}), blocked by {:?}",
            w.trx_id, w.wait_ns, w.mode, w.weight, w.work, w.blocking_trx_ids
        );
    }

    section(&mut out, "I/O (S5)");
    let engine = storage.datadir().engine();
    let _ = writeln!(
        out,
        "Path {} (requested {}): {}\nData directory {}",
        engine.method(),
        settings.io_method,
        engine.selection_reason(),
        storage.datadir().path().display(),
    );
    for row in io_files(cx)? {
        let shown: Vec<String> = row.iter().map(Value::to_string).collect();
        let _ = writeln!(
            out,
            "  file {} {}.{} ({}): {} pages, {} bytes, {}",
            shown[0], shown[1], shown[2], shown[3], shown[6], shown[7], shown[4]
        );
    }

    section(&mut out, "LOG AND COMMITS");
    let wal = &ctx.wal;
    let s = wal.stats();
    let _ = writeln!(
        out,
        "Device {}, flush_log_at_commit {}\n\
         LSN current {}, written {}, durable {}, checkpoint {}\n\
         Ring {} bytes, {} in use\n\
         Appended {} bytes in {} records; {} writes of {} bytes; {} flushes\n\
         Commit waits {}, group commit factor {:.2}; appends that waited for space {}",
        wal.device(),
        wal.flush_log_at_commit(),
        wal.current_lsn().0,
        wal.written_lsn().0,
        wal.durable_lsn().0,
        wal.checkpoint_lsn().0,
        wal.log_capacity_bytes(),
        wal.log_used_bytes(),
        s.bytes_appended,
        s.records,
        s.writes,
        s.bytes_written,
        s.flushes,
        s.commit_waits,
        s.group_commit_factor(),
        s.append_waits,
    );
    if let Some(failure) = wal.failure() {
        let _ = writeln!(out, "The log is stopped: {failure}");
    }

    section(&mut out, "TRANSACTIONS AND PURGE");
    let t = ctx.sys.stats();
    let _ = writeln!(
        out,
        "Active {}, read views open {}, commits {}, rollbacks {}\n\
         Purge backlog {} transactions, {} bytes; undo held {} bytes; purge rounds run by committers {}",
        t.active,
        t.views_open,
        t.commits,
        t.rollbacks,
        t.purge_backlog_trx,
        t.purge_backlog_bytes,
        t.undo_bytes,
        storage.purge_rounds_helped(),
    );

    section(&mut out, "RECOVERY");
    let r = storage.recovery_report();
    let _ = writeln!(
        out,
        "Log from LSN {} to {} ({} bytes, {} records); {} page changes replayed, {} skipped\n\
         {} transactions rolled back ({} changes undone), {} torn pages repaired; redo {} ms, undo {} ms",
        r.start_lsn,
        r.end_lsn,
        r.log_bytes,
        r.records_read,
        r.pages_changes_replayed,
        r.page_changes_skipped,
        r.transactions_rolled_back,
        r.changes_undone,
        r.torn_pages_repaired,
        r.redo_ms,
        r.undo_ms,
    );
    let _ = write!(
        out,
        "\n=====================================\nEND OF TARN ENGINE STATUS\n=====================================\n"
    );
    Ok(out)
}
