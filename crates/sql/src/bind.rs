//! The binder: `sqlparser` syntax trees to typed plans.
//!
//! It resolves every name against the catalog (1146 unknown table, 1054 unknown
//! column, 1052 ambiguous column), types every expression ([`SqlType`]) and builds the
//! logical shape of a query: FROM (as relations and join conditions, which
//! [`crate::planner`] orders and gives access paths), WHERE, GROUP BY (WITH ROLLUP
//! too, with `GROUPING()`) with HAVING and aggregates, window functions
//! (`bind/window.rs`), the select list, DISTINCT, ORDER BY and LIMIT, UNION,
//! subqueries, and the common table expressions of WITH clauses ([`cte`]).
//!
//! MySQL rules it follows:
//! - column names are case-insensitive; table names and aliases compare as stored
//!   (the session lowercases them first when `lower_case_table_names = 1`);
//! - GROUP BY and ORDER BY may name a select alias or a position; ORDER BY may sort by
//!   expressions that are not selected (hidden columns, dropped after the sort);
//! - a column that is neither grouped nor aggregated takes a value from its group (as
//!   MySQL without ONLY_FULL_GROUP_BY does);
//! - system variables, user variables and session functions (`DATABASE()`, ...) are
//!   read when the statement is bound.
//!
//! Correlated subqueries may reference the columns of the query immediately around
//! them (`Expr::Outer`); deeper references are refused with 1235.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::Arc;

mod window;

use sqlparser::ast::{self, BinaryOperator, FunctionArg, FunctionArgExpr, FunctionArguments};
use tarn_catalog::{RowLock, Table, WaitPolicy};
use tarn_common::{Error, Result};
use tarn_row::Value;
use tarn_row::datetime::{Date, DateTime};
use tarn_row::decimal::Decimal;
use tarn_row::types::Collation;

use crate::expr::{CmpOp, Expr};
use crate::limits::{GROUPING_ARGS_MAX, NESTING_DEPTH_MAX};
use crate::plan::{AggCall, ConcatSpec, JoinKind, OutputColumn, Plan, RowCount, SortKey};
use crate::planner::{FromRelation, LeftJoin, QueryBlock};
use crate::scalar::agg::{self, AggFunc};
use crate::scalar::arith::{self, ArithOp};
use crate::scalar::cast::CastTarget;
use crate::scalar::compare;
use crate::scalar::date::{self, IntervalUnit};
use crate::scalar::func;
use crate::subquery::{SubqueryExpr, SubqueryKind};
use crate::types::SqlType;

mod cte;
mod json;

/// What the binder asks of the session and catalog.
pub trait BindContext {
    fn current_database(&self) -> Option<String>;
    /// A table by (already case-normalised) database and name.
    fn table(&self, db: &str, name: &str) -> Result<Arc<Table>>;
    /// A view's SELECT text, if `db.name` is a view.
    fn view(&self, db: &str, name: &str) -> Result<Option<String>>;
    /// A system table (information_schema, performance_schema): its columns and rows.
    fn system_table(&self, db: &str, name: &str) -> Option<Result<crate::show::SystemTableRows>>;
    /// `@@name`, `@@session.name`, `@@global.name`.
    fn system_variable(&self, name: &str, global: bool) -> Result<Value>;
    fn user_variable(&self, name: &str) -> Value;
    /// DATABASE(), USER(), VERSION(), CONNECTION_ID(), LAST_INSERT_ID(), ...: None if
    /// `name` is not a session function.
    fn session_function(&self, name: &str) -> Option<Value>;
    /// Normalises a table or database name (lower_case_table_names).
    fn normalize_table_name(&self, name: &str) -> String;
    /// The text of the statement being bound (result columns are named by the text
    /// of their expressions, as written).
    fn statement_text(&self) -> Option<String> {
        None
    }
    /// Checks that the session holds `needed` on `db.table` (1142 if not); called for
    /// every table, view and system table a statement names, before looking it up.
    fn check_table_access(
        &self,
        needed: crate::accounts::Privileges,
        db: &str,
        table: &str,
    ) -> Result<()> {
        let _ = (needed, db, table);
        Ok(())
    }
    /// sql_mode has ONLY_FULL_GROUP_BY (1055 / 1140 for ungrouped columns).
    fn only_full_group_by(&self) -> bool {
        false
    }
    /// sql_mode has PIPES_AS_CONCAT: `||` is CONCAT (else OR).
    fn pipes_as_concat(&self) -> bool {
        false
    }
    /// [`BindContext::table`] for a table a view's query names: always the base
    /// table, never a session's temporary table of that name (as in MySQL, a view
    /// reads base tables only).
    fn base_table(&self, db: &str, name: &str) -> Result<Arc<Table>> {
        self.table(db, name)
    }
    /// [`BindContext::view`] past a session's temporary table of the name.
    fn base_view(&self, db: &str, name: &str) -> Result<Option<String>> {
        self.view(db, name)
    }
    /// Parameter `index` (0-based) is a LIMIT's or an OFFSET's row count: its value
    /// must be a row count ([`crate::plan::row_count_of`]), which
    /// `Session::run_prepared` checks before each execution (1210 if not).
    fn limit_parameter(&self, index: usize) {
        let _ = index;
    }
    /// [`BindContext::check_table_access`] for the base table `db.table`.
    fn check_base_table_access(
        &self,
        needed: crate::accounts::Privileges,
        db: &str,
        table: &str,
    ) -> Result<()> {
        self.check_table_access(needed, db, table)
    }
}

/// A column visible to expressions.
#[derive(Clone, Debug)]
pub struct ScopeColumn {
    pub table: Option<String>,
    pub name: String,
    pub ty: SqlType,
    pub nullable: bool,
    /// A stored `tinyint(1)` column ([`OutputColumn::tinyint1`]).
    pub tinyint1: bool,
    /// The right side's copy of a USING / NATURAL join column: reachable only by its
    /// qualified name, and left out of `*` (MySQL shows the joined column once).
    pub hidden: bool,
    /// A USING / NATURAL join column of the left side: `*` lists it first.
    pub using_first: bool,
    /// The scope positions of this column's table's primary key (columns functionally
    /// determine the others of their row: ONLY_FULL_GROUP_BY allows them once the
    /// key is grouped).
    pub key: Option<Arc<Vec<usize>>>,
}

/// The columns a clause's expressions can name, in input order.
#[derive(Clone, Debug, Default)]
pub struct Scope {
    pub columns: Vec<ScopeColumn>,
}

impl Scope {
    pub fn from_output(columns: &[OutputColumn]) -> Scope {
        Scope {
            columns: columns
                .iter()
                .map(|c| ScopeColumn {
                    table: c.table.clone(),
                    name: c.name.clone(),
                    ty: c.ty,
                    nullable: c.nullable,
                    tinyint1: c.tinyint1,
                    hidden: false,
                    using_first: false,
                    key: None,
                })
                .collect(),
        }
    }

    /// The position of `table.name` (or `name` in any table).
    fn resolve(&self, table: Option<&str>, name: &str) -> Result<Option<usize>> {
        let mut found = None;
        for (i, c) in self.columns.iter().enumerate() {
            if !c.name.eq_ignore_ascii_case(name) {
                continue;
            }
            if let Some(t) = table {
                if c.table.as_deref() != Some(t) {
                    continue;
                }
            } else if c.hidden {
                continue;
            }
            if found.is_some() {
                return Err(Error::sql(
                    1052,
                    "23000",
                    format!("Column '{name}' in field list is ambiguous"),
                ));
            }
            found = Some(i);
        }
        Ok(found)
    }
}

/// Post-aggregation binding state: group keys and aggregates found so far.
struct AggState {
    input: Scope,
    /// Group expressions' texts and bound forms.
    group_texts: Vec<String>,
    /// Per group expression, the select alias GROUP BY named it by, if any.
    group_aliases: Vec<Option<String>>,
    group: Vec<(Expr, SqlType)>,
    /// `WITH ROLLUP`: the aggregate's output has a flag column per key between the
    /// keys and the aggregates ([`Plan::Aggregate`]).
    rollup: bool,
    aggs: Vec<AggCall>,
    agg_texts: Vec<String>,
}

impl AggState {
    /// The aggregate output's column of aggregate 0.
    fn agg_base(&self) -> usize {
        if self.rollup {
            2 * self.group.len()
        } else {
            self.group.len()
        }
    }
}

/// Where an expression is bound.
struct ExprScope<'s> {
    scope: &'s Scope,
    outer: Option<&'s Scope>,
    correlated: &'s Cell<bool>,
    /// Set after GROUP BY / aggregates: the scope is the aggregate's output.
    agg: Option<&'s RefCell<AggState>>,
    /// Select-list aliases visible here (HAVING, ORDER BY): name -> output position.
    aliases: &'s [(String, usize)],
    /// Select items by alias, for HAVING (a MySQL extension: `HAVING total > 6`).
    select_items: &'s [(String, Expr, SqlType)],
}

impl<'s> ExprScope<'s> {
    /// A scope of plain columns: no aggregate, no select-list aliases.
    fn plain(
        scope: &'s Scope,
        outer: Option<&'s Scope>,
        correlated: &'s Cell<bool>,
    ) -> ExprScope<'s> {
        ExprScope {
            scope,
            outer,
            correlated,
            agg: None,
            aliases: &[],
            select_items: &[],
        }
    }
}

/// Binds statements for one session.
pub struct Binder<'c> {
    pub cx: &'c dyn BindContext,
    depth: usize,
    /// The locking clause of the statement being bound (FOR UPDATE / FOR SHARE).
    lock: RowLock,
    wait: WaitPolicy,
    /// While a view's query is bound: the view's database, which its unqualified
    /// table names mean (not the session's current one).
    database: Option<String>,
    /// The common table expressions in scope, the outermost WITH's first (see
    /// [`cte`]).
    ctes: Vec<Rc<cte::CteDef>>,
    /// The recursive CTEs whose query blocks are being bound, innermost last.
    recursions: Vec<cte::Recursion>,
    /// Whether window functions may be called where the binder is (`bind/window.rs`).
    windows: window::WindowScope,
    /// User variables (lower-cased, without `@`) that hold a value per row rather than
    /// per statement: LOAD DATA's `@variable` fields. `@name` binds to the scope
    /// column [`row_variable_column`] names instead of the session's value.
    row_variables: Vec<String>,
}

/// The scope column a per-row user variable (`Binder::with_row_variables`) binds to.
/// It starts with NUL, which no identifier can hold, so only `@name` reaches it.
pub(crate) fn row_variable_column(variable: &str) -> String {
    format!("\0@{}", variable.to_ascii_lowercase())
}

fn unsupported(what: impl std::fmt::Display) -> Error {
    Error::sql(
        1235,
        "42000",
        format!("This version of Tarn doesn't yet support '{what}'"),
    )
}

fn unknown_column(name: &str, clause: &str) -> Error {
    Error::sql(
        1054,
        "42S22",
        format!("Unknown column '{name}' in '{clause}'"),
    )
}

/// An identifier's text as MySQL compares it.
pub fn ident(i: &ast::Ident) -> String {
    i.value.clone()
}

/// The name of an object (`db.t` or `t`).
pub fn object_name(name: &ast::ObjectName) -> Vec<String> {
    name.0
        .iter()
        .map(|part| match part {
            ast::ObjectNamePart::Identifier(i) => i.value.clone(),
            other => other.to_string(),
        })
        .collect()
}

impl<'c> Binder<'c> {
    pub fn new(cx: &'c dyn BindContext) -> Binder<'c> {
        Binder {
            cx,
            depth: 0,
            lock: RowLock::None,
            wait: WaitPolicy::Wait,
            database: None,
            ctes: Vec::new(),
            recursions: Vec::new(),
            windows: window::WindowScope::NotAllowed,
            row_variables: Vec::new(),
        }
    }

    /// Binds `@name` for each of `variables` (lower-cased, without `@`) to the scope
    /// column [`row_variable_column`] names: a value that changes from row to row.
    pub(crate) fn with_row_variables(mut self, variables: Vec<String>) -> Binder<'c> {
        self.row_variables = variables;
        self
    }

    /// `db.name` resolved against the current database. The hidden databases of
    /// temporary tables cannot be named (`temporary.rs`): 1049.
    pub fn table_ref(&self, name: &ast::ObjectName) -> Result<(String, String)> {
        let parts = object_name(name);
        match parts.as_slice() {
            [table] => {
                let db = self
                    .database
                    .clone()
                    .or_else(|| self.cx.current_database())
                    .ok_or_else(|| Error::sql(1046, "3D000", "No database selected"))?;
                Ok((db, self.cx.normalize_table_name(table)))
            }
            [db, table] => {
                let db = self.cx.normalize_table_name(db);
                if crate::temporary::is_hidden_database(&db) {
                    return Err(Error::UnknownDatabase(db));
                }
                Ok((db, self.cx.normalize_table_name(table)))
            }
            _ => Err(Error::sql(
                1103,
                "42000",
                format!("Incorrect table name '{name}'"),
            )),
        }
    }

    // ---------------------------------------------------------------- queries

    /// Binds a complete query (the top of a SELECT statement).
    pub fn bind_statement_query(&mut self, query: &ast::Query) -> Result<Plan> {
        if let Some(lock) = query.locks.first() {
            self.lock = match lock.lock_type {
                ast::LockType::Share => RowLock::Shared,
                ast::LockType::Update => RowLock::Exclusive,
            };
            self.wait = match lock.nonblock {
                None => WaitPolicy::Wait,
                Some(ast::NonBlock::Nowait) => WaitPolicy::NoWait,
                Some(ast::NonBlock::SkipLocked) => WaitPolicy::SkipLocked,
            };
        }
        let correlated = Cell::new(false);
        self.bind_query(query, None, &correlated)
    }

    fn bind_query(
        &mut self,
        query: &ast::Query,
        outer: Option<&Scope>,
        correlated: &Cell<bool>,
    ) -> Result<Plan> {
        self.depth += 1;
        if self.depth > NESTING_DEPTH_MAX {
            return Err(Error::sql(
                1473,
                "HY000",
                format!("Too high level of nesting for select (at most {NESTING_DEPTH_MAX})"),
            ));
        }
        // A query block's window functions are its own: none from around it.
        let windows = std::mem::take(&mut self.windows);
        // A WITH clause's CTEs are in scope for the whole query and nothing after it.
        let ctes = self.ctes.len();
        let result = match &query.with {
            Some(with) => self
                .push_with(with)
                .and_then(|()| self.bind_query_inner(query, outer, correlated)),
            None => self.bind_query_inner(query, outer, correlated),
        };
        self.ctes.truncate(ctes);
        self.windows = windows;
        self.depth -= 1;
        result
    }

    fn bind_query_inner(
        &mut self,
        query: &ast::Query,
        outer: Option<&Scope>,
        correlated: &Cell<bool>,
    ) -> Result<Plan> {
        let order_by: &[ast::OrderByExpr] = match &query.order_by {
            None => &[],
            Some(ast::OrderBy {
                kind: ast::OrderByKind::Expressions(list),
                ..
            }) => list,
            Some(_) => return Err(unsupported("ORDER BY ALL")),
        };
        let (offset, count) = self.limit(query)?;
        let mut plan = match &*query.body {
            ast::SetExpr::Select(select) => {
                return self.bind_select(select, order_by, offset, count, outer, correlated);
            }
            body => self.bind_set_expr(body, outer, correlated)?,
        };
        // ORDER BY over a UNION (or a parenthesised query) names its output columns.
        if !order_by.is_empty() {
            let scope = Scope::from_output(plan.columns());
            let aliases: Vec<(String, usize)> = scope
                .columns
                .iter()
                .enumerate()
                .map(|(i, c)| (c.name.clone(), i))
                .collect();
            let mut keys = Vec::new();
            for item in order_by {
                let es = ExprScope {
                    scope: &scope,
                    outer,
                    correlated,
                    agg: None,
                    aliases: &aliases,
                    select_items: &[],
                };
                let (expr, ty) = self.order_key(&item.expr, &es, plan.columns())?;
                let (expr, collation) = json::sort_key(expr, ty);
                keys.push(SortKey {
                    expr: sort_expr(expr, ty),
                    descending: matches!(item.options.sort, Some(ast::OrderBySort::Desc)),
                    collation,
                });
            }
            plan = Plan::Sort {
                input: Box::new(plan),
                keys,
            };
        }
        if offset != RowCount::Literal(0) || count.is_some() {
            plan = Plan::Limit {
                input: Box::new(plan),
                offset,
                count,
                count_all: false,
            };
        }
        Ok(plan)
    }

    fn limit(&self, query: &ast::Query) -> Result<(RowCount, Option<RowCount>)> {
        let number = |e: &ast::Expr| self.row_count(e);
        Ok(match &query.limit_clause {
            None => (RowCount::Literal(0), None),
            Some(ast::LimitClause::LimitOffset { limit, offset, .. }) => (
                offset
                    .as_ref()
                    .map(|o| number(&o.value))
                    .transpose()?
                    .unwrap_or(RowCount::Literal(0)),
                limit.as_ref().map(number).transpose()?,
            ),
            Some(ast::LimitClause::OffsetCommaLimit { offset, limit }) => {
                (number(offset)?, Some(number(limit)?))
            }
        })
    }

    /// A LIMIT's or an OFFSET's row count: a number, or a `?` parameter read at each
    /// execution (and reported to [`BindContext::limit_parameter`]).
    pub(crate) fn row_count(&self, e: &ast::Expr) -> Result<RowCount> {
        let incorrect = |what: &dyn std::fmt::Display| {
            Error::sql(1064, "42000", format!("Incorrect LIMIT value '{what}'"))
        };
        let ast::Expr::Value(v) = e else {
            return Err(incorrect(e));
        };
        match &v.value {
            ast::Value::Number(n, _) => n
                .parse::<u64>()
                .map(RowCount::Literal)
                .map_err(|_| incorrect(n)),
            ast::Value::Placeholder(p) => {
                let index = placeholder_index(p)?;
                self.cx.limit_parameter(index);
                Ok(RowCount::Param(index))
            }
            other => Err(incorrect(other)),
        }
    }

    fn bind_set_expr(
        &mut self,
        body: &ast::SetExpr,
        outer: Option<&Scope>,
        correlated: &Cell<bool>,
    ) -> Result<Plan> {
        match body {
            ast::SetExpr::Select(select) => {
                self.bind_select(select, &[], RowCount::Literal(0), None, outer, correlated)
            }
            ast::SetExpr::Query(q) => self.bind_query(q, outer, correlated),
            ast::SetExpr::SetOperation { .. } => {
                let union = self.bind_union(body, outer, correlated)?;
                Ok(convert_union_branches(union))
            }
            ast::SetExpr::Values(values) => self.bind_values(values, outer, correlated),
            other => Err(unsupported(other)),
        }
    }

