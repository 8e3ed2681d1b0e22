//! TPC-H data: the eight tables' schemas and their rows, generated in parallel and
//! delivered in primary-key order.
//!
//! # What is generated
//! [`tables`] describes region, nation, supplier, customer, part, partsupp, orders and
//! lineitem as Tarn columns (see [`schema`] for the type mapping), with their primary
//! keys and the secondary indexes the benches use: `orders(o_custkey)`,
//! `orders(o_orderdate)` and `lineitem(l_shipdate)`. The rows come from the `tpchgen`
//! crate, a port of the reference `dbgen` that produces the same data; its row structs
//! are converted field by field ([`rows`]), money exactly from tpchgen's integer
//! hundredths, never through text or floating point.
//!
//! tpchgen splits every table except region and nation into `part_count` parts of
//! consecutive keys; part `p` (1-based) can be generated on its own, without generating
//! the parts before it. [`generate_part`] produces one part, [`generate_parallel`] all
//! of them on worker threads.
//!
//! # The ordering guarantee
//! [`generate_parallel`] hands the rows to its sink in strictly increasing primary-key
//! order: part 1's rows, then part 2's, and so on. The loader builds each table's
//! B+tree bottom-up from sorted input (fill a leaf, append it, never split), which is
//! only correct for sorted input; the same order also makes the load sequential on disk.
//! What makes the stream sorted, checked against tpchgen 4.0.0's source and by this
//! module's tests at 1 to 7 parts:
//! - region, nation: a single part (tpchgen ignores the part arguments for these; we
//!   emit their rows in part 1 only), keys 0, 1, 2, ... in order.
//! - supplier, customer, part: part `p` holds keys `start + 1 ..= start + count`, where
//!   `start = (p - 1) * (total / part_count)`; the last part takes the remainder.
//! - orders: the same split over order indexes; `o_orderkey` is tpchgen's sparse key
//!   (the low 3 bits kept, the rest shifted left by 2: 1..8, 33..40, ...), which is
//!   strictly increasing in the index.
//! - lineitem: split by orders as above; each order's lines are numbered 1 up to at
//!   most 7, so `(l_orderkey, l_linenumber)` is strictly increasing.
//! - partsupp: split by part key, four rows per part, **but not sorted within a part
//!   key**: the spec's supplier formula `(partkey + i * (S / 4 + (partkey - 1) / S)) % S
//!   + 1` for `i = 0..4` (`S` suppliers) wraps around, so at SF 0.01, 2,070 of the 8,000
//!   rows would come out of order. [`generate_part`] therefore sorts each part key's four
//!   rows by `ps_suppkey`. At a few small scale factors (for example 0.0102, where
//!   `S = 102`) the formula repeats a supplier for some part keys; generation then fails
//!   with [`BenchError::Options`] rather than produce a duplicate key. This cannot
//!   happen once `S` is at least 244 (SF 0.0244).
//!
//! The calling thread re-checks the order of every row it delivers (one or two integer
//! comparisons a row) and panics on a violation: that would be a bug here or in
//! tpchgen, and a loader given unsorted input would build a corrupt tree.
//!
//! # Bounds
//! - Scale factor: [`SCALE_FACTOR_MIN`] ..= [`SCALE_FACTOR_MAX`].
//! - Threads: 1 ..= [`THREADS_MAX`]; chunk size 1 ..= [`CHUNK_ROWS_MAX`] rows.
//! - Memory for rows in flight: each worker has one chunk being filled and a channel of
//!   at most [`CHANNEL_CHUNKS_PER_WORKER`] chunks, and the sink holds one, so at most
//!   `threads * (CHANNEL_CHUNKS_PER_WORKER + 1) + 1` chunks exist at once.
//! - Part size: about [`PART_ROWS_TARGET`] rows ([`part_count`]).
//! - tpchgen builds one shared text pool for comments the first time any table is
//!   generated: 300 MiB, kept for the life of the process, about 0.8 s in a release
//!   build (4 s in debug).

pub mod bench;
pub mod load;
pub mod queries;
mod rows;
pub mod schema;
pub mod tbl;
#[cfg(test)]
mod tests;

use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::thread;

use tarn_row::value::Value;
use tpchgen::generators::{
    CustomerGenerator, LineItemGenerator, NationGenerator, OrderGenerator, PartGenerator, PartSupp,
    PartSuppGenerator, RegionGenerator, SupplierGenerator,
};

use crate::{BenchError, Result};
pub use schema::{TpchIndex, TpchTable, tables};

