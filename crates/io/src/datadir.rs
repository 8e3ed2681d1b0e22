//! The data directory: its lock, its control file and its data files.
//!
//! ```text
//! <data_dir>/
//!   tarn.lock         held with flock(LOCK_EX) by the one process using the directory
//!   tarn.control      format version, page size, extent size (written once, atomically)
//!   000001.tdf        data file 1: pages of page_size bytes, grown by extents
//!   000002.tdf        ...
//! ```
//!
//! The page size is fixed when the directory is created: every page and every offset
//! depends on it. Opening an existing directory with another page size is an error
//! that names both sizes; opening it without asking for a size uses the stored one.
//!
//! One process at a time: [`DataDir::open`] takes an exclusive, non-blocking `flock`
//! on `tarn.lock` before it reads or writes anything else in the directory (the
//! control file, the data files; the storage engine opens the redo log and runs
//! recovery only after it), and holds it until the `DataDir` is dropped. A second
//! open from another process fails at once with an error naming the directory. A
//! second open from this process waits up to `DATADIR_SAME_PROCESS_WAIT_MS` first:
//! an engine of this process may be finishing its shutdown (its last handles go with
//! threads that are ending), as when a benchmark reopens the directory between runs. The lock file is created if missing
//! and never deleted, so there is no race between one process removing it and
//! another locking it; the kernel releases the lock when the holder exits, however
//! it exits, so a crash never leaves a stale lock. The file holds the holder's
//! process id, for the error message only.
//!
//! The control file is created by writing a temporary file, syncing it, renaming it
//! into place and syncing the directory, so a crash leaves either no control file or a
//! complete one; its own checksum catches any other damage.

use std::collections::HashMap;
use std::fs::{self, File, OpenOptions};
use std::io::{Read, Seek, Write};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parking_lot::RwLock;

use tarn_common::latch::LatchRegistry;
use tarn_common::limits::{
    DATADIR_SAME_PROCESS_WAIT_MS, EXTENT_SIZE_BYTES, OPEN_FILES_MAX, PAGE_SIZES_BYTES,
};
use tarn_common::settings::Settings;
use tarn_common::{Error, FileId, Result};

use crate::engine::{IoConfig, IoEngine};
use crate::file::PageFile;

pub const CONTROL_FILE_NAME: &str = "tarn.control";
pub const LOCK_FILE_NAME: &str = "tarn.lock";
const CONTROL_MAGIC: &[u8; 8] = b"TARNDATA";
const CONTROL_FORMAT_VERSION: u32 = 1;
const CONTROL_BYTES: usize = 32;

/// The fixed parameters stored in `tarn.control`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ControlData {
    pub page_size_bytes: u32,
    pub extent_size_bytes: u32,
}

impl ControlData {
    fn encode(&self) -> [u8; CONTROL_BYTES] {
        let mut bytes = [0u8; CONTROL_BYTES];
        bytes[0..8].copy_from_slice(CONTROL_MAGIC);
        bytes[8..12].copy_from_slice(&CONTROL_FORMAT_VERSION.to_le_bytes());
        bytes[12..16].copy_from_slice(&self.page_size_bytes.to_le_bytes());
        bytes[16..20].copy_from_slice(&self.extent_size_bytes.to_le_bytes());
        let checksum = crc32c::crc32c(&bytes[..28]);
        bytes[28..32].copy_from_slice(&checksum.to_le_bytes());
        bytes
    }

