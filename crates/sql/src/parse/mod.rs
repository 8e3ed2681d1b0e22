//! Parsing: a pre-pass for the MySQL forms `sqlparser` misses, then `sqlparser`.
//!
//! [`parse`] turns a query text into [`Parsed`] statements in three steps:
//!
//! 1. **Pre-pass** (`scan.rs`): one linear scan over the text that knows quoted
//!    strings (`'..'`, `".."`, `` `..` `` with backslash escapes and doubled quotes) and
//!    comments, and nothing else of SQL. It
//!    - splits the text at `;` into statements;
//!    - drops comments (`/* */`, `-- `, `#`), optimizer hints `/*+ .. */`, TiDB's
//!      `/*T! .. */` and MariaDB's `/*M! .. */`; opens version comments `/*! .. */`
//!      and `/*!NNNNN .. */` (NNNNN at most [`scan::MYSQL_VERSION_ID`]) by dropping their
//!      markers and keeping their body, as MySQL executes it;
//!    - rewrites each `?` placeholder to `?1`, `?2`, ... left to right, which
//!      sqlparser's MySQL tokenizer reads as `Value::Placeholder("?N")`, so that the
//!      binder numbers parameters by position without counting;
//!    - rewrites `:=` to `=` in SET statements (`SET @a := 1`), which sqlparser rejects;
//!    - rewrites `LOCK IN SHARE MODE` to `FOR SHARE`, which sqlparser rejects;
//!    - rewrites the infix operator `a MOD b` to `a % b` (sqlparser knows only the
//!      function `MOD(a, b)`);
//!    - rewrites the bit literal `0b101` to `b'101'` (sqlparser reads `0b101` as the
//!      number 0 with the alias `b101`);
//!    - rewrites MySQL's composite units (`HOUR_MINUTE`, ..., which sqlparser does not
//!      know): `EXTRACT(HOUR_MINUTE FROM x)` to `` `EXTRACT`(HOUR_MINUTE, x) ``, which
//!      the binder reads as EXTRACT, and an INTERVAL's `HOUR_MINUTE` to `HOUR TO
//!      MINUTE` (`SECONDS TO MICROSECOND` for SECOND_MICROSECOND);
//!    - drops `FROM FIRST` before `OVER` (`NTH_VALUE(x, 2) FROM FIRST OVER w`, which
//!      sqlparser rejects and which is NTH_VALUE's only behaviour), and drops `FROM
//!      LAST` there too but marks the statement, which then fails with 1235 as in
//!      MySQL.
//!
//!    Invariants: text inside quotes is never changed; placeholders are numbered
//!    left to right in text order, 1..=`param_count`, per statement; the scan never
//!    fails (an unterminated string or comment is left for sqlparser to report).
//! 2. **Special forms** (`special.rs`): statements that sqlparser rejects or
//!    represents without what Tarn needs are recognised by their leading words and
//!    parsed with sqlparser's token-level helpers into Tarn's own [`Statement`]
//!    variants (see each variant).
//! 3. **sqlparser** with its MySQL dialect parses everything else into
//!    [`Statement::Sql`]. A few of its results are recognised MySQL that Tarn rejects
//!    with error 1235 (`:=` outside SET, XA, SHOW forms sqlparser does not know). One
//!    synonym is renamed token by token first: `CREATE SCHEMA` to `CREATE DATABASE`
//!    (so that it takes a character set and collation); in an UPDATE, the first
//!    comma of a table list `UPDATE t1, t2 SET ..` becomes FROM
//!    (`special::rewrite_update_table_list`), as sqlparser reads only joins there;
//!    the modifiers `LOW_PRIORITY`, `QUICK` and `IGNORE` after UPDATE and DELETE are
//!    taken out (`special::take_dml_modifiers`; sqlparser reads the first as a table
//!    name) and the parsed statement is marked when IGNORE was there
//!    ([`update_ignores`], [`delete_ignores`]);
//!    `&&` becomes AND, and `||` OR outside PIPES_AS_CONCAT;
//!    each `BINARY expr` operator becomes `CAST(expr AS BINARY)` of its operand
//!    alone, as BINARY binds tighter than any other operator, and `!expr` becomes
//!    `(NOT expr)` (`prefix_operators.rs`);
//!    JSON_VALUE's `.. ON EMPTY` / `.. ON ERROR` clauses become arguments of an
//!    internal call (`json_value.rs`);
//!    and a SELECT's `INTO @a, ..` clause is taken out of the tokens (`into.rs`), the
//!    rest parsed, and the two make [`Statement::SelectInto`]. Also token by token
//!    (`special.rs`): character set introducers (`_utf8mb4'x'`, `_binary 0x41`)
//!    become plain literals (`special::rewrite_introducers`); in CREATE / ALTER,
//!    an index's `VISIBLE` is dropped and `INVISIBLE` refused
//!    (`special::take_index_visibility`), and a database's `DEFAULT ENCRYPTION='N'`
//!    dropped (`special::take_database_encryption`).
//!
//! ## Where each SHOW form lands
//!
//! | MySQL                                               | result                                           |
//! |-----------------------------------------------------|--------------------------------------------------|
//! | `SHOW DATABASES / SCHEMAS [LIKE]`                    | `Sql(ShowDatabases / ShowSchemas { show_options })` (`filter_position: Some(Suffix(Like))`) |
//! | `SHOW [FULL] TABLES [FROM db] [LIKE / WHERE]`        | `Sql(ShowTables { full, show_options })` (`show_in.parent_name` = db) |
//! | `SHOW [FULL] COLUMNS / FIELDS FROM t [FROM db] [LIKE / WHERE]` | `Sql(ShowColumns { full, show_options })` (`show_in.parent_name` = `db.t`) |
//! | `SHOW CREATE TABLE t / VIEW v`                       | `Sql(ShowCreate { obj_type, obj_name })`          |
//! | `SHOW [GLOBAL / SESSION] VARIABLES [LIKE / WHERE]`   | `Sql(ShowVariables { filter, global, session })` |
//! | `SHOW [GLOBAL / SESSION] STATUS [LIKE / WHERE]`      | `Sql(ShowStatus { filter, global, session })`    |
//! | `SHOW [FULL] PROCESSLIST`                            | `Sql(ShowProcessList { full })`                  |
//! | `SHOW CHARSET / CHARACTER SET [LIKE / WHERE]`        | `Sql(ShowCharset(ShowCharset { filter, .. }))`   |
//! | `SHOW COLLATION [LIKE / WHERE]`                      | `Sql(ShowCollation { filter })`                  |
//! | `SHOW TABLE STATUS [FROM db] [LIKE / WHERE]`         | [`Statement::ShowTableStatus`]                   |
//! | `SHOW INDEX / INDEXES / KEYS FROM t [FROM db]`       | [`Statement::ShowIndex`]                         |
//! | `SHOW WARNINGS / ERRORS [LIMIT [o,] n]`              | [`Statement::ShowWarnings`]                      |
//! | `SHOW COUNT(*) WARNINGS / ERRORS`                    | [`Statement::ShowWarningCount`]                  |
//! | `SHOW ENGINE name STATUS`                            | [`Statement::ShowEngineStatus`]                  |
//! | `SHOW [STORAGE] ENGINES`                             | [`Statement::ShowEngines`]                       |
//! | `SHOW CREATE DATABASE / SCHEMA d`                    | [`Statement::ShowCreateDatabase`]                |
//! | `SHOW GRANTS [FOR user]`                             | [`Statement::Account`]                           |
//! | `SHOW TRIGGERS / EVENTS [FROM db] [LIKE / WHERE]`    | [`Statement::ShowStoredObjects`] (no rows)        |
//! | `SHOW PROCEDURE / FUNCTION STATUS [LIKE / WHERE]`    | [`Statement::ShowStoredObjects`] (no rows)        |
//! | `SHOW CREATE PROCEDURE / FUNCTION / TRIGGER / EVENT x` | `Sql(ShowCreate { obj_type, obj_name })`: not found |
//! | `SHOW MASTER STATUS` / `SHOW BINARY LOG STATUS`      | [`Statement::ShowBinaryLogStatus`] (no rows)     |
//! | `SHOW SLAVE / REPLICA STATUS [FOR CHANNEL c]`        | [`Statement::ShowReplicaStatus`] (no rows)       |
//! | any other SHOW                                       | error 1235                                       |
//!
//! Other statements the session handles, all `Statement::Sql`: `KILL [QUERY |
//! CONNECTION] n` is `Kill { modifier, id }`; `EXPLAIN [ANALYZE] [FORMAT=..] stmt` is
//! `Explain`, `EXPLAIN t` / `DESCRIBE t` is `ExplainTable`; `USE db` is `Use`;
//! `TRUNCATE [TABLE] t` is `Truncate`; `RENAME TABLE` is `RenameTable`; `SET NAMES`
//! is `Set(SetNames / SetNamesDefault)`; `SET [GLOBAL | SESSION] x = v` is
//! `Set(SingleAssignment { scope, variable, values })` (`@@session.x` arrives as the
//! name parts `["@@session", "x"]`, `SET x = DEFAULT` as the identifier `DEFAULT`),
//! several assignments as `Set(MultipleAssignments)`; `SAVEPOINT` / `ROLLBACK TO` /
//! `RELEASE SAVEPOINT` are `Savepoint` / `Rollback { savepoint }` /
//! `ReleaseSavepoint`; `COMMIT [WORK]`, `ROLLBACK [WORK]` are `Commit` / `Rollback`;
//! `UNLOCK TABLES` is `UnlockTables`. `LOCK TABLE[S] ..` is Tarn's
//! [`Statement::LockTables`] (sqlparser's takes no `db.t`), every `ALTER TABLE` is
//! `AlterTable` parsed by `special.rs` (it adds `RENAME INDEX`, `RENAME t2` and
//! `DROP KEY` to sqlparser's operations).
//!
//! ## Errors
//!
//! A syntax error is MySQL's 1064 with the statement's (pre-passed) text from the
//! failing token on; an empty text is 1065; a text longer than
//! [`SQL_TEXT_BYTES_MAX`] is 1153; recognised but unsupported forms are 1235 (CREATE
//! PROCEDURE / FUNCTION / TRIGGER / EVENT among them: Tarn has no stored programs). Parsing
//! never panics: sqlparser's recursion limit (50) bounds nesting by parentheses,
//! subqueries and prefix operators; `check_depth` bounds from the tokens the chains
//! sqlparser builds without recursing (`a + b + ..`, UNION chains) to
//! [`SQL_EXPRESSION_DEPTH_MAX`] and joins to [`SQL_JOINS_MAX`] (error 1116), so a
//! parsed tree is never deeper than about `50 + SQL_EXPRESSION_DEPTH_MAX` and can be
//! dropped and walked recursively; the pre-pass is a single forward scan.

