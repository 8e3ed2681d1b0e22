//! Corrupt pages on disk: every read path (point lookups, cursors both ways,
//! partitioned scans with and without read-ahead, writes, the invariant check) returns
//! an error naming the file and the page (MySQL error 3000), never a panic, a hang or
//! a wrong row.

mod common;

use std::collections::BTreeMap;
use std::ops::Bound;

use common::{
    FILE, Fixture, META_FREE_COUNT_AT, edit_page, file_pages, free_list, key_u64, page_id,
    read_file_page, watchdog, wr32, write_file_page,
};
use tarn_btree::change::{PageChange, apply};
use tarn_btree::node::max_entry_bytes;
use tarn_btree::node::{NODE_HEADER_BYTES, Node};
use tarn_btree::{Direction, LeafRange, Tree};
use tarn_common::Error;

type Model = BTreeMap<Vec<u8>, Vec<u8>>;

/// Keys of 8 + 200 bytes make inner nodes hold few children: a tall tree.
fn key(i: u64) -> Vec<u8> {
    let mut k = key_u64(i);
    k.resize(208, b'.');
    k
}

/// Builds the tree, flushes and closes it; returns the model.
fn build(fixture: &Fixture) -> Model {
    let pool = fixture.pool(4096);
    let tree = fixture.create(&pool);
    let mut model = Model::new();
    for i in 0..3000u64 {
        // Scattered insertion order.
        let n = (i * 7919) % 3000;
        let value = vec![(n % 251) as u8; 20];
        tree.insert(&key(n), &value).unwrap();
        model.insert(key(n), value);
    }
    let stats = tree.check_invariants().unwrap();
    assert!(stats.height >= 3, "{stats:?}");
    pool.flush_all().unwrap();
    model
}

struct PageInfo {
    page_no: u32,
    level: u16,
    first_key: Vec<u8>,
}

/// Node pages of the file, read directly, in key order per level.
fn node_pages(path: &std::path::Path) -> Vec<PageInfo> {
    let mut out = Vec::new();
    for page_no in 1..file_pages(path) {
        let page = read_file_page(path, page_no);
        let node = Node::new(&page);
        if node.is_node() && !node.is_empty() {
            out.push(PageInfo {
                page_no,
                level: node.level(),
                first_key: node.key(0).to_vec(),
            });
        }
    }
    out.sort_by(|a, b| (a.level, &a.first_key).cmp(&(b.level, &b.first_key)));
    out
}

/// A leaf in the middle of the key space, and its keys.
fn middle_leaf(path: &std::path::Path) -> (u32, Vec<Vec<u8>>) {
    let leaves: Vec<PageInfo> = node_pages(path)
        .into_iter()
        .filter(|p| p.level == 0)
        .collect();
    assert!(leaves.len() > 10);
    let page_no = leaves[leaves.len() / 2].page_no;
    let page = read_file_page(path, page_no);
    let node = Node::new(&page);
    assert!(node.is_leaf());
    (
        page_no,
        (0..node.len()).map(|i| node.key(i).to_vec()).collect(),
    )
}

fn assert_corrupt(err: &Error, path: &std::path::Path, page_no: u32, what: &str) {
    assert_eq!(err.mysql_code(), 3000, "{what}: {err}");
    let text = err.to_string();
    assert!(
        text.contains(&path.display().to_string()),
        "{what}: the error does not name the file: {text}"
    );
    assert!(
        text.contains(&format!("page {}:{page_no} ", FILE.0)),
        "{what}: the error does not name page {page_no}: {text}"
    );
}

