//! Every column type through the table: extreme values and NULLs round-trip through
//! insert, get, scans and a reopen; multi-megabyte values live on overflow pages that
//! updates and deletes free; bad values are refused with MySQL's codes and change
//! nothing.

mod common;

use std::ops::Bound;

use common::*;
use tarn_btree::Direction;
use tarn_catalog::{IndexDef, ParallelScan, TableDef};
use tarn_row::{Column, ColumnType, Date, DateTime, Decimal, Time, Value};

const POOL_FRAMES: u64 = 256;

fn all_types() -> TableDef {
    let col = |name: &str, ty: ColumnType| Column::new(name, ty, true);
    TableDef::new(
        "types",
        vec![
            Column::new("id", ColumnType::Int { unsigned: false }, false),
            col("ti", ColumnType::TinyInt { unsigned: false }),
            col("tiu", ColumnType::TinyInt { unsigned: true }),
            col("si", ColumnType::SmallInt { unsigned: false }),
            col("siu", ColumnType::SmallInt { unsigned: true }),
            col("i", ColumnType::Int { unsigned: false }),
            col("iu", ColumnType::Int { unsigned: true }),
            col("bi", ColumnType::BigInt { unsigned: false }),
            col("biu", ColumnType::BigInt { unsigned: true }),
            col(
                "d65",
                ColumnType::Decimal {
                    precision: 65,
                    scale: 30,
                },
            ),
            col(
                "d15",
                ColumnType::Decimal {
                    precision: 15,
                    scale: 2,
                },
            ),
            col("f", ColumnType::Float),
            col("db", ColumnType::Double),
            col("dt", ColumnType::Date),
            col("dtm", ColumnType::DateTime { fsp: 6 }),
            col("ts", ColumnType::Timestamp { fsp: 3 }),
            col("ch", ColumnType::Char { len: 10 }),
            col("vc", ColumnType::VarChar { len: 300 }),
            col("tx", ColumnType::Text),
            col("bl", ColumnType::Blob),
            Column::new("nn", ColumnType::Int { unsigned: false }, false),
            col("tm", ColumnType::Time { fsp: 3 }),
            col("yr", ColumnType::Year),
        ],
        &[0],
    )
    // Indexes over several types, so that their key encodings take part too.
    .with_index(IndexDef::new("by_d65", &[9, 10], false))
    .with_index(IndexDef::new("by_time", &[14, 15, 13], false))
    .with_index(IndexDef::new("by_text", &[16, 17], false))
    .with_index(IndexDef::new("by_tm", &[21, 22], false))
    .with_index(IndexDef::new(
        "by_nums",
        &[1, 2, 3, 4, 5, 6, 7, 8, 11, 12],
        false,
    ))
}

fn dec(s: &str) -> Value {
    Value::Decimal(Decimal::parse(s).unwrap())
}

fn datetime(y: u16, mo: u8, d: u8, h: u8, mi: u8, s: u8, us: u32) -> Value {
    Value::DateTime(DateTime::new(Date::new(y, mo, d).unwrap(), h, mi, s, us).unwrap())
}

