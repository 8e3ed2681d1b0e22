//! `tarn bench io`: the S5 matrix of page I/O paths, measured against fio.
//!
//! S5 found that a file system costs a database through double buffering, a
//! single-writer inode lock and missing asynchronous I/O, and that direct I/O beat
//! buffered I/O. This bench measures Tarn's three paths on one file:
//!
//! | path       | concurrency N means                | each I/O                                  |
//! |------------|------------------------------------|-------------------------------------------|
//! | `buffered` | N threads                          | `PageFile::read_page` / `write_page`      |
//! | `direct`   | N threads                          | the same, on an `O_DIRECT` file           |
//! | `uring`    | N requests in flight, one thread   | `IoEngine::submit`, fixed arena buffers   |
//!
//! for each pattern (`seqread`, `randread`, `randwrite`, `randrw` with 70% reads) and
//! N in 1, 8, 32 and 128. Sequential reads split the file into N regions and read each
//! in order, one region per thread or per in-flight slot.
//!
//! # How a run goes
//! 1. [`plan`] picks the rows: the full matrix, or with `--quick` the subset the issue's
//!    targets need ([`QUICK_ROWS`]), narrowed by `--paths`, `--patterns`, `--depths`.
//! 2. `crate::load::ensure_loaded` fills data file 1 of the bench directory with sealed pages
//!    of type RAW (each with its own content), once; a kept `--data-dir` is reused.
//! 3. For each path in turn, one `DataDir` is opened on that directory with `io_method`
//!    set to the path, and its rows run for `--seconds` each (`workload`). Every page
//!    read is verified by the engine (checksum and page id); any error fails the bench.
//! 4. With `--fio`, fio runs right after each row on the same file with the same block
//!    size, pattern and concurrency ([`fio_job`]), and the row gets `ratio` = Tarn IOPS /
//!    fio IOPS. fio's writes would destroy the pages' checksums, so fio's write rows
//!    use file 2, a twin of the same size loaded the same way.
//! 5. [`summarize`] computes the ratios the targets name.
//!
//! # Cold reads
//! `direct` and `uring` bypass the page cache (`O_DIRECT`). A `buffered` row would
//! otherwise read from memory after a while, so the OS cache of the file is dropped
//! (`PageFile::drop_os_cache`) before each buffered row and every 100 ms during it,
//! for fio's buffered rows too.
//!
//! # Units
//! Latency is from the start of a request to the moment its completion is seen, in
//! microseconds; MB/s is 10^6 bytes per second; CPU per I/O is the process's user
//! plus system CPU time during the row (all threads, the engine's included) divided by
//! the I/Os.

mod workload;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;

use tarn_common::latch::LatchRegistry;
use tarn_common::limits::{BENCH_THREADS_MAX, IO_URING_QUEUE_DEPTH_MAX};
use tarn_common::settings::{IoMethod, Settings};
use tarn_common::{FileId, Result as TarnResult};
use tarn_io::{DataDir, PageArena, PageFile};

use crate::fio::{self, Fio, FioEngine, FioJob, FioResult};
use crate::load;
use crate::report::{
    BenchDocument, Output, Table, data_dir_fate, distinct, format_count, format_number,
    format_ratio, ratio,
};
use crate::workdir::WorkDir;
use crate::{BenchError, Result};

pub use workload::Measurement;

/// The bench's data file, and the twin fio writes to.
pub const DATA_FILE_ID: FileId = FileId(1);
pub const FIO_WRITE_FILE_ID: FileId = FileId(2);

pub const FILE_SIZE_DEFAULT_BYTES: u64 = 4 << 30;
pub const FILE_SIZE_QUICK_BYTES: u64 = 512 << 20;
/// Small enough files would be measured from the device's own cache only.
pub const FILE_SIZE_MIN_BYTES: u64 = 16 << 20;
pub const SECONDS_PER_ROW_DEFAULT: f64 = 4.0;
pub const SECONDS_PER_ROW_QUICK: f64 = 2.0;
/// Tarn/fio alternations per row when fio runs (see [`IoBenchOptions::rounds`]).
pub const ROUNDS_DEFAULT: u32 = 2;
pub const DEPTHS: [u32; 4] = [1, 8, 32, 128];
/// Share of reads in the `randrw` pattern.
pub const READ_MIX_PCT: u32 = 70;
/// How often the OS page cache is dropped during a buffered row.
pub const CACHE_DROP_INTERVAL: Duration = Duration::from_millis(100);

/// The `--quick` rows: what the targets need, in well under a minute.
pub const QUICK_ROWS: [RowSpec; 6] = [
    RowSpec::new(IoMethod::Buffered, Pattern::RandRead, 1),
    RowSpec::new(IoMethod::Direct, Pattern::RandRead, 1),
    RowSpec::new(IoMethod::Direct, Pattern::RandRead, 32),
    RowSpec::new(IoMethod::Uring, Pattern::RandRead, 1),
    RowSpec::new(IoMethod::Uring, Pattern::RandRead, 32),
    RowSpec::new(IoMethod::Uring, Pattern::RandWrite, 32),
];

