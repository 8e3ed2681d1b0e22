use sqlparser::ast;
use tarn_common::rng::{Rng, test_seed};
use tarn_common::settings::IsolationLevel;

use super::*;

fn one(text: &str) -> Parsed {
    parse_one(text).unwrap_or_else(|e| panic!("{text}: {e}"))
}

fn statement(text: &str) -> Statement {
    one(text).statement
}

/// The sqlparser statement `text` parses to.
fn ast_of(text: &str) -> ast::Statement {
    match statement(text) {
        Statement::Sql(s) => *s,
        other => panic!("{text}: expected Sql, got {other:?}"),
    }
}

/// sqlparser's rendering of `text`'s statement.
fn shown(text: &str) -> String {
    ast_of(text).to_string()
}

fn error(text: &str) -> (u16, String) {
    match parse(text) {
        Ok(parsed) => panic!("{text}: expected an error, got {parsed:?}"),
        Err(e) => (e.mysql_code(), e.to_string()),
    }
}

fn unsupported_code(text: &str) {
    let (code, message) = error(text);
    assert_eq!(code, 1235, "{text}: {message}");
}

#[test]
fn known_failures_are_fixed() {
    assert_eq!(
        shown("SELECT * FROM t WHERE a = 1 LOCK IN SHARE MODE"),
        "SELECT * FROM t WHERE a = 1 FOR SHARE"
    );
    assert_eq!(
        one("select * from t lock\n in /* c */ share  mode").text,
        "select * from t FOR SHARE"
    );
    assert_eq!(shown("SET @a := 1"), "SET @a = 1");
    assert_eq!(shown("SET @a:=1, @b := 'x:=y'"), "SET @a = 1, @b = 'x:=y'");
    unsupported_code("SELECT @a := @a + 1");
    unsupported_code("SELECT NTH_VALUE(a, 2) FROM LAST OVER (ORDER BY a) FROM t");
    assert_eq!(
        statement("START TRANSACTION WITH CONSISTENT SNAPSHOT"),
        Statement::StartTransaction {
            read_only: None,
            consistent_snapshot: true
        }
    );
    assert_eq!(
        statement("start transaction read only, with consistent snapshot"),
        Statement::StartTransaction {
            read_only: Some(true),
            consistent_snapshot: true
        }
    );
    assert_eq!(
        statement("START TRANSACTION WITH CONSISTENT SNAPSHOT, READ WRITE"),
        Statement::StartTransaction {
            read_only: Some(false),
            consistent_snapshot: true
        }
    );
    assert_eq!(error("START TRANSACTION READ ONLY, READ WRITE").0, 1064);
    for (text, read_only) in [
        ("START TRANSACTION", None),
        ("START TRANSACTION READ ONLY", Some(true)),
        ("BEGIN", None),
        ("BEGIN WORK", None),
    ] {
        assert_eq!(
            statement(text),
            Statement::StartTransaction {
                read_only,
                consistent_snapshot: false
            },
            "{text}"
        );
    }
}

#[test]
fn set_transaction_keeps_its_scope() {
    let cases = [
        (
            "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED",
            TransactionScope::Session,
            Some(IsolationLevel::ReadCommitted),
            None,
        ),
        (
            "SET GLOBAL TRANSACTION ISOLATION LEVEL SERIALIZABLE",
            TransactionScope::Global,
            Some(IsolationLevel::Serializable),
            None,
        ),
        (
            "set transaction isolation level repeatable read",
            TransactionScope::Next,
            Some(IsolationLevel::RepeatableRead),
            None,
        ),
        (
            "SET TRANSACTION READ ONLY",
            TransactionScope::Next,
            None,
            Some(true),
        ),
        (
            "SET LOCAL TRANSACTION ISOLATION LEVEL READ UNCOMMITTED, READ WRITE",
            TransactionScope::Session,
            Some(IsolationLevel::ReadUncommitted),
            Some(false),
        ),
        (
            "SET @@SESSION.transaction_isolation = 'x'",
            TransactionScope::Next,
            None,
            None,
        ),
    ];
    for (text, scope, isolation, read_only) in cases {
        let parsed = statement(text);
        if text.contains("@@") {
            assert!(matches!(parsed, Statement::Sql(_)), "{text}");
            continue;
        }
        assert_eq!(
            parsed,
            Statement::SetTransaction {
                scope,
                isolation,
                read_only
            },
            "{text}"
        );
    }
    assert_eq!(error("SET TRANSACTION ISOLATION LEVEL SNAPSHOT").0, 1064);
}

#[test]
fn show_table_status_keeps_its_filter() {
    assert_eq!(
        statement("SHOW TABLE STATUS"),
        Statement::ShowTableStatus {
            database: None,
            filter: None
        }
    );
    assert_eq!(
        statement("SHOW TABLE STATUS FROM db LIKE 'sb%'"),
        Statement::ShowTableStatus {
            database: Some("db".into()),
            filter: Some(ShowFilter::Like("sb%".into()))
        }
    );
    let Statement::ShowTableStatus {
        database: None,
        filter: Some(ShowFilter::Where(expr)),
    } = statement("show table status where Name = 'x'")
    else {
        panic!("SHOW TABLE STATUS WHERE");
    };
    assert_eq!(expr.to_string(), "Name = 'x'");
}

