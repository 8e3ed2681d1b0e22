//! The transaction table: ids, the active set, read views, undo and the purge queue.
//!
//! A transaction gets an id only when it first writes or locks (read-only transactions
//! never enter the active set, so views stay small under a read-mostly load, as in
//! InnoDB). Commit order is a separate counter, the commit sequence: a view records the
//! sequence at its creation, and a committed transaction's undo joins the purge queue
//! tagged with its sequence. Purge may take it once no open view is older.
//!
//! # Invariants
//! 1. An id is in the active set from assignment until commit or rollback ends; the
//!    set and the sequence change together under one mutex, so a view sees each
//!    transaction either active or committed, never half-way.
//! 2. Ids and commit sequences only grow; ids are unique across restarts (the first id
//!    after recovery is above every id in the log and in the checkpoint).
//! 3. A transaction's undo is never dropped while a view opened before its commit (or
//!    rollback) is open: readers of such views may still walk to it.

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use parking_lot::Mutex;
use tarn_common::settings::IsolationLevel;
use tarn_common::{Error, Lsn, Result, limits};

use crate::TrxId;
use crate::undo::{UndoKind, UndoRecord, UndoStore};
use crate::view::{ReadView, ViewRegistry};

/// One transaction's state. Owned by its session; the table only knows its id.
pub struct Trx {
    id: TrxId,
    pub isolation: IsolationLevel,
    pub read_only: bool,
    view: Option<ReadView>,
    /// Every change, in order, with its roll pointer (0 for inserts).
    undo: Vec<(u64, Arc<UndoRecord>)>,
    undo_bytes: u64,
    savepoints: Vec<(String, usize)>,
    statement_start: usize,
    next_undo_no: u64,
    /// The log position before the transaction's first record.
    first_lsn: Lsn,
    /// Rows changed, the deadlock victim rule's measure of work.
    pub rows_changed: u64,
}

impl Trx {
    /// 0 until the transaction first writes or locks.
    pub fn id(&self) -> TrxId {
        self.id
    }

    /// The number of changes recorded so far (a position for savepoints).
    pub fn undo_len(&self) -> usize {
        self.undo.len()
    }

    /// The log position before the transaction's first record that recovery still
    /// needs (see [`TrxSys::carry_first_lsn`]); `Lsn::ZERO` until it has an id.
    pub fn first_lsn(&self) -> Lsn {
        self.first_lsn
    }

    /// Bytes of the changes not taken back (about their size in the log too).
    pub fn undo_bytes(&self) -> u64 {
        self.undo_bytes
    }

    /// The changes not taken back, oldest first.
    pub fn undo_records(&self) -> impl Iterator<Item = &Arc<UndoRecord>> {
        self.undo.iter().map(|(_, record)| record)
    }

    /// True if the transaction changed anything.
    pub fn has_changes(&self) -> bool {
        !self.undo.is_empty()
    }

    /// Marks the start of a statement: a failing statement rolls back to here.
    pub fn begin_statement(&mut self) {
        self.statement_start = self.undo.len();
    }

    /// Where the current statement started.
    pub fn statement_start(&self) -> usize {
        self.statement_start
    }

    /// Sets (or moves) a savepoint at the current position.
    pub fn savepoint(&mut self, name: &str) -> Result<()> {
        self.savepoints
            .retain(|(n, _)| !n.eq_ignore_ascii_case(name));
        if self.savepoints.len() >= limits::SAVEPOINTS_PER_TRX_MAX {
            return Err(Error::OutOfResources(format!(
                "a transaction may hold at most {} savepoints",
                limits::SAVEPOINTS_PER_TRX_MAX
            )));
        }
        self.savepoints.push((name.to_string(), self.undo.len()));
        Ok(())
    }

    /// The position of savepoint `name`; later savepoints are forgotten (as MySQL does
    /// on ROLLBACK TO), the named one stays.
    pub fn savepoint_position(&mut self, name: &str) -> Result<usize> {
        let index = self
            .savepoints
            .iter()
            .rposition(|(n, _)| n.eq_ignore_ascii_case(name))
            .ok_or_else(|| Error::UnknownSavepoint(name.to_string()))?;
        self.savepoints.truncate(index + 1);
        Ok(self.savepoints[index].1)
    }

    /// RELEASE SAVEPOINT: forgets `name` and the savepoints after it.
    pub fn release_savepoint(&mut self, name: &str) -> Result<()> {
        let index = self
            .savepoints
            .iter()
            .rposition(|(n, _)| n.eq_ignore_ascii_case(name))
            .ok_or_else(|| Error::UnknownSavepoint(name.to_string()))?;
        self.savepoints.truncate(index);
        Ok(())
    }

