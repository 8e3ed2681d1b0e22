//! The io_uring path.
//!
//! Two kinds of ring serve it:
//!
//! - **Per-thread synchronous rings.** A synchronous page read or write on the uring
//!   path uses a small ring owned by the calling thread ([`sync_transfer`]): submit one
//!   request and wait for it in the same `io_uring_enter` call. No other thread is
//!   involved, so a synchronous request costs one system call and no hand-off.
//! - **Asynchronous rings** ([`AsyncRing`]), for batches (prefetch, flushing,
//!   benchmarks at queue depth N). Submitters push their entries under a short
//!   submission lock and enter the kernel once per batch. A completion thread waits in
//!   the kernel for completions, verifies pages that were read, and hands each
//!   completion to the submitter's [`IoCompletion`] sink. Requests in flight are bounded
//!   by the ring's depth: a submitter waits for a free slot, so the completion queue
//!   (twice the depth) can never overflow.
//!
//! Buffers of a [`crate::PageArena`] registered with [`crate::IoEngine::register_arena`]
//! are submitted as fixed buffers (`READ_FIXED`/`WRITE_FIXED`), which saves the kernel
//! from pinning and unpinning the user pages on every request.
//!
//! # Invariants
//! 1. Only the completion thread touches an async ring's completion queue; only the
//!    holder of `submit_lock` touches its submission queue.
//! 2. A slot is in use from the moment its entry is built until its completion has
//!    been taken off the completion queue; its request (and so its buffer) lives in
//!    the slot for exactly that time, so the kernel never writes into freed memory.
//! 3. Dropping an async ring waits for every request in flight to complete.

use std::cell::RefCell;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};
use std::thread::JoinHandle;

use io_uring::{IoUring, opcode, squeue, types};
use parking_lot::{Condvar, Mutex};

use tarn_common::limits::IO_URING_SYNC_QUEUE_DEPTH;
use tarn_common::{Error, Result};

use crate::buf::{IoBuf, PageArena};
use crate::engine::{IoCompletion, IoDone, IoOp, IoRequest, Reaped, complete_in_place};

/// The kernel limits one registered buffer to 1 GiB; larger arenas are registered as
/// several consecutive fixed buffers of this size.
pub(crate) const FIXED_BUFFER_CHUNK_BYTES: usize = 1 << 30;

/// Fixed-buffer slots reserved in each async ring (sparse registration).
pub(crate) const FIXED_BUFFER_SLOTS: u32 = 1024;

/// `IORING_ENTER_GETEVENTS` from `<linux/io_uring.h>` (the crate keeps `sys` private).
const IORING_ENTER_GETEVENTS: u32 = 1;

/// `user_data` of the no-op that wakes the completion thread for shutdown.
const WAKE_USER_DATA: u64 = u64::MAX;

thread_local! {
    static SYNC_RING: RefCell<Option<IoUring>> = const { RefCell::new(None) };
}

/// Reads (or writes) `len` bytes at `offset` through the calling thread's own ring.
pub(crate) fn sync_transfer(
    fd: RawFd,
    write: bool,
    ptr: *mut u8,
    len: usize,
    offset: u64,
) -> std::io::Result<()> {
    SYNC_RING.with(|cell| {
        let mut slot = cell.borrow_mut();
        if slot.is_none() {
            *slot = Some(IoUring::new(IO_URING_SYNC_QUEUE_DEPTH)?);
        }
        let ring = slot.as_mut().expect("ring created above");
        let mut done = 0usize;
        while done < len {
            // SAFETY: `ptr + done .. ptr + len` is inside the caller's buffer.
            let at = unsafe { ptr.add(done) };
            let remaining = (len - done) as u32;
            let position = offset + done as u64;
            let entry = if write {
                opcode::Write::new(types::Fd(fd), at, remaining)
                    .offset(position)
                    .build()
            } else {
                opcode::Read::new(types::Fd(fd), at, remaining)
                    .offset(position)
                    .build()
            };
            // SAFETY: the buffer stays valid and untouched until the completion is reaped
            // below, before this function returns; the ring is empty (we reap every entry).
            unsafe { ring.submission().push(&entry) }
                .map_err(|_| std::io::Error::other("synchronous ring full"))?;
            loop {
                match ring.submit_and_wait(1) {
                    Ok(_) => break,
                    Err(e) if e.raw_os_error() == Some(libc::EINTR) => continue,
                    Err(e) => return Err(e),
                }
            }
            let cqe = ring
                .completion()
                .next()
                .expect("one completion after wait(1)");
            let result = cqe.result();
            if result < 0 {
                return Err(std::io::Error::from_raw_os_error(-result));
            }
            if result == 0 {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::UnexpectedEof,
                    "end of file inside a page",
                ));
            }
            done += result as usize;
        }
        Ok(())
    })
}

