//! `tarn bench wire`: `SELECT * FROM lineitem` (TPC-H) streamed over the MySQL protocol
//! to a client that reads and discards every row, by the server's encoding threads
//! (`send_threads`), against the loopback transfer limit and MariaDB serving the same
//! table to the same client.
//!
//! # How a run goes
//! 1. Tarn (unless `--no-tarn`): TPC-H at `--sf` is loaded once into `<dir>/tarn`
//!    (reused when already there), `tarn serve` is started on it on a free port with a
//!    buffer pool of [`pool_bytes`], one untimed pass of the query warms it, and then
//!    for each `--threads` value `t` the client runs `SET send_threads = t` and the
//!    query `--rounds` times.
//! 2. MariaDB (where installed, unless `--no-mariadb`): a private server in
//!    `<dir>/mariadb` ([`crate::mariadb`]) with the same buffer pool and
//!    `innodb_flush_method = O_DIRECT`; `tpch.lineitem` is created with Tarn's column
//!    types, primary key and `l_shipdate` index and loaded once with `LOAD DATA INFILE`
//!    from a TSV file of the very rows Tarn loads ([`crate::tpch::generate_parallel`]);
//!    then one untimed pass and `--rounds` timed ones.
//! 3. Loopback: the number of bytes the query produced on Tarn (on MariaDB if Tarn did
//!    not run) goes through a 127.0.0.1 TCP socket, a writer thread writing 1 MiB
//!    buffers to a reader discarding into a buffer of the lean client's size
//!    ([`client::READ_BUFFER_BYTES`]): the most any server could deliver here.
//!
//! The servers run one at a time. The readers (`--client`):
//! - `lean` ([`client::Client`]): a minimal blocking protocol client that skips each
//!   row inside its read buffer; it costs little CPU, so the server's encoding and the
//!   socket set the pace.
//! - `mariadb`: the `mariadb --quick --batch` command-line client writing to
//!   `/dev/null`, as users would read a table (it formats every value, which costs it
//!   seconds of CPU at SF 1).
//!
//! Every pass must return the table's `COUNT(*)` rows (counted by the lean client; the
//! mariadb client's exit status is checked), and both servers must hold the same
//! number of rows.
//!
//! # Figures
//! - `seconds`: median over the rounds, from sending the query to its last packet
//!   (lean) or of the whole client process (mariadb); for the loopback, the fastest of
//!   at least 7 passes, since the limit is what the socket can do and short transfers
//!   on a shared machine are noisy.
//! - `mb_per_sec`: protocol bytes (headers included, as counted by the lean client) /
//!   seconds, in MB (10^6 bytes).
//! - `vs_loopback`: MB/s over the loopback's MB/s; `vs_mariadb`: MariaDB's seconds over
//!   this row's.
//! - `summary.vs_loopback_limit`: the best Tarn row's `vs_loopback`;
//!   `summary.vs_mariadb`: MariaDB's seconds over the best Tarn row's (`null` when either
//!   did not run).

pub mod client;

use std::io::{BufWriter, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use serde::Serialize;

use tarn_common::settings::Settings;
use tarn_row::types::ColumnType;

use crate::mariadb::{self, MariaDb, MariaDbConfig};
use crate::report::{
    BenchDocument, Output, Table as TextTable, data_dir_fate, format_count, format_number,
    format_ratio, ratio,
};
use crate::server::TarnServer;
use crate::stats::median;
use crate::workdir::WorkDir;
use crate::{BenchError, Result, tpch};
use client::{Client, READ_BUFFER_BYTES};

pub const QUERY: &str = "SELECT * FROM tpch.lineitem";
pub const SF_DEFAULT: f64 = 1.0;
pub const SF_QUICK: f64 = 0.1;
pub const ROUNDS_DEFAULT: u32 = 3;
pub const ROUNDS_MAX: u32 = 100;
/// Bytes a lineitem row takes in a database, roughly, for sizing the buffer pool.
const ROW_BYTES_ESTIMATE: u64 = 200;
/// The loopback is fast and noisy on small transfers: at least this many passes.
const LOOPBACK_ROUNDS_MIN: u32 = 7;
/// The marker of a loaded MariaDB: holds the scale factor and row count.
const MARIADB_MARKER: &str = "tarn-bench-wire.loaded";

/// Who reads the result.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Reader {
    /// [`client::Client`], discarding rows in its buffer.
    Lean,
    /// The `mariadb` command-line client with `--quick --batch`, output to /dev/null.
    Mariadb,
}

