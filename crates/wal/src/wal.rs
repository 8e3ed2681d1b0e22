//! The redo log object: appends, group commit, the log writer thread, checkpoints.
//! The design and its invariants are in the crate documentation (`lib.rs`).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering, fence};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};
use tarn_common::counter::StripedCounter;
use tarn_common::limits;
use tarn_common::settings::{LogDevice, Settings};
use tarn_common::{Error, Lsn, Result};
use tarn_io::AlignedBuf;
use tarn_io::pmem::Mapping;

use crate::buffer::{LINK_WINDOW_BYTES, LogBuffer, Padded};
use crate::files::LogFiles;
use crate::format::{
    self, BASE_LSN, BLOCK_BYTES, CHECKPOINT_EXTRA_BYTES_MAX, Checkpoint, FILE_HEADER_BYTES,
    GENERATION_MASK, Geometry, RECORD_HEADER_BYTES,
};
use crate::groups::Groups;
use crate::reader::LogReader;
use crate::wait::{CondvarWaiters, ParkWaiters, Waiters};

/// A durability step (chunk) covers about this much log; the reader holds one chunk.
const CHUNK_BYTES: u64 = 4 << 20;
/// The writer's staging buffer: a chunk piece plus the partial block before it.
const STAGING_BYTES: usize = CHUNK_BYTES as usize + BLOCK_BYTES as usize;
/// How long the writer sleeps when nobody waits (it still writes what accumulated).
const WRITER_IDLE_SLEEP: Duration = Duration::from_millis(10);
/// How long the writer sleeps when a waiter is blocked by a copy in progress.
const WRITER_BUSY_SLEEP: Duration = Duration::from_micros(50);
/// How long a blocked appender sleeps before testing again.
const BLOCKED_SLEEP: Duration = Duration::from_micros(100);

/// A pmem/none committer tests its LSN at least this often, notified or not. It is
/// notified whenever the thread that unblocks it stamps; the recheck covers an
/// appender that stopped after `APPENDER_STAMP_ROUNDS` while more was pending and no
/// later append, group end or commit came to stamp it.
const INLINE_RECHECK: Duration = Duration::from_millis(10);
/// Stamping rounds an appender runs for waiting committers (it may hold page latches).
const APPENDER_STAMP_ROUNDS: u32 = 2;

/// Counters of the log since it was opened (or since [`Wal::reset_stats`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WalStats {
    /// Bytes of log appended (headers and padding included).
    pub bytes_appended: u64,
    pub records: u64,
    /// `pwrite` calls to the log files.
    pub writes: u64,
    pub bytes_written: u64,
    /// Durability steps: `fdatasync`s (fsync), durable write rounds (dsync), stamps
    /// (pmem). Zero for `none`.
    pub flushes: u64,
    /// Calls to [`Wal::commit_wait`].
    pub commit_waits: u64,
    /// Appends that had to wait for log buffer or ring space (back-pressure).
    pub append_waits: u64,
}

impl WalStats {
    /// Blocking commit waits per flush: how well group commit batches (0 with no
    /// flush). Commits acknowledged through [`Wal::commit_ready`] alone are not
    /// counted; a caller that polls counts its own commits.
    pub fn group_commit_factor(&self) -> f64 {
        if self.flushes == 0 {
            0.0
        } else {
            self.commit_waits as f64 / self.flushes as f64
        }
    }

    fn minus(&self, base: &WalStats) -> WalStats {
        WalStats {
            bytes_appended: self.bytes_appended - base.bytes_appended,
            records: self.records - base.records,
            writes: self.writes - base.writes,
            bytes_written: self.bytes_written - base.bytes_written,
            flushes: self.flushes - base.flushes,
            commit_waits: self.commit_waits - base.commit_waits,
            append_waits: self.append_waits - base.append_waits,
        }
    }
}

#[derive(Default)]
struct Counters {
    bytes_appended: StripedCounter,
    records: StripedCounter,
    commit_waits: StripedCounter,
    writes: AtomicU64,
    bytes_written: AtomicU64,
    flushes: AtomicU64,
    append_waits: AtomicU64,
}

/// State shared by appenders, waiters and the writer thread.
struct Shared {
    device: LogDevice,
    files: LogFiles,
    buffer: LogBuffer,
    groups: Groups,
    /// Committers waiting for `written` (flush_log_at_commit = 2 on file devices).
    written_waiters: Waiters,
    /// Committers and page writers waiting for `durable`.
    durable_waiters: Waiters,
    generation: u32,
    capacity_bytes: u64,
    checkpoint_trigger_bytes: u64,
    flush_log_at_commit: AtomicU32,

    /// File devices: everything below was handed to `write()`.
    written: Padded<AtomicU64>,
    /// Everything below is durable and cuts no group.
    durable: Padded<AtomicU64>,
    /// The last checkpoint LSN: log below it may be overwritten.
    checkpoint_lsn: Padded<AtomicU64>,
    /// The largest LSN a waiter wants written / durable.
    write_requested: AtomicU64,
    flush_requested: AtomicU64,

    failed: AtomicBool,
    failure: Mutex<Option<String>>,
    shutdown: AtomicBool,

    writer_lock: Mutex<()>,
    writer_wake: Condvar,
    writer_sleeping: AtomicBool,

    space_lock: Mutex<()>,
    space_freed: Condvar,
    space_waiters: AtomicUsize,

    checkpoint: Mutex<Checkpoint>,
    checkpoint_wanted: AtomicBool,
    wanted_lock: Mutex<()>,
    wanted_changed: Condvar,

    /// Inline devices (pmem, none): one thread at a time moves `durable`.
    stamp_lock: Mutex<()>,
    /// Inline devices: set by a thread that wants `durable` moved while another holds
    /// `stamp_lock`; the holder looks again after releasing it.
    advance_again: AtomicBool,
    /// Inline devices: threads in `wait_inline`. While any wait, every append and
    /// every group end tries to move `durable` once it is done, so a waiter blocked by
    /// a slower appender or an open group is released by that thread, not by a poll.
    inline_waiters: AtomicUsize,

