//! The WARC records a capture adds beside its own.

use packer::warc::{self, EncodedRecord, RequestInput};

/// The `request` record of a capture whose record is `capture` (response or revisit), when
/// this crawl sent the request: same target URI and date, `WARC-Concurrent-To` the capture.
pub(crate) fn request_record(
    sent: Option<&crawler::SentRequest>,
    url: &str,
    date: chrono::DateTime<chrono::Utc>,
    capture: &EncodedRecord,
) -> Option<EncodedRecord> {
    sent.map(|sent| {
        warc::encode_request(&RequestInput {
            target_uri: url,
            date,
            concurrent_to: &capture.record_id,
            request_line: &sent.request_line,
            headers: &sent.headers,
        })
    })
}
