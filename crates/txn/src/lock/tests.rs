//! Unit tests of the lock manager. Most drive waits without threads: a request is
//! queued with [`LockManager::request_record`] and completed with
//! [`LockManager::finish_wait`] once its state says it was granted or cancelled, so the
//! grant order is checked exactly and no test depends on timing.

use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use tarn_common::latch::LatchRegistry;
use tarn_common::limits::{LOCK_CATS_OVERTAKES_MAX, LOCK_TABLE_SHARDS};
use tarn_common::rng::{Rng, test_seed};
use tarn_common::settings::LockScheduling;
use tarn_common::{Error, Result, StatementInterrupt};

use super::trx::WaitState;
use super::*;

const INDEX: u32 = 7;

fn manager(scheduling: LockScheduling) -> LockManager {
    LockManager::new(
        scheduling,
        Duration::from_secs(20),
        &LatchRegistry::new(true),
    )
}

const S_NEXT_KEY: RecordMode = RecordMode::shared(RecordLockKind::NextKey);
const X_NEXT_KEY: RecordMode = RecordMode::exclusive(RecordLockKind::NextKey);
const S_RECORD: RecordMode = RecordMode::shared(RecordLockKind::RecordOnly);
const X_RECORD: RecordMode = RecordMode::exclusive(RecordLockKind::RecordOnly);
const S_GAP: RecordMode = RecordMode::shared(RecordLockKind::GapOnly);
const X_GAP: RecordMode = RecordMode::exclusive(RecordLockKind::GapOnly);
const INSERT: RecordMode = RecordMode::INSERT_INTENTION;

/// Locks without waiting: `Ok(())` if granted, `Err(LockNowait)` if it would wait.
fn try_lock(m: &LockManager, trx: &Arc<LockTrx>, key: &[u8], mode: RecordMode) -> Result<()> {
    m.lock_record(trx, INDEX, key, mode, WaitPolicy::NoWait)
        .map(|outcome| assert_eq!(outcome, LockOutcome::Granted))
}

fn lock(m: &LockManager, trx: &Arc<LockTrx>, key: &[u8], mode: RecordMode) {
    try_lock(m, trx, key, mode).expect("lock granted at once");
}

/// Queues a request that must wait.
fn enqueue(m: &LockManager, trx: &Arc<LockTrx>, key: &[u8], mode: RecordMode) -> PendingWait {
    match m
        .request_record(trx, INDEX, key, mode, WaitPolicy::Wait)
        .expect("request queued")
    {
        Attempt::Waiting(pending) => {
            assert!(trx.is_waiting());
            pending
        }
        Attempt::Done(outcome) => panic!("trx {} got {outcome:?}, expected a wait", trx.id()),
        Attempt::BriefBusy => panic!("trx {} got BriefBusy, expected a wait", trx.id()),
    }
}

/// Completes a wait that was granted or cancelled (never sleeps: the state has left
/// `Waiting`).
fn complete(m: &LockManager, trx: &Arc<LockTrx>, pending: PendingWait) -> Result<LockOutcome> {
    assert!(!trx.is_waiting(), "trx {} still waits", trx.id());
    m.finish_wait(trx, pending)
}

/// Gives up a wait at once, as a timeout would.
fn abandon(m: &LockManager, trx: &Arc<LockTrx>, mut pending: PendingWait) -> Result<LockOutcome> {
    pending.deadline = Instant::now();
    m.finish_wait(trx, pending)
}

/// Gives `trx` `dependents` transactions waiting for a lock it holds (on its own key),
/// so its weight becomes 1 + dependents. Returns them with their pending waits.
fn add_dependents(
    m: &LockManager,
    trx: &Arc<LockTrx>,
    dependents: u64,
    next_id: &mut u64,
) -> Vec<(Arc<LockTrx>, PendingWait)> {
    let key = format!("dependents-of-{}", trx.id()).into_bytes();
    lock(m, trx, &key, X_RECORD);
    (0..dependents)
        .map(|_| {
            *next_id += 1;
            let dependent = m.register(*next_id);
            let pending = enqueue(m, &dependent, &key, X_RECORD);
            (dependent, pending)
        })
        .collect()
}

/// Releases every lock of trxs that are not waiting, and abandons the waits of those
/// that are, until nothing is left; then checks the table is empty.
fn drain(m: &LockManager, mut trxs: Vec<(Arc<LockTrx>, Option<PendingWait>)>) {
    for (trx, pending) in trxs.iter_mut() {
        if let Some(pending) = pending.take() {
            let _ = m.finish_wait(
                trx,
                PendingWait {
                    deadline: Instant::now(),
                    ..pending
                },
            );
        }
        m.release_all(trx);
        m.check_invariants();
    }
    let stats = m.stats();
    assert_eq!((stats.entries, stats.waiting), (0, 0));
}

#[test]
fn table_locks_follow_the_compatibility_matrix() {
    use TableMode::*;
    let modes = [IS, IX, S, X];
    // expected[held][requested]: true when the request is granted.
    let expected = [
        [true, true, true, false],
        [true, true, false, false],
        [true, false, true, false],
        [false, false, false, false],
    ];
    for (h, &held) in modes.iter().enumerate() {
        for (r, &requested) in modes.iter().enumerate() {
            let m = manager(LockScheduling::Fifo);
            let (a, b) = (m.register(1), m.register(2));
            m.lock_table(&a, 5, held, WaitPolicy::NoWait).unwrap();
            let result = m.lock_table(&b, 5, requested, WaitPolicy::NoWait);
            assert_eq!(
                result.is_ok(),
                expected[h][r],
                "held {held:?}, requested {requested:?}: {result:?}"
            );
            if let Err(error) = result {
                assert!(matches!(error, Error::LockNowait));
            }
            // The same trx never conflicts with itself.
            m.lock_table(&a, 5, requested, WaitPolicy::NoWait).unwrap();
            m.check_invariants();
        }
    }
}

