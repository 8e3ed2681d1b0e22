//! Clients run in phases: the closed-loop driver shared by `bench commit` and
//! `bench locks`.
//!
//! [`run_clients`] starts one OS thread per client (small stacks, so 512 are cheap);
//! [`run_pooled`] serves the clients as sessions on a few worker threads, as a
//! server's worker pool serves connections, parking a committed session until the log
//! acknowledges it. Every client repeats its transaction until told to stop; the main
//! thread moves all clients through numbered phases (warm-up, measured windows,
//! settling after a setting changed) by storing the phase number in one atomic. A
//! transaction is
//! credited to the phase in which it *completed*, and only in phases marked as
//! measured: throughput is then completed transactions in the window divided by the
//! window's length, as a closed-loop benchmark reports it.
//!
//! A client error (anything other than a deadlock, lock-wait timeout or duplicate key,
//! which the client rolls back and reports as an [`Outcome`]) stops every client and
//! fails the run, naming the client.
//!
//! A bench must finish: if the clients have not all returned [`STOP_GRACE`] after the
//! run ended (the engine is stuck, e.g. appends waiting for log space that a
//! checkpoint blocked by their page latches cannot free), the process prints what is
//! stuck, removes its `/dev/shm` log directories and exits with status 1, since stuck
//! threads can be neither joined nor killed.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use parking_lot::Mutex;
use tarn_catalog::CommitTicket;
use tarn_common::limits;
use tarn_common::settings::Settings;

use crate::{BenchError, Result};

/// The stack of each client thread: enough for the engine's calls, small enough that
/// hundreds of clients cost little memory.
pub(crate) const CLIENT_STACK_BYTES: usize = 512 << 10;

/// Latencies are recorded in microseconds, up to this (longer ones are clamped).
const LATENCY_MAX_US: u64 = 600_000_000;

/// The phase number that tells clients to stop.
const STOP: usize = usize::MAX;

/// How long clients may take to return after the run ended: longer than any lock wait
/// (`lock_wait_timeout` is 50 s by default) plus a transaction.
pub(crate) const STOP_GRACE: Duration = Duration::from_secs(120);

/// The `/dev/shm` log directories in use, removed if the process must exit early.
static SHM_DIRS: Mutex<Vec<std::path::PathBuf>> = Mutex::new(Vec::new());

/// How one transaction of a client ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Outcome {
    Committed,
    /// Chosen as a deadlock victim and rolled back.
    Deadlock,
    /// Waited longer than `lock_wait_timeout` and rolled back.
    Timeout,
    /// Hit a duplicate key and rolled back.
    Duplicate,
}

/// What the clients did in one phase, summed over clients.
#[derive(Clone, Debug)]
pub(crate) struct PhaseStats {
    pub committed: u64,
    pub deadlocks: u64,
    pub timeouts: u64,
    pub duplicates: u64,
    /// Latency of committed transactions, in microseconds.
    pub latency_us: Histogram<u64>,
}

impl PhaseStats {
    fn new() -> PhaseStats {
        PhaseStats {
            committed: 0,
            deadlocks: 0,
            timeouts: 0,
            duplicates: 0,
            latency_us: Histogram::new_with_bounds(1, LATENCY_MAX_US, 2)
                .expect("valid histogram bounds"),
        }
    }

    /// Adds `other`'s counts and latencies to these.
    pub fn merge(&mut self, other: &PhaseStats) {
        self.committed += other.committed;
        self.deadlocks += other.deadlocks;
        self.timeouts += other.timeouts;
        self.duplicates += other.duplicates;
        self.latency_us
            .add(&other.latency_us)
            .expect("histograms with the same bounds merge");
    }

    /// The latency at quantile `q` (0..=1) in microseconds; `None` with no commits.
    pub fn latency_quantile_us(&self, q: f64) -> Option<f64> {
        (!self.latency_us.is_empty()).then(|| self.latency_us.value_at_quantile(q) as f64)
    }
}

/// The main thread's handle on the running clients.
pub(crate) struct Control {
    phase: AtomicUsize,
    /// Client threads that have not returned yet.
    running: AtomicUsize,
    measured: Vec<bool>,
    failure: Mutex<Option<BenchError>>,
}

