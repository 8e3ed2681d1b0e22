//! `tarn bench recovery`: how fast crash recovery replays the redo log.
//!
//! # How a run goes
//! 1. A child process (`tarn crash-worker --big-rows --abort-at-log-bytes N`) runs
//!    transactions of 1-3 KB rows on four threads against a data directory whose log
//!    ring is `2 N` bytes (so no checkpoint starts before `N`: the trigger is half the
//!    ring) and whose buffer pool holds the whole data set (pages stay dirty). When
//!    the log since the last checkpoint holds `N` bytes, the child aborts: a crash
//!    with nothing flushed on the way out.
//! 2. This process opens the data directory, which runs recovery: doublewrite
//!    repair, the redo pass from the checkpoint, and the rollback of the transactions
//!    that were in flight. It reports the log bytes replayed, the records, the time of
//!    the redo pass and of the whole open, and the replay rate (log MB/s).
//! 3. It then checks the table's secondary indexes against its rows, once purge has
//!    caught up (recovery that is fast but wrong is not a result).
//!
//! "Cold" does not apply: the log was just written, so it is read from the OS page
//! cache; the figure is the replay's CPU rate, the part that limits it on fast flash.
//!
//! `summary.redo_mb_per_sec` is log bytes / redo pass time; the target is at least 100
//! MB/s for a 1 GB log (`--log-size 1G`, the default; 64M with `--quick`).

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde::Serialize;

use tarn_catalog::{RecoveryReport, Storage};
use tarn_common::settings::Settings;

use crate::report::{BenchDocument, Output, Table as TextTable, format_number};
use crate::workdir::WorkDir;
use crate::{BenchError, Result};

/// What `tarn bench recovery` runs.
pub struct RecoveryBenchOptions {
    pub settings: Settings,
    pub data_dir: Option<std::path::PathBuf>,
    /// Log bytes to leave behind the crash.
    pub log_bytes: u64,
    /// The `tarn` executable that runs the crash worker.
    pub tarn_exe: std::path::PathBuf,
}

#[derive(Debug, Serialize)]
pub struct RecoveryConfig {
    pub log_bytes_target: u64,
    pub log_file_size_bytes: u64,
    pub buffer_pool_size_bytes: u64,
    pub page_size_bytes: u32,
    pub io_method: String,
}

#[derive(Debug, Serialize)]
pub struct RecoveryRow {
    pub log_bytes: u64,
    pub records: u64,
    pub page_changes_replayed: u64,
    pub transactions_rolled_back: u64,
    pub redo_ms: u64,
    pub undo_ms: u64,
    pub open_ms: u64,
    pub redo_mb_per_sec: f64,
    pub open_mb_per_sec: f64,
    pub rows_verified: u64,
}

#[derive(Debug, Serialize)]
pub struct RecoverySummary {
    pub redo_mb_per_sec: f64,
    pub open_mb_per_sec: f64,
    pub log_bytes: u64,
}

