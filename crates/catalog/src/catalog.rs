//! Table and index definitions, and the catalog file that persists them.
//!
//! The catalog is one JSON file, `catalog.json`, in the data directory. It is
//! replaced atomically on every change (write a temporary file, fsync it, rename it
//! over the old one, fsync the directory), after the pages of any new index have been
//! flushed, so that a crash leaves either the old catalog or the new one, and every
//! index the catalog names has a valid file. (DDL will become part of the redo log
//! with the transactions issue.)
//!
//! Fields added after the first format carry `#[serde(default)]`, so a catalog written
//! by an older build loads unchanged (and the format number stays 1): column defaults,
//! AUTO_INCREMENT, foreign keys, ON UPDATE clauses, comments, CHECK constraints,
//! generated columns and `tinyint(1)` marks on
//! [`TableDef`], key prefix lengths on [`IndexDef`], views and statistics on
//! [`CatalogData`].
//!
//! # Invariants
//! 1. Every table and index owns one data file; file ids are never reused.
//! 2. Database and table names are stored as given; the SQL layer applies
//!    `lower_case_table_names` before it calls the catalog.
//! 3. A table's `column_defaults`, `column_on_update`, `column_comments`,
//!    `column_generated` and `column_tinyint1` are each empty or have one entry per
//!    column, and only TINYINT columns are marked `tinyint(1)`; its
//!    AUTO_INCREMENT column is an integer column without a DEFAULT that leads the
//!    primary key or some index (MySQL's rule, error 1075).
//! 4. Views live in databases that exist, and no view has the name of a table of its
//!    database. Tables and views together count against `TABLES_PER_DATABASE_MAX`.
//! 5. Statistics exist only for tables that exist, and match their definitions
//!    (`TableStats::check`).
//! 6. A table's foreign keys name columns of the table, each led by one of its
//!    indexes; the tables and columns they reference are names, which need not exist
//!    (`foreign_key_checks = 0` allows that); the SQL layer checks and enforces them
//!    (`tarn_sql::foreign_keys`). Renaming a table moves the references to it.
//! 7. A table's CHECK constraints have distinct names (case-insensitive; the SQL
//!    layer also keeps them unique in their database, MySQL's 3822) and keep their
//!    condition as SQL text naming columns by name, so that moving or dropping other
//!    columns leaves them as they are. The SQL layer checks the text (columns that
//!    exist, deterministic functions) and enforces it (`tarn_sql::checks`). A name
//!    MySQL generated, `<table>_chk_<n>`, follows the table when it is renamed.

use std::collections::BTreeMap;
use std::fs;
use std::io::Write;
use std::path::Path;

use serde::{Deserialize, Serialize};
use tarn_common::{Error, Result};
use tarn_row::Column;

use crate::stats::TableStats;

pub const CATALOG_FILE_NAME: &str = "catalog.json";
const CATALOG_FORMAT: u32 = 1;

/// The first data file id given to an index (ids below are left for the engine's own
/// files, such as the redo log).
pub const FIRST_INDEX_FILE_ID: u32 = 16;

/// A secondary index: its columns (positions in the table), uniqueness, and file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct IndexDef {
    pub name: String,
    pub columns: Vec<usize>,
    pub unique: bool,
    /// Assigned by the catalog when the index is created.
    #[serde(default)]
    pub file_id: u32,
    /// MySQL's key prefix lengths (`KEY k (name(10))`): empty when every key part is
    /// a whole column, else one per column, 0 for a whole column and N for the first
    /// N characters (text types) or bytes (binary types) of a string column. An
    /// index with a prefix part is lossy: its entries hold the truncated values
    /// ([`IndexDef::prefix_len`], `Table::secondary_key`), so a read through it must
    /// re-check the row, and it neither covers nor orders by the whole column.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub prefix_lens: Vec<u32>,
}

impl IndexDef {
    pub fn new(name: &str, columns: &[usize], unique: bool) -> IndexDef {
        IndexDef {
            name: name.to_string(),
            columns: columns.to_vec(),
            unique,
            file_id: 0,
            prefix_lens: Vec::new(),
        }
    }

    /// The index with key prefix lengths, one per column (0: the whole column); kept
    /// empty when none is a prefix.
    pub fn with_prefix_lens(mut self, prefix_lens: Vec<u32>) -> IndexDef {
        self.prefix_lens = if prefix_lens.iter().all(|&n| n == 0) {
            Vec::new()
        } else {
            prefix_lens
        };
        self
    }

    /// The prefix length of key part `part` (a position in `columns`), None for a
    /// whole column.
    pub fn prefix_len(&self, part: usize) -> Option<u32> {
        self.prefix_lens.get(part).copied().filter(|&n| n > 0)
    }

    /// True when some key part is a prefix: the index is lossy.
    pub fn has_prefix(&self) -> bool {
        !self.prefix_lens.is_empty()
    }

