//! Point operations and structure changes, with latch coupling.
//!
//! # Latching protocol
//! Page latches are taken top-down (a parent before its child) and, within a level,
//! left to right. A thread never waits for a latch while holding one lower in the
//! tree or further right at the same level, so latch waits cannot form a cycle.
//! There is no tree-wide latch at all.
//!
//! - **Readers** couple shared latches from the root: latch the child, release the
//!   parent.
//! - **Writers** first try optimistically: shared latches down to level 1, then an
//!   exclusive latch on the leaf. If the change fits in the leaf (an insert that
//!   needs no split, a delete that leaves the leaf above the underfull mark) it is
//!   done there. Otherwise the writer starts again pessimistically: exclusive latches
//!   from the root, releasing every ancestor as soon as a node is *safe* (a split or
//!   merge below it cannot propagate above it), and changes the structure bottom-up
//!   with the latches it still holds.
//! - A **merge with a left sibling** releases the node, latches the left sibling, then
//!   latches the node again: the parent's exclusive latch keeps every other writer
//!   out of both, and readers only ever move right while coupled.
//!
//! The root is always page 1: a root split moves the root's entries into two new
//! children, and a root with a single child absorbs it, so the catalog never changes.

use tarn_buffer::{PageReadGuard, PageWriteGuard};
use tarn_common::{Error, Result};

use crate::Tree;
use crate::change::{Mtr, PageChange, child_payload};
use crate::node::{
    CHILD_BYTES, Node, entry_footprint, max_entry_bytes, underfull_bytes, usable_bytes,
};

pub(crate) type Entry = (Vec<u8>, Vec<u8>);

/// What a write does at its leaf.
#[derive(Clone, Copy)]
pub(crate) enum WriteOp<'a> {
    /// Insert; `replace` overwrites an existing entry instead of failing.
    Insert {
        value: &'a [u8],
        replace: bool,
    },
    /// Replace the value of an existing entry.
    Update {
        value: &'a [u8],
    },
    Delete,
}

/// What a write found and did.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum WriteOutcome {
    Inserted,
    /// The key existed; its old value.
    Replaced(Vec<u8>),
    Deleted(Vec<u8>),
    NotFound,
}

enum Attempt {
    Done(WriteOutcome),
    NeedsStructureChange,
}

