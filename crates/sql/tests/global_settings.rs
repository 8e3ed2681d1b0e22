//! `SET GLOBAL` of engine settings and server variables, and `Engine::set_global`
//! at start: live settings reach the engine, start-only ones and read-only server
//! variables fail with 1238 and change nothing.

use std::sync::Arc;

use tarn_common::settings::{LockScheduling, Settings};
use tarn_row::Value;
use tarn_sql::{Engine, QueryResult, Session};

fn engine() -> (tempfile::TempDir, Arc<Engine>) {
    let base = std::env::var("TARN_TEST_DIR")
        .unwrap_or_else(|_| std::env::temp_dir().display().to_string());
    std::fs::create_dir_all(&base).expect("the test directory exists");
    let dir = tempfile::Builder::new()
        .prefix("globals")
        .tempdir_in(base)
        .expect("a temporary directory");
    let settings = Settings {
        data_dir: dir.path().to_path_buf(),
        lock_scheduling: LockScheduling::Fifo,
        buffer_pool_size_bytes: 16 << 20,
        ..Settings::default()
    };
    let engine = Engine::open(&settings).expect("the engine opens");
    (dir, engine)
}

fn one(session: &mut Session, sql: &str) -> Value {
    let mut results = session
        .execute(sql)
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    let rows = results.pop().map(|r| r.all_rows()).unwrap_or_default();
    rows.into_iter()
        .next()
        .and_then(|r| r.into_iter().next())
        .unwrap_or_else(|| panic!("{sql}: no rows"))
}

fn text(s: &str) -> Value {
    Value::Bytes(s.as_bytes().to_vec())
}

fn error(result: tarn_common::Result<Vec<QueryResult>>) -> (u16, String) {
    match result {
        Ok(_) => (0, String::new()),
        Err(e) => (e.mysql_code(), e.to_string()),
    }
}

#[test]
fn set_global_lock_scheduling_switches_the_lock_manager() {
    let (_dir, engine) = engine();
    let mut s = engine.session("root", "localhost");
    assert_eq!(one(&mut s, "SELECT @@lock_scheduling"), text("fifo"));
    assert_eq!(
        engine.storage().txn_context().locks.scheduling(),
        LockScheduling::Fifo
    );
    s.execute("SET GLOBAL lock_scheduling = 'cats'").unwrap();
    assert_eq!(one(&mut s, "SELECT @@lock_scheduling"), text("cats"));
    assert_eq!(one(&mut s, "SELECT @@global.lock_scheduling"), text("cats"));
    assert_eq!(
        engine.storage().txn_context().locks.scheduling(),
        LockScheduling::Cats
    );
    assert_eq!(
        one(
            &mut s,
            "SELECT SCHEDULING FROM performance_schema.tarn_lock_stats"
        ),
        text("cats")
    );
    // Another session sees it too, and a bad value changes nothing.
    let mut other = engine.session("root", "localhost");
    assert_eq!(one(&mut other, "SELECT @@lock_scheduling"), text("cats"));
    let (code, message) = error(s.execute("SET GLOBAL lock_scheduling = 'random'"));
    assert_eq!(code, 1231, "{message}");
    assert!(message.contains("lock_scheduling"), "{message}");
    assert_eq!(one(&mut s, "SELECT @@lock_scheduling"), text("cats"));
    assert_eq!(
        engine.storage().settings().lock_scheduling,
        LockScheduling::Cats
    );
}

#[test]
fn start_only_settings_are_read_only_and_unchanged() {
    let (_dir, engine) = engine();
    let mut s = engine.session("root", "localhost");
    let before = one(&mut s, "SELECT @@io_method");
    let (code, message) = error(s.execute("SET GLOBAL io_method = 'buffered'"));
    assert_eq!(code, 1238, "{message}");
    assert!(
        message.contains("read only") && message.contains("restart"),
        "{message}"
    );
    assert_eq!(one(&mut s, "SELECT @@io_method"), before);
    assert_eq!(
        engine.storage().settings().io_method.name(),
        before.to_string()
    );
    let (code, _) = error(s.execute("SET GLOBAL innodb_buffer_pool_size = 1048576"));
    assert_eq!(code, 1238);
    // An engine setting is GLOBAL only.
    let (code, _) = error(s.execute("SET SESSION scan_threads = 1"));
    assert_eq!(code, 1229);
}

