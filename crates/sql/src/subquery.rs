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
use crate::plan::{Access, Plan};

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
        SubqueryExpr {
            kind,
            plan,
            correlated,
            outer_columns,
        }
    }
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
        Plan::Rows { .. } => {}
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
            for (a, b) in keys {
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
            aggs.iter().filter_map(|a| a.arg.as_ref()).for_each(visit);
            collect_outer(input, out);
        }
        Plan::Sort { input, keys } => {
            keys.iter().for_each(|k| visit(&k.expr));
            collect_outer(input, out);
        }
        Plan::Limit { input, .. } | Plan::Distinct { input } => collect_outer(input, out),
        Plan::Union { inputs, .. } => inputs.iter().for_each(|p| collect_outer(p, out)),
    }
}
