//! JSON as MySQL 8 has it, where MariaDB 10.11 (which the golden files also run
//! against) differs: MariaDB's JSON is LONGTEXT, keeps the text as written (no
//! normalized printing, no key order, duplicate keys kept), checks documents with a
//! CHECK constraint (error 4025, not 3140), has no `->` / `->>`, and answers many
//! functions' edge cases otherwise. Each expectation below is MySQL 8.0's.

mod common;

use common::{error, text};

use std::sync::Arc;

use tarn_common::settings::Settings;
use tarn_row::Value;
use tarn_sql::{Engine, QueryResult, Session, SqlType};

/// A small engine: these tests hold a few rows.
fn engine() -> (tempfile::TempDir, Arc<Engine>) {
    let settings = Settings {
        buffer_pool_size_bytes: 16 << 20,
        log_file_size_bytes: 4 << 20,
        log_files: 2,
        log_buffer_size_bytes: 1 << 20,
        ..Settings::default()
    };
    common::engine_with("json", settings)
}

fn session(engine: &Arc<Engine>) -> Session {
    let mut s = engine.session("root", "localhost");
    s.execute("CREATE DATABASE j; USE j").expect("setup");
    s
}

/// Every row's values as text (NULL as `NULL`).
fn rows(session: &mut Session, sql: &str) -> Vec<Vec<String>> {
    common::rows(session, sql)
        .iter()
        .map(|row| row.iter().map(text).collect())
        .collect()
}

/// The single value of a one-row, one-column query.
fn one(session: &mut Session, sql: &str) -> String {
    let r = rows(session, sql);
    assert_eq!((r.len(), r[0].len()), (1, 1), "{sql}");
    r[0][0].clone()
}

fn column_types(session: &mut Session, sql: &str) -> Vec<SqlType> {
    match session.execute(sql).expect("runs").pop() {
        Some(QueryResult::Rows { columns, .. }) => columns.iter().map(|c| c.ty).collect(),
        _ => panic!("{sql}: no rows"),
    }
}

