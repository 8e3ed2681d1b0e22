//! The statement forms `sqlparser` rejects or represents without what Tarn needs,
//! parsed with `sqlparser`'s own token-level helpers (keywords, identifiers, literals,
//! expressions) so that no second SQL grammar grows here.

use sqlparser::ast::{Ident, ObjectName};
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::{Token, TokenWithSpan};
use tarn_common::Error;
use tarn_common::settings::IsolationLevel;

use super::{
    Maintenance, PrepareSource, ShowFilter, Statement, StoredObjectKind, TransactionScope,
};

/// The first few words of a statement, upper-cased ("" for a token that is not a
/// plain word), to decide which form it is before parsing it.
pub(super) fn leading_words(tokens: &[TokenWithSpan], count: usize) -> Vec<String> {
    tokens
        .iter()
        .filter(|t| !matches!(t.token, Token::Whitespace(_)))
        .take(count)
        .map(|t| match &t.token {
            Token::Word(w) if w.quote_style.is_none() => w.value.to_ascii_uppercase(),
            Token::Mul => "*".to_string(),
            Token::LParen => "(".to_string(),
            _ => String::new(),
        })
        .collect()
}

/// Which special form a statement starting with `words` is, if any.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Form {
    Begin,
    StartTransaction,
    SetTransaction,
    SetCharacterSet,
    ShowTableStatus,
    ShowIndex,
    ShowWarnings,
    ShowWarningCount,
    ShowEngineStatus,
    ShowEngines,
    ShowCreateDatabase,
    AnalyzeTable,
    Do,
    Xa,
    FlushTables,
    /// `FLUSH [LOCAL | NO_WRITE_TO_BINLOG] [kind] LOGS`
    FlushLogs,
    /// `FLUSH [LOCAL | NO_WRITE_TO_BINLOG] HOSTS`
    FlushHosts,
    /// `SHOW MASTER STATUS`, `SHOW BINARY LOG STATUS`
    ShowBinaryLogStatus,
    /// `SHOW {BINARY | MASTER} LOGS`
    ShowBinaryLogs,
    /// `SHOW {SLAVE | REPLICA} STATUS [FOR CHANNEL c]`
    ShowReplicaStatus,
    Shutdown,
    ShowStoredObjects,
    /// `DROP {PROCEDURE | FUNCTION | TRIGGER | EVENT} [IF EXISTS] name`
    DropStoredObject,
    /// `ALTER TABLE t {DISABLE | ENABLE} KEYS`, found by [`is_alter_table_keys`]
    /// rather than by its leading words.
    AlterTableKeys,
    /// Any other `ALTER TABLE`: sqlparser's operations plus the MySQL ones it lacks.
    AlterTable,
    /// `ALTER {DATABASE | SCHEMA} [d] options`
    AlterDatabase,
    /// `LOCK {TABLE | TABLES} ..`
    LockTables,
    /// `OPTIMIZE`, `CHECK`, `CHECKSUM` and `REPAIR` `TABLE ..`
    TableMaintenance,
    /// CREATE / DROP / ALTER USER, SET PASSWORD, GRANT, REVOKE, SHOW GRANTS, FLUSH
    /// PRIVILEGES (`accounts.rs` in this directory).
    Account,
    /// `LOAD DATA ...` (`load.rs` in this directory).
    LoadData,
    /// `PREPARE name FROM ..`
    Prepare,
    /// `EXECUTE name [USING ..]`
    Execute,
    /// `{DEALLOCATE | DROP} PREPARE name`
    DeallocatePrepare,
}

pub(super) fn classify(words: &[String]) -> Option<Form> {
    let w: Vec<&str> = words.iter().map(String::as_str).collect();
    let form = match w.as_slice() {
        ["BEGIN"] | ["BEGIN", "WORK"] => Form::Begin,
        ["START", "TRANSACTION", ..] => Form::StartTransaction,
        ["SET", "TRANSACTION", ..] | ["SET", "GLOBAL" | "SESSION" | "LOCAL", "TRANSACTION", ..] => {
            Form::SetTransaction
        }
        ["SET", "CHARACTER", "SET", ..] | ["SET", "CHARSET", ..] => Form::SetCharacterSet,
        ["SHOW", "TABLE", "STATUS", ..] => Form::ShowTableStatus,
        ["SHOW", "INDEX" | "INDEXES" | "KEYS", ..]
        | ["SHOW", "EXTENDED", "INDEX" | "INDEXES" | "KEYS", ..] => Form::ShowIndex,
        ["SHOW", "WARNINGS" | "ERRORS", ..] => Form::ShowWarnings,
        ["SHOW", "COUNT", "(", "*", ..] => Form::ShowWarningCount,
        ["SHOW", "ENGINE", ..] => Form::ShowEngineStatus,
        ["SHOW", "ENGINES", ..] | ["SHOW", "STORAGE", "ENGINES", ..] => Form::ShowEngines,
        ["SHOW", "CREATE", "DATABASE" | "SCHEMA", ..] => Form::ShowCreateDatabase,
        ["ANALYZE", "TABLE" | "NO_WRITE_TO_BINLOG" | "LOCAL", ..] => Form::AnalyzeTable,
        ["DO", ..] => Form::Do,
        ["XA", ..] => Form::Xa,
        ["CREATE" | "DROP" | "ALTER", "USER", ..]
        | ["SET", "PASSWORD", ..]
        | ["GRANT", ..]
        | ["REVOKE", ..]
        | ["SHOW", "GRANTS", ..]
        | ["FLUSH", "PRIVILEGES", ..] => Form::Account,
        ["FLUSH", "TABLE" | "TABLES", ..] => Form::FlushTables,
        ["FLUSH", rest @ ..] if flush_target(rest) == ["HOSTS"] => Form::FlushHosts,
        ["FLUSH", rest @ ..] if is_flush_logs(rest) => Form::FlushLogs,
        ["SHOW", "MASTER", "STATUS"] | ["SHOW", "BINARY", "LOG", "STATUS"] => {
            Form::ShowBinaryLogStatus
        }
        ["SHOW", "BINARY" | "MASTER", "LOGS"] => Form::ShowBinaryLogs,
        ["SHOW", "SLAVE" | "REPLICA", "STATUS", ..] => Form::ShowReplicaStatus,
        ["SHUTDOWN"] => Form::Shutdown,
        [
            "FLUSH",
            "LOCAL" | "NO_WRITE_TO_BINLOG",
            "TABLE" | "TABLES",
            ..,
        ] => Form::FlushTables,
        ["SHOW", "TRIGGERS" | "EVENTS", ..] => Form::ShowStoredObjects,
        ["SHOW", "PROCEDURE" | "FUNCTION", "STATUS", ..] => Form::ShowStoredObjects,
        ["DROP", "PROCEDURE" | "FUNCTION" | "TRIGGER" | "EVENT", ..] => Form::DropStoredObject,
        ["LOAD", "DATA", ..] => Form::LoadData,
        ["PREPARE", ..] => Form::Prepare,
        ["EXECUTE", ..] => Form::Execute,
        ["DEALLOCATE", ..] | ["DROP", "PREPARE", ..] => Form::DeallocatePrepare,
        ["ALTER", "TABLE", ..] => Form::AlterTable,
        ["ALTER", "DATABASE" | "SCHEMA", ..] => Form::AlterDatabase,
        ["LOCK", "TABLE" | "TABLES", ..] => Form::LockTables,
        [
            "OPTIMIZE" | "REPAIR",
            "TABLE" | "TABLES" | "NO_WRITE_TO_BINLOG" | "LOCAL",
            ..,
        ]
        | ["CHECK" | "CHECKSUM", "TABLE" | "TABLES", ..] => Form::TableMaintenance,
        _ => return None,
    };
    Some(form)
}

