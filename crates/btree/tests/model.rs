//! Model-based tests: random operations on a tree checked against a `BTreeMap`, with
//! the tree's invariants checked after every step.

mod common;

use std::collections::BTreeMap;
use std::ops::Bound;

use common::Fixture;
use tarn_btree::{Direction, Tree};
use tarn_common::rng::{Rng, test_seed};

/// A key of 1..=max_len bytes from a small alphabet (so prefixes and equal keys occur).
fn random_key(rng: &mut Rng, max_len: usize) -> Vec<u8> {
    let len = 1 + rng.below(max_len as u64) as usize;
    let mut key: Vec<u8> = (0..len).map(|_| b'a' + rng.below(4) as u8).collect();
    // Long keys make tall trees with few entries; most keys stay short.
    if rng.below(2) == 0 {
        key.resize(len + rng.below(850) as usize, b'z');
    }
    key
}

fn random_value(rng: &mut Rng) -> Vec<u8> {
    let len = rng.below(120) as usize;
    (0..len).map(|_| rng.below(256) as u8).collect()
}

fn random_bound(rng: &mut Rng) -> Bound<Vec<u8>> {
    match rng.below(3) {
        0 => Bound::Unbounded,
        1 => Bound::Included(random_key(rng, 6)),
        _ => Bound::Excluded(random_key(rng, 6)),
    }
}

fn model_range(
    model: &BTreeMap<Vec<u8>, Vec<u8>>,
    lower: &Bound<Vec<u8>>,
    upper: &Bound<Vec<u8>>,
    direction: Direction,
) -> Vec<(Vec<u8>, Vec<u8>)> {
    let in_range = |k: &Vec<u8>| {
        let lo = match lower {
            Bound::Unbounded => true,
            Bound::Included(b) => k >= b,
            Bound::Excluded(b) => k > b,
        };
        let hi = match upper {
            Bound::Unbounded => true,
            Bound::Included(b) => k <= b,
            Bound::Excluded(b) => k < b,
        };
        lo && hi
    };
    let mut out: Vec<_> = model
        .iter()
        .filter(|(k, _)| in_range(k))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    if direction == Direction::Backward {
        out.reverse();
    }
    out
}

fn check(tree: &Tree, model: &BTreeMap<Vec<u8>, Vec<u8>>, step: usize) -> tarn_btree::TreeStats {
    let stats = tree
        .check_invariants()
        .unwrap_or_else(|e| panic!("step {step}: {e}"));
    assert_eq!(
        stats.entries,
        model.len() as u64,
        "step {step}: entry count"
    );
    stats
}

#[test]
fn random_operations_match_a_btreemap_through_splits_and_merges() {
    let mut rng = Rng::new(test_seed("btree_model"));
    let fixture = Fixture::new();
    // The tree fits, so checking it after every step reads no disk; the bloat test
    // below runs with a pool smaller than its tree.
    let pool = fixture.pool(2048);
    let tree = fixture.create(&pool);
    let mut model: BTreeMap<Vec<u8>, Vec<u8>> = BTreeMap::new();
    let mut max_height = 0;
    let mut merges_seen = false;
    let steps = 4000;
    for step in 0..steps {
        // Grow for the first 60% of the run, then shrink.
        let growing = step < steps * 6 / 10;
        let op = rng.below(100);
        let insert_pct = if growing { 70 } else { 15 };
        if op < insert_pct {
            let key = random_key(&mut rng, 12);
            let value = random_value(&mut rng);
            let result = tree.insert(&key, &value);
            match model.entry(key) {
                std::collections::btree_map::Entry::Occupied(_) => {
                    let err = result.expect_err("duplicate insert must fail");
                    assert_eq!(err.mysql_code(), 1062, "step {step}");
                }
                std::collections::btree_map::Entry::Vacant(slot) => {
                    result.unwrap_or_else(|e| panic!("step {step}: {e}"));
                    slot.insert(value);
                }
            }
        } else if op < insert_pct + 10 {
            // Update an existing key, growing or shrinking its value.
            let Some(key) = pick(&mut rng, &model) else {
                continue;
            };
            let value = random_value(&mut rng);
            let old = tree.update(&key, &value).unwrap();
            assert_eq!(old.as_ref(), model.get(&key), "step {step}");
            model.insert(key, value);
        } else if op < insert_pct + 15 {
            let key = random_key(&mut rng, 12);
            let value = random_value(&mut rng);
            let old = tree.upsert(&key, &value).unwrap();
            assert_eq!(old, model.insert(key, value), "step {step}");
        } else if op < 95 {
            let key = if rng.below(4) == 0 {
                random_key(&mut rng, 12)
            } else {
                match pick(&mut rng, &model) {
                    Some(key) => key,
                    None => continue,
                }
            };
            let old = tree.delete(&key).unwrap();
            assert_eq!(old, model.remove(&key), "step {step}");
            merges_seen |= !growing;
        } else {
            let lower = random_bound(&mut rng);
            let upper = random_bound(&mut rng);
            let direction = if rng.below(2) == 0 {
                Direction::Forward
            } else {
                Direction::Backward
            };
            let got = tree
                .range(lower.clone(), upper.clone(), direction)
                .collect_all()
                .unwrap();
            assert_eq!(
                got,
                model_range(&model, &lower, &upper, direction),
                "step {step}"
            );
        }
        let key = random_key(&mut rng, 12);
        assert_eq!(
            tree.get(&key).unwrap().as_ref(),
            model.get(&key),
            "step {step}"
        );
        let stats = check(&tree, &model, step);
        max_height = max_height.max(stats.height);
    }
    assert!(max_height >= 4, "the tree only reached height {max_height}");
    assert!(merges_seen);
    // Delete everything: the tree shrinks back to a single empty leaf and every other
    // page is on the free list.
    let keys: Vec<_> = model.keys().cloned().collect();
    for (i, key) in keys.iter().enumerate() {
        assert!(tree.delete(key).unwrap().is_some());
        model.remove(key);
        if i % 50 == 0 {
            check(&tree, &model, steps + i);
        }
    }
    let stats = check(&tree, &model, usize::MAX);
    assert_eq!((stats.height, stats.leaves), (1, 1));
    assert_eq!(stats.free_pages, stats.allocated_pages - 2, "{stats:?}");
}

