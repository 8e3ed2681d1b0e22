//! Rows and transactions larger than the redo log, with a 4 MiB log (one file).
//!
//! The log holds the undo of active transactions, so an active transaction holds the
//! checkpoint back. Before the fix a 17 MB row waited for log space for ever, and a
//! transaction larger than the log waited 30 s and failed. Now a row whose long values
//! exceed 10% of the log is refused up front (1118), a transaction larger than the log
//! commits (its undo is carried forward so the checkpoint can pass its older log), and
//! one whose undo alone outgrows the log fails with 1197. Every step runs under a
//! timeout, so a hang fails the test instead of hanging it. The crash test runs this
//! test binary again as a child that aborts with a large transaction open.

use std::path::Path;
use std::sync::Arc;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use tarn_common::settings::Settings;
use tarn_row::Value;
use tarn_sql::{Engine, Session};

/// Bytes of each row `insert_rows` writes (stored inline with 16 KiB pages).
const ROW_BYTES: i64 = 3000;

/// Set in the child process of the crash test: its data directory.
const CHILD_DIR_ENV: &str = "TARN_REDO_CAPACITY_CHILD_DIR";

fn test_dir() -> tempfile::TempDir {
    let base = std::env::var("TARN_TEST_DIR")
        .unwrap_or_else(|_| std::env::temp_dir().display().to_string());
    std::fs::create_dir_all(&base).expect("the test directory exists");
    tempfile::Builder::new()
        .prefix("redo-capacity")
        .tempdir_in(base)
        .expect("a temporary directory")
}

/// A 4 MiB redo log in one file: the ring holds a little under 4 MiB.
fn settings(dir: &Path) -> Settings {
    Settings {
        data_dir: dir.to_path_buf(),
        buffer_pool_size_bytes: 16 << 20,
        log_file_size_bytes: 4 << 20,
        log_files: 1,
        log_buffer_size_bytes: 1 << 20,
        lock_wait_timeout_s: 2,
        ..Settings::default()
    }
}

/// Runs `f` on its own thread; fails the test if it takes longer than `seconds`.
fn within<T: Send + 'static>(
    what: &str,
    seconds: u64,
    f: impl FnOnce() -> T + Send + 'static,
) -> T {
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = sender.send(f());
    });
    receiver
        .recv_timeout(Duration::from_secs(seconds))
        .unwrap_or_else(|_| panic!("{what} did not finish within {seconds} s (a hang)"))
}

fn run(session: &mut Session, sql: &str) {
    if let Err(error) = session.execute(sql) {
        panic!("{sql}: {error}");
    }
}

/// The MySQL error of `sql`, which must fail: (number, SQLSTATE, message).
fn error_of(session: &mut Session, sql: &str) -> (u16, &'static str, String) {
    match session.execute(sql) {
        Ok(_) => panic!("{}: expected an error", &sql[..sql.len().min(80)]),
        Err(e) => (e.mysql_code(), e.sqlstate(), e.to_string()),
    }
}

fn int(session: &mut Session, sql: &str) -> i64 {
    let mut results = session
        .execute(sql)
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    let rows = results.pop().expect("a result").all_rows();
    match &rows[0][0] {
        Value::Int(v) => *v,
        Value::UInt(v) => *v as i64,
        Value::Null => 0,
        other => tarn_sql::scalar::cast::to_i64(other).expect("an integer"),
    }
}

/// Opens the engine in `dir` on a thread under a timeout (recovery included).
fn open(dir: &Path) -> Arc<Engine> {
    let settings = settings(dir);
    within("opening the engine", 120, move || {
        Engine::open(&settings).expect("the engine opens")
    })
}

/// `rows` rows of `ROW_BYTES` bytes into `t.b` from `first` on, 1,000 per INSERT.
fn insert_rows(session: &mut Session, first: i64, rows: i64) {
    for batch in (first..first + rows).step_by(1000) {
        let values: Vec<String> = (batch..(batch + 1000).min(first + rows))
            .map(|id| format!("({id}, REPEAT('y', {ROW_BYTES}))"))
            .collect();
        run(
            session,
            &format!("INSERT INTO b VALUES {}", values.join(",")),
        );
    }
}

fn table_digest(session: &mut Session) -> (i64, i64) {
    (
        int(session, "SELECT COUNT(*) FROM b"),
        int(session, "SELECT COALESCE(SUM(LENGTH(v)), 0) FROM b"),
    )
}

