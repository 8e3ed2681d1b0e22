//! What administration tools and dump files of MySQL 8 send that MariaDB 10.11
//! answers differently, so the golden files cannot hold it: variables MariaDB lacks
//! or shows otherwise (`super_read_only`, `information_schema_stats_expiry`,
//! `secure_file_priv`), and the column names of `SHOW REPLICA STATUS` /
//! `SHOW SLAVE STATUS` (MariaDB's differ).

mod common;

use common::{code, lines, run};

use tarn_common::settings::Settings;
use tarn_sql::QueryResult;

fn column_names(result: &QueryResult) -> Vec<String> {
    match result {
        QueryResult::Rows { columns, .. } => columns.iter().map(|c| c.name.clone()).collect(),
        _ => panic!("not a result set"),
    }
}

#[test]
fn variables_tools_read_show_and_refuse_changes() {
    let (_dir, engine) = common::engine_with("server-compat", Settings::default());
    let mut s = engine.session("root", "localhost");
    assert_eq!(
        lines(
            &mut s,
            "SELECT @@super_read_only, @@innodb_file_per_table, \
             @@information_schema_stats_expiry, @@secure_file_priv IS NULL"
        ),
        vec!["0 1 86400 1"]
    );
    for name in [
        "super_read_only",
        "information_schema_stats_expiry",
        "secure_file_priv",
        "tmpdir",
        "basedir",
        "datadir",
        "log_error",
    ] {
        let shown = lines(&mut s, &format!("SHOW VARIABLES LIKE '{name}'"));
        assert_eq!(shown.len(), 1, "{name}: {shown:?}");
    }
    // DBeaver and Workbench turn the statistics cache off for their session.
    run(&mut s, "SET SESSION information_schema_stats_expiry = 0");
    assert_eq!(
        lines(&mut s, "SELECT @@information_schema_stats_expiry"),
        vec!["0"]
    );
    // Not in the golden files: MariaDB has no performance_schema by default.
    assert_eq!(
        lines(
            &mut s,
            "SELECT COUNT(*) FROM performance_schema.session_variables \
             WHERE VARIABLE_NAME IN ('version', 'read_only', 'server_id')"
        ),
        vec!["3"]
    );
    // Tarn has no read-only mode, so the variable cannot be set (MySQL and MariaDB
    // can).
    for sql in [
        "SET GLOBAL read_only = 1",
        "SET GLOBAL super_read_only = ON",
        "SET GLOBAL server_id = 2",
        "SET GLOBAL innodb_file_per_table = OFF",
    ] {
        assert_eq!(code(s.execute(sql)), 1238, "{sql}");
    }
    // sql_log_bin is session-only in MySQL 8.
    assert_eq!(code(s.execute("SET GLOBAL sql_log_bin = 0")), 1228);
}

#[test]
fn replica_status_is_empty_with_mysql_columns() {
    let (_dir, engine) = common::engine_with("server-compat", Settings::default());
    let mut s = engine.session("root", "localhost");
    for (sql, first, count) in [
        ("SHOW REPLICA STATUS", "Replica_IO_State", 60),
        ("SHOW SLAVE STATUS", "Slave_IO_State", 60),
        ("SHOW REPLICA STATUS FOR CHANNEL ''", "Replica_IO_State", 60),
    ] {
        let result = run(&mut s, sql);
        let names = column_names(&result);
        assert_eq!(names.len(), count, "{sql}");
        assert_eq!(names[0], first, "{sql}");
        assert!(result.all_rows().is_empty(), "{sql}");
    }
    let slave = column_names(&run(&mut s, "SHOW SLAVE STATUS"));
    assert_eq!(slave[1], "Master_Host");
    assert_eq!(slave[32], "Seconds_Behind_Master");
    assert!(slave.iter().any(|n| n == "Get_master_public_key"));
}

