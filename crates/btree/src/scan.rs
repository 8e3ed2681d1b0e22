//! Support for the two read-path techniques: the parallel full scan (S1) and
//! sorted prefetch for secondary-index range scans (S2).
//!
//! - [`Tree::partition`] splits the leaf level into key ranges by descending the inner
//!   levels until one level has at least as many children as ranges wanted (S1).
//! - [`Tree::scan_range`] walks the leaves of one range left to right, visiting each
//!   entry under the leaf's shared latch (so a worker decodes straight from the page),
//!   and keeps a window of upcoming leaves in flight through the buffer pool's
//!   prefetch. Which leaves come next is read from the level-1 nodes; the walk itself
//!   follows the sibling links, so a stale hint costs a wasted read, never a wrong row.
//! - [`Tree::leaf_pages_for`] finds, for a batch of keys, the leaf pages holding them by
//!   descending only to level 1 (S2): the leaves are then prefetched, sorted.

use std::collections::VecDeque;
use std::ops::Bound as StdBound;
use std::time::Instant;

use tarn_common::Result;

use crate::Tree;
use crate::cursor::Bound;
use crate::node::Node;

/// Walks `Tree::partition` makes before giving up on a view torn by writers.
const PARTITION_ATTEMPTS: u32 = 3;

/// One part of a partitioned key space: keys in `[lower, upper)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeafRange {
    pub lower: Bound,
    pub upper: Bound,
}

/// What a range scan did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ScanStats {
    pub leaves: u64,
    pub entries: u64,
    /// Time spent getting leaves (latching, and waiting for reads not yet done).
    pub fetch_ns: u64,
    /// Time spent in the visitor (decoding).
    pub visit_ns: u64,
    /// Leaf reads started ahead of the walk: only reads the buffer pool actually
    /// started (what [`tarn_buffer::BufferPool::prefetch`] returns). A scan resumed
    /// after the last key it visited submits the leaves ahead again, but those already
    /// cached or in flight are not read, nor counted, twice.
    pub prefetched: u64,
}

impl std::ops::AddAssign for ScanStats {
    fn add_assign(&mut self, o: ScanStats) {
        self.leaves += o.leaves;
        self.entries += o.entries;
        self.fetch_ns += o.fetch_ns;
        self.visit_ns += o.visit_ns;
        self.prefetched += o.prefetched;
    }
}

impl Tree {
    /// Splits the key space into at most `parts` ranges of about equal numbers of
    /// leaves: descends level by level until a level has at least `parts` nodes (or the
    /// leaf level is reached), then cuts that level's node list into `parts` runs.
    /// The ranges are in key order, adjacent and together cover every key.
    ///
    /// The walk takes no latch across levels, so writers may change the tree under it:
    /// a node freed or moved meanwhile, or range starts out of order, make it start
    /// again, up to `PARTITION_ATTEMPTS` times (a tree that is really corrupt fails
    /// every time and the error is returned). The ranges are correct whatever the tree
    /// looks like later: they are adjacent and cover every key; only their balance
    /// depends on the snapshot.
    pub fn partition(&self, parts: usize) -> Result<Vec<LeafRange>> {
        let mut attempt = 1;
        loop {
            match self.partition_once(parts) {
                Err(error) if error.is_corruption() && attempt < PARTITION_ATTEMPTS => {
                    attempt += 1;
                }
                result => return result,
            }
        }
    }

    fn partition_once(&self, parts: usize) -> Result<Vec<LeafRange>> {
        let parts = parts.max(1);
        // Nodes of the current level: (lowest key routed to it, page number).
        let mut level_nodes: Vec<(Option<Vec<u8>>, u32)> = vec![(None, crate::ROOT_PAGE_NO)];
        // The level of the nodes in `level_nodes`' parents (None: the root's level).
        // Each level must be one below the last, or a node that is its own child
        // would make the descent go round forever.
        let mut parent_level: Option<u16> = None;
        loop {
            if level_nodes.len() >= parts {
                break;
            }
            let mut children = Vec::new();
            let mut leaf_level = false;
            let mut this_level = 0;
            for (lower, page_no) in &level_nodes {
                let guard = self.read_node(*page_no)?;
                if let Some(level) = parent_level {
                    self.expect_level(*page_no, &guard, level)?;
                }
                let node = Node::new(&guard);
                this_level = node.level();
                if node.is_leaf() {
                    leaf_level = true;
                    break;
                }
                children.push((lower.clone(), node.leftmost()));
                for i in 0..node.len() {
                    children.push((Some(node.key(i).to_vec()), node.child(i)));
                }
            }
            if leaf_level {
                break;
            }
            parent_level = Some(this_level);
            level_nodes = children;
        }
        let n = level_nodes.len();
        let parts = parts.min(n);
        let starts: Vec<Option<Vec<u8>>> = (0..parts)
            .map(|p| level_nodes[p * n / parts].0.clone())
            .collect();
        // Range starts after the first must strictly increase; a view torn by a
        // concurrent split or merge might not.
        if starts[1..].windows(2).any(|w| w[0] >= w[1]) || starts[1..].iter().any(Option::is_none) {
            return Err(self.corrupt(
                crate::ROOT_PAGE_NO,
                "partition boundaries are out of order".into(),
            ));
        }
        Ok((0..parts)
            .map(|p| LeafRange {
                lower: match &starts[p] {
                    Some(key) if p > 0 => StdBound::Included(key.clone()),
                    _ => StdBound::Unbounded,
                },
                upper: match starts.get(p + 1) {
                    Some(Some(key)) => StdBound::Excluded(key.clone()),
                    _ => StdBound::Unbounded,
                },
            })
            .collect())
    }

