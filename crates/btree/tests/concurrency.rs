//! Concurrency stress: writers, range cursors, partitioned scans and point reads on one
//! tree at once. Writers own disjoint key sets (the last key byte names the writer),
//! so every acknowledged insert has a known fate; a set of "stable" keys inserted
//! before the threads start is never touched, so every scan must return all of them
//! that lie in its range, whatever splits and merges happen around them.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Bound;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use parking_lot::Mutex;

use common::{Fixture, in_bounds, watchdog};
use tarn_btree::{Direction, Tree};
use tarn_common::rng::{Rng, test_seed};

const WRITERS: usize = 2;
const STABLE_TAG: u8 = 0xEE;

struct Config {
    name: &'static str,
    frames: u64,
    stable_keys: usize,
    ops_per_writer: usize,
    min_scans: u64,
    min_gets: u64,
}

/// A key of varied length (mostly short, some of a few hundred bytes so that nodes
/// hold few entries and split and merge often), ending in `tag`.
fn random_key(rng: &mut Rng, tag: u8) -> Vec<u8> {
    let len = if rng.percent(70) {
        1 + rng.below(24) as usize
    } else {
        24 + rng.below(300) as usize
    };
    let mut key = vec![0u8; len];
    rng.fill(&mut key);
    key.push(tag);
    key
}

fn random_value(rng: &mut Rng) -> Vec<u8> {
    let mut value = vec![0u8; rng.below(200) as usize];
    rng.fill(&mut value);
    value
}

fn random_bound(rng: &mut Rng) -> Bound<Vec<u8>> {
    let mut key = vec![0u8; 1 + rng.below(3) as usize];
    rng.fill(&mut key);
    match rng.below(4) {
        0 => Bound::Unbounded,
        1 | 2 => Bound::Included(key),
        _ => Bound::Excluded(key),
    }
}

/// The keys a writer has acknowledged and not started to delete, with their values.
/// Readers hold the lock while they look a key up, so a key in the list cannot be
/// deleted during the lookup.
type Live = Mutex<Vec<(Vec<u8>, Vec<u8>)>>;

fn writer(tree: &Tree, live: &Live, tag: u8, seed: u64, ops: usize, stats: &AtomicU64) {
    let mut rng = Rng::new(seed);
    let mut own: BTreeSet<Vec<u8>> = BTreeSet::new();
    for op in 0..ops {
        // Grow for most of the run, then shrink, so both splits and merges happen.
        let insert_pct = if op < ops * 7 / 10 { 70 } else { 30 };
        let len = live.lock().len();
        if len == 0 || rng.percent(insert_pct) {
            let key = random_key(&mut rng, tag);
            if !own.insert(key.clone()) {
                let err = tree.insert(&key, b"dup").expect_err("duplicate insert");
                assert_eq!(err.mysql_code(), 1062, "{err}");
                continue;
            }
            let value = random_value(&mut rng);
            tree.insert(&key, &value)
                .unwrap_or_else(|e| panic!("writer {tag} op {op}: insert: {e}"));
            live.lock().push((key, value));
        } else if rng.percent(15) {
            // Replace a value (possibly growing it past the leaf's free space).
            let (key, old) = {
                let list = live.lock();
                list[rng.below(list.len() as u64) as usize].clone()
            };
            let value = random_value(&mut rng);
            // Only this writer changes its keys, so the old value is known; the list
            // entry is updated after the tree, so a reader may see either value.
            let mut list = live.lock();
            let got = tree
                .update(&key, &value)
                .unwrap_or_else(|e| panic!("writer {tag} op {op}: update: {e}"));
            assert_eq!(got.as_ref(), Some(&old), "writer {tag} op {op}: old value");
            let slot = list.iter().position(|(k, _)| *k == key).expect("listed");
            list[slot].1 = value;
        } else {
            let (key, value) = {
                let mut list = live.lock();
                let index = rng.below(list.len() as u64) as usize;
                list.swap_remove(index)
            };
            let old = tree
                .delete(&key)
                .unwrap_or_else(|e| panic!("writer {tag} op {op}: delete: {e}"));
            assert_eq!(old, Some(value), "writer {tag} op {op}: deleted value");
            own.remove(&key);
        }
        stats.fetch_add(1, Ordering::Relaxed);
    }
}

