//! `tarn bench commit`: committed single-row update transactions per second by log
//! device and client count, with group commit's batching, against the device's own
//! fdatasync rate measured by fio in the same run (S3's first half: what a commit
//! costs on each log device).
//!
//! # How a run goes
//! 1. fio writes 4 KiB blocks to a 16 MiB file in the data directory with an
//!    `fdatasync` after each (`--rw=write --bs=4k --size=16m --fdatasync=1`) for
//!    `--seconds`: the device's own flush rate, the ceiling of a 1-client fsync commit.
//! 2. For each log device (fsync, dsync, pmem, none) the bench opens a [`Storage`] on
//!    its own data directory (`<dir>/commit-<device>`) with that `log_device`,
//!    `flush_log_at_commit = 1`, and a log of 4 x 256 MiB (unless `log_file_size` or
//!    `log_files` is given with `--set`) so that checkpoints rarely wait. The pmem log
//!    lives in a directory under `/dev/shm` (tmpfs emulating persistent memory),
//!    removed at the end; without `/dev/shm` the pmem rows are skipped with a note.
//!    The table `bench_commit.t (id BIGINT PRIMARY KEY, val BIGINT, pad
//!    VARCHAR(100))` is bulk-loaded with `--rows` rows (100,000) and checkpointed; a
//!    kept `--data-dir` reuses it for the file devices.
//! 3. For each client model and client count, every client repeats `BEGIN; UPDATE t
//!    SET val = ? WHERE id = ?; COMMIT` on random rows of its own key range (client `c`
//!    of `n` owns ids `[c*rows/n, (c+1)*rows/n)`), so clients never wait for each
//!    other's locks: only for the log. After a warm-up, committed transactions are
//!    counted for `--seconds`; the log's counters over the same window give flushes
//!    and commits per flush (group commit). The client models (`--client-model`):
//!    - `pool`: the clients are sessions served by a fixed pool of `--workers`
//!      threads (default: one per core), as `tarn serve` serves connections. A
//!      committed transaction waits for the log without holding its worker
//!      ([`Storage::commit_nowait`]); the worker runs its other sessions meanwhile and
//!      sleeps only when none is ready. Latency runs from the moment the session was
//!      ready, so time queued for a worker counts.
//!    - `threads`: one OS thread per client, each sleeping until its commit is
//!      durable (`CommitTicket::wait`, as [`Storage::commit`] does), as MySQL's one
//!      thread per connection does. With
//!      more clients than cores, every commit costs the thread a sleep and a wake-up,
//!      and the scheduler, not the log, sets the pace.
//! 4. Verification: after each row every client's last committed update is read back
//!    and must hold the value it wrote; an update that finds no row fails the bench.
//!
//! # Figures
//! - `commits_per_sec`: committed transactions completed in the window / its seconds.
//! - `flushes_per_sec`: the log's durability steps in the window (`fdatasync`s for
//!   fsync, durable write rounds for dsync, stamps for pmem, none for none).
//! - `commits_per_flush`: commits acknowledged in the window / flushes in it (group
//!   commit factor).
//! - `p50_us`, `p99_us`: latency of a whole transaction, begin to commit acknowledged.
//! - `vs_1_client`: commits/s over the same device's 1-client commits/s.
//! - `summary.group_commit_speedup_64`: fsync commits/s at 64 clients with the `pool`
//!   model (as `tarn serve` runs them) / `summary.fsync_1_client_per_sec`, the better of
//!   the two models' 1-client rows; `summary.group_commit_speedup_64_threads` the same
//!   with `threads`.

pub(crate) mod driver;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Instant;

use parking_lot::Mutex;
use serde::Serialize;
use serde_json::Value as Json;

use tarn_catalog::{RowLock, Storage, Table, TableDef};
use tarn_common::rng::Rng;
use tarn_common::settings::{LogDevice, Settings};
use tarn_row::{Column, ColumnType, Value};

use crate::fio::{self, Fio};
use crate::report::{
    BenchDocument, Output, Table as TextTable, data_dir_fate, format_count, format_number,
    format_ratio, ratio,
};
use crate::workdir::WorkDir;
use crate::{BenchError, Result};
use driver::{
    Attempt, Outcome, ShmLogDir, abort_outcome, check_clients, check_seconds, run_clients,
    run_pooled,
};

pub const DATABASE: &str = "bench_commit";
pub const TABLE: &str = "t";
pub const ROWS_DEFAULT: u64 = 100_000;
pub const CLIENTS_DEFAULT: [usize; 5] = [1, 8, 64, 256, 512];
pub const CLIENTS_QUICK: [usize; 3] = [1, 8, 64];
pub const CLIENTS_MAX: usize = 4096;
pub const DEVICES_QUICK: [LogDevice; 3] = [LogDevice::Fsync, LogDevice::Pmem, LogDevice::None];
pub const SECONDS_DEFAULT: f64 = 3.0;
pub const SECONDS_QUICK: f64 = 1.0;
/// Warm-up before each measured window: this share of `--seconds`, at least
/// [`WARMUP_SECONDS_MIN`] and at most [`WARMUP_SECONDS_MAX`].
const WARMUP_SHARE: f64 = 0.25;
const WARMUP_SECONDS_MIN: f64 = 0.1;
const WARMUP_SECONDS_MAX: f64 = 1.0;
/// The log the bench runs with unless `--set` says otherwise: checkpoints must not
/// dominate.
pub const LOG_FILE_SIZE_BYTES: u64 = 256 << 20;
pub const LOG_FILES: u32 = 4;
pub const SEED_DEFAULT: u64 = 0xC0_4417;
/// The most pooled workers `--workers` accepts.
pub const WORKERS_MAX: usize = 256;

