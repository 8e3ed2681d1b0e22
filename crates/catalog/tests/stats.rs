//! ANALYZE TABLE on tables with known distributions (read whole and sampled), the
//! planner's selectivity estimates, the change counts that keep row estimates current,
//! persistence across a reopen, and statistics kept right through DDL.

mod common;

use std::ops::Bound;

use common::*;
use tarn_catalog::{AnalyzeOptions, IndexDef, Storage, Table, TableDef, TableStats};
use tarn_row::{Column, ColumnType, Value};

const INT: ColumnType = ColumnType::Int { unsigned: false };

/// `id` (primary key), `grp` = id % 10 (NULL when id % 4 == 0), `name` = "n{id %
/// 100}", `val` = 3 id; indexes on (grp) and (grp, name).
fn def() -> TableDef {
    TableDef::new(
        "t",
        vec![
            Column::new("id", INT, false),
            Column::new("grp", INT, true),
            Column::new("name", ColumnType::VarChar { len: 20 }, false),
            Column::new("val", ColumnType::BigInt { unsigned: false }, false),
        ],
        &[0],
    )
    .with_index(IndexDef::new("by_grp", &[1], false))
    .with_index(IndexDef::new("by_grp_name", &[1, 2], false))
}

fn row(id: i64) -> Vec<Value> {
    vec![
        int(id),
        if id % 4 == 0 {
            Value::Null
        } else {
            int(id % 10)
        },
        text(&format!("n{}", id % 100)),
        int(3 * id),
    ]
}

fn loaded(storage: &Storage, rows: i64) -> std::sync::Arc<Table> {
    storage.create_database("db").unwrap();
    let t = storage.create_table("db", def()).unwrap();
    t.bulk_load((0..rows).map(|id| Ok(row(id)))).unwrap();
    t
}

fn near(found: f64, expected: f64, tolerance: f64) -> bool {
    (found - expected).abs() <= tolerance
}

#[track_caller]
fn assert_exact_distributions(stats: &TableStats, rows: u64) {
    assert_eq!(stats.rows, rows);
    assert_eq!(stats.primary.distinct_prefixes, vec![rows]);
    // NULLs count as one value, as InnoDB's default nulls_equal does.
    assert_eq!(stats.indexes[0].distinct_prefixes, vec![11]);
    assert_eq!(stats.indexes[1].distinct_prefixes, vec![11, 100]);
    let columns = &stats.columns;
    assert_eq!((columns[0].null_fraction, columns[0].distinct), (0.0, rows));
    assert_eq!((columns[1].null_fraction, columns[1].distinct), (0.25, 10));
    assert_eq!((columns[2].null_fraction, columns[2].distinct), (0.0, 100));
    assert_eq!(columns[3].distinct, rows);
    assert!(columns.iter().all(|c| c.histogram.len() == 65));
}

