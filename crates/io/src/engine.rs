//! The I/O engine: the chosen path, and asynchronous batched page I/O on it.
//!
//! [`IoEngine::start`] resolves `io_method` (probing the kernel and the file system for
//! `auto`) and starts what the path needs for asynchronous requests:
//!
//! | path       | synchronous request              | asynchronous batch                      |
//! |------------|----------------------------------|-----------------------------------------|
//! | `buffered` | `pread`/`pwrite` in the caller   | bounded pool of I/O threads             |
//! | `direct`   | `pread`/`pwrite`, `O_DIRECT`     | bounded pool of I/O threads             |
//! | `uring`    | the caller's own small ring      | shared ring, one completion thread      |
//!
//! Every asynchronous request completes exactly once through the [`IoCompletion`] sink
//! it was submitted with, errors included; [`IoEngine::submit`] itself never fails.
//! Reads are verified (checksum, page id) before the sink sees them.

use std::collections::VecDeque;
use std::fs::OpenOptions;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::thread::JoinHandle;

use parking_lot::{Condvar, Mutex};

use tarn_common::limits::{
    IO_THREAD_QUEUE_CAPACITY, IO_THREADS_MAX, IO_THREADS_MIN, IO_URING_ASYNC_RINGS,
    IO_URING_QUEUE_DEPTH_MAX, IO_URING_QUEUE_DEPTH_MIN,
};
use tarn_common::settings::IoMethod;
use tarn_common::{Error, PageNo, Result};

use crate::buf::{AlignedBuf, IoBuf, PAGE_BUFFER_ALIGN_BYTES, PageArena};
use crate::file::{PageFile, direct_io_alignment};
use crate::page::{self, PageStatus};
use crate::uring::{self, AsyncRing, FIXED_BUFFER_CHUNK_BYTES, FIXED_BUFFER_SLOTS, PrivateRing};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IoOp {
    Read,
    Write,
}

/// One page read or write.
pub struct IoRequest {
    pub op: IoOp,
    pub file: Arc<PageFile>,
    pub page_no: PageNo,
    pub buf: IoBuf,
    /// The submitter's own identifier, returned with the completion.
    pub tag: u64,
}

impl IoRequest {
    pub fn read(file: Arc<PageFile>, page_no: PageNo, buf: IoBuf, tag: u64) -> Self {
        IoRequest {
            op: IoOp::Read,
            file,
            page_no,
            buf,
            tag,
        }
    }

    pub fn write(file: Arc<PageFile>, page_no: PageNo, buf: IoBuf, tag: u64) -> Self {
        IoRequest {
            op: IoOp::Write,
            file,
            page_no,
            buf,
            tag,
        }
    }

    /// Checks the request and, for a write, grows the file, seals the page and calls
    /// the fault layer's hook. Every asynchronous write passes here at submission.
    pub(crate) fn prepare(&mut self) -> Result<()> {
        assert_eq!(
            self.buf.len(),
            self.file.page_size_bytes(),
            "page buffer of the wrong size"
        );
        match self.op {
            IoOp::Read => self.file.check_in_range(self.page_no),
            IoOp::Write => {
                self.file.ensure_page_count(u64::from(self.page_no.0) + 1)?;
                let page_id = self.file.page_id(self.page_no);
                page::seal(self.buf.as_mut_slice(), page_id);
                self.file.check_write_fault(self.page_no)
            }
        }
    }
}

/// A finished request: the request (with its buffer) and its outcome.
pub struct IoDone {
    pub request: IoRequest,
    /// For a read, whether the page was valid or never written; for a write, `Valid`.
    pub result: Result<PageStatus>,
}

impl IoDone {
    /// Turns the outcome of the transfer into a result, verifying pages read.
    pub(crate) fn from_transfer(request: IoRequest, transfer: std::io::Result<()>) -> Self {
        let result = match (transfer, request.op) {
            (Err(source), IoOp::Read) => Err(Error::io("read", request.file.path(), source)),
            (Err(source), IoOp::Write) => Err(Error::io("write", request.file.path(), source)),
            (Ok(()), IoOp::Read) => page::verify(
                request.buf.as_slice(),
                request.file.page_id(request.page_no),
                request.file.path(),
            ),
            (Ok(()), IoOp::Write) => Ok(PageStatus::Valid),
        };
        IoDone { request, result }
    }
}

