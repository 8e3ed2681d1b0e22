//! The results of `SHOW ...` and the system tables of `information_schema` and
//! `performance_schema`.
//!
//! Clients and tools learn about a server through these: Connector/J calls
//! `SHOW INDEX` and `SHOW FULL COLUMNS` for its metadata, GUI tools read
//! `information_schema.TABLES` and `COLUMNS`, `mysqldump` prints `SHOW CREATE TABLE`.
//! Each result here has MySQL 8's columns, names and formatting, built from the
//! catalog (`tarn_catalog::TableDef`) and the open tables.
//!
//! The engine's own figures are exposed as SQL too, so that the five techniques can be
//! observed while they run (see [`engine_tables`]): latch waits per latch class and
//! instance (S4), lock waits, deadlocks and CATS weights (S3), the I/O path and the
//! data files (S5), the buffer pool, and the log with its group commits. Only figures
//! the engine tracks appear; nothing is estimated or made up, and a column MySQL has
//! but Tarn cannot fill (`Create_time`, `Cardinality`, `Rows` until the catalog keeps
//! statistics) is NULL.
//!
//! Every function returns [`Rows`]: column names with [`SqlType`]s, and rows of
//! values. The caller (the SQL engine) applies `LIKE` / `WHERE` filters and turns the
//! columns into its own result description.

mod empty_tables;
pub mod engine_tables;

use std::collections::HashMap;

use tarn_catalog::{IndexDef, Storage, Table, TableDef};
use tarn_common::{Error, FileId, Result};
use tarn_row::Value;
use tarn_row::types::{Collation, ColumnType};

use crate::sysvars::{CHARSETS, COLLATIONS, SystemVariables};
use crate::types::SqlType;

/// A result: its columns and its rows.
pub type Rows = (Vec<Column>, Vec<Vec<Value>>);

/// One result column.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Column {
    pub name: String,
    pub ty: SqlType,
}

/// One connection, as `SHOW PROCESSLIST` shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProcessInfo {
    pub id: u64,
    pub user: String,
    pub host: String,
    pub db: Option<String>,
    /// `Query`, `Sleep`, ...
    pub command: String,
    pub time_s: u64,
    pub state: String,
    pub info: Option<String>,
}

/// Server-wide counters only the server knows (for `SHOW STATUS`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ServerStatus {
    pub uptime_s: u64,
    /// Statements received from clients.
    pub questions: u64,
    /// Connection attempts since start.
    pub connections: u64,
    /// The most sessions open at once.
    pub max_used_connections: u64,
    /// Connections that failed before becoming a session.
    pub aborted_connects: u64,
    /// Sessions whose client went away without quitting.
    pub aborted_clients: u64,
    /// The server's statement runners, when a server runs.
    pub runners: Option<RunnerStatus>,
}

/// What the server's runners (`tarn_server::runners`) report to SHOW STATUS.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RunnerStatus {
    /// Runner threads alive (running statements or waiting for ready connections).
    pub threads: u64,
    /// Runners waiting for a ready connection.
    pub idle_threads: u64,
    /// Connections parked between commands.
    pub parked_connections: u64,
    /// Runners started because one was about to sleep in a statement.
    pub started_for_waits: u64,
    /// Runners the watch started because none had taken a ready connection for a
    /// round.
    pub started_for_stalls: u64,
    /// Connections whose answer waits now for their commit to be durable, held
    /// without a thread.
    pub held_commits: u64,
    /// Commits answered that way since start (the others were durable by the end
    /// of their command).
    pub held_commits_total: u64,
}

/// What the views read.
pub struct ViewContext<'a> {
    pub storage: &'a Storage,
    pub session_vars: &'a SystemVariables,
    pub global_vars: &'a SystemVariables,
    pub processes: &'a [ProcessInfo],
    pub current_database: Option<&'a str>,
    pub server: ServerStatus,
    /// The columns of view `db.name` (its query bound with `db` as the current
    /// database); the binder is the session's, which this module does not know.
    pub view_columns: &'a dyn Fn(&str, &str) -> Result<Vec<Column>>,
    /// The session's grants, which decide what it may see (as in MySQL: a database
    /// if it holds any privilege in it, a table if it holds one on it); `None` sees
    /// everything (the engine's own sessions).
    pub grants: Option<&'a crate::accounts::Grants>,
}

impl ViewContext<'_> {
    /// The user databases the session may see, sorted (never the hidden databases of
    /// temporary tables, `temporary.rs`).
    pub fn databases(&self) -> Vec<String> {
        let mut names = self.storage.databases();
        names.retain(|db| !crate::temporary::is_hidden_database(db));
        if let Some(grants) = self.grants {
            names.retain(|db| grants.any_in_database(db));
        }
        names
    }

    /// The tables of `db` the session may see.
    pub fn tables(&self, db: &str) -> Result<Vec<String>> {
        let mut names = self.storage.tables(db)?;
        names.retain(|name| self.may_see(db, name));
        Ok(names)
    }

    /// The views of `db` the session may see.
    pub fn views(&self, db: &str) -> Result<Vec<String>> {
        let mut names = self.storage.views(db)?;
        names.retain(|name| self.may_see(db, name));
        Ok(names)
    }

    fn may_see(&self, db: &str, table: &str) -> bool {
        self.grants.is_none_or(|grants| {
            !grants
                .on_table(db, table)
                .without(crate::accounts::Privileges::GRANT_OPTION)
                .is_empty()
        })
    }
}

/// The schema of `information_schema`.
pub const INFORMATION_SCHEMA: &str = "information_schema";
/// The schema of the engine's figures.
pub const PERFORMANCE_SCHEMA: &str = "performance_schema";

/// The default collation of tables, as `SHOW CREATE TABLE` names it.
pub(crate) const TABLE_COLLATION: &str = "utf8mb4_0900_ai_ci";
/// The engine every table reports (SHOW CREATE TABLE, SHOW TABLE STATUS,
/// information_schema, SHOW ENGINES): MySQL's, so that clients and tools that check
/// for a transactional engine by name (InnoDB) accept Tarn's tables, as other
/// MySQL-compatible servers report it too.
const ENGINE_NAME: &str = "InnoDB";

// ---- Value and column helpers ----

fn text(s: &str) -> Value {
    Value::Bytes(s.as_bytes().to_vec())
}

fn opt_text(s: Option<&str>) -> Value {
    s.map_or(Value::Null, text)
}

fn uint(v: u64) -> Value {
    Value::UInt(v)
}

fn opt_uint(v: Option<u64>) -> Value {
    v.map_or(Value::Null, Value::UInt)
}

pub(crate) fn varchar(name: &str, len_chars: u32) -> Column {
    Column {
        name: name.to_string(),
        ty: SqlType::varchar(len_chars),
    }
}

pub(crate) fn bigint_unsigned(name: &str) -> Column {
    Column {
        name: name.to_string(),
        ty: SqlType::UInt { bits: 64 },
    }
}

pub(crate) fn bigint(name: &str) -> Column {
    Column {
        name: name.to_string(),
        ty: SqlType::BIGINT,
    }
}

fn datetime(name: &str) -> Column {
    Column {
        name: name.to_string(),
        ty: SqlType::DateTime {
            fsp: 0,
            timestamp: false,
        },
    }
}

fn long_text(name: &str) -> Column {
    Column {
        name: name.to_string(),
        ty: SqlType::TEXT,
    }
}

/// `` `name` `` with backquotes doubled.
pub fn quote_identifier(name: &str) -> String {
    format!("`{}`", name.replace('`', "``"))
}

pub(crate) fn is_system_database(db: &str) -> bool {
    db.eq_ignore_ascii_case(INFORMATION_SCHEMA) || db.eq_ignore_ascii_case(PERFORMANCE_SCHEMA)
}

// ---- Types, collations and keys as MySQL shows them ----

