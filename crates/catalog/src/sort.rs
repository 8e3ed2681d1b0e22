//! An in-memory sort of index keys, for index builds and bulk loads.
//!
//! Keys are appended to one byte arena with an (offset, length) entry each, so that
//! millions of keys cost two allocations rather than one each, then the entries are
//! sorted by the bytes they point at. Bounded by `INDEX_BUILD_ROWS_MAX`.

use tarn_common::limits::INDEX_BUILD_ROWS_MAX;
use tarn_common::{Error, Result};

#[derive(Default)]
pub(crate) struct KeyArena {
    bytes: Vec<u8>,
    /// (offset, length, unique-prefix length: 0 when the key takes no part in a
    /// uniqueness check).
    entries: Vec<(usize, u32, u32)>,
}

impl KeyArena {
    pub(crate) fn push(&mut self, key: &[u8], unique_prefix_len: usize) -> Result<()> {
        if self.entries.len() >= INDEX_BUILD_ROWS_MAX {
            return Err(Error::OutOfResources(format!(
                "an index build of more than {INDEX_BUILD_ROWS_MAX} rows"
            )));
        }
        self.entries
            .push((self.bytes.len(), key.len() as u32, unique_prefix_len as u32));
        self.bytes.extend_from_slice(key);
        Ok(())
    }

    fn key(&self, entry: &(usize, u32, u32)) -> &[u8] {
        &self.bytes[entry.0..entry.0 + entry.1 as usize]
    }

    pub(crate) fn sort(&mut self) {
        let mut entries = std::mem::take(&mut self.entries);
        entries.sort_unstable_by(|a, b| self.key(a).cmp(self.key(b)));
        self.entries = entries;
    }

    /// After `sort`: the first key whose unique prefix equals its predecessor's.
    pub(crate) fn first_duplicate(&self) -> Option<&[u8]> {
        self.entries.windows(2).find_map(|pair| {
            let (a, b) = (&pair[0], &pair[1]);
            if a.2 == 0 || b.2 == 0 || a.2 != b.2 {
                return None;
            }
            let prefix = &self.key(a)[..a.2 as usize];
            (prefix == &self.key(b)[..b.2 as usize]).then(|| self.key(b))
        })
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = &[u8]> {
        self.entries.iter().map(|e| self.key(e))
    }
}
