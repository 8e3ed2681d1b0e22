//! Parallel pipelines: scans, filters, projections and hash aggregation on all cores.
//!
//! A pipeline is a full scan of a table (S1: the storage layer's scan workers decode
//! leaves into columnar batches) followed by stateless steps (filters, projections)
//! and a sink. Each batch is a morsel: the executor's workers ([`crate::workers`])
//! take morsels from the scan one at a time, run the steps on them, and
//!
//! - for a collecting sink, send the resulting chunks back tagged with the morsel's
//!   sequence number, so the consumer can restore the scan's (primary-key) order;
//! - for an aggregating sink, fold them into a worker-local hash table of partial
//!   aggregates, which the consumer merges at the end ([`Accumulator::merge`]);
//! - for an encoding sink (a statement's result streamed to a client, S1's parallel
//!   result sending, [`stream_encoded`]), encode them into the client's wire format,
//!   each worker into a buffer of its own, and send the buffers back tagged like
//!   chunks. A morsel that needs no step but a choice of columns is encoded straight
//!   from the storage batch's typed vectors ([`RowEncoder::encode_batch`]), never
//!   turned into values; if the encoder has a [`RowEncoder::row_serializer`], such a
//!   scan skips batches and executor workers altogether: the scan's own workers
//!   serialize the stored rows ([`tarn_row::RowSerializer`]) and the consumer
//!   forwards their buffers. With parallel sending switched off
//!   ([`RowEncoder::parallel`]) only such a scan streams encoded rows, its batches
//!   encoded on the consumer's thread.
//!
//! The scan decodes only the table columns the steps and the sink read
//! ([`columns::prune`]: none at all for `COUNT(*)`), and the steps and the sink are
//! rewritten to read the pruned chunks' positions; a collecting sink puts its
//! consumer's columns back at their output positions, NULL where no one reads them,
//! as a serial scan leaves them. A pipeline that reads every column is unchanged.
//!
//! [`open_parallel`] recognises the plans this applies to: a chain of filters and
//! projections (and optionally an aggregation without DISTINCT) over a full,
//! non-locking scan, whose expressions have no subqueries or correlated references
//! (those run on the session's thread, which owns the transaction), over a table the
//! planner expects to be larger than [`PARALLEL_MIN_ROWS`]. Point lookups and small
//! ranges never get here: they run on the session's thread with no set-up.
//!
//! Bounds: each worker has at most `PARALLEL_QUEUED_CHUNKS_PER_WORKER` chunks in
//! flight to the consumer (a bounded channel), and the consumer's reorder buffer
//! holds at most the chunks of the morsels in flight.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};

use parking_lot::Mutex;
use tarn_catalog::{BatchStream, ParallelScan, RowLock};
use tarn_common::{Error, Result};
use tarn_row::types::Collation;
use tarn_row::{Batch, Value};

use crate::chunk::Chunk;
use crate::exec::{ExecContext, HashTable, Operator, build_hash_table, join_key};
use crate::expr::{EvalContext, Expr};
use crate::limits::{PARALLEL_MIN_ROWS, PARALLEL_QUEUED_CHUNKS_PER_WORKER};
use crate::plan::{Access, AggCall, JoinKind, Plan};
use crate::scalar::FnContext;
use crate::scalar::agg::Accumulator;
use crate::session::{EncodedRows, RowEncoder};
use crate::subquery::{SubqueryExpr, SubqueryRunner};

mod columns;

/// A step of a pipeline: stateless, or a probe of a hash table built before the
/// workers start (shared read-only by all of them).
#[derive(Clone)]
enum Step {
    Filter(Expr),
    Project(Vec<Expr>),
    Probe(Arc<Probe>),
}

struct Probe {
    table: HashTable,
    keys: Vec<Expr>,
    filter: Option<Expr>,
    kind: JoinKind,
    right_width: usize,
}

/// A step as the plan describes it: a probe's hash table is built when the
/// pipeline starts.
#[derive(Clone)]
enum PendingStep<'p> {
    Ready(Step),
    Build {
        right: &'p Plan,
        right_keys: Vec<Expr>,
        left_keys: Vec<Expr>,
        /// The collation each key pair compares strings under.
        collations: Vec<Collation>,
        filter: Option<Expr>,
        kind: JoinKind,
        /// The build side's columns the probe reads (`None`: all); set by
        /// [`columns::prune`].
        right_needed: Option<Vec<bool>>,
    },
}

