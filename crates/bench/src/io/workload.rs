//! Running one row: N threads of synchronous page I/O (`buffered`, `direct`), or one
//! thread keeping N requests in flight on the engine (`uring`).
//!
//! Both measure the same things the same way: each I/O's latency from just before the
//! request starts to the moment its completion is seen, the I/Os done, the wall time
//! from the start signal until every thread (or every request in flight) has
//! finished, and the process's CPU time over the same span. Every read must come back
//! as a valid page of the file; the first error stops the row, and the row fails.
//!
//! Patterns that write give each thread (or in-flight slot) its own interleaved share
//! of the pages (page mod N = its index), as page latches would in the engine: a read
//! and a write of one page at the same time can tear it (the write is several
//! file-system blocks), and the read would then rightly fail its checksum. Random
//! reads alone range over the whole file.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock, mpsc};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;

use tarn_common::rng::Rng;
use tarn_common::{Error, PageNo, Result as TarnResult};
use tarn_io::os::process_cpu_time;
use tarn_io::page::{self, PAGE_HEADER_BYTES, PageStatus};
use tarn_io::{AlignedBuf, IoBuf, IoEngine, IoOp, IoRequest, PageFile, PageType};

use super::{CACHE_DROP_INTERVAL, Pattern, READ_MIX_PCT, RowSpec};
use crate::{BenchError, Result};

/// Latencies above this are recorded as this (a minute: something is badly wrong).
const LATENCY_MAX_NS: u64 = 60_000_000_000;

/// Seed of the page choices; each thread or slot derives its own from it.
const WORKLOAD_SEED: u64 = 0x5eed_7a2b_10be_0c4d;

/// What one row measured.
pub struct Measurement {
    pub elapsed: Duration,
    /// Process CPU time (user + system, all threads) during the row.
    pub cpu: Duration,
    /// Reads done, each verified by the engine.
    pub reads: u64,
    pub writes: u64,
    /// Per-I/O latency in nanoseconds.
    pub latency_ns: Histogram<u64>,
}

impl Measurement {
    /// The two measurements as one: counts, times and latencies summed.
    pub fn merge(mut self, other: Measurement) -> Measurement {
        self.elapsed += other.elapsed;
        self.cpu += other.cpu;
        self.reads += other.reads;
        self.writes += other.writes;
        self.latency_ns
            .add(&other.latency_ns)
            .expect("histograms with the same bounds");
        self
    }
}

/// A latency histogram: 1 ns to a minute, two significant digits (1% resolution).
pub fn new_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, LATENCY_MAX_NS, 2).expect("valid histogram bounds")
}

fn record(histogram: &mut Histogram<u64>, latency: Duration) {
    let ns = u64::try_from(latency.as_nanos()).unwrap_or(u64::MAX);
    histogram.saturating_record(ns.max(1));
}

/// The pages one thread (or one in-flight slot) visits.
pub(super) struct PageCursor {
    pattern: Pattern,
    rng: Rng,
    pages: u64,
    slot: u64,
    slots: u64,
    region_start: u64,
    region_pages: u64,
    offset: u64,
}

impl PageCursor {
    /// The cursor of `slot` out of `slots`: for sequential reads, region `slot` of
    /// `slots` equal regions of the file; for random reads, any page; for patterns
    /// that write, a random page whose number mod `slots` is `slot`.
    pub(super) fn new(pattern: Pattern, pages: u64, slot: usize, slots: usize) -> PageCursor {
        assert!(
            slot < slots && pages >= slots as u64,
            "fewer pages than slots"
        );
        let region_pages = pages / slots as u64;
        PageCursor {
            pattern,
            rng: Rng::new(WORKLOAD_SEED ^ (slot as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15)),
            pages,
            slot: slot as u64,
            slots: slots as u64,
            region_start: slot as u64 * region_pages,
            region_pages,
            offset: 0,
        }
    }

    /// A random page of this slot's interleaved share.
    fn own_random_page(&mut self) -> u64 {
        self.rng.below(self.region_pages) * self.slots + self.slot
    }

