//! Waiting for an LSN without a thundering herd.
//!
//! Committers wait for the written or durable LSN to reach their own LSN. Waiters are
//! sharded by the 4 KiB block of the LSN they wait for (as InnoDB's flush events are):
//! when a frontier moves from `old` to `new`, only the shards of the blocks in
//! `[old, new]` are notified, so a waiter whose LSN is still ahead usually sleeps on.
//!
//! No lost wake-up: a waiter tests its condition while holding its shard's mutex, and
//! the notifier stores the new frontier before taking that mutex to notify. Waits are
//! also bounded by a timeout, after which the waiter simply tests again.

use std::time::Duration;

use parking_lot::{Condvar, Mutex};

use crate::buffer::Padded;

const WAIT_SHARDS: u64 = 64;
const WAIT_BLOCK_SHIFT: u32 = 12;
/// A waiter re-tests its condition at least this often even without a notification.
const WAIT_RECHECK: Duration = Duration::from_millis(100);

/// A mutex that guards nothing but the test of a waiter's condition, and its condvar.
type Shard = (Mutex<()>, Condvar);

pub(crate) struct Waiters {
    shards: Box<[Padded<Shard>]>,
}

impl Default for Waiters {
    fn default() -> Self {
        Waiters {
            shards: (0..WAIT_SHARDS)
                .map(|_| Padded((Mutex::new(()), Condvar::new())))
                .collect(),
        }
    }
}

impl Waiters {
    fn shard(&self, lsn: u64) -> &Shard {
        &self.shards[((lsn >> WAIT_BLOCK_SHIFT) % WAIT_SHARDS) as usize]
    }

    /// Blocks until `done()` returns `Some`, testing it under the shard of `lsn`.
    pub fn wait<T>(&self, lsn: u64, mut done: impl FnMut() -> Option<T>) -> T {
        let (mutex, condvar) = self.shard(lsn);
        let mut guard = mutex.lock();
        loop {
            if let Some(result) = done() {
                return result;
            }
            condvar.wait_for(&mut guard, WAIT_RECHECK);
        }
    }

    /// Like [`Waiters::wait`], but gives up after `timeout` (returning `None`).
    pub fn wait_at_most<T>(
        &self,
        lsn: u64,
        timeout: std::time::Duration,
        mut done: impl FnMut() -> Option<T>,
    ) -> Option<T> {
        let (mutex, condvar) = self.shard(lsn);
        let mut guard = mutex.lock();
        if let Some(result) = done() {
            return Some(result);
        }
        condvar.wait_for(&mut guard, timeout);
        done()
    }

    /// Wakes the waiters of every LSN in `(old, new]`.
    pub fn notify_range(&self, old: u64, new: u64) {
        if new <= old {
            return;
        }
        let first = old >> WAIT_BLOCK_SHIFT;
        let last = new >> WAIT_BLOCK_SHIFT;
        if last - first + 1 >= WAIT_SHARDS {
            self.notify_all();
            return;
        }
        for block in first..=last {
            let (mutex, condvar) = &*self.shards[(block % WAIT_SHARDS) as usize];
            let _guard = mutex.lock();
            condvar.notify_all();
        }
    }

    pub fn notify_all(&self) {
        for shard in self.shards.iter() {
            let (mutex, condvar) = &**shard;
            let _guard = mutex.lock();
            condvar.notify_all();
        }
    }
}
