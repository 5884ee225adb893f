//! WARC/1.1 records, each one its own gzip member, and a tolerant reader.
//!
//! Writing: [`encode_warcinfo`], [`encode_response`], [`encode_revisit`],
//! [`encode_not_modified`] and [`encode_request`] compress one record in memory
//! ([`EncodedRecord`]) before it is known which pack it goes to; [`EncodedRecord::member`]
//! then makes the gzip member that names the pack's warcinfo record (`WARC-Warcinfo-ID`) and
//! the caller appends it to the pack. Because every record is a separate gzip member, the
//! concatenation is a valid `.warc.gz` file and any record can be read back from
//! `(offset, length)` alone.
//!
//! # Compressing before the pack is known
//!
//! The deflate stream of a member is two runs of blocks, the second compressed on its own:
//!
//! 1. the version line and `WARC-Warcinfo-ID: <id>` of the pack, as a stored
//!    (uncompressed) block, written by [`EncodedRecord::member`]: no compressor runs when
//!    the pack is chosen;
//! 2. the other named WARC headers, `Content-Length`, the empty line, the block and the
//!    closing CRLF CRLF, compressed in one stream ending with the final deflate block.
//!
//! The member's CRC-32 is the combination of the two runs' CRCs. So the costly part (the
//! block) is compressed wherever the record is built (the crawl's analysis stage, on every
//! core) and the single storage thread only copies bytes. (WARC 1.1 puts no order on the
//! named fields; `WARC-Warcinfo-ID` first is what lets one stream a record suffice: each
//! new stream clears the compressor's 128 KiB hash table.)
//!
//! Reading: [`read_record`] decodes one record (gzip member or plain), [`RecordIter`] walks a
//! whole pack and reports where it stops being readable (torn tail after a crash), [`Resync`]
//! walks it past damage: each unreadable stretch is one [`Damage`], every intact record after
//! it is yielded at its own offset.
//!
//! Digests are `sha1:` + RFC 4648 base32 (upper case), as written by Heritrix and warcio.

use std::io::Read;

use chrono::{DateTime, SecondsFormat, Utc};
use flate2::{Compress, Compression, FlushCompress, Status};
use sha1::{Digest, Sha1};

use crate::error::{Error, Result};

/// First line of every record we write.
pub const WARC_VERSION: &str = "WARC/1.1";
/// Prefix of digests (algorithm label).
pub const DIGEST_PREFIX: &str = "sha1:";

/// Deflate level of the records: on the rust-doc pages (zlib-rs), level 5
/// compresses 198 MB/s to 11.34% of the input, level 6 (the zlib default)
/// 150 MB/s to 11.22%: a quarter less CPU for 1% more bytes.
const COMPRESSION_LEVEL: u32 = 5;
/// Profile of revisit records that point at an identical earlier payload.
pub const REVISIT_PROFILE_IDENTICAL_PAYLOAD: &str =
    "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest";
/// `WARC-Profile` of a revisit record for a 304 answer (WARC 1.1, 6.7.3).
pub const REVISIT_PROFILE_SERVER_NOT_MODIFIED: &str =
    "http://netpreserve.org/warc/1.1/revisit/server-not-modified";
/// URI of the WARC 1.1 specification, written as `conformsTo` in warcinfo records.
pub const WARC_1_1_SPEC_URI: &str =
    "http://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/";
/// Content type of HTTP response (and revisit) blocks.
pub const CONTENT_TYPE_HTTP_RESPONSE: &str = "application/http; msgtype=response";
/// Content type of HTTP request blocks.
pub const CONTENT_TYPE_HTTP_REQUEST: &str = "application/http; msgtype=request";
/// Content type of warcinfo blocks.
pub const CONTENT_TYPE_WARC_FIELDS: &str = "application/warc-fields";
/// Largest decompressed record the reader accepts (guards against gzip bombs).
pub const MAX_RECORD_BYTES: u64 = 1 << 30;

/// WARC header names.
pub mod header {
    /// `WARC-Type`.
    pub const WARC_TYPE: &str = "WARC-Type";
    /// `WARC-Record-ID`.
    pub const RECORD_ID: &str = "WARC-Record-ID";
    /// `WARC-Date`.
    pub const DATE: &str = "WARC-Date";
    /// `WARC-Target-URI`.
    pub const TARGET_URI: &str = "WARC-Target-URI";
    /// `WARC-IP-Address`.
    pub const IP_ADDRESS: &str = "WARC-IP-Address";
    /// `WARC-Warcinfo-ID`.
    pub const WARCINFO_ID: &str = "WARC-Warcinfo-ID";
    /// `WARC-Concurrent-To`.
    pub const CONCURRENT_TO: &str = "WARC-Concurrent-To";
    /// `WARC-Filename`.
    pub const FILENAME: &str = "WARC-Filename";
    /// `WARC-Payload-Digest`.
    pub const PAYLOAD_DIGEST: &str = "WARC-Payload-Digest";
    /// `WARC-Block-Digest`.
    pub const BLOCK_DIGEST: &str = "WARC-Block-Digest";
    /// `WARC-Profile`.
    pub const PROFILE: &str = "WARC-Profile";
    /// `WARC-Refers-To`.
    pub const REFERS_TO: &str = "WARC-Refers-To";
    /// `WARC-Refers-To-Target-URI`.
    pub const REFERS_TO_TARGET_URI: &str = "WARC-Refers-To-Target-URI";
    /// `WARC-Refers-To-Date`.
    pub const REFERS_TO_DATE: &str = "WARC-Refers-To-Date";
    /// `Content-Type`.
    pub const CONTENT_TYPE: &str = "Content-Type";
    /// `Content-Length`.
    pub const CONTENT_LENGTH: &str = "Content-Length";
}

/// `WARC-Type` values.
pub mod record_type {
    /// `warcinfo`.
    pub const WARCINFO: &str = "warcinfo";
    /// `response`.
    pub const RESPONSE: &str = "response";
    /// `revisit`.
    pub const REVISIT: &str = "revisit";
    /// `request`.
    pub const REQUEST: &str = "request";
}

const WARCINFO_SOFTWARE: &str = "software";
const WARCINFO_FORMAT: &str = "format";
const WARCINFO_CONFORMS_TO: &str = "conformsTo";
const WARC_FORMAT_1_1: &str = "WARC File Format 1.1";
const CRLF: &[u8] = b"\r\n";
const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];
/// Header of every member written: magic, deflate, no flags, no time, no extra flags, OS
/// unknown.
const GZIP_HEADER: [u8; 10] = [0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255];
/// Largest stored deflate block.
const MAX_STORED_BLOCK: usize = 0xffff;
const SOFTWARE: &str = concat!("harvest/", env!("CARGO_PKG_VERSION"));

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

/// What [`encode_response`] needs to know about one HTTP response.
#[derive(Debug, Clone)]
pub struct ResponseInput<'a> {
    /// URL the response was fetched from (`WARC-Target-URI`).
    pub target_uri: &'a str,
    /// When the response was received (`WARC-Date`).
    pub date: DateTime<Utc>,
    /// IP address of the server, if known.
    pub ip_address: Option<&'a str>,
    /// `WARC-Concurrent-To`: the record of the capture this one belongs to
    /// (the page that embeds this resource).
    pub concurrent_to: Option<&'a str>,
    /// HTTP status line, e.g. `HTTP/1.1 200 OK`.
    pub status_line: &'a str,
    /// HTTP headers, written as given (in order). They must describe `payload` as stored:
    /// drop or fix `Content-Encoding`/`Transfer-Encoding` if the body was decoded.
    pub headers: &'a [(String, String)],
    /// The bytes that follow the headers (the entity body as stored).
    pub payload: &'a [u8],
}

/// What [`encode_revisit`] needs: a new capture whose payload is identical to an earlier one.
#[derive(Debug, Clone)]
pub struct RevisitInput<'a> {
    /// URL of this capture.
    pub target_uri: &'a str,
    /// When this capture was received.
    pub date: DateTime<Utc>,
    /// HTTP status line of this capture.
    pub status_line: &'a str,
    /// HTTP headers of this capture (written as given).
    pub headers: &'a [(String, String)],
    /// `WARC-Record-ID` of the original response record.
    pub refers_to: &'a str,
    /// Target URI of the original capture.
    pub refers_to_target_uri: &'a str,
    /// Date of the original capture.
    pub refers_to_date: DateTime<Utc>,
    /// Payload digest shared by both captures (`sha1:BASE32`).
    pub payload_digest: &'a str,
}

