//! `tarn sql`, the binary: workload statements (sysbench's, LinkBench's getLinkList,
//! TPC-C's new-order and payment) run as a script on stdin and with `-e`; errors print
//! MySQL's format and stop a script; data survives the process.

use std::io::Write;
use std::process::{Command, Stdio};

fn data_dir() -> tempfile::TempDir {
    let base = std::env::var("TARN_TEST_DIR")
        .unwrap_or_else(|_| std::env::temp_dir().display().to_string());
    std::fs::create_dir_all(&base).expect("the test directory exists");
    tempfile::Builder::new()
        .prefix("sql-shell")
        .tempdir_in(base)
        .expect("a temporary directory")
}

/// Runs `tarn sql --batch` with `script` on stdin; returns (status, stdout, stderr).
fn run(dir: &std::path::Path, args: &[&str], script: &str) -> (bool, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tarn"))
        .args(["sql", "--batch", "--data-dir"])
        .arg(dir)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("tarn starts");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(script.as_bytes())
        .expect("the script is written");
    let out = child.wait_with_output().expect("tarn ends");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

const SCHEMA: &str = "
CREATE DATABASE w;
USE w;
CREATE TABLE sbtest1 (id INT NOT NULL AUTO_INCREMENT, k INT NOT NULL DEFAULT 0, c CHAR(120) NOT NULL DEFAULT '', pad CHAR(60) NOT NULL DEFAULT '', PRIMARY KEY (id), KEY k_1 (k)) ENGINE=InnoDB;
INSERT INTO sbtest1 (k, c, pad) VALUES (5, 'c1', 'p1'), (3, 'c2', 'p2'), (5, 'c3', 'p3'), (8, 'c4', 'p4'), (1, 'c5', 'p5');
CREATE TABLE linktable (id1 BIGINT UNSIGNED NOT NULL, id2 BIGINT UNSIGNED NOT NULL, link_type BIGINT UNSIGNED NOT NULL, visibility TINYINT NOT NULL, data VARCHAR(255) NOT NULL, time BIGINT UNSIGNED NOT NULL, version INT UNSIGNED NOT NULL, PRIMARY KEY (link_type, id1, id2), KEY id1_type (id1, link_type, visibility, time, id2, version, data));
INSERT INTO linktable VALUES (1, 2, 7, 1, 'a', 100, 0), (1, 3, 7, 1, 'b', 300, 0), (1, 4, 7, 0, 'c', 200, 0), (2, 1, 7, 1, 'd', 50, 0);
CREATE TABLE district (d_w_id INT NOT NULL, d_id INT NOT NULL, d_next_o_id INT NOT NULL, d_ytd DECIMAL(12,2) NOT NULL, PRIMARY KEY (d_w_id, d_id));
CREATE TABLE orders (o_w_id INT NOT NULL, o_d_id INT NOT NULL, o_id INT NOT NULL, o_c_id INT NOT NULL, PRIMARY KEY (o_w_id, o_d_id, o_id));
CREATE TABLE new_order (no_w_id INT NOT NULL, no_d_id INT NOT NULL, no_o_id INT NOT NULL, PRIMARY KEY (no_w_id, no_d_id, no_o_id));
INSERT INTO district VALUES (1, 1, 3001, 0.00);
";

#[test]
fn workload_statements_run_through_the_shell() {
    let dir = data_dir();
    let (ok, _, err) = run(dir.path(), &[], SCHEMA);
    assert!(ok, "{err}");
    // sysbench's statement forms (oltp_common.lua).
    let sysbench = "
SELECT c FROM sbtest1 WHERE id=2;
SELECT c FROM sbtest1 WHERE id BETWEEN 2 AND 4 ORDER BY c;
SELECT SUM(k) FROM sbtest1 WHERE id BETWEEN 1 AND 5;
SELECT DISTINCT c FROM sbtest1 WHERE id BETWEEN 1 AND 3 ORDER BY c;
UPDATE sbtest1 SET k=k+1 WHERE id=1;
UPDATE sbtest1 SET c='changed' WHERE id=2;
DELETE FROM sbtest1 WHERE id=3;
INSERT INTO sbtest1 (id, k, c, pad) VALUES (3, 9, 'again', 'p');
SELECT id, k, c FROM sbtest1 WHERE id IN (1, 2, 3) ORDER BY id;
";
    let (ok, out, err) = run(dir.path(), &["-D", "w"], sysbench);
    assert!(ok, "{err}");
    let expected = "c\nc2\nc\nc2\nc3\nc4\nSUM(k)\n22\nc\nc1\nc2\nc3\nid\tk\tc\n1\t6\tc1\n2\t3\tchanged\n3\t9\tagain\n";
    assert_eq!(out, expected);
    // LinkBench's getLinkList.
    let (ok, out, err) = run(
        dir.path(),
        &[
            "-D",
            "w",
            "-e",
            "SELECT id1, id2, link_type, visibility, data, time, version FROM linktable FORCE INDEX(id1_type) WHERE id1 = 1 AND link_type = 7 AND time >= 0 AND time <= 1000 AND visibility = 1 ORDER BY time DESC LIMIT 0, 10",
        ],
        "",
    );
    assert!(ok, "{err}");
    assert_eq!(
        out,
        "id1\tid2\tlink_type\tvisibility\tdata\ttime\tversion\n1\t3\t7\t1\tb\t300\t0\n1\t2\t7\t1\ta\t100\t0\n"
    );
    // TPC-C new-order and payment, as transactions.
    let tpcc = "
START TRANSACTION;
SELECT d_next_o_id FROM district WHERE d_w_id = 1 AND d_id = 1 FOR UPDATE;
UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = 1 AND d_id = 1;
INSERT INTO orders VALUES (1, 1, 3001, 42);
INSERT INTO new_order VALUES (1, 1, 3001);
COMMIT;
BEGIN;
UPDATE district SET d_ytd = d_ytd + 12.50 WHERE d_w_id = 1 AND d_id = 1;
COMMIT;
SELECT d_next_o_id, d_ytd FROM district;
SELECT count(*) FROM orders o JOIN new_order n ON o.o_w_id = n.no_w_id AND o.o_d_id = n.no_d_id AND o.o_id = n.no_o_id;
";
    let (ok, out, err) = run(dir.path(), &["-D", "w"], tpcc);
    assert!(ok, "{err}");
    assert_eq!(
        out,
        "d_next_o_id\n3001\nd_next_o_id\td_ytd\n3002\t12.50\ncount(*)\n1\n"
    );
}

#[test]
fn an_error_stops_a_script_with_mysqls_message_unless_forced() {
    let dir = data_dir();
    let (ok, _, err) = run(dir.path(), &[], SCHEMA);
    assert!(ok, "{err}");
    let script = "SELECT 1;\nSELECT * FROM nosuch;\nSELECT 2;\n";
    let (ok, out, err) = run(dir.path(), &["-D", "w"], script);
    assert!(!ok);
    assert_eq!(out, "1\n1\n");
    assert!(
        err.contains("ERROR 1146 (42S02): Table 'w.nosuch' doesn't exist"),
        "{err}"
    );
    let (ok, out, _) = run(dir.path(), &["-D", "w", "--force"], script);
    assert!(!ok, "a forced script still reports failure");
    assert_eq!(out, "1\n1\n2\n2\n");
}
