//! FOREIGN KEY constraints, as InnoDB has them (MySQL 8's rules).
//!
//! **Definition** ([`add_constraints`]): a table-level `[CONSTRAINT [name]] FOREIGN
//! KEY [index_name] (cols) REFERENCES tbl (cols) [ON DELETE a] [ON UPDATE a]` of
//! CREATE TABLE or ALTER TABLE ... ADD becomes a [`ForeignKeyDef`] in the child's
//! catalog entry. A column-level `REFERENCES` is ignored, as InnoDB ignores it. The
//! default name is `<table>_ibfk_<n>`; names are unique in their database (1826).
//! The parent must exist (1824) unless `foreign_key_checks` is off; if it exists,
//! the referenced columns must exist (3734) and lead one of its indexes (1822), and
//! each pair of columns must have compatible types (3780). SET NULL needs nullable
//! columns (1830); SET DEFAULT is refused, as InnoDB refuses it. The child gets an
//! index on its columns when none starts with them, named after the constraint's
//! given name (else its index name, else its first column).
//!
//! **Enforcement** ([`Enforcer`]): every row change of the DML paths (INSERT and its
//! duplicate handling, REPLACE, LOAD DATA, UPDATE, multi-table UPDATE and DELETE)
//! goes through [`Enforcer::insert`], [`Enforcer::update`] and [`Enforcer::delete`],
//! which call `Table::insert_tx` / `update_key_tx` / `delete_key_tx`, and then:
//!
//! - *child side*: a row written whose foreign-key columns are all non-NULL (and, for
//!   an update, changed) must match a parent row, found through the parent's index
//!   (so compared as that index compares: the parent columns' collations) with a
//!   shared lock, as InnoDB takes it, so that a concurrent delete of the parent
//!   waits for this transaction; none is 1452. The check runs after the row is
//!   written, so a row may reference itself.
//! - *parent side*: a row deleted, or updated so that referenced columns changed
//!   (bytewise), looks for child rows with the old values through the child's
//!   index: RESTRICT and NO ACTION fail with 1451 if there is one (locked shared);
//!   CASCADE deletes them, or sets their columns to the new values; SET NULL sets
//!   their columns to NULL. Each child change is itself an [`Enforcer`] change, so
//!   it maintains the child's indexes and undo, checks the child's own foreign keys
//!   and cascades further, to a depth of [`FK_CASCADE_DEPTH_MAX`] (3008 beyond).
//!
//! A statement that fails is taken back by the session's statement rollback, so the
//! change is all or nothing. With `foreign_key_checks = 0` nothing is checked and
//! nothing cascades (as in MySQL). When no table has a foreign key,
//! [`Enforcer::of`] returns `None` after one atomic load and DML calls the table
//! directly.

use std::ops::Bound;
use std::sync::Arc;

use sqlparser::ast;
use tarn_catalog::{
    ChildForeignKey, ForeignKeyAction, ForeignKeyDef, RowLock, Storage, Table, TableDef,
    Transaction, WaitPolicy,
};
use tarn_common::{Error, Result};
use tarn_row::Value;
use tarn_row::types::{Column, ColumnType};

use crate::bind::Binder;
use crate::limits::FK_CASCADE_DEPTH_MAX;
use crate::session::Session;
use crate::sysviews::quote_identifier;

// ------------------------------------------------------------------ definition

