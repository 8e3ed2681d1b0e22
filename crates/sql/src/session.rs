//! A session: one client's state and the statement dispatcher.
//!
//! [`Session::execute`] parses a text ([`crate::parse`]), and for each statement binds
//! it ([`crate::bind`]), plans it ([`crate::planner`]) and runs it
//! ([`crate::exec`]) inside the session's transaction:
//!
//! - with `autocommit = 1` and no BEGIN, every statement is its own transaction,
//!   committed when it succeeds and rolled back when it fails;
//! - otherwise the first statement opens a transaction implicitly (PyMySQL and
//!   LinkBench rely on this) and it lasts until COMMIT, ROLLBACK, or a statement that
//!   commits implicitly (DDL, BEGIN, SET autocommit = 1);
//! - a failed statement is taken back alone (InnoDB's statement rollback), except a
//!   deadlock, which rolls back the whole transaction;
//! - READ COMMITTED takes a fresh read view per statement.
//!
//! Every statement runs as the session's account (`accounts.rs`): it first refreshes
//! the session's snapshot of its grants if the engine's cache changed, and binding
//! checks each table against it. Sessions from [`Engine::session`] are internal
//! superusers and skip the checks.
//!
//! Prepared statements ([`Session::prepare`]) are parsed and bound once; executing one
//! runs its plan with the parameters, and binds again only when a table it reads
//! changed definition (error 1412 from the catalog), its parameters' types changed,
//! or the session's temporary tables did. So nothing a plan keeps may depend on a
//! parameter's value: a `?` LIMIT or OFFSET is read by the operator at each run, after
//! [`Session::prepare`]'s record of such parameters let each execution refuse a value
//! that is not a row count (1210). SQL's `PREPARE name FROM ..` makes the same
//! kind of statement under a name of the session's (`EXECUTE name USING @a, ..`
//! runs it inside the EXECUTE statement, with the user variables as parameters;
//! `DEALLOCATE PREPARE` drops it). The whole server holds at most
//! `max_prepared_stmt_count` of them (1461), as MySQL does.
//!
//! A session's temporary tables are in [`crate::temporary`]: its table lookups go
//! through them first, and it drops them when it ends or is reset.
//!
//! The session's `innodb_lock_wait_timeout` bounds the lock waits of its
//! transactions: the session puts it in its statement interrupt (which every
//! transaction it begins carries to the lock manager) when it starts, is reset, and
//! sets the variable, never per statement; so `SET [SESSION] innodb_lock_wait_timeout`
//! applies from the next statement on, in the open transaction too, and `SET GLOBAL`
//! only to sessions that start later, as in MySQL. Its `lock_wait_timeout` bounds
//! its waits for metadata locks ([`crate::metadata_locks`]), read when a wait begins.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use sqlparser::ast;
use tarn_catalog::{Table, Transaction};
use tarn_common::settings::IsolationLevel;
use tarn_common::{Error, Result};
use tarn_row::Value;
use tarn_row::datetime::DateTime;

use parking_lot::Mutex;

use crate::accounts::{self, Grants, Identity, Privileges, TableAccess};
use crate::bind::{BindContext, Binder};
use crate::chunk::Chunk;
use crate::engine::{Engine, SessionEntry};
use crate::exec::{self, Cancel, ExecContext, MemoryBudget};
use crate::limits::{USER_VARIABLES_MAX, WARNINGS_MAX};
use crate::parse::{self, Parsed, PrepareSource, Statement, TransactionScope};
use crate::plan::OutputColumn;
use crate::scalar::FnContext;
use crate::sysvars::SystemVariables;
use crate::types::SqlType;

/// The result of one statement.
#[derive(Debug)]
pub enum QueryResult {
    /// A result set.
    Rows {
        columns: Vec<OutputColumn>,
        chunks: Vec<Chunk>,
    },
    /// A result set handed chunk by chunk to the session's [`RowSink`] as it was
    /// produced (see [`Session::set_row_sink`]); `rows` were sent.
    Streamed { rows: u64 },
    /// A statement without a result set.
    Ok {
        affected_rows: u64,
        last_insert_id: u64,
        /// MySQL's info string ("Records: 3  Duplicates: 0  Warnings: 0").
        info: String,
    },
}

impl QueryResult {
    pub fn ok(affected_rows: u64) -> QueryResult {
        QueryResult::Ok {
            affected_rows,
            last_insert_id: 0,
            info: String::new(),
        }
    }

    /// A result set from rows.
    pub fn rows(columns: Vec<OutputColumn>, rows: Vec<Vec<Value>>) -> QueryResult {
        let width = columns.len();
        let chunks = if rows.is_empty() {
            Vec::new()
        } else {
            Chunk::from_rows(rows, width).split()
        };
        QueryResult::Rows { columns, chunks }
    }

    /// The rows of a result set (empty for OK results).
    pub fn all_rows(&self) -> Vec<Vec<Value>> {
        match self {
            QueryResult::Rows { chunks, .. } => chunks.iter().flat_map(|c| c.rows()).collect(),
            QueryResult::Ok { .. } | QueryResult::Streamed { .. } => Vec::new(),
        }
    }
}

/// Where a session streams the result sets of its queries, chunk by chunk, instead
/// of collecting them (the server's result sender). Only a statement's own result
/// set streams: SHOW, EXPLAIN and subqueries still collect theirs.
///
/// An error from the sink stops the query (the client went away, or the per-result
/// bound was hit) and becomes the statement's error.
pub trait RowSink: Send {
    /// The result's columns, before any rows.
    fn begin(&mut self, columns: &[OutputColumn]) -> Result<()>;
    /// The next chunk of rows, in result order.
    fn chunk(&mut self, chunk: Chunk) -> Result<()>;
    /// How this result's rows may be encoded where they are made (by the executor's
    /// workers for S1's parallel result sending, or see [`RowEncoder::parallel`]).
    /// With one, a result that runs as a parallel pipeline reaches the sink through
    /// [`RowSink::encoded`] instead of [`RowSink::chunk`].
    fn encoder(&self) -> Option<Arc<dyn RowEncoder>> {
        None
    }
    /// The next rows, already encoded by [`RowSink::encoder`]'s encoder, in result
    /// order.
    fn encoded(&mut self, _rows: EncodedRows) -> Result<()> {
        Err(Error::sql(
            1105,
            "HY000",
            "this row sink takes no encoded rows",
        ))
    }
}

/// Encodes rows into a client's wire format. The executor's workers call it in
/// parallel, each on its own morsel and into its own buffer; the sink receives the
/// buffers in result order ([`RowSink::encoded`]).
pub trait RowEncoder: Send + Sync {
    /// False when S1's parallel result sending is switched off: rows are then
    /// encoded on the statement's thread, one batch after another. Only a scan whose
    /// output is a choice of its columns streams so (its storage batches, decoded
    /// by the scan's workers, are encoded by [`RowEncoder::encode_batch`]); any
    /// other result reaches the sink as chunks ([`RowSink::chunk`]).
    fn parallel(&self) -> bool {
        true
    }
    /// Rows straight from a storage batch: output column `i` is `batch.columns[columns[i]]`.
    /// Must produce exactly what [`RowEncoder::encode_chunk`] produces for
    /// `Chunk::from_batch` of the same rows (the typed fast path).
    fn encode_batch(&self, batch: &tarn_row::Batch, columns: &[usize], out: &mut Vec<u8>);
    /// Rows of a chunk, one value per output column.
    fn encode_chunk(&self, chunk: &Chunk, out: &mut Vec<u8>);
    /// A serializer the scan's own workers may run on each stored row instead, when
    /// output column `i` is the table's column `columns[i]`, of type `column_types[i]`
    /// (one pass over the row, no batch in between); `None`: rows come in batches.
    /// Must produce exactly what [`RowEncoder::encode_batch`] produces.
    fn row_serializer(
        &self,
        _columns: &[usize],
        _column_types: &[tarn_row::ColumnType],
    ) -> Option<Arc<dyn tarn_row::RowSerializer>> {
        None
    }
}

/// A buffer of encoded rows.
#[derive(Debug, Default)]
pub struct EncodedRows {
    pub bytes: Vec<u8>,
    pub rows: u64,
}

/// A warning or note of the last statement (SHOW WARNINGS).
#[derive(Clone, Debug)]
pub struct Warning {
    pub level: &'static str,
    pub code: u16,
    pub message: String,
}

/// A prepared statement.
pub struct Prepared {
    pub parsed: Arc<Parsed>,
    /// The bound form, for statements that have one.
    bound: Option<Arc<crate::dml::Bound>>,
    /// The result columns (empty for statements without a result set).
    pub columns: Vec<OutputColumn>,
    /// The table privileges its bound form needs, checked again at each EXECUTE.
    accesses: Vec<TableAccess>,
    /// The parameter types `bound` was bound with (empty: all text, as prepared).
    param_types: Vec<SqlType>,
    /// The session's temporary tables' generation `bound` was bound under: a
    /// temporary table created or dropped since may change what a name resolves to.
    temporary_generation: u64,
    /// The parameters (0-based) that are a LIMIT's or an OFFSET's row count: each
    /// execution checks their values are row counts (1210 if not) before running;
    /// the plan reads them as it runs (`plan::RowCount::Param`), never at binding.
    limit_params: Vec<usize>,
}

