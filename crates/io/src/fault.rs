//! Fault injection for tests: a layer *beside* the real I/O paths, in the spirit of
//! SQLite's crash VFS. Every write and sync of a data file, the doublewrite file or a
//! redo log file calls [`check_write`] / [`check_sync`] / [`synced`] first. With no
//! plan armed (always, outside fault tests) these are one relaxed atomic load each.
//!
//! # What a plan can do
//!
//! - **Fail the Nth write or the Nth sync** (N = 1, 2, ... counted from arming) with an
//!   injected `EIO`: the hook returns [`Error::Io`] naming the file, and the message
//!   says the error was injected. Exactly that one call fails; later ones succeed.
//! - **Simulate a power loss.** With `power_loss` on, [`check_write`] saves the bytes
//!   about to be overwritten (read through a separate buffered descriptor opened by
//!   path, so `O_DIRECT` alignment does not matter; bytes past the end of the file are
//!   recorded as "did not exist"). [`synced`] discards the saved pre-images of that
//!   file's writes made before the sync began. [`power_loss`] puts back the pre-image
//!   of every write not yet synced, newest first, so the files hold what a machine that
//!   lost power would have kept; with a tear seed it leaves a random 512-byte-aligned
//!   prefix of some of the last writes in place (a torn page). The caller then aborts
//!   the process ([`power_loss_and_abort`]).
//! - **Count** the writes and syncs seen ([`counts`]), so a test can run a workload
//!   once with a counting-only plan and then choose N.
//!
//! # Arming
//!
//! In-process with [`arm`] / [`disarm`], or for a child process with the environment
//! variable `TARN_FAULT`, read once at the first hook call. Its syntax is a
//! comma-separated list of items ([`FaultPlan::parse`]):
//!
//! ```text
//! TARN_FAULT=fail_write=7          the 7th write fails with an injected EIO
//! TARN_FAULT=fail_sync=3           the 3rd sync fails with an injected EIO
//! TARN_FAULT=powerloss             record pre-images (power_loss() can be called)
//! TARN_FAULT=crash_write=12        power loss and abort right before the 12th write
//! TARN_FAULT=crash_sync=2,tear=99  power loss (tearing, seed 99) and abort right
//!                                  before the 2nd sync
//! TARN_FAULT=count                 count writes and syncs only
//! ```
//!
//! `crash_write` and `crash_sync` imply `powerloss`; `tear=SEED` only matters with them.
//! An empty value means no plan. A malformed value panics at the first hook call: a
//! fault test that silently ran without its faults would pass for the wrong reason.
//!
//! # Invariants
//! 1. With no plan armed, no hook takes a lock, allocates or makes a system call.
//! 2. The plan is process-global: tests that arm it must serialise themselves.
//! 3. A pre-image is saved before the write it belongs to reaches the kernel; for
//!    asynchronous writes the hook runs at submission, so a sync must come after the
//!    completion for the write to count as synced (the buffer pool always does so).
//! 4. After [`power_loss`], every later write or sync fails: nothing may reach the files
//!    between the simulated loss and the abort.
//!
//! A write that passed its hook on another thread just before [`power_loss`] may still
//! land afterwards; [`power_loss_and_abort`] keeps that window to the restore itself,
//! which is why crash tests abort rather than carry on.

use std::cell::Cell;
use std::fs::{File, OpenOptions};
use std::os::fd::RawFd;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Mutex, MutexGuard, Once};

use tarn_common::rng::Rng;
use tarn_common::{Error, Result};

/// The environment variable a child process is armed with.
pub const FAULT_ENV_VAR: &str = "TARN_FAULT";

/// The granularity of a torn write: a device writes at least this many bytes whole.
pub const TEAR_SECTOR_BYTES: usize = 512;

/// How many of the newest unsynced writes a tearing power loss may tear. The newest is
/// always torn (if it spans at least two sectors); each older one in the window with
/// probability one half.
pub const TEAR_WINDOW_WRITES: usize = 4;

const STATE_UNREAD: u8 = 0;
const STATE_OFF: u8 = 1;
const STATE_ARMED: u8 = 2;