    /// Takes column `position` out of the key (its prefix length with it).
    pub fn remove_column(&mut self, position: usize) {
        if let Some(part) = self.columns.iter().position(|&c| c == position) {
            self.columns.remove(part);
            if !self.prefix_lens.is_empty() {
                self.prefix_lens.remove(part);
            }
            if self.prefix_lens.iter().all(|&n| n == 0) {
                self.prefix_lens.clear();
            }
        }
    }
}

/// A table's AUTO_INCREMENT column and the value its counter starts from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AutoIncrement {
    /// The column's position in the table.
    pub column: usize,
    /// `CREATE TABLE ... AUTO_INCREMENT = n` or `ALTER TABLE ... AUTO_INCREMENT = n`;
    /// 0 is taken as 1, as MySQL does. When a table is opened its counter starts at
    /// the larger of this and 1 + the largest value in the column
    /// ([`crate::Table::reserve_auto_increment`]).
    pub start: u64,
}

impl AutoIncrement {
    /// The first value the counter may hand out.
    pub fn first_value(&self) -> u64 {
        self.start.max(1)
    }
}

/// A table: columns, primary key (positions; empty means a hidden row id), secondary
/// indexes, and the file of its clustered index.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TableDef {
    pub name: String,
    pub columns: Vec<Column>,
    pub primary_key: Vec<usize>,
    pub indexes: Vec<IndexDef>,
    /// Assigned by the catalog when the table is created.
    #[serde(default)]
    pub file_id: u32,
    /// Each column's DEFAULT as SQL text (`'abc'`, `0`, `NULL`, `CURRENT_TIMESTAMP`),
    /// `None` for a column without one; empty when no column has one. The SQL layer
    /// parses and evaluates it; the catalog only keeps it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub column_defaults: Vec<Option<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auto_increment: Option<AutoIncrement>,
    /// FOREIGN KEY constraints of this table (the child side), in the order they
    /// were defined. Absent in catalogs written before foreign keys existed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub foreign_keys: Vec<ForeignKeyDef>,
    /// Each column's ON UPDATE as SQL text (`CURRENT_TIMESTAMP`,
    /// `CURRENT_TIMESTAMP(6)`: the value an UPDATE that changes a row gives the
    /// column when it does not assign it), `None` for a column without one; empty
    /// when no column has one. The SQL layer applies it; the catalog only keeps it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub column_on_update: Vec<Option<String>>,
    /// Each column's COMMENT (empty for none); empty when no column has one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub column_comments: Vec<String>,
    /// The table's COMMENT, empty for none.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub comment: String,
    /// CHECK constraints, in the order they were defined. Absent in catalogs written
    /// before CHECK constraints were kept.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub checks: Vec<CheckDef>,
    /// Each column's generation (`AS (expr) VIRTUAL | STORED`), `None` for a column
    /// without one; empty when no column has one. Absent in catalogs written before
    /// generated columns existed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub column_generated: Vec<Option<GeneratedColumn>>,
    /// Whether each column was declared `tinyint(1)`, BOOL or BOOLEAN (signed or
    /// unsigned); empty when no column was. MySQL 8.0.19+ drops every integer
    /// display width but this one, which it keeps and shows (`tinyint(1)`) because
    /// ORMs and drivers read it as a boolean; [`tarn_row::ColumnType`] has no display
    /// width, so the mark is kept here. Absent in catalogs written before it was kept.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub column_tinyint1: Vec<bool>,
}

/// How a generated column gets its value: `expr` over the row's other columns. Rows
/// store the value whether the column was declared VIRTUAL or STORED (so indexes on
/// it need nothing more); `stored` is what the user wrote, for SHOW CREATE TABLE and
/// information_schema.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GeneratedColumn {
    /// The expression as SQL text in the form MySQL prints it (`(`a` + `b`)`), naming
    /// columns by name; the SQL layer parses and evaluates it.
    pub expr: String,
    /// STORED (true) or VIRTUAL (false, MySQL's default).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub stored: bool,
}

/// A CHECK constraint: rows for which `clause` is false are refused while it is
/// enforced (true and NULL pass).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckDef {
    /// The constraint's name, unique among the CHECK constraints of its database.
    pub name: String,
    /// The condition as SQL text, in the form MySQL prints it (`(`a` > 0)`): what
    /// `information_schema.CHECK_CONSTRAINTS` shows, and what is parsed again to
    /// enforce it.
    pub clause: String,
    /// `NOT ENFORCED` makes this false: the constraint is kept and shown, not checked.
    #[serde(default = "enforced_default", skip_serializing_if = "is_enforced")]
    pub enforced: bool,
}

fn enforced_default() -> bool {
    true
}

fn is_enforced(enforced: &bool) -> bool {
    *enforced
}