/// Runs every read path over a tree with a corrupt page `bad`, whose keys are
/// `bad_keys`: each must fail with an error naming the page and return only correct
/// rows before failing.
fn check_every_path_fails(
    fixture: &Fixture,
    model: &Model,
    bad: u32,
    bad_keys: &[Vec<u8>],
    what: &str,
) -> Error {
    let path = fixture.file_path(FILE);
    let pool = fixture.pool(4096);
    let tree = fixture.open(&pool);
    let entries: Vec<(Vec<u8>, Vec<u8>)> =
        model.iter().map(|(k, v)| (k.clone(), v.clone())).collect();

    // Point lookups on the page fail (and keep failing); others work.
    let first_err = tree.get(&bad_keys[0]).unwrap_err();
    assert_corrupt(&first_err, &path, bad, &format!("{what}: get"));
    for k in [&bad_keys[0], bad_keys.last().unwrap()] {
        assert_corrupt(
            &tree.get(k).unwrap_err(),
            &path,
            bad,
            &format!("{what}: get again"),
        );
    }
    let (good_key, good_value) = model.iter().next().unwrap();
    assert_eq!(
        tree.get(good_key).unwrap().as_ref(),
        Some(good_value),
        "{what}"
    );

    // Cursors both ways: a correct prefix, then the error.
    for direction in [Direction::Forward, Direction::Backward] {
        let mut cursor = tree.range(Bound::Unbounded, Bound::Unbounded, direction);
        let mut rows = Vec::new();
        let err = loop {
            match cursor.next_entry() {
                Ok(Some((k, v))) => rows.push((k.to_vec(), v.to_vec())),
                Ok(None) => panic!("{what}: {direction:?} scan ended without an error"),
                Err(e) => break e,
            }
        };
        assert_corrupt(&err, &path, bad, &format!("{what}: {direction:?} cursor"));
        let expected: Vec<_> = match direction {
            Direction::Forward => entries.iter().take(rows.len()).cloned().collect(),
            Direction::Backward => entries.iter().rev().take(rows.len()).cloned().collect(),
        };
        assert!(
            rows == expected,
            "{what}: {direction:?} cursor returned wrong rows"
        );
    }
    // A range starting on the page.
    let err = tree
        .range(
            Bound::Included(bad_keys[1].clone()),
            Bound::Unbounded,
            Direction::Forward,
        )
        .collect_all()
        .unwrap_err();
    assert_corrupt(&err, &path, bad, &format!("{what}: range cursor"));

    // Partitioned scans, with and without read-ahead.
    for readahead in [0, 8] {
        let mut rows = Vec::new();
        let mut failed = None;
        for range in tree.partition(4).unwrap() {
            let result = tree.scan_range(&range, readahead, |k, v| {
                rows.push((k.to_vec(), v.to_vec()));
                Ok(true)
            });
            if let Err(e) = result {
                failed = Some(e);
                break;
            }
        }
        let err =
            failed.unwrap_or_else(|| panic!("{what}: scan with read-ahead {readahead} passed"));
        assert_corrupt(&err, &path, bad, &format!("{what}: scan_range {readahead}"));
        assert!(
            rows[..] == entries[..rows.len()],
            "{what}: scan_range returned wrong rows"
        );
    }
    let whole = LeafRange {
        lower: Bound::Included(bad_keys[0].clone()),
        upper: Bound::Unbounded,
    };
    assert!(tree.scan_range(&whole, 8, |_, _| Ok(true)).is_err());

    // Writes to the page fail too; the invariant check reports it.
    let mut new_key = bad_keys[0].clone();
    new_key.push(b'+');
    let err = tree.insert(&new_key, b"x").unwrap_err();
    assert_corrupt(&err, &path, bad, &format!("{what}: insert"));
    assert_corrupt(&tree.delete(&bad_keys[0]).unwrap_err(), &path, bad, what);
    assert!(tree.check_invariants().is_err(), "{what}");
    // The page lookup for prefetch only reads level 1, which is intact.
    assert_eq!(tree.leaf_pages_for(&[&bad_keys[0]]).unwrap(), vec![bad]);
    first_err
}

#[test]
fn a_leaf_with_flipped_bytes_is_a_checksum_error_on_every_path() {
    let _watchdog = watchdog("btree_corrupt_checksum", 300);
    let fixture = Fixture::new();
    let model = build(&fixture);
    let path = fixture.file_path(FILE);
    let (bad, bad_keys) = middle_leaf(&path);
    let mut page = read_file_page(&path, bad);
    for b in &mut page[2040..2056] {
        *b ^= 0x5A;
    }
    write_file_page(&path, bad, &page);
    let err = check_every_path_fails(&fixture, &model, bad, &bad_keys, "flipped bytes");
    assert!(matches!(err, Error::PageChecksumMismatch { .. }), "{err:?}");
}

