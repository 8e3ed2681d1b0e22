//! `tarn bench scan`: the S1 parallel full scan of TPC-H `lineitem`, cold and warm,
//! against fio's sequential read of the same file.
//!
//! S1 reads a B+tree with T threads at once (each from the leftmost leaf of its own
//! key range, with read-ahead) and decodes rows on those same threads. This bench scans
//! `tpch.lineitem` with [`Table::parallel_scan`] at T = 1, 2, ... (default: up to the
//! core count), decoding all 16 columns and a narrow projection of two numeric columns
//! ([`NARROW_COLUMNS`]), in two modes:
//!
//! - **cold**: the data directory is opened with an `O_DIRECT` I/O path, so the OS
//!   page cache plays no part ([`cold_io_method`]: the `io_method` setting, whose
//!   default `auto` picks io_uring on an `O_DIRECT` file where the kernel allows it;
//!   `buffered` is replaced by `direct`, and a run whose engine ends up buffered fails),
//!   and a fresh [`Storage`], hence an empty buffer pool, is opened for every cold scan:
//!   each cold scan reads every page from the device.
//! - **warm**: one [`Storage`] whose pool holds all of `lineitem` ([`pool_size_for`]):
//!   scanned once to fill the pool, then measured. Each warm row reports the pool's
//!   page reads during the measured scans (expected 0).
//!
//! # Baseline
//! fio reads the `lineitem` clustered data file itself, sequentially, `direct=1`, with
//! `ioengine=io_uring` with as many requests in flight as a scan worker's read-ahead
//! window (`scan_readahead_pages`, [`fio_iodepth`]), once with the page size as
//! block size (Tarn's I/O unit; the summary's ratio uses this one) and once with 1 MiB
//! blocks (what the device gives large requests). fio and the cold scans alternate in
//! rounds, the order swapped each round, so drift of a shared device hits both alike.
//!
//! # Verification
//! Every scan's row count must equal `lineitem`'s, counted once per run by walking the
//! leaf level with a plain cursor (and, when this run loaded the data, equal to what
//! the load wrote); each batch must carry the projected columns; any engine error fails
//! the bench naming the row.
//!
//! # Figures
//! Each cell (mode, projection, T) runs `--rounds` times; the row shows the run with
//! the median time. MB/s is leaves x page size / seconds (10^6 bytes). The read/decode
//! split is the workers' own accounting ([`ParallelScanStats`]): time getting leaves
//! (latching, waiting for reads) and time decoding, as shares of the workers' measured
//! time (read + decode + send to the consumer).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Serialize;

use tarn_btree::{Bound, Direction};
use tarn_catalog::{ParallelScan, ParallelScanStats, Storage, Table};
use tarn_common::limits::{SCAN_BATCH_ROWS, SCAN_THREADS_MAX};
use tarn_common::settings::{IoMethod, Settings};
use tarn_io::os::process_cpu_time;
use tarn_row::limits::BATCH_ROWS_MAX;

use crate::fio::{self, Fio, FioJob, FioResult};
use crate::report::{
    BenchDocument, Output, Table as TextTable, data_dir_fate, format_count, format_number,
    format_ratio, ratio,
};
use crate::stats::lower_median_by;
use crate::tpch::{self, load::DATABASE};
use crate::workdir::WorkDir;
use crate::{BenchError, Result, check_rounds};

/// The scanned table.
pub const TABLE: &str = "lineitem";
/// The narrow projection: two numeric columns (those TPC-H Q1 and Q6 aggregate).
pub const NARROW_COLUMNS: [&str; 2] = ["l_quantity", "l_extendedprice"];

pub const SCALE_FACTOR_DEFAULT: f64 = 1.0;
pub const SCALE_FACTOR_QUICK: f64 = 0.1;
pub const ROUNDS_DEFAULT: u32 = 3;
pub const ROUNDS_QUICK: u32 = 1;
pub const ROUNDS_MAX: u32 = 100;
/// fio's large-block run.
pub const FIO_LARGE_BLOCK_BYTES: u32 = 1 << 20;
/// Seconds of each fio run per round.
pub const FIO_SECONDS_DEFAULT: f64 = 3.0;
pub const FIO_SECONDS_QUICK: f64 = 1.5;
/// The warm pool holds `lineitem`'s data file times this (its inner nodes, other
/// tables' pages touched while opening, and slack for the pool's instances).
pub const POOL_SIZE_PER_FILE_BYTE: f64 = 1.5;
/// A warm row whose measured scans read more than this share of the leaves from disk
/// is flagged: the data was not all cached.
pub const WARM_PAGE_READS_MAX_SHARE: f64 = 0.01;

pub const COLD_NOTE: &str = "cold: an O_DIRECT I/O path (no OS page cache) and a fresh \
     Storage, hence an empty buffer pool, opened for every cold scan, so each cold scan reads \
     every page of lineitem from the device (opening the Storage is not timed)";
pub const WARM_NOTE: &str = "warm: one Storage whose buffer pool holds all of lineitem, scanned \
     once to fill it, then measured; 'page reads' counts the pool's disk reads during the \
     measured scans (0 means fully cached)";

/// A projection of `lineitem`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Projection {
    /// Every column decoded.
    All,
    /// [`NARROW_COLUMNS`] only.
    Narrow,
}

impl Projection {
    pub const ALL: [Projection; 2] = [Projection::All, Projection::Narrow];

    pub fn name(self) -> &'static str {
        match self {
            Projection::All => "all",
            Projection::Narrow => "narrow",
        }
    }
}

/// Cold or warm.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    Cold,
    Warm,
}

impl Mode {
    pub fn name(self) -> &'static str {
        match self {
            Mode::Cold => "cold",
            Mode::Warm => "warm",
        }
    }

    pub fn parse(text: &str) -> Option<Mode> {
        [Mode::Cold, Mode::Warm]
            .into_iter()
            .find(|m| m.name().eq_ignore_ascii_case(text.trim()))
    }
}

/// What `tarn bench scan` was asked to do.
#[derive(Clone, Debug)]
pub struct ScanBenchOptions {
    /// Engine settings (from `--set`); the bench sets `data_dir`, the pool size and,
    /// for the measured scans, `io_method`.
    pub settings: Settings,
    pub quick: bool,
    pub scale_factor: f64,
    /// Worker counts, in the order measured.
    pub threads: Vec<usize>,
    /// Keep and reuse the loaded data here; a temporary directory otherwise.
    pub data_dir: Option<PathBuf>,
    /// Buffer pool size; `None`: [`pool_size_for`] the `lineitem` file.
    pub pool_size_bytes: Option<u64>,
    /// Runs per cell; the median is reported.
    pub rounds: u32,
    /// Run the fio baseline (with the cold scans).
    pub fio: bool,
    pub fio_seconds: f64,
    /// The modes to measure (both by default).
    pub modes: Vec<Mode>,
    /// Rows per batch; `None`: the engine's default (`SCAN_BATCH_ROWS`).
    pub batch_rows: Option<usize>,
}

