//! The buffer pool: instances, fetch, prefetch, write-back and the background flusher.
//!
//! # How a fetch finds its page
//!
//! 1. [`PoolInner::instance_of`] hashes the page id to one instance.
//! 2. The instance's page table is searched without a latch. On a hit, the frame is
//!    pinned ([`Frame::try_pin`]), the thread waits if a read is filling it, takes the
//!    page latch, and [`Instance::touch`] applies the LRU policy.
//! 3. On a miss, [`PoolInner::free_frame`] takes a frame from the free list or evicts
//!    the least recently used clean page (writing back a dirty one first if that is all
//!    there is), [`Instance::reserve`] installs the page id (confirming the miss under
//!    the page-table latch), and the page is read into the frame on the path the data
//!    directory uses and verified by the I/O layer.
//!
//! # Invariants
//! 1. A page is in at most one frame of one instance, and the page table, the frame's
//!    page id and the LRU list agree ([`BufferPool::check_invariants`]).
//! 2. A pinned frame is never evicted; a frame whose page is being read or written is
//!    never evicted.
//! 3. A dirty page is written back before its frame is reused, and only after
//!    [`LogFlush::flush_to`] made the log durable up to the page's newest LSN.
//! 4. At most `prefetch_in_flight_max` prefetch reads are in flight.
//! 5. A page is read from disk at most once at a time: a fetch of a page whose read is
//!    in flight waits for that read.
//! 6. With doublewrite on, every in-place page write (eviction's `write_back_one` and
//!    the batches of `write_back_batch`, which serve the flusher and checkpoints) is
//!    preceded by a durable copy in the doublewrite file ([`crate::doublewrite`]).
//! 7. A dirty page is on its instance's flush list or, from the moment it is marked
//!    clean for a write until that write finishes, in `writes_in_flight`; so
//!    [`BufferPool::oldest_dirty_lsn`] never passes a change that is not on disk.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

use tarn_common::counter::StripedCounter;
use tarn_common::latch::{LatchSnapshot, LatchStats};
use tarn_common::limits::{FLUSH_BATCH_PAGES_MAX, LRU_SCAN_DEPTH_MAX, OPTIMISTIC_READ_RETRIES_MAX};
use tarn_common::settings::{Settings, buffer_pool_frames_per_instance};
use tarn_common::{Error, Lsn, PageId, PageNo, Result};
use tarn_io::{
    AlignedBuf, CompletionQueue, DataDir, IoBuf, IoCompletion, IoDone, IoRequest, PageFile,
    PageStatus, PageType, SyncKind, page,
};

use crate::doublewrite::Doublewrite;
use crate::frame::{Frame, IO_READING, NO_PAGE};
use crate::guard::{OptimisticPage, PageReadGuard, PageWriteGuard};
use crate::instance::{Instance, Reservation};

/// The write-ahead-log rule's hook: before a dirty page is written, the log must be
/// durable up to the page's newest LSN. The WAL implements this; until it exists,
/// [`NoLog`] does nothing.
pub trait LogFlush: Send + Sync {
    fn flush_to(&self, lsn: Lsn) -> Result<()>;

    /// Like [`LogFlush::flush_to`], for eviction ([`PoolInner::free_frame`]), whose
    /// thread may hold latches the log writer waits for: `Ok(false)` means the log
    /// cannot be made durable up to `lsn` without waiting on something this thread may
    /// hold, and the pool skips that victim (not an error). The default waits.
    fn flush_to_nowait(&self, lsn: Lsn) -> Result<bool> {
        self.flush_to(lsn).map(|()| true)
    }

    /// The highest LSN the log can make durable without waiting for a multi-record
    /// group still open (whose thread may be waiting for a frame this pool would free
    /// by writing pages). Batch writes skip pages changed above it. The default: no
    /// limit.
    fn flushable_lsn(&self) -> Lsn {
        Lsn(u64::MAX)
    }
}

/// A [`LogFlush`] for a pool without a log.
pub struct NoLog;

impl LogFlush for NoLog {
    fn flush_to(&self, _lsn: Lsn) -> Result<()> {
        Ok(())
    }
}

/// The buffer pool's settings.
#[derive(Clone, Debug)]
pub struct PoolConfig {
    pub size_bytes: u64,
    pub instances: u32,
    pub old_pct: u32,
    pub old_blocks_time_ms: u32,
    pub free_target_pct: u32,
    pub optimistic_reads: bool,
    pub prefetch_in_flight_max: u32,
    /// Write pages to the doublewrite file (and sync it) before writing them in place.
    pub doublewrite: bool,
}

impl PoolConfig {
    pub fn from_settings(settings: &Settings) -> Self {
        PoolConfig {
            size_bytes: settings.buffer_pool_size_bytes,
            instances: settings.buffer_pool_instances,
            old_pct: settings.buffer_pool_old_pct,
            old_blocks_time_ms: settings.buffer_pool_old_blocks_time_ms,
            free_target_pct: settings.buffer_pool_free_target_pct,
            optimistic_reads: settings.buffer_pool_optimistic_reads,
            prefetch_in_flight_max: settings.prefetch_in_flight_max,
            doublewrite: settings.doublewrite,
        }
    }
}

#[derive(Default)]
struct Counters {
    fetches: StripedCounter,
    optimistic_reads: StripedCounter,
    misses: AtomicU64,
    io_waits: AtomicU64,
    optimistic_retries: AtomicU64,
    prefetch_requested: AtomicU64,
    prefetch_issued: AtomicU64,
    prefetch_cached: AtomicU64,
    prefetch_skipped: AtomicU64,
    prefetch_failed: AtomicU64,
    prefetch_in_flight_peak: AtomicU64,
    page_writes: AtomicU64,
    evictions: AtomicU64,
}