    recovery_start: (u64, Vec<u8>),
    /// The reader bound of the checkpoint found at open (`LogReader::new`).
    recovery_loose_until: u64,
    counters: Counters,
    stats_base: Mutex<WalStats>,
    /// Called after `written` or `durable` moves ([`Wal::set_progress_hook`]).
    progress_hook: parking_lot::RwLock<Option<ProgressHook>>,
}

/// What [`Wal::set_progress_hook`] installs.
pub type ProgressHook = Arc<dyn Fn() + Send + Sync>;

/// The redo log. See the crate documentation.
pub struct Wal {
    shared: Arc<Shared>,
    writer: Option<JoinHandle<()>>,
}

/// Keeps a multi-record group open; see [`Wal::begin_multi`].
pub struct MultiGuard<'w> {
    wal: &'w Wal,
    id: u64,
}

impl Drop for MultiGuard<'_> {
    fn drop(&mut self) {
        let s = &self.wal.shared;
        s.groups
            .end(self.id, || s.buffer.reserved.load(Ordering::SeqCst));
        s.wake_writer();
        s.after_progress();
    }
}

impl Wal {
    /// Opens the log in `settings.log_dir_path()`, creating it if absent; finds the
    /// end of the valid log from the last checkpoint and continues appending there
    /// (overwriting any torn tail). An existing log keeps its file size and count.
    pub fn open(settings: &Settings) -> Result<Wal> {
        let dir = settings.log_dir_path();
        let device = settings.log_device;
        let file_size_bytes = (settings.log_file_size_bytes / BLOCK_BYTES * BLOCK_BYTES)
            .max(FILE_HEADER_BYTES + BLOCK_BYTES);
        let wanted = Geometry {
            file_size_bytes,
            file_count: settings.log_files,
            base_lsn: BASE_LSN,
        };
        let opened = LogFiles::open(&dir, wanted, device)?;
        let files = opened.files;
        let found = opened.checkpoint;

        let (end, records) = {
            let mut reader = LogReader::new(&files, found.lsn, loose_until(&found));
            while reader.next_record()?.is_some() {}
            (reader.position().0, reader.records_read())
        };
        // The log read up to `end` counts as durable from here on (pages up to it may
        // be written), but after a process crash rather than a power loss it may still
        // be only in the page cache: sync it first.
        files.sync_all()?;
        // A new generation, durable before the first append, so that a chunk written
        // by this opening can never be completed by records of an earlier one.
        let generation = (found.generation + 1) & GENERATION_MASK;
        let bumped = Checkpoint {
            sequence: found.sequence + 1,
            lsn: found.lsn,
            generation,
            complete_lsn: found.complete_lsn,
            extra: found.extra.clone(),
        };
        files.write_checkpoint(&bumped)?;

        let ring_bytes = match device {
            LogDevice::Pmem => None,
            _ => Some(settings.log_buffer_size_bytes as usize),
        };
        let buffer = LogBuffer::new(end, ring_bytes)?;
        let capacity_bytes = files.geometry.capacity_bytes();
        log_startup(
            device,
            &files,
            &dir,
            found.lsn,
            end,
            records,
            opened.created,
        );

        let tail = if files.direct {
            let from = align_down(end);
            let mut tail = vec![0u8; (end - from) as usize];
            files.read_ring(from, &mut tail)?;
            tail
        } else {
            Vec::new()
        };
        let shared = Arc::new(Shared {
            device,
            buffer,
            groups: Groups::default(),
            written_waiters: Waiters::Park(ParkWaiters::new()),
            durable_waiters: if matches!(device, LogDevice::Pmem | LogDevice::None) {
                Waiters::Condvar(CondvarWaiters::new())
            } else {
                Waiters::Park(ParkWaiters::new())
            },
            generation,
            capacity_bytes,
            checkpoint_trigger_bytes: capacity_bytes * limits::LOG_CHECKPOINT_TRIGGER_PCT / 100,
            flush_log_at_commit: AtomicU32::new(settings.flush_log_at_commit),
            written: Padded(AtomicU64::new(end)),
            durable: Padded(AtomicU64::new(end)),
            checkpoint_lsn: Padded(AtomicU64::new(found.lsn)),
            write_requested: AtomicU64::new(0),
            flush_requested: AtomicU64::new(0),
            failed: AtomicBool::new(false),
            failure: Mutex::new(None),
            shutdown: AtomicBool::new(false),
            writer_lock: Mutex::new(()),
            writer_wake: Condvar::new(),
            writer_sleeping: AtomicBool::new(false),
            space_lock: Mutex::new(()),
            space_freed: Condvar::new(),
            space_waiters: AtomicUsize::new(0),
            checkpoint: Mutex::new(bumped),
            checkpoint_wanted: AtomicBool::new(false),
            wanted_lock: Mutex::new(()),
            wanted_changed: Condvar::new(),
            stamp_lock: Mutex::new(()),
            advance_again: AtomicBool::new(false),
            inline_waiters: AtomicUsize::new(0),
            recovery_loose_until: loose_until(&found),
            recovery_start: (found.lsn, found.extra),
            counters: Counters::default(),
            stats_base: Mutex::new(WalStats::default()),
            progress_hook: parking_lot::RwLock::new(None),
            files,
        });
        let thread_shared = Arc::clone(&shared);
        let writer = std::thread::Builder::new()
            .name("tarn-log-writer".into())
            .spawn(move || writer_main(&thread_shared, tail))
            .map_err(|e| Error::io("spawn log writer", dir.clone(), e))?;
        Ok(Wal {
            shared,
            writer: Some(writer),
        })
    }

