//! The meta page and page allocation for one tree file.
//!
//! Page 0 of every tree file is the meta page:
//!
//! ```text
//! offset  size  field
//!     32     4  magic "TBT1"
//!     36     4  root page number (always 1: the root never moves)
//!     40     4  next page number: the first page never allocated
//!     44     4  head of the free-page list (0 = empty)
//!     48     4  pages on the free-page list
//! ```
//!
//! Freed pages (nodes emptied by merges, overflow chains of deleted values) are
//! formatted as free pages linking to the next one, and allocation takes the head of
//! that list before growing the file.
//!
//! # Invariants
//! 1. The meta page's latch is always the last one taken: a thread holding it waits
//!    for no other latch except the shared latch on the free-list head it allocates.
//!    Writers never latch a free page (no path leads to one), but a reader may briefly
//!    share-latch a page that was freed after it read the link to it (`leaf_after`, a
//!    backward cursor); such a reader sees a page that is no node, releases it and
//!    waits for nothing while holding it, so the wait is short and cannot be a cycle.
//! 2. Every page number below `next` is exactly one of: the meta page, a page
//!    reachable from the root, a page of a live overflow chain, or a free page.

use tarn_common::{Error, PageNo, Result};
use tarn_io::PageType;

use crate::Tree;
use crate::change::{Mtr, PageChange};
use crate::node::{rd32, wr32};

pub const META: PageType = PageType(18);
pub const FREE: PageType = PageType(19);

pub(crate) const META_PAGE_NO: u32 = 0;
const MAGIC: u32 = u32::from_le_bytes(*b"TBT1");
const MAGIC_AT: usize = 32;
const ROOT_AT: usize = 36;
const NEXT_AT: usize = 40;
const FREE_HEAD_AT: usize = 44;
const FREE_COUNT_AT: usize = 48;
pub(crate) const FREE_NEXT: usize = 32;

/// The meta page's fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Meta {
    pub root: u32,
    pub next: u32,
    pub free_head: u32,
    pub free_count: u32,
}

impl Meta {
    pub(crate) fn read(p: &[u8]) -> std::result::Result<Meta, String> {
        if rd32(p, MAGIC_AT) != MAGIC {
            return Err("the meta page has no B+tree magic".into());
        }
        let meta = Meta {
            root: rd32(p, ROOT_AT),
            next: rd32(p, NEXT_AT),
            free_head: rd32(p, FREE_HEAD_AT),
            free_count: rd32(p, FREE_COUNT_AT),
        };
        if meta.root != crate::ROOT_PAGE_NO || meta.next < 2 || meta.free_head >= meta.next {
            return Err(format!("meta page fields are inconsistent: {meta:?}"));
        }
        Ok(meta)
    }

    pub(crate) fn write(&self, p: &mut [u8]) {
        wr32(p, MAGIC_AT, MAGIC);
        wr32(p, ROOT_AT, self.root);
        wr32(p, NEXT_AT, self.next);
        wr32(p, FREE_HEAD_AT, self.free_head);
        wr32(p, FREE_COUNT_AT, self.free_count);
    }
}

/// Checks a meta or free page read from disk.
pub(crate) fn validate(p: &[u8]) -> std::result::Result<(), String> {
    match tarn_io::page::page_type(p) {
        META => Meta::read(p).map(|_| ()),
        _ => Ok(()),
    }
}

