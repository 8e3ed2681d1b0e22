//! The log buffer: lock-free reservation, concurrent copy, and the copied frontier.
//!
//! An appender reserves `[start, end)` with one `fetch_add` on `reserved`, copies its
//! record into the ring buffer (or, on `pmem`, straight into the mapped files) with no
//! lock held, and then *publishes* the range by storing `end` into the link slot of
//! `start` (InnoDB's `recent_written` link buffer). The copied frontier `copied` is the
//! end of the longest prefix of the log whose every byte has been copied: any thread
//! may advance it by following links from the frontier, one compare-and-swap per
//! record, so no global mutex sits on the append path.
//!
//! # Invariants
//!
//! 1. `copied <= reserved`; both only grow.
//! 2. Every byte of `[written, copied)` (see `wal`) is in the buffer and immutable
//!    until `written` passes it: an appender copies into the ring only once
//!    `end <= written + ring_bytes`.
//! 3. A link slot holds either 0, a stale end `<= frontier` of an older lap, or the
//!    end of the record that starts at the slot's position: an appender uses the slot
//!    of `start` only once `start < copied + LINK_WINDOW_BYTES`, so two records
//!    starting in the window never share a slot, and a slot is cleared (by
//!    compare-and-swap, so a newer link is never lost) once the frontier passes it.

use std::sync::atomic::{AtomicU64, Ordering};

use tarn_common::Result;
use tarn_io::pmem::Mapping;

use crate::format::RECORD_ALIGN_BYTES;

/// How far ahead of the copied frontier a record may start: the link buffer covers
/// this many bytes of log, one slot per 8 bytes (2 MiB of slots).
pub(crate) const LINK_WINDOW_BYTES: u64 = 2 << 20;
const LINK_SLOTS: usize = (LINK_WINDOW_BYTES / RECORD_ALIGN_BYTES) as usize;

/// A value alone on its own pair of cache lines.
#[repr(align(128))]
pub(crate) struct Padded<T>(pub T);

impl<T> std::ops::Deref for Padded<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

pub(crate) struct LogBuffer {
    /// The end of the last reservation: the next record starts here.
    pub reserved: Padded<AtomicU64>,
    /// Every byte below this has been copied (and, on pmem, flushed).
    pub copied: Padded<AtomicU64>,
    links: Box<[AtomicU64]>,
    /// The in-memory ring; `None` on pmem, where records go straight to the files.
    ring: Option<Mapping>,
}

impl LogBuffer {
    pub fn new(start_lsn: u64, ring_bytes: Option<usize>) -> Result<LogBuffer> {
        let ring = match ring_bytes {
            Some(n) => Some(Mapping::anonymous(n)?),
            None => None,
        };
        Ok(LogBuffer {
            reserved: Padded(AtomicU64::new(start_lsn)),
            copied: Padded(AtomicU64::new(start_lsn)),
            links: (0..LINK_SLOTS).map(|_| AtomicU64::new(0)).collect(),
            ring,
        })
    }

    #[inline]
    fn slot(&self, lsn: u64) -> &AtomicU64 {
        &self.links[(lsn / RECORD_ALIGN_BYTES) as usize % LINK_SLOTS]
    }

    /// Bytes of the in-memory ring (0 on pmem).
    pub fn ring_bytes(&self) -> u64 {
        self.ring.as_ref().map_or(0, |r| r.len() as u64)
    }

    /// Reserves `len` bytes of log; returns the start.
    #[inline]
    pub fn reserve(&self, len: u64) -> u64 {
        self.reserved.fetch_add(len, Ordering::SeqCst)
    }

    /// True if a record starting at `start` may use its link slot (invariant 3).
    #[inline]
    pub fn link_ready(&self, start: u64) -> bool {
        start < self.copied.load(Ordering::Acquire) + LINK_WINDOW_BYTES
    }

    /// Marks `[start, end)` copied. Everything the caller stored before happens-before
    /// any thread that sees the frontier pass `start`.
    #[inline]
    pub fn publish(&self, start: u64, end: u64) {
        self.slot(start).store(end, Ordering::Release);
    }

    /// Follows links from the copied frontier as far as they go; returns the frontier.
    pub fn advance_copied(&self) -> u64 {
        let mut frontier = self.copied.load(Ordering::Acquire);
        loop {
            let slot = self.slot(frontier);
            let end = slot.load(Ordering::Acquire);
            if end <= frontier {
                return frontier;
            }
            match self
                .copied
                .compare_exchange(frontier, end, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => {
                    // Fails harmlessly if a record one window later already linked here.
                    let _ = slot.compare_exchange(end, 0, Ordering::AcqRel, Ordering::Relaxed);
                    frontier = end;
                }
                Err(current) => frontier = current,
            }
        }
    }

    /// Copies `bytes` into the ring at `lsn`, wrapping at its end.
    pub fn ring_put(&self, lsn: u64, bytes: &[u8]) {
        let ring = self.ring.as_ref().expect("file devices have a ring buffer");
        let len = ring.len() as u64;
        let offset = (lsn % len) as usize;
        let first = bytes.len().min(ring.len() - offset);
        ring.write_at(offset, &bytes[..first]);
        if first < bytes.len() {
            ring.write_at(0, &bytes[first..]);
        }
    }

    /// Copies ring bytes at `lsn` into `out`, wrapping at the ring's end.
    pub fn ring_get(&self, lsn: u64, out: &mut [u8]) {
        let ring = self.ring.as_ref().expect("file devices have a ring buffer");
        let len = ring.len() as u64;
        let offset = (lsn % len) as usize;
        let first = out.len().min(ring.len() - offset);
        ring.read_at(offset, &mut out[..first]);
        if first < out.len() {
            ring.read_at(0, &mut out[first..]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frontier_follows_links_out_of_order() {
        let b = LogBuffer::new(64, Some(4096)).expect("buffer");
        let a = b.reserve(32);
        let c = b.reserve(40);
        let d = b.reserve(8);
        b.publish(c, c + 40);
        assert_eq!(b.advance_copied(), 64);
        b.publish(a, a + 32);
        assert_eq!(b.advance_copied(), c + 40);
        b.publish(d, d + 8);
        assert_eq!(b.advance_copied(), 64 + 80);
        assert!(b.link_ready(b.reserve(8)));
    }

    #[test]
    fn ring_wraps() {
        let b = LogBuffer::new(64, Some(64)).expect("buffer");
        b.ring_put(60, b"abcdefgh");
        let mut out = [0u8; 8];
        b.ring_get(60, &mut out);
        assert_eq!(&out, b"abcdefgh");
    }
}
