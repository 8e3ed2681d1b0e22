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
//!
//! # Modules
//! - `driver`: the worker threads of a cell and the windows they are measured in.
//! - `analysis`: rows, latch classes, the S4 tables and their explanation, the summary.
//! - `baseline`: the A/B statistics of the baselines.
//! - `print`: the tables and notes.

mod analysis;
mod baseline;
mod driver;
mod print;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;

use tarn_buffer::{BufferPool, NoLog, PoolConfig};
use tarn_common::limits::{
    BENCH_THREADS_MAX, BUFFER_POOL_INSTANCES_MAX, BUFFER_POOL_INSTANCES_MIN, PAGE_SIZES_BYTES,
};
use tarn_common::rng::Zipf;
use tarn_common::settings::{IoMethod, Settings, buffer_pool_frames_per_instance};
use tarn_common::{FileId, PageId, PageNo};
use tarn_io::DataDir;

use crate::io::open_data_dir;
use crate::load;
use crate::report::{Output, distinct, format_count, format_number};
use crate::workdir::WorkDir;
use crate::{BenchError, Result};

use analysis::ms;
use driver::{Failure, LsnCounter, Window, Workload};

pub use analysis::{
    Baselines, BufferPoolRow, BufferPoolSummary, ByInstances, IO_WAIT_CLASS, LatchClassRow,
    S4Table, explain_shape, latch_classes, summarize,
};
pub use baseline::{AbComparison, AbRound, Sample, b_first};
pub use print::print;

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
    workdir.warn_if_in_memory(output, "misses read memory, not a device");
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
        self.open_pool_on(dir, instances, optimistic_reads)
    }

    /// A fresh pool on the open data directory `dir` (which one process opens once:
    /// two pools that run side by side share it).
    fn open_pool_on(
        &self,
        dir: Arc<DataDir>,
        instances: u32,
        optimistic_reads: bool,
    ) -> Result<BufferPool> {
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
        let dir = open_data_dir(&self.settings, self.method)?;
        let optimistic = self.open_pool_on(dir.clone(), BASELINE_INSTANCES, true)?;
        let shared = self.open_pool_on(dir, BASELINE_INSTANCES, false)?;
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

#[cfg(test)]
mod tests {
    use super::*;

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