/// The smallest scale factor accepted, the usual test size: SF 0.01 has 100 suppliers
/// and 60,175 line items.
pub const SCALE_FACTOR_MIN: f64 = 0.01;

/// The largest scale factor accepted (about 1 TB of text, 6 billion line items). Every
/// key but the order keys stays below 2^31 (`INT`) up to here.
pub const SCALE_FACTOR_MAX: f64 = 1000.0;

/// The most worker threads [`generate_parallel`] starts.
pub const THREADS_MAX: usize = 256;

/// The most rows in one chunk handed to a sink.
pub const CHUNK_ROWS_MAX: usize = 1 << 20;

/// How many full chunks each worker may queue for the calling thread before it blocks.
pub const CHANNEL_CHUNKS_PER_WORKER: usize = 4;

/// The estimated rows per part that [`part_count`] aims for: large enough that the
/// per-part cost (starting a generator, skipping its random streams ahead) vanishes,
/// small enough that a few threads share even SF 0.1's tables.
pub const PART_ROWS_TARGET: u64 = 50_000;

/// A TPC-H table, in the order of [`tables`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum TableId {
    Region,
    Nation,
    Supplier,
    Customer,
    Part,
    PartSupp,
    Orders,
    LineItem,
}

/// How many rows region and nation have at every scale factor.
const REGION_ROWS: u64 = 5;
const NATION_ROWS: u64 = 25;
/// Rows a partsupp part key has (exact) and line items an order has (average of 1..=7).
const SUPPLIERS_PER_PART: u64 = 4;
const LINES_PER_ORDER_AVERAGE: u64 = 4;

impl TableId {
    const ALL: [TableId; 8] = [
        TableId::Region,
        TableId::Nation,
        TableId::Supplier,
        TableId::Customer,
        TableId::Part,
        TableId::PartSupp,
        TableId::Orders,
        TableId::LineItem,
    ];

    fn name(self) -> &'static str {
        match self {
            TableId::Region => "region",
            TableId::Nation => "nation",
            TableId::Supplier => "supplier",
            TableId::Customer => "customer",
            TableId::Part => "part",
            TableId::PartSupp => "partsupp",
            TableId::Orders => "orders",
            TableId::LineItem => "lineitem",
        }
    }

    fn from_name(name: &str) -> Result<TableId> {
        TableId::ALL
            .into_iter()
            .find(|table| table.name() == name)
            .ok_or_else(|| {
                BenchError::Options(format!(
                    "'{name}' is not a TPC-H table (region, nation, supplier, customer, \
                     part, partsupp, orders, lineitem)"
                ))
            })
    }

    /// Rows of the unit tpchgen splits into parts: the table's own rows, except parts
    /// for partsupp and orders for lineitem. The numbers are tpchgen's "scale bases"
    /// (rows at SF 1), and the rounding (truncation) is tpchgen's.
    fn unit_rows(self, scale_factor: f64) -> u64 {
        let scale_base: u32 = match self {
            TableId::Region => return REGION_ROWS,
            TableId::Nation => return NATION_ROWS,
            TableId::Supplier => 10_000,
            TableId::Customer => 150_000,
            TableId::Part | TableId::PartSupp => 200_000,
            TableId::Orders | TableId::LineItem => 1_500_000,
        };
        (f64::from(scale_base) * scale_factor) as u64
    }

    fn rows_per_unit_estimate(self) -> u64 {
        match self {
            TableId::PartSupp => SUPPLIERS_PER_PART,
            TableId::LineItem => LINES_PER_ORDER_AVERAGE,
            _ => 1,
        }
    }

    /// Whether tpchgen generates the whole table in every part.
    fn is_fixed_size(self) -> bool {
        matches!(self, TableId::Region | TableId::Nation)
    }
}

/// The number of rows `table` has at `scale_factor`: exact for every table except
/// lineitem, where it is 4 lines per order (the mean; SF 0.01 has 60,175 for 60,000).
pub fn row_count_estimate(table: &str, scale_factor: f64) -> Result<u64> {
    let table = TableId::from_name(table)?;
    Ok(table.unit_rows(scale_factor) * table.rows_per_unit_estimate())
}

/// How many parts [`generate_parallel`] splits `table` into at `scale_factor`: about
/// [`PART_ROWS_TARGET`] estimated rows each, at least 1, and 1 for region and nation.
pub fn part_count(table: &str, scale_factor: f64) -> Result<i32> {
    let table = TableId::from_name(table)?;
    check_scale_factor(scale_factor)?;
    Ok(part_count_of(table, scale_factor))
}