    fn decode(bytes: &[u8], path: &Path) -> Result<ControlData> {
        let bad = |reason: String| Error::DataDir {
            path: path.to_path_buf(),
            reason,
        };
        if bytes.len() != CONTROL_BYTES || &bytes[0..8] != CONTROL_MAGIC {
            return Err(bad(format!(
                "{CONTROL_FILE_NAME} is not a Tarn control file"
            )));
        }
        let word = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes"));
        let (stored, computed) = (word(28), crc32c::crc32c(&bytes[..28]));
        if stored != computed {
            return Err(bad(format!(
                "{CONTROL_FILE_NAME} is corrupt: crc32c stored {stored:#010x}, computed {computed:#010x}"
            )));
        }
        if word(8) != CONTROL_FORMAT_VERSION {
            return Err(bad(format!(
                "format version {} is not supported (this build reads version {CONTROL_FORMAT_VERSION})",
                word(8)
            )));
        }
        let control = ControlData {
            page_size_bytes: word(12),
            extent_size_bytes: word(16),
        };
        if !PAGE_SIZES_BYTES.contains(&control.page_size_bytes) {
            return Err(bad(format!(
                "stored page size {} is invalid",
                control.page_size_bytes
            )));
        }
        Ok(control)
    }
}

pub struct DataDir {
    path: PathBuf,
    control: ControlData,
    engine: Arc<IoEngine>,
    latches: Arc<LatchRegistry>,
    files: RwLock<HashMap<FileId, Arc<PageFile>>>,
    /// `tarn.lock`, flocked exclusively: the directory is this handle's until it is
    /// dropped (closing the descriptor releases the lock).
    _lock_file: File,
}

impl DataDir {
    /// Opens the data directory named by `settings`, creating it on first use, and
    /// starts the I/O engine. `page_size_bytes` is the size to create with, or to
    /// insist on when the directory exists; `None` accepts the stored size.
    pub fn open(
        settings: &Settings,
        page_size_bytes: Option<u32>,
        latches: Arc<LatchRegistry>,
    ) -> Result<Arc<DataDir>> {
        let path = settings.data_dir.clone();
        let requested_page_size_bytes = page_size_bytes.unwrap_or(settings.page_size_bytes);
        // Checked before anything is created: a control file with an invalid page size
        // would make the directory impossible to open again.
        if !PAGE_SIZES_BYTES.contains(&requested_page_size_bytes) {
            return Err(Error::InvalidSetting {
                name: "page_size".into(),
                value: requested_page_size_bytes.to_string(),
                reason: "must be one of 4K, 8K, 16K, 32K or 64K".into(),
            });
        }
        create_directory(&path)?;
        // Before anything else in the directory is read or written.
        let lock_file = lock_directory(&path)?;
        let control = open_control(&path, requested_page_size_bytes, page_size_bytes.is_some())?;
        let engine = IoEngine::start(
            IoConfig {
                method: settings.io_method,
                uring_queue_depth: settings.io_uring_queue_depth,
                io_threads: settings.io_threads,
            },
            &path,
        )?;
        Ok(Arc::new(DataDir {
            path,
            control,
            engine,
            latches,
            files: RwLock::new(HashMap::new()),
            _lock_file: lock_file,
        }))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn page_size_bytes(&self) -> usize {
        self.control.page_size_bytes as usize
    }

    pub fn engine(&self) -> &Arc<IoEngine> {
        &self.engine
    }

    pub fn latches(&self) -> &Arc<LatchRegistry> {
        &self.latches
    }

    pub fn file_path(&self, file_id: FileId) -> PathBuf {
        self.path.join(format!("{:06}.tdf", file_id.0))
    }

    /// The open data file `file_id`, opening (or creating) it on first use.
    pub fn file(&self, file_id: FileId) -> Result<Arc<PageFile>> {
        if let Some(file) = self.files.read().get(&file_id) {
            return Ok(file.clone());
        }
        let mut files = self.files.write();
        if let Some(file) = files.get(&file_id) {
            return Ok(file.clone());
        }
        if files.len() >= OPEN_FILES_MAX {
            return Err(Error::OutOfResources(format!(
                "more than {OPEN_FILES_MAX} open data files"
            )));
        }
        let path = self.file_path(file_id);
        let existed = path.exists();
        let file = Arc::new(PageFile::open(
            &path,
            file_id,
            self.control.page_size_bytes,
            self.engine.method(),
            self.latches.register("io.file_grow", None),
        )?);
        if !existed {
            sync_directory(&self.path)?;
        }
        files.insert(file_id, file.clone());
        Ok(file)
    }
}

impl DataDir {
    /// Closes and deletes data file `file_id` (its pages must be out of every cache).
    pub fn remove_file(&self, file_id: FileId) -> Result<()> {
        self.files.write().remove(&file_id);
        let path = self.file_path(file_id);
        match fs::remove_file(&path) {
            Ok(()) => sync_directory(&self.path),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(Error::io("remove", path, e)),
        }
    }

