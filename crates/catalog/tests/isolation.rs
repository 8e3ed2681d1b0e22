//! Transactions at every isolation level against the anomalies of the SQL standard,
//! with InnoDB's outcomes: dirty reads, non-repeatable reads, phantoms, lost updates
//! and write skew; plus rollback, savepoints, statement rollback, deadlocks, lock wait
//! timeouts, NOWAIT and SKIP LOCKED, and secondary indexes after rollbacks.
//!
//! Two transactions are interleaved step by step on one thread where nothing blocks.
//! Where InnoDB makes one wait, the waiting step runs with a one-second lock wait
//! timeout and must fail with 1205 (or 1213 for a deadlock), which shows it blocked;
//! or it runs on a second thread, which must be queued in the lock manager before the
//! holder ends.
//!
//! Locking reads through a secondary index (`index_range_tx` with a lock) are checked
//! the same way: next-key locks on the index's records and on the gap past the range
//! at REPEATABLE READ, none at READ COMMITTED, updates that move a row's indexed
//! value into a locked range, NOWAIT and SKIP LOCKED, and consistency after rollbacks.

mod common;

use std::ops::Bound;
use std::sync::Arc;

use common::*;
use tarn_catalog::{IndexDef, RowLock, Storage, Table, TableDef, WaitPolicy};
use tarn_common::settings::IsolationLevel::{self, *};
use tarn_row::{Column, ColumnType, Value};

const LEVELS: [IsolationLevel; 4] = [ReadUncommitted, ReadCommitted, RepeatableRead, Serializable];

/// A table t(id PK, v, g) with indexes on g and v, holding rows 1..=5 (v = 10 * id).
fn setup() -> (tempfile::TempDir, Arc<Storage>, Arc<Table>) {
    let dir = test_dir();
    let mut settings = settings(dir.path(), 512);
    settings.lock_wait_timeout_s = 1;
    let storage = Storage::open(&settings).unwrap();
    storage.create_database("db").unwrap();
    let table = storage
        .create_table(
            "db",
            TableDef::new(
                "t",
                vec![
                    Column::new("id", ColumnType::BigInt { unsigned: false }, false),
                    Column::new("v", ColumnType::BigInt { unsigned: false }, false),
                    Column::new("g", ColumnType::Int { unsigned: false }, true),
                ],
                &[0],
            )
            .with_index(IndexDef::new("by_g", &[2], false))
            .with_index(IndexDef::new("by_v", &[1], false)),
        )
        .unwrap();
    let mut tx = storage.begin(None, false);
    for id in 1..=5 {
        table.insert_tx(&mut tx, row(id, 10 * id)).unwrap();
    }
    storage.commit(tx).unwrap();
    (dir, Arc::new(storage), table)
}

fn row(id: i64, v: i64) -> Vec<Value> {
    vec![int(id), int(v), int(id % 2)]
}

fn v_of(table: &Table, tx: &mut tarn_catalog::Transaction, id: i64) -> Option<i64> {
    v_of_locked(table, tx, id, RowLock::None)
}

fn v_of_locked(
    table: &Table,
    tx: &mut tarn_catalog::Transaction,
    id: i64,
    lock: RowLock,
) -> Option<i64> {
    table
        .get_tx(tx, &[int(id)], lock)
        .unwrap()
        .map(|r| match r[1] {
            Value::Int(v) => v,
            ref other => panic!("{other:?}"),
        })
}

fn ids_in(
    table: &Table,
    tx: &mut tarn_catalog::Transaction,
    lo: i64,
    hi: i64,
    lock: RowLock,
) -> tarn_common::Result<Vec<i64>> {
    Ok(table
        .scan_tx(
            tx,
            Bound::Included(vec![int(lo)]),
            Bound::Included(vec![int(hi)]),
            lock,
            WaitPolicy::Wait,
            usize::MAX,
        )?
        .into_iter()
        .map(|r| match r[0] {
            Value::Int(id) => id,
            ref other => panic!("{other:?}"),
        })
        .collect())
}

#[test]
fn dirty_reads_only_at_read_uncommitted() {
    for level in LEVELS {
        let (_dir, storage, t) = setup();
        let mut writer = storage.begin(Some(RepeatableRead), false);
        t.update_tx(&mut writer, &[int(1)], row(1, 99)).unwrap();
        let mut reader = storage.begin(Some(level), false);
        match level {
            ReadUncommitted => assert_eq!(v_of(&t, &mut reader, 1), Some(99)),
            ReadCommitted | RepeatableRead => assert_eq!(v_of(&t, &mut reader, 1), Some(10)),
            // A plain read is a shared locking read: it waits for the writer.
            Serializable => assert_eq!(code(t.get_tx(&mut reader, &[int(1)], RowLock::None)), 1205),
        }
        storage.rollback(reader).unwrap();
        storage.rollback(writer).unwrap();
        let mut check = storage.begin(None, true);
        assert_eq!(
            v_of(&t, &mut check, 1),
            Some(10),
            "{level}: rollback restores"
        );
        storage.commit(check).unwrap();
    }
}

