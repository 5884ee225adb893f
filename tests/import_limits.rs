//! `harvest import` at its limits (issue 40): a record far over
//! `max_body_bytes` is read past as it streams, in memory that does not grow
//! with it, and the records after it are imported; a `.warc.gz` cut short
//! is imported up to its last whole record and the import then fails,
//! naming the file and the offset where it stops.

mod util;

use std::io::{BufWriter, Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use chrono::TimeZone;
use packer::warc::{self, EncodedRecord, ResponseInput};
use util::{jsonl, Workspace};

/// The block of the oversized record: about 1 GB of HTML, 100 times
/// `max_body_bytes` (10 MiB by default).
const HUGE_BLOCK_BYTES: u64 = 1_000_000_000;

/// Peak resident memory an import of a small file may grow by when a
/// gigabyte record is added to it: a fixed allowance, well below the
/// record (an import that held it would need ten times as much).
const RSS_GROWTH_BOUND: u64 = 100 << 20;

/// Peak resident memory of any import in this file.
const RSS_BOUND: u64 = 300 << 20;

fn date() -> chrono::DateTime<chrono::Utc> {
    chrono::Utc.with_ymd_and_hms(2024, 5, 1, 12, 0, 0).unwrap()
}

fn page(n: u32) -> String {
    format!(
        "<html><head><title>Page {n} of the import limits test</title></head><body>\
         <p>Some text {n} about archives that are too large or cut short.</p></body></html>"
    )
}

/// A 200 HTML response record for `url`.
fn response(url: &str, body: &str) -> EncodedRecord {
    let headers = vec![(
        "Content-Type".to_string(),
        "text/html; charset=utf-8".to_string(),
    )];
    warc::encode_response(&ResponseInput {
        target_uri: url,
        date: date(),
        ip_address: None,
        concurrent_to: None,
        status_line: "HTTP/1.1 200 OK",
        headers: &headers,
        payload: body.as_bytes(),
    })
}

/// Writes, as one gzip member streamed to `out`, a response record whose
/// block is `block_bytes` of HTML (a repeated paragraph: it compresses
/// about a thousand times), never holding it.
fn write_huge_member(out: &mut impl Write, url: &str, block_bytes: u64) {
    let head = "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n\r\n";
    let warc_head = format!(
        "WARC/1.1\r\nWARC-Type: response\r\nWARC-Target-URI: {url}\r\n\
         WARC-Date: 2024-05-01T12:00:00Z\r\n\
         WARC-Record-ID: <urn:uuid:4f2b5e64-0e7c-4bde-9a57-4d1fbc1b0a40>\r\n\
         Content-Type: application/http; msgtype=response\r\n\
         Content-Length: {block_bytes}\r\n\r\n"
    );
    let mut gz = flate2::write::GzEncoder::new(out, flate2::Compression::fast());
    gz.write_all(warc_head.as_bytes()).unwrap();
    gz.write_all(head.as_bytes()).unwrap();
    let paragraph = b"<p>The same paragraph, again and again, far past any cap.</p>\n";
    let chunk: Vec<u8> = paragraph.iter().copied().cycle().take(1 << 20).collect();
    let mut left = block_bytes - head.len() as u64;
    while left > 0 {
        let n = left.min(chunk.len() as u64) as usize;
        gz.write_all(&chunk[..n]).unwrap();
        left -= n as u64;
    }
    gz.write_all(b"\r\n\r\n").unwrap();
    gz.finish().unwrap();
}

/// Resident-memory peak (`VmHWM`) of a running process, in bytes.
fn peak_rss(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line
        .trim_start_matches("VmHWM:")
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kib * 1024)
}

/// `harvest -c CONFIG import --json FILE` run to its end, with the peak
/// resident memory it reached (read from `/proc` as it runs).
struct Measured {
    success: bool,
    stdout: Vec<u8>,
    stderr: String,
    peak_rss: u64,
}