    /// Appends one record; returns its END LSN (pages it changes are stamped with it).
    /// Infallible: after a log failure the record is dropped and waits report the error.
    /// Panics if the payload exceeds `limits::LOG_RECORD_BYTES_MAX`.
    pub fn append(&self, kind: u8, payload: &[u8]) -> Lsn {
        self.append_many(&[(kind, payload)])
    }

    /// [`Wal::append`], returning the record's start LSN too (where a reader must begin
    /// to see it).
    pub fn append_range(&self, kind: u8, payload: &[u8]) -> (Lsn, Lsn) {
        let end = self.append_many(&[(kind, payload)]);
        (Lsn(end.0 - format::record_bytes(payload.len())), end)
    }

    /// Appends records in one contiguous LSN range; returns the end of the last. The
    /// total must fit in the log buffer and the link window (asserted). Callers keep
    /// records within `LOG_RECORD_BYTES_MAX`, which the smallest log buffer and ring
    /// allowed by the settings hold: page changes are bounded by the page size, and
    /// the engine refuses an undo record over it before logging (a programmer error
    /// here, never an SQL input). A caller that appends while its own transaction
    /// holds the checkpoint back must leave the ring room (see the engine's log
    /// admission), or this waits for a checkpoint that cannot come.
    pub fn append_many(&self, records: &[(u8, &[u8])]) -> Lsn {
        let s = &*self.shared;
        let total: u64 = records
            .iter()
            .map(|(_, p)| {
                assert!(
                    p.len() <= limits::LOG_RECORD_BYTES_MAX,
                    "redo record of {} bytes exceeds LOG_RECORD_BYTES_MAX",
                    p.len()
                );
                format::record_bytes(p.len())
            })
            .sum();
        assert!(
            total <= s.append_bytes_max(),
            "append_many of {total} bytes"
        );
        let start = s.buffer.reserve(total);
        let end = start + total;
        if !s.can_copy(start, end) {
            s.wait_for_space(start, end);
        }
        if !s.failed.load(Ordering::Relaxed) {
            let mut at = start;
            for (kind, payload) in records {
                let header = format::encode_header(at, *kind, s.generation, payload);
                s.put(at, &header);
                s.put(at + RECORD_HEADER_BYTES as u64, payload);
                at += format::record_bytes(payload.len());
            }
            if s.device == LogDevice::Pmem {
                Mapping::fence();
            }
        }
        s.buffer.publish(start, end);
        s.counters.bytes_appended.add(total);
        s.counters.records.add(records.len() as u64);
        s.note_used(end);
        s.after_progress();
        Lsn(end)
    }

    /// Waits as `flush_log_at_commit` says: 1 until durable >= `lsn`, 2 until written
    /// to the OS (durable on pmem and none), 0 not at all.
    pub fn commit_wait(&self, lsn: Lsn) -> Result<()> {
        let s = &*self.shared;
        s.counters.commit_waits.add(1);
        s.check_failed()?;
        match s.flush_log_at_commit.load(Ordering::Relaxed) {
            0 => Ok(()),
            2 => s.wait_written(lsn.0),
            _ => s.wait_durable(lsn.0),
        }
    }

    /// [`Wal::commit_wait`] without the wait: true if a commit whose record ends at
    /// `lsn` may be acknowledged now; otherwise asks for the write or flush it needs
    /// and returns false. A caller that serves many sessions on few threads (the
    /// server's worker pool) parks the session and polls again, or blocks in
    /// [`Wal::commit_wait`] only when it has nothing else to run.
    pub fn commit_ready(&self, lsn: Lsn) -> Result<bool> {
        let s = &*self.shared;
        s.check_failed()?;
        if s.flush_log_at_commit.load(Ordering::Relaxed) == 0 {
            return Ok(true);
        }
        if s.is_inline() {
            if s.durable.load(Ordering::Acquire) < lsn.0 {
                s.try_advance_inline();
            }
            return Ok(s.durable.load(Ordering::Acquire) >= lsn.0);
        }
        Ok(match s.flush_log_at_commit.load(Ordering::Relaxed) {
            2 => s.request(&s.written, &s.write_requested, lsn.0),
            _ => s.request(&s.durable, &s.flush_requested, lsn.0),
        })
    }

    /// Installs (or with `None` removes) a hook called each time the written or the
    /// durable frontier moves, by the thread that moved it (the log writer, or on
    /// pmem and `none` whichever committer stamped), after the frontier's waiters are
    /// notified. A caller that holds commits back without a thread waiting on each
    /// (the server's runners: [`Wal::commit_ready`] said not yet) learns here when to
    /// look again. The hook runs on the log's hot path: it must be quick and must
    /// not wait for the log.
    pub fn set_progress_hook(&self, hook: Option<ProgressHook>) {
        *self.shared.progress_hook.write() = hook;
    }

    /// Waits until the log is durable up to `lsn` (the WAL rule for page writes).
    /// Must not be called by a thread holding a [`MultiGuard`]: it could wait for
    /// itself (a group that began above `lsn` still holds durability below it when a
    /// closed group overlaps it); such a thread uses [`Wal::flush_to_nowait`].
    pub fn flush_to(&self, lsn: Lsn) -> Result<()> {
        self.shared.check_failed()?;
        self.shared.wait_durable(lsn.0)
    }

    /// Like [`Wal::flush_to`], but returns `Ok(false)` at once if an open group holds
    /// durability below `lsn` back, by starting below it or through closed groups
    /// overlapping it (see the `groups` module).
    pub fn flush_to_nowait(&self, lsn: Lsn) -> Result<bool> {
        let s = &*self.shared;
        s.check_failed()?;
        if s.durable.load(Ordering::Acquire) >= lsn.0 {
            return Ok(true);
        }
        if s.groups.open_below(lsn.0) {
            return Ok(false);
        }
        s.wait_durable(lsn.0)?;
        Ok(true)
    }

