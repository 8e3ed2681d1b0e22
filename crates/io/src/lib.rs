//! Page I/O (technique S5).
//!
//! This crate owns everything between a page-sized buffer in memory and the bytes on
//! the device:
//!
//! - [`page`]: the page header, the checksum written right before every write and
//!   verified right after every read.
//! - [`file`]: a data file of pages, grown by extents, with synchronous reads, writes
//!   and syncs on the chosen path.
//! - [`engine`]: the chosen path (`buffered`, `direct`, `uring`, or `auto`) and
//!   asynchronous batches of reads and writes with completions collected later.
//! - [`uring`]: the io_uring rings behind the `uring` path.
//! - [`datadir`]: the data directory, its control file, and the open data files.
//! - [`buf`]: aligned buffers, arenas and the buffer type requests carry.
//! - [`fault`]: test-only fault injection (failed writes and syncs, simulated power
//!   loss with torn writes) hooked into every write and sync of a data file.
//!
//! It knows nothing of the buffer pool, B+trees or logs above it. Unsafe code is
//! confined to `buf` (aligned allocation), `uring` (kernel-shared rings) and a few
//! system calls in `file`; each block states why it is sound.

pub mod buf;
pub mod datadir;
pub mod engine;
pub mod fault;
pub mod file;
pub mod os;
pub mod page;
pub mod pmem;
pub mod uring;

pub use buf::{AlignedBuf, IoBuf, PageArena, RawBuf};
pub use datadir::DataDir;
pub use engine::{
    CompletionQueue, IoCompletion, IoConfig, IoDone, IoEngine, IoOp, IoQueue, IoRequest, Reaped,
};
pub use file::{PageFile, SyncKind};
pub use page::{PageStatus, PageType};