/// (row to insert, row expected back)
fn rows() -> Vec<(Vec<Value>, Vec<Value>)> {
    let nines = |n: usize| "9".repeat(n);
    let max = vec![
        Value::Int(1),
        Value::Int(i8::MAX.into()),
        Value::UInt(u8::MAX.into()),
        Value::Int(i16::MAX.into()),
        Value::UInt(u16::MAX.into()),
        Value::Int(i32::MAX.into()),
        Value::UInt(u32::MAX.into()),
        Value::Int(i64::MAX),
        Value::UInt(u64::MAX),
        dec(&format!("{}.{}", nines(35), nines(30))),
        dec(&format!("{}.99", nines(13))),
        Value::Float(f32::MAX),
        Value::Double(f64::MAX),
        Value::Date(Date::MAX),
        Value::DateTime(DateTime::MAX),
        datetime(2038, 1, 19, 3, 14, 7, 999_000),
        text("éééééééééé"),
        Value::Bytes("ü".repeat(300).into_bytes()),
        Value::Bytes(vec![b'T'; 65_535]),
        Value::Bytes((0..=255u8).cycle().take(5000).collect()),
        Value::Int(i64::from(i32::MAX)),
        Value::Time(Time::MAX),
        Value::UInt(2155),
    ];
    let min = vec![
        Value::Int(-1),
        Value::Int(i8::MIN.into()),
        Value::UInt(0),
        Value::Int(i16::MIN.into()),
        Value::UInt(0),
        Value::Int(i32::MIN.into()),
        Value::UInt(0),
        Value::Int(i64::MIN),
        Value::UInt(0),
        dec(&format!("-{}.{}", nines(35), nines(30))),
        dec(&format!("-{}.99", nines(13))),
        Value::Float(-f32::MAX),
        Value::Double(f64::MIN),
        Value::Date(Date::MIN),
        Value::DateTime(DateTime::MIN),
        datetime(1970, 1, 1, 0, 0, 1, 0),
        text(""),
        text(""),
        text(""),
        Value::Bytes(Vec::new()),
        Value::Int(i64::from(i32::MIN)),
        Value::Time(Time::MIN),
        Value::UInt(0),
    ];
    let mut nulls = vec![Value::Null; 23];
    nulls[0] = Value::Int(0);
    nulls[20] = Value::Int(0);
    // Values that check_value normalises.
    let given = vec![
        Value::Int(2),
        Value::UInt(5),     // UInt into a signed column
        Value::Int(7),      // Int into an unsigned one
        text("-300"),       // a string into a number
        Value::Double(2.6), // rounded
        Value::Int(0),
        Value::UInt(0),
        Value::Int(-1),
        Value::UInt(1),
        dec("0.0000000000000000000000000000001"), // 31 fraction digits: rounds to 0
        dec("1.005"),                             // half away from zero
        Value::Double(0.5),
        Value::Float(0.25),
        datetime(2024, 2, 29, 23, 59, 59, 999_999), // DATE drops the time
        datetime(2024, 2, 29, 12, 0, 0, 123_456),
        datetime(2024, 2, 29, 12, 0, 0, 123_456), // rounds to .123
        text("ab  "),                             // CHAR loses trailing spaces
        text("a\u{0}b  "),                        // VARCHAR keeps them
        text("ß"),
        Value::Bytes(vec![0, 0xff, 0]),
        Value::Int(3),
        Value::Time(Time::from_micros(-3_723_456_789).unwrap()), // rounds to .457
        Value::Int(1999),                                        // YEAR holds UInt
    ];
    let normalised = vec![
        Value::Int(2),
        Value::Int(5),
        Value::UInt(7),
        Value::Int(-300),
        Value::UInt(3),
        Value::Int(0),
        Value::UInt(0),
        Value::Int(-1),
        Value::UInt(1),
        dec("0"),
        dec("1.01"),
        Value::Float(0.5),
        Value::Double(0.25),
        Value::Date(Date::new(2024, 2, 29).unwrap()),
        datetime(2024, 2, 29, 12, 0, 0, 123_456),
        datetime(2024, 2, 29, 12, 0, 0, 123_000),
        text("ab"),
        text("a\u{0}b  "),
        text("ß"),
        Value::Bytes(vec![0, 0xff, 0]),
        Value::Int(3),
        Value::Time(Time::from_micros(-3_723_457_000).unwrap()),
        Value::UInt(1999),
    ];
    vec![
        (max.clone(), max),
        (min.clone(), min),
        (nulls.clone(), nulls),
        (given, normalised),
    ]
}