#[test]
fn a_full_analyze_describes_the_table_exactly() {
    let dir = test_dir();
    let rows = 5000;
    {
        let storage = open(dir.path(), 256);
        let t = loaded(&storage, rows);
        assert!(t.stats().is_none());
        assert!(t.stats_stale());
        // Without statistics: an estimate from the tree's pages.
        let guess = t.estimated_rows();
        assert!((1000..=50_000).contains(&guess), "{guess}");
        let stats = storage.analyze_table("db", "t").unwrap();
        assert!(!stats.sampled);
        assert_exact_distributions(&stats, rows as u64);
        assert_eq!(t.stats().as_deref(), Some(&stats));
        assert_eq!(t.estimated_rows(), rows as u64);
        assert!(!t.stats_stale());

        // Equality: (1 - null share) / distinct.
        assert!(near(stats.selectivity_eq(1), 0.075, 1e-9));
        assert!(near(stats.selectivity_eq(0), 1.0 / 5000.0, 1e-9));
        assert_eq!(stats.selectivity_null(1), 0.25);
        // Ranges on uniform integers: the histogram interpolates.
        let range = |c, lower: Bound<Value>, upper: Bound<Value>| {
            stats.selectivity_range(c, lower.as_ref(), upper.as_ref())
        };
        use Bound::{Excluded, Included, Unbounded};
        let half = range(3, Included(int(0)), Excluded(int(3 * rows / 2)));
        assert!(near(half, 0.5, 0.02), "{half}");
        let narrow = range(0, Included(int(100)), Included(int(199)));
        assert!(near(narrow, 0.02, 0.005), "{narrow}");
        let above = range(0, Excluded(int(4000)), Unbounded);
        assert!(near(above, 0.2, 0.01), "{above}");
        assert_eq!(range(0, Included(int(-10)), Excluded(int(-1))), 0.0);
        assert_eq!(range(0, Included(int(rows)), Unbounded), 0.0);
        assert_eq!(range(0, Unbounded, Unbounded), 1.0);
        let empty = range(0, Included(int(300)), Excluded(int(300)));
        assert_eq!(empty, 0.0);
        // NULLs are in no range; the ten values of grp share the rest.
        let low_groups = range(1, Unbounded, Excluded(int(5)));
        assert!(near(low_groups, 0.375, 0.05), "{low_groups}");
        // A value the column cannot hold, an unknown column: the default.
        let bad = range(0, Included(text("not a number")), Unbounded);
        assert_eq!(bad, tarn_catalog::stats::DEFAULT_RANGE_SELECTIVITY);
        assert_eq!(
            range(9, Unbounded, Unbounded),
            tarn_catalog::stats::DEFAULT_RANGE_SELECTIVITY
        );
        // Rows an index lookup finds.
        assert!(near(stats.rows_per_key(Some(0), 1), 5000.0 / 11.0, 1e-9));
        assert!(near(stats.rows_per_key(Some(1), 2), 50.0, 1e-9));
        assert!(near(stats.rows_per_key(None, 1), 1.0, 1e-9));
    }
    // Persisted, bounds as hex strings; change counts start again at 0.
    let json = std::fs::read_to_string(dir.path().join("catalog.json")).unwrap();
    assert!(json.contains("\"histogram\": [\n"), "{json}");
    let storage = open(dir.path(), 256);
    let t = storage.table("db", "t").unwrap();
    let stats = t.stats().unwrap();
    assert_exact_distributions(&stats, rows as u64);
    assert_eq!(stats.analyzed_at_change, 0);
    assert_eq!(t.changes_since_analyze(), 0);
}

#[test]
fn a_sampled_analyze_estimates_well() {
    let dir = test_dir();
    let rows = 40_000u64;
    let storage = open(dir.path(), 1024);
    let t = loaded(&storage, rows as i64);
    let options = AnalyzeOptions {
        full_scan_rows_max: 0,
        sample_ranges: 64,
    };
    let stats = storage.analyze_table_with("db", "t", options).unwrap();
    assert!(stats.sampled);
    let within = |found: u64, expected: u64, share: f64| {
        (found as f64 - expected as f64).abs() <= expected as f64 * share
    };
    assert!(within(stats.rows, rows, 0.15), "rows {}", stats.rows);
    assert!(
        within(stats.primary.distinct_prefixes[0], rows, 0.15),
        "{:?}",
        stats.primary
    );
    // Few values over many leaves: boundaries are rare in the sample too.
    let groups = stats.indexes[0].distinct_prefixes[0];
    assert!((1..=60).contains(&groups), "{groups}");
    let pairs = stats.indexes[1].distinct_prefixes[1];
    assert!((20..=500).contains(&pairs), "{pairs}");
    let columns = &stats.columns;
    assert!(near(columns[1].null_fraction, 0.25, 0.05));
    assert_eq!(columns[1].distinct, 10);
    assert_eq!(columns[2].distinct, 100);
    assert!(within(columns[0].distinct, stats.rows, 0.01));
    let half = stats.selectivity_range(
        3,
        Bound::Unbounded,
        Bound::Excluded(&int(3 * rows as i64 / 2)),
    );
    assert!(near(half, 0.5, 0.1), "{half}");
    assert_eq!(t.estimated_rows(), stats.rows);
}

