//! Data definition: databases, tables, indexes and views (ALTER TABLE is in
//! [`crate::alter`], which uses the column and index helpers here).
//!
//! Each statement commits the session's open transaction first (the session does
//! that before calling [`execute`]), as MySQL's DDL does, but for CREATE and DROP
//! TEMPORARY TABLE (see [`crate::temporary`], which keeps temporary tables), and
//! then changes the catalog through `Storage`. Column types map as
//! [`crate::ddl_types`] says; DEFAULT expressions are kept as SQL text in the catalog
//! and checked here by binding them once; AUTO_INCREMENT follows MySQL's rules (one
//! per table, an integer column that leads a key). FOREIGN KEY clauses are checked and
//! turned into definitions by [`crate::foreign_keys`], CHECK clauses by
//! [`crate::checks`]; DROP TABLE and TRUNCATE of a referenced parent are refused here
//! (3730, 1701) while `foreign_key_checks` is on.

use sqlparser::ast::{self, ColumnOption, TableConstraint};
use tarn_catalog::catalog::{AutoIncrement, ViewDef};
use tarn_catalog::{IndexDef, TableDef};
use tarn_common::{Error, Result};
use tarn_row::types::Column;
use tarn_row::types::ColumnType::{self, Bit, Enum, Set};

use crate::accounts::Privileges;
use crate::bind::{Binder, object_name};
use crate::parse::Parsed;
use crate::session::{QueryResult, Session};

pub(crate) fn unsupported(what: impl std::fmt::Display) -> Error {
    Error::sql(
        1235,
        "42000",
        format!("This version of Tarn doesn't yet support '{what}'"),
    )
}

/// The collation a `CHARACTER SET cs [COLLATE c]` clause of ALTER DATABASE or ALTER
/// TABLE names, if Tarn can honour it: all text is stored as utf8mb4, so the set
/// must be utf8mb4 (1235 otherwise; 1115 if MySQL does not know it either) and the
/// collation one of utf8mb4's in [`crate::sysvars::COLLATIONS`] (1273 if unknown,
/// 1253 if of another set). No set and no collation is utf8mb4's default.
pub(crate) fn utf8mb4_collation(
    charset: Option<&str>,
    collation: Option<&str>,
) -> Result<&'static str> {
    use crate::sysvars::{COLLATIONS, canonical_charset, canonical_collation, default_collation};
    if let Some(name) = charset {
        match canonical_charset(name) {
            Some("utf8mb4") => {}
            Some(other) => {
                return Err(unsupported(format!(
                    "CHARACTER SET {other} (Tarn stores text as utf8mb4)"
                )));
            }
            None if crate::sysvars::MYSQL_CHARSETS
                .contains(&name.to_ascii_lowercase().as_str()) =>
            {
                return Err(unsupported(format!(
                    "CHARACTER SET {name} (Tarn stores text as utf8mb4)"
                )));
            }
            None => {
                return Err(Error::sql(
                    1115,
                    "42000",
                    format!("Unknown character set: '{name}'"),
                ));
            }
        }
    }
    let Some(name) = collation else {
        return Ok(default_collation("utf8mb4").expect("utf8mb4 has a default collation"));
    };
    let Some(canonical) = canonical_collation(name) else {
        let lower = name.to_ascii_lowercase();
        let set = lower.split('_').next().unwrap_or("");
        if set != "utf8mb4" && crate::sysvars::MYSQL_CHARSETS.contains(&set) {
            return Err(unsupported(format!(
                "COLLATE {name} (Tarn stores text as utf8mb4)"
            )));
        }
        return Err(Error::sql(
            1273,
            "HY000",
            format!("Unknown collation: '{name}'"),
        ));
    };
    let set = COLLATIONS
        .iter()
        .find(|c| c.0 == canonical)
        .map_or("", |c| c.1);
    if set != "utf8mb4" {
        return Err(if charset.is_some() {
            Error::sql(
                1253,
                "42000",
                format!("COLLATION '{canonical}' is not valid for CHARACTER SET 'utf8mb4'"),
            )
        } else {
            unsupported(format!("COLLATE {canonical} (Tarn stores text as utf8mb4)"))
        });
    }
    Ok(canonical)
}

/// `ALTER {DATABASE | SCHEMA} [d] ..` ([`crate::parse::Statement::AlterDatabase`]):
/// checks the database and the options and changes nothing, as every database's
/// text is utf8mb4 already.
pub(crate) fn alter_database(
    session: &mut Session,
    name: Option<&str>,
    charset: Option<&str>,
    collation: Option<&str>,
    read_only: bool,
) -> Result<QueryResult> {
    let db = match name {
        Some(name) => crate::bind::BindContext::normalize_table_name(session, name),
        None => session
            .database()
            .map(str::to_string)
            .ok_or_else(|| Error::sql(1046, "3D000", "No database selected"))?,
    };
    if crate::temporary::is_hidden_database(&db)
        || !session.engine().storage().databases().contains(&db)
    {
        return Err(Error::UnknownDatabase(db));
    }
    if read_only {
        return Err(unsupported("READ ONLY databases"));
    }
    utf8mb4_collation(charset, collation)?;
    Ok(QueryResult::ok(0))
}

