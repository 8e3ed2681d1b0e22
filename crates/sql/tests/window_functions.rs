//! Window functions where MySQL 8 and MariaDB 10.11 differ (so not in
//! `slt/select/window.slt`, which both must pass): LAG/LEAD with a default, RANGE
//! frames over dates with INTERVAL, MySQL's error numbers; and what only Tarn can
//! promise: EXPLAIN's node, prepared counts, the order of peers, and a randomised
//! comparison of every frame shape with a model.

mod common;

use common::text;

use std::sync::Arc;

use tarn_common::rng::{Rng, test_seed};
use tarn_common::settings::Settings;
use tarn_row::Value;
use tarn_sql::{Engine, Session};

fn engine() -> (tempfile::TempDir, Arc<Engine>) {
    common::engine_with("window", Settings::default())
}

/// The rows of `sql`'s result, each as its values' text joined by spaces.
fn lines(session: &mut Session, sql: &str) -> Vec<String> {
    let mut results = session
        .execute(sql)
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    results
        .pop()
        .map(|r| r.all_rows())
        .unwrap_or_default()
        .iter()
        .map(|row| row.iter().map(text).collect::<Vec<_>>().join(" "))
        .collect()
}

/// The MySQL error `sql` fails with: its number and message.
fn error(session: &mut Session, sql: &str) -> (u16, String) {
    match session.execute(sql) {
        Ok(_) => panic!("{sql}: succeeded"),
        Err(e) => (e.mysql_code(), e.to_string()),
    }
}

fn setup(session: &mut Session) {
    session
        .execute(
            "CREATE DATABASE w; USE w;
             CREATE TABLE emp (id INT PRIMARY KEY, dept VARCHAR(10), name VARCHAR(10), salary INT);
             INSERT INTO emp VALUES (1,'eng','ann',100), (2,'eng','bob',200), (3,'eng','cat',200),
               (4,'eng','dan',300), (5,'ops','eve',150), (6,'ops','fay',150), (7,'ops','gus',NULL)",
        )
        .expect("setup");
}

/// LAG and LEAD with a default (MariaDB has no third argument): the default is read
/// on the current row, and the result's type unifies the value's and the default's.
#[test]
fn lag_and_lead_take_a_default() {
    let (_dir, engine) = engine();
    let mut s = engine.session("root", "localhost");
    setup(&mut s);
    assert_eq!(
        lines(
            &mut s,
            "SELECT id, LAG(salary, 1, 0) OVER (PARTITION BY dept ORDER BY id),
                    LEAD(name, 2, CONCAT('no ', name)) OVER (PARTITION BY dept ORDER BY id),
                    LAG(salary, 1, 'none') OVER (ORDER BY id)
             FROM emp ORDER BY id"
        ),
        [
            "1 0 cat none",
            "2 100 dan 100",
            "3 200 no cat 200",
            "4 200 no dan 200",
            "5 0 gus 300",
            "6 150 no fay 150",
            "7 150 no gus 150",
        ]
    );
}

/// RANGE frames over a DATE order key move by an INTERVAL (MariaDB takes only
/// numeric RANGE offsets).
#[test]
fn range_frames_over_dates_take_intervals() {
    let (_dir, engine) = engine();
    let mut s = engine.session("root", "localhost");
    s.execute(
        "CREATE DATABASE w; USE w; CREATE TABLE sales (id INT PRIMARY KEY, d DATE, amount INT);
         INSERT INTO sales VALUES (1, '2024-01-01', 10), (2, '2024-01-02', 20), (3, '2024-01-02', 5),
           (4, '2024-01-05', 40), (5, '2024-02-01', 1), (6, NULL, 7)",
    )
    .expect("setup");
    assert_eq!(
        lines(
            &mut s,
            "SELECT id, SUM(amount) OVER (ORDER BY d RANGE BETWEEN INTERVAL 1 DAY PRECEDING AND CURRENT ROW),
                    COUNT(*) OVER (ORDER BY d DESC RANGE BETWEEN CURRENT ROW AND INTERVAL 3 DAY FOLLOWING),
                    SUM(amount) OVER (ORDER BY d RANGE BETWEEN CURRENT ROW AND INTERVAL 1 MONTH FOLLOWING)
             FROM sales ORDER BY id"
        ),
        [
            "1 10 1 76",
            "2 35 3 66",
            "3 35 3 66",
            "4 40 3 41",
            "5 1 1 1",
            "6 7 1 7",
        ]
    );
}

