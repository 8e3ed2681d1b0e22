//! Subqueries in expressions: scalar, IN and EXISTS, correlated or not.
//!
//! An uncorrelated subquery runs once per statement execution; its result (a value,
//! a flag, or a hash set of values) is cached in the execution context. A correlated
//! one runs once per distinct combination of the outer columns it reads: results are
//! memoised by those values (up to `CORRELATED_CACHE_ENTRIES_MAX`), so a subquery
//! correlated on a column with few distinct values runs few times.

use std::collections::HashSet;

use tarn_common::Result;
use tarn_row::Value;
use tarn_row::types::Collation;

use crate::chunk::Chunk;
use crate::expr::{EvalContext, Expr};
use crate::plan::{Access, AggCall, Plan};

/// What a subquery computes.
#[derive(Debug)]
pub enum SubqueryKind {
    /// One value (NULL for no rows; two rows are error 1242).
    Scalar,
    Exists {
        negated: bool,
    },
    /// `operand op ALL (subquery)` / `operand op ANY | SOME (subquery)`.
    Quantified {
        op: crate::expr::CmpOp,
        all: bool,
        collation: Collation,
    },
    /// `operand [NOT] IN (subquery)` (the operand is the expression's).
    In {
        negated: bool,
        collation: Collation,
    },
}

/// A bound subquery.
#[derive(Debug)]
pub struct SubqueryExpr {
    pub kind: SubqueryKind,
    pub plan: Plan,
    pub correlated: bool,
    /// For a scalar aggregate correlated by one equality on a column with no index
    /// (`SELECT avg(x) FROM t WHERE t.k = outer.c`): the same query grouped by `t.k`,
    /// run once, whose rows (key, value) answer every outer row; and the outer
    /// column. Without it each distinct outer value would scan `t` again (TPC-H Q17).
    pub grouped: Option<(Plan, Vec<usize>)>,
    /// The enclosing row's columns the plan reads (`Expr::Outer`), sorted.
    pub outer_columns: Vec<usize>,
}

impl SubqueryExpr {
    pub fn new(kind: SubqueryKind, plan: Plan, correlated: bool) -> SubqueryExpr {
        let mut outer_columns = Vec::new();
        if correlated {
            collect_outer(&plan, &mut outer_columns);
            outer_columns.sort_unstable();
            outer_columns.dedup();
        }
        let grouped = match (&kind, correlated) {
            (SubqueryKind::Scalar, true) => grouped_form(&plan),
            _ => None,
        };
        SubqueryExpr {
            kind,
            plan,
            correlated,
            grouped,
            outer_columns,
        }
    }
}