impl ScanBenchOptions {
    /// The defaults for a full or a quick run.
    pub fn new(settings: Settings, quick: bool) -> ScanBenchOptions {
        ScanBenchOptions {
            settings,
            quick,
            scale_factor: if quick {
                SCALE_FACTOR_QUICK
            } else {
                SCALE_FACTOR_DEFAULT
            },
            threads: default_threads(cores()),
            data_dir: None,
            pool_size_bytes: None,
            rounds: if quick { ROUNDS_QUICK } else { ROUNDS_DEFAULT },
            fio: true,
            fio_seconds: if quick {
                FIO_SECONDS_QUICK
            } else {
                FIO_SECONDS_DEFAULT
            },
            modes: vec![Mode::Cold, Mode::Warm],
            batch_rows: None,
        }
    }

    fn check(&self) -> Result<()> {
        tpch::check_sf_option(self.scale_factor)?;
        if self.threads.is_empty() {
            return Err(BenchError::Options(
                "--threads selects no thread count".into(),
            ));
        }
        if let Some(bad) = self
            .threads
            .iter()
            .find(|&&t| t == 0 || t > SCAN_THREADS_MAX as usize)
        {
            return Err(BenchError::Options(format!(
                "--threads {bad}: each thread count must be from 1 to {SCAN_THREADS_MAX}"
            )));
        }
        check_rounds(self.rounds, ROUNDS_MAX)?;
        if self.modes.is_empty() {
            return Err(BenchError::Options("--modes selects no mode".into()));
        }
        if let Some(rows) = self.batch_rows
            && !(1..=BATCH_ROWS_MAX).contains(&rows)
        {
            return Err(BenchError::Options(format!(
                "--batch-rows must be from 1 to {BATCH_ROWS_MAX}, not {rows}"
            )));
        }
        fio::check_seconds(self.fio_seconds)
    }
}

/// The cores this process may use.
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// 1, 2, ..., `cores`.
pub fn default_threads(cores: usize) -> Vec<usize> {
    (1..=cores.max(1)).collect()
}

/// The buffer pool that holds a data file of `file_bytes` with room to spare, and at
/// least the default pool; rounded up to a MiB.
pub fn pool_size_for(file_bytes: u64) -> u64 {
    let wanted = (file_bytes as f64 * POOL_SIZE_PER_FILE_BYTE).ceil() as u64;
    let wanted = wanted.max(tarn_common::limits::BUFFER_POOL_SIZE_DEFAULT_BYTES);
    wanted.div_ceil(1 << 20) << 20
}

/// The `io_method` the measured scans ask for: the setting, except that `buffered`
/// becomes `direct` (cold scans must bypass the OS page cache). `auto` lets the engine
/// pick (io_uring, else `O_DIRECT`); the path it picked is checked after opening.
pub fn cold_io_method(requested: IoMethod) -> IoMethod {
    match requested {
        IoMethod::Buffered => IoMethod::Direct,
        other => other,
    }
}

/// fio's requests in flight: a scan worker's read-ahead window (at least 1).
pub fn fio_iodepth(readahead_pages: u32) -> u32 {
    readahead_pages.max(1)
}

/// One scan as run.
#[derive(Clone, Debug)]
pub struct ScanRun {
    pub rows: u64,
    pub elapsed: Duration,
    pub stats: ParallelScanStats,
    /// The pool's disk reads during the scan.
    pub page_reads: u64,
    /// The process's CPU time (all threads, user and system) during the scan.
    pub cpu: Duration,
}

/// One measured row (mode, projection, threads), as printed and in the JSON `rows`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ScanRow {
    pub mode: Mode,
    pub projection: Projection,
    /// Columns decoded per row.
    pub columns: usize,
    pub threads: usize,
    /// Rows delivered (verified equal to the table's count).
    pub rows: u64,
    /// The median run's time, and every run's.
    pub seconds: f64,
    pub round_seconds: Vec<f64>,
    pub rows_per_s: f64,
    /// Rows/s of the fastest run: on a shared machine, the closest to what the scan
    /// does with its cores to itself.
    pub best_rows_per_s: f64,
    pub leaves: u64,
    /// Leaves x page size / seconds, in 10^6 bytes.
    pub mb_per_s: f64,
    /// Shares of the workers' measured time (read + decode + send).
    pub read_pct: f64,
    pub decode_pct: f64,
    pub send_pct: f64,
    /// The workers' measured time / (threads x seconds).
    pub worker_busy_pct: f64,
    /// The process's CPU time during the median run (all threads: workers, consumer,
    /// I/O threads) in percent of one core: about 100 x T when the scan got its cores.
    pub cpu_pct: f64,
    /// Leaf reads the workers started ahead of their walk (median run).
    pub prefetched: u64,
    /// The pool's disk reads during the median run.
    pub page_reads: u64,
    /// Cold rows: MB/s / fio's sequential MB/s at page-size blocks.
    pub vs_device_seq: Option<f64>,
}

impl ScanRow {
    /// The row for the runs of one cell (at least one), from the median run.
    pub fn new(
        mode: Mode,
        projection: Projection,
        columns: usize,
        threads: usize,
        runs: &[ScanRun],
        page_size_bytes: u32,
        fio_seq_mb_s: Option<f64>,
    ) -> ScanRow {
        let median = lower_median_by(runs, |r| r.elapsed.as_secs_f64()).expect("at least one run");
        let seconds = median.elapsed.as_secs_f64();
        let per_s = |n: f64| if seconds > 0.0 { n / seconds } else { 0.0 };
        let stats = &median.stats;
        let worker_ns = (stats.read_ns + stats.decode_ns + stats.send_ns) as f64;
        let pct = |ns: u64| {
            if worker_ns > 0.0 {
                ns as f64 * 100.0 / worker_ns
            } else {
                0.0
            }
        };
        let mb_per_s = per_s(stats.leaves as f64 * f64::from(page_size_bytes) / 1e6);
        let busy = if seconds > 0.0 && threads > 0 {
            worker_ns / 1e9 / (seconds * threads as f64) * 100.0
        } else {
            0.0
        };
        ScanRow {
            mode,
            projection,
            columns,
            threads,
            rows: median.rows,
            seconds,
            round_seconds: runs.iter().map(|r| r.elapsed.as_secs_f64()).collect(),
            rows_per_s: per_s(median.rows as f64),
            best_rows_per_s: runs
                .iter()
                .map(|r| r.rows as f64 / r.elapsed.as_secs_f64().max(1e-9))
                .fold(0.0, f64::max),
            leaves: stats.leaves,
            mb_per_s,
            read_pct: pct(stats.read_ns),
            decode_pct: pct(stats.decode_ns),
            send_pct: pct(stats.send_ns),
            worker_busy_pct: busy,
            cpu_pct: per_s(median.cpu.as_secs_f64() * 100.0),
            prefetched: stats.prefetched,
            page_reads: median.page_reads,
            vs_device_seq: match mode {
                Mode::Cold => ratio(Some(mb_per_s), fio_seq_mb_s),
                Mode::Warm => None,
            },
        }
    }

