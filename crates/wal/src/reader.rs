//! The recovery reader: the records of the durable log, in LSN order, up to its torn
//! end.
//!
//! The reader reads the files sequentially in `READ_BYTES` pieces into one buffer
//! and parses records in place, so replay costs one large `pread` per few MiB plus a
//! crc32c pass (hardware-accelerated) over every byte. It never writes.
//!
//! A record is accepted only if its header names its own position (stale bytes of an
//! older lap never do), its length is possible, and its checksum matches. On top of
//! that, chunks (see `format`) are all or nothing: a record stamped with a chunk end is
//! returned only after every record up to that end has been checked and found intact
//! and of the same generation; otherwise the log ends at the chunk's start. Once a
//! stamped record has been seen, every later chunk must start with a stamp. Records
//! read before the first stamp (the reader started inside a chunk, as it does at a
//! checkpoint) are accepted one by one, but only below the checkpoint's complete LSN:
//! the log was durable up to there when the checkpoint was written, so the chunk the
//! checkpoint falls in was complete up to there. A checkpoint taken at the very end of
//! the log falls in no chunk yet, and the bytes after it may be an earlier opening's
//! torn or unsynced tail, with intact records at exactly those LSNs: past the complete
//! LSN only a stamped chunk counts (see `format`).

use tarn_common::{Lsn, Result};

use crate::files::LogFiles;
use crate::format::{Header, RECORD_HEADER_BYTES};

/// Bytes read from the files per `pread` (at least).
const READ_BYTES: u64 = 4 << 20;

/// One record as the reader returns it.
#[derive(Debug, PartialEq, Eq)]
pub struct LogRecord<'r> {
    pub start_lsn: Lsn,
    /// The LSN just past the record: pages changed by it are stamped with this.
    pub end_lsn: Lsn,
    pub kind: u8,
    pub payload: &'r [u8],
}

/// Iterates the valid records from a starting LSN. See the module documentation.
pub struct LogReader<'w> {
    files: &'w LogFiles,
    /// The start of the next record to return.
    position: u64,
    /// Never read at or beyond this (one ring lap past the start).
    limit: u64,
    /// Holds the log bytes `[buffer_lsn, buffer_lsn + buffer.len())`.
    buffer: Vec<u8>,
    buffer_lsn: u64,
    /// Records below this have been checked (a whole chunk at a time).
    validated_until: u64,
    /// A stamped record has been seen: every chunk must now start with a stamp.
    strict: bool,
    /// Unstamped records are taken one by one only below this (the checkpoint's
    /// complete LSN; `u64::MAX` if unknown).
    loose_until: u64,
    finished: bool,
    records_read: u64,
}

impl<'w> LogReader<'w> {
    /// A reader from `start_lsn` that takes unstamped records before the first stamp
    /// only below `loose_until` (see the module documentation).
    pub(crate) fn new(files: &'w LogFiles, start_lsn: u64, loose_until: u64) -> LogReader<'w> {
        LogReader {
            files,
            position: start_lsn,
            limit: start_lsn + files.geometry.capacity_bytes(),
            buffer: Vec::new(),
            buffer_lsn: start_lsn,
            validated_until: start_lsn,
            strict: false,
            loose_until,
            finished: false,
            records_read: 0,
        }
    }

    /// The end of the last record returned: after `next_record` returned `None`, the
    /// end of the valid log, where appending continues.
    pub fn position(&self) -> Lsn {
        Lsn(self.position)
    }

    /// Records returned so far.
    pub fn records_read(&self) -> u64 {
        self.records_read
    }

    /// The next valid record, or `None` at the end of the valid log. Errors are I/O
    /// errors only; a damaged record is the end of the log, not an error.
    pub fn next_record(&mut self) -> Result<Option<LogRecord<'_>>> {
        if self.finished {
            return Ok(None);
        }
        if self.position >= self.validated_until && !self.validate_next()? {
            self.finished = true;
            return Ok(None);
        }
        let at = (self.position - self.buffer_lsn) as usize;
        let header = Header::decode(&self.buffer[at..at + RECORD_HEADER_BYTES], self.position)
            .expect("validated record");
        let start = self.position;
        let end = start + header.record_bytes();
        self.position = end;
        self.records_read += 1;
        let payload_at = at + RECORD_HEADER_BYTES;
        Ok(Some(LogRecord {
            start_lsn: Lsn(start),
            end_lsn: Lsn(end),
            kind: header.kind,
            payload: &self.buffer[payload_at..payload_at + header.payload_bytes],
        }))
    }

    /// Checks the record (or whole chunk) at `position`; false at the end of the log.
    fn validate_next(&mut self) -> Result<bool> {
        let start = self.position;
        let Some(first) = self.record_at(start)? else {
            return Ok(false);
        };
        if first.chunk_end_lsn == 0 {
            if self.strict || start >= self.loose_until {
                return Ok(false);
            }
            self.validated_until = start + first.record_bytes();
            return Ok(true);
        }
        let chunk_end = first.chunk_end_lsn;
        if chunk_end > self.limit {
            return Ok(false);
        }
        let mut at = start + first.record_bytes();
        while at < chunk_end {
            match self.record_at(at)? {
                Some(h) if h.generation == first.generation && h.chunk_end_lsn == 0 => {
                    at += h.record_bytes();
                }
                _ => return Ok(false),
            }
        }
        if at != chunk_end {
            return Ok(false);
        }
        self.strict = true;
        self.validated_until = chunk_end;
        Ok(true)
    }

    /// The header of an intact record at `lsn`, with the record in the buffer.
    fn record_at(&mut self, lsn: u64) -> Result<Option<Header>> {
        if !self.ensure(lsn, RECORD_HEADER_BYTES as u64)? {
            return Ok(None);
        }
        let at = (lsn - self.buffer_lsn) as usize;
        let Some(header) = Header::decode(&self.buffer[at..at + RECORD_HEADER_BYTES], lsn) else {
            return Ok(None);
        };
        if !self.ensure(lsn, header.record_bytes())? {
            return Ok(None);
        }
        let at = (lsn - self.buffer_lsn) as usize;
        let bytes = &self.buffer[at..at + RECORD_HEADER_BYTES + header.payload_bytes];
        let (head, payload) = bytes.split_at(RECORD_HEADER_BYTES);
        Ok(header.payload_ok(head, payload).then_some(header))
    }

    /// Makes `[lsn, lsn + len)` present in the buffer; false if it reaches the limit.
    /// Bytes before `position` are dropped first, so the buffer holds at most the
    /// chunk being checked plus one read.
    fn ensure(&mut self, lsn: u64, len: u64) -> Result<bool> {
        let need_end = lsn + len;
        if need_end > self.limit {
            return Ok(false);
        }
        let buffer_end = self.buffer_lsn + self.buffer.len() as u64;
        if lsn >= self.buffer_lsn && need_end <= buffer_end {
            return Ok(true);
        }
        if self.position >= buffer_end {
            self.buffer.clear();
            self.buffer_lsn = self.position;
        } else if self.position > self.buffer_lsn {
            self.buffer
                .drain(..(self.position - self.buffer_lsn) as usize);
            self.buffer_lsn = self.position;
        }
        let have_end = self.buffer_lsn + self.buffer.len() as u64;
        let read_end = need_end.max(have_end + READ_BYTES).min(self.limit);
        let old_len = self.buffer.len();
        self.buffer
            .resize(old_len + (read_end - have_end) as usize, 0);
        self.files
            .read_ring(have_end, &mut self.buffer[old_len..])?;
        Ok(true)
    }
}
