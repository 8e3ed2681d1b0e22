//! The threads of one buffer-pool cell, and the windows the bench measures them in.
//!
//! [`run`] starts N worker threads on one or more pools and hands a [`Driver`] to the
//! caller's control closure, which warms the pool ([`Driver::warm`]), switches the
//! pool the workers use ([`Driver::select`]) or the latch accounting, and measures
//! windows ([`Driver::window`]). The workers never stop between windows: thread start,
//! the first misses of each thread and its io_uring ring creation all fall in the warm
//! up, never in a window.
//!
//! Each operation picks a page of the data set (uniform or scrambled zipfian) and
//! either reads it with [`BufferPool::read_optimistic`] (a shared-latch read when the
//! pool's `optimistic_reads` is off) or, with probability `write_pct`, takes it with
//! [`BufferPool::fetch_exclusive`], adds one to a counter in the body and marks it
//! dirty at the next LSN of a counter shared by every thread.
//!
//! # Verification
//! Every read and write checks two fields the loader wrote: the page id in the header
//! and the second u64 of the body (`load::body_word(page, 1)`), which the bench never
//! changes (the counter is the first body word). A page with the wrong id fails the
//! cell with [`Error::PageMisplaced`]; a wrong body word with
//! [`crate::BenchError::WrongData`]. A fast wrong answer is not a result.
//!
//! Each worker publishes its operation count every [`OPS_PER_PUBLISH`] operations to
//! its own cache line, so counting costs no shared write; a window's count is the
//! difference of the sums read at its start and end.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use tarn_buffer::{BufferPool, PoolStats};
use tarn_common::latch::LatchSnapshot;
use tarn_common::rng::{Rng, Zipf};
use tarn_common::{Error, FileId, Lsn, PageId, PageNo};
use tarn_io::os::process_cpu_time;
use tarn_io::page::{self, PAGE_HEADER_BYTES};

use crate::load;
use crate::{BenchError, Result};

/// Operations between two publications of a worker's counts (and checks of `stop`).
const OPS_PER_PUBLISH: u64 = 8;

/// How often the warm-up and the windows look at the pool and at failures.
const POLL_INTERVAL: Duration = Duration::from_millis(20);

/// Seed of the page choices; worker `i` uses its own stream derived from it.
const WORKLOAD_SEED: u64 = 0xb0ff_e7a2_b5ee_d001;

/// Byte offset of the counter writers change (the first body word).
const COUNTER_AT: usize = PAGE_HEADER_BYTES;
/// Index of the body word every access checks (never changed by the bench).
const CHECK_WORD: usize = 1;
const CHECK_AT: usize = PAGE_HEADER_BYTES + 8 * CHECK_WORD;
/// Header bytes read to find the page id (file id at 8, page number at 12).
const ID_BYTES: usize = 16;

/// What the workers do: which pages, how they are picked, how many writes.
#[derive(Clone, Debug)]
pub(crate) struct Workload {
    pub(crate) file_id: FileId,
    /// The data set is pages `0..pages` of the file.
    pub(crate) pages: u64,
    /// Scrambled zipfian ranks when set; uniform otherwise.
    pub(crate) zipf: Option<Zipf>,
    /// Share of operations that are writes, in percent.
    pub(crate) write_pct: u32,
}

impl Workload {
    #[inline]
    fn pick(&self, rng: &mut Rng) -> PageId {
        let page = match &self.zipf {
            Some(zipf) => zipf.sample_scrambled(rng),
            None => rng.below(self.pages),
        };
        PageId::new(self.file_id, PageNo(page as u32))
    }
}

/// Why a worker stopped.
#[derive(Debug)]
pub(crate) enum Failure {
    Engine(Error),
    WrongData(String),
}

impl Failure {
    /// The bench error for the cell named `row`, which saw `errors` failures.
    pub(crate) fn into_bench_error(self, row: String, errors: u64) -> BenchError {
        match self {
            Failure::Engine(first) => BenchError::Row { row, errors, first },
            Failure::WrongData(detail) => BenchError::WrongData { row, detail },
        }
    }
}

impl From<Error> for Failure {
    fn from(error: Error) -> Failure {
        Failure::Engine(error)
    }
}

fn check(pool: &BufferPool, page_id: PageId, header: &[u8], word: u64) -> Result<(), Failure> {
    let found = page::header_page_id(header);
    if found != page_id {
        return Err(Failure::Engine(Error::PageMisplaced {
            file: pool.datadir().file_path(page_id.file_id),
            expected: page_id,
            found,
        }));
    }
    let expected = load::body_word(page_id.page_no, CHECK_WORD);
    if word != expected {
        return Err(Failure::WrongData(format!(
            "page {page_id}: body word {CHECK_WORD} is {word:#018x}, the loader wrote \
             {expected:#018x}"
        )));
    }
    Ok(())
}

