//! `tarn bench io` end to end on a small file: every path, a read and a mixed pattern,
//! two depths, then a second run that reuses the kept data directory.

use tarn_bench::io::{self, IoBenchOptions, Pattern};
use tarn_bench::report::Output;
use tarn_common::settings::Settings;

#[test]
fn a_small_matrix_runs_on_every_path_and_a_kept_directory_is_reused() {
    let dir = tempfile::tempdir_in(".").unwrap();
    let mut options = IoBenchOptions::new(Settings::default(), false);
    options.data_dir = Some(dir.path().to_path_buf());
    options.file_size_bytes = 16 << 20;
    options.seconds_per_row = 0.1;
    options.patterns = Some(vec![Pattern::SeqRead, Pattern::RandRw]);
    options.depths = Some(vec![1, 4]);
    let output = Output::new(true);

    let report = io::run(&options, &output).unwrap();
    assert_eq!(report.rows.len(), 3 * 2 * 2);
    for row in &report.rows {
        assert!(row.ios > 0 && row.iops > 0.0, "{row:?}");
        assert!(row.p99_us >= row.p50_us && row.p50_us > 0.0, "{row:?}");
        assert_eq!(row.errors, 0);
        assert!(row.fio_iops.is_none() && row.ratio.is_none());
        if row.pattern == "seqread" {
            assert_eq!(row.writes, 0);
        }
    }
    assert!(
        report.config.loaded.contains("loaded"),
        "{}",
        report.config.loaded
    );
    assert!(report.summary.uring_randread_qd32_vs_fio.is_none());

    // The second run reuses file 1, now rewritten by the randrw rows: every page read
    // must still verify.
    options.patterns = Some(vec![Pattern::SeqRead]);
    options.depths = Some(vec![1]);
    options.seconds_per_row = 0.2;
    let again = io::run(&options, &output).unwrap();
    assert!(
        again.config.loaded.contains("reused"),
        "{}",
        again.config.loaded
    );
    assert_eq!(again.summary.errors_total, 0);
    assert!(again.summary.reads_verified_total > 0);
}
