//! DDL: databases, tables and indexes are created and dropped, errors carry MySQL's
//! codes, index builds start from the rows already there (and a failed unique build
//! leaves nothing behind), and everything survives a reopen.

mod common;

use std::collections::BTreeSet;
use std::ops::Bound;
use std::path::Path;

use common::*;
use tarn_btree::Direction;
use tarn_catalog::{IndexDef, Storage, TableDef};
use tarn_common::settings::PrefetchUnit;
use tarn_row::{Collation, Column, ColumnType, Value};

fn def(name: &str) -> TableDef {
    TableDef::new(
        name,
        vec![
            Column::new("id", ColumnType::Int { unsigned: false }, false),
            Column::new("grp", ColumnType::Int { unsigned: false }, true),
            Column::new("name", ColumnType::VarChar { len: 40 }, true)
                .with_collation(Collation::CaseInsensitive),
            Column::new("pad", ColumnType::VarChar { len: 100 }, false),
        ],
        &[0],
    )
}

fn data_files(dir: &Path) -> BTreeSet<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tdf"))
        .collect()
}

fn file_of(id: u32) -> String {
    format!("{id:06}.tdf")
}

fn fill(table: &tarn_catalog::Table, rows: i64) {
    for id in 0..rows {
        table
            .insert(vec![
                int(id),
                if id % 9 == 0 {
                    Value::Null
                } else {
                    int(id % 50)
                },
                text(&format!("Name{}", id % 300)),
                // Unique: zero-padded ids of varying width.
                text(&format!("{id:0>width$}", width = 40 + (id % 50) as usize)),
            ])
            .unwrap();
    }
}

#[test]
fn ddl_errors_carry_mysql_codes() {
    let dir = test_dir();
    let storage = open(dir.path(), 64);
    storage.create_database("db").unwrap();
    assert_eq!(code(storage.create_database("db")), 1007);
    assert_eq!(
        code(storage.create_table("nodb", def("t")).map(|_| ())),
        1049
    );
    assert_eq!(code(storage.table("nodb", "t").map(|_| ())), 1049);
    assert_eq!(code(storage.tables("nodb")), 1049);
    assert_eq!(code(storage.drop_database("nodb")), 1049);
    assert_eq!(code(storage.table("db", "t").map(|_| ())), 1146);
    assert_eq!(code(storage.drop_table("db", "t")), 1146);
    assert_eq!(code(storage.drop_table("nodb", "t")), 1049);
    assert_eq!(
        code(
            storage
                .create_index("db", "t", IndexDef::new("i", &[1], false))
                .map(|_| ())
        ),
        1146
    );
    assert_eq!(code(storage.drop_index("db", "t", "i").map(|_| ())), 1146);
    storage
        .create_table(
            "db",
            def("t").with_index(IndexDef::new("by_grp", &[1], false)),
        )
        .unwrap();
    assert_eq!(code(storage.create_table("db", def("t")).map(|_| ())), 1050);
    // Index names compare case-insensitively; PRIMARY is taken.
    for name in ["by_grp", "BY_GRP", "primary"] {
        assert_eq!(
            code(
                storage
                    .create_index("db", "t", IndexDef::new(name, &[2], false))
                    .map(|_| ())
            ),
            1061,
            "{name}"
        );
    }
    assert_eq!(
        code(storage.drop_index("db", "t", "nope").map(|_| ())),
        1091
    );
    assert_eq!(
        code(storage.drop_index("nodb", "t", "by_grp").map(|_| ())),
        1049
    );
    // Bad definitions.
    assert_eq!(
        code(
            storage
                .create_index("db", "t", IndexDef::new("bad", &[9], false))
                .map(|_| ())
        ),
        1064
    );
    let mut nullable_pk = def("u");
    nullable_pk.primary_key = vec![1];
    assert_eq!(
        code(storage.create_table("db", nullable_pk).map(|_| ())),
        1064
    );
    let table = storage.table("db", "t").unwrap();
    assert_eq!(table.indexes().len(), 1);
    assert_eq!(code(table.index("nope").map(|_| ())), 1091);
    // Nothing above left a file behind.
    let files = data_files(dir.path());
    assert_eq!(files.len(), 2, "{files:?}");
}

