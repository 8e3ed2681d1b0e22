//! `mysql.general_log` and `mysql.slow_log`: MySQL's log tables, kept empty.
//!
//! MySQL writes its general and slow query logs to these tables when
//! `log_output=TABLE`. Tarn writes no query log to tables, but clients expect the
//! tables to be there: `mysqldump --all-databases` (MariaDB's `mariadb-dump` too)
//! reads their structure for every dump of the `mysql` database and fails without
//! them, and monitoring tools select from them. So the first open of a data
//! directory without them creates them, with MySQL 8's columns, as ordinary empty
//! tables (a hidden row id stands in for CSV's lack of a key).
//!
//! Invariant: the tables are created only when missing, so one a user dropped comes
//! back at the next start and one a user recreated (a dump's
//! `CREATE TABLE IF NOT EXISTS`) is kept as it is.

use tarn_catalog::{Storage, TableDef};
use tarn_common::{Error, Result};
use tarn_row::types::{Collation, Column, ColumnType};

use crate::accounts::SYSTEM_DATABASE;

/// Creates whichever of the two log tables is missing (`accounts::bootstrap` has
/// created the `mysql` database).
pub(crate) fn bootstrap(storage: &Storage) -> Result<()> {
    let tables = storage.tables(SYSTEM_DATABASE)?;
    for def in [general_log_def(), slow_log_def()] {
        if tables.iter().any(|t| t.eq_ignore_ascii_case(&def.name)) {
            continue;
        }
        match storage.create_table(SYSTEM_DATABASE, def) {
            Ok(_) | Err(Error::TableExists(_)) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// A `NOT NULL` column.
fn column(name: &str, ty: ColumnType) -> Column {
    Column::new(name, ty, false)
}

/// A `NOT NULL` text column, compared case-insensitively (MySQL's are
/// utf8mb3_general_ci).
fn text(name: &str, ty: ColumnType) -> Column {
    column(name, ty).with_collation(Collation::CaseInsensitive)
}

/// A log table whose first column is the event's time:
/// `timestamp(6) DEFAULT CURRENT_TIMESTAMP(6) ON UPDATE CURRENT_TIMESTAMP(6)`.
fn log_table(name: &str, comment: &str, columns: Vec<Column>) -> TableDef {
    let mut first_only = vec![None; columns.len()];
    first_only[0] = Some("CURRENT_TIMESTAMP(6)".to_string());
    let mut def = TableDef::new(name, columns, &[]);
    def.column_defaults = first_only.clone();
    def.column_on_update = first_only;
    def.comment = comment.to_string();
    def
}

fn general_log_def() -> TableDef {
    let unsigned = true;
    log_table(
        "general_log",
        "General log",
        vec![
            column("event_time", ColumnType::Timestamp { fsp: 6 }),
            text("user_host", ColumnType::MediumText),
            column("thread_id", ColumnType::BigInt { unsigned }),
            column("server_id", ColumnType::Int { unsigned }),
            text("command_type", ColumnType::VarChar { len: 64 }),
            column("argument", ColumnType::MediumBlob),
        ],
    )
}

fn slow_log_def() -> TableDef {
    let (signed, unsigned) = (false, true);
    log_table(
        "slow_log",
        "Slow log",
        vec![
            column("start_time", ColumnType::Timestamp { fsp: 6 }),
            text("user_host", ColumnType::MediumText),
            column("query_time", ColumnType::Time { fsp: 6 }),
            column("lock_time", ColumnType::Time { fsp: 6 }),
            column("rows_sent", ColumnType::Int { unsigned: signed }),
            column("rows_examined", ColumnType::Int { unsigned: signed }),
            text("db", ColumnType::VarChar { len: 512 }),
            column("last_insert_id", ColumnType::Int { unsigned: signed }),
            column("insert_id", ColumnType::Int { unsigned: signed }),
            column("server_id", ColumnType::Int { unsigned }),
            column("sql_text", ColumnType::MediumBlob),
            column("thread_id", ColumnType::BigInt { unsigned }),
        ],
    )
}