/// A snapshot of the pool's counters and occupancy.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct PoolStats {
    /// Page accesses (fetches and optimistic reads).
    pub fetches: u64,
    /// Accesses that found the page in the pool (or already being read).
    pub hits: u64,
    /// Accesses that read the page from disk themselves.
    pub misses: u64,
    /// Accesses that waited for a read already in flight (e.g. a prefetch).
    pub io_waits: u64,
    pub optimistic_reads: u64,
    pub optimistic_retries: u64,
    pub prefetch_requested: u64,
    pub prefetch_issued: u64,
    pub prefetch_cached: u64,
    pub prefetch_skipped: u64,
    pub prefetch_failed: u64,
    /// The most prefetch reads ever in flight at once.
    pub prefetch_in_flight_peak: u64,
    /// Disk reads: misses plus prefetch reads.
    pub page_reads: u64,
    pub page_writes: u64,
    /// Page copies written to the doublewrite file.
    pub doublewrite_pages: u64,
    /// Syncs of the doublewrite file (one per doublewrite batch).
    pub doublewrite_syncs: u64,
    pub evictions: u64,
    pub frames: u64,
    pub free_frames: u64,
    pub dirty_pages: u64,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum LatchMode {
    Shared,
    Exclusive,
}

/// Accesses to a frame that is being evicted or re-read are retried; this many
/// attempts (with back-off) before a fetch gives up on a free frame.
const FREE_FRAME_ATTEMPTS: u32 = 20_000;

pub(crate) struct PoolInner {
    config: PoolConfig,
    datadir: Arc<DataDir>,
    wal: Arc<dyn LogFlush>,
    instances: Box<[Instance]>,
    page_size_bytes: usize,
    epoch: Instant,
    /// `config.old_pct` and `config.old_blocks_time_ms` as they are now: `SET GLOBAL`
    /// changes them while the pool runs.
    old_pct: AtomicU32,
    old_blocks_time_ms: AtomicU32,
    counters: Counters,
    prefetch_in_flight: AtomicU32,
    flusher: Mutex<FlusherState>,
    flusher_wake: Condvar,
    /// Held by the flusher while it works, and by `check_invariants` to pause it.
    flusher_round: Mutex<()>,
    write_batches: Mutex<usize>,
    write_batches_done: Condvar,
    /// Checks a page's structure after every read from disk (set once by the layer
    /// that owns the page formats).
    validator: OnceLock<Arc<PageValidator>>,
    /// The doublewrite file, if `config.doublewrite`.
    doublewrite: Option<Doublewrite>,
    /// Oldest-change LSNs (with counts) of pages marked clean whose writes are not
    /// finished: they are on no flush list, yet not on disk.
    writes_in_flight: Mutex<BTreeMap<Lsn, u32>>,
}

/// A page copy to write in place.
struct PageWrite {
    file: Arc<PageFile>,
    page_no: PageNo,
    buffer: AlignedBuf,
}

/// What [`PoolInner::write_in_place`] did: per page, whether it is written, and the
/// first error.
struct WriteOutcome {
    written: Vec<bool>,
    first_error: Option<Error>,
}

/// Checks the structure of a page just read and checksum-verified; returns what is
/// wrong. Pages are changed only by Tarn's own code once in memory, so checking them
/// on the way in is enough to turn a bad page on disk into an error naming it.
pub type PageValidator = dyn Fn(&[u8]) -> std::result::Result<(), String> + Send + Sync;

#[derive(Default)]
struct FlusherState {
    shutting_down: bool,
    wake_requested: bool,
}

/// The buffer pool. Dropping it stops the flusher; dirty pages are not written (call
/// [`BufferPool::flush_all`] first to keep them).
pub struct BufferPool {
    inner: Arc<PoolInner>,
    flusher: Option<JoinHandle<()>>,
}

