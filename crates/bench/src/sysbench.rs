//! `tarn bench sysbench`: Debian's sysbench OLTP workloads against `tarn serve` and,
//! where installed, a private MariaDB with comparable durability, by client threads:
//! transactions per second and 95th-percentile latency for both, with the ratio.
//!
//! # How a run goes
//! For each server in turn (Tarn, then MariaDB; never both at once):
//! 1. Start it on 127.0.0.1 on a free port with its data in `<dir>/tarn` or
//!    `<dir>/mariadb`. Tarn runs with `flush_log_at_commit = 1` and its
//!    `buffer_pool_size` setting; MariaDB with `innodb_flush_log_at_trx_commit = 1`,
//!    `innodb_flush_method = O_DIRECT`, no binary log, `innodb_buffer_pool_size` equal to
//!    Tarn's pool and `innodb_log_file_size` equal to Tarn's whole redo log
//!    (`log_file_size x log_files`) ([`crate::mariadb`]).
//! 2. `CREATE DATABASE IF NOT EXISTS sbtest`, then `sysbench oltp_common cleanup` and
//!    `prepare` with `--tables` and `--table-size` (the tables are rebuilt every run:
//!    the write workloads change them).
//! 3. For each workload (`oltp_point_select`, `oltp_read_only`, `oltp_read_write`,
//!    `oltp_write_only`, in that order) and thread count, `sysbench <workload> run
//!    --time=<time-s>` with sysbench's other defaults (prepared statements where the
//!    server has them, 10 point selects per transaction, ...). Its report gives
//!    transactions per second, the 95th percentile latency and the ignored errors. A
//!    run that sysbench ends with an error fails the bench.
//!
//! With `--tls` both servers present one self-signed certificate generated into
//! `<dir>/tls` (Tarn through `ssl_cert`/`ssl_key`, MariaDB through `--ssl-cert` and
//! `--ssl-key`) and sysbench connects with `--mysql-ssl=on` from that directory, where
//! libmariadb looks for its files ([`TlsFiles`]).
//!
//! # Figures
//! - `tarn_tps`, `mariadb_tps`: sysbench's transactions per second;
//!   `tarn_p95_ms`, `mariadb_p95_ms`: its 95th percentile transaction latency.
//! - `tps_ratio`: Tarn's TPS over MariaDB's.
//! - `summary.min_ratio_vs_mariadb_32_threads`: the smallest `tps_ratio` among the
//!   32-thread rows (`null` unless both servers ran at 32 threads).
//! - `*_server_cpu_us_per_tx`: the server process's CPU time (user plus system, from
//!   `/proc`, in 10 ms ticks) over the run, per transaction;
//!   `*_client_cpu_us_per_tx`: sysbench's own (`getrusage(RUSAGE_CHILDREN)` around
//!   it). Both include the kernel's share of the loopback TCP on each side.
//! - `tarn_client_bound_vs_mariadb`: the ratio Tarn could reach if its server took
//!   no CPU at all: with sysbench costing `tarn_client_cpu_us_per_tx` on this
//!   machine's cores, at most `cores x 10^6 / tarn_client_cpu_us_per_tx`
//!   transactions per second, over MariaDB's TPS. Where it is below a target ratio,
//!   the client alone rules the target out on this machine.
//!   `summary.client_bound_min_ratio_32_threads` is its smallest 32-thread value.

use std::path::PathBuf;
use std::process::{Command, Stdio};

use serde::Serialize;

use tarn_common::settings::Settings;

use crate::mariadb::{self, MariaDb, MariaDbConfig};
use crate::report::{
    BenchDocument, Output, Table as TextTable, data_dir_fate, format_count, format_number,
    format_ratio, ratio,
};
use crate::server::TarnServer;
use crate::workdir::WorkDir;
use crate::{BenchError, Result};

pub const WORKLOADS: [&str; 4] = ["point_select", "read_only", "read_write", "write_only"];
pub const THREADS_DEFAULT: [usize; 4] = [1, 8, 32, 128];
pub const THREADS_QUICK: [usize; 2] = [1, 32];
pub const THREADS_MAX: usize = 1024;
pub const TIME_S_DEFAULT: u32 = 10;
pub const TIME_S_QUICK: u32 = 3;
pub const TABLES_DEFAULT: u32 = 8;
pub const TABLES_QUICK: u32 = 2;
pub const TABLE_SIZE_DEFAULT: u64 = 100_000;
pub const TABLE_SIZE_QUICK: u64 = 10_000;
pub const DATABASE: &str = "sbtest";
/// The thread count of the summary's ratio.
pub const SUMMARY_THREADS: usize = 32;