/// How the clients are run (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClientModel {
    /// Sessions on a fixed pool of worker threads, as `tarn serve` runs connections.
    Pool,
    /// One OS thread per client.
    Threads,
}

impl ClientModel {
    pub const ALL: [ClientModel; 2] = [ClientModel::Pool, ClientModel::Threads];

    pub fn name(self) -> &'static str {
        match self {
            ClientModel::Pool => "pool",
            ClientModel::Threads => "threads",
        }
    }

    pub fn parse(text: &str) -> Option<ClientModel> {
        ClientModel::ALL.into_iter().find(|m| m.name() == text)
    }
}
/// The pad column's length.
const PAD_BYTES: usize = 100;
/// The fio job's file, block size and size.
const FIO_FILE: &str = "fio-fdatasync.tmp";
const FIO_BLOCK: &str = "4k";
const FIO_SIZE: &str = "16m";
/// The marker of a loaded data directory: holds the row count.
const MARKER: &str = "tarn-bench-commit.loaded";

/// What `tarn bench commit` was asked to do.
#[derive(Clone, Debug)]
pub struct CommitBenchOptions {
    /// Engine settings (from `--set`); the bench sets `data_dir`, `log_device`,
    /// `log_dir` and `flush_log_at_commit = 1`, and a log of 4 x 256 MiB unless
    /// `log_file_size` or `log_files` was given.
    pub settings: Settings,
    pub quick: bool,
    pub data_dir: Option<PathBuf>,
    /// Measured seconds per row (also fio's run time).
    pub seconds: f64,
    pub devices: Vec<LogDevice>,
    pub clients: Vec<usize>,
    pub client_models: Vec<ClientModel>,
    /// Worker threads of the `pool` model.
    pub workers: usize,
    pub rows: u64,
    pub fio: bool,
    pub seed: u64,
}

impl CommitBenchOptions {
    pub fn new(settings: Settings, quick: bool) -> CommitBenchOptions {
        CommitBenchOptions {
            settings,
            quick,
            data_dir: None,
            seconds: if quick {
                SECONDS_QUICK
            } else {
                SECONDS_DEFAULT
            },
            devices: if quick {
                DEVICES_QUICK.to_vec()
            } else {
                LogDevice::ALL.to_vec()
            },
            clients: if quick {
                CLIENTS_QUICK.to_vec()
            } else {
                CLIENTS_DEFAULT.to_vec()
            },
            client_models: ClientModel::ALL.to_vec(),
            workers: crate::scan::cores(),
            rows: ROWS_DEFAULT,
            fio: true,
            seed: SEED_DEFAULT,
        }
    }

    fn validated(&self) -> Result<(Vec<LogDevice>, Vec<usize>)> {
        check_seconds(self.seconds, "--seconds")?;
        let clients = check_clients(&self.clients, CLIENTS_MAX)?;
        let mut devices = Vec::new();
        for device in &self.devices {
            if !devices.contains(device) {
                devices.push(*device);
            }
        }
        if devices.is_empty() {
            return Err(BenchError::Options("--devices selects nothing".into()));
        }
        if self.client_models.is_empty() {
            return Err(BenchError::Options("--client-model selects nothing".into()));
        }
        if self.workers == 0 || self.workers > WORKERS_MAX {
            return Err(BenchError::Options(format!(
                "--workers must be from 1 to {WORKERS_MAX}, not {}",
                self.workers
            )));
        }
        let most = *clients.last().expect("not empty");
        if self.rows < most as u64 || self.rows > 100_000_000 {
            return Err(BenchError::Options(format!(
                "--rows must be at least the largest client count ({most}) and at most \
                 100,000,000, not {}",
                self.rows
            )));
        }
        Ok((devices, clients))
    }
}

/// fio's fdatasync rate on the data directory's device.
#[derive(Clone, Debug, Serialize)]
pub struct FdatasyncResult {
    /// `fdatasync` calls per second (each after one 4 KiB write).
    pub per_sec: f64,
    pub syncs: u64,
    pub seconds: f64,
    pub p50_us: Option<f64>,
    pub p99_us: Option<f64>,
    pub command: String,
}

/// One measured configuration (device x clients), as printed and in the JSON `rows`.
#[derive(Clone, Debug, Serialize)]
pub struct CommitRow {
    pub device: String,
    /// `pool` or `threads` (see the module docs).
    pub client_model: String,
    /// Worker threads serving the clients (`pool`), or `null` (one per client).
    pub workers: Option<usize>,
    pub clients: usize,
    pub seconds: f64,
    pub commits: u64,
    pub commits_per_sec: f64,
    pub flushes: u64,
    pub flushes_per_sec: f64,
    /// Commit waits per flush; `null` when the device never flushes (none).
    pub commits_per_flush: Option<f64>,
    pub p50_us: Option<f64>,
    pub p99_us: Option<f64>,
    pub p999_us: Option<f64>,
    /// commits_per_sec / the same device's and model's 1-client commits_per_sec.
    pub vs_1_client: Option<f64>,
    /// Log bytes appended per commit, and log writes (`pwrite`s) per second.
    pub log_bytes_per_commit: Option<f64>,
    pub log_writes_per_sec: f64,
    /// Appends that waited for log buffer space.
    pub log_append_waits: u64,
    /// Deadlocks, lock-wait timeouts and duplicate keys (none expected: clients own
    /// their rows).
    pub aborts: u64,
}

