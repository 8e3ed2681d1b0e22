//! The `tarn` binary's start-up: bad settings and unusable data directories stop it
//! with a clear error (the setting or path named, a MySQL error number) and exit 1;
//! so does a data directory another Tarn process is using.

mod common;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{tarn, test_dir};

fn data_dir_arg(dir: &Path) -> String {
    format!("data_dir={}", dir.join("data").display())
}

/// Runs `tarn init` with `settings` and returns its stderr, asserting it failed.
fn init_fails(dir: &Path, settings: &[&str]) -> String {
    let data_dir = data_dir_arg(dir);
    let mut args = vec!["--set", &data_dir];
    for setting in settings {
        args.extend(["--set", setting]);
    }
    args.push("init");
    let output = tarn(&args);
    let stderr = String::from_utf8_lossy(&output.stderr).to_string();
    assert_eq!(
        output.status.code(),
        Some(1),
        "expected failure for {settings:?}; stderr: {stderr}"
    );
    assert!(
        stderr.contains("error: ") && stderr.contains("MySQL error"),
        "{stderr}"
    );
    stderr
}

#[test]
fn init_creates_the_data_directory_and_reports_the_engine() {
    let dir = test_dir();
    let data_dir = data_dir_arg(dir.path());
    let output = tarn(&[
        "--set",
        &data_dir,
        "--set",
        "page_size=8K",
        "--set",
        "buffer_pool_size=8M",
        "init",
    ]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        stdout.contains("page size:      8192 bytes") && stdout.contains("io_method:"),
        "{stdout}"
    );
    assert!(dir.path().join("data/tarn.control").exists());
    // Reopening without a page size uses the stored one; asking for another fails.
    let output = tarn(&["--set", &data_dir, "--set", "buffer_pool_size=8M", "init"]);
    assert!(String::from_utf8_lossy(&output.stdout).contains("8192 bytes"));
    let stderr = init_fails(dir.path(), &["page_size=16K"]);
    assert!(stderr.contains("created with page_size 8192"), "{stderr}");
}

#[test]
fn bad_settings_stop_start_up_with_the_setting_named() {
    let dir = test_dir();
    let stderr = init_fails(dir.path(), &["page_size=3000"]);
    assert!(
        stderr.contains("'page_size'")
            && stderr.contains("3000")
            && stderr.contains("MySQL error 1231"),
        "{stderr}"
    );
    let stderr = init_fails(dir.path(), &["buffer_pool_instances=0"]);
    assert!(
        stderr.contains("'buffer_pool_instances'") && stderr.contains("1 to 64"),
        "{stderr}"
    );
    let stderr = init_fails(
        dir.path(),
        &["buffer_pool_size=1M", "buffer_pool_instances=8"],
    );
    assert!(
        stderr.contains("'buffer_pool_size'") && stderr.contains("minimum"),
        "{stderr}"
    );
    let stderr = init_fails(dir.path(), &["io_method=mmap"]);
    assert!(stderr.contains("'io_method'"), "{stderr}");
    let stderr = init_fails(dir.path(), &["no_such_setting=1"]);
    assert!(
        stderr.contains("unknown setting 'no_such_setting'"),
        "{stderr}"
    );
    // Nothing was created by any of them.
    assert!(!dir.path().join("data").exists());
}

#[test]
fn an_unwritable_data_directory_stops_start_up_with_the_path_named() {
    let dir = test_dir();
    let blocker = dir.path().join("a-file");
    std::fs::write(&blocker, b"not a directory").unwrap();
    let data_dir = format!("data_dir={}", blocker.join("data").display());
    let output = tarn(&["--set", &data_dir, "init"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(&blocker.display().to_string())
            && stderr.contains("cannot create the directory"),
        "{stderr}"
    );
}

/// `tarn serve` on `data_dir` and a free port, logging at `log_level`.
fn spawn_server(data_dir: &Path, log_level: &str) -> Child {
    Command::new(env!("CARGO_BIN_EXE_tarn"))
        .arg("serve")
        .arg("--data-dir")
        .arg(data_dir)
        .args(["--port", "0", "--bind", "127.0.0.1"])
        .env("RUST_LOG", log_level)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn tarn serve")
}

/// Kills `server` (SIGKILL) when dropped, so a failed assertion leaves no process.
struct KillOnDrop(Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn a_second_server_on_a_data_directory_in_use_stops_before_touching_it() {
    let dir = test_dir();
    let data_dir = dir.path().join("data");
    let mut first = KillOnDrop(spawn_server(&data_dir, "warn"));
    // Its stderr names the port it listens on once it is ready.
    let mut lines = BufReader::new(first.0.stderr.take().expect("stderr")).lines();
    let port: u16 = loop {
        let line = lines
            .next()
            .expect("the first server printed its address before exiting")
            .expect("read the first server's stderr");
        if let Some(rest) = line.split("ready for connections on 127.0.0.1:").nth(1) {
            break rest.split(' ').next().unwrap().parse().expect("a port");
        }
    };
    // Keep draining the first server's stderr so it never blocks on a full pipe.
    std::thread::spawn(move || lines.for_each(drop));

    let mut second = KillOnDrop(spawn_server(&data_dir, "info"));
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(status) = second.0.try_wait().unwrap() {
            break status;
        }
        assert!(
            Instant::now() < deadline,
            "the second server still runs 60 s after starting on a data directory in use"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut second.0.stderr.take().unwrap(), &mut stderr).unwrap();
    assert_eq!(status.code(), Some(1), "{stderr}");
    let expected = format!(
        "error: data directory '{}': in use by another Tarn process (tarn.lock is locked, held by process {})",
        data_dir.display(),
        first.0.id()
    );
    assert!(stderr.contains(&expected), "{stderr}");
    assert!(stderr.contains("MySQL error 1004"), "{stderr}");
    // It stopped before the redo log (logged at info when opened).
    assert!(!stderr.contains("redo log"), "{stderr}");

    let mut client = tarn_bench::wire::client::Client::connect("127.0.0.1", port, "root", "", None)
        .expect("the first server still accepts connections");
    assert_eq!(
        client.query_value("SELECT 40 + 2").unwrap(),
        Some("42".to_string())
    );
    client.quit();
}

#[test]
fn settings_lists_every_setting_with_its_value() {
    let output = tarn(&["--set", "buffer_pool_instances=16", "settings"]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success());
    for spec in tarn_common::settings::SETTINGS {
        assert!(stdout.contains(spec.name), "{} missing", spec.name);
    }
    assert!(
        stdout
            .lines()
            .any(|l| l.starts_with("buffer_pool_instances") && l.contains(" 16 ")),
        "{stdout}"
    );
}
