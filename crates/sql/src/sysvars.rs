//! MySQL system variables (`@@name`, `SET [GLOBAL | SESSION] name = value`,
//! `SHOW VARIABLES`).
//!
//! Clients read a fixed set of variables on connect (Connector/J asks for
//! `auto_increment_increment`, `character_set_*`, `sql_mode`, `transaction_isolation`,
//! `wait_timeout` and a dozen more; the mariadb CLI for `version_comment`) and give up
//! if one is unknown, so every variable they read is in [`VARIABLES`] with MySQL's
//! name, scope, domain and default. Tarn adds:
//!
//! - `query_memory_max_bytes` (session and global): the memory a query's operators
//!   may hold before error 1038;
//! - every engine setting of [`tarn_common::settings::SETTINGS`] under its own name
//!   (`scan_threads`, `secondary_prefetch`, `lock_scheduling`, `log_device`,
//!   `buffer_pool_instances`, `io_method`, ...) as a GLOBAL variable, so the
//!   techniques S1 to S5 an engine runs with are visible from SQL. The settings that
//!   can change while the engine runs ([`SettingSpec::live`]) are writable: `SET
//!   GLOBAL` of one goes to `Storage::set_live_setting` (through
//!   `Engine::set_global_value`), which tells the component using it. The others are
//!   read-only (1238) and need a restart. Two settings share a MySQL variable's name
//!   and are that variable instead: `transaction_isolation` (its default only) and
//!   `lock_wait_timeout`; MySQL's `innodb_*` names of settings
//!   ([`tarn_common::settings::SETTING_ALIASES`]) are the settings too
//!   ([`engine_setting`]);
//! - the lock wait timeouts: `innodb_lock_wait_timeout` (an alias of the setting)
//!   and `lock_wait_timeout` both show the engine setting `lock_wait_timeout` at the
//!   global level, and `SET GLOBAL` of either changes it: the engine-wide timeout of
//!   internal transactions (DDL, purge) and the default of sessions that start
//!   later. A session's own `innodb_lock_wait_timeout` bounds the lock waits of its
//!   transactions (`Session` hands it to the lock manager). A session's
//!   `lock_wait_timeout` is, as in MySQL, its metadata lock timeout: how long its
//!   DDL waits for other sessions' LOCK TABLES and global read lock, and its LOCK
//!   TABLES and FLUSH TABLES WITH READ LOCK for DDL under way (`metadata_locks.rs`;
//!   their waits for the lock manager's table locks are row lock waits);
//! - what the server needs: `bind_address`, `ssl_cert`, `ssl_key`,
//!   `auto_generate_certs` (read-only, set from the configuration file or the flags
//!   at start through `Engine::set_global`), `send_threads` and
//!   `result_buffer_max_bytes` (how results are encoded and buffered per connection).
//!
//! # Levels
//!
//! A [`SystemVariables`] is either the server's global level ([`new_global`]) or
//! one session's level ([`session_from`]). The global level holds every GLOBAL and
//! GLOBAL+SESSION variable and, hidden from [`get`] and [`iter`], the defaults of the
//! session-only ones. A session holds only the SESSION and GLOBAL+SESSION variables,
//! copied from the global level when it starts; a global-only variable is read from
//! the global level (`session.get(x).or_else(|| globals.get(x))`), so `SET GLOBAL`
//! of it is seen by every session at once, as in MySQL.
//!
//! # Values
//!
//! Booleans are `Value::Int(0 | 1)` (what `SELECT @@autocommit` returns) and
//! [`SystemVariables::display`] shows them as `ON`/`OFF` (what `SHOW VARIABLES`
//! shows); integers are `Value::UInt` (or `Value::Int` for signed domains); everything
//! else is `Value::Bytes` in its canonical spelling (upper-case `sql_mode` in MySQL's
//! order, `REPEATABLE-READ`, `utf8mb4`). An integer outside its domain is clamped to
//! it, as MySQL does; MySQL also warns (1292, "Truncated incorrect x value"), which is
//! the caller's to add when the stored value differs from the one given.
//!
//! [`new_global`]: SystemVariables::new_global
//! [`session_from`]: SystemVariables::session_from
//! [`get`]: SystemVariables::get
//! [`iter`]: SystemVariables::iter

use std::collections::{BTreeMap, HashMap};
use std::sync::LazyLock;

use tarn_common::settings::{
    IsolationLevel, SETTING_ALIASES, SETTINGS, SettingSpec, Settings, setting_spec,
};
use tarn_common::{Error, Result};
use tarn_row::Value;

use crate::scalar::tz::TimeZone;

/// The version string clients see (`@@version`, `VERSION()`, the handshake).
pub const SERVER_VERSION: &str = "8.0.36-tarn-0.1";

use crate::limits::{
    CTE_MAX_RECURSION_DEPTH_DEFAULT, PREPARED_STMT_COUNT_DEFAULT, PREPARED_STMT_COUNT_MAX,
    QUERY_MEMORY_DEFAULT_BYTES, QUERY_MEMORY_MAX_BYTES_CEILING, RESULT_BUFFER_DEFAULT_BYTES,
    RESULT_BUFFER_MAX_BYTES, RESULT_BUFFER_MIN_BYTES, SEND_THREADS_MAX,
};
/// The least `query_memory_max_bytes` may be set to: below a megabyte every query
/// with a sort or a hash table would fail.
const QUERY_MEMORY_MIN_BYTES: u64 = 1 << 20;

/// Where a variable lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VarScope {
    /// Server-wide only (`SET GLOBAL`).
    Global,
    /// Per session only (`SET [SESSION]`).
    Session,
    /// A global value that each new session copies and may change for itself.
    Both,
}

impl VarScope {
    fn has_global(self) -> bool {
        matches!(self, VarScope::Global | VarScope::Both)
    }

    fn has_session(self) -> bool {
        matches!(self, VarScope::Session | VarScope::Both)
    }
}

/// A variable's domain: what `SET` accepts and how the value is stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VarKind {
    /// `ON`/`OFF`/`TRUE`/`FALSE`/1/0, stored as `Value::Int(0 | 1)`.
    Bool,
    /// A signed integer, clamped to `min..=max`, stored as `Value::Int`.
    Int { min: i64, max: i64 },
    /// An unsigned integer, clamped to `min..=max`, stored as `Value::UInt`.
    UInt { min: u64, max: u64 },
    /// Any string.
    Str,
    /// One of the names (case-insensitive, or its 0-based position), stored as spelled
    /// here.
    Enum(&'static [&'static str]),
    /// A comma-separated subset of the names, stored upper-case in this order
    /// (`sql_mode`, which also expands `ANSI` and `TRADITIONAL` as MySQL does).
    Set(&'static [&'static str]),
    /// `READ-UNCOMMITTED`, `READ-COMMITTED`, `REPEATABLE-READ`, `SERIALIZABLE` (also
    /// with spaces or underscores, or 0 to 3).
    Isolation,
    /// A character set of [`CHARSETS`]; `nullable` allows NULL (only
    /// `character_set_results`: "send results as stored").
    Charset { nullable: bool },
    /// A collation of [`COLLATIONS`].
    Collation,
    /// `SYSTEM`, `UTC`, or an offset `+HH:MM` / `-HH:MM` from -13:59 to +14:00.
    TimeZone,
}

