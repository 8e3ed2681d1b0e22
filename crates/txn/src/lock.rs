//! The lock manager: table intention locks and InnoDB-style record locks, with FIFO or
//! CATS scheduling of waiters (technique S3) and deadlock detection.
//!
//! # What a lock is
//!
//! A lock is a transaction's right to read or change something, held until the
//! transaction ends (or, for READ COMMITTED reads of rows that did not match, until
//! [`LockManager::release_record`]). Locks are on *names*: a table (`table_id`) or an
//! index record (`index_id` plus the encoded index key, whose bytes compare in index
//! order; the lock manager only hashes and compares them for equality). A record lock
//! may cover the record, the gap before it (between it and the previous key in the
//! index), or both, as InnoDB's do; to lock the gap above the largest key, callers lock
//! a supremum key of their choosing with [`RecordLockKind::GapOnly`].
//!
//! # Compatibility
//!
//! Table locks (a request waits where the matrix says "wait"):
//!
//! ```text
//!   held →   IS    IX    S     X
//!   IS       ok    ok    ok    wait
//!   IX       ok    ok    wait  wait
//!   S        ok    wait  ok    wait
//!   X        wait  wait  wait  wait
//! ```
//!
//! Record locks, as InnoDB's `lock_rec_has_to_wait`:
//!
//! ```text
//!   request ↓ / held →   S rec   X rec   gap (S or X)   insert intention
//!   S record part        ok      wait    ok             ok
//!   X record part        wait    wait    ok             ok
//!   gap part             ok      ok      ok             ok
//!   insert intention     ok      ok      wait           ok
//! ```
//!
//! A next-key lock is a record part plus a gap part; a request waits when any of its
//! parts must. So gap locks never conflict with each other and never wait; an insert
//! intention waits for other transactions' gap and next-key locks on the key after the
//! insert position; nothing waits for an insert intention (a granted one is not even
//! kept). A transaction never waits for itself. A request the transaction already holds
//! (or holds something stronger than: X covers S, table X covers all, S and IX cover IS)
//! returns at once; otherwise only the missing part is requested, so an S holder
//! asking for X waits only for the other holders. It does not queue behind an earlier
//! request that itself waits for the asker's granted lock (that request could not go
//! first anyway). So the MySQL manual's deadlock example (A holds S, B waits for X, A
//! asks for X) grants A at once here, where the manual shows a deadlock: deliberate.
//!
//! NOWAIT and SKIP LOCKED requests fail or skip where a request would wait, except
//! when only brief holders block them ([`LockManager::register_brief`]: purge, which
//! holds a row for a moment and never waits): then they retry for a moment
//! (`LOCK_BRIEF_WAIT_MS`), as for a latch, without queueing.
//!
//! # Structure
//!
//! The lock table is split into [`LOCK_TABLE_SHARDS`] shards by a hash of the name;
//! each shard is a hash map from name to a queue (`queue.rs`) under its own latch
//! (`lock.shard`, one instance per shard), so requests on unrelated records do not
//! contend. A queue holds one granted entry per transaction (the union of its modes) and
//! the waiting requests in arrival order. An uncontended request takes one shard latch
//! and nothing else.
//!
//! When a request must wait, the waits-for graph (`graph.rs`, one latch,
//! `lock.wait_graph`) gets a node for the transaction with edges to every transaction
//! it waits for. The graph latch is taken only on that contended path: a wait begins or
//! ends, or a queue with waiters changes. Lock order: shard, then graph, then a
//! transaction's parker; no thread holds two shards (except
//! [`LockManager::check_invariants`], which takes them all in index order).
//!
//! # Invariants
//!
//! 1. The granted entries of a queue are pairwise compatible (a granted lock is
//!    compatible with every other transaction's granted lock on the name).
//! 2. A request waits only if it has a blocker: another transaction's conflicting
//!    granted entry, or an earlier conflicting waiting request that is not itself
//!    waiting for the requester's granted entry. A waiting request with no blocker is
//!    granted in the same critical section that removed its last blocker. (One
//!    exception, brief: a deadlock victim's cancelled request blocks nobody but stays
//!    queued until the victim's thread wakes and removes it, and only then are the
//!    requests behind it reconsidered.)
//! 3. Every waiting transaction waits for exactly one request, has exactly one node in
//!    the graph, and the node's edges are the request's blockers (with the same
//!    exception for edges to a cancelled request).
//! 4. The waits-for graph has no cycle: a cycle can only be closed by a new wait, and
//!    the requester searches for one before it waits.
//! 5. Every transaction's CATS weight is 1 plus the weights of the waiting
//!    transactions that credit theirs to it (see below).
//! 6. A transaction's list of held locks names exactly the queues where it has a
//!    granted entry.
//!
//! # Scheduling (S3)
//!
//! When a granted entry goes away, or a waiter leaves, the queue's waiters are
//! considered for a grant (`Queue::schedule` in `queue.rs`):
//!
//! - FIFO grants waiting requests in arrival order, each one that has no blocker. A
//!   later request that conflicts with an earlier one still waiting stays, so a waiting
//!   X is not starved by a stream of S requests.
//! - CATS (Tian et al., VLDB 2018; MySQL 8.0's default) grants the request whose
//!   transaction the most others depend on. A transaction's weight is 1 + the number of
//!   transactions waiting for locks it holds, directly or transitively: granting it
//!   first unblocks the most work. Compatible requests that would be granted together
//!   (a group of S requests) are scored as their summed weight divided by
//!   f(k) = 1 + log2(k), an estimate of how much longer k holders take to all finish
//!   than one does (an exclusive request has k = 1). With weights summing to 8 over
//!   three S requests, f(3) ≈ 2.58 gives 3.1, which loses to an X request of weight 5,
//!   as in the S3 example (which uses f(3) = 2). Ties go to the oldest request.
//!
//! S3 found CATS slower than FIFO at low contention because computing weights cost
//! more than it saved. Here weights are maintained incrementally in the graph: each
//! waiting transaction credits its weight to one blocker (a granted holder when there
//! is one), and when a wait begins, ends or changes blocker, the delta is added up that
//! chain of blockers (a forest, usually one or two deep). Nothing is computed for a
//! request that does not wait, and a queue with at most one waiter takes FIFO's code
//! path, so at low contention CATS does exactly FIFO's work.
//!
//! Weights are kept under both policies (the graph latch is held anyway to record the
//! wait's edges), so switching policy at runtime needs no recomputation and
//! [`LockTrx::weight`] means the same under FIFO.
//!
//! Starvation: a waiting request that CATS passes over in favour of a younger one in
//! [`LOCK_CATS_OVERTAKES_MAX`](tarn_common::limits::LOCK_CATS_OVERTAKES_MAX) grant
//! rounds makes its queue schedule FIFO until it is granted. The bound counts rounds,
//! not time, so it holds whatever the lock hold times.
//!
//! # Timeouts and deadlocks
//!
//! A waiting thread sleeps on its transaction's condition variable (it never spins)
//! until granted, cancelled, or the lock wait timeout passes. The timeout is the
//! session's (`innodb_lock_wait_timeout`, kept in its [`StatementInterrupt`] and read
//! when the wait begins: [`LockTrx::wait_timeout`]) for a transaction registered with
//! one, else the engine-wide [`LockManager::wait_timeout`] (internal transactions:
//! DDL, purge, the engine used directly). On timeout it removes its
//! own request, wakes whoever that request held back, and returns
//! [`Error::LockWaitTimeout`]; the transaction keeps every other lock (rolling back the
//! statement or the transaction is the caller's business). A transaction registered
//! with its session's [`StatementInterrupt`] ([`LockManager::register_interruptible`])
//! also ends its wait that way when the waiting statement must stop: with
//! [`Error::QueryInterrupted`] (1317) once it is killed (KILL QUERY, or a client that
//! disconnected while its statement waited), with [`Error::MaxExecutionTimeExceeded`]
//! (3024) once its `max_execution_time` deadline passes. The waiter sleeps no later
//! than the earliest of the lock wait timeout, the statement's deadline and its next
//! look at the kill flag (every
//! [`LOCK_WAIT_INTERRUPT_CHECK_MS`](tarn_common::limits::LOCK_WAIT_INTERRUPT_CHECK_MS):
//! whoever kills knows nothing of locks and cannot wake it), so a deadline ends the
//! wait when it passes, not at the next look. An interrupted wait counts as no timeout.
//!
//! Before a request waits, the requester searches the graph from itself for a path
//! back to itself, visiting at most
//! [`DEADLOCK_SEARCH_NODES_MAX`](tarn_common::limits::DEADLOCK_SEARCH_NODES_MAX)
//! transactions (a longer search counts as a deadlock with the requester as victim, as
//! in InnoDB). On a cycle
//! the victim is the transaction with the least work ([`LockTrx::add_work`]), ties going
//! to the requester. A requester victim returns [`Error::Deadlock`] without waiting;
//! another victim is removed from the graph and woken, and its call returns
//! [`Error::Deadlock`]; its caller rolls it back and calls [`LockManager::release_all`].
//! The search repeats until no cycle remains.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use tarn_common::latch::{CountedMutex, LatchRegistry};
use tarn_common::limits::{LOCK_REQUESTS_MAX, LOCK_TABLE_SHARDS};
use tarn_common::settings::LockScheduling;
use tarn_common::{Error, Result, StatementInterrupt};