/// What `tarn bench sysbench` was asked to do.
#[derive(Clone, Debug)]
pub struct SysbenchBenchOptions {
    /// Engine settings (from `--set`), passed on to `tarn serve`.
    pub settings: Settings,
    pub quick: bool,
    pub data_dir: Option<PathBuf>,
    pub threads: Vec<usize>,
    /// Workload names without the `oltp_` prefix.
    pub workloads: Vec<String>,
    pub time_s: u32,
    pub tables: u32,
    pub table_size: u64,
    pub tarn: bool,
    pub mariadb: bool,
    /// Both servers over TLS (`--mysql-ssl=on`), with one self-signed certificate.
    pub tls: bool,
}

impl SysbenchBenchOptions {
    pub fn new(settings: Settings, quick: bool) -> SysbenchBenchOptions {
        SysbenchBenchOptions {
            settings,
            quick,
            data_dir: None,
            threads: if quick {
                THREADS_QUICK.to_vec()
            } else {
                THREADS_DEFAULT.to_vec()
            },
            workloads: WORKLOADS.iter().map(|w| w.to_string()).collect(),
            time_s: if quick { TIME_S_QUICK } else { TIME_S_DEFAULT },
            tables: if quick { TABLES_QUICK } else { TABLES_DEFAULT },
            table_size: if quick {
                TABLE_SIZE_QUICK
            } else {
                TABLE_SIZE_DEFAULT
            },
            tarn: true,
            mariadb: true,
            tls: false,
        }
    }

    /// The workloads in the order given, without duplicates; an unknown one is an error.
    fn validated_workloads(&self) -> Result<Vec<&'static str>> {
        let mut out = Vec::new();
        for name in &self.workloads {
            let short = name.trim().trim_start_matches("oltp_");
            let known = WORKLOADS.iter().find(|w| **w == short).ok_or_else(|| {
                BenchError::Options(format!(
                    "'{name}' is not a workload: use {}",
                    WORKLOADS.join(", ")
                ))
            })?;
            if !out.contains(known) {
                out.push(*known);
            }
        }
        if out.is_empty() {
            return Err(BenchError::Options("--workloads selects nothing".into()));
        }
        Ok(out)
    }

    fn validate(&self) -> Result<()> {
        if self.threads.is_empty() || self.threads.iter().any(|&t| t == 0 || t > THREADS_MAX) {
            return Err(BenchError::Options(format!(
                "--threads needs values from 1 to {THREADS_MAX}"
            )));
        }
        if self.time_s == 0 || self.time_s > 3600 {
            return Err(BenchError::Options(
                "--time-s must be from 1 to 3600".into(),
            ));
        }
        if self.tables == 0 || self.table_size == 0 {
            return Err(BenchError::Options(
                "--tables and --table-size must be at least 1".into(),
            ));
        }
        crate::check_sides(self.tarn, self.mariadb)
    }
}

/// What sysbench reported for one run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct SysbenchResult {
    pub tps: f64,
    pub qps: f64,
    pub p95_ms: f64,
    pub errors: u64,
    pub reconnects: u64,
    /// The server's CPU per transaction over the run (not in sysbench's report).
    pub server_cpu_us_per_tx: Option<f64>,
    /// sysbench's own CPU per transaction over the run.
    pub client_cpu_us_per_tx: Option<f64>,
}

