//! Damage on disk is caught on every path: a flipped byte, a torn page and a page at
//! the wrong offset all fail the read, synchronous or batched, with an error naming the
//! file, the page and (for checksums) both values. No read ever returns the damaged
//! bytes as data.

#[macro_use]
mod common;

use std::path::Path;
use std::sync::Arc;

use tarn_common::settings::IoMethod;
use tarn_common::{Error, FileId, PageId, PageNo};
use tarn_io::{AlignedBuf, DataDir, PageFile, PageStatus};

use common::*;

on_every_path!(
    one_flipped_byte_anywhere_in_a_page_fails_sync_and_batch_reads_with_both_checksums,
    a_torn_page_half_new_half_old_fails_like_a_flipped_byte,
    a_page_copied_to_the_wrong_offset_or_file_is_reported_as_misplaced,
    a_stray_byte_in_a_never_written_page_is_corruption_not_an_unwritten_page,
    rewriting_a_corrupt_page_repairs_it,
    a_corrupt_page_reaped_from_a_queue_fails_when_verified,
);

/// Makes sure the next read of `file` sees what is on the disk, not a cached copy. The
/// raw writes went through the page cache (which O_DIRECT reads stay coherent with);
/// dropping it also makes the buffered path read the damaged bytes from the device.
fn drop_cached_copies(file: &PageFile) {
    file.drop_os_cache().unwrap();
}

/// The error a read of `page_no` must give once its bytes on disk are `on_disk`.
fn assert_checksum_error(error: &Error, path: &Path, page_id: PageId, on_disk: &[u8]) {
    let stored = u32::from_le_bytes(on_disk[..4].try_into().unwrap());
    let computed = crc32c::crc32c(&on_disk[4..]);
    assert_ne!(stored, computed, "the test damaged the page");
    match error {
        Error::PageChecksumMismatch {
            file,
            page_id: reported,
            expected,
            found,
        } => {
            assert_eq!(file, path);
            assert_eq!(*reported, page_id);
            assert_eq!((*expected, *found), (stored, computed));
        }
        other => panic!("page {page_id}: expected a checksum mismatch, got {other}"),
    }
    let message = error.to_string();
    for part in [
        path.display().to_string(),
        page_id.to_string(),
        format!("{stored:#010x}"),
        format!("{computed:#010x}"),
    ] {
        assert!(message.contains(&part), "'{part}' missing from: {message}");
    }
    assert_eq!(error.mysql_code(), 3000, "ER_FILE_CORRUPT");
}

/// Reads `page_no` synchronously and expects the checksum error for `on_disk`.
fn assert_sync_read_fails(file: &PageFile, page_no: u32, on_disk: &[u8]) {
    let mut buf = AlignedBuf::zeroed(file.page_size_bytes());
    match file.read_page(PageNo(page_no), &mut buf) {
        Ok(status) => panic!("page {page_no}: damaged page read as {status:?}"),
        Err(error) => {
            assert_checksum_error(&error, file.path(), file.page_id(PageNo(page_no)), on_disk)
        }
    }
}

fn write_pages(file: &PageFile, count: u32) {
    for page_no in 0..count {
        write_version(file, page_no, 1000 + u64::from(page_no));
    }
    file.sync(tarn_io::SyncKind::Data).unwrap();
}

