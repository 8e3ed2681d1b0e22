//! The executor: operators that pull chunks of column vectors from their inputs.
//!
//! [`open`] turns a [`Plan`] into a tree of [`Operator`]s; the root's
//! [`Operator::next`] yields [`Chunk`]s until `None`. Full scans read through the
//! storage layer's parallel scan (S1: workers walk disjoint leaf ranges and decode
//! rows straight into columnar batches); every operator above works a chunk at a
//! time, evaluating expressions over whole column vectors ([`Expr::eval`]).
//!
//! Bounds: operators that hold rows (hash join build sides, aggregation tables,
//! sorts, DISTINCT sets, materialised ranges, a recursive CTE's work tables) charge
//! their memory to the statement's [`MemoryBudget`]; past it the statement fails with
//! error 1038 and changes nothing. Charges last for the statement, except a recursive
//! CTE's for a work table it has replaced ([`MemoryBudget::release`]), so a long
//! recursion holds only its last runs.
//! Every operator checks the statement's [`Cancel`] (its kill flag and deadline)
//! between chunks (KILL QUERY, `max_execution_time`).

use std::cell::{Cell, RefCell};
use std::collections::{HashMap, HashSet};
use std::ops::Bound;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use tarn_btree::Direction;
use tarn_catalog::{ParallelScan, RowLock, Table, Transaction};
use tarn_common::{Error, Result};
use tarn_row::Value;
use tarn_row::types::Collation;

use crate::chunk::Chunk;
use crate::expr::{EvalContext, Expr};
use crate::limits::{CHUNK_ROWS, CORRELATED_CACHE_ENTRIES_MAX};
use crate::plan::{Access, AggCall, JoinKind, OutputColumn, Plan, RowCount, SortKey};
use crate::scalar::FnContext;
use crate::scalar::agg::{self, Accumulator};
use crate::scalar::{cast, compare};
use crate::subquery::{self, SubqueryExpr, SubqueryKind, SubqueryResult, SubqueryRunner};

pub mod cte;

/// The memory a statement may hold in operators.
pub struct MemoryBudget {
    used_bytes: AtomicU64,
    limit_bytes: u64,
}

impl MemoryBudget {
    pub fn new(limit_bytes: u64) -> MemoryBudget {
        MemoryBudget {
            used_bytes: AtomicU64::new(0),
            limit_bytes,
        }
    }

    /// Charges `bytes`; error 1038 past the limit.
    pub fn charge(&self, bytes: usize) -> Result<()> {
        let used = self.used_bytes.fetch_add(bytes as u64, Ordering::Relaxed) + bytes as u64;
        if used > self.limit_bytes {
            return Err(Error::sql(
                1038,
                "HY001",
                format!(
                    "Out of memory for this query: it needs more than query_memory_max_bytes \
                     ({} bytes) for sorting, grouping, joining or buffering rows",
                    self.limit_bytes
                ),
            ));
        }
        Ok(())
    }

    /// Gives back `bytes` charged before, for rows an operator no longer holds (a
    /// recursive CTE's work table of an earlier run).
    pub fn release(&self, bytes: usize) {
        let _ = self
            .used_bytes
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |used| {
                Some(used.saturating_sub(bytes as u64))
            });
    }

    pub fn used_bytes(&self) -> u64 {
        self.used_bytes.load(Ordering::Relaxed)
    }
}

/// The stop switch of a session's running statement, as operators see it: KILL QUERY
/// (or a client that went away) kills it, and `Session::run_statement` arms it with
/// the statement's `max_execution_time` deadline (a SELECT's; other statements have
/// none). [`Cancel::check`] fails with 1317
/// once killed and with 3024 ([`Error::MaxExecutionTimeExceeded`]) once the deadline
/// has passed. The same object is the session's transaction's interrupt
/// (`Transaction::set_interrupt`), so a lock wait ends for the same reasons, with the
/// same errors, the deadline ending it when it passes.
pub type Cancel = tarn_common::StatementInterrupt;

/// Everything operators share while a statement runs.
pub struct ExecContext<'a> {
    pub tx: &'a RefCell<Transaction>,
    pub params: &'a [Value],
    pub functions: &'a FnContext,
    pub memory: &'a MemoryBudget,
    pub cancel: &'a Arc<Cancel>,
    /// The enclosing row (correlated subqueries, index nested-loop joins).
    pub outer: Vec<Value>,
    /// Results of subqueries, by the subquery's address and outer values.
    pub cache: &'a RefCell<HashMap<(usize, Vec<u8>), SubqueryResult>>,
    /// Operator statistics for EXPLAIN ANALYZE: (rows, nanoseconds) per node address.
    pub profile: Option<&'a RefCell<HashMap<usize, (u64, u64)>>>,
    /// Rows a SQL_CALC_FOUND_ROWS limit saw in all (`Plan::Limit::count_all`).
    pub rows_before_limit: &'a Cell<Option<u64>>,
    /// The rows each running recursive CTE's work table holds, by its id (see
    /// [`cte`]).
    pub work_tables: &'a cte::WorkTables,
    /// `cte_max_recursion_depth`: the runs of a recursive CTE's recursive part a
    /// statement may make (3636 past it).
    pub cte_max_recursion_depth: u64,
}

impl<'a> ExecContext<'a> {
    /// A context for a nested run with `outer` as the enclosing row.
    fn with_outer(&self, outer: Vec<Value>) -> ExecContext<'a> {
        ExecContext {
            tx: self.tx,
            params: self.params,
            functions: self.functions,
            memory: self.memory,
            cancel: self.cancel,
            outer,
            cache: self.cache,
            profile: self.profile,
            rows_before_limit: self.rows_before_limit,
            work_tables: self.work_tables,
            cte_max_recursion_depth: self.cte_max_recursion_depth,
        }
    }

    /// The statement's cancel flag, for work that outlives a borrow (pool jobs).
    pub fn cancel_handle(&self) -> Arc<Cancel> {
        self.cancel.clone()
    }

    pub(crate) fn eval_cx(&'a self) -> EvalContext<'a> {
        EvalContext {
            params: self.params,
            outer: &self.outer,
            functions: self.functions,
            subqueries: self,
        }
    }
}

/// A running plan node.
pub trait Operator {
    /// The next chunk (never empty), or None at the end.
    fn next(&mut self, cx: &ExecContext) -> Result<Option<Chunk>>;
}

/// Runs `plan` to completion and returns its chunks.
pub fn collect(plan: &Plan, cx: &ExecContext) -> Result<Vec<Chunk>> {
    let mut op = open(plan)?;
    let mut out = Vec::new();
    while let Some(chunk) = op.next(cx)? {
        out.push(chunk);
    }
    Ok(out)
}

/// Runs `plan` and returns its rows.
pub fn collect_rows(plan: &Plan, cx: &ExecContext) -> Result<Vec<Vec<Value>>> {
    let mut rows = Vec::new();
    for chunk in collect(plan, cx)? {
        rows.extend(chunk.rows());
    }
    Ok(rows)
}

/// Builds the operator tree for `plan`.
pub fn open(plan: &Plan) -> Result<Box<dyn Operator + '_>> {
    open_needing(plan, None)
}

/// Builds the operator tree for `plan` when its consumer reads only the output
/// columns `needed` flags (`None`: all of them). The flags go down through filters,
/// projections, sorts, limits and aggregations to a serial [`ScanOp`], which then
/// decodes only what someone above reads and leaves the other columns NULL: the
/// chunks it returns keep the table's width, so no column position changes. Nodes
/// that read every input column (DISTINCT, serial joins, unions) and expressions
/// with subqueries (whose correlated references may read any column) ask for all.
/// A parallel pipeline works out its own columns from its steps and sink (see
/// `parallel::columns`) and uses the flags only for the rows it collects.
pub(crate) fn open_needing(
    plan: &Plan,
    needed: Option<Vec<bool>>,
) -> Result<Box<dyn Operator + '_>> {
    let inner = match crate::parallel::open_parallel(plan, needed.as_deref()) {
        Some(op) => op,
        None => open_serial(plan, needed)?,
    };
    Ok(Box::new(Profiled {
        inner,
        node: plan as *const Plan as usize,
    }))
}

/// Counts rows and time per plan node when the statement is profiled (EXPLAIN
/// ANALYZE); otherwise it only forwards.
struct Profiled<'p> {
    inner: Box<dyn Operator + 'p>,
    node: usize,
}

