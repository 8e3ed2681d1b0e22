//! The table API against an in-memory model: random inserts, updates, deletes, gets
//! and primary-key range scans, with every secondary index checked against the model
//! after each batch of steps (through every prefetch mode), on a table with a
//! composite primary key and on one with a hidden row id.

mod common;

use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::Arc;

use common::*;
use tarn_btree::Direction;
use tarn_catalog::{IndexDef, Storage, Table, TableDef};
use tarn_common::rng::{Rng, test_seed};
use tarn_common::settings::PrefetchUnit;
use tarn_row::{Collation, Column, ColumnType, Value};

const POOL_FRAMES: u64 = 64;

/// Case variants that collide under the case-insensitive collation ('b' = 'B ').
const WORDS: [&str; 14] = [
    "", "a", "A", "b", "B ", "abc", "ABC", "Abc ", "zz", "ß", "é", "É", "a\u{0}", "a\t",
];

/// Which of the two tables a model describes.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    /// PRIMARY KEY (a INT, b VARCHAR ci); UNIQUE u_c (c); INDEX by_d (d, c).
    Composite,
    /// No primary key; UNIQUE u_y (y); INDEX by_z (z).
    Hidden,
}

fn definition(kind: Kind) -> TableDef {
    let ci = Collation::CaseInsensitive;
    match kind {
        Kind::Composite => TableDef::new(
            "t",
            vec![
                Column::new("a", ColumnType::Int { unsigned: false }, false),
                Column::new("b", ColumnType::VarChar { len: 20 }, false).with_collation(ci),
                Column::new("c", ColumnType::Int { unsigned: false }, true),
                Column::new("d", ColumnType::VarChar { len: 30 }, true).with_collation(ci),
                Column::new("e", ColumnType::Text, true),
            ],
            &[0, 1],
        )
        .with_index(IndexDef::new("u_c", &[2], true))
        .with_index(IndexDef::new("by_d", &[3, 2], false)),
        Kind::Hidden => TableDef::new(
            "h",
            vec![
                Column::new("x", ColumnType::Int { unsigned: false }, false),
                Column::new("y", ColumnType::VarChar { len: 10 }, true).with_collation(ci),
                Column::new("z", ColumnType::BigInt { unsigned: false }, true),
                Column::new("e", ColumnType::Blob, true),
            ],
            &[],
        )
        .with_index(IndexDef::new("u_y", &[1], true))
        .with_index(IndexDef::new("by_z", &[2], false)),
    }
}

struct ModelRow {
    /// What `get`, `update` and `delete` take.
    pk: Vec<Value>,
    row: Vec<Value>,
}

struct Model {
    kind: Kind,
    /// Encoded clustered key -> row.
    rows: BTreeMap<Vec<u8>, ModelRow>,
    next_row_id: u64,
}

fn row_id_types() -> Vec<(ColumnType, Collation)> {
    vec![(ColumnType::BigInt { unsigned: true }, Collation::Binary)]
}

impl Model {
    fn pk_types(&self, table: &Table) -> Vec<(ColumnType, Collation)> {
        match self.kind {
            Kind::Composite => key_types(table, &table.def().primary_key),
            Kind::Hidden => row_id_types(),
        }
    }

    fn pk_of(&self, table: &Table, row: &[Value]) -> Vec<Value> {
        table
            .def()
            .primary_key
            .iter()
            .map(|&c| row[c].clone())
            .collect()
    }

    fn key_of_pk(&self, table: &Table, pk: &[Value]) -> Vec<u8> {
        encode(&self.pk_types(table), pk)
    }

    /// The entry key of `row` (clustered key `key`) in index `i`, and the length of
    /// its index-column prefix if it takes part in uniqueness checks.
    fn index_entry(&self, table: &Table, i: usize, row: &[Value], key: &[u8]) -> (Vec<u8>, usize) {
        let def = &table.def().indexes[i];
        let values: Vec<Value> = def.columns.iter().map(|&c| row[c].clone()).collect();
        let mut entry = encode(&key_types(table, &def.columns), &values);
        let prefix = entry.len();
        entry.extend_from_slice(key);
        (entry, prefix)
    }