/// Runs a DDL (or other non-query) statement.
pub fn execute(
    session: &mut Session,
    statement: &ast::Statement,
    parsed: &Parsed,
) -> Result<QueryResult> {
    use ast::Statement as S;
    match statement {
        S::CreateDatabase {
            db_name,
            if_not_exists,
            ..
        }
        | S::CreateSchema {
            schema_name: ast::SchemaName::Simple(db_name),
            if_not_exists,
            ..
        } => {
            let name = database_name(session, db_name)?;
            match session.engine().storage().create_database(&name) {
                Err(Error::DatabaseExists(_)) if *if_not_exists => {
                    session.add_warning(
                        "Note",
                        1007,
                        format!("Can't create database '{name}'; database exists"),
                    );
                    Ok(QueryResult::ok(0))
                }
                Err(e) => Err(e),
                Ok(()) => Ok(QueryResult::ok(1)),
            }
        }
        S::Drop {
            object_type,
            if_exists,
            names,
            table,
            temporary,
            ..
        } => drop(
            session,
            *object_type,
            *if_exists,
            *temporary,
            names,
            table.as_ref(),
        ),
        S::CreateTable(create) => create_table(session, create),
        S::CreateIndex(create) => {
            let (db, table) = Binder::new(session).table_ref(&create.table_name)?;
            let name = create
                .name
                .as_ref()
                .map(|n| object_name(n).pop().unwrap_or_default());
            let t = crate::bind::BindContext::table(session, &db, &table)?;
            let parts = index_key_parts(&t.def().columns, &create.columns)?;
            let name = name.unwrap_or_else(|| default_index_name(t.def(), &parts.columns));
            session.engine().storage().create_index(
                &session.storage_database(&db, &table),
                &table,
                parts.index(&name, create.unique),
            )?;
            Ok(QueryResult::ok(0))
        }
        S::AlterTable(alter) => crate::alter::alter_table(session, alter),
        S::CreateView(view) => {
            let (db, name) = Binder::new(session).table_ref(&view.name)?;
            // The query must bind now (unknown tables and columns are errors here),
            // and may not use a temporary table.
            session.take_temporary_used();
            let mut plan = Binder::new(session).bind_statement_query(&view.query)?;
            if let Some(table) = session.take_temporary_used() {
                return Err(crate::temporary::view_uses_temporary(&table));
            }
            let columns: Vec<String> = view.columns.iter().map(|c| c.name.value.clone()).collect();
            if !columns.is_empty() && columns.len() != plan.width() {
                return Err(Error::sql(
                    1353,
                    "HY000",
                    format!(
                        "In definition of view '{name}', SELECT list and column names list have different column counts"
                    ),
                ));
            }
            let _ = &mut plan;
            let sql = view.query.to_string();
            session.engine().storage().create_view(
                &db,
                ViewDef {
                    name,
                    sql: view_sql(&sql, &columns),
                    columns,
                },
                view.or_replace,
            )?;
            Ok(QueryResult::ok(0))
        }
        S::Truncate(truncate) => {
            for target in &truncate.table_names {
                let (db, table) = Binder::new(session).table_ref(&target.name)?;
                let storage_db = session.storage_database(&db, &table);
                if session.variables().hot().foreign_key_checks {
                    let storage = session.engine().storage();
                    if let Some(child) =
                        crate::foreign_keys::first_reference(storage, &storage_db, &table, false)
                    {
                        return Err(Error::sql(
                            1701,
                            "42000",
                            format!(
                                "Cannot truncate a table referenced in a foreign key constraint \
                                 (`{}`.`{}`, CONSTRAINT `{}`)",
                                child.db, child.table, child.fk.name
                            ),
                        ));
                    }
                }
                session
                    .engine()
                    .storage()
                    .truncate_table(&storage_db, &table)?;
            }
            Ok(QueryResult::ok(0))
        }
        S::RenameTable(renames) => {
            for r in renames {
                let (db, old) = Binder::new(session).table_ref(&r.old_name)?;
                let (new_db, new) = Binder::new(session).table_ref(&r.new_name)?;
                if session.is_temporary(&db, &old) {
                    return Err(crate::temporary::unsupported("RENAME TABLE"));
                }
                crate::checks::check_rename(session, &db, &old, &new_db, &new)?;
                session
                    .engine()
                    .storage()
                    .rename_table(&db, &old, &new_db, &new)?;
            }
            Ok(QueryResult::ok(0))
        }
        _ => {
            let _ = parsed;
            Err(unsupported(
                statement
                    .to_string()
                    .split_whitespace()
                    .take(3)
                    .collect::<Vec<_>>()
                    .join(" "),
            ))
        }
    }
}