#[test]
fn tarn_variants_for_forms_sqlparser_mangles() {
    assert_eq!(
        statement("SHOW INDEX FROM t"),
        Statement::ShowIndex {
            table: "t".into(),
            database: None,
            filter: None
        }
    );
    assert_eq!(
        statement("SHOW KEYS IN db.t"),
        Statement::ShowIndex {
            table: "t".into(),
            database: Some("db".into()),
            filter: None
        }
    );
    assert_eq!(
        statement("show indexes from `t` from `db`"),
        Statement::ShowIndex {
            table: "t".into(),
            database: Some("db".into()),
            filter: None
        }
    );
    for (text, errors_only, offset, row_count) in [
        ("SHOW WARNINGS", false, 0, None),
        ("SHOW WARNINGS LIMIT 10", false, 0, Some(10)),
        ("SHOW WARNINGS LIMIT 2, 10", false, 2, Some(10)),
        ("SHOW ERRORS", true, 0, None),
        ("show errors limit 5", true, 0, Some(5)),
    ] {
        assert_eq!(
            statement(text),
            Statement::ShowWarnings {
                errors_only,
                offset,
                row_count
            },
            "{text}"
        );
    }
    assert_eq!(
        statement("SHOW COUNT(*) WARNINGS"),
        Statement::ShowWarningCount { errors_only: false }
    );
    assert_eq!(
        statement("SHOW COUNT(*) ERRORS"),
        Statement::ShowWarningCount { errors_only: true }
    );
    for engine in ["TARN", "INNODB", "tarn"] {
        assert_eq!(
            statement(&format!("SHOW ENGINE {engine} STATUS")),
            Statement::ShowEngineStatus {
                engine: engine.into()
            }
        );
    }
    assert_eq!(statement("SHOW ENGINES"), Statement::ShowEngines);
    assert_eq!(statement("SHOW STORAGE ENGINES"), Statement::ShowEngines);
    assert_eq!(
        statement("SHOW CREATE DATABASE d"),
        Statement::ShowCreateDatabase {
            name: "d".into(),
            if_not_exists: false
        }
    );
    assert_eq!(
        statement("SHOW CREATE SCHEMA IF NOT EXISTS `d`"),
        Statement::ShowCreateDatabase {
            name: "d".into(),
            if_not_exists: true
        }
    );
    let Statement::AnalyzeTable { tables } = statement("ANALYZE TABLE t, db.t2") else {
        panic!("ANALYZE TABLE");
    };
    let names: Vec<String> = tables.iter().map(ToString::to_string).collect();
    assert_eq!(names, ["t", "db.t2"]);
    assert!(matches!(
        statement("ANALYZE LOCAL TABLE t"),
        Statement::AnalyzeTable { .. }
    ));
    for (text, charset) in [
        ("SET CHARACTER SET utf8mb4", Some("utf8mb4")),
        ("SET CHARSET 'latin1'", Some("latin1")),
        ("SET CHARACTER SET DEFAULT", None),
    ] {
        assert_eq!(
            statement(text),
            Statement::SetCharacterSet {
                charset: charset.map(String::from)
            }
        );
    }
    let Statement::Do { exprs } = statement("DO SLEEP(1), 1 + 2") else {
        panic!("DO");
    };
    assert_eq!(exprs.len(), 2);
    unsupported_code("XA START 'x'");
    unsupported_code("XA COMMIT 'x'");
    unsupported_code("SHOW FOO BAR");
    unsupported_code("UPDATE t1 SET a = 1 FROM t2");
}

/// The variables and the query text of a `SELECT .. INTO` statement.
fn select_into(text: &str) -> (Vec<String>, String) {
    match statement(text) {
        Statement::SelectInto { query, variables } => (variables, query.to_string()),
        other => panic!("{text}: expected SelectInto, got {other:?}"),
    }
}

#[test]
fn select_into_positions() {
    let vars = |names: &[&str]| names.iter().map(|n| n.to_string()).collect::<Vec<_>>();
    assert_eq!(
        select_into("SELECT 1 INTO @a"),
        (vars(&["a"]), "SELECT 1".to_string())
    );
    // After the select list, at the end, and before or after a locking clause.
    assert_eq!(
        select_into("SELECT a, b INTO @X, @y FROM t WHERE c = 1"),
        (
            vars(&["x", "y"]),
            "SELECT a, b FROM t WHERE c = 1".to_string()
        )
    );
    assert_eq!(
        select_into("SELECT a FROM t ORDER BY a LIMIT 1 INTO @a"),
        (
            vars(&["a"]),
            "SELECT a FROM t ORDER BY a LIMIT 1".to_string()
        )
    );
    assert_eq!(
        select_into("SELECT a FROM t INTO @a FOR UPDATE").1,
        "SELECT a FROM t FOR UPDATE"
    );
    assert_eq!(
        select_into("SELECT a FROM t FOR UPDATE INTO @a").1,
        "SELECT a FROM t FOR UPDATE"
    );
    assert_eq!(
        select_into("SELECT a FROM t LOCK IN SHARE MODE INTO @a").1,
        "SELECT a FROM t FOR SHARE"
    );
    // A UNION's INTO ends it or follows its last block's select list.
    assert_eq!(
        select_into("SELECT 1 UNION SELECT 2 INTO @a").1,
        "SELECT 1 UNION SELECT 2"
    );
    assert_eq!(
        select_into("SELECT 1 UNION SELECT a INTO @a FROM t").1,
        "SELECT 1 UNION SELECT a FROM t"
    );
    assert_eq!(
        select_into("WITH c AS (SELECT 1 AS x) SELECT x INTO @a FROM c").1,
        "WITH c AS (SELECT 1 AS x) SELECT x FROM c"
    );
    // INTO inside parentheses is not the statement's: EXTRACT's FROM is no FROM.
    assert_eq!(
        select_into("SELECT EXTRACT(YEAR FROM d) INTO @y FROM t").1,
        "SELECT EXTRACT(YEAR FROM d) FROM t"
    );
    // A prepared statement's parameters are counted as usual.
    assert_eq!(one("SELECT a INTO @a FROM t WHERE b = ?").param_count, 1);
    // Not a SELECT: INSERT's INTO is its own.
    assert!(matches!(
        statement("INSERT INTO t SELECT 1"),
        Statement::Sql(_)
    ));
    assert_eq!(
        error("WITH c AS (SELECT 1) INSERT INTO t SELECT * FROM c").0,
        1064
    );
}