impl Tree {
    /// A shared latch on node `page_no`.
    pub(crate) fn read_node(&self, page_no: u32) -> Result<PageReadGuard<'_>> {
        let guard = self
            .pool
            .fetch_shared_as(self.page_id(page_no), Some(&self.page_latch))?;
        self.expect_node(page_no, &guard)?;
        Ok(guard)
    }

    /// An exclusive latch on node `page_no`.
    pub(crate) fn write_node(&self, page_no: u32) -> Result<PageWriteGuard<'_>> {
        let guard = self
            .pool
            .fetch_exclusive_as(self.page_id(page_no), Some(&self.page_latch))?;
        self.expect_node(page_no, &guard)?;
        Ok(guard)
    }

    fn expect_node(&self, page_no: u32, p: &[u8]) -> Result<()> {
        if Node::new(p).is_node() {
            Ok(())
        } else {
            Err(self.corrupt(
                page_no,
                format!(
                    "expected a B+tree node, found page type {}",
                    tarn_io::page::page_type(p).0
                ),
            ))
        }
    }

    /// Checks that `child` (reached from a node at `parent_level`) is one level down.
    pub(crate) fn expect_level(&self, page_no: u32, child: &[u8], parent_level: u16) -> Result<()> {
        let level = Node::new(child).level();
        if parent_level == 0 || level != parent_level - 1 {
            return Err(self.corrupt(
                page_no,
                format!("node at level {level} is the child of a node at level {parent_level}"),
            ));
        }
        Ok(())
    }

    /// The leaf that holds `key`, shared-latched.
    pub(crate) fn find_leaf(&self, key: &[u8]) -> Result<PageReadGuard<'_>> {
        let mut guard = self.read_node(crate::ROOT_PAGE_NO)?;
        loop {
            let node = Node::new(&guard);
            if node.is_leaf() {
                return Ok(guard);
            }
            let level = node.level();
            let child_no = node.child_at(node.route(key));
            let child = self.read_node(child_no)?;
            self.expect_level(child_no, &child, level)?;
            guard = child;
        }
    }

    /// The value stored under `key`.
    pub fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.get_with(key, |value| Ok(value.to_vec()))
    }

    /// Runs `read` on the value stored under `key` while the leaf is latched, so that
    /// what the value refers to (an overflow chain) cannot be freed meanwhile.
    pub fn get_with<T>(
        &self,
        key: &[u8],
        read: impl FnOnce(&[u8]) -> Result<T>,
    ) -> Result<Option<T>> {
        let leaf = self.find_leaf(key)?;
        let node = Node::new(&leaf);
        match node.search(key) {
            Ok(i) => read(node.payload(i)).map(Some),
            Err(_) => Ok(None),
        }
    }

    /// Checks an entry against the size limits: `KeyTooLong` for a key over
    /// [`Tree::max_key_bytes`], `RowTooLarge` for key plus value over
    /// [`Tree::max_entry_bytes`]. Inserts and bulk loads both use it.
    pub(crate) fn check_entry(&self, key: &[u8], value: &[u8]) -> Result<()> {
        let max = max_entry_bytes(self.page_size_bytes);
        if key.len() > self.max_key_bytes() {
            return Err(Error::KeyTooLong {
                max_bytes: self.max_key_bytes(),
            });
        }
        if key.len() + value.len() > max {
            return Err(Error::RowTooLarge(format!(
                "an entry of {} bytes exceeds the {max}-byte limit of index '{}'",
                key.len() + value.len(),
                self.name
            )));
        }
        Ok(())
    }

    pub(crate) fn write(&self, key: &[u8], op: WriteOp<'_>) -> Result<WriteOutcome> {
        if let WriteOp::Insert { value, .. } | WriteOp::Update { value } = op {
            self.check_entry(key, value)?;
        }
        if let Attempt::Done(outcome) = self.write_optimistic(&Mtr::new(&*self.redo), key, op)? {
            return Ok(outcome);
        }
        self.write_pessimistic(&Mtr::group(&*self.redo), key, op)
    }

    /// The leaf for `key`, exclusively latched, reached with shared latches above it.
    fn leaf_for_write(&self, key: &[u8]) -> Result<PageWriteGuard<'_>> {
        loop {
            let mut guard = self.read_node(crate::ROOT_PAGE_NO)?;
            if Node::new(&guard).is_leaf() {
                drop(guard);
                let root = self.write_node(crate::ROOT_PAGE_NO)?;
                if Node::new(&root).is_leaf() {
                    return Ok(root);
                }
                continue; // the root split meanwhile
            }
            loop {
                let node = Node::new(&guard);
                let level = node.level();
                let child_no = node.child_at(node.route(key));
                if level == 1 {
                    let leaf = self.write_node(child_no)?;
                    self.expect_level(child_no, &leaf, level)?;
                    return Ok(leaf);
                }
                let child = self.read_node(child_no)?;
                self.expect_level(child_no, &child, level)?;
                guard = child;
            }
        }
    }

    fn write_optimistic(&self, mtr: &Mtr<'_>, key: &[u8], op: WriteOp<'_>) -> Result<Attempt> {
        let mut leaf = self.leaf_for_write(key)?;
        let is_root = leaf.page_id().page_no.0 == crate::ROOT_PAGE_NO;
        let node = Node::new(&leaf);
        let found = node.search(key);
        let underfull = underfull_bytes(self.page_size_bytes);
        Ok(match (op, found) {
            (WriteOp::Insert { replace: false, .. }, Ok(_)) => {
                return Err(self.duplicate(key));
            }
            (WriteOp::Insert { value, .. }, Err(slot)) => {
                if node.free_bytes() < entry_footprint(key.len(), value.len()) {
                    Attempt::NeedsStructureChange
                } else {
                    mtr.apply(
                        &mut leaf,
                        PageChange::Insert {
                            slot: slot as u16,
                            key,
                            payload: value,
                        },
                    );
                    Attempt::Done(WriteOutcome::Inserted)
                }
            }
            (WriteOp::Insert { value, .. } | WriteOp::Update { value }, Ok(slot)) => {
                let old = node.payload(slot);
                let used_after = node.used_bytes() - old.len() + value.len();
                if used_after > usable_bytes(self.page_size_bytes)
                    || (used_after < underfull && !is_root)
                {
                    Attempt::NeedsStructureChange
                } else {
                    let old = old.to_vec();
                    mtr.apply(
                        &mut leaf,
                        PageChange::SetPayload {
                            slot: slot as u16,
                            payload: value,
                        },
                    );
                    Attempt::Done(WriteOutcome::Replaced(old))
                }
            }
            (WriteOp::Update { .. } | WriteOp::Delete, Err(_)) => {
                Attempt::Done(WriteOutcome::NotFound)
            }
            (WriteOp::Delete, Ok(slot)) => {
                let footprint = entry_footprint(key.len(), node.payload(slot).len());
                if !is_root && node.used_bytes() - footprint < underfull {
                    Attempt::NeedsStructureChange
                } else {
                    let old = node.payload(slot).to_vec();
                    mtr.apply(&mut leaf, PageChange::Delete { slot: slot as u16 });
                    Attempt::Done(WriteOutcome::Deleted(old))
                }
            }
        })
    }

    /// True if a structure change below an inner node cannot reach above it: it has
    /// room for one more separator of the largest size, and losing one leaves it above
    /// the underfull mark (the root: with at least two separators).
    fn is_safe(&self, node: Node<'_>, is_root: bool) -> bool {
        let separator = entry_footprint(self.max_key_bytes(), CHILD_BYTES);
        if node.free_bytes() < separator {
            return false;
        }
        if is_root {
            node.len() >= 2
        } else {
            node.used_bytes() >= underfull_bytes(self.page_size_bytes) + separator
        }
    }

    fn write_pessimistic(
        &self,
        mtr: &Mtr<'_>,
        key: &[u8],
        op: WriteOp<'_>,
    ) -> Result<WriteOutcome> {
        // Ancestors still latched, each with the child index taken from it.
        let mut path: Vec<(PageWriteGuard<'_>, usize)> = Vec::new();
        let mut guard = self.write_node(crate::ROOT_PAGE_NO)?;
        loop {
            let node = Node::new(&guard);
            if node.is_leaf() {
                break;
            }
            let is_root = guard.page_id().page_no.0 == crate::ROOT_PAGE_NO;
            if self.is_safe(node, is_root) {
                path.clear();
            }
            let level = node.level();
            let index = node.route(key);
            let child_no = node.child_at(index);
            let child = self.write_node(child_no)?;
            self.expect_level(child_no, &child, level)?;
            path.push((guard, index));
            guard = child;
        }
        let mut leaf = guard;
        let node = Node::new(&leaf);
        match (op, node.search(key)) {
            (WriteOp::Insert { replace: false, .. }, Ok(_)) => Err(self.duplicate(key)),
            (WriteOp::Insert { value, .. }, Err(slot)) => {
                self.insert_entry(mtr, &mut path, leaf, slot, key, value)?;
                Ok(WriteOutcome::Inserted)
            }
            (WriteOp::Insert { value, .. } | WriteOp::Update { value }, Ok(slot)) => {
                let old = node.payload(slot).to_vec();
                mtr.apply(&mut leaf, PageChange::Delete { slot: slot as u16 });
                if Node::new(&leaf).free_bytes() >= entry_footprint(key.len(), value.len()) {
                    mtr.apply(
                        &mut leaf,
                        PageChange::Insert {
                            slot: slot as u16,
                            key,
                            payload: value,
                        },
                    );
                    self.after_removal(mtr, &mut path, leaf)?;
                } else {
                    self.insert_entry(mtr, &mut path, leaf, slot, key, value)?;
                }
                Ok(WriteOutcome::Replaced(old))
            }
            (WriteOp::Update { .. } | WriteOp::Delete, Err(_)) => Ok(WriteOutcome::NotFound),
            (WriteOp::Delete, Ok(slot)) => {
                let old = node.payload(slot).to_vec();
                mtr.apply(&mut leaf, PageChange::Delete { slot: slot as u16 });
                self.after_removal(mtr, &mut path, leaf)?;
                Ok(WriteOutcome::Deleted(old))
            }
        }
    }

    /// Inserts an entry at `slot` of the latched `node`, splitting it (and, through
    /// `path`, its ancestors) if it does not fit.
    fn insert_entry<'p>(
        &'p self,
        mtr: &Mtr<'_>,
        path: &mut Vec<(PageWriteGuard<'p>, usize)>,
        mut node: PageWriteGuard<'p>,
        slot: usize,
        key: &[u8],
        payload: &[u8],
    ) -> Result<()> {
        if Node::new(&node).free_bytes() >= entry_footprint(key.len(), payload.len()) {
            mtr.apply(
                &mut node,
                PageChange::Insert {
                    slot: slot as u16,
                    key,
                    payload,
                },
            );
            return Ok(());
        }
        let view = Node::new(&node);
        let mut entries = entries_of(view);
        entries.insert(slot, (key.to_vec(), payload.to_vec()));
        let appended = slot + 1 == entries.len();
        let level = view.level();
        let (left_no, right_no, leftmost) = (view.left(), view.right(), view.leftmost());
        let node_no = node.page_id().page_no.0;
        if node_no == crate::ROOT_PAGE_NO {
            return self.split_root(mtr, node, level, leftmost, entries, appended);
        }
        let (left_entries, separator, right_leftmost, right_entries) =
            split_for_insert(&entries, level, appended);
        let mut right = self.new_page(mtr)?;
        let new_no = right.page_id().page_no.0;
        self.set_left_link(mtr, right_no, new_no)?;
        self.rebuild(
            mtr,
            &mut node,
            level,
            left_no,
            new_no,
            leftmost,
            left_entries,
        );
        self.rebuild(
            mtr,
            &mut right,
            level,
            node_no,
            right_no,
            right_leftmost,
            right_entries,
        );
        drop(right);
        drop(node);
        let (parent, index) = path
            .pop()
            .expect("a node that splits has its parent latched");
        self.insert_entry(mtr, path, parent, index, &separator, &child_payload(new_no))
    }

    /// Splits the full root: its entries move into two new children and the root
    /// becomes their parent, one level higher.
    fn split_root(
        &self,
        mtr: &Mtr<'_>,
        mut root: PageWriteGuard<'_>,
        level: u16,
        leftmost: u32,
        entries: Vec<Entry>,
        appended: bool,
    ) -> Result<()> {
        if usize::from(level) + 1 >= crate::TREE_HEIGHT_MAX {
            return Err(Error::OutOfResources(format!(
                "index '{}' reached the height limit of {}",
                self.name,
                crate::TREE_HEIGHT_MAX
            )));
        }
        let (left_entries, separator, right_leftmost, right_entries) =
            split_for_insert(&entries, level, appended);
        let mut left = self.new_page(mtr)?;
        let mut right = self.new_page(mtr)?;
        let (left_no, right_no) = (left.page_id().page_no.0, right.page_id().page_no.0);
        self.rebuild(mtr, &mut left, level, 0, right_no, leftmost, left_entries);
        self.rebuild(
            mtr,
            &mut right,
            level,
            left_no,
            0,
            right_leftmost,
            right_entries,
        );
        let top = vec![(separator, child_payload(right_no).to_vec())];
        self.rebuild(mtr, &mut root, level + 1, 0, 0, left_no, &top);
        Ok(())
    }

    /// Points the left link of node `page_no` (0: none, nothing to do) at `left`,
    /// keeping its right link: the neighbour's side of a split or a merge.
    fn set_left_link(&self, mtr: &Mtr<'_>, page_no: u32, left: u32) -> Result<()> {
        if page_no == 0 {
            return Ok(());
        }
        let mut neighbour = self.write_node(page_no)?;
        let right = Node::new(&neighbour).right();
        mtr.apply(&mut neighbour, PageChange::SetLinks { left, right });
        Ok(())
    }

    /// Formats `guard` as a node holding exactly `entries`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn rebuild(
        &self,
        mtr: &Mtr<'_>,
        guard: &mut PageWriteGuard<'_>,
        level: u16,
        left: u32,
        right: u32,
        leftmost: u32,
        entries: &[Entry],
    ) {
        mtr.apply(
            guard,
            PageChange::FormatNode {
                level,
                left,
                right,
                leftmost: if level == 0 { 0 } else { leftmost },
            },
        );
        for (slot, (key, payload)) in entries.iter().enumerate() {
            mtr.apply(
                guard,
                PageChange::Insert {
                    slot: slot as u16,
                    key,
                    payload,
                },
            );
        }
    }

    /// After an entry left `node`: merge or refill it if it is underfull, collapse the
    /// root if it has one child, and carry on up through `path`.
    fn after_removal<'p>(
        &'p self,
        mtr: &Mtr<'_>,
        path: &mut Vec<(PageWriteGuard<'p>, usize)>,
        mut node: PageWriteGuard<'p>,
    ) -> Result<()> {
        let underfull = underfull_bytes(self.page_size_bytes);
        loop {
            let view = Node::new(&node);
            if node.page_id().page_no.0 == crate::ROOT_PAGE_NO {
                if !view.is_leaf() && view.is_empty() {
                    self.collapse_root(mtr, node)?;
                }
                return Ok(());
            }
            if view.used_bytes() >= underfull {
                return Ok(());
            }
            // The topmost latched node was safe, so a missing parent means the change
            // stops here.
            let Some((mut parent, index)) = path.pop() else {
                return Ok(());
            };
            match self.rebalance(mtr, &mut parent, index, node)? {
                Some((merged, merged_index)) => {
                    let still_under = Node::new(&merged).used_bytes() < underfull;
                    if still_under && Node::new(&parent).child_count() >= 2 {
                        // Try the merged node against its other neighbour.
                        path.push((parent, merged_index));
                        node = merged;
                    } else {
                        drop(merged);
                        node = parent; // it lost a separator
                    }
                }
                None => return Ok(()),
            }
        }
    }

    /// The root has a single child: move the child's entries into the root.
    fn collapse_root(&self, mtr: &Mtr<'_>, mut root: PageWriteGuard<'_>) -> Result<()> {
        loop {
            let view = Node::new(&root);
            if view.is_leaf() || !view.is_empty() {
                return Ok(());
            }
            let child_no = view.leftmost();
            let level = view.level();
            let child = self.write_node(child_no)?;
            self.expect_level(child_no, &child, level)?;
            let child_view = Node::new(&child);
            let entries = entries_of(child_view);
            let (child_level, child_leftmost) = (child_view.level(), child_view.leftmost());
            self.rebuild(mtr, &mut root, child_level, 0, 0, child_leftmost, &entries);
            self.free_page(mtr, child)?;
        }
    }

    /// `node` (child `index` of `parent`) is underfull. Merges it with a sibling if the
    /// two fit in one page (trying the right sibling, then the left), or else moves
    /// entries over from the right (or left) sibling. Returns the merged node and its
    /// index if a merge happened; `None` if the siblings were refilled instead (or
    /// nothing could be done), which leaves `parent`'s fill unchanged.
    fn rebalance<'p>(
        &'p self,
        mtr: &Mtr<'_>,
        parent: &mut PageWriteGuard<'p>,
        index: usize,
        node: PageWriteGuard<'p>,
    ) -> Result<Option<(PageWriteGuard<'p>, usize)>> {
        let children = Node::new(parent).child_count();
        if children < 2 {
            return Ok(None);
        }
        let level = Node::new(&node).level();
        let parent_level = Node::new(parent).level();
        // Latch the pair left to right.
        let (mut left, mut right, left_index) = if index + 1 < children {
            let right_no = Node::new(parent).child_at(index + 1);
            let right = self.write_node(right_no)?;
            self.expect_level(right_no, &right, parent_level)?;
            (node, right, index)
        } else {
            drop(node);
            let left_no = Node::new(parent).child_at(index - 1);
            let left = self.write_node(left_no)?;
            self.expect_level(left_no, &left, parent_level)?;
            let node_no = Node::new(parent).child_at(index);
            let node = self.write_node(node_no)?;
            (left, node, index - 1)
        };
        let separator = Node::new(parent).key(left_index).to_vec();
        let usable = usable_bytes(self.page_size_bytes);
        let pull_down = if level == 0 {
            0
        } else {
            entry_footprint(separator.len(), CHILD_BYTES)
        };
        let (lv, rv) = (Node::new(&left), Node::new(&right));
        let fits = lv.used_bytes() + rv.used_bytes() + pull_down <= usable;
        let left_len = lv.len();
        let (l_left, l_right, l_leftmost) = (lv.left(), lv.right(), lv.leftmost());
        let (r_left, r_right, r_leftmost) = (rv.left(), rv.right(), rv.leftmost());
        let mut entries = entries_of(lv);
        if level > 0 {
            entries.push((separator.clone(), child_payload(r_leftmost).to_vec()));
        }
        entries.extend(entries_of(rv));
        let left_no = left.page_id().page_no.0;
        if fits {
            // Merge right into left, unlink right, free it.
            self.set_left_link(mtr, r_right, left_no)?;
            for (slot, (key, payload)) in entries.iter().enumerate().skip(left_len) {
                mtr.apply(
                    &mut left,
                    PageChange::Insert {
                        slot: slot as u16,
                        key,
                        payload,
                    },
                );
            }
            mtr.apply(
                &mut left,
                PageChange::SetLinks {
                    left: l_left,
                    right: r_right,
                },
            );
            mtr.apply(
                parent,
                PageChange::Delete {
                    slot: left_index as u16,
                },
            );
            self.free_page(mtr, right)?;
            return Ok(Some((left, left_index)));
        }
        // Refill: rebuild both halves around a new separator.
        let (left_entries, new_separator, right_leftmost, right_entries) =
            split_point(&entries, level);
        let grows = new_separator.len().saturating_sub(separator.len());
        if Node::new(parent).free_bytes() < grows {
            return Ok(None); // no room for the new separator: leave the node underfull
        }
        self.rebuild(
            mtr,
            &mut left,
            level,
            l_left,
            l_right,
            l_leftmost,
            left_entries,
        );
        self.rebuild(
            mtr,
            &mut right,
            level,
            r_left,
            r_right,
            right_leftmost,
            right_entries,
        );
        let right_no = right.page_id().page_no.0;
        mtr.apply(
            parent,
            PageChange::Delete {
                slot: left_index as u16,
            },
        );
        mtr.apply(
            parent,
            PageChange::Insert {
                slot: left_index as u16,
                key: &new_separator,
                payload: &child_payload(right_no),
            },
        );
        Ok(None)
    }

    fn duplicate(&self, key: &[u8]) -> Error {
        Error::DuplicateKey {
            index: self.name.clone(),
            key: crate::display_key(key),
        }
    }
}

