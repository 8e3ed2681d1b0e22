//! Runner threads: connections' statements, run where their commands are read, by a
//! few threads that go from one ready connection to the next.
//!
//! A busy connection leaves the network threads (`connection::command_loop`) as a
//! [`Job`]: its `Conn`, its socket (a blocking one, out of tokio's reactor), its TLS
//! session if it has one (`crate::tls_stream`) and its read buffer. A runner runs the job's commands one after another while the
//! client has sent them, answering straight into the socket. When the client has
//! nothing more to say, the job is *parked*: armed one-shot in the runners' epoll set
//! (`tarn_io::os::Epoll`), and the runner takes whichever parked connection is ready
//! next. So under load a runner goes from statement to statement without sleeping:
//! the thread-per-connection design before this slept in `recv` after every answer
//! and was woken for the next command, two context switches per statement that
//! profiles showed as half of the server's CPU at 32 sysbench threads.
//!
//! Invariants and why they hold:
//! - **At most `waiters_max` runners wait in `epoll_wait`** (one per core): each
//!   event wakes one sleeper, so more sleepers would only bring back a wake-up per
//!   statement. A runner that finds nothing ready while enough others wait ends, and
//!   tokio's blocking pool keeps its thread for the next job.
//! - **A parked job is not forgotten.** The runner that parks a job looks for work
//!   right after, and becomes a waiter if none waits; a waiter ends only once
//!   nothing is parked (or enough others wait, or epoll fails). A runner about to
//!   sleep inside a statement (a lock wait, a commit's flush, `SLEEP`, `GET_LOCK`, a
//!   client slow to send the rest of a packet or to read its answer) calls
//!   `tarn_common::blocking::about_to_block`, whose hook starts a waiter when none
//!   waits. What no hook covers (a long CPU-bound statement, a full redo log) the
//!   watch thread bounds: it starts a waiter when no job was taken between two of its
//!   rounds (`WATCH_INTERVAL_MS`) while jobs are parked and none waits, so a ready
//!   connection waits at most about two rounds behind a busy runner.
//! - **A commit's answer leaves only once the commit is durable, and no runner sleeps
//!   for it.** A job whose last command committed, with the log not yet durable
//!   there, waits in `State::committing` with its answer buffered
//!   ([`Runners::hold_for_commit`]); the runner goes on to other jobs. The log's
//!   progress hook raises an eventfd armed in the same epoll set (`COMMIT_TOKEN`)
//!   while any job is held, and the runner that takes that event sends the answers
//!   whose tickets are ready and parks their jobs ([`Runners::release_commits`]).
//!   One group commit thus costs at most one wake-up, where a runner per commit
//!   sleeping in `commit_wait` cost two context switches per transaction. A held
//!   job counts as parked for the rules above (a waiter stays while any is held),
//!   and the watch raises the event each round while any is held, so a missed event
//!   delays an answer by at most `WATCH_INTERVAL_MS`. A command the client sent
//!   after the committing one (pipelined) is already read: such a job waits for its
//!   commit on its runner instead, as it could not be woken by its socket.
//! - **A job is in exactly one place**: run by one runner, or in `State::parked`
//!   (armed in epoll), or in `State::committing`, or handed back to its network
//!   task. An event whose token is no
//!   longer parked (the sweep took the job) is ignored; tokens are never reused.
//! - **Idle connections hold no thread, and soon no place here**: a job parked
//!   longer than `RUNNER_PARK_MAX_MS` goes back to its network task, which watches
//!   `wait_timeout`; a killed one, or any at shutdown, is closed. The watch thread
//!   sweeps every `WATCH_INTERVAL_MS` (`Runners::watch_round`), off the runners'
//!   path.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering, fence};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use tarn_io::os::{Epoll, EventFd};
use tarn_sql::CommitTicket;
use tarn_sql::sysviews::RunnerStatus;

use crate::connection::{Conn, HandBack, Ran};

