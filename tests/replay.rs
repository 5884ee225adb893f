//! Indexing from WARC records: `harvest reindex` rebuilds a lost index from
//! the packs with the same answers, `harvest import` brings a WARC written by
//! a real `wget --warc-file` into the archive with the same answers as a
//! crawl of the same site.

mod util;

use std::collections::BTreeMap;
use std::process::Command;

use harvest::demo::DEMO_ENTRY;
use util::{jsonl, Site, Workspace};

/// What an analyst sees of an archive (every answer that must survive a
/// reindex): all rows, per-day counts by topic and by story, the duplicate
/// report, and fsck's counts.
fn answers(ws: &Workspace) -> BTreeMap<&'static str, String> {
    let text = |args: &[&str]| String::from_utf8_lossy(&ws.harvest(args).stdout).into_owned();
    let fsck: serde_json::Value =
        serde_json::from_str(&text(&["fsck", "--json", "--quiet"])).expect("fsck JSON");
    BTreeMap::from([
        (
            "rows",
            text(&[
                "query", "--format", "jsonl", "--limit", "100000", "--sort", "time-asc",
            ]),
        ),
        (
            "by topic",
            text(&["stats", "--interval", "day", "--group-by", "topic"]),
        ),
        (
            "by story",
            text(&["stats", "--interval", "day", "--group-by", "story"]),
        ),
        ("dedup", text(&["dedup", "--format", "json"])),
        (
            "fsck",
            format!(
                "pages {} captures {} verified {} unindexed {} missing {}",
                fsck["pages"],
                fsck["captures"],
                fsck["verified"],
                fsck["unindexed"],
                fsck["missing"]
            ),
        ),
    ])
}

/// Fails with the first lines that differ.
fn assert_same(what: &str, before: &str, after: &str) {
    let diff: Vec<String> = before
        .lines()
        .zip(after.lines())
        .enumerate()
        .filter(|(_, (a, b))| a != b)
        .take(5)
        .map(|(i, (a, b))| format!("line {}:\n  before {a}\n  after  {b}", i + 1))
        .collect();
    assert!(
        diff.is_empty() && before.lines().count() == after.lines().count(),
        "{what} differs after reindex ({} vs {} lines):\n{}",
        before.lines().count(),
        after.lines().count(),
        diff.join("\n")
    );
}

#[test]
fn reindex_rebuilds_a_lost_index_with_the_same_answers() {
    let site = Site::demo();
    let ws = Workspace::new(&site.url(DEMO_ENTRY), "demo", None);
    ws.train_demo_model();
    let first = ws.crawl();
    assert!(first["pages"].as_u64().unwrap() > 300, "{first}");
    // A second run: every page again, unchanged (revisit records that
    // only add to the capture history).
    let second = ws.crawl();
    assert!(second["unchanged"].as_u64().unwrap() > 300, "{second}");
    let before = answers(&ws);
    assert!(
        before["fsck"].contains("unindexed 0 missing 0"),
        "{}",
        before["fsck"]
    );
    let rows = jsonl(&ws.harvest(&["query", "--format", "jsonl", "--limit", "100000"]));
    let sample: Vec<String> = rows
        .iter()
        .step_by(37)
        .map(|r| r["url"].as_str().unwrap().to_string())
        .collect();
    let bodies: Vec<Vec<u8>> = sample
        .iter()
        .map(|u| ws.harvest(&["get", u]).stdout)
        .collect();

    // The index is lost.
    std::fs::remove_dir_all(ws.path().join("index")).unwrap();
    let out = ws.harvest(&["reindex", "--json"]);
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    eprintln!("reindex: {summary}");
    assert_eq!(
        summary["replayed"].as_u64(),
        Some(
            [&first, &second]
                .iter()
                .map(|r| r["pages"].as_u64().unwrap() + r["answers"].as_u64().unwrap())
                .sum::<u64>()
        ),
        "{summary}"
    );
    let after = answers(&ws);
    for what in ["rows", "by topic", "by story", "dedup", "fsck"] {
        assert_same(what, &before[what], &after[what]);
    }
    for (url, body) in sample.iter().zip(&bodies) {
        assert_eq!(&ws.harvest(&["get", url]).stdout, body, "{url}");
    }
    // The URL and digest states came back too: a third run finds every
    // page unchanged and stores nothing new.
    let third = ws.crawl();
    assert_eq!(third["new"].as_u64(), Some(0), "{third}");
    assert_eq!(third["changed"].as_u64(), Some(0), "{third}");
    assert_eq!(third["unchanged"], second["unchanged"], "{third}");

    // An index that holds pages is not rebuilt over.
    let refused = ws.harvest_raw(&["reindex"]);
    assert!(!refused.status.success());
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("--replace"),
        "{}",
        String::from_utf8_lossy(&refused.stderr)
    );
    // ... unless asked to; the old one is kept aside.
    ws.harvest(&["reindex", "--replace", "--quiet"]);
    let kept = std::fs::read_dir(ws.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .any(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with("index.replaced-")
        });
    assert!(kept, "the replaced index is kept aside");
    assert_same("rows (--replace)", &before["rows"], &answers(&ws)["rows"]);

    // fsck --repair indexes records no row points at the same way.
    std::fs::remove_dir_all(ws.path().join("index")).unwrap();
    let out = ws.harvest_raw(&["fsck", "--repair", "--json", "--quiet"]);
    let repaired: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let captured: u64 = [&first, &second, &third]
        .iter()
        .map(|r| r["pages"].as_u64().unwrap() + r["answers"].as_u64().unwrap())
        .sum();
    assert_eq!(repaired["unindexed"].as_u64(), Some(captured), "{repaired}");
    assert_eq!(repaired["reindexed"].as_u64(), Some(captured), "{repaired}");
    let again = answers(&ws);
    assert_same("rows (fsck --repair)", &before["rows"], &again["rows"]);
    assert_same(
        "by story (fsck --repair)",
        &before["by story"],
        &again["by story"],
    );
}