/// The shape of a parallelisable plan: steps over a scan, bottom up.
struct Shape<'p> {
    scan: &'p Plan,
    steps: Vec<PendingStep<'p>>,
}

pub(crate) fn parallel_safe(e: &Expr) -> bool {
    let mut ok = true;
    e.visit(&mut |x| {
        if matches!(x, Expr::Subquery { .. } | Expr::Outer(_)) {
            ok = false;
        }
        // SLEEP and GET_LOCK act on the session, row after row, in order.
        if let Expr::Function { name, .. } = x
            && crate::user_locks::is_function(name)
        {
            ok = false;
        }
    });
    ok
}

/// The steps-over-a-scan shape of `plan`, if it has one.
fn shape(plan: &Plan) -> Option<Shape<'_>> {
    match plan {
        Plan::Scan {
            access: Access::Full,
            lock: RowLock::None,
            filter,
            estimated_rows,
            table,
            ..
        } => {
            let rows = crate::planner::table_rows(table).max(*estimated_rows);
            if rows < PARALLEL_MIN_ROWS as f64 || crate::workers::pool().threads() < 2 {
                return None;
            }
            let mut steps = Vec::new();
            if let Some(f) = filter {
                if !parallel_safe(f) {
                    return None;
                }
                steps.push(PendingStep::Ready(Step::Filter(f.clone())));
            }
            Some(Shape { scan: plan, steps })
        }
        Plan::Filter { input, predicate } if parallel_safe(predicate) => {
            let mut s = shape(input)?;
            s.steps
                .push(PendingStep::Ready(Step::Filter(predicate.clone())));
            Some(s)
        }
        Plan::Project { input, exprs, .. } if exprs.iter().all(parallel_safe) => {
            let mut s = shape(input)?;
            s.steps
                .push(PendingStep::Ready(Step::Project(exprs.clone())));
            Some(s)
        }
        // A hash join probes with the pipeline's rows: its build side runs first (on
        // the session's thread, itself in parallel if it is a pipeline).
        Plan::Join {
            left,
            right,
            kind,
            keys,
            filter,
            ..
        } if !keys.is_empty()
            && keys
                .iter()
                .all(|(l, r, _)| parallel_safe(l) && parallel_safe(r))
            && filter.as_ref().is_none_or(parallel_safe) =>
        {
            let mut s = shape(left)?;
            s.steps.push(PendingStep::Build {
                right,
                right_keys: keys.iter().map(|(_, r, _)| r.clone()).collect(),
                left_keys: keys.iter().map(|(l, _, _)| l.clone()).collect(),
                collations: keys.iter().map(|(_, _, c)| *c).collect(),
                filter: filter.clone(),
                kind: *kind,
                right_needed: None,
            });
            Some(s)
        }
        _ => None,
    }
}

/// EXPLAIN's note on a node that runs as a parallel pipeline ("" otherwise), with
/// the table columns its scan decodes when that is not all of them (a pipeline that
/// collects rows counts the columns its consumer may read: all).
pub fn describe(plan: &Plan) -> String {
    let pipeline = match plan {
        Plan::Aggregate {
            input,
            group,
            aggs,
            rollup: false,
            columns,
        } if group.iter().all(parallel_safe)
            && aggs
                .iter()
                .all(|a| !a.distinct && a.exprs().all(parallel_safe)) =>
        {
            shape(input).map(|s| {
                let sink = SinkSpec::Aggregate {
                    group: group.clone(),
                    collations: crate::exec::group_collations(columns, group.len()),
                    aggs: aggs.clone(),
                };
                (s, sink)
            })
        }
        Plan::Filter { .. } | Plan::Project { .. } | Plan::Scan { .. } | Plan::Join { .. } => {
            shape(plan).map(|s| (s, SinkSpec::Collect { layout: None }))
        }
        _ => None,
    };
    let Some((shape, mut sink)) = pipeline else {
        return String::new();
    };
    let Plan::Scan { table, .. } = shape.scan else {
        unreachable!("a pipeline starts at a scan");
    };
    let table_width = table.def().columns.len();
    let mut steps = shape.steps.clone();
    let decoded = match columns::prune(&mut steps, &mut sink, table_width, None) {
        Some(projection) => format!(", decoding {} of {table_width} columns", projection.len()),
        None => String::new(),
    };
    format!(
        " [parallel pipeline on {} workers{decoded}]",
        crate::workers::pool().threads()
    )
}

