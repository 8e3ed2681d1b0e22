//! Waiting for an LSN.
//!
//! Committers wait for the written or durable LSN to reach their own LSN. Waiters are
//! sharded by the 4 KiB block of the LSN they wait for (as InnoDB's flush events are):
//! when a frontier moves from `old` to `new`, only the shards of the blocks in
//! `[old, new]` are visited. Two ways to wait, chosen per frontier by who notifies
//! ([`Waiters`]):
//!
//! - [`ParkWaiters`], where the log writer thread notifies (file devices). Each waiter
//!   parks its own thread; the writer unparks [`WAKE_FANOUT`] of the threads it
//!   releases and leaves the rest in a hand-off list, and every thread whose wait ends
//!   unparks `WAKE_FANOUT` more, so the wake-ups spread as a tree over the committers'
//!   time while the writer goes straight back to writing and syncing. Whatever is
//!   left when the writer goes idle it wakes itself ([`Waiters::wake_handed_off`]). A
//!   condition variable would instead make the writer hand its mutex from each woken
//!   thread to the next: with 64 committers on 2 cores the writer spent longer in
//!   that chain than in `fdatasync`.
//! - [`CondvarWaiters`], where committers notify each other (pmem, none: the
//!   committer that stamps releases the rest). The mutex hand-off makes the released
//!   threads runnable one after another; waking them all at once made the
//!   LinkBench-like bench on pmem wait 5-10x longer for row locks, because a burst of
//!   runnable threads preempts transactions that hold locks.
//!
//! No lost wake-up: a waiter tests its condition and registers (or sleeps) under its
//! shard's mutex, and the notifier stores the new frontier before taking that mutex.
//! A park-based waiter may be unparked after it stopped waiting (a harmless spurious
//! wake-up later: every wait loops on its condition). Waits are also bounded by a
//! timeout, after which the waiter simply tests again.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread::Thread;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

use crate::buffer::Padded;

const WAIT_SHARDS: u64 = 64;
const WAIT_BLOCK_SHIFT: u32 = 12;
/// A waiter re-tests its condition at least this often even without a notification.
const WAIT_RECHECK: Duration = Duration::from_millis(100);

/// The shard of the waiters for `lsn`.
fn shard_index(lsn: u64) -> usize {
    ((lsn >> WAIT_BLOCK_SHIFT) % WAIT_SHARDS) as usize
}

/// The shards holding waiters for LSNs in `[old, new]` (all of them for a wide range).
fn shards_between(old: u64, new: u64) -> impl Iterator<Item = usize> {
    let first = old >> WAIT_BLOCK_SHIFT;
    let last = new >> WAIT_BLOCK_SHIFT;
    let blocks = if last - first + 1 >= WAIT_SHARDS {
        0..WAIT_SHARDS
    } else {
        first..last + 1
    };
    blocks.map(|block| (block % WAIT_SHARDS) as usize)
}

/// Threads a notifier unparks, and each thread whose wait ends.
const WAKE_FANOUT: usize = 2;

/// The threads waiting in one shard, with the LSN each waits for.
type Shard = Mutex<Vec<(u64, Thread)>>;

pub(crate) struct ParkWaiters {
    shards: Box<[Padded<Shard>]>,
    /// Released threads not yet unparked (at most every waiting thread).
    handed_off: Mutex<VecDeque<Thread>>,
    handed_off_len: AtomicUsize,
}

impl ParkWaiters {
    pub fn new() -> ParkWaiters {
        ParkWaiters {
            shards: (0..WAIT_SHARDS)
                .map(|_| Padded(Mutex::new(Vec::new())))
                .collect(),
            handed_off: Mutex::new(VecDeque::new()),
            handed_off_len: AtomicUsize::new(0),
        }
    }

