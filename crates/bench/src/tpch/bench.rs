//! `tarn bench tpch`: the 22 TPC-H queries through the SQL engine, timed at each scan
//! thread count and checked against the expected answers.
//!
//! The bench loads TPC-H at `--sf` into its data directory ([`super::load::ensure_loaded`];
//! reused with `--data-dir`), then for each thread count T opens the storage engine with
//! `scan_threads = T` and a buffer pool that holds every table ([`pool_size_for`]),
//! warms the pool with one `count(*)` per table, and runs each selected query
//! `--rounds` times in one session (`USE tpch`), each statement bounded by
//! `max_execution_time` (`--timeout`) and stopped (KILL QUERY) if the process's
//! resident memory passes `--memory-max` (default: half the machine's memory), and
//! an engine panic caught and reported as the query's error (the session is then
//! replaced). A query still running a minute past its `max_execution_time` means the
//! engine hung: the bench then names it and exits (status 3). Queries that
//! `KNOWN_FAILING` marks as running away at this scale factor are not run unless
//! `--queries` names them; they count as failed. Each (query, T) row reports the median time, the
//! row count and the verdict: `ok` when every round's result matches the expected
//! answer ([`super::queries::compare`]), `wrong` with the first difference, `error`
//! with the engine's error, or `-` when no answer exists for the scale factor (SF 0.01,
//! 0.1 and 1 have answers).
//!
//! # Summary
//! `queries_correct` counts the queries correct at every thread count they ran (0 when
//! no answers exist); `queries_run` counts the distinct queries run. A query whose
//! result is wrong or that fails counts as not correct. `total_seconds_by_threads` adds
//! up the times of the queries that succeeded at every thread count, so the totals
//! compare like with like; `speedup_max_threads` is the T=1 total over the total at the
//! most threads.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde::Serialize;

use tarn_catalog::Storage;
use tarn_common::limits::SCAN_THREADS_MAX;
use tarn_common::settings::Settings;
use tarn_sql::{Engine, QueryResult, Session};

use super::load::{DATABASE, ensure_loaded};
use super::queries::{self, Answer, AnswerSource, QUERY_COUNT};
use crate::report::{
    BenchDocument, Output, Table as TextTable, data_dir_fate, format_number, ratio,
};
use crate::stats::lower_median_by;
use crate::workdir::WorkDir;
use crate::{BenchError, Result, check_rounds};

/// SF 0.1 runs the queries that work in under a minute; SF 1 takes far longer while
/// correlated subqueries rescan lineitem (see the README's status table).
pub const SCALE_FACTOR_DEFAULT: f64 = 0.1;
pub const SCALE_FACTOR_QUICK: f64 = 0.01;
pub const ROUNDS_DEFAULT: u32 = 1;
pub const ROUNDS_MAX: u32 = 100;
/// Seconds a statement may run before the engine stops it (`max_execution_time`).
pub const TIMEOUT_SECONDS_DEFAULT: f64 = 300.0;
pub const TIMEOUT_SECONDS_QUICK: f64 = 30.0;
/// The pool holds the data directory's files times this, and at least the default.
pub const POOL_SIZE_PER_DATA_BYTE: f64 = 1.25;
/// Characters of an error or a difference shown in the table (the JSON has all).
const TABLE_DETAIL_CHARS: usize = 60;

/// What `tarn bench tpch` was asked to do.
#[derive(Clone, Debug)]
pub struct TpchBenchOptions {
    /// Engine settings (from `--set`); the bench sets `data_dir`, `scan_threads` and
    /// the pool size.
    pub settings: Settings,
    pub quick: bool,
    pub scale_factor: f64,
    /// Scan thread counts, in the order measured.
    pub threads: Vec<usize>,
    /// Query numbers, in the order run.
    pub queries: Vec<usize>,
    /// Skip the queries [`queries::KNOWN_FAILING`] marks as running away (reported as
    /// failed, not run); true unless `--queries` names the queries.
    pub skip_runaway: bool,
    pub rounds: u32,
    pub timeout_seconds: f64,
    /// A query is stopped once the process's resident memory exceeds this.
    pub memory_max_bytes: u64,
    /// Buffer pool size; `None`: [`pool_size_for`] the loaded data.
    pub pool_size_bytes: Option<u64>,
    pub data_dir: Option<PathBuf>,
}