impl Control {
    /// Moves every client to `phase` (an index into the phases given to
    /// [`run_clients`]).
    pub fn enter(&self, phase: usize) {
        debug_assert!(phase < self.measured.len());
        if self.phase.load(Ordering::SeqCst) != STOP {
            self.phase.store(phase, Ordering::SeqCst);
        }
    }

    /// Sleeps for `seconds`, waking early if a client failed; returns the seconds that
    /// actually passed.
    pub fn sleep(&self, seconds: f64) -> f64 {
        let started = Instant::now();
        let until = started + Duration::from_secs_f64(seconds.max(0.0));
        loop {
            let now = Instant::now();
            if now >= until || self.phase.load(Ordering::SeqCst) == STOP {
                return now.duration_since(started).as_secs_f64();
            }
            std::thread::sleep((until - now).min(Duration::from_millis(20)));
        }
    }

    /// True once a client failed (or the run was stopped).
    pub fn stopped(&self) -> bool {
        self.phase.load(Ordering::SeqCst) == STOP
    }

    fn fail(&self, error: BenchError) {
        let mut failure = self.failure.lock();
        if failure.is_none() {
            *failure = Some(error);
        }
        self.phase.store(STOP, Ordering::SeqCst);
    }
}

/// How a client's transaction attempt ended in the pooled driver: finished (rolled
/// back, or committed and acknowledged), or committed and waiting for the log before
/// it may be acknowledged.
pub(crate) enum Attempt {
    Done(Outcome),
    Committing(CommitTicket),
}

/// Runs `clients` client threads through `phases` (true = measured). `make_client(i)`
/// builds client `i`'s transaction (called on the client's own thread); `schedule`
/// runs on the calling thread, moving the clients through the phases with
/// [`Control::enter`] and [`Control::sleep`], and returns what it measured besides
/// the clients' counts. Returns that, and per phase the clients' summed
/// [`PhaseStats`] (empty for unmeasured phases). Every client thread is joined before
/// this returns, whatever happened.
pub(crate) fn run_clients<M, C, T>(
    clients: usize,
    phases: &[bool],
    make_client: M,
    schedule: impl FnOnce(&Control) -> Result<T>,
) -> Result<(T, Vec<PhaseStats>)>
where
    M: Fn(usize) -> Result<C> + Sync,
    C: FnMut() -> Result<Outcome>,
{
    run_threads(
        "bench-client",
        clients,
        phases,
        schedule,
        |index, control| client_loop(index, control, &make_client),
    )
}

/// Like [`run_clients`], but the clients are sessions served by `workers` threads, as
/// a server's fixed worker pool serves its connections: worker `w` serves clients
/// `w, w + workers, ...`. A worker runs each of its ready clients' transactions in
/// turn; a committed one waits for the log without holding the worker
/// ([`Attempt::Committing`]), and the worker sleeps only when none of its clients is
/// ready. A client's latency runs from the moment it was ready (its previous commit
/// acknowledged) to the acknowledgement, so time queued for the worker counts.
pub(crate) fn run_pooled<M, C, T>(
    workers: usize,
    clients: usize,
    phases: &[bool],
    make_client: M,
    schedule: impl FnOnce(&Control) -> Result<T>,
) -> Result<(T, Vec<PhaseStats>)>
where
    M: Fn(usize) -> Result<C> + Sync,
    C: FnMut() -> Result<Attempt>,
{
    let workers = workers.clamp(1, clients);
    run_threads(
        "bench-worker",
        workers,
        phases,
        schedule,
        |worker, control| worker_loop(worker, workers, clients, control, &make_client),
    )
}