    /// Like [`Waiters::wait`], but gives up after `timeout` (returning `None`).
    pub fn wait_at_most<T>(
        &self,
        lsn: u64,
        timeout: Duration,
        mut done: impl FnMut() -> Option<T>,
    ) -> Option<T> {
        self.wake_some();
        if let Some(result) = done() {
            return Some(result);
        }
        let shard = &self.shards[shard_index(lsn)];
        let me = std::thread::current();
        {
            let mut waiting = shard.lock();
            if let Some(result) = done() {
                return Some(result);
            }
            waiting.push((lsn, me.clone()));
        }
        let deadline = Instant::now() + timeout;
        loop {
            std::thread::park_timeout(deadline.saturating_duration_since(Instant::now()));
            // Done: the notifier has removed the entry, or will, and then unparks a
            // thread that no longer parks here (a spurious wake-up later, harmless).
            if let Some(result) = done() {
                self.wake_some();
                return Some(result);
            }
            if Instant::now() >= deadline {
                let id = me.id();
                shard.lock().retain(|(_, t)| t.id() != id);
                let result = done();
                if result.is_some() {
                    self.wake_some();
                }
                return result;
            }
        }
    }

    /// Wakes the waiters of every LSN in `(old, new]`. The caller stores the frontier
    /// `new` before calling.
    pub fn notify_range(&self, old: u64, new: u64) {
        let mut woken = Vec::new();
        for shard in shards_between(old, new) {
            drain_upto(&self.shards[shard], new, &mut woken);
        }
        if woken.len() > WAKE_FANOUT {
            let rest = woken.split_off(WAKE_FANOUT);
            let mut handed_off = self.handed_off.lock();
            handed_off.extend(rest);
            self.handed_off_len
                .store(handed_off.len(), Ordering::Release);
        }
        for thread in woken {
            thread.unpark();
        }
    }

    /// Unparks up to [`WAKE_FANOUT`] handed-off threads.
    fn wake_some(&self) {
        if self.handed_off_len.load(Ordering::Acquire) == 0 {
            return;
        }
        // Oldest first: under load new releases keep arriving, and a stack would leave
        // the first ones parked until the load stopped.
        let mut handed_off = self.handed_off.lock();
        let n = handed_off.len().min(WAKE_FANOUT);
        let some: Vec<Thread> = handed_off.drain(..n).collect();
        self.handed_off_len
            .store(handed_off.len(), Ordering::Release);
        drop(handed_off);
        for thread in some {
            thread.unpark();
        }
    }

    /// Unparks every handed-off thread (the notifier has nothing else to do).
    pub fn wake_handed_off(&self) {
        if self.handed_off_len.load(Ordering::Acquire) == 0 {
            return;
        }
        let all = {
            let mut handed_off = self.handed_off.lock();
            self.handed_off_len.store(0, Ordering::Release);
            std::mem::take(&mut *handed_off)
        };
        for thread in all {
            thread.unpark();
        }
    }
}

/// Moves the threads of `shard` waiting for an LSN `<= upto` into `woken`.
fn drain_upto(shard: &Shard, upto: u64, woken: &mut Vec<Thread>) {
    let mut waiting = shard.lock();
    if waiting.is_empty() {
        return;
    }
    waiting.retain(|(lsn, thread)| {
        if *lsn <= upto {
            woken.push(thread.clone());
            false
        } else {
            true
        }
    });
}

/// Waiting on one condition variable per shard. `notify_all` hands the shard's mutex
/// from each woken thread to the next, so the released threads become runnable one
/// after another rather than all at once.
pub(crate) struct CondvarWaiters {
    shards: Box<[Padded<CondvarShard>]>,
}

/// A mutex that guards nothing but the test of a waiter's condition, and its condvar.
type CondvarShard = (Mutex<()>, Condvar);

impl CondvarWaiters {
    pub fn new() -> CondvarWaiters {
        CondvarWaiters {
            shards: (0..WAIT_SHARDS)
                .map(|_| Padded((Mutex::new(()), Condvar::new())))
                .collect(),
        }
    }

    pub fn wait_at_most<T>(
        &self,
        lsn: u64,
        timeout: Duration,
        mut done: impl FnMut() -> Option<T>,
    ) -> Option<T> {
        let (mutex, condvar) = &*self.shards[shard_index(lsn)];
        let mut guard = mutex.lock();
        if let Some(result) = done() {
            return Some(result);
        }
        condvar.wait_for(&mut guard, timeout);
        done()
    }