impl TpchBenchOptions {
    pub fn new(settings: Settings, quick: bool) -> TpchBenchOptions {
        TpchBenchOptions {
            settings,
            quick,
            scale_factor: if quick {
                SCALE_FACTOR_QUICK
            } else {
                SCALE_FACTOR_DEFAULT
            },
            threads: crate::scan::default_threads(crate::scan::cores()),
            queries: (1..=QUERY_COUNT).collect(),
            skip_runaway: true,
            rounds: ROUNDS_DEFAULT,
            timeout_seconds: if quick {
                TIMEOUT_SECONDS_QUICK
            } else {
                TIMEOUT_SECONDS_DEFAULT
            },
            memory_max_bytes: memory_max_default_bytes(),
            pool_size_bytes: None,
            data_dir: None,
        }
    }

    fn check(&self) -> Result<()> {
        super::check_sf_option(self.scale_factor)?;
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
        if self.queries.is_empty() {
            return Err(BenchError::Options("--queries selects no query".into()));
        }
        for &number in &self.queries {
            queries::check_query_number(number)?;
        }
        check_rounds(self.rounds, ROUNDS_MAX)?;
        if !(self.timeout_seconds > 0.0 && self.timeout_seconds <= 86_400.0) {
            return Err(BenchError::Options(format!(
                "--timeout must be from 0.001 to 86400 seconds, not {}",
                self.timeout_seconds
            )));
        }
        Ok(())
    }
}

/// The verdict on one (query, threads) row.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// Every round matched the expected answer.
    Ok,
    /// A round returned a result that differs from the answer.
    Wrong,
    /// A round failed with an error.
    Error,
    /// No answer exists for this scale factor; the query ran without error.
    Unchecked,
}

impl Verdict {
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Ok => "ok",
            Verdict::Wrong => "wrong",
            Verdict::Error => "error",
            Verdict::Unchecked => "-",
        }
    }
}

/// One measured row: a query at a thread count.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TpchRow {
    pub query: usize,
    pub threads: usize,
    /// The median round's time; `None` when the query failed.
    pub seconds: Option<f64>,
    pub round_seconds: Vec<f64>,
    /// Rows the (median round's) result had.
    pub rows: Option<usize>,
    pub verdict: Verdict,
    /// True when the result matched the answer; `None` when no answer exists.
    pub correct: Option<bool>,
    /// The engine's error (MySQL error number and message), when the query failed.
    pub error: Option<String>,
    /// The first difference from the answer, when the result was wrong.
    pub mismatch: Option<String>,
    /// The reason the query is listed as known to fail, if it is.
    pub known_failure: Option<&'static str>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ThreadsTotal {
    pub threads: usize,
    pub seconds: f64,
}

/// The figures the team checks.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TpchSummary {
    pub sf: f64,
    /// Distinct queries run.
    pub queries_run: usize,
    /// Queries whose result matched the answer at every thread count.
    pub queries_correct: usize,
    /// Queries that returned a wrong result at some thread count (and no error).
    pub queries_wrong: usize,
    /// Queries that failed with an error at some thread count.
    pub queries_failed: usize,
    /// Where the answers came from; `null` when none exist for `sf`.
    pub answers: Option<AnswerSource>,
    /// Query numbers that were correct everywhere, and those that were not.
    pub correct: Vec<usize>,
    pub not_correct: Vec<usize>,
    /// Summed median times of the queries that succeeded at every thread count.
    pub total_seconds_by_threads: Vec<ThreadsTotal>,
    /// `total_seconds_by_threads` at T=1 / at the most threads.
    pub speedup_max_threads: Option<f64>,
}

