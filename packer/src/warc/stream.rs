//! [`RecordReader`]: the records of a WARC file read from a stream instead of bytes in
//! memory, in memory bounded by the largest block held; blocks over the limit are read past
//! ([`Streamed::Oversized`]). Its record reading is shared with the ARC reader
//! ([`crate::arc`]).

use std::io::Read;

use crate::error::{Error, Result};

use super::record::{find_header, parse_header_lines, split_head, WarcRecord};
use super::spec::{header, GZIP_MAGIC, MAX_RECORD_BYTES};

/// A [`BufRead`](std::io::BufRead) that counts the bytes consumed from it.
struct Counted<R> {
    inner: R,
    consumed: u64,
}

impl<R: std::io::BufRead> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.consumed += n as u64;
        Ok(n)
    }
}

impl<R: std::io::BufRead> std::io::BufRead for Counted<R> {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        self.inner.fill_buf()
    }

    fn consume(&mut self, amt: usize) {
        self.consumed += amt as u64;
        self.inner.consume(amt);
    }
}

/// The WARC headers of a record whose block [`RecordReader`] read past
/// without holding it (longer than its limit).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordHead {
    /// WARC headers in file order (names as written).
    pub headers: Vec<(String, String)>,
    /// The block's length (`Content-Length`).
    pub block_len: u64,
}

impl RecordHead {
    /// First value of a WARC header (case-insensitive name).
    pub fn header(&self, name: &str) -> Option<&str> {
        find_header(&self.headers, name)
    }

    /// `WARC-Type`.
    pub fn record_type(&self) -> Option<&str> {
        self.header(header::WARC_TYPE)
    }

    /// `WARC-Target-URI`.
    pub fn target_uri(&self) -> Option<&str> {
        self.header(header::TARGET_URI)
    }
}

/// A record as [`RecordReader`] gives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Streamed {
    /// A whole record, its block in memory.
    Record(WarcRecord),
    /// A record whose block is longer than the reader's limit
    /// ([`RecordReader::with_max_block`]): its headers only. The block was
    /// read to its end and dropped as it streamed, so the next record
    /// follows.
    Oversized(RecordHead),
}

/// Size of the reading buffer over a gzip member's decompressed bytes.
const MEMBER_BUFFER_BYTES: usize = 64 * 1024;
/// Longest header line of a streamed record.
pub(crate) const MAX_HEADER_LINE_BYTES: u64 = 64 * 1024;
/// Largest header block of a streamed record.
const MAX_HEADER_BYTES: usize = 1 << 20;

/// [`RecordIter`] over a reader instead of bytes in memory: the records of a
/// WARC file of any size (one gzip member per record, or uncompressed), each
/// with its offset and stored length, in memory bounded by the largest block
/// it holds: a record whose `Content-Length` is over the limit
/// ([`RecordReader::with_max_block`], at most [`MAX_RECORD_BYTES`]) comes as
/// [`Streamed::Oversized`], its block read and dropped as it streams (a gzip
/// member still read to its end, so the next record is found). Bytes after
/// a record inside its gzip member are read the same way, a buffer at a
/// time. Like [`RecordIter`] it yields one [`Error::CorruptRecord`] at the
/// first unreadable record (a truncated file: at the record it cuts) and
/// stops.
pub struct RecordReader<R> {
    input: Counted<R>,
    pub(super) max_block: u64,
    done: bool,
    /// Reads one uncompressed record of the file's format (WARC here, ARC in
    /// [`crate::arc`]).
    parse: ParseRecord,
}

/// Reads one uncompressed record from the front of a stream: `(input, max_block,
/// unreadable)` as [`read_streamed_record`] takes them.
pub(crate) type ParseRecord =
    fn(&mut dyn std::io::BufRead, u64, &str) -> std::result::Result<Streamed, String>;

fn parse_warc(
    input: &mut dyn std::io::BufRead,
    max_block: u64,
    unreadable: &str,
) -> std::result::Result<Streamed, String> {
    let mut input = input;
    read_streamed_record(&mut input, max_block, unreadable)
}

impl<R: std::io::BufRead> RecordReader<R> {
    /// Reads records from `input`, positioned at the first record; blocks of
    /// up to [`MAX_RECORD_BYTES`] are held.
    pub fn new(input: R) -> Self {
        Self::with_parser(input, parse_warc)
    }

    /// Reads records of another format, each read by `parse`.
    pub(crate) fn with_parser(input: R, parse: ParseRecord) -> Self {
        Self {
            input: Counted {
                inner: input,
                consumed: 0,
            },
            max_block: MAX_RECORD_BYTES,
            done: false,
            parse,
        }
    }

    /// Holds blocks of at most `max_block` bytes (and never more than
    /// [`MAX_RECORD_BYTES`]); a longer one comes as [`Streamed::Oversized`].
    pub fn with_max_block(mut self, max_block: u64) -> Self {
        self.max_block = max_block.min(MAX_RECORD_BYTES);
        self
    }