fn one_flipped_byte_anywhere_in_a_page_fails_sync_and_batch_reads_with_both_checksums(
    method: IoMethod,
) {
    let (_dir, data_dir) = fresh(method, PAGE_SIZE);
    let file = data_dir.file(FILE).unwrap();
    let page_size = file.page_size_bytes();
    // Byte offsets in the stored checksum, the page type, the page number, the LSN,
    // the body and the very last byte; each damages a different page.
    let offsets = [0, 3, 5, 13, 20, 32, 100, page_size / 2, page_size - 1];
    let page_count = 2 * offsets.len() as u32 + 1;
    write_pages(&file, page_count);

    let mut damaged = Vec::new();
    for (page_no, &offset) in offsets.iter().enumerate() {
        let page_no = 2 * page_no as u32 + 1; // every other page, so neighbours stay intact
        let page_offset = offset_of(page_no, page_size);
        let mut bytes = read_raw(file.path(), page_offset, page_size);
        bytes[offset] ^= 0x10;
        write_raw(file.path(), page_offset, &bytes);
        damaged.push((page_no, bytes));
    }
    drop_cached_copies(&file);

    for (page_no, on_disk) in &damaged {
        assert_sync_read_fails(&file, *page_no, on_disk);
    }
    let batch = (0..page_count).map(|p| read_request(&file, p)).collect();
    for completion in run_batch(data_dir.engine(), batch) {
        let page_no = completion.request.page_no.0;
        match damaged.iter().find(|(p, _)| *p == page_no) {
            Some((_, on_disk)) => match &completion.result {
                Ok(status) => panic!("page {page_no}: damaged page read as {status:?}"),
                Err(error) => assert_checksum_error(
                    error,
                    file.path(),
                    file.page_id(PageNo(page_no)),
                    on_disk,
                ),
            },
            None => {
                assert_eq!(completion.result.unwrap(), PageStatus::Valid);
                assert_page_holds(
                    completion.request.buf.as_slice(),
                    file.page_id(PageNo(page_no)),
                    1000 + u64::from(page_no),
                );
            }
        }
    }
}

fn a_torn_page_half_new_half_old_fails_like_a_flipped_byte(method: IoMethod) {
    for page_size in [4096u32, PAGE_SIZE, 64 << 10] {
        let (_dir, data_dir) = fresh(method, page_size);
        let file = data_dir.file(FILE).unwrap();
        let page_size = page_size as usize;
        let page_no = 3u32;
        let offset = offset_of(page_no, page_size);
        write_version(&file, page_no, 1);
        let old = read_raw(file.path(), offset, page_size);
        write_version(&file, page_no, 2);
        let new = read_raw(file.path(), offset, page_size);
        assert_ne!(old[..512], new[..512]);
        assert_ne!(old[page_size - 512..], new[page_size - 512..]);

        // Torn at a sector, at a 4 KiB block (if the page has more than one) and in
        // the middle, with either version first.
        let mut splits = vec![512, page_size / 2];
        if page_size > 4096 {
            splits.push(4096);
        }
        for split in splits {
            for (first, second) in [(&new, &old), (&old, &new)] {
                let torn = [&first[..split], &second[split..]].concat();
                write_raw(file.path(), offset, &torn);
                drop_cached_copies(&file);
                assert_sync_read_fails(&file, page_no, &torn);
                let done = run_batch(data_dir.engine(), vec![read_request(&file, page_no)]);
                match &done[0].result {
                    Ok(status) => panic!("split {split}: torn page read as {status:?}"),
                    Err(error) => assert_checksum_error(
                        error,
                        file.path(),
                        file.page_id(PageNo(page_no)),
                        &torn,
                    ),
                }
            }
        }
    }
}

fn assert_misplaced(
    result: Result<PageStatus, Error>,
    file: &PageFile,
    expected: PageId,
    found: PageId,
) {
    match result {
        Err(Error::PageMisplaced {
            file: path,
            expected: reported_expected,
            found: reported_found,
        }) => {
            assert_eq!(path, file.path());
            assert_eq!((reported_expected, reported_found), (expected, found));
            let message = Error::PageMisplaced {
                file: path,
                expected,
                found,
            }
            .to_string();
            assert!(
                message.contains(&file.path().display().to_string())
                    && message.contains(&expected.to_string())
                    && message.contains(&found.to_string()),
                "{message}"
            );
        }
        other => panic!("{expected} holding {found}: expected misplaced, got {other:?}"),
    }
}

