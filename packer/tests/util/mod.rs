//! Shared helpers for the packer integration tests.

#![allow(dead_code)]

use std::path::PathBuf;
use std::process::{Command, Output};
use std::sync::Arc;

use chrono::{DateTime, NaiveDate, TimeZone, Utc};
use packer::{
    encode_response, EncodedRecord, LocalPackStore, PackKey, PackStore, Packer, PackerOptions,
    ResponseInput,
};

/// Real HTML pages (libffi manual, see tests/fixtures/libffi/README.md) with the URL they are
/// published under.
pub const PAGES: &[(&str, &str)] = &[
    (
        "Introduction.html",
        "https://www.sourceware.org/libffi/manual/Introduction.html",
    ),
    (
        "The-Basics.html",
        "https://www.sourceware.org/libffi/manual/The-Basics.html",
    ),
    (
        "Simple-Example.html",
        "https://www.sourceware.org/libffi/manual/Simple-Example.html",
    ),
    (
        "Types.html",
        "https://www.sourceware.org/libffi/manual/Types.html",
    ),
];

/// Bytes of a fixture page.
pub fn fixture(name: &str) -> Vec<u8> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/libffi")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("read fixture {}: {e}", path.display()))
}

/// Typical response headers for an HTML page of `len` bytes.
pub fn html_headers(len: usize) -> Vec<(String, String)> {
    vec![
        ("Date".into(), "Wed, 01 May 2024 08:15:00 GMT".into()),
        ("Server".into(), "Apache".into()),
        ("Content-Type".into(), "text/html; charset=utf-8".into()),
        ("Content-Length".into(), len.to_string()),
    ]
}

/// Fetch time used by the tests.
pub fn fetch_time(minute: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2024, 5, 1, 8, minute, 0)
        .single()
        .expect("valid time")
}

/// A response record for fixture page `i`.
pub fn page_record(i: usize) -> (EncodedRecord, Vec<u8>) {
    let (name, url) = PAGES[i];
    let body = fixture(name);
    let headers = html_headers(body.len());
    let rec = encode_response(&ResponseInput {
        target_uri: url,
        date: fetch_time(i as u32),
        ip_address: Some("8.43.85.97"),
        concurrent_to: None,
        status_line: "HTTP/1.1 200 OK",
        headers: &headers,
        payload: &body,
    });
    (rec, body)
}

/// The key used by most tests.
pub fn key(cluster: u32) -> PackKey {
    PackKey {
        topic: "technology".into(),
        date: NaiveDate::from_ymd_opt(2024, 5, 1).expect("valid date"),
        cluster,
    }
}

/// A fresh local store in a temp dir.
pub fn local_store() -> (tempfile::TempDir, Arc<dyn PackStore>) {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = LocalPackStore::open(dir.path()).expect("open store");
    (dir, Arc::new(store))
}

/// A packer with default options over `store`.
pub fn packer(store: &Arc<dyn PackStore>, max_pack_bytes: u64) -> Packer {
    Packer::new(
        Arc::clone(store),
        PackerOptions {
            max_pack_bytes,
            warcinfo_fields: vec![("operator".into(), "harvest tests".into())],
            ..PackerOptions::default()
        },
    )
}

const PYTHON_ENV: &str = "HARVEST_PYTHON";
const DEFAULT_PYTHON: &str = "python3";
const WARCIO_MODULE: &str = "warcio.cli";

/// Runs `python3 -m warcio.cli ARGS` (warcio 1.7.4; `HARVEST_PYTHON` picks the interpreter).
/// Panics when warcio is missing: a silently skipped compatibility test would prove nothing.
pub fn warcio(args: &[&str]) -> Output {
    let python = std::env::var(PYTHON_ENV).unwrap_or_else(|_| DEFAULT_PYTHON.to_string());
    let out = Command::new(&python)
        .arg("-m")
        .arg(WARCIO_MODULE)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {python}: {e}"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !stderr.contains("No module named"),
        "warcio is not installed for {python}: run deploy/data/install-test-peers.sh (warcio==1.7.4 in deploy/cache/test-venv, which deploy/test.sh puts first on PATH)\n{stderr}"
    );
    out
}

/// `(cluster, part, writer)` of a pack path named the current way (panics otherwise): the
/// tests check names by their parts, the creation time in them being the clock's.
pub fn pack_name(path: &str) -> (u32, u32, String) {
    let name = packer::PackName::parse(path).unwrap_or_else(|| panic!("not a pack name: {path}"));
    let origin = name
        .origin
        .unwrap_or_else(|| panic!("named the old way: {path}"));
    assert_eq!(
        (name.topic.as_str(), name.date),
        ("technology", key(0).date),
        "{path}"
    );
    (name.cluster, name.part, origin.writer)
}
