//! Metadata locks: what keeps other sessions' DDL off the tables a session holds
//! with LOCK TABLES, and off everything under FLUSH TABLES WITH READ LOCK, as
//! MySQL's metadata locks (MDL) do.
//!
//! The lock manager's whole-table locks (`table_locks.rs`) make other sessions'
//! writes and locking reads wait, but most DDL takes no lock-manager lock at all
//! (DROP, RENAME, in-place ALTER and index changes run under the catalog's latch),
//! and FLUSH TABLES WITH READ LOCK cannot lock a table that does not exist yet. So
//! the SQL layer keeps these locks on names as well, one registry per engine
//! ([`MetadataLocks`]):
//!
//! | name | LOCK TABLES | FLUSH TABLES WITH READ LOCK | DDL of a table or view | CREATE / DROP DATABASE |
//! |---|---|---|---|---|
//! | global | | S | IX | IX |
//! | database | IX | | IX | X |
//! | table or view | S (READ and WRITE) | | X | |
//!
//! IX is compatible with IX, S with S, and nothing else with anything (so X with
//! nothing): DDL waits for LOCK TABLES of its table (READ or WRITE) and for a
//! global read lock, and those wait for DDL under way; DDL of different tables
//! does not wait for each other here (the catalog's latch orders it). DDL of a
//! table takes X on each name it changes or creates (RENAME TABLE and ALTER TABLE
//! .. RENAME both names), so CREATE TABLE under another session's global read lock
//! waits, and no table appears that the global read lock's table locks miss.
//! Temporary tables are the session's own and take none.
//!
//! Invariants (all under the one mutex of [`MetadataLocks`]):
//! - the holds of different owners (connection ids) on one name are compatible;
//!   an owner never waits for its own holds;
//! - a request is granted whole or not at all, and a session never asks for more
//!   while it holds some (LOCK TABLES and FLUSH TABLES WITH READ LOCK release the
//!   session's locks first, and its DDL is refused with 1192 while it holds them),
//!   so no one waits while holding metadata locks and waits here cannot deadlock;
//! - metadata locks come before the lock manager's: LOCK TABLES and FLUSH TABLES
//!   WITH READ LOCK take theirs first, DDL before its own lock-manager lock (TRUNCATE,
//!   rebuilds). Other transactions never wait here, so a wait in the lock manager
//!   never closes a cycle through this registry;
//! - at most [`METADATA_LOCK_HOLDS_MAX`] holds at once (1206 past it).
//!
//! A wait lasts at most the session's `lock_wait_timeout` (MySQL's metadata lock
//! timeout; the lock manager's waits use `innodb_lock_wait_timeout`), then fails the
//! statement with 1205, as MySQL's does. It checks the statement's interrupt every
//! [`LOCK_WAIT_INTERRUPT_CHECK_MS`], as lock-manager waits do, so KILL QUERY, a
//! client that went away and `max_execution_time` end it (1317, 3024).
//!
//! Where Tarn departs from MySQL: a waiting X request does not hold back later S
//! requests (MySQL's pending exclusive locks go first), so a stream of LOCK TABLES
//! can keep a DDL waiting until its timeout; and DDL takes no lock on the tables
//! its foreign keys reference.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};
use sqlparser::ast;
use tarn_common::limits::LOCK_WAIT_INTERRUPT_CHECK_MS;
use tarn_common::{Error, Result, StatementInterrupt};

use crate::bind::Binder;
use crate::limits::METADATA_LOCK_HOLDS_MAX;
use crate::session::Session;

/// What a metadata lock is on. Names are lowercased: two spellings of one name
/// conflict (at worst needlessly, under `lower_case_table_names = 0`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Name {
    /// Everything: FLUSH TABLES WITH READ LOCK against every DDL.
    Global,
    Database(String),
    /// A table or view: (database, name).
    Table(String, String),
}

impl Name {
    fn database(db: &str) -> Name {
        Name::Database(db.to_lowercase())
    }

    fn table(db: &str, table: &str) -> Name {
        Name::Table(db.to_lowercase(), table.to_lowercase())
    }
}

/// How a name is held (see the module docs' table).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    IntentionExclusive,
    Shared,
    Exclusive,
}

impl Mode {
    fn compatible(self, other: Mode) -> bool {
        matches!(
            (self, other),
            (Mode::IntentionExclusive, Mode::IntentionExclusive) | (Mode::Shared, Mode::Shared)
        )
    }
}

#[derive(Default)]
struct Table {
    /// Each name's holds: (owner connection id, mode), one per granted request.
    held: HashMap<Name, Vec<(u64, Mode)>>,
    /// The holds in `held`, all names together.
    holds: usize,
}

