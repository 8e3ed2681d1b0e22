//! FOREIGN KEY constraints where the golden files cannot check them: the errors of
//! a definition (MariaDB answers most with 1005 "errno: 150" where MySQL 8 has its
//! own numbers), the cascade depth bound, the locks the checks take (two sessions),
//! definitions surviving a restart, and a seeded model test of parent and child
//! changes with CASCADE, SET NULL and RESTRICT. The rest is in
//! slt/ddl/foreign_keys.slt and slt/dml/foreign_keys.slt.

mod common;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tarn_common::rng::{Rng, test_seed};
use tarn_common::settings::Settings;
use tarn_row::Value;
use tarn_sql::{Engine, Session};

fn engine() -> (tempfile::TempDir, Arc<Engine>) {
    common::engine_with(
        "foreign_keys",
        Settings {
            lock_wait_timeout_s: 2,
            ..Settings::default()
        },
    )
}

fn session(engine: &Arc<Engine>) -> Session {
    let mut s = engine.session("root", "localhost");
    s.execute("CREATE DATABASE IF NOT EXISTS t; USE t")
        .expect("t");
    s
}

fn run(s: &mut Session, sql: &str) {
    s.execute(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
}

/// The error number and message of `sql` (0 and "" if it succeeds).
fn error(s: &mut Session, sql: &str) -> (u16, String) {
    match s.execute(sql) {
        Ok(_) => (0, String::new()),
        Err(e) => (e.mysql_code(), e.to_string()),
    }
}

fn ints(s: &mut Session, sql: &str) -> Vec<Vec<Option<i64>>> {
    let mut results = s.execute(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    results
        .pop()
        .map(|r| r.all_rows())
        .unwrap_or_default()
        .into_iter()
        .map(|row| {
            row.iter()
                .map(|v| match v {
                    Value::Null => None,
                    Value::Int(i) => Some(*i),
                    Value::UInt(u) => Some(*u as i64),
                    other => panic!("{sql}: not an integer: {other:?}"),
                })
                .collect()
        })
        .collect()
}

#[test]
fn definitions_are_checked_as_mysql_8_checks_them() {
    let (_dir, engine) = engine();
    let mut s = session(&engine);
    run(
        &mut s,
        "CREATE TABLE p (id INT PRIMARY KEY, a INT, b BIGINT, n INT, name VARCHAR(10), KEY (a))",
    );
    let cases: &[(&str, u16, &str)] = &[
        (
            "CREATE TABLE c (x INT, FOREIGN KEY (x) REFERENCES nope (id))",
            1824,
            "Failed to open the referenced table 'nope'",
        ),
        (
            "CREATE TABLE c (x INT, FOREIGN KEY (x) REFERENCES p (n))",
            1822,
            "Failed to add the foreign key constraint. Missing index for constraint 'c_ibfk_1' \
             in the referenced table 'p'",
        ),
        (
            "CREATE TABLE c (x INT, FOREIGN KEY (x) REFERENCES p (zz))",
            3734,
            "Missing column 'zz' for constraint 'c_ibfk_1' in the referenced table 'p'",
        ),
        (
            "CREATE TABLE c (x INT, CONSTRAINT k FOREIGN KEY (x) REFERENCES p (name))",
            3780,
            "Referencing column 'x' and referenced column 'name' in foreign key constraint 'k' \
             are incompatible.",
        ),
        (
            "CREATE TABLE c (x BIGINT, FOREIGN KEY (x) REFERENCES p (id))",
            3780,
            "are incompatible",
        ),
        (
            "CREATE TABLE c (x INT NOT NULL, FOREIGN KEY (x) REFERENCES p (id) ON DELETE SET NULL)",
            1830,
            "Column 'x' cannot be NOT NULL: needed in a foreign key constraint 'c_ibfk_1' SET NULL",
        ),
        (
            "CREATE TABLE c (x INT, FOREIGN KEY (x) REFERENCES p (id) ON UPDATE SET DEFAULT)",
            1215,
            "SET DEFAULT",
        ),
        (
            "CREATE TABLE c (x INT, y INT, FOREIGN KEY (x, y) REFERENCES p (id))",
            1239,
            "Key reference and table reference don't match",
        ),
        (
            "CREATE TABLE c (x INT, FOREIGN KEY (nope) REFERENCES p (id))",
            1072,
            "Key column 'nope' doesn't exist in table",
        ),
    ];
    for (sql, code, message) in cases {
        let (got, text) = error(&mut s, sql);
        assert_eq!(got, *code, "{sql}: {text}");
        assert!(text.contains(message), "{sql}: {text}");
    }
    // Nothing was created by the failures.
    assert_eq!(error(&mut s, "SELECT * FROM c").0, 1146);
    // Names are unique in the database (1826), whichever table has them.
    run(
        &mut s,
        "CREATE TABLE c1 (x INT, CONSTRAINT fk FOREIGN KEY (x) REFERENCES p (id))",
    );
    let (got, text) = error(
        &mut s,
        "CREATE TABLE c2 (x INT, CONSTRAINT FK FOREIGN KEY (x) REFERENCES p (a))",
    );
    assert_eq!(got, 1826, "{text}");
    assert!(
        text.contains("Duplicate foreign key constraint name 'FK'"),
        "{text}"
    );
    // Dropping a parent: 3730 with MySQL's text (MariaDB: 1451).
    let (got, text) = error(&mut s, "DROP TABLE p");
    assert_eq!(got, 3730);
    assert_eq!(
        text,
        "Cannot drop table 'p' referenced by a foreign key constraint 'fk' on table 'c1'."
    );
    // ... but not with foreign_key_checks = 0, and then not its existence either.
    run(
        &mut s,
        "SET foreign_key_checks = 0; DROP TABLE p; \
         CREATE TABLE c3 (x INT, FOREIGN KEY (x) REFERENCES later (id))",
    );
    run(&mut s, "SET foreign_key_checks = 1");
    // A child of a missing parent takes no row but NULL.
    assert_eq!(error(&mut s, "INSERT INTO c3 VALUES (1)").0, 1452);
    run(&mut s, "INSERT INTO c3 VALUES (NULL)");
    // A generated name counts past the table's largest.
    run(
        &mut s,
        "CREATE TABLE p (id INT PRIMARY KEY); \
         CREATE TABLE g (x INT, y INT, CONSTRAINT g_ibfk_5 FOREIGN KEY (x) REFERENCES p (id), \
         FOREIGN KEY (y) REFERENCES p (id))",
    );
    let names = s
        .execute(
            "SELECT constraint_name FROM information_schema.referential_constraints \
             WHERE table_name = 'g' ORDER BY 1",
        )
        .unwrap()
        .pop()
        .unwrap()
        .all_rows();
    assert_eq!(
        names,
        vec![
            vec![Value::Bytes(b"g_ibfk_5".to_vec())],
            vec![Value::Bytes(b"g_ibfk_6".to_vec())]
        ]
    );
}

/// A column-level REFERENCES is ignored, as InnoDB ignores it (MariaDB 10.5+ makes
/// it a constraint); CREATE TABLE ... LIKE copies no foreign key (MySQL's rule); a
/// database whose table another database references is not dropped (3730).
#[test]
fn inline_references_like_and_drop_database() {
    let (_dir, engine) = engine();
    let mut s = session(&engine);
    run(
        &mut s,
        "CREATE TABLE p (id INT PRIMARY KEY); \
         CREATE TABLE inline (id INT PRIMARY KEY, pid INT REFERENCES p (id)); \
         INSERT INTO inline VALUES (1, 99); \
         CREATE TABLE c (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES p (id)); \
         CREATE TABLE c_like LIKE c; INSERT INTO c_like VALUES (1, 99)",
    );
    assert_eq!(error(&mut s, "INSERT INTO c VALUES (1, 99)").0, 1452);
    run(
        &mut s,
        "CREATE DATABASE other; \
         CREATE TABLE other.c (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES t.p (id))",
    );
    let (code, text) = error(&mut s, "DROP DATABASE t");
    assert_eq!(code, 3730, "{text}");
    assert_eq!(
        text,
        "Cannot drop table 'p' referenced by a foreign key constraint 'c_ibfk_1' on table 'c'."
    );
    // The other database's constraint names the parent with its database.
    let sql = common::text(&common::rows(&mut s, "SHOW CREATE TABLE other.c")[0][1]);
    assert!(
        sql.contains("CONSTRAINT `c_ibfk_1` FOREIGN KEY (`pid`) REFERENCES `t`.`p` (`id`)"),
        "{sql}"
    );
    run(&mut s, "DROP DATABASE other; DROP DATABASE t");
}

/// ALTER TABLE on a parent: a referenced column renamed is renamed in the
/// constraints that reference it (MySQL 8); one dropped is 1829; an index a
/// constraint needs dropped is 1553.
#[test]
fn altering_a_parent_keeps_its_references() {
    let (_dir, engine) = engine();
    let mut s = session(&engine);
    run(
        &mut s,
        "CREATE TABLE p (id INT PRIMARY KEY, code INT, KEY (code)); \
         CREATE TABLE c (id INT PRIMARY KEY, pc INT, \
           CONSTRAINT c_code FOREIGN KEY (pc) REFERENCES p (code) ON DELETE CASCADE); \
         INSERT INTO p VALUES (1, 10); INSERT INTO c VALUES (1, 10)",
    );
    let (code, text) = error(&mut s, "ALTER TABLE p DROP COLUMN code");
    assert_eq!(code, 1829, "{text}");
    assert_eq!(
        text,
        "Cannot drop column 'code': needed in a foreign key constraint 'c_code' of table 'c'"
    );
    assert_eq!(error(&mut s, "ALTER TABLE p DROP INDEX code").0, 1553);
    // A type change on either side that breaks the pair: 3780.
    assert_eq!(error(&mut s, "ALTER TABLE p MODIFY code BIGINT").0, 3780);
    assert_eq!(error(&mut s, "ALTER TABLE c MODIFY pc VARCHAR(5)").0, 3780);
    run(&mut s, "ALTER TABLE p RENAME COLUMN code TO kode");
    let rows = s
        .execute(
            "SELECT referenced_column_name FROM information_schema.key_column_usage \
             WHERE constraint_name = 'c_code'",
        )
        .unwrap()
        .pop()
        .unwrap()
        .all_rows();
    assert_eq!(rows, vec![vec![Value::Bytes(b"kode".to_vec())]]);
    assert_eq!(error(&mut s, "INSERT INTO c VALUES (2, 11)").0, 1452);
    run(&mut s, "INSERT INTO c VALUES (2, 10); DELETE FROM p");
    assert_eq!(ints(&mut s, "SELECT COUNT(*) FROM c"), vec![vec![Some(0)]]);
    // A change of another column rebuilds the parent and keeps the references.
    run(
        &mut s,
        "INSERT INTO p VALUES (2, 20); ALTER TABLE p ADD COLUMN extra INT FIRST; \
         INSERT INTO c VALUES (3, 20)",
    );
    assert_eq!(error(&mut s, "INSERT INTO c VALUES (4, 21)").0, 1452);
}

/// A chain of ON DELETE CASCADE deeper than 15 fails with 3008 and changes nothing.
#[test]
fn cascades_deeper_than_fifteen_fail() {
    let (_dir, engine) = engine();
    let mut s = session(&engine);
    run(
        &mut s,
        "CREATE TABLE chain (id INT PRIMARY KEY, up INT, KEY (up), \
         FOREIGN KEY (up) REFERENCES chain (id) ON DELETE CASCADE)",
    );
    run(&mut s, "INSERT INTO chain VALUES (0, NULL)");
    for i in 1..=16 {
        run(
            &mut s,
            &format!("INSERT INTO chain VALUES ({i}, {})", i - 1),
        );
    }
    // Deleting row 1 cascades 15 deep (rows 2..=16): allowed.
    run(&mut s, "BEGIN");
    run(&mut s, "DELETE FROM chain WHERE id = 1");
    assert_eq!(
        ints(&mut s, "SELECT COUNT(*) FROM chain"),
        vec![vec![Some(1)]]
    );
    run(&mut s, "ROLLBACK");
    let (code, text) = error(&mut s, "DELETE FROM chain WHERE id = 0");
    assert_eq!(code, 3008, "{text}");
    assert_eq!(
        text,
        "Foreign key cascade delete/update exceeds max depth of 15."
    );
    assert_eq!(
        ints(&mut s, "SELECT COUNT(*) FROM chain"),
        vec![vec![Some(17)]]
    );
}

/// The child's check share-locks the parent row: a concurrent delete of that parent
/// waits for the child's transaction (and fails when the child commits), and a
/// child insert waits for an uncommitted delete of its parent.
#[test]
fn checks_lock_the_rows_they_rely_on() {
    let (_dir, engine) = engine();
    let mut a = session(&engine);
    let mut b = session(&engine);
    run(
        &mut a,
        "CREATE TABLE p (id INT PRIMARY KEY); \
         CREATE TABLE c (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES p (id)); \
         INSERT INTO p VALUES (1), (2)",
    );
    // A's child row holds a shared lock on parent 1: B's delete waits, times out.
    run(&mut a, "BEGIN; INSERT INTO c VALUES (1, 1)");
    let started = Instant::now();
    assert_eq!(error(&mut b, "DELETE FROM p WHERE id = 1").0, 1205);
    assert!(started.elapsed() >= Duration::from_millis(1500));
    // B waits while A is open, then finds A's child once A commits: 1451.
    let waiter = std::thread::spawn(move || {
        let started = Instant::now();
        let result = error(&mut b, "DELETE FROM p WHERE id = 1");
        (result, started.elapsed(), b)
    });
    std::thread::sleep(Duration::from_millis(300));
    run(&mut a, "COMMIT");
    let ((code, text), waited, mut b) = waiter.join().unwrap();
    assert_eq!(code, 1451, "{text}");
    assert!(waited >= Duration::from_millis(250), "{waited:?}");
    // The other way: B deletes parent 2 (not committed); A's child insert waits.
    run(&mut b, "BEGIN; DELETE FROM p WHERE id = 2");
    let inserter = std::thread::spawn(move || {
        let started = Instant::now();
        let result = error(&mut a, "INSERT INTO c VALUES (2, 2)");
        (result, started.elapsed())
    });
    std::thread::sleep(Duration::from_millis(300));
    run(&mut b, "ROLLBACK");
    let ((code, text), waited) = inserter.join().unwrap();
    assert_eq!(code, 0, "{text}");
    assert!(waited >= Duration::from_millis(250), "{waited:?}");
}

/// The definitions are in catalog.json: after a restart they are shown and enforced,
/// and a catalog without foreign keys (written before they existed) still opens.
#[test]
fn definitions_survive_a_restart() {
    let (dir, engine) = engine();
    {
        let mut s = session(&engine);
        run(
            &mut s,
            "CREATE TABLE p (id INT PRIMARY KEY); \
             CREATE TABLE c (id INT PRIMARY KEY, pid INT, \
             CONSTRAINT c_p FOREIGN KEY (pid) REFERENCES p (id) ON DELETE CASCADE ON UPDATE SET NULL); \
             INSERT INTO p VALUES (1), (2); INSERT INTO c VALUES (1, 1), (2, 2)",
        );
    }
    drop(engine);
    let engine = Engine::open(&Settings {
        data_dir: dir.path().to_path_buf(),
        ..Settings::default()
    })
    .expect("the engine reopens");
    let mut s = session(&engine);
    let sql = common::text(&common::rows(&mut s, "SHOW CREATE TABLE c")[0][1]);
    assert!(
        sql.contains(
            "CONSTRAINT `c_p` FOREIGN KEY (`pid`) REFERENCES `p` (`id`) ON DELETE CASCADE ON \
             UPDATE SET NULL"
        ),
        "{sql}"
    );
    assert_eq!(error(&mut s, "INSERT INTO c VALUES (3, 3)").0, 1452);
    run(
        &mut s,
        "DELETE FROM p WHERE id = 1; UPDATE p SET id = 5 WHERE id = 2",
    );
    assert_eq!(
        ints(&mut s, "SELECT id, pid FROM c ORDER BY id"),
        vec![vec![Some(2), None]]
    );
}

/// Seeded random inserts, updates and deletes on a parent and three children (ON
/// DELETE CASCADE / ON UPDATE CASCADE, SET NULL, RESTRICT), each statement checked
/// against an in-memory model of the rules, and after each the invariant: no child
/// references a missing parent.
#[test]
fn random_changes_keep_every_child_with_its_parent() {
    let seed = test_seed("random_changes_keep_every_child_with_its_parent");
    let mut rng = Rng::new(seed);
    let (_dir, engine) = engine();
    let mut s = session(&engine);
    run(
        &mut s,
        "CREATE TABLE p (id INT PRIMARY KEY, v INT); \
         CREATE TABLE cc (id INT PRIMARY KEY, pid INT, \
           FOREIGN KEY (pid) REFERENCES p (id) ON DELETE CASCADE ON UPDATE CASCADE); \
         CREATE TABLE cn (id INT PRIMARY KEY, pid INT, \
           FOREIGN KEY (pid) REFERENCES p (id) ON DELETE SET NULL ON UPDATE SET NULL); \
         CREATE TABLE cr (id INT PRIMARY KEY, pid INT, \
           FOREIGN KEY (pid) REFERENCES p (id) ON DELETE RESTRICT ON UPDATE RESTRICT)",
    );
    const CHILDREN: [&str; 3] = ["cc", "cn", "cr"];
    const ANY_OF_1062_1451: u16 = u16::MAX;
    let keys = 12u64;
    let mut parents: BTreeMap<i64, i64> = BTreeMap::new();
    // Child table -> id -> pid.
    let mut children: Vec<BTreeMap<i64, Option<i64>>> = vec![BTreeMap::new(); 3];
    for step in 0..600 {
        let context = format!("step {step} (seed {seed})");
        let key = rng.below(keys) as i64;
        let other = rng.below(keys) as i64;
        let child = rng.below(3) as usize;
        let table = CHILDREN[child];
        let (sql, expected_code) = match rng.below(6) {
            0 => {
                let code = if parents.contains_key(&key) { 1062 } else { 0 };
                if code == 0 {
                    parents.insert(key, 0);
                }
                (format!("INSERT INTO p VALUES ({key}, 0)"), code)
            }
            1 => {
                let pid = if rng.percent(10) { None } else { Some(other) };
                let code = if children[child].contains_key(&key) {
                    1062
                } else if pid.is_some_and(|p| !parents.contains_key(&p)) {
                    1452
                } else {
                    0
                };
                if code == 0 {
                    children[child].insert(key, pid);
                }
                let pid_sql = pid.map_or("NULL".to_string(), |p| p.to_string());
                (
                    format!("INSERT INTO {table} VALUES ({key}, {pid_sql})"),
                    code,
                )
            }
            2 => {
                // Move a child to another parent.
                let code = match children[child].get(&key) {
                    Some(_) if !parents.contains_key(&other) => 1452,
                    _ => 0,
                };
                if code == 0 {
                    if let Some(pid) = children[child].get_mut(&key) {
                        *pid = Some(other);
                    }
                }
                (
                    format!("UPDATE {table} SET pid = {other} WHERE id = {key}"),
                    code,
                )
            }
            3 => {
                // Delete a parent: RESTRICT first, then CASCADE and SET NULL.
                let referenced =
                    |c: &BTreeMap<i64, Option<i64>>| c.values().any(|p| *p == Some(key));
                let code = if parents.contains_key(&key) && referenced(&children[2]) {
                    1451
                } else {
                    0
                };
                if code == 0 && parents.remove(&key).is_some() {
                    children[0].retain(|_, p| *p != Some(key));
                    for p in children[1].values_mut() {
                        if *p == Some(key) {
                            *p = None;
                        }
                    }
                }
                (format!("DELETE FROM p WHERE id = {key}"), code)
            }
            4 => {
                // Change a parent's key.
                let referenced =
                    |c: &BTreeMap<i64, Option<i64>>| c.values().any(|p| *p == Some(key));
                // Both a duplicate and a RESTRICT child: either error (MySQL checks
                // the children first, Tarn the key).
                let code = if !parents.contains_key(&key) || key == other {
                    0
                } else if parents.contains_key(&other) && referenced(&children[2]) {
                    ANY_OF_1062_1451
                } else if parents.contains_key(&other) {
                    1062
                } else if referenced(&children[2]) {
                    1451
                } else {
                    0
                };
                if code == 0 && key != other {
                    if let Some(v) = parents.remove(&key) {
                        parents.insert(other, v);
                        for p in children[0].values_mut() {
                            if *p == Some(key) {
                                *p = Some(other);
                            }
                        }
                        for p in children[1].values_mut() {
                            if *p == Some(key) {
                                *p = None;
                            }
                        }
                    }
                }
                (format!("UPDATE p SET id = {other} WHERE id = {key}"), code)
            }
            _ => {
                children[child].remove(&key);
                (format!("DELETE FROM {table} WHERE id = {key}"), 0)
            }
        };
        let (code, text) = error(&mut s, &sql);
        if expected_code == ANY_OF_1062_1451 {
            assert!(code == 1062 || code == 1451, "{context}: {sql}: {text}");
        } else {
            assert_eq!(code, expected_code, "{context}: {sql}: {text}");
        }
        let got_parents: Vec<i64> = ints(&mut s, "SELECT id FROM p ORDER BY id")
            .into_iter()
            .map(|r| r[0].unwrap())
            .collect();
        assert_eq!(
            got_parents,
            parents.keys().copied().collect::<Vec<_>>(),
            "{context}: {sql}"
        );
        for (i, table) in CHILDREN.iter().enumerate() {
            let got: Vec<(i64, Option<i64>)> =
                ints(&mut s, &format!("SELECT id, pid FROM {table} ORDER BY id"))
                    .into_iter()
                    .map(|r| (r[0].unwrap(), r[1]))
                    .collect();
            let expected: Vec<(i64, Option<i64>)> =
                children[i].iter().map(|(k, v)| (*k, *v)).collect();
            assert_eq!(got, expected, "{context}: {sql}: table {table}");
            let orphans = ints(
                &mut s,
                &format!(
                    "SELECT COUNT(*) FROM {table} WHERE pid IS NOT NULL \
                     AND pid NOT IN (SELECT id FROM p)"
                ),
            );
            assert_eq!(orphans, vec![vec![Some(0)]], "{context}: {sql}: {table}");
        }
    }
}