/// A variable's default: a constant, or computed from the engine's settings.
#[derive(Clone, Copy)]
pub enum VarDefault {
    Bool(bool),
    UInt(u64),
    Str(&'static str),
    /// From the settings (data directory, isolation level, ...).
    Computed(fn(&Settings) -> Value),
    /// The engine setting of this name, in [`Settings::get`]'s text form.
    Setting(&'static str),
}

/// One system variable.
pub struct VarSpec {
    /// Lower-case, as MySQL spells it.
    pub name: &'static str,
    pub scope: VarScope,
    /// `SET` fails with 1238; the server may still change it (`set_internal`).
    pub read_only: bool,
    pub kind: VarKind,
    pub default: VarDefault,
}

const fn var(
    name: &'static str,
    scope: VarScope,
    read_only: bool,
    kind: VarKind,
    default: VarDefault,
) -> VarSpec {
    VarSpec {
        name,
        scope,
        read_only,
        kind,
        default,
    }
}

use VarDefault as D;
use VarKind as K;
use VarScope::{Both, Global, Session};

const TIMEOUT_S: VarKind = K::UInt {
    min: 1,
    max: 31_536_000,
};
const ANY_UINT: VarKind = K::UInt {
    min: 0,
    max: u64::MAX,
};
const U32: VarKind = K::UInt {
    min: 0,
    max: u32::MAX as u64,
};
const CHARSET: VarKind = K::Charset { nullable: false };
const RW: bool = false;
const RO: bool = true;

/// `sql_mode`'s modes in MySQL 8's order (its unused bits left out).
pub const SQL_MODES: &[&str] = &[
    "REAL_AS_FLOAT",
    "PIPES_AS_CONCAT",
    "ANSI_QUOTES",
    "IGNORE_SPACE",
    "ONLY_FULL_GROUP_BY",
    "NO_UNSIGNED_SUBTRACTION",
    "NO_DIR_IN_CREATE",
    "ANSI",
    "NO_AUTO_VALUE_ON_ZERO",
    "NO_BACKSLASH_ESCAPES",
    "STRICT_TRANS_TABLES",
    "STRICT_ALL_TABLES",
    "NO_ZERO_IN_DATE",
    "NO_ZERO_DATE",
    "ALLOW_INVALID_DATES",
    "ERROR_FOR_DIVISION_BY_ZERO",
    "TRADITIONAL",
    "HIGH_NOT_PRECEDENCE",
    "NO_ENGINE_SUBSTITUTION",
    "PAD_CHAR_TO_FULL_LENGTH",
    "TIME_TRUNCATE_FRACTIONAL",
];

/// MySQL 8's default `sql_mode`.
pub const SQL_MODE_DEFAULT: &str = "ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES,NO_ZERO_IN_DATE,\
NO_ZERO_DATE,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION";

/// The modes `ANSI` and `TRADITIONAL` stand for (each also sets itself).
const SQL_MODE_COMBINATIONS: &[(&str, &[&str])] = &[
    (
        "ANSI",
        &[
            "REAL_AS_FLOAT",
            "PIPES_AS_CONCAT",
            "ANSI_QUOTES",
            "IGNORE_SPACE",
            "ONLY_FULL_GROUP_BY",
        ],
    ),
    (
        "TRADITIONAL",
        &[
            "STRICT_TRANS_TABLES",
            "STRICT_ALL_TABLES",
            "NO_ZERO_IN_DATE",
            "NO_ZERO_DATE",
            "ERROR_FOR_DIVISION_BY_ZERO",
            "NO_ENGINE_SUBSTITUTION",
        ],
    ),
];

/// A character set clients may name: (name, default collation, description, bytes
/// per character at most). Tarn stores and sends UTF-8 whatever the connection's
/// character set variables say; these are the sets whose text is valid UTF-8 (or
/// bytes, for `binary`), so naming them never makes a client misread a result.
pub const CHARSETS: &[(&str, &str, &str, u32)] = &[
    ("ascii", "ascii_general_ci", "US ASCII", 1),
    ("binary", "binary", "Binary pseudo charset", 1),
    ("utf8mb3", "utf8mb3_general_ci", "UTF-8 Unicode", 3),
    ("utf8mb4", "utf8mb4_0900_ai_ci", "UTF-8 Unicode", 4),
];

/// A collation: (name, character set, MySQL's id, is the set's default, pad
/// attribute). Tarn compares text either case-insensitively with trailing spaces
/// ignored (`tarn_row::Collation::CaseInsensitive`) or as bytes (`Binary`); the
/// `_ci` names stand for the first, `_bin` and `binary` for the second.
pub const COLLATIONS: &[(&str, &str, u32, bool, &str)] = &[
    ("ascii_bin", "ascii", 65, false, "PAD SPACE"),
    ("ascii_general_ci", "ascii", 11, true, "PAD SPACE"),
    ("binary", "binary", 63, true, "NO PAD"),
    ("utf8mb3_bin", "utf8mb3", 83, false, "PAD SPACE"),
    ("utf8mb3_general_ci", "utf8mb3", 33, true, "PAD SPACE"),
    ("utf8mb4_0900_ai_ci", "utf8mb4", 255, true, "NO PAD"),
    ("utf8mb4_bin", "utf8mb4", 46, false, "PAD SPACE"),
    ("utf8mb4_general_ci", "utf8mb4", 45, false, "PAD SPACE"),
];

/// MySQL 8's character sets (`SHOW CHARACTER SET`), to tell one Tarn does not store
/// (1235) from a name MySQL does not know either (1115).
pub const MYSQL_CHARSETS: &[&str] = &[
    "armscii8", "ascii", "big5", "binary", "cp1250", "cp1251", "cp1256", "cp1257", "cp850",
    "cp852", "cp866", "cp932", "dec8", "eucjpms", "euckr", "gb18030", "gb2312", "gbk", "geostd8",
    "greek", "hebrew", "hp8", "keybcs2", "koi8r", "koi8u", "latin1", "latin2", "latin5", "latin7",
    "macce", "macroman", "sjis", "swe7", "tis620", "ucs2", "ujis", "utf16", "utf16le", "utf32",
    "utf8mb3", "utf8mb4",
];

/// The default collation of character set `charset` (after [`canonical_charset`]).
pub fn default_collation(charset: &str) -> Option<&'static str> {
    CHARSETS.iter().find(|c| c.0 == charset).map(|c| c.1)
}

/// A character set's canonical name: lower-case, `utf8` read as `utf8mb3` (as
/// MySQL 8 does); None if Tarn does not accept it.
pub fn canonical_charset(name: &str) -> Option<&'static str> {
    let lower = name.trim().to_ascii_lowercase();
    let lower = if lower == "utf8" { "utf8mb3" } else { &lower };
    CHARSETS.iter().find(|c| c.0 == lower).map(|c| c.0)
}