/// A finished request from [`IoQueue::reap`] whose page has not been verified yet. Its
/// buffer can be reached only through [`Reaped::verify`], so unverified bytes are never
/// used; in between, the caller can already start the next request (see
/// [`IoQueue::reap`]).
pub struct Reaped {
    request: IoRequest,
    outcome: ReapedOutcome,
}

enum ReapedOutcome {
    /// The kernel's outcome of the transfer; a read still needs verifying.
    Transferred(std::io::Result<()>),
    /// Already final (an I/O thread verified it, or it failed before the kernel).
    Done(Result<PageStatus>),
}

impl Reaped {
    pub(crate) fn transferred(request: IoRequest, outcome: std::io::Result<()>) -> Self {
        Reaped {
            request,
            outcome: ReapedOutcome::Transferred(outcome),
        }
    }

    fn done(done: IoDone) -> Self {
        Reaped {
            request: done.request,
            outcome: ReapedOutcome::Done(done.result),
        }
    }

    pub fn tag(&self) -> u64 {
        self.request.tag
    }

    pub fn op(&self) -> IoOp {
        self.request.op
    }

    pub fn page_no(&self) -> PageNo {
        self.request.page_no
    }

    /// Verifies the page (for a read) and hands back the finished request.
    pub fn verify(self) -> IoDone {
        match self.outcome {
            ReapedOutcome::Transferred(outcome) => IoDone::from_transfer(self.request, outcome),
            ReapedOutcome::Done(result) => IoDone {
                request: self.request,
                result,
            },
        }
    }
}

/// Receives completions. Called on an engine thread, or on the submitting thread
/// itself, inside [`IoEngine::submit`], for a request that fails before it reaches the
/// device (a read past the end of the file): keep it short, never block on another
/// asynchronous request, and never take a lock the submitter may hold while submitting.
pub trait IoCompletion: Send + Sync {
    fn complete(&self, done: IoDone);
}

pub(crate) fn complete_in_place(
    request: IoRequest,
    result: Result<PageStatus>,
    sink: &Arc<dyn IoCompletion>,
) {
    sink.complete(IoDone { request, result });
}

/// A sink that collects completions for a thread that waits for them.
#[derive(Default)]
pub struct CompletionQueue {
    done: Mutex<Vec<IoDone>>,
    ready: Condvar,
}

impl CompletionQueue {
    pub fn new() -> Arc<Self> {
        Arc::new(CompletionQueue::default())
    }

    pub fn sink(self: &Arc<Self>) -> Arc<dyn IoCompletion> {
        self.clone()
    }

    /// Waits until at least `min` completions are available, then moves all of them
    /// into `out`.
    pub fn wait(&self, min: usize, out: &mut Vec<IoDone>) {
        let mut done = self.done.lock();
        while done.len() < min {
            self.ready.wait(&mut done);
        }
        out.append(&mut done);
    }
}

impl IoCompletion for CompletionQueue {
    fn complete(&self, done: IoDone) {
        self.done.lock().push(done);
        self.ready.notify_one();
    }
}

/// Settings the engine needs.
#[derive(Clone, Copy, Debug)]
pub struct IoConfig {
    pub method: IoMethod,
    pub uring_queue_depth: u32,
    pub io_threads: u32,
}

impl IoConfig {
    /// Checks the bounds `Settings::set` enforces, for configs built directly: zero
    /// I/O threads would leave every asynchronous request waiting forever.
    fn validate(&self) -> Result<()> {
        let check = |name: &str, value: u32, min: u32, max: u32| {
            if (min..=max).contains(&value) {
                return Ok(());
            }
            Err(Error::InvalidSetting {
                name: name.into(),
                value: value.to_string(),
                reason: format!("must be an integer from {min} to {max}"),
            })
        };
        check(
            "io_uring_queue_depth",
            self.uring_queue_depth,
            IO_URING_QUEUE_DEPTH_MIN,
            IO_URING_QUEUE_DEPTH_MAX,
        )?;
        check(
            "io_threads",
            self.io_threads,
            IO_THREADS_MIN,
            IO_THREADS_MAX,
        )
    }
}

