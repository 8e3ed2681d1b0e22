//! The doublewrite buffer: a page torn on disk after a flush is repaired at startup
//! from its copy; without doublewrite the same tear is a checksum error naming the file
//! and the page; a torn doublewrite slot is ignored; repair is idempotent. Also the
//! pool's `oldest_dirty_lsn` and eviction's `flush_to_nowait`.

mod common;

use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use common::*;
use tarn_buffer::doublewrite::DOUBLEWRITE_FILE_NAME;
use tarn_buffer::{LogFlush, NoLog, RepairReason, repair_torn_pages};
use tarn_common::settings::IoMethod;
use tarn_common::{Error, FileId, Lsn, PageNo, Result};
use tarn_io::{AlignedBuf, page};

const METHODS: [IoMethod; 3] = [IoMethod::Buffered, IoMethod::Direct, IoMethod::Uring];

/// Overwrites bytes `from .. PAGE_SIZE` of page `page_no` of `path` with garbage and
/// makes it durable: the second half of a page write that never happened.
fn tear(path: &Path, page_no: u32, from: usize) {
    let file = std::fs::OpenOptions::new().write(true).open(path).unwrap();
    let garbage = vec![0xa5u8; PAGE_SIZE as usize - from];
    let offset = u64::from(page_no) * u64::from(PAGE_SIZE) + from as u64;
    file.write_all_at(&garbage, offset).unwrap();
    file.sync_all().unwrap();
}

/// Writes version `version` of pages `pages` through a pool and flushes it; page
/// `page_no` gets LSN `lsn_base + page_no`.
fn write_through_pool(fixture: &Fixture, doublewrite: bool, pages: &[u32], version: u64) {
    let pool = fixture.pool_with(16, 1, |c| c.doublewrite = doublewrite, Arc::new(NoLog));
    for &page_no in pages {
        let mut guard = pool.fetch_exclusive(page_id(page_no)).unwrap();
        set_version(&mut guard, page_no, version);
        guard.mark_dirty(Lsn(version * 1000 + u64::from(page_no)));
    }
    pool.flush_all().unwrap();
    let stats = pool.stats();
    if doublewrite {
        assert_eq!(stats.doublewrite_pages, pages.len() as u64, "{stats:?}");
        assert!(stats.doublewrite_syncs >= 1, "{stats:?}");
    } else {
        assert_eq!((stats.doublewrite_pages, stats.doublewrite_syncs), (0, 0));
    }
}

fn data_file_path(fixture: &Fixture) -> std::path::PathBuf {
    fixture.datadir().file_path(FILE)
}

#[test]
fn a_page_torn_after_a_doublewrite_flush_is_repaired_and_repair_is_idempotent() {
    for method in METHODS {
        let fixture = Fixture::new(8, method);
        write_through_pool(&fixture, true, &[1, 3, 5], 1);
        tear(&data_file_path(&fixture), 3, PAGE_SIZE as usize / 2);

        let datadir = fixture.datadir();
        let report = repair_torn_pages(&datadir).unwrap();
        assert_eq!(report.pages_checked, 3, "{method}: {report:?}");
        assert_eq!(report.slots_torn, 0);
        assert_eq!(report.pages_repaired.len(), 1, "{method}: {report:?}");
        let repaired = &report.pages_repaired[0];
        assert_eq!(repaired.page_id, page_id(3));
        assert_eq!(repaired.file, data_file_path(&fixture));
        assert_eq!(repaired.reason, RepairReason::ChecksumMismatch);
        assert_eq!(repaired.lsn, Lsn(1003));
        drop(datadir);
        for page_no in 0..8 {
            let expected = if [1, 3, 5].contains(&page_no) { 1 } else { 0 };
            assert_eq!(
                page_version(&fixture.read_from_disk(page_no)),
                (page_no, expected)
            );
        }

        let again = repair_torn_pages(&fixture.datadir()).unwrap();
        assert_eq!(again.pages_checked, 3);
        assert!(again.pages_repaired.is_empty(), "{method}: {again:?}");
    }
}