/// The epoll token of the eventfd that says the log moved while commits are held
/// (connections' tokens count up from 0 and never reach it).
const COMMIT_TOKEN: u64 = u64::MAX;

/// How the log tells the runners that held commits may be ready.
struct CommitSignal {
    event: EventFd,
    /// Jobs in `State::committing` (read by the log's hook without the lock).
    held: AtomicUsize,
}

/// What a job gives back to its network task.
pub struct Returned {
    pub conn: Conn,
    pub end: HandBack,
    pub socket: std::net::TcpStream,
    /// The connection's TLS session, if it has one.
    pub tls: Option<rustls::ServerConnection>,
    /// When the connection last answered (its idle time counts from here).
    pub quiet_since: Instant,
}

/// A connection while the runners hold it.
pub struct Job {
    pub(crate) conn: Conn,
    pub(crate) input: std::io::BufReader<crate::connection::PatientSocket>,
    pub(crate) watched: Option<crate::watch::Watched>,
    /// A command read and not yet run (with the sequence number that follows it).
    pub(crate) command: Option<u8>,
    pub(crate) payload: Vec<u8>,
    pub(crate) reply: tokio::sync::oneshot::Sender<Returned>,
    /// In the epoll set (added at the first park, removed when handed back).
    registered: bool,
    parked_at: Instant,
}

impl Job {
    pub(crate) fn new(
        conn: Conn,
        input: std::io::BufReader<crate::connection::PatientSocket>,
        watched: Option<crate::watch::Watched>,
        payload: Vec<u8>,
        seq: u8,
        reply: tokio::sync::oneshot::Sender<Returned>,
    ) -> Job {
        Job {
            conn,
            input,
            watched,
            command: Some(seq),
            payload,
            reply,
            registered: false,
            parked_at: Instant::now(),
        }
    }

    fn socket(&self) -> &std::net::TcpStream {
        self.input.get_ref().socket()
    }
}

pub struct Runners {
    epoll: Epoll,
    commits: Arc<CommitSignal>,
    state: Mutex<State>,
    /// The runtime whose blocking pool runs the runners.
    runtime: tokio::runtime::Handle,
    waiters_max: usize,
    /// `RUNNER_PARK_MAX_MS`.
    park_max: Duration,
}

#[derive(Default)]
struct State {
    parked: HashMap<u64, Job>,
    /// Jobs whose answer waits for their commit to be durable.
    committing: Vec<(Job, CommitTicket)>,
    next_token: u64,
    /// Runners in `epoll_wait`.
    waiting: usize,
    /// A runner was started to wait and has not begun yet.
    starting: bool,
    /// Jobs taken from the parked set, ever: the watch sees a stall when this stands
    /// still.
    taken: u64,
    taken_at_last_check: u64,
    /// Runner threads alive.
    threads: u64,
    /// Runners started by the blocking hook, and by the watch (SHOW STATUS).
    started_for_waits: u64,
    started_for_stalls: u64,
    /// Jobs ever held in `committing` (SHOW STATUS).
    held_commits_total: u64,
}

impl State {
    /// No job waits for the runners: nothing parked, no commit held.
    fn idle(&self) -> bool {
        self.parked.is_empty() && self.committing.is_empty()
    }
}

impl Runners {
    pub fn new(
        runtime: tokio::runtime::Handle,
        waiters_max: usize,
    ) -> std::io::Result<Arc<Runners>> {
        let epoll = Epoll::new()?;
        let event = EventFd::new()?;
        epoll.arm(&event, COMMIT_TOKEN, true)?;
        Ok(Arc::new(Runners {
            epoll,
            commits: Arc::new(CommitSignal {
                event,
                held: AtomicUsize::new(0),
            }),
            state: Mutex::new(State::default()),
            runtime,
            waiters_max: waiters_max.max(1),
            park_max: Duration::from_millis(crate::limits::RUNNER_PARK_MAX_MS),
        }))
    }

