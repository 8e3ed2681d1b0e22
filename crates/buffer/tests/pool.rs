//! Buffer pool behaviour: model tests under eviction pressure, prefetch races, scan
//! resistance, write-back rules and errors.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use common::*;
use tarn_buffer::LogFlush;
use tarn_common::rng::{Rng, test_seed};
use tarn_common::settings::IoMethod;
use tarn_common::{Error, Lsn, Result};
use tarn_io::{PageType, page};

/// Many threads read, write, prefetch and hold pages in a pool of a few frames; every
/// read must match the model, and after a restart the disk must hold every write.
fn model_test(method: IoMethod, instances: u32) {
    let seed = test_seed(&format!("model_test_{method}_{instances}"));
    let pages = 120u32;
    let fixture = Fixture::new(pages, method);
    let pool = fixture.pool(16, instances);
    // The model: the version each page holds. Updated only under the page's X latch.
    let model: Arc<Vec<AtomicU64>> = Arc::new((0..pages).map(|_| AtomicU64::new(0)).collect());
    let lsn = AtomicU64::new(1);
    std::thread::scope(|scope| {
        for thread in 0..6u64 {
            let (pool, model, lsn) = (&pool, model.clone(), &lsn);
            scope.spawn(move || {
                let mut rng = Rng::new(seed ^ (thread * 0x9e37_79b9));
                for _ in 0..1500 {
                    let page_no = rng.below(u64::from(pages)) as u32;
                    match rng.below(10) {
                        0..=3 => {
                            let guard = pool.fetch_shared(page_id(page_no)).unwrap();
                            assert_eq!(
                                page_version(&guard),
                                (page_no, model[page_no as usize].load(Ordering::SeqCst))
                            );
                        }
                        4..=5 => {
                            let mut guard = pool.fetch_exclusive(page_id(page_no)).unwrap();
                            let (_, version) = page_version(&guard);
                            assert_eq!(version, model[page_no as usize].load(Ordering::SeqCst));
                            set_version(&mut guard, page_no, version + 1);
                            guard.mark_dirty(Lsn(lsn.fetch_add(1, Ordering::SeqCst)));
                            model[page_no as usize].store(version + 1, Ordering::SeqCst);
                        }
                        6..=7 => {
                            let (found, low, high) = pool
                                .read_optimistic(page_id(page_no), |view| {
                                    (
                                        view.read_u64_le(PAGE_NO_AT),
                                        view.read_u64_le(VERSION_AT),
                                        view.read_u64_le(VERSION_COPY_AT),
                                    )
                                })
                                .unwrap();
                            assert_eq!(
                                (found, low),
                                (u64::from(page_no), high),
                                "optimistic read returned a torn page"
                            );
                        }
                        8 => {
                            let batch: Vec<_> = (0..8)
                                .map(|_| page_id(rng.below(u64::from(pages)) as u32))
                                .collect();
                            pool.prefetch(&batch);
                        }
                        _ => {
                            // Hold one page while touching others: it must stay put.
                            let held = pool.fetch_shared(page_id(page_no)).unwrap();
                            for _ in 0..4 {
                                let other = rng.below(u64::from(pages)) as u32;
                                drop(pool.fetch_shared(page_id(other)).unwrap());
                            }
                            assert_eq!(page_version(&held).0, page_no);
                            assert_eq!(held.page_id(), page_id(page_no));
                        }
                    }
                }
            });
        }
    });
    pool.check_invariants().unwrap();
    let stats = pool.stats();
    assert!(
        stats.evictions > 0 && stats.page_writes > 0,
        "the test must evict and write back: {stats:?}"
    );
    pool.flush_all().unwrap();
    drop(pool);
    for page_no in 0..pages {
        let on_disk = fixture.read_from_disk(page_no);
        assert_eq!(
            page_version(&on_disk),
            (page_no, model[page_no as usize].load(Ordering::SeqCst)),
            "page {page_no} lost a write"
        );
    }
}

#[test]
fn model_test_buffered_one_instance() {
    model_test(IoMethod::Buffered, 1);
}

#[test]
fn model_test_direct_two_instances() {
    model_test(IoMethod::Direct, 2);
}

#[test]
fn model_test_uring_two_instances() {
    model_test(IoMethod::Uring, 2);
}

