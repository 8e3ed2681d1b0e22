//! Query plans: what the binder and planner produce and the executor runs.
//!
//! A [`Plan`] is a tree of operators. Every node knows its output columns
//! ([`Plan::columns`]); expressions in a node refer to its input's columns by position.
//! Joins output the left input's columns followed by the right's.
//!
//! Access paths ([`Access`]) are chosen by the planner ([`crate::planner`]) per base
//! table from the conjuncts pushed down to it: a primary-key point lookup, a
//! primary-key range, a secondary-index range (with S2's sorted prefetch for long
//! ranges), or a full parallel scan (S1).
//!
//! A recursive common table expression is a [`Plan::RecursiveCte`]: its anchor runs
//! once, then its recursive part runs again and again, each time reading the rows
//! the previous run produced through the [`Plan::WorkTable`] leaves that carry the
//! node's `work_table` id (see `exec::cte`). A non-recursive CTE has no node of its
//! own: each reference is bound to the CTE's query, as a derived table is.
//!
//! A LIMIT's or OFFSET's row count is a [`RowCount`]: a literal, or a prepared
//! statement's `?` parameter, read from the execution's parameters when the operator
//! starts. A bound statement is kept and run again with new parameters (see
//! `Session::prepare`), so a parameter's value must never be folded into the plan.

use std::ops::Bound;
use std::sync::Arc;

use tarn_catalog::{RowLock, Table, WaitPolicy};
use tarn_common::{Error, Result};
use tarn_row::Value;
use tarn_row::types::Collation;

use crate::expr::Expr;
use crate::scalar::agg::AggFunc;
use crate::types::SqlType;
use crate::window::{WindowCall, WindowSpec};

/// The row count of a LIMIT or an OFFSET.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RowCount {
    Literal(u64),
    /// Prepared-statement parameter `n` (0-based), read at each execution.
    Param(usize),
}

impl RowCount {
    /// The count for an execution with `params`. A parameter's value was checked
    /// by `Session::run_prepared` ([`row_count_of`]); one that fails here (a
    /// statement run outside a prepared statement's checks) is error 1210 too.
    pub fn resolve(self, params: &[Value]) -> Result<u64> {
        match self {
            RowCount::Literal(n) => Ok(n),
            RowCount::Param(i) => params
                .get(i)
                .and_then(row_count_of)
                .ok_or_else(|| Error::sql(1210, "HY000", "Incorrect arguments to EXECUTE")),
        }
    }

    /// The count, when the plan fixes it (estimates, EXPLAIN).
    pub fn literal(self) -> Option<u64> {
        match self {
            RowCount::Literal(n) => Some(n),
            RowCount::Param(_) => None,
        }
    }
}

impl std::fmt::Display for RowCount {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RowCount::Literal(n) => write!(f, "{n}"),
            RowCount::Param(i) => write!(f, "?{}", i + 1),
        }
    }
}

/// The row count a parameter's value gives a LIMIT or OFFSET, as MySQL 8 accepts
/// it: an integer that is not negative, or a string that is one (clients that send
/// numbers as text); None for anything else (NULL, a negative number, a DOUBLE or
/// DECIMAL, a string that is not an integer), which MySQL refuses with 1210.
pub fn row_count_of(value: &Value) -> Option<u64> {
    match value {
        Value::Int(n) => u64::try_from(*n).ok(),
        Value::UInt(n) => Some(*n),
        Value::Bytes(b) => {
            let text = std::str::from_utf8(b).ok()?.trim();
            let digits = text.strip_prefix('+').unwrap_or(text);
            if digits.is_empty() || !digits.bytes().all(|c| c.is_ascii_digit()) {
                return None;
            }
            digits.parse().ok()
        }
        _ => None,
    }
}

/// One output column of a plan node.
#[derive(Clone, Debug)]
pub struct OutputColumn {
    /// The name a client sees (the alias, the column name, or the expression's text).
    pub name: String,
    /// The table alias the column belongs to (for `t.col` references), if any.
    pub table: Option<String>,
    /// The stored table and column it comes from unchanged, if any (for result
    /// metadata: org_table, org_name).
    pub origin: Option<(String, String, String)>,
    pub ty: SqlType,
    pub nullable: bool,
    /// A stored `tinyint(1)` column passed through unchanged (a column reference,
    /// also through a derived table; `TableDef::column_tinyint1`): as in MySQL, its
    /// column definition has length 1, not 4, and CREATE TABLE ... SELECT keeps it
    /// `tinyint(1)`.
    pub tinyint1: bool,
}

