//! What the engine-level test files share.

use std::sync::Arc;

use tarn_common::settings::Settings;
use tarn_sql::Engine;

/// An engine over a fresh data directory under `TARN_TEST_DIR` (or the system's
/// temporary directory), named `prefix...`, with `settings` but that directory. The
/// directory goes when the returned guard drops.
pub fn engine_with(prefix: &str, settings: Settings) -> (tempfile::TempDir, Arc<Engine>) {
    let base = std::env::var("TARN_TEST_DIR")
        .unwrap_or_else(|_| std::env::temp_dir().display().to_string());
    std::fs::create_dir_all(&base).expect("the test directory exists");
    let dir = tempfile::Builder::new()
        .prefix(prefix)
        .tempdir_in(base)
        .expect("a temporary directory");
    let settings = Settings {
        data_dir: dir.path().to_path_buf(),
        ..settings
    };
    let engine = Engine::open(&settings).expect("the engine opens");
    (dir, engine)
}
