//! The doublewrite buffer: torn-page repair, as InnoDB does it.
//!
//! A page is larger than what the device writes atomically (a 512-byte or 4 KiB
//! sector), so a crash in the middle of writing a page in place can leave it *torn*:
//! part new, part old. Its checksum then catches the damage, but the redo log cannot
//! repair it: redo records describe changes to a page, and applying them needs an
//! intact page to start from. So before the pool writes pages in place it writes
//! complete, sealed copies of them to a separate file, `doublewrite.tdw`, in one
//! sequential write, and syncs that file. A crash can then tear at most one of the two
//! copies of a page, and [`repair_torn_pages`], run at startup before anything reads
//! pages, puts back the intact one.
//!
//! # Why not PostgreSQL's full-page images
//!
//! PostgreSQL solves the same problem in the log: the first change to a page after
//! each checkpoint logs the whole page (a full-page image), and recovery starts from
//! that image. That doubles (or more) the log volume right after every checkpoint,
//! puts those page-sized records on the commit path (a commit waits for its log to be
//! durable), makes frequent checkpoints expensive, and lengthens recovery, which must
//! read the images back. The doublewrite buffer costs one extra sequential write and
//! sync per flush batch instead, paid by the flusher (or an eviction) off the commit
//! path, and leaves the log as small as the changes themselves.
//!
//! # The write path ([`Doublewrite::begin`], [`DoublewriteBatch::finish`])
//!
//! 1. The pool seals each page copy (`page::seal`: page id and checksum), so every copy
//!    in the doublewrite file verifies on its own and names its page.
//! 2. [`Doublewrite::begin`] takes a free slot group, writes the copies into its slots
//!    with one `pwrite`, and `fdatasync`s the file.
//! 3. The pool writes the pages in place, as it does without doublewrite.
//! 4. [`DoublewriteBatch::finish`] syncs the data files written and only then frees
//!    the slot group for the next batch.
//!
//! # Invariants
//! 1. A page's doublewrite copy is durable before its in-place write starts (the
//!    `fdatasync` of step 2 returns before `begin` does).
//! 2. A slot is not overwritten until the in-place write of the page it holds is
//!    durable (step 4): otherwise a crash could tear the in-place page after its only
//!    intact copy was gone.
//! 3. Hence after a crash, for every page, the in-place copy is intact or a slot holds
//!    an intact copy at least as new; a torn slot means its in-place write never
//!    started, so that page is intact in place.
//! 4. Repair writes a slot's copy in place only if the in-place page fails
//!    verification (checksum, never written, past the end of the file, wrong place)
//!    or is older (lower LSN); a copy newer than its page in place is safe to apply,
//!    because the log was made durable up to the page's LSN before the copy was
//!    written (the WAL rule applies before step 2).
//! 5. Data file ids are never reused (the catalog's `next_file_id` only grows), so a
//!    slot naming a file always belongs to that file; slots naming a file that no
//!    longer exists are skipped.
//!
//! # File format (`doublewrite.tdw`, little-endian)
//!
//! ```text
//! offset                     size        field
//!      0                        8        magic "TARNDWB1"
//!      8                        4        format version (1)
//!     12                        4        page size in bytes
//!     16                        4        slot groups (G)
//!     20                        4        slots per group (S)
//!     24                        4        crc32c of bytes 0 .. 24
//!     28                     4068        zero
//!   4096 + i * page_size   page_size     slot i (0 <= i < G * S): a sealed page image,
//!                                        or all zero if never used
//! ```
//!
//! Group `g` owns slots `g * S .. (g + 1) * S`; a batch fills its group's slots from
//! the first, so slots past the batch keep images from older batches (still valid, and
//! harmless: repair skips a copy older than the page in place).

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use parking_lot::{Mutex, MutexGuard};

use tarn_common::limits::{DOUBLEWRITE_BATCH_PAGES, DOUBLEWRITE_SLOT_GROUPS};
use tarn_common::{Error, Lsn, PageId, Result};
use tarn_io::buf::PAGE_BUFFER_ALIGN_BYTES;
use tarn_io::{AlignedBuf, DataDir, PageFile, PageStatus, SyncKind, fault, page};

pub const DOUBLEWRITE_FILE_NAME: &str = "doublewrite.tdw";

const MAGIC: &[u8; 8] = b"TARNDWB1";
const FORMAT_VERSION: u32 = 1;
/// The header's size: one aligned block, so slots start aligned.
const HEADER_BYTES: usize = PAGE_BUFFER_ALIGN_BYTES;
/// Bytes of the header the checksum covers; the checksum follows them.
const HEADER_CHECKED_BYTES: usize = 24;

