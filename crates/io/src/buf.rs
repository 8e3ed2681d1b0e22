//! Aligned page buffers.
//!
//! `O_DIRECT` transfers need the buffer address, the file offset and the length to be
//! multiples of the device's logical block size. Every page buffer Tarn allocates is
//! aligned to [`PAGE_BUFFER_ALIGN_BYTES`] (4 KiB), which satisfies any logical block
//! size up to 4 KiB; [`crate::file`] checks the device's actual requirement.
//!
//! Three kinds of buffer travel in an [`IoBuf`]:
//! - [`AlignedBuf`]: an owned, zeroed, aligned allocation (benchmarks, flush copies).
//! - a page of a [`PageArena`]: one large aligned allocation split into pages, which
//!   the io_uring path can register with the kernel once ("fixed buffers") so that
//!   each read does not pin and unpin user pages again.
//! - [`RawBuf`]: a pointer into memory another layer owns (the buffer pool's frames),
//!   created with an `unsafe` promise that the memory outlives the request.

use std::alloc::{self, Layout};
use std::ptr::NonNull;
use std::sync::Arc;
use std::sync::atomic::{AtomicI32, Ordering};

/// Alignment of every page buffer and arena.
pub const PAGE_BUFFER_ALIGN_BYTES: usize = 4096;

/// An owned, zero-initialised heap buffer aligned to [`PAGE_BUFFER_ALIGN_BYTES`].
pub struct AlignedBuf {
    ptr: NonNull<u8>,
    len: usize,
}

// SAFETY: `AlignedBuf` owns its allocation exclusively, like a `Box<[u8]>`.
unsafe impl Send for AlignedBuf {}
// SAFETY: shared references only allow reads through `Deref`.
unsafe impl Sync for AlignedBuf {}

impl AlignedBuf {
    /// Allocates `len` zeroed bytes (`len > 0`). Aborts on allocation failure, like `Vec`.
    pub fn zeroed(len: usize) -> Self {
        assert!(len > 0, "empty aligned buffer");
        let layout = Self::layout(len);
        // SAFETY: the layout has a non-zero size (asserted above).
        let raw = unsafe { alloc::alloc_zeroed(layout) };
        let ptr = NonNull::new(raw).unwrap_or_else(|| alloc::handle_alloc_error(layout));
        AlignedBuf { ptr, len }
    }