thread_local! {
    /// Pipelines this thread consumes that still have workers running. While one does,
    /// its workers may be blocked handing chunks to this thread; a pipeline opened
    /// under it (a subquery run while the outer one streams) would queue jobs behind
    /// them and wait for them forever, so nested pipelines run serially instead.
    static RUNNING_PIPELINES: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// True while this thread consumes a pipeline whose workers run: work it would hand
/// to the pool now must run on this thread instead (see `RUNNING_PIPELINES`).
pub fn pipeline_running() -> bool {
    RUNNING_PIPELINES.with(|r| r.get()) > 0
}

/// A parallel operator for `plan`, if it is a pipeline this module runs. `needed`
/// flags the output columns its consumer reads (`None`: all): a pipeline that
/// collects rows returns the others NULL, as a serial scan does.
pub fn open_parallel<'p>(
    plan: &'p Plan,
    needed: Option<&[bool]>,
) -> Option<Box<dyn Operator + 'p>> {
    if RUNNING_PIPELINES.with(|r| r.get()) > 0 {
        return None;
    }
    match plan {
        Plan::Aggregate {
            input,
            group,
            aggs,
            rollup: false,
            columns,
        } if group.iter().all(parallel_safe)
            && aggs
                .iter()
                .all(|a| !a.distinct && a.exprs().all(parallel_safe)) =>
        {
            let s = shape(input)?;
            Some(Box::new(ParallelOp {
                shape: s,
                sink: SinkSpec::Aggregate {
                    group: group.clone(),
                    collations: crate::exec::group_collations(columns, group.len()),
                    aggs: aggs.clone(),
                },
                needed: None,
                state: None,
            }))
        }
        Plan::Filter { .. } | Plan::Project { .. } | Plan::Scan { .. } | Plan::Join { .. } => {
            let s = shape(plan)?;
            Some(Box::new(ParallelOp {
                shape: s,
                sink: SinkSpec::Collect { layout: None },
                needed: needed.map(<[bool]>::to_vec),
                state: None,
            }))
        }
        _ => None,
    }
}

/// Streams the result of `plan` to `deliver` as buffers encoded by `encoder` on the
/// executor's workers, in result order, and returns the number of rows; `None` when
/// `plan` is not a pipeline this module runs (the caller runs it as usual).
pub fn stream_encoded(
    plan: &Plan,
    cx: &ExecContext,
    encoder: Arc<dyn RowEncoder>,
    deliver: &mut dyn FnMut(EncodedRows) -> Result<()>,
) -> Option<Result<u64>> {
    if pipeline_running()
        || !matches!(
            plan,
            Plan::Filter { .. } | Plan::Project { .. } | Plan::Scan { .. } | Plan::Join { .. }
        )
    {
        return None;
    }
    let shape = shape(plan)?;
    if !encoder.parallel() {
        let (table, columns) = direct_scan(&shape)?;
        return Some(stream_batches_serially(
            table,
            columns,
            encoder.as_ref(),
            cx,
            deliver,
        ));
    }
    if let Some(serializer) = row_serializer(&shape, encoder.as_ref()) {
        return Some(stream_serialized(&shape, serializer, cx, deliver));
    }
    let mut op = ParallelOp {
        shape,
        sink: SinkSpec::Encode(encoder),
        needed: None,
        state: None,
    };
    let mut run = || {
        op.start(cx)?;
        let mut rows = 0;
        while let Some(payload) = op.next_payload()? {
            let Payload::Encoded(encoded) = payload else {
                unreachable!("an encoding pipeline sends encoded rows");
            };
            rows += encoded.rows;
            deliver(encoded)?;
        }
        Ok(rows)
    };
    Some(run())
}

/// `shape`'s table and the table columns its output consists of, if its steps do
/// nothing but choose columns.
fn direct_scan<'s>(shape: &Shape<'s>) -> Option<(&'s Arc<tarn_catalog::Table>, Vec<usize>)> {
    let Plan::Scan { table, .. } = shape.scan else {
        return None;
    };
    let steps = shape
        .steps
        .iter()
        .map(|step| match step {
            PendingStep::Ready(step) => Some(step.clone()),
            PendingStep::Build { .. } => None,
        })
        .collect::<Option<Vec<Step>>>()?;
    let columns =
        direct_columns(&steps)?.unwrap_or_else(|| (0..table.def().columns.len()).collect());
    Some((table, columns))
}

