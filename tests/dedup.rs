//! Issue 12: `harvest dedup` over a crawled archive.
//!
//! Real articles (NewsArticles.csv) published by one site and reposted by
//! two others (`bench/src/reposts.rs` templates), each site its own source
//! (URL prefixes); two of the first site's pages copied byte for byte to a
//! second host (source `mirror`); the first site crawled a second time,
//! unchanged. The sites are crawled one after the other, so the first site
//! archives every story first. The report's exact groups, bytes saved,
//! story groups and per-source figures are checked against what the sites
//! were built from.

// The benchmarks' repost fixture generator (`harvest-bench`), compiled into
// this test as source: its pages are this crate's `harvest::site::SiteFiles`.
#[path = "../bench/src/reposts.rs"]
#[allow(dead_code)]
mod reposts;

mod util;

use std::collections::BTreeMap;
use std::path::PathBuf;

use harvest::config::RawSource;
use harvest::site::SiteFiles;
use indexer::neardup::DEFAULT_DISTANCE;
use reposts::Story;
use serde_json::Value;
use util::{Site, Workspace};

fn news_csv() -> PathBuf {
    let f = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("deploy/cache/NewsArticles.csv");
    assert!(
        f.exists(),
        "{} is missing: run indexer/tests/fetch-news.sh",
        f.display()
    );
    f
}

const SITES: [&str; 3] = ["site0", "site1", "site2"];

/// SimHash of a page as the crawler extracts it (what ingest fingerprints).
fn fingerprint(html: &[u8], url: &str) -> Option<u64> {
    let url = url::Url::parse(url).expect("url");
    let text = String::from_utf8_lossy(html);
    harvest::ingest::fingerprint(&extract::extract(&text, &url))
}

