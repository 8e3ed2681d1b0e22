//! Real MySQL clients against `tarn serve`: the mariadb command-line client (batch and
//! an interactive session in tmux), PyMySQL, mysqlclient, SQLAlchemy and Django (the
//! ORMs over those two drivers), go-sql-driver/mysql, sysbench, and a crash test
//! (SIGKILL during sysbench and logged writers, then a restart that must keep every
//! acknowledged commit). The client programs live in
//! tests/clients; each is one test case here, and each is also checked against
//! MariaDB by tests/clients/run-against-mariadb. One more case, written here, backs a
//! database up with mariadb-dump and restores it into a second server of its own.
//!
//! One server (on 127.0.0.1, a free port, a fresh data directory under
//! `TARN_TEST_DIR` or target/test-data) serves every case but the crash test, which
//! starts its own. The clients come from scripts/test (Debian packages, the venv at
//! target/client-venv, the Go client at target/clients/go-client): a missing one
//! fails its case with a message naming scripts/test.
//!
//! `TARN_CLIENTS_PORT=P` runs the shared cases against a server already listening on
//! 127.0.0.1:P (root with an empty password) instead of starting one; the crash test
//! always starts `tarn serve`.

use std::io::Read;
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use libtest_mimic::{Arguments, Failed, Trial};

fn workspace_root() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    root.canonicalize().unwrap_or(root)
}

fn clients_dir() -> PathBuf {
    workspace_root().join("tests/clients")
}

fn venv_python() -> PathBuf {
    workspace_root().join("target/client-venv/bin/python")
}

fn test_root() -> PathBuf {
    let root = std::env::var_os("TARN_TEST_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root().join("target/test-data"));
    std::fs::create_dir_all(&root).expect("create the test data directory");
    root
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("bind a free port on 127.0.0.1")
        .port()
}

fn missing(what: &str) -> Failed {
    format!("{what} is missing: run scripts/test, which installs the client tools").into()
}

/// The path of `tool` on PATH, or a failure telling to run scripts/test.
fn require_tool(tool: &str) -> Result<PathBuf, Failed> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|dir| dir.join(tool))
        .find(|candidate| candidate.is_file())
        .ok_or_else(|| missing(&format!("`{tool}`")))
}

/// The venv's Python, checked to have both drivers.
fn require_venv() -> Result<PathBuf, Failed> {
    require_venv_with("pymysql, MySQLdb", "PyMySQL and mysqlclient")
}

/// The venv's Python, checked to import `modules` (a Python import list); `what`
/// names them in the failure.
fn require_venv_with(modules: &str, what: &str) -> Result<PathBuf, Failed> {
    let python = venv_python();
    let ok = Command::new(&python)
        .args(["-c", &format!("import {modules}")])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if ok {
        Ok(python)
    } else {
        Err(missing(&format!(
            "the Python venv with {what} ({})",
            python.display()
        )))
    }
}

/// The Go client, rebuilt first when `go` is there (a cached build takes a moment).
fn require_go_client() -> Result<PathBuf, Failed> {
    let binary = workspace_root().join("target/clients/go-client");
    if require_tool("go").is_ok() {
        let output = Command::new("go")
            .args(["build", "-o"])
            .arg(&binary)
            .arg(".")
            .current_dir(clients_dir().join("go"))
            .output()
            .map_err(|e| format!("running go build: {e}"))?;
        if !output.status.success() {
            return Err(format!(
                "go build of tests/clients/go failed (run scripts/test to fetch its modules):\n{}",
                String::from_utf8_lossy(&output.stderr)
            )
            .into());
        }
    }
    if binary.is_file() {
        Ok(binary)
    } else {
        Err(missing(&format!("the Go client ({})", binary.display())))
    }
}

/// A `tarn serve` process on 127.0.0.1 and a data directory of its own.
struct Server {
    child: Child,
    port: u16,
    log: PathBuf,
    _dir: tempfile::TempDir,
}

