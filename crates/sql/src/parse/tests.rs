use sqlparser::ast;
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
