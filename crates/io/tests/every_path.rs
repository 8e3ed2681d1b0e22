//! The suite every I/O path passes: round trips, batches, concurrent writers, syncs,
//! extent growth, never-written pages and arena buffers. Each function below runs once
//! per path (`buffered::…`, `direct::…`, `uring::…`).

#[macro_use]
mod common;

use std::collections::HashSet;
use std::sync::Arc;

use tarn_common::limits::{EXTENT_SIZE_BYTES, IO_THREAD_QUEUE_CAPACITY, PAGE_SIZES_BYTES};
use tarn_common::rng::{Rng, test_seed};
use tarn_common::settings::IoMethod;
use tarn_common::{Error, FileId, PageNo};
use tarn_io::{
    AlignedBuf, CompletionQueue, DataDir, IoBuf, IoRequest, PageArena, PageStatus, RawBuf, SyncKind,
};

use common::*;

on_every_path!(
    pages_of_every_size_read_back_exactly_as_written,
    a_batch_of_reads_completes_each_request_once_with_its_own_page,
    batches_deeper_than_a_tiny_queue_wait_for_free_slots_and_all_complete,
    a_batch_of_writes_lands_and_reads_back_through_both_apis,
    threads_writing_different_pages_of_one_file_lose_no_write,
    fdatasync_and_fsync_succeed_and_written_pages_survive_a_reopen,
    files_grow_by_whole_extents_and_reads_past_the_end_are_out_of_range,
    concurrent_growth_never_shrinks_the_page_count,
    a_never_written_page_inside_an_extent_reads_as_unwritten_zeroes,
    arena_pages_carry_batches_and_only_uring_registers_them,
    raw_buffers_lent_by_another_layer_carry_reads_and_writes,
    a_caller_owned_queue_keeps_its_depth_in_flight_and_returns_every_request,
);

fn pages_of_every_size_read_back_exactly_as_written(method: IoMethod) {
    for page_size in PAGE_SIZES_BYTES {
        let (_dir, data_dir) = fresh(method, page_size);
        assert_eq!(data_dir.page_size_bytes(), page_size as usize);
        let file = data_dir.file(FILE).unwrap();
        assert_eq!(file.method(), method);
        // A few neighbours, the last page of the first extent and one far away.
        let last_of_extent = extent_pages(page_size as usize) as u32 - 1;
        let pages = [0, 1, 2, 7, last_of_extent, 3 * last_of_extent + 5];
        for (version, &page_no) in pages.iter().enumerate() {
            write_version(&file, page_no, 100 + version as u64);
        }
        for (version, &page_no) in pages.iter().enumerate() {
            check_version(&file, page_no, 100 + version as u64);
        }
        // Overwriting replaces the whole page and leaves the neighbours alone.
        write_version(&file, 1, 999);
        check_version(&file, 0, 100);
        check_version(&file, 1, 999);
        check_version(&file, 2, 102);
    }
}

fn a_batch_of_reads_completes_each_request_once_with_its_own_page(method: IoMethod) {
    let (_dir, data_dir) = fresh(method, 4096);
    let file = data_dir.file(FILE).unwrap();
    let page_count = 300u32;
    for page_no in 0..page_count {
        write_version(&file, page_no, u64::from(page_no) + 7);
    }
    // Out of order, one batch, more requests than the default ring depth (128).
    let mut order: Vec<u32> = (0..page_count).collect();
    let mut rng = Rng::new(test_seed("a_batch_of_reads_completes_each_request_once"));
    for i in (1..order.len()).rev() {
        order.swap(i, rng.below(i as u64 + 1) as usize);
    }
    let requests = order.iter().map(|&p| read_request(&file, p)).collect();
    let done = run_batch(data_dir.engine(), requests);
    let mut seen = HashSet::new();
    for completion in &done {
        let page_no = completion.request.page_no.0;
        assert_eq!(
            completion.request.tag,
            u64::from(page_no),
            "tag travels back"
        );
        assert!(seen.insert(page_no), "page {page_no} completed twice");
        assert_eq!(completion.result.as_ref().unwrap(), &PageStatus::Valid);
        assert_page_holds(
            completion.request.buf.as_slice(),
            file.page_id(PageNo(page_no)),
            u64::from(page_no) + 7,
        );
    }
    assert_eq!(seen.len(), page_count as usize);
}

