//! Queries and data changes: binding and running SELECT, INSERT, REPLACE, UPDATE and
//! DELETE.
//!
//! A [`Bound`] statement holds everything needed to run it again with new parameters
//! (prepared statements keep it). Rules from MySQL:
//!
//! - INSERT fills omitted columns from their DEFAULT (or NULL; a NOT NULL column
//!   without a default is error 1364, but an ENUM takes its first member), and takes
//!   AUTO_INCREMENT values for NULL or 0;
//!   `LAST_INSERT_ID()` is the first value generated for a row the statement
//!   inserted; the OK packet's insert id is that, or else the AUTO_INCREMENT column
//!   of the last row when the statement wrote any (an explicit value, see
//!   [`Inserted::insert_id`]).
//! - Values are converted to the column types with strict-mode rules
//!   ([`cast::to_column_at`]; ENUM and SET members are matched under the column's
//!   collation).
//! - Affected rows: 1 per inserted row, 2 per row ON DUPLICATE KEY UPDATE changed, 0
//!   for one it left as it was; REPLACE counts the deleted rows too; UPDATE counts
//!   changed rows (matched ones go to the info string).
//! - UPDATE assignments see the values of earlier assignments in the same SET list.
//! - A column with `ON UPDATE CURRENT_TIMESTAMP` takes the statement's time in every
//!   row an UPDATE (or ON DUPLICATE KEY UPDATE) changes without assigning it.
//! - UPDATE and DELETE read the rows they change with exclusive locks (a locking
//!   read), through the access path the planner picks for their WHERE.
//! - Every row INSERT, REPLACE, ON DUPLICATE KEY UPDATE and UPDATE write must pass
//!   the table's enforced CHECK constraints, bound once per statement
//!   ([`crate::checks`]); INSERT IGNORE skips a row that fails with a warning.
//! - Generated columns ([`crate::generated`]) are computed on every row written,
//!   after the other columns are converted and before CHECK constraints and
//!   indexes see it; a value other than DEFAULT written into one is 3105.
//! - UPDATE IGNORE and DELETE IGNORE (single and multi-table) make the errors of one
//!   row that MySQL's IGNORE makes warnings (a duplicate key, a CHECK constraint, a
//!   foreign key: [`ignoring`]) skip that row: what its change had done, cascades
//!   included, is taken back to the undo position taken before it
//!   (`Storage::rollback_to_position`), and it does not count as affected. UPDATE
//!   IGNORE converts values as INSERT IGNORE does (the nearest value, with a
//!   warning).
//! - Multi-table UPDATE and DELETE (joins, comma lists, `DELETE .. USING`) are in
//!   [`multi`]: they read the whole join first, then change each target row once.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;

use sqlparser::ast;
use tarn_catalog::{RowLock, Table, Transaction, WaitPolicy};
use tarn_common::{Error, Result};
use tarn_row::Value;
use tarn_row::decimal::Decimal;
use tarn_row::types::{Collation, ColumnType};

use crate::accounts::Privileges;
use crate::bind::{Binder, Scope, ScopeColumn, object_name};
use crate::checks::{Checker, TableChecks};
use crate::chunk::Chunk;
use crate::exec::{self, ExecContext};
use crate::expr::Expr;
use crate::foreign_keys::Enforcer;
use crate::generated::TableGenerated;
use crate::limits::INSERT_ROWS_MAX;
use crate::parse::{Parsed, Statement};
use crate::plan::{OutputColumn, Plan, RowCount, SortKey};
use crate::scalar::cast;
use crate::session::{QueryResult, Session};
use crate::types::SqlType;

mod multi;

/// A bound query or data-changing statement.
pub enum Bound {
    Query(Plan),
    Insert(InsertPlan),
    Update(UpdatePlan),
    Delete(DeletePlan),
    MultiUpdate(multi::MultiUpdatePlan),
    MultiDelete(multi::MultiDeletePlan),
    /// `SELECT .. INTO @a, ..`: the query and the user variables (lower-cased, without
    /// `@`) its one row sets, one per column.
    SelectInto {
        plan: Plan,
        variables: Vec<String>,
    },
}

pub enum InsertSource {
    Values(Vec<Vec<Expr>>),
    Query(Plan),
}

pub struct InsertPlan {
    table: Arc<Table>,
    /// Target column positions, in the order the source gives values.
    columns: Vec<usize>,
    source: InsertSource,
    /// Each column's bound DEFAULT (None: no default).
    defaults: Vec<Option<Expr>>,
    ignore: bool,
    replace: bool,
    /// ON DUPLICATE KEY UPDATE: column and expression over [old row, new row].
    on_duplicate: Option<Vec<(usize, Expr)>>,
    /// LOAD DATA's `SET column = expr` ([`InsertPlan::for_load`]), in order. Each is
    /// evaluated over [the row's columns, converted, then the row's `@variable`
    /// values] and its value converted into its column before the next one runs.
    row_assignments: Vec<(usize, Expr)>,
    /// The table's enforced CHECK constraints (None: it has none).
    checks: Option<TableChecks>,
    /// The table's generated columns (None: it has none).
    generated: Option<TableGenerated>,
}

pub struct UpdatePlan {
    table: Arc<Table>,
    /// The rows to change (a locking scan, maybe sorted and limited).
    rows: Plan,
    assignments: Vec<(usize, Expr)>,
    /// The table's enforced CHECK constraints (None: it has none).
    checks: Option<TableChecks>,
    /// The table's generated columns (None: it has none).
    generated: Option<TableGenerated>,
    /// UPDATE IGNORE ([`ignoring`]).
    ignore: bool,
}

pub struct DeletePlan {
    table: Arc<Table>,
    rows: Plan,
    /// DELETE IGNORE ([`ignoring`]).
    ignore: bool,
}

impl Bound {
    pub fn columns(&self) -> Vec<OutputColumn> {
        match self {
            Bound::Query(plan) => plan.columns().to_vec(),
            _ => Vec::new(),
        }
    }

    pub fn is_read_only(&self) -> bool {
        matches!(self, Bound::Query(_) | Bound::SelectInto { .. })
    }

    pub fn explain(&self, lines: &mut Vec<String>) {
        match self {
            Bound::Query(plan) => plan.explain(0, lines),
            Bound::Insert(p) => {
                lines.push(format!("Insert into {}", p.table.def().name));
                if let InsertSource::Query(plan) = &p.source {
                    plan.explain(1, lines);
                }
            }
            Bound::Update(p) => {
                lines.push(format!("Update {}", p.table.def().name));
                p.rows.explain(1, lines);
            }
            Bound::Delete(p) => {
                lines.push(format!("Delete from {}", p.table.def().name));
                p.rows.explain(1, lines);
            }
            Bound::MultiUpdate(p) => p.explain(lines),
            Bound::MultiDelete(p) => p.explain(lines),
            Bound::SelectInto { plan, .. } => plan.explain(0, lines),
        }
    }
}

/// True for statements [`bind`] handles (they can be prepared with a bound form).
pub fn bindable(parsed: &Parsed) -> bool {
    match &parsed.statement {
        Statement::Sql(s) => matches!(
            **s,
            ast::Statement::Query(_)
                | ast::Statement::Insert(_)
                | ast::Statement::Update(_)
                | ast::Statement::Delete(_)
        ),
        Statement::SelectInto { .. } => true,
        _ => false,
    }
}

/// Binds `SELECT .. INTO @a, ..`: the query, whose columns must be as many as the
/// variables (1222, checked before any row is read, as MySQL does).
pub fn bind_select_into(
    session: &mut Session,
    query: &ast::Statement,
    variables: &[String],
) -> Result<Bound> {
    let Bound::Query(plan) = bind(session, query)? else {
        return Err(unsupported("SELECT ... INTO of this statement"));
    };
    if plan.width() != variables.len() {
        return Err(Error::sql(
            1222,
            "21000",
            "The used SELECT statements have a different number of columns",
        ));
    }
    Ok(Bound::SelectInto {
        plan,
        variables: variables.to_vec(),
    })
}

fn unsupported(what: impl std::fmt::Display) -> Error {
    Error::sql(
        1235,
        "42000",
        format!("This version of Tarn doesn't yet support '{what}'"),
    )
}

fn table_scope(table: &Table, alias: &str) -> Scope {
    Scope {
        columns: table
            .def()
            .columns
            .iter()
            .enumerate()
            .map(|(i, c)| ScopeColumn {
                table: Some(alias.to_string()),
                name: c.name.clone(),
                ty: SqlType::of_column(c.ty, c.collation),
                nullable: c.nullable,
                tinyint1: table.def().is_tinyint1(i),
                hidden: false,
                using_first: false,
                key: None,
            })
            .collect(),
    }
}

pub(crate) fn table_columns(table: &Table, alias: &str) -> Vec<OutputColumn> {
    table
        .def()
        .columns
        .iter()
        .enumerate()
        .map(|(i, c)| OutputColumn {
            name: c.name.clone(),
            table: Some(alias.to_string()),
            origin: None,
            ty: SqlType::of_column(c.ty, c.collation),
            nullable: c.nullable,
            tinyint1: table.def().is_tinyint1(i),
        })
        .collect()
}