/// Copies a node's entries.
pub(crate) fn entries_of(node: Node<'_>) -> Vec<Entry> {
    (0..node.len())
        .map(|i| (node.key(i).to_vec(), node.payload(i).to_vec()))
        .collect()
}

/// Where a node that overflows on an insert splits. An insert past the node's last
/// key (`appended`) is most often one of a run of ascending keys (an AUTO_INCREMENT
/// or otherwise sorted load): splitting in the middle would leave every node behind
/// the run half empty for good (sysbench's prepared tables took twice the pages, so
/// half as much of them fitted in the buffer pool). So, as InnoDB does, such a split
/// leaves the node's old entries where they are and starts the right node with the
/// new one alone (an inner node moves its last old separator up). The right node is
/// underfull until the run fills it; if none does, the delete path merges or refills
/// it as it does any underfull node. Any other insert splits in the middle
/// ([`split_point`]).
pub(crate) fn split_for_insert(
    entries: &[Entry],
    level: u16,
    appended: bool,
) -> (&[Entry], Vec<u8>, u32, &[Entry]) {
    let len = entries.len();
    if !appended || len < 3 {
        return split_point(entries, level);
    }
    if level == 0 {
        let (left, right) = entries.split_at(len - 1);
        (left, right[0].0.clone(), 0, right)
    } else {
        let (left, rest) = entries.split_at(len - 2);
        let middle = &rest[0];
        let child = u32::from_le_bytes(middle.1[..4].try_into().expect("child payload"));
        (left, middle.0.clone(), child, &rest[1..])
    }
}