/// SET TRANSACTION without SESSION/GLOBAL: applies to the next transaction only.
#[derive(Default, Clone, Copy)]
struct NextTransaction {
    isolation: Option<IsolationLevel>,
    read_only: Option<bool>,
}

pub struct Session {
    engine: Arc<Engine>,
    entry: Arc<SessionEntry>,
    database: Option<String>,
    vars: SystemVariables,
    user_vars: HashMap<String, Value>,
    tx: Option<Transaction>,
    /// The transaction was opened by BEGIN / START TRANSACTION.
    tx_explicit: bool,
    /// Commits return before the log makes them durable, leaving the wait to the
    /// caller ([`Session::set_defer_commit_acks`]).
    defer_commit_acks: bool,
    /// The last commit not yet known to be durable (with `defer_commit_acks`). The
    /// next statement waits for it before it runs, so nothing the session answers
    /// after a commit can reach the client before the commit is durable, unless the
    /// caller took the ticket and holds the answer back itself.
    commit_ticket: Option<tarn_catalog::CommitTicket>,
    /// LOCK TABLES / FLUSH TABLES WITH READ LOCK (`table_locks.rs`).
    pub(crate) table_locks: Option<crate::table_locks::TableLocks>,
    next_tx: NextTransaction,
    last_insert_id: u64,
    warnings: Vec<Warning>,
    prepared: HashMap<u32, Prepared>,
    /// SQL-level prepared statements (PREPARE name): the lower-cased name's id in
    /// `prepared`.
    named_prepared: HashMap<String, u32>,
    next_statement_id: u32,
    /// The text of the statement being run (for result column names).
    statement_text: Option<String>,
    /// Where query results stream, if anywhere (the server sets one).
    pub(crate) row_sink: Option<Box<dyn RowSink>>,
    /// UPDATE reports rows matched, not changed (the client's CLIENT_FOUND_ROWS).
    pub(crate) found_rows: bool,
    /// ROW_COUNT(): the previous statement's affected rows, -1 after a result set
    /// or an error.
    row_count: i64,
    /// FOUND_ROWS(): the rows of the last result set, or with SQL_CALC_FOUND_ROWS
    /// the rows it had before its LIMIT.
    last_found_rows: u64,
    /// Rows before the LIMIT, counted by the running statement's SQL_CALC_FOUND_ROWS
    /// limit (`ExecContext::rows_before_limit`).
    rows_before_limit: Option<u64>,
    /// The file a client sent for the LOAD DATA LOCAL statement about to run
    /// (`set_local_infile`); taken by that statement.
    local_infile: Option<crate::load::LocalInfile>,
    /// A session function (DATABASE(), LAST_INSERT_ID(), ...) was folded into a
    /// constant while binding: such a binding must not be kept for later executions.
    folded_session_function: Cell<bool>,
    /// The parameters the statement being bound uses as a LIMIT's or an OFFSET's row
    /// count (`BindContext::limit_parameter`): Some only while a statement is
    /// prepared, with at most one entry per parameter of that statement.
    limit_params: RefCell<Option<Vec<usize>>>,
    /// Who the session runs as (`accounts.rs`).
    identity: Identity,
    /// The account's grants as of `grants_generation` of the engine's cache.
    grants: Arc<Grants>,
    grants_generation: u64,
    /// While a statement is prepared: the table privileges its binding checked.
    access_log: Mutex<Option<Vec<TableAccess>>>,
    /// The session's temporary tables (`temporary.rs`).
    pub(crate) temporary: crate::temporary::TemporaryTables,
    /// The last temporary table a binding resolved (CREATE VIEW refuses them).
    temporary_used: RefCell<Option<String>>,
    /// What functions such as SLEEP and GET_LOCK reach of the session
    /// (`FnContext::session`).
    link: Arc<crate::user_locks::SessionLink>,
}

impl Drop for Session {
    fn drop(&mut self) {
        if let Some(tx) = self.tx.take() {
            let _ = self.engine.storage().rollback(tx);
        }
        self.forget_prepared();
        crate::temporary::drop_all(self);
        self.engine.user_locks.release_all(self.entry.id);
        self.engine.unregister(&self.entry);
    }
}

/// Whether a statement may be prepared. MySQL refuses (1295) the SQL-level
/// PREPARE / EXECUTE / DEALLOCATE inside a prepared statement, and LOAD DATA (whose
/// file the server asks for only for a text query); clients such as sysbench fall
/// back to text queries on 1295.
fn preparable(statement: &Statement) -> bool {
    !matches!(
        statement,
        Statement::Empty
            | Statement::Prepare { .. }
            | Statement::ExecutePrepared { .. }
            | Statement::DeallocatePrepare { .. }
            | Statement::LoadData(_)
    )
}

/// Error 1243 for an unknown prepared statement, named as the client named it (an
/// id of COM_STMT_*, a name of EXECUTE) and with the command that named it.
fn unknown_prepared(handle: &str, what: &str) -> Error {
    Error::sql(
        1243,
        "HY000",
        format!("Unknown prepared statement handler ({handle}) given to {what}"),
    )
}

/// Whether `max_execution_time` bounds the statement. As in MySQL, it bounds only
/// top-level read-only SELECT statements: a query (`SELECT ... FOR UPDATE` too, whose
/// MySQL command is a SELECT's), run directly or prepared, and the SELECT that EXPLAIN
/// shows or runs; never DML (`INSERT ... SELECT` included), DDL, SET, SHOW or COMMIT.
/// (A SELECT is not read-only in MySQL when it calls a stored function that writes,
/// and SELECTs inside stored programs are not bounded; Tarn has neither.) The others
/// run with no deadline; KILL QUERY still stops them.
fn execution_time_applies(parsed: &Parsed) -> bool {
    let statement = match &parsed.statement {
        Statement::Sql(statement) => statement,
        Statement::SelectInto { .. } => return true,
        _ => return false,
    };
    match &**statement {
        ast::Statement::Query(_) => true,
        ast::Statement::Explain { statement, .. } => {
            matches!(**statement, ast::Statement::Query(_))
        }
        _ => false,
    }
}

fn unsupported(what: impl std::fmt::Display) -> Error {
    Error::sql(
        1235,
        "42000",
        format!("This version of Tarn doesn't yet support '{what}'"),
    )
}

impl Session {
    pub(crate) fn new(engine: Arc<Engine>, entry: Arc<SessionEntry>) -> Session {
        let vars = SystemVariables::session_from(&engine.globals.read());
        let session = Session {
            database: None,
            vars,
            user_vars: HashMap::new(),
            tx: None,
            tx_explicit: false,
            defer_commit_acks: false,
            commit_ticket: None,
            next_tx: NextTransaction::default(),
            table_locks: None,
            last_insert_id: 0,
            warnings: Vec::new(),
            prepared: HashMap::new(),
            named_prepared: HashMap::new(),
            next_statement_id: 1,
            statement_text: None,
            row_sink: None,
            found_rows: false,
            row_count: -1,
            last_found_rows: 0,
            rows_before_limit: None,
            local_infile: None,
            folded_session_function: Cell::new(false),
            limit_params: RefCell::new(None),
            identity: Identity {
                user: entry.user.clone(),
                host: entry.host.clone(),
                internal: true,
            },
            grants: Arc::default(),
            grants_generation: u64::MAX,
            access_log: Mutex::new(None),
            temporary: Default::default(),
            temporary_used: RefCell::new(None),
            link: Arc::new(crate::user_locks::SessionLink {
                connection_id: entry.id,
                interrupt: entry.cancel.clone(),
                user_locks: engine.user_locks.clone(),
            }),
            engine,
            entry,
        };
        session.publish_lock_wait_timeout();
        session
    }

    /// Hands the session's `innodb_lock_wait_timeout` to its statement interrupt, where
    /// the lock waits of its transactions read it (see the module docs).
    fn publish_lock_wait_timeout(&self) {
        let timeout_s = self.vars.get_u64("innodb_lock_wait_timeout");
        self.entry
            .cancel
            .set_lock_wait_timeout((timeout_s > 0).then(|| Duration::from_secs(timeout_s)));
    }

    // ---------------------------------------------------------------- privileges

    /// Makes the session run as an authenticated account.
    pub(crate) fn authenticate(&mut self, identity: Identity) {
        self.identity = identity;
        self.grants_generation = u64::MAX;
        self.refresh_grants();
    }

    /// Who the session runs as.
    pub fn identity(&self) -> &Identity {
        &self.identity
    }

    /// Takes a new snapshot of the account's grants if the engine's cache changed
    /// (one atomic load when it did not).
    fn refresh_grants(&mut self) {
        if self.identity.internal {
            return;
        }
        let generation = self.engine.accounts_generation();
        if generation != self.grants_generation {
            self.grants = self
                .engine
                .grants_of(&self.identity.user, &self.identity.host);
            self.grants_generation = generation;
        }
    }

