//! Issue 11: attributes of real-shaped news pages through the whole pipeline
//! (publish time, its source, author stored and queryable), and `harvest
//! reextract` repairing rows written by an older extractor: the pages are
//! crawled from a loopback site (harvest's labelled extraction fixtures),
//! their rows are then replaced by what an extractor without publish times
//! wrote (filed under the fetch time, no provenance), and `reextract` reads
//! the packs back and files every page under its publish time again.

mod util;

use std::collections::BTreeMap;

use harvest::config::Config;
use harvest::site::SiteFiles;
use harvest::stores::Stores;
use serde_json::Value;
use util::{Site, Workspace};

const SOURCE: &str = "zhnews";

/// Pages with an absolute publish time, and the instant each states (UTC).
const PAGES: [(&str, &str); 6] = [
    ("netease.html", "2024-06-18T00:12:33Z"),
    ("people.html", "2024-03-05T01:31:00Z"),
    ("xinhua.html", "2024-02-29T13:03:47Z"),
    ("chinanews.html", "2024-04-12T06:20:00Z"),
    ("ifeng.html", "2024-05-21T08:40:12Z"),
    ("meta_update_wins_bug.html", "2024-03-08T10:20:00Z"),
];

fn site() -> Site {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("extract/tests/fixtures/pages");
    let mut files: Vec<(String, Vec<u8>)> = PAGES
        .iter()
        .map(|(f, _)| {
            (
                format!("/news/{f}"),
                std::fs::read(dir.join(f)).expect("fixture"),
            )
        })
        .collect();
    let links: String = PAGES
        .iter()
        .map(|(f, _)| format!("<li><a href=\"/news/{f}\">{f}</a></li>"))
        .collect();
    files.push((
        "/index.html".into(),
        format!("<html><head><title>新闻</title></head><body><ul>{links}</ul></body></html>")
            .into_bytes(),
    ));
    Site::serve(SiteFiles::from_pairs(files))
}

fn query(ws: &Workspace) -> BTreeMap<String, Value> {
    let out = ws.harvest(&["query", "--format", "jsonl", "--limit", "1000"]);
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).expect("jsonl"))
        .filter_map(|v| {
            let name = v["url"].as_str()?.rsplit('/').next()?.to_string();
            Some((name, v))
        })
        .collect()
}

