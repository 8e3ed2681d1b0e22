//! RENAME, TRUNCATE, the rebuild behind ALTER TABLE's column changes and the
//! in-place ALTER (renames, defaults, indexes): rows, indexes and AUTO_INCREMENT
//! counters afterwards, retired handles, the exclusive table lock they wait for,
//! failures that change nothing, files removed, and everything as it was after a
//! reopen (including files a crash would have left behind); CHECK TABLE.

mod common;

use std::collections::BTreeSet;
use std::ops::Bound;
use std::path::Path;
use std::sync::Arc;

use common::*;
use tarn_btree::Direction;
use tarn_catalog::{CheckOutcome, IndexDef, RowLock, Storage, Table, TableDef, ViewDef};
use tarn_common::settings::{PrefetchUnit, Settings};
use tarn_row::{Column, ColumnType, Value};

const INT: ColumnType = ColumnType::Int { unsigned: false };

/// `id` (AUTO_INCREMENT primary key), `grp`, `name`; an index on `grp`.
fn def(name: &str) -> TableDef {
    TableDef::new(
        name,
        vec![
            Column::new("id", INT, false),
            Column::new("grp", INT, true),
            Column::new("name", ColumnType::VarChar { len: 30 }, true),
        ],
        &[0],
    )
    .with_index(IndexDef::new("by_grp", &[1], false))
    .with_auto_increment(0, 1)
}

fn row(id: i64) -> Vec<Value> {
    vec![int(id), int(id % 7), text(&format!("n{id}"))]
}

fn fill(table: &Table, ids: std::ops::Range<i64>) {
    for id in ids {
        table.insert(row(id)).unwrap();
        table.observe_auto_increment(id as u64);
    }
}

fn data_files(dir: &Path) -> BTreeSet<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tdf"))
        .collect()
}

fn files_of(table: &Table) -> BTreeSet<String> {
    std::iter::once(table.def().file_id)
        .chain(table.def().indexes.iter().map(|i| i.file_id))
        .map(|id| format!("{id:06}.tdf"))
        .collect()
}

fn by_grp(table: &Table, grp: i64) -> Vec<Vec<Value>> {
    index_rows(
        table,
        "by_grp",
        Bound::Included(vec![int(grp)]),
        Bound::Included(vec![int(grp)]),
        Direction::Forward,
        PrefetchUnit::Fixed(4),
    )
    .unwrap()
}

fn short_lock_wait(dir: &Path) -> Settings {
    Settings {
        lock_wait_timeout_s: 1,
        ..settings(dir, 256)
    }
}

#[test]
fn rename_moves_a_table_and_its_counter() {
    let dir = test_dir();
    {
        let storage = open(dir.path(), 256);
        storage.create_database("db").unwrap();
        storage.create_database("db2").unwrap();
        let old = storage.create_table("db", def("t")).unwrap();
        fill(&old, 1..200);
        storage.create_table("db2", def("taken")).unwrap();
        storage
            .create_view("db2", ViewDef::new("view", "SELECT 1", &[]), false)
            .unwrap();
        // An uncommitted change made before the rename is rolled back after it.
        let mut tx = storage.begin(None, false);
        old.insert_tx(&mut tx, row(1000)).unwrap();
        let rename = |to_db, to| storage.rename_table("db", "t", to_db, to).map(|_| ());
        assert_eq!(code(rename("db2", "taken")), 1050);
        assert_eq!(code(rename("db2", "view")), 1050);
        assert_eq!(code(rename("nodb", "x")), 1049);
        assert_eq!(code(rename("db", "t")), 1050);
        assert_eq!(
            code(storage.rename_table("db", "nope", "db", "x").map(|_| ())),
            1146
        );
        let new = storage
            .rename_table("db", "t", "db2", "moved")
            .unwrap()
            .unwrap();
        assert_eq!(code(old.get(&[int(1)])), 1412);
        assert_eq!(code(storage.table("db", "t").map(|_| ())), 1146);
        assert_eq!(new.def().name, "moved");
        assert_eq!(new.table_id(), old.table_id());
        storage.rollback(tx).unwrap();
        assert_eq!(new.get(&[int(1000)]).unwrap(), None);
        assert_eq!(pk_scan(&new, Direction::Forward).len(), 199);
        assert_eq!(by_grp(&new, 3).len(), 29);
        assert_eq!(new.reserve_auto_increment(1).unwrap(), 200);
        // Views rename within their database only.
        assert_eq!(
            code(
                storage
                    .rename_table("db2", "view", "db", "view")
                    .map(|_| ())
            ),
            1450
        );
        assert!(
            storage
                .rename_table("db2", "view", "db2", "v2")
                .unwrap()
                .is_none()
        );
        assert_eq!(storage.views("db2").unwrap(), vec!["v2"]);
    }
    let storage = open(dir.path(), 256);
    assert_eq!(storage.tables("db").unwrap(), Vec::<String>::new());
    assert_eq!(storage.tables("db2").unwrap(), vec!["moved", "taken"]);
    let t = storage.table("db2", "moved").unwrap();
    assert_eq!(pk_scan(&t, Direction::Forward).len(), 199);
    assert_eq!(t.verify_consistency().unwrap(), 199);
}