mod accounts;
mod into;
mod json_value;
mod load;
mod prefix_operators;
mod scan;
mod special;
#[cfg(test)]
mod tests;

use sqlparser::ast;
use sqlparser::dialect::MySqlDialect;
use sqlparser::keywords::Keyword;
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::{Token, TokenWithSpan, Tokenizer};
use tarn_common::limits::{SQL_EXPRESSION_DEPTH_MAX, SQL_JOINS_MAX, SQL_TEXT_BYTES_MAX};
use tarn_common::settings::IsolationLevel;
use tarn_common::{Error, Result};

pub(crate) use into::misplaced as misplaced_into;
pub(crate) use json_value::JSON_VALUE_WITH_RESPONSES;
pub use load::{LoadData, LoadDuplicates, LoadTarget};

pub use scan::MYSQL_VERSION_ID;
pub(crate) use special::table_option_key;

/// One parsed statement.
#[derive(Clone, Debug, PartialEq)]
pub struct Parsed {
    pub statement: Statement,
    /// The statement's own text after the pre-pass (for SHOW PROCESSLIST and view
    /// definitions): comments dropped, placeholders numbered, no trailing `;`.
    pub text: String,
    /// How many `?` parameters it has; they are numbered 1..=param_count left to
    /// right and appear in the tree as `Value::Placeholder("?N")`.
    pub param_count: usize,
}