pub struct IoEngine {
    method: IoMethod,
    selection_reason: String,
    rings: Vec<Arc<AsyncRing>>,
    ring_threads: Mutex<Vec<JoinHandle<()>>>,
    next_ring: AtomicU32,
    io_threads: Option<IoThreads>,
    /// Arenas registered as fixed buffers with the asynchronous rings, and where.
    registrations: Mutex<Vec<Registration>>,
}

impl IoEngine {
    /// Resolves the I/O path (probing files in `probe_dir`) and starts its threads.
    pub fn start(config: IoConfig, probe_dir: &Path) -> Result<Arc<IoEngine>> {
        config.validate()?;
        let (method, selection_reason) = resolve_method(config.method, probe_dir)?;
        if config.method == IoMethod::Auto {
            tracing::info!(
                io_method = method.name(),
                "io_method=auto chose '{method}': {selection_reason}"
            );
        }
        let mut rings = Vec::new();
        let mut ring_threads = Vec::new();
        let mut io_threads = None;
        if method == IoMethod::Uring {
            for index in 0..IO_URING_ASYNC_RINGS {
                let (ring, thread) =
                    AsyncRing::start(config.uring_queue_depth, format!("tarn-uring-{index}"))?;
                rings.push(ring);
                ring_threads.push(thread);
            }
        } else {
            io_threads = Some(IoThreads::start(config.io_threads as usize)?);
        }
        Ok(Arc::new(IoEngine {
            method,
            selection_reason,
            rings,
            ring_threads: Mutex::new(ring_threads),
            next_ring: AtomicU32::new(0),
            io_threads,
            registrations: Mutex::new(Vec::new()),
        }))
    }

    /// The concrete path in use (never `auto`).
    pub fn method(&self) -> IoMethod {
        self.method
    }

    /// Why this path was chosen (for `auto`, what the probes found).
    pub fn selection_reason(&self) -> &str {
        &self.selection_reason
    }

    /// Starts `requests`; each completes through `sink`. Blocks only while the path's
    /// bounded queue (ring slots or I/O thread queue) is full.
    pub fn submit(&self, requests: Vec<IoRequest>, sink: &Arc<dyn IoCompletion>) {
        if requests.is_empty() {
            return;
        }
        if let Some(threads) = &self.io_threads {
            threads.submit(requests, sink);
            return;
        }
        let index = self.next_ring.fetch_add(1, Ordering::Relaxed) as usize % self.rings.len();
        self.rings[index].submit(requests, sink);
    }

    /// Registers an arena's memory as io_uring fixed buffers, so requests on its pages
    /// skip per-request page pinning. Returns false (and changes nothing) on paths other
    /// than `uring`, when the fixed-buffer table is full, or if the kernel refuses; the
    /// arena still works unregistered. The engine holds the arena until
    /// [`IoEngine::unregister_arena`].
    pub fn register_arena(&self, arena: &Arc<PageArena>) -> bool {
        if self.method != IoMethod::Uring {
            return false;
        }
        let mut registrations = self.registrations.lock();
        if registrations.iter().any(|r| Arc::ptr_eq(&r.arena, arena)) {
            return true;
        }
        let regions = fixed_buffer_regions(arena);
        let count = regions.len() as u32;
        // First fit in the table of fixed-buffer slots.
        let mut taken: Vec<(u32, u32)> = registrations
            .iter()
            .map(|r| (r.base, r.base + r.count))
            .collect();
        taken.sort_unstable();
        let mut base = 0;
        for (start, end) in taken {
            if base + count <= start {
                break;
            }
            base = base.max(end);
        }
        if base + count > FIXED_BUFFER_SLOTS {
            return false;
        }
        // SAFETY: the engine keeps the arena alive (pushed below) until it unregisters
        // it, and the rings live no longer than the engine.
        let registered = self
            .rings
            .iter()
            .all(|ring| unsafe { ring.register_fixed(base, &regions) });
        if !registered {
            self.rings
                .iter()
                .for_each(|ring| ring.unregister_fixed(base, regions.len()));
            tracing::debug!("io_uring refused fixed buffers; using plain buffers");
            return false;
        }
        arena.set_fixed_index_base(base as i32);
        registrations.push(Registration {
            arena: arena.clone(),
            base,
            count,
        });
        true
    }