#[test]
fn change_counts_keep_estimates_current() {
    let dir = test_dir();
    let storage = open(dir.path(), 256);
    let t = loaded(&storage, 1000);
    storage.analyze_table("db", "t").unwrap();
    for id in 1000..1050 {
        t.insert(row(id)).unwrap();
    }
    t.delete(&[int(3)]).unwrap();
    t.update(&[int(5)], row(5)).unwrap();
    assert_eq!(t.estimated_rows(), 1049);
    assert_eq!(t.changes_since_analyze(), 52);
    assert!(!t.stats_stale());
    // Transactional changes count too, and a rollback takes its changes back from
    // the row estimate.
    let mut tx = storage.begin(None, false);
    for id in 2000..2060 {
        t.insert_tx(&mut tx, row(id)).unwrap();
    }
    t.delete_tx(&mut tx, &[int(7)]).unwrap();
    assert_eq!(t.estimated_rows(), 1108);
    storage.rollback(tx).unwrap();
    assert_eq!(t.estimated_rows(), 1049);
    assert!(t.stats_stale(), "{} changes", t.changes_since_analyze());
    let mut tx = storage.begin(None, false);
    t.update_tx(&mut tx, &[int(8)], row(8)).unwrap();
    t.delete_tx(&mut tx, &[int(9)]).unwrap();
    storage.commit(tx).unwrap();
    assert_eq!(t.estimated_rows(), 1048);
    assert!(storage.wait_for_purge(std::time::Duration::from_secs(10)));
    let stats = storage.analyze_table("db", "t").unwrap();
    assert_eq!(stats.rows, 1048);
    assert_eq!(t.changes_since_analyze(), 0);
    assert_eq!(stats.analyzed_at_change, t.changes());
}

#[test]
fn ddl_keeps_statistics_consistent() {
    let dir = test_dir();
    {
        let storage = open(dir.path(), 256);
        let t = loaded(&storage, 2000);
        storage.analyze_table("db", "t").unwrap();
        // Dropping an index drops its entry.
        let t = {
            let new = storage.drop_index("db", "t", "by_grp").unwrap();
            assert_eq!(code(t.get(&[int(1)])), 1412);
            new
        };
        let stats = t.stats().unwrap();
        assert_eq!(stats.indexes.len(), 1);
        assert_eq!(stats.indexes[0].distinct_prefixes, vec![11, 100]);
        // A rename keeps them; the counts carry over too.
        t.insert(row(5000)).unwrap();
        let t = storage.rename_table("db", "t", "db", "u").unwrap().unwrap();
        assert_eq!(t.stats().unwrap().rows, 2000);
        assert_eq!(t.estimated_rows(), 2001);
        // A second table, truncated: no statistics.
        let other = storage
            .create_table("db", {
                let mut d = def();
                d.name = "other".into();
                d
            })
            .unwrap();
        other.insert(row(1)).unwrap();
        storage.analyze_table("db", "other").unwrap();
        let other = storage.truncate_table("db", "other").unwrap();
        assert!(other.stats().is_none());
    }
    let storage = open(dir.path(), 256);
    {
        let t = storage.table("db", "u").unwrap();
        assert_eq!(t.stats().unwrap().indexes.len(), 1);
        assert!(storage.table("db", "other").unwrap().stats().is_none());
        // Adding an index drops them (analyze again); dropping the table removes them.
        let t = storage
            .create_index("db", "u", IndexDef::new("by_val", &[3], true))
            .unwrap();
        assert!(t.stats().is_none());
        let stats = storage.analyze_table("db", "u").unwrap();
        assert_eq!(stats.indexes.len(), 2);
        assert_eq!(stats.indexes[1].distinct_prefixes, vec![2001]);
        storage.drop_table("db", "u").unwrap();
    }
    // The table handles, which keep the buffer pool and with it the data directory
    // open, ended with the block above.
    drop(storage);
    let storage = open(dir.path(), 256);
    assert_eq!(storage.tables("db").unwrap(), vec!["other"]);
    assert_eq!(code(storage.analyze_table("db", "u")), 1146);
}