impl Reader {
    pub fn name(self) -> &'static str {
        match self {
            Reader::Lean => "lean",
            Reader::Mariadb => "mariadb",
        }
    }

    pub fn parse(text: &str) -> Option<Reader> {
        [Reader::Lean, Reader::Mariadb]
            .into_iter()
            .find(|r| r.name() == text)
    }
}

/// What `tarn bench wire` was asked to do.
#[derive(Clone, Debug)]
pub struct WireBenchOptions {
    /// Engine settings (from `--set`), passed on to `tarn serve`.
    pub settings: Settings,
    pub quick: bool,
    pub data_dir: Option<PathBuf>,
    pub scale_factor: f64,
    /// `send_threads` values for Tarn.
    pub threads: Vec<usize>,
    pub reader: Reader,
    pub rounds: u32,
    pub tarn: bool,
    pub mariadb: bool,
}

impl WireBenchOptions {
    pub fn new(settings: Settings, quick: bool) -> WireBenchOptions {
        WireBenchOptions {
            settings,
            quick,
            data_dir: None,
            scale_factor: if quick { SF_QUICK } else { SF_DEFAULT },
            threads: crate::scan::default_threads(crate::scan::cores()),
            reader: Reader::Lean,
            rounds: ROUNDS_DEFAULT,
            tarn: true,
            mariadb: true,
        }
    }
}

/// One measured reader.
#[derive(Clone, Debug, Serialize)]
pub struct WireRow {
    /// `loopback`, `tarn` or `mariadb`.
    pub source: String,
    /// `send_threads` for Tarn rows.
    pub threads: Option<usize>,
    /// `lean`, `mariadb`, or `socket` for the loopback.
    pub client: String,
    pub rows: u64,
    pub bytes: u64,
    pub seconds: f64,
    pub seconds_min: f64,
    pub seconds_max: f64,
    pub mb_per_sec: f64,
    pub rows_per_sec: f64,
    /// CPU seconds of the reading process during the median pass (lean client and
    /// loopback only).
    pub client_cpu_seconds: Option<f64>,
    /// CPU seconds of the server process per pass (median; 10 ms resolution): what
    /// the stream costs the server, which the other processes of a shared machine
    /// do not inflate as they do `seconds`.
    pub server_cpu_seconds: Option<f64>,
    pub vs_loopback: Option<f64>,
    pub vs_mariadb: Option<f64>,
}

#[derive(Clone, Debug, Serialize)]
pub struct WireConfig {
    pub scale_factor: f64,
    pub query: &'static str,
    pub reader: Reader,
    pub rounds: u32,
    pub threads: Vec<usize>,
    pub buffer_pool_bytes: u64,
    pub read_buffer_bytes: usize,
    pub data_dir: String,
    pub data_dir_kept: bool,
    pub mariadb_version: Option<String>,
    pub notes: Vec<String>,
}

#[derive(Clone, Debug, Serialize)]
pub struct WireSummary {
    pub vs_loopback_limit: Option<f64>,
    pub vs_mariadb: Option<f64>,
    pub best_threads: Option<usize>,
    pub tarn_mb_per_sec: Option<f64>,
    pub loopback_mb_per_sec: Option<f64>,
    pub mariadb_mb_per_sec: Option<f64>,
    pub mariadb_vs_loopback_limit: Option<f64>,
    /// MariaDB's server CPU seconds per pass over the best Tarn row's: how many times
    /// less CPU Tarn spends on the stream (steadier than `vs_mariadb` on a busy machine).
    pub server_cpu_vs_mariadb: Option<f64>,
    pub rows: u64,
}

pub struct WireReport {
    pub config: WireConfig,
    pub rows: Vec<WireRow>,
    pub summary: WireSummary,
}

