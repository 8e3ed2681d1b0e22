//! One data file of pages, and synchronous page I/O on it.
//!
//! A [`PageFile`] is opened for one I/O path and keeps it: `buffered` opens it plainly,
//! `direct` and `uring` open it with `O_DIRECT`. Reads and writes are positional
//! (`pread`/`pwrite`, or an io_uring request with an explicit offset), so any number of
//! threads read and write one file at once with no lock in Tarn's code: S5 found the
//! file system's per-file writer lock to be a bottleneck, and Tarn does not rebuild one.
//! The only lock is taken when the file grows, once per extent.
//!
//! # Invariants
//! 1. The file's length is a whole number of extents ([`EXTENT_SIZE_BYTES`]), hence of
//!    pages; `page_count` never shrinks.
//! 2. Every page written went through [`page::seal`] immediately before the write call
//!    (for an asynchronous write, at its submission: the buffer is the request's own
//!    until it completes), and every page read goes through [`page::verify`]
//!    immediately after the read.
//! 3. A read of a page at or past `page_count` is an error, never a short read.
//! 4. Every write and sync first calls the fault layer's hook ([`fault::check_write`],
//!    [`fault::check_sync`]); a sync that succeeded reports it ([`fault::synced`]).

use std::fs::{File, OpenOptions};
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use tarn_common::latch::{CountedMutex, LatchStats};
use tarn_common::limits::{EXTENT_SIZE_BYTES, FILE_PAGES_MAX};
use tarn_common::settings::IoMethod;
use tarn_common::{Error, FileId, PageId, PageNo, Result};

use crate::buf::PAGE_BUFFER_ALIGN_BYTES;
use crate::fault;
use crate::page::{self, PageStatus};
use crate::uring;

/// Which durability a sync asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SyncKind {
    /// `fdatasync`: data and the metadata needed to read it back (such as the length).
    Data,
    /// `fsync`: data and all metadata.
    All,
}

pub struct PageFile {
    file: File,
    path: PathBuf,
    file_id: FileId,
    page_size_bytes: u32,
    method: IoMethod,
    page_count: AtomicU64,
    /// Serialises growth only; reads and writes never take it.
    grow_latch: CountedMutex<()>,
}

