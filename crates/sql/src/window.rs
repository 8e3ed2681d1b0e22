//! Window functions: what a [`Plan::Window`](crate::plan::Plan::Window) node computes,
//! and its operator.
//!
//! The binder (`bind/window.rs`) turns each `f(...) OVER (...)` of a select list or
//! ORDER BY into a [`WindowCall`] and gathers the calls that share a window (the same
//! bound [`WindowSpec`]) into one `Plan::Window` node. The nodes sit above WHERE,
//! GROUP BY and HAVING (so a call may take aggregates as arguments, and its window may
//! order by them) and below the projection, DISTINCT, ORDER BY and LIMIT, as in MySQL.
//! A node outputs its input's columns followed by one column per call.
//!
//! [`WindowOp`] materialises its whole input (charged to the statement's memory
//! budget), sorts the rows by the partition keys and then the order keys with the
//! executor's sort ([`crate::exec::sort_rows`], which compares strings under each
//! key's collation, so `'a'` and `'A'` share a partition under `_ci`), and then walks
//! each partition once per call. Its rows leave in that sorted order. Several windows
//! mean several nodes, each sorting again.
//!
//! Frames (MySQL 8's semantics):
//! - without a frame clause the frame is `RANGE BETWEEN UNBOUNDED PRECEDING AND
//!   CURRENT ROW`: with ORDER BY, the partition up to the current row's last peer (rows
//!   equal on every order key); without ORDER BY every row is a peer, so the whole
//!   partition;
//! - `ROWS` bounds count rows; `RANGE` bounds are peer groups (`CURRENT ROW`) or values
//!   (`n PRECEDING`: rows whose single order key is within `n` of the current row's, in
//!   the order's direction; a NULL key's frame is its NULL peers);
//! - ROW_NUMBER, RANK, DENSE_RANK, PERCENT_RANK, CUME_DIST, NTILE, LAG and LEAD ignore
//!   the frame; FIRST_VALUE, LAST_VALUE, NTH_VALUE and the aggregates use it.
//!
//! Invariant the aggregates rely on: within a partition, both ends of the frame move
//! only forwards as the current row does (true of every frame the binder accepts, as
//! each bound is monotone in the current row's position). So an aggregate keeps one
//! [`Accumulator`] per partition and folds in the rows entering the frame; rows
//! leaving it are taken back with [`Accumulator::remove`] (COUNT, SUM, AVG), dropped
//! from a monotone queue (MIN, MAX), or, for the functions that can do neither
//! (BIT_AND, BIT_OR), the frame is folded again. Each step but the last is linear in
//! the rows the frame gains and loses; folding again costs the frame's rows.
//!
//! [`Accumulator`]: crate::scalar::agg::Accumulator
//! [`Accumulator::remove`]: crate::scalar::agg::Accumulator::remove

use std::cmp::Ordering;
use std::collections::VecDeque;
use std::sync::Arc;

use tarn_common::{Error, Result};
use tarn_row::Value;

use crate::chunk::Chunk;
use crate::exec::{ExecContext, Operator, SortKeys, accumulator, sort_rows, update_agg};
use crate::expr::Expr;
use crate::plan::{AggCall, SortKey};
use crate::scalar::agg::AggFunc;
use crate::scalar::{cast, compare};
use crate::types::SqlType;

/// A window function and its arguments (expressions over the node's input row).
#[derive(Clone, Debug)]
pub enum WindowFunc {
    RowNumber,
    Rank,
    DenseRank,
    PercentRank,
    CumeDist,
    /// `NTILE(buckets)`: `buckets` is a constant (a literal or a parameter).
    Ntile {
        buckets: Expr,
    },
    /// `LAG(value, offset, default)` (`lead`: LEAD). `offset` is a constant; `default`
    /// is read on the current row.
    Shift {
        value: Expr,
        offset: Expr,
        default: Option<Expr>,
        lead: bool,
    },
    FirstValue(Expr),
    LastValue(Expr),
    /// `NTH_VALUE(value, n)`: `n` is a constant.
    NthValue {
        value: Expr,
        n: Expr,
    },
    /// COUNT, SUM, AVG, MIN, MAX, BIT_AND, BIT_OR over the frame (never DISTINCT).
    Aggregate(AggCall),
}

