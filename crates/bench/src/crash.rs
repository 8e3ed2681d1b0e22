//! `tarn crash-worker`: the child process of the crash tests and the recovery bench.
//!
//! It opens (and so recovers) a data directory, then runs transactions on several
//! threads until it is killed, and appends to an acknowledgement file what it knows:
//!
//! ```text
//! I <thread> <seq> <op> <op> ...   before commit: the transaction's changes
//! C <thread> <seq>                 commit returned OK (acknowledged)
//! R <thread> <seq>                 rolled back on purpose
//! E <thread> <seq> <code> <msg>    commit or a change failed with MySQL error <code>
//! ```
//!
//! An op is `i:id:val:grp:padlen` (insert), `u:id:val:grp:padlen` (update) or `d:id`
//! (delete); `grp` is `N` for NULL. Each thread owns the keys `id % threads == thread`,
//! so its transactions never conflict with another's on rows, and every transaction
//! also increments the one row of table `c` (a hot lock all threads queue on). The
//! `pad` bytes are a function of `(id, val, padlen)`, some long enough for overflow
//! pages. The file is written with `write(2)` only: a SIGKILL loses nothing written,
//! and a test that simulates power loss applies it to data and log files, not to this
//! file.
//!
//! The verifier (tests/crash.rs) rebuilds the expected rows from the file: every
//! acknowledged commit must be present, the one transaction per thread that was in
//! flight may be present or absent but never in part, and nothing rolled back is.

use std::fs::OpenOptions;
use std::io::Write;
use std::ops::Bound;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use tarn_catalog::{IndexDef, RowLock, Storage, TableDef, WaitPolicy};
use tarn_common::rng::Rng;
use tarn_common::settings::Settings;
use tarn_common::{Error, Result};
use tarn_row::{Column, ColumnType, Value};

/// Database and tables the worker uses.
pub const DATABASE: &str = "crash";
pub const TABLE: &str = "t";
pub const COUNTER: &str = "c";

/// Options of one worker run.
pub struct CrashWorker {
    pub threads: usize,
    pub keys_per_thread: u64,
    pub seed: u64,
    pub ack_file: PathBuf,
    /// Stop (cleanly) after this long, if not killed first.
    pub run_for: Duration,
    /// Crash (abort, nothing flushed) once the log since the last checkpoint holds
    /// this many bytes: the recovery bench's way to leave a log of a known size.
    pub abort_at_log_bytes: Option<u64>,
    /// Every row gets a pad of 1,000 to 3,000 bytes (more log per transaction).
    pub big_rows: bool,
}

/// The pad bytes of a row version.
pub fn pad_bytes(id: i64, val: i64, len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| ((id.wrapping_mul(31) ^ val).wrapping_add(i as i64) % 251) as u8)
        .collect()
}

/// The worker's table definitions.
pub fn definitions() -> (TableDef, TableDef) {
    let t = TableDef::new(
        TABLE,
        vec![
            Column::new("id", ColumnType::BigInt { unsigned: false }, false),
            Column::new("val", ColumnType::BigInt { unsigned: false }, false),
            Column::new("grp", ColumnType::Int { unsigned: false }, true),
            Column::new("pad", ColumnType::Blob, true),
        ],
        &[0],
    )
    .with_index(IndexDef::new("u_val", &[1], true))
    .with_index(IndexDef::new("by_grp", &[2], false));
    let c = TableDef::new(
        COUNTER,
        vec![
            Column::new("id", ColumnType::Int { unsigned: false }, false),
            Column::new("n", ColumnType::BigInt { unsigned: false }, false),
        ],
        &[0],
    );
    (t, c)
}

