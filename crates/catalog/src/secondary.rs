//! Secondary-index range scans with sorted asynchronous prefetch (technique S2).
//!
//! A secondary entry holds only the primary key; each row costs a clustered-index
//! lookup, a random read when cold. The scan keeps a window of up to N entries
//! (the prefetch unit) ahead of the consumer. Whenever the window falls to half, it
//! reads the next entries from the secondary index and, for that batch:
//! 1. extracts the primary keys;
//! 2. finds their clustered leaf pages by descending only to level 1
//!    ([`tarn_btree::Tree::leaf_pages_for`]);
//! 3. sorts and de-duplicates the page numbers;
//! 4. submits them to the buffer pool's prefetch, which reads them asynchronously;
//!
//! then hands rows out one at a time, in secondary-key order, exactly as the scan
//! without prefetch would.
//!
//! **Snapshots.** [`Table::index_scan`] alone returns newest versions (no
//! transaction: bulk loads, benchmarks). As a transaction's read
//! ([`IndexScan::with_snapshot`], or [`Table::index_scan_tx`]) each row is resolved
//! under its leaf latch as the snapshot sees it ([`Table::visible_version`]'s rule,
//! rebuilding older versions from undo; without a snapshot, READ UNCOMMITTED, the
//! newest), and returned only if that version still has the entry's key: entries of
//! other versions linger until purge. The prefetch is the same either way: the leaf
//! holds the newest version, older ones come from the in-memory undo store.
//!
//! **Adaptive unit.** Starting at `PREFETCH_UNIT_ADAPTIVE_START`, the unit doubles at
//! each refill while the consumer still had to wait for reads during the last window,
//! up to `PREFETCH_UNIT_MAX`, and while a window of the doubled unit, at the reads per
//! entry the last batch started (leaves not yet cached or in flight), would keep no
//! more reads in flight than the pool's `prefetch_in_flight_max` allows. If the pool
//! still skipped prefetches since the last refill (its in-flight bound, or no free
//! frame), the unit asked for more than can be in flight and every skipped page
//! becomes a synchronous read: the unit is halved and never grows back to the size
//! that overflowed. The study's fixed unit plateaued because the right depth depends
//! on the device and the selectivity; this finds it per scan.

use std::collections::VecDeque;
use std::ops::Bound;
use std::time::Instant;

use tarn_btree::Direction;
use tarn_common::limits::{PREFETCH_UNIT_ADAPTIVE_START, PREFETCH_UNIT_MAX};
use tarn_common::settings::PrefetchUnit;
use tarn_common::{PageId, PageNo, Result};
use tarn_row::Value;

use crate::table::{SecondaryIndex, Table};
use crate::txn::{Snapshot, Transaction};

/// A row fetch slower than this waited for a read (a cached lookup takes a few
/// microseconds; a device read tens at least).
const WAITED_NS: u64 = 20_000;

/// What an index scan did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct IndexScanStats {
    pub rows: u64,
    /// Entries with no row to return: deleted while the scan ran, or (with a
    /// snapshot) invisible to it or of another version of the row.
    pub rows_missing: u64,
    /// Row fetches that waited for a read.
    pub waits: u64,
    /// Leaf pages submitted for prefetch (after de-duplication).
    pub pages_prefetched: u64,
    pub prefetch_batches: u64,
    /// The prefetch unit at the end, and the largest used.
    pub unit_final: u32,
    pub unit_max: u32,
}

/// Rows of a secondary-index range, in index order, with prefetch.
pub struct IndexScan<'t> {
    table: &'t Table,
    index: &'t SecondaryIndex,
    cursor: tarn_btree::Cursor<'t>,
    /// The entries read ahead of the consumer, each with where its primary key starts.
    window: VecDeque<(Vec<u8>, usize)>,
    /// `None`: newest versions, entries unchecked (no transaction). `Some`: as a
    /// transaction reads, as of the snapshot if any.
    consistent: Option<Option<Snapshot>>,
    cursor_done: bool,
    adaptive: bool,
    unit: u32,
    /// Adaptive: the smallest unit that overflowed the pool's prefetch bound; the unit
    /// stays below it.
    unit_ceiling: u32,
    /// Entries of the last prefetched batch and the reads its prefetch started (for
    /// reads per entry).
    last_batch_entries: u64,
    last_batch_reads: u64,
    waits_in_window: u64,
    skipped_before: u64,
    stats: IndexScanStats,
}

