//! Multi-table UPDATE and DELETE: `UPDATE t1 JOIN t2 ON .. SET t1.a = t2.b`, `UPDATE
//! t1, t2 SET ..`, `DELETE t1 [, t2] FROM <joins>`, `DELETE FROM t1 [, t2] USING
//! <joins>`.
//!
//! The FROM list (with its joins) and the WHERE are bound and planned as a SELECT's
//! are (`Binder::bind_dml_from`, `planner::plan_block`); the plan's rows are the
//! scope's columns, every relation's side by side. The tables the statement changes
//! (the targets: those a SET assigns to, or those DELETE names) are read with
//! exclusive locks, as single-table UPDATE and DELETE read theirs (FOR UPDATE); the
//! other tables with shared locks, so the values read from them stay as read until
//! the statement's transaction ends (InnoDB does the same at REPEATABLE READ, and
//! reads them without locks at READ COMMITTED; Tarn locks them at every level). The
//! whole join is read before any row changes.
//!
//! MySQL's rules:
//!
//! - Each target row changes at most once however many joined rows match it. UPDATE
//!   takes the SET values from the first joined row that has it (in the plan's order;
//!   MySQL leaves which one unspecified). SET assignments run left to right over the
//!   joined row, later ones seeing earlier ones' values.
//! - A target that a LEFT JOIN padded with NULLs in a joined row is not a row there.
//! - Affected rows: UPDATE counts changed rows (`Rows matched` counts the distinct
//!   target rows; with CLIENT_FOUND_ROWS the matched ones are reported, as for
//!   single-table UPDATE); DELETE counts deleted rows over all targets.
//! - ORDER BY and LIMIT are not allowed (1221).
//! - A table joined to itself under two aliases is one target: its rows are found by
//!   their primary key whichever alias names them.
//!
//! Rows are found again by their primary key. A table without one is keyed by a hidden
//! row id that the join's rows do not carry; its target rows are then all the rows
//! equal in every column to a matched one, found by a locking scan (a join matches
//! equal rows alike, so they are all matched), and a joined row whose columns of such
//! a table are all NULL counts as padding.

use std::cell::RefCell;
use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::sync::Arc;

use sqlparser::ast;
use tarn_catalog::{RowLock, Table, Transaction, WaitPolicy};
use tarn_common::{Error, Result};
use tarn_row::Value;

use super::{Bound, RowUpdate, ignoring, primary_key_values, update_result, update_row};
use crate::accounts::Privileges;
use crate::bind::{Binder, Scope, object_name};
use crate::chunk::Chunk;
use crate::exec;
use crate::expr::Expr;
use crate::foreign_keys::Enforcer;
use crate::plan::Plan;
use crate::planner::FromRelation;
use crate::session::{QueryResult, Session};

/// A table a multi-table statement changes.
pub struct Target {
    table: Arc<Table>,
    /// Where each relation that is this table starts in the joined row.
    offsets: Vec<usize>,
}

pub struct MultiUpdatePlan {
    /// The join: every relation's columns, side by side.
    rows: Plan,
    targets: Vec<Target>,
    assignments: Vec<Assignment>,
    /// UPDATE IGNORE (`super::ignoring`).
    ignore: bool,
}

/// `SET rel.column = expr`: `target` indexes the plan's targets, `offset` is the
/// relation's start in the joined row.
struct Assignment {
    target: usize,
    offset: usize,
    column: usize,
    expr: Expr,
}

pub struct MultiDeletePlan {
    rows: Plan,
    targets: Vec<Target>,
    /// DELETE IGNORE (`super::ignoring`).
    ignore: bool,
}

impl MultiUpdatePlan {
    pub(super) fn explain(&self, lines: &mut Vec<String>) {
        lines.push(format!("Update {}", target_names(&self.targets)));
        self.rows.explain(1, lines);
    }
}

