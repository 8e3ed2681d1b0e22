//! Start-up: choosing the I/O path, and the data directory's own errors. Every bad
//! setting or unusable directory is a clear error at open time that names what is
//! wrong; nothing is half-created.

mod common;

use std::fs::OpenOptions;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use tarn_common::Error;
use tarn_common::latch::LatchRegistry;
use tarn_common::limits::EXTENT_SIZE_BYTES;
use tarn_common::settings::{IoMethod, Settings};
use tarn_io::datadir::CONTROL_FILE_NAME;
use tarn_io::{DataDir, IoConfig, IoEngine};
use tempfile::TempDir;

use common::*;

/// A temporary directory in /dev/shm if it is tmpfs (or ramfs, which never accepts
/// O_DIRECT), or `None` (with a note) if this machine has neither there.
fn tmpfs_dir() -> Option<TempDir> {
    const TMPFS_MAGIC: i64 = 0x0102_1994;
    const RAMFS_MAGIC: i64 = 0x8584_58f6;
    let shm = Path::new("/dev/shm");
    // SAFETY: `statfs` is plain old data; all-zero is a valid value.
    let mut stats: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: the path is a valid C string and `stats` is writable.
    let rc = unsafe { libc::statfs(c"/dev/shm".as_ptr(), &mut stats) };
    if rc != 0 || ![TMPFS_MAGIC, RAMFS_MAGIC].contains(&(stats.f_type as i64)) {
        eprintln!("note: {} is not tmpfs here; skipping", shm.display());
        return None;
    }
    Some(tempfile::tempdir_in(shm).expect("temporary directory in /dev/shm"))
}

/// Whether `dir`'s file system refuses `open(O_DIRECT)`. tmpfs did until Linux 6.6,
/// which made it accept O_DIRECT (served from memory, like any other tmpfs I/O).
fn refuses_o_direct(dir: &Path) -> bool {
    let path = dir.join("o_direct_probe");
    let opened = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .custom_flags(libc::O_DIRECT)
        .open(&path);
    let _ = std::fs::remove_file(&path);
    match opened {
        Ok(_) => false,
        Err(e) if e.raw_os_error() == Some(libc::EINVAL) => true,
        Err(e) => panic!("probing O_DIRECT in {}: {e}", dir.display()),
    }
}

fn open_error(settings: &Settings, page_size_bytes: Option<u32>) -> Error {
    match DataDir::open(settings, page_size_bytes, LatchRegistry::new(true)) {
        Ok(_) => panic!("opening {} should fail", settings.data_dir.display()),
        Err(error) => error,
    }
}

fn assert_path_unavailable(error: &Error, path: &str, reason_mentions: &[&str]) {
    match error {
        Error::IoPathUnavailable {
            path: reported,
            reason,
        } => {
            assert_eq!(*reported, path, "{error}");
            for part in reason_mentions {
                assert!(reason.contains(part), "'{part}' missing from: {error}");
            }
        }
        other => panic!("expected path '{path}' to be unavailable, got: {other}"),
    }
    let message = error.to_string();
    assert!(message.contains(&format!("I/O path '{path}'")), "{message}");
}

#[test]
fn direct_and_uring_on_tmpfs_are_unavailable_naming_path_and_reason_unless_the_kernel_allows_o_direct()
 {
    let Some(dir) = tmpfs_dir() else { return };
    let shm = dir.path().display().to_string();
    if refuses_o_direct(dir.path()) {
        let error = open_error(&settings(dir.path(), IoMethod::Direct), None);
        assert_path_unavailable(&error, "direct", &["O_DIRECT", &shm]);
        let error = open_error(&settings(dir.path(), IoMethod::Uring), None);
        assert_path_unavailable(&error, "uring", &["needs O_DIRECT", &shm]);
    } else {
        // Linux 6.6+: tmpfs accepts O_DIRECT, so both paths must simply work there.
        eprintln!("note: tmpfs accepts O_DIRECT on this kernel; checking that both paths work");
        for method in [IoMethod::Direct, IoMethod::Uring] {
            let data_dir = open_at(dir.path(), method, Some(4096)).unwrap();
            assert_eq!(data_dir.engine().method(), method);
            assert!(data_dir.engine().selection_reason().contains(&shm));
            let file = data_dir.file(FILE).unwrap();
            write_version(&file, 2, 9);
            check_version(&file, 2, 9);
        }
    }
}