/// Creates the database and tables if they do not exist.
pub fn ensure_schema(storage: &Storage) -> Result<()> {
    if !storage.databases().iter().any(|d| d == DATABASE) {
        storage.create_database(DATABASE)?;
    }
    let (t, c) = definitions();
    let tables = storage.tables(DATABASE)?;
    if !tables.iter().any(|n| n == TABLE) {
        storage.create_table(DATABASE, t)?;
    }
    if !tables.iter().any(|n| n == COUNTER) {
        storage.create_table(DATABASE, c)?;
    }
    // A crash right after the table was created may have lost the row.
    let counter = storage.table(DATABASE, COUNTER)?;
    let mut tx = storage.begin(None, false);
    if counter
        .get_tx(&mut tx, &[Value::Int(0)], RowLock::None)?
        .is_none()
    {
        counter.insert_tx(&mut tx, vec![Value::Int(0), Value::Int(0)])?;
    }
    storage.commit(tx)?;
    Ok(())
}

/// The rows of `t` a transaction sees: id -> (val, grp, pad).
pub fn read_rows(storage: &Storage) -> Result<Vec<Vec<Value>>> {
    let table = storage.table(DATABASE, TABLE)?;
    let mut tx = storage.begin(None, true);
    let rows = table.scan_tx(
        &mut tx,
        Bound::Unbounded,
        Bound::Unbounded,
        RowLock::None,
        WaitPolicy::Wait,
        usize::MAX,
    )?;
    storage.commit(tx)?;
    Ok(rows)
}

