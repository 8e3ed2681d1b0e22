//! The parallel full scan (technique S1, sections 1 and 2).
//!
//! The clustered index's key space is cut into ranges by
//! [`tarn_btree::Tree::partition`] (descending the inner levels until one level has
//! enough children), `SCAN_RANGES_PER_THREAD` ranges per worker. Each of T workers takes
//! the next range, walks its leaves with read-ahead (several leaf reads in flight
//! through the buffer pool's prefetch), evaluates the pushed-down predicate on the raw
//! row, and decodes only the projected columns into a columnar [`Batch`] (or, given a
//! [`RowSerializer`], turns each row straight into output bytes: S1's parallel result
//! sending without a decoded batch in between). Full batches go to the consumer
//! through bounded channels:
//!
//! - unordered: one channel shared by all workers, batches in completion order;
//! - ordered: one channel per range, drained in range order, so batches arrive in
//!   primary-key order.
//!
//! # Snapshots
//! Without a snapshot the scan reads newest versions and skips delete-marked rows (no
//! transaction: bulk loads, benchmarks). With one (`ParallelScan::snapshot`, or
//! [`Table::parallel_scan_tx`]) each worker resolves every row with
//! [`Table::visible_version`]'s rule under the leaf latch, rebuilding older versions
//! from undo where the view does not see the newest; the predicate and the decoding
//! then see that version. Workers share the snapshot's copy of the view, which keeps
//! purge from discarding the versions it needs until the last worker is done.
//!
//! # Bounds
//! At most `SCAN_QUEUED_BATCHES_PER_THREAD` batches wait per worker (unordered) or per
//! range (ordered; a worker blocks on a full range channel), plus one batch being
//! filled per worker. An ordered scan cuts many small ranges
//! (`SCAN_ORDERED_RANGES_PER_THREAD`) so that workers ahead of the range being
//! delivered rarely block, and a worker starts a range only while it is less than
//! `SCAN_ORDERED_RANGES_AHEAD_PER_THREAD` ranges per worker past it ([`Window`]). Dropping the stream stops the workers at their next batch.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError, sync_channel};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::Instant;

use tarn_btree::{LeafRange, ScanStats};
use tarn_common::limits::{
    SCAN_BATCH_ROWS, SCAN_ORDERED_RANGES_AHEAD_PER_THREAD, SCAN_ORDERED_RANGES_PER_THREAD,
    SCAN_QUEUED_BATCHES_PER_THREAD, SCAN_RANGES_PER_THREAD, SCAN_THREADS_MAX,
};
use tarn_common::{Error, Result};
use tarn_row::Batch;
use tarn_row::row::RowHeader;
use tarn_row::row::{RowSerializer, RowView};

use crate::table::Table;
use crate::txn::{Snapshot, Transaction};

/// A filter evaluated by the scan workers on each row before it is decoded.
pub type Predicate = Arc<dyn Fn(&RowView<'_>) -> bool + Send + Sync>;

/// How to run a parallel scan.
#[derive(Clone, Default)]
pub struct ParallelScan {
    /// Workers; `None` takes the table's `scan_threads` setting (0 there: one per core).
    pub threads: Option<usize>,
    /// Columns to decode, in output order; `None` decodes all.
    pub projection: Option<Vec<usize>>,
    pub predicate: Option<Predicate>,
    /// Deliver batches in primary-key order.
    pub ordered: bool,
    /// Rows per batch; `None`: `SCAN_BATCH_ROWS`.
    pub batch_rows: Option<usize>,
    /// Leaves each worker keeps in flight; `None` takes the `scan_readahead_pages` setting.
    pub readahead_pages: Option<usize>,
    /// Read as of this snapshot ([`Transaction::snapshot`]); `None`: newest versions.
    pub snapshot: Option<Snapshot>,
    /// Turn each row into bytes with this instead of decoding the projection: the
    /// batches are serialized ([`Batch::serialized`]) and `projection` is unused.
    pub serializer: Option<Arc<dyn RowSerializer>>,
}

/// What a parallel scan did, summed over its workers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct ParallelScanStats {
    pub threads: usize,
    pub ranges: usize,
    pub leaves: u64,
    /// Rows visited (before the predicate).
    pub rows_scanned: u64,
    /// Rows that passed the predicate and were decoded.
    pub rows: u64,
    /// Worker time getting leaves (latches, waiting for reads).
    pub read_ns: u64,
    /// Worker time evaluating predicates and decoding.
    pub decode_ns: u64,
    /// Worker time blocked handing batches to a slow consumer.
    pub send_ns: u64,
    pub prefetched: u64,
}

