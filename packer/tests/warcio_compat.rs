//! Packs written by harvest must be readable by warcio (the reference Python WARC library).
//!
//! These tests run `python3 -m warcio.cli` (warcio 1.7.4: `pip install warcio==1.7.4`; set
//! `HARVEST_PYTHON` to use another interpreter). They FAIL when warcio is missing: CI installs
//! it, and a silently skipped compatibility test would prove nothing.

mod util;

use std::io::{Read, Write};
use std::path::Path;

use packer::warc::RevisitInput;
use packer::{encode_revisit, PackLocation, RecordIter};

const DIGEST_PASS: &str = "digest pass";
const REVISIT_NOT_CHECKED: &str = "digest present but not checked (revisit)";

use util::warcio;

/// One record as reported by `warcio check -v`.
#[derive(Debug)]
struct Checked {
    offset: u64,
    record_id: String,
    record_type: String,
    messages: Vec<String>,
}

fn parse_check(stdout: &str) -> Vec<Checked> {
    let mut out: Vec<Checked> = Vec::new();
    for line in stdout.lines() {
        let trimmed = line.trim();
        if let Some(rest) = trimmed.strip_prefix("offset ") {
            let parts: Vec<&str> = rest.split_whitespace().collect();
            assert_eq!(parts.len(), 4, "unexpected check line {line:?}");
            assert_eq!(parts[1], "WARC-Record-ID");
            out.push(Checked {
                offset: parts[0].parse().expect("offset"),
                record_id: parts[2].to_string(),
                record_type: parts[3].to_string(),
                messages: Vec::new(),
            });
        } else if line.starts_with("    ") {
            out.last_mut()
                .expect("message before any record")
                .messages
                .push(trimmed.to_string());
        }
    }
    out
}