/// Splits `entries` (of a node at `level`) in two by bytes: the first index where the
/// running size reaches half. For a leaf the separator is the right half's first key;
/// for an inner node the middle entry moves up, its child becoming the right half's
/// leftmost. With entries at most a quarter of a page, both halves end up above the
/// underfull mark (a quarter) and below the page size.
pub(crate) fn split_point(entries: &[Entry], level: u16) -> (&[Entry], Vec<u8>, u32, &[Entry]) {
    let total: usize = entries
        .iter()
        .map(|(k, p)| entry_footprint(k.len(), p.len()))
        .sum();
    let mut running = 0;
    let mut cut = entries.len() - 1;
    for (i, (k, p)) in entries.iter().enumerate() {
        running += entry_footprint(k.len(), p.len());
        if running * 2 >= total {
            cut = if level == 0 {
                (i + 1).min(entries.len() - 1)
            } else {
                i
            };
            break;
        }
    }
    let cut = cut.max(1).min(entries.len() - 1);
    if level == 0 {
        let (left, right) = entries.split_at(cut);
        (left, right[0].0.clone(), 0, right)
    } else {
        let (left, rest) = entries.split_at(cut);
        let middle = &rest[0];
        let child = u32::from_le_bytes(middle.1[..4].try_into().expect("child payload"));
        (left, middle.0.clone(), child, &rest[1..])
    }
}
