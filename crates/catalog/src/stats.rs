//! Table statistics for the planner: ANALYZE TABLE, and the counts that say when to
//! run it again.
//!
//! # What is collected
//! [`TableStats`] holds the row count, for the primary key and each secondary index
//! the number of distinct values of every key prefix (InnoDB's `stat_n_diff_key_vals`;
//! for a secondary index the prefixes of its own columns, without the primary key
//! suffix), and per column the share of NULLs, the number of distinct values and an
//! equi-height histogram of up to `HISTOGRAM_BUCKETS_MAX` buckets.
//!
//! # How (`analyze`)
//! - A table estimated at no more than `ANALYZE_FULL_SCAN_ROWS_MAX` rows is read
//!   whole: one walk over the leaves of each tree. Larger tables are sampled: each
//!   tree is cut into `ANALYZE_PARTITION_RANGES` key ranges (`Tree::partition`, which
//!   on a tree with fewer leaves gives one range per leaf), `ANALYZE_SAMPLE_RANGES` of
//!   them are picked at random and read whole (stopping at `ANALYZE_SAMPLE_ROWS_MAX`
//!   entries), and counts are scaled by ranges read over ranges cut. The ranges are of
//!   about equal size in nodes, so the scaling is fair; the seed is derived from the
//!   table, so the same table gives the same sample.
//! - Distinct key prefixes are counted from boundaries between neighbouring keys
//!   (where the prefix changes). In a sample, the share of neighbouring pairs that
//!   are boundaries estimates the share among all pairs, so the estimate is
//!   `1 + boundaries / pairs x (entries - 1)`, which stays right for a column with a
//!   handful of values spread over many leaves (counting values per leaf, as InnoDB
//!   does, would count each once per leaf).
//! - Column statistics come from a uniform reservoir sample of
//!   `ANALYZE_COLUMN_SAMPLE_ROWS` of the rows read. Distinct values in the table are
//!   estimated from the sample with the Haas-Stokes `Duj1` estimator (as PostgreSQL
//!   does): `n d / (n - f1 + f1 n / N)` for `n` sampled values of which `d` are
//!   distinct and `f1` occur once, out of `N`; a sample that is the whole table is
//!   counted exactly.
//! - Newest versions are read and delete-marked rows skipped; no transaction or lock
//!   is taken, as in InnoDB. Secondary-index entries purge has not removed yet (of
//!   deleted rows and older versions) count as entries.
//!
//! # Histogram bounds
//! `tarn_row::Value` is not serialisable, so a bound is stored as the key encoding of
//! the single column (`tarn_row::encode_key`, byte order = SQL order, collation
//! weights for text), cut to `HISTOGRAM_BOUND_BYTES_MAX` bytes, and written as hex in
//! catalog.json. [`TableStats::selectivity_range`] encodes the planner's values the
//! same way and compares bytes; within a bucket it interpolates linearly on the
//! first 8 bytes after the bucket bounds' common prefix (exact for integers, dates and
//! times, a fair guess for strings).
//!
//! # Keeping up to date
//! Every [`Table`] handle shares a [`TableActivity`] with the handles DDL replaces it
//! by over the same files: relaxed atomic counts of inserted, deleted and updated rows
//! since the table was opened (counted at the operation, including changes later
//! rolled back; a rollback of an insert or delete counts as the opposite change, so
//! the net count stays right), and the current statistics with the counts they were
//! taken at. [`Table::estimated_rows`] and [`Table::changes_since_analyze`] follow
//! from them; the SQL layer analyzes again when more than a tenth of the rows changed
//! (InnoDB's rule, [`Table::stats_stale`]). The counts live in memory: after a restart
//! they start at 0 against the persisted statistics.
//!
//! # Invariants
//! 1. A table's stored statistics describe its current definition: one [`IndexStats`]
//!    per secondary index with one count per index column, one per primary key column
//!    (one for the hidden row id), one [`ColumnStats`] per column.
//!    `CatalogData::check` enforces it; DDL that changes indexes or columns drops or
//!    adjusts them.
//! 2. Histogram bounds are in ascending byte order; null fractions lie in `[0, 1]`.