/// The privileges a DDL statement needs, checked before it changes anything: CREATE
/// and DROP on the database or table, INDEX for indexes, ALTER for ALTER TABLE,
/// DROP for TRUNCATE; RENAME needs ALTER and DROP on the old name and CREATE and
/// INSERT on the new one. Dropping or creating an account table also needs global
/// CREATE USER; no one may alter, truncate, rename or re-index them, or drop the
/// `mysql` database.
pub(crate) fn check_privileges(session: &Session, statement: &ast::Statement) -> Result<()> {
    use ast::Statement as S;
    let table = |name: &ast::ObjectName, needed: Privileges| -> Result<()> {
        let (db, table) = Binder::new(session).table_ref(name)?;
        session.check_table(needed, &db, &table)
    };
    // What makes or drops a base table or view of a name: checked as for the base
    // table even where the session has a temporary table of that name (which
    // `check_table` lets through).
    let base_table = |name: &ast::ObjectName, needed: Privileges| -> Result<()> {
        let (db, table) = Binder::new(session).table_ref(name)?;
        session.check_base_table(needed, &db, &table)
    };
    let structural = |name: &ast::ObjectName| -> Result<()> {
        let (db, table) = Binder::new(session).table_ref(name)?;
        protect_account_table(&db, &table)
    };
    // Dropping or creating an account table is managing accounts (see `accounts.rs`).
    let account_table_replaced = |name: &ast::ObjectName| -> Result<()> {
        let (db, table) = Binder::new(session).table_ref(name)?;
        if crate::accounts::is_account_table(&db, &table) {
            session.require_global(Privileges::CREATE_USER, "CREATE USER")?;
        }
        Ok(())
    };
    match statement {
        S::CreateDatabase { db_name, .. }
        | S::CreateSchema {
            schema_name: ast::SchemaName::Simple(db_name),
            ..
        } => session.check_database(Privileges::CREATE, &database_name(session, db_name)?),
        // DROP TEMPORARY TABLE touches only the session's own tables, which need no
        // privileges (MySQL checks none).
        S::Drop {
            object_type: ast::ObjectType::Table,
            temporary: true,
            ..
        } => Ok(()),
        S::Drop {
            object_type,
            names,
            table: on_table,
            ..
        } => match object_type {
            ast::ObjectType::Database | ast::ObjectType::Schema => names.iter().try_for_each(|n| {
                let db = database_name(session, n)?;
                if db == crate::accounts::SYSTEM_DATABASE {
                    return Err(Error::sql(
                        3552,
                        "HY000",
                        "Access to system schema 'mysql' is rejected.",
                    ));
                }
                session.check_database(Privileges::DROP, &db)
            }),
            ast::ObjectType::Table => names.iter().try_for_each(|n| {
                account_table_replaced(n)?;
                table(n, Privileges::DROP)
            }),
            ast::ObjectType::View => names.iter().try_for_each(|n| {
                structural(n)?;
                base_table(n, Privileges::DROP)
            }),
            ast::ObjectType::Index => match on_table {
                Some(t) => {
                    structural(t)?;
                    table(t, Privileges::INDEX)
                }
                None => Ok(()),
            },
            _ => Ok(()),
        },
        S::CreateTable(create) => {
            if create.temporary {
                table(&create.name, Privileges::CREATE)?;
            } else {
                account_table_replaced(&create.name)?;
                base_table(&create.name, Privileges::CREATE)?;
            }
            if let Some(
                ast::CreateTableLikeKind::Parenthesized(like)
                | ast::CreateTableLikeKind::Plain(like),
            ) = &create.like
            {
                table(&like.name, Privileges::SELECT)?;
            }
            Ok(())
        }
        S::CreateIndex(create) => {
            structural(&create.table_name)?;
            table(&create.table_name, Privileges::INDEX)
        }
        S::AlterTable(alter) => {
            structural(&alter.name)?;
            table(&alter.name, Privileges::ALTER)?;
            for op in &alter.operations {
                if let ast::AlterTableOperation::RenameTable { table_name } = op {
                    let target = match table_name {
                        ast::RenameTableNameKind::As(n) | ast::RenameTableNameKind::To(n) => n,
                    };
                    structural(target)?;
                    table(&alter.name, Privileges::DROP)?;
                    base_table(target, Privileges::CREATE.union(Privileges::INSERT))?;
                }
            }
            Ok(())
        }
        S::CreateView(view) => {
            structural(&view.name)?;
            let mut needed = Privileges::CREATE;
            if view.or_replace {
                needed = needed.union(Privileges::DROP);
            }
            base_table(&view.name, needed)
        }
        S::Truncate(truncate) => truncate.table_names.iter().try_for_each(|t| {
            structural(&t.name)?;
            table(&t.name, Privileges::DROP)
        }),
        S::RenameTable(renames) => renames.iter().try_for_each(|r| {
            structural(&r.old_name)?;
            structural(&r.new_name)?;
            table(&r.old_name, Privileges::ALTER.union(Privileges::DROP))?;
            base_table(&r.new_name, Privileges::CREATE.union(Privileges::INSERT))
        }),
        _ => Ok(()),
    }
}

/// The account tables' definitions are fixed: reshaping them would lock every
/// account out (MySQL's 3554). (Dropping and creating them again is allowed: see
/// `accounts.rs`.)
fn protect_account_table(db: &str, table: &str) -> Result<()> {
    if crate::accounts::is_account_table(db, table) {
        return Err(Error::sql(
            3554,
            "HY000",
            format!("Access to system table '{db}.{table}' is rejected."),
        ));
    }
    Ok(())
}

/// A view's stored SELECT text; an explicit column list renames the columns.
fn view_sql(sql: &str, columns: &[String]) -> String {
    if columns.is_empty() {
        return sql.to_string();
    }
    let names: Vec<String> = columns
        .iter()
        .map(|c| format!("`{}`", c.replace('`', "``")))
        .collect();
    format!("SELECT * FROM ({sql}) AS `__view` ({})", names.join(", "))
}

pub(crate) fn database_name(session: &Session, name: &ast::ObjectName) -> Result<String> {
    let name = object_name(name).join(".");
    let name = crate::bind::BindContext::normalize_table_name(session, &name);
    // The hidden databases of temporary tables are Tarn's own (`temporary.rs`).
    if crate::temporary::is_hidden_database(&name) {
        return Err(Error::sql(
            1102,
            "42000",
            format!("Incorrect database name '{name}'"),
        ));
    }
    Ok(name)
}

fn drop(
    session: &mut Session,
    object_type: ast::ObjectType,
    if_exists: bool,
    temporary: bool,
    names: &[ast::ObjectName],
    on_table: Option<&ast::ObjectName>,
) -> Result<QueryResult> {
    let storage = session.engine().storage().clone();
    match object_type {
        ast::ObjectType::Database | ast::ObjectType::Schema => {
            for n in names {
                let name = database_name(session, n)?;
                if session.variables().hot().foreign_key_checks {
                    // A table of another database referencing one of this one.
                    for table in storage.tables(&name).unwrap_or_default() {
                        let referencing = storage.foreign_keys_referencing(&name, &table);
                        let outside = referencing.iter().find(|c| c.db != name);
                        if let Some(child) = outside {
                            return Err(referenced_table(&table, child));
                        }
                    }
                }
                match storage.drop_database(&name) {
                    Err(Error::UnknownDatabase(_)) if if_exists => session.add_warning(
                        "Note",
                        1008,
                        format!("Can't drop database '{name}'; database doesn't exist"),
                    ),
                    Err(Error::UnknownDatabase(name)) => {
                        return Err(Error::sql(
                            1008,
                            "HY000",
                            format!("Can't drop database '{name}'; database doesn't exist"),
                        ));
                    }
                    Err(e) => return Err(e),
                    Ok(()) => {
                        if session.database() == Some(name.as_str()) {
                            session.set_current_database(None);
                        }
                    }
                }
            }
        }
        ast::ObjectType::Table => {
            let mut missing = Vec::new();
            if session.variables().hot().foreign_key_checks && storage.any_foreign_keys() {
                // A parent may go only with every table that references it (MySQL 8).
                let mut dropped = Vec::new();
                for n in names {
                    let (db, table) = Binder::new(session).table_ref(n)?;
                    if !session.is_temporary(&db, &table) {
                        dropped.push((db, table));
                    }
                }
                for (db, table) in &dropped {
                    let referencing = storage.foreign_keys_referencing(db, table);
                    let outside = referencing
                        .iter()
                        .find(|c| !dropped.contains(&(c.db.clone(), c.table.clone())));
                    if let Some(child) = outside {
                        return Err(referenced_table(table, child));
                    }
                }
            }
            for n in names {
                let (db, table) = Binder::new(session).table_ref(n)?;
                // A temporary table of the name goes first (it hides the base table);
                // DROP TEMPORARY TABLE drops nothing else.
                if crate::temporary::drop(session, &db, &table)? {
                    continue;
                }
                if temporary {
                    missing.push(format!("{db}.{table}"));
                    continue;
                }
                match storage.drop_table(&db, &table) {
                    Err(Error::UnknownTable(_)) | Err(Error::UnknownDatabase(_)) => {
                        missing.push(format!("{db}.{table}"))
                    }
                    Err(e) => return Err(e),
                    Ok(()) => {}
                }
            }
            if !missing.is_empty() && !if_exists {
                return Err(Error::sql(
                    1051,
                    "42S02",
                    format!("Unknown table '{}'", missing.join(",")),
                ));
            }
            // IF EXISTS: a note for each table that was not there.
            for name in missing {
                session.add_warning("Note", 1051, format!("Unknown table '{name}'"));
            }
        }
        ast::ObjectType::View => {
            for n in names {
                let (db, view) = Binder::new(session).table_ref(n)?;
                storage.drop_view(&db, &view, if_exists)?;
            }
        }
        ast::ObjectType::Index => {
            let table =
                on_table.ok_or_else(|| Error::sql(1064, "42000", "DROP INDEX needs ON table"))?;
            let (db, table) = Binder::new(session).table_ref(table)?;
            let storage_db = session.storage_database(&db, &table);
            for n in names {
                let name = object_name(n).pop().unwrap_or_default();
                if let Ok(old) = storage.table(&storage_db, &table) {
                    let mut new = old.def().clone();
                    new.indexes.retain(|i| !i.name.eq_ignore_ascii_case(&name));
                    crate::foreign_keys::check_index_drop(&storage, &storage_db, old.def(), &new)?;
                }
                storage.drop_index(&storage_db, &table, &name)?;
            }
        }
        other => return Err(unsupported(format!("DROP {other}"))),
    }
    Ok(QueryResult::ok(0))
}

