use super::*;

use std::io::Read;

use chrono::Utc;
use flate2::Compression;

use super::encode::SOFTWARE;
use super::read::gunzip_member;
use super::resync::find;
use super::spec::GZIP_MAGIC;
use crate::error::{Error, Result};

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

/// A record longer than the limit comes as its head, its
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

/// 16 flipped bytes in the middle of a pack cost one record, not the
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
