//! Issue 42 item 4: `harvest compact` merges a (topic, month)'s small packs into month packs
//! and moves every row with them. Every record stays (byte for byte, once), every row reads
//! its record at its new place (fsck), pages read back the same, export and reindex read the
//! month packs; and a compaction killed at each of its steps is finished by `fsck` and by the
//! next `compact`, with nothing lost and nothing twice.

mod util;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Output;

use harvest::demo::{DEMO_DEPTH, DEMO_ENTRY};
use util::{jsonl, Site, Workspace};

/// Every record of every pack (any kind): record id -> (count, member bytes' hash).
fn records(ws: &Workspace) -> BTreeMap<String, (u32, u64)> {
    let mut out: BTreeMap<String, (u32, u64)> = BTreeMap::new();
    for pack in ws.packs() {
        let bytes = std::fs::read(&pack).expect("read pack");
        for item in packer::warc::RecordIter::new(&bytes) {
            let (offset, length, rec) = item.unwrap_or_else(|e| panic!("{}: {e}", pack.display()));
            let member = &bytes[offset as usize..(offset + length) as usize];
            let id = rec.record_id().expect("record id").to_string();
            let slot = out.entry(id).or_default();
            slot.0 += 1;
            slot.1 = xxhash(member);
        }
    }
    out
}

/// FNV-1a over the bytes (enough to tell two members apart).
fn xxhash(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// Page rows: URL -> (pack path, offset).
fn page_rows(ws: &Workspace) -> BTreeMap<String, (String, u64)> {
    jsonl(&ws.harvest(&["query", "--format", "jsonl", "--limit", "1000000"]))
        .into_iter()
        .map(|row| {
            (
                row["url"].as_str().expect("url").to_string(),
                (
                    row["pack_path"].as_str().expect("pack_path").to_string(),
                    row["offset"].as_u64().expect("offset"),
                ),
            )
        })
        .collect()
}

fn count(report: &serde_json::Value, key: &str) -> u64 {
    report[key]
        .as_u64()
        .unwrap_or_else(|| panic!("no {key} in {report}"))
}

fn compact_json(ws: &Workspace, extra: &[&str]) -> serde_json::Value {
    let mut args = vec![
        "compact",
        "--json",
        "--quiet",
        "--target-bytes",
        "100000000",
    ];
    args.extend_from_slice(extra);
    let out = ws.harvest(&args);
    serde_json::from_slice(&out.stdout).expect("compact --json prints JSON")
}

/// Files under the pack store's `_compact` folder.
fn compact_files(ws: &Workspace) -> Vec<String> {
    match std::fs::read_dir(ws.packs_dir().join("_compact")) {
        Ok(rd) => rd
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect(),
        Err(_) => Vec::new(),
    }
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for e in std::fs::read_dir(from).expect("read_dir").flatten() {
        let target = to.join(e.file_name());
        if e.file_type().expect("file type").is_dir() {
            copy_tree(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), &target).expect("copy");
        }
    }
}

/// A copy of the workspace's archive in a new folder (its config pointed at it).
fn clone_workspace(ws: &Workspace) -> Workspace {
    let dir = tempfile::tempdir().expect("tempdir");
    copy_tree(ws.path(), dir.path());
    let config = dir.path().join("harvest.toml");
    let copy = Workspace { dir, config };
    let data = copy.path().to_path_buf();
    copy.configure(|raw| raw.data_dir = Some(data));
    copy
}

/// A crawl of the demo site in 64 KiB packs, crawled twice (revisits of unchanged pages).
fn crawled(site: &Site) -> Workspace {
    let ws = Workspace::new(&site.url(DEMO_ENTRY), "demo", Some(DEMO_DEPTH));
    ws.configure(|raw| raw.storage.max_pack_bytes = Some(64 * 1024));
    ws.crawl();
    ws.crawl();
    ws
}