/// ER_FK_CANNOT_DROP_PARENT (3730).
fn referenced_table(table: &str, child: &tarn_catalog::ChildForeignKey) -> Error {
    Error::sql(
        3730,
        "HY000",
        format!(
            "Cannot drop table '{table}' referenced by a foreign key constraint '{}' on table \
             '{}'.",
            child.fk.name, child.table
        ),
    )
}

/// The index name MySQL gives an unnamed index: its first column's name (with a
/// suffix if taken).
fn default_index_name(def: &TableDef, columns: &[usize]) -> String {
    let base = def.columns[columns[0]].name.clone();
    let taken = |n: &str| def.indexes.iter().any(|i| i.name.eq_ignore_ascii_case(n));
    if !taken(&base) {
        return base;
    }
    (2..)
        .map(|i| format!("{base}_{i}"))
        .find(|n| !taken(n))
        .expect("a free name exists")
}

/// The columns of a PRIMARY KEY (positions): whole columns only, so that a
/// TEXT or BLOB column is 1170 and a prefix (`col(10)`), which Tarn does not take in
/// a primary key, is 1235.
pub(crate) fn index_columns(columns: &[Column], list: &[ast::IndexColumn]) -> Result<Vec<usize>> {
    let parts = index_key_parts(columns, list)?;
    if let Some(part) = parts.prefix_lens.iter().position(|&n| n > 0) {
        return Err(unsupported(format!(
            "index key prefix {} in a PRIMARY KEY",
            list[part].column.expr
        )));
    }
    Ok(parts.columns)
}

/// The key parts of a secondary index: column positions and, one per column, MySQL's
/// key prefix lengths (0 for a whole column; all 0 when no part is a prefix).
pub(crate) struct KeyParts {
    pub(crate) columns: Vec<usize>,
    pub(crate) prefix_lens: Vec<u32>,
}

impl KeyParts {
    /// The index `name` on these key parts.
    pub(crate) fn index(self, name: &str, unique: bool) -> IndexDef {
        IndexDef::new(name, &self.columns, unique).with_prefix_lens(self.prefix_lens)
    }
}

/// The key parts of an index as written: `col` or `col(N)` (a prefix of N characters
/// of a text column, N bytes of a binary one), checked as MySQL 8 checks them:
/// 1072 for an unknown column, 3152 for JSON, 1391 for N = 0, 1089 for a prefix of a
/// column that is not a string or N beyond the column's length, 1071 for a prefix
/// longer than a key may be, and 1170 for a TEXT or BLOB column without a prefix. A
/// prefix as long as a CHAR, VARCHAR, BINARY or VARBINARY column is the whole column,
/// as MySQL keeps it.
pub(crate) fn index_key_parts(columns: &[Column], list: &[ast::IndexColumn]) -> Result<KeyParts> {
    let mut out = KeyParts {
        columns: Vec::new(),
        prefix_lens: Vec::new(),
    };
    for c in list {
        let (name, prefix_len) = match &c.column.expr {
            ast::Expr::Identifier(i) => (i.value.clone(), None),
            ast::Expr::Function(f) => key_prefix_part(f)?,
            other => return Err(unsupported(format!("index on expression {other}"))),
        };
        let position = columns
            .iter()
            .position(|col| col.name.eq_ignore_ascii_case(&name))
            .ok_or_else(|| {
                Error::sql(
                    1072,
                    "42000",
                    format!("Key column '{name}' doesn't exist in table"),
                )
            })?;
        let column = &columns[position];
        check_json_key(column)?;
        let prefix_len = match prefix_len {
            Some(len) => checked_prefix_len(column, len)?,
            None => 0,
        };
        if column.ty.is_lob() && prefix_len == 0 {
            return Err(Error::sql(
                1170,
                "42000",
                format!(
                    "BLOB/TEXT column '{}' used in key specification without a key length",
                    column.name
                ),
            ));
        }
        out.columns.push(position);
        out.prefix_lens.push(prefix_len);
    }
    Ok(out)
}

