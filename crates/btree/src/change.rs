//! The one place where B+tree pages change.
//!
//! Every change to a page of a tree file (node, meta, overflow or free page) is a
//! [`PageChange`] passed to [`Mtr::apply`], which hands it to the [`Redo`] sink (the
//! WAL, once it exists, writes it as a physiological redo record: page id plus this
//! operation) and then applies it with [`apply`]. Recovery will replay a record by
//! calling the same [`apply`] on the page, so `apply` is deterministic: it depends only
//! on the page's bytes and the change.
//!
//! # Invariants
//! 1. No code outside this module writes bytes of a tree page (other than the page
//!    header's LSN and checksum, which the buffer pool and I/O layer stamp).
//! 2. Every applied change gets an LSN from [`Redo::log`] greater than zero, and the
//!    page is marked dirty with it before its latch is released.

use std::sync::atomic::{AtomicU64, Ordering};

use tarn_buffer::PageWriteGuard;
use tarn_common::Lsn;
use tarn_io::page;

use crate::node::{
    self, CHILD_BYTES, ENTRY_HEADER_BYTES, GARBAGE, HEAP_TOP, LEFT, LEFTMOST, LEVEL,
    NODE_HEADER_BYTES, NSLOTS, Node, RIGHT, SLOT_BYTES, rd16, wr16, wr32,
};

