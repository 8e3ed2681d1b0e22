//! `tarn bench bufferpool`: the S4 experiment, latch waits by buffer-pool instance count.
//!
//! S4 split MySQL's buffer pool into n instances and measured the time spent waiting
//! for each latch: 8.5x to 13x less at 16 instances than at 1, and more again at 32.
//! This bench runs the same sweep on Tarn's pool:
//!
//! | axis          | full                    | `--quick`  |
//! |---------------|-------------------------|------------|
//! | data set      | `larger`, `fits`        | both       |
//! | distribution  | `uniform`, `zipf`       | `zipf`     |
//! | instances     | 1, 4, 8, 16, 32, 64     | 1, 8, 64   |
//! | threads       | 1, 4, 16, 64, 256       | 8, 64      |
//!
//! `larger` is about ten times the pool (S4's pool was 10% of the data), so misses are
//! cold device reads; `fits` is half the pool, preloaded, so that latch contention is
//! all that is left. Each cell reports throughput, hit rate, page reads per second and
//! the latch wait time per latch class; the S4 table shows wait per class by instance
//! count at one thread count (the largest, or `--s4-threads`).
//!
//! # How a cell runs
//! 1. A **fresh** data directory handle (its own I/O engine and latch registry) and a
//!    **fresh** [`BufferPool`] are opened: every cell starts cold. The data file is read
//!    on the engine's `io_method` (`auto` = io_uring on `O_DIRECT` where the kernel
//!    allows it), so a miss is a device read, never the OS page cache.
//! 2. `fits` cells preload their data set (prefetch plus a verified read of each page).
//! 3. The workers start (module `driver`) and warm the pool until it is full (94% of its
//!    frames resident, the flusher keeps about 5% free), for at least the minimum and
//!    at most the maximum warm-up time. `fits` cells also run past
//!    `buffer_pool_old_blocks_time` (+0.3 s): every preloaded page is promoted out of
//!    the LRU's old sublist at once then, a burst no steady state has.
//! 4. The latch registry is reset and the pool counters read; after `--seconds` they
//!    are read again. Everything reported is the difference.
//! 5. Dirty pages are flushed and the pool and engine are dropped.
//!
//! # Baselines ("the technique switched off", in the same run)
//! - **Latch accounting**: one cell (`fits`, `zipf`, 8 instances, 16 threads) with the
//!   registry enabled and disabled, alternating in rounds whose order flips each round
//!   (on/off, off/on, ...) so that drift cancels; the overhead is computed from the
//!   summed operations of each mode ([`AbComparison`]).
//! - **Optimistic reads**: the same cell read-only on two preloaded pools, one with
//!   `optimistic_reads` on and one off (shared page latches), alternating the same way.
//! - **One instance** is the baseline of the instance sweep.
//!
//! Latch accounting is always on for the matrix (whatever `latch_accounting` says):
//! the latch waits are what this bench measures.
//!
//! # Reading the numbers
//! - Latch wait is summed over threads, so with 256 threads it can be far above the
//!   wall time. `buffer.io_wait` is time spent waiting for another thread's read of the
//!   same page: the device, not a latch holder; the S4 tables also give the total
//!   without it.
//! - On this kind of 2-CPU machine a hot (`fits`) cell with two or more threads can run
//!   at one of two speeds for a whole window (about 8 or 19 million ops/s, CPU per op
//!   0.25 or 0.10 us). A round of a baseline that switches speed skews the summed
//!   figure, so the baselines also report the per-round median and range.

mod driver;

use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};

use tarn_buffer::{BufferPool, NoLog, PoolConfig};
use tarn_common::latch::LatchSnapshot;
use tarn_common::limits::{
    BENCH_THREADS_MAX, BUFFER_POOL_INSTANCES_MAX, BUFFER_POOL_INSTANCES_MIN, PAGE_SIZES_BYTES,
};
use tarn_common::rng::Zipf;
use tarn_common::settings::{IoMethod, Settings, buffer_pool_frames_per_instance};
use tarn_common::{FileId, PageId, PageNo};

use crate::io::open_data_dir;
use crate::load;
use crate::report::{
    BenchDocument, Output, Table, format_count, format_number, format_ratio, ratio,
};
use crate::workdir::WorkDir;
use crate::{BenchError, Result};

use driver::{Failure, LsnCounter, Window, Workload};

/// The bench's data file (other benches use files 1 and 2 of their directories).
pub const DATA_FILE_ID: FileId = FileId(3);

pub const POOL_SIZE_DEFAULT_BYTES: u64 = 64 << 20;
pub const POOL_SIZE_QUICK_BYTES: u64 = 32 << 20;
/// `larger` holds this many times the pool's frames.
pub const LARGER_FACTOR: u64 = 10;
/// `fits` holds the pool's frames divided by this.
pub const FITS_DIVISOR: u64 = 2;
pub const SECONDS_PER_CELL_DEFAULT: f64 = 2.0;
pub const SECONDS_PER_CELL_QUICK: f64 = 1.0;
pub const WRITE_PCT_DEFAULT: u32 = 10;
pub const ZIPF_THETA: f64 = 0.99;
pub const THREADS_DEFAULT: [u32; 5] = [1, 4, 16, 64, 256];
pub const THREADS_QUICK: [u32; 2] = [8, 64];
pub const INSTANCES_DEFAULT: [u32; 6] = [1, 4, 8, 16, 32, 64];
pub const INSTANCES_QUICK: [u32; 3] = [1, 8, 64];
/// A pool is "full" when this share of its frames holds pages (the background flusher
/// keeps `buffer_pool_free_target_pct`, 5% by default, free).
pub const FULL_RESIDENT_PCT: u64 = 94;
/// Pages prefetched at once while preloading a `fits` data set.
const PRELOAD_BATCH: usize = 64;

/// The baseline cell: data set, distribution, instances and threads.
pub const BASELINE_INSTANCES: u32 = 8;
pub const BASELINE_THREADS: u32 = 16;
/// Pause after each switch of a baseline's mode before the next window.
const BASELINE_SETTLE: Duration = Duration::from_millis(30);
/// Preloaded pages are all promoted out of the LRU's old sublist at once, one
/// `buffer_pool_old_blocks_time` after the preload; measuring starts this long after
/// that (the old-blocks time counted up to [`PROMOTION_WAIT_MAX`]).
const PROMOTION_MARGIN: Duration = Duration::from_millis(300);
const PROMOTION_WAIT_MAX: Duration = Duration::from_secs(3);

/// The classes the buffer pool and I/O layer register, in the order tables list them.
pub const LATCH_CLASSES: [&str; 7] = [
    "buffer.page_table",
    "buffer.lru",
    "buffer.flush_list",
    "buffer.page",
    "buffer.page_optimistic",
    "buffer.io_wait",
    "io.file_grow",
];

pub const COLD_NOTE: &str = "cold: fresh buffer pool (and I/O engine) per cell, data read with \
     O_DIRECT, so every miss is a device read";

/// A data set: pages `0..n` of the bench file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Dataset {
    /// About ten times the pool: misses read the device.
    Larger,
    /// Half the pool, preloaded: every access hits.
    Fits,
}

impl Dataset {
    pub const ALL: [Dataset; 2] = [Dataset::Larger, Dataset::Fits];

    pub fn name(self) -> &'static str {
        match self {
            Dataset::Larger => "larger",
            Dataset::Fits => "fits",
        }
    }

    pub fn parse(text: &str) -> Option<Dataset> {
        Dataset::ALL
            .into_iter()
            .find(|d| d.name().eq_ignore_ascii_case(text.trim()))
    }

    /// Pages of this data set for a pool of `pool_frames` frames.
    pub fn pages(self, pool_frames: u64) -> u64 {
        match self {
            Dataset::Larger => pool_frames * LARGER_FACTOR,
            Dataset::Fits => pool_frames / FITS_DIVISOR,
        }
    }
}

/// How pages are picked.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Distribution {
    Uniform,
    /// Zipfian with theta 0.99, scrambled over the data set.
    Zipf,
}

impl Distribution {
    pub const ALL: [Distribution; 2] = [Distribution::Uniform, Distribution::Zipf];

    pub fn name(self) -> &'static str {
        match self {
            Distribution::Uniform => "uniform",
            Distribution::Zipf => "zipf",
        }
    }

    pub fn parse(text: &str) -> Option<Distribution> {
        Distribution::ALL
            .into_iter()
            .find(|d| d.name().eq_ignore_ascii_case(text.trim()))
    }
}

/// One cell of the matrix.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CellSpec {
    pub dataset: Dataset,
    pub distribution: Distribution,
    pub instances: u32,
    pub threads: u32,
}

impl CellSpec {
    pub fn label(&self) -> String {
        format!(
            "{} {} {} inst {} thr",
            self.dataset.name(),
            self.distribution.name(),
            self.instances,
            self.threads
        )
    }
}

/// What `tarn bench bufferpool` was asked to do.
#[derive(Clone, Debug)]
pub struct BufferPoolBenchOptions {
    /// Engine settings (from `--set`): `io_method`, the LRU and flusher settings.
    pub settings: Settings,
    pub quick: bool,
    pub data_dir: Option<PathBuf>,
    pub seconds_per_cell: f64,
    pub pool_size_bytes: u64,
    pub page_size_bytes: u32,
    pub write_pct: u32,
    pub threads: Vec<u32>,
    pub instances: Vec<u32>,
    pub distributions: Vec<Distribution>,
    pub datasets: Vec<Dataset>,
    /// Thread count of the S4 tables; the largest measured when `None`.
    pub s4_threads: Option<u32>,
    /// Warm-up of each cell: at least `warm_min`, at most `warm_max` seconds.
    pub warm_min_seconds: f64,
    pub warm_max_seconds: f64,
    /// Rounds of the two baselines, each one window per mode.
    pub baseline_rounds: u32,
    pub baseline_round_seconds: f64,
}