    /// Syncs every open data file (a checkpoint's last step). Each sync passes the
    /// fault layer's hooks in [`PageFile::sync`].
    pub fn sync_all(&self, kind: crate::SyncKind) -> Result<()> {
        let files: Vec<Arc<PageFile>> = self.files.read().values().cloned().collect();
        files.iter().try_for_each(|file| file.sync(kind))
    }
}

fn create_directory(path: &Path) -> Result<()> {
    fs::create_dir_all(path).map_err(|e| Error::DataDir {
        path: path.to_path_buf(),
        reason: format!("cannot create the directory: {e}"),
    })
}

/// Opens (creating if missing) `tarn.lock` in `path` and takes an exclusive,
/// non-blocking `flock` on it; the lock lasts as long as the returned file. Fails with
/// [`Error::DataDir`] if another open file description holds it (another process at
/// once; another `DataDir` of this one after `DATADIR_SAME_PROCESS_WAIT_MS`), and with
/// an I/O error naming the file otherwise.
fn lock_directory(path: &Path) -> Result<File> {
    let lock_path = path.join(LOCK_FILE_NAME);
    let mut file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&lock_path)
        .map_err(|e| Error::io("open", &lock_path, e))?;
    let started = std::time::Instant::now();
    loop {
        // SAFETY: flock only reads its integer arguments, and the descriptor stays open
        // for the call (`file` owns it).
        let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
        if rc == 0 {
            break;
        }
        let error = std::io::Error::last_os_error();
        match error.raw_os_error() {
            Some(libc::EINTR) => continue,
            Some(libc::EWOULDBLOCK) => {
                let mut holder = String::new();
                let _ = file.rewind();
                let _ = file.read_to_string(&mut holder);
                let holder = holder.trim();
                // An engine of this very process may still be shutting down (its last
                // handles go with threads that are finishing): wait for it, a while.
                // Another process's lock is refused at once.
                let ours = holder == std::process::id().to_string();
                let waited_ms = started.elapsed().as_millis() as u64;
                if ours && waited_ms < DATADIR_SAME_PROCESS_WAIT_MS {
                    std::thread::sleep(std::time::Duration::from_millis(10));
                    continue;
                }
                let reason = match holder {
                    _ if ours => format!(
                        "still in use by an engine of this process after {waited_ms} ms \
                         ({LOCK_FILE_NAME} is locked)"
                    ),
                    "" => format!("in use by another Tarn process ({LOCK_FILE_NAME} is locked)"),
                    pid => format!(
                        "in use by another Tarn process ({LOCK_FILE_NAME} is locked, held by \
                         process {pid})"
                    ),
                };
                return Err(Error::DataDir {
                    path: path.to_path_buf(),
                    reason,
                });
            }
            _ => return Err(Error::io("flock", lock_path, error)),
        }
    }
    // Informational only (the lock is the flock, not the contents), so not synced.
    file.set_len(0)
        .and_then(|()| file.rewind())
        .and_then(|()| writeln!(file, "{}", std::process::id()))
        .map_err(|e| Error::io("write", &lock_path, e))?;
    Ok(file)
}

