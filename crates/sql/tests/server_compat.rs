//! What administration tools and dump files of MySQL 8 send that MariaDB 10.11
//! answers differently, so the golden files cannot hold it: variables MariaDB lacks
//! or shows otherwise (`super_read_only`, `information_schema_stats_expiry`,
//! `secure_file_priv`), and the column names of `SHOW REPLICA STATUS` /
//! `SHOW SLAVE STATUS` (MariaDB's differ).

mod common;

use common::{code, lines, run};

use tarn_common::settings::Settings;
use tarn_sql::QueryResult;

fn column_names(result: &QueryResult) -> Vec<String> {
    match result {
        QueryResult::Rows { columns, .. } => columns.iter().map(|c| c.name.clone()).collect(),
        _ => panic!("not a result set"),
    }
}

#[test]
fn variables_tools_read_show_and_refuse_changes() {
    let (_dir, engine) = common::engine_with("server-compat", Settings::default());
    let mut s = engine.session("root", "localhost");
    assert_eq!(
        lines(
            &mut s,
            "SELECT @@super_read_only, @@innodb_file_per_table, \
             @@information_schema_stats_expiry, @@secure_file_priv IS NULL"
        ),
        vec!["0 1 86400 1"]
    );
    for name in [
        "super_read_only",
        "information_schema_stats_expiry",
        "secure_file_priv",
        "tmpdir",
        "basedir",
        "datadir",
        "log_error",
    ] {
        let shown = lines(&mut s, &format!("SHOW VARIABLES LIKE '{name}'"));
        assert_eq!(shown.len(), 1, "{name}: {shown:?}");
    }
    // DBeaver and Workbench turn the statistics cache off for their session.
    run(&mut s, "SET SESSION information_schema_stats_expiry = 0");
    assert_eq!(
        lines(&mut s, "SELECT @@information_schema_stats_expiry"),
        vec!["0"]
    );
    for sql in [
        "SET GLOBAL super_read_only = ON",
        "SET GLOBAL server_id = 2",
        "SET GLOBAL innodb_file_per_table = OFF",
    ] {
        assert_eq!(code(s.execute(sql)), 1238, "{sql}");
    }
    // sql_log_bin is session-only in MySQL 8.
    assert_eq!(code(s.execute("SET GLOBAL sql_log_bin = 0")), 1228);
}

#[test]
fn replica_status_is_empty_with_mysql_columns() {
    let (_dir, engine) = common::engine_with("server-compat", Settings::default());
    let mut s = engine.session("root", "localhost");
    for (sql, first, count) in [
        ("SHOW REPLICA STATUS", "Replica_IO_State", 60),
        ("SHOW SLAVE STATUS", "Slave_IO_State", 60),
        ("SHOW REPLICA STATUS FOR CHANNEL ''", "Replica_IO_State", 60),
    ] {
        let result = run(&mut s, sql);
        let names = column_names(&result);
        assert_eq!(names.len(), count, "{sql}");
        assert_eq!(names[0], first, "{sql}");
        assert!(result.all_rows().is_empty(), "{sql}");
    }
    let slave = column_names(&run(&mut s, "SHOW SLAVE STATUS"));
    assert_eq!(slave[1], "Master_Host");
    assert_eq!(slave[32], "Seconds_Behind_Master");
    assert!(slave.iter().any(|n| n == "Get_master_public_key"));
}
