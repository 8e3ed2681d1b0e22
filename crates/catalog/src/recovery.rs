//! Recovery, checkpoints and purge: the engine's use of the redo log.
//!
//! # Recovery, step by step ([`crate::Storage::open`])
//! 1. Torn pages are repaired from the doublewrite file (`tarn_buffer::doublewrite`),
//!    so every page read below verifies.
//! 2. [`redo`] reads the log from the last checkpoint and replays each page change
//!    whose page is older than the record (page LSN < record end LSN), through the
//!    buffer pool. Records of files the catalog does not name (a table dropped, or
//!    created but never published) are skipped. Undo records are collected per
//!    transaction by undo number (a transaction larger than the log logged its live
//!    undo again, see `Transaction::carry_undo_forward`: one copy of each number is
//!    kept); a commit or rollback record discards its transaction's set.
//! 3. [`rollback_incomplete`] undoes, newest first, the changes of every transaction
//!    left without a commit or rollback record, logs a rollback record for each, and
//!    makes the log durable.
//!
//! Every step can crash and run again: replay is idempotent by page LSN, and undo is
//! idempotent by the row header's transaction id (see [`crate::txn`]).
//!
//! # Checkpoints
//! A fuzzy checkpoint writes the pages dirty before it started, then records the LSN
//! where recovery must start: the oldest LSN of a page still dirty, or the first record
//! of the oldest active transaction (whose undo recovery needs), whichever is older.
//! Log space before it is recycled. A transaction whose log outgrows the ring moves its
//! first record up by logging its live undo again (`Transaction::carry_undo_forward`),
//! so the checkpoint is not held at its start for ever.

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use tarn_btree::{PageChange, Redo};
use tarn_buffer::{BufferPool, LogFlush};
use tarn_common::{Error, Lsn, PageId, Result};
use tarn_txn::UndoRecord;
use tarn_txn::lock::LockTrx;
use tarn_wal::Wal;

use crate::catalog::CatalogData;
use crate::storage::State;
use crate::txn::{TxnContext, log_kind};

/// Page changes go to the redo log.
pub(crate) struct WalRedo(pub(crate) Arc<Wal>);

thread_local! {
    static REDO_BUFFER: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

impl Redo for WalRedo {
    fn log(&self, page_id: PageId, change: &PageChange<'_>) -> (Lsn, Lsn) {
        REDO_BUFFER.with(|buffer| {
            let mut buffer = buffer.borrow_mut();
            buffer.clear();
            change.encode(page_id, &mut buffer);
            self.0.append_range(log_kind::PAGE, &buffer)
        })
    }

    fn begin_group(&self) -> Box<dyn Send + '_> {
        Box::new(self.0.begin_multi())
    }

    fn unlogged_lsn(&self) -> Lsn {
        self.0.current_lsn()
    }
}

/// The buffer pool's write-ahead rule, kept by the redo log.
pub(crate) struct WalLog(pub(crate) Arc<Wal>);

impl LogFlush for WalLog {
    fn flush_to(&self, lsn: Lsn) -> Result<()> {
        self.0.flush_to(lsn)
    }

    fn flush_to_nowait(&self, lsn: Lsn) -> Result<bool> {
        self.0.flush_to_nowait(lsn)
    }

    fn flushable_lsn(&self) -> Lsn {
        self.0.flushable_lsn()
    }
}

/// What recovery found and did.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct RecoveryReport {
    /// Where replay started and where the log ended.
    pub start_lsn: u64,
    pub end_lsn: u64,
    pub log_bytes: u64,
    pub records_read: u64,
    pub pages_changes_replayed: u64,
    pub page_changes_skipped: u64,
    pub transactions_rolled_back: u64,
    pub changes_undone: u64,
    pub torn_pages_repaired: u64,
    pub redo_ms: u64,
    pub undo_ms: u64,
}

/// The outcome of the redo pass, handed to the undo pass.
pub(crate) struct RedoPass {
    pub(crate) next_trx_id: u64,
    /// Above every roll pointer used before the crash (see `redo`).
    pub(crate) next_roll_ptr: u64,
    /// Transactions without a commit or rollback record, with their undo in order.
    incomplete: BTreeMap<u64, TrxLog>,
    /// Committed transactions with changes purge had not finished.
    unpurged: Vec<TrxLog>,
    report: RecoveryReport,
}