/// Binds a query or DML statement.
pub fn bind(session: &mut Session, statement: &ast::Statement) -> Result<Bound> {
    match statement {
        ast::Statement::Query(q) => {
            let mut binder = Binder::new(session);
            let mut plan = binder.bind_statement_query(q)?;
            if q.limit_clause.is_some() && calc_found_rows(q) {
                count_all_before_limit(&mut plan);
            }
            Ok(Bound::Query(plan))
        }
        ast::Statement::Insert(insert) => bind_insert(session, insert),
        ast::Statement::Update(update) => bind_update(session, update),
        ast::Statement::Delete(delete) => bind_delete(session, delete),
        other => Err(unsupported(other)),
    }
}

/// The bound DEFAULT expressions of a table.
fn defaults(session: &mut Session, table: &Table) -> Result<Vec<Option<Expr>>> {
    (0..table.def().columns.len())
        .map(|i| bound_default(session, table, i))
        .collect()
}

/// Column `i`'s bound DEFAULT expression, if it has one.
fn bound_default(session: &mut Session, table: &Table, i: usize) -> Result<Option<Expr>> {
    match table.def().column_defaults.get(i).cloned().flatten() {
        None => Ok(None),
        Some(text) => Ok(Some(
            Binder::new(session).bind_constant(&parse_expr(&text)?)?.0,
        )),
    }
}

/// What `UPDATE .. SET c = DEFAULT` stores: the column's DEFAULT, else NULL where
/// it may be NULL; else error 1364, as MySQL in strict mode (an ENUM takes its
/// first member, as INSERT's missing value does).
fn update_default(session: &mut Session, table: &Table, column: usize) -> Result<Expr> {
    if let Some(e) = bound_default(session, table, column)? {
        return Ok(e);
    }
    let c = &table.def().columns[column];
    if c.nullable {
        return Ok(Expr::Literal(Value::Null));
    }
    match c.ty {
        ColumnType::Enum { .. } => Ok(Expr::Literal(implicit_default(c.ty).unwrap_or(Value::Null))),
        _ => Err(Error::sql(
            1364,
            "HY000",
            format!("Field '{}' doesn't have a default value", c.name),
        )),
    }
}

/// Parses an SQL expression (a DEFAULT's text).
pub fn parse_expr(text: &str) -> Result<ast::Expr> {
    let parsed = crate::parse::parse_one(&format!("SELECT {text}"))?;
    if let Statement::Sql(s) = parsed.statement {
        if let ast::Statement::Query(q) = *s {
            if let ast::SetExpr::Select(select) = *q.body {
                if let Some(ast::SelectItem::UnnamedExpr(e)) = select.projection.into_iter().next()
                {
                    return Ok(e);
                }
            }
        }
    }
    Err(Error::sql(
        1064,
        "42000",
        format!("Invalid expression '{text}'"),
    ))
}

fn bind_insert(session: &mut Session, insert: &ast::Insert) -> Result<Bound> {
    let ast::TableObject::TableName(name) = &insert.table else {
        return Err(unsupported("INSERT INTO a table function"));
    };
    let (db, name) = Binder::new(session).table_ref(name)?;
    let mut needed = Privileges::INSERT;
    if insert.replace_into {
        needed = needed.union(Privileges::DELETE);
    }
    if insert.on.is_some() {
        needed = needed.union(Privileges::UPDATE);
    }
    session.check_table(needed, &db, &name)?;
    let table = target_table(session, &db, &name, "INSERT")?;
    let def = table.def();
    let position = |n: &str| -> Result<usize> {
        def.column_index(n).map_err(|_| {
            Error::sql(
                1054,
                "42S22",
                format!("Unknown column '{n}' in 'field list'"),
            )
        })
    };
    let mut columns: Vec<usize> = Vec::new();
    for c in &insert.columns {
        let n = object_name(c).pop().unwrap_or_default();
        let p = position(&n)?;
        if columns.contains(&p) {
            return Err(Error::sql(
                1110,
                "42000",
                format!("Column '{n}' specified twice"),
            ));
        }
        columns.push(p);
    }
    let source = if !insert.assignments.is_empty() {
        // INSERT ... SET a = 1, b = 2
        let mut row = Vec::new();
        let mut binder = Binder::new(session);
        for a in &insert.assignments {
            let ast::AssignmentTarget::ColumnName(n) = &a.target else {
                return Err(unsupported("tuple assignment"));
            };
            let n = object_name(n).pop().unwrap_or_default();
            let p = position(&n)?;
            columns.push(p);
            row.push(if is_default(&a.value) && def.is_generated(p) {
                default_marker()
            } else {
                binder.bind_constant(&a.value)?.0
            });
        }
        InsertSource::Values(vec![row])
    } else {
        let source = insert
            .source
            .as_ref()
            .ok_or_else(|| Error::sql(1064, "42000", "INSERT needs VALUES, SET or SELECT"))?;
        if columns.is_empty() {
            columns = (0..def.columns.len()).collect();
        }
        match &*source.body {
            ast::SetExpr::Values(values)
                if source.order_by.is_none() && source.limit_clause.is_none() =>
            {
                if values.rows.len() > INSERT_ROWS_MAX {
                    return Err(Error::OutOfResources(format!(
                        "an INSERT may carry at most {INSERT_ROWS_MAX} rows"
                    )));
                }
                let mut binder = Binder::new(session);
                let mut rows = Vec::with_capacity(values.rows.len());
                for (i, row) in values.rows.iter().enumerate() {
                    let row = &row.content;
                    // `()` / VALUES ROW(): all defaults.
                    if row.len() != columns.len() && !(row.is_empty() && insert.columns.is_empty())
                    {
                        return Err(Error::sql(
                            1136,
                            "21S01",
                            format!("Column count doesn't match value count at row {}", i + 1),
                        ));
                    }
                    let mut bound = Vec::with_capacity(row.len());
                    for e in row {
                        bound.push(if is_default(e) {
                            default_marker()
                        } else {
                            binder.bind_constant(e)?.0
                        });
                    }
                    rows.push(bound);
                }
                InsertSource::Values(rows)
            }
            _ => {
                let plan = Binder::new(session).bind_statement_query(source)?;
                if plan.width() != columns.len() {
                    return Err(Error::sql(
                        1136,
                        "21S01",
                        "Column count doesn't match value count at row 1",
                    ));
                }
                InsertSource::Query(plan)
            }
        }
    };
    let on_duplicate = match &insert.on {
        None => None,
        Some(ast::OnInsert::DuplicateKeyUpdate(assignments)) => {
            // Scope: the existing row, then the proposed row under names only
            // `VALUES(c)` and the row alias reach (`proposed_name`).
            let mut scope = table_scope(&table, &name);
            scope
                .columns
                .extend(
                    table_scope(&table, &name)
                        .columns
                        .into_iter()
                        .map(|c| ScopeColumn {
                            table: None,
                            name: proposed_name(&c.name),
                            ..c
                        }),
                );
            let proposed = ProposedRow::new(insert, &table, &columns);
            let mut out = Vec::new();
            let mut binder = Binder::new(session);
            for a in assignments {
                let ast::AssignmentTarget::ColumnName(n) = &a.target else {
                    return Err(unsupported("tuple assignment"));
                };
                let n = object_name(n).pop().unwrap_or_default();
                let column = position(&n)?;
                if def.is_generated(column) {
                    // `c = DEFAULT` leaves a generated column to its expression.
                    if is_default(&a.value) {
                        continue;
                    }
                    return Err(crate::generated::value_not_allowed(
                        &def.columns[column].name,
                        &def.name,
                    ));
                }
                let value = proposed.rewrite(&a.value);
                out.push((column, binder.bind_in_scope(&value, &scope)?.0));
            }
            Some(out)
        }
        Some(other) => return Err(unsupported(other)),
    };
    let defaults = defaults(session, &table)?;
    let checks = TableChecks::bind(session, table.def())?;
    let generated = TableGenerated::bind(session, table.def())?;
    Ok(Bound::Insert(InsertPlan {
        table,
        columns,
        source,
        defaults,
        ignore: insert.ignore,
        replace: insert.replace_into,
        on_duplicate,
        row_assignments: Vec::new(),
        checks,
        generated,
    }))
}

/// Whether `e` is the keyword DEFAULT (as a value of INSERT or an assignment).
fn is_default(e: &ast::Expr) -> bool {
    matches!(e, ast::Expr::Identifier(id)
        if id.value.eq_ignore_ascii_case("default") && id.quote_style.is_none())
}

/// What a source row's DEFAULT binds to: [`run_insert`] reads it as "no value".
fn default_marker() -> Expr {
    Expr::Function {
        name: "__DEFAULT".into(),
        args: vec![],
        collation: Collation::CaseInsensitive,
    }
}

impl InsertPlan {
    /// The plan LOAD DATA inserts its rows with (`crate::load`): `columns` of `table`
    /// in the order of each row's values, the rest from their defaults. Each source
    /// row carries, after the columns' values, the values of `variables` (LOAD DATA's
    /// `@name` fields, lower-cased), which the `assignments` (its SET clause) read as
    /// `@name`; the assignments also read the row's columns by name, as read from the
    /// file, set by an earlier assignment or defaulted (MySQL's order).
    pub(crate) fn for_load(
        session: &mut Session,
        table: Arc<Table>,
        columns: Vec<usize>,
        variables: &[String],
        assignments: &[(String, ast::Expr)],
        ignore: bool,
        replace: bool,
    ) -> Result<InsertPlan> {
        let defaults = defaults(session, &table)?;
        let def = table.def();
        let mut scope = table_scope(&table, &def.name);
        scope.columns.extend(variables.iter().map(|v| ScopeColumn {
            table: None,
            name: crate::bind::row_variable_column(v),
            ty: SqlType::TEXT,
            nullable: true,
            tinyint1: false,
            hidden: false,
            using_first: false,
            key: None,
        }));
        let mut binder = Binder::new(session).with_row_variables(variables.to_vec());
        let mut row_assignments = Vec::with_capacity(assignments.len());
        for (name, e) in assignments {
            let c = def.column_index(name).map_err(|_| {
                Error::sql(
                    1054,
                    "42S22",
                    format!("Unknown column '{name}' in 'field list'"),
                )
            })?;
            if def.is_generated(c) {
                return Err(crate::generated::value_not_allowed(name, &def.name));
            }
            row_assignments.push((c, binder.bind_in_scope(e, &scope)?.0));
        }
        let checks = TableChecks::bind(session, def)?;
        let generated = TableGenerated::bind(session, def)?;
        Ok(InsertPlan {
            table,
            columns,
            source: InsertSource::Values(Vec::new()),
            defaults,
            ignore,
            replace,
            on_duplicate: None,
            row_assignments,
            checks,
            generated,
        })
    }
}