impl MultiDeletePlan {
    pub(super) fn explain(&self, lines: &mut Vec<String>) {
        lines.push(format!("Delete from {}", target_names(&self.targets)));
        self.rows.explain(1, lines);
    }
}

fn target_names(targets: &[Target]) -> String {
    targets
        .iter()
        .map(|t| t.table.def().name.clone())
        .collect::<Vec<_>>()
        .join(", ")
}

/// MySQL's 1221 for ORDER BY or LIMIT in a multi-table statement.
fn check_no_order_or_limit(
    statement: &str,
    order_by: &[ast::OrderByExpr],
    limit: Option<&ast::Expr>,
) -> Result<()> {
    let clause = if !order_by.is_empty() {
        "ORDER BY"
    } else if limit.is_some() {
        "LIMIT"
    } else {
        return Ok(());
    };
    Err(Error::sql(
        1221,
        "HY000",
        format!("Incorrect usage of {statement} and {clause}"),
    ))
}

/// The base-table relation whose columns include scope position `column`.
fn relation_at(relations: &mut [FromRelation], column: usize) -> Option<&mut FromRelation> {
    relations.iter_mut().find(|r| {
        let width = match r {
            FromRelation::Table { columns, .. } => columns.len(),
            FromRelation::Plan { plan, .. } => plan.width(),
        };
        (r.offset()..r.offset() + width).contains(&column)
    })
}

/// Adds the relation at `offset` over `table` to the targets; returns its index.
fn add_target(targets: &mut Vec<Target>, table: &Arc<Table>, offset: usize) -> usize {
    let same = |t: &Target| {
        t.table.database() == table.database() && t.table.def().name == table.def().name
    };
    match targets.iter().position(same) {
        Some(i) => {
            if !targets[i].offsets.contains(&offset) {
                targets[i].offsets.push(offset);
            }
            i
        }
        None => {
            targets.push(Target {
                table: table.clone(),
                offsets: vec![offset],
            });
            targets.len() - 1
        }
    }
}

/// Every base table read but not changed is read with shared locks; targets are
/// already marked exclusive.
fn lock_the_rest(relations: &mut [FromRelation]) {
    for relation in relations {
        if let FromRelation::Table { lock, wait, .. } = relation {
            if *lock == RowLock::None {
                *lock = RowLock::Shared;
            }
            *wait = WaitPolicy::Wait;
        }
    }
}

fn not_updatable(name: &str, statement: &str) -> Error {
    Error::sql(
        1288,
        "HY000",
        format!("The target table {name} of the {statement} is not updatable"),
    )
}

/// Binds `UPDATE <table references> SET .. [WHERE ..]` with more than one table.
pub(super) fn bind_update(session: &mut Session, update: &ast::Update) -> Result<Bound> {
    check_no_order_or_limit("UPDATE", &update.order_by, update.limit.as_ref())?;
    let mut from = vec![update.table.clone()];
    if let Some(ast::UpdateTableFromKind::BeforeSet(rest)) = &update.from {
        from.extend(rest.iter().cloned());
    }
    let (mut block, scope) =
        Binder::new(session).bind_dml_from(&from, update.selection.as_ref())?;
    let mut targets = Vec::new();
    let mut assignments = Vec::new();
    for a in &update.assignments {
        let ast::AssignmentTarget::ColumnName(name) = &a.target else {
            return Err(super::unsupported("tuple assignment"));
        };
        let position = column_position(session, name, &scope)?;
        let relation = relation_at(&mut block.relations, position)
            .expect("every scope column belongs to a relation");
        let offset = relation.offset();
        let FromRelation::Table { table, lock, .. } = relation else {
            let alias = scope.columns[position].table.clone().unwrap_or_default();
            return Err(not_updatable(&alias, "UPDATE"));
        };
        let (db, name) = (table.database().to_string(), table.def().name.clone());
        session.check_table(Privileges::UPDATE, &db, &name)?;
        *lock = RowLock::Exclusive;
        let table = table.clone();
        let column = position - offset;
        if table.def().is_generated(column) {
            // `SET c = DEFAULT` leaves a generated column to its expression.
            if matches!(&a.value, ast::Expr::Identifier(id)
                if id.value.eq_ignore_ascii_case("default") && id.quote_style.is_none())
            {
                continue;
            }
            return Err(crate::generated::value_not_allowed(
                &table.def().columns[column].name,
                &table.def().name,
            ));
        }
        let target = add_target(&mut targets, &table, offset);
        let (expr, _) = Binder::new(session).bind_in_scope(&a.value, &scope)?;
        assignments.push(Assignment {
            target,
            offset,
            column: position - offset,
            expr,
        });
    }
    lock_the_rest(&mut block.relations);
    let rows = crate::planner::plan_block(block, scope.columns.len())?;
    Ok(Bound::MultiUpdate(MultiUpdatePlan {
        rows,
        targets,
        assignments,
        ignore: crate::parse::update_ignores(update),
    }))
}