impl OutputColumn {
    pub fn new(name: impl Into<String>, ty: SqlType, nullable: bool) -> OutputColumn {
        OutputColumn {
            name: name.into(),
            table: None,
            origin: None,
            ty,
            nullable,
            tinyint1: false,
        }
    }
}

/// How a base table is read.
#[derive(Clone, Debug)]
pub enum Access {
    /// Every row, by a parallel scan of the clustered index (S1).
    Full,
    /// One row by its full primary key (values evaluated when the scan opens; they may
    /// be parameters or correlated references).
    PrimaryKey(Vec<Expr>),
    /// Several rows by full primary keys (`pk IN (...)`, or equalities on a prefix and
    /// IN on the last column), read in key order.
    PrimaryKeyList(Vec<Vec<Expr>>),
    /// A range of the clustered index on a prefix of the primary key.
    PrimaryRange {
        lower: Bound<Vec<Expr>>,
        upper: Bound<Vec<Expr>>,
    },
    /// A range of a secondary index on a prefix of its columns; `prefetch`: read the
    /// rows through S2's sorted asynchronous prefetch (long ranges).
    IndexRange {
        index: String,
        lower: Bound<Vec<Expr>>,
        upper: Bound<Vec<Expr>>,
        prefetch: bool,
    },
}

impl Access {
    pub fn describe(&self) -> String {
        match self {
            Access::Full => "full scan (parallel)".into(),
            Access::PrimaryKey(_) => "PRIMARY point lookup".into(),
            Access::PrimaryKeyList(keys) => format!("PRIMARY lookups of {} keys", keys.len()),
            Access::PrimaryRange { .. } => "PRIMARY range".into(),
            Access::IndexRange {
                index, prefetch, ..
            } => format!(
                "index range on {index}{}",
                if *prefetch { " (prefetch)" } else { "" }
            ),
        }
    }
}

/// How a join combines its sides.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JoinKind {
    Inner,
    /// LEFT [OUTER] JOIN: unmatched left rows with NULLs on the right.
    Left,
    /// Left rows with at least one match (IN / EXISTS); outputs left columns only.
    Semi,
    /// Left rows with no match (NOT EXISTS); outputs left columns only.
    Anti,
}

/// An aggregate in an [`Plan::Aggregate`] node.
#[derive(Clone, Debug)]
pub struct AggCall {
    pub func: AggFunc,
    /// None for COUNT(*).
    pub arg: Option<Expr>,
    pub distinct: bool,
    pub arg_type: SqlType,
    /// GROUP_CONCAT only: the further arguments (concatenated after `arg`), the
    /// ORDER BY keys with their types, and the separator.
    pub concat: Option<Box<ConcatSpec>>,
}

/// The extra parts of `GROUP_CONCAT([DISTINCT] a, b, ... ORDER BY ... SEPARATOR s)`.
#[derive(Clone, Debug)]
pub struct ConcatSpec {
    /// With their types (DISTINCT compares them under their collations).
    pub more_args: Vec<(Expr, SqlType)>,
    pub order: Vec<(SortKey, SqlType)>,
    pub separator: Vec<u8>,
}

impl AggCall {
    /// Every expression the aggregate evaluates over its input rows.
    pub fn exprs(&self) -> impl Iterator<Item = &Expr> {
        let (more, order) = match &self.concat {
            Some(c) => (&c.more_args[..], &c.order[..]),
            None => (&[][..], &[][..]),
        };
        self.arg
            .iter()
            .chain(more.iter().map(|(e, _)| e))
            .chain(order.iter().map(|(k, _)| &k.expr))
    }

    /// [`AggCall::exprs`], to rewrite (a pipeline moving their columns).
    pub fn exprs_mut(&mut self) -> impl Iterator<Item = &mut Expr> {
        let (more, order) = match &mut self.concat {
            Some(c) => (&mut c.more_args[..], &mut c.order[..]),
            None => (&mut [][..], &mut [][..]),
        };
        self.arg
            .iter_mut()
            .chain(more.iter_mut().map(|(e, _)| e))
            .chain(order.iter_mut().map(|(k, _)| &mut k.expr))
    }
}