/// Parses a statement of form `form` (as [`classify`] found) to its end.
pub(super) fn parse(form: Form, p: &mut Parser) -> Result<Statement, ParserError> {
    let statement = match form {
        Form::Begin => {
            expect_word(p, "BEGIN")?;
            eat_word(p, "WORK");
            Statement::StartTransaction {
                read_only: None,
                consistent_snapshot: false,
            }
        }
        Form::StartTransaction => start_transaction(p)?,
        Form::SetTransaction => set_transaction(p)?,
        Form::SetCharacterSet => {
            expect_word(p, "SET")?;
            if !eat_word(p, "CHARSET") {
                expect_words(p, &["CHARACTER", "SET"])?;
            }
            let charset = if eat_word(p, "DEFAULT") {
                None
            } else {
                Some(name_or_string(p)?)
            };
            Statement::SetCharacterSet { charset }
        }
        Form::ShowTableStatus => {
            expect_words(p, &["SHOW", "TABLE", "STATUS"])?;
            let database = if eat_word(p, "FROM") || eat_word(p, "IN") {
                Some(p.parse_identifier()?.value)
            } else {
                None
            };
            let filter = show_filter(p)?;
            Statement::ShowTableStatus { database, filter }
        }
        Form::ShowIndex => show_index(p)?,
        Form::ShowWarnings => {
            expect_word(p, "SHOW")?;
            let errors_only = !eat_word(p, "WARNINGS");
            if errors_only {
                expect_word(p, "ERRORS")?;
            }
            let (mut offset, mut row_count) = (0, None);
            if eat_word(p, "LIMIT") {
                let first = p.parse_literal_uint()?;
                if p.consume_token(&Token::Comma) {
                    offset = first;
                    row_count = Some(p.parse_literal_uint()?);
                } else {
                    row_count = Some(first);
                }
            }
            Statement::ShowWarnings {
                errors_only,
                offset,
                row_count,
            }
        }
        Form::ShowWarningCount => {
            expect_words(p, &["SHOW", "COUNT"])?;
            p.expect_token(&Token::LParen)?;
            p.expect_token(&Token::Mul)?;
            p.expect_token(&Token::RParen)?;
            let errors_only = !eat_word(p, "WARNINGS");
            if errors_only {
                expect_word(p, "ERRORS")?;
            }
            Statement::ShowWarningCount { errors_only }
        }
        Form::ShowEngineStatus => {
            expect_words(p, &["SHOW", "ENGINE"])?;
            let engine = p.parse_identifier()?.value;
            expect_word(p, "STATUS")?;
            Statement::ShowEngineStatus { engine }
        }
        Form::ShowEngines => {
            expect_word(p, "SHOW")?;
            eat_word(p, "STORAGE");
            expect_word(p, "ENGINES")?;
            Statement::ShowEngines
        }
        Form::ShowCreateDatabase => {
            expect_words(p, &["SHOW", "CREATE"])?;
            if !eat_word(p, "DATABASE") {
                expect_word(p, "SCHEMA")?;
            }
            let if_not_exists = eat_words(p, &["IF", "NOT", "EXISTS"]);
            let name = p.parse_identifier()?.value;
            Statement::ShowCreateDatabase {
                name,
                if_not_exists,
            }
        }
        Form::AnalyzeTable => {
            expect_word(p, "ANALYZE")?;
            if !eat_word(p, "NO_WRITE_TO_BINLOG") {
                eat_word(p, "LOCAL");
            }
            expect_word(p, "TABLE")?;
            let tables = p.parse_comma_separated(|p| p.parse_object_name(false))?;
            Statement::AnalyzeTable { tables }
        }
        Form::Do => {
            expect_word(p, "DO")?;
            let exprs = p.parse_comma_separated(Parser::parse_expr)?;
            Statement::Do { exprs }
        }
        Form::Xa => unreachable!("XA is rejected before parsing"),
        Form::FlushTables => flush_tables(p)?,
        Form::FlushLogs => {
            flush_prefix(p)?;
            for kind in ["BINARY", "ENGINE", "ERROR", "GENERAL", "RELAY", "SLOW"] {
                if eat_word(p, kind) {
                    break;
                }
            }
            expect_word(p, "LOGS")?;
            Statement::FlushLogs
        }
        Form::FlushHosts => {
            flush_prefix(p)?;
            expect_word(p, "HOSTS")?;
            Statement::FlushHosts
        }
        Form::ShowBinaryLogStatus => {
            expect_word(p, "SHOW")?;
            if !eat_word(p, "MASTER") {
                expect_words(p, &["BINARY", "LOG"])?;
            }
            expect_word(p, "STATUS")?;
            Statement::ShowBinaryLogStatus
        }
        Form::ShowBinaryLogs => {
            expect_word(p, "SHOW")?;
            if !eat_word(p, "BINARY") {
                expect_word(p, "MASTER")?;
            }
            expect_word(p, "LOGS")?;
            Statement::ShowBinaryLogs
        }
        Form::ShowReplicaStatus => {
            expect_word(p, "SHOW")?;
            let slave = eat_word(p, "SLAVE");
            if !slave {
                expect_word(p, "REPLICA")?;
            }
            expect_word(p, "STATUS")?;
            if eat_words(p, &["FOR", "CHANNEL"]) {
                name_or_string(p)?;
            }
            Statement::ShowReplicaStatus { slave }
        }
        Form::Shutdown => {
            expect_word(p, "SHUTDOWN")?;
            Statement::Shutdown
        }
        Form::ShowStoredObjects => show_stored_objects(p)?,
        Form::DropStoredObject => {
            expect_word(p, "DROP")?;
            let kind = if eat_word(p, "PROCEDURE") {
                StoredObjectKind::Procedures
            } else if eat_word(p, "FUNCTION") {
                StoredObjectKind::Functions
            } else if eat_word(p, "TRIGGER") {
                StoredObjectKind::Triggers
            } else {
                expect_word(p, "EVENT")?;
                StoredObjectKind::Events
            };
            let if_exists = eat_words(p, &["IF", "EXISTS"]);
            let name = p.parse_object_name(false)?;
            Statement::DropStoredObject {
                kind,
                if_exists,
                name,
            }
        }
        Form::AlterTableKeys => {
            expect_words(p, &["ALTER", "TABLE"])?;
            let table = p.parse_object_name(false)?;
            let enable = eat_word(p, "ENABLE");
            if !enable {
                expect_word(p, "DISABLE")?;
            }
            expect_word(p, "KEYS")?;
            Statement::AlterTableKeys { table, enable }
        }
        Form::Account => Statement::Account(super::accounts::parse(p)?),
        Form::LoadData => super::load::load_data(p)?,
        Form::AlterTable => alter_table(p)?,
        Form::AlterDatabase => alter_database(p)?,
        Form::LockTables => lock_tables(p)?,
        Form::TableMaintenance => table_maintenance(p)?,
        Form::Prepare => {
            expect_word(p, "PREPARE")?;
            let name = p.parse_identifier()?.value;
            expect_word(p, "FROM")?;
            let source = match p.peek_token_ref().token {
                Token::SingleQuotedString(_) | Token::DoubleQuotedString(_) => {
                    PrepareSource::Text(p.parse_literal_string()?)
                }
                _ => PrepareSource::Variable(user_variable(p)?),
            };
            Statement::Prepare { name, source }
        }
        Form::Execute => {
            expect_word(p, "EXECUTE")?;
            let name = p.parse_identifier()?.value;
            let using = if eat_word(p, "USING") {
                p.parse_comma_separated(user_variable)?
            } else {
                Vec::new()
            };
            Statement::ExecutePrepared { name, using }
        }
        Form::DeallocatePrepare => {
            if !eat_word(p, "DEALLOCATE") {
                expect_word(p, "DROP")?;
            }
            expect_word(p, "PREPARE")?;
            let name = p.parse_identifier()?.value;
            Statement::DeallocatePrepare { name }
        }
    };
    expect_end(p)?;
    Ok(statement)
}

