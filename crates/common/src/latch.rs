//! Latch accounting (technique S4) and the instrumented locks that feed it.
//!
//! Every latch in Tarn belongs to a *class* ("buffer.lru", "buffer.page", later
//! "btree.index", "lock.sys", "log.buffer"), and where the latch is per buffer-pool
//! instance, to an instance number. For each (class, instance) a [`LatchStats`] counts
//! acquisitions, contended acquisitions (the first attempt failed and the thread had
//! to wait) and the total wait in nanoseconds. [`LatchRegistry::snapshot`] reads them
//! all; a later issue exposes the snapshot as a SQL table.
//!
//! # Why the counters are striped
//!
//! A single shared counter incremented on every acquisition would itself be the most
//! contended cache line in the engine, and would make an optimistic page read (which
//! otherwise writes no shared memory) write one. Each counter is therefore split into
//! [`LATCH_COUNTER_STRIPES`] stripes aligned to 128 bytes (two cache lines: x86's
//! adjacent-line prefetcher pulls lines in pairs, so 64-byte stripes still bounced); a thread always adds to its
//! own stripe (chosen once per thread), and a snapshot sums the stripes. Contended
//! acquisitions also read the clock twice; uncontended ones never read it.
//!
//! # Invariants
//!
//! 1. Counters only grow, except through [`LatchRegistry::reset`].
//! 2. `contended <= acquisitions` for every entry in a snapshot taken while no thread
//!    is inside a latch operation (each recording adds to acquisitions first).
//! 3. While accounting is disabled no counter changes.

use std::cell::Cell;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::Instant;

use parking_lot::{Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};

use crate::limits::{LATCH_COUNTER_STRIPES, LATCH_REGISTRY_ENTRIES_MAX};

#[repr(align(128))]
#[derive(Default)]
struct Stripe {
    acquisitions: AtomicU64,
    contended: AtomicU64,
    wait_ns: AtomicU64,
}

/// The counters of one latch class, for one instance (or for the whole engine).
pub struct LatchStats {
    class: &'static str,
    instance: Option<u32>,
    /// A copy of the registry's switch, kept here so the check reads no other line.
    enabled: AtomicBool,
    stripes: Box<[Stripe]>,
}

static NEXT_THREAD_STRIPE: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    static THREAD_STRIPE: Cell<usize> = const { Cell::new(usize::MAX) };
}

#[inline]
pub(crate) fn thread_stripe() -> usize {
    THREAD_STRIPE.with(|stripe| {
        let mut index = stripe.get();
        if index == usize::MAX {
            index = NEXT_THREAD_STRIPE.fetch_add(1, Ordering::Relaxed) % LATCH_COUNTER_STRIPES;
            stripe.set(index);
        }
        index
    })
}

impl LatchStats {
    pub fn class(&self) -> &'static str {
        self.class
    }

    pub fn instance(&self) -> Option<u32> {
        self.instance
    }

    #[inline]
    pub fn is_enabled(&self) -> bool {
        self.enabled.load(Ordering::Relaxed)
    }

    /// Records an acquisition that succeeded at the first attempt.
    #[inline]
    pub fn record_uncontended(&self) {
        if self.is_enabled() {
            let stripe = &self.stripes[thread_stripe()];
            stripe.acquisitions.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Starts timing a wait; returns `None` (and costs no clock read) when disabled.
    #[inline]
    pub fn begin_wait(&self) -> Option<Instant> {
        self.is_enabled().then(Instant::now)
    }

    /// Records a contended acquisition whose wait began at `started`.
    #[inline]
    pub fn record_contended(&self, started: Option<Instant>) {
        if let Some(started) = started {
            self.record_contended_ns(started.elapsed().as_nanos() as u64);
        }
    }

    /// Records a contended acquisition that waited `wait_ns` nanoseconds.
    #[inline]
    pub fn record_contended_ns(&self, wait_ns: u64) {
        if self.is_enabled() {
            let stripe = &self.stripes[thread_stripe()];
            stripe.acquisitions.fetch_add(1, Ordering::Relaxed);
            stripe.contended.fetch_add(1, Ordering::Relaxed);
            stripe.wait_ns.fetch_add(wait_ns, Ordering::Relaxed);
        }
    }

    pub fn snapshot(&self) -> LatchSnapshot {
        let mut snapshot = LatchSnapshot {
            class: self.class,
            instance: self.instance,
            acquisitions: 0,
            contended: 0,
            wait_ns: 0,
        };
        for stripe in self.stripes.iter() {
            // Read `contended` before `acquisitions`: both grow together, so this order
            // keeps `contended <= acquisitions` even against concurrent recording.
            snapshot.contended += stripe.contended.load(Ordering::Relaxed);
            snapshot.wait_ns += stripe.wait_ns.load(Ordering::Relaxed);
            snapshot.acquisitions += stripe.acquisitions.load(Ordering::Relaxed);
        }
        snapshot
    }

    fn reset(&self) {
        for stripe in self.stripes.iter() {
            stripe.acquisitions.store(0, Ordering::Relaxed);
            stripe.contended.store(0, Ordering::Relaxed);
            stripe.wait_ns.store(0, Ordering::Relaxed);
        }
    }
}

/// One row of a latch accounting snapshot.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct LatchSnapshot {
    pub class: &'static str,
    pub instance: Option<u32>,
    pub acquisitions: u64,
    pub contended: u64,
    pub wait_ns: u64,
}

