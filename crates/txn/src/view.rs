//! Read views: which transactions' changes a consistent snapshot sees.
//!
//! A view is taken from the transaction table at one instant ([`crate::TrxSys::open_view`])
//! and sees exactly the transactions that had committed by then, plus its own
//! transaction's changes (InnoDB's rule):
//!
//! - ids at or above `low_limit_id` (the next id at that instant) started later: unseen;
//! - ids below `up_limit_id` (the smallest id active then) had committed: seen;
//! - in between, an id is seen unless it was in the active list.
//!
//! Transaction ids from before a restart are all below the first id handed out after
//! it, and recovery rolled back every one that had not committed, so rows they wrote
//! are seen by every view without any table of old ids.
//!
//! Each view also records the commit sequence number at its creation (`seq`). Purge may
//! discard the undo of a transaction once every open view's `seq` is above that
//! transaction's commit sequence: every view then sees the newer version, so none
//! walks past it. Views register themselves in [`ViewRegistry`] and leave it when
//! dropped.

use std::collections::BTreeMap;
use std::sync::Arc;

use parking_lot::Mutex;

use crate::TrxId;

/// A consistent snapshot.
#[derive(Debug)]
pub struct ReadView {
    creator: TrxId,
    low_limit_id: TrxId,
    up_limit_id: TrxId,
    /// Ids active at creation, sorted (the creator's too: `sees` answers for it
    /// first). Shared by the views opened between two changes of the active set.
    active: Arc<[TrxId]>,
    seq: u64,
    registry: Arc<ViewRegistry>,
}

impl ReadView {
    pub(crate) fn new(
        creator: TrxId,
        low_limit_id: TrxId,
        active: Arc<[TrxId]>,
        seq: u64,
        registry: Arc<ViewRegistry>,
    ) -> ReadView {
        let up_limit_id = active.first().copied().unwrap_or(low_limit_id);
        registry.enter(seq);
        ReadView {
            creator,
            low_limit_id,
            up_limit_id,
            active,
            seq,
            registry,
        }
    }

    /// True if a row version written by `trx_id` is visible in this snapshot.
    pub fn sees(&self, trx_id: TrxId) -> bool {
        if trx_id == self.creator && trx_id != 0 {
            return true;
        }
        if trx_id < self.up_limit_id {
            return true;
        }
        if trx_id >= self.low_limit_id {
            return false;
        }
        self.active.binary_search(&trx_id).is_err()
    }

    /// The commit sequence number when the view was opened.
    pub fn seq(&self) -> u64 {
        self.seq
    }

    /// Names the transaction that owns the view, once it has an id: a transaction
    /// that read before its first change opened its view with no id, and must still
    /// see its own changes (InnoDB's `ReadView::set_creator_trx_id`).
    pub(crate) fn set_creator(&mut self, creator: TrxId) {
        self.creator = creator;
    }
}

/// A copy of a view is a view of its own: it registers in the [`ViewRegistry`] (and
/// leaves it when dropped), so purge keeps what it needs even after the original
/// closes. Scans hand such a copy to their worker threads.
impl Clone for ReadView {
    fn clone(&self) -> ReadView {
        self.registry.enter(self.seq);
        ReadView {
            creator: self.creator,
            low_limit_id: self.low_limit_id,
            up_limit_id: self.up_limit_id,
            active: self.active.clone(),
            seq: self.seq,
            registry: self.registry.clone(),
        }
    }
}

impl Drop for ReadView {
    fn drop(&mut self) {
        self.registry.leave(self.seq);
    }
}

/// The open views, by commit sequence: purge asks for the oldest.
#[derive(Debug, Default)]
pub struct ViewRegistry {
    open: Mutex<BTreeMap<u64, usize>>,
}

impl ViewRegistry {
    fn enter(&self, seq: u64) {
        *self.open.lock().entry(seq).or_insert(0) += 1;
    }

    fn leave(&self, seq: u64) {
        let mut open = self.open.lock();
        if let Some(count) = open.get_mut(&seq) {
            *count -= 1;
            if *count == 0 {
                open.remove(&seq);
            }
        }
    }

    /// The smallest `seq` of an open view, if any.
    pub fn oldest_seq(&self) -> Option<u64> {
        self.open.lock().keys().next().copied()
    }

    /// Views open now.
    pub fn open_count(&self) -> usize {
        self.open.lock().values().sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_view_sees_committed_and_own_changes_only() {
        let registry = Arc::new(ViewRegistry::default());
        // Active at creation: 5 (the creator), 7 and 9; next id 12.
        let view = ReadView::new(5, 12, vec![5, 7, 9].into(), 3, registry.clone());
        for (id, seen) in [
            (1, true),
            (5, true),
            (6, true),
            (7, false),
            (8, true),
            (9, false),
            (11, true),
            (12, false),
            (40, false),
        ] {
            assert_eq!(view.sees(id), seen, "trx {id}");
        }
        assert_eq!(registry.oldest_seq(), Some(3));
        let later = ReadView::new(0, 13, Vec::new().into(), 8, registry.clone());
        // Rows written outside any transaction (bulk loads) carry id 0: always seen.
        assert!(later.sees(12) && later.sees(0) && !later.sees(13));
        // A copy keeps its place after the original is dropped.
        let copy = view.clone();
        assert_eq!(registry.open_count(), 3);
        drop(view);
        assert_eq!(registry.oldest_seq(), Some(3));
        assert!(copy.sees(8) && !copy.sees(9));
        drop(copy);
        assert_eq!(registry.oldest_seq(), Some(8));
        drop(later);
        assert_eq!(registry.oldest_seq(), None);
    }
}