/// Runs the worker until `run_for` passes (or the process is killed).
pub fn run(settings: &Settings, worker: &CrashWorker) -> Result<()> {
    let storage = Arc::new(Storage::open(settings)?);
    ensure_schema(&storage)?;
    let ack = Arc::new(Mutex::new(
        OpenOptions::new()
            .create(true)
            .append(true)
            .open(&worker.ack_file)
            .map_err(|e| Error::io("open", &worker.ack_file, e))?,
    ));
    // Each thread starts from what the table holds now.
    let mut present: Vec<std::collections::HashSet<i64>> = vec![Default::default(); worker.threads];
    // `val` is unique (index u_val): this run's values start above every stored one.
    let mut base = 0i64;
    for row in read_rows(&storage)? {
        if let (Value::Int(id), Value::Int(val)) = (&row[0], &row[1]) {
            present[(*id as u64 % worker.threads as u64) as usize].insert(*id);
            base = base.max(*val + 1);
        }
    }
    let stop = Arc::new(AtomicBool::new(false));
    let deadline = Instant::now() + worker.run_for;
    let mut handles = Vec::new();
    for (thread, mut present) in present.into_iter().enumerate() {
        let (storage, ack, stop) = (storage.clone(), ack.clone(), stop.clone());
        let threads = worker.threads as i64;
        let keys = worker.keys_per_thread;
        let seed = worker.seed ^ (thread as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        let (big_rows, abort_at) = (worker.big_rows, worker.abort_at_log_bytes);
        handles.push(std::thread::spawn(move || -> Result<()> {
            let mut rng = Rng::new(seed);
            let t = storage.table(DATABASE, TABLE)?;
            let c = storage.table(DATABASE, COUNTER)?;
            let write = |line: String| -> Result<()> {
                ack.lock()
                    .write_all(line.as_bytes())
                    .map_err(|e| Error::io("write", "ack file", e))
            };
            let mut seq: i64 = 0;
            while !stop.load(Ordering::Relaxed) && Instant::now() < deadline {
                seq += 1;
                let mut tx = storage.begin(None, false);
                let mut ops = Vec::new();
                let mut next_present = present.clone();
                let result = (|| -> Result<()> {
                    let n = 1 + rng.below(3);
                    for i in 0..n {
                        let id = thread as i64 + threads * rng.below(keys) as i64;
                        let val = base + ((seq * threads + thread as i64) << 2) + i as i64;
                        let grp = if rng.percent(20) {
                            Value::Null
                        } else {
                            Value::Int(rng.below(10) as i64)
                        };
                        let grp_text = match grp {
                            Value::Int(g) => g.to_string(),
                            _ => "N".to_string(),
                        };
                        let pad_len = if big_rows {
                            1000 + rng.below(2000) as usize
                        } else if rng.percent(3) {
                            5000 + rng.below(3000) as usize
                        } else {
                            rng.below(80) as usize
                        };
                        let row = vec![
                            Value::Int(id),
                            Value::Int(val),
                            grp,
                            Value::Bytes(pad_bytes(id, val, pad_len)),
                        ];
                        if !next_present.contains(&id) {
                            t.insert_tx(&mut tx, row)?;
                            next_present.insert(id);
                            ops.push(format!("i:{id}:{val}:{grp_text}:{pad_len}"));
                        } else if rng.percent(70) {
                            if !t.update_tx(&mut tx, &[Value::Int(id)], row)? {
                                return Err(Error::CorruptData(format!("row {id} vanished")));
                            }
                            ops.push(format!("u:{id}:{val}:{grp_text}:{pad_len}"));
                        } else {
                            if !t.delete_tx(&mut tx, &[Value::Int(id)])? {
                                return Err(Error::CorruptData(format!("row {id} vanished")));
                            }
                            next_present.remove(&id);
                            ops.push(format!("d:{id}"));
                        }
                    }
                    // Sometimes a change that a savepoint rollback takes back.
                    if rng.percent(10) {
                        tx.trx.savepoint("sp")?;
                        let id = thread as i64 + threads * rng.below(keys) as i64;
                        if next_present.contains(&id) {
                            t.delete_tx(&mut tx, &[Value::Int(id)])?;
                        }
                        storage.rollback_to_savepoint(&mut tx, "sp")?;
                    }
                    let counter = c
                        .get_tx(&mut tx, &[Value::Int(0)], RowLock::Exclusive)?
                        .ok_or_else(|| Error::CorruptData("the counter row is missing".into()))?;
                    let Value::Int(count) = counter[1] else {
                        return Err(Error::CorruptData("the counter is not an integer".into()));
                    };
                    c.update_tx(
                        &mut tx,
                        &[Value::Int(0)],
                        vec![Value::Int(0), Value::Int(count + 1)],
                    )?;
                    Ok(())
                })();
                if let Err(error) = result {
                    if let Error::DuplicateKey { .. } = error {
                        // Diagnostics for the crash tests: what the stored rows say.
                        eprintln!(
                            "duplicate: next trx id {}, stats {:?}",
                            storage.txn_context().sys.next_id(),
                            storage.txn_context().sys.stats()
                        );
                        eprintln!("{}", t.debug_rows_of_thread(thread as i64, threads));
                    }
                    let _ = storage.rollback(tx);
                    write(format!("E {thread} {seq} {} {error}\n", error.mysql_code()))?;
                    return Err(error);
                }
                if rng.percent(8) {
                    storage.rollback(tx)?;
                    write(format!("R {thread} {seq}\n"))?;
                    continue;
                }
                write(format!("I {thread} {seq} {}\n", ops.join(" ")))?;
                match storage.commit(tx) {
                    Ok(()) => {
                        present = next_present;
                        write(format!("C {thread} {seq}\n"))?;
                        if abort_at.is_some_and(|n| storage.txn_context().wal.log_used_bytes() >= n)
                        {
                            std::process::abort();
                        }
                    }
                    Err(error) => {
                        write(format!("E {thread} {seq} {} {error}\n", error.mysql_code()))?;
                        return Err(error);
                    }
                }
            }
            Ok(())
        }));
    }
    let mut first_error = None;
    for handle in handles {
        match handle.join() {
            Ok(Ok(())) => {}
            Ok(Err(error)) => {
                stop.store(true, Ordering::Relaxed);
                first_error.get_or_insert(error);
            }
            Err(_) => {
                first_error.get_or_insert(Error::CorruptData("a worker thread panicked".into()));
            }
        }
    }
    first_error.map_or(Ok(()), Err)
}
