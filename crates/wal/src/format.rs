//! The on-disk format of the redo log: record headers, file headers, checkpoint slots,
//! and the mapping from an LSN to a file and offset. All integers are little-endian.
//!
//! # Record (8-byte aligned, `RECORD_HEADER_BYTES + payload`, padded to 8)
//!
//! ```text
//!  0  u64  start LSN of this record (stale bytes of an older lap never match)
//!  8  u64  chunk end: 0, or the end LSN of the write this record starts (see below)
//! 16  u32  payload length in bytes (<= LOG_RECORD_BYTES_MAX)
//! 20  u8   kind (the caller's record type)
//! 21  u24  generation: bumped at every open; all records of one chunk share it
//! 24  u32  crc32c over bytes 0..8, 16..24 and the payload (not the chunk fields)
//! 28  u32  chunk check: crc32c(start LSN, chunk end) if chunk end != 0, else 0
//! 32  payload, then zero to seven bytes of padding (not checked)
//! ```
//!
//! A *chunk* is the range of the log made durable by one step of the log writer (one
//! group of `pwrite`s before one `fdatasync`, or one stamp on pmem). Its first record
//! is stamped with the chunk's end; the reader accepts a stamped record only once every
//! record up to the chunk end is intact and of the same generation, so a write torn
//! anywhere inside a chunk makes the whole chunk invisible. Chunk ends are only ever
//! placed where no multi-record group is cut (see `groups`), which is what makes
//! groups atomic across crashes. The stamp lives outside the record checksum so the
//! writer can add it without recomputing a checksum over the payload.
//!
//! # Files
//!
//! `log_files` files `redo.000`, `redo.001`, ... of `file_size_bytes` each. Every file
//! starts with `FILE_HEADER_BYTES` (three 4 KiB blocks): block 0 holds the file header;
//! in `redo.000`, blocks 1 and 2 hold the two checkpoint slots (each in its own block so
//! a torn write of one slot cannot damage the other or the file header). The rest of
//! every file is usable log space; the usable space of all files, in file order, is one
//! ring of `capacity_bytes`, and LSN `l` lives at ring offset
//! `(l - base_lsn) % capacity_bytes`.
//!
//! ```text
//! file header (block 0)           checkpoint slot (block 1 or 2 of redo.000)
//!  0  [u8; 8] "TARNLOG\0"          0  [u8; 8] "TARNCKP2"
//!  8  u32 format version           8  u64 sequence (the higher valid slot wins)
//! 12  u32 file index              16  u64 checkpoint LSN (recovery starts here)
//! 16  u32 file count              24  u32 generation of the opening that wrote it
//! 20  u32 zero                    28  u32 extra length (<= 1 KiB)
//! 24  u64 file size in bytes      32  u64 complete LSN (see below)
//! 32  u64 base LSN                40  extra bytes (the transaction layer's blob)
//! 40  u32 crc32c of bytes 0..40   ..  u32 crc32c of everything before it
//! ```
//!
//! The *complete LSN* is the durable LSN when the checkpoint was written (a chunk end,
//! at or above the checkpoint LSN): the log from the checkpoint up to it is known to be
//! whole chunks on disk. The reader starts at the checkpoint LSN, usually inside a
//! chunk whose stamped first record lies before it, so it must take the records up to
//! the first stamp one by one; the complete LSN bounds that. At or past it a record is
//! accepted only as part of a stamped chunk, because the bytes there may be stale: a
//! checkpoint taken at the very end of the log has no chunk around it yet, and the
//! torn or unsynced tail of an earlier opening's log can hold intact records at exactly
//! those LSNs. Slots of the first version ("TARNCKPT", no complete LSN) still read,
//! as complete LSN 0: no bound.

use std::path::{Path, PathBuf};

use tarn_common::{Error, Result};

/// Bytes of the record header.
pub const RECORD_HEADER_BYTES: usize = 32;
/// Records start at multiples of this (relative to the base LSN).
pub const RECORD_ALIGN_BYTES: u64 = 8;
/// The LSN of the first byte of a new log: fixed and nonzero, so LSN 0 can mean "none".
pub const BASE_LSN: u64 = 1 << 16;
/// Block size of the log files: headers, checkpoint slots and `O_DIRECT` writes.
pub const BLOCK_BYTES: u64 = 4096;
/// Bytes at the start of every file before its usable log space.
pub const FILE_HEADER_BYTES: u64 = 3 * BLOCK_BYTES;
/// Bytes of the checkpoint's opaque `extra` blob at most.
pub const CHECKPOINT_EXTRA_BYTES_MAX: usize = 1024;
/// Current file format version.
pub const FORMAT_VERSION: u32 = 1;
/// Generations are 24-bit and wrap.
pub const GENERATION_MASK: u32 = 0x00ff_ffff;

