//! Views over a real storage: a table made through the catalog, then every SHOW form
//! and system table over it, compared with what MySQL 8 prints for the same table.

use std::path::Path;

use tarn_catalog::{IndexDef, Storage, TableDef};
use tarn_common::settings::Settings;
use tarn_row::Value;
use tarn_row::types::{Collation, Column as RowColumn, ColumnType};

use super::*;
use crate::sysvars::SystemVariables;

const PAGE_SIZE: u32 = 4096;

fn test_dir() -> tempfile::TempDir {
    let base = std::env::var_os("TARN_TEST_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(std::env::temp_dir);
    std::fs::create_dir_all(&base).expect("test directory root");
    tempfile::tempdir_in(base).expect("temporary directory")
}

fn open(dir: &Path) -> Storage {
    Storage::open(&Settings {
        data_dir: dir.to_path_buf(),
        page_size_bytes: PAGE_SIZE,
        buffer_pool_size_bytes: 256 * u64::from(PAGE_SIZE),
        buffer_pool_instances: 1,
        ..Settings::default()
    })
    .expect("open storage")
}

fn text(s: &str) -> Value {
    Value::Bytes(s.as_bytes().to_vec())
}

/// `shop.orders`: an AUTO_INCREMENT key, every kind of DEFAULT, a unique index, a
/// two-column index and a binary-collated column.
fn create_orders(storage: &Storage) {
    storage.create_database("shop").unwrap();
    let columns = vec![
        RowColumn::new("id", ColumnType::Int { unsigned: false }, false),
        RowColumn::new("customer", ColumnType::BigInt { unsigned: true }, false),
        RowColumn::new(
            "total",
            ColumnType::Decimal {
                precision: 15,
                scale: 2,
            },
            false,
        ),
        RowColumn::new("code", ColumnType::VarChar { len: 25 }, true)
            .with_collation(Collation::CaseInsensitive),
        RowColumn::new("tag", ColumnType::Char { len: 10 }, true).with_collation(Collation::Binary),
        RowColumn::new("note", ColumnType::Text, true).with_collation(Collation::CaseInsensitive),
        RowColumn::new("created", ColumnType::DateTime { fsp: 6 }, false),
        RowColumn::new("touched", ColumnType::Timestamp { fsp: 0 }, true),
    ];
    let def = TableDef::new("orders", columns, &[0])
        .with_index(IndexDef::new("by_customer", &[1, 6], false))
        .with_index(IndexDef::new("code", &[3], true))
        .with_defaults(vec![
            None,
            Some("0".into()),
            Some("0.00".into()),
            Some("'it''s'".into()),
            Some("NULL".into()),
            None,
            Some("CURRENT_TIMESTAMP(6)".into()),
            None,
        ])
        .with_auto_increment(0, 5);
    storage.create_table("shop", def).unwrap();
}

struct Fixture {
    _dir: tempfile::TempDir,
    storage: Storage,
    globals: SystemVariables,
    session: SystemVariables,
    processes: Vec<ProcessInfo>,
}

impl Fixture {
    fn new() -> Fixture {
        let dir = test_dir();
        let storage = open(dir.path());
        create_orders(&storage);
        let globals = SystemVariables::new_global(&storage.settings());
        let session = SystemVariables::session_from(&globals);
        let processes = vec![ProcessInfo {
            id: 7,
            user: "root".into(),
            host: "localhost:5555".into(),
            db: Some("shop".into()),
            command: "Query".into(),
            time_s: 2,
            state: "executing".into(),
            info: Some(format!("SELECT '{}'", "x".repeat(200))),
        }];
        Fixture {
            _dir: dir,
            storage,
            globals,
            session,
            processes,
        }
    }

    fn cx(&self) -> ViewContext<'_> {
        ViewContext {
            storage: &self.storage,
            session_vars: &self.session,
            global_vars: &self.globals,
            processes: &self.processes,
            current_database: Some("shop"),
            server: ServerStatus {
                uptime_s: 12,
                questions: 34,
                connections: 5,
                ..ServerStatus::default()
            },
            view_columns: &|_, _| Ok(Vec::new()),
            grants: None,
        }
    }
}

fn names(columns: &[Column]) -> Vec<&str> {
    columns.iter().map(|c| c.name.as_str()).collect()
}