#[test]
fn truncate_empties_a_table_into_new_files() {
    let dir = test_dir();
    let kept;
    {
        let storage = Storage::open(&short_lock_wait(dir.path())).unwrap();
        storage.create_database("db").unwrap();
        let other = storage.create_table("db", def("other")).unwrap();
        fill(&other, 1..10);
        kept = files_of(&other);
        let old = storage
            .create_table("db", def("t").with_auto_increment(0, 5))
            .unwrap();
        fill(&old, 1..300);
        assert_eq!(old.auto_increment_next(), Some(300));
        // A transaction with an uncommitted change holds the table: truncate waits
        // for it and gives up after lock_wait_timeout.
        let mut tx = storage.begin(None, false);
        old.delete_tx(&mut tx, &[int(1)]).unwrap();
        assert_eq!(code(storage.truncate_table("db", "t").map(|_| ())), 1205);
        storage.commit(tx).unwrap();
        let old_files = files_of(&old);
        let new = storage.truncate_table("db", "t").unwrap();
        assert_eq!(code(old.get(&[int(2)])), 1412);
        assert!(files_of(&new).is_disjoint(&old_files));
        assert_eq!(pk_scan(&new, Direction::Forward), Vec::<Vec<Value>>::new());
        assert_eq!(by_grp(&new, 3), Vec::<Vec<Value>>::new());
        assert_eq!(new.def().indexes.len(), 1);
        // The counter restarts at 1, as MySQL's does: the start 5 is forgotten.
        assert_eq!(new.auto_increment_next(), Some(1));
        assert_eq!(new.def().auto_increment.map(|a| a.start), Some(1));
        let expected: BTreeSet<String> = kept.union(&files_of(&new)).cloned().collect();
        assert_eq!(data_files(dir.path()), expected);
        new.insert(row(1)).unwrap();
        assert_eq!(code(storage.truncate_table("db", "nope").map(|_| ())), 1146);
    }
    let storage = open(dir.path(), 256);
    let t = storage.table("db", "t").unwrap();
    assert_eq!(pk_scan(&t, Direction::Forward), vec![row(1)]);
    assert_eq!(t.auto_increment_next(), Some(2));
    assert_eq!(t.verify_consistency().unwrap(), 1);
    assert_eq!(
        pk_scan(&storage.table("db", "other").unwrap(), Direction::Forward).len(),
        9
    );
}