/// The name of the proposed row's column `column` in ON DUPLICATE KEY UPDATE's scope.
/// It starts with NUL, which no identifier can hold, so a bare name reaches only the
/// existing row and only `VALUES(c)` (or the row alias) reaches the proposed one.
fn proposed_name(column: &str) -> String {
    format!("\0{column}")
}

/// How ON DUPLICATE KEY UPDATE names the proposed row: `VALUES(c)`, and with MySQL
/// 8.0.19's row alias (`VALUES (...) AS new [(m, n)]`) `new.c` and the column aliases.
struct ProposedRow {
    alias: Option<String>,
    /// Column alias and the table column it names.
    column_aliases: Vec<(String, String)>,
}

impl ProposedRow {
    fn new(insert: &ast::Insert, table: &Table, columns: &[usize]) -> ProposedRow {
        let Some(aliases) = &insert.insert_alias else {
            return ProposedRow {
                alias: None,
                column_aliases: Vec::new(),
            };
        };
        let def = table.def();
        let column_aliases = aliases
            .col_aliases
            .iter()
            .flatten()
            .zip(columns)
            .map(|(a, &c)| (a.value.clone(), def.columns[c].name.clone()))
            .collect();
        ProposedRow {
            alias: object_name(&aliases.row_alias).pop(),
            column_aliases,
        }
    }

    fn column(&self, name: &str) -> ast::Expr {
        let column = self
            .column_aliases
            .iter()
            .find(|(a, _)| a.eq_ignore_ascii_case(name))
            .map_or(name, |(_, c)| c.as_str());
        ast::Expr::Identifier(ast::Ident::new(proposed_name(column)))
    }

    /// Rewrites the references to the proposed row in `e` to its scope names.
    fn rewrite(&self, e: &ast::Expr) -> ast::Expr {
        use ast::Expr as E;
        let boxed = |x: &ast::Expr| Box::new(self.rewrite(x));
        match e {
            E::Function(f)
                if object_name(&f.name)
                    .join(".")
                    .eq_ignore_ascii_case("values") =>
            {
                if let ast::FunctionArguments::List(list) = &f.args {
                    if let [ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(arg))] =
                        list.args.as_slice()
                    {
                        match arg {
                            E::Identifier(i) => return self.column(&i.value),
                            E::CompoundIdentifier(parts) => {
                                if let Some(last) = parts.last() {
                                    return self.column(&last.value);
                                }
                            }
                            _ => {}
                        }
                    }
                }
                e.clone()
            }
            E::Identifier(i)
                if self
                    .column_aliases
                    .iter()
                    .any(|(a, _)| a.eq_ignore_ascii_case(&i.value)) =>
            {
                self.column(&i.value)
            }
            E::CompoundIdentifier(parts)
                if parts.len() == 2
                    && self
                        .alias
                        .as_deref()
                        .is_some_and(|a| a.eq_ignore_ascii_case(&parts[0].value)) =>
            {
                self.column(&parts[1].value)
            }
            E::BinaryOp { left, op, right } => E::BinaryOp {
                left: boxed(left),
                op: op.clone(),
                right: boxed(right),
            },
            E::Nested(inner) => E::Nested(boxed(inner)),
            E::UnaryOp { op, expr } => E::UnaryOp {
                op: *op,
                expr: boxed(expr),
            },
            E::IsNull(x) => E::IsNull(boxed(x)),
            E::IsNotNull(x) => E::IsNotNull(boxed(x)),
            E::Cast {
                kind,
                expr,
                data_type,
                format,
            } => E::Cast {
                kind: kind.clone(),
                expr: boxed(expr),
                data_type: data_type.clone(),
                format: format.clone(),
            },
            E::Between {
                expr,
                negated,
                low,
                high,
            } => E::Between {
                expr: boxed(expr),
                negated: *negated,
                low: boxed(low),
                high: boxed(high),
            },
            E::InList {
                expr,
                list,
                negated,
            } => E::InList {
                expr: boxed(expr),
                list: list.iter().map(|x| self.rewrite(x)).collect(),
                negated: *negated,
            },
            E::Case {
                case_token,
                end_token,
                operand,
                conditions,
                else_result,
            } => E::Case {
                case_token: case_token.clone(),
                end_token: end_token.clone(),
                operand: operand.as_deref().map(boxed),
                conditions: conditions
                    .iter()
                    .map(|w| ast::CaseWhen {
                        condition: self.rewrite(&w.condition),
                        result: self.rewrite(&w.result),
                    })
                    .collect(),
                else_result: else_result.as_deref().map(boxed),
            },
            E::Function(f) => {
                let mut f = f.clone();
                if let ast::FunctionArguments::List(list) = &mut f.args {
                    for a in &mut list.args {
                        if let ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(x)) = a {
                            *x = self.rewrite(x);
                        }
                    }
                }
                E::Function(f)
            }
            other => other.clone(),
        }
    }
}

/// The rows of one table that UPDATE or DELETE change: a locking scan with the
/// statement's WHERE, sorted and limited as it asks.
fn target_rows(
    session: &mut Session,
    table: &Arc<Table>,
    alias: &str,
    selection: Option<&ast::Expr>,
    order_by: &[ast::OrderByExpr],
    limit: Option<&ast::Expr>,
) -> Result<Plan> {
    let scope = table_scope(table, alias);
    let mut binder = Binder::new(session);
    let mut filters = Vec::new();
    if let Some(w) = selection {
        let (e, _) = binder.bind_in_scope(w, &scope)?;
        crate::planner::split_conjuncts(e, &mut filters);
    }
    let mut plan = crate::planner::scan_plan(
        table,
        alias,
        &table_columns(table, alias),
        &[],
        RowLock::Exclusive,
        WaitPolicy::Wait,
        &filters,
    )?;
    if !order_by.is_empty() {
        let mut keys = Vec::new();
        for o in order_by {
            let (expr, ty) = binder.bind_in_scope(&o.expr, &scope)?;
            keys.push(SortKey {
                expr: crate::bind::sort_expr(expr, ty),
                descending: matches!(o.options.sort, Some(ast::OrderBySort::Desc)),
                collation: ty.collation(),
            });
        }
        plan = Plan::Sort {
            input: Box::new(plan),
            keys,
        };
    }
    if let Some(limit) = limit {
        plan = Plan::Limit {
            input: Box::new(plan),
            offset: RowCount::Literal(0),
            count: Some(binder.row_count(limit)?),
            count_all: false,
        };
    }
    Ok(plan)
}

/// The table a statement writes; a view there is error 1288 (Tarn's views are
/// read-only), not "doesn't exist".
fn target_table(session: &Session, db: &str, name: &str, statement: &str) -> Result<Arc<Table>> {
    crate::bind::BindContext::table(session, db, name).map_err(|e| {
        if matches!(session.engine().storage().view(db, name), Ok(Some(_))) {
            Error::sql(
                1288,
                "HY000",
                format!("The target table {name} of the {statement} is not updatable"),
            )
        } else {
            e
        }
    })
}

fn single_table(
    session: &Session,
    twj: &ast::TableWithJoins,
    needed: Privileges,
    statement: &str,
) -> Result<(Arc<Table>, String)> {
    if !twj.joins.is_empty() {
        return Err(unsupported("multi-table UPDATE or DELETE"));
    }
    let ast::TableFactor::Table { name, alias, .. } = &twj.relation else {
        return Err(unsupported("UPDATE or DELETE of a derived table"));
    };
    let (db, table_name) = Binder::new(session).table_ref(name)?;
    session.check_table(needed, &db, &table_name)?;
    let alias = alias
        .as_ref()
        .map_or(table_name.clone(), |a| a.name.value.clone());
    let table = target_table(session, &db, &table_name, statement)?;
    Ok((table, alias))
}