#[test]
fn record_locks_follow_innodb_compatibility() {
    let modes = [
        ("S", S_NEXT_KEY),
        ("X", X_NEXT_KEY),
        ("S,REC_NOT_GAP", S_RECORD),
        ("X,REC_NOT_GAP", X_RECORD),
        ("S,GAP", S_GAP),
        ("X,GAP", X_GAP),
        ("INSERT_INTENTION", INSERT),
    ];
    // waits[requested][held], in the order above (InnoDB's lock_rec_has_to_wait).
    let waits = [
        "-X-X---", // S next-key waits for X record parts
        "XXXX---", // X next-key waits for every record part
        "-X-X---", // S record
        "XXXX---", // X record
        "-------", // gaps never wait
        "-------", "XX--XX-", // insert intention waits for gaps and next-keys, S or X
    ];
    for (r, &(requested_name, requested)) in modes.iter().enumerate() {
        for (h, &(held_name, held)) in modes.iter().enumerate() {
            let m = manager(LockScheduling::Cats);
            let (a, b) = (m.register(1), m.register(2));
            lock(&m, &a, b"k", held);
            let result = try_lock(&m, &b, b"k", requested);
            let should_wait = waits[r].as_bytes()[h] == b'X';
            assert_eq!(
                result.is_err(),
                should_wait,
                "{requested_name} requested, {held_name} held: {result:?}"
            );
            assert_eq!(
                m.conflicting_gap_holder(&b, INDEX, b"k"),
                waits[6].as_bytes()[h] == b'X',
                "gap holder check with {held_name} held"
            );
            // Nobody conflicts with themselves, or on another key.
            lock(&m, &a, b"own", held);
            lock(&m, &a, b"own", requested);
            lock(&m, &b, b"other", held);
            m.check_invariants();
        }
    }
}

#[test]
fn rerequests_are_no_ops_and_only_the_missing_part_is_requested() {
    let m = manager(LockScheduling::Fifo);
    let (a, b) = (m.register(1), m.register(2));
    lock(&m, &a, b"k", X_NEXT_KEY);
    m.reset_stats();
    for mode in [X_NEXT_KEY, S_NEXT_KEY, X_RECORD, S_RECORD, S_GAP, X_GAP] {
        lock(&m, &a, b"k", mode);
    }
    assert_eq!(m.stats().already_held, 6);
    assert_eq!(m.stats().requests, 6);
    assert_eq!(a.held_count(), 1);

    // Holding the record, a next-key request needs just the gap, which never waits.
    lock(&m, &b, b"r", S_RECORD);
    lock(&m, &b, b"r", S_NEXT_KEY);
    lock(&m, &a, b"r", S_GAP);
    assert_eq!(
        try_lock(&m, &a, b"r", X_RECORD).unwrap_err().mysql_code(),
        3572
    );
    m.check_invariants();

    // Table locks: X covers everything; IX then S makes SIX.
    m.lock_table(&a, 1, TableMode::X, WaitPolicy::NoWait)
        .unwrap();
    m.reset_stats();
    for mode in [TableMode::IS, TableMode::IX, TableMode::S, TableMode::X] {
        m.lock_table(&a, 1, mode, WaitPolicy::NoWait).unwrap();
    }
    assert_eq!(m.stats().already_held, 4);
    m.lock_table(&b, 2, TableMode::IX, WaitPolicy::NoWait)
        .unwrap();
    m.lock_table(&b, 2, TableMode::S, WaitPolicy::NoWait)
        .unwrap();
    assert!(
        m.lock_table(&a, 2, TableMode::IS, WaitPolicy::NoWait)
            .is_ok()
    );
    assert!(
        m.lock_table(&a, 2, TableMode::IX, WaitPolicy::NoWait)
            .is_err()
    );
    m.check_invariants();
}

#[test]
fn holds_record_reports_granted_locks_only() {
    let m = manager(LockScheduling::Fifo);
    let (a, b) = (m.register(1), m.register(2));
    assert!(!m.holds_record(&a, INDEX, b"k"));
    lock(&m, &a, b"k", S_GAP);
    assert!(m.holds_record(&a, INDEX, b"k"));
    assert!(!m.holds_record(&a, INDEX + 1, b"k"));
    // A waiting request is not held; an insert intention is never kept.
    lock(&m, &b, b"r", X_RECORD);
    let pending = enqueue(&m, &a, b"r", S_RECORD);
    assert!(!m.holds_record(&a, INDEX, b"r"));
    lock(&m, &b, b"s", INSERT);
    assert!(!m.holds_record(&b, INDEX, b"s"));
    assert_eq!(abandon(&m, &a, pending).unwrap_err().mysql_code(), 1205);
    m.release_record(&a, INDEX, b"k");
    assert!(!m.holds_record(&a, INDEX, b"k"));
    m.release_all(&a);
    m.release_all(&b);
    m.check_invariants();
}