impl Table {
    fn grantable(&self, owner: u64, requests: &[(Name, Mode)]) -> bool {
        requests.iter().all(|(name, mode)| {
            self.held.get(name).is_none_or(|holds| {
                holds
                    .iter()
                    .all(|&(holder, held)| holder == owner || held.compatible(*mode))
            })
        })
    }
}

/// The server's metadata locks (one per engine).
#[derive(Default)]
pub struct MetadataLocks {
    table: Mutex<Table>,
    released: Condvar,
}

/// Metadata locks one owner holds; dropping it releases them.
pub(crate) struct MetadataGuard {
    locks: Arc<MetadataLocks>,
    owner: u64,
    requests: Vec<(Name, Mode)>,
}

impl Drop for MetadataGuard {
    fn drop(&mut self) {
        if self.requests.is_empty() {
            return;
        }
        let mut guard = self.locks.table.lock();
        let table = &mut *guard;
        for (name, mode) in &self.requests {
            let Some(holds) = table.held.get_mut(name) else {
                debug_assert!(false, "a held metadata lock has no entry");
                continue;
            };
            if let Some(position) = holds.iter().position(|h| *h == (self.owner, *mode)) {
                holds.swap_remove(position);
                table.holds -= 1;
            }
            if holds.is_empty() {
                table.held.remove(name);
            }
        }
        drop(guard);
        self.locks.released.notify_all();
    }
}

impl MetadataLocks {
    pub fn new() -> MetadataLocks {
        MetadataLocks::default()
    }

    /// Grants `owner` every one of `requests` at once, waiting while another owner
    /// holds a conflicting lock on any of them: for at most `timeout` (then 1205),
    /// ending with the interrupt's error (1317, 3024) if the statement is stopped.
    pub(crate) fn acquire(
        self: &Arc<Self>,
        owner: u64,
        mut requests: Vec<(Name, Mode)>,
        timeout: Duration,
        interrupt: &StatementInterrupt,
    ) -> Result<MetadataGuard> {
        // One request per name: two different modes of one name make X.
        let mut merged: Vec<(Name, Mode)> = Vec::with_capacity(requests.len());
        for (name, mode) in requests.drain(..) {
            match merged.iter_mut().find(|(n, _)| *n == name) {
                Some((_, held)) if *held != mode => *held = Mode::Exclusive,
                Some(_) => {}
                None => merged.push((name, mode)),
            }
        }
        let requests = merged;
        let started = Instant::now();
        let mut announced = false;
        let mut table = self.table.lock();
        loop {
            if table.grantable(owner, &requests) {
                if table.holds + requests.len() > METADATA_LOCK_HOLDS_MAX {
                    return Err(Error::sql(
                        1206,
                        "HY000",
                        "The total number of locks exceeds the lock table size",
                    ));
                }
                for (name, mode) in &requests {
                    table
                        .held
                        .entry(name.clone())
                        .or_default()
                        .push((owner, *mode));
                }
                table.holds += requests.len();
                return Ok(MetadataGuard {
                    locks: self.clone(),
                    owner,
                    requests,
                });
            }
            // An interrupt wins over a timeout that passed at the same time, as in
            // the lock manager.
            if let Some(error) = interrupt.interruption() {
                return Err(error);
            }
            let Some(left) = timeout
                .checked_sub(started.elapsed())
                .filter(|left| !left.is_zero())
            else {
                return Err(Error::LockWaitTimeout);
            };
            if !announced {
                // Once per wait, and not under the table's mutex.
                announced = true;
                parking_lot::MutexGuard::unlocked(
                    &mut table,
                    tarn_common::blocking::about_to_block,
                );
                continue;
            }
            let mut wait = left.min(Duration::from_millis(LOCK_WAIT_INTERRUPT_CHECK_MS));
            if let Some(deadline) = interrupt.deadline() {
                // Wake at the statement's deadline, not at the next look after it.
                wait = wait.min(deadline.saturating_duration_since(Instant::now()));
            }
            self.released.wait_for(&mut table, wait);
        }
    }
}

/// Takes `requests` for `session`, bounded by its `lock_wait_timeout` and ended by
/// its statement's interrupt.
fn acquire(session: &Session, requests: Vec<(Name, Mode)>) -> Result<MetadataGuard> {
    let timeout = Duration::from_secs(session.variables().get_u64("lock_wait_timeout"));
    session.engine().metadata_locks.acquire(
        session.connection_id(),
        requests,
        timeout,
        &session.interrupt(),
    )
}