/// Which transactions `SET [GLOBAL | SESSION] TRANSACTION` applies to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TransactionScope {
    /// No keyword: only the session's next transaction.
    Next,
    /// `SESSION` (or `LOCAL`): the session's later transactions.
    Session,
    /// `GLOBAL`: sessions that start from now on.
    Global,
}

// The variants holding expressions are large, but a statement is built once per query.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq)]
pub enum Statement {
    /// Anything sqlparser represents faithfully.
    Sql(Box<ast::Statement>),
    /// `START TRANSACTION [WITH CONSISTENT SNAPSHOT | READ ONLY | READ WRITE], ..`,
    /// `BEGIN [WORK]`. `read_only` is `None` when no access mode was given.
    StartTransaction {
        read_only: Option<bool>,
        consistent_snapshot: bool,
    },
    /// `SET [GLOBAL | SESSION] TRANSACTION {ISOLATION LEVEL l | READ ONLY | READ
    /// WRITE}, ..`
    SetTransaction {
        scope: TransactionScope,
        isolation: Option<IsolationLevel>,
        read_only: Option<bool>,
    },
    /// `SET CHARACTER SET cs` / `SET CHARSET cs`; `None` for `DEFAULT`.
    SetCharacterSet { charset: Option<String> },
    /// `SHOW TABLE STATUS [{FROM | IN} db] [LIKE 'p' | WHERE e]`
    ShowTableStatus {
        database: Option<String>,
        filter: Option<ShowFilter>,
    },
    /// `SHOW [EXTENDED] {INDEX | INDEXES | KEYS} {FROM | IN} [db.]t [{FROM | IN} db]
    /// [WHERE e]`
    ShowIndex {
        table: String,
        database: Option<String>,
        filter: Option<ast::Expr>,
    },
    /// `SHOW WARNINGS [LIMIT [offset,] row_count]`, or `SHOW ERRORS ..` (errors only).
    ShowWarnings {
        errors_only: bool,
        offset: u64,
        row_count: Option<u64>,
    },
    /// `SHOW COUNT(*) WARNINGS` / `SHOW COUNT(*) ERRORS`
    ShowWarningCount { errors_only: bool },
    /// `SHOW ENGINE name STATUS` (`TARN`, `INNODB`, ...; as written).
    ShowEngineStatus { engine: String },
    /// `SHOW [STORAGE] ENGINES`
    ShowEngines,
    /// `SHOW CREATE {DATABASE | SCHEMA} [IF NOT EXISTS] d`
    ShowCreateDatabase { name: String, if_not_exists: bool },
    /// `ANALYZE [NO_WRITE_TO_BINLOG | LOCAL] TABLE t [, t2 ..]`
    AnalyzeTable { tables: Vec<ast::ObjectName> },
    /// `DO expr [, expr ..]`: evaluates and discards.
    Do { exprs: Vec<ast::Expr> },
    /// An account statement: CREATE / DROP / ALTER USER, SET PASSWORD, GRANT,
    /// REVOKE, SHOW GRANTS, FLUSH PRIVILEGES (`accounts.rs`).
    Account(crate::accounts::AccountStatement),
    /// `FLUSH [LOCAL | NO_WRITE_TO_BINLOG] TABLES [t, ..] [WITH READ LOCK]`. Tarn has
    /// no table cache to flush; WITH READ LOCK takes the global read lock
    /// (`table_locks.rs`).
    FlushTables { with_read_lock: bool },
    /// `FLUSH [LOCAL | NO_WRITE_TO_BINLOG] [BINARY | ENGINE | ERROR | GENERAL | RELAY
    /// | SLOW] LOGS`: Tarn's one log is the redo log, which this forces to disk.
    FlushLogs,
    /// `FLUSH [LOCAL | NO_WRITE_TO_BINLOG] HOSTS`: Tarn keeps no host cache (no
    /// host is ever blocked for failed connects), so there is nothing to clear.
    FlushHosts,
    /// `SHOW MASTER STATUS` / `SHOW BINARY LOG STATUS`: Tarn writes no binary log,
    /// so MySQL's columns and no row, as MySQL with `log_bin` off answers.
    ShowBinaryLogStatus,
    /// `SHOW {BINARY | MASTER} LOGS`: error 1381, as MySQL with `log_bin` off.
    ShowBinaryLogs,
    /// `SHOW {SLAVE | REPLICA} STATUS [FOR CHANNEL c]`: Tarn does not replicate, so
    /// MySQL's columns (the old `Slave_`/`Master_` names when `slave`) and no row,
    /// as MySQL answers on a server that is no replica.
    ShowReplicaStatus { slave: bool },
    /// `SHUTDOWN`: asks the server to stop, as SIGTERM does (global CREATE USER, which
    /// stands for MySQL's SHUTDOWN privilege).
    Shutdown,
    /// `SHOW TRIGGERS`, `SHOW EVENTS`, `SHOW PROCEDURE STATUS`, `SHOW FUNCTION
    /// STATUS`: Tarn has none of these objects, so each is MySQL's columns and no
    /// rows.
    ShowStoredObjects {
        kind: StoredObjectKind,
        database: Option<String>,
        filter: Option<ShowFilter>,
    },
    /// `DROP {PROCEDURE | FUNCTION | TRIGGER | EVENT} [IF EXISTS] name`: Tarn has no
    /// stored programs, so MySQL's not-found error (1305, 1360, 1539), or with IF
    /// EXISTS its note.
    DropStoredObject {
        kind: StoredObjectKind,
        if_exists: bool,
        name: ast::ObjectName,
    },
    /// `ALTER {DATABASE | SCHEMA} [d] [DEFAULT] CHARACTER SET cs [COLLATE c] ..`:
    /// Tarn stores all text as utf8mb4, so only utf8mb4 and its collations are
    /// accepted, and change nothing (`ddl::alter_database`). `READ ONLY = 1` is
    /// refused.
    AlterDatabase {
        name: Option<String>,
        charset: Option<String>,
        collation: Option<String>,
        read_only: bool,
    },
    /// `ALTER TABLE t {DISABLE | ENABLE} KEYS`: as in InnoDB, accepted without
    /// effect once `t` is found (indexes are always maintained).
    AlterTableKeys {
        table: ast::ObjectName,
        enable: bool,
    },
    /// `LOAD DATA [LOCAL] INFILE ...` (`load.rs`).
    LoadData(Box<LoadData>),
    /// `LOCK {TABLE | TABLES} t [[AS] alias] {READ [LOCAL] | [LOW_PRIORITY] WRITE}, ..`
    /// (sqlparser's takes no `db.t`): each table with whether it is locked for WRITE
    /// (see `table_locks.rs`).
    LockTables {
        tables: Vec<(ast::ObjectName, bool)>,
    },
    /// `OPTIMIZE / CHECK / CHECKSUM / REPAIR TABLE t [, t ..] [options]`; `quick` is
    /// true when the options name QUICK (what CHECKSUM TABLE answers depends on it).
    TableMaintenance {
        op: Maintenance,
        tables: Vec<ast::ObjectName>,
        quick: bool,
    },
    /// `SELECT .. INTO @a, @b ..`: the query (without its INTO clause, which may
    /// follow the select list or end the statement, `into.rs`) and the user
    /// variables it sets, by name without `@`, lower-cased.
    SelectInto {
        query: Box<ast::Statement>,
        variables: Vec<String>,
    },
    /// `PREPARE name FROM {'text' | @variable}` (SQL-level prepared statements;
    /// `name` as written, compared without case).
    Prepare { name: String, source: PrepareSource },
    /// `EXECUTE name [USING @a, @b ..]`: the user variables by name without `@`.
    ExecutePrepared { name: String, using: Vec<String> },
    /// `{DEALLOCATE | DROP} PREPARE name`
    DeallocatePrepare { name: String },
    /// A text with only comments (and whitespace).
    Empty,
}