mod graph;
mod mode;
mod queue;
mod trx;

#[cfg(test)]
mod tests;

pub use mode::{RecordLockKind, RecordMode, TableMode};
pub use trx::LockTrx;

use graph::{DeadlockSearch, WaitGraph, WaitNode, choose_victim};
use mode::Mode;
use queue::{GrantRule, Queue, WaitingLock};
use trx::WaitState;

/// Entries (granted plus waiting) one shard may hold: the global bound split evenly,
/// since names hash uniformly over shards.
const SHARD_ENTRIES_MAX: usize = LOCK_REQUESTS_MAX / LOCK_TABLE_SHARDS;

/// What to do when a lock cannot be granted at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WaitPolicy {
    /// Wait (up to the lock wait timeout).
    Wait,
    /// Fail with [`Error::LockNowait`] (`FOR UPDATE NOWAIT`).
    NoWait,
    /// Return [`LockOutcome::Skipped`] (`FOR UPDATE SKIP LOCKED`).
    SkipLocked,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LockOutcome {
    Granted,
    /// The lock was not free and the policy was [`WaitPolicy::SkipLocked`].
    Skipped,
}

/// Counters since creation or the last [`LockManager::reset_stats`]. Every request
/// ends in exactly one of `already_held`, `granted_immediately`, `waits`,
/// `nowait_failures`, `skipped`, or an immediate deadlock or out-of-resources error.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LockStats {
    /// `lock_table` and `lock_record` calls.
    pub requests: u64,
    /// Requests for a lock the transaction already held (or held a stronger one of).
    pub already_held: u64,
    pub granted_immediately: u64,
    /// Requests that waited.
    pub waits: u64,
    pub wait_ns_total: u64,
    pub timeouts: u64,
    /// Deadlock victims chosen (requesters and others).
    pub deadlocks: u64,
    pub nowait_failures: u64,
    pub skipped: u64,
    /// Waiting requests granted in arrival order (FIFO, or CATS with one waiter).
    pub grants_fifo: u64,
    /// Waiting requests granted by CATS weight.
    pub grants_cats: u64,
    /// Waiting requests granted while CATS fell back to arrival order for a request
    /// overtaken [`LOCK_CATS_OVERTAKES_MAX`](tarn_common::limits::LOCK_CATS_OVERTAKES_MAX) times.
    pub grants_starvation: u64,
    /// Entries (granted plus waiting) in the lock table now.
    pub entries: u64,
    /// Transactions waiting now.
    pub waiting: u64,
}