/// The page attributes a crawl and an import must agree on.
fn attributes(rows: &[serde_json::Value]) -> BTreeMap<String, serde_json::Value> {
    rows.iter()
        .map(|r| {
            let keep = [
                "title",
                "topic",
                "published",
                "published_from",
                "media",
                "author",
                "comments",
                "participants",
                "keywords",
                "language",
                "digest",
                "charset",
                "source",
            ];
            let picked: serde_json::Map<String, serde_json::Value> = keep
                .iter()
                .map(|k| (k.to_string(), r[*k].clone()))
                .collect();
            (r["url"].as_str().unwrap().to_string(), picked.into())
        })
        .collect()
}

#[test]
fn import_of_a_wget_warc_answers_like_a_crawl_of_the_same_site() {
    let site = Site::demo();
    let seed = site.url(DEMO_ENTRY);
    let crawled = Workspace::new(&seed, "demo", None);
    crawled.train_demo_model();
    crawled.crawl();

    // A real wget mirror of the same site, written as a WARC.
    let scratch = tempfile::tempdir().unwrap();
    let warc_base = scratch.path().join("mirror");
    let status = Command::new("wget")
        .args(["--recursive", "--level=inf", "--no-verbose"])
        .arg("--warc-file")
        .arg(&warc_base)
        .arg("--directory-prefix")
        .arg(scratch.path().join("files"))
        .arg(&seed)
        .output()
        .expect("wget (Debian package wget) must be installed");
    // wget exits 8 when some link answered 404; the WARC is written anyway.
    assert!(
        matches!(status.status.code(), Some(0 | 8)),
        "wget: {}",
        String::from_utf8_lossy(&status.stderr)
    );
    let warc = scratch.path().join("mirror.warc.gz");
    assert!(warc.is_file());

    let imported = Workspace::new(&seed, "demo", None);
    imported.train_demo_model();
    let out = imported.harvest(&["import", "--json", warc.to_str().unwrap()]);
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        summary["skipped"]["request records"].as_u64().unwrap() > 300,
        "{summary}"
    );

    let everything = ["query", "--format", "jsonl", "--limit", "100000"];
    let a = attributes(&jsonl(&crawled.harvest(&everything)));
    let b = attributes(&jsonl(&imported.harvest(&everything)));
    let shared: Vec<&String> = a.keys().filter(|u| b.contains_key(*u)).collect();
    assert!(
        shared.len() * 100 >= a.len() * 95,
        "{} of {} crawled pages imported ({} imported)",
        shared.len(),
        a.len(),
        b.len()
    );
    let mut differ = Vec::new();
    for url in &shared {
        if a[*url] != b[*url] {
            differ.push(format!("{url}\n  crawl  {}\n  import {}", a[*url], b[*url]));
        }
    }
    assert!(
        differ.is_empty(),
        "{} pages differ:\n{}",
        differ.len(),
        differ.join("\n")
    );
    for url in shared.iter().step_by(25) {
        assert_eq!(
            crawled.harvest(&["get", url]).stdout,
            imported.harvest(&["get", url]).stdout,
            "{url}"
        );
    }
    let pages = b.len() as u64;
    assert_eq!(summary["ingest"]["new"].as_u64(), Some(pages), "{summary}");
    assert!(
        imported.harvest(&["fsck", "--quiet"]).status.success(),
        "the imported archive is consistent"
    );

    // The same file again: nothing added, no record, no row (issue 42): every capture
    // is one the archive holds already.
    let packs_before = packs_bytes(&imported.packs_dir());
    let cdxj_before = imported.harvest(&["export", "cdxj"]).stdout;
    let again: serde_json::Value = serde_json::from_slice(
        &imported
            .harvest(&["import", "--json", "--quiet", warc.to_str().unwrap()])
            .stdout,
    )
    .unwrap();
    assert_eq!(again["replayed"].as_u64(), Some(0), "{again}");
    assert_eq!(again["ingest"]["new"].as_u64(), Some(0), "{again}");
    assert!(
        again["skipped"]["captures already in the archive (same URL and WARC-Date)"].as_u64()
            >= Some(pages),
        "{again}"
    );
    assert_eq!(packs_bytes(&imported.packs_dir()), packs_before);
    assert_eq!(imported.harvest(&["export", "cdxj"]).stdout, cdxj_before);
    assert_eq!(jsonl(&imported.harvest(&everything)).len() as u64, pages);

    // Not a WARC: a clear error, nothing written.
    let bad = scratch.path().join("notes.txt");
    std::fs::write(&bad, "just text\n").unwrap();
    let empty = Workspace::new(&seed, "demo", None);
    let refused = empty.harvest_raw(&["import", bad.to_str().unwrap()]);
    assert!(!refused.status.success());
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("is neither a WARC nor an ARC file"),
        "{}",
        String::from_utf8_lossy(&refused.stderr)
    );
    let missing = empty.harvest_raw(&["import", "/nonexistent/x.warc.gz"]);
    assert!(!missing.status.success());
}