    /// Checks that the session holds some privilege in `db` or one of its tables
    /// (1044), as USE and SHOW TABLES need.
    pub(crate) fn check_database_access(&self, db: &str) -> Result<()> {
        if crate::temporary::is_hidden_database(db) {
            return Err(Error::UnknownDatabase(db.to_string()));
        }
        if self.identity.internal || accounts::is_open_schema(db) || self.grants.any_in_database(db)
        {
            return Ok(());
        }
        Err(accounts::database_denied(&self.identity, db))
    }

    /// The grants that decide which databases and tables SHOW and
    /// information_schema list; `None` for the engine's own sessions, which see all.
    pub(crate) fn visible_grants(&self) -> Option<&accounts::Grants> {
        (!self.identity.internal).then_some(&*self.grants)
    }

    /// True if the session holds `needed` on `db.table`. A temporary table of the
    /// session's needs nothing once created (MySQL checks no privileges on it).
    pub(crate) fn table_privileges_held(&self, needed: Privileges, db: &str, table: &str) -> bool {
        self.identity.internal
            || self.temporary.contains(db, table)
            || accounts::table_allowed(&self.grants, needed, db, table)
    }

    /// The database whose catalog holds `db.table` for this session: the hidden one
    /// of its temporary table of that name if it has one (`temporary.rs`), else `db`.
    pub(crate) fn storage_database(&self, db: &str, table: &str) -> String {
        self.temporary
            .database_of(db, table)
            .unwrap_or(db)
            .to_string()
    }

    /// Whether `db.table` names one of the session's temporary tables.
    pub(crate) fn is_temporary(&self, db: &str, table: &str) -> bool {
        self.temporary.contains(db, table)
    }

    /// Forgets which temporary table a binding last resolved, and returns it
    /// (CREATE VIEW binds its query between two calls).
    pub(crate) fn take_temporary_used(&self) -> Option<String> {
        self.temporary_used.borrow_mut().take()
    }

    /// Checks that the session holds at least one privilege on `db.table` (SHOW
    /// CREATE TABLE, SHOW COLUMNS, SHOW INDEX, DESCRIBE); 1142 naming SELECT if not.
    pub(crate) fn check_table_any(&self, db: &str, table: &str) -> Result<()> {
        let held = Privileges::EACH
            .into_iter()
            .any(|p| self.table_privileges_held(p, db, table));
        if held {
            Ok(())
        } else {
            Err(accounts::table_denied(
                &self.identity,
                Privileges::SELECT,
                table,
            ))
        }
    }

    /// Checks `needed` on `db.table` (1142), recording it while a statement is
    /// prepared. Internal sessions return at once, and so does a temporary table of
    /// the session.
    pub(crate) fn check_table(&self, needed: Privileges, db: &str, table: &str) -> Result<()> {
        if self.temporary.contains(db, table) {
            return Ok(());
        }
        // Under LOCK TABLES only CREATE TEMPORARY TABLE asks for CREATE here (other
        // DDL is refused first): a new temporary table need not be locked.
        if let Some(locks) = self
            .table_locks
            .as_ref()
            .filter(|_| needed != Privileges::CREATE)
        {
            locks.check_listed(db, table)?;
        }
        self.check_base_table(needed, db, table)
    }

    /// The session's statement interrupt (its kill flag and lock wait timeout).
    pub(crate) fn interrupt(&self) -> Arc<tarn_common::StatementInterrupt> {
        self.entry.cancel.clone()
    }

    /// [`Session::check_table`] for the base table `db.table`, whether or not the
    /// session has a temporary table of that name (a view's tables).
    pub(crate) fn check_base_table(&self, needed: Privileges, db: &str, table: &str) -> Result<()> {
        if let Some(locks) = &self.table_locks {
            locks.check_access(needed, db, table)?;
        }
        if self.identity.internal {
            return Ok(());
        }
        if let Some(log) = self.access_log.lock().as_mut() {
            log.push(TableAccess {
                privileges: needed,
                db: db.to_string(),
                table: table.to_string(),
            });
        }
        if accounts::table_allowed(&self.grants, needed, db, table) {
            return Ok(());
        }
        let missing = Privileges::EACH
            .into_iter()
            .find(|p| needed.contains(*p) && !accounts::table_allowed(&self.grants, *p, db, table))
            .unwrap_or(needed);
        Err(accounts::table_denied(&self.identity, missing, table))
    }

    /// KILL of another account's session needs the global CREATE USER privilege
    /// (MySQL: CONNECTION_ADMIN); an unknown id is left to `Engine::kill` (1094).
    fn check_kill(&self, id: u64) -> Result<()> {
        if self.identity.internal || self.grants.global.contains(Privileges::CREATE_USER) {
            return Ok(());
        }
        let owner = self
            .engine
            .processes()
            .into_iter()
            .find(|p| p.id == id)
            .map(|p| p.user);
        match owner {
            Some(user) if user != self.identity.user => Err(Error::sql(
                1095,
                "HY000",
                format!("You are not owner of thread {id}"),
            )),
            _ => Ok(()),
        }
    }

    /// Checks `needed` on `db.*` (1044).
    pub(crate) fn check_database(&self, needed: Privileges, db: &str) -> Result<()> {
        if self.identity.internal || accounts::database_allowed(&self.grants, needed, db) {
            return Ok(());
        }
        Err(accounts::database_denied(&self.identity, db))
    }

    /// Checks a global privilege (1227, naming `what`).
    pub(crate) fn require_global(&self, needed: Privileges, what: &str) -> Result<()> {
        if self.identity.internal || self.grants.global.contains(needed) {
            return Ok(());
        }
        Err(accounts::global_denied(what))
    }

    /// Checks that the session may GRANT or REVOKE `needed` (which includes GRANT
    /// OPTION) at `level`: it holds them at that level or above.
    pub(crate) fn require_grantable(
        &self,
        needed: Privileges,
        level: &accounts::Level,
    ) -> Result<()> {
        if self.identity.internal || self.grants.global.contains(needed) {
            return Ok(());
        }
        match level {
            accounts::Level::Global => Err(accounts::global_denied("GRANT OPTION")),
            accounts::Level::Database(db) => {
                if accounts::database_allowed(&self.grants, needed, db) {
                    Ok(())
                } else {
                    Err(accounts::database_denied(&self.identity, db))
                }
            }
            accounts::Level::Table(db, table) => {
                if accounts::table_allowed(&self.grants, needed, db, table) {
                    Ok(())
                } else {
                    Err(accounts::table_denied(
                        &self.identity,
                        Privileges::GRANT_OPTION,
                        table,
                    ))
                }
            }
        }
    }

    /// COM_RESET_CONNECTION: rolls back, and starts over as a new session of the same
    /// account with the same connection id and current database: session variables
    /// from the globals, no user variables, prepared statements, temporary tables or
    /// warnings.
    pub fn reset(&mut self) {
        if let Some(tx) = self.tx.take() {
            let _ = self.engine.storage().rollback(tx);
        }
        self.table_locks = None;
        crate::temporary::drop_all(self);
        self.engine.user_locks.release_all(self.entry.id);
        self.vars = SystemVariables::session_from(&self.engine.globals.read());
        self.publish_lock_wait_timeout();
        self.user_vars.clear();
        self.tx_explicit = false;
        self.next_tx = NextTransaction::default();
        self.last_insert_id = 0;
        self.warnings.clear();
        self.forget_prepared();
    }

    /// Drops every prepared statement (a reset, the session's end), giving their
    /// places back to the server's `max_prepared_stmt_count`.
    fn forget_prepared(&mut self) {
        let count = self.prepared.len();
        self.engine
            .prepared_statements
            .fetch_sub(count, Ordering::Relaxed);
        self.prepared.clear();
        self.named_prepared.clear();
    }

    /// Whether UPDATE's affected rows count the rows matched (MySQL's
    /// CLIENT_FOUND_ROWS) rather than the rows changed.
    pub fn set_found_rows(&mut self, on: bool) {
        self.found_rows = on;
    }

    /// Streams the result sets of later queries to `sink` (None: collect them).
    pub fn set_row_sink(&mut self, sink: Option<Box<dyn RowSink>>) {
        self.row_sink = sink;
    }

    pub fn connection_id(&self) -> u64 {
        self.entry.id
    }

    pub fn engine(&self) -> &Arc<Engine> {
        &self.engine
    }

    pub fn database(&self) -> Option<&str> {
        self.database.as_deref()
    }

    pub fn in_transaction(&self) -> bool {
        self.tx.is_some()
    }

    pub fn autocommit(&self) -> bool {
        self.vars.hot().autocommit
    }

    /// True once KILL CONNECTION named this session.
    pub fn is_killed(&self) -> bool {
        self.entry.killed.load(Ordering::Relaxed)
    }

    pub fn warnings(&self) -> &[Warning] {
        &self.warnings
    }

    pub fn last_insert_id(&self) -> u64 {
        self.last_insert_id
    }

    pub fn variables(&self) -> &SystemVariables {
        &self.vars
    }