/// MySQL's errors for window functions where they may not be, and for windows it
/// refuses (MariaDB words most of these with its own numbers).
#[test]
fn misplaced_window_functions_and_bad_windows_get_mysql_errors() {
    let (_dir, engine) = engine();
    let mut s = engine.session("root", "localhost");
    setup(&mut s);
    let cases: &[(&str, u16, &str)] = &[
        (
            "SELECT id FROM emp WHERE ROW_NUMBER() OVER (ORDER BY id) > 2",
            3593,
            "You cannot use the window function 'row_number' in this context.'",
        ),
        (
            "SELECT dept FROM emp GROUP BY RANK() OVER (ORDER BY id)",
            3593,
            "'rank'",
        ),
        (
            "SELECT dept, COUNT(*) FROM emp GROUP BY dept HAVING SUM(salary) OVER () > 1",
            3593,
            "'sum'",
        ),
        (
            "SELECT SUM(ROW_NUMBER() OVER (ORDER BY id)) FROM emp",
            3593,
            "'row_number'",
        ),
        (
            "SELECT SUM(ROW_NUMBER() OVER (ORDER BY id)) OVER () FROM emp",
            3593,
            "'row_number'",
        ),
        (
            "SELECT id FROM emp JOIN emp e2 ON ROW_NUMBER() OVER () = e2.id",
            3593,
            "'row_number'",
        ),
        (
            "UPDATE emp SET salary = ROW_NUMBER() OVER (ORDER BY id)",
            3593,
            "'row_number'",
        ),
        (
            "SELECT id, ROW_NUMBER() OVER (ORDER BY id) AS rn FROM emp HAVING rn > 2",
            3594,
            "You cannot use the alias 'rn' of an expression containing a window function in this context.'",
        ),
        (
            "SELECT ROW_NUMBER() OVER (ORDER BY dept) AS rn FROM emp GROUP BY rn",
            3594,
            "alias 'rn'",
        ),
        (
            "SELECT SUM(id) OVER (PARTITION BY ROW_NUMBER() OVER ()) FROM emp",
            3595,
            "You cannot nest a window function in the specification of window '<unnamed window>'.",
        ),
        (
            "SELECT SUM(id) OVER w FROM emp WINDOW w AS (ORDER BY RANK() OVER ())",
            3595,
            "window 'w'",
        ),
        (
            "SELECT SUM(id) OVER v FROM emp WINDOW w AS ()",
            3579,
            "Window name 'v' is not defined.",
        ),
        (
            "SELECT SUM(id) OVER w FROM emp WINDOW w AS (), W AS ()",
            3591,
            "Window 'W' is defined twice.",
        ),
        (
            "SELECT SUM(id) OVER w FROM emp WINDOW w AS (v), v AS (w)",
            3580,
            "There is a circularity in the window dependency graph.",
        ),
        (
            "SELECT SUM(id) OVER (w PARTITION BY dept) FROM emp WINDOW w AS ()",
            3581,
            "A window which depends on another cannot define partitioning.",
        ),
        (
            "SELECT SUM(id) OVER (w ORDER BY id) FROM emp WINDOW w AS (ROWS UNBOUNDED PRECEDING)",
            3582,
            "Window 'w' has a frame definition, so cannot be referenced by another window.",
        ),
        (
            "SELECT SUM(id) OVER (w ORDER BY id) FROM emp WINDOW w AS (ORDER BY dept)",
            3583,
            "Window '<unnamed window>' cannot inherit 'w' since both contain an ORDER BY clause.",
        ),
        (
            "SELECT SUM(id) OVER (ORDER BY id ROWS BETWEEN UNBOUNDED FOLLOWING AND UNBOUNDED FOLLOWING) FROM emp",
            3584,
            "frame start cannot be UNBOUNDED FOLLOWING.",
        ),
        (
            "SELECT SUM(id) OVER (ORDER BY id ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED PRECEDING) FROM emp",
            3585,
            "frame end cannot be UNBOUNDED PRECEDING.",
        ),
        (
            "SELECT SUM(id) OVER (ORDER BY id ROWS 1.5 PRECEDING) FROM emp",
            3586,
            "frame start or end is negative, NULL or of non-integral type",
        ),
        (
            "SELECT SUM(id) OVER (ORDER BY id, dept RANGE 1 PRECEDING) FROM emp",
            3587,
            "requires exactly one ORDER BY expression, of numeric or temporal type",
        ),
        (
            "SELECT SUM(id) OVER (ORDER BY name RANGE 1 PRECEDING) FROM emp",
            3587,
            "RANGE N PRECEDING/FOLLOWING",
        ),
        (
            "SELECT SUM(id) OVER (ORDER BY id RANGE INTERVAL 1 DAY PRECEDING) FROM emp",
            3589,
            "INTERVAL bound value not allowed.",
        ),
        (
            "SELECT SUM(id) OVER (ORDER BY CURDATE() RANGE 1 PRECEDING) FROM emp",
            3588,
            "Only INTERVAL bound value allowed.",
        ),
        (
            "SELECT SUM(id) OVER (ORDER BY id ROWS INTERVAL 1 DAY PRECEDING) FROM emp",
            3596,
            "INTERVAL can only be used with RANGE frames.",
        ),
        (
            "SELECT SUM(id) OVER (ORDER BY 1) FROM emp",
            3592,
            "uses legacy position indication",
        ),
        (
            "SELECT COUNT(DISTINCT dept) OVER () FROM emp",
            1235,
            "DISTINCT",
        ),
        (
            "SELECT SUM(id) OVER (ORDER BY id GROUPS 1 PRECEDING) FROM emp",
            1235,
            "GROUPS",
        ),
        (
            "SELECT NTILE(0) OVER (ORDER BY id) FROM emp",
            1210,
            "Incorrect arguments to ntile",
        ),
        (
            "SELECT NTILE(id) OVER (ORDER BY id) FROM emp",
            1210,
            "Incorrect arguments to ntile",
        ),
        (
            "SELECT LAG(id, -1) OVER (ORDER BY id) FROM emp",
            1210,
            "Incorrect arguments to lag",
        ),
        (
            "SELECT NTH_VALUE(id, 0) OVER (ORDER BY id) FROM emp",
            1210,
            "Incorrect arguments to nth_value",
        ),
        ("SELECT ROW_NUMBER(id) OVER () FROM emp", 1582, "ROW_NUMBER"),
        (
            "SELECT ABS(id) OVER () FROM emp",
            1064,
            "not a window function",
        ),
    ];
    for (sql, code, message) in cases {
        let (got, text) = error(&mut s, sql);
        assert_eq!(got, *code, "{sql}: {text}");
        assert!(text.contains(message), "{sql}: {text}");
    }
    // The session goes on; frames as wide as a BIGINT UNSIGNED are the partition.
    assert_eq!(
        lines(
            &mut s,
            "SELECT COUNT(*) OVER (ORDER BY id ROWS BETWEEN 18446744073709551615 PRECEDING
                                   AND 18446744073709551615 FOLLOWING) FROM emp LIMIT 1"
        ),
        ["7"]
    );
}