    /// What the redo log calls when it moves (`Storage::set_log_progress_hook`):
    /// raises the runners' commit event while any commit is held. Cheap when none
    /// is (one load), as it runs on the log writer's path.
    pub fn log_progress_hook(&self) -> Arc<dyn Fn() + Send + Sync> {
        let signal = Arc::downgrade(&self.commits);
        Arc::new(move || {
            if let Some(signal) = signal.upgrade()
                && signal.held.load(Ordering::SeqCst) > 0
            {
                signal.event.raise();
            }
        })
    }

    /// Runs `job` on a runner thread, which then goes on to other ready connections.
    pub fn start(self: &Arc<Self>, job: Job) {
        let me = self.clone();
        self.runtime.spawn_blocking(move || me.run(Some(job)));
    }

    /// What SHOW STATUS reports (`Threadpool_*`, `Tarn_runner*`).
    pub fn status(&self) -> RunnerStatus {
        let state = self.state.lock();
        RunnerStatus {
            threads: state.threads,
            idle_threads: state.waiting as u64,
            parked_connections: state.parked.len() as u64,
            started_for_waits: state.started_for_waits,
            started_for_stalls: state.started_for_stalls,
            held_commits: state.committing.len() as u64,
            held_commits_total: state.held_commits_total,
        }
    }

    /// A runner: runs jobs until there is nothing for it to do.
    fn run(self: Arc<Self>, mut job: Option<Job>) {
        let _alive = Alive::new(&self);
        let weak: Weak<Runners> = Arc::downgrade(&self);
        let _hook = HookGuard::install(Box::new(move || {
            if let Some(runners) = weak.upgrade() {
                runners.start_waiter_if_needed(Reason::Wait);
            }
        }));
        loop {
            if let Some(mut running) = job.take() {
                match crate::connection::run_job(&mut running) {
                    Ran::Quiet => self.park(running),
                    Ran::Committing(ticket) => self.hold_for_commit(running, ticket),
                    Ran::End(end) => self.hand_back(running, end),
                }
            }
            match self.next() {
                Some(next) => job = Some(next),
                None => return,
            }
        }
    }

    /// The next ready job: one ready now, else (if few wait) the first to become ready.
    fn next(&self) -> Option<Job> {
        loop {
            match self.epoll.wait_one(Duration::ZERO) {
                Ok(Some(COMMIT_TOKEN)) => self.commit_event(),
                Ok(Some(token)) => {
                    if let Some(job) = self.take(token) {
                        return Some(job);
                    }
                }
                Ok(None) => break,
                Err(e) => {
                    tracing::error!("runners: epoll_wait failed: {e}");
                    return None;
                }
            }
        }
        {
            let mut state = self.state.lock();
            if state.waiting >= self.waiters_max || state.idle() {
                return None;
            }
            state.waiting += 1;
        }
        loop {
            match self.epoll.wait_one(self.park_max) {
                Ok(Some(COMMIT_TOKEN)) => {
                    self.commit_event();
                    continue;
                }
                Ok(Some(token)) => {
                    let mut state = self.state.lock();
                    if let Some(job) = state.parked.remove(&token) {
                        state.waiting -= 1;
                        state.taken += 1;
                        return Some(job);
                    }
                    continue;
                }
                Ok(None) => {}
                Err(e) => {
                    tracing::error!("runners: epoll_wait failed: {e}");
                    self.state.lock().waiting -= 1;
                    return None;
                }
            }
            // Nothing for a while: end once nothing is parked (the watch's sweep
            // hands quiet connections back).
            let mut state = self.state.lock();
            if state.idle() {
                state.waiting -= 1;
                return None;
            }
        }
    }

    fn take(&self, token: u64) -> Option<Job> {
        let mut state = self.state.lock();
        let job = state.parked.remove(&token)?;
        state.taken += 1;
        Some(job)
    }