/// The JSON `config`.
#[derive(Clone, Debug, Serialize)]
pub struct TpchBenchConfig {
    pub quick: bool,
    pub scale_factor: f64,
    pub threads: Vec<usize>,
    pub queries: Vec<usize>,
    pub rounds: u32,
    pub timeout_seconds: f64,
    pub memory_max_bytes: u64,
    pub pool_size_bytes: u64,
    pub cores: usize,
    pub data_dir: String,
    pub data_dir_kept: bool,
    pub loaded: String,
    pub answers: Option<String>,
}

/// What a run produced.
#[derive(Clone, Debug)]
pub struct TpchReport {
    pub config: TpchBenchConfig,
    pub rows: Vec<TpchRow>,
    pub summary: TpchSummary,
}

/// The buffer pool that holds `data_bytes` of data files with room to spare, at least
/// the default pool; rounded up to a MiB.
pub fn pool_size_for(data_bytes: u64) -> u64 {
    let wanted = (data_bytes as f64 * POOL_SIZE_PER_DATA_BYTE).ceil() as u64;
    let wanted = wanted.max(tarn_common::limits::BUFFER_POOL_SIZE_DEFAULT_BYTES);
    wanted.div_ceil(1 << 20) << 20
}

/// One query run: the result as text, or the error.
pub struct QueryRun {
    pub seconds: f64,
    pub result: std::result::Result<Answer, String>,
    /// The engine panicked: the session may be left in any state, so the caller
    /// should start a new one.
    pub panicked: bool,
}

/// Runs query `number`'s text for `scale_factor` in `session` and turns the result set
/// (the one statement of the text that returns rows) into text cells. An engine error
/// or panic is the run's result, not this function's error.
pub fn run_query(
    session: &mut Session,
    number: usize,
    scale_factor: f64,
    guard: &QueryGuard,
) -> Result<QueryRun> {
    let text = queries::query_text(number, scale_factor)?;
    record_panics();
    if let Ok(mut last) = LAST_PANIC.lock() {
        *last = None;
    }
    let engine = session.engine().clone();
    let connection_id = session.connection_id();
    let done = AtomicBool::new(false);
    let over_memory = AtomicU64::new(0);
    let started = Instant::now();
    let outcome = std::thread::scope(|scope| {
        scope.spawn(|| {
            watch_memory(
                &engine,
                connection_id,
                guard.memory_max_bytes,
                &done,
                &over_memory,
            );
        });
        scope.spawn(|| watch_hang(number, guard.timeout_seconds, &done));
        let outcome =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| session.execute(&text)));
        done.store(true, Ordering::Relaxed);
        outcome
    });
    let seconds = started.elapsed().as_secs_f64();
    let rss = over_memory.load(Ordering::Relaxed);
    if rss > 0 {
        return Ok(QueryRun {
            seconds,
            result: Err(format!(
                "stopped by the bench (KILL QUERY): the process's resident memory reached {} MiB, \
                 over the bench's bound of {} MiB",
                rss >> 20,
                guard.memory_max_bytes >> 20
            )),
            panicked: false,
        });
    }
    let outcome = match outcome {
        Ok(outcome) => outcome,
        Err(panic) => {
            return Ok(QueryRun {
                seconds,
                result: Err(format!("the engine panicked: {}", panic_message(&panic))),
                panicked: true,
            });
        }
    };
    let result = match outcome {
        Ok(results) => results
            .iter()
            .find(|r| matches!(r, QueryResult::Rows { .. }))
            .map(result_text)
            .ok_or_else(|| "no statement returned a result set".to_string()),
        Err(error) => Err(format!("ERROR {}: {error}", error.mysql_code())),
    };
    if result.is_err() && number == 15 {
        // A failed Q15 may leave its view behind; the next run would then fail on
        // CREATE VIEW.
        let _ = session.execute("drop view if exists revenue0");
    }
    Ok(QueryRun {
        seconds,
        result,
        panicked: false,
    })
}

/// The bounds [`run_query`] holds a query to, besides the session's own
/// `max_execution_time` (which [`tpch_session`] sets to `timeout_seconds`).
#[derive(Clone, Copy, Debug)]
pub struct QueryGuard {
    /// The query is stopped (KILL QUERY) once the process's resident memory passes
    /// this.
    pub memory_max_bytes: u64,
    /// The session's `max_execution_time`, in seconds.
    pub timeout_seconds: f64,
}