#[inline]
fn mix64(value: u64) -> u64 {
    let mut z = value.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn backoff(attempt: &mut u32) {
    *attempt += 1;
    if *attempt < 16 {
        std::hint::spin_loop();
    } else if *attempt < 128 {
        std::thread::yield_now();
    } else {
        std::thread::sleep(Duration::from_micros(100));
    }
}

impl BufferPool {
    /// Creates the pool over `datadir` and starts its background flusher.
    pub fn open(
        config: PoolConfig,
        datadir: Arc<DataDir>,
        wal: Arc<dyn LogFlush>,
    ) -> Result<BufferPool> {
        let page_size_bytes = datadir.page_size_bytes();
        let frames = buffer_pool_frames_per_instance(
            config.size_bytes,
            page_size_bytes as u32,
            config.instances,
        )?;
        let instances: Box<[Instance]> = (0..config.instances)
            .map(|index| {
                Instance::new(
                    index,
                    frames,
                    page_size_bytes,
                    config.old_pct,
                    datadir.latches(),
                )
            })
            .collect();
        let doublewrite = if config.doublewrite {
            Some(Doublewrite::open(&datadir)?)
        } else {
            None
        };
        for instance in instances.iter() {
            datadir.engine().register_arena(&instance.arena);
        }
        let inner = Arc::new(PoolInner {
            old_pct: AtomicU32::new(config.old_pct),
            old_blocks_time_ms: AtomicU32::new(config.old_blocks_time_ms),
            config,
            datadir,
            wal,
            instances,
            page_size_bytes,
            epoch: Instant::now(),
            counters: Counters::default(),
            prefetch_in_flight: AtomicU32::new(0),
            flusher: Mutex::new(FlusherState::default()),
            flusher_wake: Condvar::new(),
            flusher_round: Mutex::new(()),
            write_batches: Mutex::new(0),
            write_batches_done: Condvar::new(),
            validator: OnceLock::new(),
            doublewrite,
            writes_in_flight: Mutex::new(BTreeMap::new()),
        });
        let background = inner.clone();
        let flusher = std::thread::Builder::new()
            .name("tarn-flusher".into())
            .spawn(move || background.run_flusher())
            .map_err(|e| Error::OutOfResources(format!("cannot start the flusher thread: {e}")))?;
        Ok(BufferPool {
            inner,
            flusher: Some(flusher),
        })
    }

    /// The configuration the pool was opened with (`old_pct` and
    /// `old_blocks_time_ms` may have changed since: [`BufferPool::old_pct`]).
    pub fn config(&self) -> &PoolConfig {
        &self.inner.config
    }

    /// The old sublist's share of each instance's LRU list, in percent, now.
    pub fn old_pct(&self) -> u32 {
        self.inner.old_pct.load(Ordering::Relaxed)
    }

    /// Changes the old sublist's share (`buffer_pool_old_pct`, 5 to 95) in every
    /// instance; a smaller young sublist demotes its last pages at once.
    pub fn set_old_pct(&self, old_pct: u32) {
        assert!(
            (tarn_common::limits::LRU_OLD_PCT_MIN..=tarn_common::limits::LRU_OLD_PCT_MAX)
                .contains(&old_pct),
            "old_pct {old_pct} outside its domain"
        );
        self.inner.old_pct.store(old_pct, Ordering::Relaxed);
        for instance in &self.inner.instances {
            instance
                .lru
                .lock()
                .set_old_pct(instance.frame_count(), old_pct, &instance.hints);
        }
    }

    /// How long a page stays in the old sublist before an access promotes it, now.
    pub fn old_blocks_time_ms(&self) -> u32 {
        self.inner.old_blocks_time_ms.load(Ordering::Relaxed)
    }

    /// Changes `buffer_pool_old_blocks_time`; later accesses use the new value.
    pub fn set_old_blocks_time_ms(&self, old_blocks_time_ms: u32) {
        self.inner
            .old_blocks_time_ms
            .store(old_blocks_time_ms, Ordering::Relaxed);
    }

    pub fn datadir(&self) -> &Arc<DataDir> {
        &self.inner.datadir
    }

    pub fn page_size_bytes(&self) -> usize {
        self.inner.page_size_bytes
    }

    /// Sets the structural check run on every page read from disk (once per pool;
    /// later calls are ignored and return false).
    pub fn set_validator(&self, validator: Arc<PageValidator>) -> bool {
        self.inner.validator.set(validator).is_ok()
    }

    /// The instance a page belongs to.
    pub fn instance_index(&self, page_id: PageId) -> u32 {
        self.inner.instance_of(page_id).index
    }

    /// The page under a shared latch, read from disk if needed.
    pub fn fetch_shared(&self, page_id: PageId) -> Result<PageReadGuard<'_>> {
        self.fetch_shared_as(page_id, None)
    }

    /// [`Self::fetch_shared`], with waits for the page latch recorded in `latch_stats`
    /// (a layer's own latch class, such as the B+tree's) instead of `buffer.page`.
    pub fn fetch_shared_as(
        &self,
        page_id: PageId,
        latch_stats: Option<&LatchStats>,
    ) -> Result<PageReadGuard<'_>> {
        let (instance, frame) = self
            .inner
            .fetch(page_id, LatchMode::Shared, true, latch_stats)?;
        Ok(PageReadGuard {
            instance,
            frame,
            page_id,
        })
    }

    /// The page under an exclusive latch, read from disk if needed.
    pub fn fetch_exclusive(&self, page_id: PageId) -> Result<PageWriteGuard<'_>> {
        self.fetch_exclusive_as(page_id, None)
    }

    /// [`Self::fetch_exclusive`], with page latch waits recorded in `latch_stats`.
    pub fn fetch_exclusive_as(
        &self,
        page_id: PageId,
        latch_stats: Option<&LatchStats>,
    ) -> Result<PageWriteGuard<'_>> {
        let (instance, frame) =
            self.inner
                .fetch(page_id, LatchMode::Exclusive, true, latch_stats)?;
        Ok(PageWriteGuard {
            instance,
            frame,
            page_id,
        })
    }

    /// A new page of `page_type`, zeroed apart from its header, under an exclusive
    /// latch, without reading the disk. The file grows to hold it. The caller must
    /// `mark_dirty` it for it to be written.
    pub fn create_page(&self, page_id: PageId, page_type: PageType) -> Result<PageWriteGuard<'_>> {
        let file = self.inner.datadir.file(page_id.file_id)?;
        file.ensure_page_count(u64::from(page_id.page_no.0) + 1)?;
        let inner = &self.inner;
        let instance = inner.instance_of(page_id);
        let mut attempt = 0;
        loop {
            if instance.table.get(page_id).is_some() {
                let mut guard = self.fetch_exclusive(page_id)?;
                page::init(&mut guard, page_id, page_type);
                return Ok(guard);
            }
            let frame = inner.free_frame(instance)?;
            match instance.reserve(frame, page_id) {
                Reservation::AlreadyPresent => backoff(&mut attempt),
                Reservation::Reserved(frame) => {
                    instance.page_latch_stats.record_uncontended();
                    let mut guard = PageWriteGuard {
                        instance,
                        frame,
                        page_id,
                    };
                    page::init(&mut guard, page_id, page_type);
                    instance
                        .frame(frame)
                        .first_access_ms
                        .store(inner.now_ms(), Ordering::Relaxed);
                    instance.frame(frame).finish_read();
                    return Ok(guard);
                }
            }
        }
    }

    /// Reads a page without taking its latch: `read` runs on a view of the page and its
    /// result is kept only if no writer touched the page meanwhile; otherwise it runs
    /// again, and after a few failures once more under a shared latch. `read` must
    /// therefore tolerate inconsistent bytes (never index with them unchecked).
    /// With `optimistic_reads` off this is a shared-latch read.
    pub fn read_optimistic<T>(
        &self,
        page_id: PageId,
        mut read: impl FnMut(&OptimisticPage<'_>) -> T,
    ) -> Result<T> {
        let inner = &self.inner;
        if inner.config.optimistic_reads {
            inner.counters.fetches.add(1);
            if let Some(value) = inner.try_read_optimistic(page_id, &mut read) {
                return Ok(value);
            }
        }
        let (instance, frame) = inner.fetch(
            page_id,
            LatchMode::Shared,
            !inner.config.optimistic_reads,
            None,
        )?;
        let guard = PageReadGuard {
            instance,
            frame,
            page_id,
        };
        // SAFETY: the guard pins and shared-latches the frame for the view's lifetime.
        let view = unsafe { OptimisticPage::new(guard.as_ptr(), guard.len()) };
        Ok(read(&view))
    }

    /// Starts reading `pages` into the pool and returns, once the reads are queued to
    /// the device, with the number of reads started. Pages already cached or in flight cost a lock-free lookup;
    /// pages beyond the in-flight bound, past the end of their file, or for which no
    /// clean frame is free are skipped (a later fetch reads them).
    pub fn prefetch(&self, pages: &[PageId]) -> usize {
        let inner = &self.inner;
        let mut sorted: Vec<PageId> = pages.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        let mut requests = Vec::with_capacity(sorted.len());
        for page_id in sorted {
            inner
                .counters
                .prefetch_requested
                .fetch_add(1, Ordering::Relaxed);
            match inner.start_prefetch(page_id) {
                Some(request) => requests.push(request),
                None => continue,
            }
        }
        let started = requests.len();
        if started > 0 {
            let sink: Arc<dyn IoCompletion> = inner.clone();
            inner.datadir.engine().submit(requests, &sink);
        }
        started
    }

    /// Writes back every page whose oldest unwritten change is at or below `lsn`, waits
    /// for those writes, and syncs the data files (a checkpoint's page flush). It takes
    /// shared latches on dirty pages, so the calling thread must hold no page guard.
    pub fn flush_up_to(&self, lsn: Lsn) -> Result<()> {
        self.inner.flush_up_to(lsn)
    }

    /// The oldest change not yet written back: the smallest oldest-change LSN over the
    /// instances' flush lists and the writes still in flight (a page is marked clean
    /// when its write starts). `None` if every page is clean. A checkpoint may move
    /// past everything below it once the data files are synced.
    pub fn oldest_dirty_lsn(&self) -> Option<Lsn> {
        self.inner.oldest_dirty_lsn()
    }

    /// Writes back every dirty page and syncs the data files.
    pub fn flush_all(&self) -> Result<()> {
        self.inner.flush_up_to(Lsn(u64::MAX))
    }

    /// Drops every cached page of `file_id` without writing it back, for a file about
    /// to be deleted. The caller guarantees nothing uses the file any more.
    pub fn discard_file(&self, file_id: tarn_common::FileId) -> Result<usize> {
        let _paused = self.inner.flusher_round.lock();
        let mut dropped = 0;
        for instance in self.inner.instances.iter() {
            dropped += instance.discard_file(file_id).ok_or_else(|| {
                Error::OutOfResources(format!(
                    "pages of file {} stayed pinned while the file was dropped",
                    file_id.0
                ))
            })?;
        }
        Ok(dropped)
    }

    /// True if the page is in the pool now.
    pub fn is_resident(&self, page_id: PageId) -> bool {
        let instance = self.inner.instance_of(page_id);
        instance
            .table
            .get(page_id)
            .is_some_and(|frame| instance.frame(frame).holds(page_id))
    }

    pub fn stats(&self) -> PoolStats {
        self.inner.stats()
    }

    /// The latch accounting snapshot of the engine this pool belongs to.
    pub fn latch_snapshot(&self) -> Vec<LatchSnapshot> {
        self.inner.datadir.latches().snapshot()
    }

    /// Checks every instance's invariants. Call only while no other thread uses the
    /// pool; returns the first violation found.
    pub fn check_invariants(&self) -> Result<(), String> {
        let _paused = self.inner.flusher_round.lock();
        self.inner.wait_for_prefetches();
        self.inner
            .instances
            .iter()
            .try_for_each(|instance| instance.check_invariants())
    }
}

