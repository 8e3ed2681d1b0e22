//! CHECK constraints where the golden files cannot check them: MySQL 8's error
//! numbers (MariaDB reports a violation as 4025 and most definition errors
//! otherwise), its generated names (`t_chk_1`; MariaDB names them after the column
//! or `CONSTRAINT_1`), SHOW CREATE TABLE and information_schema in MySQL's form,
//! `[NOT] ENFORCED`, `DROP CHECK` and `ALTER CHECK` (MariaDB has none of these),
//! LOAD DATA, prepared statements, and the definitions surviving a restart. What
//! MariaDB agrees with is in slt/ddl/check_constraints.slt.

mod common;

use std::sync::Arc;

use tarn_common::settings::Settings;
use tarn_sql::{Engine, Session};

fn engine() -> (tempfile::TempDir, Arc<Engine>) {
    common::engine_with("check_constraints", Settings::default())
}

fn session(engine: &Arc<Engine>) -> Session {
    let mut s = engine.session("root", "localhost");
    s.execute("CREATE DATABASE IF NOT EXISTS c; USE c")
        .expect("c");
    s
}

fn run(s: &mut Session, sql: &str) {
    s.execute(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
}

/// The error number, SQLSTATE and message of `sql` (0 and empty if it succeeds).
fn error(s: &mut Session, sql: &str) -> (u16, String, String) {
    match s.execute(sql) {
        Ok(_) => (0, String::new(), String::new()),
        Err(e) => (e.mysql_code(), e.sqlstate().to_string(), e.to_string()),
    }
}

fn lines(s: &mut Session, sql: &str) -> Vec<String> {
    common::rows(s, sql)
        .iter()
        .map(|r| r.iter().map(common::text).collect::<Vec<_>>().join(" "))
        .collect()
}

fn show_create(s: &mut Session, table: &str) -> String {
    common::text(&common::rows(s, &format!("SHOW CREATE TABLE {table}"))[0][1])
}

/// 3819 with MySQL's SQLSTATE and message naming constraint `name`.
fn assert_violates(s: &mut Session, sql: &str, name: &str) {
    let (code, state, message) = error(s, sql);
    assert_eq!(
        (code, state.as_str(), message.as_str()),
        (
            3819,
            "HY000",
            format!("Check constraint '{name}' is violated.").as_str()
        ),
        "{sql}"
    );
}

#[test]
fn every_write_path_refuses_a_false_condition_with_3819() {
    let (_dir, engine) = engine();
    let mut s = session(&engine);
    run(
        &mut s,
        "CREATE TABLE t (id INT PRIMARY KEY, a INT CHECK (a < 10), b INT, \
         CHECK (b IS NULL OR b > a)); \
         CREATE TABLE src (id INT, a INT, b INT); \
         INSERT INTO src VALUES (20, 1, 2), (21, 50, NULL)",
    );
    run(&mut s, "INSERT INTO t VALUES (1, 1, 2), (2, NULL, NULL)");
    assert_violates(&mut s, "INSERT INTO t VALUES (3, 10, 20)", "t_chk_1");
    assert_violates(&mut s, "INSERT INTO t VALUES (3, 5, 5)", "t_chk_2");
    // The whole statement fails: the first row stays out too.
    assert_violates(
        &mut s,
        "INSERT INTO t VALUES (3, 1, 2), (4, 11, 12)",
        "t_chk_1",
    );
    assert_violates(&mut s, "INSERT INTO t SET id = 3, a = 12", "t_chk_1");
    assert_violates(&mut s, "INSERT INTO t SELECT * FROM src", "t_chk_1");
    assert_violates(&mut s, "REPLACE INTO t VALUES (1, 1, 0)", "t_chk_2");
    assert_violates(
        &mut s,
        "INSERT INTO t VALUES (1, 1, 2) ON DUPLICATE KEY UPDATE a = 100",
        "t_chk_1",
    );
    assert_violates(&mut s, "UPDATE t SET a = a + 9", "t_chk_1");
    assert_violates(&mut s, "UPDATE t SET b = 0 WHERE id = 1", "t_chk_2");
    assert_violates(
        &mut s,
        "UPDATE t, src SET t.a = src.a WHERE src.id = 21 AND t.id = 1",
        "t_chk_1",
    );
    assert_eq!(
        lines(&mut s, "SELECT * FROM t ORDER BY id"),
        ["1 1 2", "2 NULL NULL"]
    );
    // IGNORE: the row is skipped with warning 3819; the others go in.
    run(&mut s, "INSERT IGNORE INTO t VALUES (5, 50, 60), (6, 6, 7)");
    assert_eq!(
        lines(&mut s, "SHOW WARNINGS"),
        ["Warning 3819 Check constraint 't_chk_1' is violated."]
    );
    run(&mut s, "INSERT IGNORE INTO t SELECT * FROM src");
    run(
        &mut s,
        "INSERT IGNORE INTO t VALUES (1, 1, 1) ON DUPLICATE KEY UPDATE b = 0",
    );
    assert_eq!(
        lines(&mut s, "SHOW WARNINGS"),
        ["Warning 3819 Check constraint 't_chk_2' is violated."]
    );
    assert_eq!(
        lines(&mut s, "SELECT * FROM t ORDER BY id"),
        ["1 1 2", "2 NULL NULL", "6 6 7", "20 1 2"]
    );
    // A failed statement inside a transaction takes back only itself.
    run(&mut s, "BEGIN; INSERT INTO t VALUES (7, 7, 8)");
    assert_violates(
        &mut s,
        "INSERT INTO t VALUES (8, 8, 9), (9, 90, 91)",
        "t_chk_1",
    );
    run(&mut s, "COMMIT");
    assert_eq!(
        lines(&mut s, "SELECT id FROM t WHERE id > 6 ORDER BY id"),
        ["7", "20"]
    );
}

#[test]
fn load_data_checks_each_row() {
    let (_dir, engine) = engine();
    let mut s = session(&engine);
    run(
        &mut s,
        "CREATE TABLE t (id INT PRIMARY KEY, a INT, CONSTRAINT small CHECK (a < 10))",
    );
    // LOCAL is IGNORE: the row that fails is a warning and is skipped.
    s.set_local_infile("f.tsv".into(), b"1\t1\n2\t20\n3\t3\n".to_vec(), true);
    run(&mut s, "LOAD DATA LOCAL INFILE 'f.tsv' INTO TABLE t");
    assert_eq!(
        lines(&mut s, "SHOW WARNINGS"),
        ["Warning 3819 Check constraint 'small' is violated."]
    );
    assert_eq!(lines(&mut s, "SELECT * FROM t ORDER BY id"), ["1 1", "3 3"]);
    // REPLACE is not IGNORE: the statement fails and loads nothing.
    s.set_local_infile("f.tsv".into(), b"4\t4\n5\t50\n".to_vec(), true);
    assert_violates(
        &mut s,
        "LOAD DATA LOCAL INFILE 'f.tsv' REPLACE INTO TABLE t",
        "small",
    );
    assert_eq!(lines(&mut s, "SELECT * FROM t ORDER BY id"), ["1 1", "3 3"]);
}

#[test]
fn definitions_are_checked_as_mysql_8_checks_them() {
    let (_dir, engine) = engine();
    let mut s = session(&engine);
    run(
        &mut s,
        "CREATE TABLE other (x INT CONSTRAINT taken CHECK (x > 0))",
    );
    let cases: &[(&str, u16, &str)] = &[
        (
            "CREATE TABLE e (a INT CHECK (a + RAND() > 0))",
            3814,
            "An expression of a check constraint 'e_chk_1' contains disallowed function: rand.",
        ),
        (
            "CREATE TABLE e (a DATETIME CHECK (a > NOW()))",
            3814,
            "contains disallowed function: now.",
        ),
        (
            "CREATE TABLE e (a DATE, CHECK (a > CURRENT_DATE))",
            3814,
            "contains disallowed function: curdate.",
        ),
        (
            "CREATE TABLE e (a INT CHECK (a <> CONNECTION_ID()))",
            3814,
            "contains disallowed function: connection_id.",
        ),
        (
            "CREATE TABLE e (a INT CHECK (a > @v))",
            3816,
            "An expression of a check constraint 'e_chk_1' cannot refer to a user or system \
             variable.",
        ),
        (
            "CREATE TABLE e (a INT CHECK (a > @@max_execution_time))",
            3816,
            "cannot refer to a user or system variable.",
        ),
        (
            "CREATE TABLE e (a INT CHECK (a IN (SELECT 1)))",
            3815,
            "An expression of a check constraint 'e_chk_1' contains disallowed function.",
        ),
        (
            "CREATE TABLE e (a INT, CHECK (a + 1))",
            3812,
            "An expression of non-boolean type specified to a check constraint 'e_chk_1'.",
        ),
        (
            "CREATE TABLE e (a INT, CONSTRAINT k CHECK (a))",
            3812,
            "check constraint 'k'.",
        ),
        (
            "CREATE TABLE e (a INT CHECK (b > 0), b INT)",
            3813,
            "Column check constraint 'e_chk_1' references other column.",
        ),
        (
            "CREATE TABLE e (a INT CHECK (nope > 0))",
            3813,
            "references other column.",
        ),
        (
            "CREATE TABLE e (a INT, CONSTRAINT k CHECK (nope > 0))",
            3820,
            "Check constraint 'k' refers to non-existing column 'nope'.",
        ),
        (
            "CREATE TABLE e (id INT AUTO_INCREMENT PRIMARY KEY, CHECK (id > 0))",
            3818,
            "Check constraint 'e_chk_1' cannot refer to an auto-increment column.",
        ),
        (
            "CREATE TABLE e (a INT, CONSTRAINT taken CHECK (a > 0))",
            3822,
            "Duplicate check constraint name 'taken'.",
        ),
        (
            "CREATE TABLE e (a INT, CONSTRAINT k CHECK (a > 0), CONSTRAINT K CHECK (a < 9))",
            3822,
            "Duplicate check constraint name 'K'.",
        ),
        (
            "CREATE TABLE e (a INT, CONSTRAINT \
             k2345678901234567890123456789012345678901234567890123456789012345 CHECK (a > 0))",
            1059,
            "is too long",
        ),
    ];
    for &(sql, code, message) in cases {
        let (got, state, text) = error(&mut s, sql);
        assert_eq!(got, code, "{sql}: {text}");
        assert!(text.contains(message), "{sql}: {text}");
        if code != 1059 {
            assert_eq!(state, "HY000", "{sql}");
        }
    }
    // Deterministic functions, qualified columns and a column named like a function
    // are fine; temporary tables have names of their own.
    run(
        &mut s,
        "CREATE TABLE ok (a INT, `now` INT, s VARCHAR(9), \
         CHECK (ABS(a) < 100 AND ok.a >= -99 AND `now` > 0 AND LENGTH(s) < 5)); \
         CREATE TEMPORARY TABLE tmp (x INT CONSTRAINT taken CHECK (x > 0))",
    );
    assert_violates(&mut s, "INSERT INTO tmp VALUES (0)", "taken");

    run(
        &mut s,
        "CREATE TABLE t (a INT, b INT, CHECK (a < b), CHECK (a > 0))",
    );
    let alters: &[(&str, u16, &str)] = &[
        (
            "ALTER TABLE t DROP CHECK nope",
            3821,
            "Check constraint 'nope' is not found in the table.",
        ),
        (
            "ALTER TABLE t ALTER CHECK nope ENFORCED",
            3821,
            "Check constraint 'nope' is not found in the table.",
        ),
        (
            "ALTER TABLE t DROP CONSTRAINT nope",
            3940,
            "Constraint 'nope' does not exist.",
        ),
        (
            "ALTER TABLE t DROP COLUMN b",
            3959,
            "Check constraint 't_chk_1' uses column 'b', hence column cannot be dropped or \
             renamed.",
        ),
        (
            "ALTER TABLE t RENAME COLUMN a TO x",
            3959,
            "Check constraint 't_chk_1' uses column 'a'",
        ),
        ("ALTER TABLE t CHANGE b c INT", 3959, "uses column 'b'"),
        (
            "ALTER TABLE t ADD CONSTRAINT taken CHECK (a > 1)",
            3822,
            "Duplicate check constraint name 'taken'.",
        ),
        (
            "ALTER TABLE t ADD CHECK (c > 0)",
            3820,
            "Check constraint 't_chk_3' refers to non-existing column 'c'.",
        ),
    ];
    for &(sql, code, message) in alters {
        let (got, _, text) = error(&mut s, sql);
        assert_eq!(got, code, "{sql}: {text}");
        assert!(text.contains(message), "{sql}: {text}");
    }
    // A generated name follows its table: renaming t to v would give it a name
    // another table holds.
    run(
        &mut s,
        "CREATE TABLE u (a INT CONSTRAINT v_chk_1 CHECK (a > 0))",
    );
    let (code, _, text) = error(&mut s, "RENAME TABLE t TO v");
    assert_eq!(code, 3822, "{text}");
    assert!(text.contains("'v_chk_1'"), "{text}");
    // Dropping the one column a constraint uses drops the constraint; a column may
    // change its name's letter case.
    run(
        &mut s,
        "CREATE TABLE d (a INT CHECK (a > 0), b INT, c INT, CHECK (b > c)); \
         ALTER TABLE d DROP COLUMN a; ALTER TABLE d CHANGE b B INT",
    );
    assert_eq!(
        lines(
            &mut s,
            "SELECT constraint_name FROM information_schema.check_constraints \
             WHERE constraint_schema = 'c' AND constraint_name LIKE 'd%'"
        ),
        ["d_chk_2"]
    );
}

#[test]
fn show_create_table_and_information_schema_as_mysql_8() {
    let (_dir, engine) = engine();
    let mut s = session(&engine);
    run(
        &mut s,
        "CREATE TABLE t1 (CHECK ((f1 + f2) > 10), f1 INT CHECK (f1 < 10), \
         f2 INT CONSTRAINT f2_small CHECK (f2 < 10) NOT ENFORCED, s VARCHAR(10), \
         CONSTRAINT `max` CHECK (f1 + f2 < 929 AND s NOT IN ('a', 'it''s') AND f1 BETWEEN -5 AND 5 \
         AND s IS NOT NULL AND s LIKE 'x%' AND NOT (f1 <=> f2) AND f1 != f2))",
    );
    let sql = show_create(&mut s, "t1");
    assert_eq!(
        sql,
        "CREATE TABLE `t1` (\n  `f1` int DEFAULT NULL,\n  `f2` int DEFAULT NULL,\n  \
         `s` varchar(10) DEFAULT NULL,\n  \
         CONSTRAINT `f2_small` CHECK ((`f2` < 10)) /*!80016 NOT ENFORCED */,\n  \
         CONSTRAINT `max` CHECK (((((((((`f1` + `f2`) < 929) and (`s` not in ('a','it''s'))) \
         and (`f1` between -5 and 5)) and (`s` is not null)) and (`s` like 'x%')) \
         and (not((`f1` <=> `f2`)))) and (`f1` <> `f2`))),\n  \
         CONSTRAINT `t1_chk_1` CHECK (((`f1` + `f2`) > 10)),\n  \
         CONSTRAINT `t1_chk_2` CHECK ((`f1` < 10))\n) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 \
         COLLATE=utf8mb4_0900_ai_ci"
    );
    assert_eq!(
        lines(
            &mut s,
            "SELECT * FROM information_schema.check_constraints WHERE constraint_schema = 'c' \
             AND constraint_name <> 'max'"
        ),
        [
            "def c f2_small (`f2` < 10)",
            "def c t1_chk_1 ((`f1` + `f2`) > 10)",
            "def c t1_chk_2 (`f1` < 10)"
        ]
    );
    assert_eq!(
        lines(
            &mut s,
            "SELECT constraint_name, constraint_type, enforced \
             FROM information_schema.table_constraints WHERE table_name = 't1'"
        ),
        [
            "f2_small CHECK NO",
            "max CHECK YES",
            "t1_chk_1 CHECK YES",
            "t1_chk_2 CHECK YES"
        ]
    );
    // The stored text reads back to the same condition.
    run(&mut s, "INSERT INTO t1 VALUES (4, 7, 'xit')");
    assert_violates(&mut s, "INSERT INTO t1 VALUES (4, 7, 'a')", "max");
    assert_violates(&mut s, "INSERT INTO t1 VALUES (3, 7, 'xa')", "t1_chk_1");
    // NOT ENFORCED: kept and shown, not checked (f2_small, and max once ALTER CHECK
    // makes it so).
    run(&mut s, "ALTER TABLE t1 ALTER CHECK max NOT ENFORCED");
    run(&mut s, "INSERT INTO t1 (f1, f2) VALUES (-20, 50)");
    let sql = show_create(&mut s, "t1");
    assert!(
        sql.contains(") /*!80016 NOT ENFORCED */,\n  CONSTRAINT `t1_chk_1`"),
        "{sql}"
    );
    // LIKE copies them under names generated for the new table, in name order; a
    // rename takes the generated names along and keeps the others.
    run(&mut s, "CREATE TABLE t2 LIKE t1; RENAME TABLE t1 TO t3");
    let names = |s: &mut Session, t: &str| {
        lines(
            s,
            &format!(
                "SELECT constraint_name, enforced FROM information_schema.table_constraints \
                 WHERE table_name = '{t}'"
            ),
        )
    };
    assert_eq!(
        names(&mut s, "t2"),
        ["t2_chk_1 NO", "t2_chk_2 NO", "t2_chk_3 YES", "t2_chk_4 YES"]
    );
    assert_eq!(
        names(&mut s, "t3"),
        ["f2_small NO", "max NO", "t3_chk_1 YES", "t3_chk_2 YES"]
    );
    assert_violates(&mut s, "INSERT INTO t3 VALUES (30, 1, 'x')", "t3_chk_2");
    // ALTER TABLE adds and drops them; new generated numbers follow the largest.
    run(
        &mut s,
        "ALTER TABLE t3 DROP CHECK t3_chk_1, ADD CHECK (f1 > -100), \
         ADD COLUMN g INT CHECK (g <> 0)",
    );
    assert_eq!(
        names(&mut s, "t3"),
        [
            "f2_small NO",
            "max NO",
            "t3_chk_2 YES",
            "t3_chk_3 YES",
            "t3_chk_4 YES"
        ]
    );
    run(&mut s, "ALTER TABLE t3 DROP CONSTRAINT t3_chk_4");
    assert_eq!(names(&mut s, "t3").len(), 4);
}

#[test]
fn alter_table_checks_the_rows_it_keeps() {
    let (_dir, engine) = engine();
    let mut s = session(&engine);
    run(
        &mut s,
        "CREATE TABLE t (id INT PRIMARY KEY, a INT, b VARCHAR(10), \
         CONSTRAINT lazy CHECK (a < 5) NOT ENFORCED); \
         INSERT INTO t VALUES (1, 1, '1'), (2, 7, '20'), (3, NULL, NULL)",
    );
    let before = show_create(&mut s, "t");
    // Added or newly enforced constraints see every existing row.
    assert_violates(
        &mut s,
        "ALTER TABLE t ADD CONSTRAINT pos CHECK (a < 2)",
        "pos",
    );
    assert_violates(&mut s, "ALTER TABLE t ALTER CHECK lazy ENFORCED", "lazy");
    assert_violates(
        &mut s,
        "ALTER TABLE t ADD COLUMN c INT DEFAULT 0, ADD CONSTRAINT cpos CHECK (c > 0)",
        "cpos",
    );
    // A copy (a column's type changes) checks every row against every enforced one.
    run(&mut s, "ALTER TABLE t ADD CONSTRAINT blen CHECK (b < '3')");
    assert_violates(&mut s, "ALTER TABLE t MODIFY b INT", "blen");
    let after = show_create(&mut s, "t");
    assert!(
        after.contains("`b` varchar(10) DEFAULT NULL,")
            && after.contains("CONSTRAINT `blen` CHECK ((`b` < '3')),")
            && after.replace("  CONSTRAINT `blen` CHECK ((`b` < '3')),\n", "") == before,
        "{after}"
    );
    run(&mut s, "ALTER TABLE t ADD CONSTRAINT ok CHECK (a < 10)");
    assert_violates(&mut s, "UPDATE t SET a = 10 WHERE id = 1", "ok");
    assert_eq!(
        lines(&mut s, "SELECT * FROM t ORDER BY id"),
        ["1 1 1", "2 7 20", "3 NULL NULL"]
    );
}

/// A prepared INSERT binds its table's constraints; a constraint added later makes
/// it bind again (the table's handle changed), so it is enforced.
#[test]
fn prepared_statements_see_constraints_added_later() {
    let (_dir, engine) = engine();
    let mut s = session(&engine);
    run(
        &mut s,
        "CREATE TABLE t (a INT); PREPARE ins FROM 'INSERT INTO t VALUES (?)'; \
         SET @v = 5; EXECUTE ins USING @v; ALTER TABLE t ADD CONSTRAINT small CHECK (a < 6)",
    );
    run(&mut s, "SET @v = 6");
    assert_violates(&mut s, "EXECUTE ins USING @v", "small");
    run(&mut s, "SET @v = 4; EXECUTE ins USING @v");
    assert_eq!(lines(&mut s, "SELECT a FROM t ORDER BY a"), ["4", "5"]);
}

/// The constraints are in catalog.json: after a restart they are shown and
/// enforced as before.
#[test]
fn definitions_survive_a_restart() {
    let (dir, engine) = engine();
    let before = {
        let mut s = session(&engine);
        run(
            &mut s,
            "CREATE TABLE t (id INT PRIMARY KEY, a INT CHECK (a > 0), \
             CONSTRAINT off CHECK (a < 100) NOT ENFORCED)",
        );
        show_create(&mut s, "t")
    };
    drop(engine);
    let engine = Engine::open(&Settings {
        data_dir: dir.path().to_path_buf(),
        ..Settings::default()
    })
    .expect("the engine reopens");
    let mut s = session(&engine);
    assert_eq!(show_create(&mut s, "t"), before);
    assert_violates(&mut s, "INSERT INTO t VALUES (1, 0)", "t_chk_1");
    run(&mut s, "INSERT INTO t VALUES (1, 500)");
    assert_eq!(lines(&mut s, "SELECT * FROM t"), ["1 500"]);
}