#[test]
fn ddl_survives_a_reopen_and_drops_remove_files() {
    let dir = test_dir();
    let (t_file, index_file, gone_file) = {
        let storage = open(dir.path(), 64);
        storage.create_database("db").unwrap();
        storage.create_database("other").unwrap();
        let t = storage.create_table("db", def("t")).unwrap();
        fill(&t, 1500);
        let gone = storage
            .create_table(
                "other",
                def("gone").with_index(IndexDef::new("g", &[2], false)),
            )
            .unwrap();
        fill(&gone, 100);
        let gone_files = [gone.def().file_id, gone.def().indexes[0].file_id];
        // An index built from the rows already there.
        let t = storage
            .create_index("db", "t", IndexDef::new("by_name", &[2, 1], false))
            .unwrap();
        let by_name = index_rows(
            &t,
            "by_name",
            Bound::Included(vec![text("name7")]),
            Bound::Included(vec![text("NAME7")]),
            Direction::Forward,
            PrefetchUnit::Fixed(8),
        )
        .unwrap();
        assert_eq!(by_name.len(), 5);
        // A unique index over duplicate values fails and leaves the table as it was,
        // its file removed.
        let files = data_files(dir.path());
        assert_eq!(
            code(
                storage
                    .create_index("db", "t", IndexDef::new("u_grp", &[1], true))
                    .map(|_| ())
            ),
            1062
        );
        assert_eq!(data_files(dir.path()), files);
        let t = storage.table("db", "t").unwrap();
        assert_eq!(t.indexes().len(), 1);
        assert_eq!(t.indexes()[0].def.name, "by_name");
        // A unique index over unique values succeeds, even after the failure above
        // (which may have taken a file id), and refuses duplicates from then on.
        let t = storage
            .create_index("db", "t", IndexDef::new("u_pad", &[3], true))
            .unwrap();
        assert_eq!(t.indexes().len(), 2);
        let dup = format!("{:0>47}", 7);
        assert_eq!(
            code(t.insert(vec![int(5000), int(1), text("x"), text(&dup)])),
            1062
        );
        t.insert(vec![int(5000), int(1), text("x"), text("new")])
            .unwrap();
        // Drop an index: its file goes.
        let dropped = t.indexes()[0].def.file_id;
        let t = storage.drop_index("db", "t", "BY_NAME").unwrap();
        assert!(!data_files(dir.path()).contains(&file_of(dropped)));
        assert_eq!(t.indexes().len(), 1);
        // Drop a table: its files go.
        for id in gone_files {
            assert!(data_files(dir.path()).contains(&file_of(id)));
        }
        storage.drop_table("other", "gone").unwrap();
        for id in gone_files {
            assert!(!data_files(dir.path()).contains(&file_of(id)));
        }
        assert_eq!(storage.tables("other").unwrap(), Vec::<String>::new());
        (t.def().file_id, t.indexes()[0].def.file_id, gone_files[0])
    };
    let storage = open(dir.path(), 64);
    assert_eq!(storage.databases(), ["db", "other"]);
    assert_eq!(storage.tables("db").unwrap(), ["t"]);
    assert_eq!(code(storage.table("other", "gone").map(|_| ())), 1146);
    let t = storage.table("db", "t").unwrap();
    assert_eq!(t.def().file_id, t_file);
    assert_eq!(t.indexes().len(), 1);
    assert_eq!(t.indexes()[0].def.name, "u_pad");
    assert_eq!(t.indexes()[0].def.file_id, index_file);
    assert!(!data_files(dir.path()).contains(&file_of(gone_file)));
    let rows = pk_scan(&t, Direction::Forward);
    assert_eq!(rows.len(), 1501);
    let via_index = index_rows(
        &t,
        "u_pad",
        Bound::Unbounded,
        Bound::Unbounded,
        Direction::Forward,
        PrefetchUnit::Adaptive,
    )
    .unwrap();
    assert_eq!(via_index.len(), 1501);
    // The unique index still refuses duplicates after the reopen.
    assert_eq!(
        code(t.insert(vec![int(6000), int(1), text("x"), text("new")])),
        1062
    );
    // File ids are not reused: a new table gets a new file, and the name of a dropped
    // table can be used again.
    let again = storage.create_table("other", def("gone")).unwrap();
    assert!(again.def().file_id > index_file);
    assert!(pk_scan(&again, Direction::Forward).is_empty());
    // Dropping a database drops its tables and their files.
    let files: Vec<u32> = [t.def().file_id]
        .into_iter()
        .chain(t.indexes().iter().map(|i| i.def.file_id))
        .collect();
    drop(t);
    storage.drop_database("db").unwrap();
    for id in files {
        assert!(!data_files(dir.path()).contains(&file_of(id)));
    }
    assert_eq!(storage.databases(), ["other"]);
    drop(again);
    drop(storage);
    let storage = open(dir.path(), 64);
    assert_eq!(storage.databases(), ["other"]);
    assert_eq!(storage.tables("other").unwrap(), ["gone"]);
    let _: &Storage = &storage;
}

