//! Common table expressions where MySQL 8 and MariaDB 10.11 differ, so the golden
//! files (`slt/select/cte.slt`, which also run against MariaDB) cannot hold them:
//! MySQL's error numbers for the recursive-CTE rules, duplicate names and column
//! lists (MariaDB has its own, 4002 to 4008), `cte_max_recursion_depth` (MariaDB has
//! `max_recursive_iterations` and stops quietly), LIMIT ending a recursion (MariaDB
//! refuses it); and Tarn's own EXPLAIN, prepared statements, and the memory a
//! recursion gives back.

mod common;

use common::{error, rows};

use std::sync::Arc;

use tarn_common::settings::Settings;
use tarn_row::Value;
use tarn_sql::{Engine, Session};

fn engine() -> (tempfile::TempDir, Arc<Engine>) {
    common::engine_with("cte", Settings::default())
}

fn session(engine: &Arc<Engine>) -> Session {
    let mut s = engine.session("root", "localhost");
    s.execute(
        "CREATE DATABASE c; USE c;
         CREATE TABLE emp (id INT PRIMARY KEY, name VARCHAR(20), manager INT, KEY manager_1 (manager));
         INSERT INTO emp VALUES (1, 'ceo', NULL), (2, 'cto', 1), (3, 'dev', 2), (4, 'ops', 2)",
    )
    .expect("setup");
    s
}

fn ints(session: &mut Session, sql: &str) -> Vec<i64> {
    rows(session, sql)
        .into_iter()
        .map(|r| tarn_sql::scalar::cast::to_i64(&r[0]).unwrap_or_else(|| panic!("{sql}: {r:?}")))
        .collect()
}

fn assert_error(session: &mut Session, sql: &str, code: u16, sqlstate: &str, message: &str) {
    let (c, state, text) = error(session, sql);
    assert_eq!((c, state), (code, sqlstate), "{sql}: {text}");
    assert!(text.contains(message), "{sql}: {text} lacks {message:?}");
}

#[test]
fn duplicate_names_and_column_lists_are_mysqls_errors() {
    let (_dir, engine) = engine();
    let mut s = session(&engine);
    assert_error(
        &mut s,
        "WITH a AS (SELECT 1), a AS (SELECT 2) SELECT * FROM a",
        1066,
        "42000",
        "Not unique table/alias: 'a'",
    );
    // The same name in nested WITHs is shadowing, not a duplicate.
    assert_eq!(
        ints(
            &mut s,
            "WITH a AS (SELECT 1 AS x) SELECT x FROM (WITH a AS (SELECT 2 AS x) SELECT x FROM a) AS d"
        ),
        vec![2]
    );
    let columns = "In definition of view, derived table or common table expression, SELECT list \
                   and column names list have different column counts";
    assert_error(
        &mut s,
        "WITH c (a, b) AS (SELECT 1) SELECT * FROM c",
        1353,
        "HY000",
        columns,
    );
    assert_error(
        &mut s,
        "WITH RECURSIVE c (a, b) AS (SELECT 1 UNION ALL SELECT a + 1 FROM c WHERE a < 3) SELECT * FROM c",
        1353,
        "HY000",
        columns,
    );
    assert_error(
        &mut s,
        "WITH c (a, a) AS (SELECT 1, 2) SELECT * FROM c",
        1060,
        "42S21",
        "Duplicate column name 'a'",
    );
    // An unreferenced CTE is not bound (as in MySQL).
    assert_eq!(
        ints(&mut s, "WITH unused AS (SELECT * FROM missing) SELECT 7"),
        vec![7]
    );
}