use std::ops::Bound;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use parking_lot::RwLock;
use serde::{Deserialize, Serialize};
use tarn_btree::{LeafRange, Tree};
use tarn_common::limits::{
    ANALYZE_COLUMN_SAMPLE_ROWS, ANALYZE_FULL_SCAN_ROWS_MAX, ANALYZE_PARTITION_RANGES,
    ANALYZE_SAMPLE_RANGES, ANALYZE_SAMPLE_ROWS_MAX, HISTOGRAM_BOUND_BYTES_MAX,
    HISTOGRAM_BUCKETS_MAX,
};
use tarn_common::rng::Rng;
use tarn_common::{Error, Result};
use tarn_row::row::RowHeader;
use tarn_row::{Collation, Column, ColumnType, Value, check_value, encode_key, key_prefix_len};

use crate::catalog::TableDef;
use crate::table::Table;

/// The selectivity of a range predicate the statistics cannot judge (no histogram),
/// as MySQL's and PostgreSQL's planners assume.
pub const DEFAULT_RANGE_SELECTIVITY: f64 = 1.0 / 3.0;

/// The selectivity of an equality on a column without statistics.
pub const DEFAULT_EQ_SELECTIVITY: f64 = 0.1;

/// Distinct values of each key prefix of one index.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct IndexStats {
    /// `distinct_prefixes[k - 1]`: distinct values of the first `k` key columns.
    pub distinct_prefixes: Vec<u64>,
}

/// What ANALYZE found about one column.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ColumnStats {
    /// The column's type and collation, which the histogram bounds are encoded with.
    pub ty: ColumnType,
    pub collation: Collation,
    /// Share of rows where the column is NULL.
    pub null_fraction: f64,
    /// Distinct non-NULL values (estimated when sampled).
    pub distinct: u64,
    /// Equi-height histogram of the non-NULL values: `histogram[0]` is the smallest
    /// value sampled and `histogram[i]` the largest of bucket `i` (1-based), each
    /// bucket holding about the same number of sampled rows. Bounds are key
    /// encodings (see the module docs), hex in JSON. Empty if the column had no
    /// non-NULL value.
    #[serde(with = "hex_bounds", default, skip_serializing_if = "Vec::is_empty")]
    pub histogram: Vec<Vec<u8>>,
}

/// Equality by bits: null fractions are never NaN, so this is an equivalence and the
/// catalog (which derives `Eq`) can hold statistics.
impl PartialEq for ColumnStats {
    fn eq(&self, other: &ColumnStats) -> bool {
        self.ty == other.ty
            && self.collation == other.collation
            && self.null_fraction.to_bits() == other.null_fraction.to_bits()
            && self.distinct == other.distinct
            && self.histogram == other.histogram
    }
}

impl Eq for ColumnStats {}

/// What ANALYZE TABLE found (see the module docs).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TableStats {
    /// Rows (estimated when sampled).
    pub rows: u64,
    /// One per secondary index, in the order of the definition's indexes.
    pub indexes: Vec<IndexStats>,
    /// The clustered index (the hidden row id for a table without a primary key).
    pub primary: IndexStats,
    /// One per column.
    pub columns: Vec<ColumnStats>,
    /// The table's change count ([`Table::changes`]) when the statistics were taken,
    /// in the process that took them; statistics loaded at open count from 0.
    pub analyzed_at_change: u64,
    /// True if the statistics come from a sample rather than a full read.
    #[serde(default)]
    pub sampled: bool,
}

impl TableStats {
    /// Checks the statistics against the definition they describe (invariants 1, 2).
    pub fn check(&self, def: &TableDef) -> std::result::Result<(), String> {
        let key_columns = def.primary_key.len().max(1);
        if self.primary.distinct_prefixes.len() != key_columns {
            return Err(format!(
                "statistics for {} primary key columns, the table has {key_columns}",
                self.primary.distinct_prefixes.len()
            ));
        }
        if self.indexes.len() != def.indexes.len()
            || self
                .indexes
                .iter()
                .zip(&def.indexes)
                .any(|(s, i)| s.distinct_prefixes.len() != i.columns.len())
        {
            return Err("statistics do not match the table's indexes".into());
        }
        if self.columns.len() != def.columns.len() {
            return Err("statistics do not match the table's columns".into());
        }
        for (stats, column) in self.columns.iter().zip(&def.columns) {
            if !(0.0..=1.0).contains(&stats.null_fraction)
                || stats.histogram.len() > HISTOGRAM_BUCKETS_MAX + 1
                || stats.histogram.windows(2).any(|w| w[0] > w[1])
            {
                return Err(format!(
                    "statistics of column '{}' are malformed",
                    column.name
                ));
            }
        }
        Ok(())
    }

