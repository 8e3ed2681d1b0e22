//! User-level locks: `GET_LOCK`, `RELEASE_LOCK`, `RELEASE_ALL_LOCKS`, `IS_FREE_LOCK`
//! and `IS_USED_LOCK`, as MySQL 8 has them, and `SLEEP`.
//!
//! A user lock is a name (compared case-insensitively, at most
//! [`USER_LOCK_NAME_CHARS_MAX`] characters) that one session at a time may hold.
//! Applications use them as advisory mutexes: Rails, Flyway and Liquibase take one
//! around schema migrations. They have nothing to do with row locks or transactions:
//! a commit or rollback keeps them, and only `RELEASE_LOCK`, `RELEASE_ALL_LOCKS`, the
//! session's end and COM_RESET_CONNECTION give them back.
//!
//! Invariants (all under the one mutex of [`UserLocks`]):
//! - a held name has exactly one owner (a connection id) and a count of at least 1:
//!   a session may take the same lock again, and releases it as often;
//! - `waiting` maps a session blocked in `GET_LOCK` to the name it waits for, so a
//!   session about to wait can follow the chain owner -> name it waits for -> that
//!   name's owner. If the chain comes back to it, waiting would never end: it fails
//!   with 3058 instead, as MySQL 8 does;
//! - at most [`USER_LOCKS_MAX`] names are held at once (1206 past it), so a client
//!   looping over GET_LOCK with fresh names cannot grow the table without bound.
//!
//! A wait checks the statement's interrupt every [`USER_LOCK_WAIT_TICK_MS`], so KILL
//! QUERY, a client that went away and `max_execution_time` end it promptly.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};
use tarn_common::{Error, Result, StatementInterrupt};
use tarn_row::value::Value;

use crate::scalar::cast::{to_f64, to_text};

use crate::limits::{USER_LOCK_NAME_CHARS_MAX, USER_LOCK_WAIT_TICK_MS, USER_LOCKS_MAX};

#[derive(Default)]
struct Table {
    /// Lowercased name -> (owner connection id, times taken).
    held: HashMap<String, (u64, u32)>,
    /// Connection id -> the lowercased name it waits for.
    waiting: HashMap<u64, String>,
}

/// The server's user-level locks (one per engine).
#[derive(Default)]
pub struct UserLocks {
    table: Mutex<Table>,
    released: Condvar,
}

/// What a scalar function running in a session may reach of it: its connection id,
/// the statement's interrupt and the server's user locks. See [`crate::scalar::FnContext`].
pub struct SessionLink {
    pub connection_id: u64,
    pub interrupt: Arc<StatementInterrupt>,
    pub user_locks: Arc<UserLocks>,
}

impl std::fmt::Debug for SessionLink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SessionLink({})", self.connection_id)
    }
}

/// ER_USER_LOCK_WRONG_NAME (3057).
fn wrong_name(name: &str) -> Error {
    Error::sql(
        3057,
        "42000",
        format!("Incorrect user-level lock name '{name}'."),
    )
}

/// The table key of `name`, or 3057 for an empty or over-long name.
fn key(name: &str) -> Result<String> {
    if name.is_empty() || name.chars().count() > USER_LOCK_NAME_CHARS_MAX {
        return Err(wrong_name(name));
    }
    Ok(name.to_lowercase())
}

impl UserLocks {
    pub fn new() -> UserLocks {
        UserLocks::default()
    }

    /// `GET_LOCK(name, timeout)`: true once `owner` holds `name` (again), false if
    /// `timeout` passed first (`None`: wait as long as it takes). Ends with the
    /// interrupt's error (1317, 3024) if the statement is stopped while waiting.
    pub fn get(
        &self,
        owner: u64,
        name: &str,
        timeout: Option<Duration>,
        interrupt: &StatementInterrupt,
    ) -> Result<bool> {
        let key = key(name)?;
        let started = Instant::now();
        let mut table = self.table.lock();
        let mut announced = false;
        loop {
            match table.held.get_mut(&key) {
                None => {
                    if table.held.len() >= USER_LOCKS_MAX {
                        return Err(Error::sql(
                            1206,
                            "HY000",
                            "The total number of locks exceeds the lock table size",
                        ));
                    }
                    table.held.insert(key, (owner, 1));
                    return Ok(true);
                }
                Some((holder, count)) if *holder == owner => {
                    *count += 1;
                    return Ok(true);
                }
                Some((holder, _)) => {
                    let holder = *holder;
                    if would_deadlock(&table, owner, holder) {
                        return Err(Error::sql(
                            3058,
                            "HY000",
                            "Deadlock found when trying to get user-level lock; try rolling back transaction/releasing locks and restarting lock acquisition.",
                        ));
                    }
                }
            }
            let left = match timeout {
                Some(limit) => match limit.checked_sub(started.elapsed()) {
                    Some(left) if !left.is_zero() => Some(left),
                    _ => return Ok(false),
                },
                None => None,
            };
            if let Some(error) = interrupt.interruption() {
                return Err(error);
            }
            let tick = Duration::from_millis(USER_LOCK_WAIT_TICK_MS);
            let wait = left.map_or(tick, |left| left.min(tick));
            if !announced {
                // Once per wait, and not under the table's mutex.
                announced = true;
                parking_lot::MutexGuard::unlocked(
                    &mut table,
                    tarn_common::blocking::about_to_block,
                );
                continue;
            }
            table.waiting.insert(owner, key.clone());
            self.released.wait_for(&mut table, wait);
            table.waiting.remove(&owner);
        }
    }