/// Reads sysbench 1.0's text report.
pub fn parse_report(text: &str) -> Option<SysbenchResult> {
    let per_sec = |line: &str| -> Option<f64> {
        let open = line.find('(')?;
        line[open + 1..].split_whitespace().next()?.parse().ok()
    };
    let first_number = |line: &str| -> Option<u64> {
        line.split(':')
            .nth(1)?
            .split_whitespace()
            .next()?
            .parse()
            .ok()
    };
    let mut result = SysbenchResult::default();
    let mut seen_tps = false;
    let mut seen_p95 = false;
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with("transactions:") {
            result.tps = per_sec(line)?;
            seen_tps = true;
        } else if line.starts_with("queries:") {
            result.qps = per_sec(line).unwrap_or_default();
        } else if line.starts_with("ignored errors:") {
            result.errors = first_number(line).unwrap_or_default();
        } else if line.starts_with("reconnects:") {
            result.reconnects = first_number(line).unwrap_or_default();
        } else if line.starts_with("95th percentile:") {
            result.p95_ms = line.split_whitespace().last()?.parse().ok()?;
            seen_p95 = true;
        }
    }
    (seen_tps && seen_p95).then_some(result)
}

/// How sysbench reaches a server.
struct Target {
    name: &'static str,
    /// The server's process, whose CPU time the runs measure.
    pid: Option<u32>,
    port: u16,
    user: &'static str,
    password: &'static str,
    /// Over TLS: the directory holding the files `--mysql-ssl=on` reads from its
    /// working directory ([`TlsFiles`]).
    tls: Option<PathBuf>,
}

impl Target {
    fn command(&self, test: &str, options: &SysbenchBenchOptions, threads: usize) -> Command {
        let mut command = Command::new("sysbench");
        command
            .arg(test)
            .arg("--db-driver=mysql")
            .arg("--mysql-host=127.0.0.1")
            .arg(format!("--mysql-port={}", self.port))
            .arg(format!("--mysql-user={}", self.user))
            .arg(format!("--mysql-db={DATABASE}"))
            .arg(format!("--tables={}", options.tables))
            .arg(format!("--table-size={}", options.table_size))
            .arg(format!("--threads={threads}"))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if !self.password.is_empty() {
            command.arg(format!("--mysql-password={}", self.password));
        }
        if let Some(dir) = &self.tls {
            command.arg("--mysql-ssl=on").current_dir(dir);
        }
        command
    }

    /// Runs sysbench with `args` after the command; its stdout, or an error naming `row`.
    fn run(&self, mut command: Command, args: &[&str], row: &str) -> Result<String> {
        command.args(args);
        let out = command.output().map_err(|source| BenchError::Os {
            what: "running sysbench (apt-get install sysbench)".into(),
            source,
        })?;
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        if !out.status.success() {
            return Err(BenchError::Options(format!(
                "sysbench failed on {row} ({}):\n{}\n{}",
                out.status,
                crate::server::tail(&stdout, 12),
                crate::server::tail(&String::from_utf8_lossy(&out.stderr), 8)
            )));
        }
        Ok(stdout)
    }
}

/// One workload and thread count on both servers.
#[derive(Clone, Debug, Serialize)]
pub struct SysbenchRow {
    pub workload: &'static str,
    pub threads: usize,
    pub tarn_tps: Option<f64>,
    pub tarn_p95_ms: Option<f64>,
    pub tarn_errors: Option<u64>,
    pub mariadb_tps: Option<f64>,
    pub mariadb_p95_ms: Option<f64>,
    pub mariadb_errors: Option<u64>,
    pub tps_ratio: Option<f64>,
    pub tarn_server_cpu_us_per_tx: Option<f64>,
    pub tarn_client_cpu_us_per_tx: Option<f64>,
    pub mariadb_server_cpu_us_per_tx: Option<f64>,
    pub mariadb_client_cpu_us_per_tx: Option<f64>,
    /// The most `tps_ratio` could be with a Tarn server that took no CPU (see the
    /// module docs).
    pub tarn_client_bound_vs_mariadb: Option<f64>,
}

#[derive(Clone, Debug, Serialize)]
pub struct SysbenchConfig {
    pub workloads: Vec<&'static str>,
    pub threads: Vec<usize>,
    pub time_s: u32,
    pub tables: u32,
    pub table_size: u64,
    pub buffer_pool_bytes: u64,
    pub redo_log_bytes: u64,
    pub flush_log_at_commit: u32,
    /// Both servers were reached over TLS (`--tls`).
    pub tls: bool,
    pub data_dir: String,
    pub data_dir_kept: bool,
    pub sysbench_version: Option<String>,
    pub mariadb_version: Option<String>,
    pub notes: Vec<String>,
}