impl Table {
    /// [`Table::index_scan`] as a consistent read of transaction `tx`: as of its
    /// snapshot (at READ COMMITTED the current statement's; at READ UNCOMMITTED newest
    /// versions). At SERIALIZABLE it takes a shared table lock and reads newest
    /// versions, as [`Table::parallel_scan_tx`] does (coarser than InnoDB's locks on
    /// the range: for a locking range read use [`Table::index_range_tx`]). The scan
    /// does not borrow the transaction.
    pub fn index_scan_tx<'t>(
        &'t self,
        tx: &mut Transaction,
        index: &str,
        lower: Bound<Vec<Value>>,
        upper: Bound<Vec<Value>>,
        direction: Direction,
        prefetch: Option<PrefetchUnit>,
    ) -> Result<IndexScan<'t>> {
        let snapshot = self.scan_snapshot(tx)?;
        Ok(self
            .index_scan(index, lower, upper, direction, prefetch)?
            .with_snapshot(snapshot))
    }

    /// Rows whose `index` columns lie between `lower` and `upper` (values of a prefix
    /// of the index columns), in index order. `prefetch` overrides the
    /// `secondary_prefetch` setting.
    pub fn index_scan<'t>(
        &'t self,
        index: &str,
        lower: Bound<Vec<Value>>,
        upper: Bound<Vec<Value>>,
        direction: Direction,
        prefetch: Option<PrefetchUnit>,
    ) -> Result<IndexScan<'t>> {
        self.check_current()?;
        let index = self.index(index)?;
        let (lower, upper) = index.key_bounds(lower, upper)?;
        let mode = prefetch.unwrap_or(self.scan_config().secondary_prefetch);
        let (adaptive, unit) = match mode {
            PrefetchUnit::Fixed(n) => (false, n.min(PREFETCH_UNIT_MAX)),
            PrefetchUnit::Adaptive => (true, PREFETCH_UNIT_ADAPTIVE_START),
        };
        Ok(IndexScan {
            table: self,
            index,
            cursor: index.tree.range(lower, upper, direction),
            window: VecDeque::new(),
            consistent: None,
            cursor_done: false,
            adaptive,
            unit,
            unit_ceiling: u32::MAX,
            last_batch_entries: 0,
            last_batch_reads: 0,
            waits_in_window: 0,
            skipped_before: self.clustered.pool().stats().prefetch_skipped,
            stats: IndexScanStats {
                unit_final: unit,
                unit_max: unit,
                ..Default::default()
            },
        })
    }
}