fn setup(session: &mut Session) {
    run(
        session,
        "CREATE DATABASE t; USE t; CREATE TABLE b (id INT PRIMARY KEY, v LONGBLOB)",
    );
}

#[test]
fn a_row_whose_long_values_exceed_a_tenth_of_the_log_is_refused() {
    let dir = test_dir();
    let engine = open(dir.path());
    let mut session = engine.session("root", "localhost");
    setup(&mut session);
    let session = within("the big row", 120, move || {
        // Autocommit: the statement fails before anything changes.
        let (code, sqlstate, message) = error_of(
            &mut session,
            "INSERT INTO b VALUES (1, REPEAT('x', 17000000))",
        );
        assert_eq!((code, sqlstate), (1118, "42000"), "{message}");
        assert!(
            message.contains("10% of redo log size") && message.contains("log_file_size"),
            "{message}"
        );
        assert_eq!(table_digest(&mut session), (0, 0));

        // In a transaction only the statement is rolled back; the transaction goes
        // on and commits what it did before and after.
        run(&mut session, "BEGIN");
        run(
            &mut session,
            "INSERT INTO b VALUES (1, REPEAT('a', 100000))",
        );
        let (code, ..) = error_of(
            &mut session,
            "INSERT INTO b VALUES (2, REPEAT('x', 17000000))",
        );
        assert_eq!(code, 1118);
        let (code, ..) = error_of(
            &mut session,
            "UPDATE b SET v = REPEAT('x', 17000000) WHERE id = 1",
        );
        assert_eq!(code, 1118);
        run(
            &mut session,
            "INSERT INTO b VALUES (3, REPEAT('c', 300000))",
        );
        run(&mut session, "COMMIT");
        assert_eq!(table_digest(&mut session), (2, 400000));

        // A long value within the bound is fine, and the log keeps working.
        run(
            &mut session,
            "UPDATE b SET v = REPEAT('d', 350000) WHERE id = 1",
        );
        insert_rows(&mut session, 10, 5000);
        assert_eq!(
            table_digest(&mut session),
            (5002, 650000 + 5000 * ROW_BYTES)
        );
        session
    });
    drop(session);
    let engine = Arc::into_inner(engine).expect("no other reference");
    drop(engine);
    let engine = open(dir.path());
    let mut session = engine.session("root", "localhost");
    run(&mut session, "USE t");
    assert_eq!(
        table_digest(&mut session),
        (5002, 650000 + 5000 * ROW_BYTES)
    );
}

#[test]
fn a_transaction_larger_than_the_log_commits_and_rolls_back() {
    let dir = test_dir();
    let engine = open(dir.path());
    let capacity = engine.storage().txn_context().wal.log_capacity_bytes();
    let mut session = engine.session("root", "localhost");
    setup(&mut session);
    let wal = engine.storage().txn_context().wal.clone();
    let session = within("the large transactions", 300, move || {
        // About 16 MB of log in one transaction, four times the ring.
        let before = wal.current_lsn().0;
        run(&mut session, "BEGIN");
        insert_rows(&mut session, 0, 5_000);
        run(&mut session, "COMMIT");
        assert!(
            wal.current_lsn().0 - before > 3 * capacity,
            "the transaction logged {} bytes, the log holds {capacity}",
            wal.current_lsn().0 - before
        );
        assert_eq!(table_digest(&mut session), (5_000, 5_000 * ROW_BYTES));

        // The same size rolled back.
        run(&mut session, "BEGIN");
        insert_rows(&mut session, 100_000, 5_000);
        run(&mut session, "ROLLBACK");
        assert_eq!(table_digest(&mut session), (5_000, 5_000 * ROW_BYTES));

        // And as one autocommitted statement.
        run(
            &mut session,
            "CREATE TABLE c (id INT PRIMARY KEY, v LONGBLOB)",
        );
        run(&mut session, "INSERT INTO c SELECT id, v FROM b");
        assert_eq!(int(&mut session, "SELECT COUNT(*) FROM c"), 5_000);
        session
    });
    drop(session);
    let engine = Arc::into_inner(engine).expect("no other reference");
    drop(engine);
    let engine = open(dir.path());
    let mut session = engine.session("root", "localhost");
    run(&mut session, "USE t");
    assert_eq!(table_digest(&mut session), (5_000, 5_000 * ROW_BYTES));
    assert_eq!(int(&mut session, "SELECT COUNT(*) FROM c"), 5_000);
}