/// Checks one cursor's output: strictly ordered in its direction, within bounds, and
/// (if it ran to the end) holding every stable key in range.
fn check_cursor(tree: &Tree, rng: &mut Rng, stable: &BTreeSet<Vec<u8>>, scan_no: u64) -> u64 {
    let lower = random_bound(rng);
    let upper = random_bound(rng);
    let direction = if rng.percent(50) {
        Direction::Forward
    } else {
        Direction::Backward
    };
    // Some scans stop early, as a LIMIT would.
    let limit = if rng.percent(30) {
        rng.below(200) as usize
    } else {
        usize::MAX
    };
    let mut cursor = tree.range(lower.clone(), upper.clone(), direction);
    let mut previous: Option<Vec<u8>> = None;
    let mut stable_seen = BTreeSet::new();
    let mut count = 0usize;
    let ctx = || format!("scan {scan_no} {direction:?} {lower:?}..{upper:?}");
    while count < limit {
        let Some((key, _)) = cursor
            .next_entry()
            .unwrap_or_else(|e| panic!("{}: {e}", ctx()))
        else {
            break;
        };
        assert!(
            in_bounds(key, &lower, &upper),
            "{}: key out of bounds",
            ctx()
        );
        if let Some(prev) = &previous {
            let ordered = match direction {
                Direction::Forward => key > prev.as_slice(),
                Direction::Backward => key < prev.as_slice(),
            };
            assert!(ordered, "{}: {key:?} after {prev:?}", ctx());
        }
        if key.last() == Some(&STABLE_TAG) && stable.contains(key) {
            stable_seen.insert(key.to_vec());
        }
        previous = Some(key.to_vec());
        count += 1;
    }
    if count < limit {
        let missing = stable
            .iter()
            .filter(|k| in_bounds(k, &lower, &upper) && !stable_seen.contains(*k))
            .count();
        assert_eq!(missing, 0, "{}: skipped {missing} stable keys", ctx());
    }
    count as u64
}

/// A partitioned scan of everything, each range scanned with read-ahead; the
/// concatenation must be strictly ordered and hold every stable key.
fn check_partitioned(tree: &Tree, rng: &mut Rng, stable: &BTreeSet<Vec<u8>>, scan_no: u64) {
    let parts = 1 + rng.below(6) as usize;
    let readahead = [0, 4, 16][rng.below(3) as usize];
    let ranges = tree.partition(parts).unwrap();
    let mut keys: Vec<Vec<u8>> = Vec::new();
    for range in &ranges {
        tree.scan_range(range, readahead, |key, _| {
            assert!(
                in_bounds(key, &range.lower, &range.upper),
                "scan {scan_no}: key outside its partition"
            );
            keys.push(key.to_vec());
            Ok(true)
        })
        .unwrap_or_else(|e| panic!("scan {scan_no}: {e}"));
    }
    assert!(
        keys.windows(2).all(|w| w[0] < w[1]),
        "scan {scan_no}: partitioned scan out of order"
    );
    let seen: BTreeSet<&Vec<u8>> = keys.iter().filter(|k| stable.contains(*k)).collect();
    assert_eq!(
        seen.len(),
        stable.len(),
        "scan {scan_no}: partitioned scan ({parts} parts, read-ahead {readahead}) skipped stable keys"
    );
}

