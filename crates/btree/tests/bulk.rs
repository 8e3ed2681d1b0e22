//! Bulk build: exact contents, expected shape, input errors, and ordinary operations
//! on a bulk-built tree.

mod common;

use std::collections::BTreeMap;
use std::ops::Bound;

use common::{Fixture, PAGE_SIZE, key_u64, leaves};
use tarn_btree::node::{NODE_HEADER_BYTES, Node, entry_footprint};
use tarn_btree::{Direction, Tree};
use tarn_common::Result;
use tarn_common::rng::{Rng, test_seed};

type Entries = Vec<(Vec<u8>, Vec<u8>)>;

const USABLE: usize = PAGE_SIZE as usize - NODE_HEADER_BYTES;

/// The shape a bulk build must give, by the documented rule: each node is filled
/// left to right while the next entry keeps it at or below the fill factor, and each
/// level above holds one entry per node below except for each node's first child.
/// Returns the node count of each level, leaves first.
fn expected_levels(entries: &Entries, fill_pct: usize) -> Vec<usize> {
    let target = USABLE * fill_pct / 100;
    let mut levels = Vec::new();
    // (first key, footprint) of each item of the level being built.
    let mut items: Vec<(usize, usize)> = entries
        .iter()
        .map(|(k, v)| (k.len(), entry_footprint(k.len(), v.len())))
        .collect();
    let mut leaf = true;
    loop {
        let mut nodes: Vec<usize> = Vec::new(); // first key length of each node
        // Key lengths of each inner node's entries (its leftmost child has none).
        let mut node_keys: Vec<Vec<usize>> = Vec::new();
        let mut used = 0;
        for &(key_len, footprint) in &items {
            if nodes.is_empty() || used + footprint > target || USABLE - used < footprint {
                nodes.push(key_len);
                node_keys.push(Vec::new());
                used = 0;
                if !leaf {
                    continue; // the first child is the leftmost pointer
                }
            }
            used += footprint;
            node_keys.last_mut().expect("a node").push(key_len);
        }
        // An inner level never ends with a single-child node: the previous node's
        // last child moves over, and its key becomes the last node's first key.
        if !leaf && nodes.len() >= 2 && node_keys[nodes.len() - 1].is_empty() {
            let moved = node_keys[nodes.len() - 2]
                .pop()
                .expect("two entries at least");
            *nodes.last_mut().expect("two nodes") = moved;
        }
        levels.push(nodes.len());
        if nodes.len() <= 1 {
            return levels;
        }
        items = nodes
            .iter()
            .map(|&key_len| (key_len, entry_footprint(key_len, 4)))
            .collect();
        leaf = false;
    }
}

fn sorted_entries(rng: &mut Rng, n: usize, max_value: usize) -> Entries {
    let mut map = BTreeMap::new();
    while map.len() < n {
        let mut key = vec![0u8; 1 + rng.below(40) as usize];
        rng.fill(&mut key);
        if rng.percent(10) {
            key.resize(key.len() + rng.below(400) as usize, 0x5a);
        }
        let mut value = vec![0u8; rng.below(max_value as u64 + 1) as usize];
        rng.fill(&mut value);
        map.insert(key, value);
    }
    map.into_iter().collect()
}

fn load(tree: &Tree, entries: &Entries, fill: u32) -> Result<u64> {
    tree.bulk_load(entries.iter().cloned().map(Ok), fill)
}

