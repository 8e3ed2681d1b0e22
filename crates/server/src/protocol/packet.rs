//! Packet framing: reading whole payloads and writing packets into buffers.
//!
//! Writers build packets in a `Vec<u8>` with [`begin`] and [`finish`], leaving the
//! sequence byte zero; [`stamp_sequence`] numbers a buffer's packets in order just
//! before it is written. That split is what lets several threads encode rows of one
//! result at once (S1, section 3): each fills its own buffer, and the one writer
//! stamps the numbers, which depend only on the order.
//!
//! Invariant: a buffer handed to [`stamp_sequence`] holds only whole packets.

use tokio::io::{AsyncRead, AsyncReadExt};

/// The largest payload one packet carries; longer payloads continue.
pub const MAX_PAYLOAD_BYTES: usize = 0xff_ffff;

/// Why a payload could not be read.
#[derive(Debug)]
pub enum ReadError {
    /// The peer closed the connection between packets.
    Closed,
    Io(std::io::Error),
    /// The sequence number was not the expected one.
    OutOfOrder {
        expected: u8,
        got: u8,
    },
    /// The payload is longer than `max_allowed_packet` (error 1153).
    TooLarge {
        limit_bytes: usize,
    },
}

impl From<std::io::Error> for ReadError {
    fn from(e: std::io::Error) -> Self {
        if e.kind() == std::io::ErrorKind::UnexpectedEof {
            ReadError::Closed
        } else {
            ReadError::Io(e)
        }
    }
}

/// What the async and the blocking reader share: the sequence check, the size
/// limit, and when a payload ends.
struct Assembly {
    limit_bytes: usize,
    /// The payload passed the limit: its remaining packets are skipped.
    too_large: bool,
}

impl Assembly {
    /// Checks one packet header against the expected `seq` (then advanced).
    /// Returns the packet's length and whether its bytes go into `out` (else they
    /// are to be skipped).
    fn header(
        &mut self,
        header: [u8; 4],
        seq: &mut u8,
        out: &mut Vec<u8>,
    ) -> Result<(usize, bool), ReadError> {
        let len = u32::from_le_bytes([header[0], header[1], header[2], 0]) as usize;
        if header[3] != *seq {
            return Err(ReadError::OutOfOrder {
                expected: *seq,
                got: header[3],
            });
        }
        *seq = seq.wrapping_add(1);
        if self.too_large || out.len() + len > self.limit_bytes {
            self.too_large = true;
            out.clear();
            return Ok((len, false));
        }
        Ok((len, true))
    }

    fn finish(self, out: &mut Vec<u8>) -> Result<(), ReadError> {
        if self.too_large {
            out.clear();
            return Err(ReadError::TooLarge {
                limit_bytes: self.limit_bytes,
            });
        }
        Ok(())
    }
}

fn header_error(e: std::io::Error, out: &[u8]) -> ReadError {
    if e.kind() == std::io::ErrorKind::UnexpectedEof && out.is_empty() {
        ReadError::Closed
    } else {
        e.into()
    }
}

/// Reads one payload, joining continuation packets. `seq` is the expected sequence
/// number of the first packet and, on return, the next one expected from the peer.
/// A payload over `limit_bytes` is read and dropped (so the stream stays in sync)
/// and reported as [`ReadError::TooLarge`].
pub async fn read_payload<R: AsyncRead + Unpin>(
    reader: &mut R,
    seq: &mut u8,
    limit_bytes: usize,
    out: &mut Vec<u8>,
) -> Result<(), ReadError> {
    out.clear();
    let mut assembly = Assembly {
        limit_bytes,
        too_large: false,
    };
    loop {
        let mut header = [0u8; 4];
        if let Err(e) = reader.read_exact(&mut header).await {
            return Err(header_error(e, out));
        }
        let (len, keep) = assembly.header(header, seq, out)?;
        if keep {
            let start = out.len();
            out.resize(start + len, 0);
            reader.read_exact(&mut out[start..]).await?;
        } else {
            let skipped =
                tokio::io::copy(&mut reader.take(len as u64), &mut tokio::io::sink()).await?;
            if skipped < len as u64 {
                return Err(ReadError::Closed);
            }
        }
        if len < MAX_PAYLOAD_BYTES {
            return assembly.finish(out);
        }
    }
}

