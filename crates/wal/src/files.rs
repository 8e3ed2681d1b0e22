//! The log files: creation, validation, positional writes and reads of ring ranges,
//! syncs, checkpoint slots, and the `pmem` mappings.
//!
//! Every `pwrite` of a log file goes through `tarn_io::fault::check_write` first and
//! every `fdatasync` through `check_sync` / `synced`, so fault tests can fail or tear
//! them. Files are preallocated by writing zeros when the log is created (not with
//! `fallocate`, whose unwritten extents turn the first write of every block into a
//! metadata change that each `fdatasync` must then journal), so steady-state syncs
//! flush data only.

use std::fs::{File, OpenOptions};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use tarn_common::settings::LogDevice;
use tarn_common::{Error, Result};
use tarn_io::fault;
use tarn_io::pmem::Mapping;

use crate::format::{self, BLOCK_BYTES, Checkpoint, FILE_HEADER_BYTES, Geometry};

/// Bytes of zeros written per call while preallocating a new file.
const PREALLOCATE_WRITE_BYTES: usize = 1 << 20;

struct LogFile {
    path: PathBuf,
    /// Opened read-write without special flags: reads, headers, checkpoint slots.
    plain: File,
    /// Opened with `O_DSYNC` (and `O_DIRECT` if allowed) for the `dsync` device.
    dsync: Option<File>,
    /// The whole file mapped, for the `pmem` device.
    map: Option<Mapping>,
}

pub(crate) struct LogFiles {
    pub geometry: Geometry,
    files: Vec<LogFile>,
    /// Files written since their last sync, one bit per file (at most 64 files).
    dirty_mask: AtomicU64,
    /// True if log writes must be `BLOCK_BYTES`-aligned (`O_DIRECT`).
    pub direct: bool,
}

/// What [`LogFiles::open`] found or made.
pub(crate) struct Opened {
    pub files: LogFiles,
    pub checkpoint: Checkpoint,
    pub created: bool,
}

fn io_err<'a>(
    operation: &'static str,
    path: &'a Path,
) -> impl FnOnce(std::io::Error) -> Error + 'a {
    move |source| Error::io(operation, path, source)
}

impl LogFiles {
    /// Opens the log in `dir`, or creates it with `geometry` if `redo.000` is absent.
    /// An existing log keeps its own geometry.
    pub fn open(dir: &Path, wanted: Geometry, device: LogDevice) -> Result<Opened> {
        std::fs::create_dir_all(dir).map_err(io_err("create directory", dir))?;
        let first = format::file_path(dir, 0);
        let created = !first.exists();
        let geometry = if created {
            create(dir, &wanted)?;
            wanted
        } else {
            let found = read_geometry(&first)?;
            if found.file_size_bytes != wanted.file_size_bytes
                || found.file_count != wanted.file_count
            {
                tracing::info!(
                    dir = %dir.display(),
                    log_file_size = found.file_size_bytes,
                    log_files = found.file_count,
                    wanted_log_file_size = wanted.file_size_bytes,
                    wanted_log_files = wanted.file_count,
                    "the existing redo log keeps its own file size and count; \
                     log_file_size and log_files apply only when a log is created"
                );
            }
            found
        };
        let mut files = Vec::with_capacity(geometry.file_count as usize);
        let mut direct = false;
        for index in 0..geometry.file_count {
            let (file, is_direct) = open_file(dir, &geometry, index, device)?;
            direct |= is_direct;
            files.push(file);
        }
        let files = LogFiles {
            geometry,
            files,
            dirty_mask: AtomicU64::new(0),
            direct,
        };
        let checkpoint = files.read_checkpoint()?;
        Ok(Opened {
            files,
            checkpoint,
            created,
        })
    }

    /// The newer of the two valid checkpoint slots.
    fn read_checkpoint(&self) -> Result<Checkpoint> {
        let file = &self.files[0];
        let mut best: Option<Checkpoint> = None;
        for slot in 0..2 {
            let mut block = vec![0u8; BLOCK_BYTES as usize];
            file.plain
                .read_exact_at(&mut block, format::checkpoint_slot_offset(slot))
                .map_err(io_err("read checkpoint", &file.path))?;
            if let Some(c) = format::decode_checkpoint(&block)
                && best.as_ref().is_none_or(|b| c.sequence > b.sequence)
            {
                best = Some(c);
            }
        }
        let c = best.ok_or_else(|| Error::DataDir {
            path: file.path.clone(),
            reason: "neither redo log checkpoint slot is valid".into(),
        })?;
        let g = &self.geometry;
        if c.lsn < g.base_lsn || !(c.lsn - g.base_lsn).is_multiple_of(format::RECORD_ALIGN_BYTES) {
            return Err(Error::DataDir {
                path: file.path.clone(),
                reason: format!("checkpoint LSN {} is not a record position", c.lsn),
            });
        }
        if c.complete_lsn != 0 && c.complete_lsn < c.lsn {
            return Err(Error::DataDir {
                path: file.path.clone(),
                reason: format!(
                    "checkpoint complete LSN {} is below its LSN {}",
                    c.complete_lsn, c.lsn
                ),
            });
        }
        Ok(c)
    }

