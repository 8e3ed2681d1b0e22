//! The queue of one lockable name (a record key or a table): its granted entries, its
//! waiting requests, and the two grant policies.
//!
//! Everything here runs under the latch of the shard that owns the queue. Choosing
//! which waiters to grant also reads wait states and CATS weights, which change only
//! under the wait-graph latch, so the manager calls [`Queue::schedule`] with that latch
//! held too.

use std::sync::Arc;

use tarn_common::limits::LOCK_CATS_OVERTAKES_MAX;
use tarn_common::settings::LockScheduling;

use super::mode::Mode;
use super::trx::{LockTrx, WaitState};

/// One trx's granted locks on this name: the union of their mode bits.
pub(crate) struct GrantedLock {
    pub(crate) trx: Arc<LockTrx>,
    pub(crate) mode: Mode,
}

/// A request that must wait. `mode` is only the part the trx does not already hold.
pub(crate) struct WaitingLock {
    pub(crate) trx: Arc<LockTrx>,
    pub(crate) mode: Mode,
    /// Arrival order over the whole lock manager (smaller is older).
    pub(crate) seq: u64,
    /// Grant rounds in which CATS granted a younger request and not this one.
    pub(crate) overtaken_rounds: u32,
}

impl WaitingLock {
    /// False once the deadlock detector cancelled it: the request stays in the queue
    /// until its thread wakes and removes it, but blocks nobody and is never granted.
    pub(crate) fn is_active(&self) -> bool {
        self.trx.state() == WaitState::Waiting
    }
}

/// Which rule granted a waiting request (counted in the statistics).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum GrantRule {
    /// Arrival order: the FIFO policy, or CATS with at most one waiter.
    Fifo,
    /// CATS: the heaviest group of compatible requests.
    Cats,
    /// CATS fell back to arrival order because a request was overtaken
    /// [`LOCK_CATS_OVERTAKES_MAX`] times.
    Starvation,
}

/// A waiting request that [`Queue::schedule`] granted.
pub(crate) struct Grant {
    pub(crate) trx: Arc<LockTrx>,
    /// True when the trx had no granted entry on this name before (so the name must be
    /// added to its list of held locks).
    pub(crate) new_entry: bool,
    pub(crate) rule: GrantRule,
}

#[derive(Default)]
pub(crate) struct Queue {
    /// At most one entry per trx; entries of different trxs are compatible.
    pub(crate) granted: Vec<GrantedLock>,
    /// Waiting requests in arrival order; at most one per trx.
    pub(crate) waiting: Vec<WaitingLock>,
}

/// CATS's estimate of how long k holders of a shared group take to all finish,
/// relative to one: f(k) = 1 + log2(k). Dividing a group's summed weight by it means
/// a group is worth its members' weights only when they finish together; an exclusive
/// request has k = 1 and f = 1.
pub(crate) fn group_finish_factor(members: usize) -> f64 {
    1.0 + (members as f64).log2()
}

impl Queue {
    /// Entries held: granted plus waiting.
    pub(crate) fn len(&self) -> usize {
        self.granted.len() + self.waiting.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.granted.is_empty() && self.waiting.is_empty()
    }

    pub(crate) fn granted_mode(&self, trx_id: u64) -> Mode {
        self.granted
            .iter()
            .find(|g| g.trx.id() == trx_id)
            .map_or(Mode::EMPTY, |g| g.mode)
    }

    /// True when `mode` (requested by `trx_id`) conflicts with another trx's granted
    /// entry.
    pub(crate) fn conflicts_with_granted(&self, trx_id: u64, mode: Mode) -> bool {
        self.granted
            .iter()
            .any(|g| g.trx.id() != trx_id && mode.conflicts(g.mode))
    }