    fn is(&self, mode: Mode, projection: Projection, threads: usize) -> bool {
        self.mode == mode && self.projection == projection && self.threads == threads
    }
}

/// fio's sequential reads of the `lineitem` file, merged over the rounds.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FioSeq {
    pub block_size_bytes: u32,
    pub iodepth: u32,
    pub iops: f64,
    pub mb_per_s: f64,
    pub p50_us: Option<f64>,
    pub p99_us: Option<f64>,
    pub round_mb_per_s: Vec<f64>,
}

impl FioSeq {
    fn new(block_size_bytes: u32, iodepth: u32, rounds: &[FioResult]) -> Option<FioSeq> {
        let merged = FioResult::merge_all(rounds)?;
        let mb = |r: &FioResult| r.iops * f64::from(block_size_bytes) / 1e6;
        Some(FioSeq {
            block_size_bytes,
            iodepth,
            iops: merged.iops,
            mb_per_s: mb(&merged),
            p50_us: merged.p50_us,
            p99_us: merged.p99_us,
            round_mb_per_s: rounds.iter().map(mb).collect(),
        })
    }
}

/// The ratios the targets name; `null` when a needed row (or fio) did not run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ScanSummary {
    /// Best cold all-columns MB/s over T / fio's sequential MB/s at page-size blocks
    /// (target >= 0.8).
    pub cold_scan_vs_device_seq: Option<f64>,
    /// The same for the narrow projection.
    pub cold_narrow_vs_device_seq: Option<f64>,
    /// Best cold all-columns MB/s / fio's sequential MB/s at 1 MiB blocks.
    pub cold_scan_vs_device_seq_1m: Option<f64>,
    /// Warm all-columns rows/s at T=2 / at T=1 (target >= 1.8); `null` without both.
    pub warm_speedup_2_threads: Option<f64>,
    /// The same from each cell's fastest run (less sensitive to other load).
    pub warm_speedup_2_threads_best: Option<f64>,
    /// The process's CPU use during the warm all-columns T=2 median run, in % of one
    /// core (about 200 when the two workers had their cores).
    pub warm_cpu_pct_2_threads: Option<f64>,
    pub warm_narrow_speedup_2_threads: Option<f64>,
    pub cold_speedup_2_threads: Option<f64>,
    pub cold_narrow_speedup_2_threads: Option<f64>,
    /// Warm all-columns rows/s at the most threads measured / at T=1.
    pub warm_speedup_max_threads: Option<f64>,
    pub max_threads: usize,
    pub fio_seq_mb_s: Option<f64>,
    pub fio_seq_1m_mb_s: Option<f64>,
    pub best_cold_mb_s: Option<f64>,
    pub best_cold_rows_per_s: Option<f64>,
    pub best_warm_rows_per_s: Option<f64>,
    pub best_warm_mb_s: Option<f64>,
    /// The most disk reads any warm row's median scan did (expected 0).
    pub warm_page_reads_max: Option<u64>,
    pub lineitem_rows: u64,
    /// Scans run and verified (every round, the pool-filling scan included).
    pub scans_verified: u64,
}

/// Computes the summary from the rows and fio's figures.
pub fn summarize(
    rows: &[ScanRow],
    fio_seq: Option<&FioSeq>,
    fio_seq_1m: Option<&FioSeq>,
    lineitem_rows: u64,
    scans_verified: u64,
) -> ScanSummary {
    let find = |mode, projection, threads| rows.iter().find(|r| r.is(mode, projection, threads));
    let speedup = |mode, projection, threads| {
        ratio(
            find(mode, projection, threads).map(|r| r.rows_per_s),
            find(mode, projection, 1).map(|r| r.rows_per_s),
        )
    };
    let best = |mode: Mode, projection: Option<Projection>, value: fn(&ScanRow) -> f64| {
        rows.iter()
            .filter(|r| r.mode == mode && projection.is_none_or(|p| r.projection == p))
            .map(value)
            .reduce(f64::max)
    };
    let fio_mb = fio_seq.map(|f| f.mb_per_s);
    let best_cold_all = best(Mode::Cold, Some(Projection::All), |r| r.mb_per_s);
    let best_cold_narrow = best(Mode::Cold, Some(Projection::Narrow), |r| r.mb_per_s);
    let max_threads = rows.iter().map(|r| r.threads).max().unwrap_or(0);
    ScanSummary {
        cold_scan_vs_device_seq: ratio(best_cold_all, fio_mb),
        cold_narrow_vs_device_seq: ratio(best_cold_narrow, fio_mb),
        cold_scan_vs_device_seq_1m: ratio(best_cold_all, fio_seq_1m.map(|f| f.mb_per_s)),
        warm_speedup_2_threads: speedup(Mode::Warm, Projection::All, 2),
        warm_speedup_2_threads_best: ratio(
            find(Mode::Warm, Projection::All, 2).map(|r| r.best_rows_per_s),
            find(Mode::Warm, Projection::All, 1).map(|r| r.best_rows_per_s),
        ),
        warm_cpu_pct_2_threads: find(Mode::Warm, Projection::All, 2).map(|r| r.cpu_pct),
        warm_narrow_speedup_2_threads: speedup(Mode::Warm, Projection::Narrow, 2),
        cold_speedup_2_threads: speedup(Mode::Cold, Projection::All, 2),
        cold_narrow_speedup_2_threads: speedup(Mode::Cold, Projection::Narrow, 2),
        warm_speedup_max_threads: if max_threads > 1 {
            speedup(Mode::Warm, Projection::All, max_threads)
        } else {
            None
        },
        max_threads,
        fio_seq_mb_s: fio_mb,
        fio_seq_1m_mb_s: fio_seq_1m.map(|f| f.mb_per_s),
        best_cold_mb_s: best_cold_all,
        best_cold_rows_per_s: best(Mode::Cold, Some(Projection::All), |r| r.rows_per_s),
        best_warm_rows_per_s: best(Mode::Warm, Some(Projection::All), |r| r.rows_per_s),
        best_warm_mb_s: best(Mode::Warm, Some(Projection::All), |r| r.mb_per_s),
        warm_page_reads_max: rows
            .iter()
            .filter(|r| r.mode == Mode::Warm)
            .map(|r| r.page_reads)
            .max(),
        lineitem_rows,
        scans_verified,
    }
}

