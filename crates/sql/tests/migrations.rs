//! Statements framework migrations and applications send, where MariaDB (which the
//! golden files also run against) answers otherwise than MySQL 8, or where the check
//! needs two sessions or Tarn's own numbers: ALTER TABLE's errors (1138 for NULLs in
//! a column made NOT NULL, a string that is no number, row numbers when the primary
//! key's order changes), multi-table UPDATE and DELETE (1221 for ORDER BY / LIMIT,
//! the locks they take, CLIENT_FOUND_ROWS), CHECKSUM TABLE's values and CHECK TABLE
//! against a writer. The rest is in tests/slt/ddl/alter_columns.slt,
//! dml/multi_table.slt, ddl/table_maintenance.slt and restart/alter_table.slt.

mod common;

use common::{error, lines, rows, run};

use std::sync::Arc;

use tarn_common::settings::Settings;
use tarn_row::Value;
use tarn_sql::{Engine, QueryResult, Session};

fn engine() -> (tempfile::TempDir, Arc<Engine>) {
    common::engine_with(
        "migrations",
        Settings {
            lock_wait_timeout_s: 2,
            ..Settings::default()
        },
    )
}

fn session(engine: &Arc<Engine>) -> Session {
    let mut s = engine.session("root", "localhost");
    s.execute("CREATE DATABASE IF NOT EXISTS m; USE m")
        .expect("the database");
    s
}

fn affected(session: &mut Session, sql: &str) -> u64 {
    match run(session, sql) {
        QueryResult::Ok { affected_rows, .. } => affected_rows,
        other => panic!("{sql}: not an OK: {other:?}"),
    }
}

fn show_create(session: &mut Session, table: &str) -> String {
    rows(session, &format!("SHOW CREATE TABLE {table}"))[0][1].to_string()
}

#[test]
fn not_null_over_nulls_is_1138_and_changes_nothing() {
    let (_dir, engine) = engine();
    let mut s = session(&engine);
    run(
        &mut s,
        "CREATE TABLE t (id INT PRIMARY KEY, a INT, KEY k_a (a))",
    );
    run(&mut s, "INSERT INTO t VALUES (1, 1), (2, NULL), (3, 3)");
    let before = show_create(&mut s, "t");
    // MySQL 8 in strict mode; MariaDB says 1265 "Data truncated .. at row 2".
    let (code, state, message) = error(&mut s, "ALTER TABLE t MODIFY a INT NOT NULL");
    assert_eq!(
        (code, state, message.as_str()),
        (1138, "22004", "Invalid use of NULL value")
    );
    // Nor with other operations in the same statement.
    let (code, ..) = error(
        &mut s,
        "ALTER TABLE t ADD COLUMN b INT, RENAME COLUMN id TO ident, MODIFY a BIGINT NOT NULL",
    );
    assert_eq!(code, 1138);
    assert_eq!(show_create(&mut s, "t"), before);
    assert_eq!(
        lines(&mut s, "SELECT * FROM t FORCE INDEX (k_a) ORDER BY id"),
        ["1 1", "2 NULL", "3 3"]
    );
    // Once no row is NULL it succeeds.
    run(&mut s, "UPDATE t SET a = 2 WHERE id = 2");
    run(&mut s, "ALTER TABLE t MODIFY a INT NOT NULL");
    assert!(show_create(&mut s, "t").contains("`a` int NOT NULL"));
}

#[test]
fn a_string_that_is_no_number_fails_as_insert_would() {
    let (_dir, engine) = engine();
    let mut s = session(&engine);
    run(&mut s, "CREATE TABLE t (id INT PRIMARY KEY, s VARCHAR(10))");
    run(&mut s, "INSERT INTO t VALUES (1, '12'), (2, 'abc')");
    run(&mut s, "CREATE TABLE i (n INT)");
    let insert = error(&mut s, "INSERT INTO i VALUES ('abc')");
    // MariaDB: 1292 "Truncated incorrect INTEGER value".
    let alter = error(&mut s, "ALTER TABLE t MODIFY s INT");
    assert_eq!(alter.0, insert.0);
    assert_eq!(alter.0, 1366);
    assert!(alter.2.contains("for column 's' at row 2"), "{}", alter.2);
    assert_eq!(lines(&mut s, "SELECT s FROM t ORDER BY id"), ["12", "abc"]);
}