/// All latch statistics of one engine.
pub struct LatchRegistry {
    enabled: AtomicBool,
    entries: Mutex<Vec<Arc<LatchStats>>>,
}

impl LatchRegistry {
    pub fn new(enabled: bool) -> Arc<Self> {
        Arc::new(LatchRegistry {
            enabled: AtomicBool::new(enabled),
            entries: Mutex::new(Vec::new()),
        })
    }

    /// Creates the counters for one latch class (and instance). Registering the same
    /// (class, instance) twice returns the same counters.
    ///
    /// # Panics
    /// When more than [`LATCH_REGISTRY_ENTRIES_MAX`] entries are registered: latch
    /// classes are fixed in code, so this is a programming error.
    pub fn register(&self, class: &'static str, instance: Option<u32>) -> Arc<LatchStats> {
        let mut entries = self.entries.lock();
        if let Some(existing) = entries
            .iter()
            .find(|e| e.class == class && e.instance == instance)
        {
            return existing.clone();
        }
        assert!(
            entries.len() < LATCH_REGISTRY_ENTRIES_MAX,
            "latch registry full"
        );
        let stats = Arc::new(LatchStats {
            class,
            instance,
            enabled: AtomicBool::new(self.is_enabled()),
            stripes: (0..LATCH_COUNTER_STRIPES)
                .map(|_| Stripe::default())
                .collect(),
        });
        entries.push(stats.clone());
        stats
    }

    pub fn set_enabled(&self, enabled: bool) {
        let entries = self.entries.lock();
        self.enabled.store(enabled, Ordering::Relaxed);
        for entry in entries.iter() {
            entry.enabled.store(enabled, Ordering::Relaxed);
        }
    }

    pub fn is_enabled(&self) -> bool {
        self.enabled.load(Ordering::Relaxed)
    }

    /// Zeroes every counter (for benchmarks that measure one phase).
    pub fn reset(&self) {
        for entry in self.entries.lock().iter() {
            entry.reset();
        }
    }

    /// Every entry, in registration order.
    pub fn snapshot(&self) -> Vec<LatchSnapshot> {
        self.entries.lock().iter().map(|e| e.snapshot()).collect()
    }

    /// Totals per class, summed over instances, sorted by wait time (largest first).
    pub fn snapshot_by_class(&self) -> Vec<LatchSnapshot> {
        let mut by_class: Vec<LatchSnapshot> = Vec::new();
        for row in self.snapshot() {
            match by_class.iter_mut().find(|c| c.class == row.class) {
                Some(total) => {
                    total.acquisitions += row.acquisitions;
                    total.contended += row.contended;
                    total.wait_ns += row.wait_ns;
                }
                None => by_class.push(LatchSnapshot {
                    instance: None,
                    ..row
                }),
            }
        }
        by_class.sort_by(|a, b| b.wait_ns.cmp(&a.wait_ns).then(a.class.cmp(b.class)));
        by_class
    }
}