#[test]
fn non_repeatable_reads_below_repeatable_read() {
    for level in LEVELS {
        let (_dir, storage, t) = setup();
        let mut reader = storage.begin(Some(level), false);
        assert_eq!(v_of(&t, &mut reader, 2), Some(20));
        reader.end_statement();
        let mut writer = storage.begin(Some(RepeatableRead), false);
        let updated = t.update_tx(&mut writer, &[int(2)], row(2, 21));
        if level == Serializable {
            // The reader's shared lock holds the writer off.
            assert_eq!(code(updated), 1205, "{level}");
            storage.rollback(writer).unwrap();
            assert_eq!(v_of(&t, &mut reader, 2), Some(20));
            storage.commit(reader).unwrap();
            continue;
        }
        updated.unwrap();
        storage.commit(writer).unwrap();
        let second = v_of(&t, &mut reader, 2);
        let expected = if level >= RepeatableRead { 20 } else { 21 };
        assert_eq!(second, Some(expected), "{level}");
        storage.commit(reader).unwrap();
    }
}

#[test]
fn phantoms_at_read_committed_only_and_gap_locks_block_inserts() {
    for level in LEVELS {
        let (_dir, storage, t) = setup();
        let mut reader = storage.begin(Some(level), false);
        assert_eq!(
            ids_in(&t, &mut reader, 2, 8, RowLock::None).unwrap(),
            vec![2, 3, 4, 5]
        );
        reader.end_statement();
        let mut writer = storage.begin(Some(RepeatableRead), false);
        let inserted = t.insert_tx(&mut writer, row(7, 70));
        if level == Serializable {
            assert_eq!(code(inserted), 1205, "{level}: the gap is locked");
            storage.rollback(writer).unwrap();
            storage.commit(reader).unwrap();
            continue;
        }
        inserted.unwrap();
        storage.commit(writer).unwrap();
        let again = ids_in(&t, &mut reader, 2, 8, RowLock::None).unwrap();
        if level >= RepeatableRead {
            assert_eq!(
                again,
                vec![2, 3, 4, 5],
                "{level}: the snapshot has no phantom"
            );
        } else {
            assert_eq!(again, vec![2, 3, 4, 5, 7], "{level}");
        }
        storage.commit(reader).unwrap();
    }
    // A locking range read at REPEATABLE READ locks the gaps it scanned and the gap
    // after the range (here: past the last row): inserts there wait, inserts before
    // the range do not.
    let (_dir, storage, t) = setup();
    let mut reader = storage.begin(Some(RepeatableRead), false);
    assert_eq!(
        ids_in(&t, &mut reader, 4, 8, RowLock::Exclusive).unwrap(),
        vec![4, 5]
    );
    for (id, blocked) in [(0, false), (7, true), (100, true)] {
        let mut writer = storage.begin(None, false);
        let result = t.insert_tx(&mut writer, row(id, 1));
        if blocked {
            assert_eq!(code(result), 1205, "insert {id} waits for the gap lock");
        } else {
            result.unwrap();
        }
        storage.rollback(writer).unwrap();
    }
    assert_eq!(
        ids_in(&t, &mut reader, 4, 8, RowLock::Exclusive).unwrap(),
        vec![4, 5]
    );
    storage.commit(reader).unwrap();
}

#[test]
fn lost_updates_happen_with_plain_reads_and_not_with_for_update_or_serializable() {
    // Plain reads at REPEATABLE READ: both read 10, both write 11 (InnoDB loses one).
    let (_dir, storage, t) = setup();
    let mut a = storage.begin(Some(RepeatableRead), false);
    let mut b = storage.begin(Some(RepeatableRead), false);
    let va = v_of(&t, &mut a, 1).unwrap();
    let vb = v_of(&t, &mut b, 1).unwrap();
    t.update_tx(&mut a, &[int(1)], row(1, va + 1)).unwrap();
    storage.commit(a).unwrap();
    t.update_tx(&mut b, &[int(1)], row(1, vb + 1)).unwrap();
    storage.commit(b).unwrap();
    let mut check = storage.begin(None, true);
    assert_eq!(v_of(&t, &mut check, 1), Some(11), "InnoDB's lost update");
    storage.commit(check).unwrap();

    // FOR UPDATE: the second reader waits (here: times out) until the first commits,
    // then reads the newest value.
    let mut a = storage.begin(Some(RepeatableRead), false);
    let mut b = storage.begin(Some(RepeatableRead), false);
    let va = t
        .get_tx(&mut a, &[int(1)], RowLock::Exclusive)
        .unwrap()
        .unwrap();
    assert_eq!(code(t.get_tx(&mut b, &[int(1)], RowLock::Exclusive)), 1205);
    let Value::Int(va) = va[1] else { panic!() };
    t.update_tx(&mut a, &[int(1)], row(1, va + 1)).unwrap();
    storage.commit(a).unwrap();
    let vb = t
        .get_tx(&mut b, &[int(1)], RowLock::Exclusive)
        .unwrap()
        .unwrap();
    assert_eq!(vb[1], int(12), "a locking read sees the newest version");
    storage.commit(b).unwrap();

    // SERIALIZABLE: both take shared locks, then both want exclusive: a deadlock, and
    // the victim gets 1213 (only one update survives).
    let mut a = storage.begin(Some(Serializable), false);
    let mut b = storage.begin(Some(Serializable), false);
    v_of(&t, &mut a, 1);
    v_of(&t, &mut b, 1);
    let storage2 = storage.clone();
    let t2 = t.clone();
    let waiter = std::thread::spawn(move || {
        let result = t2.update_tx(&mut a, &[int(1)], row(1, 100));
        (result.map(drop), a, storage2)
    });
    std::thread::sleep(std::time::Duration::from_millis(200));
    let second = t.update_tx(&mut b, &[int(1)], row(1, 200));
    let (first, a, _) = waiter.join().unwrap();
    let first_code = first.as_ref().err().map(|e| e.mysql_code());
    let second_code = second.as_ref().err().map(|e| e.mysql_code());
    assert!(
        (first_code == Some(1213)) != (second_code == Some(1213)),
        "exactly one of them is a deadlock victim: {first_code:?} {second_code:?}"
    );
    for (ok, tx) in [(first.is_ok(), a), (second.is_ok(), b)] {
        if ok {
            storage.commit(tx).unwrap();
        } else {
            storage.rollback(tx).unwrap();
        }
    }
}