/// The encoder's serializer for the stored rows of `shape`'s table, if its steps do
/// nothing but choose columns and the encoder has one.
fn row_serializer(
    shape: &Shape<'_>,
    encoder: &dyn RowEncoder,
) -> Option<Arc<dyn tarn_row::RowSerializer>> {
    let (table, columns) = direct_scan(shape)?;
    let types: Vec<_> = columns.iter().map(|&c| table.def().columns[c].ty).collect();
    encoder.row_serializer(&columns, &types)
}

/// Streams a scan with parallel sending switched off ([`RowEncoder::parallel`]):
/// the scan's workers decode `columns` of its rows into batches, and this thread
/// encodes them one after another.
fn stream_batches_serially(
    table: &Arc<tarn_catalog::Table>,
    columns: Vec<usize>,
    encoder: &dyn RowEncoder,
    cx: &ExecContext,
    deliver: &mut dyn FnMut(EncodedRows) -> Result<()>,
) -> Result<u64> {
    let output: Vec<usize> = (0..columns.len()).collect();
    let options = ParallelScan {
        projection: Some(columns),
        ..Default::default()
    };
    stream_scan(table, options, cx, deliver, |batch| {
        let mut bytes = Vec::new();
        encoder.encode_batch(&batch, &output, &mut bytes);
        bytes
    })
}

/// Streams a scan whose workers serialize the rows themselves: their batches are
/// the encoded rows, and no executor worker is involved.
fn stream_serialized(
    shape: &Shape<'_>,
    serializer: Arc<dyn tarn_row::RowSerializer>,
    cx: &ExecContext,
    deliver: &mut dyn FnMut(EncodedRows) -> Result<()>,
) -> Result<u64> {
    let Plan::Scan { table, .. } = shape.scan else {
        unreachable!("a pipeline starts at a scan");
    };
    let options = ParallelScan {
        serializer: Some(serializer),
        ..Default::default()
    };
    stream_scan(table, options, cx, deliver, |batch| batch.serialized)
}

/// Runs a scan of `table` as of the statement's transaction, its batches in
/// primary-key order, and delivers each as the rows `encode` makes of it on this
/// thread.
fn stream_scan(
    table: &Arc<tarn_catalog::Table>,
    options: ParallelScan,
    cx: &ExecContext,
    deliver: &mut dyn FnMut(EncodedRows) -> Result<()>,
    mut encode: impl FnMut(Batch) -> Vec<u8>,
) -> Result<u64> {
    let stream = table.parallel_scan_tx(
        &mut cx.tx.borrow_mut(),
        ParallelScan {
            ordered: true,
            ..options
        },
    )?;
    let cancel = cx.cancel_handle();
    let mut rows = 0;
    for batch in stream {
        cancel.check()?;
        let batch = batch?;
        let batch_rows = batch.len() as u64;
        rows += batch_rows;
        deliver(EncodedRows {
            rows: batch_rows,
            bytes: encode(batch),
        })?;
    }
    Ok(rows)
}

#[derive(Clone)]
enum SinkSpec {
    /// Chunks in morsel order. `layout`, set by [`columns::prune`] when the scan
    /// decodes fewer columns than the output has: the chunk position of each output
    /// column (`None`: NULL, no one reads it).
    Collect {
        layout: Option<Vec<Option<usize>>>,
    },
    /// Group keys (each compares strings under its collation) and aggregates.
    Aggregate {
        group: Vec<Expr>,
        collations: Vec<Collation>,
        aggs: Vec<AggCall>,
    },
    Encode(Arc<dyn RowEncoder>),
}

/// What a collecting or encoding pipeline sends back per morsel.
enum Payload {
    Rows(Chunk),
    Encoded(EncodedRows),
}

/// The batch columns a morsel's output consists of, when its steps do nothing but
/// choose columns (`None` for "all, in order"): such a morsel is encoded straight
/// from its batch.
fn direct_columns(steps: &[Step]) -> Option<Option<Vec<usize>>> {
    match steps {
        [] => Some(None),
        [Step::Project(exprs)] if !exprs.is_empty() => exprs
            .iter()
            .map(|e| match e {
                Expr::Column(i) => Some(*i),
                _ => None,
            })
            .collect::<Option<Vec<usize>>>()
            .map(Some),
        _ => None,
    }
}

/// A group's partial aggregate.
struct Partial {
    keys: Vec<Value>,
    accumulators: Vec<Accumulator>,
}