    /// The highest LSN durability can reach without waiting for a group still open:
    /// the start of the oldest open group, or the end of the last reservation.
    pub fn flushable_lsn(&self) -> Lsn {
        let s = &self.shared;
        Lsn(s.groups.limit(s.buffer.reserved.load(Ordering::SeqCst)))
    }

    /// Opens a multi-record group: no crash can keep a prefix of the log that ends
    /// strictly inside it. Call before the group's first append; dropping the guard
    /// ends the group.
    pub fn begin_multi(&self) -> MultiGuard<'_> {
        let s = &self.shared;
        let id = s.groups.begin(|| s.buffer.reserved.load(Ordering::SeqCst));
        MultiGuard { wal: self, id }
    }

    /// The end of the last reservation (the LSN the next record starts at).
    pub fn current_lsn(&self) -> Lsn {
        Lsn(self.shared.buffer.reserved.load(Ordering::SeqCst))
    }

    /// Everything below is durable (on `none`: copied into the log buffer).
    pub fn durable_lsn(&self) -> Lsn {
        Lsn(self.shared.durable.load(Ordering::Acquire))
    }

    /// Everything below has been written to the OS (file devices).
    pub fn written_lsn(&self) -> Lsn {
        let s = &self.shared;
        match s.device {
            LogDevice::Pmem => self.durable_lsn(),
            _ => Lsn(s.written.load(Ordering::Acquire)),
        }
    }

    /// The checkpoint recovery starts from, and its `extra` blob, as found at open.
    pub fn recovery_start(&self) -> (Lsn, Vec<u8>) {
        let (lsn, extra) = &self.shared.recovery_start;
        (Lsn(*lsn), extra.clone())
    }

    /// Reads the valid records from `lsn` (a record boundary, normally the recovery
    /// start). Reading never writes.
    pub fn read_from(&self, lsn: Lsn) -> Result<LogReader<'_>> {
        let g = &self.shared.files.geometry;
        if lsn.0 < g.base_lsn || !(lsn.0 - g.base_lsn).is_multiple_of(format::RECORD_ALIGN_BYTES) {
            return Err(Error::CorruptData(format!(
                "redo log read from LSN {lsn}, which is not a record position"
            )));
        }
        Ok(LogReader::new(
            &self.shared.files,
            lsn.0,
            self.shared.recovery_loose_until,
        ))
    }

    /// Writes checkpoint `lsn` (a record boundary; the log is flushed to it first)
    /// with the transaction layer's `extra` (at most 1 KiB), and syncs it. Log below
    /// `lsn` becomes reusable.
    pub fn write_checkpoint(&self, lsn: Lsn, extra: &[u8]) -> Result<()> {
        let s = &*self.shared;
        if extra.len() > CHECKPOINT_EXTRA_BYTES_MAX {
            return Err(Error::OutOfResources(format!(
                "checkpoint extra of {} bytes exceeds {CHECKPOINT_EXTRA_BYTES_MAX}",
                extra.len()
            )));
        }
        s.check_failed()?;
        s.wait_durable(lsn.0)?;
        let mut state = s.checkpoint.lock();
        if lsn.0 < state.lsn {
            return Err(Error::CorruptData(format!(
                "checkpoint LSN {lsn} is below the previous checkpoint {}",
                state.lsn
            )));
        }
        let next = Checkpoint {
            sequence: state.sequence + 1,
            lsn: lsn.0,
            generation: s.generation,
            // Whole chunks are on disk up to the durable LSN (a chunk end); the next
            // reader must not take loose records past it (format docs). `none` keeps
            // no such promise: no bound.
            complete_lsn: match s.device {
                LogDevice::None => 0,
                _ => s.durable.load(Ordering::Acquire),
            },
            extra: extra.to_vec(),
        };
        if let Err(e) = s.files.write_checkpoint(&next) {
            s.fail(&e);
            return s.check_failed();
        }
        *state = next;
        drop(state);
        s.checkpoint_lsn.fetch_max(lsn.0, Ordering::AcqRel);
        let used =
            s.buffer.reserved.load(Ordering::SeqCst) - s.checkpoint_lsn.load(Ordering::Acquire);
        if used < s.checkpoint_trigger_bytes {
            s.checkpoint_wanted.store(false, Ordering::Release);
        }
        s.notify_space();
        Ok(())
    }

    /// The last checkpoint LSN written (or found at open).
    pub fn checkpoint_lsn(&self) -> Lsn {
        Lsn(self.shared.checkpoint_lsn.load(Ordering::Acquire))
    }

    /// Bytes of log space in the ring (all files).
    pub fn log_capacity_bytes(&self) -> u64 {
        self.shared.capacity_bytes
    }

    /// Bytes reserved since the last checkpoint (what recovery would read).
    pub fn log_used_bytes(&self) -> u64 {
        let s = &self.shared;
        s.buffer.reserved.load(Ordering::SeqCst) - s.checkpoint_lsn.load(Ordering::Acquire)
    }

    /// Bytes that can be appended before appends block for a checkpoint.
    pub fn log_free_bytes(&self) -> u64 {
        self.shared
            .capacity_bytes
            .saturating_sub(self.log_used_bytes())
    }

    /// True once the log since the checkpoint fills `LOG_CHECKPOINT_TRIGGER_PCT` of
    /// the ring (or an append is blocked for space).
    pub fn checkpoint_wanted(&self) -> bool {
        self.shared.checkpoint_wanted.load(Ordering::Acquire)
    }

    /// Blocks up to `timeout` for [`Wal::checkpoint_wanted`]; returns its value.
    pub fn wait_checkpoint_wanted(&self, timeout: Duration) -> bool {
        let s = &self.shared;
        let mut guard = s.wanted_lock.lock();
        if !s.checkpoint_wanted.load(Ordering::Acquire) {
            s.wanted_changed.wait_for(&mut guard, timeout);
        }
        s.checkpoint_wanted.load(Ordering::Acquire)
    }

    /// `flush_log_at_commit` as it is now.
    pub fn flush_log_at_commit(&self) -> u32 {
        self.shared.flush_log_at_commit.load(Ordering::Relaxed)
    }

    /// Changes `flush_log_at_commit` (0, 1 or 2) at run time.
    pub fn set_flush_log_at_commit(&self, value: u32) {
        assert!(value <= 2, "flush_log_at_commit is 0, 1 or 2");
        self.shared
            .flush_log_at_commit
            .store(value, Ordering::Relaxed);
    }

    pub fn device(&self) -> LogDevice {
        self.shared.device
    }

    /// True if the `dsync` device got `O_DIRECT` (block-aligned writes).
    pub fn uses_direct_io(&self) -> bool {
        self.shared.files.direct
    }

    /// Stops the log for good because of a failure elsewhere that a retry could turn
    /// into silent data loss (a data file's write or fsync during a checkpoint): every
    /// later commit and flush fails with `WritesStopped` naming `reason`.
    pub fn stop(&self, reason: &str) {
        let s = &*self.shared;
        tracing::error!("{reason}; writes are stopped");
        {
            let mut failure = s.failure.lock();
            if failure.is_none() {
                *failure = Some(reason.to_string());
            }
        }
        s.failed.store(true, Ordering::Release);
        s.notify_all_waiters();
        s.notify_space();
        s.wake_writer_now();
    }

    /// The error that stopped the log, if any.
    pub fn failure(&self) -> Option<String> {
        self.shared.failure.lock().clone()
    }

    pub fn stats(&self) -> WalStats {
        self.shared
            .raw_stats()
            .minus(&self.shared.stats_base.lock())
    }

    pub fn reset_stats(&self) {
        *self.shared.stats_base.lock() = self.shared.raw_stats();
    }

    /// Writes and (device permitting) makes durable everything appended, stops the
    /// writer, and reports a log failure if there was one.
    pub fn close(mut self) -> Result<()> {
        self.stop_writer();
        self.shared.check_failed()
    }

    fn stop_writer(&mut self) {
        if let Some(writer) = self.writer.take() {
            self.shared.shutdown.store(true, Ordering::SeqCst);
            self.shared.wake_writer_now();
            if writer.join().is_err() {
                tracing::error!("the redo log writer thread panicked");
            }
        }
    }

    /// Checks the internal invariants (tests call this between steps).
    pub fn check_invariants(&self) {
        let s = &self.shared;
        let durable = s.durable.load(Ordering::Acquire);
        let written = s.written.load(Ordering::Acquire);
        let copied = s.buffer.copied.load(Ordering::Acquire);
        let reserved = s.buffer.reserved.load(Ordering::SeqCst);
        let checkpoint = s.checkpoint_lsn.load(Ordering::Acquire);
        assert!(copied <= reserved, "copied {copied} > reserved {reserved}");
        assert!(
            checkpoint <= durable,
            "checkpoint {checkpoint} > durable {durable}"
        );
        match s.device {
            LogDevice::Fsync | LogDevice::Dsync => {
                assert!(durable <= written && written <= copied);
            }
            LogDevice::None => assert!(written <= copied && durable <= copied),
            LogDevice::Pmem => assert!(durable <= copied),
        }
    }
}

