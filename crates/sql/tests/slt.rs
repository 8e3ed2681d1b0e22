//! Golden SQL files in sqllogictest format: every `tests/slt/**/*.slt` file runs as
//! its own test case against a fresh engine on a fresh data directory.
//!
//! ```text
//! cargo test -p tarn-sql --test slt              # every file
//! cargo test -p tarn-sql --test slt -- ddl/      # files whose path contains "ddl/"
//! TARN_SLT_MARIADB=127.0.0.1:3306 cargo test -p tarn-sql --test slt
//!                                                # the same files against MariaDB
//! ```
//!
//! The files are plain MySQL (files named `tarn_*.slt` may use Tarn-only syntax and are
//! skipped against MariaDB), so they can be checked against a real server. What the
//! harness adds to the format of the `sqllogictest` crate:
//!
//! - **Errors** read `ERROR <code> (<sqlstate>): <message>`, as the mysql client prints
//!   them, so `statement error ERROR 1050` asserts the MySQL error number (the text
//!   after `error` is a regular expression searched in that line), and
//!   `statement error (42S01)` the SQLSTATE.
//! - **Values** print as MySQL sends them in the text protocol; NULL is `NULL` and the
//!   empty string `(empty)`. Column types in `query` headers (`I`, `T`, `R`) are not
//!   checked, only their number against the result's columns.
//! - **Affected rows**: `statement count N` checks the affected-row count of an INSERT,
//!   UPDATE, DELETE or REPLACE (MySQL's: an ON DUPLICATE KEY UPDATE that changes a row
//!   counts 2).
//! - **restart**: a line `restart` alone closes every session and the engine (the
//!   storage engine shuts down and checkpoints) and opens the same data directory again.
//!   Sessions after it are new connections: they have no current database (the file
//!   must `USE` one again), no user variables, and session variables back at their
//!   global values; a transaction left open before the restart is rolled back.
//!   Against MariaDB a restart is a reconnection, which has the same visible effect on
//!   a session. `sortmode` and `hash-threshold` controls reset at a restart.
//! - `connection <name>` records (from the crate) open further sessions on the same
//!   engine.
//! - `LOGIN 'user'@'host' [IDENTIFIED BY 'pw']` as a statement (in `tarn_*.slt` files
//!   only) makes the record's connection a new session of that account, as the server
//!   would after checking the password; a wrong password or unknown user is 1045.
//!   Every connection starts as an internal superuser (root@localhost).
//!
//! A file goes on after a failed record and reports every failure at the end, each
//! with the file and line of the record, the SQL, and the expected and actual results
//! (`TARN_SLT_FAIL_FAST=1` stops each file at its first failure instead).

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use libtest_mimic::{Arguments, Failed, Trial};
use sqllogictest::{DBOutput, DefaultColumnType, Record, Runner, StatementExpect};
use tarn_common::settings::Settings;
use tarn_sql::{Engine, QueryResult, Session};

/// The environment variable naming a MariaDB (or MySQL) server, `host:port`, to run the
/// files against instead of Tarn. `TARN_SLT_MARIADB_USER` and
/// `TARN_SLT_MARIADB_PASSWORD` give the account (default root, no password);
/// `TARN_SLT_MARIADB_CLIENT` the client program (default `mariadb`).
const MARIADB_VAR: &str = "TARN_SLT_MARIADB";

fn main() {
    let args = Arguments::from_args();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/slt");
    let mut files = Vec::new();
    collect_files(&root, &mut files);
    files.sort();
    assert!(!files.is_empty(), "no .slt files under {}", root.display());
    let mariadb = std::env::var(MARIADB_VAR).ok().filter(|v| !v.is_empty());
    let trials = files
        .into_iter()
        .map(|path| {
            let name = path
                .strip_prefix(&root)
                .unwrap_or(&path)
                .to_string_lossy()
                .into_owned();
            let tarn_only = path
                .file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("tarn_"));
            let target = match &mariadb {
                Some(address) => Target::Mariadb(address.clone()),
                None => Target::Tarn,
            };
            let ignored = tarn_only && matches!(target, Target::Mariadb(_));
            Trial::test(name, move || run_file(&path, &target)).with_ignored_flag(ignored)
        })
        .collect();
    libtest_mimic::run(&args, trials).exit();
}