/// A damaged or hand-edited catalog file is refused at start-up with an error naming
/// the problem, never a panic: bad JSON, a column position out of range, a data file
/// used twice.
#[test]
fn a_damaged_catalog_is_an_error_at_startup() {
    let dir = test_dir();
    {
        let storage = open(dir.path(), 64);
        storage.create_database("db").unwrap();
        storage.create_table("db", def("t")).unwrap();
        storage.create_table("db", def("u")).unwrap();
    }
    let path = dir.path().join("catalog.json");
    let good = std::fs::read_to_string(&path).unwrap();
    let json: serde_json::Value = serde_json::from_str(&good).unwrap();
    let damaged = |edit: &dyn Fn(&mut serde_json::Value)| {
        let mut copy = json.clone();
        edit(&mut copy);
        serde_json::to_string(&copy).unwrap()
    };
    let cases = [
        ("not JSON", "{ this is not json".to_string()),
        (
            "a key column out of range",
            damaged(&|c| c["databases"]["db"]["t"]["primary_key"] = serde_json::json!([99])),
        ),
        (
            "a data file used twice",
            damaged(&|c| {
                let file = c["databases"]["db"]["t"]["file_id"].clone();
                c["databases"]["db"]["u"]["file_id"] = file;
            }),
        ),
        (
            "a data file past the next id",
            damaged(&|c| c["databases"]["db"]["t"]["file_id"] = serde_json::json!(100_000)),
        ),
    ];
    for (what, text) in cases {
        std::fs::write(&path, text).unwrap();
        let error = match Storage::open(&settings(dir.path(), 64)) {
            Ok(_) => panic!("{what}: the damaged catalog was accepted"),
            Err(error) => error,
        };
        assert_eq!(error.mysql_code(), 1004, "{what}: {error}");
        assert!(
            error.to_string().contains("catalog.json"),
            "{what}: {error}"
        );
    }
    // The good catalog opens again.
    std::fs::write(&path, &good).unwrap();
    let storage = open(dir.path(), 64);
    assert_eq!(storage.tables("db").unwrap(), vec!["t", "u"]);
}

/// A table handle kept across DDL on its table fails with 1412 (definition changed)
/// instead of writing rows the new index would miss or re-creating a dropped file;
/// the handle the DDL returns works.
#[test]
fn stale_table_handles_fail_with_definition_changed() {
    let dir = test_dir();
    let storage = open(dir.path(), 64);
    storage.create_database("db").unwrap();
    let first = storage.create_table("db", def("t")).unwrap();
    fill(&first, 50);
    let row = |id: i64| vec![int(id), int(1), text("x"), text(&format!("pad{id}"))];
    let stale = |table: &tarn_catalog::Table| {
        assert_eq!(code(table.insert(row(1000))), 1412);
        assert_eq!(code(table.get(&[int(1)])), 1412);
        assert_eq!(code(table.delete(&[int(1)])), 1412);
        let scan = table.scan(Bound::Unbounded, Bound::Unbounded, Direction::Forward);
        assert_eq!(scan.err().map(|e| e.mysql_code()), Some(1412));
    };
    let second = storage
        .create_index("db", "t", IndexDef::new("by_grp", &[1], false))
        .unwrap();
    stale(&first);
    second.insert(row(1000)).unwrap();
    let rows = second
        .index_scan(
            "by_grp",
            Bound::Included(vec![int(1)]),
            Bound::Included(vec![int(1)]),
            Direction::Forward,
            Some(PrefetchUnit::Fixed(0)),
        )
        .unwrap()
        .collect_rows()
        .unwrap();
    assert!(rows.iter().any(|r| r[0] == int(1000)));
    let third = storage.drop_index("db", "t", "by_grp").unwrap();
    stale(&second);
    assert!(third.get(&[int(1000)]).unwrap().is_some());
    let files_before = data_files(dir.path());
    storage.drop_table("db", "t").unwrap();
    stale(&third);
    // The stale handle re-created no file.
    let files_after = data_files(dir.path());
    assert!(files_after.is_subset(&files_before), "{files_after:?}");
    assert!(!files_after.contains(&file_of(third.def().file_id)));
}