/// How long past its `max_execution_time` a statement may go on before
/// [`watch_hang`] declares the engine hung.
const HANG_GRACE: Duration = Duration::from_secs(60);

/// Until `done`, waits; if the statement runs [`HANG_GRACE`] past `timeout_seconds`,
/// the engine ignored its `max_execution_time` (a deadlock, or an operator that never
/// checks for cancellation): nothing can get the session or the engine's workers
/// back, so this names the query and exits the process (status 3) rather than hang
/// forever.
fn watch_hang(number: usize, timeout_seconds: f64, done: &AtomicBool) {
    let hang_after = Duration::from_secs_f64(timeout_seconds) + HANG_GRACE;
    let started = Instant::now();
    while !done.load(Ordering::Relaxed) {
        if started.elapsed() > hang_after {
            eprintln!(
                "error: TPC-H Q{number} is still running {} s after its max_execution_time \
                 ({timeout_seconds} s): the engine hung; exiting (list it in KNOWN_FAILING \
                 with runs_away)",
                HANG_GRACE.as_secs()
            );
            std::process::exit(3);
        }
        std::thread::sleep(MEMORY_POLL);
    }
}

/// How often [`watch_memory`] reads the process's resident memory.
const MEMORY_POLL: Duration = Duration::from_millis(20);

/// Until `done`, polls the process's resident memory; once it exceeds
/// `memory_max_bytes`, records it in `over_memory` and stops the session's statement
/// (KILL QUERY). A guard against a query whose operators hold more than the engine's
/// own per-query memory bound accounts for.
fn watch_memory(
    engine: &Arc<Engine>,
    connection_id: u64,
    memory_max_bytes: u64,
    done: &AtomicBool,
    over_memory: &AtomicU64,
) {
    while !done.load(Ordering::Relaxed) {
        if let Some(rss) = resident_bytes()
            && rss > memory_max_bytes
            && over_memory.load(Ordering::Relaxed) == 0
        {
            over_memory.store(rss, Ordering::Relaxed);
            let _ = engine.kill(connection_id, false);
        }
        std::thread::sleep(MEMORY_POLL);
    }
}

/// The process's resident memory (`VmRSS` in `/proc/self/status`).
fn resident_bytes() -> Option<u64> {
    field_kib("/proc/self/status", "VmRSS:").map(|kib| kib * 1024)
}

/// A `name: N kB` line of a `/proc` file, in KiB.
fn field_kib(path: &str, name: &str) -> Option<u64> {
    let text = std::fs::read_to_string(path).ok()?;
    let line = text.lines().find(|line| line.starts_with(name))?;
    line[name.len()..].split_whitespace().next()?.parse().ok()
}

/// The default bound on the process's resident memory while a query runs: half the
/// machine's memory.
pub fn memory_max_default_bytes() -> u64 {
    field_kib("/proc/meminfo", "MemTotal:").map_or(MEMORY_MAX_FALLBACK_BYTES, |kib| kib * 1024 / 2)
}

/// The bound when the machine's memory cannot be read.
const MEMORY_MAX_FALLBACK_BYTES: u64 = 4 << 30;

/// The last panic's message and location, recorded by the hook [`record_panics`]
/// installs (a panic on a worker thread reaches the caller as a payload without its
/// message).
static LAST_PANIC: std::sync::Mutex<Option<String>> = std::sync::Mutex::new(None);

/// Installs (once per process) a panic hook that records each panic's message and
/// location in [`LAST_PANIC`], then runs the previous hook.
fn record_panics() {
    static INSTALLED: std::sync::Once = std::sync::Once::new();
    INSTALLED.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let location = info
                .location()
                .map_or_else(String::new, |l| format!(" at {}:{}", l.file(), l.line()));
            let text = format!("{}{location}", payload_text(info.payload()));
            if let Ok(mut last) = LAST_PANIC.lock() {
                *last = Some(text);
            }
            previous(info);
        }));
    });
}