impl Server {
    fn start() -> Result<Server, String> {
        let dir = tempfile::tempdir_in(test_root()).map_err(|e| e.to_string())?;
        let port = free_port();
        let log = dir.path().join("server.log");
        let log_file = std::fs::File::create(&log).map_err(|e| e.to_string())?;
        let data_dir = dir.path().join("data");
        let child = Command::new(env!("CARGO_BIN_EXE_tarn"))
            .arg("serve")
            .arg("--data-dir")
            .arg(&data_dir)
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .env("RUST_LOG", "warn")
            .stdin(Stdio::null())
            .stdout(log_file.try_clone().map_err(|e| e.to_string())?)
            .stderr(log_file)
            .spawn()
            .map_err(|e| format!("spawning tarn serve: {e}"))?;
        let mut server = Server {
            child,
            port,
            log,
            _dir: dir,
        };
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Ok(Some(status)) = server.child.try_wait() {
                return Err(format!(
                    "tarn serve exited with {status} before listening; its output:\n{}",
                    server.log_text()
                ));
            }
            if TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return Ok(server);
            }
            if Instant::now() > deadline {
                return Err(format!(
                    "tarn serve did not listen on 127.0.0.1:{port} within 60 s; its output:\n{}",
                    server.log_text()
                ));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// SIGTERM, then SIGKILL if it has not exited within 30 s.
    fn stop(mut self) {
        // SAFETY: kill(2) on our own child's pid; no memory is involved.
        unsafe {
            libc::kill(self.child.id() as libc::pid_t, libc::SIGTERM);
        }
        if wait_for_exit(&mut self.child, Duration::from_secs(30)).is_some() {
            return;
        }
        eprintln!("tarn serve did not exit within 30 s of SIGTERM; killing it");
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The server shared by every case but the crash test, started by the first case
/// that needs it and stopped after the run.
static SHARED: OnceLock<Mutex<Option<Result<Server, String>>>> = OnceLock::new();

fn shared_port() -> Result<u16, Failed> {
    let cell = SHARED.get_or_init(|| Mutex::new(None));
    let mut guard = cell.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(port) = std::env::var_os("TARN_CLIENTS_PORT") {
        let port = port.to_string_lossy();
        return port
            .parse()
            .map_err(|_| format!("TARN_CLIENTS_PORT={port} is not a port").into());
    }
    let server = guard.get_or_insert_with(Server::start);
    match server {
        Ok(server) => Ok(server.port),
        Err(e) => Err(e.clone().into()),
    }
}

fn stop_shared() {
    if let Some(cell) = SHARED.get() {
        let taken = cell.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(Ok(server)) = taken {
            server.stop();
        }
    }
}

/// Runs a client program with the server's address in its environment, failing
/// with its output when it exits non-zero or outlives `timeout`.
fn run_client(
    name: &str,
    mut command: Command,
    port: u16,
    timeout: Duration,
    extra_env: &[(&str, String)],
) -> Result<(), Failed> {
    command
        .current_dir(clients_dir())
        .env("TARN_HOST", "127.0.0.1")
        .env("TARN_PORT", port.to_string())
        .env("TARN_USER", "root")
        .env("TARN_PASSWORD", "")
        .env("TARN_EXPECT_SERVER", expected_server())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (key, value) in extra_env {
        command.env(key, value);
    }
    let mut child = command
        .spawn()
        .map_err(|e| format!("{name}: cannot start {command:?}: {e}"))?;
    // Drain both pipes on threads so a chatty client never blocks.
    let mut stdout = child.stdout.take().expect("piped stdout");
    let mut stderr = child.stderr.take().expect("piped stderr");
    let out = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stdout.read_to_string(&mut s);
        s
    });
    let err = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stderr.read_to_string(&mut s);
        s
    });
    let deadline = Instant::now() + timeout;
    let status = loop {
        if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
            break Some(status);
        }
        if Instant::now() > deadline {
            // SIGTERM first, so the program can stop what it started (a server, a
            // tmux session); SIGKILL if it has not exited 10 s later.
            // SAFETY: kill(2) on our own child's pid; no memory is involved.
            unsafe {
                libc::kill(child.id() as libc::pid_t, libc::SIGTERM);
            }
            let grace = Instant::now() + Duration::from_secs(10);
            while Instant::now() < grace && matches!(child.try_wait(), Ok(None)) {
                std::thread::sleep(Duration::from_millis(50));
            }
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let output = format!(
        "--- stdout:\n{}--- stderr:\n{}",
        out.join().unwrap_or_default(),
        err.join().unwrap_or_default()
    );
    match status {
        Some(status) if status.success() => Ok(()),
        Some(status) => Err(format!("{name} failed ({status}):\n{output}").into()),
        None => Err(format!("{name} did not finish within {timeout:?}:\n{output}").into()),
    }
}

