//! Loading TPC-H into a Tarn data directory: `tarn load tpch`, and the benches' data.
//!
//! Each table is created with its primary key and the benches' secondary indexes,
//! then filled by [`tarn_catalog::Table::bulk_load`] from the generator's stream, which
//! arrives in primary-key order: every B+tree is built bottom up, each page written
//! once. Generation runs on worker threads while the calling thread encodes rows and
//! builds the trees. A completed load writes a marker file naming its scale factor, so
//! a bench given `--data-dir` reuses the data on its next run.

use std::path::PathBuf;
use std::sync::mpsc::sync_channel;
use std::time::{Duration, Instant};

use tarn_catalog::{IndexDef, Storage, TableDef};
use tarn_common::FileId;
use tarn_row::Value;

use crate::report::{Output, format_count};
use crate::tpch::{self, TpchTable};
use crate::{BenchError, Result};

/// The database the TPC-H tables go in.
pub const DATABASE: &str = "tpch";

/// Rows per chunk between the generator and the loader.
const CHUNK_ROWS: usize = 4096;

/// Chunks queued between the generator and the loader.
const QUEUED_CHUNKS: usize = 8;

/// The file marking a complete load, holding its scale factor.
const MARKER_FILE: &str = "tpch-loaded.txt";

/// What a load did.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct LoadReport {
    pub scale_factor: f64,
    pub rows: u64,
    pub seconds: f64,
    pub rows_per_sec: f64,
    /// Page bytes written to the data files (bulk builds write each page once).
    pub bytes_written: u64,
    pub tables: Vec<TableLoad>,
}

#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct TableLoad {
    pub table: String,
    pub rows: u64,
    pub seconds: f64,
}

/// The scale factor of a complete load in `storage`'s data directory, if any.
pub fn loaded_scale_factor(storage: &Storage) -> Option<f64> {
    let text = std::fs::read_to_string(storage.datadir().path().join(MARKER_FILE)).ok()?;
    text.trim().parse().ok()
}

/// The seconds between a bench's progress lines about one table being loaded.
const PROGRESS_EVERY: Duration = Duration::from_secs(5);

/// What [`ensure_loaded`] found or did.
#[derive(Clone, Debug)]
pub struct LoadNote {
    /// One line saying which happened, for the bench's notes and JSON `config`.
    pub text: String,
    /// The load, when this call ran one; `None` when an earlier load was reused.
    pub report: Option<LoadReport>,
}

impl LoadNote {
    /// The rows this call's load wrote to `table`; `None` when it reused a load.
    pub fn rows_loaded(&self, table: &str) -> Option<u64> {
        let report = self.report.as_ref()?;
        report
            .tables
            .iter()
            .find(|t| t.table == table)
            .map(|t| t.rows)
    }
}

/// The threads a load uses unless told otherwise: one per core, at least 2 (one
/// generating, one loading).
pub fn default_threads() -> usize {
    std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .max(2)
}

/// Makes sure `storage`'s data directory holds a complete TPC-H load at
/// `scale_factor`: an earlier one is reused, else TPC-H is loaded (replacing whatever
/// load is there) with [`default_threads`], with progress lines. Says which happened.
pub fn ensure_loaded(storage: &Storage, scale_factor: f64, output: &Output) -> Result<LoadNote> {
    let dir = storage.datadir().path().display();
    let reusable = loaded_scale_factor(storage)
        .is_some_and(|loaded| (loaded - scale_factor).abs() < 1e-9)
        && tpch::tables()
            .iter()
            .all(|table| storage.table(DATABASE, table.name).is_ok());
    if reusable {
        output.progress(&format!(
            "reusing the TPC-H SF {scale_factor} load in '{dir}'"
        ));
        return Ok(LoadNote {
            text: format!("reused the TPC-H SF {scale_factor} load in '{dir}'"),
            report: None,
        });
    }
    let threads = default_threads();
    output.progress(&format!(
        "loading TPC-H SF {scale_factor} into '{dir}' with {threads} threads ..."
    ));
    let mut last = Instant::now();
    let mut current = String::new();
    let report = load(storage, scale_factor, threads, |table, done, expected| {
        if table != current || last.elapsed() >= PROGRESS_EVERY {
            output.progress(&format!(
                "  {table}: {} of ~{} rows",
                format_count(Some(done as f64)),
                format_count(Some(expected as f64))
            ));
            current = table.to_string();
            last = Instant::now();
        }
    })?;
    Ok(LoadNote {
        text: format!(
            "loaded TPC-H SF {scale_factor} in this run: {} rows in {:.1} s ({} rows/s)",
            format_count(Some(report.rows as f64)),
            report.seconds,
            format_count(Some(report.rows_per_sec))
        ),
        report: Some(report),
    })
}

