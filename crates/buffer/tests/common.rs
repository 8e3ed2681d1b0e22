//! Shared set-up for the buffer pool tests: a data directory with pages whose contents
//! say which page they are and which version of it they hold.

#![allow(dead_code)]

use std::sync::{Arc, Mutex, Weak};

use tarn_buffer::{BufferPool, LogFlush, NoLog, PoolConfig};
use tarn_common::latch::LatchRegistry;
use tarn_common::settings::{IoMethod, Settings};
use tarn_common::{FileId, PageId, PageNo};
use tarn_io::{AlignedBuf, DataDir, PageType, page};

pub const FILE: FileId = FileId(1);
pub const PAGE_SIZE: u32 = 4096;
/// Offsets of the fields every test page carries.
pub const PAGE_NO_AT: usize = 32;
pub const VERSION_AT: usize = 40;
pub const VERSION_COPY_AT: usize = PAGE_SIZE as usize - 8;

pub fn page_id(page_no: u32) -> PageId {
    PageId::new(FILE, PageNo(page_no))
}

pub struct Fixture {
    pub dir: tempfile::TempDir,
    pub settings: Settings,
    /// The open `DataDir`, if any handle to it lives: a directory's lock admits one
    /// open at a time, so the pools and the direct reads of a test share it, and a
    /// fresh one is opened only once every handle is gone (as after a restart).
    open: Mutex<Weak<DataDir>>,
}

impl Fixture {
    /// A data directory (4 KiB pages) whose file 1 holds `pages` pages at version 0.
    pub fn new(pages: u32, method: IoMethod) -> Fixture {
        let base = std::env::var_os("TARN_TEST_DIR")
            .map(std::path::PathBuf::from)
            .unwrap_or_else(std::env::temp_dir);
        std::fs::create_dir_all(&base).expect("test directory root");
        let dir = tempfile::tempdir_in(base).expect("temporary directory");
        let settings = Settings {
            data_dir: dir.path().to_path_buf(),
            page_size_bytes: PAGE_SIZE,
            io_method: method,
            ..Settings::default()
        };
        let fixture = Fixture {
            dir,
            settings,
            open: Mutex::new(Weak::new()),
        };
        let datadir = fixture.datadir();
        let file = datadir.file(FILE).unwrap();
        let mut buf = AlignedBuf::zeroed(PAGE_SIZE as usize);
        for page_no in 0..pages {
            format_page(&mut buf, page_no, 0);
            file.write_page(PageNo(page_no), &mut buf).unwrap();
        }
        fixture
    }

    /// The data directory: the open one if a handle to it lives, else opened anew.
    pub fn datadir(&self) -> Arc<DataDir> {
        let mut open = self.open.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(datadir) = open.upgrade() {
            return datadir;
        }
        let datadir =
            DataDir::open(&self.settings, Some(PAGE_SIZE), LatchRegistry::new(true)).unwrap();
        *open = Arc::downgrade(&datadir);
        datadir
    }

    pub fn pool(&self, frames_per_instance: u64, instances: u32) -> BufferPool {
        self.pool_with(frames_per_instance, instances, |_| {}, Arc::new(NoLog))
    }

    pub fn pool_with(
        &self,
        frames_per_instance: u64,
        instances: u32,
        adjust: impl FnOnce(&mut PoolConfig),
        wal: Arc<dyn LogFlush>,
    ) -> BufferPool {
        let mut config = PoolConfig::from_settings(&self.settings);
        config.size_bytes = frames_per_instance * u64::from(instances) * u64::from(PAGE_SIZE);
        config.instances = instances;
        adjust(&mut config);
        BufferPool::open(config, self.datadir(), wal).unwrap()
    }

    /// Reads a page straight from the file, bypassing any pool.
    pub fn read_from_disk(&self, page_no: u32) -> Vec<u8> {
        let datadir = self.datadir();
        let mut buf = AlignedBuf::zeroed(PAGE_SIZE as usize);
        datadir
            .file(FILE)
            .unwrap()
            .read_page(PageNo(page_no), &mut buf)
            .unwrap();
        buf.to_vec()
    }
}

/// Formats a test page: its number and a version, stored twice (start and end).
pub fn format_page(buf: &mut [u8], page_no: u32, version: u64) {
    page::init(buf, page_id(page_no), PageType::RAW);
    set_version(buf, page_no, version);
}

pub fn set_version(buf: &mut [u8], page_no: u32, version: u64) {
    buf[PAGE_NO_AT..PAGE_NO_AT + 8].copy_from_slice(&u64::from(page_no).to_le_bytes());
    buf[VERSION_AT..VERSION_AT + 8].copy_from_slice(&version.to_le_bytes());
    buf[VERSION_COPY_AT..VERSION_COPY_AT + 8].copy_from_slice(&version.to_le_bytes());
}

pub fn read_u64(buf: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(buf[at..at + 8].try_into().unwrap())
}

/// The (page number, version) a test page holds, checking both copies agree.
pub fn page_version(buf: &[u8]) -> (u32, u64) {
    let version = read_u64(buf, VERSION_AT);
    assert_eq!(
        version,
        read_u64(buf, VERSION_COPY_AT),
        "torn page contents"
    );
    (read_u64(buf, PAGE_NO_AT) as u32, version)
}