impl BufferPoolBenchOptions {
    /// The defaults for a full or a quick run.
    pub fn new(settings: Settings, quick: bool) -> BufferPoolBenchOptions {
        BufferPoolBenchOptions {
            page_size_bytes: settings.page_size_bytes,
            settings,
            quick,
            data_dir: None,
            seconds_per_cell: if quick {
                SECONDS_PER_CELL_QUICK
            } else {
                SECONDS_PER_CELL_DEFAULT
            },
            pool_size_bytes: if quick {
                POOL_SIZE_QUICK_BYTES
            } else {
                POOL_SIZE_DEFAULT_BYTES
            },
            write_pct: WRITE_PCT_DEFAULT,
            threads: if quick {
                THREADS_QUICK.to_vec()
            } else {
                THREADS_DEFAULT.to_vec()
            },
            instances: if quick {
                INSTANCES_QUICK.to_vec()
            } else {
                INSTANCES_DEFAULT.to_vec()
            },
            distributions: if quick {
                vec![Distribution::Zipf]
            } else {
                Distribution::ALL.to_vec()
            },
            datasets: Dataset::ALL.to_vec(),
            s4_threads: None,
            warm_min_seconds: if quick { 0.3 } else { 0.5 },
            warm_max_seconds: if quick { 1.5 } else { 4.0 },
            baseline_rounds: if quick { 6 } else { 10 },
            baseline_round_seconds: if quick { 0.5 } else { 1.0 },
        }
    }

    /// Frames of the whole pool (instances only round this down by a few frames).
    pub fn pool_frames(&self) -> u64 {
        self.pool_size_bytes / u64::from(self.page_size_bytes)
    }

    /// The thread count of the S4 tables.
    pub fn s4_threads(&self) -> u32 {
        self.s4_threads
            .unwrap_or_else(|| self.threads.iter().copied().max().unwrap_or(1))
    }
}

/// The cells to measure, in the order they run.
pub fn plan(options: &BufferPoolBenchOptions) -> Result<Vec<CellSpec>> {
    let bad = |message: String| Err(BenchError::Options(message));
    if !(options.seconds_per_cell > 0.0 && options.seconds_per_cell <= 3600.0) {
        return bad(format!(
            "--seconds must be more than 0 and at most 3600, not {}",
            options.seconds_per_cell
        ));
    }
    if !(options.warm_min_seconds >= 0.0 && options.warm_max_seconds >= options.warm_min_seconds) {
        return bad("the warm-up times must satisfy 0 <= min <= max".into());
    }
    if options.write_pct > 100 {
        return bad(format!(
            "--write-pct must be from 0 to 100, not {}",
            options.write_pct
        ));
    }
    if !PAGE_SIZES_BYTES.contains(&options.page_size_bytes) {
        return bad(format!(
            "--page-size must be one of 4K, 8K, 16K, 32K or 64K, not {}",
            options.page_size_bytes
        ));
    }
    if options.threads.is_empty()
        || options.instances.is_empty()
        || options.distributions.is_empty()
        || options.datasets.is_empty()
    {
        return bad(
            "--threads, --instances, --distributions and --datasets select no cells".into(),
        );
    }
    for &threads in &options.threads {
        if threads == 0 || threads as usize > BENCH_THREADS_MAX {
            return bad(format!(
                "--threads {threads}: must be from 1 to {BENCH_THREADS_MAX}"
            ));
        }
    }
    let mut instance_counts = options.instances.clone();
    instance_counts.push(BASELINE_INSTANCES);
    for &instances in &instance_counts {
        if !(BUFFER_POOL_INSTANCES_MIN..=BUFFER_POOL_INSTANCES_MAX).contains(&instances) {
            return bad(format!(
                "--instances {instances}: must be from {BUFFER_POOL_INSTANCES_MIN} to \
                 {BUFFER_POOL_INSTANCES_MAX}"
            ));
        }
        buffer_pool_frames_per_instance(
            options.pool_size_bytes,
            options.page_size_bytes,
            instances,
        )?;
    }
    let larger_pages = Dataset::Larger.pages(options.pool_frames());
    if larger_pages > u64::from(u32::MAX) {
        return bad("--pool-size is too large for one data file of 10x its size".into());
    }
    if let Some(s4) = options.s4_threads
        && !options.threads.contains(&s4)
    {
        return bad(format!(
            "--s4-threads {s4} is not among the measured --threads"
        ));
    }
    let mut datasets = options.datasets.clone();
    let mut distributions = options.distributions.clone();
    let mut threads = options.threads.clone();
    let mut instances = options.instances.clone();
    for list in [&mut threads, &mut instances] {
        list.sort_unstable();
        list.dedup();
    }
    datasets.sort_unstable();
    datasets.dedup();
    distributions.sort_unstable();
    distributions.dedup();
    let mut cells = Vec::new();
    for &dataset in &datasets {
        for &distribution in &distributions {
            for &threads in &threads {
                for &instances in &instances {
                    cells.push(CellSpec {
                        dataset,
                        distribution,
                        instances,
                        threads,
                    });
                }
            }
        }
    }
    Ok(cells)
}

/// One latch class's counters in a row.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LatchClassRow {
    pub class: String,
    pub acquisitions: u64,
    pub contended: u64,
    pub wait_ns: u64,
}

/// Per-class rows in [`LATCH_CLASSES`] order (every listed class, zero if absent),
/// then any other class by name.
pub fn latch_classes(snapshot: &[LatchSnapshot]) -> Vec<LatchClassRow> {
    let mut rows: Vec<LatchClassRow> = LATCH_CLASSES
        .iter()
        .map(|class| LatchClassRow {
            class: (*class).to_string(),
            acquisitions: 0,
            contended: 0,
            wait_ns: 0,
        })
        .collect();
    let mut others: Vec<LatchClassRow> = Vec::new();
    for entry in snapshot {
        let row = match rows.iter_mut().find(|r| r.class == entry.class) {
            Some(row) => row,
            None => match others.iter_mut().position(|r| r.class == entry.class) {
                Some(index) => &mut others[index],
                None => {
                    others.push(LatchClassRow {
                        class: entry.class.to_string(),
                        acquisitions: 0,
                        contended: 0,
                        wait_ns: 0,
                    });
                    others.last_mut().expect("just pushed")
                }
            },
        };
        row.acquisitions += entry.acquisitions;
        row.contended += entry.contended;
        row.wait_ns += entry.wait_ns;
    }
    others.sort_by(|a, b| a.class.cmp(&b.class));
    rows.extend(others);
    rows
}

/// One measured cell, as printed and as it appears in the JSON `rows` array.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BufferPoolRow {
    pub dataset: &'static str,
    pub distribution: &'static str,
    pub instances: u32,
    pub threads: u32,
    pub seconds: f64,
    pub warm_seconds: f64,
    /// Share of the pool's frames holding pages when measurement began.
    pub resident_pct: f64,
    /// False if the warm-up ended at its time limit before the pool was full (or, for
    /// `fits`, before the data set was resident).
    pub warm_reached: bool,
    pub ops: u64,
    pub writes: u64,
    pub ops_per_s: f64,
    pub cpu_us_per_op: f64,
    /// hits / fetches over the window (`null` with no fetches).
    pub hit_rate: Option<f64>,
    pub fetches: u64,
    pub misses: u64,
    pub page_reads_per_s: f64,
    pub page_writes_per_s: f64,
    pub evictions: u64,
    pub optimistic_retries: u64,
    /// Total wait over every latch class, nanoseconds summed over threads.
    pub latch_wait_ns: u64,
    pub latch_contended: u64,
    pub latch_acquisitions: u64,
    pub latches: Vec<LatchClassRow>,
}

impl BufferPoolRow {
    fn new(cell: &CellSpec, warm: &driver::Warm, window: &Window) -> BufferPoolRow {
        let seconds = window.elapsed.as_secs_f64();
        let per_s = |count: u64| {
            if seconds > 0.0 {
                count as f64 / seconds
            } else {
                0.0
            }
        };
        let latches = latch_classes(&window.latches);
        BufferPoolRow {
            dataset: cell.dataset.name(),
            distribution: cell.distribution.name(),
            instances: cell.instances,
            threads: cell.threads,
            seconds,
            warm_seconds: warm.elapsed.as_secs_f64(),
            resident_pct: if warm.frames > 0 {
                warm.resident as f64 * 100.0 / warm.frames as f64
            } else {
                0.0
            },
            warm_reached: warm.reached,
            ops: window.ops,
            writes: window.writes,
            ops_per_s: window.ops_per_s(),
            cpu_us_per_op: if window.ops > 0 {
                window.cpu.as_secs_f64() * 1e6 / window.ops as f64
            } else {
                0.0
            },
            hit_rate: window.stats.hit_rate(),
            fetches: window.stats.fetches,
            misses: window.stats.misses,
            page_reads_per_s: per_s(window.stats.page_reads),
            page_writes_per_s: per_s(window.stats.page_writes),
            evictions: window.stats.evictions,
            optimistic_retries: window.stats.optimistic_retries,
            latch_wait_ns: latches.iter().map(|l| l.wait_ns).sum(),
            latch_contended: latches.iter().map(|l| l.contended).sum(),
            latch_acquisitions: latches.iter().map(|l| l.acquisitions).sum(),
            latches,
        }
    }

    fn hottest(&self) -> Option<&LatchClassRow> {
        self.latches
            .iter()
            .filter(|l| l.wait_ns > 0)
            .max_by_key(|l| l.wait_ns)
    }
}

/// Operations, wall time and process CPU time of one window of an A/B comparison.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Sample {
    pub ops: u64,
    pub seconds: f64,
    pub cpu_seconds: f64,
}

