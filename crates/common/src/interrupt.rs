//! The stop switch of a session's running statement, and the session's lock wait
//! timeout, shared by the SQL layer and the lock manager.
//!
//! A statement stops for one of two reasons: it was killed (KILL QUERY, or its client
//! disconnected), or its `max_execution_time` deadline passed. Both are kept in one
//! [`StatementInterrupt`] so that every place that may run for long asks the same
//! question the same way: the executor between chunks, and a lock wait while it
//! sleeps. [`StatementInterrupt::interruption`] answers with the error the statement
//! ends with: [`Error::QueryInterrupted`] (1317) when killed, else
//! [`Error::MaxExecutionTimeExceeded`] (3024) once the deadline has passed.
//!
//! Invariants:
//! 1. Arming a statement ([`StatementInterrupt::arm`]) is two atomic stores: no latch,
//!    no allocation. The session arms every statement, so this is on the path of every
//!    query.
//! 2. The deadline is encoded as nanoseconds since a process-wide base instant
//!    ([`base_instant`]) in an `AtomicU64`; 0 means "no deadline", and a real deadline
//!    is never encoded as 0 (it is at least 1 ns).
//! 3. Whoever sets the kill flag knows nothing of the statement's waits, so a waiter
//!    must look at the flag itself (the lock manager does every
//!    `LOCK_WAIT_INTERRUPT_CHECK_MS`); a deadline, in contrast, is known in advance, so
//!    a waiter sleeps no later than it ([`StatementInterrupt::deadline`]).
//! 4. Only the owning session clears the flag and moves the deadline, between
//!    statements; anyone may set the flag at any time.
//! 5. The lock wait timeout is the session's `innodb_lock_wait_timeout`: how long a
//!    lock wait of the session's transactions lasts before error 1205. It lives here
//!    because the lock manager already holds this struct for each such transaction,
//!    so the session sets it only when it starts and when it changes the variable
//!    (never per statement), and a wait reads it (one atomic load) when it begins.
//!    A change between two statements of a transaction applies to the waits of the
//!    next statement. Encoded as nanoseconds in an `AtomicU64`; 0 means "none": the
//!    lock manager's engine-wide timeout applies (a real timeout is at least 1 ns).

use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::error::Error;

/// The instant deadlines are counted from (the first use in the process).
fn base_instant() -> Instant {
    static BASE: OnceLock<Instant> = OnceLock::new();
    *BASE.get_or_init(Instant::now)
}

/// A deadline as stored: nanoseconds past [`base_instant`], at least 1.
fn encode_deadline(deadline: Instant) -> u64 {
    let since_base_ns = deadline
        .saturating_duration_since(base_instant())
        .as_nanos();
    u64::try_from(since_base_ns).unwrap_or(u64::MAX).max(1)
}

/// The kill flag and the deadline of a session's running statement. See the module
/// docs.
#[derive(Debug, Default)]
pub struct StatementInterrupt {
    killed: AtomicBool,
    /// Nanoseconds past [`base_instant`]; 0 = no deadline.
    deadline_ns: AtomicU64,
    /// The session's lock wait timeout in nanoseconds; 0 = the engine's.
    lock_wait_timeout_ns: AtomicU64,
}

impl StatementInterrupt {
    pub fn new() -> StatementInterrupt {
        StatementInterrupt::default()
    }

    /// Makes ready for the next statement: clears the kill flag and sets the deadline
    /// (`None`: the statement may run as long as it likes).
    pub fn arm(&self, deadline: Option<Instant>) {
        self.killed.store(false, Ordering::Relaxed);
        self.set_deadline(deadline);
    }

    /// Sets (or, with `None`, clears) the running statement's deadline.
    pub fn set_deadline(&self, deadline: Option<Instant>) {
        let encoded = deadline.map_or(0, encode_deadline);
        self.deadline_ns.store(encoded, Ordering::Relaxed);
    }

    /// The running statement's deadline, if it has one.
    pub fn deadline(&self) -> Option<Instant> {
        match self.deadline_ns.load(Ordering::Relaxed) {
            0 => None,
            since_base_ns => Some(base_instant() + Duration::from_nanos(since_base_ns)),
        }
    }

