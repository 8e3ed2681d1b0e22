//! Range cursors, forward and backward, with inclusive, exclusive or open bounds.
//!
//! A cursor holds no latch between calls to [`Cursor::next_entry`]: it copies the
//! in-range entries of one leaf under a shared latch, remembers the last key it
//! returned and the sibling to visit next, and releases the latch. The copies go into
//! one byte buffer that every leaf reuses, so a long scan allocates only while that
//! buffer grows to a leaf's size, not once per entry. So a caller may
//! block between rows (the lock manager will make cursors wait for row locks) without
//! blocking writers.
//!
//! Moving on, a cursor checks by keys, not by page numbers, that it continues from the
//! right place: a merge may have freed the leaf it remembers or moved a sibling's
//! entries into it, and a split may have reused a freed page number, so a matching
//! link proves nothing. Forward, it latches its leaf again and continues there if the
//! leaf's first key is not past the cursor (taking any entries moved in ahead of the
//! cursor), then couples to the right sibling. Backward, it releases first, as the
//! left-to-right latch order requires, then latches the left sibling and continues
//! there if nothing ahead of the cursor can lie to its right (it holds a key at or past
//! the cursor, or its right sibling, latched after it, starts there). Otherwise the
//! cursor descends again from the root to the first key past the last one it returned.

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
    /// The in-range entries of the current leaf, in the cursor's direction: their keys
    /// and values one after the other in `bytes`, and where each lies in `spans`.
    bytes: Vec<u8>,
    spans: Vec<EntrySpan>,
    /// The next span to return.
    position: usize,
    /// The leaf the spans came from, and its sibling in the cursor's direction.
    leaf_no: u32,
    sibling_no: u32,
    /// The last key returned (its buffer is reused for the next one).
    last_key: Option<Vec<u8>>,
    started: bool,
    /// No entries remain beyond the buffered ones.
    exhausted: bool,
    /// The most entries a forward cursor buffers from a leaf at a time.
    fill_limit: usize,
}

/// Where one buffered entry lies in `Cursor::bytes`: its key at `start`, its value
/// right after it.
#[derive(Clone, Copy)]
struct EntrySpan {
    start: usize,
    key_bytes: usize,
    value_bytes: usize,
}

