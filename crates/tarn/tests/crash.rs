//! Crash tests with a real process: `tarn crash-worker` runs concurrent transactions
//! and is killed (SIGKILL at a random moment, or a simulated power loss with torn
//! writes from the fault layer, or a failed fsync); then this process opens the data
//! directory, which runs recovery, and checks that
//!
//! - every acknowledged commit is present, with every column's value;
//! - the one transaction per thread that was in flight is present entirely or not at
//!   all, and nothing rolled back is visible;
//! - the hot counter row counts exactly the transactions present;
//! - once purge has caught up, every secondary index matches its table exactly and
//!   every B+tree passes its structural check.
//!
//! Each test runs cycles for a bounded time and prints its seed (`TARN_SEED` replays).
//! A cycle's worker starts by recovering the previous crash, and some kills land
//! during that recovery.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use tarn_common::rng::{Rng, test_seed};
use tarn_common::settings::Settings;
use tarn_row::Value;

const THREADS: usize = 4;
const KEYS_PER_THREAD: u64 = 150;

/// Settings shared by the worker and the verifier: a small log ring (checkpoints and
/// wrap-around happen within a cycle) and a small pool (evictions write pages, so the
/// write-ahead rule and the doublewrite buffer are exercised).
fn settings_args() -> Vec<String> {
    [
        "log_file_size=4M",
        "log_files=2",
        "buffer_pool_size=2M",
        "buffer_pool_instances=2",
        "page_size=4K",
        "lock_wait_timeout=20",
        "io_method=buffered",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

fn settings(dir: &Path) -> Settings {
    let mut settings = Settings::default();
    settings
        .apply_assignments(settings_args().iter().map(String::as_str))
        .unwrap();
    settings.data_dir = dir.to_path_buf();
    settings
}

fn spawn_worker(dir: &Path, ack: &Path, seed: u64, fault: Option<&str>) -> Child {
    let mut command = Command::new(env!("CARGO_BIN_EXE_tarn"));
    for set in settings_args() {
        command.arg("--set").arg(set);
    }
    command
        .arg("crash-worker")
        .arg("--data-dir")
        .arg(dir)
        .arg("--ack-file")
        .arg(ack)
        .arg("--threads")
        .arg(THREADS.to_string())
        .arg("--keys-per-thread")
        .arg(KEYS_PER_THREAD.to_string())
        .arg("--seed")
        .arg(seed.to_string())
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    match fault {
        Some(plan) => command.env("TARN_FAULT", plan),
        None => command.env_remove("TARN_FAULT"),
    };
    command.spawn().expect("spawning tarn crash-worker")
}

/// A row of `t`: val, grp, pad length.
type Row = (i64, Option<i64>, usize);

#[derive(Debug, Clone, PartialEq)]
enum Op {
    Put(i64, Row),
    Delete(i64),
}

/// One op of an intent line; `None` if the line was cut by the crash.
fn parse_op(text: &str) -> Option<Op> {
    let parts: Vec<&str> = text.split(':').collect();
    let id: i64 = parts.get(1)?.parse().ok()?;
    match *parts.first()? {
        "d" => Some(Op::Delete(id)),
        _ => {
            let grp = match *parts.get(3)? {
                "N" => None,
                g => Some(g.parse().ok()?),
            };
            Some(Op::Put(
                id,
                (
                    parts.get(2)?.parse().ok()?,
                    grp,
                    parts.get(4)?.parse().ok()?,
                ),
            ))
        }
    }
}

fn apply(rows: &mut BTreeMap<i64, Row>, ops: &[Op]) {
    for op in ops {
        match op {
            Op::Put(id, row) => {
                rows.insert(*id, *row);
            }
            Op::Delete(id) => {
                rows.remove(id);
            }
        }
    }
}

/// What one cycle's acknowledgement file says.
struct Acks {
    /// Per thread: committed transactions' ops, in order.
    committed: Vec<Vec<Vec<Op>>>,
    /// Per thread: the transaction in flight when the worker died, if any.
    in_flight: Vec<Option<Vec<Op>>>,
    /// Errors the worker reported: (MySQL code, message).
    errors: Vec<(u16, String)>,
}

fn read_acks(path: &Path) -> Acks {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let mut acks = Acks {
        committed: vec![Vec::new(); THREADS],
        in_flight: vec![None; THREADS],
        errors: Vec::new(),
    };
    for line in text.lines() {
        let mut words = line.split(' ');
        let kind = words.next().unwrap();
        let Some(thread) = words.next().and_then(|w| w.parse::<usize>().ok()) else {
            continue; // a line cut by the kill
        };
        let _seq = words.next();
        match kind {
            // An intent line cut by the crash: the worker died writing it, before the
            // commit started, so the transaction cannot be present.
            "I" => acks.in_flight[thread] = words.map(parse_op).collect(),
            "C" => {
                let ops = acks.in_flight[thread]
                    .take()
                    .expect("a commit acknowledgement follows its intent line");
                acks.committed[thread].push(ops);
            }
            "R" => acks.in_flight[thread] = None,
            "E" => {
                let code = words.next().and_then(|w| w.parse().ok()).unwrap_or(0);
                acks.errors
                    .push((code, words.collect::<Vec<_>>().join(" ")));
            }
            other => panic!("unknown acknowledgement line kind {other:?}: {line}"),
        }
    }
    acks
}

/// Opens the data directory (recovery runs), checks it against `model` plus the acks,
/// and returns the verified state.
fn verify(
    dir: &Path,
    model: &BTreeMap<i64, Row>,
    counter: i64,
    acks: &Acks,
    context: &str,
) -> (BTreeMap<i64, Row>, i64) {
    let storage = tarn_catalog::Storage::open(&settings(dir))
        .unwrap_or_else(|e| panic!("{context}: recovery failed: {e}"));
    let mut actual: BTreeMap<i64, Row> = BTreeMap::new();
    if storage.databases().iter().any(|d| d == "crash")
        && storage.tables("crash").unwrap().len() == 2
    {
        for row in tarn_bench::crash::read_rows(&storage).unwrap() {
            let (Value::Int(id), Value::Int(val)) = (&row[0], &row[1]) else {
                panic!("{context}: bad row {row:?}");
            };
            let grp = match &row[2] {
                Value::Int(g) => Some(*g),
                Value::Null => None,
                other => panic!("{context}: bad grp {other:?}"),
            };
            let Value::Bytes(pad) = &row[3] else {
                panic!("{context}: bad pad {:?}", row[3]);
            };
            assert_eq!(
                pad,
                &tarn_bench::crash::pad_bytes(*id, *val, pad.len()),
                "{context}: row {id} has wrong pad bytes"
            );
            actual.insert(*id, (*val, grp, pad.len()));
        }
    } else {
        assert!(model.is_empty(), "{context}: the tables are gone");
        return (actual, 0);
    }
    let mut present_in_flight = 0;
    // In-flight transactions whose changes cancel out (an insert and a delete of the
    // same row): their rows cannot say whether they committed, only the counter can.
    let mut undecidable_in_flight = 0;
    for thread in 0..THREADS {
        let mine = |rows: &BTreeMap<i64, Row>| -> BTreeMap<i64, Row> {
            rows.iter()
                .filter(|(id, _)| (**id as u64 % THREADS as u64) as usize == thread)
                .map(|(k, v)| (*k, *v))
                .collect()
        };
        let mut expected = mine(model);
        for ops in &acks.committed[thread] {
            apply(&mut expected, ops);
        }
        let got = mine(&actual);
        if got == expected {
            if let Some(ops) = &acks.in_flight[thread] {
                let mut with = expected.clone();
                apply(&mut with, ops);
                if with == expected {
                    undecidable_in_flight += 1;
                }
            }
            continue;
        }
        if let Some(ops) = &acks.in_flight[thread] {
            let mut with = expected.clone();
            apply(&mut with, ops);
            if got == with {
                present_in_flight += 1;
                continue;
            }
        }
        let missing: Vec<_> = expected
            .iter()
            .filter(|(k, v)| got.get(k) != Some(v))
            .take(5)
            .collect();
        let extra: Vec<_> = got
            .iter()
            .filter(|(k, v)| expected.get(k) != Some(v))
            .take(5)
            .collect();
        let table = storage.table("crash", "t").unwrap();
        panic!(
            "{context}: thread {thread}'s rows differ from its acknowledged commits \
             (in flight: {:?}); expected but not found: {missing:?}; found but not expected: {extra:?}\n\
             next trx id {}, recovery {:?}\nstored rows:\n{}",
            acks.in_flight[thread],
            storage.txn_context().sys.next_id(),
            storage.recovery_report(),
            table.debug_rows_of_thread(thread as i64, THREADS as i64)
        );
    }
    let committed: i64 = acks.committed.iter().map(|c| c.len() as i64).sum();
    let table = storage.table("crash", "c").unwrap();
    let mut tx = storage.begin(None, true);
    // Every transaction increments the counter row, which the worker inserts when it
    // creates the schema: without it (a crash during set-up) nothing can have committed.
    let count = table
        .get_tx(&mut tx, &[Value::Int(0)], tarn_catalog::RowLock::None)
        .unwrap()
        .map_or(Value::Int(0), |row| row[1].clone());
    storage.commit(tx).unwrap();
    let least = counter + committed + present_in_flight;
    let count = match count {
        Value::Int(n) if (least..=least + undecidable_in_flight).contains(&n) => n,
        _ => panic!(
            "{context}: the counter ({count:?}) does not count the transactions present \
             ({least}, plus up to {undecidable_in_flight} in flight whose changes cancel out)"
        ),
    };
    assert!(
        storage.wait_for_purge(Duration::from_secs(30)),
        "{context}: purge did not catch up"
    );
    let t = storage.table("crash", "t").unwrap();
    let live = t
        .verify_consistency()
        .unwrap_or_else(|e| panic!("{context}: {e}"));
    assert_eq!(live as usize, actual.len(), "{context}");
    // The next cycle starts from the counter itself, not from `least`: of the in-flight
    // transactions whose changes cancel out, only the counter says how many committed
    // (the check above bounds it), and those it counts stay counted.
    (actual, count)
}

/// Runs cycles of `worker + kill + verify` for about `budget`.
fn run_cycles(
    name: &str,
    budget: Duration,
    mut make_fault: impl FnMut(&mut Rng) -> Option<String>,
    kill_after_ms: (u64, u64),
) {
    let seed = test_seed(name);
    let mut rng = Rng::new(seed);
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let mut model = BTreeMap::new();
    let mut counter = 0;
    let started = Instant::now();
    let mut cycle = 0;
    while cycle < 3 || started.elapsed() < budget {
        cycle += 1;
        let ack: PathBuf = dir.path().join(format!("ack-{cycle}"));
        let fault = make_fault(&mut rng);
        let mut child = spawn_worker(&data, &ack, rng.next_u64(), fault.as_deref());
        let kill_ms = kill_after_ms.0 + rng.below(kill_after_ms.1 - kill_after_ms.0);
        let deadline = Instant::now() + Duration::from_millis(kill_ms);
        let mut exited = None;
        while Instant::now() < deadline {
            if let Some(status) = child.try_wait().unwrap() {
                exited = Some(status);
                break;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        if exited.is_none() {
            child.kill().unwrap();
        }
        let output = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        let context =
            format!("seed {seed}, cycle {cycle}, fault {fault:?}, killed after {kill_ms} ms");
        if fault.is_none() && exited.is_some() {
            panic!("{context}: the worker exited by itself: {stderr}");
        }
        let acks = read_acks(&ack);
        for (code, message) in &acks.errors {
            let injected = fault.as_deref().is_some_and(|f| f.contains("fail_"));
            assert!(
                injected && (*code == 1030 || message.contains("injected")),
                "{context}: the worker failed with error {code}: {message}\n{stderr}"
            );
        }
        let (state, count) = verify(&data, &model, counter, &acks, &context);
        model = state;
        counter = count;
    }
    eprintln!(
        "{name}: {cycle} cycles, {} rows, {counter} transactions",
        model.len()
    );
}

#[test]
fn sigkill_at_random_moments_loses_no_acknowledged_commit() {
    run_cycles(
        "crash_sigkill",
        Duration::from_secs(25),
        |_| None,
        (30, 1500),
    );
}

#[test]
fn simulated_power_loss_with_torn_writes_loses_no_durable_commit() {
    run_cycles(
        "crash_power_loss",
        Duration::from_secs(20),
        |rng| {
            let n = 20 + rng.below(400);
            Some(match rng.below(2) {
                0 => format!("crash_write={n},tear={}", rng.next_u64()),
                _ => format!("crash_sync={},tear={}", 1 + n / 8, rng.next_u64()),
            })
        },
        (3000, 3001),
    );
}

#[test]
fn a_failed_write_or_fsync_stops_writes_and_recovery_keeps_every_durable_commit() {
    run_cycles(
        "crash_failed_io",
        Duration::from_secs(10),
        |rng| {
            let n = 5 + rng.below(200);
            Some(match rng.below(2) {
                0 => format!("fail_write={n}"),
                _ => format!("fail_sync={}", 1 + n / 8),
            })
        },
        (2000, 2001),
    );
}

/// An in-flight transaction whose changes cancel out (it inserts a row and deletes it
/// again) may have committed before the kill: only the counter says so. The verified
/// count a cycle hands to the next must then be the counter's, or the next cycle finds
/// the counter one ahead of the transactions it can account for. No process or kill
/// is needed: the transaction commits here and its acknowledgement stops after the
/// intent line, as when the worker dies between the commit and its `C` line.
#[test]
fn a_committed_in_flight_transaction_whose_changes_cancel_out_counts_in_later_cycles() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    {
        let storage = tarn_catalog::Storage::open(&settings(&data)).unwrap();
        tarn_bench::crash::ensure_schema(&storage).unwrap();
        let t = storage.table("crash", "t").unwrap();
        let c = storage.table("crash", "c").unwrap();
        let mut tx = storage.begin(None, false);
        t.insert_tx(
            &mut tx,
            vec![
                Value::Int(4),
                Value::Int(7),
                Value::Null,
                Value::Bytes(tarn_bench::crash::pad_bytes(4, 7, 3)),
            ],
        )
        .unwrap();
        assert!(t.delete_tx(&mut tx, &[Value::Int(4)]).unwrap());
        assert!(
            c.update_tx(
                &mut tx,
                &[Value::Int(0)],
                vec![Value::Int(0), Value::Int(1)]
            )
            .unwrap()
        );
        storage.commit(tx).unwrap();
    }
    let first = dir.path().join("ack-1");
    std::fs::write(&first, "I 0 1 i:4:7:N:3 d:4\n").unwrap();
    let (model, counter) = verify(&data, &BTreeMap::new(), 0, &read_acks(&first), "cycle 1");
    assert!(model.is_empty());
    assert_eq!(counter, 1, "the transaction committed: the counter says so");
    // The next cycle's worker committed nothing.
    let second = dir.path().join("ack-2");
    std::fs::write(&second, "").unwrap();
    let (_, counter) = verify(&data, &model, counter, &read_acks(&second), "cycle 2");
    assert_eq!(counter, 1);
}