/// One ORDER BY key.
#[derive(Clone, Debug)]
pub struct SortKey {
    pub expr: Expr,
    pub descending: bool,
    /// How the key's strings compare: its type's collation (bytes for a `_bin` or
    /// binary string).
    pub collation: Collation,
}

/// A query plan node.
#[derive(Clone, Debug)]
pub enum Plan {
    /// A base table: rows by `access`, then `filter` (over the table's columns).
    Scan {
        table: Arc<Table>,
        alias: String,
        access: Access,
        filter: Option<Expr>,
        lock: RowLock,
        wait: WaitPolicy,
        /// The number of rows the planner expects (after the filter).
        estimated_rows: f64,
        columns: Vec<OutputColumn>,
    },
    /// Constant rows (SELECT without FROM; VALUES). `width` columns.
    Values {
        rows: Vec<Vec<Expr>>,
        columns: Vec<OutputColumn>,
    },
    /// Rows computed once (a derived table, a view, information_schema).
    Rows {
        rows: Arc<Vec<Vec<tarn_row::Value>>>,
        columns: Vec<OutputColumn>,
    },
    Filter {
        input: Box<Plan>,
        predicate: Expr,
    },
    Project {
        input: Box<Plan>,
        exprs: Vec<Expr>,
        columns: Vec<OutputColumn>,
    },
    /// A hash join on `keys` (left expression, right expression, and the collation
    /// their `=` compares strings under) with `filter` over the joined row; without
    /// keys, a nested-loop join.
    Join {
        left: Box<Plan>,
        right: Box<Plan>,
        kind: JoinKind,
        keys: Vec<(Expr, Expr, Collation)>,
        filter: Option<Expr>,
        columns: Vec<OutputColumn>,
    },
    /// For each row of `outer`, the rows of `inner` found by looking up `inner`'s
    /// access path with the outer row as the correlated row (`Expr::Outer`).
    IndexJoin {
        outer: Box<Plan>,
        inner: Box<Plan>,
        kind: JoinKind,
        /// Over the joined row (outer columns then inner columns).
        filter: Option<Expr>,
        columns: Vec<OutputColumn>,
    },
    /// Hash aggregation: one output row per group, the group keys followed by the
    /// aggregates. With `rollup` (`GROUP BY ... WITH ROLLUP`) the keys are followed by
    /// one BIGINT flag per key (1 where the key is rolled up, read by `GROUPING()`),
    /// then the aggregates; after each group's last row (groups sorted by the keys)
    /// come the super-aggregate rows of the prefixes it ends, with the rolled-up keys
    /// NULL, and the grand total last (see `exec::AggregateOp::run`).
    Aggregate {
        input: Box<Plan>,
        group: Vec<Expr>,
        aggs: Vec<AggCall>,
        rollup: bool,
        columns: Vec<OutputColumn>,
    },
    Sort {
        input: Box<Plan>,
        keys: Vec<SortKey>,
    },
    /// Window functions (`crate::window`): the input's columns followed by one per
    /// call, every call over the same window; rows leave sorted by its partition and
    /// order keys.
    Window {
        input: Box<Plan>,
        spec: Box<WindowSpec>,
        calls: Vec<WindowCall>,
        columns: Vec<OutputColumn>,
    },
    Limit {
        input: Box<Plan>,
        offset: RowCount,
        count: Option<RowCount>,
        /// SQL_CALC_FOUND_ROWS: the input is read to its end and counted for
        /// FOUND_ROWS().
        count_all: bool,
    },
    Distinct {
        input: Box<Plan>,
    },
    Union {
        inputs: Vec<Plan>,
        all: bool,
        columns: Vec<OutputColumn>,
    },
    /// `WITH RECURSIVE name AS (anchor UNION [ALL | DISTINCT] recursive)`: the rows of
    /// `anchor`, then those of `recursive` run over the rows the previous run
    /// produced (read by the [`Plan::WorkTable`] leaves with this `work_table` id),
    /// until a run produces none. Every row is converted to `columns`' types (the
    /// anchor's, as MySQL's temporary table holds them).
    RecursiveCte {
        name: String,
        anchor: Box<Plan>,
        recursive: Box<Plan>,
        work_table: u64,
        /// UNION DISTINCT: a row equal to one produced before is dropped (and not
        /// run over again), which ends the recursion on cyclic data.
        distinct: bool,
        /// The CTE's own LIMIT's offset and count: the recursion stops once their
        /// sum of rows is produced.
        row_limit: Option<(RowCount, RowCount)>,
        columns: Vec<OutputColumn>,
    },
    /// The rows the previous run of a [`Plan::RecursiveCte`]'s recursive part
    /// produced (its anchor's rows in the first run).
    WorkTable {
        name: String,
        id: u64,
        columns: Vec<OutputColumn>,
    },
}