    pub(super) fn next(&mut self) -> (IoOp, PageNo) {
        let (op, page) = match self.pattern {
            Pattern::SeqRead => {
                let page = self.region_start + self.offset;
                self.offset = (self.offset + 1) % self.region_pages;
                (IoOp::Read, page)
            }
            Pattern::RandRead => (IoOp::Read, self.rng.below(self.pages)),
            Pattern::RandWrite => (IoOp::Write, self.own_random_page()),
            Pattern::RandRw => {
                let op = if self.rng.percent(READ_MIX_PCT) {
                    IoOp::Read
                } else {
                    IoOp::Write
                };
                (op, self.own_random_page())
            }
        };
        (op, PageNo(page as u32))
    }
}

/// Gives a page about to be written content of its own: the write counter after the
/// header. (The buffer already holds a typed page; the engine seals it.)
fn stamp(buf: &mut [u8], counter: u64) {
    buf[PAGE_HEADER_BYTES..PAGE_HEADER_BYTES + 8].copy_from_slice(&counter.to_le_bytes());
}

/// A read must return a valid page; an all-zero page means the file was not loaded.
fn check_read(status: PageStatus, file: &PageFile, page_no: PageNo) -> TarnResult<()> {
    match status {
        PageStatus::Valid => Ok(()),
        PageStatus::Unwritten => Err(Error::PageNeverWritten {
            file: file.path().to_path_buf(),
            page_id: file.page_id(page_no),
        }),
    }
}

/// Counts of one thread, or of the whole row.
struct Tally {
    reads: u64,
    writes: u64,
    latency_ns: Histogram<u64>,
    errors: u64,
    first_error: Option<Error>,
}

impl Tally {
    fn new() -> Tally {
        Tally {
            reads: 0,
            writes: 0,
            latency_ns: new_histogram(),
            errors: 0,
            first_error: None,
        }
    }

    fn count(&mut self, op: IoOp, latency: Duration, outcome: TarnResult<()>) -> bool {
        record(&mut self.latency_ns, latency);
        match op {
            IoOp::Read => self.reads += 1,
            IoOp::Write => self.writes += 1,
        }
        match outcome {
            Ok(()) => true,
            Err(error) => {
                self.errors += 1;
                self.first_error.get_or_insert(error);
                false
            }
        }
    }

    fn merge(&mut self, other: Tally) {
        self.reads += other.reads;
        self.writes += other.writes;
        self.latency_ns
            .add(&other.latency_ns)
            .expect("histograms with the same bounds");
        self.errors += other.errors;
        if self.first_error.is_none() {
            self.first_error = other.first_error;
        }
    }

    fn into_measurement(
        self,
        spec: &RowSpec,
        elapsed: Duration,
        cpu: Duration,
    ) -> Result<Measurement> {
        if let Some(first) = self.first_error {
            return Err(BenchError::Row {
                row: spec.label(),
                errors: self.errors,
                first,
            });
        }
        Ok(Measurement {
            elapsed,
            cpu,
            reads: self.reads,
            writes: self.writes,
            latency_ns: self.latency_ns,
        })
    }
}

/// `spec.depth` threads, each doing synchronous `read_page` / `write_page` calls.
pub(super) fn run_threads(
    file: &Arc<PageFile>,
    spec: &RowSpec,
    pages: u64,
    duration: Duration,
) -> Result<Measurement> {
    let depth = spec.depth as usize;
    let stop = AtomicBool::new(false);
    // Workers wait on the gate's read side while the main thread holds the write side.
    let gate = RwLock::new(());
    std::thread::scope(|scope| {
        let closed = gate.write().expect("gate lock");
        let mut handles = Vec::with_capacity(depth);
        for index in 0..depth {
            let cursor = PageCursor::new(spec.pattern, pages, index, depth);
            let (file, gate, stop) = (file.as_ref(), &gate, &stop);
            let spawned = std::thread::Builder::new()
                .name(format!("bench-io-{index}"))
                .spawn_scoped(scope, move || sync_worker(file, cursor, gate, stop));
            match spawned {
                Ok(handle) => handles.push(handle),
                Err(source) => {
                    stop.store(true, Ordering::Release);
                    drop(closed);
                    return Err(BenchError::Os {
                        what: format!("starting bench thread {index} of {depth}"),
                        source,
                    });
                }
            }
        }
        let cpu_before = process_cpu_time();
        let started = Instant::now();
        drop(closed);
        while started.elapsed() < duration && !stop.load(Ordering::Acquire) {
            let left = duration.saturating_sub(started.elapsed());
            std::thread::sleep(left.min(Duration::from_millis(10)));
        }
        stop.store(true, Ordering::Release);
        let mut total = Tally::new();
        for handle in handles {
            total.merge(handle.join().expect("bench thread panicked"));
        }
        let elapsed = started.elapsed();
        let cpu = process_cpu_time().saturating_sub(cpu_before);
        total.into_measurement(spec, elapsed, cpu)
    })
}