/// A collation's canonical name (`utf8_*` read as `utf8mb3_*`); None if unknown.
pub fn canonical_collation(name: &str) -> Option<&'static str> {
    let lower = name.trim().to_ascii_lowercase();
    let lower = match lower.strip_prefix("utf8_") {
        Some(rest) => format!("utf8mb3_{rest}"),
        None => lower,
    };
    COLLATIONS.iter().find(|c| c.0 == lower).map(|c| c.0)
}

fn text(s: &str) -> Value {
    Value::Bytes(s.as_bytes().to_vec())
}

fn datadir(settings: &Settings) -> Value {
    let path = std::path::absolute(&settings.data_dir).unwrap_or(settings.data_dir.clone());
    let mut shown = path.display().to_string();
    if !shown.ends_with('/') {
        shown.push('/');
    }
    Value::Bytes(shown.into_bytes())
}

/// `basedir`: the directory above the running binary's (`/usr/` for `/usr/bin/tarn`),
/// with a trailing `/` as MySQL shows it.
fn basedir(_: &Settings) -> Value {
    let dir = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent()?.parent().map(std::path::Path::to_path_buf))
        .map_or_else(|| "/".to_string(), |d| d.display().to_string());
    Value::Bytes(with_slash(dir).into_bytes())
}

/// `tmpdir`: the system's temporary directory. Tarn writes nothing there (temporary
/// tables are catalog tables in the data directory); tools only show it.
fn tmpdir(_: &Settings) -> Value {
    text(&std::env::temp_dir().display().to_string())
}

fn null(_: &Settings) -> Value {
    Value::Null
}

fn with_slash(mut path: String) -> String {
    if !path.ends_with('/') {
        path.push('/');
    }
    path
}

fn hostname(_: &Settings) -> Value {
    let name = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .ok()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "localhost".to_string());
    Value::Bytes(name.into_bytes())
}

fn compile_os(_: &Settings) -> Value {
    text(match std::env::consts::OS {
        "linux" => "Linux",
        other => other,
    })
}

fn compile_machine(_: &Settings) -> Value {
    text(std::env::consts::ARCH)
}

/// Every MySQL-named variable Tarn knows, sorted by name. The engine settings follow
/// MySQL 8.0's default `optimizer_switch`, shown for tools that read it.
const OPTIMIZER_SWITCH_DEFAULT: &str = "index_merge=on,index_merge_union=on,\
index_merge_sort_union=on,index_merge_intersection=on,engine_condition_pushdown=on,\
index_condition_pushdown=on,mrr=on,mrr_cost_based=on,block_nested_loop=on,\
batched_key_access=off,materialization=on,semijoin=on,loosescan=on,firstmatch=on,\
duplicateweedout=on,subquery_materialization_cost_based=on,use_index_extensions=on,\
condition_fanout_filter=on,derived_merge=on,use_invisible_indexes=off,skip_scan=on,\
hash_join=on,subquery_to_derived=off,prefer_ordering_index=on,hypergraph_optimizer=off,\
derived_condition_pushdown=on";