/// The shape of the slot area, as stored in the header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Geometry {
    page_size_bytes: u32,
    slot_groups: u32,
    slots_per_group: u32,
}

impl Geometry {
    fn current(page_size_bytes: usize) -> Geometry {
        Geometry {
            page_size_bytes: page_size_bytes as u32,
            slot_groups: DOUBLEWRITE_SLOT_GROUPS as u32,
            slots_per_group: DOUBLEWRITE_BATCH_PAGES as u32,
        }
    }

    fn slot_count(&self) -> usize {
        (self.slot_groups * self.slots_per_group) as usize
    }

    fn slot_offset_bytes(&self, slot: usize) -> u64 {
        HEADER_BYTES as u64 + slot as u64 * u64::from(self.page_size_bytes)
    }

    fn file_length_bytes(&self) -> u64 {
        self.slot_offset_bytes(self.slot_count())
    }

    fn encode(&self) -> Vec<u8> {
        let mut header = vec![0u8; HEADER_BYTES];
        header[0..8].copy_from_slice(MAGIC);
        header[8..12].copy_from_slice(&FORMAT_VERSION.to_le_bytes());
        header[12..16].copy_from_slice(&self.page_size_bytes.to_le_bytes());
        header[16..20].copy_from_slice(&self.slot_groups.to_le_bytes());
        header[20..24].copy_from_slice(&self.slots_per_group.to_le_bytes());
        let checksum = crc32c::crc32c(&header[..HEADER_CHECKED_BYTES]);
        header[24..28].copy_from_slice(&checksum.to_le_bytes());
        header
    }

    /// The geometry a header stores; `Ok(None)` for a header never written (a crash
    /// while the file was being created, before anything used it).
    fn decode(header: &[u8], path: &Path) -> Result<Option<Geometry>> {
        if header.len() < HEADER_BYTES || header.iter().all(|&b| b == 0) {
            return Ok(None);
        }
        let bad = |reason: String| Error::DataDir {
            path: path.to_path_buf(),
            reason: format!("{DOUBLEWRITE_FILE_NAME}: {reason}"),
        };
        let word = |at: usize| u32::from_le_bytes(header[at..at + 4].try_into().expect("4 bytes"));
        if &header[0..8] != MAGIC {
            return Err(bad("not a Tarn doublewrite file".into()));
        }
        let (stored, computed) = (word(24), crc32c::crc32c(&header[..HEADER_CHECKED_BYTES]));
        if stored != computed {
            return Err(bad(format!(
                "the header is corrupt: crc32c stored {stored:#010x}, computed {computed:#010x}"
            )));
        }
        if word(8) != FORMAT_VERSION {
            return Err(bad(format!(
                "format version {} is not supported (this build reads version {FORMAT_VERSION})",
                word(8)
            )));
        }
        let geometry = Geometry {
            page_size_bytes: word(12),
            slot_groups: word(16),
            slots_per_group: word(20),
        };
        if geometry.page_size_bytes == 0 || geometry.slot_count() == 0 {
            return Err(bad(format!("the header describes no slots: {geometry:?}")));
        }
        Ok(Some(geometry))
    }
}

/// The pool's doublewrite file, open for batches.
pub(crate) struct Doublewrite {
    file: File,
    path: PathBuf,
    geometry: Geometry,
    /// One staging buffer per slot group; holding a group's lock reserves its slots.
    groups: Box<[Mutex<Vec<u8>>]>,
    pages_written: AtomicU64,
    syncs: AtomicU64,
}

/// A batch whose copies are durable in the doublewrite file; its slot group stays
/// reserved until [`DoublewriteBatch::finish`] (or until it is dropped, after a failed
/// in-place write: see [`Doublewrite::begin`]).
pub(crate) struct DoublewriteBatch<'a> {
    /// Held until the batch is finished: the reservation of its slots.
    _group: MutexGuard<'a, Vec<u8>>,
}