/// Whether a plan is armed; `STATE_UNREAD` until `TARN_FAULT` has been read.
static STATE: AtomicU8 = AtomicU8::new(STATE_UNREAD);
static READ_ENVIRONMENT: Once = Once::new();
static ARMED: Mutex<Option<Armed>> = Mutex::new(None);

thread_local! {
    /// The write sequence number at this thread's last [`check_sync`]: the writes that
    /// its sync covers, for [`synced`].
    static SYNC_MARK: Cell<Option<u64>> = const { Cell::new(None) };
}

/// What to inject. The default plan injects nothing and only counts.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FaultPlan {
    /// The write (1-based) that fails with an injected `EIO`.
    pub fail_write: Option<u64>,
    /// The sync (1-based) that fails with an injected `EIO`.
    pub fail_sync: Option<u64>,
    /// Save pre-images of writes so that [`power_loss`] can undo unsynced ones.
    pub power_loss: bool,
    /// Right before this write (1-based): power loss, then abort.
    pub crash_write: Option<u64>,
    /// Right before this sync (1-based): power loss, then abort.
    pub crash_sync: Option<u64>,
    /// The seed for tearing writes when `crash_write` / `crash_sync` fire.
    pub tear_seed: Option<u64>,
}

impl FaultPlan {
    /// Parses the `TARN_FAULT` syntax (see the module documentation). `Ok(None)` for an
    /// empty value.
    pub fn parse(text: &str) -> std::result::Result<Option<FaultPlan>, String> {
        let mut plan = FaultPlan::default();
        let mut any = false;
        for item in text
            .split(',')
            .map(str::trim)
            .filter(|item| !item.is_empty())
        {
            any = true;
            let (name, value) = match item.split_once('=') {
                Some((name, value)) => (name.trim(), Some(value.trim())),
                None => (item, None),
            };
            let number = |what: &str| -> std::result::Result<u64, String> {
                let value = value.ok_or_else(|| format!("'{what}' needs a value: {what}=N"))?;
                value
                    .parse::<u64>()
                    .map_err(|_| format!("'{what}={value}': not a whole number"))
            };
            let ordinal = |what: &str| -> std::result::Result<u64, String> {
                match number(what)? {
                    0 => Err(format!("'{what}=0': counting starts at 1")),
                    n => Ok(n),
                }
            };
            match name {
                "fail_write" => plan.fail_write = Some(ordinal(name)?),
                "fail_sync" => plan.fail_sync = Some(ordinal(name)?),
                "crash_write" => plan.crash_write = Some(ordinal(name)?),
                "crash_sync" => plan.crash_sync = Some(ordinal(name)?),
                "tear" => plan.tear_seed = Some(number(name)?),
                "powerloss" | "power_loss" if value.is_none() => plan.power_loss = true,
                "count" if value.is_none() => {}
                _ => {
                    return Err(format!(
                        "unknown item '{item}' (expected fail_write=N, fail_sync=N, powerloss, \
                         crash_write=N, crash_sync=N, tear=SEED or count)"
                    ));
                }
            }
        }
        if plan.crash_write.is_some() || plan.crash_sync.is_some() {
            plan.power_loss = true;
        }
        Ok(any.then_some(plan))
    }
}

/// Writes and syncs the hooks have seen since the plan was armed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FaultCounts {
    pub writes: u64,
    pub syncs: u64,
}

/// What [`power_loss`] did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PowerLossReport {
    /// Unsynced writes whose pre-images were put back (torn ones included).
    pub writes_undone: usize,
    /// Writes left torn: the file, the write's offset, and how many bytes of the new
    /// data (a whole number of sectors, never all of them) were kept.
    pub writes_torn: Vec<(PathBuf, u64, usize)>,
}

/// One write not yet synced: what its range held before.
struct PreImage {
    sequence: u64,
    path: PathBuf,
    offset_bytes: u64,
    length_bytes: usize,
    /// The bytes that existed; shorter than `length_bytes` if the write went past the
    /// end of the file (the rest did not exist).
    old_bytes: Vec<u8>,
}

struct Armed {
    plan: FaultPlan,
    counts: FaultCounts,
    pre_images: Vec<PreImage>,
    /// Set by [`power_loss`]: every later write and sync fails.
    lost: bool,
}

