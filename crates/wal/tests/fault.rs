//! Redo log tests with the fault layer armed: a failed sync stops the log for good, and
//! a simulated power loss (with torn writes) keeps every acknowledged commit and never
//! cuts a multi-record group. The fault plan is process-global, so the tests in this
//! file take a lock.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use parking_lot::Mutex;
use tarn_common::rng::{Rng, test_seed};
use tarn_common::settings::{LogDevice, Settings};
use tarn_common::{Error, Lsn};
use tarn_io::fault::{self, FaultPlan};
use tarn_wal::Wal;
use tarn_wal::format::BASE_LSN;

static SERIAL: Mutex<()> = Mutex::new(());

fn settings(dir: &std::path::Path, device: LogDevice) -> Settings {
    Settings {
        data_dir: dir.to_path_buf(),
        log_dir: dir.join("log"),
        log_device: device,
        log_file_size_bytes: 1 << 20,
        log_files: 2,
        log_buffer_size_bytes: 256 << 10,
        flush_log_at_commit: 1,
        ..Settings::default()
    }
}

#[test]
fn a_failed_sync_stops_the_log_forever() {
    let _serial = SERIAL.lock();
    let dir = tempfile::tempdir().expect("tempdir");
    let wal = Wal::open(&settings(dir.path(), LogDevice::Fsync)).expect("open");
    let ok = wal.append(1, b"before the failure");
    wal.commit_wait(ok).expect("commit");
    fault::arm(FaultPlan {
        fail_sync: Some(1),
        ..FaultPlan::default()
    });
    let lsn = wal.append(1, b"its sync fails");
    assert!(matches!(wal.commit_wait(lsn), Err(Error::WritesStopped(_))));
    let syncs = fault::counts().syncs;
    for _ in 0..5 {
        let lsn = wal.append(1, b"after the failure");
        assert!(matches!(wal.commit_wait(lsn), Err(Error::WritesStopped(_))));
        assert!(matches!(wal.flush_to(lsn), Err(Error::WritesStopped(_))));
    }
    assert!(matches!(
        wal.write_checkpoint(ok, b""),
        Err(Error::WritesStopped(_))
    ));
    std::thread::sleep(Duration::from_millis(30));
    assert_eq!(
        fault::counts().syncs,
        syncs,
        "a failed fsync is never retried"
    );
    assert!(wal.failure().is_some());
    assert!(matches!(wal.close(), Err(Error::WritesStopped(_))));
    fault::disarm();
}

fn power_loss_round(device: LogDevice, seed: u64) {
    let dir = tempfile::tempdir().expect("tempdir");
    let s = settings(dir.path(), device);
    let wal = Wal::open(&s).expect("open");
    fault::arm(FaultPlan {
        power_loss: true,
        ..FaultPlan::default()
    });
    let lost = AtomicBool::new(false);
    let acknowledged = AtomicU64::new(0);
    std::thread::scope(|scope| {
        for t in 0..4u64 {
            let (wal, lost, acknowledged) = (&wal, &lost, &acknowledged);
            scope.spawn(move || {
                let mut rng = Rng::new(seed ^ t);
                for i in 0.. {
                    let id = t << 32 | i;
                    let lsn = if rng.percent(20) {
                        // A three-record group, with other threads' records between.
                        let _group = wal.begin_multi();
                        for k in 0..3u8 {
                            let mut p = id.to_le_bytes().to_vec();
                            p.push(k);
                            wal.append(2, &p);
                            std::thread::yield_now();
                        }
                        wal.current_lsn()
                    } else {
                        let len = 8 + rng.below(500) as usize;
                        let mut p = vec![0u8; len];
                        p[..8].copy_from_slice(&id.to_le_bytes());
                        wal.append(1, &p)
                    };
                    if wal.commit_wait(lsn).is_err() {
                        return;
                    }
                    if !lost.load(Ordering::SeqCst) {
                        acknowledged.fetch_max(lsn.0, Ordering::SeqCst);
                    }
                }
            });
        }
        let mut rng = Rng::new(seed);
        std::thread::sleep(Duration::from_millis(20 + rng.below(60)));
        lost.store(true, Ordering::SeqCst);
        fault::power_loss(Some(seed)).expect("power loss");
    });
    drop(wal);
    fault::disarm();

    let wal = Wal::open(&s).expect("reopen");
    let mut reader = wal.read_from(Lsn(BASE_LSN)).expect("reader");
    let mut groups = std::collections::HashMap::<u64, u32>::new();
    let mut records = 0;
    while let Some(r) = reader.next_record().expect("read") {
        records += 1;
        if r.kind == 2 {
            let id = u64::from_le_bytes(r.payload[..8].try_into().expect("id"));
            *groups.entry(id).or_default() += 1;
        }
    }
    let end = reader.position().0;
    let acknowledged = acknowledged.load(Ordering::SeqCst);
    assert!(
        end >= acknowledged,
        "{device} seed {seed}: log ends at {end}, a commit at {acknowledged} was acknowledged"
    );
    for (id, count) in groups {
        assert_eq!(count, 3, "{device} seed {seed}: group {id:x} was cut");
    }
    assert!(records > 0);
}

#[test]
fn power_loss_keeps_acknowledged_commits_and_whole_groups() {
    let _serial = SERIAL.lock();
    let seed = test_seed("power_loss_keeps_acknowledged_commits_and_whole_groups");
    for round in 0..4 {
        power_loss_round(LogDevice::Fsync, seed.wrapping_add(round));
        power_loss_round(LogDevice::Dsync, seed.wrapping_add(round));
    }
}