/// The figures the team checks; `null` when an input was not measured.
#[derive(Clone, Debug, Serialize)]
pub struct CommitSummary {
    /// fsync commits/s at 64 clients on the worker pool (as `tarn serve` runs them) /
    /// `fsync_1_client_per_sec`. The figures below are of the pool model too.
    pub group_commit_speedup_64: Option<f64>,
    /// The same with one thread per client.
    pub group_commit_speedup_64_threads: Option<f64>,
    /// The 1-client fsync rate both speedups divide by: the better of the two models'
    /// 1-client rows. One client is the same workload either way, and the row measured
    /// first after the load can be slowed by the load's write-back; taking the better
    /// one keeps the speedups from gaining by it.
    pub fsync_1_client_per_sec: Option<f64>,
    /// fsync commits per flush at 64 clients.
    pub group_commit_factor_64: Option<f64>,
    /// fio's fdatasync rate on the data directory's device (`null` without fio).
    pub fio_fdatasync_per_sec: Option<f64>,
    /// fsync commits/s at 1 client / fio's fdatasync rate (1 = one commit per device
    /// flush at the device's own speed).
    pub fsync_1_client_vs_fio: Option<f64>,
    /// fsync commits/s at 64 clients / fio's fdatasync rate.
    pub fsync_64_vs_fio: Option<f64>,
    /// pmem and none commits/s at 64 clients / fsync's.
    pub pmem_vs_fsync_64: Option<f64>,
    pub none_vs_fsync_64: Option<f64>,
    /// commits/s by device at 1 and 64 clients, and the best over client counts.
    pub commits_per_sec_1: BTreeMap<String, f64>,
    pub commits_per_sec_64: BTreeMap<String, f64>,
    pub peak_commits_per_sec: BTreeMap<String, f64>,
    pub peak_clients: BTreeMap<String, usize>,
    pub commits_total: u64,
    pub rows_verified: u64,
}

/// What the run measured under which conditions (the JSON `config`).
#[derive(Clone, Debug, Serialize)]
pub struct CommitBenchConfig {
    pub quick: bool,
    pub data_dir: String,
    pub data_dir_kept: bool,
    pub rows: u64,
    pub seconds_per_row: f64,
    pub warmup_seconds: f64,
    pub devices: Vec<String>,
    pub devices_skipped: Vec<String>,
    pub clients: Vec<usize>,
    pub client_models: Vec<&'static str>,
    pub workers: usize,
    pub log_file_size_bytes: u64,
    pub log_files: u32,
    pub log_buffer_size_bytes: u64,
    pub buffer_pool_size_bytes: u64,
    pub doublewrite: bool,
    pub pmem_log_dir: Option<String>,
    pub loaded: Vec<String>,
    pub seed: u64,
    pub transaction: &'static str,
    pub latency: &'static str,
    pub fio: bool,
    pub fio_version: Option<String>,
    pub fio_fdatasync: Option<FdatasyncResult>,
    pub fio_note: Option<String>,
    pub baseline: &'static str,
}

/// A finished run.
pub struct CommitReport {
    pub config: CommitBenchConfig,
    pub rows: Vec<CommitRow>,
    pub summary: CommitSummary,
}

const TRANSACTION: &str = "BEGIN; UPDATE bench_commit.t SET val = ? WHERE id = ? (a random row \
     of the client's own id range: no lock conflicts); COMMIT";
const LATENCY: &str = "from the client being ready (its previous commit acknowledged) to its \
     commit acknowledged, per committed transaction; with a thread each the client is ready \
     as it begins";
const BASELINE: &str = "fio: 4 KiB sequential writes with fdatasync after each, 16 MiB file \
     in the data directory (the device's own flush rate); and each device's 1-client row";

/// Runs the bench and prints its tables and notes (and, with `--json`, the document).
pub fn run_and_print(options: &CommitBenchOptions, output: &Output) -> Result<CommitReport> {
    let report = run(options, output)?;
    print(&report, output)?;
    Ok(report)
}

/// The warm-up before each measured window of `seconds`.
fn warmup_seconds(seconds: f64) -> f64 {
    (seconds * WARMUP_SHARE).clamp(WARMUP_SECONDS_MIN, WARMUP_SECONDS_MAX)
}