/// The suffix of MySQL's generated CHECK constraint names: `<table>_chk_<n>`.
pub const GENERATED_CHECK_INFIX: &str = "_chk_";

impl CheckDef {
    /// `n` if the name is one MySQL generates for table `table`, `<table>_chk_<n>`
    /// (the table name compared case-insensitively).
    pub fn generated_number(&self, table: &str) -> Option<u64> {
        let lower = self.name.to_lowercase();
        let prefix = format!("{}{GENERATED_CHECK_INFIX}", table.to_lowercase());
        let n = lower.strip_prefix(&prefix)?;
        if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) || n.starts_with('0') {
            return None;
        }
        n.parse().ok()
    }
}

/// What a FOREIGN KEY does to the child rows when their parent row is deleted or its
/// referenced columns change. InnoDB treats RESTRICT and NO ACTION alike: both are
/// checked at once (no deferred checks).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ForeignKeyAction {
    Restrict,
    NoAction,
    Cascade,
    SetNull,
}

impl ForeignKeyAction {
    /// The action as SQL writes it.
    pub fn sql(self) -> &'static str {
        match self {
            ForeignKeyAction::Restrict => "RESTRICT",
            ForeignKeyAction::NoAction => "NO ACTION",
            ForeignKeyAction::Cascade => "CASCADE",
            ForeignKeyAction::SetNull => "SET NULL",
        }
    }
}

/// A FOREIGN KEY constraint: the child table's columns `columns` (positions) must
/// match a row of `ref_db`.`ref_table` in its columns `ref_columns` (by name: the
/// parent may not exist yet when `foreign_key_checks` is off, and renaming a parent
/// column is not allowed while it is referenced), unless one of them is NULL.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ForeignKeyDef {
    /// The constraint's name, unique among the foreign keys of its database.
    pub name: String,
    pub columns: Vec<usize>,
    pub ref_db: String,
    pub ref_table: String,
    pub ref_columns: Vec<String>,
    /// `None`: not given (NO ACTION, and SHOW CREATE TABLE prints nothing).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_delete: Option<ForeignKeyAction>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_update: Option<ForeignKeyAction>,
}

impl ForeignKeyDef {
    /// What deleting a parent row does to this constraint's children.
    pub fn delete_action(&self) -> ForeignKeyAction {
        self.on_delete.unwrap_or(ForeignKeyAction::NoAction)
    }

    /// What changing a parent row's referenced columns does to its children.
    pub fn update_action(&self) -> ForeignKeyAction {
        self.on_update.unwrap_or(ForeignKeyAction::NoAction)
    }

    /// Whether the constraint references table `db.table`.
    pub fn references(&self, db: &str, table: &str) -> bool {
        self.ref_db == db && self.ref_table == table
    }
}

impl TableDef {
    pub fn new(name: &str, columns: Vec<Column>, primary_key: &[usize]) -> TableDef {
        TableDef {
            name: name.to_string(),
            columns,
            primary_key: primary_key.to_vec(),
            indexes: Vec::new(),
            file_id: 0,
            column_defaults: Vec::new(),
            auto_increment: None,
            foreign_keys: Vec::new(),
            column_on_update: Vec::new(),
            column_comments: Vec::new(),
            comment: String::new(),
            checks: Vec::new(),
            column_generated: Vec::new(),
            column_tinyint1: Vec::new(),
        }
    }

    /// Gives the CHECK constraints whose names were generated for table `old`
    /// (`old_chk_3`) the names they have under `new` (`new_chk_3`), as MySQL does
    /// when it renames a table.
    pub fn rename_generated_checks(&mut self, old: &str, new: &str) {
        for check in &mut self.checks {
            if let Some(n) = check.generated_number(old) {
                check.name = format!("{new}{GENERATED_CHECK_INFIX}{n}");
            }
        }
    }

    pub fn with_index(mut self, index: IndexDef) -> TableDef {
        self.indexes.push(index);
        self
    }

    /// Sets every column's DEFAULT text (one entry per column).
    pub fn with_defaults(mut self, defaults: Vec<Option<String>>) -> TableDef {
        self.column_defaults = defaults;
        self
    }

    /// Makes column `column` the AUTO_INCREMENT column, starting at `start`.
    pub fn with_auto_increment(mut self, column: usize, start: u64) -> TableDef {
        self.auto_increment = Some(AutoIncrement { column, start });
        self
    }

    /// Column `column`'s DEFAULT text, if it has one.
    pub fn column_default(&self, column: usize) -> Option<&str> {
        self.column_defaults.get(column).and_then(|d| d.as_deref())
    }

    /// Column `column`'s ON UPDATE text, if it has one.
    pub fn column_on_update(&self, column: usize) -> Option<&str> {
        self.column_on_update.get(column).and_then(|d| d.as_deref())
    }

    /// Column `column`'s COMMENT, empty if it has none.
    pub fn column_comment(&self, column: usize) -> &str {
        self.column_comments.get(column).map_or("", String::as_str)
    }