/// Errors after which `io_uring_enter` is simply retried: an interrupted call, a full
/// completion queue being drained, or the kernel short of memory for a moment.
fn is_transient(error: &std::io::Error) -> bool {
    matches!(
        error.raw_os_error(),
        Some(libc::EINTR | libc::EBUSY | libc::EAGAIN | libc::ENOMEM)
    )
}

fn back_off_briefly() {
    std::thread::sleep(std::time::Duration::from_micros(50));
}

/// Checks that this process may create an io_uring and complete a request on it.
pub(crate) fn probe() -> std::result::Result<(), String> {
    let mut ring = IoUring::new(2).map_err(|e| format!("io_uring_setup failed: {e}"))?;
    let nop = opcode::Nop::new().build().user_data(7);
    // SAFETY: a no-op references no memory.
    unsafe { ring.submission().push(&nop) }.map_err(|_| "submission queue full".to_string())?;
    ring.submit_and_wait(1)
        .map_err(|e| format!("io_uring_enter failed: {e}"))?;
    match ring.completion().next() {
        Some(cqe) if cqe.user_data() == 7 && cqe.result() >= 0 => Ok(()),
        Some(cqe) => Err(format!("a no-op completed with {}", cqe.result())),
        None => Err("a no-op never completed".into()),
    }
}

struct InFlight {
    request: IoRequest,
    sink: Arc<dyn IoCompletion>,
}

struct Slots {
    entries: Vec<Option<InFlight>>,
    free: Vec<u32>,
}

pub(crate) struct AsyncRing {
    ring: IoUring,
    /// Held while pushing to the submission queue and entering the kernel to submit.
    submit_lock: Mutex<()>,
    slots: Mutex<Slots>,
    slot_freed: Condvar,
    shutting_down: AtomicBool,
    fixed_buffers: bool,
}

impl AsyncRing {
    /// Creates a ring of `depth` entries and starts its completion thread.
    pub(crate) fn start(depth: u32, name: String) -> Result<(Arc<AsyncRing>, JoinHandle<()>)> {
        let ring = IoUring::builder()
            .setup_cqsize(depth * 2)
            .build(depth)
            .map_err(|e| Error::IoPathUnavailable {
                path: "uring",
                reason: format!("io_uring_setup with {depth} entries failed: {e}"),
            })?;
        let fixed_buffers = ring
            .submitter()
            .register_buffers_sparse(FIXED_BUFFER_SLOTS)
            .is_ok();
        let this = Arc::new(AsyncRing {
            ring,
            submit_lock: Mutex::new(()),
            slots: Mutex::new(Slots {
                entries: (0..depth).map(|_| None).collect(),
                free: (0..depth).rev().collect(),
            }),
            slot_freed: Condvar::new(),
            shutting_down: AtomicBool::new(false),
            fixed_buffers,
        });
        let reaper = this.clone();
        let handle = std::thread::Builder::new()
            .name(name)
            .spawn(move || reaper.complete_loop())
            .map_err(|e| Error::OutOfResources(format!("cannot start io_uring thread: {e}")))?;
        Ok((this, handle))
    }

