//! Cursors hold no latch between calls, so the tree may change under a paused cursor.
//! These tests pause a cursor exactly at a leaf boundary, reshape the tree so that the
//! leaf the cursor will move to is freed by a merge and reused by a split (the page
//! number stays, the contents move), and check that the cursor still returns every
//! entry that existed throughout.

mod common;

use std::collections::BTreeSet;
use std::ops::Bound;

use common::{Fixture, key_u64, leaves};
use tarn_btree::{Direction, Tree};

/// Leaves of 17 entries of 114 bytes (8-byte key, 100-byte value) at fill factor 50.
const PER_LEAF: u64 = 17;
const LEAVES: u64 = 6;

fn key(i: u64) -> Vec<u8> {
    key_u64(i * 1000)
}

fn value(i: u64) -> Vec<u8> {
    vec![(i % 251) as u8; 100]
}

fn build(tree: &Tree) {
    let n = PER_LEAF * LEAVES;
    tree.bulk_load((0..n).map(|i| Ok((key(i), value(i)))), 50)
        .unwrap();
    let level = leaves(tree);
    assert_eq!(level.len() as u64, LEAVES, "unexpected leaf layout");
    for (_, keys) in &level {
        assert_eq!(keys.len() as u64, PER_LEAF, "unexpected leaf layout");
    }
}

fn present(tree: &Tree) -> BTreeSet<Vec<u8>> {
    common::all_entries(tree)
        .into_iter()
        .map(|(k, _)| k)
        .collect()
}

/// Forward: the cursor has returned all of leaf A. A then absorbs its right sibling B
/// (B's page is freed), and A splits again, its right half going to the reused page
/// B, so A still links to B. The entries of the old B that stayed in A are ahead of
/// the cursor and must not be skipped.
#[test]
fn forward_cursor_survives_merge_and_split_reusing_the_next_leaf() {
    let fixture = Fixture::new();
    let pool = fixture.pool(512);
    let tree = fixture.create(&pool);
    build(&tree);
    let level = leaves(&tree);
    let (a_no, b_no) = (level[0].0, level[1].0);

    let mut cursor = tree.range(Bound::Unbounded, Bound::Unbounded, Direction::Forward);
    let mut seen = Vec::new();
    for _ in 0..PER_LEAF {
        seen.push(cursor.next_entry().unwrap().unwrap().0.to_vec());
    }
    assert_eq!(seen.last(), Some(&key(PER_LEAF - 1)));

    // A becomes underfull and merges with B: A absorbs B, B's page is freed.
    for i in 0..10 {
        tree.delete(&key(i)).unwrap().unwrap();
    }
    let level = leaves(&tree);
    assert_eq!(level[0].0, a_no);
    assert!(
        level.iter().all(|(p, _)| *p != b_no),
        "B was not merged away: {:?}",
        level.iter().map(|(p, k)| (p, k.len())).collect::<Vec<_>>()
    );
    // Fill A with keys between the old B keys until it splits into the reused page.
    let mut extra = 0;
    while leaves(&tree)[1].0 != b_no {
        let i = PER_LEAF + extra % PER_LEAF;
        let k = key_u64(i * 1000 + 1 + extra / PER_LEAF);
        tree.insert(&k, &value(i)).unwrap();
        extra += 1;
        assert!(extra < 100, "A never split into B's old page");
    }
    let level = leaves(&tree);
    assert_eq!(level[0].0, a_no);
    assert!(
        level[0].1.last().unwrap() > &key(PER_LEAF - 1),
        "the split left no old-B keys in A; the scenario needs some"
    );
    tree.check_invariants().unwrap();

    // Everything that existed throughout and lies ahead of the cursor.
    let expected: BTreeSet<Vec<u8>> = (PER_LEAF..PER_LEAF * LEAVES).map(key).collect();
    let mut rest = Vec::new();
    while let Some((k, _)) = cursor.next_entry().unwrap() {
        rest.push(k.to_vec());
    }
    assert!(rest.windows(2).all(|w| w[0] < w[1]), "out of order");
    let rest_set: BTreeSet<Vec<u8>> = rest.iter().cloned().collect();
    let missing: Vec<_> = expected.difference(&rest_set).collect();
    assert!(
        missing.is_empty(),
        "forward cursor skipped {} entries present throughout, e.g. {:?}",
        missing.len(),
        missing.first()
    );
    assert!(rest_set.is_subset(&present(&tree)));
}

