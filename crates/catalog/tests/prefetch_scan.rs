//! Secondary-index range scans with prefetch (S2): every prefetch unit returns the
//! same rows as the model, from a small cold pool, over random ranges with duplicate
//! keys and NULLs, forward and backward.

mod common;

use std::ops::Bound;

use common::*;
use tarn_btree::Direction;
use tarn_catalog::{IndexDef, TableDef};
use tarn_common::rng::{Rng, test_seed};
use tarn_common::settings::PrefetchUnit;
use tarn_row::{Collation, Column, ColumnType, Value};

/// Smaller than the clustered index, so prefetches evict each other.
const POOL_FRAMES: u64 = 32;
const ROWS: i64 = 1500;

const UNITS: [PrefetchUnit; 6] = [
    PrefetchUnit::Fixed(0),
    PrefetchUnit::Fixed(1),
    PrefetchUnit::Fixed(8),
    PrefetchUnit::Fixed(64),
    PrefetchUnit::Fixed(1024),
    PrefetchUnit::Adaptive,
];

fn definition() -> TableDef {
    TableDef::new(
        "t",
        vec![
            Column::new("id", ColumnType::Int { unsigned: false }, false),
            Column::new("k", ColumnType::Int { unsigned: false }, true),
            Column::new("s", ColumnType::VarChar { len: 16 }, true)
                .with_collation(Collation::CaseInsensitive),
            Column::new("pad", ColumnType::VarChar { len: 200 }, false),
        ],
        &[0],
    )
    .with_index(IndexDef::new("by_k", &[1], false))
    .with_index(IndexDef::new("by_sk", &[2, 1], false))
}

fn random_k(rng: &mut Rng) -> Value {
    if rng.percent(10) {
        Value::Null
    } else {
        // Skewed: a few values with hundreds of rows, many with a handful.
        let k = if rng.percent(30) {
            rng.below(4)
        } else {
            rng.below(200)
        };
        Value::Int(k as i64)
    }
}

fn random_s(rng: &mut Rng) -> Value {
    const S: [&str; 6] = ["x", "X", "y", "Y ", "zeta", "ZETA"];
    if rng.percent(15) {
        Value::Null
    } else {
        text(S[rng.below(S.len() as u64) as usize])
    }
}

#[test]
fn every_prefetch_unit_returns_the_same_rows() {
    let seed = test_seed("every_prefetch_unit_returns_the_same_rows");
    let mut rng = Rng::new(seed);
    let dir = test_dir();
    let mut rows = Vec::new();
    {
        let storage = open(dir.path(), POOL_FRAMES);
        storage.create_database("db").unwrap();
        let table = storage.create_table("db", definition()).unwrap();
        // Random insertion order: secondary order is unrelated to primary order.
        let mut ids: Vec<i64> = (0..ROWS).collect();
        for i in (1..ids.len()).rev() {
            ids.swap(i, rng.below(i as u64 + 1) as usize);
        }
        for id in ids {
            let row = vec![
                Value::Int(id),
                random_k(&mut rng),
                random_s(&mut rng),
                Value::Bytes(vec![b'p'; 60 + rng.below(80) as usize]),
            ];
            table.insert(row.clone()).unwrap();
            rows.push(row);
        }
        let height = table.clustered().check_invariants().unwrap().height;
        assert!(height >= 2, "height {height}");
    }
    rows.sort_by_key(|r| match r[0] {
        Value::Int(id) => id,
        _ => unreachable!(),
    });
    // Ranges: (index, lower, upper, direction), with the expected rows.
    let indexes: [(&str, &[usize]); 2] = [("by_k", &[1]), ("by_sk", &[2, 1])];
    let mut cases = Vec::new();
    for i in 0..24 {
        let (name, columns) = indexes[i % 2];
        let value = |rng: &mut Rng| -> Vec<Value> {
            let mut v = vec![];
            for &c in columns {
                v.push(if c == 1 { random_k(rng) } else { random_s(rng) });
                if rng.percent(40) {
                    break;
                }
            }
            v
        };
        let (lower, upper) = match i {
            0 | 1 => (Bound::Unbounded, Bound::Unbounded),
            // All NULLs of the first column.
            2 | 3 => (
                Bound::Included(vec![Value::Null]),
                Bound::Included(vec![Value::Null]),
            ),
            // One heavily duplicated value.
            4 => (
                Bound::Included(vec![Value::Int(1)]),
                Bound::Included(vec![Value::Int(1)]),
            ),
            5 => (
                Bound::Included(vec![text("Y")]),
                Bound::Excluded(vec![text("y"), Value::Int(2)]),
            ),
            _ => {
                let bound = |rng: &mut Rng| match rng.below(5) {
                    0 => Bound::Unbounded,
                    1 | 2 => Bound::Included(value(rng)),
                    _ => Bound::Excluded(value(rng)),
                };
                (bound(&mut rng), bound(&mut rng))
            }
        };
        let direction = if rng.percent(50) {
            Direction::Forward
        } else {
            Direction::Backward
        };
        cases.push((name, columns, lower, upper, direction));
    }
    // Expected rows from the key encoding of the model's rows.
    let expected: Vec<Vec<Vec<Value>>> = {
        let storage = open(dir.path(), POOL_FRAMES);
        let table = storage.table("db", "t").unwrap();
        let pk_types = key_types(&table, &[0]);
        cases
            .iter()
            .map(|(_, columns, lower, upper, direction)| {
                let types = key_types(&table, columns);
                let (lo, hi) = (encode_bound(&types, lower), encode_bound(&types, upper));
                let mut entries: Vec<(Vec<u8>, &Vec<Value>)> = rows
                    .iter()
                    .map(|r| {
                        let values: Vec<Value> = columns.iter().map(|&c| r[c].clone()).collect();
                        let mut key = encode(&types, &values);
                        key.extend(encode(&pk_types, &r[..1]));
                        (key, r)
                    })
                    .filter(|(key, _)| in_bounds(key, &lo, &hi))
                    .collect();
                entries.sort_by(|a, b| a.0.cmp(&b.0));
                let mut out: Vec<Vec<Value>> =
                    entries.into_iter().map(|(_, r)| r.clone()).collect();
                if *direction == Direction::Backward {
                    out.reverse();
                }
                out
            })
            .collect()
    };
    assert!(expected[2].len() > 50 && expected[4].len() > 50);
    eprintln!(
        "{} rows fetched per unit",
        expected.iter().map(Vec::len).sum::<usize>()
    );
    for unit in UNITS {
        // A fresh pool: every row fetch starts cold.
        let storage = open(dir.path(), POOL_FRAMES);
        let table = storage.table("db", "t").unwrap();
        for ((name, _, lower, upper, direction), want) in cases.iter().zip(&expected) {
            let what =
                format!("seed {seed}: {name} {lower:?}..{upper:?} {direction:?} at {unit:?}");
            let mut scan = table
                .index_scan(name, lower.clone(), upper.clone(), *direction, Some(unit))
                .unwrap();
            let mut found = Vec::new();
            while let Some(row) = scan.next_row().unwrap_or_else(|e| panic!("{what}: {e}")) {
                found.push(row);
            }
            assert_eq!(&found, want, "{what}");
            let stats = scan.stats();
            assert_eq!(stats.rows, want.len() as u64, "{what}");
            assert!(stats.unit_max <= 1024, "{what}: {stats:?}");
            match unit {
                PrefetchUnit::Fixed(0) => {
                    assert_eq!(stats.pages_prefetched, 0, "{what}: {stats:?}")
                }
                PrefetchUnit::Fixed(n) => {
                    assert_eq!(stats.unit_final, n, "{what}: {stats:?}");
                    if !want.is_empty() {
                        assert!(stats.prefetch_batches >= 1, "{what}: {stats:?}");
                    }
                }
                PrefetchUnit::Adaptive => {
                    assert!(stats.unit_final >= 8, "{what}: {stats:?}")
                }
            }
        }
        // A scan left half-way releases everything: the pool can still serve another.
        let mut scan = table
            .index_scan(
                "by_k",
                Bound::Unbounded,
                Bound::Unbounded,
                Direction::Forward,
                Some(unit),
            )
            .unwrap();
        for _ in 0..10 {
            scan.next_row().unwrap().unwrap();
        }
        drop(scan);
        assert_eq!(pk_scan(&table, Direction::Forward), rows, "at {unit:?}");
    }
}