    /// Visits every entry with a key in `range`, in key order, calling `visit(key,
    /// value)` under the leaf's shared latch; `visit` returns false to stop. Keeps up
    /// to `readahead_pages` upcoming leaves in flight (0: no read-ahead).
    ///
    /// No latch is held between leaves (the read-ahead reads level-1 nodes, which may
    /// not be latched below a leaf): the leaf just visited is latched again and checked
    /// by its keys to still be in place (see `leaf_after`), and if a split or merge
    /// moved it the walk descends again to the first key past the last one visited.
    pub fn scan_range(
        &self,
        range: &LeafRange,
        readahead_pages: usize,
        mut visit: impl FnMut(&[u8], &[u8]) -> Result<bool>,
    ) -> Result<ScanStats> {
        let mut stats = ScanStats::default();
        let mut ahead = ReadAhead::new(self, range, readahead_pages)?;
        stats.prefetched += ahead.visited(None)? as u64;
        let mut last_key: Option<Vec<u8>> = None;
        // The leaf expected next and the leaf just visited (None: descend).
        let mut next: Option<(u32, u32)> = None;
        loop {
            let fetch_started = Instant::now();
            let leaf = match next {
                Some((leaf_no, from)) => {
                    stats.prefetched += ahead.visited(Some(leaf_no))? as u64;
                    self.leaf_after(from, last_key.as_deref(), &range.lower)?
                }
                None => self.resume_leaf(last_key.as_deref(), &range.lower)?,
            };
            stats.fetch_ns += fetch_started.elapsed().as_nanos() as u64;
            stats.leaves += 1;
            let node = Node::new(&leaf);
            let visit_started = Instant::now();
            let mut more = true;
            // Past the last key visited and at or above the lower bound (the last key
            // visited may lie below it, in a leaf with no key in range).
            let past = |key: &[u8]| match node.search(key) {
                Ok(i) => i + 1,
                Err(i) => i,
            };
            let from_lower = match &range.lower {
                StdBound::Included(key) => node.search(key).unwrap_or_else(|i| i),
                StdBound::Excluded(key) => past(key),
                StdBound::Unbounded => 0,
            };
            let start = from_lower.max(last_key.as_deref().map_or(0, past));
            let in_upper = |key: &[u8]| match &range.upper {
                StdBound::Unbounded => true,
                StdBound::Included(b) => key <= b.as_slice(),
                StdBound::Excluded(b) => key < b.as_slice(),
            };
            // Keys ascend in a leaf: if its last one is in range, all are.
            let all_in_upper = node.is_empty() || in_upper(node.key(node.len() - 1));
            for i in start..node.len() {
                let key = node.key(i);
                if !all_in_upper && !in_upper(key) {
                    more = false;
                    break;
                }
                stats.entries += 1;
                if !visit(key, node.payload(i))? {
                    more = false;
                    break;
                }
            }
            stats.visit_ns += visit_started.elapsed().as_nanos() as u64;
            let right = node.right();
            if !more || right == 0 {
                return Ok(stats);
            }
            if !node.is_empty() {
                last_key = Some(node.key(node.len() - 1).to_vec());
            }
            next = Some((right, leaf.page_id().page_no.0));
        }
    }

