//! The `tarn` binary's start-up: bad settings and unusable data directories stop it
//! with a clear error (the setting or path named, a MySQL error number) and exit 1.

mod common;

use std::path::Path;

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