impl Sample {
    /// Operations per wall-clock second.
    pub fn rate(&self) -> Option<f64> {
        (self.seconds > 0.0).then(|| self.ops as f64 / self.seconds)
    }

    /// Operations per second of this process's CPU time: unlike [`Sample::rate`], it
    /// hardly moves when other work on the machine takes CPUs away from the bench.
    pub fn cpu_rate(&self) -> Option<f64> {
        (self.cpu_seconds > 0.0).then(|| self.ops as f64 / self.cpu_seconds)
    }

    fn plus(self, other: Sample) -> Sample {
        Sample {
            ops: self.ops + other.ops,
            seconds: self.seconds + other.seconds,
            cpu_seconds: self.cpu_seconds + other.cpu_seconds,
        }
    }
}

/// One round of an A/B comparison: one window in each mode.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct AbRound {
    pub a: Sample,
    pub b: Sample,
    /// True if B ran first in this round.
    pub b_first: bool,
}

/// Two modes measured in alternating rounds. Rates come from the operations and
/// seconds summed over all rounds of a mode, so that a slow round weighs what it
/// measured; the per-round ratios show the spread. The same from CPU time is a check
/// that survives other load on the machine.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AbComparison {
    pub a_ops_per_s: f64,
    pub b_ops_per_s: f64,
    /// a rate / b rate from the sums.
    pub ratio: f64,
    /// a rate / b rate of each round.
    pub round_ratios: Vec<f64>,
    /// Operations per CPU-second of each mode, and their ratio, from the sums.
    pub a_ops_per_cpu_s: Option<f64>,
    pub b_ops_per_cpu_s: Option<f64>,
    pub cpu_ratio: Option<f64>,
}

impl AbComparison {
    pub fn from_rounds(rounds: &[AbRound]) -> Option<AbComparison> {
        let sum = |pick: fn(&AbRound) -> Sample| {
            rounds
                .iter()
                .map(pick)
                .fold(Sample::default(), Sample::plus)
        };
        let (a, b) = (sum(|r| r.a), sum(|r| r.b));
        let (a_rate, b_rate) = (a.rate()?, b.rate()?);
        let ratio = ratio(Some(a_rate), Some(b_rate))?;
        Some(AbComparison {
            a_ops_per_s: a_rate,
            b_ops_per_s: b_rate,
            ratio,
            round_ratios: rounds
                .iter()
                .filter_map(|r| ratio_of(r.a.rate(), r.b.rate()))
                .collect(),
            a_ops_per_cpu_s: a.cpu_rate(),
            b_ops_per_cpu_s: b.cpu_rate(),
            cpu_ratio: ratio_of(a.cpu_rate(), b.cpu_rate()),
        })
    }

    /// `(b - a) / b * 100`: what mode A costs relative to mode B, in percent.
    pub fn a_cost_pct(&self) -> f64 {
        cost_pct(self.ratio)
    }

    /// The same from operations per CPU-second.
    pub fn a_cpu_cost_pct(&self) -> Option<f64> {
        self.cpu_ratio.map(cost_pct)
    }

    /// The per-round costs, in percent.
    pub fn round_costs_pct(&self) -> Vec<f64> {
        self.round_ratios.iter().map(|&r| cost_pct(r)).collect()
    }
}

fn ratio_of(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    ratio(a, b)
}

/// `(b - a) / b * 100` for `a / b = ratio`.
fn cost_pct(ratio: f64) -> f64 {
    (1.0 - ratio) * 100.0
}

/// Whether round `round` runs mode B first: the order flips every round (AB, BA, AB,
/// ...) so that a linear drift in the machine's speed cancels over each pair.
pub fn b_first(round: u32) -> bool {
    round % 2 == 1
}

fn median(values: &[f64]) -> Option<f64> {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(sorted[n / 2]),
        _ => Some((sorted[n / 2 - 1] + sorted[n / 2]) / 2.0),
    }
}

fn min_max(values: &[f64]) -> (Option<f64>, Option<f64>) {
    let min = values.iter().copied().reduce(f64::min);
    let max = values.iter().copied().reduce(f64::max);
    (min, max)
}

/// A map from instance count to a number, serialized as a JSON object whose keys are
/// the counts in increasing order: `{"1": ..., "4": ..., "16": ...}`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ByInstances(pub Vec<(u32, u64)>);

impl ByInstances {
    pub fn get(&self, instances: u32) -> Option<u64> {
        self.0
            .iter()
            .find(|(n, _)| *n == instances)
            .map(|(_, v)| *v)
    }
}

impl Serialize for ByInstances {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (instances, value) in &self.0 {
            map.serialize_entry(&instances.to_string(), value)?;
        }
        map.end()
    }
}

/// The S4 table of one data set and distribution at one thread count: latch wait per
/// class (rows) by instance count (columns).
#[derive(Clone, Debug, PartialEq)]
pub struct S4Table {
    pub dataset: &'static str,
    pub distribution: &'static str,
    pub threads: u32,
    pub instances: Vec<u32>,
    /// (class, wait ns per instance count) in [`LATCH_CLASSES`] order.
    pub classes: Vec<(String, Vec<u64>)>,
    pub total_wait_ns: Vec<u64>,
    /// The total without [`IO_WAIT_CLASS`].
    pub latch_only_wait_ns: Vec<u64>,
    pub contended: Vec<u64>,
    pub ops_per_s: Vec<f64>,
}

impl S4Table {
    /// The table for `dataset`, `distribution` and `threads` from the measured rows,
    /// or `None` if no row matches.
    pub fn build(
        rows: &[BufferPoolRow],
        dataset: Dataset,
        distribution: Distribution,
        threads: u32,
    ) -> Option<S4Table> {
        let mut selected: Vec<&BufferPoolRow> = rows
            .iter()
            .filter(|r| {
                r.dataset == dataset.name()
                    && r.distribution == distribution.name()
                    && r.threads == threads
            })
            .collect();
        if selected.is_empty() {
            return None;
        }
        selected.sort_by_key(|r| r.instances);
        selected.dedup_by_key(|r| r.instances);
        let mut classes: Vec<(String, Vec<u64>)> = Vec::new();
        for (column, row) in selected.iter().enumerate() {
            for latch in &row.latches {
                let index = match classes.iter().position(|(c, _)| *c == latch.class) {
                    Some(index) => index,
                    None => {
                        classes.push((latch.class.clone(), vec![0; selected.len()]));
                        classes.len() - 1
                    }
                };
                classes[index].1[column] = latch.wait_ns;
            }
        }
        let io_wait: Vec<u64> = classes
            .iter()
            .find(|(class, _)| class == IO_WAIT_CLASS)
            .map_or_else(|| vec![0; selected.len()], |(_, waits)| waits.clone());
        let total_wait_ns: Vec<u64> = selected.iter().map(|r| r.latch_wait_ns).collect();
        Some(S4Table {
            latch_only_wait_ns: total_wait_ns
                .iter()
                .zip(&io_wait)
                .map(|(total, io)| total.saturating_sub(*io))
                .collect(),
            total_wait_ns,
            dataset: dataset.name(),
            distribution: distribution.name(),
            threads,
            instances: selected.iter().map(|r| r.instances).collect(),
            classes,
            contended: selected.iter().map(|r| r.latch_contended).collect(),
            ops_per_s: selected.iter().map(|r| r.ops_per_s).collect(),
        })
    }

    pub fn totals(&self) -> ByInstances {
        self.by_instances(&self.total_wait_ns)
    }

    pub fn latch_only_totals(&self) -> ByInstances {
        self.by_instances(&self.latch_only_wait_ns)
    }

    fn by_instances(&self, values: &[u64]) -> ByInstances {
        ByInstances(
            self.instances
                .iter()
                .copied()
                .zip(values.iter().copied())
                .collect(),
        )
    }

    /// The class with the most wait at column `column`, if any waited.
    fn hottest(&self, column: usize, with_io_wait: bool) -> Option<&str> {
        self.classes
            .iter()
            .filter(|(class, waits)| waits[column] > 0 && (with_io_wait || class != IO_WAIT_CLASS))
            .max_by_key(|(_, waits)| waits[column])
            .map(|(class, _)| class.as_str())
    }

    /// The column with the least total wait (the smallest instance count on ties).
    pub fn best(&self) -> Option<usize> {
        (0..self.instances.len()).min_by_key(|&i| (self.total_wait_ns[i], self.instances[i]))
    }

    /// First-column total / best total: how many times less waiting the best instance
    /// count has than the first (S4's "8.5x less at 16 instances").
    pub fn reduction(&self) -> Option<f64> {
        let best = self.best()?;
        ratio(
            Some(self.total_wait_ns[0] as f64),
            Some(self.total_wait_ns[best] as f64),
        )
    }

    /// The shape of the total wait against the instance count, and, where waits for
    /// reads in flight are part of it, the shape without them.
    pub fn explain(&self) -> String {
        let mut text = format!(
            "{}, {}, {} threads: total wait {}",
            self.dataset,
            self.distribution,
            self.threads,
            explain_shape(&self.instances, &self.total_wait_ns, |column| {
                self.hottest(column, true)
            })
        );
        if self.latch_only_wait_ns != self.total_wait_ns {
            let _ = write!(
                text,
                ". Without {IO_WAIT_CLASS} (waiting for a read in flight, i.e. the device): {}",
                explain_shape(&self.instances, &self.latch_only_wait_ns, |column| {
                    self.hottest(column, false)
                })
            );
        }
        text
    }
}

/// A share at or below which a later instance count counts as an improvement.
const IMPROVEMENT_FACTOR: f64 = 0.9;

/// The class of waits for another thread's read of a page (the device, not a latch
/// holder); the S4 tables also show the total without it.
pub const IO_WAIT_CLASS: &str = "buffer.io_wait";

fn ms(ns: u64) -> String {
    format_number(Some(ns as f64 / 1e6), 1)
}