/// Where `PREPARE` takes its statement's text from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PrepareSource {
    /// A string literal.
    Text(String),
    /// A user variable (name without `@`, lower-cased), read when PREPARE runs.
    Variable(String),
}

/// The table maintenance statement of [`Statement::TableMaintenance`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Maintenance {
    Optimize,
    Check,
    Checksum,
    Repair,
}

/// What `SHOW TRIGGERS / EVENTS / PROCEDURE STATUS / FUNCTION STATUS` lists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StoredObjectKind {
    Triggers,
    Events,
    Procedures,
    Functions,
}

/// The filter of a SHOW statement.
// An expression is large, but a statement is built once per query.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq)]
pub enum ShowFilter {
    Like(String),
    Where(ast::Expr),
}

/// How a client's text is read: the `sql_mode` flags that change tokens. Text Tarn
/// stored itself (views, CHECK and generated-column expressions, defaults) is always
/// read with the default, since it is stored in canonical form (identifiers in
/// backquotes).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ParseMode {
    /// ANSI_QUOTES: `"x"` is an identifier, not a string.
    pub ansi_quotes: bool,
    /// `||` is OR (a client's text outside PIPES_AS_CONCAT): the pre-pass makes it
    /// the keyword, with OR's precedence, where sqlparser reads a concatenation
    /// binding tighter than AND (`1 || 0 AND 0`, MySQL's `1 OR (0 AND 0)`, was read
    /// as `(1 OR 0) AND 0`). False leaves `||` to the binder, which reads it by the
    /// session's sql_mode (PIPES_AS_CONCAT, or stored text).
    pub pipes_are_or: bool,
}