    /// The changes after `position`, newest first, removed from the transaction: the
    /// caller undoes them and hands them to [`TrxSys::retire_undo`].
    pub fn take_undo_after(&mut self, position: usize) -> Vec<(u64, Arc<UndoRecord>)> {
        let position = position.min(self.undo.len());
        let mut taken = self.undo.split_off(position);
        taken.reverse();
        for (_, record) in &taken {
            self.undo_bytes -= record.size_bytes();
        }
        self.statement_start = self.statement_start.min(position);
        taken
    }

    /// The view of this transaction, if one is open.
    pub fn view(&self) -> Option<&ReadView> {
        self.view.as_ref()
    }

    /// Closes the view (READ COMMITTED does at each statement's end).
    pub fn close_view(&mut self) {
        self.view = None;
    }
}

/// Committed (or rolled-back) undo waiting for purge.
pub struct PurgeItem {
    pub seq: u64,
    /// The log position before the transaction's first record: checkpoints stay at or
    /// before it until the item is purged, so recovery can find its undo again.
    pub first_lsn: Lsn,
    /// Roll pointers and records, oldest first.
    pub records: Vec<(u64, Arc<UndoRecord>)>,
    /// Rolled back: the records only need dropping from the store.
    pub rolled_back: bool,
}

struct SysState {
    next_id: TrxId,
    /// Active ids with the LSN before their first log record.
    active: BTreeMap<TrxId, Lsn>,
    /// The ids of `active`, sorted, as the views opened since it last changed share
    /// them (`None` after a change: rebuilt by the next view). Opening a view then
    /// costs a reference count under the mutex, not a copy of the active set: with
    /// hundreds of clients that copy, made by every reader under this one mutex, was
    /// where they queued.
    active_ids: Option<Arc<[TrxId]>>,
    commit_seq: u64,
}

/// Counters for the stats views.
#[derive(Clone, Copy, Debug, Default, serde::Serialize)]
pub struct TrxStats {
    pub active: usize,
    pub views_open: usize,
    pub commits: u64,
    pub rollbacks: u64,
    /// Transactions whose undo waits for purge (or is being purged), and its size.
    pub purge_backlog_trx: usize,
    pub purge_backlog_bytes: u64,
    pub undo_bytes: u64,
}

/// The transaction table.
pub struct TrxSys {
    state: Mutex<SysState>,
    views: Arc<ViewRegistry>,
    pub undo: UndoStore,
    purge: Mutex<VecDeque<PurgeItem>>,
    /// `purge.len()`, readable without the mutex (every commit reads it).
    purge_queued: AtomicUsize,
    /// First LSNs of items purge has taken and not yet finished (with counts): the
    /// checkpoint must not pass them either.
    purging: Mutex<BTreeMap<Lsn, usize>>,
    purge_bytes: AtomicU64,
    commits: AtomicU64,
    rollbacks: AtomicU64,
}

impl TrxSys {
    /// A table whose first id is `first_id` (above every id already used) and whose
    /// first roll pointer is `first_roll_ptr` (likewise).
    pub fn new(first_id: TrxId, first_roll_ptr: u64) -> TrxSys {
        TrxSys {
            state: Mutex::new(SysState {
                next_id: first_id.max(1),
                active: BTreeMap::new(),
                active_ids: None,
                commit_seq: 1,
            }),
            views: Arc::new(ViewRegistry::default()),
            undo: UndoStore::starting_at(first_roll_ptr),
            purge: Mutex::new(VecDeque::new()),
            purge_queued: AtomicUsize::new(0),
            purging: Mutex::new(BTreeMap::new()),
            purge_bytes: AtomicU64::new(0),
            commits: AtomicU64::new(0),
            rollbacks: AtomicU64::new(0),
        }
    }

    pub fn begin(&self, isolation: IsolationLevel, read_only: bool) -> Trx {
        Trx {
            id: 0,
            isolation,
            read_only,
            view: None,
            undo: Vec::new(),
            undo_bytes: 0,
            savepoints: Vec::new(),
            statement_start: 0,
            next_undo_no: 0,
            first_lsn: Lsn::ZERO,
            rows_changed: 0,
        }
    }

