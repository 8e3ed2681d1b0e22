//! Column defaults and AUTO_INCREMENT: MySQL's definition rules and codes, the
//! counter (fresh values under concurrency, explicit values, no wrap-around), where it
//! starts after a reopen, ALTER TABLE ... AUTO_INCREMENT, and catalogs written before
//! these fields existed.

mod common;

use std::collections::HashSet;
use std::sync::Arc;

use common::*;
use tarn_catalog::{IndexDef, Storage, TableDef};
use tarn_row::{Column, ColumnType, Value};

const INT: ColumnType = ColumnType::Int { unsigned: false };

fn def(name: &str) -> TableDef {
    TableDef::new(
        name,
        vec![
            Column::new("id", INT, false),
            Column::new("seq", ColumnType::BigInt { unsigned: true }, false),
            Column::new("name", ColumnType::VarChar { len: 20 }, true),
        ],
        &[0],
    )
}

fn row(id: i64, seq: u64) -> Vec<Value> {
    vec![int(id), Value::UInt(seq), text("x")]
}

#[test]
fn definitions_follow_mysql_rules() {
    let dir = test_dir();
    let storage = open(dir.path(), 64);
    storage.create_database("db").unwrap();
    let create = |def: TableDef| storage.create_table("db", def).map(|_| ());
    // A string column cannot be AUTO_INCREMENT.
    assert_eq!(code(create(def("a").with_auto_increment(2, 1))), 1063);
    // Not the first column of any key.
    assert_eq!(code(create(def("b").with_auto_increment(1, 1))), 1075);
    assert_eq!(
        code(create(
            def("c")
                .with_index(IndexDef::new("i", &[2, 1], false))
                .with_auto_increment(1, 1)
        )),
        1075
    );
    // No such column.
    assert_eq!(code(create(def("d").with_auto_increment(7, 1))), 1075);
    // A DEFAULT on the AUTO_INCREMENT column.
    assert_eq!(
        code(create(
            def("e")
                .with_defaults(vec![Some("1".into()), None, None])
                .with_auto_increment(0, 1)
        )),
        1067
    );
    // Defaults must cover every column.
    assert_eq!(code(create(def("f").with_defaults(vec![None, None]))), 1064);
    // Allowed: leading the primary key, or leading a secondary index.
    create(def("ok1").with_auto_increment(0, 1)).unwrap();
    create(
        def("ok2")
            .with_index(IndexDef::new("by_seq", &[1, 2], false))
            .with_auto_increment(1, 5),
    )
    .unwrap();
    // Dropping the index the column leads would leave it unkeyed.
    assert_eq!(
        code(storage.drop_index("db", "ok2", "by_seq").map(|_| ())),
        1075
    );
    assert_eq!(storage.tables("db").unwrap(), vec!["ok1", "ok2"]);
}

#[test]
fn defaults_and_counters_survive_reopen() {
    let dir = test_dir();
    {
        let storage = open(dir.path(), 64);
        storage.create_database("db").unwrap();
        let t = storage
            .create_table(
                "db",
                def("t")
                    .with_defaults(vec![None, Some("0".into()), Some("'it''s'".into())])
                    .with_auto_increment(0, 100),
            )
            .unwrap();
        assert_eq!(t.def().column_default(2), Some("'it''s'"));
        assert_eq!(t.def().column_default(0), None);
        assert_eq!(t.auto_increment_column(), Some(0));
        assert_eq!(t.reserve_auto_increment(1).unwrap(), 100);
        assert_eq!(t.reserve_auto_increment(3).unwrap(), 101);
        assert_eq!(t.reserve_auto_increment(0).unwrap(), 104, "0 is taken as 1");
        assert_eq!(t.auto_increment_next(), Some(105));
        // Nothing was inserted: after a restart the counter starts at `start` again.
        let plain = storage.create_table("db", def("plain")).unwrap();
        assert_eq!(plain.auto_increment_next(), None);
        assert_eq!(code(plain.reserve_auto_increment(1)), 1064);
        plain.observe_auto_increment(9); // no AUTO_INCREMENT column: nothing happens
    }
    let storage = open(dir.path(), 64);
    let t = storage.table("db", "t").unwrap();
    assert_eq!(
        t.def().column_defaults,
        vec![None, Some("0".to_string()), Some("'it''s'".to_string())]
    );
    assert_eq!(t.auto_increment_next(), Some(100));
    // Explicit values move the counter; the largest row decides after a reopen.
    t.insert(row(500, 1)).unwrap();
    t.observe_auto_increment(500);
    t.insert(row(-7, 2)).unwrap();
    assert_eq!(t.reserve_auto_increment(1).unwrap(), 501);
    t.insert(row(1000, 3)).unwrap();
    drop(t);
    drop(storage);
    let storage = open(dir.path(), 64);
    let t = storage.table("db", "t").unwrap();
    assert_eq!(t.auto_increment_next(), Some(1001));
    // A catalog without the new fields (as older builds wrote it) still loads.
    let json = std::fs::read_to_string(dir.path().join("catalog.json")).unwrap();
    let plain_json: serde_json::Value = serde_json::from_str(&json).unwrap();
    let plain = &plain_json["databases"]["db"]["plain"];
    assert!(plain.get("column_defaults").is_none());
    assert!(plain.get("auto_increment").is_none());
    let old: TableDef = serde_json::from_value(plain.clone()).unwrap();
    assert!(old.column_defaults.is_empty() && old.auto_increment.is_none());
}