impl Drop for Wal {
    fn drop(&mut self) {
        self.stop_writer();
    }
}

fn log_startup(
    device: LogDevice,
    files: &LogFiles,
    dir: &std::path::Path,
    checkpoint: u64,
    end: u64,
    records: u64,
    created: bool,
) {
    if device == LogDevice::None {
        tracing::warn!(
            "log_device = none: the redo log is never synced; commits are NOT durable and \
             a crash can lose or corrupt data. UNSAFE: for measurement only"
        );
    }
    if device == LogDevice::Pmem && !files.is_map_sync() {
        tracing::warn!(
            dir = %dir.display(),
            "log_device = pmem on a file system without MAP_SYNC (tmpfs or page cache): \
             persistence is only emulated"
        );
    }
    tracing::info!(
        dir = %dir.display(),
        %device,
        direct = files.direct,
        flush = Mapping::flush_method(),
        created,
        checkpoint_lsn = checkpoint,
        end_lsn = end,
        records_after_checkpoint = records,
        "redo log open"
    );
}

/// The reader bound of checkpoint `c`: its complete LSN, or none if it has none.
fn loose_until(c: &Checkpoint) -> u64 {
    if c.complete_lsn == 0 {
        u64::MAX
    } else {
        c.complete_lsn
    }
}

fn align_down(lsn: u64) -> u64 {
    lsn / BLOCK_BYTES * BLOCK_BYTES
}

impl Shared {
    fn raw_stats(&self) -> WalStats {
        let c = &self.counters;
        WalStats {
            bytes_appended: c.bytes_appended.get(),
            records: c.records.get(),
            writes: c.writes.load(Ordering::Relaxed),
            bytes_written: c.bytes_written.load(Ordering::Relaxed),
            flushes: c.flushes.load(Ordering::Relaxed),
            commit_waits: c.commit_waits.get(),
            append_waits: c.append_waits.load(Ordering::Relaxed),
        }
    }

    fn is_inline(&self) -> bool {
        matches!(self.device, LogDevice::Pmem | LogDevice::None)
    }

    /// The largest single reservation: it must fit the ring buffer, the link window
    /// and a quarter of the ring.
    fn append_bytes_max(&self) -> u64 {
        let mut max = LINK_WINDOW_BYTES.min(self.capacity_bytes / 4);
        if self.device != LogDevice::Pmem {
            max = max.min(self.buffer.ring_bytes());
        }
        max
    }

    fn check_failed(&self) -> Result<()> {
        if !self.failed.load(Ordering::Acquire) {
            return Ok(());
        }
        let message = self
            .failure
            .lock()
            .clone()
            .unwrap_or_else(|| "the redo log failed".into());
        Err(Error::WritesStopped(message))
    }

