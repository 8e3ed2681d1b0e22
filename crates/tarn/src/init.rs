//! `tarn init` and `tarn settings`.
//!
//! `tarn init` is the storage engine's start-up without a workload: it validates every
//! setting, creates (or opens) the data directory, fixing its page size, resolves the
//! I/O path, builds the buffer pool, and reports what it chose. A bad setting or an
//! unusable directory stops it with the error a server start would give.

use std::fmt::Write as _;
use std::sync::Arc;

use tarn_buffer::{BufferPool, NoLog, PoolConfig};
use tarn_common::Result;
use tarn_common::latch::LatchRegistry;
use tarn_common::settings::{SETTINGS, Settings};
use tarn_io::DataDir;

/// Starts the engine once on `settings` and describes it. `page_size_explicit` says
/// whether the user asked for a page size (which must then match an existing
/// directory) or left it to the directory.
pub fn run(settings: &Settings, page_size_explicit: bool) -> Result<String> {
    settings.validate()?;
    let latches = LatchRegistry::new(settings.latch_accounting);
    let requested_page_size = page_size_explicit.then_some(settings.page_size_bytes);
    let datadir = DataDir::open(settings, requested_page_size, latches)?;
    let pool = BufferPool::open(
        PoolConfig::from_settings(settings),
        Arc::clone(&datadir),
        Arc::new(NoLog),
    )?;
    let stats = pool.stats();
    pool.flush_all()?;
    let mut report = String::new();
    let engine = datadir.engine();
    let _ = writeln!(report, "data directory: {}", datadir.path().display());
    let _ = writeln!(
        report,
        "page size:      {} bytes",
        datadir.page_size_bytes()
    );
    let _ = writeln!(
        report,
        "io_method:      {} ({})",
        engine.method(),
        engine.selection_reason()
    );
    let _ = writeln!(
        report,
        "buffer pool:    {} frames in {} instances ({} bytes)",
        stats.frames,
        pool.config().instances,
        stats.frames * datadir.page_size_bytes() as u64
    );
    Ok(report)
}

/// Every setting with its current value and meaning.
pub fn describe(settings: &Settings) -> String {
    let mut text = String::new();
    for spec in SETTINGS {
        let value = settings.get(spec.name).unwrap_or_else(|e| e.to_string());
        let live = if spec.live {
            " (SET GLOBAL may change it)"
        } else {
            ""
        };
        let _ = writeln!(text, "{:<30} {:<12} {}{live}", spec.name, value, spec.help);
    }
    text
}
