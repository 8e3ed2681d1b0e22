//! A damaged clustered leaf on disk: every access path that reaches it (serial scans,
//! parallel scans, gets, index scans with and without prefetch, writes) fails with
//! ER_FILE_CORRUPT naming the file and the page; none panics, hangs or returns a
//! wrong row, and the rest of the table stays readable.

mod common;

use std::io::{Read, Seek, SeekFrom, Write};
use std::ops::Bound;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use common::*;
use tarn_btree::Direction;
use tarn_catalog::{IndexDef, ParallelScan, TableDef};
use tarn_common::Error;
use tarn_common::settings::PrefetchUnit;
use tarn_row::{Column, ColumnType, Value};

const POOL_FRAMES: u64 = 64;

/// Opens the storage with the doublewrite buffer off: with it on, recovery would
/// repair the damage from the page's last doublewritten copy (tested in
/// `tarn-buffer`), and these tests are about what happens when nothing can.
fn open(dir: &Path, pool_frames: u64) -> tarn_catalog::Storage {
    let mut settings = settings(dir, pool_frames);
    settings.doublewrite = false;
    tarn_catalog::Storage::open(&settings).expect("open storage")
}
const ROWS: i64 = 3000;
const LEAF: u16 = 16;

fn row(id: i64) -> Vec<Value> {
    vec![
        Value::Int(id),
        Value::Int(id % 97),
        Value::Bytes(format!("row {id} {}", "x".repeat((id % 40) as usize)).into_bytes()),
    ]
}

/// Runs `f` on another thread and fails if it has not finished in two minutes (a
/// hang), re-raising its panic if it panicked.
fn within_time_limit(f: impl FnOnce() + Send + 'static) {
    let (done, finished) = mpsc::channel();
    let worker = std::thread::spawn(move || {
        f();
        let _ = done.send(());
    });
    match finished.recv_timeout(Duration::from_secs(120)) {
        Ok(()) | Err(mpsc::RecvTimeoutError::Disconnected) => {
            if let Err(panic) = worker.join() {
                std::panic::resume_unwind(panic);
            }
        }
        Err(mpsc::RecvTimeoutError::Timeout) => panic!("hung on a corrupt page"),
    }
}

/// Page numbers of the pages of `path` whose header says they are leaves.
fn leaf_pages(path: &Path) -> Vec<u32> {
    let bytes = std::fs::read(path).unwrap();
    bytes
        .chunks_exact(PAGE_SIZE as usize)
        .enumerate()
        .filter(|(_, page)| u16::from_le_bytes([page[4], page[5]]) == LEAF)
        .map(|(n, _)| n as u32)
        .collect()
}

fn flip_bytes(path: &Path, page_no: u32) {
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .unwrap();
    let at = u64::from(page_no) * u64::from(PAGE_SIZE) + u64::from(PAGE_SIZE) / 2;
    let mut bytes = [0u8; 8];
    file.seek(SeekFrom::Start(at)).unwrap();
    file.read_exact(&mut bytes).unwrap();
    for b in &mut bytes {
        *b ^= 0x5a;
    }
    file.seek(SeekFrom::Start(at)).unwrap();
    file.write_all(&bytes).unwrap();
    file.sync_all().unwrap();
}

/// The error is ER_FILE_CORRUPT and names the file and the page.
#[track_caller]
fn assert_corrupt(error: &Error, path: &Path, file_id: u32, page_no: u32, what: &str) {
    assert_eq!(error.mysql_code(), 3000, "{what}: {error}");
    let message = error.to_string();
    assert!(
        message.contains(&path.display().to_string()),
        "{what}: the file is not named: {message}"
    );
    assert!(
        message.contains(&format!("{file_id}:{page_no}")),
        "{what}: the page {file_id}:{page_no} is not named: {message}"
    );
}

struct Damaged {
    dir: tempfile::TempDir,
    path: PathBuf,
    file_id: u32,
    page_no: u32,
    /// Ids of the rows on the damaged leaf.
    on_page: Vec<i64>,
}