/// Reads `page_id` the way the workload does and checks it.
pub(crate) fn read(pool: &BufferPool, page_id: PageId) -> Result<(), Failure> {
    let (header, word) = pool.read_optimistic(page_id, |page| {
        let mut header = [0u8; ID_BYTES];
        page.read_into(0, &mut header);
        (header, page.read_u64_le(CHECK_AT))
    })?;
    check(pool, page_id, &header, word)
}

/// Changes the counter of `page_id` under its exclusive latch and marks it dirty.
fn write(pool: &BufferPool, page_id: PageId, lsn: &LsnCounter) -> Result<(), Failure> {
    let mut guard = pool.fetch_exclusive(page_id)?;
    let word = u64::from_le_bytes(guard[CHECK_AT..CHECK_AT + 8].try_into().expect("8 bytes"));
    check(pool, page_id, &guard[..ID_BYTES], word)?;
    let counter = u64::from_le_bytes(
        guard[COUNTER_AT..COUNTER_AT + 8]
            .try_into()
            .expect("8 bytes"),
    );
    guard[COUNTER_AT..COUNTER_AT + 8].copy_from_slice(&counter.wrapping_add(1).to_le_bytes());
    guard.mark_dirty(lsn.next());
    Ok(())
}

/// The LSN counter writers take their next LSN from, alone on its cache lines (it is
/// written by every write; nothing read on every operation may share its line).
#[repr(align(128))]
#[derive(Debug, Default)]
pub(crate) struct LsnCounter(AtomicU64);

impl LsnCounter {
    #[inline]
    fn next(&self) -> Lsn {
        Lsn(self.0.fetch_add(1, Ordering::Relaxed) + 1)
    }
}

/// Each worker's counts, on cache lines of their own (128 bytes: x86 prefetchers fetch
/// lines in adjacent pairs, so 64-byte neighbours written by two cores still bounce).
#[repr(align(128))]
#[derive(Default)]
struct WorkerCounts {
    ops: AtomicU64,
    writes: AtomicU64,
}

/// The pool counters that moved during a window.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct StatsDelta {
    pub(crate) fetches: u64,
    pub(crate) hits: u64,
    pub(crate) misses: u64,
    pub(crate) io_waits: u64,
    pub(crate) optimistic_retries: u64,
    pub(crate) page_reads: u64,
    pub(crate) page_writes: u64,
    pub(crate) evictions: u64,
}

impl StatsDelta {
    pub(crate) fn between(before: &PoolStats, after: &PoolStats) -> StatsDelta {
        let fetches = after.fetches.saturating_sub(before.fetches);
        let misses = after.misses.saturating_sub(before.misses);
        StatsDelta {
            fetches,
            hits: fetches.saturating_sub(misses),
            misses,
            io_waits: after.io_waits.saturating_sub(before.io_waits),
            optimistic_retries: after
                .optimistic_retries
                .saturating_sub(before.optimistic_retries),
            page_reads: after.page_reads.saturating_sub(before.page_reads),
            page_writes: after.page_writes.saturating_sub(before.page_writes),
            evictions: after.evictions.saturating_sub(before.evictions),
        }
    }

    /// hits / fetches, or `None` with no fetches.
    pub(crate) fn hit_rate(&self) -> Option<f64> {
        (self.fetches > 0).then(|| self.hits as f64 / self.fetches as f64)
    }
}

/// What one window measured.
#[derive(Clone, Debug)]
pub(crate) struct Window {
    pub(crate) ops: u64,
    pub(crate) writes: u64,
    pub(crate) elapsed: Duration,
    /// Process CPU time (all threads) during the window.
    pub(crate) cpu: Duration,
    pub(crate) stats: StatsDelta,
    /// Latch accounting per class over the window (zero while accounting is off).
    pub(crate) latches: Vec<LatchSnapshot>,
}

impl Window {
    pub(crate) fn ops_per_s(&self) -> f64 {
        let seconds = self.elapsed.as_secs_f64();
        if seconds > 0.0 {
            self.ops as f64 / seconds
        } else {
            0.0
        }
    }
}

/// How a warm-up ended.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Warm {
    pub(crate) elapsed: Duration,
    /// Frames holding a page when the warm-up ended.
    pub(crate) resident: u64,
    pub(crate) frames: u64,
    /// True if the resident target was reached (false: the time limit ended it).
    pub(crate) reached: bool,
}

/// The caller's handle on running workers. Boxed and aligned so that what workers
/// read on every operation (`selected`, `stop`) shares no line with the main thread's
/// stack.
#[repr(align(128))]
pub(crate) struct Driver<'a> {
    pools: &'a [&'a BufferPool],
    selected: AtomicUsize,
    stop: AtomicBool,
    counts: Box<[WorkerCounts]>,
    failure: Mutex<Option<Failure>>,
    failures: AtomicU64,
}

