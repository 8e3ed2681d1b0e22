//! ALTER TABLE: the operations of one statement folded into a draft of the table's
//! definition, then one change of the table.
//!
//! MySQL applies the operations of an `ALTER TABLE` together: `ALTER TABLE t MODIFY a
//! BIGINT, ADD INDEX (b), RENAME COLUMN c TO d` happens whole or not at all. Tarn does
//! the same by folding the operations, in their written order, into a [`Draft`]: the
//! new definition plus, for each of its columns, where its values come from (an old
//! column, or one value for every row of an added column). Then exactly one of:
//!
//! - **in place** (`Storage::alter_in_place`) when every stored row stays as it is:
//!   columns renamed, DEFAULTs set or dropped, AUTO_INCREMENT taken off or put on a
//!   column, a TINYINT made `tinyint(1)` or not (`TableDef::column_tinyint1`),
//!   members appended to an ENUM or SET without changing its width
//!   (`ColumnType::stores_like`), indexes renamed, dropped, or added (built from the
//!   rows);
//! - **rebuild** (`Storage::rebuild_table`) when rows change: columns added, dropped,
//!   moved (FIRST / AFTER), or given another type, nullability or collation. Every row
//!   is copied into new files through [`Conversion::apply`], which converts a value
//!   whose column type changed with INSERT's strict-mode rules
//!   ([`cast::to_column_at`]): a value that does not fit is 1264, 1265 (a string cut)
//!   or 1366 `at row N`, N counting rows in primary-key order as MySQL's copy does;
//!   NULL in a column made NOT NULL is 1138 (MySQL 8 in strict mode). An error leaves
//!   the table as it was; a crash keeps either the old files or the new ones (see
//!   `Storage::rebuild_table`). Indexes are built anew from the copied rows, so an
//!   index over a column whose type changed holds the converted values.
//!
//! Then, if the statement asks, `AUTO_INCREMENT = n` and `RENAME [TO | AS] t2` follow
//! as changes of their own; a taken new name or a missing database is checked before
//! anything changes.
//!
//! Column names in MODIFY, CHANGE, DROP, RENAME COLUMN, ALTER COLUMN, FIRST / AFTER
//! and added indexes are looked up in the draft as the earlier operations left it.
//! (MySQL looks some of them up in the original table, so `ADD c INT, MODIFY c
//! BIGINT` is its 1054 and allowed here.) `ALGORITHM = ..` and `LOCK = ..` are
//! accepted and ignored: which of the two paths runs depends only on the change.
//!
//! CHECK constraints ([`crate::checks`]) are added, dropped (`DROP CHECK`, `DROP
//! CONSTRAINT`) and switched on or off (`ALTER CHECK c [NOT] ENFORCED`) in the draft
//! like the rest. Rows are checked against them before the change is made: on a
//! rebuild every copied row against every enforced constraint (MySQL's COPY does
//! so), in place the existing rows against the constraints the statement adds or
//! enforces; a row that fails is 3819 and the table stays as it was. A column a
//! constraint uses cannot be renamed or dropped (3959), except that dropping the one
//! column a constraint uses drops the constraint too.
//!
//! Affected rows: the rows copied when a column's type changed (MySQL 8 copies the
//! table then, ALGORITHM=COPY, and reports them), else 0.

use std::cell::Cell;

use sqlparser::ast::{self, AlterTableOperation as Op, ColumnOption, TableConstraint};
use tarn_catalog::TableDef;
use tarn_catalog::catalog::AutoIncrement;
use tarn_common::{Error, Result};
use tarn_row::Value;
use tarn_row::types::{Column, ColumnType};

use crate::bind::{BindContext, Binder};
use crate::ddl::{column_spec, index_key_parts, named_index, unsupported};
use crate::scalar::cast;
use crate::session::{QueryResult, Session};