/// The buffer pool for both servers: the `buffer_pool_size` setting if it was
/// changed, else 1.25x an estimate of lineitem's size at `scale_factor`.
pub fn pool_bytes(settings: &Settings, scale_factor: f64) -> Result<u64> {
    if settings.buffer_pool_size_bytes != Settings::default().buffer_pool_size_bytes {
        return Ok(settings.buffer_pool_size_bytes);
    }
    let rows = tpch::row_count_estimate("lineitem", scale_factor)?;
    Ok(tpch::bench::pool_size_for(rows * ROW_BYTES_ESTIMATE))
}

/// Timed passes of one reader.
struct Passes {
    rows: u64,
    bytes: u64,
    seconds: Vec<f64>,
    cpu: Vec<f64>,
    server_cpu: Vec<f64>,
}

impl Passes {
    fn row(&self, source: &str, threads: Option<usize>, client: &str) -> WireRow {
        let seconds = median(&self.seconds).unwrap_or(f64::NAN);
        let (min, max) = crate::stats::min_max(&self.seconds);
        let cpu = median(&self.cpu);
        WireRow {
            source: source.into(),
            threads,
            client: client.into(),
            rows: self.rows,
            bytes: self.bytes,
            seconds,
            seconds_min: min.unwrap_or(f64::NAN),
            seconds_max: max.unwrap_or(f64::NAN),
            mb_per_sec: self.bytes as f64 / 1e6 / seconds,
            rows_per_sec: self.rows as f64 / seconds,
            client_cpu_seconds: cpu,
            server_cpu_seconds: median(&self.server_cpu),
            vs_loopback: None,
            vs_mariadb: None,
        }
    }
}

fn check_options(options: &WireBenchOptions) -> Result<()> {
    tpch::check_sf_option(options.scale_factor)?;
    crate::check_rounds(options.rounds, ROUNDS_MAX)?;
    if options.tarn && (options.threads.is_empty() || options.threads.contains(&0)) {
        return Err(BenchError::Options(
            "--threads needs at least one value, each at least 1".into(),
        ));
    }
    crate::check_sides(options.tarn, options.mariadb)
}

/// Where a server is and how to log in, for the readers.
struct Endpoint {
    port: u16,
    user: &'static str,
    password: &'static str,
    /// The server's process, whose CPU time each pass measures.
    pid: Option<u32>,
}

/// The CPU time the server at `endpoint` has used so far.
fn server_cpu_time(endpoint: &Endpoint) -> Option<std::time::Duration> {
    tarn_io::os::process_cpu_time_of(endpoint.pid?)
}

/// Streams the query once with the lean client and returns (rows, bytes).
fn warm(endpoint: &Endpoint, setup: &[String]) -> Result<client::StreamStats> {
    let mut client = connect(endpoint)?;
    for sql in setup {
        client.execute(sql).map_err(wire_error(sql))?;
    }
    let stats = client.stream(QUERY).map_err(wire_error(QUERY))?;
    client.quit();
    Ok(stats)
}

fn connect(endpoint: &Endpoint) -> Result<Client> {
    Client::connect(
        "127.0.0.1",
        endpoint.port,
        endpoint.user,
        endpoint.password,
        None,
    )
    .map_err(|e| BenchError::Options(format!("connecting to port {}: {e}", endpoint.port)))
}

fn wire_error(what: &str) -> impl Fn(client::ClientError) -> BenchError + '_ {
    move |e| BenchError::Options(format!("{what}: {e}"))
}

/// Runs `rounds` timed passes with `reader` after `setup` statements in the same
/// session; every lean pass must return `expected_rows`.
fn timed_passes(
    name: &str,
    endpoint: &Endpoint,
    setup: &[String],
    reader: Reader,
    rounds: u32,
    expected: &client::StreamStats,
    output: &Output,
) -> Result<Passes> {
    let mut passes = Passes {
        rows: expected.rows,
        bytes: expected.bytes,
        seconds: Vec::new(),
        cpu: Vec::new(),
        server_cpu: Vec::new(),
    };
    for round in 1..=rounds {
        let server_cpu_before = server_cpu_time(endpoint);
        match reader {
            Reader::Lean => {
                let mut client = connect(endpoint)?;
                for sql in setup {
                    client.execute(sql).map_err(wire_error(sql))?;
                }
                let cpu_before = tarn_io::os::process_cpu_time();
                let stats = client.stream(QUERY).map_err(|e| BenchError::WrongData {
                    row: name.into(),
                    detail: e.to_string(),
                })?;
                passes
                    .cpu
                    .push((tarn_io::os::process_cpu_time() - cpu_before).as_secs_f64());
                client.quit();
                if stats.rows != expected.rows {
                    return Err(BenchError::WrongData {
                        row: name.into(),
                        detail: format!("{} rows, expected {}", stats.rows, expected.rows),
                    });
                }
                passes.seconds.push(stats.seconds);
            }
            Reader::Mariadb => {
                passes
                    .seconds
                    .push(mariadb_cli_pass(name, endpoint, setup)?);
            }
        }
        if let (Some(before), Some(after)) = (server_cpu_before, server_cpu_time(endpoint)) {
            passes.server_cpu.push((after - before).as_secs_f64());
        }
        output.progress(&format!(
            "  {name} round {round}: {:.3} s",
            passes.seconds.last().copied().unwrap_or_default()
        ));
    }
    Ok(passes)
}