    /// Stops the log for good after a failed write or sync: an fsync is never retried
    /// (after a failure the kernel may have dropped the dirty pages, so a retry that
    /// succeeds would report data durable that is not).
    fn fail(&self, error: &Error) {
        let message = format!("redo log write or sync failed: {error}");
        tracing::error!("{message}; writes are stopped");
        {
            let mut failure = self.failure.lock();
            if failure.is_none() {
                *failure = Some(message);
            }
        }
        self.failed.store(true, Ordering::Release);
        self.notify_all_waiters();
        self.notify_space();
        self.wake_writer_now();
        // Held commits learn of the failure as waiters do.
        self.after_frontier_moved();
    }

    /// True if `[start, end)` may be copied now: the ring holds no unreclaimed log
    /// there, the log buffer has room, and the link slot is free.
    #[inline]
    fn can_copy(&self, start: u64, end: u64) -> bool {
        if end > self.checkpoint_lsn.load(Ordering::Acquire) + self.capacity_bytes {
            return false;
        }
        if self.device != LogDevice::Pmem
            && end > self.written.load(Ordering::Acquire) + self.buffer.ring_bytes()
        {
            return false;
        }
        self.buffer.link_ready(start)
    }

    /// Back-pressure: waits until `[start, end)` may be copied (or the log failed).
    fn wait_for_space(&self, start: u64, end: u64) {
        self.counters.append_waits.fetch_add(1, Ordering::Relaxed);
        self.space_waiters.fetch_add(1, Ordering::SeqCst);
        let mut warned_at = Instant::now();
        loop {
            if self.failed.load(Ordering::Acquire) {
                break;
            }
            self.buffer.advance_copied();
            if self.can_copy(start, end) {
                break;
            }
            if end > self.checkpoint_lsn.load(Ordering::Acquire) + self.capacity_bytes {
                self.want_checkpoint();
                if warned_at.elapsed() > Duration::from_secs(10) {
                    tracing::warn!("redo log full: appends wait for a checkpoint");
                    warned_at = Instant::now();
                }
            }
            self.wake_writer_now();
            let mut guard = self.space_lock.lock();
            if !self.can_copy(start, end) && !self.failed.load(Ordering::Acquire) {
                self.space_freed.wait_for(&mut guard, BLOCKED_SLEEP);
            }
        }
        self.space_waiters.fetch_sub(1, Ordering::SeqCst);
    }

    /// Runs the progress hook, if one is installed ([`Wal::set_progress_hook`]).
    fn after_frontier_moved(&self) {
        // The frontier's store must be visible before the hook's caller reads its own
        // state (whether anything waits), as that caller makes its waiting entry
        // visible before it tests the frontier: else each could miss the other.
        fence(Ordering::SeqCst);
        if let Some(hook) = &*self.progress_hook.read() {
            hook();
        }
    }

    fn notify_all_waiters(&self) {
        self.written_waiters.notify_all();
        self.durable_waiters.notify_all();
    }

    fn notify_space(&self) {
        if self.space_waiters.load(Ordering::SeqCst) > 0 {
            let _guard = self.space_lock.lock();
            self.space_freed.notify_all();
        }
    }

    #[inline]
    fn note_used(&self, end: u64) {
        if end - self.checkpoint_lsn.load(Ordering::Acquire) >= self.checkpoint_trigger_bytes
            && !self.checkpoint_wanted.load(Ordering::Relaxed)
        {
            self.want_checkpoint();
        }
    }

    fn want_checkpoint(&self) {
        if !self.checkpoint_wanted.swap(true, Ordering::AcqRel) {
            let _guard = self.wanted_lock.lock();
            self.wanted_changed.notify_all();
        }
    }

    #[inline]
    fn put(&self, lsn: u64, bytes: &[u8]) {
        if self.device == LogDevice::Pmem {
            self.files.pmem_put(lsn, bytes);
        } else {
            self.buffer.ring_put(lsn, bytes);
        }
    }

    /// Reads copied log bytes (ring buffer, or the mapped files on pmem).
    fn get(&self, lsn: u64, out: &mut [u8]) {
        if self.device == LogDevice::Pmem {
            self.files.pmem_get(lsn, out);
        } else {
            self.buffer.ring_get(lsn, out);
        }
    }

    /// Wakes the writer if it sleeps (after a waiter raised a request).
    fn wake_writer(&self) {
        if self.writer_sleeping.load(Ordering::SeqCst) {
            self.wake_writer_now();
        }
    }

    fn wake_writer_now(&self) {
        let _guard = self.writer_lock.lock();
        self.writer_wake.notify_one();
    }

    fn wait_written(&self, lsn: u64) -> Result<()> {
        if self.is_inline() {
            return self.wait_inline(lsn);
        }
        if self.request(&self.written, &self.write_requested, lsn) {
            return Ok(());
        }
        self.written_waiters
            .wait(lsn, || self.reached(&self.written, lsn))
    }

    fn wait_durable(&self, lsn: u64) -> Result<()> {
        if self.is_inline() {
            return self.wait_inline(lsn);
        }
        if self.request(&self.durable, &self.flush_requested, lsn) {
            return Ok(());
        }
        self.durable_waiters
            .wait(lsn, || self.reached(&self.durable, lsn))
    }

    /// File devices: true if `frontier` has reached `lsn`; otherwise raises the request
    /// for it and wakes the writer.
    fn request(&self, frontier: &AtomicU64, requested: &AtomicU64, lsn: u64) -> bool {
        if frontier.load(Ordering::Acquire) >= lsn {
            return true;
        }
        requested.fetch_max(lsn, Ordering::SeqCst);
        self.wake_writer();
        false
    }