    fn read_one(&mut self) -> std::result::Result<Streamed, String> {
        use std::io::BufRead;
        let ahead = self
            .input
            .fill_buf()
            .map_err(|e| format!("unreadable: {e}"))?;
        // The first byte tells (a buffer may hold only one): a plain record
        // starts with `W`.
        if ahead.first() != Some(&GZIP_MAGIC[0]) {
            return (self.parse)(&mut self.input, self.max_block, "unreadable");
        }
        let gzip = "gzip member unreadable";
        let mut member = std::io::BufReader::with_capacity(
            MEMBER_BUFFER_BYTES,
            flate2::bufread::GzDecoder::new(&mut self.input),
        );
        let record = (self.parse)(&mut member, self.max_block, gzip)?;
        // The rest of the member, a buffer at a time: blank lines at most.
        loop {
            let rest = member.fill_buf().map_err(|e| format!("{gzip}: {e}"))?;
            if rest.is_empty() {
                return Ok(record);
            }
            if rest.iter().any(|b| !b.is_ascii_whitespace()) {
                return Err("gzip member holds more than one record".to_string());
            }
            let n = rest.len();
            member.consume(n);
        }
    }
}

/// A record's block of `length` bytes from `input`: held when at most `max_block` bytes,
/// else read and dropped (`None`); an error when fewer bytes are there (`label` names the
/// length's field, `unreadable` opens a read error's message).
pub(crate) fn read_block(
    input: &mut impl std::io::BufRead,
    length: u64,
    max_block: u64,
    label: &str,
    unreadable: &str,
) -> std::result::Result<Option<Vec<u8>>, String> {
    let io = |e: std::io::Error| format!("{unreadable}: {e}");
    let truncated = |read: u64| format!("block truncated: {label} {length}, {read} bytes present");
    if length > max_block {
        let read =
            std::io::copy(&mut input.by_ref().take(length), &mut std::io::sink()).map_err(io)?;
        if read < length {
            return Err(truncated(read));
        }
        return Ok(None);
    }
    // `length` is at most `max_block`, itself at most MAX_RECORD_BYTES; the vector grows
    // with what is really there.
    let mut block = Vec::with_capacity(length.min(1 << 20) as usize);
    let read = input
        .by_ref()
        .take(length)
        .read_to_end(&mut block)
        .map_err(io)?;
    if (read as u64) < length {
        return Err(truncated(read as u64));
    }
    Ok(Some(block))
}

/// One uncompressed record from `input`: its header lines up to the empty
/// line, the block by its `Content-Length` (held when at most `max_block`
/// bytes, else read and dropped), then the record's closing blank lines.
/// `unreadable` opens the message of a read error.
fn read_streamed_record(
    input: &mut impl std::io::BufRead,
    max_block: u64,
    unreadable: &str,
) -> std::result::Result<Streamed, String> {
    use std::io::BufRead;
    let io = |e: std::io::Error| format!("{unreadable}: {e}");
    let mut head = Vec::new();
    loop {
        let start = head.len();
        let n = input
            .by_ref()
            .take(MAX_HEADER_LINE_BYTES)
            .read_until(b'\n', &mut head)
            .map_err(io)?;
        if n == 0 || !head.ends_with(b"\n") {
            return Err("header block not terminated by an empty line".to_string());
        }
        if head.len() > MAX_HEADER_BYTES {
            return Err("header block larger than 1 MiB".to_string());
        }
        // An empty line: LF, CRLF or CR CR LF.
        if head[start..].iter().all(|&b| b == b'\r' || b == b'\n') {
            break;
        }
    }
    if !head.starts_with(b"WARC/") {
        return Err("does not start with a WARC/ version line".to_string());
    }
    let (lines, _) = split_head(&head)
        .ok_or_else(|| "header block not terminated by an empty line".to_string())?;
    let headers = parse_header_lines(lines.into_iter().skip(1))?;
    let length = find_header(&headers, header::CONTENT_LENGTH)
        .ok_or_else(|| "missing Content-Length".to_string())?
        .parse::<u64>()
        .map_err(|_| "Content-Length is not a number".to_string())?;
    let streamed = match read_block(input, length, max_block, "Content-Length", unreadable)? {
        None => Streamed::Oversized(RecordHead {
            headers,
            block_len: length,
        }),
        Some(block) => Streamed::Record(WarcRecord { headers, block }),
    };
    // The blank lines that close the record (CRLF CRLF as written; up to
    // four line-end bytes taken, one at a time across buffer ends).
    for _ in 0..4 {
        match input.fill_buf().map_err(io)?.first() {
            Some(b'\r' | b'\n') => input.consume(1),
            _ => break,
        }
    }
    Ok(streamed)
}

impl<R: std::io::BufRead> Iterator for RecordReader<R> {
    type Item = Result<(u64, u64, Streamed)>;

    fn next(&mut self) -> Option<Self::Item> {
        use std::io::BufRead;
        if self.done {
            return None;
        }
        // Blank lines between records (more than the record's own closing CRLF CRLF, as
        // some tools write) are read past, as warcio does.
        loop {
            let offset = self.input.consumed;
            match self.input.fill_buf() {
                Ok([]) => {
                    self.done = true;
                    return None;
                }
                Ok(ahead) => {
                    let blank = ahead
                        .iter()
                        .take_while(|b| matches!(b, b'\r' | b'\n' | b' ' | b'\t'))
                        .count();
                    if blank == 0 {
                        break;
                    }
                    self.input.consume(blank);
                }
                Err(e) => {
                    self.done = true;
                    return Some(Err(Error::corrupt(offset, format!("unreadable: {e}"))));
                }
            }
        }
        let offset = self.input.consumed;
        match self.read_one() {
            Ok(record) => Some(Ok((offset, self.input.consumed - offset, record))),
            Err(reason) => {
                self.done = true;
                Some(Err(Error::corrupt(offset, reason)))
            }
        }
    }
}