#[test]
fn an_upgrade_waits_only_for_other_holders() {
    let m = manager(LockScheduling::Fifo);
    let (a, b, c) = (m.register(1), m.register(2), m.register(3));
    lock(&m, &a, b"k", S_RECORD);
    lock(&m, &b, b"k", S_RECORD);
    // c waits for X behind both S holders.
    let c_wait = enqueue(&m, &c, b"k", X_RECORD);
    // a upgrades: it waits for b's S, not for c's earlier X (which waits for a anyway).
    let a_wait = enqueue(&m, &a, b"k", X_RECORD);
    assert_eq!(m.waiting_transactions()[0].blocking_trx_ids, vec![2]);
    m.check_invariants();
    m.release_all(&b);
    assert_eq!(complete(&m, &a, a_wait).unwrap(), LockOutcome::Granted);
    assert!(c.is_waiting());
    m.check_invariants();
    m.release_all(&a);
    assert_eq!(complete(&m, &c, c_wait).unwrap(), LockOutcome::Granted);
    m.release_all(&c);
    m.check_invariants();

    // The manual's deadlock example (A holds S, B waits for X, A asks for X) is not a
    // deadlock here: A is granted at once, since B could not go before A anyway.
    lock(&m, &a, b"m", S_NEXT_KEY);
    let b_wait = enqueue(&m, &b, b"m", X_NEXT_KEY);
    lock(&m, &a, b"m", X_NEXT_KEY);
    assert_eq!(m.stats().deadlocks, 0);
    m.release_all(&a);
    assert_eq!(complete(&m, &b, b_wait).unwrap(), LockOutcome::Granted);
    drain(&m, vec![(b, None)]);
}

#[test]
fn insert_intention_waits_for_gap_lockers_including_waiting_ones() {
    let m = manager(LockScheduling::Fifo);
    let (a, b, c, d) = (m.register(1), m.register(2), m.register(3), m.register(4));
    // a locks the gap before "k"; b's insert into it waits; a's own insert does not.
    lock(&m, &a, b"k", S_GAP);
    assert!(m.conflicting_gap_holder(&b, INDEX, b"k"));
    assert!(!m.conflicting_gap_holder(&a, INDEX, b"k"));
    lock(&m, &a, b"k", INSERT);
    lock(&m, &c, b"k", X_RECORD); // record-only does not touch the gap
    let b_wait = enqueue(&m, &b, b"k", INSERT);
    // Gap locks keep being granted while an insert waits (as in InnoDB).
    lock(&m, &d, b"k", X_GAP);
    m.check_invariants();
    assert_eq!(m.waiting_transactions()[0].mode, "X,GAP,INSERT_INTENTION");
    m.release_all(&a);
    assert!(b.is_waiting(), "d's gap lock still blocks the insert");
    m.release_all(&d);
    assert_eq!(complete(&m, &b, b_wait).unwrap(), LockOutcome::Granted);
    // A granted insert intention blocks nothing and is not kept.
    lock(&m, &d, b"k", X_GAP);
    assert_eq!(b.held_count(), 0);
    m.release_all(&d);
    m.check_invariants();

    // An insert queues behind a next-key request that is itself waiting.
    let n_wait = enqueue(&m, &d, b"k", S_NEXT_KEY); // waits for c's X record lock
    assert!(m.conflicting_gap_holder(&a, INDEX, b"k"));
    assert_eq!(
        try_lock(&m, &a, b"k", INSERT).unwrap_err().mysql_code(),
        3572
    );
    m.release_all(&c);
    assert_eq!(complete(&m, &d, n_wait).unwrap(), LockOutcome::Granted);
    drain(&m, vec![(a, None), (b, None), (d, None)]);
}

#[test]
fn nowait_fails_and_skip_locked_skips_without_queueing() {
    let m = manager(LockScheduling::Cats);
    let (a, b) = (m.register(1), m.register(2));
    lock(&m, &a, b"k", X_RECORD);
    let error = m
        .lock_record(&b, INDEX, b"k", S_RECORD, WaitPolicy::NoWait)
        .unwrap_err();
    assert!(matches!(error, Error::LockNowait));
    assert_eq!(error.mysql_code(), 3572);
    assert_eq!(
        m.lock_record(&b, INDEX, b"k", S_RECORD, WaitPolicy::SkipLocked)
            .unwrap(),
        LockOutcome::Skipped
    );
    assert_eq!(
        m.lock_record(&b, INDEX, b"free", S_RECORD, WaitPolicy::SkipLocked)
            .unwrap(),
        LockOutcome::Granted
    );
    let stats = m.stats();
    assert_eq!(
        (stats.nowait_failures, stats.skipped, stats.waits),
        (1, 1, 0)
    );
    assert_eq!(b.held_count(), 1);
    assert!(!b.is_waiting());
    m.check_invariants();
}