/// Runs `ALTER TABLE` (every form but `{DISABLE | ENABLE} KEYS`, which the session
/// answers itself).
pub(crate) fn alter_table(session: &mut Session, alter: &ast::AlterTable) -> Result<QueryResult> {
    let (db, name) = Binder::new(session).table_ref(&alter.name)?;
    let storage = session.engine().storage().clone();
    let table = BindContext::table(session, &db, &name)?;
    // A temporary table changes in its session's hidden database (`temporary.rs`).
    let temporary = session.is_temporary(&db, &name);
    let storage_db = session.storage_database(&db, &name);
    let mut draft = Draft::new(table.def(), (!temporary).then(|| storage_db.clone()));
    let mut auto_increment = None;
    let mut rename = None;
    let mut foreign_keys = Vec::new();
    // ENGINE = InnoDB / FORCE: rebuild the table as OPTIMIZE does.
    let mut rebuild = false;
    // CONVERT TO CHARACTER SET: the collation every text column takes.
    let mut convert = None;
    for op in &alter.operations {
        match op {
            Op::AddConstraint {
                constraint: TableConstraint::ForeignKey(fk),
                ..
            } if !temporary => foreign_keys.push(fk),
            Op::RenameTable { table_name } => {
                let target = match table_name {
                    ast::RenameTableNameKind::As(n) | ast::RenameTableNameKind::To(n) => n,
                };
                rename = Some(Binder::new(session).table_ref(target)?);
            }
            Op::AutoIncrement { value, .. } => {
                let text = value.to_string();
                auto_increment = Some(text.parse::<u64>().map_err(|_| {
                    Error::sql(
                        1064,
                        "42000",
                        format!("Incorrect AUTO_INCREMENT value '{text}'"),
                    )
                })?);
            }
            Op::Algorithm { .. } | Op::Lock { .. } => {}
            Op::SetTblProperties { table_properties } => {
                for option in table_properties {
                    match table_option(option)? {
                        Some(TableOption::Rebuild) => rebuild = true,
                        Some(TableOption::Collation(collation)) => convert = Some(collation),
                        Some(TableOption::Ignored) => {}
                        None => draft.apply(
                            session,
                            &Op::SetTblProperties {
                                table_properties: vec![option.clone()],
                            },
                        )?,
                    }
                }
            }
            other => draft.apply(session, other)?,
        }
    }
    let added = foreign_keys.len();
    if added > 0 {
        // The constraints' checks read the columns' generation as the draft has it.
        draft.def.column_generated = draft.finished().column_generated;
        crate::foreign_keys::add_constraints(session, &storage_db, &mut draft.def, &foreign_keys)?;
        let new = &draft.def.foreign_keys[draft.def.foreign_keys.len() - added..];
        if session.variables().hot().foreign_key_checks {
            crate::foreign_keys::check_existing_rows(&storage, &table, new)?;
        }
    }
    if !temporary {
        crate::foreign_keys::check_index_drop(&storage, &storage_db, table.def(), &draft.def)?;
    }
    let rename = rename.filter(|target| *target != (db.clone(), name.clone()));
    if temporary && rename.is_some() {
        return Err(crate::temporary::unsupported("ALTER TABLE ... RENAME"));
    }
    if let Some((new_db, new_name)) = &rename {
        if !storage.databases().iter().any(|d| d == new_db) {
            return Err(Error::UnknownDatabase(new_db.clone()));
        }
        let taken = storage.table(new_db, new_name).is_ok()
            || storage.view(new_db, new_name).ok().flatten().is_some();
        if taken {
            return Err(Error::TableExists(new_name.clone()));
        }
        // The draft's CHECK constraints under the new name must not meet another
        // table's in the target database (3822).
        let mut renamed = draft.def.clone();
        renamed.rename_generated_checks(&name, new_name);
        let skip = if *new_db == db { name.as_str() } else { "" };
        if let Some(c) = renamed
            .checks
            .iter()
            .find(|c| crate::checks::name_taken(session, new_db, skip, &c.name))
        {
            return Err(crate::checks::duplicate_name(&c.name));
        }
    }
    // Referenced columns of this table: a dropped one is 1829; a renamed one is
    // renamed in the foreign keys that reference it, after the change (MySQL 8).
    let renamed = if temporary {
        Vec::new()
    } else {
        draft.referenced_column_changes(&storage, &storage_db, &name)?
    };
    if !temporary && session.variables().hot().foreign_key_checks {
        crate::foreign_keys::check_altered_table(&storage, &storage_db, &draft.def, &renamed)?;
    }
    if let Some(collation) = convert {
        for column in &mut draft.def.columns {
            if column.ty.has_collation() {
                column.collation = collation;
            }
        }
    }
    crate::generated::check_definition(session, &draft.finished())?;
    let checks = draft.rows_checks(session, &table)?;
    let rebuild = rebuild && !draft.rows_change();
    let affected = draft.execute(&storage, &storage_db, &name, checks.as_ref(), session)?;
    if rebuild {
        // What OPTIMIZE TABLE does (`maintenance.rs`): new files with the rows as
        // they are.
        let def = storage.table(&storage_db, &name)?.def().clone();
        storage.rebuild_table(&storage_db, &name, def, &mut |_, row| Ok(row))?;
    }
    if !renamed.is_empty() {
        crate::foreign_keys::rename_referenced_columns(&storage, &storage_db, &name, &renamed)?;
    }
    if let Some(value) = auto_increment {
        storage.set_auto_increment(&storage_db, &name, value)?;
    }
    if let Some((new_db, new_name)) = rename {
        storage.rename_table(&db, &name, &new_db, &new_name)?;
    }
    Ok(QueryResult::ok(affected))
}

/// What an ALTER TABLE option of `parse::special::table_option` asks for.
enum TableOption {
    /// `ENGINE = InnoDB`, `FORCE`: copy the rows into new files.
    Rebuild,
    /// `CONVERT TO CHARACTER SET utf8mb4 [COLLATE c]`: every text column's collation.
    Collation(tarn_row::types::Collation),
    /// `ROW_FORMAT = ..`, `[DEFAULT] CHARACTER SET utf8mb4`, `[DEFAULT] COLLATE c`:
    /// Tarn has one row format and stores all text as utf8mb4; a table keeps no
    /// default collation of its own (new columns take utf8mb4's).
    Ignored,
}

/// Reads one of the options `parse::special::table_option` makes; None for any
/// other (COMMENT, which the draft takes).
fn table_option(option: &ast::SqlOption) -> Result<Option<TableOption>> {
    use crate::parse::table_option_key as key;
    let ast::SqlOption::KeyValue { key: name, value } = option else {
        return Ok(None);
    };
    let (value, collation) = match value {
        ast::Expr::Identifier(ident) => (ident.value.as_str(), None),
        ast::Expr::CompoundIdentifier(parts) if parts.len() == 2 => {
            (parts[0].value.as_str(), Some(parts[1].value.as_str()))
        }
        _ => return Ok(None),
    };
    let option = match name.value.as_str() {
        key::FORCE => TableOption::Rebuild,
        key::ENGINE => {
            if !value.eq_ignore_ascii_case("InnoDB") {
                // MySQL with NO_ENGINE_SUBSTITUTION (its default sql_mode).
                return Err(Error::sql(
                    1286,
                    "42000",
                    format!("Unknown storage engine '{value}'"),
                ));
            }
            TableOption::Rebuild
        }
        key::ROW_FORMAT => {
            const FORMATS: [&str; 6] = [
                "DEFAULT",
                "DYNAMIC",
                "COMPACT",
                "REDUNDANT",
                "COMPRESSED",
                "FIXED",
            ];
            if !FORMATS.iter().any(|f| f.eq_ignore_ascii_case(value)) {
                return Err(crate::parse::syntax_error_near(value, 1));
            }
            TableOption::Ignored
        }
        key::CHARSET => {
            crate::ddl::utf8mb4_collation(Some(value), collation)?;
            TableOption::Ignored
        }
        key::COLLATE => {
            crate::ddl::utf8mb4_collation(None, Some(value))?;
            TableOption::Ignored
        }
        key::CONVERT => {
            let name = crate::ddl::utf8mb4_collation(Some(value), collation)?;
            // As a column's COLLATE is read (`ddl::column_spec`).
            TableOption::Collation(if name.ends_with("_bin") {
                tarn_row::types::Collation::Binary
            } else {
                tarn_row::types::Collation::CaseInsensitive
            })
        }
        _ => return Ok(None),
    };
    Ok(Some(option))
}