/// Adds the FOREIGN KEYs `constraints` to `def`, the definition of table `db.{def.name}`
/// being created or altered, with MySQL's checks (see the module docs); adds the
/// child index a constraint needs when `def` has none.
pub(crate) fn add_constraints(
    session: &mut Session,
    db: &str,
    def: &mut TableDef,
    constraints: &[&ast::ForeignKeyConstraint],
) -> Result<()> {
    let checks = session.variables().hot().foreign_key_checks;
    let storage = session.engine().storage().clone();
    let referenced_by = storage.referenced_by();
    for c in constraints {
        let columns = c
            .columns
            .iter()
            .map(|ident| {
                def.column_index(&ident.value).map_err(|_| {
                    Error::sql(
                        1072,
                        "42000",
                        format!("Key column '{}' doesn't exist in table", ident.value),
                    )
                })
            })
            .collect::<Result<Vec<usize>>>()?;
        let name = match &c.name {
            Some(n) => n.value.clone(),
            None => generated_name(def),
        };
        let taken_here = def
            .foreign_keys
            .iter()
            .any(|fk| fk.name.eq_ignore_ascii_case(&name));
        let mut all = referenced_by
            .values()
            .flat_map(|t| t.values())
            .flat_map(|l| l.iter());
        let taken_elsewhere = all.any(|child| {
            child.db == db
                && !child.table.eq(&def.name)
                && child.fk.name.eq_ignore_ascii_case(&name)
        });
        if taken_here || taken_elsewhere {
            return Err(Error::sql(
                1826,
                "HY000",
                format!("Duplicate foreign key constraint name '{name}'"),
            ));
        }
        if columns.len() != c.referred_columns.len() {
            return Err(Error::sql(
                1239,
                "42000",
                format!(
                    "Incorrect foreign key definition for '{name}': Key reference and table \
                     reference don't match"
                ),
            ));
        }
        let (ref_db, ref_table) = Binder::new(session).table_ref(&c.foreign_table)?;
        let fk = ForeignKeyDef {
            name: name.clone(),
            columns: columns.clone(),
            ref_db: ref_db.clone(),
            ref_table: ref_table.clone(),
            ref_columns: c.referred_columns.iter().map(|i| i.value.clone()).collect(),
            on_delete: action(c.on_delete, &name)?,
            on_update: action(c.on_update, &name)?,
        };
        check_generated_columns(session, def, &fk)?;
        let set_null = [fk.on_delete, fk.on_update].contains(&Some(ForeignKeyAction::SetNull));
        if set_null {
            if let Some(&c) = columns.iter().find(|&&c| !def.columns[c].nullable) {
                return Err(Error::sql(
                    1830,
                    "HY000",
                    format!(
                        "Column '{}' cannot be NOT NULL: needed in a foreign key constraint \
                         '{name}' SET NULL",
                        def.columns[c].name
                    ),
                ));
            }
        }
        // The parent: the table itself, another table, or (checks off) none yet.
        let parent: Option<TableDef> = if ref_db == db && ref_table == def.name {
            Some(def.clone())
        } else {
            match storage.table(&ref_db, &ref_table) {
                Ok(t) => Some(t.def().clone()),
                Err(Error::UnknownTable(_) | Error::UnknownDatabase(_)) if !checks => None,
                Err(Error::UnknownTable(_) | Error::UnknownDatabase(_)) => {
                    return Err(Error::sql(
                        1824,
                        "HY000",
                        format!("Failed to open the referenced table '{ref_table}'"),
                    ));
                }
                Err(e) => return Err(e),
            }
        };
        if let Some(parent) = &parent {
            check_parent_definition(def, parent, &fk)?;
        }
        if def.index_starting_with(&columns).is_none() {
            let index_name = c
                .name
                .as_ref()
                .or(c.index_name.as_ref())
                .map(|n| n.value.clone())
                .filter(|n| {
                    !n.eq_ignore_ascii_case("PRIMARY")
                        && !def.indexes.iter().any(|i| i.name.eq_ignore_ascii_case(n))
                });
            let index =
                crate::ddl::named_index(&def.columns, &def.indexes, index_name, columns, false);
            def.indexes.push(index);
        }
        def.foreign_keys.push(fk);
    }
    Ok(())
}

/// `<table>_ibfk_<n>`, n one more than the largest such number the table has.
fn generated_name(def: &TableDef) -> String {
    let prefix = format!("{}_ibfk_", def.name).to_lowercase();
    let largest = def
        .foreign_keys
        .iter()
        .filter_map(|fk| {
            let lower = fk.name.to_lowercase();
            lower.strip_prefix(&prefix)?.parse::<u64>().ok()
        })
        .max()
        .unwrap_or(0);
    format!("{}_ibfk_{}", def.name, largest + 1)
}

fn action(a: Option<ast::ReferentialAction>, name: &str) -> Result<Option<ForeignKeyAction>> {
    use ast::ReferentialAction as R;
    Ok(match a {
        None => None,
        Some(R::Restrict) => Some(ForeignKeyAction::Restrict),
        Some(R::NoAction) => Some(ForeignKeyAction::NoAction),
        Some(R::Cascade) => Some(ForeignKeyAction::Cascade),
        Some(R::SetNull) => Some(ForeignKeyAction::SetNull),
        // InnoDB rejects SET DEFAULT (MySQL 8: ER_FK_CANNOT_... reported as 1215).
        Some(R::SetDefault) => {
            return Err(Error::sql(
                1215,
                "HY000",
                format!("Cannot add foreign key constraint '{name}': SET DEFAULT is not supported"),
            ));
        }
    })
}

