//! The parallel scan (S1) and the prefetching index scan (S2) as consistent reads:
//! through `parallel_scan_tx` and `index_scan_tx` a transaction sees exactly the rows
//! its snapshot sees (older versions rebuilt from undo, overflow values included),
//! never another transaction's uncommitted changes; READ COMMITTED sees each
//! statement's; SERIALIZABLE locks the table. Without a snapshot both scans read
//! newest versions as before.

mod common;

use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::Arc;

use common::*;
use tarn_btree::Direction;
use tarn_catalog::{IndexDef, ParallelScan, Storage, Table, TableDef, Transaction};
use tarn_common::settings::IsolationLevel::{self, *};
use tarn_common::settings::PrefetchUnit;
use tarn_row::{Column, ColumnType, Value};

const ROWS: i64 = 1200;

type Model = BTreeMap<i64, Vec<Value>>;

fn pad(id: i64, generation: u32) -> Value {
    // Every hundredth row has a value on overflow pages.
    let len = if id % 100 == 0 { 1500 } else { 60 };
    Value::Bytes(format!("{generation}-{id:0>len$}").into_bytes())
}

fn initial_row(id: i64) -> Vec<Value> {
    vec![int(id), int(id * 10), pad(id, 0)]
}

/// A table p(id PK, v, pad) with an index on v, bulk loaded with rows 1..=ROWS.
fn setup() -> (tempfile::TempDir, Arc<Storage>, Arc<Table>, Model) {
    let dir = test_dir();
    let mut settings = settings(dir.path(), 512);
    settings.lock_wait_timeout_s = 1;
    let storage = Storage::open(&settings).unwrap();
    storage.create_database("db").unwrap();
    let table = storage
        .create_table(
            "db",
            TableDef::new(
                "p",
                vec![
                    Column::new("id", ColumnType::BigInt { unsigned: false }, false),
                    Column::new("v", ColumnType::BigInt { unsigned: false }, false),
                    Column::new("pad", ColumnType::VarChar { len: 2000 }, false),
                ],
                &[0],
            )
            .with_index(IndexDef::new("by_v", &[1], false)),
        )
        .unwrap();
    table
        .bulk_load((1..=ROWS).map(|id| Ok(initial_row(id))))
        .unwrap();
    let model = (1..=ROWS).map(|id| (id, initial_row(id))).collect();
    (dir, Arc::new(storage), table, model)
}

fn v_of(row: &[Value]) -> i64 {
    match row[1] {
        Value::Int(v) => v,
        ref other => panic!("{other:?}"),
    }
}

/// Applies `changes` (id → new row, or `None` to delete) in `tx` and to `model`.
fn apply(
    t: &Table,
    tx: &mut Transaction,
    model: &mut Model,
    changes: &[(i64, Option<Vec<Value>>)],
) {
    for (id, change) in changes {
        match (change, model.contains_key(id)) {
            (Some(row), true) => assert!(t.update_tx(tx, &[int(*id)], row.clone()).unwrap()),
            (Some(row), false) => t.insert_tx(tx, row.clone()).unwrap(),
            (None, _) => assert!(t.delete_tx(tx, &[int(*id)]).unwrap()),
        }
        match change {
            Some(row) => model.insert(*id, row.clone()),
            None => model.remove(id),
        };
    }
}

/// The committed changes: values moved (within the order and far away), overflow
/// values replaced, rows deleted, rows inserted.
fn first_changes(model: &Model) -> Vec<(i64, Option<Vec<Value>>)> {
    let mut changes = Vec::new();
    for &id in model.keys() {
        if id % 11 == 0 {
            changes.push((id, None));
        } else if id % 14 == 0 {
            changes.push((id, Some(vec![int(id), int(100_000 + id), pad(id, 1)])));
        } else if id % 7 == 0 || id % 100 == 0 {
            changes.push((id, Some(vec![int(id), int(id * 10 + 5), pad(id, 1)])));
        }
    }
    for id in ROWS + 1..=ROWS + 100 {
        changes.push((id, Some(vec![int(id), int(-id), pad(id, 1)])));
    }
    changes
}

/// The changes left uncommitted while the scans run.
fn second_changes(model: &Model) -> Vec<(i64, Option<Vec<Value>>)> {
    let mut changes = Vec::new();
    for &id in model.keys() {
        if id % 17 == 0 {
            changes.push((id, None));
        } else if id % 13 == 0 {
            changes.push((id, Some(vec![int(id), int(200_000 + id), pad(id, 2)])));
        }
    }
    for id in ROWS + 1000..ROWS + 1050 {
        changes.push((id, Some(vec![int(id), int(id), pad(id, 2)])));
    }
    changes
}