/// Reads `tarn.control`, or creates it in the (existing, locked) directory.
fn open_control(
    path: &Path,
    page_size_bytes: u32,
    page_size_explicit: bool,
) -> Result<ControlData> {
    let dir_error = |what: &str, e: std::io::Error| Error::DataDir {
        path: path.to_path_buf(),
        reason: format!("cannot {what}: {e}"),
    };
    let control_path = path.join(CONTROL_FILE_NAME);
    match fs::read(&control_path) {
        Ok(bytes) => {
            let control = ControlData::decode(&bytes, path)?;
            if page_size_explicit && control.page_size_bytes != page_size_bytes {
                return Err(Error::InvalidSetting {
                    name: "page_size".into(),
                    value: page_size_bytes.to_string(),
                    reason: format!(
                        "the data directory '{}' was created with page_size {}, which cannot change",
                        path.display(),
                        control.page_size_bytes
                    ),
                });
            }
            Ok(control)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let control = ControlData {
                page_size_bytes,
                extent_size_bytes: EXTENT_SIZE_BYTES as u32,
            };
            let temporary = path.join(format!("{CONTROL_FILE_NAME}.tmp"));
            let mut file = File::create(&temporary).map_err(|e| dir_error("write a file", e))?;
            file.write_all(&control.encode())
                .and_then(|()| file.sync_all())
                .map_err(|e| dir_error("write the control file", e))?;
            fs::rename(&temporary, &control_path)
                .map_err(|e| dir_error("rename the control file", e))?;
            sync_directory(path)?;
            Ok(control)
        }
        Err(e) => Err(dir_error("read the control file", e)),
    }
}

fn sync_directory(path: &Path) -> Result<()> {
    File::open(path)
        .and_then(|dir| dir.sync_all())
        .map_err(|source| Error::io("fsync directory", path, source))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_data_round_trips_and_detects_damage() {
        let control = ControlData {
            page_size_bytes: 8192,
            extent_size_bytes: 1 << 20,
        };
        let mut bytes = control.encode();
        assert_eq!(
            ControlData::decode(&bytes, Path::new("d")).unwrap(),
            control
        );
        bytes[13] ^= 1;
        let err = ControlData::decode(&bytes, Path::new("d"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("corrupt"), "{err}");
    }

    /// Every file in `dir` with its bytes, sorted by name.
    fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
        let mut files: Vec<(String, Vec<u8>)> = fs::read_dir(dir)
            .unwrap()
            .map(|entry| {
                let entry = entry.unwrap();
                let name = entry.file_name().to_string_lossy().into_owned();
                (name, fs::read(entry.path()).unwrap())
            })
            .collect();
        files.sort();
        files
    }

    #[test]
    fn a_second_open_fails_while_the_first_lives_and_touches_nothing() {
        let base = std::env::var_os("TARN_TEST_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(std::env::temp_dir);
        fs::create_dir_all(&base).unwrap();
        let dir = tempfile::tempdir_in(base).unwrap();
        let settings = Settings {
            data_dir: dir.path().join("data"),
            ..Settings::default()
        };
        let open = || DataDir::open(&settings, None, LatchRegistry::new(true));
        let first = open().unwrap();
        first.file(FileId(1)).unwrap();
        let before = snapshot(&settings.data_dir);
        let names: Vec<&str> = before.iter().map(|(name, _)| name.as_str()).collect();
        assert!(names.contains(&LOCK_FILE_NAME), "{names:?}");
        assert!(names.contains(&CONTROL_FILE_NAME), "{names:?}");

        let error = match open() {
            Ok(_) => panic!("a second open of a locked data directory succeeded"),
            Err(error) => error,
        };
        assert!(matches!(error, Error::DataDir { .. }), "{error:?}");
        let message = error.to_string();
        let prefix = format!(
            "data directory '{}': still in use by an engine of this process after ",
            settings.data_dir.display(),
        );
        assert!(message.starts_with(&prefix), "{message}");
        assert!(
            message.ends_with(&format!("ms ({LOCK_FILE_NAME} is locked)")),
            "{message}"
        );
        assert_eq!(error.mysql_code(), 1004);
        assert_eq!(snapshot(&settings.data_dir), before);

        // Released while the second open waits (an engine finishing its shutdown):
        // the open goes ahead.
        let releaser = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(200));
            drop(first);
        });
        let again = open().unwrap();
        assert_eq!(again.page_size_bytes(), settings.page_size_bytes as usize);
        releaser.join().unwrap();
    }
}
