//! Latched access to a page: shared, exclusive, or optimistic.
//!
//! A guard holds a pin and a latch on one frame and releases both when dropped. While a
//! [`PageReadGuard`] exists no thread can change the page; while a [`PageWriteGuard`]
//! exists no other thread can read it (except optimistic readers, who will fail
//! validation). An [`OptimisticPage`] holds neither: it is a view for the duration of
//! one closure, whose reads may be torn and are discarded unless the latch version is
//! unchanged afterwards.

use std::marker::PhantomData;
use std::ops::{Deref, DerefMut};

use tarn_common::{Lsn, PageId};
use tarn_io::page;

use crate::instance::Instance;

/// A page held under a shared latch.
pub struct PageReadGuard<'a> {
    pub(crate) instance: &'a Instance,
    pub(crate) frame: u32,
    pub(crate) page_id: PageId,
}

impl PageReadGuard<'_> {
    pub fn page_id(&self) -> PageId {
        self.page_id
    }

    pub fn lsn(&self) -> Lsn {
        page::page_lsn(self)
    }
}

impl Deref for PageReadGuard<'_> {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        let len = self.instance.arena.page_size_bytes();
        // SAFETY: the frame is pinned (never evicted or reused) and shared-latched (no
        // writer), and the arena outlives the pool that `'_` borrows.
        unsafe { std::slice::from_raw_parts(self.instance.page_ptr(self.frame), len) }
    }
}

impl Drop for PageReadGuard<'_> {
    fn drop(&mut self) {
        let frame = self.instance.frame(self.frame);
        frame.latch.unlock_shared();
        frame.unpin();
    }
}

/// A page held under an exclusive latch.
pub struct PageWriteGuard<'a> {
    pub(crate) instance: &'a Instance,
    pub(crate) frame: u32,
    pub(crate) page_id: PageId,
}

impl PageWriteGuard<'_> {
    pub fn page_id(&self) -> PageId {
        self.page_id
    }

    pub fn lsn(&self) -> Lsn {
        page::page_lsn(self)
    }

    /// Records that the page was changed by the log record at `lsn` (> 0): stamps the
    /// page header and puts the page on its instance's flush list if it was clean.
    /// The page will be written back only once the log is durable up to `lsn`.
    pub fn mark_dirty(&mut self, lsn: Lsn) {
        self.mark_changed(lsn, lsn);
    }

    /// Records that the page was changed by the log record from `start` to `end`:
    /// stamps the page with `end` (the log must be durable to it before the page is
    /// written), and if the page was clean, enters it in the flush list at `start` (a
    /// checkpoint must not pass the start of a record whose change is not on disk).
    pub fn mark_changed(&mut self, start: Lsn, end: Lsn) {
        assert!(
            start.0 > 0 && start <= end,
            "a change needs a non-zero LSN range, got {start}..{end}"
        );
        page::set_page_lsn(self, end);
        self.instance.mark_dirty(self.frame, start, end);
    }
}

impl Deref for PageWriteGuard<'_> {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        let len = self.instance.arena.page_size_bytes();
        // SAFETY: pinned and exclusively latched: this guard is the only accessor.
        unsafe { std::slice::from_raw_parts(self.instance.page_ptr(self.frame), len) }
    }
}

impl DerefMut for PageWriteGuard<'_> {
    fn deref_mut(&mut self) -> &mut [u8] {
        let len = self.instance.arena.page_size_bytes();
        // SAFETY: pinned and exclusively latched, and `&mut self` is unique.
        unsafe { std::slice::from_raw_parts_mut(self.instance.page_ptr(self.frame), len) }
    }
}

impl Drop for PageWriteGuard<'_> {
    fn drop(&mut self) {
        let frame = self.instance.frame(self.frame);
        frame.latch.unlock_exclusive();
        frame.unpin();
    }
}

/// A view of a page during an optimistic read. Every read copies bytes out with
/// volatile loads; a concurrent writer may make them inconsistent, in which case the
/// pool discards the closure's result and retries.
pub struct OptimisticPage<'a> {
    ptr: *const u8,
    len: usize,
    _borrow: PhantomData<&'a [u8]>,
}

impl<'a> OptimisticPage<'a> {
    /// # Safety
    /// `ptr` must be valid for reads of `len` bytes for `'a` (a frame of a live arena).
    pub(crate) unsafe fn new(ptr: *const u8, len: usize) -> Self {
        OptimisticPage {
            ptr,
            len,
            _borrow: PhantomData,
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Copies `out.len()` bytes starting at `offset`.
    ///
    /// # Panics
    /// If the range is outside the page.
    pub fn read_into(&self, offset: usize, out: &mut [u8]) {
        let end = offset.checked_add(out.len()).expect("range overflows");
        assert!(end <= self.len, "optimistic read past the end of the page");
        for (index, byte) in out.iter_mut().enumerate() {
            // SAFETY: `offset + index < len`, inside the frame (constructor contract).
            // A volatile load of a byte a writer may be changing is the seqlock pattern:
            // the value may be stale or mixed, and validation discards it if so.
            *byte = unsafe { std::ptr::read_volatile(self.ptr.add(offset + index)) };
        }
    }

    pub fn read_u16_le(&self, offset: usize) -> u16 {
        let mut bytes = [0u8; 2];
        self.read_into(offset, &mut bytes);
        u16::from_le_bytes(bytes)
    }

    pub fn read_u32_le(&self, offset: usize) -> u32 {
        let mut bytes = [0u8; 4];
        self.read_into(offset, &mut bytes);
        u32::from_le_bytes(bytes)
    }

    pub fn read_u64_le(&self, offset: usize) -> u64 {
        let mut bytes = [0u8; 8];
        self.read_into(offset, &mut bytes);
        u64::from_le_bytes(bytes)
    }
}