/// What [`encode_not_modified`] needs: a conditional request answered 304.
#[derive(Debug, Clone)]
pub struct NotModifiedInput<'a> {
    /// URL of this capture.
    pub target_uri: &'a str,
    /// When the 304 was received.
    pub date: DateTime<Utc>,
    /// HTTP status line (`HTTP/1.1 304 Not Modified`).
    pub status_line: &'a str,
    /// HTTP headers of the 304 (written as given).
    pub headers: &'a [(String, String)],
    /// `WARC-Record-ID` of the capture the server says is unchanged.
    pub refers_to: &'a str,
    /// Target URI of that capture.
    pub refers_to_target_uri: &'a str,
    /// Date of that capture.
    pub refers_to_date: DateTime<Utc>,
}

/// What [`encode_request`] needs: the HTTP request sent for a capture.
#[derive(Debug, Clone)]
pub struct RequestInput<'a> {
    /// URL of the capture (the response's `WARC-Target-URI`).
    pub target_uri: &'a str,
    /// The response's `WARC-Date`.
    pub date: DateTime<Utc>,
    /// `WARC-Record-ID` of the response (or revisit) record the request belongs to.
    pub concurrent_to: &'a str,
    /// Request line, e.g. `GET /doc/ HTTP/1.1`.
    pub request_line: &'a str,
    /// Request headers as sent, in order.
    pub headers: &'a [(String, String)],
}

/// A `request` record (`application/http; msgtype=request`): the request line and headers
/// sent, `WARC-Concurrent-To` the capture's record. A GET has no body, so no payload digest.
pub fn encode_request(r: &RequestInput<'_>) -> EncodedRecord {
    let block = http_head(r.request_line, r.headers);
    let record_id = new_record_id();
    let date = format_warc_date(&r.date);
    let block_digest = payload_digest(&block);
    let headers = [
        (header::WARC_TYPE, record_type::REQUEST),
        (header::RECORD_ID, record_id.as_str()),
        (header::DATE, date.as_str()),
        (header::TARGET_URI, r.target_uri),
        (header::CONCURRENT_TO, r.concurrent_to),
        (header::CONTENT_TYPE, CONTENT_TYPE_HTTP_REQUEST),
        (header::BLOCK_DIGEST, block_digest.as_str()),
    ];
    record(&headers, &[&block], record_id.clone(), None)
}

/// A `revisit` record with profile server-not-modified: the 304's status line
/// and headers as the block, referring to the capture it confirms.
pub fn encode_not_modified(r: &NotModifiedInput<'_>) -> EncodedRecord {
    let block = http_head(r.status_line, r.headers);
    let record_id = new_record_id();
    let date = format_warc_date(&r.date);
    let refers_to_date = format_warc_date(&r.refers_to_date);
    let block_digest = payload_digest(&block);
    let headers = vec![
        (header::WARC_TYPE, record_type::REVISIT),
        (header::RECORD_ID, record_id.as_str()),
        (header::DATE, date.as_str()),
        (header::TARGET_URI, r.target_uri),
        (header::PROFILE, REVISIT_PROFILE_SERVER_NOT_MODIFIED),
        (header::REFERS_TO, r.refers_to),
        (header::REFERS_TO_TARGET_URI, r.refers_to_target_uri),
        (header::REFERS_TO_DATE, refers_to_date.as_str()),
        (header::CONTENT_TYPE, CONTENT_TYPE_HTTP_RESPONSE),
        (header::BLOCK_DIGEST, block_digest.as_str()),
    ];
    record(&headers, &[&block], record_id.clone(), None)
}

/// `sha1:` + base32 (RFC 4648, upper case, padded) of `bytes`, as in `WARC-Payload-Digest`.
pub fn payload_digest(bytes: &[u8]) -> String {
    digest_string(&Sha1::digest(bytes))
}

/// `sha1:` + base32 of a finished SHA-1.
fn digest_string(hash: &[u8]) -> String {
    format!("{DIGEST_PREFIX}{}", data_encoding::BASE32.encode(hash))
}

/// A fresh `<urn:uuid:…>` record id (UUID v4).
pub fn new_record_id() -> String {
    format!("<urn:uuid:{}>", uuid::Uuid::new_v4())
}

/// Formats a WARC-Date: UTC, `Z`, whole seconds unless the time has a fraction.
pub fn format_warc_date(date: &DateTime<Utc>) -> String {
    let precision = if date.timestamp_subsec_nanos() == 0 {
        SecondsFormat::Secs
    } else {
        SecondsFormat::Micros
    };
    date.to_rfc3339_opts(precision, true)
}

/// Encodes the `warcinfo` record that starts a pack. `filename` becomes `WARC-Filename`;
/// the block lists `software` (`harvest/<version>`), `format`, `conformsTo` and then `fields`
/// in order. A field in `fields` named like one of the three built-ins (case-insensitive)
/// replaces it instead of repeating it.
pub fn encode_warcinfo(filename: &str, fields: &[(&str, &str)]) -> EncodedRecord {
    let mut block = Vec::new();
    let builtins = [
        (WARCINFO_SOFTWARE, SOFTWARE),
        (WARCINFO_FORMAT, WARC_FORMAT_1_1),
        (WARCINFO_CONFORMS_TO, WARC_1_1_SPEC_URI),
    ];
    for (name, default) in builtins {
        let value = fields
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map_or(default, |(_, v)| *v);
        push_field(&mut block, name, value);
    }
    let is_builtin = |n: &str| builtins.iter().any(|(b, _)| n.eq_ignore_ascii_case(b));
    for (name, value) in fields.iter().filter(|(n, _)| !is_builtin(n)) {
        push_field(&mut block, name, value);
    }
    let record_id = new_record_id();
    let date = format_warc_date(&Utc::now());
    let block_digest = payload_digest(&block);
    let headers = [
        (header::WARC_TYPE, record_type::WARCINFO),
        (header::RECORD_ID, record_id.as_str()),
        (header::DATE, date.as_str()),
        (header::FILENAME, filename),
        (header::CONTENT_TYPE, CONTENT_TYPE_WARC_FIELDS),
        (header::BLOCK_DIGEST, block_digest.as_str()),
    ];
    record(&headers, &[&block], record_id.clone(), None)
}

/// Encodes a `response` record: block = status line, headers, empty line, payload.
pub fn encode_response(r: &ResponseInput<'_>) -> EncodedRecord {
    encode_response_with(r, &payload_digest(r.payload))
}

/// [`encode_response`] of a payload whose digest (`sha1:BASE32`, as
/// [`payload_digest`] gives it) the caller already has.
pub fn encode_response_with(r: &ResponseInput<'_>, digest: &str) -> EncodedRecord {
    let head = http_head(r.status_line, r.headers);
    let record_id = new_record_id();
    let date = format_warc_date(&r.date);
    let block_digest = {
        let mut sha = Sha1::new();
        sha.update(&head);
        sha.update(r.payload);
        digest_string(&sha.finalize())
    };
    let mut headers = vec![
        (header::WARC_TYPE, record_type::RESPONSE),
        (header::RECORD_ID, record_id.as_str()),
        (header::DATE, date.as_str()),
        (header::TARGET_URI, r.target_uri),
    ];
    if let Some(ip) = r.ip_address {
        headers.push((header::IP_ADDRESS, ip));
    }
    if let Some(id) = r.concurrent_to {
        headers.push((header::CONCURRENT_TO, id));
    }
    headers.extend([
        (header::CONTENT_TYPE, CONTENT_TYPE_HTTP_RESPONSE),
        (header::PAYLOAD_DIGEST, digest),
        (header::BLOCK_DIGEST, block_digest.as_str()),
    ]);
    record(
        &headers,
        &[&head, r.payload],
        record_id.clone(),
        Some(digest.to_string()),
    )
}

/// Encodes a `revisit` record (profile identical-payload-digest): block = the HTTP status
/// line and headers only; the payload lives in the record named by `refers_to`.
pub fn encode_revisit(r: &RevisitInput<'_>) -> EncodedRecord {
    let block = http_head(r.status_line, r.headers);
    let record_id = new_record_id();
    let date = format_warc_date(&r.date);
    let refers_to_date = format_warc_date(&r.refers_to_date);
    let block_digest = payload_digest(&block);
    let mut headers = vec![
        (header::WARC_TYPE, record_type::REVISIT),
        (header::RECORD_ID, record_id.as_str()),
        (header::DATE, date.as_str()),
        (header::TARGET_URI, r.target_uri),
    ];
    headers.extend([
        (header::PROFILE, REVISIT_PROFILE_IDENTICAL_PAYLOAD),
        (header::REFERS_TO, r.refers_to),
        (header::REFERS_TO_TARGET_URI, r.refers_to_target_uri),
        (header::REFERS_TO_DATE, refers_to_date.as_str()),
        (header::CONTENT_TYPE, CONTENT_TYPE_HTTP_RESPONSE),
        (header::PAYLOAD_DIGEST, r.payload_digest),
        (header::BLOCK_DIGEST, block_digest.as_str()),
    ]);
    record(
        &headers,
        &[&block],
        record_id.clone(),
        Some(r.payload_digest.to_string()),
    )
}