    pub(crate) fn add_warning(&mut self, level: &'static str, code: u16, message: String) {
        if self.warnings.len() < WARNINGS_MAX {
            self.warnings.push(Warning {
                level,
                code,
                message,
            });
        }
    }

    /// Whether dividing by zero in a value written is error 1365 rather than a
    /// warning: `sql_mode` has `ERROR_FOR_DIVISION_BY_ZERO` and a strict mode.
    pub(crate) fn division_by_zero_is_error(&self) -> bool {
        self.vars.hot().division_by_zero_is_error
    }

    /// Whether `sql_mode` is strict (STRICT_TRANS_TABLES or STRICT_ALL_TABLES): a
    /// value written that does not fit its column is an error (`dml::Fit`).
    pub(crate) fn strict_mode(&self) -> bool {
        self.vars.hot().strict
    }

    /// `USE db`.
    pub fn use_database(&mut self, name: &str) -> Result<()> {
        let name = self.normalize_table_name(name);
        self.refresh_grants();
        self.check_database_access(&name)?;
        if !is_system_database(&name) && !self.engine.storage().databases().contains(&name) {
            return Err(Error::UnknownDatabase(name));
        }
        self.database = Some(name.clone());
        self.entry.state.lock().database = Some(name);
        Ok(())
    }

    // ---------------------------------------------------------------- entry points

    /// Runs every statement of `sql` and returns their results; stops at the first
    /// error (the results before it are lost: use [`Session::execute_each`] to keep
    /// them).
    pub fn execute(&mut self, sql: &str) -> Result<Vec<QueryResult>> {
        let mut results = Vec::new();
        let mut failure = None;
        self.execute_each(sql, &mut |r| match r {
            Ok(r) => {
                results.push(r);
                true
            }
            Err(e) => {
                failure = Some(e);
                false
            }
        });
        match failure {
            Some(e) => Err(e),
            None => Ok(results),
        }
    }

    /// Runs the statements of `sql` one by one, handing each result (or error, a
    /// syntax error included) to `each`; stops when `each` returns false. Statements
    /// after the one that failed run only if `each` says to go on (`--force`).
    pub fn execute_each(&mut self, sql: &str, each: &mut dyn FnMut(Result<QueryResult>) -> bool) {
        let mut batch = parse::Batch::new(sql);
        while let Some(parsed) = batch.next(self.parse_mode()) {
            let result = match parsed {
                Ok(parsed) => self.run_statement(&parsed, &[], None),
                Err(e) => {
                    self.warnings.clear();
                    Err(e)
                }
            };
            if !each(result) {
                return;
            }
        }
    }

    /// How this session's `sql_mode` reads a client's text (ANSI_QUOTES).
    pub fn parse_mode(&self) -> parse::ParseMode {
        parse::ParseMode {
            ansi_quotes: self.vars.hot().ansi_quotes,
            pipes_are_or: !self.vars.hot().pipes_as_concat,
        }
    }

    /// Runs one statement of [`crate::parse::parse_each`]'s output (the server runs
    /// multi-statements this way, to see the session between them).
    pub fn execute_parsed(&mut self, parsed: &Parsed) -> Result<QueryResult> {
        self.run_statement(parsed, &[], None)
    }

    /// Prepares one statement; returns its id. At most `max_prepared_stmt_count`
    /// statements are prepared at once in the whole server (1461), as in MySQL.
    pub fn prepare(&mut self, sql: &str) -> Result<u32> {
        let parsed = parse::parse_one_in(sql, self.parse_mode())?;
        if !preparable(&parsed.statement) {
            return Err(Error::sql(
                1295,
                "HY000",
                "This command is not supported in the prepared statement protocol yet",
            ));
        }
        self.refresh_grants();
        let (bound, columns, accesses, limit_params) = match crate::dml::bindable(&parsed) {
            true => {
                *self.access_log.lock() = Some(Vec::new());
                self.folded_session_function.set(false);
                *self.limit_params.borrow_mut() = Some(Vec::new());
                let bound = self.bind_prepared(&parsed);
                let accesses = self.access_log.lock().take().unwrap_or_default();
                let limit_params = self.limit_params.take().unwrap_or_default();
                let bound = bound?;
                let columns = bound.columns();
                // A value folded from the session (LAST_INSERT_ID(), DATABASE()) would
                // go stale: such a statement is bound again at every execution.
                let keep = !self.folded_session_function.get();
                (
                    keep.then(|| Arc::new(bound)),
                    columns,
                    accesses,
                    limit_params,
                )
            }
            false => (None, Vec::new(), Vec::new(), Vec::new()),
        };
        let max = usize::try_from(self.engine.global_u64("max_prepared_stmt_count"))
            .unwrap_or(usize::MAX);
        let reserved = self.engine.prepared_statements.fetch_update(
            Ordering::Relaxed,
            Ordering::Relaxed,
            |n| (n < max).then_some(n + 1),
        );
        if reserved.is_err() {
            return Err(Error::sql(
                1461,
                "42000",
                format!(
                    "Can't create more than max_prepared_stmt_count statements (current value: {max})"
                ),
            ));
        }
        let mut id = self.next_statement_id;
        while self.prepared.contains_key(&id) {
            id = id.wrapping_add(1).max(1);
        }
        self.next_statement_id = id.wrapping_add(1).max(1);
        self.prepared.insert(
            id,
            Prepared {
                parsed: Arc::new(parsed),
                bound,
                columns,
                accesses,
                param_types: Vec::new(),
                temporary_generation: self.temporary.generation(),
                limit_params,
            },
        );
        Ok(id)
    }

    /// Binds a statement being prepared (or bound again for new parameter types)
    /// with its own text as the statement's, which result column names are cut from.
    fn bind_prepared(&mut self, parsed: &Parsed) -> Result<crate::dml::Bound> {
        let outer = self.statement_text.replace(parsed.text.clone());
        let bound = self.bind_statement(parsed);
        self.statement_text = outer;
        bound
    }

    pub fn prepared(&self, id: u32) -> Option<&Prepared> {
        self.prepared.get(&id)
    }

    pub fn close_prepared(&mut self, id: u32) {
        if self.prepared.remove(&id).is_some() {
            self.engine
                .prepared_statements
                .fetch_sub(1, Ordering::Relaxed);
        }
    }

    /// Runs prepared statement `id` with `params` (COM_STMT_EXECUTE).
    pub fn execute_prepared(&mut self, id: u32, params: &[Value]) -> Result<QueryResult> {
        if !self.prepared.contains_key(&id) {
            return Err(unknown_prepared(&id.to_string(), "mysqld_stmt_execute"));
        }
        self.run_prepared(id, params, "mysqld_stmt_execute", true)
    }

    /// Runs prepared statement `id`, which exists, with `params`; `what` names the
    /// command in errors. `top_level`: the statement is the client's (COM_STMT_EXECUTE);
    /// otherwise it runs inside the running EXECUTE statement.
    fn run_prepared(
        &mut self,
        id: u32,
        params: &[Value],
        what: &str,
        top_level: bool,
    ) -> Result<QueryResult> {
        let (parsed, bound) = {
            let p = self.prepared.get(&id).expect("the caller checked");
            (p.parsed.clone(), p.bound.clone())
        };
        self.refresh_grants();
        if let (Some(locks), Some(p)) = (&self.table_locks, self.prepared.get(&id)) {
            for access in &p.accesses {
                locks.check_access(access.privileges, &access.db, &access.table)?;
            }
        }
        if bound.is_some() && !self.identity.internal {
            let p = self.prepared.get(&id).expect("looked up above");
            for access in &p.accesses {
                if !self.table_privileges_held(access.privileges, &access.db, &access.table) {
                    return Err(accounts::table_denied(
                        &self.identity,
                        access.privileges,
                        &access.table,
                    ));
                }
            }
        }
        let p = self.prepared.get(&id).expect("looked up above");
        let limit_ok = |&i: &usize| params.get(i).and_then(crate::plan::row_count_of).is_some();
        if params.len() != parsed.param_count || !p.limit_params.iter().all(limit_ok) {
            // As MySQL: a LIMIT's parameter that is NULL, negative, fractional or
            // not a number is refused like a missing one.
            return Err(Error::sql(
                1210,
                "HY000",
                format!("Incorrect arguments to {what}"),
            ));
        }
        // Bind again when the parameters' types changed since the last binding, or
        // the session's temporary tables did.
        let mut bound = bound;
        if bound.is_some() {
            let types: Vec<SqlType> = params.iter().map(crate::bind::param_type).collect();
            let generation = self.temporary.generation();
            let p = self.prepared.get(&id).expect("looked up above");
            if p.param_types != types || p.temporary_generation != generation {
                let rebound = Arc::new(crate::bind::with_param_types(&types, || {
                    self.bind_prepared(&parsed)
                })?);
                let p = self.prepared.get_mut(&id).expect("looked up above");
                p.bound = Some(rebound.clone());
                p.param_types = types;
                p.temporary_generation = generation;
                bound = Some(rebound);
            }
        }
        match self.run_prepared_once(&parsed, params, bound.clone(), top_level) {
            Err(Error::TableDefinitionChanged(_)) if bound.is_some() => {
                // A table changed definition since it was prepared: bind again.
                let types = self.prepared.get(&id).map(|p| p.param_types.clone());
                let rebound = Arc::new(crate::bind::with_param_types(
                    &types.unwrap_or_default(),
                    || self.bind_prepared(&parsed),
                )?);
                if let Some(p) = self.prepared.get_mut(&id) {
                    p.bound = Some(rebound.clone());
                }
                self.run_prepared_once(&parsed, params, Some(rebound), top_level)
            }
            other => other,
        }
    }