/// Splits `sql` into statements (`;`-separated, aware of quotes and comments; a
/// trailing `;` is fine) and parses each.
pub fn parse(sql: &str) -> Result<Vec<Parsed>> {
    parse_in(sql, ParseMode::default())
}

/// [`parse`] with `mode`.
pub fn parse_in(sql: &str, mode: ParseMode) -> Result<Vec<Parsed>> {
    parse_each_in(sql, mode).into_iter().collect()
}

/// Splits `sql` into statements and parses each on its own: a statement with a syntax
/// error is an `Err` in its place, and the statements before it still parse (a script
/// runs up to its first bad statement, as the mysql client runs one).
pub fn parse_each(sql: &str) -> Vec<Result<Parsed>> {
    parse_each_in(sql, ParseMode::default())
}

/// [`parse_each`] with `mode`.
pub fn parse_each_in(sql: &str, mode: ParseMode) -> Vec<Result<Parsed>> {
    if sql.len() > SQL_TEXT_BYTES_MAX {
        return vec![Err(Error::sql(
            1153,
            "08S01",
            "Got a packet bigger than 'max_allowed_packet' bytes",
        ))];
    }
    let pieces = scan::split(sql);
    let mut parsed: Vec<Result<Parsed>> = pieces
        .into_iter()
        .filter(|p| !p.text.is_empty())
        .map(|piece| parse_piece(piece, mode))
        .collect();
    if parsed.is_empty() {
        if sql.trim().is_empty() {
            return vec![Err(Error::sql(1065, "42000", "Query was empty"))];
        }
        parsed.push(Ok(Parsed {
            statement: Statement::Empty,
            text: String::new(),
            param_count: 0,
        }));
    }
    parsed
}

/// The statements of a batch (COM_QUERY's multi-statements, a script), each parsed
/// when its turn comes, as the session's `sql_mode` reads text then: a `SET
/// sql_mode` in the batch changes how the statements after it read (ANSI_QUOTES), as
/// in MySQL, which parses each statement when it runs it. The split into statements
/// does not depend on the mode (double quotes delimit either way), so it is done
/// once, and each statement is parsed once.
pub struct Batch {
    pieces: Vec<Option<scan::Piece>>,
    /// What a batch with no statement to split off answers (a text too long, an
    /// empty query, only comments).
    whole: Option<Result<Parsed>>,
    next: usize,
}

impl Batch {
    pub fn new(sql: &str) -> Batch {
        let pieces: Vec<scan::Piece> = if sql.len() > SQL_TEXT_BYTES_MAX {
            Vec::new()
        } else {
            scan::split(sql)
                .into_iter()
                .filter(|p| !p.text.is_empty())
                .collect()
        };
        let whole = pieces.is_empty().then(|| {
            parse_each(sql)
                .into_iter()
                .next()
                .unwrap_or_else(|| Err(Error::sql(1065, "42000", "Query was empty")))
        });
        Batch {
            pieces: pieces.into_iter().map(Some).collect(),
            whole,
            next: 0,
        }
    }

    /// The number of statements.
    pub fn len(&self) -> usize {
        self.pieces.len().max(1)
    }

    pub fn is_empty(&self) -> bool {
        false
    }

    /// The text of statement `i` (empty once handed out).
    pub fn text(&self, i: usize) -> &str {
        match self.pieces.get(i) {
            Some(Some(piece)) => &piece.text,
            _ => "",
        }
    }

    /// The next statement, parsed with `mode` (the session's now).
    pub fn next(&mut self, mode: ParseMode) -> Option<Result<Parsed>> {
        if let Some(whole) = self.whole.take() {
            return Some(whole);
        }
        let piece = self.pieces.get_mut(self.next)?.take()?;
        self.next += 1;
        Some(parse_piece(piece, mode))
    }
}

/// Exactly one statement (a second one is an error): what COM_STMT_PREPARE uses.
pub fn parse_one(sql: &str) -> Result<Parsed> {
    parse_one_in(sql, ParseMode::default())
}