fn collect_files(dir: &Path, files: &mut Vec<PathBuf>) {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    for entry in entries {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            collect_files(&path, files);
        } else if path.extension().is_some_and(|e| e == "slt") {
            files.push(path);
        }
    }
}

#[derive(Clone)]
enum Target {
    Tarn,
    /// `host:port` of a MariaDB server, reached through its command-line client.
    Mariadb(String),
}

// ------------------------------------------------------------------ running a file

/// A file split at its `restart` lines. Each part keeps the file's line numbers (it is
/// padded with the blank lines before it) so failures point at the right line.
fn split_at_restarts(text: &str) -> Vec<String> {
    let mut parts = Vec::new();
    let mut current = String::new();
    for (index, line) in text.lines().enumerate() {
        if line.trim() == "restart" {
            parts.push(std::mem::take(&mut current));
            // Lines 1 to index + 1 (this one) are blank in the next part.
            current.push_str(&"\n".repeat(index + 1));
            continue;
        }
        current.push_str(line);
        current.push('\n');
    }
    parts.push(current);
    parts
}

/// What the harness needs to know about each record before running it.
fn wants_count(record: &Record<DefaultColumnType>) -> bool {
    matches!(
        record,
        Record::Statement {
            expected: StatementExpect::Count(_),
            ..
        }
    )
}

fn run_file(path: &Path, target: &Target) -> Result<(), Failed> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let name = path.display().to_string();
    let mut parts = Vec::new();
    for part in split_at_restarts(&text) {
        let records = sqllogictest::parse_with_name::<DefaultColumnType>(&part, name.as_str())
            .map_err(|e| format!("{name}: parse error: {e}"))?;
        parts.push(records);
    }
    match target {
        Target::Tarn => run_on_tarn(parts, &name),
        Target::Mariadb(address) => run_on_mariadb(parts, address, &name),
    }
}

/// What running a file found.
#[derive(Default)]
struct Outcome {
    /// Statements and queries run.
    records_run: usize,
    /// One report per failed record: the file and line, the SQL, expected and actual.
    failures: Vec<String>,
}

impl Outcome {
    fn into_result(self, file: &str) -> Result<(), Failed> {
        if self.failures.is_empty() {
            return Ok(());
        }
        let mut report = format!(
            "{} of {} statements and queries failed in {file}:\n",
            self.failures.len(),
            self.records_run
        );
        for (index, failure) in self.failures.iter().enumerate() {
            report.push_str(&format!(
                "\n--- failure {} ---\n{}",
                index + 1,
                failure.trim_end()
            ));
            report.push('\n');
        }
        Err(report.into())
    }
}

/// Set to stop a file at its first failure (later records often fail only because of
/// an earlier one).
const FAIL_FAST_VAR: &str = "TARN_SLT_FAIL_FAST";

/// Runs the records of one part, going on after a failure unless `TARN_SLT_FAIL_FAST`
/// is set. Returns false to stop the file.
fn run_part<D, M>(
    runner: &mut Runner<D, M>,
    records: Vec<Record<DefaultColumnType>>,
    count_wanted: &AtomicBool,
    outcome: &mut Outcome,
) -> bool
where
    D: sqllogictest::AsyncDB<ColumnType = DefaultColumnType>,
    M: sqllogictest::MakeConnection<Conn = D>,
{
    let fail_fast = std::env::var_os(FAIL_FAST_VAR).is_some_and(|v| !v.is_empty());
    for record in records {
        match record {
            Record::Halt { .. } => return false,
            Record::Statement { .. } | Record::Query { .. } => outcome.records_run += 1,
            _ => {}
        }
        count_wanted.store(wants_count(&record), Ordering::Relaxed);
        if let Err(error) = runner.run(record) {
            outcome.failures.push(format!("{}", error.display(false)));
            if fail_fast {
                return false;
            }
        }
    }
    true
}

// ------------------------------------------------------------------ Tarn