/// Whether `tokens` are `ALTER TABLE name {DISABLE | ENABLE} KEYS` (sqlparser
/// rejects the form; mysqldump writes it around each table's rows).
pub(super) fn is_alter_table_keys(tokens: &[TokenWithSpan]) -> bool {
    let words = leading_words(tokens, 2);
    if words != ["ALTER", "TABLE"] {
        return false;
    }
    let mut tail = tokens.iter().rev().filter(|t| {
        !matches!(
            t.token,
            Token::Whitespace(_) | Token::EOF | Token::SemiColon
        )
    });
    let is_word = |t: Option<&TokenWithSpan>, words: &[&str]| {
        matches!(t, Some(TokenWithSpan { token: Token::Word(w), .. })
            if w.quote_style.is_none()
                && words.iter().any(|word| w.value.eq_ignore_ascii_case(word)))
    };
    is_word(tail.next(), &["KEYS"]) && is_word(tail.next(), &["DISABLE", "ENABLE"])
}

/// `ALTER TABLE t op [, op ..]`: sqlparser's `AlterTable`, its operations parsed by
/// sqlparser except four MySQL forms it lacks or misreads, which become:
///
/// - `RENAME {INDEX | KEY} a TO b`: `RenameConstraint { old_name: a, new_name: b }`
///   (MySQL has no RENAME CONSTRAINT, so in Tarn's trees the variant means this);
/// - `RENAME t2` (no TO or AS): `RenameTable { To(t2) }`;
/// - `DROP KEY k`: `DropIndex { name: k }`;
/// - `COMMENT [=] 'text'`: `SetTblProperties` with one `SqlOption::Comment` (MySQL
///   has no TBLPROPERTIES, so in Tarn's trees the variant means this);
/// - `DROP CHECK c`: `DropProjection { name: c }` (MySQL has no projections);
/// - `ALTER {CHECK | CONSTRAINT} c [NOT] ENFORCED`: `EnableRule { name: c }` or
///   `DisableRule { name: c }` (MySQL has no rules).
fn alter_table(p: &mut Parser) -> Result<Statement, ParserError> {
    use sqlparser::ast::{AlterTable, AlterTableOperation, RenameTableNameKind};
    expect_words(p, &["ALTER", "TABLE"])?;
    let if_exists = eat_words(p, &["IF", "EXISTS"]);
    let name = p.parse_object_name(false)?;
    let operations = p.parse_comma_separated(|p| {
        if eat_word(p, "RENAME") {
            if eat_word(p, "INDEX") || eat_word(p, "KEY") {
                let old_name = p.parse_identifier()?;
                expect_word(p, "TO")?;
                let new_name = p.parse_identifier()?;
                return Ok(AlterTableOperation::RenameConstraint { old_name, new_name });
            }
            let next = p.peek_token_ref();
            let keyword = matches!(&next.token, Token::Word(w) if w.quote_style.is_none()
                && ["TO", "AS", "COLUMN"].iter().any(|k| w.value.eq_ignore_ascii_case(k)));
            if !keyword {
                let table_name = p.parse_object_name(false)?;
                return Ok(AlterTableOperation::RenameTable {
                    table_name: RenameTableNameKind::To(table_name),
                });
            }
            p.prev_token();
        } else if eat_words(p, &["DROP", "KEY"]) {
            let name = p.parse_identifier()?;
            return Ok(AlterTableOperation::DropIndex { name });
        } else if eat_words(p, &["DROP", "CHECK"]) {
            let name = p.parse_identifier()?;
            return Ok(AlterTableOperation::DropProjection {
                if_exists: false,
                name,
            });
        } else if eat_words(p, &["ALTER", "CHECK"]) || eat_words(p, &["ALTER", "CONSTRAINT"]) {
            let name = p.parse_identifier()?;
            if eat_word(p, "ENFORCED") {
                return Ok(AlterTableOperation::EnableRule { name });
            }
            expect_words(p, &["NOT", "ENFORCED"])?;
            return Ok(AlterTableOperation::DisableRule { name });
        } else if let Some(option) = table_option(p)? {
            return Ok(AlterTableOperation::SetTblProperties {
                table_properties: vec![option],
            });
        } else if eat_word(p, "COMMENT") {
            // The table option `COMMENT [=] 'text'` (Django's db_table_comment),
            // which sqlparser does not take in ALTER TABLE.
            let eq = p.consume_token(&Token::Eq);
            let text = p.parse_literal_string()?;
            let comment = if eq {
                sqlparser::ast::CommentDef::WithEq(text)
            } else {
                sqlparser::ast::CommentDef::WithoutEq(text)
            };
            return Ok(AlterTableOperation::SetTblProperties {
                table_properties: vec![sqlparser::ast::SqlOption::Comment(comment)],
            });
        }
        p.parse_alter_table_operation()
    })?;
    let statement = AlterTable {
        name,
        if_exists,
        only: false,
        operations,
        location: None,
        on_cluster: None,
        table_type: None,
        end_token: sqlparser::ast::helpers::attached_token::AttachedToken::empty(),
    };
    Ok(Statement::Sql(Box::new(statement.into())))
}