/// One pass of `mariadb --quick --batch --skip-ssl -e "<setup>; QUERY" > /dev/null`: its
/// seconds.
fn mariadb_cli_pass(name: &str, endpoint: &Endpoint, setup: &[String]) -> Result<f64> {
    let program = mariadb::client_program().ok_or_else(|| {
        BenchError::Options("--client mariadb needs the mariadb command-line client".into())
    })?;
    let mut script = String::new();
    for sql in setup {
        script.push_str(sql);
        script.push_str("; ");
    }
    script.push_str(QUERY);
    let mut command = Command::new(program);
    command
        .arg("--no-defaults")
        .arg("--quick")
        .arg("--batch")
        // Plain TCP with both servers: Tarn offers TLS and the private MariaDB has
        // no certificate, so the CLI's default would encrypt one side only.
        .arg("--skip-ssl")
        .arg("--protocol=TCP")
        .arg("-h")
        .arg("127.0.0.1")
        .arg("-P")
        .arg(endpoint.port.to_string())
        .arg("-u")
        .arg(endpoint.user);
    if !endpoint.password.is_empty() {
        command.arg(format!("--password={}", endpoint.password));
    }
    command
        .arg("-e")
        .arg(&script)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let started = Instant::now();
    let out = command.output().map_err(|source| BenchError::Os {
        what: "running the mariadb client".into(),
        source,
    })?;
    let seconds = started.elapsed().as_secs_f64();
    if !out.status.success() {
        return Err(BenchError::WrongData {
            row: name.into(),
            detail: format!(
                "the mariadb client failed ({}): {}",
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            ),
        });
    }
    Ok(seconds)
}

/// Sends `bytes` through a loopback TCP socket: a writer thread writes 1 MiB buffers,
/// the reader discards into a [`READ_BUFFER_BYTES`] buffer. Returns (seconds, reader
/// CPU seconds, all threads of this process).
pub fn loopback_pass(bytes: u64) -> Result<(f64, f64)> {
    let os = |what: &str| {
        let what = what.to_string();
        move |source| BenchError::Os { what, source }
    };
    let listener = TcpListener::bind("127.0.0.1:0").map_err(os("binding a loopback socket"))?;
    let port = listener
        .local_addr()
        .map_err(os("binding a loopback socket"))?
        .port();
    let writer = std::thread::spawn(move || -> std::io::Result<()> {
        let (stream, _) = listener.accept()?;
        stream.set_nodelay(true)?;
        let mut stream = stream;
        let buffer = vec![0x5Au8; 1 << 20];
        let mut left = bytes;
        while left > 0 {
            let n = left.min(buffer.len() as u64) as usize;
            stream.write_all(&buffer[..n])?;
            left -= n as u64;
        }
        stream.flush()
    });
    let mut stream =
        TcpStream::connect(("127.0.0.1", port)).map_err(os("connecting to the loopback socket"))?;
    let mut buffer = vec![0u8; READ_BUFFER_BYTES];
    let cpu_before = tarn_io::os::process_cpu_time();
    let started = Instant::now();
    let mut received = 0u64;
    while received < bytes {
        let n = stream
            .read(&mut buffer)
            .map_err(os("reading the loopback socket"))?;
        if n == 0 {
            break;
        }
        received += n as u64;
    }
    let seconds = started.elapsed().as_secs_f64();
    let cpu = (tarn_io::os::process_cpu_time() - cpu_before).as_secs_f64();
    writer
        .join()
        .map_err(|_| BenchError::Options("the loopback writer panicked".into()))?
        .map_err(os("writing the loopback socket"))?;
    if received != bytes {
        return Err(BenchError::WrongData {
            row: "loopback".into(),
            detail: format!("received {received} bytes of {bytes}"),
        });
    }
    Ok((seconds, cpu))
}