enum Message {
    /// A morsel's output (rows or encoded rows), by sequence number.
    Morsel(u64, Payload),
    /// A morsel that produced nothing (keeps the reorder buffer moving).
    Empty(u64),
    Groups(HashMap<Vec<u8>, Partial>),
    Failed(Error),
    /// The worker finished; it divided by zero this many times (the session's
    /// warnings count them, see [`crate::scalar::arith`]).
    Done {
        divisions_by_zero: u64,
    },
}

struct Running {
    receiver: Receiver<Message>,
    stop: Arc<AtomicBool>,
    /// Still counted in `RUNNING_PIPELINES`.
    counted: bool,
    workers_left: usize,
    next_sequence: u64,
    buffered: BTreeMap<u64, Option<Payload>>,
    /// Aggregation: the merged groups, then the output chunks.
    output: Option<std::vec::IntoIter<Chunk>>,
}

struct ParallelOp<'p> {
    shape: Shape<'p>,
    sink: SinkSpec,
    /// The output columns a collecting sink's consumer reads (`None`: all).
    needed: Option<Vec<bool>>,
    state: Option<Running>,
}

/// What a worker job owns.
struct Job {
    source: Arc<Mutex<(BatchStream, u64)>>,
    steps: Arc<Vec<Step>>,
    sink: Arc<SinkSpec>,
    params: Arc<Vec<Value>>,
    functions: FnContext,
    stop: Arc<AtomicBool>,
    cancel_check: Arc<dyn Fn() -> Result<()> + Send + Sync>,
    sender: SyncSender<Message>,
}

/// Parallel steps never hold subqueries ([`parallel_safe`]).
pub(crate) struct NoSubqueries;

impl SubqueryRunner for NoSubqueries {
    fn eval(
        &self,
        _: &SubqueryExpr,
        _: Option<&[Value]>,
        _: &Chunk,
        _: &EvalContext,
    ) -> Result<Vec<Value>> {
        Err(Error::sql(
            1105,
            "HY000",
            "a subquery reached a parallel pipeline",
        ))
    }
}

impl Job {
    fn run(self) {
        crate::scalar::arith::take_divisions_by_zero();
        let result = self.work();
        let message = match result {
            Ok(Some(groups)) => Message::Groups(groups),
            Ok(None) => Message::Done {
                divisions_by_zero: crate::scalar::arith::take_divisions_by_zero(),
            },
            Err(e) => {
                self.stop.store(true, Ordering::Relaxed);
                Message::Failed(e)
            }
        };
        let groups = matches!(message, Message::Groups(_));
        let _ = self.sender.send(message);
        if groups {
            let _ = self.sender.send(Message::Done {
                divisions_by_zero: crate::scalar::arith::take_divisions_by_zero(),
            });
        }
    }

    fn next_morsel(&self) -> Option<(u64, Result<Batch>)> {
        let mut source = self.source.lock();
        let batch = source.0.next()?;
        let sequence = source.1;
        source.1 += 1;
        drop(source);
        Some((sequence, batch))
    }