/// MariaDB runs `/*!80016 .. */` (its version is higher) and has no ENCRYPTION for
/// databases, nor VISIBLE / INVISIBLE indexes (it has IGNORED), nor
/// `information_schema.COLUMN_STATISTICS`.
#[test]
fn dump_forms_of_mysql_8() {
    let (_dir, engine) = common::engine_with("server-compat", Settings::default());
    let mut s = engine.session("root", "localhost");
    run(
        &mut s,
        "CREATE DATABASE d /*!40100 DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_0900_ai_ci */ \
         /*!80016 DEFAULT ENCRYPTION='N' */",
    );
    run(&mut s, "CREATE DATABASE d2 ENCRYPTION = 'n'");
    let (number, _, message) = common::error(&mut s, "CREATE DATABASE d3 DEFAULT ENCRYPTION='Y'");
    assert_eq!(number, 1235);
    assert!(message.contains("ENCRYPTION='Y'"), "{message}");
    assert_eq!(code(s.execute("USE d3")), 1049);
    run(&mut s, "USE d");
    run(
        &mut s,
        "CREATE TABLE t (id INT PRIMARY KEY, a INT, b INT, visible INT, \
         KEY k_a (a) /*!80000 VISIBLE */, KEY k_b (b) COMMENT 'x' VISIBLE)",
    );
    run(&mut s, "ALTER TABLE t ADD KEY k_v (visible) VISIBLE");
    run(&mut s, "INSERT INTO t VALUES (1, 2, 3, 4)");
    assert_eq!(
        lines(&mut s, "SELECT visible FROM t WHERE a = 2"),
        vec!["4"]
    );
    for sql in [
        "CREATE TABLE u (a INT, KEY k (a) /*!80000 INVISIBLE */)",
        "ALTER TABLE t ADD KEY k_i (a, b) INVISIBLE",
        "CREATE INDEX k_j ON t (b) INVISIBLE",
    ] {
        let (number, _, message) = common::error(&mut s, sql);
        assert_eq!(number, 1235, "{sql}");
        assert!(message.contains("INVISIBLE indexes"), "{message}");
    }
    let result = run(&mut s, "SELECT * FROM information_schema.COLUMN_STATISTICS");
    assert_eq!(
        column_names(&result),
        ["SCHEMA_NAME", "TABLE_NAME", "COLUMN_NAME", "HISTOGRAM"]
    );
    assert!(result.all_rows().is_empty());
}

/// MariaDB has stored programs, so it runs these; Tarn refuses them with 1235 (not a
/// syntax error).
#[test]
fn stored_programs_are_refused_clearly() {
    let (_dir, engine) = common::engine_with("server-compat", Settings::default());
    let mut s = engine.session("root", "localhost");
    run(&mut s, "CREATE DATABASE d; USE d; CREATE TABLE t (a INT)");
    for (sql, what) in [
        ("CREATE PROCEDURE p() SELECT 1", "stored procedures"),
        (
            "CREATE DEFINER=`root`@`localhost` PROCEDURE p(IN x INT) BEGIN SELECT x; END",
            "stored procedures",
        ),
        (
            "CREATE FUNCTION f() RETURNS INT DETERMINISTIC RETURN 1",
            "stored functions",
        ),
        (
            "CREATE DEFINER = CURRENT_USER TRIGGER tr BEFORE INSERT ON t FOR EACH ROW SET NEW.a = 1",
            "triggers",
        ),
        (
            "CREATE EVENT e ON SCHEDULE EVERY 1 DAY DO DELETE FROM t",
            "events",
        ),
    ] {
        let (number, state, message) = common::error(&mut s, sql);
        assert_eq!((number, state), (1235, "42000"), "{sql}");
        assert!(message.contains(what), "{sql}: {message}");
    }
    // A view with a DEFINER is still a view.
    run(
        &mut s,
        "CREATE DEFINER = CURRENT_USER VIEW v AS SELECT a FROM t",
    );
}

/// MariaDB stores latin1 and has other engines, so it runs what Tarn refuses here.
#[test]
fn alter_options_tarn_cannot_honour_are_refused() {
    let (_dir, engine) = common::engine_with("server-compat", Settings::default());
    let mut s = engine.session("root", "localhost");
    run(
        &mut s,
        "CREATE DATABASE d; USE d; CREATE TABLE t (a VARCHAR(5))",
    );
    run(&mut s, "INSERT INTO t VALUES ('x')");
    for (sql, number) in [
        ("ALTER TABLE t CHARACTER SET latin1", 1235),
        ("ALTER TABLE t CONVERT TO CHARACTER SET latin1", 1235),
        ("ALTER TABLE t COLLATE latin1_swedish_ci", 1235),
        ("ALTER TABLE t COLLATE utf8mb4_nosuch_ci", 1273),
        (
            "ALTER TABLE t CONVERT TO CHARACTER SET utf8mb4 COLLATE ascii_bin",
            1253,
        ),
        ("ALTER DATABASE d CHARACTER SET utf16", 1235),
        ("ALTER DATABASE d READ ONLY = 1", 1235),
        ("ALTER DATABASE d DEFAULT ENCRYPTION = 'Y'", 1235),
        ("ALTER TABLE t ENGINE = MyISAM", 1286),
        ("ALTER TABLE t ROW_FORMAT = SIDEWAYS", 1064),
    ] {
        assert_eq!(code(s.execute(sql)), number, "{sql}");
    }
    run(
        &mut s,
        "ALTER DATABASE d DEFAULT ENCRYPTION = 'N' READ ONLY = 0",
    );
    // MariaDB answers 1 ("Can't create/write to file"); MySQL 8 1049.
    assert_eq!(
        code(s.execute("ALTER DATABASE no_such_db CHARACTER SET utf8mb4")),
        1049
    );
    run(
        &mut s,
        "ALTER TABLE t CHARACTER SET utf8mb4 COLLATE utf8mb4_0900_ai_ci",
    );
    assert_eq!(lines(&mut s, "SELECT a FROM t"), vec!["x"]);
}
