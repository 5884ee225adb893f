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

mod encode;
mod fields;
mod member;
mod read;
mod record;
mod resync;
mod spec;
mod stream;
#[cfg(test)]
mod tests;

pub use encode::{
    encode_not_modified, encode_request, encode_response, encode_response_with, encode_revisit,
    encode_warcinfo, NotModifiedInput, RequestInput, ResponseInput, RevisitInput,
};
pub use fields::{format_warc_date, new_record_id, payload_digest};
pub use member::EncodedRecord;
pub use read::{read_record, RecordIter};
pub use record::{HttpResponse, WarcRecord};
pub use resync::{ends_with_whole_record, Damage, Resync};
pub use spec::{
    header, record_type, CONTENT_TYPE_HTTP_REQUEST, CONTENT_TYPE_HTTP_RESPONSE,
    CONTENT_TYPE_WARC_FIELDS, DIGEST_PREFIX, MAX_RECORD_BYTES, REVISIT_PROFILE_IDENTICAL_PAYLOAD,
    REVISIT_PROFILE_SERVER_NOT_MODIFIED, WARC_1_1_SPEC_URI, WARC_VERSION,
};
pub(crate) use stream::{read_block, MAX_HEADER_LINE_BYTES};
pub use stream::{RecordHead, RecordReader, Streamed};
