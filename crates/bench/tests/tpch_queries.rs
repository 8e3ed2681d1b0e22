//! The 22 TPC-H queries at SF 0.01 against the expected answers
//! (`tarn_bench::tpch::queries`).
//!
//! Loads TPC-H SF 0.01 into a fresh data directory under `TARN_TEST_DIR`, runs every
//! query in one session, and compares each result with the stored answer. A query not
//! listed in `KNOWN_FAILING` must match: the test fails naming every one that does not.
//! The listed queries are run too (except those marked `runs_away`, which would
//! exhaust the machine or hang) and the test prints those that now pass, so the list
//! can shrink. A query that hangs past its `max_execution_time` ends the test process
//! with a message naming it (`run_query`'s hang guard).

use std::sync::Arc;

use tarn_bench::report::Output;
use tarn_bench::tpch::bench::{QueryGuard, run_query, tpch_session};
use tarn_bench::tpch::load::ensure_loaded;
use tarn_bench::tpch::queries::{self, QUERY_COUNT};
use tarn_catalog::Storage;
use tarn_common::settings::Settings;
use tarn_sql::Engine;

const SCALE_FACTOR: f64 = 0.01;
/// Seconds any one query may run (max_execution_time).
const TIMEOUT_SECONDS: f64 = 30.0;
/// The process's resident memory at which a query is stopped.
const MEMORY_MAX_BYTES: u64 = 4 << 30;

fn data_dir() -> tempfile::TempDir {
    let base = std::env::var_os("TARN_TEST_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(std::env::temp_dir);
    std::fs::create_dir_all(&base).expect("creates TARN_TEST_DIR");
    tempfile::Builder::new()
        .prefix("tpch-queries-")
        .tempdir_in(base)
        .expect("creates a data directory")
}

#[test]
fn tpch_queries_return_the_expected_answers_at_sf_0_01() {
    let dir = data_dir();
    let settings = Settings {
        data_dir: dir.path().to_path_buf(),
        scan_threads: 2,
        ..Settings::default()
    };
    let storage = Arc::new(Storage::open(&settings).expect("opens the storage engine"));
    ensure_loaded(&storage, SCALE_FACTOR, &Output::new(false)).expect("loads TPC-H SF 0.01");
    let engine = Engine::with_storage(storage);
    let mut session = tpch_session(&engine, TIMEOUT_SECONDS).expect("opens a session");

    let mut regressions = Vec::new();
    let mut now_passing = Vec::new();
    for number in 1..=QUERY_COUNT {
        let known = queries::known_failure(number, SCALE_FACTOR);
        if known.is_some_and(|f| f.runs_away) {
            eprintln!("Q{number:02}: not run (listed as running away)");
            continue;
        }
        let (expected, _) = queries::expected_answer(number, SCALE_FACTOR).expect("answers exist");
        let guard = QueryGuard {
            memory_max_bytes: MEMORY_MAX_BYTES,
            timeout_seconds: TIMEOUT_SECONDS,
        };
        let run = run_query(&mut session, number, SCALE_FACTOR, &guard).expect("runs");
        if run.panicked {
            session = tpch_session(&engine, TIMEOUT_SECONDS).expect("opens a new session");
        }
        let verdict = run
            .result
            .and_then(|answer| queries::compare(&expected, &answer));
        eprintln!(
            "Q{number:02}: {:.3} s, {}",
            run.seconds,
            match &verdict {
                Ok(()) => "ok".to_string(),
                Err(why) => why.clone(),
            }
        );
        match (verdict, known) {
            (Ok(()), Some(_)) => now_passing.push(number),
            (Err(why), None) => regressions.push(format!("Q{number:02}: {why}")),
            _ => {}
        }
    }
    if !now_passing.is_empty() {
        eprintln!(
            "listed in KNOWN_FAILING but now returning the expected answer: {now_passing:?} \
             (remove them from the list)"
        );
    }
    assert!(
        regressions.is_empty(),
        "queries expected to work did not:\n{}",
        regressions.join("\n")
    );
}