/// The grouped form of `Project(Aggregate(no groups)(Scan with filter
/// ... AND t.k1 = Outer(c1) AND t.k2 = Outer(c2) ...))` when the scan found no index to
/// look up by and outer columns appear only in those equalities:
/// `Project(k1, k2, ..., value)(Aggregate(group by k1, k2, ...)(Scan))`.
fn grouped_form(plan: &Plan) -> Option<(Plan, Vec<usize>)> {
    let Plan::Project {
        input,
        exprs,
        columns,
    } = plan
    else {
        return None;
    };
    let Plan::Aggregate {
        input: scan,
        group,
        aggs,
        rollup: false,
        columns: agg_columns,
    } = &**input
    else {
        return None;
    };
    if !group.is_empty() || aggs.iter().any(|a| a.exprs().any(Expr::is_correlated)) {
        return None;
    }
    if exprs.iter().any(Expr::is_correlated) {
        return None;
    }
    let Plan::Scan {
        table,
        alias,
        access,
        filter: Some(filter),
        lock,
        wait,
        columns: scan_columns,
        ..
    } = &**scan
    else {
        return None;
    };
    // A lookup by the correlated key (an index on it) is cheaper per outer row.
    let mut keyed = Vec::new();
    collect_outer(
        &Plan::Scan {
            table: table.clone(),
            alias: alias.clone(),
            access: access.clone(),
            filter: None,
            lock: *lock,
            wait: *wait,
            estimated_rows: 0.0,
            columns: Vec::new(),
        },
        &mut keyed,
    );
    if !keyed.is_empty() {
        return None;
    }
    let mut conjuncts = Vec::new();
    crate::planner::split_conjuncts(filter.clone(), &mut conjuncts);
    let mut keys: Vec<(usize, usize)> = Vec::new();
    let mut rest = Vec::new();
    for c in conjuncts {
        if let Expr::Compare {
            op: crate::expr::CmpOp::Eq,
            left,
            right,
            collation,
            key_form,
        } = &c
        {
            if let (Expr::Column(x), Expr::Outer(o)) | (Expr::Outer(o), Expr::Column(x)) =
                (&**left, &**right)
            {
                // The run groups by the column's collation: it answers the `=` only
                // when that is the collation the `=` compares under. Its groups are
                // found by the outer value's own key, so the two sides must key
                // alike (no key form).
                let ty = scan_columns[*x].ty;
                if (ty.is_string() && ty.collation() != *collation) || key_form.is_some() {
                    return None;
                }
                keys.push((*x, *o));
                continue;
            }
        }
        if c.is_correlated() {
            return None;
        }
        rest.push(c);
    }
    if keys.is_empty() || exprs.len() != 1 {
        return None;
    }
    let scan =
        crate::planner::scan_plan(table, alias, scan_columns, &[], *lock, *wait, &rest).ok()?;
    let width = keys.len();
    let mut group_columns: Vec<_> = keys.iter().map(|(x, _)| scan_columns[*x].clone()).collect();
    group_columns.extend(agg_columns.iter().cloned());
    let aggregate = Plan::Aggregate {
        input: Box::new(scan),
        group: keys.iter().map(|(x, _)| Expr::Column(*x)).collect(),
        aggs: aggs.clone(),
        rollup: false,
        columns: group_columns.clone(),
    };
    let mut project_exprs: Vec<Expr> = (0..width).map(Expr::Column).collect();
    for e in exprs {
        let mut e = e.clone();
        e.remap_columns(&|c| c + width);
        project_exprs.push(e);
    }
    let mut project_columns: Vec<_> = group_columns[..width].to_vec();
    project_columns.extend(columns.iter().cloned());
    Some((
        Plan::Project {
            input: Box::new(aggregate),
            exprs: project_exprs,
            columns: project_columns,
        },
        keys.iter().map(|(_, o)| *o).collect(),
    ))
}

/// The result of running a subquery once.
#[derive(Clone, Debug)]
pub enum SubqueryResult {
    Scalar(Value),
    Exists(bool),
    /// The values' group keys, and whether a NULL was among them.
    Set {
        keys: std::sync::Arc<HashSet<Vec<u8>>>,
        has_null: bool,
        empty: bool,
    },
    /// Every value (quantified comparisons).
    Values(std::sync::Arc<Vec<Value>>),
    /// A grouped subquery's values by key ([`SubqueryExpr::grouped`]).
    Map(std::sync::Arc<std::collections::HashMap<Vec<u8>, Value>>),
}

/// Runs subqueries for expression evaluation (the executor implements it).
pub trait SubqueryRunner {
    /// The subquery's value for each row of `chunk` (the enclosing rows).
    /// `probes`: the IN operand's values, one per row.
    fn eval(
        &self,
        subquery: &SubqueryExpr,
        probes: Option<&[Value]>,
        chunk: &Chunk,
        cx: &EvalContext,
    ) -> Result<Vec<Value>>;
}

