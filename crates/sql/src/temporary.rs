//! Temporary tables: `CREATE TEMPORARY TABLE`, `DROP TEMPORARY TABLE`, and the
//! session's view of them.
//!
//! # Storage
//!
//! A temporary table is an ordinary table of the catalog, so every scan, index and
//! DML path works on it unchanged. It lives in a **hidden database** of its session,
//! one per database the session names it in: `#tarn-temporary#<n>#<db>`, where `n`
//! is a number the engine hands out once per session ([`Engine`]'s
//! `next_temporary_namespace`, never reused while the engine runs, unlike connection
//! ids, which COM_CHANGE_USER keeps). The table keeps the name the user gave it, so
//! its definition, SHOW CREATE TABLE and error messages (`Duplicate entry '1' for
//! key 't.PRIMARY'`) name it as MySQL does, and two sessions' tables of one name
//! never meet.
//!
//! # Invariants
//!
//! 1. **Only its session sees it.** A session maps `db.t` to the hidden database only
//!    for the tables in its own [`TemporaryTables`]. Names of hidden databases are
//!    refused wherever SQL names a database (`Binder::table_ref`, USE, SHOW TABLES
//!    FROM, CREATE / DROP DATABASE: 1049 or 1102) and left out of every listing
//!    (`ViewContext::databases`, so SHOW DATABASES and all of information_schema),
//!    so temporary tables are never listed in SHOW TABLES or
//!    information_schema.TABLES, as in MySQL.
//! 2. **It shadows.** While a session has a temporary `db.t`, its statements that
//!    name `db.t` use it, not a base table or view of that name (MySQL's rule);
//!    `DROP TABLE t` drops it first. A view may not use one (1352), and a view's
//!    query reads base tables even where the session has a temporary table of the
//!    name (`BindContext::base_table`), as in MySQL. Prepared statements bind again
//!    when the session's temporary tables changed since they were bound.
//! 3. **It ends with its session**: [`drop_all`] runs when the session is dropped
//!    (disconnect, KILL, COM_CHANGE_USER's new session replacing it) and on
//!    COM_RESET_CONNECTION. A crash leaves hidden databases behind: the engine drops
//!    every one when it opens ([`drop_leftovers`]), after recovery and before any
//!    session exists. Their rows need no durability, but their redo is ordinary, so
//!    recovery is unchanged.
//! 4. **No implicit commit** for `CREATE TEMPORARY TABLE` and `DROP TEMPORARY TABLE`
//!    (MySQL's rule; other DDL on a temporary table commits, as it does in MySQL). A
//!    transaction that changed a temporary table dropped before it ends rolls back
//!    or purges without it, as it would after a DROP TABLE by another session.
//! 5. **Bounded**: at most [`TEMPORARY_TABLES_PER_SESSION_MAX`] per session.
//!
//! Privileges: creating one needs CREATE on the table's name (Tarn has no separate
//! CREATE TEMPORARY TABLES privilege; CREATE or ALL stands for it); after that, as
//! in MySQL, the session's statements on it are not checked
//! (`Session::check_table`). Its name lends nothing to base objects of that name:
//! creating a base table or view, dropping a view, a RENAME's target and a view's
//! own tables are checked as for the base table (`Session::check_base_table`).
//!
//! Not supported (1235): renaming a temporary table (RENAME TABLE, ALTER TABLE ..
//! RENAME) and CREATE TEMPORARY TABLE .. SELECT (as for base tables).

use std::collections::{BTreeMap, BTreeSet};

use sqlparser::ast;
use tarn_catalog::{Storage, TableDef};
use tarn_common::{Error, Result};

use crate::limits::TEMPORARY_TABLES_PER_SESSION_MAX;
use crate::session::{QueryResult, Session};

/// What every hidden database's name begins with (a `#` cannot start an unquoted
/// MySQL identifier, and these names are refused quoted too).
const DATABASE_PREFIX: &str = "#tarn-temporary#";

/// True for the name of a hidden database of temporary tables.
pub(crate) fn is_hidden_database(name: &str) -> bool {
    name.starts_with(DATABASE_PREFIX)
}

/// One session's temporary tables.
#[derive(Default)]
pub(crate) struct TemporaryTables {
    /// The number in the session's hidden databases' names, taken at its first
    /// temporary table.
    namespace: Option<u64>,
    /// Each temporary table, as (database, table) the user named it.
    tables: BTreeSet<(String, String)>,
    /// The hidden databases created so far, by the database they stand in for.
    databases: BTreeMap<String, String>,
    /// Bumped at each create and drop: a prepared statement bound under another
    /// generation may name a table that now resolves elsewhere, and binds again.
    generation: u64,
}

impl TemporaryTables {
    /// The hidden database that holds temporary table `db.table`, if the session
    /// has one of that name.
    pub(crate) fn database_of(&self, db: &str, table: &str) -> Option<&str> {
        if self.tables.is_empty() || !self.tables.contains(&(db.to_string(), table.to_string())) {
            return None;
        }
        self.databases.get(db).map(String::as_str)
    }

    pub(crate) fn contains(&self, db: &str, table: &str) -> bool {
        self.database_of(db, table).is_some()
    }

    /// Changes whenever the set of temporary tables does.
    pub(crate) fn generation(&self) -> u64 {
        self.generation
    }
}

/// Whether `statement` keeps the session's transaction open: `CREATE TEMPORARY
/// TABLE` and `DROP TEMPORARY TABLE` do not commit it (invariant 4).
pub(crate) fn keeps_transaction(statement: &ast::Statement) -> bool {
    match statement {
        ast::Statement::CreateTable(create) => create.temporary,
        ast::Statement::Drop {
            object_type: ast::ObjectType::Table,
            temporary,
            ..
        } => *temporary,
        _ => false,
    }
}