fn bind_update(session: &mut Session, update: &ast::Update) -> Result<Bound> {
    if update.from.is_some() || !update.table.joins.is_empty() {
        return multi::bind_update(session, update);
    }
    let (table, alias) = single_table(session, &update.table, Privileges::UPDATE, "UPDATE")?;
    let scope = table_scope(&table, &alias);
    let mut assignments = Vec::new();
    for a in &update.assignments {
        let ast::AssignmentTarget::ColumnName(n) = &a.target else {
            return Err(unsupported("tuple assignment"));
        };
        let n = object_name(n).pop().unwrap_or_default();
        let column = table.def().column_index(&n).map_err(|_| {
            Error::sql(
                1054,
                "42S22",
                format!("Unknown column '{n}' in 'field list'"),
            )
        })?;
        if table.def().is_generated(column) {
            // `SET c = DEFAULT` leaves a generated column to its expression.
            if is_default(&a.value) {
                continue;
            }
            return Err(crate::generated::value_not_allowed(
                &table.def().columns[column].name,
                &table.def().name,
            ));
        }
        let e = if is_default(&a.value) {
            update_default(session, &table, column)?
        } else {
            Binder::new(session).bind_in_scope(&a.value, &scope)?.0
        };
        assignments.push((column, e));
    }
    let rows = target_rows(
        session,
        &table,
        &alias,
        update.selection.as_ref(),
        &update.order_by,
        update.limit.as_ref(),
    )?;
    let checks = TableChecks::bind(session, table.def())?;
    let generated = TableGenerated::bind(session, table.def())?;
    Ok(Bound::Update(UpdatePlan {
        table,
        rows,
        assignments,
        checks,
        generated,
        ignore: crate::parse::update_ignores(update),
    }))
}

fn bind_delete(session: &mut Session, delete: &ast::Delete) -> Result<Bound> {
    if !delete.tables.is_empty() || delete.using.is_some() {
        return multi::bind_delete(session, delete);
    }
    let from = match &delete.from {
        ast::FromTable::WithFromKeyword(t) | ast::FromTable::WithoutKeyword(t) => t,
    };
    let [twj] = from.as_slice() else {
        return Err(unsupported("multi-table DELETE"));
    };
    let (table, alias) = single_table(session, twj, Privileges::DELETE, "DELETE")?;
    let rows = target_rows(
        session,
        &table,
        &alias,
        delete.selection.as_ref(),
        &delete.order_by,
        delete.limit.as_ref(),
    )?;
    Ok(Bound::Delete(DeletePlan {
        table,
        rows,
        ignore: crate::parse::delete_ignores(delete),
    }))
}

/// SELECT SQL_CALC_FOUND_ROWS: on the first SELECT of the statement (MySQL allows
/// it nowhere else).
fn calc_found_rows(query: &ast::Query) -> bool {
    let mut body = query.body.as_ref();
    loop {
        match body {
            ast::SetExpr::Select(select) => {
                return select
                    .select_modifiers
                    .as_ref()
                    .is_some_and(|m| m.sql_calc_found_rows);
            }
            ast::SetExpr::SetOperation { left, .. } => body = left,
            ast::SetExpr::Query(q) => body = q.body.as_ref(),
            _ => return false,
        }
    }
}

/// Makes the statement's own LIMIT (under the projection that drops hidden sort
/// columns, if any) count every row for FOUND_ROWS(). Without a LIMIT, FOUND_ROWS()
/// is the result's row count anyway.
fn count_all_before_limit(plan: &mut Plan) {
    match plan {
        Plan::Limit { count_all, .. } => *count_all = true,
        Plan::Project { input, .. } => count_all_before_limit(input),
        _ => {}
    }
}

// ------------------------------------------------------------------ execution

/// Runs a bound statement in transaction `tx`.
pub fn execute(
    session: &mut Session,
    bound: &Bound,
    tx: &RefCell<Transaction>,
    params: &[Value],
) -> Result<QueryResult> {
    match bound {
        Bound::Query(plan) => {
            let columns = plan.columns().to_vec();
            if let Some(mut sink) = session.row_sink.take() {
                let streamed = session.with_exec(tx, params, |cx| {
                    sink.begin(&columns)?;
                    if let Some(encoder) = sink.encoder() {
                        let deliver = &mut |rows: crate::session::EncodedRows| sink.encoded(rows);
                        if let Some(rows) =
                            crate::parallel::stream_encoded(plan, cx, encoder, deliver)
                        {
                            return rows;
                        }
                    }
                    let mut op = exec::open(plan)?;
                    let mut rows = 0u64;
                    while let Some(chunk) = op.next(cx)? {
                        rows += chunk.len() as u64;
                        sink.chunk(chunk)?;
                    }
                    Ok(rows)
                });
                session.row_sink = Some(sink);
                return Ok(QueryResult::Streamed { rows: streamed? });
            }
            let chunks = session.with_exec(tx, params, |cx| exec::collect(plan, cx))?;
            Ok(QueryResult::Rows { columns, chunks })
        }
        Bound::Insert(p) => run_insert(session, p, tx, params),
        Bound::Update(p) => run_update(session, p, tx, params),
        Bound::Delete(p) => run_delete(session, p, tx, params),
        Bound::MultiUpdate(p) => multi::run_update(session, p, tx, params),
        Bound::MultiDelete(p) => multi::run_delete(session, p, tx, params),
        Bound::SelectInto { plan, variables } => select_into(session, plan, variables, tx, params),
    }
}

/// Runs `SELECT .. INTO @a, ..` as MySQL does: no result set; one row sets the
/// variables (affected rows 1); no row leaves them and is warning 1329 (affected
/// rows 0); a second row is error 1172, after the first row set them (MySQL assigns
/// each row as it comes and fails at the second). At most two rows are read.
fn select_into(
    session: &mut Session,
    plan: &Plan,
    variables: &[String],
    tx: &RefCell<Transaction>,
    params: &[Value],
) -> Result<QueryResult> {
    let rows = session.with_exec(tx, params, |cx| {
        let mut op = exec::open(plan)?;
        let mut rows = Vec::new();
        while rows.len() < 2 {
            let Some(chunk) = op.next(cx)? else {
                break;
            };
            let wanted = 2 - rows.len();
            rows.extend(chunk.rows().take(wanted));
        }
        Ok(rows)
    })?;
    let Some(first) = rows.first() else {
        session.add_warning(
            "Warning",
            1329,
            "No data - zero rows fetched, selected, or processed".to_string(),
        );
        return Ok(QueryResult::ok(0));
    };
    for (name, value) in variables.iter().zip(first) {
        session.set_user_variable(name, value.clone())?;
    }
    if rows.len() > 1 {
        return Err(Error::sql(
            1172,
            "42000",
            "Result consisted of more than one row",
        ));
    }
    Ok(QueryResult::ok(1))
}

fn primary_key_values(table: &Table, row: &[Value]) -> Vec<Value> {
    table
        .def()
        .primary_key
        .iter()
        .map(|&c| row[c].clone())
        .collect()
}

/// The clustered keys of `rows` (rows of `table` read with exclusive locks), in
/// order. With a primary key a row's key is its values'. A table without one is keyed
/// by a hidden row id that rows do not carry: its rows are found again by a locking
/// scan of the table and matched by value (rows equal in every column are
/// interchangeable to the statement). Only the keys of matched rows are kept.
fn row_keys(table: &Table, tx: &RefCell<Transaction>, rows: &[Vec<Value>]) -> Result<Vec<Vec<u8>>> {
    if !table.def().primary_key.is_empty() {
        return rows
            .iter()
            .map(|row| table.encode_primary_key(&primary_key_values(table, row)))
            .collect();
    }
    if rows.is_empty() {
        return Ok(Vec::new());
    }
    let identity = |row: &[Value]| format!("{row:?}");
    // Row identity -> how many more rows with it are wanted, and the keys found.
    let mut wanted: HashMap<String, (usize, Vec<Vec<u8>>)> = HashMap::new();
    for row in rows {
        wanted.entry(identity(row)).or_default().0 += 1;
    }
    table.scan_each_tx(
        &mut tx.borrow_mut(),
        std::ops::Bound::Unbounded,
        std::ops::Bound::Unbounded,
        RowLock::Exclusive,
        WaitPolicy::Wait,
        usize::MAX,
        &mut |key, row| {
            if let Some((left, keys)) = wanted.get_mut(&identity(&row)) {
                if *left > 0 {
                    *left -= 1;
                    keys.push(key.to_vec());
                }
            }
        },
    )?;
    let mut keys = Vec::with_capacity(rows.len());
    for row in rows {
        let key = wanted
            .get_mut(&identity(row))
            .and_then(|(_, keys)| keys.pop())
            .ok_or_else(|| Error::sql(1105, "HY000", "a row to change vanished from its table"))?;
        keys.push(key);
    }
    Ok(keys)
}

/// Converts every value of `row`, the `row_number`th of a statement (errors name
/// it), to its column's type (strict mode).
/// Generated columns are left as they are: [`TableGenerated::fill`] gives them their
/// values afterwards.
fn convert_row_at(table: &Table, row: Vec<Value>, row_number: u64) -> Result<Vec<Value>> {
    let def = table.def();
    row.into_iter()
        .zip(&def.columns)
        .enumerate()
        .map(|(i, (v, c))| {
            if def.is_generated(i) {
                Ok(v)
            } else {
                convert_value_at(table, c, v, row_number)
            }
        })
        .collect()
}

/// Converts one value of the `row_number`th row to column `c`'s type (strict mode).
fn convert_value_at(
    table: &Table,
    c: &tarn_row::Column,
    v: Value,
    row_number: u64,
) -> Result<Value> {
    if v.is_null() {
        if !c.nullable {
            return Err(Error::NullNotAllowed {
                column: c.name.clone(),
            });
        }
        return Ok(Value::Null);
    }
    cast::to_column_at(v, c.ty, c.collation, &column_label(table, c), row_number)
}

/// How conversion errors name a column: MySQL names a JSON column with its table
/// (`Invalid JSON text ... for column 't.j'`), other columns alone.
fn column_label<'a>(table: &Table, c: &'a tarn_row::Column) -> std::borrow::Cow<'a, str> {
    if c.ty == ColumnType::Json {
        std::borrow::Cow::Owned(format!("{}.{}", table.def().name, c.name))
    } else {
        std::borrow::Cow::Borrowed(&c.name)
    }
}

