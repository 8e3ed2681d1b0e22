//! Copying a table's rows into new files for a rebuild (`Storage::rebuild_table`).
//!
//! The old table's rows come from an ordered parallel scan of its newest versions
//! (delete-marked rows skipped; the caller holds the table's exclusive lock, so the
//! newest versions are the committed ones), each goes through the caller's `map`
//! with its 1-based number in that order (what ALTER TABLE's errors call `at row N`),
//! and the new table is bulk loaded: clustered tree bottom up, secondary indexes from
//! sorted entries. When the new primary key is the old one (ADD or DROP of another
//! column) the rows arrive in key order and nothing is held in memory. When they do
//! not, the first row out of order stops the load (which leaves the new table empty),
//! and a second pass sorts every row by its new key in memory.

use std::cell::Cell;
use std::sync::Arc;

use tarn_common::limits::REBUILD_SORT_ROWS_MAX;
use tarn_common::{Error, Result};
use tarn_row::Value;

use crate::scan::ParallelScan;
use crate::table::Table;

/// Old row in (with its 1-based number in the old table's key order), new row out.
type Map<'m> = &'m mut dyn FnMut(u64, Vec<Value>) -> Result<Vec<Value>>;

/// Loads `map` of every row of `old` into the empty table `new`; returns the rows.
pub(crate) fn copy_rows(old: &Arc<Table>, new: &Table, map: Map<'_>) -> Result<u64> {
    let unsorted = Cell::new(false);
    let streamed = {
        let mut last_key: Option<Vec<u8>> = None;
        let keyed = !new.def().primary_key.is_empty();
        let rows = rows_of(old)?.zip(1..).map(|(row, number)| {
            let row = new.check_row(map(number, row?)?)?;
            if keyed {
                let key = new.primary_key_of_row(&row)?;
                if let Some(last) = &last_key
                    && *last >= key
                {
                    if *last == key {
                        return Err(duplicate_primary(new, &row));
                    }
                    unsorted.set(true);
                    return Err(Error::InvalidDefinition("rows out of key order".into()));
                }
                last_key = Some(key);
            }
            Ok(row)
        });
        new.bulk_load(rows)
    };
    match streamed {
        Err(_) if unsorted.get() => copy_sorted(old, new, map),
        result => result,
    }
}

/// The second pass: every mapped row with its new key, sorted, then loaded.
fn copy_sorted(old: &Arc<Table>, new: &Table, map: Map<'_>) -> Result<u64> {
    let mut keyed = Vec::new();
    for (row, number) in rows_of(old)?.zip(1..) {
        if keyed.len() >= REBUILD_SORT_ROWS_MAX {
            return Err(Error::OutOfResources(format!(
                "rebuilding table '{}' with a new primary key order sorts at most \
                 {REBUILD_SORT_ROWS_MAX} rows in memory",
                old.def().name
            )));
        }
        let row = new.check_row(map(number, row?)?)?;
        let key = new.primary_key_of_row(&row)?;
        keyed.push((key, row));
    }
    keyed.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    if let Some(pair) = keyed.windows(2).find(|w| w[0].0 == w[1].0) {
        return Err(duplicate_primary(new, &pair[1].1));
    }
    new.bulk_load(keyed.into_iter().map(|(_, row)| Ok(row)))
}

/// Every row of `table` (newest versions, not delete-marked) in primary-key order.
fn rows_of(table: &Arc<Table>) -> Result<impl Iterator<Item = Result<Vec<Value>>>> {
    let stream = table.parallel_scan(ParallelScan {
        ordered: true,
        ..ParallelScan::default()
    })?;
    Ok(stream.flat_map(|batch| match batch {
        Ok(batch) => (0..batch.len()).map(|r| Ok(batch.row(r))).collect(),
        Err(error) => vec![Err(error)],
    }))
}

fn duplicate_primary(table: &Table, row: &[Value]) -> Error {
    let pk: Vec<Value> = table
        .def()
        .primary_key
        .iter()
        .map(|&c| row[c].clone())
        .collect();
    table.duplicate("PRIMARY", &pk)
}