    /// A chain of UNIONs with its branches as bound: their columns' types are
    /// unified, their values not yet converted (see [`convert_union_branches`]).
    fn bind_union(
        &mut self,
        body: &ast::SetExpr,
        outer: Option<&Scope>,
        correlated: &Cell<bool>,
    ) -> Result<Plan> {
        match body {
            ast::SetExpr::SetOperation {
                left,
                op,
                set_quantifier,
                right,
            } => {
                let all = matches!(set_quantifier, ast::SetQuantifier::All);
                let left = self.bind_union(left, outer, correlated)?;
                let right = self.bind_union(right, outer, correlated)?;
                match op {
                    ast::SetOperator::Union => union_of(left, right, all),
                    ast::SetOperator::Intersect | ast::SetOperator::Except if !all => {
                        intersect_or_except(left, right, *op == ast::SetOperator::Intersect)
                    }
                    other => Err(unsupported(format!("{other} {set_quantifier}"))),
                }
            }
            other => self.bind_set_expr(other, outer, correlated),
        }
    }

    /// `VALUES (..), (..)` as a query (also INSERT's source).
    pub fn bind_values(
        &mut self,
        values: &ast::Values,
        outer: Option<&Scope>,
        correlated: &Cell<bool>,
    ) -> Result<Plan> {
        let empty = Scope::default();
        let es = ExprScope::plain(&empty, outer, correlated);
        let mut rows = Vec::with_capacity(values.rows.len());
        let mut types: Vec<SqlType> = Vec::new();
        for row in &values.rows {
            let row = &row.content;
            let mut bound = Vec::with_capacity(row.len());
            for (i, e) in row.iter().enumerate() {
                let (expr, ty) = self.bind_expr(e, &es)?;
                if i < types.len() {
                    types[i] = unify(types[i], ty);
                } else {
                    types.push(ty);
                }
                bound.push(expr);
            }
            if !rows.is_empty() && bound.len() != types.len() {
                return Err(Error::sql(
                    1136,
                    "21S01",
                    format!(
                        "Column count doesn't match value count at row {}",
                        rows.len() + 1
                    ),
                ));
            }
            rows.push(bound);
        }
        let columns = types
            .iter()
            .enumerate()
            .map(|(i, ty)| OutputColumn::new(format!("column_{i}"), *ty, true))
            .collect();
        Ok(Plan::Values { rows, columns })
    }

    fn bind_select(
        &mut self,
        select: &ast::Select,
        order_by: &[ast::OrderByExpr],
        offset: RowCount,
        count: Option<RowCount>,
        outer: Option<&Scope>,
        correlated: &Cell<bool>,
    ) -> Result<Plan> {
        // The statement's own INTO was taken out while parsing (`parse/into.rs`):
        // one left here is in a subquery, a derived table or a UNION's block.
        if select.into.is_some() {
            return Err(crate::parse::misplaced_into());
        }
        if select.having.is_some() && select.from.is_empty() && select.group_by_is_empty() {
            // Allowed in MySQL; handled below like any other HAVING.
        }
        let (mut block, scope) =
            self.bind_from_where(&select.from, select.selection.as_ref(), outer, correlated)?;
        let mut plan = if block.relations.is_empty() {
            let one_row = Plan::Values {
                rows: vec![vec![]],
                columns: vec![],
            };
            // `SELECT ... [FROM DUAL] WHERE p`: the one row, if p holds.
            match crate::planner::conjoin(std::mem::take(&mut block.conjuncts)) {
                Some(predicate) => Plan::Filter {
                    input: Box::new(one_row),
                    predicate,
                },
                None => one_row,
            }
        } else {
            crate::planner::plan_block(block, scope.columns.len())?
        };

        // The select list, with aggregation if there is any.
        let items = self.expand_wildcards(select, &scope)?;
        let (group_exprs, rollup): (&[ast::Expr], bool) = match &select.group_by {
            ast::GroupByExpr::Expressions(exprs, modifiers) => match modifiers.as_slice() {
                [] => (exprs, false),
                [ast::GroupByWithModifier::Rollup] if !exprs.is_empty() => (exprs, true),
                [other, ..] => return Err(unsupported(format!("GROUP BY ... {other}"))),
            },
            ast::GroupByExpr::All(_) => return Err(unsupported("GROUP BY ALL")),
        };
        let aggregated = !group_exprs.is_empty()
            || items.iter().any(|(e, _)| has_aggregate(e))
            || select.having.as_ref().is_some_and(has_aggregate)
            || order_by.iter().any(|o| has_aggregate(&o.expr));
        let agg_state = aggregated.then(|| {
            RefCell::new(AggState {
                input: scope.clone(),
                group_texts: Vec::new(),
                group_aliases: Vec::new(),
                group: Vec::new(),
                rollup,
                aggs: Vec::new(),
                agg_texts: Vec::new(),
            })
        });
        if let Some(state) = &agg_state {
            for g in group_exprs {
                // A position or a select alias names a select item.
                let target = match g {
                    ast::Expr::Value(v) => match &v.value {
                        ast::Value::Number(n, _) => {
                            let pos: usize = n.parse().unwrap_or(0);
                            let item = items
                                .get(pos.wrapping_sub(1))
                                .ok_or_else(|| unknown_column(n, "group statement"))?;
                            item.0.clone()
                        }
                        _ => g.clone(),
                    },
                    ast::Expr::Identifier(id)
                        if scope.resolve(None, &id.value).ok().flatten().is_none() =>
                    {
                        items
                            .iter()
                            .find(|(_, alias)| {
                                alias
                                    .as_deref()
                                    .is_some_and(|a| a.eq_ignore_ascii_case(&id.value))
                            })
                            .map(|(e, _)| e.clone())
                            .unwrap_or_else(|| g.clone())
                    }
                    _ => g.clone(),
                };
                let es = ExprScope::plain(&scope, outer, correlated);
                let bound = self.bind_expr(&target, &es).map_err(|e| match (e, g) {
                    // A select alias naming a window function's result.
                    (Error::Sql { code: 3593, .. }, ast::Expr::Identifier(id)) => {
                        window::alias_not_here(&id.value)
                    }
                    (e, _) => e,
                })?;
                let mut s = state.borrow_mut();
                // A select alias, for GROUPING(alias).
                let alias = match g {
                    ast::Expr::Identifier(id) if target != *g => Some(id.value.clone()),
                    _ => None,
                };
                s.group_aliases.push(alias);
                s.group_texts.push(target.to_string());
                s.group.push(bound);
            }
        }

        // Bind select items (in post-aggregation mode if aggregated); they and ORDER
        // BY may call window functions.
        self.windows =
            window::WindowScope::Allowed(Box::new(window::WindowState::new(&select.named_window)?));
        let agg_scope_placeholder = Scope::default();
        let mut exprs = Vec::new();
        let mut columns = Vec::new();
        for (item, alias) in &items {
            let es = ExprScope {
                scope: if aggregated {
                    &agg_scope_placeholder
                } else {
                    &scope
                },
                outer,
                correlated,
                agg: agg_state.as_ref(),
                aliases: &[],
                select_items: &[],
            };
            let (expr, ty) = self.bind_expr(item, &es)?;
            let mut column = OutputColumn::new(
                alias.clone().unwrap_or_else(|| self.display_name(item)),
                ty,
                true,
            );
            if let (Expr::Column(c), false) = (&expr, aggregated)
                && *c < scope.columns.len()
            {
                let source = &scope.columns[*c];
                column.table = source.table.clone();
                column.nullable = source.nullable;
                column.tinyint1 = source.tinyint1;
                if alias.is_none() {
                    column.name = source.name.clone();
                }
            }
            exprs.push(expr);
            columns.push(column);
        }
        let visible = exprs.len();
        let aliases: Vec<(String, usize)> = columns
            .iter()
            .enumerate()
            .map(|(i, c)| (c.name.clone(), i))
            .collect();

        // HAVING (post-aggregation; may name select aliases).
        let select_items: Vec<(String, Expr, SqlType)> = columns
            .iter()
            .zip(&exprs)
            .map(|(c, e)| (c.name.clone(), e.clone(), c.ty))
            .collect();
        let mut having = None;
        let windows = std::mem::take(&mut self.windows);
        if let Some(h) = &select.having {
            let es = ExprScope {
                scope: if aggregated {
                    &agg_scope_placeholder
                } else {
                    &scope
                },
                outer,
                correlated,
                agg: agg_state.as_ref(),
                aliases: &aliases,
                select_items: &select_items,
            };
            let predicate = self.bind_having(h, &es, &exprs)?;
            if window::reads_window(&predicate) {
                // Through a select alias (a call itself fails with 3593).
                let text = h.to_string().to_ascii_lowercase();
                let alias = select_items
                    .iter()
                    .find(|(name, e, _)| {
                        window::reads_window(e) && text.contains(&name.to_ascii_lowercase())
                    })
                    .map_or(String::new(), |(name, _, _)| name.clone());
                return Err(window::alias_not_here(&alias));
            }
            having = Some(predicate);
        }
        self.windows = windows;

        // ORDER BY: positions and aliases name output columns; other expressions
        // become hidden columns.
        let mut sort_keys = Vec::new();
        for item in order_by {
            let descending = matches!(item.options.sort, Some(ast::OrderBySort::Desc));
            if let Some(position) = self.output_position(&item.expr, &aliases, visible)? {
                let (expr, collation) =
                    json::sort_key(Expr::Column(position), columns[position].ty);
                sort_keys.push(SortKey {
                    expr: sort_expr(expr, columns[position].ty),
                    descending,
                    collation,
                });
                continue;
            }
            let es = ExprScope {
                scope: if aggregated {
                    &agg_scope_placeholder
                } else {
                    &scope
                },
                outer,
                correlated,
                agg: agg_state.as_ref(),
                aliases: &[],
                select_items: &[],
            };
            let (expr, ty) = self.bind_expr(&item.expr, &es)?;
            // The same expression as a select item sorts by that item.
            let position = exprs
                .iter()
                .take(visible)
                .position(|e| same_expr(e, &expr))
                .unwrap_or_else(|| {
                    exprs.push(expr);
                    columns.push(OutputColumn::new(item.expr.to_string(), ty, true));
                    exprs.len() - 1
                });
            let (expr, collation) = json::sort_key(Expr::Column(position), columns[position].ty);
            sort_keys.push(SortKey {
                expr: sort_expr(expr, columns[position].ty),
                descending,
                collation,
            });
        }

        let windows = match std::mem::take(&mut self.windows) {
            window::WindowScope::Allowed(state) => Some(state),
            _ => None,
        };
        if let Some(state) = agg_state {
            let state = state.into_inner();
            let mut agg_columns: Vec<OutputColumn> = state
                .group
                .iter()
                .zip(&state.group_texts)
                .map(|((_, ty), text)| OutputColumn::new(text.clone(), *ty, true))
                .collect();
            if state.rollup {
                // One flag per key (1 where it is rolled up), read by GROUPING().
                for text in &state.group_texts {
                    let name = format!("grouping({text})");
                    agg_columns.push(OutputColumn::new(name, SqlType::BIGINT, false));
                }
            }
            for (call, text) in state.aggs.iter().zip(&state.agg_texts) {
                let ty = agg::agg_return_type(call.func, call.arg_type);
                agg_columns.push(OutputColumn::new(text.clone(), ty, true));
            }
            plan = Plan::Aggregate {
                input: Box::new(plan),
                group: state.group.into_iter().map(|(e, _)| e).collect(),
                aggs: state.aggs,
                rollup: state.rollup,
                columns: agg_columns,
            };
        }
        if let Some(predicate) = having {
            plan = Plan::Filter {
                input: Box::new(plan),
                predicate,
            };
        }
        if let Some(state) = windows {
            plan = window::plan_windows(plan, *state, &mut exprs)?;
        }
        plan = Plan::Project {
            input: Box::new(plan),
            exprs,
            columns: columns.clone(),
        };
        let distinct = match &select.distinct {
            None | Some(ast::Distinct::All) => false,
            Some(ast::Distinct::Distinct) => true,
            Some(ast::Distinct::On(_)) => return Err(unsupported("DISTINCT ON")),
        };
        if distinct {
            if columns.len() > visible {
                // Hidden sort columns would make equal rows distinct: MySQL refuses.
                return Err(Error::sql(
                    3065,
                    "HY000",
                    "Expression of ORDER BY clause is not in SELECT list, references column \
                     which is not in SELECT list; this is incompatible with DISTINCT",
                ));
            }
            plan = Plan::Distinct {
                input: Box::new(plan),
            };
        }
        if !sort_keys.is_empty() {
            plan = Plan::Sort {
                input: Box::new(plan),
                keys: sort_keys,
            };
        }
        if offset != RowCount::Literal(0) || count.is_some() {
            plan = Plan::Limit {
                input: Box::new(plan),
                offset,
                count,
                count_all: false,
            };
        }
        if columns.len() > visible {
            let columns: Vec<OutputColumn> = columns[..visible].to_vec();
            plan = Plan::Project {
                input: Box::new(plan),
                exprs: (0..visible).map(Expr::Column).collect(),
                columns,
            };
        }
        Ok(plan)
    }

    /// HAVING may name select aliases (MySQL extension) besides group keys and
    /// aggregates.
    fn bind_having(&mut self, h: &ast::Expr, es: &ExprScope, items: &[Expr]) -> Result<Expr> {
        let (expr, _) = self.bind_expr(h, es)?;
        let _ = items;
        Ok(expr)
    }

    /// An ORDER BY item that is a position (`ORDER BY 2`) or a select alias.
    fn output_position(
        &self,
        e: &ast::Expr,
        aliases: &[(String, usize)],
        visible: usize,
    ) -> Result<Option<usize>> {
        match e {
            ast::Expr::Value(v) => {
                if let ast::Value::Number(n, _) = &v.value {
                    let pos: usize = n.parse().unwrap_or(0);
                    if pos == 0 || pos > visible {
                        return Err(unknown_column(n, "order clause"));
                    }
                    return Ok(Some(pos - 1));
                }
                Ok(None)
            }
            ast::Expr::Identifier(id) => Ok(aliases
                .iter()
                .take(visible)
                .find(|(name, _)| name.eq_ignore_ascii_case(&id.value))
                .map(|(_, i)| *i)
                .filter(|_| true)),
            _ => Ok(None),
        }
    }

    fn order_key(
        &mut self,
        e: &ast::Expr,
        es: &ExprScope,
        columns: &[OutputColumn],
    ) -> Result<(Expr, SqlType)> {
        if let Some(position) = self.output_position(e, es.aliases, columns.len())? {
            return Ok((Expr::Column(position), columns[position].ty));
        }
        self.bind_expr(e, es)
    }

    /// The select items with `*` and `t.*` expanded, each with its alias.
    fn expand_wildcards(
        &self,
        select: &ast::Select,
        scope: &Scope,
    ) -> Result<Vec<(ast::Expr, Option<String>)>> {
        let mut items = Vec::new();
        let column_expr = |c: &ScopeColumn| -> ast::Expr {
            match &c.table {
                Some(t) => ast::Expr::CompoundIdentifier(vec![
                    ast::Ident::new(t.clone()),
                    ast::Ident::new(c.name.clone()),
                ]),
                None => ast::Expr::Identifier(ast::Ident::new(c.name.clone())),
            }
        };
        for item in &select.projection {
            match item {
                ast::SelectItem::UnnamedExpr(e) => items.push((e.clone(), None)),
                ast::SelectItem::ExprWithAlias { expr, alias } => {
                    items.push((expr.clone(), Some(alias.value.clone())))
                }
                ast::SelectItem::Wildcard(_) => {
                    if scope.columns.is_empty() {
                        return Err(Error::sql(1096, "HY000", "No tables used"));
                    }
                    let first = scope.columns.iter().filter(|c| c.using_first);
                    let rest = scope.columns.iter().filter(|c| !c.using_first && !c.hidden);
                    for c in first.chain(rest) {
                        items.push((column_expr(c), Some(c.name.clone())));
                    }
                }
                ast::SelectItem::QualifiedWildcard(kind, _) => {
                    let name = match kind {
                        ast::SelectItemQualifiedWildcardKind::ObjectName(n) => object_name(n),
                        ast::SelectItemQualifiedWildcardKind::Expr(e) => vec![e.to_string()],
                    };
                    let table = self.cx.normalize_table_name(name.last().map_or("", |s| s));
                    let mut any = false;
                    for c in scope
                        .columns
                        .iter()
                        .filter(|c| c.table.as_deref() == Some(&table))
                    {
                        items.push((column_expr(c), Some(c.name.clone())));
                        any = true;
                    }
                    if !any {
                        return Err(Error::sql(
                            1051,
                            "42S02",
                            format!("Unknown table '{table}'"),
                        ));
                    }
                }
                other => return Err(unsupported(other)),
            }
        }
        Ok(items)
    }

    // ---------------------------------------------------------------- FROM

    /// FROM (relations and join conditions) and WHERE, for a planner block: WHERE and
    /// inner-join conditions become conjuncts over the whole scope, a LEFT JOIN's ON
    /// conditions belong to its relation.
    fn bind_from_where(
        &mut self,
        from: &[ast::TableWithJoins],
        selection: Option<&ast::Expr>,
        outer: Option<&Scope>,
        correlated: &Cell<bool>,
    ) -> Result<(QueryBlock, Scope)> {
        let mut block = QueryBlock::default();
        let mut scope = Scope::default();
        for item in from.iter().filter(|item| !is_dual(item)) {
            self.bind_table_with_joins(item, &mut block, &mut scope, outer, correlated)?;
        }
        let es = ExprScope::plain(&scope, outer, correlated);
        if let Some(selection) = selection {
            let (predicate, _) = self.bind_expr(selection, &es)?;
            block.conjuncts.push(predicate);
        }
        self.bind_pending_on(&mut block, &es)?;
        Ok((block, scope))
    }

    /// Binds the block's ON conditions over `es` (the block's whole scope): an inner
    /// join's become conjuncts, a LEFT JOIN's its own.
    fn bind_pending_on(&mut self, block: &mut QueryBlock, es: &ExprScope) -> Result<()> {
        let pending_on = std::mem::take(&mut block.pending_on);
        for (relation, on) in pending_on {
            let (predicate, _) = self.bind_expr(&on, es)?;
            match relation {
                None => block.conjuncts.push(predicate),
                Some(index) => block
                    .left_joins
                    .iter_mut()
                    .find(|l| l.relation == index)
                    .expect("a left join is registered before its condition")
                    .on
                    .push(predicate),
            }
        }
        Ok(())
    }