/// How a written value that does not fit its column is taken.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fit {
    /// Refused with an error (strict mode: `STRICT_TRANS_TABLES` or
    /// `STRICT_ALL_TABLES`, every Tarn table being transactional).
    Strict,
    /// The nearest value the column holds, with a warning (IGNORE, or no strict
    /// mode; see [`convert_row_leniently`]). `null_to_default`: NULL into a NOT NULL
    /// column too; else that stays error 1048 (a single-row INSERT outside strict
    /// mode, as in MySQL).
    Nearest { null_to_default: bool },
}

impl Fit {
    /// How a statement with IGNORE (or not) fits its values in `session`'s sql_mode;
    /// `many_rows`: outside strict mode NULL into NOT NULL takes the default too
    /// (a multi-row INSERT, INSERT .. SELECT, UPDATE).
    pub(crate) fn of(session: &Session, ignore: bool, many_rows: bool) -> Fit {
        if ignore {
            Fit::Nearest {
                null_to_default: true,
            }
        } else if session.strict_mode() {
            Fit::Strict
        } else {
            Fit::Nearest {
                null_to_default: many_rows,
            }
        }
    }
}

/// Converts a row as `fit` says.
fn convert_row_fitting(
    session: &mut Session,
    table: &Table,
    row: Vec<Value>,
    row_number: u64,
    fit: Fit,
) -> Result<Vec<Value>> {
    match fit {
        Fit::Strict => convert_row_at(table, row, row_number),
        Fit::Nearest { null_to_default } => {
            convert_row_leniently(session, table, row, row_number, null_to_default)
        }
    }
}

/// Converts one value as `fit` says.
fn convert_value_fitting(
    session: &mut Session,
    table: &Table,
    c: &tarn_row::Column,
    v: Value,
    row_number: u64,
    fit: Fit,
) -> Result<Value> {
    match fit {
        Fit::Strict => convert_value_at(table, c, v, row_number),
        Fit::Nearest { null_to_default } => {
            convert_value_leniently(session, table, c, v, row_number, null_to_default)
        }
    }
}

/// Converts a row for INSERT IGNORE (or outside strict mode), which turns what
/// strict mode refuses into a warning and the nearest value the column can hold, as
/// MySQL does: NULL into a NOT NULL column is the type's implicit default (1048; with
/// `null_to_default` only), a number out of range is clipped to the range (1264), a
/// string that is not wholly a number is read up to its numeric prefix (1366), and a
/// string too long is cut (1265). Dates have no zero value in Tarn, so a bad date
/// stays an error.
fn convert_row_leniently(
    session: &mut Session,
    table: &Table,
    row: Vec<Value>,
    row_number: u64,
    null_to_default: bool,
) -> Result<Vec<Value>> {
    let def = table.def();
    row.into_iter()
        .zip(&def.columns)
        .enumerate()
        .map(|(i, (v, c))| {
            if def.is_generated(i) {
                Ok(v)
            } else {
                convert_value_leniently(session, table, c, v, row_number, null_to_default)
            }
        })
        .collect()
}

/// Computes the generated columns of `row` (converted otherwise) with `generated`,
/// converting each value as the statement converts (`fit`).
fn fill_generated(
    session: &mut Session,
    generated: Option<&TableGenerated>,
    functions: &crate::scalar::FnContext,
    table: &Table,
    row: &mut [Value],
    fit: Fit,
    row_number: u64,
) -> Result<()> {
    let Some(generated) = generated else {
        return Ok(());
    };
    let columns = &table.def().columns;
    generated.fill(row, functions, &mut |c, v| {
        convert_value_fitting(session, table, &columns[c], v, row_number, fit)
    })
}

/// Converts one value of the `row_number`th row to column `c`'s type as
/// [`convert_row_leniently`] does.
fn convert_value_leniently(
    session: &mut Session,
    table: &Table,
    c: &tarn_row::Column,
    v: Value,
    row_number: u64,
    null_to_default: bool,
) -> Result<Value> {
    if v.is_null() {
        if c.nullable {
            return Ok(Value::Null);
        }
        let default = implicit_default(c.ty).filter(|_| null_to_default);
        let Some(default) = default else {
            return Err(Error::NullNotAllowed {
                column: c.name.clone(),
            });
        };
        session.add_warning(
            "Warning",
            1048,
            format!("Column '{}' cannot be null", c.name),
        );
        return Ok(default);
    }
    let error = match cast::to_column_at(
        v.clone(),
        c.ty,
        c.collation,
        &column_label(table, c),
        row_number,
    ) {
        Ok(x) => return Ok(x),
        Err(e) => e,
    };
    let code = error.mysql_code();
    let nearest = match (nearest_storable(&v, c.ty), c.ty) {
        (None, _) => return Err(error),
        // Already what the column stores (the error value '', some members).
        (Some(nearest), ColumnType::Enum { .. } | ColumnType::Set { .. }) => nearest,
        (Some(nearest), _) => cast::to_column_at(nearest, c.ty, c.collation, &c.name, row_number)?,
    };
    if code == 1406 {
        session.add_warning(
            "Warning",
            1265,
            format!("Data truncated for column '{}' at row {row_number}", c.name),
        );
    } else {
        session.add_warning("Warning", code, error.to_string());
    }
    Ok(nearest)
}

/// The value MySQL stores for a NOT NULL column given NULL outside strict mode.
fn implicit_default(ty: ColumnType) -> Option<Value> {
    Some(match ty {
        ColumnType::Float => Value::Float(0.0),
        ColumnType::Double => Value::Double(0.0),
        ColumnType::Decimal { .. } => Value::Int(0),
        // MySQL's implicit JSON value is the JSON null.
        ColumnType::Json => Value::Bytes(b"null".to_vec()),
        // An ENUM's implicit default is its first member.
        ColumnType::Enum { members } => Value::Bytes(members.name(1).as_bytes().to_vec()),
        ColumnType::Set { .. } => Value::Bytes(Vec::new()),
        ColumnType::Bit { .. } => Value::UInt(0),
        // BINARY(n)'s empty string becomes n zero bytes when it is stored.
        ty if ty.is_variable_len() => Value::Bytes(Vec::new()),
        ty if ty.is_unsigned_int() => Value::UInt(0),
        ty if ty.is_signed_int() => Value::Int(0),
        _ => return None,
    })
}

/// The nearest value to `v` a column of type `ty` holds, read leniently; None where
/// there is none (dates).
fn nearest_storable(v: &Value, ty: ColumnType) -> Option<Value> {
    if let Some((min, max)) = ty.int_range() {
        let n = match cast::to_decimal(v) {
            Some(d) => d
                .round_to_i128()
                .unwrap_or(if d.is_negative() { min } else { max }),
            // A double beyond any decimal.
            None => match cast::to_f64(v) {
                Some(f) if f < 0.0 => min,
                Some(f) if f > 0.0 => max,
                _ => 0,
            },
        };
        let n = n.clamp(min, max);
        return Some(if ty.is_unsigned_int() {
            Value::UInt(n as u64)
        } else {
            Value::Int(n as i64)
        });
    }
    match ty {
        ColumnType::Decimal { precision, scale } => {
            let d = cast::to_decimal(v)
                .unwrap_or_else(|| Decimal::from_i128(0, 0).expect("zero is a decimal"));
            if let Ok(r) = d.rescale(precision, scale) {
                return Some(Value::Decimal(r));
            }
            let largest = 10i128.pow(u32::from(precision)) - 1;
            let mantissa = if d.is_negative() { -largest } else { largest };
            Decimal::from_i128(mantissa, scale).ok().map(Value::Decimal)
        }
        ColumnType::Float | ColumnType::Double => {
            let limit = if ty == ColumnType::Float {
                f64::from(f32::MAX)
            } else {
                f64::MAX
            };
            let f = cast::to_f64(v).unwrap_or(0.0);
            let f = if f.is_nan() {
                0.0
            } else {
                f.clamp(-limit, limit)
            };
            Some(Value::Double(f))
        }
        ColumnType::Char { len } | ColumnType::VarChar { len } => {
            let text = cast::to_text(v)?;
            let text = String::from_utf8_lossy(&text);
            Some(Value::Bytes(
                text.chars()
                    .take(len as usize)
                    .collect::<String>()
                    .into_bytes(),
            ))
        }
        ColumnType::Binary { len_bytes } | ColumnType::VarBinary { len_bytes } => {
            let mut bytes = cast::to_text(v)?;
            bytes.truncate(len_bytes as usize);
            Some(Value::Bytes(bytes))
        }
        // No member: the error value ''. A SET keeps the members it names.
        ColumnType::Enum { .. } => Some(Value::Bytes(Vec::new())),
        ColumnType::Set { members } => {
            let text = cast::to_text(v)?;
            let bits = text
                .split(|b| *b == b',')
                .filter_map(|part| members.find(part, tarn_row::Collation::CaseInsensitive))
                .fold(0u64, |bits, index| bits | 1 << (index - 1));
            Some(Value::Bytes(members.set_text(bits)))
        }
        // Too many bits: all n bits set.
        ColumnType::Bit { len_bits } => Some(Value::UInt(match len_bits {
            64.. => u64::MAX,
            n => (1u64 << n) - 1,
        })),
        ty if ty.is_lob() => {
            let mut bytes = cast::to_text(v)?;
            let limit = ty.lob_len_max_bytes().expect("a TEXT or BLOB type") as usize;
            bytes.truncate(limit);
            if ty.is_text() {
                // Cut at the last whole character.
                if let Err(e) = std::str::from_utf8(&bytes) {
                    bytes.truncate(e.valid_up_to());
                }
            }
            Some(Value::Bytes(bytes))
        }
        _ => None,
    }
}

