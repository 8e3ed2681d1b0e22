//! Tarn's B+tree: one index per data file, keys and values as bytes.
//!
//! Keys compare as plain bytes (`tarn-row` encodes SQL values so that byte order is
//! SQL order), so the tree never decodes a key. Leaves hold the entries and are
//! linked both ways at every level; inner nodes hold separators and child pointers.
//!
//! - [`node`]: the slotted page layout and its validation.
//! - [`change`]: the one place pages change ([`change::PageChange`], [`change::Mtr`]),
//!   where the WAL will log redo records.
//! - `alloc`: the meta page, page allocation and the free-page list.
//! - `tree`: point operations, splits, merges and refills, with latch coupling.
//! - [`cursor`]: range cursors, forward and backward.
//! - [`scan`]: leaf partitioning and read-ahead for the parallel full scan (S1), and
//!   level-1 lookups for secondary-index prefetch (S2).
//! - `bulk`: bottom-up bulk build from sorted input.
//! - `overflow`: chains of overflow pages for large values.
//! - `check`: `check_invariants`.
//!
//! # Invariants
//! 1. Page 0 is the meta page and page 1 the root, for the life of the file.
//! 2. Every entry is at most [`node::max_entry_bytes`], so a node holds at least four.
//! 3. Latches are taken top-down and left to right (see `tree`), and no tree-wide latch
//!    exists. The only latches held across I/O are page latches: those on the path
//!    (a parent stays latched while its child is read from disk) and the meta page's,
//!    which allocation holds while it reads the free-list head (see `alloc`).

#![forbid(unsafe_code)]

use std::sync::Arc;

use tarn_buffer::BufferPool;
use tarn_common::latch::LatchStats;
use tarn_common::{Error, FileId, PageId, PageNo, Result};

pub mod change;
pub mod cursor;
pub mod node;
pub mod scan;

mod alloc;
mod bulk;
mod check;
mod overflow;
mod tree;

pub use alloc::Meta;
pub use change::{NoRedo, PageChange, Redo, replay};
pub use check::TreeStats;
pub use cursor::{Bound, Cursor, Direction};
pub use overflow::overflow_capacity_bytes;
pub use scan::{LeafRange, ScanStats};

/// The root's page number, fixed for the life of a tree.
pub const ROOT_PAGE_NO: u32 = 1;

/// Levels a tree may have. With entries at most a quarter page, every inner node has
/// at least three children, so 32 levels hold more entries than a file has pages.
pub const TREE_HEIGHT_MAX: usize = 32;

/// A B+tree stored in one data file.
pub struct Tree {
    pool: Arc<BufferPool>,
    file_id: FileId,
    redo: Arc<dyn Redo>,
    page_size_bytes: usize,
    /// Name used in errors (e.g. "db.t.PRIMARY").
    name: String,
    /// Waits for node page latches ("btree.page").
    page_latch: Arc<LatchStats>,
    /// Waits for the meta page's latch: page allocation ("btree.alloc").
    alloc_latch: Arc<LatchStats>,
}

impl Tree {
    /// Creates an empty tree in the (new, empty) file `file_id`.
    pub fn create(
        pool: Arc<BufferPool>,
        file_id: FileId,
        redo: Arc<dyn Redo>,
        name: &str,
    ) -> Result<Tree> {
        let tree = Tree::new(pool, file_id, redo, name);
        let mtr = change::Mtr::group(&*tree.redo);
        let mut meta = tree.pool.create_page(tree.page_id(0), alloc::META)?;
        mtr.apply(
            &mut meta,
            PageChange::SetMeta(Meta {
                root: ROOT_PAGE_NO,
                next: ROOT_PAGE_NO + 1,
                free_head: 0,
                free_count: 0,
            }),
        );
        drop(meta);
        let mut root = tree
            .pool
            .create_page(tree.page_id(ROOT_PAGE_NO), node::LEAF)?;
        tree.rebuild(&mtr, &mut root, 0, 0, 0, 0, &[]);
        drop(root);
        drop(mtr);
        Ok(tree)
    }

    /// Opens the tree in file `file_id`, checking its meta page.
    pub fn open(
        pool: Arc<BufferPool>,
        file_id: FileId,
        redo: Arc<dyn Redo>,
        name: &str,
    ) -> Result<Tree> {
        let tree = Tree::new(pool, file_id, redo, name);
        tree.read_meta()?;
        Ok(tree)
    }