fn a_page_copied_to_the_wrong_offset_or_file_is_reported_as_misplaced(method: IoMethod) {
    let (_dir, data_dir) = fresh(method, PAGE_SIZE);
    let file = data_dir.file(FILE).unwrap();
    let other_file = data_dir.file(FileId(2)).unwrap();
    let page_size = file.page_size_bytes();
    write_pages(&file, 8);
    write_pages(&other_file, 8);

    // Page 3's intact bytes land on page 6 of the same file...
    let page_3 = read_raw(file.path(), offset_of(3, page_size), page_size);
    write_raw(file.path(), offset_of(6, page_size), &page_3);
    // ...and file 2's page 4 lands on page 4 of file 1.
    let foreign = read_raw(other_file.path(), offset_of(4, page_size), page_size);
    write_raw(file.path(), offset_of(4, page_size), &foreign);
    drop_cached_copies(&file);

    let cases = [
        (6, PageId::new(FILE, PageNo(3))),
        (4, PageId::new(FileId(2), PageNo(4))),
    ];
    for (page_no, found) in cases {
        let expected = file.page_id(PageNo(page_no));
        let mut buf = AlignedBuf::zeroed(page_size);
        assert_misplaced(
            file.read_page(PageNo(page_no), &mut buf),
            &file,
            expected,
            found,
        );
    }
    let batch = cases.iter().map(|&(p, _)| read_request(&file, p)).collect();
    for completion in run_batch(data_dir.engine(), batch) {
        let page_no = completion.request.page_no;
        let found = cases.iter().find(|(p, _)| *p == page_no.0).unwrap().1;
        assert_misplaced(completion.result, &file, file.page_id(page_no), found);
    }
    check_version(&file, 3, 1003);
}

fn a_stray_byte_in_a_never_written_page_is_corruption_not_an_unwritten_page(method: IoMethod) {
    let (_dir, data_dir) = fresh(method, PAGE_SIZE);
    let file = data_dir.file(FILE).unwrap();
    write_pages(&file, 1);
    let page_size = file.page_size_bytes();
    let mut zeroes = vec![0u8; page_size];
    let mut buf = AlignedBuf::zeroed(page_size);
    assert_eq!(
        file.read_page(PageNo(5), &mut buf).unwrap(),
        PageStatus::Unwritten
    );
    zeroes[page_size - 100] = 1;
    write_raw(file.path(), offset_of(5, page_size), &zeroes);
    drop_cached_copies(&file);
    assert_sync_read_fails(&file, 5, &zeroes);
}

fn rewriting_a_corrupt_page_repairs_it(method: IoMethod) {
    let (_dir, data_dir) = fresh(method, PAGE_SIZE);
    let file: Arc<PageFile> = data_dir.file(FILE).unwrap();
    write_pages(&file, 2);
    let page_size = file.page_size_bytes();
    let mut bytes = read_raw(file.path(), offset_of(1, page_size), page_size);
    bytes[200] ^= 0xff;
    write_raw(file.path(), offset_of(1, page_size), &bytes);
    drop_cached_copies(&file);
    assert_sync_read_fails(&file, 1, &bytes);
    write_version(&file, 1, 77);
    check_version(&file, 1, 77);
    check_version(&file, 0, 1000);
    reopen_and_check(data_dir, _dir.path(), method);
}

/// The repair is on disk, not only in a cache: a reopened directory reads it too.
fn reopen_and_check(data_dir: Arc<DataDir>, path: &Path, method: IoMethod) {
    drop(data_dir);
    let data_dir = open_at(path, method, None).unwrap();
    let file = data_dir.file(FILE).unwrap();
    file.drop_os_cache().unwrap();
    check_version(&file, 1, 77);
}

fn a_corrupt_page_reaped_from_a_queue_fails_when_verified(method: IoMethod) {
    let (_dir, data_dir) = fresh(method, 4096);
    let file = data_dir.file(FILE).unwrap();
    write_pages(&file, 4);
    let offset = offset_of(2, 4096) + 300;
    let byte = read_raw(file.path(), offset, 1)[0];
    write_raw(file.path(), offset, &[byte ^ 0x40]);
    drop_cached_copies(&file);
    let on_disk = read_raw(file.path(), offset_of(2, 4096), 4096);
    let mut queue = data_dir.engine().queue(4).unwrap();
    queue
        .submit((0..4).map(|p| read_request(&file, p)).collect())
        .unwrap();
    let mut reaped = Vec::new();
    while reaped.len() < 4 {
        queue.reap(1, &mut reaped).unwrap();
    }
    for completion in reaped {
        let page_no = completion.page_no().0;
        let done = completion.verify();
        if page_no == 2 {
            let error = done
                .result
                .expect_err("the damaged page must fail verification");
            assert_checksum_error(&error, file.path(), file.page_id(PageNo(2)), &on_disk);
        } else {
            assert_page_holds(
                done.request.buf.as_slice(),
                file.page_id(PageNo(page_no)),
                1000 + u64::from(page_no),
            );
        }
    }
}
