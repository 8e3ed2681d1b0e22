//! Accounts and privileges through the public API the server uses
//! (`Engine::find_account`, `Engine::session_for`) and the account statements.

mod common;

use common::{code, rows as run, text};

use std::sync::Arc;

use tarn_common::settings::Settings;
use tarn_row::Value;
use tarn_sql::{AuthPlugin, Engine, Session};

fn settings(dir: &std::path::Path) -> Settings {
    Settings {
        data_dir: dir.to_path_buf(),
        lock_wait_timeout_s: 2,
        // Restarts here are clean shutdowns; commits need not wait for fsync.
        flush_log_at_commit: 2,
        ..Settings::default()
    }
}

fn test_dir() -> tempfile::TempDir {
    let base = std::env::var("TARN_TEST_DIR")
        .unwrap_or_else(|_| std::env::temp_dir().display().to_string());
    std::fs::create_dir_all(&base).expect("the test directory exists");
    tempfile::Builder::new()
        .prefix("accounts")
        .tempdir_in(base)
        .expect("a temporary directory")
}

fn login(engine: &Arc<Engine>, user: &str, host: &str, password: &str) -> Session {
    let account = engine
        .find_account(user, host)
        .unwrap_or_else(|| panic!("no account for {user} from {host}"));
    assert_eq!(
        account.plugin.hash(password.as_bytes()),
        account.stored_hash,
        "the password of {user}"
    );
    engine.session_for(&account, host)
}

