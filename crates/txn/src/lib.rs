//! Transactions: the transaction table, read views, undo, purge, and the lock manager.
//!
//! - [`trx`]: ids, the active set, commit order, the purge queue ([`TrxSys`], [`Trx`]).
//! - [`view`]: consistent snapshots ([`ReadView`]).
//! - [`undo`]: undo records and the in-memory store of old row versions.
//! - [`lock`]: row and table locks with FIFO or CATS scheduling (S3).
//!
//! This crate knows nothing of pages or rows: the catalog applies undo records to
//! tables, logs them, and asks here what a view sees.

#![forbid(unsafe_code)]

pub mod lock;
pub mod trx;
pub mod undo;
pub mod view;

pub use trx::{PurgeItem, Trx, TrxStats, TrxSys};
pub use undo::{UndoKind, UndoRecord, UndoStore};
pub use view::ReadView;

/// A transaction id. 0 means "no transaction" (rows written by bulk loads).
pub type TrxId = u64;
