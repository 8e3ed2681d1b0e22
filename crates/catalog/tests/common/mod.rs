//! Shared set-up for the catalog tests: data directories under `TARN_TEST_DIR`, 4 KiB
//! pages (so trees grow tall with few rows) and small buffer pools, plus helpers that
//! compute expected results from the key encoding.

#![allow(dead_code)]

use std::ops::Bound;
use std::path::Path;
use std::sync::Arc;

use tarn_btree::Direction;
use tarn_catalog::{ParallelScan, ParallelScanStats, Storage, Table};
use tarn_common::settings::{PrefetchUnit, Settings};
use tarn_row::{Collation, ColumnType, Value, encode_key};

pub const PAGE_SIZE: u32 = 4096;

/// A fresh directory under `TARN_TEST_DIR` (or the system temporary directory).
pub fn test_dir() -> tempfile::TempDir {
    let base = std::env::var_os("TARN_TEST_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(std::env::temp_dir);
    std::fs::create_dir_all(&base).expect("test directory root");
    tempfile::tempdir_in(base).expect("temporary directory")
}

/// 4 KiB pages and a pool of `pool_frames` frames in one instance.
pub fn settings(dir: &Path, pool_frames: u64) -> Settings {
    Settings {
        data_dir: dir.to_path_buf(),
        page_size_bytes: PAGE_SIZE,
        buffer_pool_size_bytes: pool_frames * u64::from(PAGE_SIZE),
        buffer_pool_instances: 1,
        ..Settings::default()
    }
}

pub fn open(dir: &Path, pool_frames: u64) -> Storage {
    Storage::open(&settings(dir, pool_frames)).expect("open storage")
}

pub fn int(v: i64) -> Value {
    Value::Int(v)
}

pub fn text(s: &str) -> Value {
    Value::Bytes(s.as_bytes().to_vec())
}

/// The MySQL code of an error result, panicking on success.
#[track_caller]
pub fn code<T: std::fmt::Debug>(result: tarn_common::Result<T>) -> u16 {
    match result {
        Ok(v) => panic!("expected an error, got Ok({v:?})"),
        Err(e) => e.mysql_code(),
    }
}

/// Key types of the columns `columns` of `table`.
pub fn key_types(table: &Table, columns: &[usize]) -> Vec<(ColumnType, Collation)> {
    columns
        .iter()
        .map(|&c| {
            let column = &table.def().columns[c];
            (column.ty, column.collation)
        })
        .collect()
}

pub fn encode(types: &[(ColumnType, Collation)], values: &[Value]) -> Vec<u8> {
    let mut out = Vec::new();
    encode_key(types, values, &mut out).expect("encodable key");
    out
}

/// Whether `key` lies within the bounds, each the encoding of a prefix of key
/// columns: a key extending an included bound's prefix is inside, one extending an
/// excluded bound's prefix outside.
pub fn in_bounds(key: &[u8], lower: &Bound<Vec<u8>>, upper: &Bound<Vec<u8>>) -> bool {
    let above = match lower {
        Bound::Unbounded => true,
        Bound::Included(p) => key >= p.as_slice(),
        Bound::Excluded(p) => key > p.as_slice() && !key.starts_with(p),
    };
    let below = match upper {
        Bound::Unbounded => true,
        Bound::Included(p) => key <= p.as_slice() || key.starts_with(p),
        Bound::Excluded(p) => key < p.as_slice(),
    };
    above && below
}

pub fn encode_bound(
    types: &[(ColumnType, Collation)],
    bound: &Bound<Vec<Value>>,
) -> Bound<Vec<u8>> {
    match bound {
        Bound::Unbounded => Bound::Unbounded,
        Bound::Included(v) => Bound::Included(encode(types, v)),
        Bound::Excluded(v) => Bound::Excluded(encode(types, v)),
    }
}

/// Every row in primary-key order (a serial clustered scan).
pub fn pk_scan(table: &Table, direction: Direction) -> Vec<Vec<Value>> {
    table
        .scan(Bound::Unbounded, Bound::Unbounded, direction)
        .expect("scan")
        .collect_rows()
        .expect("scan rows")
}

pub fn index_rows(
    table: &Table,
    index: &str,
    lower: Bound<Vec<Value>>,
    upper: Bound<Vec<Value>>,
    direction: Direction,
    prefetch: PrefetchUnit,
) -> tarn_common::Result<Vec<Vec<Value>>> {
    table
        .index_scan(index, lower, upper, direction, Some(prefetch))?
        .collect_rows()
}

/// Runs a parallel scan to the end: its rows (projected) and its statistics. The
/// first error ends it.
pub fn parallel_rows(
    table: &Arc<Table>,
    options: ParallelScan,
) -> tarn_common::Result<(Vec<Vec<Value>>, ParallelScanStats)> {
    let mut stream = table.parallel_scan(options)?;
    let mut rows = Vec::new();
    for batch in stream.by_ref() {
        let batch = batch?;
        for r in 0..batch.len() {
            rows.push(batch.row(r));
        }
    }
    Ok((rows, stream.finish()))
}

/// Sorts rows by their first column (an integer), for comparing multisets.
pub fn sort_by_first_int(rows: &mut [Vec<Value>]) {
    rows.sort_by_key(|r| match &r[0] {
        Value::Int(i) => *i,
        other => panic!("first column is not an integer: {other:?}"),
    });
}

/// Pages of `tree`'s file on live overflow chains: every allocated page that is not
/// the meta page, a node, or free (after `check_invariants`, which checks the rest).
pub fn overflow_pages(tree: &tarn_btree::Tree) -> u64 {
    let stats = tree.check_invariants().expect("tree invariants");
    stats.allocated_pages - 1 - stats.leaves - stats.inner_nodes - stats.free_pages
}

/// Overflow pages a value of `len` bytes takes (none if it stays in the row).
pub fn overflow_pages_for(len: usize) -> u64 {
    if len > PAGE_SIZE as usize / 4 {
        len.div_ceil(tarn_btree::overflow_capacity_bytes(PAGE_SIZE as usize)) as u64
    } else {
        0
    }
}