/// The keys of the ALTER TABLE options [`table_option`] reads, as
/// `SqlOption::KeyValue`s with the value an identifier (`alter.rs` acts on them).
pub(crate) mod table_option_key {
    pub const ENGINE: &str = "ENGINE";
    pub const ROW_FORMAT: &str = "ROW_FORMAT";
    pub const FORCE: &str = "FORCE";
    pub const CHARSET: &str = "CHARACTER SET";
    pub const COLLATE: &str = "COLLATE";
    /// `CONVERT TO CHARACTER SET cs`: the value is the character set.
    pub const CONVERT: &str = "CONVERT TO CHARACTER SET";
}

/// An ALTER TABLE option sqlparser does not take: `ENGINE [=] e`, `ROW_FORMAT [=] f`,
/// `FORCE`, `[DEFAULT] {CHARACTER SET | CHARSET} [=] cs`, `[DEFAULT] COLLATE [=] c`,
/// `CONVERT TO {CHARACTER SET | CHARSET} cs`; a `COLLATE c` right after a character
/// set makes the value the compound name `cs.c`. None (nothing consumed) if the next words are none of these.
fn table_option(p: &mut Parser) -> Result<Option<sqlparser::ast::SqlOption>, ParserError> {
    use table_option_key as key;
    let start = p.index();
    let key = if eat_word(p, "ENGINE") {
        key::ENGINE
    } else if eat_word(p, "ROW_FORMAT") {
        key::ROW_FORMAT
    } else if eat_word(p, "FORCE") {
        key::FORCE
    } else if eat_word(p, "CONVERT") {
        expect_word(p, "TO")?;
        if !eat_word(p, "CHARSET") {
            expect_words(p, &["CHARACTER", "SET"])?;
        }
        key::CONVERT
    } else {
        let default = eat_word(p, "DEFAULT");
        if eat_word(p, "CHARSET") || eat_words(p, &["CHARACTER", "SET"]) {
            key::CHARSET
        } else if eat_word(p, "COLLATE") {
            key::COLLATE
        } else {
            if default {
                // Not a table option (sqlparser reports what follows).
                while p.index() > start {
                    p.prev_token();
                }
            }
            return Ok(None);
        }
    };
    let value = if key == key::FORCE {
        String::new()
    } else {
        let _ = p.consume_token(&Token::Eq);
        name_or_string(p)?
    };
    let mut value = sqlparser::ast::Expr::Identifier(Ident::new(value));
    // `CHARACTER SET cs COLLATE c`: the two parts of a compound name.
    if (key == key::CHARSET || key == key::CONVERT) && eat_word(p, "COLLATE") {
        let _ = p.consume_token(&Token::Eq);
        let collation = name_or_string(p)?;
        if let sqlparser::ast::Expr::Identifier(charset) = value {
            value = sqlparser::ast::Expr::CompoundIdentifier(vec![charset, Ident::new(collation)]);
        }
    }
    Ok(Some(sqlparser::ast::SqlOption::KeyValue {
        key: Ident::new(key),
        value,
    }))
}

/// `ALTER {DATABASE | SCHEMA} [d] {[DEFAULT] {CHARACTER SET | CHARSET} [=] cs |
/// [DEFAULT] COLLATE [=] c | READ ONLY [=] {DEFAULT | 0 | 1}} ..` (a `DEFAULT
/// ENCRYPTION = 'N'` was taken out before, `take_database_encryption`).
fn alter_database(p: &mut Parser) -> Result<Statement, ParserError> {
    expect_word(p, "ALTER")?;
    if !eat_word(p, "SCHEMA") {
        expect_word(p, "DATABASE")?;
    }
    let is_option_word = |p: &Parser| {
        matches!(&p.peek_token_ref().token, Token::Word(w) if w.quote_style.is_none()
            && ["DEFAULT", "CHARACTER", "CHARSET", "COLLATE", "READ"]
                .iter()
                .any(|k| w.value.eq_ignore_ascii_case(k)))
    };
    let name = match p.peek_token_ref().token {
        Token::EOF | Token::SemiColon => None,
        _ if is_option_word(p) => None,
        _ => Some(p.parse_identifier()?.value),
    };
    let (mut charset, mut collation, mut read_only) = (None, None, false);
    loop {
        let default = eat_word(p, "DEFAULT");
        if eat_word(p, "CHARSET") || eat_words(p, &["CHARACTER", "SET"]) {
            let _ = p.consume_token(&Token::Eq);
            charset = Some(name_or_string(p)?);
        } else if eat_word(p, "COLLATE") {
            let _ = p.consume_token(&Token::Eq);
            collation = Some(name_or_string(p)?);
        } else if !default && eat_words(p, &["READ", "ONLY"]) {
            let _ = p.consume_token(&Token::Eq);
            read_only = !eat_word(p, "DEFAULT") && p.parse_literal_uint()? != 0;
        } else if default {
            return Err(unexpected(p, "CHARACTER SET or COLLATE"));
        } else {
            break;
        }
    }
    Ok(Statement::AlterDatabase {
        name,
        charset,
        collation,
        read_only,
    })
}

/// `LOCK {TABLE | TABLES} t [[AS] alias] {READ [LOCAL] | [LOW_PRIORITY] WRITE} [, ..]`
fn lock_tables(p: &mut Parser) -> Result<Statement, ParserError> {
    expect_word(p, "LOCK")?;
    if !eat_word(p, "TABLES") {
        expect_word(p, "TABLE")?;
    }
    let tables = p.parse_comma_separated(|p| {
        let table = p.parse_object_name(false)?;
        let is_lock_word = |p: &Parser| {
            matches!(&p.peek_token_ref().token, Token::Word(w) if w.quote_style.is_none()
                && ["READ", "WRITE", "LOW_PRIORITY"].iter().any(|k| w.value.eq_ignore_ascii_case(k)))
        };
        if eat_word(p, "AS") || !is_lock_word(p) {
            p.parse_identifier()?;
        }
        let write = if eat_word(p, "READ") {
            eat_word(p, "LOCAL");
            false
        } else {
            eat_word(p, "LOW_PRIORITY");
            expect_word(p, "WRITE")?;
            true
        };
        Ok((table, write))
    })?;
    Ok(Statement::LockTables { tables })
}

