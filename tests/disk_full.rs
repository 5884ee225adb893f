//! Issue 40 item 3: out of space is a crash like any other. A crawl whose
//! pack disk or index disk fills stops with an error that names the
//! condition and the path; once there is room again, the next `harvest
//! crawl` takes the run up as it takes up one killed with -9: it indexes
//! what the failed run packed, fetches nothing already stored, and leaves
//! an archive `harvest fsck` finds clean without `--repair`.
//!
//! Regression: the next run started over (the failed run's queue cleared),
//! fetched and stored again the pages packed before the failure, left the
//! torn pack for `fsck --repair`, and a full index disk ended with
//! "FjallError: Poisoned".
//!
//! The tests mount small tmpfs file systems and need root (as in CI).

mod util;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Output;

use harvest::demo::DEMO_ENTRY;
use util::{count_by, jsonl, Mount, Site, Workspace};

/// What the packs below `dir` hold: the target URI of every `response`
/// record, of every `revisit` record, and the packs that do not read to
/// their end (torn).
#[derive(Debug, Default)]
struct Packed {
    responses: Vec<String>,
    revisits: Vec<String>,
    torn: Vec<String>,
}

fn packed(dir: &Path) -> Packed {
    let mut out = Packed::default();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
                continue;
            }
            if !p.to_string_lossy().ends_with(".warc.gz") {
                continue;
            }
            let bytes = std::fs::read(&p).expect("read pack");
            for item in packer::warc::RecordIter::new(&bytes) {
                let Ok((_, _, record)) = item else {
                    out.torn.push(p.display().to_string());
                    break;
                };
                let uri = record.target_uri().unwrap_or_default().to_string();
                match record.record_type().unwrap_or_default() {
                    "response" => out.responses.push(uri),
                    "revisit" => out.revisits.push(uri),
                    _ => {}
                }
            }
        }
    }
    out
}

/// The URIs stored more than once (`count > 1`).
fn twice(uris: &[String]) -> BTreeMap<String, u64> {
    count_by(uris.iter().cloned())
        .into_iter()
        .filter(|(_, n)| *n > 1)
        .collect()
}

/// `harvest fsck --json` without `--repair`: it must exit 0 and find
/// nothing wrong.
fn assert_fsck_clean(ws: &Workspace) {
    let out = ws.harvest_raw(&["fsck", "--json", "--quiet"]);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "fsck prints JSON ({e}): {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    for field in ["missing", "mismatched", "torn", "unindexed"] {
        assert_eq!(report[field], 0, "{field} without --repair: {report}");
    }
    assert!(
        out.status.success(),
        "fsck must be clean without --repair: {report}"
    );
}

/// The crawl run on a disk that fills: it must fail; its error is returned.
fn failed_crawl(ws: &Workspace, what: &str) -> String {
    let out: Output = ws.harvest_raw(&["crawl", "--quiet", "--json"]);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        !out.status.success(),
        "the crawl must fail on a full {what}: {err}"
    );
    err
}

/// The crawl run after room was made: it must take the stopped run up (as
/// `failed`, or as `interrupted` when the full disk also refused the run's
/// end record) and succeed; its report is returned.
fn taken_up_crawl(ws: &Workspace, was: &[&str]) -> serde_json::Value {
    let out = ws.harvest_raw(&["crawl", "--quiet", "--json"]);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "the crawl after making room: {err}");
    assert!(
        was.iter()
            .any(|w| err.contains(&format!("taking up the {w} run"))),
        "the next run takes the stopped one up: {err}"
    );
    serde_json::from_slice(&out.stdout).expect("crawl --json prints JSON")
}

/// The pages the index lists, each once.
fn indexed_urls(ws: &Workspace) -> Vec<String> {
    let rows = jsonl(&ws.harvest(&["query", "--format", "jsonl", "--limit", "100000"]));
    let urls: Vec<String> = rows
        .iter()
        .map(|r| r["url"].as_str().expect("url").to_string())
        .collect();
    assert!(twice(&urls).is_empty(), "a URL indexed twice: {urls:?}");
    urls
}

/// After the failure and the run that took it up: every URL stored once,
/// the archive consistent without a repair, every packed page indexed.
fn assert_stored_once_and_clean(ws: &Workspace, packs: &Path) {
    let p = packed(packs);
    assert!(p.torn.is_empty(), "torn packs: {:?}", p.torn);
    assert!(
        twice(&p.responses).is_empty(),
        "pages stored twice (response records per URL): {:?}",
        twice(&p.responses)
    );
    let mut captures = p.responses.clone();
    captures.extend(p.revisits.iter().cloned());
    assert!(
        twice(&captures).is_empty(),
        "pages fetched again after the failure (captures per URL): {:?}",
        twice(&captures)
    );
    assert_fsck_clean(ws);
    let urls = indexed_urls(ws);
    assert!(
        urls.len() > 100,
        "the run taken up completed the crawl: {} pages",
        urls.len()
    );
}

#[test]
fn a_full_pack_disk_is_taken_up_by_the_next_crawl() {
    let site = Site::demo();
    let ws = Workspace::new(&site.url(DEMO_ENTRY), "demo", None);
    let mnt = tempfile::tempdir().expect("tempdir");
    let small = mnt.path().join("packs");
    let fs = Mount::tmpfs(&small, "1m");
    ws.configure(|raw| {
        raw.storage.packs = Some(small.to_string_lossy().into_owned());
        // Many small batches: the disk fills inside one, after others.
        raw.packing.batch_pages = Some(8);
    });
    let err = failed_crawl(&ws, "pack disk");
    let root = small.canonicalize().expect("mount point");
    let named = err.lines().any(|l| {
        l.contains("no space left on device")
            && l.contains(&format!("writing pack {}/", root.display()))
    });
    assert!(
        named,
        "the error names the condition and the pack file: {err}"
    );
    let before = indexed_urls(&ws);
    assert!(
        !before.is_empty(),
        "some batches were stored before the disk filled"
    );
    let p = packed(&small);
    assert!(
        p.torn.is_empty(),
        "a failed write leaves no torn record: {:?}",
        p.torn
    );

    fs.resize("64m");
    taken_up_crawl(&ws, &["failed"]);
    assert_stored_once_and_clean(&ws, &small);
    let after = indexed_urls(&ws);
    for u in &before {
        assert!(after.contains(u), "{u} was lost");
    }
}

#[test]
fn a_full_index_disk_is_taken_up_by_the_next_crawl() {
    let site = Site::demo();
    let ws = Workspace::new(&site.url(DEMO_ENTRY), "demo", None);
    let mnt = tempfile::tempdir().expect("tempdir");
    let small = mnt.path().join("index");
    let _fs = Mount::tmpfs(&small, "64m");
    // A filler leaves the index about 1 MiB; deleting it makes room.
    let filler = small.join("filler");
    std::fs::write(&filler, vec![7u8; 63 << 20]).expect("write the filler");
    let index = small.join("db");
    ws.configure(|raw| {
        raw.index.path = Some(index.clone());
        raw.packing.batch_pages = Some(8);
    });
    let err = failed_crawl(&ws, "index disk");
    let named = err.lines().any(|l| {
        l.contains("no space left on device")
            && l.contains(&format!("index folder {}", index.display()))
    });
    assert!(
        named,
        "the error names the condition and the index folder: {err}"
    );

    std::fs::remove_file(&filler).expect("remove the filler");
    // The run's end cannot be recorded on a full index (fjall takes no write
    // after a failed one): it is taken up as one killed is.
    taken_up_crawl(&ws, &["interrupted", "failed"]);
    assert_stored_once_and_clean(&ws, &ws.packs_dir());
}
