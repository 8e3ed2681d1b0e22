//! Table maintenance statements: `ANALYZE`, `OPTIMIZE`, `CHECK`, `CHECKSUM` and
//! `REPAIR TABLE`, answered as MySQL 8 answers them for InnoDB tables.
//!
//! All but CHECKSUM return MySQL's result set `Table`, `Op`, `Msg_type`, `Msg_text`,
//! one or more rows per table named; a table that fails (it does not exist, a lock
//! wait timed out) gets an `Error` row and a `status` row `Operation failed` while the
//! other tables go on, as in MySQL. What each does:
//!
//! - **ANALYZE**: `Storage::analyze_table` (the statistics the planner reads).
//! - **OPTIMIZE**: what InnoDB does, "recreate + analyze": the table is rebuilt into
//!   new files with its rows as they are (`Storage::rebuild_table`, which packs pages
//!   that deletes left sparse), then analyzed. The answer is InnoDB's note and OK.
//! - **CHECK**: a real check (`Storage::check_table`): every B+tree's invariants,
//!   and for tables of at most [`CHECK_TABLE_VERIFY_ROWS_MAX`] rows that each
//!   secondary index holds exactly the rows' entries. Damage is MySQL's `error` /
//!   `Corrupt` rows. It waits for writers, and for purge up to
//!   [`CHECK_TABLE_PURGE_WAIT_MS`]. The options (QUICK, EXTENDED, FOR UPGRADE, ..)
//!   are accepted and change nothing.
//! - **REPAIR**: InnoDB's note that the engine does not support repair.
//! - **CHECKSUM**: result set `Table`, `Checksum`. The checksum is the wrapping sum
//!   over the rows of each row's CRC-32C over its values (NULL a marker byte, others
//!   a marker, their length and their bytes: a string's own, another value's text),
//!   read as the
//!   statement's consistent snapshot: the same rows give the same number whatever
//!   their order. MySQL sums its own row CRCs over its row format, so **the numbers
//!   differ from MySQL's**: compare checksums only between Tarn tables. `QUICK` is
//!   NULL (InnoDB keeps no live checksum), and so is a table that does not exist
//!   (with warning 1146).

use std::sync::Arc;
use std::time::Duration;

use sqlparser::ast;
use tarn_catalog::CheckOutcome;
use tarn_common::{Error, Result};
use tarn_row::Value;

use crate::accounts::Privileges;
use crate::bind::Binder;
use crate::limits::{CHECK_TABLE_PURGE_WAIT_MS, CHECK_TABLE_VERIFY_ROWS_MAX};
use crate::parse::Maintenance;
use crate::plan::OutputColumn;
use crate::session::{QueryResult, Session};
use crate::types::SqlType;