    /// Writes checkpoint `c` into slot `sequence % 2` and syncs it.
    pub fn write_checkpoint(&self, c: &Checkpoint) -> Result<()> {
        let file = &self.files[0];
        let block = format::encode_checkpoint(c);
        let offset = format::checkpoint_slot_offset((c.sequence % 2) as usize);
        fault::check_write(&file.path, file.plain.as_raw_fd(), offset, block.len())?;
        file.plain
            .write_all_at(&block, offset)
            .map_err(io_err("write checkpoint", &file.path))?;
        fault::check_sync(&file.path)?;
        file.plain
            .sync_data()
            .map_err(io_err("fdatasync", &file.path))?;
        fault::synced(&file.path);
        Ok(())
    }

    /// Writes `bytes` at ring position `lsn` (wrapping across files). With `O_DIRECT`
    /// the caller passes block-aligned positions, lengths and buffers.
    pub fn write_ring(&self, lsn: u64, bytes: &[u8]) -> Result<()> {
        for (index, offset, at, n) in self.geometry.pieces(lsn, bytes.len() as u64) {
            let file = &self.files[index];
            let fd = file.dsync.as_ref().unwrap_or(&file.plain);
            let piece = &bytes[at as usize..(at + n) as usize];
            fault::check_write(&file.path, fd.as_raw_fd(), offset, piece.len())?;
            fd.write_all_at(piece, offset)
                .map_err(io_err("write", &file.path))?;
            if file.dsync.is_some() {
                // An O_DSYNC write is a write and a sync in one call.
                fault::check_sync(&file.path)?;
                fault::synced(&file.path);
            } else {
                self.dirty_mask.fetch_or(1 << index, Ordering::Relaxed);
            }
        }
        Ok(())
    }

    /// Reads ring range `[lsn, lsn + out.len())` with positional reads.
    pub fn read_ring(&self, lsn: u64, out: &mut [u8]) -> Result<()> {
        for (index, offset, at, n) in self.geometry.pieces(lsn, out.len() as u64) {
            let file = &self.files[index];
            file.plain
                .read_exact_at(&mut out[at as usize..(at + n) as usize], offset)
                .map_err(io_err("read", &file.path))?;
        }
        Ok(())
    }

    /// `fdatasync`s every file written since its last sync.
    pub fn sync_dirty(&self) -> Result<()> {
        let mask = self.dirty_mask.swap(0, Ordering::AcqRel);
        for (index, file) in self.files.iter().enumerate() {
            if mask & (1 << index) == 0 {
                continue;
            }
            fault::check_sync(&file.path)?;
            file.plain
                .sync_data()
                .map_err(io_err("fdatasync", &file.path))?;
            fault::synced(&file.path);
        }
        Ok(())
    }

    /// `fdatasync`s every file, whoever wrote it.
    pub fn sync_all(&self) -> Result<()> {
        for file in &self.files {
            fault::check_sync(&file.path)?;
            file.plain
                .sync_data()
                .map_err(io_err("fdatasync", &file.path))?;
            fault::synced(&file.path);
        }
        Ok(())
    }

    /// Stores `bytes` at ring position `lsn` in the `pmem` mappings and writes their
    /// cache lines back (no fence: the caller fences once per batch).
    pub fn pmem_put(&self, lsn: u64, bytes: &[u8]) {
        for (index, offset, at, n) in self.geometry.pieces(lsn, bytes.len() as u64) {
            let map = self.files[index]
                .map
                .as_ref()
                .expect("pmem device maps its files");
            map.write_at(offset as usize, &bytes[at as usize..(at + n) as usize]);
            map.persist(offset as usize, n as usize);
        }
    }

    /// Copies ring range `[lsn, lsn + out.len())` out of the `pmem` mappings.
    pub fn pmem_get(&self, lsn: u64, out: &mut [u8]) {
        for (index, offset, at, n) in self.geometry.pieces(lsn, out.len() as u64) {
            let map = self.files[index]
                .map
                .as_ref()
                .expect("pmem device maps its files");
            map.read_at(offset as usize, &mut out[at as usize..(at + n) as usize]);
        }
    }

    pub fn is_map_sync(&self) -> bool {
        self.files
            .iter()
            .all(|f| f.map.as_ref().is_some_and(Mapping::is_map_sync))
    }
}

fn read_geometry(path: &Path) -> Result<Geometry> {
    let file = File::open(path).map_err(io_err("open", path))?;
    let mut block = vec![0u8; BLOCK_BYTES as usize];
    file.read_exact_at(&mut block, 0).map_err(|source| {
        if source.kind() == std::io::ErrorKind::UnexpectedEof {
            Error::DataDir {
                path: path.to_path_buf(),
                reason: "redo log file is shorter than its header".into(),
            }
        } else {
            Error::io("read header", path, source)
        }
    })?;
    format::decode_file_header(&block, path, Some(0))
}