/// [`read_payload`] on a blocking socket (a runner reading its connection's next
/// command, see `connection::run_job`).
pub fn read_payload_blocking<R: std::io::Read + ?Sized>(
    reader: &mut R,
    seq: &mut u8,
    limit_bytes: usize,
    out: &mut Vec<u8>,
) -> Result<(), ReadError> {
    out.clear();
    let mut assembly = Assembly {
        limit_bytes,
        too_large: false,
    };
    loop {
        let mut header = [0u8; 4];
        if let Err(e) = reader.read_exact(&mut header) {
            return Err(header_error(e, out));
        }
        let (len, keep) = assembly.header(header, seq, out)?;
        if keep {
            let start = out.len();
            out.resize(start + len, 0);
            reader.read_exact(&mut out[start..])?;
        } else {
            let skipped = std::io::copy(
                &mut std::io::Read::take(&mut *reader, len as u64),
                &mut std::io::sink(),
            )?;
            if skipped < len as u64 {
                return Err(ReadError::Closed);
            }
        }
        if len < MAX_PAYLOAD_BYTES {
            return assembly.finish(out);
        }
    }
}

/// Starts a packet at the end of `out`: reserves its header. Returns where it starts.
pub fn begin(out: &mut Vec<u8>) -> usize {
    let start = out.len();
    out.extend_from_slice(&[0, 0, 0, 0]);
    start
}

/// Ends the packet begun at `start`: writes its length, and splits a payload of
/// [`MAX_PAYLOAD_BYTES`] or more into continuation packets.
pub fn finish(out: &mut Vec<u8>, start: usize) {
    let len = out.len() - start - 4;
    if len < MAX_PAYLOAD_BYTES {
        out[start..start + 3].copy_from_slice(&(len as u32).to_le_bytes()[..3]);
        return;
    }
    // Rare (a row over 16 MiB): rebuild the tail with a header per piece.
    let payload = out.split_off(start + 4);
    out.truncate(start);
    let mut pieces = payload.chunks(MAX_PAYLOAD_BYTES).peekable();
    while let Some(piece) = pieces.next() {
        out.extend_from_slice(&(piece.len() as u32).to_le_bytes()[..3]);
        out.push(0);
        out.extend_from_slice(piece);
        if pieces.peek().is_none() && piece.len() == MAX_PAYLOAD_BYTES {
            out.extend_from_slice(&[0, 0, 0, 0]);
        }
    }
}

/// Appends a whole packet with `payload`.
pub fn put(out: &mut Vec<u8>, payload: &[u8]) {
    let start = begin(out);
    out.extend_from_slice(payload);
    finish(out, start);
}

/// Numbers the packets in `buf` from `seq` on; returns the next number.
pub fn stamp_sequence(buf: &mut [u8], mut seq: u8) -> u8 {
    let mut pos = 0;
    while pos + 4 <= buf.len() {
        let len = u32::from_le_bytes([buf[pos], buf[pos + 1], buf[pos + 2], 0]) as usize;
        buf[pos + 3] = seq;
        seq = seq.wrapping_add(1);
        pos += 4 + len;
    }
    debug_assert_eq!(pos, buf.len(), "a buffer holds whole packets");
    seq
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_all(bytes: Vec<u8>, limit: usize) -> Result<Vec<u8>, ReadError> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        rt.block_on(async {
            let mut reader = &bytes[..];
            let mut seq = 0;
            let mut out = Vec::new();
            read_payload(&mut reader, &mut seq, limit, &mut out).await?;
            // The blocking twin reads the same.
            let (mut blocking, mut seq2, mut out2) = (&bytes[..], 0, Vec::new());
            read_payload_blocking(&mut blocking, &mut seq2, limit, &mut out2)?;
            assert_eq!((out2.as_slice(), seq2), (out.as_slice(), seq));
            Ok(out)
        })
    }

    #[test]
    fn payloads_of_16_mib_and_more_split_and_join() {
        for len in [
            0,
            1,
            MAX_PAYLOAD_BYTES - 1,
            MAX_PAYLOAD_BYTES,
            MAX_PAYLOAD_BYTES + 7,
            2 * MAX_PAYLOAD_BYTES,
        ] {
            let payload: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
            let mut buf = Vec::new();
            put(&mut buf, &payload);
            let packets = len / MAX_PAYLOAD_BYTES + 1;
            assert_eq!(buf.len(), len + 4 * packets, "len {len}");
            assert_eq!(stamp_sequence(&mut buf, 0), packets as u8);
            assert_eq!(read_all(buf, 1 << 30).unwrap(), payload, "len {len}");
        }
    }

    #[test]
    fn a_payload_over_the_limit_is_too_large_and_a_bad_sequence_is_refused() {
        let mut buf = Vec::new();
        put(&mut buf, &[7u8; 100]);
        assert!(matches!(
            read_all(buf.clone(), 99),
            Err(ReadError::TooLarge { limit_bytes: 99 })
        ));
        buf[3] = 5;
        assert!(matches!(
            read_all(buf, 1000),
            Err(ReadError::OutOfOrder {
                expected: 0,
                got: 5
            })
        ));
        assert!(matches!(read_all(vec![1, 0], 1000), Err(ReadError::Closed)));
    }
}