#[test]
fn auto_on_tmpfs_falls_back_to_buffered_and_says_why_unless_the_kernel_allows_o_direct() {
    let Some(dir) = tmpfs_dir() else { return };
    let data_dir = open_at(dir.path(), IoMethod::Auto, Some(4096)).unwrap();
    let engine = data_dir.engine();
    let reason = engine.selection_reason();
    if refuses_o_direct(dir.path()) {
        assert_eq!(engine.method(), IoMethod::Buffered, "{reason}");
        assert!(reason.contains("O_DIRECT is unavailable"), "{reason}");
        assert!(
            reason.contains(&dir.path().display().to_string()),
            "{reason}"
        );
    } else {
        eprintln!(
            "note: tmpfs accepts O_DIRECT on this kernel; auto picked {}",
            engine.method()
        );
        assert_ne!(engine.method(), IoMethod::Buffered, "{reason}");
    }
    let file = data_dir.file(FILE).unwrap();
    assert_eq!(file.method(), engine.method());
    write_version(&file, 0, 4);
    check_version(&file, 0, 4);
}

#[test]
fn auto_on_a_real_disk_picks_an_o_direct_path_and_says_why() {
    let dir = temp_dir();
    let data_dir = open_at(dir.path(), IoMethod::Auto, None).unwrap();
    let (method, reason) = (
        data_dir.engine().method(),
        data_dir.engine().selection_reason(),
    );
    match method {
        IoMethod::Uring => assert!(
            reason.starts_with("io_uring works and O_DIRECT works"),
            "{reason}"
        ),
        IoMethod::Direct => assert!(reason.starts_with("io_uring is unavailable"), "{reason}"),
        other => panic!("auto chose {other} on {}: {reason}", dir.path().display()),
    }
    assert!(
        reason.contains(&dir.path().display().to_string()),
        "{reason}"
    );
}

#[test]
fn a_direct_path_whose_probe_cannot_run_is_unavailable_and_auto_falls_back() {
    // The probe file cannot be created: the directory does not exist.
    let dir = temp_dir();
    let missing = dir.path().join("missing");
    let config = |method| IoConfig {
        method,
        uring_queue_depth: 8,
        io_threads: 2,
    };
    let shown = missing.display().to_string();
    for (method, name) in [(IoMethod::Direct, "direct"), (IoMethod::Uring, "uring")] {
        match IoEngine::start(config(method), &missing) {
            Ok(_) => panic!("{name} started without a probe directory"),
            Err(error) => {
                assert_path_unavailable(&error, name, &[&shown, "No such file"]);
                // The file system was never asked about O_DIRECT, so do not blame it.
                assert!(!error.to_string().contains("refuses O_DIRECT"), "{error}");
            }
        }
    }
    let engine = IoEngine::start(config(IoMethod::Auto), &missing).unwrap();
    assert_eq!(engine.method(), IoMethod::Buffered);
    assert!(
        engine.selection_reason().contains(&shown),
        "{}",
        engine.selection_reason()
    );
}

#[test]
fn an_unusable_data_directory_is_a_data_dir_error_naming_it() {
    let dir = temp_dir();
    let regular_file = dir.path().join("not-a-directory");
    std::fs::write(&regular_file, b"x").unwrap();
    let control_is_a_directory = dir.path().join("control-is-a-directory");
    std::fs::create_dir_all(control_is_a_directory.join(CONTROL_FILE_NAME)).unwrap();

    let cases: [(PathBuf, &str); 3] = [
        (regular_file.join("data"), "cannot create the directory"),
        (regular_file.clone(), "cannot create the directory"),
        (control_is_a_directory, "cannot read the control file"),
    ];
    for method in IoMethod::CONCRETE {
        for (path, reason_starts) in &cases {
            let error = open_error(&settings(path, method), None);
            match &error {
                Error::DataDir {
                    path: reported,
                    reason,
                } => {
                    assert_eq!(reported, path);
                    assert!(reason.starts_with(reason_starts), "{error}");
                }
                other => panic!(
                    "{}: expected a data directory error, got {other}",
                    path.display()
                ),
            }
            assert!(
                error.to_string().contains(&path.display().to_string()),
                "{error}"
            );
        }
    }
}

#[test]
fn reopening_with_another_page_size_names_both_sizes_and_none_uses_the_stored_size() {
    let dir = temp_dir();
    drop(open_at(dir.path(), IoMethod::Buffered, Some(8192)).unwrap());

    let error = match open_at(dir.path(), IoMethod::Buffered, Some(32768)) {
        Ok(_) => panic!("the page size changed"),
        Err(error) => error,
    };
    assert!(
        matches!(&error, Error::InvalidSetting { name, .. } if name == "page_size"),
        "{error}"
    );
    let message = error.to_string();
    for part in ["32768", "8192", &dir.path().display().to_string()] {
        assert!(message.contains(part), "'{part}' missing from: {message}");
    }

    // The default in the settings (16 KiB) does not override the stored size either.
    let data_dir = open_at(dir.path(), IoMethod::Buffered, None).unwrap();
    assert_eq!(data_dir.page_size_bytes(), 8192);
    assert_eq!(data_dir.file(FILE).unwrap().page_size_bytes(), 8192);
    drop(data_dir);
    let data_dir = open_at(dir.path(), IoMethod::Buffered, Some(8192)).unwrap();
    assert_eq!(data_dir.page_size_bytes(), 8192);
}