#[test]
fn a_timeout_removes_only_the_waiting_request_and_wakes_those_behind_it() {
    let m = Arc::new(manager(LockScheduling::Fifo));
    m.set_wait_timeout(Duration::from_millis(200));
    let (a, b, c) = (m.register(1), m.register(2), m.register(3));
    lock(&m, &a, b"k1", S_RECORD);
    lock(&m, &b, b"k2", X_RECORD);
    let waiter = {
        let (m, b) = (m.clone(), b.clone());
        thread::spawn(move || {
            let started = Instant::now();
            let result = m.lock_record(&b, INDEX, b"k1", X_RECORD, WaitPolicy::Wait);
            (result, started.elapsed())
        })
    };
    let deadline = Instant::now() + Duration::from_secs(5);
    while !b.is_waiting() {
        assert!(Instant::now() < deadline, "b never waited");
        thread::sleep(Duration::from_millis(1));
    }
    // c's S is compatible with a's S but queues behind b's waiting X.
    let c_wait = enqueue(&m, &c, b"k1", S_RECORD);
    let (result, waited) = waiter.join().unwrap();
    assert!(matches!(result, Err(Error::LockWaitTimeout)), "{result:?}");
    assert_eq!(Error::LockWaitTimeout.mysql_code(), 1205);
    assert!(waited >= Duration::from_millis(200), "waited {waited:?}");
    assert!(!b.is_waiting());
    // c no longer waits behind b; b keeps its other lock.
    assert_eq!(complete(&m, &c, c_wait).unwrap(), LockOutcome::Granted);
    assert!(try_lock(&m, &c, b"k2", S_RECORD).is_err());
    assert_eq!(b.held_count(), 1);
    let stats = m.stats();
    assert_eq!((stats.timeouts, stats.waits), (1, 2));
    assert!(stats.wait_ns_total >= 200_000_000);
    m.check_invariants();
    drain(&m, vec![(a, None), (b, None), (c, None)]);
}

#[test]
fn a_session_lock_wait_timeout_governs_its_waits_and_others_keep_the_engines() {
    // The engine's timeout (20 s) is far off; b's session set 150 ms.
    let m = manager(LockScheduling::Fifo);
    let interrupt = Arc::new(StatementInterrupt::new());
    interrupt.set_lock_wait_timeout(Some(Duration::from_millis(150)));
    let a = m.register(1);
    let b = m.register_interruptible(2, interrupt.clone());
    let c = m.register_interruptible(3, Arc::new(StatementInterrupt::new()));
    assert_eq!(b.wait_timeout(), Some(Duration::from_millis(150)));
    assert_eq!((a.wait_timeout(), c.wait_timeout()), (None, None));
    lock(&m, &a, b"k1", X_RECORD);

    let pending = enqueue(&m, &b, b"k1", X_RECORD);
    assert!(pending.deadline <= pending.started + Duration::from_millis(150));
    let started = Instant::now();
    let result = m.finish_wait(&b, pending);
    let waited = started.elapsed();
    assert!(matches!(result, Err(Error::LockWaitTimeout)), "{result:?}");
    // A correctness bound (not the engine's 20 s), not a speed one.
    assert!(waited < Duration::from_secs(10), "waited {waited:?}");
    assert_eq!(m.stats().timeouts, 1);

    // A session without a timeout of its own waits as long as the engine says.
    let pending = enqueue(&m, &c, b"k1", X_RECORD);
    assert_eq!(pending.deadline, pending.started + m.wait_timeout());
    assert!(matches!(
        abandon(&m, &c, pending),
        Err(Error::LockWaitTimeout)
    ));
    // A change of the session's timeout applies to its next wait.
    interrupt.set_lock_wait_timeout(Some(Duration::from_secs(60)));
    let pending = enqueue(&m, &b, b"k1", X_RECORD);
    assert_eq!(pending.deadline, pending.started + Duration::from_secs(60));
    assert!(matches!(
        abandon(&m, &b, pending),
        Err(Error::LockWaitTimeout)
    ));
    m.check_invariants();
    drain(&m, vec![(a, None), (b, None), (c, None)]);
}

#[test]
fn a_statement_deadline_ends_a_wait_with_3024_and_a_kill_with_1317() {
    // The lock wait timeout (20 s) is far off: only the statement stops the waits.
    let m = manager(LockScheduling::Fifo);
    let interrupt = Arc::new(StatementInterrupt::new());
    let a = m.register(1);
    let b = m.register_interruptible(2, interrupt.clone());
    lock(&m, &a, b"k1", X_RECORD);
    lock(&m, &b, b"k2", X_RECORD);

    // The deadline passes while b sleeps: b wakes for it, not for a 50 ms check.
    let deadline = Instant::now() + Duration::from_millis(120);
    interrupt.arm(Some(deadline));
    let pending = enqueue(&m, &b, b"k1", X_RECORD);
    let result = m.finish_wait(&b, pending);
    let late = Instant::now().saturating_duration_since(deadline);
    assert!(
        matches!(result, Err(Error::MaxExecutionTimeExceeded)),
        "{result:?}"
    );
    assert!(Instant::now() >= deadline);
    assert!(
        late < Duration::from_secs(10),
        "woke {late:?} after the deadline"
    );
    assert!(!b.is_waiting());
    assert_eq!(b.held_count(), 1, "b keeps its other lock");
    assert_eq!(m.stats().timeouts, 0, "an interrupt is no timeout");
    m.check_invariants();

    // A deadline that has already passed ends the wait at once.
    interrupt.set_deadline(Some(Instant::now()));
    let result = m.lock_record(&b, INDEX, b"k1", X_RECORD, WaitPolicy::Wait);
    assert!(
        matches!(result, Err(Error::MaxExecutionTimeExceeded)),
        "{result:?}"
    );

    // Re-armed without a deadline, b waits until it is killed.
    interrupt.arm(None);
    let killer = {
        let (b, interrupt) = (b.clone(), interrupt.clone());
        thread::spawn(move || {
            let started = Instant::now();
            while !b.is_waiting() {
                assert!(started.elapsed() < Duration::from_secs(5), "b never waited");
                thread::sleep(Duration::from_millis(1));
            }
            interrupt.kill();
        })
    };
    let result = m.lock_record(&b, INDEX, b"k1", X_RECORD, WaitPolicy::Wait);
    killer.join().unwrap();
    assert!(matches!(result, Err(Error::QueryInterrupted)), "{result:?}");
    assert_eq!(m.stats().timeouts, 0);
    m.check_invariants();

    // a's lock was never touched; once it is released, b (re-armed) gets k1.
    assert!(try_lock(&m, &b, b"k1", S_RECORD).is_err());
    m.release_all(&a);
    interrupt.arm(None);
    lock(&m, &b, b"k1", X_RECORD);
    drain(&m, vec![(a, None), (b, None)]);
}

