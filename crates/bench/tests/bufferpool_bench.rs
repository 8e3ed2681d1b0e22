//! `tarn bench bufferpool` end to end on a small pool: both data sets, two instance
//! counts, both baselines, the JSON document; then a second run that reuses the kept
//! data directory, whose pages the first run's writes changed and flushed.

use tarn_bench::bufferpool::{self, BufferPoolBenchOptions, Distribution};
use tarn_bench::report::{BenchDocument, Output, render_json};
use tarn_common::settings::Settings;

fn small_options(dir: &std::path::Path) -> BufferPoolBenchOptions {
    // Preloaded pages are promoted at once after this; 0 keeps the test short.
    let settings = Settings {
        buffer_pool_old_blocks_time_ms: 0,
        ..Settings::default()
    };
    let mut options = BufferPoolBenchOptions::new(settings, true);
    options.data_dir = Some(dir.to_path_buf());
    options.pool_size_bytes = 4 << 20;
    options.instances = vec![1, 4];
    options.threads = vec![3];
    options.distributions = vec![Distribution::Zipf];
    options.seconds_per_cell = 0.2;
    options.warm_min_seconds = 0.05;
    options.warm_max_seconds = 0.5;
    options.baseline_rounds = 2;
    options.baseline_round_seconds = 0.1;
    options
}

#[test]
fn a_small_sweep_measures_both_data_sets_and_baselines_and_reuses_its_directory() {
    let dir = tempfile::tempdir_in(".").unwrap();
    let options = small_options(dir.path());
    let output = Output::new(true);

    let report = bufferpool::run(&options, &output).unwrap();
    assert_eq!(report.rows.len(), 2 * 2);
    for row in &report.rows {
        assert!(row.ops > 0 && row.ops_per_s > 0.0, "{row:?}");
        assert_eq!(
            row.latches.len(),
            bufferpool::LATCH_CLASSES.len(),
            "{row:?}"
        );
        let acquisitions: u64 = row.latches.iter().map(|l| l.acquisitions).sum();
        assert!(acquisitions > 0, "accounting recorded nothing: {row:?}");
        let hit_rate = row.hit_rate.expect("fetches were counted");
        if row.dataset == "fits" {
            assert!(hit_rate > 0.99, "{row:?}");
            assert_eq!(row.page_reads_per_s, 0.0, "{row:?}");
        } else {
            assert!(hit_rate < 0.99 && row.page_reads_per_s > 0.0, "{row:?}");
        }
    }
    assert!(
        report.config.loaded.contains("loaded"),
        "{}",
        report.config.loaded
    );
    let summary = &report.summary;
    assert!(summary.accounting_overhead_pct.is_some());
    assert_eq!(summary.accounting_overhead_rounds_pct.len(), 2);
    assert!(summary.optimistic_vs_shared_ratio.is_some_and(|r| r > 0.0));
    assert_eq!(summary.s4_threads, 3);

    let text = render_json(&BenchDocument {
        bench: "bufferpool",
        config: &report.config,
        rows: &report.rows,
        summary: &report.summary,
    })
    .unwrap();
    let value: serde_json::Value = serde_json::from_str(&text).unwrap();
    let by_instances = &value["summary"]["latch_wait_ns_by_instances"];
    assert!(
        by_instances["1"].is_u64() && by_instances["4"].is_u64(),
        "{by_instances}"
    );
    assert!(value["summary"]["latch_wait_ns_by_instances_fits"]["4"].is_u64());
    assert!(value["summary"]["accounting_overhead_pct"].is_f64());
    assert!(value["rows"][0]["latches"][0]["class"].is_string());

    // The second run reads pages the first one changed and flushed: every page must
    // still carry its id and the loader's body word.
    let mut again = small_options(dir.path());
    again.instances = vec![2];
    let report = bufferpool::run(&again, &output).unwrap();
    assert!(
        report.config.loaded.contains("reused"),
        "{}",
        report.config.loaded
    );
    assert_eq!(report.rows.len(), 2);
}