    fn work(&self) -> Result<Option<HashMap<Vec<u8>, Partial>>> {
        let runner = NoSubqueries;
        let cx = EvalContext {
            params: &self.params,
            outer: &[],
            functions: &self.functions,
            subqueries: &runner,
        };
        let mut groups: HashMap<Vec<u8>, Partial> = HashMap::new();
        let direct = match &*self.sink {
            SinkSpec::Encode(_) => direct_columns(&self.steps),
            _ => None,
        };
        let mut identity: Vec<usize> = Vec::new();
        while !self.stop.load(Ordering::Relaxed) {
            (self.cancel_check)()?;
            let Some((sequence, batch)) = self.next_morsel() else {
                break;
            };
            let batch = batch?;
            if let (SinkSpec::Encode(encoder), Some(columns)) = (&*self.sink, &direct) {
                let columns = match columns {
                    Some(columns) => columns,
                    None => {
                        // Every batch of the scan has the same columns.
                        if identity.is_empty() {
                            identity = (0..batch.projection().len()).collect();
                        }
                        &identity
                    }
                };
                let mut bytes = Vec::with_capacity(batch.len() * 16 * columns.len().max(1));
                encoder.encode_batch(&batch, columns, &mut bytes);
                let rows = EncodedRows {
                    bytes,
                    rows: batch.len() as u64,
                };
                if self.send(sequence, Payload::Encoded(rows)).is_err() {
                    return Ok(None);
                }
                continue;
            }
            let mut chunk = Chunk::from_batch(&batch);
            drop(batch);
            for step in self.steps.iter() {
                if chunk.is_empty() {
                    break;
                }
                chunk = match step {
                    Step::Filter(predicate) => {
                        let values = predicate.eval(&chunk, &cx)?;
                        let keep: Vec<bool> = values
                            .iter()
                            .map(|v| crate::scalar::cast::to_bool(v) == Some(true))
                            .collect();
                        chunk.filter(&keep)
                    }
                    Step::Probe(probe) => crate::exec::probe_hash_table(
                        &probe.table,
                        &probe.keys,
                        probe.filter.as_ref(),
                        probe.kind,
                        probe.right_width,
                        chunk,
                        &cx,
                    )?,
                    Step::Project(exprs) => {
                        let n = chunk.len();
                        let columns = exprs
                            .iter()
                            .map(|e| e.eval(&chunk, &cx))
                            .collect::<Result<Vec<_>>>()?;
                        if columns.is_empty() {
                            Chunk::empty_rows(n)
                        } else {
                            Chunk::from_columns(columns, n)
                        }
                    }
                };
            }
            match &*self.sink {
                SinkSpec::Collect { layout } => {
                    let chunk = match layout {
                        Some(layout) if !chunk.is_empty() => spread(chunk, layout),
                        _ => chunk,
                    };
                    if self.send(sequence, Payload::Rows(chunk)).is_err() {
                        return Ok(None);
                    }
                }
                SinkSpec::Encode(encoder) => {
                    let mut bytes = Vec::new();
                    encoder.encode_chunk(&chunk, &mut bytes);
                    let rows = EncodedRows {
                        bytes,
                        rows: chunk.len() as u64,
                    };
                    if self.send(sequence, Payload::Encoded(rows)).is_err() {
                        return Ok(None);
                    }
                }
                SinkSpec::Aggregate {
                    group,
                    collations,
                    aggs,
                } => {
                    if !chunk.is_empty() {
                        fold(&chunk, group, collations, aggs, &cx, &mut groups)?;
                    }
                }
            }
        }
        Ok(match &*self.sink {
            SinkSpec::Collect { .. } | SinkSpec::Encode(_) => None,
            SinkSpec::Aggregate { .. } => Some(groups),
        })
    }

    /// Sends a morsel's output back (an empty one as a gap in the sequence); fails
    /// when the consumer has gone.
    fn send(&self, sequence: u64, payload: Payload) -> std::result::Result<(), ()> {
        let empty = match &payload {
            Payload::Rows(chunk) => chunk.is_empty(),
            Payload::Encoded(rows) => rows.rows == 0,
        };
        let message = if empty {
            Message::Empty(sequence)
        } else {
            Message::Morsel(sequence, payload)
        };
        self.sender.send(message).map_err(|_| ())
    }
}

/// Folds a chunk into partial aggregates (`collations`: one per group key).
fn fold(
    chunk: &Chunk,
    group: &[Expr],
    collations: &[Collation],
    aggs: &[AggCall],
    cx: &EvalContext,
    groups: &mut HashMap<Vec<u8>, Partial>,
) -> Result<()> {
    let keys = group
        .iter()
        .map(|e| e.eval(chunk, cx))
        .collect::<Result<Vec<_>>>()?;
    let args = aggs
        .iter()
        .map(|a| crate::exec::eval_agg_args(a, chunk, cx))
        .collect::<Result<Vec<_>>>()?;
    if group.is_empty() {
        // One group: no key to build or look up per row.
        let partial = groups.entry(Vec::new()).or_insert_with(|| Partial {
            keys: Vec::new(),
            accumulators: aggs
                .iter()
                .map(|a| crate::exec::accumulator(a, cx.functions))
                .collect(),
        });
        for row in 0..chunk.len() {
            for (a, acc) in partial.accumulators.iter_mut().enumerate() {
                crate::exec::update_agg(&aggs[a], acc, &args[a], row)?;
            }
        }
        return Ok(());
    }
    let mut key = Vec::new();
    for row in 0..chunk.len() {
        key.clear();
        for (k, &collation) in keys.iter().zip(collations) {
            join_key(&k[row], collation, &mut key);
            key.push(0xFE);
        }
        let partial = match groups.get_mut(&key) {
            Some(p) => p,
            None => groups.entry(key.clone()).or_insert_with(|| Partial {
                keys: keys.iter().map(|k| k[row].clone()).collect(),
                accumulators: aggs
                    .iter()
                    .map(|a| crate::exec::accumulator(a, cx.functions))
                    .collect(),
            }),
        };
        for (a, acc) in partial.accumulators.iter_mut().enumerate() {
            crate::exec::update_agg(&aggs[a], acc, &args[a], row)?;
        }
    }
    Ok(())
}