pub const COLD_NOTE: &str = "cold: OS page cache dropped before and every 100 ms during each \
     buffered row (fio's buffered rows too); direct and uring rows are cold by O_DIRECT";

/// An access pattern.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Pattern {
    SeqRead,
    RandRead,
    RandWrite,
    /// 70% reads, 30% writes ([`READ_MIX_PCT`]).
    RandRw,
}

impl Pattern {
    pub const ALL: [Pattern; 4] = [
        Pattern::SeqRead,
        Pattern::RandRead,
        Pattern::RandWrite,
        Pattern::RandRw,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Pattern::SeqRead => "seqread",
            Pattern::RandRead => "randread",
            Pattern::RandWrite => "randwrite",
            Pattern::RandRw => "randrw",
        }
    }

    pub fn parse(text: &str) -> Option<Pattern> {
        Pattern::ALL
            .into_iter()
            .find(|p| p.name().eq_ignore_ascii_case(text.trim()))
    }

    /// fio's `rw` for this pattern.
    pub fn fio_rw(self) -> &'static str {
        match self {
            Pattern::SeqRead => "read",
            Pattern::RandRead => "randread",
            Pattern::RandWrite => "randwrite",
            Pattern::RandRw => "randrw",
        }
    }

    pub fn writes(self) -> bool {
        matches!(self, Pattern::RandWrite | Pattern::RandRw)
    }
}

/// One row of the matrix: a path, a pattern and a concurrency.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RowSpec {
    pub path: IoMethod,
    pub pattern: Pattern,
    /// Threads for `buffered` and `direct`, requests in flight for `uring`.
    pub depth: u32,
}

impl RowSpec {
    pub const fn new(path: IoMethod, pattern: Pattern, depth: u32) -> RowSpec {
        RowSpec {
            path,
            pattern,
            depth,
        }
    }

    /// What N means on this path.
    pub fn concurrency(&self) -> &'static str {
        if self.path == IoMethod::Uring {
            "queue_depth"
        } else {
            "threads"
        }
    }

    /// `uring randread qd32` or `direct randread 32 threads`.
    pub fn label(&self) -> String {
        if self.path == IoMethod::Uring {
            format!("{} {} qd{}", self.path, self.pattern.name(), self.depth)
        } else {
            let unit = if self.depth == 1 { "thread" } else { "threads" };
            format!(
                "{} {} {} {unit}",
                self.path,
                self.pattern.name(),
                self.depth
            )
        }
    }

    fn sort_key(&self) -> (usize, Pattern, u32) {
        let path_index = IoMethod::CONCRETE
            .iter()
            .position(|p| *p == self.path)
            .expect("a concrete path");
        (path_index, self.pattern, self.depth)
    }
}

/// What `tarn bench io` was asked to do.
#[derive(Clone, Debug)]
pub struct IoBenchOptions {
    /// Engine settings (from `--set`); `io_method` is set per path by the bench.
    pub settings: Settings,
    pub quick: bool,
    pub fio: bool,
    /// Keep and reuse the bench files here; a temporary directory otherwise.
    pub data_dir: Option<PathBuf>,
    pub file_size_bytes: u64,
    pub seconds_per_row: f64,
    /// With fio, each row alternates Tarn and fio this many times (the order swapped
    /// every round), each for `seconds_per_row / rounds`, so that drift of a shared
    /// device hits both sides alike.
    pub rounds: u32,
    pub page_size_bytes: u32,
    /// Filters; `None` means every value (or, with `quick`, every quick row).
    pub paths: Option<Vec<IoMethod>>,
    pub patterns: Option<Vec<Pattern>>,
    pub depths: Option<Vec<u32>>,
}

impl IoBenchOptions {
    /// The defaults for a full or a quick run.
    pub fn new(settings: Settings, quick: bool) -> IoBenchOptions {
        IoBenchOptions {
            page_size_bytes: settings.page_size_bytes,
            settings,
            quick,
            fio: false,
            data_dir: None,
            file_size_bytes: if quick {
                FILE_SIZE_QUICK_BYTES
            } else {
                FILE_SIZE_DEFAULT_BYTES
            },
            seconds_per_row: if quick {
                SECONDS_PER_ROW_QUICK
            } else {
                SECONDS_PER_ROW_DEFAULT
            },
            rounds: ROUNDS_DEFAULT,
            paths: None,
            patterns: None,
            depths: None,
        }
    }

    fn pages(&self) -> u64 {
        self.file_size_bytes / u64::from(self.page_size_bytes)
    }
}