/// Rows as text, NULL as "NULL", for comparing with MySQL's printed results.
fn shown(rows: &[Vec<Value>]) -> Vec<Vec<String>> {
    rows.iter()
        .map(|r| r.iter().map(|v| v.to_string()).collect())
        .collect()
}

fn column_of<'r>(columns: &[Column], row: &'r [Value], name: &str) -> &'r Value {
    let i = columns
        .iter()
        .position(|c| c.name == name)
        .unwrap_or_else(|| panic!("no column {name}"));
    &row[i]
}

#[test]
fn show_columns_as_mysql() {
    let f = Fixture::new();
    let (columns, rows) = show_columns(&f.cx(), "shop", "orders", false).unwrap();
    assert_eq!(
        names(&columns),
        ["Field", "Type", "Null", "Key", "Default", "Extra"]
    );
    let expected = [
        ["id", "int", "NO", "PRI", "NULL", "auto_increment"],
        ["customer", "bigint unsigned", "NO", "MUL", "0", ""],
        ["total", "decimal(15,2)", "NO", "", "0.00", ""],
        ["code", "varchar(25)", "YES", "UNI", "it's", ""],
        ["tag", "char(10)", "YES", "", "NULL", ""],
        ["note", "text", "YES", "", "NULL", ""],
        [
            "created",
            "datetime(6)",
            "NO",
            "",
            "CURRENT_TIMESTAMP(6)",
            "DEFAULT_GENERATED",
        ],
        ["touched", "timestamp", "YES", "", "NULL", ""],
    ];
    assert_eq!(shown(&rows), expected.map(|r| r.map(String::from)).to_vec());

    let (columns, rows) = show_columns(&f.cx(), "shop", "orders", true).unwrap();
    assert_eq!(
        names(&columns),
        [
            "Field",
            "Type",
            "Collation",
            "Null",
            "Key",
            "Default",
            "Extra",
            "Privileges",
            "Comment"
        ]
    );
    let collations: Vec<String> = rows.iter().map(|r| r[2].to_string()).collect();
    assert_eq!(
        collations,
        [
            "NULL",
            "NULL",
            "NULL",
            "utf8mb4_0900_ai_ci",
            "utf8mb4_bin",
            "utf8mb4_0900_ai_ci",
            "NULL",
            "NULL"
        ]
    );
    assert_eq!(rows[0][7], text("select,insert,update,references"));

    assert_eq!(
        show_columns(&f.cx(), "shop", "nope", false)
            .unwrap_err()
            .mysql_code(),
        1146
    );
    assert_eq!(
        show_columns(&f.cx(), "nope", "orders", false)
            .unwrap_err()
            .mysql_code(),
        1049
    );
    // System tables describe themselves.
    let (_, rows) = show_columns(&f.cx(), "INFORMATION_SCHEMA", "tables", false).unwrap();
    assert_eq!(rows[0][0], text("TABLE_CATALOG"));
    assert_eq!(rows[0][1], text("varchar(64)"));
}

#[test]
fn show_index_as_mysql() {
    let f = Fixture::new();
    let (columns, rows) = show_index(&f.cx(), "shop", "orders").unwrap();
    assert_eq!(
        names(&columns),
        [
            "Table",
            "Non_unique",
            "Key_name",
            "Seq_in_index",
            "Column_name",
            "Collation",
            "Cardinality",
            "Sub_part",
            "Packed",
            "Null",
            "Index_type",
            "Comment",
            "Index_comment",
            "Visible",
            "Expression"
        ]
    );
    let brief: Vec<Vec<String>> = shown(&rows)
        .into_iter()
        .map(|r| {
            vec![
                r[1].clone(),
                r[2].clone(),
                r[3].clone(),
                r[4].clone(),
                r[9].clone(),
            ]
        })
        .collect();
    // The unique index is listed before the non-unique one, as MySQL orders them.
    let expected = [
        ["0", "PRIMARY", "1", "id", ""],
        ["0", "code", "1", "code", "YES"],
        ["1", "by_customer", "1", "customer", ""],
        ["1", "by_customer", "2", "created", ""],
    ];
    assert_eq!(brief, expected.map(|r| r.map(String::from)).to_vec());
    assert!(
        rows.iter()
            .all(|r| r[0] == text("orders") && r[10] == text("BTREE"))
    );
    assert!(
        rows.iter().all(|r| r[6] == Value::Null),
        "no statistics yet"
    );
}

