//! The `tarn` command: `init`, `settings` and benchmarks today; the server and shell
//! join it later.
//!
//! ```text
//! tarn [--set name=value]... bench io [--quick] [--json] [--fio] [--data-dir DIR] ...
//! tarn [--set name=value]... bench bufferpool [--quick] [--json] [--data-dir DIR] ...
//! tarn [--set name=value]... bench secondary [--quick] [--json] [--data-dir DIR] [--sf SF] ...
//! tarn [--set name=value]... bench scan [--quick] [--json] [--data-dir DIR] [--sf SF] ...
//! tarn [--set name=value]... bench commit [--quick] [--json] [--data-dir DIR] [--seconds S] ...
//! tarn [--set name=value]... bench locks [--quick] [--json] [--data-dir DIR] [--seconds S] ...
//! tarn [--set name=value]... bench tpch [--quick] [--json] [--data-dir DIR] [--sf SF] [--threads 1,2] [--queries 1,3,6] ...
//! tarn [--set name=value]... bench wire [--quick] [--json] [--data-dir DIR] [--sf SF] [--threads 1,2] [--client lean|mariadb] [--no-mariadb] ...
//! tarn [--set name=value]... bench sysbench [--quick] [--json] [--data-dir DIR] [--threads 1,8,32,128] [--workloads point_select,...] [--time-s S] [--tls] ...
//! ```
//!
//! Every command starts from `Settings::default()`, applies each `--set name=value` in
//! order (validated by `Settings::set`, so a bad value stops the command with the
//! setting named), then runs. Logs go to stderr, filtered by `RUST_LOG` (default
//! `info`). An error prints `error: <message> (MySQL error N, SQLSTATE S)` and exits
//! with status 1.
//!
//! Adding a bench: a variant in [`BenchCommand`] with its own `Args` struct that
//! flattens [`CommonBenchArgs`], and an arm in [`run_bench`].

#![forbid(unsafe_code)]

mod init;
mod serve;
mod shell;

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

use tarn_bench::bufferpool::{BufferPoolBenchOptions, Dataset, Distribution};
use tarn_bench::commit::{ClientModel, CommitBenchOptions};
use tarn_bench::io::{IoBenchOptions, Pattern};
use tarn_bench::locks::LocksBenchOptions;
use tarn_bench::report::Output;
use tarn_bench::scan::ScanBenchOptions;
use tarn_bench::secondary::SecondaryBenchOptions;
use tarn_bench::tpch::bench::TpchBenchOptions;
use tarn_common::settings::{IoMethod, LogDevice, Settings, parse_size_bytes};

/// mimalloc rather than glibc's malloc: result rows are allocated on scan threads
/// and freed on encoding threads, and glibc's cross-thread frees and arena locks
/// cost a quarter of the server's CPU on a full-table stream (`tarn bench wire`).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Parser)]
#[command(name = "tarn", version, about = "The Tarn database")]
struct Cli {
    /// Set an engine setting, e.g. `--set io_uring_queue_depth=256` (repeatable).
    #[arg(long = "set", value_name = "NAME=VALUE", global = true)]
    set: Vec<String>,

    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run a benchmark against its baseline.
    Bench {
        #[command(subcommand)]
        bench: BenchCommand,
    },
    /// Create (or open) the data directory and start the storage engine once: checks
    /// every setting, fixes the page size, and reports the I/O path and buffer pool.
    Init,
    /// List every setting with its current value and meaning.
    Settings,
    /// Generate a data set and bulk-load it into the data directory.
    Load {
        #[command(subcommand)]
        data: LoadCommand,
    },
    /// The MySQL protocol server: `mariadb -h 127.0.0.1 -P 3306 -u root` connects.
    Serve(ServeArgs),
    /// A SQL shell on the data directory: `-e "SQL"`, a script on stdin, or an
    /// interactive prompt.
    Sql(SqlArgs),
    /// Run transactions until killed, logging acknowledged commits (the child process
    /// of the crash tests and the recovery bench).
    #[command(hide = true)]
    CrashWorker(CrashWorkerArgs),
}

#[derive(Args)]
struct ServeArgs {
    /// A TOML file of settings and system variables (`buffer_pool_size = "1G"`,
    /// `max_connections = 500`); flags and `--set` override it.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// The data directory [default: tarn-data, created on first start].
    #[arg(long, value_name = "DIR")]
    data_dir: Option<PathBuf>,
    /// The address to listen on [default: 127.0.0.1].
    #[arg(long, value_name = "ADDRESS")]
    bind: Option<String>,
    /// The TCP port [default: 3306; 0 picks a free one].
    #[arg(long)]
    port: Option<u16>,
}