/// What DDL of `db`.`table` takes: X on the table, IX on its database and globally.
fn ddl_of(requests: &mut Vec<(Name, Mode)>, db: &str, table: &str) {
    requests.push((Name::Global, Mode::IntentionExclusive));
    requests.push((Name::database(db), Mode::IntentionExclusive));
    requests.push((Name::table(db, table), Mode::Exclusive));
}

/// LOCK TABLES of `tables` (database, name; no temporary tables): S on each, IX on
/// their databases. The caller takes the lock manager's locks after.
pub(crate) fn lock_tables(session: &Session, tables: &[(String, String)]) -> Result<MetadataGuard> {
    let mut requests = Vec::with_capacity(tables.len() * 2);
    for (db, table) in tables {
        requests.push((Name::database(db), Mode::IntentionExclusive));
        requests.push((Name::table(db, table), Mode::Shared));
    }
    acquire(session, requests)
}

/// FLUSH TABLES WITH READ LOCK: the global S lock, which waits for DDL under way and
/// holds off every DDL to come. The caller takes the lock manager's locks after.
pub(crate) fn global_read_lock(session: &Session) -> Result<MetadataGuard> {
    acquire(session, vec![(Name::Global, Mode::Shared)])
}

/// The locks of DDL that changes the tables `db`.`table` (OPTIMIZE TABLE's rebuild).
pub(crate) fn ddl_of_table(session: &Session, db: &str, table: &str) -> Result<MetadataGuard> {
    let mut requests = Vec::with_capacity(3);
    ddl_of(&mut requests, db, table);
    acquire(session, requests)
}