#[test]
fn a_two_trx_deadlock_picks_the_requester_when_it_did_least_work() {
    let m = manager(LockScheduling::Fifo);
    let (a, b) = (m.register(1), m.register(2));
    a.add_work(10);
    b.add_work(1);
    lock(&m, &a, b"k1", X_RECORD);
    lock(&m, &b, b"k2", X_RECORD);
    let a_wait = enqueue(&m, &a, b"k2", X_RECORD);
    let error = m
        .lock_record(&b, INDEX, b"k1", X_RECORD, WaitPolicy::Wait)
        .unwrap_err();
    assert!(matches!(error, Error::Deadlock));
    assert_eq!((error.mysql_code(), error.sqlstate()), (1213, "40001"));
    assert!(!b.is_waiting() && a.is_waiting());
    assert_eq!(m.stats().deadlocks, 1);
    m.check_invariants();
    m.release_all(&b);
    assert_eq!(complete(&m, &a, a_wait).unwrap(), LockOutcome::Granted);
    drain(&m, vec![(a, None)]);
}

#[test]
fn a_two_trx_deadlock_cancels_a_lighter_sleeping_waiter() {
    let m = Arc::new(manager(LockScheduling::Cats));
    let (a, b) = (m.register(1), m.register(2));
    a.add_work(1);
    b.add_work(10);
    lock(&m, &a, b"k1", X_RECORD);
    lock(&m, &b, b"k2", X_RECORD);
    let sleeper = {
        let (m, a) = (m.clone(), a.clone());
        thread::spawn(move || {
            let result = m.lock_record(&a, INDEX, b"k2", X_RECORD, WaitPolicy::Wait);
            if result.is_err() {
                m.release_all(&a); // the caller rolls the victim back
            }
            result
        })
    };
    let deadline = Instant::now() + Duration::from_secs(5);
    while !a.is_waiting() {
        assert!(Instant::now() < deadline, "a never waited");
        thread::sleep(Duration::from_millis(1));
    }
    // b closes the cycle and waits; a is woken with Deadlock and rolls back, so b
    // gets k1.
    let result = m.lock_record(&b, INDEX, b"k1", X_RECORD, WaitPolicy::Wait);
    assert_eq!(result.unwrap(), LockOutcome::Granted);
    assert!(matches!(sleeper.join().unwrap(), Err(Error::Deadlock)));
    assert_eq!(m.stats().deadlocks, 1);
    m.check_invariants();
    drain(&m, vec![(b, None)]);
}

#[test]
fn a_three_trx_deadlock_cancels_the_one_with_least_work() {
    for victim_work in [(5, 1, 5), (5, 5, 1)] {
        let m = manager(LockScheduling::Fifo);
        let t: Vec<_> = (1..=3).map(|id| m.register(id)).collect();
        t[0].add_work(victim_work.0);
        t[1].add_work(victim_work.1);
        t[2].add_work(victim_work.2);
        lock(&m, &t[0], b"k1", X_NEXT_KEY);
        lock(&m, &t[1], b"k2", X_NEXT_KEY);
        lock(&m, &t[2], b"k3", X_NEXT_KEY);
        let w0 = enqueue(&m, &t[0], b"k2", X_NEXT_KEY);
        let w1 = enqueue(&m, &t[1], b"k3", S_NEXT_KEY);
        let result = m.request_record(&t[2], INDEX, b"k1", S_RECORD, WaitPolicy::Wait);
        assert_eq!(m.stats().deadlocks, 1);
        if victim_work.2 == 1 {
            // The requester did least: it fails at once and the others keep waiting.
            assert!(matches!(result, Err(Error::Deadlock)));
            assert!(t[0].is_waiting() && t[1].is_waiting());
            m.check_invariants();
            m.release_all(&t[2]);
            assert_eq!(complete(&m, &t[1], w1).unwrap(), LockOutcome::Granted);
            m.release_all(&t[1]);
            assert_eq!(complete(&m, &t[0], w0).unwrap(), LockOutcome::Granted);
            drain(&m, t.into_iter().map(|trx| (trx, None)).collect());
        } else {
            // t[1] is cancelled; the requester waits for t[0], who waits for t[1].
            let Ok(Attempt::Waiting(w2)) = result else {
                panic!("{result:?}")
            };
            assert_eq!(t[1].state(), WaitState::Deadlock);
            m.check_invariants();
            assert!(matches!(complete(&m, &t[1], w1), Err(Error::Deadlock)));
            m.check_invariants();
            m.release_all(&t[1]);
            assert_eq!(complete(&m, &t[0], w0).unwrap(), LockOutcome::Granted);
            assert!(t[2].is_waiting());
            m.release_all(&t[0]);
            assert_eq!(complete(&m, &t[2], w2).unwrap(), LockOutcome::Granted);
            drain(&m, t.into_iter().map(|trx| (trx, None)).collect());
        }
    }
}