/// `CREATE TABLE tpch.lineitem` for MariaDB with Tarn's types, key and index.
pub fn mariadb_lineitem_ddl() -> String {
    let table = tpch::tables()
        .into_iter()
        .find(|t| t.name == "lineitem")
        .expect("TPC-H has lineitem");
    let mut text = String::from("CREATE TABLE tpch.lineitem (");
    for column in &table.columns {
        let ty = match &column.ty {
            ColumnType::Int { .. } => "INT".to_string(),
            ColumnType::BigInt { .. } => "BIGINT".to_string(),
            ColumnType::Decimal { precision, scale } => format!("DECIMAL({precision},{scale})"),
            ColumnType::Date => "DATE".to_string(),
            ColumnType::Char { len } => format!("CHAR({len})"),
            ColumnType::VarChar { len } => format!("VARCHAR({len})"),
            other => unreachable!("lineitem has no column of type {other:?}"),
        };
        text.push_str(&format!("{} {ty} NOT NULL, ", column.name));
    }
    let key: Vec<&str> = table
        .primary_key
        .iter()
        .map(|&i| table.columns[i].name.as_str())
        .collect();
    text.push_str(&format!("PRIMARY KEY ({})", key.join(", ")));
    for index in &table.indexes {
        let columns: Vec<&str> = index
            .columns
            .iter()
            .map(|&i| table.columns[i].name.as_str())
            .collect();
        text.push_str(&format!(", KEY {} ({})", index.name, columns.join(", ")));
    }
    text.push_str(") ENGINE=InnoDB");
    text
}

/// Writes lineitem at `scale_factor` as tab-separated lines (the rows Tarn loads);
/// returns the row count.
fn write_lineitem_tsv(scale_factor: f64, path: &Path) -> Result<u64> {
    use std::fmt::Write as _;
    let file = std::fs::File::create(path).map_err(|source| BenchError::Os {
        what: format!("creating '{}'", path.display()),
        source,
    })?;
    let mut out = BufWriter::with_capacity(1 << 20, file);
    let mut line = String::new();
    let rows = tpch::generate_parallel(
        "lineitem",
        scale_factor,
        tpch::load::default_threads(),
        8192,
        |chunk| {
            for row in chunk {
                line.clear();
                for (i, value) in row.iter().enumerate() {
                    if i > 0 {
                        line.push('\t');
                    }
                    let _ = write!(line, "{value}");
                }
                line.push('\n');
                out.write_all(line.as_bytes())
                    .map_err(|source| BenchError::Os {
                        what: format!("writing '{}'", path.display()),
                        source,
                    })?;
            }
            Ok(())
        },
    )?;
    out.flush().map_err(|source| BenchError::Os {
        what: format!("writing '{}'", path.display()),
        source,
    })?;
    Ok(rows)
}

