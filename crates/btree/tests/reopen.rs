//! A tree survives closing and reopening its pool; a file without a tree is refused.

mod common;

use std::collections::BTreeMap;
use std::sync::Arc;

use common::{FILE, Fixture, read_file_page, write_file_page};
use tarn_btree::{NoRedo, Tree};
use tarn_common::rng::{Rng, test_seed};
use tarn_common::{FileId, PageId, PageNo};

type Model = BTreeMap<Vec<u8>, Vec<u8>>;

fn churn(tree: &Tree, model: &mut Model, rng: &mut Rng, ops: usize) {
    for _ in 0..ops {
        if model.is_empty() || rng.percent(65) {
            let mut key = vec![0u8; 1 + rng.below(30) as usize];
            rng.fill(&mut key);
            let mut value = vec![0u8; rng.below(300) as usize];
            rng.fill(&mut value);
            tree.upsert(&key, &value).unwrap();
            model.insert(key, value);
        } else {
            let key = model
                .keys()
                .nth(rng.below(model.len() as u64) as usize)
                .unwrap()
                .clone();
            assert!(tree.delete(&key).unwrap().is_some());
            model.remove(&key);
        }
    }
}

fn check(tree: &Tree, model: &Model, context: &str) {
    let stats = tree
        .check_invariants()
        .unwrap_or_else(|e| panic!("{context}: {e}"));
    assert_eq!(stats.entries, model.len() as u64, "{context}");
    let expected: Vec<(Vec<u8>, Vec<u8>)> =
        model.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    assert!(
        common::all_entries(tree) == expected,
        "{context}: contents differ"
    );
}

#[test]
fn a_reopened_tree_has_the_same_contents() {
    let mut rng = Rng::new(test_seed("btree_reopen"));
    let fixture = Fixture::new();
    let mut model = Model::new();
    let meta = {
        let pool = fixture.pool(4096);
        let tree = fixture.create(&pool);
        churn(&tree, &mut model, &mut rng, 6000);
        check(&tree, &model, "before closing");
        assert!(tree.check_invariants().unwrap().height >= 2);
        pool.flush_all().unwrap();
        tree.meta().unwrap()
    };
    // Reopen twice: once with a pool as large as the tree, once with a small one,
    // changing the tree in between.
    for (round, frames) in [(1, 4096), (2, 160)] {
        let pool = fixture.pool(frames);
        let tree = fixture.open(&pool);
        if round == 1 {
            assert_eq!(tree.meta().unwrap(), meta, "the meta page changed");
        }
        check(&tree, &model, &format!("reopened ({round})"));
        churn(&tree, &mut model, &mut rng, 1500);
        check(&tree, &model, &format!("changed after reopening ({round})"));
        pool.flush_all().unwrap();
    }
    let pool = fixture.pool(4096);
    let tree = fixture.open(&pool);
    check(&tree, &model, "reopened at last");
}

#[test]
fn opening_a_file_without_a_tree_is_an_error() {
    let fixture = Fixture::new();
    {
        let pool = fixture.pool(256);
        let tree = fixture.create(&pool);
        tree.insert(b"k", b"v").unwrap();
        // A file holding a page of another type at page 0.
        let mut page = pool
            .create_page(PageId::new(FileId(9), PageNo(0)), tarn_io::PageType::RAW)
            .unwrap();
        page[100] = 1;
        page.mark_dirty(tarn_common::Lsn(1));
        drop(page);
        pool.flush_all().unwrap();
    }
    let open = |file: u32| {
        let pool = fixture.pool(256);
        Tree::open(pool, FileId(file), Arc::new(NoRedo::default()), "test.t")
    };
    let err = open(9).err().expect("a raw page is no meta page");
    assert_eq!(err.mysql_code(), 3000, "{err}");
    assert!(err.to_string().contains("magic"), "{err}");
    // A file that does not exist yet (so it is empty).
    let err = open(11).err().expect("an empty file holds no tree");
    assert_eq!(err.mysql_code(), 3000, "{err}");

    // The meta page of a real tree, with a valid checksum but garbage fields.
    let path = fixture.file_path(FILE);
    let original = read_file_page(&path, 0);
    for (offset, value, what) in [
        (32usize, 0x1234_5678u32, "magic"),
        (36, 2, "root"),
        (40, 1, "next page"),
        (44, 1_000_000, "free head"),
    ] {
        let mut page = original.clone();
        page[offset..offset + 4].copy_from_slice(&value.to_le_bytes());
        tarn_io::page::seal(&mut page, PageId::new(FILE, PageNo(0)));
        write_file_page(&path, 0, &page);
        let err = open(FILE.0)
            .err()
            .unwrap_or_else(|| panic!("bad {what} accepted"));
        assert_eq!(err.mysql_code(), 3000, "{what}: {err}");
        assert!(err.to_string().contains("000007.tdf"), "{what}: {err}");
    }
    // Garbage bytes without a valid checksum.
    let mut page = original.clone();
    page[200..260].fill(0xAB);
    write_file_page(&path, 0, &page);
    assert_eq!(open(FILE.0).err().unwrap().mysql_code(), 3000);
    // Restored, the tree opens again.
    write_file_page(&path, 0, &original);
    let tree = open(FILE.0).unwrap();
    assert_eq!(tree.get(b"k").unwrap(), Some(b"v".to_vec()));
}