impl Drop for BufferPool {
    fn drop(&mut self) {
        {
            let mut state = self.inner.flusher.lock();
            state.shutting_down = true;
        }
        self.inner.flusher_wake.notify_all();
        if let Some(flusher) = self.flusher.take() {
            let _ = flusher.join();
        }
        for instance in self.inner.instances.iter() {
            self.inner
                .datadir
                .engine()
                .unregister_arena(&instance.arena);
        }
        // Prefetches still in flight need no waiting: each holds the pool's state (and
        // its frame arena) alive through its completion sink until it completes.
    }
}

impl PoolInner {
    #[inline]
    fn instance_of(&self, page_id: PageId) -> &Instance {
        let count = self.instances.len() as u128;
        let index = (u128::from(mix64(page_id.to_u64())) * count) >> 64;
        &self.instances[index as usize]
    }

    #[inline]
    fn now_ms(&self) -> u64 {
        self.epoch.elapsed().as_millis() as u64 + 1
    }

    #[inline]
    fn touch(&self, instance: &Instance, frame: u32) {
        instance.touch(
            frame,
            || self.now_ms(),
            u64::from(self.old_blocks_time_ms.load(Ordering::Relaxed)),
        );
    }

    fn lock(&self, frame: &Frame, mode: LatchMode, latch_stats: &LatchStats) {
        match mode {
            LatchMode::Shared => frame.latch.lock_shared(latch_stats),
            LatchMode::Exclusive => frame.latch.lock_exclusive(latch_stats),
        }
    }

    fn unlock(frame: &Frame, mode: LatchMode) {
        match mode {
            LatchMode::Shared => frame.latch.unlock_shared(),
            LatchMode::Exclusive => frame.latch.unlock_exclusive(),
        }
    }

    /// Finds or reads the page; returns its instance and frame, pinned and latched.
    fn fetch(
        &self,
        page_id: PageId,
        mode: LatchMode,
        count: bool,
        latch_stats: Option<&LatchStats>,
    ) -> Result<(&Instance, u32)> {
        let instance = self.instance_of(page_id);
        let latch_stats = latch_stats.unwrap_or(&instance.page_latch_stats);
        if count {
            self.counters.fetches.add(1);
        }
        let mut attempt = 0;
        loop {
            if let Some(index) = instance.table.get(page_id) {
                let frame = instance.frame(index);
                if frame.try_pin(page_id) {
                    if frame.io.load(Ordering::Acquire) == IO_READING {
                        self.counters.io_waits.fetch_add(1, Ordering::Relaxed);
                        let started = instance.io_wait_stats.begin_wait();
                        frame.wait_for_read();
                        instance.io_wait_stats.record_contended(started);
                    }
                    self.lock(frame, mode, latch_stats);
                    if frame.holds(page_id) {
                        self.touch(instance, index);
                        return Ok((instance, index));
                    }
                    // The read failed, or the frame was reused; look again.
                    Self::unlock(frame, mode);
                    frame.unpin();
                }
                backoff(&mut attempt);
                continue;
            }
            let free = self.free_frame(instance)?;
            let Reservation::Reserved(index) = instance.reserve(free, page_id) else {
                continue;
            };
            self.counters.misses.fetch_add(1, Ordering::Relaxed);
            latch_stats.record_uncontended();
            let frame = instance.frame(index);
            if let Err(error) = self.read_into_frame(instance, index, page_id) {
                instance.abort_read(index, page_id);
                return Err(error);
            }
            frame
                .first_access_ms
                .store(self.now_ms(), Ordering::Relaxed);
            frame.finish_read();
            if mode == LatchMode::Shared {
                frame.latch.downgrade();
            }
            return Ok((instance, index));
        }
    }