/// Every row through `parallel_scan_tx`, in primary-key order.
fn parallel(t: &Arc<Table>, tx: &mut Transaction, ordered: bool) -> Vec<Vec<Value>> {
    let mut stream = t
        .parallel_scan_tx(
            tx,
            ParallelScan {
                threads: Some(3),
                ordered,
                batch_rows: Some(50),
                ..Default::default()
            },
        )
        .unwrap();
    let mut rows = Vec::new();
    for batch in stream.by_ref() {
        let batch = batch.unwrap();
        rows.extend((0..batch.len()).map(|r| batch.row(r)));
    }
    let stats = stream.finish();
    assert!(
        stats.ranges > 1,
        "the scan runs in several ranges: {stats:?}"
    );
    if !ordered {
        sort_by_first_int(&mut rows);
    }
    rows
}

/// Rows with v in `lower..upper` through `index_scan_tx`, in index order.
fn by_v(
    t: &Table,
    tx: &mut Transaction,
    lower: Bound<i64>,
    upper: Bound<i64>,
    direction: Direction,
    prefetch: PrefetchUnit,
) -> Vec<Vec<Value>> {
    let bound = |b: Bound<i64>| b.map(|v| vec![int(v)]);
    t.index_scan_tx(
        tx,
        "by_v",
        bound(lower),
        bound(upper),
        direction,
        Some(prefetch),
    )
    .unwrap()
    .collect_rows()
    .unwrap()
}

fn expected_by_v(
    model: &Model,
    lower: Bound<i64>,
    upper: Bound<i64>,
    direction: Direction,
) -> Vec<Vec<Value>> {
    let mut rows: Vec<Vec<Value>> = model
        .values()
        .filter(|r| std::ops::RangeBounds::contains(&(lower, upper), &v_of(r)))
        .cloned()
        .collect();
    rows.sort_by_key(|r| {
        (
            v_of(r),
            match r[0] {
                Value::Int(id) => id,
                _ => unreachable!(),
            },
        )
    });
    if direction == Direction::Backward {
        rows.reverse();
    }
    rows
}

/// Both scans, every way, must return exactly `model`.
fn check_scans(t: &Arc<Table>, tx: &mut Transaction, model: &Model, what: &str) {
    let all: Vec<Vec<Value>> = model.values().cloned().collect();
    for ordered in [true, false] {
        assert!(
            parallel(t, tx, ordered) == all,
            "{what}: parallel scan, ordered {ordered}"
        );
    }
    let ranges = [
        (Bound::Unbounded, Bound::Unbounded),
        (Bound::Included(2000), Bound::Excluded(5000)),
        // Where the committed and the uncommitted changes moved rows to.
        (Bound::Included(100_000), Bound::Unbounded),
        (Bound::Unbounded, Bound::Included(0)),
    ];
    for (lower, upper) in ranges {
        for direction in [Direction::Forward, Direction::Backward] {
            for prefetch in [
                PrefetchUnit::Fixed(0),
                PrefetchUnit::Fixed(16),
                PrefetchUnit::Adaptive,
            ] {
                let rows = by_v(t, tx, lower, upper, direction, prefetch);
                let expected = expected_by_v(model, lower, upper, direction);
                assert!(
                    rows == expected,
                    "{what}: index scan {lower:?}..{upper:?} {direction:?} {prefetch:?}: {} rows, \
                     expected {}",
                    rows.len(),
                    expected.len()
                );
            }
        }
    }
}

