//! The page latch: shared, exclusive, or optimistic (a version check, no write).
//!
//! One 64-bit word holds everything, as in vmcache:
//!
//! ```text
//!  63                               9   8   7        0
//! +----------------------------------+---+----------+
//! |             version              | W |  state   |
//! +----------------------------------+---+----------+
//!   state: 0 unlocked, 1..=SHARED_MAX shared holders, EXCLUSIVE locked
//!   W:     some thread is parked waiting on this latch
//! ```
//!
//! Releasing an exclusive latch increments the version. An optimistic reader reads the
//! version (waiting while the state is exclusive), reads the page, then checks that the
//! version is unchanged and the state is not exclusive: if so, no writer touched the
//! page meanwhile and what it read is consistent. The reader writes nothing, so readers
//! of a hot page on different cores never invalidate each other's cache lines. Shared
//! and exclusive acquisitions are the usual reader-writer lock, for readers that must
//! hold a page across work (or I/O) and for writers.
//!
//! Waiters spin briefly, then park on the latch's address (`parking_lot_core`), with
//! the W bit telling releasers to wake them.

use std::sync::atomic::{AtomicU64, Ordering, fence};

use parking_lot_core::{DEFAULT_PARK_TOKEN, DEFAULT_UNPARK_TOKEN};
use tarn_common::latch::LatchStats;

const STATE_MASK: u64 = 0xff;
const EXCLUSIVE: u64 = 0xff;
const SHARED_MAX: u64 = 0xfe;
const WAITERS: u64 = 1 << 8;
const VERSION_ONE: u64 = 1 << 9;
const VERSION_MASK: u64 = !(STATE_MASK | WAITERS);
const SPINS_BEFORE_PARK: u32 = 64;

pub(crate) struct PageLatch {
    word: AtomicU64,
}

/// A version read by [`PageLatch::optimistic_begin`], checked by `optimistic_validate`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Version(u64);

impl PageLatch {
    pub(crate) const fn new() -> Self {
        PageLatch {
            word: AtomicU64::new(0),
        }
    }

    /// Starts an optimistic read; `None` while a writer holds the latch.
    #[inline]
    pub(crate) fn optimistic_begin(&self) -> Option<Version> {
        let word = self.word.load(Ordering::Acquire);
        (word & STATE_MASK != EXCLUSIVE).then_some(Version(word & VERSION_MASK))
    }

    /// True if no writer held the latch since `optimistic_begin` returned `version`.
    #[inline]
    pub(crate) fn optimistic_validate(&self, version: Version) -> bool {
        // Order the reader's data loads before the re-read of the word.
        fence(Ordering::Acquire);
        let word = self.word.load(Ordering::Relaxed);
        word & VERSION_MASK == version.0 && word & STATE_MASK != EXCLUSIVE
    }

