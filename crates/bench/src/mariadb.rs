//! A private MariaDB (or MySQL) server for the benches that compare Tarn with it:
//! its own data directory, a free port on 127.0.0.1, a real account with a password
//! (never `skip-grant-tables`), and the durability and memory settings given, so that
//! the comparison is like for like.
//!
//! [`MariaDb::start`] initialises the data directory once (`mariadb-install-db`, root
//! with an empty password over TCP), starts `mariadbd` without reading any option file
//! (`--no-defaults`) and creates the bench account [`USER`] with password
//! [`PASSWORD`] (`mysql_native_password`). The server always runs with
//! `innodb_flush_method = O_DIRECT`, `innodb_flush_log_at_trx_commit = 1` and no binary
//! log; [`MariaDbConfig`] sets the buffer pool and redo log sizes. Dropping the handle
//! stops the server (SIGTERM, a clean InnoDB shutdown).

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::server::{ChildServer, free_port};
use crate::wire::client::Client;
use crate::{BenchError, Result};

/// The bench account on the private server.
pub const USER: &str = "tarnbench";
pub const PASSWORD: &str = "tarnbench-pw";

/// How the private server is set up.
#[derive(Clone, Debug)]
pub struct MariaDbConfig {
    /// Holds `data/` (the server's data directory), the socket and the log.
    pub dir: PathBuf,
    pub buffer_pool_bytes: u64,
    /// `innodb_log_file_size`; `None`: the server's default.
    pub log_file_bytes: Option<u64>,
    /// `secure_file_priv`: where `LOAD DATA INFILE` may read; `None`: the server's
    /// default.
    pub secure_file_priv: Option<PathBuf>,
    pub max_connections: u32,
    /// TLS: the certificate and key files (`ssl_cert`, `ssl_key`; the certificate is
    /// also `ssl_ca`); `None`: no TLS.
    pub tls: Option<(PathBuf, PathBuf)>,
}

impl MariaDbConfig {
    pub fn new(dir: &Path, buffer_pool_bytes: u64) -> MariaDbConfig {
        MariaDbConfig {
            dir: dir.to_path_buf(),
            buffer_pool_bytes,
            log_file_bytes: None,
            secure_file_priv: None,
            max_connections: 512,
            tls: None,
        }
    }
}

/// A running private server.
pub struct MariaDb {
    process: ChildServer,
    version: String,
    program: PathBuf,
}

/// The first of `names` found in `PATH`, `/usr/sbin` or `/usr/bin`.
fn find_program(names: &[&str]) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut dirs: Vec<PathBuf> = std::env::split_paths(&path).collect();
    dirs.push(PathBuf::from("/usr/sbin"));
    dirs.push(PathBuf::from("/usr/bin"));
    names
        .iter()
        .flat_map(|name| dirs.iter().map(move |dir| dir.join(name)))
        .find(|candidate| candidate.is_file())
}

/// The server program (`mariadbd`, else `mysqld`), if installed.
pub fn server_program() -> Option<PathBuf> {
    find_program(&["mariadbd", "mysqld"])
}

/// The command-line client (`mariadb`, else `mysql`), if installed.
pub fn client_program() -> Option<PathBuf> {
    find_program(&["mariadb", "mysql"])
}

fn install_program() -> Option<PathBuf> {
    find_program(&["mariadb-install-db", "mysql_install_db"])
}

/// The user name the server runs as: this process's.
fn os_user() -> String {
    Command::new("id")
        .arg("-un")
        .output()
        .ok()
        .and_then(|out| String::from_utf8(out.stdout).ok())
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "root".into())
}