#[test]
fn recursion_depth_is_bounded_by_cte_max_recursion_depth() {
    let (_dir, engine) = engine();
    let mut s = session(&engine);
    let series = |n: u32| {
        format!(
            "WITH RECURSIVE s (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < {n}) \
             SELECT COUNT(*) FROM s"
        )
    };
    // The default is 1000 runs of the recursive part: the 1000th of a series to 1000
    // produces nothing, which is allowed; a series to 1001 needs a 1001st.
    assert_eq!(ints(&mut s, "SELECT @@cte_max_recursion_depth"), vec![1000]);
    assert_eq!(ints(&mut s, &series(1000)), vec![1000]);
    assert_error(
        &mut s,
        &series(1001),
        3636,
        "HY000",
        "Recursive query aborted after 1001 iterations. Try increasing \
         @@cte_max_recursion_depth to a larger value.",
    );
    s.execute("SET SESSION cte_max_recursion_depth = 5")
        .expect("sets");
    assert_eq!(ints(&mut s, &series(5)), vec![5]);
    assert_error(
        &mut s,
        &series(6),
        3636,
        "HY000",
        "aborted after 6 iterations",
    );
    // A recursion that never ends stops there too.
    assert_error(
        &mut s,
        "WITH RECURSIVE s (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s) SELECT * FROM s",
        3636,
        "HY000",
        "aborted after 6 iterations",
    );
    // UNION DISTINCT over a cycle ends by itself, well within the bound.
    assert_eq!(
        ints(
            &mut s,
            "WITH RECURSIVE s (n) AS (SELECT 0 UNION SELECT (n + 1) % 3 FROM s) SELECT COUNT(*) FROM s"
        ),
        vec![3]
    );
    // 0 allows the anchor alone.
    s.execute("SET SESSION cte_max_recursion_depth = 0")
        .expect("sets");
    assert_error(
        &mut s,
        &series(2),
        3636,
        "HY000",
        "aborted after 1 iterations",
    );
    // Another session keeps the global default; a session started after SET GLOBAL
    // takes the new one.
    let mut other = engine.session("root", "localhost");
    assert_eq!(
        ints(&mut other, "SELECT @@SESSION.cte_max_recursion_depth"),
        vec![1000]
    );
    other
        .execute("SET GLOBAL cte_max_recursion_depth = 20")
        .expect("sets");
    let mut third = engine.session("root", "localhost");
    assert_eq!(ints(&mut third, &series(20)), vec![20]);
    assert_eq!(
        error(&mut third, &series(21)).0,
        3636,
        "the global value bounds a new session"
    );
}