/// A projection's name and columns, for the JSON `config`.
#[derive(Clone, Debug, Serialize)]
pub struct ProjectionConfig {
    pub projection: Projection,
    pub columns: Vec<String>,
}

/// What the run measured against and under which conditions (the JSON `config`).
#[derive(Clone, Debug, Serialize)]
pub struct ScanBenchConfig {
    pub quick: bool,
    pub scale_factor: f64,
    pub table: String,
    pub lineitem_rows: u64,
    pub lineitem_file: String,
    pub lineitem_file_bytes: u64,
    pub page_size_bytes: u32,
    pub pool_size_bytes: u64,
    /// The `O_DIRECT` path of the measured scans, as the engine chose it.
    pub io_method: IoMethod,
    pub readahead_pages: u32,
    pub io_threads: u32,
    pub batch_rows: usize,
    pub modes: Vec<Mode>,
    pub threads: Vec<usize>,
    pub cores: usize,
    pub rounds: u32,
    pub projections: Vec<ProjectionConfig>,
    pub data_dir: String,
    /// False when the directory was temporary and has been removed.
    pub data_dir_kept: bool,
    pub loaded: String,
    pub fio: bool,
    pub fio_version: Option<String>,
    pub fio_iodepth: u32,
    pub fio_seconds_per_round: f64,
    pub fio_seq: Option<FioSeq>,
    pub fio_seq_1m: Option<FioSeq>,
    pub baseline: String,
    pub cold: &'static str,
    pub warm: &'static str,
}

/// A finished run.
pub struct ScanReport {
    pub config: ScanBenchConfig,
    pub rows: Vec<ScanRow>,
    pub summary: ScanSummary,
}

/// Runs the bench and prints its tables and notes (and, with `--json`, the document).
pub fn run_and_print(options: &ScanBenchOptions, output: &Output) -> Result<ScanReport> {
    let report = run(options, output)?;
    print(&report, output)?;
    Ok(report)
}

/// What the data directory holds, found after loading.
struct Loaded {
    note: String,
    /// Rows the load wrote to `lineitem`, when this run loaded.
    lineitem_rows: Option<u64>,
    file: PathBuf,
    file_bytes: u64,
    page_size_bytes: u32,
    narrow: Vec<usize>,
    column_names: Vec<String>,
}

