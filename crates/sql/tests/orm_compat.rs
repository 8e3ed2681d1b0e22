//! What ORMs (SQLAlchemy, Django) read back from the server that the golden files
//! cannot check: the insert id of each INSERT's OK packet (the golden files see only
//! `LAST_INSERT_ID()`), and the answers where MariaDB, which the golden files also
//! run against, differs from MySQL 8 (how a DEFAULT naming the current time is
//! shown). The ORM flows themselves run against `tarn serve` in
//! crates/tarn/tests/clients.rs (`sqlalchemy_orm`, `django_migrations`).

mod common;

use common::{lines, rows, run};

use std::sync::Arc;

use tarn_common::settings::Settings;
use tarn_row::Value;
use tarn_sql::{Engine, QueryResult, Session};

fn engine() -> (tempfile::TempDir, Arc<Engine>) {
    common::engine_with("orm_compat", Settings::default())
}

fn session(engine: &Arc<Engine>) -> Session {
    let mut s = engine.session("root", "localhost");
    s.execute("CREATE DATABASE IF NOT EXISTS o; USE o")
        .expect("the database");
    s
}

/// The affected rows and insert id of `sql`'s OK packet.
fn ok(session: &mut Session, sql: &str) -> (u64, u64) {
    match run(session, sql) {
        QueryResult::Ok {
            affected_rows,
            last_insert_id,
            ..
        } => (affected_rows, last_insert_id),
        other => panic!("{sql}: not an OK: {other:?}"),
    }
}

fn last_insert_id(session: &mut Session) -> Value {
    rows(session, "SELECT LAST_INSERT_ID()")[0][0].clone()
}

/// The insert id of the OK packet is MySQL's `mysql_insert_id()`: the first value
/// generated for an inserted row, else the AUTO_INCREMENT column of the last row
/// when the statement inserted or updated any, else 0. Django sets the primary key
/// of `Model.objects.create(id=5)` (and of every object `loaddata` saves) from it, so
/// an explicit key that came back as 0 left the object with primary key 0. MariaDB
/// answers the same; `LAST_INSERT_ID()` stays the last generated value throughout.
#[test]
fn the_insert_id_of_an_explicit_key_is_that_key() {
    let (_dir, engine) = engine();
    let mut s = session(&engine);
    run(
        &mut s,
        "CREATE TABLE t (id INT AUTO_INCREMENT PRIMARY KEY, u VARCHAR(5) UNIQUE, v INT)",
    );
    assert_eq!(
        ok(&mut s, "INSERT INTO t (id, u, v) VALUES (5, 'a', 1)"),
        (1, 5)
    );
    assert_eq!(last_insert_id(&mut s), Value::UInt(0));
    assert_eq!(ok(&mut s, "INSERT INTO t (u, v) VALUES ('b', 1)"), (1, 6));
    // Several explicit keys: the last row's.
    assert_eq!(
        ok(
            &mut s,
            "INSERT INTO t (id, u, v) VALUES (10, 'c', 1), (11, 'd', 1)"
        ),
        (2, 11)
    );
    // A generated value wins over explicit ones.
    assert_eq!(
        ok(
            &mut s,
            "INSERT INTO t (id, u, v) VALUES (20, 'e', 1), (NULL, 'f', 1)"
        ),
        (2, 21)
    );
    assert_eq!(last_insert_id(&mut s), Value::UInt(21));
    // ON DUPLICATE KEY UPDATE that changes the row it met: that row's key, and
    // LAST_INSERT_ID() keeps its value although a value was taken for the new row.
    assert_eq!(
        ok(
            &mut s,
            "INSERT INTO t (u, v) VALUES ('a', 1) ON DUPLICATE KEY UPDATE v = 2"
        ),
        (2, 5)
    );
    assert_eq!(last_insert_id(&mut s), Value::UInt(21));
    assert_eq!(
        ok(
            &mut s,
            "INSERT INTO t (id, u, v) VALUES (99, 'b', 1) ON DUPLICATE KEY UPDATE v = 3"
        ),
        (2, 6)
    );
    // ... and one that leaves it as it was writes nothing: 0.
    assert_eq!(
        ok(
            &mut s,
            "INSERT INTO t (u, v) VALUES ('a', 1) ON DUPLICATE KEY UPDATE v = 2"
        ),
        (0, 0)
    );
    // INSERT IGNORE: 0 when no row was inserted, else the last row handled (here
    // the skipped one), as MySQL's write_record leaves it.
    assert_eq!(
        ok(&mut s, "INSERT IGNORE INTO t (id, u, v) VALUES (5, 'z', 1)"),
        (0, 0)
    );
    assert_eq!(
        ok(
            &mut s,
            "INSERT IGNORE INTO t (id, u, v) VALUES (30, 'g', 1), (31, 'a', 1)"
        ),
        (1, 31)
    );
    assert_eq!(
        ok(&mut s, "REPLACE INTO t (id, u, v) VALUES (40, 'h', 1)"),
        (1, 40)
    );
    assert_eq!(
        ok(
            &mut s,
            "INSERT INTO t (id, u, v) SELECT id + 100, CONCAT(u, 'x'), v FROM t WHERE id IN (5, 6)"
        ),
        (2, 106)
    );
    // A negative key reads as MySQL's unsigned id.
    assert_eq!(
        ok(&mut s, "INSERT INTO t (id, u, v) VALUES (-5, 'n', 1)"),
        (1, u64::MAX - 4)
    );
    assert_eq!(ok(&mut s, "UPDATE t SET v = 9 WHERE id = 5"), (1, 0));
    assert_eq!(last_insert_id(&mut s), Value::UInt(21));
    // A prepared INSERT answers the same.
    let insert = s
        .prepare("INSERT INTO t (id, u, v) VALUES (?, ?, 1)")
        .expect("prepares");
    let result = s
        .execute_prepared(insert, &[Value::Int(50), Value::Bytes(b"p".to_vec())])
        .expect("runs");
    assert!(
        matches!(
            result,
            QueryResult::Ok {
                affected_rows: 1,
                last_insert_id: 50,
                ..
            }
        ),
        "{result:?}"
    );
    // A table without AUTO_INCREMENT has no insert id.
    run(&mut s, "CREATE TABLE k (id INT PRIMARY KEY)");
    assert_eq!(ok(&mut s, "INSERT INTO k VALUES (7)"), (1, 0));
}

