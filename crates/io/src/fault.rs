//! Fault injection for tests: a layer *beside* the real I/O paths, in the spirit of
//! SQLite's crash VFS. Every write and sync of a data file, the doublewrite file or a
//! redo log file calls [`check_write`] / [`check_sync`] / [`synced`] first. With no
//! plan armed (always, outside fault tests) these are a relaxed atomic load each.
//!
//! (Stub: the fault plan is being written.)

use std::os::fd::RawFd;
use std::path::Path;

use tarn_common::Result;

/// Called before `len` bytes are written at `offset` of the file `path` (open as `fd`).
/// May fail (an injected error), or remember the bytes about to be overwritten so that a
/// simulated power loss can put them back.
pub fn check_write(_path: &Path, _fd: RawFd, _offset: u64, _len: usize) -> Result<()> {
    Ok(())
}

/// Called before the file `path` is synced. May fail (an injected fsync error).
pub fn check_sync(_path: &Path) -> Result<()> {
    Ok(())
}

/// Called after the file `path` was synced: its earlier writes are now durable.
pub fn synced(_path: &Path) {}