/// The column name and prefix length of a key part written `col(N)`.
fn key_prefix_part(f: &ast::Function) -> Result<(String, Option<u64>)> {
    let not_prefix = || unsupported(format!("index on expression {f}"));
    let [ast::ObjectNamePart::Identifier(name)] = f.name.0.as_slice() else {
        return Err(not_prefix());
    };
    let ast::FunctionArguments::List(list) = &f.args else {
        return Err(not_prefix());
    };
    let [ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(ast::Expr::Value(value)))] =
        list.args.as_slice()
    else {
        return Err(not_prefix());
    };
    let ast::Value::Number(text, _) = &value.value else {
        return Err(not_prefix());
    };
    // A length past u32 is past every column's length: 1089 below.
    let len = text.parse::<u64>().map_err(|_| not_prefix())?;
    Ok((name.value.clone(), Some(len)))
}

/// A prefix of `len` on `column`, as the catalog keeps it: 0 when it is the whole
/// column, else `len`; or MySQL's error.
fn checked_prefix_len(column: &Column, len: u64) -> Result<u32> {
    let ty = column.ty;
    if len == 0 {
        return Err(Error::sql(
            1391,
            "HY000",
            format!("Key part '{}' length cannot be 0", column.name),
        ));
    }
    let wrong = || {
        Error::sql(
            1089,
            "HY000",
            "Incorrect prefix key; the used key part isn't a string, the used length is longer \
             than the key part, or the storage engine doesn't support unique prefix keys",
        )
    };
    let column_len = match ty {
        ColumnType::Char { len } | ColumnType::VarChar { len } => Some(u64::from(len)),
        ColumnType::Binary { len_bytes } | ColumnType::VarBinary { len_bytes } => {
            Some(u64::from(len_bytes))
        }
        _ if ty.is_lob() => None,
        _ => return Err(wrong()),
    };
    if column_len.is_some_and(|column_len| len > column_len) {
        return Err(wrong());
    }
    // utf8mb4: up to 4 bytes a character.
    let len_bytes = if ty.is_text() { len * 4 } else { len };
    let key_max_bytes = tarn_row::limits::KEY_LEN_MAX_BYTES;
    if len_bytes > key_max_bytes as u64 {
        return Err(Error::sql(
            1071,
            "42000",
            format!("Specified key was too long; max key length is {key_max_bytes} bytes"),
        ));
    }
    if column_len == Some(len) {
        return Ok(0);
    }
    Ok(len as u32)
}

/// A JSON column cannot be in an index key: ER_JSON_USED_AS_KEY (3152), as MySQL
/// (which indexes JSON only through generated columns).
pub(crate) fn check_json_key(column: &Column) -> Result<()> {
    if column.ty == tarn_row::ColumnType::Json {
        return Err(Error::sql(
            3152,
            "42000",
            format!(
                "JSON column '{}' supports indexing only via generated columns on a specified JSON path.",
                column.name
            ),
        ));
    }
    Ok(())
}

/// A column definition: the catalog column, its DEFAULT text, and its inline key
/// flags (PRIMARY KEY, UNIQUE, AUTO_INCREMENT).
pub(crate) struct ColumnSpec {
    pub(crate) column: Column,
    pub(crate) default: Option<String>,
    /// `ON UPDATE CURRENT_TIMESTAMP[(fsp)]`, in that form.
    pub(crate) on_update: Option<String>,
    /// The COMMENT, empty for none.
    pub(crate) comment: String,
    pub(crate) primary: bool,
    pub(crate) unique: bool,
    pub(crate) auto_increment: bool,
    /// Its CHECK clauses (`[CONSTRAINT [name]] CHECK (..)`), which may name only
    /// this column.
    pub(crate) checks: Vec<crate::checks::CheckSpec>,
    /// `[GENERATED ALWAYS] AS (expr) [VIRTUAL | STORED]` ([`crate::generated`]).
    pub(crate) generated: Option<tarn_catalog::GeneratedColumn>,
    /// Declared `tinyint(1)`, BOOL or BOOLEAN ([`crate::ddl_types::is_tinyint1`]).
    pub(crate) tinyint1: bool,
}

/// A COMMENT of a column (`table` false) or a table, checked against MySQL's
/// lengths in characters: 1629 or 1628 beyond them (strict mode's errors).
pub(crate) fn checked_comment(name: &str, comment: &str, table: bool) -> Result<String> {
    let (max, code, what) = if table {
        (crate::limits::TABLE_COMMENT_CHARS_MAX, 1628, "table")
    } else {
        (crate::limits::COLUMN_COMMENT_CHARS_MAX, 1629, "field")
    };
    if comment.chars().count() > max {
        return Err(Error::sql(
            code,
            "HY000",
            format!("Comment for {what} '{name}' is too long (max = {max})"),
        ));
    }
    Ok(comment.to_string())
}

/// The table option `COMMENT [=] 'text'` of CREATE TABLE, checked; empty if none.
fn table_option_comment(create: &ast::CreateTable, name: &str) -> Result<String> {
    let options = match &create.table_options {
        ast::CreateTableOptions::Plain(o)
        | ast::CreateTableOptions::With(o)
        | ast::CreateTableOptions::Options(o) => o.as_slice(),
        _ => &[],
    };
    let written = create
        .comment
        .iter()
        .chain(options.iter().filter_map(|o| match o {
            ast::SqlOption::Comment(c) => Some(c),
            _ => None,
        }));
    match written.last() {
        Some(ast::CommentDef::WithEq(text) | ast::CommentDef::WithoutEq(text)) => {
            checked_comment(name, text, true)
        }
        None => Ok(String::new()),
    }
}

/// The binary string type a text type becomes with `CHARACTER SET binary` (a binary
/// character has one byte, so lengths carry over); other types are left as they are.
fn binary_string_of(ty: tarn_row::ColumnType) -> tarn_row::ColumnType {
    use tarn_row::ColumnType as C;
    match ty {
        C::Char { len } => C::Binary { len_bytes: len },
        C::VarChar { len } => C::VarBinary { len_bytes: len },
        other => match other.text_size() {
            Some(size) => C::blob_of_size(size),
            None => other,
        },
    }
}