#[test]
fn a_transaction_whose_undo_outgrows_the_log_fails_with_1197() {
    let dir = test_dir();
    let engine = open(dir.path());
    let mut session = engine.session("root", "localhost");
    setup(&mut session);
    within("the oversized undo", 300, move || {
        insert_rows(&mut session, 0, 3_000);
        // Every update's undo holds the old row: 9 MB of undo.
        let (code, sqlstate, message) =
            error_of(&mut session, "UPDATE b SET v = REPEAT('z', 3000)");
        assert_eq!((code, sqlstate), (1197, "HY000"), "{message}");
        assert!(message.contains("log_file_size"), "{message}");
        assert_eq!(table_digest(&mut session), (3_000, 3_000 * ROW_BYTES));
        assert_eq!(
            int(&mut session, "SELECT COUNT(*) FROM b WHERE v LIKE 'z%'"),
            0
        );
        // Smaller updates go through.
        run(
            &mut session,
            "UPDATE b SET v = REPEAT('z', 3000) WHERE id < 50",
        );
        assert_eq!(
            int(&mut session, "SELECT COUNT(*) FROM b WHERE v LIKE 'z%'"),
            50
        );
    });
}

/// The crash test's child: commits a transaction larger than the log, leaves a second
/// one open after a checkpoint passed its first records, and aborts.
#[test]
fn crash_child() {
    let Some(dir) = std::env::var_os(CHILD_DIR_ENV) else {
        return;
    };
    let engine = Engine::open(&settings(Path::new(&dir))).expect("the engine opens");
    let mut session = engine.session("root", "localhost");
    setup(&mut session);
    run(&mut session, "BEGIN");
    insert_rows(&mut session, 0, 4_000);
    run(&mut session, "COMMIT");
    run(&mut session, "BEGIN");
    run(
        &mut session,
        "UPDATE b SET v = REPEAT('u', 3000) WHERE id < 20",
    );
    insert_rows(&mut session, 100_000, 4_000);
    let wal = &engine.storage().txn_context().wal;
    let first_copy = wal.current_lsn();
    engine.storage().checkpoint().expect("a checkpoint");
    assert!(
        wal.checkpoint_lsn().0 > first_copy.0 - wal.log_capacity_bytes(),
        "the checkpoint stayed behind the open transaction's start"
    );
    println!("REDO-CAPACITY-CHILD-READY");
    std::process::abort();
}

#[test]
fn an_open_transaction_larger_than_the_log_is_rolled_back_after_a_crash() {
    let dir = test_dir();
    let mut child = std::process::Command::new(std::env::current_exe().expect("this test"))
        .args(["--exact", "crash_child", "--nocapture", "--test-threads=1"])
        .env(CHILD_DIR_ENV, dir.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::inherit())
        .spawn()
        .expect("the child starts");
    let deadline = Instant::now() + Duration::from_secs(300);
    let status = loop {
        if let Some(status) = child.try_wait().expect("the child's status") {
            break status;
        }
        if Instant::now() >= deadline {
            child.kill().expect("kill the child");
            panic!("the crash child did not finish within 300 s (a hang)");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut out = String::new();
    std::io::Read::read_to_string(&mut child.stdout.take().expect("stdout"), &mut out)
        .expect("the child's output");
    assert!(
        out.contains("REDO-CAPACITY-CHILD-READY") && !status.success(),
        "the child did not reach its crash ({status}): {out}"
    );

    let engine = open(dir.path());
    let report = engine.storage().recovery_report();
    assert!(report.transactions_rolled_back >= 1, "{report:?}");
    let mut session = engine.session("root", "localhost");
    run(&mut session, "USE t");
    assert_eq!(table_digest(&mut session), (4_000, 4_000 * ROW_BYTES));
    assert_eq!(
        int(&mut session, "SELECT COUNT(*) FROM b WHERE v LIKE 'u%'"),
        0
    );
    // The engine keeps working after recovery.
    insert_rows(&mut session, 200_000, 100);
    assert_eq!(int(&mut session, "SELECT COUNT(*) FROM b"), 4_100);
}