#[test]
fn write_skew_at_repeatable_read_but_not_at_serializable() {
    for level in [RepeatableRead, Serializable] {
        let (_dir, storage, t) = setup();
        // Invariant the application keeps: v(1) + v(2) > 0. Each transaction checks it
        // and zeroes one of them.
        let mut a = storage.begin(Some(level), false);
        let mut b = storage.begin(Some(level), false);
        let sum_a = v_of(&t, &mut a, 1).unwrap() + v_of(&t, &mut a, 2).unwrap();
        let sum_b = v_of(&t, &mut b, 1).unwrap() + v_of(&t, &mut b, 2).unwrap();
        assert!(sum_a > 0 && sum_b > 0);
        let ra = t.update_tx(&mut a, &[int(1)], row(1, 0));
        if level == RepeatableRead {
            ra.unwrap();
            t.update_tx(&mut b, &[int(2)], row(2, 0)).unwrap();
            storage.commit(a).unwrap();
            storage.commit(b).unwrap();
            let mut check = storage.begin(None, true);
            let sum = v_of(&t, &mut check, 1).unwrap() + v_of(&t, &mut check, 2).unwrap();
            assert_eq!(sum, 0, "InnoDB allows write skew at REPEATABLE READ");
            storage.commit(check).unwrap();
        } else {
            // a's write waits for b's shared lock on row 1.
            assert_eq!(code(ra), 1205);
            storage.rollback(a).unwrap();
            t.update_tx(&mut b, &[int(2)], row(2, 0)).unwrap();
            storage.commit(b).unwrap();
            let mut check = storage.begin(None, true);
            let sum = v_of(&t, &mut check, 1).unwrap() + v_of(&t, &mut check, 2).unwrap();
            assert!(sum > 0, "no write skew at SERIALIZABLE");
            storage.commit(check).unwrap();
        }
    }
}

#[test]
fn savepoints_statement_rollback_and_indexes_stay_consistent() {
    let (_dir, storage, t) = setup();
    let mut tx = storage.begin(None, false);
    t.update_tx(&mut tx, &[int(1)], vec![int(1), int(11), int(7)])
        .unwrap();
    tx.trx.savepoint("s1").unwrap();
    t.insert_tx(&mut tx, row(6, 60)).unwrap();
    t.delete_tx(&mut tx, &[int(2)]).unwrap();
    storage.rollback_to_savepoint(&mut tx, "s1").unwrap();
    assert_eq!(v_of(&t, &mut tx, 6), None);
    assert_eq!(v_of(&t, &mut tx, 2), Some(20));
    assert_eq!(v_of(&t, &mut tx, 1), Some(11));
    // A statement that fails part-way undoes only itself.
    tx.trx.begin_statement();
    t.insert_tx(&mut tx, row(8, 80)).unwrap();
    assert_eq!(code(t.insert_tx(&mut tx, row(3, 1))), 1062);
    storage.rollback_statement(&mut tx).unwrap();
    assert_eq!(v_of(&t, &mut tx, 8), None);
    assert_eq!(v_of(&t, &mut tx, 1), Some(11));
    storage.commit(tx).unwrap();
    let mut other = storage.begin(None, false);
    t.update_tx(&mut other, &[int(3)], vec![int(3), int(33), int(9)])
        .unwrap();
    t.delete_tx(&mut other, &[int(4)]).unwrap();
    storage.rollback(other).unwrap();
    assert!(storage.wait_for_purge(std::time::Duration::from_secs(10)));
    assert_eq!(t.verify_consistency().unwrap(), 5);
    let mut check = storage.begin(None, true);
    let by_g = t
        .index_range_tx(
            &mut check,
            "by_g",
            Bound::Included(vec![int(7)]),
            Bound::Included(vec![int(9)]),
            RowLock::None,
            WaitPolicy::Wait,
            10,
        )
        .unwrap();
    assert_eq!(by_g.len(), 1, "only row 1 has g in 7..=9: {by_g:?}");
    storage.commit(check).unwrap();
}

