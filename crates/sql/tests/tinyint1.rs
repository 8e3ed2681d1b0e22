//! TINYINT(1), BOOL and BOOLEAN as MySQL 8.0.19+ shows them: `tinyint(1)` (with
//! `unsigned` when so declared) in SHOW CREATE TABLE, SHOW COLUMNS / DESCRIBE and
//! information_schema.COLUMNS.COLUMN_TYPE, while every other integer display width
//! is dropped (`tinyint(4)` is `tinyint`, `int(11)` is `int`). MariaDB prints every
//! width, so these are checked here; what it agrees with (the tinyint(1) columns'
//! COLUMN_TYPE, values) is in slt/ddl/tinyint1.slt.

mod common;

use std::sync::Arc;

use tarn_common::settings::Settings;
use tarn_sql::{Engine, Session};

fn engine() -> (tempfile::TempDir, Arc<Engine>) {
    common::engine_with("tinyint1", Settings::default())
}

fn session(engine: &Arc<Engine>) -> Session {
    let mut s = engine.session("root", "localhost");
    s.execute("CREATE DATABASE IF NOT EXISTS b; USE b")
        .expect("b");
    s
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

/// `Field Type` of each column, as DESCRIBE shows it.
fn describe(s: &mut Session, table: &str) -> Vec<String> {
    common::rows(s, &format!("DESCRIBE {table}"))
        .iter()
        .map(|r| format!("{} {}", common::text(&r[0]), common::text(&r[1])))
        .collect()
}

/// `COLUMN_NAME DATA_TYPE COLUMN_TYPE` of each column, from information_schema.
fn column_types(s: &mut Session, table: &str) -> Vec<String> {
    lines(
        s,
        &format!(
            "SELECT COLUMN_NAME, DATA_TYPE, COLUMN_TYPE FROM information_schema.COLUMNS \
             WHERE TABLE_SCHEMA = 'b' AND TABLE_NAME = '{table}' ORDER BY ORDINAL_POSITION"
        ),
    )
}

const T: &str = "CREATE TABLE t (id INT(11) PRIMARY KEY, a TINYINT(1), \
                 b BOOL NOT NULL DEFAULT 1, c BOOLEAN, d TINYINT(1) UNSIGNED, \
                 e TINYINT(4), f TINYINT UNSIGNED, g INT(1))";

const T_SHOWN: &str = "CREATE TABLE `t` (\n  \
                       `id` int NOT NULL,\n  \
                       `a` tinyint(1) DEFAULT NULL,\n  \
                       `b` tinyint(1) NOT NULL DEFAULT '1',\n  \
                       `c` tinyint(1) DEFAULT NULL,\n  \
                       `d` tinyint(1) unsigned DEFAULT NULL,\n  \
                       `e` tinyint DEFAULT NULL,\n  \
                       `f` tinyint unsigned DEFAULT NULL,\n  \
                       `g` int DEFAULT NULL,\n  \
                       PRIMARY KEY (`id`)\n";

/// What SHOW CREATE TABLE, DESCRIBE and information_schema show of table `t` as
/// `T` creates it.
fn assert_shown_as_created(s: &mut Session) {
    let create = show_create(s, "t");
    assert!(create.starts_with(T_SHOWN), "{create}");
    assert_eq!(
        describe(s, "t"),
        [
            "id int",
            "a tinyint(1)",
            "b tinyint(1)",
            "c tinyint(1)",
            "d tinyint(1) unsigned",
            "e tinyint",
            "f tinyint unsigned",
            "g int",
        ]
    );
    assert_eq!(
        column_types(s, "t"),
        [
            "id int int",
            "a tinyint tinyint(1)",
            "b tinyint tinyint(1)",
            "c tinyint tinyint(1)",
            "d tinyint tinyint(1) unsigned",
            "e tinyint tinyint",
            "f tinyint tinyint unsigned",
            "g int int",
        ]
    );
    let full: Vec<String> = common::rows(s, "SHOW FULL COLUMNS FROM t WHERE Field = 'd'")
        .iter()
        .map(|r| common::text(&r[1]))
        .collect();
    assert_eq!(full, ["tinyint(1) unsigned"]);
}

/// Only tinyint(1), BOOL and BOOLEAN keep a width, and the definition is in
/// catalog.json: after a restart it is shown as before.
#[test]
fn tinyint1_is_shown_and_survives_a_restart() {
    let (dir, engine) = engine();
    {
        let mut s = session(&engine);
        common::run(&mut s, T);
        assert_shown_as_created(&mut s);
    }
    drop(engine);
    let engine = Engine::open(&Settings {
        data_dir: dir.path().to_path_buf(),
        ..Settings::default()
    })
    .expect("the engine reopens");
    let mut s = session(&engine);
    assert_shown_as_created(&mut s);
}

/// ADD, MODIFY and CHANGE COLUMN set or clear it; renaming, moving, adding and
/// dropping other columns (in place and by a rebuild) keep it; LIKE copies it; a
/// temporary table keeps it too.
#[test]
fn alter_table_and_like_keep_set_or_clear_it() {
    let (_dir, engine) = engine();
    let mut s = session(&engine);
    common::run(&mut s, T);
    common::run(&mut s, "INSERT INTO t (id, a, b, e) VALUES (1, 1, 0, 100)");
    common::run(
        &mut s,
        "ALTER TABLE t ADD COLUMN h BOOLEAN AFTER id, MODIFY a TINYINT, \
         CHANGE e e1 TINYINT(1) NOT NULL, MODIFY c INT",
    );
    common::run(&mut s, "ALTER TABLE t RENAME COLUMN b TO b1");
    common::run(
        &mut s,
        "ALTER TABLE t ADD COLUMN z INT FIRST, DROP COLUMN f",
    );
    assert_eq!(
        describe(&mut s, "t"),
        [
            "z int",
            "id int",
            "h tinyint(1)",
            "a tinyint",
            "b1 tinyint(1)",
            "c int",
            "d tinyint(1) unsigned",
            "e1 tinyint(1)",
            "g int",
        ]
    );
    let create = show_create(&mut s, "t");
    assert!(
        create.contains("  `e1` tinyint(1) NOT NULL,\n")
            && create.contains("  `a` tinyint DEFAULT"),
        "{create}"
    );
    assert_eq!(lines(&mut s, "SELECT a, b1, e1 FROM t"), ["1 0 100"]);
    // A width on a column of another type is dropped.
    common::run(&mut s, "ALTER TABLE t MODIFY d SMALLINT(1)");
    assert_eq!(
        column_types(&mut s, "t")[6],
        "d smallint smallint",
        "MODIFY to another type"
    );

    common::run(&mut s, "CREATE TABLE l LIKE t");
    assert_eq!(describe(&mut s, "l"), describe(&mut s, "t"));
    common::run(&mut s, "CREATE TEMPORARY TABLE tmp (x BOOL, y TINYINT(2))");
    assert_eq!(describe(&mut s, "tmp"), ["x tinyint(1)", "y tinyint"]);
}

/// CREATE TABLE ... SELECT keeps tinyint(1) for a column selected as it is (also
/// through a derived table), as MySQL does, and not for an expression over it.
#[test]
fn create_table_select_keeps_it_for_selected_columns() {
    let (_dir, engine) = engine();
    let mut s = session(&engine);
    common::run(&mut s, T);
    common::run(&mut s, "INSERT INTO t (id, a, d, e) VALUES (1, 1, 1, 4)");
    common::run(
        &mut s,
        "CREATE TABLE s AS SELECT a, d, e, a AS renamed, a + 0 AS a0, IF(a, 1, 0) AS i FROM t",
    );
    common::run(
        &mut s,
        "CREATE TABLE s2 AS SELECT x.b FROM (SELECT b FROM t) AS x",
    );
    assert_eq!(
        describe(&mut s, "s")[..4],
        [
            "a tinyint(1)",
            "d tinyint(1) unsigned",
            "e tinyint",
            "renamed tinyint(1)",
        ]
    );
    let rest = describe(&mut s, "s")[4..].to_vec();
    assert!(rest.iter().all(|c| !c.contains("(1)")), "{rest:?}");
    assert_eq!(describe(&mut s, "s2"), ["b tinyint(1)"]);
    assert_eq!(lines(&mut s, "SELECT a, d, e, renamed FROM s"), ["1 1 4 1"]);
}