/// One transaction's undo as found in the log.
#[derive(Default)]
struct TrxLog {
    /// The start LSN of its first undo record.
    first_lsn: Lsn,
    /// By undo number, which orders a transaction's changes. A transaction that held
    /// the checkpoint back logged its live undo again (`Transaction::carry_undo_forward`):
    /// a copy replaces the same number's record.
    records: BTreeMap<u64, UndoRecord>,
}

/// Replays the log from the last checkpoint (step 2 of the module docs).
pub(crate) fn redo(wal: &Wal, pool: &BufferPool, catalog: &CatalogData) -> Result<RedoPass> {
    let started = Instant::now();
    let (start, extra) = wal.recovery_start();
    let (mut next_trx_id, checkpoint_roll_ptr) = decode_extra(&extra);
    let files: HashSet<u32> = catalog
        .databases
        .values()
        .flat_map(|tables| tables.values())
        .flat_map(|def| std::iter::once(def.file_id).chain(def.indexes.iter().map(|i| i.file_id)))
        .collect();
    let mut report = RecoveryReport {
        start_lsn: start.0,
        end_lsn: start.0,
        ..RecoveryReport::default()
    };
    let mut incomplete: BTreeMap<u64, TrxLog> = BTreeMap::new();
    let mut committed: BTreeMap<u64, TrxLog> = BTreeMap::new();
    let mut reader = wal.read_from(start)?;
    while let Some(record) = reader.next_record()? {
        report.records_read += 1;
        report.end_lsn = record.end_lsn.0;
        match record.kind {
            log_kind::PAGE => {
                let (page_id, change) = PageChange::decode(record.payload)?;
                if !files.contains(&page_id.file_id.0) {
                    report.page_changes_skipped += 1;
                    continue;
                }
                if replay_one(pool, page_id, &change, record.start_lsn, record.end_lsn)? {
                    report.pages_changes_replayed += 1;
                } else {
                    report.page_changes_skipped += 1;
                }
            }
            log_kind::UNDO => {
                let undo = UndoRecord::decode(record.payload)?;
                next_trx_id = next_trx_id.max(undo.trx_id + 1);
                let log = incomplete.entry(undo.trx_id).or_insert_with(|| TrxLog {
                    first_lsn: record.start_lsn,
                    records: BTreeMap::new(),
                });
                log.records.insert(undo.undo_no, undo);
            }
            log_kind::COMMIT => {
                let [id] = numbers(record.payload)?;
                next_trx_id = next_trx_id.max(id + 1);
                if let Some(log) = incomplete.remove(&id) {
                    committed.insert(id, log);
                }
            }
            log_kind::ROLLBACK => {
                let [id] = numbers(record.payload)?;
                next_trx_id = next_trx_id.max(id + 1);
                incomplete.remove(&id);
            }
            log_kind::UNDONE => {
                let [id, first, last] = numbers(record.payload)?;
                if let Some(log) = incomplete.get_mut(&id) {
                    log.records.retain(|no, _| !(first..=last).contains(no));
                }
            }
            log_kind::PURGED => {
                let [id, undo_no] = numbers(record.payload)?;
                if let Some(log) = committed.get_mut(&id) {
                    log.records.remove(&undo_no);
                }
            }
            other => {
                return Err(Error::CorruptData(format!(
                    "redo log record at LSN {} has unknown kind {other}",
                    record.end_lsn
                )));
            }
        }
    }
    drop(reader);
    report.log_bytes = report.end_lsn - report.start_lsn;
    report.redo_ms = started.elapsed().as_millis() as u64;
    // Roll pointers are not logged, but each one used after the checkpoint belongs to
    // an undo record of at least 32 bytes of log: the log's length bounds them.
    let next_roll_ptr = checkpoint_roll_ptr + report.log_bytes / 32 + 1;
    Ok(RedoPass {
        next_trx_id,
        next_roll_ptr,
        incomplete,
        unpurged: committed
            .into_values()
            .filter(|log| !log.records.is_empty())
            .collect(),
        report,
    })
}

/// The checkpoint's blob for the transaction layer: the next transaction id and the
/// next roll pointer.
pub(crate) fn checkpoint_extra(next_trx_id: u64, next_roll_ptr: u64) -> [u8; 16] {
    let mut extra = [0u8; 16];
    extra[..8].copy_from_slice(&next_trx_id.to_le_bytes());
    extra[8..].copy_from_slice(&next_roll_ptr.to_le_bytes());
    extra
}

/// Reads [`checkpoint_extra`]'s blob (a new log has none: 1 and 1).
fn decode_extra(extra: &[u8]) -> (u64, u64) {
    let word = |at: usize| {
        extra
            .get(at..at + 8)
            .and_then(|b| b.try_into().ok())
            .map(u64::from_le_bytes)
            .unwrap_or(1)
    };
    (word(0), word(8))
}