fn import_measured(ws: &Workspace, file: &Path) -> Measured {
    let out = ws.path().join("import.out");
    let err = ws.path().join("import.err");
    let mut child = Command::new(env!("CARGO_BIN_EXE_harvest"))
        .arg("-c")
        .arg(&ws.config)
        .args(["import", "--json"])
        .arg(file)
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap())
        .stdin(Stdio::null())
        .spawn()
        .expect("run harvest import");
    let mut peak = 0;
    let status = loop {
        // VmHWM only grows: the last reading before the exit is the peak
        // but for the last few milliseconds.
        if let Some(p) = peak_rss(child.id()) {
            peak = peak.max(p);
        }
        if let Some(status) = child.try_wait().expect("wait for harvest") {
            break status;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    Measured {
        success: status.success(),
        stdout: std::fs::read(&out).unwrap(),
        stderr: std::fs::read_to_string(&err).unwrap(),
        peak_rss: peak,
    }
}

fn mib(bytes: u64) -> u64 {
    bytes >> 20
}

/// Titles of the archive's pages.
fn titles(ws: &Workspace) -> Vec<String> {
    let rows = jsonl(&ws.harvest(&["query", "--format", "jsonl", "--limit", "100"]));
    let mut titles: Vec<String> = rows
        .iter()
        .filter_map(|r| r["title"].as_str().map(str::to_string))
        .collect();
    titles.sort();
    titles
}

/// Issue 40: a 1 MB `.warc.gz` holding one 420 MB record took `import` to
/// about 1 GB (the record was held whole before it was skipped).
#[cfg(target_os = "linux")]
#[test]
fn a_record_over_the_cap_is_read_past_in_memory_that_does_not_grow_with_it() {
    let scratch = tempfile::tempdir().unwrap();
    let small = response("http://import.test/small.html", &page(1)).member(None);

    // The same small page alone, then after a 1 GB record.
    let alone = scratch.path().join("small.warc.gz");
    std::fs::write(&alone, &small).unwrap();
    let huge = scratch.path().join("huge.warc.gz");
    {
        let mut out = BufWriter::new(std::fs::File::create(&huge).unwrap());
        write_huge_member(&mut out, "http://import.test/huge.html", HUGE_BLOCK_BYTES);
        out.write_all(&small).unwrap();
        out.flush().unwrap();
    }
    let huge_member_len = std::fs::metadata(&huge).unwrap().len() - small.len() as u64;
    assert!(
        huge_member_len < 20 << 20,
        "the test file stays small: {huge_member_len} bytes"
    );

    let baseline_ws = Workspace::new("http://import.test/small.html", "imported", None);
    let baseline = import_measured(&baseline_ws, &alone);
    assert!(baseline.success, "{}", baseline.stderr);

    let ws = Workspace::new("http://import.test/small.html", "imported", None);
    let run = import_measured(&ws, &huge);
    eprintln!(
        "peak RSS of import: {} MiB for the small page alone, {} MiB with a {} MB record before it",
        mib(baseline.peak_rss),
        mib(run.peak_rss),
        HUGE_BLOCK_BYTES / 1_000_000
    );
    assert!(run.success, "{}", run.stderr);
    assert!(baseline.peak_rss > 0 && run.peak_rss > 0, "RSS was read");
    assert!(
        run.peak_rss < RSS_BOUND,
        "peak RSS {} MiB is under {} MiB",
        mib(run.peak_rss),
        mib(RSS_BOUND)
    );
    assert!(
        run.peak_rss < baseline.peak_rss + RSS_GROWTH_BOUND,
        "peak RSS {} MiB with the record, {} MiB without: the record is not held",
        mib(run.peak_rss),
        mib(baseline.peak_rss)
    );
    let summary: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
    assert_eq!(summary["records"].as_u64(), Some(2), "{summary}");
    assert_eq!(summary["ingest"]["new"].as_u64(), Some(1), "{summary}");
    let skipped = summary["skipped"].as_object().expect("skipped counts");
    let oversized: Vec<_> = skipped
        .iter()
        .filter(|(reason, _)| reason.contains("max_body_bytes"))
        .collect();
    assert_eq!(
        oversized.len(),
        1,
        "one reason for records over the cap: {summary}"
    );
    assert_eq!(oversized[0].1.as_u64(), Some(1), "{summary}");
    // Named: file, offset, URL, size.
    let named = run
        .stderr
        .lines()
        .find(|l| l.contains("http://import.test/huge.html"))
        .unwrap_or_else(|| panic!("the oversized record is named: {}", run.stderr));
    assert!(named.contains(&huge.display().to_string()), "{named}");
    assert!(named.contains("byte 0"), "{named}");
    assert!(named.contains(&HUGE_BLOCK_BYTES.to_string()), "{named}");
    assert_eq!(titles(&ws), titles(&baseline_ws));
    assert_eq!(titles(&ws), ["Page 1 of the import limits test"]);
}

/// Issue 40: a truncated `.warc.gz` imported with exit code 0. Now the
/// whole records before the cut are imported and the import exits 1 naming
/// the file and where it stops: gzipped per record (the offset in the file)
/// or whole (the offset in the decompressed stream).
#[test]
fn a_file_cut_short_imports_its_whole_records_then_fails_naming_where() {
    // An oversized record (12 MiB, over max_body_bytes and its head room)
    // among them is left out and named, at its offset in the file or in
    // the decompressed stream.
    let oversized = "<p>over the cap</p>".repeat(12 << 20 >> 4);
    let records = [
        response("http://import.test/a.html", &page(1)),
        response("http://import.test/big.html", &oversized),
        response("http://import.test/b.html", &page(2)),
        response("http://import.test/c.html", &page(3)),
    ];
    let mut per_record = Vec::new();
    let mut plain = Vec::new();
    let mut starts = Vec::new();
    let mut plain_starts = Vec::new();
    for r in &records {
        let member = r.member(None);
        starts.push(per_record.len());
        plain_starts.push(plain.len());
        per_record.extend_from_slice(&member);
        flate2::read::GzDecoder::new(&member[..])
            .read_to_end(&mut plain)
            .unwrap();
    }
    let mut whole = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    whole.write_all(&plain).unwrap();
    let whole = whole.finish().unwrap();

    let scratch = tempfile::tempdir().unwrap();
    let cut_record = &per_record[..starts[3] + (per_record.len() - starts[3]) / 2];
    // The whole-file stream cut short of its end: its last record is torn.
    let cut_whole = &whole[..whole.len() - 30];
    let expected_titles = [
        "Page 1 of the import limits test",
        "Page 2 of the import limits test",
    ];
    for (name, bytes, stop, big_at) in [
        (
            "cut.warc.gz",
            cut_record,
            format!("stops at byte {} of {}", starts[3], cut_record.len()),
            format!("at byte {} (http://import.test/big.html)", starts[1]),
        ),
        (
            "cut-whole.warc.gz",
            cut_whole,
            format!("before decompressed byte {}", plain_starts[3]),
            format!(
                "at decompressed byte {} (http://import.test/big.html)",
                plain_starts[1]
            ),
        ),
    ] {
        let file = scratch.path().join(name);
        std::fs::write(&file, bytes).unwrap();
        let ws = Workspace::new("http://import.test/a.html", "imported", None);
        let out = ws.harvest_raw(&["import", "--json", file.to_str().unwrap()]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{name}: {stderr}");
        let error = stderr
            .lines()
            .find(|l| l.starts_with("harvest: error:"))
            .unwrap_or_else(|| panic!("{name}: an error line: {stderr}"));
        assert!(error.contains(&file.display().to_string()), "{error}");
        assert!(error.contains(&stop), "{name}: {stop:?} in {error}");
        assert!(error.contains("the 3 records before"), "{error}");
        assert!(stderr.contains(&big_at), "{name}: {big_at:?} in {stderr}");
        // Nothing before the cut is lost.
        assert_eq!(titles(&ws), expected_titles, "{name}");
    }

    // The same records whole import and exit 0 (the cut is what fails).
    let file = scratch.path().join("whole.warc.gz");
    std::fs::write(&file, &per_record).unwrap();
    let ws = Workspace::new("http://import.test/a.html", "imported", None);
    let whole_run = ws.harvest(&["import", "--json", "--quiet", file.to_str().unwrap()]);
    assert_eq!(titles(&ws).len(), 3);
    assert!(
        String::from_utf8_lossy(&whole_run.stdout).contains("max_body_bytes"),
        "the oversized record is counted"
    );
}