fn wr16(p: &mut [u8], at: usize, v: u16) {
    p[at..at + 2].copy_from_slice(&v.to_le_bytes());
}

#[test]
fn a_leaf_with_a_valid_checksum_but_broken_structure_is_page_corrupt() {
    let _watchdog = watchdog("btree_corrupt_structure", 300);
    let fixture = Fixture::new();
    let model = build(&fixture);
    let path = fixture.file_path(FILE);
    let (bad, bad_keys) = middle_leaf(&path);
    let slot = |i: usize| NODE_HEADER_BYTES + 2 * i;
    type Edit = Box<dyn Fn(&mut [u8])>;
    let edits: Vec<(&str, Edit)> = vec![
        (
            "slot outside the page",
            Box::new(move |p| wr16(p, slot(0), 5000)),
        ),
        (
            "slot inside the header",
            Box::new(move |p| wr16(p, slot(1), 10)),
        ),
        (
            "keys out of order",
            Box::new(move |p| {
                let (a, b) = (slot(2), slot(3));
                let (x, y) = ([p[a], p[a + 1]], [p[b], p[b + 1]]);
                p[a..a + 2].copy_from_slice(&y);
                p[b..b + 2].copy_from_slice(&x);
            }),
        ),
        ("slot count past the heap", Box::new(|p| wr16(p, 34, 2000))),
        (
            "entry longer than the page",
            Box::new(move |p| {
                let at = u16::from_le_bytes([p[slot(0)], p[slot(0) + 1]]) as usize;
                wr16(p, at, 4000);
            }),
        ),
        ("leaf claiming level 3", Box::new(|p| wr16(p, 32, 3))),
    ];
    for (what, edit) in edits {
        let original = edit_page(&path, bad, |p| edit(p));
        let err = check_every_path_fails(&fixture, &model, bad, &bad_keys, what);
        assert!(matches!(err, Error::PageCorrupt { .. }), "{what}: {err:?}");
        write_file_page(&path, bad, &original);
    }
    // Restored, everything reads again.
    let pool = fixture.pool(4096);
    let tree = fixture.open(&pool);
    assert_eq!(tree.check_invariants().unwrap().entries, model.len() as u64);
}

/// Inner nodes whose (checksum-valid, well-formed) child pointers lead to the wrong
/// place: to the meta page, to a node of the wrong level, to the root itself.
#[test]
fn inner_nodes_pointing_to_the_wrong_pages_are_errors_not_hangs() {
    let _watchdog = watchdog("btree_corrupt_pointers", 300);
    let fixture = Fixture::new();
    let model = build(&fixture);
    let path = fixture.file_path(FILE);
    let pages = node_pages(&path);
    let level1 = pages.iter().find(|p| p.level == 1).unwrap().page_no;
    let leftmost_at = 52;
    for (what, page_no, target) in [
        (
            "a level-1 node's first child is the meta page",
            level1,
            0u32,
        ),
        ("a level-1 node's first child is the root", level1, 1),
        ("the root's first child is the root", 1, 1),
        (
            "a level-1 node's first child is past the file's end",
            level1,
            100_000,
        ),
    ] {
        let original = edit_page(&path, page_no, |p| {
            p[leftmost_at..leftmost_at + 4].copy_from_slice(&target.to_le_bytes())
        });
        let pool = fixture.pool(4096);
        let tree = fixture.open(&pool);
        let first = model.keys().next().unwrap();
        let err = tree.get(first).unwrap_err();
        assert_eq!(err.mysql_code(), 3000, "{what}: {err}");
        assert!(err.to_string().contains("000007.tdf"), "{what}: {err}");
        // Paths that pass through the broken pointer fail; others (a backward walk
        // along the leaf links) may succeed, but only with the right rows.
        let entries: Vec<(Vec<u8>, Vec<u8>)> =
            model.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
        let forward = tree
            .range(Bound::Unbounded, Bound::Unbounded, Direction::Forward)
            .collect_all();
        assert_eq!(
            forward.err().map(|e| e.mysql_code()),
            Some(3000),
            "{what}: forward"
        );
        match tree
            .range(Bound::Unbounded, Bound::Unbounded, Direction::Backward)
            .collect_all()
        {
            Ok(mut rows) => {
                rows.reverse();
                assert!(
                    rows == entries,
                    "{what}: backward cursor returned wrong rows"
                );
            }
            Err(e) => assert_eq!(e.mysql_code(), 3000, "{what}: backward: {e}"),
        }
        for readahead in [0, 8] {
            // Partitioning reads the inner levels: it fails if its path passes
            // through the broken pointer (which it does depends on the tree's shape).
            let ranges = match tree.partition(3) {
                Ok(ranges) => ranges,
                Err(e) => {
                    assert_eq!(e.mysql_code(), 3000, "{what}: partition: {e}");
                    continue;
                }
            };
            let mut rows = Vec::new();
            let mut result = Ok(());
            for range in ranges {
                if let Err(e) = tree.scan_range(&range, readahead, |k, v| {
                    rows.push((k.to_vec(), v.to_vec()));
                    Ok(true)
                }) {
                    result = Err(e);
                    break;
                }
            }
            assert_eq!(
                result.err().map(|e| e.mysql_code()),
                Some(3000),
                "{what}: scan {readahead}"
            );
            assert!(
                rows[..] == entries[..rows.len()],
                "{what}: scan returned wrong rows"
            );
        }
        assert!(tree.insert(&key(0), b"x").is_err(), "{what}");
        assert!(tree.check_invariants().is_err(), "{what}");
        drop(tree);
        drop(pool);
        write_file_page(&path, page_no, &original);
    }
}