    /// One run of a prepared statement: as a statement of its own, or inside the
    /// running EXECUTE (whose bookkeeping, warnings, row counts and deadline, none,
    /// are the statement's; only its text, which result column names are cut from,
    /// is the prepared one meanwhile).
    fn run_prepared_once(
        &mut self,
        parsed: &Parsed,
        params: &[Value],
        bound: Option<Arc<crate::dml::Bound>>,
        top_level: bool,
    ) -> Result<QueryResult> {
        if top_level {
            return self.run_statement(parsed, params, bound);
        }
        let outer = self.statement_text.replace(parsed.text.clone());
        let result = self.dispatch(parsed, params, bound);
        self.statement_text = outer;
        result
    }

    /// `PREPARE name FROM {'text' | @variable}`. A statement of that name is
    /// deallocated first, even when the new one then fails to prepare (MySQL's rule).
    fn prepare_named(&mut self, name: &str, source: &PrepareSource) -> Result<QueryResult> {
        let text = match source {
            PrepareSource::Text(text) => text.clone(),
            PrepareSource::Variable(variable) => {
                match crate::scalar::cast::to_text(&BindContext::user_variable(self, variable)) {
                    Some(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
                    // MySQL parses NULL's text, "NULL".
                    None => {
                        return Err(Error::sql(
                            1064,
                            "42000",
                            "You have an error in your SQL syntax; check the manual that corresponds to your MySQL server version for the right syntax to use near 'NULL' at line 1",
                        ));
                    }
                }
            }
        };
        let key = name.to_ascii_lowercase();
        if let Some(old) = self.named_prepared.remove(&key) {
            self.close_prepared(old);
        }
        let id = self.prepare(&text)?;
        self.named_prepared.insert(key, id);
        Ok(QueryResult::Ok {
            affected_rows: 0,
            last_insert_id: 0,
            info: "Statement prepared".to_string(),
        })
    }

    /// `EXECUTE name [USING @a, ..]`: the user variables' values are the parameters.
    fn execute_named(&mut self, name: &str, using: &[String]) -> Result<QueryResult> {
        let key = name.to_ascii_lowercase();
        let id = match self.named_prepared.get(&key) {
            Some(&id) if self.prepared.contains_key(&id) => id,
            _ => return Err(unknown_prepared(name, "EXECUTE")),
        };
        let params: Vec<Value> = using
            .iter()
            .map(|v| BindContext::user_variable(self, v))
            .collect();
        self.run_prepared(id, &params, "EXECUTE", false)
    }

    /// `{DEALLOCATE | DROP} PREPARE name`
    fn deallocate_named(&mut self, name: &str) -> Result<QueryResult> {
        let id = self
            .named_prepared
            .remove(&name.to_ascii_lowercase())
            .ok_or_else(|| unknown_prepared(name, "DEALLOCATE PREPARE"))?;
        self.close_prepared(id);
        Ok(QueryResult::ok(0))
    }

    // ---------------------------------------------------------------- statements

    fn run_statement(
        &mut self,
        parsed: &Parsed,
        params: &[Value],
        bound: Option<Arc<crate::dml::Bound>>,
    ) -> Result<QueryResult> {
        self.settle_commit()?;
        self.engine.questions.fetch_add(1, Ordering::Relaxed);
        self.refresh_grants();
        if !matches!(
            parsed.statement,
            Statement::ShowWarnings { .. } | Statement::ShowWarningCount { .. }
        ) {
            self.warnings.clear();
        }
        {
            let mut state = self.entry.state.lock();
            state.command = "Query";
            state.info = Some(parsed.text.clone());
            state.since = Some(Instant::now());
        }
        // Two atomic stores: the kill flag cleared, the deadline set or cleared.
        let max_ms = if execution_time_applies(parsed) {
            self.vars.hot().max_execution_time.unwrap_or(0)
        } else {
            0
        };
        self.entry
            .cancel
            .arm((max_ms > 0).then(|| Instant::now() + Duration::from_millis(max_ms)));
        self.statement_text = Some(parsed.text.clone());
        crate::scalar::arith::take_divisions_by_zero();
        crate::scalar::agg::take_concat_cuts();
        crate::scalar::func::take_last_insert_id_set();
        self.rows_before_limit = None;
        let mut result = self.dispatch(parsed, params, bound);
        self.note_row_counts(&result);
        if let Some(id) = crate::scalar::func::take_last_insert_id_set() {
            if let Ok(QueryResult::Ok { last_insert_id, .. }) = &mut result {
                *last_insert_id = id;
            }
            if result.is_ok() {
                self.last_insert_id = id;
            }
        }
        // What was divided by zero and not made an error: one warning each.
        let divisions_by_zero = crate::scalar::arith::take_divisions_by_zero();
        let concat_cuts = crate::scalar::agg::take_concat_cuts();
        if result.is_ok() {
            for _ in 0..divisions_by_zero.min(WARNINGS_MAX as u64) {
                self.add_warning("Warning", 1365, "Division by 0".to_string());
            }
            for row in concat_cuts {
                self.add_warning(
                    "Warning",
                    1260,
                    format!("Row {row} was cut by GROUP_CONCAT()"),
                );
            }
        }
        self.statement_text = None;
        // A file sent for a statement that did not take it is not kept for another.
        self.local_infile = None;
        {
            let mut state = self.entry.state.lock();
            state.command = "Sleep";
            state.info = None;
            state.since = Some(Instant::now());
        }
        result
    }

    fn dispatch(
        &mut self,
        parsed: &Parsed,
        params: &[Value],
        bound: Option<Arc<crate::dml::Bound>>,
    ) -> Result<QueryResult> {
        if let Some(bound) = bound {
            return self.run_bound(&bound, params);
        }
        match &parsed.statement {
            Statement::Empty => Err(Error::sql(1065, "42000", "Query was empty")),
            Statement::StartTransaction {
                read_only,
                consistent_snapshot,
            } => {
                self.commit_implicitly()?;
                // Beginning a transaction releases the table locks, as in MySQL.
                self.table_locks = None;
                self.begin(*read_only, true)?;
                if *consistent_snapshot {
                    if let Some(tx) = self.tx.as_mut() {
                        let _ = tx.snapshot();
                    }
                }
                Ok(QueryResult::ok(0))
            }
            Statement::SetTransaction {
                scope,
                isolation,
                read_only,
            } => self.set_transaction(*scope, *isolation, *read_only),
            Statement::SetCharacterSet { .. } => Ok(QueryResult::ok(0)),
            Statement::Do { exprs } => {
                for e in exprs {
                    self.eval_constant(e)?;
                }
                Ok(QueryResult::ok(0))
            }
            // Rebuilds and checks take the table's exclusive lock, which would wait
            // for the session's own table locks.
            Statement::AnalyzeTable { .. } | Statement::TableMaintenance { .. }
                if self.table_locks.is_some() =>
            {
                Err(crate::table_locks::ddl_refused())
            }
            Statement::AnalyzeTable { tables } => crate::maintenance::analyze(self, tables),
            Statement::TableMaintenance { op, tables, quick } => {
                crate::maintenance::execute(self, *op, tables, *quick)
            }
            Statement::LockTables { tables } => crate::table_locks::lock_tables(self, tables),
            Statement::FlushTables {
                with_read_lock: true,
            } => crate::table_locks::lock_all_for_read(self),
            // No table cache to flush (see `Statement::FlushTables`), no host cache
            // (`Statement::FlushHosts`).
            Statement::FlushTables { .. } | Statement::FlushHosts => Ok(QueryResult::ok(0)),
            Statement::FlushLogs => {
                self.require_global(Privileges::CREATE_USER, "RELOAD")?;
                self.engine.storage().flush_log()?;
                Ok(QueryResult::ok(0))
            }
            Statement::Shutdown => {
                self.require_global(Privileges::CREATE_USER, "SHUTDOWN")?;
                self.engine.request_shutdown()?;
                Ok(QueryResult::ok(0))
            }
            Statement::AlterTableKeys { table, .. } => {
                let (db, table) = Binder::new(self).table_ref(table)?;
                self.check_table(Privileges::ALTER, &db, &table)?;
                let storage_db = self.storage_database(&db, &table);
                self.engine.storage().table(&storage_db, &table)?;
                Ok(QueryResult::ok(0))
            }
            Statement::Account(statement) => accounts::execute(self, statement),
            Statement::SelectInto { .. } => {
                let bound = self.bind_statement(parsed)?;
                self.run_bound(&bound, params)
            }
            Statement::Prepare { name, source } => self.prepare_named(name, source),
            Statement::ExecutePrepared { name, using } => self.execute_named(name, using),
            Statement::DeallocatePrepare { name } => self.deallocate_named(name),
            Statement::LoadData(load) => crate::load::execute(self, load),
            Statement::AlterDatabase {
                name,
                charset,
                collation,
                read_only,
            } => crate::ddl::alter_database(
                self,
                name.as_deref(),
                charset.as_deref(),
                collation.as_deref(),
                *read_only,
            ),
            Statement::Sql(statement) => self.dispatch_sql(statement, parsed, params),
            other => crate::show::special(self, other),
        }
    }

    fn dispatch_sql(
        &mut self,
        statement: &ast::Statement,
        parsed: &Parsed,
        params: &[Value],
    ) -> Result<QueryResult> {
        use ast::Statement as S;
        match statement {
            S::Query(_) | S::Insert(_) | S::Update(_) | S::Delete(_) => {
                let bound = self.bind_statement(parsed)?;
                self.run_bound(&bound, params)
            }
            S::StartTransaction { .. } => {
                self.commit_implicitly()?;
                self.table_locks = None;
                self.begin(None, true)?;
                Ok(QueryResult::ok(0))
            }
            S::Commit { .. } => {
                self.commit()?;
                Ok(QueryResult::ok(0))
            }
            S::Rollback {
                savepoint: None, ..
            } => {
                self.rollback()?;
                Ok(QueryResult::ok(0))
            }
            S::Rollback {
                savepoint: Some(name),
                ..
            } => {
                let tx = self
                    .tx
                    .as_mut()
                    .ok_or_else(|| Error::UnknownSavepoint(name.value.clone()))?;
                self.engine
                    .storage()
                    .rollback_to_savepoint(tx, &name.value)?;
                Ok(QueryResult::ok(0))
            }
            S::Savepoint { name } => {
                if self.tx.is_none() {
                    // MySQL accepts SAVEPOINT outside a transaction (autocommit): a
                    // no-op; with autocommit off it opens the implicit transaction.
                    if self.autocommit() {
                        return Ok(QueryResult::ok(0));
                    }
                    self.begin(None, false)?;
                }
                let tx = self.tx.as_mut().expect("a transaction is open");
                tx.trx.savepoint(&name.value)?;
                Ok(QueryResult::ok(0))
            }
            S::ReleaseSavepoint { name } => {
                let tx = self
                    .tx
                    .as_mut()
                    .ok_or_else(|| Error::UnknownSavepoint(name.value.clone()))?;
                tx.trx.release_savepoint(&name.value)?;
                Ok(QueryResult::ok(0))
            }
            S::Use(u) => {
                let name = match u {
                    ast::Use::Object(n) | ast::Use::Database(n) | ast::Use::Schema(n) => {
                        crate::bind::object_name(n).join(".")
                    }
                    other => return Err(unsupported(other)),
                };
                self.use_database(&name)?;
                Ok(QueryResult::ok(0))
            }
            S::Set(set) => self.set(set),
            S::Kill { id, modifier } => {
                let connection = !matches!(modifier, Some(ast::KillType::Query));
                self.check_kill(*id)?;
                self.engine.kill(*id, connection)?;
                Ok(QueryResult::ok(0))
            }
            S::Explain {
                statement, analyze, ..
            } => self.explain(statement, *analyze, params),
            S::UnlockTables => crate::table_locks::unlock_tables(self),
            S::ShowDatabases { .. }
            | S::ShowSchemas { .. }
            | S::ShowTables { .. }
            | S::ShowColumns { .. }
            | S::ShowCreate { .. }
            | S::ShowVariables { .. }
            | S::ShowStatus { .. }
            | S::ShowProcessList { .. }
            | S::ShowCharset(_)
            | S::ShowCollation { .. }
            | S::ExplainTable { .. } => crate::show::show(self, statement),
            _ => {
                if self.table_locks.is_some() && !crate::temporary::keeps_transaction(statement) {
                    return Err(crate::table_locks::ddl_refused());
                }
                crate::ddl::check_privileges(self, statement)?;
                if !crate::temporary::keeps_transaction(statement) {
                    self.commit_implicitly()?;
                }
                // Waits for other sessions' LOCK TABLES of the statement's tables and
                // for a global read lock; held to the statement's end.
                let _metadata = crate::metadata_locks::for_statement(self, statement)?;
                crate::ddl::execute(self, statement, parsed)
            }
        }
    }

    /// Binds a query or DML statement.
    pub(crate) fn bind_statement(&mut self, parsed: &Parsed) -> Result<crate::dml::Bound> {
        match &parsed.statement {
            Statement::Sql(statement) => crate::dml::bind(self, statement),
            Statement::SelectInto { query, variables } => {
                crate::dml::bind_select_into(self, query, variables)
            }
            _ => Err(unsupported("preparing this statement")),
        }
    }

    pub(crate) fn run_bound(
        &mut self,
        bound: &crate::dml::Bound,
        params: &[Value],
    ) -> Result<QueryResult> {
        let read_only = bound.is_read_only();
        self.transact(read_only, |session, tx| {
            crate::dml::execute(session, bound, tx, params)
        })
    }

    fn explain(
        &mut self,
        statement: &ast::Statement,
        analyze: bool,
        params: &[Value],
    ) -> Result<QueryResult> {
        let bound = crate::dml::bind(self, statement)?;
        let crate::dml::Bound::Query(plan) = &bound else {
            let mut lines = Vec::new();
            bound.explain(&mut lines);
            return Ok(explain_result(lines));
        };
        if !analyze {
            let mut lines = Vec::new();
            plan.explain(0, &mut lines);
            return Ok(explain_result(lines));
        }
        let lines = self.transact(true, |session, tx| {
            session.with_exec(tx, params, |cx| exec::explain_analyze(plan, cx))
        })?;
        Ok(explain_result(lines))
    }

    // ---------------------------------------------------------------- transactions

    fn begin(&mut self, read_only: Option<bool>, explicit: bool) -> Result<()> {
        let next = std::mem::take(&mut self.next_tx);
        let isolation = next.isolation.unwrap_or(self.vars.hot().isolation);
        let read_only = read_only
            .or(next.read_only)
            .unwrap_or(self.vars.hot().transaction_read_only);
        let mut tx = self.engine.storage().begin(Some(isolation), read_only);
        tx.set_interrupt(self.entry.cancel.clone());
        if let Some(locks) = &self.table_locks {
            tx.share_locks_of(&locks.holder);
        }
        self.tx = Some(tx);
        self.tx_explicit = explicit;
        Ok(())
    }

    pub fn commit(&mut self) -> Result<()> {
        self.tx_explicit = false;
        match self.tx.take() {
            Some(tx) => self.commit_tx(tx),
            None => Ok(()),
        }
    }

    /// Commits `tx`, waiting for the log unless commits are deferred: then the
    /// ticket is kept for [`Session::take_commit_ticket`] (a later commit's ticket
    /// covers an earlier one: the log becomes durable in order).
    fn commit_tx(&mut self, tx: Transaction) -> Result<()> {
        let storage = self.engine.storage();
        if !self.defer_commit_acks {
            return storage.commit(tx);
        }
        let ticket = storage.commit_deferred(tx)?;
        if !ticket.is_empty() {
            self.commit_ticket = Some(ticket);
        }
        Ok(())
    }

    /// With `on`, a commit (COMMIT, an autocommit statement) returns once its
    /// changes are visible and its locks released, without waiting for the log to
    /// make it durable; the caller takes the ticket
    /// ([`Session::take_commit_ticket`]) and must not tell the client before the
    /// ticket is ready. The server does this so that a thread serving many
    /// connections runs others meanwhile. A ticket the caller leaves is waited for
    /// when the next statement begins.
    pub fn set_defer_commit_acks(&mut self, on: bool) {
        self.defer_commit_acks = on;
    }

    /// The commit the last statement left waiting for the log, if any.
    pub fn take_commit_ticket(&mut self) -> Option<tarn_catalog::CommitTicket> {
        self.commit_ticket.take()
    }

    /// Waits for a commit left waiting for the log (see `commit_ticket`). The ticket
    /// stays if the wait fails (the log failed): the caller then finds it not ready
    /// and must not send the commit's buffered OK.
    fn settle_commit(&mut self) -> Result<()> {
        if let Some(ticket) = &self.commit_ticket {
            ticket.wait()?;
        }
        self.commit_ticket = None;
        Ok(())
    }

    pub fn rollback(&mut self) -> Result<()> {
        self.tx_explicit = false;
        match self.tx.take() {
            Some(tx) => self.engine.storage().rollback(tx),
            None => Ok(()),
        }
    }

    /// DDL, BEGIN and SET autocommit = 1 commit the open transaction first.
    pub(crate) fn commit_implicitly(&mut self) -> Result<()> {
        self.commit()
    }

    /// Runs `f` in the session's transaction, opening one if needed, and ends it if
    /// this statement is its own transaction (autocommit).
    pub(crate) fn transact<T>(
        &mut self,
        read_only_statement: bool,
        f: impl FnOnce(&mut Session, &RefCell<Transaction>) -> Result<T>,
    ) -> Result<T> {
        let _ = read_only_statement;
        if self.tx.is_none() {
            self.begin(None, false)?;
        }
        let single = self.autocommit() && !self.tx_explicit;
        let mut tx = self.tx.take().expect("a transaction is open");
        tx.trx.begin_statement();
        let cell = RefCell::new(tx);
        let result = f(self, &cell);
        let mut tx = cell.into_inner();
        let storage = self.engine.storage().clone();
        match result {
            Ok(value) => {
                if single {
                    self.commit_tx(tx)?;
                } else {
                    tx.end_statement();
                    self.tx = Some(tx);
                }
                Ok(value)
            }
            Err(error) => {
                if single || matches!(error, Error::Deadlock) {
                    self.tx_explicit = false;
                    storage.rollback(tx)?;
                } else {
                    storage.rollback_statement(&mut tx)?;
                    tx.end_statement();
                    self.tx = Some(tx);
                }
                Err(error)
            }
        }
    }

    /// Hands the session the contents of `file`, which the client sent for the
    /// LOAD DATA LOCAL statement about to run. `complete` is false when the client
    /// sent more than `LOAD_DATA_LOCAL_BYTES_MAX` and the rest was discarded.
    pub fn set_local_infile(&mut self, file: String, data: Vec<u8>, complete: bool) {
        self.local_infile = Some(crate::load::LocalInfile {
            file,
            data,
            complete,
        });
    }

    pub(crate) fn take_local_infile(&mut self) -> Option<crate::load::LocalInfile> {
        self.local_infile.take()
    }

    /// Whether the server takes LOAD DATA LOCAL (the global `local_infile`).
    pub fn local_infile_enabled(&self) -> bool {
        self.engine
            .globals
            .read()
            .get("local_infile")
            .is_some_and(|v| crate::scalar::cast::to_i64(&v).unwrap_or(0) != 0)
    }

    /// Keeps what ROW_COUNT() and FOUND_ROWS() report after a statement's `result`.
    fn note_row_counts(&mut self, result: &Result<QueryResult>) {
        let rows = match result {
            Ok(QueryResult::Ok { affected_rows, .. }) => {
                self.row_count = i64::try_from(*affected_rows).unwrap_or(i64::MAX);
                return;
            }
            Err(_) => {
                self.row_count = -1;
                return;
            }
            Ok(QueryResult::Rows { chunks, .. }) => chunks.iter().map(|c| c.len() as u64).sum(),
            Ok(QueryResult::Streamed { rows }) => *rows,
        };
        self.row_count = -1;
        self.last_found_rows = self.rows_before_limit.take().unwrap_or(rows);
    }

    /// Runs `f` with an execution context over `tx`.
    pub(crate) fn with_exec<T>(
        &mut self,
        tx: &RefCell<Transaction>,
        params: &[Value],
        f: impl FnOnce(&ExecContext) -> Result<T>,
    ) -> Result<T> {
        let functions = self.fn_context();
        self.with_exec_using(tx, params, &functions, f)
    }

    /// [`Session::with_exec`] with the statement's function context (its NOW(), its
    /// statement id), for a statement that evaluates expressions row by row.
    pub(crate) fn with_exec_using<T>(
        &mut self,
        tx: &RefCell<Transaction>,
        params: &[Value],
        functions: &FnContext,
        f: impl FnOnce(&ExecContext) -> Result<T>,
    ) -> Result<T> {
        let memory = MemoryBudget::new(self.query_memory_bytes());
        let cancel: Arc<Cancel> = self.entry.cancel.clone();
        let cache = RefCell::new(HashMap::new());
        let rows_before_limit = Cell::new(None);
        let work_tables = crate::exec::cte::WorkTables::default();
        let cx = ExecContext {
            tx,
            params,
            functions,
            memory: &memory,
            cancel: &cancel,
            outer: Vec::new(),
            cache: &cache,
            profile: None,
            rows_before_limit: &rows_before_limit,
            work_tables: &work_tables,
            cte_max_recursion_depth: self
                .vars
                .hot()
                .cte_max_recursion_depth
                .unwrap_or(crate::limits::CTE_MAX_RECURSION_DEPTH_DEFAULT),
        };
        let result = f(&cx);
        if let Some(rows) = rows_before_limit.get() {
            self.rows_before_limit = Some(rows);
        }
        result
    }

    fn query_memory_bytes(&self) -> u64 {
        match self.vars.hot().query_memory_max_bytes.unwrap_or(0) {
            0 => crate::limits::QUERY_MEMORY_DEFAULT_BYTES,
            n => n.min(crate::limits::QUERY_MEMORY_MAX_BYTES_CEILING),
        }
    }

    pub(crate) fn fn_context(&self) -> FnContext {
        let utc_now = now();
        let time_zone = self.vars.hot().time_zone.clone();
        FnContext {
            now: time_zone
                .to_local(crate::scalar::tz::unix_micros(&utc_now))
                .unwrap_or(utc_now),
            utc_now,
            time_zone,
            div_precision_increment: self
                .vars
                .hot()
                .div_precision_increment
                .map_or(crate::scalar::arith::DIV_PRECISION_INCREMENT_DEFAULT, |v| {
                    v.clamp(0, 30) as u8
                }),
            // 0: a value past BIGINT's range (the variable's least is 4).
            group_concat_max_len: match self.vars.hot().group_concat_max_len.unwrap_or(0) {
                0 => usize::MAX,
                n => usize::try_from(n).unwrap_or(usize::MAX),
            },
            statement: crate::scalar::next_statement_id(),
            session: Some(self.link.clone()),
        }
    }

    fn set_transaction(
        &mut self,
        scope: TransactionScope,
        isolation: Option<IsolationLevel>,
        read_only: Option<bool>,
    ) -> Result<QueryResult> {
        match scope {
            TransactionScope::Next => {
                if self.tx.is_some() && self.tx_explicit {
                    return Err(Error::sql(
                        1568,
                        "25001",
                        "Transaction characteristics can't be changed while a transaction is in progress",
                    ));
                }
                if isolation.is_some() {
                    self.next_tx.isolation = isolation;
                }
                if read_only.is_some() {
                    self.next_tx.read_only = read_only;
                }
            }
            TransactionScope::Session | TransactionScope::Global => {
                let global = scope == TransactionScope::Global;
                if let Some(level) = isolation {
                    let v = Value::Bytes(level.name().as_bytes().to_vec());
                    self.set_variable("transaction_isolation", Some(&v), global)?;
                }
                if let Some(ro) = read_only {
                    self.set_variable(
                        "transaction_read_only",
                        Some(&Value::Int(ro as i64)),
                        global,
                    )?;
                }
            }
        }
        Ok(QueryResult::ok(0))
    }

    fn set_variable(&mut self, name: &str, value: Option<&Value>, global: bool) -> Result<()> {
        let lower = name.to_ascii_lowercase();
        if global {
            // MySQL needs SUPER or SYSTEM_VARIABLES_ADMIN; Tarn's stand-in is the
            // global CREATE USER privilege, which root's ALL PRIVILEGES includes.
            self.require_global(Privileges::CREATE_USER, "SUPER or SYSTEM_VARIABLES_ADMIN")?;
            self.engine.set_global_value(&lower, value, false)?;
            return Ok(());
        }
        let was_autocommit = self.autocommit();
        // SET SESSION x = DEFAULT takes the global value, as MySQL does.
        let globals = self.engine.globals.read().clone();
        self.vars.set(&lower, value, false, &globals)?;
        if crate::sysvars::spec(&lower).is_some_and(|s| s.name == "innodb_lock_wait_timeout") {
            self.publish_lock_wait_timeout();
        }
        if lower == "autocommit" && !was_autocommit && self.autocommit() {
            // Turning autocommit on commits the open transaction.
            self.commit()?;
        }
        Ok(())
    }

    fn set(&mut self, set: &ast::Set) -> Result<QueryResult> {
        match set {
            ast::Set::SingleAssignment {
                scope,
                hivevar: _,
                variable,
                values,
            } => {
                let global = matches!(scope, Some(ast::ContextModifier::Global));
                self.assign(&crate::bind::object_name(variable), values, global)?;
            }
            ast::Set::MultipleAssignments { assignments } => {
                for a in assignments {
                    let global = matches!(a.scope, Some(ast::ContextModifier::Global));
                    self.assign(
                        &crate::bind::object_name(&a.name),
                        std::slice::from_ref(&a.value),
                        global,
                    )?;
                }
            }
            ast::Set::SetNames { .. } | ast::Set::SetNamesDefault {} => {}
            ast::Set::SetTimeZone { value, .. } => {
                let v = self.eval_constant(value)?;
                self.set_variable("time_zone", Some(&v), false)?;
            }
            other => return Err(unsupported(other)),
        }
        Ok(QueryResult::ok(0))
    }

    /// `@name := value`, within the session's bound on user variables.
    pub(crate) fn set_user_variable(&mut self, name: &str, value: Value) -> Result<()> {
        let name = name.to_ascii_lowercase();
        if !self.user_vars.contains_key(&name) && self.user_vars.len() >= USER_VARIABLES_MAX {
            return Err(Error::OutOfResources(format!(
                "a session may hold at most {USER_VARIABLES_MAX} user variables"
            )));
        }
        self.user_vars.insert(name, value);
        Ok(())
    }

    fn assign(&mut self, name: &[String], values: &[ast::Expr], mut global: bool) -> Result<()> {
        let [value] = values else {
            return Err(Error::sql(
                1064,
                "42000",
                "You have an error in your SQL syntax: SET takes one value",
            ));
        };
        let joined = name.join(".");
        if let Some(user) = joined.strip_prefix('@').filter(|n| !n.starts_with('@')) {
            let v = self.eval_constant(value)?;
            return self.set_user_variable(user, v);
        }
        let mut var = joined.trim_start_matches("@@").to_ascii_lowercase();
        if let Some(rest) = var.strip_prefix("global.") {
            global = true;
            var = rest.to_string();
        } else if let Some(rest) = var.strip_prefix("session.").or(var.strip_prefix("local.")) {
            var = rest.to_string();
        }
        // SET x = DEFAULT; SET x = ON (a bare word is a string); SET x = @saved (a
        // user variable, which sqlparser reads as an identifier, is evaluated:
        // mysqldump restores its settings so).
        let v = match value {
            ast::Expr::Identifier(id) if id.value.eq_ignore_ascii_case("default") => None,
            ast::Expr::Identifier(id) if id.quote_style.is_none() && !id.value.starts_with('@') => {
                Some(Value::Bytes(id.value.clone().into_bytes()))
            }
            e => Some(self.eval_constant(e)?),
        };
        self.set_variable(&var, v.as_ref(), global)
    }

    /// Evaluates an expression without a table (SET, DO, DEFAULT).
    pub(crate) fn eval_constant(&mut self, e: &ast::Expr) -> Result<Value> {
        let (expr, _) = Binder::new(self).bind_constant(e)?;
        self.transact(true, |session, tx| {
            session.with_exec(tx, &[], |cx| {
                let chunk = Chunk::empty_rows(1);
                let ecx = crate::expr::EvalContext {
                    params: cx.params,
                    outer: &[],
                    functions: cx.functions,
                    subqueries: cx,
                };
                Ok(expr.eval(&chunk, &ecx)?.pop().unwrap_or(Value::Null))
            })
        })
    }

    pub(crate) fn set_last_insert_id(&mut self, id: u64) {
        self.last_insert_id = id;
    }

    pub(crate) fn lower_case_table_names(&self) -> bool {
        self.engine
            .globals
            .read()
            .get("lower_case_table_names")
            .and_then(|v| crate::scalar::cast::to_i64(&v))
            .unwrap_or(0)
            != 0
    }

    pub(crate) fn set_current_database(&mut self, db: Option<String>) {
        self.entry.state.lock().database = db.clone();
        self.database = db;
    }
}

fn explain_result(lines: Vec<String>) -> QueryResult {
    let columns = vec![OutputColumn::new("EXPLAIN", SqlType::TEXT, false)];
    QueryResult::rows(
        columns,
        lines
            .into_iter()
            .map(|l| vec![Value::Bytes(l.into_bytes())])
            .collect(),
    )
}

/// The wall clock as a DATETIME with microseconds, in UTC.
pub fn now() -> DateTime {
    let since = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    // Days from 0000-01-01 to 1970-01-01 in the proleptic calendar Date uses.
    let epoch = tarn_row::datetime::Date::new(1970, 1, 1).expect("a valid date");
    let base = DateTime::from_date(epoch).to_micros();
    DateTime::from_micros(base + since.as_micros() as u64)
        .unwrap_or_else(|_| DateTime::from_date(epoch))
}

pub(crate) fn is_system_database(name: &str) -> bool {
    matches!(
        name.to_ascii_lowercase().as_str(),
        "information_schema" | "performance_schema" | "mysql" | "sys"
    )
}

impl Session {
    /// The table `db.name` whose rows are in `storage_db` (`db`, or the hidden
    /// database of a temporary table); a missing one is 1146 naming `db.name`.
    fn table_in(&self, storage_db: &str, db: &str, name: &str) -> Result<Arc<Table>> {
        let table = self
            .engine
            .storage()
            .table(storage_db, name)
            .map_err(|e| match e {
                Error::UnknownTable(_) | Error::UnknownDatabase(_) => {
                    Error::UnknownTable(format!("{db}.{name}"))
                }
                e => e,
            })?;
        self.engine.refresh_statistics(&table);
        Ok(table)
    }
}

impl BindContext for Session {
    fn limit_parameter(&self, index: usize) {
        if let Some(params) = self.limit_params.borrow_mut().as_mut()
            && !params.contains(&index)
        {
            params.push(index);
        }
    }