    fn reached(&self, frontier: &AtomicU64, lsn: u64) -> Option<Result<()>> {
        if self.failed.load(Ordering::Acquire) {
            Some(self.check_failed())
        } else if frontier.load(Ordering::Acquire) >= lsn {
            Some(Ok(()))
        } else {
            None
        }
    }

    /// pmem and none: the waiter moves the durable LSN itself (no writer hop).
    ///
    /// One thread at a time stamps, for everyone; the others sleep until the frontier
    /// passes them. They neither queue on the stamp lock nor poll: with more
    /// committers than cores, a queue on a lock whose holder is preempted is a convoy,
    /// and a poll every few hundred microseconds by hundreds of threads is a herd that
    /// left no CPU for the work (`none` fell from 200k to 3k commits/s at 256 clients).
    /// Whatever blocks a waiter (an earlier appender still copying, an open group, the
    /// stamper itself) moves the frontier when it finishes: see
    /// [`Shared::try_advance_inline`].
    fn wait_inline(&self, lsn: u64) -> Result<()> {
        self.check_failed()?;
        if self.durable.load(Ordering::Acquire) >= lsn {
            return Ok(());
        }
        self.inline_waiters.fetch_add(1, Ordering::SeqCst);
        let result = loop {
            self.try_advance_inline();
            if let Some(result) = self
                .durable_waiters
                .wait_at_most(lsn, INLINE_RECHECK, || self.reached(&self.durable, lsn))
            {
                break result;
            }
        };
        self.inline_waiters.fetch_sub(1, Ordering::SeqCst);
        result
    }

    /// Inline devices: after an append or a group end, moves `durable` if someone
    /// waits for it. Appenders may hold page latches: they stamp for at most
    /// `APPENDER_STAMP_ROUNDS` rounds, and leave any further request to the waiters.
    fn after_progress(&self) {
        if !self.is_inline() {
            return;
        }
        // The caller's publish (a release store) must be visible before it reads the
        // waiter count, as the waiter's count must be before it reads the links: else
        // each could miss the other (a store-buffer race) and the waiter would sleep
        // until its recheck.
        fence(Ordering::SeqCst);
        if self.inline_waiters.load(Ordering::SeqCst) > 0 {
            self.try_advance_inline_rounds(APPENDER_STAMP_ROUNDS);
        }
    }

    /// Moves `durable` as far as it can go now, unless another thread holds the stamp
    /// lock: that thread then looks again after releasing it (`advance_again`), so
    /// progress made visible before this call is never left unstamped.
    fn try_advance_inline(&self) {
        self.try_advance_inline_rounds(u32::MAX);
    }

    /// [`Shared::try_advance_inline`], looking again at most `rounds` times.
    fn try_advance_inline_rounds(&self, rounds: u32) {
        self.advance_again.store(true, Ordering::SeqCst);
        // The flag must be visible before `try_lock` reads the lock word (a relaxed
        // load on some platforms), for the same store-buffer reason.
        fence(Ordering::SeqCst);
        for _ in 0..rounds {
            if !self.advance_again.load(Ordering::SeqCst) {
                return;
            }
            let Some(_stamper) = self.stamp_lock.try_lock() else {
                return;
            };
            self.advance_again.store(false, Ordering::SeqCst);
            self.advance_inline_locked();
        }
    }

    /// pmem and none: moves `durable` to the group-safe copied frontier, stamping each
    /// chunk on pmem (a store and a cache-line flush; no system call). The caller
    /// holds the stamp lock.
    fn advance_inline_locked(&self) {
        loop {
            let copied = self.buffer.advance_copied();
            let frontier = self.groups.limit(copied);
            let durable = self.durable.load(Ordering::Acquire);
            if frontier <= durable {
                return;
            }
            let chunk_end = if self.device == LogDevice::Pmem {
                let chunk_end = self.chunk_end(durable, frontier);
                let (end_bytes, check_bytes) = format::chunk_stamp(durable, chunk_end);
                self.files.pmem_put(durable + 8, &end_bytes);
                self.files.pmem_put(durable + 28, &check_bytes);
                Mapping::fence();
                self.counters.flushes.fetch_add(1, Ordering::Relaxed);
                chunk_end
            } else {
                frontier
            };
            self.durable.store(chunk_end, Ordering::Release);
            if self.device == LogDevice::Pmem {
                self.groups.prune(chunk_end);
            }
            self.durable_waiters.notify_range(durable, chunk_end);
            self.notify_space();
            self.after_frontier_moved();
        }
    }

    /// The end of the next chunk starting at `from` towards the group-safe `frontier`:
    /// `frontier` itself if within `CHUNK_BYTES`, else the first record boundary past
    /// `from + CHUNK_BYTES`, lowered so it cuts no group.
    fn chunk_end(&self, from: u64, frontier: u64) -> u64 {
        if frontier - from <= CHUNK_BYTES {
            return frontier;
        }
        let mut at = from;
        let mut header = [0u8; RECORD_HEADER_BYTES];
        while at < frontier && at - from < CHUNK_BYTES {
            self.get(at, &mut header);
            let payload_bytes = u32::from_le_bytes(header[16..20].try_into().expect("4 bytes"));
            at += format::record_bytes(payload_bytes as usize);
        }
        let lowered = self.groups.lower(at.min(frontier));
        if lowered > from { lowered } else { frontier }
    }

    fn demand(&self) -> (u64, u64) {
        (
            self.write_requested.load(Ordering::SeqCst),
            self.flush_requested.load(Ordering::SeqCst),
        )
    }

    fn demand_pending(&self) -> bool {
        let (write, flush) = self.demand();
        write > self.written.load(Ordering::Acquire) || flush > self.durable.load(Ordering::Acquire)
    }
}

/// The writer's private state.
struct Writer {
    staging: AlignedBuf,
    /// With O_DIRECT: the bytes of the last partial block, `[align_down(written), written)`.
    tail: Vec<u8>,
    last_sync: Instant,
}