impl<'a> Driver<'a> {
    /// The pool the workers use now.
    pub(crate) fn pool(&self) -> &'a BufferPool {
        self.pools[self.selected.load(Ordering::Relaxed)]
    }

    /// Makes the workers use `pools[index]` from their next operation on.
    pub(crate) fn select(&self, index: usize) {
        assert!(index < self.pools.len(), "no pool {index}");
        self.selected.store(index, Ordering::Relaxed);
    }

    fn failed(&self) -> bool {
        self.failures.load(Ordering::Relaxed) > 0
    }

    fn fail(&self, failure: Failure) {
        self.failures.fetch_add(1, Ordering::Relaxed);
        self.failure
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get_or_insert(failure);
        self.stop.store(true, Ordering::Relaxed);
    }

    fn totals(&self) -> (u64, u64) {
        self.counts.iter().fold((0, 0), |(ops, writes), c| {
            (
                ops + c.ops.load(Ordering::Relaxed),
                writes + c.writes.load(Ordering::Relaxed),
            )
        })
    }

    /// Sleeps for `duration`, waking early if a worker failed.
    pub(crate) fn pause(&self, duration: Duration) {
        let started = Instant::now();
        while !self.failed() {
            let left = duration.saturating_sub(started.elapsed());
            if left.is_zero() {
                break;
            }
            std::thread::sleep(left.min(POLL_INTERVAL));
        }
    }

    /// Lets the workers run until at least `min` has passed and `resident_target`
    /// frames of the selected pool hold pages, or until `max` has passed.
    pub(crate) fn warm(&self, min: Duration, max: Duration, resident_target: u64) -> Warm {
        let started = Instant::now();
        loop {
            let stats = self.pool().stats();
            let resident = stats.frames.saturating_sub(stats.free_frames);
            let elapsed = started.elapsed();
            let reached = resident >= resident_target;
            if self.failed() || (reached && elapsed >= min) || elapsed >= max {
                return Warm {
                    elapsed,
                    resident,
                    frames: stats.frames,
                    reached,
                };
            }
            std::thread::sleep(POLL_INTERVAL);
        }
    }

    /// Measures one window of `duration` on the selected pool: the latch registry is
    /// reset at its start, the pool's counters are read at both ends.
    pub(crate) fn window(&self, duration: Duration) -> Window {
        let pool = self.pool();
        let registry = pool.datadir().latches();
        // `stats()` takes each instance's list latches: read it outside the window's
        // latch accounting (before the reset, after the snapshot).
        let stats_before = pool.stats();
        registry.reset();
        let cpu_before = process_cpu_time();
        let (ops_before, writes_before) = self.totals();
        let started = Instant::now();
        self.pause(duration);
        let (ops_after, writes_after) = self.totals();
        let elapsed = started.elapsed();
        let cpu = process_cpu_time().saturating_sub(cpu_before);
        let latches = registry.snapshot_by_class();
        let stats_after = pool.stats();
        Window {
            ops: ops_after.saturating_sub(ops_before),
            writes: writes_after.saturating_sub(writes_before),
            elapsed,
            cpu,
            stats: StatsDelta::between(&stats_before, &stats_after),
            latches,
        }
    }
}

fn worker(driver: &Driver<'_>, workload: &Workload, lsn: &LsnCounter, index: usize) {
    // A copy on this thread's own stack: the workload is read on every operation.
    let workload = workload.clone();
    let mut rng = Rng::new(WORKLOAD_SEED ^ (index as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15));
    let counts = &driver.counts[index];
    let (mut ops, mut writes) = (0u64, 0u64);
    while !driver.stop.load(Ordering::Relaxed) {
        let pool = driver.pool();
        for _ in 0..OPS_PER_PUBLISH {
            let page_id = workload.pick(&mut rng);
            let outcome = if workload.write_pct > 0 && rng.percent(workload.write_pct) {
                writes += 1;
                write(pool, page_id, lsn)
            } else {
                read(pool, page_id)
            };
            if let Err(failure) = outcome {
                driver.fail(failure);
                return;
            }
        }
        ops += OPS_PER_PUBLISH;
        counts.ops.store(ops, Ordering::Relaxed);
        counts.writes.store(writes, Ordering::Relaxed);
    }
}

