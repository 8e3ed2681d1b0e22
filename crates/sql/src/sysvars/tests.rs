use tarn_common::settings::{IsolationLevel, LockScheduling, Settings};
use tarn_row::Value;

use super::*;

fn text(s: &str) -> Value {
    Value::Bytes(s.as_bytes().to_vec())
}

fn globals() -> SystemVariables {
    SystemVariables::new_global(&Settings::default())
}

#[track_caller]
fn error_of(result: Result<Value>) -> (u16, String) {
    match result {
        Ok(v) => panic!("expected an error, got {v:?}"),
        Err(e) => (e.mysql_code(), e.to_string()),
    }
}

#[test]
fn every_variable_clients_read_on_connect_exists() {
    let g = globals();
    let s = SystemVariables::session_from(&g);
    let names = [
        "auto_increment_increment",
        "auto_increment_offset",
        "autocommit",
        "character_set_client",
        "character_set_connection",
        "character_set_database",
        "character_set_results",
        "character_set_server",
        "character_set_system",
        "collation_connection",
        "collation_database",
        "collation_server",
        "init_connect",
        "interactive_timeout",
        "license",
        "lower_case_table_names",
        "max_allowed_packet",
        "net_buffer_length",
        "net_write_timeout",
        "net_read_timeout",
        "performance_schema",
        "query_cache_size",
        "query_cache_type",
        "sql_mode",
        "system_time_zone",
        "time_zone",
        "transaction_isolation",
        "tx_isolation",
        "transaction_read_only",
        "tx_read_only",
        "wait_timeout",
        "version",
        "version_comment",
        "version_compile_os",
        "version_compile_machine",
        "hostname",
        "port",
        "socket",
        "datadir",
        "max_connections",
        "max_execution_time",
        "sql_select_limit",
        "sql_auto_is_null",
        "sql_safe_updates",
        "foreign_key_checks",
        "unique_checks",
        "div_precision_increment",
        "default_storage_engine",
        "storage_engine",
        "have_ssl",
        "protocol_version",
        "last_insert_id",
        "identity",
        "warning_count",
        "error_count",
        "max_error_count",
        "group_concat_max_len",
        "lock_wait_timeout",
        "innodb_lock_wait_timeout",
        "tmp_table_size",
        "max_heap_table_size",
        "sort_buffer_size",
        "explicit_defaults_for_timestamp",
        "time_format",
        "date_format",
        "query_memory_max_bytes",
    ];
    for name in names {
        let found = s.get(name).or_else(|| g.get(name));
        assert!(found.is_some(), "{name} is missing");
        assert!(
            s.get(&name.to_ascii_uppercase())
                .or_else(|| g.get(&name.to_ascii_uppercase()))
                .is_some()
        );
    }
    assert_eq!(g.get("version"), Some(text("8.0.36-tarn-0.1")));
    assert_eq!(g.get("version_comment"), Some(text("Tarn")));
    assert_eq!(g.get("lower_case_table_names"), Some(Value::UInt(0)));
    assert_eq!(s.get("autocommit"), Some(Value::Int(1)));
    assert_eq!(s.get("tx_isolation"), Some(text("REPEATABLE-READ")));
    assert_eq!(s.get("@@x"), None);
    // Global-only variables are read from the globals, session-only ones never are.
    assert_eq!(s.get("version"), None);
    assert_eq!(g.get("warning_count"), None);
    assert_eq!(s.get("warning_count"), Some(Value::UInt(0)));
}

