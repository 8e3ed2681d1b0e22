//! Running the `tarn` binary from integration tests.

#![allow(dead_code)]

use std::process::{Command, Output};

/// Runs the `tarn` binary with `args`, logging only warnings.
pub fn tarn(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tarn"))
        .args(args)
        .env("RUST_LOG", "warn")
        .output()
        .expect("run the tarn binary")
}

/// A temporary directory under `TARN_TEST_DIR` (or the system's).
pub fn test_dir() -> tempfile::TempDir {
    let root = std::env::var_os("TARN_TEST_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(std::env::temp_dir);
    std::fs::create_dir_all(&root).unwrap();
    tempfile::tempdir_in(root).unwrap()
}