    /// Undoes [`IoEngine::register_arena`] and releases the engine's hold on the arena.
    /// Requests already submitted on its pages complete normally. Call it only when no
    /// new request on the arena can be submitted (its owner is going away).
    pub fn unregister_arena(&self, arena: &Arc<PageArena>) {
        let mut registrations = self.registrations.lock();
        let Some(position) = registrations
            .iter()
            .position(|r| Arc::ptr_eq(&r.arena, arena))
        else {
            return;
        };
        let registration = registrations.swap_remove(position);
        registration.arena.set_fixed_index_base(-1);
        for ring in &self.rings {
            ring.unregister_fixed(registration.base, registration.count as usize);
        }
    }
}

/// An arena registered with the asynchronous rings at `base .. base + count`.
struct Registration {
    arena: Arc<PageArena>,
    base: u32,
    count: u32,
}

impl IoEngine {
    /// A queue of at most `depth` requests in flight, owned by the calling thread,
    /// which also collects the completions: on `uring` a private ring reaped by its
    /// owner (no completion thread, one system call per batch); on the other paths the
    /// engine's I/O threads.
    pub fn queue(self: &Arc<Self>, depth: u32) -> Result<IoQueue> {
        let inner = if self.method == IoMethod::Uring {
            let mut ring = PrivateRing::new(depth)?;
            for registration in self.registrations.lock().iter() {
                let regions = fixed_buffer_regions(&registration.arena);
                // SAFETY: registration pins the arena's pages in the kernel until the
                // ring is dropped, so the memory the ring may write stays allocated to
                // it; the ring finds the arena by identity (`PrivateRing::fixed_buffer`).
                let registered = unsafe {
                    ring.register_arena(&registration.arena, registration.base, &regions)
                };
                if !registered {
                    return Err(Error::IoPathUnavailable {
                        path: "uring",
                        reason: "a private ring refused the engine's fixed buffers".into(),
                    });
                }
            }
            QueueInner::Ring(Box::new(ring))
        } else {
            QueueInner::Threads {
                completions: CompletionQueue::new(),
                in_flight: 0,
                depth: depth as usize,
            }
        };
        Ok(IoQueue {
            engine: self.clone(),
            inner,
            ready: Vec::new(),
        })
    }
}

/// The memory of `arena` in chunks the kernel accepts as fixed buffers.
fn fixed_buffer_regions(arena: &PageArena) -> Vec<libc::iovec> {
    let (start, length) = arena.memory();
    (0..length)
        .step_by(FIXED_BUFFER_CHUNK_BYTES)
        .map(|offset| libc::iovec {
            // SAFETY: `offset < length`, so the pointer stays inside the arena.
            iov_base: unsafe { start.add(offset) }.cast(),
            iov_len: FIXED_BUFFER_CHUNK_BYTES.min(length - offset),
        })
        .collect()
}

/// A caller-owned queue of page requests: submit a batch, collect completions later.
/// See [`IoEngine::queue`]. Not shared between threads.
pub struct IoQueue {
    engine: Arc<IoEngine>,
    inner: QueueInner,
    /// Completions of requests that failed before reaching the kernel.
    ready: Vec<IoDone>,
}

enum QueueInner {
    Ring(Box<PrivateRing>),
    Threads {
        completions: Arc<CompletionQueue>,
        in_flight: usize,
        depth: usize,
    },
}

impl IoQueue {
    /// The most requests this queue keeps in flight.
    pub fn depth(&self) -> usize {
        match &self.inner {
            QueueInner::Ring(ring) => ring.capacity(),
            QueueInner::Threads { depth, .. } => *depth,
        }
    }

    /// Requests submitted and not yet collected.
    pub fn in_flight(&self) -> usize {
        self.ready.len()
            + match &self.inner {
                QueueInner::Ring(ring) => ring.in_flight(),
                QueueInner::Threads { in_flight, .. } => *in_flight,
            }
    }

    /// Starts `requests` (on `uring`, with one system call for the whole batch).
    ///
    /// A batch submitted at once reaches the device as one plugged batch and tends to
    /// complete as one; a caller that wants the device kept evenly busy (as fio does)
    /// submits each replacement request as soon as a completion frees its slot.
    ///
    /// # Panics
    /// If more than [`IoQueue::depth`] requests would be in flight.
    pub fn submit(&mut self, requests: Vec<IoRequest>) -> Result<()> {
        assert!(
            self.in_flight() + requests.len() <= self.depth(),
            "queue depth exceeded"
        );
        match &mut self.inner {
            QueueInner::Ring(ring) => {
                for mut request in requests {
                    match request.prepare() {
                        Ok(()) => ring.push(request),
                        Err(error) => self.ready.push(IoDone {
                            request,
                            result: Err(error),
                        }),
                    }
                }
                ring.submit()
                    .map_err(|source| Error::io("io_uring_enter", "io_uring", source))?;
            }
            QueueInner::Threads {
                completions,
                in_flight,
                ..
            } => {
                *in_flight += requests.len();
                self.engine.submit(requests, &completions.sink());
            }
        }
        Ok(())
    }