/// The rows to measure, in the order they run (path by path).
pub fn plan(options: &IoBenchOptions) -> Result<Vec<RowSpec>> {
    let mut rows: Vec<RowSpec> = if options.quick {
        QUICK_ROWS.to_vec()
    } else {
        let paths = options.paths.clone().unwrap_or(IoMethod::CONCRETE.to_vec());
        let patterns = options.patterns.clone().unwrap_or(Pattern::ALL.to_vec());
        let depths = options.depths.clone().unwrap_or(DEPTHS.to_vec());
        let mut all = Vec::new();
        for &path in &paths {
            for &pattern in &patterns {
                for &depth in &depths {
                    all.push(RowSpec::new(path, pattern, depth));
                }
            }
        }
        all
    };
    rows.retain(|row| {
        options.paths.as_ref().is_none_or(|p| p.contains(&row.path))
            && options
                .patterns
                .as_ref()
                .is_none_or(|p| p.contains(&row.pattern))
            && options
                .depths
                .as_ref()
                .is_none_or(|d| d.contains(&row.depth))
    });
    rows.sort_by_key(RowSpec::sort_key);
    rows.dedup();
    if rows.is_empty() {
        let quick = if options.quick {
            " (--quick measures only: buffered randread 1; direct randread 1, 32; \
             uring randread 1, 32; uring randwrite 32)"
        } else {
            ""
        };
        return Err(BenchError::Options(format!(
            "--paths, --patterns and --depths select no rows{quick}"
        )));
    }
    for row in &rows {
        if row.path == IoMethod::Auto {
            return Err(BenchError::Options(
                "--paths takes buffered, direct or uring, not auto".into(),
            ));
        }
        let max = if row.path == IoMethod::Uring {
            IO_URING_QUEUE_DEPTH_MAX as usize
        } else {
            BENCH_THREADS_MAX
        };
        if row.depth == 0 || row.depth as usize > max {
            return Err(BenchError::Options(format!(
                "depth {} for {} must be from 1 to {max}",
                row.depth, row.path
            )));
        }
    }
    Ok(rows)
}

/// One measured row, as printed and as it appears in the JSON `rows` array.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct IoRow {
    pub path: &'static str,
    pub pattern: &'static str,
    pub depth: u32,
    /// `threads` or `queue_depth`.
    pub concurrency: &'static str,
    pub seconds: f64,
    pub ios: u64,
    /// Reads whose checksum and page id the engine verified.
    pub reads_verified: u64,
    pub writes: u64,
    pub errors: u64,
    pub iops: f64,
    pub mb_per_s: f64,
    pub p50_us: f64,
    pub p99_us: f64,
    pub cpu_us_per_io: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fio_iops: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fio_p50_us: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fio_p99_us: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fio_cpu_us_per_io: Option<f64>,
    /// Tarn IOPS / fio IOPS.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ratio: Option<f64>,
}

impl IoRow {
    /// The row's figures from what was measured (and what fio measured, if it ran).
    pub fn new(
        spec: &RowSpec,
        measured: &Measurement,
        page_size_bytes: u32,
        fio: Option<&FioResult>,
    ) -> IoRow {
        let seconds = measured.elapsed.as_secs_f64();
        let ios = measured.reads + measured.writes;
        let iops = if seconds > 0.0 {
            ios as f64 / seconds
        } else {
            0.0
        };
        let quantile_us = |q: f64| measured.latency_ns.value_at_quantile(q) as f64 / 1000.0;
        let cpu_us_per_io = if ios > 0 {
            measured.cpu.as_secs_f64() * 1e6 / ios as f64
        } else {
            0.0
        };
        let fio_iops = fio.map(|f| f.iops);
        IoRow {
            path: spec.path.name(),
            pattern: spec.pattern.name(),
            depth: spec.depth,
            concurrency: spec.concurrency(),
            seconds,
            ios,
            reads_verified: measured.reads,
            writes: measured.writes,
            errors: 0,
            iops,
            mb_per_s: iops * f64::from(page_size_bytes) / 1e6,
            p50_us: quantile_us(0.50),
            p99_us: quantile_us(0.99),
            cpu_us_per_io,
            fio_iops,
            fio_p50_us: fio.and_then(|f| f.p50_us),
            fio_p99_us: fio.and_then(|f| f.p99_us),
            fio_cpu_us_per_io: fio.and_then(|f| f.cpu_us_per_io),
            ratio: ratio(Some(iops), fio_iops),
        }
    }

    fn is(&self, path: IoMethod, pattern: Pattern, depth: u32) -> bool {
        self.path == path.name() && self.pattern == pattern.name() && self.depth == depth
    }
}

/// The ratios the targets name; `null` when a needed row (or fio) did not run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct IoSummary {
    /// uring randread at depth 32: Tarn IOPS / fio IOPS (target >= 0.9).
    pub uring_randread_qd32_vs_fio: Option<f64>,
    /// direct randread with 32 threads: Tarn IOPS / fio IOPS (target >= 0.9).
    pub direct_randread_qd32_vs_fio: Option<f64>,
    /// uring randread depth 32 IOPS / direct randread 1 thread IOPS (target >= 3 where
    /// the device allows it).
    pub uring_qd32_vs_sync_qd1: Option<f64>,
    /// The same ratio for fio: what the device allows.
    pub fio_uring_qd32_vs_sync_qd1: Option<f64>,
    pub rows: usize,
    pub ios_total: u64,
    pub reads_verified_total: u64,
    pub errors_total: u64,
}

