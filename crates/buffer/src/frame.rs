//! A frame: one page-sized slot of an instance's arena, and the state that goes with it.
//!
//! ```text
//!            acquire_free_frame            read completes
//!   FREE  ---------------------->  READING  ------------->  RESIDENT
//!    ^     (page id set, in table,    |      (io = NONE,      |   |
//!    |      X latch held by the I/O)  |       latch released) |   | mark_dirty
//!    |                                | read fails            |   v
//!    +--------------------------------+                       | DIRTY (in flush list)
//!    |                 try_evict (pins 0, clean, X latch)     |   | write-back
//!    +--------------------------------------------------------+---+
//! ```
//!
//! # The pin protocol
//!
//! A thread that found a frame through the lock-free page table pins it by incrementing
//! `pins` and *then* re-reading `page_id`. An evictor sets `page_id` to [`NO_PAGE`] and
//! *then* reads `pins`. All four accesses are sequentially consistent, so at least one
//! side sees the other: either the pinner sees `NO_PAGE` and backs off, or the evictor
//! sees the pin and gives the frame back its page. A pinned frame is never evicted.
//!
//! Optimistic readers do not pin. They are protected by the latch version: eviction
//! takes the frame's exclusive latch, which changes the version, so a reader that
//! overlapped an eviction fails validation and retries.

use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU32, AtomicU64, Ordering};

use parking_lot_core::{DEFAULT_PARK_TOKEN, DEFAULT_UNPARK_TOKEN};
use tarn_common::{Lsn, PageId};

use crate::latch::PageLatch;

/// `page_id` of a frame that holds no page.
pub(crate) const NO_PAGE: u64 = u64::MAX;

pub(crate) const IO_NONE: u8 = 0;
pub(crate) const IO_READING: u8 = 1;

pub(crate) struct Frame {
    pub(crate) latch: PageLatch,
    pub(crate) page_id: AtomicU64,
    pub(crate) pins: AtomicU32,
    pub(crate) io: AtomicU8,
    /// A copy of this page is being written; the frame must not be evicted (a reread
    /// from disk could return the older version still on disk).
    pub(crate) write_pending: AtomicBool,
    /// LSN of the oldest change not yet written to disk; 0 when clean.
    pub(crate) oldest_lsn: AtomicU64,
    /// LSN of the newest change; the log must be durable up to it before a write.
    pub(crate) newest_lsn: AtomicU64,
    /// Milliseconds since the pool started (plus one) of the first access after the
    /// page was read; 0 if not accessed yet. Drives promotion out of the old sublist.
    pub(crate) first_access_ms: AtomicU64,
}

impl Frame {
    pub(crate) fn new() -> Self {
        Frame {
            latch: PageLatch::new(),
            page_id: AtomicU64::new(NO_PAGE),
            pins: AtomicU32::new(0),
            io: AtomicU8::new(IO_NONE),
            write_pending: AtomicBool::new(false),
            oldest_lsn: AtomicU64::new(0),
            newest_lsn: AtomicU64::new(0),
            first_access_ms: AtomicU64::new(0),
        }
    }

    /// Pins the frame if it still holds `page_id`.
    #[inline]
    pub(crate) fn try_pin(&self, page_id: PageId) -> bool {
        self.pins.fetch_add(1, Ordering::SeqCst);
        if self.page_id.load(Ordering::SeqCst) == page_id.to_u64() {
            return true;
        }
        self.unpin();
        false
    }

    #[inline]
    pub(crate) fn unpin(&self) {
        let previous = self.pins.fetch_sub(1, Ordering::Release);
        debug_assert!(previous > 0, "unpinning an unpinned frame");
    }

    pub(crate) fn holds(&self, page_id: PageId) -> bool {
        self.page_id.load(Ordering::Acquire) == page_id.to_u64()
    }

    pub(crate) fn is_dirty(&self) -> bool {
        self.oldest_lsn.load(Ordering::Acquire) != 0
    }

    pub(crate) fn newest_lsn(&self) -> Lsn {
        Lsn(self.newest_lsn.load(Ordering::Acquire))
    }

    /// Blocks until the read filling this frame has finished.
    pub(crate) fn wait_for_read(&self) {
        while self.io.load(Ordering::Acquire) == IO_READING {
            let key = &self.io as *const AtomicU8 as usize;
            // SAFETY: `key` is only a parking key; the validate callback reads an atomic.
            unsafe {
                parking_lot_core::park(
                    key,
                    || self.io.load(Ordering::Acquire) == IO_READING,
                    || {},
                    |_, _| {},
                    DEFAULT_PARK_TOKEN,
                    None,
                );
            }
        }
    }

    /// Marks the read finished and wakes every thread in `wait_for_read`.
    pub(crate) fn finish_read(&self) {
        self.io.store(IO_NONE, Ordering::Release);
        let key = &self.io as *const AtomicU8 as usize;
        // SAFETY: `key` is only a parking key.
        unsafe {
            parking_lot_core::unpark_all(key, DEFAULT_UNPARK_TOKEN);
        }
    }
}