#[test]
fn a_writer_that_waited_for_a_truncate_does_not_write_to_the_old_files() {
    let dir = test_dir();
    let storage = Arc::new(open(dir.path(), 256));
    storage.create_database("db").unwrap();
    let old = storage.create_table("db", def("t")).unwrap();
    fill(&old, 1..50);
    // A reader holds a shared lock on a row (and so an intention lock on the table).
    let mut reader = storage.begin(None, false);
    old.get_tx(&mut reader, &[int(1)], RowLock::Shared).unwrap();
    let truncate = {
        let storage = storage.clone();
        std::thread::spawn(move || storage.truncate_table("db", "t").map(|_| ()))
    };
    std::thread::sleep(std::time::Duration::from_millis(200));
    // A writer arriving now queues behind the truncate's exclusive lock.
    let writer = {
        let (storage, old) = (storage.clone(), old.clone());
        std::thread::spawn(move || {
            let mut tx = storage.begin(None, false);
            let result = old.insert_tx(&mut tx, row(5000));
            storage.rollback(tx).unwrap();
            result
        })
    };
    std::thread::sleep(std::time::Duration::from_millis(200));
    storage.commit(reader).unwrap();
    truncate.join().unwrap().unwrap();
    assert_eq!(code(writer.join().unwrap()), 1412);
    let new = storage.table("db", "t").unwrap();
    assert_eq!(pk_scan(&new, Direction::Forward), Vec::<Vec<Value>>::new());
}

/// The new definition after ADD COLUMN `note` between `grp` and `name`, with an index
/// on (`name`, `grp`).
fn with_note() -> TableDef {
    TableDef::new(
        "t",
        vec![
            Column::new("id", INT, false),
            Column::new("grp", INT, true),
            Column::new("note", ColumnType::VarChar { len: 10 }, false),
            Column::new("name", ColumnType::VarChar { len: 30 }, true),
        ],
        &[0],
    )
    .with_index(IndexDef::new("by_grp", &[1], false))
    .with_index(IndexDef::new("by_name", &[3, 1], true))
    .with_defaults(vec![None, None, Some("'none'".into()), None])
    .with_auto_increment(0, 1)
}

#[test]
fn rebuild_adds_and_drops_columns() {
    let dir = test_dir();
    let old_files;
    {
        let storage = open(dir.path(), 256);
        storage.create_database("db").unwrap();
        let old = storage.create_table("db", def("t")).unwrap();
        fill(&old, 1..500);
        assert_eq!(old.reserve_auto_increment(10).unwrap(), 500);
        // Committed deletes not yet purged (and an update) are copied as the newest
        // committed versions.
        let mut tx = storage.begin(None, false);
        for id in 1..50 {
            old.delete_tx(&mut tx, &[int(id)]).unwrap();
        }
        old.update_tx(
            &mut tx,
            &[int(60)],
            vec![int(60), int(100), text("changed")],
        )
        .unwrap();
        storage.commit(tx).unwrap();
        old_files = files_of(&old);
        let mut calls = 0;
        let new = storage
            .rebuild_table("db", "t", with_note(), &mut |_, mut row| {
                calls += 1;
                row.insert(2, text("none"));
                Ok(row)
            })
            .unwrap();
        assert_eq!(calls, 450);
        assert_eq!(code(old.get(&[int(100)])), 1412);
        assert!(files_of(&new).is_disjoint(&old_files));
        assert_eq!(new.get(&[int(1)]).unwrap(), None);
        assert_eq!(
            new.get(&[int(60)]).unwrap(),
            Some(vec![int(60), int(100), text("none"), text("changed")])
        );
        assert_eq!(by_grp(&new, 100).len(), 1);
        assert_eq!(new.verify_consistency().unwrap(), 450);
        // The counter keeps its value.
        assert_eq!(new.reserve_auto_increment(1).unwrap(), 510);
        // DROP COLUMN note again, back to the first definition.
        let dropped = storage
            .rebuild_table("db", "t", def("t"), &mut |_, mut row| {
                row.remove(2);
                Ok(row)
            })
            .unwrap();
        assert_eq!(dropped.def().columns.len(), 3);
        assert_eq!(dropped.get(&[int(70)]).unwrap(), Some(row(70)));
    }
    let storage = open(dir.path(), 256);
    let t = storage.table("db", "t").unwrap();
    assert_eq!(t.def(), &{
        let mut d = def("t");
        d.file_id = t.def().file_id;
        d.indexes[0].file_id = t.def().indexes[0].file_id;
        d
    });
    assert_eq!(pk_scan(&t, Direction::Forward).len(), 450);
    assert_eq!(t.verify_consistency().unwrap(), 450);
    // Only the last rebuild's files are left.
    assert_eq!(data_files(dir.path()), files_of(&t));
    assert_eq!(t.auto_increment_next(), Some(500));
}

