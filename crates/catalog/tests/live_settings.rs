//! Settings that change while the engine runs (`Storage::set_live_setting`): each
//! reaches the component that uses it, a bad value or a start-only setting changes
//! nothing.

mod common;

use common::*;
use tarn_catalog::TableDef;
use tarn_common::Error;
use tarn_common::config::live_settings;
use tarn_common::settings::{LockScheduling, PrefetchUnit};
use tarn_row::{Column, ColumnType};

#[test]
fn live_settings_reach_the_lock_manager_the_log_the_pool_and_the_scans() {
    let dir = test_dir();
    let storage = open(dir.path(), 256);
    storage.create_database("db").unwrap();
    let def = TableDef::new(
        "t",
        vec![Column::new(
            "id",
            ColumnType::Int { unsigned: false },
            false,
        )],
        &[0],
    );
    let table = storage.create_table("db", def).unwrap();

    storage.set_live_setting("lock_scheduling", "fifo").unwrap();
    let locks = &storage.txn_context().locks;
    assert_eq!(locks.scheduling(), LockScheduling::Fifo);
    storage.set_live_setting("LOCK_SCHEDULING", "cats").unwrap();
    assert_eq!(locks.scheduling(), LockScheduling::Cats);
    assert_eq!(storage.settings().lock_scheduling, LockScheduling::Cats);

    storage
        .set_live_setting("innodb_lock_wait_timeout", "7")
        .unwrap();
    assert_eq!(locks.wait_timeout().as_secs(), 7);
    assert_eq!(storage.settings().lock_wait_timeout_s, 7);

    storage
        .set_live_setting("flush_log_at_commit", "2")
        .unwrap();
    assert_eq!(storage.txn_context().wal.flush_log_at_commit(), 2);

    storage
        .set_live_setting("buffer_pool_old_pct", "60")
        .unwrap();
    assert_eq!(storage.pool().old_pct(), 60);
    storage.pool().check_invariants().unwrap();
    storage
        .set_live_setting("buffer_pool_old_blocks_time", "5")
        .unwrap();
    assert_eq!(storage.pool().old_blocks_time_ms(), 5);

    storage.set_live_setting("latch_accounting", "off").unwrap();
    assert!(!storage.datadir().latches().is_enabled());
    storage.set_live_setting("latch_accounting", "on").unwrap();
    assert!(storage.datadir().latches().is_enabled());

    storage.set_live_setting("scan_threads", "3").unwrap();
    storage
        .set_live_setting("scan_readahead_pages", "9")
        .unwrap();
    storage
        .set_live_setting("secondary_prefetch", "12")
        .unwrap();
    for config in [storage.scan_config(), table.scan_config()] {
        assert_eq!(config.threads, 3);
        assert_eq!(config.readahead_pages, 9);
        assert_eq!(config.secondary_prefetch, PrefetchUnit::Fixed(12));
    }
    storage
        .set_live_setting("secondary_prefetch", "adaptive")
        .unwrap();
    assert_eq!(
        table.scan_config().secondary_prefetch,
        PrefetchUnit::Adaptive
    );
}

#[test]
fn bad_values_and_start_only_settings_change_nothing() {
    let dir = test_dir();
    let storage = open(dir.path(), 256);
    let before = storage.settings();
    let err = storage
        .set_live_setting("scan_threads", "100000")
        .unwrap_err();
    assert!(matches!(err, Error::InvalidSetting { .. }), "{err}");
    let err = storage
        .set_live_setting("io_method", "buffered")
        .unwrap_err();
    assert!(err.to_string().contains("restart"), "{err}");
    assert!(matches!(
        storage.set_live_setting("no_such_setting", "1"),
        Err(Error::UnknownSetting { .. })
    ));
    assert_eq!(storage.settings(), before);
}

#[test]
fn every_live_setting_is_applied_by_something() {
    let dir = test_dir();
    let storage = open(dir.path(), 256);
    let settings = storage.settings();
    for spec in live_settings() {
        // Setting the current value again reaches `apply_live_setting`, which
        // panics on a live setting it does not know.
        let value = settings.get(spec.name).unwrap();
        storage.set_live_setting(spec.name, &value).unwrap();
    }
    assert_eq!(storage.settings(), settings);
}