#[test]
fn nowait_skip_locked_and_timeouts_leave_other_locks_alone() {
    let (_dir, storage, t) = setup();
    let mut holder = storage.begin(None, false);
    t.get_tx(&mut holder, &[int(3)], RowLock::Exclusive)
        .unwrap();
    let mut other = storage.begin(None, false);
    let key = t.encode_primary_key(&[int(3)]).unwrap();
    assert_eq!(
        code(t.read_key_tx(&mut other, &key, RowLock::Shared, WaitPolicy::NoWait)),
        3572
    );
    assert_eq!(
        t.read_key_tx(&mut other, &key, RowLock::Shared, WaitPolicy::SkipLocked)
            .unwrap(),
        None
    );
    let rows = t
        .scan_tx(
            &mut other,
            Bound::Unbounded,
            Bound::Unbounded,
            RowLock::Exclusive,
            WaitPolicy::SkipLocked,
            100,
        )
        .unwrap();
    assert_eq!(rows.len(), 4, "row 3 skipped");
    // A timeout fails the statement, not the transaction: its other locks stay.
    assert_eq!(code(t.update_tx(&mut other, &[int(3)], row(3, 0))), 1205);
    assert!(t.update_tx(&mut other, &[int(1)], row(1, 0)).unwrap());
    storage.commit(holder).unwrap();
    storage.commit(other).unwrap();
}

/// Ids of the rows whose v lies in `lo..=hi`, read through the index on v.
fn ids_by_v(
    table: &Table,
    tx: &mut tarn_catalog::Transaction,
    lo: i64,
    hi: i64,
    lock: RowLock,
    wait: WaitPolicy,
) -> tarn_common::Result<Vec<i64>> {
    Ok(table
        .index_range_tx(
            tx,
            "by_v",
            Bound::Included(vec![int(lo)]),
            Bound::Included(vec![int(hi)]),
            lock,
            wait,
            usize::MAX,
        )?
        .into_iter()
        .map(|r| match r[0] {
            Value::Int(id) => id,
            ref other => panic!("{other:?}"),
        })
        .collect())
}

/// Runs `step` in transaction `tx` on another thread, waits until the lock manager
/// has it queued (it must not finish first), then runs `release` (which must unblock
/// it) and returns the step's result and the transaction.
fn blocks_until<T: Send + 'static>(
    storage: &Storage,
    tx: tarn_catalog::Transaction,
    step: impl FnOnce(&mut tarn_catalog::Transaction) -> tarn_common::Result<T> + Send + 'static,
    release: impl FnOnce(),
) -> (tarn_common::Result<T>, tarn_catalog::Transaction) {
    let (result, tx, waited) = release_once_waiting(storage, tx, step, release);
    assert!(waited, "the step did not wait");
    (result, tx)
}

/// Runs `step` in transaction `tx` on another thread until the lock manager has it
/// queued or it has finished, then runs `release` and returns the step's result, the
/// transaction, and whether the step waited. Nothing else in `storage` may wait for a
/// lock meanwhile. The lock wait timeout is raised to 10 s for the step, so a slow
/// machine cannot time it out before `release`; the step must wait or finish within
/// 10 s.
fn release_once_waiting<T: Send + 'static>(
    storage: &Storage,
    tx: tarn_catalog::Transaction,
    step: impl FnOnce(&mut tarn_catalog::Transaction) -> tarn_common::Result<T> + Send + 'static,
    release: impl FnOnce(),
) -> (tarn_common::Result<T>, tarn_catalog::Transaction, bool) {
    let locks = &storage.txn_context().locks;
    let timeout = locks.wait_timeout();
    locks.set_wait_timeout(std::time::Duration::from_secs(10));
    let waiter = std::thread::spawn(move || {
        let mut tx = tx;
        let result = step(&mut tx);
        (result, tx)
    });
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let waited = loop {
        if !locks.waiting_transactions().is_empty() {
            break true;
        }
        if waiter.is_finished() {
            break false;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the step neither waited nor finished within 10 s"
        );
        std::thread::sleep(std::time::Duration::from_millis(1));
    };
    release();
    let (result, tx) = waiter.join().unwrap();
    locks.set_wait_timeout(timeout);
    (result, tx, waited)
}