impl IndexScan<'_> {
    /// Reads as a transaction does: as of `snapshot` ([`Transaction::snapshot`]), or
    /// with `None` the newest versions (READ UNCOMMITTED); either way only rows whose
    /// version read still has the entry's key. Call before the first row.
    pub fn with_snapshot(mut self, snapshot: Option<Snapshot>) -> Self {
        self.consistent = Some(snapshot);
        self
    }

    /// The next row, or `None` at the end of the range. An entry whose row is gone
    /// was deleted while the scan ran (a delete removes the row before its secondary
    /// entries), or with a snapshot, has no visible version with the entry's key: it
    /// is skipped and counted in `rows_missing`.
    pub fn next_row(&mut self) -> Result<Option<Vec<Value>>> {
        loop {
            if self.window.len() <= (self.unit / 2) as usize && !self.cursor_done {
                self.refill()?;
            }
            let Some((entry, pk_at)) = self.window.pop_front() else {
                return Ok(None);
            };
            let started = Instant::now();
            let row = match &self.consistent {
                None => self.table.get_by_key(&entry[pk_at..])?,
                Some(snapshot) => self.visible_row(snapshot.as_ref(), &entry, pk_at)?,
            };
            if started.elapsed().as_nanos() as u64 > WAITED_NS {
                self.stats.waits += 1;
                self.waits_in_window += 1;
            }
            match row {
                Some(row) => {
                    self.stats.rows += 1;
                    return Ok(Some(row));
                }
                None => self.stats.rows_missing += 1,
            }
        }
    }

    /// The version of the row of `entry` the snapshot sees (without one: the newest),
    /// if it has the entry's key ([`Table::entry_row`]: resolved and decoded under the
    /// leaf latch, as [`Table::get_by_key`] does).
    fn visible_row(
        &self,
        snapshot: Option<&Snapshot>,
        entry: &[u8],
        pk_at: usize,
    ) -> Result<Option<Vec<Value>>> {
        self.table.check_current()?;
        let snapshot = snapshot.map(|snapshot| (snapshot.sys(), snapshot.view()));
        self.table
            .entry_row(self.index, entry, &entry[pk_at..], snapshot)
    }

    pub fn collect_rows(mut self) -> Result<Vec<Vec<Value>>> {
        let mut rows = Vec::new();
        while let Some(row) = self.next_row()? {
            rows.push(row);
        }
        Ok(rows)
    }

    pub fn stats(&self) -> IndexScanStats {
        self.stats
    }

    /// Reads entries until the window holds `unit` (at least one), and prefetches
    /// their rows' leaves.
    fn refill(&mut self) -> Result<()> {
        if self.adaptive {
            self.adapt();
        }
        let want = (self.unit as usize).max(1);
        let mut batch: Vec<(Vec<u8>, usize)> = Vec::new();
        while self.window.len() + batch.len() < want {
            match self.cursor.next_entry()? {
                Some((entry, _)) => {
                    let pk_at = entry.len() - self.index.primary_key_of(entry)?.len();
                    batch.push((entry.to_vec(), pk_at));
                }
                None => {
                    self.cursor_done = true;
                    break;
                }
            }
        }
        if self.unit > 0 && !batch.is_empty() {
            let mut sorted: Vec<&[u8]> = batch.iter().map(|(e, at)| &e[*at..]).collect();
            sorted.sort_unstable();
            let clustered = &self.table.clustered;
            let mut pages = clustered.leaf_pages_for(&sorted)?;
            pages.sort_unstable();
            pages.dedup();
            let ids: Vec<PageId> = pages
                .iter()
                .map(|&p| PageId::new(clustered.file_id(), PageNo(p)))
                .collect();
            let started = clustered.pool().prefetch(&ids);
            self.stats.pages_prefetched += ids.len() as u64;
            self.last_batch_entries = batch.len() as u64;
            self.last_batch_reads = started as u64;
            self.stats.prefetch_batches += 1;
        }
        self.window.extend(batch);
        Ok(())
    }

    /// True if a window of `unit` entries, at the reads per entry the last batch
    /// started, would keep no more reads in flight than the pool's bound allows.
    fn fits_in_flight(&self, unit: u32) -> bool {
        if self.last_batch_entries == 0 {
            return true;
        }
        let reads = u64::from(unit) * self.last_batch_reads / self.last_batch_entries;
        reads <= u64::from(self.table.clustered.pool().config().prefetch_in_flight_max)
    }

    /// Halves the unit if the pool skipped prefetches since the last refill (and keeps
    /// it below the size that overflowed); otherwise doubles it if the consumer waited
    /// for reads since the last refill and the doubled window fits the pool's bound.
    fn adapt(&mut self) {
        let skipped = self.table.clustered.pool().stats().prefetch_skipped;
        let saturated = skipped > self.skipped_before;
        self.skipped_before = skipped;
        if saturated {
            self.unit_ceiling = self.unit_ceiling.min(self.unit);
            self.unit = (self.unit / 2).max(PREFETCH_UNIT_ADAPTIVE_START.min(self.unit));
        } else if self.waits_in_window > 0 {
            let doubled = (self.unit * 2).min(PREFETCH_UNIT_MAX);
            if doubled < self.unit_ceiling && self.fits_in_flight(doubled) {
                self.unit = doubled;
            }
        }
        self.waits_in_window = 0;
        self.stats.unit_final = self.unit;
        self.stats.unit_max = self.stats.unit_max.max(self.unit);
    }
}