/// Runs `threads` workers of `workload` on `pools` (starting on `pools[0]`) while
/// `control` runs on the calling thread; stops and joins them when it returns. A
/// worker's failure wins over `control`'s result; `row` names the cell in errors.
pub(crate) fn run<R>(
    pools: &[&BufferPool],
    workload: &Workload,
    threads: u32,
    lsn: &LsnCounter,
    row: &str,
    control: impl FnOnce(&Driver<'_>) -> Result<R>,
) -> Result<R> {
    assert!(!pools.is_empty(), "a driver needs a pool");
    let driver = Box::new(Driver {
        pools,
        selected: AtomicUsize::new(0),
        stop: AtomicBool::new(false),
        counts: (0..threads).map(|_| WorkerCounts::default()).collect(),
        failure: Mutex::new(None),
        failures: AtomicU64::new(0),
    });
    let outcome = std::thread::scope(|scope| {
        for index in 0..threads as usize {
            let driver = &*driver;
            let spawned = std::thread::Builder::new()
                .name(format!("bench-bp-{index}"))
                .spawn_scoped(scope, move || worker(driver, workload, lsn, index));
            if let Err(source) = spawned {
                driver.stop.store(true, Ordering::Relaxed);
                return Err(BenchError::Os {
                    what: format!("starting bench thread {index} of {threads}"),
                    source,
                });
            }
        }
        let outcome = control(&driver);
        driver.stop.store(true, Ordering::Relaxed);
        outcome
    });
    let failures = driver.failures.load(Ordering::Relaxed);
    let failure = driver
        .failure
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .take();
    match failure {
        Some(failure) => Err(failure.into_bench_error(row.to_string(), failures)),
        None => outcome,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_deltas_count_hits_as_fetches_minus_misses() {
        let before = PoolStats {
            fetches: 100,
            misses: 40,
            page_reads: 45,
            page_writes: 3,
            ..PoolStats::default()
        };
        let after = PoolStats {
            fetches: 1100,
            misses: 140,
            page_reads: 150,
            page_writes: 10,
            ..PoolStats::default()
        };
        let delta = StatsDelta::between(&before, &after);
        assert_eq!((delta.fetches, delta.misses, delta.hits), (1000, 100, 900));
        assert_eq!((delta.page_reads, delta.page_writes), (105, 7));
        assert_eq!(delta.hit_rate(), Some(0.9));
        assert_eq!(StatsDelta::default().hit_rate(), None);
    }

    #[test]
    fn a_page_with_the_wrong_body_fails_the_read_and_the_write() {
        use std::sync::Arc;
        use tarn_buffer::{NoLog, PoolConfig};
        use tarn_common::latch::LatchRegistry;
        use tarn_common::settings::{IoMethod, Settings};
        use tarn_io::{AlignedBuf, DataDir};

        let dir = tempfile::tempdir().unwrap();
        let settings = Settings {
            data_dir: dir.path().to_path_buf(),
            page_size_bytes: 4096,
            io_method: IoMethod::Buffered,
            ..Settings::default()
        };
        let datadir = DataDir::open(&settings, Some(4096), LatchRegistry::new(true)).unwrap();
        let file_id = FileId(3);
        load::ensure_loaded(
            &datadir,
            file_id,
            64,
            true,
            &crate::report::Output::new(true),
        )
        .unwrap();
        let file = datadir.file(file_id).unwrap();
        let mut buf = AlignedBuf::zeroed(4096);
        file.read_page(PageNo(5), &mut buf).unwrap();
        buf[CHECK_AT] ^= 1;
        file.write_page(PageNo(5), &mut buf).unwrap();

        let mut config = PoolConfig::from_settings(&settings);
        config.size_bytes = 32 * 4096;
        config.instances = 1;
        let pool = BufferPool::open(config, datadir, Arc::new(NoLog)).unwrap();
        let lsn = LsnCounter::default();
        read(&pool, PageId::new(file_id, PageNo(4))).unwrap();
        write(&pool, PageId::new(file_id, PageNo(4)), &lsn).unwrap();
        assert_eq!(lsn.next(), Lsn(2));
        let bad = PageId::new(file_id, PageNo(5));
        for outcome in [read(&pool, bad), write(&pool, bad, &lsn)] {
            match outcome {
                Err(Failure::WrongData(detail)) => {
                    assert!(detail.contains("body word 1"), "{detail}")
                }
                other => panic!("expected wrong data, got {other:?}"),
            }
        }
    }

    #[test]
    fn uniform_and_zipf_picks_stay_in_the_data_set() {
        let mut rng = Rng::new(7);
        let uniform = Workload {
            file_id: FileId(3),
            pages: 100,
            zipf: None,
            write_pct: 0,
        };
        let zipf = Workload {
            zipf: Some(Zipf::new(100, 0.99)),
            ..uniform.clone()
        };
        for _ in 0..10_000 {
            assert!(uniform.pick(&mut rng).page_no.0 < 100);
            let page = zipf.pick(&mut rng);
            assert!(page.page_no.0 < 100 && page.file_id == FileId(3));
        }
    }
}
