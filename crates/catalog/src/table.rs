//! A table: a clustered B+tree holding the rows, keyed by the primary key, plus one
//! B+tree per secondary index.
//!
//! - Clustered entries are `encode_key(primary key) -> row` (the row format of
//!   `tarn-row`, whose header has room for a transaction id and a roll pointer). A
//!   table without a primary key gets a hidden 8-byte row id, as InnoDB does.
//! - Secondary entries are `encode_key(index columns) ++ encode_key(primary key) ->
//!   empty`: the primary key makes every entry unique, and is how a secondary lookup
//!   finds its row. A unique index checks the index-column prefix before inserting
//!   (NULLs never conflict, as in MySQL). A key prefix part (`KEY k (name(10))`)
//!   holds the column's value cut to its prefix ([`prefix_of`]), both in entries and
//!   in the bounds a range read encodes ([`SecondaryIndex::key_bounds`], which widens
//!   them to every row sharing the prefix): a unique prefix index keeps prefixes
//!   unique, and a read through a prefix index returns a superset to re-check.
//! - Values longer than a quarter page live on overflow pages of the clustered file.
//!
//! # Invariants
//! 1. Every clustered entry has exactly one entry in each secondary index, and the
//!    other way round, once a write call returns (a write that fails part-way undoes
//!    what it did).
//! 2. Nothing here keeps a latch between calls: concurrent writers to different keys
//!    are safe; two writers racing on one unique key are not serialised until the
//!    lock manager arrives with the transactions issue.
//! 3. A handle replaced by DDL (an index added or dropped, a rename, a truncate or
//!    rebuild) or whose table was dropped is retired: every later call fails with
//!    `TableDefinitionChanged` (1412). A call already past that check when the DDL runs
//!    is not stopped: that would take metadata locks held by every statement (the SQL
//!    layer's hold DDL off only LOCK TABLES and the global read lock). (Transactional writers
//!    and locking readers check again once their table lock is granted, so one that
//!    waited for a truncate's or rebuild's exclusive table lock never writes to the
//!    files it replaced.)

use std::ops::Bound;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};

use tarn_btree::{Direction, Tree};
use tarn_common::{Error, Result};
use tarn_row::row::{OverflowRef, OverflowStore, RowHeader, RowLimits};
use tarn_row::{Collation, ColumnType, RowLayout, Value, check_value, encode_key};

use crate::auto_increment::{AutoIncrementCounter, exhausted, leading_int};
use crate::catalog::{IndexDef, TableDef};
use crate::stats::TableActivity;

/// Decoding rows without external values needs no overflow store.
const NO_OVERFLOW: tarn_row::row::NoOverflow = tarn_row::row::NoOverflow;

/// Key column types of the hidden row id.
const ROW_ID_KEY: [(ColumnType, Collation); 1] =
    [(ColumnType::BigInt { unsigned: true }, Collation::Binary)];

/// Overflow values on the pages of a tree's file.
pub struct TreeOverflow<'t>(pub &'t Tree);

impl OverflowStore for TreeOverflow<'_> {
    fn write(&self, bytes: &[u8]) -> Result<OverflowRef> {
        Ok(OverflowRef {
            first_page_no: self.0.write_overflow(bytes)?,
            len_bytes: bytes.len() as u64,
        })
    }

    fn read(&self, r: &OverflowRef, out: &mut Vec<u8>) -> Result<()> {
        self.0.read_overflow(r.first_page_no, r.len_bytes, out)
    }

    fn free(&self, r: &OverflowRef) -> Result<()> {
        self.0.free_overflow(r.first_page_no)
    }
}

/// An overflow store that remembers what it wrote (bulk loads free it on failure).
struct RecordingOverflow<'t> {
    store: TreeOverflow<'t>,
    written: parking_lot::Mutex<Vec<OverflowRef>>,
}

impl OverflowStore for RecordingOverflow<'_> {
    fn write(&self, bytes: &[u8]) -> Result<OverflowRef> {
        let r = self.store.write(bytes)?;
        self.written.lock().push(r);
        Ok(r)
    }

    fn read(&self, r: &OverflowRef, out: &mut Vec<u8>) -> Result<()> {
        self.store.read(r, out)
    }

    fn free(&self, r: &OverflowRef) -> Result<()> {
        self.written
            .lock()
            .retain(|w| w.first_page_no != r.first_page_no);
        self.store.free(r)
    }
}

/// A secondary index of an open table.
pub struct SecondaryIndex {
    pub def: IndexDef,
    pub tree: Arc<Tree>,
    /// Types of the index columns followed by the primary key columns.
    pub(crate) key_types: Vec<(ColumnType, Collation)>,
}

impl SecondaryIndex {
    /// Columns of the index itself (without the primary key suffix).
    pub fn column_count(&self) -> usize {
        self.def.columns.len()
    }