    /// A parenthesised join on the side an outer join pads with NULLs, as in
    /// `a LEFT JOIN (b JOIN c ON p) ON q` (SQLAlchemy's joined eager load of a
    /// many-to-many relationship): planned on its own and added to the block as one
    /// relation, so that its rows are padded together and `p` filters only the
    /// group's rows, not the outer join's result (flattened into the block, `p`
    /// became a WHERE condition that dropped the padded rows). Its ON conditions
    /// name only its own tables, as MySQL requires; its columns keep their tables'
    /// names in the block's scope.
    fn bind_join_group(
        &mut self,
        group: &ast::TableWithJoins,
        block: &mut QueryBlock,
        scope: &mut Scope,
        outer: Option<&Scope>,
        correlated: &Cell<bool>,
    ) -> Result<()> {
        let offset = scope.columns.len();
        let mut inner_block = QueryBlock::default();
        let mut inner_scope = Scope::default();
        self.bind_table_with_joins(group, &mut inner_block, &mut inner_scope, outer, correlated)?;
        let es = ExprScope::plain(&inner_scope, outer, correlated);
        self.bind_pending_on(&mut inner_block, &es)?;
        for column in &inner_scope.columns {
            if let Some(table) = &column.table
                && scope
                    .columns
                    .iter()
                    .any(|c| c.table.as_ref() == Some(table))
            {
                return Err(Error::sql(
                    1066,
                    "42000",
                    format!("Not unique table/alias: '{table}'"),
                ));
            }
        }
        let plan = crate::planner::plan_block(inner_block, inner_scope.columns.len())?;
        scope
            .columns
            .extend(inner_scope.columns.into_iter().map(|mut c| {
                c.key = c
                    .key
                    .map(|key| Arc::new(key.iter().map(|k| k + offset).collect()));
                c
            }));
        block.relations.push(FromRelation::Plan { plan, offset });
        Ok(())
    }

    /// The FROM and WHERE of a multi-table UPDATE or DELETE, bound as a SELECT's are
    /// but not yet planned: the caller marks the relations it changes (their row
    /// locks) and binds its SET list over the scope, then plans the block
    /// (`planner::plan_block`), whose rows are the scope's columns.
    pub(crate) fn bind_dml_from(
        &mut self,
        from: &[ast::TableWithJoins],
        selection: Option<&ast::Expr>,
    ) -> Result<(QueryBlock, Scope)> {
        let correlated = Cell::new(false);
        self.bind_from_where(from, selection, None, &correlated)
    }

    fn bind_table_with_joins(
        &mut self,
        item: &ast::TableWithJoins,
        block: &mut QueryBlock,
        scope: &mut Scope,
        outer: Option<&Scope>,
        correlated: &Cell<bool>,
    ) -> Result<()> {
        let first_relation = block.relations.len();
        // A recursive CTE's reference may not be on the NULL side of an outer join
        // (3576): count the references each side's binding meets.
        let references = self.recursive_references();
        // The left side of a RIGHT JOIN is padded: a parenthesised join there is one
        // relation (`bind_join_group`).
        let right_padded = matches!(
            item.joins.first().map(|j| &j.join_operator),
            Some(ast::JoinOperator::Right(_) | ast::JoinOperator::RightOuter(_))
        );
        match &item.relation {
            ast::TableFactor::NestedJoin {
                table_with_joins,
                alias: None,
            } if right_padded && !table_with_joins.joins.is_empty() => {
                self.bind_join_group(table_with_joins, block, scope, outer, correlated)?
            }
            factor => self.bind_factor(factor, block, scope, outer, correlated)?,
        }
        let first_references = self.recursive_references().saturating_sub(references);
        for join in &item.joins {
            // RIGHT JOIN: the left side is the one padded with NULLs.
            let (kind, right, constraint) = match &join.join_operator {
                ast::JoinOperator::Join(c) | ast::JoinOperator::Inner(c) => {
                    (JoinKind::Inner, false, c)
                }
                ast::JoinOperator::CrossJoin(c) => (JoinKind::Inner, false, c),
                ast::JoinOperator::Left(c) | ast::JoinOperator::LeftOuter(c) => {
                    (JoinKind::Left, false, c)
                }
                ast::JoinOperator::Right(c) | ast::JoinOperator::RightOuter(c) => {
                    (JoinKind::Left, true, c)
                }
                ast::JoinOperator::StraightJoin(c) => (JoinKind::Inner, false, c),
                other => {
                    return Err(unsupported(
                        format!("{other:?}").split('(').next().unwrap_or("join"),
                    ));
                }
            };
            let before = scope.columns.len();
            let relation_index = block.relations.len();
            let references = self.recursive_references();
            match &join.relation {
                // The right side of a LEFT JOIN is padded: a parenthesised join there
                // is one relation (`bind_join_group`).
                ast::TableFactor::NestedJoin {
                    table_with_joins,
                    alias: None,
                } if kind == JoinKind::Left && !right && !table_with_joins.joins.is_empty() => {
                    self.bind_join_group(table_with_joins, block, scope, outer, correlated)?
                }
                factor => self.bind_factor(factor, block, scope, outer, correlated)?,
            }
            if kind == JoinKind::Left {
                let padded = if right {
                    first_references
                } else {
                    self.recursive_references().saturating_sub(references)
                };
                if padded > 0 {
                    return Err(self.recursive_reference_padded());
                }
            }
            // USING (a, b) and NATURAL: equalities between the left side's column and
            // the new relation's; the joined column shows once.
            let using: Option<Vec<String>> = match constraint {
                ast::JoinConstraint::Using(names) => Some(
                    names
                        .iter()
                        .map(|n| object_name(n).pop().unwrap_or_default())
                        .collect(),
                ),
                ast::JoinConstraint::Natural => Some(
                    scope.columns[before..]
                        .iter()
                        .filter(|c| {
                            scope.columns[..before]
                                .iter()
                                .any(|l| !l.hidden && l.name.eq_ignore_ascii_case(&c.name))
                        })
                        .map(|c| c.name.clone())
                        .collect(),
                ),
                _ => None,
            };
            let on = match (constraint, using) {
                (ast::JoinConstraint::On(e), _) => Some(e.clone()),
                (_, Some(names)) => {
                    let mut condition: Option<ast::Expr> = None;
                    for name in names {
                        let left_position = scope.columns[..before]
                            .iter()
                            .rposition(|c| !c.hidden && c.name.eq_ignore_ascii_case(&name))
                            .ok_or_else(|| unknown_column(&name, "from clause"))?;
                        let right_position = before
                            + scope.columns[before..]
                                .iter()
                                .position(|c| c.name.eq_ignore_ascii_case(&name))
                                .ok_or_else(|| unknown_column(&name, "from clause"))?;
                        let (shown, hidden) = if right {
                            (right_position, left_position)
                        } else {
                            (left_position, right_position)
                        };
                        scope.columns[shown].using_first = true;
                        scope.columns[hidden].hidden = true;
                        let qualified = |c: &ScopeColumn| {
                            ast::Expr::CompoundIdentifier(vec![
                                ast::Ident::new(c.table.clone().unwrap_or_default()),
                                ast::Ident::new(c.name.clone()),
                            ])
                        };
                        let eq = ast::Expr::BinaryOp {
                            left: Box::new(qualified(&scope.columns[left_position])),
                            op: BinaryOperator::Eq,
                            right: Box::new(qualified(&scope.columns[right_position])),
                        };
                        condition = Some(match condition {
                            None => eq,
                            Some(c) => ast::Expr::BinaryOp {
                                left: Box::new(c),
                                op: BinaryOperator::And,
                                right: Box::new(eq),
                            },
                        });
                    }
                    condition
                }
                _ => None,
            };
            if kind == JoinKind::Left {
                // The relation padded with NULLs: the new one, or for RIGHT JOIN the
                // single relation on the left.
                let nullable = if right {
                    if relation_index - first_relation != 1
                        || block
                            .left_joins
                            .iter()
                            .any(|l| l.relation == first_relation)
                    {
                        return Err(unsupported("RIGHT JOIN of a join"));
                    }
                    first_relation
                } else {
                    relation_index
                };
                block.left_joins.push(LeftJoin {
                    relation: nullable,
                    on: Vec::new(),
                });
                let range = if right {
                    block.relations[first_relation].offset()..before
                } else {
                    before..scope.columns.len()
                };
                for column in &mut scope.columns[range] {
                    column.nullable = true;
                }
                if let Some(on) = on {
                    block.pending_on.push((Some(nullable), on));
                }
            } else if let Some(on) = on {
                block.pending_on.push((None, on));
            }
        }
        Ok(())
    }

    fn bind_factor(
        &mut self,
        factor: &ast::TableFactor,
        block: &mut QueryBlock,
        scope: &mut Scope,
        outer: Option<&Scope>,
        correlated: &Cell<bool>,
    ) -> Result<()> {
        let offset = scope.columns.len();
        match factor {
            ast::TableFactor::Table {
                name,
                alias,
                args,
                index_hints,
                ..
            } => {
                if args.is_some() {
                    return Err(unsupported("table functions"));
                }
                if let Some(plan) = self.bind_cte_reference(name, alias.as_ref())? {
                    push_scope(scope, plan.columns())?;
                    block.relations.push(FromRelation::Plan { plan, offset });
                    return Ok(());
                }
                let (db, table_name) = self.table_ref(name)?;
                let alias_name = alias
                    .as_ref()
                    .map(|a| a.name.value.clone())
                    .unwrap_or_else(|| table_name.clone());
                // A view's query reads base tables only (`temporary.rs`).
                let in_view = self.database.is_some();
                if in_view {
                    self.cx.check_base_table_access(
                        crate::accounts::Privileges::SELECT,
                        &db,
                        &table_name,
                    )?;
                } else {
                    self.cx.check_table_access(
                        crate::accounts::Privileges::SELECT,
                        &db,
                        &table_name,
                    )?;
                }
                // information_schema and performance_schema tables.
                if let Some(rows) = self.cx.system_table(&db, &table_name) {
                    let (columns, rows) = rows?;
                    let columns: Vec<OutputColumn> = columns
                        .into_iter()
                        .map(|mut c| {
                            c.table = Some(alias_name.clone());
                            c
                        })
                        .collect();
                    push_scope(scope, &columns)?;
                    block.relations.push(FromRelation::Plan {
                        plan: Plan::Rows {
                            rows: Arc::new(rows),
                            columns,
                        },
                        offset,
                    });
                    return Ok(());
                }
                let view = if in_view {
                    self.cx.base_view(&db, &table_name)?
                } else {
                    self.cx.view(&db, &table_name)?
                };
                if let Some(sql) = view {
                    let saved = self.database.replace(db.clone());
                    let plan = self.bind_view(&sql, &alias_name);
                    self.database = saved;
                    let plan = plan?;
                    push_scope(scope, plan.columns())?;
                    block.relations.push(FromRelation::Plan { plan, offset });
                    return Ok(());
                }
                let table = if in_view {
                    self.cx.base_table(&db, &table_name)?
                } else {
                    self.cx.table(&db, &table_name)?
                };
                let columns: Vec<OutputColumn> = table
                    .def()
                    .columns
                    .iter()
                    .enumerate()
                    .map(|(i, c)| OutputColumn {
                        name: c.name.clone(),
                        table: Some(alias_name.clone()),
                        origin: Some((db.clone(), table_name.clone(), c.name.clone())),
                        ty: SqlType::of_column(c.ty, c.collation),
                        nullable: c.nullable,
                        tinyint1: table.def().is_tinyint1(i),
                    })
                    .collect();
                push_scope(scope, &columns)?;
                if !table.def().primary_key.is_empty() {
                    let key = Arc::new(
                        table
                            .def()
                            .primary_key
                            .iter()
                            .map(|c| offset + c)
                            .collect::<Vec<_>>(),
                    );
                    for column in &mut scope.columns[offset..] {
                        column.key = Some(key.clone());
                    }
                }
                let hints = index_hints
                    .iter()
                    .map(|h| crate::planner::IndexHint {
                        kind: h.hint_type,
                        indexes: h.index_names.iter().map(|i| i.value.clone()).collect(),
                    })
                    .collect();
                for h in index_hints {
                    for i in &h.index_names {
                        if !i.value.eq_ignore_ascii_case("primary")
                            && table.index(&i.value).is_err()
                        {
                            return Err(Error::sql(
                                1176,
                                "42000",
                                format!(
                                    "Key '{}' doesn't exist in table '{}'",
                                    i.value, table_name
                                ),
                            ));
                        }
                    }
                }
                block.relations.push(FromRelation::Table {
                    table,
                    alias: alias_name,
                    columns,
                    offset,
                    hints,
                    lock: self.lock,
                    wait: self.wait,
                });
            }
            ast::TableFactor::Derived {
                lateral,
                subquery,
                alias,
                ..
            } => {
                if *lateral {
                    return Err(unsupported("LATERAL"));
                }
                let alias = alias.as_ref().ok_or_else(|| {
                    Error::sql(1248, "42000", "Every derived table must have its own alias")
                })?;
                let inner_correlated = Cell::new(false);
                let saved = (self.lock, self.wait);
                self.lock = RowLock::None;
                let mut plan = self.bind_query(subquery, None, &inner_correlated)?;
                (self.lock, self.wait) = saved;
                let _ = (outer, correlated);
                rename_output(&mut plan, &alias.name.value, &alias.columns)?;
                push_scope(scope, plan.columns())?;
                block.relations.push(FromRelation::Plan { plan, offset });
            }
            ast::TableFactor::NestedJoin {
                table_with_joins,
                alias,
            } => {
                if alias.is_some() {
                    return Err(unsupported("an alias on a parenthesised join"));
                }
                self.bind_table_with_joins(table_with_joins, block, scope, outer, correlated)?;
            }
            other => return Err(unsupported(other)),
        }
        Ok(())
    }

    /// A view's query as a derived table named `alias`.
    fn bind_view(&mut self, sql: &str, alias: &str) -> Result<Plan> {
        let parsed = crate::parse::parse_one(sql)?;
        let crate::parse::Statement::Sql(statement) = parsed.statement else {
            return Err(Error::sql(
                1356,
                "HY000",
                format!("View '{alias}' is invalid"),
            ));
        };
        let ast::Statement::Query(query) = *statement else {
            return Err(Error::sql(
                1356,
                "HY000",
                format!("View '{alias}' is invalid"),
            ));
        };
        let correlated = Cell::new(false);
        let saved = (self.lock, self.wait);
        self.lock = RowLock::None;
        // The statement's CTEs are not in the view's scope.
        let ctes = std::mem::take(&mut self.ctes);
        let result = self.bind_query(&query, None, &correlated);
        self.ctes = ctes;
        (self.lock, self.wait) = saved;
        let mut plan = result?;
        rename_output(&mut plan, alias, &[])?;
        Ok(plan)
    }

    // ---------------------------------------------------------------- expressions

    /// Binds a scalar expression in an empty scope (DEFAULT values, SET, DO).
    pub fn bind_constant(&mut self, e: &ast::Expr) -> Result<(Expr, SqlType)> {
        let scope = Scope::default();
        let correlated = Cell::new(false);
        let es = ExprScope::plain(&scope, None, &correlated);
        self.bind_expr(e, &es)
    }

    /// Binds an expression over `scope` (UPDATE's SET, DELETE's WHERE, ...).
    pub fn bind_in_scope(&mut self, e: &ast::Expr, scope: &Scope) -> Result<(Expr, SqlType)> {
        let correlated = Cell::new(false);
        let es = ExprScope::plain(scope, None, &correlated);
        self.bind_expr(e, &es)
    }

    fn column_ref(
        &self,
        table: Option<&str>,
        name: &str,
        es: &ExprScope,
    ) -> Result<(Expr, SqlType)> {
        if let Some(state) = es.agg {
            let input = state.borrow().input.clone();
            let Some(c) = input.resolve(table, name)? else {
                if let Some(found) = self.select_item(table, name, es) {
                    return Ok(found);
                }
                return self.outer_ref(table, name, es);
            };
            // A grouped column reads the group key; any other takes a value of its
            // group.
            let mut s = state.borrow_mut();
            if let Some(g) = s
                .group
                .iter()
                .position(|(e, _)| matches!(e, Expr::Column(x) if *x == c))
            {
                return Ok((Expr::Column(g), s.group[g].1));
            }
            if self.cx.only_full_group_by() {
                // Allowed if the column's table's primary key is grouped (the key
                // determines the row).
                let grouped = |p: usize| {
                    s.group
                        .iter()
                        .any(|(e, _)| matches!(e, Expr::Column(x) if *x == p))
                };
                let dependent = input.columns[c]
                    .key
                    .as_ref()
                    .is_some_and(|key| key.iter().all(|&p| grouped(p)));
                if !dependent {
                    let qualified = match &input.columns[c].table {
                        Some(t) => format!("{t}.{}", input.columns[c].name),
                        None => input.columns[c].name.clone(),
                    };
                    return Err(if s.group.is_empty() {
                        Error::sql(
                            1140,
                            "42000",
                            format!(
                                "In aggregated query without GROUP BY, expression contains nonaggregated column '{qualified}'; this is incompatible with sql_mode=only_full_group_by"
                            ),
                        )
                    } else {
                        Error::sql(
                            1055,
                            "42000",
                            format!(
                                "Expression is not in GROUP BY clause and contains nonaggregated column '{qualified}' which is not functionally dependent on columns in GROUP BY clause; this is incompatible with sql_mode=only_full_group_by"
                            ),
                        )
                    });
                }
            }
            let ty = input.columns[c].ty;
            let text = format!("any_value({name})");
            let position = match s.agg_texts.iter().position(|t| *t == text) {
                Some(p) => p,
                None => {
                    s.aggs.push(AggCall {
                        func: AggFunc::AnyValue,
                        arg: Some(Expr::Column(c)),
                        distinct: false,
                        arg_type: ty,
                        concat: None,
                    });
                    s.agg_texts.push(text);
                    s.aggs.len() - 1
                }
            };
            return Ok((Expr::Column(s.agg_base() + position), ty));
        }
        if let Some(c) = es.scope.resolve(table, name)? {
            let column = &es.scope.columns[c];
            return Ok((Expr::Column(c), column.ty));
        }
        if let Some(found) = self.select_item(table, name, es) {
            return Ok(found);
        }
        self.outer_ref(table, name, es)
    }

    /// A select item named by its alias (HAVING).
    fn select_item(
        &self,
        table: Option<&str>,
        name: &str,
        es: &ExprScope,
    ) -> Option<(Expr, SqlType)> {
        if table.is_some() {
            return None;
        }
        es.select_items
            .iter()
            .find(|(alias, _, _)| alias.eq_ignore_ascii_case(name))
            .map(|(_, e, ty)| (e.clone(), *ty))
    }