#[test]
fn prefetched_pages_are_read_once_even_when_fetched_at_once_by_many_threads() {
    let seed = test_seed("prefetch_fetch_race");
    for method in IoMethod::CONCRETE {
        let fixture = Fixture::new(512, method);
        for round in 0..4u64 {
            let pool = fixture.pool(128, 4);
            let mut rng = Rng::new(seed + round);
            let pages: Vec<u32> = (0..64).map(|_| rng.below(512) as u32).collect();
            let distinct: std::collections::HashSet<u32> = pages.iter().copied().collect();
            let ids: Vec<_> = pages.iter().map(|&p| page_id(p)).collect();
            let started = pool.prefetch(&ids);
            assert_eq!(started, distinct.len());
            std::thread::scope(|scope| {
                for _ in 0..4 {
                    scope.spawn(|| {
                        for &page_no in &pages {
                            assert_eq!(
                                page_version(&pool.fetch_shared(page_id(page_no)).unwrap()).0,
                                page_no
                            );
                        }
                    });
                }
            });
            let stats = pool.stats();
            assert_eq!(
                stats.page_reads,
                distinct.len() as u64,
                "{method}: a page was read twice: {stats:?}"
            );
            assert_eq!(stats.misses, 0, "{method}: {stats:?}");
            pool.check_invariants().unwrap();
        }
    }
}

#[test]
fn prefetching_cached_pages_reads_nothing_and_in_flight_prefetches_are_bounded() {
    let fixture = Fixture::new(400, IoMethod::Uring);
    let pool = fixture.pool_with(
        256,
        1,
        |c| c.prefetch_in_flight_max = 4,
        Arc::new(tarn_buffer::NoLog),
    );
    drop(pool.fetch_shared(page_id(7)).unwrap());
    assert_eq!(pool.prefetch(&[page_id(7)]), 0);
    assert_eq!(pool.stats().prefetch_cached, 1);
    assert_eq!(pool.stats().page_reads, 1);

    let many: Vec<_> = (100..300).map(page_id).collect();
    pool.prefetch(&many);
    pool.check_invariants().unwrap(); // waits for the prefetches in flight
    let stats = pool.stats();
    assert!(stats.prefetch_in_flight_peak <= 4, "{stats:?}");
    assert!(stats.prefetch_skipped > 0, "{stats:?}");
    // Prefetching past the end of the file is skipped, not an error.
    assert_eq!(pool.prefetch(&[page_id(10_000)]), 0);
}

#[test]
fn one_instance_and_many_instances_give_identical_results() {
    let seed = test_seed("instances_identical");
    type Versions = Vec<(u32, u64)>;
    let run = |instances: u32| -> (Versions, Versions) {
        let fixture = Fixture::new(300, IoMethod::Direct);
        let pool = fixture.pool(64 / u64::from(instances).min(4), instances);
        let mut rng = Rng::new(seed);
        let mut observed = Vec::new();
        for step in 0..3000u64 {
            let page_no = rng.below(300) as u32;
            if rng.percent(30) {
                let mut guard = pool.fetch_exclusive(page_id(page_no)).unwrap();
                let (_, version) = page_version(&guard);
                set_version(&mut guard, page_no, version + 1);
                guard.mark_dirty(Lsn(step + 1));
            } else {
                observed.push(page_version(&pool.fetch_shared(page_id(page_no)).unwrap()));
            }
        }
        pool.check_invariants().unwrap();
        pool.flush_all().unwrap();
        drop(pool);
        let disk = (0..300)
            .map(|p| page_version(&fixture.read_from_disk(p)))
            .collect();
        (observed, disk)
    };
    let one = run(1);
    for instances in [4, 16] {
        assert!(
            run(instances) == one,
            "{instances} instances disagree with 1"
        );
    }
}

/// Scan resistance: a hot set promoted to the young sublist survives a scan of many
/// more pages than the pool holds, because scanned pages stay in the old sublist. With
/// `old_blocks_time` 0 the scan's repeated touches promote its pages and the hot set is
/// evicted, which shows the test can fail.
#[test]
fn a_full_scan_does_not_evict_the_hot_set() {
    let fixture = Fixture::new(1200, IoMethod::Direct);
    let hot_misses = |old_blocks_time_ms: u32| {
        let pool = fixture.pool_with(
            128,
            1,
            |c| c.old_blocks_time_ms = old_blocks_time_ms,
            Arc::new(tarn_buffer::NoLog),
        );
        let hot: Vec<u32> = (0..40).collect();
        for round in 0..2 {
            for &p in &hot {
                drop(pool.fetch_shared(page_id(p)).unwrap());
            }
            if round == 0 {
                std::thread::sleep(Duration::from_millis(u64::from(old_blocks_time_ms) + 20));
            }
        }
        for p in 100..1100 {
            for _ in 0..3 {
                drop(pool.fetch_shared(page_id(p)).unwrap());
            }
        }
        let before = pool.stats().misses;
        for &p in &hot {
            drop(pool.fetch_shared(page_id(p)).unwrap());
        }
        pool.check_invariants().unwrap();
        pool.stats().misses - before
    };
    assert_eq!(
        hot_misses(50),
        0,
        "the scan evicted hot pages despite midpoint insertion"
    );
    assert!(
        hot_misses(0) > 20,
        "control: with promotion on every touch the scan should evict the hot set"
    );
}