/// Runs the bench, printing progress lines only.
pub fn run(options: &CommitBenchOptions, output: &Output) -> Result<CommitReport> {
    let (devices, clients) = options.validated()?;
    let workdir = WorkDir::open(options.data_dir.as_deref(), ".tarn-bench-commit-")?;
    workdir.warn_if_in_memory(
        output,
        "the fsync and dsync rows and fio measure memory, not a device",
    );
    let warmup = warmup_seconds(options.seconds);
    output.progress(&format!(
        "tarn bench commit: {} devices x {} client counts, {:.1} s each after {:.2} s of \
         warm-up, {} rows, data in '{}'",
        devices.len(),
        clients.len(),
        options.seconds,
        warmup,
        options.rows,
        workdir.path().display()
    ));

    // fio first: the device's own fdatasync rate.
    let (fio_version, fio_fdatasync, fio_note) = if options.fio {
        match Fio::find_or_install(output) {
            Ok(fio) => {
                let result = run_fio_fdatasync(&fio, workdir.path(), options.seconds)?;
                output.progress(&format!(
                    "fio fdatasync: {} syncs/s (p50 {} us, p99 {} us)",
                    format_count(Some(result.per_sec)),
                    format_number(result.p50_us, 0),
                    format_number(result.p99_us, 0)
                ));
                (Some(fio.version().to_string()), Some(result), None)
            }
            Err(error) => {
                let note = format!("fio not run: {error}");
                output.progress(&note);
                (None, None, Some(note))
            }
        }
    } else {
        (None, None, Some("fio not run (--no-fio)".to_string()))
    };

    let mut base = options.settings.clone();
    base.flush_log_at_commit = 1;
    driver::bench_log_geometry(&mut base, LOG_FILE_SIZE_BYTES, LOG_FILES);

    let mut rows: Vec<CommitRow> = Vec::new();
    let mut loaded = Vec::new();
    let mut skipped = Vec::new();
    let mut pmem_log_dir = None;
    let mut rows_verified = 0u64;
    let mut cell = 0u64;
    let models = &options.client_models;
    let cells = devices.len() * models.len() * clients.len();
    for &device in &devices {
        let shm = if device == LogDevice::Pmem {
            match ShmLogDir::create("tarn-bench-commit", "pmem")? {
                Some(dir) => Some(dir),
                None => {
                    let note = "pmem: skipped, /dev/shm is missing".to_string();
                    output.progress(&note);
                    skipped.push(note);
                    continue;
                }
            }
        } else {
            None
        };
        let data = workdir.path().join(format!("commit-{device}"));
        let mut settings = base.clone();
        settings.data_dir = data.clone();
        settings.log_device = device;
        settings.log_dir = shm
            .as_ref()
            .map(|d| d.path().to_path_buf())
            .unwrap_or_default();
        if let Some(dir) = &shm {
            pmem_log_dir = Some(dir.path().display().to_string());
        }
        settings.validate()?;
        // A pmem log does not outlive the run, so its data directory is always new.
        let reuse = device != LogDevice::Pmem && !workdir.is_temporary();
        let storage = open_loaded(&settings, &data, options.rows, reuse, output, &mut loaded)?;
        let table = storage.table(DATABASE, TABLE)?;
        for (&model, &n) in models
            .iter()
            .flat_map(|m| clients.iter().map(move |n| (m, n)))
        {
            cell += 1;
            let workers = (model == ClientModel::Pool).then(|| options.workers.min(n));
            let label = format!("{device} {n} clients ({})", clients_on(workers));
            let measured = measure_cell(&storage, &table, options, model, n, cell, warmup, &label)?;
            rows_verified += measured.verified;
            let first_rate = rows
                .iter()
                .find(|r| {
                    r.device == device.name()
                        && r.client_model == model.name()
                        && r.clients == clients[0]
                })
                .map(|r| r.commits_per_sec);
            let row = measured.row(device, model, workers, n, first_rate);
            output.progress(&format!(
                "[{cell}/{cells}] {label}: {} commits/s, {} flushes/s, {} commits/flush, \
                 p50 {} us, p99 {} us",
                format_count(Some(row.commits_per_sec)),
                format_count(Some(row.flushes_per_sec)),
                format_number(row.commits_per_flush, 1),
                format_number(row.p50_us, 0),
                format_number(row.p99_us, 0),
            ));
            rows.push(row);
        }
        drop(table);
        drop(storage);
        if device == LogDevice::Pmem {
            // Its log is about to be removed: the data directory is useless without it.
            let _ = std::fs::remove_dir_all(&data);
        }
        drop(shm);
    }
    // vs_1_client is only meaningful when 1 client was measured.
    if !clients.contains(&1) {
        for row in &mut rows {
            row.vs_1_client = None;
        }
    }
    let fio_rate = fio_fdatasync.as_ref().map(|f| f.per_sec);
    let summary = summarize(&rows, fio_rate, rows_verified);
    let config = CommitBenchConfig {
        quick: options.quick,
        data_dir: workdir.path().display().to_string(),
        data_dir_kept: !workdir.is_temporary(),
        rows: options.rows,
        seconds_per_row: options.seconds,
        warmup_seconds: warmup,
        devices: crate::report::distinct(rows.iter().map(|r| r.device.clone())),
        devices_skipped: skipped,
        clients: clients.clone(),
        client_models: models.iter().map(|m| m.name()).collect(),
        workers: options.workers,
        log_file_size_bytes: base.log_file_size_bytes,
        log_files: base.log_files,
        log_buffer_size_bytes: base.log_buffer_size_bytes,
        buffer_pool_size_bytes: base.buffer_pool_size_bytes,
        doublewrite: base.doublewrite,
        pmem_log_dir,
        loaded,
        seed: options.seed,
        transaction: TRANSACTION,
        latency: LATENCY,
        fio: fio_fdatasync.is_some(),
        fio_version,
        fio_fdatasync,
        fio_note,
        baseline: BASELINE,
    };
    drop(workdir);
    Ok(CommitReport {
        config,
        rows,
        summary,
    })
}