/// The text a column's literal DEFAULT is kept (and shown) as. A TIME or YEAR
/// default is checked and kept as MySQL 8 shows it, quoted in the column's form
/// (`'-01:02:03.50'` in a TIME(2), `'1970'` for `70`); one that is not a value of the
/// column is 1067. A DATETIME or TIMESTAMP default that names the current time is
/// kept as `CURRENT_TIMESTAMP[(fsp)]` ([`current_timestamp_form`]). Other defaults
/// are kept as written.
pub(crate) fn default_text(
    session: &mut Session,
    ty: tarn_row::ColumnType,
    column: &str,
    e: &ast::Expr,
) -> Result<String> {
    use tarn_row::ColumnType as C;
    if matches!(ty, C::DateTime { .. } | C::Timestamp { .. }) {
        if let Some(form) = current_timestamp_form(e) {
            return Ok(form);
        }
    }
    let literal = matches!(
        e,
        ast::Expr::Value(_) | ast::Expr::TypedString(_) | ast::Expr::UnaryOp { .. }
    );
    if !matches!(ty, C::Time { .. } | C::Year) || !literal {
        return Ok(e.to_string());
    }
    let v = session.eval_constant(e)?;
    if v.is_null() {
        return Ok(e.to_string());
    }
    let stored = crate::scalar::cast::to_column(v, ty, column).map_err(|_| {
        Error::sql(
            1067,
            "42000",
            format!("Invalid default value for '{column}'"),
        )
    })?;
    let shown = crate::scalar::cast::to_text_as(
        &stored,
        crate::types::SqlType::of_column(ty, tarn_row::Collation::Binary),
    )
    .unwrap_or_default();
    Ok(format!("'{}'", String::from_utf8_lossy(&shown)))
}

/// `CURRENT_TIMESTAMP` or `CURRENT_TIMESTAMP(fsp)` if `e` is one of its synonyms
/// (`NOW()`, `CURRENT_TIMESTAMP()`, `LOCALTIME`, `LOCALTIMESTAMP(6)`, in any case),
/// else None. MySQL 8 keeps a DATETIME or TIMESTAMP column's DEFAULT and ON UPDATE
/// in this form, and SHOW CREATE TABLE, SHOW COLUMNS and information_schema show it
/// so (an ORM that reflects a table reads it back); a precision of 0 is dropped. A
/// parenthesised expression default, `DEFAULT (NOW())`, is not a synonym: it stays
/// an expression, as in MySQL.
pub(crate) fn current_timestamp_form(e: &ast::Expr) -> Option<String> {
    let text: String = e
        .to_string()
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect::<String>()
        .to_ascii_uppercase();
    let (name, args) = match text.split_once('(') {
        Some((name, rest)) => (name, Some(rest.strip_suffix(')')?)),
        None => (text.as_str(), None),
    };
    match (name, args) {
        ("CURRENT_TIMESTAMP" | "LOCALTIME" | "LOCALTIMESTAMP", _) | ("NOW", Some(_)) => {}
        _ => return None,
    }
    match args.unwrap_or("") {
        "" | "0" => Some("CURRENT_TIMESTAMP".to_string()),
        fsp if fsp.len() == 1 && fsp.as_bytes()[0].is_ascii_digit() => {
            Some(format!("CURRENT_TIMESTAMP({fsp})"))
        }
        _ => None,
    }
}

pub(crate) fn column_spec(session: &mut Session, def: &ast::ColumnDef) -> Result<ColumnSpec> {
    let (mut ty, mut collation) = crate::ddl_types::column_type(&def.name.value, &def.data_type)?;
    let mut nullable = true;
    let mut default = None;
    let mut on_update = None;
    let mut comment = String::new();
    let mut default_expr = None;
    let mut primary = false;
    let mut unique = false;
    let mut auto_increment = false;
    let mut checks = Vec::new();
    let mut generated = None;
    for option in &def.options {
        match &option.option {
            ColumnOption::Generated {
                generation_expr: Some(e),
                generation_expr_mode,
                sequence_options: None,
                ..
            } => {
                generated = Some(crate::generated::spec(
                    &def.name.value,
                    e,
                    *generation_expr_mode,
                )?);
            }
            ColumnOption::Null => nullable = true,
            ColumnOption::NotNull => nullable = false,
            ColumnOption::Default(e) => {
                // The default must be a constant that binds (CURRENT_TIMESTAMP, a
                // literal, an expression of literals).
                Binder::new(session).bind_constant(e)?;
                default = Some(default_text(session, ty, &def.name.value, e)?);
                default_expr = Some(e);
            }
            ColumnOption::PrimaryKey(_) => {
                primary = true;
                nullable = false;
            }
            ColumnOption::Unique(_) => unique = true,
            ColumnOption::Collation(name) => {
                let name = name.to_string().to_ascii_lowercase();
                collation = if name.ends_with("_bin") || name == "binary" {
                    tarn_row::types::Collation::Binary
                } else {
                    tarn_row::types::Collation::CaseInsensitive
                };
            }
            // `CHARACTER SET binary` makes text a binary string, as in MySQL:
            // VARCHAR(n) is VARBINARY(n), CHAR(n) BINARY(n), TEXT BLOB.
            ColumnOption::CharacterSet(name) if name.to_string().eq_ignore_ascii_case("binary") => {
                ty = binary_string_of(ty);
                // An ENUM or SET stays one, with members matched bytewise.
                collation = tarn_row::types::Collation::Binary;
            }
            ColumnOption::CharacterSet(_) => {}
            ColumnOption::Comment(text) => {
                comment = checked_comment(&def.name.value, text, false)?;
            }
            // Only the current time (MySQL's grammar has nothing else: 1064), and only
            // on a DATETIME or TIMESTAMP column (1294).
            ColumnOption::OnUpdate(e) => {
                let form = current_timestamp_form(e).ok_or_else(|| {
                    Error::sql(
                        1064,
                        "42000",
                        format!(
                            "You have an error in your SQL syntax; check the manual that \
                             corresponds to your MySQL server version for the right syntax to \
                             use near 'ON UPDATE {e}'"
                        ),
                    )
                })?;
                if !matches!(
                    ty,
                    tarn_row::ColumnType::DateTime { .. } | tarn_row::ColumnType::Timestamp { .. }
                ) {
                    return Err(Error::sql(
                        1294,
                        "HY000",
                        format!("Invalid ON UPDATE clause for '{}' column", def.name.value),
                    ));
                }
                on_update = Some(form);
            }
            // A column-level REFERENCES is parsed and ignored, as InnoDB ignores it
            // (only the table-level FOREIGN KEY clause makes a constraint).
            ColumnOption::ForeignKey(_) => {}
            // A column-level CHECK: kept with the table-level ones (`crate::checks`).
            // ORMs write it: Django's PositiveIntegerField is
            // `integer UNSIGNED NOT NULL CHECK (`col` >= 0)`.
            ColumnOption::Check(c) => checks.push(crate::checks::CheckSpec::column_level(
                option.name.as_ref(),
                c,
                &def.name.value,
            )),
            ColumnOption::DialectSpecific(tokens) => {
                let text: String = tokens
                    .iter()
                    .map(|t| t.to_string())
                    .collect::<Vec<_>>()
                    .join(" ");
                if text.eq_ignore_ascii_case("AUTO_INCREMENT") {
                    auto_increment = true;
                } else {
                    return Err(unsupported(format!("column option {text}")));
                }
            }
            other => return Err(unsupported(format!("column option {other}"))),
        }
    }
    if !ty.has_collation() {
        collation = tarn_row::types::Collation::Binary;
    }
    crate::ddl_types::check_duplicate_members(&def.name.value, ty, collation)?;
    let column = Column::new(def.name.value.clone(), ty, nullable).with_collation(collation);
    if let (Some(e), Enum { .. } | Set { .. } | Bit { .. }) = (default_expr, ty) {
        default = Some(default_literal(session, &column, e)?);
    }
    Ok(ColumnSpec {
        column,
        default,
        on_update,
        comment,
        primary,
        unique,
        auto_increment,
        checks,
        generated,
        tinyint1: crate::ddl_types::is_tinyint1(&def.data_type),
    })
}