    /// Registers `regions` as fixed buffers starting at index `base`.
    ///
    /// # Safety
    /// The regions must stay valid until the ring is dropped.
    pub(crate) unsafe fn register_fixed(&self, base: u32, regions: &[libc::iovec]) -> bool {
        if !self.fixed_buffers || base + regions.len() as u32 > FIXED_BUFFER_SLOTS {
            return false;
        }
        // SAFETY: forwarded from this function's contract.
        unsafe {
            self.ring
                .submitter()
                .register_buffers_update(base, regions, None)
        }
        .is_ok()
    }

    /// Empties fixed-buffer slots `base .. base + count`. Requests already submitted
    /// keep the memory they were given (the kernel holds it until they complete).
    pub(crate) fn unregister_fixed(&self, base: u32, count: usize) {
        if !self.fixed_buffers {
            return;
        }
        let empty = vec![
            libc::iovec {
                iov_base: std::ptr::null_mut(),
                iov_len: 0,
            };
            count
        ];
        // SAFETY: empty entries reference no memory.
        let _ = unsafe {
            self.ring
                .submitter()
                .register_buffers_update(base, &empty, None)
        };
    }

    fn acquire_slot(&self, wait: bool) -> Option<u32> {
        let mut slots = self.slots.lock();
        loop {
            if let Some(slot) = slots.free.pop() {
                return Some(slot);
            }
            if !wait {
                return None;
            }
            self.slot_freed.wait(&mut slots);
        }
    }

    /// Submits `requests`; each completes through `sink`, errors included.
    pub(crate) fn submit(&self, requests: Vec<IoRequest>, sink: &Arc<dyn IoCompletion>) {
        let mut pending: Vec<squeue::Entry> = Vec::with_capacity(requests.len());
        for mut request in requests {
            if let Err(error) = request.prepare() {
                complete_in_place(request, Err(error), sink);
                continue;
            }
            let slot = match self.acquire_slot(false) {
                Some(slot) => slot,
                None => {
                    // Every slot is taken: submit what we hold, so completions can free
                    // slots, then wait for one.
                    self.push_and_enter(&mut pending);
                    self.acquire_slot(true).expect("waited for a slot")
                }
            };
            let fixed = if self.fixed_buffers {
                request.buf.fixed_buffer()
            } else {
                None
            };
            let entry = build_entry(&mut request, fixed).user_data(u64::from(slot));
            self.slots.lock().entries[slot as usize] = Some(InFlight {
                request,
                sink: sink.clone(),
            });
            pending.push(entry);
        }
        self.push_and_enter(&mut pending);
    }

    fn push_and_enter(&self, pending: &mut Vec<squeue::Entry>) {
        if pending.is_empty() {
            return;
        }
        let _submitting = self.submit_lock.lock();
        // SAFETY: `submit_lock` makes this the only user of the submission queue
        // (invariant 1); each entry's buffer lives in its slot until completion
        // (invariant 2). At most `depth` slots exist, so the queue has room.
        unsafe {
            let mut queue = self.ring.submission_shared();
            for entry in pending.drain(..) {
                queue
                    .push(&entry)
                    .expect("slots bound the submission queue");
            }
        }
        loop {
            match self.ring.submitter().submit() {
                Ok(_) => break,
                Err(e) if is_transient(&e) => back_off_briefly(),
                // The entries are valid and the ring is sized for them, so any other
                // error means Tarn built a bad request: a programming error.
                Err(e) => panic!("io_uring_enter refused valid entries: {e}"),
            }
        }
    }

    fn in_flight(&self) -> usize {
        let slots = self.slots.lock();
        slots.entries.len() - slots.free.len()
    }