#[test]
fn publish_times_are_stored_with_their_source_and_reextract_repairs_old_rows() {
    let site = site();
    let ws = Workspace::new(&site.url("/index.html"), SOURCE, Some(1));
    ws.crawl();
    let first = query(&ws);
    for (file, want) in PAGES {
        let p = first
            .get(file)
            .unwrap_or_else(|| panic!("{file} not indexed: {first:?}"));
        assert_eq!(p["published"], want, "{file}");
        assert_eq!(p["published_from"], "text", "{file}");
    }
    assert_eq!(first["netease.html"]["author"], "李明");
    assert_eq!(first["index.html"]["published_from"], "fetch");
    let only_text = ws.harvest(&["query", "--format", "jsonl", "--published-from", "text"]);
    assert_eq!(
        String::from_utf8_lossy(&only_text.stdout).lines().count(),
        PAGES.len()
    );

    // Rows as an older extractor wrote them: no publish time (filed under the
    // fetch time), no provenance, no author, a wrong title.
    {
        let cfg = Config::load(Some(&ws.config)).expect("config");
        let stores = Stores::open(&cfg).expect("stores");
        let q = indexer::Query::new(
            &[],
            "1990-01-01T00:00:00Z".parse().unwrap(),
            "2100-01-01T00:00:00Z".parse().unwrap(),
        );
        let hits = stores.index.search(&q).expect("search");
        let mut old = Vec::new();
        let mut gone = Vec::new();
        for h in hits.iter().filter(|h| h.page.published.is_some()) {
            let mut p = h.page.clone();
            p.published = None;
            p.published_from = None;
            p.author = None;
            p.title = "old title".into();
            gone.push(indexer::PageKey {
                table: h.table.clone(),
                row_key: h.row_key.clone(),
            });
            let new_key = stores.index.page_key(&p).expect("key");
            if let Some(mut st) = stores.index.get_url(&p.url).expect("url state") {
                st.table = new_key.table;
                st.row_key = new_key.row_key;
                stores.index.put_urls(&[st]).expect("urls");
            }
            old.push(p);
        }
        assert_eq!(old.len(), PAGES.len());
        stores.index.index_pages(&old).expect("index");
        stores.index.delete_pages(&gone).expect("delete");
    }
    let degraded = query(&ws);
    assert!(degraded.values().all(|p| p["published"].is_null()));
    let fetch_only = ws.harvest(&["query", "--format", "jsonl", "--published-from", "fetch"]);
    assert_eq!(
        String::from_utf8_lossy(&fetch_only.stdout).lines().count(),
        degraded.len()
    );

    // The degraded rows have no words in the text index (their rows moved without them).
    let text_hits = |ws: &Workspace| {
        let out = ws.harvest(&["query", "--format", "jsonl", "--text", "政府工作报告"]);
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(str::to_owned)
            .collect::<Vec<_>>()
    };
    assert!(text_hits(&ws).is_empty());
    assert!(ws.fsck_json(false).1["text_missing"].as_u64() >= Some(PAGES.len() as u64));

    // Issue 42: `--json` prints the JSON alone (a text line came before it).
    let dry = ws.harvest(&["reextract", "--dry-run", "--json"]);
    let dry: Value = serde_json::from_slice(&dry.stdout).unwrap_or_else(|e| {
        panic!(
            "reextract --dry-run --json: stdout is not JSON alone ({e}): {}",
            String::from_utf8_lossy(&dry.stdout)
        )
    });
    assert_eq!(dry["moved"], PAGES.len() as u64, "{dry}");
    assert_eq!(query(&ws).len(), degraded.len(), "a dry run writes nothing");
    assert!(query(&ws).values().all(|p| p["published"].is_null()));

    let out = ws.harvest(&["reextract", "--json"]);
    let summary: Value = serde_json::from_slice(&out.stdout).expect("reextract --json: JSON alone");
    assert_eq!(summary["moved"], PAGES.len() as u64, "{summary}");
    assert_eq!(summary["failed"], 0, "{summary}");
    assert_eq!(summary["text"], summary["pages"], "{summary}");
    let repaired = query(&ws);
    assert_eq!(
        repaired.len(),
        first.len(),
        "one row per page, none left behind"
    );
    for (file, want) in PAGES {
        let p = &repaired[file];
        assert_eq!(p["published"], want, "{file}");
        assert_eq!(p["published_from"], "text", "{file}");
        assert_eq!(p["title"], first[file]["title"], "{file}");
    }
    assert_eq!(repaired["netease.html"]["author"], "李明");
    // Their words were written again under the new keys: text search finds them.
    let hits = text_hits(&ws);
    assert!(
        hits.iter().any(|l| l.contains("/news/people.html")),
        "{hits:?}"
    );
    assert_eq!(ws.fsck_json(false).1["text_missing"], 0);
    // The urls table follows the moved rows: `get` finds the page by URL.
    let url = site.url("/news/people.html");
    let got = ws.harvest(&["get", &url]);
    assert!(String::from_utf8_lossy(&got.stdout).contains("政府工作报告"));
    // The table shows where each time came from.
    let table = String::from_utf8_lossy(&ws.harvest(&["query"]).stdout).into_owned();
    assert!(
        table.lines().next().unwrap_or_default().contains("FROM"),
        "{table}"
    );
    let rows: Vec<&str> = table.lines().filter(|l| l.contains("/news/")).collect();
    assert_eq!(rows.len(), PAGES.len(), "{table}");
    assert!(
        rows.iter()
            .all(|l| l.split_whitespace().nth(2) == Some("text")),
        "{table}"
    );
    // Nothing left to do.
    let again = ws.harvest(&["reextract", "--json"]);
    let again: Value = serde_json::from_slice(&again.stdout).expect("reextract --json: JSON alone");
    assert_eq!(again["changed"], 0, "{again}");

    // `--explain URL`: each attribute with the rule that decided it; nothing written.
    let url = site.url("/news/netease.html");
    let explained = ws.harvest(&["reextract", "--explain", &url, "--json"]);
    let explained: Value =
        serde_json::from_slice(&explained.stdout).expect("reextract --explain --json: JSON alone");
    let attrs: BTreeMap<String, &Value> = explained["attributes"]
        .as_array()
        .expect("attributes")
        .iter()
        .map(|a| (a["attribute"].as_str().unwrap_or_default().to_string(), a))
        .collect();
    assert_eq!(
        attrs.keys().map(String::as_str).collect::<Vec<_>>(),
        ["author", "media", "outlet", "published", "title"],
        "{explained}"
    );
    assert_eq!(attrs["author"]["value"], "李明", "{explained}");
    assert_eq!(
        attrs["published"]["rule"],
        "text (the best scored candidate)"
    );
    for a in attrs.values() {
        assert_eq!(a["value"], a["indexed"], "{explained}");
        assert!(
            a["value"].is_null() || a["rule"].as_str().is_some_and(|r| r != "none"),
            "a value without its rule: {explained}"
        );
    }
    let text = ws.harvest(&["reextract", "--explain", &url]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.starts_with(&url) && text.contains("author     李明  <- "),
        "{text}"
    );
    let unknown = ws.harvest_raw(&["reextract", "--explain", &site.url("/news/none.html")]);
    assert_eq!(unknown.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&unknown.stderr).contains("is not a page of the archive"),
        "{unknown:?}"
    );
    // What would change nothing of the answer is refused, not ignored.
    for extra in [
        &["--collapse"][..],
        &["--tz", "+08:00"],
        &["--dry-run"],
        &["--source", "x"],
    ] {
        let mut args = vec!["reextract", "--explain", url.as_str()];
        args.extend_from_slice(extra);
        let refused = ws.harvest_raw(&args);
        assert_eq!(refused.status.code(), Some(1), "{extra:?}");
        assert!(
            String::from_utf8_lossy(&refused.stderr)
                .contains("--explain takes one URL and nothing else"),
            "{extra:?}: {refused:?}"
        );
    }
    let after = ws.harvest(&["reextract", "--dry-run", "--json"]);
    let after: Value = serde_json::from_slice(&after.stdout).expect("dry run JSON");
    assert_eq!(after["changed"], 0, "--explain wrote something: {after}");
}