fn sync_worker(
    file: &PageFile,
    mut cursor: PageCursor,
    gate: &RwLock<()>,
    stop: &AtomicBool,
) -> Tally {
    let mut buf = AlignedBuf::zeroed(file.page_size_bytes());
    page::init(&mut buf, file.page_id(PageNo(0)), PageType::RAW);
    let mut tally = Tally::new();
    drop(gate.read().expect("gate lock"));
    while !stop.load(Ordering::Relaxed) {
        let (op, page_no) = cursor.next();
        let (latency, outcome) = match op {
            IoOp::Read => {
                let started = Instant::now();
                let result = file.read_page(page_no, &mut buf);
                let latency = started.elapsed();
                (
                    latency,
                    result.and_then(|status| check_read(status, file, page_no)),
                )
            }
            IoOp::Write => {
                stamp(&mut buf, tally.writes);
                let started = Instant::now();
                let result = file.write_page(page_no, &mut buf);
                (started.elapsed(), result)
            }
        };
        if !tally.count(op, latency, outcome) {
            stop.store(true, Ordering::Release);
            break;
        }
    }
    tally
}

/// One thread keeping `spec.depth` requests in flight on its own [`tarn_io::IoQueue`]
/// (a private ring it submits to and reaps itself, as fio's io_uring engine does), with
/// `buffers` (at least twice `spec.depth`, so a slot is refilled before the page it
/// just read is verified; ideally fixed io_uring buffers) as page buffers.
/// The buffers are back in `buffers` when this returns.
pub(super) fn run_uring(
    engine: &Arc<IoEngine>,
    file: &Arc<PageFile>,
    buffers: &mut Vec<IoBuf>,
    spec: &RowSpec,
    pages: u64,
    duration: Duration,
) -> Result<Measurement> {
    let depth = spec.depth as usize;
    assert!(
        buffers.len() >= 2 * depth,
        "fewer buffers than twice the queue depth"
    );
    for buf in buffers.iter_mut() {
        // Writes need a typed page to seal; reads overwrite it.
        page::init(buf.as_mut_slice(), file.page_id(PageNo(0)), PageType::RAW);
    }
    // Sequential reads are one stream with `depth` reads in flight (as fio's
    // `--rw=read --iodepth=N`): every slot takes the next page of one cursor. Other
    // patterns give each slot its own cursor (its own share of pages for writes).
    let streams = if spec.pattern == Pattern::SeqRead {
        1
    } else {
        depth
    };
    let mut cursors: Vec<PageCursor> = (0..streams)
        .map(|slot| PageCursor::new(spec.pattern, pages, slot, streams))
        .collect();
    let mut started_at = vec![Instant::now(); depth];
    let mut writes_issued = 0u64;
    let mut request = |slot: usize, mut buf: IoBuf| {
        let (op, page_no) = cursors[slot % streams].next();
        if op == IoOp::Write {
            stamp(buf.as_mut_slice(), writes_issued);
            writes_issued += 1;
            IoRequest::write(file.clone(), page_no, buf, slot as u64)
        } else {
            IoRequest::read(file.clone(), page_no, buf, slot as u64)
        }
    };

    let mut queue = engine.queue(spec.depth)?;
    let mut tally = Tally::new();
    let cpu_before = process_cpu_time();
    let started = Instant::now();
    let deadline = started + duration;
    let first: Vec<IoRequest> = (0..depth)
        .map(|slot| request(slot, buffers.pop().expect("checked above")))
        .collect();
    let now = Instant::now();
    started_at.iter_mut().for_each(|t| *t = now);
    queue.submit(first)?;
    let mut in_flight = depth;
    let mut stopping = false;
    let mut reaped = Vec::with_capacity(depth);
    let mut latencies: Vec<Duration> = Vec::with_capacity(depth);
    while in_flight > 0 {
        queue.reap(1, &mut reaped)?;
        let now = Instant::now();
        stopping |= now >= deadline;
        // Refill every slot that completed first, from spare buffers, then verify: the
        // device gets its next requests without waiting for any checksum (and a whole
        // batch submitted in one call would reach the device as one plugged batch and
        // drain together, so each refill is its own submission, as in fio).
        latencies.clear();
        latencies.extend(reaped.iter().map(|c| now - started_at[c.tag() as usize]));
        let refill = !stopping;
        if refill {
            for completed in &reaped {
                let slot = completed.tag() as usize;
                let replacement = request(slot, buffers.pop().expect("twice the depth in buffers"));
                started_at[slot] = Instant::now();
                queue.submit(vec![replacement])?;
            }
        } else {
            in_flight -= reaped.len();
        }
        for (completed, &latency) in reaped.drain(..).zip(&latencies) {
            let done = completed.verify();
            let op = done.request.op;
            let outcome = done.result.and_then(|status| match op {
                IoOp::Read => check_read(status, file, done.request.page_no),
                IoOp::Write => Ok(()),
            });
            stopping |= !tally.count(op, latency, outcome);
            buffers.push(done.request.buf);
        }
    }
    let elapsed = started.elapsed();
    let cpu = process_cpu_time().saturating_sub(cpu_before);
    tally.into_measurement(spec, elapsed, cpu)
}