#[test]
fn engine_settings_are_read_only_globals() {
    let settings = Settings {
        scan_threads: 3,
        lock_scheduling: LockScheduling::Fifo,
        latch_accounting: false,
        transaction_isolation: IsolationLevel::ReadCommitted,
        lock_wait_timeout_s: 7,
        ..Settings::default()
    };
    let mut g = SystemVariables::new_global(&settings);
    let defaults = g.clone();
    for spec in tarn_common::settings::SETTINGS {
        assert!(
            g.get(spec.name).is_some(),
            "setting {} is not a variable",
            spec.name
        );
    }
    assert_eq!(g.get("scan_threads"), Some(Value::UInt(3)));
    assert_eq!(g.get("lock_scheduling"), Some(text("fifo")));
    assert_eq!(g.get("latch_accounting"), Some(Value::Int(0)));
    assert_eq!(g.display("latch_accounting").as_deref(), Some("OFF"));
    assert_eq!(g.get("secondary_prefetch"), Some(text("adaptive")));
    for name in ["io_method", "log_device", "buffer_pool_instances"] {
        assert!(g.get(name).is_some(), "{name}");
    }
    let (code, message) = error_of(g.set("io_method", Some(&text("direct")), true, &defaults));
    assert_eq!(
        (code, message.as_str()),
        (
            1238,
            "Variable 'io_method' is a read only variable (it takes effect at start: set \
             it in the configuration file or with --set, and restart)"
        )
    );
    // The two settings that share MySQL's names are MySQL's variables, writable.
    assert_eq!(g.get("transaction_isolation"), Some(text("READ-COMMITTED")));
    assert_eq!(g.get("lock_wait_timeout"), Some(Value::UInt(7)));
    assert_eq!(g.get("innodb_lock_wait_timeout"), Some(Value::UInt(7)));
    let s = SystemVariables::session_from(&g);
    assert_eq!(s.isolation(), IsolationLevel::ReadCommitted);
    assert_eq!(s.get("scan_threads"), None);
}

#[test]
fn engine_setting_variables_are_writable_exactly_when_the_setting_is_live() {
    let mut backed = 0;
    for spec in all_specs() {
        let Some(setting) = engine_setting_spec(spec.name) else {
            continue;
        };
        backed += 1;
        assert_eq!(spec.read_only, !setting.live, "{}", spec.name);
        assert!(spec.scope.has_global(), "{}", spec.name);
    }
    assert!(backed > tarn_common::settings::SETTINGS.len());
    assert_eq!(
        engine_setting("innodb_flush_log_at_trx_commit"),
        Some("flush_log_at_commit")
    );
    assert_eq!(
        engine_setting("LOCK_WAIT_TIMEOUT"),
        Some("lock_wait_timeout")
    );
    assert_eq!(engine_setting("transaction_isolation"), None);
    assert_eq!(engine_setting("tx_isolation"), None);
    assert_eq!(engine_setting("max_connections"), None);
}

#[test]
fn text_from_the_configuration_file_converts_like_set() {
    let mut g = globals();
    for (name, value, stored) in [
        ("max_connections", "1000", Value::UInt(1000)),
        ("max_allowed_packet", "16M", Value::UInt(16 << 20)),
        ("autocommit", "off", Value::Int(0)),
        ("bind_address", "::", text("::")),
        ("transaction_isolation", "1", text("READ-COMMITTED")),
    ] {
        let value = text_value(spec(name).unwrap().kind, value);
        assert_eq!(g.set_at_start(name, &value).unwrap(), stored, "{name}");
    }
    let value = text_value(spec("port").unwrap().kind, "many");
    assert_eq!(error_of(g.set_at_start("port", &value)).0, 1232);
}

