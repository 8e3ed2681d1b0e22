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
//! Run: `cargo bench -p tarn-sql --bench point_select`.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use tarn_common::settings::Settings;
use tarn_row::Value;
use tarn_sql::Engine;

const ROWS: i64 = 10_000;

fn bench(c: &mut Criterion) {
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
        values.push(format!(
            "({id}, {}, '{:0>119}', '{:0>59}')",
            id % 100,
            id,
            id
        ));
        if values.len() == 500 {
            session
                .execute(&format!("INSERT INTO sbtest VALUES {}", values.join(",")))
                .expect("rows load");
            values.clear();
        }
    }
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

criterion_group!(benches, bench);
criterion_main!(benches);