/// The number of workers `threads` means (0: one per core), bounded.
pub fn effective_threads(threads: usize) -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let threads = if threads == 0 { cores } else { threads };
    threads.clamp(1, SCAN_THREADS_MAX as usize)
}

/// The batches of a running parallel scan.
pub struct BatchStream {
    ordered: Option<Vec<Receiver<Result<Batch>>>>,
    unordered: Option<Receiver<Result<Batch>>>,
    /// The range being drained (ordered delivery).
    current: usize,
    /// Ordered delivery: how far ahead of `current` workers may scan.
    window: Option<Arc<Window>>,
    workers: Vec<JoinHandle<()>>,
    totals: Arc<Mutex<ParallelScanStats>>,
}

impl Table {
    /// [`Table::parallel_scan`] as a consistent read of transaction `tx`: as of its
    /// snapshot (at READ COMMITTED the current statement's; at READ UNCOMMITTED newest
    /// versions). At SERIALIZABLE, where InnoDB makes plain reads shared locking reads,
    /// it takes a shared lock on the whole table instead (held to the transaction's
    /// end; it waits for other writers of the table to finish and keeps new ones out,
    /// as locking every row and gap would) and then reads newest versions.
    pub fn parallel_scan_tx(
        self: &Arc<Self>,
        tx: &mut Transaction,
        mut options: ParallelScan,
    ) -> Result<BatchStream> {
        options.snapshot = self.scan_snapshot(tx)?;
        self.parallel_scan(options)
    }

    /// Starts a parallel scan of the whole table.
    pub fn parallel_scan(self: &Arc<Self>, options: ParallelScan) -> Result<BatchStream> {
        self.check_current()?;
        let threads = effective_threads(options.threads.unwrap_or(self.scan_config().threads));
        let projection: Vec<usize> = match options.projection {
            Some(p) => {
                if let Some(&bad) = p.iter().find(|&&c| c >= self.def.columns.len()) {
                    return Err(Error::UnknownColumn(format!("#{bad}")));
                }
                p
            }
            None => (0..self.def.columns.len()).collect(),
        };
        let batch_rows = options
            .batch_rows
            .unwrap_or(SCAN_BATCH_ROWS)
            .clamp(1, tarn_row::limits::BATCH_ROWS_MAX);
        let readahead = options
            .readahead_pages
            .unwrap_or(self.scan_config().readahead_pages)
            .min(tarn_common::limits::SCAN_READAHEAD_PAGES_MAX as usize);
        let ranges = self.clustered.partition(
            threads
                * if options.ordered {
                    SCAN_ORDERED_RANGES_PER_THREAD
                } else {
                    SCAN_RANGES_PER_THREAD
                },
        )?;
        let window = options.ordered.then(|| {
            Arc::new(Window {
                delivering: Mutex::new(0),
                moved: Condvar::new(),
                ahead: threads * SCAN_ORDERED_RANGES_AHEAD_PER_THREAD,
            })
        });
        let totals = Arc::new(Mutex::new(ParallelScanStats {
            threads,
            ranges: ranges.len(),
            ..Default::default()
        }));
        let next_range = Arc::new(AtomicUsize::new(0));
        let (senders, stream_ordered, stream_unordered): (Arc<Senders>, _, _) = if options.ordered {
            let (senders, receivers): (Vec<_>, Vec<_>) = ranges
                .iter()
                .map(|_| {
                    let (s, r) = sync_channel(SCAN_QUEUED_BATCHES_PER_THREAD);
                    (Mutex::new(Some(s)), r)
                })
                .unzip();
            (Arc::new(Senders::PerRange(senders)), Some(receivers), None)
        } else {
            let (s, r) = sync_channel(SCAN_QUEUED_BATCHES_PER_THREAD * threads);
            (Arc::new(Senders::Shared(s)), None, Some(r))
        };
        let ranges = Arc::new(ranges);
        let projection = Arc::new(projection);
        let snapshot = options.snapshot;
        let serializer = options.serializer;
        let workers = (0..threads.min(ranges.len()))
            .map(|_| {
                let table = self.clone();
                let (ranges, next_range, senders, totals, projection, predicate, snapshot) = (
                    ranges.clone(),
                    next_range.clone(),
                    senders.clone(),
                    totals.clone(),
                    projection.clone(),
                    options.predicate.clone(),
                    snapshot.clone(),
                );
                let serializer = serializer.clone();
                let window = window.clone();
                std::thread::Builder::new()
                    .name("tarn-scan".into())
                    .spawn(move || {
                        let worker = Worker {
                            table: &table,
                            projection: &projection,
                            predicate: predicate.as_ref(),
                            snapshot: snapshot.as_ref(),
                            serializer: serializer.as_deref(),
                            batch_rows,
                            readahead,
                        };
                        let mut mine = ParallelScanStats::default();
                        loop {
                            let r = next_range.fetch_add(1, Ordering::Relaxed);
                            if r >= ranges.len() {
                                break;
                            }
                            if let Some(window) = &window {
                                window.wait_for(r);
                            }
                            let Some(sender) = senders.take(r) else { break };
                            if !worker.scan(&ranges[r], &sender, &mut mine) {
                                break; // the consumer is gone
                            }
                        }
                        let mut totals = totals.lock().expect("scan totals");
                        totals.leaves += mine.leaves;
                        totals.rows_scanned += mine.rows_scanned;
                        totals.rows += mine.rows;
                        totals.read_ns += mine.read_ns;
                        totals.decode_ns += mine.decode_ns;
                        totals.send_ns += mine.send_ns;
                        totals.prefetched += mine.prefetched;
                    })
                    .map_err(|e| Error::OutOfResources(format!("cannot start a scan worker: {e}")))
            })
            .collect::<Result<Vec<_>>>()?;
        drop(senders);
        Ok(BatchStream {
            ordered: stream_ordered,
            unordered: stream_unordered,
            current: 0,
            window,
            workers,
            totals,
        })
    }
}

