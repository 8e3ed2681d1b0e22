//! TIME and YEAR where MySQL 8 and MariaDB 10.11 answer differently, so the golden
//! files (types/time.slt, types/year.slt, which run against both) cannot hold them:
//! MySQL 8 rounds a fraction to the column's digits where MariaDB cuts it, spells YEAR
//! without a width (`year`, not `year(4)`) and refuses YEAR(2), shows
//! `information_schema.COLUMNS.COLUMN_DEFAULT` unquoted, returns TIME_TO_SEC as an
//! integer, EXTRACT's TIME hours past 23, and makes a TIME plus days a DATETIME. Also
//! what depends on the clock (a TIME put on the current date).

mod common;

use std::sync::Arc;

use tarn_common::settings::Settings;
use tarn_sql::{Engine, QueryResult, Session, SqlType};

fn engine() -> (tempfile::TempDir, Arc<Engine>) {
    common::engine_with("time_types", Settings::default())
}

fn session(engine: &Arc<Engine>) -> Session {
    let mut s = engine.session("root", "localhost");
    s.execute("CREATE DATABASE tt; USE tt").expect("setup");
    s
}

/// The rows of the last statement as the text protocol shows them (NULL as `NULL`),
/// and the columns' types.
fn query(session: &mut Session, sql: &str) -> (Vec<Vec<String>>, Vec<SqlType>) {
    let result = session
        .execute(sql)
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
        .pop();
    let Some(result @ QueryResult::Rows { .. }) = result else {
        panic!("{sql}: no rows");
    };
    let QueryResult::Rows { columns, .. } = &result else {
        unreachable!()
    };
    let types: Vec<SqlType> = columns.iter().map(|c| c.ty).collect();
    let rows = result
        .all_rows()
        .iter()
        .map(|row| {
            row.iter()
                .zip(&types)
                .map(|(v, ty)| match tarn_sql::scalar::cast::to_text_as(v, *ty) {
                    None => "NULL".to_string(),
                    Some(b) => String::from_utf8_lossy(&b).into_owned(),
                })
                .collect()
        })
        .collect();
    (rows, types)
}

fn row(session: &mut Session, sql: &str) -> Vec<String> {
    query(session, sql).0.swap_remove(0)
}

fn error(session: &mut Session, sql: &str) -> (u16, String) {
    match session.execute(sql) {
        Ok(_) => panic!("{sql}: no error"),
        Err(e) => (e.mysql_code(), e.to_string()),
    }
}

/// MySQL 8 rounds a fraction to the column's (or CAST's) digits, half away from zero;
/// MariaDB cuts it.
#[test]
fn fractions_round_to_the_column() {
    let (_dir, engine) = engine();
    let mut s = session(&engine);
    s.execute("CREATE TABLE t (a TIME, b TIME(3))").unwrap();
    s.execute(
        "INSERT INTO t VALUES ('10:10:10.5', '-1:2:3.4567'), (101010.9999995, '0:0:0.0005'), \
         ('-10:10:10.5', '838:59:58.9999')",
    )
    .unwrap();
    let (rows, _) = query(&mut s, "SELECT a, b FROM t");
    assert_eq!(
        rows,
        [
            ["10:10:11", "-01:02:03.457"],
            ["10:10:11", "00:00:00.001"],
            ["-10:10:11", "838:59:59.000"],
        ]
    );
    assert_eq!(
        row(
            &mut s,
            "SELECT CAST(123456.7 AS TIME), CAST('10:10:10.6' AS TIME), CAST('1.25' AS TIME(1))"
        ),
        ["12:34:57", "10:10:11", "00:00:01.3"]
    );
}

/// MySQL 8 spells YEAR `year` (MariaDB `year(4)`), refuses YEAR(2), and shows
/// COLUMN_DEFAULT without quotes.
#[test]
fn types_and_defaults_are_shown_as_mysql_8_shows_them() {
    let (_dir, engine) = engine();
    let mut s = session(&engine);
    s.execute(
        "CREATE TABLE t (id INT PRIMARY KEY, y YEAR(4) DEFAULT 70, t TIME(2) NOT NULL \
         DEFAULT '-1:2:3.5', u TIME DEFAULT NULL)",
    )
    .unwrap();
    let (rows, _) = query(&mut s, "SHOW CREATE TABLE t");
    assert_eq!(
        rows[0][1],
        "CREATE TABLE `t` (\n  `id` int NOT NULL,\n  `y` year DEFAULT '1970',\n  `t` time(2) \
         NOT NULL DEFAULT '-01:02:03.50',\n  `u` time DEFAULT NULL,\n  PRIMARY KEY (`id`)\n) \
         ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_0900_ai_ci"
    );
    let (rows, _) = query(
        &mut s,
        "SELECT COLUMN_NAME, COLUMN_TYPE, COLUMN_DEFAULT FROM information_schema.COLUMNS \
         WHERE TABLE_SCHEMA = 'tt' AND TABLE_NAME = 't' AND COLUMN_NAME <> 'id' \
         ORDER BY ORDINAL_POSITION",
    );
    assert_eq!(
        rows,
        [
            ["y", "year", "1970"],
            ["t", "time(2)", "-01:02:03.50"],
            ["u", "time", "NULL"],
        ]
    );
    let (rows, _) = query(&mut s, "SHOW COLUMNS FROM t LIKE 'y'");
    assert_eq!(rows[0][1], "year");
    assert_eq!(
        error(&mut s, "CREATE TABLE bad (y YEAR(2))"),
        (1818, "Supports only YEAR or YEAR(4) column.".to_string())
    );
    s.execute("INSERT INTO t (id) VALUES (1)").unwrap();
    assert_eq!(
        row(&mut s, "SELECT y, t, u FROM t"),
        ["1970", "-01:02:03.50", "NULL"]
    );
}