impl Tree {
    /// A cursor over the entries with keys between `lower` and `upper`.
    pub fn range(&self, lower: Bound, upper: Bound, direction: Direction) -> Cursor<'_> {
        Cursor {
            tree: self,
            lower,
            upper,
            direction,
            bytes: Vec::new(),
            spans: Vec::new(),
            position: 0,
            leaf_no: 0,
            sibling_no: 0,
            last_key: None,
            started: false,
            exhausted: false,
            fill_limit: usize::MAX,
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
    /// Buffers at most `entries` entries of a leaf at a time (at least one), for a
    /// caller that reads only the first few: the rest of the leaf is not copied.
    /// Only forward cursors take the limit; a backward one buffers what is ahead in
    /// each leaf.
    pub fn buffer_at_most(mut self, entries: usize) -> Self {
        if self.direction == Direction::Forward {
            self.fill_limit = entries.max(1);
        }
        self
    }

    /// The next entry in the cursor's direction, or `None` at the end of the range.
    pub fn next_entry(&mut self) -> Result<Option<(&[u8], &[u8])>> {
        while self.position >= self.spans.len() {
            if self.exhausted {
                return Ok(None);
            }
            self.load_next_leaf()?;
        }
        let span = self.spans[self.position];
        self.position += 1;
        let key_end = span.start + span.key_bytes;
        let key = &self.bytes[span.start..key_end];
        match &mut self.last_key {
            Some(last) => {
                last.clear();
                last.extend_from_slice(key);
            }
            None => self.last_key = Some(key.to_vec()),
        }
        Ok(Some((
            key,
            &self.bytes[key_end..key_end + span.value_bytes],
        )))
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

    /// Appends one entry to the buffered ones.
    fn buffer(&mut self, key: &[u8], value: &[u8]) {
        self.spans.push(EntrySpan {
            start: self.bytes.len(),
            key_bytes: key.len(),
            value_bytes: value.len(),
        });
        self.bytes.extend_from_slice(key);
        self.bytes.extend_from_slice(value);
    }

    /// Buffers the entries of `leaf` that are in range and ahead of the cursor. Marks
    /// the cursor exhausted if the range ends inside this leaf or the level ends.
    fn fill(&mut self, leaf_no: u32, node: Node<'_>) {
        self.bytes.clear();
        self.spans.clear();
        if self.fill_limit == usize::MAX && self.bytes.capacity() == 0 {
            // Room for a whole leaf at once rather than growing by doubling.
            self.bytes.reserve(node.page_bytes());
        }
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
                        self.buffer(key, node.payload(i));
                        if self.spans.len() >= self.fill_limit {
                            // The rest of the leaf is read when these are taken
                            // (`load_next_leaf` reads the leaf again, from the last
                            // key returned).
                            return;
                        }
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
                        self.buffer(key, node.payload(i));
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

    /// The key the cursor stands at (the last key returned, else the starting bound)
    /// and whether an entry equal to it is still ahead; `None` before the first entry
    /// of an unbounded start.
    fn position(&self) -> Option<(&[u8], bool)> {
        if let Some(last) = &self.last_key {
            return Some((last.as_slice(), false));
        }
        let bound = match self.direction {
            Direction::Forward => &self.lower,
            Direction::Backward => &self.upper,
        };
        match bound {
            StdBound::Included(b) => Some((b.as_slice(), true)),
            StdBound::Excluded(b) => Some((b.as_slice(), false)),
            StdBound::Unbounded => None,
        }
    }

    /// Moving forward, `node` (latched) is a sound place to continue from if no entry
    /// ahead of the cursor can lie to its left: its first key is not ahead.
    fn forward_from(&self, node: Node<'_>) -> bool {
        if !node.is_leaf() || node.is_empty() {
            return false;
        }
        match self.position() {
            Some((key, _)) => node.key(0) <= key,
            None => node.left() == 0,
        }
    }

    /// Moving backward, the latched leaf `node` is a sound place to continue from if
    /// no entry ahead of the cursor can lie to its right: it holds a key at or past the
    /// cursor's position, or the first non-empty leaf to its right (latched after it,
    /// left to right) starts there, or there is none.
    fn backward_from(&self, node: Node<'_>) -> Result<bool> {
        if !node.is_node() || !node.is_leaf() {
            return Ok(false);
        }
        let position = self.position();
        if let Some((key, _)) = position
            && !node.is_empty()
            && node.key(node.len() - 1) >= key
        {
            return Ok(true);
        }
        let mut right_no = node.right();
        // Held on purpose, never read: the empty leaf just passed stays share-latched
        // until its right sibling is latched (coupling left to right), so a merge
        // cannot unlink the link being followed meanwhile.
        let mut _coupled = None;
        while right_no != 0 {
            let right = self.tree.read_node(right_no)?;
            let view = Node::new(&right);
            if !view.is_leaf() {
                return Ok(false);
            }
            if !view.is_empty() {
                return Ok(match position {
                    Some((key, true)) => view.key(0) > key,
                    Some((key, false)) => view.key(0) >= key,
                    None => false,
                });
            }
            right_no = view.right();
            _coupled = Some(right);
        }
        Ok(true)
    }

    /// Fills from the latched leaf `leaf`, which is in place for the cursor's position;
    /// moving forward, couples on to the right past leaves with nothing ahead.
    fn fill_from(&mut self, mut leaf: tarn_buffer::PageReadGuard<'t>) -> Result<()> {
        loop {
            let leaf_no = leaf.page_id().page_no.0;
            self.fill(leaf_no, Node::new(&leaf));
            if !self.spans.is_empty() || self.exhausted || self.direction == Direction::Backward {
                return Ok(());
            }
            let next = self.tree.read_node(self.sibling_no)?;
            // While both are latched, the right sibling links back (a broken link
            // must not make the cursor go round in circles).
            if !Node::new(&next).is_leaf() || Node::new(&next).left() != leaf_no {
                return Err(self.tree.corrupt(
                    self.sibling_no,
                    format!(
                        "leaf {leaf_no} links to it on the right, but it is no leaf linking back"
                    ),
                ));
            }
            drop(leaf);
            leaf = next;
        }
    }

    /// Loads the next leaf's entries. A leaf the cursor remembers may have changed
    /// since it was read: a merge may have freed it or moved a sibling's entries into
    /// it, and a split may have reused a freed page number for other keys. So the
    /// links are followed only from a leaf whose keys show it is still in the right
    /// place; otherwise the cursor descends from the root to its position.
    fn load_next_leaf(&mut self) -> Result<()> {
        let tree = self.tree;
        if self.started {
            match self.direction {
                // Coupled: the current leaf is latched again, its entries ahead of the
                // cursor (moved in by a merge) are taken first, then its right sibling
                // is latched before it is released.
                Direction::Forward => {
                    if let Ok(current) = tree.read_node(self.leaf_no)
                        && self.forward_from(Node::new(&current))
                    {
                        return self.fill_from(current);
                    }
                }
                Direction::Backward => {
                    if self.sibling_no == self.leaf_no {
                        return Err(
                            tree.corrupt(self.leaf_no, "a leaf links to itself on the left".into())
                        );
                    }
                    // The sibling may have been freed since: then it is no node at all.
                    let next = tree
                        .pool
                        .fetch_shared_as(tree.page_id(self.sibling_no), Some(&tree.page_latch))?;
                    if self.backward_from(Node::new(&next))? {
                        return self.fill_from(next);
                    }
                    drop(next);
                    // Descending must not lead back to the same leaf with nothing to
                    // return and the same unusable left link, or the cursor would go
                    // round in circles.
                    let (from, failed) = (self.leaf_no, self.sibling_no);
                    let leaf = self.descend()?;
                    self.fill_from(leaf)?;
                    if self.spans.is_empty()
                        && !self.exhausted
                        && self.leaf_no == from
                        && self.sibling_no == failed
                    {
                        return Err(tree.corrupt(
                            from,
                            format!(
                                "leaf {from} links on the left to page {failed}, which does not link back"
                            ),
                        ));
                    }
                    return Ok(());
                }
            }
        }
        self.started = true;
        let leaf = self.descend()?;
        self.fill_from(leaf)
    }
}
