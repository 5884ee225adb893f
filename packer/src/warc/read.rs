//! Reading records from bytes in memory: one record ([`read_record`]), or a whole pack up to
//! its first unreadable record ([`RecordIter`]). Each record is one gzip member or a plain
//! record.

use std::io::Read;

use crate::error::{Error, Result};

use super::record::{find_header, parse_header_lines, split_head, WarcRecord};
use super::spec::{header, GZIP_MAGIC, MAX_RECORD_BYTES};

/// Parses one uncompressed record at the start of `data`. Returns the record and the
/// number of bytes it used (including the closing CRLF CRLF when present).
fn parse_uncompressed(data: &[u8]) -> std::result::Result<(WarcRecord, usize), String> {
    if !data.starts_with(b"WARC/") {
        return Err("does not start with a WARC/ version line".to_string());
    }
    let (lines, block_start) = split_head(data)
        .ok_or_else(|| "header block not terminated by an empty line".to_string())?;
    let mut lines = lines.into_iter();
    let _version = lines.next();
    let headers = parse_header_lines(lines)?;
    let content_length = find_header(&headers, header::CONTENT_LENGTH)
        .ok_or_else(|| "missing Content-Length".to_string())?
        .parse::<u64>()
        .map_err(|_| "Content-Length is not a number".to_string())?;
    let available = (data.len() - block_start) as u64;
    if content_length > available {
        return Err(format!(
            "block truncated: Content-Length {content_length}, {available} bytes present"
        ));
    }
    // content_length <= available, which fits in usize.
    let block_end = block_start + content_length as usize;
    let block = data[block_start..block_end].to_vec();
    let mut used = block_end;
    let rest = &data[block_end..];
    if rest.starts_with(b"\r\n\r\n") {
        used += 4;
    } else if rest.starts_with(b"\n\n") {
        used += 2;
    }
    Ok((WarcRecord { headers, block }, used))
}

/// Decompresses exactly one gzip member from the front of `data`, returning the
/// decompressed bytes and the compressed length of the member.
pub(super) fn gunzip_member(data: &[u8]) -> std::result::Result<(Vec<u8>, usize), String> {
    let mut input: &[u8] = data;
    let mut out = Vec::new();
    {
        let decoder = flate2::bufread::GzDecoder::new(&mut input);
        let read = decoder
            .take(MAX_RECORD_BYTES + 1)
            .read_to_end(&mut out)
            .map_err(|e| format!("gzip member unreadable: {e}"))?;
        if read as u64 > MAX_RECORD_BYTES {
            return Err(format!("record larger than {MAX_RECORD_BYTES} bytes"));
        }
    }
    let consumed = data.len() - input.len();
    Ok((out, consumed))
}

/// Decodes one record: a single gzip member (as written by this module), or an
/// uncompressed record. Bytes after the record are ignored.
pub fn read_record(bytes: &[u8]) -> Result<WarcRecord> {
    if bytes.starts_with(&GZIP_MAGIC) {
        let (raw, _) = gunzip_member(bytes).map_err(|r| Error::corrupt(0, r))?;
        let (record, _) = parse_uncompressed(&raw).map_err(|r| Error::corrupt(0, r))?;
        Ok(record)
    } else {
        let (record, _) = parse_uncompressed(bytes).map_err(|r| Error::corrupt(0, r))?;
        Ok(record)
    }
}

/// Iterates over the records of a whole pack (`.warc.gz` with one member per record, or an
/// uncompressed `.warc`), yielding `(offset, length, record)` with offsets/lengths of the
/// stored (compressed) bytes. At the first unreadable record it yields one
/// [`Error::CorruptRecord`] with that offset and then stops; everything before it has been
/// returned already, so a pack with a torn tail can be recovered up to the tear.
#[derive(Debug)]
pub struct RecordIter<'a> {
    data: &'a [u8],
    offset: usize,
    done: bool,
}

impl<'a> RecordIter<'a> {
    /// Iterates over `data`, a whole pack.
    pub fn new(data: &'a [u8]) -> Self {
        Self {
            data,
            offset: 0,
            done: false,
        }
    }

    /// Byte offset where the next record would start (after iteration ends without error:
    /// the length of the readable prefix).
    pub fn offset(&self) -> u64 {
        self.offset as u64
    }

    fn next_record(&self) -> std::result::Result<(WarcRecord, usize), String> {
        record_at(&self.data[self.offset..])
    }
}

/// The record at the start of `data` (one gzip member, or a plain record) and the bytes it
/// takes.
pub(super) fn record_at(data: &[u8]) -> std::result::Result<(WarcRecord, usize), String> {
    if data.starts_with(&GZIP_MAGIC) {
        let (raw, consumed) = gunzip_member(data)?;
        let (record, used) = parse_uncompressed(&raw)?;
        if used < raw.len() && raw[used..].iter().any(|b| !b.is_ascii_whitespace()) {
            return Err("gzip member holds more than one record".to_string());
        }
        Ok((record, consumed))
    } else {
        parse_uncompressed(data)
    }
}

impl Iterator for RecordIter<'_> {
    type Item = Result<(u64, u64, WarcRecord)>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done || self.offset >= self.data.len() {
            return None;
        }
        let offset = self.offset as u64;
        match self.next_record() {
            Ok((record, len)) => {
                self.offset += len;
                Some(Ok((offset, len as u64, record)))
            }
            Err(reason) => {
                self.done = true;
                Some(Err(Error::corrupt(offset, reason)))
            }
        }
    }
}

impl std::iter::FusedIterator for RecordIter<'_> {}