impl Plan {
    pub fn columns(&self) -> &[OutputColumn] {
        match self {
            Plan::Scan { columns, .. }
            | Plan::Values { columns, .. }
            | Plan::Rows { columns, .. }
            | Plan::Project { columns, .. }
            | Plan::Join { columns, .. }
            | Plan::IndexJoin { columns, .. }
            | Plan::Aggregate { columns, .. }
            | Plan::Window { columns, .. }
            | Plan::Union { columns, .. }
            | Plan::RecursiveCte { columns, .. }
            | Plan::WorkTable { columns, .. } => columns,
            Plan::Filter { input, .. }
            | Plan::Sort { input, .. }
            | Plan::Limit { input, .. }
            | Plan::Distinct { input } => input.columns(),
        }
    }

    pub fn width(&self) -> usize {
        self.columns().len()
    }

    /// The planner's estimate of the rows this node outputs.
    pub fn estimated_rows(&self) -> f64 {
        match self {
            Plan::Scan { estimated_rows, .. } => *estimated_rows,
            Plan::Values { rows, .. } => rows.len() as f64,
            Plan::Rows { rows, .. } => rows.len() as f64,
            Plan::Filter { input, .. } => input.estimated_rows() * 0.5,
            Plan::Project { input, .. } | Plan::Sort { input, .. } | Plan::Window { input, .. } => {
                input.estimated_rows()
            }
            Plan::Distinct { input } => input.estimated_rows() * 0.5,
            Plan::Limit { input, count, .. } => {
                let rows = input.estimated_rows();
                // A parameter's count is not known before the execution.
                count
                    .and_then(RowCount::literal)
                    .map_or(rows, |c| rows.min(c as f64))
            }
            Plan::Join {
                left, right, kind, ..
            }
            | Plan::IndexJoin {
                outer: left,
                inner: right,
                kind,
                ..
            } => match kind {
                JoinKind::Semi | JoinKind::Anti => left.estimated_rows() * 0.5,
                _ => left.estimated_rows().max(right.estimated_rows()),
            },
            Plan::Aggregate { input, group, .. } => {
                if group.is_empty() {
                    1.0
                } else {
                    (input.estimated_rows() / 10.0).max(1.0)
                }
            }
            Plan::Union { inputs, .. } => inputs.iter().map(Plan::estimated_rows).sum(),
            // A guess: the depth of a recursion is not known before it runs.
            Plan::RecursiveCte {
                anchor,
                recursive,
                row_limit,
                ..
            } => {
                let rows = anchor.estimated_rows() + recursive.estimated_rows() * 10.0;
                row_limit
                    .and_then(|(offset, count)| {
                        Some(offset.literal()?.saturating_add(count.literal()?))
                    })
                    .map_or(rows, |l| rows.min(l as f64))
            }
            Plan::WorkTable { .. } => WORK_TABLE_ESTIMATED_ROWS,
        }
    }

    /// EXPLAIN's lines for this node and its inputs, indented by depth.
    pub fn explain(&self, depth: usize, out: &mut Vec<String>) {
        self.explain_with(depth, out, &crate::parallel::describe);
    }

