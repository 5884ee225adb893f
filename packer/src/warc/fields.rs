//! Field values and lines as harvest writes them: a header line with CR and LF cleaned out,
//! an HTTP head, `sha1:` digests, record ids and WARC dates. Kept apart from the encoders
//! because the gzip member code writes header lines too.

use chrono::{DateTime, SecondsFormat, Utc};
use sha1::{Digest, Sha1};

use super::spec::DIGEST_PREFIX;

pub(super) const CRLF: &[u8] = b"\r\n";

/// `sha1:` + base32 (RFC 4648, upper case, padded) of `bytes`, as in `WARC-Payload-Digest`.
pub fn payload_digest(bytes: &[u8]) -> String {
    digest_string(&Sha1::digest(bytes))
}

/// `sha1:` + base32 of a finished SHA-1.
pub(super) fn digest_string(hash: &[u8]) -> String {
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

/// Replaces CR and LF (which would end a header line early) by spaces.
fn clean(value: &str) -> std::borrow::Cow<'_, str> {
    if value.contains(['\r', '\n']) {
        value.replace(['\r', '\n'], " ").into()
    } else {
        value.into()
    }
}

pub(super) fn push_field(out: &mut Vec<u8>, name: &str, value: &str) {
    out.extend_from_slice(clean(name).as_bytes());
    out.extend_from_slice(b": ");
    out.extend_from_slice(clean(value).as_bytes());
    out.extend_from_slice(CRLF);
}

/// HTTP status line + headers + empty line.
pub(super) fn http_head(status_line: &str, headers: &[(String, String)]) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(clean(status_line).as_bytes());
    out.extend_from_slice(CRLF);
    for (name, value) in headers {
        push_field(&mut out, name, value);
    }
    out.extend_from_slice(CRLF);
    out
}