/// Computes the summary from the measured rows.
pub fn summarize(rows: &[IoRow]) -> IoSummary {
    let find = |path, pattern, depth| rows.iter().find(|r| r.is(path, pattern, depth));
    let uring_qd32 = find(IoMethod::Uring, Pattern::RandRead, 32);
    let direct_32 = find(IoMethod::Direct, Pattern::RandRead, 32);
    let direct_1 = find(IoMethod::Direct, Pattern::RandRead, 1);
    IoSummary {
        uring_randread_qd32_vs_fio: uring_qd32.and_then(|r| r.ratio),
        direct_randread_qd32_vs_fio: direct_32.and_then(|r| r.ratio),
        uring_qd32_vs_sync_qd1: ratio(uring_qd32.map(|r| r.iops), direct_1.map(|r| r.iops)),
        fio_uring_qd32_vs_sync_qd1: ratio(
            uring_qd32.and_then(|r| r.fio_iops),
            direct_1.and_then(|r| r.fio_iops),
        ),
        rows: rows.len(),
        ios_total: rows.iter().map(|r| r.ios).sum(),
        reads_verified_total: rows.iter().map(|r| r.reads_verified).sum(),
        errors_total: rows.iter().map(|r| r.errors).sum(),
    }
}

/// What the run measured against and under which conditions (the JSON `config`).
#[derive(Clone, Debug, Serialize)]
pub struct IoBenchConfig {
    pub quick: bool,
    pub fio: bool,
    pub fio_version: Option<String>,
    pub data_dir: String,
    /// False when the directory was temporary and has been removed.
    pub data_dir_kept: bool,
    pub file: String,
    pub fio_write_file: Option<String>,
    pub file_size_bytes: u64,
    pub page_size_bytes: u32,
    pub pages: u64,
    pub seconds_per_row: f64,
    pub read_mix_pct: u32,
    pub paths: Vec<&'static str>,
    pub patterns: Vec<&'static str>,
    pub depths: Vec<u32>,
    /// Whether the uring arena was registered as io_uring fixed buffers.
    pub uring_fixed_buffers: Option<bool>,
    pub loaded: String,
    pub baseline: String,
    pub cold: &'static str,
}

/// A finished run.
pub struct IoReport {
    pub config: IoBenchConfig,
    pub rows: Vec<IoRow>,
    pub summary: IoSummary,
}

/// Runs the bench and prints its tables and notes (and, with `--json`, the document).
pub fn run_and_print(options: &IoBenchOptions, output: &Output) -> Result<IoReport> {
    let report = run(options, output)?;
    print(&report, output)?;
    Ok(report)
}

/// Runs the bench, printing progress lines only.
pub fn run(options: &IoBenchOptions, output: &Output) -> Result<IoReport> {
    let specs = plan(options)?;
    check_sizes(options, &specs)?;
    let fio = Fio::find_or_install_if(options.fio, output)?;
    let workdir = WorkDir::open(options.data_dir.as_deref(), ".tarn-bench-io-")?;
    workdir.warn_if_in_memory(output, "these rows measure memory, not a device");
    let max_depth = specs.iter().map(|s| s.depth).max().unwrap_or(1);
    let settings = bench_settings(options, workdir.path(), max_depth);
    let pages = options.pages();
    output.progress(&format!(
        "tarn bench io: {} rows of {:.1} s on {} pages of {} bytes in '{}'{}",
        specs.len(),
        options.seconds_per_row,
        pages,
        options.page_size_bytes,
        workdir.path().display(),
        if fio.is_some() {
            ", each followed by fio"
        } else {
            ""
        }
    ));

    let needs_fio_write_file = fio.is_some() && specs.iter().any(|s| s.pattern.writes());
    let loaded = {
        let dir = open_data_dir(&settings, settings.io_method)?;
        let mut loaded = vec![load::ensure_loaded(
            &dir,
            DATA_FILE_ID,
            pages,
            true,
            output,
        )?];
        if needs_fio_write_file {
            loaded.push(load::ensure_loaded(
                &dir,
                FIO_WRITE_FILE_ID,
                pages,
                false,
                output,
            )?);
        }
        loaded.join("; ")
    };

    let mut run = Runner {
        options,
        output,
        fio: fio.as_ref(),
        pages,
        total_rows: specs.len(),
        rows: Vec::with_capacity(specs.len()),
        uring_fixed_buffers: None,
    };
    for path in IoMethod::CONCRETE {
        let path_specs: Vec<RowSpec> = specs.iter().copied().filter(|s| s.path == path).collect();
        if !path_specs.is_empty() {
            run.run_path(&settings, path, &path_specs, needs_fio_write_file)?;
        }
    }
    let Runner {
        rows,
        uring_fixed_buffers,
        ..
    } = run;

    let data_dir = workdir.path().to_path_buf();
    let config = IoBenchConfig {
        quick: options.quick,
        fio: fio.is_some(),
        fio_version: fio.as_ref().map(|f| f.version().to_string()),
        data_dir: data_dir.display().to_string(),
        data_dir_kept: !workdir.is_temporary(),
        file: data_file_path(&data_dir, DATA_FILE_ID)
            .display()
            .to_string(),
        fio_write_file: needs_fio_write_file.then(|| {
            data_file_path(&data_dir, FIO_WRITE_FILE_ID)
                .display()
                .to_string()
        }),
        file_size_bytes: pages * u64::from(options.page_size_bytes),
        page_size_bytes: options.page_size_bytes,
        pages,
        seconds_per_row: options.seconds_per_row,
        read_mix_pct: READ_MIX_PCT,
        paths: distinct(specs.iter().map(|s| s.path.name())),
        patterns: distinct(specs.iter().map(|s| s.pattern.name())),
        depths: distinct(specs.iter().map(|s| s.depth)),
        uring_fixed_buffers,
        loaded,
        baseline: baseline_note(fio.is_some(), options.page_size_bytes),
        cold: COLD_NOTE,
    };
    let summary = summarize(&rows);
    drop(workdir);
    Ok(IoReport {
        config,
        rows,
        summary,
    })
}