/// Checks a fresh tree after a bulk load of `entries`: contents, shape, and pages.
fn check_loaded(tree: &Tree, entries: &Entries, fill: u32, context: &str) {
    let stats = tree
        .check_invariants()
        .unwrap_or_else(|e| panic!("{context}: {e}"));
    assert_eq!(stats.entries, entries.len() as u64, "{context}");
    let levels = expected_levels(entries, fill as usize);
    let height = if entries.is_empty() { 1 } else { levels.len() };
    assert_eq!(
        stats.height, height,
        "{context}: {stats:?}, levels {levels:?}"
    );
    if !entries.is_empty() {
        assert_eq!(stats.leaves, levels[0] as u64, "{context}: {stats:?}");
        // Every node was allocated once; the top one's contents moved to the root.
        let built: usize = levels.iter().sum();
        assert_eq!(
            stats.allocated_pages,
            2 + built as u64,
            "{context}: {stats:?}"
        );
        assert_eq!(stats.free_pages, 1, "{context}: {stats:?}");
    }
    // No inner node below the root has a single child (merges could never fix one).
    let id = |page_no| tarn_common::PageId::new(tree.file_id(), tarn_common::PageNo(page_no));
    let mut stack = vec![(tarn_btree::ROOT_PAGE_NO, true)];
    while let Some((page_no, is_root)) = stack.pop() {
        let guard = tree.pool().fetch_shared(id(page_no)).unwrap();
        let node = Node::new(&guard);
        if node.is_leaf() {
            continue;
        }
        assert!(
            is_root || node.child_count() >= 2,
            "{context}: inner node {page_no} has a single child"
        );
        stack.extend((0..node.child_count()).map(|c| (node.child_at(c), false)));
    }
    // Every leaf but the last is packed to the fill factor: the next entry did not fit.
    let target = USABLE * fill as usize / 100;
    let level = leaves(tree);
    for (i, (page_no, _)) in level.iter().enumerate() {
        let id = tarn_common::PageId::new(tree.file_id(), tarn_common::PageNo(*page_no));
        let guard = tree.pool().fetch_shared(id).unwrap();
        let node = Node::new(&guard);
        assert!(node.used_bytes() <= target, "{context}: leaf {i} overfull");
        if i + 1 < level.len() {
            let next = level[i + 1].1[0].clone();
            let value_len = entries
                .binary_search_by(|(k, _)| k.cmp(&next))
                .map(|at| entries[at].1.len())
                .unwrap();
            assert!(
                node.used_bytes() + entry_footprint(next.len(), value_len) > target,
                "{context}: leaf {i} could have held the next entry"
            );
        }
    }
    // Contents, forward and backward, and point lookups.
    let forward = tree
        .range(Bound::Unbounded, Bound::Unbounded, Direction::Forward)
        .collect_all()
        .unwrap();
    assert!(forward == *entries, "{context}: forward scan differs");
    let mut backward = tree
        .range(Bound::Unbounded, Bound::Unbounded, Direction::Backward)
        .collect_all()
        .unwrap();
    backward.reverse();
    assert!(backward == *entries, "{context}: backward scan differs");
    let step = (entries.len() / 500).max(1);
    for (key, value) in entries.iter().step_by(step) {
        assert_eq!(tree.get(key).unwrap().as_ref(), Some(value), "{context}");
    }
    assert_eq!(tree.get(b"\xff\xff\xff\xff-absent").unwrap(), None);
}

#[test]
fn bulk_load_gives_exactly_the_entries_and_the_expected_shape() {
    let mut rng = Rng::new(test_seed("btree_bulk_shapes"));
    let fixture = Fixture::new();
    let pool = fixture.pool(4096);
    // One page worth: fixed-size entries that exactly fill a leaf at 100%.
    let per_page = USABLE / entry_footprint(8, 50);
    let fixed = |n: usize| -> Entries {
        (0..n as u64)
            .map(|i| (key_u64(i), vec![i as u8; 50]))
            .collect()
    };
    let cases: Vec<(&str, Entries)> = vec![
        ("empty", Vec::new()),
        ("one", fixed(1)),
        ("a few", fixed(5)),
        ("one page", fixed(per_page)),
        ("one page and one", fixed(per_page + 1)),
        ("varied 3000", sorted_entries(&mut rng, 3000, 200)),
        ("varied 20000", sorted_entries(&mut rng, 20_000, 60)),
    ];
    let mut file = 100;
    for (name, entries) in &cases {
        for fill in [50, 90, 100] {
            let context = format!("{name} at {fill}%");
            file += 1;
            let tree = Tree::create(
                pool.clone(),
                tarn_common::FileId(file),
                std::sync::Arc::new(tarn_btree::NoRedo::default()),
                "test.bulk",
            )
            .unwrap();
            let loaded = load(&tree, entries, fill).unwrap();
            assert_eq!(loaded, entries.len() as u64, "{context}");
            check_loaded(&tree, entries, fill, &context);
        }
    }
    // The expectations themselves are not trivial.
    assert_eq!(expected_levels(&fixed(per_page), 100), vec![1]);
    assert_eq!(expected_levels(&fixed(per_page + 1), 100), vec![2, 1]);
    assert!(expected_levels(&cases[6].1, 50).len() >= 3);
}