impl MariaDb {
    /// Initialises `config.dir` if needed, starts the server and creates the account.
    pub fn start(config: &MariaDbConfig) -> Result<MariaDb> {
        let program = server_program().ok_or_else(|| {
            BenchError::Options("MariaDB is not installed (no mariadbd or mysqld)".into())
        })?;
        let data = config.dir.join("data");
        std::fs::create_dir_all(&config.dir).map_err(|source| BenchError::Os {
            what: format!("creating '{}'", config.dir.display()),
            source,
        })?;
        let user = os_user();
        if !data.join("mysql").is_dir() {
            let install = install_program().ok_or_else(|| {
                BenchError::Options("mariadb-install-db (or mysql_install_db) is missing".into())
            })?;
            let out = Command::new(&install)
                .arg("--no-defaults")
                .arg(format!("--datadir={}", data.display()))
                .arg(format!("--user={user}"))
                .arg("--auth-root-authentication-method=normal")
                .arg("--skip-test-db")
                .output()
                .map_err(|source| BenchError::Os {
                    what: format!("running {}", install.display()),
                    source,
                })?;
            if !out.status.success() {
                return Err(BenchError::Options(format!(
                    "{} failed ({}): {}",
                    install.display(),
                    out.status,
                    crate::server::tail(&String::from_utf8_lossy(&out.stdout), 10)
                        + &crate::server::tail(&String::from_utf8_lossy(&out.stderr), 10)
                )));
            }
        }
        let port = free_port()?;
        let mut command = Command::new(&program);
        command
            .arg("--no-defaults")
            .arg(format!("--datadir={}", data.display()))
            .arg(format!("--port={port}"))
            .arg("--bind-address=127.0.0.1")
            .arg(format!(
                "--socket={}",
                config.dir.join("mariadbd.sock").display()
            ))
            .arg(format!(
                "--pid-file={}",
                config.dir.join("mariadbd.pid").display()
            ))
            .arg(format!("--user={user}"))
            .arg(format!(
                "--innodb-buffer-pool-size={}",
                config.buffer_pool_bytes
            ))
            .arg("--innodb-flush-method=O_DIRECT")
            .arg("--innodb-flush-log-at-trx-commit=1")
            .arg("--skip-log-bin")
            .arg("--character-set-server=utf8mb4")
            .arg("--collation-server=utf8mb4_general_ci")
            .arg(format!("--max-connections={}", config.max_connections));
        if let Some(dir) = &config.secure_file_priv {
            command.arg(format!("--secure-file-priv={}", dir.display()));
        }
        if let Some(bytes) = config.log_file_bytes {
            command.arg(format!("--innodb-log-file-size={bytes}"));
        }
        if let Some((cert, key)) = &config.tls {
            // The certificate is self-signed, and also the client's: MariaDB asks
            // clients for theirs and checks it against `ssl_ca`.
            command.arg(format!("--ssl-cert={}", cert.display()));
            command.arg(format!("--ssl-key={}", key.display()));
            command.arg(format!("--ssl-ca={}", cert.display()));
        }
        let log = config.dir.join("mariadbd.log");
        let process = ChildServer::spawn("mariadbd", command, port, &log, None)?;
        let mut root = Client::connect("127.0.0.1", port, "root", "", None)
            .map_err(|e| BenchError::Options(format!("connecting to MariaDB as root: {e}")))?;
        // MariaDB prefixes its version with "5.5.5-" for old clients.
        let version = root
            .server_version()
            .trim_start_matches("5.5.5-")
            .to_string();
        for host in ["localhost", "127.0.0.1", "%"] {
            for sql in [
                format!("CREATE USER IF NOT EXISTS '{USER}'@'{host}' IDENTIFIED BY '{PASSWORD}'"),
                format!("GRANT ALL PRIVILEGES ON *.* TO '{USER}'@'{host}'"),
            ] {
                root.execute(&sql)
                    .map_err(|e| BenchError::Options(format!("MariaDB: {sql}: {e}")))?;
            }
        }
        root.quit();
        Ok(MariaDb {
            process,
            version,
            program,
        })
    }

    pub fn port(&self) -> u16 {
        self.process.port()
    }

    pub fn pid(&self) -> Option<u32> {
        self.process.pid()
    }

    pub fn version(&self) -> &str {
        &self.version
    }

    pub fn program(&self) -> &Path {
        &self.program
    }

    /// A connection as the bench account.
    pub fn connect(&self, database: Option<&str>) -> Result<Client> {
        Client::connect("127.0.0.1", self.port(), USER, PASSWORD, database)
            .map_err(|e| BenchError::Options(format!("connecting to MariaDB as {USER}: {e}")))
    }

    /// Stops the server (also done on drop).
    pub fn stop(&mut self) {
        self.process.stop();
    }
}