/// The data file of the tree `file_id` in `storage`'s data directory, and its size.
pub fn tree_file(storage: &Storage, file_id: FileId) -> Result<(PathBuf, u64)> {
    let path = storage.datadir().file_path(file_id);
    let bytes = crate::workdir::file_bytes(&path)?;
    Ok((path, bytes))
}

/// Loads every TPC-H table at `scale_factor`, replacing a previous load. `progress`
/// is called with (table, rows done, rows expected) as rows arrive.
pub fn load(
    storage: &Storage,
    scale_factor: f64,
    threads: usize,
    mut progress: impl FnMut(&str, u64, u64),
) -> Result<LoadReport> {
    let marker = storage.datadir().path().join(MARKER_FILE);
    let _ = std::fs::remove_file(&marker);
    if storage.databases().iter().any(|d| d == DATABASE) {
        storage.drop_database(DATABASE)?;
    }
    storage.create_database(DATABASE)?;
    let writes_before = storage.pool().stats().page_writes;
    let started = Instant::now();
    let mut report = LoadReport {
        scale_factor,
        ..Default::default()
    };
    for table in tpch::tables() {
        let table_started = Instant::now();
        let expected = tpch::row_count_estimate(table.name, scale_factor)?;
        let rows = load_table(storage, &table, scale_factor, threads, |done| {
            progress(table.name, done, expected)
        })?;
        report.rows += rows;
        report.tables.push(TableLoad {
            table: table.name.to_string(),
            rows,
            seconds: table_started.elapsed().as_secs_f64(),
        });
    }
    storage.checkpoint()?;
    report.seconds = started.elapsed().as_secs_f64();
    report.rows_per_sec = report.rows as f64 / report.seconds.max(1e-9);
    report.bytes_written = (storage.pool().stats().page_writes - writes_before)
        * storage.pool().page_size_bytes() as u64;
    std::fs::write(&marker, scale_factor.to_string()).map_err(|source| BenchError::Os {
        what: format!("writing '{}'", marker.display()),
        source,
    })?;
    Ok(report)
}

/// Creates one table and bulk-loads it from the generator.
fn load_table(
    storage: &Storage,
    table: &TpchTable,
    scale_factor: f64,
    threads: usize,
    mut progress: impl FnMut(u64),
) -> Result<u64> {
    let mut def = TableDef::new(table.name, table.columns.clone(), &table.primary_key);
    for index in &table.indexes {
        def = def.with_index(IndexDef::new(index.name, &index.columns, index.unique));
    }
    let handle = storage.create_table(DATABASE, def)?;
    let (sender, receiver) = sync_channel::<Vec<Vec<Value>>>(QUEUED_CHUNKS);
    let name = table.name;
    // One thread is the loader (this one); the rest generate.
    let generators = threads.saturating_sub(1).max(1);
    std::thread::scope(|scope| {
        let generator = scope.spawn(move || {
            tpch::generate_parallel(name, scale_factor, generators, CHUNK_ROWS, |chunk| {
                sender
                    .send(chunk)
                    .map_err(|_| BenchError::Options("the loader stopped".into()))
            })
        });
        let mut done = 0u64;
        // The iterator owns the receiver: when the load stops early it is dropped, and
        // the generator's next send fails instead of blocking.
        let rows = receiver.into_iter().flat_map(|chunk| {
            done += chunk.len() as u64;
            progress(done);
            chunk.into_iter().map(Ok)
        });
        let loaded = handle.bulk_load(rows);
        let generated = generator.join().expect("the TPC-H generator panicked");
        let loaded = loaded?;
        let generated = generated?;
        if loaded != generated {
            return Err(BenchError::WrongData {
                row: format!("table {name}"),
                detail: format!("generated {generated} rows but loaded {loaded}"),
            });
        }
        Ok(loaded)
    })
}