    /// The leaf to visit after leaf `from`, whose keys up to `last_key` were visited.
    /// `from` may have changed since: a merge may have freed it or moved its right
    /// sibling's entries into it, and a split may have reused a freed page number, so
    /// its links are trusted only if its keys show it is still in place (its first key
    /// is not past `last_key`). Then it is visited again if it gained keys past
    /// `last_key`, and otherwise its right sibling is latched before it is released.
    /// If not, the walk descends again.
    fn leaf_after(
        &self,
        from: u32,
        last_key: Option<&[u8]>,
        lower: &Bound,
    ) -> Result<tarn_buffer::PageReadGuard<'_>> {
        let guard = self
            .pool
            .fetch_shared_as(self.page_id(from), Some(&self.page_latch))?;
        let node = Node::new(&guard);
        let position = match (last_key, lower) {
            (Some(key), _) => Some(key),
            (None, StdBound::Included(key) | StdBound::Excluded(key)) => Some(key.as_slice()),
            (None, StdBound::Unbounded) => None,
        };
        let in_place = node.is_node()
            && node.is_leaf()
            && !node.is_empty()
            && match position {
                Some(key) => node.key(0) <= key,
                None => node.left() == 0,
            };
        if !in_place {
            drop(guard);
            return self.resume_leaf(last_key, lower);
        }
        let gained = last_key.is_none_or(|key| node.key(node.len() - 1) > key);
        let right = node.right();
        if gained || right == 0 {
            return Ok(guard);
        }
        let next = self.read_node(right)?;
        self.expect_back_link(from, &next)?;
        drop(guard);
        self.past_empty(next)
    }

    /// While both are latched, a leaf's right sibling is a leaf linking back to it: a
    /// broken link must not make a walk go round in circles.
    fn expect_back_link(&self, from: u32, next: &tarn_buffer::PageReadGuard<'_>) -> Result<()> {
        let node = Node::new(next);
        if node.is_leaf() && node.left() == from {
            return Ok(());
        }
        Err(self.corrupt(
            next.page_id().page_no.0,
            format!("leaf {from} links to it on the right, but it is no leaf linking back"),
        ))
    }

    /// `leaf`, or if it is empty (only the root may be, but an empty leaf must not
    /// make a walk go round in circles) the first non-empty leaf to its right,
    /// coupling latches on the way.
    fn past_empty<'a>(
        &'a self,
        mut leaf: tarn_buffer::PageReadGuard<'a>,
    ) -> Result<tarn_buffer::PageReadGuard<'a>> {
        loop {
            let node = Node::new(&leaf);
            if !node.is_leaf() || !node.is_empty() || node.right() == 0 {
                return Ok(leaf);
            }
            let from = leaf.page_id().page_no.0;
            let next = self.read_node(node.right())?;
            self.expect_back_link(from, &next)?;
            drop(leaf);
            leaf = next;
        }
    }

    /// The leaf holding the first key after `last_key` (or, before any, the lower bound).
    fn resume_leaf(
        &self,
        last_key: Option<&[u8]>,
        lower: &Bound,
    ) -> Result<tarn_buffer::PageReadGuard<'_>> {
        let leaf = match (last_key, lower) {
            (Some(key), _) => self.find_leaf(key)?,
            (None, StdBound::Included(key) | StdBound::Excluded(key)) => self.find_leaf(key)?,
            (None, StdBound::Unbounded) => self.edge_leaf(false)?,
        };
        self.past_empty(leaf)
    }

    /// The leaf pages that hold `keys` (sorted ascending), found by descending to
    /// level 1 only; consecutive keys under the same level-1 node are routed inside it
    /// under its shared latch, with no new descent and no copy of the node.
    /// Duplicates are possible; the caller sorts and de-duplicates.
    pub fn leaf_pages_for(&self, keys: &[&[u8]]) -> Result<Vec<u32>> {
        let mut pages = Vec::with_capacity(keys.len());
        let mut next = 0;
        while next < keys.len() {
            let Some(level1) = self.find_level1(keys[next])? else {
                // The root is the only leaf: it holds every key.
                pages.resize(keys.len(), crate::ROOT_PAGE_NO);
                break;
            };
            let node = Node::new(&level1.guard);
            // The first key is routed here by construction; the next ones while the
            // node's key range covers them.
            loop {
                pages.push(node.child_at(node.route(keys[next])));
                next += 1;
                if next == keys.len() || !level1.covers(keys[next]) {
                    break;
                }
            }
        }
        Ok(pages)
    }

    /// The level-1 node routing `key`, shared-latched, with the key range it covers.
    fn find_level1(&self, key: &[u8]) -> Result<Option<Level1<'_>>> {
        let mut guard = self.read_node(crate::ROOT_PAGE_NO)?;
        let (mut lower, mut upper): (Option<Vec<u8>>, Option<Vec<u8>>) = (None, None);
        loop {
            let node = Node::new(&guard);
            if node.is_leaf() {
                return Ok(None);
            }
            if node.level() == 1 {
                return Ok(Some(Level1 {
                    lower,
                    upper,
                    guard,
                }));
            }
            let index = node.route(key);
            if index > 0 {
                lower = Some(node.key(index - 1).to_vec());
            }
            if index < node.len() {
                upper = Some(node.key(index).to_vec());
            }
            let level = node.level();
            let child_no = node.child_at(index);
            let child = self.read_node(child_no)?;
            self.expect_level(child_no, &child, level)?;
            guard = child;
        }
    }
}