/// A multi-level table whose middle leaf is damaged on disk.
fn damaged_table() -> Damaged {
    let dir = test_dir();
    let (file_id, pages) = {
        let storage = open(dir.path(), POOL_FRAMES);
        storage.create_database("db").unwrap();
        let table = storage
            .create_table(
                "db",
                TableDef::new(
                    "t",
                    vec![
                        Column::new("id", ColumnType::Int { unsigned: false }, false),
                        Column::new("v", ColumnType::Int { unsigned: false }, false),
                        Column::new("s", ColumnType::VarChar { len: 100 }, false),
                    ],
                    &[0],
                )
                .with_index(IndexDef::new("by_v", &[1], false)),
            )
            .unwrap();
        for id in 0..ROWS {
            table.insert(row(id)).unwrap();
        }
        assert!(table.clustered().check_invariants().unwrap().height >= 2);
        let keys: Vec<Vec<u8>> = (0..ROWS)
            .map(|id| table.encode_primary_key(&[Value::Int(id)]).unwrap())
            .collect();
        let keys: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
        let pages = table.clustered().leaf_pages_for(&keys).unwrap();
        (table.def().file_id, pages)
        // Dropping the storage flushes every page (a clean shutdown).
    };
    let path = dir.path().join(format!("{file_id:06}.tdf"));
    let leaves = leaf_pages(&path);
    assert!(leaves.len() > 10, "{} leaves", leaves.len());
    let page_no = leaves[leaves.len() / 2];
    let on_page: Vec<i64> = (0..ROWS)
        .filter(|&id| pages[id as usize] == page_no)
        .collect();
    assert!(!on_page.is_empty(), "no row on leaf {page_no}");
    flip_bytes(&path, page_no);
    Damaged {
        dir,
        path,
        file_id,
        page_no,
        on_page,
    }
}

#[test]
fn gets_and_writes_touching_a_damaged_leaf_fail_with_file_corrupt() {
    let d = damaged_table();
    within_time_limit(move || {
        let storage = open(d.dir.path(), POOL_FRAMES);
        let table = storage.table("db", "t").unwrap();
        for id in 0..ROWS {
            let result = table.get(&[Value::Int(id)]);
            if d.on_page.contains(&id) {
                let error = result.expect_err("a get on the damaged leaf succeeded");
                assert_corrupt(&error, &d.path, d.file_id, d.page_no, &format!("get {id}"));
            } else {
                assert_eq!(result.unwrap(), Some(row(id)), "get {id}");
            }
        }
        let id = d.on_page[d.on_page.len() / 2];
        let what = format!("writes to row {id}");
        let error = table.delete(&[Value::Int(id)]).unwrap_err();
        assert_corrupt(&error, &d.path, d.file_id, d.page_no, &what);
        let error = table.update(&[Value::Int(id)], row(id)).unwrap_err();
        assert_corrupt(&error, &d.path, d.file_id, d.page_no, &what);
        let error = table.insert(row(id)).unwrap_err();
        assert_corrupt(&error, &d.path, d.file_id, d.page_no, &what);
        // The rest of the table is still there.
        assert_eq!(table.get(&[Value::Int(0)]).unwrap(), Some(row(0)));
        assert_eq!(
            table.get(&[Value::Int(ROWS - 1)]).unwrap(),
            Some(row(ROWS - 1))
        );
    });
}

#[test]
fn scans_reaching_a_damaged_leaf_fail_with_file_corrupt() {
    let d = damaged_table();
    within_time_limit(move || {
        let storage = open(d.dir.path(), POOL_FRAMES);
        let table = storage.table("db", "t").unwrap();
        let expected: Vec<Vec<Value>> = (0..ROWS).map(row).collect();
        // Serial scans: correct rows up to the damaged leaf, then the error.
        for direction in [Direction::Forward, Direction::Backward] {
            let mut cursor = table
                .scan(Bound::Unbounded, Bound::Unbounded, direction)
                .unwrap();
            let mut rows = Vec::new();
            let error = loop {
                match cursor.next_row() {
                    Ok(Some(row)) => rows.push(row),
                    Ok(None) => panic!("{direction:?} scan read past the damaged leaf"),
                    Err(error) => break error,
                }
            };
            assert_corrupt(
                &error,
                &d.path,
                d.file_id,
                d.page_no,
                &format!("{direction:?} scan"),
            );
            let mut want = expected.clone();
            if direction == Direction::Backward {
                want.reverse();
            }
            assert!(!rows.is_empty() && rows.len() < want.len());
            assert_eq!(rows, want[..rows.len()], "{direction:?} scan");
        }
        // A range scan that stays clear of the damaged leaf works.
        let first = d.on_page[0];
        let clear = table
            .scan(
                Bound::Unbounded,
                Bound::Excluded(vec![Value::Int(first - 1)]),
                Direction::Forward,
            )
            .unwrap()
            .collect_rows()
            .unwrap();
        assert_eq!(clear, expected[..(first - 1) as usize]);
        // Parallel scans: the error arrives as a batch; rows before it are correct, and
        // the stream ends (drained or dropped) without hanging.
        for threads in 1..=4 {
            for ordered in [false, true] {
                for drain in [false, true] {
                    let what = format!("{threads} threads, ordered {ordered}, drain {drain}");
                    let mut stream = table
                        .parallel_scan(ParallelScan {
                            threads: Some(threads),
                            ordered,
                            batch_rows: Some(64),
                            ..Default::default()
                        })
                        .unwrap();
                    let mut rows = Vec::new();
                    let mut errors = Vec::new();
                    for batch in stream.by_ref() {
                        match batch {
                            Ok(batch) => rows.extend((0..batch.len()).map(|r| batch.row(r))),
                            Err(error) => {
                                errors.push(error);
                                if !drain {
                                    break;
                                }
                            }
                        }
                    }
                    drop(stream);
                    assert!(!errors.is_empty(), "{what}: no error");
                    for error in &errors {
                        assert_corrupt(error, &d.path, d.file_id, d.page_no, &what);
                    }
                    if ordered && !drain {
                        assert_eq!(rows, expected[..rows.len()], "{what}");
                    } else {
                        for r in &rows {
                            let Value::Int(id) = r[0] else { unreachable!() };
                            assert_eq!(r, &expected[id as usize], "{what}");
                            assert!(
                                !d.on_page.contains(&id),
                                "{what}: a row of the damaged leaf"
                            );
                        }
                    }
                }
            }
        }
        // Secondary-index scans fetch rows from the damaged leaf: the error, also when
        // the leaf was prefetched.
        for prefetch in [
            PrefetchUnit::Fixed(0),
            PrefetchUnit::Fixed(8),
            PrefetchUnit::Fixed(1024),
            PrefetchUnit::Adaptive,
        ] {
            let mut scan = table
                .index_scan(
                    "by_v",
                    Bound::Unbounded,
                    Bound::Unbounded,
                    Direction::Forward,
                    Some(prefetch),
                )
                .unwrap();
            let error = loop {
                match scan.next_row() {
                    Ok(Some(r)) => {
                        let Value::Int(id) = r[0] else { unreachable!() };
                        assert_eq!(r, expected[id as usize], "{prefetch:?}");
                    }
                    Ok(None) => panic!("{prefetch:?}: index scan passed the damaged leaf"),
                    Err(error) => break error,
                }
            };
            assert_corrupt(
                &error,
                &d.path,
                d.file_id,
                d.page_no,
                &format!("index scan at {prefetch:?}"),
            );
        }
    });
}

