//! The slotted node page: layout, read accessors and structural validation.
//!
//! ```text
//! offset  size  field (after the 32-byte page header of `tarn_io::page`)
//!     32     2  level (0 = leaf)
//!     34     2  slot count n
//!     36     4  heap top: the lowest byte used by entries (entries grow down from the end)
//!     40     4  garbage bytes: bytes of dead entries inside the heap
//!     44     4  left sibling page number at this level (0 = none)
//!     48     4  right sibling page number at this level (0 = none)
//!     52     4  leftmost child (inner nodes): the child for keys below the first key
//!     56     8  reserved, zero
//!     64  2·n  slot array: u16 offset of each entry, in key order
//!    ...        free space
//!    top        entries: key length u16, payload length u16, key, payload
//! ```
//!
//! A leaf entry's payload is the value; an inner entry's payload is the 4-byte child
//! page number holding keys at or above the entry's key (and below the next key).
//!
//! # Invariants
//! 1. Slots are in strictly increasing key order (keys compare as bytes).
//! 2. `64 + 2·n <= heap top <= page size`, and every entry lies inside the heap.
//! 3. Page number 0 is the file's meta page, so 0 means "none" in every link.
//!
//! Nodes are only changed through [`crate::change::apply`]; this module only reads.

use tarn_io::PageType;
use tarn_io::page::PAGE_HEADER_BYTES;

pub const LEAF: PageType = PageType(16);
pub const INNER: PageType = PageType(17);

pub(crate) const LEVEL: usize = PAGE_HEADER_BYTES;
pub(crate) const NSLOTS: usize = PAGE_HEADER_BYTES + 2;
pub(crate) const HEAP_TOP: usize = PAGE_HEADER_BYTES + 4;
pub(crate) const GARBAGE: usize = PAGE_HEADER_BYTES + 8;
pub(crate) const LEFT: usize = PAGE_HEADER_BYTES + 12;
pub(crate) const RIGHT: usize = PAGE_HEADER_BYTES + 16;
pub(crate) const LEFTMOST: usize = PAGE_HEADER_BYTES + 20;
/// Where the slot array starts.
pub const NODE_HEADER_BYTES: usize = PAGE_HEADER_BYTES + 32;
pub(crate) const SLOT_BYTES: usize = 2;
pub(crate) const ENTRY_HEADER_BYTES: usize = 4;
pub(crate) const CHILD_BYTES: usize = 4;

#[inline]
pub(crate) fn rd16(p: &[u8], at: usize) -> usize {
    u16::from_le_bytes([p[at], p[at + 1]]) as usize
}

#[inline]
pub(crate) fn rd32(p: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([p[at], p[at + 1], p[at + 2], p[at + 3]])
}

#[inline]
pub(crate) fn wr16(p: &mut [u8], at: usize, v: usize) {
    p[at..at + 2].copy_from_slice(&(v as u16).to_le_bytes());
}

