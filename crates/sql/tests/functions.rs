//! Built-in functions where MySQL 8 and MariaDB 10.11 answer differently, so the golden
//! files (which run against both) cannot hold them: the `REGEXP_` functions' MySQL-only
//! forms and error numbers, the UUID conversions, literal collations, CONVERT_TZ with
//! `UTC` and past 2038, the types of date results, the statistical aggregates' DOUBLE
//! results, and RAND's sequence across prepared executions and parallel scans; and the
//! column types of a UNION of mixed types, which the golden files cannot see.

mod common;

use common::{error, rows};

use std::sync::Arc;

use tarn_common::settings::Settings;
use tarn_row::Value;
use tarn_sql::{Engine, QueryResult, Session, SqlType};

fn engine() -> (tempfile::TempDir, Arc<Engine>) {
    common::engine_with("functions", Settings::default())
}

fn session(engine: &Arc<Engine>) -> Session {
    let mut s = engine.session("root", "localhost");
    s.execute("CREATE DATABASE f; USE f").expect("setup");
    s
}

/// The first row's values as text (NULL as `NULL`).
fn texts(session: &mut Session, sql: &str) -> Vec<String> {
    rows(session, sql)[0]
        .iter()
        .map(|v| match tarn_sql::scalar::cast::to_text(v) {
            None => "NULL".to_string(),
            Some(b) => String::from_utf8_lossy(&b).into_owned(),
        })
        .collect()
}

fn column_types(session: &mut Session, sql: &str) -> Vec<SqlType> {
    match session.execute(sql).expect("runs").pop() {
        Some(QueryResult::Rows { columns, .. }) => columns.iter().map(|c| c.ty).collect(),
        _ => panic!("{sql}: no rows"),
    }
}

/// MariaDB has no REGEXP_LIKE, takes at most two or three arguments in the others,
/// answers '' for REGEXP_SUBSTR without a match and writes group references `\1`.
#[test]
fn regexp_functions_take_mysqls_arguments() {
    let (_dir, engine) = engine();
    let mut s = session(&engine);
    assert_eq!(
        texts(
            &mut s,
            "SELECT REGEXP_LIKE('CamelCase', 'CAMELCASE'), REGEXP_LIKE('abc', 'A', 'c'), \
             REGEXP_LIKE('a\\nb\\nc', '^b$', 'm'), REGEXP_LIKE('a\\nb', 'a.b', 'n'), REGEXP_LIKE('a', 'a', NULL)"
        ),
        ["1", "0", "1", "1", "NULL"]
    );
    assert_eq!(
        texts(
            &mut s,
            "SELECT REGEXP_INSTR('dog cat dog', 'dog', 2), REGEXP_INSTR('abcabcabc', 'a+', 1, 3), \
             REGEXP_INSTR('aaabcabcabc', 'a+', 1, 1, 1), REGEXP_INSTR('aaabcabcabc', 'A+', 1, 1, 1, 'c')"
        ),
        ["9", "7", "4", "0"]
    );
    assert_eq!(
        texts(
            &mut s,
            "SELECT REGEXP_SUBSTR('abc def ghi', '[a-z]+', 1, 3), REGEXP_SUBSTR('ab', 'x'), \
             REGEXP_SUBSTR('a🍣b', '.', 2)"
        ),
        ["ghi", "NULL", "🍣"]
    );
    assert_eq!(
        texts(
            &mut s,
            "SELECT REGEXP_REPLACE('abc def ghi', '[a-z]+', 'X', 1, 3), \
             REGEXP_REPLACE('aaabbccbbddaa', '(b+)', '<$1>', 1, 2), \
             REGEXP_REPLACE('John Smith', '(\\\\w+) (\\\\w+)', '$2, $1'), REGEXP_REPLACE('aaa', 'a', 'X', 2)"
        ),
        ["abc def X", "aaabbcc<bb>ddaa", "Smith, John", "aXX"]
    );
    // The collation decides case sensitivity; the match type overrides it.
    s.execute(
        "CREATE TABLE names (id INT PRIMARY KEY, cs VARCHAR(10) COLLATE utf8mb4_bin); \
         INSERT INTO names VALUES (1, 'Alice'), (2, 'alice')",
    )
    .expect("setup");
    assert_eq!(
        texts(
            &mut s,
            "SELECT SUM(REGEXP_LIKE(cs, '^a')), SUM(REGEXP_LIKE(cs, '^a', 'i')) FROM names"
        ),
        ["1", "2"]
    );
    // A pattern from a parameter.
    let prepared = s.prepare("SELECT ? REGEXP ?").expect("prepares");
    for (subject, pattern, matched) in [("abc", "^a", 1), ("abc", "^b", 0)] {
        let args = [Value::Bytes(subject.into()), Value::Bytes(pattern.into())];
        let r = s.execute_prepared(prepared, &args).expect("runs");
        assert_eq!(r.all_rows(), vec![vec![Value::Int(matched)]]);
    }
}