    fn outer_ref(
        &self,
        table: Option<&str>,
        name: &str,
        es: &ExprScope,
    ) -> Result<(Expr, SqlType)> {
        if let Some(outer) = es.outer {
            if let Some(c) = outer.resolve(table, name)? {
                es.correlated.set(true);
                return Ok((Expr::Outer(c), outer.columns[c].ty));
            }
        }
        let full = match table {
            Some(t) => format!("{t}.{name}"),
            None => name.to_string(),
        };
        Err(unknown_column(&full, "field list"))
    }

    fn bind_args(
        &mut self,
        args: &[ast::Expr],
        es: &ExprScope,
    ) -> Result<(Vec<Expr>, Vec<SqlType>)> {
        let mut exprs = Vec::with_capacity(args.len());
        let mut types = Vec::with_capacity(args.len());
        for a in args {
            let (e, t) = self.bind_expr(a, es)?;
            exprs.push(e);
            types.push(t);
        }
        Ok((exprs, types))
    }

    /// Binds `e`; in post-aggregation scope, group keys and aggregates first.
    fn bind_expr(&mut self, e: &ast::Expr, es: &ExprScope) -> Result<(Expr, SqlType)> {
        if let Some(state) = es.agg {
            let text = e.to_string();
            let found = {
                let s = state.borrow();
                s.group_texts
                    .iter()
                    .position(|t| *t == text)
                    .map(|g| (Expr::Column(g), s.group[g].1))
            };
            if let Some(found) = found {
                return Ok(found);
            }
            if let ast::Expr::Function(f) = e {
                let name = object_name(&f.name).join(".").to_ascii_uppercase();
                if name == "GROUPING" && f.over.is_none() {
                    return self.bind_grouping(f, state, es);
                }
                if let Some(func) = aggregate_function(&name).filter(|_| f.over.is_none()) {
                    // No window function inside an aggregate's arguments.
                    let windows =
                        std::mem::replace(&mut self.windows, window::WindowScope::InArgument);
                    let bound = self.bind_aggregate(f, func, &text, state, es);
                    self.windows = windows;
                    return bound;
                }
            }
        }
        if let ast::Expr::Function(f) = e
            && f.over.is_none()
            && object_name(&f.name)
                .join(".")
                .eq_ignore_ascii_case("GROUPING")
        {
            // Outside a grouped query's select list, HAVING and ORDER BY (WHERE, an
            // aggregate's argument, a query without GROUP BY), as in MySQL.
            return Err(invalid_group_function());
        }
        self.bind_expr_node(e, es)
    }

    /// `GROUPING(e1, ..., ek)` in a `GROUP BY ... WITH ROLLUP` query: a bitmask with
    /// bit `k - 1 - i` set where `ei` is rolled up, read from the aggregate's flag
    /// columns ([`Plan::Aggregate`]). Each argument must be a GROUP BY expression
    /// (3602); without ROLLUP the function is refused as MySQL does (1111).
    fn bind_grouping(
        &mut self,
        f: &ast::Function,
        state: &RefCell<AggState>,
        es: &ExprScope,
    ) -> Result<(Expr, SqlType)> {
        if !state.borrow().rollup {
            return Err(invalid_group_function());
        }
        let FunctionArguments::List(list) = &f.args else {
            return Err(wrong_args("grouping"));
        };
        if list.args.is_empty() || !list.clauses.is_empty() || list.duplicate_treatment.is_some() {
            return Err(wrong_args("grouping"));
        }
        if list.args.len() > GROUPING_ARGS_MAX {
            return Err(Error::sql(
                3601,
                "HY000",
                format!(
                    "Too many arguments for function grouping: {}; maximum allowed is                      {GROUPING_ARGS_MAX}",
                    list.args.len()
                ),
            ));
        }
        let mut mask: Option<Expr> = None;
        for (i, arg) in list.args.iter().enumerate() {
            let FunctionArg::Unnamed(FunctionArgExpr::Expr(arg)) = arg else {
                return Err(wrong_args("grouping"));
            };
            // The GROUP BY expression with the same text, else the same bound form.
            let text = arg.to_string();
            let mut position = {
                let s = state.borrow();
                s.group_texts.iter().position(|t| *t == text).or_else(|| {
                    let ast::Expr::Identifier(id) = arg else {
                        return None;
                    };
                    s.group_aliases.iter().position(|alias| {
                        alias
                            .as_deref()
                            .is_some_and(|a| a.eq_ignore_ascii_case(&id.value))
                    })
                })
            };
            if position.is_none() && !has_aggregate(arg) {
                let input = state.borrow().input.clone();
                let inner = ExprScope::plain(&input, es.outer, es.correlated);
                let (bound, _) = self.bind_expr(arg, &inner)?;
                position = state
                    .borrow()
                    .group
                    .iter()
                    .position(|(g, _)| same_expr(g, &bound));
            }
            let Some(g) = position else {
                return Err(Error::sql(
                    3602,
                    "HY000",
                    format!(
                        "Argument #{} of GROUPING function is not in GROUP BY",
                        i + 1
                    ),
                ));
            };
            let flag = Expr::Column(state.borrow().group.len() + g);
            mask = Some(match mask {
                None => flag,
                Some(high) => Expr::Arith {
                    op: ArithOp::Add,
                    left: Box::new(Expr::Arith {
                        op: ArithOp::Mul,
                        left: Box::new(high),
                        right: Box::new(Expr::Literal(Value::Int(2))),
                    }),
                    right: Box::new(flag),
                },
            });
        }
        Ok((mask.expect("one argument at least"), SqlType::BIGINT))
    }

    fn bind_aggregate(
        &mut self,
        f: &ast::Function,
        func: AggFunc,
        text: &str,
        state: &RefCell<AggState>,
        es: &ExprScope,
    ) -> Result<(Expr, SqlType)> {
        let FunctionArguments::List(list) = &f.args else {
            return Err(wrong_args(text));
        };
        let distinct = matches!(
            list.duplicate_treatment,
            Some(ast::DuplicateTreatment::Distinct)
        );
        if func == AggFunc::GroupConcat {
            return self.bind_group_concat(list, distinct, text, state, es);
        }
        if matches!(func, AggFunc::JsonArrayAgg | AggFunc::JsonObjectAgg) {
            return self.bind_json_aggregate(list, func, distinct, text, state, es);
        }
        if !list.clauses.is_empty() {
            return Err(wrong_args(text));
        }
        let (func, arg, arg_type) = match list.args.as_slice() {
            [FunctionArg::Unnamed(FunctionArgExpr::Wildcard)] if func == AggFunc::Count => {
                (AggFunc::CountStar, None, SqlType::BIGINT)
            }
            [FunctionArg::Unnamed(FunctionArgExpr::Expr(a))] => {
                let input = state.borrow().input.clone();
                let inner = ExprScope::plain(&input, es.outer, es.correlated);
                if has_aggregate(a) {
                    return Err(Error::sql(1111, "HY000", "Invalid use of group function"));
                }
                let (arg, ty) = self.bind_expr(a, &inner)?;
                // SUM, AVG, the BIT_ and statistics functions read an ENUM or SET as
                // its number; COUNT, MIN, MAX and ANY_VALUE take the value.
                let (arg, ty) = match func {
                    AggFunc::Count | AggFunc::Min | AggFunc::Max | AggFunc::AnyValue => (arg, ty),
                    _ => as_number(arg, ty),
                };
                (func, Some(arg), ty)
            }
            _ => return Err(wrong_args(text)),
        };
        let mut s = state.borrow_mut();
        let position = match s.agg_texts.iter().position(|t| t == text) {
            Some(p) => p,
            None => {
                s.aggs.push(AggCall {
                    func,
                    arg,
                    distinct,
                    arg_type,
                    concat: None,
                });
                s.agg_texts.push(text.to_string());
                s.aggs.len() - 1
            }
        };
        let ty = agg::agg_return_type(func, arg_type);
        Ok((Expr::Column(s.agg_base() + position), ty))
    }