/// A damaged overflow page: reading the long value fails with ER_FILE_CORRUPT, the
/// other rows stay readable.
#[test]
fn a_damaged_overflow_page_fails_the_reads_of_its_value() {
    const OVERFLOW: u16 = 20;
    let dir = test_dir();
    let file_id = {
        let storage = open(dir.path(), POOL_FRAMES);
        storage.create_database("db").unwrap();
        let table = storage
            .create_table(
                "db",
                TableDef::new(
                    "t",
                    vec![
                        Column::new("id", ColumnType::Int { unsigned: false }, false),
                        Column::new("v", ColumnType::Int { unsigned: false }, false),
                        Column::new("b", ColumnType::Blob, true),
                    ],
                    &[0],
                ),
            )
            .unwrap();
        for id in 0..20 {
            let b = if id == 7 {
                vec![7u8; 50_000]
            } else {
                vec![1u8; 10]
            };
            table
                .insert(vec![Value::Int(id), Value::Int(id), Value::Bytes(b)])
                .unwrap();
        }
        table.def().file_id
    };
    let path = dir.path().join(format!("{file_id:06}.tdf"));
    let bytes = std::fs::read(&path).unwrap();
    let overflow: Vec<u32> = bytes
        .chunks_exact(PAGE_SIZE as usize)
        .enumerate()
        .filter(|(_, page)| u16::from_le_bytes([page[4], page[5]]) == OVERFLOW)
        .map(|(n, _)| n as u32)
        .collect();
    assert!(overflow.len() >= 12, "{} overflow pages", overflow.len());
    let page_no = overflow[overflow.len() / 2];
    flip_bytes(&path, page_no);
    within_time_limit(move || {
        let storage = open(dir.path(), POOL_FRAMES);
        let table = storage.table("db", "t").unwrap();
        let error = table.get(&[Value::Int(7)]).unwrap_err();
        assert_corrupt(&error, &path, file_id, page_no, "get");
        assert_eq!(
            table.get(&[Value::Int(8)]).unwrap(),
            Some(vec![
                Value::Int(8),
                Value::Int(8),
                Value::Bytes(vec![1u8; 10])
            ])
        );
        let error = table
            .scan(Bound::Unbounded, Bound::Unbounded, Direction::Forward)
            .unwrap()
            .collect_rows()
            .unwrap_err();
        assert_corrupt(&error, &path, file_id, page_no, "scan");
        // Without the long column in the projection the scan never reads the chain.
        let (rows, _) = parallel_rows(
            &table,
            ParallelScan {
                threads: Some(2),
                projection: Some(vec![0, 1]),
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(rows.len(), 20);
        let error = parallel_rows(&table, ParallelScan::default()).unwrap_err();
        assert_corrupt(&error, &path, file_id, page_no, "parallel scan");
        // Deleting the row frees the chain, damaged page and all, or fails cleanly.
        match table.delete(&[Value::Int(7)]) {
            Ok(_) => assert!(table.get(&[Value::Int(7)]).unwrap().is_none()),
            Err(error) => assert_corrupt(&error, &path, file_id, page_no, "delete"),
        }
    });
}