#[test]
fn rebuild_with_a_new_key_order_sorts_and_failures_change_nothing() {
    let dir = test_dir();
    let storage = open(dir.path(), 256);
    storage.create_database("db").unwrap();
    let old = storage.create_table("db", def("t")).unwrap();
    fill(&old, 1..400);
    let before = data_files(dir.path());
    // The primary key becomes (grp, id): rows no longer come in key order.
    let regrouped = || {
        let mut d = def("t");
        d.primary_key = vec![1, 0];
        d.columns[1].nullable = false;
        // `id` no longer leads a key.
        d.auto_increment = None;
        d
    };
    let mut numbers = Vec::new();
    let new = storage
        .rebuild_table("db", "t", regrouped(), &mut |number, row| {
            numbers.push(number);
            Ok(row)
        })
        .unwrap();
    assert!(numbers.len() > 399, "the rows were read again to be sorted");
    // The second pass numbers the rows from 1 again (errors name `at row N`).
    let second_pass = numbers.split_off(numbers.len() - 399);
    assert_eq!(second_pass, (1..=399).collect::<Vec<u64>>());
    assert_eq!(numbers, (1..=numbers.len() as u64).collect::<Vec<u64>>());
    let rows = pk_scan(&new, Direction::Forward);
    assert_eq!(rows.len(), 399);
    let keys: Vec<(i64, i64)> = rows
        .iter()
        .map(|r| match (&r[1], &r[0]) {
            (Value::Int(grp), Value::Int(id)) => (*grp, *id),
            other => panic!("{other:?}"),
        })
        .collect();
    assert!(keys.windows(2).all(|w| w[0] < w[1]));
    assert_eq!(new.verify_consistency().unwrap(), 399);
    let files = data_files(dir.path());
    assert!(files_of(&new).is_disjoint(&before));
    assert_eq!(files, files_of(&new));
    // A primary key on grp alone has duplicates: 1062, and nothing changes.
    let mut by_group = def("t");
    by_group.primary_key = vec![1];
    by_group.columns[1].nullable = false;
    by_group.auto_increment = None;
    let result = storage.rebuild_table("db", "t", by_group, &mut |_, row| Ok(row));
    assert_eq!(code(result.map(|_| ())), 1062);
    // A failing map: its error, and nothing changes.
    let mut seen = 0;
    let result = storage.rebuild_table("db", "t", def("t"), &mut |_, row| {
        seen += 1;
        if seen == 100 {
            Err(tarn_common::Error::sql(1265, "01000", "Data truncated"))
        } else {
            Ok(row)
        }
    });
    assert_eq!(code(result.map(|_| ())), 1265);
    // A bad definition.
    let mut bad = def("t");
    bad.primary_key = vec![9];
    assert_eq!(
        code(
            storage
                .rebuild_table("db", "t", bad, &mut |_, row| Ok(row))
                .map(|_| ())
        ),
        1064
    );
    let current = storage.table("db", "t").unwrap();
    assert!(Arc::ptr_eq(&current, &new));
    assert_eq!(data_files(dir.path()), files);
    assert_eq!(pk_scan(&current, Direction::Forward).len(), 399);
}

#[test]
fn files_a_crash_left_behind_are_removed_on_open() {
    let dir = test_dir();
    let stray;
    {
        let storage = open(dir.path(), 256);
        storage.create_database("db").unwrap();
        let t = storage.create_table("db", def("t")).unwrap();
        fill(&t, 1..100);
        let gone = storage.create_table("db", def("gone")).unwrap();
        stray = files_of(&gone);
        storage.drop_table("db", "gone").unwrap();
    }
    // As if a crash had struck between the catalog write and the file removal.
    let source = dir
        .path()
        .join(files_of(&open_table(dir.path())).first().unwrap());
    for name in &stray {
        std::fs::copy(&source, dir.path().join(name)).unwrap();
    }
    // A file with an id the catalog never handed out is not Tarn's to remove.
    std::fs::write(dir.path().join("999999.tdf"), b"not ours").unwrap();
    let storage = open(dir.path(), 256);
    let files = data_files(dir.path());
    assert!(files.is_disjoint(&stray), "{files:?}");
    assert!(files.contains("999999.tdf"));
    let t = storage.table("db", "t").unwrap();
    assert_eq!(t.verify_consistency().unwrap(), 99);
}