    /// Reads `page_id` into a reserved frame (exclusively latched by the caller).
    fn read_into_frame(&self, instance: &Instance, frame: u32, page_id: PageId) -> Result<()> {
        let file = self.datadir.file(page_id.file_id)?;
        // SAFETY: the frame is reserved for this read and exclusively latched by the
        // caller, so no other thread reads or writes its bytes.
        let bytes = unsafe {
            std::slice::from_raw_parts_mut(instance.page_ptr(frame), self.page_size_bytes)
        };
        match file.read_page(page_id.page_no, bytes)? {
            PageStatus::Valid => self.validate(bytes, page_id),
            PageStatus::Unwritten => Err(Error::PageNeverWritten {
                file: file.path().to_path_buf(),
                page_id,
            }),
        }
    }

    fn validate(&self, bytes: &[u8], page_id: PageId) -> Result<()> {
        match self.validator.get() {
            Some(validator) => validator(bytes).map_err(|reason| Error::PageCorrupt {
                file: self.datadir.file_path(page_id.file_id),
                page_id,
                reason,
            }),
            None => Ok(()),
        }
    }

    /// A free frame of `instance`, evicting (and if need be writing back) a page.
    fn free_frame(&self, instance: &Instance) -> Result<u32> {
        let mut attempt = 0;
        while attempt < FREE_FRAME_ATTEMPTS {
            let mut evictions = 0;
            let outcome = instance.take_free_frame(&mut evictions);
            self.counters
                .evictions
                .fetch_add(evictions, Ordering::Relaxed);
            match outcome {
                Ok(Some(frame)) => {
                    if evictions > 0 {
                        self.wake_flusher();
                    }
                    return Ok(frame);
                }
                Ok(None) => {
                    self.wake_flusher();
                    backoff(&mut attempt);
                }
                Err(dirty) => {
                    self.wake_flusher();
                    let mut written = 0;
                    for frame in dirty {
                        written += usize::from(self.write_back_one(instance, frame)?);
                    }
                    // Pages latched by others, or dirty again while a write of an
                    // older copy is in flight, cannot be written now: wait as for a
                    // pinned frame instead of spinning through the attempts.
                    if written == 0 {
                        backoff(&mut attempt);
                    } else {
                        attempt += 1;
                    }
                }
            }
        }
        Err(Error::OutOfResources(format!(
            "buffer pool instance {} has no frame to reuse: all {} frames are pinned or busy",
            instance.index,
            instance.frame_count()
        )))
    }

    /// Writes back one dirty page in place, under its exclusive latch, if it is free
    /// to latch and the log can be made durable up to its LSN without waiting on
    /// something this thread may hold ([`LogFlush::flush_to_nowait`]); otherwise does
    /// nothing (another victim will do).
    fn write_back_one(&self, instance: &Instance, index: u32) -> Result<bool> {
        let frame = instance.frame(index);
        if !frame.latch.try_lock_exclusive() {
            return Ok(false);
        }
        let result = (|| {
            let page = frame.page_id.load(Ordering::Acquire);
            if page == NO_PAGE || !frame.is_dirty() || frame.write_pending.load(Ordering::Acquire) {
                return Ok(false);
            }
            let page_id = PageId::from_u64(page);
            if !self.wal.flush_to_nowait(frame.newest_lsn())? {
                return Ok(false);
            }
            let file = self.datadir.file(page_id.file_id)?;
            // SAFETY: the exclusive latch makes this thread the only accessor.
            let bytes = unsafe {
                std::slice::from_raw_parts_mut(instance.page_ptr(index), self.page_size_bytes)
            };
            let oldest = self.mark_clean_for_write(instance, index);
            let written = self.write_frame_in_place(&file, page_id, bytes);
            self.write_finished(instance, index, oldest, written.is_ok());
            written?;
            self.counters.page_writes.fetch_add(1, Ordering::Relaxed);
            Ok(true)
        })();
        frame.latch.unlock_exclusive();
        result
    }

    /// Writes one exclusively latched frame's page in place, through the doublewrite
    /// file first when it is on.
    fn write_frame_in_place(
        &self,
        file: &Arc<PageFile>,
        page_id: PageId,
        bytes: &mut [u8],
    ) -> Result<()> {
        let Some(doublewrite) = &self.doublewrite else {
            return file.write_page(page_id.page_no, bytes);
        };
        page::seal(bytes, page_id);
        let batch = doublewrite.begin(&[bytes])?;
        file.write_page(page_id.page_no, bytes)?;
        batch.finish(std::slice::from_ref(file))
    }