    /// Whether `row` would collide in a unique index with a row other than `skip`.
    fn unique_conflict(&self, table: &Table, row: &[Value], skip: Option<&[u8]>) -> bool {
        table.def().indexes.iter().enumerate().any(|(i, def)| {
            if !def.unique || def.columns.iter().any(|&c| row[c].is_null()) {
                return false;
            }
            // Encodings are prefix-free: an entry extending this row's index-column
            // encoding has the same values.
            let (mine, _) = self.index_entry(table, i, row, &[]);
            self.rows.iter().any(|(key, other)| {
                Some(key.as_slice()) != skip
                    && self
                        .index_entry(table, i, &other.row, key)
                        .0
                        .starts_with(&mine)
            })
        })
    }

    /// Rows in index `i` order, with their entry keys.
    fn index_order(&self, table: &Table, i: usize) -> Vec<(Vec<u8>, Vec<Value>)> {
        let mut entries: Vec<(Vec<u8>, Vec<Value>)> = self
            .rows
            .iter()
            .map(|(key, r)| (self.index_entry(table, i, &r.row, key).0, r.row.clone()))
            .collect();
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        entries
    }

    fn random_key(&self, rng: &mut Rng) -> Option<Vec<u8>> {
        if self.rows.is_empty() {
            return None;
        }
        let n = rng.below(self.rows.len() as u64) as usize;
        self.rows.keys().nth(n).cloned()
    }
}

fn word(rng: &mut Rng) -> Value {
    text(WORDS[rng.below(WORDS.len() as u64) as usize])
}

fn payload(rng: &mut Rng) -> Value {
    if rng.percent(15) {
        return Value::Null;
    }
    // Mostly inline; sometimes past a quarter page, so on overflow pages.
    let len = if rng.percent(8) {
        1100 + rng.below(3000) as usize
    } else {
        rng.below(300) as usize
    };
    let c = b'a' + rng.below(26) as u8;
    Value::Bytes(vec![c; len])
}

fn random_row(kind: Kind, rng: &mut Rng) -> Vec<Value> {
    let maybe_null = |rng: &mut Rng, v: Value| if rng.percent(20) { Value::Null } else { v };
    match kind {
        Kind::Composite => {
            let c = int(rng.below(1500) as i64 - 50);
            let d = word(rng);
            vec![
                int(rng.below(120) as i64 - 5),
                word(rng),
                maybe_null(rng, c),
                maybe_null(rng, d),
                payload(rng),
            ]
        }
        Kind::Hidden => {
            let y = match word(rng) {
                Value::Bytes(mut b) => {
                    b.extend_from_slice(rng.below(60).to_string().as_bytes());
                    Value::Bytes(b)
                }
                other => other,
            };
            let z = int(rng.below(30) as i64 - 3);
            vec![
                int(rng.below(1000) as i64),
                maybe_null(rng, y),
                maybe_null(rng, z),
                payload(rng),
            ]
        }
    }
}

/// A changed copy of `row`: non-key columns, indexed columns, and (composite table)
/// the primary key, each sometimes.
fn changed_row(kind: Kind, rng: &mut Rng, row: &[Value]) -> Vec<Value> {
    let fresh = random_row(kind, rng);
    let mut row = row.to_vec();
    let columns: &[usize] = match rng.below(4) {
        0 => &[row.len() - 1], // the payload only
        1 => match kind {
            Kind::Composite => &[2, 3],
            Kind::Hidden => &[1, 2],
        },
        2 => match kind {
            Kind::Composite => &[0, 1],
            Kind::Hidden => &[0],
        },
        _ => &[0, 1, 2, 3, 4][..row.len()],
    };
    for &c in columns {
        if rng.percent(75) {
            row[c] = fresh[c].clone();
        }
    }
    // A change of case only, which leaves the keys as they were.
    if kind == Kind::Composite
        && rng.percent(10)
        && let Value::Bytes(b) = &mut row[1]
    {
        b.make_ascii_uppercase();
    }
    row
}

fn random_bound(rng: &mut Rng, value: impl Fn(&mut Rng) -> Vec<Value>) -> Bound<Vec<Value>> {
    match rng.below(5) {
        0 => Bound::Unbounded,
        1 | 2 => Bound::Included(value(rng)),
        _ => Bound::Excluded(value(rng)),
    }
}