/// ER_DROP_INDEX_FK (1553).
pub(crate) fn index_needed_error(index: &str) -> Error {
    Error::sql(
        1553,
        "HY000",
        format!("Cannot drop index '{index}': needed in a foreign key constraint"),
    )
}

/// Where a column of the new definition takes its values from.
#[derive(Clone, Debug)]
enum Source {
    /// The old table's column at this position.
    Old(usize),
    /// This value in every row (an added column: its DEFAULT, NULL, or the type's
    /// implicit default for NOT NULL).
    Fill(Value),
}

/// What the catalog keeps of a column beside the column itself.
#[derive(Clone, Debug, Default)]
struct ColumnExtras {
    default: Option<String>,
    on_update: Option<String>,
    /// Empty for none.
    comment: String,
    generated: Option<tarn_catalog::GeneratedColumn>,
    /// Declared `tinyint(1)`, BOOL or BOOLEAN (`TableDef::column_tinyint1`).
    tinyint1: bool,
}

/// Key prefixes after MODIFY or CHANGE, as MySQL 8 refits them: a prefix of a
/// column that is no longer a string, or at least as long as its new CHAR, VARCHAR,
/// BINARY or VARBINARY length, becomes the whole column (and its index is built
/// anew). A TEXT or BLOB column left without a prefix is refused by the catalog.
fn fit_prefixes(def: &mut TableDef) {
    for index in &mut def.indexes {
        if !index.has_prefix() {
            continue;
        }
        let mut lens = index.prefix_lens.clone();
        for (part, &c) in index.columns.iter().enumerate() {
            let ty = def.columns[c].ty;
            let column_len = match ty {
                ColumnType::Char { len } | ColumnType::VarChar { len } => Some(len),
                ColumnType::Binary { len_bytes } | ColumnType::VarBinary { len_bytes } => {
                    Some(len_bytes)
                }
                _ => None,
            };
            let string = ty.is_text() || ty.is_binary_string();
            if !string || column_len.is_some_and(|len| lens[part] >= len) {
                lens[part] = 0;
            }
        }
        let fitted = index.clone().with_prefix_lens(lens);
        if fitted.prefix_lens != index.prefix_lens {
            *index = fitted;
            index.file_id = 0;
        }
    }
}

/// The table's definition as the statement's operations so far leave it.
struct Draft<'t> {
    old: &'t TableDef,
    /// The database whose CHECK constraint names the table's must differ from;
    /// `None` for a temporary table.
    checks_db: Option<String>,
    /// Columns, primary key, indexes (an index kept from the old table keeps its file
    /// id; a new or changed one has file id 0), AUTO_INCREMENT and the table's
    /// COMMENT.
    def: TableDef,
    /// One DEFAULT, ON UPDATE, COMMENT, generation and `tinyint(1)` mark per column
    /// of `def`.
    extras: Vec<ColumnExtras>,
    /// One source per column of `def`.
    sources: Vec<Source>,
}

