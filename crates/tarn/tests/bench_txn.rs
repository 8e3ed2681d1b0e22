//! Smoke tests of the transaction benches: `tarn bench commit` and `tarn bench locks`
//! run a tiny configuration with `--json`, and the document has the fields the team
//! checks, with numbers (or `null` only where the bench documents it).

mod common;

use serde_json::Value;

use common::{tarn, test_dir};

/// Runs `tarn` with `args`, asserts success, and parses stdout as the one JSON object.
fn bench_json(args: &[&str]) -> Value {
    let output = tarn(args);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "tarn {args:?} failed:\n{stderr}");
    serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("stdout is not one JSON object ({e}):\n{stdout}\n{stderr}"))
}

fn number(document: &Value, field: &str) -> f64 {
    document["summary"][field]
        .as_f64()
        .unwrap_or_else(|| panic!("summary.{field} is not a number: {}", document["summary"]))
}

#[test]
fn bench_commit_quick_json_reports_the_group_commit_speedup() {
    let dir = test_dir();
    let data_dir = dir.path().join("data");
    let document = bench_json(&[
        "--set",
        "log_file_size=32M",
        "--set",
        "log_files=2",
        "bench",
        "commit",
        "--quick",
        "--json",
        "--seconds",
        "0.3",
        "--rows",
        "2000",
        "--data-dir",
        data_dir.to_str().unwrap(),
    ]);
    assert_eq!(document["bench"], "commit");
    for field in ["group_commit_speedup_64", "group_commit_speedup_64_threads"] {
        let speedup = number(&document, field);
        assert!(speedup > 0.0, "{field} {speedup}");
    }
    assert!(number(&document, "commits_total") > 0.0);
    assert!(number(&document, "rows_verified") > 0.0);
    // fio's figures are null only when fio did not run.
    let summary = &document["summary"];
    for field in ["fio_fdatasync_per_sec", "fsync_1_client_vs_fio"] {
        assert!(
            summary.as_object().unwrap().contains_key(field),
            "{summary}"
        );
        if document["config"]["fio"] == true {
            number(&document, field);
        } else {
            assert!(summary[field].is_null(), "{summary}");
        }
    }
    let rows = document["rows"].as_array().unwrap();
    let devices: Vec<&str> = rows.iter().filter_map(|r| r["device"].as_str()).collect();
    assert!(
        devices.contains(&"fsync") && devices.contains(&"none"),
        "{devices:?}"
    );
    for row in rows {
        assert!(row["commits_per_sec"].as_f64().unwrap() > 0.0, "{row}");
        assert!(row["p99_us"].as_f64().is_some(), "{row}");
        // Pooled rows name their workers; a thread per client has none.
        match row["client_model"].as_str() {
            Some("pool") => assert!(row["workers"].as_u64().unwrap() >= 1, "{row}"),
            Some("threads") => assert!(row["workers"].is_null(), "{row}"),
            other => panic!("client_model {other:?}: {row}"),
        }
    }
    // The data directory was kept and a second run reuses it.
    assert!(data_dir.join("commit-fsync").exists());
}

#[test]
fn bench_locks_tiny_json_reports_cats_vs_fifo() {
    let document = bench_json(&[
        "--set",
        "log_file_size=32M",
        "--set",
        "log_files=2",
        "bench",
        "locks",
        "--quick",
        "--json",
        "--seconds",
        "0.3",
        "--clients",
        "4,16",
        "--nodes",
        "500",
    ]);
    assert_eq!(document["bench"], "locks");
    let skipped = document["config"]["devices_skipped"]
        .as_array()
        .is_some_and(|s| !s.is_empty());
    // Null only if pmem was skipped (no /dev/shm).
    if skipped {
        assert!(document["summary"]["cats_vs_fifo_pmem_peak"].is_null());
    } else {
        assert!(number(&document, "cats_vs_fifo_pmem_peak") > 0.0);
        assert!(number(&document, "pmem_peak_clients") >= 4.0);
    }
    assert!(number(&document, "cats_vs_fifo_min_low_contention") > 0.0);
    assert_eq!(number(&document, "low_contention_clients"), 4.0);
    assert!(number(&document, "ops_total") > 0.0);
    assert!(number(&document, "rows_verified") > 0.0);
    let rows = document["rows"].as_array().unwrap();
    for scheduling in ["fifo", "cats"] {
        assert!(
            rows.iter().any(|r| r["scheduling"] == scheduling),
            "no {scheduling} row"
        );
    }
    for row in rows {
        assert!(row["ops_per_sec"].as_f64().unwrap() > 0.0, "{row}");
        assert!(row["lock_wait_s"].as_f64().is_some(), "{row}");
        assert!(row["cats_vs_fifo"].as_f64().is_some(), "{row}");
        assert!(row["cpu_busy_pct"].as_f64().unwrap() > 0.0, "{row}");
    }
}