impl Operator for Profiled<'_> {
    fn next(&mut self, cx: &ExecContext) -> Result<Option<Chunk>> {
        let Some(profile) = cx.profile else {
            return self.inner.next(cx);
        };
        let started = Instant::now();
        let result = self.inner.next(cx);
        let elapsed = started.elapsed().as_nanos() as u64;
        let rows = match &result {
            Ok(Some(chunk)) => chunk.len() as u64,
            _ => 0,
        };
        let mut profile = profile.borrow_mut();
        let entry = profile.entry(self.node).or_insert((0, 0));
        entry.0 += rows;
        entry.1 += elapsed;
        result
    }
}

/// Marks the input columns `expr` reads in `needed`; a subquery (or a column past
/// the flags) makes it `None`: every column.
fn mark_needed(expr: &Expr, needed: &mut Option<Vec<bool>>) {
    let Some(flags) = needed else {
        return;
    };
    let mut all = false;
    expr.visit(&mut |e| match e {
        Expr::Column(c) => match flags.get_mut(*c) {
            Some(flag) => *flag = true,
            None => all = true,
        },
        Expr::Subquery { .. } => all = true,
        _ => {}
    });
    if all {
        *needed = None;
    }
}

/// The input columns a node needs: none yet, for [`mark_needed`] to add to.
fn needing_none(input: &Plan) -> Option<Vec<bool>> {
    Some(vec![false; input.width()])
}

fn open_serial(plan: &Plan, needed: Option<Vec<bool>>) -> Result<Box<dyn Operator + '_>> {
    let op: Box<dyn Operator + '_> = match plan {
        Plan::Scan { .. } => Box::new(ScanOp {
            plan,
            state: ScanState::NotStarted,
            needed,
        }),
        Plan::Values { rows, .. } => Box::new(ValuesOp { rows, done: false }),
        Plan::Rows { rows, columns } => Box::new(RowsOp {
            rows: rows.clone(),
            width: columns.len(),
            position: 0,
        }),
        Plan::Filter { input, predicate } => {
            let mut below = needed;
            mark_needed(predicate, &mut below);
            Box::new(FilterOp {
                input: open_needing(input, below)?,
                predicate,
            })
        }
        Plan::Project { input, exprs, .. } => {
            let mut below = needing_none(input);
            for (i, expr) in exprs.iter().enumerate() {
                if needed.as_ref().is_none_or(|n| n.get(i) != Some(&false)) {
                    mark_needed(expr, &mut below);
                }
            }
            Box::new(ProjectOp {
                input: open_needing(input, below)?,
                exprs,
                moves: column_moves(exprs),
            })
        }
        Plan::Join {
            left,
            right,
            kind,
            keys,
            filter,
            ..
        } => Box::new(HashJoinOp {
            left: open(left)?,
            right: Some(open(right)?),
            right_width: right.width(),
            kind: *kind,
            keys,
            filter: filter.as_ref(),
            table: None,
            current: None,
        }),
        Plan::IndexJoin {
            outer,
            inner,
            kind,
            filter,
            ..
        } => Box::new(IndexJoinOp {
            outer: open(outer)?,
            inner,
            inner_width: inner.width(),
            kind: *kind,
            filter: filter.as_ref(),
            pending: None,
        }),
        Plan::Aggregate {
            input,
            group,
            aggs,
            rollup,
            columns,
        } => {
            let mut below = needing_none(input);
            group.iter().for_each(|e| mark_needed(e, &mut below));
            for agg in aggs {
                if agg.concat.is_some() {
                    below = None;
                }
                if let Some(arg) = &agg.arg {
                    mark_needed(arg, &mut below);
                }
            }
            Box::new(AggregateOp {
                input: Some(open_needing(input, below)?),
                group,
                collations: group_collations(columns, group.len()),
                aggs,
                rollup: *rollup,
                output: None,
            })
        }
        Plan::Sort { input, keys } => {
            let mut below = needed;
            keys.iter().for_each(|k| mark_needed(&k.expr, &mut below));
            Box::new(SortOp {
                input: Some(open_needing(input, below)?),
                keys,
                output: None,
            })
        }
        Plan::Window {
            input, spec, calls, ..
        } => {
            // The input columns read above pass through; the window reads its own.
            let mut below = needed.map(|mut flags| {
                flags.truncate(input.width());
                flags
            });
            spec.exprs().for_each(|e| mark_needed(e, &mut below));
            for call in calls {
                call.func
                    .exprs()
                    .into_iter()
                    .for_each(|e| mark_needed(e, &mut below));
            }
            Box::new(crate::window::WindowOp {
                input: Some(open_needing(input, below)?),
                spec,
                calls,
                output: None,
            })
        }
        Plan::Limit {
            input,
            offset,
            count,
            count_all,
        } => Box::new(LimitOp {
            input: open_needing(input, needed)?,
            unresolved: Some((*offset, *count)),
            skip: 0,
            remaining: 0,
            count_all: *count_all,
            seen: 0,
        }),
        Plan::Distinct { input } => Box::new(DistinctOp {
            input: open(input)?,
            collations: group_collations(input.columns(), input.width()),
            seen: HashSet::default(),
        }),
        Plan::Union { inputs, .. } => Box::new(UnionOp {
            inputs: inputs.iter().map(open).collect::<Result<_>>()?,
            current: 0,
        }),
        Plan::RecursiveCte { .. } => Box::new(cte::RecursiveCteOp::new(plan)),
        Plan::WorkTable { id, .. } => Box::new(cte::WorkTableOp::new(*id)),
    };
    Ok(op)
}

/// The collations the first `count` of `columns` compare strings under: an
/// aggregate's group keys (its first output columns) or a DISTINCT's columns.
pub(crate) fn group_collations(columns: &[OutputColumn], count: usize) -> Vec<Collation> {
    columns[..count].iter().map(|c| c.ty.collation()).collect()
}

/// A value's hash key for joins, GROUP BY and IN sets: numbers of any type that are
/// equal get equal keys (1 = 1.0), dates and datetimes likewise.
pub fn join_key(v: &Value, collation: Collation, out: &mut Vec<u8>) {
    match v {
        Value::Int(_) | Value::UInt(_) | Value::Decimal(_) => match cast::to_decimal(v) {
            Some(d) => compare::group_key(&Value::Decimal(d.normalized()), collation, out),
            None => compare::group_key(v, collation, out),
        },
        Value::Float(f) => join_key(&Value::Double(*f as f64), collation, out),
        Value::Double(d) if d.fract() == 0.0 && d.abs() < 1e18 => {
            join_key(&Value::Int(*d as i64), collation, out)
        }
        Value::Date(d) => compare::group_key(
            &Value::DateTime(tarn_row::datetime::DateTime::from_date(*d)),
            collation,
            out,
        ),
        other => compare::group_key(other, collation, out),
    }
}

/// The hash key of a row's key values, each under its collation; None when one is
/// NULL (it matches nothing).
fn keys_of(row_values: &[&Value], collations: &[Collation]) -> Option<Vec<u8>> {
    let mut key = Vec::new();
    for (v, &collation) in row_values.iter().zip(collations) {
        if v.is_null() {
            return None;
        }
        join_key(v, collation, &mut key);
        key.push(0xFE);
    }
    Some(key)
}

fn truthy(v: &Value) -> bool {
    cast::to_bool(v) == Some(true)
}

fn filter_chunk(chunk: Chunk, predicate: &Expr, cx: &ExecContext) -> Result<Chunk> {
    let values = predicate.eval(&chunk, &cx.eval_cx())?;
    let keep: Vec<bool> = values.iter().map(truthy).collect();
    Ok(chunk.filter(&keep))
}

// ------------------------------------------------------------------ scans

enum ScanState {
    NotStarted,
    Stream(tarn_catalog::BatchStream),
    /// A key lookup's or a range's rows, read whole at the start.
    Chunks(std::vec::IntoIter<Chunk>),
    Done,
}

struct ScanOp<'p> {
    plan: &'p Plan,
    state: ScanState,
    /// The table columns the operators above read (`None`: all); see [`open_needing`].
    needed: Option<Vec<bool>>,
}

