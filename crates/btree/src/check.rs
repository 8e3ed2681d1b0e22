//! `check_invariants`: a full walk of a tree, for tests.

use std::collections::HashSet;

use crate::Tree;
use crate::alloc::{FREE, FREE_NEXT};
use crate::node::{Node, rd32, underfull_bytes};

/// What a full check of a tree found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TreeStats {
    pub height: usize,
    pub leaves: u64,
    pub inner_nodes: u64,
    pub entries: u64,
    /// Bytes used by entries and slots in leaves.
    pub leaf_used_bytes: u64,
    /// Non-root nodes below the underfull mark.
    pub underfull_nodes: u64,
    pub free_pages: u64,
    /// Pages ever allocated (the meta page's next page number).
    pub allocated_pages: u64,
}

impl Tree {
    /// Walks the whole tree and checks: node structure; key order within nodes and
    /// against the separators above; every child one level below its parent; sibling
    /// links forming, at every level, exactly the left-to-right order of the nodes;
    /// no empty non-root leaf; the free list (every listed page free, the count
    /// right, no page both listed and reachable). Underfull nodes are counted in the
    /// returned stats, not rejected. Call only while no other thread uses the tree.
    /// Returns the first violation.
    pub fn check_invariants(&self) -> Result<TreeStats, String> {
        let mut stats = TreeStats::default();
        let mut levels: Vec<Vec<u32>> = Vec::new();
        let mut seen = HashSet::new();
        self.check_node(
            crate::ROOT_PAGE_NO,
            None,
            None,
            None,
            &mut levels,
            &mut seen,
            &mut stats,
        )?;
        stats.height = levels.len();
        for (depth, nodes) in levels.iter().enumerate() {
            for (i, &page_no) in nodes.iter().enumerate() {
                let guard = self.read_node(page_no).map_err(|e| e.to_string())?;
                let node = Node::new(&guard);
                let want_left = if i == 0 { 0 } else { nodes[i - 1] };
                let want_right = nodes.get(i + 1).copied().unwrap_or(0);
                if node.left() != want_left || node.right() != want_right {
                    return Err(format!(
                        "node {page_no} at depth {depth} links to {}/{}, expected {want_left}/{want_right}",
                        node.left(),
                        node.right()
                    ));
                }
            }
        }
        let meta = self.read_meta().map_err(|e| e.to_string())?;
        stats.allocated_pages = u64::from(meta.next);
        let mut page_no = meta.free_head;
        while page_no != 0 {
            if !seen.insert(page_no) {
                return Err(format!(
                    "free page {page_no} is also in use or listed twice"
                ));
            }
            let guard = self
                .pool
                .fetch_shared(self.page_id(page_no))
                .map_err(|e| e.to_string())?;
            let page_type = tarn_io::page::page_type(&guard);
            if page_type != FREE && page_type != crate::overflow::OVERFLOW {
                return Err(format!(
                    "the free list holds page {page_no}, which is not free"
                ));
            }
            stats.free_pages += 1;
            page_no = rd32(&guard, FREE_NEXT);
        }
        if stats.free_pages != u64::from(meta.free_count) {
            return Err(format!(
                "the free list has {} pages but the meta page counts {}",
                stats.free_pages, meta.free_count
            ));
        }
        Ok(stats)
    }

    #[allow(clippy::too_many_arguments)]
    fn check_node(
        &self,
        page_no: u32,
        lower: Option<&[u8]>,
        upper: Option<&[u8]>,
        parent_level: Option<u16>,
        levels: &mut Vec<Vec<u32>>,
        seen: &mut HashSet<u32>,
        stats: &mut TreeStats,
    ) -> Result<(), String> {
        if !seen.insert(page_no) {
            return Err(format!("node {page_no} is reachable twice"));
        }
        let guard = self.read_node(page_no).map_err(|e| e.to_string())?;
        let node = Node::new(&guard);
        node.validate()
            .map_err(|e| format!("node {page_no}: {e}"))?;
        if let Some(level) = parent_level
            && node.level() + 1 != level
        {
            return Err(format!(
                "node {page_no} has level {} under level {level}",
                node.level()
            ));
        }
        let height_from_top = levels_index(levels, node.level(), parent_level.is_none());
        levels[height_from_top].push(page_no);
        for i in 0..node.len() {
            let key = node.key(i);
            if lower.is_some_and(|l| key < l) || upper.is_some_and(|u| key >= u) {
                return Err(format!(
                    "node {page_no}: key {i} lies outside its parent's range"
                ));
            }
        }
        let is_root = parent_level.is_none();
        if node.is_leaf() {
            if node.is_empty() && !is_root {
                return Err(format!("non-root leaf {page_no} is empty"));
            }
            stats.leaves += 1;
            stats.entries += node.len() as u64;
            stats.leaf_used_bytes += node.used_bytes() as u64;
        } else {
            stats.inner_nodes += 1;
        }
        if !is_root && node.used_bytes() < underfull_bytes(self.page_size_bytes) {
            stats.underfull_nodes += 1;
        }
        if node.is_leaf() {
            return Ok(());
        }
        let children: Vec<u32> = (0..node.child_count()).map(|c| node.child_at(c)).collect();
        let keys: Vec<Vec<u8>> = (0..node.len()).map(|i| node.key(i).to_vec()).collect();
        let level = node.level();
        drop(guard);
        for (c, &child) in children.iter().enumerate() {
            let child_lower = if c == 0 {
                lower
            } else {
                Some(keys[c - 1].as_slice())
            };
            let child_upper = if c < keys.len() {
                Some(keys[c].as_slice())
            } else {
                upper
            };
            self.check_node(
                child,
                child_lower,
                child_upper,
                Some(level),
                levels,
                seen,
                stats,
            )?;
        }
        Ok(())
    }
}

/// The index in `levels` (top first) of a node at `level`, growing `levels` as the
/// walk first reaches each depth.
fn levels_index(levels: &mut Vec<Vec<u32>>, level: u16, is_root: bool) -> usize {
    if is_root {
        levels.clear();
        levels.resize(usize::from(level) + 1, Vec::new());
    }
    levels.len() - 1 - usize::from(level)
}