/// The table's definition.
fn definition() -> TableDef {
    TableDef::new(
        TABLE,
        vec![
            Column::new("id", ColumnType::BigInt { unsigned: false }, false),
            Column::new("val", ColumnType::BigInt { unsigned: false }, false),
            Column::new(
                "pad",
                ColumnType::VarChar {
                    len: PAD_BYTES as u32,
                },
                false,
            ),
        ],
        &[0],
    )
}

/// The pad of row `id`: printable, fixed per row.
fn pad(id: i64) -> Vec<u8> {
    let mut rng = Rng::new(id as u64 ^ 0x9AD);
    (0..PAD_BYTES).map(|_| b'a' + rng.below(26) as u8).collect()
}

/// Opens the storage of `settings` with the table loaded: reused when `reuse` and its
/// marker says `rows` rows were loaded, else loaded into an emptied directory.
fn open_loaded(
    settings: &Settings,
    data: &Path,
    rows: u64,
    reuse: bool,
    output: &Output,
    loaded: &mut Vec<String>,
) -> Result<Storage> {
    let marker = data.join(MARKER);
    let device = settings.log_device;
    if reuse
        && std::fs::read_to_string(&marker)
            .ok()
            .and_then(|text| text.trim().parse::<u64>().ok())
            == Some(rows)
    {
        let storage = Storage::open(settings)?;
        if storage.table(DATABASE, TABLE).is_ok() {
            loaded.push(format!(
                "{device}: reused {rows} rows in '{}'",
                data.display()
            ));
            return Ok(storage);
        }
    }
    driver::fresh_dir(data)?;
    output.progress(&format!(
        "{device}: loading {rows} rows into '{}' ...",
        data.display()
    ));
    let started = Instant::now();
    let storage = Storage::open(settings)?;
    storage.create_database(DATABASE)?;
    let table = storage.create_table(DATABASE, definition())?;
    let count = table.bulk_load(
        (0..rows as i64).map(|id| Ok(vec![Value::Int(id), Value::Int(0), Value::Bytes(pad(id))])),
    )?;
    if count != rows {
        return Err(BenchError::WrongData {
            row: format!("{device} load"),
            detail: format!("bulk load stored {count} rows, not {rows}"),
        });
    }
    storage.checkpoint()?;
    std::fs::write(&marker, format!("{rows}\n")).map_err(|source| BenchError::Os {
        what: format!("writing '{}'", marker.display()),
        source,
    })?;
    loaded.push(format!(
        "{device}: loaded {rows} rows in {:.2} s",
        started.elapsed().as_secs_f64()
    ));
    Ok(storage)
}

/// What one cell measured.
struct CellMeasurement {
    seconds: f64,
    commits: u64,
    aborts: u64,
    p50_us: Option<f64>,
    p99_us: Option<f64>,
    p999_us: Option<f64>,
    flushes: u64,
    bytes_appended: u64,
    writes: u64,
    append_waits: u64,
    verified: u64,
}

impl CellMeasurement {
    fn row(
        &self,
        device: LogDevice,
        model: ClientModel,
        workers: Option<usize>,
        clients: usize,
        first_rate: Option<f64>,
    ) -> CommitRow {
        let seconds = self.seconds.max(f64::MIN_POSITIVE);
        let commits_per_sec = self.commits as f64 / seconds;
        CommitRow {
            device: device.to_string(),
            client_model: model.name().to_string(),
            workers,
            clients,
            seconds: self.seconds,
            commits: self.commits,
            commits_per_sec,
            flushes: self.flushes,
            flushes_per_sec: self.flushes as f64 / seconds,
            commits_per_flush: ratio(Some(self.commits as f64), Some(self.flushes as f64)),
            p50_us: self.p50_us,
            p99_us: self.p99_us,
            p999_us: self.p999_us,
            vs_1_client: ratio(Some(commits_per_sec), first_rate.or(Some(commits_per_sec))),
            log_bytes_per_commit: ratio(
                Some(self.bytes_appended as f64),
                Some(self.commits as f64),
            ),
            log_writes_per_sec: self.writes as f64 / seconds,
            log_append_waits: self.append_waits,
            aborts: self.aborts,
        }
    }
}

/// How a row's clients are run, as its label shows it: on a pool of `workers`
/// threads, or (`None`) a thread each.
fn clients_on(workers: Option<usize>) -> String {
    match workers {
        Some(workers) => format!("pool of {workers}"),
        None => "a thread each".to_string(),
    }
}