impl Doublewrite {
    /// Opens `doublewrite.tdw` in `datadir`, creating it (or recreating it, if its
    /// shape differs from this build's) with an empty slot area. Run
    /// [`repair_torn_pages`] first: recreating the file discards its slots.
    pub(crate) fn open(datadir: &DataDir) -> Result<Doublewrite> {
        let path = datadir.path().join(DOUBLEWRITE_FILE_NAME);
        let geometry = Geometry::current(datadir.page_size_bytes());
        let existed = path.exists();
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(|source| Error::io("open", &path, source))?;
        let mut header = vec![0u8; HEADER_BYTES];
        let stored = match file.read_exact_at(&mut header, 0) {
            Ok(()) => Geometry::decode(&header, &path)?,
            Err(error) if error.kind() == std::io::ErrorKind::UnexpectedEof => None,
            Err(source) => return Err(Error::io("read", &path, source)),
        };
        let doublewrite = Doublewrite {
            file,
            path,
            geometry,
            groups: (0..geometry.slot_groups)
                .map(|_| Mutex::new(Vec::new()))
                .collect(),
            pages_written: AtomicU64::new(0),
            syncs: AtomicU64::new(0),
        };
        if stored != Some(geometry) {
            doublewrite.create_slot_area()?;
            if !existed {
                sync_directory(datadir.path())?;
            }
        }
        Ok(doublewrite)
    }

    /// Writes the header and sizes the file for every slot, all zero.
    fn create_slot_area(&self) -> Result<()> {
        let path = &self.path;
        self.file
            .set_len(0)
            .and_then(|()| self.file.set_len(self.geometry.file_length_bytes()))
            .map_err(|source| Error::io("size", path, source))?;
        let header = self.geometry.encode();
        fault::check_write(path, self.file.as_raw_fd(), 0, header.len())?;
        self.file
            .write_all_at(&header, 0)
            .map_err(|source| Error::io("write", path, source))?;
        self.sync()
    }

    /// The most pages one batch can hold.
    pub(crate) fn slots_per_group(&self) -> usize {
        self.geometry.slots_per_group as usize
    }

    pub(crate) fn pages_written(&self) -> u64 {
        self.pages_written.load(Ordering::Relaxed)
    }

    pub(crate) fn syncs(&self) -> u64 {
        self.syncs.load(Ordering::Relaxed)
    }

    fn sync(&self) -> Result<()> {
        fault::check_sync(&self.path)?;
        self.file
            .sync_data()
            .map_err(|source| Error::io("fsync", &self.path, source))?;
        fault::synced(&self.path);
        self.syncs.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    /// Makes sealed `pages` (at most [`Doublewrite::slots_per_group`], each a whole
    /// page) durable in one slot group: one sequential write and one sync. Blocks while
    /// every group is in use. On success the caller writes the pages in place and then
    /// calls [`DoublewriteBatch::finish`]; if an in-place write fails instead, dropping
    /// the batch frees the group (the page stays dirty in the pool and is written again,
    /// through a new batch).
    pub(crate) fn begin(&self, pages: &[&[u8]]) -> Result<DoublewriteBatch<'_>> {
        let page_size_bytes = self.geometry.page_size_bytes as usize;
        assert!(
            !pages.is_empty() && pages.len() <= self.slots_per_group(),
            "a doublewrite batch of {} pages (1 to {} allowed)",
            pages.len(),
            self.slots_per_group()
        );
        let (group_index, mut group) = self.take_group();
        group.clear();
        for image in pages {
            assert_eq!(
                image.len(),
                page_size_bytes,
                "doublewrite page of the wrong size"
            );
            debug_assert!(
                page::verify(image, page::header_page_id(image), &self.path)
                    .is_ok_and(|status| status == PageStatus::Valid),
                "doublewrite copies must be sealed"
            );
            group.extend_from_slice(image);
        }
        let offset_bytes = self
            .geometry
            .slot_offset_bytes(group_index * self.slots_per_group());
        fault::check_write(&self.path, self.file.as_raw_fd(), offset_bytes, group.len())?;
        self.file
            .write_all_at(&group, offset_bytes)
            .map_err(|source| Error::io("write", &self.path, source))?;
        self.sync()?;
        self.pages_written
            .fetch_add(pages.len() as u64, Ordering::Relaxed);
        Ok(DoublewriteBatch { _group: group })
    }

    /// A free slot group (the first whose lock is free), or waits for one chosen by
    /// thread so that waiters spread over the groups.
    fn take_group(&self) -> (usize, MutexGuard<'_, Vec<u8>>) {
        for (index, group) in self.groups.iter().enumerate() {
            if let Some(guard) = group.try_lock() {
                return (index, guard);
            }
        }
        let index = thread_hash() % self.groups.len();
        (index, self.groups[index].lock())
    }
}