fn part_count_of(table: TableId, scale_factor: f64) -> i32 {
    if table.is_fixed_size() {
        return 1;
    }
    let rows = table.unit_rows(scale_factor) * table.rows_per_unit_estimate();
    let parts = rows
        .div_ceil(PART_ROWS_TARGET)
        .clamp(1, table.unit_rows(scale_factor).max(1));
    // SCALE_FACTOR_MAX bounds this: 6e9 rows / PART_ROWS_TARGET is far below i32::MAX.
    i32::try_from(parts).expect("part count fits in i32 below SCALE_FACTOR_MAX")
}

fn check_scale_factor(scale_factor: f64) -> Result<()> {
    if (SCALE_FACTOR_MIN..=SCALE_FACTOR_MAX).contains(&scale_factor) {
        Ok(())
    } else {
        Err(BenchError::Options(format!(
            "TPC-H scale factor {scale_factor} is outside \
             {SCALE_FACTOR_MIN}..={SCALE_FACTOR_MAX}"
        )))
    }
}

/// Checks a bench's `--sf` option.
pub fn check_sf_option(scale_factor: f64) -> Result<()> {
    check_scale_factor(scale_factor).map_err(|_| {
        BenchError::Options(format!(
            "--sf must be from {SCALE_FACTOR_MIN} to {SCALE_FACTOR_MAX}, not {scale_factor}"
        ))
    })
}

fn check_part(part: i32, part_count: i32) -> Result<()> {
    if part_count >= 1 && (1..=part_count).contains(&part) {
        Ok(())
    } else {
        Err(BenchError::Options(format!(
            "TPC-H part {part} of {part_count}: parts are numbered 1..=part_count"
        )))
    }
}

/// Generates part `part` (1-based) of `part_count` of `table` at `scale_factor` and
/// passes each row to `out`, in the table's column order and in strictly increasing
/// primary-key order. Concatenating parts 1..=part_count gives the whole table, the
/// same for every `part_count`; region and nation have all their rows in part 1.
/// Stops at the first error `out` returns and returns it.
pub fn generate_part(
    table: &str,
    scale_factor: f64,
    part: i32,
    part_count: i32,
    out: &mut dyn FnMut(Vec<Value>) -> Result<()>,
) -> Result<()> {
    let table = TableId::from_name(table)?;
    check_scale_factor(scale_factor)?;
    check_part(part, part_count)?;
    generate_rows(table, scale_factor, part, part_count, out)
}

/// [`generate_part`] after validation, generic over the error `out` stops with so that
/// workers can stop quietly when the calling thread has gone away.
fn generate_rows<E: From<BenchError>>(
    table: TableId,
    scale_factor: f64,
    part: i32,
    part_count: i32,
    out: &mut dyn FnMut(Vec<Value>) -> Result<(), E>,
) -> Result<(), E> {
    let (sf, p, n) = (scale_factor, part, part_count);
    match table {
        TableId::Region if part == 1 => {
            for_each(RegionGenerator::new(sf, p, n).iter(), rows::region, out)
        }
        TableId::Nation if part == 1 => {
            for_each(NationGenerator::new(sf, p, n).iter(), rows::nation, out)
        }
        TableId::Region | TableId::Nation => Ok(()),
        TableId::Supplier => for_each(SupplierGenerator::new(sf, p, n).iter(), rows::supplier, out),
        TableId::Customer => for_each(CustomerGenerator::new(sf, p, n).iter(), rows::customer, out),
        TableId::Part => for_each(PartGenerator::new(sf, p, n).iter(), rows::part, out),
        TableId::PartSupp => generate_partsupp(sf, p, n, out),
        TableId::Orders => for_each(OrderGenerator::new(sf, p, n).iter(), rows::orders, out),
        TableId::LineItem => for_each(LineItemGenerator::new(sf, p, n).iter(), rows::lineitem, out),
    }
}

fn for_each<T, E>(
    generator: impl Iterator<Item = T>,
    convert: fn(&T) -> Vec<Value>,
    out: &mut dyn FnMut(Vec<Value>) -> Result<(), E>,
) -> Result<(), E> {
    for row in generator {
        out(convert(&row))?;
    }
    Ok(())
}