struct Harness {
    kind: Kind,
    table: Arc<Table>,
    model: Model,
    failures: u64,
}

impl Harness {
    fn step(&mut self, rng: &mut Rng, step: u64) {
        let table = self.table.clone();
        let kind = self.kind;
        let ctx = |what: &str| format!("step {step} ({kind:?}): {what}");
        match rng.below(100) {
            0..=39 => {
                let row = random_row(kind, rng);
                let key = match kind {
                    Kind::Composite => self
                        .model
                        .key_of_pk(&table, &self.model.pk_of(&table, &row)),
                    Kind::Hidden => {
                        let id = self.model.next_row_id;
                        self.model.next_row_id += 1;
                        self.model.key_of_pk(&table, &[Value::UInt(id)])
                    }
                };
                let duplicate = self.model.rows.contains_key(&key)
                    || self.model.unique_conflict(&table, &row, None);
                let result = table.insert(row.clone());
                if duplicate {
                    assert_eq!(code(result), 1062, "{}", ctx(&format!("insert {row:?}")));
                    self.failures += 1;
                    self.check_unchanged(&key);
                } else {
                    result.unwrap_or_else(|e| panic!("{}: {e}", ctx(&format!("insert {row:?}"))));
                    let pk = match kind {
                        Kind::Composite => self.model.pk_of(&table, &row),
                        Kind::Hidden => vec![Value::UInt(self.model.next_row_id - 1)],
                    };
                    self.model.rows.insert(key, ModelRow { pk, row });
                }
            }
            40..=64 => {
                let Some(key) = self.model.random_key(rng) else {
                    return;
                };
                let old = &self.model.rows[&key];
                let (pk, old_row) = (old.pk.clone(), old.row.clone());
                if rng.percent(5) {
                    // A key nobody has.
                    let missing = match kind {
                        Kind::Composite => vec![int(1_000_000), text("none")],
                        Kind::Hidden => vec![Value::UInt(u64::MAX / 2)],
                    };
                    let updated = table.update(&missing, old_row.clone());
                    assert!(!updated.unwrap(), "{}", ctx("update of a missing row"));
                    return;
                }
                let row = changed_row(kind, rng, &old_row);
                let new_key = match kind {
                    Kind::Composite => self
                        .model
                        .key_of_pk(&table, &self.model.pk_of(&table, &row)),
                    Kind::Hidden => key.clone(),
                };
                let duplicate = (new_key != key && self.model.rows.contains_key(&new_key))
                    || self.model.unique_conflict(&table, &row, Some(&key));
                let result = table.update(&pk, row.clone());
                let what = || ctx(&format!("update {old_row:?} -> {row:?}"));
                if duplicate {
                    assert_eq!(code(result), 1062, "{}", what());
                    self.failures += 1;
                    self.check_unchanged(&key);
                    self.check_unchanged(&new_key);
                } else {
                    assert!(
                        result.unwrap_or_else(|e| panic!("{}: {e}", what())),
                        "{}",
                        what()
                    );
                    self.model.rows.remove(&key);
                    let pk = match kind {
                        Kind::Composite => self.model.pk_of(&table, &row),
                        Kind::Hidden => pk,
                    };
                    self.model.rows.insert(new_key, ModelRow { pk, row });
                }
            }
            65..=79 => {
                let pk = match self.model.random_key(rng) {
                    Some(key) if rng.percent(85) => self.model.rows[&key].pk.clone(),
                    _ => match kind {
                        Kind::Composite => self.model.pk_of(&table, &random_row(kind, rng)),
                        Kind::Hidden => vec![Value::UInt(rng.below(self.model.next_row_id + 2))],
                    },
                };
                let key = self.model.key_of_pk(&table, &pk);
                let expected = self.model.rows.remove(&key).map(|r| r.row);
                let deleted = table
                    .delete(&pk)
                    .unwrap_or_else(|e| panic!("{}: {e}", ctx("delete")));
                assert_eq!(deleted, expected, "{}", ctx(&format!("delete {pk:?}")));
            }
            80..=89 => {
                let pk = match self.model.random_key(rng) {
                    Some(key) if rng.percent(80) => self.model.rows[&key].pk.clone(),
                    _ => match kind {
                        Kind::Composite => self.model.pk_of(&table, &random_row(kind, rng)),
                        Kind::Hidden => vec![Value::UInt(rng.below(self.model.next_row_id + 2))],
                    },
                };
                let key = self.model.key_of_pk(&table, &pk);
                let expected = self.model.rows.get(&key).map(|r| r.row.clone());
                assert_eq!(
                    table.get(&pk).unwrap(),
                    expected,
                    "{}",
                    ctx(&format!("get {pk:?}"))
                );
            }
            _ => self.range_scan(rng, step),
        }
    }