#[derive(Args)]
struct SqlArgs {
    /// The data directory [default: the data_dir setting].
    #[arg(long, value_name = "DIR")]
    data_dir: Option<PathBuf>,
    /// Statements to run (instead of reading stdin).
    #[arg(short = 'e', long = "execute", value_name = "SQL")]
    execute: Option<String>,
    /// The database to use.
    #[arg(short = 'D', long = "database", value_name = "DB")]
    database: Option<String>,
    /// Go on after an error (a script otherwise stops at the first one).
    #[arg(short = 'f', long)]
    force: bool,
    /// Print results as bordered tables (the default on a terminal).
    #[arg(short = 't', long, conflicts_with = "batch")]
    table: bool,
    /// Print results as tab-separated lines (the default when not on a terminal).
    #[arg(short = 'B', long)]
    batch: bool,
}

#[derive(Args)]
struct CrashWorkerArgs {
    /// The data directory [default: the data_dir setting].
    #[arg(long, value_name = "DIR")]
    data_dir: Option<PathBuf>,
    /// Where acknowledgements are appended.
    #[arg(long, value_name = "FILE")]
    ack_file: PathBuf,
    #[arg(long, default_value_t = 4)]
    threads: usize,
    #[arg(long, default_value_t = 200)]
    keys_per_thread: u64,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Stop cleanly after this many milliseconds, if not killed first.
    #[arg(long, default_value_t = 600_000)]
    run_ms: u64,
    /// Abort (a crash) once the log since the last checkpoint holds this many bytes.
    #[arg(long, value_name = "BYTES")]
    abort_at_log_bytes: Option<u64>,
    /// Rows of 1-3 KB (more log per transaction).
    #[arg(long)]
    big_rows: bool,
}

#[derive(Subcommand)]
enum LoadCommand {
    /// The 8 TPC-H tables (generated in parallel by tpchgen), with primary keys and
    /// the benches' secondary indexes, in database `tpch` (replacing a previous load).
    Tpch(LoadTpchArgs),
}

#[derive(Args)]
struct LoadTpchArgs {
    /// TPC-H scale factor (1 is about 1 GB of raw data, 8.7 million rows).
    #[arg(long, value_name = "SF", default_value_t = 1.0)]
    sf: f64,

    /// The data directory [default: the data_dir setting].
    #[arg(long, value_name = "DIR")]
    data_dir: Option<PathBuf>,

    /// Threads: one loads, the others generate [default: one per core, at least 2].
    #[arg(long, value_name = "N")]
    threads: Option<usize>,

    /// Print the result as one JSON object on stdout.
    #[arg(long)]
    json: bool,
}

#[derive(Subcommand)]
enum BenchCommand {
    /// S5: page I/O paths (buffered, direct, io_uring) x patterns x concurrency, against fio.
    Io(IoArgs),
    /// S4: buffer pool instances x threads x distributions, with latch waits per latch
    /// class, on a data set 10x the pool and one that fits.
    Bufferpool(BufferPoolArgs),
    /// S2: cold secondary-index range scans of TPC-H orders by o_custkey, per prefetch
    /// unit and selectivity, against no prefetch (unit 0) and fio random reads.
    Secondary(SecondaryArgs),
    /// S1: parallel full scan of TPC-H lineitem (all columns and a narrow projection),
    /// cold (O_DIRECT, fresh pool) and warm, at T = 1, 2, ..., against fio's sequential
    /// read of the same file.
    Scan(ScanArgs),
    /// S3: committed single-row update transactions per second by log device (fsync,
    /// dsync, pmem, none) and clients, with group commit's commits per flush, against
    /// fio's fdatasync rate.
    Commit(CommitArgs),
    /// S3: a LinkBench-like mix on a zipfian graph by clients x lock scheduling (fifo,
    /// cats) x log device (fsync, pmem): throughput, latency, lock waits, cats/fifo.
    Locks(LocksArgs),
    /// Crash recovery: a child process writes a redo log of --log-size and crashes;
    /// recovery's replay rate (log MB/s) and time, then a consistency check.
    Recovery(RecoveryArgs),
    /// The 22 TPC-H queries through the SQL engine: seconds per query by scan threads,
    /// each result checked against the expected answer (SF 0.01, 0.1 and 1).
    Tpch(TpchArgs),
    /// `SELECT * FROM lineitem` streamed by `tarn serve` to a lean discarding client, by
    /// send_threads, against the loopback transfer limit and MariaDB.
    Wire(WireArgs),
    /// sysbench OLTP workloads (point_select, read_only, read_write, write_only) by
    /// threads against `tarn serve` and MariaDB with the same durability: TPS and p95.
    Sysbench(SysbenchArgs),
}

#[derive(Args)]
struct WireArgs {
    #[command(flatten)]
    common: CommonBenchArgs,

    /// TPC-H scale factor [default: 1, 0.1 with --quick].
    #[arg(long, value_name = "SF")]
    sf: Option<f64>,