fn check_sizes(options: &IoBenchOptions, specs: &[RowSpec]) -> Result<()> {
    if !(options.seconds_per_row > 0.0 && options.seconds_per_row <= 3600.0) {
        return Err(BenchError::Options(format!(
            "--seconds must be more than 0 and at most 3600, not {}",
            options.seconds_per_row
        )));
    }
    if options.file_size_bytes < FILE_SIZE_MIN_BYTES {
        return Err(BenchError::Options(format!(
            "--file-size must be at least {} MiB",
            FILE_SIZE_MIN_BYTES >> 20
        )));
    }
    let pages = options.pages();
    let max_depth = specs.iter().map(|s| u64::from(s.depth)).max().unwrap_or(1);
    if pages < max_depth * 16 {
        return Err(BenchError::Options(format!(
            "--file-size gives {pages} pages, too few for depth {max_depth}"
        )));
    }
    Ok(())
}

/// The engine settings for the bench's data directories.
fn bench_settings(options: &IoBenchOptions, dir: &Path, max_depth: u32) -> Settings {
    let mut settings = options.settings.clone();
    settings.data_dir = dir.to_path_buf();
    settings.page_size_bytes = options.page_size_bytes;
    settings.io_uring_queue_depth = settings.io_uring_queue_depth.max(max_depth);
    settings
}

pub(crate) fn open_data_dir(settings: &Settings, method: IoMethod) -> TarnResult<Arc<DataDir>> {
    let mut settings = settings.clone();
    settings.io_method = method;
    DataDir::open(
        &settings,
        Some(settings.page_size_bytes),
        LatchRegistry::new(settings.latch_accounting),
    )
}

fn data_file_path(dir: &Path, file_id: FileId) -> PathBuf {
    dir.join(format!("{:06}.tdf", file_id.0))
}

/// Runs rows path by path and collects them.
struct Runner<'a> {
    options: &'a IoBenchOptions,
    output: &'a Output,
    fio: Option<&'a Fio>,
    pages: u64,
    total_rows: usize,
    rows: Vec<IoRow>,
    uring_fixed_buffers: Option<bool>,
}

impl Runner<'_> {
    fn run_path(
        &mut self,
        settings: &Settings,
        path: IoMethod,
        specs: &[RowSpec],
        fio_write_file: bool,
    ) -> Result<()> {
        let dir = open_data_dir(settings, path)?;
        let file = dir.file(DATA_FILE_ID)?;
        let fio_writes = if fio_write_file {
            Some(dir.file(FIO_WRITE_FILE_ID)?)
        } else {
            None
        };
        let page_size = dir.page_size_bytes();
        let mut uring_buffers = Vec::new();
        if path == IoMethod::Uring {
            let depth = specs.iter().map(|s| s.depth).max().unwrap_or(1) as usize;
            let (arena, buffers) = PageArena::with_pages(2 * depth, page_size);
            self.uring_fixed_buffers = Some(dir.engine().register_arena(&arena));
            uring_buffers = buffers;
        }
        let rounds = if self.fio.is_some() {
            self.options.rounds.max(1)
        } else {
            1
        };
        let seconds = self.options.seconds_per_row / f64::from(rounds);
        let duration = Duration::from_secs_f64(seconds);
        for spec in specs {
            let mut measured: Option<workload::Measurement> = None;
            let mut fio_result: Option<FioResult> = None;
            for round in 0..rounds {
                // Tarn first in even rounds, fio first in odd ones.
                for fio_turn in [round % 2 == 1, round % 2 == 0] {
                    match (fio_turn, self.fio) {
                        (true, Some(fio)) => {
                            let result =
                                self.run_fio(fio, spec, &file, fio_writes.as_ref(), seconds)?;
                            fio_result = Some(match fio_result {
                                Some(earlier) => earlier.merge(&result),
                                None => result,
                            });
                        }
                        (true, None) => {}
                        (false, _) => {
                            let round_measured = if path == IoMethod::Uring {
                                workload::run_uring(
                                    dir.engine(),
                                    &file,
                                    &mut uring_buffers,
                                    spec,
                                    self.pages,
                                    duration,
                                )?
                            } else {
                                let cold = (path == IoMethod::Buffered).then_some(file.as_ref());
                                workload::with_cold_cache(cold, || {
                                    workload::run_threads(&file, spec, self.pages, duration)
                                })??
                            };
                            measured = Some(match measured {
                                Some(earlier) => earlier.merge(round_measured),
                                None => round_measured,
                            });
                        }
                    }
                }
            }
            let measured = measured.expect("every row measures Tarn at least once");
            let row = IoRow::new(spec, &measured, page_size as u32, fio_result.as_ref());
            self.output.progress(&progress_line(
                self.rows.len() + 1,
                self.total_rows,
                spec,
                &row,
            ));
            self.rows.push(row);
        }
        Ok(())
    }

    fn run_fio(
        &self,
        fio: &Fio,
        spec: &RowSpec,
        file: &Arc<PageFile>,
        fio_writes: Option<&Arc<PageFile>>,
        seconds: f64,
    ) -> Result<FioResult> {
        let target = if spec.pattern.writes() {
            fio_writes.expect("the fio write file is open when a write row runs fio")
        } else {
            file
        };
        let job = fio_job(
            spec,
            target.path(),
            self.pages,
            self.options.page_size_bytes,
            seconds,
        );
        let cold = (spec.path == IoMethod::Buffered).then_some(target.as_ref());
        workload::with_cold_cache(cold, || fio.run(&job))?
    }
}