/// MariaDB answers 1139 for every bad pattern and accepts an empty one.
#[test]
fn bad_regexp_arguments_get_mysqls_errors() {
    let (_dir, engine) = engine();
    let mut s = session(&engine);
    assert_eq!(
        error(&mut s, "SELECT 'a' REGEXP ''"),
        (
            3685,
            "HY000",
            "Illegal argument to a regular expression.".into()
        )
    );
    assert_eq!(
        error(&mut s, "SELECT 'a' REGEXP '('"),
        (
            3691,
            "HY000",
            "Mismatched parenthesis in regular expression.".into()
        )
    );
    assert_eq!(error(&mut s, "SELECT 'a' REGEXP 'a['").0, 3696);
    assert_eq!(error(&mut s, "SELECT REGEXP_LIKE('a', 'a{2,1}')").0, 3693);
    assert_eq!(
        error(&mut s, "SELECT REGEXP_SUBSTR('aaa', '+')").2,
        "Syntax error in regular expression on line 1, character 1."
    );
    assert_eq!(
        error(&mut s, "SELECT REGEXP_LIKE('a', 'a', 'x')"),
        (1210, "HY000", "Incorrect arguments to regexp_like".into())
    );
    assert_eq!(
        error(&mut s, "SELECT REGEXP_INSTR('a', 'a+', 3)"),
        (
            3686,
            "HY000",
            "Index out of bounds in regular expression search.".into()
        )
    );
    assert_eq!(
        error(&mut s, "SELECT REGEXP_REPLACE('aaa', 'a', 'X', 0)").0,
        1583
    );
    assert_eq!(
        error(&mut s, "SELECT REGEXP_REPLACE('abc', 'abc', '$abc')").0,
        3887
    );
    assert_eq!(error(&mut s, "SELECT 'aa' REGEXP '(a)\\\\1'").0, 1235);
    // Arguments are checked before a NULL subject answers NULL.
    assert_eq!(
        error(&mut s, "SELECT REGEXP_INSTR(NULL, 'a', 1, 1, 2)").0,
        1210
    );
}

/// MariaDB has none of UUID_TO_BIN, BIN_TO_UUID and IS_UUID.
#[test]
fn uuids_convert_to_binary_and_back() {
    let (_dir, engine) = engine();
    let mut s = session(&engine);
    let fixed = "'6ccd780c-baba-1026-9564-5b8c656024db'";
    assert_eq!(
        texts(
            &mut s,
            &format!(
                "SELECT HEX(UUID_TO_BIN({fixed})), HEX(UUID_TO_BIN({fixed}, 1)), \
                 BIN_TO_UUID(UUID_TO_BIN({fixed})), BIN_TO_UUID(UUID_TO_BIN({fixed}, 1), 1), \
                 BIN_TO_UUID(UUID_TO_BIN({fixed}, 1))"
            )
        ),
        [
            "6CCD780CBABA102695645B8C656024DB",
            "1026BABA6CCD780C95645B8C656024DB",
            "6ccd780c-baba-1026-9564-5b8c656024db",
            "6ccd780c-baba-1026-9564-5b8c656024db",
            "1026baba-6ccd-780c-9564-5b8c656024db",
        ]
    );
    assert_eq!(
        texts(
            &mut s,
            "SELECT IS_UUID('6ccd780c-baba-1026-9564-5b8c656024db'), IS_UUID('6CCD780CBABA102695645B8C656024DB'), \
             IS_UUID('{6ccd780c-baba-1026-9564-5b8c656024db}'), IS_UUID('6ccd780c-baba-1026-9564'), IS_UUID(NULL), \
             IS_UUID(UUID()), LENGTH(UUID_TO_BIN(UUID())), UUID_TO_BIN(NULL), BIN_TO_UUID(NULL)"
        ),
        ["1", "1", "1", "0", "NULL", "1", "16", "NULL", "NULL"]
    );
    // Time-ordered keys: swapped version 1 UUIDs stored in a BLOB column.
    s.execute(
        "CREATE TABLE ids (id INT PRIMARY KEY, b BLOB); \
         INSERT INTO ids VALUES (1, UUID_TO_BIN(UUID(), 1)), (2, UUID_TO_BIN(UUID(), 1))",
    )
    .expect("stores");
    assert_eq!(
        texts(
            &mut s,
            "SELECT COUNT(*), SUM(IS_UUID(BIN_TO_UUID(b, 1))), MAX(b) = (SELECT b FROM ids WHERE id = 2) FROM ids"
        ),
        ["2", "2", "1"]
    );
    assert_eq!(
        error(&mut s, "SELECT UUID_TO_BIN('not-a-uuid')"),
        (
            1411,
            "HY000",
            "Incorrect string value: 'not-a-uuid' for function uuid_to_bin".into()
        )
    );
    assert_eq!(error(&mut s, "SELECT BIN_TO_UUID('short')").0, 1411);
    assert_eq!(
        column_types(
            &mut s,
            "SELECT UUID_TO_BIN(UUID()), BIN_TO_UUID(UUID_TO_BIN(UUID()))"
        ),
        [SqlType::BLOB, SqlType::varchar(36)]
    );
}

