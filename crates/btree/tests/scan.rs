//! Partitioned scans (S1) and level-1 lookups (S2): partitions cover the key space
//! in order, range scans give exactly the model's entries with or without read-ahead,
//! read-ahead reads ahead on a cold pool, and leaf lookups name leaves that hold
//! their keys.

mod common;

use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::Arc;

use common::{Fixture, in_bounds};
use tarn_btree::node::Node;
use tarn_btree::{LeafRange, NoRedo, Tree};
use tarn_buffer::BufferPool;
use tarn_common::rng::{Rng, test_seed};
use tarn_common::{FileId, PageId, PageNo};

type Model = BTreeMap<Vec<u8>, Vec<u8>>;
type Rows = Vec<(Vec<u8>, Vec<u8>)>;

fn random_key(rng: &mut Rng) -> Vec<u8> {
    let mut key = vec![0u8; 1 + rng.below(12) as usize];
    rng.fill(&mut key);
    if rng.percent(15) {
        key.resize(key.len() + rng.below(300) as usize, 0x77);
    }
    key
}

fn random_value(rng: &mut Rng) -> Vec<u8> {
    let mut value = vec![0u8; rng.below(100) as usize];
    rng.fill(&mut value);
    value
}

fn new_tree(pool: &Arc<BufferPool>, file: u32) -> Tree {
    Tree::create(
        pool.clone(),
        FileId(file),
        Arc::new(NoRedo::default()),
        "test.scan",
    )
    .unwrap()
}

/// The trees under test: (name, file, model).
fn build_trees(pool: &Arc<BufferPool>, rng: &mut Rng) -> Vec<(&'static str, Tree, Model)> {
    let mut out = Vec::new();
    out.push(("empty", new_tree(pool, 30), Model::new()));

    let tree = new_tree(pool, 31);
    let mut model = Model::new();
    for _ in 0..12 {
        let (k, v) = (random_key(rng), random_value(rng));
        if tree.insert(&k, &v).is_ok() {
            model.insert(k, v);
        }
    }
    out.push(("one leaf", tree, model));

    let tree = new_tree(pool, 32);
    let mut model = Model::new();
    while model.len() < 30_000 {
        model.insert(random_key(rng), random_value(rng));
    }
    tree.bulk_load(model.iter().map(|(k, v)| Ok((k.clone(), v.clone()))), 90)
        .unwrap();
    out.push(("bulk-loaded", tree, model));

    let tree = new_tree(pool, 33);
    let mut model = Model::new();
    for _ in 0..8000 {
        let (k, v) = (random_key(rng), random_value(rng));
        if tree.insert(&k, &v).is_ok() {
            model.insert(k, v);
        }
    }
    // Some deletes, so that merges shaped the tree too.
    let keys: Vec<Vec<u8>> = model.keys().cloned().collect();
    for key in keys.iter().step_by(3) {
        tree.delete(key).unwrap().unwrap();
        model.remove(key);
    }
    out.push(("insert-built", tree, model));

    for (name, tree, model) in &out {
        let stats = tree.check_invariants().unwrap();
        assert_eq!(stats.entries, model.len() as u64, "{name}");
        match *name {
            "empty" | "one leaf" => assert_eq!(stats.height, 1, "{name}"),
            _ => assert!(stats.height >= 3, "{name}: {stats:?}"),
        }
    }
    out
}

fn scan(tree: &Tree, range: &LeafRange, readahead: usize) -> (Rows, u64) {
    let mut out = Vec::new();
    let stats = tree
        .scan_range(range, readahead, |k, v| {
            out.push((k.to_vec(), v.to_vec()));
            Ok(true)
        })
        .unwrap();
    assert_eq!(stats.entries, out.len() as u64);
    (out, stats.prefetched)
}