#[test]
fn select_into_errors() {
    for (text, code) in [
        ("SELECT 1 INTO @a UNION SELECT 2", 3954),
        ("SELECT a INTO @a FROM t UNION SELECT 2", 3954),
        ("SELECT 1 INTO @a FROM DUAL INTO @b", 3953),
        ("SELECT a FROM t INTO @a WHERE a = 1", 1064),
        ("SELECT 1 INTO x", 1327),
        ("SELECT 1 INTO @@x", 1064),
        ("SELECT 1 INTO", 1064),
        ("SELECT 1 INTO @a,", 1064),
        ("SELECT 1 INTO OUTFILE '/tmp/x'", 1290),
        ("SELECT 1 FROM t INTO DUMPFILE '/tmp/x'", 1290),
    ] {
        let (got, message) = error(text);
        assert_eq!(got, code, "{text}: {message}");
    }
}

#[test]
fn sql_prepared_statements() {
    assert_eq!(
        statement("PREPARE s1 FROM 'SELECT ?'"),
        Statement::Prepare {
            name: "s1".into(),
            source: PrepareSource::Text("SELECT ?".into())
        }
    );
    assert_eq!(
        statement("prepare S FROM @Sql"),
        Statement::Prepare {
            name: "S".into(),
            source: PrepareSource::Variable("sql".into())
        }
    );
    assert_eq!(
        statement("EXECUTE s USING @a, @B"),
        Statement::ExecutePrepared {
            name: "s".into(),
            using: vec!["a".into(), "b".into()]
        }
    );
    assert_eq!(
        statement("EXECUTE s"),
        Statement::ExecutePrepared {
            name: "s".into(),
            using: Vec::new()
        }
    );
    for text in ["DEALLOCATE PREPARE s", "DROP PREPARE s"] {
        assert_eq!(
            statement(text),
            Statement::DeallocatePrepare { name: "s".into() }
        );
    }
    for text in [
        "PREPARE s FROM 1",
        "PREPARE s 'SELECT 1'",
        "EXECUTE s USING 1",
        "EXECUTE s USING @a @b",
        "DEALLOCATE s",
    ] {
        assert_eq!(error(text).0, 1064, "{text}");
    }
}