impl WindowFunc {
    /// The expressions read on every input row, in the order [`WindowOp`] evaluates
    /// them (the constants NTILE, LAG, LEAD and NTH_VALUE read once are not among
    /// them).
    pub fn row_exprs(&self) -> Vec<&Expr> {
        match self {
            WindowFunc::RowNumber
            | WindowFunc::Rank
            | WindowFunc::DenseRank
            | WindowFunc::PercentRank
            | WindowFunc::CumeDist
            | WindowFunc::Ntile { .. } => vec![],
            WindowFunc::Shift { value, default, .. } => {
                std::iter::once(value).chain(default.as_ref()).collect()
            }
            WindowFunc::FirstValue(value)
            | WindowFunc::LastValue(value)
            | WindowFunc::NthValue { value, .. } => vec![value],
            WindowFunc::Aggregate(call) => call.exprs().collect(),
        }
    }

    /// Every expression of the call, constants included.
    pub fn exprs(&self) -> Vec<&Expr> {
        let mut out = self.row_exprs();
        match self {
            WindowFunc::Ntile { buckets: n }
            | WindowFunc::Shift { offset: n, .. }
            | WindowFunc::NthValue { n, .. } => out.push(n),
            _ => {}
        }
        out
    }

    /// True if the function reads its frame (the others see the whole partition).
    pub fn uses_frame(&self) -> bool {
        matches!(
            self,
            WindowFunc::FirstValue(_)
                | WindowFunc::LastValue(_)
                | WindowFunc::NthValue { .. }
                | WindowFunc::Aggregate(_)
        )
    }
}

/// One window function call of a [`Plan::Window`](crate::plan::Plan::Window) node.
#[derive(Clone, Debug)]
pub struct WindowCall {
    pub func: WindowFunc,
    /// The result's type.
    pub ty: SqlType,
    /// The call as written (EXPLAIN, the column's name).
    pub text: String,
}

/// One end of a frame.
#[derive(Clone, Debug)]
pub enum FrameBound {
    UnboundedPreceding,
    /// ROWS: this many rows before the current one.
    RowsPreceding(u64),
    /// ROWS: the current row; RANGE: its peer group (its first peer as a start, its
    /// last as an end).
    CurrentRow,
    /// ROWS: this many rows after the current one.
    RowsFollowing(u64),
    UnboundedFollowing,
    /// RANGE `n PRECEDING` / `n FOLLOWING`: `limit` is the current row's order key
    /// moved by `n` (`key - n`, `key + n`, or a date moved by an INTERVAL) against or
    /// along the order's direction; the frame starts at the first row whose key is not
    /// before it, and ends at the last row whose key is not after it.
    RangeValue {
        limit: Expr,
    },
}

/// `ROWS` or `RANGE` frame bounds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrameUnits {
    Rows,
    Range,
}

/// The rows of its partition a call's frame holds around the current row.
#[derive(Clone, Debug)]
pub struct Frame {
    pub units: FrameUnits,
    pub start: FrameBound,
    pub end: FrameBound,
}

impl Frame {
    /// MySQL's frame when the window has none: `RANGE BETWEEN UNBOUNDED PRECEDING AND
    /// CURRENT ROW`.
    pub fn default_frame() -> Frame {
        Frame {
            units: FrameUnits::Range,
            start: FrameBound::UnboundedPreceding,
            end: FrameBound::CurrentRow,
        }
    }