#[test]
fn show_create_table_as_mysql() {
    let f = Fixture::new();
    let (columns, rows) = show_create_table(&f.cx(), "shop", "orders").unwrap();
    assert_eq!(names(&columns), ["Table", "Create Table"]);
    assert_eq!(rows[0][0], text("orders"));
    let expected = "CREATE TABLE `orders` (
  `id` int NOT NULL AUTO_INCREMENT,
  `customer` bigint unsigned NOT NULL DEFAULT '0',
  `total` decimal(15,2) NOT NULL DEFAULT '0.00',
  `code` varchar(25) DEFAULT 'it''s',
  `tag` char(10) COLLATE utf8mb4_bin DEFAULT NULL,
  `note` text,
  `created` datetime(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
  `touched` timestamp NULL DEFAULT NULL,
  PRIMARY KEY (`id`),
  UNIQUE KEY `code` (`code`),
  KEY `by_customer` (`customer`,`created`)
) ENGINE=InnoDB AUTO_INCREMENT=5 DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_0900_ai_ci";
    assert_eq!(rows[0][1].to_string(), expected);

    let plain = TableDef::new(
        "we`ird",
        vec![RowColumn::new("a b", ColumnType::Double, true)],
        &[],
    );
    assert_eq!(
        create_table_sql("d", &plain, None),
        "CREATE TABLE `we``ird` (\n  `a b` double DEFAULT NULL\n) ENGINE=InnoDB DEFAULT \
         CHARSET=utf8mb4 COLLATE=utf8mb4_0900_ai_ci"
    );
}

#[test]
fn table_status_and_tables() {
    let f = Fixture::new();
    let (columns, rows) = show_table_status(&f.cx(), "shop").unwrap();
    assert_eq!(columns.len(), 18);
    assert_eq!(
        names(&columns),
        [
            "Name",
            "Engine",
            "Version",
            "Row_format",
            "Rows",
            "Avg_row_length",
            "Data_length",
            "Max_data_length",
            "Index_length",
            "Data_free",
            "Auto_increment",
            "Create_time",
            "Update_time",
            "Check_time",
            "Collation",
            "Checksum",
            "Create_options",
            "Comment"
        ]
    );
    let row = &rows[0];
    assert_eq!(row[0], text("orders"));
    assert_eq!(row[1], text("InnoDB"));
    assert_eq!(*column_of(&columns, row, "Auto_increment"), Value::UInt(5));
    let data = column_of(&columns, row, "Data_length");
    let index = column_of(&columns, row, "Index_length");
    // Each tree has at least its meta page and its root.
    assert!(
        matches!(data, Value::UInt(n) if *n >= 2 * u64::from(PAGE_SIZE)),
        "{data:?}"
    );
    assert!(
        matches!(index, Value::UInt(n) if *n >= 4 * u64::from(PAGE_SIZE)),
        "{index:?}"
    );

    let (_, rows) = show_tables(&f.cx(), "shop", true).unwrap();
    assert_eq!(shown(&rows), [["orders", "BASE TABLE"]]);
    let (columns, _) = show_tables(&f.cx(), "shop", false).unwrap();
    assert_eq!(names(&columns), ["Tables_in_shop"]);
    let (_, rows) = show_tables(&f.cx(), "performance_schema", false).unwrap();
    assert!(rows.iter().any(|r| r[0] == text("tarn_latch_waits")));
    assert_eq!(
        show_tables(&f.cx(), "nope", false)
            .unwrap_err()
            .mysql_code(),
        1049
    );

    let (_, rows) = show_databases(&f.cx());
    assert_eq!(
        shown(&rows),
        [["information_schema"], ["performance_schema"], ["shop"]]
    );
}