    fn complete_loop(&self) {
        let mut ready: Vec<(u64, i32)> = Vec::new();
        loop {
            // SAFETY: no argument struct is passed; to_submit = 0 means this call never
            // touches the submission queue (invariant 1).
            let waited = unsafe {
                self.ring
                    .submitter()
                    .enter::<libc::sigset_t>(0, 1, IORING_ENTER_GETEVENTS, None)
            };
            match waited {
                Err(e) if is_transient(&e) => back_off_briefly(),
                // Waiting takes no argument that could be wrong: a programming error.
                Err(e) => panic!("io_uring_enter failed to wait: {e}"),
                Ok(_) => {}
            }
            // SAFETY: the completion thread is the only user of the completion queue.
            unsafe {
                ready.extend(
                    self.ring
                        .completion_shared()
                        .map(|c| (c.user_data(), c.result())),
                );
            }
            let mut woken_for_shutdown = false;
            for (user_data, result) in ready.drain(..) {
                if user_data == WAKE_USER_DATA {
                    woken_for_shutdown = true;
                    continue;
                }
                let in_flight = {
                    let mut slots = self.slots.lock();
                    let taken = slots.entries[user_data as usize].take();
                    slots.free.push(user_data as u32);
                    taken.expect("completion for an empty slot")
                };
                self.slot_freed.notify_one();
                finish(in_flight, result);
            }
            if (woken_for_shutdown || self.shutting_down.load(Ordering::Acquire))
                && self.in_flight() == 0
            {
                return;
            }
        }
    }

    /// Asks the completion thread to exit once nothing is in flight.
    pub(crate) fn shut_down(&self) {
        self.shutting_down.store(true, Ordering::Release);
        let wake = opcode::Nop::new().build().user_data(WAKE_USER_DATA);
        let _submitting = self.submit_lock.lock();
        // SAFETY: a no-op references no memory; `submit_lock` is held (invariant 1).
        unsafe {
            let mut queue = self.ring.submission_shared();
            if queue.push(&wake).is_err() {
                return; // The queue is full, so completions will wake the thread anyway.
            }
        }
        let _ = self.ring.submitter().submit();
    }
}

/// The submission entry for `request`, using fixed buffer `fixed` if given (an index
/// registered *with the ring the entry goes to*).
fn build_entry(request: &mut IoRequest, fixed: Option<u16>) -> squeue::Entry {
    let fd = types::Fd(request.file.raw_fd());
    let offset = u64::from(request.page_no.0) * request.file.page_size_bytes() as u64;
    let len = request.buf.len() as u32;
    let ptr = request.buf.as_mut_ptr();
    match (request.op, fixed) {
        (IoOp::Read, Some(index)) => opcode::ReadFixed::new(fd, ptr, len, index)
            .offset(offset)
            .build(),
        (IoOp::Read, None) => opcode::Read::new(fd, ptr, len).offset(offset).build(),
        (IoOp::Write, Some(index)) => opcode::WriteFixed::new(fd, ptr, len, index)
            .offset(offset)
            .build(),
        (IoOp::Write, None) => opcode::Write::new(fd, ptr, len).offset(offset).build(),
    }
}

fn finish(in_flight: InFlight, result: i32) {
    let InFlight { request, sink } = in_flight;
    sink.complete(completion(request, result));
}

/// Turns a completion queue entry's result into the finished request.
fn completion(request: IoRequest, result: i32) -> IoDone {
    let outcome = transfer_outcome(result, request.buf.len());
    IoDone::from_transfer(request, outcome)
}

/// A completion queue entry's result for a transfer of `expected` bytes.
fn transfer_outcome(result: i32, expected: usize) -> std::io::Result<()> {
    if result < 0 {
        Err(std::io::Error::from_raw_os_error(-result))
    } else if (result as usize) < expected {
        Err(std::io::Error::new(
            std::io::ErrorKind::UnexpectedEof,
            format!("short transfer: {result} of {expected} bytes"),
        ))
    } else {
        Ok(())
    }
}

/// A ring owned by one thread, which submits and reaps its own requests: no
/// completion thread, no hand-off, one `io_uring_enter` per batch (as fio does).
/// Behind [`crate::IoQueue`] on the uring path.
pub(crate) struct PrivateRing {
    ring: IoUring,
    slots: Vec<Option<IoRequest>>,
    free: Vec<u32>,
    /// The arenas registered with *this* ring and their base index. Requests look
    /// their arena up here, never in the engine's numbering, which may since have
    /// changed (an arena unregistered and its indices given to another).
    registered: Vec<(Weak<PageArena>, u32)>,
}