/// Opens and checks file `index`; returns it and whether it uses `O_DIRECT`.
fn open_file(
    dir: &Path,
    geometry: &Geometry,
    index: u32,
    device: LogDevice,
) -> Result<(LogFile, bool)> {
    let path = format::file_path(dir, index as usize);
    let plain = match OpenOptions::new().read(true).write(true).open(&path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(Error::DataDir {
                path,
                reason: format!(
                    "redo log file is missing (the log has {} files)",
                    geometry.file_count
                ),
            });
        }
        Err(e) => return Err(Error::io("open", &path, e)),
    };
    let mut block = vec![0u8; BLOCK_BYTES as usize];
    plain
        .read_exact_at(&mut block, 0)
        .map_err(io_err("read header", &path))?;
    let found = format::decode_file_header(&block, &path, Some(index))?;
    if found != *geometry {
        return Err(Error::DataDir {
            path,
            reason: format!("file header {found:?} disagrees with redo.000's {geometry:?}"),
        });
    }
    let length = plain.metadata().map_err(io_err("stat", &path))?.len();
    if length < geometry.file_size_bytes {
        return Err(Error::DataDir {
            path,
            reason: format!(
                "redo log file is {length} bytes, its header says {}",
                geometry.file_size_bytes
            ),
        });
    }
    let mut direct = false;
    let mut dsync = None;
    let mut map = None;
    match device {
        LogDevice::Dsync => {
            let open = |flags| {
                OpenOptions::new()
                    .read(true)
                    .write(true)
                    .custom_flags(flags)
                    .open(&path)
            };
            match open(libc::O_DSYNC | libc::O_DIRECT) {
                Ok(f) => {
                    direct = true;
                    dsync = Some(f);
                }
                Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {
                    dsync = Some(open(libc::O_DSYNC).map_err(io_err("open O_DSYNC", &path))?);
                }
                Err(e) => return Err(Error::io("open O_DSYNC|O_DIRECT", &path, e)),
            }
        }
        LogDevice::Pmem => {
            map = Some(Mapping::shared_file(
                &plain,
                &path,
                geometry.file_size_bytes as usize,
            )?);
        }
        LogDevice::Fsync | LogDevice::None => {}
    }
    Ok((
        LogFile {
            path,
            plain,
            dsync,
            map,
        },
        direct,
    ))
}

/// Creates a new log: files 1.. first, then `redo.000` (written under a temporary name
/// and renamed), so a crash during creation leaves no `redo.000` and the next open
/// simply creates the log again.
fn create(dir: &Path, geometry: &Geometry) -> Result<()> {
    for index in (1..geometry.file_count).rev() {
        write_new_file(
            &format::file_path(dir, index as usize),
            geometry,
            index,
            None,
        )?;
    }
    let first = format::file_path(dir, 0);
    let temporary = dir.join(format!("{}.new", format::file_name(0)));
    let checkpoint = Checkpoint {
        sequence: 1,
        lsn: geometry.base_lsn,
        generation: 0,
        // Nothing is written yet: the first chunk starts here, stamped.
        complete_lsn: geometry.base_lsn,
        extra: Vec::new(),
    };
    write_new_file(&temporary, geometry, 0, Some(&checkpoint))?;
    std::fs::rename(&temporary, &first).map_err(io_err("rename", &first))?;
    let dir_handle = File::open(dir).map_err(io_err("open directory", dir))?;
    dir_handle
        .sync_all()
        .map_err(io_err("fsync directory", dir))?;
    tracing::info!(
        dir = %dir.display(),
        log_files = geometry.file_count,
        log_file_size = geometry.file_size_bytes,
        "created the redo log"
    );
    Ok(())
}

fn write_new_file(
    path: &Path,
    geometry: &Geometry,
    index: u32,
    checkpoint: Option<&Checkpoint>,
) -> Result<()> {
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(path)
        .map_err(io_err("create", path))?;
    let zeros = vec![0u8; PREALLOCATE_WRITE_BYTES];
    let mut offset = FILE_HEADER_BYTES;
    while offset < geometry.file_size_bytes {
        let n = (geometry.file_size_bytes - offset).min(zeros.len() as u64) as usize;
        fault::check_write(path, file.as_raw_fd(), offset, n)?;
        file.write_all_at(&zeros[..n], offset)
            .map_err(io_err("preallocate", path))?;
        offset += n as u64;
    }
    let mut head = vec![0u8; FILE_HEADER_BYTES as usize];
    head[..BLOCK_BYTES as usize].copy_from_slice(&format::encode_file_header(geometry, index));
    if let Some(c) = checkpoint {
        let at = format::checkpoint_slot_offset(0) as usize;
        head[at..at + BLOCK_BYTES as usize].copy_from_slice(&format::encode_checkpoint(c));
    }
    fault::check_write(path, file.as_raw_fd(), 0, head.len())?;
    file.write_all_at(&head, 0)
        .map_err(io_err("write header", path))?;
    fault::check_sync(path)?;
    file.sync_all().map_err(io_err("fsync", path))?;
    fault::synced(path);
    Ok(())
}