/// The `N` little-endian u64s of a transaction record's payload.
fn numbers<const N: usize>(payload: &[u8]) -> Result<[u64; N]> {
    if payload.len() != N * 8 {
        return Err(Error::CorruptData(format!(
            "a transaction log record of {} bytes (expected {})",
            payload.len(),
            N * 8
        )));
    }
    Ok(std::array::from_fn(|i| {
        u64::from_le_bytes(payload[i * 8..i * 8 + 8].try_into().expect("8 bytes"))
    }))
}

/// Applies one page change if the page is older than it. Returns whether it applied.
fn replay_one(
    pool: &BufferPool,
    page_id: PageId,
    change: &PageChange<'_>,
    start_lsn: Lsn,
    end_lsn: Lsn,
) -> Result<bool> {
    let mut guard = match pool.fetch_exclusive_as(page_id, None) {
        Ok(guard) => guard,
        // A page formatted after the checkpoint may never have reached the disk.
        Err(Error::PageOutOfRange { .. } | Error::PageNeverWritten { .. })
            if change.formats_page() =>
        {
            pool.create_page(page_id, tarn_io::PageType::RAW)?
        }
        Err(error) => return Err(error),
    };
    if guard.lsn() >= end_lsn {
        return Ok(false);
    }
    tarn_btree::replay(&mut guard, page_id, change)?;
    guard.mark_changed(start_lsn, end_lsn);
    Ok(true)
}

/// Rolls back the transactions the redo pass left incomplete (step 3).
pub(crate) fn rollback_incomplete(
    ctx: &TxnContext,
    pool: &BufferPool,
    state: &Mutex<State>,
    pass: RedoPass,
    repair: tarn_buffer::doublewrite::RepairReport,
) -> Result<RecoveryReport> {
    let started = Instant::now();
    let mut report = pass.report;
    // Make room in the log for the rollback: write the replayed pages and move the
    // checkpoint up to the oldest record recovery still needs (the undo of the
    // transactions to roll back and of those purge has not finished).
    // The undo of the transactions to roll back is logged again first, so that the
    // checkpoint need not stay at their first records: a transaction larger than the
    // log may have left the ring nearly full, with no room for its rollback.
    let mut incomplete = pass.incomplete;
    let oldest = |incomplete: &BTreeMap<u64, TrxLog>| {
        incomplete
            .values()
            .chain(pass.unpurged.iter())
            .map(|log| log.first_lsn)
            .min()
    };
    // First free the log before the oldest first record, for the copies.
    pool.flush_all()?;
    let current = ctx.wal.current_lsn();
    ctx.wal.write_checkpoint(
        oldest(&incomplete).map_or(current, |p| p.min(current)),
        &checkpoint_extra(pass.next_trx_id, ctx.sys.undo.next_roll_ptr()),
    )?;
    for log in incomplete.values_mut() {
        let mut payload = Vec::new();
        for (i, record) in log.records.values().enumerate() {
            payload.clear();
            record.encode(&mut payload);
            let (start, _) = ctx.wal.append_range(log_kind::UNDO, &payload);
            if i == 0 {
                log.first_lsn = start;
            }
        }
    }
    let pinned = oldest(&incomplete);
    ctx.wal.flush_to(ctx.wal.current_lsn())?;
    let current = ctx.wal.current_lsn();
    ctx.wal.write_checkpoint(
        pinned.map_or(current, |p| p.min(current)),
        &checkpoint_extra(pass.next_trx_id, ctx.sys.undo.next_roll_ptr()),
    )?;
    report.torn_pages_repaired = repair.pages_repaired.len() as u64;
    let state = state.lock();
    let ids: Vec<u64> = incomplete.keys().copied().collect();
    let unpurged_first = pass.unpurged.iter().map(|log| log.first_lsn).min();
    for (n, trx_id) in ids.iter().enumerate() {
        let records: Vec<&UndoRecord> = incomplete[trx_id].records.values().rev().collect();
        for (i, record) in records.iter().enumerate() {
            // No checkpoint thread runs yet, and the rollback of a transaction larger
            // than the log may log more than the ring holds: carry the undo still to
            // apply forward and checkpoint, as a live rollback does.
            if ctx.wal.log_used_bytes()
                > ctx.wal.log_capacity_bytes() * tarn_common::limits::LOG_ADMIT_PCT / 100
            {
                let pending = records[i..].iter().copied().chain(
                    ids[n + 1..]
                        .iter()
                        .flat_map(|id| incomplete[id].records.values()),
                );
                carry_and_checkpoint(ctx, pool, pending, unpurged_first, pass.next_trx_id)?;
            }
            if let Some(table) = state.table_by_file_id(record.table_id) {
                table.undo_change(record)?;
                report.changes_undone += 1;
            }
        }
        ctx.wal.append(log_kind::ROLLBACK, &trx_id.to_le_bytes());
        report.transactions_rolled_back += 1;
    }
    drop(state);
    for log in pass.unpurged {
        ctx.sys
            .requeue_recovered(log.first_lsn, log.records.into_values().collect());
    }
    ctx.wal.flush_to(ctx.wal.current_lsn())?;
    report.undo_ms = started.elapsed().as_millis() as u64;
    if report.records_read > 0 || report.torn_pages_repaired > 0 {
        tracing::info!(
            "recovery: {} log records ({} bytes) from LSN {}, {} page changes replayed in {} ms; \
             {} transactions rolled back ({} changes) in {} ms; {} torn pages repaired",
            report.records_read,
            report.log_bytes,
            report.start_lsn,
            report.pages_changes_replayed,
            report.redo_ms,
            report.transactions_rolled_back,
            report.changes_undone,
            report.undo_ms,
            report.torn_pages_repaired
        );
    }
    Ok(report)
}

