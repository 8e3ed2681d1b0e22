//! SHOW statements and system tables, on top of [`crate::sysviews`].
//!
//! Each SHOW builds its rows with a `sysviews` function, then applies its `LIKE`
//! pattern (to the first column, as MySQL does) or its `WHERE` condition (bound over
//! the result's columns, like a query over a derived table).

use std::sync::Arc;

use sqlparser::ast;
use tarn_common::{Error, Result};
use tarn_row::Value;
use tarn_row::types::Collation;

use crate::bind::{BindContext, Binder, Scope, object_name};
use crate::parse::{ShowFilter, Statement, StoredObjectKind};
use crate::plan::{OutputColumn, Plan};
use crate::scalar::like::like;
use crate::session::{QueryResult, Session};
use crate::sysviews::{self, Rows, ViewContext};
use crate::types::SqlType;

fn unsupported(what: impl std::fmt::Display) -> Error {
    Error::sql(
        1235,
        "42000",
        format!("This version of Tarn doesn't yet support '{what}'"),
    )
}

/// A system table's columns and rows, as the binder takes them.
pub type SystemTableRows = (Vec<OutputColumn>, Vec<Vec<Value>>);

fn output_columns(rows: &Rows) -> Vec<OutputColumn> {
    rows.0
        .iter()
        .map(|c| OutputColumn::new(c.name.clone(), c.ty, true))
        .collect()
}

/// Runs `f` with the session's view of the engine.
fn with_view<T>(session: &Session, f: impl FnOnce(&ViewContext) -> T) -> T {
    with_view_describing(session, true, f)
}

/// [`with_view`]; `describe_views`: whether views' columns are found by binding their
/// queries (not while binding one: a view over information_schema.COLUMNS would
/// otherwise describe itself without end).
fn with_view_describing<T>(
    session: &Session,
    describe_views: bool,
    f: impl FnOnce(&ViewContext) -> T,
) -> T {
    let engine = session.engine();
    let globals = engine.globals.read();
    let processes = engine.processes();
    let view_columns = |db: &str, name: &str| -> Result<Vec<sysviews::Column>> {
        if !describe_views {
            return Err(Error::sql(
                1356,
                "HY000",
                format!("View '{db}.{name}' is being described"),
            ));
        }
        view_columns(session, db, name)
    };
    let cx = ViewContext {
        storage: engine.storage(),
        session_vars: session.variables(),
        global_vars: &globals,
        processes: &processes,
        current_database: session.database(),
        server: engine.server_status(),
        view_columns: &view_columns,
        grants: session.visible_grants(),
    };
    f(&cx)
}

/// The columns of view `db.name`: its query bound with `db` as the current database.
fn view_columns(session: &Session, db: &str, name: &str) -> Result<Vec<sysviews::Column>> {
    let invalid = || {
        Error::sql(
            1356,
            "HY000",
            format!("View '{db}.{name}' references invalid table(s) or column(s) or function(s)"),
        )
    };
    let view = session
        .engine()
        .storage()
        .view(db, name)?
        .ok_or_else(invalid)?;
    let parsed = crate::parse::parse_one(&view.sql)?;
    let crate::parse::Statement::Sql(statement) = parsed.statement else {
        return Err(invalid());
    };
    let ast::Statement::Query(query) = *statement else {
        return Err(invalid());
    };
    let cx = InDatabase { session, db };
    let plan = Binder::new(&cx)
        .bind_statement_query(&query)
        .map_err(|_| invalid())?;
    Ok(plan
        .columns()
        .iter()
        .map(|c| sysviews::Column {
            name: c.name.clone(),
            ty: c.ty,
        })
        .collect())
}

/// The session's binding context with another current database (a view's), and
/// system tables that do not describe views.
struct InDatabase<'a> {
    session: &'a Session,
    db: &'a str,
}

impl BindContext for InDatabase<'_> {
    fn current_database(&self) -> Option<String> {
        Some(self.db.to_string())
    }

    // A view's query reads base tables only, never a temporary table.
    fn table(&self, db: &str, name: &str) -> Result<Arc<tarn_catalog::Table>> {
        self.session.base_table(db, name)
    }

    fn view(&self, db: &str, name: &str) -> Result<Option<String>> {
        self.session.base_view(db, name)
    }

    fn system_table(&self, db: &str, name: &str) -> Option<Result<SystemTableRows>> {
        system_table_describing(self.session, false, db, name)
    }

    fn system_variable(&self, name: &str, global: bool) -> Result<Value> {
        self.session.system_variable(name, global)
    }

    fn user_variable(&self, name: &str) -> Value {
        self.session.user_variable(name)
    }

    fn session_function(&self, name: &str) -> Option<Value> {
        self.session.session_function(name)
    }

    fn normalize_table_name(&self, name: &str) -> String {
        self.session.normalize_table_name(name)
    }
}