/// What a waiting transaction waits for, for the INFORMATION_SCHEMA views.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LockTarget {
    Table { table_id: u32 },
    Record { index_id: u32, key: Vec<u8> },
}

/// One waiting transaction (MySQL's `INNODB_TRX` row for a trx in `LOCK WAIT`).
#[derive(Clone, Debug)]
pub struct LockWaitInfo {
    pub trx_id: u64,
    /// `TRX_SCHEDULE_WEIGHT`.
    pub weight: u64,
    pub work: u64,
    pub target: LockTarget,
    /// As `performance_schema.data_locks.LOCK_MODE` shows it ("X,REC_NOT_GAP").
    pub mode: String,
    /// The transactions it waits for.
    pub blocking_trx_ids: Vec<u64>,
    pub wait_ns: u64,
}

/// A lockable name: a table or an index record.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum LockName {
    Table(u32),
    Record { index_id: u32, key: Box<[u8]> },
}

/// A borrowed [`LockName`], so that lookups do not allocate.
#[derive(Clone, Copy, Debug)]
pub(crate) enum LockRef<'a> {
    Table(u32),
    Record(u32, &'a [u8]),
}

impl LockName {
    pub(crate) fn as_ref(&self) -> LockRef<'_> {
        match self {
            LockName::Table(table_id) => LockRef::Table(*table_id),
            LockName::Record { index_id, key } => LockRef::Record(*index_id, key),
        }
    }

    fn target(&self) -> LockTarget {
        match self {
            LockName::Table(table_id) => LockTarget::Table {
                table_id: *table_id,
            },
            LockName::Record { index_id, key } => LockTarget::Record {
                index_id: *index_id,
                key: key.to_vec(),
            },
        }
    }
}

impl LockRef<'_> {
    pub(crate) fn to_name(self) -> LockName {
        match self {
            LockRef::Table(table_id) => LockName::Table(table_id),
            LockRef::Record(index_id, key) => LockName::Record {
                index_id,
                key: key.into(),
            },
        }
    }

    /// FNV-1a over the name, folded to a shard index.
    fn shard_index(self) -> usize {
        let mut hash = 0xcbf2_9ce4_8422_2325u64;
        let mut add = |byte: u8| {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
        };
        let (tag, id, key): (u8, u32, &[u8]) = match self {
            LockRef::Table(table_id) => (0, table_id, &[]),
            LockRef::Record(index_id, key) => (1, index_id, key),
        };
        add(tag);
        id.to_le_bytes().into_iter().for_each(&mut add);
        key.iter().copied().for_each(&mut add);
        ((hash ^ (hash >> 32)) % LOCK_TABLE_SHARDS as u64) as usize
    }
}

#[derive(Default)]
struct QueueMaps {
    tables: HashMap<u32, Queue>,
    records: HashMap<u32, HashMap<Box<[u8]>, Queue>>,
}

impl QueueMaps {
    fn get_mut(&mut self, name: LockRef<'_>) -> Option<&mut Queue> {
        match name {
            LockRef::Table(table_id) => self.tables.get_mut(&table_id),
            LockRef::Record(index_id, key) => self.records.get_mut(&index_id)?.get_mut(key),
        }
    }

    fn get_or_insert(&mut self, name: LockRef<'_>) -> &mut Queue {
        match name {
            LockRef::Table(table_id) => self.tables.entry(table_id).or_default(),
            LockRef::Record(index_id, key) => self
                .records
                .entry(index_id)
                .or_default()
                .entry(key.into())
                .or_default(),
        }
    }

    /// Drops the queue if it holds nothing, so the maps hold only live names.
    fn remove_if_empty(&mut self, name: LockRef<'_>) {
        match name {
            LockRef::Table(table_id) => {
                if self.tables.get(&table_id).is_some_and(Queue::is_empty) {
                    self.tables.remove(&table_id);
                }
            }
            LockRef::Record(index_id, key) => {
                let Some(index) = self.records.get_mut(&index_id) else {
                    return;
                };
                if index.get(key).is_some_and(Queue::is_empty) {
                    index.remove(key);
                    if index.is_empty() {
                        self.records.remove(&index_id);
                    }
                }
            }
        }
    }

