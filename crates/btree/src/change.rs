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
    /// Sets the next-page link of a free or overflow page (a freed chain's last page
    /// joining the free list).
    LinkFree { next: u32 },
}

/// Where page changes are logged: the WAL, or [`NoRedo`] for trees that need no log
/// (tests and tools), which hands out increasing LSNs so the flush list still works.
pub trait Redo: Send + Sync {
    /// Logs `change` to page `page_id` and returns the start and end LSN of its record
    /// (> 0). The page is stamped with the end (recovery replays a record on a page
    /// stamped below its end); a page this change makes dirty enters the flush list at
    /// the start, where recovery must begin reading to replay it.
    fn log(&self, page_id: tarn_common::PageId, change: &PageChange<'_>) -> (Lsn, Lsn);

    /// Opens a group of records that recovery must see whole or not at all (a
    /// structure change releases some page latches before its last record). The group
    /// ends when the returned value is dropped.
    fn begin_group(&self) -> Box<dyn Send + '_> {
        Box::new(())
    }

    /// An LSN for a change that is not logged (a bulk build, whose pages are written
    /// and synced before the build is published): at least every LSN handed out so far.
    fn unlogged_lsn(&self) -> Lsn;
}

/// A [`Redo`] that logs nothing.
#[derive(Default)]
pub struct NoRedo {
    next_lsn: AtomicU64,
}

impl Redo for NoRedo {
    fn log(&self, _page_id: tarn_common::PageId, _change: &PageChange<'_>) -> (Lsn, Lsn) {
        let lsn = Lsn(self.next_lsn.fetch_add(1, Ordering::Relaxed) + 1);
        (lsn, lsn)
    }

    fn unlogged_lsn(&self) -> Lsn {
        Lsn(self.next_lsn.fetch_add(1, Ordering::Relaxed) + 1)
    }
}

/// A mini-transaction: applies changes to latched pages and logs each. A mini-transaction
/// of several records (a split, a merge, an overflow chain, a bulk build) is a group:
/// the log never makes part of it durable without the rest, so recovery replays all of
/// it or none ([`Redo::begin_group`]).
pub struct Mtr<'r> {
    redo: &'r dyn Redo,
    /// Whether this is a group, and the group once its first record is logged. It
    /// opens lazily: an open group holds back the log's durability (every commit after
    /// its start waits for it), so it must not span the descent and latch waits that
    /// precede the first change.
    grouped: bool,
    group: std::cell::OnceCell<Box<dyn Send + 'r>>,
    logged: bool,
}

impl<'r> Mtr<'r> {
    /// A mini-transaction of exactly one record (atomic by itself).
    pub fn new(redo: &'r dyn Redo) -> Self {
        Mtr {
            redo,
            grouped: false,
            group: std::cell::OnceCell::new(),
            logged: true,
        }
    }

    /// A mini-transaction whose changes are not logged: bulk builds of a tree nobody
    /// else can reach yet, whose pages are flushed before the tree is published. A
    /// crash during the build leaves a tree that must be rebuilt.
    pub fn unlogged(redo: &'r dyn Redo) -> Self {
        Mtr {
            redo,
            grouped: false,
            group: std::cell::OnceCell::new(),
            logged: false,
        }
    }

    /// A mini-transaction that may log several records.
    pub fn group(redo: &'r dyn Redo) -> Self {
        Mtr {
            redo,
            grouped: true,
            group: std::cell::OnceCell::new(),
            logged: true,
        }
    }

    /// Logs `change`, applies it to the exclusively latched `guard`, and marks the page
    /// dirty at the change's LSN.
    pub fn apply(&self, guard: &mut PageWriteGuard<'_>, change: PageChange<'_>) {
        let page_id = guard.page_id();
        let (start, end) = if self.logged {
            if self.grouped {
                self.group.get_or_init(|| self.redo.begin_group());
            }
            self.redo.log(page_id, &change)
        } else {
            let lsn = self.redo.unlogged_lsn();
            (lsn, lsn)
        };
        apply(guard, page_id, &change);
        guard.mark_changed(start, end);
    }
}

/// Tags of the encoded forms of [`PageChange`] (the payload of a redo record).
mod tag {
    pub const FORMAT_NODE: u8 = 1;
    pub const INSERT: u8 = 2;
    pub const DELETE: u8 = 3;
    pub const SET_PAYLOAD: u8 = 4;
    pub const SET_LINKS: u8 = 5;
    pub const SET_LEFTMOST: u8 = 6;
    pub const SET_META: u8 = 7;
    pub const FORMAT_FREE: u8 = 8;
    pub const FORMAT_OVERFLOW: u8 = 9;
    pub const LINK_FREE: u8 = 10;
}