    /// send_threads values for Tarn [default: 1,2,... up to the core count].
    #[arg(long, value_delimiter = ',')]
    threads: Option<Vec<usize>>,

    /// The reader: `lean` (a minimal protocol client discarding rows) or `mariadb`
    /// (the mariadb CLI with --quick --batch, output to /dev/null).
    #[arg(long, value_name = "CLIENT", default_value = "lean", value_parser = parse_wire_client)]
    client: tarn_bench::wire::Reader,

    /// Timed passes per reader; the median is reported [default: 3].
    #[arg(long, value_name = "N")]
    rounds: Option<u32>,

    /// Skip MariaDB even where it is installed.
    #[arg(long)]
    no_mariadb: bool,

    /// Skip Tarn (measure MariaDB and the loopback only).
    #[arg(long)]
    no_tarn: bool,
}

fn parse_wire_client(text: &str) -> Result<tarn_bench::wire::Reader, String> {
    tarn_bench::wire::Reader::parse(text)
        .ok_or_else(|| format!("'{text}' is not a client: use lean or mariadb"))
}

#[derive(Args)]
struct SysbenchArgs {
    #[command(flatten)]
    common: CommonBenchArgs,

    /// Client threads [default: 1,8,32,128; 1,32 with --quick].
    #[arg(long, value_delimiter = ',')]
    threads: Option<Vec<usize>>,

    /// Workloads [default: point_select,read_only,read_write,write_only].
    #[arg(long, value_delimiter = ',')]
    workloads: Option<Vec<String>>,

    /// Seconds per run [default: 10, 3 with --quick].
    #[arg(long, value_name = "S")]
    time_s: Option<u32>,

    /// sbtest tables [default: 8, 2 with --quick].
    #[arg(long, value_name = "N")]
    tables: Option<u32>,

    /// Rows per table [default: 100000, 10000 with --quick].
    #[arg(long, value_name = "N")]
    table_size: Option<u64>,

    /// Skip MariaDB even where it is installed.
    #[arg(long)]
    no_mariadb: bool,

    /// Skip Tarn (measure MariaDB only).
    #[arg(long)]
    no_tarn: bool,

    /// Reach both servers over TLS (one self-signed certificate for both).
    #[arg(long)]
    tls: bool,
}

/// Options every bench takes (see the `tarn_bench` crate docs for the conventions).
#[derive(Args)]
struct CommonBenchArgs {
    /// A short run (under a minute) of the rows the summary needs.
    #[arg(long)]
    quick: bool,

    /// Print one JSON object with `rows` and `summary` on stdout (tables go to stderr).
    #[arg(long)]
    json: bool,

    /// Keep the bench data in DIR and reuse it on later runs (default: a temporary
    /// directory, removed at the end).
    #[arg(long, value_name = "DIR")]
    data_dir: Option<PathBuf>,
}

#[derive(Args)]
struct IoArgs {
    #[command(flatten)]
    common: CommonBenchArgs,

    /// Also run fio after each row (same file, block size, pattern and depth) and print
    /// Tarn/fio; installs fio with apt-get if it is missing and this is root.
    #[arg(long)]
    fio: bool,

    /// Size of the bench file [default: 4G, 512M with --quick].
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    file_size: Option<u64>,

    /// Seconds per row [default: 4, 2 with --quick].
    #[arg(long, value_name = "SECONDS")]
    seconds: Option<f64>,

    /// With --fio, alternate Tarn and fio this many times per row, order swapped each
    /// round, splitting the row's seconds between rounds [default: 2].
    #[arg(long, value_name = "N")]
    rounds: Option<u32>,

    /// Paths to measure: buffered, direct, uring [default: all].
    #[arg(long, value_delimiter = ',', value_parser = parse_path)]
    paths: Option<Vec<IoMethod>>,

    /// Patterns: seqread, randread, randwrite, randrw [default: all].
    #[arg(long, value_delimiter = ',', value_parser = parse_pattern)]
    patterns: Option<Vec<Pattern>>,

    /// Concurrency levels: threads for buffered/direct, queue depth for uring
    /// [default: 1,8,32,128].
    #[arg(long, value_delimiter = ',')]
    depths: Option<Vec<u32>>,

    /// Page size (= block size) of the bench directory [default: the page_size
    /// setting, 16K].
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    page_size: Option<u64>,
}

#[derive(Args)]
struct BufferPoolArgs {
    #[command(flatten)]
    common: CommonBenchArgs,

    /// Seconds measured per cell, after its warm-up [default: 2, 1 with --quick].
    #[arg(long, value_name = "SECONDS")]
    seconds: Option<f64>,

    /// Thread counts [default: 1,4,16,64,256; 8,64 with --quick].
    #[arg(long, value_delimiter = ',')]
    threads: Option<Vec<u32>>,

