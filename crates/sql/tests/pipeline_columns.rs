//! Parallel pipelines decode only the columns their steps and sink read
//! (`parallel::columns`): their answers must be the answers of the same queries run
//! serially over every column.
//!
//! Each query runs twice on a table past `PARALLEL_MIN_ROWS`: as written (a parallel
//! pipeline, which EXPLAIN confirms, with a pruned scan) and with an extra conjunct
//! holding a subquery, `(SELECT 1) = 1`, which keeps the plan out of the pipeline
//! (`parallel_safe`) and makes every operator below it ask for every column. The
//! data and the queries' constants come from a printed seed.

mod common;

use common::{rows, text};

use std::sync::Arc;

use tarn_common::rng::{Rng, test_seed};
use tarn_common::settings::Settings;
use tarn_row::Value;
use tarn_sql::{Engine, Session};

/// Past `PARALLEL_MIN_ROWS` (16,384), and past `PARALLEL_BUILD_ROWS_MIN` for a join
/// of the table with itself.
const ROWS: i64 = 24_000;
/// Rows in `dim`, the small build side.
const GROUPS: i64 = 9;

fn engine() -> (tempfile::TempDir, Arc<Engine>) {
    common::engine_with("pipeline-columns", Settings::default())
}

/// The rows as text, sorted: the pipeline and the serial plan may order rows
/// differently where the query does not fix the order.
fn sorted_text(rows: &[Vec<Value>]) -> Vec<String> {
    let mut out: Vec<String> = rows
        .iter()
        .map(|r| r.iter().map(text).collect::<Vec<_>>().join("|"))
        .collect();
    out.sort();
    out
}

/// Fails with the first difference rather than both (long) answers.
fn assert_same(got: &[String], expected: &[String], context: &str) {
    if let Some(i) = (0..got.len().min(expected.len())).find(|&i| got[i] != expected[i]) {
        panic!(
            "{context}: sorted row {i} is {:?}, the serial plan's {:?}",
            got[i], expected[i]
        );
    }
    assert_eq!(got.len(), expected.len(), "{context}: rows");
}

fn explain(session: &mut Session, sql: &str) -> String {
    rows(session, &format!("EXPLAIN {sql}"))
        .iter()
        .map(|r| text(&r[0]) + "\n")
        .collect()
}

/// One generated row of `big`.
struct Row {
    id: i64,
    a: i64,
    b: Option<i64>,
    c: String,
    d_cents: i64,
    day: i64,
    g: i64,
}

fn load(session: &mut Session, rng: &mut Rng) -> Vec<Row> {
    session
        .execute(
            "CREATE DATABASE t; USE t;
             CREATE TABLE big (id INT PRIMARY KEY, a INT NOT NULL, b BIGINT, c VARCHAR(20),
                 d DECIMAL(12,2) NOT NULL, e DATE NOT NULL, f DOUBLE, g INT NOT NULL,
                 pad VARCHAR(200));
             CREATE TABLE dim (g INT PRIMARY KEY, name VARCHAR(10) NOT NULL)",
        )
        .expect("creates");
    let generated: Vec<Row> = (0..ROWS)
        .map(|id| Row {
            id,
            a: rng.below(ROWS as u64) as i64,
            b: (!rng.percent(15)).then(|| rng.below(1_000_000) as i64 - 500_000),
            c: format!("c{}", rng.below(5_000)),
            d_cents: rng.below(10_000_000) as i64,
            day: rng.below(3_000) as i64,
            g: rng.below(GROUPS as u64 + 2) as i64,
        })
        .collect();
    for part in generated.chunks(2_000) {
        let values: Vec<String> = part
            .iter()
            .map(|r| {
                format!(
                    "({}, {}, {}, '{}', {}.{:02}, DATE '1995-01-01' + INTERVAL {} DAY, {} / 3, {}, '{}')",
                    r.id,
                    r.a,
                    r.b.map_or("NULL".into(), |b| b.to_string()),
                    r.c,
                    r.d_cents / 100,
                    r.d_cents % 100,
                    r.day,
                    r.id,
                    r.g,
                    "p".repeat((r.id % 150) as usize)
                )
            })
            .collect();
        session
            .execute(&format!("INSERT INTO big VALUES {}", values.join(",")))
            .expect("loads");
    }
    // Groups GROUPS and GROUPS + 1 have no row in dim: inner joins drop them.
    let names: Vec<String> = (0..GROUPS)
        .map(|g| format!("({g}, 'n{}')", g % 4))
        .collect();
    session
        .execute(&format!("INSERT INTO dim VALUES {}", names.join(",")))
        .expect("loads");
    generated
}

