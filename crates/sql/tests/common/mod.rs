//! What the engine-level test files share. Each file uses some of it.
#![allow(dead_code)]

use std::sync::Arc;

use tarn_common::Result;
use tarn_common::settings::Settings;
use tarn_row::Value;
use tarn_sql::{Engine, QueryResult, Session};

/// An engine over a fresh data directory under `TARN_TEST_DIR` (or the system's
/// temporary directory), named `prefix...`, with `settings` but that directory. The
/// directory goes when the returned guard drops.
pub fn engine_with(prefix: &str, settings: Settings) -> (tempfile::TempDir, Arc<Engine>) {
    let base = std::env::var("TARN_TEST_DIR")
        .unwrap_or_else(|_| std::env::temp_dir().display().to_string());
    std::fs::create_dir_all(&base).expect("the test directory exists");
    let dir = tempfile::Builder::new()
        .prefix(prefix)
        .tempdir_in(base)
        .expect("a temporary directory");
    let settings = Settings {
        data_dir: dir.path().to_path_buf(),
        ..settings
    };
    let engine = Engine::open(&settings).expect("the engine opens");
    (dir, engine)
}

/// The last result of `sql`; panics, naming the statement, if it fails.
pub fn run(session: &mut Session, sql: &str) -> QueryResult {
    session
        .execute(sql)
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
        .pop()
        .expect("a result")
}

/// Each row of the last result of `sql` as one line: its values' text joined by
/// spaces.
pub fn lines(session: &mut Session, sql: &str) -> Vec<String> {
    run(session, sql)
        .all_rows()
        .into_iter()
        .map(|r| r.iter().map(Value::to_string).collect::<Vec<_>>().join(" "))
        .collect()
}

/// The rows of the last result of `sql` (none for a statement without rows);
/// panics, naming the statement, if it fails.
pub fn rows(session: &mut Session, sql: &str) -> Vec<Vec<Value>> {
    let mut results = session
        .execute(sql)
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    results.pop().map(|r| r.all_rows()).unwrap_or_default()
}

/// A value as the text protocol shows it (`NULL` for NULL).
pub fn text(v: &Value) -> String {
    tarn_sql::scalar::cast::to_text(v)
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_else(|| "NULL".into())
}

/// The MySQL error number of `result`, 0 if it succeeded.
pub fn code(result: Result<Vec<QueryResult>>) -> u16 {
    match result {
        Ok(_) => 0,
        Err(e) => e.mysql_code(),
    }
}

/// The error `sql` fails with: number, SQLSTATE and message; panics if it
/// succeeds.
pub fn error(session: &mut Session, sql: &str) -> (u16, &'static str, String) {
    match session.execute(sql) {
        Ok(results) => panic!("{sql}: expected an error, got {results:?}"),
        Err(e) => (e.mysql_code(), e.sqlstate(), e.to_string()),
    }
}