/// A data directory under `TARN_TEST_DIR` (or the system temporary directory).
fn test_dir() -> tempfile::TempDir {
    let base = std::env::var_os("TARN_TEST_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(std::env::temp_dir);
    std::fs::create_dir_all(&base).expect("test directory root");
    tempfile::Builder::new()
        .prefix("slt-")
        .tempdir_in(base)
        .expect("temporary directory")
}

/// Small pools and logs: many files run at once.
fn settings(dir: &Path) -> Settings {
    Settings {
        data_dir: dir.to_path_buf(),
        buffer_pool_size_bytes: 16 << 20,
        buffer_pool_instances: 2,
        io_threads: 1,
        log_file_size_bytes: 4 << 20,
        log_buffer_size_bytes: 1 << 20,
        // A restart here is a clean shutdown (it checkpoints), so commits need not wait
        // for fsync; crash recovery has its own tests.
        flush_log_at_commit: 2,
        lock_wait_timeout_s: 2,
        ..Settings::default()
    }
}

fn run_on_tarn(parts: Vec<Vec<Record<DefaultColumnType>>>, name: &str) -> Result<(), Failed> {
    let mut outcome = Outcome::default();
    let dir = test_dir();
    let settings = settings(dir.path());
    let count_wanted = Arc::new(AtomicBool::new(false));
    for records in parts {
        let engine = Engine::open(&settings).map_err(|e| format!("opening the engine: {e}"))?;
        {
            let make_engine = engine.clone();
            let mut runner = Runner::new(move || {
                let session = make_engine.session("root", "localhost");
                async move { Ok::<_, SqlError>(TarnConnection { session }) }
            });
            runner.with_column_validator(column_count_validator);
            let go_on = run_part(&mut runner, records, &count_wanted, &mut outcome);
            runner.shutdown();
            drop(runner);
            if !go_on {
                break;
            }
        }
        close_engine(engine)?;
    }
    outcome.into_result(name)
}

/// Drops the last reference to the engine, so the storage engine stops its threads and
/// checkpoints; fails if a session or table handle still holds it.
fn close_engine(engine: Arc<Engine>) -> Result<(), Failed> {
    let engine = Arc::into_inner(engine)
        .ok_or("restart: the engine is still referenced after every session closed")?;
    let mut storage = engine.storage().clone();
    drop(engine);
    // A background ANALYZE (Engine::refresh_statistics) may still hold the storage
    // engine for a moment.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        match Arc::try_unwrap(storage) {
            Ok(_) => return Ok(()),
            Err(_) if std::time::Instant::now() >= deadline => {
                return Err(
                    "restart: the storage engine is still referenced after the engine closed"
                        .into(),
                );
            }
            Err(still_held) => {
                storage = still_held;
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
        }
    }
}

/// Only the number of columns is checked, not their types.
#[allow(clippy::ptr_arg)]
fn column_count_validator(
    actual: &Vec<DefaultColumnType>,
    expected: &Vec<DefaultColumnType>,
) -> bool {
    actual.len() == expected.len()
}

/// A MySQL error as the mysql client prints it.
#[derive(Debug, Clone)]
struct SqlError {
    code: u16,
    sqlstate: String,
    message: String,
}

impl std::fmt::Display for SqlError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "ERROR {} ({}): {}",
            self.code, self.sqlstate, self.message
        )
    }
}

impl std::error::Error for SqlError {}

impl From<tarn_common::Error> for SqlError {
    fn from(e: tarn_common::Error) -> SqlError {
        SqlError {
            code: e.mysql_code(),
            sqlstate: e.sqlstate().to_string(),
            message: e.to_string(),
        }
    }
}

struct TarnConnection {
    session: Session,
}

impl sqllogictest::DB for TarnConnection {
    type Error = SqlError;
    type ColumnType = DefaultColumnType;

    fn run(&mut self, sql: &str) -> Result<DBOutput<DefaultColumnType>, SqlError> {
        if let Some(login) = parse_login(sql) {
            self.session = login_session(self.session.engine(), &login)?;
            return Ok(DBOutput::StatementComplete(0));
        }
        let mut results = self.session.execute(sql)?;
        Ok(match results.pop() {
            None => DBOutput::StatementComplete(0),
            Some(QueryResult::Ok { affected_rows, .. }) => {
                DBOutput::StatementComplete(affected_rows)
            }
            Some(QueryResult::Streamed { .. }) => unreachable!("the runner sets no row sink"),
            Some(result @ QueryResult::Rows { .. }) => {
                let QueryResult::Rows { columns, .. } = &result else {
                    unreachable!()
                };
                let types = columns.iter().map(|c| column_type(&c.ty)).collect();
                let rows = result
                    .all_rows()
                    .iter()
                    .map(|row| {
                        row.iter()
                            .zip(columns)
                            .map(|(v, c)| value_text(v, c.ty))
                            .collect()
                    })
                    .collect();
                DBOutput::Rows { types, rows }
            }
        })
    }