/// as read-only GLOBAL variables (see the module documentation).
#[rustfmt::skip]
pub static VARIABLES: &[VarSpec] = &[
    var("auto_generate_certs", Global, RO, K::Bool, D::Bool(true)),
    var("auto_increment_increment", Both, RW, K::UInt { min: 1, max: 65_535 }, D::UInt(1)),
    var("auto_increment_offset", Both, RW, K::UInt { min: 1, max: 65_535 }, D::UInt(1)),
    var("autocommit", Both, RW, K::Bool, D::Bool(true)),
    // The installation directory, as MySQL shows it: the one above the binary's.
    var("basedir", Global, RO, K::Str, D::Computed(basedir)),
    var("bind_address", Global, RO, K::Str, D::Str("127.0.0.1")),
    var("character_set_client", Both, RW, CHARSET, D::Str("utf8mb4")),
    var("character_set_connection", Both, RW, CHARSET, D::Str("utf8mb4")),
    var("character_set_database", Both, RW, CHARSET, D::Str("utf8mb4")),
    var("character_set_filesystem", Both, RW, CHARSET, D::Str("binary")),
    var("character_set_results", Both, RW, K::Charset { nullable: true }, D::Str("utf8mb4")),
    var("character_set_server", Both, RW, CHARSET, D::Str("utf8mb4")),
    var("character_set_system", Global, RO, K::Str, D::Str("utf8mb3")),
    var("collation_connection", Both, RW, K::Collation, D::Str("utf8mb4_0900_ai_ci")),
    var("collation_database", Both, RW, K::Collation, D::Str("utf8mb4_0900_ai_ci")),
    var("collation_server", Both, RW, K::Collation, D::Str("utf8mb4_0900_ai_ci")),
    var("connect_timeout", Global, RW, K::UInt { min: 2, max: 31_536_000 }, D::UInt(10)),
    var("cte_max_recursion_depth", Both, RW, U32, D::UInt(CTE_MAX_RECURSION_DEPTH_DEFAULT)),
    var("datadir", Global, RO, K::Str, D::Computed(datadir)),
    var("date_format", Global, RO, K::Str, D::Str("%Y-%m-%d")),
    var("datetime_format", Global, RO, K::Str, D::Str("%Y-%m-%d %H:%i:%s")),
    // The plugin of accounts created without `IDENTIFIED WITH`, and of root on first
    // start. MySQL 8's is caching_sha2_password; Tarn's is MariaDB's, because
    // libmariadb-based clients (sysbench, mysqlclient on Debian) fail when several
    // threads load caching_sha2_password at once.
    var(
        "default_authentication_plugin",
        Global,
        RO,
        K::Enum(&["mysql_native_password", "caching_sha2_password"]),
        D::Str("mysql_native_password"),
    ),
    var("default_storage_engine", Both, RW, K::Enum(&["InnoDB"]), D::Str("InnoDB")),
    var("div_precision_increment", Both, RW, K::UInt { min: 0, max: 30 }, D::UInt(4)),
    var("error_count", Session, RO, ANY_UINT, D::UInt(0)),
    var("explicit_defaults_for_timestamp", Both, RO, K::Bool, D::Bool(true)),
    var("foreign_key_checks", Both, RW, K::Bool, D::Bool(true)),
    var("group_concat_max_len", Both, RW, K::UInt { min: 4, max: u64::MAX }, D::UInt(1024)),
    // No replication, so no GTIDs: mysqldump probes it to decide on GTID_PURGED.
    var("gtid_mode", Global, RO, K::Enum(&["OFF", "OFF_PERMISSIVE", "ON_PERMISSIVE", "ON"]),
        D::Str("OFF")),
    var("have_ssl", Global, RO, K::Str, D::Str("DISABLED")),
    var("hostname", Global, RO, K::Str, D::Computed(hostname)),
    // Tarn computes table statistics when they are read; stored for clients that set
    // it to 0 (DBeaver, Workbench) to get MySQL's fresh statistics.
    var("information_schema_stats_expiry", Both, RW, K::UInt { min: 0, max: 31_536_000 },
        D::UInt(86_400)),
    var("init_connect", Global, RW, K::Str, D::Str("")),
    var("innodb_buffer_pool_instances", Global, RO, ANY_UINT, D::Setting("buffer_pool_instances")),
    var("innodb_buffer_pool_size", Global, RO, ANY_UINT, D::Setting("buffer_pool_size")),
    var("innodb_default_row_format", Global, RO,
        K::Enum(&["redundant", "compact", "dynamic"]), D::Str("dynamic")),
    var("innodb_doublewrite", Global, RO, K::Bool, D::Setting("doublewrite")),
    var("innodb_flush_log_at_trx_commit", Global, RW, ANY_UINT, D::Setting("flush_log_at_commit")),
    // Every table is its own B+tree file.
    var("innodb_file_per_table", Global, RO, K::Bool, D::Bool(true)),
    var("innodb_lock_wait_timeout", Both, RW, K::UInt { min: 1, max: 1_073_741_824 },
        D::Setting("lock_wait_timeout")),
    var("interactive_timeout", Both, RW, TIMEOUT_S, D::UInt(28_800)),
    var("last_insert_id", Session, RW, ANY_UINT, D::UInt(0)),
    var("license", Global, RO, K::Str, D::Str(env!("CARGO_PKG_LICENSE"))),
    // LOAD DATA LOCAL INFILE: off until enabled, as in MySQL 8; the client must
    // enable it too (`mariadb --local-infile=1`).
    var("local_infile", Global, RW, K::Bool, D::Bool(false)),
    var("lock_wait_timeout", Both, RW, TIMEOUT_S, D::Setting("lock_wait_timeout")),
    // Tarn logs to its standard error.
    var("log_error", Global, RO, K::Str, D::Str("stderr")),
    var("log_bin", Global, RO, K::Bool, D::Bool(false)),
    var("lower_case_table_names", Global, RO, K::UInt { min: 0, max: 2 }, D::UInt(0)),
    var("max_allowed_packet", Both, RW, K::UInt { min: 1024, max: 1 << 30 }, D::UInt(64 << 20)),
    var("max_connections", Global, RW, K::UInt { min: 1, max: 100_000 }, D::UInt(151)),
    var("max_error_count", Both, RW, K::UInt { min: 0, max: 65_535 }, D::UInt(1024)),
    var("max_execution_time", Both, RW, U32, D::UInt(0)),
    var("max_heap_table_size", Both, RW, K::UInt { min: 16_384, max: u64::MAX }, D::UInt(16 << 20)),
    var("max_prepared_stmt_count", Global, RW,
        K::UInt { min: 0, max: PREPARED_STMT_COUNT_MAX }, D::UInt(PREPARED_STMT_COUNT_DEFAULT)),
    var("net_buffer_length", Both, RW, K::UInt { min: 1024, max: 1 << 20 }, D::UInt(16_384)),
    var("net_read_timeout", Both, RW, TIMEOUT_S, D::UInt(30)),
    var("net_write_timeout", Both, RW, TIMEOUT_S, D::UInt(60)),
    // Stored for clients that set it (mysqldump sets 'semijoin=off'); Tarn's planner
    // has no switches, and the value is kept as written, not merged as MySQL does.
    var("optimizer_switch", Both, RW, K::Str, D::Str(OPTIMIZER_SWITCH_DEFAULT)),
    var("performance_schema", Global, RO, K::Bool, D::Bool(false)),
    var("port", Global, RO, K::UInt { min: 0, max: 65_535 }, D::UInt(3306)),
    var("protocol_version", Global, RO, ANY_UINT, D::UInt(10)),
    var("query_cache_size", Global, RO, ANY_UINT, D::UInt(0)),
    var("query_cache_type", Both, RO, K::Enum(&["OFF", "ON", "DEMAND"]), D::Str("OFF")),
    // Tarn has no read-only mode: the variables tools read to find a primary.
    var("read_only", Global, RO, K::Bool, D::Bool(false)),
    var("query_memory_max_bytes", Both, RW,
        K::UInt { min: QUERY_MEMORY_MIN_BYTES, max: QUERY_MEMORY_MAX_BYTES_CEILING },
        D::UInt(QUERY_MEMORY_DEFAULT_BYTES)),
    var("require_secure_transport", Global, RW, K::Bool, D::Bool(false)),
    var("result_buffer_max_bytes", Both, RW,
        K::UInt { min: RESULT_BUFFER_MIN_BYTES, max: RESULT_BUFFER_MAX_BYTES },
        D::UInt(RESULT_BUFFER_DEFAULT_BYTES)),
    // NULL: the server reads and writes no files of its own (LOAD DATA without LOCAL
    // and SELECT .. INTO OUTFILE are refused, `load.rs`), as MySQL with NULL here.
    var("secure_file_priv", Global, RO, K::Str, D::Computed(null)),
    var("send_threads", Both, RW, K::UInt { min: 0, max: SEND_THREADS_MAX }, D::UInt(0)),
    var("server_id", Global, RO, U32, D::UInt(1)),
    var("socket", Global, RO, K::Str, D::Str("")),
    var("sort_buffer_size", Both, RW, K::UInt { min: 32_768, max: u64::MAX }, D::UInt(262_144)),
    var("sql_auto_is_null", Both, RW, K::Bool, D::Bool(false)),
    // No binary log to write to; accepted for dumps of GTID servers (`SET
    // @@SESSION.SQL_LOG_BIN = 0`).
    var("sql_log_bin", Session, RW, K::Bool, D::Bool(true)),
    var("sql_mode", Both, RW, K::Set(SQL_MODES), D::Str(SQL_MODE_DEFAULT)),
    var("sql_notes", Both, RW, K::Bool, D::Bool(true)),
    // Stored for clients that set it (mysqldump); SHOW CREATE always quotes names.
    var("sql_quote_show_create", Both, RW, K::Bool, D::Bool(true)),
    var("sql_safe_updates", Both, RW, K::Bool, D::Bool(false)),
    var("sql_select_limit", Both, RW, ANY_UINT, D::UInt(u64::MAX)),
    var("sql_warnings", Both, RW, K::Bool, D::Bool(false)),
    var("ssl_cert", Global, RO, K::Str, D::Str("")),
    var("ssl_key", Global, RO, K::Str, D::Str("")),
    var("super_read_only", Global, RO, K::Bool, D::Bool(false)),
    var("system_time_zone", Global, RO, K::Str, D::Str("UTC")),
    var("time_format", Global, RO, K::Str, D::Str("%H:%i:%s")),
    var("time_zone", Both, RW, K::TimeZone, D::Str("SYSTEM")),
    var("tmpdir", Global, RO, K::Str, D::Computed(tmpdir)),
    var("tmp_table_size", Both, RW, K::UInt { min: 1024, max: u64::MAX }, D::UInt(16 << 20)),
    var("transaction_isolation", Both, RW, K::Isolation, D::Setting("transaction_isolation")),
    var("transaction_read_only", Both, RW, K::Bool, D::Bool(false)),
    var("unique_checks", Both, RW, K::Bool, D::Bool(true)),
    var("version", Global, RO, K::Str, D::Str(SERVER_VERSION)),
    var("version_comment", Global, RO, K::Str, D::Str("Tarn")),
    var("version_compile_machine", Global, RO, K::Str, D::Computed(compile_machine)),
    var("version_compile_os", Global, RO, K::Str, D::Computed(compile_os)),
    var("wait_timeout", Both, RW, TIMEOUT_S, D::UInt(28_800)),
    var("warning_count", Session, RO, ANY_UINT, D::UInt(0)),
];