/// T1 holds X on k; T2 and then T3 wait for it; T4 and T5 wait for locks T3 holds.
/// CATS grants T3 (weight 3) before T2 (weight 1); FIFO grants T2.
#[test]
fn cats_grants_the_trx_with_most_dependents_and_fifo_the_oldest() {
    for scheduling in LockScheduling::ALL {
        let m = manager(scheduling);
        let t: Vec<_> = (1..=5).map(|id| m.register(id)).collect();
        lock(&m, &t[0], b"k", X_RECORD);
        lock(&m, &t[2], b"k3", X_RECORD);
        lock(&m, &t[2], b"k4", X_RECORD);
        let w1 = enqueue(&m, &t[1], b"k", X_RECORD);
        let w2 = enqueue(&m, &t[2], b"k", X_RECORD);
        let w3 = enqueue(&m, &t[3], b"k3", X_RECORD);
        let w4 = enqueue(&m, &t[4], b"k4", X_RECORD);
        m.check_invariants();
        let weights: Vec<u64> = t.iter().map(|trx| trx.weight()).collect();
        assert_eq!(weights, vec![5, 1, 3, 1, 1], "{scheduling}");
        let view = m.waiting_transactions();
        assert_eq!(
            view.iter()
                .map(|w| (w.trx_id, w.weight))
                .collect::<Vec<_>>(),
            vec![(2, 1), (3, 3), (4, 1), (5, 1)]
        );
        assert_eq!(
            view[1].target,
            LockTarget::Record {
                index_id: INDEX,
                key: b"k".to_vec()
            }
        );
        m.release_all(&t[0]);
        m.check_invariants();
        let (first, first_wait, second, second_wait) = match scheduling {
            LockScheduling::Cats => (&t[2], w2, &t[1], w1),
            LockScheduling::Fifo => (&t[1], w1, &t[2], w2),
        };
        assert_eq!(
            complete(&m, first, first_wait).unwrap(),
            LockOutcome::Granted
        );
        assert!(second.is_waiting(), "{scheduling}");
        // Whichever holds k now has the other one waiting for it too: T2 credits T3
        // (1 + T4 + T5 + T2), or T3 credits T2 (1 + T3's weight of 3).
        assert_eq!(first.weight(), 4, "{scheduling}");
        m.release_all(first);
        assert_eq!(
            complete(&m, second, second_wait).unwrap(),
            LockOutcome::Granted
        );
        if scheduling == LockScheduling::Fifo {
            // T3 waited for k while T4, T5 waited for T3: they are granted only now.
            assert!(t[3].is_waiting());
        }
        m.release_all(&t[2]);
        assert_eq!(complete(&m, &t[3], w3).unwrap(), LockOutcome::Granted);
        assert_eq!(complete(&m, &t[4], w4).unwrap(), LockOutcome::Granted);
        let stats = m.stats();
        match scheduling {
            LockScheduling::Cats => assert_eq!(stats.grants_cats, 1),
            LockScheduling::Fifo => assert_eq!(stats.grants_cats, 0),
        }
        drain(&m, t.into_iter().map(|trx| (trx, None)).collect());
    }
}

/// The S3 example: three shared requests with weights summing to 8 score
/// 8 / f(3) = 3.1 and lose to an exclusive request of weight 5; against an
/// exclusive of weight 3 the group wins and all three are granted together.
#[test]
fn cats_scores_a_shared_group_by_summed_weight_over_f_of_k() {
    assert_eq!(queue::group_finish_factor(1), 1.0);
    assert_eq!(queue::group_finish_factor(2), 2.0);
    for (exclusive_dependents, exclusive_wins) in [(4, true), (2, false)] {
        let m = manager(LockScheduling::Cats);
        let mut next_id = 100;
        let holder = m.register(1);
        lock(&m, &holder, b"k", X_RECORD);
        let shared: Vec<_> = (2..=4).map(|id| m.register(id)).collect();
        let exclusive = m.register(5);
        let mut dependents = Vec::new();
        for (trx, count) in shared.iter().zip([2, 2, 1]) {
            dependents.extend(add_dependents(&m, trx, count, &mut next_id));
        }
        dependents.extend(add_dependents(
            &m,
            &exclusive,
            exclusive_dependents,
            &mut next_id,
        ));
        // The shared requests arrive first, so FIFO would grant them.
        let shared_waits: Vec<_> = shared
            .iter()
            .map(|trx| enqueue(&m, trx, b"k", S_RECORD))
            .collect();
        let exclusive_wait = enqueue(&m, &exclusive, b"k", X_RECORD);
        assert_eq!(shared.iter().map(|t| t.weight()).sum::<u64>(), 8);
        assert_eq!(exclusive.weight(), 1 + exclusive_dependents);
        m.check_invariants();
        m.release_all(&holder);
        m.check_invariants();
        assert_eq!(exclusive.is_waiting(), !exclusive_wins);
        for trx in &shared {
            assert_eq!(trx.is_waiting(), exclusive_wins);
        }
        let mut all: Vec<(Arc<LockTrx>, Option<PendingWait>)> = shared
            .into_iter()
            .zip(shared_waits)
            .map(|(trx, wait)| (trx, Some(wait)))
            .collect();
        all.push((exclusive, Some(exclusive_wait)));
        all.extend(dependents.into_iter().map(|(trx, wait)| (trx, Some(wait))));
        drain(&m, all);
    }
}