impl PrivateRing {
    pub(crate) fn new(depth: u32) -> Result<PrivateRing> {
        let ring = IoUring::new(depth).map_err(|e| Error::IoPathUnavailable {
            path: "uring",
            reason: format!("io_uring_setup with {depth} entries failed: {e}"),
        })?;
        let _ = ring.submitter().register_buffers_sparse(FIXED_BUFFER_SLOTS);
        Ok(PrivateRing {
            ring,
            slots: (0..depth).map(|_| None).collect(),
            free: (0..depth).rev().collect(),
            registered: Vec::new(),
        })
    }

    /// Registers `arena`, whose memory is `regions`, as fixed buffers at `base`.
    ///
    /// # Safety
    /// The regions must stay valid until the ring is dropped.
    pub(crate) unsafe fn register_arena(
        &mut self,
        arena: &Arc<PageArena>,
        base: u32,
        regions: &[libc::iovec],
    ) -> bool {
        // SAFETY: forwarded from this function's contract.
        let registered = unsafe {
            self.ring
                .submitter()
                .register_buffers_update(base, regions, None)
        }
        .is_ok();
        if registered {
            self.registered.push((Arc::downgrade(arena), base));
        }
        registered
    }

    /// The fixed-buffer index of `buf` in this ring, if its arena is registered here.
    fn fixed_buffer(&self, buf: &IoBuf) -> Option<u16> {
        let (arena, index) = buf.arena_page()?;
        self.registered.iter().find_map(|(registered, base)| {
            let registered = registered.upgrade()?;
            Arc::ptr_eq(&registered, arena).then(|| arena.fixed_buffer_at(*base, index))?
        })
    }

    pub(crate) fn capacity(&self) -> usize {
        self.slots.len()
    }

    pub(crate) fn in_flight(&self) -> usize {
        self.slots.len() - self.free.len()
    }

    /// Queues a prepared request; the caller checked that a slot is free.
    pub(crate) fn push(&mut self, mut request: IoRequest) {
        let slot = self
            .free
            .pop()
            .expect("a free slot (checked by the caller)");
        let fixed = self.fixed_buffer(&request.buf);
        let entry = build_entry(&mut request, fixed).user_data(u64::from(slot));
        self.slots[slot as usize] = Some(request);
        // SAFETY: the request (and its buffer) stays in its slot until its completion
        // is reaped; at most `depth` slots exist, so the queue has room.
        unsafe { self.ring.submission().push(&entry) }.expect("slots bound the submission queue");
    }

    /// Hands every pushed entry to the kernel (one system call).
    pub(crate) fn submit(&mut self) -> std::io::Result<()> {
        self.enter(0)
    }

    fn enter(&mut self, want: usize) -> std::io::Result<()> {
        loop {
            match self.ring.submit_and_wait(want) {
                Ok(_) => return Ok(()),
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => continue,
                Err(e) => return Err(e),
            }
        }
    }

    /// Waits until at least `min` completions are ready (entering the kernel only if
    /// fewer are), then moves every ready completion, not yet verified, into `out`.
    pub(crate) fn reap(&mut self, min: usize, out: &mut Vec<Reaped>) -> std::io::Result<()> {
        let want = min.min(self.in_flight());
        if self.ring.completion().len() < want || !self.ring.submission().is_empty() {
            self.enter(want)?;
        }
        let ready: Vec<(u64, i32)> = self
            .ring
            .completion()
            .map(|c| (c.user_data(), c.result()))
            .collect();
        for (user_data, result) in ready {
            let request = self.slots[user_data as usize]
                .take()
                .expect("completion for an empty slot");
            self.free.push(user_data as u32);
            let outcome = transfer_outcome(result, request.buf.len());
            out.push(Reaped::transferred(request, outcome));
        }
        Ok(())
    }
}

impl Drop for PrivateRing {
    fn drop(&mut self) {
        // The kernel may still write into buffers of requests in flight: wait for them.
        let mut sink = Vec::new();
        while self.in_flight() > 0 && self.reap(1, &mut sink).is_ok() {
            sink.clear();
        }
    }
}