    /// The share of rows where column `column` equals a given non-NULL value:
    /// `(1 - null_fraction) / distinct` (`DEFAULT_EQ_SELECTIVITY` for an unknown
    /// column).
    pub fn selectivity_eq(&self, column: usize) -> f64 {
        let Some(stats) = self.columns.get(column) else {
            return DEFAULT_EQ_SELECTIVITY;
        };
        if stats.distinct == 0 {
            return 0.0;
        }
        (1.0 - stats.null_fraction) / stats.distinct as f64
    }

    /// The share of rows where column `column` is NULL.
    pub fn selectivity_null(&self, column: usize) -> f64 {
        self.columns
            .get(column)
            .map_or(DEFAULT_EQ_SELECTIVITY, |c| c.null_fraction)
    }

    /// The share of rows whose column `column` lies between `lower` and `upper`
    /// (NULLs never do), from the histogram. `DEFAULT_RANGE_SELECTIVITY` when there is
    /// no histogram to ask or a bound cannot be encoded for the column's type.
    pub fn selectivity_range(
        &self,
        column: usize,
        lower: Bound<&Value>,
        upper: Bound<&Value>,
    ) -> f64 {
        let Some(stats) = self.columns.get(column) else {
            return DEFAULT_RANGE_SELECTIVITY;
        };
        if stats.histogram.is_empty() {
            return if stats.null_fraction >= 1.0 {
                0.0
            } else {
                DEFAULT_RANGE_SELECTIVITY
            };
        }
        let below = |bound: Bound<&Value>, unbounded: f64| -> Option<f64> {
            Some(match bound {
                Bound::Unbounded => unbounded,
                Bound::Included(v) => stats.share_at_most(&stats.encode(v)?),
                Bound::Excluded(v) => stats.share_below(&stats.encode(v)?),
            })
        };
        // The share below the lower bound: values under an included bound, or at most
        // an excluded one.
        let lower_share = match lower {
            Bound::Unbounded => Some(0.0),
            Bound::Included(v) => stats.encode(v).map(|k| stats.share_below(&k)),
            Bound::Excluded(v) => stats.encode(v).map(|k| stats.share_at_most(&k)),
        };
        match (lower_share, below(upper, 1.0)) {
            (Some(low), Some(high)) => {
                ((1.0 - stats.null_fraction) * (high - low).max(0.0)).clamp(0.0, 1.0)
            }
            _ => DEFAULT_RANGE_SELECTIVITY,
        }
    }

    /// Rows per distinct value of the first `prefix_len` key columns of secondary
    /// index `index` (`None`: the primary key): the rows an equality lookup on that
    /// prefix is expected to find.
    pub fn rows_per_key(&self, index: Option<usize>, prefix_len: usize) -> f64 {
        let stats = match index {
            None => Some(&self.primary),
            Some(i) => self.indexes.get(i),
        };
        let distinct = stats
            .and_then(|s| s.distinct_prefixes.get(prefix_len.max(1) - 1))
            .copied()
            .unwrap_or(0);
        if distinct == 0 {
            return self.rows as f64;
        }
        self.rows as f64 / distinct as f64
    }
}

impl ColumnStats {
    /// The histogram key of `value`, or `None` if it does not fit the column.
    fn encode(&self, value: &Value) -> Option<Vec<u8>> {
        let column = Column::new("", self.ty, true).with_collation(self.collation);
        let value = check_value(&column, value.clone()).ok()?;
        if value.is_null() {
            return None;
        }
        bound_key(self.ty, self.collation, &value)
    }

    /// The share of non-NULL values at most `key`.
    fn share_at_most(&self, key: &[u8]) -> f64 {
        let h = &self.histogram;
        let buckets = (h.len() - 1).max(1) as f64;
        if key < h[0].as_slice() {
            return 0.0;
        }
        if key >= h[h.len() - 1].as_slice() {
            return 1.0;
        }
        // Buckets wholly at or below the key, then part of the one it falls in.
        let whole = h[1..].iter().filter(|b| b.as_slice() <= key).count();
        let part = interpolate(&h[whole], &h[whole + 1], key);
        ((whole as f64 + part) / buckets).clamp(0.0, 1.0)
    }

    /// The share of non-NULL values below `key`: at most, less those equal to it
    /// (whole buckets that hold only the key's value, else one distinct value's share).
    fn share_below(&self, key: &[u8]) -> f64 {
        let h = &self.histogram;
        if key < h[0].as_slice() || key > h[h.len() - 1].as_slice() {
            // Outside the sampled values: none equal the key.
            return self.share_at_most(key);
        }
        let buckets = (h.len() - 1).max(1) as f64;
        let runs = h.windows(2).filter(|w| w[0] == key && w[1] == key).count() as f64;
        let equal = (runs / buckets).max(1.0 / self.distinct.max(1) as f64);
        (self.share_at_most(key) - equal).max(0.0)
    }
}