/// The scope position of an assignment's column (`c`, `t.c` or `db.t.c`).
fn column_position(session: &Session, name: &ast::ObjectName, scope: &Scope) -> Result<usize> {
    let parts = object_name(name);
    let expr = match parts.as_slice() {
        [one] => ast::Expr::Identifier(ast::Ident::new(one)),
        _ => ast::Expr::CompoundIdentifier(parts.iter().map(ast::Ident::new).collect()),
    };
    match Binder::new(session).bind_in_scope(&expr, scope)?.0 {
        Expr::Column(position) => Ok(position),
        _ => Err(Error::sql(
            1054,
            "42S22",
            format!("Unknown column '{}' in 'field list'", parts.join(".")),
        )),
    }
}

/// Binds `DELETE t1 [, t2] FROM <refs> [WHERE ..]` and `DELETE FROM t1 [, t2] USING
/// <refs> [WHERE ..]`.
pub(super) fn bind_delete(session: &mut Session, delete: &ast::Delete) -> Result<Bound> {
    check_no_order_or_limit("DELETE", &delete.order_by, delete.limit.as_ref())?;
    let from = match &delete.from {
        ast::FromTable::WithFromKeyword(t) | ast::FromTable::WithoutKeyword(t) => t,
    };
    // `DELETE FROM t1, t2 USING <refs>` names the targets after FROM; `DELETE t1, t2
    // FROM <refs>` before it.
    let (names, sources): (Vec<ast::ObjectName>, &[ast::TableWithJoins]) = match &delete.using {
        Some(using) => {
            let mut names = Vec::new();
            for t in from {
                let ast::TableFactor::Table { name, .. } = &t.relation else {
                    return Err(super::unsupported("DELETE FROM a derived table"));
                };
                if !t.joins.is_empty() {
                    return Err(super::unsupported("joins before USING"));
                }
                names.push(name.clone());
            }
            (names, using)
        }
        None => (delete.tables.clone(), from),
    };
    let (mut block, scope) =
        Binder::new(session).bind_dml_from(sources, delete.selection.as_ref())?;
    let mut targets = Vec::new();
    for name in &names {
        let parts = object_name(name);
        let mut found = false;
        for relation in &mut block.relations {
            let offset = relation.offset();
            let FromRelation::Table {
                table, alias, lock, ..
            } = relation
            else {
                continue;
            };
            let named = match parts.as_slice() {
                [one] => alias == one,
                [db, t] => table.database() == db.as_str() && table.def().name == *t && alias == t,
                _ => false,
            };
            if !named {
                continue;
            }
            found = true;
            let (db, table_name) = (table.database().to_string(), table.def().name.clone());
            session.check_table(Privileges::DELETE, &db, &table_name)?;
            *lock = RowLock::Exclusive;
            let table = table.clone();
            add_target(&mut targets, &table, offset);
        }
        if !found {
            let is_derived = scope
                .columns
                .iter()
                .any(|c| c.table.as_deref() == parts.last().map(String::as_str));
            if is_derived {
                return Err(not_updatable(&parts.join("."), "DELETE"));
            }
            return Err(Error::sql(
                1109,
                "42S02",
                format!("Unknown table '{}' in MULTI DELETE", parts.join(".")),
            ));
        }
    }
    lock_the_rest(&mut block.relations);
    let rows = crate::planner::plan_block(block, scope.columns.len())?;
    Ok(Bound::MultiDelete(MultiDeletePlan {
        rows,
        targets,
        ignore: crate::parse::delete_ignores(delete),
    }))
}