/// `harvest import` streams a file (issue 14: it read a file whole into
/// memory): the same captures gzipped per record, gzipped whole and
/// uncompressed import alike, and a revisit gets its payload from the
/// response it refers to earlier in the same file.
#[test]
fn import_reads_per_record_gzip_whole_gzip_and_plain_warcs_alike() {
    use chrono::TimeZone;
    use packer::warc::{self, ResponseInput, RevisitInput};
    use std::io::{Read, Write};

    let page = |n: u32| {
        format!(
            "<html><head><title>Page {n} of the import test</title></head><body>\
             <p>Some text {n} about reading archives in a stream.</p></body></html>"
        )
    };
    let headers = vec![(
        "Content-Type".to_string(),
        "text/html; charset=utf-8".to_string(),
    )];
    let date = chrono::Utc.with_ymd_and_hms(2024, 5, 1, 12, 0, 0).unwrap();
    let (first, second) = (page(1), page(2));
    let response = |url: &str, body: &str| {
        warc::encode_response(&ResponseInput {
            target_uri: url,
            date,
            ip_address: None,
            concurrent_to: None,
            status_line: "HTTP/1.1 200 OK",
            headers: &headers,
            payload: body.as_bytes(),
        })
    };
    let a = response("http://import.test/a.html", &first);
    let b = response("http://import.test/b.html", &second);
    let again = warc::encode_revisit(&RevisitInput {
        target_uri: "http://import.test/a.html",
        date: date + chrono::Duration::days(1),
        status_line: "HTTP/1.1 200 OK",
        headers: &headers,
        refers_to: &a.record_id,
        refers_to_target_uri: "http://import.test/a.html",
        refers_to_date: date,
        payload_digest: &warc::payload_digest(first.as_bytes()),
    });
    let mut per_record = Vec::new();
    let mut plain = Vec::new();
    for r in [&a, &b, &again] {
        let member = r.member(None);
        per_record.extend_from_slice(&member);
        flate2::read::GzDecoder::new(&member[..])
            .read_to_end(&mut plain)
            .unwrap();
    }
    let mut whole = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    whole.write_all(&plain).unwrap();
    let whole = whole.finish().unwrap();

    let scratch = tempfile::tempdir().unwrap();
    let mut answers = Vec::new();
    for (name, bytes) in [
        ("records.warc.gz", &per_record),
        ("whole.warc.gz", &whole),
        ("plain.warc", &plain),
    ] {
        let file = scratch.path().join(name);
        std::fs::write(&file, bytes).unwrap();
        let ws = Workspace::new("http://import.test/a.html", "imported", None);
        ws.train_demo_model();
        let out = ws.harvest(&["import", "--json", "--quiet", file.to_str().unwrap()]);
        let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(summary["records"].as_u64(), Some(3), "{name}: {summary}");
        assert_eq!(
            summary["ingest"]["new"].as_u64(),
            Some(2),
            "{name}: {summary}"
        );
        assert_eq!(
            summary["ingest"]["unchanged"].as_u64(),
            Some(1),
            "{name}: the revisit found its payload: {summary}"
        );
        let rows = jsonl(&ws.harvest(&["query", "--format", "jsonl", "--limit", "100"]));
        let titles: Vec<&str> = rows.iter().filter_map(|r| r["title"].as_str()).collect();
        assert_eq!(titles.len(), 2, "{name}: {rows:?}");
        let body = ws.harvest(&["get", "http://import.test/a.html"]).stdout;
        assert_eq!(String::from_utf8_lossy(&body), first, "{name}");
        let counts: Vec<_> = ["pages", "new", "unchanged", "duplicates", "failures"]
            .iter()
            .map(|k| summary["ingest"][k].clone())
            .collect();
        answers.push((counts, titles.join("|")));
    }
    assert!(
        answers.windows(2).all(|w| w[0] == w[1]),
        "the three encodings import alike: {answers:?}"
    );
}

/// Bytes of every file under `dir`.
fn packs_bytes(dir: &std::path::Path) -> u64 {
    let mut total = 0;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                total += e.metadata().map(|m| m.len()).unwrap_or(0);
            }
        }
    }
    total
}