/// Where `key` lies between `low` and `high` (0 to 1), linearly on the first 8 bytes
/// after their common prefix.
fn interpolate(low: &[u8], high: &[u8], key: &[u8]) -> f64 {
    if key <= low {
        return 0.0;
    }
    if key >= high {
        return 1.0;
    }
    let common = low.iter().zip(high).take_while(|(a, b)| a == b).count();
    let word = |bytes: &[u8]| {
        let mut word = [0u8; 8];
        for (i, b) in bytes.iter().skip(common).take(8).enumerate() {
            word[i] = *b;
        }
        u64::from_be_bytes(word) as f64
    };
    let (low, high, key) = (word(low), word(high), word(key));
    if high <= low {
        return 0.5;
    }
    ((key - low) / (high - low)).clamp(0.0, 1.0)
}

/// The histogram form of a checked non-NULL value: its key encoding, cut to
/// `HISTOGRAM_BOUND_BYTES_MAX` bytes. A string too long to encode is cut first.
fn bound_key(ty: ColumnType, collation: Collation, value: &Value) -> Option<Vec<u8>> {
    let mut key = Vec::new();
    let encoded = encode_key(&[(ty, collation)], std::slice::from_ref(value), &mut key);
    if encoded.is_err() {
        let Value::Bytes(bytes) = value else {
            return None;
        };
        let cut = Value::Bytes(bytes[..bytes.len().min(HISTOGRAM_BOUND_BYTES_MAX)].to_vec());
        encode_key(&[(ty, collation)], &[cut], &mut key).ok()?;
    }
    key.truncate(HISTOGRAM_BOUND_BYTES_MAX);
    Some(key)
}

/// Hex strings for histogram bounds in catalog.json.
mod hex_bounds {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(bounds: &[Vec<u8>], s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(bounds.iter().map(|b| {
            b.iter()
                .map(|byte| format!("{byte:02x}"))
                .collect::<String>()
        }))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Vec<u8>>, D::Error> {
        let strings = Vec::<String>::deserialize(d)?;
        strings
            .iter()
            .map(|s| {
                if s.len() % 2 != 0 {
                    return Err(serde::de::Error::custom("odd-length hex bound"));
                }
                (0..s.len())
                    .step_by(2)
                    .map(|i| {
                        u8::from_str_radix(s.get(i..i + 2).unwrap_or("?"), 16)
                            .map_err(serde::de::Error::custom)
                    })
                    .collect()
            })
            .collect()
    }
}

/// Statistics with the counts they were taken at.
#[derive(Debug)]
struct Current {
    stats: Arc<TableStats>,
    inserted_at: u64,
    deleted_at: u64,
}

/// Row change counts and current statistics of a table, shared by the handles over
/// its files (see the module docs).
#[derive(Debug, Default)]
pub(crate) struct TableActivity {
    inserted: AtomicU64,
    deleted: AtomicU64,
    updated: AtomicU64,
    current: RwLock<Option<Current>>,
}

impl TableActivity {
    /// Activity of a table opened with stored statistics `stats` (counts from 0).
    pub(crate) fn with_stats(stats: Option<&TableStats>) -> TableActivity {
        let activity = TableActivity::default();
        if let Some(stats) = stats {
            let mut stats = stats.clone();
            stats.analyzed_at_change = 0;
            *activity.current.write() = Some(Current {
                stats: Arc::new(stats),
                inserted_at: 0,
                deleted_at: 0,
            });
        }
        activity
    }

    #[inline]
    pub(crate) fn inserted(&self, rows: u64) {
        self.inserted.fetch_add(rows, Ordering::Relaxed);
    }

    #[inline]
    pub(crate) fn deleted(&self, rows: u64) {
        self.deleted.fetch_add(rows, Ordering::Relaxed);
    }

    #[inline]
    pub(crate) fn updated(&self, rows: u64) {
        self.updated.fetch_add(rows, Ordering::Relaxed);
    }

    fn counts(&self) -> (u64, u64, u64) {
        (
            self.inserted.load(Ordering::Relaxed),
            self.deleted.load(Ordering::Relaxed),
            self.updated.load(Ordering::Relaxed),
        )
    }

    pub(crate) fn changes(&self) -> u64 {
        let (i, d, u) = self.counts();
        i + d + u
    }

    pub(crate) fn stats(&self) -> Option<Arc<TableStats>> {
        self.current.read().as_ref().map(|c| c.stats.clone())
    }