const FILE_MAGIC: &[u8; 8] = b"TARNLOG\0";
const CHECKPOINT_MAGIC: &[u8; 8] = b"TARNCKP2";
/// The first slot version: no complete LSN, the extra bytes at offset 32.
const CHECKPOINT_MAGIC_V1: &[u8; 8] = b"TARNCKPT";

/// Total bytes a record with `payload_bytes` of payload takes in the log.
#[inline]
pub fn record_bytes(payload_bytes: usize) -> u64 {
    (RECORD_HEADER_BYTES as u64 + payload_bytes as u64).next_multiple_of(RECORD_ALIGN_BYTES)
}

/// Encodes a record header without a chunk stamp.
pub fn encode_header(start_lsn: u64, kind: u8, generation: u32, payload: &[u8]) -> [u8; 32] {
    let mut h = [0u8; RECORD_HEADER_BYTES];
    h[0..8].copy_from_slice(&start_lsn.to_le_bytes());
    h[16..20].copy_from_slice(&(payload.len() as u32).to_le_bytes());
    h[20] = kind;
    h[21..24].copy_from_slice(&(generation & GENERATION_MASK).to_le_bytes()[..3]);
    let crc = record_crc(&h, payload);
    h[24..28].copy_from_slice(&crc.to_le_bytes());
    h
}

fn record_crc(header: &[u8], payload: &[u8]) -> u32 {
    let crc = crc32c::crc32c(&header[0..8]);
    let crc = crc32c::crc32c_append(crc, &header[16..24]);
    crc32c::crc32c_append(crc, payload)
}

/// The 12 stamp bytes: the chunk end at header offset 8 and the check at offset 28.
pub fn chunk_stamp(start_lsn: u64, chunk_end_lsn: u64) -> ([u8; 8], [u8; 4]) {
    (
        chunk_end_lsn.to_le_bytes(),
        chunk_check(start_lsn, chunk_end_lsn).to_le_bytes(),
    )
}

fn chunk_check(start_lsn: u64, chunk_end_lsn: u64) -> u32 {
    let crc = crc32c::crc32c(&start_lsn.to_le_bytes());
    crc32c::crc32c_append(crc, &chunk_end_lsn.to_le_bytes())
}

/// A decoded, self-consistent record header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    pub start_lsn: u64,
    pub chunk_end_lsn: u64,
    pub payload_bytes: usize,
    pub kind: u8,
    pub generation: u32,
    pub crc: u32,
}

impl Header {
    /// Decodes a header expected at `lsn`; `None` if it belongs to another position,
    /// has an impossible length, or a chunk stamp that does not check.
    pub fn decode(bytes: &[u8], lsn: u64) -> Option<Header> {
        let u64_at = |o: usize| u64::from_le_bytes(bytes[o..o + 8].try_into().expect("8 bytes"));
        let u32_at = |o: usize| u32::from_le_bytes(bytes[o..o + 4].try_into().expect("4 bytes"));
        let start_lsn = u64_at(0);
        if start_lsn != lsn {
            return None;
        }
        let payload_bytes = u32_at(16) as usize;
        if payload_bytes > tarn_common::limits::LOG_RECORD_BYTES_MAX {
            return None;
        }
        let chunk_end_lsn = u64_at(8);
        let check = u32_at(28);
        let stamp_ok = if chunk_end_lsn == 0 {
            check == 0
        } else {
            chunk_end_lsn > lsn && check == chunk_check(lsn, chunk_end_lsn)
        };
        if !stamp_ok {
            return None;
        }
        Some(Header {
            start_lsn,
            chunk_end_lsn,
            payload_bytes,
            kind: bytes[20],
            generation: u32::from_le_bytes([bytes[21], bytes[22], bytes[23], 0]),
            crc: u32_at(24),
        })
    }

    pub fn record_bytes(&self) -> u64 {
        record_bytes(self.payload_bytes)
    }

    /// True if `payload` matches the checksum (given the header bytes it came with).
    pub fn payload_ok(&self, header_bytes: &[u8], payload: &[u8]) -> bool {
        record_crc(header_bytes, payload) == self.crc
    }
}

/// Where the ring lives: fixed when the log is created.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Geometry {
    pub file_size_bytes: u64,
    pub file_count: u32,
    pub base_lsn: u64,
}

impl Geometry {
    pub fn usable_per_file_bytes(&self) -> u64 {
        self.file_size_bytes - FILE_HEADER_BYTES
    }

    pub fn capacity_bytes(&self) -> u64 {
        self.usable_per_file_bytes() * u64::from(self.file_count)
    }