/// EXPLAIN shows one node per distinct window; calls that ignore the frame share a
/// node with the calls of the same partitioning and order.
#[test]
fn explain_shows_one_window_node_per_window() {
    let (_dir, engine) = engine();
    let mut s = engine.session("root", "localhost");
    setup(&mut s);
    let plan = lines(
        &mut s,
        "EXPLAIN SELECT id, ROW_NUMBER() OVER w, SUM(salary) OVER w,
                RANK() OVER (w ROWS 1 PRECEDING), SUM(salary) OVER (ORDER BY id)
         FROM emp WINDOW w AS (PARTITION BY dept ORDER BY salary) ORDER BY id",
    )
    .join("\n");
    let windows: Vec<&str> = plan.lines().filter(|l| l.contains("Window (")).collect();
    assert_eq!(windows.len(), 2, "{plan}");
    assert!(
        windows.iter().any(|l| l.contains(
            "Window (3 functions, partition by 1 keys, order by 1 keys, RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)"
        )),
        "{plan}"
    );
}

/// NTILE's buckets and LAG's offset may be parameters of a prepared statement.
#[test]
fn prepared_counts() {
    let (_dir, engine) = engine();
    let mut s = engine.session("root", "localhost");
    setup(&mut s);
    let id = s
        .prepare("SELECT id, NTILE(?) OVER (ORDER BY id), LAG(id, ?) OVER (ORDER BY id) FROM emp ORDER BY id")
        .expect("prepares");
    let run = |s: &mut Session, n: i64, lag: i64| -> Vec<String> {
        s.execute_prepared(id, &[Value::Int(n), Value::Int(lag)])
            .expect("runs")
            .all_rows()
            .iter()
            .map(|r| r.iter().map(text).collect::<Vec<_>>().join(" "))
            .collect()
    };
    assert_eq!(
        run(&mut s, 2, 3),
        [
            "1 1 NULL", "2 1 NULL", "3 1 NULL", "4 1 1", "5 2 2", "6 2 3", "7 2 4"
        ]
    );
    assert_eq!(
        run(&mut s, 7, 0),
        [
            "1 1 1", "2 2 2", "3 3 3", "4 4 4", "5 5 5", "6 6 6", "7 7 7"
        ]
    );
    let err = s
        .execute_prepared(id, &[Value::Int(-1), Value::Int(1)])
        .expect_err("a negative bucket count");
    assert_eq!(err.mysql_code(), 1210);
}

