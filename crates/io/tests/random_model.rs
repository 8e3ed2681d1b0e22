//! A randomised test against a model: random synchronous and batched writes and reads,
//! syncs, explicit growth, cache drops and reopens, on two files, checked against an
//! in-memory map of what every page must hold. Runs on every path; the seed is printed
//! and `TARN_SEED=<seed>` replays a run.

#[macro_use]
mod common;

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::Arc;

use tarn_common::latch::LatchRegistry;
use tarn_common::rng::{Rng, test_seed};
use tarn_common::settings::{IoMethod, Settings};
use tarn_common::{Error, FileId, PageNo, Result};
use tarn_io::{
    AlignedBuf, CompletionQueue, DataDir, IoBuf, IoDone, IoRequest, PageArena, PageFile,
    PageStatus, SyncKind,
};

use common::*;

on_every_path!(random_writes_reads_and_syncs_always_match_an_in_memory_model);

const OPERATIONS: usize = 400;
const FILES: [FileId; 2] = [FileId(1), FileId(2)];
const ARENA_PAGES: usize = 24;
/// Pages are chosen below this many extents, so files stay a few MiB.
const EXTENTS_MAX: u64 = 5;

/// What the I/O layer must show: each file's page count, and the exact bytes of every
/// page written (as sealed, checksum included). Pages absent from `pages` read as
/// never written if they are below the page count.
struct Model {
    page_size_bytes: usize,
    page_counts: HashMap<FileId, u64>,
    pages: HashMap<(FileId, u32), Vec<u8>>,
}

impl Model {
    fn grow_to(&mut self, file_id: FileId, pages: u64) {
        let extent = extent_pages(self.page_size_bytes);
        let count = self.page_counts.entry(file_id).or_default();
        *count = (*count).max(pages.div_ceil(extent) * extent);
    }

    fn page_count(&self, file_id: FileId) -> u64 {
        self.page_counts.get(&file_id).copied().unwrap_or(0)
    }

    /// Checks the outcome of reading `page_no` of `file_id`. `count_range` is the page
    /// count before and after the read could have happened (they differ when writes
    /// in the same batch grew the file concurrently).
    fn check_read(
        &self,
        file_id: FileId,
        page_no: u32,
        result: &Result<PageStatus>,
        buf: &[u8],
        count_range: (u64, u64),
        context: &str,
    ) {
        let at = format!("{context}: read of {}:{page_no}", file_id.0);
        if let Some(expected) = self.pages.get(&(file_id, page_no)) {
            assert_eq!(
                result.as_ref().ok(),
                Some(&PageStatus::Valid),
                "{at}: {result:?}"
            );
            if let Some(i) = buf.iter().zip(expected).position(|(a, b)| a != b) {
                panic!("{at}: byte {i} differs from the last write");
            }
            return;
        }
        let page = u64::from(page_no);
        match result {
            Ok(PageStatus::Unwritten) if page < count_range.1 => {
                assert!(buf.iter().all(|&b| b == 0), "{at}: unwritten but not zero");
            }
            Err(Error::PageOutOfRange { page_count, .. }) if page >= count_range.0 => {
                assert!(*page_count <= page, "{at}: out of range below the end");
            }
            other => panic!(
                "{at}: page counts {count_range:?}, unexpected outcome {:?}",
                other.as_ref().map_err(|e| e.to_string())
            ),
        }
    }
}

struct Run {
    rng: Rng,
    method: IoMethod,
    settings: Settings,
    /// `None` only inside [`Run::reopen`], between closing and opening again.
    data_dir: Option<Arc<DataDir>>,
    model: Model,
    /// Arena pages not in flight, reused by batches (registered on uring).
    arena: Arc<PageArena>,
    arena_pages: Vec<IoBuf>,
    version: u64,
    step: usize,
}

impl Run {
    fn data_dir(&self) -> &Arc<DataDir> {
        self.data_dir.as_ref().expect("the data directory is open")
    }

    fn file(&self, file_id: FileId) -> Arc<PageFile> {
        self.data_dir().file(file_id).unwrap()
    }

    fn random_file(&mut self) -> FileId {
        FILES[self.rng.below(FILES.len() as u64) as usize]
    }

    /// Mostly pages inside or just past the allocated area, sometimes anywhere up to
    /// [`EXTENTS_MAX`] extents (which bounds the files' size).
    fn random_page(&mut self, file_id: FileId) -> u32 {
        let extent = extent_pages(self.model.page_size_bytes);
        let span = if self.rng.percent(85) {
            self.model.page_count(file_id).max(extent) + extent / 2
        } else {
            EXTENTS_MAX * extent
        };
        self.rng.below(span.min(EXTENTS_MAX * extent)) as u32
    }

