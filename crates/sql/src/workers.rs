//! The executor's fixed worker pool.
//!
//! One pool per process, with one thread per core, runs the morsels of every
//! parallel operator of every query ([`crate::parallel`]): a query never starts
//! threads of its own. Jobs are `'static` closures that own what they read (shared
//! through `Arc`s).
//!
//! Invariants:
//! - the queue holds at most [`EXEC_QUEUED_JOBS_MAX`] jobs; a job that would exceed it
//!   runs on the submitting thread instead, so a burst of queries degrades to serial
//!   execution rather than growing memory or deadlocking;
//! - a job never waits for another job (parallel operators consume their workers'
//!   output on the session's own thread), so the pool cannot deadlock on itself;
//! - a session thread that consumes a running pipeline submits no further jobs
//!   (`parallel::pipeline_running`): that pipeline's workers may be blocked handing it
//!   chunks, and new jobs would queue behind them while it waits for those jobs.

use std::collections::VecDeque;
use std::sync::{Arc, OnceLock};

use parking_lot::{Condvar, Mutex};

use crate::limits::EXEC_QUEUED_JOBS_MAX;

type Job = Box<dyn FnOnce() + Send + 'static>;

pub struct WorkerPool {
    queue: Mutex<VecDeque<Job>>,
    ready: Condvar,
    threads: usize,
}

static POOL: OnceLock<Arc<WorkerPool>> = OnceLock::new();

/// The process's pool (started on first use).
pub fn pool() -> &'static Arc<WorkerPool> {
    POOL.get_or_init(|| {
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        let pool = Arc::new(WorkerPool {
            queue: Mutex::new(VecDeque::new()),
            ready: Condvar::new(),
            threads,
        });
        for i in 0..threads {
            let pool = pool.clone();
            std::thread::Builder::new()
                .name(format!("tarn-exec-{i}"))
                .spawn(move || pool.work())
                .expect("spawning an executor worker");
        }
        pool
    })
}

impl WorkerPool {
    /// Worker threads (the parallelism a query can get).
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// Runs `job` on a worker, or on this thread if the queue is full.
    pub fn spawn(&self, job: impl FnOnce() + Send + 'static) {
        let mut queue = self.queue.lock();
        if queue.len() >= EXEC_QUEUED_JOBS_MAX {
            drop(queue);
            job();
            return;
        }
        queue.push_back(Box::new(job));
        drop(queue);
        self.ready.notify_one();
    }

    fn work(&self) {
        loop {
            let job = {
                let mut queue = self.queue.lock();
                loop {
                    if let Some(job) = queue.pop_front() {
                        break job;
                    }
                    self.ready.wait(&mut queue);
                }
            };
            // A panicking job is a bug; keep the worker alive for other queries.
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
        }
    }
}