    /// The file index, the offset in that file, and how many bytes from there on are
    /// contiguous in the file, for `lsn`.
    pub fn locate(&self, lsn: u64) -> (usize, u64, u64) {
        let usable = self.usable_per_file_bytes();
        let ring = (lsn - self.base_lsn) % self.capacity_bytes();
        let in_file = ring % usable;
        (
            (ring / usable) as usize,
            FILE_HEADER_BYTES + in_file,
            usable - in_file,
        )
    }

    /// Splits `[lsn, lsn + len)` into pieces that are contiguous in one file:
    /// `(file index, file offset, offset into the range, length)`.
    pub fn pieces(&self, lsn: u64, len: u64) -> impl Iterator<Item = (usize, u64, u64, u64)> + '_ {
        let mut done = 0u64;
        std::iter::from_fn(move || {
            if done >= len {
                return None;
            }
            let (file, offset, contiguous) = self.locate(lsn + done);
            let n = contiguous.min(len - done);
            let piece = (file, offset, done, n);
            done += n;
            Some(piece)
        })
    }
}

pub fn file_name(index: usize) -> String {
    format!("redo.{index:03}")
}

pub fn file_path(dir: &Path, index: usize) -> PathBuf {
    dir.join(file_name(index))
}

/// Encodes file `index`'s header block.
pub fn encode_file_header(geometry: &Geometry, index: u32) -> Vec<u8> {
    let mut b = vec![0u8; BLOCK_BYTES as usize];
    b[0..8].copy_from_slice(FILE_MAGIC);
    b[8..12].copy_from_slice(&FORMAT_VERSION.to_le_bytes());
    b[12..16].copy_from_slice(&index.to_le_bytes());
    b[16..20].copy_from_slice(&geometry.file_count.to_le_bytes());
    b[24..32].copy_from_slice(&geometry.file_size_bytes.to_le_bytes());
    b[32..40].copy_from_slice(&geometry.base_lsn.to_le_bytes());
    let crc = crc32c::crc32c(&b[0..40]);
    b[40..44].copy_from_slice(&crc.to_le_bytes());
    b
}

/// Decodes a file header, checking it is file `index` (if given). The error names the
/// file and what is wrong with it.
pub fn decode_file_header(bytes: &[u8], path: &Path, index: Option<u32>) -> Result<Geometry> {
    let bad = |reason: String| Error::DataDir {
        path: path.to_path_buf(),
        reason,
    };
    if bytes.len() < 44 || &bytes[0..8] != FILE_MAGIC {
        return Err(bad("not a Tarn redo log file (bad magic)".into()));
    }
    let stored = u32::from_le_bytes(bytes[40..44].try_into().expect("4 bytes"));
    if crc32c::crc32c(&bytes[0..40]) != stored {
        return Err(bad("redo log file header checksum mismatch".into()));
    }
    let u32_at = |o: usize| u32::from_le_bytes(bytes[o..o + 4].try_into().expect("4 bytes"));
    let u64_at = |o: usize| u64::from_le_bytes(bytes[o..o + 8].try_into().expect("8 bytes"));
    let version = u32_at(8);
    if version != FORMAT_VERSION {
        return Err(bad(format!(
            "redo log format version {version}, this build reads {FORMAT_VERSION}"
        )));
    }
    let found_index = u32_at(12);
    if let Some(expected) = index
        && found_index != expected
    {
        return Err(bad(format!(
            "header says file {found_index}, expected file {expected}"
        )));
    }
    let geometry = Geometry {
        file_count: u32_at(16),
        file_size_bytes: u64_at(24),
        base_lsn: u64_at(32),
    };
    if geometry.file_count == 0
        || geometry.file_size_bytes <= FILE_HEADER_BYTES
        || !geometry.file_size_bytes.is_multiple_of(BLOCK_BYTES)
        || geometry.base_lsn == 0
    {
        return Err(bad(format!("impossible redo log geometry {geometry:?}")));
    }
    Ok(geometry)
}

/// One checkpoint slot's contents.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Checkpoint {
    pub sequence: u64,
    pub lsn: u64,
    pub generation: u32,
    /// The log was whole chunks on disk from `lsn` up to here when the checkpoint was
    /// written (see the module docs); 0 if unknown (a first-version slot).
    pub complete_lsn: u64,
    pub extra: Vec<u8>,
}

/// File offset of checkpoint slot `slot` (0 or 1) in `redo.000`.
pub fn checkpoint_slot_offset(slot: usize) -> u64 {
    BLOCK_BYTES * (1 + slot as u64)
}