/// information_schema and performance_schema tables for the binder.
pub fn system_table(session: &Session, db: &str, name: &str) -> Option<Result<SystemTableRows>> {
    system_table_describing(session, true, db, name)
}

fn system_table_describing(
    session: &Session,
    describe_views: bool,
    db: &str,
    name: &str,
) -> Option<Result<SystemTableRows>> {
    if !crate::session::is_system_database(db) {
        return None;
    }
    let rows = with_view_describing(session, describe_views, |cx| {
        sysviews::system_table(cx, db, name)
    })?;
    Some(rows.map(|rows| (output_columns(&rows), rows.1)))
}

/// Applies a SHOW's LIKE (on the first column) or WHERE.
fn filtered(session: &mut Session, rows: Rows, filter: Option<&ShowFilter>) -> Result<QueryResult> {
    let columns = output_columns(&rows);
    let mut data = rows.1;
    match filter {
        None => {}
        Some(ShowFilter::Like(pattern)) => {
            data.retain(|row| match row.first() {
                Some(Value::Bytes(b)) => {
                    like(b, pattern.as_bytes(), b'\\', Collation::CaseInsensitive)
                }
                _ => false,
            });
        }
        Some(ShowFilter::Where(e)) => {
            let scope = Scope::from_output(&columns);
            let (predicate, _) = Binder::new(session).bind_in_scope(e, &scope)?;
            let plan = Plan::Filter {
                input: Box::new(Plan::Rows {
                    rows: Arc::new(data),
                    columns: columns.clone(),
                }),
                predicate,
            };
            let chunks = session.transact(true, |s, tx| {
                s.with_exec(tx, &[], |cx| crate::exec::collect(&plan, cx))
            })?;
            return Ok(QueryResult::Rows { columns, chunks });
        }
    }
    Ok(QueryResult::rows(columns, data))
}

fn show_filter(options: &ast::ShowStatementOptions) -> Option<ShowFilter> {
    match &options.filter_position {
        Some(ast::ShowStatementFilterPosition::Suffix(f))
        | Some(ast::ShowStatementFilterPosition::Infix(f)) => convert_filter(f),
        None => None,
    }
}

fn convert_filter(f: &ast::ShowStatementFilter) -> Option<ShowFilter> {
    match f {
        ast::ShowStatementFilter::Like(p) | ast::ShowStatementFilter::ILike(p) => {
            Some(ShowFilter::Like(p.clone()))
        }
        ast::ShowStatementFilter::Where(e) => Some(ShowFilter::Where(e.clone())),
        ast::ShowStatementFilter::NoKeyword(p) => Some(ShowFilter::Like(p.clone())),
    }
}

fn show_in_name(options: &ast::ShowStatementOptions) -> Option<Vec<String>> {
    options
        .show_in
        .as_ref()
        .and_then(|s| s.parent_name.as_ref())
        .map(object_name)
}