/// The DEFAULT of an ENUM, SET or BIT column as the catalog keeps it: the value in
/// normal form as a literal (`'member'`, `'a,c'`, `b'101'`, `NULL`), which is how
/// MySQL shows it in SHOW CREATE TABLE and information_schema. A value the column
/// cannot hold is 1067, as in MySQL.
pub(crate) fn default_literal(
    session: &mut Session,
    column: &Column,
    e: &ast::Expr,
) -> Result<String> {
    let invalid = || {
        Error::sql(
            1067,
            "42000",
            format!("Invalid default value for '{}'", column.name),
        )
    };
    let v = session.eval_constant(e).map_err(|_| invalid())?;
    if v.is_null() {
        return if column.nullable {
            Ok("NULL".into())
        } else {
            Err(invalid())
        };
    }
    let v = crate::scalar::cast::to_column_at(v, column.ty, column.collation, &column.name, 1)
        .map_err(|_| invalid())?;
    Ok(match v {
        tarn_row::Value::UInt(n) => format!("b'{n:b}'"),
        other => {
            let text =
                String::from_utf8_lossy(&crate::scalar::cast::to_text(&other).unwrap_or_default())
                    .replace('\\', "\\\\")
                    .replace('\'', "''");
            format!("'{text}'")
        }
    })
}

fn create_table(session: &mut Session, create: &ast::CreateTable) -> Result<QueryResult> {
    let (db, name) = Binder::new(session).table_ref(&create.name)?;
    // CREATE TABLE ... LIKE: the same definition, empty.
    if let Some(like) = &create.like {
        let source = match like {
            ast::CreateTableLikeKind::Parenthesized(l) | ast::CreateTableLikeKind::Plain(l) => {
                &l.name
            }
        };
        let (sdb, sname) = Binder::new(session).table_ref(source)?;
        let source = crate::bind::BindContext::table(session, &sdb, &sname)?;
        let mut def = source.def().clone();
        def.name = name.clone();
        def.file_id = 0;
        for i in &mut def.indexes {
            i.file_id = 0;
        }
        if let Some(a) = &mut def.auto_increment {
            a.start = 1;
        }
        // As MySQL: LIKE copies indexes but not foreign keys, and CHECK constraints
        // under names generated for the new table, in the order of their names.
        def.foreign_keys.clear();
        def.checks
            .sort_by_cached_key(|c| (c.name.to_lowercase(), c.name.clone()));
        for (i, check) in def.checks.iter_mut().enumerate() {
            check.name = format!(
                "{name}{}{}",
                tarn_catalog::catalog::GENERATED_CHECK_INFIX,
                i + 1
            );
        }
        if !create.temporary {
            let taken = def
                .checks
                .iter()
                .find(|c| crate::checks::name_taken(session, &db, &name, &c.name));
            if let Some(c) = taken {
                return Err(crate::checks::duplicate_name(&c.name));
            }
        }
        return finish_create(session, &db, def, create);
    }
    if let Some(query) = &create.query {
        return crate::create_select::create_table_select(session, &db, &name, create, query);
    }
    let def = table_def(session, create, &db, &name, Vec::new())?;
    finish_create(session, &db, def, create)
}