#[test]
fn information_schema() {
    let f = Fixture::new();
    let cx = f.cx();
    assert!(system_table(&cx, "shop", "orders").is_none());
    assert!(system_table(&cx, "information_schema", "nope").is_none());

    let (columns, rows) = system_table(&cx, "information_schema", "tables")
        .unwrap()
        .unwrap();
    let orders = rows
        .iter()
        .find(|r| r[2] == text("orders"))
        .expect("orders listed");
    assert_eq!(*column_of(&columns, orders, "TABLE_SCHEMA"), text("shop"));
    assert_eq!(
        *column_of(&columns, orders, "TABLE_TYPE"),
        text("BASE TABLE")
    );
    assert!(rows.iter().all(|r| r.len() == columns.len()));
    assert!(
        rows.iter()
            .any(|r| r[2] == text("COLUMNS") && r[3] == text("SYSTEM VIEW"))
    );

    let (columns, rows) = system_table(&cx, "INFORMATION_SCHEMA", "COLUMNS")
        .unwrap()
        .unwrap();
    assert_eq!(columns.len(), 22);
    assert!(rows.iter().all(|r| r.len() == columns.len()));
    let total = rows
        .iter()
        .find(|r| r[2] == text("orders") && r[3] == text("total"))
        .unwrap();
    let get = |name| column_of(&columns, total, name).to_string();
    assert_eq!(get("ORDINAL_POSITION"), "3");
    assert_eq!(get("DATA_TYPE"), "decimal");
    assert_eq!(get("COLUMN_TYPE"), "decimal(15,2)");
    assert_eq!(get("NUMERIC_PRECISION"), "15");
    assert_eq!(get("NUMERIC_SCALE"), "2");
    assert_eq!(get("COLUMN_DEFAULT"), "0.00");
    let code = rows
        .iter()
        .find(|r| r[2] == text("orders") && r[3] == text("code"))
        .unwrap();
    let get = |name| column_of(&columns, code, name).to_string();
    assert_eq!(get("CHARACTER_MAXIMUM_LENGTH"), "25");
    assert_eq!(get("CHARACTER_OCTET_LENGTH"), "100");
    assert_eq!(get("COLLATION_NAME"), "utf8mb4_0900_ai_ci");
    assert_eq!(get("COLUMN_KEY"), "UNI");
    // The system tables' own columns are there too.
    assert!(
        rows.iter()
            .any(|r| r[1] == text("performance_schema") && r[2] == text("tarn_log"))
    );

    let (columns, rows) = system_table(&cx, "information_schema", "statistics")
        .unwrap()
        .unwrap();
    assert_eq!(columns.len(), 18);
    assert_eq!(rows.len(), 4);
    assert_eq!(rows[3][5], text("by_customer"));
    assert_eq!(rows[3][7], text("created"));
    assert_eq!(rows[3][3], text("1"));

    let (_, rows) = system_table(&cx, "information_schema", "schemata")
        .unwrap()
        .unwrap();
    assert!(rows.iter().any(|r| r[1] == text("shop")));
    let (_, rows) = system_table(&cx, "information_schema", "processlist")
        .unwrap()
        .unwrap();
    assert_eq!(rows[0][0], Value::UInt(7));
    let (_, rows) = system_table(&cx, "information_schema", "table_constraints")
        .unwrap()
        .unwrap();
    let constraints: Vec<String> = rows.iter().map(|r| format!("{} {}", r[2], r[5])).collect();
    assert_eq!(constraints, ["PRIMARY PRIMARY KEY", "code UNIQUE"]);
    let (_, rows) = system_table(&cx, "information_schema", "key_column_usage")
        .unwrap()
        .unwrap();
    let keys: Vec<String> = rows.iter().map(|r| format!("{}.{}", r[2], r[6])).collect();
    assert_eq!(keys, ["PRIMARY.id", "code.code"]);
    for name in ["ENGINES", "COLLATIONS", "CHARACTER_SETS"] {
        let (columns, rows) = system_table(&cx, "information_schema", name)
            .unwrap()
            .unwrap();
        assert!(
            !rows.is_empty() && rows.iter().all(|r| r.len() == columns.len()),
            "{name}"
        );
    }
}