/// Leaf sibling links (checksum-valid) that loop or point elsewhere must not make a
/// scan loop forever or return rows twice.
#[test]
fn broken_leaf_links_are_errors_not_hangs() {
    let _watchdog = watchdog("btree_corrupt_links", 300);
    let fixture = Fixture::new();
    let model = build(&fixture);
    let path = fixture.file_path(FILE);
    let (bad, _) = middle_leaf(&path);
    let right_at = 48;
    let left_at = 44;
    let pages = node_pages(&path);
    let level1 = pages.iter().find(|p| p.level == 1).unwrap().page_no;
    let entries: Vec<(Vec<u8>, Vec<u8>)> =
        model.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    for (what, offset, target) in [
        ("a leaf linking to itself on the right", right_at, bad),
        ("a leaf linking to itself on the left", left_at, bad),
        (
            "a leaf linking to an inner node on the right",
            right_at,
            level1,
        ),
        (
            "a leaf linking to an inner node on the left",
            left_at,
            level1,
        ),
        (
            "a leaf linking to the first leaf on the right",
            right_at,
            pages[0].page_no,
        ),
    ] {
        let original = edit_page(&path, bad, |p| {
            p[offset..offset + 4].copy_from_slice(&target.to_le_bytes())
        });
        let pool = fixture.pool(4096);
        let tree = fixture.open(&pool);
        // Either a correct result or an error naming the file; never a wrong row.
        for direction in [Direction::Forward, Direction::Backward] {
            match tree
                .range(Bound::Unbounded, Bound::Unbounded, direction)
                .collect_all()
            {
                Ok(mut rows) => {
                    if direction == Direction::Backward {
                        rows.reverse();
                    }
                    assert!(rows == entries, "{what}: {direction:?} cursor: wrong rows");
                }
                Err(e) => assert_eq!(e.mysql_code(), 3000, "{what}: {e}"),
            }
        }
        for readahead in [0, 8] {
            let mut rows = Vec::new();
            let result = tree.scan_range(
                &LeafRange {
                    lower: Bound::Unbounded,
                    upper: Bound::Unbounded,
                },
                readahead,
                |k, v| {
                    rows.push((k.to_vec(), v.to_vec()));
                    Ok(rows.len() <= entries.len())
                },
            );
            match result {
                Ok(_) => assert!(rows == entries, "{what}: scan_range: wrong rows"),
                Err(e) => assert_eq!(e.mysql_code(), 3000, "{what}: {e}"),
            }
        }
        assert!(tree.check_invariants().is_err(), "{what}");
        drop(tree);
        drop(pool);
        write_file_page(&path, bad, &original);
    }
}