/// Replaces CR and LF (which would end a header line early) by spaces.
fn clean(value: &str) -> std::borrow::Cow<'_, str> {
    if value.contains(['\r', '\n']) {
        value.replace(['\r', '\n'], " ").into()
    } else {
        value.into()
    }
}

fn push_field(out: &mut Vec<u8>, name: &str, value: &str) {
    out.extend_from_slice(clean(name).as_bytes());
    out.extend_from_slice(b": ");
    out.extend_from_slice(clean(value).as_bytes());
    out.extend_from_slice(CRLF);
}

/// HTTP status line + headers + empty line.
fn http_head(status_line: &str, headers: &[(String, String)]) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(clean(status_line).as_bytes());
    out.extend_from_slice(CRLF);
    for (name, value) in headers {
        push_field(&mut out, name, value);
    }
    out.extend_from_slice(CRLF);
    out
}

/// The record of `headers` and `block` (in parts), compressed.
fn record(
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

/// One parsed WARC record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WarcRecord {
    /// WARC headers in file order (names as written).
    pub headers: Vec<(String, String)>,
    /// The record block (`Content-Length` bytes).
    pub block: Vec<u8>,
}

/// An HTTP response parsed from a `response` or `revisit` block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpResponse {
    /// Status code, e.g. 200.
    pub status: u16,
    /// The whole status line, e.g. `HTTP/1.1 200 OK`.
    pub status_line: String,
    /// HTTP headers in order.
    pub headers: Vec<(String, String)>,
    /// Everything after the empty line (empty for revisits).
    pub body: Vec<u8>,
}

impl HttpResponse {
    /// First value of an HTTP header (case-insensitive name).
    pub fn header(&self, name: &str) -> Option<&str> {
        find_header(&self.headers, name)
    }
}

impl WarcRecord {
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

    /// `WARC-Record-ID`.
    pub fn record_id(&self) -> Option<&str> {
        self.header(header::RECORD_ID)
    }

    /// `WARC-Payload-Digest`.
    pub fn payload_digest(&self) -> Option<&str> {
        self.header(header::PAYLOAD_DIGEST)
    }

    /// Parses the block as an HTTP response (status line, headers, body).
    pub fn http_response(&self) -> Result<HttpResponse> {
        let malformed = |reason: &str| Error::MalformedHttp {
            reason: reason.to_string(),
        };
        // A block that ends inside its HTTP head (a Content-Length counted with other line
        // ends than the head has) is read as a head without a body, as warcio reads it.
        let (head_lines, body_start) = split_head(&self.block)
            .or_else(|| whole_head(&self.block))
            .ok_or_else(|| malformed("no end of HTTP headers"))?;
        let mut lines = head_lines.into_iter();
        let status_line = lines
            .next()
            .ok_or_else(|| malformed("missing status line"))?;
        let status_line = String::from_utf8_lossy(status_line).into_owned();
        let mut parts = status_line.split_ascii_whitespace();
        let proto = parts.next().unwrap_or_default();
        if !proto.starts_with("HTTP/") {
            return Err(malformed("status line does not start with HTTP/"));
        }
        let status = parts
            .next()
            .and_then(|code| code.parse::<u16>().ok())
            .filter(|code| (100..1000).contains(code))
            .ok_or_else(|| malformed("missing or invalid status code"))?;
        let headers = parse_header_lines(lines).map_err(|reason| malformed(&reason))?;
        Ok(HttpResponse {
            status,
            status_line,
            headers,
            body: self.block[body_start..].to_vec(),
        })
    }
}

fn find_header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

/// Splits `data` at the first empty line. Returns the lines before it (without line
/// endings; LF, CRLF or CR CR LF) and the index of the first byte after the empty line.
fn split_head(data: &[u8]) -> Option<(Vec<&[u8]>, usize)> {
    let mut lines = Vec::new();
    let mut pos = 0;
    while pos < data.len() {
        let nl = data[pos..].iter().position(|&b| b == b'\n')? + pos;
        let mut line = &data[pos..nl];
        // CRLF, LF, and the CR CR LF some tools write (warcio reads it too).
        while let Some(stripped) = line.strip_suffix(b"\r") {
            line = stripped;
        }
        pos = nl + 1;
        if line.is_empty() {
            return Some((lines, pos));
        }
        lines.push(line);
    }
    None
}

/// The lines of `data` when it holds no empty line (a head cut before its end), each
/// without its line end, with `data.len()` as where the body starts; `None` for no line.
fn whole_head(data: &[u8]) -> Option<(Vec<&[u8]>, usize)> {
    let lines: Vec<&[u8]> = data
        .split(|&b| b == b'\n')
        .map(|l| {
            let mut l = l;
            while let Some(s) = l.strip_suffix(b"\r") {
                l = s;
            }
            l
        })
        .filter(|l| !l.is_empty())
        .collect();
    (!lines.is_empty()).then_some((lines, data.len()))
}

/// Parses `Name: value` lines, joining folded continuation lines.
fn parse_header_lines<'a>(
    lines: impl Iterator<Item = &'a [u8]>,
) -> std::result::Result<Vec<(String, String)>, String> {
    let mut headers: Vec<(String, String)> = Vec::new();
    for line in lines {
        let text = String::from_utf8_lossy(line);
        if text.starts_with([' ', '\t']) {
            match headers.last_mut() {
                Some((_, value)) => {
                    value.push(' ');
                    value.push_str(text.trim());
                }
                None => return Err("continuation line before any header".to_string()),
            }
            continue;
        }
        let (name, value) = text
            .split_once(':')
            .ok_or_else(|| format!("header line without ':': {:?}", truncate(&text)))?;
        headers.push((name.trim().to_string(), value.trim().to_string()));
    }
    Ok(headers)
}