/// Converts key values to the key columns' types exactly; None if one cannot be
/// (then the scan reads everything and the filter decides), Some(None) if one is
/// NULL (nothing matches). A string column looked up by a value that is not a string
/// is never exact: `=` compares them as numbers or dates, so many stored strings
/// equal one value (`'1'`, `'01'` and `'1.0'` all equal 1).
fn key_values(
    values: &[Expr],
    columns: &[usize],
    table: &Table,
    cx: &ExecContext,
) -> Result<Option<Option<Vec<Value>>>> {
    let mut out = Vec::with_capacity(values.len());
    for (expr, &c) in values.iter().zip(columns) {
        let v = expr.eval_row(&[], &cx.eval_cx())?;
        if v.is_null() {
            return Ok(Some(None));
        }
        let column = &table.def().columns[c];
        if (column.ty.is_text() || column.ty.is_binary_string()) && !matches!(v, Value::Bytes(_)) {
            return Ok(None);
        }
        match cast::to_column_at(v.clone(), column.ty, column.collation, &column.name, 1) {
            Ok(converted)
                if compare::compare(&converted, &v, column.collation)
                    == Some(std::cmp::Ordering::Equal) =>
            {
                out.push(converted)
            }
            _ => return Ok(None),
        }
    }
    Ok(Some(Some(out)))
}

fn bound_values(
    bound: &Bound<Vec<Expr>>,
    columns: &[usize],
    table: &Table,
    cx: &ExecContext,
) -> Result<Option<Option<Bound<Vec<Value>>>>> {
    Ok(match bound {
        Bound::Unbounded => Some(Some(Bound::Unbounded)),
        Bound::Included(v) => key_values(v, columns, table, cx)?.map(|o| o.map(Bound::Included)),
        Bound::Excluded(v) => key_values(v, columns, table, cx)?.map(|o| o.map(Bound::Excluded)),
    })
}

impl ScanOp<'_> {
    /// Starts on rows read whole (`chunk`, of `width` columns), charged to the
    /// query's memory bound.
    fn start_with(&mut self, chunk: Chunk, width: usize, cx: &ExecContext) -> Result<()> {
        cx.memory.charge(chunk.len() * width * 32)?;
        self.state = ScanState::Chunks(chunk.split().into_iter());
        Ok(())
    }

    fn start(&mut self, cx: &ExecContext) -> Result<()> {
        let Plan::Scan {
            table,
            access,
            lock,
            wait,
            filter,
            ..
        } = self.plan
        else {
            unreachable!("a ScanOp runs a Scan");
        };
        let def = table.def();
        let Plan::Scan { columns: width, .. } = self.plan else {
            unreachable!("a ScanOp runs a Scan");
        };
        let width = width.len();
        let mut columns = self.needed.take();
        if let Some(f) = filter {
            mark_needed(f, &mut columns);
        }
        let columns = columns.filter(|c| c.contains(&false));
        let columns = columns.as_deref();
        let mut tx = cx.tx.borrow_mut();
        let rows: Option<Vec<Vec<Value>>> = match access {
            Access::Full => None,
            Access::PrimaryKey(values) => match key_values(values, &def.primary_key, table, cx)? {
                None => None,
                Some(None) => Some(Vec::new()),
                Some(Some(pk)) => {
                    let key = table.encode_primary_key(&pk)?;
                    Some(
                        table
                            .read_key_columns_tx(&mut tx, &key, *lock, *wait, columns)?
                            .into_iter()
                            .collect(),
                    )
                }
            },
            Access::PrimaryKeyList(keys) => {
                // Each key once, in key order (as an index range returns them).
                let mut encoded = Vec::with_capacity(keys.len());
                let mut exact = true;
                for values in keys {
                    match key_values(values, &def.primary_key, table, cx)? {
                        None => exact = false,
                        Some(None) => {}
                        Some(Some(pk)) => encoded.push(table.encode_primary_key(&pk)?),
                    }
                }
                if exact {
                    encoded.sort();
                    encoded.dedup();
                    let mut rows = Vec::with_capacity(encoded.len());
                    for key in encoded {
                        rows.extend(
                            table.read_key_columns_tx(&mut tx, &key, *lock, *wait, columns)?,
                        );
                    }
                    Some(rows)
                } else {
                    None
                }
            }
            Access::PrimaryRange { lower, upper } => {
                let lo = bound_values(lower, &def.primary_key, table, cx)?;
                let hi = bound_values(upper, &def.primary_key, table, cx)?;
                match (lo, hi) {
                    (Some(Some(lo)), Some(Some(hi))) => {
                        let vectors = table.scan_column_vectors_tx(
                            &mut tx,
                            lo,
                            hi,
                            *lock,
                            *wait,
                            usize::MAX,
                            columns,
                        )?;
                        return self.start_with(Chunk::from_vectors(vectors), width, cx);
                    }
                    (Some(None), _) | (_, Some(None)) => Some(Vec::new()),
                    _ => None,
                }
            }
            Access::IndexRange {
                index,
                lower,
                upper,
                prefetch,
            } => {
                let columns = &table.index(index)?.def.columns;
                let lo = bound_values(lower, columns, table, cx)?;
                let hi = bound_values(upper, columns, table, cx)?;
                match (lo, hi) {
                    (Some(Some(lo)), Some(Some(hi))) => {
                        if *prefetch && *lock == RowLock::None {
                            let scan = table.index_scan_tx(
                                &mut tx,
                                index,
                                lo,
                                hi,
                                Direction::Forward,
                                None,
                            )?;
                            Some(scan.collect_rows()?)
                        } else {
                            Some(table.index_range_tx(
                                &mut tx,
                                index,
                                lo,
                                hi,
                                *lock,
                                *wait,
                                usize::MAX,
                            )?)
                        }
                    }
                    (Some(None), _) | (_, Some(None)) => Some(Vec::new()),
                    _ => None,
                }
            }
        };
        if let Some(rows) = rows {
            return self.start_with(Chunk::from_rows(rows, width), width, cx);
        }
        // The whole table.
        if *lock != RowLock::None {
            let vectors = table.scan_column_vectors_tx(
                &mut tx,
                Bound::Unbounded,
                Bound::Unbounded,
                *lock,
                *wait,
                usize::MAX,
                columns,
            )?;
            return self.start_with(Chunk::from_vectors(vectors), width, cx);
        }
        let projection = columns.map(|flags| (0..flags.len()).filter(|&c| flags[c]).collect());
        let stream = table.parallel_scan_tx(
            &mut tx,
            ParallelScan {
                ordered: true,
                projection,
                ..Default::default()
            },
        )?;
        self.state = ScanState::Stream(stream);
        Ok(())
    }
}

impl Operator for ScanOp<'_> {
    fn next(&mut self, cx: &ExecContext) -> Result<Option<Chunk>> {
        let Plan::Scan {
            filter, columns, ..
        } = self.plan
        else {
            unreachable!("a ScanOp runs a Scan");
        };
        if let ScanState::NotStarted = self.state {
            self.start(cx)?;
        }
        loop {
            cx.cancel.check()?;
            let chunk = match &mut self.state {
                ScanState::NotStarted | ScanState::Done => return Ok(None),
                ScanState::Stream(stream) => match stream.next() {
                    None => {
                        self.state = ScanState::Done;
                        return Ok(None);
                    }
                    Some(batch) => Chunk::from_batch_spread(&batch?, columns.len()),
                },
                ScanState::Chunks(chunks) => match chunks.next() {
                    Some(chunk) => chunk,
                    None => {
                        self.state = ScanState::Done;
                        return Ok(None);
                    }
                },
            };
            let chunk = match filter {
                Some(f) => filter_chunk(chunk, f, cx)?,
                None => chunk,
            };
            if !chunk.is_empty() {
                return Ok(Some(chunk));
            }
        }
    }
}

struct ValuesOp<'p> {
    rows: &'p [Vec<Expr>],
    done: bool,
}

impl Operator for ValuesOp<'_> {
    fn next(&mut self, cx: &ExecContext) -> Result<Option<Chunk>> {
        if self.done {
            return Ok(None);
        }
        self.done = true;
        if self.rows.is_empty() {
            return Ok(None);
        }
        let width = self.rows[0].len();
        if width == 0 {
            return Ok(Some(Chunk::empty_rows(self.rows.len())));
        }
        let ecx = cx.eval_cx();
        let rows = self
            .rows
            .iter()
            .map(|r| {
                r.iter()
                    .map(|e| e.eval_row(&[], &ecx))
                    .collect::<Result<Vec<_>>>()
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Some(Chunk::from_rows(rows, width)))
    }
}

struct RowsOp {
    rows: Arc<Vec<Vec<Value>>>,
    width: usize,
    position: usize,
}

impl Operator for RowsOp {
    fn next(&mut self, _cx: &ExecContext) -> Result<Option<Chunk>> {
        if self.position >= self.rows.len() {
            return Ok(None);
        }
        let end = (self.position + CHUNK_ROWS).min(self.rows.len());
        let rows = self.rows[self.position..end].to_vec();
        self.position = end;
        Ok(Some(Chunk::from_rows(rows, self.width)))
    }
}