/// The SHOW forms sqlparser represents.
pub fn show(session: &mut Session, statement: &ast::Statement) -> Result<QueryResult> {
    use ast::Statement as S;
    match statement {
        S::ShowDatabases { show_options, .. } | S::ShowSchemas { show_options, .. } => {
            let rows = with_view(session, sysviews::show_databases);
            filtered(session, rows, show_filter(show_options).as_ref())
        }
        S::ShowTables {
            full, show_options, ..
        } => {
            let db = match show_in_name(show_options) {
                Some(parts) => session.normalize_table_name(&parts.join(".")),
                None => session
                    .database()
                    .map(str::to_string)
                    .ok_or_else(|| Error::sql(1046, "3D000", "No database selected"))?,
            };
            session.check_database_access(&db)?;
            let rows = with_view(session, |cx| sysviews::show_tables(cx, &db, *full))?;
            filtered(session, rows, show_filter(show_options).as_ref())
        }
        S::ShowColumns {
            full, show_options, ..
        } => {
            let parts = show_in_name(show_options)
                .ok_or_else(|| Error::sql(1064, "42000", "SHOW COLUMNS needs FROM table"))?;
            let (db, table) = split_table(session, &parts)?;
            let db = session.storage_database(&db, &table);
            let rows = with_view(session, |cx| sysviews::show_columns(cx, &db, &table, *full))?;
            filtered(session, rows, show_filter(show_options).as_ref())
        }
        S::ExplainTable { table_name, .. } => {
            let (db, table) = split_table(session, &object_name(table_name))?;
            let db = session.storage_database(&db, &table);
            let rows = with_view(session, |cx| sysviews::show_columns(cx, &db, &table, false))?;
            filtered(session, rows, None)
        }
        S::ShowCreate { obj_type, obj_name } => {
            let parts = object_name(obj_name);
            let (db, table) = match obj_type {
                ast::ShowCreateObject::Table | ast::ShowCreateObject::View => {
                    split_table(session, &parts)?
                }
                // Stored programs: no table privilege to check, as none exists.
                _ => table_name_parts(session, &parts)?,
            };
            match obj_type {
                ast::ShowCreateObject::Table => {
                    if session.is_temporary(&db, &table) {
                        return show_create_temporary(session, &db, &table);
                    }
                    if let Some(view) = session.engine().storage().view(&db, &table)? {
                        return Ok(create_view_rows(&view.name, &view.sql));
                    }
                    let rows =
                        with_view(session, |cx| sysviews::show_create_table(cx, &db, &table))?;
                    Ok(QueryResult::rows(output_columns(&rows), rows.1))
                }
                ast::ShowCreateObject::View => {
                    let view = session
                        .engine()
                        .storage()
                        .view(&db, &table)?
                        .ok_or_else(|| {
                            Error::sql(1347, "HY000", format!("'{db}.{table}' is not VIEW"))
                        })?;
                    Ok(create_view_rows(&view.name, &view.sql))
                }
                ast::ShowCreateObject::Procedure => Err(stored_object_missing(
                    StoredObjectKind::Procedures,
                    &db,
                    &table,
                    false,
                )),
                ast::ShowCreateObject::Function => Err(stored_object_missing(
                    StoredObjectKind::Functions,
                    &db,
                    &table,
                    false,
                )),
                ast::ShowCreateObject::Trigger => Err(stored_object_missing(
                    StoredObjectKind::Triggers,
                    &db,
                    &table,
                    false,
                )),
                ast::ShowCreateObject::Event => Err(stored_object_missing(
                    StoredObjectKind::Events,
                    &db,
                    &table,
                    false,
                )),
            }
        }
        S::ShowVariables { filter, global, .. } => {
            let rows = if *global {
                sysviews::show_variables(&session.engine().globals.read())
            } else {
                // Every variable `@@x` reads: the session's, then the global-only ones.
                let merged = session
                    .variables()
                    .with_globals(&session.engine().globals.read());
                sysviews::show_variables(&merged)
            };
            filtered(
                session,
                rows,
                filter.as_ref().and_then(convert_filter).as_ref(),
            )
        }
        S::ShowStatus { filter, .. } => {
            let rows = with_view(session, sysviews::show_status);
            filtered(
                session,
                rows,
                filter.as_ref().and_then(convert_filter).as_ref(),
            )
        }
        S::ShowProcessList { full } => {
            let rows = with_view(session, |cx| sysviews::show_processlist(cx, *full));
            filtered(session, rows, None)
        }
        S::ShowCharset(c) => {
            let rows = sysviews::show_charset();
            filtered(
                session,
                rows,
                c.filter.as_ref().and_then(convert_filter).as_ref(),
            )
        }
        S::ShowCollation { filter } => {
            let rows = sysviews::show_collation();
            filtered(
                session,
                rows,
                filter.as_ref().and_then(convert_filter).as_ref(),
            )
        }
        other => Err(unsupported(other)),
    }
}

/// `SHOW CREATE TABLE` of a temporary table: `CREATE TEMPORARY TABLE ..`, as MySQL
/// prints it.
fn show_create_temporary(session: &Session, db: &str, table: &str) -> Result<QueryResult> {
    let storage_db = session.storage_database(db, table);
    let mut rows = with_view(session, |cx| {
        sysviews::show_create_table(cx, &storage_db, table)
    })?;
    for row in &mut rows.1 {
        if let Some(Value::Bytes(sql)) = row.get_mut(1)
            && let Some(rest) = sql.strip_prefix(b"CREATE TABLE ")
        {
            *sql = [b"CREATE TEMPORARY TABLE ".as_slice(), rest].concat();
        }
    }
    Ok(QueryResult::rows(output_columns(&rows), rows.1))
}