#[test]
fn recursive_part_rules_are_mysqls_errors() {
    let (_dir, engine) = engine();
    let mut s = session(&engine);
    let aggregation = "Recursive Common Table Expression 'r' can contain neither aggregation nor \
                       window functions in recursive query block";
    for sql in [
        "WITH RECURSIVE r (n) AS (SELECT 1 UNION ALL SELECT MAX(n) + 1 FROM r WHERE n < 5) SELECT * FROM r",
        "WITH RECURSIVE r (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 5 GROUP BY n) SELECT * FROM r",
        "WITH RECURSIVE r (n) AS (SELECT 1 UNION ALL SELECT COUNT(*) + n FROM r) SELECT * FROM r",
    ] {
        assert_error(&mut s, sql, 3575, "HY000", aggregation);
    }
    let ordered = "This version of Tarn doesn't yet support 'ORDER BY / LIMIT / SELECT DISTINCT in \
                   recursive query block of Common Table Expression'";
    for sql in [
        "WITH RECURSIVE r (n) AS (SELECT 1 UNION ALL SELECT DISTINCT n + 1 FROM r WHERE n < 5) SELECT * FROM r",
        "WITH RECURSIVE r (n) AS (SELECT 1 UNION ALL (SELECT n + 1 FROM r WHERE n < 5 ORDER BY n)) SELECT * FROM r",
        "WITH RECURSIVE r (n) AS (SELECT 1 UNION ALL (SELECT n + 1 FROM r WHERE n < 5 LIMIT 1)) SELECT * FROM r",
    ] {
        assert_error(&mut s, sql, 1235, "42000", ordered);
    }
    assert_error(
        &mut s,
        "WITH RECURSIVE r (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 5 ORDER BY n) SELECT * FROM r",
        1235,
        "42000",
        "ORDER BY over UNION in recursive Common Table Expression",
    );
    assert_error(
        &mut s,
        "WITH RECURSIVE r (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 3 \
         UNION DISTINCT SELECT n + 2 FROM r WHERE n < 3 UNION ALL SELECT n + 3 FROM r WHERE n < 3) \
         SELECT * FROM r",
        1235,
        "42000",
        "recursive query blocks with UNION DISTINCT then UNION ALL",
    );
    let single = "In recursive query block of Recursive Common Table Expression 'r', the recursive \
                  table must be referenced only once, and not in any subquery";
    for sql in [
        "WITH RECURSIVE r (n) AS (SELECT 1 UNION ALL SELECT a.n + 1 FROM r a, r b WHERE a.n < 3) SELECT * FROM r",
        "WITH RECURSIVE r (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n IN (SELECT n FROM r)) SELECT * FROM r",
        "WITH RECURSIVE r (n) AS (SELECT 1 UNION ALL SELECT d.n + 1 FROM (SELECT n FROM r) AS d WHERE d.n < 3) SELECT * FROM r",
        "WITH RECURSIVE r (n) AS (SELECT 1 UNION ALL SELECT id FROM emp WHERE EXISTS (SELECT 1 FROM r WHERE r.n = emp.manager)) SELECT * FROM r",
    ] {
        assert_error(&mut s, sql, 3577, "HY000", single);
    }
    let padded = "In recursive query block of Recursive Common Table Expression 'r', the recursive \
                  table must neither be in the right argument of a LEFT JOIN";
    for sql in [
        "WITH RECURSIVE r (n) AS (SELECT 1 UNION ALL SELECT e.id FROM emp e LEFT JOIN r ON e.manager = r.n) SELECT * FROM r",
        "WITH RECURSIVE r (n) AS (SELECT 1 UNION ALL SELECT e.id FROM r RIGHT JOIN emp e ON e.manager = r.n) SELECT * FROM r",
    ] {
        assert_error(&mut s, sql, 3576, "HY000", padded);
    }
    assert_error(
        &mut s,
        "WITH RECURSIVE r (n) AS (SELECT n + 1 FROM r WHERE n < 3) SELECT * FROM r",
        3573,
        "HY000",
        "Recursive Common Table Expression 'r' should contain a UNION",
    );
    let first = "Recursive Common Table Expression 'r' should have one or more non-recursive query \
                 blocks followed by one or more recursive ones";
    for sql in [
        "WITH RECURSIVE r (n) AS (SELECT n + 1 FROM r WHERE n < 3 UNION ALL SELECT 1) SELECT * FROM r",
        "WITH RECURSIVE r (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 3 UNION ALL SELECT 5) SELECT * FROM r",
    ] {
        assert_error(&mut s, sql, 3574, "HY000", first);
    }
    assert_error(
        &mut s,
        "WITH RECURSIVE r (n) AS (SELECT 1 UNION ALL SELECT n + 1, n FROM r WHERE n < 3) SELECT * FROM r",
        1222,
        "21000",
        "different number of columns",
    );
    // WITH before UPDATE and DELETE (MySQL's, useful with multi-table forms Tarn
    // lacks) and before INSERT (not MySQL's).
    assert_error(
        &mut s,
        "WITH c AS (SELECT 1 AS id) UPDATE emp SET name = 'x' WHERE id IN (SELECT id FROM c)",
        1235,
        "42000",
        "WITH before UPDATE or DELETE",
    );
    assert_error(
        &mut s,
        "WITH c AS (SELECT 1 AS id) DELETE FROM emp WHERE id IN (SELECT id FROM c)",
        1235,
        "42000",
        "WITH before UPDATE or DELETE",
    );
    assert_eq!(
        error(
            &mut s,
            "WITH c AS (SELECT 9 AS id) INSERT INTO emp (id) SELECT id FROM c"
        )
        .0,
        1064
    );
    // Nothing above changed the table.
    assert_eq!(ints(&mut s, "SELECT COUNT(*) FROM emp"), vec![4]);
}