/// `CREATE TEMPORARY TABLE db.name` with definition `def` (its name is `name`).
pub(crate) fn create(
    session: &mut Session,
    db: &str,
    def: TableDef,
    if_not_exists: bool,
) -> Result<QueryResult> {
    let name = def.name.clone();
    if session.temporary.contains(db, &name) {
        if if_not_exists {
            session.add_warning("Note", 1050, format!("Table '{name}' already exists"));
            return Ok(QueryResult::ok(0));
        }
        return Err(Error::TableExists(name));
    }
    let storage = session.engine().storage().clone();
    if !storage.databases().iter().any(|d| d == db) {
        return Err(Error::UnknownDatabase(db.to_string()));
    }
    if session.temporary.tables.len() >= TEMPORARY_TABLES_PER_SESSION_MAX {
        return Err(Error::OutOfResources(format!(
            "a session may hold at most {TEMPORARY_TABLES_PER_SESSION_MAX} temporary tables"
        )));
    }
    let namespace = match session.temporary.namespace {
        Some(n) => n,
        None => {
            let n = session.engine().next_temporary_namespace();
            session.temporary.namespace = Some(n);
            n
        }
    };
    let hidden = match session.temporary.databases.get(db) {
        Some(hidden) => hidden.clone(),
        None => {
            let hidden = format!("{DATABASE_PREFIX}{namespace}#{db}");
            match storage.create_database(&hidden) {
                Ok(()) | Err(Error::DatabaseExists(_)) => {}
                Err(e) => return Err(e),
            }
            session
                .temporary
                .databases
                .insert(db.to_string(), hidden.clone());
            hidden
        }
    };
    storage.create_table(&hidden, def)?;
    session.temporary.tables.insert((db.to_string(), name));
    session.temporary.generation += 1;
    Ok(QueryResult::ok(0))
}

/// Drops the session's temporary table `db.name`; false if it has none of that name.
pub(crate) fn drop(session: &mut Session, db: &str, name: &str) -> Result<bool> {
    let Some(hidden) = session.temporary.database_of(db, name).map(str::to_string) else {
        return Ok(false);
    };
    match session.engine().storage().drop_table(&hidden, name) {
        Ok(()) | Err(Error::UnknownTable(_)) | Err(Error::UnknownDatabase(_)) => {}
        Err(e) => return Err(e),
    }
    session
        .temporary
        .tables
        .remove(&(db.to_string(), name.to_string()));
    session.temporary.generation += 1;
    Ok(true)
}

/// Drops every temporary table of the session and its hidden databases (the
/// session ends or is reset). A failure is logged: the next start drops what is
/// left.
pub(crate) fn drop_all(session: &mut Session) {
    if session.temporary.databases.is_empty() {
        return;
    }
    session.temporary.tables.clear();
    session.temporary.generation += 1;
    let databases = std::mem::take(&mut session.temporary.databases);
    let storage = session.engine().storage().clone();
    for hidden in databases.values() {
        if let Err(e) = storage.drop_database(hidden) {
            tracing::warn!("dropping the temporary tables in '{hidden}': {e}");
        }
    }
}

/// Drops the hidden databases a crash left behind (invariant 3). Runs when the
/// engine opens, before any session.
pub(crate) fn drop_leftovers(storage: &Storage) {
    for db in storage.databases() {
        if is_hidden_database(&db) {
            match storage.drop_database(&db) {
                Ok(()) => tracing::info!("dropped the temporary tables left in '{db}'"),
                Err(e) => tracing::error!("dropping the temporary tables left in '{db}': {e}"),
            }
        }
    }
}

/// Error 1352: a view may not use a temporary table (it would name another table in
/// every other session).
pub(crate) fn view_uses_temporary(table: &str) -> Error {
    Error::sql(
        1352,
        "HY000",
        format!("View's SELECT refers to a temporary table '{table}'"),
    )
}

/// 1235 for what Tarn does not do with a temporary table.
pub(crate) fn unsupported(what: &str) -> Error {
    Error::sql(
        1235,
        "42000",
        format!("This version of Tarn doesn't yet support '{what} of a temporary table'"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_holds_a_bounded_number_of_temporary_tables() {
        let dir = tempfile::tempdir().expect("a directory");
        let settings = tarn_common::settings::Settings {
            data_dir: dir.path().to_path_buf(),
            ..Default::default()
        };
        let engine = crate::Engine::open(&settings).expect("opens");
        let mut s = engine.session("root", "localhost");
        s.execute("CREATE DATABASE d; USE d; CREATE TEMPORARY TABLE first (a INT)")
            .expect("creates");
        // Filling the bound with real tables would write a megabyte file for each:
        // the session's own list stands in for them.
        for i in 1..TEMPORARY_TABLES_PER_SESSION_MAX {
            s.temporary.tables.insert(("d".into(), format!("fake{i}")));
        }
        let err = s
            .execute("CREATE TEMPORARY TABLE one_more (a INT)")
            .expect_err("over the bound");
        let expected = format!("at most {TEMPORARY_TABLES_PER_SESSION_MAX} temporary tables");
        assert!(err.to_string().contains(&expected), "{err}");
        // Another session has its own allowance; a drop makes room.
        let mut other = engine.session("root", "localhost");
        other
            .execute("CREATE TEMPORARY TABLE d.one_more (a INT)")
            .expect("another session");
        s.execute("DROP TEMPORARY TABLE first; CREATE TEMPORARY TABLE one_more (a INT)")
            .expect("room again");
        s.temporary.tables.retain(|(_, t)| !t.starts_with("fake"));
    }
}