/// What the programs must find: Tarn, unless `TARN_CLIENTS_PORT` points them at
/// another server (then its own TARN_EXPECT_SERVER, or any).
fn expected_server() -> String {
    if std::env::var_os("TARN_CLIENTS_PORT").is_some() {
        std::env::var("TARN_EXPECT_SERVER").unwrap_or_default()
    } else {
        "tarn".to_string()
    }
}

fn shell_quote(arg: &str) -> String {
    format!("'{}'", arg.replace('\'', r"'\''"))
}

const MINUTES: Duration = Duration::from_secs(60);

fn mariadb_cli() -> Result<(), Failed> {
    require_tool("mariadb")?;
    let port = shared_port()?;
    let command = Command::new(clients_dir().join("mariadb-cli"));
    run_client("tests/clients/mariadb-cli", command, port, MINUTES, &[])
}

fn mariadb_cli_interactive() -> Result<(), Failed> {
    require_tool("mariadb")?;
    require_tool("tmux")?;
    let port = shared_port()?;
    let command = Command::new(clients_dir().join("mariadb-cli-interactive"));
    run_client(
        "tests/clients/mariadb-cli-interactive",
        command,
        port,
        MINUTES,
        &[],
    )
}

fn python_driver(driver: &'static str) -> Result<(), Failed> {
    let python = require_venv()?;
    let port = shared_port()?;
    let mut command = Command::new(python);
    command.args(["python_client.py", driver]);
    run_client(
        &format!("tests/clients/python_client.py {driver}"),
        command,
        port,
        2 * MINUTES,
        &[],
    )
}

/// An ORM program (tests/clients/sqlalchemy_orm.py, django_migrations.py): each
/// takes a few seconds.
fn python_orm(program: &'static str, modules: &str, what: &str) -> Result<(), Failed> {
    let python = require_venv_with(modules, what)?;
    let port = shared_port()?;
    let mut command = Command::new(python);
    command.arg(program);
    run_client(
        &format!("tests/clients/{program}"),
        command,
        port,
        MINUTES,
        &[],
    )
}

fn go_sql_driver() -> Result<(), Failed> {
    let binary = require_go_client()?;
    let port = shared_port()?;
    run_client(
        "tests/clients/go (go-sql-driver/mysql)",
        Command::new(binary),
        port,
        2 * MINUTES,
        &[],
    )
}

fn sysbench() -> Result<(), Failed> {
    require_tool("sysbench")?;
    let python = require_venv()?;
    let port = shared_port()?;
    let mut command = Command::new(python);
    command.arg("sysbench_check.py");
    run_client(
        "tests/clients/sysbench_check.py",
        command,
        port,
        3 * MINUTES,
        &[],
    )
}

fn crash_sysbench_writers() -> Result<(), Failed> {
    require_tool("sysbench")?;
    let python = require_venv()?;
    let dir = tempfile::tempdir_in(test_root()).map_err(|e| e.to_string())?;
    let port = free_port();
    let server_cmd = [
        env!("CARGO_BIN_EXE_tarn").to_string(),
        "serve".into(),
        "--data-dir".into(),
        dir.path().join("data").display().to_string(),
        "--port".into(),
        port.to_string(),
        "--bind".into(),
        "127.0.0.1".into(),
    ]
    .iter()
    .map(|a| shell_quote(a))
    .collect::<Vec<_>>()
    .join(" ");
    let mut command = Command::new(python);
    command.arg("crash_check.py").env("RUST_LOG", "warn");
    run_client(
        "tests/clients/crash_check.py",
        command,
        port,
        3 * MINUTES,
        &[
            ("TARN_CRASH_SERVER_CMD", server_cmd),
            (
                "TARN_CRASH_LOG",
                dir.path().join("server.log").display().to_string(),
            ),
        ],
    )
}