/// Puts a pruned chunk's columns back at their output positions (`layout`, see
/// [`SinkSpec::Collect`]), NULL where no one reads the column. Moves, never copies:
/// each chunk position is at most one output column's.
fn spread(chunk: Chunk, layout: &[Option<usize>]) -> Chunk {
    let len = chunk.len();
    let mut columns: Vec<Option<Vec<Value>>> = chunk.into_columns().into_iter().map(Some).collect();
    let output = layout
        .iter()
        .map(|position| match position {
            Some(p) => columns[*p]
                .take()
                .expect("a chunk column is one output column"),
            None => vec![Value::Null; len],
        })
        .collect();
    Chunk::from_columns(output, len)
}

impl ParallelOp<'_> {
    fn start(&mut self, cx: &ExecContext) -> Result<()> {
        let Plan::Scan { table, .. } = self.shape.scan else {
            unreachable!("a pipeline starts at a scan");
        };
        // Decode only the columns the steps and the sink read.
        let mut pending = self.shape.steps.clone();
        let projection = columns::prune(
            &mut pending,
            &mut self.sink,
            table.def().columns.len(),
            self.needed.as_deref(),
        );
        // Build the probes' hash tables before the scan's morsels flow.
        let mut steps = Vec::with_capacity(pending.len());
        for step in pending {
            steps.push(match step {
                PendingStep::Ready(step) => step,
                PendingStep::Build {
                    right,
                    right_keys,
                    left_keys,
                    collations,
                    filter,
                    kind,
                    right_needed,
                } => {
                    let mut build = crate::exec::open_needing(right, right_needed)?;
                    let table = build_hash_table(build.as_mut(), &right_keys, &collations, cx)?;
                    Step::Probe(Arc::new(Probe {
                        table,
                        keys: left_keys,
                        filter,
                        kind,
                        right_width: right.width(),
                    }))
                }
            });
        }
        let stream = table.parallel_scan_tx(
            &mut cx.tx.borrow_mut(),
            ParallelScan {
                ordered: matches!(self.sink, SinkSpec::Collect { .. } | SinkSpec::Encode(_)),
                projection,
                ..Default::default()
            },
        )?;
        let pool = crate::workers::pool();
        let workers = pool.threads();
        let (sender, receiver) = sync_channel(workers * PARALLEL_QUEUED_CHUNKS_PER_WORKER);
        let stop = Arc::new(AtomicBool::new(false));
        let source = Arc::new(Mutex::new((stream, 0u64)));
        let steps = Arc::new(steps);
        let sink = Arc::new(self.sink.clone());
        let params = Arc::new(cx.params.to_vec());
        let cancel = cx.cancel_handle();
        let cancel_check: Arc<dyn Fn() -> Result<()> + Send + Sync> =
            Arc::new(move || cancel.check());
        for _ in 0..workers {
            let job = Job {
                source: source.clone(),
                steps: steps.clone(),
                sink: sink.clone(),
                params: params.clone(),
                functions: cx.functions.clone(),
                stop: stop.clone(),
                cancel_check: cancel_check.clone(),
                sender: sender.clone(),
            };
            pool.spawn(move || job.run());
        }
        RUNNING_PIPELINES.with(|r| r.set(r.get() + 1));
        self.state = Some(Running {
            receiver,
            stop,
            counted: true,
            workers_left: workers,
            next_sequence: 0,
            buffered: BTreeMap::new(),
            output: None,
        });
        Ok(())
    }
}