#[test]
fn scans_read_as_of_the_transaction_snapshot() {
    let (_dir, storage, t, mut model) = setup();
    let before = model.clone();
    let mut old_rr = storage.begin(Some(RepeatableRead), true);
    let mut rc = storage.begin(Some(ReadCommitted), true);
    check_scans(&t, &mut old_rr, &before, "RR before any change");
    check_scans(&t, &mut rc, &before, "RC before any change");
    rc.end_statement();

    let mut first = storage.begin(None, false);
    apply(&t, &mut first, &mut model, &first_changes(&before));
    let committed = model.clone();
    // Uncommitted changes are invisible to all (the RC statement still runs in its
    // own snapshot).
    check_scans(&t, &mut old_rr, &before, "RR, changes uncommitted");
    check_scans(&t, &mut rc, &before, "RC, changes uncommitted");
    rc.end_statement();
    storage.commit(first).unwrap();

    let mut second = storage.begin(None, false);
    apply(&t, &mut second, &mut model, &second_changes(&committed));
    let mut new_rr = storage.begin(Some(RepeatableRead), true);
    let mut ru = storage.begin(Some(ReadUncommitted), true);
    check_scans(&t, &mut old_rr, &before, "RR started before the commit");
    check_scans(&t, &mut rc, &committed, "RC, next statement");
    check_scans(&t, &mut new_rr, &committed, "RR started after the commit");
    check_scans(&t, &mut ru, &model, "RU sees uncommitted changes");
    // The writer sees its own changes.
    check_scans(&t, &mut second, &model, "the writer");
    // Without a snapshot the parallel scan reads newest versions, as before.
    let (mut newest, _) = parallel_rows(&t, ParallelScan::default()).unwrap();
    sort_by_first_int(&mut newest);
    assert!(newest == model.values().cloned().collect::<Vec<_>>());

    storage.rollback(second).unwrap();
    check_scans(&t, &mut rc, &committed, "RC after the rollback");
    check_scans(&t, &mut old_rr, &before, "RR after the rollback");
    for tx in [old_rr, rc, new_rr, ru] {
        storage.commit(tx).unwrap();
    }
    assert!(storage.wait_for_purge(std::time::Duration::from_secs(20)));
    assert_eq!(t.verify_consistency().unwrap(), committed.len() as u64);
    let mut last = storage.begin(Some(RepeatableRead), true);
    check_scans(&t, &mut last, &committed, "after purge");
    storage.commit(last).unwrap();
}

#[test]
fn a_scan_keeps_its_snapshot_after_the_statement_ends() {
    let (_dir, storage, t, model) = setup();
    let mut rc = storage.begin(Some(ReadCommitted), true);
    let mut scan = t
        .index_scan_tx(
            &mut rc,
            "by_v",
            Bound::Unbounded,
            Bound::Unbounded,
            Direction::Forward,
            None,
        )
        .unwrap();
    let first = scan.next_row().unwrap().unwrap();
    // The statement's view closes; the scan keeps its own copy (and purge keeps the
    // versions it needs).
    rc.end_statement();
    let mut writer = storage.begin(None, false);
    let mut changed = model.clone();
    apply(&t, &mut writer, &mut changed, &first_changes(&model));
    storage.commit(writer).unwrap();
    // The scan's view predates the commit: purge must leave its old versions.
    assert!(!storage.wait_for_purge(std::time::Duration::from_millis(200)));
    let mut rows = vec![first];
    while let Some(row) = scan.next_row().unwrap() {
        rows.push(row);
    }
    assert!(
        rows == expected_by_v(
            &model,
            Bound::Unbounded,
            Bound::Unbounded,
            Direction::Forward
        )
    );
    drop(scan);
    check_scans(&t, &mut rc, &changed, "RC, next statement");
    storage.commit(rc).unwrap();
}

#[test]
fn serializable_scans_lock_the_table() {
    let (_dir, storage, t, mut model) = setup();
    let check = |level: IsolationLevel| {
        let mut tx = storage.begin(Some(level), false);
        let rows = parallel(&t, &mut tx, true);
        (rows, tx)
    };
    let mut writer = storage.begin(None, false);
    apply(&t, &mut writer, &mut model, &[(5, None)]);
    let mut reader = storage.begin(Some(Serializable), false);
    let blocked = t.parallel_scan_tx(&mut reader, ParallelScan::default());
    assert_eq!(
        code(blocked.map(drop)),
        1205,
        "waits for the writer's changes"
    );
    let blocked = t.index_scan_tx(
        &mut reader,
        "by_v",
        Bound::Unbounded,
        Bound::Unbounded,
        Direction::Forward,
        None,
    );
    assert_eq!(code(blocked.map(drop)), 1205);
    storage.rollback(reader).unwrap();
    storage.commit(writer).unwrap();
    let (rows, mut reader) = check(Serializable);
    assert!(rows == model.values().cloned().collect::<Vec<_>>());
    // Now writers wait for the reader.
    let mut writer = storage.begin(None, false);
    assert_eq!(code(t.insert_tx(&mut writer, initial_row(ROWS + 1))), 1205);
    assert_eq!(code(t.delete_tx(&mut writer, &[int(1)])), 1205);
    storage.rollback(writer).unwrap();
    check_scans(&t, &mut reader, &model, "SERIALIZABLE");
    storage.commit(reader).unwrap();
}
