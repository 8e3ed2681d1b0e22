//! The parallel full scan (S1) against the serial primary-key scan: empty, one-page,
//! two-level and three-level tables, 1 to 8 workers, ordered and unordered, with and
//! without projection and predicate; statistics; streams dropped midway.

mod common;

use std::sync::Arc;
use std::sync::mpsc;
use std::time::Duration;

use common::*;
use tarn_btree::Direction;
use tarn_catalog::{ParallelScan, Predicate, Storage, Table, TableDef};
use tarn_common::rng::{Rng, test_seed};
use tarn_row::row::{OverflowStore, RowSerializer, RowView};
use tarn_row::{Column, ColumnType, Decimal, Value};

const POOL_FRAMES: u64 = 256;

fn columns() -> Vec<Column> {
    vec![
        Column::new("id", ColumnType::Int { unsigned: false }, false),
        Column::new("pad", ColumnType::VarChar { len: 250 }, false),
        Column::new("score", ColumnType::BigInt { unsigned: false }, true),
        Column::new("blob", ColumnType::Blob, true),
        Column::new(
            "price",
            ColumnType::Decimal {
                precision: 15,
                scale: 2,
            },
            true,
        ),
    ]
}

fn row(rng: &mut Rng, id: i64, pad_len: usize) -> Vec<Value> {
    let blob = match rng.below(40) {
        0 => Value::Bytes(vec![id as u8; 1500 + rng.below(3000) as usize]), // overflow
        1..=8 => Value::Null,
        _ => Value::Bytes(vec![b'x'; rng.below(60) as usize]),
    };
    vec![
        Value::Int(id),
        Value::Bytes(format!("{id:0>pad_len$}").into_bytes()),
        if id % 5 == 0 {
            Value::Null
        } else {
            Value::Int(id * 31 - 7)
        },
        blob,
        Value::Decimal(Decimal::from_i128(i128::from(id) * 101 - 5000, 2).unwrap()),
    ]
}