#[test]
fn engine_tables_have_real_figures() {
    let f = Fixture::new();
    let table = f.storage.table("shop", "orders").unwrap();
    let row = vec![
        Value::Int(1),
        Value::UInt(9),
        Value::Decimal("1.50".parse().unwrap()),
        text("a"),
        Value::Null,
        Value::Null,
        Value::DateTime(tarn_row::DateTime::parse("2024-01-02 03:04:05").unwrap()),
        Value::Null,
    ];
    let mut tx = f.storage.begin(None, false);
    table.insert_tx(&mut tx, row).unwrap();
    f.storage.commit(tx).unwrap();

    let cx = f.cx();
    for system in engine_tables::system_tables_of("performance_schema") {
        let (columns, rows) = system_table(&cx, system.db, system.name).unwrap().unwrap();
        assert!(
            rows.iter().all(|r| r.len() == columns.len()),
            "{}",
            system.name
        );
    }
    let (columns, rows) = system_table(&cx, "performance_schema", "tarn_log")
        .unwrap()
        .unwrap();
    let durable = column_of(&columns, &rows[0], "DURABLE_LSN");
    assert!(matches!(durable, Value::UInt(n) if *n > 0));
    assert!(matches!(column_of(&columns, &rows[0], "RECORDS"), Value::UInt(n) if *n > 0));

    let (columns, rows) = system_table(&cx, "performance_schema", "tarn_transactions")
        .unwrap()
        .unwrap();
    assert_eq!(*column_of(&columns, &rows[0], "COMMITS"), Value::UInt(1));

    let (_, rows) = system_table(&cx, "performance_schema", "tarn_latch_classes")
        .unwrap()
        .unwrap();
    assert!(
        rows.iter().any(|r| r[0] == text("buffer.page_table")),
        "{rows:?}"
    );
    let (_, rows) = system_table(&cx, "performance_schema", "tarn_io_files")
        .unwrap()
        .unwrap();
    let owners: Vec<String> = rows.iter().map(|r| r[3].to_string()).collect();
    assert_eq!(owners, ["PRIMARY", "by_customer", "code"]);
    let (columns, rows) = system_table(&cx, "performance_schema", "tarn_buffer_pool")
        .unwrap()
        .unwrap();
    assert_eq!(*column_of(&columns, &rows[0], "FRAMES"), Value::UInt(256));
    let (columns, rows) = system_table(&cx, "performance_schema", "tarn_lock_stats")
        .unwrap()
        .unwrap();
    assert_eq!(*column_of(&columns, &rows[0], "SCHEDULING"), text("cats"));
    assert!(matches!(column_of(&columns, &rows[0], "REQUESTS"), Value::UInt(n) if *n > 0));

    let (columns, rows) = show_status(&cx);
    assert_eq!(names(&columns), ["Variable_name", "Value"]);
    let status = |name: &str| {
        rows.iter()
            .find(|r| r[0] == text(name))
            .unwrap_or_else(|| panic!("no {name}"))[1]
            .to_string()
    };
    assert_eq!(status("Uptime"), "12");
    assert_eq!(status("Threads_connected"), "1");
    assert_eq!(status("Innodb_buffer_pool_pages_total"), "256");
    assert_eq!(status("Tarn_trx_commits"), "1");
    assert_eq!(status("Innodb_page_size"), "4096");
    assert!(
        rows.windows(2)
            .all(|w| w[0][0].to_string() < w[1][0].to_string())
    );

    let report = show_engine_status(&cx).unwrap();
    for section in [
        "BUFFER POOL (S4)",
        "LATCHES (S4)",
        "LOCKS (S3)",
        "I/O (S5)",
        "LOG AND COMMITS",
        "TRANSACTIONS AND PURGE",
        "RECOVERY",
        "buffer.page_table",
        "shop.orders (PRIMARY)",
    ] {
        assert!(report.contains(section), "{section} missing in\n{report}");
    }
}