#[test]
fn locking_index_range_reads_lock_the_index_gaps_at_repeatable_read() {
    let (_dir, storage, t) = setup();
    let mut reader = storage.begin(Some(RepeatableRead), false);
    let read = |tx: &mut tarn_catalog::Transaction| {
        ids_by_v(&t, tx, 20, 40, RowLock::Exclusive, WaitPolicy::Wait).unwrap()
    };
    assert_eq!(read(&mut reader), vec![2, 3, 4]);
    // Next-key locks on (20,2), (30,3), (40,4) and on (50,5), the first entry past the
    // range: inserts with v in (10, 50] wait; below and above that they do not. The
    // clustered ids 100.. are in no locked clustered gap: only the index's gaps count.
    for (v, blocked) in [
        (5, false),
        (15, true),
        (25, true),
        (40, true),
        (45, true),
        (55, false),
    ] {
        let mut writer = storage.begin(Some(RepeatableRead), false);
        let result = t.insert_tx(&mut writer, vec![int(100 + v), int(v), int(0)]);
        if blocked {
            assert_eq!(
                code(result),
                1205,
                "insert with v = {v} waits for the gap lock"
            );
        } else {
            result.unwrap();
        }
        storage.rollback(writer).unwrap();
    }
    // No phantom for the locking read, and none for a consistent read either.
    assert_eq!(read(&mut reader), vec![2, 3, 4]);
    assert_eq!(
        ids_by_v(&t, &mut reader, 20, 40, RowLock::None, WaitPolicy::Wait).unwrap(),
        vec![2, 3, 4]
    );
    // A waiting insert goes ahead once the reader commits.
    let writer = storage.begin(Some(RepeatableRead), false);
    let t2 = t.clone();
    let (result, writer) = blocks_until(
        &storage,
        writer,
        move |tx| t2.insert_tx(tx, vec![int(130), int(30), int(0)]),
        || storage.commit(reader).unwrap(),
    );
    result.unwrap();
    storage.commit(writer).unwrap();
    let mut check = storage.begin(Some(RepeatableRead), false);
    assert_eq!(read(&mut check), vec![2, 3, 130, 4]);
    storage.commit(check).unwrap();

    // A range up to the end locks the index's supremum.
    let mut reader = storage.begin(Some(RepeatableRead), false);
    assert_eq!(
        ids_by_v(
            &t,
            &mut reader,
            45,
            i64::MAX,
            RowLock::Shared,
            WaitPolicy::Wait
        )
        .unwrap(),
        vec![5]
    );
    let mut writer = storage.begin(None, false);
    assert_eq!(code(t.insert_tx(&mut writer, row(1000, 1_000_000))), 1205);
    storage.rollback(writer).unwrap();
    storage.commit(reader).unwrap();

    // SERIALIZABLE makes the plain read a shared locking read, gaps included.
    let mut reader = storage.begin(Some(Serializable), false);
    assert_eq!(
        ids_by_v(&t, &mut reader, 20, 20, RowLock::None, WaitPolicy::Wait).unwrap(),
        vec![2]
    );
    let mut writer = storage.begin(None, false);
    assert_eq!(
        code(t.insert_tx(&mut writer, vec![int(120), int(20), int(0)])),
        1205
    );
    storage.rollback(writer).unwrap();
    storage.commit(reader).unwrap();
    assert!(storage.wait_for_purge(std::time::Duration::from_secs(10)));
    assert_eq!(t.verify_consistency().unwrap(), 6);
}

#[test]
fn locking_index_range_reads_take_no_gap_locks_at_read_committed() {
    let (_dir, storage, t) = setup();
    let mut reader = storage.begin(Some(ReadCommitted), false);
    assert_eq!(
        ids_by_v(
            &t,
            &mut reader,
            20,
            40,
            RowLock::Exclusive,
            WaitPolicy::Wait
        )
        .unwrap(),
        vec![2, 3, 4]
    );
    reader.end_statement();
    // Inserts into the range and next to it go ahead; the rows read stay locked.
    let mut writer = storage.begin(Some(ReadCommitted), false);
    t.insert_tx(&mut writer, vec![int(125), int(25), int(0)])
        .unwrap();
    t.insert_tx(&mut writer, vec![int(145), int(45), int(0)])
        .unwrap();
    assert_eq!(code(t.update_tx(&mut writer, &[int(3)], row(3, 31))), 1205);
    storage.commit(writer).unwrap();
    // READ COMMITTED sees the phantom in its next statement.
    assert_eq!(
        ids_by_v(
            &t,
            &mut reader,
            20,
            40,
            RowLock::Exclusive,
            WaitPolicy::Wait
        )
        .unwrap(),
        vec![2, 125, 3, 4]
    );
    storage.commit(reader).unwrap();

    // Rows it does not return are unlocked: a deleted one, a stale entry's...
    let mut deleter = storage.begin(None, false);
    t.delete_tx(&mut deleter, &[int(2)]).unwrap();
    t.update_tx(&mut deleter, &[int(4)], row(4, 400)).unwrap();
    storage.commit(deleter).unwrap();
    let mut reader = storage.begin(Some(ReadCommitted), false);
    assert_eq!(
        ids_by_v(
            &t,
            &mut reader,
            20,
            40,
            RowLock::Exclusive,
            WaitPolicy::Wait
        )
        .unwrap(),
        vec![125, 3]
    );
    let mut writer = storage.begin(None, false);
    t.insert_tx(&mut writer, row(2, 20)).unwrap();
    assert!(t.update_tx(&mut writer, &[int(4)], row(4, 401)).unwrap());
    storage.rollback(writer).unwrap();
    // ...but never the locks of its own changes.
    t.delete_tx(&mut reader, &[int(3)]).unwrap();
    assert_eq!(
        ids_by_v(
            &t,
            &mut reader,
            20,
            40,
            RowLock::Exclusive,
            WaitPolicy::Wait
        )
        .unwrap(),
        vec![125]
    );
    assert_eq!(
        ids_in(&t, &mut reader, 1, 5, RowLock::Exclusive).unwrap(),
        vec![1, 4, 5]
    );
    let mut writer = storage.begin(None, false);
    assert_eq!(code(t.insert_tx(&mut writer, row(3, 30))), 1205);
    assert_eq!(code(t.delete_tx(&mut writer, &[int(3)])), 1205);
    storage.rollback(writer).unwrap();
    storage.rollback(reader).unwrap();
    assert!(storage.wait_for_purge(std::time::Duration::from_secs(10)));
    assert_eq!(t.verify_consistency().unwrap(), 6);
}