fn killed(out: &Output) -> bool {
    use std::os::unix::process::ExitStatusExt;
    out.status.signal() == Some(9)
}

#[test]
fn compact_merges_small_packs_and_every_row_follows() {
    let site = Site::demo();
    let ws = crawled(&site);
    let (code, before) = ws.fsck_json(false);
    assert_eq!(code, Some(0), "{before}");
    let records_before = records(&ws);
    let packs_before = ws.packs().len();
    let rows_before = page_rows(&ws);
    let sample: Vec<&String> = rows_before.keys().step_by(7).collect();
    let bodies_before: Vec<Vec<u8>> = sample
        .iter()
        .map(|u| ws.harvest(&["get", u]).stdout)
        .collect();
    let cdxj_before = ws.harvest(&["export", "cdxj"]).stdout;

    let dry = compact_json(&ws, &["--dry-run"]);
    assert_eq!(ws.packs().len(), packs_before, "a dry run changes nothing");
    assert!(count(&dry, "merged") > 1, "{dry}");

    let report = compact_json(&ws, &[]);
    eprintln!("{}", serde_json::to_string_pretty(&report).unwrap());
    assert_eq!(count(&report, "merged"), count(&dry, "merged"), "{report}");
    assert_eq!(
        count(&report, "written"),
        count(&dry, "written"),
        "{report}"
    );
    assert_eq!(
        report["after"], dry["after"],
        "the dry run foretold the figures"
    );
    let packs_after = ws.packs().len() as u64;
    assert_eq!(
        packs_after,
        packs_before as u64 - count(&report, "merged") + count(&report, "written")
    );
    assert!(packs_after < packs_before as u64 / 4, "{report}");
    assert_eq!(count(&report["before"], "packs"), packs_before as u64);
    assert_eq!(count(&report["after"], "packs"), packs_after);
    assert!(compact_files(&ws).is_empty(), "{:?}", compact_files(&ws));
    for name in report["new_packs"].as_array().expect("new_packs") {
        let name = name.as_str().unwrap();
        assert!(packer::MonthPackName::parse(name).is_some(), "{name}");
        assert!(ws.packs_dir().join(name).is_file(), "{name}");
    }

    // Every record is there once, byte for byte.
    assert_eq!(records(&ws), records_before);
    // Every row points into the new packs and reads its record (fsck checks URL, record id
    // and digest at each row's place).
    let (code, after) = ws.fsck_json(false);
    assert_eq!(code, Some(0), "{after}");
    for key in ["pages", "captures", "verified", "unindexed", "records"] {
        assert_eq!(count(&after, key), count(&before, key), "{key}: {after}");
    }
    assert_eq!(count(&after, "packs"), packs_after);
    let rows_after = page_rows(&ws);
    assert_eq!(
        rows_after.keys().collect::<Vec<_>>(),
        rows_before.keys().collect::<Vec<_>>()
    );
    let moved = rows_after
        .iter()
        .filter(|(u, loc)| rows_before[*u] != **loc)
        .count();
    assert!(
        moved > 0 && moved as u64 == count(&report["rows"], "pages"),
        "{report}"
    );
    for (url, body) in sample.iter().zip(&bodies_before) {
        assert_eq!(&ws.harvest(&["get", url]).stdout, body, "{url}");
    }
    // The export lists the same captures (their places changed).
    let cdxj_after = ws.harvest(&["export", "cdxj"]).stdout;
    assert_eq!(
        cdxj_after.iter().filter(|&&b| b == b'\n').count(),
        cdxj_before.iter().filter(|&&b| b == b'\n').count()
    );
    // Nothing left to merge.
    let again = compact_json(&ws, &[]);
    assert_eq!(count(&again, "merged"), 0, "{again}");
    // reindex reads the month packs: the same pages.
    ws.harvest(&["reindex", "--replace", "--quiet"]);
    assert_eq!(page_rows(&ws), rows_after);
    let (code, reindexed) = ws.fsck_json(false);
    assert_eq!(code, Some(0), "{reindexed}");
    assert_eq!(count(&reindexed, "pages"), count(&before, "pages"));

    // Damage in a month pack costs the damaged record, not the packs after it in the file:
    // fsck reads on into the next original pack (its warcinfo is a name of the month; a
    // plain resync would take it for a WARC file inside a record and cut the rest as torn).
    let month_pack = ws
        .packs()
        .into_iter()
        .find(|p| packer::MonthPackName::parse(&p.to_string_lossy()).is_some())
        .expect("a month pack");
    let mut bytes = std::fs::read(&month_pack).expect("read");
    // The last record of the first original pack: the next record to read is the second
    // original pack's warcinfo.
    let records_in: Vec<(u64, u64, bool)> = packer::warc::RecordIter::new(&bytes)
        .map(|r| r.expect("readable"))
        .map(|(o, l, rec)| (o, l, rec.record_type() == Some("warcinfo")))
        .collect();
    let second = records_in
        .iter()
        .skip(1)
        .position(|r| r.2)
        .expect("a second original pack")
        + 1;
    let (at, len, _) = records_in[second - 1];
    let mid = (at + len / 2) as usize;
    for b in &mut bytes[mid..mid + 8] {
        *b ^= 0x5a;
    }
    std::fs::write(&month_pack, &bytes).expect("write");
    let (code, damaged) = ws.fsck_json(false);
    assert_eq!(code, Some(1), "{damaged}");
    assert_eq!(count(&damaged, "torn"), 0, "{damaged}");
    assert_eq!(count(&damaged, "damaged"), 1, "{damaged}");
    assert_eq!(
        count(&damaged, "records"),
        count(&reindexed, "records") - 1,
        "{damaged}"
    );
    assert!(
        count(&damaged, "verified") + 1 >= count(&reindexed, "verified"),
        "{damaged}"
    );
}