    /// The values `row` has in this index's key parts: each column's value, a prefix
    /// part's cut to its length ([`prefix_of`]). What entries are encoded from, and
    /// what a duplicate-key error shows (MySQL shows the prefix too).
    pub fn key_values(&self, row: &[Value]) -> Vec<Value> {
        self.def
            .columns
            .iter()
            .enumerate()
            .map(|(part, &c)| match self.def.prefix_len(part) {
                Some(len) => prefix_of(self.key_types[part].0, len, &row[c]),
                None => row[c].clone(),
            })
            .collect()
    }

    /// The primary key part of an entry's key.
    pub fn primary_key_of<'k>(&self, entry_key: &'k [u8]) -> Result<&'k [u8]> {
        let split = tarn_row::key_prefix_len(&self.key_types, entry_key, self.column_count())?;
        Ok(&entry_key[split..])
    }
}

/// Scan knobs from the settings, as they are when a scan starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScanConfig {
    pub threads: usize,
    pub readahead_pages: usize,
    pub secondary_prefetch: tarn_common::settings::PrefetchUnit,
    pub fill_factor_pct: u32,
}

impl ScanConfig {
    /// The knobs `settings` give (`scan_threads = 0`: one per core).
    pub fn from_settings(settings: &tarn_common::settings::Settings) -> ScanConfig {
        ScanConfig {
            threads: crate::scan::effective_threads(settings.scan_threads as usize),
            readahead_pages: settings.scan_readahead_pages as usize,
            secondary_prefetch: settings.secondary_prefetch,
            fill_factor_pct: settings.bulk_fill_factor_pct,
        }
    }
}

/// The scan knobs every open table reads, shared so that `SET GLOBAL scan_threads`
/// (and the other scan settings) reach scans that start afterwards. Each knob is read
/// on its own; a scan that starts while they change may see old and new ones mixed,
/// which is harmless.
#[derive(Debug)]
pub struct SharedScanConfig {
    threads: AtomicUsize,
    readahead_pages: AtomicUsize,
    /// [`PREFETCH_ADAPTIVE`] or the fixed unit.
    secondary_prefetch: AtomicU32,
    fill_factor_pct: AtomicU32,
}

/// `SharedScanConfig::secondary_prefetch` for `PrefetchUnit::Adaptive` (fixed units
/// are at most `limits::PREFETCH_UNIT_MAX`).
const PREFETCH_ADAPTIVE: u32 = u32::MAX;

impl SharedScanConfig {
    pub fn new(config: ScanConfig) -> SharedScanConfig {
        let shared = SharedScanConfig {
            threads: AtomicUsize::new(0),
            readahead_pages: AtomicUsize::new(0),
            secondary_prefetch: AtomicU32::new(0),
            fill_factor_pct: AtomicU32::new(0),
        };
        shared.set(config);
        shared
    }

    pub fn get(&self) -> ScanConfig {
        use tarn_common::settings::PrefetchUnit;
        let prefetch = self.secondary_prefetch.load(Ordering::Relaxed);
        ScanConfig {
            threads: self.threads.load(Ordering::Relaxed),
            readahead_pages: self.readahead_pages.load(Ordering::Relaxed),
            secondary_prefetch: if prefetch == PREFETCH_ADAPTIVE {
                PrefetchUnit::Adaptive
            } else {
                PrefetchUnit::Fixed(prefetch)
            },
            fill_factor_pct: self.fill_factor_pct.load(Ordering::Relaxed),
        }
    }

    pub fn set(&self, config: ScanConfig) {
        use tarn_common::settings::PrefetchUnit;
        let prefetch = match config.secondary_prefetch {
            PrefetchUnit::Adaptive => PREFETCH_ADAPTIVE,
            PrefetchUnit::Fixed(n) => {
                assert!(n < PREFETCH_ADAPTIVE, "a fixed prefetch unit is bounded");
                n
            }
        };
        self.threads.store(config.threads, Ordering::Relaxed);
        self.readahead_pages
            .store(config.readahead_pages, Ordering::Relaxed);
        self.secondary_prefetch.store(prefetch, Ordering::Relaxed);
        self.fill_factor_pct
            .store(config.fill_factor_pct, Ordering::Relaxed);
    }
}

/// An open table.
pub struct Table {
    pub(crate) database: String,
    pub(crate) def: TableDef,
    pub(crate) layout: RowLayout,
    pub(crate) clustered: Arc<Tree>,
    pub(crate) pk_types: Vec<(ColumnType, Collation)>,
    pub(crate) indexes: Vec<SecondaryIndex>,
    /// The next hidden row id (tables without a primary key).
    next_row_id: AtomicU64,
    /// The AUTO_INCREMENT counter, if the table has such a column (see
    /// [`crate::auto_increment`]).
    pub(crate) auto_increment: Option<Arc<AutoIncrementCounter>>,
    /// Row change counts and statistics (see [`crate::stats`]).
    pub(crate) activity: Arc<TableActivity>,
    /// Set when DDL replaced this handle or dropped the table: every later use fails
    /// with `TableDefinitionChanged` instead of missing an index or touching a
    /// deleted file.
    retired: AtomicBool,
    /// Shared by every table of a storage engine (see [`SharedScanConfig`]).
    pub(crate) scan_config: Arc<SharedScanConfig>,
}