    /// Drops the statistics (the indexes changed) or replaces them by `f` of them.
    pub(crate) fn adjust(&self, f: impl FnOnce(&TableStats) -> Option<TableStats>) {
        let mut current = self.current.write();
        let adjusted = current.as_ref().and_then(|c| f(&c.stats));
        match adjusted {
            Some(stats) => current.as_mut().expect("present").stats = Arc::new(stats),
            None => *current = None,
        }
    }

    /// `stats.rows` moved by the rows inserted and deleted since; `None` without
    /// statistics.
    fn rows_since(&self) -> Option<u64> {
        let current = self.current.read();
        let current = current.as_ref()?;
        let (inserted, deleted, _) = self.counts();
        let added = inserted.saturating_sub(current.inserted_at);
        let removed = deleted.saturating_sub(current.deleted_at);
        Some((current.stats.rows + added).saturating_sub(removed))
    }
}

impl Table {
    /// The statistics of the last ANALYZE (persisted across restarts), if any.
    pub fn stats(&self) -> Option<Arc<TableStats>> {
        self.activity.stats()
    }

    /// Rows inserted, deleted and updated through any handle of this table since it
    /// was opened (or truncated or rebuilt).
    pub fn changes(&self) -> u64 {
        self.activity.changes()
    }

    /// Rows changed since the statistics were taken (since open if there are none).
    pub fn changes_since_analyze(&self) -> u64 {
        let at = self.stats().map_or(0, |s| s.analyzed_at_change);
        self.changes().saturating_sub(at)
    }

    /// True when the table has no statistics or more than a tenth of its rows changed
    /// since they were taken (InnoDB's rule for recalculating persistent statistics):
    /// the SQL layer then runs ANALYZE again.
    pub fn stats_stale(&self) -> bool {
        match self.stats() {
            None => true,
            Some(stats) => self.changes_since_analyze() > stats.rows / 10,
        }
    }

    /// The planner's row count: the statistics' rows plus rows inserted less rows
    /// deleted since; without statistics, the clustered tree's pages in use times an
    /// estimate of rows per page (or the rows inserted since open, if more).
    pub fn estimated_rows(&self) -> u64 {
        if let Some(rows) = self.activity.rows_since() {
            return rows;
        }
        let (inserted, deleted, _) = self.activity.counts();
        let net = inserted.saturating_sub(deleted);
        let pages = match self.clustered.meta() {
            Ok(meta) => u64::from(meta.next.saturating_sub(1).saturating_sub(meta.free_count)),
            Err(_) => 1,
        };
        net.max(pages * self.rows_per_page_estimate())
    }

