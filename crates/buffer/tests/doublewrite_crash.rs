//! Torn pages made by the fault layer's simulated power loss, not by hand: a flush
//! whose data-file sync fails leaves its in-place writes unsynced; the power loss puts
//! back what they overwrote and tears the newest. With doublewrite the startup repair
//! restores every page; without it the torn page is a checksum error.
//!
//! The fault plan is process-global, so the tests here take `SERIAL`, and this file is
//! its own test binary so that no other test's I/O is counted.

mod common;

use std::sync::{Arc, Mutex};

use common::*;
use tarn_buffer::{NoLog, repair_torn_pages};
use tarn_common::rng::test_seed;
use tarn_common::settings::IoMethod;
use tarn_common::{Error, Lsn, PageNo};
use tarn_io::AlignedBuf;
use tarn_io::fault::{self, FaultPlan};

static SERIAL: Mutex<()> = Mutex::new(());

const PAGES: [u32; 6] = [1, 2, 3, 4, 5, 6];

/// Dirties `PAGES` at version 1 and flushes with the `sync_to_fail`th sync failing,
/// then simulates a tearing power loss; returns the pages the loss tore (the newest
/// write always, the three before it each with probability one half).
fn flush_then_lose_power(fixture: &Fixture, doublewrite: bool, sync_to_fail: u64) -> Vec<u32> {
    let seed = test_seed("flush_then_lose_power");
    let pool = fixture.pool_with(32, 1, |c| c.doublewrite = doublewrite, Arc::new(NoLog));
    for page_no in PAGES {
        let mut guard = pool.fetch_exclusive(page_id(page_no)).unwrap();
        set_version(&mut guard, page_no, 1);
        guard.mark_dirty(Lsn(100 + u64::from(page_no)));
    }
    fault::arm(FaultPlan {
        fail_sync: Some(sync_to_fail),
        power_loss: true,
        ..FaultPlan::default()
    });
    let error = pool.flush_all().expect_err("the data file sync fails");
    assert!(error.to_string().contains("injected"), "{error}");
    let report = fault::power_loss(Some(seed)).unwrap();
    fault::disarm();
    drop(pool);
    assert_eq!(report.writes_undone, PAGES.len(), "{report:?}");
    assert!(!report.writes_torn.is_empty(), "the newest write is torn");
    let data_file = fixture.datadir().file_path(FILE);
    report
        .writes_torn
        .iter()
        .map(|(path, offset, _)| {
            assert_eq!(path, &data_file);
            (offset / u64::from(PAGE_SIZE)) as u32
        })
        .collect()
}

#[test]
fn a_power_loss_during_a_doublewrite_flush_is_repaired_at_startup() {
    let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    for method in [IoMethod::Buffered, IoMethod::Uring] {
        let fixture = Fixture::new(8, method);
        // Sync 1 is the doublewrite file's, sync 2 the data file's.
        let torn = flush_then_lose_power(&fixture, true, 2);
        let report = repair_torn_pages(&fixture.datadir()).unwrap();
        assert_eq!(report.pages_repaired.len(), PAGES.len(), "{report:?}");
        for page_no in torn {
            assert!(
                report
                    .pages_repaired
                    .iter()
                    .any(|r| r.page_id == page_id(page_no)
                        && r.reason == tarn_buffer::RepairReason::ChecksumMismatch),
                "page {page_no} was torn: {report:?}"
            );
        }
        for page_no in 0..8 {
            let expected = u64::from(PAGES.contains(&page_no));
            assert_eq!(
                page_version(&fixture.read_from_disk(page_no)),
                (page_no, expected)
            );
        }
    }
}

#[test]
fn without_doublewrite_a_power_loss_leaves_a_checksum_error() {
    let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let fixture = Fixture::new(8, IoMethod::Buffered);
    let torn = flush_then_lose_power(&fixture, false, 1);
    let datadir = fixture.datadir();
    let file = datadir.file(FILE).unwrap();
    let mut buf = AlignedBuf::zeroed(PAGE_SIZE as usize);
    for &page_no in &torn {
        let error = file.read_page(PageNo(page_no), &mut buf).unwrap_err();
        assert!(
            matches!(error, Error::PageChecksumMismatch { page_id: p, .. } if p == page_id(page_no)),
            "{error}"
        );
        assert!(
            error
                .to_string()
                .contains(&file.path().display().to_string())
        );
    }
    // The other pages lost their unsynced version 1 but are intact.
    for page_no in PAGES.iter().copied().filter(|p| !torn.contains(p)) {
        assert_eq!(page_version(&fixture.read_from_disk(page_no)), (page_no, 0));
    }
}