    #[inline]
    pub(crate) fn try_lock_shared(&self) -> bool {
        let word = self.word.load(Ordering::Relaxed);
        let state = word & STATE_MASK;
        state < SHARED_MAX
            && self
                .word
                .compare_exchange(word, word + 1, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
    }

    #[inline]
    pub(crate) fn try_lock_exclusive(&self) -> bool {
        let word = self.word.load(Ordering::Relaxed);
        word & STATE_MASK == 0
            && self
                .word
                .compare_exchange(word, word | EXCLUSIVE, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
    }

    #[inline]
    pub(crate) fn lock_shared(&self, stats: &LatchStats) {
        if self.try_lock_shared() {
            stats.record_uncontended();
            return;
        }
        let started = stats.begin_wait();
        self.wait_until(|latch| latch.try_lock_shared(), |state| state >= SHARED_MAX);
        stats.record_contended(started);
    }

    #[inline]
    pub(crate) fn lock_exclusive(&self, stats: &LatchStats) {
        if self.try_lock_exclusive() {
            stats.record_uncontended();
            return;
        }
        let started = stats.begin_wait();
        self.wait_until(|latch| latch.try_lock_exclusive(), |state| state != 0);
        stats.record_contended(started);
    }

    /// Spins, then parks, until `acquire` succeeds. `blocked(state)` tells whether the
    /// current state prevents acquisition (so it is worth parking).
    #[cold]
    fn wait_until(&self, acquire: impl Fn(&Self) -> bool, blocked: impl Fn(u64) -> bool) {
        let mut spins = 0u32;
        loop {
            if acquire(self) {
                return;
            }
            if spins < SPINS_BEFORE_PARK {
                spins += 1;
                if spins.is_multiple_of(16) {
                    std::thread::yield_now();
                } else {
                    std::hint::spin_loop();
                }
                continue;
            }
            let word = self.word.load(Ordering::Relaxed);
            if !blocked(word & STATE_MASK) {
                continue;
            }
            if word & WAITERS == 0
                && self
                    .word
                    .compare_exchange(word, word | WAITERS, Ordering::Relaxed, Ordering::Relaxed)
                    .is_err()
            {
                continue;
            }
            let key = self.key();
            // SAFETY: `key` is this latch's address, used only as a parking key; the
            // validate callback only reads the atomic word; no callback panics or parks.
            unsafe {
                parking_lot_core::park(
                    key,
                    || {
                        let now = self.word.load(Ordering::Relaxed);
                        now & WAITERS != 0 && blocked(now & STATE_MASK)
                    },
                    || {},
                    |_, _| {},
                    DEFAULT_PARK_TOKEN,
                    None,
                );
            }
            spins = 0;
        }
    }

    #[inline]
    pub(crate) fn unlock_shared(&self) {
        let previous = self.word.fetch_sub(1, Ordering::Release);
        debug_assert!(previous & STATE_MASK != 0 && previous & STATE_MASK != EXCLUSIVE);
        if previous & WAITERS != 0 {
            self.wake_all();
        }
    }

    /// Releases an exclusive latch and advances the version.
    #[inline]
    pub(crate) fn unlock_exclusive(&self) {
        let word = self.word.load(Ordering::Relaxed);
        debug_assert_eq!(word & STATE_MASK, EXCLUSIVE);
        let next = (word & VERSION_MASK).wrapping_add(VERSION_ONE);
        let previous = self.word.swap(next, Ordering::Release);
        if previous & WAITERS != 0 {
            self.wake_all();
        }
    }

    /// Turns an exclusive latch into a shared one held by the caller, advancing the
    /// version (the holder may have changed the page).
    pub(crate) fn downgrade(&self) {
        let word = self.word.load(Ordering::Relaxed);
        debug_assert_eq!(word & STATE_MASK, EXCLUSIVE);
        let next = (word & VERSION_MASK).wrapping_add(VERSION_ONE) | 1;
        let previous = self.word.swap(next, Ordering::Release);
        if previous & WAITERS != 0 {
            self.wake_all();
        }
    }

    #[cold]
    fn wake_all(&self) {
        self.word.fetch_and(!WAITERS, Ordering::Relaxed);
        // SAFETY: `key` is only a parking key; the callback-free unpark cannot deadlock.
        unsafe {
            parking_lot_core::unpark_all(self.key(), DEFAULT_UNPARK_TOKEN);
        }
    }

    fn key(&self) -> usize {
        &self.word as *const AtomicU64 as usize
    }

    /// True if nobody holds the latch (for invariant checks).
    pub(crate) fn is_unlocked(&self) -> bool {
        self.word.load(Ordering::Relaxed) & STATE_MASK == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::AtomicUsize;
    use tarn_common::latch::LatchRegistry;

    #[test]
    fn exclusive_release_invalidates_optimistic_readers_and_shared_does_not() {
        let latch = PageLatch::new();
        let stats = LatchRegistry::new(true).register("t", None);
        let version = latch.optimistic_begin().unwrap();
        latch.lock_shared(&stats);
        latch.unlock_shared();
        assert!(latch.optimistic_validate(version));
        latch.lock_exclusive(&stats);
        assert!(latch.optimistic_begin().is_none());
        assert!(!latch.optimistic_validate(version));
        latch.unlock_exclusive();
        assert!(!latch.optimistic_validate(version));
        assert!(latch.is_unlocked());
    }

    #[test]
    fn writers_exclude_each_other_and_readers_under_contention() {
        let registry = LatchRegistry::new(true);
        let stats = registry.register("t", None);
        let latch = Arc::new(PageLatch::new());
        let inside = Arc::new(AtomicUsize::new(0));
        let threads: Vec<_> = (0..8)
            .map(|i| {
                let (latch, inside, stats) = (latch.clone(), inside.clone(), stats.clone());
                std::thread::spawn(move || {
                    for _ in 0..2000 {
                        if i % 2 == 0 {
                            latch.lock_exclusive(&stats);
                            assert_eq!(inside.fetch_add(1000, Ordering::SeqCst), 0);
                            inside.fetch_sub(1000, Ordering::SeqCst);
                            latch.unlock_exclusive();
                        } else {
                            latch.lock_shared(&stats);
                            assert!(inside.fetch_add(1, Ordering::SeqCst) < 1000);
                            inside.fetch_sub(1, Ordering::SeqCst);
                            latch.unlock_shared();
                        }
                    }
                })
            })
            .collect();
        threads.into_iter().for_each(|t| t.join().unwrap());
        assert!(latch.is_unlocked());
        assert_eq!(registry.snapshot()[0].acquisitions, 16_000);
    }

    #[test]
    fn downgrade_keeps_one_shared_holder_and_advances_the_version() {
        let latch = PageLatch::new();
        let stats = LatchRegistry::new(false).register("t", None);
        let version = latch.optimistic_begin().unwrap();
        latch.lock_exclusive(&stats);
        latch.downgrade();
        assert!(!latch.try_lock_exclusive());
        assert!(latch.try_lock_shared());
        latch.unlock_shared();
        latch.unlock_shared();
        assert!(latch.is_unlocked());
        assert!(!latch.optimistic_validate(version));
    }
}