/// Runs the bench, printing progress lines only.
pub fn run(options: &ScanBenchOptions, output: &Output) -> Result<ScanReport> {
    options.check()?;
    let measure_cold = options.modes.contains(&Mode::Cold);
    let measure_warm = options.modes.contains(&Mode::Warm);
    let fio = Fio::find_or_install_if(options.fio && measure_cold, output)?;
    let workdir = WorkDir::open(options.data_dir.as_deref(), ".tarn-bench-scan-")?;
    if workdir.is_in_memory() {
        return Err(BenchError::Options(format!(
            "'{}' is in memory (tmpfs or ramfs): cold scans need O_DIRECT on a real disk; \
             pass --data-dir on a disk",
            workdir.path().display()
        )));
    }
    let mut base = options.settings.clone();
    base.data_dir = workdir.path().to_path_buf();
    let loaded = load_lineitem(&base, options, output)?;

    let mut settings = base.clone();
    settings.io_method = cold_io_method(options.settings.io_method);
    if options.settings.io_method == IoMethod::Buffered {
        output.progress(
            "note: io_method=buffered is replaced by direct: cold scans must bypass the OS cache",
        );
    }
    settings.buffer_pool_size_bytes = options
        .pool_size_bytes
        .unwrap_or_else(|| pool_size_for(loaded.file_bytes));
    if let Some(pool) = options.pool_size_bytes
        && pool < loaded.file_bytes
    {
        output.progress(&format!(
            "warning: --pool-size {} MiB is smaller than lineitem's file ({} MiB): warm scans \
             will read from disk",
            pool >> 20,
            loaded.file_bytes >> 20
        ));
    }
    let projections: Vec<(Projection, Option<Vec<usize>>, usize)> = vec![
        (Projection::All, None, loaded.column_names.len()),
        (
            Projection::Narrow,
            Some(loaded.narrow.clone()),
            loaded.narrow.len(),
        ),
    ];
    let cells_per_mode = projections.len() * options.threads.len();
    let cell = |p: usize, t: usize| p * options.threads.len() + t;
    let mut runner = Runner {
        output,
        page_size_bytes: loaded.page_size_bytes,
        batch_rows: options.batch_rows,
        scans_total: 1 + options.modes.len() * cells_per_mode * options.rounds as usize,
        scans_done: 0,
        expected_rows: 0,
    };

    // Fill a pool, count the rows apart from the scan (the reference every scan is
    // checked against), then measure the warm cells.
    let mut warm_runs: Vec<Vec<ScanRun>> = vec![Vec::new(); cells_per_mode];
    let io_method = {
        let storage = Storage::open(&settings)?;
        let io_method = storage.datadir().engine().method();
        if io_method == IoMethod::Buffered {
            return Err(BenchError::Options(format!(
                "the engine chose buffered I/O in '{}' (O_DIRECT is not available there): \
                 cold scans would read the OS page cache; pass --data-dir on a file system \
                 with O_DIRECT",
                workdir.path().display()
            )));
        }
        let table = storage.table(DATABASE, TABLE)?;
        output.progress(&format!(
            "filling a {} MiB buffer pool with lineitem ({} MiB; io_method={io_method}) ...",
            settings.buffer_pool_size_bytes >> 20,
            loaded.file_bytes >> 20
        ));
        let max_threads = options.threads.iter().copied().max().unwrap_or(1);
        let fill = runner.scan(&storage, &table, None, max_threads, "warm-up fill", None)?;
        let counted = count_rows(&table)?;
        if fill.rows != counted {
            return Err(BenchError::WrongData {
                row: "warm-up fill".into(),
                detail: format!(
                    "the parallel scan delivered {} rows, a cursor over the leaves counts {counted}",
                    fill.rows
                ),
            });
        }
        if let Some(loaded_rows) = loaded.lineitem_rows
            && loaded_rows != counted
        {
            return Err(BenchError::WrongData {
                row: "warm-up fill".into(),
                detail: format!("the load wrote {loaded_rows} rows, the table holds {counted}"),
            });
        }
        runner.expected_rows = counted;
        output.progress(&format!(
            "lineitem: {} rows (counted by a cursor); the fill scan took {:.2} s and read {} pages",
            format_count(Some(counted as f64)),
            fill.elapsed.as_secs_f64(),
            format_count(Some(fill.page_reads as f64))
        ));
        for round in 0..options.rounds {
            if !measure_warm {
                break;
            }
            for (p, (projection, columns, _)) in projections.iter().enumerate() {
                for (t, &threads) in options.threads.iter().enumerate() {
                    let label = cell_label(Mode::Warm, *projection, threads, round, options.rounds);
                    let run = runner.scan(
                        &storage,
                        &table,
                        columns.clone(),
                        threads,
                        &label,
                        Some(counted),
                    )?;
                    warm_runs[cell(p, t)].push(run);
                }
            }
        }
        io_method
    };

    // Cold, alternating with fio.
    let mut cold_runs: Vec<Vec<ScanRun>> = vec![Vec::new(); cells_per_mode];
    let mut fio_page: Vec<FioResult> = Vec::new();
    let mut fio_large: Vec<FioResult> = Vec::new();
    let iodepth = fio_iodepth(settings.scan_readahead_pages);
    let fio_jobs = fio_jobs(
        &loaded.file,
        loaded.file_bytes,
        loaded.page_size_bytes,
        options.fio_seconds,
        iodepth,
    );
    for round in 0..options.rounds {
        if !measure_cold {
            break;
        }
        // fio first in even rounds, Tarn first in odd ones.
        for fio_turn in [round % 2 == 0, round % 2 == 1] {
            if fio_turn {
                if let Some(fio) = &fio {
                    for (block, job) in &fio_jobs {
                        let result = fio.run(job)?;
                        output.progress(&format!(
                            "fio seq read bs={} iodepth={iodepth} (round {}/{}): {} MB/s",
                            block_label(*block),
                            round + 1,
                            options.rounds,
                            format_number(Some(result.iops * f64::from(*block) / 1e6), 1)
                        ));
                        if *block == loaded.page_size_bytes {
                            fio_page.push(result);
                        } else {
                            fio_large.push(result);
                        }
                    }
                }
                continue;
            }
            for (p, (projection, columns, _)) in projections.iter().enumerate() {
                for (t, &threads) in options.threads.iter().enumerate() {
                    let label = cell_label(Mode::Cold, *projection, threads, round, options.rounds);
                    // A fresh Storage: an empty pool; O_DIRECT: no OS cache.
                    let storage = Storage::open(&settings)?;
                    let table = storage.table(DATABASE, TABLE)?;
                    let expected = runner.expected_rows;
                    let run = runner.scan(
                        &storage,
                        &table,
                        columns.clone(),
                        threads,
                        &label,
                        Some(expected),
                    )?;
                    cold_runs[cell(p, t)].push(run);
                }
            }
        }
    }

    let fio_seq = FioSeq::new(loaded.page_size_bytes, iodepth, &fio_page);
    let fio_seq_1m = FioSeq::new(FIO_LARGE_BLOCK_BYTES, iodepth, &fio_large);
    let fio_mb = fio_seq.as_ref().map(|f| f.mb_per_s);
    let mut rows = Vec::with_capacity(options.modes.len() * cells_per_mode);
    for (mode, runs) in [(Mode::Cold, &cold_runs), (Mode::Warm, &warm_runs)] {
        if !options.modes.contains(&mode) {
            continue;
        }
        for (p, (projection, _, columns)) in projections.iter().enumerate() {
            for (t, &threads) in options.threads.iter().enumerate() {
                rows.push(ScanRow::new(
                    mode,
                    *projection,
                    *columns,
                    threads,
                    &runs[cell(p, t)],
                    loaded.page_size_bytes,
                    fio_mb,
                ));
            }
        }
    }
    let summary = summarize(
        &rows,
        fio_seq.as_ref(),
        fio_seq_1m.as_ref(),
        runner.expected_rows,
        runner.scans_done,
    );
    let config = ScanBenchConfig {
        quick: options.quick,
        scale_factor: options.scale_factor,
        table: format!("{DATABASE}.{TABLE}"),
        lineitem_rows: runner.expected_rows,
        lineitem_file: loaded.file.display().to_string(),
        lineitem_file_bytes: loaded.file_bytes,
        page_size_bytes: loaded.page_size_bytes,
        pool_size_bytes: settings.buffer_pool_size_bytes,
        io_method,
        readahead_pages: settings.scan_readahead_pages,
        io_threads: settings.io_threads,
        batch_rows: options.batch_rows.unwrap_or(SCAN_BATCH_ROWS),
        modes: options.modes.clone(),
        threads: options.threads.clone(),
        cores: cores(),
        rounds: options.rounds,
        projections: projections
            .iter()
            .map(|(projection, columns, _)| ProjectionConfig {
                projection: *projection,
                columns: match columns {
                    None => loaded.column_names.clone(),
                    Some(c) => c.iter().map(|&i| loaded.column_names[i].clone()).collect(),
                },
            })
            .collect(),
        data_dir: workdir.path().display().to_string(),
        data_dir_kept: !workdir.is_temporary(),
        loaded: loaded.note.clone(),
        fio: fio.is_some(),
        fio_version: fio.as_ref().map(|f| f.version().to_string()),
        fio_iodepth: iodepth,
        fio_seconds_per_round: options.fio_seconds,
        fio_seq,
        fio_seq_1m,
        baseline: baseline_note(
            fio.is_some(),
            loaded.page_size_bytes,
            iodepth,
            options.fio_seconds,
        ),
        cold: COLD_NOTE,
        warm: WARM_NOTE,
    };
    drop(workdir);
    Ok(ScanReport {
        config,
        rows,
        summary,
    })
}

fn cell_label(
    mode: Mode,
    projection: Projection,
    threads: usize,
    round: u32,
    rounds: u32,
) -> String {
    let mut label = format!("{} {} T={threads}", mode.name(), projection.name());
    if rounds > 1 {
        label.push_str(&format!(" (round {}/{rounds})", round + 1));
    }
    label
}

fn block_label(bytes: u32) -> String {
    if bytes >= 1 << 20 && bytes.is_multiple_of(1 << 20) {
        format!("{}M", bytes >> 20)
    } else {
        format!("{}K", bytes >> 10)
    }
}