fn run(config: Config) {
    let seed = test_seed(config.name);
    let _watchdog = watchdog(config.name, 300);
    let fixture = Fixture::new();
    let pool = fixture.pool(config.frames);
    let tree = fixture.create(&pool);
    let mut rng = Rng::new(seed);

    let mut stable_map = BTreeMap::new();
    while stable_map.len() < config.stable_keys {
        let key = random_key(&mut rng, STABLE_TAG);
        let value = random_value(&mut rng);
        if let std::collections::btree_map::Entry::Vacant(slot) = stable_map.entry(key.clone()) {
            tree.insert(&key, &value).unwrap();
            slot.insert(value);
        }
    }
    let stable: BTreeSet<Vec<u8>> = stable_map.keys().cloned().collect();
    let stable_list: Vec<(Vec<u8>, Vec<u8>)> = stable_map.clone().into_iter().collect();

    let lives: Vec<Live> = (0..WRITERS).map(|_| Mutex::new(Vec::new())).collect();
    let writes = AtomicU64::new(0);
    let writers_done = AtomicBool::new(false);
    let (scans, gets) = (AtomicU64::new(0), AtomicU64::new(0));
    let tree = Arc::new(tree);
    std::thread::scope(|s| {
        let writer_handles: Vec<_> = (0..WRITERS)
            .map(|w| {
                let (tree, live, writes) = (&tree, &lives[w], &writes);
                let seed = seed.wrapping_add(1 + w as u64);
                let ops = config.ops_per_writer;
                s.spawn(move || writer(tree, live, w as u8, seed, ops, writes))
            })
            .collect();
        // Range cursors, forward and backward, and now and then a partitioned scan.
        let scanner = {
            let (tree, stable, done, scans) = (&tree, &stable, &writers_done, &scans);
            let mut rng = Rng::new(seed.wrapping_add(100));
            let min = config.min_scans;
            s.spawn(move || {
                let mut n = 0;
                while !done.load(Ordering::Acquire) || n < min {
                    if n % 10 == 9 {
                        check_partitioned(tree, &mut rng, stable, n);
                    } else {
                        check_cursor(tree, &mut rng, stable, n);
                    }
                    n += 1;
                }
                scans.store(n, Ordering::Relaxed);
            })
        };
        // Point reads of acknowledged, undeleted keys (and of stable ones).
        let getter = {
            let (tree, lives, done, gets) = (&tree, &lives, &writers_done, &gets);
            let stable_list = &stable_list;
            let mut rng = Rng::new(seed.wrapping_add(200));
            let min = config.min_gets;
            s.spawn(move || {
                let mut n = 0;
                while !done.load(Ordering::Acquire) || n < min {
                    let w = rng.below(WRITERS as u64 + 1) as usize;
                    if w == WRITERS {
                        let (key, value) =
                            &stable_list[rng.below(stable_list.len() as u64) as usize];
                        assert_eq!(tree.get(key).unwrap().as_ref(), Some(value), "stable key");
                    } else {
                        let list = lives[w].lock();
                        if list.is_empty() {
                            continue;
                        }
                        let (key, value) = &list[rng.below(list.len() as u64) as usize];
                        let got = tree.get(key).unwrap_or_else(|e| panic!("get {n}: {e}"));
                        assert_eq!(
                            got.as_ref(),
                            Some(value),
                            "get {n}: writer {w}'s acknowledged key {key:?} is lost"
                        );
                    }
                    n += 1;
                }
                gets.store(n, Ordering::Relaxed);
            })
        };
        let mut panicked = None;
        for handle in writer_handles {
            if let Err(p) = handle.join() {
                panicked.get_or_insert(p);
            }
        }
        writers_done.store(true, Ordering::Release);
        for handle in [scanner, getter] {
            if let Err(p) = handle.join() {
                panicked.get_or_insert(p);
            }
        }
        if let Some(p) = panicked {
            std::panic::resume_unwind(p);
        }
    });
    eprintln!(
        "{}: {} writes, {} scans, {} gets",
        config.name,
        writes.load(Ordering::Relaxed),
        scans.load(Ordering::Relaxed),
        gets.load(Ordering::Relaxed)
    );

    // Quiescent: the tree is well formed and holds exactly the acknowledged entries.
    let stats = tree.check_invariants().unwrap();
    let mut expected = stable_map;
    for live in &lives {
        for (key, value) in live.lock().iter() {
            assert!(expected.insert(key.clone(), value.clone()).is_none());
        }
    }
    assert_eq!(stats.entries, expected.len() as u64, "{stats:?}");
    assert!(stats.height >= 3, "the tree stayed small: {stats:?}");
    let got = common::all_entries(&tree);
    assert!(
        got.len() == expected.len()
            && got
                .iter()
                .zip(expected.iter())
                .all(|((gk, gv), (ek, ev))| gk == ek && gv == ev),
        "the tree's contents differ from the acknowledged entries ({} vs {})",
        got.len(),
        expected.len()
    );
    pool.check_invariants().unwrap();
}

#[test]
fn writers_cursors_and_readers_on_one_tree() {
    run(Config {
        name: "btree_concurrency",
        frames: 8192,
        stable_keys: 2000,
        ops_per_writer: 40_000,
        min_scans: 200,
        min_gets: 10_000,
    });
}

#[test]
fn writers_cursors_and_readers_with_evictions() {
    run(Config {
        name: "btree_concurrency_evicting",
        frames: 160,
        stable_keys: 1000,
        ops_per_writer: 12_000,
        min_scans: 50,
        min_gets: 2000,
    });
}
