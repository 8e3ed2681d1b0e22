//! Where a bench keeps its data.
//!
//! With `--data-dir DIR` the bench uses `DIR`, creating it if needed, and leaves it in
//! place so the next run reuses what was loaded. Without it the bench makes a
//! temporary directory and removes it at the end. The temporary directory must be on a
//! real disk: I/O benches need `O_DIRECT`, which tmpfs refuses, and a RAM-backed file
//! would measure memory, not the device. So the candidates are the system temporary
//! directory and then the current directory, and the first one not on tmpfs or ramfs
//! wins.

use std::path::{Path, PathBuf};

use crate::report::Output;
use crate::{BenchError, Result};

/// File system types that live in memory.
const MEMORY_FILE_SYSTEMS: [&str; 2] = ["tmpfs", "ramfs"];

/// A bench's working directory: kept (`--data-dir`) or temporary (removed on drop).
pub struct WorkDir {
    path: PathBuf,
    temporary: Option<tempfile::TempDir>,
}

impl WorkDir {
    /// `explicit` if given (created if missing), else a new temporary directory on a
    /// real disk whose name starts with `prefix`.
    pub fn open(explicit: Option<&Path>, prefix: &str) -> Result<WorkDir> {
        if let Some(path) = explicit {
            std::fs::create_dir_all(path).map_err(|source| BenchError::Os {
                what: format!("creating the data directory '{}'", path.display()),
                source,
            })?;
            return Ok(WorkDir {
                path: path.to_path_buf(),
                temporary: None,
            });
        }
        let mounts = std::fs::read_to_string("/proc/self/mounts").unwrap_or_default();
        let current = std::env::current_dir().map_err(|source| BenchError::Os {
            what: "reading the current directory".into(),
            source,
        })?;
        let candidates = [std::env::temp_dir(), current];
        let parent = candidates
            .iter()
            .find(|dir| {
                let kind = file_system_type(&mounts, dir);
                !kind.is_some_and(|kind| MEMORY_FILE_SYSTEMS.contains(&kind))
            })
            .ok_or_else(|| {
                BenchError::Options(format!(
                    "no temporary directory on a real disk: {} and {} are both in memory; \
                     pass --data-dir on a disk",
                    candidates[0].display(),
                    candidates[1].display()
                ))
            })?;
        let temporary = tempfile::Builder::new()
            .prefix(prefix)
            .tempdir_in(parent)
            .map_err(|source| BenchError::Os {
                what: format!("creating a temporary directory in '{}'", parent.display()),
                source,
            })?;
        Ok(WorkDir {
            path: temporary.path().to_path_buf(),
            temporary: Some(temporary),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// True if the directory lives in memory (tmpfs, ramfs): I/O there measures
    /// memory, not a device.
    pub fn is_in_memory(&self) -> bool {
        let mounts = std::fs::read_to_string("/proc/self/mounts").unwrap_or_default();
        file_system_type(&mounts, &self.path)
            .is_some_and(|kind| MEMORY_FILE_SYSTEMS.contains(&kind))
    }

    /// Prints a warning that `consequence` when the directory lives in memory.
    pub fn warn_if_in_memory(&self, output: &Output, consequence: &str) {
        if self.is_in_memory() {
            output.progress(&format!(
                "warning: '{}' is in memory (tmpfs or ramfs): {consequence}",
                self.path.display()
            ));
        }
    }

    /// True if the directory is removed when the bench ends.
    pub fn is_temporary(&self) -> bool {
        self.temporary.is_some()
    }
}

/// The size of the file at `path`, in bytes.
pub fn file_bytes(path: &Path) -> Result<u64> {
    std::fs::metadata(path)
        .map(|m| m.len())
        .map_err(|source| BenchError::Os {
            what: format!("reading the size of '{}'", path.display()),
            source,
        })
}

/// The type of the file system holding `path`, from the text of `/proc/self/mounts`:
/// the mount with the longest mount point that contains `path`.
pub fn file_system_type<'a>(mounts: &'a str, path: &Path) -> Option<&'a str> {
    let path = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    mounts
        .lines()
        .filter_map(|line| {
            let mut fields = line.split_whitespace();
            let _device = fields.next()?;
            let mount_point = fields.next()?;
            let kind = fields.next()?;
            Some((unescape_mount_point(mount_point), kind))
        })
        .filter(|(mount_point, _)| path.starts_with(mount_point))
        .max_by_key(|(mount_point, _)| mount_point.as_os_str().len())
        .map(|(_, kind)| kind)
}

/// `/proc/self/mounts` writes spaces and tabs in mount points as octal escapes.
fn unescape_mount_point(field: &str) -> PathBuf {
    PathBuf::from(
        field
            .replace("\\040", " ")
            .replace("\\011", "\t")
            .replace("\\134", "\\"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_longest_containing_mount_point_names_the_file_system() {
        let mounts = "/dev/vda / ext4 rw 0 0\n\
                      tmpfs /tmp tmpfs rw 0 0\n\
                      tmpfs /tmpdata\\040x tmpfs rw 0 0\n";
        assert_eq!(
            file_system_type(mounts, Path::new("/tmp/x/y")),
            Some("tmpfs")
        );
        assert_eq!(
            file_system_type(mounts, Path::new("/tmpother")),
            Some("ext4")
        );
        assert_eq!(
            file_system_type(mounts, Path::new("/tmpdata x/f")),
            Some("tmpfs")
        );
        assert_eq!(file_system_type("", Path::new("/x")), None);
    }
}