struct FilterOp<'p> {
    input: Box<dyn Operator + 'p>,
    predicate: &'p Expr,
}

impl Operator for FilterOp<'_> {
    fn next(&mut self, cx: &ExecContext) -> Result<Option<Chunk>> {
        while let Some(chunk) = self.input.next(cx)? {
            let chunk = filter_chunk(chunk, self.predicate, cx)?;
            if !chunk.is_empty() {
                return Ok(Some(chunk));
            }
        }
        Ok(None)
    }
}

struct ProjectOp<'p> {
    input: Box<dyn Operator + 'p>,
    exprs: &'p [Expr],
    /// Per expression: the input column it is, when no other expression reads that
    /// column (the column vector then moves to the output instead of being cloned).
    moves: Vec<Option<usize>>,
}

/// [`ProjectOp::moves`] for `exprs`.
fn column_moves(exprs: &[Expr]) -> Vec<Option<usize>> {
    let mut reads: HashMap<usize, usize> = HashMap::new();
    for e in exprs {
        e.visit(&mut |x| {
            if let Expr::Column(c) = x {
                *reads.entry(*c).or_default() += 1;
            }
        });
    }
    exprs
        .iter()
        .map(|e| match e {
            Expr::Column(c) if reads.get(c) == Some(&1) => Some(*c),
            _ => None,
        })
        .collect()
}

impl Operator for ProjectOp<'_> {
    fn next(&mut self, cx: &ExecContext) -> Result<Option<Chunk>> {
        let Some(chunk) = self.input.next(cx)? else {
            return Ok(None);
        };
        let len = chunk.len();
        if self.exprs.is_empty() {
            return Ok(Some(Chunk::empty_rows(len)));
        }
        let ecx = cx.eval_cx();
        let mut columns = Vec::with_capacity(self.exprs.len());
        for (e, moved) in self.exprs.iter().zip(&self.moves) {
            columns.push(match moved {
                Some(_) => Vec::new(),
                None => e.eval(&chunk, &ecx)?,
            });
        }
        if self.moves.iter().any(Option::is_some) {
            let mut input = chunk.into_columns();
            for (out, moved) in columns.iter_mut().zip(&self.moves) {
                if let Some(c) = moved {
                    *out = std::mem::take(&mut input[*c]);
                }
            }
        }
        Ok(Some(Chunk::from_columns(columns, len)))
    }
}

// ------------------------------------------------------------------ joins

/// The build side of a hash join.
pub(crate) struct HashTable {
    rows: Arc<Chunk>,
    /// The collation each key compares strings under (the probe side's keys use the
    /// same).
    collations: Vec<Collation>,
    /// Key -> row positions in `rows`, split into partitions by the key's hash (one
    /// per builder, so a parallel build fills them without sharing).
    partitions: Vec<HashMap<Vec<u8>, Vec<u32>>>,
}

/// The partition of a key among `partitions`.
fn partition_of(key: &[u8], partitions: usize) -> usize {
    use std::hash::{Hash, Hasher};
    if partitions == 1 {
        return 0;
    }
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    key.hash(&mut hasher);
    (hasher.finish() % partitions as u64) as usize
}

impl HashTable {
    fn lookup(&self, key: &[u8]) -> Option<&Vec<u32>> {
        self.partitions[partition_of(key, self.partitions.len())].get(key)
    }
}

/// Builds a hash join's table from its build side (`keys`: the build side's key
/// expressions, `collations` the collation each compares strings under; none: a
/// nested-loop join's table of every row). The build side is
/// read first; past `PARALLEL_BUILD_ROWS_MIN` rows the executor's workers compute the
/// keys of a share of the rows each, then fill one partition each.
pub(crate) fn build_hash_table(
    input: &mut dyn Operator,
    keys: &[Expr],
    collations: &[Collation],
    cx: &ExecContext,
) -> Result<HashTable> {
    debug_assert_eq!(keys.len(), collations.len());
    let collations = collations.to_vec();
    let mut rows = Chunk::default();
    while let Some(chunk) = input.next(cx)? {
        cx.cancel.check()?;
        cx.memory.charge(chunk.memory_bytes() + chunk.len() * 48)?;
        rows.append(chunk);
    }
    let rows = Arc::new(rows);
    if rows.is_empty() {
        // An empty build side has no columns to evaluate keys over: no key matches.
        return Ok(HashTable {
            rows,
            collations,
            partitions: vec![HashMap::new()],
        });
    }
    if keys.is_empty() {
        let all = (0..rows.len() as u32).collect();
        return Ok(HashTable {
            rows,
            collations,
            partitions: vec![HashMap::from([(Vec::new(), all)])],
        });
    }
    let pool = crate::workers::pool();
    let workers = pool.threads();
    let parallel = rows.len() >= crate::limits::PARALLEL_BUILD_ROWS_MIN
        && workers > 1
        && !crate::parallel::pipeline_running()
        && keys.iter().all(crate::parallel::parallel_safe);
    if !parallel {
        let ecx = cx.eval_cx();
        let mut index: HashMap<Vec<u8>, Vec<u32>> = HashMap::new();
        let key_columns = keys
            .iter()
            .map(|e| e.eval(&rows, &ecx))
            .collect::<Result<Vec<_>>>()?;
        for i in 0..rows.len() {
            let values: Vec<&Value> = key_columns.iter().map(|c| &c[i]).collect();
            if let Some(key) = keys_of(&values, &collations) {
                index.entry(key).or_default().push(i as u32);
            }
        }
        return Ok(HashTable {
            rows,
            collations,
            partitions: vec![index],
        });
    }
    // Phase 1: each worker computes the keys of a share of the rows and buckets them
    // by partition.
    type Buckets = Vec<Vec<(u32, Vec<u8>)>>;
    let keys = Arc::new(keys.to_vec());
    let shared_collations = Arc::new(collations.clone());
    let params = Arc::new(cx.params.to_vec());
    let functions = cx.functions.clone();
    let (sender, receiver) = std::sync::mpsc::channel::<(usize, Result<Buckets>)>();
    let per_worker = rows.len().div_ceil(workers);
    for w in 0..workers {
        let (rows, keys, collations, params, functions, sender) = (
            rows.clone(),
            keys.clone(),
            shared_collations.clone(),
            params.clone(),
            functions.clone(),
            sender.clone(),
        );
        pool.spawn(move || {
            let start = (w * per_worker).min(rows.len());
            let end = ((w + 1) * per_worker).min(rows.len());
            let result = (|| -> Result<Buckets> {
                let share = rows.slice(start, end);
                let runner = crate::parallel::NoSubqueries;
                let ecx = EvalContext {
                    params: &params,
                    outer: &[],
                    functions: &functions,
                    subqueries: &runner,
                };
                let key_columns = keys
                    .iter()
                    .map(|e| e.eval(&share, &ecx))
                    .collect::<Result<Vec<_>>>()?;
                let mut buckets: Buckets = (0..workers).map(|_| Vec::new()).collect();
                for i in 0..share.len() {
                    let values: Vec<&Value> = key_columns.iter().map(|c| &c[i]).collect();
                    if let Some(key) = keys_of(&values, &collations) {
                        let p = partition_of(&key, workers);
                        buckets[p].push(((start + i) as u32, key));
                    }
                }
                Ok(buckets)
            })();
            let _ = sender.send((w, result));
        });
    }
    drop(sender);
    let mut shares: Vec<Option<Buckets>> = (0..workers).map(|_| None).collect();
    for _ in 0..workers {
        let (w, result) = receiver.recv().map_err(|_| build_worker_lost())?;
        shares[w] = Some(result?);
    }
    // Phase 2: each worker fills one partition from every share, in row order.
    let mut by_partition: Vec<Buckets> = (0..workers).map(|_| Vec::new()).collect();
    for share in shares.into_iter().flatten() {
        for (p, bucket) in share.into_iter().enumerate() {
            by_partition[p].push(bucket);
        }
    }
    let (sender, receiver) = std::sync::mpsc::channel();
    for (p, buckets) in by_partition.into_iter().enumerate() {
        let sender = sender.clone();
        pool.spawn(move || {
            let mut index: HashMap<Vec<u8>, Vec<u32>> = HashMap::new();
            for bucket in buckets {
                for (row, key) in bucket {
                    index.entry(key).or_default().push(row);
                }
            }
            let _ = sender.send((p, index));
        });
    }
    drop(sender);
    let mut partitions: Vec<HashMap<Vec<u8>, Vec<u32>>> =
        (0..workers).map(|_| HashMap::new()).collect();
    for _ in 0..workers {
        let (p, index) = receiver.recv().map_err(|_| build_worker_lost())?;
        partitions[p] = index;
    }
    Ok(HashTable {
        rows,
        collations,
        partitions,
    })
}