/// TIME_TO_SEC is an integer in MySQL 8 (MariaDB keeps the fraction); EXTRACT of a
/// TIME's hours passes 23 and keeps the sign (MariaDB takes the hour of the day).
#[test]
fn time_functions_answer_as_mysql_8() {
    let (_dir, engine) = engine();
    let mut s = session(&engine);
    let (rows, types) = query(
        &mut s,
        "SELECT TIME_TO_SEC('-1:00:00.5'), EXTRACT(HOUR FROM TIME '100:00:00'), \
         EXTRACT(HOUR FROM TIME '-10:20:30')",
    );
    assert_eq!(rows[0], ["-3600", "100", "-10"]);
    assert_eq!(types[0], SqlType::BIGINT);
    // The types results are described with.
    let (_, types) = query(
        &mut s,
        "SELECT CURTIME(3), TIMEDIFF(TIME '10:00:00', '12:30:15.5'), SEC_TO_TIME(1.5), \
         SEC_TO_TIME(90), TIME('10:00'), MAKETIME(1, 2, 3), TIME '01:02:03.45', \
         ADDTIME(TIME '10:00:00', '01:00:00'), ADDTIME('10:00:00', '01:00:00')",
    );
    assert_eq!(
        types,
        [
            SqlType::Time { fsp: 3 },
            SqlType::Time { fsp: 1 },
            SqlType::Time { fsp: 1 },
            SqlType::Time { fsp: 0 },
            SqlType::Time { fsp: 0 },
            SqlType::Time { fsp: 0 },
            SqlType::Time { fsp: 2 },
            SqlType::Time { fsp: 0 },
            SqlType::varchar(26),
        ]
    );
    assert_eq!(
        error(&mut s, "SELECT TIME 'noon'"),
        (1525, "Incorrect TIME value: 'noon'".to_string())
    );
}

/// A TIME where a date is needed is put on the current date, as MySQL does: CAST,
/// comparisons with DATETIMEs, a DATETIME column, and DATE_ADD with days (a DATETIME
/// in MySQL 8; MariaDB keeps a TIME).
#[test]
fn a_time_on_a_date_is_on_today() {
    let (_dir, engine) = engine();
    let mut s = session(&engine);
    let today = row(&mut s, "SELECT CURDATE()")[0].clone();
    let (rows, types) = query(
        &mut s,
        "SELECT CAST(TIME '10:00:00' AS DATETIME), DATE_ADD(TIME '10:00:00', INTERVAL 1 DAY), \
         TIME '10:00:00' = CAST(CONCAT(CURDATE(), ' 10:00:00') AS DATETIME), CAST(TIME '-01:00:00' AS DATE) < CURDATE()",
    );
    // A test that runs across midnight would see two dates.
    if row(&mut s, "SELECT CURDATE()")[0] != today {
        return;
    }
    let tomorrow = row(&mut s, "SELECT CURDATE() + INTERVAL 1 DAY")[0].clone();
    assert_eq!(
        rows[0],
        [
            format!("{today} 10:00:00"),
            format!("{tomorrow} 10:00:00"),
            "1".to_string(),
            "1".to_string(),
        ]
    );
    assert!(matches!(types[1], SqlType::DateTime { .. }));
    s.execute("CREATE TABLE d (at DATETIME)").unwrap();
    s.execute("INSERT INTO d VALUES (TIME '23:59:59')").unwrap();
    assert_eq!(
        row(&mut s, "SELECT at FROM d")[0],
        format!("{today} 23:59:59")
    );
}

/// MIN and MAX of a YEAR keep the type (`0000`), as a YEAR column shows.
#[test]
fn aggregates_of_a_year_are_years() {
    let (_dir, engine) = engine();
    let mut s = session(&engine);
    s.execute("CREATE TABLE y (y YEAR)").unwrap();
    s.execute("INSERT INTO y VALUES (0), (2001)").unwrap();
    let (rows, types) = query(&mut s, "SELECT MIN(y), MAX(y) FROM y");
    assert_eq!(rows[0], ["0000", "2001"]);
    assert_eq!(types, [SqlType::Year, SqlType::Year]);
}

/// CAST(x AS YEAR) (MySQL 8.0.22; MariaDB has no such cast): a number or string as a
/// YEAR column reads it, a date its year, anything out of range NULL.
#[test]
fn cast_as_year_reads_as_a_year_column() {
    let (_dir, engine) = engine();
    let mut s = session(&engine);
    let (rows, types) = query(
        &mut s,
        "SELECT CAST(1 AS YEAR), CAST(69 AS YEAR), CAST(70 AS YEAR), CAST(99 AS YEAR), \
         CAST(0 AS YEAR), CAST('0' AS YEAR), CAST('00' AS YEAR), CAST('0000' AS YEAR), \
         CAST(2155 AS YEAR), CAST(2156 AS YEAR), CAST(100 AS YEAR), CAST(-1 AS YEAR), \
         CAST('2012x' AS YEAR), CAST('abc' AS YEAR), CAST(DATE '2021-05-06' AS YEAR), \
         CAST(1999.6 AS YEAR), CAST(NULL AS YEAR)",
    );
    assert_eq!(
        rows[0],
        [
            "2001", "2069", "1970", "1999", "0000", "2000", "2000", "0000", "2155", "NULL", "NULL",
            "NULL", "2012", "NULL", "2021", "2000", "NULL"
        ]
    );
    assert_eq!(types[0], SqlType::Year);
    assert_eq!(row(&mut s, "SELECT CONVERT('21', YEAR) + 0"), ["2021"]);
}