/// Starts `threads` threads running `body(index, control)`, runs `schedule`, stops
/// and joins them, and sums their per-phase stats.
fn run_threads<T>(
    name: &str,
    threads: usize,
    phases: &[bool],
    schedule: impl FnOnce(&Control) -> Result<T>,
    body: impl Fn(usize, &Control) -> Vec<PhaseStats> + Sync,
) -> Result<(T, Vec<PhaseStats>)> {
    let control = Control {
        phase: AtomicUsize::new(0),
        running: AtomicUsize::new(0),
        measured: phases.to_vec(),
        failure: Mutex::new(None),
    };
    let mut totals: Vec<PhaseStats> = phases.iter().map(|_| PhaseStats::new()).collect();
    let scheduled = std::thread::scope(|scope| {
        let (body, control) = (&body, &control);
        let mut handles = Vec::with_capacity(threads);
        for index in 0..threads {
            control.running.fetch_add(1, Ordering::SeqCst);
            let spawned = std::thread::Builder::new()
                .name(format!("{name}-{index}"))
                .stack_size(CLIENT_STACK_BYTES)
                .spawn_scoped(scope, move || {
                    let _running = Running(&control.running);
                    body(index, control)
                });
            match spawned {
                Ok(handle) => handles.push(handle),
                Err(source) => {
                    control.running.fetch_sub(1, Ordering::SeqCst);
                    control.fail(BenchError::Os {
                        what: format!("starting {name} thread {} of {threads}", index + 1),
                        source,
                    });
                    break;
                }
            }
        }
        let scheduled = if control.stopped() {
            None
        } else {
            Some(schedule(control))
        };
        control.phase.store(STOP, Ordering::SeqCst);
        wait_for_clients(control, threads);
        for handle in handles {
            match handle.join() {
                Ok(stats) => {
                    for (total, phase) in totals.iter_mut().zip(&stats) {
                        total.merge(phase);
                    }
                }
                Err(_) => control.fail(BenchError::Options(format!("a {name} thread panicked"))),
            }
        }
        scheduled
    });
    if let Some(error) = control.failure.lock().take() {
        return Err(error);
    }
    let scheduled = scheduled.ok_or_else(|| {
        BenchError::Options("the bench clients stopped before they started".into())
    })??;
    Ok((scheduled, totals))
}