/// Describes how `waits` (total wait per instance count) changes with `instances`:
/// from the first count to the best, where it stops improving (no later count is more
/// than 10% lower), whether it rises again, and the hottest class (`hottest(column)`).
pub fn explain_shape<'a>(
    instances: &[u32],
    waits: &[u64],
    hottest: impl Fn(usize) -> Option<&'a str>,
) -> String {
    assert_eq!(instances.len(), waits.len());
    let plural = |n: u32| if n == 1 { "instance" } else { "instances" };
    if instances.is_empty() {
        return "nothing measured".into();
    }
    if waits.iter().all(|&w| w == 0) {
        return "no waits at any instance count measured".into();
    }
    let first = (instances[0], waits[0]);
    if instances.len() == 1 {
        return format!(
            "{} ms at {} {} (only one instance count measured)",
            ms(first.1),
            first.0,
            plural(first.0)
        );
    }
    let best = (0..instances.len())
        .min_by_key(|&i| (waits[i], instances[i]))
        .expect("not empty");
    let knee = (0..instances.len())
        .find(|&i| {
            waits[i + 1..]
                .iter()
                .all(|&w| (w as f64) > IMPROVEMENT_FACTOR * waits[i] as f64)
        })
        .expect("the last count always qualifies");
    let factor = |w: u64| {
        if w == 0 {
            "to none".to_string()
        } else {
            format!("{:.1}x less", first.1 as f64 / w as f64)
        }
    };
    let mut text = if best == 0 {
        format!(
            "lowest at {} {} ({} ms); more instances do not reduce it",
            first.0,
            plural(first.0),
            ms(first.1)
        )
    } else if knee == 0 {
        format!(
            "hardly changes with the instance count (no count is 10% below {} ms at {} {}; \
             lowest {} ms at {}, {})",
            ms(first.1),
            first.0,
            plural(first.0),
            ms(waits[best]),
            instances[best],
            factor(waits[best])
        )
    } else {
        let mut text = format!(
            "goes from {} ms at {} {} to {} ms at {} ({})",
            ms(first.1),
            first.0,
            plural(first.0),
            ms(waits[best]),
            instances[best],
            factor(waits[best])
        );
        if knee + 1 < instances.len() {
            let _ = write!(text, "; it stops improving at {}", instances[knee]);
        } else {
            let _ = write!(
                text,
                "; still improving at the largest count measured ({})",
                instances[knee]
            );
        }
        text
    };
    let later: Vec<String> = (best + 1..instances.len())
        .map(|i| format!("{}: {} ms", instances[i], ms(waits[i])))
        .collect();
    if !later.is_empty() {
        let last = *waits.last().expect("not empty");
        let rises = last as f64 * IMPROVEMENT_FACTOR > waits[best] as f64;
        let _ = write!(
            text,
            " ({}{})",
            later.join(", "),
            if rises { ", rising again" } else { "" }
        );
    }
    match (hottest(0), hottest(best)) {
        (Some(a), Some(b)) if best != 0 && a != b => {
            let _ = write!(
                text,
                "; hottest: {a} at {} {}, {b} at {}",
                first.0,
                plural(first.0),
                instances[best]
            );
        }
        (Some(a), _) => {
            let _ = write!(text, "; hottest: {a}");
        }
        _ => {}
    }
    text
}

/// The named figures the team checks; `null` where the inputs were not measured.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BufferPoolSummary {
    /// (ops/s off - ops/s on) / ops/s off * 100 (target <= 3).
    pub accounting_overhead_pct: Option<f64>,
    pub accounting_overhead_rounds_pct: Vec<f64>,
    pub accounting_overhead_min_pct: Option<f64>,
    pub accounting_overhead_max_pct: Option<f64>,
    /// The median of the per-round overheads (robust to one disturbed round).
    pub accounting_overhead_median_pct: Option<f64>,
    /// The overhead from operations per CPU-second (robust to other load).
    pub accounting_overhead_cpu_pct: Option<f64>,
    pub accounting_on_ops_per_s: Option<f64>,
    pub accounting_off_ops_per_s: Option<f64>,
    /// ops/s with optimistic reads / ops/s with shared-latch reads (read-only, hot).
    pub optimistic_vs_shared_ratio: Option<f64>,
    pub optimistic_vs_shared_rounds: Vec<f64>,
    /// The ratio from operations per CPU-second.
    pub optimistic_vs_shared_cpu_ratio: Option<f64>,
    pub optimistic_ops_per_s: Option<f64>,
    pub shared_ops_per_s: Option<f64>,
    /// The thread count and distribution of the S4 tables behind the fields below.
    pub s4_threads: u32,
    pub s4_distribution: Option<&'static str>,
    /// Total latch wait (ns, every class) per instance count, `larger` data set.
    pub latch_wait_ns_by_instances: Option<ByInstances>,
    /// The same for the `fits` data set.
    pub latch_wait_ns_by_instances_fits: Option<ByInstances>,
    /// The same two without `buffer.io_wait` (waits for a read in flight).
    pub latch_wait_ns_by_instances_excl_io: Option<ByInstances>,
    pub latch_wait_ns_by_instances_fits_excl_io: Option<ByInstances>,
    /// The instance count with the least total wait, and first count's wait / its wait.
    pub best_instances: Option<u32>,
    pub wait_reduction_at_best: Option<f64>,
    pub best_instances_fits: Option<u32>,
    pub wait_reduction_at_best_fits: Option<f64>,
    pub explanation: Option<String>,
    pub explanation_fits: Option<String>,
    pub rows: usize,
    pub ops_total: u64,
    pub errors_total: u64,
}

/// The baselines' results.
#[derive(Clone, Debug, Default)]
pub struct Baselines {
    /// A = accounting on, B = off.
    pub accounting: Option<AbComparison>,
    /// A = optimistic reads, B = shared-latch reads.
    pub optimistic: Option<AbComparison>,
}

/// The distribution the summary's S4 figures use: zipf if measured, else uniform.
fn summary_distribution(rows: &[BufferPoolRow]) -> Option<Distribution> {
    [Distribution::Zipf, Distribution::Uniform]
        .into_iter()
        .find(|d| rows.iter().any(|r| r.distribution == d.name()))
}

pub fn summarize(
    rows: &[BufferPoolRow],
    baselines: &Baselines,
    s4_threads: u32,
) -> BufferPoolSummary {
    let distribution = summary_distribution(rows);
    let table = |dataset| distribution.and_then(|d| S4Table::build(rows, dataset, d, s4_threads));
    let larger = table(Dataset::Larger);
    let fits = table(Dataset::Fits);
    let best = |t: &Option<S4Table>| t.as_ref().and_then(|t| t.best().map(|i| t.instances[i]));
    let accounting = baselines.accounting.as_ref();
    let optimistic = baselines.optimistic.as_ref();
    let accounting_rounds = accounting.map(|a| a.round_costs_pct()).unwrap_or_default();
    let (min, max) = min_max(&accounting_rounds);
    BufferPoolSummary {
        accounting_overhead_pct: accounting.map(|a| a.a_cost_pct()),
        accounting_overhead_min_pct: min,
        accounting_overhead_max_pct: max,
        accounting_overhead_median_pct: median(&accounting_rounds),
        accounting_overhead_cpu_pct: accounting.and_then(AbComparison::a_cpu_cost_pct),
        accounting_overhead_rounds_pct: accounting_rounds,
        accounting_on_ops_per_s: accounting.map(|a| a.a_ops_per_s),
        accounting_off_ops_per_s: accounting.map(|a| a.b_ops_per_s),
        optimistic_vs_shared_ratio: optimistic.map(|o| o.ratio),
        optimistic_vs_shared_rounds: optimistic
            .map(|o| o.round_ratios.clone())
            .unwrap_or_default(),
        optimistic_vs_shared_cpu_ratio: optimistic.and_then(|o| o.cpu_ratio),
        optimistic_ops_per_s: optimistic.map(|o| o.a_ops_per_s),
        shared_ops_per_s: optimistic.map(|o| o.b_ops_per_s),
        s4_threads,
        s4_distribution: distribution.map(Distribution::name),
        latch_wait_ns_by_instances: larger.as_ref().map(S4Table::totals),
        latch_wait_ns_by_instances_fits: fits.as_ref().map(S4Table::totals),
        latch_wait_ns_by_instances_excl_io: larger.as_ref().map(S4Table::latch_only_totals),
        latch_wait_ns_by_instances_fits_excl_io: fits.as_ref().map(S4Table::latch_only_totals),
        best_instances: best(&larger),
        wait_reduction_at_best: larger.as_ref().and_then(S4Table::reduction),
        best_instances_fits: best(&fits),
        wait_reduction_at_best_fits: fits.as_ref().and_then(S4Table::reduction),
        explanation: larger.as_ref().map(S4Table::explain),
        explanation_fits: fits.as_ref().map(S4Table::explain),
        rows: rows.len(),
        ops_total: rows.iter().map(|r| r.ops).sum(),
        errors_total: 0,
    }
}

/// What the run measured against and under which conditions (the JSON `config`).
#[derive(Clone, Debug, Serialize)]
pub struct BufferPoolBenchConfig {
    pub quick: bool,
    pub data_dir: String,
    pub data_dir_kept: bool,
    pub file: String,
    pub page_size_bytes: u32,
    pub pool_size_bytes: u64,
    pub pool_frames: u64,
    pub larger_pages: u64,
    pub fits_pages: u64,
    pub io_method: &'static str,
    pub io_method_reason: String,
    pub seconds_per_cell: f64,
    pub warm_min_seconds: f64,
    pub warm_max_seconds: f64,
    pub write_pct: u32,
    pub zipf_theta: f64,
    pub optimistic_reads: bool,
    pub old_blocks_time_ms: u32,
    pub free_target_pct: u32,
    pub datasets: Vec<&'static str>,
    pub distributions: Vec<&'static str>,
    pub threads: Vec<u32>,
    pub instances: Vec<u32>,
    pub baseline_cell: String,
    pub baseline_rounds: u32,
    pub baseline_round_seconds: f64,
    pub loaded: String,
    pub baseline: String,
    pub cold: &'static str,
    pub warm: String,
    /// `/proc/loadavg` when the run started and ended: other work on the machine
    /// disturbs the measurements.
    pub loadavg_start: Option<String>,
    pub loadavg_end: Option<String>,
}