#[test]
fn without_doublewrite_the_same_tear_is_a_checksum_error_naming_file_and_page() {
    let fixture = Fixture::new(8, IoMethod::Direct);
    write_through_pool(&fixture, false, &[1, 3, 5], 1);
    assert!(!fixture.dir.path().join(DOUBLEWRITE_FILE_NAME).exists());
    tear(&data_file_path(&fixture), 3, PAGE_SIZE as usize / 2);

    let report = repair_torn_pages(&fixture.datadir()).unwrap();
    assert_eq!(
        report,
        Default::default(),
        "no doublewrite file, nothing to do"
    );
    let pool = fixture.pool_with(16, 1, |c| c.doublewrite = false, Arc::new(NoLog));
    let error = pool.fetch_shared(page_id(3)).err().expect("a torn page");
    assert!(
        matches!(error, Error::PageChecksumMismatch { page_id: p, .. } if p == page_id(3)),
        "{error}"
    );
    let message = error.to_string();
    assert!(
        message.contains(&data_file_path(&fixture).display().to_string())
            && message.contains(&page_id(3).to_string()),
        "{message}"
    );
    assert_eq!(
        page_version(&pool.fetch_shared(page_id(1)).unwrap()),
        (1, 1)
    );
}

/// The slot of the doublewrite file holding `page_no` of the test file.
fn slot_offset_of(dw_path: &Path, page_no: u32) -> u64 {
    let bytes = std::fs::read(dw_path).unwrap();
    let header_bytes = tarn_io::buf::PAGE_BUFFER_ALIGN_BYTES;
    (0..(bytes.len() - header_bytes) / PAGE_SIZE as usize)
        .map(|slot| header_bytes + slot * PAGE_SIZE as usize)
        .find(|&at| {
            let image = &bytes[at..at + PAGE_SIZE as usize];
            page::verify(image, page_id(page_no), dw_path).is_ok()
                && page::header_page_id(image) == page_id(page_no)
        })
        .unwrap_or_else(|| panic!("no slot holds page {page_no}")) as u64
}

#[test]
fn a_torn_doublewrite_slot_is_ignored() {
    let fixture = Fixture::new(8, IoMethod::Buffered);
    write_through_pool(&fixture, true, &[2, 4], 1);
    let dw_path = fixture.dir.path().join(DOUBLEWRITE_FILE_NAME);
    let slot = slot_offset_of(&dw_path, 4);
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(&dw_path)
        .unwrap();
    file.write_all_at(&[0x5au8; 1024], slot + 1024).unwrap();
    file.sync_all().unwrap();

    let report = repair_torn_pages(&fixture.datadir()).unwrap();
    assert_eq!(report.slots_torn, 1, "{report:?}");
    assert_eq!(report.pages_checked, 1, "only page 2's slot is valid");
    assert!(report.pages_repaired.is_empty(), "{report:?}");
    assert_eq!(page_version(&fixture.read_from_disk(4)), (4, 1));
}