/// Loads TPC-H at the asked scale factor unless the directory already holds it, and
/// finds `lineitem`'s file and columns.
fn load_lineitem(
    settings: &Settings,
    options: &ScanBenchOptions,
    output: &Output,
) -> Result<Loaded> {
    let storage = Storage::open(settings)?;
    let note = tpch::load::ensure_loaded(&storage, options.scale_factor, output)?;
    let table = storage.table(DATABASE, TABLE)?;
    let (file, file_bytes) = tpch::load::tree_file(&storage, table.clustered().file_id())?;
    let column_names: Vec<String> = table.def().columns.iter().map(|c| c.name.clone()).collect();
    let narrow = NARROW_COLUMNS
        .iter()
        .map(|name| {
            column_names
                .iter()
                .position(|c| c.eq_ignore_ascii_case(name))
                .ok_or_else(|| BenchError::Options(format!("lineitem has no column {name}")))
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(Loaded {
        lineitem_rows: note.rows_loaded(TABLE),
        note: note.text,
        file,
        file_bytes,
        page_size_bytes: storage.pool().page_size_bytes() as u32,
        narrow,
        column_names,
    })
}

/// The table's rows, counted by a plain cursor over the clustered index's leaves: a
/// code path apart from the parallel scan.
fn count_rows(table: &Table) -> Result<u64> {
    let mut cursor =
        table
            .clustered()
            .range(Bound::Unbounded, Bound::Unbounded, Direction::Forward);
    let mut rows = 0u64;
    while cursor.next_entry()?.is_some() {
        rows += 1;
    }
    Ok(rows)
}

/// The fio jobs: sequential reads of the file at the page size and at 1 MiB.
fn fio_jobs(
    file: &Path,
    file_bytes: u64,
    page_size_bytes: u32,
    seconds: f64,
    iodepth: u32,
) -> Vec<(u32, FioJob)> {
    [page_size_bytes, FIO_LARGE_BLOCK_BYTES]
        .into_iter()
        .filter_map(|block| {
            let size = file_bytes / u64::from(block) * u64::from(block);
            (size > 0).then(|| {
                let job = FioJob::uring_read(file, "read", size, block, iodepth, seconds);
                (block, job)
            })
        })
        .collect()
}

/// Runs scans and verifies them.
struct Runner<'a> {
    output: &'a Output,
    page_size_bytes: u32,
    batch_rows: Option<usize>,
    scans_total: usize,
    scans_done: u64,
    expected_rows: u64,
}

impl Runner<'_> {
    /// One parallel scan of `table`, timed from its start to its workers' end, with
    /// every batch checked; `expected` rows, if given, must be delivered.
    fn scan(
        &mut self,
        storage: &Storage,
        table: &Arc<Table>,
        projection: Option<Vec<usize>>,
        threads: usize,
        label: &str,
        expected: Option<u64>,
    ) -> Result<ScanRun> {
        let width = projection
            .as_ref()
            .map_or(table.def().columns.len(), Vec::len);
        let pool = storage.pool();
        let reads_before = pool.stats().page_reads;
        let cpu_before = process_cpu_time();
        let started = Instant::now();
        let mut stream = table.parallel_scan(ParallelScan {
            threads: Some(threads),
            projection,
            batch_rows: self.batch_rows,
            ..Default::default()
        })?;
        let mut rows = 0u64;
        let mut errors = 0u64;
        let mut first_error = None;
        let mut wrong_width = None;
        for batch in stream.by_ref() {
            match batch {
                Ok(batch) => {
                    if batch.projection().len() != width {
                        wrong_width = Some(batch.projection().len());
                    }
                    rows += batch.len() as u64;
                }
                Err(error) => {
                    errors += 1;
                    first_error.get_or_insert(error);
                }
            }
        }
        let stats = stream.finish();
        let elapsed = started.elapsed();
        let cpu = process_cpu_time().saturating_sub(cpu_before);
        let page_reads = pool.stats().page_reads - reads_before;
        self.scans_done += 1;
        if let Some(first) = first_error {
            return Err(BenchError::Row {
                row: label.to_string(),
                errors,
                first,
            });
        }
        let wrong = |detail: String| BenchError::WrongData {
            row: label.to_string(),
            detail,
        };
        if let Some(got) = wrong_width {
            return Err(wrong(format!("a batch has {got} columns, not {width}")));
        }
        if rows != stats.rows {
            return Err(wrong(format!(
                "{rows} rows arrived but the workers decoded {}",
                stats.rows
            )));
        }
        if let Some(expected) = expected
            && rows != expected
        {
            return Err(wrong(format!("{rows} rows, but lineitem has {expected}")));
        }
        let run = ScanRun {
            rows,
            elapsed,
            stats,
            page_reads,
            cpu,
        };
        self.progress(label, &run);
        Ok(run)
    }

    fn progress(&self, label: &str, run: &ScanRun) {
        let seconds = run.elapsed.as_secs_f64();
        let s = &run.stats;
        let worker = (s.read_ns + s.decode_ns + s.send_ns).max(1) as f64;
        self.output.progress(&format!(
            "[{}/{}] {label}: {} rows in {:.2} s, {} rows/s, {} MB/s, read {:.0}% decode {:.0}% \
             send {:.0}%, CPU {:.0}%, {} page reads",
            self.scans_done,
            self.scans_total,
            format_count(Some(run.rows as f64)),
            seconds,
            format_count(Some(run.rows as f64 / seconds.max(1e-9))),
            format_number(
                Some(s.leaves as f64 * f64::from(self.page_size_bytes) / 1e6 / seconds.max(1e-9)),
                1
            ),
            s.read_ns as f64 * 100.0 / worker,
            s.decode_ns as f64 * 100.0 / worker,
            s.send_ns as f64 * 100.0 / worker,
            run.cpu.as_secs_f64() * 100.0 / seconds.max(1e-9),
            format_count(Some(run.page_reads as f64)),
        ));
    }
}

fn baseline_note(fio: bool, page_size_bytes: u32, iodepth: u32, seconds: f64) -> String {
    if fio {
        format!(
            "baseline: fio sequential read of lineitem's data file itself, direct=1, \
             ioengine=io_uring, iodepth={iodepth} (a scan worker's read-ahead window), at \
             bs={} (the page size; the ratio \
             'vs fio' uses this) and at bs=1M, {seconds:.1} s each per round, alternating with \
             the cold scans in rounds (order swapped each round); MB/s is 10^6 bytes/s",
            block_label(page_size_bytes)
        )
    } else {
        "baseline: none in this run (--no-fio): the cold/device ratios are null".into()
    }
}