#[test]
fn a_misplaced_page_is_an_error() {
    let fixture = Fixture::new();
    let model = build(&fixture);
    let path = fixture.file_path(FILE);
    let (bad, bad_keys) = middle_leaf(&path);
    // Another leaf's valid image written at this page's offset.
    let other = node_pages(&path)
        .into_iter()
        .find(|p| p.level == 0 && p.page_no != bad)
        .unwrap()
        .page_no;
    let image = read_file_page(&path, other);
    write_file_page(&path, bad, &image);
    let err = check_every_path_fails(&fixture, &model, bad, &bad_keys, "misplaced");
    assert!(matches!(err, Error::PageMisplaced { .. }), "{err:?}");
    let _ = Tree::open; // the tree opens fine: only the page is wrong
}

/// Formats `p` (page `page_no`) as a node at `level` holding `entries`, through the
/// same `apply` the tree uses: a well-formed node, whatever its entries' sizes.
fn format_node(
    p: &mut [u8],
    page_no: u32,
    level: u16,
    links: (u32, u32),
    leftmost: u32,
    entries: &[(&[u8], &[u8])],
) {
    let id = page_id(page_no);
    let (left, right) = links;
    apply(
        p,
        id,
        &PageChange::FormatNode {
            level,
            left,
            right,
            leftmost,
        },
    );
    for (slot, (key, payload)) in entries.iter().enumerate() {
        apply(
            p,
            id,
            &PageChange::Insert {
                slot: slot as u16,
                key,
                payload,
            },
        );
    }
}

/// Entries larger than a tree accepts are rejected by node validation, even in an
/// otherwise well-formed node; entries at the limit pass.
#[test]
fn node_validation_rejects_oversized_entries() {
    let size = common::PAGE_SIZE as usize;
    let max_entry = max_entry_bytes(size);
    let max_key = max_entry - 4;
    let mut page = vec![0u8; size];
    let key = vec![b'k'; 8];
    for (payload_len, ok) in [(max_entry - 8, true), (max_entry - 7, false), (2000, false)] {
        let payload = vec![1u8; payload_len];
        format_node(&mut page, 5, 0, (0, 0), 0, &[(&key, &payload)]);
        let result = Node::new(&page).validate();
        assert_eq!(
            result.is_ok(),
            ok,
            "leaf entry of 8 + {payload_len}: {result:?}"
        );
    }
    for (key_len, ok) in [(max_key, true), (max_key + 1, false), (1500, false)] {
        let key = vec![b'k'; key_len];
        format_node(&mut page, 5, 1, (0, 0), 9, &[(&key, &10u32.to_le_bytes())]);
        let result = Node::new(&page).validate();
        assert_eq!(result.is_ok(), ok, "inner key of {key_len}: {result:?}");
    }
}

/// A checksum-valid, well-formed leaf holding an entry over the size limit is a
/// corrupt page on every path (a write must not reach the page and trip an assert).
#[test]
fn a_leaf_with_an_oversized_entry_is_page_corrupt() {
    let _watchdog = watchdog("btree_corrupt_oversized", 300);
    let fixture = Fixture::new();
    let model = build(&fixture);
    let path = fixture.file_path(FILE);
    let (bad, bad_keys) = middle_leaf(&path);
    let big = vec![7u8; max_entry_bytes(common::PAGE_SIZE as usize)];
    edit_page(&path, bad, |p| {
        let node = Node::new(p);
        let links = (node.left(), node.right());
        let entries: [(&[u8], &[u8]); 2] = [(&bad_keys[0], &big), (&bad_keys[1], b"v")];
        format_node(p, bad, 0, links, 0, &entries);
    });
    let err = check_every_path_fails(&fixture, &model, bad, &bad_keys, "oversized entry");
    assert!(matches!(err, Error::PageCorrupt { .. }), "{err:?}");
    assert!(err.to_string().contains("maximum"), "{err}");
}

