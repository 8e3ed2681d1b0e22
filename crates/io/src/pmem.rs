//! Shared memory mappings for the redo log: the in-memory log buffer (an anonymous
//! mapping) and memory-mapped log files for the `pmem` log device (technique S3).
//!
//! A [`Mapping`] is a fixed range of memory that several threads write at once, each
//! into bytes the caller has handed to it alone (the redo log reserves disjoint LSN
//! ranges with an atomic counter), and that one thread later reads. Rust references
//! cannot express "many writers of disjoint bytes, coordinated elsewhere", so the
//! mapping is only ever touched through raw pointers inside this module, and the safe
//! API is positional, like `pwrite`/`pread` on a file: [`Mapping::write_at`] and
//! [`Mapping::read_at`] copy bytes in and out and check bounds. Concurrent writes to the
//! *same* bytes (a caller's bug) leave those bytes unspecified, as two processes
//! writing one file would; they cannot corrupt anything outside the range, and no Rust
//! reference into the mapping ever exists. A file-backed mapping is shared with the
//! file (and with any other process mapping it) anyway, so the compiler may never
//! assume it owns these bytes.
//!
//! # Persistence
//!
//! For a file mapping on persistent memory (a DAX file system), a store reaches the
//! persistence domain once its cache lines are written back: [`Mapping::persist`]
//! issues `clwb` (write back, keep the line cached) if the CPU has it, else
//! `clflushopt`, else `clflush`, for every 64-byte line of the range, and
//! [`Mapping::fence`] (`sfence`) orders those write-backs before any later store. On
//! other architectures `persist` calls `msync(MS_SYNC)` on the pages of the range.
//! The mapping is made with `MAP_SHARED_VALIDATE | MAP_SYNC` when the file system
//! supports it (DAX: file metadata is then durable too, so cache-line flushes suffice);
//! elsewhere (tmpfs, a page-cache file system) with plain `MAP_SHARED`, where a flush
//! only emulates persistence — [`Mapping::is_map_sync`] tells which.

use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::Path;
use std::ptr::NonNull;
use std::sync::OnceLock;

use tarn_common::{Error, Result};

/// Bytes in a CPU cache line: the unit of cache write-back.
pub const CACHE_LINE_BYTES: usize = 64;

/// A memory mapping written and read by position. See the module documentation.
pub struct Mapping {
    ptr: NonNull<u8>,
    len: usize,
    map_sync: bool,
}

// SAFETY: the mapping is plain memory owned by this value until `Drop` unmaps it; all
// access goes through raw-pointer copies bounded by `len` (see the module docs for how
// concurrent access to the same bytes is coordinated by callers), so moving or sharing
// the handle between threads is sound.
unsafe impl Send for Mapping {}
// SAFETY: as for `Send`: `&Mapping` only offers bounded positional copies.
unsafe impl Sync for Mapping {}

impl Mapping {
    /// A zero-filled private anonymous mapping of `len` bytes (the log buffer).
    pub fn anonymous(len: usize) -> Result<Mapping> {
        assert!(len > 0, "empty mapping");
        // SAFETY: an anonymous mapping with no address hint touches no existing memory;
        // the result is checked against MAP_FAILED before use.
        let raw = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if raw == libc::MAP_FAILED {
            let source = std::io::Error::last_os_error();
            return Err(Error::io("mmap", "anonymous log buffer", source));
        }
        Ok(Mapping {
            ptr: NonNull::new(raw.cast::<u8>()).expect("mmap returned null"),
            len,
            map_sync: false,
        })
    }