    /// Buffer pool instance counts [default: 1,4,8,16,32,64; 1,8,64 with --quick].
    #[arg(long, value_delimiter = ',')]
    instances: Option<Vec<u32>>,

    /// Page distributions: uniform, zipf [default: both; zipf with --quick].
    #[arg(long, value_delimiter = ',', value_parser = parse_distribution)]
    distributions: Option<Vec<Distribution>>,

    /// Data sets: larger (10x the pool), fits (half the pool) [default: both].
    #[arg(long, value_delimiter = ',', value_parser = parse_dataset)]
    datasets: Option<Vec<Dataset>>,

    /// Buffer pool size [default: 64M, 32M with --quick].
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pool_size: Option<u64>,

    /// Percent of operations that write (exclusive latch, counter, mark_dirty)
    /// [default: 10].
    #[arg(long, value_name = "N")]
    write_pct: Option<u32>,

    /// Page size of the bench directory [default: the page_size setting, 16K].
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    page_size: Option<u64>,

    /// Thread count of the S4 tables [default: the largest measured].
    #[arg(long, value_name = "N")]
    s4_threads: Option<u32>,
}

#[derive(Args)]
struct ScanArgs {
    #[command(flatten)]
    common: CommonBenchArgs,

    /// TPC-H scale factor [default: 1, 0.1 with --quick].
    #[arg(long, value_name = "SF")]
    sf: Option<f64>,

    /// Scan worker counts [default: 1,2,... up to the core count].
    #[arg(long, value_delimiter = ',')]
    threads: Option<Vec<usize>>,

    /// Buffer pool size for the scans [default: 1.5x lineitem's data file].
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pool_size: Option<u64>,

    /// Runs per cell; the median is reported [default: 3, 1 with --quick].
    #[arg(long, value_name = "N")]
    rounds: Option<u32>,

    /// Seconds of each fio run per round [default: 3, 1.5 with --quick].
    #[arg(long, value_name = "SECONDS")]
    fio_seconds: Option<f64>,

    /// Skip the fio baseline (the device ratios are then null).
    #[arg(long)]
    no_fio: bool,

    /// Modes to measure: cold, warm [default: both].
    #[arg(long, value_delimiter = ',', value_parser = parse_scan_mode)]
    modes: Option<Vec<tarn_bench::scan::Mode>>,

    /// Rows per batch the scan workers fill [default: the engine's, 1024].
    #[arg(long, value_name = "N")]
    batch_rows: Option<usize>,
}

#[derive(Args)]
struct TpchArgs {
    #[command(flatten)]
    common: CommonBenchArgs,

    /// TPC-H scale factor; answers exist for 0.01, 0.1 and 1 [default: 0.1, 0.01
    /// with --quick].
    #[arg(long, value_name = "SF")]
    sf: Option<f64>,

    /// Scan thread counts (the scan_threads setting) [default: 1,2,... up to the core
    /// count].
    #[arg(long, value_delimiter = ',')]
    threads: Option<Vec<usize>>,

    /// Query numbers to run, in order [default: 1 to 22, without running the ones
    /// known to exhaust memory, which count as failed].
    #[arg(long, value_delimiter = ',')]
    queries: Option<Vec<usize>>,

    /// Runs per query and thread count; the median is reported [default: 1].
    #[arg(long, value_name = "N")]
    rounds: Option<u32>,

    /// Seconds a query may run before it is stopped and reported as failed
    /// [default: 300, 30 with --quick].
    #[arg(long, value_name = "SECONDS")]
    timeout: Option<f64>,

    /// Stop a query (KILL QUERY) once the process's resident memory passes SIZE
    /// [default: half the machine's memory].
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    memory_max: Option<u64>,

    /// Buffer pool size [default: 1.25x the loaded data].
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pool_size: Option<u64>,
}

fn tpch_options(args: TpchArgs, settings: Settings) -> TpchBenchOptions {
    let mut options = TpchBenchOptions::new(settings, args.common.quick);
    options.data_dir = args.common.data_dir;
    if let Some(sf) = args.sf {
        options.scale_factor = sf;
    }
    if let Some(threads) = args.threads {
        options.threads = threads;
    }
    if let Some(queries) = args.queries {
        options.queries = queries;
        options.skip_runaway = false;
    }
    if let Some(rounds) = args.rounds {
        options.rounds = rounds;
    }
    if let Some(timeout) = args.timeout {
        options.timeout_seconds = timeout;
    }
    options.pool_size_bytes = args.pool_size;
    if let Some(bytes) = args.memory_max {
        options.memory_max_bytes = bytes;
    }
    options
}

fn parse_scan_mode(text: &str) -> Result<tarn_bench::scan::Mode, String> {
    tarn_bench::scan::Mode::parse(text)
        .ok_or_else(|| format!("'{text}' is not a mode: use cold or warm"))
}

#[derive(Args)]
struct SecondaryArgs {
    #[command(flatten)]
    common: CommonBenchArgs,