impl<'t> Draft<'t> {
    fn new(old: &'t TableDef, checks_db: Option<String>) -> Draft<'t> {
        let width = old.columns.len();
        Draft {
            old,
            checks_db,
            def: old.clone(),
            extras: (0..width)
                .map(|c| ColumnExtras {
                    default: old.column_default(c).map(str::to_string),
                    on_update: old.column_on_update(c).map(str::to_string),
                    comment: old.column_comment(c).to_string(),
                    generated: old.column_generated(c).cloned(),
                    tinyint1: old.is_tinyint1(c),
                })
                .collect(),
            sources: (0..width).map(Source::Old).collect(),
        }
    }

    fn apply(&mut self, session: &mut Session, op: &Op) -> Result<()> {
        match op {
            Op::AddColumn {
                column_def,
                column_position,
                if_not_exists,
                ..
            } => {
                if *if_not_exists && self.def.column_index(&column_def.name.value).is_ok() {
                    return Ok(());
                }
                self.add_column(session, column_def, column_position.as_ref())
            }
            Op::DropColumn {
                column_names,
                if_exists,
                ..
            } => column_names
                .iter()
                .try_for_each(|c| self.drop_column(session, &c.value, *if_exists)),
            Op::ModifyColumn {
                col_name,
                data_type,
                options,
                column_position,
            } => self.change_column(
                session,
                col_name,
                col_name,
                data_type,
                options,
                column_position.as_ref(),
            ),
            Op::ChangeColumn {
                old_name,
                new_name,
                data_type,
                options,
                column_position,
            } => self.change_column(
                session,
                old_name,
                new_name,
                data_type,
                options,
                column_position.as_ref(),
            ),
            Op::RenameColumn {
                old_column_name,
                new_column_name,
            } => {
                let position = self.position(&old_column_name.value)?;
                self.check_free_name(&new_column_name.value, Some(position))?;
                self.check_rename(session, position, &new_column_name.value)?;
                self.def.columns[position].name = new_column_name.value.clone();
                Ok(())
            }
            Op::AlterColumn { column_name, op } => {
                let position = self.position(&column_name.value)?;
                match op {
                    ast::AlterColumnOperation::SetDefault { value } => {
                        Binder::new(session).bind_constant(value)?;
                        let column = &self.def.columns[position];
                        // Kept in the column's form, as CREATE TABLE keeps it.
                        let text = match column.ty {
                            tarn_row::ColumnType::Enum { .. }
                            | tarn_row::ColumnType::Set { .. }
                            | tarn_row::ColumnType::Bit { .. } => {
                                crate::ddl::default_literal(session, column, value)?
                            }
                            ty => crate::ddl::default_text(session, ty, &column.name, value)?,
                        };
                        default_value(session, &self.def.columns[position], &text)?;
                        self.extras[position].default = Some(text);
                        Ok(())
                    }
                    ast::AlterColumnOperation::DropDefault => {
                        self.extras[position].default = None;
                        Ok(())
                    }
                    other => Err(unsupported(format!("ALTER COLUMN .. {other}"))),
                }
            }
            Op::AddConstraint { constraint, .. } => match constraint {
                TableConstraint::Index(ix) => {
                    let name = ix.name.as_ref().map(|n| n.value.clone());
                    self.add_index(name, &ix.columns, false)
                }
                TableConstraint::Unique(u) => {
                    let name = u
                        .name
                        .as_ref()
                        .or(u.index_name.as_ref())
                        .map(|n| n.value.clone());
                    self.add_index(name, &u.columns, true)
                }
                TableConstraint::Check(c) => {
                    let spec = crate::checks::CheckSpec::table_level(c);
                    self.add_checks(session, vec![spec])
                }
                // A temporary table's (the others are taken in `alter_table`): ignored,
                // as InnoDB's temporary tables have no foreign keys.
                TableConstraint::ForeignKey(_) => Ok(()),
                other => Err(unsupported(format!("ALTER TABLE ADD {other}"))),
            },
            Op::DropForeignKey { name, .. } => {
                let position = self
                    .def
                    .foreign_keys
                    .iter()
                    .position(|fk| fk.name.eq_ignore_ascii_case(&name.value))
                    .ok_or_else(|| {
                        Error::sql(
                            1091,
                            "42000",
                            format!("Can't DROP '{}'; check that column/key exists", name.value),
                        )
                    })?;
                // The index it used stays, as in MySQL.
                self.def.foreign_keys.remove(position);
                Ok(())
            }
            // `DROP CHECK c` (see `parse::special::alter_table`).
            Op::DropProjection { name, .. } => {
                let at = self
                    .check_position(&name.value)
                    .ok_or_else(|| crate::checks::not_found(&name.value))?;
                self.def.checks.remove(at);
                Ok(())
            }
            // `ALTER CHECK c [NOT] ENFORCED` (see `parse::special::alter_table`).
            Op::EnableRule { name } | Op::DisableRule { name } => {
                let at = self
                    .check_position(&name.value)
                    .ok_or_else(|| crate::checks::not_found(&name.value))?;
                self.def.checks[at].enforced = matches!(op, Op::EnableRule { .. });
                Ok(())
            }
            // MySQL 8.0.19's `DROP CONSTRAINT c`: a CHECK constraint, a foreign key
            // or a unique index of that name.
            Op::DropConstraint {
                name, if_exists, ..
            } => {
                if let Some(at) = self.check_position(&name.value) {
                    self.def.checks.remove(at);
                } else if let Some(at) = self
                    .def
                    .foreign_keys
                    .iter()
                    .position(|fk| fk.name.eq_ignore_ascii_case(&name.value))
                {
                    self.def.foreign_keys.remove(at);
                } else if let Some(at) = self
                    .index_position(&name.value)
                    .filter(|&at| self.def.indexes[at].unique)
                {
                    self.def.indexes.remove(at);
                } else if !*if_exists {
                    return Err(Error::sql(
                        3940,
                        "HY000",
                        format!("Constraint '{}' does not exist.", name.value),
                    ));
                }
                Ok(())
            }
            Op::DropIndex { name } => {
                let position = self.index_position(&name.value).ok_or_else(|| {
                    Error::sql(
                        1091,
                        "42000",
                        format!("Can't DROP '{}'; check that column/key exists", name.value),
                    )
                })?;
                self.def.indexes.remove(position);
                Ok(())
            }
            // `RENAME {INDEX | KEY} a TO b` (see `parse::special::alter_table`).
            Op::RenameConstraint { old_name, new_name } => {
                self.rename_index(&old_name.value, &new_name.value)
            }
            // `COMMENT [=] 'text'`, the one table option taken here (see
            // `parse::special::alter_table`).
            Op::SetTblProperties { table_properties } => {
                for option in table_properties {
                    let ast::SqlOption::Comment(
                        ast::CommentDef::WithEq(text) | ast::CommentDef::WithoutEq(text),
                    ) = option
                    else {
                        return Err(unsupported(format!("ALTER TABLE {option}")));
                    };
                    self.def.comment = crate::ddl::checked_comment(&self.def.name, text, true)?;
                }
                Ok(())
            }
            other => Err(unsupported(format!("ALTER TABLE {other}"))),
        }
    }

    /// For the columns of this table that foreign keys (of any table, this one too)
    /// reference: 1829 if the draft drops one, and the (old, new) names of those it
    /// renames.
    fn referenced_column_changes(
        &self,
        storage: &tarn_catalog::Storage,
        db: &str,
        name: &str,
    ) -> Result<Vec<(String, String)>> {
        let mut renamed = Vec::new();
        for child in storage.foreign_keys_referencing(db, name).iter() {
            for column in &child.fk.ref_columns {
                let Ok(old) = self.old.column_index(column) else {
                    continue;
                };
                let new = self
                    .sources
                    .iter()
                    .position(|s| matches!(s, Source::Old(i) if *i == old));
                match new {
                    None => {
                        return Err(Error::sql(
                            1829,
                            "HY000",
                            format!(
                                "Cannot drop column '{column}': needed in a foreign key \
                                 constraint '{}' of table '{}'",
                                child.fk.name, child.table
                            ),
                        ));
                    }
                    Some(j) if self.def.columns[j].name != self.old.columns[old].name => {
                        let pair = (
                            self.old.columns[old].name.clone(),
                            self.def.columns[j].name.clone(),
                        );
                        if !renamed.contains(&pair) {
                            renamed.push(pair);
                        }
                    }
                    Some(_) => {}
                }
            }
        }
        Ok(renamed)
    }

    /// The position of column `name`, or MySQL's 1054 naming the table.
    fn position(&self, name: &str) -> Result<usize> {
        self.def.column_index(name).map_err(|_| {
            Error::sql(
                1054,
                "42S22",
                format!("Unknown column '{name}' in '{}'", self.def.name),
            )
        })
    }

    /// 1060 if a column other than `except` is called `name`.
    fn check_free_name(&self, name: &str, except: Option<usize>) -> Result<()> {
        let taken = self
            .def
            .columns
            .iter()
            .enumerate()
            .any(|(i, c)| Some(i) != except && c.name.eq_ignore_ascii_case(name));
        if taken {
            return Err(Error::sql(
                1060,
                "42S21",
                format!("Duplicate column name '{name}'"),
            ));
        }
        Ok(())
    }

    fn check_position(&self, name: &str) -> Option<usize> {
        self.def
            .checks
            .iter()
            .position(|c| c.name.eq_ignore_ascii_case(name))
    }

    /// Adds CHECK constraints over the draft's columns as they are now.
    fn add_checks(
        &mut self,
        session: &mut Session,
        specs: Vec<crate::checks::CheckSpec>,
    ) -> Result<()> {
        let db = self.checks_db.clone();
        crate::checks::add_checks(session, db.as_deref(), &mut self.def, specs)
    }

    /// 3959 if a CHECK constraint uses column `position`, which is being renamed to
    /// `new_name` (a change of name only in letter case is no rename).
    fn check_rename(&self, session: &Session, position: usize, new_name: &str) -> Result<()> {
        let old_name = &self.def.columns[position].name;
        if old_name.eq_ignore_ascii_case(new_name) {
            return Ok(());
        }
        crate::generated::check_no_dependents(session, &self.finished(), position)?;
        for check in &self.def.checks {
            let used = crate::checks::clause_columns(session, &self.def, &check.clause)?;
            if used.contains(&position) {
                return Err(crate::checks::column_in_use(&check.name, old_name));
            }
        }
        Ok(())
    }

    /// The enforced CHECK constraints the rows must be checked against before the
    /// change: all of them when rows are copied (a column's type may have changed),
    /// else those the statement adds or enforces; `None` when there are none.
    fn rows_checks(
        &self,
        session: &Session,
        table: &tarn_catalog::Table,
    ) -> Result<Option<crate::checks::TableChecks>> {
        let mut def = self.finished();
        let rebuild = self.rows_change();
        def.checks.retain(|c| {
            c.enforced
                && (rebuild
                    || !self
                        .old
                        .checks
                        .iter()
                        .any(|o| o.enforced && o.name == c.name && o.clause == c.clause))
        });
        let checks = crate::checks::TableChecks::bind(session, &def)?;
        if let (Some(checks), false) = (&checks, rebuild) {
            crate::checks::check_existing_rows(session, table, checks)?;
            return Ok(None);
        }
        Ok(checks)
    }

    fn index_position(&self, name: &str) -> Option<usize> {
        self.def
            .indexes
            .iter()
            .position(|i| i.name.eq_ignore_ascii_case(name))
    }

    fn add_column(
        &mut self,
        session: &mut Session,
        column_def: &ast::ColumnDef,
        position: Option<&ast::MySQLColumnPosition>,
    ) -> Result<()> {
        let spec = column_spec(session, column_def)?;
        if spec.primary || spec.auto_increment {
            return Err(unsupported("ADD COLUMN with PRIMARY KEY or AUTO_INCREMENT"));
        }
        if spec.unique {
            crate::ddl::check_json_key(&spec.column)?;
        }
        self.check_free_name(&spec.column.name, None)?;
        // Existing rows get the new column's default (or NULL, or the type's implicit
        // default for NOT NULL).
        let fill = match &spec.default {
            Some(text) => default_value(session, &spec.column, text)?,
            None if spec.column.nullable => Value::Null,
            None => zero_value(spec.column.ty),
        };
        self.def.columns.push(spec.column);
        self.extras.push(ColumnExtras {
            default: spec.default,
            on_update: spec.on_update,
            comment: spec.comment,
            generated: spec.generated,
            tinyint1: spec.tinyint1,
        });
        self.sources.push(Source::Fill(fill));
        let at = self.def.columns.len() - 1;
        if spec.unique {
            self.add_unique_on(at);
        }
        self.add_checks(session, spec.checks)?;
        if let Some(position) = position {
            self.move_column(at, position)?;
        }
        Ok(())
    }

    fn drop_column(&mut self, session: &Session, name: &str, if_exists: bool) -> Result<()> {
        let Ok(position) = self.def.column_index(name) else {
            if if_exists {
                return Ok(());
            }
            return Err(Error::sql(
                1091,
                "42000",
                format!("Can't DROP '{name}'; check that column/key exists"),
            ));
        };
        if self.def.columns.len() == 1 {
            return Err(Error::sql(
                1090,
                "42000",
                "You can't delete all columns with ALTER TABLE; use DROP TABLE instead",
            ));
        }
        if self.def.primary_key.contains(&position) {
            return Err(unsupported(format!(
                "dropping column '{name}', which the primary key uses"
            )));
        }
        if let Some(fk) = self
            .def
            .foreign_keys
            .iter()
            .find(|fk| fk.columns.contains(&position))
        {
            return Err(Error::sql(
                1828,
                "HY000",
                format!(
                    "Cannot drop column '{}': needed in a foreign key constraint '{}'",
                    self.def.columns[position].name, fk.name
                ),
            ));
        }
        crate::generated::check_no_dependents(session, &self.finished(), position)?;
        // A CHECK constraint that uses only this column goes with it; one that uses
        // others too keeps the column (MySQL 8).
        let mut dropped_checks = Vec::new();
        for (i, check) in self.def.checks.iter().enumerate() {
            let used = crate::checks::clause_columns(session, &self.def, &check.clause)?;
            if used == [position] {
                dropped_checks.push(i);
            } else if used.contains(&position) {
                return Err(crate::checks::column_in_use(
                    &check.name,
                    &self.def.columns[position].name,
                ));
            }
        }
        for i in dropped_checks.into_iter().rev() {
            self.def.checks.remove(i);
        }
        if self
            .def
            .auto_increment
            .is_some_and(|a| a.column == position)
        {
            self.def.auto_increment = None;
        }
        // As MySQL: the column leaves every index that has it, and an index left
        // without columns is dropped. An index that changed is built anew.
        for index in &mut self.def.indexes {
            if index.columns.contains(&position) {
                index.remove_column(position);
                index.file_id = 0;
            }
        }
        self.def.indexes.retain(|i| !i.columns.is_empty());
        self.def.columns.remove(position);
        self.extras.remove(position);
        self.sources.remove(position);
        let shift = |c: usize| if c > position { c - 1 } else { c };
        self.remap(shift);
        Ok(())
    }

    /// MODIFY (`old_name` = `new_name`) and CHANGE: the column's whole definition is
    /// replaced, as in MySQL (what the new one does not say, such as a DEFAULT or
    /// AUTO_INCREMENT, is gone).
    fn change_column(
        &mut self,
        session: &mut Session,
        old_name: &ast::Ident,
        new_name: &ast::Ident,
        data_type: &ast::DataType,
        options: &[ColumnOption],
        position: Option<&ast::MySQLColumnPosition>,
    ) -> Result<()> {
        let at = self.position(&old_name.value)?;
        self.check_free_name(&new_name.value, Some(at))?;
        self.check_rename(session, at, &new_name.value)?;
        let column_def = ast::ColumnDef {
            name: new_name.clone(),
            data_type: data_type.clone(),
            options: options
                .iter()
                .map(|option| ast::ColumnOptionDef {
                    name: None,
                    option: option.clone(),
                })
                .collect(),
        };
        let mut spec = column_spec(session, &column_def)?;
        if self.def.primary_key.contains(&at) {
            if options.iter().any(|o| matches!(o, ColumnOption::Null)) {
                return Err(Error::sql(
                    1171,
                    "42000",
                    "All parts of a PRIMARY KEY must be NOT NULL; if you need NULL in a key, \
                     use UNIQUE instead",
                ));
            }
            // A primary key column is NOT NULL whether or not the definition says so.
            spec.column.nullable = false;
        }
        if spec.primary {
            if !self.def.primary_key.is_empty() {
                return Err(Error::sql(1068, "42000", "Multiple primary key defined"));
            }
            return Err(unsupported("adding a PRIMARY KEY"));
        }
        match (spec.auto_increment, self.def.auto_increment) {
            (true, Some(auto)) if auto.column != at => {
                return Err(Error::sql(
                    1075,
                    "42000",
                    "Incorrect table definition; there can be only one auto column and it \
                     must be defined as a key",
                ));
            }
            (true, None) => {
                self.def.auto_increment = Some(AutoIncrement {
                    column: at,
                    start: 1,
                });
            }
            (false, Some(auto)) if auto.column == at => self.def.auto_increment = None,
            _ => {}
        }
        if let Some(text) = &spec.default {
            default_value(session, &spec.column, text)?;
        }
        self.def.columns[at] = spec.column;
        self.extras[at] = ColumnExtras {
            default: spec.default,
            on_update: spec.on_update,
            comment: spec.comment,
            generated: spec.generated.take(),
            tinyint1: spec.tinyint1,
        };
        if spec.unique {
            self.add_unique_on(at);
        }
        let checks = std::mem::take(&mut spec.checks);
        self.add_checks(session, checks)?;
        if let Some(position) = position {
            self.move_column(at, position)?;
        }
        Ok(())
    }

    fn add_index(
        &mut self,
        name: Option<String>,
        columns: &[ast::IndexColumn],
        unique: bool,
    ) -> Result<()> {
        let parts = index_key_parts(&self.def.columns, columns)?;
        if let Some(name) = &name
            && (self.index_position(name).is_some() || name.eq_ignore_ascii_case("PRIMARY"))
        {
            return Err(Error::IndexExists(name.clone()));
        }
        let index = named_index(
            &self.def.columns,
            &self.def.indexes,
            name,
            parts.columns,
            unique,
        );
        self.def
            .indexes
            .push(index.with_prefix_lens(parts.prefix_lens));
        Ok(())
    }

    /// A column's inline UNIQUE: a unique index of its own, named as MySQL names it.
    fn add_unique_on(&mut self, column: usize) {
        let index = named_index(
            &self.def.columns,
            &self.def.indexes,
            None,
            vec![column],
            true,
        );
        self.def.indexes.push(index);
    }

    fn rename_index(&mut self, old: &str, new: &str) -> Result<()> {
        let at = self.index_position(old).ok_or_else(|| {
            Error::sql(
                1176,
                "42000",
                format!("Key '{old}' doesn't exist in table '{}'", self.def.name),
            )
        })?;
        if new.eq_ignore_ascii_case("PRIMARY") {
            return Err(Error::sql(
                1280,
                "42000",
                format!("Incorrect index name '{new}'"),
            ));
        }
        if self.index_position(new).is_some_and(|other| other != at) {
            return Err(Error::IndexExists(new.to_string()));
        }
        self.def.indexes[at].name = new.to_string();
        Ok(())
    }

    /// Moves column `from` to `FIRST` or `AFTER c`.
    fn move_column(&mut self, from: usize, position: &ast::MySQLColumnPosition) -> Result<()> {
        let mut order: Vec<usize> = (0..self.def.columns.len()).filter(|&c| c != from).collect();
        let at = match position {
            ast::MySQLColumnPosition::First => 0,
            ast::MySQLColumnPosition::After(after) => {
                let after_position = self.position(&after.value)?;
                if after_position == from {
                    return Err(Error::sql(
                        1054,
                        "42S22",
                        format!("Unknown column '{}' in '{}'", after.value, self.def.name),
                    ));
                }
                order
                    .iter()
                    .position(|&c| c == after_position)
                    .expect("another column")
                    + 1
            }
        };
        order.insert(at, from);
        // order[new position] = current position.
        let mut inverse = vec![0; order.len()];
        for (new, &current) in order.iter().enumerate() {
            inverse[current] = new;
        }
        self.def.columns = order.iter().map(|&c| self.def.columns[c].clone()).collect();
        self.extras = order.iter().map(|&c| self.extras[c].clone()).collect();
        self.sources = order.iter().map(|&c| self.sources[c].clone()).collect();
        self.remap(|c| inverse[c]);
        Ok(())
    }

    /// Renumbers the column positions keys refer to.
    fn remap(&mut self, f: impl Fn(usize) -> usize) {
        self.def.primary_key = self.def.primary_key.iter().map(|&c| f(c)).collect();
        for index in &mut self.def.indexes {
            index.columns = index.columns.iter().map(|&c| f(c)).collect();
        }
        if let Some(auto) = &mut self.def.auto_increment {
            auto.column = f(auto.column);
        }
        for fk in &mut self.def.foreign_keys {
            fk.columns = fk.columns.iter().map(|&c| f(c)).collect();
        }
    }

    /// The new definition.
    fn finished(&self) -> TableDef {
        let mut def = self.def.clone();
        def.column_defaults = if self.extras.iter().any(|e| e.default.is_some()) {
            self.extras.iter().map(|e| e.default.clone()).collect()
        } else {
            Vec::new()
        };
        def.column_on_update = if self.extras.iter().any(|e| e.on_update.is_some()) {
            self.extras.iter().map(|e| e.on_update.clone()).collect()
        } else {
            Vec::new()
        };
        def.column_comments = if self.extras.iter().any(|e| !e.comment.is_empty()) {
            self.extras.iter().map(|e| e.comment.clone()).collect()
        } else {
            Vec::new()
        };
        def.column_generated = if self.extras.iter().any(|e| e.generated.is_some()) {
            self.extras.iter().map(|e| e.generated.clone()).collect()
        } else {
            Vec::new()
        };
        def.column_tinyint1 = if self.extras.iter().any(|e| e.tinyint1) {
            self.extras.iter().map(|e| e.tinyint1).collect()
        } else {
            Vec::new()
        };
        fit_prefixes(&mut def);
        def
    }

    /// True when stored rows must change: a column added, dropped or moved, or given
    /// another type, nullability or collation (the row format and index order depend
    /// on them), or a generated column added or given another expression (its values
    /// are computed on the copy).
    fn rows_change(&self) -> bool {
        let generation_changed = self.extras.iter().zip(&self.sources).any(|(e, s)| {
            let old = match s {
                Source::Old(i) => self.old.column_generated(*i),
                Source::Fill(_) => None,
            };
            e.generated.as_ref().map(|g| &g.expr) != old.map(|g| &g.expr)
        });
        generation_changed || self.rows_change_by_columns()
    }

    /// [`Draft::rows_change`] for the columns alone.
    fn rows_change_by_columns(&self) -> bool {
        self.sources.len() != self.old.columns.len()
            || self
                .sources
                .iter()
                .enumerate()
                .any(|(j, s)| !matches!(s, Source::Old(i) if *i == j))
            || self
                .def
                .columns
                .iter()
                .zip(&self.old.columns)
                .any(|(new, old)| {
                    // An ENUM or SET that only gained members keeps its rows.
                    !new.ty.stores_like(&old.ty)
                        || new.nullable != old.nullable
                        || new.collation != old.collation
                })
    }

    /// Changes the table `db.name` to the draft; returns the affected rows. When
    /// rows are copied, each copied row must pass `checks` (3819).
    fn execute(
        &self,
        storage: &tarn_catalog::Storage,
        db: &str,
        name: &str,
        checks: Option<&crate::checks::TableChecks>,
        session: &Session,
    ) -> Result<u64> {
        let new_def = self.finished();
        if new_def == *self.old {
            return Ok(0);
        }
        if !self.rows_change() {
            storage.alter_in_place(db, name, new_def)?;
            return Ok(0);
        }
        let conversions: Vec<Conversion> = self
            .sources
            .iter()
            .zip(&new_def.columns)
            .enumerate()
            .map(|(j, (source, column))| match source {
                // Computed below, once the row's other columns are converted.
                _ if new_def.is_generated(j) => Conversion::Fill {
                    value: Value::Null,
                    column: Column::new(column.name.clone(), column.ty, true),
                },
                Source::Old(i) => Conversion::Old {
                    position: *i,
                    column: column.clone(),
                    retype: self.old.columns[*i].ty != column.ty,
                },
                Source::Fill(value) => Conversion::Fill {
                    value: value.clone(),
                    column: column.clone(),
                },
            })
            .collect();
        let retyped = conversions
            .iter()
            .any(|c| matches!(c, Conversion::Old { retype: true, .. }));
        let rows = Cell::new(0u64);
        let functions = session.fn_context();
        let checker = checks.map(|c| c.checker(functions.clone()));
        let generated = crate::generated::TableGenerated::bind(session, &new_def)?;
        let columns = new_def.columns.clone();
        storage.rebuild_table(db, name, new_def, &mut |number, row| {
            rows.set(rows.get().max(number));
            let mut row: Vec<Option<Value>> = row.into_iter().map(Some).collect();
            let mut new: Vec<Value> = conversions
                .iter()
                .map(|c| c.apply(&mut row, number))
                .collect::<Result<_>>()?;
            if let Some(generated) = &generated {
                generated.fill(&mut new, &functions, &mut |c, value| {
                    convert_copied(value, &columns[c], true, number)
                })?;
            }
            if let Some(checker) = &checker {
                checker.check(&new)?;
            }
            Ok(new)
        })?;
        Ok(if retyped { rows.get() } else { 0 })
    }
}

/// How one column of the rebuilt table gets its value from an old row.
enum Conversion {
    Old {
        position: usize,
        column: Column,
        /// The type changed: the value is converted as INSERT converts.
        retype: bool,
    },
    Fill {
        value: Value,
        column: Column,
    },
}

impl Conversion {
    /// The value of the `number`th row (1-based) from its old values (each taken at
    /// most once: a column is the source of one new column).
    fn apply(&self, row: &mut [Option<Value>], number: u64) -> Result<Value> {
        let (value, column, retype) = match self {
            Conversion::Old {
                position,
                column,
                retype,
            } => (
                row[*position].take().unwrap_or(Value::Null),
                column,
                *retype,
            ),
            Conversion::Fill { value, column } => (value.clone(), column, true),
        };
        convert_copied(value, column, retype, number)
    }
}

/// Converts `value` of the `number`th copied row into `column` (only checks NULL
/// unless `retype`), with ALTER TABLE's errors.
fn convert_copied(value: Value, column: &Column, retype: bool, number: u64) -> Result<Value> {
    if value.is_null() {
        if !column.nullable {
            // MySQL 8 in strict mode (MariaDB says 1265 "Data truncated" here).
            return Err(Error::sql(1138, "22004", "Invalid use of NULL value"));
        }
        return Ok(Value::Null);
    }
    if !retype {
        return Ok(value);
    }
    cast::to_column_at(value, column.ty, column.collation, &column.name, number).map_err(|e| {
        if e.mysql_code() == 1406 && !matches!(column.ty, ColumnType::Bit { .. }) {
            // A string cut short: ALTER TABLE's copy says "truncated", not "too
            // long" as INSERT does (a BIT too narrow is "too long" in both).
            Error::sql(
                1265,
                "01000",
                format!(
                    "Data truncated for column '{}' at row {number}",
                    column.name
                ),
            )
        } else {
            e
        }
    })
}

/// A column DEFAULT's value for `column`, or 1067 if it has none of the column's type.
fn default_value(session: &mut Session, column: &Column, text: &str) -> Result<Value> {
    let invalid = || {
        Error::sql(
            1067,
            "42000",
            format!("Invalid default value for '{}'", column.name),
        )
    };
    let e = crate::dml::parse_expr(text)?;
    let v = session.eval_constant(&e)?;
    if v.is_null() {
        return if column.nullable {
            Ok(Value::Null)
        } else {
            Err(invalid())
        };
    }
    cast::to_column_at(v, column.ty, column.collation, &column.name, 1).map_err(|_| invalid())
}

/// MySQL's implicit default for a NOT NULL column added without one.
fn zero_value(ty: tarn_row::types::ColumnType) -> Value {
    use tarn_row::types::ColumnType as C;
    match ty {
        C::TinyInt { unsigned: true }
        | C::SmallInt { unsigned: true }
        | C::Int { unsigned: true }
        | C::BigInt { unsigned: true } => Value::UInt(0),
        C::TinyInt { .. } | C::SmallInt { .. } | C::Int { .. } | C::BigInt { .. } => Value::Int(0),
        C::Decimal { .. } => Value::Decimal(tarn_row::decimal::Decimal::from(0i64)),
        C::Float => Value::Float(0.0),
        C::Double => Value::Double(0.0),
        C::Date => Value::Date(tarn_row::datetime::Date::new(1970, 1, 1).expect("a valid date")),
        C::Json => Value::Bytes(b"null".to_vec()),
        C::DateTime { .. } | C::Timestamp { .. } => {
            Value::DateTime(tarn_row::datetime::DateTime::from_date(
                tarn_row::datetime::Date::new(1970, 1, 1).expect("a valid date"),
            ))
        }
        C::Time { .. } => Value::Time(tarn_row::datetime::Time::ZERO),
        C::Year => Value::UInt(0),
        // An ENUM's is its first member, as MySQL's.
        C::Enum { members } => Value::Bytes(members.name(1).as_bytes().to_vec()),
        C::Bit { .. } => Value::UInt(0),
        _ => Value::Bytes(Vec::new()),
    }
}