#[test]
fn the_counter_follows_a_leading_secondary_column() {
    let dir = test_dir();
    {
        let storage = open(dir.path(), 64);
        storage.create_database("db").unwrap();
        let t = storage
            .create_table(
                "db",
                def("t")
                    .with_index(IndexDef::new("by_seq", &[1], true))
                    .with_auto_increment(1, 1),
            )
            .unwrap();
        for (id, seq) in [(1, 40), (2, 7), (3, 12)] {
            t.insert(row(id, seq)).unwrap();
        }
        // A deleted row's value counts until purge removes its entry; here the row is
        // gone at once (a plain delete), so 40 no longer counts after a reopen.
        t.delete(&[int(1)]).unwrap();
    }
    let storage = open(dir.path(), 64);
    let t = storage.table("db", "t").unwrap();
    assert_eq!(t.auto_increment_next(), Some(13));
}

#[test]
fn concurrent_reservations_never_share_a_value() {
    let dir = test_dir();
    let storage = open(dir.path(), 64);
    storage.create_database("db").unwrap();
    let t = storage
        .create_table("db", def("t").with_auto_increment(0, 1))
        .unwrap();
    let threads: Vec<_> = (0..8u64)
        .map(|n| {
            let t = t.clone();
            std::thread::spawn(move || {
                let mut mine = Vec::new();
                for i in 0..2000u64 {
                    let count = 1 + (i + n) % 3;
                    let first = t.reserve_auto_increment(count).unwrap();
                    mine.extend(first..first + count);
                    if i % 100 == 0 {
                        // An explicit insert of a value just handed out moves nothing.
                        t.observe_auto_increment(first);
                    }
                }
                mine
            })
        })
        .collect();
    let mut all = HashSet::new();
    let mut total = 0u64;
    for thread in threads {
        for v in thread.join().unwrap() {
            assert!(all.insert(v), "value {v} handed out twice");
            total += 1;
        }
    }
    // Consecutive from 1: nothing skipped either.
    assert_eq!(all.len() as u64, total);
    assert_eq!(*all.iter().max().unwrap(), total);
    assert_eq!(t.auto_increment_next(), Some(total + 1));
}

#[test]
fn the_counter_never_wraps() {
    let dir = test_dir();
    let storage = open(dir.path(), 64);
    storage.create_database("db").unwrap();
    let t = storage
        .create_table(
            "db",
            TableDef::new(
                "t",
                vec![Column::new(
                    "id",
                    ColumnType::BigInt { unsigned: true },
                    false,
                )],
                &[0],
            )
            .with_auto_increment(0, u64::MAX - 2),
        )
        .unwrap();
    assert_eq!(t.reserve_auto_increment(1).unwrap(), u64::MAX - 2);
    assert_eq!(code(t.reserve_auto_increment(2)), 1467);
    assert_eq!(t.reserve_auto_increment(1).unwrap(), u64::MAX - 1);
    assert_eq!(code(t.reserve_auto_increment(1)), 1467);
    t.insert(vec![Value::UInt(u64::MAX)]).unwrap();
    drop(t);
    drop(storage);
    // The largest value in use is u64::MAX: nothing is left to hand out.
    let storage = open(dir.path(), 64);
    let t = storage.table("db", "t").unwrap();
    assert_eq!(code(t.reserve_auto_increment(1)), 1467);
}

#[test]
fn alter_auto_increment_and_index_changes_keep_the_counter() {
    let dir = test_dir();
    {
        let storage = open(dir.path(), 64);
        storage.create_database("db").unwrap();
        let t = storage
            .create_table("db", def("t").with_auto_increment(0, 1))
            .unwrap();
        for id in 1..=10 {
            t.insert(row(id, id as u64)).unwrap();
        }
        t.observe_auto_increment(10);
        assert_eq!(t.reserve_auto_increment(5).unwrap(), 11);
        // Index changes share the counter with the handle they replace.
        let t2 = storage
            .create_index("db", "t", IndexDef::new("by_seq", &[1], false))
            .unwrap();
        assert_eq!(t2.reserve_auto_increment(1).unwrap(), 16);
        assert_eq!(code(t.reserve_auto_increment(1)), 1412);
        let t3 = storage.drop_index("db", "t", "by_seq").unwrap();
        assert_eq!(t3.reserve_auto_increment(1).unwrap(), 17);
        // Lower than a value in use: 1 + the largest.
        let t4 = storage.set_auto_increment("db", "t", 3).unwrap();
        assert_eq!(code(t3.reserve_auto_increment(1)), 1412);
        assert_eq!(t4.auto_increment_next(), Some(11));
        assert_eq!(t4.def().auto_increment.unwrap().start, 3);
        // Higher: taken as is (and persisted as the start).
        let t5 = storage.set_auto_increment("db", "t", 50).unwrap();
        assert_eq!(t5.reserve_auto_increment(1).unwrap(), 50);
        // A table without such a column ignores it.
        let plain = storage.create_table("db", def("plain")).unwrap();
        let same = storage.set_auto_increment("db", "plain", 9).unwrap();
        assert!(Arc::ptr_eq(&plain, &same));
        assert_eq!(
            code(storage.set_auto_increment("db", "nope", 1).map(|_| ())),
            1146
        );
    }
    let storage: Storage = open(dir.path(), 64);
    let t = storage.table("db", "t").unwrap();
    assert_eq!(t.def().auto_increment.unwrap().start, 50);
    assert_eq!(t.auto_increment_next(), Some(50));
}