    fn describe(&self) -> String {
        let bound = |b: &FrameBound, start: bool| match b {
            FrameBound::UnboundedPreceding => "UNBOUNDED PRECEDING".to_string(),
            FrameBound::RowsPreceding(n) => format!("{n} PRECEDING"),
            FrameBound::CurrentRow => "CURRENT ROW".to_string(),
            FrameBound::RowsFollowing(n) => format!("{n} FOLLOWING"),
            FrameBound::UnboundedFollowing => "UNBOUNDED FOLLOWING".to_string(),
            FrameBound::RangeValue { .. } if start => "n PRECEDING".to_string(),
            FrameBound::RangeValue { .. } => "n FOLLOWING".to_string(),
        };
        format!(
            "{} BETWEEN {} AND {}",
            match self.units {
                FrameUnits::Rows => "ROWS",
                FrameUnits::Range => "RANGE",
            },
            bound(&self.start, true),
            bound(&self.end, false)
        )
    }

    /// The limit expressions a RANGE frame evaluates per row.
    fn limits(&self) -> impl Iterator<Item = &Expr> {
        [&self.start, &self.end]
            .into_iter()
            .filter_map(|b| match b {
                FrameBound::RangeValue { limit } => Some(limit),
                _ => None,
            })
    }
}

/// A window: how rows are partitioned and ordered, and the frame of the calls that
/// read one. Calls whose windows are equal share a
/// [`Plan::Window`](crate::plan::Plan::Window) node.
#[derive(Clone, Debug)]
pub struct WindowSpec {
    /// PARTITION BY keys (ascending; rows equal on all, under each key's collation,
    /// form a partition).
    pub partition: Vec<SortKey>,
    pub order: Vec<SortKey>,
    pub frame: Frame,
}

impl WindowSpec {
    /// Every expression the window evaluates over its input rows.
    pub fn exprs(&self) -> impl Iterator<Item = &Expr> {
        self.partition
            .iter()
            .chain(&self.order)
            .map(|k| &k.expr)
            .chain(self.frame.limits())
    }

    /// EXPLAIN's description.
    pub fn describe(&self, calls: usize) -> String {
        format!(
            "Window ({calls} function{}, partition by {} keys, order by {} keys, {})",
            if calls == 1 { "" } else { "s" },
            self.partition.len(),
            self.order.len(),
            self.frame.describe()
        )
    }
}

/// An estimate of the memory a column of values holds.
fn values_bytes(values: &[Value]) -> usize {
    values
        .iter()
        .map(|v| {
            std::mem::size_of::<Value>()
                + match v {
                    Value::Bytes(b) => b.capacity(),
                    _ => 0,
                }
        })
        .sum()
}

/// Runs a [`Plan::Window`](crate::plan::Plan::Window) node (see the module documentation).
pub struct WindowOp<'p> {
    pub(crate) input: Option<Box<dyn Operator + 'p>>,
    pub(crate) spec: &'p WindowSpec,
    pub(crate) calls: &'p [WindowCall],
    pub(crate) output: Option<std::vec::IntoIter<Chunk>>,
}

impl Operator for WindowOp<'_> {
    fn next(&mut self, cx: &ExecContext) -> Result<Option<Chunk>> {
        if self.output.is_none() {
            self.output = Some(self.run(cx)?.into_iter());
        }
        Ok(self.output.as_mut().and_then(Iterator::next))
    }
}

/// The rows of one input, sorted, as a call's computation reads them.
struct Sorted<'a> {
    /// The input row at each sorted position.
    order: &'a [usize],
    keys: &'a SortKeys,
    /// The number of partition keys (the first of `keys`' columns).
    partition_keys: usize,
    /// Per sorted position: where its peer group starts and ends (exclusive).
    peer_start: &'a [usize],
    peer_end: &'a [usize],
    /// Per RANGE value bound (start, end): its limit per input row.
    start_limit: Option<&'a [Value]>,
    end_limit: Option<&'a [Value]>,
}