/// [`parse_one`] with `mode`.
pub fn parse_one_in(sql: &str, mode: ParseMode) -> Result<Parsed> {
    let mut parsed = parse_in(sql, mode)?;
    if parsed.len() > 1 {
        let second = &parsed[1].text;
        return Err(syntax_error_near(second, 1));
    }
    Ok(parsed.swap_remove(0))
}

fn parse_piece(piece: scan::Piece, mode: ParseMode) -> Result<Parsed> {
    if piece.assignment_outside_set {
        return Err(unsupported("the ':=' assignment outside SET"));
    }
    if piece.nth_value_from_last {
        return Err(unsupported("FROM LAST"));
    }
    let statement = parse_statement(&piece.text, mode)?;
    Ok(Parsed {
        statement,
        text: piece.text,
        param_count: piece.param_count,
    })
}

fn parse_statement(text: &str, mode: ParseMode) -> Result<Statement> {
    let dialect = MySqlDialect {};
    let mut tokens = Tokenizer::new(&dialect, text)
        .with_unescape(true)
        .tokenize_with_location()
        .map_err(|e| syntax_error(text, &e.to_string()))?;
    if mode.ansi_quotes {
        // A backquoted identifier from here on: the statement's AST, and any text
        // rendered from it (a view's), name it as MySQL's canonical form does.
        for t in &mut tokens {
            if let Token::DoubleQuotedString(name) = &mut t.token {
                t.token = Token::Word(sqlparser::tokenizer::Word {
                    value: std::mem::take(name),
                    quote_style: Some('`'),
                    keyword: sqlparser::keywords::Keyword::NoKeyword,
                });
            }
        }
    }
    check_depth(&tokens)?;
    if let Some(what) = special::created_stored_program(&tokens) {
        return Err(unsupported(what));
    }
    let words = special::leading_words(&tokens, 4);
    let form = if special::is_alter_table_keys(&tokens) {
        Some(special::Form::AlterTableKeys)
    } else {
        special::classify(&words)
    };
    if form == Some(special::Form::Xa) {
        return Err(unsupported("XA transactions"));
    }
    let explained = matches!(
        words.first().map(String::as_str),
        Some("EXPLAIN" | "DESCRIBE" | "DESC")
    );
    let update_at = match words.as_slice() {
        [first, ..] if first == "UPDATE" => Some(0),
        [_, second, ..] if explained && second == "UPDATE" => Some(1),
        _ => None,
    };
    let delete_at = match words.as_slice() {
        [first, ..] if first == "DELETE" => Some(0),
        [_, second, ..] if explained && second == "DELETE" => Some(1),
        _ => None,
    };
    let ignore = match update_at.or(delete_at) {
        Some(verb_at) => special::take_dml_modifiers(&mut tokens, verb_at),
        None => false,
    };
    if let Some(update_at) = update_at {
        special::rewrite_update_table_list(&mut tokens, update_at).map_err(|at| {
            let offset = byte_offset(text, at.line as usize, at.column as usize);
            syntax_error_near(&text[offset.unwrap_or(text.len())..], at.line as usize)
        })?;
    }
    if words.len() >= 2 && words[0] == "CREATE" && words[1] == "SCHEMA" {
        // sqlparser's CREATE SCHEMA takes no character set or collation; MySQL's is
        // CREATE DATABASE.
        if let Some(t) = tokens
            .iter_mut()
            .find(|t| matches!(&t.token, Token::Word(w) if w.value.eq_ignore_ascii_case("SCHEMA")))
        {
            t.token = Token::make_keyword("DATABASE");
        }
    }
    special::rewrite_introducers(&mut tokens)?;
    let create_or_alter = matches!(words.first().map(String::as_str), Some("CREATE" | "ALTER"));
    if create_or_alter {
        if matches!(
            words.get(1).map(String::as_str),
            Some("DATABASE" | "SCHEMA")
        ) {
            special::take_database_encryption(&mut tokens)?;
        } else {
            special::take_index_visibility(&mut tokens)?;
        }
    }
    // `&&` is MySQL's AND; sqlparser reads it as PostgreSQL's overlap operator,
    // which binds tighter than `=` (`a = 1 && b = 2` was `a = (1 && b) = 2`). `||`
    // is OR in a client's text unless PIPES_AS_CONCAT (see `ParseMode`).
    for t in &mut tokens {
        if t.token == Token::Overlap {
            t.token = Token::make_keyword("AND");
        } else if t.token == Token::StringConcat && mode.pipes_are_or {
            t.token = Token::make_keyword("OR");
        }
    }
    if let Some(from) = prefix_operators::start(&words, &tokens) {
        prefix_operators::rewrite(&mut tokens, from);
    }
    json_value::rewrite(&mut tokens).map_err(|at| {
        let offset = byte_offset(text, at.line as usize, at.column as usize);
        syntax_error_near(
            &text[offset.unwrap_or(text.len())..],
            at.line.max(1) as usize,
        )
    })?;
    let selects = matches!(
        words.first().map(String::as_str),
        Some("SELECT" | "WITH" | "(")
    );
    let into = if form.is_none() && selects {
        let near = |t: &TokenWithSpan| {
            let at = t.span.start;
            let offset = byte_offset(text, at.line as usize, at.column as usize);
            syntax_error_near(
                &text[offset.unwrap_or(text.len())..],
                at.line.max(1) as usize,
            )
        };
        into::take_into(&mut tokens, &near)?
    } else {
        None
    };
    let mut parser = Parser::new(&dialect).with_tokens_with_locations(tokens);
    if let Some(form) = form {
        return special::parse(form, &mut parser).map_err(|e| parser_error(text, e));
    }
    let mut statement = parser
        .parse_statement()
        .and_then(|s| special::expect_end(&parser).map(|()| s))
        .map_err(|e| parser_error(text, e))?;
    if ignore {
        mark_ignore(&mut statement);
    }
    check_supported(&statement, text)?;
    match into {
        Some(variables) if matches!(statement, ast::Statement::Query(_)) => {
            Ok(Statement::SelectInto {
                query: Box::new(statement),
                variables,
            })
        }
        Some(_) => Err(syntax_error_near(text, 1)),
        None => Ok(Statement::Sql(Box::new(statement))),
    }
}