/// partsupp with each part key's rows sorted by supplier (see the module docs): rows
/// are buffered one part key at a time, [`SUPPLIERS_PER_PART`] rows at most.
fn generate_partsupp<E: From<BenchError>>(
    scale_factor: f64,
    part: i32,
    part_count: i32,
    out: &mut dyn FnMut(Vec<Value>) -> Result<(), E>,
) -> Result<(), E> {
    let mut group: Vec<PartSupp<'static>> = Vec::with_capacity(SUPPLIERS_PER_PART as usize);
    for row in PartSuppGenerator::new(scale_factor, part, part_count).iter() {
        if group
            .first()
            .is_some_and(|first| first.ps_partkey != row.ps_partkey)
        {
            emit_partsupp_group(scale_factor, &mut group, out)?;
        }
        group.push(row);
        assert!(group.len() <= SUPPLIERS_PER_PART as usize);
    }
    emit_partsupp_group(scale_factor, &mut group, out)
}

fn emit_partsupp_group<E: From<BenchError>>(
    scale_factor: f64,
    group: &mut Vec<PartSupp<'static>>,
    out: &mut dyn FnMut(Vec<Value>) -> Result<(), E>,
) -> Result<(), E> {
    group.sort_unstable_by_key(|row| row.ps_suppkey);
    if let Some(pair) = group
        .windows(2)
        .find(|pair| pair[0].ps_suppkey == pair[1].ps_suppkey)
    {
        return Err(E::from(BenchError::Options(format!(
            "at TPC-H scale factor {scale_factor}, tpchgen gives part {} supplier {} twice \
             (the spec's supplier formula repeats at some scale factors below 0.0244); \
             choose another scale factor",
            pair[0].ps_partkey, pair[0].ps_suppkey
        ))));
    }
    for row in group.drain(..) {
        out(rows::partsupp(&row))?;
    }
    Ok(())
}

/// Generates all of `table` at `scale_factor` on `threads` worker threads and hands it
/// to `sink` on the calling thread in chunks of `chunk_rows` rows (the last chunk of
/// each part may be shorter), in strictly increasing primary-key order. Returns the
/// number of rows. Stops at the first error (the sink's or the generator's) and
/// returns it; the workers then stop at their next chunk.
pub fn generate_parallel(
    table: &str,
    scale_factor: f64,
    threads: usize,
    chunk_rows: usize,
    sink: impl FnMut(Vec<Vec<Value>>) -> Result<()>,
) -> Result<u64> {
    let table_id = TableId::from_name(table)?;
    check_scale_factor(scale_factor)?;
    let part_count = part_count_of(table_id, scale_factor);
    generate_parts(
        table_id,
        scale_factor,
        part_count,
        threads,
        chunk_rows,
        sink,
    )
}

/// What a worker sends the calling thread.
enum Message {
    /// Up to `chunk_rows` rows of the worker's current part.
    Chunk(Vec<Vec<Value>>),
    /// The worker's current part is complete.
    PartEnd,
    /// Generation failed; the worker has stopped.
    Failed(BenchError),
}

/// Why a worker stopped early.
enum WorkerStop {
    /// The calling thread dropped its receiver (it stopped on an error).
    Disconnected,
    Failed(BenchError),
}

impl From<BenchError> for WorkerStop {
    fn from(error: BenchError) -> Self {
        WorkerStop::Failed(error)
    }
}

/// [`generate_parallel`] with the part count given. Worker `w` generates parts
/// `w + 1`, `w + 1 + workers`, ... in turn and sends them over its own bounded channel;
/// the calling thread reads part `p` from worker `(p - 1) % workers`, so it delivers
/// parts in order while the other workers generate ahead, each at most one channel
/// ahead.
fn generate_parts(
    table: TableId,
    scale_factor: f64,
    part_count: i32,
    threads: usize,
    chunk_rows: usize,
    sink: impl FnMut(Vec<Vec<Value>>) -> Result<()>,
) -> Result<u64> {
    if !(1..=THREADS_MAX).contains(&threads) || !(1..=CHUNK_ROWS_MAX).contains(&chunk_rows) {
        return Err(BenchError::Options(format!(
            "TPC-H generation needs 1..={THREADS_MAX} threads (got {threads}) and \
             1..={CHUNK_ROWS_MAX} rows a chunk (got {chunk_rows})"
        )));
    }
    check_part(1, part_count)?;
    let parts = usize::try_from(part_count).expect("part_count is positive");
    let workers = threads.min(parts);
    thread::scope(|scope| {
        let mut receivers = Vec::with_capacity(workers);
        for worker in 0..workers {
            let (sender, receiver) = sync_channel(CHANNEL_CHUNKS_PER_WORKER);
            receivers.push(receiver);
            let my_parts = (1..=part_count).skip(worker).step_by(workers);
            scope.spawn(move || {
                run_worker(
                    table,
                    scale_factor,
                    my_parts,
                    part_count,
                    chunk_rows,
                    &sender,
                )
            });
        }
        // `deliver` owns the receivers: when it returns early they are dropped, and
        // every worker's next send fails, so the scope's join does not wait for the
        // rest of the table.
        deliver(table, part_count, receivers, sink)
    })
}