    /// The row under `key` is what the model says (after a failed write).
    fn check_unchanged(&self, key: &[u8]) {
        let expected = self.model.rows.get(key).map(|r| r.row.clone());
        assert_eq!(self.table.get_by_key(key).unwrap(), expected);
    }

    /// A primary-key range scan over a prefix of the key (composite table only: the
    /// hidden row id is not visible).
    fn range_scan(&self, rng: &mut Rng, step: u64) {
        let table = &self.table;
        let direction = if rng.percent(50) {
            Direction::Forward
        } else {
            Direction::Backward
        };
        let (lower, upper) = match self.kind {
            Kind::Composite => {
                let value = |rng: &mut Rng| {
                    let a = int(rng.below(124) as i64 - 7);
                    if rng.percent(50) {
                        vec![a]
                    } else {
                        vec![a, word(rng)]
                    }
                };
                (random_bound(rng, value), random_bound(rng, value))
            }
            Kind::Hidden => {
                let value =
                    |rng: &mut Rng| vec![Value::UInt(rng.below(self.model.next_row_id + 2))];
                (random_bound(rng, value), random_bound(rng, value))
            }
        };
        let types = self.model.pk_types(table);
        let (lo, hi) = (encode_bound(&types, &lower), encode_bound(&types, &upper));
        let mut expected: Vec<Vec<Value>> = self
            .model
            .rows
            .iter()
            .filter(|(key, _)| in_bounds(key, &lo, &hi))
            .map(|(_, r)| r.row.clone())
            .collect();
        if direction == Direction::Backward {
            expected.reverse();
        }
        let found = table
            .scan(lower.clone(), upper.clone(), direction)
            .unwrap()
            .collect_rows()
            .unwrap();
        assert_eq!(
            found, expected,
            "step {step}: scan {lower:?}..{upper:?} {direction:?}"
        );
    }