fn payload_text(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(text) = payload.downcast_ref::<&str>() {
        (*text).to_string()
    } else if let Some(text) = payload.downcast_ref::<String>() {
        text.clone()
    } else {
        "(no message)".into()
    }
}

/// The message of a caught panic: the recorded one, else the payload's.
fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    LAST_PANIC
        .lock()
        .ok()
        .and_then(|mut last| last.take())
        .unwrap_or_else(|| payload_text(panic))
}

/// A result set as text cells, as a MySQL client sees them.
pub fn result_text(result: &QueryResult) -> Answer {
    let columns = match result {
        QueryResult::Rows { columns, .. } => columns.iter().map(|c| c.name.clone()).collect(),
        QueryResult::Ok { .. } | QueryResult::Streamed { .. } => Vec::new(),
    };
    let rows = result
        .all_rows()
        .iter()
        .map(|row| {
            row.iter()
                .map(|value| {
                    tarn_sql::scalar::cast::to_text(value)
                        .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
                })
                .collect()
        })
        .collect();
    Answer { columns, rows }
}

/// Opens a session on `engine` in the TPC-H database, with statements bounded by
/// `timeout_seconds`.
pub fn tpch_session(engine: &Arc<Engine>, timeout_seconds: f64) -> Result<Session> {
    let mut session = engine.session("root", "localhost");
    session.use_database(DATABASE)?;
    let timeout_ms = (timeout_seconds * 1000.0).ceil().max(1.0) as u64;
    session.execute(&format!("set max_execution_time = {timeout_ms}"))?;
    Ok(session)
}

/// Runs the bench, printing progress lines only.
pub fn run(options: &TpchBenchOptions, output: &Output) -> Result<TpchReport> {
    options.check()?;
    let workdir = WorkDir::open(options.data_dir.as_deref(), ".tarn-bench-tpch-")?;
    let mut base = options.settings.clone();
    base.data_dir = workdir.path().to_path_buf();
    let loaded = {
        let storage = Storage::open(&base)?;
        ensure_loaded(&storage, options.scale_factor, output)?.text
    };
    let data_bytes = directory_bytes(workdir.path());
    let pool_size_bytes = options
        .pool_size_bytes
        .unwrap_or_else(|| pool_size_for(data_bytes));
    let answers_source = queries::expected_answer(1, options.scale_factor).map(|(_, s)| s);
    if answers_source.is_none() {
        output.progress(&format!(
            "note: no expected answers for SF {}: results are not checked (answers exist \
             for SF 0.01, 0.1 and 1)",
            options.scale_factor
        ));
    }

    let mut rows = Vec::new();
    for &threads in &options.threads {
        let mut settings = base.clone();
        settings.scan_threads = threads as u32;
        settings.buffer_pool_size_bytes = pool_size_bytes;
        let engine = Engine::with_storage(Arc::new(Storage::open(&settings)?));
        let mut session = tpch_session(&engine, options.timeout_seconds)?;
        warm(&mut session, output)?;
        for &number in &options.queries {
            if options.skip_runaway
                && let Some(failure) =
                    queries::known_failure(number, options.scale_factor).filter(|f| f.runs_away)
            {
                output.progress(&format!(
                    "Q{number:02} T={threads}: not run (listed as running away)"
                ));
                rows.push(skipped_row(number, threads, failure));
                continue;
            }
            let (row, panicked) = measure(&mut session, number, threads, options, output)?;
            rows.push(row);
            if panicked {
                session = tpch_session(&engine, options.timeout_seconds)?;
            }
        }
    }
    let summary = summarize(&rows, options.scale_factor, answers_source);
    let config = TpchBenchConfig {
        quick: options.quick,
        scale_factor: options.scale_factor,
        threads: options.threads.clone(),
        queries: options.queries.clone(),
        rounds: options.rounds,
        timeout_seconds: options.timeout_seconds,
        memory_max_bytes: options.memory_max_bytes,
        pool_size_bytes,
        cores: crate::scan::cores(),
        data_dir: workdir.path().display().to_string(),
        data_dir_kept: !workdir.is_temporary(),
        loaded,
        answers: answers_source.map(|s| s.name().to_string()),
    };
    Ok(TpchReport {
        config,
        rows,
        summary,
    })
}