    /// `GROUP_CONCAT([DISTINCT] expr [, expr ...] [ORDER BY expr [ASC | DESC], ...]
    /// [SEPARATOR 'str'])`.
    fn bind_group_concat(
        &mut self,
        list: &ast::FunctionArgumentList,
        distinct: bool,
        text: &str,
        state: &RefCell<AggState>,
        es: &ExprScope,
    ) -> Result<(Expr, SqlType)> {
        let input = state.borrow().input.clone();
        let inner = ExprScope::plain(&input, es.outer, es.correlated);
        let mut args = Vec::with_capacity(list.args.len());
        for a in &list.args {
            let FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) = a else {
                return Err(wrong_args(text));
            };
            if has_aggregate(e) {
                return Err(Error::sql(1111, "HY000", "Invalid use of group function"));
            }
            // A DATETIME(fsp) or TIME(fsp) joins as its type's text. A BIT stays the
            // number: MySQL turns BIT columns into BIGINTs for GROUP_CONCAT.
            let (e, ty) = self.bind_expr(e, &inner)?;
            args.push((temporal_as_text(e, ty), ty));
        }
        if args.is_empty() {
            return Err(wrong_args(text));
        }
        let mut order = Vec::new();
        let mut separator = b",".to_vec();
        for clause in &list.clauses {
            match clause {
                ast::FunctionArgumentClause::OrderBy(items) => {
                    for item in items {
                        if has_aggregate(&item.expr) {
                            return Err(Error::sql(1111, "HY000", "Invalid use of group function"));
                        }
                        let (expr, ty) = self.bind_expr(&item.expr, &inner)?;
                        let (expr, ty) = as_number(expr, ty);
                        let descending = matches!(item.options.sort, Some(ast::OrderBySort::Desc));
                        let collation = ty.collation();
                        let key = SortKey {
                            expr,
                            descending,
                            collation,
                        };
                        order.push((key, ty));
                    }
                }
                ast::FunctionArgumentClause::Separator(v) => match &v.value {
                    ast::Value::SingleQuotedString(s) | ast::Value::DoubleQuotedString(s) => {
                        separator = s.as_bytes().to_vec();
                    }
                    _ => return Err(wrong_args(text)),
                },
                _ => return Err(wrong_args(text)),
            }
        }
        let mut args = args.into_iter();
        let (arg, arg_type) = args.next().expect("one argument at least");
        let more_args: Vec<(Expr, SqlType)> = args.collect();
        // Text, or a BLOB if an argument is one.
        let ty = if more_args.iter().any(|(_, t)| t.is_binary_string()) {
            SqlType::BLOB
        } else if more_args.is_empty() {
            agg::agg_return_type(AggFunc::GroupConcat, arg_type)
        } else {
            agg::agg_return_type(AggFunc::GroupConcat, SqlType::TEXT)
        };
        let mut s = state.borrow_mut();
        let position = match s.agg_texts.iter().position(|t| t == text) {
            Some(p) => p,
            None => {
                s.aggs.push(AggCall {
                    func: AggFunc::GroupConcat,
                    arg: Some(arg),
                    distinct,
                    arg_type,
                    concat: Some(Box::new(ConcatSpec {
                        more_args,
                        order,
                        separator,
                    })),
                });
                s.agg_texts.push(text.to_string());
                s.aggs.len() - 1
            }
        };
        Ok((Expr::Column(s.agg_base() + position), ty))
    }

    fn bind_expr_node(&mut self, e: &ast::Expr, es: &ExprScope) -> Result<(Expr, SqlType)> {
        use ast::Expr as E;
        Ok(match e {
            E::Identifier(id) => {
                let name = &id.value;
                if let Some(var) = name.strip_prefix("@@") {
                    return self.system_variable(var);
                }
                if let Some(var) = name.strip_prefix('@') {
                    if self
                        .row_variables
                        .iter()
                        .any(|v| v.eq_ignore_ascii_case(var))
                    {
                        return self.column_ref(None, &row_variable_column(var), es);
                    }
                    let v = self.cx.user_variable(var);
                    let ty = value_type(&v);
                    return Ok((Expr::Literal(v), ty));
                }
                self.column_ref(None, name, es)?
            }
            E::CompoundIdentifier(parts) => {
                let names: Vec<&str> = parts.iter().map(|p| p.value.as_str()).collect();
                if names[0].starts_with("@@") {
                    let joined = names.join(".");
                    return self.system_variable(&joined[2..]);
                }
                match names.as_slice() {
                    [t, c] => {
                        let t = self.cx.normalize_table_name(t);
                        self.column_ref(Some(&t), c, es)?
                    }
                    [_db, t, c] => {
                        let t = self.cx.normalize_table_name(t);
                        self.column_ref(Some(&t), c, es)?
                    }
                    _ => return Err(unknown_column(&e.to_string(), "field list")),
                }
            }
            E::Value(v) => literal(&v.value)?,
            E::TypedString(ts) => {
                let text = match &ts.value.value {
                    ast::Value::SingleQuotedString(s) | ast::Value::DoubleQuotedString(s) => {
                        s.clone()
                    }
                    other => other.to_string(),
                };
                match &ts.data_type {
                    ast::DataType::Date => (
                        Expr::Literal(Value::Date(Date::parse(&text).map_err(|_| {
                            Error::sql(1525, "HY000", format!("Incorrect DATE value: '{text}'"))
                        })?)),
                        SqlType::Date,
                    ),
                    ast::DataType::Datetime(_) | ast::DataType::Timestamp(..) => (
                        Expr::Literal(Value::DateTime(DateTime::parse(&text).map_err(|_| {
                            Error::sql(1525, "HY000", format!("Incorrect DATETIME value: '{text}'"))
                        })?)),
                        SqlType::DateTime {
                            fsp: 0,
                            timestamp: false,
                        },
                    ),
                    ast::DataType::Time(..) => {
                        let parsed = crate::scalar::time::parse_time(text.as_bytes())
                            .filter(|p| !p.truncated && !p.clipped)
                            .ok_or_else(|| {
                                Error::sql(1525, "HY000", format!("Incorrect TIME value: '{text}'"))
                            })?;
                        (
                            Expr::Literal(Value::Time(parsed.value)),
                            SqlType::Time {
                                fsp: parsed.fraction_digits,
                            },
                        )
                    }
                    other => {
                        // `_utf8mb4'x'`, `_binary'x'`: an introducer.
                        let name = other.to_string().to_ascii_lowercase();
                        let ty = if name == "_binary" {
                            SqlType::BLOB
                        } else {
                            SqlType::varchar(text.chars().count() as u32)
                        };
                        (Expr::Literal(Value::Bytes(text.into_bytes())), ty)
                    }
                }
            }
            E::Nested(inner) => self.bind_expr(inner, es)?,
            E::UnaryOp { op, expr } => {
                let (inner, ty) = self.bind_expr(expr, es)?;
                let (inner, ty) = match op {
                    ast::UnaryOperator::Minus | ast::UnaryOperator::BitwiseNot => {
                        as_number(inner, ty)
                    }
                    _ => (inner, ty),
                };
                match op {
                    ast::UnaryOperator::Minus => {
                        // Fold negative literals so `-9223372036854775808` fits.
                        if let Expr::Literal(Value::UInt(9_223_372_036_854_775_808)) = inner {
                            return Ok((Expr::Literal(Value::Int(i64::MIN)), SqlType::BIGINT));
                        }
                        let ty = match ty {
                            SqlType::UInt { .. } => SqlType::BIGINT,
                            t if t.is_string() => SqlType::Double,
                            t => t,
                        };
                        (Expr::Negate(Box::new(inner)), ty)
                    }
                    ast::UnaryOperator::Plus => (inner, ty),
                    ast::UnaryOperator::Not | ast::UnaryOperator::BangNot => {
                        (Expr::Not(Box::new(inner)), SqlType::BOOL)
                    }
                    ast::UnaryOperator::BitwiseNot => (
                        Expr::Function {
                            name: "~".into(),
                            args: vec![inner],
                            collation: Collation::CaseInsensitive,
                        },
                        SqlType::UInt { bits: 64 },
                    ),
                    other => return Err(unsupported(other)),
                }
            }
            E::BinaryOp { left, op, right } => self.bind_binary(left, op, right, es)?,
            E::IsNull(x) => (
                Expr::IsNull {
                    expr: Box::new(self.bind_expr(x, es)?.0),
                    negated: false,
                },
                SqlType::BOOL,
            ),
            E::IsNotNull(x) => (
                Expr::IsNull {
                    expr: Box::new(self.bind_expr(x, es)?.0),
                    negated: true,
                },
                SqlType::BOOL,
            ),
            E::IsTrue(x) | E::IsNotTrue(x) | E::IsFalse(x) | E::IsNotFalse(x) => (
                Expr::IsBool {
                    expr: Box::new(self.bind_expr(x, es)?.0),
                    value: matches!(e, E::IsTrue(_) | E::IsNotTrue(_)),
                    negated: matches!(e, E::IsNotTrue(_) | E::IsNotFalse(_)),
                },
                SqlType::BOOL,
            ),
            E::IsUnknown(x) | E::IsNotUnknown(x) => (
                Expr::IsNull {
                    expr: Box::new(self.bind_expr(x, es)?.0),
                    negated: matches!(e, E::IsNotUnknown(_)),
                },
                SqlType::BOOL,
            ),
            E::IsDistinctFrom(a, b) | E::IsNotDistinctFrom(a, b) => {
                let (a, ta) = self.bind_expr(a, es)?;
                let (b, tb) = self.bind_expr(b, es)?;
                let same = Expr::Compare {
                    op: CmpOp::NullSafeEq,
                    left: Box::new(a),
                    right: Box::new(b),
                    collation: collation_of(ta, tb),
                    key_form: None,
                };
                if matches!(e, E::IsDistinctFrom(..)) {
                    (Expr::Not(Box::new(same)), SqlType::BOOL)
                } else {
                    (same, SqlType::BOOL)
                }
            }
            E::Between {
                expr,
                negated,
                low,
                high,
            } => {
                let (x, tx) = self.bind_expr(expr, es)?;
                let (lo, tl) = self.bind_expr(low, es)?;
                let (hi, th) = self.bind_expr(high, es)?;
                let (x, tx) = if is_number_type(tl) && is_number_type(th) {
                    as_number(x, tx)
                } else {
                    (x, tx)
                };
                let both = Expr::And(
                    Box::new(Expr::Compare {
                        op: CmpOp::GtEq,
                        left: Box::new(x.clone()),
                        right: Box::new(lo),
                        collation: collation_of(tx, tl),
                        key_form: None,
                    }),
                    Box::new(Expr::Compare {
                        op: CmpOp::LtEq,
                        left: Box::new(x),
                        right: Box::new(hi),
                        collation: collation_of(tx, th),
                        key_form: None,
                    }),
                );
                if *negated {
                    (Expr::Not(Box::new(both)), SqlType::BOOL)
                } else {
                    (both, SqlType::BOOL)
                }
            }
            E::InList {
                expr,
                list,
                negated,
            } => {
                if let E::Tuple(row) = &**expr {
                    let (row, _) = self.bind_args(row, es)?;
                    let mut rows = Vec::new();
                    for item in list {
                        let E::Tuple(values) = item else {
                            return Err(Error::sql(
                                1241,
                                "21000",
                                format!("Operand should contain {} column(s)", row.len()),
                            ));
                        };
                        if values.len() != row.len() {
                            return Err(Error::sql(
                                1241,
                                "21000",
                                format!("Operand should contain {} column(s)", row.len()),
                            ));
                        }
                        rows.push(self.bind_args(values, es)?.0);
                    }
                    return Ok((
                        Expr::RowInList {
                            row,
                            list: rows,
                            negated: *negated,
                        },
                        SqlType::BOOL,
                    ));
                }
                let (x, tx) = self.bind_expr(expr, es)?;
                let (bound, types) = self.bind_args(list, es)?;
                let (mut x, tx) = if types.iter().all(|t| is_number_type(*t)) {
                    as_number(x, tx)
                } else {
                    (x, tx)
                };
                let mut bound: Vec<Expr> =
                    bound.into_iter().map(|e| year_constant(e, tx)).collect();
                let mut collation = types.iter().fold(tx.collation(), |c, t| {
                    if t.collation() == Collation::Binary && t.is_string() {
                        Collation::Binary
                    } else {
                        c
                    }
                });
                if json::compares_json(&types) || tx == SqlType::Json {
                    x = json::compare_key(expr, x, tx);
                    bound = bound
                        .into_iter()
                        .zip(list)
                        .zip(&types)
                        .map(|((e, a), t)| json::compare_key(a, e, *t))
                        .collect();
                    collation = Collation::Binary;
                }
                (
                    Expr::InList {
                        expr: Box::new(x),
                        list: bound,
                        negated: *negated,
                        collation,
                    },
                    SqlType::BOOL,
                )
            }
            E::InSubquery {
                expr,
                subquery,
                negated,
            } => self.compare_with_subquery(expr, subquery, es, |collation| SubqueryKind::In {
                negated: *negated,
                collation,
            })?,
            E::AnyOp {
                left,
                compare_op,
                right,
                ..
            }
            | E::AllOp {
                left,
                compare_op,
                right,
            } => {
                let all = matches!(e, E::AllOp { .. });
                let ast::Expr::Subquery(q) = &**right else {
                    return Err(unsupported(
                        "ANY / ALL over something other than a subquery",
                    ));
                };
                let op = match compare_op {
                    BinaryOperator::Eq => CmpOp::Eq,
                    BinaryOperator::NotEq => CmpOp::NotEq,
                    BinaryOperator::Lt => CmpOp::Lt,
                    BinaryOperator::LtEq => CmpOp::LtEq,
                    BinaryOperator::Gt => CmpOp::Gt,
                    BinaryOperator::GtEq => CmpOp::GtEq,
                    other => return Err(unsupported(format!("{other} ANY / ALL"))),
                };
                self.compare_with_subquery(left, q, es, |collation| SubqueryKind::Quantified {
                    op,
                    all,
                    collation,
                })?
            }
            E::Exists { subquery, negated } => {
                let (plan, correlated) = self.bind_subquery(subquery, es)?;
                (
                    Expr::Subquery {
                        subquery: Arc::new(SubqueryExpr::new(
                            SubqueryKind::Exists { negated: *negated },
                            plan,
                            correlated,
                        )),
                        operand: None,
                    },
                    SqlType::BOOL,
                )
            }
            E::Subquery(q) => {
                let (plan, correlated) = self.bind_subquery(q, es)?;
                if plan.width() != 1 {
                    return Err(Error::sql(
                        1241,
                        "21000",
                        "Operand should contain 1 column(s)",
                    ));
                }
                let ty = plan.columns()[0].ty;
                (
                    Expr::Subquery {
                        subquery: Arc::new(SubqueryExpr::new(
                            SubqueryKind::Scalar,
                            plan,
                            correlated,
                        )),
                        operand: None,
                    },
                    ty,
                )
            }
            E::Like {
                negated,
                expr,
                pattern,
                escape_char,
                any: false,
            }
            | E::ILike {
                negated,
                expr,
                pattern,
                escape_char,
                any: false,
            } => {
                let (x, tx) = self.bind_expr(expr, es)?;
                let (p, tp) = self.bind_expr(pattern, es)?;
                let ((x, tx), (p, tp)) = (as_text(x, tx), as_text(p, tp));
                let escape = match escape_char.as_deref() {
                    None => b'\\',
                    Some(E::Value(v)) => match &v.value {
                        ast::Value::SingleQuotedString(s) if s.len() == 1 => s.as_bytes()[0],
                        ast::Value::SingleQuotedString(s) if s.is_empty() => 0,
                        _ => {
                            return Err(Error::sql(1210, "HY000", "Incorrect arguments to ESCAPE"));
                        }
                    },
                    Some(_) => {
                        return Err(Error::sql(1210, "HY000", "Incorrect arguments to ESCAPE"));
                    }
                };
                let collation = if matches!(e, E::ILike { .. }) {
                    Collation::CaseInsensitive
                } else {
                    collation_of(tx, tp)
                };
                (
                    Expr::Like {
                        expr: Box::new(x),
                        pattern: Box::new(p),
                        escape,
                        negated: *negated,
                        collation,
                    },
                    SqlType::BOOL,
                )
            }
            E::Case {
                operand,
                conditions,
                else_result,
                ..
            } => {
                let operand = operand
                    .as_ref()
                    .map(|o| self.bind_expr(o, es))
                    .transpose()?;
                let mut whens = Vec::new();
                let mut ty = SqlType::Null;
                for when in conditions {
                    let (c, tc) = self.bind_expr(&when.condition, es)?;
                    let condition = match &operand {
                        Some((o, to)) => Expr::Compare {
                            op: CmpOp::Eq,
                            left: Box::new(o.clone()),
                            right: Box::new(c),
                            collation: collation_of(*to, tc),
                            key_form: None,
                        },
                        None => c,
                    };
                    let (r, tr) = self.bind_expr(&when.result, es)?;
                    ty = unify(ty, tr);
                    whens.push((condition, r));
                }
                let otherwise = match else_result {
                    Some(x) => {
                        let (x, tx) = self.bind_expr(x, es)?;
                        ty = unify(ty, tx);
                        Some(Box::new(x))
                    }
                    None => None,
                };
                (coerced(Expr::Case { whens, otherwise }, ty), ty)
            }
            E::MemberOf(m) => {
                // `value MEMBER OF (array)`: the JSON function MEMBER_OF's call.
                let args = [(*m.value).clone(), (*m.array).clone()];
                self.bind_json_function(crate::scalar::json::MEMBER_OF, &args, es)?
            }
            E::Cast {
                expr, data_type, ..
            }
            | E::Convert {
                expr,
                data_type: Some(data_type),
                ..
            } => {
                let (x, tx) = self.bind_expr(expr, es)?;
                let target = crate::ddl_types::cast_target(data_type)?;
                if let CastTarget::Json(_) = target {
                    return Ok(json::cast_to_json(expr, x, tx));
                }
                let x = match target {
                    CastTarget::Signed
                    | CastTarget::Unsigned
                    | CastTarget::Decimal { .. }
                    | CastTarget::Double => as_number(x, tx).0,
                    CastTarget::Char(_) | CastTarget::Binary(_) => as_text(x, tx).0,
                    _ => x,
                };
                (
                    Expr::Cast {
                        expr: Box::new(x),
                        target,
                    },
                    crate::ddl_types::cast_type(target),
                )
            }
            E::Convert {
                expr,
                data_type: None,
                ..
            } => {
                // CONVERT(x USING cs): x as a string, a BIT's bytes as text.
                let (x, tx) = self.bind_expr(expr, es)?;
                match tx {
                    SqlType::Bit { len_bits } => (
                        as_text(x, tx).0,
                        SqlType::varchar(u32::from(len_bits).div_ceil(8)),
                    ),
                    _ => (x, tx),
                }
            }
            E::Collate { expr, collation } => {
                let (x, ty) = self.bind_expr(expr, es)?;
                let name = collation.to_string().to_ascii_lowercase();
                let collation = if name.ends_with("_bin") || name == "binary" {
                    Collation::Binary
                } else {
                    Collation::CaseInsensitive
                };
                let ty = match ty {
                    SqlType::Text {
                        len_chars, fixed, ..
                    } => SqlType::Text {
                        len_chars,
                        collation,
                        fixed,
                    },
                    t => t,
                };
                (x, ty)
            }
            E::Extract { field, expr, .. } => {
                let unit = date_unit(field)?;
                let (x, _) = self.bind_expr(expr, es)?;
                (
                    Expr::Extract {
                        unit,
                        expr: Box::new(x),
                    },
                    SqlType::BIGINT,
                )
            }
            E::Substring {
                expr,
                substring_from,
                substring_for,
                ..
            } => {
                let mut args = vec![(**expr).clone()];
                args.extend(substring_from.as_deref().cloned());
                args.extend(substring_for.as_deref().cloned());
                self.bind_function("SUBSTRING", &args, es)?
            }
            E::Trim {
                trim_where,
                trim_what,
                expr,
                trim_characters,
            } => {
                if trim_characters.is_some() {
                    return Err(unsupported("TRIM with a character list"));
                }
                let name = match trim_where {
                    None | Some(ast::TrimWhereField::Both) => "TRIM",
                    Some(ast::TrimWhereField::Leading) => "TRIM_LEADING",
                    Some(ast::TrimWhereField::Trailing) => "TRIM_TRAILING",
                };
                let mut args = vec![(**expr).clone()];
                if let Some(what) = trim_what {
                    args.push((**what).clone());
                } else if name != "TRIM" {
                    args.push(E::Value(ast::Value::SingleQuotedString(" ".into()).into()));
                }
                self.bind_function(name, &args, es)?
            }
            E::Position { expr, r#in } => {
                self.bind_function("LOCATE", &[(**expr).clone(), (**r#in).clone()], es)?
            }
            E::Ceil { expr, .. } => self.bind_function("CEIL", &[(**expr).clone()], es)?,
            E::Floor { expr, .. } => self.bind_function("FLOOR", &[(**expr).clone()], es)?,
            E::Function(f) => self.bind_function_call(f, es)?,
            E::Tuple(items) if items.len() == 1 => self.bind_expr(&items[0], es)?,
            E::Tuple(_) => {
                return Err(Error::sql(
                    1241,
                    "21000",
                    "Operand should contain 1 column(s)",
                ));
            }
            E::Interval(_) => {
                return Err(Error::sql(
                    1064,
                    "42000",
                    "You have an error in your SQL syntax: INTERVAL must be added to or subtracted from a date",
                ));
            }
            E::RLike {
                negated,
                expr,
                pattern,
                ..
            } => {
                let args = [(**expr).clone(), (**pattern).clone()];
                let (like, ty) = self.bind_function("REGEXP_LIKE", &args, es)?;
                if *negated {
                    (Expr::Not(Box::new(like)), ty)
                } else {
                    (like, ty)
                }
            }
            other => return Err(unsupported(other)),
        })
    }

    /// `operand IN (query)` and `operand op ANY | ALL (query)`: the query must return
    /// one column; `kind` gets the collation the comparison uses.
    fn compare_with_subquery(
        &mut self,
        operand: &ast::Expr,
        query: &ast::Query,
        es: &ExprScope,
        kind: impl FnOnce(Collation) -> SubqueryKind,
    ) -> Result<(Expr, SqlType)> {
        let (x, tx) = self.bind_expr(operand, es)?;
        let (plan, correlated) = self.bind_subquery(query, es)?;
        if plan.width() != 1 {
            return Err(Error::sql(
                1241,
                "21000",
                "Operand should contain 1 column(s)",
            ));
        }
        let ty = plan.columns()[0].ty;
        let kind = kind(collation_of(tx, ty));
        // IN keeps the subquery's values as hash keys: when the operand's type
        // compares with theirs by conversion, both are keyed in that form.
        let (x, plan) = match compare::key_form(tx, ty) {
            Some(form) if matches!(kind, SubqueryKind::In { .. }) => {
                let key = |e: Expr| Expr::KeyForm {
                    expr: Box::new(e),
                    form,
                };
                let mut columns = plan.columns().to_vec();
                columns[0].ty = form.sql_type();
                let plan = Plan::Project {
                    input: Box::new(plan),
                    exprs: vec![key(Expr::Column(0))],
                    columns,
                };
                (key(x), plan)
            }
            _ => (x, plan),
        };
        Ok((
            Expr::Subquery {
                subquery: Arc::new(SubqueryExpr::new(kind, plan, correlated)),
                operand: Some(Box::new(x)),
            },
            SqlType::BOOL,
        ))
    }

    fn system_variable(&self, name: &str) -> Result<(Expr, SqlType)> {
        let lower = name.to_ascii_lowercase();
        let (global, name) = if let Some(n) = lower.strip_prefix("global.") {
            (true, n.to_string())
        } else if let Some(n) = lower
            .strip_prefix("session.")
            .or(lower.strip_prefix("local."))
        {
            (false, n.to_string())
        } else {
            (false, lower.clone())
        };
        let v = self.cx.system_variable(&name, global)?;
        let ty = value_type(&v);
        Ok((Expr::Literal(v), ty))
    }

    fn bind_subquery(&mut self, q: &ast::Query, es: &ExprScope) -> Result<(Plan, bool)> {
        let correlated = Cell::new(false);
        let saved = (self.lock, self.wait);
        self.lock = RowLock::None;
        let plan = if es.agg.is_some() {
            // The row around a subquery in a post-aggregation clause is the
            // aggregate's output; correlated references there are not supported.
            self.bind_query(q, None, &correlated)
        } else {
            self.bind_query(q, Some(es.scope), &correlated)
        };
        (self.lock, self.wait) = saved;
        let plan = plan.map_err(|e| match e {
            Error::Sql { code: 1054, .. } if es.agg.is_some() => {
                unsupported("a correlated subquery in a grouped query's select list or HAVING")
            }
            e => e,
        })?;
        Ok((plan, correlated.get()))
    }

    fn bind_binary(
        &mut self,
        left: &ast::Expr,
        op: &BinaryOperator,
        right: &ast::Expr,
        es: &ExprScope,
    ) -> Result<(Expr, SqlType)> {
        use BinaryOperator as B;
        if *op == B::StringConcat && self.cx.pipes_as_concat() {
            return self.bind_function("CONCAT", &[left.clone(), right.clone()], es);
        }
        // date ± INTERVAL n unit
        if matches!(op, B::Plus | B::Minus) {
            if let ast::Expr::Interval(interval) = right {
                let (d, td) = self.bind_expr(left, es)?;
                return self.date_add(d, td, interval, *op == B::Minus, es);
            }
            if let (ast::Expr::Interval(interval), B::Plus) = (left, op) {
                let (d, td) = self.bind_expr(right, es)?;
                return self.date_add(d, td, interval, false, es);
            }
        }
        if let (ast::Expr::Tuple(ls), ast::Expr::Tuple(rs)) = (left, right) {
            return self.row_comparison(ls, op, rs, es);
        }
        let (l, tl) = self.bind_expr(left, es)?;
        let (r, tr) = self.bind_expr(right, es)?;
        if let B::Arrow | B::LongArrow = op {
            return Ok(json::arrow(l, r, *op == B::LongArrow));
        }
        // An ENUM or SET is its number in arithmetic and bit operations, and compared
        // with a number; compared with a string it is its text.
        let numeric = matches!(
            op,
            B::Plus
                | B::Minus
                | B::Multiply
                | B::Divide
                | B::Modulo
                | B::MyIntegerDivide
                | B::DuckIntegerDivide
                | B::BitwiseAnd
                | B::BitwiseOr
                | B::BitwiseXor
                | B::PGBitwiseShiftLeft
                | B::PGBitwiseShiftRight
        );
        let (l, tl) = if numeric || is_number_type(tr) {
            as_number(l, tl)
        } else {
            (l, tl)
        };
        let (r, tr) = if numeric || is_number_type(tl) {
            as_number(r, tr)
        } else {
            (r, tr)
        };
        let with_json = json::compares_json(&[tl, tr]);
        let arith = |op: ArithOp| {
            (
                Expr::Arith {
                    op,
                    left: Box::new(time_as_number(l.clone(), tl)),
                    right: Box::new(time_as_number(r.clone(), tr)),
                },
                arith::result_type(op, tl, tr),
            )
        };
        let cmp = |op: CmpOp| {
            let (l, r, collation, key_form) = if with_json {
                (
                    json::compare_key(left, l.clone(), tl),
                    json::compare_key(right, r.clone(), tr),
                    Collation::Binary,
                    None,
                )
            } else {
                let (l, r) = compared_as_time(l.clone(), tl, r.clone(), tr);
                (
                    year_constant(l, tr),
                    year_constant(r, tl),
                    collation_of(tl, tr),
                    compare::key_form(tl, tr),
                )
            };
            (
                Expr::Compare {
                    op,
                    left: Box::new(l),
                    right: Box::new(r),
                    collation,
                    key_form: key_form.filter(|_| op == CmpOp::Eq),
                },
                SqlType::BOOL,
            )
        };
        Ok(match op {
            B::Plus => arith(ArithOp::Add),
            B::Minus => arith(ArithOp::Sub),
            B::Multiply => arith(ArithOp::Mul),
            B::Divide => arith(ArithOp::Div),
            B::Modulo => arith(ArithOp::Mod),
            B::MyIntegerDivide | B::DuckIntegerDivide => arith(ArithOp::IntDiv),
            B::Eq => cmp(CmpOp::Eq),
            B::NotEq => cmp(CmpOp::NotEq),
            B::Lt => cmp(CmpOp::Lt),
            B::LtEq => cmp(CmpOp::LtEq),
            B::Gt => cmp(CmpOp::Gt),
            B::GtEq => cmp(CmpOp::GtEq),
            B::Spaceship => cmp(CmpOp::NullSafeEq),
            B::And => (Expr::And(Box::new(l), Box::new(r)), SqlType::BOOL),
            B::Or => (Expr::Or(Box::new(l), Box::new(r)), SqlType::BOOL),
            B::Xor => (Expr::Xor(Box::new(l), Box::new(r)), SqlType::BOOL),
            B::StringConcat => (
                // `||` is OR in MySQL's default sql_mode (PIPES_AS_CONCAT: above).
                Expr::Or(Box::new(l), Box::new(r)),
                SqlType::BOOL,
            ),
            B::BitwiseAnd
            | B::BitwiseOr
            | B::BitwiseXor
            | B::PGBitwiseShiftLeft
            | B::PGBitwiseShiftRight => {
                let name = match op {
                    B::BitwiseAnd => "&",
                    B::BitwiseOr => "|",
                    B::BitwiseXor => "^",
                    B::PGBitwiseShiftLeft => "<<",
                    _ => ">>",
                };
                (
                    Expr::Function {
                        name: name.into(),
                        args: vec![l, r],
                        collation: Collation::CaseInsensitive,
                    },
                    SqlType::UInt { bits: 64 },
                )
            }
            other => return Err(unsupported(other)),
        })
    }

    /// `(a, b) op (c, d)`: equality is the AND of the pairs' equalities; an ordering
    /// compares lexicographically: `a < c OR (a = c AND b < d)`.
    fn row_comparison(
        &mut self,
        left: &[ast::Expr],
        op: &BinaryOperator,
        right: &[ast::Expr],
        es: &ExprScope,
    ) -> Result<(Expr, SqlType)> {
        if left.len() != right.len() {
            return Err(Error::sql(
                1241,
                "21000",
                format!("Operand should contain {} column(s)", left.len()),
            ));
        }
        let mut pairs = Vec::new();
        for (l, r) in left.iter().zip(right) {
            let (l, tl) = self.bind_expr(l, es)?;
            let (r, tr) = self.bind_expr(r, es)?;
            pairs.push((l, r, collation_of(tl, tr), compare::key_form(tl, tr)));
        }
        type Pair = (Expr, Expr, Collation, Option<compare::KeyForm>);
        let compare = |op: CmpOp, (l, r, c, key_form): &Pair| Expr::Compare {
            op,
            left: Box::new(l.clone()),
            right: Box::new(r.clone()),
            collation: *c,
            key_form: key_form.filter(|_| op == CmpOp::Eq),
        };
        let all_equal = |pairs: &[Pair], op: CmpOp| {
            pairs
                .iter()
                .map(|p| compare(op, p))
                .reduce(|a, b| Expr::And(Box::new(a), Box::new(b)))
                .unwrap_or(Expr::literal_bool(true))
        };
        let ordering = |strict: CmpOp, last: CmpOp| -> Expr {
            // From the last pair back: p_n.last, then p_i.strict OR (p_i = AND rest).
            let mut acc: Option<Expr> = None;
            for (i, p) in pairs.iter().enumerate().rev() {
                acc = Some(match acc {
                    None => compare(if i == pairs.len() - 1 { last } else { strict }, p),
                    Some(rest) => Expr::Or(
                        Box::new(compare(strict, p)),
                        Box::new(Expr::And(Box::new(compare(CmpOp::Eq, p)), Box::new(rest))),
                    ),
                });
            }
            acc.unwrap_or(Expr::literal_bool(true))
        };
        let expr = match op {
            BinaryOperator::Eq => all_equal(&pairs, CmpOp::Eq),
            BinaryOperator::Spaceship => all_equal(&pairs, CmpOp::NullSafeEq),
            BinaryOperator::NotEq => Expr::Not(Box::new(all_equal(&pairs, CmpOp::Eq))),
            BinaryOperator::Lt => ordering(CmpOp::Lt, CmpOp::Lt),
            BinaryOperator::LtEq => ordering(CmpOp::Lt, CmpOp::LtEq),
            BinaryOperator::Gt => ordering(CmpOp::Gt, CmpOp::Gt),
            BinaryOperator::GtEq => ordering(CmpOp::Gt, CmpOp::GtEq),
            _ => {
                return Err(Error::sql(
                    1241,
                    "21000",
                    "Operand should contain 1 column(s)",
                ));
            }
        };
        Ok((expr, SqlType::BOOL))
    }

    fn date_add(
        &mut self,
        d: Expr,
        td: SqlType,
        interval: &ast::Interval,
        subtract: bool,
        es: &ExprScope,
    ) -> Result<(Expr, SqlType)> {
        let unit = match &interval.leading_field {
            Some(field) => date_unit(field)?,
            None => IntervalUnit::Second,
        };
        let unit = match (&interval.last_field, unit) {
            (None, u) => u,
            (Some(last), first) => {
                let name = format!("{first:?}_{:?}", date_unit(last)?).to_ascii_uppercase();
                date::parse_unit(&name)
                    .ok_or_else(|| unsupported(format!("INTERVAL unit {name}")))?
            }
        };
        let (amount, _) = self.bind_expr(&interval.value, es)?;
        let ty = date_add_type(td, unit);
        Ok((
            Expr::DateAdd {
                expr: Box::new(d),
                amount: Box::new(amount),
                unit,
                subtract,
            },
            ty,
        ))
    }

    fn bind_function_call(&mut self, f: &ast::Function, es: &ExprScope) -> Result<(Expr, SqlType)> {
        let name = object_name(&f.name).join(".").to_ascii_uppercase();
        if let Some(over) = &f.over {
            return self.bind_window_call(f, over, &name, es);
        }
        if aggregate_function(&name).is_some() {
            // An aggregate outside an aggregating clause (WHERE, GROUP BY).
            return Err(Error::sql(1111, "HY000", "Invalid use of group function"));
        }
        if name == "JSON_VALUE" || name == crate::parse::JSON_VALUE_WITH_RESPONSES {
            if let FunctionArguments::List(list) = &f.args {
                return self.bind_json_value(list, &name, es);
            }
        }
        let args: Vec<ast::Expr> = match &f.args {
            FunctionArguments::None => vec![],
            FunctionArguments::List(list) => {
                let mut args = Vec::new();
                for a in &list.args {
                    match a {
                        FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) => args.push(e.clone()),
                        _ => return Err(wrong_args(&name)),
                    }
                }
                args
            }
            FunctionArguments::Subquery(_) => return Err(wrong_args(&name)),
        };
        if let Some(v) = self.cx.session_function(&name) {
            if !args.is_empty() && name != "LAST_INSERT_ID" {
                return Err(wrong_args(&name));
            }
            // LAST_INSERT_ID(expr) is a function that sets it (`func::call`).
            if args.is_empty() {
                let ty = value_type(&v);
                return Ok((Expr::Literal(v), ty));
            }
        }
        self.bind_function(&name, &args, es)
            .map_err(|e| self.unknown_function(e, f, &name))
    }

    /// MySQL names an unknown function as written, with the database it was looked
    /// up in: `FUNCTION db.name does not exist`.
    fn unknown_function(&self, error: Error, f: &ast::Function, upper: &str) -> Error {
        let message = format!("FUNCTION {upper} does not exist");
        if error.mysql_code() != 1305 || error.to_string() != message {
            return error;
        }
        let written = object_name(&f.name).join(".");
        let full = match self.database.clone().or_else(|| self.cx.current_database()) {
            Some(db) if !written.contains('.') => format!("{db}.{written}"),
            _ => written,
        };
        Error::sql(1305, "42000", format!("FUNCTION {full} does not exist"))
    }

    fn bind_function(
        &mut self,
        name: &str,
        args: &[ast::Expr],
        es: &ExprScope,
    ) -> Result<(Expr, SqlType)> {
        let upper = name.to_ascii_uppercase();
        match upper.as_str() {
            "DATE_ADD" | "DATE_SUB" | "ADDDATE" | "SUBDATE" if args.len() == 2 => {
                let (d, td) = self.bind_expr(&args[0], es)?;
                let subtract = upper == "DATE_SUB" || upper == "SUBDATE";
                return match &args[1] {
                    ast::Expr::Interval(interval) => self.date_add(d, td, interval, subtract, es),
                    days => {
                        let (amount, _) = self.bind_expr(days, es)?;
                        Ok((
                            Expr::DateAdd {
                                expr: Box::new(d),
                                amount: Box::new(amount),
                                unit: IntervalUnit::Day,
                                subtract,
                            },
                            date_add_type(td, IntervalUnit::Day),
                        ))
                    }
                };
            }
            "IF" => {
                if args.len() != 3 {
                    return Err(wrong_args(name));
                }
                let (c, _) = self.bind_expr(&args[0], es)?;
                let (a, ta) = self.bind_expr(&args[1], es)?;
                let (b, tb) = self.bind_expr(&args[2], es)?;
                let ty = unify(ta, tb);
                return Ok((
                    coerced(
                        Expr::Case {
                            whens: vec![(c, a)],
                            otherwise: Some(Box::new(b)),
                        },
                        ty,
                    ),
                    ty,
                ));
            }
            "IFNULL" | "COALESCE" | "NVL" => {
                if args.is_empty() || (upper == "IFNULL" && args.len() != 2) {
                    return Err(wrong_args(name));
                }
                let (exprs, types) = self.bind_args(args, es)?;
                let ty = types.into_iter().fold(SqlType::Null, unify);
                return Ok((coerced(Expr::Coalesce(exprs), ty), ty));
            }
            "NULLIF" => {
                if args.len() != 2 {
                    return Err(wrong_args(name));
                }
                let (a, ta) = self.bind_expr(&args[0], es)?;
                let (b, tb) = self.bind_expr(&args[1], es)?;
                return Ok((
                    Expr::NullIf(Box::new(a), Box::new(b), collation_of(ta, tb)),
                    ta,
                ));
            }
            "EXTRACT" => {
                // `EXTRACT(unit FROM x)` with a composite unit, as the pre-pass writes
                // it (`parse/scan.rs`): `` `EXTRACT`(HOUR_SECOND, x) ``.
                let unit = match args {
                    [ast::Expr::Identifier(id), _] if id.quote_style.is_none() => {
                        date::parse_unit(&id.value)
                    }
                    _ => None,
                };
                let Some(unit) = unit else {
                    return Err(wrong_args(name));
                };
                let (x, _) = self.bind_expr(&args[1], es)?;
                return Ok((
                    Expr::Extract {
                        unit,
                        expr: Box::new(x),
                    },
                    SqlType::BIGINT,
                ));
            }
            "TIMESTAMPDIFF" | "TIMESTAMPADD" => {
                if args.len() != 3 {
                    return Err(wrong_args(name));
                }
                let unit = timestamp_unit(&args[0])?;
                let (a, ta) = self.bind_expr(&args[1], es)?;
                let (b, tb) = self.bind_expr(&args[2], es)?;
                return Ok(if upper == "TIMESTAMPADD" {
                    (
                        Expr::DateAdd {
                            expr: Box::new(b),
                            amount: Box::new(a),
                            unit,
                            subtract: false,
                        },
                        date_add_type(tb, unit),
                    )
                } else {
                    let unit_name = Expr::Literal(Value::Bytes(unit.name().as_bytes().to_vec()));
                    (
                        Expr::Function {
                            name: upper.into(),
                            args: vec![unit_name, a, b],
                            collation: Collation::CaseInsensitive,
                        },
                        func::return_type(name, &[SqlType::TEXT, ta, tb])?,
                    )
                });
            }
            "TIMESTAMP" => {
                // TIMESTAMP(x): x as a DATETIME; TIMESTAMP(x, t): that plus the TIME t
                // (ADDTIME). Fraction digits: the operands' (six for a string).
                let (x, tx) = match args {
                    [x] | [x, _] => self.bind_expr(x, es)?,
                    _ => return Err(wrong_args(name)),
                };
                // A string constant has the digits it is written with.
                let fsp_of = |e: &Expr, t: SqlType| match (e, t) {
                    (Expr::Literal(Value::Bytes(b)), _) => date::string_fsp(b),
                    (_, SqlType::DateTime { fsp, .. } | SqlType::Time { fsp }) => fsp,
                    (_, SqlType::Decimal { scale, .. }) => scale.min(6),
                    (_, t) if t.is_string() || matches!(t, SqlType::Double | SqlType::Float) => 6,
                    _ => 0,
                };
                let mut fsp = fsp_of(&x, tx);
                let added = match args {
                    [_, t] => {
                        let (t, tt) = self.bind_expr(t, es)?;
                        fsp = fsp.max(fsp_of(&t, tt));
                        Some(t)
                    }
                    _ => None,
                };
                let datetime = Expr::Cast {
                    expr: Box::new(x),
                    target: CastTarget::DateTime(fsp),
                };
                let ty = SqlType::DateTime {
                    fsp,
                    timestamp: false,
                };
                return Ok(match added {
                    None => (datetime, ty),
                    Some(t) => (
                        Expr::Function {
                            name: "ADDTIME".into(),
                            args: vec![
                                datetime,
                                Expr::Cast {
                                    expr: Box::new(t),
                                    target: CastTarget::Time(fsp),
                                },
                            ],
                            collation: Collation::CaseInsensitive,
                        },
                        ty,
                    ),
                });
            }
            "RAND" => {
                let seed = match args {
                    [] => None,
                    [seed] => Some(Box::new(self.bind_expr(seed, es)?.0)),
                    _ => return Err(wrong_args(name)),
                };
                let state = Arc::new(crate::scalar::rand::SeededRand::default());
                return Ok((Expr::Rand { seed, state }, SqlType::Double));
            }
            "COLLATION" | "CHARSET" | "COERCIBILITY" => {
                let [arg] = args else {
                    return Err(wrong_args(name));
                };
                let (x, tx) = self.bind_expr(arg, es)?;
                return Ok(describe_collation(&upper, arg, &x, tx));
            }
            _ if crate::scalar::json::is_function(&upper) => {
                return self.bind_json_function(&upper, args, es);
            }
            _ => {}
        }
        let (exprs, types) = self.bind_args(args, es)?;
        // HEX reads a BIT as the number it is (HEX(b'1010') is 'A'), as MySQL does.
        let (exprs, types): (Vec<Expr>, Vec<SqlType>) = exprs
            .into_iter()
            .zip(types)
            .enumerate()
            .map(|(i, (e, t))| match t {
                SqlType::Bit { .. } if upper == "HEX" => (e, t),
                _ if func::reads_argument_as_text(&upper, i) => as_text(e, t),
                _ => (e, t),
            })
            .unzip();
        // UPPER and LOWER leave binary strings as they are (MySQL).
        if matches!(upper.as_str(), "UPPER" | "UCASE" | "LOWER" | "LCASE")
            && let ([x], [tx]) = (exprs.as_slice(), types.as_slice())
            && tx.is_binary_string()
        {
            return Ok((x.clone(), *tx));
        }
        let constants: Vec<Option<Value>> = exprs
            .iter()
            .map(|e| match e {
                Expr::Literal(v) => Some(v.clone()),
                _ => None,
            })
            .collect();
        let ty = func::return_type_with_constants(&upper, &types, &constants)?;
        // String searches and comparisons are binary if any string argument is.
        let collation = if types
            .iter()
            .any(|t| t.is_string() && t.collation() == Collation::Binary)
        {
            Collation::Binary
        } else {
            Collation::CaseInsensitive
        };
        Ok((
            Expr::Function {
                name: upper.into(),
                args: exprs,
                collation,
            },
            ty,
        ))
    }
}

/// Wraps a branch-picking expression so its values take its declared type.
/// An ENUM or SET operand read as a number, its index or bitmask, as MySQL reads one
/// in numeric context (`e + 0`, `e = 1`, `SUM(e)`, ORDER BY); other operands as they
/// are.
pub(crate) fn as_number(expr: Expr, ty: SqlType) -> (Expr, SqlType) {
    match CastTarget::number_of(ty) {
        Some(target) => (
            Expr::Cast {
                expr: Box::new(expr),
                target,
            },
            crate::ddl_types::cast_type(target),
        ),
        None => (expr, ty),
    }
}

/// What a sort key of type `ty` sorts by: an ENUM by its index and a SET by its
/// bitmask (MySQL's order, which is also their key order), anything else by itself.
pub(crate) fn sort_expr(expr: Expr, ty: SqlType) -> Expr {
    as_number(expr, ty).0
}

/// Numbers, BIT included: what an ENUM or SET compared with one is read as a number
/// for.
fn is_number_type(ty: SqlType) -> bool {
    ty.is_numeric() || matches!(ty, SqlType::Bit { .. })
}

fn coerced(expr: Expr, ty: SqlType) -> Expr {
    match ty {
        SqlType::Null => expr,
        ty => Expr::Coerce {
            expr: Box::new(expr),
            ty,
        },
    }
}

trait SelectExt {
    fn group_by_is_empty(&self) -> bool;
}

impl SelectExt for ast::Select {
    fn group_by_is_empty(&self) -> bool {
        matches!(&self.group_by, ast::GroupByExpr::Expressions(e, _) if e.is_empty())
    }
}

/// MySQL's ER_INVALID_GROUP_FUNC_USE.
fn invalid_group_function() -> Error {
    Error::sql(1111, "HY000", "Invalid use of group function")
}

fn wrong_args(name: &str) -> Error {
    Error::sql(
        1582,
        "42000",
        format!("Incorrect parameter count in the call to native function '{name}'"),
    )
}

fn push_scope(scope: &mut Scope, columns: &[OutputColumn]) -> Result<()> {
    if let Some(alias) = columns.first().and_then(|c| c.table.as_ref()) {
        if scope
            .columns
            .iter()
            .any(|c| c.table.as_ref() == Some(alias))
        {
            return Err(Error::sql(
                1066,
                "42000",
                format!("Not unique table/alias: '{alias}'"),
            ));
        }
    }
    scope.columns.extend(columns.iter().map(|c| ScopeColumn {
        table: c.table.clone(),
        name: c.name.clone(),
        ty: c.ty,
        nullable: c.nullable,
        tinyint1: c.tinyint1,
        hidden: false,
        using_first: false,
        key: None,
    }));
    Ok(())
}

/// `left UNION [ALL] right`: the columns unify both sides' types; UNION ALL chains
/// are flattened, and a DISTINCT union is a `Distinct` over them.
fn union_of(left: Plan, right: Plan, all: bool) -> Result<Plan> {
    if left.width() != right.width() {
        return Err(Error::sql(
            1222,
            "21000",
            "The used SELECT statements have a different number of columns",
        ));
    }
    let columns = left
        .columns()
        .iter()
        .zip(right.columns())
        .map(|(a, b)| {
            let mut c =
                OutputColumn::new(a.name.clone(), unify(a.ty, b.ty), a.nullable || b.nullable);
            c.table = None;
            c
        })
        .collect();
    let mut inputs = Vec::new();
    for side in [left, right] {
        match side {
            // Flatten UNION ALL chains; a DISTINCT union over them is applied once
            // above.
            Plan::Union {
                inputs: inner,
                all: true,
                ..
            } if all => inputs.extend(inner),
            other => inputs.push(other),
        }
    }
    let union = Plan::Union {
        inputs,
        all: true,
        columns,
    };
    Ok(if all {
        union
    } else {
        Plan::Distinct {
            input: Box::new(union),
        }
    })
}

/// `left INTERSECT right` or `left EXCEPT right` (DISTINCT; MySQL 8.0.31's, which
/// Django's `intersection()` and `difference()` send): the distinct rows of `left`
/// that `right` has, or lacks. Both sides are converted to their unified column types
/// (as UNION's are) and tagged with their side, then grouped on every column, which
/// compares rows as DISTINCT does (NULLs equal, strings under their collations):
///
/// `SELECT c.. FROM (SELECT c.., 1, 0 FROM left UNION ALL SELECT c.., 0, 1 FROM right)
/// GROUP BY c.. HAVING MAX(in_left) = 1 AND MAX(in_right) = 1` (EXCEPT: `= 0`).
fn intersect_or_except(left: Plan, right: Plan, intersect: bool) -> Result<Plan> {
    if left.width() != right.width() {
        return Err(Error::sql(
            1222,
            "21000",
            "The used SELECT statements have a different number of columns",
        ));
    }
    let width = left.width();
    let types: Vec<SqlType> = left
        .columns()
        .iter()
        .zip(right.columns())
        .map(|(a, b)| unify(a.ty, b.ty))
        .collect();
    let columns: Vec<OutputColumn> = left
        .columns()
        .iter()
        .zip(right.columns())
        .zip(&types)
        .map(|((a, b), ty)| {
            let nullable = if intersect {
                a.nullable && b.nullable
            } else {
                a.nullable
            };
            OutputColumn::new(a.name.clone(), *ty, nullable)
        })
        .collect();
    let tag = OutputColumn::new("", SqlType::BIGINT, false);
    let tagged = |side: Plan, in_left: i64| {
        let side = convert_branches(side, &types);
        let mut exprs: Vec<Expr> = (0..width).map(Expr::Column).collect();
        exprs.push(Expr::Literal(Value::Int(in_left)));
        exprs.push(Expr::Literal(Value::Int(1 - in_left)));
        let mut tagged_columns = columns.clone();
        tagged_columns.extend([tag.clone(), tag.clone()]);
        Plan::Project {
            input: Box::new(side),
            exprs,
            columns: tagged_columns,
        }
    };
    let mut union_columns = columns.clone();
    union_columns.extend([tag.clone(), tag.clone()]);
    let union = Plan::Union {
        inputs: vec![tagged(left, 1), tagged(right, 0)],
        all: true,
        columns: union_columns,
    };
    let max_of = |column: usize| AggCall {
        func: AggFunc::Max,
        arg: Some(Expr::Column(column)),
        distinct: false,
        arg_type: SqlType::BIGINT,
        concat: None,
    };
    let mut agg_columns = columns.clone();
    agg_columns.extend([tag.clone(), tag]);
    let grouped = Plan::Aggregate {
        input: Box::new(union),
        group: (0..width).map(Expr::Column).collect(),
        aggs: vec![max_of(width), max_of(width + 1)],
        rollup: false,
        columns: agg_columns,
    };
    let is = |column: usize, value: i64| Expr::Compare {
        op: CmpOp::Eq,
        left: Box::new(Expr::Column(column)),
        right: Box::new(Expr::Literal(Value::Int(value))),
        collation: Collation::Binary,
        key_form: None,
    };
    let filtered = Plan::Filter {
        input: Box::new(grouped),
        predicate: Expr::And(
            Box::new(is(width, 1)),
            Box::new(is(width + 1, i64::from(intersect))),
        ),
    };
    Ok(Plan::Project {
        input: Box::new(filtered),
        exprs: (0..width).map(Expr::Column).collect(),
        columns,
    })
}

/// Converts every branch of a UNION chain (`union`, from [`union_of`]) to the
/// chain's column types, as MySQL converts each SELECT's values to the type it
/// aggregates from all of them: `SELECT 1.5 UNION SELECT 2` gives `2.0`, and a
/// number with a string gives strings. A UNION DISTINCT then removes duplicates of
/// the converted values (`SELECT 1 UNION SELECT '1'` is one row).
fn convert_union_branches(union: Plan) -> Plan {
    let types: Vec<SqlType> = union.columns().iter().map(|c| c.ty).collect();
    convert_branches(union, &types)
}

fn convert_branches(plan: Plan, types: &[SqlType]) -> Plan {
    match plan {
        Plan::Distinct { input } if matches!(*input, Plan::Union { .. }) => Plan::Distinct {
            input: Box::new(convert_branches(*input, types)),
        },
        Plan::Union {
            inputs,
            all,
            mut columns,
        } => {
            for (c, ty) in columns.iter_mut().zip(types) {
                c.ty = *ty;
            }
            Plan::Union {
                inputs: inputs
                    .into_iter()
                    .map(|p| convert_branches(p, types))
                    .collect(),
                all,
                columns,
            }
        }
        branch => {
            let columns = branch.columns();
            if columns.iter().zip(types).all(|(c, ty)| c.ty == *ty) {
                return branch;
            }
            let exprs = columns
                .iter()
                .zip(types)
                .enumerate()
                .map(|(i, (c, ty))| {
                    if c.ty == *ty {
                        Expr::Column(i)
                    } else {
                        coerced(Expr::Column(i), *ty)
                    }
                })
                .collect();
            let columns = columns
                .iter()
                .zip(types)
                .map(|(c, ty)| OutputColumn {
                    ty: *ty,
                    ..c.clone()
                })
                .collect();
            Plan::Project {
                input: Box::new(branch),
                exprs,
                columns,
            }
        }
    }
}

/// Names a derived table's (or view's) output columns for the outer query.
fn rename_output(plan: &mut Plan, alias: &str, names: &[ast::TableAliasColumnDef]) -> Result<()> {
    let width = plan.width();
    if !names.is_empty() && names.len() != width {
        return Err(Error::sql(
            1353,
            "HY000",
            "In definition of view, derived table or common table expression, SELECT list and column names list have different column counts",
        ));
    }
    let mut columns: Vec<OutputColumn> = plan.columns().to_vec();
    for (i, c) in columns.iter_mut().enumerate() {
        c.table = Some(alias.to_string());
        if let Some(n) = names.get(i) {
            c.name = n.name.value.clone();
        }
    }
    // Duplicate names make references ambiguous, as MySQL refuses them.
    for (i, c) in columns.iter().enumerate() {
        if columns[..i]
            .iter()
            .any(|d| d.name.eq_ignore_ascii_case(&c.name))
        {
            return Err(Error::sql(
                1060,
                "42S21",
                format!("Duplicate column name '{}'", c.name),
            ));
        }
    }
    let input = std::mem::replace(
        plan,
        Plan::Values {
            rows: vec![],
            columns: vec![],
        },
    );
    *plan = Plan::Project {
        input: Box::new(input),
        exprs: (0..width).map(Expr::Column).collect(),
        columns,
    };
    Ok(())
}

impl Binder<'_> {
    /// The name MySQL gives an unaliased select item: its text as written.
    fn display_name(&self, e: &ast::Expr) -> String {
        use sqlparser::ast::Spanned;
        if !matches!(
            e,
            ast::Expr::Identifier(_) | ast::Expr::CompoundIdentifier(_) | ast::Expr::Value(_)
        ) {
            if let Some(text) = self.cx.statement_text() {
                let extend_start = matches!(
                    e,
                    ast::Expr::Substring { .. }
                        | ast::Expr::Trim { .. }
                        | ast::Expr::Extract { .. }
                        | ast::Expr::Cast { .. }
                        | ast::Expr::Convert { .. }
                        | ast::Expr::Position { .. }
                        | ast::Expr::Ceil { .. }
                        | ast::Expr::Floor { .. }
                );
                if let Some(slice) = span_text(&text, e.span(), extend_start) {
                    // EXTRACT with a composite unit as the pre-pass rewrote it
                    // (`parse/scan.rs`), named as written.
                    if let Some((unit, rest)) = slice
                        .strip_prefix("`EXTRACT`(")
                        .and_then(|call| call.split_once(','))
                    {
                        return format!("EXTRACT({unit} FROM{rest}");
                    }
                    return slice;
                }
            }
        }
        display_name(e)
    }
}