    /// Everything agrees with the model: the clustered index through scans and gets,
    /// each secondary index through full and partial scans at several prefetch units,
    /// and the trees' own invariants.
    fn verify(&self, rng: &mut Rng, when: &str) {
        let table = &self.table;
        let expected: Vec<Vec<Value>> = self.model.rows.values().map(|r| r.row.clone()).collect();
        assert_eq!(
            pk_scan(table, Direction::Forward),
            expected,
            "{when}: forward scan"
        );
        let mut backward = expected.clone();
        backward.reverse();
        assert_eq!(
            pk_scan(table, Direction::Backward),
            backward,
            "{when}: backward scan"
        );
        for r in self.model.rows.values() {
            assert_eq!(
                table.get(&r.pk).unwrap().as_ref(),
                Some(&r.row),
                "{when}: get {:?}",
                r.pk
            );
        }
        let stats = table.clustered().check_invariants().unwrap();
        assert_eq!(stats.entries, self.model.rows.len() as u64, "{when}");
        // Overflow chains: exactly those of the live long values (none leaked by
        // updates, deletes or failed writes).
        let long_values: u64 = self
            .model
            .rows
            .values()
            .map(|r| match r.row.last() {
                Some(Value::Bytes(b)) => overflow_pages_for(b.len()),
                _ => 0,
            })
            .sum();
        assert_eq!(
            overflow_pages(table.clustered()),
            long_values,
            "{when}: overflow pages"
        );
        for (i, index) in table.indexes().iter().enumerate() {
            let name = index.def.name.clone();
            let stats = index
                .tree
                .check_invariants()
                .unwrap_or_else(|e| panic!("{when}: {name}: {e}"));
            assert_eq!(
                stats.entries,
                self.model.rows.len() as u64,
                "{when}: {name} entries"
            );
            let order = self.model.index_order(table, i);
            let rows: Vec<Vec<Value>> = order.iter().map(|(_, r)| r.clone()).collect();
            for prefetch in [
                PrefetchUnit::Fixed(0),
                PrefetchUnit::Fixed(8),
                PrefetchUnit::Adaptive,
            ] {
                let found = index_rows(
                    table,
                    &name,
                    Bound::Unbounded,
                    Bound::Unbounded,
                    Direction::Forward,
                    prefetch,
                )
                .unwrap();
                assert_eq!(found, rows, "{when}: {name} at {prefetch:?}");
            }
            let mut reversed = rows.clone();
            reversed.reverse();
            let found = index_rows(
                table,
                &name,
                Bound::Unbounded,
                Bound::Unbounded,
                Direction::Backward,
                PrefetchUnit::Fixed(8),
            )
            .unwrap();
            assert_eq!(found, reversed, "{when}: {name} backward");
            // Ranges over a prefix of the index columns, from values in the table (or
            // NULL, or random ones).
            let types = key_types(table, &index.def.columns);
            for _ in 0..4 {
                let value = |rng: &mut Rng| -> Vec<Value> {
                    let source = match self.model.random_key(rng) {
                        Some(key) if rng.percent(70) => self.model.rows[&key].row.clone(),
                        _ => random_row(self.kind, rng),
                    };
                    let n = 1 + rng.below(index.def.columns.len() as u64) as usize;
                    index.def.columns[..n]
                        .iter()
                        .map(|&c| source[c].clone())
                        .collect()
                };
                let lower = random_bound(rng, value);
                let upper = random_bound(rng, value);
                let (lo, hi) = (encode_bound(&types, &lower), encode_bound(&types, &upper));
                let direction = if rng.percent(50) {
                    Direction::Forward
                } else {
                    Direction::Backward
                };
                let mut want: Vec<Vec<Value>> = order
                    .iter()
                    .filter(|(entry, _)| in_bounds(entry, &lo, &hi))
                    .map(|(_, r)| r.clone())
                    .collect();
                if direction == Direction::Backward {
                    want.reverse();
                }
                for prefetch in [
                    PrefetchUnit::Fixed(0),
                    PrefetchUnit::Fixed(8),
                    PrefetchUnit::Adaptive,
                ] {
                    let found = index_rows(
                        table,
                        &name,
                        lower.clone(),
                        upper.clone(),
                        direction,
                        prefetch,
                    )
                    .unwrap();
                    assert_eq!(
                        found, want,
                        "{when}: {name} {lower:?}..{upper:?} {direction:?} at {prefetch:?}"
                    );
                }
            }
        }
    }
}

fn run(kind: Kind, test: &str) {
    let seed = test_seed(test);
    let mut rng = Rng::new(seed);
    let dir = test_dir();
    let mut storage = open(dir.path(), POOL_FRAMES);
    storage.create_database("db").unwrap();
    let table = storage.create_table("db", definition(kind)).unwrap();
    let mut h = Harness {
        kind,
        table,
        model: Model {
            kind,
            rows: BTreeMap::new(),
            next_row_id: 1,
        },
        failures: 0,
    };
    let rounds = 16;
    let steps_per_round = 300;
    let mut step = 0;
    for round in 0..rounds {
        for _ in 0..steps_per_round {
            h.step(&mut rng, step);
            step += 1;
        }
        h.verify(&mut rng, &format!("seed {seed}, round {round}"));
        if round == rounds / 2 {
            // Everything survives a reopen (and the row id continues after the largest).
            let name = h.table.def().name.clone();
            drop(h.table);
            drop(storage);
            storage = open(dir.path(), POOL_FRAMES);
            h.table = storage.table("db", &name).unwrap();
            h.model.next_row_id = h
                .model
                .rows
                .values()
                .map(|r| match r.pk[..] {
                    [Value::UInt(id)] => id + 1,
                    _ => 1,
                })
                .max()
                .unwrap_or(1);
            h.verify(&mut rng, &format!("seed {seed}, after reopen"));
        }
    }
    eprintln!(
        "{kind:?}: {} rows, {} duplicate-key failures, height {}",
        h.model.rows.len(),
        h.failures,
        h.table.clustered().check_invariants().unwrap().height
    );
    assert!(h.failures > 0, "seed {seed}: no write hit a duplicate key");
    assert!(
        h.model.rows.len() > 100,
        "seed {seed}: {} rows",
        h.model.rows.len()
    );
    drop(h);
    let _keep: &Storage = &storage;
}