/// The referenced columns exist in `parent` (3734), lead one of its indexes (1822),
/// and have types compatible with the child's columns (3780).
fn check_parent_definition(child: &TableDef, parent: &TableDef, fk: &ForeignKeyDef) -> Result<()> {
    let mut positions = Vec::new();
    for name in &fk.ref_columns {
        let Ok(p) = parent.column_index(name) else {
            return Err(Error::sql(
                3734,
                "HY000",
                format!(
                    "Failed to add the foreign key constraint. Missing column '{name}' for \
                     constraint '{}' in the referenced table '{}'",
                    fk.name, fk.ref_table
                ),
            ));
        };
        positions.push(p);
    }
    for (&c, &p) in fk.columns.iter().zip(&positions) {
        if !compatible(&child.columns[c], &parent.columns[p]) {
            return Err(Error::sql(
                3780,
                "HY000",
                format!(
                    "Referencing column '{}' and referenced column '{}' in foreign key \
                     constraint '{}' are incompatible.",
                    child.columns[c].name, parent.columns[p].name, fk.name
                ),
            ));
        }
    }
    if parent.index_starting_with(&positions).is_none() {
        return Err(Error::sql(
            1822,
            "HY000",
            format!(
                "Failed to add the foreign key constraint. Missing index for constraint '{}' \
                 in the referenced table '{}'",
                fk.name, fk.ref_table
            ),
        ));
    }
    Ok(())
}

/// MySQL's rule: the same type, but string lengths may differ; character strings
/// need the same collation.
fn compatible(a: &Column, b: &Column) -> bool {
    use ColumnType::*;
    let text = |t: ColumnType| matches!(t, Char { .. } | VarChar { .. });
    let bytes = |t: ColumnType| matches!(t, Binary { .. } | VarBinary { .. });
    if text(a.ty) && text(b.ty) {
        return a.collation == b.collation;
    }
    if bytes(a.ty) && bytes(b.ty) {
        return true;
    }
    a.ty == b.ty && (!a.ty.has_collation() || a.collation == b.collation)
}

/// The constraint as SHOW CREATE TABLE and the error messages write it:
/// CONSTRAINT `n` FOREIGN KEY (`a`) REFERENCES `p` (`b`) [ON DELETE ..] [ON UPDATE ..].
/// The parent's database is written only if it is not `db`.
pub fn constraint_sql(db: &str, child: &TableDef, fk: &ForeignKeyDef) -> String {
    let columns: Vec<String> = fk
        .columns
        .iter()
        .map(|&c| quote_identifier(&child.columns[c].name))
        .collect();
    let ref_columns: Vec<String> = fk.ref_columns.iter().map(|c| quote_identifier(c)).collect();
    let parent = if fk.ref_db == db {
        quote_identifier(&fk.ref_table)
    } else {
        format!(
            "{}.{}",
            quote_identifier(&fk.ref_db),
            quote_identifier(&fk.ref_table)
        )
    };
    let mut sql = format!(
        "CONSTRAINT {} FOREIGN KEY ({}) REFERENCES {parent} ({})",
        quote_identifier(&fk.name),
        columns.join(", "),
        ref_columns.join(", ")
    );
    if let Some(a) = fk.on_delete {
        sql.push_str(" ON DELETE ");
        sql.push_str(a.sql());
    }
    if let Some(a) = fk.on_update {
        sql.push_str(" ON UPDATE ");
        sql.push_str(a.sql());
    }
    sql
}

/// `(`db`.`child`, CONSTRAINT ...)`, the tail of 1451 and 1452.
fn failing_constraint(db: &str, child: &TableDef, fk: &ForeignKeyDef) -> String {
    format!(
        "({}.{}, {})",
        quote_identifier(db),
        quote_identifier(&child.name),
        constraint_sql(db, child, fk)
    )
}

/// ER_NO_REFERENCED_ROW_2 (1452).
fn no_parent(db: &str, child: &TableDef, fk: &ForeignKeyDef) -> Error {
    Error::sql(
        1452,
        "23000",
        format!(
            "Cannot add or update a child row: a foreign key constraint fails {}",
            failing_constraint(db, child, fk)
        ),
    )
}