impl Sorted<'_> {
    /// Sorted position `p`'s first order key against `limit`, in the order's direction.
    fn key_vs(&self, p: usize, limit: &Value) -> Ordering {
        let k = self.partition_keys;
        let ordering = compare::sort_cmp(
            &self.keys.columns[k][self.order[p]],
            limit,
            self.keys.collations[k],
        );
        if self.keys.descending[k] {
            ordering.reverse()
        } else {
            ordering
        }
    }

    /// The frame of sorted position `p` in the partition `ps..pe`, as positions
    /// `start..end` (empty when `start >= end`).
    fn frame(&self, frame: &Frame, p: usize, ps: usize, pe: usize) -> (usize, usize) {
        let start = match &frame.start {
            FrameBound::UnboundedPreceding => ps,
            FrameBound::RowsPreceding(n) => p.saturating_sub(*n as usize).max(ps),
            FrameBound::CurrentRow if frame.units == FrameUnits::Rows => p,
            FrameBound::CurrentRow => self.peer_start[p],
            FrameBound::RowsFollowing(n) => p.saturating_add(*n as usize).min(pe),
            FrameBound::UnboundedFollowing => pe,
            FrameBound::RangeValue { .. } => {
                let limit = &self.start_limit.expect("a RANGE start's limits")[self.order[p]];
                first_where(ps, pe, |q| self.key_vs(q, limit) != Ordering::Less)
            }
        };
        let end = match &frame.end {
            FrameBound::UnboundedPreceding => ps,
            FrameBound::RowsPreceding(n) => (p + 1).saturating_sub(*n as usize).max(ps),
            FrameBound::CurrentRow if frame.units == FrameUnits::Rows => p + 1,
            FrameBound::CurrentRow => self.peer_end[p],
            FrameBound::RowsFollowing(n) => p.saturating_add(*n as usize).saturating_add(1).min(pe),
            FrameBound::UnboundedFollowing => pe,
            FrameBound::RangeValue { .. } => {
                let limit = &self.end_limit.expect("a RANGE end's limits")[self.order[p]];
                first_where(ps, pe, |q| self.key_vs(q, limit) == Ordering::Greater)
            }
        };
        (start, end)
    }
}

/// The first position in `lo..hi` where `holds` does (`hi` if none), for a `holds`
/// false and then true along the range (a binary search).
fn first_where(mut lo: usize, mut hi: usize, holds: impl Fn(usize) -> bool) -> usize {
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if holds(mid) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    lo
}

/// A constant argument (NTILE's buckets, LAG's offset, NTH_VALUE's N) as a count:
/// an integer of at least `least`; 1210 otherwise.
fn constant_count(expr: &Expr, least: i64, name: &str, cx: &ExecContext) -> Result<usize> {
    let v = expr.eval_row(&[], &cx.eval_cx())?;
    let integral = match &v {
        Value::Int(_) | Value::UInt(_) => true,
        Value::Decimal(d) => d.scale() == 0 || d.normalized().scale() == 0,
        _ => false,
    };
    match cast::to_i64(&v) {
        Some(n) if integral && n >= least => Ok(usize::try_from(n).unwrap_or(usize::MAX)),
        _ => Err(Error::sql(
            1210,
            "HY000",
            format!("Incorrect arguments to {name}"),
        )),
    }
}

/// How an aggregate's state follows a frame whose start moves.
enum Follow {
    /// Take leaving rows back
    /// ([`Accumulator::remove`](crate::scalar::agg::Accumulator::remove)).
    Remove,
    /// MIN / MAX: a queue of the positions that may still be the extreme, best first.
    Queue { max: bool },
    /// Fold the whole frame again.
    Refold,
}