fn build_worker_lost() -> Error {
    Error::sql(
        1105,
        "HY000",
        "a hash-join build worker stopped without finishing",
    )
}

/// Joins a chunk of probe-side rows with a built hash table: `keys` are the probe
/// side's key expressions, `filter` is over the joined row (for LEFT JOIN it is part
/// of the ON condition), `right_width` the build side's width.
pub(crate) fn probe_hash_table(
    table: &HashTable,
    keys: &[Expr],
    filter: Option<&Expr>,
    kind: JoinKind,
    right_width: usize,
    chunk: Chunk,
    ecx: &EvalContext,
) -> Result<Chunk> {
    let key_columns = keys
        .iter()
        .map(|e| e.eval(&chunk, ecx))
        .collect::<Result<Vec<_>>>()?;
    // Candidate pairs (left row, right row).
    let mut left_rows = Vec::new();
    let mut right_rows = Vec::new();
    for i in 0..chunk.len() {
        let values: Vec<&Value> = key_columns.iter().map(|c| &c[i]).collect();
        let key = if keys.is_empty() {
            Some(Vec::new())
        } else {
            keys_of(&values, &table.collations)
        };
        if let Some(matches) = key.and_then(|k| table.lookup(&k)) {
            for &r in matches {
                left_rows.push(i);
                right_rows.push(r as usize);
            }
        }
    }
    let mut joined = chunk.take(&left_rows).zip(table.rows.take(&right_rows));
    if joined.width() < chunk.width() + right_width {
        // An empty build side has no columns yet.
        joined = Chunk::from_columns(
            (0..chunk.width() + right_width)
                .map(|_| Vec::new())
                .collect(),
            0,
        );
    }
    let mut matched = vec![false; chunk.len()];
    let joined = match filter {
        Some(f) => {
            let values = f.eval(&joined, ecx)?;
            let keep: Vec<bool> = values.iter().map(truthy).collect();
            for (k, &l) in keep.iter().zip(&left_rows) {
                if *k {
                    matched[l] = true;
                }
            }
            joined.filter(&keep)
        }
        None => {
            for &l in &left_rows {
                matched[l] = true;
            }
            joined
        }
    };
    Ok(match kind {
        JoinKind::Inner => joined,
        JoinKind::Semi => chunk.filter(&matched),
        JoinKind::Anti => {
            let unmatched: Vec<bool> = matched.iter().map(|m| !m).collect();
            chunk.filter(&unmatched)
        }
        JoinKind::Left => {
            let unmatched: Vec<usize> = (0..chunk.len()).filter(|&i| !matched[i]).collect();
            if unmatched.is_empty() {
                joined
            } else {
                let nulls = Chunk::from_columns(
                    (0..right_width)
                        .map(|_| vec![Value::Null; unmatched.len()])
                        .collect(),
                    unmatched.len(),
                );
                let mut out = joined;
                out.append(chunk.take(&unmatched).zip(nulls));
                out
            }
        }
    })
}

struct HashJoinOp<'p> {
    left: Box<dyn Operator + 'p>,
    right: Option<Box<dyn Operator + 'p>>,
    right_width: usize,
    kind: JoinKind,
    keys: &'p [(Expr, Expr, Collation)],
    filter: Option<&'p Expr>,
    table: Option<HashTable>,
    /// The left chunk being probed, and the next row of it to probe.
    current: Option<(Chunk, usize)>,
}

/// A probe slice stops once its rows have this many matches (a row with more still
/// goes alone): joined output stays near chunk size even for cross joins.
const PROBE_PAIRS_MAX: usize = 4 * CHUNK_ROWS;

impl HashJoinOp<'_> {
    fn build(&mut self, cx: &ExecContext) -> Result<()> {
        let mut right = self.right.take().expect("the build side is read once");
        let keys: Vec<Expr> = self.keys.iter().map(|(_, r, _)| r.clone()).collect();
        let collations: Vec<Collation> = self.keys.iter().map(|(_, _, c)| *c).collect();
        self.table = Some(build_hash_table(right.as_mut(), &keys, &collations, cx)?);
        Ok(())
    }

    fn probe(&self, chunk: Chunk, cx: &ExecContext) -> Result<Chunk> {
        let table = self.table.as_ref().expect("built before probing");
        let keys: Vec<Expr> = self.keys.iter().map(|(l, _, _)| l.clone()).collect();
        probe_hash_table(
            table,
            &keys,
            self.filter,
            self.kind,
            self.right_width,
            chunk,
            &cx.eval_cx(),
        )
    }
}

impl HashJoinOp<'_> {
    /// The end of the next probe slice of `chunk` from `start`: rows until their
    /// matches reach `PROBE_PAIRS_MAX` (at least one row).
    fn slice_end(&self, chunk: &Chunk, start: usize, cx: &ExecContext) -> Result<usize> {
        let table = self.table.as_ref().expect("built before probing");
        if self.keys.is_empty() {
            let per_row = table.rows.len().max(1);
            return Ok((start + (PROBE_PAIRS_MAX / per_row).max(1)).min(chunk.len()));
        }
        // Keyed joins rarely fan out; count matches per row only when they might.
        let ecx = cx.eval_cx();
        let rest = chunk.slice(start, chunk.len());
        let key_columns = self
            .keys
            .iter()
            .map(|(l, _, _)| l.eval(&rest, &ecx))
            .collect::<Result<Vec<_>>>()?;
        let mut pairs = 0usize;
        for i in 0..rest.len() {
            let values: Vec<&Value> = key_columns.iter().map(|c| &c[i]).collect();
            if let Some(matches) =
                keys_of(&values, &table.collations).and_then(|k| table.lookup(&k))
            {
                pairs += matches.len();
            }
            if pairs >= PROBE_PAIRS_MAX {
                return Ok(start + i + 1);
            }
        }
        Ok(chunk.len())
    }
}

impl Operator for HashJoinOp<'_> {
    fn next(&mut self, cx: &ExecContext) -> Result<Option<Chunk>> {
        if self.table.is_none() {
            self.build(cx)?;
        }
        loop {
            cx.cancel.check()?;
            let (chunk, start) = match self.current.take() {
                Some(current) => current,
                None => match self.left.next(cx)? {
                    Some(chunk) => (chunk, 0),
                    None => return Ok(None),
                },
            };
            let end = self.slice_end(&chunk, start, cx)?;
            let slice = if start == 0 && end == chunk.len() {
                None
            } else {
                Some(chunk.slice(start, end))
            };
            if end < chunk.len() {
                self.current = Some((chunk.clone(), end));
            }
            let out = self.probe(slice.unwrap_or(chunk), cx)?;
            if !out.is_empty() {
                return Ok(Some(out));
            }
        }
    }
}

struct IndexJoinOp<'p> {
    outer: Box<dyn Operator + 'p>,
    inner: &'p Plan,
    inner_width: usize,
    kind: JoinKind,
    filter: Option<&'p Expr>,
    pending: Option<std::vec::IntoIter<Chunk>>,
}

impl Operator for IndexJoinOp<'_> {
    fn next(&mut self, cx: &ExecContext) -> Result<Option<Chunk>> {
        loop {
            if let Some(chunk) = self.pending.as_mut().and_then(Iterator::next) {
                return Ok(Some(chunk));
            }
            let Some(chunk) = self.outer.next(cx)? else {
                return Ok(None);
            };
            cx.cancel.check()?;
            let mut out = Chunk::default();
            for i in 0..chunk.len() {
                let row = chunk.row(i);
                let inner_cx = cx.with_outer(row.clone());
                let mut matched = false;
                for inner in collect(self.inner, &inner_cx)? {
                    let left = Chunk::from_rows(vec![row.clone(); inner.len()], row.len());
                    let mut joined = left.zip(inner);
                    if let Some(f) = self.filter {
                        joined = filter_chunk(joined, f, cx)?;
                    }
                    if joined.is_empty() {
                        continue;
                    }
                    matched = true;
                    match self.kind {
                        JoinKind::Inner | JoinKind::Left => out.append(joined),
                        JoinKind::Semi | JoinKind::Anti => break,
                    }
                }
                match (self.kind, matched) {
                    (JoinKind::Left, false) => {
                        let mut padded = row;
                        padded.extend(std::iter::repeat_n(Value::Null, self.inner_width));
                        out.push_row(padded);
                    }
                    (JoinKind::Semi, true) | (JoinKind::Anti, false) => out.push_row(row),
                    _ => {}
                }
            }
            if !out.is_empty() {
                self.pending = Some(out.split().into_iter());
            }
        }
    }
}

