//! One buffer-pool instance: its frames, page table, lists and latches.
//!
//! A page belongs to instance `hash(page id) mod n`, and everything about it (its
//! frame, table entry, list positions) lives in that instance, behind that instance's
//! latches. Nothing an instance does takes another instance's latch, so instances never
//! contend with each other (technique S4).
//!
//! Latches and their order (a thread holding one may take only those below it):
//!
//! 1. `lru` ("buffer.lru"): the LRU list and the free list.
//! 2. `table_latch` ("buffer.page_table"): changes to the page table (lookups take none).
//! 3. `flush_list` ("buffer.flush_list"): dirty frames ordered by oldest change LSN.
//!
//! Page latches ("buffer.page") are taken only by threads that hold none of the above,
//! except `try_lock_exclusive` during eviction, which never blocks.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use tarn_common::latch::{CountedMutex, LatchRegistry, LatchStats};
use tarn_common::limits::{DISCARD_WAIT_ATTEMPTS_MAX, DISCARD_WAIT_STEP_US, LRU_SCAN_DEPTH_MAX};
use tarn_common::{Lsn, PageId};
use tarn_io::PageArena;

use crate::frame::{Frame, IO_NONE, IO_READING, NO_PAGE};
use crate::lru::{LruHints, LruList};
use crate::page_table::PageTable;

pub(crate) struct Instance {
    pub(crate) index: u32,
    pub(crate) frames: Box<[Frame]>,
    pub(crate) arena: Arc<PageArena>,
    pub(crate) table: PageTable,
    pub(crate) table_latch: CountedMutex<()>,
    pub(crate) lru: CountedMutex<LruList>,
    pub(crate) hints: LruHints,
    pub(crate) flush_list: CountedMutex<BTreeSet<(Lsn, u32)>>,
    pub(crate) page_latch_stats: Arc<LatchStats>,
    pub(crate) optimistic_stats: Arc<LatchStats>,
    pub(crate) io_wait_stats: Arc<LatchStats>,
}

/// The outcome of reserving a frame for a page that was not found.
pub(crate) enum Reservation {
    /// The frame now holds the page id, is in the table and the LRU list, is pinned
    /// once and exclusively latched for the caller, and is marked as being read.
    Reserved(u32),
    /// Another thread brought the page in first; look it up again.
    AlreadyPresent,
}

impl Instance {
    pub(crate) fn new(
        index: u32,
        frame_count: usize,
        page_size_bytes: usize,
        old_pct: u32,
        latches: &LatchRegistry,
    ) -> Self {
        let instance = Some(index);
        Instance {
            index,
            frames: (0..frame_count).map(|_| Frame::new()).collect(),
            arena: PageArena::new(frame_count, page_size_bytes),
            table: PageTable::with_frames(frame_count),
            table_latch: CountedMutex::new((), latches.register("buffer.page_table", instance)),
            lru: CountedMutex::new(
                LruList::new(frame_count, old_pct),
                latches.register("buffer.lru", instance),
            ),
            hints: LruHints::new(frame_count, old_pct),
            flush_list: CountedMutex::new(
                BTreeSet::new(),
                latches.register("buffer.flush_list", instance),
            ),
            page_latch_stats: latches.register("buffer.page", instance),
            optimistic_stats: latches.register("buffer.page_optimistic", instance),
            io_wait_stats: latches.register("buffer.io_wait", instance),
        }
    }

    pub(crate) fn frame(&self, frame: u32) -> &Frame {
        &self.frames[frame as usize]
    }

    pub(crate) fn frame_count(&self) -> usize {
        self.frames.len()
    }

    /// A pointer to the frame's page bytes (valid for the pool's lifetime).
    pub(crate) fn page_ptr(&self, frame: u32) -> *mut u8 {
        self.arena.page_ptr(frame as usize)
    }

    /// Takes a free frame, evicting a clean unpinned page from the LRU tail if the
    /// free list is empty. Returns `Err(dirty victims)` when only dirty pages could
    /// be evicted (the caller writes one back and retries), `Ok(None)` when every
    /// frame is busy.
    pub(crate) fn take_free_frame(&self, evictions: &mut u64) -> Result<Option<u32>, Vec<u32>> {
        let mut lru = self.lru.lock();
        if let Some(frame) = lru.free.pop() {
            return Ok(Some(frame));
        }
        let mut dirty = Vec::new();
        let mut candidate = lru.tail();
        for _ in 0..LRU_SCAN_DEPTH_MAX {
            let Some(frame) = candidate else { break };
            candidate = lru.toward_head(frame);
            if self.frame(frame).is_dirty() {
                if dirty.len() < 4 {
                    dirty.push(frame);
                }
                continue;
            }
            if self.try_evict(&mut lru, frame) {
                *evictions += 1;
                return Ok(Some(frame));
            }
        }
        if dirty.is_empty() {
            Ok(None)
        } else {
            Err(dirty)
        }
    }