/// Old names MySQL still answers to: (alias, variable).
pub const ALIASES: &[(&str, &str)] = &[
    ("identity", "last_insert_id"),
    ("storage_engine", "default_storage_engine"),
    ("tx_isolation", "transaction_isolation"),
    ("tx_read_only", "transaction_read_only"),
];

/// The engine settings as variables: GLOBAL, writable if the setting is live, typed
/// by their default's text (`on`/`off` are booleans, digits unsigned integers, the
/// rest strings).
static ENGINE_VARIABLES: LazyLock<Vec<VarSpec>> = LazyLock::new(|| {
    let defaults = Settings::default();
    SETTINGS
        .iter()
        .filter(|s| !VARIABLES.iter().any(|v| v.name == s.name))
        .map(|s| {
            let shown = defaults.get(s.name).unwrap_or_default();
            let kind = if shown == "on" || shown == "off" {
                K::Bool
            } else if !shown.is_empty() && shown.bytes().all(|b| b.is_ascii_digit()) {
                ANY_UINT
            } else {
                K::Str
            };
            var(s.name, Global, !s.live, kind, D::Setting(s.name))
        })
        .collect()
});

/// Every name (variables and aliases) to its variable.
static BY_NAME: LazyLock<HashMap<&'static str, &'static VarSpec>> = LazyLock::new(|| {
    let mut map: HashMap<&'static str, &'static VarSpec> = VARIABLES
        .iter()
        .chain(ENGINE_VARIABLES.iter())
        .map(|v| (v.name, v))
        .collect();
    for &(alias, target) in ALIASES {
        let spec = map[target];
        map.insert(alias, spec);
    }
    map
});

/// The variable named `name` (any case, aliases included).
pub fn spec(name: &str) -> Option<&'static VarSpec> {
    if name.bytes().any(|b| b.is_ascii_uppercase()) {
        BY_NAME.get(name.to_ascii_lowercase().as_str()).copied()
    } else {
        BY_NAME.get(name).copied()
    }
}

/// The engine setting variable `name` (any case, aliases included) stands for: its
/// own name for the engine-setting variables, the setting for `lock_wait_timeout` and
/// MySQL's `innodb_*` names of settings. `SET GLOBAL` of such a variable changes the
/// setting. `transaction_isolation` is not one: the setting is only its default.
pub fn engine_setting(name: &str) -> Option<&'static str> {
    let spec = spec(name)?;
    if spec.name == "transaction_isolation" {
        return None;
    }
    SETTINGS
        .iter()
        .map(|s| s.name)
        .find(|n| *n == spec.name)
        .or_else(|| {
            SETTING_ALIASES
                .iter()
                .find(|(alias, _)| *alias == spec.name)
                .map(|(_, setting)| *setting)
        })
}

/// The setting of [`engine_setting`], with its spec.
pub fn engine_setting_spec(name: &str) -> Option<&'static SettingSpec> {
    engine_setting(name).and_then(setting_spec)
}

/// Every variable: MySQL's, then the engine settings.
pub fn all_specs() -> impl Iterator<Item = &'static VarSpec> {
    VARIABLES.iter().chain(ENGINE_VARIABLES.iter())
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Level {
    Global,
    Session,
    /// A session over the globals ([`SystemVariables::with_globals`]).
    Merged,
}

/// The variables of one level: the server's globals or one session's.
#[derive(Clone, Debug)]
pub struct SystemVariables {
    level: Level,
    /// Canonical name to value. At the global level this includes the defaults of
    /// the session-only variables, which `get` and `iter` do not show.
    values: BTreeMap<&'static str, Value>,
    /// What every statement reads, derived from `values` again whenever one is
    /// stored.
    hot: HotVars,
}

/// The variables every statement reads, decoded once per change instead of looked
/// up by name per statement. Each is what [`SystemVariables::get`] gives, read as
/// the session reads it: a boolean with `to_bool` (false if unknown), a number with
/// `to_i64` and negative values as 0 (None if unknown).
#[derive(Clone, Debug)]
pub struct HotVars {
    pub autocommit: bool,
    pub transaction_read_only: bool,
    /// `transaction_isolation` (REPEATABLE READ if unknown).
    pub isolation: IsolationLevel,
    pub max_execution_time: Option<u64>,
    pub query_memory_max_bytes: Option<u64>,
    pub group_concat_max_len: Option<u64>,
    pub cte_max_recursion_depth: Option<u64>,
    /// As stored (the session clamps it).
    pub div_precision_increment: Option<i64>,
    pub max_allowed_packet: Option<u64>,
    pub send_threads: Option<u64>,
    /// `sql_mode` has ONLY_FULL_GROUP_BY.
    pub only_full_group_by: bool,
    /// `sql_mode` has ERROR_FOR_DIVISION_BY_ZERO and a strict mode.
    pub division_by_zero_is_error: bool,
    /// `sql_mode` has STRICT_TRANS_TABLES or STRICT_ALL_TABLES: a value written that
    /// does not fit its column is an error, not a warning and the nearest value
    /// (`dml::Fit`).
    pub strict: bool,
    /// `sql_mode` has ANSI_QUOTES (`"x"` is an identifier).
    pub ansi_quotes: bool,
    /// `sql_mode` has PIPES_AS_CONCAT (`||` is CONCAT, not OR).
    pub pipes_as_concat: bool,
    /// `foreign_key_checks`: DML checks and enforces FOREIGN KEYs (see
    /// [`crate::foreign_keys`]).
    pub foreign_key_checks: bool,
    /// `time_zone`, resolved (UTC if it names a zone no longer in the database).
    pub time_zone: TimeZone,
}

impl HotVars {
    /// A placeholder until [`HotVars::of`] has the values.
    fn of_nothing() -> HotVars {
        HotVars {
            autocommit: false,
            transaction_read_only: false,
            isolation: IsolationLevel::RepeatableRead,
            max_execution_time: None,
            query_memory_max_bytes: None,
            group_concat_max_len: None,
            cte_max_recursion_depth: None,
            div_precision_increment: None,
            max_allowed_packet: None,
            send_threads: None,
            only_full_group_by: false,
            division_by_zero_is_error: false,
            strict: true,
            ansi_quotes: false,
            pipes_as_concat: false,
            foreign_key_checks: true,
            time_zone: TimeZone::UTC,
        }
    }