    fn for_each(&self, mut visit: impl FnMut(LockRef<'_>, &Queue)) {
        for (table_id, queue) in &self.tables {
            visit(LockRef::Table(*table_id), queue);
        }
        for (index_id, index) in &self.records {
            for (key, queue) in index {
                visit(LockRef::Record(*index_id, key), queue);
            }
        }
    }
}

#[derive(Clone, Copy, Default)]
struct ShardCounters {
    requests: u64,
    already_held: u64,
    granted_immediately: u64,
    nowait_failures: u64,
    skipped: u64,
}

#[derive(Default)]
struct Shard {
    queues: QueueMaps,
    /// Granted plus waiting entries in `queues`.
    entries: usize,
    counters: ShardCounters,
}

#[derive(Default)]
struct WaitCounters {
    waits: AtomicU64,
    wait_ns_total: AtomicU64,
    timeouts: AtomicU64,
    deadlocks: AtomicU64,
    grants_fifo: AtomicU64,
    grants_cats: AtomicU64,
    grants_starvation: AtomicU64,
}

impl WaitCounters {
    fn reset(&self) {
        for counter in [
            &self.waits,
            &self.wait_ns_total,
            &self.timeouts,
            &self.deadlocks,
            &self.grants_fifo,
            &self.grants_cats,
            &self.grants_starvation,
        ] {
            counter.store(0, Ordering::Relaxed);
        }
    }
}

/// A request that was queued; [`LockManager::finish_wait`] waits for its outcome.
#[derive(Debug)]
pub(crate) struct PendingWait {
    name: LockName,
    started: Instant,
    deadline: Instant,
}

/// The first half of a request: done at once, or queued.
#[derive(Debug)]
pub(crate) enum Attempt {
    Done(LockOutcome),
    Waiting(PendingWait),
    /// A NOWAIT or SKIP LOCKED request that only brief holders block: the caller
    /// retries it (see [`LockManager::register_brief`]).
    BriefBusy,
}

/// The lock manager of one engine. See the module docs.
pub struct LockManager {
    shards: Box<[CountedMutex<Shard>]>,
    graph: CountedMutex<WaitGraph>,
    scheduling: AtomicU8,
    wait_timeout_ns: AtomicU64,
    counters: WaitCounters,
}

fn scheduling_code(scheduling: LockScheduling) -> u8 {
    match scheduling {
        LockScheduling::Fifo => 0,
        LockScheduling::Cats => 1,
    }
}

impl LockManager {
    pub fn new(
        scheduling: LockScheduling,
        wait_timeout: Duration,
        latches: &LatchRegistry,
    ) -> LockManager {
        let shards = (0..LOCK_TABLE_SHARDS)
            .map(|index| {
                CountedMutex::new(
                    Shard::default(),
                    latches.register("lock.shard", Some(index as u32)),
                )
            })
            .collect();
        LockManager {
            shards,
            graph: CountedMutex::new(
                WaitGraph::default(),
                latches.register("lock.wait_graph", None),
            ),
            scheduling: AtomicU8::new(scheduling_code(scheduling)),
            wait_timeout_ns: AtomicU64::new(duration_ns(wait_timeout)),
            counters: WaitCounters::default(),
        }
    }

    pub fn scheduling(&self) -> LockScheduling {
        match self.scheduling.load(Ordering::Relaxed) {
            0 => LockScheduling::Fifo,
            _ => LockScheduling::Cats,
        }
    }

    /// Takes effect at the next grant decision.
    pub fn set_scheduling(&self, scheduling: LockScheduling) {
        self.scheduling
            .store(scheduling_code(scheduling), Ordering::Relaxed);
    }

    /// The engine-wide lock wait timeout: that of every transaction whose session
    /// set none ([`LockTrx::wait_timeout`]).
    pub fn wait_timeout(&self) -> Duration {
        Duration::from_nanos(self.wait_timeout_ns.load(Ordering::Relaxed))
    }

    /// Takes effect for requests that begin waiting after the call, of transactions
    /// whose session set no timeout of its own.
    pub fn set_wait_timeout(&self, wait_timeout: Duration) {
        self.wait_timeout_ns
            .store(duration_ns(wait_timeout), Ordering::Relaxed);
    }

    /// Creates the lock state of a transaction. Ids must be unique among live
    /// transactions.
    pub fn register(&self, trx_id: u64) -> Arc<LockTrx> {
        Arc::new(LockTrx::new(trx_id, None))
    }

    /// [`LockManager::register`] for a background holder that takes locks only
    /// without waiting and keeps them for a moment (purge, which locks a row while it
    /// removes its old version). A NOWAIT or SKIP LOCKED request that only such
    /// holders block retries until they are gone (for at most `LOCK_BRIEF_WAIT_MS`),
    /// as for a latch: the row is not locked by any transaction, so it must neither
    /// fail (3572) nor be skipped. It never queues, so it cannot end up waiting for a
    /// transaction, and it cannot deadlock, since a brief holder never waits.
    pub fn register_brief(&self, trx_id: u64) -> Arc<LockTrx> {
        Arc::new(LockTrx::new_brief(trx_id))
    }

    /// [`LockManager::register`] for a transaction whose waits end when its running
    /// statement must stop: with error 1317 once `interrupt` is killed (KILL QUERY, a
    /// client that went away), with error 3024 once its deadline passes
    /// (`max_execution_time`). Its waits last `interrupt`'s lock wait timeout, if set,
    /// instead of the engine's.
    pub fn register_interruptible(
        &self,
        trx_id: u64,
        interrupt: Arc<StatementInterrupt>,
    ) -> Arc<LockTrx> {
        Arc::new(LockTrx::new(trx_id, Some(interrupt)))
    }

    /// Locks a table in an intention or whole-table mode.
    pub fn lock_table(
        &self,
        trx: &Arc<LockTrx>,
        table_id: u32,
        mode: TableMode,
        wait: WaitPolicy,
    ) -> Result<LockOutcome> {
        self.until_not_busy(wait, || {
            self.request(trx, LockRef::Table(table_id), Mode::table(mode), wait)
        })
        .and_then(|attempt| self.settle(trx, attempt))
    }

