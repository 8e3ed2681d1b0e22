//! Server processes the benches talk to over the MySQL protocol: `tarn serve` started
//! from this executable ([`TarnServer`]), and the shared pieces of starting and
//! stopping a database server as a child process ([`ChildServer`], [`free_port`]).
//!
//! A [`ChildServer`] is stopped with SIGTERM when dropped and killed if it has not
//! exited [`STOP_WAIT`] later; its stderr goes to a log file whose tail is quoted when
//! the server fails to start.

use std::fs::File;
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use tarn_common::settings::{SETTINGS, Settings};

use crate::wire::client::Client;
use crate::{BenchError, Result};

/// How long a server may take to accept connections.
pub const START_WAIT: Duration = Duration::from_secs(180);
/// How long a server may take to exit after SIGTERM before it is killed.
pub const STOP_WAIT: Duration = Duration::from_secs(120);
/// The line `tarn serve` prints on stderr once it listens.
pub const TARN_READY_LINE: &str = "ready for connections";
/// Tarn's default account.
pub const TARN_USER: &str = "root";
pub const TARN_PASSWORD: &str = "";

/// A TCP port on 127.0.0.1 that was free a moment ago.
pub fn free_port() -> Result<u16> {
    let listener = TcpListener::bind("127.0.0.1:0").map_err(|source| BenchError::Os {
        what: "finding a free port".into(),
        source,
    })?;
    listener
        .local_addr()
        .map(|a| a.port())
        .map_err(|source| BenchError::Os {
            what: "finding a free port".into(),
            source,
        })
}

/// A database server running as a child process on 127.0.0.1.
pub struct ChildServer {
    name: String,
    child: Option<Child>,
    port: u16,
    log: PathBuf,
}

impl ChildServer {
    /// Spawns `command` (stdout and stderr to `log`) and waits until `ready` returns
    /// true or `port` accepts connections when `ready` is `None`.
    pub fn spawn(
        name: &str,
        mut command: Command,
        port: u16,
        log: &Path,
        ready: Option<&dyn Fn(&str) -> bool>,
    ) -> Result<ChildServer> {
        let out = File::create(log).map_err(|source| BenchError::Os {
            what: format!("creating '{}'", log.display()),
            source,
        })?;
        let err = out.try_clone().map_err(|source| BenchError::Os {
            what: format!("opening '{}'", log.display()),
            source,
        })?;
        command
            .stdin(Stdio::null())
            .stdout(Stdio::from(out))
            .stderr(Stdio::from(err));
        let child = command.spawn().map_err(|source| BenchError::Os {
            what: format!("starting {name} ({:?})", command.get_program()),
            source,
        })?;
        let mut server = ChildServer {
            name: name.to_string(),
            child: Some(child),
            port,
            log: log.to_path_buf(),
        };
        server.wait_ready(ready)?;
        Ok(server)
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// The process id, while the process runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    pub fn log_path(&self) -> &Path {
        &self.log
    }

    fn wait_ready(&mut self, ready: Option<&dyn Fn(&str) -> bool>) -> Result<()> {
        let started = Instant::now();
        loop {
            let log = std::fs::read_to_string(&self.log).unwrap_or_default();
            let up = match ready {
                Some(ready) => ready(&log),
                None => TcpStream::connect(("127.0.0.1", self.port)).is_ok(),
            };
            if up && TcpStream::connect(("127.0.0.1", self.port)).is_ok() {
                return Ok(());
            }
            if let Some(child) = self.child.as_mut()
                && let Ok(Some(status)) = child.try_wait()
            {
                self.child = None;
                return Err(BenchError::Options(format!(
                    "{} exited ({status}) before accepting connections; the end of its \
                     log '{}':\n{}",
                    self.name,
                    self.log.display(),
                    tail(&log, 15)
                )));
            }
            if started.elapsed() > START_WAIT {
                return Err(BenchError::Options(format!(
                    "{} did not accept connections on port {} within {} s; the end of its \
                     log '{}':\n{}",
                    self.name,
                    self.port,
                    START_WAIT.as_secs(),
                    self.log.display(),
                    tail(&log, 15)
                )));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Sends SIGTERM and waits for the exit (killing the process after [`STOP_WAIT`]).
    pub fn stop(&mut self) {
        let Some(mut child) = self.child.take() else {
            return;
        };
        let _ = Command::new("kill")
            .arg("-TERM")
            .arg(child.id().to_string())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        let started = Instant::now();
        while started.elapsed() < STOP_WAIT {
            if let Ok(Some(_)) = child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        eprintln!(
            "{} did not stop within {} s: killing it",
            self.name,
            STOP_WAIT.as_secs()
        );
        let _ = child.kill();
        let _ = child.wait();
    }
}

impl Drop for ChildServer {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The last `lines` lines of `text`.
pub fn tail(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

/// `tarn serve` on a data directory, started from this executable.
pub struct TarnServer {
    process: ChildServer,
}

impl TarnServer {
    /// Starts `tarn serve --data-dir DIR --port P` with every setting of `settings` that
    /// differs from the default passed as `--set` (the data directory excepted), then
    /// `extra` (`name=value`, which win).
    pub fn start(data_dir: &Path, settings: &Settings, extra: &[String]) -> Result<TarnServer> {
        let exe = std::env::current_exe().map_err(|source| BenchError::Os {
            what: "finding the tarn executable".into(),
            source,
        })?;
        let port = free_port()?;
        let mut command = Command::new(exe);
        command
            .arg("serve")
            .arg("--data-dir")
            .arg(data_dir)
            .arg("--port")
            .arg(port.to_string());
        for assignment in setting_assignments(settings).iter().chain(extra) {
            command.arg("--set").arg(assignment);
        }
        let log = data_dir
            .parent()
            .unwrap_or(data_dir)
            .join(format!("tarn-serve-{port}.log"));
        let ready = |log: &str| log.contains(TARN_READY_LINE);
        let process =
            ChildServer::spawn("tarn serve", command, port, &log, Some(&ready)).map_err(|e| {
                BenchError::Options(format!(
                    "could not start the Tarn server (`tarn serve`): {e}"
                ))
            })?;
        Ok(TarnServer { process })
    }

    pub fn port(&self) -> u16 {
        self.process.port()
    }

    pub fn pid(&self) -> Option<u32> {
        self.process.pid()
    }

    pub fn connect(&self, database: Option<&str>) -> Result<Client> {
        Client::connect("127.0.0.1", self.port(), TARN_USER, TARN_PASSWORD, database)
            .map_err(|e| BenchError::Options(format!("connecting to tarn serve: {e}")))
    }

    pub fn stop(&mut self) {
        self.process.stop();
    }
}

/// `name=value` for every setting that differs from its default, except `data_dir`.
pub fn setting_assignments(settings: &Settings) -> Vec<String> {
    let defaults = Settings::default();
    SETTINGS
        .iter()
        .filter(|spec| spec.name != "data_dir")
        .filter_map(|spec| {
            let value = settings.get(spec.name).ok()?;
            (defaults.get(spec.name).ok()? != value).then(|| format!("{}={value}", spec.name))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_changed_settings_are_passed_on() {
        let mut settings = Settings::default();
        assert!(setting_assignments(&settings).is_empty());
        settings.set("scan_threads", "3").unwrap();
        settings.data_dir = PathBuf::from("/elsewhere");
        assert_eq!(setting_assignments(&settings), vec!["scan_threads=3"]);
        assert_eq!(tail("a\nb\nc", 2), "b\nc");
    }
}