/// Arms `plan` (replacing any plan, its counts and its saved pre-images).
pub fn arm(plan: FaultPlan) {
    read_environment();
    let mut armed = lock();
    *armed = Some(Armed {
        plan,
        counts: FaultCounts::default(),
        pre_images: Vec::new(),
        lost: false,
    });
    STATE.store(STATE_ARMED, Ordering::Release);
}

/// Disarms the plan and returns its final counts.
pub fn disarm() -> FaultCounts {
    read_environment();
    let mut armed = lock();
    STATE.store(STATE_OFF, Ordering::Release);
    armed.take().map(|armed| armed.counts).unwrap_or_default()
}

/// The counts of the plan armed now (zero if none).
pub fn counts() -> FaultCounts {
    if !is_armed() {
        return FaultCounts::default();
    }
    lock()
        .as_ref()
        .map(|armed| armed.counts)
        .unwrap_or_default()
}

/// Called before `len` bytes are written at `offset` of the file `path` (open as `fd`).
/// May fail (an injected error), or remember the bytes about to be overwritten so that a
/// simulated power loss can put them back.
#[inline]
pub fn check_write(path: &Path, fd: RawFd, offset: u64, len: usize) -> Result<()> {
    if !is_armed() {
        return Ok(());
    }
    check_write_armed(path, fd, offset, len)
}

/// Called before the file `path` is synced. May fail (an injected fsync error).
#[inline]
pub fn check_sync(path: &Path) -> Result<()> {
    if !is_armed() {
        return Ok(());
    }
    check_sync_armed(path)
}

/// Called after the file `path` was synced: its earlier writes are now durable.
#[inline]
pub fn synced(path: &Path) {
    if !is_armed() {
        return;
    }
    let mark = SYNC_MARK.with(Cell::take);
    let mut armed = lock();
    if let Some(armed) = armed.as_mut() {
        armed
            .pre_images
            .retain(|image| image.path != path || mark.is_some_and(|mark| image.sequence > mark));
    }
}

/// Puts back the pre-image of every unsynced write, newest first; with `tear`, leaves a
/// seeded random prefix of some of the newest writes in place. Afterwards every write
/// and sync fails until the plan is re-armed. Does nothing (and reports nothing) if no
/// plan records pre-images.
pub fn power_loss(tear: Option<u64>) -> Result<PowerLossReport> {
    if !is_armed() {
        return Ok(PowerLossReport::default());
    }
    let mut armed = lock();
    match armed.as_mut() {
        Some(armed) => restore(armed, tear),
        None => Ok(PowerLossReport::default()),
    }
}

/// [`power_loss`], then `std::process::abort()`: the crash half of a crash test. A
/// failure to restore is printed before aborting (the process is dying either way).
pub fn power_loss_and_abort(tear: Option<u64>) -> ! {
    match power_loss(tear) {
        Ok(report) => eprintln!(
            "tarn fault plan: simulated power loss undid {} unsynced writes, tore {}; aborting",
            report.writes_undone,
            report.writes_torn.len()
        ),
        Err(error) => eprintln!("tarn fault plan: simulated power loss failed: {error}"),
    }
    std::process::abort()
}

#[inline]
fn is_armed() -> bool {
    match STATE.load(Ordering::Relaxed) {
        STATE_OFF => false,
        STATE_ARMED => true,
        _ => {
            read_environment();
            STATE.load(Ordering::Acquire) == STATE_ARMED
        }
    }
}

/// Arms the plan in `TARN_FAULT`, once per process, before anything else touches it.
fn read_environment() {
    READ_ENVIRONMENT.call_once(|| {
        let text = std::env::var(FAULT_ENV_VAR).unwrap_or_default();
        let plan = FaultPlan::parse(&text)
            .unwrap_or_else(|reason| panic!("{FAULT_ENV_VAR}='{text}' is malformed: {reason}"));
        match plan {
            Some(plan) => {
                *lock() = Some(Armed {
                    plan,
                    counts: FaultCounts::default(),
                    pre_images: Vec::new(),
                    lost: false,
                });
                STATE.store(STATE_ARMED, Ordering::Release);
            }
            None => {
                // `arm` may have run on another thread first; never disarm it.
                let _ = STATE.compare_exchange(
                    STATE_UNREAD,
                    STATE_OFF,
                    Ordering::AcqRel,
                    Ordering::Acquire,
                );
            }
        }
    });
}