    /// Runs `request` again while it reports [`Attempt::BriefBusy`], for at most
    /// `LOCK_BRIEF_WAIT_MS`; then a NOWAIT request fails and a SKIP LOCKED one skips.
    /// Polling, not queueing: a queued request could be granted later, behind a
    /// transaction that arrived meanwhile, and then wait for that one.
    fn until_not_busy(
        &self,
        wait: WaitPolicy,
        mut request: impl FnMut() -> Result<Attempt>,
    ) -> Result<Attempt> {
        let deadline =
            Instant::now() + Duration::from_millis(tarn_common::limits::LOCK_BRIEF_WAIT_MS);
        loop {
            match request()? {
                Attempt::BriefBusy if Instant::now() < deadline => std::thread::sleep(
                    Duration::from_micros(tarn_common::limits::LOCK_BRIEF_RETRY_US),
                ),
                Attempt::BriefBusy => {
                    return match wait {
                        WaitPolicy::SkipLocked => Ok(Attempt::Done(LockOutcome::Skipped)),
                        _ => Err(Error::LockNowait),
                    };
                }
                attempt => return Ok(attempt),
            }
        }
    }

    /// The outcome of an attempt that is not busy: at once, or after its wait.
    fn settle(&self, trx: &Arc<LockTrx>, attempt: Attempt) -> Result<LockOutcome> {
        match attempt {
            Attempt::Done(outcome) => Ok(outcome),
            Attempt::Waiting(pending) => self.finish_wait(trx, pending),
            Attempt::BriefBusy => unreachable!("until_not_busy retries it"),
        }
    }

    /// Locks an index record (and/or the gap before it) for `trx`.
    pub fn lock_record(
        &self,
        trx: &Arc<LockTrx>,
        index_id: u32,
        key: &[u8],
        mode: RecordMode,
        wait: WaitPolicy,
    ) -> Result<LockOutcome> {
        self.until_not_busy(wait, || self.request_record(trx, index_id, key, mode, wait))
            .and_then(|attempt| self.settle(trx, attempt))
    }

    /// True when an insert intention by `trx` on `key` (the next key after the insert
    /// position) would wait: another transaction holds or waits for a gap or next-key
    /// lock on it. Takes one shard latch.
    pub fn conflicting_gap_holder(&self, trx: &Arc<LockTrx>, index_id: u32, key: &[u8]) -> bool {
        let name = LockRef::Record(index_id, key);
        let mut shard = self.shards[name.shard_index()].lock();
        shard.queues.get_mut(name).is_some_and(|queue| {
            queue.has_blocker(
                trx.id(),
                Mode::record(RecordMode::INSERT_INTENTION),
                queue.waiting.len(),
            )
        })
    }

    /// True if `trx` holds table `table_id` in `mode` or a stronger one (X covers
    /// all). Takes one shard latch.
    pub fn holds_table(&self, trx: &Arc<LockTrx>, table_id: u32, mode: TableMode) -> bool {
        let name = LockRef::Table(table_id);
        let mut shard = self.shards[name.shard_index()].lock();
        shard.queues.get_mut(name).is_some_and(|queue| {
            Mode::table(mode)
                .missing_from(queue.granted_mode(trx.id()))
                .is_empty()
        })
    }

    /// True if `trx` holds a lock of any mode on record `key` of `index_id` (so a
    /// caller can tell a lock it is about to take from one it already had). Only
    /// `trx`'s own calls change what it holds, so the answer stands until it next
    /// locks or releases. Takes one shard latch.
    pub fn holds_record(&self, trx: &Arc<LockTrx>, index_id: u32, key: &[u8]) -> bool {
        let name = LockRef::Record(index_id, key);
        let mut shard = self.shards[name.shard_index()].lock();
        shard
            .queues
            .get_mut(name)
            .is_some_and(|queue| !queue.granted_mode(trx.id()).is_empty())
    }

    /// Releases every lock `trx` holds on one record (READ COMMITTED's release of a
    /// non-matching row; an undone insert), granting waiters as the policy says.
    pub fn release_record(&self, trx: &Arc<LockTrx>, index_id: u32, key: &[u8]) {
        let name = LockRef::Record(index_id, key);
        let owned = {
            let mut held = trx.held.lock();
            let Some(position) = held.iter().rposition(|n| match n.as_ref() {
                LockRef::Record(i, k) => i == index_id && k == key,
                LockRef::Table(_) => false,
            }) else {
                return;
            };
            held.remove(position)
        };
        let mut shard = self.shards[name.shard_index()].lock();
        self.release_in_shard(&mut shard, trx, &owned);
    }

    /// Releases every lock of `trx` (at commit or rollback) and grants waiters as the
    /// policy says. Called by the trx's own thread, never in the middle of a wait (a
    /// deadlock victim calls it after its lock call returned [`Error::Deadlock`]).
    pub fn release_all(&self, trx: &Arc<LockTrx>) {
        assert_eq!(
            trx.state(),
            WaitState::Idle,
            "trx {} released its locks in the middle of a wait",
            trx.id()
        );
        let names = std::mem::take(&mut *trx.held.lock());
        let mut by_shard: Vec<(usize, LockName)> = names
            .into_iter()
            .map(|name| (name.as_ref().shard_index(), name))
            .collect();
        by_shard.sort_by_key(|(shard_index, _)| *shard_index);
        for group in by_shard.chunk_by(|a, b| a.0 == b.0) {
            let mut shard = self.shards[group[0].0].lock();
            for (_, name) in group {
                self.release_in_shard(&mut shard, trx, name);
            }
        }
    }