#[test]
fn sqlparser_forms_that_are_faithful() {
    let faithful = [
        "SHOW DATABASES",
        "SHOW DATABASES LIKE 'a%'",
        "SHOW SCHEMAS LIKE 'a%'",
        "SHOW TABLES",
        "SHOW FULL TABLES FROM db LIKE 'x%'",
        "SHOW TABLES WHERE Tables_in_db = 'x'",
        "SHOW COLUMNS FROM t",
        "SHOW FULL COLUMNS FROM t",
        "SHOW CREATE TABLE t",
        "SHOW CREATE VIEW v",
        "SHOW VARIABLES",
        "SHOW GLOBAL VARIABLES LIKE 'x%'",
        "SHOW SESSION VARIABLES WHERE Variable_name = 'x'",
        "SHOW GLOBAL STATUS LIKE 'x%'",
        "SHOW SESSION STATUS WHERE Variable_name = 'x'",
        "SHOW PROCESSLIST",
        "SHOW FULL PROCESSLIST",
        "SHOW CHARSET",
        "SHOW CHARACTER SET LIKE 'utf8%'",
        "SHOW COLLATION WHERE Charset = 'utf8mb4'",
        "KILL 5",
        "KILL QUERY 5",
        "KILL CONNECTION 5",
        "EXPLAIN SELECT 1",
        "EXPLAIN ANALYZE SELECT 1",
        "EXPLAIN FORMAT=JSON SELECT 1",
        "DESCRIBE t",
        "TRUNCATE TABLE t",
        "TRUNCATE t",
        "USE db",
        "CREATE TABLE a LIKE b",
        "RENAME TABLE a TO b, c TO d",
        "ALTER TABLE t AUTO_INCREMENT = 100",
        "SET NAMES utf8mb4",
        "SET NAMES utf8mb4 COLLATE utf8mb4_general_ci",
        "SET autocommit = 0",
        "SET @@session.x = 1",
        "SET GLOBAL x = 1",
        "SET SESSION x = 1",
        "SET x = DEFAULT",
        "SET @@x = 1",
        "SET sql_mode = 'a,b'",
        "SAVEPOINT a",
        "ROLLBACK TO SAVEPOINT a",
        "RELEASE SAVEPOINT a",
        "COMMIT",
        "ROLLBACK",
        "UNLOCK TABLES",
        "DELETE t1, t2 FROM t1 JOIN t2 ON t1.a = t2.a",
        "DELETE t1 FROM t1 JOIN t2 ON t1.a = t2.a WHERE t2.b = 1",
        "DELETE FROM t1, t2 USING t1 JOIN t2 ON t1.a = t2.a",
        "UPDATE t1 JOIN t2 ON t1.id = t2.id SET t1.a = 1",
        "ALTER TABLE t MODIFY COLUMN c BIGINT NOT NULL DEFAULT 5 AFTER b",
        "ALTER TABLE t CHANGE COLUMN a b INT FIRST",
        "ALTER TABLE t RENAME COLUMN a TO b, ALTER COLUMN c SET DEFAULT 3",
        "ALTER TABLE t ALTER COLUMN c DROP DEFAULT, ADD COLUMN d INT AFTER c",
        "ALTER TABLE t RENAME TO u",
        "ALTER TABLE t RENAME AS db.u",
        "INSERT INTO t (a) VALUES (1) ON DUPLICATE KEY UPDATE a = VALUES(a)",
        "INSERT IGNORE INTO t VALUES (1)",
        "REPLACE INTO t VALUES (1)",
        "INSERT INTO t SET a = 1, b = 2",
        "INSERT INTO t SELECT * FROM u",
        "UPDATE t SET a = 1 ORDER BY b LIMIT 5",
        "DELETE FROM t WHERE a = 1 ORDER BY b LIMIT 5",
        "SELECT * FROM t FORCE INDEX (i)",
        "SELECT * FROM t USE INDEX (i)",
        "SELECT * FROM t IGNORE INDEX (i)",
        "SELECT * FROM t1 STRAIGHT_JOIN t2 ON t1.a = t2.a",
        "SELECT STRAIGHT_JOIN * FROM t1, t2",
        "SELECT SQL_CALC_FOUND_ROWS * FROM t",
        "SELECT SQL_NO_CACHE * FROM t",
        "SELECT HIGH_PRIORITY * FROM t",
        "SELECT * FROM t FOR UPDATE",
        "SELECT @@version_comment LIMIT 1",
        "SELECT DATABASE()",
        "SELECT 7 DIV 2",
        "SELECT 1 <=> NULL",
        "SELECT 'a' REGEXP 'b'",
        "SELECT X'4142'",
        "SELECT CAST(x AS SIGNED)",
        "SELECT CAST(x AS UNSIGNED)",
        "SELECT CAST(x AS DECIMAL(10,2))",
        "SELECT CAST(x AS CHAR(10))",
        "SELECT CAST(x AS DATE)",
        "SELECT CAST(x AS DATETIME)",
        "SELECT CAST(x AS BINARY)",
        "SELECT CONVERT(x, SIGNED)",
        "SELECT SUBSTRING(s FROM 2 FOR 3)",
        "SELECT TRIM(LEADING 'x' FROM s)",
        "SELECT EXTRACT(YEAR FROM d)",
        "SELECT DATE '2020-01-01'",
        "SELECT NOW() + INTERVAL 1 DAY",
        "SELECT @@global.x",
        "SELECT * FROM t LIMIT 5, 10",
        "SELECT * FROM t LIMIT 10 OFFSET 5",
    ];
    for text in faithful {
        assert_eq!(shown(text), text, "{text}");
    }
    // Forms sqlparser spells differently but keeps.
    for (text, expected) in [
        ("SHOW FIELDS FROM t FROM db", "SHOW COLUMNS FROM db.t"),
        ("ROLLBACK TO a", "ROLLBACK TO SAVEPOINT a"),
        ("COMMIT WORK", "COMMIT"),
        ("ROLLBACK WORK", "ROLLBACK"),
        (
            "UPDATE t1, t2 SET t1.a = t2.b WHERE t1.id = t2.id",
            "UPDATE t1 FROM t2 SET t1.a = t2.b WHERE t1.id = t2.id",
        ),
        (
            "UPDATE t1 JOIN t2 USING (id), t3, (SELECT 1, 2) AS d SET a = 1",
            "UPDATE t1 JOIN t2 USING(id) FROM t3, (SELECT 1, 2) AS d SET a = 1",
        ),
        (
            "UPDATE t SET a = (1, 2), b = 3",
            "UPDATE t SET a = (1, 2), b = 3",
        ),
        (
            "EXPLAIN UPDATE t1, t2 SET a = 1",
            "EXPLAIN UPDATE t1 FROM t2 SET a = 1",
        ),
        (
            "EXPLAIN SELECT * FROM t1, t2 FOR UPDATE",
            "EXPLAIN SELECT * FROM t1, t2 FOR UPDATE",
        ),
        ("ALTER TABLE t RENAME u", "ALTER TABLE t RENAME TO u"),
        (
            "ALTER TABLE t RENAME INDEX a TO b, RENAME KEY c TO d",
            "ALTER TABLE t RENAME CONSTRAINT a TO b, RENAME CONSTRAINT c TO d",
        ),
        ("ALTER TABLE t DROP KEY k", "ALTER TABLE t DROP INDEX k"),
        (
            "SELECT 7 MOD 2, MOD(7, 2), t.mod",
            "SELECT 7 % 2, MOD(7, 2), t.mod",
        ),
        (
            "SELECT NTH_VALUE(a, 2) from First  OVER w FROM first WINDOW w AS ()",
            "SELECT NTH_VALUE(a, 2) OVER w FROM first WINDOW w AS ()",
        ),
        ("SELECT 0x4142, b'101'", "SELECT X'4142', B'101'"),
        (
            "SELECT 0b101, 0b0 + 1, t.0b1 FROM t",
            "SELECT B'101', B'0' + 1, t.0b1 FROM t",
        ),
        (
            "SELECT EXTRACT( hour_second FROM d), extract(DAY_HOUR FROM d), EXTRACT(HOUR FROM d), t.day_hour, `day_hour`",
            "SELECT `EXTRACT`(HOUR_SECOND, d), `EXTRACT`(DAY_HOUR, d), EXTRACT(HOUR FROM d), t.day_hour, `day_hour`",
        ),
        (
            "SELECT d + INTERVAL '1:30' hour_minute, DATE_ADD(d, INTERVAL '1.5' SECOND_MICROSECOND), d - INTERVAL '1-2' YEAR_MONTH",
            "SELECT d + INTERVAL '1:30' HOUR TO MINUTE, DATE_ADD(d, INTERVAL '1.5' SECONDS TO MICROSECOND), d - INTERVAL '1-2' YEAR TO MONTH",
        ),
        // Introducers are read into plain literals (`special::rewrite_introducers`).
        ("SELECT _utf8mb4'x', _binary'ab'", "SELECT 'x', X'6162'"),
        ("SELECT 'a' 'b'", "SELECT 'ab'"),
        ("SELECT 'a\\'b', 'a''b'", "SELECT 'a''b', 'a''b'"),
    ] {
        assert_eq!(shown(text), expected, "{text}");
    }
    let ast::Statement::Query(query) = ast_of("SELECT \"x\", 'a\\nb', 'a\\%b'") else {
        panic!("query");
    };
    let ast::SetExpr::Select(select) = *query.body else {
        panic!("select");
    };
    let values: Vec<String> = select
        .projection
        .iter()
        .map(|item| format!("{item:?}"))
        .collect();
    assert!(
        values[0].contains("DoubleQuotedString(\"x\")"),
        "{values:?}"
    );
    assert!(
        values[1].contains("SingleQuotedString(\"a\\nb\")"),
        "{values:?}"
    );
    assert!(
        values[2].contains("SingleQuotedString(\"a\\\\%b\")"),
        "{values:?}"
    );
}