/// A primary key whose type change reorders the rows makes the rebuild read them a
/// second time to sort them; errors still name the row's place in the old order.
#[test]
fn rows_are_numbered_in_the_old_key_order_when_the_key_order_changes() {
    let (_dir, engine) = engine();
    let mut s = session(&engine);
    run(&mut s, "CREATE TABLE t (id INT PRIMARY KEY, v INT)");
    for id in 1..=12 {
        let v = if id == 11 { 1000 } else { id };
        run(&mut s, &format!("INSERT INTO t VALUES ({id}, {v})"));
    }
    // '10' sorts before '9': the first pass stops there, the second finds row 11.
    let (code, _, message) = error(
        &mut s,
        "ALTER TABLE t MODIFY id VARCHAR(2) NOT NULL, MODIFY v TINYINT",
    );
    assert_eq!(code, 1264);
    assert!(message.ends_with("column 'v' at row 11"), "{message}");
    run(&mut s, "UPDATE t SET v = 11 WHERE id = 11");
    assert_eq!(
        affected(
            &mut s,
            "ALTER TABLE t MODIFY id VARCHAR(2) NOT NULL, MODIFY v TINYINT"
        ),
        12,
        "a type change copies the rows and reports them, as MySQL's ALGORITHM=COPY"
    );
    let ids: Vec<String> = lines(&mut s, "SELECT id FROM t ORDER BY id");
    assert_eq!(ids[..4], ["1", "10", "11", "12"]);
    assert_eq!(lines(&mut s, "SELECT v FROM t WHERE id = '11'"), ["11"]);
    // A change that converts nothing reports no rows.
    assert_eq!(
        affected(
            &mut s,
            "ALTER TABLE t RENAME COLUMN v TO w, ADD INDEX k_w (w)"
        ),
        0
    );
}

#[test]
fn multi_table_order_by_and_limit_are_1221() {
    let (_dir, engine) = engine();
    let mut s = session(&engine);
    run(
        &mut s,
        "CREATE TABLE a (id INT PRIMARY KEY, v INT); CREATE TABLE b (id INT PRIMARY KEY, v INT)",
    );
    // MariaDB allows both in UPDATE and reads them as a syntax error in DELETE.
    for (sql, message) in [
        (
            "UPDATE a JOIN b ON a.id = b.id SET a.v = b.v ORDER BY a.id",
            "Incorrect usage of UPDATE and ORDER BY",
        ),
        (
            "UPDATE a, b SET a.v = b.v WHERE a.id = b.id LIMIT 1",
            "Incorrect usage of UPDATE and LIMIT",
        ),
        (
            "UPDATE a JOIN b ON a.id = b.id SET a.v = 1 ORDER BY a.id LIMIT 1",
            "Incorrect usage of UPDATE and ORDER BY",
        ),
        (
            "DELETE a FROM a JOIN b ON a.id = b.id ORDER BY a.id",
            "Incorrect usage of DELETE and ORDER BY",
        ),
        (
            "DELETE FROM a USING a JOIN b ON a.id = b.id LIMIT 1",
            "Incorrect usage of DELETE and LIMIT",
        ),
    ] {
        let (code, state, text) = error(&mut s, sql);
        assert_eq!((code, state, text.as_str()), (1221, "HY000", message));
    }
    // MySQL's UPDATE has no FROM clause (the comma list is not one).
    assert_eq!(error(&mut s, "UPDATE a FROM b SET a.v = 1").0, 1064);
    // EXPLAIN shows the targets over the join (Tarn's own plan text).
    let plan = lines(
        &mut s,
        "EXPLAIN UPDATE a, b SET a.v = b.v, b.v = 0 WHERE a.id = b.id",
    );
    assert_eq!(plan[0], "Update a, b");
    let plan = lines(&mut s, "EXPLAIN DELETE b FROM a JOIN b ON a.id = b.id");
    assert_eq!(plan[0], "Delete from b");
}

/// A multi-table UPDATE locks the rows it changes exclusively and the rows it reads
/// from other tables shared, until its transaction ends.
#[test]
fn multi_table_update_locks_targets_exclusively_and_the_rest_shared() {
    let (_dir, engine) = engine();
    let mut a = session(&engine);
    let mut b = session(&engine);
    run(
        &mut a,
        "CREATE TABLE owner (id INT PRIMARY KEY, active INT);
         CREATE TABLE acct (id INT PRIMARY KEY, owner_id INT, balance INT);
         INSERT INTO owner VALUES (1, 1), (2, 1);
         INSERT INTO acct VALUES (10, 1, 100), (20, 2, 200)",
    );
    run(&mut a, "BEGIN");
    assert_eq!(
        affected(
            &mut a,
            "UPDATE acct JOIN owner ON acct.owner_id = owner.id SET acct.balance = 0 WHERE owner.id = 1"
        ),
        1
    );
    run(&mut b, "BEGIN");
    let nowait = |s: &mut Session, sql: &str| match s.execute(sql) {
        Ok(_) => 0,
        Err(e) => e.mysql_code(),
    };
    assert_eq!(
        nowait(&mut b, "SELECT * FROM acct WHERE id = 10 FOR SHARE NOWAIT"),
        3572,
        "the changed row is locked exclusively"
    );
    assert_eq!(
        nowait(&mut b, "SELECT * FROM owner WHERE id = 1 FOR SHARE NOWAIT"),
        0,
        "the row read from the other table is locked shared"
    );
    assert_eq!(
        nowait(&mut b, "SELECT * FROM owner WHERE id = 1 FOR UPDATE NOWAIT"),
        3572
    );
    // A plain read sees the committed row.
    assert_eq!(
        lines(&mut b, "SELECT balance FROM acct WHERE id = 10"),
        ["100"]
    );
    run(&mut b, "ROLLBACK");
    run(&mut a, "COMMIT");
    run(&mut b, "BEGIN");
    assert_eq!(
        lines(
            &mut b,
            "SELECT balance FROM acct WHERE id = 10 FOR UPDATE NOWAIT"
        ),
        ["0"]
    );
    run(&mut b, "COMMIT");
}

