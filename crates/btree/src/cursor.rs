//! Range cursors, forward and backward, with inclusive, exclusive or open bounds.
//!
//! A cursor holds no latch between calls to [`Cursor::next`]: it copies the in-range
//! entries of one leaf under a shared latch, remembers the last key it returned and
//! the sibling to visit next, and releases the latch. So a caller may block between
//! rows (the lock manager will make cursors wait for row locks) without blocking
//! writers.
//!
//! Moving on, a cursor latches the sibling and checks that it is still the neighbour
//! it expects (its back link names the leaf the cursor came from). If a split or merge
//! changed the neighbourhood meanwhile, the cursor descends again from the root to
//! the first key past the last one it returned. Forward moves couple latches (the next
//! leaf is latched before the current one is released); backward moves release first,
//! as the left-to-right latch order requires.

use std::ops::Bound as StdBound;

use tarn_common::Result;

use crate::Tree;
use crate::node::Node;

pub type Bound = StdBound<Vec<u8>>;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    Forward,
    Backward,
}

/// A cursor over the entries of a tree between two bounds.
pub struct Cursor<'t> {
    tree: &'t Tree,
    lower: Bound,
    upper: Bound,
    direction: Direction,
    /// The in-range entries of the current leaf, in the cursor's direction.
    entries: Vec<(Vec<u8>, Vec<u8>)>,
    position: usize,
    /// The leaf `entries` came from, and its sibling in the cursor's direction.
    leaf_no: u32,
    sibling_no: u32,
    /// The last key returned (or the bound the scan starts from).
    last_key: Option<Vec<u8>>,
    started: bool,
    /// No entries remain beyond the buffered ones.
    exhausted: bool,
}

impl Tree {
    /// A cursor over the entries with keys between `lower` and `upper`.
    pub fn range(&self, lower: Bound, upper: Bound, direction: Direction) -> Cursor<'_> {
        Cursor {
            tree: self,
            lower,
            upper,
            direction,
            entries: Vec::new(),
            position: 0,
            leaf_no: 0,
            sibling_no: 0,
            last_key: None,
            started: false,
            exhausted: false,
        }
    }

    /// The leftmost or rightmost leaf, shared-latched.
    pub(crate) fn edge_leaf(&self, rightmost: bool) -> Result<tarn_buffer::PageReadGuard<'_>> {
        let mut guard = self.read_node(crate::ROOT_PAGE_NO)?;
        loop {
            let node = Node::new(&guard);
            if node.is_leaf() {
                return Ok(guard);
            }
            let level = node.level();
            let child_no = if rightmost {
                node.child_at(node.len())
            } else {
                node.leftmost()
            };
            let child = self.read_node(child_no)?;
            self.expect_level(child_no, &child, level)?;
            guard = child;
        }
    }
}

fn above_lower(key: &[u8], lower: &Bound) -> bool {
    match lower {
        StdBound::Unbounded => true,
        StdBound::Included(b) => key >= b.as_slice(),
        StdBound::Excluded(b) => key > b.as_slice(),
    }
}

fn below_upper(key: &[u8], upper: &Bound) -> bool {
    match upper {
        StdBound::Unbounded => true,
        StdBound::Included(b) => key <= b.as_slice(),
        StdBound::Excluded(b) => key < b.as_slice(),
    }
}

impl<'t> Cursor<'t> {
    /// The next entry in the cursor's direction, or `None` at the end of the range.
    pub fn next_entry(&mut self) -> Result<Option<(&[u8], &[u8])>> {
        while self.position >= self.entries.len() {
            if self.exhausted {
                return Ok(None);
            }
            self.load_next_leaf()?;
        }
        let (key, value) = &self.entries[self.position];
        self.position += 1;
        self.last_key = Some(key.clone());
        Ok(Some((key.as_slice(), value.as_slice())))
    }