/// Reads every table once so the measured queries find their pages cached.
fn warm(session: &mut Session, output: &Output) -> Result<()> {
    for table in super::tables() {
        session
            .execute(&format!("select count(*) from {}", table.name))
            .map_err(|error| BenchError::WrongData {
                row: format!("warming {}", table.name),
                detail: error.to_string(),
            })?;
    }
    output.progress("buffer pool warmed (one count(*) per table)");
    Ok(())
}

fn measure(
    session: &mut Session,
    number: usize,
    threads: usize,
    options: &TpchBenchOptions,
    output: &Output,
) -> Result<(TpchRow, bool)> {
    let expected = queries::expected_answer(number, options.scale_factor).map(|(a, _)| a);
    let mut round_seconds = Vec::new();
    let mut row_counts = Vec::new();
    let mut error = None;
    let mut mismatch = None;
    let mut panicked = false;
    let guard = QueryGuard {
        memory_max_bytes: options.memory_max_bytes,
        timeout_seconds: options.timeout_seconds,
    };
    for _ in 0..options.rounds {
        let run = run_query(session, number, options.scale_factor, &guard)?;
        panicked = run.panicked;
        match run.result {
            Err(message) => {
                error = Some(message);
                break;
            }
            Ok(answer) => {
                round_seconds.push(run.seconds);
                row_counts.push(answer.rows.len());
                if mismatch.is_none()
                    && let Some(expected) = &expected
                    && let Err(difference) = queries::compare(expected, &answer)
                {
                    mismatch = Some(difference);
                }
            }
        }
    }
    let verdict = if error.is_some() {
        Verdict::Error
    } else if mismatch.is_some() {
        Verdict::Wrong
    } else if expected.is_some() {
        Verdict::Ok
    } else {
        Verdict::Unchecked
    };
    let median = lower_median_by(&round_seconds, |s| *s);
    let median_rows = median.and_then(|m| {
        round_seconds
            .iter()
            .position(|s| *s == m)
            .map(|i| row_counts[i])
    });
    output.progress(&format!(
        "Q{number:02} T={threads}: {} {}",
        verdict.name(),
        median.map_or_else(String::new, |s| format!("{s:.3} s"))
    ));
    let row = TpchRow {
        query: number,
        threads,
        seconds: if error.is_some() { None } else { median },
        round_seconds,
        rows: if error.is_some() { None } else { median_rows },
        verdict,
        correct: match verdict {
            Verdict::Ok => Some(true),
            Verdict::Wrong | Verdict::Error => Some(false),
            Verdict::Unchecked => None,
        },
        error,
        mismatch,
        known_failure: queries::known_failure(number, options.scale_factor).map(|f| f.reason),
    };
    Ok((row, panicked))
}

/// The row of a query not run because it is known to exhaust the machine.
fn skipped_row(number: usize, threads: usize, failure: &queries::KnownFailure) -> TpchRow {
    TpchRow {
        query: number,
        threads,
        seconds: None,
        round_seconds: Vec::new(),
        rows: None,
        verdict: Verdict::Error,
        correct: Some(false),
        error: Some(format!(
            "not run: known to hang or exhaust memory at this scale factor ({}); name it in \
             --queries to run it",
            failure.reason
        )),
        mismatch: None,
        known_failure: Some(failure.reason),
    }
}