/// A scan through the setting's unit (no override) agrees too, as do scans while the
/// pool is warm and ranges that are empty or inverted.
#[test]
fn setting_unit_empty_and_inverted_ranges() {
    let dir = test_dir();
    let storage = open(dir.path(), POOL_FRAMES);
    storage.create_database("db").unwrap();
    let table = storage.create_table("db", definition()).unwrap();
    for id in 0..500 {
        table
            .insert(vec![
                Value::Int(id),
                if id % 10 == 0 {
                    Value::Null
                } else {
                    Value::Int(id % 17)
                },
                text(if id % 2 == 0 { "x" } else { "Y" }),
                text("pad"),
            ])
            .unwrap();
    }
    for unit in UNITS {
        let all = index_rows(
            &table,
            "by_k",
            Bound::Unbounded,
            Bound::Unbounded,
            Direction::Forward,
            unit,
        )
        .unwrap();
        assert_eq!(all.len(), 500);
        assert!(all[..50].iter().all(|r| r[1].is_null()), "NULLs sort first");
        let inverted = index_rows(
            &table,
            "by_k",
            Bound::Included(vec![Value::Int(9)]),
            Bound::Included(vec![Value::Int(3)]),
            Direction::Forward,
            unit,
        )
        .unwrap();
        assert!(inverted.is_empty(), "{unit:?}");
        let none = index_rows(
            &table,
            "by_k",
            Bound::Excluded(vec![Value::Int(5)]),
            Bound::Excluded(vec![Value::Int(6)]),
            Direction::Backward,
            unit,
        )
        .unwrap();
        assert!(none.is_empty(), "{unit:?}");
        let y = index_rows(
            &table,
            "by_sk",
            Bound::Included(vec![text("y")]),
            Bound::Included(vec![text("y ")]),
            Direction::Backward,
            unit,
        )
        .unwrap();
        assert_eq!(y.len(), 250, "{unit:?}");
    }
    let default = table
        .index_scan(
            "by_k",
            Bound::Unbounded,
            Bound::Unbounded,
            Direction::Backward,
            None,
        )
        .unwrap()
        .collect_rows()
        .unwrap();
    assert_eq!(default.len(), 500);
    assert_eq!(
        code(
            table
                .index_scan(
                    "nope",
                    Bound::Unbounded,
                    Bound::Unbounded,
                    Direction::Forward,
                    None
                )
                .map(|_| ())
        ),
        1091
    );
}