    /// Maps the first `len` bytes of `file` (open read-write, at least `len` long)
    /// shared, with `MAP_SYNC` where the file system allows it.
    pub fn shared_file(file: &File, path: &Path, len: usize) -> Result<Mapping> {
        assert!(len > 0, "empty mapping");
        let fd = file.as_raw_fd();
        let map = |flags: libc::c_int| {
            // SAFETY: maps `len` bytes of an open file at offset 0 with no address hint,
            // so no existing memory is affected; the caller checks MAP_FAILED.
            unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    len,
                    libc::PROT_READ | libc::PROT_WRITE,
                    flags,
                    fd,
                    0,
                )
            }
        };
        let mut map_sync = true;
        let mut raw = map(libc::MAP_SHARED_VALIDATE | libc::MAP_SYNC);
        if raw == libc::MAP_FAILED {
            map_sync = false;
            raw = map(libc::MAP_SHARED);
        }
        if raw == libc::MAP_FAILED {
            let source = std::io::Error::last_os_error();
            return Err(Error::io("mmap", path, source));
        }
        Ok(Mapping {
            ptr: NonNull::new(raw.cast::<u8>()).expect("mmap returned null"),
            len,
            map_sync,
        })
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// True if the mapping was made with `MAP_SYNC` (a DAX file): flushed cache lines
    /// are durable with no `msync`.
    pub fn is_map_sync(&self) -> bool {
        self.map_sync
    }

    fn check_range(&self, offset: usize, len: usize) {
        assert!(
            offset <= self.len && len <= self.len - offset,
            "mapping access {offset}+{len} beyond {} bytes",
            self.len
        );
    }

    /// Copies `bytes` into the mapping at `offset`. Panics if the range is outside it.
    #[inline]
    pub fn write_at(&self, offset: usize, bytes: &[u8]) {
        self.check_range(offset, bytes.len());
        // SAFETY: the range is inside the mapping (checked above), `bytes` is a
        // separate Rust slice so the ranges cannot overlap, and the mapping is only
        // accessed through raw pointers (module docs).
        unsafe {
            std::ptr::copy_nonoverlapping(
                bytes.as_ptr(),
                self.ptr.as_ptr().add(offset),
                bytes.len(),
            );
        }
    }

    /// Copies bytes at `offset` of the mapping into `out`. Panics if out of range.
    #[inline]
    pub fn read_at(&self, offset: usize, out: &mut [u8]) {
        self.check_range(offset, out.len());
        // SAFETY: as in `write_at`, with the copy in the other direction.
        unsafe {
            std::ptr::copy_nonoverlapping(
                self.ptr.as_ptr().add(offset),
                out.as_mut_ptr(),
                out.len(),
            );
        }
    }

    /// Writes the cache lines holding `[offset, offset + len)` back to memory (x86_64),
    /// or `msync`s their pages (elsewhere). Call [`Mapping::fence`] after the last
    /// `persist` of a batch before relying on durability.
    pub fn persist(&self, offset: usize, len: usize) {
        self.check_range(offset, len);
        if len == 0 {
            return;
        }
        persist_range(self.ptr.as_ptr(), offset, len);
    }

    /// Orders every earlier cache-line write-back before any later store.
    #[inline]
    pub fn fence() {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `sfence` has no operands and only orders stores; SSE is part of the
        // x86_64 baseline.
        unsafe {
            std::arch::x86_64::_mm_sfence();
        }
    }

    /// Which instruction `persist` uses on this machine, for the startup log.
    pub fn flush_method() -> &'static str {
        match flush_kind() {
            FlushKind::Clwb => "clwb",
            FlushKind::Clflushopt => "clflushopt",
            FlushKind::Clflush => "clflush",
            FlushKind::Msync => "msync",
        }
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: `ptr`/`len` are exactly what mmap returned and nothing refers to the
        // mapping after drop (there are no references into it, only this handle).
        unsafe {
            libc::munmap(self.ptr.as_ptr().cast(), self.len);
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum FlushKind {
    Clwb,
    Clflushopt,
    Clflush,
    /// Used off x86_64 only.
    #[cfg_attr(target_arch = "x86_64", allow(dead_code))]
    Msync,
}

fn flush_kind() -> FlushKind {
    static KIND: OnceLock<FlushKind> = OnceLock::new();
    *KIND.get_or_init(detect_flush_kind)
}

#[cfg(target_arch = "x86_64")]
fn detect_flush_kind() -> FlushKind {
    // CPUID leaf 7, sub-leaf 0: EBX bit 23 is CLFLUSHOPT, bit 24 is CLWB.
    #[allow(unused_unsafe)]
    // SAFETY: `cpuid` is available on every x86_64 CPU and only reads identification
    // registers; leaf 7 exists on every CPU that has either instruction (and returns
    // zeros, meaning "neither", on older ones).
    let leaf = unsafe { std::arch::x86_64::__cpuid_count(7, 0) };
    if leaf.ebx & (1 << 24) != 0 {
        FlushKind::Clwb
    } else if leaf.ebx & (1 << 23) != 0 {
        FlushKind::Clflushopt
    } else {
        FlushKind::Clflush
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn detect_flush_kind() -> FlushKind {
    FlushKind::Msync
}

#[cfg(target_arch = "x86_64")]
fn persist_range(base: *mut u8, offset: usize, len: usize) {
    let kind = flush_kind();
    let first = (base as usize + offset) & !(CACHE_LINE_BYTES - 1);
    let end = base as usize + offset + len;
    let mut line = first;
    while line < end {
        let p = line as *const u8;
        // Why the flushes below are sound: `p` is the start of a cache line holding at
        // least one byte of the checked range inside the live mapping; write-back and
        // flush instructions do not change memory contents, and each was detected by
        // CPUID (clflush is baseline on x86_64).
        match kind {
            FlushKind::Clwb => {
                // SAFETY: see above.
                unsafe {
                    std::arch::asm!("clwb [{0}]", in(reg) p, options(nostack, preserves_flags));
                }
            }
            FlushKind::Clflushopt => {
                // SAFETY: see above.
                unsafe {
                    std::arch::asm!("clflushopt [{0}]", in(reg) p, options(nostack, preserves_flags));
                }
            }
            FlushKind::Clflush | FlushKind::Msync => {
                // SAFETY: see above.
                unsafe {
                    std::arch::x86_64::_mm_clflush(p);
                }
            }
        }
        line += CACHE_LINE_BYTES;
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn persist_range(base: *mut u8, offset: usize, len: usize) {
    // SAFETY: `sysconf` only reads a system constant.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(4096) as usize;
    let start = (base as usize + offset) & !(page - 1);
    let end = base as usize + offset + len;
    // SAFETY: the page-aligned range covers only pages of the live mapping (the
    // mapping itself starts page-aligned), and msync does not change memory.
    unsafe {
        libc::msync(start as *mut libc::c_void, end - start, libc::MS_SYNC);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn anonymous_write_read_persist() {
        let map = Mapping::anonymous(1 << 16).expect("mmap");
        map.write_at(100, b"hello");
        let mut out = [0u8; 5];
        map.read_at(100, &mut out);
        assert_eq!(&out, b"hello");
        map.persist(90, 200);
        Mapping::fence();
        assert!(!Mapping::flush_method().is_empty());
    }

    #[test]
    fn file_mapping_reaches_the_file() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("m");
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&path)
            .expect("open");
        file.set_len(8192).expect("set_len");
        let map = Mapping::shared_file(&file, &path, 8192).expect("mmap");
        map.write_at(4096, b"xyz");
        map.persist(4096, 3);
        Mapping::fence();
        drop(map);
        let bytes = std::fs::read(&path).expect("read");
        assert_eq!(&bytes[4096..4099], b"xyz");
    }
}