/// Applies a subquery's result to one enclosing row (`probe`: the IN operand's value).
pub fn apply(kind: &SubqueryKind, result: &SubqueryResult, probe: Option<&Value>) -> Value {
    match (kind, result) {
        (SubqueryKind::Scalar, SubqueryResult::Scalar(v)) => v.clone(),
        (SubqueryKind::Exists { negated }, SubqueryResult::Exists(found)) => {
            Value::Int((*found != *negated) as i64)
        }
        (
            SubqueryKind::In {
                negated, collation, ..
            },
            SubqueryResult::Set {
                keys,
                has_null,
                empty,
            },
        ) => {
            if *empty {
                return Value::Int(*negated as i64);
            }
            let probe = probe.cloned().unwrap_or(Value::Null);
            if probe.is_null() {
                return Value::Null;
            }
            let mut key = Vec::new();
            crate::exec::join_key(&probe, *collation, &mut key);
            if keys.contains(&key) {
                Value::Int(!*negated as i64)
            } else if *has_null {
                Value::Null
            } else {
                Value::Int(*negated as i64)
            }
        }
        (SubqueryKind::Quantified { op, all, collation }, SubqueryResult::Values(values)) => {
            let probe = probe.cloned().unwrap_or(Value::Null);
            // ALL: false if any comparison is false, else NULL if any is unknown, else
            // true (also for no rows). ANY: the mirror image.
            let mut unknown = false;
            for v in values.iter() {
                match crate::expr::compare_values(*op, &probe, v, *collation) {
                    Value::Null => unknown = true,
                    Value::Int(0) if *all => return Value::Int(0),
                    Value::Int(0) => {}
                    _ if *all => {}
                    _ => return Value::Int(1),
                }
            }
            if unknown {
                Value::Null
            } else {
                Value::Int(*all as i64)
            }
        }
        _ => Value::Null,
    }
}

/// Every `Expr::Outer` column a plan reads, outside nested subqueries' own plans.
pub fn collect_outer(plan: &Plan, out: &mut Vec<usize>) {
    let mut visit = |e: &Expr| {
        e.visit(&mut |x| match x {
            Expr::Outer(c) => out.push(*c),
            Expr::Subquery { subquery, .. } => out.extend(subquery.outer_columns.iter().copied()),
            _ => {}
        })
    };
    match plan {
        Plan::Scan { access, filter, .. } => {
            if let Some(f) = filter {
                visit(f);
            }
            match access {
                Access::Full => {}
                Access::PrimaryKey(values) => values.iter().for_each(&mut visit),
                Access::PrimaryKeyList(keys) => keys.iter().flatten().for_each(&mut visit),
                Access::PrimaryRange { lower, upper } | Access::IndexRange { lower, upper, .. } => {
                    for b in [lower, upper] {
                        if let std::ops::Bound::Included(v) | std::ops::Bound::Excluded(v) = b {
                            v.iter().for_each(&mut visit);
                        }
                    }
                }
            }
        }
        Plan::Values { rows, .. } => rows.iter().flatten().for_each(visit),
        Plan::Rows { .. } | Plan::WorkTable { .. } => {}
        Plan::Filter { input, predicate } => {
            visit(predicate);
            collect_outer(input, out);
        }
        Plan::Project { input, exprs, .. } => {
            exprs.iter().for_each(visit);
            collect_outer(input, out);
        }
        Plan::Join {
            left,
            right,
            keys,
            filter,
            ..
        } => {
            for (a, b, _) in keys {
                visit(a);
                visit(b);
            }
            if let Some(f) = filter {
                visit(f);
            }
            collect_outer(left, out);
            collect_outer(right, out);
        }
        Plan::IndexJoin { outer, filter, .. } => {
            // The inner side's Outer references are the join's own outer rows.
            if let Some(f) = filter {
                visit(f);
            }
            collect_outer(outer, out);
        }
        Plan::Aggregate {
            input, group, aggs, ..
        } => {
            group.iter().for_each(&mut visit);
            aggs.iter().flat_map(AggCall::exprs).for_each(visit);
            collect_outer(input, out);
        }
        Plan::Sort { input, keys } => {
            keys.iter().for_each(|k| visit(&k.expr));
            collect_outer(input, out);
        }
        Plan::Window {
            input, spec, calls, ..
        } => {
            spec.exprs().for_each(&mut visit);
            calls.iter().flat_map(|c| c.func.exprs()).for_each(visit);
            collect_outer(input, out);
        }
        Plan::Limit { input, .. } | Plan::Distinct { input } => collect_outer(input, out),
        Plan::Union { inputs, .. } => inputs.iter().for_each(|p| collect_outer(p, out)),
        Plan::RecursiveCte {
            anchor, recursive, ..
        } => {
            collect_outer(anchor, out);
            collect_outer(recursive, out);
        }
    }
}