fn truncate(s: &str) -> String {
    s.chars().take(80).collect()
}

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
fn gunzip_member(data: &[u8]) -> std::result::Result<(Vec<u8>, usize), String> {
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
fn record_at(data: &[u8]) -> std::result::Result<(WarcRecord, usize), String> {
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

/// A stretch of a pack that holds no readable record, as [`Resync`] reports it: from where a
/// record should have started to the next readable record, or to the end of the pack.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{length} unreadable bytes at offset {offset}: {reason}")]
pub struct Damage {
    /// Offset of the unreadable record (where a record should start).
    pub offset: u64,
    /// Bytes from `offset` to the next readable record, or to the end of the pack.
    pub length: u64,
    /// Why the record at `offset` could not be read.
    pub reason: String,
    /// No readable record follows: the damage reaches the end of the pack (a torn tail, as a
    /// crash while writing leaves it).
    pub to_end: bool,
}

/// Start of every gzip member a resynchronisation considers: magic and deflate.
const GZIP_MEMBER_START: [u8; 3] = [0x1f, 0x8b, 0x08];
/// Start of a plain record a resynchronisation considers (at the start of a line).
const PLAIN_RECORD_START: &[u8] = b"\nWARC/1.";
/// What a record found by a resynchronisation must decompress to first.
const RECORD_START: &[u8] = b"WARC/1.";

/// [`RecordIter`] that reads past damage: at an unreadable record it yields one [`Damage`]
/// and goes on at the next readable record, so every intact record of a pack is yielded at
/// its own offset. The next readable record is found by scanning forward for the start of a
/// gzip member (`1f 8b 08`) that decompresses, CRC and length checked, to one record starting
/// `WARC/1.` (in an uncompressed pack: a line starting `WARC/1.` that parses as a record).
/// When the pack's records name a warcinfo record (`WARC-Warcinfo-ID`, as every record of a
/// harvest pack after the first does), a record found so must name the same one: a WARC file
/// archived inside a record's block is not taken for the pack's own records. A month pack
/// of `harvest compact` ([`Resync::for_pack`]) holds several packs one after the other, each
/// starting with its own warcinfo: there a record may name any warcinfo the pack has shown,
/// and a warcinfo record whose `WARC-Filename` is one of that (topic, month)'s pack names
/// starts the next of them.
///
/// Damage with no readable record after it is yielded with [`Damage::to_end`] set, and the
/// iteration ends. Records are yielded as by [`RecordIter`] until the first damage.
#[derive(Debug)]
pub struct Resync<'a> {
    data: &'a [u8],
    offset: usize,
    /// The record the last resynchronisation found at `offset`, and its length.
    found: Option<(WarcRecord, usize)>,
    /// Whether the pack's records are gzip members (known after the first readable one).
    gzipped: Option<bool>,
    /// The warcinfo records the pack's records name.
    named: Vec<String>,
    /// The ids of the warcinfo records read.
    infos: Vec<String>,
    /// The start of the file names a warcinfo record that starts a further segment of the
    /// pack names: in a month pack, of the packs it holds; in a day pack, its own name (a
    /// later run's records appended to it).
    segments: Option<String>,
    done: bool,
}

impl<'a> Resync<'a> {
    /// Iterates over `data`, a whole pack.
    pub fn new(data: &'a [u8]) -> Self {
        Self {
            data,
            offset: 0,
            found: None,
            gzipped: None,
            named: Vec::new(),
            infos: Vec::new(),
            segments: None,
            done: false,
        }
    }

    /// Iterates over `data`, the whole pack at `path`: as [`Resync::new`], and past damage
    /// into the next segment the pack holds: for a month pack ([`crate::MonthPackName`]) the
    /// next pack, for a day pack the next run's records appended to it.
    pub fn for_pack(path: &str, data: &'a [u8]) -> Self {
        let mut it = Self::new(data);
        // A day pack appended to by later runs: each run's records follow a warcinfo record
        // of its own that names this pack.
        it.segments = match crate::MonthPackName::parse(path) {
            Some(m) => Some(format!("{}-{:04}{:02}", m.topic, m.year, m.month)),
            None => path.rsplit('/').next().map(str::to_string),
        };
        it
    }

    /// Remembers what a readable record at `at` says about the pack.
    fn learn(&mut self, at: usize, record: &WarcRecord) {
        if self.gzipped.is_none() {
            self.gzipped = Some(self.data[at..].starts_with(&GZIP_MAGIC));
        }
        if let Some(id) = record.header(header::WARCINFO_ID) {
            if !self.named.iter().any(|n| n == id) {
                self.named.push(id.to_string());
            }
        }
        if record.record_type() == Some(record_type::WARCINFO) {
            if let Some(id) = record.record_id() {
                if !self.infos.iter().any(|n| n == id) {
                    self.infos.push(id.to_string());
                }
            }
        }
    }

    /// The first readable record of the pack at or after `from`: its offset, the record and
    /// its length.
    fn resync(&self, from: usize) -> Option<(usize, WarcRecord, usize)> {
        let gzip = self.gzipped != Some(false);
        let plain = self.gzipped != Some(true);
        let mut at = from;
        while at < self.data.len() {
            let member = gzip
                .then(|| find(&self.data[at..], &GZIP_MEMBER_START))
                .flatten()
                .map(|i| at + i);
            // A plain record starts a line: its `\n` is the byte before it.
            let line = plain
                .then(|| find(&self.data[at - 1..], PLAIN_RECORD_START))
                .flatten()
                .map(|i| at + i);
            let candidate = match (member, line) {
                (Some(m), Some(l)) => m.min(l),
                (Some(c), None) | (None, Some(c)) => c,
                (None, None) => return None,
            };
            if let Some((record, len)) = self.record_found_at(candidate) {
                return Some((candidate, record, len));
            }
            at = candidate + 1;
        }
        None
    }

    /// The record at `at` if one starts there that belongs to this pack.
    fn record_found_at(&self, at: usize) -> Option<(WarcRecord, usize)> {
        let data = &self.data[at..];
        if data.starts_with(&GZIP_MAGIC) {
            // Decompress the first bytes only before the whole member: most `1f 8b 08` in
            // compressed data start no member at all.
            let mut start = [0u8; RECORD_START.len()];
            flate2::bufread::GzDecoder::new(data)
                .read_exact(&mut start)
                .ok()?;
            if start != RECORD_START {
                return None;
            }
        } else if !data.starts_with(RECORD_START) {
            return None;
        }
        let (record, len) = record_at(data).ok()?;
        if self.named.is_empty() {
            return Some((record, len));
        }
        let known = |id: &str| self.named.iter().chain(&self.infos).any(|n| n == id);
        if record.header(header::WARCINFO_ID).is_some_and(known) {
            return Some((record, len));
        }
        // A month pack: the warcinfo that starts the next pack it holds.
        let starts_segment = self.segments.as_deref().is_some_and(|prefix| {
            record.record_type() == Some(record_type::WARCINFO)
                && record
                    .header(header::FILENAME)
                    .is_some_and(|f| f.starts_with(prefix) && f.ends_with(".warc.gz"))
        });
        starts_segment.then_some((record, len))
    }
}

/// Index of the first `needle` in `haystack`.
fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    let (&first, rest) = needle.split_first()?;
    let mut from = 0;
    while let Some(i) = haystack[from..].iter().position(|&b| b == first) {
        let at = from + i;
        if haystack[at + 1..].starts_with(rest) {
            return Some(at);
        }
        from = at + 1;
    }
    None
}

impl Iterator for Resync<'_> {
    type Item = std::result::Result<(u64, u64, WarcRecord), Damage>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done || self.offset >= self.data.len() {
            return None;
        }
        let offset = self.offset;
        let read = match self.found.take() {
            Some(found) => Ok(found),
            None => record_at(&self.data[offset..]),
        };
        match read {
            Ok((record, len)) => {
                self.learn(offset, &record);
                self.offset += len;
                Some(Ok((offset as u64, len as u64, record)))
            }
            Err(reason) => {
                let (end, to_end) = match self.resync(offset + 1) {
                    Some((at, record, len)) => {
                        self.found = Some((record, len));
                        (at, false)
                    }
                    None => {
                        self.done = true;
                        (self.data.len(), true)
                    }
                };
                self.offset = end;
                Some(Err(Damage {
                    offset: offset as u64,
                    length: (end - offset) as u64,
                    reason,
                    to_end,
                }))
            }
        }
    }
}

impl std::iter::FusedIterator for Resync<'_> {}