    /// EXPLAIN's lines, each followed by `annotate(node)` (EXPLAIN ANALYZE's figures).
    pub fn explain_with(
        &self,
        depth: usize,
        out: &mut Vec<String>,
        annotate: &dyn Fn(&Plan) -> String,
    ) {
        let pad = "  ".repeat(depth);
        let line = match self {
            Plan::Scan {
                table,
                alias,
                access,
                filter,
                lock,
                estimated_rows,
                ..
            } => format!(
                "Scan {}.{} AS {alias}: {}{}{} (~{} rows)",
                table.database(),
                table.def().name,
                access.describe(),
                if filter.is_some() { ", filter" } else { "" },
                match lock {
                    RowLock::None => "",
                    RowLock::Shared => ", FOR SHARE",
                    RowLock::Exclusive => ", FOR UPDATE",
                },
                estimated_rows.round()
            ),
            Plan::Values { rows, .. } => format!("Values ({} rows)", rows.len()),
            Plan::Rows { rows, .. } => format!("Materialized ({} rows)", rows.len()),
            Plan::Filter { .. } => "Filter".into(),
            Plan::Project { exprs, .. } => format!("Project ({} columns)", exprs.len()),
            Plan::Join { kind, keys, .. } => {
                if keys.is_empty() {
                    format!("Nested loop join ({kind:?})")
                } else {
                    format!("Hash join ({kind:?}) on {} keys", keys.len())
                }
            }
            Plan::IndexJoin { kind, .. } => format!("Index nested loop join ({kind:?})"),
            Plan::Aggregate {
                group,
                aggs,
                rollup,
                ..
            } => format!(
                "Hash aggregate ({} group keys{}, {} aggregates)",
                group.len(),
                if *rollup { " with rollup" } else { "" },
                aggs.len()
            ),
            Plan::Sort { keys, .. } => format!("Sort ({} keys)", keys.len()),
            Plan::Window { spec, calls, .. } => spec.describe(calls.len()),
            Plan::Limit { offset, count, .. } => format!(
                "Limit {}{}",
                count.map_or("all".to_string(), |c| c.to_string()),
                if *offset != RowCount::Literal(0) {
                    format!(" offset {offset}")
                } else {
                    String::new()
                }
            ),
            Plan::Distinct { .. } => "Distinct".into(),
            Plan::Union { all, inputs, .. } => {
                format!(
                    "Union{} ({} inputs)",
                    if *all { " all" } else { "" },
                    inputs.len()
                )
            }
            Plan::RecursiveCte {
                name,
                distinct,
                row_limit,
                ..
            } => format!(
                "Recursive CTE {name} (UNION {}{}): the anchor, then the recursive part \
                 over the previous run's rows until it adds none",
                if *distinct { "DISTINCT" } else { "ALL" },
                row_limit.map_or(String::new(), |(offset, count)| match (offset, count) {
                    (RowCount::Literal(o), RowCount::Literal(c)) => {
                        format!(", stop after {} rows", c.saturating_add(o))
                    }
                    _ => format!(", stop after {offset} + {count} rows"),
                }),
            ),
            Plan::WorkTable { name, .. } => {
                format!("Work table of {name} (the previous run's rows)")
            }
        };
        out.push(format!("{pad}{line}{}", annotate(self)));
        for child in self.children() {
            child.explain_with(depth + 1, out, annotate);
        }
    }

    pub fn children(&self) -> Vec<&Plan> {
        match self {
            Plan::Scan { .. }
            | Plan::Values { .. }
            | Plan::Rows { .. }
            | Plan::WorkTable { .. } => vec![],
            Plan::Filter { input, .. }
            | Plan::Project { input, .. }
            | Plan::Aggregate { input, .. }
            | Plan::Sort { input, .. }
            | Plan::Window { input, .. }
            | Plan::Limit { input, .. }
            | Plan::Distinct { input } => vec![input],
            Plan::Join { left, right, .. } => vec![left, right],
            Plan::IndexJoin { outer, inner, .. } => vec![outer, inner],
            Plan::Union { inputs, .. } => inputs.iter().collect(),
            Plan::RecursiveCte {
                anchor, recursive, ..
            } => vec![anchor, recursive],
        }
    }
}

/// What the planner expects a recursive CTE's work table to hold: few rows, so a
/// recursive part joining it to a table with a key on the join columns looks the
/// rows up by that key (an index nested-loop join), as a walk down a tree wants.
const WORK_TABLE_ESTIMATED_ROWS: f64 = 10.0;