#[inline]
pub(crate) fn wr32(p: &mut [u8], at: usize, v: u32) {
    p[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

/// Bytes a node's body offers entries and slots.
pub fn usable_bytes(page_size_bytes: usize) -> usize {
    page_size_bytes - NODE_HEADER_BYTES
}

/// The largest entry (key plus payload, excluding slot and entry header) a tree with
/// this page size accepts: a quarter of the body, so that a split always leaves
/// room, an inner node always has at least three children, and a merge candidate is
/// recognisable by size alone.
pub fn max_entry_bytes(page_size_bytes: usize) -> usize {
    usable_bytes(page_size_bytes) / 4 - SLOT_BYTES - ENTRY_HEADER_BYTES
}

/// Bytes an entry with this key and payload takes, slot included.
#[inline]
pub fn entry_footprint(key_len: usize, payload_len: usize) -> usize {
    SLOT_BYTES + ENTRY_HEADER_BYTES + key_len + payload_len
}

/// A node below this many used bytes is underfull and is merged or refilled.
pub fn underfull_bytes(page_size_bytes: usize) -> usize {
    usable_bytes(page_size_bytes) / 4
}

/// A read-only view of a node page whose structure has been validated (pages are
/// validated when read from disk, and only [`crate::change::apply`] changes them).
#[derive(Clone, Copy)]
pub struct Node<'a> {
    pub(crate) p: &'a [u8],
}

impl<'a> Node<'a> {
    pub fn new(p: &'a [u8]) -> Node<'a> {
        Node { p }
    }

    /// The page's size: more than all its entries' bytes together.
    pub fn page_bytes(&self) -> usize {
        self.p.len()
    }

    pub fn page_type(&self) -> PageType {
        tarn_io::page::page_type(self.p)
    }

    pub fn is_node(&self) -> bool {
        matches!(self.page_type(), LEAF | INNER)
    }

    pub fn level(&self) -> u16 {
        rd16(self.p, LEVEL) as u16
    }

    pub fn is_leaf(&self) -> bool {
        self.page_type() == LEAF
    }

    pub fn len(&self) -> usize {
        rd16(self.p, NSLOTS)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn left(&self) -> u32 {
        rd32(self.p, LEFT)
    }

    pub fn right(&self) -> u32 {
        rd32(self.p, RIGHT)
    }

    pub fn leftmost(&self) -> u32 {
        rd32(self.p, LEFTMOST)
    }

    pub(crate) fn heap_top(&self) -> usize {
        rd32(self.p, HEAP_TOP) as usize
    }

    pub(crate) fn garbage(&self) -> usize {
        rd32(self.p, GARBAGE) as usize
    }

    #[inline]
    fn entry_at(&self, i: usize) -> usize {
        rd16(self.p, NODE_HEADER_BYTES + SLOT_BYTES * i)
    }

    #[inline]
    pub fn key(&self, i: usize) -> &'a [u8] {
        let at = self.entry_at(i);
        let klen = rd16(self.p, at);
        &self.p[at + ENTRY_HEADER_BYTES..at + ENTRY_HEADER_BYTES + klen]
    }

    #[inline]
    pub fn payload(&self, i: usize) -> &'a [u8] {
        let at = self.entry_at(i);
        let klen = rd16(self.p, at);
        let plen = rd16(self.p, at + 2);
        let start = at + ENTRY_HEADER_BYTES + klen;
        &self.p[start..start + plen]
    }

    /// The child of inner entry `i`.
    #[inline]
    pub fn child(&self, i: usize) -> u32 {
        let payload = self.payload(i);
        u32::from_le_bytes([payload[0], payload[1], payload[2], payload[3]])
    }

    /// Child `c` of an inner node counting the leftmost as 0: child c is entry c - 1's.
    #[inline]
    pub fn child_at(&self, c: usize) -> u32 {
        if c == 0 {
            self.leftmost()
        } else {
            self.child(c - 1)
        }
    }

    /// Children of an inner node (separators + 1).
    pub fn child_count(&self) -> usize {
        self.len() + 1
    }

    /// Bytes taken by entries and slots.
    pub fn used_bytes(&self) -> usize {
        let size = self.p.len();
        (size - self.heap_top()) - self.garbage() + SLOT_BYTES * self.len()
    }

    /// Bytes still free, counting garbage a compaction would reclaim.
    pub fn free_bytes(&self) -> usize {
        usable_bytes(self.p.len()) - self.used_bytes()
    }

    /// The first slot whose key is >= `key` (`Ok` if equal), by binary search.
    pub fn search(&self, key: &[u8]) -> Result<usize, usize> {
        let (mut lo, mut hi) = (0, self.len());
        while lo < hi {
            let mid = (lo + hi) / 2;
            match self.key(mid).cmp(key) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Ok(mid),
            }
        }
        Err(lo)
    }

    /// The child index (0 = leftmost) an inner node routes `key` to.
    pub fn route(&self, key: &[u8]) -> usize {
        match self.search(key) {
            Ok(i) => i + 1,
            Err(i) => i,
        }
    }

    /// Checks the structure of the page: header bounds, every slot's entry inside the
    /// heap, key order, payload sizes of inner entries, and entry sizes (at most
    /// [`max_entry_bytes`]; inner keys at most that less the child pointer). Run on
    /// every node page read from disk, so later accessors can index without checks and
    /// changes can rely on the size bounds.
    pub fn validate(&self) -> Result<(), String> {
        let size = self.p.len();
        let n = self.len();
        let top = self.heap_top();
        let slots_end = NODE_HEADER_BYTES + SLOT_BYTES * n;
        let max_entry = max_entry_bytes(size);
        if slots_end > top || top > size {
            return Err(format!(
                "node with {n} slots has heap top {top} outside {slots_end}..={size}"
            ));
        }
        if self.level() > crate::TREE_HEIGHT_MAX as u16 {
            return Err(format!("node level {} is impossible", self.level()));
        }
        if self.is_leaf() != (self.level() == 0) {
            return Err(format!(
                "page type {:?} does not match level {}",
                self.page_type(),
                self.level()
            ));
        }
        let mut live = 0;
        for i in 0..n {
            let at = self.entry_at(i);
            if at < top || at + ENTRY_HEADER_BYTES > size {
                return Err(format!(
                    "slot {i} points to {at}, outside the heap {top}..{size}"
                ));
            }
            let len = rd16(self.p, at) + rd16(self.p, at + 2);
            if at + ENTRY_HEADER_BYTES + len > size {
                return Err(format!(
                    "entry {i} at {at} of {len} bytes runs past the page"
                ));
            }
            if !self.is_leaf() && rd16(self.p, at + 2) != CHILD_BYTES {
                return Err(format!(
                    "inner entry {i} has a payload of {} bytes",
                    rd16(self.p, at + 2)
                ));
            }
            // Entries are bounded (invariant 2 of the crate): a larger one, however
            // well formed, could later leave a split with no room.
            if !self.is_leaf() && rd16(self.p, at) > max_entry - CHILD_BYTES {
                return Err(format!(
                    "inner entry {i} has a key of {} bytes, over the {}-byte maximum",
                    rd16(self.p, at),
                    max_entry - CHILD_BYTES
                ));
            }
            if len > max_entry {
                return Err(format!(
                    "entry {i} of {len} bytes is over the {max_entry}-byte maximum"
                ));
            }
            live += ENTRY_HEADER_BYTES + len;
            if i > 0 && self.key(i - 1) >= self.key(i) {
                return Err(format!("keys of slots {} and {i} are out of order", i - 1));
            }
        }
        if live + self.garbage() != size - top {
            return Err(format!(
                "entries take {live} bytes and garbage {} but the heap holds {}",
                self.garbage(),
                size - top
            ));
        }
        Ok(())
    }
}