/// Loads lineitem into the private MariaDB unless the marker says it holds
/// `scale_factor` already; returns the table's row count.
fn ensure_mariadb_loaded(
    server: &MariaDb,
    dir: &Path,
    scale_factor: f64,
    output: &Output,
) -> Result<u64> {
    let marker = dir.join(MARIADB_MARKER);
    let mut client = server.connect(None)?;
    let wanted = format!("{scale_factor}");
    if std::fs::read_to_string(&marker).is_ok_and(|text| text.trim() == wanted)
        && let Ok(Some(count)) = client.query_value("SELECT COUNT(*) FROM tpch.lineitem")
    {
        output.progress(&format!(
            "reusing MariaDB's TPC-H SF {scale_factor} lineitem in '{}'",
            dir.display()
        ));
        return count
            .parse()
            .map_err(|_| BenchError::Options(format!("MariaDB counted '{count}' rows")));
    }
    let _ = std::fs::remove_file(&marker);
    let tsv = dir.join("lineitem.tsv");
    output.progress(&format!(
        "generating lineitem at SF {scale_factor} into '{}' ...",
        tsv.display()
    ));
    let generated = write_lineitem_tsv(scale_factor, &tsv)?;
    output.progress(&format!(
        "loading {} rows into MariaDB (LOAD DATA INFILE) ...",
        format_count(Some(generated as f64))
    ));
    let started = Instant::now();
    let path = tsv
        .display()
        .to_string()
        .replace('\\', "\\\\")
        .replace('\'', "\\'");
    for sql in [
        "CREATE DATABASE IF NOT EXISTS tpch".to_string(),
        "DROP TABLE IF EXISTS tpch.lineitem".to_string(),
        mariadb_lineitem_ddl(),
        "SET unique_checks = 0".to_string(),
        format!(
            "LOAD DATA INFILE '{path}' INTO TABLE tpch.lineitem CHARACTER SET utf8mb4 \
             FIELDS TERMINATED BY '\\t' LINES TERMINATED BY '\\n'"
        ),
    ] {
        client
            .execute(&sql)
            .map_err(|e| BenchError::Options(format!("MariaDB: {sql}: {e}")))?;
    }
    let _ = std::fs::remove_file(&tsv);
    let count: u64 = client
        .query_value("SELECT COUNT(*) FROM tpch.lineitem")
        .map_err(wire_error("MariaDB: counting lineitem"))?
        .unwrap_or_default()
        .parse()
        .unwrap_or_default();
    if count != generated {
        return Err(BenchError::WrongData {
            row: "mariadb".into(),
            detail: format!("loaded {count} rows of {generated}"),
        });
    }
    output.progress(&format!(
        "loaded MariaDB in {:.1} s",
        started.elapsed().as_secs_f64()
    ));
    std::fs::write(&marker, &wanted).map_err(|source| BenchError::Os {
        what: format!("writing '{}'", marker.display()),
        source,
    })?;
    Ok(count)
}