/// Waits until every client thread returned; exits the process if that takes longer
/// than [`STOP_GRACE`] (see the module docs).
fn wait_for_clients(control: &Control, clients: usize) {
    let started = Instant::now();
    while control.running.load(Ordering::SeqCst) > 0 {
        if started.elapsed() > STOP_GRACE {
            let stuck = control.running.load(Ordering::SeqCst);
            eprintln!(
                "error: {stuck} of {clients} bench threads are still inside a transaction {} s \
                 after the run ended: the engine is stuck (see a stack dump of this process, \
                 e.g. `gdb -p {} -batch -ex 'thread apply all bt'`); exiting",
                STOP_GRACE.as_secs(),
                std::process::id()
            );
            for dir in SHM_DIRS.lock().drain(..) {
                let _ = std::fs::remove_dir_all(dir);
            }
            std::process::exit(1);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Decrements [`Control::running`] when a client thread returns, however it returns.
struct Running<'a>(&'a AtomicUsize);

impl Drop for Running<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Stops the run with a client's error, naming the client.
fn client_failed(control: &Control, index: usize, error: BenchError) {
    control.fail(match error {
        BenchError::Engine(first) => BenchError::Row {
            row: format!("client {}", index + 1),
            errors: 1,
            first,
        },
        other => other,
    });
}

/// Credits `outcome`, of a transaction started at `started`, to the current phase
/// if it is measured.
fn credit(control: &Control, stats: &mut [PhaseStats], outcome: Outcome, started: Instant) {
    let phase = control.phase.load(Ordering::Relaxed);
    if phase == STOP || !control.measured[phase] {
        return;
    }
    let phase = &mut stats[phase];
    match outcome {
        Outcome::Committed => {
            phase.committed += 1;
            let us = (started.elapsed().as_micros() as u64).clamp(1, LATENCY_MAX_US);
            phase.latency_us.saturating_record(us);
        }
        Outcome::Deadlock => phase.deadlocks += 1,
        Outcome::Timeout => phase.timeouts += 1,
        Outcome::Duplicate => phase.duplicates += 1,
    }
}

fn client_loop<M, C>(index: usize, control: &Control, make_client: &M) -> Vec<PhaseStats>
where
    M: Fn(usize) -> Result<C>,
    C: FnMut() -> Result<Outcome>,
{
    let mut stats: Vec<PhaseStats> = control.measured.iter().map(|_| PhaseStats::new()).collect();
    let mut client = match make_client(index) {
        Ok(client) => client,
        Err(error) => {
            control.fail(error);
            return stats;
        }
    };
    loop {
        if control.phase.load(Ordering::Relaxed) == STOP {
            return stats;
        }
        let started = Instant::now();
        match client() {
            Ok(outcome) => credit(control, &mut stats, outcome, started),
            Err(error) => {
                client_failed(control, index, error);
                return stats;
            }
        }
    }
}

/// One pooled worker: serves clients `worker, worker + workers, ...` (see
/// [`run_pooled`]). Its committing clients finish in commit order, which is LSN
/// order, so only the oldest needs polling (a ticket with no log record is ready at
/// once but waits its turn behind older ones: harmless).
fn worker_loop<M, C>(
    worker: usize,
    workers: usize,
    clients: usize,
    control: &Control,
    make_client: &M,
) -> Vec<PhaseStats>
where
    M: Fn(usize) -> Result<C>,
    C: FnMut() -> Result<Attempt>,
{
    let mut stats: Vec<PhaseStats> = control.measured.iter().map(|_| PhaseStats::new()).collect();
    let mut served = Vec::new();
    for index in (worker..clients).step_by(workers) {
        match make_client(index) {
            Ok(client) => served.push((index, client)),
            Err(error) => {
                control.fail(error);
                return stats;
            }
        }
    }
    let now = Instant::now();
    // Positions in `served` with the instant each became ready.
    let mut ready: VecDeque<(usize, Instant)> = (0..served.len()).map(|i| (i, now)).collect();
    let mut committing: VecDeque<(usize, Instant, CommitTicket)> = VecDeque::new();
    loop {
        if control.phase.load(Ordering::Relaxed) == STOP {
            return stats;
        }
        if let Some((slot, started)) = ready.pop_front() {
            let (index, client) = &mut served[slot];
            match client() {
                Ok(Attempt::Done(outcome)) => {
                    credit(control, &mut stats, outcome, started);
                    ready.push_back((slot, Instant::now()));
                }
                Ok(Attempt::Committing(ticket)) => committing.push_back((slot, started, ticket)),
                Err(error) => {
                    client_failed(control, *index, error);
                    return stats;
                }
            }
        } else if let Some((slot, _, ticket)) = committing.front()
            && let Err(error) = ticket.wait()
        {
            client_failed(control, served[*slot].0, error.into());
            return stats;
        }
        while let Some((slot, started, ticket)) = committing.front() {
            match ticket.ready() {
                Ok(true) => {}
                Ok(false) => break,
                Err(error) => {
                    client_failed(control, served[*slot].0, error.into());
                    return stats;
                }
            }
            credit(control, &mut stats, Outcome::Committed, *started);
            ready.push_back((*slot, Instant::now()));
            committing.pop_front();
        }
    }
}

/// Turns a deadlock, lock-wait timeout or duplicate key into its [`Outcome`]; any
/// other error stays an error. The caller has rolled the transaction back.
pub(crate) fn abort_outcome(error: tarn_common::Error) -> Result<Outcome> {
    match error {
        tarn_common::Error::Deadlock => Ok(Outcome::Deadlock),
        tarn_common::Error::LockWaitTimeout => Ok(Outcome::Timeout),
        tarn_common::Error::DuplicateKey { .. } => Ok(Outcome::Duplicate),
        other => Err(other.into()),
    }
}

/// A directory for a memory-mapped (pmem) log under `/dev/shm`, removed on drop.
pub(crate) struct ShmLogDir {
    path: std::path::PathBuf,
}

impl ShmLogDir {
    /// `/dev/shm/<prefix>-<pid>-<name>`, emptied and created; `None` if `/dev/shm` is
    /// missing.
    pub fn create(prefix: &str, name: &str) -> Result<Option<ShmLogDir>> {
        let root = std::path::Path::new("/dev/shm");
        if !root.is_dir() {
            return Ok(None);
        }
        let path = root.join(format!("{prefix}-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).map_err(|source| BenchError::Os {
            what: format!("creating the pmem log directory '{}'", path.display()),
            source,
        })?;
        SHM_DIRS.lock().push(path.clone());
        Ok(Some(ShmLogDir { path }))
    }

    pub fn path(&self) -> &std::path::Path {
        &self.path
    }
}

impl Drop for ShmLogDir {
    fn drop(&mut self) {
        SHM_DIRS.lock().retain(|dir| dir != &self.path);
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// The redo log the transaction benches run with: `log_file_size` and `log_files`
/// keep a value given with `--set` (one other than the engine default) and otherwise
/// become `file_size_bytes` and `files`, so that the log rarely fills between
/// checkpoints.
pub(crate) fn bench_log_geometry(settings: &mut Settings, file_size_bytes: u64, files: u32) {
    if settings.log_file_size_bytes == limits::LOG_FILE_SIZE_DEFAULT_BYTES {
        settings.log_file_size_bytes = file_size_bytes;
    }
    if settings.log_files == limits::LOG_FILES_DEFAULT {
        settings.log_files = files;
    }
}

/// Removes `dir` (if present) and creates it empty.
pub(crate) fn fresh_dir(dir: &std::path::Path) -> Result<()> {
    if dir.exists() {
        std::fs::remove_dir_all(dir).map_err(|source| BenchError::Os {
            what: format!("removing '{}'", dir.display()),
            source,
        })?;
    }
    std::fs::create_dir_all(dir).map_err(|source| BenchError::Os {
        what: format!("creating '{}'", dir.display()),
        source,
    })
}

/// Checks a bench's `--seconds`: more than 0 and at most 600.
pub(crate) fn check_seconds(seconds: f64, what: &str) -> Result<()> {
    if seconds > 0.0 && seconds <= 600.0 {
        Ok(())
    } else {
        Err(BenchError::Options(format!(
            "{what} must be more than 0 and at most 600 seconds, not {seconds}"
        )))
    }
}

/// Checks a list of client counts: not empty, each from 1 to `max`; returns them
/// sorted, each once.
pub(crate) fn check_clients(clients: &[usize], max: usize) -> Result<Vec<usize>> {
    let mut out: Vec<usize> = clients.to_vec();
    out.sort_unstable();
    out.dedup();
    if out.is_empty() {
        return Err(BenchError::Options("--clients selects nothing".into()));
    }
    if let Some(bad) = out.iter().find(|&&c| c == 0 || c > max) {
        return Err(BenchError::Options(format!(
            "--clients must be from 1 to {max}, not {bad}"
        )));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU64;

    #[test]
    fn clients_are_credited_only_in_measured_phases_and_all_join() {
        let calls = AtomicU64::new(0);
        let (seconds, phases) = run_clients(
            4,
            &[false, true, false],
            |_| {
                Ok(|| {
                    calls.fetch_add(1, Ordering::Relaxed);
                    std::thread::sleep(Duration::from_micros(200));
                    Ok(Outcome::Committed)
                })
            },
            |control| {
                control.sleep(0.05);
                control.enter(1);
                let seconds = control.sleep(0.1);
                control.enter(2);
                control.sleep(0.02);
                Ok(seconds)
            },
        )
        .unwrap();
        assert!(seconds >= 0.1);
        assert_eq!(phases.len(), 3);
        assert_eq!(phases[0].committed, 0);
        assert_eq!(phases[2].committed, 0);
        assert!(phases[1].committed > 0);
        assert!(calls.load(Ordering::Relaxed) >= phases[1].committed);
        assert!(phases[1].latency_quantile_us(0.5).unwrap() >= 200.0);
    }

    #[test]
    fn pooled_workers_serve_every_client_and_credit_measured_phases() {
        let served: Vec<AtomicU64> = (0..7).map(|_| AtomicU64::new(0)).collect();
        let (_, phases) = run_pooled(
            2,
            7,
            &[false, true],
            |index| {
                let served = &served[index];
                Ok(move || {
                    served.fetch_add(1, Ordering::Relaxed);
                    std::thread::sleep(Duration::from_micros(100));
                    Ok(Attempt::Done(Outcome::Committed))
                })
            },
            |control| {
                control.sleep(0.02);
                control.enter(1);
                control.sleep(0.1);
                Ok(())
            },
        )
        .unwrap();
        assert_eq!(phases[0].committed, 0);
        assert!(phases[1].committed > 0);
        for (index, count) in served.iter().enumerate() {
            assert!(
                count.load(Ordering::Relaxed) > 0,
                "client {index} never ran"
            );
        }
        // Two workers share 7 clients: a client waits for the others on its worker.
        assert!(phases[1].latency_quantile_us(0.5).unwrap() >= 300.0);
    }

    #[test]
    fn a_client_error_stops_the_run_and_names_the_client() {
        let result = run_clients(
            3,
            &[true],
            |index| {
                Ok(move || {
                    if index == 2 {
                        Err(tarn_common::Error::CorruptData("boom".into()).into())
                    } else {
                        Ok(Outcome::Deadlock)
                    }
                })
            },
            |control| {
                control.sleep(5.0);
                Ok(())
            },
        );
        let error = result.unwrap_err().to_string();
        assert!(
            error.contains("client 3") && error.contains("boom"),
            "{error}"
        );
    }
}
