//! Collations through keys: a case-insensitive, PAD SPACE primary key and secondary
//! index treat 'abc', 'ABC ' and 'Abc' as one value; the binary collation keeps them
//! apart.

mod common;

use std::ops::Bound;

use common::*;
use tarn_btree::Direction;
use tarn_catalog::{IndexDef, Storage, TableDef};
use tarn_common::settings::PrefetchUnit;
use tarn_row::{Collation, Column, ColumnType, Value};

fn strings(rows: &[Vec<Value>], column: usize) -> Vec<String> {
    rows.iter()
        .map(|r| match &r[column] {
            Value::Bytes(b) => String::from_utf8(b.clone()).unwrap(),
            other => panic!("not a string: {other:?}"),
        })
        .collect()
}

fn setup() -> (tempfile::TempDir, Storage) {
    let dir = test_dir();
    let storage = open(dir.path(), 64);
    storage.create_database("db").unwrap();
    (dir, storage)
}

#[test]
fn a_case_insensitive_primary_key_ignores_case_and_trailing_spaces() {
    let (_dir, storage) = setup();
    let table = storage
        .create_table(
            "db",
            TableDef::new(
                "ci",
                vec![
                    Column::new("k", ColumnType::VarChar { len: 20 }, false)
                        .with_collation(Collation::CaseInsensitive),
                    Column::new("v", ColumnType::Int { unsigned: false }, false),
                ],
                &[0],
            ),
        )
        .unwrap();
    table.insert(vec![text("abc"), int(1)]).unwrap();
    for dup in ["ABC ", "Abc", "abc   ", "aBC"] {
        assert_eq!(code(table.insert(vec![text(dup), int(2)])), 1062, "{dup:?}");
    }
    // Different values, even if close.
    for other in ["abcd", "ab", "abc\t", "äbc"] {
        table.insert(vec![text(other), int(3)]).unwrap();
    }
    assert_eq!(pk_scan(&table, Direction::Forward).len(), 5);
    // Any spelling finds the row, which keeps the case it was written with.
    for key in ["ABC", "abc ", "AbC"] {
        assert_eq!(
            table.get(&[text(key)]).unwrap(),
            Some(vec![text("abc"), int(1)]),
            "{key:?}"
        );
    }
    // Updating through another spelling keeps the key; the new spelling is stored.
    assert!(
        table
            .update(&[text("ABC")], vec![text("ABC"), int(9)])
            .unwrap()
    );
    assert_eq!(
        table.get(&[text("abc")]).unwrap(),
        Some(vec![text("ABC"), int(9)])
    );
    // A key range on 'abc' is exactly that row.
    let found = table
        .scan(
            Bound::Included(vec![text("aBc")]),
            Bound::Included(vec![text("ABC  ")]),
            Direction::Forward,
        )
        .unwrap()
        .collect_rows()
        .unwrap();
    assert_eq!(found, vec![vec![text("ABC"), int(9)]]);
    assert_eq!(
        table.delete(&[text("abc ")]).unwrap(),
        Some(vec![text("ABC"), int(9)])
    );
    assert!(table.get(&[text("abc")]).unwrap().is_none());
}