    /// Calls `visit` with every trx a request for `mode` by `trx_id` waits for, if it
    /// were queued after the first `waiting_before` waiting requests: other trxs'
    /// conflicting granted entries (first, in grant order), then earlier active waiting
    /// requests that conflict with it. An earlier request that itself waits for this
    /// trx's granted entry is not waited for: it could not be granted before this trx
    /// finishes anyway, so queueing behind it would only make a deadlock (this is how
    /// an S holder upgrades to X while another trx waits for X). Stops early when
    /// `visit` returns false.
    pub(crate) fn visit_blockers(
        &self,
        trx_id: u64,
        mode: Mode,
        waiting_before: usize,
        mut visit: impl FnMut(&Arc<LockTrx>) -> bool,
    ) {
        let mut own_granted = Mode::EMPTY;
        for granted in &self.granted {
            if granted.trx.id() == trx_id {
                own_granted = granted.mode;
            } else if mode.conflicts(granted.mode) && !visit(&granted.trx) {
                return;
            }
        }
        for waiting in &self.waiting[..waiting_before] {
            if waiting.trx.id() != trx_id
                && waiting.is_active()
                && mode.conflicts(waiting.mode)
                && !waiting.mode.conflicts(own_granted)
                && !visit(&waiting.trx)
            {
                return;
            }
        }
    }

    pub(crate) fn has_blocker(&self, trx_id: u64, mode: Mode, waiting_before: usize) -> bool {
        let mut found = false;
        self.visit_blockers(trx_id, mode, waiting_before, |_| {
            found = true;
            false
        });
        found
    }

    /// Whether every trx a request for `mode` by `trx_id` would wait for (see
    /// [`Queue::visit_blockers`]) is a brief holder.
    pub(crate) fn blocked_only_by_brief(
        &self,
        trx_id: u64,
        mode: Mode,
        waiting_before: usize,
    ) -> bool {
        let mut only_brief = true;
        self.visit_blockers(trx_id, mode, waiting_before, |trx| {
            only_brief = trx.is_brief();
            only_brief
        });
        only_brief
    }

    /// The distinct trx ids the request waits for, and the first of them (the one its
    /// CATS weight is credited to; a granted holder when there is one).
    pub(crate) fn blockers(
        &self,
        trx_id: u64,
        mode: Mode,
        waiting_before: usize,
        out: &mut Vec<u64>,
    ) -> Option<Arc<LockTrx>> {
        out.clear();
        let mut first: Option<Arc<LockTrx>> = None;
        self.visit_blockers(trx_id, mode, waiting_before, |trx| {
            if !out.contains(&trx.id()) {
                out.push(trx.id());
            }
            if first.is_none() {
                first = Some(trx.clone());
            }
            true
        });
        first
    }

    /// Adds a granted entry (or merges into the trx's existing one). Returns true when
    /// the entry is new. A mode that is only an insert intention stores nothing.
    pub(crate) fn add_granted(&mut self, trx: &Arc<LockTrx>, mode: Mode) -> bool {
        let stored = mode.stored();
        if stored.is_empty() {
            return false;
        }
        match self.granted.iter_mut().find(|g| g.trx.id() == trx.id()) {
            Some(existing) => {
                existing.mode = existing.mode.union(stored);
                false
            }
            None => {
                self.granted.push(GrantedLock {
                    trx: trx.clone(),
                    mode: stored,
                });
                true
            }
        }
    }

    /// Removes `trx_id`'s granted entry; returns true if there was one.
    pub(crate) fn remove_granted(&mut self, trx_id: u64) -> bool {
        match self.granted.iter().position(|g| g.trx.id() == trx_id) {
            Some(position) => {
                self.granted.remove(position);
                true
            }
            None => false,
        }
    }

    /// Removes `trx_id`'s waiting request; returns true if there was one.
    pub(crate) fn remove_waiting(&mut self, trx_id: u64) -> bool {
        match self.waiting.iter().position(|w| w.trx.id() == trx_id) {
            Some(position) => {
                self.waiting.remove(position);
                true
            }
            None => false,
        }
    }

    fn grant_waiting(&mut self, index: usize, rule: GrantRule) -> Grant {
        let waiting = self.waiting.remove(index);
        let new_entry = self.add_granted(&waiting.trx, waiting.mode);
        Grant {
            trx: waiting.trx,
            new_entry,
            rule,
        }
    }