#[test]
fn limit_ends_a_recursion() {
    let (_dir, engine) = engine();
    let mut s = session(&engine);
    // Without the LIMIT these would run into cte_max_recursion_depth (MySQL 8.0.19).
    assert_eq!(
        ints(
            &mut s,
            "WITH RECURSIVE c AS (SELECT 1 AS a UNION ALL SELECT a + 1 FROM c LIMIT 5) SELECT * FROM c"
        ),
        vec![1, 2, 3, 4, 5]
    );
    assert_eq!(
        ints(
            &mut s,
            "WITH RECURSIVE c AS (SELECT 1 AS a UNION ALL SELECT a + 1 FROM c LIMIT 5 OFFSET 1) \
             SELECT * FROM c"
        ),
        vec![2, 3, 4, 5, 6]
    );
    assert_eq!(
        ints(
            &mut s,
            "WITH RECURSIVE c AS (SELECT 1 AS a UNION SELECT a + 1 FROM c LIMIT 3) SELECT SUM(a) FROM c"
        ),
        vec![6]
    );
    assert!(
        rows(
            &mut s,
            "WITH RECURSIVE c AS (SELECT 1 AS a UNION ALL SELECT a + 1 FROM c LIMIT 0) SELECT * FROM c"
        )
        .is_empty()
    );
}

/// The CTE's columns are the anchor's types (`slt/select/cte.slt` has the cases
/// MariaDB shares): a recursive part's string that is no number of the anchor's
/// integer type is 1366 with MySQL 8's SQLSTATE HY000 (MariaDB: 22007).
#[test]
fn a_recursive_part_converts_to_the_anchors_types_with_mysqls_errors() {
    let (_dir, engine) = engine();
    let mut s = session(&engine);
    assert_error(
        &mut s,
        "WITH RECURSIVE t (n) AS (SELECT 1 UNION ALL SELECT 'x' FROM t WHERE n < 3) SELECT n FROM t",
        1366,
        "HY000",
        "Incorrect integer value: 'x' for column 'n' at row 2",
    );
}

/// EXPLAIN's lines for `sql`.
fn explain(session: &mut Session, sql: &str) -> Vec<String> {
    rows(session, &format!("EXPLAIN {sql}"))
        .into_iter()
        .map(|r| match &r[0] {
            Value::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
            other => panic!("not text: {other:?}"),
        })
        .collect()
}

#[test]
fn explain_shows_the_recursion_and_its_work_table() {
    let (_dir, engine) = engine();
    let mut s = session(&engine);
    let plan = explain(
        &mut s,
        "WITH RECURSIVE tree (id, depth) AS (
           SELECT id, 0 FROM emp WHERE manager IS NULL
           UNION ALL
           SELECT e.id, t.depth + 1 FROM emp e JOIN tree t ON e.manager = t.id)
         SELECT * FROM tree",
    );
    let text = plan.join("\n");
    let cte = plan
        .iter()
        .position(|l| l.trim_start().starts_with("Recursive CTE tree (UNION ALL)"))
        .unwrap_or_else(|| panic!("no recursive CTE node:\n{text}"));
    let work = plan
        .iter()
        .position(|l| l.trim_start().starts_with("Work table of tree"))
        .unwrap_or_else(|| panic!("no work table:\n{text}"));
    assert!(work > cte, "the work table is under the node:\n{text}");
    let indent = |l: &str| l.len() - l.trim_start().len();
    assert!(indent(&plan[work]) > indent(&plan[cte]), "{text}");
    assert!(text.contains("Scan c.emp"), "{text}");

    let text = explain(
        &mut s,
        "WITH RECURSIVE c AS (SELECT 1 AS a UNION SELECT a + 1 FROM c LIMIT 3) SELECT * FROM c",
    )
    .join("\n");
    assert!(
        text.contains("Recursive CTE c (UNION DISTINCT") && text.contains("stop after 3 rows"),
        "{text}"
    );

    // EXPLAIN ANALYZE counts every run's rows at the node and at its work table.
    let analyzed = explain(
        &mut s,
        "ANALYZE WITH RECURSIVE s (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < 10) \
         SELECT n FROM s",
    );
    let line = |prefix: &str| {
        analyzed
            .iter()
            .find(|l| l.trim_start().starts_with(prefix))
            .unwrap_or_else(|| panic!("no {prefix}: {analyzed:#?}"))
            .clone()
    };
    assert!(
        line("Recursive CTE s").contains("actual rows=10"),
        "{analyzed:#?}"
    );
    assert!(
        line("Work table of s").contains("actual rows=10"),
        "{analyzed:#?}"
    );

    // A walk down a large tree looks each level's children up by their key.
    s.execute(
        "SET SESSION cte_max_recursion_depth = 100000;
         CREATE TABLE big (id INT PRIMARY KEY, parent INT, KEY parent_1 (parent));
         INSERT INTO big WITH RECURSIVE s (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < 50000)
           SELECT n, n DIV 2 FROM s;
         ANALYZE TABLE big",
    )
    .expect("a big tree");
    let walk = "WITH RECURSIVE t (id, depth) AS (SELECT id, 0 FROM big WHERE id = 1
                  UNION ALL SELECT b.id, t.depth + 1 FROM t JOIN big b ON b.parent = t.id)
                SELECT COUNT(*), MAX(depth) FROM t";
    let text = explain(&mut s, walk).join("\n");
    assert!(
        text.contains("Index nested loop join") && text.contains("index range on parent_1"),
        "{text}"
    );
    let result = rows(&mut s, walk);
    let got: Vec<Option<i64>> = result[0]
        .iter()
        .map(tarn_sql::scalar::cast::to_i64)
        .collect();
    // 50,000 nodes, the deepest 15 levels below the root (2^15 <= 50,000 < 2^16).
    assert_eq!(got, vec![Some(50_000), Some(15)]);
}