    /// Copies the dirty pages among `frames` (under shared latches) and writes the
    /// copies in one asynchronous batch (one per doublewrite batch when doublewrite is
    /// on), after making the log durable up to their newest LSN. Pages are marked clean
    /// when copied and dirty again if their write fails. With `wait_for_latch` false,
    /// pages whose latch is taken are skipped.
    fn write_back_batch(
        &self,
        instance: &Instance,
        frames: &[u32],
        wait_for_latch: bool,
    ) -> Result<usize> {
        struct Copy {
            frame: u32,
            page_id: PageId,
            oldest: Lsn,
        }
        let mut copies: Vec<Copy> = Vec::with_capacity(frames.len());
        let mut buffers: Vec<AlignedBuf> = Vec::with_capacity(frames.len());
        let mut newest = Lsn::ZERO;
        let flushable = self.wal.flushable_lsn();
        for &index in frames {
            let frame = instance.frame(index);
            let page = frame.page_id.load(Ordering::Acquire);
            if page == NO_PAGE
                || frame.write_pending.load(Ordering::Acquire)
                || frame.newest_lsn() > flushable
            {
                continue;
            }
            let page_id = PageId::from_u64(page);
            if !frame.try_pin(page_id) {
                continue;
            }
            if wait_for_latch {
                frame.latch.lock_shared(&instance.page_latch_stats);
            } else if !frame.latch.try_lock_shared() {
                frame.unpin();
                continue;
            }
            if frame.holds(page_id)
                && frame.is_dirty()
                && !frame.write_pending.load(Ordering::Acquire)
            {
                let mut buffer = AlignedBuf::zeroed(self.page_size_bytes);
                // SAFETY: the shared latch excludes writers while the page is copied.
                buffer.copy_from_slice(unsafe {
                    std::slice::from_raw_parts(instance.page_ptr(index), self.page_size_bytes)
                });
                frame.write_pending.store(true, Ordering::Release);
                newest = newest.max(frame.newest_lsn());
                copies.push(Copy {
                    frame: index,
                    page_id,
                    oldest: self.mark_clean_for_write(instance, index),
                });
                buffers.push(buffer);
            }
            frame.latch.unlock_shared();
            frame.unpin();
        }
        if copies.is_empty() {
            return Ok(0);
        }
        let finish = |copy: &Copy, written: bool| {
            self.write_finished(instance, copy.frame, copy.oldest, written);
            instance
                .frame(copy.frame)
                .write_pending
                .store(false, Ordering::Release);
        };
        let prepared = self.wal.flush_to(newest).and_then(|()| {
            copies
                .iter()
                .zip(buffers)
                .map(|(copy, buffer)| {
                    Ok(PageWrite {
                        file: self.datadir.file(copy.page_id.file_id)?,
                        page_no: copy.page_id.page_no,
                        buffer,
                    })
                })
                .collect::<Result<Vec<PageWrite>>>()
        });
        let writes = match prepared {
            Ok(writes) => writes,
            Err(error) => {
                copies.iter().for_each(|copy| finish(copy, false));
                return Err(error);
            }
        };
        *self.write_batches.lock() += 1;
        let outcome = self.write_in_place(writes);
        for (copy, &written) in copies.iter().zip(&outcome.written) {
            finish(copy, written);
        }
        let written = outcome.written.iter().filter(|&&written| written).count();
        self.counters
            .page_writes
            .fetch_add(written as u64, Ordering::Relaxed);
        {
            let mut batches = self.write_batches.lock();
            *batches -= 1;
            if *batches == 0 {
                self.write_batches_done.notify_all();
            }
        }
        outcome.first_error.map_or(Ok(written), Err)
    }

    /// Writes `writes` in place as asynchronous batches and reports each page's
    /// outcome, in order. With doublewrite on, each batch of at most a slot group's
    /// pages is sealed and made durable in the doublewrite file first, and its data
    /// files are synced before its slots are released.
    fn write_in_place(&self, mut writes: Vec<PageWrite>) -> WriteOutcome {
        let mut outcome = WriteOutcome {
            written: vec![false; writes.len()],
            first_error: None,
        };
        let batch_pages = self
            .doublewrite
            .as_ref()
            .map_or(writes.len().max(1), Doublewrite::slots_per_group);
        let mut first_index = 0;
        while !writes.is_empty() {
            let rest = writes.split_off(batch_pages.min(writes.len()));
            let batch = std::mem::replace(&mut writes, rest);
            let count = batch.len();
            self.write_one_batch(batch, first_index, &mut outcome);
            first_index += count;
        }
        outcome
    }

    /// One batch of [`PoolInner::write_in_place`]; `first_index` is the index of its
    /// first page in `outcome`.
    fn write_one_batch(
        &self,
        mut writes: Vec<PageWrite>,
        first_index: usize,
        outcome: &mut WriteOutcome,
    ) {
        let count = writes.len();
        let doublewrite_batch = match &self.doublewrite {
            None => None,
            Some(doublewrite) => {
                for write in &mut writes {
                    let page_id = write.file.page_id(write.page_no);
                    page::seal(&mut write.buffer, page_id);
                }
                let images: Vec<&[u8]> = writes.iter().map(|write| &write.buffer[..]).collect();
                match doublewrite.begin(&images) {
                    Ok(batch) => Some(batch),
                    Err(error) => {
                        outcome.first_error.get_or_insert(error);
                        return;
                    }
                }
            }
        };
        let files: Vec<Arc<PageFile>> = writes.iter().map(|write| write.file.clone()).collect();
        let requests = writes
            .into_iter()
            .enumerate()
            .map(|(offset, write)| {
                IoRequest::write(
                    write.file,
                    write.page_no,
                    IoBuf::Owned(write.buffer),
                    (first_index + offset) as u64,
                )
            })
            .collect();
        let queue = CompletionQueue::new();
        self.datadir.engine().submit(requests, &queue.sink());
        let mut done: Vec<IoDone> = Vec::with_capacity(count);
        while done.len() < count {
            queue.wait(1, &mut done);
        }
        for completion in done {
            match completion.result {
                Ok(_) => outcome.written[completion.request.tag as usize] = true,
                Err(error) => {
                    outcome.first_error.get_or_insert(error);
                }
            }
        }
        if let Some(batch) = doublewrite_batch {
            // Until the data files are synced the pages in place are not durable, and
            // their slots are about to be reused: count them as not written (they stay
            // dirty and are written again).
            if let Err(error) = batch.finish(&files) {
                outcome.written[first_index..first_index + count].fill(false);
                outcome.first_error.get_or_insert(error);
            }
        }
    }