/// A level-1 node found by [`Tree::find_level1`]: the page, shared-latched, and the
/// key range its parents route to it.
struct Level1<'t> {
    lower: Option<Vec<u8>>,
    upper: Option<Vec<u8>>,
    guard: tarn_buffer::PageReadGuard<'t>,
}

impl Level1<'_> {
    fn covers(&self, key: &[u8]) -> bool {
        self.lower.as_deref().is_none_or(|l| key >= l)
            && self.upper.as_deref().is_none_or(|u| key < u)
    }
}

/// The read-ahead window of one range scan: leaf page numbers taken from level-1 nodes
/// (following their sibling links), of which up to `window` beyond the leaf being
/// visited are kept in flight.
struct ReadAhead<'t> {
    tree: &'t Tree,
    window: usize,
    /// Upcoming leaves, in key order, and how many of them were submitted.
    queue: VecDeque<u32>,
    submitted: usize,
    /// The next level-1 node to take leaves from (0: none left).
    next_level1: u32,
    upper: Bound,
}

impl<'t> ReadAhead<'t> {
    fn new(tree: &'t Tree, range: &LeafRange, window: usize) -> Result<ReadAhead<'t>> {
        let mut ahead = ReadAhead {
            tree,
            window,
            queue: VecDeque::new(),
            submitted: 0,
            next_level1: 0,
            upper: range.upper.clone(),
        };
        if window == 0 {
            return Ok(ahead);
        }
        let start_key: &[u8] = match &range.lower {
            StdBound::Included(k) | StdBound::Excluded(k) => k,
            StdBound::Unbounded => &[],
        };
        // Descend to the level-1 node covering the start, taking its children from
        // the start's onward.
        let mut guard = tree.read_node(crate::ROOT_PAGE_NO)?;
        loop {
            let node = Node::new(&guard);
            if node.is_leaf() {
                return Ok(ahead); // a single leaf: nothing to read ahead
            }
            let index = node.route(start_key);
            if node.level() == 1 {
                ahead.take_children(node, index);
                break;
            }
            let child_no = node.child_at(index);
            let child = tree.read_node(child_no)?;
            tree.expect_level(child_no, &child, node.level())?;
            guard = child;
        }
        Ok(ahead)
    }

    fn take_children(&mut self, node: Node<'_>, from: usize) {
        for c in from..node.child_count() {
            if c > 0 && !self.below_upper(node.key(c - 1)) {
                self.next_level1 = 0;
                return;
            }
            self.queue.push_back(node.child_at(c));
        }
        self.next_level1 = node.right();
    }

    fn below_upper(&self, key: &[u8]) -> bool {
        match &self.upper {
            StdBound::Unbounded => true,
            StdBound::Included(b) => key <= b.as_slice(),
            StdBound::Excluded(b) => key < b.as_slice(),
        }
    }

    /// The walk is about to read `leaf_no` (`None`: the first leaf): drop it (and
    /// anything before it) from the queue, refill, and submit reads to keep the window
    /// full. Returns reads started. Called with no latch held.
    fn visited(&mut self, leaf_no: Option<u32>) -> Result<usize> {
        if self.window == 0 {
            return Ok(0);
        }
        if let Some(at) = leaf_no.and_then(|l| self.queue.iter().position(|&p| p == l)) {
            self.queue.drain(..=at);
            self.submitted = self.submitted.saturating_sub(at + 1);
        }
        while self.queue.len() < self.window && self.next_level1 != 0 {
            let guard = self.tree.read_node(self.next_level1)?;
            let node = Node::new(&guard);
            if node.level() != 1 {
                self.next_level1 = 0;
                break;
            }
            self.take_children(node, 0);
        }
        // Submit in batches of at least half a window, so each worker keeps several
        // reads in flight without a submission per leaf.
        let in_flight = self.submitted.min(self.queue.len());
        let end = self.window.min(self.queue.len());
        if end > in_flight && (end - in_flight) * 2 >= self.window.min(self.queue.len()).max(1) {
            let batch: Vec<_> = self
                .queue
                .range(in_flight..end)
                .map(|&p| self.tree.page_id(p))
                .collect();
            let started = self.tree.pool.prefetch(&batch);
            self.submitted = end;
            return Ok(started);
        }
        Ok(0)
    }
}