    /// TPC-H scale factor [default: 1, 0.2 with --quick].
    #[arg(long, value_name = "SF")]
    sf: Option<f64>,

    /// Prefetch units: numbers (0 = no prefetch, the baseline, always run) or
    /// `adaptive` [default: 0,8,32,128,256,adaptive].
    #[arg(long, value_delimiter = ',', value_parser = parse_prefetch_unit)]
    units: Option<Vec<tarn_common::settings::PrefetchUnit>>,

    /// Selectivities in percent of orders [default: 0.1,1,5; 1 with --quick].
    #[arg(long, value_delimiter = ',')]
    selectivities: Option<Vec<f64>>,

    /// Rounds per cell, each on its own seeded range; the median is reported
    /// [default: 3, 1 with --quick].
    #[arg(long, value_name = "N")]
    rounds: Option<u32>,

    /// Seed of the o_custkey ranges.
    #[arg(long, value_name = "N")]
    seed: Option<u64>,

    /// The scans' O_DIRECT path: uring or direct (prefetch on io_threads)
    /// [default: uring].
    #[arg(long, value_name = "PATH", value_parser = parse_path)]
    io_method: Option<IoMethod>,

    /// Skip the fio baseline (the fio ratios are then null).
    #[arg(long)]
    no_fio: bool,
}

#[derive(Args)]
struct CommitArgs {
    #[command(flatten)]
    common: CommitLocksArgs,

    /// Log devices: fsync, dsync, pmem, none [default: all; fsync,pmem,none with
    /// --quick].
    #[arg(long, value_delimiter = ',', value_parser = parse_log_device)]
    devices: Option<Vec<LogDevice>>,

    /// Rows in the table [default: 100000].
    #[arg(long, value_name = "N", hide = true)]
    rows: Option<u64>,

    /// How clients run: pool (sessions on a fixed pool of worker threads, as `tarn
    /// serve` runs connections), threads (one OS thread per client) [default: both].
    #[arg(long, value_delimiter = ',', value_parser = parse_client_model)]
    client_model: Option<Vec<ClientModel>>,

    /// Worker threads of the pool model [default: one per core].
    #[arg(long, value_name = "N")]
    workers: Option<usize>,

    /// Skip the fio fdatasync baseline (its figures are then null).
    #[arg(long)]
    no_fio: bool,
}

#[derive(Args)]
struct RecoveryArgs {
    #[command(flatten)]
    common: CommonBenchArgs,

    /// Log to leave behind the crash [default: 1G, 64M with --quick].
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    log_size: Option<u64>,
}

#[derive(Args)]
struct LocksArgs {
    #[command(flatten)]
    common: CommitLocksArgs,

    /// Log devices: fsync, dsync, pmem, none [default: fsync,pmem].
    #[arg(long, value_delimiter = ',', value_parser = parse_log_device)]
    devices: Option<Vec<LogDevice>>,

    /// Preloaded nodes [default: 20000, 10000 with --quick].
    #[arg(long, value_name = "N")]
    nodes: Option<u64>,

    /// Links per node at load, on average [default: 4].
    #[arg(long, value_name = "N")]
    links_per_node: Option<f64>,

    /// Zipf skew of node ids, more than 0 and less than 1 [default: 0.99].
    #[arg(long, value_name = "THETA")]
    theta: Option<f64>,
}

/// Options of the transaction benches (`commit`, `locks`) besides the common ones.
#[derive(Args)]
struct CommitLocksArgs {
    #[command(flatten)]
    common: CommonBenchArgs,

    /// Measured seconds per row (commit) or per policy per point (locks)
    /// [default: 3, 1 with --quick].
    #[arg(long, value_name = "S")]
    seconds: Option<f64>,

    /// Client counts [default: commit 1,8,64,256,512 (1,8,64 with --quick); locks
    /// 32,64,128,256,512 (32,128,512 with --quick)].
    #[arg(long, value_delimiter = ',')]
    clients: Option<Vec<usize>>,

    /// Seed of the clients' random choices.
    #[arg(long, value_name = "N")]
    seed: Option<u64>,
}

fn parse_client_model(text: &str) -> Result<ClientModel, String> {
    ClientModel::parse(text)
        .ok_or_else(|| format!("'{text}' is not a client model: use pool or threads"))
}

fn parse_log_device(text: &str) -> Result<LogDevice, String> {
    LogDevice::parse(text)
        .ok_or_else(|| format!("'{text}' is not a log device: use fsync, dsync, pmem or none"))
}

fn parse_prefetch_unit(text: &str) -> Result<tarn_common::settings::PrefetchUnit, String> {
    tarn_common::settings::PrefetchUnit::parse(text)
}

fn parse_size(text: &str) -> Result<u64, String> {
    parse_size_bytes(text)
}

