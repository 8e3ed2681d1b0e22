//! Bottom-up bulk build from sorted input.
//!
//! Leaves are filled left to right up to the fill factor and linked as they are
//! written; then each level above is built from the first keys and page numbers of
//! the level below, until one node remains, whose contents become the root (page 1,
//! which never moves). Loading a table and creating an index on existing rows use it:
//! it writes each page once, where inserting one by one would split every page.

use tarn_buffer::PageWriteGuard;
use tarn_common::{Error, Result};

use crate::Tree;
use crate::change::{Mtr, PageChange, child_payload};
use crate::node::{CHILD_BYTES, Node, entry_footprint, usable_bytes};
use crate::tree::entries_of;

/// One level being built: the node being filled and the (first key, page) list of the
/// nodes finished so far, which the level above is built from.
struct LevelBuilder<'t> {
    level: u16,
    current: Option<PageWriteGuard<'t>>,
    /// Entries in `current` (slots).
    count: usize,
    nodes: Vec<(Vec<u8>, u32)>,
}

impl Tree {
    /// Fills an empty tree from `entries`, which must be in strictly increasing key
    /// order. `fill_factor_pct` (50..=100) is how full each node is packed. Returns
    /// the number of entries loaded.
    pub fn bulk_load(
        &self,
        entries: impl IntoIterator<Item = Result<(Vec<u8>, Vec<u8>)>>,
        fill_factor_pct: u32,
    ) -> Result<u64> {
        if !(crate::FILL_FACTOR_PCT_MIN..=crate::FILL_FACTOR_PCT_MAX).contains(&fill_factor_pct) {
            return Err(Error::InvalidSetting {
                name: "fill_factor".into(),
                value: fill_factor_pct.to_string(),
                reason: format!(
                    "must be between {} and {}",
                    crate::FILL_FACTOR_PCT_MIN,
                    crate::FILL_FACTOR_PCT_MAX
                ),
            });
        }
        {
            let root = self.read_node(crate::ROOT_PAGE_NO)?;
            let node = Node::new(&root);
            if !node.is_leaf() || !node.is_empty() {
                return Err(Error::InvalidDefinition(format!(
                    "bulk load into index '{}', which is not empty",
                    self.name
                )));
            }
        }
        let mtr = Mtr::new(&*self.redo);
        let target = usable_bytes(self.page_size_bytes) * fill_factor_pct as usize / 100;
        let mut leaves = LevelBuilder::new(0);
        let loaded = self.fill_leaves(&mtr, target, entries, &mut leaves);
        let count = match loaded {
            Ok(count) => count,
            Err(error) => {
                // Give the leaves filled so far back: the tree stays empty, nothing leaks.
                leaves.current = None;
                for (_, page_no) in leaves.nodes.drain(..) {
                    let guard = self.write_node(page_no)?;
                    self.free_page(&mtr, guard)?;
                }
                return Err(error);
            }
        };
        let mut level = leaves;
        loop {
            level.finish(self, &mtr)?;
            if level.nodes.len() <= 1 {
                break;
            }
            let mut above = LevelBuilder::new(level.level + 1);
            for (key, page_no) in &level.nodes {
                above.push(self, &mtr, target, key, &child_payload(*page_no))?;
            }
            level = above;
        }
        // Move the single top node into the root page.
        if let Some((_, top_no)) = level.nodes.first() {
            let top = self.write_node(*top_no)?;
            let view = Node::new(&top);
            let (lvl, leftmost) = (view.level(), view.leftmost());
            let entries = entries_of(view);
            let mut root = self.write_node(crate::ROOT_PAGE_NO)?;
            self.rebuild(&mtr, &mut root, lvl, 0, 0, leftmost, &entries);
            drop(root);
            self.free_page(&mtr, top)?;
        }
        Ok(count)
    }