#[test]
fn scopes_and_read_only_errors() {
    let mut g = globals();
    let defaults = g.clone();
    let mut s = SystemVariables::session_from(&g);
    let one = Value::Int(1);
    let cases = [
        (
            s.set("nope", Some(&one), false, &defaults),
            1193,
            "Unknown system variable 'nope'",
        ),
        (
            s.set("version", Some(&text("x")), false, &defaults),
            1238,
            "Variable 'version' is a read only variable",
        ),
        (
            s.set("max_connections", Some(&one), false, &defaults),
            1229,
            "Variable 'max_connections' is a GLOBAL variable and should be set with SET GLOBAL",
        ),
        (
            g.set("last_insert_id", Some(&one), true, &defaults),
            1228,
            "Variable 'last_insert_id' is a SESSION variable and can't be used with SET GLOBAL",
        ),
        (
            s.set("warning_count", Some(&one), false, &defaults),
            1238,
            "Variable 'warning_count' is a read only variable",
        ),
    ];
    for (result, code, message) in cases {
        let (got_code, got) = error_of(result);
        assert_eq!((got_code, got.as_str()), (code, message));
    }
    assert_eq!(
        g.set("max_connections", Some(&Value::Int(10)), true, &defaults)
            .unwrap(),
        Value::UInt(10)
    );
    assert_eq!(g.get("max_connections"), Some(Value::UInt(10)));
    // SET GLOBAL changes the global, not a session's copy; new sessions copy it.
    g.set(
        "sort_buffer_size",
        Some(&Value::Int(1 << 20)),
        true,
        &defaults,
    )
    .unwrap();
    assert_eq!(s.get("sort_buffer_size"), Some(Value::UInt(262_144)));
    assert_eq!(
        SystemVariables::session_from(&g).get("sort_buffer_size"),
        Some(Value::UInt(1 << 20))
    );
    // The server updates counters and its address itself.
    assert!(s.set_internal("warning_count", Value::UInt(3)));
    assert_eq!(s.get("warning_count"), Some(Value::UInt(3)));
    assert!(g.set_internal("port", Value::UInt(3307)));
    assert!(!s.set_internal("port", Value::UInt(3307)));
}

#[test]
fn booleans() {
    let g = globals();
    let mut s = SystemVariables::session_from(&g);
    for (given, stored) in [
        (text("OFF"), 0),
        (text("on"), 1),
        (text("false"), 0),
        (text("TRUE"), 1),
        (Value::Int(0), 0),
        (Value::UInt(1), 1),
        (text("0"), 0),
        (text("1"), 1),
    ] {
        assert_eq!(
            s.set("autocommit", Some(&given), false, &g).unwrap(),
            Value::Int(stored)
        );
        assert_eq!(s.get("AUTOCOMMIT"), Some(Value::Int(stored)));
    }
    assert_eq!(s.display("autocommit").as_deref(), Some("ON"));
    let (code, message) = error_of(s.set("autocommit", Some(&Value::Int(5)), false, &g));
    assert_eq!(
        (code, message.as_str()),
        (
            1231,
            "Variable 'autocommit' can't be set to the value of '5'"
        )
    );
    assert_eq!(
        error_of(s.set("autocommit", Some(&text("maybe")), false, &g)).0,
        1231
    );
    assert_eq!(
        error_of(s.set("autocommit", Some(&Value::Null), false, &g)).1,
        "Variable 'autocommit' can't be set to the value of 'NULL'"
    );
    let (code, message) = error_of(s.set("autocommit", Some(&Value::Double(0.5)), false, &g));
    assert_eq!(
        (code, message.as_str()),
        (1232, "Incorrect argument type to variable 'autocommit'")
    );
    assert!(s.get_bool("autocommit"));
    s.set("tx_read_only", Some(&text("ON")), false, &g).unwrap();
    assert_eq!(s.get("transaction_read_only"), Some(Value::Int(1)));
}