    /// Rows a leaf holds, judged from the definition: 69% full pages (the average of
    /// a tree filled by random inserts) of rows with every variable column at a
    /// quarter of its length.
    fn rows_per_page_estimate(&self) -> u64 {
        let row_bytes: usize = 16 // MVCC header
            + 8 // slot and entry overhead
            + 12 // key
            + self
                .def
                .columns
                .iter()
                .map(|c| match (c.ty.fixed_len_bytes(), c.ty) {
                    (Some(n), _) => n,
                    (None, ColumnType::Char { len } | ColumnType::VarChar { len }) => {
                        2 + (len as usize / 4).min(256)
                    }
                    (None, ColumnType::Binary { len_bytes }) => 2 + len_bytes as usize,
                    (None, ColumnType::VarBinary { len_bytes }) => {
                        2 + (len_bytes as usize / 4).min(256)
                    }
                    (None, _) => 64,
                })
                .sum::<usize>();
        (self.clustered.page_size_bytes() * 69 / 100 / row_bytes).max(1) as u64
    }
}

/// How to analyze (the defaults are the limits').
#[derive(Clone, Copy, Debug)]
pub struct AnalyzeOptions {
    /// Tables estimated at no more rows than this are read whole.
    pub full_scan_rows_max: u64,
    /// Key ranges read per tree when sampling.
    pub sample_ranges: usize,
}

impl Default for AnalyzeOptions {
    fn default() -> AnalyzeOptions {
        AnalyzeOptions {
            full_scan_rows_max: ANALYZE_FULL_SCAN_ROWS_MAX,
            sample_ranges: ANALYZE_SAMPLE_RANGES,
        }
    }
}

/// Statistics just computed, with the insert and delete counts they were taken at.
pub(crate) struct Analyzed {
    pub(crate) stats: TableStats,
    inserted_at: u64,
    deleted_at: u64,
}

impl Analyzed {
    /// Makes these the statistics of `table`'s activity.
    pub(crate) fn install(&self, table: &Table) {
        *table.activity.current.write() = Some(Current {
            stats: Arc::new(self.stats.clone()),
            inserted_at: self.inserted_at,
            deleted_at: self.deleted_at,
        });
    }
}

/// Computes the statistics of `table`; the caller installs and persists them.
pub(crate) fn analyze(table: &Table, options: AnalyzeOptions) -> Result<Analyzed> {
    table.check_current()?;
    let (inserted_at, deleted_at, updated_at) = table.activity.counts();
    let full = table.estimated_rows() <= options.full_scan_rows_max;
    let plan = Plan {
        full,
        sample_ranges: options.sample_ranges.max(1),
        readahead: table.scan_config().readahead_pages,
    };
    let mut rng =
        Rng::new(u64::from(table.table_id()).wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ table.changes());
    let mut reservoir = Reservoir::new(ANALYZE_COLUMN_SAMPLE_ROWS);
    let key_columns = table.def.primary_key.len().max(1);
    let clustered = plan.sample_tree(
        &table.clustered,
        &table.pk_types,
        key_columns,
        &mut rng,
        |_, value, rng| {
            if RowHeader::read(value)?.is_delete_marked() {
                return Ok(false);
            }
            if let Some(slot) = reservoir.offer(rng) {
                *slot = Some(table.decode_stored(value)?);
            }
            Ok(true)
        },
    )?;
    let rows = clustered.estimated_entries();
    let primary = clustered.index_stats(rows);
    let mut indexes = Vec::with_capacity(table.indexes.len());
    for index in &table.indexes {
        let sample = plan.sample_tree(
            &index.tree,
            &index.key_types,
            index.column_count(),
            &mut rng,
            |_, _, _| Ok(true),
        )?;
        indexes.push(sample.index_stats(rows));
    }
    let exact = clustered.complete && reservoir.seen <= reservoir.capacity as u64;
    let sample: Vec<Vec<Value>> = reservoir.rows.into_iter().flatten().collect();
    let columns = table
        .def
        .columns
        .iter()
        .enumerate()
        .map(|(c, column)| column_stats(column, c, &sample, rows, exact))
        .collect();
    let stats = TableStats {
        rows,
        indexes,
        primary,
        columns,
        analyzed_at_change: inserted_at + deleted_at + updated_at,
        sampled: !clustered.complete,
    };
    stats.check(&table.def).map_err(|reason| {
        Error::CorruptData(format!("ANALYZE produced bad statistics: {reason}"))
    })?;
    Ok(Analyzed {
        stats,
        inserted_at,
        deleted_at,
    })
}

/// Which ranges of each tree to read.
struct Plan {
    full: bool,
    sample_ranges: usize,
    readahead: usize,
}

/// What reading (part of) one tree found.
struct TreeSample {
    /// Entries visited that count (live rows; every secondary entry).
    entries: u64,
    /// `boundaries[k - 1]`: neighbouring pairs whose first `k` key columns differ.
    boundaries: Vec<u64>,
    /// Neighbouring pairs compared.
    pairs: u64,
    ranges_read: usize,
    ranges_total: usize,
    /// Every range was read, in order: the counts are exact.
    complete: bool,
}

impl TreeSample {
    fn estimated_entries(&self) -> u64 {
        if self.complete || self.ranges_read == 0 {
            return self.entries;
        }
        (self.entries as f64 * self.ranges_total as f64 / self.ranges_read as f64).round() as u64
    }

