//! `tarn load tpch`: loads every table (row counts checked against the TPC-H spec at
//! SF 0.01), reports its rate in JSON, and rejects bad scale factors.

mod common;

use common::{tarn, test_dir};

#[test]
fn load_tpch_loads_every_table_and_reports_its_rate() {
    let dir = test_dir();
    let data = dir.path().join("data");
    let data = data.to_str().unwrap();
    let args = [
        "--set",
        "page_size=4K",
        "--set",
        "buffer_pool_size=32M",
        "load",
        "tpch",
        "--sf",
        "0.01",
        "--data-dir",
        data,
        "--json",
    ];
    // Twice: the second load replaces the first.
    for _ in 0..2 {
        let output = tarn(&args);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "{stderr}");
        let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
        assert!(report["rows_per_sec"].as_f64().unwrap() > 0.0, "{report}");
        assert!(report["bytes_written"].as_u64().unwrap() > 0, "{report}");
        let counts: Vec<(String, u64)> = report["tables"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| {
                (
                    t["table"].as_str().unwrap().to_string(),
                    t["rows"].as_u64().unwrap(),
                )
            })
            .collect();
        let expected = [
            ("region", 5),
            ("nation", 25),
            ("supplier", 100),
            ("customer", 1500),
            ("part", 2000),
            ("partsupp", 8000),
            ("orders", 15000),
            ("lineitem", 60175),
        ];
        let expected: Vec<(String, u64)> =
            expected.iter().map(|(t, n)| (t.to_string(), *n)).collect();
        assert_eq!(counts, expected);
        assert_eq!(report["rows"].as_u64().unwrap(), 86_805);
    }
}

#[test]
fn load_tpch_rejects_a_bad_scale_factor() {
    let dir = test_dir();
    let data = dir.path().join("data");
    let output = tarn(&[
        "load",
        "tpch",
        "--sf",
        "0",
        "--data-dir",
        data.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("scale factor") && stderr.contains("MySQL error"),
        "{stderr}"
    );
}
