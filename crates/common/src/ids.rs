//! Identifier newtypes.
//!
//! A page is named by the file it lives in and its number within that file, as in
//! InnoDB's (space id, page number). [`PageId`] packs both into one `u64` so that it can
//! be stored in an atomic word and hashed cheaply; the packing is part of the
//! page-table design in the buffer pool, not of the on-disk format (the page header
//! stores the two halves separately, see `docs/file-format.md`).

use std::fmt;

/// A data file within a data directory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
pub struct FileId(pub u32);

/// A page's position within its file: byte offset = page number * page size.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
pub struct PageNo(pub u32);

/// A page in a data directory: (file, page number).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
pub struct PageId {
    pub file_id: FileId,
    pub page_no: PageNo,
}

impl PageId {
    pub const fn new(file_id: FileId, page_no: PageNo) -> Self {
        PageId { file_id, page_no }
    }

    /// The id packed into one word: file id in the high 32 bits, page number in the low.
    pub const fn to_u64(self) -> u64 {
        ((self.file_id.0 as u64) << 32) | self.page_no.0 as u64
    }

    pub const fn from_u64(packed: u64) -> Self {
        PageId {
            file_id: FileId((packed >> 32) as u32),
            page_no: PageNo(packed as u32),
        }
    }
}

impl fmt::Debug for PageId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self)
    }
}

impl fmt::Display for PageId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.file_id.0, self.page_no.0)
    }
}

/// A log sequence number: a position in the redo log. Zero means "no change logged".
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
pub struct Lsn(pub u64);

impl Lsn {
    pub const ZERO: Lsn = Lsn(0);
}

impl fmt::Display for Lsn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_id_packing_round_trips_and_orders_by_file_then_page() {
        let a = PageId::new(FileId(7), PageNo(u32::MAX));
        let b = PageId::new(FileId(8), PageNo(0));
        assert_eq!(PageId::from_u64(a.to_u64()), a);
        assert!(a.to_u64() < b.to_u64());
        assert!(a < b);
        assert_eq!(a.to_string(), "7:4294967295");
    }
}