/// Peers (rows equal on every order key) keep their input order, here the primary
/// key's: LAST_VALUE with the default frame is the last peer's value. (MySQL leaves
/// the order of peers open, so this is Tarn's promise, not MySQL's.)
#[test]
fn last_value_with_the_default_frame_reads_the_last_peer() {
    let (_dir, engine) = engine();
    let mut s = engine.session("root", "localhost");
    setup(&mut s);
    assert_eq!(
        lines(
            &mut s,
            "SELECT id, LAST_VALUE(name) OVER (ORDER BY salary), FIRST_VALUE(name) OVER (ORDER BY salary)
             FROM emp ORDER BY id"
        ),
        [
            "1 ann gus",
            "2 cat gus",
            "3 cat gus",
            "4 dan gus",
            "5 fay gus",
            "6 fay gus",
            "7 gus gus",
        ]
    );
}

/// One row of the model: its partition, order key, tie-breaker and value.
#[derive(Clone, Copy)]
struct Row {
    id: i64,
    g: i64,
    k: Option<i64>,
    v: Option<i64>,
}

/// A frame bound as SQL, and how the model reads it.
#[derive(Clone, Copy, Debug)]
enum Bound {
    UnboundedPreceding,
    Preceding(i64),
    Current,
    Following(i64),
    UnboundedFollowing,
}

impl Bound {
    fn sql(self) -> String {
        match self {
            Bound::UnboundedPreceding => "UNBOUNDED PRECEDING".into(),
            Bound::Preceding(n) => format!("{n} PRECEDING"),
            Bound::Current => "CURRENT ROW".into(),
            Bound::Following(n) => format!("{n} FOLLOWING"),
            Bound::UnboundedFollowing => "UNBOUNDED FOLLOWING".into(),
        }
    }
}