/// Backward: the cursor has returned all of leaf B and will move to A. A absorbs B
/// (B's page is freed), then A splits into the reused page B, so A links to B again.
/// The old A entries now in B are ahead of the cursor and must not be skipped.
#[test]
fn backward_cursor_survives_merge_and_split_reusing_the_leaf_it_left() {
    let fixture = Fixture::new();
    let pool = fixture.pool(512);
    let tree = fixture.create(&pool);
    build(&tree);
    let level = leaves(&tree);
    let (a_no, b_no) = (level[0].0, level[1].0);

    // Start at B's last key and return all of B.
    let mut cursor = tree.range(
        Bound::Unbounded,
        Bound::Included(key(2 * PER_LEAF - 1)),
        Direction::Backward,
    );
    for _ in 0..PER_LEAF {
        cursor.next_entry().unwrap().unwrap();
    }
    // Shrink B (entries the cursor already returned), then make A underfull: A
    // merges with its right sibling B and B's page is freed.
    for i in 2 * PER_LEAF - 8..2 * PER_LEAF {
        tree.delete(&key(i)).unwrap().unwrap();
    }
    for i in 0..10 {
        tree.delete(&key(i)).unwrap().unwrap();
    }
    let level = leaves(&tree);
    assert_eq!(level[0].0, a_no);
    assert!(
        level.iter().all(|(p, _)| *p != b_no),
        "B was not merged away"
    );
    // Insert below the cursor's position until A splits into B's old page.
    let mut extra = 0;
    while leaves(&tree)[1].0 != b_no {
        let k = key_u64(extra * 7 + 1);
        tree.insert(&k, &[1u8; 100]).unwrap();
        extra += 1;
        assert!(extra < 100, "A never split into B's old page");
    }
    let level = leaves(&tree);
    assert!(
        level[1].1.first().unwrap() < &key(PER_LEAF),
        "the split moved no old-A keys into B; the scenario needs some"
    );
    tree.check_invariants().unwrap();

    // Old A keys that were never deleted: 10..17.
    let expected: BTreeSet<Vec<u8>> = (10..PER_LEAF).map(key).collect();
    let mut rest = Vec::new();
    while let Some((k, _)) = cursor.next_entry().unwrap() {
        rest.push(k.to_vec());
    }
    assert!(rest.windows(2).all(|w| w[0] > w[1]), "out of order");
    let rest_set: BTreeSet<Vec<u8>> = rest.iter().cloned().collect();
    let missing: Vec<_> = expected.difference(&rest_set).collect();
    assert!(
        missing.is_empty(),
        "backward cursor skipped {} entries present throughout, e.g. {:?}",
        missing.len(),
        missing.first()
    );
}

