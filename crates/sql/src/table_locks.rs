//! LOCK TABLES, UNLOCK TABLES and FLUSH TABLES WITH READ LOCK.
//!
//! A session's table locks are whole-table locks in the lock manager, held by a
//! [`TableLockHolder`] of the session's own (`Storage::lock_whole_tables`): READ is
//! a table S lock, WRITE a table X lock, and FLUSH TABLES WITH READ LOCK an S lock on
//! every table there is. Every writer and locking reader holds an intention lock on
//! its table to its transaction's end, so:
//!
//! - taking the locks waits for the other sessions' transactions that wrote (or
//!   locked rows of) the tables to end, up to the session's
//!   `innodb_lock_wait_timeout` (1205);
//! - while they are held, other sessions' writes (and, under WRITE, locking reads)
//!   of those tables wait;
//! - the session also holds metadata locks ([`crate::metadata_locks`], taken before
//!   the lock manager's): S on each table it names, or under FLUSH TABLES WITH READ
//!   LOCK the global S lock; so other sessions' DDL of those tables (DROP, RENAME,
//!   ALTER, TRUNCATE, CREATE / DROP INDEX), or under the global read lock any DDL,
//!   CREATE TABLE and CREATE / DROP DATABASE included, waits up to its
//!   `lock_wait_timeout` (1205), as under MySQL's metadata locks; and taking the
//!   locks waits for DDL under way, so no table is created or replaced between FLUSH
//!   TABLES WITH READ LOCK's list of tables and its locks;
//! - the session's own statements share the holder's locks
//!   (`Transaction::share_locks_of`), so they never wait for them, and the row locks
//!   they take stay until UNLOCK TABLES (harmless: no one else may change the
//!   tables meanwhile).
//!
//! The session itself may not write a table it locked for READ (1099), nor anything
//! under the global read lock (1223), and runs no DDL while it holds table locks
//! (1192), since DDL takes its own exclusive lock and would wait for the session's.
//!
//! Under LOCK TABLES a statement may name only the tables and views locked, the
//! session's temporary tables and the system schemas (1100), so its record locks are
//! all on locked tables, where the holder's table lock covers them: the sharing
//! transactions take none there (`Transaction::lock_record`), and a long restore
//! does not fill the lock table. READ needs SELECT, WRITE also a right to change the
//! table (INSERT, UPDATE or DELETE), and FLUSH TABLES WITH READ LOCK global CREATE
//! USER (Tarn's stand-in for MySQL's RELOAD).
//!
//! Where Tarn departs from MySQL: consistent (non-locking) reads never wait for table
//! locks, as in InnoDB, so another session's plain SELECT reads a WRITE-locked table
//! as of its last commit. A view named in LOCK TABLES is listed (and its name
//! metadata-locked) but its tables are not locked.
//!
//! Invariant: `Session::table_locks` is `Some` exactly while the session holds table
//! locks; every transaction the session begins meanwhile shares its holder, and the
//! holder is dropped (its locks released) by UNLOCK TABLES, START TRANSACTION, a new
//! LOCK TABLES, a reset, or the session's end.

use tarn_catalog::TableLockHolder;
use tarn_common::{Error, Result};

use crate::accounts::Privileges;
use crate::bind::Binder;
use crate::metadata_locks::MetadataGuard;
use crate::session::{QueryResult, Session};
use sqlparser::ast;

/// What a session holds (see the module docs).
pub(crate) struct TableLocks {
    pub(crate) holder: TableLockHolder,
    /// What keeps other sessions' DDL off the tables (or, under the global read
    /// lock, off everything); released after the holder's locks.
    _metadata: MetadataGuard,
    /// LOCK TABLES: each table's (database, name, locked for WRITE).
    tables: Vec<(String, String, bool)>,
    /// FLUSH TABLES WITH READ LOCK.
    global_read: bool,
}

impl TableLocks {
    /// Whether a statement of the session may name `db`.`table`: under LOCK TABLES
    /// only the tables (and views) it locked, and the system schemas (1100).
    pub(crate) fn check_listed(&self, db: &str, table: &str) -> Result<()> {
        let listed = self.global_read
            || crate::sysviews::is_system_database(db)
            || self
                .tables
                .iter()
                .any(|(d, t, _)| d == db && t.eq_ignore_ascii_case(table));
        if listed {
            return Ok(());
        }
        Err(Error::sql(
            1100,
            "HY000",
            format!("Table '{table}' was not locked with LOCK TABLES"),
        ))
    }