    /// Column `column`'s generation, if it is a generated column.
    pub fn column_generated(&self, column: usize) -> Option<&GeneratedColumn> {
        self.column_generated.get(column).and_then(Option::as_ref)
    }

    /// Whether column `column` is a generated column.
    pub fn is_generated(&self, column: usize) -> bool {
        self.column_generated(column).is_some()
    }

    /// Whether column `column` is a `tinyint(1)` (declared so, or BOOL / BOOLEAN).
    pub fn is_tinyint1(&self, column: usize) -> bool {
        self.column_tinyint1.get(column).copied().unwrap_or(false)
    }

    /// The position of column `name` (case-insensitive, as MySQL column names are).
    pub fn column_index(&self, name: &str) -> Result<usize> {
        self.columns
            .iter()
            .position(|c| c.name.eq_ignore_ascii_case(name))
            .ok_or_else(|| Error::UnknownColumn(name.to_string()))
    }

    /// Checks the definition: column types, names, key columns, index names.
    pub fn validate(&self) -> Result<()> {
        let bad = |reason: String| Err(Error::InvalidDefinition(reason));
        if self.columns.is_empty() {
            return bad(format!("table '{}' has no columns", self.name));
        }
        if self.columns.len() > tarn_row::limits::COLUMNS_MAX {
            return bad(format!(
                "table '{}' has {} columns; at most {} are allowed",
                self.name,
                self.columns.len(),
                tarn_row::limits::COLUMNS_MAX
            ));
        }
        for (i, column) in self.columns.iter().enumerate() {
            column.ty.validate()?;
            if self.columns[..i]
                .iter()
                .any(|c| c.name.eq_ignore_ascii_case(&column.name))
            {
                return bad(format!("duplicate column name '{}'", column.name));
            }
        }
        self.check_key_columns("PRIMARY", &self.primary_key, None)?;
        for &c in &self.primary_key {
            if self.columns[c].nullable {
                return bad(format!(
                    "primary key column '{}' must be NOT NULL",
                    self.columns[c].name
                ));
            }
        }
        if self.indexes.len() > tarn_common::limits::INDEXES_PER_TABLE_MAX {
            return bad(format!(
                "table '{}' has more than {} indexes",
                self.name,
                tarn_common::limits::INDEXES_PER_TABLE_MAX
            ));
        }
        for (i, index) in self.indexes.iter().enumerate() {
            if index.name.eq_ignore_ascii_case("PRIMARY")
                || self.indexes[..i]
                    .iter()
                    .any(|o| o.name.eq_ignore_ascii_case(&index.name))
            {
                return Err(Error::IndexExists(index.name.clone()));
            }
            if index.columns.is_empty() {
                return bad(format!("index '{}' has no columns", index.name));
            }
            self.check_key_columns(&index.name, &index.columns, Some(index))?;
            self.check_prefix_lens(index)?;
        }
        self.validate_defaults()?;
        self.validate_foreign_keys()?;
        self.validate_checks()?;
        self.validate_auto_increment()
    }

    /// An index's prefix lengths: none, or one per column, and a prefix only on a
    /// string column (the SQL layer refuses the rest with MySQL's 1089 first).
    fn check_prefix_lens(&self, index: &IndexDef) -> Result<()> {
        if !index.prefix_lens.is_empty() && index.prefix_lens.len() != index.columns.len() {
            return Err(Error::InvalidDefinition(format!(
                "index '{}' has {} prefix lengths for {} columns",
                index.name,
                index.prefix_lens.len(),
                index.columns.len()
            )));
        }
        for (part, &c) in index.columns.iter().enumerate() {
            let ty = self.columns[c].ty;
            if index.prefix_len(part).is_some() && !(ty.is_text() || ty.is_binary_string()) {
                return Err(Error::InvalidDefinition(format!(
                    "index '{}' has a prefix of column '{}', which is not a string",
                    index.name, self.columns[c].name
                )));
            }
        }
        Ok(())
    }

    /// At most `CHECKS_PER_TABLE_MAX` CHECK constraints, with distinct non-empty
    /// names and clauses within `CHECK_CLAUSE_TEXT_BYTES_MAX`.
    fn validate_checks(&self) -> Result<()> {
        let bad = |reason: String| Err(Error::InvalidDefinition(reason));
        if self.checks.len() > tarn_common::limits::CHECKS_PER_TABLE_MAX {
            return bad(format!(
                "table '{}' has more than {} CHECK constraints",
                self.name,
                tarn_common::limits::CHECKS_PER_TABLE_MAX
            ));
        }
        for (i, check) in self.checks.iter().enumerate() {
            if check.name.is_empty() || check.clause.is_empty() {
                return bad(format!(
                    "table '{}' has an empty CHECK constraint",
                    self.name
                ));
            }
            if check.clause.len() > tarn_common::limits::CHECK_CLAUSE_TEXT_BYTES_MAX {
                return bad(format!(
                    "the condition of CHECK constraint '{}' is longer than {} bytes",
                    check.name,
                    tarn_common::limits::CHECK_CLAUSE_TEXT_BYTES_MAX
                ));
            }
            if self.checks[..i]
                .iter()
                .any(|c| c.name.eq_ignore_ascii_case(&check.name))
            {
                return Err(Error::sql(
                    3822,
                    "HY000",
                    format!("Duplicate check constraint name '{}'.", check.name),
                ));
            }
        }
        Ok(())
    }

