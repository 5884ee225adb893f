//! The WARC 1.1 vocabulary harvest writes and reads: the version line, header names,
//! record types, content types, revisit profiles and the reader's size limit. A leaf that
//! the writing and the reading modules share.

/// First line of every record we write.
pub const WARC_VERSION: &str = "WARC/1.1";
/// Prefix of digests (algorithm label).
pub const DIGEST_PREFIX: &str = "sha1:";

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

pub(super) const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];