    /// Distinct prefixes, never more than `rows` (the table's) nor the entries.
    fn index_stats(&self, rows: u64) -> IndexStats {
        let entries = self.estimated_entries();
        let distinct_prefixes = self
            .boundaries
            .iter()
            .map(|&b| {
                if entries == 0 {
                    return 0;
                }
                let distinct = if self.complete {
                    b + 1
                } else if self.pairs == 0 {
                    entries
                } else {
                    (1.0 + b as f64 / self.pairs as f64 * (entries - 1) as f64).round() as u64
                };
                distinct.clamp(1, entries.min(rows.max(1)))
            })
            .collect();
        IndexStats { distinct_prefixes }
    }
}

impl Plan {
    /// Reads the ranges of `tree` the plan picks, counting key prefix boundaries over
    /// the first `prefixes` of `types`; `visit(key, value, rng)` says whether an entry
    /// counts.
    fn sample_tree(
        &self,
        tree: &Tree,
        types: &[(ColumnType, Collation)],
        prefixes: usize,
        rng: &mut Rng,
        mut visit: impl FnMut(&[u8], &[u8], &mut Rng) -> Result<bool>,
    ) -> Result<TreeSample> {
        let ranges = if self.full {
            vec![LeafRange {
                lower: Bound::Unbounded,
                upper: Bound::Unbounded,
            }]
        } else {
            tree.partition(ANALYZE_PARTITION_RANGES)?
        };
        let picked = pick(ranges.len(), self.sample_ranges, rng);
        let mut sample = TreeSample {
            entries: 0,
            boundaries: vec![0; prefixes],
            pairs: 0,
            ranges_read: 0,
            ranges_total: ranges.len(),
            complete: false,
        };
        // Ends of each prefix of the previous counted key, and the key.
        let mut previous: Option<(Vec<u8>, Vec<usize>)> = None;
        let mut last_picked = None;
        for &r in &picked {
            if sample.entries >= ANALYZE_SAMPLE_ROWS_MAX as u64 && !self.full {
                break;
            }
            // Neighbours are compared across adjacent ranges only.
            if last_picked.is_none_or(|last| last + 1 != r) {
                previous = None;
            }
            last_picked = Some(r);
            let mut failure = None;
            tree.scan_range(&ranges[r], self.readahead, |key, value| {
                let counted = visit(key, value, rng).and_then(|counted| {
                    if counted {
                        sample.count(types, key, &mut previous)?;
                    }
                    Ok(())
                });
                match counted {
                    Ok(()) => Ok(true),
                    Err(error) => {
                        failure = Some(error);
                        Ok(false)
                    }
                }
            })?;
            if let Some(error) = failure {
                return Err(error);
            }
            sample.ranges_read += 1;
        }
        sample.complete = sample.ranges_read == ranges.len();
        Ok(sample)
    }
}

impl TreeSample {
    /// Counts one entry and its boundary with the previous one.
    fn count(
        &mut self,
        types: &[(ColumnType, Collation)],
        key: &[u8],
        previous: &mut Option<(Vec<u8>, Vec<usize>)>,
    ) -> Result<()> {
        let ends = (1..=self.boundaries.len())
            .map(|k| key_prefix_len(types, key, k))
            .collect::<Result<Vec<_>>>()?;
        if let Some((prev_key, prev_ends)) = previous.as_ref() {
            self.pairs += 1;
            let first_change = (0..ends.len())
                .find(|&k| prev_key[..prev_ends[k]] != key[..ends[k]])
                .unwrap_or(ends.len());
            for b in &mut self.boundaries[first_change..] {
                *b += 1;
            }
        }
        self.entries += 1;
        *previous = Some((key.to_vec(), ends));
        Ok(())
    }
}

/// `count` of the indexes `0..total` at random, ascending (all of them if `count`
/// is at least `total`).
fn pick(total: usize, count: usize, rng: &mut Rng) -> Vec<usize> {
    if count >= total {
        return (0..total).collect();
    }
    // A partial Fisher-Yates shuffle.
    let mut all: Vec<usize> = (0..total).collect();
    for i in 0..count {
        let j = i + rng.below((total - i) as u64) as usize;
        all.swap(i, j);
    }
    let mut picked = all[..count].to_vec();
    picked.sort_unstable();
    picked
}

/// A uniform sample of rows (Vitter's algorithm R).
struct Reservoir {
    capacity: usize,
    rows: Vec<Option<Vec<Value>>>,
    seen: u64,
}

impl Reservoir {
    fn new(capacity: usize) -> Reservoir {
        Reservoir {
            capacity,
            rows: Vec::new(),
            seen: 0,
        }
    }