    fn engine_name(&self) -> &str {
        "tarn"
    }

    fn error_sql_state(error: &SqlError) -> Option<String> {
        Some(error.sqlstate.clone())
    }
}

/// The harness's `LOGIN 'user'@'host' [IDENTIFIED BY 'password']` (files named
/// `tarn_*.slt` only): the connection becomes a new session authenticated as the
/// account `user` connecting from `host` would log in as, checking the password
/// against the stored hash as the server does.
struct Login {
    user: String,
    host: String,
    password: String,
}

fn parse_login(sql: &str) -> Option<Login> {
    let rest = sql.trim().strip_prefix("LOGIN ")?.trim();
    let quoted = |s: &str| -> Option<(String, usize)> {
        let body = s.strip_prefix('\'')?;
        let end = body.find('\'')?;
        Some((body[..end].to_string(), end + 2))
    };
    let (user, used) = quoted(rest)?;
    let rest = rest[used..].strip_prefix('@')?;
    let (host, used) = quoted(rest)?;
    let rest = rest[used..].trim();
    let password = match rest.strip_prefix("IDENTIFIED BY ") {
        Some(pw) => quoted(pw.trim())?.0,
        None if rest.is_empty() => String::new(),
        None => return None,
    };
    Some(Login {
        user,
        host,
        password,
    })
}

fn login_session(engine: &Arc<Engine>, login: &Login) -> Result<Session, SqlError> {
    let denied = || SqlError {
        code: 1045,
        sqlstate: "28000".into(),
        message: format!(
            "Access denied for user '{}'@'{}' (using password: {})",
            login.user,
            login.host,
            if login.password.is_empty() {
                "NO"
            } else {
                "YES"
            }
        ),
    };
    let account = engine
        .find_account(&login.user, &login.host)
        .ok_or_else(denied)?;
    let given = account.plugin.hash(login.password.as_bytes());
    if given != account.stored_hash {
        return Err(denied());
    }
    Ok(engine.session_for(&account, &login.host))
}

fn column_type(ty: &tarn_sql::SqlType) -> DefaultColumnType {
    use tarn_sql::SqlType;
    match ty {
        SqlType::Int { .. } | SqlType::UInt { .. } => DefaultColumnType::Integer,
        SqlType::Decimal { .. } | SqlType::Float | SqlType::Double => {
            DefaultColumnType::FloatingPoint
        }
        _ => DefaultColumnType::Text,
    }
}