fn run_insert(
    session: &mut Session,
    p: &InsertPlan,
    tx: &RefCell<Transaction>,
    params: &[Value],
) -> Result<QueryResult> {
    // The source rows, evaluated before any is inserted (INSERT ... SELECT from the
    // same table reads it as it was). `None` stands for DEFAULT.
    let source_rows: Vec<SourceRow> = session.with_exec(tx, params, |cx| {
        let ecx = crate::expr::EvalContext {
            params: cx.params,
            outer: &[],
            functions: cx.functions,
            subqueries: cx,
        };
        match &p.source {
            InsertSource::Values(rows) => rows
                .iter()
                .map(|r| {
                    r.iter()
                        .map(|e| match e {
                            Expr::Function { name, args, .. }
                                if &**name == "__DEFAULT" && args.is_empty() =>
                            {
                                Ok(None)
                            }
                            e => e.eval_row(&[], &ecx).map(Some),
                        })
                        .collect()
                })
                .collect(),
            InsertSource::Query(plan) => Ok(exec::collect_rows(plan, cx)?
                .into_iter()
                .map(|row| row.into_iter().map(Some).collect())
                .collect()),
        }
    })?;
    let inserted = insert_rows(session, p, tx, params, source_rows.into_iter().map(Ok))?;
    Ok(QueryResult::Ok {
        affected_rows: inserted.affected_rows,
        last_insert_id: inserted.insert_id,
        info: String::new(),
    })
}

/// One source row of an INSERT: a value for each of the plan's target columns, in
/// order, `None` for DEFAULT.
pub(crate) type SourceRow = Vec<Option<Value>>;

/// What [`insert_rows`] did.
pub(crate) struct Inserted {
    /// Source rows read.
    pub rows: u64,
    /// MySQL's affected rows: 1 per row inserted, 2 per row REPLACE or ON DUPLICATE
    /// KEY UPDATE changed (plus 1 per row REPLACE deleted).
    pub affected_rows: u64,
    /// Rows that met an existing key: skipped (IGNORE) or replaced (REPLACE).
    pub duplicates: u64,
    /// The first AUTO_INCREMENT value generated for a row that was inserted, if any
    /// (what `LAST_INSERT_ID()` becomes).
    pub first_generated: Option<u64>,
    /// The insert id the OK packet reports (`mysql_insert_id()`): the first value
    /// generated for an inserted row; else, if any row was inserted or updated, the
    /// AUTO_INCREMENT column of the last row the statement handled (an explicit
    /// value, which ORMs read back as the new row's key: Django sets the primary key
    /// of `create(id=5)` from it); else 0. This is MySQL's `write_record` outcome,
    /// down to the last row being one INSERT IGNORE skipped.
    pub insert_id: u64,
}

/// What [`insert_one`] did with one row.
enum RowOutcome {
    /// Inserted (REPLACE: after deleting the rows it met).
    Inserted,
    /// Met an existing row that ON DUPLICATE KEY UPDATE changed; its AUTO_INCREMENT
    /// column's value now (None: the table has none).
    Updated(Option<Value>),
    /// Met an existing row that ON DUPLICATE KEY UPDATE left as it was; its
    /// AUTO_INCREMENT column's value.
    Unchanged(Option<Value>),
    /// Skipped: IGNORE met a duplicate or a missing parent.
    Skipped,
}

/// Inserts `rows` into `p`'s table as `p` says (defaults, AUTO_INCREMENT,
/// conversion to the column types, IGNORE / REPLACE / ON DUPLICATE KEY UPDATE),
/// one after the other in the statement's transaction `tx`.
pub(crate) fn insert_rows(
    session: &mut Session,
    p: &InsertPlan,
    tx: &RefCell<Transaction>,
    params: &[Value],
    rows: impl Iterator<Item = Result<SourceRow>>,
) -> Result<Inserted> {
    let table = &p.table;
    let def = table.def();
    let width = def.columns.len();
    let fn_ctx = session.fn_context();
    let auto = table.auto_increment_column();
    // One VALUES row is "single-row" for NULL into NOT NULL outside strict mode;
    // LOAD DATA's plan has none (its rows come one by one).
    let many_rows = match &p.source {
        InsertSource::Values(rows) => rows.len() != 1,
        InsertSource::Query(_) => true,
    };
    let fit = Fit::of(session, p.ignore, many_rows);
    let mut first_generated: Option<u64> = None;
    // The AUTO_INCREMENT column of the last row handled, and whether any row was
    // written (see `Inserted::insert_id`).
    let mut last_auto = Value::Null;
    let mut written = false;
    let mut affected = 0u64;
    let mut duplicates = 0u64;
    let mut row_count = 0u64;
    let fk = Enforcer::of(session);
    let checker = p.checks.as_ref().map(|c| c.checker(fn_ctx.clone()));
    for source in rows {
        let source = source?;
        row_count += 1;
        let row_number = row_count;
        // The full row: given values, then defaults. What the source row carries
        // past the columns are LOAD DATA's `@variable` values.
        let mut row: Vec<Option<Value>> = vec![None; width];
        let mut source = source.into_iter();
        for (&c, v) in p.columns.iter().zip(source.by_ref()) {
            row[c] = v;
        }
        let variables: Vec<Value> = source.map(|v| v.unwrap_or(Value::Null)).collect();
        let mut full = Vec::with_capacity(width);
        for (c, given) in row.into_iter().enumerate() {
            let column = &def.columns[c];
            if def.is_generated(c) {
                // Only DEFAULT; the value is computed once the row is converted.
                if given.is_some() {
                    return Err(crate::generated::value_not_allowed(&column.name, &def.name));
                }
                full.push(Value::Null);
                continue;
            }
            let value = match given {
                Some(v) => v,
                None => match &p.defaults[c] {
                    Some(e) => {
                        let cx = crate::expr::EvalContext {
                            params: &[],
                            outer: &[],
                            functions: &fn_ctx,
                            subqueries: &NoSubqueries,
                        };
                        e.eval_row(&[], &cx)?
                    }
                    None if column.nullable || auto == Some(c) => Value::Null,
                    // LOAD DATA's SET gives the value; until then the column reads
                    // as the type's zero (MySQL's record default).
                    None if p.row_assignments.iter().any(|(a, _)| *a == c) => {
                        implicit_default(column.ty).unwrap_or(Value::Null)
                    }
                    // An ENUM NOT NULL without a DEFAULT takes its first member, even
                    // in strict mode (MySQL and MariaDB).
                    None if matches!(column.ty, ColumnType::Enum { .. }) => {
                        implicit_default(column.ty).unwrap_or(Value::Null)
                    }
                    None => {
                        let error = Error::sql(
                            1364,
                            "HY000",
                            format!("Field '{}' doesn't have a default value", column.name),
                        );
                        // Outside strict mode (or with IGNORE): the type's implicit
                        // default, with the error as a warning.
                        match (fit, implicit_default(column.ty)) {
                            (Fit::Nearest { .. }, Some(value)) => {
                                session.add_warning("Warning", 1364, error.to_string());
                                value
                            }
                            _ => return Err(error),
                        }
                    }
                },
            };
            full.push(value);
        }
        // LOAD DATA's SET clause runs on the converted row, before AUTO_INCREMENT.
        let converted = !p.row_assignments.is_empty();
        if converted {
            full = assign_row(session, p, tx, params, &fn_ctx, full, variables, row_number)?;
        }
        // AUTO_INCREMENT: NULL or 0 takes the next value.
        let mut generated = None;
        if let Some(c) = auto {
            let zero = cast::to_i64(&full[c]) == Some(0);
            if full[c].is_null() || zero {
                let id = table.reserve_auto_increment(1)?;
                if let Some((_, max)) = def.columns[c].ty.int_range() {
                    if id as i128 > max {
                        return Err(Error::sql(
                            1467,
                            "HY000",
                            "Failed to read auto-increment value from storage engine",
                        ));
                    }
                }
                full[c] = if def.columns[c].ty.is_unsigned_int() {
                    Value::UInt(id)
                } else {
                    Value::Int(id as i64)
                };
                generated = Some(id);
                if converted {
                    let value = std::mem::replace(&mut full[c], Value::Null);
                    full[c] = convert_value_at(table, &def.columns[c], value, row_number)?;
                }
            }
        }
        let mut full = if converted {
            full
        } else {
            convert_row_fitting(session, table, full, row_number, fit)?
        };
        fill_generated(
            session,
            p.generated.as_ref(),
            &fn_ctx,
            table,
            &mut full,
            fit,
            row_number,
        )?;
        if let Some(c) = auto {
            if let Some(v) = cast::to_i64(&full[c]) {
                if v > 0 {
                    table.observe_auto_increment(v as u64);
                }
            }
        }
        let proposed_auto = auto.map(|c| full[c].clone());
        // CHECK constraints: on the row as it would be written (IGNORE skips it).
        if let Some(checker) = &checker
            && let Err(e) = checker.check(&full)
        {
            if !p.ignore {
                return Err(e);
            }
            session.add_warning("Warning", e.mysql_code(), e.to_string());
            last_auto = proposed_auto.unwrap_or(Value::Null);
            continue;
        }
        let (added, outcome) = insert_one(
            session,
            p,
            fk.as_ref(),
            checker.as_ref(),
            tx,
            params,
            full,
            &mut duplicates,
        )?;
        affected += added;
        let (row_auto, row_written) = match outcome {
            RowOutcome::Inserted => {
                if let Some(id) = generated {
                    first_generated.get_or_insert(id);
                }
                (proposed_auto, true)
            }
            RowOutcome::Updated(id) => (id, true),
            RowOutcome::Unchanged(id) => (id, false),
            RowOutcome::Skipped => (proposed_auto, false),
        };
        last_auto = row_auto.unwrap_or(Value::Null);
        written |= row_written;
    }
    check_divisions_by_zero(session, p.ignore)?;
    if let Some(id) = first_generated {
        session.set_last_insert_id(id);
    }
    let insert_id = match first_generated {
        Some(id) => id,
        None if written => match last_auto {
            Value::UInt(id) => id,
            // A negative explicit value reads as MySQL's unsigned id would.
            Value::Int(id) => id as u64,
            _ => 0,
        },
        None => 0,
    };
    Ok(Inserted {
        rows: row_count,
        affected_rows: affected,
        duplicates,
        first_generated,
        insert_id,
    })
}