fn batches_deeper_than_a_tiny_queue_wait_for_free_slots_and_all_complete(method: IoMethod) {
    let dir = temp_dir();
    let settings = tarn_common::settings::Settings {
        io_uring_queue_depth: 4,
        io_threads: 1,
        ..settings(dir.path(), method)
    };
    let data_dir = DataDir::open(
        &settings,
        Some(4096),
        tarn_common::latch::LatchRegistry::new(true),
    )
    .unwrap();
    let file = data_dir.file(FILE).unwrap();
    let page_count = 64u32;
    let writes = (0..page_count)
        .map(|p| write_request(&file, p, 1))
        .collect();
    for completion in run_batch(data_dir.engine(), writes) {
        completion.result.unwrap();
    }
    // One batch longer than the I/O threads' queue and far longer than the ring.
    let requests = (0..IO_THREAD_QUEUE_CAPACITY as u32 + 100)
        .map(|i| read_request(&file, i % page_count))
        .collect();
    for completion in run_batch(data_dir.engine(), requests) {
        assert_eq!(completion.result.unwrap(), PageStatus::Valid);
        let page_no = completion.request.page_no;
        assert_page_holds(completion.request.buf.as_slice(), file.page_id(page_no), 1);
    }
    // Three submitters at once, each with 100 reads, on a queue of four slots.
    std::thread::scope(|scope| {
        for submitter in 0..3u32 {
            let (data_dir, file) = (&data_dir, &file);
            scope.spawn(move || {
                let requests = (0..100)
                    .map(|i| read_request(file, (i * 7 + submitter) % page_count))
                    .collect();
                for completion in run_batch(data_dir.engine(), requests) {
                    assert_eq!(completion.result.unwrap(), PageStatus::Valid);
                    let page_no = completion.request.page_no;
                    assert_page_holds(completion.request.buf.as_slice(), file.page_id(page_no), 1);
                }
            });
        }
    });
}

fn a_batch_of_writes_lands_and_reads_back_through_both_apis(method: IoMethod) {
    let (_dir, data_dir) = fresh(method, PAGE_SIZE);
    let file = data_dir.file(FILE).unwrap();
    let page_count = 150u32;
    let writes = (0..page_count)
        .map(|p| write_request(&file, p, u64::from(p) * 3))
        .collect();
    let done = run_batch(data_dir.engine(), writes);
    assert_eq!(done.len(), page_count as usize);
    for completion in done {
        assert_eq!(completion.result.unwrap(), PageStatus::Valid);
    }
    assert_eq!(
        file.page_count(),
        extent_pages(PAGE_SIZE as usize) * 3,
        "150 pages of 16 KiB fill three 1 MiB extents"
    );
    for page_no in 0..page_count {
        check_version(&file, page_no, u64::from(page_no) * 3);
    }
    let reads = (0..page_count).map(|p| read_request(&file, p)).collect();
    for completion in run_batch(data_dir.engine(), reads) {
        let page_no = completion.request.page_no;
        assert_eq!(completion.result.unwrap(), PageStatus::Valid);
        assert_page_holds(
            completion.request.buf.as_slice(),
            file.page_id(page_no),
            u64::from(page_no.0) * 3,
        );
    }
}