/// Every frame shape (ROWS over a unique order, RANGE by peers and by value, in both
/// directions) over random partitions with ties and NULLs: SUM, COUNT, MIN, MAX,
/// FIRST_VALUE and NTH_VALUE agree with a model that folds each row's frame afresh.
#[test]
fn frames_agree_with_a_model() {
    let seed = test_seed("frames_agree_with_a_model");
    let mut rng = Rng::new(seed);
    let (_dir, engine) = engine();
    let mut s = engine.session("root", "localhost");
    s.execute("CREATE DATABASE w; USE w; CREATE TABLE t (id INT PRIMARY KEY, g INT, k INT, v INT)")
        .expect("setup");
    let count = 300 + rng.below(700) as i64;
    let mut rows = Vec::new();
    for id in 0..count {
        let maybe = |rng: &mut Rng, range: u64| {
            (!rng.percent(10)).then(|| rng.below(range) as i64 - (range / 4) as i64)
        };
        rows.push(Row {
            id,
            g: rng.below(4) as i64,
            k: maybe(&mut rng, 40),
            v: maybe(&mut rng, 1000),
        });
    }
    let sql = |x: Option<i64>| x.map_or("NULL".to_string(), |x| x.to_string());
    for chunk in rows.chunks(500) {
        let values: Vec<String> = chunk
            .iter()
            .map(|r| format!("({}, {}, {}, {})", r.id, r.g, sql(r.k), sql(r.v)))
            .collect();
        s.execute(&format!("INSERT INTO t VALUES {}", values.join(",")))
            .expect("loads");
    }
    let bounds = |rng: &mut Rng| -> (Bound, Bound) {
        let pick = |rng: &mut Rng, start: bool| match rng.below(5) {
            0 if start => Bound::UnboundedPreceding,
            0 => Bound::UnboundedFollowing,
            1 => Bound::Preceding(rng.below(6) as i64),
            2 => Bound::Current,
            3 => Bound::Following(rng.below(6) as i64),
            _ if start => Bound::UnboundedPreceding,
            _ => Bound::UnboundedFollowing,
        };
        (pick(rng, true), pick(rng, false))
    };
    for _ in 0..24 {
        let rows_units = rng.percent(50);
        let descending = rng.percent(50);
        let (start, end) = bounds(&mut rng);
        let direction = if descending { " DESC" } else { "" };
        let order = if rows_units {
            format!("k{direction}, id{direction}")
        } else {
            format!("k{direction}")
        };
        let frame = format!(
            "{} BETWEEN {} AND {}",
            if rows_units { "ROWS" } else { "RANGE" },
            start.sql(),
            end.sql()
        );
        let window = format!("PARTITION BY g ORDER BY {order} {frame}");
        let query = format!(
            "SELECT id, SUM(v) OVER w, COUNT(v) OVER w, COUNT(*) OVER w, MIN(v) OVER w, MAX(v) OVER w,
                    FIRST_VALUE(v) OVER w, NTH_VALUE(v, 2) OVER w
             FROM t WINDOW w AS ({window}) ORDER BY id"
        );
        let got = lines(&mut s, &query);
        // The model: each partition sorted, each row's frame as a set of positions.
        let cmp_key = |a: &Row, b: &Row| {
            let by_key = a.k.cmp(&b.k); // None (NULL) first, as SQL sorts
            let by_key = if descending { by_key.reverse() } else { by_key };
            if rows_units {
                let by_id = if descending {
                    b.id.cmp(&a.id)
                } else {
                    a.id.cmp(&b.id)
                };
                by_key.then(by_id)
            } else {
                by_key
            }
        };
        let mut expected = Vec::new();
        for r in &rows {
            let mut part: Vec<Row> = rows.iter().filter(|x| x.g == r.g).copied().collect();
            part.sort_by(|a, b| cmp_key(a, b).then(a.id.cmp(&b.id)));
            let p = part.iter().position(|x| x.id == r.id).unwrap() as i64;
            let n = part.len() as i64;
            let in_frame = |q: i64| -> bool {
                let x = &part[q as usize];
                if rows_units {
                    let lo = match start {
                        Bound::UnboundedPreceding => 0,
                        Bound::Preceding(m) => p - m,
                        Bound::Current => p,
                        Bound::Following(m) => p + m,
                        Bound::UnboundedFollowing => n,
                    };
                    let hi = match end {
                        Bound::UnboundedPreceding => -1,
                        Bound::Preceding(m) => p - m,
                        Bound::Current => p,
                        Bound::Following(m) => p + m,
                        Bound::UnboundedFollowing => n - 1,
                    };
                    return lo <= q && q <= hi;
                }
                // RANGE: by the key's value, along the order's direction; a NULL
                // key is a peer of NULLs only.
                let along = |key: i64| if descending { -key } else { key };
                let after_start = match (start, x.k, r.k) {
                    (Bound::UnboundedPreceding, _, _) => true,
                    (Bound::UnboundedFollowing, _, _) => false,
                    (_, None, None) => true,
                    (_, None, Some(_)) => descending,
                    (_, Some(_), None) => !descending,
                    (b, Some(xk), Some(rk)) => {
                        let offset = match b {
                            Bound::Preceding(m) => -m,
                            Bound::Following(m) => m,
                            _ => 0,
                        };
                        along(xk) >= along(rk) + offset
                    }
                };
                let before_end = match (end, x.k, r.k) {
                    (Bound::UnboundedFollowing, _, _) => true,
                    (Bound::UnboundedPreceding, _, _) => false,
                    (_, None, None) => true,
                    (_, None, Some(_)) => !descending,
                    (_, Some(_), None) => descending,
                    (b, Some(xk), Some(rk)) => {
                        let offset = match b {
                            Bound::Preceding(m) => -m,
                            Bound::Following(m) => m,
                            _ => 0,
                        };
                        along(xk) <= along(rk) + offset
                    }
                };
                after_start && before_end
            };
            let frame: Vec<&Row> = (0..n)
                .filter(|&q| in_frame(q))
                .map(|q| &part[q as usize])
                .collect();
            let values: Vec<i64> = frame.iter().filter_map(|x| x.v).collect();
            let opt = |x: Option<i64>| x.map_or("NULL".to_string(), |x| x.to_string());
            expected.push(format!(
                "{} {} {} {} {} {} {} {}",
                r.id,
                opt((!values.is_empty()).then(|| values.iter().sum())),
                values.len(),
                frame.len(),
                opt(values.iter().min().copied()),
                opt(values.iter().max().copied()),
                opt(frame.first().and_then(|x| x.v)),
                opt(frame.get(1).and_then(|x| x.v)),
            ));
        }
        // FIRST_VALUE and NTH_VALUE read positions, which RANGE peers leave open:
        // compare them only where the order is unique.
        for (g, e) in got.iter().zip(&expected) {
            let (g, e): (Vec<&str>, Vec<&str>) = (g.split(' ').collect(), e.split(' ').collect());
            let compared = if rows_units { 8 } else { 6 };
            assert_eq!(g[..compared], e[..compared], "seed {seed}: {query}");
        }
        assert_eq!(got.len(), expected.len(), "seed {seed}: {query}");
    }
}