pub fn run_and_print(options: &RecoveryBenchOptions, output: &Output) -> Result<RecoveryRow> {
    let work = WorkDir::open(options.data_dir.as_deref(), "tarn-bench-recovery-")?;
    let data = work.path().join("recovery");
    if data.exists() {
        std::fs::remove_dir_all(&data).map_err(|source| BenchError::Os {
            what: format!("removing the old data directory '{}'", data.display()),
            source,
        })?;
    }
    let mut settings = options.settings.clone();
    settings.data_dir = data.clone();
    settings.log_dir = Default::default();
    // Half the ring is the checkpoint trigger: a ring of twice the target leaves the
    // whole target to replay.
    settings.log_files = 2;
    settings.log_file_size_bytes = options.log_bytes.max(1 << 20);
    settings.buffer_pool_size_bytes = settings.buffer_pool_size_bytes.max(1 << 30);
    settings.validate()?;
    let sets: Vec<String> = [
        ("log_files", settings.log_files.to_string()),
        ("log_file_size", settings.log_file_size_bytes.to_string()),
        (
            "buffer_pool_size",
            settings.buffer_pool_size_bytes.to_string(),
        ),
        ("page_size", settings.page_size_bytes.to_string()),
        ("io_method", settings.io_method.to_string()),
    ]
    .into_iter()
    .map(|(name, value)| format!("{name}={value}"))
    .collect();
    output.progress(&format!(
        "recovery: writing {} MiB of log in a child process, then crashing it",
        options.log_bytes >> 20
    ));
    let started = Instant::now();
    let status = crash_child(
        &options.tarn_exe,
        &data,
        &sets,
        options.log_bytes,
        &work.path().join("acks"),
    )?;
    output.progress(&format!(
        "recovery: the child crashed ({status}) after {:.1} s; recovering",
        started.elapsed().as_secs_f64()
    ));
    let opened = Instant::now();
    let storage = Storage::open(&settings)?;
    let open_ms = opened.elapsed().as_millis() as u64;
    let report: RecoveryReport = storage.recovery_report().clone();
    if !storage.wait_for_purge(Duration::from_secs(120)) {
        return Err(BenchError::WrongData {
            row: "recovery".into(),
            detail: "purge did not catch up within 120 s after recovery".into(),
        });
    }
    let table = storage.table(crate::crash::DATABASE, crate::crash::TABLE)?;
    let rows_verified = table.verify_consistency()?;
    drop(storage);
    let mb = report.log_bytes as f64 / (1 << 20) as f64;
    let row = RecoveryRow {
        log_bytes: report.log_bytes,
        records: report.records_read,
        page_changes_replayed: report.pages_changes_replayed,
        transactions_rolled_back: report.transactions_rolled_back,
        redo_ms: report.redo_ms,
        undo_ms: report.undo_ms,
        open_ms,
        redo_mb_per_sec: mb / (report.redo_ms.max(1) as f64 / 1000.0),
        open_mb_per_sec: mb / (open_ms.max(1) as f64 / 1000.0),
        rows_verified,
    };
    let mut text = TextTable::new(
        "Crash recovery: redo log replayed after an abort (log from the OS page cache)",
        &[
            "log MiB",
            "records",
            "page changes",
            "rolled back",
            "redo ms",
            "undo ms",
            "open ms",
            "redo MB/s",
            "open MB/s",
            "rows checked",
        ],
    );
    text.add_row(vec![
        format_number(Some(mb), 1),
        row.records.to_string(),
        row.page_changes_replayed.to_string(),
        row.transactions_rolled_back.to_string(),
        row.redo_ms.to_string(),
        row.undo_ms.to_string(),
        row.open_ms.to_string(),
        format_number(Some(row.redo_mb_per_sec), 0),
        format_number(Some(row.open_mb_per_sec), 0),
        row.rows_verified.to_string(),
    ]);
    output.table(&text);
    let config = RecoveryConfig {
        log_bytes_target: options.log_bytes,
        log_file_size_bytes: settings.log_file_size_bytes,
        buffer_pool_size_bytes: settings.buffer_pool_size_bytes,
        page_size_bytes: settings.page_size_bytes,
        io_method: settings.io_method.to_string(),
    };
    let summary = RecoverySummary {
        redo_mb_per_sec: row.redo_mb_per_sec,
        open_mb_per_sec: row.open_mb_per_sec,
        log_bytes: row.log_bytes,
    };
    output.json(&BenchDocument::new(
        "recovery",
        &config,
        std::slice::from_ref(&row),
        &summary,
    ))?;
    Ok(row)
}

/// Runs the crash worker until it aborts at `log_bytes` of log (bounded: 10 minutes).
fn crash_child(
    exe: &Path,
    data: &Path,
    sets: &[String],
    log_bytes: u64,
    acks: &Path,
) -> Result<String> {
    let mut command = Command::new(exe);
    for set in sets {
        command.arg("--set").arg(set);
    }
    let mut child = command
        .arg("crash-worker")
        .arg("--data-dir")
        .arg(data)
        .arg("--ack-file")
        .arg(acks)
        .arg("--big-rows")
        .arg("--abort-at-log-bytes")
        .arg(log_bytes.to_string())
        .arg("--run-ms")
        .arg("600000")
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|source| BenchError::Os {
            what: format!("starting '{} crash-worker'", exe.display()),
            source,
        })?;
    let status = child.wait().map_err(|source| BenchError::Os {
        what: "waiting for the crash worker".into(),
        source,
    })?;
    use std::os::unix::process::ExitStatusExt;
    if status.signal() != Some(libc_sigabrt()) {
        return Err(BenchError::Options(format!(
            "the crash worker ended ({status}) before writing {log_bytes} bytes of log \
             (its errors are above)"
        )));
    }
    Ok(status.to_string())
}

/// SIGABRT without a libc dependency: 6 on every Linux architecture.
const fn libc_sigabrt() -> i32 {
    6
}
