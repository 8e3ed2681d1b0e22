//! Multi-record groups (mini-transactions that log several records and release page
//! latches before the last one, like a B+tree split) and the rule that keeps a crash
//! from cutting one.
//!
//! A group is the LSN range `[start, end)`: `start` is the reserved end when the group
//! began (every record it logs starts at or after it), `end` the reserved end when it
//! finished (open groups have `end = u64::MAX`). No durability point (chunk end, see
//! `format`) may fall strictly inside a group. The log writer computes its next
//! durability point from the copied frontier `F` with [`Groups::limit`]: for groups by
//! descending start, if `start < F < end` then `F = start`.
//!
//! Why reading the frontier first and the groups second is enough: a group registered
//! after the writer read `F` takes its start (the reserved end, under this mutex) after
//! that read, and the reserved end is never below the copied frontier, so the new
//! group starts at or after `F` and cannot contain it.
//!
//! The computed points only grow: after a computation every listed group either ends
//! at or before the point or starts at or after it, and new groups start at or after
//! the frontier. A closed group is dropped only once it ends at or below the position
//! up to which chunks have been cut (`written`, or the stamped `durable` on pmem),
//! because the writer may still split `[written, point)` into several chunks and
//! each of those ends must be tested too (`Groups::lower`). Groups are rare (structure changes only), so a mutex
//! here is cheap; single-record appends never touch it.

use std::sync::atomic::{AtomicUsize, Ordering};

use parking_lot::Mutex;

#[derive(Clone, Copy, Debug)]
struct Group {
    id: u64,
    start: u64,
    end: u64,
}

#[derive(Default)]
struct Table {
    next_id: u64,
    /// In start order (registration order under the mutex).
    list: Vec<Group>,
}

#[derive(Default)]
pub(crate) struct Groups {
    table: Mutex<Table>,
    /// `table.list.len()`, readable without the mutex: 0 means no group constrains.
    listed: AtomicUsize,
}

impl Groups {
    /// Registers a group starting at `reserved()` (read under the mutex).
    pub fn begin(&self, reserved: impl FnOnce() -> u64) -> u64 {
        let mut table = self.table.lock();
        self.listed.store(table.list.len() + 1, Ordering::SeqCst);
        let start = reserved();
        let id = table.next_id;
        table.next_id += 1;
        table.list.push(Group {
            id,
            start,
            end: u64::MAX,
        });
        id
    }

    /// Closes group `id` at `reserved()`.
    pub fn end(&self, id: u64, reserved: impl FnOnce() -> u64) {
        let mut table = self.table.lock();
        let end = reserved();
        if let Some(g) = table.list.iter_mut().find(|g| g.id == id) {
            g.end = end;
        }
    }

    /// The largest durability point `<= copied` that cuts no group. `copied` must have
    /// been read before this call.
    pub fn limit(&self, copied: u64) -> u64 {
        if self.listed.load(Ordering::SeqCst) == 0 {
            return copied;
        }
        lower(&self.table.lock().list, copied)
    }

    /// Forgets closed groups that end at or below `lsn`, once every chunk below `lsn`
    /// has been cut (written, or stamped on pmem): only chunk ends chosen later, all
    /// at or above `lsn`, are tested against the list.
    pub fn prune(&self, lsn: u64) {
        if self.listed.load(Ordering::SeqCst) == 0 {
            return;
        }
        let mut table = self.table.lock();
        table.list.retain(|g| g.end > lsn);
        self.listed.store(table.list.len(), Ordering::SeqCst);
    }

    /// Lowers a record boundary `lsn` (at or above the last pruned position) to the
    /// nearest point at or below it that cuts no group.
    pub fn lower(&self, lsn: u64) -> u64 {
        if self.listed.load(Ordering::SeqCst) == 0 {
            return lsn;
        }
        lower(&self.table.lock().list, lsn)
    }

    /// True if durability to `lsn` must wait for an open group to close: an open
    /// group starts below `lsn`, or starts inside a closed group that does (no
    /// durability point may fall inside any group, so overlapping groups chain: the
    /// point stops at the start of the lowest group in the chain until the open one
    /// closes).
    pub fn open_below(&self, lsn: u64) -> bool {
        if self.listed.load(Ordering::SeqCst) == 0 {
            return false;
        }
        // Above every closed group's end and inside every open group: lowering it
        // gives the highest point the open groups allow.
        lower(&self.table.lock().list, u64::MAX - 1) < lsn
    }
}

fn lower(list: &[Group], mut point: u64) -> u64 {
    for g in list.iter().rev() {
        if g.start < point && point < g.end {
            point = g.start;
        }
    }
    point
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_open_group_holds_back_what_a_closed_group_overlapping_it_starts_at() {
        let groups = Groups::default();
        let a = groups.begin(|| 100);
        let b = groups.begin(|| 300);
        groups.end(a, || 350);
        // b = [300, open) starts above 200, but a = [100, 350) overlaps b: no point in
        // (100, 350) or at or above 300 may be durable until b closes.
        assert!(groups.open_below(200));
        assert!(!groups.open_below(100));
        groups.end(b, || 400);
        assert!(!groups.open_below(200));
        assert!(!groups.open_below(1000));
    }

    #[test]
    fn limit_respects_open_and_closed_groups() {
        let groups = Groups::default();
        let a = groups.begin(|| 100);
        assert_eq!(groups.limit(200), 100);
        let b = groups.begin(|| 300);
        groups.end(a, || 350);
        // a = [100, 350) straddles 320; b = [300, open) straddles too.
        assert_eq!(groups.limit(320), 100);
        groups.end(b, || 400);
        assert_eq!(groups.limit(380), 100);
        assert_eq!(groups.limit(400), 400);
        groups.prune(380);
        assert_eq!(groups.lower(320), 300);
        groups.prune(400);
        assert_eq!(groups.lower(320), 320);
        assert_eq!(groups.listed.load(Ordering::SeqCst), 0);
    }
}