#[test]
fn prepared_statements_run_a_cte_again_with_new_parameters() {
    let (_dir, engine) = engine();
    let mut s = session(&engine);
    let id = s
        .prepare(
            "WITH RECURSIVE below (id) AS (SELECT ? UNION ALL SELECT e.id FROM emp e JOIN below b ON e.manager = b.id)
             SELECT COUNT(*) FROM below",
        )
        .expect("prepares");
    for (root, count) in [(1, 4), (2, 3), (3, 1)] {
        let result = s.execute_prepared(id, &[Value::Int(root)]).expect("runs");
        let got = tarn_sql::scalar::cast::to_i64(&result.all_rows()[0][0]);
        assert_eq!(got, Some(count), "below {root}");
    }
    let id = s
        .prepare("WITH c AS (SELECT id, name FROM emp WHERE id > ?) SELECT COUNT(*) FROM c a JOIN c b ON a.id = b.id")
        .expect("prepares");
    for (after, count) in [(0, 4), (2, 2)] {
        let result = s.execute_prepared(id, &[Value::Int(after)]).expect("runs");
        let got = tarn_sql::scalar::cast::to_i64(&result.all_rows()[0][0]);
        assert_eq!(got, Some(count), "after {after}");
    }
}

#[test]
fn a_long_recursion_holds_only_its_last_runs() {
    let (_dir, engine) = engine();
    let mut s = session(&engine);
    // 20,000 runs of a 2 KB row: 40 MB produced, but only the previous run's row and
    // the running one's are held (and charged) at a time, so 16 MB is enough.
    s.execute(
        "SET SESSION cte_max_recursion_depth = 20000; SET SESSION query_memory_max_bytes = 16777216",
    )
    .expect("sets");
    assert_eq!(
        ints(
            &mut s,
            "WITH RECURSIVE c (n, s) AS (SELECT 1, REPEAT('x', 2000) UNION ALL SELECT n + 1, s FROM c WHERE n < 20000)
             SELECT COUNT(*) FROM c"
        ),
        vec![20000]
    );
    // UNION DISTINCT keeps a key per row, and 40 MB of keys do not fit.
    assert_eq!(
        error(
            &mut s,
            "WITH RECURSIVE c (n, s) AS (SELECT 1, REPEAT('x', 2000) UNION SELECT n + 1, s FROM c WHERE n < 20000)
             SELECT COUNT(*) FROM c"
        )
        .0,
        1038
    );
}