impl<'a> PageChange<'a> {
    /// Appends the redo payload of this change to page `page_id`: the page id, a tag
    /// and the change's fields, little-endian, byte strings length-prefixed.
    pub fn encode(&self, page_id: tarn_common::PageId, out: &mut Vec<u8>) {
        out.extend_from_slice(&page_id.file_id.0.to_le_bytes());
        out.extend_from_slice(&page_id.page_no.0.to_le_bytes());
        let u16s = |out: &mut Vec<u8>, v: u16| out.extend_from_slice(&v.to_le_bytes());
        let u32s = |out: &mut Vec<u8>, v: u32| out.extend_from_slice(&v.to_le_bytes());
        let bytes = |out: &mut Vec<u8>, b: &[u8]| {
            out.extend_from_slice(&(b.len() as u32).to_le_bytes());
            out.extend_from_slice(b);
        };
        match *self {
            PageChange::FormatNode {
                level,
                left,
                right,
                leftmost,
            } => {
                out.push(tag::FORMAT_NODE);
                u16s(out, level);
                u32s(out, left);
                u32s(out, right);
                u32s(out, leftmost);
            }
            PageChange::Insert { slot, key, payload } => {
                out.push(tag::INSERT);
                u16s(out, slot);
                bytes(out, key);
                bytes(out, payload);
            }
            PageChange::Delete { slot } => {
                out.push(tag::DELETE);
                u16s(out, slot);
            }
            PageChange::SetPayload { slot, payload } => {
                out.push(tag::SET_PAYLOAD);
                u16s(out, slot);
                bytes(out, payload);
            }
            PageChange::SetLinks { left, right } => {
                out.push(tag::SET_LINKS);
                u32s(out, left);
                u32s(out, right);
            }
            PageChange::SetLeftmost { child } => {
                out.push(tag::SET_LEFTMOST);
                u32s(out, child);
            }
            PageChange::SetMeta(meta) => {
                out.push(tag::SET_META);
                for v in [meta.root, meta.next, meta.free_head, meta.free_count] {
                    u32s(out, v);
                }
            }
            PageChange::FormatFree { next } => {
                out.push(tag::FORMAT_FREE);
                u32s(out, next);
            }
            PageChange::FormatOverflow { next, data } => {
                out.push(tag::FORMAT_OVERFLOW);
                u32s(out, next);
                bytes(out, data);
            }
            PageChange::LinkFree { next } => {
                out.push(tag::LINK_FREE);
                u32s(out, next);
            }
        }
    }

    /// Decodes a payload written by [`PageChange::encode`]. A malformed payload is
    /// `CorruptData` (a log record whose checksum held but whose contents do not parse).
    pub fn decode(payload: &'a [u8]) -> tarn_common::Result<(tarn_common::PageId, PageChange<'a>)> {
        let mut r = Reader { p: payload, at: 0 };
        let page_id =
            tarn_common::PageId::new(tarn_common::FileId(r.u32()?), tarn_common::PageNo(r.u32()?));
        let change = match r.u8()? {
            tag::FORMAT_NODE => PageChange::FormatNode {
                level: r.u16()?,
                left: r.u32()?,
                right: r.u32()?,
                leftmost: r.u32()?,
            },
            tag::INSERT => PageChange::Insert {
                slot: r.u16()?,
                key: r.bytes()?,
                payload: r.bytes()?,
            },
            tag::DELETE => PageChange::Delete { slot: r.u16()? },
            tag::SET_PAYLOAD => PageChange::SetPayload {
                slot: r.u16()?,
                payload: r.bytes()?,
            },
            tag::SET_LINKS => PageChange::SetLinks {
                left: r.u32()?,
                right: r.u32()?,
            },
            tag::SET_LEFTMOST => PageChange::SetLeftmost { child: r.u32()? },
            tag::SET_META => PageChange::SetMeta(crate::alloc::Meta {
                root: r.u32()?,
                next: r.u32()?,
                free_head: r.u32()?,
                free_count: r.u32()?,
            }),
            tag::FORMAT_FREE => PageChange::FormatFree { next: r.u32()? },
            tag::FORMAT_OVERFLOW => PageChange::FormatOverflow {
                next: r.u32()?,
                data: r.bytes()?,
            },
            tag::LINK_FREE => PageChange::LinkFree { next: r.u32()? },
            other => return Err(r.bad(&format!("unknown page change tag {other}"))),
        };
        if r.at != payload.len() {
            return Err(r.bad("trailing bytes"));
        }
        Ok((page_id, change))
    }

    /// True if the change formats the whole page, so recovery may apply it to a page
    /// that was never written.
    pub fn formats_page(&self) -> bool {
        matches!(
            self,
            PageChange::FormatNode { .. }
                | PageChange::FormatFree { .. }
                | PageChange::FormatOverflow { .. }
                | PageChange::SetMeta(_)
        )
    }
}