fn lock() -> MutexGuard<'static, Option<Armed>> {
    // A panic while holding the plan (a failed assertion in a test) leaves nothing half
    // changed that matters to the next test, which re-arms.
    ARMED
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn injected(operation: &'static str, path: &Path, what: String) -> Error {
    Error::io(
        operation,
        path,
        std::io::Error::other(format!(
            "injected EIO ({what}; fault plan from tarn_io::fault)"
        )),
    )
}

#[cold]
fn check_write_armed(path: &Path, fd: RawFd, offset: u64, len: usize) -> Result<()> {
    let mut guard = lock();
    let Some(armed) = guard.as_mut() else {
        return Ok(());
    };
    if armed.lost {
        return Err(injected(
            "write",
            path,
            "write after a simulated power loss".into(),
        ));
    }
    armed.counts.writes += 1;
    let number = armed.counts.writes;
    if armed.plan.crash_write == Some(number) {
        let tear = armed.plan.tear_seed;
        drop(guard);
        eprintln!(
            "tarn fault plan: crash before write #{number} (to '{}')",
            path.display()
        );
        power_loss_and_abort(tear);
    }
    if armed.plan.fail_write == Some(number) {
        return Err(injected(
            "write",
            path,
            format!("write #{number} of {len} bytes at offset {offset}"),
        ));
    }
    if armed.plan.power_loss {
        let old_bytes = read_pre_image(path, fd, offset, len)?;
        armed.pre_images.push(PreImage {
            sequence: number,
            path: path.to_path_buf(),
            offset_bytes: offset,
            length_bytes: len,
            old_bytes,
        });
    }
    Ok(())
}

#[cold]
fn check_sync_armed(path: &Path) -> Result<()> {
    let mut guard = lock();
    let Some(armed) = guard.as_mut() else {
        return Ok(());
    };
    if armed.lost {
        return Err(injected(
            "fsync",
            path,
            "sync after a simulated power loss".into(),
        ));
    }
    armed.counts.syncs += 1;
    let number = armed.counts.syncs;
    if armed.plan.crash_sync == Some(number) {
        let tear = armed.plan.tear_seed;
        drop(guard);
        eprintln!(
            "tarn fault plan: crash before sync #{number} (of '{}')",
            path.display()
        );
        power_loss_and_abort(tear);
    }
    if armed.plan.fail_sync == Some(number) {
        return Err(injected("fsync", path, format!("sync #{number}")));
    }
    // The sync covers every write whose hook ran before now.
    let mark = armed.counts.writes;
    SYNC_MARK.with(|cell| cell.set(Some(mark)));
    Ok(())
}

/// The bytes `offset .. offset + len` of `path` hold now, up to the end of the file.
fn read_pre_image(path: &Path, fd: RawFd, offset: u64, len: usize) -> Result<Vec<u8>> {
    // A buffered descriptor of its own: the writer's may be O_DIRECT, which needs
    // aligned buffers. If the path is gone (renamed), reach the same file through the
    // writer's descriptor.
    let file = File::open(path)
        .or_else(|_| File::open(format!("/proc/self/fd/{fd}")))
        .map_err(|source| Error::io("open for a pre-image", path, source))?;
    let mut old_bytes = vec![0u8; len];
    let mut filled = 0;
    while filled < len {
        match file.read_at(&mut old_bytes[filled..], offset + filled as u64) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
            Err(source) => return Err(Error::io("read a pre-image", path, source)),
        }
    }
    old_bytes.truncate(filled);
    Ok(old_bytes)
}