    /// Each foreign key has columns of this table, as many as it references, and an
    /// index of this table that starts with them (the SQL layer adds one if needed).
    fn validate_foreign_keys(&self) -> Result<()> {
        for fk in &self.foreign_keys {
            self.check_key_columns(&fk.name, &fk.columns, None)?;
            if fk.columns.len() != fk.ref_columns.len() || fk.columns.is_empty() {
                return Err(Error::InvalidDefinition(format!(
                    "foreign key '{}' has {} columns and references {}",
                    fk.name,
                    fk.columns.len(),
                    fk.ref_columns.len()
                )));
            }
            if self.index_starting_with(&fk.columns).is_none() {
                return Err(Error::InvalidDefinition(format!(
                    "foreign key '{}' has no index of its columns",
                    fk.name
                )));
            }
        }
        Ok(())
    }

    /// The name of an index whose leading columns are `columns` (in order):
    /// `PRIMARY` first, then the secondary indexes in order.
    pub fn index_starting_with(&self, columns: &[usize]) -> Option<&str> {
        let leads = |index: &[usize]| index.len() >= columns.len() && index.starts_with(columns);
        if !columns.is_empty() && leads(&self.primary_key) {
            return Some("PRIMARY");
        }
        // A prefix part cannot serve: lookups through it find rows to re-check, and
        // MySQL does not take it for a foreign key either.
        self.indexes
            .iter()
            .find(|i| leads(&i.columns) && (0..columns.len()).all(|p| i.prefix_len(p).is_none()))
            .map(|i| i.name.as_str())
    }

    fn validate_defaults(&self) -> Result<()> {
        for (what, len) in [
            ("column defaults", self.column_defaults.len()),
            ("ON UPDATE clauses", self.column_on_update.len()),
            ("column comments", self.column_comments.len()),
            ("generated columns", self.column_generated.len()),
            ("tinyint(1) marks", self.column_tinyint1.len()),
        ] {
            if len != 0 && len != self.columns.len() {
                return Err(Error::InvalidDefinition(format!(
                    "table '{}' has {len} {what} for {} columns",
                    self.name,
                    self.columns.len()
                )));
            }
        }
        for (column, &tinyint1) in self.columns.iter().zip(&self.column_tinyint1) {
            if tinyint1 && !matches!(column.ty, tarn_row::ColumnType::TinyInt { .. }) {
                return Err(Error::InvalidDefinition(format!(
                    "column '{}' is marked tinyint(1) but is not a TINYINT",
                    column.name
                )));
            }
        }
        let max = tarn_common::limits::COLUMN_DEFAULT_TEXT_BYTES_MAX;
        for (column, default) in self.columns.iter().zip(&self.column_defaults) {
            if default.as_ref().is_some_and(|d| d.len() > max) {
                return Err(invalid_default(&column.name));
            }
        }
        for (column, generated) in self.columns.iter().zip(&self.column_generated) {
            if generated.as_ref().is_some_and(|g| {
                g.expr.is_empty()
                    || g.expr.len() > tarn_common::limits::GENERATED_COLUMN_TEXT_BYTES_MAX
            }) {
                return Err(Error::InvalidDefinition(format!(
                    "the expression of generated column '{}' is empty or longer than {} bytes",
                    column.name,
                    tarn_common::limits::GENERATED_COLUMN_TEXT_BYTES_MAX
                )));
            }
        }
        Ok(())
    }

    /// MySQL's rules for the AUTO_INCREMENT column: an integer column (1063), without
    /// a DEFAULT (1067), that is the first column of the primary key or of an index
    /// (1075).
    fn validate_auto_increment(&self) -> Result<()> {
        let Some(auto) = self.auto_increment else {
            return Ok(());
        };
        let Some(column) = self.columns.get(auto.column) else {
            return Err(wrong_auto_key());
        };
        if column.ty.int_range().is_none() {
            return Err(Error::sql(
                1063, // ER_WRONG_FIELD_SPEC
                "42000",
                format!("Incorrect column specifier for column '{}'", column.name),
            ));
        }
        if self.column_default(auto.column).is_some() {
            return Err(invalid_default(&column.name));
        }
        let leads = |columns: &[usize]| columns.first() == Some(&auto.column);
        if !leads(&self.primary_key) && !self.indexes.iter().any(|i| leads(&i.columns)) {
            return Err(wrong_auto_key());
        }
        Ok(())
    }