fn parse_path(text: &str) -> Result<IoMethod, String> {
    IoMethod::parse(text)
        .filter(|method| *method != IoMethod::Auto)
        .ok_or_else(|| format!("'{text}' is not a path: use buffered, direct or uring"))
}

fn parse_pattern(text: &str) -> Result<Pattern, String> {
    Pattern::parse(text).ok_or_else(|| {
        format!("'{text}' is not a pattern: use seqread, randread, randwrite or randrw")
    })
}

fn parse_distribution(text: &str) -> Result<Distribution, String> {
    Distribution::parse(text)
        .ok_or_else(|| format!("'{text}' is not a distribution: use uniform or zipf"))
}

fn parse_dataset(text: &str) -> Result<Dataset, String> {
    Dataset::parse(text).ok_or_else(|| format!("'{text}' is not a data set: use larger or fits"))
}

/// An error as the command line reports it.
struct Failure {
    message: String,
    mysql_code: u16,
    sqlstate: &'static str,
}

impl From<tarn_common::Error> for Failure {
    fn from(error: tarn_common::Error) -> Failure {
        Failure {
            message: error.to_string(),
            mysql_code: error.mysql_code(),
            sqlstate: error.sqlstate(),
        }
    }
}

impl From<tarn_bench::BenchError> for Failure {
    fn from(error: tarn_bench::BenchError) -> Failure {
        Failure {
            message: error.to_string(),
            mysql_code: error.mysql_code(),
            sqlstate: error.sqlstate(),
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    // The shell's output is the user's; the engine's start-up notes would clutter it.
    init_tracing(if matches!(cli.command, Command::Sql(_)) {
        "warn"
    } else {
        "info"
    });
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => {
            eprintln!(
                "error: {} (MySQL error {}, SQLSTATE {})",
                failure.message, failure.mysql_code, failure.sqlstate
            );
            ExitCode::FAILURE
        }
    }
}

fn init_tracing(default_level: &str) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default_level));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .init();
}

fn run(cli: Cli) -> Result<(), Failure> {
    if let Command::Serve(args) = cli.command {
        // `--set` may name system variables as well as engine settings here.
        return Ok(serve::run(serve::ServeOptions {
            config: args.config,
            data_dir: args.data_dir,
            bind: args.bind,
            port: args.port,
            assignments: cli.set,
        })?);
    }
    let mut settings = Settings::default();
    settings.apply_assignments(cli.set.iter().map(String::as_str))?;
    match cli.command {
        Command::Bench { bench } => run_bench(bench, settings),
        Command::Init => {
            let page_size_explicit = cli
                .set
                .iter()
                .any(|a| a.trim_start().starts_with("page_size"));
            print!("{}", init::run(&settings, page_size_explicit)?);
            Ok(())
        }
        Command::Settings => {
            print!("{}", init::describe(&settings));
            Ok(())
        }
        Command::Load {
            data: LoadCommand::Tpch(args),
        } => load_tpch(args, settings),
        Command::Serve(_) => unreachable!("handled above"),
        Command::Sql(args) => {
            if let Some(dir) = args.data_dir {
                settings.data_dir = dir;
            }
            let engine = tarn_sql::Engine::open(&settings)?;
            let status = shell::run(
                engine,
                shell::ShellOptions {
                    database: args.database,
                    execute: args.execute,
                    force: args.force,
                    table: if args.table {
                        Some(true)
                    } else if args.batch {
                        Some(false)
                    } else {
                        None
                    },
                },
            );
            if status != 0 {
                std::process::exit(status as i32);
            }
            Ok(())
        }
        Command::CrashWorker(args) => {
            if let Some(dir) = args.data_dir {
                settings.data_dir = dir;
            }
            tarn_bench::crash::run(
                &settings,
                &tarn_bench::crash::CrashWorker {
                    threads: args.threads.clamp(1, 64),
                    keys_per_thread: args.keys_per_thread.max(1),
                    seed: args.seed,
                    ack_file: args.ack_file,
                    run_for: std::time::Duration::from_millis(args.run_ms),
                    abort_at_log_bytes: args.abort_at_log_bytes,
                    big_rows: args.big_rows,
                },
            )?;
            Ok(())
        }
    }
}

