//! Creating the benches' data files, once (shared by `bench io` and `bench bufferpool`).
//!
//! A data file is filled with `pages` sealed pages of type RAW, each with its own
//! pseudo-random body (seeded by its page number, see [`body_word`]), written
//! sequentially through the I/O engine with [`LOAD_IN_FLIGHT`] writes in flight, then
//! synced. A marker file next to it then records how many pages were loaded with which
//! page size, so a kept `--data-dir` is reused by later runs (after spot-checking a few
//! pages); a load that was interrupted leaves no marker and is redone.

use std::path::PathBuf;
use std::time::Instant;

use tarn_common::rng::Rng;
use tarn_common::{FileId, PageNo};
use tarn_io::page::{self, PAGE_HEADER_BYTES, PageStatus};
use tarn_io::{AlignedBuf, CompletionQueue, DataDir, IoRequest, PageArena, PageType, SyncKind};

use crate::report::Output;
use crate::{BenchError, Result};

/// Writes in flight while loading.
const LOAD_IN_FLIGHT: usize = 64;

/// Seed of the page bodies; page `n` uses `LOAD_SEED ^ n`.
const LOAD_SEED: u64 = 0x7a72_6e5f_6265_6e63;

/// Makes sure pages `0..pages` of `file_id` hold valid pages; returns what it did.
/// `spot_check_on_reuse` is false for fio's write file, whose pages fio overwrites
/// with its own bytes.
pub(crate) fn ensure_loaded(
    dir: &DataDir,
    file_id: FileId,
    pages: u64,
    spot_check_on_reuse: bool,
    output: &Output,
) -> Result<String> {
    let marker = marker_path(dir, file_id);
    let page_size = dir.page_size_bytes();
    let file = dir.file(file_id)?;
    if let Some(loaded) = read_marker(&marker, page_size)
        && loaded >= pages
        && file.page_count() >= pages
    {
        if spot_check_on_reuse {
            spot_check(dir, file_id, pages)?;
        }
        return Ok(format!(
            "file {}: reused ({loaded} pages loaded by an earlier run)",
            file_id.0
        ));
    }
    let _ = std::fs::remove_file(&marker);
    output.progress(&format!(
        "loading {} MiB into '{}' ...",
        (pages * page_size as u64) >> 20,
        file.path().display()
    ));
    let started = Instant::now();
    file.ensure_page_count(pages)?;

    let engine = dir.engine();
    let (arena, mut free) = PageArena::with_pages(LOAD_IN_FLIGHT, page_size);
    engine.register_arena(&arena);
    let queue = CompletionQueue::new();
    let sink = queue.sink();
    let (mut next, mut in_flight) = (0u64, 0usize);
    let mut done = Vec::with_capacity(LOAD_IN_FLIGHT);
    loop {
        let mut batch = Vec::with_capacity(free.len());
        while next < pages
            && let Some(mut buf) = free.pop()
        {
            let page_no = PageNo(next as u32);
            fill_page(buf.as_mut_slice(), file.page_id(page_no));
            batch.push(IoRequest::write(file.clone(), page_no, buf, next));
            next += 1;
        }
        in_flight += batch.len();
        engine.submit(batch, &sink);
        if in_flight == 0 {
            break;
        }
        queue.wait(1, &mut done);
        for completed in done.drain(..) {
            in_flight -= 1;
            completed.result?;
            free.push(completed.request.buf);
        }
    }
    file.sync(SyncKind::Data)?;
    write_marker(&marker, pages, page_size)?;
    let seconds = started.elapsed().as_secs_f64();
    Ok(format!(
        "file {}: loaded {pages} pages in {seconds:.1} s ({:.0} MB/s, io_method {})",
        file_id.0,
        (pages * page_size as u64) as f64 / seconds / 1e6,
        engine.method()
    ))
}

/// A RAW page for `page_id` with a body of its own.
fn fill_page(buf: &mut [u8], page_id: tarn_common::PageId) {
    page::init(buf, page_id, PageType::RAW);
    Rng::new(LOAD_SEED ^ u64::from(page_id.page_no.0)).fill(&mut buf[PAGE_HEADER_BYTES..]);
}

/// The `index`-th little-endian u64 of the body the loader wrote into page `page_no`
/// (at byte `PAGE_HEADER_BYTES + 8 * index`), so a bench can check what it reads.
pub(crate) fn body_word(page_no: PageNo, index: usize) -> u64 {
    let mut rng = Rng::new(LOAD_SEED ^ u64::from(page_no.0));
    (0..index).for_each(|_| {
        rng.next_u64();
    });
    rng.next_u64()
}

/// Reads the first, a middle and the last page back.
fn spot_check(dir: &DataDir, file_id: FileId, pages: u64) -> Result<()> {
    let file = dir.file(file_id)?;
    let mut buf = AlignedBuf::zeroed(dir.page_size_bytes());
    for page_no in [0, pages / 2, pages - 1] {
        let page_no = PageNo(page_no as u32);
        if file.read_page(page_no, &mut buf)? != PageStatus::Valid {
            return Err(tarn_common::Error::PageNeverWritten {
                file: file.path().to_path_buf(),
                page_id: file.page_id(page_no),
            }
            .into());
        }
    }
    Ok(())
}

fn marker_path(dir: &DataDir, file_id: FileId) -> PathBuf {
    dir.path()
        .join(format!("bench-data-{:06}.loaded", file_id.0))
}

fn marker_text(pages: u64, page_size: usize) -> String {
    format!("pages={pages} page_size={page_size}\n")
}

/// The number of pages a previous run loaded with this page size, if any.
fn read_marker(marker: &std::path::Path, page_size: usize) -> Option<u64> {
    let text = std::fs::read_to_string(marker).ok()?;
    let (pages, size) = text.trim().split_once(' ')?;
    let pages: u64 = pages.strip_prefix("pages=")?.parse().ok()?;
    let size: usize = size.strip_prefix("page_size=")?.parse().ok()?;
    (size == page_size).then_some(pages)
}

fn write_marker(marker: &std::path::Path, pages: u64, page_size: usize) -> Result<()> {
    std::fs::write(marker, marker_text(pages, page_size)).map_err(|source| BenchError::Os {
        what: format!("writing '{}'", marker.display()),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn body_words_are_what_the_loader_writes() {
        let mut buf = vec![0u8; 4096];
        let page_id = tarn_common::PageId::new(FileId(3), PageNo(77));
        fill_page(&mut buf, page_id);
        for index in 0..4 {
            let at = PAGE_HEADER_BYTES + 8 * index;
            let stored = u64::from_le_bytes(buf[at..at + 8].try_into().unwrap());
            assert_eq!(stored, body_word(PageNo(77), index), "word {index}");
        }
        assert_ne!(body_word(PageNo(77), 1), body_word(PageNo(78), 1));
    }

    #[test]
    fn markers_round_trip_and_other_page_sizes_do_not_count() {
        let dir = tempfile::tempdir().unwrap();
        let marker = dir.path().join("m");
        assert_eq!(read_marker(&marker, 16384), None);
        write_marker(&marker, 1234, 16384).unwrap();
        assert_eq!(read_marker(&marker, 16384), Some(1234));
        assert_eq!(read_marker(&marker, 8192), None);
    }
}
