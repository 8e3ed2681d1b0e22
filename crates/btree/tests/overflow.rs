//! Overflow chains: large values round-trip, freed chains are reused before the file
//! grows, and broken chains are errors, not panics.

mod common;

use common::{FILE, Fixture, edit_page, rd32, read_file_page, watchdog, wr32};
use tarn_btree::overflow_capacity_bytes;
use tarn_common::rng::{Rng, test_seed};

const KB: usize = 1024;
const MB: usize = 1024 * KB;

fn pages_for(len: usize) -> u32 {
    len.div_ceil(overflow_capacity_bytes(common::PAGE_SIZE as usize)) as u32
}

#[test]
fn large_values_round_trip_and_freed_pages_are_reused() {
    let mut rng = Rng::new(test_seed("btree_overflow"));
    let fixture = Fixture::new();
    // Smaller than the largest value, so chains are written back and read again.
    let pool = fixture.pool(1024);
    let tree = fixture.create(&pool);
    tree.insert(b"row", b"points at overflow chains").unwrap();

    let sizes = [MB / 2, 3 * MB, 7 * MB, 1, overflow_capacity_bytes(4096)];
    let mut chains = Vec::new();
    for &len in &sizes {
        let mut value = vec![0u8; len];
        rng.fill(&mut value);
        let before = tree.meta().unwrap();
        let first = tree.write_overflow(&value).unwrap();
        let after = tree.meta().unwrap();
        assert_eq!(after.next - before.next, pages_for(len), "{len} bytes");
        chains.push((first, value));
    }
    for (first, value) in &chains {
        let mut out = b"prefix".to_vec();
        tree.read_overflow(*first, value.len() as u64, &mut out)
            .unwrap();
        assert_eq!(&out[..6], b"prefix", "read appends");
        assert!(out[6..] == value[..], "{} bytes differ", value.len());
    }

    // Free the three big chains: every page goes on the free list.
    let before = tree.meta().unwrap();
    let mut freed = 0;
    for (first, value) in &chains[..3] {
        tree.free_overflow(*first).unwrap();
        freed += pages_for(value.len());
    }
    let after = tree.meta().unwrap();
    assert_eq!(after.free_count - before.free_count, freed);
    assert_eq!(after.next, before.next);
    // A freed chain joins the free list whole, and the list stays sound.
    assert_eq!(
        tree.check_invariants().unwrap().free_pages,
        u64::from(after.free_count)
    );

    // New values take freed pages: the file does not grow.
    let mut value = vec![0u8; 5 * MB];
    rng.fill(&mut value);
    let first = tree.write_overflow(&value).unwrap();
    let reused = tree.meta().unwrap();
    assert_eq!(reused.next, after.next, "allocation extended the file");
    assert_eq!(after.free_count - reused.free_count, pages_for(value.len()));
    let mut out = Vec::new();
    tree.read_overflow(first, value.len() as u64, &mut out)
        .unwrap();
    assert!(out == value);
    // Tree nodes take freed pages too.
    for i in 0..2000u32 {
        tree.insert(&i.to_be_bytes(), &[9u8; 200]).unwrap();
    }
    assert_eq!(tree.meta().unwrap().next, after.next);
    let stats = tree.check_invariants().unwrap();
    assert_eq!(stats.entries, 2001);
    // The small chains were untouched by all this.
    for (first, value) in &chains[3..] {
        let mut out = Vec::new();
        tree.read_overflow(*first, value.len() as u64, &mut out)
            .unwrap();
        assert!(out == *value);
    }
}

#[test]
fn broken_chains_are_errors() {
    let mut rng = Rng::new(test_seed("btree_overflow_broken"));
    let fixture = Fixture::new();
    let pool = fixture.pool(1024);
    let tree = fixture.create(&pool);
    let mut value = vec![0u8; 100 * KB];
    rng.fill(&mut value);
    let first = tree.write_overflow(&value).unwrap();
    let len = value.len() as u64;
    let corrupt = |result: tarn_common::Result<()>, what: &str| {
        let err = result.expect_err(what);
        assert_eq!(err.mysql_code(), 3000, "{what}: {err}");
        assert!(err.to_string().contains("000007.tdf"), "{what}: {err}");
    };

    // Longer than the chain, and shorter than it.
    let mut out = Vec::new();
    corrupt(tree.read_overflow(first, len + 1, &mut out), "too long");
    out.clear();
    corrupt(
        tree.read_overflow(first, len + 5000, &mut out),
        "a page too long",
    );
    out.clear();
    corrupt(tree.read_overflow(first, len - 1, &mut out), "too short");
    out.clear();
    corrupt(tree.read_overflow(first, 10, &mut out), "much too short");
    // Starting at a page that is not an overflow page: the root, the meta page.
    out.clear();
    corrupt(tree.read_overflow(1, 10, &mut out), "root");
    corrupt(tree.read_overflow(0, 10, &mut out), "meta");
    corrupt(tree.free_overflow(1), "freeing the root");
    // A length of zero reads nothing.
    out.clear();
    tree.read_overflow(first, 0, &mut out).unwrap();
    assert!(out.is_empty());
    // An empty value is refused.
    assert!(tree.write_overflow(&[]).is_err());
    // The chain itself is intact after all that.
    out.clear();
    tree.read_overflow(first, len, &mut out).unwrap();
    assert!(out == value);
    tree.check_invariants().unwrap();
}