impl Tree {
    fn meta_guard(&self) -> Result<tarn_buffer::PageWriteGuard<'_>> {
        self.pool
            .fetch_exclusive_as(self.page_id(META_PAGE_NO), Some(&self.alloc_latch))
    }

    pub(crate) fn read_meta(&self) -> Result<Meta> {
        let guard = self
            .pool
            .fetch_shared_as(self.page_id(META_PAGE_NO), Some(&self.alloc_latch))?;
        Meta::read(&guard).map_err(|reason| self.corrupt(META_PAGE_NO, reason))
    }

    /// Takes a page for the caller: the head of the free list, or a new page at the end
    /// of the file. The caller formats it (its old contents are garbage).
    pub(crate) fn allocate(&self, mtr: &Mtr<'_>) -> Result<u32> {
        let mut guard = self.meta_guard()?;
        let mut meta = Meta::read(&guard).map_err(|reason| self.corrupt(META_PAGE_NO, reason))?;
        let page_no = if meta.free_head != 0 {
            let head = meta.free_head;
            let free = self
                .pool
                .fetch_shared_as(self.page_id(head), Some(&self.alloc_latch))?;
            // Freed overflow chains join the list whole (see `free_chain`).
            let page_type = tarn_io::page::page_type(&free);
            if page_type != FREE && page_type != crate::overflow::OVERFLOW {
                return Err(self.corrupt(head, "the free list links to a page in use".into()));
            }
            // The list is checked before the meta page changes: a corrupt link must
            // not hand out a page in use, one past the file, or the head again.
            let next = rd32(&free, FREE_NEXT);
            if next >= meta.next || next == head {
                return Err(self.corrupt(
                    head,
                    format!(
                        "free page {head} links to page {next} (the file has {} pages)",
                        meta.next
                    ),
                ));
            }
            let count = match meta.free_count.checked_sub(1) {
                Some(count) if (count == 0) == (next == 0) => count,
                _ => {
                    return Err(self.corrupt(
                        META_PAGE_NO,
                        format!(
                            "the meta page counts {} free pages, which does not match the \
                             free list: page {head} {}",
                            meta.free_count,
                            if next == 0 {
                                "is its last"
                            } else {
                                "is not its last"
                            }
                        ),
                    ));
                }
            };
            meta.free_head = next;
            meta.free_count = count;
            head
        } else {
            if u64::from(meta.next) >= tarn_common::limits::FILE_PAGES_MAX {
                return Err(Error::OutOfResources(format!(
                    "index file {} is full",
                    self.file_id.0
                )));
            }
            meta.next += 1;
            meta.next - 1
        };
        mtr.apply(&mut guard, PageChange::SetMeta(meta));
        Ok(page_no)
    }

    /// Puts the exclusively latched page `guard` on the free list. The caller has
    /// unlinked it so that no path leads to it.
    pub(crate) fn free_page(
        &self,
        mtr: &Mtr<'_>,
        mut page: tarn_buffer::PageWriteGuard<'_>,
    ) -> Result<()> {
        let page_no = page.page_id().page_no.0;
        let mut guard = self.meta_guard()?;
        let mut meta = Meta::read(&guard).map_err(|reason| self.corrupt(META_PAGE_NO, reason))?;
        mtr.apply(
            &mut page,
            PageChange::FormatFree {
                next: meta.free_head,
            },
        );
        meta.free_head = page_no;
        meta.free_count += 1;
        mtr.apply(&mut guard, PageChange::SetMeta(meta));
        Ok(())
    }

    /// Puts the chain of pages `first ..= last` (`count` pages, linked through the
    /// next-page link that free and overflow pages share) on the free list at once.
    pub(crate) fn free_chain(
        &self,
        mtr: &Mtr<'_>,
        first: u32,
        last: u32,
        count: u32,
    ) -> Result<()> {
        let mut guard = self.meta_guard()?;
        let mut meta = Meta::read(&guard).map_err(|reason| self.corrupt(META_PAGE_NO, reason))?;
        let mut tail = self
            .pool
            .fetch_exclusive_as(self.page_id(last), Some(&self.alloc_latch))?;
        mtr.apply(
            &mut tail,
            PageChange::LinkFree {
                next: meta.free_head,
            },
        );
        drop(tail);
        meta.free_head = first;
        meta.free_count += count;
        mtr.apply(&mut guard, PageChange::SetMeta(meta));
        Ok(())
    }

    /// A new page, allocated and latched, for the caller to format.
    pub(crate) fn new_page(&self, mtr: &Mtr<'_>) -> Result<tarn_buffer::PageWriteGuard<'_>> {
        let page_no = self.allocate(mtr)?;
        let guard = self
            .pool
            .create_page(self.page_id(page_no), crate::node::LEAF)?;
        debug_assert_eq!(guard.page_id().page_no, PageNo(page_no));
        Ok(guard)
    }
}