fn threads_writing_different_pages_of_one_file_lose_no_write(method: IoMethod) {
    let (_dir, data_dir) = fresh(method, 4096);
    let file = data_dir.file(FILE).unwrap();
    let threads = 4u32;
    let pages_per_thread = 150u32;
    // Interleaved pages, so the threads race to grow the file past each extent; half
    // of each thread's writes are synchronous and half go in asynchronous batches.
    std::thread::scope(|scope| {
        for thread in 0..threads {
            let (data_dir, file) = (&data_dir, &file);
            scope.spawn(move || {
                let mine: Vec<u32> = (0..pages_per_thread)
                    .map(|i| i * threads + thread)
                    .collect();
                let (sync_pages, async_pages) = mine.split_at(mine.len() / 2);
                let batch = async_pages
                    .iter()
                    .map(|&p| write_request(file, p, u64::from(p) + 1))
                    .collect::<Vec<_>>();
                let queue = CompletionQueue::new();
                data_dir.engine().submit(batch, &queue.sink());
                for &page_no in sync_pages {
                    write_version(file, page_no, u64::from(page_no) + 1);
                }
                for completion in wait_for(&queue, async_pages.len()) {
                    completion.result.unwrap();
                }
            });
        }
    });
    let total = threads * pages_per_thread;
    for page_no in 0..total {
        check_version(&file, page_no, u64::from(page_no) + 1);
    }
    assert_eq!(
        file.page_count(),
        u64::from(total).div_ceil(extent_pages(4096)) * extent_pages(4096)
    );
}

fn fdatasync_and_fsync_succeed_and_written_pages_survive_a_reopen(method: IoMethod) {
    let dir = temp_dir();
    {
        let data_dir = open_at(dir.path(), method, Some(PAGE_SIZE)).unwrap();
        let file = data_dir.file(FILE).unwrap();
        // A brand-new, empty file syncs too.
        file.sync(SyncKind::Data).unwrap();
        file.sync(SyncKind::All).unwrap();
        for page_no in 0..10 {
            write_version(&file, page_no, 50 + u64::from(page_no));
        }
        file.sync(SyncKind::Data).unwrap();
        let batch = (10..20).map(|p| write_request(&file, p, 50 + u64::from(p)));
        for completion in run_batch(data_dir.engine(), batch.collect()) {
            completion.result.unwrap();
        }
        file.sync(SyncKind::All).unwrap();
    }
    let data_dir = open_at(dir.path(), method, None).unwrap();
    let file = data_dir.file(FILE).unwrap();
    assert_eq!(file.page_count(), extent_pages(PAGE_SIZE as usize));
    for page_no in 0..20 {
        check_version(&file, page_no, 50 + u64::from(page_no));
    }
}

fn files_grow_by_whole_extents_and_reads_past_the_end_are_out_of_range(method: IoMethod) {
    for page_size in [4096u32, 64 << 10] {
        let (_dir, data_dir) = fresh(method, page_size);
        let file = data_dir.file(FILE).unwrap();
        let extent = extent_pages(page_size as usize);
        let length_on_disk = || std::fs::metadata(file.path()).unwrap().len();
        assert_eq!((file.page_count(), length_on_disk()), (0, 0), "new file");
        assert_out_of_range(&file, 0, 0);

        // (page written, extents the file must then hold)
        let steps = [
            (0, 1),
            (extent - 1, 1),
            (extent, 2),
            (5 * extent + 1, 6),
            (3, 6),
        ];
        for (page_no, extents) in steps {
            write_version(&file, page_no as u32, page_no);
            assert_eq!(file.page_count(), extents * extent, "after page {page_no}");
            assert_eq!(length_on_disk(), extents * EXTENT_SIZE_BYTES);
        }
        let page_count = file.page_count();
        assert_out_of_range(&file, page_count as u32, page_count);
        assert_out_of_range(&file, u32::MAX, page_count);

        // Growing explicitly also rounds up to whole extents and never shrinks.
        file.ensure_page_count(page_count + 1).unwrap();
        assert_eq!(file.page_count(), page_count + extent);
        file.ensure_page_count(1).unwrap();
        assert_eq!(file.page_count(), page_count + extent);
        assert_eq!(length_on_disk() % EXTENT_SIZE_BYTES, 0);

        // In a batch, only the read past the end fails; the others complete normally.
        let end = file.page_count() as u32;
        let batch = vec![
            read_request(&file, 0),
            read_request(&file, end),
            read_request(&file, extent as u32),
        ];
        for completion in run_batch(data_dir.engine(), batch) {
            match completion.request.page_no.0 {
                p if p == end => assert!(
                    matches!(completion.result, Err(Error::PageOutOfRange { .. })),
                    "read past the end: {:?}",
                    completion.result.map(|_| ())
                ),
                p => assert_eq!(completion.result.unwrap(), PageStatus::Valid, "page {p}"),
            }
        }

        // The length, and so the page count, is what a reopened file sees.
        let grown = file.page_count();
        drop((file, data_dir));
        let data_dir = open_at(_dir.path(), method, None).unwrap();
        assert_eq!(data_dir.file(FILE).unwrap().page_count(), grown);
    }
}