impl Table {
    pub(crate) fn open(
        database: &str,
        def: TableDef,
        clustered: Arc<Tree>,
        index_trees: Vec<Arc<Tree>>,
        scan_config: Arc<SharedScanConfig>,
    ) -> Result<Table> {
        let layout = RowLayout::new(&def.columns)?;
        let pk_types: Vec<_> = if def.primary_key.is_empty() {
            ROW_ID_KEY.to_vec()
        } else {
            def.primary_key
                .iter()
                .map(|&c| (def.columns[c].ty, def.columns[c].collation))
                .collect()
        };
        let indexes = def
            .indexes
            .iter()
            .zip(index_trees)
            .map(|(index, tree)| SecondaryIndex {
                key_types: index
                    .columns
                    .iter()
                    .map(|&c| (def.columns[c].ty, def.columns[c].collation))
                    .chain(pk_types.iter().copied())
                    .collect(),
                def: index.clone(),
                tree,
            })
            .collect();
        let table = Table {
            database: database.to_string(),
            def,
            layout,
            clustered,
            pk_types,
            indexes,
            next_row_id: AtomicU64::new(1),
            auto_increment: None,
            activity: Arc::default(),
            retired: AtomicBool::new(false),
            scan_config,
        };
        let mut table = table;
        if let Some(auto) = table.def.auto_increment {
            let next = table.auto_increment_floor()?.max(auto.first_value());
            table.auto_increment = Some(Arc::new(AutoIncrementCounter::new(auto.column, next)));
        }
        if table.def.primary_key.is_empty() {
            // Continue after the largest row id in use.
            let mut cursor =
                table
                    .clustered
                    .range(Bound::Unbounded, Bound::Unbounded, Direction::Backward);
            if let Some((key, _)) = cursor.next_entry()? {
                let id = key
                    .get(1..9)
                    .filter(|_| key.len() == 9)
                    .and_then(|b| b.try_into().ok())
                    .map(u64::from_be_bytes)
                    .ok_or_else(|| {
                        Error::CorruptData(format!(
                            "table '{}': a hidden row id key of {} bytes (expected 9)",
                            table.def.name,
                            key.len()
                        ))
                    })?;
                table.next_row_id.store(id + 1, Ordering::Relaxed);
            }
        }
        Ok(table)
    }

    /// 1 + the largest value in the AUTO_INCREMENT column (1 if it holds none above 0):
    /// the last key of the index the column leads, the clustered one first. Keys of
    /// rows deleted but not purged count, and so may a stale secondary entry's: the
    /// result is never too small.
    pub(crate) fn auto_increment_floor(&self) -> Result<u64> {
        let Some(auto) = self.def.auto_increment else {
            return Ok(1);
        };
        let tree = if self.def.primary_key.first() == Some(&auto.column) {
            &self.clustered
        } else {
            match self
                .indexes
                .iter()
                .find(|i| i.def.columns.first() == Some(&auto.column))
            {
                Some(index) => &index.tree,
                None => return Err(crate::catalog::wrong_auto_key()),
            }
        };
        let mut cursor = tree.range(Bound::Unbounded, Bound::Unbounded, Direction::Backward);
        let Some((key, _)) = cursor.next_entry()? else {
            return Ok(1);
        };
        let largest = leading_int(self.def.columns[auto.column].ty, key)?;
        Ok(match largest {
            Some(v) if v >= 1 => u64::try_from(v).unwrap_or(u64::MAX).saturating_add(1),
            _ => 1,
        })
    }

    /// Shares `previous`'s counters with this handle, which replaces it over the same
    /// rows (an index added or dropped, a rename): see [`crate::auto_increment`] and
    /// [`crate::stats`].
    pub(crate) fn inherit_counters(&mut self, previous: &Table) {
        self.activity = previous.activity.clone();
        if let (Some(mine), Some(theirs)) = (&self.auto_increment, &previous.auto_increment)
            && mine.column == theirs.column
        {
            self.auto_increment = Some(theirs.clone());
        }
    }

    /// The AUTO_INCREMENT column, if the table has one.
    pub fn auto_increment_column(&self) -> Option<usize> {
        self.auto_increment.as_ref().map(|a| a.column)
    }

    /// The value the AUTO_INCREMENT counter hands out next (`SHOW TABLE STATUS`,
    /// `information_schema.TABLES.AUTO_INCREMENT`), if the table has such a column.
    pub fn auto_increment_next(&self) -> Option<u64> {
        self.auto_increment.as_ref().map(|a| a.next())
    }