    /// `RELEASE_LOCK(name)`: `Some(true)` if `owner` held it (it is released once),
    /// `Some(false)` if another session holds it, `None` if nobody does.
    pub fn release(&self, owner: u64, name: &str) -> Result<Option<bool>> {
        let key = key(name)?;
        let mut table = self.table.lock();
        let Some((holder, count)) = table.held.get_mut(&key) else {
            return Ok(None);
        };
        if *holder != owner {
            return Ok(Some(false));
        }
        *count -= 1;
        if *count == 0 {
            table.held.remove(&key);
            self.released.notify_all();
        }
        Ok(Some(true))
    }

    /// `RELEASE_ALL_LOCKS()` and the session's end: releases every lock `owner`
    /// holds and returns how many times they had been taken in all.
    pub fn release_all(&self, owner: u64) -> u64 {
        let mut table = self.table.lock();
        let mut released = 0u64;
        table.held.retain(|_, (holder, count)| {
            if *holder == owner {
                released += u64::from(*count);
                false
            } else {
                true
            }
        });
        if released > 0 {
            self.released.notify_all();
        }
        released
    }

    /// `IS_USED_LOCK(name)`: the connection id holding it, if any.
    pub fn holder(&self, name: &str) -> Result<Option<u64>> {
        let key = key(name)?;
        Ok(self.table.lock().held.get(&key).map(|(holder, _)| *holder))
    }
}

/// Whether `owner` waiting for a lock `holder` holds closes a cycle of waits.
fn would_deadlock(table: &Table, owner: u64, holder: u64) -> bool {
    let mut at = holder;
    // Each step moves to another session; more steps than sessions waiting means a
    // cycle that does not pass through `owner` (it cannot form: every waiter checked).
    for _ in 0..=table.waiting.len() {
        if at == owner {
            return true;
        }
        let Some(name) = table.waiting.get(&at) else {
            return false;
        };
        match table.held.get(name) {
            Some((next, _)) => at = *next,
            None => return false,
        }
    }
    false
}

/// Whether `upper` (an uppercase function name) is one of this module's.
pub fn is_function(upper: &str) -> bool {
    matches!(
        upper,
        "SLEEP"
            | "GET_LOCK"
            | "RELEASE_LOCK"
            | "RELEASE_ALL_LOCKS"
            | "IS_FREE_LOCK"
            | "IS_USED_LOCK"
    )
}

/// Evaluates `upper(args)` (arity checked) in `session`. A NULL lock name is 3057 and
/// a NULL or negative SLEEP 1210, as in MySQL 8; a NULL or negative GET_LOCK timeout
/// waits without end.
pub fn call(upper: &str, args: &[Value], session: Option<&SessionLink>) -> Result<Value> {
    let Some(session) = session else {
        return Err(Error::sql(
            1235,
            "42000",
            format!("This version of MySQL doesn't yet support '{upper} outside a session'"),
        ));
    };
    let locks = &session.user_locks;
    let owner = session.connection_id;
    let name = || -> Result<String> {
        let text = to_text(&args[0]).ok_or_else(|| wrong_name("NULL"))?;
        Ok(String::from_utf8_lossy(&text).into_owned())
    };
    let flag = |b: bool| Value::Int(i64::from(b));
    Ok(match upper {
        "SLEEP" => match to_f64(&args[0]) {
            Some(seconds) if seconds >= 0.0 => Value::Int(sleep(seconds, &session.interrupt)),
            _ => return Err(Error::sql(1210, "HY000", "Incorrect arguments to sleep")),
        },
        "GET_LOCK" => {
            let timeout = to_f64(&args[1])
                .filter(|s| *s >= 0.0)
                .map(|s| Duration::from_secs_f64(s.min(crate::limits::SLEEP_SECONDS_MAX)));
            flag(locks.get(owner, &name()?, timeout, &session.interrupt)?)
        }
        "RELEASE_LOCK" => locks.release(owner, &name()?)?.map_or(Value::Null, flag),
        "RELEASE_ALL_LOCKS" => Value::Int(locks.release_all(owner) as i64),
        "IS_FREE_LOCK" => flag(locks.holder(&name()?)?.is_none()),
        "IS_USED_LOCK" => locks.holder(&name()?)?.map_or(Value::Null, Value::UInt),
        _ => unreachable!("not a user lock function: {upper}"),
    })
}