/// MySQL 8 keeps a DATETIME or TIMESTAMP DEFAULT that names the current time as
/// `CURRENT_TIMESTAMP[(fsp)]`, whichever synonym was written, and SQLAlchemy's and
/// Django's reflection read that text back. MariaDB shows `current_timestamp()`.
/// A parenthesised expression stays an expression.
#[test]
fn current_time_defaults_are_shown_as_current_timestamp() {
    let (_dir, engine) = engine();
    let mut s = session(&engine);
    run(
        &mut s,
        "CREATE TABLE t (a DATETIME DEFAULT NOW(), b DATETIME(6) DEFAULT localtimestamp(6),
         c TIMESTAMP DEFAULT current_timestamp(), d DATETIME DEFAULT (NOW()),
         e DATETIME(3) DEFAULT Now( 3 ), f DATETIME DEFAULT LOCALTIME, g DATETIME DEFAULT NOW(0))",
    );
    let create = rows(&mut s, "SHOW CREATE TABLE t")[0][1].to_string();
    for line in [
        "`a` datetime DEFAULT CURRENT_TIMESTAMP,",
        "`b` datetime(6) DEFAULT CURRENT_TIMESTAMP(6),",
        "`c` timestamp NULL DEFAULT CURRENT_TIMESTAMP,",
        "`e` datetime(3) DEFAULT CURRENT_TIMESTAMP(3),",
        "`f` datetime DEFAULT CURRENT_TIMESTAMP,",
        "`g` datetime DEFAULT CURRENT_TIMESTAMP\n",
    ] {
        assert!(create.contains(line), "{line} in {create}");
    }
    assert!(
        !create.contains("`d` datetime DEFAULT CURRENT_TIMESTAMP"),
        "{create}"
    );
    assert_eq!(
        lines(
            &mut s,
            "SELECT column_name, column_default, extra FROM information_schema.columns
             WHERE table_schema = 'o' AND table_name = 't' AND column_name <> 'd'
             ORDER BY ordinal_position"
        ),
        [
            "a CURRENT_TIMESTAMP DEFAULT_GENERATED",
            "b CURRENT_TIMESTAMP(6) DEFAULT_GENERATED",
            "c CURRENT_TIMESTAMP DEFAULT_GENERATED",
            "e CURRENT_TIMESTAMP(3) DEFAULT_GENERATED",
            "f CURRENT_TIMESTAMP DEFAULT_GENERATED",
            "g CURRENT_TIMESTAMP DEFAULT_GENERATED",
        ]
    );
    // ALTER COLUMN .. SET DEFAULT keeps the same form.
    run(&mut s, "ALTER TABLE t ALTER COLUMN d SET DEFAULT now()");
    assert_eq!(
        lines(&mut s, "SHOW COLUMNS FROM t LIKE 'd'"),
        ["d datetime YES  CURRENT_TIMESTAMP DEFAULT_GENERATED"]
    );
    // The defaults still give the time.
    run(&mut s, "INSERT INTO t () VALUES ()");
    assert_eq!(
        lines(
            &mut s,
            "SELECT a = f, a = g, a IS NOT NULL, YEAR(b) > 2000 FROM t"
        ),
        ["1 1 1 1"]
    );
}