/// An inner node that is its own only child: every descent, `partition`'s level-by-
/// level one included, stops with an error instead of going round forever.
#[test]
fn an_inner_node_that_is_its_own_child_is_an_error_not_a_hang() {
    let _watchdog = watchdog("btree_corrupt_self_child", 300);
    let fixture = Fixture::new();
    let model = build(&fixture);
    let path = fixture.file_path(FILE);
    let root_level = Node::new(&read_file_page(&path, 1)).level();
    assert!(root_level >= 2);
    edit_page(&path, 1, |p| format_node(p, 1, root_level, (0, 0), 1, &[]));
    let pool = fixture.pool(4096);
    let tree = fixture.open(&pool);
    for parts in [1, 2, 4, 64] {
        match tree.partition(parts) {
            // One part needs no descent.
            Ok(ranges) if parts == 1 => assert_eq!(ranges.len(), 1),
            Ok(ranges) => panic!("partition({parts}) gave {ranges:?}"),
            Err(err) => assert_corrupt(&err, &path, 1, &format!("partition({parts})")),
        }
    }
    let first = model.keys().next().unwrap();
    assert_corrupt(&tree.get(first).unwrap_err(), &path, 1, "get");
    let whole = LeafRange {
        lower: Bound::Unbounded,
        upper: Bound::Unbounded,
    };
    for readahead in [0, 8] {
        let err = tree
            .scan_range(&whole, readahead, |_, _| Ok(true))
            .unwrap_err();
        assert_corrupt(&err, &path, 1, &format!("scan_range {readahead}"));
    }
    for direction in [Direction::Forward, Direction::Backward] {
        let err = tree
            .range(Bound::Unbounded, Bound::Unbounded, direction)
            .collect_all()
            .unwrap_err();
        assert_corrupt(&err, &path, 1, &format!("{direction:?} cursor"));
    }
}

/// A corrupt free list (a link past the file's end or back to the same page, a count
/// that does not match the list) is an error when a page is allocated, and changes
/// nothing: a chain being written gives back the pages it already took.
#[test]
fn a_corrupt_free_list_is_an_error_and_changes_nothing() {
    let _watchdog = watchdog("btree_corrupt_free_list", 300);
    let fixture = Fixture::new();
    let path = fixture.file_path(FILE);
    let page = tarn_btree::overflow_capacity_bytes(common::PAGE_SIZE as usize);
    {
        let pool = fixture.pool(256);
        let tree = fixture.create(&pool);
        let first = tree.write_overflow(&vec![3u8; 6 * page]).unwrap();
        tree.free_overflow(first).unwrap();
        pool.flush_all().unwrap();
    }
    let list = free_list(&path);
    assert_eq!(list.len(), 6);
    let (second, file_end) = (list[1], file_pages(&path));
    type Edit = Box<dyn Fn(&mut [u8])>;
    let cases: Vec<(&str, u32, Edit, u32)> = vec![
        (
            "a free page linking past the file's end",
            second,
            Box::new(|p| wr32(p, common::FREE_NEXT_AT, 100_000)),
            second,
        ),
        (
            "a free page linking to the file's end",
            second,
            Box::new(move |p| wr32(p, common::FREE_NEXT_AT, file_end)),
            second,
        ),
        (
            "a free page linking to itself",
            second,
            Box::new(move |p| wr32(p, common::FREE_NEXT_AT, second)),
            second,
        ),
        (
            "a meta page counting no free pages",
            0,
            Box::new(|p| wr32(p, META_FREE_COUNT_AT, 0)),
            0,
        ),
        (
            "a meta page counting too few free pages",
            0,
            Box::new(|p| wr32(p, META_FREE_COUNT_AT, 1)),
            0,
        ),
        (
            "a meta page counting too many free pages",
            0,
            Box::new(|p| wr32(p, META_FREE_COUNT_AT, 7)),
            0,
        ),
    ];
    for (what, page_no, edit, named) in cases {
        let original = edit_page(&path, page_no, |p| edit(p));
        let pool = fixture.pool(256);
        let tree = fixture.open(&pool);
        let before = tree.meta().unwrap();
        // A chain as long as the list: every case fails while it takes its pages.
        let err = tree.write_overflow(&vec![4u8; 6 * page]).expect_err(what);
        assert_corrupt(&err, &path, named, what);
        let after = tree.meta().unwrap();
        assert_eq!(
            (after.next, after.free_count),
            (before.next, before.free_count),
            "{what}: the failed write kept pages"
        );
        drop(tree);
        drop(pool);
        write_file_page(&path, page_no, &original);
    }
}