impl PageFile {
    /// Opens (or creates) `path` for `method`, which must be concrete (not `auto`).
    pub(crate) fn open(
        path: &Path,
        file_id: FileId,
        page_size_bytes: u32,
        method: IoMethod,
        grow_stats: Arc<LatchStats>,
    ) -> Result<PageFile> {
        assert_ne!(
            method,
            IoMethod::Auto,
            "open files with a resolved I/O method"
        );
        let mut options = OpenOptions::new();
        options.read(true).write(true).create(true);
        if method != IoMethod::Buffered {
            options.custom_flags(libc::O_DIRECT);
        }
        let file = options
            .open(path)
            .map_err(|source| match source.raw_os_error() {
                Some(libc::EINVAL) if method != IoMethod::Buffered => Error::IoPathUnavailable {
                    path: method.name(),
                    reason: format!(
                        "the file system holding '{}' does not support O_DIRECT",
                        path.display()
                    ),
                },
                _ => Error::io("open", path, source),
            })?;
        let length_bytes = file
            .metadata()
            .map_err(|source| Error::io("stat", path, source))?
            .len();
        Ok(PageFile {
            file,
            path: path.to_path_buf(),
            file_id,
            page_size_bytes,
            method,
            page_count: AtomicU64::new(length_bytes / u64::from(page_size_bytes)),
            grow_latch: CountedMutex::new((), grow_stats),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn file_id(&self) -> FileId {
        self.file_id
    }

    pub fn page_id(&self, page_no: PageNo) -> PageId {
        PageId::new(self.file_id, page_no)
    }

    pub fn page_size_bytes(&self) -> usize {
        self.page_size_bytes as usize
    }

    pub fn method(&self) -> IoMethod {
        self.method
    }

    /// Pages the file holds (allocated, written or not).
    pub fn page_count(&self) -> u64 {
        self.page_count.load(Ordering::Acquire)
    }

    pub(crate) fn raw_fd(&self) -> RawFd {
        self.file.as_raw_fd()
    }

    fn offset_bytes(&self, page_no: PageNo) -> u64 {
        u64::from(page_no.0) * u64::from(self.page_size_bytes)
    }

    /// Grows the file by whole extents until it holds at least `page_count` pages.
    pub fn ensure_page_count(&self, page_count: u64) -> Result<()> {
        if page_count <= self.page_count() {
            return Ok(());
        }
        if page_count > FILE_PAGES_MAX {
            return Err(Error::OutOfResources(format!(
                "'{}' would exceed {FILE_PAGES_MAX} pages",
                self.path.display()
            )));
        }
        let _grow = self.grow_latch.lock();
        let current = self.page_count();
        if page_count <= current {
            return Ok(());
        }
        let page_size = u64::from(self.page_size_bytes);
        let extent_pages = (EXTENT_SIZE_BYTES / page_size).max(1);
        let target = page_count.div_ceil(extent_pages) * extent_pages;
        let (start, length) = (current * page_size, (target - current) * page_size);
        // SAFETY: `fallocate` only reads its integer arguments; the fd is open.
        let rc = unsafe {
            libc::fallocate(
                self.raw_fd(),
                0,
                start as libc::off_t,
                length as libc::off_t,
            )
        };
        if rc != 0 {
            let source = std::io::Error::last_os_error();
            if source.raw_os_error() != Some(libc::EOPNOTSUPP) {
                return Err(Error::io("fallocate", &self.path, source));
            }
            // File systems without fallocate: extend the length (sparse).
            self.file
                .set_len(start + length)
                .map_err(|source| Error::io("extend", &self.path, source))?;
        }
        self.page_count.store(target, Ordering::Release);
        Ok(())
    }

    fn check_buffer(&self, buf: &[u8]) {
        assert_eq!(
            buf.len(),
            self.page_size_bytes(),
            "page buffer of the wrong size"
        );
        if self.method != IoMethod::Buffered {
            assert_eq!(
                buf.as_ptr() as usize % PAGE_BUFFER_ALIGN_BYTES,
                0,
                "O_DIRECT page buffer is not aligned"
            );
        }
    }

    pub(crate) fn check_in_range(&self, page_no: PageNo) -> Result<()> {
        let page_count = self.page_count();
        if u64::from(page_no.0) >= page_count {
            return Err(Error::PageOutOfRange {
                file: self.path.clone(),
                page_id: self.page_id(page_no),
                page_count,
            });
        }
        Ok(())
    }

    /// Reads and verifies one page into `buf` (page-sized; aligned for O_DIRECT paths).
    pub fn read_page(&self, page_no: PageNo, buf: &mut [u8]) -> Result<PageStatus> {
        self.check_buffer(buf);
        self.check_in_range(page_no)?;
        let offset = self.offset_bytes(page_no);
        let read = match self.method {
            IoMethod::Uring => {
                uring::sync_transfer(self.raw_fd(), false, buf.as_mut_ptr(), buf.len(), offset)
            }
            _ => self.file.read_exact_at(buf, offset),
        };
        read.map_err(|source| Error::io("read", &self.path, source))?;
        page::verify(buf, self.page_id(page_no), &self.path)
    }

    /// Seals (checksums) and writes one page from `buf`, growing the file if needed.
    pub fn write_page(&self, page_no: PageNo, buf: &mut [u8]) -> Result<()> {
        self.check_buffer(buf);
        self.ensure_page_count(u64::from(page_no.0) + 1)?;
        page::seal(buf, self.page_id(page_no));
        self.check_write_fault(page_no)?;
        self.write_sealed_page(page_no, buf)
    }

    /// The fault layer's hook for a write of page `page_no` ([`fault::check_write`]).
    pub(crate) fn check_write_fault(&self, page_no: PageNo) -> Result<()> {
        fault::check_write(
            &self.path,
            self.raw_fd(),
            self.offset_bytes(page_no),
            self.page_size_bytes(),
        )
    }

    /// Writes a page already sealed, in range, and past its fault hook (the I/O
    /// threads' half of an asynchronous write prepared by `IoRequest::prepare`).
    pub(crate) fn write_sealed_page(&self, page_no: PageNo, buf: &mut [u8]) -> Result<()> {
        self.check_buffer(buf);
        let offset = self.offset_bytes(page_no);
        let written = match self.method {
            IoMethod::Uring => {
                uring::sync_transfer(self.raw_fd(), true, buf.as_mut_ptr(), buf.len(), offset)
            }
            _ => self.file.write_all_at(buf, offset),
        };
        written.map_err(|source| Error::io("write", &self.path, source))
    }

    /// Makes every completed write durable.
    pub fn sync(&self, kind: SyncKind) -> Result<()> {
        fault::check_sync(&self.path)?;
        match kind {
            SyncKind::Data => self.file.sync_data(),
            SyncKind::All => self.file.sync_all(),
        }
        .map_err(|source| Error::io("fsync", &self.path, source))?;
        fault::synced(&self.path);
        Ok(())
    }

    /// Drops this file's pages from the OS page cache, so the next buffered reads are
    /// cold. Dirty cached pages are written first (as `posix_fadvise` requires).
    pub fn drop_os_cache(&self) -> Result<()> {
        self.sync(SyncKind::Data)?;
        // SAFETY: `posix_fadvise` only reads its integer arguments; the fd is open.
        let rc = unsafe { libc::posix_fadvise(self.raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
        if rc != 0 {
            return Err(Error::io(
                "posix_fadvise",
                &self.path,
                std::io::Error::from_raw_os_error(rc),
            ));
        }
        Ok(())
    }
}

/// The alignment `O_DIRECT` needs for buffers and offsets on the file system holding
/// `file`, from `statx(STATX_DIOALIGN)` (Linux 6.1+) or the block device's logical
/// block size in sysfs. `None` if neither source answers.
pub(crate) fn direct_io_alignment(file: &File) -> Option<(u32, u32)> {
    // SAFETY: `statx` is plain old data; all-zero is a valid value.
    let mut stx: libc::statx = unsafe { std::mem::zeroed() };
    let empty = c"";
    // SAFETY: the fd is open, the path is a valid C string, `stx` is writable.
    let rc = unsafe {
        libc::statx(
            file.as_raw_fd(),
            empty.as_ptr(),
            libc::AT_EMPTY_PATH,
            libc::STATX_DIOALIGN,
            &mut stx,
        )
    };
    if rc == 0 && stx.stx_mask & libc::STATX_DIOALIGN != 0 && stx.stx_dio_offset_align != 0 {
        return Some((stx.stx_dio_mem_align, stx.stx_dio_offset_align));
    }
    let metadata = file.metadata().ok()?;
    let dev = std::os::unix::fs::MetadataExt::dev(&metadata);
    let (major, minor) = (libc::major(dev), libc::minor(dev));
    for candidate in [
        format!("/sys/dev/block/{major}:{minor}/queue/logical_block_size"),
        format!("/sys/dev/block/{major}:{minor}/../queue/logical_block_size"),
    ] {
        let size = std::fs::read_to_string(candidate)
            .ok()
            .and_then(|t| t.trim().parse::<u32>().ok());
        if let Some(size) = size {
            return Some((size, size));
        }
    }
    None
}