/// A finished run.
pub struct BufferPoolReport {
    pub config: BufferPoolBenchConfig,
    pub rows: Vec<BufferPoolRow>,
    pub summary: BufferPoolSummary,
    pub baselines: Baselines,
}

/// Runs the bench and prints its tables and notes (and, with `--json`, the document).
pub fn run_and_print(
    options: &BufferPoolBenchOptions,
    output: &Output,
) -> Result<BufferPoolReport> {
    let report = run(options, output)?;
    print(&report, output)?;
    Ok(report)
}

/// Runs the bench, printing progress lines only.
pub fn run(options: &BufferPoolBenchOptions, output: &Output) -> Result<BufferPoolReport> {
    let cells = plan(options)?;
    let loadavg_start = loadavg();
    let workdir = WorkDir::open(options.data_dir.as_deref(), ".tarn-bench-bufferpool-")?;
    if workdir.is_in_memory() {
        output.progress(&format!(
            "warning: '{}' is in memory (tmpfs or ramfs): misses read memory, not a device",
            workdir.path().display()
        ));
    }
    let mut settings = options.settings.clone();
    settings.data_dir = workdir.path().to_path_buf();
    settings.page_size_bytes = options.page_size_bytes;
    settings.latch_accounting = true;
    let pool_frames = options.pool_frames();
    let larger_pages = Dataset::Larger.pages(pool_frames);
    let fits_pages = Dataset::Fits.pages(pool_frames);
    output.progress(&format!(
        "tarn bench bufferpool: {} cells of {:.1} s, pool {} MiB, data sets larger {} MiB and \
         fits {} MiB, in '{}'",
        cells.len(),
        options.seconds_per_cell,
        options.pool_size_bytes >> 20,
        (larger_pages * u64::from(options.page_size_bytes)) >> 20,
        (fits_pages * u64::from(options.page_size_bytes)) >> 20,
        workdir.path().display()
    ));

    // Load once, and resolve `auto` once: later cells open the concrete path quietly.
    let (loaded, method, method_reason) = {
        let dir = open_data_dir(&settings, settings.io_method)?;
        let loaded = load::ensure_loaded(&dir, DATA_FILE_ID, larger_pages, true, output)?;
        let engine = dir.engine();
        (
            loaded,
            engine.method(),
            engine.selection_reason().to_string(),
        )
    };
    if method == IoMethod::Buffered {
        output
            .progress("warning: io_method is buffered: misses may be served by the OS page cache");
    }

    let runner = Runner {
        options,
        output,
        settings,
        method,
        larger_pages,
        fits_pages,
        lsn: Box::default(),
    };
    let mut rows = Vec::with_capacity(cells.len());
    for (index, cell) in cells.iter().enumerate() {
        let row = runner.run_cell(cell)?;
        output.progress(&progress_line(index + 1, cells.len(), cell, &row));
        rows.push(row);
    }
    let baselines = Baselines {
        accounting: Some(runner.accounting_baseline()?),
        optimistic: Some(runner.optimistic_baseline()?),
    };

    let s4_threads = options.s4_threads();
    let summary = summarize(&rows, &baselines, s4_threads);
    let data_dir = workdir.path().to_path_buf();
    let config = BufferPoolBenchConfig {
        quick: options.quick,
        data_dir: data_dir.display().to_string(),
        data_dir_kept: !workdir.is_temporary(),
        file: data_dir
            .join(format!("{:06}.tdf", DATA_FILE_ID.0))
            .display()
            .to_string(),
        page_size_bytes: options.page_size_bytes,
        pool_size_bytes: options.pool_size_bytes,
        pool_frames,
        larger_pages,
        fits_pages,
        io_method: method.name(),
        io_method_reason: method_reason,
        seconds_per_cell: options.seconds_per_cell,
        warm_min_seconds: options.warm_min_seconds,
        warm_max_seconds: options.warm_max_seconds,
        write_pct: options.write_pct,
        zipf_theta: ZIPF_THETA,
        optimistic_reads: runner.settings.buffer_pool_optimistic_reads,
        old_blocks_time_ms: runner.settings.buffer_pool_old_blocks_time_ms,
        free_target_pct: runner.settings.buffer_pool_free_target_pct,
        datasets: distinct(cells.iter().map(|c| c.dataset.name())),
        distributions: distinct(cells.iter().map(|c| c.distribution.name())),
        threads: distinct(cells.iter().map(|c| c.threads)),
        instances: distinct(cells.iter().map(|c| c.instances)),
        baseline_cell: format!(
            "fits, zipf, {BASELINE_INSTANCES} instances, {BASELINE_THREADS} threads"
        ),
        baseline_rounds: options.baseline_rounds,
        baseline_round_seconds: options.baseline_round_seconds,
        loaded,
        baseline: baseline_note(options),
        cold: COLD_NOTE,
        warm: warm_note(options),
        loadavg_start,
        loadavg_end: loadavg(),
    };
    drop(runner);
    drop(workdir);
    Ok(BufferPoolReport {
        config,
        rows,
        summary,
        baselines,
    })
}

/// The first three fields of `/proc/loadavg` (1, 5 and 15 minute load averages).
fn loadavg() -> Option<String> {
    let text = std::fs::read_to_string("/proc/loadavg").ok()?;
    Some(
        text.split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" "),
    )
}

fn distinct<T: PartialEq>(items: impl Iterator<Item = T>) -> Vec<T> {
    let mut out = Vec::new();
    for item in items {
        if !out.contains(&item) {
            out.push(item);
        }
    }
    out
}

fn baseline_note(options: &BufferPoolBenchOptions) -> String {
    format!(
        "baselines (technique switched off, same run): 1 instance for the instance sweep; \
         latch accounting on vs off, and optimistic vs shared-latch page reads (read-only), \
         each on fits/zipf with {BASELINE_INSTANCES} instances and {BASELINE_THREADS} threads, \
         {} rounds of {:.1} s per mode, order alternating AB, BA, ... and rates from summed \
         operations",
        options.baseline_rounds, options.baseline_round_seconds
    )
}

fn warm_note(options: &BufferPoolBenchOptions) -> String {
    format!(
        "warm-up: larger cells run the workload until {FULL_RESIDENT_PCT}% of the frames hold \
         pages (at least {:.1} s, at most {:.1} s); fits cells preload their data set \
         (prefetch + verified read) and run the workload past buffer_pool_old_blocks_time + \
         {:.1} s, when every preloaded page has been promoted out of the old sublist; then \
         the latch counters are reset, pool stats read, and the cell is measured",
        options.warm_min_seconds,
        options.warm_max_seconds,
        PROMOTION_MARGIN.as_secs_f64()
    )
}

fn progress_line(index: usize, total: usize, cell: &CellSpec, row: &BufferPoolRow) -> String {
    format!(
        "[{index}/{total}] {}: {} ops/s, hit {}%, {} reads/s, latch wait {} ms ({} contended), \
         warm {:.2} s",
        cell.label(),
        format_count(Some(row.ops_per_s)),
        format_number(row.hit_rate.map(|h| h * 100.0), 2),
        format_count(Some(row.page_reads_per_s)),
        ms(row.latch_wait_ns),
        format_count(Some(row.latch_contended as f64)),
        row.warm_seconds
    )
}

/// Runs cells and baselines on the loaded directory.
struct Runner<'a> {
    options: &'a BufferPoolBenchOptions,
    output: &'a Output,
    settings: Settings,
    /// The concrete I/O path `auto` resolved to.
    method: IoMethod,
    larger_pages: u64,
    fits_pages: u64,
    /// The LSN counter every writer takes its next LSN from.
    lsn: Box<LsnCounter>,
}

