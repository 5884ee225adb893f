//! The gzip member of a record (see the module docs of [`crate::warc`]): the record's body
//! deflated once, in memory, when it is encoded ([`EncodedRecord`]), and the stored start
//! naming the pack's warcinfo record put before it when the pack is known. Separate from the
//! encoders of the record types, which only say which headers and block a record has.

use flate2::{Compress, Compression, FlushCompress, Status};

use super::fields::{push_field, CRLF};
use super::spec::{header, WARC_VERSION};

/// Deflate level of the records: on the rust-doc pages (zlib-rs), level 5
/// compresses 198 MB/s to 11.34% of the input, level 6 (the zlib default)
/// 150 MB/s to 11.22%: a quarter less CPU for 1% more bytes.
const COMPRESSION_LEVEL: u32 = 5;

/// Header of every member written: magic, deflate, no flags, no time, no extra flags, OS
/// unknown.
const GZIP_HEADER: [u8; 10] = [0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255];
/// Largest stored deflate block.
const MAX_STORED_BLOCK: usize = 0xffff;

/// One complete record, compressed, waiting for the pack it goes to (see the module docs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EncodedRecord {
    /// The named WARC headers, `Content-Length`, empty line, block and CRLF CRLF, deflated,
    /// with the final block (what follows the version line and `WARC-Warcinfo-ID`).
    body: Deflated,
    /// `WARC-Record-ID`, e.g. `<urn:uuid:…>`.
    pub record_id: String,
    /// `WARC-Payload-Digest` (`sha1:BASE32`) when the record has one.
    pub payload_digest: Option<String>,
}

/// A run of deflate blocks with the CRC-32 and length of what it holds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Deflated {
    bytes: Vec<u8>,
    crc: u32,
    len: u64,
}

impl EncodedRecord {
    /// A record that is never written (it already lies in a pack): its id and digest only.
    /// [`EncodedRecord::member`] of it is not a valid gzip member.
    pub fn id_only(record_id: String, payload_digest: Option<String>) -> Self {
        Self {
            body: Deflated::default(),
            record_id,
            payload_digest,
        }
    }

    /// The record as one gzip member, with `WARC-Warcinfo-ID: warcinfo_id` among its headers
    /// when given (the pack's warcinfo record; `None` for the warcinfo record itself).
    pub fn member(&self, warcinfo_id: Option<&str>) -> Vec<u8> {
        let prefix = stored_prefix(warcinfo_id);
        let mut out = Vec::with_capacity(self.member_len_with(prefix.len()) as usize);
        out.extend_from_slice(&GZIP_HEADER);
        for chunk in prefix.chunks(MAX_STORED_BLOCK) {
            let len = chunk.len() as u16;
            out.push(0); // BFINAL 0, BTYPE 00 (stored); we are at a byte boundary.
            out.extend_from_slice(&len.to_le_bytes());
            out.extend_from_slice(&(!len).to_le_bytes());
            out.extend_from_slice(chunk);
        }
        out.extend_from_slice(&self.body.bytes);
        let mut crc = crc32fast::Hasher::new();
        crc.update(&prefix);
        crc.combine(&crc32fast::Hasher::new_with_initial_len(
            self.body.crc,
            self.body.len,
        ));
        let size = prefix.len() as u64 + self.body.len;
        out.extend_from_slice(&crc.finalize().to_le_bytes());
        // ISIZE: the uncompressed length modulo 2^32.
        out.extend_from_slice(&(size as u32).to_le_bytes());
        out
    }

    /// Length of [`EncodedRecord::member`] for `warcinfo_id`, without building it.
    pub fn member_len(&self, warcinfo_id: Option<&str>) -> u64 {
        self.member_len_with(stored_prefix(warcinfo_id).len())
    }

    fn member_len_with(&self, prefix: usize) -> u64 {
        let stored = prefix + prefix.div_ceil(MAX_STORED_BLOCK) * 5;
        (GZIP_HEADER.len() + stored + self.body.bytes.len() + 8) as u64
    }
}

/// The stored start of a record: the version line, then `WARC-Warcinfo-ID` when given.
fn stored_prefix(warcinfo_id: Option<&str>) -> Vec<u8> {
    let mut prefix = Vec::with_capacity(96);
    prefix.extend_from_slice(WARC_VERSION.as_bytes());
    prefix.extend_from_slice(CRLF);
    if let Some(id) = warcinfo_id {
        push_field(&mut prefix, header::WARCINFO_ID, id);
    }
    prefix
}

/// The record of `headers` and `block` (in parts), compressed.
pub(super) fn record(
    headers: &[(&str, &str)],
    block: &[&[u8]],
    record_id: String,
    payload_digest: Option<String>,
) -> EncodedRecord {
    EncodedRecord {
        body: encode_body(headers, block),
        record_id,
        payload_digest,
    }
}

/// Serialises and compresses what follows a record's stored start (see the module docs):
/// `headers`, `Content-Length` and the block, given in parts (an HTTP head and its payload)
/// and compressed where they lie.
fn encode_body(headers: &[(&str, &str)], block: &[&[u8]]) -> Deflated {
    let mut head = Vec::with_capacity(512);
    for (name, value) in headers {
        push_field(&mut head, name, value);
    }
    let block_len: usize = block.iter().map(|b| b.len()).sum();
    push_field(&mut head, header::CONTENT_LENGTH, &block_len.to_string());
    head.extend_from_slice(CRLF);
    let mut parts: Vec<&[u8]> = Vec::with_capacity(block.len() + 2);
    parts.push(&head);
    parts.extend_from_slice(block);
    parts.push(b"\r\n\r\n");
    COMPRESS.with(|c| {
        let mut compress = c.borrow_mut();
        compress.reset();
        deflate(&mut compress, &parts)
    })
}

thread_local! {
    /// One compressor a thread, reset for each stream: a new one allocates
    /// and clears its window and hash tables (hundreds of KiB) every time.
    static COMPRESS: std::cell::RefCell<Compress> =
        std::cell::RefCell::new(Compress::new(Compression::new(COMPRESSION_LEVEL), false));
}

/// Raw deflate of `parts` (one input, in order) from a fresh (or reset)
/// compressor, ended by the final block.
fn deflate(compress: &mut Compress, parts: &[&[u8]]) -> Deflated {
    let total: usize = parts.iter().map(|p| p.len()).sum();
    let mut out = Vec::with_capacity(total / 3 + 64);
    let mut crc = crc32fast::Hasher::new();
    let last = parts.len().saturating_sub(1);
    for (i, part) in parts.iter().enumerate() {
        crc.update(part);
        let finish = i == last;
        let mode = if finish {
            FlushCompress::Finish
        } else {
            FlushCompress::None
        };
        let start = compress.total_in();
        loop {
            if out.capacity() - out.len() < 64 {
                out.reserve(out.capacity().max(256));
            }
            let consumed = (compress.total_in() - start) as usize;
            let status = compress.compress_vec(&part[consumed..], &mut out, mode);
            let consumed = (compress.total_in() - start) as usize;
            match status {
                Ok(Status::StreamEnd) => break,
                // Done with a part when all its input is in and the output was
                // not filled.
                Ok(_) if !finish && consumed == part.len() && out.len() < out.capacity() => break,
                Ok(_) => {}
                // Compressing into memory cannot fail.
                Err(e) => unreachable!("deflate into memory failed: {e}"),
            }
        }
    }
    Deflated {
        bytes: out,
        crc: crc.finalize(),
        len: total as u64,
    }
}