/// Runs `body` with `file` kept cold: its OS page cache is dropped before and every
/// [`CACHE_DROP_INTERVAL`] during `body`, by a helper thread. With `None`, just runs
/// `body`.
pub(super) fn with_cold_cache<R>(file: Option<&PageFile>, body: impl FnOnce() -> R) -> Result<R> {
    let Some(file) = file else {
        return Ok(body());
    };
    file.drop_os_cache()?;
    let (stop, stopped) = mpsc::channel::<()>();
    std::thread::scope(|scope| {
        let dropper = std::thread::Builder::new()
            .name("bench-io-cold".into())
            .spawn_scoped(scope, move || -> TarnResult<u64> {
                let mut drops = 0;
                while let Err(mpsc::RecvTimeoutError::Timeout) =
                    stopped.recv_timeout(CACHE_DROP_INTERVAL)
                {
                    file.drop_os_cache()?;
                    drops += 1;
                }
                Ok(drops)
            })
            .map_err(|source| BenchError::Os {
                what: "starting the cache-dropping thread".into(),
                source,
            })?;
        let result = body();
        drop(stop);
        let drops = dropper.join().expect("cache-dropping thread panicked")?;
        tracing::debug!(drops, "page cache dropped during the row");
        Ok(result)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequential_cursors_read_their_own_region_in_order_and_wrap() {
        let mut cursor = PageCursor::new(Pattern::SeqRead, 100, 2, 4);
        let visited: Vec<u32> = (0..30).map(|_| cursor.next().1.0).collect();
        let expected: Vec<u32> = (50..75).chain(50..55).collect();
        assert_eq!(visited, expected);
    }

    #[test]
    fn random_cursors_stay_in_the_file_and_mix_reads_and_writes_70_30() {
        let mut cursor = PageCursor::new(Pattern::RandRw, 1000, 0, 1);
        let mut reads = 0;
        let mut seen = std::collections::HashSet::new();
        for _ in 0..10_000 {
            let (op, page) = cursor.next();
            assert!(page.0 < 1000);
            seen.insert(page.0);
            reads += u32::from(op == IoOp::Read);
        }
        assert!((6500..7500).contains(&reads), "{reads} reads of 10000");
        assert!(seen.len() > 900, "{} distinct pages", seen.len());
        let mut writes = PageCursor::new(Pattern::RandWrite, 100, 3, 8);
        for _ in 0..1000 {
            let (op, page) = writes.next();
            assert_eq!(op, IoOp::Write);
            assert!(page.0 < 96 && page.0 % 8 == 3, "page {}", page.0);
        }
    }
}