impl DoublewriteBatch<'_> {
    /// Syncs the data files the batch's pages were written to, then frees the slot
    /// group (invariant 2). `files` may repeat a file; each is synced once.
    pub(crate) fn finish(self, files: &[Arc<PageFile>]) -> Result<()> {
        let mut synced: Vec<&Arc<PageFile>> = Vec::with_capacity(files.len());
        for file in files {
            if synced.iter().any(|done| Arc::ptr_eq(done, file)) {
                continue;
            }
            file.sync(SyncKind::Data)?;
            synced.push(file);
        }
        Ok(())
    }
}

fn thread_hash() -> usize {
    use std::hash::{BuildHasher, RandomState};
    thread_local! {
        static HASH: usize = RandomState::new().hash_one(std::thread::current().id()) as usize;
    }
    HASH.with(|hash| *hash)
}

fn sync_directory(path: &Path) -> Result<()> {
    File::open(path)
        .and_then(|dir| dir.sync_all())
        .map_err(|source| Error::io("fsync directory", path, source))
}

/// Why [`repair_torn_pages`] rewrote a page.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RepairReason {
    /// The page in place failed its checksum (torn).
    ChecksumMismatch,
    /// The page in place names another page (a misdirected write).
    Misplaced,
    /// The page in place is all zero: its first write never reached the disk.
    NeverWritten,
    /// The page lies beyond the end of its file: the write that grew it was lost.
    BeyondEndOfFile,
    /// The page in place is intact but older than its doublewrite copy: the crash came
    /// after the copy was durable and before the in-place write.
    Older { in_place: Lsn },
}

/// A page [`repair_torn_pages`] rewrote from its doublewrite copy.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RepairedPage {
    pub file: PathBuf,
    pub page_id: PageId,
    /// The LSN of the copy written in place.
    pub lsn: Lsn,
    pub reason: RepairReason,
}

/// What [`repair_torn_pages`] found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RepairReport {
    /// Slots read from the doublewrite file (0 if there is none).
    pub slots_read: usize,
    /// Slots never used.
    pub slots_empty: usize,
    /// Slots whose own checksum fails: their batch was torn, so its in-place writes
    /// never started (invariant 3) and they are skipped.
    pub slots_torn: usize,
    /// Distinct pages with a valid copy whose page in place was checked.
    pub pages_checked: usize,
    /// Pages with a valid copy whose data file no longer exists (skipped).
    pub pages_skipped_missing_file: usize,
    /// Pages written in place from their copy.
    pub pages_repaired: Vec<RepairedPage>,
}

/// Repairs torn pages from the doublewrite file of `datadir`. Run it at startup before
/// anything reads pages (before the pool is opened and before redo). For each page
/// with a valid copy (the newest, if several slots hold one), the page in place is
/// read; it is overwritten with the copy if it fails verification or is older
/// (invariant 4). Every file written is synced before this returns. Running it twice
/// repairs nothing the second time. Without a doublewrite file it reports nothing.
pub fn repair_torn_pages(datadir: &DataDir) -> Result<RepairReport> {
    let path = datadir.path().join(DOUBLEWRITE_FILE_NAME);
    let mut report = RepairReport::default();
    let copies = match read_slots(datadir, &path, &mut report)? {
        Some(copies) => copies,
        None => return Ok(report),
    };
    let mut written: Vec<Arc<PageFile>> = Vec::new();
    for (page_id, copy) in copies {
        let file_path = datadir.file_path(page_id.file_id);
        if !file_path.exists() {
            report.pages_skipped_missing_file += 1;
            continue;
        }
        report.pages_checked += 1;
        let file = datadir.file(page_id.file_id)?;
        let Some(reason) = needs_repair(&file, page_id, &copy)? else {
            continue;
        };
        let mut image = copy;
        file.write_page(page_id.page_no, &mut image)?;
        tracing::warn!(
            "repaired page {page_id} in '{}' from {DOUBLEWRITE_FILE_NAME} ({reason:?})",
            file_path.display()
        );
        report.pages_repaired.push(RepairedPage {
            file: file_path,
            page_id,
            lsn: page::page_lsn(&image),
            reason,
        });
        if !written.iter().any(|done| Arc::ptr_eq(done, &file)) {
            written.push(file);
        }
    }
    for file in &written {
        file.sync(SyncKind::Data)?;
    }
    Ok(report)
}