    fn current_database(&self) -> Option<String> {
        self.database.clone()
    }

    fn table(&self, db: &str, name: &str) -> Result<Arc<Table>> {
        match self.temporary.database_of(db, name) {
            Some(hidden) => {
                *self.temporary_used.borrow_mut() = Some(name.to_string());
                self.table_in(hidden, db, name)
            }
            None => self.table_in(db, db, name),
        }
    }

    fn base_table(&self, db: &str, name: &str) -> Result<Arc<Table>> {
        self.table_in(db, db, name)
    }

    fn view(&self, db: &str, name: &str) -> Result<Option<String>> {
        // A temporary table hides a view of its name.
        if self.temporary.contains(db, name) {
            return Ok(None);
        }
        self.base_view(db, name)
    }

    fn base_view(&self, db: &str, name: &str) -> Result<Option<String>> {
        // A missing database has no views; the table lookup then reports the table
        // (1146), as MySQL does.
        match self.engine.storage().view(db, name) {
            Ok(view) => Ok(view.map(|v| v.sql)),
            Err(Error::UnknownDatabase(_)) => Ok(None),
            Err(e) => Err(e),
        }
    }

    fn check_base_table_access(&self, needed: Privileges, db: &str, table: &str) -> Result<()> {
        self.check_base_table(needed, db, table)
    }