    /// Parks `job` until its client sends more.
    fn park(&self, mut job: Job) {
        let mut state = self.state.lock();
        let token = state.next_token;
        state.next_token += 1;
        job.parked_at = Instant::now();
        let first = !job.registered;
        job.registered = true;
        // Armed and inserted under the lock: a runner that gets the event at once
        // takes the job only after the insert.
        let armed = self.epoll.arm(job.socket(), token, first);
        match armed {
            Ok(()) => {
                state.parked.insert(token, job);
            }
            Err(e) => {
                drop(state);
                tracing::error!("runners: could not arm a connection's socket: {e}");
                job.registered = !first;
                self.hand_back(job, HandBack::Close);
            }
        }
    }

    /// Holds `job`, whose buffered answer must wait for `ticket`, until the log
    /// moves far enough ([`Runners::release_commits`]).
    fn hold_for_commit(&self, job: Job, ticket: CommitTicket) {
        {
            let mut state = self.state.lock();
            state.committing.push((job, ticket));
            state.held_commits_total += 1;
            self.commits
                .held
                .store(state.committing.len(), Ordering::SeqCst);
        }
        // The log may have moved before `held` was visible to its hook, which then
        // raised nothing: look once more (the hook's side fences the same way).
        fence(Ordering::SeqCst);
        self.release_commits();
    }

    /// The commit event: quiets it, re-arms it and releases what is ready.
    fn commit_event(&self) {
        self.commits.event.clear();
        if let Err(e) = self.epoll.arm(&self.commits.event, COMMIT_TOKEN, false) {
            // The watch still releases held commits every round.
            tracing::error!("runners: could not re-arm the commit event: {e}");
        }
        self.release_commits();
    }

    /// Sends the answers of held jobs whose commits are durable and parks those
    /// jobs; closes those whose log failed (the commit's fate is unknown).
    fn release_commits(&self) {
        let ready: Vec<(Job, std::result::Result<(), ()>)> = {
            let mut state = self.state.lock();
            if state.committing.is_empty() {
                return;
            }
            let mut ready = Vec::new();
            let mut i = 0;
            while i < state.committing.len() {
                match state.committing[i].1.ready() {
                    Ok(false) => i += 1,
                    outcome => {
                        let (job, _) = state.committing.swap_remove(i);
                        ready.push((job, outcome.map(|_| ()).map_err(|_| ())));
                    }
                }
            }
            self.commits
                .held
                .store(state.committing.len(), Ordering::SeqCst);
            ready
        };
        for (job, outcome) in ready {
            let sent = outcome.and_then(|()| {
                let mut stream = job.conn.stream.lock();
                stream.output.flush().map_err(|_| ())
            });
            match sent {
                Ok(()) => self.park(job),
                Err(()) => self.hand_back(job, HandBack::Close),
            }
        }
    }

    /// Gives jobs parked longer than `park_max` back to their network tasks, and
    /// closes those whose session was killed (KILL CONNECTION) or whose server is
    /// shutting down. The watch thread's round, off the runners' path.
    fn sweep(&self) {
        let now = Instant::now();
        let swept: Vec<(Job, HandBack)> = {
            let mut state = self.state.lock();
            let ending: Vec<(u64, bool)> = state
                .parked
                .iter()
                .filter_map(|(&token, job)| {
                    let close = job.conn.session.is_killed()
                        || job.conn.shared.shutting_down.load(Ordering::Relaxed);
                    (close || now.duration_since(job.parked_at) >= self.park_max)
                        .then_some((token, close))
                })
                .collect();
            ending
                .into_iter()
                .filter_map(|(token, close)| {
                    let end = if close {
                        HandBack::Close
                    } else {
                        HandBack::Idle
                    };
                    Some((state.parked.remove(&token)?, end))
                })
                .collect()
        };
        for (job, end) in swept {
            self.hand_back(job, end);
        }
    }