fn load_tpch(args: LoadTpchArgs, mut settings: Settings) -> Result<(), Failure> {
    if let Some(dir) = &args.data_dir {
        settings.data_dir = dir.clone();
    }
    let threads = args
        .threads
        .unwrap_or_else(tarn_bench::tpch::load::default_threads);
    let storage = tarn_catalog::Storage::open(&settings)?;
    let total: u64 = tarn_bench::tpch::tables()
        .iter()
        .map(|t| tarn_bench::tpch::row_count_estimate(t.name, args.sf))
        .sum::<Result<u64, _>>()?;
    let bar = indicatif::ProgressBar::new(total);
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{msg:10} [{bar:40}] {human_pos}/{human_len} rows, {per_sec}, eta {eta}",
        )
        .expect("a valid progress template")
        .progress_chars("=> "),
    );
    let mut finished_tables = 0u64;
    let mut current = (String::new(), 0u64);
    let report = tarn_bench::tpch::load::load(&storage, args.sf, threads, |table, done, _| {
        if table != current.0 {
            finished_tables += current.1;
            current = (table.to_string(), 0);
            bar.set_message(table.to_string());
        }
        current.1 = done;
        bar.set_position(finished_tables + done);
    })?;
    bar.finish_and_clear();
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&report).expect("the report serialises")
        );
    } else {
        for table in &report.tables {
            println!(
                "{:10} {:>10} rows in {:>7.2} s",
                table.table, table.rows, table.seconds
            );
        }
        println!(
            "loaded {} rows at SF {} into '{}' in {:.2} s: {:.0} rows/s, {:.1} MiB written",
            report.rows,
            report.scale_factor,
            settings.data_dir.display(),
            report.seconds,
            report.rows_per_sec,
            report.bytes_written as f64 / (1 << 20) as f64
        );
    }
    Ok(())
}

fn run_bench(bench: BenchCommand, settings: Settings) -> Result<(), Failure> {
    match bench {
        BenchCommand::Io(args) => {
            let output = Output::new(args.common.json);
            let options = io_options(args, settings)?;
            tarn_bench::io::run_and_print(&options, &output)?;
            Ok(())
        }
        BenchCommand::Bufferpool(args) => {
            let output = Output::new(args.common.json);
            let options = bufferpool_options(args, settings)?;
            tarn_bench::bufferpool::run_and_print(&options, &output)?;
            Ok(())
        }
        BenchCommand::Secondary(args) => {
            let output = Output::new(args.common.json);
            let options = secondary_options(args, settings);
            tarn_bench::secondary::run_and_print(&options, &output)?;
            Ok(())
        }
        BenchCommand::Tpch(args) => {
            let output = Output::new(args.common.json);
            let options = tpch_options(args, settings);
            tarn_bench::tpch::bench::run_and_print(&options, &output)?;
            Ok(())
        }
        BenchCommand::Scan(args) => {
            let output = Output::new(args.common.json);
            let options = scan_options(args, settings);
            tarn_bench::scan::run_and_print(&options, &output)?;
            Ok(())
        }
        BenchCommand::Commit(args) => {
            let output = Output::new(args.common.common.json);
            let mut options = CommitBenchOptions::new(settings, args.common.common.quick);
            options.data_dir = args.common.common.data_dir;
            if let Some(seconds) = args.common.seconds {
                options.seconds = seconds;
            }
            if let Some(clients) = args.common.clients {
                options.clients = clients;
            }
            if let Some(seed) = args.common.seed {
                options.seed = seed;
            }
            if let Some(devices) = args.devices {
                options.devices = devices;
            }
            if let Some(rows) = args.rows {
                options.rows = rows;
            }
            if let Some(models) = args.client_model {
                options.client_models = models;
            }
            if let Some(workers) = args.workers {
                options.workers = workers;
            }
            options.fio = !args.no_fio;
            tarn_bench::commit::run_and_print(&options, &output)?;
            Ok(())
        }
        BenchCommand::Recovery(args) => {
            let output = Output::new(args.common.json);
            let options = tarn_bench::recovery::RecoveryBenchOptions {
                settings,
                data_dir: args.common.data_dir,
                log_bytes: args.log_size.unwrap_or(if args.common.quick {
                    64 << 20
                } else {
                    1 << 30
                }),
                tarn_exe: std::env::current_exe().map_err(|e| Failure {
                    message: format!("locating the tarn executable: {e}"),
                    mysql_code: 1105,
                    sqlstate: "HY000",
                })?,
            };
            tarn_bench::recovery::run_and_print(&options, &output)?;
            Ok(())
        }
        BenchCommand::Wire(args) => {
            let output = Output::new(args.common.json);
            let mut options = tarn_bench::wire::WireBenchOptions::new(settings, args.common.quick);
            options.data_dir = args.common.data_dir;
            if let Some(sf) = args.sf {
                options.scale_factor = sf;
            }
            if let Some(threads) = args.threads {
                options.threads = threads;
            }
            if let Some(rounds) = args.rounds {
                options.rounds = rounds;
            }
            options.reader = args.client;
            options.mariadb = !args.no_mariadb;
            options.tarn = !args.no_tarn;
            tarn_bench::wire::run_and_print(&options, &output)?;
            Ok(())
        }
        BenchCommand::Sysbench(args) => {
            let output = Output::new(args.common.json);
            let mut options =
                tarn_bench::sysbench::SysbenchBenchOptions::new(settings, args.common.quick);
            options.data_dir = args.common.data_dir;
            if let Some(threads) = args.threads {
                options.threads = threads;
            }
            if let Some(workloads) = args.workloads {
                options.workloads = workloads;
            }
            if let Some(seconds) = args.time_s {
                options.time_s = seconds;
            }
            if let Some(tables) = args.tables {
                options.tables = tables;
            }
            if let Some(size) = args.table_size {
                options.table_size = size;
            }
            options.mariadb = !args.no_mariadb;
            options.tarn = !args.no_tarn;
            options.tls = args.tls;
            tarn_bench::sysbench::run_and_print(&options, &output)?;
            Ok(())
        }
        BenchCommand::Locks(args) => {
            let output = Output::new(args.common.common.json);
            let mut options = LocksBenchOptions::new(settings, args.common.common.quick);
            options.data_dir = args.common.common.data_dir;
            if let Some(seconds) = args.common.seconds {
                options.seconds = seconds;
            }
            if let Some(clients) = args.common.clients {
                options.clients = clients;
            }
            if let Some(seed) = args.common.seed {
                options.seed = seed;
            }
            if let Some(devices) = args.devices {
                options.devices = devices;
            }
            if let Some(nodes) = args.nodes {
                options.nodes = nodes;
            }
            if let Some(links) = args.links_per_node {
                options.links_per_node = links;
            }
            if let Some(theta) = args.theta {
                options.theta = theta;
            }
            tarn_bench::locks::run_and_print(&options, &output)?;
            Ok(())
        }
    }
}