impl Runner<'_> {
    fn pool_config(&self, instances: u32, optimistic_reads: bool) -> PoolConfig {
        let mut config = PoolConfig::from_settings(&self.settings);
        config.size_bytes = self.options.pool_size_bytes;
        config.instances = instances;
        config.optimistic_reads = optimistic_reads;
        config
    }

    /// A fresh pool on a fresh engine: every cell starts cold, from a newly opened data
    /// directory with nothing cached by Tarn.
    fn open_pool(&self, instances: u32, optimistic_reads: bool) -> Result<BufferPool> {
        let dir = open_data_dir(&self.settings, self.method)?;
        Ok(BufferPool::open(
            self.pool_config(instances, optimistic_reads),
            dir,
            Arc::new(NoLog),
        )?)
    }

    fn pages(&self, dataset: Dataset) -> u64 {
        match dataset {
            Dataset::Larger => self.larger_pages,
            Dataset::Fits => self.fits_pages,
        }
    }

    fn workload(&self, dataset: Dataset, distribution: Distribution, write_pct: u32) -> Workload {
        let pages = self.pages(dataset);
        Workload {
            file_id: DATA_FILE_ID,
            pages,
            zipf: (distribution == Distribution::Zipf).then(|| Zipf::new(pages, ZIPF_THETA)),
            write_pct,
        }
    }

    /// Reads pages `0..pages` into `pool`: prefetched in batches, then each read and
    /// checked (a read waits for its prefetch, or reads the page if it was skipped).
    fn preload(&self, pool: &BufferPool, pages: u64, row: &str) -> Result<()> {
        let ids: Vec<PageId> = (0..pages)
            .map(|n| PageId::new(DATA_FILE_ID, PageNo(n as u32)))
            .collect();
        for batch in ids.chunks(PRELOAD_BATCH) {
            pool.prefetch(batch);
            for &page_id in batch {
                driver::read(pool, page_id)
                    .map_err(|failure: Failure| failure.into_bench_error(row.to_string(), 1))?;
            }
        }
        Ok(())
    }

    /// Frames that must hold pages before a cell is warm.
    fn resident_target(&self, pool: &BufferPool, dataset: Dataset) -> u64 {
        let full = pool.stats().frames * FULL_RESIDENT_PCT / 100;
        match dataset {
            Dataset::Larger => full,
            Dataset::Fits => full.min(self.fits_pages),
        }
    }

    /// How long workers run on a preloaded pool before anything is measured: past the
    /// one-time promotion of every preloaded page out of the old sublist.
    fn after_preload(&self) -> Duration {
        Duration::from_millis(u64::from(self.settings.buffer_pool_old_blocks_time_ms))
            .min(PROMOTION_WAIT_MAX)
            + PROMOTION_MARGIN
    }

    fn run_cell(&self, cell: &CellSpec) -> Result<BufferPoolRow> {
        let label = cell.label();
        let pool = self.open_pool(cell.instances, self.settings.buffer_pool_optimistic_reads)?;
        if cell.dataset == Dataset::Fits {
            self.preload(&pool, self.fits_pages, &label)?;
        }
        let workload = self.workload(cell.dataset, cell.distribution, self.options.write_pct);
        let target = self.resident_target(&pool, cell.dataset);
        let mut warm_min = Duration::from_secs_f64(self.options.warm_min_seconds);
        if cell.dataset == Dataset::Fits {
            warm_min = warm_min.max(self.after_preload());
        }
        let warm_max = Duration::from_secs_f64(self.options.warm_max_seconds).max(warm_min);
        let (warm, window) = driver::run(
            &[&pool],
            &workload,
            cell.threads,
            &self.lsn,
            &label,
            |driver| {
                let warm = driver.warm(warm_min, warm_max, target);
                let window = driver.window(Duration::from_secs_f64(self.options.seconds_per_cell));
                Ok((warm, window))
            },
        )?;
        pool.flush_all()?;
        Ok(BufferPoolRow::new(cell, &warm, &window))
    }

    /// Alternating rounds of `measure(mode)` for mode A (`true`) and B (`false`).
    fn ab_rounds(
        &self,
        label: &str,
        mut measure: impl FnMut(bool) -> Result<Window>,
    ) -> Result<Vec<AbRound>> {
        let mut rounds = Vec::with_capacity(self.options.baseline_rounds as usize);
        for round in 0..self.options.baseline_rounds {
            let b_first = b_first(round);
            let first = measure(!b_first)?;
            let second = measure(b_first)?;
            let (a, b) = if b_first {
                (second, first)
            } else {
                (first, second)
            };
            let sample = |w: &Window| Sample {
                ops: w.ops,
                seconds: w.elapsed.as_secs_f64(),
                cpu_seconds: w.cpu.as_secs_f64(),
            };
            let round = AbRound {
                a: sample(&a),
                b: sample(&b),
                b_first,
            };
            self.output.progress(&format!(
                "  {label} round {}/{}: {} vs {} ops/s",
                rounds.len() + 1,
                self.options.baseline_rounds,
                format_count(round.a.rate()),
                format_count(round.b.rate()),
            ));
            rounds.push(round);
        }
        Ok(rounds)
    }

    fn baseline_comparison(rounds: &[AbRound], label: &str) -> Result<AbComparison> {
        AbComparison::from_rounds(rounds).ok_or_else(|| {
            BenchError::Options(format!("baseline '{label}' measured no operations"))
        })
    }

    /// Latch accounting on (A) vs off (B) on one warm pool.
    fn accounting_baseline(&self) -> Result<AbComparison> {
        let label = "accounting on vs off";
        self.output.progress(&format!(
            "baseline: {label} (fits, zipf, {BASELINE_INSTANCES} instances, {BASELINE_THREADS} \
             threads)"
        ));
        let pool = self.open_pool(
            BASELINE_INSTANCES,
            self.settings.buffer_pool_optimistic_reads,
        )?;
        self.preload(&pool, self.fits_pages, label)?;
        let workload = self.workload(Dataset::Fits, Distribution::Zipf, self.options.write_pct);
        let registry = pool.datadir().latches().clone();
        let round = Duration::from_secs_f64(self.options.baseline_round_seconds);
        let rounds = driver::run(
            &[&pool],
            &workload,
            BASELINE_THREADS,
            &self.lsn,
            label,
            |driver| {
                driver.pause(self.after_preload());
                let rounds = self.ab_rounds(label, |on| {
                    registry.set_enabled(on);
                    driver.pause(BASELINE_SETTLE);
                    Ok(driver.window(round))
                });
                registry.set_enabled(true);
                rounds
            },
        )?;
        pool.flush_all()?;
        Self::baseline_comparison(&rounds, label)
    }

    /// Optimistic reads (A) vs shared-latch reads (B): two preloaded pools, read-only.
    fn optimistic_baseline(&self) -> Result<AbComparison> {
        let label = "optimistic vs shared reads";
        self.output.progress(&format!(
            "baseline: {label} (fits, zipf, read-only, {BASELINE_INSTANCES} instances, \
             {BASELINE_THREADS} threads)"
        ));
        let optimistic = self.open_pool(BASELINE_INSTANCES, true)?;
        let shared = self.open_pool(BASELINE_INSTANCES, false)?;
        self.preload(&optimistic, self.fits_pages, label)?;
        self.preload(&shared, self.fits_pages, label)?;
        let workload = self.workload(Dataset::Fits, Distribution::Zipf, 0);
        let round = Duration::from_secs_f64(self.options.baseline_round_seconds);
        let pools = [&optimistic, &shared];
        let rounds = driver::run(
            &pools,
            &workload,
            BASELINE_THREADS,
            &self.lsn,
            label,
            |driver| {
                // Both pools past their preload's promotions (the shared one first).
                driver.select(1);
                driver.pause(self.after_preload());
                driver.select(0);
                driver.pause(PROMOTION_MARGIN);
                self.ab_rounds(label, |use_optimistic| {
                    driver.select(if use_optimistic { 0 } else { 1 });
                    driver.pause(BASELINE_SETTLE);
                    Ok(driver.window(round))
                })
            },
        )?;
        Self::baseline_comparison(&rounds, label)
    }
}

/// Prints the notes and tables, and the JSON document in `--json` mode.
pub fn print(report: &BufferPoolReport, output: &Output) -> Result<()> {
    let config = &report.config;
    let page = u64::from(config.page_size_bytes);
    output.note(&format!(
        "\ntarn bench bufferpool (S4): pool {} MiB ({} frames of {} bytes); data sets larger {} \
         MiB ({} pages, {}x the pool) and fits {} MiB ({} pages); {:.1} s per cell; {}% writes; \
         data in '{}'{}",
        config.pool_size_bytes >> 20,
        config.pool_frames,
        config.page_size_bytes,
        (config.larger_pages * page) >> 20,
        config.larger_pages,
        LARGER_FACTOR,
        (config.fits_pages * page) >> 20,
        config.fits_pages,
        config.seconds_per_cell,
        config.write_pct,
        config.data_dir,
        if config.data_dir_kept {
            " (kept)"
        } else {
            " (removed)"
        }
    ));
    output.note(&format!("- {}", config.loaded));
    output.note(&format!(
        "- io_method {}: {}",
        config.io_method, config.io_method_reason
    ));
    output.note(&format!("- {}", config.cold));
    output.note(&format!("- {}", config.warm));
    output.note(&format!(
        "- each operation: a page picked uniformly or zipfian (theta {}, scrambled); a read is \
         read_optimistic of the header page id and a body word (checked against what was \
         loaded), a write ({}%) is fetch_exclusive + counter + mark_dirty at a shared LSN",
        config.zipf_theta, config.write_pct
    ));
    output.note(&format!("- {}", config.baseline));
    if let (Some(start), Some(end)) = (&config.loadavg_start, &config.loadavg_end) {
        output.note(&format!(
            "- load average (1, 5, 15 min) at start {start}, at end {end}, on {} CPUs",
            std::thread::available_parallelism().map_or(0, |n| n.get())
        ));
    }
    output.note(
        "- latch wait = time threads spent waiting for a latch (or for another thread's read \
         of the page, class buffer.io_wait), summed over threads: it can exceed wall time",
    );
    output.table(&rows_table(&report.rows));
    let s4_threads = report.summary.s4_threads;
    for dataset in Dataset::ALL {
        for distribution in Distribution::ALL {
            if let Some(table) = S4Table::build(&report.rows, dataset, distribution, s4_threads) {
                output.table(&s4_table(&table));
                output.note(&table.explain());
            }
        }
    }
    output.table(&totals_table(&report.rows));
    output.table(&baselines_table(&report.baselines));
    if let Some(note) = unstable_note(&report.summary) {
        output.note(&note);
    }
    output.table(&summary_table(&report.summary));
    output.json(&BenchDocument {
        bench: "bufferpool",
        config,
        rows: &report.rows,
        summary: &report.summary,
    })
}

fn rows_table(rows: &[BufferPoolRow]) -> Table {
    let mut table = Table::new(
        "Buffer pool cells (S4): throughput, hits and latch waits",
        &[
            "data set",
            "dist",
            "threads",
            "inst",
            "ops/s",
            "hit %",
            "reads/s",
            "page writes/s",
            "CPU us/op",
            "latch wait ms",
            "contended",
            "hottest latch",
        ],
    );
    for row in rows {
        table.add_row(vec![
            row.dataset.to_string(),
            row.distribution.to_string(),
            row.threads.to_string(),
            row.instances.to_string(),
            format_count(Some(row.ops_per_s)),
            format_number(row.hit_rate.map(|h| h * 100.0), 2),
            format_count(Some(row.page_reads_per_s)),
            format_count(Some(row.page_writes_per_s)),
            format_number(Some(row.cpu_us_per_op), 2),
            ms(row.latch_wait_ns),
            format_count(Some(row.latch_contended as f64)),
            row.hottest()
                .map_or_else(|| "-".to_string(), |l| l.class.clone()),
        ]);
    }
    table
}