    /// Ends the runners' hold on `job`: out of the epoll set, back to its network task.
    fn hand_back(&self, mut job: Job, end: HandBack) {
        if job.registered
            && let Err(e) = self.epoll.remove(job.socket())
        {
            tracing::warn!("runners: could not take a socket out of the epoll set: {e}");
        }
        job.conn.stream.lock().output.direct = None;
        drop(job.watched.take());
        let Job {
            conn,
            input,
            reply,
            parked_at,
            ..
        } = job;
        let (socket, tls) = input.into_inner().into_parts();
        // The output's handle on the session went with `direct` above: this is the
        // only one left.
        let (tls, end) = match tls.map(Arc::try_unwrap) {
            None => (None, end),
            Some(Ok(session)) => (Some(session.into_inner()), end),
            Some(Err(_)) => {
                debug_assert!(false, "a connection's TLS session is still shared");
                tracing::error!("runners: a connection's TLS session is still shared");
                (None, HandBack::Close)
            }
        };
        let returned = Returned {
            conn,
            end,
            socket,
            tls,
            quiet_since: parked_at,
        };
        if let Err(returned) = reply.send(returned) {
            // The network task is gone (the runtime is shutting down): the session
            // ends here, rolling back what it had open.
            drop(returned);
        }
    }

    /// Starts a runner to wait for parked connections if none waits (and none is
    /// starting): a runner is about to block, or the watch saw no progress.
    fn start_waiter_if_needed(self: &Arc<Self>, reason: Reason) {
        {
            let mut state = self.state.lock();
            if state.waiting > 0 || state.starting || state.idle() {
                return;
            }
            state.starting = true;
            match reason {
                Reason::Wait => state.started_for_waits += 1,
                Reason::Stall => state.started_for_stalls += 1,
            }
        }
        // `starting` is cleared when the runner begins, or if it never does (the
        // runtime is shutting down): the guard goes with the closure.
        let starting = Starting(self.clone());
        self.runtime.spawn_blocking(move || {
            let runners = starting.0.clone();
            drop(starting);
            runners.run(None)
        });
    }

    /// The watch thread's round (every `WATCH_INTERVAL_MS`): the sweep, then the
    /// stall check. Jobs parked, none taken since the last round and no runner
    /// waiting means every runner is stuck in a long statement: start one.
    pub fn watch_round(self: &Arc<Self>) {
        self.sweep();
        // The backstop for held commits: a runner releases them (the watch must not
        // write to a client, which may not be reading).
        if self.commits.held.load(Ordering::SeqCst) > 0 {
            self.commits.event.raise();
        }
        let stalled = {
            let mut state = self.state.lock();
            let stalled = state.taken == state.taken_at_last_check;
            state.taken_at_last_check = state.taken;
            stalled
        };
        if stalled {
            self.start_waiter_if_needed(Reason::Stall);
        }
    }
}

/// Why a waiting runner is started.
enum Reason {
    /// A runner is about to sleep in a statement.
    Wait,
    /// No runner took a ready connection for a watch round.
    Stall,
}

/// Counts a runner thread while it lives (`State::threads`).
struct Alive<'a>(&'a Runners);

impl<'a> Alive<'a> {
    fn new(runners: &'a Runners) -> Alive<'a> {
        runners.state.lock().threads += 1;
        Alive(runners)
    }
}

impl Drop for Alive<'_> {
    fn drop(&mut self) {
        self.0.state.lock().threads -= 1;
    }
}

/// Clears `State::starting` when dropped.
struct Starting(Arc<Runners>);

impl Drop for Starting {
    fn drop(&mut self) {
        self.0.state.lock().starting = false;
    }
}

/// Installs a runner's blocking hook for the life of the guard: tokio's blocking
/// threads also run other work, which must not inherit it (even after a panic).
struct HookGuard;

impl HookGuard {
    fn install(hook: Box<dyn Fn()>) -> HookGuard {
        tarn_common::blocking::set_hook(Some(hook));
        HookGuard
    }
}

impl Drop for HookGuard {
    fn drop(&mut self) {
        tarn_common::blocking::set_hook(None);
    }
}