/// Runs the bench (see the module docs).
pub fn run(options: &WireBenchOptions, output: &Output) -> Result<WireReport> {
    check_options(options)?;
    let workdir = WorkDir::open(options.data_dir.as_deref(), ".tarn-bench-wire-")?;
    let pool = pool_bytes(&options.settings, options.scale_factor)?;
    let sf = options.scale_factor;
    let mut notes = Vec::new();
    let mut rows: Vec<WireRow> = Vec::new();
    let mut reference: Option<client::StreamStats> = None;

    if options.tarn {
        let dir = workdir.path().join("tarn");
        let mut settings = options.settings.clone();
        settings.data_dir = dir.clone();
        {
            let storage = tarn_catalog::Storage::open(&settings)?;
            let note = tpch::load::ensure_loaded(&storage, sf, output)?;
            notes.push(format!("tarn: {}", note.text));
        }
        output.progress("starting tarn serve ...");
        let mut server = TarnServer::start(
            &dir,
            &options.settings,
            &[format!("buffer_pool_size={pool}")],
        )?;
        let endpoint = Endpoint {
            port: server.port(),
            user: crate::server::TARN_USER,
            password: crate::server::TARN_PASSWORD,
            pid: server.pid(),
        };
        let mut count_client = server.connect(None)?;
        let count: u64 = count_client
            .query_value("SELECT COUNT(*) FROM tpch.lineitem")
            .map_err(wire_error("tarn: counting lineitem"))?
            .unwrap_or_default()
            .parse()
            .unwrap_or_default();
        count_client.quit();
        output.progress("tarn: warming (one untimed pass) ...");
        let warm_stats = warm(&endpoint, &[])?;
        if warm_stats.rows != count {
            return Err(BenchError::WrongData {
                row: "tarn warm-up".into(),
                detail: format!("{} rows, COUNT(*) says {count}", warm_stats.rows),
            });
        }
        for &threads in &options.threads {
            let name = format!("tarn t={threads}");
            let setup = vec![format!("SET send_threads = {threads}")];
            let passes = timed_passes(
                &name,
                &endpoint,
                &setup,
                options.reader,
                options.rounds,
                &warm_stats,
                output,
            )?;
            rows.push(passes.row("tarn", Some(threads), options.reader.name()));
        }
        server.stop();
        reference = Some(warm_stats);
    }

    let mut mariadb_version = None;
    if options.mariadb {
        if mariadb::server_program().is_none() {
            notes.push("mariadb: not installed, skipped".into());
        } else {
            let dir = workdir.path().join("mariadb");
            let mut config = MariaDbConfig::new(&dir, pool);
            config.secure_file_priv = Some(dir.clone());
            output.progress("starting MariaDB ...");
            let mut server = MariaDb::start(&config)?;
            mariadb_version = Some(server.version().to_string());
            let count = ensure_mariadb_loaded(&server, &dir, sf, output)?;
            if let Some(reference) = &reference
                && reference.rows != count
            {
                return Err(BenchError::WrongData {
                    row: "mariadb".into(),
                    detail: format!(
                        "MariaDB holds {count} rows, Tarn streamed {}",
                        reference.rows
                    ),
                });
            }
            let endpoint = Endpoint {
                port: server.port(),
                user: mariadb::USER,
                password: mariadb::PASSWORD,
                pid: server.pid(),
            };
            output.progress("mariadb: warming (one untimed pass) ...");
            let warm_stats = warm(&endpoint, &[])?;
            if warm_stats.rows != count {
                return Err(BenchError::WrongData {
                    row: "mariadb warm-up".into(),
                    detail: format!("{} rows, COUNT(*) says {count}", warm_stats.rows),
                });
            }
            let passes = timed_passes(
                "mariadb",
                &endpoint,
                &[],
                options.reader,
                options.rounds,
                &warm_stats,
                output,
            )?;
            rows.push(passes.row("mariadb", None, options.reader.name()));
            server.stop();
            reference.get_or_insert(warm_stats);
        }
    }

    let reference = reference.ok_or_else(|| {
        BenchError::Options("no server ran (Tarn skipped and MariaDB not installed)".into())
    })?;
    output.progress(&format!(
        "loopback: {} bytes through 127.0.0.1 ...",
        format_count(Some(reference.bytes as f64))
    ));
    loopback_pass(reference.bytes)?; // warm-up
    let mut loopback = Passes {
        rows: reference.rows,
        bytes: reference.bytes,
        seconds: Vec::new(),
        cpu: Vec::new(),
        server_cpu: Vec::new(),
    };
    for _ in 0..options.rounds.max(LOOPBACK_ROUNDS_MIN) {
        let (seconds, cpu) = loopback_pass(reference.bytes)?;
        loopback.seconds.push(seconds);
        loopback.cpu.push(cpu);
    }
    let mut loopback_row = loopback.row("loopback", None, "socket");
    // The limit is what the socket can do: its fastest pass, not a noisy median.
    loopback_row.seconds = loopback_row.seconds_min;
    loopback_row.mb_per_sec = loopback_row.bytes as f64 / 1e6 / loopback_row.seconds;
    loopback_row.rows = 0;
    loopback_row.rows_per_sec = f64::NAN;
    rows.insert(0, loopback_row);

    let loopback_mbps = Some(rows[0].mb_per_sec);
    let mariadb_seconds = rows
        .iter()
        .find(|r| r.source == "mariadb")
        .map(|r| r.seconds);
    for row in &mut rows {
        row.vs_loopback = ratio(Some(row.mb_per_sec), loopback_mbps);
        if row.source != "loopback" {
            row.vs_mariadb = ratio(mariadb_seconds, Some(row.seconds));
        }
    }
    let best = rows
        .iter()
        .filter(|r| r.source == "tarn")
        .min_by(|a, b| a.seconds.total_cmp(&b.seconds));
    let mariadb_row = rows.iter().find(|r| r.source == "mariadb");
    let summary = WireSummary {
        vs_loopback_limit: best.and_then(|b| b.vs_loopback),
        vs_mariadb: best.and_then(|b| ratio(mariadb_seconds, Some(b.seconds))),
        best_threads: best.and_then(|b| b.threads),
        tarn_mb_per_sec: best.map(|b| b.mb_per_sec),
        loopback_mb_per_sec: loopback_mbps,
        mariadb_mb_per_sec: mariadb_row.map(|r| r.mb_per_sec),
        mariadb_vs_loopback_limit: mariadb_row.and_then(|r| r.vs_loopback),
        server_cpu_vs_mariadb: best.and_then(|b| {
            ratio(
                mariadb_row.and_then(|r| r.server_cpu_seconds),
                b.server_cpu_seconds,
            )
        }),
        rows: reference.rows,
    };
    if !options.tarn {
        notes.push("tarn: skipped (--no-tarn)".into());
    }
    let config = WireConfig {
        scale_factor: sf,
        query: QUERY,
        reader: options.reader,
        rounds: options.rounds,
        threads: if options.tarn {
            options.threads.clone()
        } else {
            Vec::new()
        },
        buffer_pool_bytes: pool,
        read_buffer_bytes: READ_BUFFER_BYTES,
        data_dir: workdir.path().display().to_string(),
        data_dir_kept: !workdir.is_temporary(),
        mariadb_version,
        notes,
    };
    Ok(WireReport {
        config,
        rows,
        summary,
    })
}