/// The hint that marks a DELETE as `DELETE IGNORE` ([`delete_ignores`]). The
/// pre-pass drops every optimizer hint a statement is written with, so only
/// [`mark_ignore`] puts one here.
const IGNORE_HINT_PREFIX: &str = "tarn_ignore";

/// Marks the UPDATE or DELETE (maybe under EXPLAIN) that was written with IGNORE:
/// sqlparser's UPDATE has a conflict clause, whose `OR IGNORE` (SQLite's UPDATE OR
/// IGNORE: skip rows that would break a constraint) means what MySQL's IGNORE does;
/// its DELETE has no such field, so a hint of Tarn's own stands for it.
fn mark_ignore(statement: &mut ast::Statement) {
    match statement {
        ast::Statement::Explain { statement, .. } => mark_ignore(statement),
        ast::Statement::Update(update) => update.or = Some(ast::SqliteOnConflict::Ignore),
        ast::Statement::Delete(delete) => delete.optimizer_hints.push(ast::OptimizerHint {
            prefix: IGNORE_HINT_PREFIX.into(),
            text: "IGNORE".into(),
            style: ast::OptimizerHintStyle::MultiLine,
        }),
        _ => {}
    }
}

/// Whether an UPDATE was written `UPDATE [LOW_PRIORITY] IGNORE`.
pub(crate) fn update_ignores(update: &ast::Update) -> bool {
    matches!(update.or, Some(ast::SqliteOnConflict::Ignore))
}

/// Whether a DELETE was written `DELETE [LOW_PRIORITY] [QUICK] IGNORE`.
pub(crate) fn delete_ignores(delete: &ast::Delete) -> bool {
    delete
        .optimizer_hints
        .iter()
        .any(|h| h.prefix == IGNORE_HINT_PREFIX)
}

/// Bounds the depth of the tree sqlparser will build (see
/// [`SQL_EXPRESSION_DEPTH_MAX`]) from the tokens alone. Every token that may join two
/// operands (an operator or keyword) counts towards the chain of its parenthesis
/// level; a comma or WHEN / THEN / ELSE starts a sibling, which resets its level's
/// count. The depth bound is the sum of the open levels' counts plus the open
/// parentheses. Set operators are never reset: a chain of UNIONs is one deep tree
/// whatever commas its SELECT lists hold.
fn check_depth(tokens: &[TokenWithSpan]) -> Result<()> {
    let too_deep = || {
        Error::sql(
            1064,
            "42000",
            format!(
                "You have an error in your SQL syntax; the statement chains more than \
                 {SQL_EXPRESSION_DEPTH_MAX} operators"
            ),
        )
    };
    // Counts per open parenthesis level, and their sum.
    let mut levels: Vec<usize> = vec![0];
    let mut sum = 0;
    let mut set_operations = 0;
    let mut joins = 0;
    for token in tokens {
        match &token.token {
            Token::Whitespace(_)
            | Token::Number(..)
            | Token::SingleQuotedString(_)
            | Token::DoubleQuotedString(_)
            | Token::HexStringLiteral(_)
            | Token::Placeholder(_) => {}
            Token::LParen => levels.push(0),
            Token::RParen => {
                if levels.len() > 1 {
                    sum -= levels.pop().unwrap_or(0);
                }
            }
            Token::Comma => {
                let last = levels.last_mut().expect("level 0 is never popped");
                sum -= *last;
                *last = 0;
            }
            Token::Word(w) if w.quote_style.is_some() || w.keyword == Keyword::NoKeyword => {}
            Token::Word(w)
                if matches!(w.keyword, Keyword::WHEN | Keyword::THEN | Keyword::ELSE) =>
            {
                let last = levels.last_mut().expect("level 0 is never popped");
                sum -= *last;
                *last = 0;
            }
            other => {
                if let Token::Word(w) = other {
                    match w.keyword {
                        Keyword::UNION | Keyword::EXCEPT | Keyword::INTERSECT => {
                            set_operations += 1;
                        }
                        Keyword::JOIN | Keyword::STRAIGHT_JOIN => joins += 1,
                        _ => {}
                    }
                }
                *levels.last_mut().expect("level 0 is never popped") += 1;
                sum += 1;
            }
        }
        if sum + levels.len() > SQL_EXPRESSION_DEPTH_MAX
            || set_operations > SQL_EXPRESSION_DEPTH_MAX
        {
            return Err(too_deep());
        }
        if joins > SQL_JOINS_MAX {
            return Err(Error::sql(
                1116,
                "HY000",
                format!("Too many tables; Tarn can only use {SQL_JOINS_MAX} tables in a join"),
            ));
        }
    }
    Ok(())
}