pub fn encode_checkpoint(c: &Checkpoint) -> Vec<u8> {
    assert!(c.extra.len() <= CHECKPOINT_EXTRA_BYTES_MAX);
    let mut b = vec![0u8; BLOCK_BYTES as usize];
    b[0..8].copy_from_slice(CHECKPOINT_MAGIC);
    b[8..16].copy_from_slice(&c.sequence.to_le_bytes());
    b[16..24].copy_from_slice(&c.lsn.to_le_bytes());
    b[24..28].copy_from_slice(&c.generation.to_le_bytes());
    b[28..32].copy_from_slice(&(c.extra.len() as u32).to_le_bytes());
    b[32..40].copy_from_slice(&c.complete_lsn.to_le_bytes());
    let end = 40 + c.extra.len();
    b[40..end].copy_from_slice(&c.extra);
    let crc = crc32c::crc32c(&b[0..end]);
    b[end..end + 4].copy_from_slice(&crc.to_le_bytes());
    b
}

/// Decodes a slot; `None` if it was never written or is torn.
pub fn decode_checkpoint(b: &[u8]) -> Option<Checkpoint> {
    let extra_at = match b.get(0..8)? {
        magic if magic == CHECKPOINT_MAGIC => 40,
        magic if magic == CHECKPOINT_MAGIC_V1 => 32,
        _ => return None,
    };
    let extra_bytes = u32::from_le_bytes(b.get(28..32)?.try_into().ok()?) as usize;
    if extra_bytes > CHECKPOINT_EXTRA_BYTES_MAX {
        return None;
    }
    let end = extra_at + extra_bytes;
    if b.len() < end + 4 {
        return None;
    }
    let stored = u32::from_le_bytes(b[end..end + 4].try_into().ok()?);
    if crc32c::crc32c(&b[0..end]) != stored {
        return None;
    }
    Some(Checkpoint {
        sequence: u64::from_le_bytes(b[8..16].try_into().ok()?),
        lsn: u64::from_le_bytes(b[16..24].try_into().ok()?),
        generation: u32::from_le_bytes(b[24..28].try_into().ok()?),
        complete_lsn: if extra_at == 40 {
            u64::from_le_bytes(b[32..40].try_into().ok()?)
        } else {
            0
        },
        extra: b[extra_at..end].to_vec(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_round_trip_and_stamp() {
        let payload = b"abcdefg";
        let mut h = encode_header(BASE_LSN, 7, 3, payload);
        let d = Header::decode(&h, BASE_LSN).expect("valid");
        assert_eq!(
            (d.kind, d.generation, d.payload_bytes, d.chunk_end_lsn),
            (7, 3, 7, 0)
        );
        assert!(d.payload_ok(&h, payload));
        assert!(!d.payload_ok(&h, b"abcdefh"));
        assert!(Header::decode(&h, BASE_LSN + 8).is_none());
        let (end, check) = chunk_stamp(BASE_LSN, BASE_LSN + 4096);
        h[8..16].copy_from_slice(&end);
        h[28..32].copy_from_slice(&check);
        let d = Header::decode(&h, BASE_LSN).expect("stamped");
        assert_eq!(d.chunk_end_lsn, BASE_LSN + 4096);
        assert!(d.payload_ok(&h, payload));
        h[29] ^= 1;
        assert!(Header::decode(&h, BASE_LSN).is_none());
        assert_eq!(record_bytes(7), 40);
        assert_eq!(record_bytes(8), 40);
        assert_eq!(record_bytes(0), 32);
    }

    #[test]
    fn geometry_pieces_wrap() {
        let g = Geometry {
            file_size_bytes: FILE_HEADER_BYTES + 100 * 8,
            file_count: 2,
            base_lsn: BASE_LSN,
        };
        assert_eq!(g.capacity_bytes(), 1600);
        let pieces: Vec<_> = g.pieces(BASE_LSN + 1500, 300).collect();
        assert_eq!(
            pieces,
            vec![
                (1, FILE_HEADER_BYTES + 700, 0, 100),
                (0, FILE_HEADER_BYTES, 100, 200)
            ]
        );
    }

    #[test]
    fn checkpoint_round_trip() {
        let c = Checkpoint {
            sequence: 9,
            lsn: BASE_LSN + 64,
            generation: 2,
            complete_lsn: BASE_LSN + 4096,
            extra: vec![1, 2, 3],
        };
        let b = encode_checkpoint(&c);
        assert_eq!(decode_checkpoint(&b), Some(c.clone()));
        let mut torn = b.clone();
        torn[33] ^= 0xff;
        assert_eq!(decode_checkpoint(&torn), None);
        // A first-version slot: no complete LSN, the extra bytes at offset 32.
        let mut v1 = vec![0u8; BLOCK_BYTES as usize];
        v1[0..8].copy_from_slice(CHECKPOINT_MAGIC_V1);
        v1[8..32].copy_from_slice(&b[8..32]);
        v1[32..35].copy_from_slice(&c.extra);
        let crc = crc32c::crc32c(&v1[0..35]);
        v1[35..39].copy_from_slice(&crc.to_le_bytes());
        assert_eq!(
            decode_checkpoint(&v1),
            Some(Checkpoint {
                complete_lsn: 0,
                ..c
            })
        );
    }
}