    /// Collects the rest of the range (tests and small scans).
    pub fn collect_all(mut self) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
        let mut out = Vec::new();
        while let Some((k, v)) = self.next_entry()? {
            out.push((k.to_vec(), v.to_vec()));
        }
        Ok(out)
    }

    /// True if `key` has not been returned yet in this direction.
    fn is_ahead(&self, key: &[u8]) -> bool {
        match (&self.last_key, self.direction) {
            (None, _) => true,
            (Some(last), Direction::Forward) => key > last.as_slice(),
            (Some(last), Direction::Backward) => key < last.as_slice(),
        }
    }

    /// Buffers the entries of `leaf` that are in range and ahead of the cursor. Marks
    /// the cursor exhausted if the range ends inside this leaf or the level ends.
    fn fill(&mut self, leaf_no: u32, node: Node<'_>) {
        self.entries.clear();
        self.position = 0;
        self.leaf_no = leaf_no;
        let n = node.len();
        match self.direction {
            Direction::Forward => {
                self.sibling_no = node.right();
                let start = match &self.last_key {
                    Some(last) => match node.search(last) {
                        Ok(i) => i + 1,
                        Err(i) => i,
                    },
                    None => match &self.lower {
                        StdBound::Unbounded => 0,
                        StdBound::Included(b) | StdBound::Excluded(b) => {
                            node.search(b).unwrap_or_else(|i| i)
                        }
                    },
                };
                for i in start..n {
                    let key = node.key(i);
                    if !below_upper(key, &self.upper) {
                        self.exhausted = true;
                        return;
                    }
                    if above_lower(key, &self.lower) && self.is_ahead(key) {
                        self.entries.push((key.to_vec(), node.payload(i).to_vec()));
                    }
                }
            }
            Direction::Backward => {
                self.sibling_no = node.left();
                let end = match &self.last_key {
                    Some(last) => node.search(last).unwrap_or_else(|i| i),
                    None => match &self.upper {
                        StdBound::Unbounded => n,
                        StdBound::Included(b) | StdBound::Excluded(b) => match node.search(b) {
                            Ok(i) => i + 1,
                            Err(i) => i,
                        },
                    },
                };
                for i in (0..end.min(n)).rev() {
                    let key = node.key(i);
                    if !above_lower(key, &self.lower) {
                        self.exhausted = true;
                        return;
                    }
                    if below_upper(key, &self.upper) && self.is_ahead(key) {
                        self.entries.push((key.to_vec(), node.payload(i).to_vec()));
                    }
                }
            }
        }
        if self.sibling_no == 0 {
            self.exhausted = true;
        }
    }

    /// The leaf where the scan starts or, after a change to the neighbourhood,
    /// resumes: found by descending from the root.
    fn descend(&self) -> Result<tarn_buffer::PageReadGuard<'t>> {
        let tree: &'t Tree = self.tree;
        let key = match (&self.last_key, self.direction) {
            (Some(last), _) => Some(last.as_slice()),
            (None, Direction::Forward) => match &self.lower {
                StdBound::Included(b) | StdBound::Excluded(b) => Some(b.as_slice()),
                StdBound::Unbounded => None,
            },
            (None, Direction::Backward) => match &self.upper {
                StdBound::Included(b) | StdBound::Excluded(b) => Some(b.as_slice()),
                StdBound::Unbounded => None,
            },
        };
        match key {
            Some(key) => tree.find_leaf(key),
            None => tree.edge_leaf(self.direction == Direction::Backward),
        }
    }

    fn load_next_leaf(&mut self) -> Result<()> {
        let tree = self.tree;
        if !self.started {
            self.started = true;
            let leaf = self.descend()?;
            let leaf_no = leaf.page_id().page_no.0;
            self.fill(leaf_no, Node::new(&leaf));
            return Ok(());
        }
        let from = self.leaf_no;
        let sibling_no = self.sibling_no;
        let sibling = match self.direction {
            // Coupled: the current leaf is latched again (it may be gone: then descend).
            Direction::Forward => {
                let current = tree.read_node(from).ok();
                let linked = current
                    .as_ref()
                    .is_some_and(|c| Node::new(c).is_leaf() && Node::new(c).right() == sibling_no);
                if linked && sibling_no != 0 {
                    let next = tree.read_node(sibling_no)?;
                    drop(current);
                    Some(next)
                } else {
                    None
                }
            }
            Direction::Backward => {
                // The sibling may have been freed since: then it is no node at all.
                let next = tree
                    .pool
                    .fetch_shared_as(tree.page_id(sibling_no), Some(&tree.page_latch))?;
                let node = Node::new(&next);
                (node.is_node() && node.is_leaf() && node.right() == from).then_some(next)
            }
        };
        let leaf = match sibling {
            Some(leaf) if Node::new(&leaf).is_leaf() => leaf,
            _ => self.descend()?,
        };
        let leaf_no = leaf.page_id().page_no.0;
        self.fill(leaf_no, Node::new(&leaf));
        Ok(())
    }
}
