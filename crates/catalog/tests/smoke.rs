//! A first end-to-end check: a table with a secondary index, rows in and out.

use std::ops::Bound;
use std::sync::Arc;

use tarn_btree::Direction;
use tarn_catalog::{IndexDef, ParallelScan, Storage, TableDef};
use tarn_common::settings::{PrefetchUnit, Settings};
use tarn_row::{Collation, Column, ColumnType, Value};

fn settings(dir: &std::path::Path) -> Settings {
    Settings {
        data_dir: dir.to_path_buf(),
        page_size_bytes: 4096,
        buffer_pool_size_bytes: 8 << 20,
        ..Settings::default()
    }
}

#[test]
fn rows_survive_a_reopen_and_every_access_path_agrees() {
    let base = std::env::var_os("TARN_TEST_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(std::env::temp_dir);
    std::fs::create_dir_all(&base).unwrap();
    let dir = tempfile::tempdir_in(base).unwrap();
    let def = TableDef::new(
        "t",
        vec![
            Column::new("id", ColumnType::Int { unsigned: false }, false),
            Column::new("name", ColumnType::VarChar { len: 40 }, true)
                .with_collation(Collation::CaseInsensitive),
            Column::new("score", ColumnType::BigInt { unsigned: false }, false),
        ],
        &[0],
    )
    .with_index(IndexDef::new("by_name", &[1], false));
    {
        let storage = Storage::open(&settings(dir.path())).unwrap();
        storage.create_database("db").unwrap();
        let table = storage.create_table("db", def).unwrap();
        for i in 0..3000i64 {
            table
                .insert(vec![
                    Value::Int(i),
                    Value::Bytes(format!("Name{}", i % 100).into_bytes()),
                    Value::Int(i * 7),
                ])
                .unwrap();
        }
        let dup = table
            .insert(vec![Value::Int(5), Value::Null, Value::Int(0)])
            .unwrap_err();
        assert_eq!(dup.mysql_code(), 1062);
        assert!(table.delete(&[Value::Int(10)]).unwrap().is_some());
        assert!(
            table
                .update(
                    &[Value::Int(11)],
                    vec![Value::Int(11), Value::Bytes(b"zz".to_vec()), Value::Int(-1)]
                )
                .unwrap()
        );
        let index = storage
            .create_index("db", "t", IndexDef::new("by_score", &[2], true))
            .unwrap();
        assert_eq!(index.indexes().len(), 2);
    }
    let storage = Storage::open(&settings(dir.path())).unwrap();
    let table = storage.table("db", "t").unwrap();
    assert_eq!(
        table.get(&[Value::Int(11)]).unwrap().unwrap()[1],
        Value::Bytes(b"zz".to_vec())
    );
    assert!(table.get(&[Value::Int(10)]).unwrap().is_none());
    let rows = table
        .scan(Bound::Unbounded, Bound::Unbounded, Direction::Forward)
        .unwrap()
        .collect_rows()
        .unwrap();
    assert_eq!(rows.len(), 2999);
    // Case-insensitive index: 'name7' finds the 'Name7' rows.
    for prefetch in [
        PrefetchUnit::Fixed(0),
        PrefetchUnit::Fixed(8),
        PrefetchUnit::Adaptive,
    ] {
        let found = table
            .index_scan(
                "by_name",
                Bound::Included(vec![Value::Bytes(b"name7".to_vec())]),
                Bound::Included(vec![Value::Bytes(b"NAME7".to_vec())]),
                Direction::Forward,
                Some(prefetch),
            )
            .unwrap()
            .collect_rows()
            .unwrap();
        assert_eq!(found.len(), 30, "{prefetch:?}");
    }
    for ordered in [false, true] {
        let stream = table
            .parallel_scan(ParallelScan {
                threads: Some(3),
                projection: Some(vec![0]),
                ordered,
                ..Default::default()
            })
            .unwrap();
        let mut ids = Vec::new();
        for batch in stream {
            let batch = batch.unwrap();
            for r in 0..batch.len() {
                ids.push(batch.value(0, r));
            }
        }
        if !ordered {
            ids.sort_by_key(|v| match v {
                Value::Int(i) => *i,
                _ => unreachable!(),
            });
        }
        let expected: Vec<Value> = rows.iter().map(|r| r[0].clone()).collect();
        assert_eq!(ids, expected, "ordered {ordered}");
    }
    let _ = Arc::clone(&table);
}