    /// Sets (or, with `None`, clears: the engine's applies) the session's lock wait
    /// timeout. Waits that begin after the call use it.
    pub fn set_lock_wait_timeout(&self, timeout: Option<Duration>) {
        let encoded = timeout.map_or(0, |t| {
            u64::try_from(t.as_nanos()).unwrap_or(u64::MAX).max(1)
        });
        self.lock_wait_timeout_ns.store(encoded, Ordering::Relaxed);
    }

    /// The session's lock wait timeout, if it set one.
    pub fn lock_wait_timeout(&self) -> Option<Duration> {
        match self.lock_wait_timeout_ns.load(Ordering::Relaxed) {
            0 => None,
            timeout_ns => Some(Duration::from_nanos(timeout_ns)),
        }
    }

    /// Stops the running statement (KILL QUERY, a client that went away).
    pub fn kill(&self) {
        self.killed.store(true, Ordering::Relaxed);
    }

    pub fn is_killed(&self) -> bool {
        self.killed.load(Ordering::Relaxed)
    }

    /// The error the running statement must end with, if it must end now: 1317 once
    /// killed, else 3024 once its deadline has passed.
    pub fn interruption(&self) -> Option<Error> {
        if self.is_killed() {
            return Some(Error::QueryInterrupted);
        }
        let deadline = self.deadline()?;
        (Instant::now() >= deadline).then_some(Error::MaxExecutionTimeExceeded)
    }

    /// [`StatementInterrupt::interruption`] as a `Result`, for `?`.
    pub fn check(&self) -> Result<(), Error> {
        match self.interruption() {
            Some(error) => Err(error),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kill_wins_over_a_passed_deadline_and_arming_clears_both() {
        let interrupt = StatementInterrupt::new();
        assert!(interrupt.interruption().is_none());
        assert_eq!(interrupt.deadline(), None);

        interrupt.arm(Some(Instant::now() + Duration::from_secs(3600)));
        assert!(interrupt.interruption().is_none());
        interrupt.set_deadline(Some(Instant::now()));
        let error = interrupt.interruption().expect("the deadline passed");
        assert_eq!((error.mysql_code(), error.sqlstate()), (3024, "HY000"));
        assert_eq!(
            error.to_string(),
            "Query execution was interrupted, maximum statement execution time exceeded"
        );

        interrupt.kill();
        let error = interrupt.check().expect_err("killed");
        assert_eq!(error.mysql_code(), 1317);

        interrupt.arm(None);
        assert!(interrupt.check().is_ok());
        assert_eq!(interrupt.deadline(), None);
    }

    #[test]
    fn a_lock_wait_timeout_survives_its_encoding_and_arming() {
        let interrupt = StatementInterrupt::new();
        assert_eq!(interrupt.lock_wait_timeout(), None);
        interrupt.set_lock_wait_timeout(Some(Duration::from_secs(7)));
        interrupt.arm(Some(Instant::now()));
        interrupt.kill();
        interrupt.arm(None);
        assert_eq!(interrupt.lock_wait_timeout(), Some(Duration::from_secs(7)));
        // A zero timeout is still a timeout (the shortest), never "the engine's".
        interrupt.set_lock_wait_timeout(Some(Duration::ZERO));
        assert_eq!(interrupt.lock_wait_timeout(), Some(Duration::from_nanos(1)));
        interrupt.set_lock_wait_timeout(None);
        assert_eq!(interrupt.lock_wait_timeout(), None);
    }

    #[test]
    fn a_deadline_survives_its_encoding() {
        let interrupt = StatementInterrupt::new();
        let deadline = Instant::now() + Duration::from_millis(300);
        interrupt.set_deadline(Some(deadline));
        assert_eq!(interrupt.deadline(), Some(deadline));
        // A deadline before the base instant is encoded as already passed, never as
        // "no deadline".
        let long_ago = base_instant()
            .checked_sub(Duration::from_secs(1))
            .unwrap_or(base_instant());
        interrupt.set_deadline(Some(long_ago));
        assert!(interrupt.deadline().is_some());
        assert!(interrupt.interruption().is_some());
    }
}