/// [`mariadb_tool_bytes`]'s output as text (for comparisons: a dump must stay bytes).
fn mariadb_tool(
    tool: &str,
    port: u16,
    args: &[&str],
    stdin: Option<&Path>,
    require_clean: bool,
) -> Result<String, Failed> {
    let stdout = mariadb_tool_bytes(tool, port, args, stdin, require_clean)?;
    Ok(String::from_utf8_lossy(&stdout).into_owned())
}

/// `mariadb` (or `mariadb-dump`) against 127.0.0.1:`port` as root, with `stdin` as
/// its input; its stdout, or a failure with its stderr. `require_clean` also fails
/// on any stderr output (mariadb-dump reports some errors and still exits 0).
fn mariadb_tool_bytes(
    tool: &str,
    port: u16,
    args: &[&str],
    stdin: Option<&Path>,
    require_clean: bool,
) -> Result<Vec<u8>, Failed> {
    let mut command = Command::new(tool);
    command
        .args(["-h", "127.0.0.1", "-P", &port.to_string(), "-u", "root"])
        .arg("--skip-ssl")
        .args(args);
    if let Some(path) = stdin {
        let file = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
        command.stdin(file);
    }
    let output = command
        .output()
        .map_err(|e| format!("running {tool}: {e}"))?;
    let stderr = String::from_utf8_lossy(&output.stderr);
    if !output.status.success() || (require_clean && !stderr.trim().is_empty()) {
        return Err(format!("{tool} {args:?} failed ({}):\n{stderr}", output.status).into());
    }
    Ok(output.stdout)
}

/// The tables of the backup test: every kind of value a dump must carry exactly
/// (quotes, backslashes, newlines, tabs, NUL bytes, utf8mb4, binary bytes, NULLs,
/// negative and extreme numbers, DECIMAL, DATETIME, TIME and YEAR), a unique and a
/// secondary index, an AUTO_INCREMENT counter, and BINARY(16)/VARBINARY keys holding
/// bytes that are not UTF-8.
const BACKUP_SETUP: &str = r#"
CREATE DATABASE dumptest;
USE dumptest;
CREATE TABLE items (
  id INT PRIMARY KEY AUTO_INCREMENT,
  sku VARCHAR(32) NOT NULL,
  name VARCHAR(100),
  price DECIMAL(12,2),
  qty INT,
  created DATETIME,
  UNIQUE KEY sku (sku),
  KEY name (name)
);
INSERT INTO items (sku, name, price, qty, created) VALUES
  ('A-1', 'it''s "quoted"', 1.25, 3, '2024-02-29 23:59:59'),
  ('B\\2', 'back\\slash\nnew line\ttab\rreturn', -123.45, -7, '1999-12-31 00:00:00'),
  ('C-3', CONCAT('nul', CHAR(0), 'byte'), 0.00, 0, NULL),
  ('D-4', 'emoji 😀 and ü', NULL, NULL, '2038-01-19 03:14:08'),
  ('E-5', NULL, 99999999.99, -2147483648, '1000-01-01 00:00:00');
DELETE FROM items WHERE sku = 'E-5';
INSERT INTO items (sku, name) VALUES ('F-6', 'after a delete');
CREATE TABLE audit_lines (
  id INT PRIMARY KEY,
  item INT,
  CONSTRAINT audit_item FOREIGN KEY (item) REFERENCES items (id) ON DELETE CASCADE
);
INSERT INTO audit_lines VALUES (1, 1), (2, 2), (3, NULL);
CREATE TABLE blobs (
  k BIGINT PRIMARY KEY,
  data BLOB,
  note TEXT,
  big BIGINT,
  KEY big (big)
);
INSERT INTO blobs VALUES
  (-1, X'00FF27225C0A0D1A', 'multi\nline', -9223372036854775808),
  (2, REPEAT('x', 1000), '', 9223372036854775807),
  (3, NULL, NULL, NULL),
  (4, X'', 'a', 0);