/// The partitioned scan holds no latch between leaves either. Here the scan is paused
/// between leaf A and its right sibling B (the read-ahead, refilling its window, waits
/// for the next level-1 node, which this test holds), while another thread makes A
/// absorb B and split again into B's reused page. Entries of the old B that stayed in
/// A must still be visited.
#[test]
fn partitioned_scan_survives_merge_and_split_reusing_the_next_leaf() {
    use std::sync::mpsc::channel;
    use tarn_btree::LeafRange;
    use tarn_btree::node::Node;

    let fixture = Fixture::new();
    let pool = fixture.pool(2048);
    let tree = fixture.create(&pool);
    let n = PER_LEAF * 150;
    tree.bulk_load((0..n).map(|i| Ok((key(i), value(i)))), 50)
        .unwrap();
    // Root (level 2) -> P1, P2, ... (level 1) -> leaves. A and B are P1's last two.
    let (p1, p2) = {
        let root = pool.fetch_shared(common::page_id(1)).unwrap();
        let root = Node::new(&root);
        assert_eq!(root.level(), 2, "unexpected tree shape");
        (root.leftmost(), root.child(0))
    };
    let (a_no, b_no) = {
        let guard = pool.fetch_shared(common::page_id(p1)).unwrap();
        let node = Node::new(&guard);
        let c = node.child_count();
        (node.child_at(c - 2), node.child_at(c - 1))
    };
    let level = leaves(&tree);
    let a_index = level.iter().position(|(p, _)| *p == a_no).unwrap();
    assert_eq!(level[a_index + 1].0, b_no);
    let a_keys = level[a_index].1.clone();
    let b_keys = level[a_index + 1].1.clone();
    assert_eq!(a_keys.len() as u64, PER_LEAF);
    let first = u64::from_be_bytes(a_keys[0].clone().try_into().unwrap()) / 1000;

    let (to_helper, at_boundary) = channel::<()>();
    let (to_scanner, helper_ready) = channel::<()>();
    let deleted: Vec<Vec<u8>> = a_keys[..10].to_vec();
    std::thread::scope(|s| {
        let (pool, tree, deleted, b_keys) = (&pool, &tree, &deleted, &b_keys);
        let helper = s.spawn(move || {
            at_boundary.recv().unwrap();
            // Hold the next level-1 node: the scan's read-ahead waits for it with no
            // leaf latched, before it moves on to B.
            let hold = pool.fetch_exclusive(common::page_id(p2)).unwrap();
            to_scanner.send(()).unwrap();
            // A becomes underfull (once the scan releases it) and absorbs B.
            for k in deleted {
                tree.delete(k).unwrap().unwrap();
            }
            // Insert between the old B keys until A splits into B's reused page.
            let mut extra = 0u64;
            loop {
                let right = {
                    let guard = pool.fetch_shared(common::page_id(a_no)).unwrap();
                    Node::new(&guard).right()
                };
                if right == b_no {
                    break;
                }
                let i = first + PER_LEAF + extra % PER_LEAF;
                tree.insert(&key_u64(i * 1000 + 1 + extra / PER_LEAF), &value(i))
                    .unwrap();
                extra += 1;
                assert!(extra < 100, "A never split into B's old page");
            }
            let a_last = {
                let guard = pool.fetch_shared(common::page_id(a_no)).unwrap();
                let node = Node::new(&guard);
                node.key(node.len() - 1).to_vec()
            };
            assert!(a_last > b_keys[0], "no old-B keys stayed in A");
            drop(hold);
        });
        let range = LeafRange {
            lower: Bound::Included(a_keys[0].clone()),
            upper: Bound::Unbounded,
        };
        let mut visited: Vec<Vec<u8>> = Vec::new();
        let mut signalled = false;
        let a_last = a_keys.last().unwrap().clone();
        tree.scan_range(&range, 2, |k, _| {
            visited.push(k.to_vec());
            if k == a_last.as_slice() && !signalled {
                signalled = true;
                to_helper.send(()).unwrap();
                helper_ready.recv().unwrap();
            }
            Ok(true)
        })
        .unwrap();
        helper.join().unwrap();
        assert!(signalled);
        assert!(visited.windows(2).all(|w| w[0] < w[1]), "out of order");
        let visited: BTreeSet<Vec<u8>> = visited.into_iter().collect();
        let missing: Vec<u64> = (first..n)
            .map(key)
            .filter(|k| !deleted.contains(k) && !visited.contains(k))
            .map(|k| u64::from_be_bytes(k.try_into().unwrap()) / 1000)
            .collect();
        assert!(
            missing.is_empty(),
            "the scan skipped entries present throughout: {missing:?}"
        );
    });
    tree.check_invariants().unwrap();
}