/// A value as the text protocol sends it, with sqllogictest's NULL and empty string.
fn value_text(value: &tarn_row::Value, ty: tarn_sql::SqlType) -> String {
    match tarn_sql::scalar::cast::to_text_as(value, ty) {
        None => "NULL".to_string(),
        Some(bytes) if bytes.is_empty() => "(empty)".to_string(),
        Some(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
    }
}

// ------------------------------------------------------------------ MariaDB

fn run_on_mariadb(
    parts: Vec<Vec<Record<DefaultColumnType>>>,
    address: &str,
    name: &str,
) -> Result<(), Failed> {
    let mut outcome = Outcome::default();
    let count_wanted = Arc::new(AtomicBool::new(false));
    for records in parts {
        let address = address.to_string();
        let wanted = count_wanted.clone();
        let mut runner = Runner::new(move || {
            let connection = MariadbConnection::connect(&address, wanted.clone());
            async move { connection }
        });
        let go_on = run_part(&mut runner, records, &count_wanted, &mut outcome);
        runner.shutdown();
        if !go_on {
            break;
        }
    }
    outcome.into_result(name)
}

/// One `mariadb` client process in batch mode: statements go to its standard input,
/// each followed by a marker query, and its output (errors included) is read up to the
/// marker.
struct MariadbConnection {
    child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
    count_wanted: Arc<AtomicBool>,
}

const END_MARKER: &str = "#slt-end-of-statement#";

impl MariadbConnection {
    fn connect(address: &str, count_wanted: Arc<AtomicBool>) -> Result<Self, SqlError> {
        let (host, port) = address.rsplit_once(':').unwrap_or((address, "3306"));
        let client = std::env::var("TARN_SLT_MARIADB_CLIENT").unwrap_or("mariadb".into());
        let user = std::env::var("TARN_SLT_MARIADB_USER").unwrap_or("root".into());
        let mut command = format!(
            "exec {client} --host={host} --port={port} --user={user} --batch --skip-column-names --force --unbuffered --default-character-set=utf8mb4"
        );
        if let Ok(password) = std::env::var("TARN_SLT_MARIADB_PASSWORD") {
            command.push_str(&format!(" --password={password}"));
        }
        command.push_str(" 2>&1");
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(&command)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|e| harness_error(format!("starting {client}: {e}")))?;
        let input = child.stdin.take().expect("piped stdin");
        let output = BufReader::new(child.stdout.take().expect("piped stdout"));
        Ok(MariadbConnection {
            child,
            input,
            output,
            count_wanted,
        })
    }

    /// Sends `sql` and returns the lines it printed, or the first error line.
    fn exchange(&mut self, sql: &str) -> Result<Vec<String>, SqlError> {
        let sql = sql.trim().trim_end_matches(';');
        let mut text = format!("{sql};\n");
        if self.count_wanted.load(Ordering::Relaxed) {
            text.push_str("SELECT ROW_COUNT();\n");
        }
        text.push_str(&format!("SELECT '{END_MARKER}';\n"));
        self.input
            .write_all(text.as_bytes())
            .and_then(|()| self.input.flush())
            .map_err(|e| harness_error(format!("writing to the client: {e}")))?;
        let mut lines = Vec::new();
        let mut error = None;
        loop {
            let mut line = String::new();
            let read = self
                .output
                .read_line(&mut line)
                .map_err(|e| harness_error(format!("reading from the client: {e}")))?;
            if read == 0 {
                return Err(harness_error(format!(
                    "the client exited; it printed: {}",
                    lines.join("\n")
                )));
            }
            let line = line.trim_end_matches(['\n', '\r']).to_string();
            if line == END_MARKER {
                break;
            }
            if error.is_none() {
                error = parse_client_error(&line);
            }
            lines.push(line);
        }
        match error {
            Some(e) => Err(e),
            None => Ok(lines),
        }
    }
}

impl Drop for MariadbConnection {
    fn drop(&mut self) {
        let _ = self.input.write_all(b"quit\n");
        let _ = self.child.wait();
    }
}

impl sqllogictest::DB for MariadbConnection {
    type Error = SqlError;
    type ColumnType = DefaultColumnType;

    fn run(&mut self, sql: &str) -> Result<DBOutput<DefaultColumnType>, SqlError> {
        let mut lines = self.exchange(sql)?;
        if self.count_wanted.load(Ordering::Relaxed) {
            let count = lines.pop().and_then(|l| l.trim().parse::<i64>().ok());
            return Ok(DBOutput::StatementComplete(count.unwrap_or(0).max(0) as u64));
        }
        if lines.is_empty() {
            return Ok(DBOutput::StatementComplete(0));
        }
        let rows: Vec<Vec<String>> = lines
            .iter()
            .map(|line| {
                line.split('\t')
                    .map(|v| match v {
                        "" => "(empty)".to_string(),
                        v => v.to_string(),
                    })
                    .collect()
            })
            .collect();
        let types = vec![DefaultColumnType::Any; rows[0].len()];
        Ok(DBOutput::Rows { types, rows })
    }

    fn engine_name(&self) -> &str {
        "mariadb"
    }

    fn error_sql_state(error: &SqlError) -> Option<String> {
        Some(error.sqlstate.clone())
    }
}

/// `ERROR 1050 (42S01) at line 3: Table 't' already exists`.
fn parse_client_error(line: &str) -> Option<SqlError> {
    let rest = line.strip_prefix("ERROR ")?;
    let (code, rest) = rest.split_once(' ')?;
    let code = code.parse().ok()?;
    let rest = rest.strip_prefix('(')?;
    let (sqlstate, rest) = rest.split_once(')')?;
    let message = match rest.split_once(": ") {
        Some((_, message)) => message,
        None => rest,
    };
    Some(SqlError {
        code,
        sqlstate: sqlstate.to_string(),
        message: message.to_string(),
    })
}

fn harness_error(message: String) -> SqlError {
    SqlError {
        code: 0,
        sqlstate: "HY000".to_string(),
        message: format!("slt harness: {message}"),
    }
}