#[test]
fn dirty_pages_are_written_back_before_their_frames_are_reused() {
    let fixture = Fixture::new(0, IoMethod::Buffered);
    let pool = fixture.pool(16, 1);
    for page_no in 0..200u32 {
        let mut guard = pool.create_page(page_id(page_no), PageType::RAW).unwrap();
        set_version(&mut guard, page_no, 7);
        guard.mark_dirty(Lsn(u64::from(page_no) + 1));
    }
    // Without any flush, every page that left the pool must be on disk.
    let mut on_disk = 0;
    for page_no in 0..200u32 {
        if !pool.is_resident(page_id(page_no)) {
            assert_eq!(page_version(&fixture.read_from_disk(page_no)), (page_no, 7));
            on_disk += 1;
        }
    }
    assert!(on_disk >= 184, "only {on_disk} pages left the pool");
    pool.check_invariants().unwrap();
}

/// A log that records how far it was asked to be durable, or refuses.
struct RecordingLog {
    durable: AtomicU64,
    fail: bool,
}

impl LogFlush for RecordingLog {
    fn flush_to(&self, lsn: Lsn) -> Result<()> {
        if self.fail {
            return Err(Error::OutOfResources(
                "log device unavailable (test)".into(),
            ));
        }
        self.durable.fetch_max(lsn.0, Ordering::SeqCst);
        Ok(())
    }
}

#[test]
fn no_page_reaches_disk_before_the_log_is_durable_up_to_its_lsn() {
    let fixture = Fixture::new(64, IoMethod::Direct);
    let log = Arc::new(RecordingLog {
        durable: AtomicU64::new(0),
        fail: false,
    });
    let pool = fixture.pool_with(16, 1, |_| {}, log.clone());
    for page_no in 0..64u32 {
        let mut guard = pool.fetch_exclusive(page_id(page_no)).unwrap();
        set_version(&mut guard, page_no, 1);
        guard.mark_dirty(Lsn(1000 + u64::from(page_no)));
    }
    pool.flush_all().unwrap();
    let durable = log.durable.load(Ordering::SeqCst);
    for page_no in 0..64u32 {
        let bytes = fixture.read_from_disk(page_no);
        assert!(
            page::page_lsn(&bytes).0 <= durable,
            "page {page_no} written ahead of the log"
        );
        assert_eq!(page::page_lsn(&bytes), Lsn(1000 + u64::from(page_no)));
    }

    // A log that cannot flush stops every write, and the pages stay dirty.
    let failing = Arc::new(RecordingLog {
        durable: AtomicU64::new(0),
        fail: true,
    });
    let pool = fixture.pool_with(64, 1, |c| c.free_target_pct = 0, failing);
    let mut guard = pool.fetch_exclusive(page_id(3)).unwrap();
    set_version(&mut guard, 3, 99);
    guard.mark_dirty(Lsn(5000));
    drop(guard);
    assert!(pool.flush_all().is_err());
    assert_eq!(pool.stats().dirty_pages, 1);
    assert_eq!(page_version(&fixture.read_from_disk(3)), (3, 1));
    pool.check_invariants().unwrap();
}

#[test]
fn a_corrupt_page_is_an_error_naming_file_and_page_and_is_never_cached() {
    let fixture = Fixture::new(32, IoMethod::Buffered);
    let path = fixture.datadir().file_path(FILE);
    {
        use std::os::unix::fs::FileExt;
        let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        file.write_all_at(&[0xAB], u64::from(PAGE_SIZE) * 9 + 100)
            .unwrap();
    }
    let pool = fixture.pool(16, 1);
    for _ in 0..2 {
        let error = pool
            .fetch_shared(page_id(9))
            .err()
            .expect("corrupt page must fail");
        let message = error.to_string();
        assert!(
            matches!(error, Error::PageChecksumMismatch { .. }),
            "{message}"
        );
        assert!(
            message.contains(&path.display().to_string()) && message.contains("1:9"),
            "{message}"
        );
        assert!(!pool.is_resident(page_id(9)));
    }
    assert!(pool.read_optimistic(page_id(9), |_| ()).is_err());
    assert_eq!(pool.prefetch(&[page_id(9)]), 1);
    pool.check_invariants().unwrap();
    assert_eq!(pool.stats().prefetch_failed, 1);
    assert_eq!(
        page_version(&pool.fetch_shared(page_id(10)).unwrap()),
        (10, 0)
    );
    pool.check_invariants().unwrap();
}