#[test]
fn client_and_sysbench_statements() {
    let texts = [
        "SELECT c FROM sbtest1 WHERE id=?",
        "SELECT c FROM sbtest1 WHERE id BETWEEN ? AND ?",
        "SELECT SUM(k) FROM sbtest1 WHERE id BETWEEN ? AND ?",
        "SELECT c FROM sbtest1 WHERE id BETWEEN ? AND ? ORDER BY c",
        "SELECT DISTINCT c FROM sbtest1 WHERE id BETWEEN ? AND ? ORDER BY c",
        "UPDATE sbtest1 SET k=k+1 WHERE id=?",
        "UPDATE sbtest1 SET c=? WHERE id=?",
        "DELETE FROM sbtest1 WHERE id=?",
        "INSERT INTO sbtest1 (id, k, c, pad) VALUES (?, ?, ?, ?)",
        "CREATE TABLE sbtest1(id INTEGER NOT NULL AUTO_INCREMENT, k INTEGER DEFAULT '0' NOT NULL, \
         c CHAR(120) DEFAULT '' NOT NULL, pad CHAR(60) DEFAULT '' NOT NULL, PRIMARY KEY (id)) \
         ENGINE = InnoDB",
        "CREATE INDEX k_1 ON sbtest1(k)",
        "select @@version_comment limit 1",
        "SELECT  @@session.auto_increment_increment AS auto_increment_increment, \
         @@character_set_client AS character_set_client, @@tx_isolation AS tx_isolation",
        "SET NAMES utf8mb4",
        "SET autocommit=0",
        "SHOW VARIABLES LIKE 'sql_mode'",
        "show databases",
        "show tables",
    ];
    for text in texts {
        let parsed = one(text);
        assert!(matches!(parsed.statement, Statement::Sql(_)), "{text}");
        assert_eq!(parsed.param_count, text.matches('?').count(), "{text}");
    }
    assert_eq!(
        one("INSERT INTO sbtest1 (id, k, c, pad) VALUES (?, ?, ?, ?)").text,
        "INSERT INTO sbtest1 (id, k, c, pad) VALUES (?1, ?2, ?3, ?4)"
    );
}

#[test]
fn placeholders_are_numbered_outside_strings_and_comments() {
    let parsed = one("SELECT '?', \"?\", `?`, ? /* ? */, ?-- ?\n, ? # ?\n FROM t WHERE a = ?");
    assert_eq!(parsed.param_count, 4);
    assert_eq!(
        parsed.text,
        "SELECT '?', \"?\", `?`, ?1 , ?2 \n, ?3 \n FROM t WHERE a = ?4"
    );
    let ast::Statement::Query(query) = ast_of("SELECT ?, ?") else {
        panic!("query");
    };
    let ast::SetExpr::Select(select) = *query.body else {
        panic!("select");
    };
    for (i, item) in select.projection.iter().enumerate() {
        let ast::SelectItem::UnnamedExpr(ast::Expr::Value(value)) = item else {
            panic!("{item:?}");
        };
        assert_eq!(value.value, ast::Value::Placeholder(format!("?{}", i + 1)));
    }
    // Numbering restarts in each statement of a multi-statement text.
    let many = parse("SELECT ?; SELECT ?, ?").unwrap();
    assert_eq!(many[0].param_count, 1);
    assert_eq!(many[1].param_count, 2);
    assert_eq!(many[1].text, "SELECT ?1, ?2");
    // A placeholder glued to a word stays apart from it.
    assert_eq!(one("SELECT ?a").text, "SELECT ?1 a");
}

#[test]
fn comments_and_version_comments() {
    assert_eq!(
        one("SELECT /*!40001 SQL_NO_CACHE */ 1").text,
        "SELECT  SQL_NO_CACHE  1"
    );
    assert_eq!(shown("SELECT 1 /*!50100 + 2 */"), "SELECT 1 + 2");
    assert_eq!(shown("SELECT 1 /*! + 2 */"), "SELECT 1 + 2");
    // A version newer than Tarn's is a comment, as are hints, TiDB's and MariaDB's.
    assert_eq!(shown("SELECT 1 /*!99999 + 2 */"), "SELECT 1");
    assert_eq!(
        shown("SELECT /*+ MAX_EXECUTION_TIME(1000) */ 1"),
        "SELECT 1"
    );
    assert_eq!(shown("SELECT 1 /*T! + 2 */"), "SELECT 1");
    assert_eq!(shown("SELECT 1 /*M!100100 + 2 */"), "SELECT 1");
    assert_eq!(shown("SELECT 1 -- + 2\n + 3 # + 4"), "SELECT 1 + 3");
    // `--` without a space is two minus signs.
    assert_eq!(shown("SELECT 1--1"), "SELECT 1 - -1");
    assert_eq!(
        shown("/*!40101 SET @OLD_CHARACTER_SET_CLIENT=@@CHARACTER_SET_CLIENT */"),
        "SET @OLD_CHARACTER_SET_CLIENT = @@CHARACTER_SET_CLIENT"
    );
    assert_eq!(statement("/* nothing */ -- here\n"), Statement::Empty);
    assert_eq!(
        error("SELECT 1 /* unterminated").0,
        1064,
        "an unterminated comment is an error"
    );
}

#[test]
fn splitting_respects_quotes_and_comments() {
    let parsed =
        parse("SELECT ';' AS a; SELECT \"x;\\\";\" /* ; */; SELECT `a;b` -- ;\n FROM t; # ;\n;")
            .unwrap();
    let texts: Vec<&str> = parsed.iter().map(|p| p.text.as_str()).collect();
    assert_eq!(
        texts,
        [
            "SELECT ';' AS a",
            "SELECT \"x;\\\";\"",
            "SELECT `a;b` \n FROM t"
        ]
    );
    assert_eq!(parse("SELECT 1;").unwrap().len(), 1);
    assert_eq!(
        one("SELECT 'it''s', 'a\\'b;', \"q\"\"x\"").text,
        "SELECT 'it''s', 'a\\'b;', \"q\"\"x\""
    );
    let (code, message) = match parse_one("SELECT 1; SELECT 2") {
        Err(e) => (e.mysql_code(), e.to_string()),
        Ok(p) => panic!("{p:?}"),
    };
    assert_eq!(code, 1064);
    assert!(message.contains("near 'SELECT 2' at line 1"), "{message}");
}

