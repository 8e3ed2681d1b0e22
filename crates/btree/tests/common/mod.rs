//! Shared set-up for the B+tree tests: a data directory with 4 KiB pages (the
//! smallest size, so trees grow tall with few entries) and a small buffer pool.

#![allow(dead_code)]

use std::sync::Arc;

use tarn_btree::{NoRedo, Tree};
use tarn_buffer::{BufferPool, NoLog, PoolConfig};
use tarn_common::FileId;
use tarn_common::latch::LatchRegistry;
use tarn_common::settings::Settings;
use tarn_io::DataDir;

pub const PAGE_SIZE: u32 = 4096;
pub const FILE: FileId = FileId(7);

pub struct Fixture {
    pub dir: tempfile::TempDir,
    pub settings: Settings,
}

impl Fixture {
    pub fn new() -> Fixture {
        let base = std::env::var_os("TARN_TEST_DIR")
            .map(std::path::PathBuf::from)
            .unwrap_or_else(std::env::temp_dir);
        std::fs::create_dir_all(&base).expect("test directory root");
        let dir = tempfile::tempdir_in(base).expect("temporary directory");
        let settings = Settings {
            data_dir: dir.path().to_path_buf(),
            page_size_bytes: PAGE_SIZE,
            ..Settings::default()
        };
        Fixture { dir, settings }
    }

    /// A pool of `frames` frames in 2 instances.
    pub fn pool(&self, frames: u64) -> Arc<BufferPool> {
        let datadir =
            DataDir::open(&self.settings, Some(PAGE_SIZE), LatchRegistry::new(true)).unwrap();
        let mut config = PoolConfig::from_settings(&self.settings);
        config.size_bytes = frames * u64::from(PAGE_SIZE);
        config.instances = 2;
        Arc::new(BufferPool::open(config, datadir, Arc::new(NoLog)).unwrap())
    }

    pub fn create(&self, pool: &Arc<BufferPool>) -> Tree {
        Tree::create(
            pool.clone(),
            FILE,
            Arc::new(NoRedo::default()),
            "test.t.PRIMARY",
        )
        .unwrap()
    }

    pub fn open(&self, pool: &Arc<BufferPool>) -> Tree {
        Tree::open(
            pool.clone(),
            FILE,
            Arc::new(NoRedo::default()),
            "test.t.PRIMARY",
        )
        .unwrap()
    }
}

/// The page id of page `page_no` of the test file.
pub fn page_id(page_no: u32) -> tarn_common::PageId {
    tarn_common::PageId::new(FILE, tarn_common::PageNo(page_no))
}

/// The leaf level, left to right: each leaf's page number and keys (read through the
/// pool with shared latches, one page at a time; call while no writer runs).
pub fn leaves(tree: &Tree) -> Vec<(u32, Vec<Vec<u8>>)> {
    use tarn_btree::node::Node;
    let pool = tree.pool();
    let page_id = |page_no| tarn_common::PageId::new(tree.file_id(), tarn_common::PageNo(page_no));
    let mut page_no = tarn_btree::ROOT_PAGE_NO;
    loop {
        let guard = pool.fetch_shared(page_id(page_no)).unwrap();
        let node = Node::new(&guard);
        if node.is_leaf() {
            break;
        }
        page_no = node.leftmost();
    }
    let mut out = Vec::new();
    while page_no != 0 {
        let guard = pool.fetch_shared(page_id(page_no)).unwrap();
        let node = Node::new(&guard);
        assert!(
            node.is_leaf(),
            "page {page_no} on the leaf level is no leaf"
        );
        out.push((
            page_no,
            (0..node.len()).map(|i| node.key(i).to_vec()).collect(),
        ));
        page_no = node.right();
    }
    out
}

/// Every entry of the tree, by a forward cursor over everything.
pub fn all_entries(tree: &Tree) -> Vec<(Vec<u8>, Vec<u8>)> {
    tree.range(
        std::ops::Bound::Unbounded,
        std::ops::Bound::Unbounded,
        tarn_btree::Direction::Forward,
    )
    .collect_all()
    .unwrap()
}

/// An 8-byte big-endian key: byte order is numeric order.
pub fn key_u64(n: u64) -> Vec<u8> {
    n.to_be_bytes().to_vec()
}

/// Aborts the test process if it is still running after `limit_secs`: a deadlock in
/// the latching protocol would otherwise hang the suite. Keep the returned guard alive.
pub struct Watchdog(Option<std::sync::mpsc::Sender<()>>);