#[test]
fn alter_in_place_renames_and_reindexes_in_one_change() {
    let dir = test_dir();
    let before;
    let kept_file;
    {
        let storage = open(dir.path(), 256);
        storage.create_database("db").unwrap();
        let old = storage.create_table("db", def("t")).unwrap();
        fill(&old, 1..300);
        kept_file = old.def().indexes[0].file_id;
        before = data_files(dir.path());
        // Rows change: refused (the caller rebuilds).
        let mut retyped = old.def().clone();
        retyped.columns[1].ty = ColumnType::BigInt { unsigned: false };
        assert_eq!(
            code(storage.alter_in_place("db", "t", retyped).map(|_| ())),
            1064
        );
        // A new unique index over duplicates: 1062, and nothing changes.
        let mut duplicates = old.def().clone();
        duplicates.indexes.push(IndexDef::new("uk_grp", &[1], true));
        assert_eq!(
            code(storage.alter_in_place("db", "t", duplicates).map(|_| ())),
            1062
        );
        assert!(Arc::ptr_eq(&storage.table("db", "t").unwrap(), &old));
        assert_eq!(data_files(dir.path()), before);
        // A column and the kept index renamed, a DEFAULT, two indexes added.
        let mut new_def = old.def().clone();
        new_def.columns[2].name = "label".into();
        new_def.indexes[0].name = "grp_ix".into();
        new_def.column_defaults = vec![None, Some("7".into()), None];
        new_def.indexes.push(IndexDef::new("by_label", &[2], false));
        new_def.indexes.push(IndexDef::new("uk_label", &[2], true));
        let new = storage.alter_in_place("db", "t", new_def).unwrap();
        assert_eq!(code(old.get(&[int(1)])), 1412);
        assert_eq!(new.def().indexes[0].file_id, kept_file);
        assert_eq!(new.verify_consistency().unwrap(), 299);
        assert_eq!(new.reserve_auto_increment(1).unwrap(), 300);
        // The kept index dropped, one of the new ones renamed.
        let mut fewer = new.def().clone();
        fewer.indexes.remove(0);
        fewer.indexes[0].name = "label_ix".into();
        let fewer = storage.alter_in_place("db", "t", fewer).unwrap();
        assert_eq!(fewer.verify_consistency().unwrap(), 299);
        assert_eq!(
            storage
                .check_table("db", "t", true, std::time::Duration::from_secs(10))
                .unwrap(),
            CheckOutcome::Checked { rows: Some(299) }
        );
    }
    let storage = open(dir.path(), 256);
    let t = storage.table("db", "t").unwrap();
    let names: Vec<&str> = t.def().indexes.iter().map(|i| i.name.as_str()).collect();
    assert_eq!(names, ["label_ix", "uk_label"]);
    assert_eq!(t.def().columns[2].name, "label");
    assert_eq!(t.def().column_default(1), Some("7"));
    assert_eq!(t.verify_consistency().unwrap(), 299);
    // The dropped index's file is gone; the table's own is the one it always had.
    assert_eq!(data_files(dir.path()), files_of(&t));
    assert!(!files_of(&t).contains(&format!("{kept_file:06}.tdf")));
    assert_eq!(
        storage
            .check_table("db", "t", false, std::time::Duration::from_secs(10))
            .unwrap(),
        CheckOutcome::Checked { rows: None }
    );
}

fn open_table(dir: &Path) -> Arc<Table> {
    let storage = open(dir, 256);
    storage.table("db", "t").unwrap()
}