/// A target row as the join found it: its key (or, for a table without a primary
/// key, its values), read once per joined row.
fn row_id(table: &Table, values: &[Value]) -> Result<Option<Vec<u8>>> {
    let def = table.def();
    if def.primary_key.is_empty() {
        if values.iter().all(Value::is_null) {
            return Ok(None);
        }
        return Ok(Some(format!("{values:?}").into_bytes()));
    }
    let key = primary_key_values(table, values);
    if key.iter().any(Value::is_null) {
        // A LEFT JOIN's padding: no row.
        return Ok(None);
    }
    table.encode_primary_key(&key).map(Some)
}

/// The rows of a table without a primary key whose values' identity (as `row_id`
/// gives it) is among `ids`, with their hidden keys, read with exclusive locks.
fn keyless_rows(
    table: &Table,
    tx: &RefCell<Transaction>,
    ids: &HashMap<Vec<u8>, usize>,
) -> Result<Vec<(usize, Vec<u8>)>> {
    let mut found = Vec::new();
    table.scan_each_tx(
        &mut tx.borrow_mut(),
        std::ops::Bound::Unbounded,
        std::ops::Bound::Unbounded,
        RowLock::Exclusive,
        WaitPolicy::Wait,
        usize::MAX,
        &mut |key, row| {
            if let Some(&i) = ids.get(format!("{row:?}").as_bytes()) {
                found.push((i, key.to_vec()));
            }
        },
    )?;
    Ok(found)
}

/// The rows of one target a multi-table UPDATE changes, in the order first met.
#[derive(Default)]
struct TargetRows {
    rows: Vec<Changed>,
    /// Where each row is in `rows`, by its id.
    by_id: HashMap<Vec<u8>, usize>,
}

/// One target row of a multi-table UPDATE.
struct Changed {
    /// The row as read (a table without a primary key: its values' identity).
    id: Vec<u8>,
    old: Vec<Value>,
    new: Vec<Value>,
    /// The joined row that first had it: only that one's assignments apply.
    first_seen: usize,
}