CREATE TABLE uuids (
  id BINARY(16) PRIMARY KEY,
  tag VARBINARY(8),
  small TINYBLOB,
  KEY tag (tag)
);
INSERT INTO uuids VALUES
  (UNHEX('FF00FE0102030405060708090A0B0C0D'), X'FF00275C', X'80'),
  (X'61', 'plain', NULL),
  (X'00', X'', X'');
CREATE TABLE hours (
  day INT PRIMARY KEY,
  opens TIME NOT NULL DEFAULT '09:00:00',
  closes TIME(3),
  since YEAR,
  KEY opens (opens)
);
INSERT INTO hours VALUES
  (1, '08:30:00', '17:45:30.125', 1999),
  (2, '-01:00:00', '838:59:59', 0),
  (3, '100:00:00', NULL, 2155);
INSERT INTO hours (day, closes) VALUES (4, '-838:59:59');
CREATE TABLE orders (
  id INT PRIMARY KEY,
  status ENUM('new', 'shipped', 'it''s') NOT NULL DEFAULT 'new',
  tags SET('gift', 'fragile'),
  flag BIT(1) NOT NULL DEFAULT b'0',
  mask BIT(12),
  KEY status (status)
);
INSERT INTO orders (id, status, tags, flag, mask) VALUES
  (1, 'shipped', 'fragile,gift', 1, 2730),
  (2, 'IT''S', '', 0, NULL),
  (3, 'new', NULL, 1, 0);
"#;

/// What a restore must reproduce: each table's SHOW CREATE TABLE and its rows, the
/// strings and blobs also in hex (batch output escapes them, hex shows every byte).
const BACKUP_CHECK: &str = "SHOW CREATE TABLE items; SHOW CREATE TABLE blobs; \
    SELECT * FROM items ORDER BY id; SELECT id, HEX(sku), HEX(name) FROM items ORDER BY id; \
    SELECT * FROM blobs ORDER BY k; SELECT k, HEX(data), HEX(note) FROM blobs ORDER BY k; \
    SHOW CREATE TABLE uuids; SELECT HEX(id), HEX(tag), HEX(small) FROM uuids ORDER BY id; \
    SHOW CREATE TABLE hours; SELECT * FROM hours ORDER BY day; \
    SHOW CREATE TABLE orders; SHOW CREATE TABLE audit_lines; \
    SELECT * FROM audit_lines ORDER BY id; \
    SELECT id, status, status + 0, tags, tags + 0, flag + 0, mask + 0 FROM orders ORDER BY status";