fn model_range(
    model: &Model,
    lower: &Bound<Vec<u8>>,
    upper: &Bound<Vec<u8>>,
) -> Vec<(Vec<u8>, Vec<u8>)> {
    model
        .iter()
        .filter(|(k, _)| in_bounds(k, lower, upper))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

fn check_partitions(name: &str, tree: &Tree, model: &Model) {
    let full: Vec<(Vec<u8>, Vec<u8>)> = model.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    let stats = tree.check_invariants().unwrap();
    for parts in 1..=9 {
        let ranges = tree.partition(parts).unwrap();
        let ctx = format!("{name}, {parts} parts");
        assert!(
            !ranges.is_empty() && ranges.len() <= parts,
            "{ctx}: {}",
            ranges.len()
        );
        if stats.leaves as usize >= parts {
            assert_eq!(ranges.len(), parts, "{ctx}: enough leaves for every part");
        }
        assert_eq!(ranges[0].lower, Bound::Unbounded, "{ctx}");
        assert_eq!(ranges.last().unwrap().upper, Bound::Unbounded, "{ctx}");
        for pair in ranges.windows(2) {
            match (&pair[0].upper, &pair[1].lower) {
                (Bound::Excluded(a), Bound::Included(b)) => assert_eq!(a, b, "{ctx}"),
                other => panic!("{ctx}: ranges are not adjacent: {other:?}"),
            }
        }
        for window in ranges.windows(2) {
            if let (Bound::Included(a), Bound::Included(b)) = (&window[0].lower, &window[1].lower) {
                assert!(a < b, "{ctx}: ranges out of order");
            }
        }
        for readahead in [0, 8, 64] {
            let mut all = Vec::new();
            for range in &ranges {
                let (part, _) = scan(tree, range, readahead);
                assert!(
                    part.iter()
                        .all(|(k, _)| in_bounds(k, &range.lower, &range.upper)),
                    "{ctx}: entry outside its range"
                );
                all.extend(part);
            }
            assert!(
                all == full,
                "{ctx}, read-ahead {readahead}: concatenation differs from the full scan"
            );
        }
    }
}

#[test]
fn partitions_cover_the_key_space_and_scans_match_the_model() {
    let mut rng = Rng::new(test_seed("btree_scan_partitions"));
    let fixture = Fixture::new();
    let pool = fixture.pool(16_384);
    for (name, tree, model) in build_trees(&pool, &mut rng) {
        check_partitions(name, &tree, &model);

        // Arbitrary bounds, not aligned with leaves.
        let bound = |rng: &mut Rng| -> Bound<Vec<u8>> {
            let key = if !model.is_empty() && rng.percent(30) {
                model
                    .keys()
                    .nth(rng.below(model.len() as u64) as usize)
                    .unwrap()
                    .clone()
            } else {
                random_key(rng)
            };
            match rng.below(5) {
                0 => Bound::Unbounded,
                1 | 2 => Bound::Included(key),
                _ => Bound::Excluded(key),
            }
        };
        for i in 0..60 {
            let range = LeafRange {
                lower: bound(&mut rng),
                upper: bound(&mut rng),
            };
            let readahead = [0, 8, 64][i % 3];
            let (got, _) = scan(&tree, &range, readahead);
            let expected = model_range(&model, &range.lower, &range.upper);
            assert!(
                got == expected,
                "{name}: {range:?} with read-ahead {readahead}"
            );
            // A cursor that buffers a few entries at a time reads the same.
            let limit = [1, 2, 7][i % 3];
            let direction = if i % 2 == 0 {
                tarn_btree::Direction::Forward
            } else {
                tarn_btree::Direction::Backward
            };
            let mut cursored = tree
                .range(range.lower.clone(), range.upper.clone(), direction)
                .buffer_at_most(limit)
                .collect_all()
                .unwrap();
            if direction == tarn_btree::Direction::Backward {
                cursored.reverse();
            }
            assert!(
                cursored == expected,
                "{name}: {range:?} through a cursor buffering {limit} ({direction:?})"
            );
        }

        // Stopping early stops.
        if model.len() > 3 {
            for stop_after in [1, 2, model.len() / 2, model.len() - 1] {
                let mut visited = 0;
                let whole = LeafRange {
                    lower: Bound::Unbounded,
                    upper: Bound::Unbounded,
                };
                let stats = tree
                    .scan_range(&whole, 8, |_, _| {
                        visited += 1;
                        Ok(visited < stop_after)
                    })
                    .unwrap();
                assert_eq!(visited, stop_after, "{name}");
                assert_eq!(stats.entries, stop_after as u64, "{name}");
            }
            // An error from the visitor stops the scan and is returned.
            let mut visited = 0;
            let err = tree
                .scan_range(
                    &LeafRange {
                        lower: Bound::Unbounded,
                        upper: Bound::Unbounded,
                    },
                    0,
                    |_, _| {
                        visited += 1;
                        Err(tarn_common::Error::OutOfResources("visitor".into()))
                    },
                )
                .unwrap_err();
            assert_eq!((visited, err.mysql_code()), (1, 1041), "{name}");
        }
    }
}

#[test]
fn read_ahead_prefetches_on_a_cold_pool_with_identical_results() {
    let mut rng = Rng::new(test_seed("btree_scan_cold"));
    let fixture = Fixture::new();
    let model = {
        let pool = fixture.pool(8192);
        let tree = fixture.create(&pool);
        let mut model = Model::new();
        while model.len() < 20_000 {
            model.insert(random_key(&mut rng), random_value(&mut rng));
        }
        tree.bulk_load(model.iter().map(|(k, v)| Ok((k.clone(), v.clone()))), 100)
            .unwrap();
        pool.flush_all().unwrap();
        model
    };
    let full: Vec<(Vec<u8>, Vec<u8>)> = model.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    for readahead in [0, 8, 64] {
        // A fresh, small pool: nothing cached.
        let pool = fixture.pool(160);
        let tree = fixture.open(&pool);
        let ranges = tree.partition(4).unwrap();
        let mut all = Vec::new();
        let mut prefetched = 0;
        for range in &ranges {
            let (part, p) = scan(&tree, range, readahead);
            all.extend(part);
            prefetched += p;
        }
        assert!(all == full, "read-ahead {readahead}: results differ");
        if readahead == 0 {
            assert_eq!(prefetched, 0);
        } else {
            assert!(prefetched > 0, "read-ahead {readahead} started no reads");
        }
        assert!(pool.stats().page_reads > 0);
        pool.check_invariants().unwrap();
    }
}

/// Checks that every key's page is a leaf holding it.
fn check_leaf_pages(name: &str, tree: &Tree, keys: &[&[u8]]) {
    let pages = tree.leaf_pages_for(keys).unwrap();
    assert_eq!(pages.len(), keys.len(), "{name}");
    for (key, page_no) in keys.iter().zip(&pages) {
        let guard = tree
            .pool()
            .fetch_shared(PageId::new(tree.file_id(), PageNo(*page_no)))
            .unwrap();
        let node = Node::new(&guard);
        assert!(node.is_leaf(), "{name}: page {page_no} is no leaf");
        assert!(
            node.search(key).is_ok(),
            "{name}: leaf {page_no} does not hold key {key:?}"
        );
    }
}

#[test]
fn level_one_lookups_name_the_leaves_holding_the_keys() {
    let mut rng = Rng::new(test_seed("btree_leaf_pages"));
    let fixture = Fixture::new();
    let pool = fixture.pool(16_384);
    for (name, tree, model) in build_trees(&pool, &mut rng) {
        let all: Vec<&[u8]> = model.keys().map(|k| k.as_slice()).collect();
        check_leaf_pages(name, &tree, &all);
        // Sparse sorted samples (each a new descent or a cached level-1 node).
        for _ in 0..20 {
            let mut sample: Vec<&[u8]> = all.iter().copied().filter(|_| rng.percent(2)).collect();
            sample.dedup();
            check_leaf_pages(name, &tree, &sample);
        }
        if name == "empty" {
            assert_eq!(
                tree.leaf_pages_for(&[b"x"]).unwrap(),
                vec![tarn_btree::ROOT_PAGE_NO]
            );
        }
        // Absent keys get the leaf where they would go: between its neighbours.
        let level = common::leaves(&tree);
        for _ in 0..200 {
            let key = random_key(&mut rng);
            let page = tree.leaf_pages_for(&[&key]).unwrap()[0];
            let at = level.iter().position(|(p, _)| *p == page).unwrap();
            if let Some((_, keys)) = level.get(at + 1) {
                assert!(key < keys[0], "{name}: key belongs further right");
            }
            if at > 0 {
                assert!(
                    &key > level[at - 1].1.last().unwrap(),
                    "{name}: key belongs further left"
                );
            }
        }
    }
}

/// A scan resumed after the last key it visited (as the catalog's parallel scan does
/// after a full channel) submits the leaves ahead again, but counts as prefetched only
/// the reads the pool started: never more than there are leaves, however often it
/// resumes, and exactly the pool's own count.
#[test]
fn a_resumed_scan_counts_each_prefetched_leaf_once() {
    let mut rng = Rng::new(test_seed("btree_scan_resume"));
    let fixture = Fixture::new();
    let (model, leaves) = {
        let pool = fixture.pool(4096);
        let tree = fixture.create(&pool);
        let mut model = Model::new();
        while model.len() < 10_000 {
            model.insert(random_key(&mut rng), random_value(&mut rng));
        }
        tree.bulk_load(model.iter().map(|(k, v)| Ok((k.clone(), v.clone()))), 100)
            .unwrap();
        pool.flush_all().unwrap();
        (model, common::leaves(&tree).len() as u64)
    };
    let full: Rows = model.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    // A fresh pool large enough for every page: nothing cached, nothing evicted.
    let pool = fixture.pool(4096);
    let tree = fixture.open(&pool);
    let reads_before = pool.stats().prefetch_issued;
    let mut rows: Rows = Vec::new();
    let mut prefetched = 0;
    let mut resumes = 0;
    let mut lower = Bound::Unbounded;
    loop {
        let range = LeafRange {
            lower: lower.clone(),
            upper: Bound::Unbounded,
        };
        // Stop after 50 rows, as a worker does when its channel is full.
        let mut taken = 0;
        let stats = tree
            .scan_range(&range, 32, |k, v| {
                rows.push((k.to_vec(), v.to_vec()));
                taken += 1;
                Ok(taken < 50)
            })
            .unwrap();
        prefetched += stats.prefetched;
        if taken < 50 {
            break;
        }
        resumes += 1;
        lower = Bound::Excluded(rows.last().unwrap().0.clone());
    }
    assert!(rows == full, "the resumed scan's rows differ");
    assert!(
        resumes as u64 > 2 * leaves / 3,
        "{resumes} resumes of {leaves} leaves"
    );
    assert!(prefetched > 0);
    assert!(
        prefetched <= leaves,
        "{prefetched} prefetched of {leaves} leaves"
    );
    assert_eq!(prefetched, pool.stats().prefetch_issued - reads_before);
}