// ------------------------------------------------------------------ aggregation

struct AggregateOp<'p> {
    input: Option<Box<dyn Operator + 'p>>,
    group: &'p [Expr],
    /// The collation each group key compares strings under.
    collations: Vec<Collation>,
    aggs: &'p [AggCall],
    /// `WITH ROLLUP`: the super-aggregate rows too ([`Plan::Aggregate`]).
    rollup: bool,
    output: Option<std::vec::IntoIter<Chunk>>,
}

struct Group {
    keys: Vec<Value>,
    accumulators: Vec<Accumulator>,
    /// Per DISTINCT aggregate: the argument values seen.
    distinct: Vec<HashSet<Vec<u8>>>,
}

/// An empty accumulator for `call`.
pub(crate) fn accumulator(call: &AggCall, functions: &FnContext) -> Accumulator {
    match &call.concat {
        Some(spec) => Accumulator::group_concat(
            &spec.separator,
            functions.group_concat_max_len,
            spec.order
                .iter()
                .map(|(k, ty)| (k.descending, ty.collation()))
                .collect(),
        ),
        None => Accumulator::new(call.func, call.arg_type, call.arg_type.collation()),
    }
}

/// The columns `call` reads from `chunk` ([`AggCall::exprs`]).
pub(crate) fn eval_agg_args(
    call: &AggCall,
    chunk: &Chunk,
    cx: &EvalContext,
) -> Result<Vec<Vec<Value>>> {
    call.exprs().map(|e| e.eval(chunk, cx)).collect()
}

/// Folds row `row` of the columns `args` ([`eval_agg_args`]) into `acc`.
pub(crate) fn update_agg(
    call: &AggCall,
    acc: &mut Accumulator,
    args: &[Vec<Value>],
    row: usize,
) -> Result<()> {
    match (&call.concat, args.first()) {
        (Some(spec), _) => {
            let n = 1 + spec.more_args.len();
            let parts: Vec<&Value> = args[..n].iter().map(|c| &c[row]).collect();
            let keys = args[n..].iter().map(|c| c[row].clone()).collect();
            acc.update_concat(&parts, keys);
            Ok(())
        }
        (None, Some(column)) => acc.update(&column[row]),
        (None, None) => acc.update(&Value::Int(1)),
    }
}

impl AggregateOp<'_> {
    fn new_group(&self, keys: Vec<Value>, cx: &ExecContext) -> Group {
        Group {
            keys,
            accumulators: self
                .aggs
                .iter()
                .map(|a| accumulator(a, cx.functions))
                .collect(),
            distinct: self.aggs.iter().map(|_| HashSet::new()).collect(),
        }
    }

    /// Folds row `row` of the aggregates' argument columns `args` into `group`.
    fn fold_row(
        &self,
        group: &mut Group,
        args: &[Vec<Vec<Value>>],
        row: usize,
        cx: &ExecContext,
    ) -> Result<()> {
        for (a, call) in self.aggs.iter().enumerate() {
            if call.distinct {
                // The arguments (not GROUP_CONCAT's ORDER BY keys).
                let types = std::iter::once(call.arg_type).chain(
                    call.concat
                        .iter()
                        .flat_map(|c| c.more_args.iter().map(|(_, ty)| *ty)),
                );
                let mut k = Vec::new();
                let mut null = false;
                for (column, ty) in args[a].iter().zip(types) {
                    null |= column[row].is_null();
                    join_key(&column[row], ty.collation(), &mut k);
                    k.push(0xFE);
                }
                if null {
                    continue;
                }
                let len = k.len();
                if !group.distinct[a].insert(k) {
                    continue;
                }
                cx.memory.charge(32 + len)?;
            }
            let acc = &mut group.accumulators[a];
            let before = acc.held_bytes();
            update_agg(call, acc, &args[a], row)?;
            let grown = acc.held_bytes() - before;
            if grown > 0 {
                cx.memory.charge(grown)?;
            }
        }
        Ok(())
    }

    /// Reads the whole input into groups, then returns their rows.
    ///
    /// With `rollup` and `n` keys every row folds into `n + 1` groups, one per
    /// level: level 0 groups by all the keys, level `l` by the first `n - l` (so
    /// level `n` is the grand total). Recomputing each level from the input rows,
    /// rather than merging finer groups, keeps every aggregate exact (COUNT(DISTINCT),
    /// AVG, GROUP_CONCAT do not merge); every level's groups are charged to the
    /// statement's memory budget as the finest level's are. The finest groups then
    /// leave sorted by their keys, each followed by the super-aggregate rows of the
    /// prefixes it is the last of, as MySQL emits them.
    fn run(&mut self, cx: &ExecContext) -> Result<Vec<Chunk>> {
        let mut input = self.input.take().expect("aggregation runs once");
        let n = self.group.len();
        let levels = if self.rollup { n + 1 } else { 1 };
        let mut groups: Vec<Vec<Group>> = (0..levels).map(|_| Vec::new()).collect();
        // Per finest group with rollup: its group at each coarser level (1..=n).
        let mut parents: Vec<Vec<usize>> = Vec::new();
        // foldhash rather than SipHash, as for DISTINCT: the keys are whole group keys.
        let mut index: Vec<HashMap<Vec<u8>, usize, foldhash::fast::RandomState>> =
            (0..levels).map(|_| HashMap::default()).collect();
        let ecx = cx.eval_cx();
        let mut key = Vec::new();
        // Where each key column's bytes end in `key`: a level's key is a prefix.
        let mut key_ends = Vec::with_capacity(n);
        let mut found = Vec::with_capacity(levels);
        while let Some(chunk) = input.next(cx)? {
            cx.cancel.check()?;
            let keys = self
                .group
                .iter()
                .map(|e| e.eval(&chunk, &ecx))
                .collect::<Result<Vec<_>>>()?;
            let args = self
                .aggs
                .iter()
                .map(|a| eval_agg_args(a, &chunk, &ecx))
                .collect::<Result<Vec<_>>>()?;
            for row in 0..chunk.len() {
                // Without GROUP BY every row folds into the one group: no key to hash.
                if n == 0 && !groups[0].is_empty() {
                    self.fold_row(&mut groups[0][0], &args, row, cx)?;
                    continue;
                }
                key.clear();
                key_ends.clear();
                for (k, &collation) in keys.iter().zip(&self.collations) {
                    join_key(&k[row], collation, &mut key);
                    key.push(0xFE);
                    key_ends.push(key.len());
                }
                found.clear();
                for level in 0..levels {
                    let prefix = &key[..(n - level).checked_sub(1).map_or(0, |c| key_ends[c])];
                    let g = match index[level].get(prefix) {
                        Some(&g) => g,
                        None => {
                            cx.memory.charge(prefix.len() + 64 + self.aggs.len() * 64)?;
                            // A coarser level's row takes its keys from a finest group.
                            let group_keys = if level == 0 {
                                keys.iter().map(|k| k[row].clone()).collect()
                            } else {
                                Vec::new()
                            };
                            groups[level].push(self.new_group(group_keys, cx));
                            index[level].insert(prefix.to_vec(), groups[level].len() - 1);
                            groups[level].len() - 1
                        }
                    };
                    self.fold_row(&mut groups[level][g], &args, row, cx)?;
                    found.push(g);
                }
                if self.rollup && found[0] == parents.len() {
                    cx.memory.charge(n * 8)?;
                    parents.push(found[1..].to_vec());
                }
            }
        }
        if groups[0].is_empty() && n == 0 {
            groups[0].push(self.new_group(Vec::new(), cx));
        }
        let mut rows_before = vec![0; self.aggs.len()];
        if !self.rollup {
            let mut rows = Vec::with_capacity(groups[0].len());
            for g in groups.swap_remove(0) {
                let mut row = g.keys;
                agg::finish_group(&g.accumulators, &mut rows_before, &mut row)?;
                rows.push(row);
            }
            return Ok(Self::chunks(rows, n + self.aggs.len()));
        }
        // WITH ROLLUP: the finest groups in key order (NULLs first, as ORDER BY).
        let finest = &groups[0];
        let mut order: Vec<usize> = (0..finest.len()).collect();
        order.sort_by(|&a, &b| {
            let (a, b) = (&finest[a].keys, &finest[b].keys);
            a.iter()
                .zip(b)
                .zip(&self.collations)
                .map(|((x, y), &collation)| compare::sort_cmp(x, y, collation))
                .find(|o| o.is_ne())
                .unwrap_or(std::cmp::Ordering::Equal)
        });
        let mut rows = Vec::with_capacity(order.len() * 2);
        for (position, &g) in order.iter().enumerate() {
            let mut row = finest[g].keys.clone();
            row.extend((0..n).map(|_| Value::Int(0)));
            agg::finish_group(&finest[g].accumulators, &mut rows_before, &mut row)?;
            rows.push(row);
            // The prefixes this group is the last of, longest first.
            let next = order.get(position + 1);
            for level in 1..=n {
                let parent = parents[g][level - 1];
                if next.is_some_and(|&h| parents[h][level - 1] == parent) {
                    break;
                }
                let kept = n - level;
                let mut row = finest[g].keys[..kept].to_vec();
                row.extend((kept..n).map(|_| Value::Null));
                row.extend((0..n).map(|i| Value::Int(i64::from(i >= kept))));
                let accumulators = &groups[level][parent].accumulators;
                agg::finish_group(accumulators, &mut rows_before, &mut row)?;
                rows.push(row);
            }
        }
        Ok(Self::chunks(rows, 2 * n + self.aggs.len()))
    }

    fn chunks(rows: Vec<Vec<Value>>, width: usize) -> Vec<Chunk> {
        if rows.is_empty() {
            Vec::new()
        } else {
            Chunk::from_rows(rows, width).split()
        }
    }
}