    fn system_table(
        &self,
        db: &str,
        name: &str,
    ) -> Option<Result<(Vec<OutputColumn>, Vec<Vec<Value>>)>> {
        crate::show::system_table(self, db, name)
    }

    fn system_variable(&self, name: &str, global: bool) -> Result<Value> {
        let value = if global {
            self.engine.globals.read().get(name)
        } else {
            match name {
                "last_insert_id" | "identity" => Some(Value::UInt(self.last_insert_id)),
                "warning_count" => Some(Value::UInt(self.warnings.len() as u64)),
                "error_count" => Some(Value::UInt(
                    self.warnings.iter().filter(|w| w.level == "Error").count() as u64,
                )),
                _ => self
                    .vars
                    .get(name)
                    .or_else(|| self.engine.globals.read().get(name)),
            }
        };
        value.ok_or_else(|| Error::sql(1193, "HY000", format!("Unknown system variable '{name}'")))
    }

    fn user_variable(&self, name: &str) -> Value {
        self.user_vars
            .get(&name.to_ascii_lowercase())
            .cloned()
            .unwrap_or(Value::Null)
    }

    fn session_function(&self, name: &str) -> Option<Value> {
        let text = |s: &str| Value::Bytes(s.as_bytes().to_vec());
        let value = match name {
            "DATABASE" | "SCHEMA" => self.database.as_deref().map_or(Value::Null, text),
            "USER" | "SESSION_USER" | "SYSTEM_USER" => {
                text(&format!("{}@{}", self.entry.user, self.entry.host))
            }
            "CURRENT_USER" => text(&format!("{}@{}", self.identity.user, self.identity.host)),
            "VERSION" => self
                .vars
                .get("version")
                .unwrap_or_else(|| text("8.0.36-tarn-0.1")),
            "CONNECTION_ID" => Value::UInt(self.entry.id),
            "LAST_INSERT_ID" => Value::UInt(self.last_insert_id),
            "ROW_COUNT" => Value::Int(self.row_count),
            "FOUND_ROWS" => Value::UInt(self.last_found_rows),
            _ => return None,
        };
        if matches!(
            name,
            "DATABASE" | "SCHEMA" | "LAST_INSERT_ID" | "ROW_COUNT" | "FOUND_ROWS"
        ) {
            self.folded_session_function.set(true);
        }
        Some(value)
    }

    fn check_table_access(&self, needed: Privileges, db: &str, table: &str) -> Result<()> {
        self.check_table(needed, db, table)
    }

    fn only_full_group_by(&self) -> bool {
        self.vars.hot().only_full_group_by
    }

    fn pipes_as_concat(&self) -> bool {
        self.vars.hot().pipes_as_concat
    }

    fn statement_text(&self) -> Option<String> {
        self.statement_text.clone()
    }

    fn normalize_table_name(&self, name: &str) -> String {
        if self.lower_case_table_names() || is_system_database(name) {
            name.to_ascii_lowercase()
        } else {
            name.to_string()
        }
    }
}
