//! Threads run random transactions against the lock manager, under each scheduling
//! policy, while a model of who holds what checks that no two conflicting locks are
//! ever granted at once. Every transaction must finish (deadlock victims retry), and no
//! wait may time out: a missed deadlock would show up as one.

use std::collections::HashMap;
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use parking_lot::Mutex;
use tarn_common::latch::LatchRegistry;
use tarn_common::rng::{Rng, test_seed};
use tarn_common::settings::LockScheduling;
use tarn_common::{Error, Result};
use tarn_txn::lock::{
    LockManager, LockOutcome, LockTrx, RecordLockKind, RecordMode, TableMode, WaitPolicy,
};

const THREADS: u64 = 4;
const TRXS_PER_THREAD: u64 = 2000;
const KEYS: u64 = 6;
const RETRIES_MAX: u32 = 1000;

/// InnoDB's rule, written independently of the lock manager: true when a request for
/// `requested` must wait for another trx's granted `held` (never an insert intention:
/// a granted one is not kept).
fn waits_for(requested: RecordMode, held: RecordMode) -> bool {
    use RecordLockKind::*;
    let has_record = |m: RecordMode| matches!(m.kind, NextKey | RecordOnly);
    let has_gap = |m: RecordMode| matches!(m.kind, NextKey | GapOnly);
    match requested.kind {
        GapOnly => false,
        InsertIntention => has_gap(held),
        NextKey | RecordOnly => has_record(held) && !(requested.shared && held.shared),
    }
}

#[derive(Default)]
struct Model {
    /// Per key, the record locks granted now: (trx id, mode, when recorded).
    granted: HashMap<u64, Vec<(u64, RecordMode, u64)>>,
    /// Orders recordings, so that a momentary insert intention is checked only
    /// against locks recorded before it was requested.
    next_seq: u64,
    /// Per trx, the table modes granted now on the one table.
    tables: HashMap<u64, Vec<TableMode>>,
}

fn table_waits_for(requested: TableMode, held: TableMode) -> bool {
    use TableMode::*;
    !matches!(
        (requested, held),
        (IS, IS | IX | S) | (IX, IS | IX) | (S, IS | S)
    )
}

impl Model {
    /// Records a granted record lock requested when `next_seq` was `requested_seq`.
    /// Kept locks are checked against everything held now. An insert intention is not
    /// kept, so a gap lock may legally be granted after it and before this call: it is
    /// checked only against locks held since before it was requested.
    fn granted_record(&mut self, trx: u64, key: u64, mode: RecordMode, requested_seq: u64) {
        let momentary = mode.kind == RecordLockKind::InsertIntention;
        let seq = self.next_seq;
        self.next_seq += 1;
        let holders = self.granted.entry(key).or_default();
        for &(other, held, held_seq) in holders.iter() {
            if other == trx || (momentary && held_seq >= requested_seq) {
                continue;
            }
            assert!(
                !waits_for(mode, held) && !waits_for(held, mode),
                "trx {trx} granted {mode:?} on key {key} while trx {other} holds {held:?}"
            );
        }
        if !momentary {
            holders.push((trx, mode, seq));
        }
    }

    fn granted_table(&mut self, trx: u64, mode: TableMode) {
        for (&other, modes) in &self.tables {
            for &held in modes {
                assert!(
                    other == trx || !table_waits_for(mode, held),
                    "trx {trx} granted table {mode:?} while trx {other} holds {held:?}"
                );
            }
        }
        self.tables.entry(trx).or_default().push(mode);
    }

    fn released(&mut self, trx: u64) {
        for holders in self.granted.values_mut() {
            holders.retain(|&(other, _, _)| other != trx);
        }
        self.tables.remove(&trx);
    }
}

/// One attempt at a transaction: a table intention lock, then one to four record locks.
fn run_trx(
    locks: &LockManager,
    model: &Mutex<Model>,
    trx: &Arc<LockTrx>,
    rng: &mut Rng,
) -> Result<()> {
    let modes = [
        RecordMode::shared(RecordLockKind::NextKey),
        RecordMode::exclusive(RecordLockKind::NextKey),
        RecordMode::shared(RecordLockKind::RecordOnly),
        RecordMode::exclusive(RecordLockKind::RecordOnly),
        RecordMode::shared(RecordLockKind::GapOnly),
        RecordMode::INSERT_INTENTION,
    ];
    let table_mode = match rng.below(100) {
        0 => TableMode::X,
        1..=2 => TableMode::S,
        3..=50 => TableMode::IS,
        _ => TableMode::IX,
    };
    locks.lock_table(trx, 1, table_mode, WaitPolicy::Wait)?;
    model.lock().granted_table(trx.id(), table_mode);
    for _ in 0..1 + rng.below(4) {
        let key = rng.below(KEYS);
        let mode = modes[rng.below(modes.len() as u64) as usize];
        let requested_seq = model.lock().next_seq;
        let outcome = locks.lock_record(trx, 9, &key.to_be_bytes(), mode, WaitPolicy::Wait)?;
        assert_eq!(outcome, LockOutcome::Granted);
        model
            .lock()
            .granted_record(trx.id(), key, mode, requested_seq);
        if !mode.shared {
            trx.add_work(1);
        }
        for _ in 0..rng.below(3) {
            thread::yield_now();
        }
    }
    Ok(())
}

fn stress(scheduling: LockScheduling, seed: u64) {
    let locks = Arc::new(LockManager::new(
        scheduling,
        Duration::from_secs(10),
        &LatchRegistry::new(true),
    ));
    let model = Arc::new(Mutex::new(Model::default()));
    let threads: Vec<_> = (0..THREADS)
        .map(|thread_index| {
            let (locks, model) = (locks.clone(), model.clone());
            thread::spawn(move || {
                let mut rng = Rng::new(seed ^ (thread_index + 1).wrapping_mul(0x9e37_79b9));
                let mut rollbacks = 0u64;
                for n in 0..TRXS_PER_THREAD {
                    let trx_id = thread_index * TRXS_PER_THREAD + n + 1;
                    let trx = locks.register(trx_id);
                    let mut attempts = 0;
                    loop {
                        let result = run_trx(&locks, &model, &trx, &mut rng);
                        model.lock().released(trx_id);
                        locks.release_all(&trx);
                        match result {
                            Ok(()) => break,
                            Err(Error::Deadlock) => rollbacks += 1,
                            Err(error) => panic!("trx {trx_id}: {error}"),
                        }
                        attempts += 1;
                        assert!(attempts < RETRIES_MAX, "trx {trx_id} never finished");
                    }
                }
                rollbacks
            })
        })
        .collect();
    let rollbacks: u64 = threads.into_iter().map(|t| t.join().unwrap()).sum();
    let stats = locks.stats();
    eprintln!("{scheduling}: {rollbacks} deadlock rollbacks; {stats:?}");
    assert_eq!(stats.timeouts, 0);
    assert_eq!(stats.deadlocks, rollbacks);
    assert_eq!((stats.entries, stats.waiting), (0, 0));
    assert!(stats.waits > 0, "the workload never contended");
    locks.check_invariants();
}

#[test]
fn concurrent_transactions_never_hold_conflicting_locks_and_all_finish() {
    let seed = test_seed("concurrent_transactions_never_hold_conflicting_locks_and_all_finish");
    for scheduling in LockScheduling::ALL {
        stress(scheduling, seed);
    }
}