    /// Checks the columns of a key: `prefixed` is the secondary index they belong to
    /// (None for the primary key, which takes no prefixes), whose prefix parts may be
    /// TEXT or BLOB columns.
    fn check_key_columns(
        &self,
        index: &str,
        columns: &[usize],
        prefixed: Option<&IndexDef>,
    ) -> Result<()> {
        for (i, &c) in columns.iter().enumerate() {
            if c >= self.columns.len() {
                return Err(Error::InvalidDefinition(format!(
                    "index '{index}' names column {c} of a table with {} columns",
                    self.columns.len()
                )));
            }
            if columns[..i].contains(&c) {
                return Err(Error::InvalidDefinition(format!(
                    "index '{index}' names column '{}' twice",
                    self.columns[c].name
                )));
            }
            if self.columns[c].ty.is_lob() && prefixed.is_none_or(|p| p.prefix_len(i).is_none()) {
                return Err(Error::InvalidDefinition(format!(
                    "BLOB/TEXT column '{}' used in key '{index}' without a key length",
                    self.columns[c].name
                )));
            }
            if self.columns[c].ty == tarn_row::ColumnType::Json {
                return Err(Error::InvalidDefinition(format!(
                    "JSON column '{}' used in key '{index}'",
                    self.columns[c].name
                )));
            }
        }
        Ok(())
    }
}

/// ER_WRONG_AUTO_KEY (1075).
pub(crate) fn wrong_auto_key() -> Error {
    Error::sql(
        1075,
        "42000",
        "Incorrect table definition; there can be only one auto column and it must be \
         defined as a key",
    )
}

/// ER_INVALID_DEFAULT (1067).
fn invalid_default(column: &str) -> Error {
    Error::sql(
        1067,
        "42000",
        format!("Invalid default value for '{column}'"),
    )
}

/// A view: its name, the text of its SELECT, and its explicit column list (`CREATE
/// VIEW v (a, b) AS ...`; empty: the SELECT's own names). The SQL layer parses and
/// checks the SELECT; the catalog only keeps it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ViewDef {
    pub name: String,
    pub sql: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub columns: Vec<String>,
}

impl ViewDef {
    pub fn new(name: &str, sql: &str, columns: &[&str]) -> ViewDef {
        ViewDef {
            name: name.to_string(),
            sql: sql.to_string(),
            columns: columns.iter().map(|c| c.to_string()).collect(),
        }
    }

    /// Checks what the catalog can: a name, a SELECT text within its bound, and
    /// distinct column names (1060, as MySQL).
    pub fn validate(&self) -> Result<()> {
        if self.name.is_empty() {
            return Err(Error::InvalidDefinition("a view needs a name".into()));
        }
        let max = tarn_common::limits::VIEW_DEFINITION_BYTES_MAX;
        if self.sql.trim().is_empty() || self.sql.len() > max {
            return Err(Error::InvalidDefinition(format!(
                "view '{}' has a definition of {} bytes; 1 to {max} are allowed",
                self.name,
                self.sql.len()
            )));
        }
        if self.columns.len() > tarn_row::limits::COLUMNS_MAX {
            return Err(Error::InvalidDefinition(format!(
                "view '{}' names more than {} columns",
                self.name,
                tarn_row::limits::COLUMNS_MAX
            )));
        }
        for (i, column) in self.columns.iter().enumerate() {
            if self.columns[..i]
                .iter()
                .any(|c| c.eq_ignore_ascii_case(column))
            {
                return Err(Error::sql(
                    1060, // ER_DUP_FIELDNAME
                    "42S21",
                    format!("Duplicate column name '{column}'"),
                ));
            }
        }
        Ok(())
    }
}

/// Everything the catalog file holds.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CatalogData {
    pub format: u32,
    pub next_file_id: u32,
    pub databases: BTreeMap<String, BTreeMap<String, TableDef>>,
    /// Views by database, then name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub views: BTreeMap<String, BTreeMap<String, ViewDef>>,
    /// Statistics of the last ANALYZE TABLE, by database, then table (kept apart from
    /// the definitions: ANALYZE replaces them without replacing the table's handle).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub stats: BTreeMap<String, BTreeMap<String, TableStats>>,
}

impl CatalogData {
    pub fn empty() -> CatalogData {
        CatalogData {
            format: CATALOG_FORMAT,
            next_file_id: FIRST_INDEX_FILE_ID,
            databases: BTreeMap::new(),
            views: BTreeMap::new(),
            stats: BTreeMap::new(),
        }
    }

    /// Tables and views in database `db` (which count together against
    /// `TABLES_PER_DATABASE_MAX`).
    pub fn object_count(&self, db: &str) -> usize {
        self.databases.get(db).map_or(0, BTreeMap::len)
            + self.views.get(db).map_or(0, BTreeMap::len)
    }