/// Computes the summary from the rows (see the module docs).
pub fn summarize(rows: &[TpchRow], sf: f64, answers: Option<AnswerSource>) -> TpchSummary {
    let mut numbers: Vec<usize> = rows.iter().map(|r| r.query).collect();
    numbers.sort_unstable();
    numbers.dedup();
    let rows_of = |n: usize| rows.iter().filter(move |r| r.query == n);
    let correct: Vec<usize> = numbers
        .iter()
        .copied()
        .filter(|&n| rows_of(n).all(|r| r.verdict == Verdict::Ok))
        .collect();
    let not_correct = numbers
        .iter()
        .copied()
        .filter(|n| !correct.contains(n))
        .collect();
    let failed = numbers
        .iter()
        .filter(|&&n| rows_of(n).any(|r| r.verdict == Verdict::Error))
        .count();
    let wrong = numbers
        .iter()
        .filter(|&&n| {
            rows_of(n).any(|r| r.verdict == Verdict::Wrong)
                && !rows_of(n).any(|r| r.verdict == Verdict::Error)
        })
        .count();
    let mut thread_counts: Vec<usize> = rows.iter().map(|r| r.threads).collect();
    thread_counts.sort_unstable();
    thread_counts.dedup();
    let timed_everywhere: Vec<usize> = numbers
        .iter()
        .copied()
        .filter(|&n| rows_of(n).all(|r| r.seconds.is_some()))
        .collect();
    let totals: Vec<ThreadsTotal> = thread_counts
        .iter()
        .map(|&threads| ThreadsTotal {
            threads,
            seconds: rows
                .iter()
                .filter(|r| r.threads == threads && timed_everywhere.contains(&r.query))
                .filter_map(|r| r.seconds)
                .sum(),
        })
        .collect();
    let total_at = |t: usize| totals.iter().find(|x| x.threads == t).map(|x| x.seconds);
    let max_threads = thread_counts.last().copied().unwrap_or(0);
    TpchSummary {
        sf,
        queries_run: numbers.len(),
        queries_correct: correct.len(),
        queries_wrong: wrong,
        queries_failed: failed,
        answers,
        correct,
        not_correct,
        speedup_max_threads: if max_threads > 1 && !timed_everywhere.is_empty() {
            ratio(total_at(1), total_at(max_threads))
        } else {
            None
        },
        total_seconds_by_threads: totals,
    }
}

/// Runs the bench and prints its tables (and, with `--json`, the JSON document).
pub fn run_and_print(options: &TpchBenchOptions, output: &Output) -> Result<TpchReport> {
    let report = run(options, output)?;
    output.note(&format!(
        "TPC-H SF {} in '{}'{}: {}; buffer pool {} MiB; {} round(s) per query, median shown",
        report.config.scale_factor,
        report.config.data_dir,
        data_dir_fate(report.config.data_dir_kept),
        report.config.loaded,
        report.config.pool_size_bytes >> 20,
        report.config.rounds
    ));
    output.note(&format!(
        "answers: {}",
        report
            .config
            .answers
            .as_deref()
            .unwrap_or("none for this scale factor (results not checked)")
    ));
    output.table(&render_table(&report));
    let details = render_details(&report.rows);
    if !details.is_empty() {
        output.note(&details);
    }
    let s = &report.summary;
    output.note(&format!(
        "\n{} of {} queries correct{}; {} wrong, {} failed; time of the queries that ran \
         everywhere: {}{}",
        s.queries_correct,
        s.queries_run,
        if s.answers.is_none() {
            " (no answers)"
        } else {
            ""
        },
        s.queries_wrong,
        s.queries_failed,
        s.total_seconds_by_threads
            .iter()
            .map(|t| format!("T={} {:.3} s", t.threads, t.seconds))
            .collect::<Vec<_>>()
            .join(", "),
        s.speedup_max_threads
            .map_or_else(String::new, |x| format!(" (speedup {x:.2}x)"))
    ));
    output.json(&BenchDocument::new(
        "tpch",
        &report.config,
        &report.rows,
        &report.summary,
    ))?;
    Ok(report)
}

