//! The lock state of one transaction: its work, its CATS weight, its wait, and the
//! names of the locks it holds.

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use tarn_common::limits::LOCK_WAIT_INTERRUPT_CHECK_MS;
use tarn_common::{Error, StatementInterrupt};

use parking_lot::{Condvar, Mutex};

use super::LockName;

/// Where a transaction's current (or last) lock wait stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum WaitState {
    /// Not waiting.
    Idle = 0,
    /// Its request is queued; the scheduler may grant it.
    Waiting = 1,
    /// The scheduler granted the request; the waiting thread has not yet seen it.
    Granted = 2,
    /// The deadlock detector chose it as the victim; the waiting thread has not yet
    /// removed its request.
    Deadlock = 3,
}

impl WaitState {
    fn from_u8(value: u8) -> WaitState {
        match value {
            0 => WaitState::Idle,
            1 => WaitState::Waiting,
            2 => WaitState::Granted,
            3 => WaitState::Deadlock,
            _ => unreachable!("bad wait state {value}"),
        }
    }
}

/// Per-transaction lock state, created by [`super::LockManager::register`].
///
/// Changes of [`LockTrx::weight`] and of the wait state from `Waiting` happen only under
/// the lock manager's wait-graph latch; they are atomics so that the owner and the
/// monitoring views can read them without it.
pub struct LockTrx {
    id: u64,
    work: AtomicU64,
    weight: AtomicU64,
    state: AtomicU8,
    /// Pairs with `wakeup`: the waiting thread sleeps on it (no spinning).
    parker: Mutex<()>,
    wakeup: Condvar,
    /// Every key on which this trx has a granted entry, in the order granted.
    pub(crate) held: Mutex<Vec<LockName>>,
    /// The owner's statement's stop switch. Its kill flag is set by whoever may stop
    /// the statement (KILL QUERY, a client that disconnected): a wait sees it within
    /// `LOCK_WAIT_INTERRUPT_CHECK_MS` and ends with error 1317. Its deadline
    /// (`max_execution_time`) ends a wait when it passes, with error 3024. The owner
    /// re-arms it between statements. It also carries the owner's session's lock wait
    /// timeout ([`LockTrx::wait_timeout`]).
    interrupt: Option<Arc<StatementInterrupt>>,
    /// A background holder (purge) that keeps its locks for a moment and never waits:
    /// NOWAIT and SKIP LOCKED requests wait for it rather than fail or skip (see
    /// [`crate::lock::LockManager::register_brief`]).
    brief: bool,
}

impl LockTrx {
    pub(crate) fn new(id: u64, interrupt: Option<Arc<StatementInterrupt>>) -> LockTrx {
        LockTrx {
            interrupt,
            brief: false,
            id,
            work: AtomicU64::new(0),
            weight: AtomicU64::new(1),
            state: AtomicU8::new(WaitState::Idle as u8),
            parker: Mutex::new(()),
            wakeup: Condvar::new(),
            held: Mutex::new(Vec::new()),
        }
    }

    /// A brief holder's lock state (see `brief`).
    pub(crate) fn new_brief(id: u64) -> LockTrx {
        LockTrx {
            brief: true,
            ..LockTrx::new(id, None)
        }
    }

    pub fn id(&self) -> u64 {
        self.id
    }

    pub(crate) fn is_brief(&self) -> bool {
        self.brief
    }

    /// Adds to the work done (rows changed); the deadlock victim is the trx in the
    /// cycle with the least work.
    pub fn add_work(&self, rows: u64) {
        self.work.fetch_add(rows, Ordering::Relaxed);
    }

    pub fn work(&self) -> u64 {
        self.work.load(Ordering::Relaxed)
    }

    /// The CATS weight: 1 plus the number of transactions waiting, directly or
    /// transitively, for locks this one holds (see the module docs of `lock`).
    pub fn weight(&self) -> u64 {
        self.weight.load(Ordering::Acquire)
    }

    pub fn is_waiting(&self) -> bool {
        self.state() == WaitState::Waiting
    }

    /// Locks (keys and tables) on which this transaction holds a granted entry.
    pub fn held_count(&self) -> usize {
        self.held.lock().len()
    }

    pub(crate) fn add_weight(&self, delta: i64) {
        let before = self.weight.fetch_add(delta as u64, Ordering::AcqRel);
        debug_assert!(
            before.wrapping_add(delta as u64) >= 1,
            "trx {} weight {before} + {delta} below 1",
            self.id
        );
    }

    pub(crate) fn state(&self) -> WaitState {
        WaitState::from_u8(self.state.load(Ordering::Acquire))
    }

    pub(crate) fn set_state(&self, state: WaitState) {
        self.state.store(state as u8, Ordering::Release);
    }

    /// Sets the state and wakes the waiting thread. Taking the parker between the
    /// store and the notification means a waiter that saw the old state is already
    /// asleep when the notification comes, so it cannot be lost.
    pub(crate) fn set_state_and_wake(&self, state: WaitState) {
        self.set_state(state);
        drop(self.parker.lock());
        self.wakeup.notify_one();
    }

    /// The lock wait timeout of the owner's session (`innodb_lock_wait_timeout`), if
    /// it has one; else the lock manager's engine-wide timeout applies. Read when a
    /// wait begins.
    pub fn wait_timeout(&self) -> Option<Duration> {
        self.interrupt.as_ref()?.lock_wait_timeout()
    }

    /// The error the owner's statement must stop with, if it must stop now (killed:
    /// 1317; past its deadline: 3024).
    pub(crate) fn interruption(&self) -> Option<Error> {
        self.interrupt.as_ref()?.interruption()
    }

    /// Sleeps until the state leaves `Waiting`, `deadline` (the lock wait timeout)
    /// passes or the owner's statement is interrupted; returns the state (still
    /// `Waiting` after a timeout or an interrupt). An interruptible wait sleeps no
    /// later than its statement's deadline, and wakes every
    /// `LOCK_WAIT_INTERRUPT_CHECK_MS` to look at the kill flag: the flag's setter knows
    /// nothing of locks, so it cannot wake the waiter itself.
    pub(crate) fn sleep_while_waiting(&self, deadline: Instant) -> WaitState {
        let check = Duration::from_millis(LOCK_WAIT_INTERRUPT_CHECK_MS);
        tarn_common::blocking::about_to_block();
        let mut guard = self.parker.lock();
        while self.state() == WaitState::Waiting && self.interruption().is_none() {
            let until = match &self.interrupt {
                Some(interrupt) => {
                    let next_check = deadline.min(Instant::now() + check);
                    interrupt
                        .deadline()
                        .map_or(next_check, |statement| next_check.min(statement))
                }
                None => deadline,
            };
            if self.wakeup.wait_until(&mut guard, until).timed_out() && until == deadline {
                break;
            }
        }
        self.state()
    }
}

impl std::fmt::Debug for LockTrx {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LockTrx")
            .field("id", &self.id)
            .field("work", &self.work())
            .field("weight", &self.weight())
            .field("state", &self.state())
            .finish()
    }
}