    /// Takes `count` (at least 1) consecutive fresh AUTO_INCREMENT values and returns
    /// the first. Lock-free; concurrent callers never get the same value. Values are
    /// not given back when the insert fails or rolls back (MySQL's
    /// `innodb_autoinc_lock_mode = 2`: gaps are possible). Fails with 1467 rather than
    /// wrap past `u64::MAX`; the SQL layer checks the column type's range.
    pub fn reserve_auto_increment(&self, count: u64) -> Result<u64> {
        self.check_current()?;
        let Some(counter) = &self.auto_increment else {
            return Err(Error::InvalidDefinition(format!(
                "table '{}' has no AUTO_INCREMENT column",
                self.def.name
            )));
        };
        counter
            .reserve(count.max(1))
            .ok_or_else(|| exhausted(&self.def.name))
    }

    /// Moves the AUTO_INCREMENT counter past `value`, which a statement stored
    /// explicitly (negative values and values below the counter change nothing).
    pub fn observe_auto_increment(&self, value: u64) {
        if let Some(counter) = &self.auto_increment {
            counter.observe(value);
        }
    }

    pub fn database(&self) -> &str {
        &self.database
    }

    pub fn def(&self) -> &TableDef {
        &self.def
    }

    pub fn layout(&self) -> &RowLayout {
        &self.layout
    }

    pub fn clustered(&self) -> &Arc<Tree> {
        &self.clustered
    }

    pub fn indexes(&self) -> &[SecondaryIndex] {
        &self.indexes
    }

    /// The secondary index called `name` (case-insensitive).
    pub fn index(&self, name: &str) -> Result<&SecondaryIndex> {
        self.indexes
            .iter()
            .find(|i| i.def.name.eq_ignore_ascii_case(name))
            .ok_or_else(|| Error::UnknownIndex(name.to_string()))
    }

    /// Marks this handle out of date (called by `Storage` under its DDL latch).
    pub(crate) fn retire(&self) {
        self.retired.store(true, Ordering::Release);
    }

    /// Fails if DDL replaced this handle or dropped the table.
    pub fn check_current(&self) -> Result<()> {
        if self.retired.load(Ordering::Acquire) {
            return Err(Error::TableDefinitionChanged(format!(
                "{}.{}",
                self.database, self.def.name
            )));
        }
        Ok(())
    }

    /// The scan knobs as they are now.
    pub fn scan_config(&self) -> ScanConfig {
        self.scan_config.get()
    }