fn s4_table(table: &S4Table) -> Table {
    let mut headers = vec!["latch wait ms".to_string()];
    headers.extend(table.instances.iter().map(|n| format!("{n} inst")));
    let header_refs: Vec<&str> = headers.iter().map(String::as_str).collect();
    let mut out = Table::new(
        format!(
            "S4: latch wait per latch class by instance count: {}, {}, {} threads",
            table.dataset, table.distribution, table.threads
        ),
        &header_refs,
    );
    for (class, waits) in &table.classes {
        let mut cells = vec![class.clone()];
        cells.extend(waits.iter().map(|&w| ms(w)));
        out.add_row(cells);
    }
    let mut total = vec!["total".to_string()];
    total.extend(table.total_wait_ns.iter().map(|&w| ms(w)));
    out.add_row(total);
    let mut latch_only = vec![format!("total without {IO_WAIT_CLASS}")];
    latch_only.extend(table.latch_only_wait_ns.iter().map(|&w| ms(w)));
    out.add_row(latch_only);
    let first = table.total_wait_ns.first().copied().unwrap_or(0) as f64;
    let mut reduction = vec!["1st column / this (x less)".to_string()];
    reduction.extend(
        table
            .total_wait_ns
            .iter()
            .map(|&w| format_ratio(ratio(Some(first), Some(w as f64)))),
    );
    out.add_row(reduction);
    let mut contended = vec!["contended acquisitions".to_string()];
    contended.extend(
        table
            .contended
            .iter()
            .map(|&c| format_count(Some(c as f64))),
    );
    out.add_row(contended);
    let mut ops = vec!["ops/s".to_string()];
    ops.extend(table.ops_per_s.iter().map(|&o| format_count(Some(o))));
    out.add_row(ops);
    out
}

/// Total latch wait (ms) per instance count for every data set, distribution and
/// thread count measured.
fn totals_table(rows: &[BufferPoolRow]) -> Table {
    let instances = {
        let mut all: Vec<u32> = rows.iter().map(|r| r.instances).collect();
        all.sort_unstable();
        all.dedup();
        all
    };
    let mut headers = vec![
        "data set".to_string(),
        "dist".to_string(),
        "threads".to_string(),
    ];
    headers.extend(instances.iter().map(|n| format!("{n} inst")));
    let header_refs: Vec<&str> = headers.iter().map(String::as_str).collect();
    let mut table = Table::new(
        "Total latch wait (ms) by instance count, every thread count",
        &header_refs,
    );
    let mut groups: Vec<(&str, &str, u32)> = Vec::new();
    for row in rows {
        let key = (row.dataset, row.distribution, row.threads);
        if !groups.contains(&key) {
            groups.push(key);
        }
    }
    for (dataset, distribution, threads) in groups {
        let mut cells = vec![
            dataset.to_string(),
            distribution.to_string(),
            threads.to_string(),
        ];
        for &n in &instances {
            cells.push(
                rows.iter()
                    .find(|r| {
                        r.dataset == dataset
                            && r.distribution == distribution
                            && r.threads == threads
                            && r.instances == n
                    })
                    .map_or_else(|| "-".to_string(), |r| ms(r.latch_wait_ns)),
            );
        }
        table.add_row(cells);
    }
    table
}

fn baselines_table(baselines: &Baselines) -> Table {
    let mut table = Table::new(
        "Baselines: the technique switched off, alternating rounds (rates from summed ops)",
        &[
            "comparison",
            "A ops/s",
            "B ops/s",
            "result",
            "per-round range",
            "from CPU time",
        ],
    );
    if let Some(a) = &baselines.accounting {
        let costs = a.round_costs_pct();
        let (min, max) = min_max(&costs);
        table.add_row(vec![
            "latch accounting: A on, B off".into(),
            format_count(Some(a.a_ops_per_s)),
            format_count(Some(a.b_ops_per_s)),
            format!("overhead {}%", format_number(Some(a.a_cost_pct()), 2)),
            format!(
                "{}% .. {}% (median {}%)",
                format_number(min, 2),
                format_number(max, 2),
                format_number(median(&costs), 2)
            ),
            a.a_cpu_cost_pct().map_or_else(
                || "-".into(),
                |v| format!("overhead {}%", format_number(Some(v), 2)),
            ),
        ]);
    }
    if let Some(o) = &baselines.optimistic {
        let (min, max) = min_max(&o.round_ratios);
        table.add_row(vec![
            "page reads: A optimistic, B shared latch".into(),
            format_count(Some(o.a_ops_per_s)),
            format_count(Some(o.b_ops_per_s)),
            format!("A/B {}", format_ratio(Some(o.ratio))),
            format!("{} .. {}", format_ratio(min), format_ratio(max)),
            format!("A/B {}", format_ratio(o.cpu_ratio)),
        ]);
    }
    table
}

/// Per-round overheads further apart than this (percentage points) mean some round
/// was disturbed (by other work, or by the pool switching speed; see the crate docs).
const UNSTABLE_SPREAD_PCT: f64 = 10.0;

/// A warning when the accounting rounds disagree too much for the summed figure.
fn unstable_note(summary: &BufferPoolSummary) -> Option<String> {
    let (min, max) = (
        summary.accounting_overhead_min_pct?,
        summary.accounting_overhead_max_pct?,
    );
    (max - min > UNSTABLE_SPREAD_PCT).then(|| {
        format!(
            "note: the accounting rounds disagree ({}% .. {}%): at least one window was \
             disturbed, which skews the summed figure; the median ({}%) is the steadier one",
            format_number(Some(min), 1),
            format_number(Some(max), 1),
            format_number(summary.accounting_overhead_median_pct, 2)
        )
    })
}