    pub fn stats(&self) -> LockStats {
        let mut stats = LockStats::default();
        for shard in self.shards.iter() {
            let shard = shard.lock();
            let counters = shard.counters;
            stats.requests += counters.requests;
            stats.already_held += counters.already_held;
            stats.granted_immediately += counters.granted_immediately;
            stats.nowait_failures += counters.nowait_failures;
            stats.skipped += counters.skipped;
            stats.entries += shard.entries as u64;
        }
        let load = |counter: &AtomicU64| counter.load(Ordering::Relaxed);
        stats.waits = load(&self.counters.waits);
        stats.wait_ns_total = load(&self.counters.wait_ns_total);
        stats.timeouts = load(&self.counters.timeouts);
        stats.deadlocks = load(&self.counters.deadlocks);
        stats.grants_fifo = load(&self.counters.grants_fifo);
        stats.grants_cats = load(&self.counters.grants_cats);
        stats.grants_starvation = load(&self.counters.grants_starvation);
        stats.waiting = self.graph.lock().nodes.len() as u64;
        stats
    }

    /// Zeroes the counters (not the gauges `entries` and `waiting`).
    pub fn reset_stats(&self) {
        for shard in self.shards.iter() {
            shard.lock().counters = ShardCounters::default();
        }
        self.counters.reset();
    }

    /// Every waiting transaction with its weight, ordered by trx id.
    pub fn waiting_transactions(&self) -> Vec<LockWaitInfo> {
        let graph = self.graph.lock();
        let mut waiting: Vec<LockWaitInfo> = graph
            .nodes
            .values()
            .map(|node| LockWaitInfo {
                trx_id: node.trx.id(),
                weight: node.trx.weight(),
                work: node.trx.work(),
                target: node.name.target(),
                mode: node.mode.to_string(),
                blocking_trx_ids: node.blockers.clone(),
                wait_ns: duration_ns(node.started.elapsed()),
            })
            .collect();
        waiting.sort_by_key(|info| info.trx_id);
        waiting
    }

    /// The first half of [`LockManager::lock_record`]: grants, fails, or queues the
    /// request without sleeping.
    pub(crate) fn request_record(
        &self,
        trx: &Arc<LockTrx>,
        index_id: u32,
        key: &[u8],
        mode: RecordMode,
        wait: WaitPolicy,
    ) -> Result<Attempt> {
        self.request(
            trx,
            LockRef::Record(index_id, key),
            Mode::record(mode),
            wait,
        )
    }

    fn request(
        &self,
        trx: &Arc<LockTrx>,
        name: LockRef<'_>,
        requested: Mode,
        wait: WaitPolicy,
    ) -> Result<Attempt> {
        assert_eq!(
            trx.state(),
            WaitState::Idle,
            "trx {} requested a lock while waiting",
            trx.id()
        );
        let mut guard = self.shards[name.shard_index()].lock();
        let shard = &mut *guard;
        shard.counters.requests += 1;
        let Some(queue) = shard.queues.get_mut(name) else {
            // Nobody holds or waits for this name: the uncontended path.
            if !requested.is_insert_intention_only() {
                if shard.entries >= SHARD_ENTRIES_MAX {
                    return Err(lock_table_full());
                }
                shard.queues.get_or_insert(name).add_granted(trx, requested);
                shard.entries += 1;
                trx.held.lock().push(name.to_name());
            }
            shard.counters.granted_immediately += 1;
            return Ok(Attempt::Done(LockOutcome::Granted));
        };
        let held = queue.granted_mode(trx.id());
        let missing = requested.missing_from(held);
        if missing.is_empty() {
            shard.counters.already_held += 1;
            return Ok(Attempt::Done(LockOutcome::Granted));
        }
        let entries_before = queue.len();
        // With waiters in the queue, their states and the graph must be read together.
        let mut graph = (!queue.waiting.is_empty()).then(|| self.graph.lock());
        if !queue.has_blocker(trx.id(), missing, queue.waiting.len()) {
            if held.is_empty()
                && !missing.is_insert_intention_only()
                && shard.entries >= SHARD_ENTRIES_MAX
            {
                return Err(lock_table_full());
            }
            self.grant_now(queue, name, trx, missing, graph.as_deref_mut());
            shard.entries = shard.entries + queue.len() - entries_before;
            shard.counters.granted_immediately += 1;
            return Ok(Attempt::Done(LockOutcome::Granted));
        }
        // Brief holders never wait (so waiting for one cannot deadlock).
        let brief = wait != WaitPolicy::Wait
            && !trx.is_brief()
            && queue.blocked_only_by_brief(trx.id(), missing, queue.waiting.len());
        match wait {
            WaitPolicy::Wait => {}
            _ if brief => return Ok(Attempt::BriefBusy),
            WaitPolicy::NoWait => {
                shard.counters.nowait_failures += 1;
                return Err(Error::LockNowait);
            }
            WaitPolicy::SkipLocked => {
                shard.counters.skipped += 1;
                return Ok(Attempt::Done(LockOutcome::Skipped));
            }
        }
        if shard.entries >= SHARD_ENTRIES_MAX {
            return Err(lock_table_full());
        }
        let mut graph = graph.unwrap_or_else(|| self.graph.lock());
        let mut blockers = Vec::new();
        let designated = loop {
            let designated = queue.blockers(trx.id(), missing, queue.waiting.len(), &mut blockers);
            if blockers.is_empty() {
                // A deadlock victim removed below was the last blocker.
                self.grant_now(queue, name, trx, missing, Some(&mut graph));
                shard.entries = shard.entries + queue.len() - entries_before;
                shard.counters.granted_immediately += 1;
                return Ok(Attempt::Done(LockOutcome::Granted));
            }
            match graph.find_deadlock(trx, &blockers) {
                DeadlockSearch::None => break designated,
                DeadlockSearch::TooDeep => {
                    self.counters.deadlocks.fetch_add(1, Ordering::Relaxed);
                    tracing::info!(
                        trx_id = trx.id(),
                        "deadlock search exceeded its bound; the requester is the victim"
                    );
                    return Err(Error::Deadlock);
                }
                DeadlockSearch::Cycle(cycle) => {
                    self.counters.deadlocks.fetch_add(1, Ordering::Relaxed);
                    let victim = choose_victim(&cycle).clone();
                    tracing::info!(
                        requester = trx.id(),
                        victim = victim.id(),
                        cycle = ?cycle.iter().map(|t| t.id()).collect::<Vec<_>>(),
                        "deadlock"
                    );
                    if victim.id() == trx.id() {
                        return Err(Error::Deadlock);
                    }
                    graph.remove(victim.id());
                    victim.set_state_and_wake(WaitState::Deadlock);
                }
            }
        };
        let seq = graph.next_seq();
        queue.waiting.push(WaitingLock {
            trx: trx.clone(),
            mode: missing,
            seq,
            overtaken_rounds: 0,
        });
        shard.entries += 1;
        trx.set_state(WaitState::Waiting);
        let started = Instant::now();
        graph.insert(WaitNode {
            trx: trx.clone(),
            name: name.to_name(),
            mode: missing,
            started,
            blockers,
            designated,
        });
        self.counters.waits.fetch_add(1, Ordering::Relaxed);
        Ok(Attempt::Waiting(PendingWait {
            name: name.to_name(),
            started,
            deadline: started + trx.wait_timeout().unwrap_or_else(|| self.wait_timeout()),
        }))
    }