impl Operator for AggregateOp<'_> {
    fn next(&mut self, cx: &ExecContext) -> Result<Option<Chunk>> {
        if self.output.is_none() {
            self.output = Some(self.run(cx)?.into_iter());
        }
        Ok(self.output.as_mut().and_then(Iterator::next))
    }
}

// ------------------------------------------------------------------ sort, limit, distinct, union

struct SortOp<'p> {
    input: Option<Box<dyn Operator + 'p>>,
    keys: &'p [SortKey],
    output: Option<std::vec::IntoIter<Chunk>>,
}

impl SortOp<'_> {
    fn run(&mut self, cx: &ExecContext) -> Result<Vec<Chunk>> {
        let mut input = self.input.take().expect("a sort runs once");
        let mut all = Chunk::default();
        let mut key_columns: Vec<Vec<Value>> = self.keys.iter().map(|_| Vec::new()).collect();
        let ecx = cx.eval_cx();
        while let Some(chunk) = input.next(cx)? {
            cx.cancel.check()?;
            cx.memory.charge(chunk.memory_bytes())?;
            for (k, column) in self.keys.iter().zip(key_columns.iter_mut()) {
                column.extend(k.expr.eval(&chunk, &ecx)?);
            }
            all.append(chunk);
        }
        let descending: Vec<bool> = self.keys.iter().map(|k| k.descending).collect();
        let collations: Vec<Collation> = self.keys.iter().map(|k| k.collation).collect();
        let order = sort_rows(Arc::new(SortKeys {
            columns: key_columns,
            descending,
            collations,
        }))?;
        Ok(if all.is_empty() {
            Vec::new()
        } else {
            all.take(&order).split()
        })
    }
}

/// The sort keys of every row, shared with the sort's workers.
pub(crate) struct SortKeys {
    pub(crate) columns: Vec<Vec<Value>>,
    pub(crate) descending: Vec<bool>,
    /// The collation each key compares strings under.
    pub(crate) collations: Vec<Collation>,
}

impl SortKeys {
    fn len(&self) -> usize {
        self.columns.first().map_or(0, Vec::len)
    }

    fn cmp(&self, a: usize, b: usize) -> std::cmp::Ordering {
        let keys = self
            .columns
            .iter()
            .zip(&self.descending)
            .zip(&self.collations);
        for ((column, &descending), &collation) in keys {
            let ordering = compare::sort_cmp(&column[a], &column[b], collation);
            let ordering = if descending {
                ordering.reverse()
            } else {
                ordering
            };
            if ordering != std::cmp::Ordering::Equal {
                return ordering;
            }
        }
        // Equal keys keep their input order (a stable sort, as runs merge).
        a.cmp(&b)
    }
}

/// The row order of a sort. Past `PARALLEL_SORT_ROWS_MIN` rows the executor's workers
/// each sort a run of the rows and the session's thread merges the runs.
pub(crate) fn sort_rows(keys: Arc<SortKeys>) -> Result<Vec<usize>> {
    let n = keys.len();
    let pool = crate::workers::pool();
    let runs = pool.threads();
    if n < crate::limits::PARALLEL_SORT_ROWS_MIN || runs < 2 || crate::parallel::pipeline_running()
    {
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_unstable_by(|&a, &b| keys.cmp(a, b));
        return Ok(order);
    }
    let (sender, receiver) = std::sync::mpsc::channel();
    let per_run = n.div_ceil(runs);
    for r in 0..runs {
        let (keys, sender) = (keys.clone(), sender.clone());
        let range = (r * per_run).min(n)..((r + 1) * per_run).min(n);
        pool.spawn(move || {
            let mut run: Vec<usize> = range.collect();
            run.sort_unstable_by(|&a, &b| keys.cmp(a, b));
            let _ = sender.send(run);
        });
    }
    drop(sender);
    let mut sorted: Vec<Vec<usize>> = Vec::with_capacity(runs);
    for _ in 0..runs {
        sorted.push(receiver.recv().map_err(|_| {
            Error::sql(
                1105,
                "HY000",
                "a sort worker stopped without finishing its run",
            )
        })?);
    }
    // Merge the runs: pick the smallest head each time (few runs: a linear scan).
    let mut heads = vec![0usize; sorted.len()];
    let mut order = Vec::with_capacity(n);
    while order.len() < n {
        let mut best: Option<usize> = None;
        for (r, run) in sorted.iter().enumerate() {
            if heads[r] < run.len()
                && best.is_none_or(|b| {
                    keys.cmp(run[heads[r]], sorted[b][heads[b]]) == std::cmp::Ordering::Less
                })
            {
                best = Some(r);
            }
        }
        let b = best.expect("a run has rows left");
        order.push(sorted[b][heads[b]]);
        heads[b] += 1;
    }
    Ok(order)
}

impl Operator for SortOp<'_> {
    fn next(&mut self, cx: &ExecContext) -> Result<Option<Chunk>> {
        if self.output.is_none() {
            self.output = Some(self.run(cx)?.into_iter());
        }
        Ok(self.output.as_mut().and_then(Iterator::next))
    }
}

struct LimitOp<'p> {
    input: Box<dyn Operator + 'p>,
    /// The plan's offset and count until the first `next`, which reads them (a
    /// parameter's from the execution's parameters) into `skip` and `remaining`.
    unresolved: Option<(RowCount, Option<RowCount>)>,
    skip: u64,
    remaining: u64,
    /// SQL_CALC_FOUND_ROWS: read the input to its end and report how many rows it
    /// had in `ExecContext::rows_before_limit`.
    count_all: bool,
    /// Rows taken from the input so far.
    seen: u64,
}

impl Operator for LimitOp<'_> {
    fn next(&mut self, cx: &ExecContext) -> Result<Option<Chunk>> {
        if let Some((offset, count)) = self.unresolved.take() {
            self.skip = offset.resolve(cx.params)?;
            self.remaining = match count {
                Some(count) => count.resolve(cx.params)?,
                None => u64::MAX,
            };
        }
        while self.remaining > 0 {
            let Some(chunk) = self.input.next(cx)? else {
                if self.count_all {
                    cx.rows_before_limit.set(Some(self.seen));
                }
                return Ok(None);
            };
            let len = chunk.len() as u64;
            self.seen += len;
            if self.skip >= len {
                self.skip -= len;
                continue;
            }
            let start = self.skip as usize;
            self.skip = 0;
            let take = (len - start as u64).min(self.remaining) as usize;
            self.remaining -= take as u64;
            return Ok(Some(chunk.slice(start, start + take)));
        }
        if self.count_all {
            while let Some(chunk) = self.input.next(cx)? {
                self.seen += chunk.len() as u64;
            }
            cx.rows_before_limit.set(Some(self.seen));
            self.count_all = false;
        }
        Ok(None)
    }
}

struct DistinctOp<'p> {
    input: Box<dyn Operator + 'p>,
    /// The collation each column compares strings under.
    collations: Vec<Collation>,
    /// The keys of the rows passed on. Hashed with foldhash, not SipHash: keys are
    /// whole rows, and SipHash took a tenth of sysbench's `distinct_range`.
    seen: HashSet<Vec<u8>, foldhash::fast::RandomState>,
}

