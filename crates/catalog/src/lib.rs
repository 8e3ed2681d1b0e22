//! Tarn's catalog and table API: what the SQL layer calls.
//!
//! - [`catalog`]: table, index and view definitions, persisted in `catalog.json`.
//! - [`auto_increment`]: AUTO_INCREMENT counters.
//! - [`storage`]: [`Storage`], an open data directory: DDL, table lookup, checkpoint.
//! - [`table`]: [`Table`]: insert, get, update, delete, primary-key range scans, bulk
//!   load; rows in a clustered B+tree, one B+tree per secondary index.
//! - [`scan`]: the parallel full scan into columnar batches (S1).
//! - [`secondary`]: secondary-index range scans with sorted prefetch (S2).
//! - [`stats`]: ANALYZE TABLE, statistics and selectivity estimates for the planner.
//! - `sort`: the in-memory key sort behind index builds.

#![forbid(unsafe_code)]

pub mod auto_increment;
pub mod catalog;
mod rebuild;
pub mod recovery;
pub mod scan;
pub mod secondary;
pub mod stats;
pub mod storage;
pub mod table;
pub mod txn;

mod sort;

pub use catalog::{
    AutoIncrement, CheckDef, ForeignKeyAction, ForeignKeyDef, GeneratedColumn, IndexDef, TableDef,
    ViewDef,
};
pub use recovery::RecoveryReport;
pub use scan::{BatchStream, ParallelScan, ParallelScanStats, Predicate};
pub use secondary::{IndexScan, IndexScanStats};
pub use stats::{AnalyzeOptions, ColumnStats, IndexStats, TableStats};
pub use storage::{
    CheckOutcome, ChildForeignKey, CommitTicket, ReferencedBy, Storage, TableLockHolder,
};
pub use table::{RowCursor, SecondaryIndex, Table};
pub use tarn_txn::lock::WaitPolicy;
pub use txn::{RowLock, Snapshot, Transaction, TxnContext};