/// Runs LOAD DATA's SET clause ([`InsertPlan::row_assignments`]) on one row: converts
/// `row` (given values and defaults) as the statement converts, then evaluates each
/// assignment over [the row, `variables`] and converts its value into its column, so
/// that later assignments read it. An AUTO_INCREMENT column without a value reads as 0:
/// its value is taken afterwards, as in MySQL.
#[allow(clippy::too_many_arguments)]
fn assign_row(
    session: &mut Session,
    p: &InsertPlan,
    tx: &RefCell<Transaction>,
    params: &[Value],
    functions: &crate::scalar::FnContext,
    row: Vec<Value>,
    variables: Vec<Value>,
    row_number: u64,
) -> Result<Vec<Value>> {
    let table = &p.table;
    let def = table.def();
    let auto = table.auto_increment_column();
    let fit = Fit::of(session, p.ignore, true);
    let convert = |session: &mut Session, c: usize, v: Value| {
        let column = &def.columns[c];
        if def.is_generated(c) {
            return Ok(v);
        }
        let v = if v.is_null() && auto == Some(c) {
            implicit_default(column.ty).unwrap_or(Value::Int(0))
        } else {
            v
        };
        convert_value_fitting(session, table, column, v, row_number, fit)
    };
    let mut scope_row = Vec::with_capacity(row.len() + variables.len());
    for (c, v) in row.into_iter().enumerate() {
        // A column the SET clause gives may be NULL until then, NOT NULL or not.
        let assigned = p.row_assignments.iter().any(|(a, _)| *a == c);
        scope_row.push(if v.is_null() && assigned && auto != Some(c) {
            v
        } else {
            convert(session, c, v)?
        });
    }
    scope_row.extend(variables);
    for (c, e) in &p.row_assignments {
        let v = session.with_exec_using(tx, params, functions, |cx| {
            let ecx = crate::expr::EvalContext {
                params: cx.params,
                outer: &[],
                functions: cx.functions,
                subqueries: cx,
            };
            e.eval_row(&scope_row, &ecx)
        })?;
        scope_row[*c] = convert(session, *c, v)?;
    }
    scope_row.truncate(def.columns.len());
    Ok(scope_row)
}

/// Inserts one converted row, handling duplicates as the statement asks; returns the
/// affected-row count it adds and what became of the row.
#[allow(clippy::too_many_arguments)]
fn insert_one(
    session: &mut Session,
    p: &InsertPlan,
    fk: Option<&Enforcer>,
    checker: Option<&Checker>,
    tx: &RefCell<Transaction>,
    params: &[Value],
    row: Vec<Value>,
    duplicates: &mut u64,
) -> Result<(u64, RowOutcome)> {
    let table = &p.table;
    let mut deleted = 0u64;
    // REPLACE may meet several conflicting rows (one per unique key).
    for _ in 0..=table.indexes().len() + 1 {
        let result = Enforcer::insert(fk, table, &mut tx.borrow_mut(), row.clone());
        // INSERT IGNORE: a row without its parent is a warning (MySQL 5.7 and later);
        // the row, written before its check, is taken out again.
        if let Err(e) = &result
            && e.mysql_code() == 1452
            && p.ignore
            && p.on_duplicate.is_none()
            && !table.def().primary_key.is_empty()
        {
            let message = e.to_string();
            let key = table.encode_primary_key(&primary_key_values(table, &row))?;
            table.delete_key_tx(&mut tx.borrow_mut(), &key)?;
            session.add_warning("Warning", 1452, message);
            return Ok((0, RowOutcome::Skipped));
        }
        let Err(Error::DuplicateKey { index, key }) = result else {
            return result.map(|()| (1 + deleted, RowOutcome::Inserted));
        };
        *duplicates += 1;
        if p.ignore && p.on_duplicate.is_none() {
            session.add_warning(
                "Warning",
                1062,
                format!("Duplicate entry '{key}' for key '{index}'"),
            );
            return Ok((0, RowOutcome::Skipped));
        }
        let existing = conflicting_row(table, tx, &index, &row)?;
        let Some(existing) = existing else {
            return Err(Error::DuplicateKey { index, key });
        };
        let existing_key = row_keys(table, tx, std::slice::from_ref(&existing))?
            .pop()
            .expect("a key for the row");
        if p.replace {
            Enforcer::delete(fk, table, &mut tx.borrow_mut(), &existing_key)?;
            deleted += 1;
            continue;
        }
        let Some(assignments) = &p.on_duplicate else {
            return Err(Error::DuplicateKey { index, key });
        };
        let on_update = on_update_values(session, table, |c| {
            assignments.iter().any(|(assigned, _)| *assigned == c)
        })?;
        // ON DUPLICATE KEY UPDATE over [existing row, proposed row].
        let mut updated = existing.clone();
        session.with_exec(tx, params, |cx| {
            let ecx = crate::expr::EvalContext {
                params: cx.params,
                outer: &[],
                functions: cx.functions,
                subqueries: cx,
            };
            for (column, e) in assignments {
                let mut scope_row = updated.clone();
                scope_row.extend(row.iter().cloned());
                updated[*column] = e.eval_row(&scope_row, &ecx)?;
            }
            Ok(())
        })?;
        // As the statement's rows convert (ON DUPLICATE KEY UPDATE's values are the
        // row's UPDATE).
        let fit = Fit::of(session, p.ignore, true);
        let mut updated = convert_row_fitting(session, table, updated, 1, fit)?;
        let functions = session.fn_context();
        fill_generated(
            session,
            p.generated.as_ref(),
            &functions,
            table,
            &mut updated,
            fit,
            1,
        )?;
        let updated_auto = table.auto_increment_column().map(|c| updated[c].clone());
        if rows_equal(&updated, &existing) {
            return Ok((0, RowOutcome::Unchanged(updated_auto)));
        }
        if !on_update.is_empty() {
            for (column, value) in on_update {
                updated[column] = value;
            }
            fill_generated(
                session,
                p.generated.as_ref(),
                &functions,
                table,
                &mut updated,
                fit,
                1,
            )?;
        }
        if let Some(checker) = checker
            && let Err(e) = checker.check(&updated)
        {
            if !p.ignore {
                return Err(e);
            }
            session.add_warning("Warning", e.mysql_code(), e.to_string());
            return Ok((0, RowOutcome::Skipped));
        }
        Enforcer::update(
            fk,
            table,
            &mut tx.borrow_mut(),
            &existing_key,
            &existing,
            updated,
        )?;
        return Ok((2, RowOutcome::Updated(updated_auto)));
    }
    Err(Error::sql(
        1062,
        "23000",
        "Duplicate entry: too many conflicting rows",
    ))
}

/// Error 1365 if the statement divided by zero while `sql_mode` makes that an error
/// for values written (INSERT IGNORE leaves it a warning). The count covers the whole
/// statement, its WHERE and source SELECT included, as MySQL's strict mode does.
fn check_divisions_by_zero(session: &Session, ignore: bool) -> Result<()> {
    if !ignore
        && crate::scalar::arith::divisions_by_zero() > 0
        && session.division_by_zero_is_error()
    {
        return Err(Error::sql(1365, "22012", "Division by 0"));
    }
    Ok(())
}

fn rows_equal(a: &[Value], b: &[Value]) -> bool {
    a.iter()
        .zip(b)
        .all(|(x, y)| match (x.is_null(), y.is_null()) {
            (true, true) => true,
            (false, false) => {
                crate::scalar::compare::compare(x, y, Collation::Binary)
                    == Some(std::cmp::Ordering::Equal)
                    && std::mem::discriminant(x) == std::mem::discriminant(y)
            }
            _ => false,
        })
}

/// The row that holds `row`'s key in index `index` (PRIMARY or a unique index),
/// read with an exclusive lock.
fn conflicting_row(
    table: &Table,
    tx: &RefCell<Transaction>,
    index: &str,
    row: &[Value],
) -> Result<Option<Vec<Value>>> {
    let mut tx = tx.borrow_mut();
    // The error names the key as MySQL 8 does: `table.index`.
    let index = index.rsplit('.').next().unwrap_or(index);
    if index.eq_ignore_ascii_case("PRIMARY") {
        let key = table.encode_primary_key(&primary_key_values(table, row))?;
        return table.read_key_tx(&mut tx, &key, RowLock::Exclusive, WaitPolicy::Wait);
    }
    let columns = &table.index(index)?.def.columns;
    let values: Vec<Value> = columns.iter().map(|&c| row[c].clone()).collect();
    let rows = table.index_range_tx(
        &mut tx,
        index,
        std::ops::Bound::Included(values.clone()),
        std::ops::Bound::Included(values),
        RowLock::Exclusive,
        WaitPolicy::Wait,
        1,
    )?;
    Ok(rows.into_iter().next())
}