/// One change to one page.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PageChange<'a> {
    /// Formats an empty node (a leaf at level 0, an inner node above).
    FormatNode {
        level: u16,
        left: u32,
        right: u32,
        leftmost: u32,
    },
    /// Inserts an entry at `slot`, shifting later slots up. Compacts the heap first if
    /// the free space is fragmented.
    Insert {
        slot: u16,
        key: &'a [u8],
        payload: &'a [u8],
    },
    /// Removes the entry at `slot`.
    Delete { slot: u16 },
    /// Replaces the payload of the entry at `slot`, keeping its key.
    SetPayload { slot: u16, payload: &'a [u8] },
    /// Sets a node's sibling links.
    SetLinks { left: u32, right: u32 },
    /// Sets an inner node's leftmost child.
    SetLeftmost { child: u32 },
    /// Writes the meta page's fields.
    SetMeta(crate::alloc::Meta),
    /// Formats a free page linking to the next free page.
    FormatFree { next: u32 },
    /// Formats an overflow page holding `data`, linking to the next page of the value.
    FormatOverflow { next: u32, data: &'a [u8] },
}

/// Where page changes are logged. The WAL implements this; until it exists,
/// [`NoRedo`] hands out increasing LSNs so that the buffer pool's flush list works.
pub trait Redo: Send + Sync {
    /// Logs `change` to page `page_id` and returns its LSN (> 0).
    fn log(&self, page_id: tarn_common::PageId, change: &PageChange<'_>) -> Lsn;
}

/// A [`Redo`] that logs nothing.
#[derive(Default)]
pub struct NoRedo {
    next_lsn: AtomicU64,
}

impl Redo for NoRedo {
    fn log(&self, _page_id: tarn_common::PageId, _change: &PageChange<'_>) -> Lsn {
        Lsn(self.next_lsn.fetch_add(1, Ordering::Relaxed) + 1)
    }
}

/// A mini-transaction: applies changes to latched pages and logs each. (With the WAL,
/// the records of one structure change will be grouped so that recovery applies all
/// of them or none.)
pub struct Mtr<'r> {
    redo: &'r dyn Redo,
}

impl<'r> Mtr<'r> {
    pub fn new(redo: &'r dyn Redo) -> Self {
        Mtr { redo }
    }

    /// Logs `change`, applies it to the exclusively latched `guard`, and marks the page
    /// dirty at the change's LSN.
    pub fn apply(&self, guard: &mut PageWriteGuard<'_>, change: PageChange<'_>) {
        let page_id = guard.page_id();
        let lsn = self.redo.log(page_id, &change);
        apply(guard, page_id, &change);
        guard.mark_dirty(lsn);
    }
}

/// Applies `change` to the bytes of page `page_id`. Deterministic.
pub fn apply(p: &mut [u8], page_id: tarn_common::PageId, change: &PageChange<'_>) {
    match *change {
        PageChange::FormatNode {
            level,
            left,
            right,
            leftmost,
        } => {
            let page_type = if level == 0 { node::LEAF } else { node::INNER };
            page::init(p, page_id, page_type);
            let size = p.len();
            wr16(p, LEVEL, level as usize);
            wr16(p, NSLOTS, 0);
            wr32(p, HEAP_TOP, size as u32);
            wr32(p, GARBAGE, 0);
            wr32(p, LEFT, left);
            wr32(p, RIGHT, right);
            wr32(p, LEFTMOST, leftmost);
        }
        PageChange::Insert { slot, key, payload } => insert(p, slot as usize, key, payload),
        PageChange::Delete { slot } => delete(p, slot as usize),
        PageChange::SetPayload { slot, payload } => {
            let slot = slot as usize;
            let node = Node::new(p);
            let key = node.key(slot).to_vec();
            if node.payload(slot).len() == payload.len() {
                let at = rd16(p, NODE_HEADER_BYTES + SLOT_BYTES * slot);
                let start = at + ENTRY_HEADER_BYTES + key.len();
                p[start..start + payload.len()].copy_from_slice(payload);
            } else {
                delete(p, slot);
                insert(p, slot, &key, payload);
            }
        }
        PageChange::SetLinks { left, right } => {
            wr32(p, LEFT, left);
            wr32(p, RIGHT, right);
        }
        PageChange::SetLeftmost { child } => wr32(p, LEFTMOST, child),
        PageChange::SetMeta(meta) => {
            if page::page_type(p) != crate::alloc::META {
                page::init(p, page_id, crate::alloc::META);
            }
            meta.write(p);
        }
        PageChange::FormatFree { next } => {
            page::init(p, page_id, crate::alloc::FREE);
            wr32(p, crate::alloc::FREE_NEXT, next);
        }
        PageChange::FormatOverflow { next, data } => {
            page::init(p, page_id, crate::overflow::OVERFLOW);
            crate::overflow::write_page(p, next, data);
        }
    }
}

fn insert(p: &mut [u8], slot: usize, key: &[u8], payload: &[u8]) {
    debug_assert!(Node::new(p).is_node());
    let entry_bytes = ENTRY_HEADER_BYTES + key.len() + payload.len();
    let node = Node::new(p);
    let n = node.len();
    assert!(slot <= n, "insert at slot {slot} of {n}");
    assert!(
        node.free_bytes() >= entry_bytes + SLOT_BYTES,
        "insert of {entry_bytes} bytes into a node with {} free",
        node.free_bytes()
    );
    if node.heap_top() < NODE_HEADER_BYTES + SLOT_BYTES * (n + 1) + entry_bytes {
        compact(p);
    }
    let top = rd32u(p, HEAP_TOP) - entry_bytes;
    wr16(p, top, key.len());
    wr16(p, top + 2, payload.len());
    p[top + ENTRY_HEADER_BYTES..top + ENTRY_HEADER_BYTES + key.len()].copy_from_slice(key);
    p[top + ENTRY_HEADER_BYTES + key.len()..top + entry_bytes].copy_from_slice(payload);
    wr32(p, HEAP_TOP, top as u32);
    let slots = NODE_HEADER_BYTES + SLOT_BYTES * slot;
    let slots_end = NODE_HEADER_BYTES + SLOT_BYTES * n;
    p.copy_within(slots..slots_end, slots + SLOT_BYTES);
    wr16(p, slots, top);
    wr16(p, NSLOTS, n + 1);
}

fn delete(p: &mut [u8], slot: usize) {
    let node = Node::new(p);
    let n = node.len();
    assert!(slot < n, "delete of slot {slot} of {n}");
    let at = rd16(p, NODE_HEADER_BYTES + SLOT_BYTES * slot);
    let entry_bytes = ENTRY_HEADER_BYTES + rd16(p, at) + rd16(p, at + 2);
    let top = rd32u(p, HEAP_TOP);
    if at == top {
        wr32(p, HEAP_TOP, (top + entry_bytes) as u32);
    } else {
        let garbage = rd32u(p, GARBAGE) + entry_bytes;
        wr32(p, GARBAGE, garbage as u32);
    }
    let slots = NODE_HEADER_BYTES + SLOT_BYTES * slot;
    let slots_end = NODE_HEADER_BYTES + SLOT_BYTES * n;
    p.copy_within(slots + SLOT_BYTES..slots_end, slots);
    wr16(p, NSLOTS, n - 1);
    if n == 1 {
        // An empty node's heap is empty: reset so no garbage lingers.
        wr32(p, HEAP_TOP, p.len() as u32);
        wr32(p, GARBAGE, 0);
    }
}

/// Rewrites the heap so that entries are contiguous at the end of the page, in slot
/// order, with no garbage.
fn compact(p: &mut [u8]) {
    let node = Node::new(p);
    let n = node.len();
    let entries: Vec<(Vec<u8>, Vec<u8>)> = (0..n)
        .map(|i| (node.key(i).to_vec(), node.payload(i).to_vec()))
        .collect();
    let mut top = p.len();
    for (i, (key, payload)) in entries.iter().enumerate() {
        let entry_bytes = ENTRY_HEADER_BYTES + key.len() + payload.len();
        top -= entry_bytes;
        wr16(p, top, key.len());
        wr16(p, top + 2, payload.len());
        p[top + ENTRY_HEADER_BYTES..top + ENTRY_HEADER_BYTES + key.len()].copy_from_slice(key);
        p[top + ENTRY_HEADER_BYTES + key.len()..top + entry_bytes].copy_from_slice(payload);
        wr16(p, NODE_HEADER_BYTES + SLOT_BYTES * i, top);
    }
    wr32(p, HEAP_TOP, top as u32);
    wr32(p, GARBAGE, 0);
}

fn rd32u(p: &[u8], at: usize) -> usize {
    node::rd32(p, at) as usize
}

/// The payload of an inner entry pointing at `child`.
pub fn child_payload(child: u32) -> [u8; CHILD_BYTES] {
    child.to_le_bytes()
}
