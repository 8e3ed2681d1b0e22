//! ENUM, SET and BIT where MariaDB (which the golden files also run against) answers
//! otherwise than MySQL 8: the bounds of a definition (BIT(0), a member of 256
//! characters, 65536 members, which MariaDB takes or refuses otherwise), MIN and MAX
//! of an indexed ENUM (MariaDB reads them from the index, in index order; MySQL
//! compares text), and what only Tarn has to say: the catalog form of an ENUM and the
//! key lookups that an ENUM's or SET's text order rules out. The rest is in
//! tests/slt/types/enum.slt, set.slt and bit.slt.

mod common;

use common::{lines, run};

use std::sync::Arc;

use tarn_common::settings::Settings;
use tarn_sql::{Engine, Session};

fn engine() -> (tempfile::TempDir, Arc<Engine>) {
    common::engine_with("column_types", Settings::default())
}

fn session(engine: &Arc<Engine>) -> Session {
    let mut s = engine.session("root", "localhost");
    s.execute("CREATE DATABASE IF NOT EXISTS c; USE c")
        .expect("the database");
    s
}

/// The error `sql` fails with: (MySQL number, message).
fn error(session: &mut Session, sql: &str) -> (u16, String) {
    match session.execute(sql) {
        Ok(results) => panic!("{sql}: expected an error, got {results:?}"),
        Err(e) => (e.mysql_code(), e.to_string()),
    }
}

#[test]
fn definitions_beyond_mysql_bounds_are_its_errors() {
    let (_dir, engine) = engine();
    let mut s = session(&engine);
    // MariaDB takes BIT(0) as BIT(1).
    assert_eq!(
        error(&mut s, "CREATE TABLE t (b BIT(0))"),
        (3013, "Invalid size for column 'b'.".into())
    );
    let (code, message) = error(&mut s, "CREATE TABLE t (b BIT(65))");
    assert_eq!(code, 1439, "{message}");
    // MariaDB takes a member of 256 characters.
    let long = "é".repeat(256);
    assert_eq!(
        error(&mut s, &format!("CREATE TABLE t (e ENUM('a', '{long}'))")),
        (3505, "Too long enumeration/set value for column e.".into())
    );
    run(
        &mut s,
        &format!("CREATE TABLE ok (e ENUM('a', '{}'))", "é".repeat(255)),
    );
    // MariaDB: 1117 "Table definition is too large".
    let members: Vec<String> = (0..65_536).map(|i| format!("'m{i}'")).collect();
    let (code, message) = error(
        &mut s,
        &format!("CREATE TABLE t (e ENUM({}))", members.join(",")),
    );
    assert_eq!(
        (code, message.as_str()),
        (3504, "Too many enumeration values for column e.")
    );
    // 65535 members is the most: two bytes an index.
    run(
        &mut s,
        &format!(
            "CREATE TABLE wide (e ENUM({}))",
            members[..65_535].join(",")
        ),
    );
    run(&mut s, "INSERT INTO wide VALUES ('m65534'), ('m0'), (300)");
    assert_eq!(
        lines(&mut s, "SELECT e, e + 0 FROM wide ORDER BY e"),
        ["m0 1", "m299 300", "m65534 65535"]
    );
    assert!(lines(&mut s, "SHOW TABLES").iter().all(|t| t != "t"));
}

#[test]
fn min_and_max_of_an_indexed_enum_compare_text() {
    let (_dir, engine) = engine();
    let mut s = session(&engine);
    run(
        &mut s,
        "CREATE TABLE t (id INT PRIMARY KEY, size ENUM('small', 'medium', 'large'), KEY size (size))",
    );
    run(
        &mut s,
        "INSERT INTO t VALUES (1, 'small'), (2, 'large'), (3, 'medium')",
    );
    // MySQL compares text ('large' < 'medium' < 'small'), as for an ENUM without an
    // index; MariaDB gives 'small' and 'large', the index's first and last.
    assert_eq!(
        lines(&mut s, "SELECT MIN(size), MAX(size) FROM t"),
        ["large small"]
    );
    // ORDER BY is by index.
    assert_eq!(
        lines(&mut s, "SELECT size FROM t ORDER BY size"),
        ["small", "medium", "large"]
    );
}

/// An equality on an indexed ENUM is a key lookup, a range on its text is not (the
/// key is in index order): EXPLAIN shows which, and the answers are those of a scan.
#[test]
fn an_enum_key_serves_equalities_not_text_ranges() {
    let (_dir, engine) = engine();
    let mut s = session(&engine);
    run(
        &mut s,
        "CREATE TABLE t (id INT PRIMARY KEY, size ENUM('small', 'medium', 'large'), KEY size (size))",
    );
    // 5 large, the rest small or medium.
    let values: Vec<String> = (0..300)
        .map(|i| format!("({i}, {})", if i % 60 == 0 { 3 } else { i % 2 + 1 }))
        .collect();
    run(
        &mut s,
        &format!("INSERT INTO t VALUES {}", values.join(",")),
    );
    run(&mut s, "ANALYZE TABLE t");
    let plan = lines(
        &mut s,
        "EXPLAIN SELECT id FROM t FORCE INDEX (size) WHERE size = 'Large'",
    )
    .join("\n");
    assert!(plan.contains("index range on size"), "{plan}");
    assert_eq!(
        lines(&mut s, "SELECT COUNT(*) FROM t WHERE size = 'Large'"),
        ["5"]
    );
    // 'large' < 'medium' as text: the large and no other, even through the index.
    assert_eq!(
        lines(
            &mut s,
            "SELECT COUNT(*), MIN(size) FROM t WHERE size < 'medium'"
        ),
        ["5 large"]
    );
    let range = "FROM t FORCE INDEX (size) WHERE size > 'large' AND size <= 'small'";
    let plan = lines(&mut s, &format!("EXPLAIN SELECT id {range}")).join("\n");
    assert!(plan.contains("full scan"), "{plan}");
    assert_eq!(lines(&mut s, &format!("SELECT COUNT(*) {range}")), ["295"]);
}

/// The catalog keeps an ENUM's and a SET's members; after a restart the columns read,
/// sort and take values as before.
#[test]
fn members_survive_a_restart() {
    let (dir, engine) = engine();
    {
        let mut s = session(&engine);
        run(
            &mut s,
            "CREATE TABLE t (id INT PRIMARY KEY, e ENUM('b', 'a') NOT NULL, s SET('x', 'y'), f BIT(3))",
        );
        run(
            &mut s,
            "INSERT INTO t VALUES (1, 'a', 'y,x', 5), (2, 'B', '', 0)",
        );
    }
    drop(engine);
    let engine = Engine::open(&Settings {
        data_dir: dir.path().to_path_buf(),
        ..Settings::default()
    })
    .expect("the engine reopens");
    let mut s = session(&engine);
    run(&mut s, "INSERT INTO t VALUES (3, 'A', 'Y', b'111')");
    assert_eq!(
        lines(&mut s, "SELECT id, e, s, f + 0 FROM t ORDER BY e, id"),
        ["2 b  0", "1 a x,y 5", "3 a y 7"]
    );
    let catalog: String = std::fs::read_to_string(dir.path().join("catalog.json"))
        .unwrap()
        .split_whitespace()
        .collect();
    assert!(
        catalog.contains(r#"{"Enum":{"members":["b","a"]}}"#),
        "{catalog}"
    );
}