/// Drops the engine and waits until the storage engine is closed.
fn close(engine: Arc<Engine>) {
    let mut storage = engine.storage().clone();
    drop(engine);
    for _ in 0..3000 {
        match Arc::try_unwrap(storage) {
            Ok(_) => return,
            Err(held) => {
                storage = held;
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
        }
    }
    panic!("the storage engine is still referenced");
}

#[test]
fn default_root_account() {
    let dir = test_dir();
    let engine = Engine::open(&settings(dir.path())).expect("opens");
    let root = engine
        .find_account("root", "127.0.0.1")
        .expect("root@localhost exists");
    assert_eq!(root.host, "localhost");
    // @@default_authentication_plugin (see sysvars.rs for why it is MariaDB's).
    assert_eq!(root.plugin, AuthPlugin::NativePassword);
    assert_eq!(root.stored_hash, None);
    assert!(engine.find_account("root", "10.0.0.1").is_none());
    assert!(engine.find_account("nobody", "localhost").is_none());
    let mut session = engine.session_for(&root, "::1");
    let rows = run(&mut session, "SELECT CURRENT_USER(), USER()");
    assert_eq!(text(&rows[0][0]), "root@localhost");
    assert_eq!(text(&rows[0][1]), "root@::1");
    // Root may do everything.
    run(
        &mut session,
        "CREATE DATABASE d; CREATE TABLE d.t (id INT PRIMARY KEY); INSERT INTO d.t VALUES (1)",
    );
    assert_eq!(
        run(&mut session, "SELECT count(*) FROM mysql.user").len(),
        1
    );
}

#[test]
fn hashes_per_plugin_are_not_passwords() {
    let dir = test_dir();
    let engine = Engine::open(&settings(dir.path())).expect("opens");
    let mut root = engine.session("root", "localhost");
    run(
        &mut root,
        "CREATE USER n@localhost IDENTIFIED WITH mysql_native_password BY 'hunter2';
         CREATE USER s@localhost IDENTIFIED WITH caching_sha2_password BY 'hunter2';
         CREATE USER d@localhost IDENTIFIED BY 'hunter2'",
    );
    let n = engine.find_account("n", "localhost").expect("n");
    assert_eq!(n.plugin, AuthPlugin::NativePassword);
    assert_eq!(
        n.stored_hash.as_deref(),
        Some(&tarn_sql::native_password_hash(b"hunter2")[..])
    );
    let s = engine.find_account("s", "localhost").expect("s");
    assert_eq!(
        s.stored_hash.as_deref(),
        Some(&tarn_sql::sha2_password_hash(b"hunter2")[..])
    );
    let d = engine.find_account("d", "localhost").expect("d");
    assert_eq!(d.plugin, AuthPlugin::NativePassword, "the default plugin");
    for row in run(&mut root, "SELECT authentication_string FROM mysql.user") {
        let stored = text(&row[0]);
        assert!(!stored.contains("hunter2"), "{stored}");
    }
}

#[test]
fn most_specific_host_wins() {
    let dir = test_dir();
    let engine = Engine::open(&settings(dir.path())).expect("opens");
    let mut root = engine.session("root", "localhost");
    run(
        &mut root,
        "CREATE USER 'u'@'%'; CREATE USER 'u'@'10.%'; CREATE USER 'u'@'10.0.0.%';
         CREATE USER 'u'@'10.0.0.7'; CREATE USER 'u'@'localhost'",
    );
    let host = |client: &str| engine.find_account("u", client).map(|a| a.host);
    assert_eq!(host("10.0.0.7").as_deref(), Some("10.0.0.7"));
    assert_eq!(host("10.0.0.8").as_deref(), Some("10.0.0.%"));
    assert_eq!(host("10.1.0.8").as_deref(), Some("10.%"));
    assert_eq!(host("192.168.1.1").as_deref(), Some("%"));
    assert_eq!(host("127.0.0.1").as_deref(), Some("localhost"));
    assert_eq!(host("localhost").as_deref(), Some("localhost"));
}

#[test]
fn grants_at_three_levels_and_denials() {
    let dir = test_dir();
    let engine = Engine::open(&settings(dir.path())).expect("opens");
    let mut root = engine.session("root", "localhost");
    run(
        &mut root,
        "CREATE DATABASE d; CREATE TABLE d.t (id INT PRIMARY KEY); CREATE TABLE d.t2 (id INT PRIMARY KEY);
         INSERT INTO d.t VALUES (1); INSERT INTO d.t2 VALUES (1);
         CREATE USER app@'%' IDENTIFIED BY 'pw'",
    );
    let mut app = login(&engine, "app", "10.9.9.9", "pw");
    assert_eq!(code(app.execute("SELECT * FROM d.t")), 1142);
    assert_eq!(code(app.execute("USE d")), 1044);
    assert_eq!(code(app.execute("CREATE DATABASE e")), 1044);
    assert_eq!(code(app.execute("CREATE USER x")), 1227);
    assert_eq!(code(app.execute("SET GLOBAL max_connections = 10")), 1227);

    // Table level.
    run(&mut root, "GRANT SELECT ON d.t TO app@'%'");
    assert_eq!(run(&mut app, "SELECT id FROM d.t").len(), 1);
    assert_eq!(code(app.execute("SELECT * FROM d.t2")), 1142);
    assert_eq!(
        code(app.execute("SELECT * FROM d.t JOIN d.t2 ON t.id = t2.id")),
        1142
    );
    assert_eq!(
        code(app.execute("SELECT * FROM d.t WHERE id IN (SELECT id FROM d.t2)")),
        1142
    );
    let error = app.execute("DELETE FROM d.t").expect_err("denied");
    assert_eq!(
        error.to_string(),
        "DELETE command denied to user 'app'@'%' for table 't'"
    );

    // Database level.
    run(
        &mut root,
        "GRANT SELECT, INSERT, CREATE, DROP, INDEX, ALTER ON d.* TO app@'%'",
    );
    run(&mut app, "USE d");
    assert_eq!(
        run(&mut app, "SELECT count(*) FROM t JOIN t2 ON t.id = t2.id").len(),
        1
    );
    run(&mut app, "INSERT INTO t2 VALUES (2)");
    run(&mut app, "CREATE TABLE t3 (id INT PRIMARY KEY)");
    run(&mut app, "CREATE INDEX i ON t3 (id)");
    run(&mut app, "ALTER TABLE t3 ADD COLUMN c INT");
    run(&mut app, "DROP TABLE t3");
    assert_eq!(code(app.execute("UPDATE t2 SET id = 5 WHERE id = 2")), 1142);

    // Global level.
    run(&mut root, "GRANT UPDATE ON *.* TO app@'%'");
    run(&mut app, "UPDATE t2 SET id = 5 WHERE id = 2");
    // The account tables need the privilege globally: INSERT on d.* is not enough.
    assert_eq!(
        code(app.execute("INSERT INTO mysql.user VALUES ('%', 'x', 'caching_sha2_password', '')")),
        1142
    );

    // REVOKE at each level.
    run(&mut root, "REVOKE UPDATE ON *.* FROM app@'%'");
    run(&mut root, "REVOKE SELECT ON d.t FROM app@'%'");
    run(&mut root, "REVOKE SELECT ON d.* FROM app@'%'");
    assert_eq!(code(app.execute("SELECT * FROM t")), 1142);
    assert_eq!(code(app.execute("UPDATE t2 SET id = 6 WHERE id = 5")), 1142);
    assert_eq!(
        code(root.execute("REVOKE SELECT ON d.t FROM app@'%'")),
        1141
    );
    let grants: Vec<String> = run(&mut root, "SHOW GRANTS FOR app@'%'")
        .iter()
        .map(|r| text(&r[0]))
        .collect();
    assert_eq!(
        grants,
        [
            "GRANT USAGE ON *.* TO `app`@`%`",
            "GRANT INSERT, CREATE, DROP, INDEX, ALTER ON `d`.* TO `app`@`%`",
        ]
    );
}

#[test]
fn prepared_statements_are_checked_at_execute() {
    let dir = test_dir();
    let engine = Engine::open(&settings(dir.path())).expect("opens");
    let mut root = engine.session("root", "localhost");
    run(
        &mut root,
        "CREATE DATABASE d; CREATE TABLE d.t (id INT PRIMARY KEY, v INT); INSERT INTO d.t VALUES (1, 10);
         CREATE USER app@localhost; GRANT SELECT ON d.t TO app@localhost",
    );
    let mut app = login(&engine, "app", "localhost", "");
    assert_eq!(
        app.prepare("INSERT INTO d.t VALUES (?, ?)")
            .map_err(|e| e.mysql_code())
            .err(),
        Some(1142)
    );
    let id = app
        .prepare("SELECT v FROM d.t WHERE id = ?")
        .expect("prepares");
    let result = app.execute_prepared(id, &[Value::Int(1)]).expect("runs");
    assert_eq!(result.all_rows(), vec![vec![Value::Int(10)]]);
    run(&mut root, "REVOKE SELECT ON d.t FROM app@localhost");
    let denied = app
        .execute_prepared(id, &[Value::Int(1)])
        .expect_err("revoked");
    assert_eq!(denied.mysql_code(), 1142);
}

#[test]
fn failed_statements_change_nothing() {
    let dir = test_dir();
    let engine = Engine::open(&settings(dir.path())).expect("opens");
    let mut root = engine.session("root", "localhost");
    run(&mut root, "CREATE USER a@'%'; CREATE DATABASE d");
    assert_eq!(code(root.execute("CREATE USER b@'%', a@'%'")), 1396);
    assert!(engine.find_account("b", "1.2.3.4").is_none());
    assert_eq!(code(root.execute("DROP USER a@'%', nobody@'%'")), 1396);
    assert!(engine.find_account("a", "1.2.3.4").is_some());
    assert_eq!(
        code(root.execute("GRANT SELECT ON d.* TO a@'%', nobody@'%'")),
        1410
    );
    let grants = run(
        &mut root,
        "SELECT count(*) FROM mysql.grants WHERE User = 'a'",
    );
    assert_eq!(grants[0][0], Value::Int(0));
    // With autocommit off, an account statement still commits (and commits the
    // open transaction first, as MySQL's implicit commit does).
    run(&mut root, "SET autocommit = 0; CREATE USER c@'%'");
    assert!(engine.find_account("c", "1.2.3.4").is_some());
    let mut other = engine.session("root", "localhost");
    assert_eq!(
        run(
            &mut other,
            "SELECT count(*) FROM mysql.user WHERE User = 'c'"
        )[0][0],
        Value::Int(1)
    );
}

#[test]
fn accounts_survive_a_restart() {
    let dir = test_dir();
    let engine = Engine::open(&settings(dir.path())).expect("opens");
    {
        let mut root = engine.session("root", "localhost");
        run(
            &mut root,
            "CREATE DATABASE d; CREATE TABLE d.t (id INT PRIMARY KEY); INSERT INTO d.t VALUES (7);
             CREATE USER keep@'%' IDENTIFIED WITH mysql_native_password BY 'k';
             GRANT SELECT ON d.* TO keep@'%' WITH GRANT OPTION;
             CREATE USER gone@'%'; DROP USER gone@'%'",
        );
    }
    close(engine);
    let engine = Engine::open(&settings(dir.path())).expect("reopens");
    assert!(engine.find_account("gone", "1.2.3.4").is_none());
    let mut keep = login(&engine, "keep", "1.2.3.4", "k");
    assert_eq!(
        run(&mut keep, "SELECT id FROM d.t"),
        vec![vec![Value::Int(7)]]
    );
    let grants: Vec<String> = run(&mut keep, "SHOW GRANTS")
        .iter()
        .map(|r| text(&r[0]))
        .collect();
    assert_eq!(
        grants,
        [
            "GRANT USAGE ON *.* TO `keep`@`%`",
            "GRANT SELECT ON `d`.* TO `keep`@`%` WITH GRANT OPTION",
        ]
    );
    // The root account was created once, not again at the reopen.
    let mut root = engine.session("root", "localhost");
    assert_eq!(
        run(
            &mut root,
            "SELECT count(*) FROM mysql.user WHERE User = 'root'"
        )[0][0],
        Value::Int(1)
    );
}

/// SHOW DATABASES, SHOW TABLES and information_schema list only what the account
/// holds a privilege in, as MySQL does; root sees everything.
#[test]
fn catalog_listings_show_only_what_the_account_may_use() {
    let dir = test_dir();
    let engine = Engine::open(&settings(dir.path())).expect("opens");
    let mut root = engine.session("root", "localhost");
    run(
        &mut root,
        "CREATE DATABASE shop; CREATE DATABASE hr; CREATE DATABASE logs;
         CREATE TABLE shop.items (id INT PRIMARY KEY); CREATE TABLE shop.prices (id INT PRIMARY KEY);
         CREATE TABLE hr.staff (id INT PRIMARY KEY); CREATE TABLE logs.lines (id INT PRIMARY KEY);
         CREATE USER clerk@'%' IDENTIFIED BY 'pw';
         GRANT SELECT ON shop.* TO clerk@'%';
         GRANT INSERT ON logs.lines TO clerk@'%'",
    );
    let names = |session: &mut Session, sql: &str| -> Vec<String> {
        run(session, sql).iter().map(|r| text(&r[0])).collect()
    };
    let mut clerk = login(&engine, "clerk", "10.0.0.9", "pw");
    assert_eq!(
        names(&mut clerk, "SHOW DATABASES"),
        vec!["information_schema", "logs", "performance_schema", "shop"]
    );
    assert_eq!(
        names(
            &mut clerk,
            "SELECT SCHEMA_NAME FROM information_schema.SCHEMATA ORDER BY 1"
        ),
        vec!["information_schema", "logs", "performance_schema", "shop"]
    );
    assert_eq!(
        names(&mut clerk, "SHOW TABLES FROM shop"),
        vec!["items", "prices"]
    );
    assert_eq!(names(&mut clerk, "SHOW TABLES FROM logs"), vec!["lines"]);
    assert_eq!(
        names(
            &mut clerk,
            "SELECT CONCAT(TABLE_SCHEMA, '.', TABLE_NAME) FROM information_schema.TABLES
             WHERE TABLE_SCHEMA NOT IN ('information_schema', 'performance_schema') ORDER BY 1"
        ),
        vec!["logs.lines", "shop.items", "shop.prices"]
    );
    assert_eq!(code(clerk.execute("SHOW TABLES FROM hr")), 1044);
    // A grant shows up at once; root sees every database.
    run(&mut root, "GRANT SELECT ON hr.staff TO clerk@'%'");
    assert_eq!(names(&mut clerk, "SHOW TABLES FROM hr"), vec!["staff"]);
    let all = names(&mut root, "SHOW DATABASES");
    for db in ["hr", "logs", "mysql", "shop"] {
        assert!(
            all.iter().any(|d| d == db),
            "root does not see {db}: {all:?}"
        );
    }
    drop((clerk, root));
    close(engine);
}