    fn of(vars: &SystemVariables) -> HotVars {
        use crate::scalar::cast::{to_bool, to_i64};
        let flag = |name: &str| vars.get(name).and_then(|v| to_bool(&v)).unwrap_or(false);
        let number = |name: &str| {
            vars.get(name)
                .and_then(|v| to_i64(&v))
                .map(|v| v.max(0) as u64)
        };
        HotVars {
            autocommit: flag("autocommit"),
            transaction_read_only: flag("transaction_read_only"),
            isolation: match vars.get("transaction_isolation") {
                Some(Value::Bytes(b)) => IsolationLevel::parse(&String::from_utf8_lossy(&b)),
                _ => None,
            }
            .unwrap_or(IsolationLevel::RepeatableRead),
            max_execution_time: number("max_execution_time"),
            query_memory_max_bytes: number("query_memory_max_bytes"),
            group_concat_max_len: number("group_concat_max_len"),
            cte_max_recursion_depth: number("cte_max_recursion_depth"),
            div_precision_increment: vars.get("div_precision_increment").and_then(|v| to_i64(&v)),
            max_allowed_packet: number("max_allowed_packet"),
            send_threads: number("send_threads"),
            only_full_group_by: vars.sql_mode_has("ONLY_FULL_GROUP_BY"),
            division_by_zero_is_error: vars.sql_mode_has("ERROR_FOR_DIVISION_BY_ZERO")
                && (vars.sql_mode_has("STRICT_TRANS_TABLES")
                    || vars.sql_mode_has("STRICT_ALL_TABLES")),
            strict: vars.sql_mode_has("STRICT_TRANS_TABLES")
                || vars.sql_mode_has("STRICT_ALL_TABLES"),
            ansi_quotes: vars.sql_mode_has("ANSI_QUOTES"),
            pipes_as_concat: vars.sql_mode_has("PIPES_AS_CONCAT"),
            foreign_key_checks: flag("foreign_key_checks"),
            time_zone: match vars.get("time_zone") {
                Some(Value::Bytes(name)) => {
                    TimeZone::resolve(&String::from_utf8_lossy(&name)).unwrap_or(TimeZone::UTC)
                }
                _ => TimeZone::UTC,
            },
        }
    }
}

impl SystemVariables {
    /// Every variable at its default; engine settings come from `settings`.
    pub fn new_global(settings: &Settings) -> SystemVariables {
        let values = all_specs()
            .map(|spec| (spec.name, default_value(spec, settings)))
            .collect();
        SystemVariables::with_values(Level::Global, values)
    }

    /// A new session's variables: the session-scoped ones copied from the globals.
    pub fn session_from(globals: &SystemVariables) -> SystemVariables {
        assert_eq!(
            globals.level,
            Level::Global,
            "sessions start from the globals"
        );
        let values = all_specs()
            .filter(|spec| spec.scope.has_session())
            .map(|spec| (spec.name, globals.values[spec.name].clone()))
            .collect();
        SystemVariables::with_values(Level::Session, values)
    }

    fn with_values(level: Level, values: BTreeMap<&'static str, Value>) -> SystemVariables {
        let mut vars = SystemVariables {
            level,
            values,
            hot: HotVars::of_nothing(),
        };
        vars.hot = HotVars::of(&vars);
        vars
    }

    /// Stores `value` as `name`'s (a canonical name) and derives the hot values again.
    fn store(&mut self, name: &'static str, value: Value) {
        self.values.insert(name, value);
        self.hot = HotVars::of(self);
    }

    /// The variables every statement reads, decoded.
    pub fn hot(&self) -> &HotVars {
        &self.hot
    }

    fn visible(&self, spec: &VarSpec) -> bool {
        match self.level {
            Level::Global => spec.scope.has_global(),
            Level::Session => spec.scope.has_session(),
            Level::Merged => true,
        }
    }

    /// The value of `name` (any case, aliases included) at this level; None if it
    /// is unknown or not of this level (a global-only variable in a session).
    pub fn get(&self, name: &str) -> Option<Value> {
        let spec = spec(name).filter(|s| self.visible(s))?;
        self.values.get(spec.name).cloned()
    }

    /// `name`'s value as `SHOW VARIABLES` shows it: booleans as `ON`/`OFF`, NULL as
    /// an empty string. None as for [`SystemVariables::get`].
    pub fn display(&self, name: &str) -> Option<String> {
        let spec = spec(name).filter(|s| self.visible(s))?;
        Some(display_value(spec, &self.values[spec.name]))
    }

    /// A boolean variable's value (false if unknown).
    pub fn get_bool(&self, name: &str) -> bool {
        matches!(self.get(name), Some(Value::Int(v)) if v != 0)
    }

    /// An unsigned variable's value (0 if unknown).
    pub fn get_u64(&self, name: &str) -> u64 {
        match self.get(name) {
            Some(Value::UInt(v)) => v,
            Some(Value::Int(v)) => u64::try_from(v).unwrap_or(0),
            _ => 0,
        }
    }

    /// A string variable's value (empty if unknown or NULL).
    pub fn get_str(&self, name: &str) -> String {
        match self.get(name) {
            Some(Value::Bytes(b)) => String::from_utf8_lossy(&b).into_owned(),
            _ => String::new(),
        }
    }

    /// `transaction_isolation` (at a session: the session's).
    pub fn isolation(&self) -> IsolationLevel {
        IsolationLevel::parse(&self.get_str("transaction_isolation"))
            .unwrap_or(IsolationLevel::RepeatableRead)
    }

    /// Whether `sql_mode` has `mode` (upper-case).
    pub fn sql_mode_has(&self, mode: &str) -> bool {
        self.get_str("sql_mode").split(',').any(|m| m == mode)
    }

    /// Validates and stores; returns the stored value. `global`: `SET GLOBAL` (on the
    /// global level), else `SET [SESSION]` (on a session). `value` None is
    /// `SET x = DEFAULT`: the value of `x` in `defaults` (a global level: the server's
    /// current globals for MySQL's session semantics, or the compiled defaults).
    pub fn set(
        &mut self,
        name: &str,
        value: Option<&Value>,
        global: bool,
        defaults: &SystemVariables,
    ) -> Result<Value> {
        let lower = name.to_ascii_lowercase();
        let spec = spec(&lower).ok_or_else(|| unknown(&lower))?;
        if spec.read_only {
            return Err(read_only(&lower));
        }
        if global && !spec.scope.has_global() {
            return Err(Error::sql(
                1228, // ER_LOCAL_VARIABLE
                "HY000",
                format!(
                    "Variable '{lower}' is a SESSION variable and can't be used with SET GLOBAL"
                ),
            ));
        }
        if !global && !spec.scope.has_session() {
            return Err(Error::sql(
                1229, // ER_GLOBAL_VARIABLE
                "HY000",
                format!(
                    "Variable '{lower}' is a GLOBAL variable and should be set with SET GLOBAL"
                ),
            ));
        }
        assert_eq!(
            self.level,
            if global {
                Level::Global
            } else {
                Level::Session
            },
            "SET GLOBAL goes to the global level, SET SESSION to a session"
        );
        let stored = match value {
            None => defaults
                .values
                .get(spec.name)
                .cloned()
                .unwrap_or(Value::Null),
            Some(value) => convert(spec.kind, &lower, value)?,
        };
        self.store(spec.name, stored.clone());
        Ok(stored)
    }

