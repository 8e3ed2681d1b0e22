//! Undo records: how to take one row change back, and the older row version it held.
//!
//! Tarn keeps undo in memory and in the redo log, not in undo pages:
//!
//! - **In memory** ([`UndoStore`]), each record under its roll pointer, so a reader
//!   whose view does not see a row's newest version follows the row header's roll
//!   pointer to the previous version, and so on. Old versions are needed only by open
//!   read views, and no view survives a restart.
//! - **In the redo log**, each record is logged (kind `UNDO`) before the page change it
//!   covers. Recovery collects the records of transactions with no commit or rollback
//!   record and undoes them ([`UndoRecord`] applies idempotently: a change is taken back
//!   only while the row still carries the transaction's id, so undoing twice, or after
//!   a crash during rollback, ends in the same state).
//!
//! Why not InnoDB's undo tablespaces: they cost a page write (and its redo) per change
//! and a purge that reads them back from disk. The price here is that an active
//! transaction's undo stays in memory (bounded by `TRX_UNDO_BYTES_MAX`) and that the
//! log cannot be recycled past the first record of the oldest active transaction.
//!
//! # Invariants
//! 1. A record is in the store from its logging until purge, or until its transaction
//!    rolls it back; a roll pointer that finds nothing means "no older version".
//! 2. Insert records are not in the store (an inserted row has roll pointer 0): they
//!    matter only to rollback, which reads them from the transaction.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use parking_lot::Mutex;
use tarn_common::{Error, Result};

use crate::TrxId;

/// What a change did, so rollback knows how to take it back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UndoKind {
    /// A row was inserted under `key`: rollback deletes it.
    Insert,
    /// A row was replaced (or a delete-marked row reused by an insert): rollback puts
    /// `old_row` back.
    Update,
    /// A row was delete-marked: rollback puts `old_row` (unmarked) back.
    DeleteMark,
}

/// One undone-able row change.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UndoRecord {
    pub trx_id: TrxId,
    /// The change's number within its transaction: 0, 1, 2, … in the order made, never
    /// reused (not even after a rollback to a savepoint), so log records can name it.
    pub undo_no: u64,
    pub kind: UndoKind,
    /// The clustered index (its file id) of the row.
    pub table_id: u32,
    /// The row's clustered key.
    pub key: Vec<u8>,
    /// The stored bytes of the previous version (empty for `Insert`).
    pub old_row: Vec<u8>,
    /// Secondary entries the change added, as (index file id, entry key): rollback
    /// removes exactly these (whether or not the row change itself happened before a
    /// crash). Entries it did not add existed before, for older versions, and stay.
    pub added_entries: Vec<(u32, Vec<u8>)>,
    /// For an `Update`: the new version has the same secondary entries as the old one
    /// (no indexed column changed), so purging the change has no entry to remove.
    /// Known when the change is made; false where it is not known (a record rebuilt
    /// from the log, which [`UndoRecord::encode`] does not carry it into), which only
    /// costs purge the work of finding out.
    pub same_entries: bool,
}

const KIND_INSERT: u8 = 1;
const KIND_UPDATE: u8 = 2;
const KIND_DELETE_MARK: u8 = 3;

impl UndoRecord {
    /// Memory the record holds, for the per-transaction bound and purge backlog.
    pub fn size_bytes(&self) -> u64 {
        let entries: usize = self.added_entries.iter().map(|(_, k)| 8 + k.len()).sum();
        (64 + self.key.len() + self.old_row.len() + entries) as u64
    }

    /// The length of [`UndoRecord::encode`]'s output.
    pub fn encoded_bytes(&self) -> usize {
        8 + 8
            + 1
            + 4
            + 4
            + 4
            + self.key.len()
            + self
                .added_entries
                .iter()
                .map(|(_, key)| 4 + 4 + key.len())
                .sum::<usize>()
            + self.old_row.len()
    }