fn create_view_rows(name: &str, sql: &str) -> QueryResult {
    let columns = [
        "View",
        "Create View",
        "character_set_client",
        "collation_connection",
    ]
    .iter()
    .map(|n| OutputColumn::new(*n, SqlType::TEXT, false))
    .collect();
    let text = |s: &str| Value::Bytes(s.as_bytes().to_vec());
    QueryResult::rows(
        columns,
        vec![vec![
            text(name),
            text(&format!("CREATE VIEW `{name}` AS {sql}")),
            text("utf8mb4"),
            text("utf8mb4_0900_ai_ci"),
        ]],
    )
}

/// `db.t` or `t` (in the current database).
/// The database and table a SHOW or DESCRIBE names, after checking that the session
/// holds some privilege on the table (MySQL shows a table's definition to anyone who
/// may use it at all; 1142 otherwise).
fn split_table(session: &Session, parts: &[String]) -> Result<(String, String)> {
    let (db, table) = table_name_parts(session, parts)?;
    session.check_table_any(&db, &table)?;
    Ok((db, table))
}

fn table_name_parts(session: &Session, parts: &[String]) -> Result<(String, String)> {
    match parts {
        [t] => Ok((
            session
                .database()
                .map(str::to_string)
                .ok_or_else(|| Error::sql(1046, "3D000", "No database selected"))?,
            session.normalize_table_name(t),
        )),
        [db, t] => Ok((
            session.normalize_table_name(db),
            session.normalize_table_name(t),
        )),
        _ => Err(Error::sql(
            1103,
            "42000",
            format!("Incorrect table name '{}'", parts.join(".")),
        )),
    }
}