    /// Grants `mode` to `trx` at once (it has no blocker) and, if the queue has waiters,
    /// refreshes their edges: a new entry can block a waiting insert intention.
    fn grant_now(
        &self,
        queue: &mut Queue,
        name: LockRef<'_>,
        trx: &Arc<LockTrx>,
        mode: Mode,
        graph: Option<&mut WaitGraph>,
    ) {
        if queue.add_granted(trx, mode) {
            trx.held.lock().push(name.to_name());
        }
        if let Some(graph) = graph {
            refresh_edges(queue, graph);
        }
    }

    /// The second half of a request that was queued: sleeps until it is granted, the
    /// trx is chosen as a deadlock victim, or the wait times out.
    pub(crate) fn finish_wait(
        &self,
        trx: &Arc<LockTrx>,
        pending: PendingWait,
    ) -> Result<LockOutcome> {
        let state = trx.sleep_while_waiting(pending.deadline);
        let outcome = match state {
            WaitState::Granted => Ok(LockOutcome::Granted),
            _ => self.leave_queue(trx, &pending.name),
        };
        trx.set_state(WaitState::Idle);
        self.counters
            .wait_ns_total
            .fetch_add(duration_ns(pending.started.elapsed()), Ordering::Relaxed);
        outcome
    }

    /// Removes a request whose wait ended without a grant (timeout or deadlock), unless
    /// it was granted meanwhile, and grants whatever it held back.
    fn leave_queue(&self, trx: &Arc<LockTrx>, name: &LockName) -> Result<LockOutcome> {
        let name = name.as_ref();
        let mut guard = self.shards[name.shard_index()].lock();
        let shard = &mut *guard;
        let mut graph = self.graph.lock();
        let error = match trx.state() {
            WaitState::Granted => return Ok(LockOutcome::Granted),
            WaitState::Waiting => {
                graph.remove(trx.id());
                // An interrupt wins over a timeout that passed at the same time.
                match trx.interruption() {
                    Some(error) => {
                        tracing::debug!(trx_id = trx.id(), %error, "lock wait interrupted");
                        error
                    }
                    None => {
                        self.counters.timeouts.fetch_add(1, Ordering::Relaxed);
                        tracing::debug!(trx_id = trx.id(), "lock wait timeout");
                        Error::LockWaitTimeout
                    }
                }
            }
            WaitState::Deadlock => Error::Deadlock,
            WaitState::Idle => unreachable!("trx {} left a queue it was not in", trx.id()),
        };
        trx.set_state(WaitState::Idle);
        let queue = shard
            .queues
            .get_mut(name)
            .expect("a waiting request's queue exists");
        let entries_before = queue.len();
        let removed = queue.remove_waiting(trx.id());
        assert!(removed, "trx {} lost its waiting request", trx.id());
        self.reschedule(queue, name, &mut graph);
        shard.entries = shard.entries + queue.len() - entries_before;
        drop(graph);
        shard.queues.remove_if_empty(name);
        Err(error)
    }

    /// Removes `trx`'s granted entry on `name` and grants waiters.
    fn release_in_shard(&self, shard: &mut Shard, trx: &Arc<LockTrx>, name: &LockName) {
        let name = name.as_ref();
        let Some(queue) = shard.queues.get_mut(name) else {
            debug_assert!(false, "trx {} held a lock on a missing queue", trx.id());
            return;
        };
        let entries_before = queue.len();
        let removed = queue.remove_granted(trx.id());
        debug_assert!(removed, "trx {} held a lock it had no entry for", trx.id());
        if !queue.waiting.is_empty() {
            let mut graph = self.graph.lock();
            self.reschedule(queue, name, &mut graph);
        }
        shard.entries = shard.entries + queue.len() - entries_before;
        shard.queues.remove_if_empty(name);
    }

    /// Grants what the policy allows in a changed queue, wakes the grantees, and
    /// refreshes the edges of those still waiting.
    fn reschedule(&self, queue: &mut Queue, name: LockRef<'_>, graph: &mut WaitGraph) {
        let grants = queue.schedule(self.scheduling());
        for grant in &grants {
            graph.remove(grant.trx.id());
            if grant.new_entry {
                grant.trx.held.lock().push(name.to_name());
            }
            let counter = match grant.rule {
                GrantRule::Fifo => &self.counters.grants_fifo,
                GrantRule::Cats => &self.counters.grants_cats,
                GrantRule::Starvation => &self.counters.grants_starvation,
            };
            counter.fetch_add(1, Ordering::Relaxed);
        }
        refresh_edges(queue, graph);
        for grant in grants {
            grant.trx.set_state_and_wake(WaitState::Granted);
        }
    }