/// ER_ROW_IS_REFERENCED_2 (1451).
fn has_children(db: &str, child: &TableDef, fk: &ForeignKeyDef) -> Error {
    Error::sql(
        1451,
        "23000",
        format!(
            "Cannot delete or update a parent row: a foreign key constraint fails {}",
            failing_constraint(db, child, fk)
        ),
    )
}

/// A foreign key whose action changes the child's columns (CASCADE, SET NULL) may not
/// be on a generated column (MySQL's 3104) nor on a column a generated column reads
/// (1215, as MySQL refuses it for STORED ones; Tarn stores VIRTUAL ones too): the
/// change a parent cascades is not computed into the generated column.
fn check_generated_columns(session: &Session, def: &TableDef, fk: &ForeignKeyDef) -> Result<()> {
    let changing = |a: Option<ForeignKeyAction>| {
        matches!(
            a,
            Some(ForeignKeyAction::Cascade | ForeignKeyAction::SetNull)
        )
    };
    let clause = match (fk.on_update, fk.on_delete) {
        (Some(a), _) if changing(Some(a)) => format!("ON UPDATE {}", a.sql()),
        (_, Some(a)) if changing(Some(a)) => format!("ON DELETE {}", a.sql()),
        _ => return Ok(()),
    };
    if fk.columns.iter().any(|&c| def.is_generated(c)) {
        return Err(Error::sql(
            3104,
            "HY000",
            format!("Cannot define foreign key with {clause} clause on a generated column."),
        ));
    }
    for &c in &fk.columns {
        if crate::generated::check_no_dependents(session, def, c).is_err() {
            return Err(Error::sql(
                1215,
                "HY000",
                format!(
                    "Cannot add foreign key constraint '{}': column '{}' is read by a \
                     generated column",
                    fk.name, def.columns[c].name
                ),
            ));
        }
    }
    Ok(())
}

/// The first foreign key (of another table, or of `db.table` itself when
/// `include_self`) that references `db.table`.
pub(crate) fn first_reference(
    storage: &Storage,
    db: &str,
    table: &str,
    include_self: bool,
) -> Option<ChildForeignKey> {
    storage
        .foreign_keys_referencing(db, table)
        .iter()
        .find(|c| include_self || !(c.db == db && c.table == table))
        .cloned()
}

/// 1553 if `new`, the next definition of table `db.{old.name}`, drops an index a
/// foreign key needs: one of its own (on its columns) or one of a table that
/// references it (on the referenced columns). A foreign key whose referenced columns
/// are gone is left to fail at its checks (1452), as with `foreign_key_checks` off.
pub(crate) fn check_index_drop(
    storage: &Storage,
    db: &str,
    old: &TableDef,
    new: &TableDef,
) -> Result<()> {
    let needed = |columns: &[usize], old_columns: &[usize]| -> Result<()> {
        if new.index_starting_with(columns).is_none() {
            let index = old.index_starting_with(old_columns).unwrap_or("PRIMARY");
            return Err(crate::alter::index_needed_error(index));
        }
        Ok(())
    };
    for fk in &new.foreign_keys {
        let old_columns = old
            .foreign_keys
            .iter()
            .find(|o| o.name == fk.name)
            .map_or(&fk.columns, |o| &o.columns);
        needed(&fk.columns, old_columns)?;
    }
    for child in storage.foreign_keys_referencing(db, &old.name).iter() {
        let (Some(positions), Some(old_positions)) =
            (ref_positions(new, &child.fk), ref_positions(old, &child.fk))
        else {
            continue;
        };
        needed(&positions, &old_positions)?;
    }
    Ok(())
}