#[test]
fn updates_moving_a_value_into_a_locked_index_range_wait() {
    let (_dir, storage, t) = setup();
    let mut reader = storage.begin(Some(RepeatableRead), false);
    assert_eq!(
        ids_by_v(
            &t,
            &mut reader,
            20,
            30,
            RowLock::Exclusive,
            WaitPolicy::Wait
        )
        .unwrap(),
        vec![2, 3]
    );
    // Locked: (20,2), (30,3) and (40,4) past the range, each with the gap before it.
    let mut writer = storage.begin(Some(RepeatableRead), false);
    // Into the range, or the gap past it: the new entry's gap is locked.
    assert_eq!(code(t.update_tx(&mut writer, &[int(5)], row(5, 25))), 1205);
    assert_eq!(code(t.update_tx(&mut writer, &[int(1)], row(1, 35))), 1205);
    // Moving the entry past the range (locked, though its row is not) away, or
    // deleting its row: the old entry is locked.
    assert_eq!(code(t.update_tx(&mut writer, &[int(4)], row(4, 70))), 1205);
    assert_eq!(code(t.delete_tx(&mut writer, &[int(4)])), 1205);
    // Elsewhere, or not changing v: free.
    assert!(t.update_tx(&mut writer, &[int(5)], row(5, 60)).unwrap());
    assert!(t.update_tx(&mut writer, &[int(1)], row(1, 5)).unwrap());
    assert!(
        t.update_tx(&mut writer, &[int(4)], vec![int(4), int(40), int(7)])
            .unwrap()
    );
    storage.rollback(writer).unwrap();
    assert_eq!(
        ids_by_v(
            &t,
            &mut reader,
            20,
            30,
            RowLock::Exclusive,
            WaitPolicy::Wait
        )
        .unwrap(),
        vec![2, 3]
    );
    // A waiting update goes ahead once the reader commits, and its row moves in.
    let writer = storage.begin(Some(RepeatableRead), false);
    let t2 = t.clone();
    let (result, writer) = blocks_until(
        &storage,
        writer,
        move |tx| t2.update_tx(tx, &[int(5)], row(5, 22)),
        || storage.commit(reader).unwrap(),
    );
    assert!(result.unwrap());
    storage.commit(writer).unwrap();
    let mut check = storage.begin(None, false);
    assert_eq!(
        ids_by_v(&t, &mut check, 20, 30, RowLock::Shared, WaitPolicy::Wait).unwrap(),
        vec![2, 5, 3]
    );
    storage.commit(check).unwrap();
    assert!(storage.wait_for_purge(std::time::Duration::from_secs(10)));
    assert_eq!(t.verify_consistency().unwrap(), 5);
}

#[test]
fn nowait_and_skip_locked_on_index_ranges() {
    let (_dir, storage, t) = setup();
    // Row 3 locked through the clustered index only.
    let mut holder = storage.begin(None, false);
    t.get_tx(&mut holder, &[int(3)], RowLock::Exclusive)
        .unwrap();
    let mut other = storage.begin(None, false);
    assert_eq!(
        code(ids_by_v(
            &t,
            &mut other,
            10,
            50,
            RowLock::Shared,
            WaitPolicy::NoWait
        )),
        3572
    );
    assert_eq!(
        ids_by_v(
            &t,
            &mut other,
            10,
            50,
            RowLock::Exclusive,
            WaitPolicy::SkipLocked
        )
        .unwrap(),
        vec![1, 2, 4, 5]
    );
    storage.commit(holder).unwrap();
    storage.commit(other).unwrap();
    // Through the index: (30,3) and, past the range, (40,4) are locked.
    let mut holder = storage.begin(Some(RepeatableRead), false);
    assert_eq!(
        ids_by_v(
            &t,
            &mut holder,
            30,
            30,
            RowLock::Exclusive,
            WaitPolicy::Wait
        )
        .unwrap(),
        vec![3]
    );
    let mut other = storage.begin(Some(RepeatableRead), false);
    assert_eq!(
        ids_by_v(
            &t,
            &mut other,
            10,
            50,
            RowLock::Exclusive,
            WaitPolicy::SkipLocked
        )
        .unwrap(),
        vec![1, 2, 5]
    );
    assert_eq!(
        code(ids_by_v(
            &t,
            &mut other,
            40,
            40,
            RowLock::Exclusive,
            WaitPolicy::NoWait
        )),
        3572
    );
    // Row 4 itself is not locked: the clustered path reads it.
    assert_eq!(
        ids_in(&t, &mut other, 4, 4, RowLock::Exclusive).unwrap(),
        vec![4]
    );
    storage.commit(other).unwrap();
    storage.commit(holder).unwrap();
}