    /// Checks the invariants of the module docs; panics on a violation. Takes every
    /// latch, so it is for tests, and must be called while no other thread uses the
    /// manager (a release in progress has already emptied the trx's list of held
    /// locks, for instance).
    pub fn check_invariants(&self) {
        let shards: Vec<_> = self.shards.iter().map(|s| s.lock()).collect();
        let graph = self.graph.lock();
        let mut held_expected: HashMap<u64, (Arc<LockTrx>, Vec<LockName>)> = HashMap::new();
        let mut waiting_seen: HashMap<u64, LockName> = HashMap::new();
        let mut credited: HashMap<u64, (Arc<LockTrx>, u64)> = HashMap::new();
        let mut blockers = Vec::new();
        for (shard_index, shard) in shards.iter().enumerate() {
            let mut entries = 0;
            shard.queues.for_each(|name, queue| {
                assert_eq!(
                    name.shard_index(),
                    shard_index,
                    "{name:?} in the wrong shard"
                );
                assert!(!queue.is_empty(), "empty queue {name:?} kept");
                entries += queue.len();
                check_queue(queue, name);
                for granted in &queue.granted {
                    credited
                        .entry(granted.trx.id())
                        .or_insert_with(|| (granted.trx.clone(), 0));
                    held_expected
                        .entry(granted.trx.id())
                        .or_insert_with(|| (granted.trx.clone(), Vec::new()))
                        .1
                        .push(name.to_name());
                }
                let all_active = queue.waiting.iter().all(|w| w.is_active());
                for (index, waiting) in queue.waiting.iter().enumerate() {
                    let previous = waiting_seen.insert(waiting.trx.id(), name.to_name());
                    assert!(previous.is_none(), "trx {} waits twice", waiting.trx.id());
                    credited
                        .entry(waiting.trx.id())
                        .or_insert_with(|| (waiting.trx.clone(), 0));
                    if !waiting.is_active() {
                        assert!(!graph.nodes.contains_key(&waiting.trx.id()));
                        continue;
                    }
                    let node = graph
                        .nodes
                        .get(&waiting.trx.id())
                        .expect("a waiting trx has a graph node");
                    assert_eq!(node.mode, waiting.mode);
                    assert_eq!(node.name.as_ref().to_name(), name.to_name());
                    let designated =
                        queue.blockers(waiting.trx.id(), waiting.mode, index, &mut blockers);
                    if all_active {
                        assert!(
                            !blockers.is_empty(),
                            "trx {} waits on {name:?} with no blocker",
                            waiting.trx.id()
                        );
                        assert_eq!(
                            node.blockers,
                            blockers,
                            "stale edges of {}",
                            waiting.trx.id()
                        );
                        assert_eq!(
                            node.designated.as_ref().map(|t| t.id()),
                            designated.map(|t| t.id())
                        );
                    }
                }
            });
            assert_eq!(entries, shard.entries, "entry count of shard {shard_index}");
        }
        for (trx_id, node) in &graph.nodes {
            assert!(
                waiting_seen.contains_key(trx_id),
                "graph node {trx_id} has no request"
            );
            assert!(node.trx.is_waiting());
            if let Some(designated) = &node.designated {
                credited
                    .entry(designated.id())
                    .or_insert_with(|| (designated.clone(), 0))
                    .1 += node.trx.weight();
            }
        }
        for (trx_id, (trx, credit)) in &credited {
            assert_eq!(trx.weight(), 1 + credit, "weight of trx {trx_id}");
        }
        for (trx_id, (trx, mut expected)) in held_expected {
            let mut held = trx.held.lock().clone();
            let key = |n: &LockName| format!("{n:?}");
            held.sort_by_key(key);
            expected.sort_by_key(key);
            assert_eq!(held, expected, "held list of trx {trx_id}");
        }
    }
}

/// Invariant 1 and per-queue uniqueness.
fn check_queue(queue: &Queue, name: LockRef<'_>) {
    for (i, a) in queue.granted.iter().enumerate() {
        assert!(!a.mode.is_empty() && !a.mode.has_insert_intention());
        for b in &queue.granted[i + 1..] {
            assert_ne!(a.trx.id(), b.trx.id(), "two entries of one trx on {name:?}");
            assert!(
                a.mode.compatible(b.mode),
                "trx {} ({}) and trx {} ({}) both granted on {name:?}",
                a.trx.id(),
                a.mode,
                b.trx.id(),
                b.mode
            );
        }
    }
}

/// Recomputes the edges of every active waiter of a queue.
fn refresh_edges(queue: &Queue, graph: &mut WaitGraph) {
    let mut blockers = Vec::new();
    for (index, waiting) in queue.waiting.iter().enumerate() {
        if waiting.is_active() {
            let designated = queue.blockers(waiting.trx.id(), waiting.mode, index, &mut blockers);
            graph.set_edges(waiting.trx.id(), &blockers, designated);
        }
    }
}

fn lock_table_full() -> Error {
    Error::OutOfResources(format!(
        "lock table full ({LOCK_REQUESTS_MAX} lock requests)"
    ))
}

fn duration_ns(duration: Duration) -> u64 {
    u64::try_from(duration.as_nanos()).unwrap_or(u64::MAX)
}