/// Tarn's own statement variants that show something.
pub fn special(session: &mut Session, statement: &Statement) -> Result<QueryResult> {
    match statement {
        Statement::ShowTableStatus { database, filter } => {
            let db = match database {
                Some(d) => session.normalize_table_name(d),
                None => session
                    .database()
                    .map(str::to_string)
                    .ok_or_else(|| Error::sql(1046, "3D000", "No database selected"))?,
            };
            session.check_database_access(&db)?;
            let rows = with_view(session, |cx| sysviews::show_table_status(cx, &db))?;
            filtered(session, rows, filter.as_ref())
        }
        Statement::ShowIndex {
            table,
            database,
            filter,
        } => {
            let mut parts: Vec<String> = table.split('.').map(str::to_string).collect();
            if let Some(d) = database {
                parts = vec![d.clone(), parts.pop().unwrap_or_default()];
            }
            let (db, table) = split_table(session, &parts)?;
            let db = session.storage_database(&db, &table);
            let rows = with_view(session, |cx| sysviews::show_index(cx, &db, &table))?;
            filtered(
                session,
                rows,
                filter.clone().map(ShowFilter::Where).as_ref(),
            )
        }
        Statement::ShowWarnings {
            errors_only,
            offset,
            row_count,
        } => {
            let columns = vec![
                OutputColumn::new("Level", SqlType::varchar(7), false),
                OutputColumn::new("Code", SqlType::UInt { bits: 32 }, false),
                OutputColumn::new("Message", SqlType::varchar(512), false),
            ];
            let rows = session
                .warnings()
                .iter()
                .filter(|w| !errors_only || w.level == "Error")
                .skip(*offset as usize)
                .take(row_count.map_or(usize::MAX, |n| n as usize))
                .map(|w| {
                    vec![
                        Value::Bytes(w.level.as_bytes().to_vec()),
                        Value::UInt(w.code as u64),
                        Value::Bytes(w.message.clone().into_bytes()),
                    ]
                })
                .collect();
            Ok(QueryResult::rows(columns, rows))
        }
        Statement::ShowWarningCount { errors_only } => {
            let n = session
                .warnings()
                .iter()
                .filter(|w| !errors_only || w.level == "Error")
                .count();
            let name = if *errors_only {
                "@@session.error_count"
            } else {
                "@@session.warning_count"
            };
            Ok(QueryResult::rows(
                vec![OutputColumn::new(name, SqlType::BIGINT, false)],
                vec![vec![Value::Int(n as i64)]],
            ))
        }
        Statement::ShowEngineStatus { engine } => {
            let status = with_view(session, sysviews::show_engine_status)?;
            let columns = ["Type", "Name", "Status"]
                .iter()
                .map(|n| OutputColumn::new(*n, SqlType::TEXT, false))
                .collect();
            Ok(QueryResult::rows(
                columns,
                vec![vec![
                    Value::Bytes(engine.to_ascii_uppercase().into_bytes()),
                    Value::Bytes(Vec::new()),
                    Value::Bytes(status.into_bytes()),
                ]],
            ))
        }
        Statement::DropStoredObject {
            kind,
            if_exists,
            name,
        } => {
            let (db, name) = table_name_parts(session, &object_name(name))?;
            let missing = stored_object_missing(*kind, &db, &name, true);
            if !*if_exists {
                return Err(missing);
            }
            // MySQL's note for an event is 1305, not the error's 1539.
            let (code, message) = match kind {
                StoredObjectKind::Events => (1305, format!("Event {name} does not exist")),
                _ => (missing.mysql_code(), missing.to_string()),
            };
            session.add_warning("Note", code, message);
            Ok(QueryResult::ok(0))
        }
        Statement::ShowStoredObjects { kind, filter, .. } => {
            let rows = (sysviews::show_stored_objects_columns(*kind), Vec::new());
            filtered(session, rows, filter.as_ref())
        }
        // Tarn writes no binary log: MySQL's answers with `log_bin` off.
        Statement::ShowBinaryLogStatus => {
            let text = |name| OutputColumn::new(name, SqlType::TEXT, false);
            let columns = vec![
                text("File"),
                OutputColumn::new("Position", SqlType::UInt { bits: 64 }, false),
                text("Binlog_Do_DB"),
                text("Binlog_Ignore_DB"),
                text("Executed_Gtid_Set"),
            ];
            Ok(QueryResult::rows(columns, Vec::new()))
        }
        Statement::ShowReplicaStatus { slave } => {
            let columns = sysviews::REPLICA_STATUS_COLUMNS
                .iter()
                .map(|name| {
                    let name = if *slave {
                        sysviews::replica_to_slave_name(name)
                    } else {
                        name.to_string()
                    };
                    OutputColumn::new(name, SqlType::TEXT, true)
                })
                .collect();
            Ok(QueryResult::rows(columns, Vec::new()))
        }
        Statement::ShowBinaryLogs => Err(Error::sql(
            1381,
            "HY000",
            "You are not using binary logging",
        )),
        Statement::ShowEngines => {
            let rows = sysviews::show_engines();
            filtered(session, rows, None)
        }
        Statement::ShowCreateDatabase {
            name,
            if_not_exists,
        } => {
            let db = session.normalize_table_name(name);
            if crate::temporary::is_hidden_database(&db)
                || !session.engine().storage().databases().contains(&db)
            {
                return Err(Error::UnknownDatabase(db));
            }
            let columns = ["Database", "Create Database"]
                .iter()
                .map(|n| OutputColumn::new(*n, SqlType::TEXT, false))
                .collect();
            Ok(QueryResult::rows(
                columns,
                vec![vec![
                    Value::Bytes(db.clone().into_bytes()),
                    // With IF NOT EXISTS the statement says so in a versioned comment,
                    // as MySQL's does: mysqldump --all-databases copies this text into
                    // the dump, which must then restore over `mysql`, which exists.
                    Value::Bytes(
                        format!(
                            "CREATE DATABASE {}{} /*!40100 DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_0900_ai_ci */",
                            if *if_not_exists { "/*!32312 IF NOT EXISTS*/ " } else { "" },
                            sysviews::quote_identifier(&db)
                        )
                        .into_bytes(),
                    ),
                ]],
            ))
        }
        other => Err(unsupported(
            format!("{other:?}")
                .split([' ', '{', '('])
                .next()
                .unwrap_or("statement"),
        )),
    }
}

/// MySQL's error for a stored program `db.name` that does not exist (Tarn has none):
/// 1305 for a procedure or function (named `db.name` by DROP, `name` by SHOW
/// CREATE), 1360 for a trigger, 1539 for an event.
fn stored_object_missing(kind: StoredObjectKind, db: &str, name: &str, dropping: bool) -> Error {
    let routine = |what: &str| {
        let shown = if dropping {
            format!("{db}.{name}")
        } else {
            name.to_string()
        };
        Error::sql(1305, "42000", format!("{what} {shown} does not exist"))
    };
    match kind {
        StoredObjectKind::Procedures => routine("PROCEDURE"),
        StoredObjectKind::Functions => routine("FUNCTION"),
        StoredObjectKind::Triggers => Error::sql(1360, "HY000", "Trigger does not exist"),
        StoredObjectKind::Events => Error::sql(1539, "HY000", format!("Unknown event '{name}'")),
    }
}