    fn context(&self) -> String {
        format!("{} step {}", self.method, self.step)
    }

    fn next_page_contents(&mut self, buf: &mut [u8], file: &PageFile, page_no: u32) {
        self.version += 1;
        fill_page(buf, file.page_id(PageNo(page_no)), self.version);
    }

    fn sync_write(&mut self) {
        let file_id = self.random_file();
        let page_no = self.random_page(file_id);
        let file = self.file(file_id);
        let mut buf = AlignedBuf::zeroed(self.model.page_size_bytes);
        self.next_page_contents(&mut buf, &file, page_no);
        file.write_page(PageNo(page_no), &mut buf).unwrap();
        self.model.grow_to(file_id, u64::from(page_no) + 1);
        self.model.pages.insert((file_id, page_no), buf.to_vec());
    }

    fn sync_read(&mut self, file_id: FileId, page_no: u32) {
        let file = self.file(file_id);
        let mut buf = AlignedBuf::zeroed(self.model.page_size_bytes);
        buf.fill(0x5a);
        let result = file.read_page(PageNo(page_no), &mut buf);
        let count = self.model.page_count(file_id);
        let context = self.context();
        self.model
            .check_read(file_id, page_no, &result, &buf, (count, count), &context);
    }

    fn take_buffer(&mut self) -> IoBuf {
        if self.rng.percent(50)
            && let Some(buf) = self.arena_pages.pop()
        {
            return buf;
        }
        IoBuf::Owned(AlignedBuf::zeroed(self.model.page_size_bytes))
    }

    fn give_back(&mut self, buf: IoBuf) {
        if matches!(buf, IoBuf::Arena { .. }) {
            self.arena_pages.push(buf);
        }
    }

    /// One batch of reads and writes on distinct pages, with synchronous reads of
    /// other pages while it is in flight.
    fn batch(&mut self) {
        let size = 1 + self.rng.below(40) as usize;
        let mut chosen = HashSet::new();
        let mut requests = Vec::with_capacity(size);
        let mut written = HashMap::new();
        let counts_before: HashMap<FileId, u64> = FILES
            .iter()
            .map(|&f| (f, self.model.page_count(f)))
            .collect();
        for tag in 0..size as u64 {
            let file_id = self.random_file();
            let page_no = self.random_page(file_id);
            if !chosen.insert((file_id, page_no)) {
                continue;
            }
            let file = self.file(file_id);
            let mut buf = self.take_buffer();
            if self.rng.percent(50) {
                self.next_page_contents(buf.as_mut_slice(), &file, page_no);
                written.insert((file_id, page_no), ());
                requests.push(IoRequest::write(file, PageNo(page_no), buf, tag));
            } else {
                buf.as_mut_slice().fill(0xa5);
                requests.push(IoRequest::read(file, PageNo(page_no), buf, tag));
            }
        }
        let count = requests.len();
        let queue = CompletionQueue::new();
        self.data_dir().engine().submit(requests, &queue.sink());

        // Pages outside the batch can be read meanwhile; the model is unchanged for
        // them. (Page counts may grow under these reads, so pick written pages only.)
        let bystanders: Vec<(FileId, u32)> = self
            .model
            .pages
            .keys()
            .filter(|key| !chosen.contains(key))
            .take(3)
            .copied()
            .collect();
        for (file_id, page_no) in bystanders {
            self.sync_read(file_id, page_no);
        }

        let done = wait_for(&queue, count);
        for &(file_id, page_no) in written.keys() {
            self.model.grow_to(file_id, u64::from(page_no) + 1);
        }
        for completion in done {
            self.check_completion(completion, &counts_before);
        }
    }

    fn check_completion(&mut self, done: IoDone, counts_before: &HashMap<FileId, u64>) {
        let IoDone { request, result } = done;
        let file_id = request.file.file_id();
        let page_no = request.page_no.0;
        let context = format!("{} (batch, tag {})", self.context(), request.tag);
        match request.op {
            tarn_io::IoOp::Write => {
                assert_eq!(
                    result.as_ref().ok(),
                    Some(&PageStatus::Valid),
                    "{context}: write"
                );
                self.model
                    .pages
                    .insert((file_id, page_no), request.buf.as_slice().to_vec());
            }
            tarn_io::IoOp::Read => {
                let counts = (counts_before[&file_id], self.model.page_count(file_id));
                let buf = request.buf.as_slice();
                self.model
                    .check_read(file_id, page_no, &result, buf, counts, &context);
            }
        }
        self.give_back(request.buf);
    }