/// The end of `IS [NOT] {NULL | TRUE | FALSE | UNKNOWN}` if `bytes` has one at
/// `at` (after blanks), in any case and spacing.
fn postfix_is(bytes: &[u8], at: usize) -> Option<usize> {
    let word = |at: usize| -> Option<(usize, usize)> {
        let mut start = at;
        while start < bytes.len() && bytes[start].is_ascii_whitespace() {
            start += 1;
        }
        let mut end = start;
        while end < bytes.len() && (bytes[end].is_ascii_alphanumeric() || bytes[end] == b'_') {
            end += 1;
        }
        (end > start && start > at).then_some((start, end))
    };
    let (start, end) = word(at)?;
    if !bytes[start..end].eq_ignore_ascii_case(b"IS") {
        return None;
    }
    let (mut start, mut end) = word(end)?;
    if bytes[start..end].eq_ignore_ascii_case(b"NOT") {
        (start, end) = word(end)?;
    }
    let value = &bytes[start..end];
    [&b"NULL"[..], b"TRUE", b"FALSE", b"UNKNOWN"]
        .iter()
        .any(|v| value.eq_ignore_ascii_case(v))
        .then_some(end)
}

/// The text between two (line, column) locations (1-based; the end exclusive).
fn span_text(text: &str, span: sqlparser::tokenizer::Span, extend_start: bool) -> Option<String> {
    if span.start.line == 0 || span.end.line == 0 {
        return None;
    }
    let offset = |line: u64, column: u64| -> Option<usize> {
        let mut current = 1u64;
        let mut start = 0usize;
        for (i, c) in text.char_indices() {
            if current == line {
                break;
            }
            if c == '\n' {
                current += 1;
                start = i + 1;
            }
        }
        if current != line {
            return None;
        }
        let rest = &text[start..];
        let mut chars = rest.char_indices();
        let mut col = 1u64;
        loop {
            if col == column {
                return Some(start + chars.next().map_or(rest.len(), |(i, _)| i));
            }
            chars.next()?;
            col += 1;
        }
    };
    let (mut a, mut b) = (
        offset(span.start.line, span.start.column)?,
        offset(span.end.line, span.end.column)?,
    );
    if a >= b || b > text.len() {
        return None;
    }
    let bytes = text.as_bytes();
    let is_name = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    // sqlparser's spans of `name(args)` forms may start inside the parentheses
    // (SUBSTRING, TRIM, CAST, EXTRACT, ...) or end before them (COUNT(*)), and a
    // parenthesised operand's span may leave out its `(`: widen to the name and to
    // balanced parentheses.
    if extend_start {
        let mut depth = 0usize;
        for j in (a.saturating_sub(64)..a).rev() {
            match bytes[j] {
                b')' => depth += 1,
                b'(' if depth > 0 => depth -= 1,
                b'(' => {
                    let mut k = j;
                    while k > 0 && is_name(bytes[k - 1]) {
                        k -= 1;
                    }
                    if k < j {
                        a = k;
                    }
                    break;
                }
                _ => {}
            }
        }
    }
    // A BINARY operator before the item (the pre-pass made it a cast whose span is its
    // operand's, `parse/prefix_operators.rs`): the name starts at BINARY, as written.
    loop {
        let word_end = text[..a].trim_end().len();
        let word_start = word_end.saturating_sub(6);
        if word_end >= 6
            && text.is_char_boundary(word_start)
            && text[word_start..word_end].eq_ignore_ascii_case("BINARY")
            && (word_start == 0 || !is_name(bytes[word_start - 1]))
        {
            a = word_start;
        } else {
            break;
        }
    }
    // The parenthesis balance of text[a..b], outside quotes.
    let balance = |a: usize, b: usize| -> i64 {
        let mut depth = 0i64;
        let mut quote: Option<u8> = None;
        let mut i = a;
        while i < b {
            let c = bytes[i];
            match quote {
                Some(_) if c == b'\\' => i += 1,
                Some(q) if c == q => quote = None,
                Some(_) => {}
                None => match c {
                    b'\'' | b'"' | b'`' => quote = Some(c),
                    b'(' => depth += 1,
                    b')' => depth -= 1,
                    _ => {}
                },
            }
            i += 1;
        }
        depth
    };
    for _ in 0..8 {
        let depth = balance(a, b);
        if depth < 0 {
            // Take in the `(` of a parenthesised first operand.
            let mut need = -depth;
            while a > 0 && need > 0 {
                a -= 1;
                match bytes[a] {
                    b'(' => need -= 1,
                    b')' => need += 1,
                    _ => {}
                }
            }
            continue;
        }
        if depth > 0 {
            let mut need = depth;
            while b < bytes.len() && need > 0 {
                match bytes[b] {
                    b'(' => need += 1,
                    b')' => need -= 1,
                    _ => {}
                }
                b += 1;
            }
            continue;
        }
        // A function name followed by its argument list.
        let mut k = b;
        while k < bytes.len() && bytes[k].is_ascii_whitespace() {
            k += 1;
        }
        if b > a && is_name(bytes[b - 1]) && k < bytes.len() && bytes[k] == b'(' {
            b = k + 1;
            continue;
        }
        // sqlparser's span of a prefix operation (`-id`, `NOT id`, `!id`, `~id`) is
        // its operand's, and so is that of `id IS [NOT] NULL` (TRUE, FALSE,
        // UNKNOWN): take in the operator. Only the item lies between the select
        // list's separators, so an operator next to the span is the item's.
        let word_before = |end: usize, word: &[u8]| {
            end >= word.len()
                && bytes[end - word.len()..end].eq_ignore_ascii_case(word)
                && (end == word.len() || !is_name(bytes[end - word.len() - 1]))
        };
        let mut k = a;
        while k > 0 && bytes[k - 1].is_ascii_whitespace() {
            k -= 1;
        }
        if k > 0 && matches!(bytes[k - 1], b'-' | b'+' | b'~' | b'!') {
            a = k - 1;
            continue;
        }
        if word_before(k, b"NOT") {
            a = k - 3;
            continue;
        }
        // A parenthesised operand of a prefix operator (`-(id)`): its parentheses,
        // then (above) the operator.
        let mut j = b;
        while j < bytes.len() && bytes[j].is_ascii_whitespace() {
            j += 1;
        }
        if k > 0 && bytes[k - 1] == b'(' && j < bytes.len() && bytes[j] == b')' {
            let mut m = k - 1;
            while m > 0 && bytes[m - 1].is_ascii_whitespace() {
                m -= 1;
            }
            if m > 0 && matches!(bytes[m - 1], b'-' | b'+' | b'~' | b'!') || word_before(m, b"NOT")
            {
                a = k - 1;
                b = j + 1;
                continue;
            }
        }
        if let Some(end) = postfix_is(bytes, b) {
            b = end;
            continue;
        }
        break;
    }
    text.get(a..b)
        .map(|t| t.trim().to_string())
        .filter(|t| !t.is_empty())
}