/// MariaDB's literals take the connection's collation (utf8mb4_general_ci in the
/// golden files' server), MySQL 8's default is utf8mb4_0900_ai_ci.
#[test]
fn collation_names_follow_mysql_8() {
    let (_dir, engine) = engine();
    let mut s = session(&engine);
    s.execute("CREATE TABLE t (ci VARCHAR(5), cs VARCHAR(5) COLLATE utf8mb4_bin); INSERT INTO t VALUES ('a', 'a')")
        .expect("setup");
    assert_eq!(
        texts(
            &mut s,
            "SELECT COLLATION('a'), COLLATION(ci), COLLATION(cs), COLLATION(ci COLLATE utf8mb4_bin), CHARSET(ci) FROM t"
        ),
        [
            "utf8mb4_0900_ai_ci",
            "utf8mb4_0900_ai_ci",
            "utf8mb4_bin",
            "utf8mb4_bin",
            "utf8mb4"
        ]
    );
}

/// Past the last transition of its file (2037 in tzdata's usual build), a named zone
/// follows the rule the file ends with, where MySQL keeps the last offset: Berlin is
/// on summer time in July 2040. A global `time_zone` is where new sessions start.
#[test]
fn named_zones_follow_their_rules_past_their_transitions() {
    let (_dir, engine) = engine();
    let mut s = session(&engine);
    assert_eq!(
        texts(
            &mut s,
            "SELECT CONVERT_TZ('2040-07-01 12:00:00', '+00:00', 'Europe/Berlin'), \
             CONVERT_TZ('2040-12-01 12:00:00', '+00:00', 'Europe/Berlin'), \
             CONVERT_TZ('2040-07-01 12:00:00', 'America/New_York', 'Europe/Berlin')"
        ),
        [
            "2040-07-01 14:00:00",
            "2040-12-01 13:00:00",
            "2040-07-01 18:00:00"
        ]
    );
    s.execute("SET GLOBAL time_zone = 'asia/kolkata'")
        .expect("a named zone");
    let mut later = engine.session("root", "localhost");
    assert_eq!(
        texts(
            &mut later,
            "SELECT @@time_zone, TIMESTAMPDIFF(MINUTE, UTC_TIMESTAMP(), NOW())"
        ),
        ["asia/kolkata", "330"]
    );
    assert_eq!(texts(&mut s, "SELECT @@session.time_zone"), ["SYSTEM"]);
}

