//! Overflow pages: values too large to keep in a leaf, stored as a chain of pages.
//!
//! ```text
//! offset  size  field (after the 32-byte page header)
//!     32     4  next page of the chain (0 = last)
//!     36     4  bytes of data in this page
//!     40     -  data
//! ```
//!
//! A chain belongs to exactly one row version; the row holds its first page number
//! and total length, and frees the chain when the value is deleted or replaced.

use tarn_common::{Error, Result};
use tarn_io::PageType;

use crate::Tree;
use crate::change::{Mtr, PageChange};
use crate::node::{rd32, wr32};

pub const OVERFLOW: PageType = PageType(20);

const NEXT_AT: usize = 32;
const LEN_AT: usize = 36;
const DATA_AT: usize = 40;

/// Data bytes one overflow page holds.
pub fn overflow_capacity_bytes(page_size_bytes: usize) -> usize {
    page_size_bytes - DATA_AT
}

pub(crate) fn write_page(p: &mut [u8], next: u32, data: &[u8]) {
    wr32(p, NEXT_AT, next);
    wr32(p, LEN_AT, data.len() as u32);
    p[DATA_AT..DATA_AT + data.len()].copy_from_slice(data);
}

pub(crate) fn validate(p: &[u8]) -> std::result::Result<(), String> {
    let len = rd32(p, LEN_AT) as usize;
    if len > overflow_capacity_bytes(p.len()) {
        return Err(format!("overflow page claims {len} bytes of data"));
    }
    Ok(())
}

impl Tree {
    /// Stores `bytes` in a new chain of overflow pages; returns its first page. Each
    /// page is allocated and formatted by its own small mini-transaction, so the log
    /// never holds a group as large as the value (a group's pages stay unwritable until
    /// it ends, and a value may be larger than the buffer pool). A crash part-way
    /// leaves the pages taken so far allocated but unreachable (leaked space, never a
    /// dangling reference: the row that will point at the chain is written after it).
    /// If allocating or creating a page fails, the pages taken so far are freed again
    /// (best effort) before the error is returned.
    pub fn write_overflow(&self, bytes: &[u8]) -> Result<u32> {
        let chunks: Vec<&[u8]> = bytes
            .chunks(overflow_capacity_bytes(self.page_size_bytes))
            .collect();
        if chunks.is_empty() {
            return Err(Error::InvalidDefinition("an empty overflow value".into()));
        }
        let mut pages = Vec::with_capacity(chunks.len());
        let written = self.write_chain(&chunks, &mut pages);
        if let Err(error) = written {
            self.give_back(&pages);
            return Err(error);
        }
        Ok(pages[0])
    }

    /// Allocates a page per chunk (recording each in `pages` as it is taken), then
    /// writes the chain.
    fn write_chain(&self, chunks: &[&[u8]], pages: &mut Vec<u32>) -> Result<()> {
        for _ in chunks {
            pages.push(self.allocate(&Mtr::group(&*self.redo))?);
        }
        for (i, chunk) in chunks.iter().enumerate() {
            let next = pages.get(i + 1).copied().unwrap_or(0);
            let mut guard = self.pool.create_page(self.page_id(pages[i]), OVERFLOW)?;
            Mtr::new(&*self.redo)
                .apply(&mut guard, PageChange::FormatOverflow { next, data: chunk });
        }
        Ok(())
    }

    /// Frees the allocated pages of a chain whose writing failed. Each page is taken
    /// with `create_page` (whatever it holds, written or not, is overwritten by the
    /// free-page format). Best effort: a page that cannot be freed stays allocated.
    fn give_back(&self, pages: &[u32]) {
        for &page_no in pages {
            if let Ok(guard) = self.pool.create_page(self.page_id(page_no), OVERFLOW) {
                let _ = self.free_page(&Mtr::group(&*self.redo), guard);
            }
        }
    }

    /// Reads the `len_bytes`-byte value whose chain starts at `first_page_no`. The walk
    /// reads at most the pages such a value needs (every page but the last is full),
    /// so a corrupt chain (a cycle, a page of no data) is an error, never a loop.
    pub fn read_overflow(
        &self,
        first_page_no: u32,
        len_bytes: u64,
        out: &mut Vec<u8>,
    ) -> Result<()> {
        let capacity = overflow_capacity_bytes(self.page_size_bytes) as u64;
        let pages_max = len_bytes.div_ceil(capacity);
        let mut pages = 0u64;
        let mut page_no = first_page_no;
        let start = out.len();
        while ((out.len() - start) as u64) < len_bytes {
            if page_no == 0 {
                return Err(self.corrupt(
                    first_page_no,
                    format!(
                        "overflow chain ends after {} of {len_bytes} bytes",
                        out.len() - start
                    ),
                ));
            }
            if pages == pages_max {
                return Err(self.corrupt(
                    page_no,
                    format!(
                        "overflow chain from page {first_page_no} holds only {} of \
                         {len_bytes} bytes in the {pages_max} pages the value takes",
                        out.len() - start
                    ),
                ));
            }
            let guard = self
                .pool
                .fetch_shared_as(self.page_id(page_no), Some(&self.page_latch))?;
            if tarn_io::page::page_type(&guard) != OVERFLOW {
                return Err(self.corrupt(
                    page_no,
                    "an overflow chain links to a page of another type".into(),
                ));
            }
            let len = rd32(&guard, LEN_AT) as usize;
            let next = rd32(&guard, NEXT_AT);
            if len == 0 && next != 0 {
                return Err(self.corrupt(
                    page_no,
                    "an overflow page other than the last holds no data".into(),
                ));
            }
            out.extend_from_slice(&guard[DATA_AT..DATA_AT + len]);
            pages += 1;
            page_no = next;
        }
        if (out.len() - start) as u64 != len_bytes {
            return Err(self.corrupt(
                first_page_no,
                "an overflow chain is longer than its value".into(),
            ));
        }
        Ok(())
    }

    /// Frees the overflow chain starting at `first_page_no`: the whole chain joins
    /// the free list at once (its last page is linked to the old head, and the meta
    /// page names its first page), in one mini-transaction of two records whatever
    /// the chain's length. Free and overflow pages keep their next-page link at the
    /// same offset, so the allocator walks both alike. A chain cannot have more pages
    /// than the file, so a walk longer than that (a cycle) stops with an error.
    pub fn free_overflow(&self, first_page_no: u32) -> Result<()> {
        let file_pages = self.read_meta()?.next;
        let mut count = 0u32;
        let mut page_no = first_page_no;
        let tail = loop {
            if count >= file_pages || page_no == 0 || page_no >= file_pages {
                return Err(self.corrupt(
                    page_no,
                    format!(
                        "the overflow chain from page {first_page_no} has more pages than \
                         the file's {file_pages}, or links outside it"
                    ),
                ));
            }
            let guard = self
                .pool
                .fetch_shared_as(self.page_id(page_no), Some(&self.page_latch))?;
            if tarn_io::page::page_type(&guard) != OVERFLOW {
                return Err(self.corrupt(
                    page_no,
                    "an overflow chain links to a page of another type".into(),
                ));
            }
            count += 1;
            let next = rd32(&guard, NEXT_AT);
            if next == 0 {
                break page_no;
            }
            page_no = next;
        };
        self.free_chain(&Mtr::group(&*self.redo), first_page_no, tail, count)
    }
}
