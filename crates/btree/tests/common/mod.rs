//! Shared set-up for the B+tree tests: a data directory with 4 KiB pages (the
//! smallest size, so trees grow tall with few entries) and a small buffer pool.

#![allow(dead_code)]

use std::sync::Arc;

use tarn_btree::{NoRedo, Tree};
use tarn_buffer::{BufferPool, NoLog, PoolConfig};
use tarn_common::FileId;
use tarn_common::latch::LatchRegistry;
use tarn_common::settings::Settings;
use tarn_io::DataDir;

pub const PAGE_SIZE: u32 = 4096;
pub const FILE: FileId = FileId(7);

pub struct Fixture {
    pub dir: tempfile::TempDir,
    pub settings: Settings,
}

impl Fixture {
    pub fn new() -> Fixture {
        let base = std::env::var_os("TARN_TEST_DIR")
            .map(std::path::PathBuf::from)
            .unwrap_or_else(std::env::temp_dir);
        std::fs::create_dir_all(&base).expect("test directory root");
        let dir = tempfile::tempdir_in(base).expect("temporary directory");
        let settings = Settings {
            data_dir: dir.path().to_path_buf(),
            page_size_bytes: PAGE_SIZE,
            ..Settings::default()
        };
        Fixture { dir, settings }
    }

    /// A pool of `frames` frames in 2 instances.
    pub fn pool(&self, frames: u64) -> Arc<BufferPool> {
        let datadir =
            DataDir::open(&self.settings, Some(PAGE_SIZE), LatchRegistry::new(true)).unwrap();
        let mut config = PoolConfig::from_settings(&self.settings);
        config.size_bytes = frames * u64::from(PAGE_SIZE);
        config.instances = 2;
        Arc::new(BufferPool::open(config, datadir, Arc::new(NoLog)).unwrap())
    }

    pub fn create(&self, pool: &Arc<BufferPool>) -> Tree {
        Tree::create(
            pool.clone(),
            FILE,
            Arc::new(NoRedo::default()),
            "test.t.PRIMARY",
        )
        .unwrap()
    }

    pub fn open(&self, pool: &Arc<BufferPool>) -> Tree {
        Tree::open(
            pool.clone(),
            FILE,
            Arc::new(NoRedo::default()),
            "test.t.PRIMARY",
        )
        .unwrap()
    }
}