pub fn watchdog(name: &'static str, limit_secs: u64) -> Watchdog {
    let (done, wait) = std::sync::mpsc::channel::<()>();
    std::thread::spawn(move || {
        if let Err(std::sync::mpsc::RecvTimeoutError::Timeout) =
            wait.recv_timeout(std::time::Duration::from_secs(limit_secs))
        {
            eprintln!("{name}: still running after {limit_secs} s: deadlock? aborting");
            std::process::abort();
        }
    });
    Watchdog(Some(done))
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        if let Some(done) = self.0.take() {
            let _ = done.send(());
        }
    }
}

/// True if `key` lies within `lower` and `upper`.
pub fn in_bounds(
    key: &[u8],
    lower: &std::ops::Bound<Vec<u8>>,
    upper: &std::ops::Bound<Vec<u8>>,
) -> bool {
    use std::ops::Bound;
    let lo = match lower {
        Bound::Unbounded => true,
        Bound::Included(b) => key >= b.as_slice(),
        Bound::Excluded(b) => key > b.as_slice(),
    };
    let hi = match upper {
        Bound::Unbounded => true,
        Bound::Included(b) => key <= b.as_slice(),
        Bound::Excluded(b) => key < b.as_slice(),
    };
    lo && hi
}

impl Fixture {
    /// The path of data file `file` in this fixture's data directory.
    pub fn file_path(&self, file: FileId) -> std::path::PathBuf {
        self.dir.path().join(format!("{:06}.tdf", file.0))
    }
}

/// Reads page `page_no` of a data file with plain `std::fs` (use only while no pool
/// has the file open).
pub fn read_file_page(path: &std::path::Path, page_no: u32) -> Vec<u8> {
    use std::io::{Read, Seek, SeekFrom};
    let mut file = std::fs::File::open(path).unwrap();
    file.seek(SeekFrom::Start(u64::from(page_no) * u64::from(PAGE_SIZE)))
        .unwrap();
    let mut page = vec![0u8; PAGE_SIZE as usize];
    file.read_exact(&mut page).unwrap();
    page
}

/// Writes page `page_no` of a data file with plain `std::fs`, as is (no checksum).
pub fn write_file_page(path: &std::path::Path, page_no: u32, page: &[u8]) {
    use std::io::{Seek, SeekFrom, Write};
    let mut file = std::fs::OpenOptions::new().write(true).open(path).unwrap();
    file.seek(SeekFrom::Start(u64::from(page_no) * u64::from(PAGE_SIZE)))
        .unwrap();
    file.write_all(page).unwrap();
    file.sync_all().unwrap();
}

/// Pages in a data file.
pub fn file_pages(path: &std::path::Path) -> u32 {
    (std::fs::metadata(path).unwrap().len() / u64::from(PAGE_SIZE)) as u32
}

/// Edits page `page_no` of a data file with `edit`, reseals it (so its checksum is
/// valid) and writes it back; returns the original bytes (use only while no pool has
/// the file open).
pub fn edit_page(path: &std::path::Path, page_no: u32, edit: impl FnOnce(&mut [u8])) -> Vec<u8> {
    let original = read_file_page(path, page_no);
    let mut page = original.clone();
    edit(&mut page);
    tarn_io::page::seal(&mut page, page_id(page_no));
    write_file_page(path, page_no, &page);
    original
}

/// Reads a little-endian u32 at `at` of a page.
pub fn rd32(page: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(page[at..at + 4].try_into().unwrap())
}

/// Writes a little-endian u32 at `at` of a page.
pub fn wr32(page: &mut [u8], at: usize, v: u32) {
    page[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

/// Offsets in a free page (the next free page) and the meta page (free-list head and
/// count), as documented in `alloc.rs`.
pub const FREE_NEXT_AT: usize = 32;
pub const META_FREE_HEAD_AT: usize = 44;
pub const META_FREE_COUNT_AT: usize = 48;

/// The free list of the test file, read directly from the file: page numbers from
/// the head.
pub fn free_list(path: &std::path::Path) -> Vec<u32> {
    let mut out = Vec::new();
    let mut page_no = rd32(&read_file_page(path, 0), META_FREE_HEAD_AT);
    while page_no != 0 {
        out.push(page_no);
        page_no = rd32(&read_file_page(path, page_no), FREE_NEXT_AT);
    }
    out
}