/// The definition CREATE TABLE `create` gives table `name`: its declared columns,
/// then `selected` (the columns of CREATE TABLE ... SELECT that are not declared,
/// each with whether it is a `tinyint(1)`), then its keys.
pub(crate) fn table_def(
    session: &mut Session,
    create: &ast::CreateTable,
    db: &str,
    name: &str,
    selected: Vec<(Column, bool)>,
) -> Result<TableDef> {
    let mut columns = Vec::new();
    let mut defaults = Vec::new();
    let mut on_update = Vec::new();
    let mut comments = Vec::new();
    let mut primary: Vec<usize> = Vec::new();
    let mut indexes: Vec<IndexDef> = Vec::new();
    let mut auto = None;
    let mut unique_columns = Vec::new();
    let mut foreign_keys = Vec::new();
    let mut checks = Vec::new();
    let mut generated = Vec::new();
    let mut tinyint1 = Vec::new();
    for (i, c) in create.columns.iter().enumerate() {
        let mut spec = column_spec(session, c)?;
        generated.push(spec.generated.take());
        checks.append(&mut spec.checks);
        if columns
            .iter()
            .any(|x: &Column| x.name.eq_ignore_ascii_case(&spec.column.name))
        {
            return Err(Error::sql(
                1060,
                "42S21",
                format!("Duplicate column name '{}'", spec.column.name),
            ));
        }
        if spec.primary || spec.unique {
            check_json_key(&spec.column)?;
        }
        if spec.primary {
            if !primary.is_empty() {
                return Err(Error::sql(1068, "42000", "Multiple primary key defined"));
            }
            primary.push(i);
        }
        if spec.unique {
            unique_columns.push(i);
        }
        if spec.auto_increment {
            if auto.is_some() {
                return Err(Error::sql(
                    1075,
                    "42000",
                    "Incorrect table definition; there can be only one auto column and it must be defined as a key",
                ));
            }
            auto = Some(i);
        }
        defaults.push(spec.default);
        on_update.push(spec.on_update);
        comments.push(spec.comment);
        tinyint1.push(spec.tinyint1);
        columns.push(spec.column);
    }
    for (column, is_tinyint1) in selected {
        if !columns
            .iter()
            .any(|c| c.name.eq_ignore_ascii_case(&column.name))
        {
            defaults.push(None);
            on_update.push(None);
            comments.push(String::new());
            generated.push(None);
            tinyint1.push(is_tinyint1);
            columns.push(column);
        }
    }
    for constraint in &create.constraints {
        match constraint {
            TableConstraint::PrimaryKey(pk) => {
                if !primary.is_empty() {
                    return Err(Error::sql(1068, "42000", "Multiple primary key defined"));
                }
                primary = index_columns(&columns, &pk.columns)?;
                for &c in &primary {
                    columns[c].nullable = false;
                }
            }
            TableConstraint::Unique(u) => {
                let parts = index_key_parts(&columns, &u.columns)?;
                let name = u
                    .name
                    .as_ref()
                    .or(u.index_name.as_ref())
                    .map(|n| n.value.clone());
                let index = named_index(&columns, &indexes, name, parts.columns, true);
                indexes.push(index.with_prefix_lens(parts.prefix_lens));
            }
            TableConstraint::Index(ix) => {
                let parts = index_key_parts(&columns, &ix.columns)?;
                let name = ix.name.as_ref().map(|n| n.value.clone());
                let index = named_index(&columns, &indexes, name, parts.columns, false);
                indexes.push(index.with_prefix_lens(parts.prefix_lens));
            }
            TableConstraint::ForeignKey(fk) => foreign_keys.push(fk),
            TableConstraint::Check(c) => checks.push(crate::checks::CheckSpec::table_level(c)),
            other => return Err(unsupported(format!("table constraint {other}"))),
        }
    }
    for c in unique_columns {
        indexes.push(named_index(&columns, &indexes, None, vec![c], true));
    }
    let mut def = TableDef::new(name, columns, &primary);
    for i in indexes {
        def = def.with_index(i);
    }
    if defaults.iter().any(Option::is_some) {
        def = def.with_defaults(defaults);
    }
    if on_update.iter().any(Option::is_some) {
        def.column_on_update = on_update;
    }
    if comments.iter().any(|c| !c.is_empty()) {
        def.column_comments = comments;
    }
    if generated.iter().any(Option::is_some) {
        def.column_generated = generated;
    }
    if tinyint1.contains(&true) {
        def.column_tinyint1 = tinyint1;
    }
    def.comment = table_option_comment(create, name)?;
    if let Some(column) = auto {
        def.auto_increment = Some(AutoIncrement {
            column,
            start: table_option_auto_increment(create)?.unwrap_or(1),
        });
    }
    crate::generated::check_definition(session, &def)?;
    let checks_db = (!create.temporary).then_some(db);
    crate::checks::add_checks(session, checks_db, &mut def, checks)?;
    // InnoDB's temporary tables have no foreign keys (MySQL ignores them there too).
    if !create.temporary && !foreign_keys.is_empty() {
        let exists = session.engine().storage().table(db, name).is_ok();
        if !exists {
            crate::foreign_keys::add_constraints(session, db, &mut def, &foreign_keys)?;
        }
    }
    Ok(def)
}

fn table_option_auto_increment(create: &ast::CreateTable) -> Result<Option<u64>> {
    let options = match &create.table_options {
        ast::CreateTableOptions::Plain(o)
        | ast::CreateTableOptions::With(o)
        | ast::CreateTableOptions::Options(o) => o,
        _ => return Ok(None),
    };
    for option in options {
        if let ast::SqlOption::KeyValue { key, value } = option {
            if key.value.eq_ignore_ascii_case("auto_increment") {
                let text = value.to_string();
                return text.parse::<u64>().map(Some).map_err(|_| {
                    Error::sql(
                        1064,
                        "42000",
                        format!("Incorrect AUTO_INCREMENT value '{text}'"),
                    )
                });
            }
        }
    }
    Ok(None)
}

pub(crate) fn named_index(
    columns: &[Column],
    existing: &[IndexDef],
    name: Option<String>,
    cols: Vec<usize>,
    unique: bool,
) -> IndexDef {
    let name = name.unwrap_or_else(|| {
        let base = columns[cols[0]].name.clone();
        let taken = |n: &str| existing.iter().any(|i| i.name.eq_ignore_ascii_case(n));
        if !taken(&base) {
            base
        } else {
            (2..)
                .map(|i| format!("{base}_{i}"))
                .find(|n| !taken(n))
                .expect("a free name")
        }
    });
    IndexDef::new(&name, &cols, unique)
}

pub(crate) fn finish_create(
    session: &mut Session,
    db: &str,
    def: TableDef,
    create: &ast::CreateTable,
) -> Result<QueryResult> {
    if create.temporary {
        return crate::temporary::create(session, db, def, create.if_not_exists);
    }
    crate::accounts::check_account_table_def(db, &def)?;
    let if_not_exists = create.if_not_exists;
    let name = def.name.clone();
    match session.engine().storage().create_table(db, def) {
        Err(Error::TableExists(_)) if if_not_exists => {
            session.add_warning("Note", 1050, format!("Table '{name}' already exists"));
            Ok(QueryResult::ok(0))
        }
        Err(e) => Err(e),
        Ok(_) => Ok(QueryResult::ok(0)),
    }
}
