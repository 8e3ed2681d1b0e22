//! Micro-benchmarks of the SQL layer's fast path (issue target: a primary-key point
//! SELECT through a prepared statement in at most 5 µs of engine time beyond
//! parsing).
//!
//! `prepared_point_select` runs `SELECT c FROM sbtest WHERE id = ?` (prepared once)
//! with a new id each iteration on a warm 10,000-row table, autocommit on: the time
//! is binding parameters, the transaction's start and commit, the primary-key lookup
//! through the buffer pool, and building the result chunk. `parse_point_select`
//! measures the parse alone (what the prepared path skips), and
//! `text_point_select` the whole text path, for comparison.
//!
//! The `sysbench_ranges` group runs the four range queries of sysbench's
//! `oltp_read_only` (`simple_range`, `sum_range`, `order_range`, `distinct_range`:
//! 100 consecutive ids each, prepared once) and measures the thread's CPU time
//! (`tarn_io::os::thread_cpu_time`), so another process on the machine's cores moves
//! the figure less than it moves wall time.
//!
//! Run: `cargo bench -p tarn-sql --bench point_select`.

use std::hint::black_box;
use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use tarn_common::settings::Settings;
use tarn_row::Value;
use tarn_sql::Engine;

const ROWS: i64 = 10_000;

/// A warm engine with sysbench's table `b.sbtest` of `ROWS` rows (`c` and `pad`
/// distinct per row, as sysbench's random strings are).
fn sbtest() -> (tempfile::TempDir, Arc<Engine>) {
    let dir = tempfile::Builder::new()
        .prefix("tarn-point-select")
        .tempdir_in(std::env::var("TARN_TEST_DIR").unwrap_or_else(|_| "target".into()))
        .expect("a temporary directory");
    let settings = Settings {
        data_dir: dir.path().to_path_buf(),
        ..Settings::default()
    };
    let engine = Engine::open(&settings).expect("the engine opens");
    let mut session = engine.session("root", "localhost");
    session
        .execute(
            "CREATE DATABASE b; USE b; CREATE TABLE sbtest (id INT PRIMARY KEY, k INT NOT NULL, c CHAR(120) NOT NULL, pad CHAR(60) NOT NULL, KEY k_1 (k))",
        )
        .expect("the schema is created");
    let mut values = Vec::new();
    for id in 1..=ROWS {
        // Like sysbench's `c`: digit groups that differ from the first byte on.
        let scrambled = (id * 7_919 * 104_729) % 100_000_000_000;
        values.push(format!(
            "({id}, {}, '{scrambled:011}-{id:0>107}', '{id:0>59}')",
            id % 100,
        ));
        if values.len() == 500 {
            session
                .execute(&format!("INSERT INTO sbtest VALUES {}", values.join(",")))
                .expect("rows load");
            values.clear();
        }
    }
    drop(session);
    (dir, engine)
}

fn bench(c: &mut Criterion) {
    let (_dir, engine) = sbtest();
    let mut session = engine.session("root", "localhost");
    session.execute("USE b").expect("the database exists");
    let statement = session
        .prepare("SELECT c FROM sbtest WHERE id = ?")
        .expect("the statement prepares");
    let mut id = 0i64;
    c.bench_function("prepared_point_select", |b| {
        b.iter(|| {
            id = id % ROWS + 1;
            let result = session
                .execute_prepared(statement, &[Value::Int(id)])
                .expect("the lookup runs");
            black_box(result);
        })
    });
    c.bench_function("parse_point_select", |b| {
        b.iter(|| {
            black_box(
                tarn_sql::parse::parse_one("SELECT c FROM sbtest WHERE id = 42").expect("parses"),
            )
        })
    });
    c.bench_function("text_point_select", |b| {
        b.iter(|| {
            id = id % ROWS + 1;
            let result = session
                .execute(&format!("SELECT c FROM sbtest WHERE id = {id}"))
                .expect("the query runs");
            black_box(result);
        })
    });
}

/// Ids per range query, as sysbench's `--range_size` default.
const RANGE_ROWS: i64 = 100;

fn ranges(c: &mut Criterion) {
    let (_dir, engine) = sbtest();
    let mut session = engine.session("root", "localhost");
    session.execute("USE b").expect("the database exists");
    let queries = [
        (
            "simple_range",
            "SELECT c FROM sbtest WHERE id BETWEEN ? AND ?",
        ),
        (
            "sum_range",
            "SELECT SUM(k) FROM sbtest WHERE id BETWEEN ? AND ?",
        ),
        (
            "order_range",
            "SELECT c FROM sbtest WHERE id BETWEEN ? AND ? ORDER BY c",
        ),
        (
            "distinct_range",
            "SELECT DISTINCT c FROM sbtest WHERE id BETWEEN ? AND ? ORDER BY c",
        ),
    ];
    let mut group = c.benchmark_group("sysbench_ranges");
    let mut start = 0i64;
    for (name, sql) in queries {
        let statement = session.prepare(sql).expect("the statement prepares");
        group.bench_function(name, |b| {
            b.iter_custom(|iterations| {
                let started = tarn_io::os::thread_cpu_time();
                for _ in 0..iterations {
                    start = (start + 7_919) % (ROWS - RANGE_ROWS) + 1;
                    let result = session
                        .execute_prepared(
                            statement,
                            &[Value::Int(start), Value::Int(start + RANGE_ROWS - 1)],
                        )
                        .expect("the range runs");
                    black_box(result);
                }
                tarn_io::os::thread_cpu_time() - started
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench, ranges);
criterion_main!(benches);
