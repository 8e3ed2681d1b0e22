//! The page header and its checksum.
//!
//! Every page starts with a 32-byte header (little-endian; see `docs/file-format.md`):
//!
//! ```text
//! offset  size  field
//!      0     4  checksum: crc32c of bytes 4 .. page_size
//!      4     2  page type (0 is never used by a written page)
//!      6     2  header format version (1)
//!      8     4  file id
//!     12     4  page number
//!     16     8  LSN of the last change to the page
//!     24     8  reserved, zero
//!     32     -  body, owned by the page type
//! ```
//!
//! # Invariants
//! 1. A page on disk is either all zero (allocated, never written) or carries a checksum
//!    that matches its bytes and a header naming its own file and page number.
//! 2. [`seal`] is called on the exact bytes handed to the write system call, right
//!    before the call; [`verify`] is called on the exact bytes a read returned, right
//!    after it. Nothing else computes or checks checksums.
//! 3. A page that fails verification is never returned as data: the caller gets an
//!    error naming the file, the page and both checksums.

use std::path::Path;

use tarn_common::{Error, FileId, Lsn, PageId, PageNo, Result};

pub const PAGE_HEADER_BYTES: usize = 32;
pub const PAGE_FORMAT_VERSION: u16 = 1;

const CHECKSUM_OFFSET: usize = 0;
const TYPE_OFFSET: usize = 4;
const VERSION_OFFSET: usize = 6;
const FILE_ID_OFFSET: usize = 8;
const PAGE_NO_OFFSET: usize = 12;
const LSN_OFFSET: usize = 16;

/// What a page holds. The I/O layer only knows that 0 means "never written"; each
/// later layer defines its own types here so that numbers never collide.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PageType(pub u16);

impl PageType {
    /// Never used by a written page: an all-zero page has this type.
    pub const UNWRITTEN: PageType = PageType(0);
    /// Pages written by benchmarks and tests, with no structure beyond the header.
    pub const RAW: PageType = PageType(1);
}

/// The outcome of verifying a page that was read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PageStatus {
    /// The checksum matches and the header names the expected page.
    Valid,
    /// Every byte is zero: the page was allocated but never written.
    Unwritten,
}

fn read_u16(page: &[u8], offset: usize) -> u16 {
    u16::from_le_bytes(page[offset..offset + 2].try_into().expect("2 bytes"))
}

fn read_u32(page: &[u8], offset: usize) -> u32 {
    u32::from_le_bytes(page[offset..offset + 4].try_into().expect("4 bytes"))
}

fn read_u64(page: &[u8], offset: usize) -> u64 {
    u64::from_le_bytes(page[offset..offset + 8].try_into().expect("8 bytes"))
}

pub fn page_type(page: &[u8]) -> PageType {
    PageType(read_u16(page, TYPE_OFFSET))
}

pub fn page_lsn(page: &[u8]) -> Lsn {
    Lsn(read_u64(page, LSN_OFFSET))
}

/// The page id the header claims.
pub fn header_page_id(page: &[u8]) -> PageId {
    PageId::new(
        FileId(read_u32(page, FILE_ID_OFFSET)),
        PageNo(read_u32(page, PAGE_NO_OFFSET)),
    )
}

pub fn set_page_lsn(page: &mut [u8], lsn: Lsn) {
    page[LSN_OFFSET..LSN_OFFSET + 8].copy_from_slice(&lsn.0.to_le_bytes());
}

/// Zeroes `page` and writes a fresh header of type `page_type` for `page_id`.
pub fn init(page: &mut [u8], page_id: PageId, page_type: PageType) {
    assert_ne!(page_type, PageType::UNWRITTEN, "a page needs a type");
    page.fill(0);
    page[TYPE_OFFSET..TYPE_OFFSET + 2].copy_from_slice(&page_type.0.to_le_bytes());
    page[VERSION_OFFSET..VERSION_OFFSET + 2].copy_from_slice(&PAGE_FORMAT_VERSION.to_le_bytes());
    write_page_id(page, page_id);
}

fn write_page_id(page: &mut [u8], page_id: PageId) {
    page[FILE_ID_OFFSET..FILE_ID_OFFSET + 4].copy_from_slice(&page_id.file_id.0.to_le_bytes());
    page[PAGE_NO_OFFSET..PAGE_NO_OFFSET + 4].copy_from_slice(&page_id.page_no.0.to_le_bytes());
}

