//! Views in the catalog: created, replaced, dropped, listed, persisted, sharing the
//! table namespace with MySQL's error codes, and dropped with their database.

mod common;

use common::*;
use tarn_catalog::{TableDef, ViewDef};
use tarn_row::{Column, ColumnType};

fn table(name: &str) -> TableDef {
    TableDef::new(
        name,
        vec![Column::new(
            "id",
            ColumnType::Int { unsigned: false },
            false,
        )],
        &[0],
    )
}

#[test]
fn views_share_the_table_namespace() {
    let dir = test_dir();
    let storage = open(dir.path(), 64);
    storage.create_database("db").unwrap();
    storage.create_table("db", table("t")).unwrap();
    let v = ViewDef::new("v", "SELECT id FROM t", &[]);
    assert_eq!(code(storage.create_view("nodb", v.clone(), false)), 1049);
    storage.create_view("db", v.clone(), false).unwrap();
    // Names taken by a view or a table.
    assert_eq!(code(storage.create_view("db", v.clone(), false)), 1050);
    assert_eq!(
        code(storage.create_view("db", ViewDef::new("t", "SELECT 1", &[]), false)),
        1050
    );
    assert_eq!(
        code(storage.create_view("db", ViewDef::new("t", "SELECT 1", &[]), true)),
        1347
    );
    assert_eq!(
        code(storage.create_table("db", table("v")).map(|_| ())),
        1050
    );
    // OR REPLACE replaces.
    let v2 = ViewDef::new("v", "SELECT id + 1 FROM t", &["next_id"]);
    storage.create_view("db", v2.clone(), true).unwrap();
    assert_eq!(storage.view("db", "v").unwrap(), Some(v2));
    assert_eq!(storage.view("db", "t").unwrap(), None);
    assert_eq!(code(storage.view("nodb", "v")), 1049);
    // Bad definitions.
    assert_eq!(
        code(storage.create_view("db", ViewDef::new("w", "SELECT 1, 2", &["a", "A"]), false)),
        1060
    );
    assert_eq!(
        code(storage.create_view("db", ViewDef::new("w", " ", &[]), false)),
        1064
    );
    // Dropping.
    assert_eq!(code(storage.drop_view("db", "t", false)), 1347);
    assert_eq!(code(storage.drop_view("db", "nope", false)), 1051);
    assert!(!storage.drop_view("db", "nope", true).unwrap());
    assert!(storage.drop_view("db", "v", false).unwrap());
    assert_eq!(storage.views("db").unwrap(), Vec::<String>::new());
    assert_eq!(code(storage.views("nodb")), 1049);
    // The name is free again.
    storage.create_table("db", table("v")).unwrap();
}

#[test]
fn views_persist_and_go_with_their_database() {
    let dir = test_dir();
    {
        let storage = open(dir.path(), 64);
        storage.create_database("db").unwrap();
        storage.create_database("other").unwrap();
        storage.create_table("db", table("t")).unwrap();
        for name in ["b", "a", "c"] {
            let sql = format!("SELECT id AS {name} FROM t");
            storage
                .create_view("db", ViewDef::new(name, &sql, &[name]), false)
                .unwrap();
        }
        storage
            .create_view("other", ViewDef::new("o", "SELECT 1", &[]), false)
            .unwrap();
    }
    let storage = open(dir.path(), 64);
    assert_eq!(storage.views("db").unwrap(), vec!["a", "b", "c"]);
    assert_eq!(
        storage.view("db", "b").unwrap().unwrap(),
        ViewDef::new("b", "SELECT id AS b FROM t", &["b"])
    );
    storage.drop_database("db").unwrap();
    assert_eq!(code(storage.views("db")), 1049);
    storage.create_database("db").unwrap();
    assert_eq!(storage.views("db").unwrap(), Vec::<String>::new());
    drop(storage);
    let storage = open(dir.path(), 64);
    assert_eq!(storage.views("db").unwrap(), Vec::<String>::new());
    assert_eq!(storage.views("other").unwrap(), vec!["o"]);
}

#[test]
fn a_catalog_naming_a_view_and_a_table_alike_is_rejected() {
    let dir = test_dir();
    {
        let storage = open(dir.path(), 64);
        storage.create_database("db").unwrap();
        storage.create_table("db", table("t")).unwrap();
        storage
            .create_view("db", ViewDef::new("v", "SELECT 1", &[]), false)
            .unwrap();
    }
    let path = dir.path().join("catalog.json");
    let json = std::fs::read_to_string(&path).unwrap();
    let mut catalog: serde_json::Value = serde_json::from_str(&json).unwrap();
    catalog["views"]["db"]["t"] = serde_json::json!({"name": "t", "sql": "SELECT 2"});
    std::fs::write(&path, serde_json::to_vec(&catalog).unwrap()).unwrap();
    let error = tarn_catalog::Storage::open(&settings(dir.path(), 64))
        .err()
        .expect("an inconsistent catalog");
    assert!(
        error.to_string().contains("both a table and a view"),
        "{error}"
    );
}