/// `SLEEP(seconds)`: 0 after sleeping that long, 1 if the statement was stopped
/// first (KILL QUERY, `max_execution_time`), as MySQL's SLEEP returns.
pub fn sleep(seconds: f64, interrupt: &StatementInterrupt) -> i64 {
    let total = Duration::from_secs_f64(seconds.clamp(0.0, crate::limits::SLEEP_SECONDS_MAX));
    let started = Instant::now();
    if !total.is_zero() {
        tarn_common::blocking::about_to_block();
    }
    loop {
        if interrupt.interruption().is_some() {
            return 1;
        }
        let Some(left) = total
            .checked_sub(started.elapsed())
            .filter(|d| !d.is_zero())
        else {
            return 0;
        };
        std::thread::sleep(left.min(Duration::from_millis(USER_LOCK_WAIT_TICK_MS)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lock_is_reentrant_and_released_as_often_as_taken() {
        let locks = UserLocks::new();
        let interrupt = StatementInterrupt::new();
        assert!(locks.get(1, "Migr", None, &interrupt).unwrap());
        assert!(locks.get(1, "migr", None, &interrupt).unwrap());
        assert_eq!(locks.holder("MIGR").unwrap(), Some(1));
        assert!(
            !locks
                .get(2, "migr", Some(Duration::from_millis(30)), &interrupt)
                .unwrap()
        );
        assert_eq!(locks.release(2, "migr").unwrap(), Some(false));
        assert_eq!(locks.release(1, "migr").unwrap(), Some(true));
        assert_eq!(locks.holder("migr").unwrap(), Some(1));
        assert_eq!(locks.release(1, "migr").unwrap(), Some(true));
        assert_eq!(locks.holder("migr").unwrap(), None);
        assert_eq!(locks.release(1, "migr").unwrap(), None);
    }

    #[test]
    fn names_must_be_one_to_64_characters() {
        let locks = UserLocks::new();
        let interrupt = StatementInterrupt::new();
        let long = "é".repeat(USER_LOCK_NAME_CHARS_MAX + 1);
        for name in ["", long.as_str()] {
            let e = locks.get(1, name, None, &interrupt).unwrap_err();
            assert_eq!(e.mysql_code(), 3057, "{name}");
        }
        let longest = "é".repeat(USER_LOCK_NAME_CHARS_MAX);
        assert!(locks.get(1, &longest, None, &interrupt).unwrap());
    }

    #[test]
    fn a_waiter_gets_the_lock_when_its_holder_releases_all() {
        let locks = Arc::new(UserLocks::new());
        let interrupt = StatementInterrupt::new();
        assert!(locks.get(1, "a", None, &interrupt).unwrap());
        assert!(locks.get(1, "b", None, &interrupt).unwrap());
        let waiter = {
            let locks = locks.clone();
            std::thread::spawn(move || locks.get(2, "a", None, &StatementInterrupt::new()))
        };
        std::thread::sleep(Duration::from_millis(50));
        assert_eq!(locks.release_all(1), 2);
        assert!(waiter.join().unwrap().unwrap());
        assert_eq!(locks.holder("a").unwrap(), Some(2));
        assert_eq!(locks.holder("b").unwrap(), None);
    }

    #[test]
    fn a_cycle_of_waits_fails_with_3058_and_a_kill_ends_a_wait() {
        let locks = Arc::new(UserLocks::new());
        let interrupt = Arc::new(StatementInterrupt::new());
        assert!(locks.get(1, "a", None, &interrupt).unwrap());
        assert!(locks.get(2, "b", None, &interrupt).unwrap());
        let waiter = {
            let (locks, interrupt) = (locks.clone(), interrupt.clone());
            std::thread::spawn(move || locks.get(2, "a", None, &interrupt))
        };
        // Session 2 waits for "a" (held by 1); 1 asking for "b" (held by 2) closes
        // the cycle. (With no timeout 1 never waits itself, so 2 cannot be the one
        // to find the cycle.)
        let deadline = Instant::now() + Duration::from_secs(10);
        let e = loop {
            match locks.get(1, "b", Some(Duration::ZERO), &StatementInterrupt::new()) {
                Err(e) => break e,
                Ok(false) if Instant::now() < deadline => continue,
                other => panic!("no deadlock reported: {other:?}"),
            }
        };
        assert_eq!(e.mysql_code(), 3058);
        interrupt.kill();
        assert_eq!(waiter.join().unwrap().unwrap_err().mysql_code(), 1317);
    }

    #[test]
    fn sleep_returns_1_when_killed() {
        let interrupt = StatementInterrupt::new();
        assert_eq!(sleep(0.01, &interrupt), 0);
        interrupt.kill();
        assert_eq!(sleep(5.0, &interrupt), 1);
    }
}