/// `OPTIMIZE [NO_WRITE_TO_BINLOG | LOCAL] {TABLE | TABLES} t [, ..]`,
/// `CHECK {TABLE | TABLES} t [, ..] [option ..]`,
/// `CHECKSUM {TABLE | TABLES} t [, ..] [QUICK | EXTENDED]`,
/// `REPAIR [NO_WRITE_TO_BINLOG | LOCAL] {TABLE | TABLES} t [, ..] [QUICK] [EXTENDED] [USE_FRM]`
fn table_maintenance(p: &mut Parser) -> Result<Statement, ParserError> {
    let op = if eat_word(p, "OPTIMIZE") {
        Maintenance::Optimize
    } else if eat_word(p, "REPAIR") {
        Maintenance::Repair
    } else if eat_word(p, "CHECKSUM") {
        Maintenance::Checksum
    } else {
        expect_word(p, "CHECK")?;
        Maintenance::Check
    };
    if matches!(op, Maintenance::Optimize | Maintenance::Repair) && !eat_word(p, "LOCAL") {
        eat_word(p, "NO_WRITE_TO_BINLOG");
    }
    if !eat_word(p, "TABLES") {
        expect_word(p, "TABLE")?;
    }
    let tables = p.parse_comma_separated(|p| p.parse_object_name(false))?;
    let mut quick = false;
    let options: &[&str] = match op {
        Maintenance::Checksum => &["QUICK", "EXTENDED"],
        Maintenance::Check => &["QUICK", "FAST", "MEDIUM", "EXTENDED", "CHANGED"],
        Maintenance::Repair => &["QUICK", "EXTENDED", "USE_FRM"],
        Maintenance::Optimize => &[],
    };
    loop {
        if op == Maintenance::Check && eat_words(p, &["FOR", "UPGRADE"]) {
            continue;
        }
        let Some(option) = options.iter().find(|o| eat_word(p, o)) else {
            break;
        };
        quick |= *option == "QUICK";
        if op == Maintenance::Checksum {
            // One of QUICK or EXTENDED.
            break;
        }
    }
    Ok(Statement::TableMaintenance { op, tables, quick })
}

/// MySQL's multi-table `UPDATE t1, t2 [, ..] SET ..`, which sqlparser rejects at the
/// comma: the first comma outside parentheses before SET becomes the word FROM, so
/// that sqlparser reads the first table reference as the update's `table` and the
/// rest as `from: BeforeSet(..)` (Snowflake's `UPDATE t1 FROM t2 SET`). MySQL's
/// UPDATE has no FROM clause, so in Tarn's trees `BeforeSet` only ever holds this
/// list, and a FROM written before SET is refused here: `Err` holds its position.
///
/// `update_at`: which word of the statement is UPDATE (0, or 1 after EXPLAIN).
pub(super) fn rewrite_update_table_list(
    tokens: &mut [TokenWithSpan],
    update_at: usize,
) -> Result<(), sqlparser::tokenizer::Location> {
    let start = tokens
        .iter()
        .enumerate()
        .filter(|(_, t)| !matches!(t.token, Token::Whitespace(_)))
        .nth(update_at)
        .map_or(tokens.len(), |(i, _)| i + 1);
    let mut depth = 0usize;
    let mut comma = None;
    for (i, t) in tokens.iter().enumerate().skip(start) {
        match &t.token {
            Token::LParen => depth += 1,
            Token::RParen => depth = depth.saturating_sub(1),
            Token::Comma if depth == 0 && comma.is_none() => comma = Some(i),
            Token::Word(w) if depth == 0 && w.quote_style.is_none() => {
                if w.value.eq_ignore_ascii_case("SET") {
                    break;
                }
                if w.value.eq_ignore_ascii_case("FROM") {
                    return Err(t.span.start);
                }
            }
            _ => {}
        }
    }
    if let Some(i) = comma {
        tokens[i].token = Token::make_keyword("FROM");
    }
    Ok(())
}

/// The modifiers after `UPDATE` (`LOW_PRIORITY`, `IGNORE`) or `DELETE`
/// (`LOW_PRIORITY`, `QUICK`, `IGNORE`), the `verb_at`th word of the statement: turns
/// them into whitespace, since sqlparser would read the first as a table name, and
/// says whether IGNORE was among them. LOW_PRIORITY and QUICK change nothing in
/// Tarn (InnoDB ignores them too). A modifier may appear once, in any order, as
/// MySQL's grammar for DELETE allows.
pub(super) fn take_dml_modifiers(tokens: &mut [TokenWithSpan], verb_at: usize) -> bool {
    let mut words = tokens
        .iter()
        .enumerate()
        .filter(|(_, t)| !matches!(t.token, Token::Whitespace(_)));
    let Some((verb, verb_token)) = words.nth(verb_at) else {
        return false;
    };
    let delete =
        matches!(&verb_token.token, Token::Word(w) if w.value.eq_ignore_ascii_case("DELETE"));
    let allowed: &[&str] = if delete {
        &["LOW_PRIORITY", "QUICK", "IGNORE"]
    } else {
        &["LOW_PRIORITY", "IGNORE"]
    };
    let mut seen: Vec<&str> = Vec::new();
    let mut taken = Vec::new();
    for (i, t) in tokens.iter().enumerate().skip(verb + 1) {
        match &t.token {
            Token::Whitespace(_) => continue,
            Token::Word(w) if w.quote_style.is_none() => {
                let Some(m) = allowed
                    .iter()
                    .find(|m| w.value.eq_ignore_ascii_case(m) && !seen.contains(m))
                else {
                    break;
                };
                seen.push(m);
                taken.push(i);
            }
            _ => break,
        }
    }
    for i in taken {
        tokens[i].token = Token::Whitespace(sqlparser::tokenizer::Whitespace::Space);
    }
    seen.contains(&"IGNORE")
}