#[test]
fn case_insensitive_and_binary_indexes() {
    let (dir, storage) = setup();
    let table = storage
        .create_table(
            "db",
            TableDef::new(
                "t",
                vec![
                    Column::new("id", ColumnType::Int { unsigned: false }, false),
                    Column::new("ci", ColumnType::VarChar { len: 20 }, true)
                        .with_collation(Collation::CaseInsensitive),
                    Column::new("bin", ColumnType::VarChar { len: 20 }, true),
                    Column::new("ch", ColumnType::Char { len: 8 }, true),
                ],
                &[0],
            )
            .with_index(IndexDef::new("by_ci", &[1], false))
            .with_index(IndexDef::new("u_bin", &[2], true))
            .with_index(IndexDef::new("u_ch", &[3], true)),
        )
        .unwrap();
    let words = [
        "abc", "ABC", "Abc", "abc ", "abcd", "ab", "ABD", "b", "\u{e9}", "\u{c9}",
    ];
    for (i, w) in words.iter().enumerate() {
        table
            .insert(vec![int(i as i64), text(w), text(w), Value::Null])
            .unwrap();
    }
    let check = |table: &tarn_catalog::Table| {
        for prefetch in [
            PrefetchUnit::Fixed(0),
            PrefetchUnit::Fixed(8),
            PrefetchUnit::Adaptive,
        ] {
            let ci = index_rows(
                table,
                "by_ci",
                Bound::Included(vec![text("abc")]),
                Bound::Included(vec![text("abc")]),
                Direction::Forward,
                prefetch,
            )
            .unwrap();
            // Equal under the collation, in primary-key order within the value.
            assert_eq!(
                strings(&ci, 1),
                ["abc", "ABC", "Abc", "abc "],
                "{prefetch:?}"
            );
            let bin = index_rows(
                table,
                "u_bin",
                Bound::Included(vec![text("abc")]),
                Bound::Included(vec![text("abc")]),
                Direction::Forward,
                prefetch,
            )
            .unwrap();
            assert_eq!(strings(&bin, 2), ["abc"], "{prefetch:?}");
            let accents = index_rows(
                table,
                "by_ci",
                Bound::Included(vec![text("\u{c9}")]),
                Bound::Included(vec![text("\u{e9}")]),
                Direction::Backward,
                prefetch,
            )
            .unwrap();
            assert_eq!(strings(&accents, 1), ["\u{c9}", "\u{e9}"], "{prefetch:?}");
        }
        // Binary order: upper case before lower case; case-insensitive: 'ab' < 'abc' < 'abcd' < 'abd'.
        let bin_all = index_rows(
            table,
            "u_bin",
            Bound::Unbounded,
            Bound::Excluded(vec![text("b")]),
            Direction::Forward,
            PrefetchUnit::Fixed(0),
        )
        .unwrap();
        assert_eq!(
            strings(&bin_all, 2),
            ["ABC", "ABD", "Abc", "ab", "abc", "abc ", "abcd"]
        );
        let ci_all = index_rows(
            table,
            "by_ci",
            Bound::Excluded(vec![text("AB")]),
            Bound::Excluded(vec![text("b")]),
            Direction::Forward,
            PrefetchUnit::Fixed(0),
        )
        .unwrap();
        assert_eq!(
            strings(&ci_all, 1),
            ["abc", "ABC", "Abc", "abc ", "abcd", "ABD"]
        );
    };
    check(&table);
    // The binary unique index refuses only the identical string.
    assert_eq!(
        code(table.insert(vec![int(100), text("x"), text("Abc"), Value::Null])),
        1062
    );
    table
        .insert(vec![int(100), text("x"), text("aBc"), Value::Null])
        .unwrap();
    table.delete(&[int(100)]).unwrap().unwrap();
    // CHAR drops trailing spaces, so 'q' and 'q  ' collide even in binary.
    table
        .update(&[int(0)], vec![int(0), text("abc"), text("abc"), text("q")])
        .unwrap();
    assert_eq!(
        code(table.update(
            &[int(1)],
            vec![int(1), text("ABC"), text("ABC"), text("q  ")]
        )),
        1062
    );
    table
        .update(&[int(1)], vec![int(1), text("ABC"), text("ABC"), text("Q")])
        .unwrap();
    table
        .update(
            &[int(0)],
            vec![int(0), text("abc"), text("abc"), Value::Null],
        )
        .unwrap();
    table
        .update(
            &[int(1)],
            vec![int(1), text("ABC"), text("ABC"), Value::Null],
        )
        .unwrap();
    check(&table);
    // A unique case-insensitive index cannot be built over case variants, and the
    // error names the value as stored (not the key's weight bytes) and the index.
    let error = storage
        .create_index("db", "t", IndexDef::new("u_ci", &[1], true))
        .map(|_| ())
        .unwrap_err();
    assert_eq!(error.mysql_code(), 1062);
    let message = error.to_string();
    assert!(
        message.to_ascii_lowercase().contains("'abc'") && message.contains("u_ci"),
        "{message}"
    );
    drop(table);
    drop(storage);
    let storage = open(dir.path(), 64);
    let table = storage.table("db", "t").unwrap();
    check(&table);
    assert_eq!(table.indexes().len(), 3);
}