    pub(crate) fn overflow(&self) -> TreeOverflow<'_> {
        TreeOverflow(&self.clustered)
    }

    /// The stored form of a checked row whose clustered key is `key_len` bytes long,
    /// with long values written to `overflow`.
    fn encode_row(
        &self,
        row: &[Value],
        key_len: usize,
        overflow: &dyn OverflowStore,
    ) -> Result<Vec<u8>> {
        let mut bytes = Vec::new();
        self.layout.encode(
            row,
            RowHeader::default(),
            overflow,
            self.row_limits(key_len),
            &mut bytes,
        )?;
        Ok(bytes)
    }

    /// The stored form of a row version written by transaction `trx_id`, whose
    /// previous version is under `roll_ptr`.
    pub(crate) fn encode_row_tx(
        &self,
        row: &[Value],
        key_len: usize,
        overflow: &dyn OverflowStore,
        trx_id: u64,
        roll_ptr: u64,
    ) -> Result<Vec<u8>> {
        let mut bytes = Vec::new();
        let header = RowHeader {
            flags: 0,
            trx_id,
            roll_ptr,
        };
        self.layout
            .encode(row, header, overflow, self.row_limits(key_len), &mut bytes)?;
        Ok(bytes)
    }

    pub(crate) fn row_limits(&self, key_len: usize) -> RowLimits {
        RowLimits {
            overflow_threshold_bytes: self.clustered.page_size_bytes() / 4,
            max_row_bytes: self.clustered.max_entry_bytes().saturating_sub(key_len),
        }
    }

    /// Checks and normalises a full row of values.
    pub fn check_row(&self, row: Vec<Value>) -> Result<Vec<Value>> {
        if row.len() != self.def.columns.len() {
            return Err(Error::IncorrectValue {
                column: self.def.name.clone(),
                reason: format!(
                    "{} values for {} columns",
                    row.len(),
                    self.def.columns.len()
                ),
            });
        }
        row.into_iter()
            .zip(&self.def.columns)
            .map(|(value, column)| check_value(column, value))
            .collect()
    }

    /// The clustered key of a checked row (taking a new hidden row id if the table has
    /// no primary key).
    pub(crate) fn primary_key_of_row(&self, row: &[Value]) -> Result<Vec<u8>> {
        let mut key = Vec::new();
        if self.def.primary_key.is_empty() {
            let id = self.next_row_id.fetch_add(1, Ordering::Relaxed);
            encode_key(&ROW_ID_KEY, &[Value::UInt(id)], &mut key)?;
        } else {
            let values: Vec<Value> = self
                .def
                .primary_key
                .iter()
                .map(|&c| row[c].clone())
                .collect();
            encode_key(&self.pk_types, &values, &mut key)?;
        }
        Ok(key)
    }

    /// The clustered key for primary key values (the hidden row id for tables
    /// without a primary key).
    pub fn encode_primary_key(&self, pk: &[Value]) -> Result<Vec<u8>> {
        let mut key = Vec::new();
        if self.def.primary_key.is_empty() {
            encode_key(&ROW_ID_KEY, pk, &mut key)?;
        } else {
            let pk: Vec<Value> = pk
                .iter()
                .zip(&self.def.primary_key)
                .map(|(v, &c)| check_value(&self.def.columns[c], v.clone()))
                .collect::<Result<_>>()?;
            encode_key(&self.pk_types, &pk, &mut key)?;
        }
        Ok(key)
    }

    /// The secondary entry key of `row` (whose clustered key is `pk_key`), and
    /// whether its index columns hold a NULL.
    pub(crate) fn secondary_key(
        &self,
        index: &SecondaryIndex,
        row: &[Value],
        pk_key: &[u8],
    ) -> Result<(Vec<u8>, usize, bool)> {
        let values = index.key_values(row);
        let has_null = values.iter().any(Value::is_null);
        let mut key = Vec::new();
        encode_key(&index.key_types[..index.column_count()], &values, &mut key)?;
        let prefix_len = key.len();
        key.extend_from_slice(pk_key);
        Ok((key, prefix_len, has_null))
    }

    pub(crate) fn duplicate(&self, index: &str, values: &[Value]) -> Error {
        Error::DuplicateKey {
            index: format!("{}.{}", self.def.name, index),
            key: values
                .iter()
                .map(|v| v.to_string())
                .collect::<Vec<_>>()
                .join("-"),
        }
    }

    /// Inserts into a unique index only if no entry has the same index-column prefix.
    fn insert_secondary(&self, index: &SecondaryIndex, row: &[Value], pk_key: &[u8]) -> Result<()> {
        let (key, prefix_len, has_null) = self.secondary_key(index, row, pk_key)?;
        if index.def.unique && !has_null {
            let prefix = key[..prefix_len].to_vec();
            let mut cursor = index.tree.range(
                Bound::Included(prefix.clone()),
                Bound::Unbounded,
                Direction::Forward,
            );
            if let Some((found, _)) = cursor.next_entry()?
                && found.starts_with(&prefix)
            {
                let values = index.key_values(row);
                return Err(self.duplicate(&index.def.name, &values));
            }
        }
        index.tree.insert(&key, &[])
    }

    fn delete_secondary(&self, index: &SecondaryIndex, row: &[Value], pk_key: &[u8]) -> Result<()> {
        let (key, _, _) = self.secondary_key(index, row, pk_key)?;
        if index.tree.delete(&key)?.is_none() {
            return Err(index.tree_corrupt("a row's secondary entry is missing"));
        }
        Ok(())
    }

    /// Inserts a row (one value per column). Fails with `DuplicateKey` if the primary
    /// key or a unique index value exists; then nothing changes.
    pub fn insert(&self, row: Vec<Value>) -> Result<()> {
        self.check_current()?;
        let row = self.check_row(row)?;
        let key = self.primary_key_of_row(&row)?;
        let overflow = self.overflow();
        let bytes = self.encode_row(&row, key.len(), &overflow)?;
        if let Err(error) = self.clustered.insert(&key, &bytes) {
            self.layout.free_overflow(&bytes, &overflow)?;
            return Err(match error {
                Error::DuplicateKey { .. } => {
                    let pk: Vec<Value> = self
                        .def
                        .primary_key
                        .iter()
                        .map(|&c| row[c].clone())
                        .collect();
                    self.duplicate("PRIMARY", &pk)
                }
                other => other,
            });
        }
        for (i, index) in self.indexes.iter().enumerate() {
            if let Err(error) = self.insert_secondary(index, &row, &key) {
                for done in &self.indexes[..i] {
                    self.delete_secondary(done, &row, &key)?;
                }
                self.clustered.delete(&key)?;
                self.layout.free_overflow(&bytes, &overflow)?;
                return Err(error);
            }
        }
        self.activity.inserted(1);
        Ok(())
    }

    /// The row with primary key `pk` (the hidden row id for tables without one).
    pub fn get(&self, pk: &[Value]) -> Result<Option<Vec<Value>>> {
        let key = self.encode_primary_key(pk)?;
        self.get_by_key(&key)
    }

    /// The row under an encoded clustered key.
    pub fn get_by_key(&self, key: &[u8]) -> Result<Option<Vec<Value>>> {
        self.check_current()?;
        // Decoded under the leaf latch: a concurrent delete cannot free the row's
        // overflow chain while it is read.
        let overflow = self.overflow();
        let row = self.clustered.get_with(key, |bytes| {
            if RowHeader::read(bytes)?.is_delete_marked() {
                return Ok(None);
            }
            self.layout.decode(bytes, &overflow).map(Some)
        })?;
        Ok(row.flatten())
    }

    /// Deletes the row with primary key `pk`; returns it if it existed.
    pub fn delete(&self, pk: &[Value]) -> Result<Option<Vec<Value>>> {
        self.check_current()?;
        let key = self.encode_primary_key(pk)?;
        let Some(bytes) = self.clustered.delete(&key)? else {
            return Ok(None);
        };
        let overflow = self.overflow();
        let row = self.layout.decode(&bytes, &overflow)?;
        for index in &self.indexes {
            self.delete_secondary(index, &row, &key)?;
        }
        self.layout.free_overflow(&bytes, &overflow)?;
        self.activity.deleted(1);
        Ok(Some(row))
    }

    /// Replaces the row with primary key `pk` by `row` (which may change the primary
    /// key). Returns false if no row has that key. On a duplicate key nothing changes.
    pub fn update(&self, pk: &[Value], row: Vec<Value>) -> Result<bool> {
        self.check_current()?;
        let row = self.check_row(row)?;
        let key = self.encode_primary_key(pk)?;
        let Some(old_bytes) = self.clustered.get(&key)? else {
            return Ok(false);
        };
        let overflow = self.overflow();
        let old = self.layout.decode(&old_bytes, &overflow)?;
        let new_key = if self.def.primary_key.is_empty() {
            key.clone()
        } else {
            self.primary_key_of_row(&row)?
        };
        if new_key != key {
            self.delete(pk)?;
            if let Err(error) = self.insert(row) {
                self.insert(old)?;
                return Err(error);
            }
            return Ok(true);
        }
        let bytes = self.encode_row(&row, key.len(), &overflow)?;
        // Secondary entries first: a unique conflict must leave the row as it was.
        let changed: Vec<&SecondaryIndex> = self
            .indexes
            .iter()
            .filter(|i| i.def.columns.iter().any(|&c| old[c] != row[c]))
            .collect();
        for (n, index) in changed.iter().enumerate() {
            self.delete_secondary(index, &old, &key)?;
            if let Err(error) = self.insert_secondary(index, &row, &key) {
                self.insert_secondary(index, &old, &key)?;
                for done in &changed[..n] {
                    self.delete_secondary(done, &row, &key)?;
                    self.insert_secondary(done, &old, &key)?;
                }
                self.layout.free_overflow(&bytes, &overflow)?;
                return Err(error);
            }
        }
        // Free the overflow values of the row actually replaced (returned under the
        // leaf latch), not of the copy read above: two updates racing on one row must
        // not free one chain twice.
        match self.clustered.update(&key, &bytes)? {
            Some(replaced) => {
                self.layout.free_overflow(&replaced, &overflow)?;
                self.activity.updated(1);
                Ok(true)
            }
            None => {
                // Deleted meanwhile (same-row writers are not serialised before the
                // lock manager exists): the new row was never stored.
                self.layout.free_overflow(&bytes, &overflow)?;
                Ok(false)
            }
        }
    }

    /// A cursor over rows with primary keys between `lower` and `upper` (values of a
    /// prefix of the primary key columns).
    pub fn scan(
        &self,
        lower: Bound<Vec<Value>>,
        upper: Bound<Vec<Value>>,
        direction: Direction,
    ) -> Result<RowCursor<'_>> {
        self.check_current()?;
        let (lower, upper) = key_bounds(&self.pk_types, lower, upper)?;
        Ok(RowCursor {
            table: self,
            cursor: self.clustered.range(lower, upper, direction),
        })
    }

    /// Creates the entries of a new secondary index from the table's rows: a full
    /// scan, a sort, and a bottom-up build.
    pub(crate) fn build_index(&self, index: &SecondaryIndex) -> Result<u64> {
        let mut entries = crate::sort::KeyArena::default();
        let overflow = self.overflow();
        let range = tarn_btree::LeafRange {
            lower: Bound::Unbounded,
            upper: Bound::Unbounded,
        };
        let mut failure = None;
        self.clustered
            .scan_range(&range, self.scan_config().readahead_pages, |key, bytes| {
                let result = self
                    .layout
                    .decode(bytes, &overflow)
                    .and_then(|row| self.collect_secondary(index, &row, key, &mut entries));
                match result {
                    Ok(()) => Ok(true),
                    Err(e) => {
                        failure = Some(e);
                        Ok(false)
                    }
                }
            })?;
        if let Some(error) = failure {
            return Err(error);
        }
        self.build_secondary(index, entries)
    }

    /// Adds the entry of `row` (clustered key `pk_key`) for `index` to `entries`,
    /// marking its unique prefix when the index is unique and the values hold no NULL.
    fn collect_secondary(
        &self,
        index: &SecondaryIndex,
        row: &[Value],
        pk_key: &[u8],
        entries: &mut crate::sort::KeyArena,
    ) -> Result<()> {
        let (entry, prefix_len, has_null) = self.secondary_key(index, row, pk_key)?;
        let unique_prefix_len = if index.def.unique && !has_null {
            prefix_len
        } else {
            0
        };
        entries.push(&entry, unique_prefix_len)
    }

    /// Sorts the collected entries of `index`, checks uniqueness, and builds its tree
    /// bottom up.
    fn build_secondary(
        &self,
        index: &SecondaryIndex,
        mut entries: crate::sort::KeyArena,
    ) -> Result<u64> {
        entries.sort();
        if index.def.unique
            && let Some(duplicate) = entries.first_duplicate()
        {
            // Name the values as MySQL does, from the row the entry points to (the
            // key holds collation weights, not the values).
            let pk = index.primary_key_of(duplicate)?;
            return Err(match self.get_by_key(pk)? {
                Some(row) => {
                    let values = index.key_values(&row);
                    self.duplicate(&index.def.name, &values)
                }
                None => Error::DuplicateKey {
                    index: format!("{}.{}", self.def.name, index.def.name),
                    key: tarn_btree::display_key(duplicate),
                },
            });
        }
        index.tree.bulk_load(
            entries.iter().map(|k| Ok((k.to_vec(), Vec::new()))),
            self.scan_config().fill_factor_pct,
        )
    }

    /// Loads rows given in primary-key order into this empty table, building every
    /// tree bottom up. Returns the number of rows.
    pub fn bulk_load(&self, rows: impl IntoIterator<Item = Result<Vec<Value>>>) -> Result<u64> {
        self.check_current()?;
        // Overflow values written for rows the clustered load then rejects would be
        // reachable from nowhere: remember them to free them on failure.
        let overflow = RecordingOverflow {
            store: self.overflow(),
            written: parking_lot::Mutex::new(Vec::new()),
        };
        let mut secondaries: Vec<crate::sort::KeyArena> =
            self.indexes.iter().map(|_| Default::default()).collect();
        let mut failure: Option<Error> = None;
        let entries = rows.into_iter().map_while(|row| {
            let result = row.and_then(|row| {
                let row = self.check_row(row)?;
                let key = self.primary_key_of_row(&row)?;
                // Index keys first: once the row is encoded its overflow pages exist.
                for (index, arena) in self.indexes.iter().zip(&mut secondaries) {
                    self.collect_secondary(index, &row, &key, arena)?;
                }
                let bytes = self.encode_row(&row, key.len(), &overflow)?;
                Ok((key, bytes))
            });
            match result {
                Ok(entry) => Some(Ok(entry)),
                Err(e) => {
                    failure = Some(e);
                    None
                }
            }
        });
        let count = match self
            .clustered
            .bulk_load(entries, self.scan_config().fill_factor_pct)
        {
            Ok(count) => count,
            Err(error) => {
                for r in overflow.written.lock().drain(..) {
                    overflow.store.free(&r)?;
                }
                return Err(error);
            }
        };
        // From here on the clustered index holds rows: a failure must empty the table
        // again, or its rows would have no secondary entries (invariant 1).
        let secondary = || -> Result<u64> {
            if let Some(error) = failure {
                return Err(error);
            }
            for (index, arena) in self.indexes.iter().zip(secondaries) {
                self.build_secondary(index, arena)?;
            }
            self.activity.inserted(count);
            Ok(count)
        };
        secondary().inspect_err(|_| {
            if let Err(error) = self.remove_all_entries() {
                tracing::error!(
                    "emptying table '{}' after a failed bulk load: {error}",
                    self.def.name
                );
            }
        })
    }

    /// Deletes every entry of every tree of the table, freeing overflow values (undoes
    /// a bulk load into the empty table that failed part-way).
    fn remove_all_entries(&self) -> Result<()> {
        let overflow = self.overflow();
        let trees = std::iter::once(&self.clustered).chain(self.indexes.iter().map(|i| &i.tree));
        for (n, tree) in trees.enumerate() {
            loop {
                let mut chunk = Vec::new();
                let mut cursor = tree.range(Bound::Unbounded, Bound::Unbounded, Direction::Forward);
                while chunk.len() < 1024 {
                    match cursor.next_entry()? {
                        Some((key, value)) => chunk.push((key.to_vec(), value.to_vec())),
                        None => break,
                    }
                }
                drop(cursor);
                if chunk.is_empty() {
                    break;
                }
                for (key, value) in chunk {
                    tree.delete(&key)?;
                    if n == 0 {
                        self.layout.free_overflow(&value, &overflow)?;
                    }
                }
            }
        }
        Ok(())
    }
}