fn concurrent_growth_never_shrinks_the_page_count(method: IoMethod) {
    // 64 KiB pages: 16 to an extent, so growth is frequent and cheap to allocate.
    let (_dir, data_dir) = fresh(method, 64 << 10);
    let file = data_dir.file(FILE).unwrap();
    let extent = extent_pages(64 << 10);
    let (threads, steps) = (4u64, 32u64);
    let done = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|scope| {
        // A watcher checks that the count only ever goes up while the growers race.
        let watcher = scope.spawn(|| {
            let mut last = 0;
            while !done.load(std::sync::atomic::Ordering::Acquire) {
                let now = file.page_count();
                assert!(now >= last, "page count shrank from {last} to {now}");
                assert_eq!(now % extent, 0, "page count {now} is not whole extents");
                last = now;
            }
        });
        let growers: Vec<_> = (0..threads)
            .map(|thread| {
                let file = &file;
                scope.spawn(move || {
                    for step in 0..steps {
                        let target = (step * threads + thread) * extent + 1;
                        file.ensure_page_count(target).unwrap();
                        let now = file.page_count();
                        assert!(now >= target, "grew to {target} pages but holds {now}");
                    }
                })
            })
            .collect();
        for grower in growers {
            grower.join().unwrap();
        }
        done.store(true, std::sync::atomic::Ordering::Release);
        watcher.join().unwrap();
    });
    let expected = threads * steps * extent;
    assert_eq!(file.page_count(), expected);
    assert_eq!(
        std::fs::metadata(file.path()).unwrap().len(),
        expected * (64 << 10)
    );
}

fn assert_out_of_range(file: &tarn_io::PageFile, page_no: u32, page_count: u64) {
    let mut buf = AlignedBuf::zeroed(file.page_size_bytes());
    match file.read_page(PageNo(page_no), &mut buf) {
        Err(error @ Error::PageOutOfRange { .. }) => {
            let message = error.to_string();
            let page_id = file.page_id(PageNo(page_no)).to_string();
            assert!(
                message.contains(&file.path().display().to_string()),
                "{message}"
            );
            assert!(message.contains(&page_id), "{message}");
            assert!(
                message.contains(&format!("({page_count} pages)")),
                "{message}"
            );
        }
        other => panic!("page {page_no} of {page_count}: expected out of range, got {other:?}"),
    }
}

fn a_never_written_page_inside_an_extent_reads_as_unwritten_zeroes(method: IoMethod) {
    let (_dir, data_dir) = fresh(method, PAGE_SIZE);
    let file = data_dir.file(FILE).unwrap();
    write_version(&file, 10, 1);
    let last = file.page_count() as u32 - 1;
    for page_no in [0, 9, 11, last] {
        let mut buf = AlignedBuf::zeroed(file.page_size_bytes());
        buf.fill(0xa5); // whatever was in the buffer must be replaced by the disk's zeroes
        assert_eq!(
            file.read_page(PageNo(page_no), &mut buf).unwrap(),
            PageStatus::Unwritten,
            "page {page_no}"
        );
        assert!(buf.iter().all(|&b| b == 0), "page {page_no} is all zero");
    }
    let batch = [0, 11, last].map(|p| read_request(&file, p)).into();
    for completion in run_batch(data_dir.engine(), batch) {
        assert_eq!(completion.result.unwrap(), PageStatus::Unwritten);
    }
    check_version(&file, 10, 1);
}