#[test]
fn a_new_data_directory_takes_the_page_size_from_the_settings_when_none_is_given() {
    let dir = temp_dir();
    let settings = Settings {
        page_size_bytes: 4096,
        ..settings(dir.path(), IoMethod::Buffered)
    };
    let data_dir = DataDir::open(&settings, None, LatchRegistry::new(true)).unwrap();
    assert_eq!(data_dir.page_size_bytes(), 4096);
    let file = data_dir.file(FILE).unwrap();
    write_version(&file, 0, 1);
    assert_eq!(file.page_count(), EXTENT_SIZE_BYTES / 4096);
}

#[test]
fn an_invalid_page_size_is_rejected_before_anything_is_created() {
    let dir = temp_dir();
    let data_path = dir.path().join("data");
    for (page_size, from_settings) in [(3000, false), (3000, true), (128 << 10, false), (0, true)] {
        let settings = Settings {
            page_size_bytes: if from_settings { page_size } else { 16384 },
            ..settings(&data_path, IoMethod::Buffered)
        };
        let explicit = (!from_settings).then_some(page_size);
        let error = open_error(&settings, explicit);
        assert!(
            matches!(&error, Error::InvalidSetting { name, value, .. }
                if name == "page_size" && *value == page_size.to_string()),
            "page size {page_size}: {error}"
        );
        assert!(
            !data_path.join(CONTROL_FILE_NAME).exists(),
            "page size {page_size} left a control file behind"
        );
    }
    // A valid size still creates the directory afterwards.
    assert_eq!(
        open_at(&data_path, IoMethod::Buffered, Some(4096))
            .unwrap()
            .page_size_bytes(),
        4096
    );
}

#[test]
fn zero_io_threads_or_queue_depth_is_rejected_at_start_instead_of_hanging() {
    let dir = temp_dir();
    for (method, name, threads, depth) in [
        (IoMethod::Buffered, "io_threads", 0, 8),
        (IoMethod::Direct, "io_threads", 0, 8),
        (IoMethod::Uring, "io_uring_queue_depth", 4, 0),
    ] {
        let settings = Settings {
            io_threads: threads,
            io_uring_queue_depth: depth,
            ..settings(dir.path(), method)
        };
        let error = open_error(&settings, None);
        assert!(
            matches!(&error, Error::InvalidSetting { name: reported, .. } if reported == name),
            "{method}: {error}"
        );
    }
}

fn damaged_control_error(damage: impl FnOnce(&mut Vec<u8>)) -> String {
    let dir = temp_dir();
    drop(open_at(dir.path(), IoMethod::Buffered, Some(8192)).unwrap());
    let control = dir.path().join(CONTROL_FILE_NAME);
    let mut bytes = std::fs::read(&control).unwrap();
    damage(&mut bytes);
    std::fs::write(&control, &bytes).unwrap();
    let error = match open_at(dir.path(), IoMethod::Buffered, None) {
        Ok(_) => panic!("a damaged control file was accepted"),
        Err(error) => error,
    };
    assert!(
        matches!(&error, Error::DataDir { path, .. } if path == dir.path()),
        "{error}"
    );
    let message = error.to_string();
    assert!(
        message.contains(&dir.path().display().to_string()),
        "{message}"
    );
    message
}

/// Rewrites the control file's checksum, so only the field changed is wrong.
fn reseal_control(bytes: &mut [u8]) {
    let checksum = crc32c::crc32c(&bytes[..28]);
    bytes[28..32].copy_from_slice(&checksum.to_le_bytes());
}

#[test]
fn a_damaged_control_file_is_a_clear_data_directory_error() {
    let corrupt = damaged_control_error(|bytes| bytes[13] ^= 0x40);
    assert!(
        corrupt.contains("tarn.control is corrupt: crc32c stored"),
        "{corrupt}"
    );

    for damage in [
        (|bytes: &mut Vec<u8>| bytes.truncate(20)) as fn(&mut Vec<u8>),
        |bytes| bytes.clear(),
        |bytes| bytes.push(0),
        |bytes| bytes[0] = b'X',
    ] {
        let message = damaged_control_error(damage);
        assert!(message.contains("is not a Tarn control file"), "{message}");
    }

    let future = damaged_control_error(|bytes| {
        bytes[8..12].copy_from_slice(&2u32.to_le_bytes());
        reseal_control(bytes);
    });
    assert!(
        future.contains("format version 2 is not supported"),
        "{future}"
    );

    let bad_size = damaged_control_error(|bytes| {
        bytes[12..16].copy_from_slice(&3000u32.to_le_bytes());
        reseal_control(bytes);
    });
    assert!(
        bad_size.contains("stored page size 3000 is invalid"),
        "{bad_size}"
    );
}