    /// Gives `trx` its id if it has none; `log_position` is the log's current LSN (at
    /// or before the transaction's first record), which holds back checkpoints.
    pub fn assign_id(&self, trx: &mut Trx, log_position: Lsn) -> Result<TrxId> {
        if trx.id != 0 {
            return Ok(trx.id);
        }
        let mut state = self.state.lock();
        if state.active.len() >= limits::TRX_ACTIVE_MAX {
            return Err(Error::OutOfResources(format!(
                "{} transactions are active, the most allowed",
                limits::TRX_ACTIVE_MAX
            )));
        }
        let id = state.next_id;
        state.next_id += 1;
        state.active.insert(id, log_position);
        state.active_ids = None;
        trx.id = id;
        // A view opened before the first change must see the transaction's changes.
        if let Some(view) = trx.view.as_mut() {
            view.set_creator(id);
        }
        trx.first_lsn = log_position;
        Ok(id)
    }

    /// Moves `trx`'s first LSN up to `lsn`, once the caller has logged again, from
    /// `lsn` on, every undo record recovery would need to roll `trx` back (the log
    /// before `lsn` then holds nothing of `trx` that recovery must read, so checkpoints
    /// may pass it). `lsn` never moves back.
    pub fn carry_first_lsn(&self, trx: &mut Trx, lsn: Lsn) {
        assert!(trx.id != 0, "only a transaction with an id holds log back");
        assert!(lsn >= trx.first_lsn, "a first LSN never moves back");
        self.state.lock().active.insert(trx.id, lsn);
        trx.first_lsn = lsn;
    }

    /// The next id to be handed out (stored in checkpoints).
    pub fn next_id(&self) -> TrxId {
        self.state.lock().next_id
    }

    /// The LSN before the first record of the oldest active transaction.
    pub fn oldest_active_lsn(&self) -> Option<Lsn> {
        self.state.lock().active.values().min().copied()
    }