/// MariaDB's TIMESTAMP range ends in 2038 and it knows 'UTC' only from its time zone
/// tables; MySQL 8 (64-bit) converts until 3001, and Tarn's `time_zone` accepts UTC.
/// Also the fraction digits of date results, which the golden files cannot show.
#[test]
fn date_results_follow_mysql_8() {
    let (_dir, engine) = engine();
    let mut s = session(&engine);
    assert_eq!(
        texts(
            &mut s,
            "SELECT CONVERT_TZ('2040-01-01 00:00:00', '+00:00', '+01:00'), \
             CONVERT_TZ('2004-01-01 12:00:00', 'UTC', '-01:00'), \
             CONVERT_TZ('3001-01-19 00:00:00', '+00:00', '+01:00')"
        ),
        [
            "2040-01-01 01:00:00",
            "2004-01-01 11:00:00",
            "3001-01-19 00:00:00"
        ]
    );
    // A microsecond added to a DATE makes a DATETIME(6) (the golden files' runner
    // prints six fraction digits for any DATETIME that has a fraction).
    assert_eq!(
        column_types(
            &mut s,
            "SELECT TIMESTAMPADD(MICROSECOND, 1, DATE '2020-01-01'), TIMESTAMPADD(HOUR, 1, DATE '2020-01-01')"
        ),
        [
            SqlType::DateTime {
                fsp: 6,
                timestamp: false
            },
            SqlType::DateTime {
                fsp: 0,
                timestamp: false
            },
        ]
    );
    // The result is a DATETIME with the fraction digits of its argument.
    assert_eq!(
        column_types(
            &mut s,
            "SELECT CONVERT_TZ('2004-01-01 12:00:00.123', '+00:00', '+10:00'), \
             CONVERT_TZ('2004-01-01 12:00:00', '+00:00', '+10:00'), CONVERT_TZ(NOW(6), '+00:00', '+10:00')"
        ),
        [
            SqlType::DateTime {
                fsp: 3,
                timestamp: false
            },
            SqlType::DateTime {
                fsp: 0,
                timestamp: false
            },
            SqlType::DateTime {
                fsp: 6,
                timestamp: false
            },
        ]
    );
}

/// MariaDB shows these DOUBLEs with four decimals; MySQL's are plain DOUBLEs.
#[test]
fn statistical_aggregates_are_doubles() {
    let (_dir, engine) = engine();
    let mut s = session(&engine);
    s.execute(
        "CREATE TABLE m (id INT PRIMARY KEY, x INT); \
         INSERT INTO m VALUES (1, 2), (2, 4), (3, 4), (4, 4), (5, 5), (6, 5), (7, 7), (8, 9)",
    )
    .expect("setup");
    let r = rows(
        &mut s,
        "SELECT STD(x), STDDEV(x), STDDEV_POP(x), VARIANCE(x), VAR_POP(x), VAR_SAMP(x), STDDEV_SAMP(x) FROM m",
    );
    let doubles: Vec<f64> = r[0]
        .iter()
        .map(|v| match v {
            Value::Double(d) => *d,
            other => panic!("not a DOUBLE: {other:?}"),
        })
        .collect();
    assert_eq!(doubles[..5], [2.0, 2.0, 2.0, 4.0, 4.0]);
    assert!((doubles[5] - 32.0 / 7.0).abs() < 1e-12, "{}", doubles[5]);
    assert!((doubles[6] - (32.0f64 / 7.0).sqrt()).abs() < 1e-12);
    assert_eq!(
        column_types(&mut s, "SELECT STD(x), VAR_SAMP(id), BIT_XOR(x) FROM m"),
        [SqlType::Double, SqlType::Double, SqlType::UInt { bits: 64 }]
    );
}

/// RAND(N) restarts its sequence for each execution of a prepared statement, and a
/// parallel scan hands out exactly the sequence's first numbers (in some order).
#[test]
fn rand_sequences_per_execution_and_across_workers() {
    let (_dir, engine) = engine();
    let mut s = session(&engine);
    s.execute("CREATE TABLE t (id INT PRIMARY KEY); INSERT INTO t VALUES (1), (2), (3)")
        .expect("setup");
    let prepared = s
        .prepare("SELECT RAND(?) FROM t ORDER BY id")
        .expect("prepares");
    let expected = [0.40540353712197724, 0.8716141803857071, 0.1418603212962489];
    for _ in 0..2 {
        let r = s
            .execute_prepared(prepared, &[Value::Int(1)])
            .expect("runs");
        let got: Vec<Value> = r.all_rows().into_iter().map(|mut r| r.remove(0)).collect();
        assert_eq!(got, expected.map(Value::Double));
    }
    // 3 * 2^13 rows: past the size at which a full scan runs on the worker pool.
    for shift in 0..13 {
        let n = 3 << shift;
        // In steps that fit the redo log a statement may take.
        for part in (0..n).step_by(6144) {
            s.execute(&format!(
                "INSERT INTO t SELECT id + {n} FROM t WHERE id > {part} AND id <= {}",
                (part + 6144).min(n)
            ))
            .expect("doubles");
        }
    }
    let rows = rows(&mut s, "SELECT RAND(7) FROM t");
    let mut got: Vec<f64> = rows
        .iter()
        .map(|r| match r[0] {
            Value::Double(d) => d,
            ref other => panic!("not a DOUBLE: {other:?}"),
        })
        .collect();
    let mut rnd = tarn_sql::scalar::rand::MyRnd::from_seed(7);
    let mut want: Vec<f64> = (0..got.len()).map(|_| rnd.next_f64()).collect();
    got.sort_by(f64::total_cmp);
    want.sort_by(f64::total_cmp);
    assert_eq!(got.len(), 3 << 13);
    assert_eq!(got, want);
}

