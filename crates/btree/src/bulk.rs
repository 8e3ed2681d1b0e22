//! Bottom-up bulk build from sorted input.
//!
//! Leaves are filled left to right up to the fill factor and linked as they are
//! written; then each level above is built from the first keys and page numbers of
//! the level below, until one node remains, whose contents become the root (page 1,
//! which never moves). Loading a table and creating an index on existing rows use it:
//! it writes each page once, where inserting one by one would split every page.

use tarn_buffer::PageWriteGuard;
use tarn_common::limits::{BULK_FILL_FACTOR_PCT_MAX, BULK_FILL_FACTOR_PCT_MIN};
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
    /// the number of entries loaded. Entries are checked as [`Tree::insert`] checks
    /// them (`KeyTooLong`, `RowTooLarge`). On any error the tree is left empty and
    /// every page the build took is freed again.
    pub fn bulk_load(
        &self,
        entries: impl IntoIterator<Item = Result<(Vec<u8>, Vec<u8>)>>,
        fill_factor_pct: u32,
    ) -> Result<u64> {
        let (min, max) = (BULK_FILL_FACTOR_PCT_MIN, BULK_FILL_FACTOR_PCT_MAX);
        if !(min..=max).contains(&fill_factor_pct) {
            return Err(Error::InvalidSetting {
                name: "bulk_fill_factor".into(),
                value: fill_factor_pct.to_string(),
                reason: format!("must be between {min} and {max}"),
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
        let mtr = Mtr::unlogged(&*self.redo);
        let target = usable_bytes(self.page_size_bytes) * fill_factor_pct as usize / 100;
        // Every level built so far, leaves first. Until the root takes the top node's
        // contents, no path leads to these pages: on any error they are all freed, so
        // the tree stays empty and nothing leaks.
        let mut levels = vec![LevelBuilder::new(0)];
        let built = self
            .fill_leaves(&mtr, target, entries, &mut levels[0])
            .and_then(|count| {
                self.build_upper_levels(&mtr, target, &mut levels)?;
                self.install_top(&mtr, &levels)?;
                Ok(count)
            });
        if built.is_err() {
            self.free_levels(&mtr, levels);
        }
        built
    }

    /// Builds the levels above the leaves, each from the (first key, page) list of the
    /// one below, until a level has a single node (or none: no entries).
    fn build_upper_levels<'t>(
        &'t self,
        mtr: &Mtr<'_>,
        target: usize,
        levels: &mut Vec<LevelBuilder<'t>>,
    ) -> Result<()> {
        loop {
            let below = levels.last_mut().expect("the leaf level");
            below.finish(self, mtr)?;
            if below.nodes.len() <= 1 {
                return Ok(());
            }
            let above = LevelBuilder::new(below.level + 1);
            levels.push(above);
            let [.., below, above] = levels.as_mut_slice() else {
                unreachable!("two levels at least");
            };
            for (key, page_no) in &below.nodes {
                above.push(self, mtr, target, key, &child_payload(*page_no))?;
            }
        }
    }

    /// Moves the single top node's contents into the root page (page 1, which never
    /// moves) and frees the top node. The top node is freed first, while the root is
    /// still empty, so that an error leaves the tree empty; rewriting the root cannot
    /// fail.
    fn install_top(&self, mtr: &Mtr<'_>, levels: &[LevelBuilder<'_>]) -> Result<()> {
        let top_level = levels.last().expect("the leaf level");
        debug_assert!(top_level.current.is_none(), "the top level is finished");
        let Some((_, top_no)) = top_level.nodes.first() else {
            return Ok(()); // no entries: the root stays an empty leaf
        };
        let top = self.write_node(*top_no)?;
        let view = Node::new(&top);
        let (level, leftmost) = (view.level(), view.leftmost());
        let entries = entries_of(view);
        let mut root = self.write_node(crate::ROOT_PAGE_NO)?;
        self.free_page(mtr, top)?;
        self.rebuild(mtr, &mut root, level, 0, 0, leftmost, &entries);
        Ok(())
    }

    /// Gives back every page of a failed bulk build. Best effort: a page that cannot be
    /// latched or freed (the error that failed the build may affect these calls too)
    /// stays allocated, and the rest are still freed.
    fn free_levels(&self, mtr: &Mtr<'_>, mut levels: Vec<LevelBuilder<'_>>) {
        // Release the nodes still being filled first: they are among the pages freed.
        for level in &mut levels {
            level.current = None;
        }
        for level in &levels {
            for (_, page_no) in &level.nodes {
                if let Ok(guard) = self.write_node(*page_no) {
                    let _ = self.free_page(mtr, guard);
                }
            }
        }
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
            self.check_entry(&key, &value)?;
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
                    let left = Node::new(&previous).left();
                    let previous_no = previous.page_id().page_no.0;
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