/// One line per query: its time at each thread count and its verdict.
fn render_table(report: &TpchReport) -> TextTable {
    let threads = &report.config.threads;
    let mut headers: Vec<String> = vec!["query".into()];
    headers.extend(threads.iter().map(|t| format!("T={t} s")));
    headers.extend(["rows".into(), "result".into()]);
    let header_refs: Vec<&str> = headers.iter().map(String::as_str).collect();
    let mut table = TextTable::new(
        format!(
            "TPC-H SF {}: seconds per query by scan threads",
            report.config.scale_factor
        ),
        &header_refs,
    );
    for &number in &report.config.queries {
        let rows: Vec<&TpchRow> = report.rows.iter().filter(|r| r.query == number).collect();
        let mut cells = vec![format!("Q{number:02}")];
        for &t in threads {
            let seconds = rows.iter().find(|r| r.threads == t).and_then(|r| r.seconds);
            cells.push(format_number(seconds, 3));
        }
        cells.push(
            rows.iter()
                .find_map(|r| r.rows)
                .map_or_else(|| "-".into(), |n| n.to_string()),
        );
        cells.push(verdict_cell(&rows));
        table.add_row(cells);
    }
    table
}

fn verdict_cell(rows: &[&TpchRow]) -> String {
    let worst = rows
        .iter()
        .find(|r| r.verdict == Verdict::Error)
        .or_else(|| rows.iter().find(|r| r.verdict == Verdict::Wrong))
        .or_else(|| rows.first());
    let Some(row) = worst else {
        return "-".into();
    };
    let detail = row.error.as_deref().or(row.mismatch.as_deref());
    match detail {
        Some(detail) => format!(
            "{}: {}",
            row.verdict.name(),
            shorten(detail, TABLE_DETAIL_CHARS)
        ),
        None => row.verdict.name().into(),
    }
}

/// The full error or difference of each failing query, once per query.
fn render_details(rows: &[TpchRow]) -> String {
    let mut text = String::new();
    let mut seen = Vec::new();
    for row in rows {
        let Some(detail) = row.error.as_deref().or(row.mismatch.as_deref()) else {
            continue;
        };
        if seen.contains(&row.query) {
            continue;
        }
        seen.push(row.query);
        text.push_str(&format!(
            "Q{:02} (T={}) {}: {detail}\n",
            row.query,
            row.threads,
            row.verdict.name()
        ));
    }
    text
}

fn shorten(text: &str, chars: usize) -> String {
    if text.chars().count() > chars {
        format!("{}...", text.chars().take(chars).collect::<String>())
    } else {
        text.to_string()
    }
}

/// Bytes of the regular files in `dir` (not recursive): the data directory's files.
fn directory_bytes(dir: &std::path::Path) -> u64 {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok())
                .filter_map(|e| e.metadata().ok())
                .filter(|m| m.is_file())
                .map(|m| m.len())
                .sum()
        })
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(query: usize, threads: usize, verdict: Verdict, seconds: Option<f64>) -> TpchRow {
        TpchRow {
            query,
            threads,
            seconds,
            round_seconds: seconds.into_iter().collect(),
            rows: seconds.map(|_| 1),
            verdict,
            correct: None,
            error: None,
            mismatch: None,
            known_failure: None,
        }
    }

    #[test]
    fn the_summary_counts_queries_correct_at_every_thread_count() {
        let rows = vec![
            row(1, 1, Verdict::Ok, Some(2.0)),
            row(1, 2, Verdict::Ok, Some(1.0)),
            row(2, 1, Verdict::Ok, Some(1.0)),
            row(2, 2, Verdict::Wrong, Some(1.0)),
            row(3, 1, Verdict::Error, None),
            row(3, 2, Verdict::Error, None),
        ];
        let s = summarize(&rows, 0.1, Some(AnswerSource::Duckdb));
        assert_eq!((s.queries_run, s.queries_correct), (3, 1));
        assert_eq!((s.queries_wrong, s.queries_failed), (1, 1));
        assert_eq!(s.correct, vec![1]);
        assert_eq!(s.not_correct, vec![2, 3]);
        assert_eq!(s.total_seconds_by_threads[0].seconds, 3.0);
        assert_eq!(s.total_seconds_by_threads[1].seconds, 2.0);
        assert_eq!(s.speedup_max_threads, Some(1.5));
        let json = serde_json::to_value(&s).unwrap();
        assert_eq!(json["queries_correct"], 1);
    }
}