impl Operator for DistinctOp<'_> {
    fn next(&mut self, cx: &ExecContext) -> Result<Option<Chunk>> {
        while let Some(chunk) = self.input.next(cx)? {
            self.seen.reserve(chunk.len());
            let mut keep = vec![false; chunk.len()];
            // One buffer builds every row's key; a new key is copied at its size.
            let mut key = Vec::new();
            for (i, slot) in keep.iter_mut().enumerate() {
                key.clear();
                for (c, &collation) in chunk.columns().iter().zip(&self.collations) {
                    join_key(&c[i], collation, &mut key);
                    key.push(0xFE);
                }
                if !self.seen.contains(&key) {
                    cx.memory.charge(key.len() + 32)?;
                    self.seen.insert(key.clone());
                    *slot = true;
                }
            }
            let chunk = chunk.filter(&keep);
            if !chunk.is_empty() {
                return Ok(Some(chunk));
            }
        }
        Ok(None)
    }
}

struct UnionOp<'p> {
    inputs: Vec<Box<dyn Operator + 'p>>,
    current: usize,
}

impl Operator for UnionOp<'_> {
    fn next(&mut self, cx: &ExecContext) -> Result<Option<Chunk>> {
        while self.current < self.inputs.len() {
            if let Some(chunk) = self.inputs[self.current].next(cx)? {
                return Ok(Some(chunk));
            }
            self.current += 1;
        }
        Ok(None)
    }
}

// ------------------------------------------------------------------ subqueries

impl ExecContext<'_> {
    /// Runs a subquery once with `outer` as its enclosing row.
    fn run_subquery(&self, s: &SubqueryExpr, outer: Vec<Value>) -> Result<SubqueryResult> {
        let cx = self.with_outer(outer);
        Ok(match &s.kind {
            SubqueryKind::Scalar => {
                let mut op = open(&s.plan)?;
                let mut value = Value::Null;
                let mut seen = 0usize;
                while let Some(chunk) = op.next(&cx)? {
                    seen += chunk.len();
                    if seen > 1 {
                        return Err(Error::sql(
                            1242,
                            "21000",
                            "Subquery returns more than 1 row",
                        ));
                    }
                    value = chunk.column(0)[0].clone();
                }
                SubqueryResult::Scalar(value)
            }
            SubqueryKind::Exists { .. } => {
                let mut op = open(&s.plan)?;
                SubqueryResult::Exists(op.next(&cx)?.is_some())
            }
            SubqueryKind::Quantified { .. } => {
                let mut values = Vec::new();
                let mut op = open(&s.plan)?;
                while let Some(chunk) = op.next(&cx)? {
                    self.memory.charge(chunk.memory_bytes())?;
                    values.extend(chunk.column(0).iter().cloned());
                }
                SubqueryResult::Values(Arc::new(values))
            }
            SubqueryKind::In { collation, .. } => {
                let mut keys = HashSet::new();
                let mut has_null = false;
                let mut empty = true;
                let mut op = open(&s.plan)?;
                while let Some(chunk) = op.next(&cx)? {
                    empty = false;
                    for v in chunk.column(0) {
                        if v.is_null() {
                            has_null = true;
                            continue;
                        }
                        let mut k = Vec::new();
                        join_key(v, *collation, &mut k);
                        self.memory.charge(k.len() + 32)?;
                        keys.insert(k);
                    }
                }
                SubqueryResult::Set {
                    keys: Arc::new(keys),
                    has_null,
                    empty,
                }
            }
        })
    }

    fn cached_result(&self, s: &SubqueryExpr, outer: &[Value]) -> Result<SubqueryResult> {
        let id = s as *const SubqueryExpr as usize;
        if let Some((plan, columns)) = &s.grouped {
            // One grouped run answers every outer row whose key it saw; a key it did
            // not see is an empty group, which the correlated plan answers below. Keys
            // compare under the grouped columns' collations (the correlated `=`'s).
            let collations = group_collations(plan.columns(), columns.len());
            const GROUPED: &[u8] = b"\xffgrouped";
            let cached = self.cache.borrow().get(&(id, GROUPED.to_vec())).cloned();
            let map = match cached {
                Some(SubqueryResult::Map(map)) => map,
                _ => {
                    let mut map = HashMap::new();
                    for chunk in collect(plan, self)? {
                        self.memory.charge(chunk.memory_bytes())?;
                        let width = columns.len();
                        for i in 0..chunk.len() {
                            let mut key = Vec::new();
                            for (c, &collation) in collations.iter().enumerate() {
                                join_key(&chunk.column(c)[i], collation, &mut key);
                                key.push(0xFE);
                            }
                            map.insert(key, chunk.column(width)[i].clone());
                        }
                    }
                    let map = Arc::new(map);
                    self.cache
                        .borrow_mut()
                        .insert((id, GROUPED.to_vec()), SubqueryResult::Map(map.clone()));
                    map
                }
            };
            let probes: Vec<&Value> = columns
                .iter()
                .map(|&c| outer.get(c).unwrap_or(&Value::Null))
                .collect();
            if let Some(key) = keys_of(&probes, &collations) {
                if let Some(v) = map.get(&key) {
                    return Ok(SubqueryResult::Scalar(v.clone()));
                }
            }
            // A key with no rows (or a NULL key, which matches none): the aggregate
            // of nothing, the same for every such key. A row of NULLs selects nothing.
            const EMPTY: &[u8] = b"\xffempty";
            if let Some(r) = self.cache.borrow().get(&(id, EMPTY.to_vec())) {
                return Ok(r.clone());
            }
            let nulls =
                vec![Value::Null; outer.len().max(columns.iter().max().map_or(0, |m| m + 1))];
            let result = self.run_subquery(s, nulls)?;
            self.cache
                .borrow_mut()
                .insert((id, EMPTY.to_vec()), result.clone());
            return Ok(result);
        }
        let mut key = Vec::new();
        for &c in &s.outer_columns {
            join_key(
                outer.get(c).unwrap_or(&Value::Null),
                Collation::Binary,
                &mut key,
            );
            key.push(0xFE);
        }
        if let Some(r) = self.cache.borrow().get(&(id, key.clone())) {
            return Ok(r.clone());
        }
        let result = self.run_subquery(s, outer.to_vec())?;
        let mut cache = self.cache.borrow_mut();
        if cache.len() < CORRELATED_CACHE_ENTRIES_MAX {
            cache.insert((id, key), result.clone());
        }
        Ok(result)
    }
}

impl SubqueryRunner for ExecContext<'_> {
    fn eval(
        &self,
        s: &SubqueryExpr,
        probes: Option<&[Value]>,
        chunk: &Chunk,
        _cx: &EvalContext,
    ) -> Result<Vec<Value>> {
        let mut out = Vec::with_capacity(chunk.len());
        if !s.correlated {
            let result = self.cached_result(s, &[])?;
            for i in 0..chunk.len() {
                out.push(subquery::apply(&s.kind, &result, probes.map(|p| &p[i])));
            }
            return Ok(out);
        }
        for i in 0..chunk.len() {
            let row = chunk.row(i);
            let result = self.cached_result(s, &row)?;
            out.push(subquery::apply(&s.kind, &result, probes.map(|p| &p[i])));
        }
        Ok(out)
    }
}

/// EXPLAIN ANALYZE: runs `plan` and annotates each node with the rows it returned
/// and the time spent in it and below it.
pub fn explain_analyze(plan: &Plan, cx: &ExecContext) -> Result<Vec<String>> {
    let profile = RefCell::new(HashMap::new());
    let profiled = ExecContext {
        profile: Some(&profile),
        ..cx.with_outer(Vec::new())
    };
    let started = Instant::now();
    let mut op = open(plan)?;
    while op.next(&profiled)?.is_some() {}
    drop(op);
    let elapsed = started.elapsed();
    let profile = profile.into_inner();
    let mut lines = Vec::new();
    plan.explain_with(0, &mut lines, &|node: &Plan| match profile
        .get(&(node as *const Plan as usize))
    {
        Some((rows, ns)) => format!(
            "{} (actual rows={rows} time={:.3} ms)",
            crate::parallel::describe(node),
            *ns as f64 / 1e6
        ),
        None => " (inside the parallel pipeline above, or never executed)".to_string(),
    });
    lines.push(format!(
        "Total: {:.3} ms, {} bytes of operator memory",
        elapsed.as_secs_f64() * 1e3,
        cx.memory.used_bytes()
    ));
    Ok(lines)
}