    /// `SET GLOBAL` as the server does it at start, from the configuration file and
    /// the command line: checked and converted as `set` does, but a read-only
    /// variable (`port`, `bind_address`, `ssl_cert`, ...) may be set too.
    pub fn set_at_start(&mut self, name: &str, value: &Value) -> Result<Value> {
        assert_eq!(self.level, Level::Global, "start-up values are global");
        let lower = name.to_ascii_lowercase();
        let spec = spec(&lower).ok_or_else(|| unknown(&lower))?;
        if !spec.scope.has_global() {
            return Err(Error::sql(
                1228, // ER_LOCAL_VARIABLE
                "HY000",
                format!(
                    "Variable '{lower}' is a SESSION variable and can't be used with SET GLOBAL"
                ),
            ));
        }
        let stored = convert(spec.kind, &lower, value)?;
        self.store(spec.name, stored.clone());
        Ok(stored)
    }

    /// Stores a value the server keeps up to date itself (`port`, `socket`,
    /// `warning_count`, `last_insert_id`, ...), read-only or not, unchecked.
    /// Returns false if `name` is unknown or not of this level.
    pub fn set_internal(&mut self, name: &str, value: Value) -> bool {
        match spec(name) {
            Some(spec) if self.visible(spec) => {
                self.store(spec.name, value);
                true
            }
            _ => false,
        }
    }

    /// Every variable of this level and every alias of one, sorted by name.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Value)> {
        let mut entries: Vec<(&str, &Value)> = self
            .values
            .iter()
            .filter(|(name, _)| BY_NAME.get(*name).is_some_and(|s| self.visible(s)))
            .map(|(name, value)| (*name, value))
            .collect();
        for &(alias, target) in ALIASES {
            if let Some(value) = self.values.get(target)
                && self.visible(BY_NAME[target])
            {
                entries.push((alias, value));
            }
        }
        entries.sort_by(|a, b| a.0.cmp(b.0));
        entries.into_iter()
    }

    /// This session's variables over the globals: what `SHOW [SESSION] VARIABLES`
    /// lists (every variable, the session's value where it has one). The result is
    /// for reading only (`iter`, `get`, `display`); `set` on it panics.
    pub fn with_globals(&self, globals: &SystemVariables) -> SystemVariables {
        let mut values = globals.values.clone();
        for (name, value) in &self.values {
            values.insert(name, value.clone());
        }
        SystemVariables::with_values(Level::Merged, values)
    }
}

/// 1238 for a read-only variable; for an engine setting, with how to change it.
pub(crate) fn read_only(name: &str) -> Error {
    let hint = if engine_setting(name).is_some() {
        " (it takes effect at start: set it in the configuration file or with --set, \
         and restart)"
    } else {
        ""
    };
    Error::sql(
        1238, // ER_INCORRECT_GLOBAL_LOCAL_VAR
        "HY000",
        format!("Variable '{name}' is a read only variable{hint}"),
    )
}

/// A value given as text (the configuration file, a command-line flag) as the SQL
/// value `SET` would have been given for it: digits (or a size such as `64M`) for
/// an integer variable, an ordinal for an enumeration, the text otherwise.
pub(crate) fn text_value(kind: VarKind, text: &str) -> Value {
    let text = text.trim();
    let number = || {
        text.parse::<i64>().map(Value::Int).ok().or_else(|| {
            tarn_common::settings::parse_size_bytes(text)
                .ok()
                .map(Value::UInt)
        })
    };
    let as_text = || Value::Bytes(text.as_bytes().to_vec());
    match kind {
        VarKind::Int { .. } | VarKind::UInt { .. } => number().unwrap_or_else(as_text),
        VarKind::Enum(_) | VarKind::Isolation
            if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) =>
        {
            number().unwrap_or_else(as_text)
        }
        _ => as_text(),
    }
}

pub(crate) fn unknown(name: &str) -> Error {
    Error::sql(
        1193, // ER_UNKNOWN_SYSTEM_VARIABLE
        "HY000",
        format!("Unknown system variable '{name}'"),
    )
}

pub(crate) fn wrong_value(name: &str, value: &Value) -> Error {
    let shown = match value {
        Value::Null => "NULL".to_string(),
        other => other.to_string(),
    };
    Error::sql(
        1231, // ER_WRONG_VALUE_FOR_VAR
        "42000",
        format!("Variable '{name}' can't be set to the value of '{shown}'"),
    )
}

fn wrong_type(name: &str) -> Error {
    Error::sql(
        1232, // ER_WRONG_TYPE_FOR_VAR
        "42000",
        format!("Incorrect argument type to variable '{name}'"),
    )
}

/// A variable's default value under `settings`.
fn default_value(spec: &VarSpec, settings: &Settings) -> Value {
    match spec.default {
        VarDefault::Bool(b) => Value::Int(i64::from(b)),
        VarDefault::UInt(v) => Value::UInt(v),
        VarDefault::Str(s) => text(s),
        VarDefault::Computed(f) => f(settings),
        VarDefault::Setting(name) => {
            let shown = settings
                .get(name)
                .expect("every VarDefault::Setting names a setting");
            setting_value(spec.kind, &shown)
        }
    }
}

/// A setting's text (`Settings::get`) as a value of `kind`.
pub(crate) fn setting_value(kind: VarKind, shown: &str) -> Value {
    match kind {
        VarKind::Bool => Value::Int(i64::from(shown == "on")),
        VarKind::UInt { .. } => shown.parse().map_or_else(|_| text(shown), Value::UInt),
        VarKind::Int { .. } => shown.parse().map_or_else(|_| text(shown), Value::Int),
        VarKind::Isolation => {
            IsolationLevel::parse(shown).map_or_else(|| text(shown), |l| text(l.name()))
        }
        _ => text(shown),
    }
}

fn display_value(spec: &VarSpec, value: &Value) -> String {
    match (spec.kind, value) {
        (_, Value::Null) => String::new(),
        (VarKind::Bool, Value::Int(v)) => if *v != 0 { "ON" } else { "OFF" }.to_string(),
        (_, other) => other.to_string(),
    }
}