/// A UNION's column has the type aggregated from every branch, and its values are of
/// that type: what clients are told (type, length, decimals) matches what they get.
/// The golden files check the values only.
#[test]
fn union_columns_have_the_aggregated_type() {
    let (_dir, engine) = engine();
    let mut s = session(&engine);
    let decimal = SqlType::Decimal {
        precision: 21,
        scale: 1,
    };
    assert_eq!(column_types(&mut s, "SELECT 1.5 UNION SELECT 2"), [decimal]);
    assert_eq!(
        rows(&mut s, "SELECT 1.5 UNION SELECT 2")
            .iter()
            .map(|r| r[0].clone())
            .collect::<Vec<_>>(),
        [
            Value::Decimal("1.5".parse().unwrap()),
            Value::Decimal("2.0".parse().unwrap())
        ]
    );
    assert_eq!(
        column_types(&mut s, "SELECT 1 UNION SELECT 'abc'"),
        [SqlType::varchar(20)]
    );
    assert_eq!(
        rows(&mut s, "SELECT 7 UNION SELECT 'abc'")[0],
        [Value::Bytes(b"7".to_vec())]
    );
    assert_eq!(
        column_types(&mut s, "SELECT 1 UNION SELECT 2.5e0"),
        [SqlType::Double]
    );
    assert_eq!(
        column_types(
            &mut s,
            "SELECT CAST('2020-01-01' AS DATE) UNION SELECT CAST('2020-01-01' AS DATETIME(3))"
        ),
        [SqlType::DateTime {
            fsp: 3,
            timestamp: false
        }]
    );
    // A column mixed with a string is as long as its widest value as text.
    s.execute("CREATE TABLE u (i INT, d DECIMAL(6,2), v VARCHAR(3))")
        .expect("a table");
    assert_eq!(
        column_types(&mut s, "SELECT i, d FROM u UNION SELECT v, v FROM u"),
        [SqlType::varchar(11), SqlType::varchar(8)]
    );
}

/// EXTRACT of a DAY_ composite unit or HOUR from a TIME: MySQL reads the TIME as it
/// is (day 0, hours past 23), so `DAY_HOUR` of '30:11:12' is 30; MariaDB splits the
/// hours into days (106).
#[test]
fn extract_from_a_time_keeps_its_hours() {
    let (_dir, engine) = engine();
    let mut s = session(&engine);
    assert_eq!(
        texts(
            &mut s,
            "SELECT EXTRACT(DAY_HOUR FROM TIME '30:11:12'), EXTRACT(DAY_MINUTE FROM TIME '-30:11:12'), \
             EXTRACT(DAY_SECOND FROM TIME '30:11:12'), EXTRACT(DAY_MICROSECOND FROM TIME '-30:11:12.5'), \
             EXTRACT(HOUR_MINUTE FROM TIME '-838:59:59'), EXTRACT(HOUR FROM TIME '30:00:00')"
        ),
        ["30", "-3011", "301112", "-301112500000", "-83859", "30"]
    );
    // Named as written.
    match s
        .execute("SELECT EXTRACT(HOUR_SECOND FROM '2020-01-01 10:11:12')")
        .expect("runs")
        .pop()
    {
        Some(QueryResult::Rows { columns, .. }) => assert_eq!(
            columns[0].name,
            "EXTRACT(HOUR_SECOND FROM '2020-01-01 10:11:12')"
        ),
        other => panic!("rows expected: {other:?}"),
    }
}