/// A JSON column holds the document as MySQL 8 prints it: one space after `:` and
/// `,`, keys by length then bytewise, the last of duplicate keys, DOUBLEs with `.0`.
#[test]
fn a_json_column_holds_the_normalized_document() {
    let (_dir, engine) = engine();
    let mut s = session(&engine);
    s.execute("CREATE TABLE t (id INT PRIMARY KEY, j JSON)")
        .unwrap();
    s.execute(
        r#"INSERT INTO t VALUES
           (1, '{"b":[1,2],"a":1}'),
           (2, '{"bb": 1, "a": 2, "c": 3, "aa": {"z": null, "y": true}}'),
           (3, '{"a": 1, "a": 2}'),
           (4, ' [ 1e2 , 1.50, -0, 18446744073709551615, "\\u00e9\\n" ] '),
           (5, NULL),
           (6, '"text"')"#,
    )
    .unwrap();
    assert_eq!(
        rows(&mut s, "SELECT id, j FROM t ORDER BY id"),
        [
            ["1", r#"{"a": 1, "b": [1, 2]}"#],
            [
                "2",
                r#"{"a": 2, "c": 3, "aa": {"y": true, "z": null}, "bb": 1}"#
            ],
            ["3", r#"{"a": 2}"#],
            ["4", "[100.0, 1.5, 0, 18446744073709551615, \"é\\n\"]"],
            ["5", "NULL"],
            ["6", r#""text""#],
        ]
    );
    assert_eq!(column_types(&mut s, "SELECT j FROM t"), [SqlType::Json]);
    // UPDATE normalizes too; a JSON value from a function is stored as it prints.
    s.execute(r#"UPDATE t SET j = '{"z":0,"y":[]}' WHERE id = 5"#)
        .unwrap();
    s.execute(r#"UPDATE t SET j = JSON_SET(j, '$.c', JSON_ARRAY(1, 'x')) WHERE id = 1"#)
        .unwrap();
    assert_eq!(
        rows(&mut s, "SELECT j FROM t WHERE id IN (1, 5) ORDER BY id"),
        [
            [r#"{"a": 1, "b": [1, 2], "c": [1, "x"]}"#],
            [r#"{"y": [], "z": 0}"#]
        ]
    );
    // JSON in string context prints normalized.
    assert_eq!(
        one(&mut s, "SELECT CONCAT('<', j, '>') FROM t WHERE id = 3"),
        r#"<{"a": 2}>"#
    );
    assert_eq!(one(&mut s, "SELECT LENGTH(j) FROM t WHERE id = 3"), "8");
}

/// Invalid JSON is error 3140 (SQLSTATE 22032) naming the table and column, with
/// rapidjson's message and offset, and the statement changes nothing.
#[test]
fn invalid_json_is_3140_and_changes_nothing() {
    let (_dir, engine) = engine();
    let mut s = session(&engine);
    s.execute("CREATE TABLE t (id INT PRIMARY KEY, j JSON NOT NULL)")
        .unwrap();
    s.execute(r#"INSERT INTO t VALUES (1, '{"a": 1}')"#)
        .unwrap();
    assert_eq!(
        error(&mut s, r#"INSERT INTO t VALUES (2, '[1]'), (3, '{"a" 1}')"#),
        (
            3140,
            "22032",
            r#"Invalid JSON text: "Missing a colon after a name of object member." at position 5 in value for column 't.j'."#
                .to_string()
        )
    );
    assert_eq!(
        error(&mut s, "INSERT INTO t VALUES (2, '')"),
        (
            3140,
            "22032",
            r#"Invalid JSON text: "The document is empty." at position 0 in value for column 't.j'."#
                .to_string()
        )
    );
    // A number is no JSON text: MySQL wants a CAST.
    assert_eq!(
        error(&mut s, "INSERT INTO t VALUES (2, 1)"),
        (
            3140,
            "22032",
            r#"Invalid JSON text: "not a JSON text, may need CAST" at position 0 in value for column 't.j'."#
                .to_string()
        )
    );
    assert_eq!(error(&mut s, "UPDATE t SET j = '{' WHERE id = 1").0, 3140);
    assert_eq!(rows(&mut s, "SELECT id, j FROM t"), [["1", r#"{"a": 1}"#]]);
    s.execute("INSERT INTO t VALUES (2, CAST(1 AS JSON)), (3, CAST('[true]' AS JSON))")
        .unwrap();
    assert_eq!(
        rows(&mut s, "SELECT j FROM t ORDER BY id"),
        [[r#"{"a": 1}"#], ["1"], ["[true]"]]
    );
    // Nesting past 100 is 3157.
    let deep = format!("{}{}", "[".repeat(101), "]".repeat(101));
    let (code, state, message) = error(&mut s, &format!("INSERT INTO t VALUES (9, '{deep}')"));
    assert_eq!(
        (code, state, message.as_str()),
        (
            3157,
            "22032",
            "The JSON document exceeds the maximum depth."
        )
    );
    let ok = format!("{}{}", "[".repeat(100), "]".repeat(100));
    s.execute(&format!("INSERT INTO t VALUES (9, '{ok}')"))
        .unwrap();
}

/// A JSON column cannot be in an index key (3152), however the key is declared.
#[test]
fn a_json_column_is_no_key() {
    let (_dir, engine) = engine();
    let mut s = session(&engine);
    let message =
        "JSON column 'j' supports indexing only via generated columns on a specified JSON path.";
    for sql in [
        "CREATE TABLE t (j JSON PRIMARY KEY)",
        "CREATE TABLE t (id INT PRIMARY KEY, j JSON UNIQUE)",
        "CREATE TABLE t (id INT PRIMARY KEY, j JSON, KEY (j))",
        "CREATE TABLE t (id INT, j JSON, PRIMARY KEY (id, j))",
    ] {
        assert_eq!(
            error(&mut s, sql),
            (3152, "42000", message.to_string()),
            "{sql}"
        );
    }
    s.execute("CREATE TABLE t (id INT PRIMARY KEY, j JSON)")
        .unwrap();
    assert_eq!(error(&mut s, "CREATE INDEX ij ON t (j)").0, 3152);
    assert_eq!(error(&mut s, "ALTER TABLE t ADD INDEX (j)").0, 3152);
    assert_eq!(
        error(&mut s, "ALTER TABLE t ADD COLUMN k JSON UNIQUE").0,
        3152
    );
    // What SHOW CREATE TABLE and information_schema say.
    assert_eq!(
        rows(&mut s, "SHOW CREATE TABLE t")[0][1].replace('\n', " "),
        "CREATE TABLE `t` (   `id` int NOT NULL,   `j` json DEFAULT NULL,   PRIMARY KEY (`id`) ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_0900_ai_ci"
    );
    assert_eq!(
        rows(
            &mut s,
            "SELECT DATA_TYPE, COLUMN_TYPE, CHARACTER_MAXIMUM_LENGTH, CHARACTER_SET_NAME \
             FROM information_schema.COLUMNS WHERE TABLE_NAME = 't' AND COLUMN_NAME = 'j'"
        ),
        [["json", "json", "NULL", "NULL"]]
    );
}

/// `->` is JSON_EXTRACT and `->>` JSON_UNQUOTE of it (MariaDB has neither).
#[test]
fn arrows_extract_and_unquote() {
    let (_dir, engine) = engine();
    let mut s = session(&engine);
    s.execute("CREATE TABLE users (id INT PRIMARY KEY, settings JSON)")
        .unwrap();
    s.execute(
        r#"INSERT INTO users VALUES
           (1, '{"theme": "dark", "n": 1, "tags": ["a", "b"], "o": {"k": "v\\"q"}}'),
           (2, '{"theme": "light", "n": 1.0, "tags": []}'),
           (3, '{"n": 2}'),
           (4, NULL)"#,
    )
    .unwrap();
    assert_eq!(
        rows(
            &mut s,
            "SELECT id, settings->'$.theme', settings->>'$.theme', settings->'$.tags[1]', \
             settings->>'$.o.k', settings -> '$.o' FROM users ORDER BY id"
        ),
        [
            [
                "1",
                r#""dark""#,
                "dark",
                r#""b""#,
                "v\"q",
                r#"{"k": "v\"q"}"#
            ],
            ["2", r#""light""#, "light", "NULL", "NULL", "NULL"],
            ["3", "NULL", "NULL", "NULL", "NULL", "NULL"],
            ["4", "NULL", "NULL", "NULL", "NULL", "NULL"],
        ]
    );
    // Comparisons with a JSON value compare JSON: 1 = 1.0, a JSON string with text.
    assert_eq!(
        rows(
            &mut s,
            "SELECT id FROM users WHERE settings->'$.n' = 1 ORDER BY id"
        ),
        [["1"], ["2"]]
    );
    assert_eq!(
        rows(
            &mut s,
            "SELECT id FROM users WHERE settings->'$.theme' = 'dark'"
        ),
        [["1"]]
    );
    assert_eq!(
        rows(
            &mut s,
            "SELECT id FROM users WHERE settings->>'$.theme' = 'light'"
        ),
        [["2"]]
    );
    assert_eq!(
        rows(&mut s, "SELECT id FROM users WHERE settings->'$.n' > 1"),
        [["3"]]
    );
    // ORDER BY a JSON value sorts as JSON compares: SQL NULL, then numbers by value.
    s.execute(r#"INSERT INTO users VALUES (5, '{"n": 10}'), (6, '{"n": "a"}')"#)
        .unwrap();
    assert_eq!(
        rows(
            &mut s,
            "SELECT id, settings->'$.n' AS n FROM users ORDER BY n, id"
        ),
        [
            ["4", "NULL"],
            ["1", "1"],
            ["2", "1.0"],
            ["3", "2"],
            ["5", "10"],
            ["6", r#""a""#]
        ]
    );
    assert_eq!(
        rows(
            &mut s,
            "SELECT id FROM users ORDER BY settings->'$.n' DESC, id LIMIT 2"
        ),
        [["6"], ["5"]]
    );
    s.execute("DELETE FROM users WHERE id > 4").unwrap();
    assert_eq!(
        rows(
            &mut s,
            "SELECT id FROM users WHERE settings->'$.n' IN (2, 3) OR settings->'$.theme' IN ('dark')"
        ),
        [["1"], ["3"]]
    );
    // Laravel's and Django's forms.
    assert_eq!(
        rows(
            &mut s,
            r#"SELECT id FROM users WHERE json_unquote(json_extract(`settings`, '$."theme"')) = 'dark'"#
        ),
        [["1"]]
    );
    assert_eq!(
        rows(
            &mut s,
            r#"SELECT id FROM users WHERE JSON_EXTRACT(settings, '$."n"') = JSON_EXTRACT('2', '$') "#
        ),
        [["3"]]
    );
    assert_eq!(
        rows(
            &mut s,
            "SELECT id FROM users WHERE JSON_CONTAINS(settings, '\"a\"', '$.tags') ORDER BY id"
        ),
        [["1"]]
    );
    assert_eq!(
        rows(
            &mut s,
            "SELECT id FROM users WHERE JSON_CONTAINS_PATH(settings, 'one', '$.theme') ORDER BY id"
        ),
        [["1"], ["2"]]
    );
    // The unquoted text is utf8mb4_bin, so it compares case-sensitively.
    assert!(
        rows(
            &mut s,
            "SELECT id FROM users WHERE settings->>'$.theme' = 'DARK'"
        )
        .is_empty()
    );
    assert_eq!(
        column_types(
            &mut s,
            "SELECT settings->'$.n', settings->>'$.n' FROM users"
        ),
        [SqlType::Json, tarn_sql::scalar::json::TEXT]
    );
    assert_eq!(
        error(&mut s, "SELECT settings->'theme' FROM users"),
        (
            3143,
            "42000",
            "Invalid JSON path expression. The error is around character position 1.".to_string()
        )
    );
}

/// The building functions: MySQL 8's key order and value types.
#[test]
fn functions_build_documents_as_mysql() {
    let (_dir, engine) = engine();
    let mut s = session(&engine);
    for (sql, expected) in [
        (
            "JSON_OBJECT('b', 1, 'a', 'x', 'cc', NULL)",
            r#"{"a": "x", "b": 1, "cc": null}"#,
        ),
        ("JSON_OBJECT()", "{}"),
        ("JSON_OBJECT('k', 1, 'k', 2)", r#"{"k": 2}"#),
        (
            "JSON_ARRAY(1, 1.50, 2.5e0, 'x', NULL, TRUE, 1 = 1, 1 < 0, DATE '2024-02-29')",
            r#"[1, 1.50, 2.5, "x", null, true, true, false, "2024-02-29"]"#,
        ),
        (
            "JSON_ARRAY(JSON_OBJECT('a', 1), '{\"a\": 1}')",
            r#"[{"a": 1}, "{\"a\": 1}"]"#,
        ),
        ("JSON_ARRAY(CAST('[1]' AS JSON))", "[[1]]"),
        (
            "CAST('{\"b\":1, \"a\" : [ ]}' AS JSON)",
            r#"{"a": [], "b": 1}"#,
        ),
        ("CAST(1 = 1 AS JSON)", "true"),
        ("CAST(2.50 AS JSON)", "2.50"),
        ("JSON_QUOTE('a\"b\\\\c')", r#""a\"b\\c""#),
        ("JSON_UNQUOTE('\"a\\\\tb\"')", "a\tb"),
        ("JSON_UNQUOTE('[1, 2]')", "[1, 2]"),
        (
            "JSON_SET('{\"a\": 1}', '$.b', 2, '$.a', 3)",
            r#"{"a": 3, "b": 2}"#,
        ),
        ("JSON_SET('[1]', '$[5]', 2)", "[1, 2]"),
        ("JSON_SET('1', '$[1]', 2)", "[1, 2]"),
        (
            "JSON_SET('{\"a\": 1}', '$.b', '[1]')",
            r#"{"a": 1, "b": "[1]"}"#,
        ),
        (
            "JSON_SET('{\"a\": 1}', '$.b', CAST('[1]' AS JSON))",
            r#"{"a": 1, "b": [1]}"#,
        ),
        (
            "JSON_INSERT('{\"a\": 1}', '$.a', 2, '$.b', 3)",
            r#"{"a": 1, "b": 3}"#,
        ),
        (
            "JSON_REPLACE('{\"a\": 1}', '$.a', 2, '$.b', 3)",
            r#"{"a": 2}"#,
        ),
        (
            "JSON_REMOVE('[1, [2, 3], 4]', '$[1][0]', '$[0]')",
            "[[3], 4]",
        ),
        (
            "JSON_ARRAY_APPEND('{\"a\": [1]}', '$.a', 2)",
            r#"{"a": [1, 2]}"#,
        ),
        (
            "JSON_MERGE_PATCH('{\"a\": 1, \"b\": 2}', '{\"a\": null, \"c\": 3}')",
            r#"{"b": 2, "c": 3}"#,
        ),
        (
            "JSON_MERGE_PRESERVE('{\"a\": 1}', '{\"a\": 2}')",
            r#"{"a": [1, 2]}"#,
        ),
        (
            "JSON_KEYS('{\"bb\": 1, \"a\": 2, \"c\": 3}')",
            r#"["a", "c", "bb"]"#,
        ),
        (
            "JSON_EXTRACT('{\"a\": [1, 2, 3]}', '$.a[last]', '$.a[0]')",
            "[3, 1]",
        ),
        ("JSON_EXTRACT('[1, [2, [3]]]', '$**[0]')", "[1, 2, 3]"),
        ("JSON_EXTRACT('{\"a\": 1}', '$[0].a')", "1"),
        (
            "JSON_SEARCH('{\"a\": [\"ab\", \"x\"], \"b c\": \"ab\"}', 'all', 'ab')",
            r#"["$.a[0]", "$.\"b c\""]"#,
        ),
        (
            "JSON_TYPE(JSON_EXTRACT('{\"a\": 4294967296}', '$.a'))",
            "UNSIGNED INTEGER",
        ),
        ("JSON_TYPE('1.0')", "DOUBLE"),
        ("JSON_LENGTH('[[1, 2], [3]]', '$[*]')", "2"),
        ("JSON_DEPTH('[[1], 2]')", "3"),
        ("JSON_VALID(1)", "0"),
        ("JSON_CONTAINS('[1, [2, 3]]', '[[3], 1]')", "1"),
        (
            "JSON_CONTAINS('{\"a\": {\"b\": 1, \"c\": 2}}', '{\"a\": {\"c\": 2}}')",
            "1",
        ),
        ("CAST('[1, 2]' AS JSON) = CAST('[1.0, 2]' AS JSON)", "1"),
        ("CAST('[1, 2]' AS JSON) < CAST('[1, 3]' AS JSON)", "1"),
        ("CAST('\"a\"' AS JSON) = 'a'", "1"),
        ("CAST('true' AS JSON) = TRUE", "1"),
        ("CAST('1' AS JSON) = '1'", "0"),
        ("COLLATION(CAST('1' AS JSON))", "utf8mb4_bin"),
    ] {
        assert_eq!(one(&mut s, &format!("SELECT {sql}")), expected, "{sql}");
    }
}

/// Errors carry MySQL's numbers and messages.
#[test]
fn errors_are_mysql_errors() {
    let (_dir, engine) = engine();
    let mut s = session(&engine);
    for (sql, code, state, message) in [
        (
            "JSON_EXTRACT('{', '$')",
            3141,
            "22032",
            r#"Invalid JSON text in argument 1 to function json_extract: "Missing a name for object member." at position 1."#,
        ),
        (
            "JSON_CONTAINS('[1]', 'x')",
            3141,
            "22032",
            r#"Invalid JSON text in argument 2 to function json_contains: "Invalid value." at position 0."#,
        ),
        (
            "CAST('[1,]' AS JSON)",
            3141,
            "22032",
            r#"Invalid JSON text in argument 1 to function cast_as_json: "Invalid value." at position 3."#,
        ),
        (
            "JSON_EXTRACT(1, '$')",
            3146,
            "22032",
            "Invalid data type for JSON data in argument 1 to function json_extract; a JSON string or JSON type is required.",
        ),
        (
            "JSON_EXTRACT('[]', '$.')",
            3143,
            "42000",
            "Invalid JSON path expression. The error is around character position 2.",
        ),
        (
            "JSON_SET('[]', '$[*]', 1)",
            3149,
            "42000",
            "In this situation, path expressions may not contain the * and ** tokens.",
        ),
        (
            "JSON_REMOVE('[]', '$')",
            3153,
            "42000",
            "The path expression '$' is not allowed in this context.",
        ),
        (
            "JSON_CONTAINS_PATH('[]', 'any', '$')",
            3154,
            "42000",
            "The oneOrAll argument to json_contains_path may take these values: 'one' or 'all'.",
        ),
        (
            "JSON_OBJECT(NULL, 1)",
            3158,
            "22032",
            "JSON documents may not contain NULL member names.",
        ),
        (
            "JSON_OBJECT('a')",
            1582,
            "42000",
            "Incorrect parameter count in the call to native function 'json_object'",
        ),
        (
            "JSON_QUOTE(1)",
            3064,
            "HY000",
            "Incorrect type for argument 1 in function json_quote.",
        ),
    ] {
        assert_eq!(
            error(&mut s, &format!("SELECT {sql}")),
            (code, state, message.to_string()),
            "{sql}"
        );
    }
    // A document built deeper than 100 levels is 3157 when it is printed.
    let deep = format!("{}{}", "[".repeat(100), "]".repeat(100));
    assert_eq!(
        error(
            &mut s,
            &format!("SELECT JSON_ARRAY(CAST('{deep}' AS JSON))")
        )
        .0,
        3157
    );
    // NULL arguments make NULL (the document is read first).
    assert_eq!(one(&mut s, "SELECT JSON_EXTRACT(NULL, 'bad path')"), "NULL");
    assert_eq!(one(&mut s, "SELECT JSON_EXTRACT('[1]', NULL)"), "NULL");
}

/// JSON_ARRAYAGG and JSON_OBJECTAGG, with groups, NULLs and no rows.
#[test]
fn json_aggregates() {
    let (_dir, engine) = engine();
    let mut s = session(&engine);
    s.execute("CREATE TABLE t (id INT PRIMARY KEY, g INT, k VARCHAR(10), v INT)")
        .unwrap();
    s.execute(
        "INSERT INTO t VALUES (1, 1, 'b', 10), (2, 1, 'a', NULL), (3, 2, 'x', 30), (4, 1, 'b', 40)",
    )
    .unwrap();
    assert_eq!(
        rows(
            &mut s,
            "SELECT g, JSON_ARRAYAGG(v), JSON_OBJECTAGG(k, v) FROM \
             (SELECT * FROM t ORDER BY id) AS o GROUP BY g ORDER BY g"
        ),
        [
            ["1", "[10, null, 40]", r#"{"a": null, "b": 40}"#],
            ["2", "[30]", r#"{"x": 30}"#],
        ]
    );
    assert_eq!(
        rows(
            &mut s,
            "SELECT JSON_ARRAYAGG(id), JSON_OBJECTAGG(k, id) FROM t WHERE id > 9"
        ),
        [["NULL", "NULL"]]
    );
    assert_eq!(
        column_types(&mut s, "SELECT JSON_ARRAYAGG(id) FROM t"),
        [SqlType::Json]
    );
    assert_eq!(
        error(&mut s, "SELECT JSON_OBJECTAGG(NULL, id) FROM t").0,
        3158
    );
    assert_eq!(
        one(
            &mut s,
            "SELECT JSON_LENGTH(JSON_ARRAYAGG(JSON_OBJECT('id', id))) FROM t"
        ),
        "4"
    );
}

/// A prepared statement's parameter is a string, read as JSON text where a document
/// is wanted and put in as a JSON string where a value is.
#[test]
fn parameters_are_strings() {
    let (_dir, engine) = engine();
    let mut s = session(&engine);
    s.execute("CREATE TABLE t (id INT PRIMARY KEY, j JSON)")
        .unwrap();
    let insert = s.prepare("INSERT INTO t VALUES (?, ?)").unwrap();
    s.execute_prepared(
        insert,
        &[Value::Int(1), Value::Bytes(br#"{"b":2,"a":1}"#.to_vec())],
    )
    .unwrap();
    let select = s
        .prepare("SELECT JSON_EXTRACT(j, ?), JSON_OBJECT('v', ?) FROM t WHERE id = ?")
        .unwrap();
    let r = s
        .execute_prepared(
            select,
            &[
                Value::Bytes(b"$.b".to_vec()),
                Value::Bytes(b"[1]".to_vec()),
                Value::Int(1),
            ],
        )
        .unwrap()
        .all_rows();
    assert_eq!(
        r[0].iter().map(text).collect::<Vec<_>>(),
        ["2", r#"{"v": "[1]"}"#]
    );
    assert_eq!(one(&mut s, "SELECT j FROM t"), r#"{"a": 1, "b": 2}"#);
}

/// JSON_VALUE (MySQL 8.0.21): the unquoted scalar as VARCHAR(512), or the RETURNING
/// type; ON EMPTY answers a path that selects nothing, ON ERROR a value that does not
/// convert. MariaDB has only the two-argument form, and answers NULL for an array.
#[test]
fn json_value_returns_the_scalar_in_its_type() {
    let (_dir, engine) = engine();
    let mut s = session(&engine);
    let doc = r#"'{"fname": "Joe", "n": 7, "price": "49.95", "d": "2020-01-02", "a": [1, 2], "x": 1.0, "nul": null, "t": true}'"#;
    let q = |clause: &str| format!("SELECT JSON_VALUE({doc}, {clause})");
    assert_eq!(one(&mut s, &q("'$.fname'")), "Joe");
    assert_eq!(one(&mut s, &q("'$.n'")), "7");
    assert_eq!(one(&mut s, &q("'$.x'")), "1.0");
    assert_eq!(one(&mut s, &q("'$.t'")), "true");
    assert_eq!(one(&mut s, &q("'$.a'")), "[1, 2]");
    assert_eq!(one(&mut s, &q("'$.nul'")), "NULL");
    assert_eq!(one(&mut s, &q("'$.missing'")), "NULL");
    assert_eq!(one(&mut s, "SELECT JSON_VALUE(NULL, '$.a')"), "NULL");
    assert_eq!(
        column_types(&mut s, &q("'$.fname'")),
        [SqlType::Text {
            len_chars: Some(512),
            collation: tarn_row::types::Collation::Binary,
            fixed: false
        }]
    );
    // RETURNING.
    assert_eq!(one(&mut s, &q("'$.n' RETURNING SIGNED")), "7");
    assert_eq!(one(&mut s, &q("'$.n' RETURNING UNSIGNED")), "7");
    assert_eq!(one(&mut s, &q("'$.t' RETURNING SIGNED")), "1");
    assert_eq!(one(&mut s, &q("'$.price' RETURNING DECIMAL(4,2)")), "49.95");
    assert_eq!(one(&mut s, &q("'$.price' RETURNING DOUBLE")), "49.95");
    assert_eq!(one(&mut s, &q("'$.d' RETURNING DATE")), "2020-01-02");
    assert_eq!(
        one(&mut s, &q("'$.d' RETURNING DATETIME")),
        "2020-01-02 00:00:00"
    );
    assert_eq!(one(&mut s, &q("'$.fname' RETURNING CHAR(2)")), "NULL");
    assert_eq!(one(&mut s, &q("'$.fname' RETURNING CHAR(3)")), "Joe");
    assert_eq!(one(&mut s, &q("'$.a' RETURNING JSON")), "[1, 2]");
    assert_eq!(
        column_types(&mut s, &q("'$.n' RETURNING SIGNED")),
        [SqlType::BIGINT]
    );
    assert_eq!(
        column_types(&mut s, &q("'$.a' RETURNING JSON")),
        [SqlType::Json]
    );
    // A value that does not convert: NULL by default.
    assert_eq!(one(&mut s, &q("'$.fname' RETURNING SIGNED")), "NULL");
    assert_eq!(one(&mut s, &q("'$.a' RETURNING SIGNED")), "NULL");
    assert_eq!(one(&mut s, &q("'$.fname' RETURNING DATE")), "NULL");
    // ON EMPTY and ON ERROR.
    assert_eq!(
        one(&mut s, &q("'$.missing' DEFAULT 'none' ON EMPTY")),
        "none"
    );
    assert_eq!(
        one(
            &mut s,
            &q("'$.missing' RETURNING SIGNED DEFAULT -3 ON EMPTY ERROR ON ERROR")
        ),
        "-3"
    );
    assert_eq!(
        one(&mut s, &q("'$.missing' NULL ON EMPTY DEFAULT 1 ON ERROR")),
        "NULL"
    );
    assert_eq!(
        one(&mut s, &q("'$.fname' RETURNING SIGNED DEFAULT 9 ON ERROR")),
        "9"
    );
    assert_eq!(
        one(
            &mut s,
            &q("'$.fname' RETURNING SIGNED DEFAULT NULL ON EMPTY DEFAULT '8' ON ERROR")
        ),
        "8"
    );
    assert_eq!(
        one(
            &mut s,
            &q("'$.n' RETURNING SIGNED ERROR ON EMPTY ERROR ON ERROR")
        ),
        "7"
    );
    assert_eq!(
        error(&mut s, &q("'$.missing' ERROR ON EMPTY")),
        (
            3966,
            "22035",
            "No value was found by 'json_value' on the specified path.".into()
        )
    );
    assert_eq!(
        error(&mut s, &q("'$.fname' RETURNING SIGNED ERROR ON ERROR")),
        (
            1690,
            "22003",
            "SIGNED value is out of range in 'json_value'".into()
        )
    );
    // The clauses' order is MySQL's; the document and path are checked whatever
    // the responses say.
    assert_eq!(
        error(&mut s, &q("'$.n' NULL ON ERROR NULL ON EMPTY")).0,
        1064
    );
    assert_eq!(
        error(&mut s, &q("'$.n' NULL ON EMPTY RETURNING SIGNED")).0,
        1064
    );
    assert_eq!(
        error(&mut s, &q("'$.n' NULL ON EMPTY NULL ON EMPTY")).0,
        1064
    );
    assert_eq!(
        error(&mut s, "SELECT JSON_VALUE('{', '$' NULL ON ERROR)").0,
        3141
    );
    assert_eq!(error(&mut s, &q("'$[*]'")).0, 3149);
    assert_eq!(error(&mut s, "SELECT JSON_VALUE('[1]')").0, 1582);
    // On a column, in WHERE, with a nested call as the path's default.
    s.execute(r#"CREATE TABLE t (id INT PRIMARY KEY, j JSON); INSERT INTO t VALUES (1, '{"k": 5}'), (2, '{"k": "x"}'), (3, '{}')"#)
        .unwrap();
    assert_eq!(
        rows(
            &mut s,
            "SELECT id, JSON_VALUE(j, '$.k' RETURNING SIGNED DEFAULT 0 ON EMPTY DEFAULT -1 ON ERROR) FROM t ORDER BY id"
        ),
        [["1", "5"], ["2", "-1"], ["3", "0"]]
    );
    assert_eq!(
        rows(&mut s, "SELECT id FROM t WHERE JSON_VALUE(j, '$.k') = 'x'"),
        [["2"]]
    );
}

/// `value MEMBER OF (array)` and JSON_OVERLAPS (MySQL 8.0.17; MariaDB has neither
/// MEMBER OF nor JSON_OVERLAPS before 10.9, and compares otherwise): values compare as
/// JSON, a string is a JSON string, and a scalar array is a one-element array.
#[test]
fn member_of_and_json_overlaps_compare_json_values() {
    let (_dir, engine) = engine();
    let mut s = session(&engine);
    for (sql, want) in [
        ("SELECT 5 MEMBER OF ('[5]')", "1"),
        ("SELECT 'a' MEMBER OF ('[\"a\"]')", "1"),
        ("SELECT '5' MEMBER OF ('[5]')", "0"),
        ("SELECT 5.0 MEMBER OF ('[1, 5]')", "1"),
        ("SELECT 5 MEMBER OF ('5')", "1"),
        ("SELECT 6 MEMBER OF ('[5, [6]]')", "0"),
        ("SELECT CAST('[6]' AS JSON) MEMBER OF ('[5, [6]]')", "1"),
        ("SELECT JSON_ARRAY(1) MEMBER OF ('[[1]]')", "1"),
        ("SELECT NULL MEMBER OF ('[null]')", "NULL"),
        ("SELECT 1 MEMBER OF (NULL)", "NULL"),
        ("SELECT 1 + 1 MEMBER OF ('[2]')", "1"),
        ("SELECT JSON_OVERLAPS('[1, 3, 5]', '[2, 5, 7]')", "1"),
        ("SELECT JSON_OVERLAPS('[1, 3]', '[2, 4]')", "0"),
        (
            "SELECT JSON_OVERLAPS('{\"a\": 1, \"b\": 2}', '{\"b\": 2}')",
            "1",
        ),
        ("SELECT JSON_OVERLAPS('{\"a\": 1}', '{\"a\": 2}')", "0"),
        ("SELECT JSON_OVERLAPS('5', '5')", "1"),
        ("SELECT JSON_OVERLAPS('[4, 5]', '5')", "1"),
        ("SELECT JSON_OVERLAPS('[{\"a\": 1}]', '{\"a\": 1}')", "1"),
        ("SELECT JSON_OVERLAPS('{\"a\": 1}', '1')", "0"),
        ("SELECT JSON_OVERLAPS(NULL, '1')", "NULL"),
    ] {
        assert_eq!(one(&mut s, sql), want, "{sql}");
    }
    assert_eq!(error(&mut s, "SELECT 1 MEMBER OF ('[1')").0, 3141);
    s.execute(r#"CREATE TABLE t (id INT PRIMARY KEY, tags JSON); INSERT INTO t VALUES (1, '["x", "y"]'), (2, '["z"]')"#)
        .unwrap();
    assert_eq!(
        rows(&mut s, "SELECT id FROM t WHERE 'y' MEMBER OF (tags)"),
        [["1"]]
    );
}