    /// The view `db.name`, if there is one.
    pub fn view(&self, db: &str, name: &str) -> Option<&ViewDef> {
        self.views.get(db).and_then(|views| views.get(name))
    }

    /// The statistics of table `db.name`, if it was analyzed.
    pub fn table_stats(&self, db: &str, name: &str) -> Option<&TableStats> {
        self.stats.get(db).and_then(|tables| tables.get(name))
    }

    /// Sets (or with `None` removes) the statistics of table `db.name`.
    pub fn set_table_stats(&mut self, db: &str, name: &str, stats: Option<TableStats>) {
        match stats {
            Some(stats) => {
                self.stats
                    .entry(db.to_string())
                    .or_default()
                    .insert(name.to_string(), stats);
            }
            None => {
                if let Some(tables) = self.stats.get_mut(db) {
                    tables.remove(name);
                    if tables.is_empty() {
                        self.stats.remove(db);
                    }
                }
            }
        }
    }

    /// True if `db` has a table or a view called `name`.
    pub fn name_taken(&self, db: &str, name: &str) -> bool {
        self.databases
            .get(db)
            .is_some_and(|tables| tables.contains_key(name))
            || self.view(db, name).is_some()
    }

    /// Takes a fresh data file id.
    pub fn allocate_file_id(&mut self) -> Result<u32> {
        let id = self.next_file_id;
        self.next_file_id = id
            .checked_add(1)
            .ok_or_else(|| Error::OutOfResources("data file ids are exhausted".into()))?;
        Ok(id)
    }