struct Written {
    _dir: tempfile::TempDir,
    file: std::path::PathBuf,
    /// (record id, record type, location) in write order, warcinfo first.
    records: Vec<(String, &'static str, PackLocation)>,
    bodies: Vec<Vec<u8>>,
}

/// Writes one pack: warcinfo, the four fixture pages, then a revisit of the first page.
fn write_pack() -> Written {
    let (dir, store) = util::local_store();
    let mut packer = util::packer(&store, packer::DEFAULT_MAX_PACK_BYTES);
    let key = util::key(2);
    let mut records = Vec::new();
    let mut bodies = Vec::new();
    for i in 0..util::PAGES.len() {
        let (rec, body) = util::page_record(i);
        let loc = packer.write(&key, &rec).expect("write page");
        records.push((rec.record_id.clone(), "response", loc));
        bodies.push(body);
    }
    let (first, _) = util::page_record(0);
    let first_id = records[0].0.clone();
    let headers = util::html_headers(bodies[0].len());
    let revisit = encode_revisit(&RevisitInput {
        target_uri: util::PAGES[0].1,
        date: util::fetch_time(59),
        status_line: "HTTP/1.1 200 OK",
        headers: &headers,
        refers_to: &first_id,
        refers_to_target_uri: util::PAGES[0].1,
        refers_to_date: util::fetch_time(0),
        payload_digest: first.payload_digest.as_deref().expect("digest"),
    });
    let loc = packer.write(&key, &revisit).expect("write revisit");
    records.push((revisit.record_id.clone(), "revisit", loc));
    packer.sync_all().expect("sync");
    packer.close_all().expect("close");

    let path = &records[0].2.path;
    assert_eq!(util::pack_name(path), (2, 0, packer.writer().to_string()));
    // Prepend the warcinfo record, located by walking the pack.
    let file = dir.path().join(path);
    let data = std::fs::read(&file).expect("read pack");
    let (off, len, info) = RecordIter::new(&data)
        .next()
        .expect("a first record")
        .expect("readable warcinfo");
    assert_eq!(info.record_type(), Some("warcinfo"));
    let info_id = info.record_id().expect("warcinfo id").to_string();
    records.insert(
        0,
        (
            info_id,
            "warcinfo",
            PackLocation {
                path: path.clone(),
                offset: off,
                length: len,
            },
        ),
    );
    Written {
        _dir: dir,
        file,
        records,
        bodies,
    }
}

#[test]
fn warcio_check_validates_every_digest() {
    let w = write_pack();
    let out = warcio(&["check", "-v", w.file.to_str().expect("utf-8 path")]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "warcio check failed: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let checked = parse_check(&stdout);
    assert_eq!(checked.len(), w.records.len(), "check output: {stdout}");
    for (c, (id, kind, loc)) in checked.iter().zip(&w.records) {
        assert_eq!(&c.record_id, id);
        assert_eq!(c.record_type, *kind);
        assert_eq!(c.offset, loc.offset);
        let expected = if *kind == "revisit" {
            REVISIT_NOT_CHECKED
        } else {
            DIGEST_PASS
        };
        assert_eq!(
            c.messages,
            vec![expected.to_string()],
            "record {id} ({kind})"
        );
    }
}

#[test]
fn warcio_check_detects_a_tampered_payload() {
    // Negative control: the check above would be worthless if warcio never failed.
    let w = write_pack();
    let data = std::fs::read(&w.file).expect("read pack");
    let target = &w.records[2].2; // second page
    let start = target.offset as usize;
    let end = start + target.length as usize;
    let mut raw = Vec::new();
    flate2::read::GzDecoder::new(&data[start..end])
        .read_to_end(&mut raw)
        .expect("gunzip");
    let pos = raw
        .windows(6)
        .rposition(|win| win == b"libffi")
        .expect("page mentions libffi");
    raw[pos..pos + 6].copy_from_slice(b"LIBFFI");
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(&raw).expect("gzip");
    let member = enc.finish().expect("gzip finish");
    let mut tampered = data[..start].to_vec();
    tampered.extend_from_slice(&member);
    tampered.extend_from_slice(&data[end..]);
    let bad = w.file.with_file_name("tampered.warc.gz");
    std::fs::write(&bad, &tampered).expect("write tampered pack");

    let out = warcio(&["check", "-v", bad.to_str().expect("utf-8 path")]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        !out.status.success(),
        "warcio accepted a tampered payload: {stdout}"
    );
    let checked = parse_check(&stdout);
    let failed = &checked[2];
    assert_eq!(failed.record_id, w.records[2].0);
    assert!(
        failed
            .messages
            .iter()
            .any(|m| m.contains("payload digest failed")),
        "{stdout}"
    );
    assert_eq!(checked[1].messages, vec![DIGEST_PASS.to_string()]);
}

#[test]
fn warcio_index_offsets_equal_our_locations() {
    let w = write_pack();
    let out = warcio(&[
        "index",
        "-f",
        "offset,length,warc-type,warc-target-uri,warc-record-id,warc-payload-digest",
        w.file.to_str().expect("utf-8 path"),
    ]);
    assert!(
        out.status.success(),
        "warcio index failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect();
    assert_eq!(lines.len(), w.records.len());
    for (entry, (id, kind, loc)) in lines.iter().zip(&w.records) {
        assert_eq!(
            entry["offset"].as_str(),
            Some(loc.offset.to_string().as_str())
        );
        assert_eq!(
            entry["length"].as_str(),
            Some(loc.length.to_string().as_str())
        );
        assert_eq!(entry["warc-type"].as_str(), Some(*kind));
        assert_eq!(entry["warc-record-id"].as_str(), Some(id.as_str()));
    }
    // The revisit carries the original's payload digest.
    let first = &lines[1]["warc-payload-digest"];
    assert!(first.as_str().is_some_and(|d| d.starts_with("sha1:")));
    assert_eq!(&lines[lines.len() - 1]["warc-payload-digest"], first);
    assert_eq!(lines[1]["warc-target-uri"].as_str(), Some(util::PAGES[0].1));
}

#[test]
fn warcio_extract_returns_the_original_html() {
    let w = write_pack();
    for (i, body) in w.bodies.iter().enumerate() {
        let loc = &w.records[i + 1].2;
        let out = warcio(&[
            "extract",
            "--payload",
            w.file.to_str().expect("utf-8 path"),
            &loc.offset.to_string(),
        ]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(&out.stdout, body, "payload of {}", util::PAGES[i].0);
    }
    assert!(Path::new(&w.file).is_file());
}