impl WindowOp<'_> {
    fn run(&mut self, cx: &ExecContext) -> Result<Vec<Chunk>> {
        let mut input = self.input.take().expect("a window runs once");
        let spec = self.spec;
        let ecx = cx.eval_cx();
        let key_exprs: Vec<&SortKey> = spec.partition.iter().chain(&spec.order).collect();
        let mut key_columns: Vec<Vec<Value>> = key_exprs.iter().map(|_| Vec::new()).collect();
        let mut arg_columns: Vec<Vec<Vec<Value>>> = self
            .calls
            .iter()
            .map(|c| c.func.row_exprs().iter().map(|_| Vec::new()).collect())
            .collect();
        let start_limit = match &spec.frame.start {
            FrameBound::RangeValue { limit } => Some(limit),
            _ => None,
        };
        let end_limit = match &spec.frame.end {
            FrameBound::RangeValue { limit } => Some(limit),
            _ => None,
        };
        let mut limit_columns: [Vec<Value>; 2] = [Vec::new(), Vec::new()];
        let mut all = Chunk::default();
        while let Some(chunk) = input.next(cx)? {
            cx.cancel.check()?;
            cx.memory.charge(chunk.memory_bytes())?;
            let extend = |column: &mut Vec<Value>, expr: &Expr| -> Result<()> {
                let values = expr.eval(&chunk, &ecx)?;
                cx.memory.charge(values_bytes(&values))?;
                column.extend(values);
                Ok(())
            };
            for (k, column) in key_exprs.iter().zip(key_columns.iter_mut()) {
                extend(column, &k.expr)?;
            }
            for (call, columns) in self.calls.iter().zip(arg_columns.iter_mut()) {
                for (e, column) in call.func.row_exprs().into_iter().zip(columns.iter_mut()) {
                    extend(column, e)?;
                }
            }
            for (limit, column) in [start_limit, end_limit]
                .iter()
                .zip(limit_columns.iter_mut())
            {
                if let Some(limit) = limit {
                    extend(column, limit)?;
                }
            }
            all.append(chunk);
        }
        let n = all.len();
        if n == 0 {
            return Ok(Vec::new());
        }
        let keys = Arc::new(SortKeys {
            columns: key_columns,
            descending: key_exprs.iter().map(|k| k.descending).collect(),
            collations: key_exprs.iter().map(|k| k.collation).collect(),
        });
        let order = if keys.columns.is_empty() {
            // `OVER ()`: one partition in input order.
            (0..n).collect()
        } else {
            sort_rows(keys.clone())?
        };
        // Peer groups (and partitions) by sorted position.
        cx.memory
            .charge(n * (3 * std::mem::size_of::<usize>() + self.calls.len() * 32))?;
        let partition_keys = spec.partition.len();
        let equal_on = |range: std::ops::Range<usize>, a: usize, b: usize| {
            range.into_iter().all(|k| {
                compare::sort_cmp(
                    &keys.columns[k][order[a]],
                    &keys.columns[k][order[b]],
                    keys.collations[k],
                ) == Ordering::Equal
            })
        };
        // A new partition starts at `p` when a partition key differs from `p - 1`'s.
        let mut partition_starts = vec![0];
        let mut peer_start = vec![0usize; n];
        for p in 1..n {
            if !equal_on(0..partition_keys, p - 1, p) {
                partition_starts.push(p);
                peer_start[p] = p;
            } else if equal_on(partition_keys..keys.columns.len(), p - 1, p) {
                peer_start[p] = peer_start[p - 1];
            } else {
                peer_start[p] = p;
            }
        }
        let mut peer_end = vec![n; n];
        for p in (0..n.saturating_sub(1)).rev() {
            peer_end[p] = if peer_start[p + 1] == peer_start[p] {
                peer_end[p + 1]
            } else {
                p + 1
            };
        }
        let sorted = Sorted {
            order: &order,
            keys: &keys,
            partition_keys,
            peer_start: &peer_start,
            peer_end: &peer_end,
            start_limit: start_limit.map(|_| &limit_columns[0][..]),
            end_limit: end_limit.map(|_| &limit_columns[1][..]),
        };
        partition_starts.push(n);
        let mut results: Vec<Vec<Value>> = Vec::with_capacity(self.calls.len());
        for (call, args) in self.calls.iter().zip(&arg_columns) {
            let mut out = Vec::with_capacity(n);
            for bounds in partition_starts.windows(2) {
                cx.cancel.check()?;
                compute(
                    call,
                    args,
                    &sorted,
                    &spec.frame,
                    bounds[0],
                    bounds[1],
                    cx,
                    &mut out,
                )?;
            }
            results.push(out);
        }
        // The input's rows in sorted order (moved, not cloned), then the results.
        let mut columns = all.into_columns();
        for column in &mut columns {
            let mut values: Vec<Value> = Vec::with_capacity(n);
            for &i in &order {
                values.push(std::mem::replace(&mut column[i], Value::Null));
            }
            *column = values;
        }
        columns.extend(results);
        Ok(Chunk::from_columns(columns, n).split())
    }
}