pub(super) fn run_update(
    session: &mut Session,
    p: &MultiUpdatePlan,
    tx: &RefCell<Transaction>,
    params: &[Value],
) -> Result<QueryResult> {
    let chunks = session.with_exec(tx, params, |cx| exec::collect(&p.rows, cx))?;
    let fk = Enforcer::of(session);
    let mut changed: Vec<TargetRows> = p.targets.iter().map(|_| Default::default()).collect();
    session.with_exec(tx, params, |cx| {
        let ecx = crate::expr::EvalContext {
            params: cx.params,
            outer: &cx.outer,
            functions: cx.functions,
            subqueries: cx,
        };
        let mut joined_index = 0usize;
        for chunk in &chunks {
            for mut row in chunk.rows() {
                // Each (target, relation) of this joined row: its entry, if it has a row
                // there that no earlier joined row had.
                let mut fresh: HashMap<(usize, usize), usize> = HashMap::new();
                for a in &p.assignments {
                    if fresh.contains_key(&(a.target, a.offset)) {
                        continue;
                    }
                    let table = &p.targets[a.target].table;
                    let width = table.def().columns.len();
                    let values = &row[a.offset..a.offset + width];
                    let Some(id) = row_id(table, values)? else {
                        continue;
                    };
                    let target = &mut changed[a.target];
                    let entry = match target.by_id.entry(id.clone()) {
                        Entry::Occupied(e) => *e.get(),
                        Entry::Vacant(e) => {
                            target.rows.push(Changed {
                                id,
                                old: values.to_vec(),
                                new: values.to_vec(),
                                first_seen: joined_index,
                            });
                            *e.insert(target.rows.len() - 1)
                        }
                    };
                    if target.rows[entry].first_seen == joined_index {
                        fresh.insert((a.target, a.offset), entry);
                    }
                }
                for a in &p.assignments {
                    let Some(&entry) = fresh.get(&(a.target, a.offset)) else {
                        continue;
                    };
                    let value = a.expr.eval_row(&row, &ecx)?;
                    changed[a.target].rows[entry].new[a.column] = value.clone();
                    row[a.offset + a.column] = value;
                }
                joined_index += 1;
            }
        }
        Ok(())
    })?;
    let mut matched = 0u64;
    let mut updated = 0u64;
    for (t, (target, TargetRows { rows, by_id })) in p.targets.iter().zip(changed).enumerate() {
        let table = &target.table;
        let on_update = super::on_update_values(session, table, |c| {
            p.assignments.iter().any(|a| a.target == t && a.column == c)
        })?;
        // Bound once per table and execution (the plan keeps no bound form).
        let checks = crate::checks::TableChecks::bind(session, table.def())?;
        let generated = crate::generated::TableGenerated::bind(session, table.def())?;
        let functions = session.fn_context();
        let checker = checks.as_ref().map(|c| c.checker(functions.clone()));
        let rules = RowUpdate {
            fk: fk.as_ref(),
            checker: checker.as_ref(),
            generated: generated.as_ref(),
            functions: &functions,
            on_update: &on_update,
            ignore: p.ignore,
        };
        // (row, its clustered key) pairs; a table without a primary key may have
        // several rows per entry.
        let keyed: Vec<(usize, Vec<u8>)> = if table.def().primary_key.is_empty() {
            keyless_rows(table, tx, &by_id)?
        } else {
            rows.iter()
                .enumerate()
                .map(|(i, r)| (i, r.id.clone()))
                .collect()
        };
        for (i, key) in keyed {
            matched += 1;
            if update_row(
                session,
                &rules,
                table,
                tx,
                &key,
                &rows[i].old,
                rows[i].new.clone(),
                matched,
            )? {
                updated += 1;
            }
        }
    }
    update_result(session, matched, updated, p.ignore)
}

pub(super) fn run_delete(
    session: &mut Session,
    p: &MultiDeletePlan,
    tx: &RefCell<Transaction>,
    params: &[Value],
) -> Result<QueryResult> {
    let chunks = session.with_exec(tx, params, |cx| exec::collect(&p.rows, cx))?;
    let mut deleted = 0u64;
    let fk = Enforcer::of(session);
    for target in &p.targets {
        let table = &target.table;
        let width = table.def().columns.len();
        // Ids in the order first met, and their positions.
        let mut ids: Vec<Vec<u8>> = Vec::new();
        let mut by_id: HashMap<Vec<u8>, usize> = HashMap::new();
        for row in chunks.iter().flat_map(Chunk::rows) {
            for &offset in &target.offsets {
                if let Some(id) = row_id(table, &row[offset..offset + width])? {
                    if let Entry::Vacant(e) = by_id.entry(id.clone()) {
                        e.insert(ids.len());
                        ids.push(id);
                    }
                }
            }
        }
        let keys: Vec<Vec<u8>> = if table.def().primary_key.is_empty() {
            keyless_rows(table, tx, &by_id)?
                .into_iter()
                .map(|(_, key)| key)
                .collect()
        } else {
            ids
        };
        for key in keys {
            let done = ignoring(session, tx, p.ignore, || {
                Enforcer::delete(fk.as_ref(), table, &mut tx.borrow_mut(), &key)
            })?;
            if done == Some(true) {
                deleted += 1;
            }
        }
    }
    Ok(QueryResult::ok(deleted))
}