    fn new(pool: Arc<BufferPool>, file_id: FileId, redo: Arc<dyn Redo>, name: &str) -> Tree {
        let latches = pool.datadir().latches().clone();
        install_validator(&pool);
        Tree {
            page_size_bytes: pool.page_size_bytes(),
            pool,
            file_id,
            redo,
            name: name.to_string(),
            page_latch: latches.register("btree.page", None),
            alloc_latch: latches.register("btree.alloc", None),
        }
    }

    pub fn file_id(&self) -> FileId {
        self.file_id
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn pool(&self) -> &Arc<BufferPool> {
        &self.pool
    }

    pub fn page_size_bytes(&self) -> usize {
        self.page_size_bytes
    }

    /// The longest key this tree accepts.
    pub fn max_key_bytes(&self) -> usize {
        node::max_entry_bytes(self.page_size_bytes) - node::CHILD_BYTES
    }

    /// The longest key plus value this tree accepts.
    pub fn max_entry_bytes(&self) -> usize {
        node::max_entry_bytes(self.page_size_bytes)
    }

    pub(crate) fn page_id(&self, page_no: u32) -> PageId {
        PageId::new(self.file_id, PageNo(page_no))
    }

    pub(crate) fn corrupt(&self, page_no: u32, reason: String) -> Error {
        Error::PageCorrupt {
            file: self.pool.datadir().file_path(self.file_id),
            page_id: self.page_id(page_no),
            reason,
        }
    }

    /// Inserts a new entry; fails with [`Error::DuplicateKey`] if `key` exists.
    pub fn insert(&self, key: &[u8], value: &[u8]) -> Result<()> {
        self.write(
            key,
            tree::WriteOp::Insert {
                value,
                replace: false,
            },
        )
        .map(|_| ())
    }

    /// Inserts or replaces; returns the old value if the key existed.
    pub fn upsert(&self, key: &[u8], value: &[u8]) -> Result<Option<Vec<u8>>> {
        Ok(
            match self.write(
                key,
                tree::WriteOp::Insert {
                    value,
                    replace: true,
                },
            )? {
                tree::WriteOutcome::Replaced(old) => Some(old),
                _ => None,
            },
        )
    }

    /// Replaces the value of an existing key; returns the old value, or `None` (and
    /// changes nothing) if the key does not exist.
    pub fn update(&self, key: &[u8], value: &[u8]) -> Result<Option<Vec<u8>>> {
        Ok(match self.write(key, tree::WriteOp::Update { value })? {
            tree::WriteOutcome::Replaced(old) => Some(old),
            _ => None,
        })
    }

    /// Deletes `key`; returns its value if it existed.
    pub fn delete(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        Ok(match self.write(key, tree::WriteOp::Delete)? {
            tree::WriteOutcome::Deleted(old) => Some(old),
            _ => None,
        })
    }

    /// The meta page's fields (page counts, free list).
    pub fn meta(&self) -> Result<Meta> {
        self.read_meta()
    }
}

/// Installs the structural check for tree pages on the pool. Idempotent: every tree
/// calls it when created or opened, the pool keeps the first validator it is given and
/// ignores later ones, and the validator is always [`validate_page`], so a refused
/// call only means an earlier tree on the pool installed it. (Nothing else in Tarn
/// sets a pool's validator; a layer that owned other page formats would have to chain
/// to `validate_page`, which passes page types it does not know.)
fn install_validator(pool: &BufferPool) {
    // `false`: already installed, by an earlier tree on this pool (see above).
    let _first = pool.set_validator(Arc::new(validate_page));
}

/// Checks a page read from disk: nodes, meta and overflow pages; other types pass.
pub fn validate_page(p: &[u8]) -> std::result::Result<(), String> {
    match tarn_io::page::page_type(p) {
        node::LEAF | node::INNER => node::Node::new(p).validate(),
        alloc::META => alloc::validate(p),
        overflow::OVERFLOW => overflow::validate(p),
        _ => Ok(()),
    }
}

/// A key for an error message: printable ASCII as is, anything else in hex.
pub fn display_key(key: &[u8]) -> String {
    if key.iter().all(|b| b.is_ascii_graphic() || *b == b' ') {
        String::from_utf8_lossy(key).into_owned()
    } else {
        key.iter().map(|b| format!("{b:02x}")).collect()
    }
}