#[derive(Clone, Debug, Serialize)]
pub struct SysbenchSummary {
    pub min_ratio_vs_mariadb_32_threads: Option<f64>,
    /// The workload with that smallest ratio.
    pub min_ratio_workload: Option<&'static str>,
    /// The smallest `tarn_client_bound_vs_mariadb` among the 32-thread rows.
    pub client_bound_min_ratio_32_threads: Option<f64>,
}

pub struct SysbenchReport {
    pub config: SysbenchConfig,
    pub rows: Vec<SysbenchRow>,
    pub summary: SysbenchSummary,
}

/// Prepares the tables and runs every workload and thread count on `target`.
fn run_server(
    target: &Target,
    options: &SysbenchBenchOptions,
    workloads: &[&'static str],
    output: &Output,
) -> Result<Vec<(&'static str, usize, SysbenchResult)>> {
    let prepare_threads = (options.tables as usize).min(crate::scan::cores()).max(1);
    output.progress(&format!(
        "{}: sysbench prepare ({} tables x {} rows) ...",
        target.name, options.tables, options.table_size
    ));
    target.run(
        target.command("oltp_common", options, prepare_threads),
        &["cleanup"],
        &format!("{} cleanup", target.name),
    )?;
    target.run(
        target.command("oltp_common", options, prepare_threads),
        &["prepare"],
        &format!("{} prepare", target.name),
    )?;
    let mut results = Vec::new();
    for &workload in workloads {
        for &threads in &options.threads {
            let row = format!("{} oltp_{workload} threads={threads}", target.name);
            let time = format!("--time={}", options.time_s);
            let server_cpu_before = target.pid.and_then(tarn_io::os::process_cpu_time_of);
            let client_cpu_before = tarn_io::os::children_cpu_time();
            let text = target.run(
                target.command(&format!("oltp_{workload}"), options, threads),
                &[&time, "--report-interval=0", "--percentile=95", "run"],
                &row,
            )?;
            let client_cpu = tarn_io::os::children_cpu_time() - client_cpu_before;
            let server_cpu = server_cpu_before.and_then(|before| {
                let after = target.pid.and_then(tarn_io::os::process_cpu_time_of)?;
                Some(after.saturating_sub(before))
            });
            let mut result = parse_report(&text).ok_or_else(|| {
                BenchError::Options(format!(
                    "could not read sysbench's report for {row}:\n{}",
                    crate::server::tail(&text, 20)
                ))
            })?;
            let transactions = result.tps * f64::from(options.time_s);
            result.client_cpu_us_per_tx = us_per_tx(client_cpu, transactions);
            result.server_cpu_us_per_tx = server_cpu.and_then(|cpu| us_per_tx(cpu, transactions));
            output.progress(&format!(
                "  {row}: {} tps, p95 {} ms, {} errors",
                format_count(Some(result.tps)),
                format_number(Some(result.p95_ms), 2),
                result.errors
            ));
            results.push((workload, threads, result));
        }
    }
    Ok(results)
}

/// The certificate both servers present over TLS, and the files sysbench's
/// `--mysql-ssl=on` reads from its working directory: `cacert.pem` (the certificate
/// it trusts: the servers' own, self-signed) and `client-cert.pem` /
/// `client-key.pem` (which libmariadb loads, and sends only if a server asks; neither
/// does, so they are the same pair).
struct TlsFiles {
    dir: PathBuf,
    cert: PathBuf,
    key: PathBuf,
}

impl TlsFiles {
    fn create(dir: &std::path::Path) -> Result<TlsFiles> {
        let source = tarn_server::tls::CertificateSource::Generated {
            dir: dir.to_path_buf(),
        };
        tarn_server::tls::server_config(&source)
            .map_err(|e| BenchError::Options(format!("generating a certificate: {e}")))?;
        let cert = dir.join(tarn_server::tls::GENERATED_CERT_FILE);
        let key = dir.join(tarn_server::tls::GENERATED_KEY_FILE);
        for (from, to) in [
            (&cert, "cacert.pem"),
            (&cert, "client-cert.pem"),
            (&key, "client-key.pem"),
        ] {
            let to = dir.join(to);
            std::fs::copy(from, &to).map_err(|source| BenchError::Os {
                what: format!("copying '{}' to '{}'", from.display(), to.display()),
                source,
            })?;
        }
        Ok(TlsFiles {
            dir: dir.to_path_buf(),
            cert,
            key,
        })
    }
}

/// Microseconds of `cpu` per transaction; `None` for a run without any.
fn us_per_tx(cpu: std::time::Duration, transactions: f64) -> Option<f64> {
    (transactions > 0.0).then(|| cpu.as_secs_f64() * 1e6 / transactions)
}

fn create_database(client: &mut crate::wire::client::Client, server: &str) -> Result<()> {
    let sql = format!("CREATE DATABASE IF NOT EXISTS {DATABASE}");
    client
        .execute(&sql)
        .map_err(|e| BenchError::Options(format!("{server}: {sql}: {e}")))
}

fn sysbench_version() -> Option<String> {
    let out = Command::new("sysbench").arg("--version").output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// Runs the bench (see the module docs).
pub fn run(options: &SysbenchBenchOptions, output: &Output) -> Result<SysbenchReport> {
    options.validate()?;
    let workloads = options.validated_workloads()?;
    let version = sysbench_version().ok_or_else(|| {
        BenchError::Options("sysbench is not installed (apt-get install sysbench)".into())
    })?;
    let workdir = WorkDir::open(options.data_dir.as_deref(), ".tarn-bench-sysbench-")?;
    let settings = &options.settings;
    let pool = settings.buffer_pool_size_bytes;
    let redo = settings.log_file_size_bytes * u64::from(settings.log_files);
    let mut notes = Vec::new();
    let tls = if options.tls {
        Some(TlsFiles::create(&workdir.path().join("tls"))?)
    } else {
        None
    };

    let mut tarn_results = Vec::new();
    if options.tarn {
        let dir = workdir.path().join("tarn");
        std::fs::create_dir_all(&dir).map_err(|source| BenchError::Os {
            what: format!("creating '{}'", dir.display()),
            source,
        })?;
        output.progress("starting tarn serve ...");
        let mut extra = vec![
            format!("buffer_pool_size={pool}"),
            "flush_log_at_commit=1".to_string(),
        ];
        if let Some(tls) = &tls {
            extra.push(format!("ssl_cert={}", tls.cert.display()));
            extra.push(format!("ssl_key={}", tls.key.display()));
        }
        let mut server = TarnServer::start(&dir, settings, &extra)?;
        let mut client = server.connect(None)?;
        create_database(&mut client, "tarn")?;
        client.quit();
        let target = Target {
            name: "tarn",
            port: server.port(),
            pid: server.pid(),
            user: crate::server::TARN_USER,
            password: crate::server::TARN_PASSWORD,
            tls: tls.as_ref().map(|t| t.dir.clone()),
        };
        tarn_results = run_server(&target, options, &workloads, output)?;
        server.stop();
    } else {
        notes.push("tarn: skipped (--no-tarn)".into());
    }

    let mut mariadb_results = Vec::new();
    let mut mariadb_version = None;
    if !options.mariadb {
        notes.push("mariadb: skipped (--no-mariadb)".into());
    } else if mariadb::server_program().is_none() {
        notes.push("mariadb: not installed, skipped".into());
    } else {
        let mut config = MariaDbConfig::new(&workdir.path().join("mariadb"), pool);
        config.log_file_bytes = Some(redo);
        config.max_connections =
            (options.threads.iter().copied().max().unwrap_or(1) as u32 + 32).max(151);
        config.tls = tls.as_ref().map(|t| (t.cert.clone(), t.key.clone()));
        output.progress("starting MariaDB ...");
        let mut server = MariaDb::start(&config)?;
        mariadb_version = Some(server.version().to_string());
        let mut client = server.connect(None)?;
        create_database(&mut client, "mariadb")?;
        client.quit();
        let target = Target {
            name: "mariadb",
            port: server.port(),
            pid: server.pid(),
            user: mariadb::USER,
            password: mariadb::PASSWORD,
            tls: tls.as_ref().map(|t| t.dir.clone()),
        };
        mariadb_results = run_server(&target, options, &workloads, output)?;
        server.stop();
    }

    let find = |results: &[(&str, usize, SysbenchResult)], workload: &str, threads: usize| {
        results
            .iter()
            .find(|(w, t, _)| *w == workload && *t == threads)
            .map(|(_, _, r)| *r)
    };
    let mut rows = Vec::new();
    for &workload in &workloads {
        for &threads in &options.threads {
            let tarn = find(&tarn_results, workload, threads);
            let maria = find(&mariadb_results, workload, threads);
            rows.push(SysbenchRow {
                workload,
                threads,
                tarn_tps: tarn.map(|r| r.tps),
                tarn_p95_ms: tarn.map(|r| r.p95_ms),
                tarn_errors: tarn.map(|r| r.errors),
                mariadb_tps: maria.map(|r| r.tps),
                mariadb_p95_ms: maria.map(|r| r.p95_ms),
                mariadb_errors: maria.map(|r| r.errors),
                tps_ratio: ratio(tarn.map(|r| r.tps), maria.map(|r| r.tps)),
                tarn_server_cpu_us_per_tx: tarn.and_then(|r| r.server_cpu_us_per_tx),
                tarn_client_cpu_us_per_tx: tarn.and_then(|r| r.client_cpu_us_per_tx),
                mariadb_server_cpu_us_per_tx: maria.and_then(|r| r.server_cpu_us_per_tx),
                mariadb_client_cpu_us_per_tx: maria.and_then(|r| r.client_cpu_us_per_tx),
                tarn_client_bound_vs_mariadb: ratio(
                    tarn.and_then(|r| r.client_cpu_us_per_tx)
                        .map(|us| crate::scan::cores() as f64 * 1e6 / us),
                    maria.map(|r| r.tps),
                ),
            });
        }
    }
    let min = rows
        .iter()
        .filter(|r| r.threads == SUMMARY_THREADS)
        .filter_map(|r| r.tps_ratio.map(|ratio| (ratio, r.workload)))
        .min_by(|a, b| a.0.total_cmp(&b.0));
    // The summary covers every workload: one missing ratio at 32 threads makes it null.
    let complete = rows
        .iter()
        .filter(|r| r.threads == SUMMARY_THREADS)
        .all(|r| r.tps_ratio.is_some());
    let bounds: Option<Vec<f64>> = rows
        .iter()
        .filter(|r| r.threads == SUMMARY_THREADS)
        .map(|r| r.tarn_client_bound_vs_mariadb)
        .collect();
    let summary = SysbenchSummary {
        min_ratio_vs_mariadb_32_threads: min.filter(|_| complete).map(|m| m.0),
        min_ratio_workload: min.filter(|_| complete).map(|m| m.1),
        client_bound_min_ratio_32_threads: bounds
            .filter(|b| !b.is_empty())
            .map(|b| b.into_iter().fold(f64::INFINITY, f64::min)),
    };
    let config = SysbenchConfig {
        workloads,
        threads: options.threads.clone(),
        time_s: options.time_s,
        tables: options.tables,
        table_size: options.table_size,
        buffer_pool_bytes: pool,
        redo_log_bytes: redo,
        flush_log_at_commit: 1,
        tls: options.tls,
        data_dir: workdir.path().display().to_string(),
        data_dir_kept: !workdir.is_temporary(),
        sysbench_version: Some(version),
        mariadb_version,
        notes,
    };
    Ok(SysbenchReport {
        config,
        rows,
        summary,
    })
}

pub fn table(report: &SysbenchReport) -> TextTable {
    let mut table = TextTable::new(
        format!(
            "sysbench, {} tables x {} rows, {} s per run, durable commits{}",
            report.config.tables,
            report.config.table_size,
            report.config.time_s,
            if report.config.tls { ", over TLS" } else { "" }
        ),
        &[
            "workload",
            "threads",
            "tarn TPS",
            "tarn p95 ms",
            "mariadb TPS",
            "mariadb p95 ms",
            "tarn/mariadb",
            "errors (t/m)",
            "server CPU us/tx (t/m)",
            "sysbench CPU us/tx (t/m)",
            "client bound",
        ],
    );
    for row in &report.rows {
        table.add_row(vec![
            row.workload.to_string(),
            row.threads.to_string(),
            format_count(row.tarn_tps),
            format_number(row.tarn_p95_ms, 2),
            format_count(row.mariadb_tps),
            format_number(row.mariadb_p95_ms, 2),
            format_ratio(row.tps_ratio),
            format!(
                "{}/{}",
                row.tarn_errors.map_or("-".into(), |e| e.to_string()),
                row.mariadb_errors.map_or("-".into(), |e| e.to_string())
            ),
            format!(
                "{}/{}",
                format_number(row.tarn_server_cpu_us_per_tx, 0),
                format_number(row.mariadb_server_cpu_us_per_tx, 0)
            ),
            format!(
                "{}/{}",
                format_number(row.tarn_client_cpu_us_per_tx, 0),
                format_number(row.mariadb_client_cpu_us_per_tx, 0)
            ),
            format_ratio(row.tarn_client_bound_vs_mariadb),
        ]);
    }
    table
}

pub fn run_and_print(options: &SysbenchBenchOptions, output: &Output) -> Result<SysbenchReport> {
    let report = run(options, output)?;
    output.note(&format!(
        "data in '{}'{}; buffer pool {} MiB and redo log {} MiB for both servers; {}; {}",
        report.config.data_dir,
        data_dir_fate(report.config.data_dir_kept),
        report.config.buffer_pool_bytes >> 20,
        report.config.redo_log_bytes >> 20,
        report
            .config
            .sysbench_version
            .as_deref()
            .unwrap_or("sysbench"),
        report
            .config
            .mariadb_version
            .as_deref()
            .map_or("MariaDB not run".to_string(), |v| format!("MariaDB {v}"))
    ));
    for note in &report.config.notes {
        output.note(note);
    }
    output.table(&table(&report));
    output.note(&format!(
        "\nmin_ratio_vs_mariadb_32_threads {} (target >= 2.00){}",
        format_ratio(report.summary.min_ratio_vs_mariadb_32_threads),
        report
            .summary
            .min_ratio_workload
            .map_or(String::new(), |w| format!(", on {w}"))
    ));
    output.note(&format!(
        "client_bound_min_ratio_32_threads {}: the most a server taking no CPU could \
         reach against MariaDB here, with sysbench's own CPU per transaction on {} cores",
        format_ratio(report.summary.client_bound_min_ratio_32_threads),
        crate::scan::cores()
    ));
    output.json(&BenchDocument::new(
        "sysbench",
        &report.config,
        &report.rows,
        &report.summary,
    ))?;
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    const REPORT: &str = "\
SQL statistics:
    queries performed:
        read:                            140000
        write:                           0
        other:                           20000
        total:                           160000
    transactions:                        10000  (3331.62 per sec.)
    queries:                             160000 (53305.98 per sec.)
    ignored errors:                      3      (1.00 per sec.)
    reconnects:                          0      (0.00 per sec.)

Latency (ms):
         min:                                    0.18
         avg:                                    0.30
         max:                                    7.40
         95th percentile:                        0.43
         sum:                                 2994.21
";

    #[test]
    fn sysbench_reports_parse() {
        let result = parse_report(REPORT).unwrap();
        assert_eq!(result.tps, 3331.62);
        assert_eq!(result.qps, 53305.98);
        assert_eq!(result.p95_ms, 0.43);
        assert_eq!(result.errors, 3);
        assert_eq!(parse_report("FATAL: no"), None);
    }

    #[test]
    fn workloads_take_an_optional_prefix_and_keep_their_order() {
        let mut options = SysbenchBenchOptions::new(Settings::default(), true);
        options.workloads = vec!["oltp_write_only".into(), "point_select".into()];
        assert_eq!(
            options.validated_workloads().unwrap(),
            vec!["write_only", "point_select"]
        );
        options.workloads = vec!["bulk".into()];
        assert!(options.validated_workloads().is_err());
    }

    /// `--tls`: the servers' pair, and the three files sysbench reads beside it.
    #[test]
    fn tls_files_are_the_servers_certificate_for_sysbench() {
        let dir = tempfile::tempdir().unwrap();
        let files = TlsFiles::create(dir.path()).unwrap();
        let cert = std::fs::read(&files.cert).unwrap();
        assert!(String::from_utf8_lossy(&cert).contains("BEGIN CERTIFICATE"));
        assert_eq!(std::fs::read(dir.path().join("cacert.pem")).unwrap(), cert);
        assert_eq!(
            std::fs::read(dir.path().join("client-cert.pem")).unwrap(),
            cert
        );
        assert_eq!(
            std::fs::read(dir.path().join("client-key.pem")).unwrap(),
            std::fs::read(&files.key).unwrap()
        );
    }
}