#[test]
fn cats_with_one_waiter_takes_the_fifo_path() {
    let m = manager(LockScheduling::Cats);
    let (a, b) = (m.register(1), m.register(2));
    lock(&m, &a, b"k", X_RECORD);
    let b_wait = enqueue(&m, &b, b"k", X_RECORD);
    m.release_all(&a);
    assert_eq!(complete(&m, &b, b_wait).unwrap(), LockOutcome::Granted);
    let stats = m.stats();
    assert_eq!((stats.grants_fifo, stats.grants_cats), (1, 0));
    drain(&m, vec![(b, None)]);
}

/// A light waiter is overtaken by heavier newcomers at most LOCK_CATS_OVERTAKES_MAX
/// times, then granted, although heavier newcomers keep arriving every round.
#[test]
fn cats_does_not_starve_a_light_waiter() {
    let m = manager(LockScheduling::Cats);
    let mut next_id = 1000;
    let mut holder = m.register(1);
    lock(&m, &holder, b"hot", X_RECORD);
    let light = m.register(2);
    let mut waits: Vec<(Arc<LockTrx>, PendingWait)> =
        vec![(light.clone(), enqueue(&m, &light, b"hot", X_RECORD))];
    let mut newcomer_dependents = Vec::new();
    let rounds_max = LOCK_CATS_OVERTAKES_MAX as usize + 2;
    let mut light_granted_in_round = None;
    for round in 0..rounds_max {
        next_id += 1;
        let newcomer = m.register(next_id);
        newcomer_dependents.extend(add_dependents(&m, &newcomer, 1, &mut next_id));
        waits.push((newcomer.clone(), enqueue(&m, &newcomer, b"hot", X_RECORD)));
        m.release_all(&holder);
        // Exactly one waiter of the hot key was granted.
        let granted: Vec<usize> = (0..waits.len())
            .filter(|&i| waits[i].0.state() == WaitState::Granted)
            .collect();
        assert_eq!(granted.len(), 1, "round {round}");
        let (trx, pending) = waits.remove(granted[0]);
        assert_eq!(complete(&m, &trx, pending).unwrap(), LockOutcome::Granted);
        m.check_invariants();
        // A newcomer's dependent is granted when the newcomer releases; finish it.
        holder = trx;
        if holder.id() == light.id() {
            light_granted_in_round = Some(round);
            break;
        }
    }
    let round = light_granted_in_round.expect("the light waiter starved");
    assert_eq!(
        round, LOCK_CATS_OVERTAKES_MAX as usize,
        "overtaken exactly the bound"
    );
    let stats = m.stats();
    assert_eq!(stats.grants_cats, u64::from(LOCK_CATS_OVERTAKES_MAX));
    assert_eq!(stats.grants_starvation, 1);
    let mut all: Vec<(Arc<LockTrx>, Option<PendingWait>)> = vec![(holder, None)];
    all.extend(waits.into_iter().map(|(t, w)| (t, Some(w))));
    all.extend(newcomer_dependents.into_iter().map(|(t, w)| (t, Some(w))));
    drain(&m, all);
}

#[test]
fn release_record_grants_waiters_and_keeps_other_locks() {
    let m = manager(LockScheduling::Fifo);
    let (a, b) = (m.register(1), m.register(2));
    lock(&m, &a, b"k", S_NEXT_KEY);
    lock(&m, &a, b"j", S_NEXT_KEY);
    let b_wait = enqueue(&m, &b, b"k", X_RECORD);
    m.release_record(&a, INDEX, b"k");
    assert_eq!(complete(&m, &b, b_wait).unwrap(), LockOutcome::Granted);
    assert_eq!(a.held_count(), 1);
    m.release_record(&a, INDEX, b"never-locked");
    assert!(try_lock(&m, &b, b"j", X_RECORD).is_err());
    m.check_invariants();
    drain(&m, vec![(a, None), (b, None)]);
}

#[test]
fn every_shard_latch_is_registered_and_stats_reset() {
    let registry = LatchRegistry::new(true);
    let m = LockManager::new(LockScheduling::Cats, Duration::from_secs(1), &registry);
    let shards: Vec<_> = registry
        .snapshot()
        .into_iter()
        .filter(|row| row.class == "lock.shard")
        .collect();
    assert_eq!(shards.len(), LOCK_TABLE_SHARDS);
    assert!(
        shards
            .iter()
            .enumerate()
            .all(|(i, row)| row.instance == Some(i as u32))
    );
    let a = m.register(1);
    for key in 0u32..1000 {
        lock(&m, &a, &key.to_be_bytes(), X_RECORD);
    }
    let used = registry
        .snapshot()
        .into_iter()
        .filter(|row| row.class == "lock.shard" && row.acquisitions > 0)
        .count();
    assert_eq!(used, LOCK_TABLE_SHARDS, "keys spread over every shard");
    assert_eq!(m.stats().entries, 1000);
    m.check_invariants();
    m.release_all(&a);
    m.reset_stats();
    let stats = m.stats();
    assert_eq!(stats, LockStats::default());
    assert_eq!(m.scheduling(), LockScheduling::Cats);
    m.set_scheduling(LockScheduling::Fifo);
    assert_eq!(m.scheduling(), LockScheduling::Fifo);
}