fn compute_checksum(page: &[u8]) -> u32 {
    crc32c::crc32c(&page[CHECKSUM_OFFSET + 4..])
}

/// Stamps the page id, format version and checksum. Call on the bytes about to be written.
///
/// # Panics
/// If the page has no type: writing an untyped page is a programming error.
pub fn seal(page: &mut [u8], page_id: PageId) {
    assert_ne!(
        page_type(page),
        PageType::UNWRITTEN,
        "sealing page {page_id} with no page type"
    );
    write_page_id(page, page_id);
    page[VERSION_OFFSET..VERSION_OFFSET + 2].copy_from_slice(&PAGE_FORMAT_VERSION.to_le_bytes());
    let checksum = compute_checksum(page);
    page[CHECKSUM_OFFSET..CHECKSUM_OFFSET + 4].copy_from_slice(&checksum.to_le_bytes());
}

/// Checks the bytes a read returned for page `expected` of `file`.
pub fn verify(page: &[u8], expected: PageId, file: &Path) -> Result<PageStatus> {
    let stored = read_u32(page, CHECKSUM_OFFSET);
    let computed = compute_checksum(page);
    if stored != computed {
        if is_all_zero(page) {
            return Ok(PageStatus::Unwritten);
        }
        return Err(Error::PageChecksumMismatch {
            file: file.to_path_buf(),
            page_id: expected,
            expected: stored,
            found: computed,
        });
    }
    let found = header_page_id(page);
    if found != expected {
        return Err(Error::PageMisplaced {
            file: file.to_path_buf(),
            expected,
            found,
        });
    }
    Ok(PageStatus::Valid)
}

fn is_all_zero(page: &[u8]) -> bool {
    let (prefix, words, suffix) = {
        // SAFETY: reinterpreting initialised bytes as `u64` words is valid for any bit
        // pattern; `align_to` puts unaligned bytes in `prefix` and `suffix`.
        unsafe { page.align_to::<u64>() }
    };
    prefix.iter().all(|&b| b == 0)
        && words.iter().all(|&w| w == 0)
        && suffix.iter().all(|&b| b == 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sealed_page(id: PageId) -> Vec<u8> {
        let mut page = vec![0u8; 4096];
        init(&mut page, id, PageType::RAW);
        set_page_lsn(&mut page, Lsn(77));
        page[100] = 42;
        seal(&mut page, id);
        page
    }

    #[test]
    fn a_sealed_page_verifies_and_keeps_its_header_fields() {
        let id = PageId::new(FileId(3), PageNo(5));
        let page = sealed_page(id);
        assert_eq!(
            verify(&page, id, Path::new("f")).unwrap(),
            PageStatus::Valid
        );
        assert_eq!(page_lsn(&page), Lsn(77));
        assert_eq!(page_type(&page), PageType::RAW);
        assert_eq!(header_page_id(&page), id);
    }

    #[test]
    fn any_flipped_byte_is_a_checksum_error_naming_file_and_page() {
        let id = PageId::new(FileId(3), PageNo(5));
        for offset in [0, 3, 4, 17, 100, 4095] {
            let mut page = sealed_page(id);
            page[offset] ^= 0x01;
            let err = verify(&page, id, Path::new("/data/000003.tdf")).unwrap_err();
            assert!(
                matches!(err, Error::PageChecksumMismatch { .. }),
                "offset {offset}: {err}"
            );
            assert!(
                err.to_string().contains("/data/000003.tdf") && err.to_string().contains("3:5")
            );
        }
    }

    #[test]
    fn all_zero_is_unwritten_and_a_page_at_the_wrong_place_is_misplaced() {
        let id = PageId::new(FileId(1), PageNo(2));
        assert_eq!(
            verify(&[0u8; 4096], id, Path::new("f")).unwrap(),
            PageStatus::Unwritten
        );
        let other = PageId::new(FileId(1), PageNo(3));
        let err = verify(&sealed_page(other), id, Path::new("f")).unwrap_err();
        assert!(matches!(err, Error::PageMisplaced { .. }), "{err}");
    }
}