#[test]
fn a_compaction_killed_at_any_step_is_finished_by_fsck_and_the_next_compact() {
    let site = Site::demo();
    let base = crawled(&site);
    let (code, before) = base.fsck_json(false);
    assert_eq!(code, Some(0), "{before}");
    let records_before = records(&base);
    let rows_before = page_rows(&base);
    let planned = compact_json(&base, &["--dry-run"]);
    for step in ["written", "journaled", "renamed", "rows", "deleted"] {
        let ws = clone_workspace(&base);
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_harvest"))
            .arg("-c")
            .arg(&ws.config)
            .args(["compact", "--quiet", "--target-bytes", "100000000"])
            .env("HARVEST_CRASH_COMPACT", step)
            .output()
            .expect("run harvest");
        assert!(
            killed(&out),
            "{step}: {:?} {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        let left = compact_files(&ws);
        let journal = left.iter().any(|f| f.ends_with(".json"));
        assert_eq!(journal, step != "written", "{step}: {left:?}");
        let part = left.iter().any(|f| f.ends_with(".part"));
        assert_eq!(
            part,
            step == "written" || step == "journaled",
            "{step}: {left:?}"
        );

        // fsck finishes what the journal names, then finds the archive as it was.
        let (code, report) = ws.fsck_json(false);
        assert_eq!(code, Some(0), "{step}: {report}");
        assert_eq!(
            count(&report, "compactions_finished"),
            u64::from(journal),
            "{step}: {report}"
        );
        for key in ["pages", "captures", "verified", "unindexed", "records"] {
            assert_eq!(
                count(&report, key),
                count(&before, key),
                "{step} {key}: {report}"
            );
        }
        assert!(
            compact_files(&ws).iter().all(|f| f.ends_with(".part")),
            "{step}: {:?}",
            compact_files(&ws)
        );
        assert_eq!(records(&ws), records_before, "{step}: every record once");

        // The next compact removes a part no journal names and merges the rest.
        let next = compact_json(&ws, &[]);
        assert_eq!(
            count(&next, "parts_removed"),
            u64::from(step == "written"),
            "{step}: {next}"
        );
        assert!(compact_files(&ws).is_empty(), "{step}");
        let (code, report) = ws.fsck_json(false);
        assert_eq!(code, Some(0), "{step}: {report}");
        for key in ["pages", "captures", "verified", "unindexed", "records"] {
            assert_eq!(
                count(&report, key),
                count(&before, key),
                "{step} {key}: {report}"
            );
        }
        assert_eq!(records(&ws), records_before, "{step}: every record once");
        let rows = page_rows(&ws);
        assert_eq!(
            rows.keys().collect::<Vec<_>>(),
            rows_before.keys().collect::<Vec<_>>(),
            "{step}"
        );
        assert_eq!(
            count(&report, "packs"),
            count(&planned["after"], "packs"),
            "{step}: the packs an uninterrupted compaction makes"
        );
    }
}

/// With `harvest serve` owning the embedded store (the continuous archive), `harvest compact`
/// runs inside the server as other archive commands do: same report, the archive consistent
/// and its pages read back through the server.
#[test]
fn compact_runs_inside_a_running_server() {
    let site = Site::demo();
    let ws = crawled(&site);
    let packs_before = ws.packs().len();
    let dry = compact_json(&ws, &["--dry-run"]);
    let pages = jsonl(&ws.harvest(&["query", "--format", "jsonl", "--limit", "5"]));
    assert_eq!(pages.len(), 5);
    let bodies: Vec<Vec<u8>> = pages
        .iter()
        .map(|p| ws.harvest(&["get", p["url"].as_str().expect("url")]).stdout)
        .collect();
    let (server, base) = util::start_serve(&ws.config, &[]);
    let _server = util::KillOnDrop(server);
    assert!(ws.path().join("serve.json").exists(), "serve.json");
    let report = compact_json(&ws, &[]);
    assert_eq!(report["after"], dry["after"], "{report}");
    assert!(count(&report, "merged") > 1, "{report}");
    assert!(ws.packs().len() < packs_before / 4, "{report}");
    let (code, fsck) = ws.fsck_json(false);
    assert_eq!(code, Some(0), "{fsck}");
    // The server reads the pages at their new places.
    for (p, before) in pages.iter().zip(&bodies) {
        let id = p["id"].as_str().expect("id");
        let raw = util::http_get(&base, &format!("/api/pages/{id}/raw"));
        assert!(
            raw.as_bytes() == before.as_slice(),
            "{id}: other bytes after compaction"
        );
    }
}

/// A pack someone is appending to (a crawl of the day on another machine holds it through
/// `PackStore::append`) is left out of a compaction, and kept with every record; once it is
/// let go the next compaction takes it.
#[test]
fn a_pack_being_appended_to_is_left_out_of_the_compaction() {
    use packer::PackStore;
    let site = Site::demo();
    let ws = crawled(&site);
    let store = packer::LocalPackStore::open(ws.packs_dir()).expect("pack store");
    let held = ws.packs()[0]
        .strip_prefix(ws.packs_dir())
        .expect("below the store")
        .to_string_lossy()
        .into_owned();
    let claim = store.append(&held).expect("append claim");
    let records_before = records(&ws);
    let report = compact_json(&ws, &[]);
    assert_eq!(count(&report, "skipped_running"), 1, "{report}");
    assert!(count(&report, "merged") >= 2, "{report}");
    assert!(ws.packs_dir().join(&held).exists(), "the held pack stays");
    claim.close().expect("release");
    assert_eq!(records(&ws), records_before, "every record kept, once");
    let (code, check) = ws.fsck_json(false);
    assert_eq!(code, Some(0), "{check}");

    let report = compact_json(&ws, &[]);
    assert_eq!(count(&report, "skipped_running"), 0, "{report}");
    assert!(!ws.packs_dir().join(&held).exists(), "taken once let go");
    assert_eq!(records(&ws), records_before);
}
