//! Tarn's benchmarks: the code behind `tarn bench <name>`.
//!
//! Each benchmark measures one layer of the engine against a baseline, in the same run,
//! so that every number it prints comes with the number it should be judged by.
//!
//! # Conventions (every `tarn bench` command, now and later)
//! - **Baseline in the same run.** A bench says what it measured against (fio on the
//!   same file, the technique switched off, or a peer database) and prints the ratio.
//! - **Output.** Human tables go to stdout; progress lines always go to stderr. With
//!   `--json`, stdout carries exactly one JSON object and nothing else:
//!   `{"bench": ..., "config": {...}, "rows": [...], "summary": {...}}` (see
//!   [`report`]); the tables then go to stderr.
//! - **Rows and summary.** A row is one measured configuration; the summary holds the
//!   few named ratios the team checks against the targets. Summary fields have
//!   the same names with and without `--quick`; a field whose inputs were not measured
//!   is `null`, never left out.
//! - **`--quick`** runs a small subset that finishes in under a minute.
//! - **`--data-dir DIR`** creates and loads the data once in `DIR` and reuses it on
//!   later runs; without it the bench works in a temporary directory on a real disk
//!   (never tmpfs) and removes it at the end ([`workdir`]).
//! - **Verification.** Benches check what they read (page checksums, row counts). Any
//!   error fails the bench with a message naming the row; a fast wrong answer is not a
//!   result.
//! - **No unsafe code** here: what needs the operating system lives in the engine's
//!   crates (for example [`tarn_io::os::process_cpu_time`]).
//!
//! # Modules
//! - [`recovery`]: `tarn bench recovery`, redo replay speed after a crash with a log
//!   of a given size.
//! - [`crash`]: the crash worker (`tarn crash-worker`) behind the crash tests and the
//!   recovery bench.
//! - [`report`]: tables, notes, progress lines and the `--json` document.
//! - [`workdir`]: where a bench keeps its data.
//! - [`stats`]: medians and ranges over a bench's rounds.
//! - [`fio`]: running fio and reading its JSON output.
//! - `load`: creating (once) and reusing the benches' data files.
//! - [`tpch`]: the TPC-H generator and loader; [`tpch::load::ensure_loaded`] loads it
//!   (once) for the TPC-H benches.
//! - [`io`]: `tarn bench io`, the S5 matrix of I/O paths against fio.
//! - [`bufferpool`]: `tarn bench bufferpool`, the S4 sweep of buffer-pool instances
//!   with latch waits per latch class.
//! - [`secondary`]: `tarn bench secondary`, the S2 cold secondary-index range scans by
//!   prefetch unit and selectivity, against no prefetch and fio.
//! - [`scan`]: `tarn bench scan`, the S1 parallel full scan of TPC-H `lineitem`, cold
//!   and warm, all columns and a narrow projection, at T = 1, 2, ... against fio's
//!   sequential read of the same file.
//! - [`commit`]: `tarn bench commit`, committed single-row update transactions per
//!   second by log device (fsync, dsync, pmem, none) and clients, with group commit's
//!   commits per flush, against fio's fdatasync rate.
//! - [`locks`]: `tarn bench locks`, the S3 LinkBench-like mix on a zipfian social
//!   graph by clients, lock scheduling (fifo, cats) and log device (fsync, pmem).
//! - [`wire`]: `tarn bench wire`, `SELECT * FROM lineitem` streamed over the MySQL
//!   protocol to a lean discarding client ([`wire::client`]) by `send_threads`, against
//!   the loopback transfer limit and MariaDB.
//! - [`sysbench`]: `tarn bench sysbench`, Debian's sysbench OLTP workloads against
//!   `tarn serve` and MariaDB with the same durability and buffer size.
//! - [`server`]: starting and stopping `tarn serve` (and any server) as a child process.
//! - [`mariadb`]: a private MariaDB server for the comparisons.

#![forbid(unsafe_code)]

pub mod bufferpool;
pub mod commit;
pub mod crash;
pub mod fio;
pub mod io;
pub(crate) mod load;
pub mod locks;
pub mod mariadb;
pub mod recovery;
pub mod report;
pub mod scan;
pub mod secondary;
pub mod server;
pub mod stats;
pub mod sysbench;
pub mod tpch;
pub mod wire;
pub mod workdir;

/// Why a benchmark failed.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// The engine returned an error while setting up or running.
    #[error(transparent)]
    Engine(#[from] tarn_common::Error),

    /// A measured row saw I/O or verification errors.
    #[error("row '{row}' failed with {errors} error(s); the first: {first}")]
    Row {
        row: String,
        errors: u64,
        first: tarn_common::Error,
    },

    /// A bench option is invalid or the options select nothing.
    #[error("{0}")]
    Options(String),

    /// A bench read data other than what it wrote (the engine returned no error).
    #[error("row '{row}' read wrong data: {detail}")]
    WrongData { row: String, detail: String },

    /// fio is missing, failed, or printed something unreadable.
    #[error("fio: {0}")]
    Fio(String),

    /// An operation outside the engine (a temporary directory, a marker file) failed.
    #[error("{what}: {source}")]
    Os {
        what: String,
        #[source]
        source: std::io::Error,
    },
}

impl BenchError {
    /// The MySQL error number a client would see: the engine's own for engine errors,
    /// `ER_WRONG_ARGUMENTS` (1210) for bad options, `ER_UNKNOWN_ERROR` (1105) otherwise.
    pub fn mysql_code(&self) -> u16 {
        match self {
            BenchError::Engine(error) | BenchError::Row { first: error, .. } => error.mysql_code(),
            BenchError::Options(_) => 1210,
            BenchError::Fio(_) | BenchError::Os { .. } | BenchError::WrongData { .. } => 1105,
        }
    }

    /// The SQLSTATE a client would see.
    pub fn sqlstate(&self) -> &'static str {
        match self {
            BenchError::Engine(error) | BenchError::Row { first: error, .. } => error.sqlstate(),
            _ => "HY000",
        }
    }
}

pub type Result<T, E = BenchError> = std::result::Result<T, E>;

/// Checks that `--no-tarn` and `--no-mariadb` leave a server to measure.
pub(crate) fn check_sides(tarn: bool, mariadb: bool) -> Result<()> {
    if !tarn && !mariadb {
        return Err(BenchError::Options(
            "--no-tarn and --no-mariadb leave nothing to measure".into(),
        ));
    }
    Ok(())
}

/// Checks a bench's `--rounds` option: from 1 to `max`.
pub(crate) fn check_rounds(rounds: u32, max: u32) -> Result<()> {
    if rounds == 0 || rounds > max {
        return Err(BenchError::Options(format!(
            "--rounds must be from 1 to {max}, not {rounds}"
        )));
    }
    Ok(())
}