    /// The record's form in the redo log.
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.trx_id.to_le_bytes());
        out.extend_from_slice(&self.undo_no.to_le_bytes());
        out.push(match self.kind {
            UndoKind::Insert => KIND_INSERT,
            UndoKind::Update => KIND_UPDATE,
            UndoKind::DeleteMark => KIND_DELETE_MARK,
        });
        out.extend_from_slice(&self.table_id.to_le_bytes());
        out.extend_from_slice(&(self.added_entries.len() as u32).to_le_bytes());
        out.extend_from_slice(&(self.key.len() as u32).to_le_bytes());
        out.extend_from_slice(&self.key);
        for (index_id, key) in &self.added_entries {
            out.extend_from_slice(&index_id.to_le_bytes());
            out.extend_from_slice(&(key.len() as u32).to_le_bytes());
            out.extend_from_slice(key);
        }
        out.extend_from_slice(&self.old_row);
    }

    /// Decodes [`UndoRecord::encode`]'s output; `CorruptData` if it does not parse.
    pub fn decode(p: &[u8]) -> Result<UndoRecord> {
        let bad = || Error::CorruptData(format!("undo record of {} bytes does not parse", p.len()));
        let at = std::cell::Cell::new(0usize);
        let take = |n: usize| -> Result<&[u8]> {
            let start = at.get();
            let end = start
                .checked_add(n)
                .filter(|&e| e <= p.len())
                .ok_or_else(bad)?;
            at.set(end);
            Ok(&p[start..end])
        };
        let trx_id = u64::from_le_bytes(take(8)?.try_into().expect("8 bytes"));
        let undo_no = u64::from_le_bytes(take(8)?.try_into().expect("8 bytes"));
        let kind = match take(1)?[0] {
            KIND_INSERT => UndoKind::Insert,
            KIND_UPDATE => UndoKind::Update,
            KIND_DELETE_MARK => UndoKind::DeleteMark,
            _ => return Err(bad()),
        };
        let u32_of = |b: &[u8]| u32::from_le_bytes(b.try_into().expect("4 bytes"));
        let table_id = u32_of(take(4)?);
        let entry_count = u32_of(take(4)?) as usize;
        let key_len = u32_of(take(4)?) as usize;
        let key = take(key_len)?.to_vec();
        let mut added_entries = Vec::with_capacity(entry_count.min(64));
        for _ in 0..entry_count {
            let index_id = u32_of(take(4)?);
            let len = u32_of(take(4)?) as usize;
            added_entries.push((index_id, take(len)?.to_vec()));
        }
        let old_row = p[at.get()..].to_vec();
        Ok(UndoRecord {
            trx_id,
            undo_no,
            kind,
            table_id,
            key,
            old_row,
            added_entries,
            same_entries: false,
        })
    }
}

/// Shards of the undo store's map (a power of two).
const UNDO_SHARDS: usize = 64;

/// Undo records by roll pointer, for readers building old versions.
pub struct UndoStore {
    next_roll_ptr: AtomicU64,
    shards: Vec<Mutex<HashMap<u64, Arc<UndoRecord>>>>,
    bytes: AtomicU64,
}

impl Default for UndoStore {
    fn default() -> Self {
        UndoStore::starting_at(1)
    }
}

impl UndoStore {
    /// A store whose first roll pointer is `first_roll_ptr` (> 0). After a restart it
    /// must be above every roll pointer a stored row may still carry: purge follows
    /// pointers from rows written before the restart and must not find another
    /// record under one.
    pub fn starting_at(first_roll_ptr: u64) -> Self {
        UndoStore {
            next_roll_ptr: AtomicU64::new(first_roll_ptr.max(1)),
            shards: (0..UNDO_SHARDS)
                .map(|_| Mutex::new(HashMap::new()))
                .collect(),
            bytes: AtomicU64::new(0),
        }
    }

    /// The roll pointer the next record will get (stored in checkpoints).
    pub fn next_roll_ptr(&self) -> u64 {
        self.next_roll_ptr.load(Ordering::Relaxed)
    }

    fn shard(&self, roll_ptr: u64) -> &Mutex<HashMap<u64, Arc<UndoRecord>>> {
        &self.shards[(roll_ptr as usize) & (UNDO_SHARDS - 1)]
    }

    /// Stores `record` and returns its roll pointer (never 0).
    pub fn put(&self, record: Arc<UndoRecord>) -> u64 {
        let roll_ptr = self.next_roll_ptr.fetch_add(1, Ordering::Relaxed);
        self.bytes.fetch_add(record.size_bytes(), Ordering::Relaxed);
        self.shard(roll_ptr).lock().insert(roll_ptr, record);
        roll_ptr
    }

    /// The record under `roll_ptr`, or `None` (purged, rolled back, or 0).
    pub fn get(&self, roll_ptr: u64) -> Option<Arc<UndoRecord>> {
        if roll_ptr == 0 {
            return None;
        }
        self.shard(roll_ptr).lock().get(&roll_ptr).cloned()
    }

    /// Drops the record under `roll_ptr`.
    pub fn remove(&self, roll_ptr: u64) {
        if let Some(record) = self.shard(roll_ptr).lock().remove(&roll_ptr) {
            self.bytes.fetch_sub(record.size_bytes(), Ordering::Relaxed);
        }
    }

    /// Bytes of all records held.
    pub fn size_bytes(&self) -> u64 {
        self.bytes.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn undo_records_round_trip_and_truncations_are_errors() {
        let record = UndoRecord {
            trx_id: 77,
            undo_no: 3,
            kind: UndoKind::Update,
            table_id: 19,
            key: b"k1".to_vec(),
            old_row: b"old row bytes".to_vec(),
            added_entries: vec![(20, b"e1".to_vec()), (21, b"entry2".to_vec())],
            same_entries: false,
        };
        let mut out = Vec::new();
        record.encode(&mut out);
        assert_eq!(UndoRecord::decode(&out).unwrap(), record);
        // Everything before the old row is needed; the old row is the rest.
        for cut in 0..(29 + 2 + 10 + 14) {
            assert!(UndoRecord::decode(&out[..cut]).is_err(), "cut at {cut}");
        }
        let store = UndoStore::default();
        let ptr = store.put(Arc::new(record.clone()));
        assert_ne!(ptr, 0);
        assert_eq!(*store.get(ptr).unwrap(), record);
        store.remove(ptr);
        assert!(store.get(ptr).is_none() && store.get(0).is_none());
        assert_eq!(store.size_bytes(), 0);
    }
}