#[test]
fn integers_are_clamped_and_typed() {
    let g = globals();
    let mut s = SystemVariables::session_from(&g);
    assert_eq!(
        s.set("auto_increment_increment", Some(&Value::Int(0)), false, &g)
            .unwrap(),
        Value::UInt(1)
    );
    assert_eq!(
        s.set(
            "auto_increment_increment",
            Some(&Value::Int(70_000)),
            false,
            &g
        )
        .unwrap(),
        Value::UInt(65_535)
    );
    assert_eq!(
        s.set("div_precision_increment", Some(&Value::Int(-3)), false, &g)
            .unwrap(),
        Value::UInt(0)
    );
    assert_eq!(
        s.set("sql_select_limit", Some(&Value::UInt(10)), false, &g)
            .unwrap(),
        Value::UInt(10)
    );
    assert_eq!(
        error_of(s.set("wait_timeout", Some(&text("10")), false, &g)).0,
        1232
    );
    assert_eq!(
        error_of(s.set("wait_timeout", Some(&Value::Double(1.5)), false, &g)).0,
        1232
    );
    assert_eq!(
        s.set(
            "query_memory_max_bytes",
            Some(&Value::UInt(u64::MAX)),
            false,
            &g
        )
        .unwrap(),
        Value::UInt(QUERY_MEMORY_MAX_BYTES_CEILING)
    );
    assert_eq!(
        s.get_u64("query_memory_max_bytes"),
        QUERY_MEMORY_MAX_BYTES_CEILING
    );
    // DEFAULT takes the value from `defaults`.
    assert_eq!(
        s.set("query_memory_max_bytes", None, false, &g).unwrap(),
        Value::UInt(QUERY_MEMORY_DEFAULT_BYTES)
    );
    assert_eq!(
        s.set("last_insert_id", Some(&Value::Int(42)), false, &g)
            .unwrap(),
        Value::UInt(42)
    );
    assert_eq!(s.get("identity"), Some(Value::UInt(42)));
}

#[test]
fn sql_mode() {
    let g = globals();
    let mut s = SystemVariables::session_from(&g);
    assert_eq!(s.get_str("sql_mode"), SQL_MODE_DEFAULT);
    let stored = s
        .set(
            "sql_mode",
            Some(&text("no_zero_date, strict_trans_tables,ANSI_QUOTES")),
            false,
            &g,
        )
        .unwrap();
    assert_eq!(stored, text("ANSI_QUOTES,STRICT_TRANS_TABLES,NO_ZERO_DATE"));
    assert!(s.sql_mode_has("ANSI_QUOTES"));
    assert!(!s.sql_mode_has("ONLY_FULL_GROUP_BY"));
    assert_eq!(
        s.set("sql_mode", Some(&text("")), false, &g).unwrap(),
        text("")
    );
    assert_eq!(
        s.set("sql_mode", Some(&Value::Int(0)), false, &g).unwrap(),
        text("")
    );
    assert_eq!(
        s.set("sql_mode", Some(&text("traditional")), false, &g)
            .unwrap(),
        text(
            "STRICT_TRANS_TABLES,STRICT_ALL_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,\
              ERROR_FOR_DIVISION_BY_ZERO,TRADITIONAL,NO_ENGINE_SUBSTITUTION"
        )
    );
    assert_eq!(
        s.set("sql_mode", Some(&text("ANSI")), false, &g).unwrap(),
        text("REAL_AS_FLOAT,PIPES_AS_CONCAT,ANSI_QUOTES,IGNORE_SPACE,ONLY_FULL_GROUP_BY,ANSI")
    );
    let (code, message) = error_of(s.set(
        "sql_mode",
        Some(&text("STRICT_TRANS_TABLES,BOGUS")),
        false,
        &g,
    ));
    assert_eq!(code, 1231);
    assert_eq!(
        message,
        "Variable 'sql_mode' can't be set to the value of 'STRICT_TRANS_TABLES,BOGUS'"
    );
    assert_eq!(
        error_of(s.set("sql_mode", Some(&Value::Null), false, &g)).0,
        1231
    );
}

