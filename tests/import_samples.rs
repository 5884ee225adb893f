//! `harvest import` on other people's files (issue 42): every sample WARC and ARC file that
//! pywb ships (pywb 2.10.0, pinned, `deploy/cache/pywb-venv/sample_archive/warcs`, put
//! there by `deploy/data/install-test-peers.sh`) is read record for record as warcio reads
//! it, and damaged copies the test makes (cut short, bytes overwritten, a record cut out)
//! lose only what is damaged. Per file the test prints the records harvest read, imported,
//! kept raw and read past, beside warcio's count of the same file.

mod util;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use util::{jsonl, Workspace};

fn samples() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("deploy/cache/pywb-venv/sample_archive/warcs")
}

fn python() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("deploy/cache/pywb-venv/bin/python")
}

/// warcio's records of `file` (ARC read as WARC), or its error.
fn warcio_count(file: &Path) -> Result<u64, String> {
    let script = r#"
import sys
from warcio.archiveiterator import ArchiveIterator
n = 0
with open(sys.argv[1], 'rb') as f:
    for r in ArchiveIterator(f, arc2warc=True):
        n += 1
print(n)
"#;
    let out = Command::new(python())
        .args(["-c", script])
        .arg(file)
        .output()
        .expect("run warcio (deploy/data/install-test-peers.sh makes deploy/cache/pywb-venv)");
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout)
            .trim()
            .parse()
            .expect("count"))
    } else {
        let err = String::from_utf8_lossy(&out.stderr);
        Err(err.lines().last().unwrap_or_default().to_string())
    }
}

fn workspace() -> Workspace {
    Workspace::new("http://127.0.0.1:9/", "samples", None)
}

