//! The buffer pool (technique S4).
//!
//! The pool caches pages of the data directory in memory frames, split into instances
//! that share nothing: a page belongs to instance `hash(page id) mod n`, and each
//! instance has its own page table, free list, LRU list (with midpoint insertion) and
//! flush list, each behind its own counted latch. Every latch acquisition and wait is
//! recorded in the engine's [`tarn_common::latch::LatchRegistry`].
//!
//! - [`pool`]: the public API: fetch, create, optimistic reads, prefetch, flush.
//! - [`doublewrite`]: the doublewrite file written before pages are written in place,
//!   and the startup repair of torn pages from it.
//! - [`guard`]: latched page guards and the optimistic page view.
//! - `instance`: one instance's state, eviction and LRU policy.
//! - `frame`: a frame's state machine and the pin protocol.
//! - `latch`: the page latch (shared, exclusive, optimistic version).
//! - `page_table`: the lock-free-read page table.
//! - `lru`: the LRU list with midpoint insertion, and the free list.
//!
//! Unsafe code here is limited to handing out frame memory under latches (guards),
//! optimistic volatile reads (seqlock-style), and parking; each block says why.

pub mod doublewrite;
mod frame;
pub mod guard;
mod instance;
mod latch;
mod lru;
mod page_table;
pub mod pool;

pub use doublewrite::{RepairReason, RepairReport, RepairedPage, repair_torn_pages};
pub use guard::{OptimisticPage, PageReadGuard, PageWriteGuard};
pub use pool::{BufferPool, LogFlush, NoLog, PageValidator, PoolConfig, PoolStats};