#[test]
fn a_copy_newer_than_its_intact_page_is_written_and_missing_files_are_skipped() {
    let fixture = Fixture::new(8, IoMethod::Buffered);
    let dropped = FileId(9);
    // One batch: page 6 of the test file, and a page of a file dropped afterwards.
    let pool = fixture.pool(16, 1);
    {
        let mut guard = pool.fetch_exclusive(page_id(6)).unwrap();
        set_version(&mut guard, 6, 1);
        guard.mark_dirty(Lsn(1006));
        let mut guard = pool
            .create_page(page_id_in(dropped, 0), tarn_io::PageType::RAW)
            .unwrap();
        guard.mark_dirty(Lsn(77));
    }
    pool.flush_all().unwrap();
    assert_eq!(pool.stats().doublewrite_pages, 2);
    pool.discard_file(dropped).unwrap();
    drop(pool);
    // As if the crash came after the doublewrite sync and before the in-place write:
    // the page in place is the old version, intact.
    let datadir = fixture.datadir();
    let mut old = AlignedBuf::zeroed(PAGE_SIZE as usize);
    format_page(&mut old, 6, 0);
    datadir
        .file(FILE)
        .unwrap()
        .write_page(PageNo(6), &mut old)
        .unwrap();
    datadir.remove_file(dropped).unwrap();
    drop(datadir);

    let report = repair_torn_pages(&fixture.datadir()).unwrap();
    assert_eq!(report.pages_skipped_missing_file, 1, "{report:?}");
    let repaired: Vec<_> = report
        .pages_repaired
        .iter()
        .map(|r| (r.page_id, r.reason))
        .collect();
    assert_eq!(
        repaired,
        vec![(page_id(6), RepairReason::Older { in_place: Lsn(0) })]
    );
    assert_eq!(page_version(&fixture.read_from_disk(6)), (6, 1));
}

fn page_id_in(file: FileId, page_no: u32) -> tarn_common::PageId {
    tarn_common::PageId::new(file, PageNo(page_no))
}

#[test]
fn oldest_dirty_lsn_is_the_smallest_unwritten_change() {
    let fixture = Fixture::new(8, IoMethod::Buffered);
    let pool = fixture.pool(16, 2);
    assert_eq!(pool.oldest_dirty_lsn(), None);
    for (page_no, lsn) in [(1, 50), (2, 20), (3, 30)] {
        let mut guard = pool.fetch_exclusive(page_id(page_no)).unwrap();
        guard.mark_dirty(Lsn(lsn));
    }
    // A later change to a dirty page keeps its oldest change.
    pool.fetch_exclusive(page_id(2))
        .unwrap()
        .mark_dirty(Lsn(90));
    assert_eq!(pool.oldest_dirty_lsn(), Some(Lsn(20)));
    pool.flush_up_to(Lsn(25)).unwrap();
    assert_eq!(pool.oldest_dirty_lsn(), Some(Lsn(30)));
    pool.flush_all().unwrap();
    assert_eq!(pool.oldest_dirty_lsn(), None);
}

/// A log that refuses `refusals` non-waiting flushes before it accepts.
struct ReluctantLog {
    refusals_left: AtomicU64,
    refused: AtomicU64,
}

impl LogFlush for ReluctantLog {
    fn flush_to(&self, _lsn: Lsn) -> Result<()> {
        Ok(())
    }

    fn flush_to_nowait(&self, _lsn: Lsn) -> Result<bool> {
        let refuse = self
            .refusals_left
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
            .is_ok();
        if refuse {
            self.refused.fetch_add(1, Ordering::SeqCst);
        }
        Ok(!refuse)
    }
}

#[test]
fn eviction_skips_a_victim_whose_log_cannot_be_flushed_without_waiting() {
    let fixture = Fixture::new(40, IoMethod::Buffered);
    let log = Arc::new(ReluctantLog {
        refusals_left: AtomicU64::new(0),
        refused: AtomicU64::new(0),
    });
    let pool = fixture.pool_with(16, 1, |c| c.free_target_pct = 0, log.clone());
    // Fill every frame with a dirty page.
    let mut page_no = 0;
    while pool.stats().free_frames > 0 {
        pool.fetch_exclusive(page_id(page_no))
            .unwrap()
            .mark_dirty(Lsn(100 + u64::from(page_no)));
        page_no += 1;
    }
    let writes_before = pool.stats().page_writes;
    log.refusals_left.store(40, Ordering::SeqCst);
    let guard = pool.fetch_shared(page_id(page_no)).unwrap();
    assert_eq!(page_version(&guard), (page_no, 0));
    drop(guard);
    assert_eq!(log.refused.load(Ordering::SeqCst), 40);
    assert!(pool.stats().page_writes > writes_before);
    pool.check_invariants().unwrap();
}