#[test]
fn bulk_load_rejects_bad_input_and_non_empty_trees() {
    let fixture = Fixture::new();
    let pool = fixture.pool(1024);
    let tree = fixture.create(&pool);
    let good: Entries = (0..2000u64).map(|i| (key_u64(i), vec![1u8; 30])).collect();

    // A duplicate key, deep into the input.
    let mut dup = good.clone();
    dup.insert(1500, dup[1499].clone());
    let err = load(&tree, &dup, 90).unwrap_err();
    assert_eq!(err.mysql_code(), 1062, "{err}");
    // Out of order.
    let mut unsorted = good.clone();
    unsorted.swap(700, 701);
    let err = load(&tree, &unsorted, 90).unwrap_err();
    assert!(err.to_string().contains("not sorted"), "{err}");
    // An entry too large, and an input error passed through.
    let mut big = good.clone();
    big[10].1 = vec![0u8; 2000];
    assert_eq!(load(&tree, &big, 90).unwrap_err().mysql_code(), 1118);
    // A key too long is KeyTooLong, as for an insert; at the limit it is accepted
    // (checked by the model test's inserts), with a value too large RowTooLarge.
    let mut long_key = good.clone();
    long_key.push((vec![0xff; tree.max_key_bytes() + 1], vec![]));
    assert_eq!(load(&tree, &long_key, 90).unwrap_err().mysql_code(), 1071);
    assert_eq!(
        tree.insert(&long_key[2000].0, b"")
            .unwrap_err()
            .mysql_code(),
        1071
    );
    let mut long_entry = good.clone();
    long_entry.push((vec![0xff; tree.max_key_bytes()], vec![1; 5]));
    assert_eq!(load(&tree, &long_entry, 90).unwrap_err().mysql_code(), 1118);
    let failing = (0..10u64).map(|i| {
        if i == 5 {
            Err(tarn_common::Error::OutOfResources("input failed".into()))
        } else {
            Ok((key_u64(i), vec![]))
        }
    });
    assert_eq!(tree.bulk_load(failing, 90).unwrap_err().mysql_code(), 1041);
    // Fill factors out of range.
    for fill in [0, 49, 101] {
        assert_eq!(load(&tree, &good, fill).unwrap_err().mysql_code(), 1231);
    }
    // A failed load leaves the tree empty and usable, and gives back every page it
    // filled: all pages but the meta page and the root are free.
    let stats = tree.check_invariants().unwrap();
    assert_eq!((stats.entries, stats.height), (0, 1));
    assert!(stats.allocated_pages > 2, "{stats:?}");
    assert_eq!(stats.free_pages, stats.allocated_pages - 2, "{stats:?}");
    assert!(common::all_entries(&tree).is_empty());
    // A good load then reuses them before growing the file.
    let allocated = stats.allocated_pages;
    assert_eq!(load(&tree, &good, 90).unwrap(), 2000);
    let after = tree.check_invariants().unwrap();
    assert_eq!(after.entries, 2000);
    let levels: usize = expected_levels(&good, 90).iter().sum();
    assert_eq!(
        after.allocated_pages,
        allocated.max(2 + levels as u64),
        "{after:?}"
    );
    // Every page is the meta page, a node, or free: nothing leaked.
    assert_eq!(
        after.allocated_pages,
        1 + after.leaves + after.inner_nodes + after.free_pages,
        "{after:?}"
    );

    // A non-empty tree is refused and left as it was.
    assert!(load(&tree, &good, 90).is_err());
    let small_tree = Tree::create(
        pool.clone(),
        tarn_common::FileId(8),
        std::sync::Arc::new(tarn_btree::NoRedo::default()),
        "test.small",
    )
    .unwrap();
    small_tree.insert(b"k", b"v").unwrap();
    assert!(load(&small_tree, &good, 90).is_err());
    assert_eq!(
        common::all_entries(&small_tree),
        vec![(b"k".to_vec(), b"v".to_vec())]
    );
    let refused = tree.check_invariants().unwrap();
    assert_eq!(
        (refused.entries, refused.allocated_pages),
        (2000, after.allocated_pages)
    );
}

#[test]
fn a_bulk_loaded_tree_keeps_working_under_random_changes() {
    let mut rng = Rng::new(test_seed("btree_bulk_then_model"));
    let fixture = Fixture::new();
    let pool = fixture.pool(4096);
    for fill in [50, 100] {
        let file = tarn_common::FileId(20 + fill);
        let tree = Tree::create(
            pool.clone(),
            file,
            std::sync::Arc::new(tarn_btree::NoRedo::default()),
            "test.bulk",
        )
        .unwrap();
        let entries = sorted_entries(&mut rng, 4000, 120);
        load(&tree, &entries, fill).unwrap();
        let mut model: BTreeMap<Vec<u8>, Vec<u8>> = entries.into_iter().collect();
        let mut keys: Vec<Vec<u8>> = model.keys().cloned().collect();
        for step in 0..4000 {
            let op = rng.below(100);
            if op < 45 {
                let mut key = vec![0u8; 1 + rng.below(60) as usize];
                rng.fill(&mut key);
                let mut value = vec![0u8; rng.below(150) as usize];
                rng.fill(&mut value);
                let result = tree.insert(&key, &value);
                if let std::collections::btree_map::Entry::Vacant(slot) = model.entry(key.clone()) {
                    result.unwrap_or_else(|e| panic!("fill {fill} step {step}: {e}"));
                    slot.insert(value);
                    keys.push(key);
                } else {
                    assert_eq!(result.unwrap_err().mysql_code(), 1062);
                }
            } else if op < 90 && !keys.is_empty() {
                let key = keys.swap_remove(rng.below(keys.len() as u64) as usize);
                assert_eq!(
                    tree.delete(&key).unwrap(),
                    model.remove(&key),
                    "step {step}"
                );
            } else if !keys.is_empty() {
                let key = keys[rng.below(keys.len() as u64) as usize].clone();
                let mut value = vec![0u8; rng.below(300) as usize];
                rng.fill(&mut value);
                assert_eq!(
                    tree.update(&key, &value).unwrap(),
                    model.insert(key, value),
                    "step {step}"
                );
            }
            if step % 250 == 0 {
                let stats = tree
                    .check_invariants()
                    .unwrap_or_else(|e| panic!("fill {fill} step {step}: {e}"));
                assert_eq!(stats.entries, model.len() as u64);
            }
        }
        tree.check_invariants().unwrap();
        let expected: Entries = model.into_iter().collect();
        assert!(common::all_entries(&tree) == expected, "fill {fill}");
    }
}