/// ALTER TABLE ... ADD FOREIGN KEY with `foreign_key_checks` on: every row of
/// `table` must have a parent for each of `fks` (1452 otherwise). One transaction
/// scans the rows, a second looks up (and share-locks) their parents, row by row, so
/// nothing is collected; both end when the check does.
pub(crate) fn check_existing_rows(
    storage: &Arc<Storage>,
    table: &Table,
    fks: &[ForeignKeyDef],
) -> Result<()> {
    let enforcer = Enforcer {
        storage: storage.clone(),
    };
    let mut scan = storage.begin(None, true);
    let mut lookups = storage.begin(None, false);
    let mut failure = None;
    let scanned = table.scan_each_tx(
        &mut scan,
        Bound::Unbounded,
        Bound::Unbounded,
        RowLock::None,
        WaitPolicy::Wait,
        usize::MAX,
        &mut |_, row| {
            if failure.is_some() {
                return;
            }
            for fk in fks {
                if let Err(e) = enforcer.check_parent(table, fk, &row, &mut lookups) {
                    failure = Some(e);
                    return;
                }
            }
        },
    );
    storage.rollback(scan)?;
    storage.rollback(lookups)?;
    scanned?;
    failure.map_or(Ok(()), Err)
}

/// ALTER TABLE with `foreign_key_checks` on: `def`, the table's next definition,
/// still fits each of its own foreign keys' parents and each foreign key that
/// references it (`renamed`: its columns renamed, old and new names), so a column
/// type change that breaks one is 3780, as in MySQL 8.
pub(crate) fn check_altered_table(
    storage: &Storage,
    db: &str,
    def: &TableDef,
    renamed: &[(String, String)],
) -> Result<()> {
    let rename = |column: &str| {
        renamed
            .iter()
            .find(|(old, _)| old.eq_ignore_ascii_case(column))
            .map_or(column.to_string(), |(_, new)| new.clone())
    };
    for fk in &def.foreign_keys {
        let mut fk = fk.clone();
        if fk.references(db, &def.name) {
            fk.ref_columns = fk.ref_columns.iter().map(|c| rename(c)).collect();
            check_parent_definition(def, def, &fk)?;
        } else if let Ok(parent) = storage.table(&fk.ref_db, &fk.ref_table) {
            check_parent_definition(def, parent.def(), &fk)?;
        }
    }
    for child in storage.foreign_keys_referencing(db, &def.name).iter() {
        if child.db == db && child.table == def.name {
            continue; // checked above
        }
        let Ok(child_table) = storage.table(&child.db, &child.table) else {
            continue;
        };
        let mut fk = child.fk.clone();
        fk.ref_columns = fk.ref_columns.iter().map(|c| rename(c)).collect();
        check_parent_definition(child_table.def(), def, &fk)?;
    }
    Ok(())
}

/// After ALTER TABLE renamed columns of `db.table` (`renamed`: old and new names),
/// the foreign keys that reference them take the new names: each referencing table
/// is changed in place with its new definition. (Each is a catalog change of its
/// own: a crash between them leaves a reference to a column that is gone, which
/// fails its checks with 1452 rather than passing them.)
pub(crate) fn rename_referenced_columns(
    storage: &Storage,
    db: &str,
    table: &str,
    renamed: &[(String, String)],
) -> Result<()> {
    let mut children: Vec<(String, String)> = storage
        .foreign_keys_referencing(db, table)
        .iter()
        .map(|c| (c.db.clone(), c.table.clone()))
        .collect();
    children.dedup();
    for (child_db, child) in children {
        let mut def = storage.table(&child_db, &child)?.def().clone();
        for fk in def
            .foreign_keys
            .iter_mut()
            .filter(|fk| fk.references(db, table))
        {
            for column in &mut fk.ref_columns {
                if let Some((_, new)) = renamed
                    .iter()
                    .find(|(old, _)| old.eq_ignore_ascii_case(column))
                {
                    *column = new.clone();
                }
            }
        }
        storage.alter_in_place(&child_db, &child, def)?;
    }
    Ok(())
}

// ------------------------------------------------------------------ enforcement

/// Foreign-key work for one statement's row changes (see the module docs).
pub(crate) struct Enforcer {
    storage: Arc<Storage>,
}

impl Enforcer {
    /// `None` when there is nothing to do: no table has a foreign key, or the
    /// session's `foreign_key_checks` is off.
    pub(crate) fn of(session: &Session) -> Option<Enforcer> {
        let storage = session.engine().storage();
        (storage.any_foreign_keys() && session.variables().hot().foreign_key_checks).then(|| {
            Enforcer {
                storage: storage.clone(),
            }
        })
    }