/// The fio job that mirrors `spec` on `file`.
pub fn fio_job(
    spec: &RowSpec,
    file: &Path,
    pages: u64,
    page_size_bytes: u32,
    seconds: f64,
) -> FioJob {
    let page_size = u64::from(page_size_bytes);
    let file_bytes = pages * page_size;
    let uring = spec.path == IoMethod::Uring;
    // Sequential reads on threads: one region per fio job, as Tarn gives one per thread.
    // fio's io_uring engine keeps N requests in flight on one sequential stream.
    let (size_bytes, offset_increment_bytes) = if spec.pattern == Pattern::SeqRead && !uring {
        let region = pages / u64::from(spec.depth) * page_size;
        (region, Some(region))
    } else {
        (file_bytes, None)
    };
    FioJob {
        file: file.to_path_buf(),
        block_size_bytes: page_size_bytes,
        size_bytes,
        offset_increment_bytes,
        rw: spec.pattern.fio_rw(),
        read_mix_pct: (spec.pattern == Pattern::RandRw).then_some(READ_MIX_PCT),
        engine: if uring {
            FioEngine::IoUring { depth: spec.depth }
        } else {
            FioEngine::Psync { jobs: spec.depth }
        },
        direct: spec.path != IoMethod::Buffered,
        runtime_ms: fio::runtime_ms(seconds),
        read_only: !spec.pattern.writes(),
    }
}

fn baseline_note(fio: bool, page_size_bytes: u32) -> String {
    if fio {
        format!(
            "baseline: fio on the same file, same block size ({page_size_bytes} bytes), \
             pattern and depth (psync with N jobs for buffered and direct, io_uring with \
             iodepth N for uring; direct=1 except buffered), alternating with Tarn in \
             rounds (order swapped each round) for the same total time, so drift of the \
             shared device hits both alike; ratio = Tarn IOPS / fio IOPS. fio's write rows use a twin \
             file of the same size in the same directory, since fio's writes would destroy \
             the pages' checksums"
        )
    } else {
        format!(
            "baseline: none in this run; pass --fio to run fio on the same file, same block \
             size ({page_size_bytes} bytes) and depth after each row"
        )
    }
}

fn progress_line(index: usize, total: usize, spec: &RowSpec, row: &IoRow) -> String {
    let mut line = format!(
        "[{index}/{total}] {}: {} IOPS, {} MB/s, p50 {} us, p99 {} us, {} CPU us/IO",
        spec.label(),
        format_count(Some(row.iops)),
        format_number(Some(row.mb_per_s), 1),
        format_number(Some(row.p50_us), 1),
        format_number(Some(row.p99_us), 1),
        format_number(Some(row.cpu_us_per_io), 1),
    );
    if let Some(fio_iops) = row.fio_iops {
        line.push_str(&format!(
            " | fio {} IOPS, Tarn/fio {}",
            format_count(Some(fio_iops)),
            format_ratio(row.ratio)
        ));
    }
    line
}

/// Prints the notes, the rows table and the summary table, and the JSON document in
/// `--json` mode.
pub fn print(report: &IoReport, output: &Output) -> Result<()> {
    let config = &report.config;
    output.note(&format!(
        "\ntarn bench io (S5): {} pages of {} bytes ({} MiB), {:.1} s per row, data in '{}'{}",
        config.pages,
        config.page_size_bytes,
        config.file_size_bytes >> 20,
        config.seconds_per_row,
        config.data_dir,
        data_dir_fate(config.data_dir_kept)
    ));
    output.note(&format!("- {}", config.loaded));
    if let Some(fixed) = config.uring_fixed_buffers {
        output.note(&format!(
            "- uring page buffers: one arena, {}",
            if fixed {
                "registered as io_uring fixed buffers"
            } else {
                "not registered (the kernel refused fixed buffers)"
            }
        ));
    }
    output.note(&format!("- {}", config.baseline));
    output.note(&format!("- {}", config.cold));
    output.note(
        "- N is threads for buffered and direct (synchronous read_page/write_page per \
         thread; seqread gives each thread its own region, as fio's numjobs with \
         offset_increment), requests in flight for uring (one submitting thread; seqread \
         is one stream, as fio's iodepth)",
    );
    output.table(&rows_table(&report.rows, config.fio));
    output.table(&summary_table(&report.summary, config.fio));
    output.json(&BenchDocument::new(
        "io",
        config,
        &report.rows,
        &report.summary,
    ))
}