fn run_update(
    session: &mut Session,
    p: &UpdatePlan,
    tx: &RefCell<Transaction>,
    params: &[Value],
) -> Result<QueryResult> {
    let table = &p.table;
    let mut matched = 0u64;
    let mut changed = 0u64;
    let chunks = session.with_exec(tx, params, |cx| exec::collect(&p.rows, cx))?;
    let old_rows: Vec<Vec<Value>> = chunks.iter().flat_map(Chunk::rows).collect();
    let mut keys = row_keys(table, tx, &old_rows)?.into_iter();
    let fk = Enforcer::of(session);
    let on_update = on_update_values(session, table, |c| {
        p.assignments.iter().any(|(assigned, _)| *assigned == c)
    })?;
    let functions = session.fn_context();
    let checker = p.checks.as_ref().map(|c| c.checker(functions.clone()));
    let rules = RowUpdate {
        fk: fk.as_ref(),
        checker: checker.as_ref(),
        generated: p.generated.as_ref(),
        functions: &functions,
        on_update: &on_update,
        ignore: p.ignore,
    };
    for chunk in chunks {
        let new_columns = session.with_exec(tx, params, |cx| assign(&chunk, &p.assignments, cx))?;
        for i in 0..chunk.len() {
            matched += 1;
            let key = keys.next().expect("a key per matched row");
            let old = chunk.row(i);
            let new: Vec<Value> = new_columns.iter().map(|c| c[i].clone()).collect();
            if update_row(session, &rules, table, tx, &key, &old, new, matched)? {
                changed += 1;
            }
        }
    }
    update_result(session, matched, changed, p.ignore)
}

/// What UPDATE needs to write a row of one table besides the row, made once per
/// statement and table.
pub(crate) struct RowUpdate<'a> {
    pub fk: Option<&'a Enforcer>,
    /// The table's enforced CHECK constraints.
    pub checker: Option<&'a Checker<'a>>,
    /// The table's generated columns.
    pub generated: Option<&'a TableGenerated>,
    pub functions: &'a crate::scalar::FnContext,
    /// What a changed row takes for its ON UPDATE columns ([`on_update_values`]).
    pub on_update: &'a [(usize, Value)],
    /// UPDATE IGNORE: conversions clamp with a warning, and a row that fails a
    /// check is skipped with one ([`ignoring`]).
    pub ignore: bool,
}

/// Whether IGNORE makes error `e` of one row's change a warning that skips the row,
/// as MySQL does: a duplicate key (1062), a CHECK constraint (3819), a foreign key
/// (1451 for a parent with children, 1452 for a child without a parent).
fn ignorable(e: &Error) -> bool {
    matches!(e.mysql_code(), 1062 | 3819 | 1451 | 1452)
}

/// Runs `change`, one row's change in `tx`. Without `ignore` its result is returned
/// as it is. With `ignore`, an error IGNORE skips ([`ignorable`]) takes back what the
/// change did so far (cascaded changes included) and becomes a warning, and the
/// result is `None`.
pub(crate) fn ignoring<T>(
    session: &mut Session,
    tx: &RefCell<Transaction>,
    ignore: bool,
    change: impl FnOnce() -> Result<T>,
) -> Result<Option<T>> {
    if !ignore {
        return change().map(Some);
    }
    let storage = session.engine().storage().clone();
    let position = storage.undo_position(&tx.borrow());
    match change() {
        Ok(v) => Ok(Some(v)),
        Err(e) if ignorable(&e) => {
            storage.rollback_to_position(&mut tx.borrow_mut(), position)?;
            session.add_warning("Warning", e.mysql_code(), e.to_string());
            Ok(None)
        }
        Err(e) => Err(e),
    }
}

/// Writes `new` (converted to the column types, generated columns computed) over
/// the row `old` at `key`, the `row_number`th the statement matched, unless it
/// changes nothing; whether a row changed. A row that changes takes the ON UPDATE
/// values too, and must pass the table's CHECK constraints (3819) and foreign keys;
/// under IGNORE a row that fails is skipped with a warning.
#[allow(clippy::too_many_arguments)]
pub(crate) fn update_row(
    session: &mut Session,
    rules: &RowUpdate,
    table: &Table,
    tx: &RefCell<Transaction>,
    key: &[u8],
    old: &[Value],
    new: Vec<Value>,
    row_number: u64,
) -> Result<bool> {
    let fit = Fit::of(session, rules.ignore, true);
    let mut new = convert_row_fitting(session, table, new, row_number, fit)?;
    let fill = |session: &mut Session, row: &mut [Value]| {
        fill_generated(
            session,
            rules.generated,
            rules.functions,
            table,
            row,
            fit,
            row_number,
        )
    };
    fill(session, &mut new)?;
    if rows_equal(&new, old) {
        return Ok(false);
    }
    if !rules.on_update.is_empty() {
        for (column, value) in rules.on_update {
            new[*column] = value.clone();
        }
        fill(session, &mut new)?;
    }
    let changed = ignoring(session, tx, rules.ignore, || {
        if let Some(checker) = rules.checker {
            checker.check(&new)?;
        }
        Enforcer::update(rules.fk, table, &mut tx.borrow_mut(), key, old, new)
    })?;
    Ok(changed.unwrap_or(false))
}

/// The columns of `table` with `ON UPDATE CURRENT_TIMESTAMP[(fsp)]` that an update
/// which does not assign them (`assigned` false) sets, each with the statement's
/// time converted to the column's type. MySQL sets them in every row the statement
/// changes, and leaves them alone in a row it leaves as it was or when the statement
/// assigns the column itself (even to its old value).
pub(crate) fn on_update_values(
    session: &mut Session,
    table: &Table,
    assigned: impl Fn(usize) -> bool,
) -> Result<Vec<(usize, Value)>> {
    let def = table.def();
    if def.column_on_update.is_empty() {
        return Ok(Vec::new());
    }
    let fn_ctx = session.fn_context();
    let mut values = Vec::new();
    for (c, column) in def.columns.iter().enumerate() {
        let Some(text) = def.column_on_update(c) else {
            continue;
        };
        if assigned(c) {
            continue;
        }
        let (e, _) = Binder::new(session).bind_constant(&parse_expr(text)?)?;
        let cx = crate::expr::EvalContext {
            params: &[],
            outer: &[],
            functions: &fn_ctx,
            subqueries: &NoSubqueries,
        };
        let now = e.eval_row(&[], &cx)?;
        values.push((c, convert_value_at(table, column, now, 1)?));
    }
    Ok(values)
}

/// An UPDATE's answer: rows changed, or matched for CLIENT_FOUND_ROWS clients.
/// Division by zero is an error in strict mode, a warning under IGNORE.
fn update_result(
    session: &Session,
    matched: u64,
    changed: u64,
    ignore: bool,
) -> Result<QueryResult> {
    check_divisions_by_zero(session, ignore)?;
    Ok(QueryResult::Ok {
        affected_rows: if session.found_rows { matched } else { changed },
        last_insert_id: 0,
        info: format!("Rows matched: {matched}  Changed: {changed}  Warnings: 0"),
    })
}

/// Applies SET assignments in order over a chunk of rows; later ones see earlier
/// ones' values, as MySQL evaluates them.
fn assign(
    chunk: &Chunk,
    assignments: &[(usize, Expr)],
    cx: &ExecContext,
) -> Result<Vec<Vec<Value>>> {
    let mut columns: Vec<Vec<Value>> = chunk.columns().to_vec();
    let ecx = crate::expr::EvalContext {
        params: cx.params,
        outer: &cx.outer,
        functions: cx.functions,
        subqueries: cx,
    };
    for (column, e) in assignments {
        let current = Chunk::from_columns(columns.clone(), chunk.len());
        columns[*column] = e.eval(&current, &ecx)?;
    }
    Ok(columns)
}

fn run_delete(
    session: &mut Session,
    p: &DeletePlan,
    tx: &RefCell<Transaction>,
    params: &[Value],
) -> Result<QueryResult> {
    let table = &p.table;
    let chunks = session.with_exec(tx, params, |cx| exec::collect(&p.rows, cx))?;
    let rows: Vec<Vec<Value>> = chunks.iter().flat_map(Chunk::rows).collect();
    let mut deleted = 0u64;
    let fk = Enforcer::of(session);
    for key in row_keys(table, tx, &rows)? {
        let done = ignoring(session, tx, p.ignore, || {
            Enforcer::delete(fk.as_ref(), table, &mut tx.borrow_mut(), &key)
        })?;
        if done == Some(true) {
            deleted += 1;
        }
    }
    Ok(QueryResult::ok(deleted))
}

/// A subquery runner for contexts that cannot have subqueries (DEFAULT values,
/// CHECK constraints).
pub(crate) struct NoSubqueries;

impl crate::subquery::SubqueryRunner for NoSubqueries {
    fn eval(
        &self,
        _: &crate::subquery::SubqueryExpr,
        _: Option<&[Value]>,
        _: &Chunk,
        _: &crate::expr::EvalContext,
    ) -> Result<Vec<Value>> {
        Err(unsupported("a subquery here"))
    }
}