struct Fixture {
    _dir: tempfile::TempDir,
    _storage: Storage,
    /// (name, table, expected height or more)
    tables: Vec<(&'static str, Arc<Table>, usize)>,
}

fn fixture(rng: &mut Rng) -> Fixture {
    let dir = test_dir();
    let storage = open(dir.path(), POOL_FRAMES);
    storage.create_database("db").unwrap();
    let mut tables = Vec::new();
    let empty = storage
        .create_table("db", TableDef::new("empty", columns(), &[0]))
        .unwrap();
    tables.push(("empty", empty, 1));
    let one = storage
        .create_table("db", TableDef::new("one", columns(), &[0]))
        .unwrap();
    for id in 0..12 {
        one.insert(row(rng, id, 4)).unwrap();
    }
    tables.push(("one page", one, 1));
    // Two levels, built by inserts in random order (leaves made by splits).
    let two = storage
        .create_table("db", TableDef::new("two", columns(), &[0]))
        .unwrap();
    let mut ids: Vec<i64> = (0..2500).map(|i| i * 3 - 2000).collect();
    for i in (1..ids.len()).rev() {
        ids.swap(i, rng.below(i as u64 + 1) as usize);
    }
    for &id in &ids {
        two.insert(row(rng, id, 8)).unwrap();
    }
    for id in ids.iter().filter(|&&id| id % 7 == 0) {
        two.delete(&[Value::Int(*id)]).unwrap().unwrap();
    }
    tables.push(("two levels", two, 2));
    // Three levels: wide keys (id, pad) so inner nodes have few children; bulk loaded.
    let tall = storage
        .create_table("db", TableDef::new("tall", columns(), &[0, 1]))
        .unwrap();
    let rows: Vec<_> = (0..1500).map(|id| Ok(row(rng, id, 240))).collect();
    tall.bulk_load(rows).unwrap();
    tables.push(("three levels", tall, 3));
    for (name, table, height) in &tables {
        let stats = table.clustered().check_invariants().unwrap();
        assert!(
            stats.height >= *height,
            "{name}: height {} < {height}",
            stats.height
        );
        if *height == 1 {
            assert_eq!(stats.height, 1, "{name}");
        }
    }
    Fixture {
        _dir: dir,
        _storage: storage,
        tables,
    }
}

/// Serializes the values of some columns as a debug line per row.
struct DebugRows(Vec<usize>);

impl RowSerializer for DebugRows {
    fn serialize(
        &self,
        view: &RowView<'_>,
        overflow: &dyn OverflowStore,
        out: &mut Vec<u8>,
    ) -> tarn_common::Result<()> {
        let values = self
            .0
            .iter()
            .map(|&c| view.value(c, overflow))
            .collect::<tarn_common::Result<Vec<Value>>>()?;
        out.extend_from_slice(format!("{values:?}\n").as_bytes());
        Ok(())
    }
}

/// Scan options without a projection or serializer.
fn options_again(
    threads: usize,
    filtered: bool,
    ordered: bool,
    batch_rows: Option<usize>,
    readahead_pages: Option<usize>,
) -> ParallelScan {
    ParallelScan {
        threads: Some(threads),
        predicate: filtered.then(multiple_of_three),
        ordered,
        batch_rows,
        readahead_pages,
        ..Default::default()
    }
}

/// The serialized rows of a scan, as text; checks each batch's row count.
fn serialized_text(table: &Arc<Table>, options: ParallelScan) -> tarn_common::Result<String> {
    let mut text = String::new();
    for batch in table.parallel_scan(options)? {
        let batch = batch?;
        assert!(
            batch.columns.is_empty(),
            "a serialized batch has no vectors"
        );
        let part = String::from_utf8(batch.serialized.clone()).expect("debug text");
        assert_eq!(part.lines().count(), batch.len());
        text.push_str(&part);
    }
    Ok(text)
}

fn multiple_of_three() -> Predicate {
    Arc::new(|v: &RowView| v.i64(0).is_some_and(|x| x % 3 == 0))
}

/// Rows as debug strings, sorted: a multiset of rows.
fn multiset(rows: &[Vec<Value>]) -> Vec<String> {
    let mut out: Vec<String> = rows.iter().map(|r| format!("{r:?}")).collect();
    out.sort();
    out
}

#[test]
fn parallel_scans_return_the_serial_scans_rows() {
    let seed = test_seed("parallel_scans_return_the_serial_scans_rows");
    let mut rng = Rng::new(seed);
    let fixture = fixture(&mut rng);
    let projections: [Option<Vec<usize>>; 3] = [None, Some(vec![4, 0, 3]), Some(vec![2])];
    for (name, table, _) in &fixture.tables {
        let serial = pk_scan(table, Direction::Forward);
        for threads in 1..=8usize {
            for ordered in [false, true] {
                for projection in &projections {
                    for filtered in [false, true] {
                        // Small batches sometimes, so workers block on full channels.
                        let batch_rows = [None, Some(1), Some(7), Some(100)][rng.below(4) as usize];
                        let readahead_pages =
                            [None, Some(0), Some(1), Some(16)][rng.below(4) as usize];
                        let options = ParallelScan {
                            threads: Some(threads),
                            projection: projection.clone(),
                            predicate: filtered.then(multiple_of_three),
                            ordered,
                            batch_rows,
                            readahead_pages,
                            snapshot: None,
                            serializer: None,
                        };
                        let what = format!(
                            "seed {seed}: {name}, {threads} threads, ordered {ordered}, \
                             projection {projection:?}, filtered {filtered}, batch {batch_rows:?}, \
                             readahead {readahead_pages:?}"
                        );
                        let expected: Vec<Vec<Value>> = serial
                            .iter()
                            .filter(|r| !filtered || matches!(r[0], Value::Int(x) if x % 3 == 0))
                            .map(|r| match projection {
                                None => r.clone(),
                                Some(p) => p.iter().map(|&c| r[c].clone()).collect(),
                            })
                            .collect();
                        let (found, stats) =
                            parallel_rows(table, options).unwrap_or_else(|e| panic!("{what}: {e}"));
                        if ordered {
                            assert_eq!(found, expected, "{what}");
                        } else {
                            assert_eq!(multiset(&found), multiset(&expected), "{what}");
                        }
                        assert_eq!(stats.rows, expected.len() as u64, "{what}: {stats:?}");
                        assert_eq!(stats.rows_scanned, serial.len() as u64, "{what}: {stats:?}");
                        assert_eq!(stats.threads, threads, "{what}: {stats:?}");
                        let ranges_per_thread = if ordered {
                            tarn_common::limits::SCAN_ORDERED_RANGES_PER_THREAD
                        } else {
                            tarn_common::limits::SCAN_RANGES_PER_THREAD
                        };
                        assert!(
                            stats.ranges >= 1 && stats.ranges <= threads * ranges_per_thread,
                            "{what}: {stats:?}"
                        );
                        assert!(stats.leaves >= 1, "{what}: {stats:?}");
                        // The same scan serializing its rows instead of decoding them.
                        let columns = projection
                            .clone()
                            .unwrap_or_else(|| (0..table.def().columns.len()).collect());
                        let serialized = ParallelScan {
                            serializer: Some(Arc::new(DebugRows(columns))),
                            ..options_again(threads, filtered, ordered, batch_rows, readahead_pages)
                        };
                        let text = serialized_text(table, serialized)
                            .unwrap_or_else(|e| panic!("{what}, serialized: {e}"));
                        let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
                        let mut expected_lines: Vec<String> =
                            expected.iter().map(|r| format!("{r:?}")).collect();
                        if !ordered {
                            lines.sort();
                            expected_lines.sort();
                        }
                        assert_eq!(lines, expected_lines, "{what}, serialized");
                    }
                }
            }
        }
    }
}

#[test]
fn a_projection_naming_no_column_is_refused() {
    let mut rng = Rng::new(1);
    let fixture = fixture(&mut rng);
    let (_, table, _) = &fixture.tables[2];
    let result = table.parallel_scan(ParallelScan {
        projection: Some(vec![0, 5]),
        ..Default::default()
    });
    assert_eq!(result.err().map(|e| e.mysql_code()), Some(1054));
}

/// Dropping a stream after some batches, or before any, stops its workers: the drop
/// returns (checked by a watchdog, so a hang fails instead of blocking the suite).
#[test]
fn dropping_a_stream_midway_stops_the_workers() {
    let seed = test_seed("dropping_a_stream_midway_stops_the_workers");
    let mut rng = Rng::new(seed);
    let fixture = fixture(&mut rng);
    let tables: Vec<Arc<Table>> = fixture.tables.iter().map(|(_, t, _)| t.clone()).collect();
    let (done, finished) = mpsc::channel();
    let worker = std::thread::spawn(move || {
        for table in &tables {
            for threads in 1..=8usize {
                for ordered in [false, true] {
                    for take in [0usize, 1, 3] {
                        let mut stream = table
                            .parallel_scan(ParallelScan {
                                threads: Some(threads),
                                ordered,
                                batch_rows: Some(16),
                                projection: Some(vec![0]),
                                ..Default::default()
                            })
                            .unwrap();
                        let mut ids = Vec::new();
                        for batch in stream.by_ref().take(take) {
                            let batch = batch.unwrap();
                            assert!(batch.len() <= 16);
                            ids.extend((0..batch.len()).map(|r| batch.value(0, r)));
                        }
                        if ordered {
                            // The first batches of an ordered scan are the first rows.
                            let serial = pk_scan(table, Direction::Forward);
                            let want: Vec<Value> = serial
                                .iter()
                                .take(ids.len())
                                .map(|r| r[0].clone())
                                .collect();
                            assert_eq!(ids, want, "{threads} threads");
                        }
                        drop(stream);
                    }
                }
            }
        }
        done.send(()).unwrap();
    });
    match finished.recv_timeout(Duration::from_secs(120)) {
        Ok(()) => worker.join().unwrap(),
        Err(mpsc::RecvTimeoutError::Disconnected) => {
            // The thread panicked: report its panic.
            worker.join().unwrap();
            unreachable!("the thread ended without reporting");
        }
        Err(mpsc::RecvTimeoutError::Timeout) => {
            panic!("seed {seed}: dropping parallel scan streams did not return in 120 s")
        }
    }
}

/// Workers never wait for the consumer while holding a leaf latch: a consumer that
/// updates rows (in leaves the workers are on) while it iterates, through small
/// batches that keep the channels full, finishes, and sees every row once.
#[test]
fn a_consumer_may_write_to_the_table_while_it_iterates() {
    let dir = test_dir();
    let storage = open(dir.path(), POOL_FRAMES);
    storage.create_database("db").unwrap();
    let table = storage
        .create_table("db", TableDef::new("t", columns(), &[0]))
        .unwrap();
    let mut rng = Rng::new(7);
    const N: i64 = 2000;
    for id in 0..N {
        table.insert(row(&mut rng, id, 30)).unwrap();
    }
    let (done, finished) = mpsc::channel();
    let worker = std::thread::spawn(move || {
        for threads in [1, 2, 4] {
            for ordered in [true, false] {
                let stream = table
                    .parallel_scan(ParallelScan {
                        threads: Some(threads),
                        ordered,
                        batch_rows: Some(4),
                        projection: Some(vec![0]),
                        ..Default::default()
                    })
                    .unwrap();
                let mut seen = vec![0u32; N as usize];
                for batch in stream {
                    let batch = batch.unwrap();
                    for r in 0..batch.len() {
                        let Value::Int(id) = batch.value(0, r) else {
                            unreachable!()
                        };
                        seen[id as usize] += 1;
                        // Rewrite a row further on, with a value of another length (so
                        // leaves split and merge under the workers).
                        let other = (id * 7 + 300) % N;
                        let mut new = row(&mut rng, other, 30);
                        new[1] = Value::Bytes(vec![b'n'; rng.below(200) as usize]);
                        assert!(table.update(&[Value::Int(other)], new).unwrap());
                    }
                }
                assert!(
                    seen.iter().all(|&n| n == 1),
                    "{threads} threads, ordered {ordered}: rows missed or repeated"
                );
            }
        }
        let _ = done.send(());
    });
    match finished.recv_timeout(Duration::from_secs(120)) {
        Ok(()) | Err(mpsc::RecvTimeoutError::Disconnected) => {
            if let Err(panic) = worker.join() {
                std::panic::resume_unwind(panic);
            }
        }
        Err(mpsc::RecvTimeoutError::Timeout) => {
            panic!("the scan workers and the consumer's writes deadlocked")
        }
    }
    drop(storage);
}

/// Rows that exist throughout a parallel scan are returned exactly once while other
/// threads insert and delete rows around them (splits and merges under the workers);
/// rows that come and go are returned at most once.
#[test]
fn concurrent_writers_do_not_make_a_scan_skip_or_repeat_rows() {
    let seed = test_seed("concurrent_writers_do_not_make_a_scan_skip_or_repeat_rows");
    let dir = test_dir();
    let storage = open(dir.path(), POOL_FRAMES);
    storage.create_database("db").unwrap();
    let table = storage
        .create_table("db", TableDef::new("t", columns(), &[0]))
        .unwrap();
    let mut rng = Rng::new(seed);
    // Even ids stay; odd ids are inserted and deleted by the writers.
    const N: i64 = 4000;
    for id in (0..N).step_by(2) {
        table.insert(row(&mut rng, id, 20)).unwrap();
    }
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writers: Vec<_> = (0..2)
        .map(|w| {
            let (table, stop) = (table.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut rng = Rng::new(seed ^ (w + 1));
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    // Each writer has its own keys: two writers racing on one key are
                    // not serialised (no lock manager yet), and a `get` racing with a
                    // delete of its row may follow a freed overflow chain.
                    let id = (rng.below(N as u64 / 4) as i64 * 2 + w as i64) * 2 + 1;
                    if table.get(&[Value::Int(id)]).unwrap().is_some() {
                        table.delete(&[Value::Int(id)]).unwrap();
                    } else {
                        let mut r = row(&mut rng, id, 20);
                        r[1] = Value::Bytes(vec![b'w'; 100 + rng.below(150) as usize]);
                        table.insert(r).unwrap();
                    }
                }
            })
        })
        .collect();
    let (done, finished) = mpsc::channel();
    let scanner = {
        let table = table.clone();
        std::thread::spawn(move || {
            for round in 0..12 {
                let (rows, _) = parallel_rows(
                    &table,
                    ParallelScan {
                        threads: Some(1 + round % 4),
                        ordered: round % 2 == 0,
                        batch_rows: Some(16),
                        readahead_pages: Some(round % 3 * 4),
                        projection: Some(vec![0]),
                        ..Default::default()
                    },
                )
                .unwrap();
                let mut seen = vec![0u32; N as usize];
                let mut previous = None;
                for r in &rows {
                    let Value::Int(id) = r[0] else { unreachable!() };
                    seen[id as usize] += 1;
                    if round % 2 == 0 {
                        assert!(previous < Some(id), "round {round}: out of order");
                        previous = Some(id);
                    }
                }
                for (id, &n) in seen.iter().enumerate() {
                    if id % 2 == 0 {
                        assert_eq!(n, 1, "seed {seed}, round {round}: stable row {id}");
                    } else {
                        assert!(n <= 1, "seed {seed}, round {round}: row {id} repeated");
                    }
                }
            }
            let _ = done.send(());
        })
    };
    let outcome = finished.recv_timeout(Duration::from_secs(120));
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    match outcome {
        Ok(()) | Err(mpsc::RecvTimeoutError::Disconnected) => {
            if let Err(panic) = scanner.join() {
                std::panic::resume_unwind(panic);
            }
        }
        Err(mpsc::RecvTimeoutError::Timeout) => panic!("seed {seed}: scans hung"),
    }
    for writer in writers {
        writer.join().unwrap();
    }
    let stats = table.clustered().check_invariants().unwrap();
    assert_eq!(
        stats.entries as usize,
        pk_scan(&table, Direction::Forward).len()
    );
}