    /// Inserts `row` into `table`, then checks its parents.
    pub(crate) fn insert(
        this: Option<&Enforcer>,
        table: &Table,
        tx: &mut Transaction,
        row: Vec<Value>,
    ) -> Result<()> {
        match this {
            Some(fk) if !table.def().foreign_keys.is_empty() => {
                table.insert_tx(tx, row.clone())?;
                for def in &table.def().foreign_keys {
                    fk.check_parent(table, def, &row, tx)?;
                }
                Ok(())
            }
            _ => table.insert_tx(tx, row),
        }
    }

    /// Writes `new` over the row `old` at clustered key `key` (see the module docs);
    /// whether the row changed.
    pub(crate) fn update(
        this: Option<&Enforcer>,
        table: &Table,
        tx: &mut Transaction,
        key: &[u8],
        old: &[Value],
        new: Vec<Value>,
    ) -> Result<bool> {
        match this {
            Some(fk) => fk.update_at(table, tx, key, old, new, 0),
            None => table.update_key_tx(tx, key, new),
        }
    }

    /// Deletes the row at clustered key `key`, acting on its children; whether a row
    /// was deleted.
    pub(crate) fn delete(
        this: Option<&Enforcer>,
        table: &Table,
        tx: &mut Transaction,
        key: &[u8],
    ) -> Result<bool> {
        match this {
            Some(fk) => fk.delete_at(table, tx, key, 0),
            None => table.delete_key_tx(tx, key),
        }
    }

    fn referencing(&self, table: &Table) -> Arc<[ChildForeignKey]> {
        self.storage
            .foreign_keys_referencing(table.database(), &table.def().name)
    }

    fn delete_at(
        &self,
        table: &Table,
        tx: &mut Transaction,
        key: &[u8],
        depth: usize,
    ) -> Result<bool> {
        let referencing = self.referencing(table);
        if referencing.is_empty() {
            return table.delete_key_tx(tx, key);
        }
        let Some(old) = table.read_key_tx(tx, key, RowLock::Exclusive, WaitPolicy::Wait)? else {
            return Ok(false);
        };
        if !table.delete_key_tx(tx, key)? {
            return Ok(false);
        }
        for child in referencing.iter() {
            self.parent_changed(table, &old, None, child, tx, depth)?;
        }
        Ok(true)
    }

    fn update_at(
        &self,
        table: &Table,
        tx: &mut Transaction,
        key: &[u8],
        old: &[Value],
        new: Vec<Value>,
        depth: usize,
    ) -> Result<bool> {
        let referencing = self.referencing(table);
        let fks = &table.def().foreign_keys;
        if referencing.is_empty() && fks.is_empty() {
            return table.update_key_tx(tx, key, new);
        }
        if !table.update_key_tx(tx, key, new.clone())? {
            return Ok(false);
        }
        for child in referencing.iter() {
            self.parent_changed(table, old, Some(&new), child, tx, depth)?;
        }
        for def in fks {
            if def.columns.iter().any(|&c| !same_bytes(&old[c], &new[c])) {
                self.check_parent(table, def, &new, tx)?;
            }
        }
        Ok(true)
    }

    /// Child side: `row` of `child` needs a parent row for `fk` unless one of its
    /// columns is NULL. The parent row found is locked shared.
    fn check_parent(
        &self,
        child: &Table,
        fk: &ForeignKeyDef,
        row: &[Value],
        tx: &mut Transaction,
    ) -> Result<()> {
        let values: Vec<Value> = fk.columns.iter().map(|&c| row[c].clone()).collect();
        if values.iter().any(Value::is_null) {
            return Ok(());
        }
        let fail = || no_parent(child.database(), child.def(), fk);
        let parent = match self.storage.table(&fk.ref_db, &fk.ref_table) {
            Ok(t) => t,
            Err(Error::UnknownTable(_) | Error::UnknownDatabase(_)) => return Err(fail()),
            Err(e) => return Err(e),
        };
        let Some(positions) = ref_positions(parent.def(), fk) else {
            return Err(fail());
        };
        let Some(index) = parent.def().index_starting_with(&positions) else {
            return Err(fail());
        };
        if find_rows(&parent, index, values, RowLock::Shared, 1, tx)?.is_empty() {
            return Err(fail());
        }
        Ok(())
    }