    /// Evicts the page in `frame` if it is unpinned, clean, not being read or written,
    /// and its latch is free. The caller holds the list latch; on success the frame is
    /// out of the table and the list, holds no page, and belongs to the caller.
    pub(crate) fn try_evict(&self, lru: &mut LruList, frame_index: u32) -> bool {
        let frame = self.frame(frame_index);
        if frame.pins.load(Ordering::SeqCst) != 0
            || frame.io.load(Ordering::Acquire) != IO_NONE
            || frame.write_pending.load(Ordering::Acquire)
            || frame.is_dirty()
            || !frame.latch.try_lock_exclusive()
        {
            return false;
        }
        let page = frame.page_id.load(Ordering::SeqCst);
        let evictable = page != NO_PAGE
            && frame
                .page_id
                .compare_exchange(page, NO_PAGE, Ordering::SeqCst, Ordering::SeqCst)
                .is_ok();
        if !evictable {
            frame.latch.unlock_exclusive();
            return false;
        }
        // Pin protocol: page id cleared first, pins read second (see `frame`).
        if frame.pins.load(Ordering::SeqCst) != 0 || frame.is_dirty() {
            frame.page_id.store(page, Ordering::SeqCst);
            frame.latch.unlock_exclusive();
            return false;
        }
        lru.remove(frame_index, &self.hints);
        {
            let _table = self.table_latch.lock();
            let removed = self.table.remove(PageId::from_u64(page));
            debug_assert_eq!(removed, Some(frame_index));
        }
        frame.first_access_ms.store(0, Ordering::Relaxed);
        frame.latch.unlock_exclusive();
        true
    }

    /// Drops every page of `file_id` from this instance without writing it, waiting
    /// for pins, reads and writes in flight to end. Returns the pages dropped, or
    /// `None` if a page stayed pinned too long.
    pub(crate) fn discard_file(&self, file_id: tarn_common::FileId) -> Option<usize> {
        let mut dropped = 0;
        for index in 0..self.frame_count() as u32 {
            let frame = self.frame(index);
            let mut attempt = 0u32;
            loop {
                let page = frame.page_id.load(Ordering::SeqCst);
                if page == NO_PAGE || PageId::from_u64(page).file_id != file_id {
                    break;
                }
                if !frame.write_pending.load(Ordering::Acquire)
                    && frame.io.load(Ordering::Acquire) == IO_NONE
                {
                    self.mark_clean(index);
                    let mut lru = self.lru.lock();
                    if self.try_evict(&mut lru, index) {
                        lru.free.push(index);
                        dropped += 1;
                        break;
                    }
                }
                attempt += 1;
                if attempt > DISCARD_WAIT_ATTEMPTS_MAX {
                    return None;
                }
                std::thread::sleep(std::time::Duration::from_micros(DISCARD_WAIT_STEP_US));
            }
        }
        Some(dropped)
    }

    /// Gives a frame that holds no page back to the free list.
    pub(crate) fn release_free_frame(&self, frame: u32) {
        self.lru.lock().free.push(frame);
    }

    /// Installs `page_id` in the free frame `frame` (see [`Reservation::Reserved`]),
    /// unless another thread installed the page first.
    pub(crate) fn reserve(&self, frame_index: u32, page_id: PageId) -> Reservation {
        let frame = self.frame(frame_index);
        // A free frame can still be latched for an instant by a thread that waited for
        // a failed read into it and is about to notice the page is gone.
        frame.latch.lock_exclusive(&self.page_latch_stats);
        frame.pins.fetch_add(1, Ordering::SeqCst);
        frame.io.store(IO_READING, Ordering::Release);
        frame.oldest_lsn.store(0, Ordering::Relaxed);
        frame.newest_lsn.store(0, Ordering::Relaxed);
        frame.first_access_ms.store(0, Ordering::Relaxed);
        {
            let _table = self.table_latch.lock();
            if self.table.get_locked(page_id).is_some() {
                drop(_table);
                frame.io.store(IO_NONE, Ordering::Release);
                frame.unpin();
                frame.latch.unlock_exclusive();
                self.release_free_frame(frame_index);
                return Reservation::AlreadyPresent;
            }
            frame.page_id.store(page_id.to_u64(), Ordering::SeqCst);
            self.table.insert(page_id, frame_index);
        }
        self.lru.lock().insert_midpoint(frame_index, &self.hints);
        Reservation::Reserved(frame_index)
    }

    /// Undoes a reservation whose read failed; wakes threads waiting for the read.
    /// The caller's pin and exclusive latch are released.
    pub(crate) fn abort_read(&self, frame_index: u32, page_id: PageId) {
        let frame = self.frame(frame_index);
        {
            let mut lru = self.lru.lock();
            lru.remove(frame_index, &self.hints);
            let _table = self.table_latch.lock();
            self.table.remove(page_id);
            frame.page_id.store(NO_PAGE, Ordering::SeqCst);
        }
        frame.finish_read();
        frame.latch.unlock_exclusive();
        frame.unpin();
        self.release_free_frame(frame_index);
    }