#[test]
fn errors_carry_mysql_codes_and_positions() {
    let (code, message) = error("SELECT * FRM t WHERE a = 1");
    assert_eq!(code, 1064);
    assert!(
        message.starts_with(
            "You have an error in your SQL syntax; check the manual that corresponds to your \
             MySQL server version for the right syntax to use near 'FRM t WHERE a = 1' at line 1"
        ),
        "{message}"
    );
    let (_, message) = error("SELECT 1\nFROM t\nWHERE a = = 1");
    assert!(message.contains("near '= 1' at line 3"), "{message}");
    let (_, message) = error("SELECT * FROM");
    assert!(message.contains("near '' at line 1"), "{message}");
    let (_, message) = error("SELECT 'unterminated");
    assert_eq!(error("SELECT 'unterminated").0, 1064, "{message}");
    let (code, message) = error("");
    assert_eq!((code, message.as_str()), (1065, "Query was empty"));
    assert_eq!(error("  \n ").0, 1065);
    let (code, message) = error(&format!(
        "SELECT '{}'",
        "x".repeat(tarn_common::limits::SQL_TEXT_BYTES_MAX)
    ));
    assert_eq!(code, 1153, "{message}");
    let deep = format!("SELECT {}1{}", "(".repeat(10_000), ")".repeat(10_000));
    assert_eq!(error(&deep).0, 1064);
    let long = format!("SELECT 1{}", " + 1".repeat(100_000));
    assert_eq!(error(&long).0, 1064);
    let joins = format!("SELECT * FROM t{}", " JOIN t".repeat(100));
    assert_eq!(error(&joins).0, 1116);
    // Long lists are not deep.
    let values = format!("INSERT INTO t VALUES (1){}", ", (1)".repeat(100_000));
    one(&values);
}

/// Random bytes, random statements cut short, and random splices never panic or hang.
#[test]
fn random_input_never_panics() {
    let seed = test_seed("parse::random_input_never_panics");
    let mut rng = Rng::new(seed);
    let valid = [
        "SELECT a, b FROM t WHERE a = ? AND b LIKE 'x%' ORDER BY a LIMIT 5, 10",
        "SELECT * FROM t LOCK IN SHARE MODE",
        "SET @a := 1, SESSION sql_mode = 'a,b'",
        "START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY",
        "SET GLOBAL TRANSACTION ISOLATION LEVEL READ COMMITTED",
        "SHOW TABLE STATUS FROM db WHERE Name = 'x'",
        "SHOW INDEX FROM t FROM db",
        "SHOW WARNINGS LIMIT 2, 3",
        "INSERT INTO t (a) VALUES (?) ON DUPLICATE KEY UPDATE a = VALUES(a)",
        "SELECT /*!40001 SQL_NO_CACHE */ 'a\\'b' \"c\" `d` -- x\n # y\n",
        "ANALYZE TABLE t, u; DO 1; SHOW ENGINE TARN STATUS",
        "UPDATE t SET a = CASE WHEN b THEN 1 ELSE 2 END WHERE c IN (SELECT d FROM u)",
    ];
    let alphabet =
        b"SELECT FROM WHERE ()'\"`;?:=-#/*!+\\ \n\t,.@0123456789abcLOCKINSHAREMODE\xc3\xa9";
    for round in 0..5_000 {
        let text = match round % 3 {
            0 => {
                let len = rng.below(64) as usize;
                let bytes: Vec<u8> = (0..len)
                    .map(|_| alphabet[rng.below(alphabet.len() as u64) as usize])
                    .collect();
                String::from_utf8_lossy(&bytes).into_owned()
            }
            1 => {
                let text = valid[rng.below(valid.len() as u64) as usize];
                let cut = rng.below(text.len() as u64 + 1) as usize;
                let cut = (0..=cut)
                    .rev()
                    .find(|&i| text.is_char_boundary(i))
                    .unwrap_or(0);
                text[..cut].to_string()
            }
            _ => {
                let a = valid[rng.below(valid.len() as u64) as usize];
                let b = valid[rng.below(valid.len() as u64) as usize];
                let cut_a = rng.below(a.len() as u64 + 1) as usize;
                let cut_b = rng.below(b.len() as u64 + 1) as usize;
                format!("{}{}", &a[..cut_a], &b[cut_b..])
            }
        };
        // Either result is fine; a panic fails the test with the seed printed above.
        let result = parse(&text);
        if let Ok(parsed) = &result {
            for p in parsed {
                assert!(
                    !p.text.is_empty() || p.statement == Statement::Empty,
                    "{text:?}"
                );
            }
        }
        let _ = parse_one(&text);
    }
}

#[test]
fn create_schema_takes_a_character_set_and_collation() {
    for text in [
        "CREATE SCHEMA s CHARACTER SET utf8mb4",
        "CREATE DATABASE s DEFAULT CHARACTER SET = utf8mb4 COLLATE utf8mb4_0900_ai_ci",
        "create schema if not exists s default charset utf8mb4",
    ] {
        let Statement::Sql(s) = statement(text) else {
            panic!("{text}: not an sqlparser statement");
        };
        assert!(
            matches!(*s, ast::Statement::CreateDatabase { .. }),
            "{text}: {s:?}"
        );
    }
}