impl SecondaryIndex {
    fn tree_corrupt(&self, reason: &str) -> Error {
        Error::CorruptData(format!("index '{}': {reason}", self.def.name))
    }

    /// Encoded bounds for values of a prefix of this index's columns.
    pub fn key_bounds(
        &self,
        lower: Bound<Vec<Value>>,
        upper: Bound<Vec<Value>>,
    ) -> Result<(tarn_btree::Bound, tarn_btree::Bound)> {
        let types = &self.key_types[..self.column_count()];
        if !self.def.has_prefix() {
            return key_bounds(types, lower, upper);
        }
        // Entries hold prefixes: a bound cut to them, and taken inclusive, holds every
        // entry whose row may lie within the values' bound (cutting keeps the order,
        // and rows sharing a prefix tie), so the range is a superset that the caller
        // re-checks against the rows.
        let cut = |values: Vec<Value>| -> Vec<Value> {
            values
                .into_iter()
                .enumerate()
                .map(|(part, v)| match self.def.prefix_len(part) {
                    Some(len) => prefix_of(types[part].0, len, &v),
                    None => v,
                })
                .collect()
        };
        let widen = |bound: Bound<Vec<Value>>| match bound {
            Bound::Included(v) | Bound::Excluded(v) => Bound::Included(cut(v)),
            Bound::Unbounded => Bound::Unbounded,
        };
        key_bounds(types, widen(lower), widen(upper))
    }
}