/// Runs `clients` clients against `table` for a warm-up and `options.seconds`, then
/// verifies each client's last committed update.
#[allow(clippy::too_many_arguments)]
fn measure_cell(
    storage: &Storage,
    table: &Arc<Table>,
    options: &CommitBenchOptions,
    model: ClientModel,
    clients: usize,
    cell: u64,
    warmup: f64,
    label: &str,
) -> Result<CellMeasurement> {
    let rows = options.rows;
    let last: Vec<Mutex<Option<(i64, i64)>>> = (0..clients).map(|_| Mutex::new(None)).collect();
    let wal = &storage.txn_context().wal;
    let make_client = |client: usize| -> Result<_> {
        let low = (client as u64 * rows / clients as u64) as i64;
        let high = ((client as u64 + 1) * rows / clients as u64) as i64;
        let span = (high - low).max(1) as u64;
        let mut rng = Rng::new(
            options.seed
                ^ cell.wrapping_mul(0x9E37_79B9_7F4A_7C15)
                ^ (client as u64).wrapping_mul(0xBF58_476D_1CE4_E5B9),
        );
        let table = table.clone();
        let slot = &last[client];
        let mut seq: i64 = 0;
        Ok(move || -> Result<Attempt> {
            let id = low + rng.below(span) as i64;
            seq += 1;
            let val = ((cell as i64) << 48) | ((client as i64) << 32) | (seq & 0xFFFF_FFFF);
            let mut tx = storage.begin(None, false);
            match table.update_tx(
                &mut tx,
                &[Value::Int(id)],
                vec![Value::Int(id), Value::Int(val), Value::Bytes(pad(id))],
            ) {
                Ok(true) => {}
                Ok(false) => {
                    storage.rollback(tx)?;
                    return Err(BenchError::WrongData {
                        row: label.to_string(),
                        detail: format!("the update of id {id} found no row"),
                    });
                }
                Err(error) => {
                    storage.rollback(tx)?;
                    return abort_outcome(error).map(Attempt::Done);
                }
            }
            let ticket = storage.commit_nowait(tx)?;
            // Visible now; the verification reads it after every client stopped.
            *slot.lock() = Some((id, val));
            Ok(Attempt::Committing(ticket))
        })
    };
    let phases = [false, true, false];
    let schedule = |control: &driver::Control| {
        control.sleep(warmup);
        wal.reset_stats();
        control.enter(1);
        let started = Instant::now();
        control.sleep(options.seconds);
        control.enter(2);
        let stats = wal.stats();
        Ok((started.elapsed().as_secs_f64(), stats))
    };
    let ((seconds, stats), phases) = match model {
        ClientModel::Pool => run_pooled(options.workers, clients, &phases, make_client, schedule)?,
        ClientModel::Threads => run_clients(
            clients,
            &phases,
            |client| {
                let mut attempt = make_client(client)?;
                Ok(move || match attempt()? {
                    Attempt::Done(outcome) => Ok(outcome),
                    Attempt::Committing(ticket) => {
                        ticket.wait()?;
                        Ok(Outcome::Committed)
                    }
                })
            },
            schedule,
        )?,
    };
    let measured = &phases[1];

    // Every client's last committed value must be what a new transaction reads.
    let mut verified = 0;
    let mut tx = storage.begin(None, true);
    for (client, slot) in last.iter().enumerate() {
        let Some((id, val)) = *slot.lock() else {
            continue;
        };
        let row = table.get_tx(&mut tx, &[Value::Int(id)], RowLock::None)?;
        let found = row.as_ref().and_then(|r| match r.get(1) {
            Some(Value::Int(v)) => Some(*v),
            _ => None,
        });
        if found != Some(val) {
            return Err(BenchError::WrongData {
                row: label.to_string(),
                detail: format!(
                    "client {} committed val {val} to id {id}, but a later read found {found:?}",
                    client + 1
                ),
            });
        }
        verified += 1;
    }
    storage.commit(tx)?;

    Ok(CellMeasurement {
        seconds,
        commits: measured.committed,
        aborts: measured.deadlocks + measured.timeouts + measured.duplicates,
        p50_us: measured.latency_quantile_us(0.5),
        p99_us: measured.latency_quantile_us(0.99),
        p999_us: measured.latency_quantile_us(0.999),
        flushes: stats.flushes,
        bytes_appended: stats.bytes_appended,
        writes: stats.writes,
        append_waits: stats.append_waits,
        verified,
    })
}

/// The fio command line of the fdatasync baseline.
fn fio_args(file: &Path, seconds: f64) -> Vec<String> {
    vec![
        "--name=fsync".into(),
        format!("--filename={}", file.display()),
        "--rw=write".into(),
        format!("--bs={FIO_BLOCK}"),
        format!("--size={FIO_SIZE}"),
        "--fdatasync=1".into(),
        format!("--runtime={}ms", fio::runtime_ms(seconds)),
        "--time_based".into(),
        "--output-format=json".into(),
        "--eta=never".into(),
    ]
}