/// A mutex whose acquisitions are counted in a [`LatchStats`].
pub struct CountedMutex<T> {
    inner: Mutex<T>,
    stats: Arc<LatchStats>,
}

impl<T> CountedMutex<T> {
    pub fn new(value: T, stats: Arc<LatchStats>) -> Self {
        CountedMutex {
            inner: Mutex::new(value),
            stats,
        }
    }

    #[inline]
    pub fn lock(&self) -> MutexGuard<'_, T> {
        if let Some(guard) = self.inner.try_lock() {
            self.stats.record_uncontended();
            return guard;
        }
        let started = self.stats.begin_wait();
        let guard = self.inner.lock();
        self.stats.record_contended(started);
        guard
    }

    pub fn stats(&self) -> &LatchStats {
        &self.stats
    }
}

/// A reader-writer lock whose acquisitions are counted in a [`LatchStats`].
pub struct CountedRwLock<T> {
    inner: RwLock<T>,
    stats: Arc<LatchStats>,
}

impl<T> CountedRwLock<T> {
    pub fn new(value: T, stats: Arc<LatchStats>) -> Self {
        CountedRwLock {
            inner: RwLock::new(value),
            stats,
        }
    }

    #[inline]
    pub fn read(&self) -> RwLockReadGuard<'_, T> {
        if let Some(guard) = self.inner.try_read() {
            self.stats.record_uncontended();
            return guard;
        }
        let started = self.stats.begin_wait();
        let guard = self.inner.read();
        self.stats.record_contended(started);
        guard
    }

    #[inline]
    pub fn write(&self) -> RwLockWriteGuard<'_, T> {
        if let Some(guard) = self.inner.try_write() {
            self.stats.record_uncontended();
            return guard;
        }
        let started = self.stats.begin_wait();
        let guard = self.inner.write();
        self.stats.record_contended(started);
        guard
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::thread;
    use std::time::Duration;

    #[test]
    fn a_contended_mutex_records_the_wait_and_an_uncontended_one_does_not() {
        let registry = LatchRegistry::new(true);
        let mutex = Arc::new(CountedMutex::new(
            0u64,
            registry.register("test.mutex", Some(3)),
        ));
        let guard = mutex.lock();
        let waiter = {
            let mutex = mutex.clone();
            thread::spawn(move || *mutex.lock() += 1)
        };
        thread::sleep(Duration::from_millis(30));
        drop(guard);
        waiter.join().unwrap();

        let row = registry.snapshot().pop().unwrap();
        assert_eq!((row.class, row.instance), ("test.mutex", Some(3)));
        assert_eq!(row.acquisitions, 2);
        assert_eq!(row.contended, 1);
        assert!(row.wait_ns >= 20_000_000, "waited {} ns", row.wait_ns);
    }

    #[test]
    fn disabled_accounting_counts_nothing_and_reset_zeroes() {
        let registry = LatchRegistry::new(false);
        let lock = CountedRwLock::new((), registry.register("test.rw", None));
        drop(lock.read());
        drop(lock.write());
        assert_eq!(registry.snapshot()[0].acquisitions, 0);
        registry.set_enabled(true);
        drop(lock.read());
        assert_eq!(registry.snapshot()[0].acquisitions, 1);
        registry.reset();
        assert_eq!(registry.snapshot()[0].acquisitions, 0);
    }

    #[test]
    fn by_class_totals_sum_instances_and_registering_twice_shares_counters() {
        let registry = LatchRegistry::new(true);
        let a = registry.register("x", Some(0));
        let b = registry.register("x", Some(1));
        let a_again = registry.register("x", Some(0));
        a.record_uncontended();
        a_again.record_contended_ns(10);
        b.record_contended_ns(5);
        let totals = registry.snapshot_by_class();
        assert_eq!(totals.len(), 1);
        assert_eq!(
            (
                totals[0].acquisitions,
                totals[0].contended,
                totals[0].wait_ns
            ),
            (3, 2, 15)
        );
    }
}