    /// The leaf level of a bulk load: checks and appends every entry.
    fn fill_leaves<'t>(
        &'t self,
        mtr: &Mtr<'_>,
        target: usize,
        entries: impl IntoIterator<Item = Result<(Vec<u8>, Vec<u8>)>>,
        leaves: &mut LevelBuilder<'t>,
    ) -> Result<u64> {
        let mut last: Option<Vec<u8>> = None;
        let mut count = 0u64;
        for entry in entries {
            let (key, value) = entry?;
            if key.len() > self.max_key_bytes() || key.len() + value.len() > self.max_entry_bytes()
            {
                return Err(Error::RowTooLarge(format!(
                    "an entry of {} bytes exceeds the {}-byte limit of index '{}'",
                    key.len() + value.len(),
                    self.max_entry_bytes(),
                    self.name
                )));
            }
            if let Some(prev) = &last
                && prev.as_slice() >= key.as_slice()
            {
                return Err(if prev == &key {
                    Error::DuplicateKey {
                        index: self.name.clone(),
                        key: crate::display_key(&key),
                    }
                } else {
                    Error::InvalidDefinition(format!(
                        "bulk load input for index '{}' is not sorted",
                        self.name
                    ))
                });
            }
            leaves.push(self, mtr, target, &key, &value)?;
            last = Some(key);
            count += 1;
        }
        Ok(count)
    }
}

impl<'t> LevelBuilder<'t> {
    fn new(level: u16) -> Self {
        LevelBuilder {
            level,
            current: None,
            count: 0,
            nodes: Vec::new(),
        }
    }

    /// Appends an entry (for inner levels: a child with its first key; the first child
    /// of a node becomes its leftmost pointer and its key goes up a level).
    fn push(
        &mut self,
        tree: &'t Tree,
        mtr: &Mtr<'_>,
        target: usize,
        key: &[u8],
        payload: &[u8],
    ) -> Result<()> {
        let full = match &self.current {
            Some(guard) => {
                let node = Node::new(guard);
                node.used_bytes() + entry_footprint(key.len(), payload.len()) > target
                    || node.free_bytes() < entry_footprint(key.len(), payload.len())
            }
            None => true,
        };
        if full {
            let mut fresh = tree.new_page(mtr)?;
            let fresh_no = fresh.page_id().page_no.0;
            let left = match self.current.take() {
                Some(mut previous) => {
                    let view = Node::new(&previous);
                    let (left, leftmost) = (view.left(), view.leftmost());
                    let previous_no = previous.page_id().page_no.0;
                    let _ = leftmost;
                    mtr.apply(
                        &mut previous,
                        PageChange::SetLinks {
                            left,
                            right: fresh_no,
                        },
                    );
                    previous_no
                }
                None => 0,
            };
            let leftmost = if self.level == 0 {
                0
            } else {
                u32::from_le_bytes(payload[..CHILD_BYTES].try_into().expect("child"))
            };
            mtr.apply(
                &mut fresh,
                PageChange::FormatNode {
                    level: self.level,
                    left,
                    right: 0,
                    leftmost,
                },
            );
            self.nodes.push((key.to_vec(), fresh_no));
            self.current = Some(fresh);
            self.count = 0;
            if self.level > 0 {
                return Ok(()); // the first child is the leftmost pointer
            }
        }
        let guard = self.current.as_mut().expect("a node is open");
        mtr.apply(
            guard,
            PageChange::Insert {
                slot: self.count as u16,
                key,
                payload,
            },
        );
        self.count += 1;
        Ok(())
    }

    /// Closes the level. An inner level may end with a node holding only its leftmost
    /// child, which no merge could ever fix (a node merges only with a sibling under
    /// the same parent): the previous node's last entry moves over, so that the last
    /// node has two children. The previous node keeps at least two: a node at or above
    /// half full holds at least two of the largest entries.
    fn finish(&mut self, tree: &'t Tree, mtr: &Mtr<'_>) -> Result<()> {
        let Some(last) = self.current.take() else {
            return Ok(());
        };
        if self.level == 0 || self.count > 0 || self.nodes.len() < 2 {
            return Ok(());
        }
        let last_no = last.page_id().page_no.0;
        drop(last); // latch left to right
        let mut previous = tree.write_node(self.nodes[self.nodes.len() - 2].1)?;
        let view = Node::new(&previous);
        let n = view.len();
        debug_assert!(n >= 2, "a bulk-built inner node holds at least two entries");
        let (key, child) = (view.key(n - 1).to_vec(), view.child(n - 1));
        mtr.apply(
            &mut previous,
            PageChange::Delete {
                slot: (n - 1) as u16,
            },
        );
        let mut last = tree.write_node(last_no)?;
        let old_leftmost = Node::new(&last).leftmost();
        let old_first = std::mem::replace(&mut self.nodes.last_mut().expect("two nodes").0, key);
        mtr.apply(&mut last, PageChange::SetLeftmost { child });
        mtr.apply(
            &mut last,
            PageChange::Insert {
                slot: 0,
                key: &old_first,
                payload: &child_payload(old_leftmost),
            },
        );
        Ok(())
    }
}