/// One table's answer: (`Msg_type`, `Msg_text`) rows.
type Messages = Vec<(&'static str, String)>;

/// `ANALYZE TABLE t [, t ..]`
pub(crate) fn analyze(session: &mut Session, tables: &[ast::ObjectName]) -> Result<QueryResult> {
    // MySQL's ANALYZE TABLE needs SELECT and INSERT on the table.
    let needed = Privileges::SELECT.union(Privileges::INSERT);
    each_table(session, tables, "analyze", needed, |session, db, table| {
        session.engine().storage().analyze_table(db, table)?;
        Ok(vec![("status", "OK".to_string())])
    })
}

/// `OPTIMIZE / CHECK / CHECKSUM / REPAIR TABLE t [, t ..]`
pub(crate) fn execute(
    session: &mut Session,
    op: Maintenance,
    tables: &[ast::ObjectName],
    quick: bool,
) -> Result<QueryResult> {
    if op != Maintenance::Checksum {
        // As in MySQL; and OPTIMIZE and CHECK wait for every transaction with locks
        // in the table, which would include the session's own.
        session.commit_implicitly()?;
    }
    match op {
        // MySQL's OPTIMIZE and REPAIR need SELECT and INSERT, CHECK some privilege on
        // the table (SELECT here), CHECKSUM SELECT.
        Maintenance::Optimize => each_table(
            session,
            tables,
            "optimize",
            Privileges::SELECT.union(Privileges::INSERT),
            |session, db, table| {
                // A rebuild is DDL: it waits for other sessions' LOCK TABLES of the
                // table and their global read lock (a temporary table for neither).
                let _metadata = (!crate::temporary::is_hidden_database(db))
                    .then(|| crate::metadata_locks::ddl_of_table(session, db, table))
                    .transpose()?;
                let storage = session.engine().storage().clone();
                let def = storage.table(db, table)?.def().clone();
                storage.rebuild_table(db, table, def, &mut |_, row| Ok(row))?;
                storage.analyze_table(db, table)?;
                Ok(vec![
                    (
                        "note",
                        "Table does not support optimize, doing recreate + analyze instead"
                            .to_string(),
                    ),
                    ("status", "OK".to_string()),
                ])
            },
        ),
        Maintenance::Repair => each_table(
            session,
            tables,
            "repair",
            Privileges::SELECT.union(Privileges::INSERT),
            |session, db, table| {
                session.engine().storage().table(db, table)?;
                Ok(vec![(
                    "note",
                    "The storage engine for the table doesn't support repair".to_string(),
                )])
            },
        ),
        Maintenance::Check => each_table(session, tables, "check", Privileges::SELECT, check_one),
        Maintenance::Checksum => checksum(session, tables, quick),
    }
}

fn check_one(session: &mut Session, db: &str, table: &str) -> Result<Messages> {
    let storage = session.engine().storage().clone();
    let verify = storage.table(db, table)?.estimated_rows() <= CHECK_TABLE_VERIFY_ROWS_MAX;
    let wait = Duration::from_millis(CHECK_TABLE_PURGE_WAIT_MS);
    match storage.check_table(db, table, verify, wait) {
        Ok(CheckOutcome::Checked { .. }) => Ok(vec![("status", "OK".to_string())]),
        Ok(CheckOutcome::PurgeBehind) => Ok(vec![
            (
                "Error",
                "Not checked: purge of old row versions is behind (a long transaction may \
                 be open)"
                    .to_string(),
            ),
            ("status", "Operation failed".to_string()),
        ]),
        Err(Error::CorruptData(what)) => Ok(vec![
            ("Warning", format!("Tarn: {what}")),
            ("error", "Corrupt".to_string()),
        ]),
        Err(e) => Err(e),
    }
}

/// Runs `f` for each named table and collects MySQL's `Table`, `Op`, `Msg_type`,
/// `Msg_text` rows. An error of one table (but for privileges and a missing current
/// database, which end the statement as in MySQL) becomes its `Error` and
/// `Operation failed` rows.
fn each_table(
    session: &mut Session,
    tables: &[ast::ObjectName],
    op: &str,
    needed: Privileges,
    mut f: impl FnMut(&mut Session, &str, &str) -> Result<Messages>,
) -> Result<QueryResult> {
    let mut rows = Vec::new();
    for name in tables {
        let (db, table) = Binder::new(session).table_ref(name)?;
        session.check_table(needed, &db, &table)?;
        // A temporary table is in its session's hidden database (`temporary.rs`).
        let storage_db = session.storage_database(&db, &table);
        let messages = f(session, &storage_db, &table).unwrap_or_else(|e| {
            let text = match e {
                Error::UnknownTable(_) | Error::UnknownDatabase(_) => {
                    format!("Table '{db}.{table}' doesn't exist")
                }
                e => e.to_string(),
            };
            vec![("Error", text), ("status", "Operation failed".to_string())]
        });
        for (kind, text) in messages {
            rows.push(vec![
                text_value(&format!("{db}.{table}")),
                text_value(op),
                text_value(kind),
                text_value(&text),
            ]);
        }
    }
    let columns = ["Table", "Op", "Msg_type", "Msg_text"]
        .iter()
        .map(|n| OutputColumn::new(*n, SqlType::TEXT, false))
        .collect();
    Ok(QueryResult::rows(columns, rows))
}

fn text_value(s: &str) -> Value {
    Value::Bytes(s.as_bytes().to_vec())
}

/// `CHECKSUM TABLE t [, t ..] [QUICK | EXTENDED]` (see the module documentation).
fn checksum(session: &mut Session, tables: &[ast::ObjectName], quick: bool) -> Result<QueryResult> {
    let mut rows = Vec::new();
    for name in tables {
        let (db, table) = Binder::new(session).table_ref(name)?;
        session.check_table(Privileges::SELECT, &db, &table)?;
        let shown = text_value(&format!("{db}.{table}"));
        let storage_db = session.storage_database(&db, &table);
        let handle = match session.engine().storage().table(&storage_db, &table) {
            Ok(handle) => handle,
            Err(Error::UnknownTable(_) | Error::UnknownDatabase(_)) => {
                session.add_warning("Error", 1146, format!("Table '{db}.{table}' doesn't exist"));
                rows.push(vec![shown, Value::Null]);
                continue;
            }
            Err(e) => return Err(e),
        };
        let sum = if quick {
            Value::Null
        } else {
            Value::UInt(table_checksum(session, &handle)?)
        };
        rows.push(vec![shown, sum]);
    }
    let columns = vec![
        OutputColumn::new("Table", SqlType::TEXT, false),
        OutputColumn::new("Checksum", SqlType::UInt { bits: 64 }, true),
    ];
    Ok(QueryResult::rows(columns, rows))
}

/// The wrapping sum of the rows' CRC-32Cs, read in the session's transaction (a
/// consistent read, chunk by chunk: no more than a chunk is held).
fn table_checksum(session: &mut Session, table: &Arc<tarn_catalog::Table>) -> Result<u64> {
    let alias = table.def().name.clone();
    let plan = crate::planner::scan_plan(
        table,
        &alias,
        &crate::dml::table_columns(table, &alias),
        &[],
        tarn_catalog::RowLock::None,
        tarn_catalog::WaitPolicy::Wait,
        &[],
    )?;
    session.transact(true, |session, tx| {
        session.with_exec(tx, &[], |cx| {
            let mut op = crate::exec::open(&plan)?;
            let mut sum = 0u64;
            let mut bytes = Vec::new();
            while let Some(chunk) = op.next(cx)? {
                for row in chunk.rows() {
                    bytes.clear();
                    for value in &row {
                        let text;
                        let value_bytes = match value {
                            Value::Null => {
                                bytes.push(0);
                                continue;
                            }
                            Value::Bytes(b) => b.as_slice(),
                            other => {
                                text = other.to_string();
                                text.as_bytes()
                            }
                        };
                        bytes.push(1);
                        bytes.extend_from_slice(&(value_bytes.len() as u64).to_le_bytes());
                        bytes.extend_from_slice(value_bytes);
                    }
                    sum = sum.wrapping_add(u64::from(crc32c::crc32c(&bytes)));
                }
            }
            Ok(sum)
        })
    })
}