fn io_options(args: IoArgs, mut settings: Settings) -> Result<IoBenchOptions, Failure> {
    if let Some(page_size) = args.page_size {
        settings.set("page_size", &page_size.to_string())?;
    }
    let mut options = IoBenchOptions::new(settings, args.common.quick);
    options.fio = args.fio;
    options.data_dir = args.common.data_dir;
    if let Some(bytes) = args.file_size {
        options.file_size_bytes = bytes;
    }
    if let Some(seconds) = args.seconds {
        options.seconds_per_row = seconds;
    }
    if let Some(rounds) = args.rounds {
        options.rounds = rounds;
    }
    options.paths = args.paths;
    options.patterns = args.patterns;
    options.depths = args.depths;
    Ok(options)
}

fn bufferpool_options(
    args: BufferPoolArgs,
    mut settings: Settings,
) -> Result<BufferPoolBenchOptions, Failure> {
    if let Some(page_size) = args.page_size {
        settings.set("page_size", &page_size.to_string())?;
    }
    let mut options = BufferPoolBenchOptions::new(settings, args.common.quick);
    options.data_dir = args.common.data_dir;
    if let Some(seconds) = args.seconds {
        options.seconds_per_cell = seconds;
    }
    if let Some(threads) = args.threads {
        options.threads = threads;
    }
    if let Some(instances) = args.instances {
        options.instances = instances;
    }
    if let Some(distributions) = args.distributions {
        options.distributions = distributions;
    }
    if let Some(datasets) = args.datasets {
        options.datasets = datasets;
    }
    if let Some(bytes) = args.pool_size {
        options.pool_size_bytes = bytes;
    }
    if let Some(write_pct) = args.write_pct {
        options.write_pct = write_pct;
    }
    options.s4_threads = args.s4_threads;
    Ok(options)
}

fn scan_options(args: ScanArgs, settings: Settings) -> ScanBenchOptions {
    let mut options = ScanBenchOptions::new(settings, args.common.quick);
    options.data_dir = args.common.data_dir;
    if let Some(sf) = args.sf {
        options.scale_factor = sf;
    }
    if let Some(threads) = args.threads {
        options.threads = threads;
    }
    options.pool_size_bytes = args.pool_size;
    if let Some(rounds) = args.rounds {
        options.rounds = rounds;
    }
    if let Some(seconds) = args.fio_seconds {
        options.fio_seconds = seconds;
    }
    options.fio = !args.no_fio;
    if let Some(modes) = args.modes {
        options.modes = modes;
    }
    options.batch_rows = args.batch_rows;
    options
}

fn secondary_options(args: SecondaryArgs, settings: Settings) -> SecondaryBenchOptions {
    let mut options = SecondaryBenchOptions::new(settings, args.common.quick);
    options.data_dir = args.common.data_dir;
    if let Some(sf) = args.sf {
        options.scale_factor = sf;
    }
    if let Some(units) = args.units {
        options.units = units;
    }
    if let Some(selectivities) = args.selectivities {
        options.selectivities_pct = selectivities;
    }
    if let Some(rounds) = args.rounds {
        options.rounds = rounds;
    }
    if let Some(seed) = args.seed {
        options.seed = seed;
    }
    if let Some(method) = args.io_method {
        options.io_method = method;
    }
    options.fio = !args.no_fio;
    options
}