fn writer_main(s: &Shared, tail: Vec<u8>) {
    let mut w = Writer {
        staging: AlignedBuf::zeroed(STAGING_BYTES),
        tail,
        last_sync: Instant::now(),
    };
    let background = Duration::from_millis(limits::LOG_BACKGROUND_FLUSH_INTERVAL_MS);
    loop {
        let shutdown = s.shutdown.load(Ordering::SeqCst);
        let demand = s.demand();
        let progressed = if s.failed.load(Ordering::Acquire) {
            false
        } else if s.device == LogDevice::Pmem {
            s.try_advance_inline();
            false
        } else {
            match write_step(s, &mut w, shutdown, background) {
                Ok(progressed) => progressed,
                Err(e) => {
                    s.fail(&e);
                    false
                }
            }
        };
        if shutdown && (s.failed.load(Ordering::Acquire) || drained(s)) {
            s.written_waiters.wake_handed_off();
            s.durable_waiters.wake_handed_off();
            return;
        }
        if !progressed {
            writer_sleep(s, demand);
        }
    }
}

/// True when everything appended is written and, as far as the device allows, durable.
fn drained(s: &Shared) -> bool {
    let reserved = s.buffer.reserved.load(Ordering::SeqCst);
    match s.device {
        LogDevice::Pmem => s.durable.load(Ordering::Acquire) >= reserved,
        LogDevice::None => s.written.load(Ordering::Acquire) >= reserved,
        LogDevice::Fsync | LogDevice::Dsync => s.durable.load(Ordering::Acquire) >= reserved,
    }
}

fn writer_sleep(s: &Shared, demand_seen: (u64, u64)) {
    s.written_waiters.wake_handed_off();
    s.durable_waiters.wake_handed_off();
    let mut guard = s.writer_lock.lock();
    s.writer_sleeping.store(true, Ordering::SeqCst);
    let demand = s.demand();
    if demand == demand_seen && !s.shutdown.load(Ordering::SeqCst) {
        let timeout = if s.demand_pending() {
            WRITER_BUSY_SLEEP
        } else {
            WRITER_IDLE_SLEEP
        };
        s.writer_wake.wait_for(&mut guard, timeout);
    }
    s.writer_sleeping.store(false, Ordering::SeqCst);
}

/// One round of the writer on a file device: write the group-safe copied prefix in
/// chunks, then sync if someone waits for durability or the background interval ran
/// out. Returns true if anything moved.
fn write_step(s: &Shared, w: &mut Writer, shutdown: bool, background: Duration) -> Result<bool> {
    let copied = s.buffer.advance_copied();
    let frontier = s.groups.limit(copied);
    let written = s.written.load(Ordering::Acquire);
    let mut progressed = false;
    if frontier > written {
        let mut at = written;
        while at < frontier {
            let chunk_end = s.chunk_end(at, frontier);
            write_chunk(s, w, at, chunk_end)?;
            at = chunk_end;
        }
        s.written.store(frontier, Ordering::Release);
        s.groups.prune(frontier);
        s.written_waiters.notify_range(written, frontier);
        if s.device == LogDevice::Dsync {
            s.durable.store(frontier, Ordering::Release);
            s.counters.flushes.fetch_add(1, Ordering::Relaxed);
            s.durable_waiters.notify_range(written, frontier);
        }
        s.notify_space();
        progressed = true;
    }
    if s.device == LogDevice::Fsync {
        let written = s.written.load(Ordering::Acquire);
        let durable = s.durable.load(Ordering::Acquire);
        let wanted = s.flush_requested.load(Ordering::SeqCst) > durable
            || shutdown
            || w.last_sync.elapsed() >= background;
        if written > durable && wanted {
            s.files.sync_dirty()?;
            w.last_sync = Instant::now();
            s.counters.flushes.fetch_add(1, Ordering::Relaxed);
            s.durable.store(written, Ordering::Release);
            s.durable_waiters.notify_range(durable, written);
            progressed = true;
        }
    }
    if progressed {
        s.after_frontier_moved();
    }
    Ok(progressed)
}

/// Writes the chunk `[from, to)` from the log buffer through the staging buffer,
/// stamping its first record with `to`. With O_DIRECT every write is block-aligned:
/// the partial block before `from` (already written) is written again from `tail`.
fn write_chunk(s: &Shared, w: &mut Writer, from: u64, to: u64) -> Result<()> {
    let direct = s.files.direct;
    let mut at = from;
    while at < to {
        let block_start = if direct { align_down(at) } else { at };
        let before = (at - block_start) as usize;
        debug_assert!(!direct || before == w.tail.len());
        let staging = &mut w.staging[..];
        staging[..before].copy_from_slice(&w.tail[..before]);
        let n = ((to - at) as usize).min(STAGING_BYTES - before);
        let n = if direct && at + (n as u64) < to {
            // Intermediate pieces end on a block boundary.
            (align_down(at + n as u64) - at) as usize
        } else {
            n
        };
        s.buffer.ring_get(at, &mut staging[before..before + n]);
        if at == from {
            let (end_bytes, check_bytes) = format::chunk_stamp(from, to);
            staging[before + 8..before + 16].copy_from_slice(&end_bytes);
            staging[before + 28..before + 32].copy_from_slice(&check_bytes);
        }
        let filled = before + n;
        let length = if direct {
            (filled as u64).next_multiple_of(BLOCK_BYTES) as usize
        } else {
            filled
        };
        staging[filled..length].fill(0);
        s.files.write_ring(block_start, &staging[..length])?;
        s.counters.writes.fetch_add(1, Ordering::Relaxed);
        s.counters
            .bytes_written
            .fetch_add(n as u64, Ordering::Relaxed);
        at += n as u64;
        if direct {
            let tail_start = (align_down(at) - block_start) as usize;
            w.tail.clear();
            w.tail.extend_from_slice(&staging[tail_start..filled]);
        }
    }
    Ok(())
}