fn arena_pages_carry_batches_and_only_uring_registers_them(method: IoMethod) {
    let (_dir, data_dir) = fresh(method, 8192);
    let engine = data_dir.engine();
    let file = data_dir.file(FILE).unwrap();
    // Two arenas, so the second one's fixed-buffer indexes start after the first's.
    let (first, first_pages) = PageArena::with_pages(32, 8192);
    let (second, second_pages) = PageArena::with_pages(48, 8192);
    let (first_registered, second_registered) = (
        engine.register_arena(&first),
        engine.register_arena(&second),
    );
    assert_eq!(first_registered, method == IoMethod::Uring);
    assert_eq!(second_registered, method == IoMethod::Uring);

    let mut buffers: Vec<IoBuf> = first_pages.into_iter().chain(second_pages).collect();
    let writes: Vec<IoRequest> = buffers
        .drain(..)
        .enumerate()
        .map(|(i, mut buf)| {
            let page_no = PageNo(i as u32);
            fill_page(buf.as_mut_slice(), file.page_id(page_no), 20 + i as u64);
            IoRequest::write(file.clone(), page_no, buf, i as u64)
        })
        .collect();
    for completion in run_batch(engine, writes) {
        completion.result.unwrap();
        let mut buf = completion.request.buf;
        buf.as_mut_slice().fill(0); // the reads below must refill it from the disk
        buffers.push(buf);
    }
    for page_no in 0..80 {
        check_version(&file, page_no, 20 + u64::from(page_no));
    }
    // Read every page back into an arena page other than the one it was written from.
    buffers.reverse();
    let reads = buffers
        .into_iter()
        .enumerate()
        .map(|(i, buf)| IoRequest::read(file.clone(), PageNo(i as u32), buf, i as u64))
        .collect();
    for completion in run_batch(engine, reads) {
        let page_no = completion.request.page_no;
        assert_eq!(completion.result.unwrap(), PageStatus::Valid);
        assert_page_holds(
            completion.request.buf.as_slice(),
            file.page_id(page_no),
            20 + u64::from(page_no.0),
        );
    }
}

fn raw_buffers_lent_by_another_layer_carry_reads_and_writes(method: IoMethod) {
    let (_dir, data_dir) = fresh(method, 4096);
    let file = data_dir.file(FileId(2)).unwrap();
    let page_size = file.page_size_bytes();
    let page_count = 16usize;
    let mut frames = AlignedBuf::zeroed(page_count * page_size);
    for (i, frame) in frames.chunks_mut(page_size).enumerate() {
        fill_page(frame, file.page_id(PageNo(i as u32)), 300 + i as u64);
    }
    let lend = |frames: &mut AlignedBuf, op: fn(Arc<_>, PageNo, IoBuf, u64) -> IoRequest| {
        (0..page_count)
            .map(|i| {
                // SAFETY: each request gets a disjoint page-sized, 4 KiB-aligned slice of
                // `frames`, which outlives the batch: `run_batch` waits for every
                // completion before `frames` is touched again.
                let raw = unsafe { RawBuf::new(frames.as_ptr().add(i * page_size), page_size) };
                op(file.clone(), PageNo(i as u32), IoBuf::Raw(raw), i as u64)
            })
            .collect::<Vec<_>>()
    };
    for completion in run_batch(data_dir.engine(), lend(&mut frames, IoRequest::write)) {
        completion.result.unwrap();
    }
    frames.fill(0);
    for completion in run_batch(data_dir.engine(), lend(&mut frames, IoRequest::read)) {
        assert_eq!(completion.result.unwrap(), PageStatus::Valid);
    }
    for (i, frame) in frames.chunks(page_size).enumerate() {
        assert_page_holds(frame, file.page_id(PageNo(i as u32)), 300 + i as u64);
    }
}