/// Undoes every unsynced write of `armed`, newest first (see [`power_loss`]).
fn restore(armed: &mut Armed, tear: Option<u64>) -> Result<PowerLossReport> {
    armed.lost = true;
    let images = std::mem::take(&mut armed.pre_images);
    let torn = choose_torn(&images, tear)?;
    let mut report = PowerLossReport {
        writes_undone: images.len(),
        writes_torn: Vec::new(),
    };
    let mut touched: Vec<PathBuf> = Vec::new();
    for image in images.iter().rev() {
        let Some(file) = open_for_restore(&image.path)? else {
            continue;
        };
        file.write_all_at(&image.old_bytes, image.offset_bytes)
            .map_err(|source| Error::io("restore a pre-image", &image.path, source))?;
        if image.old_bytes.len() < image.length_bytes {
            // The write extended the file: it ends where it ended before.
            let old_end_bytes = image.offset_bytes + image.old_bytes.len() as u64;
            let current = file
                .metadata()
                .map_err(|source| Error::io("stat", &image.path, source))?
                .len();
            if current > old_end_bytes {
                file.set_len(old_end_bytes)
                    .map_err(|source| Error::io("truncate", &image.path, source))?;
            }
        }
        if !touched.contains(&image.path) {
            touched.push(image.path.clone());
        }
    }
    // The kept prefixes of torn writes go back on top of everything older.
    for (image, new_prefix) in torn {
        let Some(file) = open_for_restore(&image.path)? else {
            continue;
        };
        file.write_all_at(&new_prefix, image.offset_bytes)
            .map_err(|source| Error::io("tear a write", &image.path, source))?;
        report
            .writes_torn
            .push((image.path.clone(), image.offset_bytes, new_prefix.len()));
    }
    for path in touched {
        if let Some(file) = open_for_restore(&path)? {
            file.sync_all()
                .map_err(|source| Error::io("fsync", &path, source))?;
        }
    }
    Ok(report)
}

/// Picks the writes to tear and reads the new bytes each keeps (before anything is put
/// back). Only a write that no newer unsynced write overlaps can be torn, so the bytes
/// in its range now are its own.
fn choose_torn(images: &[PreImage], tear: Option<u64>) -> Result<Vec<(&PreImage, Vec<u8>)>> {
    let Some(seed) = tear else {
        return Ok(Vec::new());
    };
    let mut rng = Rng::new(seed);
    let mut torn = Vec::new();
    let window_start = images.len().saturating_sub(TEAR_WINDOW_WRITES);
    for (index, image) in images.iter().enumerate().skip(window_start).rev() {
        let sectors = image.length_bytes / TEAR_SECTOR_BYTES;
        let newest = index + 1 == images.len();
        if sectors < 2 || !(newest || rng.percent(50)) {
            continue;
        }
        let overlapped = images[index + 1..].iter().any(|later| {
            later.path == image.path
                && later.offset_bytes < image.offset_bytes + image.length_bytes as u64
                && image.offset_bytes < later.offset_bytes + later.length_bytes as u64
        });
        if overlapped {
            continue;
        }
        let kept_bytes = TEAR_SECTOR_BYTES * (1 + rng.below(sectors as u64 - 1) as usize);
        let Some(file) = open_for_restore(&image.path)? else {
            continue;
        };
        let mut new_prefix = vec![0u8; kept_bytes];
        file.read_exact_at(&mut new_prefix, image.offset_bytes)
            .map_err(|source| Error::io("read a torn write", &image.path, source))?;
        torn.push((image, new_prefix));
    }
    Ok(torn)
}

/// The file at `path` opened for reading and writing, or `None` if it no longer exists
/// (a deleted file has nothing to put back).
fn open_for_restore(path: &Path) -> Result<Option<File>> {
    match OpenOptions::new().read(true).write(true).open(path) {
        Ok(file) => Ok(Some(file)),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(Error::io("open to restore", path, source)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_environment_syntax_parses_and_rejects_nonsense() {
        assert_eq!(FaultPlan::parse("").unwrap(), None);
        assert_eq!(
            FaultPlan::parse("fail_write=7").unwrap(),
            Some(FaultPlan {
                fail_write: Some(7),
                ..FaultPlan::default()
            })
        );
        let plan = FaultPlan::parse(" crash_sync=2 , tear=99 ")
            .unwrap()
            .unwrap();
        assert_eq!(plan.crash_sync, Some(2));
        assert_eq!(plan.tear_seed, Some(99));
        assert!(plan.power_loss, "crash_sync implies powerloss");
        assert!(FaultPlan::parse("powerloss").unwrap().unwrap().power_loss);
        assert_eq!(
            FaultPlan::parse("count").unwrap(),
            Some(FaultPlan::default())
        );
        for bad in [
            "fail_write=0",
            "fail_write",
            "fail_sync=x",
            "explode",
            "count=3",
        ] {
            assert!(FaultPlan::parse(bad).is_err(), "{bad} should be rejected");
        }
    }
}