    /// Records a change at `lsn` to the page in `frame` (whose exclusive latch the
    /// caller holds).
    pub(crate) fn mark_dirty(&self, frame_index: u32, start: Lsn, end: Lsn) {
        let frame = self.frame(frame_index);
        frame.newest_lsn.fetch_max(end.0, Ordering::AcqRel);
        if frame.oldest_lsn.load(Ordering::Acquire) == 0 {
            let mut flush_list = self.flush_list.lock();
            if frame.oldest_lsn.load(Ordering::Acquire) == 0 {
                frame.oldest_lsn.store(start.0, Ordering::Release);
                flush_list.insert((start, frame_index));
            }
        }
    }

    /// Marks the page in `frame` clean (a copy of it is about to be written, or was).
    /// Returns the oldest LSN it had.
    pub(crate) fn mark_clean(&self, frame_index: u32) -> Lsn {
        let frame = self.frame(frame_index);
        let mut flush_list = self.flush_list.lock();
        let oldest = Lsn(frame.oldest_lsn.swap(0, Ordering::AcqRel));
        if oldest.0 != 0 {
            flush_list.remove(&(oldest, frame_index));
        }
        oldest
    }

    /// Makes the page dirty again after a failed write of a copy taken at `oldest`.
    pub(crate) fn mark_dirty_again(&self, frame_index: u32, oldest: Lsn) {
        let frame = self.frame(frame_index);
        let mut flush_list = self.flush_list.lock();
        let current = frame.oldest_lsn.load(Ordering::Acquire);
        if current == 0 || oldest.0 < current {
            if current != 0 {
                flush_list.remove(&(Lsn(current), frame_index));
            }
            frame.oldest_lsn.store(oldest.0, Ordering::Release);
            flush_list.insert((oldest, frame_index));
        }
    }

    /// Notes an access to the page in `frame`, promoting it out of the old sublist
    /// (or back to the head) when the midpoint policy says so.
    #[inline]
    pub(crate) fn touch(
        &self,
        frame_index: u32,
        now_ms: impl FnOnce() -> u64,
        old_blocks_time_ms: u64,
    ) {
        let promote = if self.hints.is_old[frame_index as usize].load(Ordering::Relaxed) {
            let frame = self.frame(frame_index);
            let now = now_ms();
            let first = frame.first_access_ms.load(Ordering::Relaxed);
            if first == 0 {
                frame.first_access_ms.store(now, Ordering::Relaxed);
                false
            } else {
                now.saturating_sub(first) >= old_blocks_time_ms
            }
        } else {
            self.hints.young_frame_drifted(frame_index)
        };
        if promote {
            self.lru.lock().move_to_head(frame_index, &self.hints);
        }
    }

    /// Checks this instance's invariants; call only while no thread uses the pool.
    pub(crate) fn check_invariants(&self) -> Result<(), String> {
        let lru = self.lru.lock();
        let _table = self.table_latch.lock();
        let flush_list = self.flush_list.lock();
        let here = |message: String| format!("instance {}: {message}", self.index);
        lru.check(self.frame_count()).map_err(here)?;
        let entries = self.table.entries();
        for &(page_id, frame_index) in &entries {
            let frame = self.frame(frame_index);
            if !frame.holds(page_id) {
                return Err(here(format!(
                    "table maps {page_id} to frame {frame_index}, which holds another page"
                )));
            }
            if !lru.contains(frame_index) {
                return Err(here(format!(
                    "resident page {page_id} is not in the LRU list"
                )));
            }
        }
        if entries.len() != lru.len() {
            return Err(here(format!(
                "{} table entries but {} frames in the LRU list",
                entries.len(),
                lru.len()
            )));
        }
        if lru.len() + lru.free.len() != self.frame_count() {
            return Err(here(format!(
                "{} in LRU + {} free != {} frames",
                lru.len(),
                lru.free.len(),
                self.frame_count()
            )));
        }
        for &free in &lru.free {
            if self.frame(free).page_id.load(Ordering::Relaxed) != NO_PAGE {
                return Err(here(format!("free frame {free} holds a page")));
            }
        }
        for (index, frame) in self.frames.iter().enumerate() {
            let index = index as u32;
            if frame.pins.load(Ordering::Relaxed) != 0 || !frame.latch.is_unlocked() {
                return Err(here(format!(
                    "frame {index} is pinned or latched while the pool is idle"
                )));
            }
            if frame.io.load(Ordering::Relaxed) != IO_NONE
                || frame.write_pending.load(Ordering::Relaxed)
            {
                return Err(here(format!(
                    "frame {index} has I/O in flight while the pool is idle"
                )));
            }
            let oldest = frame.oldest_lsn.load(Ordering::Relaxed);
            if (oldest != 0) != flush_list.contains(&(Lsn(oldest), index)) {
                return Err(here(format!(
                    "frame {index} dirty state disagrees with the flush list"
                )));
            }
            if oldest != 0 && frame.newest_lsn.load(Ordering::Relaxed) < oldest {
                return Err(here(format!("frame {index} newest LSN below oldest LSN")));
            }
        }
        if flush_list.len() != self.frames.iter().filter(|f| f.is_dirty()).count() {
            return Err(here("flush list holds frames that are not dirty".into()));
        }
        Ok(())
    }
}