/// The valid copies in the doublewrite file at `path`, the newest per page; `None`
/// if there is no file (or it was never set up).
fn read_slots(
    datadir: &DataDir,
    path: &Path,
    report: &mut RepairReport,
) -> Result<Option<BTreeMap<PageId, AlignedBuf>>> {
    let file = match File::open(path) {
        Ok(file) => file,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => return Err(Error::io("open", path, source)),
    };
    let mut header = vec![0u8; HEADER_BYTES];
    let geometry = match file.read_exact_at(&mut header, 0) {
        Ok(()) => Geometry::decode(&header, path)?,
        Err(error) if error.kind() == std::io::ErrorKind::UnexpectedEof => None,
        Err(source) => return Err(Error::io("read", path, source)),
    };
    let Some(geometry) = geometry else {
        return Ok(None);
    };
    let page_size_bytes = datadir.page_size_bytes();
    if geometry.page_size_bytes as usize != page_size_bytes {
        return Err(Error::DataDir {
            path: path.to_path_buf(),
            reason: format!(
                "{DOUBLEWRITE_FILE_NAME} holds {}-byte pages, the data directory {page_size_bytes}-byte pages",
                geometry.page_size_bytes
            ),
        });
    }
    let mut copies: BTreeMap<PageId, AlignedBuf> = BTreeMap::new();
    for slot in 0..geometry.slot_count() {
        let mut image = AlignedBuf::zeroed(page_size_bytes);
        match file.read_exact_at(&mut image, geometry.slot_offset_bytes(slot)) {
            Ok(()) => {}
            // A file cut short (a crash while it was being sized) has no more slots.
            Err(error) if error.kind() == std::io::ErrorKind::UnexpectedEof => break,
            Err(source) => return Err(Error::io("read", path, source)),
        }
        report.slots_read += 1;
        let page_id = page::header_page_id(&image);
        match page::verify(&image, page_id, path) {
            Ok(PageStatus::Unwritten) => report.slots_empty += 1,
            Err(_) => report.slots_torn += 1,
            Ok(PageStatus::Valid) => {
                let newer = copies
                    .get(&page_id)
                    .is_none_or(|kept| page::page_lsn(kept) < page::page_lsn(&image));
                if newer {
                    copies.insert(page_id, image);
                }
            }
        }
    }
    Ok(Some(copies))
}

/// Whether the page in place must be replaced by `copy`, and why.
fn needs_repair(file: &PageFile, page_id: PageId, copy: &[u8]) -> Result<Option<RepairReason>> {
    if u64::from(page_id.page_no.0) >= file.page_count() {
        return Ok(Some(RepairReason::BeyondEndOfFile));
    }
    let mut in_place = AlignedBuf::zeroed(file.page_size_bytes());
    match file.read_page(page_id.page_no, &mut in_place) {
        Ok(PageStatus::Valid) => {
            let in_place_lsn = page::page_lsn(&in_place);
            Ok(
                (in_place_lsn < page::page_lsn(copy)).then_some(RepairReason::Older {
                    in_place: in_place_lsn,
                }),
            )
        }
        Ok(PageStatus::Unwritten) => Ok(Some(RepairReason::NeverWritten)),
        Err(Error::PageChecksumMismatch { .. }) => Ok(Some(RepairReason::ChecksumMismatch)),
        Err(Error::PageMisplaced { .. }) => Ok(Some(RepairReason::Misplaced)),
        Err(other) => Err(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_header_round_trips_and_damage_is_an_error_naming_the_file() {
        let geometry = Geometry::current(16 << 10);
        let mut header = geometry.encode();
        assert_eq!(header.len(), HEADER_BYTES);
        let path = Path::new("/data");
        assert_eq!(Geometry::decode(&header, path).unwrap(), Some(geometry));
        assert_eq!(
            Geometry::decode(&vec![0; HEADER_BYTES], path).unwrap(),
            None
        );
        header[13] ^= 1;
        let error = Geometry::decode(&header, path).unwrap_err().to_string();
        assert!(
            error.contains("corrupt") && error.contains(DOUBLEWRITE_FILE_NAME),
            "{error}"
        );
    }

    #[test]
    fn slots_follow_the_header_and_groups_are_contiguous() {
        let geometry = Geometry::current(4096);
        assert_eq!(geometry.slot_offset_bytes(0), HEADER_BYTES as u64);
        assert_eq!(
            geometry.file_length_bytes(),
            (HEADER_BYTES + DOUBLEWRITE_SLOT_GROUPS * DOUBLEWRITE_BATCH_PAGES * 4096) as u64
        );
        assert_eq!(geometry.slot_count() % DOUBLEWRITE_BATCH_PAGES, 0);
    }
}