#[test]
fn pruned_pipelines_answer_as_the_serial_plans_over_every_column() {
    let seed = test_seed("pruned_pipelines_answer_as_the_serial_plans_over_every_column");
    let mut rng = Rng::new(seed);
    let (_dir, engine) = engine();
    let mut s = engine.session("root", "localhost");
    let data = load(&mut s, &mut rng);
    let parallel = std::thread::available_parallelism().map_or(1, |n| n.get()) > 1;

    // COUNT(*) decodes no column at all, SUM(b) one; the answers against the
    // generator too.
    if parallel {
        for (sql, note) in [
            ("SELECT COUNT(*) FROM big", "decoding 0 of 9 columns"),
            (
                "SELECT SUM(b), COUNT(b) FROM big",
                "decoding 1 of 9 columns",
            ),
            (
                "SELECT id, c FROM big WHERE b > 0",
                "decoding 3 of 9 columns",
            ),
            ("SELECT * FROM big WHERE b > 0", "workers]"),
        ] {
            let plan = explain(&mut s, sql);
            assert!(plan.contains(note), "{sql}:\n{plan}");
        }
    }
    assert_eq!(
        rows(&mut s, "SELECT COUNT(*) FROM big"),
        vec![vec![Value::Int(ROWS)]]
    );
    let threshold = rng.below(ROWS as u64) as i64;
    let expected = data.iter().filter(|r| r.a < threshold).count() as i64;
    assert_eq!(
        rows(
            &mut s,
            &format!("SELECT COUNT(*) FROM big WHERE a < {threshold}")
        ),
        vec![vec![Value::Int(expected)]],
        "a < {threshold}"
    );
    let sum_b: i64 = data.iter().filter_map(|r| r.b).sum();
    let got = rows(&mut s, "SELECT SUM(b), COUNT(b) FROM big");
    assert_eq!(text(&got[0][0]), sum_b.to_string());
    assert_eq!(
        text(&got[0][1]),
        data.iter().filter(|r| r.b.is_some()).count().to_string()
    );
    let day = rng.below(3_000);
    let cents: i64 = data
        .iter()
        .filter(|r| r.day <= day as i64)
        .map(|r| r.d_cents)
        .sum();
    let got = rows(
        &mut s,
        &format!("SELECT SUM(d) FROM big WHERE e <= DATE '1995-01-01' + INTERVAL {day} DAY"),
    );
    assert_eq!(
        text(&got[0][0]),
        format!("{}.{:02}", cents / 100, cents % 100),
        "day {day}"
    );

    // `{w}` is `1 = 1` in the pipeline and `(SELECT 1) = 1` in the serial plan.
    let x = 1_000 + rng.below(ROWS as u64 - 2_000);
    let y = rng.below(1_000_000) as i64 - 500_000;
    let queries = [
        "SELECT COUNT(*) FROM big WHERE {w}".to_string(),
        "SELECT SUM(a), MIN(c), MAX(e), COUNT(*) FROM big WHERE {w}".into(),
        format!("SELECT COUNT(*), SUM(d) FROM big WHERE a > {x} AND {{w}}"),
        format!("SELECT id, c FROM big WHERE b > {y} AND {{w}}"),
        "SELECT pad, b FROM big WHERE b IS NULL AND {w}".into(),
        "SELECT g, COUNT(*), SUM(d), AVG(a), MIN(b) FROM big WHERE {w} GROUP BY g".into(),
        format!(
            "SELECT g % 3, SUM(a * 2 + b), COUNT(c) FROM big \
             WHERE e >= DATE '1995-01-01' + INTERVAL {} DAY AND {{w}} GROUP BY g % 3",
            x % 3_000
        ),
        "SELECT a + b, CONCAT(c, '-', g), id FROM big WHERE {w}".into(),
        "SELECT g, GROUP_CONCAT(c ORDER BY id DESC SEPARATOR '') FROM big \
         WHERE a % 40 = 0 AND {w} GROUP BY g"
            .into(),
        // Probes: keys, a filter over both sides, columns of both sides out.
        format!(
            "SELECT big.id, dim.name FROM big JOIN dim ON big.g = dim.g \
             WHERE big.a < {x} AND {{w}}"
        ),
        "SELECT dim.name, COUNT(*), SUM(big.d) FROM big JOIN dim ON big.g = dim.g \
         WHERE {w} GROUP BY dim.name"
            .into(),
        format!(
            "SELECT big.c, dim.name FROM big LEFT JOIN dim \
             ON big.g = dim.g AND big.a > dim.g * {} WHERE {{w}}",
            x / 10
        ),
        // A build side large enough to be its own pipeline.
        "SELECT COUNT(*), SUM(b2.b), MAX(b1.c) FROM big b1 JOIN big b2 ON b1.id = b2.a \
         WHERE {w}"
            .into(),
        // Collected rows whose consumer reads some columns (a sort above the scan).
        "SELECT c, id FROM big WHERE {w} ORDER BY c, id LIMIT 100".into(),
        format!("SELECT e FROM big WHERE a < {x} AND {{w}} ORDER BY b, id"),
    ];
    for query in &queries {
        let pipelined = query.replace("{w}", "1 = 1");
        let serial = query.replace("{w}", "(SELECT 1) = 1");
        if parallel {
            let plan = explain(&mut s, &pipelined);
            assert!(plan.contains("parallel pipeline"), "{pipelined}:\n{plan}");
        }
        let expected = rows(&mut s, &serial);
        let got = rows(&mut s, &pipelined);
        assert!(!expected.is_empty(), "{serial}");
        assert_same(
            &sorted_text(&got),
            &sorted_text(&expected),
            &format!("{pipelined} (seed {seed})"),
        );
        if query.contains("ORDER BY c, id") {
            assert!(got == expected, "{pipelined}: the order (seed {seed})");
        }
    }
}