/// The name MySQL gives an unaliased select item: its text.
fn display_name(e: &ast::Expr) -> String {
    match e {
        ast::Expr::Identifier(i) => i.value.clone(),
        ast::Expr::CompoundIdentifier(parts)
            if parts.first().is_some_and(|p| p.value.starts_with('@')) =>
        {
            parts
                .iter()
                .map(|p| p.value.as_str())
                .collect::<Vec<_>>()
                .join(".")
        }
        ast::Expr::CompoundIdentifier(parts) => {
            parts.last().map(|p| p.value.clone()).unwrap_or_default()
        }
        ast::Expr::Value(v) => match &v.value {
            ast::Value::SingleQuotedString(s) | ast::Value::DoubleQuotedString(s) => s.clone(),
            other => other.to_string(),
        },
        other => other.to_string(),
    }
}

/// True if two bound expressions are the same (ORDER BY of a selected expression).
fn same_expr(a: &Expr, b: &Expr) -> bool {
    format!("{a:?}") == format!("{b:?}")
}

pub fn aggregate_function(name: &str) -> Option<AggFunc> {
    Some(match name {
        "COUNT" => AggFunc::Count,
        "SUM" => AggFunc::Sum,
        "AVG" => AggFunc::Avg,
        "MIN" => AggFunc::Min,
        "MAX" => AggFunc::Max,
        "BIT_AND" => AggFunc::BitAnd,
        "BIT_OR" => AggFunc::BitOr,
        "BIT_XOR" => AggFunc::BitXor,
        "STD" | "STDDEV" | "STDDEV_POP" => AggFunc::StdPop,
        "STDDEV_SAMP" => AggFunc::StdSamp,
        "VARIANCE" | "VAR_POP" => AggFunc::VarPop,
        "VAR_SAMP" => AggFunc::VarSamp,
        "ANY_VALUE" => AggFunc::AnyValue,
        "GROUP_CONCAT" => AggFunc::GroupConcat,
        "JSON_ARRAYAGG" => AggFunc::JsonArrayAgg,
        "JSON_OBJECTAGG" => AggFunc::JsonObjectAgg,
        _ => return None,
    })
}

/// True if `e` calls an aggregate function outside any subquery.
pub fn has_aggregate(e: &ast::Expr) -> bool {
    use ast::Expr as E;
    let any = |list: &[ast::Expr]| list.iter().any(has_aggregate);
    match e {
        E::Function(f) => {
            let name = object_name(&f.name).join(".").to_ascii_uppercase();
            if aggregate_function(&name).is_some() && f.over.is_none() {
                return true;
            }
            // `RANK() OVER (ORDER BY COUNT(*))` aggregates too.
            if let Some(ast::WindowType::WindowSpec(spec)) = &f.over {
                if spec.partition_by.iter().any(has_aggregate)
                    || spec.order_by.iter().any(|o| has_aggregate(&o.expr))
                {
                    return true;
                }
            }
            match &f.args {
                FunctionArguments::List(list) => list.args.iter().any(|a| match a {
                    FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) => has_aggregate(e),
                    _ => false,
                }),
                _ => false,
            }
        }
        E::BinaryOp { left, right, .. } => has_aggregate(left) || has_aggregate(right),
        E::UnaryOp { expr, .. }
        | E::Nested(expr)
        | E::IsNull(expr)
        | E::IsNotNull(expr)
        | E::IsTrue(expr)
        | E::IsNotTrue(expr)
        | E::IsFalse(expr)
        | E::IsNotFalse(expr)
        | E::Cast { expr, .. }
        | E::Convert { expr, .. }
        | E::Collate { expr, .. }
        | E::Extract { expr, .. }
        | E::Ceil { expr, .. }
        | E::Floor { expr, .. } => has_aggregate(expr),
        E::Between {
            expr, low, high, ..
        } => has_aggregate(expr) || has_aggregate(low) || has_aggregate(high),
        E::InList { expr, list, .. } => has_aggregate(expr) || any(list),
        E::InSubquery { expr, .. } => has_aggregate(expr),
        E::Like { expr, pattern, .. } | E::ILike { expr, pattern, .. } => {
            has_aggregate(expr) || has_aggregate(pattern)
        }
        E::Case {
            operand,
            conditions,
            else_result,
            ..
        } => {
            operand.as_deref().is_some_and(has_aggregate)
                || conditions
                    .iter()
                    .any(|c| has_aggregate(&c.condition) || has_aggregate(&c.result))
                || else_result.as_deref().is_some_and(has_aggregate)
        }
        E::Substring {
            expr,
            substring_from,
            substring_for,
            ..
        } => {
            has_aggregate(expr)
                || substring_from.as_deref().is_some_and(has_aggregate)
                || substring_for.as_deref().is_some_and(has_aggregate)
        }
        E::Tuple(list) => any(list),
        E::Interval(i) => has_aggregate(&i.value),
        _ => false,
    }
}