/// Backup and restore with mariadb-dump (MariaDB's mysqldump): dump a database from
/// one server with several option sets, restore each dump into a second, fresh
/// server, and compare the schema and every row.
fn mariadb_dump_restore() -> Result<(), Failed> {
    let mariadb = require_tool("mariadb")?;
    let dump_tool = require_tool("mariadb-dump")?;
    let (mariadb, dump_tool) = (mariadb.to_string_lossy(), dump_tool.to_string_lossy());
    let source = Server::start()?;
    let target = Server::start()?;
    let scratch = tempfile::tempdir_in(test_root())?;
    let setup = scratch.path().join("setup.sql");
    std::fs::write(&setup, BACKUP_SETUP)?;
    mariadb_tool(&mariadb, source.port, &[], Some(&setup), true)?;
    let expected = mariadb_tool(
        &mariadb,
        source.port,
        &["-B", "dumptest", "-e", BACKUP_CHECK],
        None,
        true,
    )?;
    let cases: &[&[&str]] = &[
        &["dumptest"],
        &["--single-transaction", "dumptest"],
        &["--databases", "dumptest"],
        &[
            "--hex-blob",
            "--routines",
            "--triggers",
            "--events",
            "dumptest",
        ],
        &["--lock-all-tables", "--flush-logs", "dumptest"],
        // Every database, `mysql` too: the restore drops and recreates the account
        // tables, and mariadb-dump reads the structure of mysql.general_log and
        // mysql.slow_log.
        &["--all-databases", "--flush-privileges"],
    ];
    for options in cases {
        let dump_bytes = mariadb_tool_bytes(&dump_tool, source.port, options, None, true)?;
        let dump = String::from_utf8_lossy(&dump_bytes);
        // --hex-blob writes every binary string (BINARY, VARBINARY, BLOB) and BIT as
        // 0x..., which mariadb-dump decides from the result's charset 63.
        if options.contains(&"--hex-blob") {
            for hex in [
                "0xFF00FE0102030405060708090A0B0C0D",
                "0xFF00275C",
                "0x80",
                "0x0AAA",
            ] {
                if !dump.contains(hex) {
                    return Err(format!("--hex-blob wrote no {hex}:\n{dump}").into());
                }
            }
        }
        let file = scratch.path().join("dump.sql");
        std::fs::write(&file, &dump_bytes)?;
        mariadb_tool(
            &mariadb,
            target.port,
            &["-e", "DROP DATABASE IF EXISTS dumptest"],
            None,
            true,
        )?;
        // A dump of `--databases` (or all of them) creates and enters each database
        // itself.
        let whole_database =
            options.contains(&"--databases") || options.contains(&"--all-databases");
        if !whole_database {
            mariadb_tool(
                &mariadb,
                target.port,
                &["-e", "CREATE DATABASE dumptest"],
                None,
                true,
            )?;
        }
        mariadb_tool(
            &mariadb,
            target.port,
            if whole_database { &[] } else { &["dumptest"] },
            Some(&file),
            true,
        )
        .map_err(|e| {
            let why = e.message().unwrap_or_default();
            format!("restoring the dump of {options:?}: {why}\n--- dump:\n{dump}")
        })?;
        let restored = mariadb_tool(
            &mariadb,
            target.port,
            &["-B", "dumptest", "-e", BACKUP_CHECK],
            None,
            true,
        )?;
        if restored != expected {
            return Err(format!(
                "the restore of mariadb-dump {options:?} differs\n--- source:\n{expected}\n--- restored:\n{restored}\n--- dump:\n{dump}"
            )
            .into());
        }
    }
    // The accounts came with the last dump: a source account logs in to the target.
    mariadb_tool(
        &mariadb,
        source.port,
        &[
            "-e",
            "CREATE USER dumper IDENTIFIED BY 'pw'; GRANT SELECT ON dumptest.* TO dumper",
        ],
        None,
        true,
    )?;
    let all = mariadb_tool_bytes(&dump_tool, source.port, &["--all-databases"], None, true)?;
    let file = scratch.path().join("all.sql");
    std::fs::write(&file, &all)?;
    mariadb_tool(&mariadb, target.port, &[], Some(&file), true)?;
    mariadb_tool(
        &mariadb,
        target.port,
        &["-e", "FLUSH PRIVILEGES"],
        None,
        true,
    )?;
    let counted = Command::new(&*mariadb)
        .args([
            "-h",
            "127.0.0.1",
            "-P",
            &target.port.to_string(),
            "--skip-ssl",
        ])
        .args(["-u", "dumper", "-ppw", "-N", "-B", "-e"])
        .arg("SELECT COUNT(*) FROM dumptest.items")
        .output()?;
    if String::from_utf8_lossy(&counted.stdout).trim() != "5" {
        return Err(format!(
            "the restored account could not read the restored table: {}",
            String::from_utf8_lossy(&counted.stderr)
        )
        .into());
    }
    // The restored counter continues where the source's was.
    let next = mariadb_tool(
        &mariadb,
        target.port,
        &[
            "-N",
            "-B",
            "dumptest",
            "-e",
            "INSERT INTO items (sku) VALUES ('G-7'); SELECT LAST_INSERT_ID()",
        ],
        None,
        true,
    )?;
    if next.trim() != "7" {
        return Err(format!("the restored AUTO_INCREMENT gave id {next}, not 7").into());
    }
    source.stop();
    target.stop();
    Ok(())
}