#[test]
fn scan_and_log_settings_are_reflected_everywhere() {
    let (_dir, engine) = engine();
    let mut s = engine.session("root", "localhost");
    s.execute("SET GLOBAL scan_threads = 1").unwrap();
    assert_eq!(one(&mut s, "SELECT @@scan_threads"), Value::UInt(1));
    assert_eq!(engine.storage().scan_config().threads, 1);
    assert_eq!(engine.storage().settings().scan_threads, 1);
    s.execute("SET GLOBAL scan_readahead_pages = 4, GLOBAL secondary_prefetch = 'adaptive'")
        .unwrap();
    assert_eq!(engine.storage().scan_config().readahead_pages, 4);
    s.execute("SET GLOBAL secondary_prefetch = 8").unwrap();
    assert_eq!(one(&mut s, "SELECT @@secondary_prefetch"), text("8"));

    // MySQL's name and Tarn's name are one setting.
    s.execute("SET GLOBAL innodb_flush_log_at_trx_commit = 2")
        .unwrap();
    assert_eq!(one(&mut s, "SELECT @@flush_log_at_commit"), Value::UInt(2));
    assert_eq!(engine.storage().txn_context().wal.flush_log_at_commit(), 2);
    s.execute("SET GLOBAL flush_log_at_commit = DEFAULT")
        .unwrap();
    assert_eq!(
        one(&mut s, "SELECT @@innodb_flush_log_at_trx_commit"),
        Value::UInt(1)
    );
    s.execute("SET GLOBAL innodb_lock_wait_timeout = 9")
        .unwrap();
    assert_eq!(
        engine
            .storage()
            .txn_context()
            .locks
            .wait_timeout()
            .as_secs(),
        9
    );
    assert_eq!(
        one(&mut s, "SELECT @@global.lock_wait_timeout"),
        Value::UInt(9)
    );

    s.execute("SET GLOBAL latch_accounting = OFF").unwrap();
    assert_eq!(one(&mut s, "SELECT @@latch_accounting"), Value::Int(0));
    assert!(!engine.storage().datadir().latches().is_enabled());
    s.execute("SET GLOBAL buffer_pool_old_pct = 50").unwrap();
    assert_eq!(engine.storage().pool().old_pct(), 50);

    // A scan still answers with the new knobs.
    s.execute(
        "CREATE DATABASE d; USE d; CREATE TABLE t (id INT PRIMARY KEY, v INT);
         INSERT INTO t VALUES (1, 1), (2, 2), (3, 3)",
    )
    .unwrap();
    assert_eq!(
        one(&mut s, "SELECT SUM(v) FROM t"),
        Value::Decimal("6".parse().unwrap())
    );
}

#[test]
fn set_global_at_start_may_set_read_only_server_variables_and_sql_may_not() {
    let (_dir, engine) = engine();
    engine.set_global("max_connections", "10").unwrap();
    assert_eq!(engine.global_u64("max_connections"), 10);
    engine.set_global("port", "3307").unwrap();
    engine.set_global("bind-address", "0.0.0.0").unwrap();
    engine.set_global("ssl_cert", "/etc/tarn/cert.pem").unwrap();
    engine.set_global("auto_generate_certs", "off").unwrap();
    engine.set_global("max_allowed_packet", "16M").unwrap();
    engine.set_global("lock_scheduling", "cats").unwrap();
    assert_eq!(engine.global_u64("port"), 3307);
    assert_eq!(engine.global_str("bind_address"), "0.0.0.0");
    assert_eq!(engine.global_str("ssl_cert"), "/etc/tarn/cert.pem");
    assert!(!engine.global_bool("auto_generate_certs"));
    assert_eq!(engine.global_u64("max_allowed_packet"), 16 << 20);
    assert_eq!(
        engine.storage().txn_context().locks.scheduling(),
        LockScheduling::Cats
    );

    let unknown = engine.set_global("no_such_variable", "1").unwrap_err();
    assert_eq!(unknown.mysql_code(), 1193);
    assert_eq!(
        unknown.to_string(),
        "Unknown system variable 'no_such_variable'"
    );
    assert_eq!(
        engine.set_global("port", "lots").unwrap_err().mysql_code(),
        1232
    );
    assert_eq!(
        engine
            .set_global("io_method", "direct")
            .unwrap_err()
            .mysql_code(),
        1238
    );

    let mut s = engine.session("root", "localhost");
    let (code, message) = error(s.execute("SET GLOBAL port = 1"));
    assert_eq!(code, 1238, "{message}");
    assert_eq!(one(&mut s, "SELECT @@port"), Value::UInt(3307));
    let (code, _) = error(s.execute("SET GLOBAL ssl_key = 'x'"));
    assert_eq!(code, 1238);
    s.execute("SET GLOBAL max_connections = 20").unwrap();
    assert_eq!(engine.global_u64("max_connections"), 20);
    assert_eq!(one(&mut s, "SELECT @@send_threads"), Value::UInt(0));
    assert_eq!(
        one(&mut s, "SELECT @@result_buffer_max_bytes"),
        Value::UInt(4 << 20)
    );
    s.execute("SET send_threads = 4").unwrap();
    assert_eq!(one(&mut s, "SELECT @@send_threads"), Value::UInt(4));
}

#[test]
fn status_counts_connections() {
    // max_connections itself is the server's (crates/server/tests/protocol.rs).
    let (_dir, engine) = engine();
    let first = engine.session("a", "localhost");
    let second = engine.session("b", "localhost");
    engine.note_connect_aborted();
    drop(first);
    let mut third = engine.session("d", "localhost");
    engine.note_client_aborted();
    let status = |s: &mut Session, name: &str| {
        let sql = format!("SHOW GLOBAL STATUS LIKE '{name}'");
        let mut results = s.execute(&sql).unwrap();
        let rows = results.pop().unwrap().all_rows();
        rows[0][1].to_string()
    };
    assert_eq!(status(&mut third, "Threads_connected"), "2");
    assert_eq!(status(&mut third, "Max_used_connections"), "2");
    assert_eq!(status(&mut third, "Aborted_connects"), "1");
    assert_eq!(status(&mut third, "Aborted_clients"), "1");
    assert_eq!(status(&mut third, "Connections"), "4");
    drop(second);
}