impl Running {
    /// The workers are done: this thread no longer waits for them.
    fn uncount(&mut self) {
        if self.counted {
            self.counted = false;
            RUNNING_PIPELINES.with(|r| r.set(r.get() - 1));
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        // Workers stop at their next morsel; the channel closing ends their sends.
        self.stop.store(true, Ordering::Relaxed);
        self.uncount();
    }
}

impl Operator for ParallelOp<'_> {
    fn next(&mut self, cx: &ExecContext) -> Result<Option<Chunk>> {
        if self.state.is_none() {
            self.start(cx)?;
        }
        let aggregate = match &self.sink {
            SinkSpec::Aggregate { group, aggs, .. } => Some((group.len(), aggs.clone())),
            SinkSpec::Collect { .. } | SinkSpec::Encode(_) => None,
        };
        let running = self.state.as_mut().expect("started");
        if let Some((group_len, aggs)) = aggregate {
            if running.output.is_none() {
                let mut merged: HashMap<Vec<u8>, Partial> = HashMap::new();
                while running.workers_left > 0 {
                    match running.receiver.recv() {
                        Ok(Message::Groups(groups)) => {
                            for (key, partial) in groups {
                                match merged.get_mut(&key) {
                                    Some(into) => {
                                        for (a, b) in
                                            into.accumulators.iter_mut().zip(&partial.accumulators)
                                        {
                                            let before = a.held_bytes();
                                            a.merge(b)?;
                                            cx.memory.charge(a.held_bytes() - before)?;
                                        }
                                    }
                                    None => {
                                        let held: usize = partial
                                            .accumulators
                                            .iter()
                                            .map(Accumulator::held_bytes)
                                            .sum();
                                        cx.memory
                                            .charge(key.len() + 64 + aggs.len() * 64 + held)?;
                                        merged.insert(key, partial);
                                    }
                                }
                            }
                        }
                        Ok(Message::Done { divisions_by_zero }) => {
                            crate::scalar::arith::add_divisions_by_zero(divisions_by_zero);
                            running.workers_left -= 1;
                            if running.workers_left == 0 {
                                running.uncount();
                            }
                        }
                        Ok(Message::Failed(e)) => return Err(e),
                        Ok(_) => {}
                        Err(_) => return Err(worker_lost()),
                    }
                }
                if merged.is_empty() && group_len == 0 {
                    merged.insert(
                        Vec::new(),
                        Partial {
                            keys: Vec::new(),
                            accumulators: aggs
                                .iter()
                                .map(|a| crate::exec::accumulator(a, cx.functions))
                                .collect(),
                        },
                    );
                }
                let width = group_len + aggs.len();
                let mut rows = Vec::with_capacity(merged.len());
                let mut rows_before = vec![0; aggs.len()];
                for (_, p) in merged {
                    let mut row = p.keys;
                    crate::scalar::agg::finish_group(&p.accumulators, &mut rows_before, &mut row)?;
                    rows.push(row);
                }
                let chunks = if rows.is_empty() {
                    Vec::new()
                } else {
                    Chunk::from_rows(rows, width).split()
                };
                running.output = Some(chunks.into_iter());
            }
            return Ok(running.output.as_mut().and_then(Iterator::next));
        }
        match self.next_payload()? {
            Some(Payload::Rows(chunk)) => Ok(Some(chunk)),
            Some(Payload::Encoded(_)) => unreachable!("a collecting pipeline sends chunks"),
            None => Ok(None),
        }
    }
}

impl ParallelOp<'_> {
    /// The next morsel's output of a collecting or encoding pipeline, in morsel order.
    fn next_payload(&mut self) -> Result<Option<Payload>> {
        let running = self.state.as_mut().expect("started");
        loop {
            if let Some(entry) = running.buffered.remove(&running.next_sequence) {
                running.next_sequence += 1;
                match entry {
                    Some(payload) => return Ok(Some(payload)),
                    None => continue,
                }
            }
            if running.workers_left == 0 {
                return Ok(None);
            }
            match running.receiver.recv() {
                Ok(Message::Morsel(sequence, payload)) => {
                    running.buffered.insert(sequence, Some(payload));
                }
                Ok(Message::Empty(sequence)) => {
                    running.buffered.insert(sequence, None);
                }
                Ok(Message::Done { divisions_by_zero }) => {
                    crate::scalar::arith::add_divisions_by_zero(divisions_by_zero);
                    running.workers_left -= 1;
                    if running.workers_left == 0 {
                        running.uncount();
                    }
                }
                Ok(Message::Failed(e)) => return Err(e),
                Ok(Message::Groups(_)) => {}
                Err(_) => return Err(worker_lost()),
            }
        }
    }
}

fn worker_lost() -> Error {
    Error::sql(
        1105,
        "HY000",
        "an executor worker stopped without finishing its morsels",
    )
}