/// MySQL 8 prints ON UPDATE as `ON UPDATE CURRENT_TIMESTAMP[(fsp)]` in SHOW CREATE
/// TABLE and `on update CURRENT_TIMESTAMP` in Extra (after `DEFAULT_GENERATED` when
/// the DEFAULT is the current time too), and COMMENTs quoted as SHOW CREATE TABLE
/// reads them back; MariaDB prints `current_timestamp()` and no `DEFAULT_GENERATED`.
/// SQLAlchemy reflects the clause and the comments from this text. What ON UPDATE
/// does is in tests/slt/ddl/orm_schema.slt.
#[test]
fn on_update_and_comments_are_shown_as_mysql_shows_them() {
    let (_dir, engine) = engine();
    let mut s = session(&engine);
    run(
        &mut s,
        "CREATE TABLE t (id INT PRIMARY KEY COMMENT 'key',
         ts TIMESTAMP(6) NULL DEFAULT CURRENT_TIMESTAMP(6) ON UPDATE now(6) COMMENT 'touched',
         d DATETIME ON UPDATE LOCALTIMESTAMP,
         n VARCHAR(10) COMMENT 'it''s a \\\\ name\\n') COMMENT = 'the ''t'' table'",
    );
    let create = rows(&mut s, "SHOW CREATE TABLE t")[0][1].to_string();
    assert_eq!(
        create,
        "CREATE TABLE `t` (\n  `id` int NOT NULL COMMENT 'key',\n  \
         `ts` timestamp(6) NULL DEFAULT CURRENT_TIMESTAMP(6) ON UPDATE CURRENT_TIMESTAMP(6) COMMENT 'touched',\n  \
         `d` datetime DEFAULT NULL ON UPDATE CURRENT_TIMESTAMP,\n  \
         `n` varchar(10) DEFAULT NULL COMMENT 'it''s a \\\\ name\\n',\n  \
         PRIMARY KEY (`id`)\n) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 \
         COLLATE=utf8mb4_0900_ai_ci COMMENT='the ''t'' table'"
    );
    // The statement reads back to the same table.
    run(&mut s, "DROP TABLE t");
    run(&mut s, &create);
    assert_eq!(
        rows(&mut s, "SHOW CREATE TABLE t")[0][1].to_string(),
        create
    );
    assert_eq!(
        lines(
            &mut s,
            "SELECT column_name, extra FROM information_schema.columns
             WHERE table_schema = 'o' AND table_name = 't' AND extra <> '' ORDER BY ordinal_position"
        ),
        [
            "ts DEFAULT_GENERATED on update CURRENT_TIMESTAMP(6)",
            "d on update CURRENT_TIMESTAMP",
        ]
    );
    let full = rows(&mut s, "SHOW FULL COLUMNS FROM t");
    let comments: Vec<String> = full.iter().map(|r| r[8].to_string()).collect();
    assert_eq!(comments, ["key", "touched", "", "it's a \\ name\n"]);
    assert_eq!(
        lines(
            &mut s,
            "SELECT table_comment FROM information_schema.tables WHERE table_name = 't'"
        ),
        ["the 't' table"]
    );
    // The lengths MySQL allows, in characters.
    let long = |n: usize| "é".repeat(n);
    run(
        &mut s,
        &format!(
            "CREATE TABLE ok (a INT COMMENT '{}') COMMENT '{}'",
            long(1024),
            long(2048)
        ),
    );
    let e = s
        .execute(&format!(
            "CREATE TABLE bad (a INT COMMENT '{}')",
            long(1025)
        ))
        .expect_err("too long");
    assert_eq!(
        (e.mysql_code(), e.to_string()),
        (
            1629,
            "Comment for field 'a' is too long (max = 1024)".to_string()
        )
    );
    let e = s
        .execute(&format!("ALTER TABLE ok COMMENT = '{}'", long(2049)))
        .expect_err("too long");
    assert_eq!(
        (e.mysql_code(), e.to_string()),
        (
            1628,
            "Comment for table 'ok' is too long (max = 2048)".to_string()
        )
    );
}
