//! The waits-for graph: one node per waiting transaction, its edges to the
//! transactions it waits for, deadlock search, and the incremental CATS weights.
//!
//! The graph lives under one latch (`lock.wait_graph`), taken only on the contended
//! path: when a request must wait, when a waiter leaves, and when a queue with waiters
//! changes. Lock order: a shard latch, then this latch, then a trx's parker. Nobody takes
//! a shard latch while holding this one.
//!
//! # Weights
//!
//! Each node credits its weight to one *designated* blocker (the first trx it waits
//! for, a granted holder when there is one). Each trx's weight is kept equal to
//! 1 + the sum of the weights of the nodes that designate it, which unrolls to
//! 1 + the number of trxs waiting for it directly or through a chain of waits. Since a
//! trx waits for one request at a time and cycles are broken the moment they form, the
//! designated edges form a forest, and a change of one node's weight or designated
//! blocker is applied by walking up its chain, adding or subtracting the delta: the
//! cost is the depth of the chain (usually one or two), paid only when waits begin,
//! end or change target, never on an uncontended request.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Instant;

use tarn_common::limits::{DEADLOCK_SEARCH_NODES_MAX, TRX_ACTIVE_MAX};

use super::LockName;
use super::mode::Mode;
use super::trx::LockTrx;

pub(crate) struct WaitNode {
    pub(crate) trx: Arc<LockTrx>,
    pub(crate) name: LockName,
    pub(crate) mode: Mode,
    pub(crate) started: Instant,
    /// Distinct ids of the trxs this one waits for.
    pub(crate) blockers: Vec<u64>,
    /// The trx this one's weight is credited to.
    pub(crate) designated: Option<Arc<LockTrx>>,
}

/// The outcome of a deadlock search from a requester.
#[derive(Debug)]
pub(crate) enum DeadlockSearch {
    None,
    /// The trxs on a cycle through the requester, requester first.
    Cycle(Vec<Arc<LockTrx>>),
    /// The search visited more than [`DEADLOCK_SEARCH_NODES_MAX`] nodes; treated as a
    /// deadlock with the requester as the victim (as InnoDB does).
    TooDeep,
}

#[derive(Default)]
pub(crate) struct WaitGraph {
    pub(crate) nodes: HashMap<u64, WaitNode>,
    /// Arrival order of waiting requests.
    pub(crate) next_seq: u64,
}

impl WaitGraph {
    pub(crate) fn next_seq(&mut self) -> u64 {
        self.next_seq += 1;
        self.next_seq
    }

    /// Adds `delta` to the weight of `start` and of every trx up its designated chain.
    fn add_weight_up_chain(&self, start: Option<&Arc<LockTrx>>, delta: i64) {
        let mut next = start;
        let mut steps = 0usize;
        while let Some(trx) = next {
            trx.add_weight(delta);
            steps += 1;
            if steps > TRX_ACTIVE_MAX {
                debug_assert!(false, "designated chain longer than TRX_ACTIVE_MAX");
                break;
            }
            next = self
                .nodes
                .get(&trx.id())
                .and_then(|node| node.designated.as_ref());
        }
    }

    /// Adds a waiting trx (which must not be in the graph) and credits its weight up
    /// its designated chain.
    pub(crate) fn insert(&mut self, node: WaitNode) {
        debug_assert!(self.nodes.len() < TRX_ACTIVE_MAX);
        let weight = node.trx.weight() as i64;
        self.add_weight_up_chain(node.designated.as_ref(), weight);
        let previous = self.nodes.insert(node.trx.id(), node);
        assert!(previous.is_none(), "a trx waits for one request at a time");
    }

    /// Removes a trx's node (it was granted, timed out or chosen as a deadlock victim)
    /// and takes its weight back from its designated chain. Nodes that designate it
    /// keep doing so until their own queues change.
    pub(crate) fn remove(&mut self, trx_id: u64) -> Option<WaitNode> {
        let node = self.nodes.remove(&trx_id)?;
        let weight = node.trx.weight() as i64;
        self.add_weight_up_chain(node.designated.as_ref(), -weight);
        Some(node)
    }

    /// Replaces a node's edges, moving its weight if its designated blocker changed.
    pub(crate) fn set_edges(
        &mut self,
        trx_id: u64,
        blockers: &[u64],
        designated: Option<Arc<LockTrx>>,
    ) {
        let Some(node) = self.nodes.get_mut(&trx_id) else {
            return;
        };
        node.blockers.clear();
        node.blockers.extend_from_slice(blockers);
        let old_id = node.designated.as_ref().map(|t| t.id());
        let new_id = designated.as_ref().map(|t| t.id());
        if old_id == new_id {
            return;
        }
        let old = std::mem::replace(&mut node.designated, designated);
        let weight = node.trx.weight() as i64;
        let new = node.designated.clone();
        self.add_weight_up_chain(old.as_ref(), -weight);
        self.add_weight_up_chain(new.as_ref(), weight);
    }

    /// Depth-first search for a cycle back to `requester`, who is about to wait for
    /// `requester_blockers` (and is not in the graph yet).
    pub(crate) fn find_deadlock(
        &self,
        requester: &Arc<LockTrx>,
        requester_blockers: &[u64],
    ) -> DeadlockSearch {
        let requester_id = requester.id();
        let mut visited: HashSet<u64> = HashSet::new();
        // The current path: (node id, index of the next blocker to follow).
        let mut path: Vec<(u64, usize)> = vec![(requester_id, 0)];
        while let Some(top) = path.last_mut() {
            let (id, next) = *top;
            top.1 += 1;
            let blockers = if id == requester_id {
                requester_blockers
            } else {
                &self.nodes[&id].blockers
            };
            let Some(&blocker) = blockers.get(next) else {
                path.pop();
                continue;
            };
            if blocker == requester_id {
                let cycle = path
                    .iter()
                    .map(|&(id, _)| {
                        if id == requester_id {
                            requester.clone()
                        } else {
                            self.nodes[&id].trx.clone()
                        }
                    })
                    .collect();
                return DeadlockSearch::Cycle(cycle);
            }
            if !self.nodes.contains_key(&blocker) || !visited.insert(blocker) {
                continue;
            }
            if visited.len() > DEADLOCK_SEARCH_NODES_MAX {
                return DeadlockSearch::TooDeep;
            }
            path.push((blocker, 0));
        }
        DeadlockSearch::None
    }
}

/// The victim of a deadlock cycle: the trx with the least work; ties go to the
/// requester (the first in `cycle`), then to the youngest (largest id).
pub(crate) fn choose_victim(cycle: &[Arc<LockTrx>]) -> &Arc<LockTrx> {
    let mut victim = &cycle[0];
    for trx in &cycle[1..] {
        let lighter = trx.work() < victim.work()
            || (trx.work() == victim.work()
                && victim.id() != cycle[0].id()
                && trx.id() > victim.id());
        if lighter {
            victim = trx;
        }
    }
    victim
}