struct Reader<'a> {
    p: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn bad(&self, what: &str) -> tarn_common::Error {
        tarn_common::Error::CorruptData(format!(
            "redo record of a page change: {what} at byte {} of {}",
            self.at,
            self.p.len()
        ))
    }

    fn take(&mut self, n: usize) -> tarn_common::Result<&'a [u8]> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.p.len());
        let end = end.ok_or_else(|| self.bad("truncated"))?;
        let out = &self.p[self.at..end];
        self.at = end;
        Ok(out)
    }

    fn u8(&mut self) -> tarn_common::Result<u8> {
        Ok(self.take(1)?[0])
    }

    fn u16(&mut self) -> tarn_common::Result<u16> {
        Ok(u16::from_le_bytes(
            self.take(2)?.try_into().expect("2 bytes"),
        ))
    }

    fn u32(&mut self) -> tarn_common::Result<u32> {
        Ok(u32::from_le_bytes(
            self.take(4)?.try_into().expect("4 bytes"),
        ))
    }

    fn bytes(&mut self) -> tarn_common::Result<&'a [u8]> {
        let n = self.u32()? as usize;
        self.take(n)
    }
}

/// Replays a decoded change on the bytes of page `page_id` during recovery, checking
/// first that the change fits the page (a slot in range, room for an insert), so a
/// record applied to the wrong page state is an error naming the page, never a panic.
pub fn replay(
    p: &mut [u8],
    page_id: tarn_common::PageId,
    change: &PageChange<'_>,
) -> tarn_common::Result<()> {
    let bad = |reason: String| {
        tarn_common::Error::CorruptData(format!(
            "redo of {change:?} does not fit page {page_id}: {reason}"
        ))
    };
    if let PageChange::LinkFree { .. } = change {
        let page_type = page::page_type(p);
        if page_type != crate::alloc::FREE && page_type != crate::overflow::OVERFLOW {
            return Err(bad("the page is neither free nor an overflow page".into()));
        }
    } else if !change.formats_page() && !Node::new(p).is_node() {
        return Err(bad("the page is not a B+tree node".into()));
    }
    match *change {
        PageChange::Insert { slot, key, payload } => {
            let node = Node::new(p);
            if usize::from(slot) > node.len() {
                return Err(bad(format!("slot {slot} of {}", node.len())));
            }
            if node.free_bytes() < ENTRY_HEADER_BYTES + key.len() + payload.len() + SLOT_BYTES {
                return Err(bad("no room".into()));
            }
        }
        PageChange::Delete { slot } | PageChange::SetPayload { slot, .. } => {
            let node = Node::new(p);
            if usize::from(slot) >= node.len() {
                return Err(bad(format!("slot {slot} of {}", node.len())));
            }
            if let PageChange::SetPayload { payload, .. } = change {
                let old = node.payload(usize::from(slot)).len();
                if payload.len() > old && node.free_bytes() + old < payload.len() {
                    return Err(bad("no room".into()));
                }
            }
        }
        _ => {}
    }
    apply(p, page_id, change);
    Ok(())
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
        PageChange::LinkFree { next } => wr32(p, crate::alloc::FREE_NEXT, next),
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

#[cfg(test)]
mod redo_tests {
    use super::*;
    use tarn_common::{FileId, PageId, PageNo};

    #[test]
    fn every_change_round_trips_through_its_redo_payload_and_truncations_are_errors() {
        let page_id = PageId::new(FileId(17), PageNo(42));
        let changes = [
            PageChange::FormatNode {
                level: 2,
                left: 3,
                right: 4,
                leftmost: 5,
            },
            PageChange::Insert {
                slot: 7,
                key: b"key",
                payload: b"payload",
            },
            PageChange::Delete { slot: 1 },
            PageChange::SetPayload {
                slot: 0,
                payload: b"",
            },
            PageChange::SetLinks { left: 1, right: 2 },
            PageChange::SetLeftmost { child: 9 },
            PageChange::SetMeta(crate::alloc::Meta {
                root: 1,
                next: 10,
                free_head: 3,
                free_count: 1,
            }),
            PageChange::FormatFree { next: 8 },
            PageChange::FormatOverflow {
                next: 0,
                data: &[1, 2, 3],
            },
            PageChange::LinkFree { next: 5 },
        ];
        for change in changes {
            let mut out = Vec::new();
            change.encode(page_id, &mut out);
            let (id, decoded) = PageChange::decode(&out).unwrap();
            assert_eq!((id, &decoded), (page_id, &change));
            for cut in 0..out.len() {
                assert!(
                    PageChange::decode(&out[..cut]).is_err(),
                    "{change:?} cut at {cut}"
                );
            }
        }
    }
}