fn rows_table(rows: &[IoRow], fio: bool) -> Table {
    let mut headers = vec![
        "path",
        "pattern",
        "N",
        "IOPS",
        "MB/s",
        "p50 us",
        "p99 us",
        "CPU us/IO",
    ];
    if fio {
        headers.extend([
            "fio IOPS",
            "fio p50 us",
            "fio p99 us",
            "fio CPU us/IO",
            "Tarn/fio",
        ]);
    }
    let mut table = Table::new("Page I/O paths (S5): Tarn rows", &headers);
    for row in rows {
        let mut cells = vec![
            row.path.to_string(),
            row.pattern.to_string(),
            row.depth.to_string(),
            format_count(Some(row.iops)),
            format_number(Some(row.mb_per_s), 1),
            format_number(Some(row.p50_us), 1),
            format_number(Some(row.p99_us), 1),
            format_number(Some(row.cpu_us_per_io), 1),
        ];
        if fio {
            cells.extend([
                format_count(row.fio_iops),
                format_number(row.fio_p50_us, 1),
                format_number(row.fio_p99_us, 1),
                format_number(row.fio_cpu_us_per_io, 1),
                format_ratio(row.ratio),
            ]);
        }
        table.add_row(cells);
    }
    table
}

fn summary_table(summary: &IoSummary, fio: bool) -> Table {
    let mut table = Table::new("Summary (S5 targets)", &["ratio", "value", "target"]);
    let no_fio = |value: Option<f64>| {
        if fio {
            format_ratio(value)
        } else {
            "- (no --fio)".into()
        }
    };
    table.add_row(vec![
        "uring randread qd32: Tarn / fio".into(),
        no_fio(summary.uring_randread_qd32_vs_fio),
        ">= 0.90x".into(),
    ]);
    table.add_row(vec![
        "direct randread 32 threads: Tarn / fio".into(),
        no_fio(summary.direct_randread_qd32_vs_fio),
        ">= 0.90x".into(),
    ]);
    table.add_row(vec![
        "Tarn: uring randread qd32 / direct randread 1 thread".into(),
        format_ratio(summary.uring_qd32_vs_sync_qd1),
        ">= 3x where the device allows".into(),
    ]);
    table.add_row(vec![
        "fio: io_uring qd32 / psync 1 job (what the device allows)".into(),
        no_fio(summary.fio_uring_qd32_vs_sync_qd1),
        "-".into(),
    ]);
    table
}

#[cfg(test)]
mod tests {
    use super::*;

    fn measured(
        reads: u64,
        writes: u64,
        seconds: f64,
        cpu_ms: u64,
        latency_us: &[u64],
    ) -> Measurement {
        let mut latency_ns = workload::new_histogram();
        for us in latency_us {
            latency_ns.record(us * 1000).unwrap();
        }
        Measurement {
            elapsed: Duration::from_secs_f64(seconds),
            cpu: Duration::from_millis(cpu_ms),
            reads,
            writes,
            latency_ns,
        }
    }

    fn fio_result(iops: f64) -> FioResult {
        FioResult {
            iops,
            total_ios: (iops * 2.0) as u64,
            p50_us: Some(100.0),
            p99_us: Some(300.0),
            usr_cpu_pct: 5.0,
            sys_cpu_pct: 20.0,
            cpu_us_per_io: Some(8.0),
        }
    }

    #[test]
    fn a_row_computes_iops_bandwidth_latency_cpu_and_the_fio_ratio() {
        let spec = RowSpec::new(IoMethod::Uring, Pattern::RandRw, 32);
        let latencies: Vec<u64> = (1..=100).collect();
        let m = measured(70_000, 30_000, 2.0, 500, &latencies);
        let row = IoRow::new(&spec, &m, 16384, Some(&fio_result(40_000.0)));
        assert_eq!((row.path, row.pattern, row.depth), ("uring", "randrw", 32));
        assert_eq!(row.concurrency, "queue_depth");
        assert_eq!(
            (row.ios, row.reads_verified, row.writes),
            (100_000, 70_000, 30_000)
        );
        assert_eq!(row.iops, 50_000.0);
        assert_eq!(row.mb_per_s, 50_000.0 * 16384.0 / 1e6);
        assert!((row.p50_us - 50.0).abs() <= 1.0, "{}", row.p50_us);
        assert!((row.p99_us - 99.0).abs() <= 1.0, "{}", row.p99_us);
        assert_eq!(row.cpu_us_per_io, 5.0);
        assert_eq!(row.fio_iops, Some(40_000.0));
        assert_eq!(row.ratio, Some(1.25));

        let value = serde_json::to_value(&row).unwrap();
        for key in [
            "path",
            "pattern",
            "depth",
            "iops",
            "mb_per_s",
            "p50_us",
            "p99_us",
            "cpu_us_per_io",
            "fio_iops",
            "ratio",
        ] {
            assert!(value.get(key).is_some(), "{key} missing from {value}");
        }
        let without_fio = serde_json::to_value(IoRow::new(&spec, &m, 16384, None)).unwrap();
        assert!(without_fio.get("fio_iops").is_none() && without_fio.get("ratio").is_none());
    }

