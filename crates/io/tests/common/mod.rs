//! Helpers shared by the io crate's integration tests.
//!
//! Each test binary includes this module with `#[macro_use] mod common;` and uses only
//! part of it, hence the `dead_code` allowance.
#![allow(dead_code)]

use std::fs::OpenOptions;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tarn_common::latch::LatchRegistry;
use tarn_common::limits::EXTENT_SIZE_BYTES;
use tarn_common::rng::Rng;
use tarn_common::settings::{IoMethod, Settings};
use tarn_common::{FileId, Lsn, PageId, PageNo, Result};
use tarn_io::page::{self, PAGE_HEADER_BYTES};
use tarn_io::{CompletionQueue, DataDir, IoDone, IoEngine, IoRequest, PageFile, PageType};
use tempfile::TempDir;

/// Generates one `#[test]` per I/O path for each listed function `fn(IoMethod)`:
/// `buffered::name`, `direct::name` and `uring::name`.
#[allow(unused_macros)]
macro_rules! on_every_path {
    ($($test:ident),+ $(,)?) => {
        mod buffered {
            $( #[test] fn $test() { super::$test(::tarn_common::settings::IoMethod::Buffered) } )+
        }
        mod direct {
            $( #[test] fn $test() { super::$test(::tarn_common::settings::IoMethod::Direct) } )+
        }
        mod uring {
            $( #[test] fn $test() { super::$test(::tarn_common::settings::IoMethod::Uring) } )+
        }
    };
}

/// Page size used where a test does not care (the default).
pub const PAGE_SIZE: u32 = 16 << 10;

/// Where test data directories go: `TARN_TEST_DIR` if set, else the system temporary
/// directory. It must be on a file system that supports O_DIRECT (not tmpfs on older
/// kernels), or the direct and uring tests fail with `IoPathUnavailable`.
pub fn test_root() -> PathBuf {
    std::env::var_os("TARN_TEST_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(std::env::temp_dir)
}

pub fn temp_dir() -> TempDir {
    std::fs::create_dir_all(test_root()).expect("test directory root");
    tempfile::Builder::new()
        .prefix("tarn-io-test-")
        .tempdir_in(test_root())
        .expect("create a temporary test directory")
}

pub fn settings(data_dir: &Path, method: IoMethod) -> Settings {
    Settings {
        data_dir: data_dir.to_path_buf(),
        io_method: method,
        ..Settings::default()
    }
}

/// Opens (or creates) a data directory at `data_dir`.
pub fn open_at(
    data_dir: &Path,
    method: IoMethod,
    page_size_bytes: Option<u32>,
) -> Result<Arc<DataDir>> {
    DataDir::open(
        &settings(data_dir, method),
        page_size_bytes,
        LatchRegistry::new(true),
    )
}

/// A fresh data directory for `method` with the given page size.
pub fn fresh(method: IoMethod, page_size_bytes: u32) -> (TempDir, Arc<DataDir>) {
    let dir = temp_dir();
    let data_dir = open_at(dir.path(), method, Some(page_size_bytes))
        .unwrap_or_else(|e| panic!("open a {method} data directory: {e}"));
    assert_eq!(
        data_dir.engine().method(),
        method,
        "the engine runs the requested path"
    );
    (dir, data_dir)
}

/// Pages in one extent at this page size.
pub fn extent_pages(page_size_bytes: usize) -> u64 {
    EXTENT_SIZE_BYTES / page_size_bytes as u64
}

/// Fills `buf` with a typed page for `id` whose LSN and body are derived from
/// `version`, so every (page, version) pair has distinct contents.
pub fn fill_page(buf: &mut [u8], id: PageId, version: u64) {
    page::init(buf, id, PageType::RAW);
    page::set_page_lsn(buf, Lsn(version));
    Rng::new(body_seed(id, version)).fill(&mut buf[PAGE_HEADER_BYTES..]);
}

fn body_seed(id: PageId, version: u64) -> u64 {
    id.to_u64()
        .wrapping_mul(0x9e37_79b9_7f4a_7c15)
        .wrapping_add(version)
}

/// Panics unless `buf` holds exactly what `fill_page(_, id, version)` wrote, with a
/// short message (the first differing byte) instead of a 16 KiB dump.
pub fn assert_page_holds(buf: &[u8], id: PageId, version: u64) {
    assert_eq!(page::header_page_id(buf), id, "header page id");
    assert_eq!(page::page_type(buf), PageType::RAW, "page {id}: page type");
    assert_eq!(page::page_lsn(buf), Lsn(version), "page {id}: LSN");
    let mut expected = vec![0u8; buf.len() - PAGE_HEADER_BYTES];
    Rng::new(body_seed(id, version)).fill(&mut expected);
    if let Some(at) = buf[PAGE_HEADER_BYTES..]
        .iter()
        .zip(&expected)
        .position(|(a, b)| a != b)
    {
        panic!(
            "page {id} version {version}: body differs at byte {}",
            PAGE_HEADER_BYTES + at
        );
    }
}

/// Writes version `version` of page `page_no` through the synchronous API.
pub fn write_version(file: &PageFile, page_no: u32, version: u64) {
    let mut buf = tarn_io::AlignedBuf::zeroed(file.page_size_bytes());
    fill_page(&mut buf, file.page_id(PageNo(page_no)), version);
    file.write_page(PageNo(page_no), &mut buf)
        .unwrap_or_else(|e| panic!("write page {page_no}: {e}"));
}

/// Reads page `page_no` through the synchronous API and checks it holds `version`.
pub fn check_version(file: &PageFile, page_no: u32, version: u64) {
    let mut buf = tarn_io::AlignedBuf::zeroed(file.page_size_bytes());
    let status = file
        .read_page(PageNo(page_no), &mut buf)
        .unwrap_or_else(|e| panic!("read page {page_no}: {e}"));
    assert_eq!(status, tarn_io::PageStatus::Valid, "page {page_no}");
    assert_page_holds(&buf, file.page_id(PageNo(page_no)), version);
}

/// A read request for `page_no` into a fresh owned buffer, tagged with the page number.
pub fn read_request(file: &Arc<PageFile>, page_no: u32) -> IoRequest {
    let buf = tarn_io::IoBuf::Owned(tarn_io::AlignedBuf::zeroed(file.page_size_bytes()));
    IoRequest::read(file.clone(), PageNo(page_no), buf, u64::from(page_no))
}

/// A write request of version `version` of `page_no`, tagged with the page number.
pub fn write_request(file: &Arc<PageFile>, page_no: u32, version: u64) -> IoRequest {
    let mut buf = tarn_io::AlignedBuf::zeroed(file.page_size_bytes());
    fill_page(&mut buf, file.page_id(PageNo(page_no)), version);
    IoRequest::write(
        file.clone(),
        PageNo(page_no),
        tarn_io::IoBuf::Owned(buf),
        u64::from(page_no),
    )
}

/// Submits `requests` as one batch and waits for all of their completions.
pub fn run_batch(engine: &IoEngine, requests: Vec<IoRequest>) -> Vec<IoDone> {
    let count = requests.len();
    let queue = CompletionQueue::new();
    engine.submit(requests, &queue.sink());
    wait_for(&queue, count)
}

/// Waits until exactly `count` completions have arrived and returns them.
pub fn wait_for(queue: &CompletionQueue, count: usize) -> Vec<IoDone> {
    let mut done = Vec::with_capacity(count);
    while done.len() < count {
        queue.wait(1, &mut done);
    }
    assert_eq!(done.len(), count, "more completions than requests");
    done
}

/// The file id every single-file test uses.
pub const FILE: FileId = FileId(1);

/// Byte offset of page `page_no` in a file of `page_size_bytes` pages.
pub fn offset_of(page_no: u32, page_size_bytes: usize) -> u64 {
    u64::from(page_no) * page_size_bytes as u64
}

/// Reads bytes straight from the file, through the page cache (no O_DIRECT).
pub fn read_raw(path: &Path, offset: u64, len: usize) -> Vec<u8> {
    let file = std::fs::File::open(path).expect("open for a raw read");
    let mut bytes = vec![0u8; len];
    file.read_exact_at(&mut bytes, offset)
        .expect("raw read of the file");
    bytes
}

/// Overwrites bytes of the file behind Tarn's back (no O_DIRECT) and syncs them, as
/// a failing disk or a stray writer would.
pub fn write_raw(path: &Path, offset: u64, bytes: &[u8]) {
    let file = OpenOptions::new()
        .write(true)
        .open(path)
        .expect("open for a raw write");
    file.write_all_at(bytes, offset)
        .expect("raw write of the file");
    file.sync_all().expect("sync the raw write");
}