    fn sync(&mut self) {
        let file_id = self.random_file();
        let file = self.file(file_id);
        let kind = if self.rng.percent(50) {
            SyncKind::Data
        } else {
            SyncKind::All
        };
        file.sync(kind).unwrap();
    }

    fn grow(&mut self) {
        let file_id = self.random_file();
        let pages = u64::from(self.random_page(file_id)) + 1;
        self.file(file_id).ensure_page_count(pages).unwrap();
        self.model.grow_to(file_id, pages);
    }

    fn drop_cache_and_reread(&mut self) {
        let file_id = self.random_file();
        self.file(file_id).drop_os_cache().unwrap();
        for _ in 0..5 {
            let page_no = self.random_page(file_id);
            self.sync_read(file_id, page_no);
        }
    }

    fn reopen(&mut self) {
        let path = self.settings.data_dir.clone();
        // The directory's lock admits one open `DataDir`: close this one first.
        drop(self.data_dir.take());
        let data_dir = self.data_dir.insert(open_data_dir(&self.settings, &path));
        let registered = data_dir.engine().register_arena(&self.arena);
        assert_eq!(registered, self.method == IoMethod::Uring);
    }

    /// Page counts agree with the model, and lengths on disk are whole extents.
    fn check_files(&self) {
        for file_id in FILES {
            let file = self.file(file_id);
            let count = self.model.page_count(file_id);
            assert_eq!(
                file.page_count(),
                count,
                "{}: file {}",
                self.context(),
                file_id.0
            );
            let length = std::fs::metadata(file.path()).unwrap().len();
            assert_eq!(length, count * self.model.page_size_bytes as u64);
        }
    }

    /// Reads every written page back, in one batch and one by one.
    fn check_everything(&mut self) {
        let keys: Vec<(FileId, u32)> = self.model.pages.keys().copied().collect();
        let requests = keys
            .iter()
            .map(|&(file_id, page_no)| {
                let buf = IoBuf::Owned(AlignedBuf::zeroed(self.model.page_size_bytes));
                IoRequest::read(self.file(file_id), PageNo(page_no), buf, 0)
            })
            .collect();
        let counts: HashMap<FileId, u64> = FILES
            .iter()
            .map(|&f| (f, self.model.page_count(f)))
            .collect();
        for done in run_batch(self.data_dir().engine(), requests) {
            self.check_completion(done, &counts);
        }
        for (file_id, page_no) in keys {
            self.sync_read(file_id, page_no);
        }
    }
}

fn open_data_dir(settings: &Settings, path: &Path) -> Arc<DataDir> {
    assert_eq!(settings.data_dir, path);
    DataDir::open(settings, None, LatchRegistry::new(true)).unwrap()
}

fn random_writes_reads_and_syncs_always_match_an_in_memory_model(method: IoMethod) {
    let seed = test_seed(&format!("random_model::{method}"));
    let mut rng = Rng::new(seed);
    let page_size_bytes = [4096u32, 8192][rng.below(2) as usize];
    let dir = temp_dir();
    let settings = Settings {
        page_size_bytes,
        io_uring_queue_depth: 1 << rng.below(6), // 1 to 32
        io_threads: 1 + rng.below(4) as u32,
        ..settings(dir.path(), method)
    };
    let data_dir = open_data_dir(&settings, dir.path());
    let (arena, arena_pages) = PageArena::with_pages(ARENA_PAGES, page_size_bytes as usize);
    assert_eq!(
        data_dir.engine().register_arena(&arena),
        method == IoMethod::Uring
    );
    let mut run = Run {
        rng,
        method,
        settings,
        data_dir: Some(data_dir),
        model: Model {
            page_size_bytes: page_size_bytes as usize,
            page_counts: HashMap::new(),
            pages: HashMap::new(),
        },
        arena,
        arena_pages,
        version: 0,
        step: 0,
    };
    for step in 0..OPERATIONS {
        run.step = step;
        match run.rng.below(100) {
            0..30 => run.sync_write(),
            30..50 => {
                let file_id = run.random_file();
                let page_no = run.random_page(file_id);
                run.sync_read(file_id, page_no);
            }
            50..75 => run.batch(),
            75..85 => run.sync(),
            85..90 => run.grow(),
            90..96 => run.drop_cache_and_reread(),
            _ => run.reopen(),
        }
        run.check_files();
    }
    run.reopen();
    run.check_files();
    run.check_everything();
    assert_eq!(
        run.arena_pages.len(),
        ARENA_PAGES,
        "every arena page came back"
    );
    assert!(
        run.model.pages.len() > 50,
        "the run wrote too little to mean much"
    );
}