/// Checks `value` against `kind` and converts it to the stored form.
fn convert(kind: VarKind, name: &str, value: &Value) -> Result<Value> {
    let bad = || wrong_value(name, value);
    match kind {
        VarKind::Bool => convert_bool(name, value),
        VarKind::Int { min, max } => match value {
            Value::Int(v) => Ok(Value::Int((*v).clamp(min, max))),
            Value::UInt(v) => Ok(Value::Int(i64::try_from(*v).unwrap_or(max).clamp(min, max))),
            Value::Null => Err(bad()),
            _ => Err(wrong_type(name)),
        },
        VarKind::UInt { min, max } => match value {
            Value::UInt(v) => Ok(Value::UInt((*v).clamp(min, max))),
            Value::Int(v) => Ok(Value::UInt(u64::try_from(*v).unwrap_or(0).clamp(min, max))),
            Value::Null => Err(bad()),
            _ => Err(wrong_type(name)),
        },
        VarKind::Str => match value {
            Value::Bytes(b) => Ok(Value::Bytes(b.clone())),
            Value::Null => Err(bad()),
            _ => Err(wrong_type(name)),
        },
        VarKind::Enum(names) => {
            let found = match value {
                Value::Bytes(_) => names
                    .iter()
                    .find(|n| n.eq_ignore_ascii_case(value.to_string().trim())),
                Value::Int(_) | Value::UInt(_) => ordinal(value).and_then(|i| names.get(i)),
                Value::Null => None,
                _ => return Err(wrong_type(name)),
            };
            found.map(|n| text(n)).ok_or_else(bad)
        }
        VarKind::Set(names) => match value {
            Value::Bytes(_) => parse_set(names, &value.to_string())
                .map(|s| text(&s))
                .ok_or_else(bad),
            Value::Int(0) | Value::UInt(0) => Ok(text("")),
            Value::Null | Value::Int(_) | Value::UInt(_) => Err(bad()),
            _ => Err(wrong_type(name)),
        },
        VarKind::Isolation => {
            let level = match value {
                Value::Bytes(_) => IsolationLevel::parse(&value.to_string()),
                Value::Int(_) | Value::UInt(_) => {
                    ordinal(value).and_then(|i| IsolationLevel::ALL.get(i).copied())
                }
                Value::Null => None,
                _ => return Err(wrong_type(name)),
            };
            level.map(|l| text(l.name())).ok_or_else(bad)
        }
        VarKind::Charset { nullable } => match value {
            Value::Null if nullable => Ok(Value::Null),
            Value::Bytes(_) => canonical_charset(&value.to_string())
                .map(text)
                .ok_or_else(bad),
            Value::Null => Err(bad()),
            _ => Err(wrong_type(name)),
        },
        VarKind::Collation => match value {
            Value::Bytes(_) => canonical_collation(&value.to_string())
                .map(text)
                .ok_or_else(bad),
            Value::Null => Err(bad()),
            _ => Err(wrong_type(name)),
        },
        VarKind::TimeZone => match value {
            Value::Bytes(_) => canonical_time_zone(&value.to_string())
                .map(|s| text(&s))
                .ok_or_else(|| {
                    Error::sql(
                        1298, // ER_UNKNOWN_TIME_ZONE
                        "HY000",
                        format!("Unknown or incorrect time zone: '{value}'"),
                    )
                }),
            Value::Null => Err(bad()),
            _ => Err(wrong_type(name)),
        },
    }
}

fn convert_bool(name: &str, value: &Value) -> Result<Value> {
    let on = match value {
        Value::Int(0) | Value::UInt(0) => Some(false),
        Value::Int(1) | Value::UInt(1) => Some(true),
        Value::Int(_) | Value::UInt(_) | Value::Null => None,
        Value::Bytes(_) => match value.to_string().trim().to_ascii_uppercase().as_str() {
            "ON" | "TRUE" | "1" => Some(true),
            "OFF" | "FALSE" | "0" => Some(false),
            _ => None,
        },
        _ => return Err(wrong_type(name)),
    };
    on.map(|b| Value::Int(i64::from(b)))
        .ok_or_else(|| wrong_value(name, value))
}

/// An integer value as a list position.
fn ordinal(value: &Value) -> Option<usize> {
    match value {
        Value::Int(v) => usize::try_from(*v).ok(),
        Value::UInt(v) => usize::try_from(*v).ok(),
        _ => None,
    }
}

/// A comma list of `names` (any case, blanks around items ignored, empty allowed) in
/// canonical order with `sql_mode`'s combinations expanded; None if a name is unknown.
fn parse_set(names: &[&str], list: &str) -> Option<String> {
    let mut chosen = vec![false; names.len()];
    for item in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let position = names.iter().position(|n| n.eq_ignore_ascii_case(item))?;
        chosen[position] = true;
        if let Some((_, members)) = SQL_MODE_COMBINATIONS
            .iter()
            .find(|(combo, _)| *combo == names[position])
        {
            for member in *members {
                if let Some(p) = names.iter().position(|n| n == member) {
                    chosen[p] = true;
                }
            }
        }
    }
    let picked: Vec<&str> = names
        .iter()
        .zip(&chosen)
        .filter(|(_, on)| **on)
        .map(|(n, _)| *n)
        .collect();
    Some(picked.join(","))
}

/// `SYSTEM`, `UTC`, an offset normalised to `+HH:MM`, or a named zone of the time
/// zone database as given (`europe/berlin`); None if invalid.
pub fn canonical_time_zone(zone: &str) -> Option<String> {
    let zone = zone.trim();
    if zone.eq_ignore_ascii_case("SYSTEM") {
        return Some("SYSTEM".into());
    }
    if zone.eq_ignore_ascii_case("UTC") {
        return Some("UTC".into());
    }
    let Some(offset_min) = time_zone_offset_min(zone) else {
        // A named zone keeps the spelling it was given, as a fresh MySQL server shows it.
        return matches!(TimeZone::resolve(zone)?, TimeZone::Named(_)).then(|| zone.to_string());
    };
    let sign = if offset_min < 0 { '-' } else { '+' };
    let abs = offset_min.unsigned_abs();
    Some(format!("{sign}{:02}:{:02}", abs / 60, abs % 60))
}

/// A time zone's offset from UTC in minutes: `UTC` and offsets `+HH:MM`/`-HH:MM`
/// (MySQL's range, -13:59 to +14:00); None for `SYSTEM` and anything else.
pub fn time_zone_offset_min(zone: &str) -> Option<i32> {
    let zone = zone.trim();
    if zone.eq_ignore_ascii_case("UTC") {
        return Some(0);
    }
    let (sign, rest) = match zone.as_bytes().first()? {
        b'+' => (1, &zone[1..]),
        b'-' => (-1, &zone[1..]),
        _ => return None,
    };
    let (hours, minutes) = rest.split_once(':')?;
    let all_digits =
        |s: &str| !s.is_empty() && s.len() <= 2 && s.bytes().all(|b| b.is_ascii_digit());
    if !all_digits(hours) || minutes.len() != 2 || !all_digits(minutes) {
        return None;
    }
    let hours: i32 = hours.parse().ok()?;
    let minutes: i32 = minutes.parse().ok()?;
    if minutes > 59 {
        return None;
    }
    let offset = sign * (hours * 60 + minutes);
    (-(13 * 60 + 59)..=14 * 60)
        .contains(&offset)
        .then_some(offset)
}

#[cfg(test)]
mod tests;