/// `mariadb-admin shutdown` (and the SHUTDOWN statement from the mariadb CLI) stop
/// the server cleanly: it exits with status 0 and its data opens again with what was
/// committed.
fn admin_shutdown() -> Result<(), Failed> {
    let admin = require_tool("mariadb-admin")?;
    let mut server = Server::start()?;
    let result = shutdown_twice(&mut server, &admin);
    if result.is_err() && matches!(server.child.try_wait(), Ok(None)) {
        server.stop();
    }
    result
}

fn shutdown_twice(server: &mut Server, admin: &Path) -> Result<(), Failed> {
    let port = server.port;
    mariadb_tool(
        "mariadb",
        port,
        &[
            "-e",
            "CREATE DATABASE s; CREATE TABLE s.t (a INT PRIMARY KEY); INSERT INTO s.t VALUES (7)",
        ],
        None,
        true,
    )?;
    let admin = admin.display().to_string();
    mariadb_tool(&admin, port, &["shutdown"], None, true)?;
    let exited = wait_for_exit(&mut server.child, Duration::from_secs(60)).ok_or_else(|| {
        format!(
            "tarn serve still runs after mariadb-admin shutdown:\n{}",
            server.log_text()
        )
    })?;
    if !exited.success() {
        return Err(format!(
            "tarn serve exited with {exited} after shutdown:\n{}",
            server.log_text()
        )
        .into());
    }
    // The same data directory again, stopped by the statement this time.
    let child = Command::new(env!("CARGO_BIN_EXE_tarn"))
        .arg("serve")
        .arg("--data-dir")
        .arg(server._dir.path().join("data"))
        .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
        .env("RUST_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("spawning tarn serve again: {e}"))?;
    server.child = child;
    let deadline = Instant::now() + Duration::from_secs(60);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        if Instant::now() > deadline {
            return Err("tarn serve did not listen again within 60 s".into());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let rows = mariadb_tool(
        "mariadb",
        port,
        &["-N", "-e", "SELECT a FROM s.t"],
        None,
        true,
    )?;
    if rows.trim() != "7" {
        return Err(format!("after a restart s.t holds {rows:?}, not 7").into());
    }
    mariadb_tool("mariadb", port, &["-e", "SHUTDOWN"], None, true)?;
    let exited = wait_for_exit(&mut server.child, Duration::from_secs(60))
        .ok_or("tarn serve still runs after SHUTDOWN")?;
    if !exited.success() {
        return Err(format!("tarn serve exited with {exited} after SHUTDOWN").into());
    }
    Ok(())
}

/// The child's exit status once it exits, or None after `limit`.
fn wait_for_exit(child: &mut Child, limit: Duration) -> Option<std::process::ExitStatus> {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if let Ok(Some(status)) = child.try_wait() {
            return Some(status);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    None
}

fn main() {
    let args = Arguments::from_args();
    let trials = vec![
        Trial::test("mariadb_cli", mariadb_cli),
        Trial::test("mariadb_cli_interactive", mariadb_cli_interactive),
        Trial::test("mariadb_dump_restore", mariadb_dump_restore),
        Trial::test("admin_shutdown", admin_shutdown),
        Trial::test("pymysql", || python_driver("pymysql")),
        Trial::test("mysqlclient", || python_driver("mysqlclient")),
        Trial::test("sqlalchemy_orm", || {
            python_orm("sqlalchemy_orm.py", "sqlalchemy, pymysql", "SQLAlchemy")
        }),
        Trial::test("django_migrations", || {
            python_orm("django_migrations.py", "django, MySQLdb", "Django")
        }),
        Trial::test("go_sql_driver", go_sql_driver),
        Trial::test("sysbench", sysbench),
        Trial::test("crash_sysbench_writers", crash_sysbench_writers),
    ];
    let conclusion = libtest_mimic::run(&args, trials);
    stop_shared();
    conclusion.exit();
}