#[test]
fn index_consistency_after_rolled_back_waits_and_changes() {
    let (_dir, storage, t) = setup();
    let mut reader = storage.begin(Some(RepeatableRead), false);
    assert_eq!(
        ids_by_v(&t, &mut reader, 20, 30, RowLock::Shared, WaitPolicy::Wait).unwrap(),
        vec![2, 3]
    );
    let mut writer = storage.begin(None, false);
    // Statements that wrote, met the gap lock, took their change back and timed out.
    t.update_tx(&mut writer, &[int(1)], row(1, 5)).unwrap();
    // (11 would be in the gap before (20,2), locked too.)
    assert_eq!(code(t.update_tx(&mut writer, &[int(1)], row(1, 11))), 1205);
    assert_eq!(code(t.update_tx(&mut writer, &[int(5)], row(5, 25))), 1205);
    assert_eq!(code(t.insert_tx(&mut writer, row(6, 35))), 1205);
    t.insert_tx(&mut writer, row(7, 70)).unwrap();
    t.delete_tx(&mut writer, &[int(5)]).unwrap();
    assert_eq!(v_of(&t, &mut writer, 5), None);
    assert_eq!(v_of(&t, &mut writer, 1), Some(5));
    storage.commit(reader).unwrap();
    storage.rollback(writer).unwrap();
    assert!(storage.wait_for_purge(std::time::Duration::from_secs(10)));
    assert_eq!(t.verify_consistency().unwrap(), 5);
    let mut check = storage.begin(None, false);
    assert_eq!(
        ids_by_v(&t, &mut check, 0, 100, RowLock::Exclusive, WaitPolicy::Wait).unwrap(),
        vec![1, 2, 3, 4, 5]
    );
    storage.commit(check).unwrap();

    // A committed mix, then purge, with a locking reader holding the entry past its
    // range: purge leaves that entry until the reader ends. A view opened before the
    // commit keeps purge from removing the entry before the reader has locked it.
    let mut writer = storage.begin(None, false);
    t.update_tx(&mut writer, &[int(4)], row(4, 44)).unwrap();
    let mut holder = storage.begin(Some(RepeatableRead), true);
    assert_eq!(v_of(&t, &mut holder, 4), Some(40));
    storage.commit(writer).unwrap();
    let mut reader = storage.begin(Some(RepeatableRead), false);
    assert_eq!(
        ids_by_v(
            &t,
            &mut reader,
            20,
            30,
            RowLock::Exclusive,
            WaitPolicy::Wait
        )
        .unwrap(),
        vec![2, 3]
    );
    // The first entry past the range is (40,4), stale: with the view gone, purge may
    // process the update, but must not remove that entry.
    storage.commit(holder).unwrap();
    assert!(!storage.wait_for_purge(std::time::Duration::from_millis(300)));
    let mut writer = storage.begin(None, false);
    assert_eq!(code(t.insert_tx(&mut writer, row(9, 38))), 1205);
    storage.rollback(writer).unwrap();
    storage.commit(reader).unwrap();
    assert!(storage.wait_for_purge(std::time::Duration::from_secs(10)));
    assert_eq!(t.verify_consistency().unwrap(), 5);
}

#[test]
fn a_transaction_sees_its_own_changes_after_its_view_opened() {
    for level in [ReadCommitted, RepeatableRead] {
        let (_dir, storage, t) = setup();
        let mut tx = storage.begin(Some(level), false);
        // The first read opens the view before the transaction has an id.
        assert_eq!(v_of(&t, &mut tx, 1), Some(10));
        t.insert_tx(&mut tx, row(6, 60)).unwrap();
        t.update_tx(&mut tx, &[int(1)], row(1, 11)).unwrap();
        assert_eq!(v_of(&t, &mut tx, 6), Some(60), "{level}");
        assert_eq!(v_of(&t, &mut tx, 1), Some(11), "{level}");
        storage.commit(tx).unwrap();
    }
}

/// An uncommitted insert whose entry a locking reader meets (inside its range, or as
/// the first entry past it) makes the reader wait; when the insert rolls back, the
/// reader locks the next entry instead, so the gap the vanished entry guarded stays
/// locked and no phantom appears.
#[test]
fn a_rolled_back_insert_leaves_no_unguarded_gap_in_a_locked_index_range() {
    for v in [25, 35] {
        let (_dir, storage, t) = setup();
        let mut inserter = storage.begin(Some(RepeatableRead), false);
        t.insert_tx(&mut inserter, row(9, v)).unwrap();
        let reader = storage.begin(Some(RepeatableRead), false);
        let t2 = t.clone();
        let (result, mut reader, waited) = release_once_waiting(
            &storage,
            reader,
            move |tx| ids_by_v(&t2, tx, 20, 30, RowLock::Exclusive, WaitPolicy::Wait),
            || storage.rollback(inserter).unwrap(),
        );
        assert_eq!(result.unwrap(), vec![2, 3], "v = {v}");
        // (10,1) .. (40,4) is locked: the gaps before (20,2), (30,3) and (40,4).
        let mut writer = storage.begin(Some(RepeatableRead), false);
        for (id, v) in [(11, 30), (12, 25), (13, 35), (14, 15)] {
            assert_eq!(
                code(t.insert_tx(&mut writer, row(id, v))),
                1205,
                "insert with v = {v} waits for the gap lock"
            );
        }
        t.insert_tx(&mut writer, row(15, 45)).unwrap();
        storage.commit(writer).unwrap();
        assert_eq!(
            ids_by_v(
                &t,
                &mut reader,
                20,
                30,
                RowLock::Exclusive,
                WaitPolicy::Wait
            )
            .unwrap(),
            vec![2, 3],
            "v = {v}: no phantom"
        );
        assert!(waited, "v = {v}: the reader waited for the insert");
        storage.commit(reader).unwrap();
        assert!(storage.wait_for_purge(std::time::Duration::from_secs(10)));
        assert_eq!(t.verify_consistency().unwrap(), 6);
    }
}