    /// Waits until at least `min` requests (at most those in flight) have completed,
    /// then moves every completed request into `out`.
    pub fn wait(&mut self, min: usize, out: &mut Vec<IoDone>) -> Result<()> {
        let mut reaped = Vec::new();
        self.reap(min, &mut reaped)?;
        out.extend(reaped.into_iter().map(Reaped::verify));
        Ok(())
    }

    /// Like [`IoQueue::wait`], but hands back completions before verifying their pages,
    /// so a caller keeping the device busy can start the next requests first and verify
    /// right after: verifying a batch before refilling would leave the device short of
    /// requests for as long as the checksums take.
    pub fn reap(&mut self, min: usize, out: &mut Vec<Reaped>) -> Result<()> {
        let before = out.len();
        out.extend(self.ready.drain(..).map(Reaped::done));
        let still_needed = min.saturating_sub(out.len() - before);
        match &mut self.inner {
            QueueInner::Ring(ring) => ring
                .reap(still_needed, out)
                .map_err(|source| Error::io("io_uring_enter", "io_uring", source)),
            QueueInner::Threads {
                completions,
                in_flight,
                ..
            } => {
                let mut done = Vec::new();
                completions.wait(still_needed.min(*in_flight), &mut done);
                *in_flight -= done.len();
                out.extend(done.into_iter().map(Reaped::done));
                Ok(())
            }
        }
    }
}

impl Drop for IoEngine {
    fn drop(&mut self) {
        for ring in &self.rings {
            ring.shut_down();
        }
        for thread in self.ring_threads.lock().drain(..) {
            let _ = thread.join();
        }
    }
}

/// Picks the concrete path for `requested`, or says why it cannot work.
fn resolve_method(requested: IoMethod, probe_dir: &Path) -> Result<(IoMethod, String)> {
    let unavailable = |path: IoMethod, reason: String| Error::IoPathUnavailable {
        path: path.name(),
        reason,
    };
    match requested {
        IoMethod::Buffered => Ok((IoMethod::Buffered, "requested".into())),
        IoMethod::Direct => {
            let detail = probe_direct(probe_dir).map_err(|r| unavailable(IoMethod::Direct, r))?;
            Ok((IoMethod::Direct, format!("requested; {detail}")))
        }
        IoMethod::Uring => {
            let detail = probe_direct(probe_dir)
                .map_err(|r| unavailable(IoMethod::Uring, format!("it needs O_DIRECT, and {r}")))?;
            uring::probe().map_err(|r| unavailable(IoMethod::Uring, r))?;
            Ok((IoMethod::Uring, format!("requested; {detail}")))
        }
        IoMethod::Auto => match (uring::probe(), probe_direct(probe_dir)) {
            (Ok(()), Ok(detail)) => Ok((IoMethod::Uring, format!("io_uring works and {detail}"))),
            (Err(why_not_uring), Ok(detail)) => Ok((
                IoMethod::Direct,
                format!("io_uring is unavailable ({why_not_uring}); {detail}"),
            )),
            (_, Err(why_not_direct)) => Ok((
                IoMethod::Buffered,
                format!("O_DIRECT is unavailable: {why_not_direct}"),
            )),
        },
    }
}