#[test]
fn every_type_round_trips_through_insert_get_scans_and_reopen() {
    let dir = test_dir();
    let cases = rows();
    let mut expected: Vec<Vec<Value>> = cases.iter().map(|(_, want)| want.clone()).collect();
    expected.sort_by_key(|r| match r[0] {
        Value::Int(i) => i,
        _ => unreachable!(),
    });
    let check = |storage: &tarn_catalog::Storage| {
        let table = storage.table("db", "types").unwrap();
        for want in &expected {
            let got = table.get(&want[..1]).unwrap().unwrap();
            for (c, (g, w)) in got.iter().zip(want).enumerate() {
                assert_eq!(g, w, "column {}", table.def().columns[c].name);
            }
        }
        assert_eq!(pk_scan(&table, Direction::Forward), expected);
        let (batches, _) = parallel_rows(
            &table,
            ParallelScan {
                threads: Some(2),
                ordered: true,
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(batches, expected, "parallel scan batches");
        for index in table.indexes() {
            let rows = index_rows(
                &table,
                &index.def.name,
                Bound::Unbounded,
                Bound::Unbounded,
                Direction::Forward,
                tarn_common::settings::PrefetchUnit::Fixed(8),
            )
            .unwrap();
            assert_eq!(rows.len(), expected.len(), "{}", index.def.name);
        }
        // NULLs first, then the minimum, then the maximum (by_nums: TINYINT first).
        let by_nums = index_rows(
            &table,
            "by_nums",
            Bound::Unbounded,
            Bound::Unbounded,
            Direction::Forward,
            tarn_common::settings::PrefetchUnit::Fixed(0),
        )
        .unwrap();
        let ids: Vec<&Value> = by_nums.iter().map(|r| &r[0]).collect();
        assert_eq!(
            ids,
            [
                &Value::Int(0),
                &Value::Int(-1),
                &Value::Int(2),
                &Value::Int(1)
            ]
        );
    };
    {
        let storage = open(dir.path(), POOL_FRAMES);
        storage.create_database("db").unwrap();
        let table = storage.create_table("db", all_types()).unwrap();
        for (given, _) in &cases {
            table.insert(given.clone()).unwrap();
        }
        check(&storage);
    }
    let storage = open(dir.path(), POOL_FRAMES);
    check(&storage);
}

#[test]
fn bad_values_are_refused_and_change_nothing() {
    let dir = test_dir();
    let storage = open(dir.path(), POOL_FRAMES);
    storage.create_database("db").unwrap();
    let table = storage.create_table("db", all_types()).unwrap();
    let cases = rows();
    for (given, _) in &cases {
        table.insert(given.clone()).unwrap();
    }
    let before = pk_scan(&table, Direction::Forward);
    let overflow_before = overflow_pages(table.clustered());
    let base = cases[2].0.clone(); // all NULLs, id 0
    let with = |column: usize, value: Value| {
        let mut row = base.clone();
        row[0] = Value::Int(100);
        row[column] = value;
        row
    };
    let bad: Vec<(u16, Vec<Value>)> = vec![
        (1264, with(1, Value::Int(128))),
        (1264, with(1, Value::Int(-129))),
        (1264, with(2, Value::Int(-1))),
        (1264, with(2, Value::UInt(256))),
        (1264, with(4, Value::Int(65_536))),
        (1264, with(5, Value::Int(i64::from(i32::MAX) + 1))),
        (1264, with(6, Value::Int(-1))),
        (1264, with(7, Value::UInt(u64::MAX))),
        (1264, with(8, Value::Int(-1))),
        (1264, with(9, dec(&"9".repeat(36)))),
        (1264, with(10, dec("10000000000000"))),
        (1264, with(10, dec("-99999999999999.5"))),
        (1264, with(11, Value::Double(f64::MAX))),
        (1264, with(15, datetime(1969, 12, 31, 23, 59, 59, 0))),
        (1264, with(15, datetime(2038, 1, 19, 3, 14, 8, 0))),
        (1406, with(16, text("abcdefghijk"))),
        (1406, with(16, text("ééééééééééé"))),
        (1406, with(17, Value::Bytes("ü".repeat(301).into_bytes()))),
        // TEXT (column 18) stands in for MEDIUMTEXT and LONGTEXT, so it holds up to
        // `TEXT_LEN_MAX_BYTES` (1 GiB): too large a value to build here.
        (1264, with(22, Value::Int(1900))),
        (1264, with(22, Value::UInt(2156))),
        (1048, with(20, Value::Null)),
        (1048, with(0, Value::Null)),
    ];
    for (want, row) in &bad {
        let what = format!("{row:?}");
        assert_eq!(code(table.insert(row.clone())), *want, "insert {what}");
        // The same value as an update of an existing row.
        assert_eq!(
            code(table.update(&[Value::Int(1)], row.clone())),
            *want,
            "update {what}"
        );
    }
    // Text that is not UTF-8 is an incorrect value.
    assert_eq!(
        code(table.insert(with(17, Value::Bytes(vec![0xff, 0xfe])))),
        1366
    );
    // Excess trailing spaces are cut, not refused.
    table.insert(with(16, text("abcdefghij   "))).unwrap();
    assert_eq!(
        table.get(&[Value::Int(100)]).unwrap().unwrap()[16],
        text("abcdefghij")
    );
    table.delete(&[Value::Int(100)]).unwrap().unwrap();
    assert_eq!(pk_scan(&table, Direction::Forward), before);
    assert_eq!(overflow_pages(table.clustered()), overflow_before);
    for index in table.indexes() {
        assert_eq!(
            index.tree.check_invariants().unwrap().entries,
            before.len() as u64
        );
    }
}

/// A value of several megabytes lives on a chain of overflow pages: it round-trips
/// (also after a reopen, with a pool smaller than the value), and replacing or
/// deleting it puts every page of the chain on the free list.
#[test]
fn multi_megabyte_values_round_trip_and_their_pages_are_freed() {
    let dir = test_dir();
    let big: Vec<u8> = (0..(5 << 20) + 123)
        .map(|i: u32| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    let big_pages = overflow_pages_for(big.len());
    assert!(big_pages > POOL_FRAMES * 4);
    let def = TableDef::new(
        "big",
        vec![
            Column::new("id", ColumnType::Int { unsigned: false }, false),
            Column::new("b", ColumnType::Blob, true),
            Column::new("t", ColumnType::Text, true),
        ],
        &[0],
    );
    let long_text = Value::Bytes("ж".repeat(30_000).into_bytes());
    {
        let storage = open(dir.path(), POOL_FRAMES);
        storage.create_database("db").unwrap();
        let table = storage.create_table("db", def).unwrap();
        table
            .insert(vec![
                Value::Int(1),
                Value::Bytes(big.clone()),
                long_text.clone(),
            ])
            .unwrap();
        table
            .insert(vec![Value::Int(2), text("small"), Value::Null])
            .unwrap();
        assert_eq!(
            overflow_pages(table.clustered()),
            big_pages + overflow_pages_for(60_000)
        );
        assert_eq!(
            table.get(&[Value::Int(1)]).unwrap().unwrap(),
            vec![Value::Int(1), Value::Bytes(big.clone()), long_text.clone()]
        );
    }
    let storage = open(dir.path(), POOL_FRAMES);
    let table = storage.table("db", "big").unwrap();
    let row = table.get(&[Value::Int(1)]).unwrap().unwrap();
    assert!(
        row[1] == Value::Bytes(big.clone()),
        "the value read back after a reopen differs"
    );
    assert_eq!(row[2], long_text);
    let free = |table: &tarn_catalog::Table| table.clustered().meta().unwrap().free_count;
    // Replace the long values by short ones: their chains are freed.
    let text_pages = overflow_pages_for(60_000);
    let free_before = free(&table);
    assert!(
        table
            .update(
                &[Value::Int(1)],
                vec![Value::Int(1), text("tiny"), Value::Null]
            )
            .unwrap()
    );
    assert_eq!(free(&table), free_before + (big_pages + text_pages) as u32);
    assert_eq!(overflow_pages(table.clustered()), 0);
    // A new big value reuses the free pages rather than growing the file.
    let allocated = table.clustered().meta().unwrap().next;
    assert!(
        table
            .update(
                &[Value::Int(2)],
                vec![Value::Int(2), Value::Bytes(big.clone()), Value::Null]
            )
            .unwrap()
    );
    assert_eq!(table.clustered().meta().unwrap().next, allocated);
    assert_eq!(free(&table), free_before + text_pages as u32);
    assert_eq!(overflow_pages(table.clustered()), big_pages);
    // Deleting frees it again.
    let deleted = table.delete(&[Value::Int(2)]).unwrap().unwrap();
    assert!(deleted[1] == Value::Bytes(big.clone()));
    assert_eq!(free(&table), free_before + (big_pages + text_pages) as u32);
    table.delete(&[Value::Int(1)]).unwrap().unwrap();
    assert_eq!(overflow_pages(table.clustered()), 0);
    assert!(pk_scan(&table, Direction::Forward).is_empty());
}

/// Keys too long for a 4 KiB page's entries (a primary key or an index over a long
/// VARCHAR) are refused on insert and update, and nothing changes.
#[test]
fn keys_too_long_for_a_page_are_refused_and_change_nothing() {
    let dir = test_dir();
    let storage = open(dir.path(), POOL_FRAMES);
    storage.create_database("db").unwrap();
    let table = storage
        .create_table(
            "db",
            TableDef::new(
                "k",
                vec![
                    Column::new("id", ColumnType::VarChar { len: 300 }, false),
                    Column::new("s", ColumnType::VarChar { len: 300 }, true),
                    Column::new("b", ColumnType::Blob, true),
                ],
                &[0],
            )
            .with_index(IndexDef::new("by_s", &[1], false)),
        )
        .unwrap();
    let long = Value::Bytes("\u{1F600}".repeat(300).into_bytes()); // 1200 bytes
    let blob = Value::Bytes(vec![7; 5000]);
    for i in 0..50 {
        table
            .insert(vec![
                text(&format!("k{i}")),
                text(&format!("s{i}")),
                blob.clone(),
            ])
            .unwrap();
    }
    let before = pk_scan(&table, Direction::Forward);
    let overflow_before = overflow_pages(table.clustered());
    let refused = |code: u16| [1071, 1118].contains(&code);
    let c = code(table.insert(vec![long.clone(), Value::Null, blob.clone()]));
    assert!(refused(c), "long primary key: {c}");
    let c = code(table.insert(vec![text("new"), long.clone(), blob.clone()]));
    assert!(refused(c), "long index key: {c}");
    let c = code(table.update(&[text("k1")], vec![text("k1"), long.clone(), blob.clone()]));
    assert!(refused(c), "update to a long index key: {c}");
    let c = code(table.update(&[text("k2")], vec![long.clone(), text("s2"), blob.clone()]));
    assert!(refused(c), "update to a long primary key: {c}");
    let c = code(table.update(&[text("k3")], vec![text("k3x"), long.clone(), Value::Null]));
    assert!(
        refused(c),
        "update to a new primary key and a long index key: {c}"
    );
    assert_eq!(pk_scan(&table, Direction::Forward), before);
    assert_eq!(overflow_pages(table.clustered()), overflow_before);
    let by_s = index_rows(
        &table,
        "by_s",
        Bound::Unbounded,
        Bound::Unbounded,
        Direction::Forward,
        tarn_common::settings::PrefetchUnit::Fixed(8),
    )
    .unwrap();
    assert_eq!(by_s.len(), 50);
    // An index build over a long value fails and leaves no index (nor its file).
    drop(table);
    let table = storage.drop_index("db", "k", "by_s").unwrap();
    table
        .insert(vec![text("z"), long.clone(), Value::Null])
        .unwrap();
    let files = std::fs::read_dir(dir.path()).unwrap().count();
    let c = code(
        storage
            .create_index("db", "k", IndexDef::new("by_s2", &[1], false))
            .map(|_| ()),
    );
    assert!(refused(c), "index build over a long key: {c}");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), files);
    let table = storage.table("db", "k").unwrap();
    assert!(table.indexes().is_empty());
    assert_eq!(table.get(&[text("z")]).unwrap().unwrap()[1], long);
}
