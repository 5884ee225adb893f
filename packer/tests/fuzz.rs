//! Fuzz targets of the WARC reader (issue 13): arbitrary bytes and real
//! records with random edits, gzip members and plain records, one record and
//! whole packs. The reader must answer every input with a record or an
//! error, never a panic or a hang; an untouched record reads back exactly.
//! `deploy/fuzz.sh SECONDS` runs them longer (see the fuzzkit crate).

use chrono::{TimeZone, Utc};
use fuzzkit::gen;
use fuzzkit::proptest;
use packer::warc::{self, ResponseInput, RevisitInput};

fn response(uri: &str, headers: &[(String, String)], payload: &[u8]) -> Vec<u8> {
    warc::encode_response(&ResponseInput {
        target_uri: uri,
        date: Utc
            .with_ymd_and_hms(2026, 1, 2, 3, 4, 5)
            .single()
            .unwrap_or_default(),
        ip_address: Some("192.0.2.1"),
        concurrent_to: None,
        status_line: "HTTP/1.1 200 OK",
        headers,
        payload,
    })
    .member(None)
}

/// Real records: a warcinfo, responses, a revisit, gzip members and the
/// same records decompressed (plain WARC).
fn corpus() -> Vec<Vec<u8>> {
    let headers = vec![
        (
            "Content-Type".to_string(),
            "text/html; charset=utf-8".to_string(),
        ),
        ("Content-Length".to_string(), "27".to_string()),
    ];
    let page = b"<html><p>hello</p></html>\r\n".to_vec();
    let info = warc::encode_warcinfo("c0-0.warc.gz", &[("operator", "fuzz")]).member(None);
    let resp = response("http://example.com/a?b=c", &headers, &page);
    let revisit = warc::encode_revisit(&RevisitInput {
        target_uri: "http://example.com/copy",
        date: Utc
            .with_ymd_and_hms(2026, 1, 3, 0, 0, 0)
            .single()
            .unwrap_or_default(),
        status_line: "HTTP/1.1 200 OK",
        headers: &headers,
        refers_to: "<urn:uuid:00000000-0000-0000-0000-000000000000>",
        refers_to_target_uri: "http://example.com/a?b=c",
        refers_to_date: Utc
            .with_ymd_and_hms(2026, 1, 2, 0, 0, 0)
            .single()
            .unwrap_or_default(),
        payload_digest: &warc::payload_digest(&page),
    })
    .member(None);
    let mut pack = info.clone();
    pack.extend_from_slice(&resp);
    pack.extend_from_slice(&revisit);
    let mut docs = vec![info, resp, revisit, pack];
    let plain: Vec<Vec<u8>> = docs.iter().map(|d| gunzip_all(d)).collect();
    docs.extend(plain);
    docs
}

fn gunzip_all(bytes: &[u8]) -> Vec<u8> {
    use std::io::Read;
    let mut out = Vec::new();
    let _ = flate2::read::MultiGzDecoder::new(bytes).read_to_end(&mut out);
    out
}

fn read_everything(bytes: &[u8]) {
    if let Ok(rec) = warc::read_record(bytes) {
        let _ = rec.record_type();
        let _ = rec.target_uri();
        let _ = rec.payload_digest();
        if let Ok(http) = rec.http_response() {
            assert!(http.body.len() <= bytes.len().max(1) * 1024 + 65_536);
        }
    }
    for item in warc::RecordIter::new(bytes).take(10_000) {
        match item {
            Ok((offset, len, rec)) => {
                assert!(offset + len <= bytes.len() as u64, "record past the end");
                let _ = rec.http_response();
            }
            Err(_) => break,
        }
    }
}

#[test]
fn fuzz_warc_reader() {
    fuzzkit::fuzz(
        "warc_reader",
        gen::bytes_or_mutated(corpus(), 4096),
        |bytes| read_everything(&bytes),
    );
}

#[test]
fn fuzz_warc_round_trip() {
    let strategy = (
        "[a-z]{1,8}",
        proptest::collection::vec(("X-[A-Za-z-]{1,12}", "[!-~][ -~]{0,38}[!-~]"), 0..6),
        gen::bytes(2048),
    );
    fuzzkit::fuzz("warc_round_trip", strategy, |(path, headers, payload)| {
        let uri = format!("http://example.com/{path}");
        let record = response(&uri, &headers, &payload);
        let rec = warc::read_record(&record).expect("our own record reads back");
        assert_eq!(rec.target_uri(), Some(uri.as_str()));
        let http = rec.http_response().expect("its HTTP response parses");
        assert_eq!(http.body, payload);
        assert_eq!(http.status, 200);
    });
}