/// Rejects what sqlparser accepts but Tarn does not (yet) run, or what sqlparser
/// takes for something else.
fn check_supported(statement: &ast::Statement, text: &str) -> Result<()> {
    match statement {
        ast::Statement::ShowVariable { .. } => {
            // sqlparser's catch-all for `SHOW <words>`: not a form MySQL or Tarn has.
            let what: String = text.chars().take(64).collect();
            Err(unsupported(&what))
        }
        ast::Statement::Update(ast::Update {
            from: Some(ast::UpdateTableFromKind::AfterSet(_)),
            ..
        }) => Err(unsupported("UPDATE ... SET ... FROM")),
        // An INTO sqlparser kept (in a parenthesised block): not where MySQL takes it.
        ast::Statement::Query(query) if has_select_into(query) => Err(into::misplaced()),
        // `WITH ... UPDATE` and `WITH ... DELETE` are MySQL's, but a CTE there is
        // useful only to a multi-table form, which Tarn does not have either.
        ast::Statement::Query(query) => match query.body.as_ref() {
            ast::SetExpr::Update(_) | ast::SetExpr::Delete(_) => {
                Err(unsupported("WITH before UPDATE or DELETE"))
            }
            // MySQL's grammar has `INSERT INTO t WITH ... SELECT`, not this.
            ast::SetExpr::Insert(_) => Err(Error::sql(
                1064,
                "42000",
                "You have an error in your SQL syntax; WITH cannot precede INSERT: \
                 write INSERT INTO t WITH ... SELECT ...",
            )),
            _ => Ok(()),
        },
        _ => Ok(()),
    }
}

/// True if a SELECT of the query (outside subqueries) has an INTO clause. Walks set
/// operations with an explicit stack: a long UNION chain is a deep tree.
fn has_select_into(query: &ast::Query) -> bool {
    let mut stack = vec![query.body.as_ref()];
    while let Some(set_expr) = stack.pop() {
        match set_expr {
            ast::SetExpr::Select(select) if select.into.is_some() => return true,
            ast::SetExpr::Query(query) => stack.push(query.body.as_ref()),
            ast::SetExpr::SetOperation { left, right, .. } => {
                stack.push(left.as_ref());
                stack.push(right.as_ref());
            }
            _ => {}
        }
    }
    false
}

/// "This version of Tarn doesn't yet support '<what>'" (MySQL's 1235).
pub(super) fn unsupported(what: &str) -> Error {
    Error::sql(
        1235,
        "42000",
        format!("This version of Tarn doesn't yet support '{what}'"),
    )
}

fn parser_error(text: &str, error: ParserError) -> Error {
    match error {
        ParserError::RecursionLimitExceeded => Error::sql(
            1064,
            "42000",
            "You have an error in your SQL syntax; the statement nests expressions or \
             subqueries too deeply",
        ),
        ParserError::ParserError(message) | ParserError::TokenizerError(message) => {
            syntax_error(text, &message)
        }
    }
}

/// MySQL's 1064 for a sqlparser message, near the position it names ("at Line: l,
/// Column: c", 1-based, columns in characters).
fn syntax_error(text: &str, message: &str) -> Error {
    let Some(at) = message.rfind(" at Line: ") else {
        if message.ends_with("found: EOF") {
            // The end of the text has no location; MySQL says near '' on the last line.
            return syntax_error_near("", text.lines().count().max(1));
        }
        return Error::sql(
            1064,
            "42000",
            format!("You have an error in your SQL syntax: {message}"),
        );
    };
    let mut numbers = message[at + " at Line: ".len()..]
        .split(", Column: ")
        .map(|n| n.trim().parse::<usize>().unwrap_or(0));
    let line = numbers.next().unwrap_or(0);
    let column = numbers.next().unwrap_or(0);
    let offset = byte_offset(text, line, column).unwrap_or(text.len());
    syntax_error_near(&text[offset..], line.max(1))
}

pub(crate) fn syntax_error_near(rest: &str, line: usize) -> Error {
    let rest: String = rest.chars().take(80).collect();
    Error::sql(
        1064,
        "42000",
        format!(
            "You have an error in your SQL syntax; check the manual that corresponds to \
             your MySQL server version for the right syntax to use near '{rest}' at line \
             {line}"
        ),
    )
}

/// The byte offset of 1-based `line` and character `column` in `text`.
fn byte_offset(text: &str, line: usize, column: usize) -> Option<usize> {
    let line_start = if line <= 1 {
        0
    } else {
        text.match_indices('\n').nth(line - 2)?.0 + 1
    };
    let column = column.max(1) - 1;
    text[line_start..]
        .char_indices()
        .nth(column)
        .map(|(i, _)| line_start + i)
}