/// READ COMMITTED releases only the locks a read took anew: a row it skips keeps the
/// lock an earlier statement took on it.
#[test]
fn read_committed_keeps_an_earlier_statements_lock_on_a_skipped_row() {
    let (_dir, storage, t) = setup();
    let mut reader = storage.begin(Some(ReadCommitted), false);
    assert_eq!(v_of_locked(&t, &mut reader, 3, RowLock::Shared), Some(30));
    reader.end_statement();
    // Row 3: another transaction's shared lock makes SKIP LOCKED skip it.
    let mut other = storage.begin(Some(ReadCommitted), false);
    assert_eq!(v_of_locked(&t, &mut other, 3, RowLock::Shared), Some(30));
    assert_eq!(
        ids_by_v(
            &t,
            &mut reader,
            30,
            30,
            RowLock::Exclusive,
            WaitPolicy::SkipLocked
        )
        .unwrap(),
        Vec::<i64>::new()
    );
    storage.commit(other).unwrap();
    // The earlier statement's lock on row 3 is still held.
    let mut writer = storage.begin(None, false);
    assert_eq!(code(t.update_tx(&mut writer, &[int(3)], row(3, 31))), 1205);
    storage.rollback(writer).unwrap();
    storage.commit(reader).unwrap();
}

/// Past `PURGE_HELP_BACKLOG_TRX` queued transactions every commit runs a purge round
/// itself, and once no view holds them back those rounds (with the purge thread)
/// empty the queue.
#[test]
fn committers_help_purge_once_the_backlog_passes_its_bound() {
    let (_dir, storage, table) = setup();
    // An open view holds every later change back from purge.
    let mut reader = storage.begin(Some(RepeatableRead), true);
    assert_eq!(v_of(&table, &mut reader, 1), Some(10));
    let backlog = tarn_common::limits::PURGE_HELP_BACKLOG_TRX;
    for n in 0..backlog + 50 {
        let mut tx = storage.begin(None, false);
        assert!(
            table
                .update_tx(&mut tx, &[int(1)], row(1, n as i64))
                .unwrap()
        );
        storage.commit(tx).unwrap();
    }
    assert!(storage.txn_context().sys.purge_queued() > backlog);
    let helped = storage.purge_rounds_helped();
    assert!(helped >= 49, "{helped} rounds helped");
    // The reader still sees its snapshot: helping purges nothing a view needs.
    assert_eq!(v_of(&table, &mut reader, 1), Some(10));
    storage.commit(reader).unwrap();
    assert!(storage.wait_for_purge(std::time::Duration::from_secs(30)));
    assert_eq!(storage.txn_context().sys.purge_queued(), 0);
    table.verify_consistency().unwrap();
}

/// A change to no indexed column leaves purge nothing to remove: purge drops its undo
/// record without a lock or a log record (`UndoRecord::same_entries`), while a change
/// to an indexed column still has its old entry purged (and logged). The indexes stay
/// consistent either way.
#[test]
fn purging_a_change_to_no_indexed_column_logs_nothing() {
    let (_dir, storage, first) = setup();
    let t = storage
        .create_table(
            "db",
            TableDef::new(
                "u",
                vec![
                    Column::new("id", ColumnType::BigInt { unsigned: false }, false),
                    Column::new("k", ColumnType::BigInt { unsigned: false }, false),
                    Column::new("c", ColumnType::BigInt { unsigned: false }, false),
                ],
                &[0],
            )
            .with_index(IndexDef::new("by_k", &[1], false)),
        )
        .unwrap();
    let rows = 20;
    let mut tx = storage.begin(None, false);
    for id in 1..=rows {
        t.insert_tx(&mut tx, vec![int(id), int(id), int(0)])
            .unwrap();
    }
    storage.commit(tx).unwrap();
    assert!(storage.wait_for_purge(std::time::Duration::from_secs(10)));
    let records = || storage.txn_context().wal.stats().records;
    // An open view holds the changes back from purge until their log records are
    // counted; without it the purge thread may finish before the count.
    let hold_purge = || {
        let mut reader = storage.begin(Some(RepeatableRead), true);
        assert_eq!(v_of(&first, &mut reader, 1), Some(10));
        reader
    };
    // Only c changes.
    let reader = hold_purge();
    for round in 1..=5 {
        let mut tx = storage.begin(None, false);
        for id in 1..=rows {
            t.update_tx(&mut tx, &[int(id)], vec![int(id), int(id), int(round)])
                .unwrap();
        }
        storage.commit(tx).unwrap();
    }
    let before = records();
    assert!(storage.txn_context().sys.purge_queued() > 0);
    storage.commit(reader).unwrap();
    assert!(storage.wait_for_purge(std::time::Duration::from_secs(10)));
    assert_eq!(
        records(),
        before,
        "purge logged changes to no indexed column"
    );
    assert_eq!(t.verify_consistency().unwrap(), rows as u64);
    // k changes: each old entry is purged, with a PURGED record.
    let reader = hold_purge();
    let mut tx = storage.begin(None, false);
    for id in 1..=rows {
        t.update_tx(&mut tx, &[int(id)], vec![int(id), int(id + 100), int(9)])
            .unwrap();
    }
    storage.commit(tx).unwrap();
    let before = records();
    assert!(storage.txn_context().sys.purge_queued() > 0);
    storage.commit(reader).unwrap();
    assert!(storage.wait_for_purge(std::time::Duration::from_secs(10)));
    assert!(
        records() >= before + rows as u64,
        "purge of changed entries: {} records after {before}",
        records()
    );
    assert_eq!(t.verify_consistency().unwrap(), rows as u64);
}