/// `import --json --quiet FILES` in `ws`: exit code, summary (when it succeeded), stderr.
fn import(ws: &Workspace, files: &[&Path]) -> (Option<i32>, serde_json::Value, String) {
    let mut args = vec!["import", "--json"];
    let names: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
    args.extend(names.iter().map(String::as_str));
    let out = ws.harvest_raw(&args);
    let summary = serde_json::from_slice(&out.stdout).unwrap_or(serde_json::Value::Null);
    (
        out.status.code(),
        summary,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The skip reason of a capture the archive or the import holds already.
const SKIP_SAME_CAPTURE: &str = "captures already in the archive (same URL and WARC-Date)";

fn n(v: &serde_json::Value, key: &str) -> u64 {
    v[key].as_u64().unwrap_or(0)
}

#[test]
fn every_sample_of_pywb_reads_as_warcio_reads_it() {
    let mut files: Vec<PathBuf> = std::fs::read_dir(samples())
        .expect("pywb's sample WARCs: run deploy/data/install-test-peers.sh")
        .flatten()
        .map(|e| e.path())
        .collect();
    files.sort();
    assert!(files.len() >= 15, "{files:?}");
    eprintln!(
        "{:<38} {:>7} {:>8} {:>8} {:>8} {:>8}  warcio",
        "file", "read", "imported", "kept raw", "damaged", "exit"
    );
    let mut rows = BTreeMap::new();
    for file in &files {
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        let ws = workspace();
        let (code, summary, err) = import(&ws, &[file]);
        let warcio = warcio_count(file);
        eprintln!(
            "{name:<38} {:>7} {:>8} {:>8} {:>8} {:>8}  {}",
            n(&summary, "records"),
            n(&summary, "replayed"),
            n(&summary, "kept_raw"),
            n(&summary, "damaged_regions"),
            code.unwrap_or(-1),
            match &warcio {
                Ok(c) => c.to_string(),
                Err(e) => e.clone(),
            }
        );
        rows.insert(name, (code, summary, err, warcio));
    }
    for (name, (code, summary, err, warcio)) in &rows {
        if name == "bad.arc" {
            // Made bad on purpose (record lengths "-1" and "abc"): what reads is read, the
            // rest is named, and the file is reported as damaged.
            assert_eq!(*code, Some(1), "{name}: {err}");
            assert!(err.contains("bad.arc") && err.contains("abc"), "{err}");
            continue;
        }
        // Every other file imports whole, with warcio's count of records.
        assert_eq!(*code, Some(0), "{name}: {err}");
        if let Ok(count) = warcio {
            assert_eq!(n(summary, "records"), *count, "{name}: {summary}");
        }
    }
    // Files other tools wrote in ways harvest refused before: ARC, CR CR LF line ends, a
    // body called chunked that is not, blank lines between records.
    let imported = |name: &str| n(&rows[name].1, "replayed");
    for name in ["example.arc", "example.arc.gz", "missing-status-text.warc"] {
        assert!(imported(name) >= 1, "{name}: {}", rows[name].1);
    }
    let iana = &rows["iana.warc.gz"].1;
    assert_eq!(n(iana, "replayed") + 172, n(iana, "records"), "{iana}");
    assert!(n(iana, "kept_raw") >= 10, "{iana}");
    assert_eq!(n(&rows["example.warc"].1, "damaged_regions"), 1);
    assert_eq!(n(&rows["example.warc"].1, "replayed"), 3);
    // Revisits without an HTTP head of their own take their original's. The file holds its
    // response and its revisit twice each: the copies are the same captures (same URL, same
    // second), taken once.
    assert_eq!(
        n(&rows["example-extra.warc"].1["skipped"], SKIP_SAME_CAPTURE),
        2,
        "{}",
        rows["example-extra.warc"].1
    );
    assert_eq!(
        imported("example-extra.warc"),
        2,
        "{}",
        rows["example-extra.warc"].1
    );
}

#[test]
fn kept_raw_bodies_arc_pages_and_revisits_of_other_files_are_in_the_archive() {
    let ws = workspace();
    let (code, summary, err) = import(&ws, &[&samples().join("iana.warc.gz")]);
    assert_eq!(code, Some(0), "{err}");
    assert!(n(&summary, "kept_raw") > 0, "{summary}");
    // The style sheet its headers call chunked comes back as it was sent.
    let css = ws.harvest(&["get", "http://www.iana.org/_css/2013.1/print.css"]);
    assert!(
        css.stdout
            .starts_with(b"/* IANA Style Sheet for Print display */"),
        "{}",
        String::from_utf8_lossy(&css.stdout[..css.stdout.len().min(200)])
    );
    // URL-agnostic revisits in another file: resolved from the archive by digest.
    let (code, dupes, err) = import(&ws, &[&samples().join("dupes.warc.gz")]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        dupes["skipped"]
            .as_object()
            .is_some_and(|s| !s.keys().any(|k| k.contains("revisit"))),
        "{dupes}"
    );
    assert_eq!(n(&dupes, "replayed"), 12, "{dupes}");
    let ws = workspace();
    for f in [
        "example-url-agnostic-orig.warc.gz",
        "example-url-agnostic-revisit.warc.gz",
    ] {
        let (code, summary, err) = import(&ws, &[&samples().join(f)]);
        assert_eq!(code, Some(0), "{err}");
        assert_eq!(n(&summary, "replayed"), 1, "{f}: {summary}");
    }
    // An ARC file's page is a page of the archive.
    let ws = workspace();
    let (code, _, err) = import(&ws, &[&samples().join("example.arc.gz")]);
    assert_eq!(code, Some(0), "{err}");
    let pages = jsonl(&ws.harvest(&["query", "--format", "jsonl"]));
    assert!(
        pages.iter().any(|p| p["url"] == "http://example.com/"),
        "{pages:?}"
    );
    assert!(
        pages.iter().any(|p| p["title"] == "Example Domain"),
        "{pages:?}"
    );
}

/// The member boundaries of a gzip-per-record WARC.
fn members(bytes: &[u8]) -> Vec<(usize, usize)> {
    packer::warc::RecordReader::new(bytes)
        .map(|r| {
            let (offset, length, _) = r.expect("record");
            (offset as usize, (offset + length) as usize)
        })
        .collect()
}

#[test]
fn damaged_copies_lose_only_the_damaged_records() {
    let original = std::fs::read(samples().join("iana.warc.gz")).expect("iana.warc.gz");
    let bounds = members(&original);
    let total = bounds.len() as u64;
    assert_eq!(total, 343);
    let dir = tempfile::tempdir().expect("tempdir");
    let write = |name: &str, bytes: &[u8]| -> PathBuf {
        let p = dir.path().join(name);
        std::fs::write(&p, bytes).expect("write copy");
        p
    };
    let (start, end) = bounds[100];

    // Bytes overwritten inside a record's member: that record is lost, the file goes on.
    let mut flipped = original.clone();
    for b in &mut flipped[start + 20..(start + 84).min(end)] {
        *b ^= 0x5a;
    }
    let file = write("flipped.warc.gz", &flipped);
    let (code, summary, err) = import(&workspace(), &[&file]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(n(&summary, "records"), total - 1, "{summary}");
    assert_eq!(n(&summary, "damaged_regions"), 1, "{summary}");
    eprintln!(
        "flipped.warc.gz: harvest read {} of {total}, warcio: {:?}",
        n(&summary, "records"),
        warcio_count(&file)
    );
    let ws = workspace();
    let out = ws.harvest_raw(&["import", file.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("flipped.warc.gz") && err.contains(&format!("bytes {start}..{end}")),
        "the region is named with its file and offsets: {err}"
    );

    // A record cut out whole: every other record reads.
    let mut cut = original[..start].to_vec();
    cut.extend_from_slice(&original[end..]);
    let file = write("cut.warc.gz", &cut);
    let (code, summary, err) = import(&workspace(), &[&file]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(n(&summary, "records"), total - 1, "{summary}");
    assert_eq!(n(&summary, "damaged_regions"), 0, "{summary}");
    assert_eq!(Ok(total - 1), warcio_count(&file));

    // Cut short inside a record: the records before it, then an error naming where.
    let file = write("short.warc.gz", &original[..start + 30]);
    let ws = workspace();
    let out = ws.harvest_raw(&["import", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("short.warc.gz") && err.contains(&format!("stops at byte {start}")),
        "{err}"
    );
    let pages = jsonl(&ws.harvest(&["query", "--format", "jsonl", "--limit", "1000"]));
    assert!(!pages.is_empty());

    // A plain WARC whose record header is damaged: read past to the next record.
    let plain = std::fs::read(samples().join("example.warc")).expect("example.warc");
    let second = plain
        .windows(8)
        .enumerate()
        .skip(1)
        .find(|(_, w)| w == b"WARC/1.0")
        .map(|(i, _)| i)
        .expect("a second record");
    let mut broken = plain.clone();
    broken[second..second + 4].copy_from_slice(b"XXXX");
    let file = write("broken.warc", &broken);
    let (code, summary, err) = import(&workspace(), &[&file]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(n(&summary, "records"), 5, "{summary}");
    assert!(n(&summary, "damaged_regions") >= 1, "{summary}");
}
