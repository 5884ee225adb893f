//! Bounded open packs (issue 15 item 5) through the binary: a crawl with
//! `[storage] max_open_packs = 1` closes a pack whenever another cluster's
//! page arrives, yet the archive is consistent and every page reads back.

mod util;

use std::collections::{BTreeMap, BTreeSet};

use harvest::demo::{DEMO_DEPTH, DEMO_ENTRY};
use harvest::site::{SiteFiles, DEMO_SITE};
use util::{jsonl, walk_packs, Site, Workspace};

/// Fetches of the crawl: enough for clusters to interleave, few enough to `get` each.
const PAGES: u64 = 60;

#[test]
fn a_crawl_with_one_open_pack_is_consistent_and_every_page_reads_back() {
    let site = Site::demo();
    let files = SiteFiles::from_tar_gz(DEMO_SITE).expect("demo site");
    let ws = Workspace::new(&site.url(DEMO_ENTRY), "lohelp", Some(DEMO_DEPTH));
    ws.configure(|raw| {
        raw.crawl.max_pages = Some(PAGES);
        raw.storage.max_open_packs = Some(1);
        // Small clusters: many (topic, day, cluster) families whose pages
        // interleave within a batch.
        raw.packing.kmeans.pages_per_cluster = 2;
    });
    let summary = ws.crawl();
    let pages = summary["pages"].as_u64().expect("pages");
    // (`max_pages` counts the fetch of a missing page's 404 too.)
    assert!(pages > PAGES / 2, "{summary}");

    // Every pack is a complete WARC file (walk_packs reads each record by
    // record and panics on a torn one) and its name is unique.
    let records = walk_packs(&ws);
    let packs = ws.packs();
    let file_names: BTreeSet<String> = packs
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().to_string())
        .collect();
    assert_eq!(file_names.len(), packs.len());
    // The cap was in force: some family went on in a later part after its
    // pack was closed for another one.
    let mut parts: BTreeMap<(String, chrono::NaiveDate, u32), Vec<u32>> = BTreeMap::new();
    for pack in &packs {
        let rel = pack.strip_prefix(ws.packs_dir()).unwrap().to_string_lossy();
        let name = packer::PackName::parse(&rel).unwrap_or_else(|| panic!("{rel}"));
        parts
            .entry((name.topic, name.date, name.cluster))
            .or_default()
            .push(name.part);
    }
    assert!(
        parts.len() >= 2 && parts.values().any(|p| p.len() >= 2),
        "{parts:?}"
    );

    // fsck: every indexed record verified, nothing unindexed.
    let rows = jsonl(&ws.harvest(&["query", "--format", "jsonl", "--limit", "100000"]));
    assert_eq!(rows.len() as u64, pages, "{summary}");
    let out = ws.harvest_raw(&["fsck", "--json", "--quiet"]);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("fsck json");
    assert_eq!(out.status.code(), Some(0), "{report}");
    assert_eq!(report["unindexed"], 0, "{report}");
    assert!(
        report["verified"].as_u64() >= Some(rows.len() as u64),
        "{report}"
    );

    // Every page is read back byte for byte, and was packed exactly once.
    let base = site.url("");
    for row in &rows {
        let url = row["url"].as_str().expect("url");
        let path = url.strip_prefix(&base).expect("a page of the site");
        let out = ws.harvest(&["get", url]);
        assert_eq!(
            out.stdout.as_slice(),
            files.get(path).expect("served file"),
            "get {url}"
        );
        let packed = records
            .iter()
            .filter(|r| r.kind == "response" && r.uri == url)
            .count();
        assert_eq!(packed, 1, "{url}");
    }
}