    /// Grants every waiting request the policy allows now, and returns them.
    ///
    /// FIFO (and CATS with at most one waiting request, and CATS while a request has
    /// been overtaken [`LOCK_CATS_OVERTAKES_MAX`] times): one pass in arrival order
    /// grants each request that has no blocker, i.e. conflicts neither with a granted
    /// entry nor with an earlier request still waiting. A waiting X therefore holds back
    /// every later request that conflicts with it, and is never starved by a stream of
    /// S requests.
    ///
    /// CATS: see [`Queue::schedule_cats`].
    pub(crate) fn schedule(&mut self, policy: LockScheduling) -> Vec<Grant> {
        let mut grants = Vec::new();
        if self.waiting.is_empty() {
            return grants;
        }
        let starving = policy == LockScheduling::Cats
            && self
                .waiting
                .iter()
                .any(|w| w.overtaken_rounds >= LOCK_CATS_OVERTAKES_MAX && w.is_active());
        if policy == LockScheduling::Fifo || self.waiting.len() <= 1 || starving {
            let rule = if starving {
                GrantRule::Starvation
            } else {
                GrantRule::Fifo
            };
            self.schedule_fifo(rule, &mut grants);
        } else {
            self.schedule_cats(&mut grants);
        }
        grants
    }

    fn schedule_fifo(&mut self, rule: GrantRule, grants: &mut Vec<Grant>) {
        let mut index = 0;
        while index < self.waiting.len() {
            let waiting = &self.waiting[index];
            if waiting.is_active() && !self.has_blocker(waiting.trx.id(), waiting.mode, index) {
                grants.push(self.grant_waiting(index, rule));
            } else {
                index += 1;
            }
        }
    }

    /// CATS. The candidates are the active waiting requests compatible with every other
    /// trx's granted entry (arrival order among waiters does not matter). For each
    /// distinct mode among them, a group is formed greedily: the heaviest candidate of
    /// that mode, then every other candidate compatible with the group so far, heaviest
    /// first. A group's score is the sum of its members' weights divided by
    /// [`group_finish_factor`]; the best group is granted (ties go to the group with the
    /// oldest request). Rounds repeat until no candidate is left, so a request whose
    /// only conflict was with a granted insert intention (which is not kept) is granted
    /// too. Finally every request still waiting that is older than one just granted
    /// counts one more overtaken round.
    fn schedule_cats(&mut self, grants: &mut Vec<Grant>) {
        let mut newest_granted_seq = None;
        let mut candidates: Vec<(usize, u64)> = Vec::new();
        let mut group: Vec<usize> = Vec::new();
        let mut best: Vec<usize> = Vec::new();
        loop {
            candidates.clear();
            for (index, waiting) in self.waiting.iter().enumerate() {
                if waiting.is_active()
                    && !self.conflicts_with_granted(waiting.trx.id(), waiting.mode)
                {
                    candidates.push((index, waiting.trx.weight()));
                }
            }
            if candidates.is_empty() {
                break;
            }
            // Heaviest first; among equals, oldest first.
            candidates.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
            best.clear();
            let mut best_score = f64::MIN;
            let mut best_oldest_seq = u64::MAX;
            for (seed_position, &(seed, _)) in candidates.iter().enumerate() {
                let seed_mode = self.waiting[seed].mode;
                let seen_mode = candidates[..seed_position]
                    .iter()
                    .any(|&(other, _)| self.waiting[other].mode == seed_mode);
                if seen_mode {
                    continue;
                }
                group.clear();
                group.push(seed);
                let mut union = seed_mode;
                let mut weight_sum = candidates[seed_position].1;
                for &(other, weight) in &candidates {
                    let mode = self.waiting[other].mode;
                    if other != seed && union.compatible(mode) {
                        group.push(other);
                        union = union.union(mode);
                        weight_sum += weight;
                    }
                }
                let score = weight_sum as f64 / group_finish_factor(group.len());
                let oldest_seq = group
                    .iter()
                    .map(|&i| self.waiting[i].seq)
                    .min()
                    .unwrap_or(u64::MAX);
                let better = score > best_score * (1.0 + 1e-12)
                    || (score >= best_score * (1.0 - 1e-12) && oldest_seq < best_oldest_seq);
                if better {
                    best_score = score;
                    best_oldest_seq = oldest_seq;
                    std::mem::swap(&mut best, &mut group);
                }
            }
            // Remove from the back so earlier indexes stay valid.
            best.sort_unstable();
            for &index in best.iter().rev() {
                let seq = self.waiting[index].seq;
                newest_granted_seq = newest_granted_seq.max(Some(seq));
                grants.push(self.grant_waiting(index, GrantRule::Cats));
            }
        }
        if let Some(newest) = newest_granted_seq {
            for waiting in &mut self.waiting {
                if waiting.seq < newest {
                    waiting.overtaken_rounds += 1;
                }
            }
        }
    }
}