/// Pushes `call`'s value for every row of the partition `ps..pe` (sorted positions)
/// onto `out`. `args` are the call's per-row columns (by input row).
#[allow(clippy::too_many_arguments)]
fn compute(
    call: &WindowCall,
    args: &[Vec<Value>],
    sorted: &Sorted,
    frame: &Frame,
    ps: usize,
    pe: usize,
    cx: &ExecContext,
    out: &mut Vec<Value>,
) -> Result<()> {
    let rows = pe - ps;
    let order = sorted.order;
    let at = |column: usize, p: usize| args[column][order[p]].clone();
    match &call.func {
        WindowFunc::RowNumber => {
            out.extend((1..=rows).map(|r| Value::Int(r as i64)));
        }
        WindowFunc::Rank => {
            out.extend((ps..pe).map(|p| Value::Int((sorted.peer_start[p] - ps + 1) as i64)));
        }
        WindowFunc::DenseRank => {
            let mut rank = 0i64;
            for p in ps..pe {
                if sorted.peer_start[p] == p {
                    rank += 1;
                }
                out.push(Value::Int(rank));
            }
        }
        WindowFunc::PercentRank => {
            for p in ps..pe {
                let value = if rows <= 1 {
                    0.0
                } else {
                    (sorted.peer_start[p] - ps) as f64 / (rows - 1) as f64
                };
                out.push(Value::Double(value));
            }
        }
        WindowFunc::CumeDist => {
            for p in ps..pe {
                out.push(Value::Double(
                    (sorted.peer_end[p] - ps) as f64 / rows as f64,
                ));
            }
        }
        WindowFunc::Ntile { buckets } => {
            let buckets = constant_count(buckets, 1, "ntile", cx)?;
            // `rows / buckets` rows each, the first `rows % buckets` buckets one more.
            let small = rows / buckets;
            let large_buckets = rows % buckets;
            let large_rows = large_buckets * (small + 1);
            for r in 0..rows {
                let bucket = if r < large_rows {
                    r / (small + 1)
                } else {
                    large_buckets + (r - large_rows) / small.max(1)
                };
                out.push(Value::Int(bucket as i64 + 1));
            }
        }
        WindowFunc::Shift { offset, lead, .. } => {
            let offset = constant_count(offset, 0, if *lead { "lead" } else { "lag" }, cx)?;
            for p in ps..pe {
                let target = if *lead {
                    p.checked_add(offset).filter(|&t| t < pe)
                } else {
                    p.checked_sub(offset).filter(|&t| t >= ps)
                };
                out.push(match target {
                    Some(t) => at(0, t),
                    None if args.len() > 1 => at(1, p),
                    None => Value::Null,
                });
            }
        }
        WindowFunc::FirstValue(_) | WindowFunc::LastValue(_) | WindowFunc::NthValue { .. } => {
            let nth = match &call.func {
                WindowFunc::NthValue { n, .. } => Some(constant_count(n, 1, "nth_value", cx)?),
                _ => None,
            };
            for p in ps..pe {
                let (start, end) = sorted.frame(frame, p, ps, pe);
                let pick = match (&call.func, nth) {
                    _ if start >= end => None,
                    (WindowFunc::FirstValue(_), _) => Some(start),
                    (WindowFunc::LastValue(_), _) => Some(end - 1),
                    (_, Some(n)) => start.checked_add(n - 1).filter(|&q| q < end),
                    _ => None,
                };
                out.push(pick.map_or(Value::Null, |q| at(0, q)));
            }
        }
        WindowFunc::Aggregate(agg) => aggregate(agg, args, sorted, frame, ps, pe, cx, out)?,
    }
    Ok(())
}