    #[test]
    fn the_summary_takes_the_named_rows_and_is_null_without_them() {
        let row = |path, pattern, depth, iops: f64, fio: Option<f64>| {
            let mut m = measured((iops * 2.0) as u64, 0, 2.0, 10, &[10]);
            if pattern == Pattern::RandWrite {
                std::mem::swap(&mut m.reads, &mut m.writes);
            }
            let fio = fio.map(fio_result);
            IoRow::new(&RowSpec::new(path, pattern, depth), &m, 16384, fio.as_ref())
        };
        let rows = vec![
            row(
                IoMethod::Direct,
                Pattern::RandRead,
                1,
                10_000.0,
                Some(10_000.0),
            ),
            row(
                IoMethod::Direct,
                Pattern::RandRead,
                32,
                45_000.0,
                Some(50_000.0),
            ),
            row(
                IoMethod::Uring,
                Pattern::RandRead,
                32,
                48_000.0,
                Some(50_000.0),
            ),
            row(IoMethod::Uring, Pattern::RandWrite, 32, 1.0, Some(1.0)),
        ];
        let summary = summarize(&rows);
        assert_eq!(summary.uring_randread_qd32_vs_fio, Some(0.96));
        assert_eq!(summary.direct_randread_qd32_vs_fio, Some(0.9));
        assert_eq!(summary.uring_qd32_vs_sync_qd1, Some(4.8));
        assert_eq!(summary.fio_uring_qd32_vs_sync_qd1, Some(5.0));
        assert_eq!(summary.rows, 4);
        assert_eq!(summary.errors_total, 0);

        let no_fio: Vec<IoRow> = vec![
            row(IoMethod::Direct, Pattern::RandRead, 1, 10_000.0, None),
            row(IoMethod::Uring, Pattern::RandRead, 32, 30_000.0, None),
        ];
        let summary = summarize(&no_fio);
        assert_eq!(summary.uring_randread_qd32_vs_fio, None);
        assert_eq!(summary.uring_qd32_vs_sync_qd1, Some(3.0));
        let value = serde_json::to_value(&summary).unwrap();
        assert!(value["direct_randread_qd32_vs_fio"].is_null());
        assert!(
            value
                .as_object()
                .unwrap()
                .contains_key("direct_randread_qd32_vs_fio")
        );
    }

    #[test]
    fn plans_cover_the_matrix_the_quick_subset_and_filters() {
        let options = IoBenchOptions::new(Settings::default(), false);
        let full = plan(&options).unwrap();
        assert_eq!(full.len(), 3 * 4 * 4);
        assert_eq!(
            full[0],
            RowSpec::new(IoMethod::Buffered, Pattern::SeqRead, 1)
        );
        assert_eq!(
            full[47],
            RowSpec::new(IoMethod::Uring, Pattern::RandRw, 128)
        );

        let mut quick = IoBenchOptions::new(Settings::default(), true);
        assert_eq!(plan(&quick).unwrap().len(), QUICK_ROWS.len());
        quick.paths = Some(vec![IoMethod::Uring]);
        assert_eq!(plan(&quick).unwrap().len(), 3);
        quick.depths = Some(vec![64]);
        assert!(matches!(plan(&quick), Err(BenchError::Options(_))));

        let mut filtered = IoBenchOptions::new(Settings::default(), false);
        filtered.patterns = Some(vec![Pattern::RandRead]);
        filtered.depths = Some(vec![4]);
        let rows = plan(&filtered).unwrap();
        assert_eq!(rows.len(), 3);
        assert!(
            rows.iter()
                .all(|r| r.depth == 4 && r.pattern == Pattern::RandRead)
        );
    }

    #[test]
    fn fio_jobs_mirror_the_row() {
        let file = Path::new("/d/000001.tdf");
        let seq = fio_job(
            &RowSpec::new(IoMethod::Direct, Pattern::SeqRead, 8),
            file,
            8000,
            16384,
            2.0,
        );
        assert_eq!(seq.engine, FioEngine::Psync { jobs: 8 });
        assert_eq!(seq.size_bytes, 1000 * 16384);
        assert_eq!(seq.offset_increment_bytes, Some(1000 * 16384));
        assert!(seq.direct && seq.read_only);
        let rw = fio_job(
            &RowSpec::new(IoMethod::Uring, Pattern::RandRw, 32),
            file,
            8000,
            16384,
            2.0,
        );
        assert_eq!(rw.engine, FioEngine::IoUring { depth: 32 });
        assert_eq!(
            (rw.size_bytes, rw.read_mix_pct, rw.runtime_ms),
            (8000 * 16384, Some(70), 2000)
        );
        assert!(!rw.read_only);
        let buffered = fio_job(
            &RowSpec::new(IoMethod::Buffered, Pattern::RandRead, 1),
            file,
            8000,
            16384,
            2.0,
        );
        assert!(!buffered.direct);
    }
}