#[test]
fn multi_table_update_reports_matched_rows_to_found_rows_clients() {
    let (_dir, engine) = engine();
    let mut s = session(&engine);
    run(
        &mut s,
        "CREATE TABLE a (id INT PRIMARY KEY, v INT); CREATE TABLE b (id INT PRIMARY KEY, v INT);
         INSERT INTO a VALUES (1, 1), (2, 2), (3, 3); INSERT INTO b VALUES (1, 1), (2, 20), (3, 30)",
    );
    let sql = "UPDATE a JOIN b ON a.id = b.id SET a.v = b.v";
    s.set_found_rows(true);
    match run(&mut s, sql) {
        QueryResult::Ok {
            affected_rows,
            info,
            ..
        } => {
            assert_eq!(affected_rows, 3, "matched rows");
            assert_eq!(info, "Rows matched: 3  Changed: 2  Warnings: 0");
        }
        other => panic!("{other:?}"),
    }
    s.set_found_rows(false);
    assert_eq!(
        affected(
            &mut s,
            "UPDATE a, b SET a.v = 0, b.v = 0 WHERE a.id = b.id AND a.id = 1"
        ),
        2
    );
    // Every row already holds b's value.
    assert_eq!(affected(&mut s, sql), 0);
}

#[test]
fn checksum_table_depends_on_the_rows_not_their_order() {
    let (_dir, engine) = engine();
    let mut s = session(&engine);
    run(
        &mut s,
        "CREATE TABLE a (id INT PRIMARY KEY, s VARCHAR(10), d DATE);
         INSERT INTO a VALUES (1, 'x', '2024-01-02'), (2, NULL, NULL), (3, '', '2000-01-01')",
    );
    // The same rows, stored in another order.
    run(
        &mut s,
        "CREATE TABLE c (id INT, s VARCHAR(10), d DATE);
         INSERT INTO c VALUES (3, '', '2000-01-01'), (1, 'x', '2024-01-02'), (2, NULL, NULL)",
    );
    let sums = rows(&mut s, "CHECKSUM TABLE a, c, m.a EXTENDED");
    let sum = |i: usize| sums[i][1].clone();
    assert!(matches!(sum(0), Value::UInt(n) if n > 0), "{sums:?}");
    assert_eq!(sum(0), sum(1));
    assert_eq!(sum(0), sum(2));
    assert_eq!(sums[0][0], Value::Bytes(b"m.a".to_vec()));
    // NULL and the empty string differ.
    run(&mut s, "UPDATE c SET s = '' WHERE id = 2");
    let changed = rows(&mut s, "CHECKSUM TABLE c")[0][1].clone();
    assert_ne!(changed, sum(0));
    assert_eq!(rows(&mut s, "CHECKSUM TABLE c QUICK")[0][1], Value::Null);
    // A missing table: NULL and a warning.
    assert_eq!(rows(&mut s, "CHECKSUM TABLE nope")[0][1], Value::Null);
    assert_eq!(
        lines(&mut s, "SHOW WARNINGS"),
        ["Error 1146 Table 'm.nope' doesn't exist"]
    );
}

/// CHECK TABLE waits for the transactions that change the table; one that does not
/// end in time makes the table's answer an error, not the statement's.
#[test]
fn check_table_waits_for_writers() {
    let (_dir, engine) = engine();
    let mut a = session(&engine);
    let mut b = session(&engine);
    run(
        &mut a,
        "CREATE TABLE t (id INT PRIMARY KEY, v INT, KEY k_v (v)); CREATE TABLE u (id INT PRIMARY KEY);
         INSERT INTO t VALUES (1, 1), (2, 2)",
    );
    run(&mut b, "BEGIN");
    run(&mut b, "UPDATE t SET v = 3 WHERE id = 2");
    let answer = lines(&mut a, "CHECK TABLE t, u");
    assert_eq!(answer.len(), 3, "{answer:?}");
    assert!(
        answer[0].starts_with("m.t check Error Lock wait timeout"),
        "{answer:?}"
    );
    assert_eq!(answer[1], "m.t check status Operation failed");
    assert_eq!(answer[2], "m.u check status OK");
    run(&mut b, "COMMIT");
    assert_eq!(lines(&mut a, "CHECK TABLE t"), ["m.t check status OK"]);
}