/// The results table.
pub fn table(report: &WireReport) -> TextTable {
    let mut table = TextTable::new(
        format!(
            "{} at TPC-H SF {} ({} client, median of {})",
            QUERY,
            report.config.scale_factor,
            report.config.reader.name(),
            report.config.rounds
        ),
        &[
            "reader",
            "client",
            "rows",
            "bytes",
            "seconds",
            "MB/s",
            "rows/s",
            "client CPU s",
            "server CPU s",
            "vs loopback",
            "vs mariadb",
        ],
    );
    for row in &report.rows {
        let name = match row.threads {
            Some(t) => format!("{} t={t}", row.source),
            None => row.source.clone(),
        };
        table.add_row(vec![
            name,
            row.client.clone(),
            if row.rows == 0 {
                "-".into()
            } else {
                format_count(Some(row.rows as f64))
            },
            format_count(Some(row.bytes as f64)),
            format_number(Some(row.seconds), 3),
            format_number(Some(row.mb_per_sec), 1),
            format_count(Some(row.rows_per_sec)),
            format_number(row.client_cpu_seconds, 3),
            format_number(row.server_cpu_seconds, 2),
            format_ratio(row.vs_loopback),
            format_ratio(row.vs_mariadb),
        ]);
    }
    table
}

/// Runs the bench and prints its table and, with `--json`, its document.
pub fn run_and_print(options: &WireBenchOptions, output: &Output) -> Result<WireReport> {
    let report = run(options, output)?;
    output.note(&format!(
        "data in '{}'{}; buffer pool {} MiB for both servers",
        report.config.data_dir,
        data_dir_fate(report.config.data_dir_kept),
        report.config.buffer_pool_bytes >> 20
    ));
    for note in &report.config.notes {
        output.note(note);
    }
    output.table(&table(&report));
    let s = &report.summary;
    output.note(&format!(
        "\nvs_loopback_limit {} (target >= 0.50), vs_mariadb {} (target >= 5), best at \
         send_threads = {}; MariaDB's server CPU over Tarn's: {}",
        format_ratio(s.vs_loopback_limit),
        format_ratio(s.vs_mariadb),
        s.best_threads.map_or("-".into(), |t| t.to_string()),
        format_ratio(s.server_cpu_vs_mariadb),
    ));
    output.json(&BenchDocument::new(
        "wire",
        &report.config,
        &report.rows,
        &report.summary,
    ))?;
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mariadb_lineitem_has_tarns_types_and_key() {
        let ddl = mariadb_lineitem_ddl();
        assert!(ddl.contains("l_orderkey BIGINT NOT NULL"), "{ddl}");
        assert!(ddl.contains("l_quantity DECIMAL(15,2) NOT NULL"), "{ddl}");
        assert!(ddl.contains("l_returnflag CHAR(1) NOT NULL"), "{ddl}");
        assert!(ddl.contains("l_comment VARCHAR(44) NOT NULL"), "{ddl}");
        assert!(
            ddl.contains("PRIMARY KEY (l_orderkey, l_linenumber)"),
            "{ddl}"
        );
        assert!(ddl.contains("KEY l_shipdate (l_shipdate)"), "{ddl}");
    }

    #[test]
    fn the_loopback_delivers_every_byte() {
        let (seconds, _) = loopback_pass(3 * READ_BUFFER_BYTES as u64 + 17).unwrap();
        assert!(seconds > 0.0);
    }
}
