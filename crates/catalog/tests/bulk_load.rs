//! `Table::bulk_load`: a load builds the same table as inserts would, and a load that
//! fails part-way (a bad value, a duplicate in a unique index, a duplicate primary
//! key) leaves the table empty and consistent, ready for another load.

mod common;

use std::ops::Bound;

use common::*;
use tarn_btree::Direction;
use tarn_catalog::{IndexDef, Table, TableDef};
use tarn_common::settings::PrefetchUnit;
use tarn_row::{Collation, Column, ColumnType, Value};

const ROWS: i64 = 1200;

/// Makes the row with an id (some of them bad).
type RowMaker = Box<dyn Fn(i64) -> Vec<Value>>;

fn definition(name: &str) -> TableDef {
    TableDef::new(
        name,
        vec![
            Column::new("id", ColumnType::Int { unsigned: false }, false),
            Column::new("u", ColumnType::VarChar { len: 20 }, false)
                .with_collation(Collation::CaseInsensitive),
            Column::new("g", ColumnType::Int { unsigned: false }, true),
            Column::new("b", ColumnType::Blob, true),
        ],
        &[0],
    )
    .with_index(IndexDef::new("u_u", &[1], true))
    .with_index(IndexDef::new("by_g", &[2], false))
}

fn row(id: i64) -> Vec<Value> {
    vec![
        int(id),
        text(&format!("u{id}")),
        if id % 4 == 0 {
            Value::Null
        } else {
            int(id % 13)
        },
        if id % 100 == 0 {
            Value::Bytes(vec![id as u8; 6000]) // on overflow pages
        } else {
            Value::Bytes(vec![id as u8; (id % 30) as usize])
        },
    ]
}

/// The table holds exactly `rows` (in primary-key order) in every index.
fn check(table: &Table, rows: &[Vec<Value>]) {
    assert_eq!(pk_scan(table, Direction::Forward), rows);
    for index in table.indexes() {
        let stats = index.tree.check_invariants().unwrap();
        assert_eq!(stats.entries, rows.len() as u64, "{}", index.def.name);
        let found = index_rows(
            table,
            &index.def.name,
            Bound::Unbounded,
            Bound::Unbounded,
            Direction::Forward,
            PrefetchUnit::Fixed(8),
        )
        .unwrap();
        assert_eq!(found.len(), rows.len(), "{}", index.def.name);
    }
    let stats = table.clustered().check_invariants().unwrap();
    assert_eq!(stats.entries, rows.len() as u64);
}

#[test]
fn a_bulk_load_equals_inserting_the_rows() {
    let dir = test_dir();
    let storage = open(dir.path(), 64);
    storage.create_database("db").unwrap();
    let loaded = storage.create_table("db", definition("loaded")).unwrap();
    let inserted = storage.create_table("db", definition("inserted")).unwrap();
    let rows: Vec<Vec<Value>> = (0..ROWS).map(row).collect();
    assert_eq!(
        loaded.bulk_load(rows.iter().cloned().map(Ok)).unwrap(),
        ROWS as u64
    );
    for r in &rows {
        inserted.insert(r.clone()).unwrap();
    }
    check(&loaded, &rows);
    for (a, b) in [("u_u", "u_u"), ("by_g", "by_g")] {
        let scan = |t: &Table, name: &str| {
            index_rows(
                t,
                name,
                Bound::Unbounded,
                Bound::Unbounded,
                Direction::Backward,
                PrefetchUnit::Adaptive,
            )
            .unwrap()
        };
        assert_eq!(scan(&loaded, a), scan(&inserted, b), "{a}");
    }
    // The loaded table takes writes like any other.
    assert_eq!(code(loaded.insert(row(5))), 1062);
    assert_eq!(
        code(loaded.insert({
            let mut r = row(ROWS);
            r[1] = text("U7");
            r
        })),
        1062
    );
    loaded.insert(row(ROWS)).unwrap();
    loaded.delete(&[int(100)]).unwrap().unwrap();
    // A second load into a table that is not empty is refused and changes nothing.
    assert!(loaded.bulk_load([Ok(row(ROWS + 1))]).is_err());
    let mut want = rows.clone();
    want.remove(100);
    want.push(row(ROWS));
    check(&loaded, &want);
}

#[test]
fn a_failed_bulk_load_leaves_the_table_empty() {
    let dir = test_dir();
    let storage = open(dir.path(), 64);
    storage.create_database("db").unwrap();
    let table = storage.create_table("db", definition("t")).unwrap();
    let rows: Vec<Vec<Value>> = (0..ROWS).map(row).collect();
    let failures: Vec<(u16, RowMaker)> = vec![
        // A NULL in a NOT NULL column half-way.
        (
            1048,
            Box::new(|id| {
                let mut r = row(id);
                if id == ROWS / 2 {
                    r[1] = Value::Null;
                }
                r
            }),
        ),
        // A duplicate in the unique case-insensitive index ('U7' = 'u7').
        (
            1062,
            Box::new(|id| {
                let mut r = row(id);
                if id == ROWS - 3 {
                    r[1] = text("U7 ");
                }
                r
            }),
        ),
        // A value too long for its column near the end.
        (
            1406,
            Box::new(|id| {
                let mut r = row(id);
                if id == ROWS - 1 {
                    r[1] = text(&"x".repeat(21));
                }
                r
            }),
        ),
        // A duplicate primary key.
        (1062, Box::new(|id| row(if id == 700 { 699 } else { id }))),
    ];
    for (n, (want, make)) in failures.iter().enumerate() {
        let result = table.bulk_load((0..ROWS).map(|id| Ok(make(id))));
        assert_eq!(code(result), *want, "failure {n}");
        check(&table, &[]);
        // Every overflow page written for the load was freed again, including for
        // rows the clustered index itself rejected (the duplicate primary key).
        assert_eq!(overflow_pages(table.clustered()), 0, "failure {n}");
    }
    // The table is still usable: the next load succeeds.
    assert_eq!(
        table.bulk_load(rows.iter().cloned().map(Ok)).unwrap(),
        ROWS as u64
    );
    check(&table, &rows);
    drop(table);
    drop(storage);
    let storage = open(dir.path(), 64);
    check(&storage.table("db", "t").unwrap(), &rows);
}