fn summary_table(summary: &BufferPoolSummary) -> Table {
    let mut table = Table::new("Summary (S4 targets)", &["figure", "value", "target"]);
    let pct = |v: Option<f64>| {
        v.map_or_else(|| "-".into(), |v| format!("{}%", format_number(Some(v), 2)))
    };
    table.add_row(vec![
        "latch accounting overhead (summed ops)".into(),
        pct(summary.accounting_overhead_pct),
        "<= 3%".into(),
    ]);
    table.add_row(vec![
        "  median of rounds / from CPU time".into(),
        format!(
            "{} / {}",
            pct(summary.accounting_overhead_median_pct),
            pct(summary.accounting_overhead_cpu_pct)
        ),
        "-".into(),
    ]);
    table.add_row(vec![
        "optimistic / shared-latch reads".into(),
        format_ratio(summary.optimistic_vs_shared_ratio),
        "> 1x".into(),
    ]);
    let best = |n: Option<u32>, r: Option<f64>| match (n, r) {
        (Some(n), Some(r)) => format!("{r:.1}x less at {n} instances"),
        _ => "-".into(),
    };
    table.add_row(vec![
        format!(
            "larger: total latch wait, 1st count / best ({} threads)",
            summary.s4_threads
        ),
        best(summary.best_instances, summary.wait_reduction_at_best),
        "S4: 8.5x-13x less at 16".into(),
    ]);
    table.add_row(vec![
        format!(
            "fits: total latch wait, 1st count / best ({} threads)",
            summary.s4_threads
        ),
        best(
            summary.best_instances_fits,
            summary.wait_reduction_at_best_fits,
        ),
        "waits low at any count".into(),
    ]);
    table
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(
        dataset: Dataset,
        distribution: Distribution,
        instances: u32,
        threads: u32,
        waits: &[(&'static str, u64)],
    ) -> BufferPoolRow {
        let snapshot: Vec<LatchSnapshot> = waits
            .iter()
            .map(|&(class, wait_ns)| LatchSnapshot {
                class,
                instance: None,
                acquisitions: 100,
                contended: u64::from(wait_ns > 0),
                wait_ns,
            })
            .collect();
        let window = Window {
            ops: 1000,
            writes: 100,
            elapsed: Duration::from_secs(1),
            cpu: Duration::from_millis(500),
            stats: driver::StatsDelta {
                fetches: 1000,
                hits: 900,
                misses: 100,
                page_reads: 100,
                ..Default::default()
            },
            latches: snapshot,
        };
        let warm = driver::Warm {
            elapsed: Duration::from_millis(300),
            resident: 95,
            frames: 100,
            reached: true,
        };
        BufferPoolRow::new(
            &CellSpec {
                dataset,
                distribution,
                instances,
                threads,
            },
            &warm,
            &window,
        )
    }

    #[test]
    fn a_row_sums_latch_classes_in_canonical_order_and_computes_rates() {
        let r = row(
            Dataset::Larger,
            Distribution::Zipf,
            8,
            64,
            &[
                ("buffer.lru", 3_000_000),
                ("buffer.page", 1_000_000),
                ("x.other", 5),
            ],
        );
        assert_eq!(r.latch_wait_ns, 4_000_005);
        assert_eq!(r.latch_contended, 3);
        assert_eq!(r.hit_rate, Some(0.9));
        assert_eq!((r.ops_per_s, r.page_reads_per_s), (1000.0, 100.0));
        assert_eq!(r.cpu_us_per_op, 500.0);
        assert_eq!(r.resident_pct, 95.0);
        let classes: Vec<&str> = r.latches.iter().map(|l| l.class.as_str()).collect();
        assert_eq!(&classes[..LATCH_CLASSES.len()], &LATCH_CLASSES);
        assert_eq!(classes.last(), Some(&"x.other"));
        assert_eq!(r.hottest().unwrap().class, "buffer.lru");
        let value = serde_json::to_value(&r).unwrap();
        for key in [
            "dataset",
            "distribution",
            "instances",
            "threads",
            "ops_per_s",
            "hit_rate",
            "page_reads_per_s",
            "latch_wait_ns",
            "latch_contended",
            "latches",
        ] {
            assert!(value.get(key).is_some(), "{key} missing from {value}");
        }
        assert_eq!(value["latches"][1]["class"], "buffer.lru");
        assert_eq!(value["latches"][1]["wait_ns"], 3_000_000);
    }

    #[test]
    fn ab_comparisons_use_summed_operations_and_keep_the_per_round_spread() {
        let s = |ops, seconds| Sample {
            ops,
            seconds,
            cpu_seconds: seconds * 2.0,
        };
        let rounds = [
            AbRound {
                a: s(970, 1.0),
                b: s(1000, 1.0),
                b_first: false,
            },
            AbRound {
                a: s(1990, 2.0),
                b: s(2000, 2.0),
                b_first: true,
            },
        ];
        let c = AbComparison::from_rounds(&rounds).unwrap();
        assert_eq!(c.a_ops_per_s, 2960.0 / 3.0);
        assert_eq!(c.b_ops_per_s, 1000.0);
        // Summed: (1000 - 986.67) / 1000 = 1.33%, not the mean of 3% and 0.5%.
        assert!(
            (c.a_cost_pct() - 4.0 / 3.0).abs() < 1e-9,
            "{}",
            c.a_cost_pct()
        );
        let costs = c.round_costs_pct();
        assert!((costs[0] - 3.0).abs() < 1e-9 && (costs[1] - 0.5).abs() < 1e-9);
        assert_eq!(min_max(&costs), (Some(costs[1]), Some(costs[0])));
        assert_eq!(
            c.cpu_ratio.map(|r| (r * 1e9).round()),
            Some((c.ratio * 1e9).round())
        );
        assert!(AbComparison::from_rounds(&[]).is_none());
        assert!(
            AbComparison::from_rounds(&[AbRound {
                a: s(5, 1.0),
                b: s(0, 1.0),
                b_first: false
            }])
            .is_none()
        );
        assert_eq!(
            (0..4).map(b_first).collect::<Vec<_>>(),
            [false, true, false, true]
        );
    }

    #[test]
    fn the_s4_table_puts_classes_in_rows_and_instance_counts_in_columns() {
        let rows = vec![
            row(
                Dataset::Larger,
                Distribution::Zipf,
                16,
                64,
                &[("buffer.lru", 100), ("buffer.page", 50)],
            ),
            row(
                Dataset::Larger,
                Distribution::Zipf,
                1,
                64,
                &[("buffer.lru", 900), ("buffer.page", 100)],
            ),
            row(
                Dataset::Larger,
                Distribution::Zipf,
                1,
                8,
                &[("buffer.lru", 7)],
            ),
            row(
                Dataset::Fits,
                Distribution::Zipf,
                1,
                64,
                &[("buffer.lru", 1)],
            ),
        ];
        let table = S4Table::build(&rows, Dataset::Larger, Distribution::Zipf, 64).unwrap();
        assert_eq!(table.instances, [1, 16]);
        assert_eq!(table.total_wait_ns, [1000, 150]);
        let lru = table
            .classes
            .iter()
            .find(|(c, _)| c == "buffer.lru")
            .unwrap();
        assert_eq!(lru.1, [900, 100]);
        assert_eq!(table.classes.len(), LATCH_CLASSES.len());
        assert_eq!(table.best(), Some(1));
        assert_eq!(table.reduction(), Some(1000.0 / 150.0));
        let totals = serde_json::to_string(&table.totals()).unwrap();
        assert_eq!(totals, r#"{"1":1000,"16":150}"#);
        assert!(S4Table::build(&rows, Dataset::Fits, Distribution::Uniform, 64).is_none());
        let rendered = s4_table(&table).render();
        assert!(
            rendered.contains("buffer.lru") && rendered.contains("16 inst"),
            "{rendered}"
        );

        let summary = summarize(&rows, &Baselines::default(), 64);
        assert_eq!(summary.s4_distribution, Some("zipf"));
        assert_eq!(summary.best_instances, Some(16));
        assert_eq!(
            summary.latch_wait_ns_by_instances.as_ref().unwrap().get(1),
            Some(1000)
        );
        assert_eq!(
            summary.latch_wait_ns_by_instances_fits,
            Some(ByInstances(vec![(1, 1)]))
        );
        assert!(summary.accounting_overhead_pct.is_none());
        let value = serde_json::to_value(&summary).unwrap();
        assert!(value["accounting_overhead_pct"].is_null());
        assert_eq!(value["latch_wait_ns_by_instances"]["16"], 150);
        assert!(value.get("optimistic_vs_shared_ratio").is_some());
    }

    #[test]
    fn the_explanation_names_the_reduction_the_knee_and_a_rise() {
        let hot = |_| Some("buffer.lru");
        let text = explain_shape(
            &[1, 4, 8, 16, 32, 64],
            &[
                850_000_000,
                300_000_000,
                150_000_000,
                100_000_000,
                95_000_000,
                180_000_000,
            ],
            hot,
        );
        assert!(
            text.starts_with("goes from 850.0 ms at 1 instance to 95.0 ms at 32 (8.9x less)"),
            "{text}"
        );
        assert!(text.contains("stops improving at 16"), "{text}");
        assert!(text.contains("64: 180.0 ms, rising again"), "{text}");
        assert!(text.ends_with("; hottest: buffer.lru"), "{text}");

        let flat = explain_shape(&[1, 8, 64], &[10, 12, 11], |_| None);
        assert!(flat.starts_with("lowest at 1 instance"), "{flat}");
        let slight = explain_shape(&[1, 8, 64], &[1000, 960, 950], |_| None);
        assert!(slight.starts_with("hardly changes"), "{slight}");
        assert!(
            slight.contains("lowest 0.0 ms at 64, 1.1x less"),
            "{slight}"
        );
        let improving = explain_shape(&[1, 8, 64], &[1000, 500, 100], |_| None);
        assert!(improving.contains("still improving at the largest count measured (64)"));
        let none = explain_shape(&[1, 8], &[0, 0], |_| None);
        assert!(none.contains("no waits"), "{none}");
        let hottest = |i| Some(if i == 0 { "buffer.lru" } else { "buffer.page" });
        let moved = explain_shape(&[1, 8], &[1000, 10], hottest);
        assert!(
            moved.ends_with("hottest: buffer.lru at 1 instance, buffer.page at 8"),
            "{moved}"
        );
    }

    #[test]
    fn the_s4_explanation_adds_the_shape_without_io_waits() {
        let rows = vec![
            row(
                Dataset::Larger,
                Distribution::Zipf,
                1,
                64,
                &[("buffer.lru", 90_000_000), (IO_WAIT_CLASS, 2_000_000_000)],
            ),
            row(
                Dataset::Larger,
                Distribution::Zipf,
                16,
                64,
                &[("buffer.lru", 9_000_000), (IO_WAIT_CLASS, 1_900_000_000)],
            ),
        ];
        let table = S4Table::build(&rows, Dataset::Larger, Distribution::Zipf, 64).unwrap();
        assert_eq!(table.latch_only_wait_ns, [90_000_000, 9_000_000]);
        let text = table.explain();
        assert!(
            text.starts_with("larger, zipf, 64 threads: total wait hardly changes"),
            "{text}"
        );
        assert!(
            text.contains(
                "Without buffer.io_wait (waiting for a read in flight, i.e. the device): \
                           goes from 90.0 ms at 1 instance to 9.0 ms at 16 (10.0x less)"
            ),
            "{text}"
        );
        assert!(text.ends_with("; hottest: buffer.lru"), "{text}");
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(median(&[]), None);
    }

    #[test]
    fn plans_cover_the_matrix_and_reject_bad_options() {
        let full = BufferPoolBenchOptions::new(Settings::default(), false);
        let cells = plan(&full).unwrap();
        assert_eq!(cells.len(), 2 * 2 * 5 * 6);
        assert_eq!(full.s4_threads(), 256);
        assert_eq!(full.pool_frames(), 4096);
        assert_eq!(Dataset::Larger.pages(4096), 40960);
        assert_eq!(Dataset::Fits.pages(4096), 2048);
        let quick = BufferPoolBenchOptions::new(Settings::default(), true);
        let cells = plan(&quick).unwrap();
        assert_eq!(cells.len(), 2 * 3 * 2);
        assert!(cells.iter().all(|c| c.distribution == Distribution::Zipf));
        assert_eq!(cells[0].dataset, Dataset::Larger);

        let bad = |change: fn(&mut BufferPoolBenchOptions)| {
            let mut options = BufferPoolBenchOptions::new(Settings::default(), true);
            change(&mut options);
            plan(&options).unwrap_err()
        };
        assert!(matches!(
            bad(|o| o.instances = vec![65]),
            BenchError::Options(_)
        ));
        assert!(matches!(
            bad(|o| o.threads = vec![0]),
            BenchError::Options(_)
        ));
        assert!(matches!(bad(|o| o.write_pct = 101), BenchError::Options(_)));
        assert!(matches!(
            bad(|o| o.s4_threads = Some(3)),
            BenchError::Options(_)
        ));
        assert!(matches!(
            bad(|o| o.distributions.clear()),
            BenchError::Options(_)
        ));
        // 1 MiB of 16 KiB pages is 64 frames: too few for 64 instances of 16 frames.
        let small = bad(|o| o.pool_size_bytes = 1 << 20);
        assert!(small.to_string().contains("buffer_pool_size"), "{small}");
    }
}