    /// Parent side: the row `old` of `parent` was deleted (`new` None) or became
    /// `new`; act on `child`'s rows that referenced it.
    fn parent_changed(
        &self,
        parent: &Table,
        old: &[Value],
        new: Option<&[Value]>,
        child: &ChildForeignKey,
        tx: &mut Transaction,
        depth: usize,
    ) -> Result<()> {
        let fk = &child.fk;
        let Some(positions) = ref_positions(parent.def(), fk) else {
            return Ok(());
        };
        let old_values: Vec<Value> = positions.iter().map(|&p| old[p].clone()).collect();
        if old_values.iter().any(Value::is_null) {
            return Ok(());
        }
        if let Some(new) = new {
            if positions.iter().all(|&p| same_bytes(&old[p], &new[p])) {
                return Ok(());
            }
        }
        let action = match new {
            None => fk.delete_action(),
            Some(_) => fk.update_action(),
        };
        let child_table = self.storage.table(&child.db, &child.table)?;
        let Some(index) = child_table.def().index_starting_with(&fk.columns) else {
            return Ok(());
        };
        let index = index.to_string();
        match action {
            ForeignKeyAction::Restrict | ForeignKeyAction::NoAction => {
                let found = find_rows(&child_table, &index, old_values, RowLock::Shared, 1, tx)?;
                if !found.is_empty() {
                    return Err(has_children(&child.db, child_table.def(), fk));
                }
            }
            ForeignKeyAction::Cascade | ForeignKeyAction::SetNull => {
                let rows = find_rows(
                    &child_table,
                    &index,
                    old_values,
                    RowLock::Exclusive,
                    usize::MAX,
                    tx,
                )?;
                if !rows.is_empty() && depth + 1 > FK_CASCADE_DEPTH_MAX {
                    return Err(Error::sql(
                        3008,
                        "HY000",
                        format!(
                            "Foreign key cascade delete/update exceeds max depth of \
                             {FK_CASCADE_DEPTH_MAX}."
                        ),
                    ));
                }
                for (key, row) in rows {
                    match (action, new) {
                        (ForeignKeyAction::Cascade, None) => {
                            self.delete_at(&child_table, tx, &key, depth + 1)?;
                        }
                        _ => {
                            let mut changed = row.clone();
                            for (i, &c) in fk.columns.iter().enumerate() {
                                changed[c] = match new {
                                    Some(new) if action == ForeignKeyAction::Cascade => {
                                        new[positions[i]].clone()
                                    }
                                    _ => Value::Null,
                                };
                            }
                            self.update_at(&child_table, tx, &key, &row, changed, depth + 1)?;
                        }
                    }
                }
            }
        }
        Ok(())
    }
}

/// The positions in `parent` of `fk`'s referenced columns (None if one is missing).
fn ref_positions(parent: &TableDef, fk: &ForeignKeyDef) -> Option<Vec<usize>> {
    fk.ref_columns
        .iter()
        .map(|name| parent.column_index(name).ok())
        .collect()
}

/// Rows of `table` whose index `index` (PRIMARY or a secondary index) starts with
/// `values`, with their clustered keys, locked `lock`; at most `limit`.
fn find_rows(
    table: &Table,
    index: &str,
    values: Vec<Value>,
    lock: RowLock,
    limit: usize,
    tx: &mut Transaction,
) -> Result<Vec<(Vec<u8>, Vec<Value>)>> {
    let mut rows = Vec::new();
    let mut each = |key: &[u8], row: Vec<Value>| rows.push((key.to_vec(), row));
    let lower = Bound::Included(values.clone());
    let upper = Bound::Included(values);
    if index == "PRIMARY" {
        table.scan_each_tx(tx, lower, upper, lock, WaitPolicy::Wait, limit, &mut each)?;
    } else {
        table.index_range_each_tx(
            tx,
            index,
            lower,
            upper,
            lock,
            WaitPolicy::Wait,
            limit,
            &mut each,
        )?;
    }
    Ok(rows)
}

/// Whether two values are the same bytes (what makes InnoDB see a referenced column
/// as changed: 'a' to 'A' is a change even under a case-insensitive collation).
fn same_bytes(a: &Value, b: &Value) -> bool {
    match (a.is_null(), b.is_null()) {
        (true, true) => true,
        (false, false) => {
            std::mem::discriminant(a) == std::mem::discriminant(b)
                && crate::scalar::compare::compare(a, b, tarn_row::types::Collation::Binary)
                    == Some(std::cmp::Ordering::Equal)
        }
        _ => false,
    }
}