    /// Opens `trx`'s view if it has none, and returns it.
    pub fn ensure_view<'t>(&self, trx: &'t mut Trx) -> &'t ReadView {
        if trx.view.is_none() {
            trx.view = Some(self.open_view(trx.id));
        }
        trx.view.as_ref().expect("just opened")
    }

    /// A view as of now for transaction `creator` (0: none).
    pub fn open_view(&self, creator: TrxId) -> ReadView {
        let mut guard = self.state.lock();
        let state = &mut *guard;
        let active = state
            .active_ids
            .get_or_insert_with(|| state.active.keys().copied().collect())
            .clone();
        let (next_id, commit_seq) = (state.next_id, state.commit_seq);
        drop(guard);
        ReadView::new(creator, next_id, active, commit_seq, self.views.clone())
    }

    /// Records a change of `trx`; returns the roll pointer the new row version carries
    /// (0 for inserts). Fails if the transaction would exceed its undo bound.
    pub fn push_undo(
        &self,
        trx: &mut Trx,
        mut record: UndoRecord,
    ) -> Result<(u64, Arc<UndoRecord>)> {
        let size_bytes = record.size_bytes();
        if trx.undo_bytes + size_bytes > limits::TRX_UNDO_BYTES_MAX {
            return Err(Error::OutOfResources(format!(
                "the transaction's undo would exceed {} bytes; commit in smaller parts",
                limits::TRX_UNDO_BYTES_MAX
            )));
        }
        record.undo_no = trx.next_undo_no;
        trx.next_undo_no += 1;
        let record = Arc::new(record);
        let roll_ptr = if record.kind == UndoKind::Insert {
            0
        } else {
            self.undo.put(record.clone())
        };
        trx.undo_bytes += size_bytes;
        trx.undo.push((roll_ptr, record.clone()));
        trx.rows_changed += 1;
        Ok((roll_ptr, record))
    }

    /// Ends `trx` as committed: its changes become visible to views opened from now on,
    /// and its undo (but inserts) joins the purge queue.
    pub fn commit(&self, mut trx: Trx) {
        trx.view = None;
        if trx.id == 0 {
            return;
        }
        let records: Vec<(u64, Arc<UndoRecord>)> = std::mem::take(&mut trx.undo)
            .into_iter()
            .filter(|(ptr, _)| *ptr != 0)
            .collect();
        self.finish(trx.id, trx.first_lsn, records, false);
        self.commits.fetch_add(1, Ordering::Relaxed);
    }

    /// Hands undo records taken back by a rollback (whole or partial) to purge, which
    /// drops them from the store once no view that might still walk to them is open.
    pub fn retire_undo(&self, records: Vec<(u64, Arc<UndoRecord>)>) {
        let records: Vec<_> = records.into_iter().filter(|(p, _)| *p != 0).collect();
        if records.is_empty() {
            return;
        }
        let seq = self.state.lock().commit_seq;
        self.enqueue(PurgeItem {
            seq,
            first_lsn: Lsn::ZERO,
            records,
            rolled_back: true,
        });
    }

    /// Ends `trx` after its changes were rolled back (and retired).
    pub fn end_rolled_back(&self, mut trx: Trx) {
        trx.view = None;
        debug_assert!(trx.undo.is_empty(), "roll back every change first");
        if trx.id != 0 {
            self.finish(trx.id, trx.first_lsn, Vec::new(), true);
            self.rollbacks.fetch_add(1, Ordering::Relaxed);
        }
    }

    fn finish(
        &self,
        id: TrxId,
        first_lsn: Lsn,
        records: Vec<(u64, Arc<UndoRecord>)>,
        rolled_back: bool,
    ) {
        // The item joins the purge queue before the id leaves the active set, so a
        // checkpoint always sees the transaction's first LSN in one or the other.
        let mut state = self.state.lock();
        let seq = state.commit_seq;
        state.commit_seq += 1;
        if !records.is_empty() {
            self.enqueue(PurgeItem {
                seq,
                first_lsn,
                records,
                rolled_back,
            });
        }
        state.active.remove(&id);
        state.active_ids = None;
    }

    /// Queues for purge the changes of a transaction that committed before a crash
    /// and was not purged (found in the log by recovery).
    pub fn requeue_recovered(&self, first_lsn: Lsn, records: Vec<UndoRecord>) {
        let records: Vec<(u64, Arc<UndoRecord>)> = records
            .into_iter()
            .filter(|r| r.kind != UndoKind::Insert)
            .map(|r| {
                let r = Arc::new(r);
                (self.undo.put(r.clone()), r)
            })
            .collect();
        if records.is_empty() {
            return;
        }
        let seq = {
            let mut state = self.state.lock();
            let seq = state.commit_seq;
            state.commit_seq += 1;
            seq
        };
        self.enqueue(PurgeItem {
            seq,
            first_lsn,
            records,
            rolled_back: false,
        });
    }

    /// The log position before the first record of the oldest transaction whose
    /// changes purge has not finished (checkpoints stay at or before it).
    pub fn oldest_unpurged_lsn(&self) -> Option<Lsn> {
        let queue = self.purge.lock();
        let queued = queue
            .iter()
            .filter(|item| !item.rolled_back)
            .map(|item| item.first_lsn)
            .min();
        let purging = self.purging.lock().keys().next().copied();
        queued.into_iter().chain(purging).min()
    }

    fn enqueue(&self, item: PurgeItem) {
        let bytes: u64 = item.records.iter().map(|(_, r)| r.size_bytes()).sum();
        self.purge_bytes.fetch_add(bytes, Ordering::Relaxed);
        let mut queue = self.purge.lock();
        queue.push_back(item);
        self.purge_queued.store(queue.len(), Ordering::Relaxed);
    }

    /// Committed transactions queued for purge (not counting those being purged).
    pub fn purge_queued(&self) -> usize {
        self.purge_queued.load(Ordering::Relaxed)
    }

    /// Up to `max` queued items no open view can need, oldest first. The caller purges
    /// them, then calls [`TrxSys::purged`].
    pub fn purge_ready(&self, max: usize) -> Vec<PurgeItem> {
        let horizon = self.views.oldest_seq().unwrap_or(u64::MAX);
        let mut queue = self.purge.lock();
        let mut purging = self.purging.lock();
        let mut out = Vec::new();
        while out.len() < max && queue.front().is_some_and(|item| item.seq < horizon) {
            let item = queue.pop_front().expect("checked");
            if !item.rolled_back {
                *purging.entry(item.first_lsn).or_insert(0) += 1;
            }
            out.push(item);
        }
        self.purge_queued.store(queue.len(), Ordering::Relaxed);
        out
    }

    /// Ends a purge round: the items `purge_ready` returned with these first LSNs (the
    /// ones not rolled back) are purged or requeued now.
    pub fn purge_round_done(&self, first_lsns: &[Lsn]) {
        let mut purging = self.purging.lock();
        for lsn in first_lsns {
            if let Some(count) = purging.get_mut(lsn) {
                *count -= 1;
                if *count == 0 {
                    purging.remove(lsn);
                }
            }
        }
    }

    /// Puts back records purge could not process yet (their rows were locked). Their
    /// bytes are still counted in the backlog.
    pub fn requeue(&self, item: PurgeItem) {
        let mut queue = self.purge.lock();
        queue.push_back(item);
        self.purge_queued.store(queue.len(), Ordering::Relaxed);
    }

    /// Drops purged items' records from the store.
    pub fn purged(&self, items: &[PurgeItem]) {
        for item in items {
            for (ptr, record) in &item.records {
                self.undo.remove(*ptr);
                self.purge_bytes
                    .fetch_sub(record.size_bytes(), Ordering::Relaxed);
            }
        }
    }

    /// Undo bytes waiting for purge.
    pub fn purge_backlog_bytes(&self) -> u64 {
        self.purge_bytes.load(Ordering::Relaxed)
    }

    pub fn stats(&self) -> TrxStats {
        TrxStats {
            active: self.state.lock().active.len(),
            views_open: self.views.open_count(),
            commits: self.commits.load(Ordering::Relaxed),
            rollbacks: self.rollbacks.load(Ordering::Relaxed),
            purge_backlog_trx: self.purge.lock().len()
                + self.purging.lock().values().sum::<usize>(),
            purge_backlog_bytes: self.purge_backlog_bytes(),
            undo_bytes: self.undo.size_bytes(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn update(trx_id: TrxId, key: &[u8]) -> UndoRecord {
        UndoRecord {
            trx_id,
            undo_no: 0,
            kind: UndoKind::Update,
            table_id: 16,
            key: key.to_vec(),
            old_row: vec![0; 20],
            added_entries: Vec::new(),
            same_entries: false,
        }
    }

    #[test]
    fn views_see_commits_that_precede_them_and_purge_waits_for_old_views() {
        let sys = TrxSys::new(100, 1);
        let mut writer = sys.begin(IsolationLevel::RepeatableRead, false);
        let id = sys.assign_id(&mut writer, Lsn(5)).unwrap();
        assert_eq!(id, 100);
        assert_eq!(sys.oldest_active_lsn(), Some(Lsn(5)));
        let (ptr, _) = sys.push_undo(&mut writer, update(id, b"a")).unwrap();
        assert_ne!(ptr, 0);
        let before = sys.open_view(0);
        assert!(!before.sees(id));
        sys.commit(writer);
        let after = sys.open_view(0);
        assert!(after.sees(id) && !before.sees(id));
        assert_eq!(sys.oldest_active_lsn(), None);
        // The old view may still walk to the undo: purge must wait for it.
        assert!(sys.purge_ready(10).is_empty());
        drop(before);
        let items = sys.purge_ready(10);
        assert_eq!(items.len(), 1);
        assert!(sys.undo.get(ptr).is_some());
        sys.purged(&items);
        assert!(sys.undo.get(ptr).is_none());
        assert_eq!(sys.stats().purge_backlog_bytes, 0);
        drop(after);
    }

    #[test]
    fn savepoints_and_statements_take_back_only_later_changes() {
        let sys = TrxSys::new(1, 1);
        let mut trx = sys.begin(IsolationLevel::RepeatableRead, false);
        let id = sys.assign_id(&mut trx, Lsn(1)).unwrap();
        sys.push_undo(&mut trx, update(id, b"1")).unwrap();
        trx.savepoint("s1").unwrap();
        sys.push_undo(&mut trx, update(id, b"2")).unwrap();
        trx.begin_statement();
        sys.push_undo(&mut trx, update(id, b"3")).unwrap();
        let stmt = trx.take_undo_after(trx.statement_start());
        assert_eq!(stmt.len(), 1);
        assert_eq!(stmt[0].1.key, b"3");
        sys.retire_undo(stmt);
        let position = trx.savepoint_position("S1").unwrap();
        let back = trx.take_undo_after(position);
        assert_eq!(
            back.iter().map(|(_, r)| r.key.clone()).collect::<Vec<_>>(),
            vec![b"2".to_vec()]
        );
        sys.retire_undo(back);
        assert!(trx.savepoint_position("nope").is_err());
        trx.release_savepoint("s1").unwrap();
        assert!(trx.savepoint_position("s1").is_err());
        let rest = trx.take_undo_after(0);
        sys.retire_undo(rest);
        sys.end_rolled_back(trx);
        assert_eq!(sys.stats().active, 0);
        let items = sys.purge_ready(10);
        sys.purged(&items);
        assert_eq!(sys.undo.size_bytes(), 0);
    }
}