    /// The slot the next row goes to, or `None` if it is not sampled.
    fn offer(&mut self, rng: &mut Rng) -> Option<&mut Option<Vec<Value>>> {
        self.seen += 1;
        if self.rows.len() < self.capacity {
            self.rows.push(None);
            return self.rows.last_mut();
        }
        let j = rng.below(self.seen) as usize;
        self.rows.get_mut(j)
    }
}

/// Statistics of column `c` from `sample` (rows out of `rows`; `exact`: the sample is
/// the whole table).
fn column_stats(
    column: &Column,
    c: usize,
    sample: &[Vec<Value>],
    rows: u64,
    exact: bool,
) -> ColumnStats {
    let mut keys: Vec<Vec<u8>> = sample
        .iter()
        .filter(|row| !row[c].is_null())
        .filter_map(|row| full_key(column, &row[c]))
        .collect();
    let nulls = sample.iter().filter(|row| row[c].is_null()).count();
    let null_fraction = if sample.is_empty() {
        0.0
    } else {
        nulls as f64 / sample.len() as f64
    };
    keys.sort_unstable();
    let n = keys.len() as u64;
    let mut distinct_in_sample = 0u64;
    let mut singletons = 0u64;
    let mut i = 0;
    while i < keys.len() {
        let run = keys[i..].iter().take_while(|k| **k == keys[i]).count();
        distinct_in_sample += 1;
        if run == 1 {
            singletons += 1;
        }
        i += run;
    }
    let non_null_rows = (rows as f64 * (1.0 - null_fraction)).round() as u64;
    let distinct = if exact || n == 0 {
        distinct_in_sample
    } else {
        let (n_f, d, f1, total) = (
            n as f64,
            distinct_in_sample as f64,
            singletons as f64,
            non_null_rows.max(n) as f64,
        );
        let estimate = n_f * d / (n_f - f1 + f1 * n_f / total);
        (estimate.round() as u64).clamp(distinct_in_sample, non_null_rows.max(n))
    };
    let histogram = histogram(&keys);
    ColumnStats {
        ty: column.ty,
        collation: column.collation,
        null_fraction,
        distinct,
        histogram,
    }
}

/// The whole key encoding of a value, for counting distinct values (a string too
/// long to encode is cut, as for bounds, but at the key length limit).
fn full_key(column: &Column, value: &Value) -> Option<Vec<u8>> {
    let mut key = Vec::new();
    let types = [(column.ty, column.collation)];
    if encode_key(&types, std::slice::from_ref(value), &mut key).is_ok() {
        return Some(key);
    }
    let Value::Bytes(bytes) = value else {
        return None;
    };
    let cut = tarn_row::limits::KEY_LEN_MAX_BYTES / 2;
    let value = Value::Bytes(bytes[..bytes.len().min(cut)].to_vec());
    encode_key(&types, &[value], &mut key).ok()?;
    Some(key)
}

/// Equi-height bounds over sorted keys: the smallest, then the largest of each of up
/// to `HISTOGRAM_BUCKETS_MAX` buckets of equal counts.
fn histogram(sorted: &[Vec<u8>]) -> Vec<Vec<u8>> {
    let n = sorted.len();
    if n == 0 {
        return Vec::new();
    }
    let buckets = HISTOGRAM_BUCKETS_MAX.min(n);
    let cut = |key: &Vec<u8>| key[..key.len().min(HISTOGRAM_BOUND_BYTES_MAX)].to_vec();
    std::iter::once(cut(&sorted[0]))
        .chain((1..=buckets).map(|b| cut(&sorted[(b * n).div_ceil(buckets) - 1])))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_round_trip_through_json_as_hex() {
        let stats = ColumnStats {
            ty: ColumnType::Int { unsigned: false },
            collation: Collation::Binary,
            null_fraction: 0.5,
            distinct: 3,
            histogram: vec![vec![0x01, 0x00, 0xff], vec![0x01, 0x80, 0x00]],
        };
        let json = serde_json::to_string(&stats).unwrap();
        assert!(json.contains("\"0100ff\""), "{json}");
        let back: ColumnStats = serde_json::from_str(&json).unwrap();
        assert_eq!(back, stats);
        let bad = json.replace("0100ff", "0100f");
        assert!(serde_json::from_str::<ColumnStats>(&bad).is_err());
    }

    #[test]
    fn interpolation_is_linear_on_integer_keys() {
        let key = |v: i64| {
            bound_key(
                ColumnType::BigInt { unsigned: false },
                Collation::Binary,
                &Value::Int(v),
            )
            .unwrap()
        };
        assert_eq!(interpolate(&key(0), &key(100), &key(25)), 0.25);
        assert_eq!(interpolate(&key(-50), &key(50), &key(0)), 0.5);
        assert_eq!(interpolate(&key(0), &key(100), &key(-1)), 0.0);
        assert_eq!(interpolate(&key(0), &key(100), &key(101)), 1.0);
    }

    #[test]
    fn picks_are_distinct_sorted_and_bounded() {
        let mut rng = Rng::new(7);
        let picked = pick(100, 10, &mut rng);
        assert_eq!(picked.len(), 10);
        assert!(picked.windows(2).all(|w| w[0] < w[1]));
        assert!(picked.iter().all(|&p| p < 100));
        assert_eq!(pick(5, 10, &mut rng), vec![0, 1, 2, 3, 4]);
    }
}