/// Opens, writes and reads a probe file in `dir` with `O_DIRECT`.
fn probe_direct(dir: &Path) -> std::result::Result<String, String> {
    let path = dir.join(format!(".tarn-direct-probe-{}", std::process::id()));
    let result = (|| {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .custom_flags(libc::O_DIRECT)
            .open(&path)
            .map_err(|e| match e.raw_os_error() {
                Some(libc::EINVAL) => format!(
                    "the file system holding '{}' refuses O_DIRECT ({e})",
                    dir.display()
                ),
                _ => format!("cannot create a probe file in '{}' ({e})", dir.display()),
            })?;
        let (memory_align, offset_align) = direct_io_alignment(&file).unwrap_or((512, 512));
        if memory_align as usize > PAGE_BUFFER_ALIGN_BYTES
            || offset_align as usize > PAGE_BUFFER_ALIGN_BYTES
        {
            return Err(format!(
                "the device needs {memory_align}-byte buffers and {offset_align}-byte offsets, \
                 more than Tarn's {PAGE_BUFFER_ALIGN_BYTES}-byte page alignment"
            ));
        }
        let mut block = AlignedBuf::zeroed(PAGE_BUFFER_ALIGN_BYTES);
        file.write_all_at(&block, 0)
            .and_then(|()| file.read_exact_at(&mut block, 0))
            .map_err(|e| format!("an O_DIRECT transfer in '{}' failed ({e})", dir.display()))?;
        Ok(format!(
            "O_DIRECT works in '{}' (logical block size {offset_align} bytes)",
            dir.display()
        ))
    })();
    let _ = std::fs::remove_file(&path);
    result
}

/// The bounded pool of threads that serves asynchronous requests on the buffered and
/// direct paths: each thread performs one synchronous request at a time.
struct IoThreads {
    shared: Arc<ThreadShared>,
    handles: Vec<JoinHandle<()>>,
}

struct ThreadShared {
    queue: Mutex<ThreadQueue>,
    not_empty: Condvar,
    not_full: Condvar,
}

struct ThreadQueue {
    jobs: VecDeque<(IoRequest, Arc<dyn IoCompletion>)>,
    shutting_down: bool,
}

impl IoThreads {
    fn start(count: usize) -> Result<IoThreads> {
        let shared = Arc::new(ThreadShared {
            queue: Mutex::new(ThreadQueue {
                jobs: VecDeque::with_capacity(IO_THREAD_QUEUE_CAPACITY),
                shutting_down: false,
            }),
            not_empty: Condvar::new(),
            not_full: Condvar::new(),
        });
        let handles = (0..count)
            .map(|index| {
                let shared = shared.clone();
                std::thread::Builder::new()
                    .name(format!("tarn-io-{index}"))
                    .spawn(move || shared.serve())
                    .map_err(|e| Error::OutOfResources(format!("cannot start I/O thread: {e}")))
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(IoThreads { shared, handles })
    }

    fn submit(&self, requests: Vec<IoRequest>, sink: &Arc<dyn IoCompletion>) {
        // Writes are prepared here, at submission, as on the uring path: the fault
        // layer sees them in submission order, and a failure completes in place.
        let mut accepted = Vec::with_capacity(requests.len());
        for mut request in requests {
            if request.op != IoOp::Write {
                accepted.push(request);
                continue;
            }
            match request.prepare() {
                Ok(()) => accepted.push(request),
                Err(error) => complete_in_place(request, Err(error), sink),
            }
        }
        let mut queue = self.shared.queue.lock();
        for request in accepted {
            while queue.jobs.len() >= IO_THREAD_QUEUE_CAPACITY {
                self.shared.not_full.wait(&mut queue);
            }
            queue.jobs.push_back((request, sink.clone()));
            self.shared.not_empty.notify_one();
        }
    }
}

impl ThreadShared {
    fn serve(&self) {
        loop {
            let (mut request, sink) = {
                let mut queue = self.queue.lock();
                loop {
                    if let Some(job) = queue.jobs.pop_front() {
                        break job;
                    }
                    if queue.shutting_down {
                        return;
                    }
                    self.not_empty.wait(&mut queue);
                }
            };
            self.not_full.notify_one();
            let page_no = request.page_no;
            let file = request.file.clone();
            let result = match request.op {
                IoOp::Read => file.read_page(page_no, request.buf.as_mut_slice()),
                IoOp::Write => file
                    .write_sealed_page(page_no, request.buf.as_mut_slice())
                    .map(|()| PageStatus::Valid),
            };
            sink.complete(IoDone { request, result });
        }
    }
}

impl Drop for IoThreads {
    fn drop(&mut self) {
        self.shared.queue.lock().shutting_down = true;
        self.shared.not_empty.notify_all();
        for handle in self.handles.drain(..) {
            let _ = handle.join();
        }
    }
}