/// A column type as MySQL 8 spells it (`int unsigned`, `decimal(15,2)`,
/// `varchar(25)`, `datetime(6)`).
pub fn type_name(ty: ColumnType) -> String {
    let int = |name: &str, unsigned: bool| {
        if unsigned {
            format!("{name} unsigned")
        } else {
            name.to_string()
        }
    };
    let with_fsp = |name: &str, fsp: u8| {
        if fsp == 0 {
            name.to_string()
        } else {
            format!("{name}({fsp})")
        }
    };
    match ty {
        ColumnType::TinyInt { unsigned } => int("tinyint", unsigned),
        ColumnType::SmallInt { unsigned } => int("smallint", unsigned),
        ColumnType::Int { unsigned } => int("int", unsigned),
        ColumnType::BigInt { unsigned } => int("bigint", unsigned),
        ColumnType::Decimal { precision, scale } => format!("decimal({precision},{scale})"),
        ColumnType::Float => "float".into(),
        ColumnType::Double => "double".into(),
        ColumnType::Date => "date".into(),
        ColumnType::DateTime { fsp } => with_fsp("datetime", fsp),
        ColumnType::Timestamp { fsp } => with_fsp("timestamp", fsp),
        ColumnType::Time { fsp } => with_fsp("time", fsp),
        // MySQL 8.0.19 and later print no display width (MariaDB prints `year(4)`).
        ColumnType::Year => "year".into(),
        ColumnType::Char { len } => format!("char({len})"),
        ColumnType::VarChar { len } => format!("varchar({len})"),
        ColumnType::Binary { len_bytes } => format!("binary({len_bytes})"),
        ColumnType::VarBinary { len_bytes } => format!("varbinary({len_bytes})"),
        ColumnType::Text
        | ColumnType::TinyText
        | ColumnType::MediumText
        | ColumnType::LongText
        | ColumnType::Blob
        | ColumnType::TinyBlob
        | ColumnType::MediumBlob
        | ColumnType::LongBlob
        | ColumnType::Json => data_type(ty).into(),
        ColumnType::Enum { members } | ColumnType::Set { members } => {
            let quoted: Vec<String> = members.names().iter().map(|m| quote_member(m)).collect();
            format!("{}({})", data_type(ty), quoted.join(","))
        }
        ColumnType::Bit { len_bits } => format!("bit({len_bits})"),
    }
}

/// Column `column`'s type as SHOW CREATE TABLE, SHOW COLUMNS and
/// information_schema.COLUMNS.COLUMN_TYPE print it: [`type_name`], but with the
/// display width MySQL 8.0.19+ keeps for `tinyint(1)` (`tinyint(1) unsigned`).
fn column_type_name(def: &TableDef, column: usize) -> String {
    match def.columns[column].ty {
        ColumnType::TinyInt { unsigned } if def.is_tinyint1(column) => {
            if unsigned {
                "tinyint(1) unsigned".into()
            } else {
                "tinyint(1)".into()
            }
        }
        ty => type_name(ty),
    }
}

/// An ENUM or SET member as MySQL quotes it in a type: `'it''s'`, `'a\\b'`.
fn quote_member(member: &str) -> String {
    format!("'{}'", member.replace('\\', "\\\\").replace('\'', "''"))
}

/// `information_schema.COLUMNS.DATA_TYPE`: the type name without its arguments.
fn data_type(ty: ColumnType) -> &'static str {
    match ty {
        ColumnType::TinyInt { .. } => "tinyint",
        ColumnType::SmallInt { .. } => "smallint",
        ColumnType::Int { .. } => "int",
        ColumnType::BigInt { .. } => "bigint",
        ColumnType::Decimal { .. } => "decimal",
        ColumnType::Float => "float",
        ColumnType::Double => "double",
        ColumnType::Date => "date",
        ColumnType::DateTime { .. } => "datetime",
        ColumnType::Timestamp { .. } => "timestamp",
        ColumnType::Time { .. } => "time",
        ColumnType::Year => "year",
        ColumnType::Char { .. } => "char",
        ColumnType::VarChar { .. } => "varchar",
        ColumnType::Binary { .. } => "binary",
        ColumnType::VarBinary { .. } => "varbinary",
        ColumnType::TinyText => "tinytext",
        ColumnType::Text => "text",
        ColumnType::MediumText => "mediumtext",
        ColumnType::LongText => "longtext",
        ColumnType::TinyBlob => "tinyblob",
        ColumnType::Blob => "blob",
        ColumnType::MediumBlob => "mediumblob",
        ColumnType::LongBlob => "longblob",
        ColumnType::Json => "json",
        ColumnType::Enum { .. } => "enum",
        ColumnType::Set { .. } => "set",
        ColumnType::Bit { .. } => "bit",
    }
}

/// The collation name of a text, ENUM or SET column; None for other types.
pub fn collation_name(ty: ColumnType, collation: Collation) -> Option<&'static str> {
    ty.has_collation().then_some(match collation {
        Collation::CaseInsensitive => TABLE_COLLATION,
        Collation::Binary => "utf8mb4_bin",
    })
}

/// The type of a result column, as a stored column's type (for describing system
/// tables with `SHOW COLUMNS`).
fn result_column_type(ty: SqlType) -> (ColumnType, Collation) {
    ty.to_column()
}

/// A table's indexes in the order MySQL lists them: unique indexes whose columns are
/// all NOT NULL, then other unique indexes, then the rest, each group in definition
/// order (the primary key comes before all of them).
fn ordered_indexes(def: &TableDef) -> Vec<&IndexDef> {
    let not_null = |index: &IndexDef| index.columns.iter().all(|&c| !def.columns[c].nullable);
    let rank = |index: &IndexDef| match (index.unique, not_null(index)) {
        (true, true) => 0,
        (true, false) => 1,
        (false, _) => 2,
    };
    let mut indexes: Vec<&IndexDef> = def.indexes.iter().collect();
    indexes.sort_by_key(|index| rank(index));
    indexes
}

/// The columns MySQL shows as `PRI`: the primary key's, or, in a table without one,
/// those of the first unique index over NOT NULL columns (which InnoDB makes the
/// clustered key).
fn primary_columns(def: &TableDef) -> Vec<usize> {
    if !def.primary_key.is_empty() {
        return def.primary_key.clone();
    }
    ordered_indexes(def)
        .into_iter()
        .find(|index| {
            index.unique
                && !index.has_prefix()
                && index.columns.iter().all(|&c| !def.columns[c].nullable)
        })
        .map(|index| index.columns.clone())
        .unwrap_or_default()
}

/// `SHOW COLUMNS`' `Key`: `PRI`, `UNI` (the only column of a unique index), `MUL`
/// (the first column of another index), or empty.
fn column_key(def: &TableDef, column: usize) -> &'static str {
    if primary_columns(def).contains(&column) {
        "PRI"
    } else if def
        .indexes
        .iter()
        .any(|i| i.unique && i.columns == [column])
    {
        "UNI"
    } else if def
        .indexes
        .iter()
        .any(|i| i.columns.first() == Some(&column))
    {
        "MUL"
    } else {
        ""
    }
}

fn is_current_timestamp(default: &str) -> bool {
    let upper = default.trim().to_ascii_uppercase();
    ["CURRENT_TIMESTAMP", "NOW(", "LOCALTIMESTAMP", "LOCALTIME"]
        .iter()
        .any(|prefix| upper.starts_with(prefix))
}

fn is_number_literal(text: &str) -> bool {
    let body = text.trim().trim_start_matches(['-', '+']);
    !body.is_empty()
        && body.bytes().any(|b| b.is_ascii_digit())
        && body
            .bytes()
            .all(|b| b.is_ascii_digit() || b == b'.' || b == b'e' || b == b'E' || b == b'-')
}

/// A DEFAULT's SQL text as `SHOW COLUMNS` shows it: NULL for `NULL`, a string
/// without its quotes, anything else as written.
fn default_shown(default: Option<&str>) -> Value {
    let Some(default) = default.map(str::trim) else {
        return Value::Null;
    };
    if default.eq_ignore_ascii_case("NULL") {
        return Value::Null;
    }
    match unquote(default) {
        Some(inner) => Value::Bytes(inner.into_bytes()),
        None => text(default),
    }
}

/// The contents of a single-quoted SQL string (`'it''s'` → `it's`, backslash
/// escapes read as MySQL does); None if `s` is not one quoted string.
fn unquote(s: &str) -> Option<String> {
    let inner = s.strip_prefix('\'')?.strip_suffix('\'')?;
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' if chars.peek() == Some(&'\'') => {
                chars.next();
                out.push('\'');
            }
            '\'' => return None,
            '\\' => match chars.next()? {
                'n' => out.push('\n'),
                't' => out.push('\t'),
                'r' => out.push('\r'),
                '0' => out.push('\0'),
                other => out.push(other),
            },
            other => out.push(other),
        }
    }
    Some(out)
}