/// Recovery's rollback: writes every page, logs `pending` (the undo still to apply)
/// again, and checkpoints at the first copy (or the oldest unpurged transaction's first
/// record, if older), freeing the log before it.
fn carry_and_checkpoint<'r>(
    ctx: &TxnContext,
    pool: &BufferPool,
    pending: impl Iterator<Item = &'r UndoRecord>,
    unpurged_first: Option<Lsn>,
    next_trx_id: u64,
) -> Result<()> {
    pool.flush_all()?;
    let mut first_copy = None;
    let mut payload = Vec::new();
    for record in pending {
        payload.clear();
        record.encode(&mut payload);
        let (start, _) = ctx.wal.append_range(log_kind::UNDO, &payload);
        first_copy.get_or_insert(start);
    }
    let current = ctx.wal.current_lsn();
    ctx.wal.flush_to(current)?;
    let lsn = [first_copy, unpurged_first]
        .into_iter()
        .flatten()
        .fold(current, Lsn::min);
    ctx.wal.write_checkpoint(
        lsn,
        &checkpoint_extra(next_trx_id, ctx.sys.undo.next_roll_ptr()),
    )
}

/// A fuzzy checkpoint (module docs). With `all`, every dirty page is written first (a
/// clean shutdown or an explicit checkpoint), so recovery has nothing to replay.
pub(crate) fn checkpoint(ctx: &TxnContext, pool: &BufferPool, all: bool) -> Result<()> {
    let target = ctx.wal.current_lsn();
    if all {
        pool.flush_all()?;
    } else {
        pool.flush_up_to(target)?;
    }
    let mut lsn = target;
    if let Some(oldest) = pool.oldest_dirty_lsn() {
        lsn = lsn.min(oldest);
    }
    if let Some(oldest) = ctx.sys.oldest_active_lsn() {
        lsn = lsn.min(oldest);
    }
    if let Some(oldest) = ctx.sys.oldest_unpurged_lsn() {
        lsn = lsn.min(oldest);
    }
    // Pages the flusher or an eviction wrote (and marked clean) while this ran are
    // not in `oldest_dirty_lsn` any more, but their writes may not be synced yet:
    // sync every data file before the checkpoint may pass their changes.
    pool.flush_up_to(Lsn::ZERO)?;
    // A committed transaction with only inserts leaves the active set with no purge
    // item, possibly before its commit record is durable (`flush_log_at_commit` 0 or
    // 2, or a committer not yet in `commit_wait`). Its commit record was appended
    // before it left, so before `oldest_active_lsn` above: make it durable before the
    // checkpoint passes the transaction's undo, or recovery would see only the part
    // of it after the checkpoint and roll back only that part.
    ctx.wal.flush_to(ctx.wal.current_lsn())?;
    ctx.wal.write_checkpoint(
        lsn,
        &checkpoint_extra(ctx.sys.next_id(), ctx.sys.undo.next_roll_ptr()),
    )
}