/// The range an ordered scan is delivering, which bounds how far ahead workers go.
struct Window {
    delivering: Mutex<usize>,
    moved: Condvar,
    /// Ranges past the one being delivered a worker may start.
    ahead: usize,
}

impl Window {
    /// Waits until range `range` is within the window.
    fn wait_for(&self, range: usize) {
        let mut delivering = self.delivering.lock().expect("scan window");
        while range >= delivering.saturating_add(self.ahead) {
            delivering = self.moved.wait(delivering).expect("scan window");
        }
    }

    /// The consumer moved on to range `range` (`usize::MAX`: it is gone, so no
    /// worker waits any more).
    fn move_to(&self, range: usize) {
        *self.delivering.lock().expect("scan window") = range;
        self.moved.notify_all();
    }
}

/// The channels workers send on.
enum Senders {
    Shared(SyncSender<Result<Batch>>),
    /// One per range, taken by the worker that scans the range and dropped when done.
    PerRange(Vec<Mutex<Option<SyncSender<Result<Batch>>>>>),
}

impl Senders {
    fn take(&self, range: usize) -> Option<SyncSender<Result<Batch>>> {
        match self {
            Senders::Shared(s) => Some(s.clone()),
            Senders::PerRange(v) => v[range].lock().expect("scan senders").take(),
        }
    }
}

struct Worker<'a> {
    table: &'a Table,
    projection: &'a [usize],
    predicate: Option<&'a Predicate>,
    snapshot: Option<&'a Snapshot>,
    serializer: Option<&'a dyn RowSerializer>,
    batch_rows: usize,
    readahead: usize,
}