/// Prints the notes, the rows table, the baseline and the summary, and the JSON
/// document in `--json` mode.
pub fn print(report: &ScanReport, output: &Output) -> Result<()> {
    let config = &report.config;
    output.note(&format!(
        "\ntarn bench scan (S1): parallel full scan of {} at SF {}: {} rows, data file {} MiB \
         ({} pages of {} bytes), data in '{}'{}",
        config.table,
        config.scale_factor,
        format_count(Some(config.lineitem_rows as f64)),
        config.lineitem_file_bytes >> 20,
        format_count(Some(
            (config.lineitem_file_bytes / u64::from(config.page_size_bytes)) as f64
        )),
        config.page_size_bytes,
        config.data_dir,
        data_dir_fate(config.data_dir_kept)
    ));
    output.note(&format!("- {}", config.loaded));
    output.note(&format!(
        "- {}; io_method={} for all measured scans",
        config.cold, config.io_method
    ));
    output.note(&format!(
        "- {}; buffer pool {} MiB",
        config.warm,
        config.pool_size_bytes >> 20
    ));
    output.note(&format!("- {}", config.baseline));
    output.note(&format!(
        "- projections: all = {} columns; narrow = {}. Each cell runs {} time(s); the table \
         shows the median run. Read/decode/send are shares of the workers' measured time \
         (getting leaves incl. waiting for reads / decoding into batches / blocked handing \
         batches over); busy = that time / (T x seconds); CPU = the process's CPU time (all \
         threads) / seconds, in % of one core (about 100 x T when the scan got its cores; \
         other load on the machine shows here). Every scan's row count is checked \
         against the table's. Read-ahead {} leaves per worker, batches of {} rows.",
        config.projections.first().map_or(0, |p| p.columns.len()),
        config
            .projections
            .get(1)
            .map_or(String::new(), |p| p.columns.join(", ")),
        config.rounds,
        config.readahead_pages,
        config.batch_rows
    ));
    output.table(&rows_table(&report.rows));
    if let Some(table) = fio_table(config) {
        output.table(&table);
    }
    output.table(&summary_table(&report.summary));
    if let Some(max) = report.summary.warm_page_reads_max {
        let leaves = report
            .rows
            .iter()
            .find(|r| r.mode == Mode::Warm)
            .map_or(0, |r| r.leaves);
        if max as f64 > leaves as f64 * WARM_PAGE_READS_MAX_SHARE {
            output.note(&format!(
                "warning: a warm scan read {max} pages from disk (of {leaves} leaves): the pool \
                 did not hold lineitem; raise --pool-size"
            ));
        }
    }
    output.json(&BenchDocument::new(
        "scan",
        config,
        &report.rows,
        &report.summary,
    ))
}

fn rows_table(rows: &[ScanRow]) -> TextTable {
    let mut table = TextTable::new(
        "Parallel full scan of lineitem (S1)",
        &[
            "mode",
            "projection",
            "T",
            "rows",
            "seconds",
            "rows/s",
            "MB/s",
            "read %",
            "decode %",
            "send %",
            "busy %",
            "CPU %",
            "page reads",
            "vs fio seq",
        ],
    );
    for row in rows {
        table.add_row(vec![
            row.mode.name().into(),
            row.projection.name().into(),
            row.threads.to_string(),
            format_count(Some(row.rows as f64)),
            format_number(Some(row.seconds), 3),
            format_count(Some(row.rows_per_s)),
            format_number(Some(row.mb_per_s), 1),
            format_number(Some(row.read_pct), 1),
            format_number(Some(row.decode_pct), 1),
            format_number(Some(row.send_pct), 1),
            format_number(Some(row.worker_busy_pct), 0),
            format_number(Some(row.cpu_pct), 0),
            format_count(Some(row.page_reads as f64)),
            format_ratio(row.vs_device_seq),
        ]);
    }
    table
}

fn fio_table(config: &ScanBenchConfig) -> Option<TextTable> {
    let runs: Vec<&FioSeq> = config
        .fio_seq
        .iter()
        .chain(config.fio_seq_1m.iter())
        .collect();
    if runs.is_empty() {
        return None;
    }
    let mut table = TextTable::new(
        "Baseline: fio sequential read of lineitem's file (direct=1, io_uring)",
        &[
            "bs",
            "iodepth",
            "IOPS",
            "MB/s",
            "p50 us",
            "p99 us",
            "MB/s per round",
        ],
    );
    for f in runs {
        table.add_row(vec![
            block_label(f.block_size_bytes),
            f.iodepth.to_string(),
            format_count(Some(f.iops)),
            format_number(Some(f.mb_per_s), 1),
            format_number(f.p50_us, 1),
            format_number(f.p99_us, 1),
            f.round_mb_per_s
                .iter()
                .map(|v| format!("{v:.0}"))
                .collect::<Vec<_>>()
                .join(" "),
        ]);
    }
    Some(table)
}