    /// Reads the catalog of the data directory `dir` (an empty one if none exists).
    pub fn load(dir: &Path) -> Result<CatalogData> {
        let path = dir.join(CATALOG_FILE_NAME);
        let bytes = match fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(CatalogData::empty()),
            Err(e) => return Err(Error::io("read", path, e)),
        };
        let data: CatalogData = serde_json::from_slice(&bytes).map_err(|e| Error::DataDir {
            path: dir.to_path_buf(),
            reason: format!("{CATALOG_FILE_NAME} is unreadable: {e}"),
        })?;
        if data.format != CATALOG_FORMAT {
            return Err(Error::DataDir {
                path: dir.to_path_buf(),
                reason: format!(
                    "{CATALOG_FILE_NAME} has format {}; this build reads format {CATALOG_FORMAT}",
                    data.format
                ),
            });
        }
        data.check().map_err(|reason| Error::DataDir {
            path: dir.to_path_buf(),
            reason: format!("{CATALOG_FILE_NAME} is inconsistent: {reason}"),
        })?;
        Ok(data)
    }

    /// Checks what a damaged or hand-edited catalog could get wrong: every definition
    /// valid, every file id used once and below the next one to hand out.
    fn check(&self) -> std::result::Result<(), String> {
        let mut seen = std::collections::HashSet::new();
        for (db, tables) in &self.databases {
            for (name, def) in tables {
                if name != &def.name {
                    return Err(format!("table '{db}.{name}' is stored as '{}'", def.name));
                }
                def.validate()
                    .map_err(|e| format!("table '{db}.{name}': {e}"))?;
                let files =
                    std::iter::once(def.file_id).chain(def.indexes.iter().map(|i| i.file_id));
                for file_id in files {
                    if file_id < FIRST_INDEX_FILE_ID
                        || file_id >= self.next_file_id
                        || !seen.insert(file_id)
                    {
                        return Err(format!(
                            "table '{db}.{name}' names data file {file_id}, which is out of \
                             range or used twice"
                        ));
                    }
                }
            }
        }
        self.check_views()?;
        self.check_stats()
    }

    fn check_stats(&self) -> std::result::Result<(), String> {
        for (db, tables) in &self.stats {
            for (name, stats) in tables {
                let Some(def) = self.databases.get(db).and_then(|t| t.get(name)) else {
                    return Err(format!("statistics of '{db}.{name}', which does not exist"));
                };
                stats
                    .check(def)
                    .map_err(|e| format!("table '{db}.{name}': {e}"))?;
            }
        }
        Ok(())
    }

    fn check_views(&self) -> std::result::Result<(), String> {
        for (db, views) in &self.views {
            let Some(tables) = self.databases.get(db) else {
                return Err(format!("views of database '{db}', which does not exist"));
            };
            for (name, view) in views {
                if name != &view.name {
                    return Err(format!("view '{db}.{name}' is stored as '{}'", view.name));
                }
                if tables.contains_key(name) {
                    return Err(format!("'{db}.{name}' is both a table and a view"));
                }
                view.validate()
                    .map_err(|e| format!("view '{db}.{name}': {e}"))?;
            }
        }
        Ok(())
    }

    /// Replaces the catalog file atomically.
    pub fn store(&self, dir: &Path) -> Result<()> {
        let path = dir.join(CATALOG_FILE_NAME);
        let temp = dir.join(format!("{CATALOG_FILE_NAME}.tmp"));
        let json = serde_json::to_vec_pretty(self).expect("the catalog serialises");
        let write = || -> std::io::Result<()> {
            let mut file = fs::File::create(&temp)?;
            file.write_all(&json)?;
            file.sync_all()?;
            fs::rename(&temp, &path)?;
            fs::File::open(dir)?.sync_all()
        };
        write().map_err(|e| Error::io("write", &path, e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A table written before CHECK constraints were kept loads without any; an
    /// enforced one is stored without its flag, a NOT ENFORCED one with it, and both
    /// read back as they were.
    #[test]
    fn generated_columns_are_optional_in_the_file_and_round_trip() {
        let int = tarn_row::ColumnType::Int { unsigned: false };
        let columns = vec![Column::new("a", int, true), Column::new("c", int, true)];
        let old = serde_json::to_string(&TableDef::new("t", columns, &[])).expect("json");
        assert!(!old.contains("generated"), "{old}");
        let mut def: TableDef = serde_json::from_str(&old).expect("an old definition loads");
        assert!(!def.is_generated(1));
        def.column_generated = vec![
            None,
            Some(GeneratedColumn {
                expr: "(`a` + 1)".into(),
                stored: false,
            }),
        ];
        def.validate().expect("valid");
        let text = serde_json::to_string(&def).expect("serialises");
        assert!(!text.contains("stored"), "VIRTUAL is the default: {text}");
        let back: TableDef = serde_json::from_str(&text).expect("reads back");
        assert_eq!(back, def);
        assert!(back.is_generated(1) && !back.is_generated(0));
        // One entry per column, and no empty expression.
        let mut bad = back.clone();
        bad.column_generated.pop();
        assert!(bad.validate().is_err());
        let mut bad = back;
        bad.column_generated[1] = Some(GeneratedColumn {
            expr: String::new(),
            stored: true,
        });
        assert!(bad.validate().is_err());
    }

    /// A table written before `tinyint(1)` marks were kept loads without any; the
    /// marks round-trip, and only a TINYINT column may carry one.
    #[test]
    fn tinyint1_marks_are_optional_in_the_file_and_round_trip() {
        let tiny = tarn_row::ColumnType::TinyInt { unsigned: true };
        let int = tarn_row::ColumnType::Int { unsigned: false };
        let columns = vec![Column::new("a", int, true), Column::new("b", tiny, true)];
        let old = serde_json::to_string(&TableDef::new("t", columns, &[])).expect("json");
        assert!(!old.contains("tinyint1"), "{old}");
        let mut def: TableDef = serde_json::from_str(&old).expect("an old definition loads");
        assert!(!def.is_tinyint1(0) && !def.is_tinyint1(1));
        def.column_tinyint1 = vec![false, true];
        def.validate().expect("valid");
        let back: TableDef =
            serde_json::from_str(&serde_json::to_string(&def).expect("json")).expect("reads");
        assert_eq!(back, def);
        assert!(back.is_tinyint1(1) && !back.is_tinyint1(0));
        let mut bad = back.clone();
        bad.column_tinyint1.pop();
        assert!(bad.validate().is_err(), "one entry per column");
        let mut bad = back;
        bad.column_tinyint1[0] = true;
        assert!(bad.validate().is_err(), "an INT is not a tinyint(1)");
    }

    #[test]
    fn checks_are_optional_in_the_file_and_round_trip() {
        let column = Column::new("a", tarn_row::ColumnType::Int { unsigned: false }, true);
        let old = serde_json::to_string(&TableDef::new("t", vec![column], &[])).expect("json");
        assert!(!old.contains("checks"), "{old}");
        let def: TableDef = serde_json::from_str(&old).expect("an old definition loads");
        assert!(def.checks.is_empty());
        let mut def = def;
        def.checks = vec![
            CheckDef {
                name: "t_chk_1".into(),
                clause: "(`a` > 0)".into(),
                enforced: true,
            },
            CheckDef {
                name: "lazy".into(),
                clause: "(`a` < 9)".into(),
                enforced: false,
            },
        ];
        def.validate().expect("valid");
        let text = serde_json::to_string(&def).expect("serialises");
        assert_eq!(text.matches("enforced").count(), 1, "{text}");
        let back: TableDef = serde_json::from_str(&text).expect("reads back");
        assert_eq!(back, def);
        // Generated names follow the table; others stay.
        let mut renamed = back;
        renamed.rename_generated_checks("T", "u");
        let names: Vec<&str> = renamed.checks.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["u_chk_1", "lazy"]);
        // Names are unique in a table, whatever their case (3822).
        renamed.checks[1].name = "U_CHK_1".into();
        assert!(renamed.validate().is_err());
    }
}