    fn layout(len: usize) -> Layout {
        Layout::from_size_align(len, PAGE_BUFFER_ALIGN_BYTES).expect("aligned buffer layout")
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn as_ptr(&self) -> *mut u8 {
        self.ptr.as_ptr()
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        // SAFETY: allocated in `zeroed` with exactly this layout and not freed before.
        unsafe { alloc::dealloc(self.ptr.as_ptr(), Self::layout(self.len)) }
    }
}

impl std::ops::Deref for AlignedBuf {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        // SAFETY: `ptr` is valid for `len` initialised bytes for as long as `self` lives.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl std::ops::DerefMut for AlignedBuf {
    fn deref_mut(&mut self) -> &mut [u8] {
        // SAFETY: as in `deref`, and `&mut self` guarantees exclusive access.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

/// One aligned allocation holding `page_count` pages, registrable with io_uring.
pub struct PageArena {
    memory: AlignedBuf,
    page_size_bytes: usize,
    /// The first io_uring fixed-buffer index of this arena, or -1 if not registered.
    /// Set once by [`crate::IoEngine::register_arena`].
    fixed_index_base: AtomicI32,
}

impl PageArena {
    /// Allocates an arena and returns one unique [`IoBuf`] per page. Holding the only
    /// handle to a page is what makes handing it to the kernel safe.
    pub fn with_pages(page_count: usize, page_size_bytes: usize) -> (Arc<PageArena>, Vec<IoBuf>) {
        let arena = Self::new(page_count, page_size_bytes);
        let handles = (0..page_count)
            .map(|index| IoBuf::Arena {
                arena: arena.clone(),
                index,
            })
            .collect();
        (arena, handles)
    }

    /// Allocates an arena without handing out pages; the owner addresses pages with
    /// [`PageArena::page_ptr`] and makes I/O handles with [`PageArena::page_handle`].
    pub fn new(page_count: usize, page_size_bytes: usize) -> Arc<PageArena> {
        assert!(page_size_bytes.is_multiple_of(PAGE_BUFFER_ALIGN_BYTES));
        Arc::new(PageArena {
            memory: AlignedBuf::zeroed(page_count * page_size_bytes),
            page_size_bytes,
            fixed_index_base: AtomicI32::new(-1),
        })
    }

    pub fn page_count(&self) -> usize {
        self.memory.len() / self.page_size_bytes
    }

    pub fn page_size_bytes(&self) -> usize {
        self.page_size_bytes
    }

    /// The whole arena's address range (for registration).
    pub(crate) fn memory(&self) -> (*mut u8, usize) {
        (self.memory.as_ptr(), self.memory.len())
    }

    pub(crate) fn set_fixed_index_base(&self, base: i32) {
        self.fixed_index_base.store(base, Ordering::Release);
    }

    /// The engine's io_uring fixed-buffer index covering page `index`, if registered.
    pub(crate) fn fixed_buffer(&self, index: usize) -> Option<u16> {
        let base = self.fixed_index_base.load(Ordering::Acquire);
        u32::try_from(base)
            .ok()
            .and_then(|base| self.fixed_buffer_at(base, index))
    }

    /// The fixed-buffer index covering page `index` when the arena was registered at
    /// `base` (the kernel limits one buffer to a chunk, so big arenas span several).
    pub(crate) fn fixed_buffer_at(&self, base: u32, index: usize) -> Option<u16> {
        let chunk = index * self.page_size_bytes / crate::uring::FIXED_BUFFER_CHUNK_BYTES;
        u16::try_from(base as usize + chunk).ok()
    }

    /// A pointer to the first byte of page `index`.
    pub fn page_ptr(&self, index: usize) -> *mut u8 {
        assert!(index < self.page_count(), "arena page {index} out of range");
        // SAFETY: `index * page_size` is within the allocation (asserted above).
        unsafe { self.memory.as_ptr().add(index * self.page_size_bytes) }
    }

    /// An I/O handle for page `index`.
    ///
    /// # Safety
    /// While the returned handle (or the request carrying it) exists, nothing else may
    /// read or write page `index` of this arena.
    pub unsafe fn page_handle(self: &Arc<Self>, index: usize) -> IoBuf {
        assert!(index < self.page_count(), "arena page {index} out of range");
        IoBuf::Arena {
            arena: self.clone(),
            index,
        }
    }
}

/// A buffer owned by another layer, lent to one I/O request.
pub struct RawBuf {
    ptr: NonNull<u8>,
    len: usize,
}

// SAFETY: the creator of a `RawBuf` promises exclusive access for the request's life
// (see `RawBuf::new`), so moving it to an I/O thread is like moving a `&mut [u8]`.
unsafe impl Send for RawBuf {}

impl RawBuf {
    /// # Safety
    /// `ptr` must be valid for reads and writes of `len` bytes, aligned to
    /// [`PAGE_BUFFER_ALIGN_BYTES`], and nothing else may access those bytes until the
    /// request carrying this buffer has completed.
    pub unsafe fn new(ptr: *mut u8, len: usize) -> Self {
        assert!(
            (ptr as usize).is_multiple_of(PAGE_BUFFER_ALIGN_BYTES),
            "unaligned raw buffer"
        );
        RawBuf {
            ptr: NonNull::new(ptr).expect("null raw buffer"),
            len,
        }
    }
}

/// The buffer of one I/O request; returned to the submitter with the completion.
pub enum IoBuf {
    Owned(AlignedBuf),
    Arena { arena: Arc<PageArena>, index: usize },
    Raw(RawBuf),
}

impl IoBuf {
    pub fn len(&self) -> usize {
        match self {
            IoBuf::Owned(buf) => buf.len(),
            IoBuf::Arena { arena, .. } => arena.page_size_bytes,
            IoBuf::Raw(raw) => raw.len,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub(crate) fn as_mut_ptr(&mut self) -> *mut u8 {
        match self {
            IoBuf::Owned(buf) => buf.as_ptr(),
            IoBuf::Arena { arena, index } => arena.page_ptr(*index),
            IoBuf::Raw(raw) => raw.ptr.as_ptr(),
        }
    }

    /// The engine's io_uring fixed-buffer index covering this buffer, if it has one.
    pub(crate) fn fixed_buffer(&self) -> Option<u16> {
        self.arena_page()
            .and_then(|(arena, index)| arena.fixed_buffer(index))
    }

    /// The arena and page index, for a buffer that is a page of an arena.
    pub(crate) fn arena_page(&self) -> Option<(&Arc<PageArena>, usize)> {
        match self {
            IoBuf::Arena { arena, index } => Some((arena, *index)),
            _ => None,
        }
    }

    pub fn as_slice(&self) -> &[u8] {
        match self {
            IoBuf::Owned(buf) => buf,
            // SAFETY: an arena handle is unique (`PageArena::with_pages`) or was created
            // under `page_handle`'s exclusivity promise; a raw buffer under `RawBuf::new`'s.
            // Either way no one else accesses these bytes while `self` exists.
            _ => unsafe {
                let len = self.len();
                std::slice::from_raw_parts(self.ptr_for_read(), len)
            },
        }
    }

    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        let len = self.len();
        let ptr = self.as_mut_ptr();
        // SAFETY: as in `as_slice`; `&mut self` makes this the only access path.
        unsafe { std::slice::from_raw_parts_mut(ptr, len) }
    }

    fn ptr_for_read(&self) -> *const u8 {
        match self {
            IoBuf::Owned(buf) => buf.as_ptr(),
            IoBuf::Arena { arena, index } => arena.page_ptr(*index),
            IoBuf::Raw(raw) => raw.ptr.as_ptr(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_are_aligned_zeroed_and_arena_pages_are_disjoint() {
        let buf = AlignedBuf::zeroed(16384);
        assert_eq!(buf.as_ptr() as usize % PAGE_BUFFER_ALIGN_BYTES, 0);
        assert!(buf.iter().all(|&b| b == 0));

        let (arena, mut pages) = PageArena::with_pages(3, 8192);
        assert_eq!(arena.page_count(), 3);
        for (i, page) in pages.iter_mut().enumerate() {
            page.as_mut_slice().fill(i as u8 + 1);
        }
        for (i, page) in pages.iter().enumerate() {
            assert!(page.as_slice().iter().all(|&b| b == i as u8 + 1));
        }
    }
}