/// Runs fio's fdatasync job on a file in `dir` (removed afterwards).
fn run_fio_fdatasync(fio: &Fio, dir: &Path, seconds: f64) -> Result<FdatasyncResult> {
    let file = dir.join(FIO_FILE);
    let args = fio_args(&file, seconds);
    let out = Command::new(fio.program())
        .args(&args)
        .stdin(Stdio::null())
        .output();
    let _ = std::fs::remove_file(&file);
    let out =
        out.map_err(|e| BenchError::Fio(format!("cannot run '{}': {e}", fio.program().display())))?;
    let command = format!("fio {}", args.join(" "));
    if !out.status.success() {
        return Err(BenchError::Fio(format!(
            "`{command}` exited with {}: {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    parse_fdatasync(&String::from_utf8_lossy(&out.stdout), command).map_err(BenchError::Fio)
}

/// Reads the fdatasync rate from fio's JSON output: the `sync` section's latency count
/// (fio leaves its `total_ios` at 0) over the job's run time.
pub fn parse_fdatasync(
    text: &str,
    command: String,
) -> std::result::Result<FdatasyncResult, String> {
    let start = text
        .find('{')
        .ok_or_else(|| "no JSON object in fio's output".to_string())?;
    let document: Json = serde_json::from_str(&text[start..])
        .map_err(|e| format!("fio's JSON output does not parse: {e}"))?;
    let job = &document["jobs"][0];
    if !job.is_object() {
        return Err("fio's JSON output has no jobs".into());
    }
    let error = job["error"].as_i64().unwrap_or(0);
    if error != 0 {
        return Err(format!("the fio job failed with error {error}"));
    }
    let sync = &job["sync"]["lat_ns"];
    let syncs = sync["N"]
        .as_u64()
        .filter(|n| *n > 0)
        .or_else(|| job["sync"]["total_ios"].as_u64().filter(|n| *n > 0))
        .or_else(|| job["write"]["total_ios"].as_u64())
        .unwrap_or(0);
    let runtime_ms = job["job_runtime"]
        .as_f64()
        .filter(|ms| *ms > 0.0)
        .or_else(|| job["write"]["runtime"].as_f64())
        .unwrap_or(0.0);
    if syncs == 0 || runtime_ms <= 0.0 {
        return Err("fio reported no fdatasyncs".into());
    }
    let seconds = runtime_ms / 1000.0;
    let percentile = |key: &str| sync["percentile"][key].as_f64().map(|ns| ns / 1000.0);
    Ok(FdatasyncResult {
        per_sec: syncs as f64 / seconds,
        syncs,
        seconds,
        p50_us: percentile("50.000000"),
        p99_us: percentile("99.000000"),
        command,
    })
}

/// The summary of the measured rows.
pub fn summarize(
    rows: &[CommitRow],
    fio_per_sec: Option<f64>,
    rows_verified: u64,
) -> CommitSummary {
    let in_model = |model: ClientModel| rows.iter().filter(move |r| r.client_model == model.name());
    let find = |device: LogDevice, clients: usize| {
        in_model(ClientModel::Pool).find(|r| r.device == device.name() && r.clients == clients)
    };
    let rate = |device: LogDevice, clients: usize| find(device, clients).map(|r| r.commits_per_sec);
    let threads_rate = |clients: usize| {
        in_model(ClientModel::Threads)
            .find(|r| r.device == LogDevice::Fsync.name() && r.clients == clients)
            .map(|r| r.commits_per_sec)
    };
    let by_device = |clients: usize| -> BTreeMap<String, f64> {
        in_model(ClientModel::Pool)
            .filter(|r| r.clients == clients)
            .map(|r| (r.device.clone(), r.commits_per_sec))
            .collect()
    };
    let mut peak_commits_per_sec = BTreeMap::new();
    let mut peak_clients = BTreeMap::new();
    for row in in_model(ClientModel::Pool) {
        let best = peak_commits_per_sec
            .entry(row.device.clone())
            .or_insert(0.0);
        if row.commits_per_sec > *best {
            *best = row.commits_per_sec;
            peak_clients.insert(row.device.clone(), row.clients);
        }
    }
    let fsync_64 = rate(LogDevice::Fsync, 64);
    let one_client = [rate(LogDevice::Fsync, 1), threads_rate(1)]
        .into_iter()
        .flatten()
        .max_by(f64::total_cmp);
    CommitSummary {
        group_commit_speedup_64: ratio(fsync_64, one_client),
        group_commit_speedup_64_threads: ratio(threads_rate(64), one_client),
        fsync_1_client_per_sec: one_client,
        group_commit_factor_64: find(LogDevice::Fsync, 64).and_then(|r| r.commits_per_flush),
        fio_fdatasync_per_sec: fio_per_sec,
        fsync_1_client_vs_fio: ratio(one_client, fio_per_sec),
        fsync_64_vs_fio: ratio(fsync_64, fio_per_sec),
        pmem_vs_fsync_64: ratio(rate(LogDevice::Pmem, 64), fsync_64),
        none_vs_fsync_64: ratio(rate(LogDevice::None, 64), fsync_64),
        commits_per_sec_1: by_device(1),
        commits_per_sec_64: by_device(64),
        peak_commits_per_sec,
        peak_clients,
        commits_total: rows.iter().map(|r| r.commits).sum(),
        rows_verified,
    }
}

/// Prints the notes and tables, and the JSON document in `--json` mode.
pub fn print(report: &CommitReport, output: &Output) -> Result<()> {
    let config = &report.config;
    output.note(&format!(
        "\ntarn bench commit (S3): committed single-row update transactions per second by \
         log device and clients, {} rows, data in '{}'{}",
        config.rows,
        config.data_dir,
        data_dir_fate(config.data_dir_kept)
    ));
    output.note(&format!("- transaction: {}", config.transaction));
    output.note(&format!(
        "- {:.1} s measured per row after {:.2} s of warm-up; flush_log_at_commit = 1; log \
         {} x {} MiB; buffer pool {} MiB; doublewrite {}{}",
        config.seconds_per_row,
        config.warmup_seconds,
        config.log_files,
        config.log_file_size_bytes >> 20,
        config.buffer_pool_size_bytes >> 20,
        if config.doublewrite { "on" } else { "off" },
        config
            .pmem_log_dir
            .as_ref()
            .map(|d| format!("; pmem log in '{d}' (tmpfs emulating persistent memory)"))
            .unwrap_or_default()
    ));
    for line in &config.loaded {
        output.note(&format!("- {line}"));
    }
    for line in &config.devices_skipped {
        output.note(&format!("- {line}"));
    }
    match (&config.fio_fdatasync, &config.fio_note) {
        (Some(fio), _) => output.note(&format!(
            "- baseline: fio {} fdatasyncs/s (p50 {} us, p99 {} us) over {:.1} s: `{}`",
            format_count(Some(fio.per_sec)),
            format_number(fio.p50_us, 0),
            format_number(fio.p99_us, 0),
            fio.seconds,
            fio.command
        )),
        (None, Some(note)) => output.note(&format!("- baseline: {note}")),
        (None, None) => {}
    }
    output.note(
        "- commits/flush: commits acknowledged / the log's durability steps (fdatasync for \
         fsync, durable write rounds for dsync, stamps for pmem; none never flushes); \
         latency: client ready (previous commit acknowledged) to commit acknowledged; \
         vs 1 client: commits/s / the same device's and model's 1-client commits/s",
    );
    output.note(&format!(
        "- clients on: `pool of N`: sessions served by N worker threads, each commit \
         waiting for the log without holding its worker (as tarn serve runs \
         connections); `a thread each`: one OS thread per client sleeping in its commit \
         (as MySQL runs connections); {} cores",
        crate::scan::cores()
    ));
    let mut table = TextTable::new(
        "commits per second by log device and clients",
        &[
            "device",
            "clients on",
            "clients",
            "commits/s",
            "flushes/s",
            "commits/flush",
            "p50 us",
            "p99 us",
            "vs 1 client",
        ],
    );
    for row in &report.rows {
        table.add_row(vec![
            row.device.clone(),
            clients_on(row.workers),
            row.clients.to_string(),
            format_count(Some(row.commits_per_sec)),
            format_count(Some(row.flushes_per_sec)),
            format_number(row.commits_per_flush, 1),
            format_number(row.p50_us, 0),
            format_number(row.p99_us, 0),
            format_ratio(row.vs_1_client),
        ]);
    }
    output.table(&table);
    let summary = &report.summary;
    output.note(&format!(
        "\ngroup commit speedup (fsync, 64 clients / the better 1-client row): {} on the \
         worker pool, {} with a thread each; commits per flush at 64: {}; fsync 1 client / \
         fio fdatasync: {}; pmem / fsync at 64: {}; none / fsync at 64: {}",
        format_ratio(summary.group_commit_speedup_64),
        format_ratio(summary.group_commit_speedup_64_threads),
        format_number(summary.group_commit_factor_64, 1),
        format_ratio(summary.fsync_1_client_vs_fio),
        format_ratio(summary.pmem_vs_fsync_64),
        format_ratio(summary.none_vs_fsync_64),
    ));
    output.json(&BenchDocument::new("commit", config, &report.rows, summary))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(device: &str, clients: usize, rate: f64) -> CommitRow {
        CommitRow {
            device: device.into(),
            client_model: "pool".into(),
            workers: Some(2),
            clients,
            seconds: 1.0,
            commits: rate as u64,
            commits_per_sec: rate,
            flushes: 10,
            flushes_per_sec: 10.0,
            commits_per_flush: Some(rate / 10.0),
            p50_us: None,
            p99_us: None,
            p999_us: None,
            vs_1_client: None,
            log_bytes_per_commit: None,
            log_writes_per_sec: 0.0,
            log_append_waits: 0,
            aborts: 0,
        }
    }

    #[test]
    fn the_summary_names_the_fsync_speedup_and_null_when_missing() {
        let rows = vec![
            row("fsync", 1, 500.0),
            row("fsync", 64, 8000.0),
            row("pmem", 64, 40000.0),
        ];
        let summary = summarize(&rows, Some(1000.0), 3);
        assert_eq!(summary.group_commit_speedup_64, Some(16.0));
        assert_eq!(summary.group_commit_speedup_64_threads, None);
        assert_eq!(summary.fsync_1_client_vs_fio, Some(0.5));
        assert_eq!(summary.pmem_vs_fsync_64, Some(5.0));
        assert_eq!(summary.none_vs_fsync_64, None);
        assert_eq!(summary.peak_clients["fsync"], 64);
        // Both speedups divide by the better 1-client row of either model.
        let mut threads = vec![row("fsync", 1, 400.0), row("fsync", 64, 4000.0)];
        for r in &mut threads {
            r.client_model = "threads".into();
            r.workers = None;
        }
        let both: Vec<CommitRow> = rows.iter().cloned().chain(threads).collect();
        let summary = summarize(&both, None, 3);
        assert_eq!(summary.fsync_1_client_per_sec, Some(500.0));
        assert_eq!(summary.group_commit_speedup_64, Some(16.0));
        assert_eq!(summary.group_commit_speedup_64_threads, Some(8.0));
        let only_pmem = summarize(&rows[2..], None, 0);
        assert_eq!(only_pmem.group_commit_speedup_64, None);
        assert_eq!(only_pmem.fio_fdatasync_per_sec, None);
    }

    #[test]
    fn fio_fdatasync_output_parses() {
        let text = r#"{"jobs": [{"jobname": "fsync", "error": 0, "job_runtime": 1002,
            "write": {"iops": 8168.5, "total_ios": 8193, "runtime": 1002},
            "sync": {"total_ios": 0, "lat_ns": {"N": 8192,
                "percentile": {"50.000000": 116224, "99.000000": 189440}}}}]}"#;
        let result = parse_fdatasync(text, "fio".into()).unwrap();
        assert_eq!(result.syncs, 8192);
        assert!((result.per_sec - 8192.0 / 1.002).abs() < 1e-6);
        assert_eq!(result.p50_us, Some(116.224));
        assert!(parse_fdatasync(r#"{"jobs": [{"error": 5}]}"#, String::new()).is_err());
    }
}