/// The pages of the chain starting at `first`, read directly from the file.
fn chain_pages(path: &std::path::Path, first: u32, pages: usize) -> Vec<u32> {
    let mut out = vec![first];
    while out.len() < pages {
        out.push(rd32(&read_file_page(path, *out.last().unwrap()), 32));
    }
    out
}

/// Checksum-valid chains that loop (an empty page linking to itself or back into the
/// chain, a short page linking back) are errors naming the file, not endless loops.
#[test]
fn looping_chains_are_errors_not_hangs() {
    let _watchdog = watchdog("btree_overflow_loops", 120);
    let fixture = Fixture::new();
    let path = fixture.file_path(FILE);
    let capacity = overflow_capacity_bytes(common::PAGE_SIZE as usize);
    let value: Vec<u8> = (0..4 * capacity - 100).map(|i| i as u8).collect();
    let len = value.len() as u64;
    let (first, second) = {
        let pool = fixture.pool(256);
        let tree = fixture.create(&pool);
        let first = tree.write_overflow(&value).unwrap();
        let second = tree.write_overflow(&value).unwrap();
        pool.flush_all().unwrap();
        (first, second)
    };
    let chain = chain_pages(&path, first, 4);
    const NEXT_AT: usize = 32;
    const LEN_AT: usize = 36;
    // (what, chain index of the page edited, its new next page, its new data length,
    // the page the error names).
    let cases = [
        (
            "the first page empty, linking to itself",
            0,
            chain[0],
            0,
            Some(chain[0]),
        ),
        (
            "the second page empty, linking to itself",
            1,
            chain[1],
            0,
            Some(chain[1]),
        ),
        (
            "the second page empty, linking back",
            1,
            chain[0],
            0,
            Some(chain[1]),
        ),
        ("the third page short, linking back", 2, chain[0], 10, None),
    ];
    for (what, index, next, data_len, named) in cases {
        let original = edit_page(&path, chain[index], |p| {
            wr32(p, NEXT_AT, next);
            wr32(p, LEN_AT, data_len);
        });
        let pool = fixture.pool(256);
        let tree = fixture.open(&pool);
        let mut out = Vec::new();
        let err = tree.read_overflow(first, len, &mut out).expect_err(what);
        assert_eq!(err.mysql_code(), 3000, "{what}: {err}");
        assert!(err.to_string().contains("000007.tdf"), "{what}: {err}");
        if let Some(page_no) = named {
            let page = format!("page {}:{page_no} ", FILE.0);
            assert!(err.to_string().contains(&page), "{what}: {err}");
        }
        assert!(out.len() as u64 <= len, "{what}: read past the value");
        drop(tree);
        drop(pool);
        common::write_file_page(&path, chain[index], &original);
    }

    // Freeing a chain whose second page links to itself fails, naming the page, before
    // anything is freed (the chain is walked whole first).
    let chain = chain_pages(&path, second, 4);
    edit_page(&path, chain[1], |p| wr32(p, NEXT_AT, chain[1]));
    let pool = fixture.pool(256);
    let tree = fixture.open(&pool);
    let before = tree.meta().unwrap();
    let err = tree.free_overflow(second).unwrap_err();
    assert_eq!(err.mysql_code(), 3000, "{err}");
    assert!(
        err.to_string()
            .contains(&format!("page {}:{} ", FILE.0, chain[1])),
        "{err}"
    );
    assert_eq!(tree.meta().unwrap().free_count, before.free_count);
    assert_eq!(tree.check_invariants().unwrap().free_pages, 0);
    // The other chain is intact.
    let mut out = Vec::new();
    tree.read_overflow(first, len, &mut out).unwrap();
    assert!(out == value);
}