/// Random requests, waits, timeouts, deadlocks and commits of a few trxs on a few keys,
/// in one thread, checking every invariant after every step, under both policies.
#[test]
fn random_operations_keep_the_invariants() {
    let seed = test_seed("random_operations_keep_the_invariants");
    let mut rng = Rng::new(seed);
    let modes = [
        S_NEXT_KEY, X_NEXT_KEY, S_RECORD, X_RECORD, S_GAP, X_GAP, INSERT,
    ];
    let m = manager(LockScheduling::Cats);
    let trxs: Vec<_> = (1..=8).map(|id| m.register(id)).collect();
    let mut pending: Vec<Option<PendingWait>> = (0..trxs.len()).map(|_| None).collect();
    let mut outcomes = [0u64; 4];
    for step in 0..20_000 {
        if rng.percent(1) {
            m.set_scheduling(LockScheduling::ALL[rng.below(2) as usize]);
        }
        let i = rng.below(trxs.len() as u64) as usize;
        let trx = &trxs[i];
        if let Some(wait) = pending[i].take() {
            match trx.state() {
                WaitState::Waiting if rng.percent(80) => pending[i] = Some(wait),
                WaitState::Waiting => {
                    assert!(matches!(
                        abandon(&m, trx, wait),
                        Err(Error::LockWaitTimeout)
                    ));
                    outcomes[2] += 1;
                }
                WaitState::Granted => {
                    assert_eq!(complete(&m, trx, wait).unwrap(), LockOutcome::Granted);
                    outcomes[1] += 1;
                }
                WaitState::Deadlock => {
                    assert!(matches!(complete(&m, trx, wait), Err(Error::Deadlock)));
                    m.release_all(trx);
                    outcomes[3] += 1;
                }
                WaitState::Idle => unreachable!(),
            }
        } else if rng.percent(15) {
            m.release_all(trx);
        } else if rng.percent(10) {
            let table_mode =
                [TableMode::IS, TableMode::IX, TableMode::S, TableMode::X][rng.below(4) as usize];
            let _ = m.lock_table(trx, rng.below(2) as u32, table_mode, WaitPolicy::NoWait);
        } else {
            if rng.percent(30) {
                trx.add_work(rng.below(3));
            }
            let key = [b'a' + rng.below(4) as u8];
            let mode = modes[rng.below(modes.len() as u64) as usize];
            match m.request_record(trx, INDEX, &key, mode, WaitPolicy::Wait) {
                Ok(Attempt::Done(_)) => outcomes[0] += 1,
                Ok(Attempt::Waiting(wait)) => pending[i] = Some(wait),
                Err(Error::Deadlock) => {
                    m.release_all(trx);
                    outcomes[3] += 1;
                }
                Ok(Attempt::BriefBusy) => panic!("step {step}: no brief holders here"),
                Err(error) => panic!("step {step}: {error}"),
            }
        }
        m.check_invariants();
    }
    eprintln!("granted at once, after a wait, timed out, deadlocked: {outcomes:?}");
    assert!(outcomes.iter().all(|&n| n > 0), "{outcomes:?}");
    drain(&m, trxs.into_iter().zip(pending).collect());
}

/// A NOWAIT or SKIP LOCKED request that only a brief holder (purge) blocks retries
/// until it lets go instead of failing or skipping; one that a transaction blocks
/// still fails or skips at once; and a brief holder's own request never waits.
#[test]
fn nowait_and_skip_locked_wait_for_brief_holders_only() {
    let m = Arc::new(manager(LockScheduling::Cats));
    let purger = m.register_brief(1000);
    let (a, b) = (m.register(1), m.register(2));
    for (policy, trx) in [(WaitPolicy::NoWait, &a), (WaitPolicy::SkipLocked, &b)] {
        lock(&m, &purger, b"k", X_RECORD);
        let release = {
            let (m, purger) = (m.clone(), purger.clone());
            thread::spawn(move || {
                thread::sleep(Duration::from_millis(30));
                m.release_all(&purger);
            })
        };
        let outcome = m.lock_record(trx, INDEX, b"k", S_RECORD, policy);
        release.join().unwrap();
        assert_eq!(outcome.unwrap(), LockOutcome::Granted, "{policy:?}");
        m.release_all(trx);
    }
    // A transaction's lock: NOWAIT fails, SKIP LOCKED skips, the purger skips too.
    lock(&m, &a, b"k", X_RECORD);
    assert!(matches!(
        m.lock_record(&b, INDEX, b"k", S_RECORD, WaitPolicy::NoWait),
        Err(Error::LockNowait)
    ));
    for trx in [&b, &purger] {
        assert_eq!(
            m.lock_record(trx, INDEX, b"k", X_RECORD, WaitPolicy::SkipLocked)
                .unwrap(),
            LockOutcome::Skipped
        );
    }
    m.release_all(&a);
    // Another brief holder's lock: a brief requester skips rather than waits.
    let helper = m.register_brief(1001);
    lock(&m, &helper, b"k", X_RECORD);
    assert_eq!(
        m.lock_record(&purger, INDEX, b"k", X_RECORD, WaitPolicy::SkipLocked)
            .unwrap(),
        LockOutcome::Skipped
    );
    // A brief holder that does not let go: the request gives up after its bound.
    let started = Instant::now();
    assert!(matches!(
        m.lock_record(&a, INDEX, b"k", S_RECORD, WaitPolicy::NoWait),
        Err(Error::LockNowait)
    ));
    assert!(started.elapsed() >= Duration::from_millis(tarn_common::limits::LOCK_BRIEF_WAIT_MS));
    m.release_all(&helper);
    m.check_invariants();
}
