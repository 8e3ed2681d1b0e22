//! An instance's page table: page id to frame, with lock-free lookups.
//!
//! Open addressing with linear probing over twice as many slots as the instance has
//! frames, so the load factor stays at or below one half. Each slot is a pair of
//! atomics (key, frame). Lookups read atomics only and take no latch: a reader of a hot
//! page writes no shared cache line here. Inserts and removals are made by one thread at
//! a time, holding the instance's page-table latch, and removal uses backward-shift
//! deletion so that no tombstones accumulate.
//!
//! A lock-free lookup may be stale: it can miss an entry that is being moved by a
//! concurrent removal, or return a frame that has just been given to another page.
//! Callers therefore treat a hit as a *candidate* (they confirm it against the frame's
//! own page id after pinning or latching it) and a miss as "maybe absent" (they confirm
//! it with [`PageTable::get_locked`] under the latch before reading from disk).

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use tarn_common::PageId;

/// The key of an empty slot. No page has this id: file ids stay below `u32::MAX`.
const EMPTY: u64 = u64::MAX;

struct Slot {
    key: AtomicU64,
    frame: AtomicU32,
}

pub(crate) struct PageTable {
    slots: Box<[Slot]>,
    mask: usize,
}

#[inline]
fn home(key: u64, mask: usize) -> usize {
    // Fibonacci hashing: the high bits of the product are well mixed.
    (key.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 32) as usize & mask
}

impl PageTable {
    pub(crate) fn with_frames(frames: usize) -> Self {
        let capacity = (frames * 2).next_power_of_two().max(8);
        PageTable {
            slots: (0..capacity)
                .map(|_| Slot {
                    key: AtomicU64::new(EMPTY),
                    frame: AtomicU32::new(0),
                })
                .collect(),
            mask: capacity - 1,
        }
    }

    /// Lock-free lookup: a candidate frame, or `None` for "maybe absent".
    #[inline]
    pub(crate) fn get(&self, page_id: PageId) -> Option<u32> {
        let key = page_id.to_u64();
        let mut index = home(key, self.mask);
        for _ in 0..self.slots.len() {
            let slot = &self.slots[index];
            let found = slot.key.load(Ordering::Acquire);
            if found == key {
                return Some(slot.frame.load(Ordering::Acquire));
            }
            if found == EMPTY {
                return None;
            }
            index = (index + 1) & self.mask;
        }
        None
    }

    /// Exact lookup; the caller holds the page-table latch.
    pub(crate) fn get_locked(&self, page_id: PageId) -> Option<u32> {
        self.get(page_id)
    }

    /// Adds `page_id -> frame`; the caller holds the latch and knows the page is absent.
    pub(crate) fn insert(&self, page_id: PageId, frame: u32) {
        let key = page_id.to_u64();
        assert_ne!(key, EMPTY, "page id collides with the empty marker");
        let mut index = home(key, self.mask);
        loop {
            let slot = &self.slots[index];
            let found = slot.key.load(Ordering::Relaxed);
            assert_ne!(found, key, "page {page_id} inserted twice");
            if found == EMPTY {
                slot.frame.store(frame, Ordering::Release);
                slot.key.store(key, Ordering::Release);
                return;
            }
            index = (index + 1) & self.mask;
        }
    }

    /// Removes `page_id`; the caller holds the latch. Returns the frame it mapped to.
    pub(crate) fn remove(&self, page_id: PageId) -> Option<u32> {
        let key = page_id.to_u64();
        let mut hole = home(key, self.mask);
        loop {
            let found = self.slots[hole].key.load(Ordering::Relaxed);
            if found == EMPTY {
                return None;
            }
            if found == key {
                break;
            }
            hole = (hole + 1) & self.mask;
        }
        let removed = self.slots[hole].frame.load(Ordering::Relaxed);
        // Backward shift: move later entries of the probe run into the hole when their
        // home position allows it, so lookups never need tombstones.
        let mut next = (hole + 1) & self.mask;
        loop {
            let moving = self.slots[next].key.load(Ordering::Relaxed);
            if moving == EMPTY {
                break;
            }
            let wanted = home(moving, self.mask);
            // Can `moving` live at `hole`? Only if `hole` lies cyclically in [wanted, next).
            let distance_to_hole = hole.wrapping_sub(wanted) & self.mask;
            let distance_to_next = next.wrapping_sub(wanted) & self.mask;
            if distance_to_hole < distance_to_next {
                let frame = self.slots[next].frame.load(Ordering::Relaxed);
                self.slots[hole].frame.store(frame, Ordering::Release);
                self.slots[hole].key.store(moving, Ordering::Release);
                hole = next;
            }
            next = (next + 1) & self.mask;
        }
        self.slots[hole].key.store(EMPTY, Ordering::Release);
        Some(removed)
    }

    /// Every (page, frame) entry, for invariant checks.
    pub(crate) fn entries(&self) -> Vec<(PageId, u32)> {
        self.slots
            .iter()
            .filter_map(|slot| {
                let key = slot.key.load(Ordering::Relaxed);
                (key != EMPTY).then(|| (PageId::from_u64(key), slot.frame.load(Ordering::Relaxed)))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;
    use tarn_common::rng::{Rng, test_seed};
    use tarn_common::{FileId, PageNo};

    #[test]
    fn random_inserts_and_removals_match_a_hash_map() {
        let mut rng = Rng::new(test_seed("page_table_matches_a_hash_map"));
        let table = PageTable::with_frames(64);
        let mut model: HashMap<PageId, u32> = HashMap::new();
        for step in 0..20_000u32 {
            // Few distinct keys on few files, so probe runs collide and wrap around.
            let page_id = PageId::new(FileId(rng.below(3) as u32), PageNo(rng.below(200) as u32));
            if model.contains_key(&page_id) {
                assert_eq!(table.remove(page_id), model.remove(&page_id));
            } else if model.len() < 64 {
                table.insert(page_id, step);
                model.insert(page_id, step);
            }
            if step % 97 == 0 {
                for (&id, &frame) in &model {
                    assert_eq!(table.get(id), Some(frame), "step {step}: lost {id}");
                }
                assert_eq!(table.entries().len(), model.len());
            }
        }
    }
}