/// `SHOW COLUMNS`' `Extra`: `auto_increment`, `VIRTUAL GENERATED` or `STORED
/// GENERATED` for a generated column, or MySQL 8's `DEFAULT_GENERATED` for a
/// DEFAULT of the current time and `on update CURRENT_TIMESTAMP[(fsp)]` for an ON
/// UPDATE clause (both, space-separated, when the column has both).
fn column_extra(def: &TableDef, column: usize) -> String {
    if def.auto_increment.is_some_and(|a| a.column == column) {
        return "auto_increment".into();
    }
    if let Some(generated) = def.column_generated(column) {
        return if generated.stored {
            "STORED GENERATED".into()
        } else {
            "VIRTUAL GENERATED".into()
        };
    }
    let generated = def.column_default(column).is_some_and(is_current_timestamp);
    match (generated, def.column_on_update(column)) {
        (true, Some(on_update)) => format!("DEFAULT_GENERATED on update {on_update}"),
        (false, Some(on_update)) => format!("on update {on_update}"),
        (true, None) => "DEFAULT_GENERATED".into(),
        (false, None) => String::new(),
    }
}

/// A COMMENT as SHOW CREATE TABLE quotes it: in single quotes, with `'` doubled and
/// the characters MySQL escapes (backslash, NUL, newline, return, Ctrl-Z)
/// backslash-escaped, so that the statement reads back to the same text.
fn quoted_comment(comment: &str) -> String {
    let mut out = String::with_capacity(comment.len() + 2);
    out.push('\'');
    for c in comment.chars() {
        match c {
            '\'' => out.push_str("''"),
            '\\' => out.push_str("\\\\"),
            '\0' => out.push_str("\\0"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\u{1a}' => out.push_str("\\Z"),
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

// ---- Looking tables up ----

fn table(cx: &ViewContext, db: &str, name: &str) -> Result<std::sync::Arc<Table>> {
    cx.storage.table(db, name)
}

/// Bytes of data file `file_id` (its pages times the page size).
fn file_bytes(cx: &ViewContext, file_id: u32) -> Option<u64> {
    let page_size_bytes = cx.storage.pool().page_size_bytes() as u64;
    let file = cx.storage.datadir().file(FileId(file_id)).ok()?;
    Some(file.page_count() * page_size_bytes)
}

/// What `SHOW TABLE STATUS` and `information_schema.TABLES` report of a table.
struct TableFigures {
    /// The planner's estimate ([`Table::estimated_rows`]), as InnoDB's is one.
    rows: u64,
    data_length_bytes: Option<u64>,
    index_length_bytes: Option<u64>,
    auto_increment_next: Option<u64>,
}

fn table_figures(cx: &ViewContext, table: &Table) -> TableFigures {
    let def = table.def();
    let index_length_bytes = def
        .indexes
        .iter()
        .map(|i| file_bytes(cx, i.file_id))
        .sum::<Option<u64>>();
    TableFigures {
        rows: table.estimated_rows(),
        data_length_bytes: file_bytes(cx, def.file_id),
        index_length_bytes,
        auto_increment_next: table.auto_increment_next(),
    }
}

/// Data bytes per estimated row (0 for an empty table).
fn avg_row_length(f: &TableFigures) -> u64 {
    match (f.data_length_bytes, f.rows) {
        (Some(bytes), rows) if rows > 0 => bytes / rows,
        _ => 0,
    }
}

/// The (database, table, index) each data file belongs to.
pub(crate) fn file_owners(storage: &Storage) -> HashMap<u32, (String, String, String)> {
    let mut owners = HashMap::new();
    for db in storage.databases() {
        for name in storage.tables(&db).unwrap_or_default() {
            let Ok(table) = storage.table(&db, &name) else {
                continue;
            };
            let def = table.def();
            owners.insert(
                def.file_id,
                (db.clone(), name.clone(), "PRIMARY".to_string()),
            );
            for index in &def.indexes {
                owners.insert(
                    index.file_id,
                    (db.clone(), name.clone(), index.name.clone()),
                );
            }
        }
    }
    owners
}

// ---- SHOW ----

/// `SHOW DATABASES`: the user's databases and the two system schemas, sorted.
pub fn show_databases(cx: &ViewContext) -> Rows {
    let mut names = cx.databases();
    names.push(INFORMATION_SCHEMA.to_string());
    names.push(PERFORMANCE_SCHEMA.to_string());
    names.sort();
    names.dedup();
    let rows = names.iter().map(|n| vec![text(n)]).collect();
    (vec![varchar("Database", 64)], rows)
}

/// `SHOW [FULL] TABLES [FROM db]`: `Tables_in_<db>` (and `Table_type`).
pub fn show_tables(cx: &ViewContext, db: &str, full: bool) -> Result<Rows> {
    let mut columns = vec![varchar(&format!("Tables_in_{db}"), 64)];
    if full {
        columns.push(varchar("Table_type", 64));
    }
    let mut names: Vec<(String, &str)> = if is_system_database(db) {
        engine_tables::system_tables_of(db)
            .map(|t| (t.name.to_string(), "SYSTEM VIEW"))
            .collect()
    } else {
        let tables = cx.tables(db)?.into_iter().map(|t| (t, "BASE TABLE"));
        let views = cx.views(db)?.into_iter().map(|v| (v, "VIEW"));
        tables.chain(views).collect()
    };
    names.sort();
    let rows = names
        .iter()
        .map(|(name, table_type)| {
            let mut row = vec![text(name)];
            if full {
                row.push(text(table_type));
            }
            row
        })
        .collect();
    Ok((columns, rows))
}

/// `SHOW [FULL] COLUMNS FROM db.table`: `Field`, `Type`, [`Collation`,] `Null`,
/// `Key`, `Default`, `Extra`[, `Privileges`, `Comment`].
pub fn show_columns(cx: &ViewContext, db: &str, table_name: &str, full: bool) -> Result<Rows> {
    let mut columns = vec![varchar("Field", 64), long_text("Type")];
    if full {
        columns.push(varchar("Collation", 64));
    }
    columns.extend([
        varchar("Null", 3),
        varchar("Key", 3),
        long_text("Default"),
        varchar("Extra", 256),
    ]);
    if full {
        columns.extend([varchar("Privileges", 80), long_text("Comment")]);
    }
    let described = describe_columns(cx, db, table_name)?;
    let rows = described
        .into_iter()
        .map(|c| {
            let mut row = vec![text(&c.name), text(&c.type_name)];
            if full {
                row.push(opt_text(c.collation));
            }
            row.extend([
                text(if c.nullable { "YES" } else { "NO" }),
                text(c.key),
                c.default,
                text(&c.extra),
            ]);
            if full {
                row.extend([text("select,insert,update,references"), text(&c.comment)]);
            }
            row
        })
        .collect();
    Ok((columns, rows))
}

/// One column, described for `SHOW COLUMNS` and `information_schema.COLUMNS`.
struct DescribedColumn {
    name: String,
    ty: ColumnType,
    type_name: String,
    collation: Option<&'static str>,
    nullable: bool,
    key: &'static str,
    default: Value,
    extra: String,
    comment: String,
    /// A generated column's expression (information_schema's
    /// GENERATION_EXPRESSION), empty for other columns.
    generation: String,
}

/// A column of a system table or a view: typed by its expression, nullable, with no
/// key or default.
fn computed_column(name: String, ty: SqlType) -> DescribedColumn {
    let (ty, collation) = result_column_type(ty);
    DescribedColumn {
        name,
        ty,
        type_name: type_name(ty),
        collation: collation_name(ty, collation),
        nullable: true,
        key: "",
        default: Value::Null,
        extra: String::new(),
        comment: String::new(),
        generation: String::new(),
    }
}

fn describe_columns(cx: &ViewContext, db: &str, table_name: &str) -> Result<Vec<DescribedColumn>> {
    if is_system_database(db) {
        let system = engine_tables::find(db, table_name)
            .ok_or_else(|| Error::UnknownTable(format!("{db}.{table_name}")))?;
        return Ok((system.columns)()
            .into_iter()
            .map(|c| computed_column(c.name, c.ty))
            .collect());
    }
    if cx.storage.view(db, table_name)?.is_some() {
        return Ok((cx.view_columns)(db, table_name)?
            .into_iter()
            .map(|c| computed_column(c.name, c.ty))
            .collect());
    }
    let table = table(cx, db, table_name)?;
    let def = table.def();
    Ok(def
        .columns
        .iter()
        .enumerate()
        .map(|(i, c)| DescribedColumn {
            name: c.name.clone(),
            ty: c.ty,
            type_name: column_type_name(def, i),
            collation: collation_name(c.ty, c.collation),
            nullable: c.nullable,
            key: column_key(def, i),
            default: default_shown(def.column_default(i)),
            extra: column_extra(def, i),
            comment: def.column_comment(i).to_string(),
            generation: def
                .column_generated(i)
                .map_or(String::new(), |g| g.expr.clone()),
        })
        .collect())
}

/// The 15 columns of `SHOW INDEX`.
fn show_index_columns() -> Vec<Column> {
    vec![
        varchar("Table", 64),
        bigint("Non_unique"),
        varchar("Key_name", 64),
        bigint_unsigned("Seq_in_index"),
        varchar("Column_name", 64),
        varchar("Collation", 1),
        bigint("Cardinality"),
        bigint("Sub_part"),
        varchar("Packed", 10),
        varchar("Null", 3),
        varchar("Index_type", 11),
        varchar("Comment", 8),
        varchar("Index_comment", 2048),
        varchar("Visible", 3),
        long_text("Expression"),
    ]
}

/// One index column: key name, unique, position from 1, column, and its key prefix
/// length (None for the whole column).
struct IndexEntry<'d> {
    key: &'d str,
    unique: bool,
    seq: usize,
    column: usize,
    prefix_len: Option<u32>,
}

fn index_entries(def: &TableDef) -> Vec<IndexEntry<'_>> {
    let mut entries = Vec::new();
    for (seq, &column) in def.primary_key.iter().enumerate() {
        entries.push(IndexEntry {
            key: "PRIMARY",
            unique: true,
            seq: seq + 1,
            column,
            prefix_len: None,
        });
    }
    for index in ordered_indexes(def) {
        for (seq, &column) in index.columns.iter().enumerate() {
            entries.push(IndexEntry {
                key: index.name.as_str(),
                unique: index.unique,
                seq: seq + 1,
                column,
                prefix_len: index.prefix_len(seq),
            });
        }
    }
    entries
}

/// `SHOW INDEX FROM db.table`: MySQL's 15 columns, one row per index column, the
/// primary key first. `Cardinality` is NULL: the catalog keeps no statistics yet.
pub fn show_index(cx: &ViewContext, db: &str, table_name: &str) -> Result<Rows> {
    let table = table(cx, db, table_name)?;
    let def = table.def();
    let rows = index_entries(def)
        .into_iter()
        .map(|e| {
            let c = &def.columns[e.column];
            vec![
                text(&def.name),
                Value::Int(i64::from(!e.unique)),
                text(e.key),
                uint(e.seq as u64),
                text(&c.name),
                text("A"),
                Value::Null,
                e.prefix_len
                    .map_or(Value::Null, |len| Value::Int(i64::from(len))),
                Value::Null,
                text(if c.nullable { "YES" } else { "" }),
                text("BTREE"),
                text(""),
                text(""),
                text("YES"),
                Value::Null,
            ]
        })
        .collect();
    Ok((show_index_columns(), rows))
}

/// `SHOW CREATE TABLE db.table`: `Table`, `Create Table`.
pub fn show_create_table(cx: &ViewContext, db: &str, table_name: &str) -> Result<Rows> {
    let table = table(cx, db, table_name)?;
    let sql = create_table_sql(table.database(), table.def(), table.auto_increment_next());
    Ok((
        vec![varchar("Table", 64), long_text("Create Table")],
        vec![vec![text(&table.def().name), text(&sql)]],
    ))
}

/// The `CREATE TABLE` statement of `def` as MySQL 8 prints it; `auto_increment_next`
/// is the counter's next value (shown as `AUTO_INCREMENT=n` when above 1). `db` is
/// the table's database (a foreign key to a table of another is written with it).
pub fn create_table_sql(db: &str, def: &TableDef, auto_increment_next: Option<u64>) -> String {
    let mut lines: Vec<String> = def
        .columns
        .iter()
        .enumerate()
        .map(|(i, _)| column_definition(def, i))
        .collect();
    let column_list = |columns: &[usize]| {
        columns
            .iter()
            .map(|&c| quote_identifier(&def.columns[c].name))
            .collect::<Vec<_>>()
            .join(",")
    };
    if !def.primary_key.is_empty() {
        lines.push(format!("  PRIMARY KEY ({})", column_list(&def.primary_key)));
    }
    for index in ordered_indexes(def) {
        lines.push(format!(
            "  {}KEY {} ({})",
            if index.unique { "UNIQUE " } else { "" },
            quote_identifier(&index.name),
            index
                .columns
                .iter()
                .enumerate()
                .map(|(part, &c)| {
                    let name = quote_identifier(&def.columns[c].name);
                    match index.prefix_len(part) {
                        Some(len) => format!("{name}({len})"),
                        None => name,
                    }
                })
                .collect::<Vec<_>>()
                .join(",")
        ));
    }
    for fk in &def.foreign_keys {
        lines.push(format!(
            "  {}",
            crate::foreign_keys::constraint_sql(db, def, fk)
        ));
    }
    // CHECK constraints last, in the order of their names, as MySQL 8 prints them.
    for check in ordered_checks(def) {
        lines.push(format!(
            "  CONSTRAINT {} CHECK ({}){}",
            quote_identifier(&check.name),
            check.clause,
            if check.enforced {
                ""
            } else {
                " /*!80016 NOT ENFORCED */"
            }
        ));
    }
    let auto_increment = match auto_increment_next {
        Some(next) if next > 1 => format!(" AUTO_INCREMENT={next}"),
        _ => String::new(),
    };
    let comment = if def.comment.is_empty() {
        String::new()
    } else {
        format!(" COMMENT={}", quoted_comment(&def.comment))
    };
    format!(
        "CREATE TABLE {} (\n{}\n) ENGINE={ENGINE_NAME}{auto_increment} DEFAULT CHARSET=utf8mb4 \
         COLLATE={TABLE_COLLATION}{comment}",
        quote_identifier(&def.name),
        lines.join(",\n")
    )
}

/// A table's CHECK constraints in the order MySQL lists them: by name.
fn ordered_checks(def: &TableDef) -> Vec<&tarn_catalog::CheckDef> {
    let mut checks: Vec<&tarn_catalog::CheckDef> = def.checks.iter().collect();
    checks.sort_by_cached_key(|c| (c.name.to_lowercase(), c.name.clone()));
    checks
}

/// `information_schema.CHECK_CONSTRAINTS`: each CHECK constraint with its condition
/// as MySQL prints it.
pub(crate) fn check_constraints(cx: &ViewContext) -> Result<Vec<Vec<Value>>> {
    let mut rows = Vec::new();
    for (db, table) in all_tables(cx)? {
        for check in ordered_checks(table.def()) {
            rows.push(vec![
                text("def"),
                text(&db),
                text(&check.name),
                text(&check.clause),
            ]);
        }
    }
    Ok(rows)
}

/// One column's line in `SHOW CREATE TABLE`.
fn column_definition(def: &TableDef, i: usize) -> String {
    let column = &def.columns[i];
    let mut line = format!(
        "  {} {}",
        quote_identifier(&column.name),
        column_type_name(def, i)
    );
    if column.ty.has_collation() && column.collation == Collation::Binary {
        line.push_str(" COLLATE utf8mb4_bin");
    }
    // MySQL's form: `c` int GENERATED ALWAYS AS ((`a` + `b`)) VIRTUAL [NOT NULL]
    // [COMMENT ..], without DEFAULT.
    if let Some(generated) = def.column_generated(i) {
        line.push_str(" GENERATED ALWAYS AS (");
        line.push_str(&generated.expr);
        line.push_str(if generated.stored {
            ") STORED"
        } else {
            ") VIRTUAL"
        });
        if !column.nullable {
            line.push_str(" NOT NULL");
        }
        let comment = def.column_comment(i);
        if !comment.is_empty() {
            line.push_str(" COMMENT ");
            line.push_str(&quoted_comment(comment));
        }
        return line;
    }
    let is_timestamp = matches!(column.ty, ColumnType::Timestamp { .. });
    if !column.nullable {
        line.push_str(" NOT NULL");
    } else if is_timestamp {
        line.push_str(" NULL");
    }
    match def.column_default(i).map(str::trim) {
        Some(default) => {
            line.push_str(" DEFAULT ");
            line.push_str(&default_clause(default));
        }
        // MySQL prints no DEFAULT for TEXT and BLOB columns, which cannot have one.
        None if column.nullable && !column.ty.is_lob() => {
            line.push_str(" DEFAULT NULL");
        }
        None => {}
    }
    if let Some(on_update) = def.column_on_update(i) {
        line.push_str(" ON UPDATE ");
        line.push_str(on_update);
    }
    if def.auto_increment.is_some_and(|a| a.column == i) {
        line.push_str(" AUTO_INCREMENT");
    }
    let comment = def.column_comment(i);
    if !comment.is_empty() {
        line.push_str(" COMMENT ");
        line.push_str(&quoted_comment(comment));
    }
    line
}

/// A DEFAULT as MySQL prints it: literals quoted (`'0'`), `NULL` and
/// `CURRENT_TIMESTAMP` bare, expressions as written.
fn default_clause(default: &str) -> String {
    if default.eq_ignore_ascii_case("NULL") {
        "NULL".into()
    } else if is_number_literal(default) {
        format!("'{default}'")
    } else {
        default.to_string()
    }
}

/// The 18 columns of `SHOW TABLE STATUS`.
fn table_status_columns() -> Vec<Column> {
    vec![
        varchar("Name", 64),
        varchar("Engine", 64),
        bigint("Version"),
        varchar("Row_format", 10),
        bigint_unsigned("Rows"),
        bigint_unsigned("Avg_row_length"),
        bigint_unsigned("Data_length"),
        bigint_unsigned("Max_data_length"),
        bigint_unsigned("Index_length"),
        bigint_unsigned("Data_free"),
        bigint_unsigned("Auto_increment"),
        datetime("Create_time"),
        datetime("Update_time"),
        datetime("Check_time"),
        varchar("Collation", 64),
        bigint("Checksum"),
        varchar("Create_options", 256),
        long_text("Comment"),
    ]
}

/// `SHOW TABLE STATUS [FROM db]`: MySQL's 18 columns. `Data_length` and
/// `Index_length` are the sizes of the table's data files; `Rows`,
/// `Avg_row_length`, `Data_free` and the times are NULL (not tracked).
pub fn show_table_status(cx: &ViewContext, db: &str) -> Result<Rows> {
    let mut rows = Vec::new();
    for name in cx.tables(db)? {
        let Ok(table) = table(cx, db, &name) else {
            continue; // dropped meanwhile
        };
        rows.push(table_status_row(cx, &name, &table));
    }
    Ok((table_status_columns(), rows))
}

/// A table's SHOW TABLE STATUS row (information_schema.TABLES has the same figures
/// after its own first columns).
fn table_status_row(cx: &ViewContext, name: &str, table: &Table) -> Vec<Value> {
    let f = table_figures(cx, table);
    vec![
        text(name),
        text(ENGINE_NAME),
        Value::Int(10),
        text("Dynamic"),
        uint(f.rows),
        uint(avg_row_length(&f)),
        opt_uint(f.data_length_bytes),
        uint(0),
        opt_uint(f.index_length_bytes),
        Value::Null,
        opt_uint(f.auto_increment_next),
        Value::Null,
        Value::Null,
        Value::Null,
        text(TABLE_COLLATION),
        Value::Null,
        text(""),
        text(&table.def().comment),
    ]
}

/// `SHOW [SESSION | GLOBAL] VARIABLES`: `Variable_name`, `Value` (booleans as
/// `ON`/`OFF`), sorted by name. For the session form pass
/// `session.with_globals(globals)`.
pub fn show_variables(vars: &SystemVariables) -> Rows {
    let rows = vars
        .iter()
        .map(|(name, _)| vec![text(name), text(&vars.display(name).unwrap_or_default())])
        .collect();
    (
        vec![varchar("Variable_name", 64), varchar("Value", 1024)],
        rows,
    )
}

/// `SHOW [FULL] PROCESSLIST`: `Info` is cut to 100 characters unless `full`.
pub fn show_processlist(cx: &ViewContext, full: bool) -> Rows {
    let rows = cx
        .processes
        .iter()
        .map(|p| {
            let info = p.info.as_deref().map(|info| {
                if full {
                    info.to_string()
                } else {
                    info.chars().take(100).collect()
                }
            });
            vec![
                uint(p.id),
                text(&p.user),
                text(&p.host),
                opt_text(p.db.as_deref()),
                text(&p.command),
                Value::Int(i64::try_from(p.time_s).unwrap_or(i64::MAX)),
                text(&p.state),
                info.map_or(Value::Null, |i| text(&i)),
            ]
        })
        .collect();
    (
        vec![
            bigint_unsigned("Id"),
            varchar("User", 32),
            varchar("Host", 261),
            varchar("db", 64),
            varchar("Command", 16),
            bigint("Time"),
            varchar("State", 64),
            long_text("Info"),
        ],
        rows,
    )
}

/// `SHOW ENGINES`.
pub fn show_engines() -> Rows {
    (
        vec![
            varchar("Engine", 64),
            varchar("Support", 8),
            varchar("Comment", 80),
            varchar("Transactions", 3),
            varchar("XA", 3),
            varchar("Savepoints", 3),
        ],
        vec![engine_row()],
    )
}

/// The columns of MySQL 8's `SHOW REPLICA STATUS`, in order.
pub const REPLICA_STATUS_COLUMNS: &[&str] = &[
    "Replica_IO_State",
    "Source_Host",
    "Source_User",
    "Source_Port",
    "Connect_Retry",
    "Source_Log_File",
    "Read_Source_Log_Pos",
    "Relay_Log_File",
    "Relay_Log_Pos",
    "Relay_Source_Log_File",
    "Replica_IO_Running",
    "Replica_SQL_Running",
    "Replicate_Do_DB",
    "Replicate_Ignore_DB",
    "Replicate_Do_Table",
    "Replicate_Ignore_Table",
    "Replicate_Wild_Do_Table",
    "Replicate_Wild_Ignore_Table",
    "Last_Errno",
    "Last_Error",
    "Skip_Counter",
    "Exec_Source_Log_Pos",
    "Relay_Log_Space",
    "Until_Condition",
    "Until_Log_File",
    "Until_Log_Pos",
    "Source_SSL_Allowed",
    "Source_SSL_CA_File",
    "Source_SSL_CA_Path",
    "Source_SSL_Cert",
    "Source_SSL_Cipher",
    "Source_SSL_Key",
    "Seconds_Behind_Source",
    "Source_SSL_Verify_Server_Cert",
    "Last_IO_Errno",
    "Last_IO_Error",
    "Last_SQL_Errno",
    "Last_SQL_Error",
    "Replicate_Ignore_Server_Ids",
    "Source_Server_Id",
    "Source_UUID",
    "Source_Info_File",
    "SQL_Delay",
    "SQL_Remaining_Delay",
    "Replica_SQL_Running_State",
    "Source_Retry_Count",
    "Source_Bind",
    "Last_IO_Error_Timestamp",
    "Last_SQL_Error_Timestamp",
    "Source_SSL_Crl",
    "Source_SSL_Crlpath",
    "Retrieved_Gtid_Set",
    "Executed_Gtid_Set",
    "Auto_Position",
    "Replicate_Rewrite_DB",
    "Channel_Name",
    "Source_TLS_Version",
    "Source_public_key_path",
    "Get_Source_public_key",
    "Network_Namespace",
];

/// A column of [`REPLICA_STATUS_COLUMNS`] as `SHOW SLAVE STATUS` names it
/// (`Slave_IO_State`, `Master_Host`, `Get_master_public_key`).
pub fn replica_to_slave_name(name: &str) -> String {
    if name == "Get_Source_public_key" {
        return "Get_master_public_key".to_string();
    }
    name.replace("Replica", "Slave").replace("Source", "Master")
}

/// The columns of `SHOW TRIGGERS`, `SHOW EVENTS`, `SHOW PROCEDURE STATUS` and
/// `SHOW FUNCTION STATUS` (MySQL 8's); Tarn has none of these objects, so the
/// results have no rows.
pub fn show_stored_objects_columns(kind: crate::parse::StoredObjectKind) -> Vec<Column> {
    use crate::parse::StoredObjectKind as K;
    let names: &[&str] = match kind {
        K::Triggers => &[
            "Trigger",
            "Event",
            "Table",
            "Statement",
            "Timing",
            "Created",
            "sql_mode",
            "Definer",
            "character_set_client",
            "collation_connection",
            "Database Collation",
        ],
        K::Events => &[
            "Db",
            "Name",
            "Definer",
            "Time zone",
            "Type",
            "Execute at",
            "Interval value",
            "Interval field",
            "Starts",
            "Ends",
            "Status",
            "Originator",
            "character_set_client",
            "collation_connection",
            "Database Collation",
        ],
        K::Procedures | K::Functions => &[
            "Db",
            "Name",
            "Type",
            "Definer",
            "Modified",
            "Created",
            "Security_type",
            "Comment",
            "character_set_client",
            "collation_connection",
            "Database Collation",
        ],
    };
    names.iter().map(|name| varchar(name, 64)).collect()
}

fn engine_row() -> Vec<Value> {
    vec![
        text(ENGINE_NAME),
        text("DEFAULT"),
        text("Tarn: transactional B+tree engine with MVCC, row locks and a redo log"),
        text("YES"),
        text("NO"),
        text("YES"),
    ]
}

/// `SHOW CHARACTER SET`: `Charset`, `Description`, `Default collation`, `Maxlen`.
pub fn show_charset() -> Rows {
    let rows = CHARSETS
        .iter()
        .map(|&(name, collation, description, maxlen)| {
            vec![
                text(name),
                text(description),
                text(collation),
                uint(u64::from(maxlen)),
            ]
        })
        .collect();
    (
        vec![
            varchar("Charset", 64),
            varchar("Description", 2048),
            varchar("Default collation", 64),
            bigint_unsigned("Maxlen"),
        ],
        rows,
    )
}

/// `SHOW COLLATION`: `Collation`, `Charset`, `Id`, `Default`, `Compiled`,
/// `Sortlen`, `Pad_attribute`.
pub fn show_collation() -> Rows {
    let rows = COLLATIONS.iter().map(collation_row).collect();
    (
        vec![
            varchar("Collation", 64),
            varchar("Charset", 64),
            bigint_unsigned("Id"),
            varchar("Default", 3),
            varchar("Compiled", 3),
            bigint_unsigned("Sortlen"),
            varchar("Pad_attribute", 9),
        ],
        rows,
    )
}

fn collation_row(
    &(name, charset, id, is_default, pad): &(&str, &str, u32, bool, &str),
) -> Vec<Value> {
    vec![
        text(name),
        text(charset),
        uint(u64::from(id)),
        text(if is_default { "Yes" } else { "" }),
        text("Yes"),
        uint(if name == "utf8mb4_0900_ai_ci" { 0 } else { 1 }),
        text(pad),
    ]
}

pub use engine_tables::{show_engine_status, show_status, system_table};

// ---- information_schema ----

/// `information_schema.SCHEMATA`.
pub(crate) fn schemata(cx: &ViewContext) -> Result<Vec<Vec<Value>>> {
    let (_, rows) = show_databases(cx);
    Ok(rows
        .into_iter()
        .map(|row| {
            let mut out = vec![text("def")];
            out.extend(row);
            out.extend([
                text("utf8mb4"),
                text(TABLE_COLLATION),
                Value::Null,
                text("NO"),
            ]);
            out
        })
        .collect())
}

pub(crate) fn schemata_columns() -> Vec<Column> {
    vec![
        varchar("CATALOG_NAME", 64),
        varchar("SCHEMA_NAME", 64),
        varchar("DEFAULT_CHARACTER_SET_NAME", 64),
        varchar("DEFAULT_COLLATION_NAME", 64),
        varchar("SQL_PATH", 512),
        varchar("DEFAULT_ENCRYPTION", 3),
    ]
}

pub(crate) fn tables_columns() -> Vec<Column> {
    vec![
        varchar("TABLE_CATALOG", 64),
        varchar("TABLE_SCHEMA", 64),
        varchar("TABLE_NAME", 64),
        varchar("TABLE_TYPE", 64),
        varchar("ENGINE", 64),
        bigint("VERSION"),
        varchar("ROW_FORMAT", 10),
        bigint_unsigned("TABLE_ROWS"),
        bigint_unsigned("AVG_ROW_LENGTH"),
        bigint_unsigned("DATA_LENGTH"),
        bigint_unsigned("MAX_DATA_LENGTH"),
        bigint_unsigned("INDEX_LENGTH"),
        bigint_unsigned("DATA_FREE"),
        bigint_unsigned("AUTO_INCREMENT"),
        datetime("CREATE_TIME"),
        datetime("UPDATE_TIME"),
        datetime("CHECK_TIME"),
        varchar("TABLE_COLLATION", 64),
        bigint("CHECKSUM"),
        varchar("CREATE_OPTIONS", 256),
        long_text("TABLE_COMMENT"),
    ]
}

/// `information_schema.TABLES`: every user table, view and system table.
pub(crate) fn tables(cx: &ViewContext) -> Result<Vec<Vec<Value>>> {
    let mut rows = Vec::new();
    for system in engine_tables::SYSTEM_TABLES {
        let mut row = vec![
            text("def"),
            text(system.db),
            text(system.name),
            text("SYSTEM VIEW"),
        ];
        row.extend(std::iter::repeat_n(Value::Null, 13));
        row.extend([Value::Null, Value::Null, text(""), text("")]);
        rows.push(row);
    }
    for db in cx.databases() {
        for name in cx.tables(&db)? {
            let Ok(table) = table(cx, &db, &name) else {
                continue;
            };
            // TABLE_CATALOG, TABLE_SCHEMA, TABLE_NAME, TABLE_TYPE, then the figures
            // of SHOW TABLE STATUS after its Name.
            let mut row = vec![text("def"), text(&db), text(&name), text("BASE TABLE")];
            row.extend(table_status_row(cx, &name, &table).into_iter().skip(1));
            rows.push(row);
        }
        for name in cx.views(&db)? {
            // A view has no engine, sizes or collation; its comment says VIEW.
            let mut row = vec![text("def"), text(&db), text(&name), text("VIEW")];
            row.extend(std::iter::repeat_n(Value::Null, 16));
            row.push(text("VIEW"));
            rows.push(row);
        }
    }
    Ok(rows)
}

pub(crate) fn views_columns() -> Vec<Column> {
    vec![
        varchar("TABLE_CATALOG", 64),
        varchar("TABLE_SCHEMA", 64),
        varchar("TABLE_NAME", 64),
        long_text("VIEW_DEFINITION"),
        varchar("CHECK_OPTION", 8),
        varchar("IS_UPDATABLE", 3),
        varchar("DEFINER", 288),
        varchar("SECURITY_TYPE", 7),
        varchar("CHARACTER_SET_CLIENT", 64),
        varchar("COLLATION_CONNECTION", 64),
    ]
}

/// `information_schema.VIEWS`: every view the session may see, with the query text
/// SHOW CREATE VIEW shows. Tarn's views are read-only (IS_UPDATABLE NO), take no
/// CHECK OPTION, and keep no definer: they run with the invoker's rights (see
/// ARCHITECTURE.md), so DEFINER is empty and SECURITY_TYPE INVOKER.
pub(crate) fn views(cx: &ViewContext) -> Result<Vec<Vec<Value>>> {
    let mut rows = Vec::new();
    for db in cx.databases() {
        for name in cx.views(&db)? {
            let Some(view) = cx.storage.view(&db, &name)? else {
                continue;
            };
            rows.push(vec![
                text("def"),
                text(&db),
                text(&name),
                text(&view.sql),
                text("NONE"),
                text("NO"),
                text(""),
                text("INVOKER"),
                text("utf8mb4"),
                text("utf8mb4_0900_ai_ci"),
            ]);
        }
    }
    Ok(rows)
}

/// `information_schema.PARTITIONS`: Tarn does not partition tables, so, as MySQL
/// does for an unpartitioned table, one row per base table with the partition
/// columns NULL (and the sizes NULL too: see `TABLES` for them).
pub(crate) fn partitions_columns() -> Vec<Column> {
    let mut columns = vec![
        varchar("TABLE_CATALOG", 64),
        varchar("TABLE_SCHEMA", 64),
        varchar("TABLE_NAME", 64),
        varchar("PARTITION_NAME", 64),
        varchar("SUBPARTITION_NAME", 64),
        bigint_unsigned("PARTITION_ORDINAL_POSITION"),
        bigint_unsigned("SUBPARTITION_ORDINAL_POSITION"),
        varchar("PARTITION_METHOD", 13),
        varchar("SUBPARTITION_METHOD", 13),
        long_text("PARTITION_EXPRESSION"),
        long_text("SUBPARTITION_EXPRESSION"),
        long_text("PARTITION_DESCRIPTION"),
    ];
    for name in [
        "TABLE_ROWS",
        "AVG_ROW_LENGTH",
        "DATA_LENGTH",
        "MAX_DATA_LENGTH",
        "INDEX_LENGTH",
        "DATA_FREE",
    ] {
        columns.push(bigint_unsigned(name));
    }
    columns.extend([
        datetime("CREATE_TIME"),
        datetime("UPDATE_TIME"),
        datetime("CHECK_TIME"),
        bigint_unsigned("CHECKSUM"),
        long_text("PARTITION_COMMENT"),
        varchar("NODEGROUP", 256),
        long_text("TABLESPACE_NAME"),
    ]);
    columns
}

pub(crate) fn partitions(cx: &ViewContext) -> Result<Vec<Vec<Value>>> {
    let width = partitions_columns().len();
    let mut rows = Vec::new();
    for db in cx.databases() {
        for name in cx.tables(&db)? {
            let mut row = vec![text("def"), text(&db), text(&name)];
            row.resize(width, Value::Null);
            rows.push(row);
        }
    }
    Ok(rows)
}

pub(crate) fn columns_columns() -> Vec<Column> {
    vec![
        varchar("TABLE_CATALOG", 64),
        varchar("TABLE_SCHEMA", 64),
        varchar("TABLE_NAME", 64),
        varchar("COLUMN_NAME", 64),
        bigint_unsigned("ORDINAL_POSITION"),
        long_text("COLUMN_DEFAULT"),
        varchar("IS_NULLABLE", 3),
        long_text("DATA_TYPE"),
        bigint("CHARACTER_MAXIMUM_LENGTH"),
        bigint("CHARACTER_OCTET_LENGTH"),
        bigint_unsigned("NUMERIC_PRECISION"),
        bigint_unsigned("NUMERIC_SCALE"),
        bigint_unsigned("DATETIME_PRECISION"),
        varchar("CHARACTER_SET_NAME", 64),
        varchar("COLLATION_NAME", 64),
        long_text("COLUMN_TYPE"),
        varchar("COLUMN_KEY", 3),
        varchar("EXTRA", 256),
        varchar("PRIVILEGES", 154),
        long_text("COLUMN_COMMENT"),
        long_text("GENERATION_EXPRESSION"),
        bigint_unsigned("SRS_ID"),
    ]
}

/// (CHARACTER_MAXIMUM_LENGTH, CHARACTER_OCTET_LENGTH, NUMERIC_PRECISION,
/// NUMERIC_SCALE, DATETIME_PRECISION) of a type, as MySQL reports them.
fn type_measures(ty: ColumnType) -> [Option<u64>; 5] {
    let utf8mb4_bytes = 4;
    match ty {
        ColumnType::TinyInt { .. } => [None, None, Some(3), Some(0), None],
        ColumnType::SmallInt { .. } => [None, None, Some(5), Some(0), None],
        ColumnType::Int { .. } => [None, None, Some(10), Some(0), None],
        ColumnType::BigInt { unsigned } => [
            None,
            None,
            Some(if unsigned { 20 } else { 19 }),
            Some(0),
            None,
        ],
        ColumnType::Decimal { precision, scale } => [
            None,
            None,
            Some(u64::from(precision)),
            Some(u64::from(scale)),
            None,
        ],
        ColumnType::Float => [None, None, Some(12), None, None],
        ColumnType::Double => [None, None, Some(22), None, None],
        ColumnType::Date => [None; 5],
        ColumnType::DateTime { fsp } | ColumnType::Timestamp { fsp } | ColumnType::Time { fsp } => {
            [None, None, None, None, Some(u64::from(fsp))]
        }
        ColumnType::Year => [None; 5],
        ColumnType::Char { len } | ColumnType::VarChar { len } => {
            let len = u64::from(len);
            [Some(len), Some(len * utf8mb4_bytes), None, None, None]
        }
        ColumnType::Binary { len_bytes } | ColumnType::VarBinary { len_bytes } => {
            let len = u64::from(len_bytes);
            [Some(len), Some(len), None, None, None]
        }
        // MySQL's bound of the class, in bytes for both lengths (what MySQL reports,
        // even for TEXT in utf8mb4).
        ColumnType::Text
        | ColumnType::TinyText
        | ColumnType::MediumText
        | ColumnType::LongText
        | ColumnType::Blob
        | ColumnType::TinyBlob
        | ColumnType::MediumBlob
        | ColumnType::LongBlob => {
            let size = ty
                .text_size()
                .or(ty.blob_size())
                .expect("a TEXT or BLOB type");
            let bytes = size.declared_len_max_bytes();
            [Some(bytes), Some(bytes), None, None, None]
        }
        // MySQL reports no lengths for JSON.
        ColumnType::Json => [None; 5],
        // The longest value in characters: one member, or all of them joined.
        ColumnType::Enum { members } | ColumnType::Set { members } => {
            let len = u64::from(if matches!(ty, ColumnType::Set { .. }) {
                members.joined_len_chars()
            } else {
                members.len_max_chars()
            });
            [Some(len), Some(len * utf8mb4_bytes), None, None, None]
        }
        ColumnType::Bit { len_bits } => [None, None, Some(u64::from(len_bits)), None, None],
    }
}

/// `information_schema.COLUMNS`: every column of every user table, view and system
/// table (a view that no longer binds is left out).
pub(crate) fn columns(cx: &ViewContext) -> Result<Vec<Vec<Value>>> {
    let mut tables: Vec<(String, String)> = engine_tables::SYSTEM_TABLES
        .iter()
        .map(|t| (t.db.to_string(), t.name.to_string()))
        .collect();
    for db in cx.databases() {
        for name in cx.tables(&db)? {
            tables.push((db.clone(), name));
        }
        for name in cx.views(&db)? {
            tables.push((db.clone(), name));
        }
    }
    let mut rows = Vec::new();
    for (db, name) in tables {
        let Ok(described) = describe_columns(cx, &db, &name) else {
            continue; // dropped meanwhile, or a view that no longer binds
        };
        for (position, c) in described.into_iter().enumerate() {
            let measures = type_measures(c.ty);
            let mut row = vec![
                text("def"),
                text(&db),
                text(&name),
                text(&c.name),
                uint(position as u64 + 1),
                c.default,
                text(if c.nullable { "YES" } else { "NO" }),
                text(data_type(c.ty)),
            ];
            row.extend(measures.iter().map(|m| opt_uint(*m)));
            row.extend([
                opt_text(c.collation.map(|_| "utf8mb4")),
                opt_text(c.collation),
                text(&c.type_name),
                text(c.key),
                text(&c.extra),
                text("select,insert,update,references"),
                text(&c.comment),
                text(&c.generation),
                Value::Null,
            ]);
            rows.push(row);
        }
    }
    Ok(rows)
}

pub(crate) fn statistics_columns() -> Vec<Column> {
    vec![
        varchar("TABLE_CATALOG", 64),
        varchar("TABLE_SCHEMA", 64),
        varchar("TABLE_NAME", 64),
        varchar("NON_UNIQUE", 1),
        varchar("INDEX_SCHEMA", 64),
        varchar("INDEX_NAME", 64),
        bigint_unsigned("SEQ_IN_INDEX"),
        varchar("COLUMN_NAME", 64),
        varchar("COLLATION", 1),
        bigint("CARDINALITY"),
        bigint("SUB_PART"),
        long_text("PACKED"),
        varchar("NULLABLE", 3),
        varchar("INDEX_TYPE", 11),
        varchar("COMMENT", 8),
        varchar("INDEX_COMMENT", 2048),
        varchar("IS_VISIBLE", 3),
        long_text("EXPRESSION"),
    ]
}

/// `information_schema.STATISTICS`: one row per index column of every user table.
pub(crate) fn statistics(cx: &ViewContext) -> Result<Vec<Vec<Value>>> {
    let mut rows = Vec::new();
    for db in cx.databases() {
        for name in cx.tables(&db)? {
            let Ok((_, index_rows)) = show_index(cx, &db, &name) else {
                continue;
            };
            for r in index_rows {
                // SHOW INDEX: Table, Non_unique, Key_name, Seq_in_index, Column_name,
                // Collation, Cardinality, Sub_part, Packed, Null, Index_type, Comment,
                // Index_comment, Visible, Expression.
                let non_unique = if r[1] == Value::Int(1) { "1" } else { "0" };
                rows.push(vec![
                    text("def"),
                    text(&db),
                    r[0].clone(),
                    text(non_unique),
                    text(&db),
                    r[2].clone(),
                    r[3].clone(),
                    r[4].clone(),
                    r[5].clone(),
                    r[6].clone(),
                    r[7].clone(),
                    r[8].clone(),
                    r[9].clone(),
                    r[10].clone(),
                    r[11].clone(),
                    r[12].clone(),
                    r[13].clone(),
                    r[14].clone(),
                ]);
            }
        }
    }
    Ok(rows)
}

/// Every user table, with its database.
fn all_tables(cx: &ViewContext) -> Result<Vec<(String, std::sync::Arc<Table>)>> {
    let mut out = Vec::new();
    for db in cx.databases() {
        for name in cx.tables(&db)? {
            if let Ok(table) = table(cx, &db, &name) {
                out.push((db.clone(), table));
            }
        }
    }
    Ok(out)
}

pub(crate) fn table_constraints_columns() -> Vec<Column> {
    vec![
        varchar("CONSTRAINT_CATALOG", 64),
        varchar("CONSTRAINT_SCHEMA", 64),
        varchar("CONSTRAINT_NAME", 64),
        varchar("TABLE_SCHEMA", 64),
        varchar("TABLE_NAME", 64),
        varchar("CONSTRAINT_TYPE", 11),
        varchar("ENFORCED", 3),
    ]
}

/// `information_schema.TABLE_CONSTRAINTS`: primary keys, unique indexes, foreign
/// keys and CHECK constraints (`ENFORCED` says whether a CHECK is; the others always
/// are).
pub(crate) fn table_constraints(cx: &ViewContext) -> Result<Vec<Vec<Value>>> {
    let mut rows = Vec::new();
    for (db, table) in all_tables(cx)? {
        let def = table.def();
        let mut constraints = Vec::new();
        if !def.primary_key.is_empty() {
            constraints.push(("PRIMARY", "PRIMARY KEY", true));
        }
        for index in ordered_indexes(def).into_iter().filter(|i| i.unique) {
            constraints.push((index.name.as_str(), "UNIQUE", true));
        }
        for fk in &def.foreign_keys {
            constraints.push((fk.name.as_str(), "FOREIGN KEY", true));
        }
        for check in ordered_checks(def) {
            constraints.push((check.name.as_str(), "CHECK", check.enforced));
        }
        for (name, kind, enforced) in constraints {
            rows.push(vec![
                text("def"),
                text(&db),
                text(name),
                text(&db),
                text(&def.name),
                text(kind),
                text(if enforced { "YES" } else { "NO" }),
            ]);
        }
    }
    Ok(rows)
}

pub(crate) fn key_column_usage_columns() -> Vec<Column> {
    vec![
        varchar("CONSTRAINT_CATALOG", 64),
        varchar("CONSTRAINT_SCHEMA", 64),
        varchar("CONSTRAINT_NAME", 64),
        varchar("TABLE_CATALOG", 64),
        varchar("TABLE_SCHEMA", 64),
        varchar("TABLE_NAME", 64),
        varchar("COLUMN_NAME", 64),
        bigint_unsigned("ORDINAL_POSITION"),
        bigint_unsigned("POSITION_IN_UNIQUE_CONSTRAINT"),
        varchar("REFERENCED_TABLE_SCHEMA", 64),
        varchar("REFERENCED_TABLE_NAME", 64),
        varchar("REFERENCED_COLUMN_NAME", 64),
    ]
}

/// `information_schema.KEY_COLUMN_USAGE`: the columns of the primary keys, unique
/// indexes and foreign keys (only these have `REFERENCED_*` columns and
/// `POSITION_IN_UNIQUE_CONSTRAINT`).
pub(crate) fn key_column_usage(cx: &ViewContext) -> Result<Vec<Vec<Value>>> {
    let mut rows = Vec::new();
    for (db, table) in all_tables(cx)? {
        let def = table.def();
        for IndexEntry {
            key,
            unique,
            seq,
            column,
            ..
        } in index_entries(def)
        {
            if !unique {
                continue;
            }
            rows.push(vec![
                text("def"),
                text(&db),
                text(key),
                text("def"),
                text(&db),
                text(&def.name),
                text(&def.columns[column].name),
                uint(seq as u64),
                Value::Null,
                Value::Null,
                Value::Null,
                Value::Null,
            ]);
        }
        for fk in &def.foreign_keys {
            for (i, (&column, referenced)) in fk.columns.iter().zip(&fk.ref_columns).enumerate() {
                rows.push(vec![
                    text("def"),
                    text(&db),
                    text(&fk.name),
                    text("def"),
                    text(&db),
                    text(&def.name),
                    text(&def.columns[column].name),
                    uint(i as u64 + 1),
                    uint(i as u64 + 1),
                    text(&fk.ref_db),
                    text(&fk.ref_table),
                    text(referenced),
                ]);
            }
        }
    }
    Ok(rows)
}

pub(crate) fn referential_constraints_columns() -> Vec<Column> {
    vec![
        varchar("CONSTRAINT_CATALOG", 64),
        varchar("CONSTRAINT_SCHEMA", 64),
        varchar("CONSTRAINT_NAME", 64),
        varchar("UNIQUE_CONSTRAINT_CATALOG", 64),
        varchar("UNIQUE_CONSTRAINT_SCHEMA", 64),
        varchar("UNIQUE_CONSTRAINT_NAME", 64),
        varchar("MATCH_OPTION", 7),
        varchar("UPDATE_RULE", 11),
        varchar("DELETE_RULE", 11),
        varchar("TABLE_NAME", 64),
        varchar("REFERENCED_TABLE_NAME", 64),
    ]
}

/// `information_schema.REFERENTIAL_CONSTRAINTS`: one row per foreign key;
/// `UNIQUE_CONSTRAINT_NAME` is the parent's index the referenced columns lead (NULL
/// if the parent or that index is missing, as `foreign_key_checks = 0` allows).
pub(crate) fn referential_constraints(cx: &ViewContext) -> Result<Vec<Vec<Value>>> {
    let mut rows = Vec::new();
    for (db, child) in all_tables(cx)? {
        let def = child.def();
        for fk in &def.foreign_keys {
            let parent_index = table(cx, &fk.ref_db, &fk.ref_table)
                .ok()
                .and_then(|parent| {
                    let positions = fk
                        .ref_columns
                        .iter()
                        .map(|c| parent.def().column_index(c).ok())
                        .collect::<Option<Vec<usize>>>()?;
                    parent
                        .def()
                        .index_starting_with(&positions)
                        .map(str::to_string)
                });
            rows.push(vec![
                text("def"),
                text(&db),
                text(&fk.name),
                text("def"),
                text(&fk.ref_db),
                parent_index.as_deref().map_or(Value::Null, text),
                text("NONE"),
                text(fk.update_action().sql()),
                text(fk.delete_action().sql()),
                text(&def.name),
                text(&fk.ref_table),
            ]);
        }
    }
    Ok(rows)
}

pub(crate) fn processlist_columns() -> Vec<Column> {
    vec![
        bigint_unsigned("ID"),
        varchar("USER", 32),
        varchar("HOST", 261),
        varchar("DB", 64),
        varchar("COMMAND", 16),
        bigint("TIME"),
        varchar("STATE", 64),
        long_text("INFO"),
    ]
}

/// `information_schema.PROCESSLIST`.
pub(crate) fn processlist(cx: &ViewContext) -> Result<Vec<Vec<Value>>> {
    Ok(show_processlist(cx, true).1)
}

pub(crate) fn engines_columns() -> Vec<Column> {
    [
        "ENGINE",
        "SUPPORT",
        "COMMENT",
        "TRANSACTIONS",
        "XA",
        "SAVEPOINTS",
    ]
    .iter()
    .zip(show_engines().0)
    .map(|(name, c)| Column {
        name: name.to_string(),
        ty: c.ty,
    })
    .collect()
}

pub(crate) fn engines(_: &ViewContext) -> Result<Vec<Vec<Value>>> {
    Ok(vec![engine_row()])
}

pub(crate) fn collations_columns() -> Vec<Column> {
    vec![
        varchar("COLLATION_NAME", 64),
        varchar("CHARACTER_SET_NAME", 64),
        bigint_unsigned("ID"),
        varchar("IS_DEFAULT", 3),
        varchar("IS_COMPILED", 3),
        bigint_unsigned("SORTLEN"),
        varchar("PAD_ATTRIBUTE", 9),
    ]
}

pub(crate) fn collations(_: &ViewContext) -> Result<Vec<Vec<Value>>> {
    Ok(show_collation().1)
}

pub(crate) fn character_sets_columns() -> Vec<Column> {
    vec![
        varchar("CHARACTER_SET_NAME", 64),
        varchar("DEFAULT_COLLATE_NAME", 64),
        varchar("DESCRIPTION", 2048),
        bigint_unsigned("MAXLEN"),
    ]
}

pub(crate) fn character_sets(_: &ViewContext) -> Result<Vec<Vec<Value>>> {
    Ok(CHARSETS
        .iter()
        .map(|&(name, collation, description, maxlen)| {
            vec![
                text(name),
                text(collation),
                text(description),
                uint(u64::from(maxlen)),
            ]
        })
        .collect())
}

#[cfg(test)]
mod tests;