/// The locks a DDL statement holds while it runs (see the module docs), or `None`
/// for a statement that needs none: one on temporary tables only, or one that is not
/// DDL Tarn runs. Called after the implicit commit, before the statement looks at
/// the catalog.
pub(crate) fn for_statement(
    session: &Session,
    statement: &ast::Statement,
) -> Result<Option<MetadataGuard>> {
    use ast::Statement as S;
    if crate::temporary::keeps_transaction(statement) {
        return Ok(None);
    }
    let mut requests = Vec::new();
    let mut table = |name: &ast::ObjectName| -> Result<()> {
        let (db, table) = Binder::new(session).table_ref(name)?;
        if !session.is_temporary(&db, &table) {
            ddl_of(&mut requests, &db, &table);
        }
        Ok(())
    };
    let mut database = None;
    match statement {
        S::CreateDatabase { db_name, .. }
        | S::CreateSchema {
            schema_name: ast::SchemaName::Simple(db_name),
            ..
        } => database = Some(db_name),
        S::Drop {
            object_type: ast::ObjectType::Database | ast::ObjectType::Schema,
            names,
            ..
        } => {
            let mut databases = Vec::with_capacity(names.len() + 1);
            databases.push((Name::Global, Mode::IntentionExclusive));
            for name in names {
                let db = crate::ddl::database_name(session, name)?;
                databases.push((Name::database(&db), Mode::Exclusive));
            }
            return acquire(session, databases).map(Some);
        }
        S::Drop {
            object_type: ast::ObjectType::Table | ast::ObjectType::View,
            names,
            ..
        } => names.iter().try_for_each(&mut table)?,
        S::Drop {
            object_type: ast::ObjectType::Index,
            table: Some(on),
            ..
        } => table(on)?,
        S::CreateTable(create) => table(&create.name)?,
        S::CreateIndex(create) => table(&create.table_name)?,
        S::CreateView(view) => table(&view.name)?,
        S::AlterTable(alter) => {
            table(&alter.name)?;
            for op in &alter.operations {
                if let ast::AlterTableOperation::RenameTable {
                    table_name:
                        ast::RenameTableNameKind::As(target) | ast::RenameTableNameKind::To(target),
                } = op
                {
                    table(target)?;
                }
            }
        }
        S::Truncate(truncate) => truncate
            .table_names
            .iter()
            .try_for_each(|target| table(&target.name))?,
        S::RenameTable(renames) => {
            for rename in renames {
                table(&rename.old_name)?;
                table(&rename.new_name)?;
            }
        }
        _ => {}
    }
    if let Some(name) = database {
        let db = crate::ddl::database_name(session, name)?;
        requests.push((Name::Global, Mode::IntentionExclusive));
        requests.push((Name::database(&db), Mode::Exclusive));
    }
    if requests.is_empty() {
        return Ok(None);
    }
    acquire(session, requests).map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn locks() -> Arc<MetadataLocks> {
        Arc::new(MetadataLocks::new())
    }

    fn short() -> Duration {
        Duration::from_millis(30)
    }

    #[test]
    fn shared_holds_keep_exclusive_ones_off_and_a_release_lets_them_in() {
        let locks = locks();
        let interrupt = StatementInterrupt::new();
        let t = || vec![(Name::table("D", "T"), Mode::Shared)];
        let reader = locks.acquire(1, t(), short(), &interrupt).unwrap();
        let other_reader = locks.acquire(2, t(), short(), &interrupt).unwrap();
        drop(other_reader);
        // The owner's own holds never block it.
        let own = locks
            .acquire(
                1,
                vec![(Name::table("d", "t"), Mode::Exclusive)],
                short(),
                &interrupt,
            )
            .unwrap();
        drop(own);
        let ddl = || vec![(Name::table("d", "t"), Mode::Exclusive)];
        let e = locks.acquire(3, ddl(), short(), &interrupt).err().unwrap();
        assert_eq!(e.mysql_code(), 1205);
        // Another table is free.
        locks
            .acquire(
                3,
                vec![(Name::table("d", "u"), Mode::Exclusive)],
                short(),
                &interrupt,
            )
            .unwrap();
        drop(reader);
        let held = locks.acquire(3, ddl(), short(), &interrupt).unwrap();
        assert_eq!(locks.table.lock().holds, 1);
        drop(held);
        assert_eq!(locks.table.lock().holds, 0);
        assert!(locks.table.lock().held.is_empty());
    }

    #[test]
    fn the_global_read_lock_holds_off_every_ddl_but_not_another_reader() {
        let locks = locks();
        let interrupt = StatementInterrupt::new();
        let global_read = || vec![(Name::Global, Mode::Shared)];
        let ftwrl = locks
            .acquire(1, global_read(), short(), &interrupt)
            .unwrap();
        let second = locks
            .acquire(2, global_read(), short(), &interrupt)
            .unwrap();
        let mut create = Vec::new();
        ddl_of(&mut create, "d", "new");
        let e = locks.acquire(3, create.clone(), short(), &interrupt).err();
        assert_eq!(e.unwrap().mysql_code(), 1205);
        drop(ftwrl);
        drop(second);
        let ddl = locks
            .acquire(3, create.clone(), short(), &interrupt)
            .unwrap();
        // DDL under way holds off a global read lock, but not other DDL's IX.
        let e = locks.acquire(1, global_read(), short(), &interrupt).err();
        assert_eq!(e.unwrap().mysql_code(), 1205);
        let mut other = Vec::new();
        ddl_of(&mut other, "d", "other");
        locks.acquire(4, other, short(), &interrupt).unwrap();
        drop(ddl);
    }

    #[test]
    fn a_request_is_granted_whole_or_not_at_all() {
        let locks = locks();
        let interrupt = StatementInterrupt::new();
        let _u = locks
            .acquire(
                1,
                vec![(Name::table("d", "u"), Mode::Shared)],
                short(),
                &interrupt,
            )
            .unwrap();
        let both = vec![
            (Name::table("d", "t"), Mode::Exclusive),
            (Name::table("d", "u"), Mode::Exclusive),
        ];
        assert!(locks.acquire(2, both, short(), &interrupt).is_err());
        // Nothing of the failed request stayed: t is free.
        locks
            .acquire(
                3,
                vec![(Name::table("d", "t"), Mode::Exclusive)],
                short(),
                &interrupt,
            )
            .unwrap();
    }

    #[test]
    fn a_waiting_request_ends_on_kill_long_before_its_timeout() {
        let locks = locks();
        let held = locks
            .acquire(
                1,
                vec![(Name::Global, Mode::Shared)],
                short(),
                &StatementInterrupt::new(),
            )
            .unwrap();
        let interrupt = Arc::new(StatementInterrupt::new());
        let killer = {
            let interrupt = interrupt.clone();
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(100));
                interrupt.kill();
            })
        };
        let started = Instant::now();
        let request = vec![(Name::Global, Mode::IntentionExclusive)];
        let e = locks
            .acquire(2, request, Duration::from_secs(60), &interrupt)
            .err()
            .unwrap();
        killer.join().unwrap();
        assert_eq!(e.mysql_code(), 1317);
        assert!(started.elapsed() < Duration::from_secs(10));
        drop(held);
    }

    #[test]
    fn a_waiter_is_granted_when_the_holder_lets_go() {
        let locks = locks();
        let interrupt = StatementInterrupt::new();
        let held = locks
            .acquire(
                1,
                vec![(Name::database("d"), Mode::IntentionExclusive)],
                short(),
                &interrupt,
            )
            .unwrap();
        let releaser = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(100));
            drop(held);
        });
        let drop_database = vec![(Name::database("D"), Mode::Exclusive)];
        locks
            .acquire(2, drop_database, Duration::from_secs(60), &interrupt)
            .unwrap();
        releaser.join().unwrap();
    }
}