#[test]
fn account_statements() {
    use crate::accounts::{AccountStatement as A, AuthPlugin, GrantLevel, Privileges, UserName};
    let user = |u: &str, h: &str| UserName {
        user: u.into(),
        host: h.into(),
    };
    // Every spelling of an account name the tokenizer splits differently.
    for (text, expected) in [
        ("DROP USER 'u'@'h'", user("u", "h")),
        ("DROP USER 'u'@localhost", user("u", "localhost")),
        ("DROP USER u@LocalHost", user("u", "localhost")),
        ("DROP USER u@'10.0.%'", user("u", "10.0.%")),
        ("DROP USER `u`@`h`", user("u", "h")),
        ("DROP USER \"u\"@\"h\"", user("u", "h")),
        ("DROP USER u@%", user("u", "%")),
        ("DROP USER 'u'", user("u", "%")),
        ("DROP USER u", user("u", "%")),
    ] {
        assert_eq!(
            statement(text),
            Statement::Account(A::DropUser {
                if_exists: false,
                users: vec![expected]
            }),
            "{text}"
        );
    }
    let Statement::Account(A::CreateUser {
        if_not_exists,
        users,
    }) = statement(
        "CREATE USER IF NOT EXISTS a@'%' IDENTIFIED WITH mysql_native_password BY 'p''w', b IDENTIFIED BY 'x', c",
    )
    else {
        panic!("not CREATE USER");
    };
    assert!(if_not_exists);
    assert_eq!(users[0].plugin, Some(AuthPlugin::NativePassword));
    assert_eq!(users[0].password.as_deref(), Some("p'w"));
    assert_eq!(
        (users[1].plugin, users[1].password.as_deref()),
        (None, Some("x"))
    );
    assert_eq!(
        (users[2].plugin, users[2].password.as_deref()),
        (None, None)
    );
    assert_eq!(
        statement("GRANT ALL PRIVILEGES ON *.* TO root@localhost WITH GRANT OPTION"),
        Statement::Account(A::Grant {
            privileges: Privileges::ALL_GLOBAL,
            level: GrantLevel::Global,
            users: vec![user("root", "localhost")],
            grant_option: true,
        })
    );
    assert_eq!(
        statement("REVOKE SELECT, GRANT OPTION ON `d`.* FROM u"),
        Statement::Account(A::Revoke {
            privileges: Privileges::SELECT.union(Privileges::GRANT_OPTION),
            level: GrantLevel::Database(Some("d".into())),
            users: vec![user("u", "%")],
        })
    );
    assert_eq!(
        statement("GRANT ALL ON TABLE t TO u"),
        Statement::Account(A::Grant {
            privileges: Privileges::ALL_OBJECT,
            level: GrantLevel::Table(None, "t".into()),
            users: vec![user("u", "%")],
            grant_option: false,
        })
    );
    assert_eq!(
        statement("SHOW GRANTS FOR CURRENT_USER()"),
        Statement::Account(A::ShowGrants { user: None })
    );
    assert_eq!(
        statement("SET PASSWORD FOR u@h = PASSWORD('x')"),
        Statement::Account(A::SetPassword {
            user: Some(user("u", "h")),
            password: "x".into()
        })
    );
    assert_eq!(
        statement("FLUSH PRIVILEGES"),
        Statement::Account(A::FlushPrivileges)
    );
    for bad in [
        "GRANT SELECT (c) ON t TO u",
        "GRANT FLY ON t TO u",
        "CREATE USER u IDENTIFIED WITH sha256_password BY 'x'",
        "DROP USER",
        "GRANT SELECT ON *.* TO u extra",
    ] {
        assert_eq!(error(bad).0, 1064, "{bad}");
    }
}

#[test]
fn mysqldump_statements() {
    // What mysqldump sends while dumping, and what its dumps hold.
    for (text, with_read_lock) in [
        ("FLUSH TABLES", false),
        ("FLUSH /*!40101 LOCAL */ TABLES", false),
        ("FLUSH /*!40101 LOCAL */ TABLES WITH READ LOCK", true),
        ("flush no_write_to_binlog table t1, db.t2", false),
    ] {
        assert_eq!(
            statement(text),
            Statement::FlushTables { with_read_lock },
            "{text}"
        );
    }
    for (text, kind, database) in [
        (
            "SHOW TRIGGERS LIKE 'items'",
            StoredObjectKind::Triggers,
            None,
        ),
        (
            "SHOW TRIGGERS FROM shop",
            StoredObjectKind::Triggers,
            Some("shop"),
        ),
        (
            "show events in `shop`",
            StoredObjectKind::Events,
            Some("shop"),
        ),
        (
            "SHOW PROCEDURE STATUS WHERE Db = 'shop'",
            StoredObjectKind::Procedures,
            None,
        ),
        ("SHOW FUNCTION STATUS", StoredObjectKind::Functions, None),
    ] {
        let Statement::ShowStoredObjects {
            kind: parsed_kind,
            database: parsed_database,
            ..
        } = statement(text)
        else {
            panic!("{text} is not ShowStoredObjects");
        };
        assert_eq!(
            (parsed_kind, parsed_database.as_deref()),
            (kind, database),
            "{text}"
        );
    }
    for (text, enable) in [
        ("/*!40000 ALTER TABLE `items` DISABLE KEYS */", false),
        ("ALTER TABLE shop.items ENABLE KEYS", true),
    ] {
        let Statement::AlterTableKeys {
            enable: parsed_enable,
            ..
        } = statement(text)
        else {
            panic!("{text} is not AlterTableKeys");
        };
        assert_eq!(parsed_enable, enable, "{text}");
    }
    // Other ALTER TABLE forms still go to sqlparser.
    assert!(matches!(
        statement("ALTER TABLE t ADD KEY keys_ix (a)"),
        Statement::Sql(_)
    ));
    assert_eq!(error("FLUSH TABLES WITH WRITE LOCK").0, 1064);
}