fn run_worker(
    table: TableId,
    scale_factor: f64,
    parts: impl Iterator<Item = i32>,
    part_count: i32,
    chunk_rows: usize,
    sender: &SyncSender<Message>,
) {
    for part in parts {
        match generate_chunks(table, scale_factor, part, part_count, chunk_rows, sender) {
            Ok(()) => {}
            Err(WorkerStop::Disconnected) => return,
            Err(WorkerStop::Failed(error)) => {
                // If the calling thread is gone it already has an error to report.
                let _ = sender.send(Message::Failed(error));
                return;
            }
        }
    }
}

fn generate_chunks(
    table: TableId,
    scale_factor: f64,
    part: i32,
    part_count: i32,
    chunk_rows: usize,
    sender: &SyncSender<Message>,
) -> Result<(), WorkerStop> {
    let send = |message| sender.send(message).map_err(|_| WorkerStop::Disconnected);
    let mut chunk = Vec::with_capacity(chunk_rows);
    generate_rows::<WorkerStop>(table, scale_factor, part, part_count, &mut |row| {
        chunk.push(row);
        if chunk.len() == chunk_rows {
            send(Message::Chunk(std::mem::replace(
                &mut chunk,
                Vec::with_capacity(chunk_rows),
            )))?;
        }
        Ok(())
    })?;
    if !chunk.is_empty() {
        send(Message::Chunk(chunk))?;
    }
    send(Message::PartEnd)
}

/// The calling thread's side: parts in order, each from the worker that generates it.
fn deliver(
    table: TableId,
    part_count: i32,
    receivers: Vec<Receiver<Message>>,
    mut sink: impl FnMut(Vec<Vec<Value>>) -> Result<()>,
) -> Result<u64> {
    let mut order = KeyOrder::new(table);
    let mut rows_total: u64 = 0;
    for (part, receiver) in (1..=part_count).zip(receivers.iter().cycle()) {
        loop {
            match receiver.recv() {
                Ok(Message::Chunk(chunk)) => {
                    order.check(&chunk);
                    rows_total += chunk.len() as u64;
                    sink(chunk)?;
                }
                Ok(Message::PartEnd) => break,
                Ok(Message::Failed(error)) => return Err(error),
                // Only a panic ends a worker without PartEnd or Failed; the scope
                // re-raises that panic when it joins the worker.
                Err(_) => {
                    return Err(BenchError::WrongData {
                        row: format!("tpch {}", table.name()),
                        detail: format!("the worker generating part {part} stopped"),
                    });
                }
            }
        }
    }
    Ok(rows_total)
}

/// Checks that the rows delivered have strictly increasing primary keys.
struct KeyOrder {
    table: &'static str,
    /// Positions of the primary key's columns: one or two, all integers.
    key_columns: Vec<usize>,
    last: Option<[i64; 2]>,
}

impl KeyOrder {
    fn new(table: TableId) -> KeyOrder {
        let key_columns = tables()
            .into_iter()
            .find(|schema| schema.name == table.name())
            .expect("every TableId has a schema")
            .primary_key;
        assert!((1..=2).contains(&key_columns.len()));
        KeyOrder {
            table: table.name(),
            key_columns,
            last: None,
        }
    }

    fn check(&mut self, chunk: &[Vec<Value>]) {
        for row in chunk {
            let key = primary_key(row, &self.key_columns);
            if let Some(last) = self.last {
                assert!(
                    last < key,
                    "tpch {}: primary key {key:?} follows {last:?}; the loader needs \
                     strictly increasing keys",
                    self.table
                );
            }
            self.last = Some(key);
        }
    }
}

/// The integer primary key of `row`, padded with zeros to two columns.
fn primary_key(row: &[Value], key_columns: &[usize]) -> [i64; 2] {
    let mut key = [0; 2];
    for (slot, &column) in key.iter_mut().zip(key_columns) {
        *slot = match row[column] {
            Value::Int(value) => value,
            ref other => panic!("TPC-H key column {column} holds {other:?}"),
        };
    }
    key
}