impl Worker<'_> {
    /// Scans one range; false if the consumer has gone away.
    fn scan(
        &self,
        range: &LeafRange,
        sender: &SyncSender<Result<Batch>>,
        stats: &mut ParallelScanStats,
    ) -> bool {
        let table = self.table;
        let overflow = table.overflow();
        let mut batch = match self.serializer {
            Some(_) => Batch::serialized(self.batch_rows),
            None => Batch::new(&table.layout, self.projection, self.batch_rows),
        };
        let mut consumer_gone = false;
        let mut send_ns = 0u64;
        let mut rows = 0u64;
        let send = |batch: Result<Batch>, send_ns: &mut u64| -> bool {
            let started = Instant::now();
            let sent = match sender.try_send(batch) {
                Ok(()) => true,
                Err(TrySendError::Full(batch)) => sender.send(batch).is_ok(),
                Err(TrySendError::Disconnected(_)) => false,
            };
            *send_ns += started.elapsed().as_nanos() as u64;
            sent
        };
        // The visitor runs under a leaf's shared latch, so it must never wait for the
        // consumer (who may be writing to this very leaf): when the channel is full it
        // stops the walk, the batch is sent with no latch held, and the walk resumes
        // after the last key visited.
        let mut range = range.clone();
        let mut scan = ScanStats::default();
        let mut visit_send_ns = 0u64;
        loop {
            let mut pending: Option<(Batch, Vec<u8>)> = None;
            let result = table
                .clustered
                .scan_range(&range, self.readahead, |key, stored| {
                    let visible;
                    let bytes = match self.snapshot {
                        // Newest versions: a deleted row waiting for purge is not a row.
                        None => {
                            if RowHeader::read(stored)?.is_delete_marked() {
                                return Ok(true);
                            }
                            stored
                        }
                        Some(snapshot) => {
                            visible =
                                table.visible(snapshot.sys(), Some(snapshot.view()), stored)?;
                            match visible.bytes(stored) {
                                Some(bytes) => bytes,
                                None => return Ok(true),
                            }
                        }
                    };
                    if let Some(predicate) = self.predicate {
                        let view = table.layout.view(bytes)?;
                        if !predicate(&view) {
                            return Ok(true);
                        }
                    }
                    match self.serializer {
                        Some(serializer) => {
                            let view = table.layout.view(bytes)?;
                            batch.serialize_row(&view, serializer, &overflow)?;
                        }
                        None => table.layout.decode_into(
                            bytes,
                            self.projection,
                            &mut batch,
                            &overflow,
                        )?,
                    }
                    rows += 1;
                    if batch.is_full() {
                        let next = batch.empty_like();
                        let full = std::mem::replace(&mut batch, next);
                        let started = Instant::now();
                        let sent = sender.try_send(Ok(full));
                        visit_send_ns += started.elapsed().as_nanos() as u64;
                        match sent {
                            Ok(()) => {}
                            Err(TrySendError::Full(full)) => {
                                pending = Some((full.expect("a batch"), key.to_vec()));
                                return Ok(false);
                            }
                            Err(TrySendError::Disconnected(_)) => {
                                consumer_gone = true;
                                return Ok(false);
                            }
                        }
                    }
                    Ok(true)
                });
            match result {
                Ok(part) => scan += part,
                Err(error) => {
                    send(Err(error), &mut send_ns);
                    return false;
                }
            }
            let Some((full, last_key)) = pending else {
                break;
            };
            if !send(Ok(full), &mut send_ns) {
                consumer_gone = true;
                break;
            }
            range.lower = std::ops::Bound::Excluded(last_key);
        }
        if !consumer_gone && !batch.is_empty() {
            consumer_gone = !send(Ok(batch), &mut send_ns);
        }
        stats.leaves += scan.leaves;
        stats.rows_scanned += scan.entries;
        stats.rows += rows;
        stats.read_ns += scan.fetch_ns;
        // The visitor's time includes its (non-blocking) sends; count those apart.
        stats.decode_ns += scan.visit_ns.saturating_sub(visit_send_ns);
        stats.send_ns += send_ns + visit_send_ns;
        stats.prefetched += scan.prefetched;
        !consumer_gone
    }
}

impl Iterator for BatchStream {
    type Item = Result<Batch>;

    fn next(&mut self) -> Option<Result<Batch>> {
        if let Some(receiver) = &self.unordered {
            return receiver.recv().ok();
        }
        let receivers = self.ordered.as_ref()?;
        while self.current < receivers.len() {
            match receivers[self.current].recv() {
                Ok(batch) => return Some(batch),
                Err(_) => {
                    // That range is done.
                    self.current += 1;
                    if let Some(window) = &self.window {
                        window.move_to(self.current);
                    }
                }
            }
        }
        None
    }
}

impl BatchStream {
    /// Waits for the workers and returns what they did (call after the last batch).
    pub fn finish(mut self) -> ParallelScanStats {
        self.ordered = None;
        self.unordered = None;
        if let Some(window) = &self.window {
            window.move_to(usize::MAX);
        }
        for worker in self.workers.drain(..) {
            let _ = worker.join();
        }
        *self.totals.lock().expect("scan totals")
    }
}

impl Drop for BatchStream {
    fn drop(&mut self) {
        // Closing the channels first makes blocked workers stop; opening the window
        // lets waiting ones find that out.
        self.ordered = None;
        self.unordered = None;
        if let Some(window) = &self.window {
            window.move_to(usize::MAX);
        }
        for worker in self.workers.drain(..) {
            let _ = worker.join();
        }
    }
}

impl std::fmt::Debug for Table {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Table({}.{})", self.database(), self.def().name)
    }
}