#[test]
fn dedup_report_counts_exact_and_near_duplicates_per_source() {
    let en = reposts::english_stories(&news_csv(), 150).expect("english stories");
    let stories: Vec<Story> = en.into_iter().step_by(211).take(6).collect();
    let n = stories.len() as u64;
    let (files, paths) = reposts::repost_site(&stories, 3, 12);
    // paths: story -> [original, repost, repost], on the sites in template order.
    let first_paths: Vec<&Vec<String>> = paths.values().collect();
    let host_of = |p: &str| p.split('/').nth(1).expect("host folder").to_owned();
    let hosts: Vec<String> = first_paths[0].iter().map(|p| host_of(p)).collect();
    assert_eq!(hosts.len(), 3);

    // Two of site0's story pages, byte for byte, on another host.
    let mirrored: Vec<String> = first_paths.iter().take(2).map(|p| p[0].clone()).collect();
    let mirror_files: Vec<(String, Vec<u8>)> = mirrored
        .iter()
        .enumerate()
        .map(|(i, p)| {
            (
                format!("/copy/{i}.html"),
                files.get(p).expect("mirrored page").to_vec(),
            )
        })
        .collect();
    let site_bytes = |p: &str| files.get(p).expect("site file").len() as u64;
    let index_paths: Vec<String> = hosts.iter().map(|h| format!("/{h}/index.html")).collect();
    let index_fps: Vec<Option<u64>> = index_paths
        .iter()
        .map(|p| fingerprint(files.get(p).expect("index page"), "http://127.0.0.1/x"))
        .collect();
    let site0_bytes: u64 = index_paths[..1]
        .iter()
        .chain(first_paths.iter().map(|p| &p[0]))
        .map(|p| site_bytes(p))
        .sum();
    let mirrored_bytes: u64 = mirrored.iter().map(|p| site_bytes(p)).sum();

    let site = Site::serve(files);
    let mirror = Site::serve(SiteFiles::from_pairs(mirror_files));
    let ws = Workspace::new(&site.url("/index.html"), "hub", Some(1));
    ws.configure(|raw| {
        let mut sources: Vec<RawSource> = SITES
            .iter()
            .zip(&hosts)
            .map(|(name, host)| RawSource {
                name: (*name).into(),
                prefixes: vec![site.url(&format!("/{host}/"))],
                ..RawSource::default()
            })
            .collect();
        sources.push(RawSource {
            name: "mirror".into(),
            prefixes: vec![mirror.url("/")],
            ..RawSource::default()
        });
        raw.sources = sources;
    });
    let crawl = |seeds: &[String], depth: &str| -> Value {
        let mut args = vec!["crawl", "--quiet", "--json", "--max-depth", depth];
        for s in seeds {
            args.extend(["--seed", s.as_str()]);
        }
        serde_json::from_slice(&ws.harvest(&args).stdout).expect("crawl --json")
    };
    for p in &index_paths {
        let s = crawl(&[site.url(p)], "1");
        assert_eq!(s["pages"], n + 1, "{p}: {s}");
    }
    let copies: Vec<String> = (0..mirrored.len())
        .map(|i| mirror.url(&format!("/copy/{i}.html")))
        .collect();
    let s = crawl(&copies, "0");
    assert_eq!(s["pages"], 2, "mirror: {s}");
    // site0 again, unchanged: a second capture of each of its pages.
    crawl(&[site.url(&index_paths[0])], "1");

    let out = ws.harvest(&[
        "dedup",
        "--from",
        "1990-01-01",
        "--format",
        "json",
        "--limit",
        "0",
    ]);
    let report: Value = serde_json::from_slice(&out.stdout).expect("dedup --format json");
    let totals = &report["totals"];

    // Exact: each of site0's pages twice (the re-crawl), the mirrored ones a
    // third time on the mirror host.
    assert_eq!(totals["pages"], 3 * (n + 1) + 2, "{totals}");
    assert_eq!(totals["captures"], 4 * (n + 1) + 2, "{totals}");
    assert_eq!(totals["exact_groups"], n + 1, "{totals}");
    assert_eq!(totals["exact_duplicates"], n + 1 + 2, "{totals}");
    assert_eq!(
        totals["bytes_saved"],
        site0_bytes + mirrored_bytes,
        "{totals}"
    );
    let exact = report["exact"].as_array().expect("exact");
    assert_eq!(exact.len() as u64, n + 1);
    for g in exact {
        let first = g["first_url"].as_str().expect("first_url");
        assert!(
            first.starts_with(&site.url(&format!("/{}/", hosts[0]))),
            "{g}"
        );
        assert_eq!(g["first_source"], "site0");
        let path = first.trim_start_matches(&site.url(""));
        let path = format!("/{}", path.trim_start_matches('/'));
        let is_mirrored = mirrored.contains(&path);
        let captures = if is_mirrored { 3 } else { 2 };
        assert_eq!(g["captures"], captures, "{g}");
        assert_eq!(g["urls"], if is_mirrored { 2 } else { 1 }, "{g}");
        let want_sources: Vec<&str> = if is_mirrored {
            vec!["mirror", "site0"]
        } else {
            vec!["site0"]
        };
        assert_eq!(g["sources"], serde_json::json!(want_sources), "{g}");
        let payload = g["payload_bytes"].as_u64().expect("payload_bytes");
        assert!(payload > 0);
        assert_eq!(g["bytes_saved"], (captures - 1) * payload, "{g}");
        assert!(g["last_time"].as_str() >= g["first_time"].as_str(), "{g}");
    }

    // Near-duplicate text: every story has its 3 copies (+1 on the mirror),
    // first published by site0. The site index pages list the same
    // headlines: they form a group when their fingerprints are within k.
    let near = |a: Option<u64>, b: Option<u64>| match (a, b) {
        (Some(a), Some(b)) => (a ^ b).count_ones() <= DEFAULT_DISTANCE,
        _ => false,
    };
    // Index pages carry no publish time: archived in crawl order, so the
    // earliest matched story wins.
    let mut index_root = [0usize; 3];
    for i in 0..3 {
        index_root[i] = (0..i)
            .filter(|&j| near(index_fps[i], index_fps[j]))
            .map(|j| index_root[j])
            .min()
            .unwrap_or(i);
    }
    let index_group_size = |r: usize| index_root.iter().filter(|&&x| x == r).count() as u64;
    let index_groups: Vec<usize> = (0..3).filter(|&r| index_group_size(r) >= 2).collect();
    let text = report["text"].as_array().expect("text");
    let mut by_story: BTreeMap<String, &Value> = BTreeMap::new();
    for g in text {
        by_story.insert(g["story"].as_str().expect("story").to_owned(), g);
    }
    for p in &first_paths {
        let root = site.url(&p[0]);
        let g = by_story
            .get(&root)
            .unwrap_or_else(|| panic!("no story group for {root}: {text:?}"));
        let extra = u64::from(mirrored.contains(&p[0]));
        assert_eq!(g["copies"], 3 + extra, "{g}");
        assert_eq!(g["first_source"], "site0", "{g}");
        let mut want = vec!["site0", "site1", "site2"];
        if extra == 1 {
            want.insert(0, "mirror");
        }
        assert_eq!(g["sources"], serde_json::json!(want), "{g}");
    }
    let groups_expected = n + index_groups.len() as u64;
    assert_eq!(totals["text_groups"], groups_expected, "{text:?}");
    for &r in &index_groups {
        let g = by_story[&site.url(&index_paths[r])];
        assert_eq!(g["copies"], index_group_size(r), "{g}");
        assert_eq!(g["first_source"], SITES[r], "{g}");
    }
    let firsts = |i: usize| index_groups.iter().filter(|&&r| r == i).count() as u64;
    let index_dup = |i: usize| u64::from(index_root[i] != i);

    // Per source: the upload record.
    let sources: BTreeMap<String, &Value> = report["sources"]
        .as_array()
        .expect("sources")
        .iter()
        .map(|s| (s["source"].as_str().expect("source").to_owned(), s))
        .collect();
    assert_eq!(
        sources.keys().cloned().collect::<Vec<_>>(),
        ["mirror", "site0", "site1", "site2"]
    );
    let s0 = sources["site0"];
    assert_eq!(s0["pages"], n + 1);
    assert_eq!(s0["captures"], 2 * (n + 1));
    assert_eq!(s0["exact_duplicates"], n + 1);
    assert_eq!(s0["near_duplicates"], 0);
    assert_eq!(s0["stories_first"], n + firsts(0));
    assert_eq!(s0["bytes_saved"], site0_bytes);
    for (i, name) in SITES.iter().enumerate().skip(1) {
        let s = sources[*name];
        assert_eq!(s["pages"], n + 1, "{s}");
        assert_eq!(s["captures"], n + 1, "{s}");
        assert_eq!(s["exact_duplicates"], 0, "{s}");
        assert_eq!(s["near_duplicates"], n + index_dup(i), "{s}");
        assert_eq!(s["stories_first"], firsts(i), "{s}");
    }
    let m = sources["mirror"];
    assert_eq!(m["pages"], 2);
    assert_eq!(m["captures"], 2);
    assert_eq!(m["exact_duplicates"], 2);
    assert_eq!(m["near_duplicates"], 2);
    assert_eq!(m["bytes_saved"], mirrored_bytes);
    assert_eq!(
        totals["near_duplicates"],
        2 * n + 2 + index_dup(1) + index_dup(2)
    );

    // The same numbers as a table and as CSV; filters narrow the pages.
    let table =
        String::from_utf8(ws.harvest(&["dedup", "--from", "1990-01-01"]).stdout).expect("utf-8");
    assert!(
        table.starts_with(&format!(
            "{} pages, {} captures; exact: {} groups",
            totals["pages"], totals["captures"], totals["exact_groups"]
        )),
        "{table}"
    );
    assert!(table.contains("PER SOURCE"), "{table}");
    println!("{table}");
    let csv = String::from_utf8(
        ws.harvest(&["dedup", "--from", "1990-01-01", "--format", "csv"])
            .stdout,
    )
    .expect("utf-8");
    let rows: Vec<&str> = csv.lines().collect();
    assert_eq!(
        rows.iter().filter(|l| l.starts_with("exact,")).count() as u64,
        n + 1
    );
    assert_eq!(
        rows.iter().filter(|l| l.starts_with("text,")).count() as u64,
        groups_expected
    );
    assert_eq!(rows.iter().filter(|l| l.starts_with("source,")).count(), 4);
    let only: Value = serde_json::from_slice(
        &ws.harvest(&[
            "dedup",
            "--from",
            "1990-01-01",
            "--source",
            "site1",
            "--format",
            "json",
        ])
        .stdout,
    )
    .expect("json");
    assert_eq!(only["totals"]["pages"], n + 1, "{}", only["totals"]);
    assert_eq!(only["totals"]["exact_groups"], 0, "{}", only["totals"]);
    // site1's stories are listed with all their copies, first published by site0.
    assert_eq!(
        only["totals"]["text_groups"],
        n + u64::from(index_group_size(index_root[1]) >= 2)
    );
}
