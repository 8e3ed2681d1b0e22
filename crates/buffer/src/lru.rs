//! The LRU list with midpoint insertion, and the free list.
//!
//! ```text
//!   head (most recent)                                          tail (next victim)
//!    [young] <-> [young] <-> ... <-> [old_head] <-> [old] <-> ... <-> [old]
//!                                        ^ new pages enter here
//! ```
//!
//! As in InnoDB, a page read from disk enters at the head of the *old* sublist, not at
//! the head of the list. It moves to the head only when it is accessed again at least
//! `old_blocks_time` after it was read. A full scan touches each page within a short
//! burst, so its pages never leave the old sublist and are evicted first; the hot set in
//! the young sublist survives.
//!
//! The young sublist is capped at `100 - old_pct` percent of the frames: a page drops
//! into the old sublist only when a promotion pushes the young sublist past its cap.
//! (InnoDB instead keeps the old sublist at `old_pct` percent of the *current* list,
//! so when free frames are carved off the tail the boundary moves toward the head and
//! demotes hot pages; a capped young sublist is immune to that.)
//!
//! To keep hits from taking the list latch, a young page is moved to the head only
//! when it may have drifted into the back three quarters of the young sublist. As in
//! InnoDB, a *freed-page clock* counts the pages that have left the list; a frame
//! remembers the clock at its last move to the head, and is moved again only once more
//! than a quarter of the young sublist's size has left since. Pages drift toward the
//! tail only as fast as new pages come in, and each new page costs an eviction, so the
//! clock bounds the drift; with no evictions at all (the working set fits), hits never
//! take the latch. (A first version advanced the clock on every move to the head
//! instead: moves then caused more moves, and on a fitting working set a third to a
//! half of all hits took the latch.) [`LruHints`] mirrors what hits need to decide this
//! without the latch.
//!
//! # Invariants (checked by [`LruList::check`])
//! 1. The list is a well-formed doubly linked list of `len` frames; free frames are
//!    not in it.
//! 2. The old frames are exactly the last `old_len` frames, starting at `old_head`,
//!    and the young sublist (`len - old_len`) never exceeds `young_max`.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

pub(crate) const NONE: u32 = u32::MAX;

/// What the hit path reads without holding the list latch.
pub(crate) struct LruHints {
    pub(crate) is_old: Box<[AtomicBool]>,
    /// The freed-page clock when each frame was last moved to the head.
    pub(crate) moved_at: Box<[AtomicU64]>,
    /// Pages that have left the list so far.
    pub(crate) freed_clock: AtomicU64,
    /// A quarter of the young sublist's cap, in pages (changes with `old_pct`).
    young_drift_max: AtomicU64,
}

impl LruHints {
    pub(crate) fn new(frames: usize, old_pct: u32) -> Self {
        LruHints {
            is_old: (0..frames).map(|_| AtomicBool::new(false)).collect(),
            moved_at: (0..frames).map(|_| AtomicU64::new(0)).collect(),
            freed_clock: AtomicU64::new(0),
            young_drift_max: AtomicU64::new((young_max(frames, old_pct) / 4) as u64),
        }
    }

    /// Whether a hit on young frame `frame` should move it to the head.
    #[inline]
    pub(crate) fn young_frame_drifted(&self, frame: u32) -> bool {
        let clock = self.freed_clock.load(Ordering::Relaxed);
        let moved_at = self.moved_at[frame as usize].load(Ordering::Relaxed);
        clock.saturating_sub(moved_at) > self.young_drift_max.load(Ordering::Relaxed)
    }
}

/// The most frames the young sublist may hold.
fn young_max(frames: usize, old_pct: u32) -> usize {
    frames * (100 - old_pct as usize) / 100
}

pub(crate) struct LruList {
    prev: Box<[u32]>,
    next: Box<[u32]>,
    in_list: Box<[bool]>,
    old: Box<[bool]>,
    head: u32,
    tail: u32,
    len: usize,
    old_head: u32,
    old_len: usize,
    young_max: usize,
    /// Frames holding no page, ready for reuse.
    pub(crate) free: Vec<u32>,
}