/// The first `len` characters (text types) or bytes (binary types) of a string
/// `value` of type `ty`: what a key prefix part holds. Text counts UTF-8 characters
/// by their lead bytes, so a byte that is not UTF-8 counts as one character. Other
/// values are returned as they are.
pub fn prefix_of(ty: ColumnType, len: u32, value: &Value) -> Value {
    let Value::Bytes(bytes) = value else {
        return value.clone();
    };
    let len = len as usize;
    let end = if ty.is_text() {
        bytes
            .iter()
            .enumerate()
            .filter(|&(_, b)| b & 0xC0 != 0x80)
            .nth(len)
            .map_or(bytes.len(), |(at, _)| at)
    } else {
        bytes.len().min(len)
    };
    Value::Bytes(bytes[..end].to_vec())
}

/// Byte bounds for value bounds on a key prefix. Encoded column values always start
/// with 0x00 or 0x01, so `prefix ++ 0xFF` sorts after every key that extends `prefix`
/// and before every key that does not.
pub(crate) fn key_bounds(
    types: &[(ColumnType, Collation)],
    lower: Bound<Vec<Value>>,
    upper: Bound<Vec<Value>>,
) -> Result<(tarn_btree::Bound, tarn_btree::Bound)> {
    let encode = |values: &[Value]| -> Result<Vec<u8>> {
        let values: Vec<Value> = values.to_vec();
        let mut key = Vec::new();
        encode_key(types, &values, &mut key)?;
        Ok(key)
    };
    let after = |mut key: Vec<u8>| {
        key.push(0xFF);
        key
    };
    let lower = match lower {
        Bound::Unbounded => Bound::Unbounded,
        Bound::Included(v) => Bound::Included(encode(&v)?),
        Bound::Excluded(v) => Bound::Excluded(after(encode(&v)?)),
    };
    let upper = match upper {
        Bound::Unbounded => Bound::Unbounded,
        Bound::Included(v) => Bound::Excluded(after(encode(&v)?)),
        Bound::Excluded(v) => Bound::Excluded(encode(&v)?),
    };
    Ok((lower, upper))
}

/// Rows of a primary-key range, decoded one at a time.
pub struct RowCursor<'t> {
    table: &'t Table,
    cursor: tarn_btree::Cursor<'t>,
}

impl RowCursor<'_> {
    /// The next row. A row with values on overflow pages is read again by its key
    /// under the leaf latch (the cursor's copy was made under a latch since released,
    /// and a concurrent delete may have freed the chain); if it is gone by then, the
    /// cursor moves on as if it had been deleted before the scan reached it.
    pub fn next_row(&mut self) -> Result<Option<Vec<Value>>> {
        let table = self.table;
        while let Some((key, bytes)) = self.cursor.next_entry()? {
            if RowHeader::read(bytes)?.is_delete_marked() {
                continue;
            }
            if !table.layout.view(bytes)?.has_external() {
                return table.layout.decode(bytes, &NO_OVERFLOW).map(Some);
            }
            let key = key.to_vec();
            if let Some(row) = table.get_by_key(&key)? {
                return Ok(Some(row));
            }
        }
        Ok(None)
    }

    pub fn collect_rows(mut self) -> Result<Vec<Vec<Value>>> {
        let mut rows = Vec::new();
        while let Some(row) = self.next_row()? {
            rows.push(row);
        }
        Ok(rows)
    }
}