fn pick(rng: &mut Rng, model: &BTreeMap<Vec<u8>, Vec<u8>>) -> Option<Vec<u8>> {
    if model.is_empty() {
        return None;
    }
    let index = rng.below(model.len() as u64) as usize;
    model.keys().nth(index).cloned()
}

#[test]
fn deletes_do_not_leave_the_tree_bloated_and_freed_pages_are_reused() {
    let mut rng = Rng::new(test_seed("btree_bloat"));
    let fixture = Fixture::new();
    // Smaller than the tree: pages are evicted, written back and read again.
    let pool = fixture.pool(160);
    let tree = fixture.create(&pool);
    let mut model = BTreeMap::new();
    for i in 0..20_000u32 {
        let key = (i.wrapping_mul(2_654_435_761)).to_be_bytes().to_vec();
        let value = vec![7u8; 40];
        tree.insert(&key, &value).unwrap();
        model.insert(key, value);
    }
    let full = check(&tree, &model, 0);
    // Delete 90% at random.
    let keys: Vec<_> = model.keys().cloned().collect();
    for key in keys {
        if rng.below(10) != 0 {
            tree.delete(&key).unwrap();
            model.remove(&key);
        }
    }
    let after = check(&tree, &model, 1);
    let usable = u64::from(common::PAGE_SIZE) - 64;
    let average_fill = after.leaf_used_bytes / after.leaves;
    // Merges keep leaves at least a quarter full on average, so 10% of the entries
    // take at most about 40% of the leaves.
    assert!(
        average_fill * 4 >= usable,
        "average leaf fill {average_fill} of {usable} bytes after deletes ({after:?})"
    );
    assert!(after.leaves * 10 < full.leaves * 4, "{full:?} -> {after:?}");
    assert!(after.free_pages > 0);
    // Growing again takes pages from the free list before the file grows.
    let allocated = after.allocated_pages;
    for i in 0..after.free_pages as u32 * 20 {
        let key = [b'n', (i >> 16) as u8, (i >> 8) as u8, i as u8];
        tree.insert(&key, &[1u8; 40]).unwrap();
        model.insert(key.to_vec(), vec![1u8; 40]);
    }
    let regrown = check(&tree, &model, 2);
    assert_eq!(regrown.allocated_pages, allocated, "{regrown:?}");
}

/// Ascending inserts, at the end of the key space or in a run inside it, split at the
/// insert point (`tree::split_for_insert`): the leaves they leave behind are full, not
/// half empty, and every read still finds every entry.
#[test]
fn ascending_inserts_leave_full_leaves() {
    let fixture = Fixture::new();
    let pool = fixture.pool(2048);
    let tree = fixture.create(&pool);
    let mut model = BTreeMap::new();
    let usable = u64::from(common::PAGE_SIZE) - 64;
    let fill =
        |stats: &tarn_btree::TreeStats| stats.leaf_used_bytes * 100 / (stats.leaves * usable);
    // An AUTO_INCREMENT-like load: every key past the last.
    for i in 0..20_000u32 {
        let key = [b'b', (i >> 16) as u8, (i >> 8) as u8, i as u8];
        tree.insert(&key, &[3u8; 40]).unwrap();
        model.insert(key.to_vec(), vec![3u8; 40]);
    }
    let loaded = check(&tree, &model, 0);
    assert!(fill(&loaded) >= 90, "ascending load: {loaded:?}");
    // A run of ascending keys between existing ones ('a' < run < 'b'), then one
    // past everything: the nodes the run passes through fill up too.
    for i in 0..20_000u32 {
        let key = [b'a', (i >> 16) as u8, (i >> 8) as u8, i as u8, 0];
        tree.insert(&key, &[4u8; 40]).unwrap();
        model.insert(key.to_vec(), vec![4u8; 40]);
    }
    let both = check(&tree, &model, 1);
    assert!(fill(&both) >= 90, "ascending run inside: {both:?}");
    let all: Vec<_> = tree
        .range(
            std::ops::Bound::Unbounded,
            std::ops::Bound::Unbounded,
            Direction::Forward,
        )
        .collect_all()
        .unwrap();
    let expected: Vec<_> = model.into_iter().collect();
    assert!(all == expected, "a scan returns every entry in order");
}