/// The checkpointer: checkpoints when the log since the last one passes the trigger.
pub(crate) fn checkpoint_loop(ctx: &TxnContext, pool: &BufferPool, stop: &AtomicBool) {
    while !stop.load(Ordering::Acquire) {
        if ctx.wal.checkpoint_wanted()
            && let Err(error) = checkpoint(ctx, pool, false)
        {
            // A data file's write or fsync failed: its pages stay dirty, but the
            // engine stops taking writes rather than trust a retried fsync.
            ctx.wal.stop(&format!("a checkpoint failed: {error}"));
            return;
        }
        ctx.wal.wait_checkpoint_wanted(Duration::from_millis(50));
    }
}

/// Purge: removes what committed transactions left behind once no view needs it.
pub(crate) fn purge_loop(ctx: &TxnContext, state: &Mutex<State>, stop: &AtomicBool) {
    let purger = ctx.locks.register_brief(PURGER_TRX_ID);
    while !stop.load(Ordering::Acquire) {
        match purge_round(ctx, state, &purger, PURGE_ROUND_ITEMS) {
            Ok(Round::Progress) => {}
            Ok(Round::Empty | Round::Stuck) => std::thread::sleep(Duration::from_millis(5)),
            Err(error) => {
                tracing::error!("purge stops: {error}");
                return;
            }
        }
    }
}

/// The lock-manager id of the purge thread; committers that help purge take the ids
/// above it (see [`Storage::commit`](crate::Storage::commit)). Far above any real
/// transaction id.
pub(crate) const PURGER_TRX_ID: u64 = u64::MAX >> 16;

/// Items the purge thread takes per round.
const PURGE_ROUND_ITEMS: usize = 64;

/// What a purge round did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Round {
    /// Nothing was ready (queue empty, or held back by an open view).
    Empty,
    /// Every change it took was locked by a transaction: requeued.
    Stuck,
    Progress,
}

/// One round of purge by `purger` (a lock-manager handle of its own): takes up to
/// `max_items` committed transactions no view needs, removes what their changes left
/// behind (a change whose row is locked goes back to the queue), makes the round's
/// records durable and drops the undo. Several rounds may run at once, by the purge
/// thread and by committers helping it: each takes its own items, and the row lock
/// (`Table::purge_change`) keeps two purgers off one row. Fails only if the log does.
pub(crate) fn purge_round(
    ctx: &TxnContext,
    state: &Mutex<State>,
    purger: &Arc<LockTrx>,
    max_items: usize,
) -> Result<Round> {
    let items = ctx.sys.purge_ready(max_items);
    if items.is_empty() {
        return Ok(Round::Empty);
    }
    let firsts: Vec<Lsn> = items
        .iter()
        .filter(|item| !item.rolled_back)
        .map(|item| item.first_lsn)
        .collect();
    let mut done = Vec::with_capacity(items.len());
    let mut progress = false;
    let mut logged = Lsn::ZERO;
    for item in items {
        if item.rolled_back {
            done.push(item);
            progress = true;
            continue;
        }
        let mut purged = Vec::new();
        let mut busy = Vec::new();
        for (ptr, record) in item.records {
            let table = state.lock().table_by_file_id(record.table_id);
            let Some(table) = table else {
                purged.push((ptr, record));
                continue;
            };
            match table.purge_change(ctx, purger, ptr, &record, &mut logged) {
                Ok(true) => purged.push((ptr, record)),
                Ok(false) => busy.push((ptr, record)),
                Err(error) => {
                    tracing::error!(
                        "purge of a change in table '{}' failed: {error}",
                        table.def().name
                    );
                    purged.push((ptr, record));
                }
            }
        }
        progress |= !purged.is_empty();
        done.push(tarn_txn::PurgeItem {
            seq: item.seq,
            first_lsn: item.first_lsn,
            records: purged,
            rolled_back: false,
        });
        if !busy.is_empty() {
            // A row was locked: its changes come back in a later round.
            ctx.sys.requeue(tarn_txn::PurgeItem {
                seq: item.seq,
                first_lsn: item.first_lsn,
                records: busy,
                rolled_back: false,
            });
        }
    }
    // The round's page changes and PURGED records must be durable before the
    // checkpoint may pass these transactions' undo (which recovery would need to
    // purge them again). If the log failed, the items stay marked as being purged,
    // which holds the checkpoint back (the log is stopped for good anyway). A round
    // that wrote nothing (changes that leave nothing behind) waits for nothing.
    if logged > Lsn::ZERO {
        ctx.wal.flush_to(logged)?;
    }
    ctx.sys.purged(&done);
    ctx.sys.purge_round_done(&firsts);
    Ok(if progress {
        Round::Progress
    } else {
        Round::Stuck
    })
}
