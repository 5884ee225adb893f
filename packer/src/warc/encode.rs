//! The encoders of the record types harvest writes (`warcinfo`, `response`, `revisit`,
//! `request`), each from an input struct: which headers and block each record has. The
//! compression is [`super::member`]'s.

use chrono::{DateTime, Utc};
use sha1::{Digest, Sha1};

use super::fields::{
    digest_string, format_warc_date, http_head, new_record_id, payload_digest, push_field,
};
use super::member::{record, EncodedRecord};
use super::spec::{
    header, record_type, CONTENT_TYPE_HTTP_REQUEST, CONTENT_TYPE_HTTP_RESPONSE,
    CONTENT_TYPE_WARC_FIELDS, REVISIT_PROFILE_IDENTICAL_PAYLOAD,
    REVISIT_PROFILE_SERVER_NOT_MODIFIED, WARC_1_1_SPEC_URI,
};

const WARCINFO_SOFTWARE: &str = "software";
const WARCINFO_FORMAT: &str = "format";
const WARCINFO_CONFORMS_TO: &str = "conformsTo";
const WARC_FORMAT_1_1: &str = "WARC File Format 1.1";

pub(super) const SOFTWARE: &str = concat!("harvest/", env!("CARGO_PKG_VERSION"));

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