    /// Marks a frame clean for a write that is about to start, recording its oldest
    /// change as in flight until [`PoolInner::write_finished`], so that
    /// [`BufferPool::oldest_dirty_lsn`] never passes a page whose write is not done.
    fn mark_clean_for_write(&self, instance: &Instance, index: u32) -> Lsn {
        // Under the in-flight latch, so that `oldest_dirty_lsn` sees the page on the
        // flush list or in flight, never in neither.
        let mut in_flight = self.writes_in_flight.lock();
        let oldest = instance.mark_clean(index);
        if oldest != Lsn::ZERO {
            *in_flight.entry(oldest).or_insert(0) += 1;
        }
        oldest
    }

    /// Ends what [`PoolInner::mark_clean_for_write`] began: the frame stays clean if it
    /// was `written`, or goes back on the flush list.
    fn write_finished(&self, instance: &Instance, index: u32, oldest: Lsn, written: bool) {
        let mut in_flight = self.writes_in_flight.lock();
        if !written {
            instance.mark_dirty_again(index, oldest);
        }
        if oldest == Lsn::ZERO {
            return;
        }
        let count = in_flight
            .get_mut(&oldest)
            .expect("a write in flight is recorded before it is finished");
        *count -= 1;
        if *count == 0 {
            in_flight.remove(&oldest);
        }
    }

    fn oldest_dirty_lsn(&self) -> Option<Lsn> {
        // Pages move between a flush list and the in-flight set only under the
        // in-flight latch, so holding it makes the two reads one snapshot.
        let in_flight = self.writes_in_flight.lock();
        self.instances
            .iter()
            .filter_map(|instance| {
                instance
                    .flush_list
                    .lock()
                    .iter()
                    .next()
                    .map(|&(oldest, _)| oldest)
            })
            .chain(in_flight.keys().next().copied())
            .min()
    }

    fn flush_up_to(&self, lsn: Lsn) -> Result<()> {
        loop {
            let mut pending = false;
            for instance in self.instances.iter() {
                let batch: Vec<u32> = instance
                    .flush_list
                    .lock()
                    .iter()
                    .take_while(|(oldest, _)| *oldest <= lsn)
                    .map(|&(_, frame)| frame)
                    .take(FLUSH_BATCH_PAGES_MAX)
                    .collect();
                if !batch.is_empty() {
                    pending = true;
                    self.write_back_batch(instance, &batch, true)?;
                }
            }
            if !pending {
                break;
            }
        }
        // Copies taken by the flusher before this call may still be in flight.
        let mut batches = self.write_batches.lock();
        while *batches > 0 {
            self.write_batches_done.wait(&mut batches);
        }
        drop(batches);
        self.datadir.sync_all(SyncKind::Data)
    }