/// Bulk build can end a level with a node holding a single child (only the leftmost
/// pointer). Deleting everything under such a node must still keep the tree valid.
#[test]
fn a_bulk_built_level_ending_in_a_single_child_survives_deletes() {
    let fixture = Fixture::new();
    let pool = fixture.pool(2048);
    // Find a size whose last level-1 node has one child.
    let make = |n: u64| -> Entries { (0..n).map(|i| (key_u64(i), vec![3u8; 100])).collect() };
    let per_leaf = (USABLE / 2) / entry_footprint(8, 100); // at 50%
    let per_inner = (USABLE / 2) / entry_footprint(8, 4) + 1;
    let n = (per_leaf * per_inner + 1) as u64;
    let entries = make(n);
    assert_eq!(expected_levels(&entries, 50), vec![per_inner + 1, 2, 1]);
    let tree = fixture.create(&pool);
    load(&tree, &entries, 50).unwrap();
    check_loaded(&tree, &entries, 50, "single-child level");
    // The last leaf (alone under the last level-1 node) holds a single entry: delete
    // it, then more from the end.
    let mut model: BTreeMap<Vec<u8>, Vec<u8>> = entries.into_iter().collect();
    for i in (n - 40..n).rev() {
        tree.delete(&key_u64(i)).unwrap().unwrap();
        model.remove(&key_u64(i));
        let stats = tree
            .check_invariants()
            .unwrap_or_else(|e| panic!("after deleting key {i}: {e}"));
        assert_eq!(stats.entries, model.len() as u64);
    }
    let expected: Entries = model.into_iter().collect();
    assert!(common::all_entries(&tree) == expected);
}

/// A bulk build failing above the leaf level (here: the free list breaks when the first
/// inner node is allocated) gives back every page it took, leaves included, and leaves
/// the tree empty.
#[test]
fn a_bulk_build_failing_above_the_leaves_gives_back_every_page() {
    let fixture = Fixture::new();
    let path = fixture.file_path(common::FILE);
    let page = tarn_btree::overflow_capacity_bytes(PAGE_SIZE as usize);
    {
        let pool = fixture.pool(256);
        let tree = fixture.create(&pool);
        let first = tree.write_overflow(&vec![1u8; 10 * page]).unwrap();
        tree.free_overflow(first).unwrap();
        pool.flush_all().unwrap();
    }
    // Three leaves at 100%; the fourth page taken is the first inner node's.
    let per_leaf = USABLE / entry_footprint(8, 50);
    let entries: Entries = (0..2 * per_leaf as u64 + 1)
        .map(|i| (key_u64(i), vec![2u8; 50]))
        .collect();
    assert_eq!(expected_levels(&entries, 100), vec![3, 1]);
    let list = common::free_list(&path);
    assert_eq!(list.len(), 10);
    common::edit_page(&path, list[3], |p| {
        common::wr32(p, common::FREE_NEXT_AT, 100_000)
    });
    let pool = fixture.pool(256);
    let tree = fixture.open(&pool);
    let before = tree.meta().unwrap();
    let err = load(&tree, &entries, 100).unwrap_err();
    assert_eq!(err.mysql_code(), 3000, "{err}");
    assert!(
        err.to_string().contains(&format!("page 7:{} ", list[3])),
        "{err}"
    );
    let after = tree.meta().unwrap();
    assert_eq!(
        (after.next, after.free_count),
        (before.next, before.free_count),
        "the failed build kept pages"
    );
    assert!(common::all_entries(&tree).is_empty());
    assert_eq!(leaves(&tree).len(), 1);
}