impl LruList {
    /// A list with every frame free.
    pub(crate) fn new(frames: usize, old_pct: u32) -> Self {
        LruList {
            prev: vec![NONE; frames].into(),
            next: vec![NONE; frames].into(),
            in_list: vec![false; frames].into(),
            old: vec![false; frames].into(),
            head: NONE,
            tail: NONE,
            len: 0,
            old_head: NONE,
            old_len: 0,
            young_max: young_max(frames, old_pct),
            free: (0..frames as u32).rev().collect(),
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    pub(crate) fn contains(&self, frame: u32) -> bool {
        self.in_list[frame as usize]
    }

    /// The least recently used frame.
    pub(crate) fn tail(&self) -> Option<u32> {
        (self.tail != NONE).then_some(self.tail)
    }

    /// The frame after `frame` in the direction of the head.
    pub(crate) fn toward_head(&self, frame: u32) -> Option<u32> {
        let prev = self.prev[frame as usize];
        (prev != NONE).then_some(prev)
    }

    fn unlink(&mut self, frame: u32) {
        let f = frame as usize;
        let (prev, next) = (self.prev[f], self.next[f]);
        if prev == NONE {
            self.head = next;
        } else {
            self.next[prev as usize] = next;
        }
        if next == NONE {
            self.tail = prev;
        } else {
            self.prev[next as usize] = prev;
        }
        self.prev[f] = NONE;
        self.next[f] = NONE;
        self.in_list[f] = false;
        self.len -= 1;
    }

    fn link_before(&mut self, frame: u32, before: u32) {
        let f = frame as usize;
        debug_assert!(!self.in_list[f]);
        if before == NONE {
            // Append at the tail.
            self.prev[f] = self.tail;
            self.next[f] = NONE;
            if self.tail == NONE {
                self.head = frame;
            } else {
                self.next[self.tail as usize] = frame;
            }
            self.tail = frame;
        } else {
            let prev = self.prev[before as usize];
            self.prev[f] = prev;
            self.next[f] = before;
            self.prev[before as usize] = frame;
            if prev == NONE {
                self.head = frame;
            } else {
                self.next[prev as usize] = frame;
            }
        }
        self.in_list[f] = true;
        self.len += 1;
    }

    fn set_old(&mut self, frame: u32, old: bool, hints: &LruHints) {
        self.old[frame as usize] = old;
        hints.is_old[frame as usize].store(old, Ordering::Relaxed);
    }

    /// Adds a newly read page at the midpoint (the head of the old sublist).
    pub(crate) fn insert_midpoint(&mut self, frame: u32, hints: &LruHints) {
        self.link_before(frame, self.old_head);
        self.set_old(frame, true, hints);
        self.old_head = frame;
        self.old_len += 1;
        self.rebalance(hints);
    }

    /// Moves a page to the head of the list (the young end).
    pub(crate) fn move_to_head(&mut self, frame: u32, hints: &LruHints) {
        if !self.in_list[frame as usize] {
            return; // Evicted meanwhile.
        }
        self.detach(frame, hints);
        let head = self.head;
        self.link_before(frame, head);
        let clock = hints.freed_clock.load(Ordering::Relaxed);
        hints.moved_at[frame as usize].store(clock, Ordering::Relaxed);
        self.rebalance(hints);
    }

    /// Takes a frame out of the list, keeping the old sublist consistent.
    fn detach(&mut self, frame: u32, hints: &LruHints) {
        if self.old[frame as usize] {
            if self.old_head == frame {
                self.old_head = self.next[frame as usize];
            }
            self.old_len -= 1;
            self.set_old(frame, false, hints);
        }
        self.unlink(frame);
    }

    /// Removes an evicted page's frame from the list.
    pub(crate) fn remove(&mut self, frame: u32, hints: &LruHints) {
        self.detach(frame, hints);
        hints.freed_clock.fetch_add(1, Ordering::Relaxed);
        self.rebalance(hints);
    }

    /// Changes the old sublist's share to `old_pct` (while running: `SET GLOBAL
    /// buffer_pool_old_pct`). A smaller young cap demotes the last young frames at
    /// once; a larger one lets promotions fill it.
    pub(crate) fn set_old_pct(&mut self, frames: usize, old_pct: u32, hints: &LruHints) {
        self.young_max = young_max(frames, old_pct);
        hints
            .young_drift_max
            .store((self.young_max / 4) as u64, Ordering::Relaxed);
        self.rebalance(hints);
    }

    /// Demotes the last young frames until the young sublist fits its cap.
    fn rebalance(&mut self, hints: &LruHints) {
        while self.len - self.old_len > self.young_max {
            let demote = if self.old_head == NONE {
                self.tail
            } else {
                self.prev[self.old_head as usize]
            };
            self.set_old(demote, true, hints);
            self.old_head = demote;
            self.old_len += 1;
        }
    }

    /// Checks invariants 1 and 2; returns a description of the first violation.
    pub(crate) fn check(&self, frames: usize) -> Result<(), String> {
        let mut count = 0usize;
        let mut prev = NONE;
        let mut at = self.head;
        let mut old_seen = 0usize;
        let mut in_old = false;
        while at != NONE {
            let f = at as usize;
            if !self.in_list[f] || self.prev[f] != prev {
                return Err(format!("LRU links broken at frame {at}"));
            }
            if at == self.old_head {
                in_old = true;
            }
            if self.old[f] != in_old {
                return Err(format!(
                    "frame {at} old flag {} but position says {in_old}",
                    self.old[f]
                ));
            }
            old_seen += usize::from(in_old);
            count += 1;
            if count > frames {
                return Err("LRU list has a cycle".into());
            }
            prev = at;
            at = self.next[f];
        }
        if prev != self.tail || count != self.len {
            return Err(format!("LRU length {} but walked {count}", self.len));
        }
        if old_seen != self.old_len || self.len - self.old_len > self.young_max {
            return Err(format!(
                "old sublist has {old_seen} frames, counted {}, young cap {} of {}",
                self.old_len, self.young_max, self.len
            ));
        }
        if self.free.iter().any(|&f| self.in_list[f as usize]) {
            return Err("a free frame is in the LRU list".into());
        }
        if self.free.len() + self.len > frames {
            return Err("free list and LRU list overlap or overflow".into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tarn_common::rng::{Rng, test_seed};

    #[test]
    fn random_operations_keep_the_midpoint_at_its_target() {
        let frames = 50;
        let hints = LruHints::new(frames, 37);
        let mut list = LruList::new(frames, 37);
        let mut rng = Rng::new(test_seed("lru_midpoint_random_operations"));
        for _ in 0..20_000 {
            let frame = rng.below(frames as u64) as u32;
            match (list.contains(frame), rng.below(3)) {
                (false, _) => {
                    list.free.retain(|&f| f != frame);
                    list.insert_midpoint(frame, &hints);
                }
                (true, 0) => {
                    list.remove(frame, &hints);
                    list.free.push(frame);
                }
                (true, _) => list.move_to_head(frame, &hints),
            }
            list.check(frames).unwrap();
            assert_eq!(
                hints.is_old[frame as usize].load(Ordering::Relaxed),
                list.old[frame as usize]
            );
        }
    }

    #[test]
    fn changing_old_pct_keeps_the_young_sublist_within_its_new_cap() {
        let frames = 40;
        let hints = LruHints::new(frames, 37);
        let mut list = LruList::new(frames, 37);
        list.free.clear();
        for frame in 0..frames as u32 {
            list.insert_midpoint(frame, &hints);
            list.move_to_head(frame, &hints);
        }
        for old_pct in [90, 5, 50, 95] {
            list.set_old_pct(frames, old_pct, &hints);
            list.check(frames).unwrap();
            for frame in 0..frames as u32 {
                list.move_to_head(frame, &hints);
            }
            list.check(frames).unwrap();
            assert_eq!(list.len - list.old_len, young_max(frames, old_pct));
        }
    }

    #[test]
    fn pages_entering_at_the_midpoint_are_evicted_before_the_young_hot_set() {
        let hints = LruHints::new(10, 50);
        let mut list = LruList::new(10, 50);
        list.free.clear();
        for frame in 0..10 {
            list.insert_midpoint(frame, &hints);
        }
        for hot in 0..4 {
            list.move_to_head(hot, &hints);
        }
        // A scan: evict the tail, reuse its frame for the next scanned page.
        for _ in 0..50 {
            let victim = list.tail().unwrap();
            assert!(victim >= 4, "hot frame {victim} evicted by a scan");
            list.remove(victim, &hints);
            list.insert_midpoint(victim, &hints);
            list.check(10).unwrap();
        }
    }
}