#[test]
fn composite_primary_key_table_matches_the_model() {
    run(
        Kind::Composite,
        "composite_primary_key_table_matches_the_model",
    );
}

#[test]
fn hidden_row_id_table_matches_the_model() {
    run(Kind::Hidden, "hidden_row_id_table_matches_the_model");
}

/// A unique violation changes nothing, checked exactly: row count and the contents of
/// every index, on insert and on each kind of update.
#[test]
fn unique_violations_change_nothing() {
    let dir = test_dir();
    let storage = open(dir.path(), POOL_FRAMES);
    storage.create_database("db").unwrap();
    let table = storage
        .create_table("db", definition(Kind::Composite))
        .unwrap();
    let long = Value::Bytes(vec![b'q'; 3000]);
    for i in 0..200 {
        table
            .insert(vec![
                int(i),
                text("k"),
                int(i),
                text(WORDS[i as usize % WORDS.len()]),
                if i % 7 == 0 {
                    long.clone()
                } else {
                    Value::Null
                },
            ])
            .unwrap();
    }
    let snapshot = |table: &Table| {
        let mut all = vec![pk_scan(table, Direction::Forward)];
        for name in ["u_c", "by_d"] {
            all.push(
                index_rows(
                    table,
                    name,
                    Bound::Unbounded,
                    Bound::Unbounded,
                    Direction::Forward,
                    PrefetchUnit::Fixed(0),
                )
                .unwrap(),
            );
        }
        all
    };
    let before = snapshot(&table);
    let overflow_before = overflow_pages(table.clustered());
    assert_eq!(overflow_before, 29 * overflow_pages_for(3000));
    // Insert: duplicate primary key (ci: 'K ' = 'k'), duplicate unique value.
    assert_eq!(
        code(table.insert(vec![int(3), text("K "), int(999), Value::Null, Value::Null])),
        1062
    );
    assert_eq!(
        code(table.insert(vec![int(500), text("k"), int(3), Value::Null, long.clone()])),
        1062
    );
    // Update in place: the unique column to a taken value.
    let row7 = table.get(&[int(7), text("k")]).unwrap().unwrap();
    let mut bad = row7.clone();
    bad[2] = int(8);
    bad[3] = text("changed");
    bad[4] = long.clone();
    assert_eq!(code(table.update(&[int(7), text("k")], bad)), 1062);
    // Update moving the primary key onto another row's.
    let mut bad = row7.clone();
    bad[0] = int(9);
    assert_eq!(code(table.update(&[int(7), text("K")], bad)), 1062);
    // Update moving the primary key to a free one but the unique column to a taken value.
    let mut bad = row7.clone();
    bad[0] = int(1000);
    bad[2] = int(10);
    assert_eq!(code(table.update(&[int(7), text("k")], bad)), 1062);
    // A row with overflow pages moving its key and failing.
    let row14 = table.get(&[int(14), text("k")]).unwrap().unwrap();
    let mut bad = row14.clone();
    bad[0] = int(2000);
    bad[2] = int(15);
    assert_eq!(code(table.update(&[int(14), text("k")], bad)), 1062);
    assert_eq!(snapshot(&table), before);
    for index in table.indexes() {
        assert_eq!(index.tree.check_invariants().unwrap().entries, 200);
    }
    // Failed writes leak no overflow pages: what they allocated is freed again.
    assert_eq!(overflow_pages(table.clustered()), overflow_before);
    assert_eq!(table.clustered().check_invariants().unwrap().entries, 200);
    // NULLs never conflict in a unique index.
    for i in 0..3 {
        table
            .insert(vec![
                int(300 + i),
                text("k"),
                Value::Null,
                Value::Null,
                Value::Null,
            ])
            .unwrap();
    }
    let nulls = index_rows(
        &table,
        "u_c",
        Bound::Included(vec![Value::Null]),
        Bound::Included(vec![Value::Null]),
        Direction::Forward,
        PrefetchUnit::Fixed(8),
    )
    .unwrap();
    assert_eq!(nulls.len(), 3);
}