/// An aggregate over each row's frame in the partition `ps..pe` (see the module
/// documentation for how its state follows the frame).
#[allow(clippy::too_many_arguments)]
fn aggregate(
    agg: &AggCall,
    args: &[Vec<Value>],
    sorted: &Sorted,
    frame: &Frame,
    ps: usize,
    pe: usize,
    cx: &ExecContext,
    out: &mut Vec<Value>,
) -> Result<()> {
    let order = sorted.order;
    let fresh = || accumulator(agg, cx.functions);
    let follow = match agg.func {
        AggFunc::Min | AggFunc::Max => Follow::Queue {
            max: agg.func == AggFunc::Max,
        },
        AggFunc::Count | AggFunc::CountStar | AggFunc::Sum | AggFunc::Avg | AggFunc::BitXor => {
            Follow::Remove
        }
        _ => Follow::Refold,
    };
    let collation = agg.arg_type.collation();
    let value = |q: usize| args.first().map_or(&Value::Null, |c| &c[order[q]]);
    // The frame the state holds: positions `held_start..held_end`.
    let mut acc = fresh();
    let (mut held_start, mut held_end) = (ps, ps);
    let mut queue: VecDeque<usize> = VecDeque::new();
    let queued = matches!(follow, Follow::Queue { .. })
        && !matches!(frame.start, FrameBound::UnboundedPreceding);
    for p in ps..pe {
        if (p - ps) % crate::limits::CHUNK_ROWS == 0 {
            cx.cancel.check()?;
        }
        let (start, end) = sorted.frame(frame, p, ps, pe);
        if start >= end {
            out.push(fresh().finish()?);
            continue;
        }
        if start < held_start || end < held_end || start >= held_end {
            acc = fresh();
            queue.clear();
            (held_start, held_end) = (start, start);
        }
        while held_end < end {
            if queued {
                if let Follow::Queue { max } = follow {
                    let v = value(held_end);
                    if !v.is_null() {
                        // Later equal values stay behind earlier ones: the first
                        // extreme is the answer, as an accumulator keeps it.
                        while let Some(&back) = queue.back() {
                            let ordering = compare::sort_cmp(value(back), v, collation);
                            let worse = if max {
                                ordering == Ordering::Less
                            } else {
                                ordering == Ordering::Greater
                            };
                            if !worse {
                                break;
                            }
                            queue.pop_back();
                        }
                        queue.push_back(held_end);
                    }
                }
            } else {
                update_agg(agg, &mut acc, args, order[held_end])?;
            }
            held_end += 1;
        }
        if held_start < start {
            let mut refold = !queued && matches!(follow, Follow::Refold);
            if queued {
                while queue.front().is_some_and(|&q| q < start) {
                    queue.pop_front();
                }
            } else if !refold {
                for q in held_start..start {
                    let leaving = args.first().map_or(&Value::Int(1), |c| &c[order[q]]);
                    if !acc.remove(leaving)? {
                        refold = true;
                        break;
                    }
                }
            }
            if refold {
                acc = fresh();
                for &row in &order[start..end] {
                    update_agg(agg, &mut acc, args, row)?;
                }
            }
            held_start = start;
        }
        out.push(if queued {
            queue.front().map_or(Value::Null, |&q| value(q).clone())
        } else {
            acc.finish()?
        });
    }
    Ok(())
}