#[test]
fn load_data_keeps_its_options() {
    let Statement::LoadData(load) = statement("LOAD DATA LOCAL INFILE 'f.csv' INTO TABLE t") else {
        panic!("not LOAD DATA");
    };
    assert!(load.local);
    assert_eq!(
        load.duplicates,
        LoadDuplicates::Ignore,
        "LOCAL means IGNORE"
    );
    assert_eq!(load.fields_terminated_by, b"\t");
    assert_eq!(load.escaped_by, Some(b'\\'));
    assert_eq!(load.lines_terminated_by, b"\n");
    let Statement::LoadData(load) = statement(
        "LOAD DATA LOW_PRIORITY LOCAL INFILE 'f' REPLACE INTO TABLE d.t CHARACTER SET latin1 \
         COLUMNS ESCAPED BY '' OPTIONALLY ENCLOSED BY '\"' TERMINATED BY ',' \
         LINES TERMINATED BY '\\r\\n' STARTING BY 'x' IGNORE 1 ROWS (a, @skip, b) SET c = a + 1",
    ) else {
        panic!("not LOAD DATA");
    };
    assert_eq!(load.duplicates, LoadDuplicates::Replace);
    assert_eq!(load.table.to_string(), "d.t");
    assert_eq!(load.charset.as_deref(), Some("latin1"));
    assert_eq!(load.escaped_by, None);
    assert_eq!(load.enclosed_by, Some(b'"'));
    assert_eq!(load.fields_terminated_by, b",");
    assert_eq!(load.lines_terminated_by, b"\r\n");
    assert_eq!(load.lines_starting_by, b"x");
    assert_eq!(load.ignore_lines, 1);
    assert_eq!(
        load.targets,
        vec![
            LoadTarget::Column("a".into()),
            LoadTarget::Variable("skip".into()),
            LoadTarget::Column("b".into())
        ]
    );
    assert_eq!(load.assignments.len(), 1);
    let (code, _) = error("LOAD DATA INFILE 'f' INTO TABLE t FIELDS ENCLOSED BY 'ab'");
    assert_eq!(code, 1064);
    let (code, _) = error("LOAD DATA LOCAL INFILE 'f' INTO TABLE t FIELDS");
    assert_eq!(code, 1064);
}

#[test]
fn lock_tables_and_table_maintenance_forms() {
    let names = |text: &str| -> Vec<String> {
        match statement(text) {
            Statement::LockTables { tables } => tables
                .iter()
                .map(|(t, write)| format!("{t} {}", if *write { "WRITE" } else { "READ" }))
                .collect(),
            other => panic!("{text}: {other:?}"),
        }
    };
    assert_eq!(names("LOCK TABLES db.u WRITE"), ["db.u WRITE"]);
    assert_eq!(names("LOCK TABLE t READ"), ["t READ"]);
    assert_eq!(
        names("lock tables t AS x READ, `db`.`u` y READ LOCAL, v LOW_PRIORITY WRITE, w write"),
        ["t READ", "`db`.`u` READ", "v WRITE", "w WRITE"]
    );
    assert_eq!(error("LOCK TABLES t").0, 1064);
    assert_eq!(error("LOCK TABLES t READ WRITE").0, 1064);
    assert_eq!(error("LOCK TABLES t AS READ").0, 1064);
    for (text, op, count, quick) in [
        ("OPTIMIZE TABLE t", Maintenance::Optimize, 1, false),
        (
            "OPTIMIZE NO_WRITE_TO_BINLOG TABLES t, db.u",
            Maintenance::Optimize,
            2,
            false,
        ),
        ("optimize local table t", Maintenance::Optimize, 1, false),
        ("CHECK TABLE t", Maintenance::Check, 1, false),
        (
            "CHECK TABLE t, u FOR UPGRADE QUICK",
            Maintenance::Check,
            2,
            true,
        ),
        (
            "CHECK TABLES t EXTENDED CHANGED",
            Maintenance::Check,
            1,
            false,
        ),
        ("CHECKSUM TABLE t", Maintenance::Checksum, 1, false),
        ("CHECKSUM TABLE t, u QUICK", Maintenance::Checksum, 2, true),
        ("CHECKSUM TABLE t EXTENDED", Maintenance::Checksum, 1, false),
        ("REPAIR TABLE t", Maintenance::Repair, 1, false),
        (
            "REPAIR LOCAL TABLE t QUICK EXTENDED USE_FRM",
            Maintenance::Repair,
            1,
            true,
        ),
    ] {
        let Statement::TableMaintenance {
            op: parsed_op,
            tables,
            quick: parsed_quick,
        } = statement(text)
        else {
            panic!("{text} is not TableMaintenance");
        };
        assert_eq!(
            (parsed_op, tables.len(), parsed_quick),
            (op, count, quick),
            "{text}"
        );
    }
    assert_eq!(error("CHECKSUM TABLE t QUICK EXTENDED").0, 1064);
    assert_eq!(error("OPTIMIZE TABLE t QUICK").0, 1064);
    assert_eq!(error("CHECK TABLE").0, 1064);
    // MySQL's UPDATE has no FROM: one written before SET is a syntax error.
    let (code, message) = error("UPDATE t1 FROM t2 SET a = 1");
    assert_eq!(code, 1064);
    assert!(message.contains("near 'FROM t2 SET a = 1'"), "{message}");
}

#[test]
fn update_and_delete_modifiers() {
    fn one(sql: &str) -> ast::Statement {
        match parse_one(sql).expect(sql).statement {
            Statement::Sql(s) => *s,
            other => panic!("{sql}: {other:?}"),
        }
    }
    // The modifiers are no table name; a quoted `ignore` is one.
    for (sql, ignore, table) in [
        ("UPDATE IGNORE t SET a = 1", true, "t"),
        ("UPDATE LOW_PRIORITY IGNORE t SET a = 1", true, "t"),
        ("update low_priority t, u SET t.a = 1", false, "t"),
        ("UPDATE `ignore` SET a = 1", false, "`ignore`"),
    ] {
        let ast::Statement::Update(u) = one(sql) else {
            panic!("{sql}")
        };
        assert_eq!(update_ignores(&u), ignore, "{sql}");
        assert_eq!(u.table.relation.to_string(), table, "{sql}");
    }
    for (sql, ignore) in [
        ("DELETE IGNORE FROM t", true),
        ("DELETE LOW_PRIORITY QUICK IGNORE FROM t WHERE a = 1", true),
        ("DELETE QUICK FROM t", false),
        ("DELETE IGNORE t FROM t JOIN u ON t.a = u.a", true),
    ] {
        let ast::Statement::Delete(d) = one(sql) else {
            panic!("{sql}")
        };
        assert_eq!(delete_ignores(&d), ignore, "{sql}");
    }
    let ast::Statement::Explain { statement, .. } = one("EXPLAIN UPDATE IGNORE t SET a = 1") else {
        panic!("EXPLAIN")
    };
    assert!(matches!(*statement, ast::Statement::Update(ref u) if update_ignores(u)));
}