/// MySQL's optional words: `NTH_VALUE(...) FROM FIRST` and `RESPECT NULLS` are the
/// only behaviour there is; `FROM LAST` and `IGNORE NULLS` are refused (1235), as
/// MySQL does. MariaDB parses none of them.
#[test]
fn nth_value_from_first_and_respect_nulls() {
    let (_dir, engine) = engine();
    let mut s = engine.session("root", "localhost");
    setup(&mut s);
    assert_eq!(
        lines(
            &mut s,
            "SELECT id, NTH_VALUE(name, 2) FROM FIRST OVER (ORDER BY id),
                    FIRST_VALUE(salary) RESPECT NULLS OVER (ORDER BY id DESC)
             FROM emp WHERE id < 4 ORDER BY id"
        ),
        ["1 NULL 200", "2 bob 200", "3 bob 200"]
    );
    for sql in [
        "SELECT NTH_VALUE(name, 2) FROM LAST OVER (ORDER BY id) FROM emp",
        "SELECT FIRST_VALUE(salary) IGNORE NULLS OVER (ORDER BY id) FROM emp",
    ] {
        assert_eq!(error(&mut s, sql).0, 1235, "{sql}");
    }
}

/// A window holds its whole input: past `query_memory_max_bytes` the statement fails
/// with 1038 and the session goes on.
#[test]
fn a_window_is_bounded_by_the_statement_memory() {
    let (_dir, engine) = engine();
    let mut s = engine.session("root", "localhost");
    s.execute("CREATE DATABASE w; USE w; CREATE TABLE big (id INT PRIMARY KEY, s VARCHAR(200))")
        .expect("setup");
    let values: Vec<String> = (0..5000)
        .map(|id| format!("({id}, '{}')", "x".repeat(150)))
        .collect();
    s.execute(&format!("INSERT INTO big VALUES {}", values.join(",")))
        .expect("loads");
    let sql = "SELECT id, LAG(s) OVER (ORDER BY id DESC) FROM big";
    s.execute("SET query_memory_max_bytes = 1048576")
        .expect("sets 1 MiB");
    // Without the window the rows stream through.
    assert_eq!(lines(&mut s, "SELECT id, s FROM big").len(), 5000);
    let e = s
        .execute(sql)
        .expect_err("the window needs more than 1 MiB");
    assert_eq!(e.mysql_code(), 1038, "{e}");
    s.execute("SET query_memory_max_bytes = DEFAULT")
        .expect("resets");
    assert_eq!(lines(&mut s, sql).len(), 5000);
}