    fn try_read_optimistic<T>(
        &self,
        page_id: PageId,
        read: &mut impl FnMut(&OptimisticPage<'_>) -> T,
    ) -> Option<T> {
        let instance = self.instance_of(page_id);
        let mut first_failure: Option<Instant> = None;
        for _ in 0..OPTIMISTIC_READ_RETRIES_MAX {
            let index = instance.table.get(page_id)?;
            let frame = instance.frame(index);
            let Some(version) = frame.latch.optimistic_begin() else {
                first_failure.get_or_insert_with(Instant::now);
                std::hint::spin_loop();
                continue;
            };
            if !frame.holds(page_id) || frame.io.load(Ordering::Acquire) == IO_READING {
                break;
            }
            // SAFETY: frames live as long as the pool; a concurrent writer or eviction
            // can make the bytes inconsistent, which validation below detects.
            let view =
                unsafe { OptimisticPage::new(instance.page_ptr(index), self.page_size_bytes) };
            let value = read(&view);
            if frame.latch.optimistic_validate(version) {
                match first_failure {
                    None => instance.optimistic_stats.record_uncontended(),
                    Some(started) => instance.optimistic_stats.record_contended(Some(started)),
                }
                self.counters.optimistic_reads.add(1);
                self.touch(instance, index);
                return Some(value);
            }
            self.counters
                .optimistic_retries
                .fetch_add(1, Ordering::Relaxed);
            first_failure.get_or_insert_with(Instant::now);
        }
        if let Some(started) = first_failure {
            instance.optimistic_stats.record_contended(Some(started));
        }
        None
    }

    /// Reserves a frame for a prefetch of `page_id` and builds its read request, or
    /// returns `None` (cached, in flight, over the bound, or no clean frame free).
    fn start_prefetch(&self, page_id: PageId) -> Option<IoRequest> {
        let counters = &self.counters;
        let instance = self.instance_of(page_id);
        if instance
            .table
            .get(page_id)
            .is_some_and(|frame| instance.frame(frame).holds(page_id))
        {
            counters.prefetch_cached.fetch_add(1, Ordering::Relaxed);
            return None;
        }
        let max = self.config.prefetch_in_flight_max;
        match self
            .prefetch_in_flight
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < max).then_some(n + 1)
            }) {
            Ok(previous) => {
                counters
                    .prefetch_in_flight_peak
                    .fetch_max(u64::from(previous) + 1, Ordering::Relaxed);
            }
            Err(_) => {
                counters.prefetch_skipped.fetch_add(1, Ordering::Relaxed);
                return None;
            }
        }
        let skip = || {
            self.prefetch_in_flight.fetch_sub(1, Ordering::AcqRel);
            counters.prefetch_skipped.fetch_add(1, Ordering::Relaxed);
            None
        };
        let Ok(file) = self.datadir.file(page_id.file_id) else {
            return skip();
        };
        if u64::from(page_id.page_no.0) >= file.page_count() {
            return skip();
        }
        let mut evictions = 0;
        let free = instance.take_free_frame(&mut evictions);
        counters.evictions.fetch_add(evictions, Ordering::Relaxed);
        let Ok(Some(free)) = free else {
            self.wake_flusher();
            return skip();
        };
        match instance.reserve(free, page_id) {
            Reservation::AlreadyPresent => {
                self.prefetch_in_flight.fetch_sub(1, Ordering::AcqRel);
                counters.prefetch_cached.fetch_add(1, Ordering::Relaxed);
                None
            }
            Reservation::Reserved(index) => {
                counters.prefetch_issued.fetch_add(1, Ordering::Relaxed);
                // SAFETY: the frame is reserved for this read and exclusively latched
                // until the completion releases it, so nothing else touches its bytes.
                let buffer = unsafe { instance.arena.page_handle(index as usize) };
                let tag = (u64::from(instance.index) << 32) | u64::from(index);
                Some(IoRequest::read(file, page_id.page_no, buffer, tag))
            }
        }
    }

    fn wait_for_prefetches(&self) {
        while self.prefetch_in_flight.load(Ordering::Acquire) > 0 {
            std::thread::sleep(Duration::from_micros(200));
        }
    }

    fn wake_flusher(&self) {
        let mut state = self.flusher.lock();
        if !state.wake_requested {
            state.wake_requested = true;
            self.flusher_wake.notify_one();
        }
    }

    /// The background flusher: keeps `free_target_pct` of each instance's frames free
    /// by evicting clean pages from the LRU tail and writing back dirty ones.
    fn run_flusher(&self) {
        loop {
            {
                let mut state = self.flusher.lock();
                if state.shutting_down {
                    return;
                }
                if !state.wake_requested {
                    self.flusher_wake
                        .wait_for(&mut state, Duration::from_millis(100));
                }
                state.wake_requested = false;
                if state.shutting_down {
                    return;
                }
            }
            let _round = self.flusher_round.lock();
            let mut worked = true;
            while worked {
                worked = false;
                for instance in self.instances.iter() {
                    match self.refill_free_list(instance) {
                        Ok(progress) => worked |= progress,
                        Err(error) => tracing::error!("buffer pool flusher: {error}"),
                    }
                }
                if self.flusher.lock().shutting_down {
                    return;
                }
            }
        }
    }

    /// One flusher step for one instance; returns whether it freed or wrote anything
    /// while the free list was still below target.
    fn refill_free_list(&self, instance: &Instance) -> Result<bool> {
        let target = instance.frame_count() * self.config.free_target_pct as usize / 100;
        let mut dirty = Vec::new();
        let mut evicted = 0u64;
        {
            let mut lru = instance.lru.lock();
            if lru.free.len() >= target {
                return Ok(false);
            }
            let mut needed = target - lru.free.len();
            let mut candidate = lru.tail();
            for _ in 0..LRU_SCAN_DEPTH_MAX {
                let Some(frame) = candidate else { break };
                if needed == 0 {
                    break;
                }
                candidate = lru.toward_head(frame);
                if instance.frame(frame).is_dirty() {
                    if dirty.len() < FLUSH_BATCH_PAGES_MAX {
                        dirty.push(frame);
                    }
                } else if instance.try_evict(&mut lru, frame) {
                    lru.free.push(frame);
                    evicted += 1;
                    needed -= 1;
                }
            }
        }
        self.counters
            .evictions
            .fetch_add(evicted, Ordering::Relaxed);
        let written = if dirty.is_empty() {
            0
        } else {
            self.write_back_batch(instance, &dirty, false)?
        };
        Ok(evicted > 0 || written > 0)
    }

    fn stats(&self) -> PoolStats {
        let c = &self.counters;
        let load = |counter: &AtomicU64| counter.load(Ordering::Relaxed);
        let fetches = c.fetches.get();
        let misses = load(&c.misses);
        let mut stats = PoolStats {
            fetches,
            hits: fetches.saturating_sub(misses),
            misses,
            io_waits: load(&c.io_waits),
            optimistic_reads: c.optimistic_reads.get(),
            optimistic_retries: load(&c.optimistic_retries),
            prefetch_requested: load(&c.prefetch_requested),
            prefetch_issued: load(&c.prefetch_issued),
            prefetch_cached: load(&c.prefetch_cached),
            prefetch_skipped: load(&c.prefetch_skipped),
            prefetch_failed: load(&c.prefetch_failed),
            prefetch_in_flight_peak: load(&c.prefetch_in_flight_peak),
            page_reads: misses + load(&c.prefetch_issued),
            page_writes: load(&c.page_writes),
            evictions: load(&c.evictions),
            doublewrite_pages: self
                .doublewrite
                .as_ref()
                .map_or(0, Doublewrite::pages_written),
            doublewrite_syncs: self.doublewrite.as_ref().map_or(0, Doublewrite::syncs),
            ..PoolStats::default()
        };
        for instance in self.instances.iter() {
            stats.frames += instance.frame_count() as u64;
            stats.free_frames += instance.lru.lock().free.len() as u64;
            stats.dirty_pages += instance.flush_list.lock().len() as u64;
        }
        stats
    }
}

/// Completions of prefetch reads.
impl IoCompletion for PoolInner {
    fn complete(&self, done: IoDone) {
        let tag = done.request.tag;
        let instance = &self.instances[(tag >> 32) as usize];
        let index = tag as u32;
        let page_id = done.request.file.page_id(done.request.page_no);
        let IoDone { request, result } = done;
        // Release the frame's I/O handle before the frame is handed to readers.
        drop(request);
        let frame = instance.frame(index);
        // A page that fails validation is dropped here; the fetch that wants it reads
        // it again and reports the error.
        let result = result.and_then(|status| {
            if status == PageStatus::Valid {
                // SAFETY: the frame is exclusively latched for this read until it is
                // finished or aborted below, so nothing writes its bytes meanwhile.
                let bytes = unsafe {
                    std::slice::from_raw_parts(instance.page_ptr(index), self.page_size_bytes)
                };
                self.validate(bytes, page_id)?;
            }
            Ok(status)
        });
        match result {
            Ok(PageStatus::Valid) => {
                frame.finish_read();
                frame.latch.unlock_exclusive();
                frame.unpin();
            }
            Ok(PageStatus::Unwritten) | Err(_) => {
                if let Err(error) = &result {
                    tracing::debug!("prefetch of page {page_id} failed: {error}");
                }
                self.counters
                    .prefetch_failed
                    .fetch_add(1, Ordering::Relaxed);
                instance.abort_read(index, page_id);
            }
        }
        self.prefetch_in_flight.fetch_sub(1, Ordering::AcqRel);
    }
}