/// The operands of a comparison with a TIME, converted as MySQL compares them: a
/// string or number on the other side is read as a TIME, and a TIME against a date
/// is put on the current date (a DATETIME). The two sides then have one type, so a
/// hash join on them matches what `=` matches. Other operands are unchanged.
fn compared_as_time(l: Expr, tl: SqlType, r: Expr, tr: SqlType) -> (Expr, Expr) {
    use crate::scalar::cast::CastTarget;
    let cast = |e: Expr, target: CastTarget| Expr::Cast {
        expr: Box::new(e),
        target,
    };
    let as_time = |t: SqlType| t.is_string() || t.is_numeric();
    match (tl, tr) {
        (SqlType::Time { .. }, t) if as_time(t) => (l, cast(r, CastTarget::Time(6))),
        (t, SqlType::Time { .. }) if as_time(t) => (cast(l, CastTarget::Time(6)), r),
        (SqlType::Time { fsp }, t) if t.is_temporal() => (cast(l, CastTarget::DateTime(fsp)), r),
        (t, SqlType::Time { fsp }) if t.is_temporal() => (l, cast(r, CastTarget::DateTime(fsp))),
        _ => (l, r),
    }
}

/// A literal compared with a YEAR (`other`), read as the YEAR it would store as when
/// it stores as one (`y = 1` is `y = 2001`), as MySQL converts a constant compared
/// with a YEAR column; anything else unchanged.
fn year_constant(e: Expr, other: SqlType) -> Expr {
    match (&e, other) {
        (Expr::Literal(v @ (Value::Int(_) | Value::UInt(_) | Value::Bytes(_))), SqlType::Year) => {
            match crate::scalar::time::to_year_column(v.clone(), "", 1) {
                Ok(year) => Expr::Literal(year),
                Err(_) => e,
            }
        }
        _ => e,
    }
}

/// An operand read as a string, and its type there: a DATETIME(fsp) or TIME(fsp) as
/// the text of its type ([`temporal_as_text`]), its type kept; a BIT(n) as its
/// ceil(n / 8) big-endian bytes, a VARBINARY (MySQL's BIT has the binary charset).
/// Other operands unchanged.
pub(crate) fn as_text(e: Expr, ty: SqlType) -> (Expr, SqlType) {
    match ty {
        SqlType::Bit { len_bits } => {
            let target = CastTarget::BitBytes { len_bits };
            (
                Expr::Cast {
                    expr: Box::new(e),
                    target,
                },
                crate::ddl_types::cast_type(target),
            )
        }
        _ => (temporal_as_text(e, ty), ty),
    }
}

/// A DATETIME(fsp) or TIME(fsp) operand read as a string, as the text of its type:
/// `fsp` fraction digits, which its values do not carry (a TIME(3) of '01:02:03.5'
/// reads '01:02:03.500'; without this, six digits). Other operands unchanged.
pub(crate) fn temporal_as_text(e: Expr, ty: SqlType) -> Expr {
    match ty {
        SqlType::DateTime { fsp, .. } | SqlType::Time { fsp } if fsp > 0 => Expr::Cast {
            expr: Box::new(e),
            target: CastTarget::Text { fsp },
        },
        _ => e,
    }
}

/// A TIME(fsp) operand of arithmetic as the DECIMAL with `fsp` fraction digits it is
/// there (`TIME(3)` `'10:10:10.5'` + 0 is `101010.500`); other operands unchanged.
fn time_as_number(e: Expr, ty: SqlType) -> Expr {
    match ty {
        SqlType::Time { fsp } if fsp > 0 => Expr::Cast {
            expr: Box::new(e),
            target: crate::scalar::cast::CastTarget::Decimal {
                precision: 7 + fsp,
                scale: fsp,
            },
        },
        _ => e,
    }
}

/// The type of a literal value.
pub fn value_type(v: &Value) -> SqlType {
    match v {
        Value::Null => SqlType::Null,
        Value::Int(_) => SqlType::BIGINT,
        Value::UInt(_) => SqlType::UInt { bits: 64 },
        Value::Decimal(d) => SqlType::Decimal {
            precision: (d.digit_count().max(d.scale() as usize + 1)).min(65) as u8,
            scale: d.scale(),
        },
        Value::Float(_) => SqlType::Float,
        Value::Double(_) => SqlType::Double,
        Value::Date(_) => SqlType::Date,
        Value::DateTime(_) => SqlType::DateTime {
            fsp: 6,
            timestamp: false,
        },
        Value::Bytes(b) => SqlType::varchar(String::from_utf8_lossy(b).chars().count() as u32),
        Value::Time(t) => SqlType::Time {
            fsp: if t.fraction_micros() == 0 { 0 } else { 6 },
        },
    }
}

fn literal(v: &ast::Value) -> Result<(Expr, SqlType)> {
    let value = match v {
        ast::Value::Number(text, _) => parse_number(text)?,
        ast::Value::SingleQuotedString(s) | ast::Value::DoubleQuotedString(s) => {
            Value::Bytes(s.clone().into_bytes())
        }
        ast::Value::HexStringLiteral(h) => {
            let bytes = decode_hex(h).ok_or_else(|| {
                Error::sql(1064, "42000", format!("Invalid hexadecimal literal X'{h}'"))
            })?;
            return Ok((Expr::Literal(Value::Bytes(bytes)), SqlType::BLOB));
        }
        ast::Value::SingleQuotedByteStringLiteral(s)
        | ast::Value::DoubleQuotedByteStringLiteral(s) => {
            // b'0101': a bit string.
            let mut n: u64 = 0;
            for c in s.chars() {
                let bit = c.to_digit(2).ok_or_else(|| {
                    Error::sql(1064, "42000", format!("Invalid binary literal b'{s}'"))
                })?;
                n = n
                    .checked_mul(2)
                    .and_then(|n| n.checked_add(bit as u64))
                    .ok_or_else(|| {
                        Error::sql(1064, "42000", format!("Binary literal b'{s}' is too long"))
                    })?;
            }
            Value::UInt(n)
        }
        ast::Value::Boolean(b) => Value::Int(*b as i64),
        ast::Value::Null => Value::Null,
        ast::Value::Placeholder(p) => {
            let index = placeholder_index(p)?;
            let ty = PARAM_TYPES.with(|t| t.borrow().get(index).copied());
            return Ok((Expr::Param(index), ty.unwrap_or(SqlType::TEXT)));
        }
        other => return Err(unsupported(format!("literal {other}"))),
    };
    let ty = value_type(&value);
    Ok((Expr::Literal(value), ty))
}

/// The 0-based index of the parser's numbered placeholder `?N`.
fn placeholder_index(p: &str) -> Result<usize> {
    let digits: String = p.chars().filter(|c| c.is_ascii_digit()).collect();
    let n: usize = digits
        .parse()
        .map_err(|_| Error::sql(1064, "42000", format!("Unexpected placeholder '{p}'")))?;
    Ok(n.saturating_sub(1))
}

thread_local! {
    /// The types of a prepared statement's parameters while it is bound for an
    /// execution ([`with_param_types`]); empty otherwise (parameters are text).
    static PARAM_TYPES: std::cell::RefCell<Vec<SqlType>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Runs `bind` with `?N` typed as `types[N - 1]`, as MySQL re-prepares a
/// statement whose parameters' types changed: `? + ?` with integers is then an
/// integer, not a DOUBLE.
pub(crate) fn with_param_types<T>(types: &[SqlType], bind: impl FnOnce() -> T) -> T {
    let previous = PARAM_TYPES.with(|t| t.replace(types.to_vec()));
    let out = bind();
    PARAM_TYPES.with(|t| *t.borrow_mut() = previous);
    out
}

/// The type a parameter value binds as.
pub(crate) fn param_type(value: &Value) -> SqlType {
    match value {
        Value::Null => SqlType::TEXT,
        other => value_type(other),
    }
}

fn decode_hex(h: &str) -> Option<Vec<u8>> {
    let h = if h.len() % 2 == 1 {
        format!("0{h}")
    } else {
        h.to_string()
    };
    (0..h.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(h.get(i..i + 2)?, 16).ok())
        .collect()
}

/// A numeric literal: an integer if it has no point or exponent (UInt past i64, a
/// DECIMAL past u64), a DECIMAL with a point, a DOUBLE with an exponent.
pub fn parse_number(text: &str) -> Result<Value> {
    let bad = || Error::sql(1064, "42000", format!("Invalid number '{text}'"));
    if let Some(hex) = text.strip_prefix("0x").or(text.strip_prefix("0X")) {
        return decode_hex(hex).map(Value::Bytes).ok_or_else(bad);
    }
    if text.contains(['e', 'E']) {
        return text.parse::<f64>().map(Value::Double).map_err(|_| bad());
    }
    if text.contains('.') {
        return Decimal::parse(text).map(Value::Decimal).map_err(|_| bad());
    }
    if let Ok(v) = text.parse::<i64>() {
        return Ok(Value::Int(v));
    }
    if let Ok(v) = text.parse::<u64>() {
        return Ok(Value::UInt(v));
    }
    Decimal::parse(text).map(Value::Decimal).map_err(|_| bad())
}

/// The type CASE, IF, COALESCE and UNION give a mix of branch types.
pub fn unify(a: SqlType, b: SqlType) -> SqlType {
    use SqlType as T;
    // An ENUM, SET or BIT mixed with another type is a string or number of its own.
    let (a, b) = match (a, b) {
        (T::Null, _) | (_, T::Null) => (a, b),
        _ if a == b => (a, b),
        _ => (a.plain(), b.plain()),
    };
    if let Some(t) = crate::types::binary_string_union(a, b) {
        return t;
    }
    match (a, b) {
        (T::Null, x) | (x, T::Null) => x,
        (x, y) if x == y => x,
        (T::Year, _) | (_, T::Year) => unify(a.numeric_form(), b.numeric_form()),
        (T::Time { fsp: a }, T::Time { fsp: b }) => T::Time { fsp: a.max(b) },
        // A TIME with a date is put on the current date: a DATETIME.
        (T::Time { fsp: a }, T::DateTime { fsp: b, .. })
        | (T::DateTime { fsp: b, .. }, T::Time { fsp: a }) => T::DateTime {
            fsp: a.max(b),
            timestamp: false,
        },
        (T::Time { fsp }, T::Date) | (T::Date, T::Time { fsp }) => T::DateTime {
            fsp,
            timestamp: false,
        },
        (T::Int { bits: a }, T::Int { bits: b }) => T::Int { bits: a.max(b) },
        (T::UInt { bits: a }, T::UInt { bits: b }) => T::UInt { bits: a.max(b) },
        (T::Int { .. }, T::UInt { .. }) | (T::UInt { .. }, T::Int { .. }) => T::Decimal {
            precision: 20,
            scale: 0,
        },
        (
            T::Decimal {
                precision: p1,
                scale: s1,
            },
            T::Decimal {
                precision: p2,
                scale: s2,
            },
        ) => {
            let scale = s1.max(s2);
            let int_digits = (p1 - s1).max(p2 - s2);
            T::Decimal {
                precision: (int_digits + scale).min(65),
                scale,
            }
        }
        (T::Decimal { precision, scale }, x) | (x, T::Decimal { precision, scale })
            if x.is_integer() =>
        {
            T::Decimal {
                precision: (precision.max(20 + scale)).min(65),
                scale,
            }
        }
        (x, y) if x.is_numeric() && y.is_numeric() => T::Double,
        (T::Date, T::DateTime { fsp, timestamp }) | (T::DateTime { fsp, timestamp }, T::Date) => {
            T::DateTime { fsp, timestamp }
        }
        (T::DateTime { fsp: a, .. }, T::DateTime { fsp: b, .. }) => T::DateTime {
            fsp: a.max(b),
            timestamp: false,
        },
        (
            T::Text {
                len_chars: a,
                collation: ca,
                ..
            },
            T::Text {
                len_chars: b,
                collation: cb,
                ..
            },
        ) => T::Text {
            len_chars: a.zip(b).map(|(a, b)| a.max(b)),
            collation: if ca == Collation::Binary || cb == Collation::Binary {
                Collation::Binary
            } else {
                Collation::CaseInsensitive
            },
            fixed: false,
        },
        // A string with a number or date, or a date with a number: a VARCHAR as long
        // as the longer of the two as text.
        _ => T::Text {
            len_chars: a
                .text_len_chars()
                .zip(b.text_len_chars())
                .map(|(x, y)| x.max(y)),
            collation: match (a, b) {
                (T::Text { collation, .. }, _) | (_, T::Text { collation, .. }) => collation,
                _ => Collation::CaseInsensitive,
            },
            fixed: false,
        },
    }
}

/// How two operands compare as strings: binary if either is binary (JSON text is
/// utf8mb4_bin).
pub fn collation_of(a: SqlType, b: SqlType) -> Collation {
    let binary = |t: SqlType| {
        t.is_binary_string()
            || t == SqlType::Json
            || t.collation() == Collation::Binary && t.is_string()
    };
    if binary(a) || binary(b) {
        Collation::Binary
    } else {
        let _ = compare::comparison_type;
        Collation::CaseInsensitive
    }
}

/// The unit keyword of `TIMESTAMPDIFF(unit, a, b)` and `TIMESTAMPADD(unit, n, a)`:
/// MySQL's grammar takes it as a word, not an expression, and only a simple unit.
fn timestamp_unit(e: &ast::Expr) -> Result<IntervalUnit> {
    let written = e.to_string();
    let unit = match e {
        ast::Expr::Identifier(id) if id.quote_style.is_none() => {
            date::parse_unit(&id.value.to_ascii_uppercase())
        }
        _ => None,
    };
    match unit {
        Some(
            u @ (IntervalUnit::Microsecond
            | IntervalUnit::Second
            | IntervalUnit::Minute
            | IntervalUnit::Hour
            | IntervalUnit::Day
            | IntervalUnit::Week
            | IntervalUnit::Month
            | IntervalUnit::Quarter
            | IntervalUnit::Year),
        ) => Ok(u),
        _ => Err(Error::sql(
            1064,
            "42000",
            format!(
                "You have an error in your SQL syntax; check the manual that corresponds to your MySQL server version for the right syntax to use near '{written}'"
            ),
        )),
    }
}

/// `COLLATION(x)`, `CHARSET(x)` and `COERCIBILITY(x)`, which depend only on the
/// argument's type and form: a literal of the answer. Coercibility is 0 for an
/// explicit `COLLATE`, 2 for a string read from a column (or computed from one), 4
/// for a constant string, 5 for a number or date and 6 for NULL (MySQL's 3 for
/// `USER()` and its kin is 4 here: the session functions are constants by then).
fn describe_collation(name: &str, arg: &ast::Expr, x: &Expr, ty: SqlType) -> (Expr, SqlType) {
    let text = |s: &str| {
        (
            Expr::Literal(Value::Bytes(s.as_bytes().to_vec())),
            SqlType::varchar(64),
        )
    };
    match (name, ty) {
        ("COLLATION", SqlType::Text { collation, .. }) => text(match collation {
            Collation::CaseInsensitive => crate::sysviews::TABLE_COLLATION,
            Collation::Binary => "utf8mb4_bin",
        }),
        // JSON text is utf8mb4_bin.
        ("COLLATION", SqlType::Json) => text("utf8mb4_bin"),
        ("COLLATION" | "CHARSET", _) if !matches!(ty, SqlType::Text { .. } | SqlType::Json) => {
            text("binary")
        }
        ("CHARSET", _) => text("utf8mb4"),
        _ => {
            let coercibility = match ty {
                _ if matches!(arg, ast::Expr::Collate { .. }) => 0,
                SqlType::Null => 6,
                t if t.is_string() && x.is_constant() => 4,
                t if t.is_string() || t == SqlType::Json => 2,
                _ => 5,
            };
            (Expr::Literal(Value::Int(coercibility)), SqlType::BIGINT)
        }
    }
}

/// The type of `td + INTERVAL n unit` (DATE_ADD, TIMESTAMPADD): a DATE or DATETIME
/// as [`date::add_interval_type`] says (six fraction digits with a microsecond
/// unit), a string otherwise.
fn date_add_type(td: SqlType, unit: IntervalUnit) -> SqlType {
    match td {
        SqlType::Date | SqlType::DateTime { .. } | SqlType::Time { .. } => {
            date::add_interval_type(td, unit)
        }
        _ => SqlType::varchar(29),
    }
}

fn date_unit(field: &ast::DateTimeField) -> Result<IntervalUnit> {
    use ast::DateTimeField as F;
    let name = match field {
        F::Year | F::Years => "YEAR",
        F::Month | F::Months => "MONTH",
        F::Week(_) | F::Weeks => "WEEK",
        F::Day | F::Days => "DAY",
        F::Hour | F::Hours => "HOUR",
        F::Minute | F::Minutes => "MINUTE",
        F::Second | F::Seconds => "SECOND",
        F::Microsecond | F::Microseconds => "MICROSECOND",
        F::Quarter => "QUARTER",
        other => {
            let text = other.to_string().to_ascii_uppercase();
            return date::parse_unit(&text)
                .ok_or_else(|| unsupported(format!("interval unit {text}")));
        }
    };
    date::parse_unit(name).ok_or_else(|| unsupported(format!("interval unit {name}")))
}

/// `FROM DUAL`: MySQL's name for no table (DUAL is reserved, so no table has it).
fn is_dual(item: &ast::TableWithJoins) -> bool {
    item.joins.is_empty()
        && matches!(&item.relation, ast::TableFactor::Table { name, alias: None, args: None, .. }
            if name.0.len() == 1
                && name.0[0].as_ident().is_some_and(|i| i.value.eq_ignore_ascii_case("dual")))
}