#[test]
fn enums_isolation_charsets_and_time_zones() {
    let g = globals();
    let mut s = SystemVariables::session_from(&g);
    for (given, stored) in [
        (text("read-committed"), "READ-COMMITTED"),
        (text("READ UNCOMMITTED"), "READ-UNCOMMITTED"),
        (text("SERIALIZABLE"), "SERIALIZABLE"),
        (Value::Int(2), "REPEATABLE-READ"),
    ] {
        assert_eq!(
            s.set("tx_isolation", Some(&given), false, &g).unwrap(),
            text(stored)
        );
    }
    assert_eq!(s.isolation(), IsolationLevel::RepeatableRead);
    assert_eq!(
        error_of(s.set("transaction_isolation", Some(&text("SNAPSHOT")), false, &g)).0,
        1231
    );
    assert_eq!(
        error_of(s.set("transaction_isolation", Some(&Value::Int(4)), false, &g)).0,
        1231
    );

    assert_eq!(
        s.set("default_storage_engine", Some(&text("innodb")), false, &g)
            .unwrap(),
        text("InnoDB")
    );
    assert_eq!(
        error_of(s.set("storage_engine", Some(&text("MyISAM")), false, &g)).0,
        1231
    );

    assert_eq!(
        s.set("character_set_results", Some(&Value::Null), false, &g)
            .unwrap(),
        Value::Null
    );
    assert_eq!(s.display("character_set_results").as_deref(), Some(""));
    assert_eq!(
        s.set("character_set_client", Some(&text("UTF8")), false, &g)
            .unwrap(),
        text("utf8mb3")
    );
    assert_eq!(
        error_of(s.set("character_set_client", Some(&Value::Null), false, &g)).0,
        1231
    );
    assert_eq!(
        error_of(s.set("character_set_client", Some(&text("latin1")), false, &g)).0,
        1231
    );
    assert_eq!(
        s.set(
            "collation_connection",
            Some(&text("utf8mb4_BIN")),
            false,
            &g
        )
        .unwrap(),
        text("utf8mb4_bin")
    );
    assert_eq!(
        error_of(s.set("collation_connection", Some(&text("klingon_ci")), false, &g)).0,
        1231
    );

    for (given, stored) in [
        ("system", "SYSTEM"),
        ("+5:30", "+05:30"),
        ("-13:59", "-13:59"),
        ("+14:00", "+14:00"),
        ("utc", "UTC"),
        ("europe/paris", "europe/paris"),
    ] {
        assert_eq!(
            s.set("time_zone", Some(&text(given)), false, &g).unwrap(),
            text(stored)
        );
    }
    for bad in ["+14:01", "Europe/Nowhere", "+1:5", "05:00", "../zone.tab"] {
        let (code, message) = error_of(s.set("time_zone", Some(&text(bad)), false, &g));
        assert_eq!(
            (code, message),
            (1298, format!("Unknown or incorrect time zone: '{bad}'"))
        );
    }
    assert_eq!(time_zone_offset_min("-01:30"), Some(-90));
    assert_eq!(time_zone_offset_min("SYSTEM"), None);
}

#[test]
fn iteration_is_sorted_and_includes_aliases() {
    let g = globals();
    let mut s = SystemVariables::session_from(&g);
    let names: Vec<&str> = g.iter().map(|(n, _)| n).collect();
    assert!(names.windows(2).all(|w| w[0] < w[1]), "sorted and unique");
    assert!(names.contains(&"tx_isolation") && names.contains(&"version"));
    assert!(
        !names.contains(&"warning_count"),
        "session-only variables are not global"
    );
    s.set("autocommit", Some(&Value::Int(0)), false, &g)
        .unwrap();
    let merged = s.with_globals(&g);
    let all: Vec<(&str, &Value)> = merged.iter().collect();
    assert!(
        all.iter()
            .any(|(n, v)| *n == "autocommit" && **v == Value::Int(0))
    );
    assert!(all.iter().any(|(n, _)| *n == "version"));
    assert!(all.iter().any(|(n, _)| *n == "warning_count"));
    assert!(all.iter().any(|(n, _)| *n == "scan_threads"));
    assert_eq!(merged.display("autocommit").as_deref(), Some("OFF"));
}