#[test]
fn lock_waits_name_their_table() {
    let f = Fixture::new();
    let table = f.storage.table("shop", "orders").unwrap();
    let row = |id: i64| {
        vec![
            Value::Int(id),
            Value::UInt(9),
            Value::Decimal("1.50".parse().unwrap()),
            Value::Null,
            Value::Null,
            Value::Null,
            Value::DateTime(tarn_row::DateTime::parse("2024-01-02 03:04:05").unwrap()),
            Value::Null,
        ]
    };
    let mut holder = f.storage.begin(None, false);
    table.insert_tx(&mut holder, row(1)).unwrap();
    std::thread::scope(|scope| {
        let waiter = scope.spawn(|| {
            let mut tx = f.storage.begin(None, false);
            // Waits for the holder's lock on key 1.
            let result = table.insert_tx(&mut tx, row(1));
            let _ = f.storage.rollback(tx);
            result
        });
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        let rows = loop {
            let (_, rows) = system_table(&f.cx(), "performance_schema", "tarn_lock_waits")
                .unwrap()
                .unwrap();
            if !rows.is_empty() || std::time::Instant::now() > deadline {
                break rows;
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        };
        assert_eq!(rows.len(), 1, "one waiter");
        let (columns, _) = system_table(&f.cx(), "performance_schema", "tarn_lock_waits")
            .unwrap()
            .unwrap();
        let r = &rows[0];
        assert_eq!(*column_of(&columns, r, "OBJECT_SCHEMA"), text("shop"));
        assert_eq!(*column_of(&columns, r, "OBJECT_NAME"), text("orders"));
        assert_eq!(*column_of(&columns, r, "LOCK_TYPE"), text("RECORD"));
        assert!(matches!(column_of(&columns, r, "TRX_SCHEDULE_WEIGHT"), Value::UInt(n) if *n >= 1));
        assert!(
            !column_of(&columns, r, "BLOCKING_TRX_IDS")
                .to_string()
                .is_empty()
        );
        f.storage.rollback(holder).unwrap();
        waiter.join().unwrap().unwrap();
    });
}

#[test]
fn variables_processlist_and_fixed_lists() {
    let f = Fixture::new();
    let (columns, rows) = show_variables(&f.globals);
    assert_eq!(names(&columns), ["Variable_name", "Value"]);
    let value = |rows: &[Vec<Value>], name: &str| {
        rows.iter()
            .find(|r| r[0] == text(name))
            .map(|r| r[1].to_string())
    };
    assert_eq!(value(&rows, "autocommit").as_deref(), Some("ON"));
    assert_eq!(value(&rows, "version").as_deref(), Some("8.0.36-tarn-0.1"));
    assert_eq!(value(&rows, "warning_count"), None);
    let (_, rows) = show_variables(&f.session.with_globals(&f.globals));
    assert_eq!(value(&rows, "warning_count").as_deref(), Some("0"));
    let (_, rows) = system_table(&f.cx(), "performance_schema", "session_variables")
        .unwrap()
        .unwrap();
    assert_eq!(
        value(&rows, "tx_isolation").as_deref(),
        Some("REPEATABLE-READ")
    );

    let (columns, rows) = show_processlist(&f.cx(), false);
    assert_eq!(
        names(&columns),
        [
            "Id", "User", "Host", "db", "Command", "Time", "State", "Info"
        ]
    );
    assert_eq!(rows[0][7].to_string().chars().count(), 100);
    let (_, rows) = show_processlist(&f.cx(), true);
    assert_eq!(rows[0][7].to_string().chars().count(), 209);

    let (_, rows) = show_engines();
    assert_eq!(
        shown(&rows),
        [[
            "InnoDB",
            "DEFAULT",
            "Tarn: transactional B+tree engine with MVCC, row locks and a redo log",
            "YES",
            "NO",
            "YES"
        ]]
    );
    let (_, rows) = show_charset();
    assert!(
        rows.iter()
            .any(|r| r[0] == text("utf8mb4") && r[2] == text("utf8mb4_0900_ai_ci"))
    );
    let (columns, rows) = show_collation();
    assert_eq!(columns.len(), 7);
    for name in [
        "utf8mb4_general_ci",
        "utf8mb4_bin",
        "utf8mb4_0900_ai_ci",
        "binary",
    ] {
        assert!(rows.iter().any(|r| r[0] == text(name)), "{name}");
    }
}

#[test]
fn helpers() {
    assert_eq!(unquote("'a''b\\n'"), Some("a'b\n".to_string()));
    assert_eq!(unquote("'a'b'"), None);
    assert_eq!(default_clause("-1.5"), "'-1.5'");
    assert_eq!(default_clause("'x'"), "'x'");
    assert_eq!(default_clause("null"), "NULL");
    assert_eq!(type_name(ColumnType::Timestamp { fsp: 3 }), "timestamp(3)");
    assert_eq!(
        type_name(ColumnType::TinyInt { unsigned: true }),
        "tinyint unsigned"
    );
    // A table without a primary key shows its first NOT NULL unique index as PRI.
    let def = TableDef::new(
        "t",
        vec![
            RowColumn::new("a", ColumnType::Int { unsigned: false }, true),
            RowColumn::new("b", ColumnType::Int { unsigned: false }, false),
        ],
        &[],
    )
    .with_index(IndexDef::new("ua", &[0], true))
    .with_index(IndexDef::new("ub", &[1], true));
    assert_eq!(column_key(&def, 0), "UNI");
    assert_eq!(column_key(&def, 1), "PRI");
}