/// Whether `tail`, the last bytes of a pack (or all of it), ends exactly where a whole
/// record ends: no torn record after the last readable one. `tail` may start inside a
/// record; the records after that are found as [`Resync`] finds them past damage.
pub fn ends_with_whole_record(tail: &[u8]) -> bool {
    let mut end = None;
    for item in Resync::new(tail) {
        match item {
            Ok((offset, length, _)) => end = Some(offset + length),
            Err(damage) if damage.to_end => return false,
            Err(_) => {}
        }
    }
    end == Some(tail.len() as u64)
}

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
    max_block: u64,
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The tail check before an append: any window that starts inside a record and ends
    /// at a record's end is whole; one that ends inside a record is not.
    #[test]
    fn a_tail_window_ends_whole_only_at_a_records_end() {
        let info = encode_warcinfo("p.warc.gz", &[]);
        let mut pack = info.member(None);
        let mut last = 0;
        for i in 0..3 {
            let body = format!("<p>{}</p>", "z".repeat(500 * (i + 1)));
            let r = encode_response(&ResponseInput {
                target_uri: "http://example.com/",
                date: chrono::Utc::now(),
                ip_address: None,
                concurrent_to: None,
                status_line: "HTTP/1.1 200 OK",
                headers: &[],
                payload: body.as_bytes(),
            });
            last = pack.len();
            pack.extend(r.member(Some(&info.record_id)));
        }
        for start in [0, 1, 17, last / 2, last - 1, last] {
            assert!(ends_with_whole_record(&pack[start..]), "from {start}");
        }
        // No record starts in the window: its end cannot be checked.
        assert!(!ends_with_whole_record(&pack[last + 1..]));
        for cut in [1, 10, 100] {
            assert!(
                !ends_with_whole_record(&pack[..pack.len() - cut]),
                "cut {cut}"
            );
        }
        assert!(!ends_with_whole_record(&[]));
    }
    use chrono::TimeZone;

    fn headers() -> Vec<(String, String)> {
        vec![
            ("Content-Type".into(), "text/html; charset=utf-8".into()),
            ("Server".into(), "nginx".into()),
        ]
    }

    fn response(payload: &[u8]) -> EncodedRecord {
        let h = headers();
        encode_response(&ResponseInput {
            target_uri: "https://www.debian.org/doc/",
            date: Utc.with_ymd_and_hms(2024, 5, 1, 12, 30, 0).unwrap(),
            ip_address: Some("130.89.148.77"),
            concurrent_to: None,
            status_line: "HTTP/1.1 200 OK",
            headers: &h,
            payload,
        })
    }

    #[test]
    fn digest_matches_known_sha1_base32() {
        // sha1("") = da39a3ee5e6b4b0d3255bfef95601890afd80709
        assert_eq!(payload_digest(b""), "sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ");
        // sha1("abc") = a9993e364706816aba3e25717850c26c9cd0d89d
        assert_eq!(
            payload_digest(b"abc"),
            "sha1:VGMT4NSHA2AWVOR6EVYXQUGCNSONBWE5"
        );
    }

    #[test]
    fn warc_date_is_utc_z_with_seconds() {
        let d = Utc.with_ymd_and_hms(2024, 5, 1, 2, 3, 4).unwrap();
        assert_eq!(format_warc_date(&d), "2024-05-01T02:03:04Z");
        let frac = d + chrono::Duration::microseconds(250);
        assert_eq!(format_warc_date(&frac), "2024-05-01T02:03:04.000250Z");
    }

    #[test]
    fn response_round_trips() {
        let payload = "<html><body>Débat</body></html>".as_bytes();
        let enc = response(payload);
        assert_eq!(&enc.member(None)[..2], &GZIP_MAGIC);
        let rec = read_record(&enc.member(None)).unwrap();
        assert_eq!(rec.record_type(), Some("response"));
        assert_eq!(rec.target_uri(), Some("https://www.debian.org/doc/"));
        assert_eq!(rec.record_id(), Some(enc.record_id.as_str()));
        assert_eq!(rec.header("warc-date"), Some("2024-05-01T12:30:00Z"));
        assert_eq!(rec.header("WARC-IP-Address"), Some("130.89.148.77"));
        assert_eq!(rec.payload_digest(), enc.payload_digest.as_deref());
        assert_eq!(enc.payload_digest, Some(payload_digest(payload)));
        assert_eq!(
            rec.header(header::BLOCK_DIGEST),
            Some(payload_digest(&rec.block).as_str())
        );
        let http = rec.http_response().unwrap();
        assert_eq!(http.status, 200);
        assert_eq!(http.status_line, "HTTP/1.1 200 OK");
        assert_eq!(http.headers, headers());
        assert_eq!(http.header("server"), Some("nginx"));
        assert_eq!(http.body, payload);
        assert!(enc.record_id.starts_with("<urn:uuid:") && enc.record_id.ends_with('>'));
    }

    #[test]
    fn optional_headers_are_written_only_when_given() {
        let plain = read_record(&response(b"x").member(None)).unwrap();
        assert_eq!(plain.header(header::WARCINFO_ID), None);
        let enc = encode_response(&ResponseInput {
            target_uri: "https://www.debian.org/",
            date: Utc::now(),
            ip_address: None,
            concurrent_to: None,
            status_line: "HTTP/1.1 200 OK",
            headers: &[],
            payload: b"x",
        });
        let rec = read_record(&enc.member(None)).unwrap();
        assert_eq!(rec.header(header::IP_ADDRESS), None);
        assert_eq!(rec.header(header::CONCURRENT_TO), None);
    }

    #[test]
    fn a_member_names_the_warcinfo_it_is_given() {
        let info = encode_warcinfo("p.warc.gz", &[]);
        let enc = response("<p>Débat</p>".repeat(500).as_bytes());
        let member = enc.member(Some(&info.record_id));
        assert_eq!(member.len() as u64, enc.member_len(Some(&info.record_id)));
        assert_eq!(
            enc.member(None).len() as u64,
            enc.member_len(None),
            "length without the line"
        );
        // A standard decoder checks the CRC-32 and ISIZE of the spliced member.
        let mut raw = Vec::new();
        flate2::read::GzDecoder::new(&member[..])
            .read_to_end(&mut raw)
            .unwrap();
        let rec = read_record(&member).unwrap();
        assert_eq!(
            rec.header(header::WARCINFO_ID),
            Some(info.record_id.as_str())
        );
        assert_eq!(
            rec.headers
                .iter()
                .filter(|(n, _)| n == header::WARCINFO_ID)
                .count(),
            1
        );
        assert_eq!(rec.record_id(), Some(enc.record_id.as_str()));
        assert_eq!(
            rec.http_response().unwrap().body,
            "<p>Débat</p>".repeat(500).as_bytes()
        );
        assert_eq!(
            rec.header(header::BLOCK_DIGEST),
            Some(payload_digest(&rec.block).as_str())
        );
        // The same record names whichever pack it lands in.
        let other = encode_warcinfo("q.warc.gz", &[]);
        let moved = read_record(&enc.member(Some(&other.record_id))).unwrap();
        assert_eq!(
            moved.header(header::WARCINFO_ID),
            Some(other.record_id.as_str())
        );
        assert_eq!(moved.block, rec.block);
    }

    #[test]
    fn a_long_warcinfo_id_spans_stored_blocks() {
        let enc = response(b"x");
        let id = format!("<urn:x:{}>", "a".repeat(70_000));
        let member = enc.member(Some(&id));
        assert_eq!(member.len() as u64, enc.member_len(Some(&id)));
        let rec = read_record(&member).unwrap();
        assert_eq!(rec.header(header::WARCINFO_ID), Some(id.as_str()));
    }

    #[test]
    fn request_records_hold_the_request_as_sent() {
        let page = response(b"body");
        let sent = vec![
            ("host".to_string(), "www.debian.org".to_string()),
            ("user-agent".to_string(), "harvest-test/1".to_string()),
            ("if-none-match".to_string(), "\"v1\"".to_string()),
        ];
        let enc = encode_request(&RequestInput {
            target_uri: "https://www.debian.org/doc/",
            date: Utc.with_ymd_and_hms(2024, 5, 1, 12, 30, 0).unwrap(),
            concurrent_to: &page.record_id,
            request_line: "GET /doc/?a=1 HTTP/1.1",
            headers: &sent,
        });
        assert_eq!(enc.payload_digest, None);
        let rec = read_record(&enc.member(Some("<urn:uuid:info>"))).unwrap();
        assert_eq!(rec.record_type(), Some(record_type::REQUEST));
        assert_eq!(
            rec.header(header::CONTENT_TYPE),
            Some(CONTENT_TYPE_HTTP_REQUEST)
        );
        assert_eq!(
            rec.header(header::CONCURRENT_TO),
            Some(page.record_id.as_str())
        );
        assert_eq!(rec.header(header::DATE), Some("2024-05-01T12:30:00Z"));
        assert_eq!(rec.payload_digest(), None);
        assert_eq!(
            String::from_utf8(rec.block).unwrap(),
            "GET /doc/?a=1 HTTP/1.1\r\nhost: www.debian.org\r\nuser-agent: harvest-test/1\r\n\
             if-none-match: \"v1\"\r\n\r\n"
        );
    }

    #[test]
    fn header_values_cannot_inject_lines() {
        let h = vec![("X-Evil".to_string(), "a\r\nWARC-Type: bogus".to_string())];
        let enc = encode_response(&ResponseInput {
            target_uri: "http://x/\r\nWARC-Type: revisit",
            date: Utc::now(),
            ip_address: None,
            concurrent_to: None,
            status_line: "HTTP/1.1 200 OK",
            headers: &h,
            payload: b"x",
        });
        let rec = read_record(&enc.member(None)).unwrap();
        assert_eq!(rec.record_type(), Some("response"));
        assert_eq!(
            rec.headers.iter().filter(|(n, _)| n == "WARC-Type").count(),
            1
        );
        let http = rec.http_response().unwrap();
        assert_eq!(http.headers.len(), 1);
        assert_eq!(http.body, b"x");
    }

    #[test]
    fn not_modified_revisit_keeps_the_304_head() {
        let original = response(b"body");
        let h = vec![("etag".to_string(), "\"v1\"".to_string())];
        let enc = encode_not_modified(&NotModifiedInput {
            target_uri: "https://www.debian.org/doc/",
            date: Utc.with_ymd_and_hms(2024, 5, 2, 0, 0, 0).unwrap(),
            status_line: "HTTP/1.1 304 Not Modified",
            headers: &h,
            refers_to: &original.record_id,
            refers_to_target_uri: "https://www.debian.org/doc/",
            refers_to_date: Utc.with_ymd_and_hms(2024, 5, 1, 0, 0, 0).unwrap(),
        });
        let rec = read_record(&enc.member(None)).unwrap();
        assert_eq!(rec.record_type(), Some("revisit"));
        assert_eq!(
            rec.header("WARC-Profile"),
            Some(REVISIT_PROFILE_SERVER_NOT_MODIFIED)
        );
        assert_eq!(rec.payload_digest(), None);
        let http = rec.http_response().unwrap();
        assert_eq!(http.status, 304);
        assert!(http.body.is_empty());
    }

    #[test]
    fn revisit_has_profile_and_refers_to() {
        let original = response(b"same body");
        let h = headers();
        let enc = encode_revisit(&RevisitInput {
            target_uri: "https://www.debian.org/doc/index.html",
            date: Utc.with_ymd_and_hms(2024, 5, 2, 0, 0, 0).unwrap(),
            status_line: "HTTP/1.1 200 OK",
            headers: &h,
            refers_to: &original.record_id,
            refers_to_target_uri: "https://www.debian.org/doc/",
            refers_to_date: Utc.with_ymd_and_hms(2024, 5, 1, 12, 30, 0).unwrap(),
            payload_digest: original.payload_digest.as_deref().unwrap(),
        });
        let rec = read_record(&enc.member(None)).unwrap();
        assert_eq!(rec.record_type(), Some("revisit"));
        assert_eq!(
            rec.header("WARC-Profile"),
            Some(REVISIT_PROFILE_IDENTICAL_PAYLOAD)
        );
        assert_eq!(
            rec.header("WARC-Refers-To"),
            Some(original.record_id.as_str())
        );
        assert_eq!(
            rec.header("WARC-Refers-To-Date"),
            Some("2024-05-01T12:30:00Z")
        );
        assert_eq!(rec.payload_digest(), original.payload_digest.as_deref());
        let http = rec.http_response().unwrap();
        assert!(http.body.is_empty());
        assert_eq!(http.headers, headers());
    }

    #[test]
    fn warcinfo_lists_software_and_fields() {
        let enc = encode_warcinfo("c1-0.warc.gz", &[("operator", "harvest team")]);
        let rec = read_record(&enc.member(None)).unwrap();
        assert_eq!(rec.record_type(), Some("warcinfo"));
        assert_eq!(rec.header("WARC-Filename"), Some("c1-0.warc.gz"));
        assert_eq!(rec.header("Content-Type"), Some(CONTENT_TYPE_WARC_FIELDS));
        let text = String::from_utf8(rec.block).unwrap();
        assert!(
            text.starts_with(&format!("software: {SOFTWARE}\r\n")),
            "{text}"
        );
        assert!(text.contains("format: WARC File Format 1.1\r\n"));
        assert!(text.contains(&format!("conformsTo: {WARC_1_1_SPEC_URI}\r\n")));
        assert!(text.ends_with("operator: harvest team\r\n"));
        assert_eq!(enc.payload_digest, None);
    }

    #[test]
    fn warcinfo_fields_override_builtins_instead_of_repeating() {
        let enc = encode_warcinfo(
            "x.warc.gz",
            &[("Software", "harvest/9.9"), ("isPartOf", "news")],
        );
        let text = String::from_utf8(read_record(&enc.member(None)).unwrap().block).unwrap();
        assert_eq!(text.matches("oftware: ").count(), 1, "{text}");
        assert!(text.starts_with("software: harvest/9.9\r\n"), "{text}");
        assert!(text.ends_with("isPartOf: news\r\n"), "{text}");
    }

    #[test]
    fn uncompressed_records_are_read() {
        let enc = response(b"plain");
        let mut raw = Vec::new();
        flate2::read::GzDecoder::new(&enc.member(None)[..])
            .read_to_end(&mut raw)
            .unwrap();
        assert!(raw.starts_with(b"WARC/1.1\r\n"));
        assert!(raw.ends_with(b"plain\r\n\r\n"));
        let rec = read_record(&raw).unwrap();
        assert_eq!(rec.http_response().unwrap().body, b"plain");

        // Two uncompressed records back to back.
        let mut two = raw.clone();
        two.extend_from_slice(&raw);
        let items: Vec<_> = RecordIter::new(&two).collect::<Result<_>>().unwrap();
        assert_eq!(items.len(), 2);
        assert_eq!(items[1].0, raw.len() as u64);
        assert_eq!(items[1].1, raw.len() as u64);
    }

    #[test]
    fn blank_lines_between_records_and_cr_cr_lf_heads_are_read_as_warcio_reads_them() {
        let enc = response(b"plain");
        let mut raw = Vec::new();
        flate2::read::GzDecoder::new(&enc.member(None)[..])
            .read_to_end(&mut raw)
            .unwrap();
        // Extra blank lines after a record; a second record whose lines end CR CR LF, and
        // whose HTTP head ends with the block (no empty line, no body).
        let mut file = raw.clone();
        file.extend_from_slice(b"\r\n\r\n\n");
        let second = file.len() as u64;
        let block = b"HTTP/1.0 302 \r\r\nLocation: http://x/\r\r\nContent-Length: 0";
        file.extend_from_slice(
            format!(
                "WARC/1.0\r\r\nWARC-Type: response\r\r\nWARC-Target-URI: http://x/a\r\r\n\
                 Content-Length: {}\r\r\n\r\r\n",
                block.len()
            )
            .as_bytes(),
        );
        file.extend_from_slice(block);
        file.extend_from_slice(b"\r\r\n\r\r\n");
        let got: Vec<_> = RecordReader::new(&file[..])
            .collect::<Result<Vec<_>>>()
            .unwrap();
        assert_eq!(got.len(), 2);
        assert_eq!(got[1].0, second);
        let Streamed::Record(r) = &got[1].2 else {
            panic!("oversized")
        };
        assert_eq!(r.target_uri(), Some("http://x/a"));
        let http = r.http_response().unwrap();
        assert_eq!(http.status, 302);
        assert_eq!(http.header("location"), Some("http://x/"));
        assert!(http.body.is_empty());
    }

    #[test]
    fn iter_reports_member_offsets_and_lengths() {
        let a = encode_warcinfo("p.warc.gz", &[]);
        let b = response(b"first");
        let c = response(b"second");
        let mut pack = Vec::new();
        for r in [&a, &b, &c] {
            pack.extend_from_slice(&r.member(None));
        }
        let items: Vec<_> = RecordIter::new(&pack).collect::<Result<_>>().unwrap();
        let spans: Vec<_> = items.iter().map(|(o, l, _)| (*o, *l)).collect();
        let a_len = a.member(None).len() as u64;
        let b_len = b.member(None).len() as u64;
        assert_eq!(
            spans,
            vec![
                (0, a_len),
                (a_len, b_len),
                (a_len + b_len, c.member(None).len() as u64)
            ]
        );
        assert_eq!(items[2].2.http_response().unwrap().body, b"second");
    }

    /// Records, spans and the first error of [`RecordReader`] over a
    /// reader with a buffer of `capacity` bytes.
    fn read_streamed(data: &[u8], capacity: usize) -> Vec<Spanned> {
        let input = std::io::BufReader::with_capacity(capacity, data);
        RecordReader::new(input)
            .map(|item| {
                spans_and_digests(item.map(|(o, l, s)| match s {
                    Streamed::Record(r) => (o, l, r),
                    Streamed::Oversized(h) => panic!("no limit given, yet {h:?} is oversized"),
                }))
            })
            .collect()
    }

    /// A record as its span and block digest; an error as its offset.
    type Spanned = std::result::Result<(u64, u64, String), u64>;

    fn spans_and_digests(item: Result<(u64, u64, WarcRecord)>) -> Spanned {
        match item {
            Ok((o, l, r)) => Ok((o, l, payload_digest(&r.block))),
            Err(Error::CorruptRecord { offset, reason }) => {
                eprintln!("corrupt at {offset}: {reason}");
                Err(offset)
            }
            Err(e) => panic!("{e}"),
        }
    }

    #[test]
    fn a_streamed_file_gives_what_the_bytes_in_memory_give() {
        let records = [
            encode_warcinfo("p.warc.gz", &[]),
            response(b"first"),
            response(&b"<p>a longer page</p>".repeat(900)),
            response(b""),
        ];
        let mut gzipped = Vec::new();
        let mut plain = Vec::new();
        for r in &records {
            let member = r.member(None);
            gzipped.extend_from_slice(&member);
            flate2::read::GzDecoder::new(&member[..])
                .read_to_end(&mut plain)
                .unwrap();
        }
        // Whole files, then torn ones (cut inside the third record).
        let torn_gz = gzipped[..gzipped.len() - 40].to_vec();
        let torn_plain = plain[..plain.len() - 40].to_vec();
        for data in [&gzipped, &plain, &torn_gz, &torn_plain] {
            let in_memory: Vec<_> = RecordIter::new(data).map(spans_and_digests).collect();
            assert!(in_memory.len() >= 3);
            // Buffers that end inside headers, blocks and closing lines.
            for capacity in [1, 3, 7, 64, 8192] {
                assert_eq!(
                    read_streamed(data, capacity),
                    in_memory,
                    "buffer of {capacity}"
                );
            }
        }
    }

    /// Issue 40: a record longer than the limit comes as its head, its
    /// block read past (never held), and the record after it is read.
    #[test]
    fn an_oversized_block_is_read_past_and_the_next_record_follows() {
        let big_payload = b"<p>a page far over the limit</p>".repeat(8000);
        let records = [
            response(b"before"),
            response(&big_payload),
            response(b"after"),
        ];
        let mut gzipped = Vec::new();
        let mut plain = Vec::new();
        for r in &records {
            let member = r.member(None);
            gzipped.extend_from_slice(&member);
            flate2::read::GzDecoder::new(&member[..])
                .read_to_end(&mut plain)
                .unwrap();
        }
        let limit = 64 * 1024;
        for data in [&gzipped, &plain] {
            let spans: Vec<_> = RecordIter::new(data)
                .map(|r| r.map(|(o, l, _)| (o, l)).unwrap())
                .collect();
            for capacity in [1, 7, 8192] {
                let input = std::io::BufReader::with_capacity(capacity, &data[..]);
                let items: Vec<_> = RecordReader::new(input)
                    .with_max_block(limit)
                    .collect::<Result<_>>()
                    .unwrap();
                assert_eq!(
                    items.iter().map(|(o, l, _)| (*o, *l)).collect::<Vec<_>>(),
                    spans,
                    "buffer of {capacity}"
                );
                let body = |s: &Streamed| match s {
                    Streamed::Record(r) => r.http_response().unwrap().body,
                    Streamed::Oversized(h) => panic!("{h:?} is under the limit"),
                };
                assert_eq!(body(&items[0].2), b"before");
                assert_eq!(body(&items[2].2), b"after");
                match &items[1].2 {
                    Streamed::Oversized(head) => {
                        assert_eq!(head.target_uri(), Some("https://www.debian.org/doc/"));
                        assert_eq!(head.record_type(), Some("response"));
                        assert!(head.block_len > big_payload.len() as u64);
                        assert_eq!(
                            head.header(header::CONTENT_LENGTH),
                            Some(head.block_len.to_string().as_str())
                        );
                    }
                    Streamed::Record(_) => panic!("a block over {limit} bytes was held"),
                }
            }
            // Cut inside the oversized block: an error at its offset, after
            // the record before it.
            let cut = (spans[1].0 + spans[1].1 / 2) as usize;
            let items: Vec<_> = RecordReader::new(&data[..cut])
                .with_max_block(limit)
                .collect();
            assert_eq!(items.len(), 2);
            assert!(items[0].is_ok());
            match &items[1] {
                Err(Error::CorruptRecord { offset, .. }) => assert_eq!(*offset, spans[1].0),
                other => panic!("expected CorruptRecord, got {other:?}"),
            }
        }
        // The limit never goes over MAX_RECORD_BYTES.
        let reader = RecordReader::new(&plain[..]).with_max_block(u64::MAX);
        assert_eq!(reader.max_block, MAX_RECORD_BYTES);
    }

    /// A file gzipped whole (one member, many records) is told at its first
    /// record, an oversized one too (its block is not held to tell it).
    #[test]
    fn a_member_of_several_records_is_refused_after_the_first() {
        let mut plain = Vec::new();
        for r in [response(&b"x".repeat(200_000)), response(b"second")] {
            flate2::read::GzDecoder::new(&r.member(None)[..])
                .read_to_end(&mut plain)
                .unwrap();
        }
        let mut whole = flate2::write::GzEncoder::new(Vec::new(), Compression::default());
        std::io::Write::write_all(&mut whole, &plain).unwrap();
        let whole = whole.finish().unwrap();
        for limit in [1024, MAX_RECORD_BYTES] {
            let items: Vec<_> = RecordReader::new(&whole[..])
                .with_max_block(limit)
                .collect();
            assert_eq!(items.len(), 1, "limit {limit}");
            match &items[0] {
                Err(Error::CorruptRecord { offset: 0, reason }) => {
                    assert!(reason.contains("more than one record"), "{reason}")
                }
                other => panic!("expected CorruptRecord, got {other:?}"),
            }
        }
    }

    #[test]
    fn truncated_tail_yields_good_records_then_corrupt() {
        let a = response(b"one");
        let b = response(b"two");
        let mut pack = a.member(None).clone();
        pack.extend_from_slice(&b.member(None)[..b.member(None).len() / 2]);
        let mut it = RecordIter::new(&pack);
        let (off, len, rec) = it.next().unwrap().unwrap();
        assert_eq!((off, len), (0, a.member(None).len() as u64));
        assert_eq!(rec.http_response().unwrap().body, b"one");
        match it.next() {
            Some(Err(Error::CorruptRecord { offset, .. })) => {
                assert_eq!(offset, a.member(None).len() as u64)
            }
            other => panic!("expected CorruptRecord, got {other:?}"),
        }
        assert!(it.next().is_none());
    }

    #[test]
    fn malformed_input_never_panics() {
        let good = response(b"<p>x</p>").member(None);
        let mut raw = Vec::new();
        flate2::read::GzDecoder::new(&good[..])
            .read_to_end(&mut raw)
            .unwrap();
        // Every prefix of both encodings, plus single-byte corruptions.
        for data in [&good, &raw] {
            for cut in 0..data.len() {
                let _ = read_record(&data[..cut]);
                let _ = RecordIter::new(&data[..cut]).count();
                let _ = RecordReader::new(&data[..cut]).count();
            }
            for i in 0..data.len() {
                let mut bad = data.clone();
                bad[i] ^= 0x5a;
                let _ = read_record(&bad);
                let _ = RecordIter::new(&bad).count();
                let _ = RecordReader::new(&bad[..]).count();
                if let Ok(rec) = read_record(&bad) {
                    let _ = rec.http_response();
                }
            }
        }
        for junk in [
            &b""[..],
            b"WARC/",
            b"\x1f\x8b",
            b"WARC/1.1\r\nContent-Length: 99999999999999999999\r\n\r\n",
        ] {
            assert!(read_record(junk).is_err());
        }
    }

    #[test]
    fn http_response_rejects_non_http_blocks() {
        let rec = WarcRecord {
            headers: vec![],
            block: b"not http\r\n\r\n".to_vec(),
        };
        assert!(matches!(
            rec.http_response(),
            Err(Error::MalformedHttp { .. })
        ));
        let rec = WarcRecord {
            headers: vec![],
            block: b"HTTP/1.1 abc OK\r\n\r\n".to_vec(),
        };
        assert!(matches!(
            rec.http_response(),
            Err(Error::MalformedHttp { .. })
        ));
    }

    /// A pack as the Packer writes it: a warcinfo, then `n` responses naming it; with the
    /// offset and length of every record.
    fn pack_of(n: usize, pages: impl Fn(usize) -> Vec<u8>) -> (Vec<u8>, Vec<(u64, u64)>) {
        let info = encode_warcinfo("p.warc.gz", &[]);
        let mut pack = info.member(None);
        let mut spans = vec![(0, pack.len() as u64)];
        for i in 0..n {
            let member = response(&pages(i)).member(Some(&info.record_id));
            spans.push((pack.len() as u64, member.len() as u64));
            pack.extend_from_slice(&member);
        }
        (pack, spans)
    }

    fn page(i: usize) -> Vec<u8> {
        format!("<p>page {i}</p>").repeat(20 + i * 7).into_bytes()
    }

    /// A month pack holds whole packs one after the other (`harvest compact`): damage at
    /// the end of the first costs only the damaged record; the second pack's warcinfo (a name
    /// of the month) and records are found again. A plain `Resync` of the same bytes takes
    /// them for another file's and ends in a torn tail.
    #[test]
    fn resync_in_a_month_pack_goes_on_into_the_next_pack() {
        let pack_named = |name: &str, n: usize| {
            let info = encode_warcinfo(name, &[]);
            let mut pack = info.member(None);
            for i in 0..n {
                pack.extend_from_slice(&response(&page(i)).member(Some(&info.record_id)));
            }
            pack
        };
        let first = pack_named("news-20240501-c0-20240502101112-00000-k7q2mxa4.warc.gz", 4);
        let second = pack_named("news-20240503-c1-20240504101112-00000-abcdefgh.warc.gz", 3);
        let mut month = first.clone();
        month.extend_from_slice(&second);
        let whole: Vec<(u64, u64)> = RecordIter::new(&month)
            .map(|r| r.map(|(o, l, _)| (o, l)).unwrap())
            .collect();
        assert_eq!(whole.len(), 9);
        // Damage the last record of the first pack: the next record to read is the second
        // pack's warcinfo.
        let (at, len) = whole[4];
        for b in &mut month[(at + len / 2) as usize..(at + len / 2 + 8) as usize] {
            *b ^= 0x5a;
        }
        let path = "news/2024/05/news-202405-20240601000000-00000-zzzzzzzz.warc.gz";
        let read: Vec<Resynced> = Resync::for_pack(path, &month)
            .map(|item| match item {
                Ok((o, l, _)) => Ok((o, l)),
                Err(d) => Err((d.offset, d.length, d.to_end)),
            })
            .collect();
        let mut expected: Vec<Resynced> = whole[..4].iter().map(|&r| Ok(r)).collect();
        expected.push(Err((at, len, false)));
        expected.extend(whole[5..].iter().map(|&r| Ok(r)));
        assert_eq!(read, expected);
        // Without the month pack's name the second pack's records are another file's.
        let plain = resynced(&month);
        assert_eq!(plain.len(), 5, "{plain:?}");
        assert!(matches!(plain[4], Err((_, _, true))), "{plain:?}");
        // A warcinfo of another month does not start a pack of this one.
        let other = "news/2024/06/news-202406-20240701000000-00000-zzzzzzzz.warc.gz";
        assert_eq!(Resync::for_pack(other, &month).count(), 5);
    }

    /// Offsets and lengths of what [`Resync`] yields: records as `Ok`, damage as `Err`
    /// (offset, length, to the end).
    /// A record read (offset, length) or a damaged region (offset, length, to the end).
    type Resynced = std::result::Result<(u64, u64), (u64, u64, bool)>;

    fn resynced(pack: &[u8]) -> Vec<Resynced> {
        Resync::new(pack)
            .map(|item| match item {
                Ok((o, l, _)) => Ok((o, l)),
                Err(d) => Err((d.offset, d.length, d.to_end)),
            })
            .collect()
    }

    /// Every byte of `range` xor 0xa5.
    fn flip(pack: &mut [u8], range: std::ops::Range<usize>) {
        for b in &mut pack[range] {
            *b ^= 0xa5;
        }
    }

    /// Issue 40 item 2: 16 flipped bytes in the middle of a pack cost one record, not the
    /// rest of the pack.
    #[test]
    fn resync_skips_a_damaged_record_in_the_middle_of_a_pack() {
        let (mut pack, spans) = pack_of(6, page);
        let (at, len) = spans[3];
        let middle = (at + len / 2) as usize;
        flip(&mut pack, middle..middle + 16);
        let mut want: Vec<_> = spans.iter().map(|&s| Ok(s)).collect();
        want[3] = Err((at, len, false));
        assert_eq!(resynced(&pack), want);
        // The records after the damage are the ones written there.
        let bodies: Vec<Vec<u8>> = Resync::new(&pack)
            .filter_map(|r| r.ok())
            .skip(1)
            .map(|(_, _, r)| r.http_response().unwrap().body)
            .collect();
        let mut written: Vec<Vec<u8>> = (0..6).map(page).collect();
        written.remove(2);
        assert_eq!(bodies, written);
        // The old reader stops at the damage (the behaviour this replaces).
        assert_eq!(RecordIter::new(&pack).filter(|r| r.is_ok()).count(), 3);
    }

    #[test]
    fn resync_makes_one_region_of_damage_across_records() {
        let (mut pack, spans) = pack_of(6, page);
        // From the end of record 2 into record 4: three records unreadable.
        let from = (spans[2].0 + spans[2].1 - 8) as usize;
        let to = (spans[4].0 + 4) as usize;
        flip(&mut pack, from..to);
        let region = spans[5].0 - spans[2].0;
        let got = resynced(&pack);
        assert_eq!(
            got,
            vec![
                Ok(spans[0]),
                Ok(spans[1]),
                Err((spans[2].0, region, false)),
                Ok(spans[5]),
                Ok(spans[6]),
            ]
        );
    }

    #[test]
    fn resync_reports_a_torn_tail_as_damage_to_the_end() {
        let (pack, spans) = pack_of(3, page);
        let (at, len) = spans[3];
        let torn = &pack[..(at + len / 2) as usize];
        assert_eq!(
            resynced(torn),
            vec![
                Ok(spans[0]),
                Ok(spans[1]),
                Ok(spans[2]),
                Err((at, len / 2, true))
            ]
        );
        // Damage in the last record is a torn tail too: nothing readable follows it.
        let mut last = pack.clone();
        flip(&mut last, (at + 20) as usize..(at + 36) as usize);
        assert_eq!(resynced(&last).last(), Some(&Err((at, len, true))));
        // A whole pack reads as RecordIter reads it.
        let plain: Vec<_> = RecordIter::new(&pack)
            .map(|r| r.map(|(o, l, _)| (o, l)).unwrap())
            .collect();
        assert_eq!(
            resynced(&pack),
            plain.into_iter().map(Ok).collect::<Vec<_>>()
        );
    }

    #[test]
    fn resync_reads_past_damage_in_an_uncompressed_pack() {
        let (gz, _) = pack_of(4, page);
        let mut plain = Vec::new();
        flate2::read::MultiGzDecoder::new(&gz[..])
            .read_to_end(&mut plain)
            .unwrap();
        let spans: Vec<(u64, u64)> = RecordIter::new(&plain)
            .map(|r| r.map(|(o, l, _)| (o, l)).unwrap())
            .collect();
        assert_eq!(spans.len(), 5);
        // The version line of record 2 broken: its header no longer parses.
        let at = spans[2].0 as usize;
        plain[at] = b'X';
        let mut want: Vec<_> = spans.iter().map(|&s| Ok(s)).collect();
        want[2] = Err((spans[2].0, spans[2].1, false));
        assert_eq!(resynced(&plain), want);
    }

    /// A pack's records name its warcinfo: a WARC member stored inside a record's block
    /// (an archived .warc.gz file) is not taken for a record of the pack.
    #[test]
    fn resync_does_not_take_a_warc_inside_a_block_for_a_record() {
        let other = encode_warcinfo("other.warc.gz", &[]);
        let inner = response(b"inner").member(Some(&other.record_id));
        let (pack, spans) = pack_of(4, |i| {
            if i == 1 {
                [&b"<p>a .warc.gz file:"[..], &inner, b"</p>"].concat()
            } else {
                page(i)
            }
        });
        // The record holding it, stored (as a compressor stores incompressible bytes), so
        // the inner member is in the pack as it is.
        let (at, len) = spans[2];
        let (at, len) = (at as usize, len as usize);
        let (raw, _) = gunzip_member(&pack[at..at + len]).unwrap();
        let mut stored = flate2::write::GzEncoder::new(Vec::new(), Compression::none());
        std::io::Write::write_all(&mut stored, &raw).unwrap();
        let stored = stored.finish().unwrap();
        let mut pack = [&pack[..at], &stored, &pack[at + len..]].concat();
        assert!(
            find(&pack[at..at + stored.len()], &inner).is_some(),
            "the test needs the inner member verbatim"
        );
        let shift = stored.len() as i64 - len as i64;
        let spans: Vec<(u64, u64)> = spans
            .iter()
            .enumerate()
            .map(|(i, &(o, l))| match i {
                0..=1 => (o, l),
                2 => (o, stored.len() as u64),
                _ => ((o as i64 + shift) as u64, l),
            })
            .collect();
        // Untouched, the pack reads whole.
        assert_eq!(
            resynced(&pack),
            spans.iter().map(|&s| Ok(s)).collect::<Vec<_>>()
        );
        flip(&mut pack, at + 12..at + 28);
        let mut want: Vec<_> = spans.iter().map(|&s| Ok(s)).collect();
        want[2] = Err((spans[2].0, spans[2].1, false));
        assert_eq!(resynced(&pack), want);
    }

    /// Seeded random damage: every record the flipped run does not touch is yielded at its
    /// offset with its bytes, every one it touches is inside a reported region.
    #[test]
    fn resync_keeps_every_record_random_damage_misses() {
        let seed = 0x4011_u64;
        eprintln!("seed {seed:#x}");
        use rand_xoshiro::rand_core::{RngCore, SeedableRng};
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(seed);
        let (pack, spans) = pack_of(12, page);
        for round in 0..200 {
            let mut bad = pack.clone();
            let start = (rng.next_u64() % (pack.len() as u64 - 16)) as usize;
            flip(&mut bad, start..start + 16);
            let touched = |&(o, l): &(u64, u64)| (start as u64) < o + l && o < (start + 16) as u64;
            let got: Vec<_> = Resync::new(&bad).collect();
            let read: Vec<(u64, u64)> = got
                .iter()
                .filter_map(|r| r.as_ref().ok().map(|(o, l, _)| (*o, *l)))
                .collect();
            let intact: Vec<(u64, u64)> = spans.iter().copied().filter(|s| !touched(s)).collect();
            assert_eq!(read, intact, "round {round}, flipped {start}..+16");
            for r in got.iter().filter_map(|r| r.as_ref().ok()) {
                let (o, l, rec) = r;
                assert_eq!(
                    read_record(&pack[*o as usize..(*o + *l) as usize]).unwrap(),
                    *rec
                );
            }
            for damaged in spans.iter().filter(|s| touched(s)) {
                let covered = got
                    .iter()
                    .filter_map(|r| r.as_ref().err())
                    .any(|d| d.offset <= damaged.0 && damaged.0 + damaged.1 <= d.offset + d.length);
                assert!(covered, "round {round}: {damaged:?} in no region: {got:?}");
            }
        }
    }
}