#[test]
fn fetching_a_never_written_page_is_an_error() {
    let fixture = Fixture::new(1, IoMethod::Buffered);
    fixture
        .datadir()
        .file(FILE)
        .unwrap()
        .ensure_page_count(10)
        .unwrap();
    let pool = fixture.pool(16, 1);
    assert!(matches!(
        pool.fetch_shared(page_id(5)),
        Err(Error::PageNeverWritten { .. })
    ));
    pool.check_invariants().unwrap();
}

#[test]
fn when_every_frame_is_pinned_a_fetch_fails_instead_of_hanging() {
    let fixture = Fixture::new(40, IoMethod::Buffered);
    let pool = fixture.pool(16, 1);
    let held: Vec<_> = (0..16)
        .map(|p| pool.fetch_shared(page_id(p)).unwrap())
        .collect();
    let error = pool
        .fetch_shared(page_id(30))
        .err()
        .expect("no frame can be freed");
    assert!(matches!(error, Error::OutOfResources(_)), "{error}");
    drop(held);
    assert_eq!(page_version(&pool.fetch_shared(page_id(30)).unwrap()).0, 30);
    pool.check_invariants().unwrap();
}

#[test]
fn latch_accounting_counts_per_instance_classes() {
    let fixture = Fixture::new(64, IoMethod::Buffered);
    let pool = fixture.pool(16, 4);
    for p in 0..64 {
        drop(pool.fetch_shared(page_id(p)).unwrap());
    }
    let snapshot = pool.latch_snapshot();
    let count = |class: &str| -> u64 {
        snapshot
            .iter()
            .filter(|r| r.class == class)
            .map(|r| r.acquisitions)
            .sum()
    };
    assert!(count("buffer.page") >= 64);
    assert!(count("buffer.lru") > 0 && count("buffer.page_table") > 0);
    let instances: std::collections::HashSet<_> = snapshot
        .iter()
        .filter(|r| r.class == "buffer.lru")
        .map(|r| r.instance)
        .collect();
    assert_eq!(instances.len(), 4);
}

#[test]
fn many_threads_waiting_on_a_failing_read_all_get_the_error_and_the_pool_stays_sound() {
    let fixture = Fixture::new(64, IoMethod::Direct);
    let path = fixture.datadir().file_path(FILE);
    {
        use std::os::unix::fs::FileExt;
        let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        for page_no in [3u64, 4, 5] {
            file.write_all_at(&[0xEE], u64::from(PAGE_SIZE) * page_no + 64)
                .unwrap();
        }
    }
    let pool = fixture.pool(16, 1);
    let seed = test_seed("failing_read_waiters");
    std::thread::scope(|scope| {
        for thread in 0..8u64 {
            let pool = &pool;
            scope.spawn(move || {
                let mut rng = Rng::new(seed ^ thread);
                for _ in 0..300 {
                    let page_no = rng.below(64) as u32;
                    let result = if rng.percent(50) {
                        pool.fetch_shared(page_id(page_no))
                            .map(|g| page_version(&g))
                    } else {
                        pool.read_optimistic(page_id(page_no), |v| {
                            (v.read_u64_le(PAGE_NO_AT) as u32, 0)
                        })
                    };
                    match result {
                        Ok((found, _)) => assert_eq!(found, page_no),
                        Err(error) => {
                            assert!((3..=5).contains(&page_no), "page {page_no}: {error}");
                            assert!(error.is_corruption(), "{error}");
                        }
                    }
                }
            });
        }
    });
    pool.check_invariants().unwrap();
}

#[test]
fn hits_on_a_working_set_that_fits_never_take_the_lru_latch() {
    let fixture = Fixture::new(100, IoMethod::Direct);
    let pool = fixture.pool_with(
        128,
        2,
        |c| c.old_blocks_time_ms = 0,
        Arc::new(tarn_buffer::NoLog),
    );
    // Read everything, then touch it again so every page is promoted to the young end.
    for _ in 0..2 {
        for p in 0..100 {
            drop(pool.fetch_shared(page_id(p)).unwrap());
        }
    }
    let lru_acquisitions = || -> u64 {
        pool.latch_snapshot()
            .iter()
            .filter(|r| r.class == "buffer.lru")
            .map(|r| r.acquisitions)
            .sum()
    };
    let before = lru_acquisitions();
    let mut rng = Rng::new(test_seed("hits_never_take_the_lru_latch"));
    for _ in 0..20_000 {
        let p = rng.below(100) as u32;
        if rng.percent(50) {
            drop(pool.fetch_shared(page_id(p)).unwrap());
        } else {
            pool.read_optimistic(page_id(p), |v| v.read_u64_le(PAGE_NO_AT))
                .unwrap();
        }
    }
    assert_eq!(
        lru_acquisitions() - before,
        0,
        "hits took the LRU latch without any eviction"
    );
    assert_eq!(pool.stats().misses, 100);
}