/// The words of a FLUSH statement after `FLUSH` and its optional `LOCAL` /
/// `NO_WRITE_TO_BINLOG`.
fn flush_target<'a>(words: &'a [&'a str]) -> &'a [&'a str] {
    match words {
        ["LOCAL" | "NO_WRITE_TO_BINLOG", rest @ ..] => rest,
        rest => rest,
    }
}

/// `[BINARY | ENGINE | ERROR | GENERAL | RELAY | SLOW] LOGS` (after [`flush_target`]).
fn is_flush_logs(words: &[&str]) -> bool {
    matches!(
        flush_target(words),
        ["LOGS"]
            | [
                "BINARY" | "ENGINE" | "ERROR" | "GENERAL" | "RELAY" | "SLOW",
                "LOGS"
            ]
    )
}

/// `FLUSH [LOCAL | NO_WRITE_TO_BINLOG]`
fn flush_prefix(p: &mut Parser) -> Result<(), ParserError> {
    expect_word(p, "FLUSH")?;
    if !eat_word(p, "LOCAL") {
        eat_word(p, "NO_WRITE_TO_BINLOG");
    }
    Ok(())
}

/// `FLUSH [LOCAL | NO_WRITE_TO_BINLOG] {TABLE | TABLES} [t [, t ..]] [WITH READ LOCK]`
fn flush_tables(p: &mut Parser) -> Result<Statement, ParserError> {
    flush_prefix(p)?;
    if !eat_word(p, "TABLES") {
        expect_word(p, "TABLE")?;
    }
    let at_tail = |p: &Parser| {
        at_end(p) || {
            let next = p.peek_token();
            matches!(&next.token, Token::Word(w) if w.value.eq_ignore_ascii_case("WITH"))
        }
    };
    if !at_tail(p) {
        p.parse_comma_separated(|p| p.parse_object_name(false))?;
    }
    let with_read_lock = eat_word(p, "WITH");
    if with_read_lock {
        expect_words(p, &["READ", "LOCK"])?;
    }
    Ok(Statement::FlushTables { with_read_lock })
}

/// `SHOW TRIGGERS [{FROM | IN} db] [LIKE | WHERE]`, `SHOW EVENTS [{FROM | IN} db]
/// [LIKE | WHERE]`, `SHOW {PROCEDURE | FUNCTION} STATUS [LIKE | WHERE]`
fn show_stored_objects(p: &mut Parser) -> Result<Statement, ParserError> {
    expect_word(p, "SHOW")?;
    let kind = if eat_word(p, "TRIGGERS") {
        StoredObjectKind::Triggers
    } else if eat_word(p, "EVENTS") {
        StoredObjectKind::Events
    } else if eat_words(p, &["PROCEDURE", "STATUS"]) {
        StoredObjectKind::Procedures
    } else {
        expect_words(p, &["FUNCTION", "STATUS"])?;
        StoredObjectKind::Functions
    };
    let takes_database = matches!(kind, StoredObjectKind::Triggers | StoredObjectKind::Events);
    let database = if takes_database && (eat_word(p, "FROM") || eat_word(p, "IN")) {
        Some(p.parse_identifier()?.value)
    } else {
        None
    };
    let filter = show_filter(p)?;
    Ok(Statement::ShowStoredObjects {
        kind,
        database,
        filter,
    })
}

/// `START TRANSACTION [WITH CONSISTENT SNAPSHOT | READ ONLY | READ WRITE], ...`
fn start_transaction(p: &mut Parser) -> Result<Statement, ParserError> {
    expect_words(p, &["START", "TRANSACTION"])?;
    let mut read_only = None;
    let mut consistent_snapshot = false;
    if at_end(p) {
        return Ok(Statement::StartTransaction {
            read_only,
            consistent_snapshot,
        });
    }
    loop {
        if eat_words(p, &["WITH", "CONSISTENT", "SNAPSHOT"]) {
            consistent_snapshot = true;
        } else {
            let mode = access_mode(p)?;
            if read_only.is_some_and(|old| old != mode) {
                // MySQL rejects READ ONLY together with READ WRITE.
                return Err(unexpected(p, "a transaction characteristic"));
            }
            read_only = Some(mode);
        }
        if !p.consume_token(&Token::Comma) {
            break;
        }
    }
    Ok(Statement::StartTransaction {
        read_only,
        consistent_snapshot,
    })
}

/// `SET [GLOBAL | SESSION | LOCAL] TRANSACTION characteristic, ...`
fn set_transaction(p: &mut Parser) -> Result<Statement, ParserError> {
    expect_word(p, "SET")?;
    let scope = if eat_word(p, "GLOBAL") {
        TransactionScope::Global
    } else if eat_word(p, "SESSION") || eat_word(p, "LOCAL") {
        TransactionScope::Session
    } else {
        TransactionScope::Next
    };
    expect_word(p, "TRANSACTION")?;
    let mut isolation = None;
    let mut read_only = None;
    loop {
        if eat_words(p, &["ISOLATION", "LEVEL"]) {
            isolation = Some(isolation_level(p)?);
        } else {
            read_only = Some(access_mode(p)?);
        }
        if !p.consume_token(&Token::Comma) {
            break;
        }
    }
    Ok(Statement::SetTransaction {
        scope,
        isolation,
        read_only,
    })
}

fn isolation_level(p: &mut Parser) -> Result<IsolationLevel, ParserError> {
    if eat_words(p, &["READ", "UNCOMMITTED"]) {
        Ok(IsolationLevel::ReadUncommitted)
    } else if eat_words(p, &["READ", "COMMITTED"]) {
        Ok(IsolationLevel::ReadCommitted)
    } else if eat_words(p, &["REPEATABLE", "READ"]) {
        Ok(IsolationLevel::RepeatableRead)
    } else if eat_word(p, "SERIALIZABLE") {
        Ok(IsolationLevel::Serializable)
    } else {
        Err(unexpected(p, "an isolation level"))
    }
}

/// `READ ONLY` (true) or `READ WRITE` (false).
fn access_mode(p: &mut Parser) -> Result<bool, ParserError> {
    if eat_words(p, &["READ", "ONLY"]) {
        Ok(true)
    } else if eat_words(p, &["READ", "WRITE"]) {
        Ok(false)
    } else {
        Err(unexpected(p, "READ ONLY or READ WRITE"))
    }
}

/// `SHOW [EXTENDED] {INDEX | INDEXES | KEYS} {FROM | IN} t [{FROM | IN} db] [WHERE e]`
fn show_index(p: &mut Parser) -> Result<Statement, ParserError> {
    expect_word(p, "SHOW")?;
    eat_word(p, "EXTENDED");
    if !(eat_word(p, "INDEX") || eat_word(p, "INDEXES")) {
        expect_word(p, "KEYS")?;
    }
    expect_from_or_in(p)?;
    let name = p.parse_object_name(false)?;
    let mut parts = name_parts(&name, p)?;
    let table = parts.pop().unwrap_or_default();
    let mut database = parts.pop();
    if eat_word(p, "FROM") || eat_word(p, "IN") {
        database = Some(p.parse_identifier()?.value);
    }
    let filter = if eat_word(p, "WHERE") {
        Some(p.parse_expr()?)
    } else {
        None
    };
    Ok(Statement::ShowIndex {
        table,
        database,
        filter,
    })
}

/// The one or two identifiers of `t` or `db.t`.
fn name_parts(name: &ObjectName, p: &Parser) -> Result<Vec<String>, ParserError> {
    let parts: Vec<String> = name
        .0
        .iter()
        .filter_map(|part| part.as_ident().map(|ident: &Ident| ident.value.clone()))
        .collect();
    if parts.is_empty() || parts.len() > 2 || parts.len() != name.0.len() {
        return Err(unexpected(p, "a table name"));
    }
    Ok(parts)
}

fn show_filter(p: &mut Parser) -> Result<Option<ShowFilter>, ParserError> {
    if eat_word(p, "LIKE") {
        Ok(Some(ShowFilter::Like(p.parse_literal_string()?)))
    } else if eat_word(p, "WHERE") {
        Ok(Some(ShowFilter::Where(p.parse_expr()?)))
    } else {
        Ok(None)
    }
}

/// A user variable, `@name` (the tokenizer keeps it one word): its name without
/// `@`, lower-cased as user variables compare.
fn user_variable(p: &mut Parser) -> Result<String, ParserError> {
    if let Token::Word(w) = &p.peek_token_ref().token
        && w.quote_style.is_none()
        && let Some(name) = w.value.strip_prefix('@')
        && !name.is_empty()
        && !name.starts_with('@')
    {
        let name = name.to_ascii_lowercase();
        p.next_token();
        return Ok(name);
    }
    Err(unexpected(p, "a user variable"))
}

fn name_or_string(p: &mut Parser) -> Result<String, ParserError> {
    match p.peek_token().token {
        Token::SingleQuotedString(_) | Token::DoubleQuotedString(_) => p.parse_literal_string(),
        _ => Ok(p.parse_identifier()?.value),
    }
}

fn expect_from_or_in(p: &mut Parser) -> Result<(), ParserError> {
    if eat_word(p, "FROM") || eat_word(p, "IN") {
        Ok(())
    } else {
        Err(unexpected(p, "FROM or IN"))
    }
}

/// Consumes the next token if it is the unquoted word `word` (any case).
pub(super) fn eat_word(p: &mut Parser, word: &str) -> bool {
    let matches = matches!(
        &p.peek_token_ref().token,
        Token::Word(w) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case(word)
    );
    if matches {
        p.next_token();
    }
    matches
}

/// Consumes `words` if the next tokens are exactly those words; else consumes nothing.
pub(super) fn eat_words(p: &mut Parser, words: &[&str]) -> bool {
    for (matched, word) in words.iter().enumerate() {
        if !eat_word(p, word) {
            // Step back over what matched: each `prev_token` undoes one `next_token`.
            for _ in 0..matched {
                p.prev_token();
            }
            return false;
        }
    }
    true
}

pub(super) fn expect_word(p: &mut Parser, word: &str) -> Result<(), ParserError> {
    if eat_word(p, word) {
        Ok(())
    } else {
        Err(unexpected(p, word))
    }
}

pub(super) fn expect_words(p: &mut Parser, words: &[&str]) -> Result<(), ParserError> {
    words.iter().try_for_each(|word| expect_word(p, word))
}

pub(super) fn at_end(p: &Parser) -> bool {
    p.peek_token_ref().token == Token::EOF
}

pub(super) fn expect_end(p: &Parser) -> Result<(), ParserError> {
    if at_end(p) {
        Ok(())
    } else {
        Err(unexpected(p, "end of statement"))
    }
}

/// An error in sqlparser's own format (`Expected: .., found: .. at Line: l, Column:
/// c`), so that one routine turns every syntax error into MySQL's message.
pub(super) fn unexpected(p: &Parser, expected: &str) -> ParserError {
    let found = p.peek_token();
    ParserError::ParserError(format!(
        "Expected: {expected}, found: {}{}",
        found.token, found.span.start
    ))
}

/// The next token after `i` that is not whitespace.
fn next_significant(tokens: &[TokenWithSpan], i: usize) -> Option<usize> {
    (i + 1..tokens.len()).find(|&j| !matches!(tokens[j].token, Token::Whitespace(_)))
}

/// The token before `i` that is not whitespace.
fn previous_significant(tokens: &[TokenWithSpan], i: usize) -> Option<usize> {
    (0..i)
        .rev()
        .find(|&j| !matches!(tokens[j].token, Token::Whitespace(_)))
}

fn blank(token: &mut TokenWithSpan) {
    token.token = Token::Whitespace(sqlparser::tokenizer::Whitespace::Space);
}

/// Reads MySQL's character set introducers (`_utf8mb4'x'`, `_latin1'x'`, `_binary'x'`,
/// `_binary 0x41`, which MySQL 8 writes in generated-column and default texts and
/// mysqldump before binary strings) into plain literals: `_binary` makes the
/// literal a hexadecimal one (a binary string, as `X'..'` is); any other character
/// set a text string, as Tarn stores all text in UTF-8. Quoted text is already
/// UTF-8 (the client's), so it is kept; the bytes of a hexadecimal literal are read
/// in the introducer's character set (latin1 byte by byte, the UTF-8 sets checked:
/// 1300 if they are not valid). A MySQL character set Tarn does not store is 1235;
/// a word that names no character set is left a column name with the string its
/// alias (an AS put between them), as MySQL reads `_x 'a'`.
pub(super) fn rewrite_introducers(tokens: &mut Vec<TokenWithSpan>) -> Result<(), Error> {
    let mut next_i = 0;
    while next_i < tokens.len() {
        let i = next_i;
        next_i += 1;
        let Token::Word(w) = &tokens[i].token else {
            continue;
        };
        let Some(name) = w
            .value
            .strip_prefix('_')
            .filter(|_| w.quote_style.is_none())
        else {
            continue;
        };
        let Some(next) = next_significant(tokens, i) else {
            continue;
        };
        let hex = match &tokens[next].token {
            Token::HexStringLiteral(h) => Some(h.clone()),
            Token::Number(n, _) if n.starts_with("0x") || n.starts_with("0X") => {
                Some(n[2..].to_string())
            }
            Token::SingleQuotedString(_) | Token::DoubleQuotedString(_) => None,
            _ => continue,
        };
        let lower = name.to_ascii_lowercase();
        let charset = if lower == "latin1" {
            "latin1"
        } else if let Some(charset) = crate::sysvars::canonical_charset(&lower) {
            charset
        } else if crate::sysvars::MYSQL_CHARSETS.contains(&lower.as_str()) {
            return Err(super::unsupported(&format!(
                "the introducer _{lower} (Tarn stores text as utf8mb4)"
            )));
        } else {
            // Not a character set: MySQL reads a column and its alias (`_x 'a'`),
            // which an AS between them makes sqlparser read too.
            let span = tokens[next].span;
            let as_keyword = |token| TokenWithSpan { token, span };
            tokens.insert(next, as_keyword(Token::make_keyword("AS")));
            tokens.insert(
                next + 1,
                as_keyword(Token::Whitespace(sqlparser::tokenizer::Whitespace::Space)),
            );
            next_i = next + 2;
            continue;
        };
        let invalid = |hex: &str| {
            Error::sql(
                1300,
                "HY000",
                format!(
                    "Invalid {charset} character string: '{}'",
                    hex.to_uppercase()
                ),
            )
        };
        let literal = match (charset, hex) {
            ("binary", Some(hex)) => Token::HexStringLiteral(hex),
            ("binary", None) => {
                let (Token::SingleQuotedString(text) | Token::DoubleQuotedString(text)) =
                    &tokens[next].token
                else {
                    unreachable!("a quoted string, matched above")
                };
                let hex: String = text.bytes().map(|b| format!("{b:02X}")).collect();
                Token::HexStringLiteral(hex)
            }
            (_, None) => tokens[next].token.clone(),
            ("latin1", Some(hex)) => {
                let bytes = super::load::decode_hex(&hex).ok_or_else(|| invalid(&hex))?;
                Token::SingleQuotedString(bytes.iter().map(|&b| char::from(b)).collect())
            }
            (_, Some(hex)) => {
                let bytes = super::load::decode_hex(&hex).ok_or_else(|| invalid(&hex))?;
                let text = String::from_utf8(bytes).map_err(|_| invalid(&hex))?;
                if charset == "ascii" && !text.is_ascii() {
                    return Err(invalid(&hex));
                }
                Token::SingleQuotedString(text)
            }
        };
        blank(&mut tokens[i]);
        tokens[next].token = literal;
    }
    Ok(())
}

/// Takes `VISIBLE` out of index definitions (`KEY k (c) VISIBLE`, which mysqldump
/// writes as `/*!80000 VISIBLE */`), as every Tarn index is visible; refuses
/// `INVISIBLE` with 1235, as Tarn has no invisible indexes (an index the planner
/// ignored but kept up to date). Only the word right after an index's column list
/// or an index option's string (`COMMENT '..'`), followed by `,`, `)` or the end, is
/// taken, so a column named `visible` is left alone.
pub(super) fn take_index_visibility(tokens: &mut [TokenWithSpan]) -> Result<(), Error> {
    for i in 0..tokens.len() {
        let Token::Word(w) = &tokens[i].token else {
            continue;
        };
        if w.quote_style.is_some() {
            continue;
        }
        let invisible = if w.value.eq_ignore_ascii_case("VISIBLE") {
            false
        } else if w.value.eq_ignore_ascii_case("INVISIBLE") {
            true
        } else {
            continue;
        };
        let after_index = previous_significant(tokens, i).is_some_and(|j| {
            matches!(
                tokens[j].token,
                Token::RParen | Token::SingleQuotedString(_) | Token::Number(..)
            ) || matches!(&tokens[j].token, Token::Word(w) if w.value.eq_ignore_ascii_case("BTREE") || w.value.eq_ignore_ascii_case("HASH"))
        });
        let at_end = next_significant(tokens, i).is_none_or(|j| {
            matches!(
                tokens[j].token,
                Token::Comma | Token::RParen | Token::SemiColon | Token::EOF
            )
        });
        if !(after_index && at_end) {
            continue;
        }
        if invisible {
            return Err(super::unsupported("INVISIBLE indexes"));
        }
        blank(&mut tokens[i]);
    }
    Ok(())
}

/// Takes `[DEFAULT] ENCRYPTION [=] 'N'` out of CREATE / ALTER DATABASE (mysqldump
/// writes `/*!80016 DEFAULT ENCRYPTION='N' */`): Tarn does not encrypt, so 'N' is
/// what every database is. 'Y' is refused with 1235.
pub(super) fn take_database_encryption(tokens: &mut [TokenWithSpan]) -> Result<(), Error> {
    for i in 0..tokens.len() {
        let Token::Word(w) = &tokens[i].token else {
            continue;
        };
        if w.quote_style.is_some() || !w.value.eq_ignore_ascii_case("ENCRYPTION") {
            continue;
        }
        let Some(mut value_at) = next_significant(tokens, i) else {
            continue;
        };
        let mut taken = vec![i];
        if tokens[value_at].token == Token::Eq {
            taken.push(value_at);
            match next_significant(tokens, value_at) {
                Some(j) => value_at = j,
                None => continue,
            }
        }
        let (Token::SingleQuotedString(value) | Token::DoubleQuotedString(value)) =
            &tokens[value_at].token
        else {
            continue;
        };
        if !value.eq_ignore_ascii_case("N") {
            return Err(super::unsupported(
                "ENCRYPTION='Y' (Tarn stores databases unencrypted)",
            ));
        }
        taken.push(value_at);
        if let Some(j) = previous_significant(tokens, i)
            && matches!(&tokens[j].token, Token::Word(w) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case("DEFAULT"))
        {
            taken.push(j);
        }
        for j in taken {
            blank(&mut tokens[j]);
        }
    }
    Ok(())
}

/// What kind of stored program a `CREATE [DEFINER = user] {PROCEDURE | FUNCTION |
/// TRIGGER | EVENT} ..` statement creates (`AGGREGATE FUNCTION` too), if it is one:
/// the first of those words or of the object words of other CREATE statements
/// decides, so `CREATE DEFINER = .. VIEW` is still a view.
pub(super) fn created_stored_program(tokens: &[TokenWithSpan]) -> Option<&'static str> {
    let mut words = tokens.iter().filter_map(|t| match &t.token {
        Token::Word(w) if w.quote_style.is_none() => Some(w.value.to_ascii_uppercase()),
        _ => None,
    });
    if words.next()? != "CREATE" {
        return None;
    }
    for word in words.take(16) {
        match word.as_str() {
            "PROCEDURE" => return Some("stored procedures"),
            "FUNCTION" | "AGGREGATE" => return Some("stored functions"),
            "TRIGGER" => return Some("triggers"),
            "EVENT" => return Some("events"),
            "TABLE" | "TEMPORARY" | "VIEW" | "INDEX" | "UNIQUE" | "FULLTEXT" | "SPATIAL"
            | "DATABASE" | "SCHEMA" | "USER" | "ROLE" | "TABLESPACE" | "SERVER" | "OR" => {
                return None;
            }
            _ => {}
        }
    }
    None
}