    pub fn notify_range(&self, old: u64, new: u64) {
        for shard in shards_between(old, new) {
            let (mutex, condvar) = &*self.shards[shard];
            let _guard = mutex.lock();
            condvar.notify_all();
        }
    }
}

/// The waiters of one frontier (see the module docs for which and why).
pub(crate) enum Waiters {
    Park(ParkWaiters),
    Condvar(CondvarWaiters),
}

impl Waiters {
    /// Blocks until `done()` returns `Some`. `done` must turn `Some` only after the
    /// frontier that [`Waiters::notify_range`] reports has passed `lsn` (or after a
    /// [`Waiters::notify_all`]).
    pub fn wait<T>(&self, lsn: u64, mut done: impl FnMut() -> Option<T>) -> T {
        if let Some(result) = done() {
            return result;
        }
        tarn_common::blocking::about_to_block();
        loop {
            if let Some(result) = self.wait_at_most(lsn, WAIT_RECHECK, &mut done) {
                return result;
            }
        }
    }

    /// Like [`Waiters::wait`], but gives up after `timeout` (returning `None`).
    pub fn wait_at_most<T>(
        &self,
        lsn: u64,
        timeout: Duration,
        done: impl FnMut() -> Option<T>,
    ) -> Option<T> {
        match self {
            Waiters::Park(w) => w.wait_at_most(lsn, timeout, done),
            Waiters::Condvar(w) => w.wait_at_most(lsn, timeout, done),
        }
    }

    /// Wakes the waiters of every LSN in `(old, new]`. The caller stores the frontier
    /// `new` before calling.
    pub fn notify_range(&self, old: u64, new: u64) {
        if new <= old {
            return;
        }
        match self {
            Waiters::Park(w) => w.notify_range(old, new),
            Waiters::Condvar(w) => w.notify_range(old, new),
        }
    }

    /// Wakes every waiter (the log failed or shuts down).
    pub fn notify_all(&self) {
        self.notify_range(0, u64::MAX);
    }

    /// Unparks every handed-off thread (the notifier has nothing else to do).
    pub fn wake_handed_off(&self) {
        if let Waiters::Park(w) = self {
            w.wake_handed_off();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::AtomicU64;

    #[test]
    fn waiters_wake_when_their_lsn_is_passed_and_not_before() {
        for kind in ["park", "condvar"] {
            let waiters = Arc::new(match kind {
                "park" => Waiters::Park(ParkWaiters::new()),
                _ => Waiters::Condvar(CondvarWaiters::new()),
            });
            let frontier = Arc::new(AtomicU64::new(0));
            let lsns = [100u64, 5000, 5000, 70_000, 1 << 30];
            let handles: Vec<_> = lsns
                .iter()
                .map(|&lsn| {
                    let (w, f) = (waiters.clone(), frontier.clone());
                    std::thread::spawn(move || {
                        w.wait(lsn, || (f.load(Ordering::Acquire) >= lsn).then_some(()));
                        assert!(f.load(Ordering::Acquire) >= lsn);
                        lsn
                    })
                })
                .collect();
            let mut old = 0;
            for new in [50u64, 100, 6000, 80_000, 1 << 31] {
                std::thread::sleep(Duration::from_millis(5));
                frontier.store(new, Ordering::Release);
                waiters.notify_range(old, new);
                old = new;
            }
            let mut done: Vec<u64> = handles.into_iter().map(|h| h.join().unwrap()).collect();
            done.sort();
            assert_eq!(done, lsns, "{kind}");
            if let Waiters::Park(park) = &*waiters {
                assert!(park.shards.iter().all(|s| s.lock().is_empty()));
            }
        }
    }

    #[test]
    fn a_timed_out_wait_leaves_no_entry_behind() {
        let waiters = ParkWaiters::new();
        let got: Option<()> = waiters.wait_at_most(42, Duration::from_millis(2), || None);
        assert!(got.is_none());
        assert!(waiters.shards.iter().all(|s| s.lock().is_empty()));
    }
}