fn a_caller_owned_queue_keeps_its_depth_in_flight_and_returns_every_request(method: IoMethod) {
    let (_dir, data_dir) = fresh(method, 4096);
    let file = data_dir.file(FILE).unwrap();
    let (arena, mut buffers) = PageArena::with_pages(8, 4096);
    data_dir.engine().register_arena(&arena);
    let mut queue = data_dir.engine().queue(8).unwrap();
    assert_eq!(queue.depth(), 8);
    // Write pages 0..200 through the queue, refilling each slot as it completes.
    let mut next_page = 0u32;
    let make_write = |buffer: IoBuf, next_page: &mut u32| {
        let mut buffer = buffer;
        fill_page(
            buffer.as_mut_slice(),
            file.page_id(PageNo(*next_page)),
            500 + u64::from(*next_page),
        );
        let request = IoRequest::write(
            file.clone(),
            PageNo(*next_page),
            buffer,
            u64::from(*next_page),
        );
        *next_page += 1;
        request
    };
    let first: Vec<_> = buffers
        .drain(..)
        .map(|b| make_write(b, &mut next_page))
        .collect();
    queue.submit(first).unwrap();
    let mut done = Vec::new();
    let mut written = HashSet::new();
    while queue.in_flight() > 0 {
        assert!(queue.in_flight() <= 8);
        queue.wait(1, &mut done).unwrap();
        for completion in done.drain(..) {
            completion.result.unwrap();
            assert!(written.insert(completion.request.page_no.0));
            if next_page < 200 {
                let request = make_write(completion.request.buf, &mut next_page);
                queue.submit(vec![request]).unwrap();
            }
        }
    }
    assert_eq!(written.len(), 200);
    // Read them back in one batch of 8, and a read past the end fails alone.
    let reads: Vec<_> = (0..7)
        .map(|p| read_request(&file, p * 25))
        .chain([read_request(&file, 100_000)])
        .collect();
    queue.submit(reads).unwrap();
    queue.wait(8, &mut done).unwrap();
    assert_eq!(done.len(), 8);
    for completion in &done {
        let page_no = completion.request.page_no.0;
        if page_no == 100_000 {
            assert!(matches!(
                completion.result,
                Err(tarn_common::Error::PageOutOfRange { .. })
            ));
        } else {
            assert_eq!(completion.result.as_ref().unwrap(), &PageStatus::Valid);
            assert_page_holds(
                completion.request.buf.as_slice(),
                file.page_id(PageNo(page_no)),
                500 + u64::from(page_no),
            );
        }
    }
    assert_eq!(queue.in_flight(), 0);
}

#[test]
fn fixed_buffer_slots_are_reused_and_a_queue_never_reads_into_a_stale_registration() {
    let (_dir, data_dir) = fresh(IoMethod::Uring, 4096);
    let engine = data_dir.engine();
    let file = data_dir.file(FILE).unwrap();
    for page_no in 0..4 {
        write_version(&file, page_no, 40 + u64::from(page_no));
    }
    // Far more registrations than the table has slots: each must be reusable.
    for _ in 0..3000 {
        let (arena, _pages) = PageArena::with_pages(2, 4096);
        assert!(engine.register_arena(&arena));
        engine.unregister_arena(&arena);
    }
    // A queue snapshots the registrations of its time.
    let (old_arena, _old_pages) = PageArena::with_pages(2, 4096);
    assert!(engine.register_arena(&old_arena));
    let mut queue = engine.queue(4).unwrap();
    engine.unregister_arena(&old_arena);
    drop(old_arena);
    // A new arena takes the same slots; the queue must read into the new arena itself.
    let (new_arena, new_pages) = PageArena::with_pages(2, 4096);
    assert!(engine.register_arena(&new_arena));
    let requests: Vec<_> = new_pages
        .into_iter()
        .enumerate()
        .map(|(i, buf)| IoRequest::read(file.clone(), PageNo(i as u32 + 1), buf, i as u64))
        .collect();
    queue.submit(requests).unwrap();
    let mut done = Vec::new();
    queue.wait(2, &mut done).unwrap();
    for completion in &done {
        let page_no = completion.request.page_no.0;
        assert_eq!(completion.result.as_ref().unwrap(), &PageStatus::Valid);
        assert_page_holds(
            completion.request.buf.as_slice(),
            file.page_id(PageNo(page_no)),
            40 + u64::from(page_no),
        );
    }
    // And the engine's own ring reads into it too.
    let mut more = Vec::new();
    for completion in done {
        more.push(IoRequest::read(
            file.clone(),
            PageNo(3),
            completion.request.buf,
            3,
        ));
    }
    for completion in run_batch(engine, more) {
        assert_page_holds(
            completion.request.buf.as_slice(),
            file.page_id(PageNo(3)),
            43,
        );
    }
}