fn summary_table(summary: &ScanSummary) -> TextTable {
    let mut table = TextTable::new("Summary (S1 targets)", &["figure", "value", "target"]);
    let rows: [(&str, String, &str); 11] = [
        (
            "cold all columns, best MB/s / fio seq MB/s (page-size bs)",
            format_ratio(summary.cold_scan_vs_device_seq),
            ">= 0.80x",
        ),
        (
            "cold narrow, best MB/s / fio seq MB/s (page-size bs)",
            format_ratio(summary.cold_narrow_vs_device_seq),
            "-",
        ),
        (
            "cold all columns, best MB/s / fio seq MB/s (1M bs)",
            format_ratio(summary.cold_scan_vs_device_seq_1m),
            "-",
        ),
        (
            "warm all columns rows/s: T=2 / T=1",
            format_ratio(summary.warm_speedup_2_threads),
            ">= 1.80x",
        ),
        (
            "warm all columns rows/s: T=2 / T=1, fastest runs",
            format_ratio(summary.warm_speedup_2_threads_best),
            "-",
        ),
        (
            "warm all columns T=2: process CPU (% of one core)",
            format_number(summary.warm_cpu_pct_2_threads, 0),
            "~200 (else the machine is busy)",
        ),
        (
            "warm narrow rows/s: T=2 / T=1",
            format_ratio(summary.warm_narrow_speedup_2_threads),
            "-",
        ),
        (
            "cold all columns rows/s: T=2 / T=1",
            format_ratio(summary.cold_speedup_2_threads),
            "-",
        ),
        (
            "fio seq MB/s (page-size bs / 1M bs)",
            format!(
                "{} / {}",
                format_number(summary.fio_seq_mb_s, 1),
                format_number(summary.fio_seq_1m_mb_s, 1)
            ),
            "-",
        ),
        (
            "best cold MB/s / best warm rows/s (all columns)",
            format!(
                "{} / {}",
                format_number(summary.best_cold_mb_s, 1),
                format_count(summary.best_warm_rows_per_s)
            ),
            "-",
        ),
        (
            "warm scans: most page reads in a measured scan",
            summary
                .warm_page_reads_max
                .map_or("-".into(), |n| format_count(Some(n as f64))),
            "0",
        ),
    ];
    for (figure, value, target) in rows {
        table.add_row(vec![figure.into(), value, target.into()]);
    }
    table
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(rows: u64, seconds: f64, leaves: u64, read_ns: u64, decode_ns: u64) -> ScanRun {
        ScanRun {
            rows,
            elapsed: Duration::from_secs_f64(seconds),
            stats: ParallelScanStats {
                threads: 2,
                leaves,
                rows,
                rows_scanned: rows,
                read_ns,
                decode_ns,
                ..Default::default()
            },
            page_reads: 0,
            cpu: Duration::from_secs_f64(seconds),
        }
    }

    #[test]
    fn a_row_takes_the_median_run_and_splits_worker_time() {
        let runs = [
            run(1000, 2.0, 100, 1, 1),
            run(1000, 1.0, 100, 25, 75),
            run(1000, 4.0, 100, 1, 1),
        ];
        let row = ScanRow::new(
            Mode::Cold,
            Projection::All,
            16,
            2,
            &runs,
            16384,
            Some(3.2768),
        );
        assert_eq!(row.seconds, 2.0);
        assert_eq!(row.round_seconds, vec![2.0, 1.0, 4.0]);
        assert_eq!(row.rows_per_s, 500.0);
        assert_eq!(row.best_rows_per_s, 1000.0);
        assert!((row.mb_per_s - 100.0 * 16384.0 / 1e6 / 2.0).abs() < 1e-9);
        assert_eq!((row.read_pct, row.decode_pct), (50.0, 50.0));
        assert!((row.vs_device_seq.unwrap() - 0.25).abs() < 1e-9);
        let warm = ScanRow::new(Mode::Warm, Projection::All, 16, 2, &runs, 16384, Some(1.0));
        assert_eq!(warm.vs_device_seq, None);
    }

    #[test]
    fn the_summary_names_the_targets_and_is_null_without_their_rows() {
        let row = |mode, projection, threads, seconds: f64| {
            ScanRow::new(
                mode,
                projection,
                16,
                threads,
                &[run(1_000_000, seconds, 1000, 1, 1)],
                16384,
                Some(20.0),
            )
        };
        let fio = FioSeq {
            block_size_bytes: 16384,
            iodepth: 64,
            iops: 1000.0,
            mb_per_s: 20.0,
            p50_us: None,
            p99_us: None,
            round_mb_per_s: vec![20.0],
        };
        let rows = vec![
            row(Mode::Cold, Projection::All, 1, 2.0),
            row(Mode::Cold, Projection::All, 2, 1.0),
            row(Mode::Warm, Projection::All, 1, 1.0),
            row(Mode::Warm, Projection::All, 2, 0.5),
            row(Mode::Warm, Projection::Narrow, 1, 0.5),
        ];
        let summary = summarize(&rows, Some(&fio), None, 1_000_000, 6);
        // Best cold: 1000 leaves x 16384 B in 1 s = 16.384 MB/s, over 20 MB/s.
        assert!((summary.cold_scan_vs_device_seq.unwrap() - 16.384 / 20.0).abs() < 1e-9);
        assert_eq!(summary.warm_speedup_2_threads, Some(2.0));
        assert_eq!(summary.warm_speedup_2_threads_best, Some(2.0));
        assert_eq!(summary.warm_cpu_pct_2_threads, Some(100.0));
        assert_eq!(summary.cold_speedup_2_threads, Some(2.0));
        assert_eq!(summary.warm_narrow_speedup_2_threads, None);
        assert_eq!(summary.cold_scan_vs_device_seq_1m, None);
        assert_eq!(summary.warm_speedup_max_threads, Some(2.0));
        assert_eq!(summary.max_threads, 2);

        let one_core = summarize(&rows[..1], None, None, 1_000_000, 1);
        assert_eq!(one_core.warm_speedup_2_threads, None);
        assert_eq!(one_core.cold_scan_vs_device_seq, None);
        assert_eq!(one_core.warm_speedup_max_threads, None);
        let value = serde_json::to_value(&one_core).unwrap();
        for key in [
            "cold_scan_vs_device_seq",
            "warm_speedup_2_threads",
            "fio_seq_mb_s",
        ] {
            assert!(value.as_object().unwrap().contains_key(key), "{key}");
            assert!(value[key].is_null(), "{key}");
        }
    }

    #[test]
    fn options_pools_and_fio_jobs() {
        assert_eq!(default_threads(2), vec![1, 2]);
        assert_eq!(default_threads(0), vec![1]);
        assert_eq!(
            pool_size_for(1 << 30),
            ((1u64 << 30) * 3 / 2).div_ceil(1 << 20) << 20
        );
        assert_eq!(
            pool_size_for(1 << 20),
            tarn_common::limits::BUFFER_POOL_SIZE_DEFAULT_BYTES
        );
        assert_eq!(cold_io_method(IoMethod::Auto), IoMethod::Auto);
        assert_eq!(cold_io_method(IoMethod::Direct), IoMethod::Direct);
        assert_eq!(fio_iodepth(0), 1);
        assert_eq!(fio_iodepth(64), 64);
        assert_eq!(cold_io_method(IoMethod::Buffered), IoMethod::Direct);
        assert_eq!(cold_io_method(IoMethod::Uring), IoMethod::Uring);

        let mut options = ScanBenchOptions::new(Settings::default(), true);
        assert_eq!((options.scale_factor, options.rounds), (0.1, 1));
        options.check().unwrap();
        options.threads = vec![0];
        assert!(matches!(options.check(), Err(BenchError::Options(_))));

        let jobs = fio_jobs(Path::new("/d/000009.tdf"), (3 << 20) + 5, 16384, 2.0, 32);
        assert_eq!(jobs.len(), 2);
        let args = jobs[0].1.args().join(" ");
        for expected in [
            "--bs=16384",
            "--rw=read",
            "--direct=1",
            "--ioengine=io_uring",
            "--iodepth=32",
            "--readonly",
            "--size=3145728",
        ] {
            assert!(args.contains(expected), "{expected} missing from {args}");
        }
        assert_eq!(jobs[1].0, 1 << 20);
        assert_eq!(jobs[1].1.size_bytes, 3 << 20);
        assert!(fio_jobs(Path::new("/x"), 1000, 16384, 1.0, 32).is_empty());
    }
}