    /// Whether the session may use `db`.`table` with privileges `needed`: a write
    /// (INSERT, UPDATE, DELETE) of a READ-locked table is 1099, any write under the
    /// global read lock 1223.
    pub(crate) fn check_access(&self, needed: Privileges, db: &str, table: &str) -> Result<()> {
        let writes = Privileges::INSERT
            .union(Privileges::UPDATE)
            .union(Privileges::DELETE);
        if !needed.intersects(writes) {
            return Ok(());
        }
        if self.global_read {
            return Err(Error::sql(
                1223,
                "HY000",
                "Can't execute the query because you have a conflicting read lock",
            ));
        }
        let read_locked = self
            .tables
            .iter()
            .any(|(d, t, write)| !write && d == db && t.eq_ignore_ascii_case(table));
        if read_locked {
            return Err(Error::sql(
                1099,
                "HY000",
                format!("Table '{table}' was locked with a READ lock and can't be updated"),
            ));
        }
        Ok(())
    }
}

/// The refusal of DDL while the session holds table locks.
pub(crate) fn ddl_refused() -> Error {
    Error::sql(
        1192,
        "HY000",
        "Can't execute the given command because you have active locked tables or an active transaction",
    )
}

/// `LOCK TABLES t {READ | WRITE}, ..`: commits the open transaction, releases the
/// session's table locks, and takes the new ones (all or none).
pub(crate) fn lock_tables(
    session: &mut Session,
    tables: &[(ast::ObjectName, bool)],
) -> Result<QueryResult> {
    session.commit_implicitly()?;
    session.table_locks = None;
    let storage = session.engine().storage().clone();
    let mut names = Vec::new();
    // The tables and views to take metadata locks on (not temporary tables).
    let mut shared = Vec::new();
    let mut locked_tables = Vec::new();
    for (name, write) in tables {
        let (db, table) = Binder::new(session).table_ref(name)?;
        session.check_table(Privileges::SELECT, &db, &table)?;
        if *write {
            // WRITE keeps everyone else from changing the table: it takes a right to
            // change it.
            let may_write = [Privileges::INSERT, Privileges::UPDATE, Privileges::DELETE]
                .into_iter()
                .any(|p| session.check_table(p, &db, &table).is_ok());
            if !may_write {
                session.check_table(Privileges::UPDATE, &db, &table)?;
            }
        }
        let is_view = matches!(storage.view(&db, &table), Ok(Some(_)));
        let temporary = !is_view && {
            crate::bind::BindContext::table(session, &db, &table)?;
            crate::temporary::is_hidden_database(&session.storage_database(&db, &table))
        };
        if !temporary {
            shared.push((db.clone(), table.clone()));
            if !is_view {
                locked_tables.push((db.clone(), table.clone(), *write));
            }
        }
        names.push((db, table, *write));
    }
    // Metadata locks first (waiting for DDL under way), then the tables' handles,
    // which no DDL replaces any more.
    let metadata = crate::metadata_locks::lock_tables(session, &shared)?;
    let handles = locked_tables
        .into_iter()
        .map(|(db, table, write)| Ok((storage.table(&db, &table)?, write)))
        .collect::<Result<Vec<_>>>()?;
    take(session, metadata, &handles, names, false)
}

/// Takes the locks on `handles` for a new holder and makes it the session's, with
/// the metadata locks taken before.
fn take(
    session: &mut Session,
    metadata: MetadataGuard,
    handles: &[(std::sync::Arc<tarn_catalog::Table>, bool)],
    tables: Vec<(String, String, bool)>,
    global_read: bool,
) -> Result<QueryResult> {
    let storage = session.engine().storage().clone();
    let holder = storage.table_lock_holder(session.interrupt());
    storage.lock_whole_tables(&holder, handles)?;
    session.table_locks = Some(TableLocks {
        holder,
        _metadata: metadata,
        tables,
        global_read,
    });
    Ok(QueryResult::ok(0))
}

/// `FLUSH TABLES WITH READ LOCK`: commits the open transaction and read-locks every
/// table of every database.
pub(crate) fn lock_all_for_read(session: &mut Session) -> Result<QueryResult> {
    // It stops every writer: MySQL's RELOAD, for which Tarn asks global CREATE USER
    // (as for SHUTDOWN).
    session.require_global(Privileges::CREATE_USER, "RELOAD")?;
    session.commit_implicitly()?;
    session.table_locks = None;
    // The global read lock first: it waits for DDL under way, and no table is
    // created, dropped or replaced after it, so the list below stays whole.
    let metadata = crate::metadata_locks::global_read_lock(session)?;
    let storage = session.engine().storage().clone();
    let mut handles = Vec::new();
    for db in storage.databases() {
        if crate::temporary::is_hidden_database(&db) {
            continue;
        }
        for table in storage.tables(&db)? {
            handles.push((storage.table(&db, &table)?, false));
        }
    }
    take(session, metadata, &handles, Vec::new(), true)
}

/// `UNLOCK TABLES`: with table locks held, commits the open transaction and
/// releases them (as MySQL does); without, does nothing.
pub(crate) fn unlock_tables(session: &mut Session) -> Result<QueryResult> {
    if session.table_locks.is_some() {
        let committed = session.commit();
        session.table_locks = None;
        committed?;
    }
    Ok(QueryResult::ok(0))
}
