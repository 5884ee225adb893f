//! The text index as a user meets it (issue 41): a crawl makes every page searchable by its
//! words, `fsck` checks that the text index and the page rows agree, a lost text index is
//! named and rebuilt by `fsck --repair` from the packs, and the answers come back the same.

mod util;

use std::collections::BTreeSet;

use harvest::demo::{DEMO_DEPTH, DEMO_ENTRY};
use util::{jsonl, Site, Workspace};

/// URLs of `query --text TEXT`.
fn found(ws: &Workspace, text: &str) -> BTreeSet<String> {
    let out = ws.harvest(&["query", "--text", text, "--format", "jsonl"]);
    jsonl(&out)
        .into_iter()
        .map(|p| p["url"].as_str().unwrap_or_default().to_owned())
        .collect()
}

#[test]
fn crawled_pages_are_searchable_checked_and_rebuilt() {
    let site = Site::demo();
    let ws = Workspace::new(&site.url(DEMO_ENTRY), "demo", Some(DEMO_DEPTH));
    ws.crawl();
    let (code, report) = ws.fsck_json(false);
    assert_eq!(code, Some(0), "{report}");
    let pages = report["pages"].as_u64().expect("pages");
    assert!(pages > 100, "{report}");
    assert_eq!(report["text_pages"].as_u64(), Some(pages), "{report}");
    assert_eq!(report["text_missing"].as_u64(), Some(0), "{report}");

    // Words of the headlines find their pages, and only pages holding them.
    let all = jsonl(&ws.harvest(&["query", "--format", "jsonl", "--limit", "500"]));
    let mut asked = 0;
    for page in all.iter().step_by(37) {
        let title = page["title"].as_str().unwrap_or_default();
        let Some(word) = tokens::tokenize(title)
            .into_iter()
            .max_by_key(|w| w.chars().count())
        else {
            continue;
        };
        let hits = found(&ws, &format!("title:{word}"));
        assert!(
            hits.contains(page["url"].as_str().unwrap_or_default()),
            "{word:?} in {title:?}"
        );
        for p in &all {
            let url = p["url"].as_str().unwrap_or_default();
            if hits.contains(url) {
                let t = p["title"].as_str().unwrap_or_default();
                // The headline holds the word, maybe inside a longer one (`数据` in `数据库`).
                assert!(t.to_lowercase().contains(&word), "{t:?} holds no {word:?}");
            }
        }
        asked += 1;
    }
    assert!(asked >= 5);
    let word = "表格";
    let before = found(&ws, word);
    assert!(!before.is_empty());

    // The text index lost: queries say so, fsck names it, --repair rebuilds it from the packs.
    std::fs::remove_dir_all(ws.path().join("index").join("text")).expect("remove text index");
    let out = ws.harvest_raw(&["query", "--text", word]);
    assert_ne!(out.status.code(), Some(0));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("fsck --repair"), "{err}");
    let (code, report) = ws.fsck_json(false);
    assert_eq!(code, Some(1), "{report}");
    assert_eq!(report["text_missing"].as_u64(), Some(pages), "{report}");
    let (code, report) = ws.fsck_json(true);
    assert_eq!(code, Some(0), "{report}");
    assert_eq!(report["repaired_text"].as_u64(), Some(pages), "{report}");
    let (code, report) = ws.fsck_json(false);
    assert_eq!(code, Some(0), "{report}");
    assert_eq!(report["text_missing"].as_u64(), Some(0), "{report}");
    assert_eq!(found(&ws, word), before);
}

/// Every command that takes filters takes text: `stats` counts, `export cdxj` and `dedup`
/// select exactly the pages `query --text` finds.
#[test]
fn stats_export_and_dedup_take_text() {
    let site = Site::demo();
    let ws = Workspace::new(&site.url(DEMO_ENTRY), "demo", Some(DEMO_DEPTH));
    ws.crawl();
    let text = "表格 OR 数据";
    let pages = found(&ws, text);
    let all: BTreeSet<String> =
        jsonl(&ws.harvest(&["query", "--format", "jsonl", "--limit", "1000"]))
            .into_iter()
            .map(|p| p["url"].as_str().unwrap_or_default().to_owned())
            .collect();
    assert!(!pages.is_empty() && pages.len() < all.len(), "{pages:?}");

    let stats = ws.harvest(&[
        "stats",
        "--text",
        text,
        "--interval",
        "year",
        "--format",
        "json",
    ]);
    let rows: serde_json::Value = serde_json::from_slice(&stats.stdout).expect("stats json");
    let counted: u64 = rows
        .as_array()
        .expect("rows")
        .iter()
        .map(|r| r["count"].as_u64().unwrap_or_default())
        .sum();
    assert_eq!(counted, pages.len() as u64, "{rows}");

    let cdxj = ws.harvest(&["export", "cdxj", "--text", text]);
    let lines = String::from_utf8_lossy(&cdxj.stdout).into_owned();
    let exported: BTreeSet<String> = lines
        .lines()
        .filter_map(|l| {
            let json = &l[l.find('{')?..];
            let v: serde_json::Value = serde_json::from_str(json).ok()?;
            Some(v["url"].as_str()?.to_owned())
        })
        .collect();
    assert!(pages.is_subset(&exported), "{pages:?}\n{lines}");
    let whole = ws.harvest(&["export", "cdxj"]);
    let whole = String::from_utf8_lossy(&whole.stdout).lines().count();
    assert!(
        lines.lines().count() < whole,
        "the selection is smaller than the archive: {} of {whole} lines, {} of {} pages",
        lines.lines().count(),
        pages.len(),
        all.len()
    );
    for url in all.difference(&pages) {
        assert!(
            !exported.contains(url),
            "{url} holds none of the words and is no requisite"
        );
    }

    let dedup = ws.harvest(&["dedup", "--text", text, "--format", "json"]);
    let report: serde_json::Value = serde_json::from_slice(&dedup.stdout).expect("dedup json");
    assert_eq!(
        report["totals"]["pages"].as_u64(),
        Some(pages.len() as u64),
        "{report}"
    );
}

/// A page longer than the text index takes: its first words are searchable, the rest are
/// counted in the crawl summary (issue 41, bad input).
#[test]
fn a_very_long_page_indexes_its_first_words_and_says_how_many_it_left() {
    // Short words, so the page stays under the extraction's own cut (`LARGE_PAGE_BYTES` of
    // markup): the text index's limit is what cuts it.
    let limit = indexer::text::MAX_TEXT_TOKENS;
    let mut html = String::from("<html><head><title>Long list</title></head><body><p>");
    for i in 0..limit + 20_000 {
        html.push_str(match i {
            i if i == limit - 1 => "zlast ",
            i if i == limit => "zpast ",
            _ => "ab ",
        });
    }
    html.push_str("</p></body></html>");
    assert!(html.len() < extract::LARGE_PAGE_BYTES);
    let site = Site::serve(harvest::site::SiteFiles::from_pairs(vec![(
        "/index.html".to_owned(),
        html.into_bytes(),
    )]));
    let ws = Workspace::new(&site.url("/index.html"), "long", Some(0));
    let summary = ws.crawl();
    assert_eq!(summary["pages"], 1, "{summary}");
    assert_eq!(summary["pages_text_cut"], 1, "{summary}");
    assert_eq!(summary["text_words_dropped"], 20_000, "{summary}");
    assert_eq!(found(&ws, "zlast").len(), 1, "the last word indexed");
    assert!(found(&ws, "zpast").is_empty(), "past the limit");
}

/// `[index] text = false`: a crawl writes no words, text conditions are refused with a
/// clear error, everything else answers; turned on again, `fsck --repair` writes the words
/// of the pages crawled meanwhile and text queries find them.
#[test]
fn the_text_index_can_be_off_and_made_later() {
    let site = Site::demo();
    let ws = Workspace::new(&site.url(DEMO_ENTRY), "demo", Some(DEMO_DEPTH));
    ws.configure(|raw| raw.index.text = Some(false));
    ws.crawl();
    let all = jsonl(&ws.harvest(&["query", "--format", "jsonl", "--limit", "500"]));
    assert!(all.len() > 100);
    for args in [
        &["query", "--text", "表格"][..],
        &["query", "--keyword", "表格"][..],
        &["stats", "--any", "表格"][..],
    ] {
        let out = ws.harvest_raw(args);
        assert_ne!(out.status.code(), Some(0), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("needs a text index"), "{args:?}: {err}");
    }
    let (code, report) = ws.fsck_json(false);
    assert_eq!(code, Some(0), "{report}");
    assert_eq!(report["text_pages"].as_u64(), Some(0), "{report}");

    ws.configure(|raw| raw.index.text = Some(true));
    let out = ws.harvest_raw(&["query", "--text", "表格"]);
    assert_ne!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stderr).contains("fsck --repair"));
    let (code, report) = ws.fsck_json(true);
    assert_eq!(code, Some(0), "{report}");
    assert_eq!(
        report["repaired_text"].as_u64(),
        Some(all.len() as u64),
        "{report}"
    );
    assert!(!found(&ws, "表格").is_empty());
}

/// How many pages `query --text TEXT` finds (all of them).
fn found_all(ws: &Workspace, text: &str) -> u64 {
    let out = ws.harvest(&[
        "query", "--text", text, "--format", "jsonl", "--limit", "100000",
    ]);
    jsonl(&out).len() as u64
}

/// Pages of `stats --text TEXT` over every day.
fn counted(ws: &Workspace, text: &str) -> u64 {
    let out = ws.harvest(&[
        "stats",
        "--interval",
        "year",
        "--format",
        "json",
        "--text",
        text,
    ]);
    let rows: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).expect("stats json");
    rows.iter()
        .map(|r| r["count"].as_u64().expect("count"))
        .sum()
}

/// A crawl killed between a batch's words and its rows (`HARVEST_CRASH_AFTER_TEXT`): the
/// words of pages without rows are neither found nor counted (counts of mentions trust
/// the text index, but not a page under a text mark), `fsck` names the write in flight
/// and finds nothing wrong, and the next writer removes those words; the run that takes
/// the crawl up indexes the batch again, words and rows.
#[test]
fn a_crash_between_words_and_rows_is_never_counted_and_is_cleared() {
    let site = Site::demo();
    let ws = Workspace::new(&site.url(DEMO_ENTRY), "demo", Some(DEMO_DEPTH));
    ws.configure(|raw| {
        raw.packing.batch_pages = Some(16);
        raw.crawl.concurrency = Some(2);
    });
    let status = std::process::Command::new(env!("CARGO_BIN_EXE_harvest"))
        .arg("-c")
        .arg(&ws.config)
        .args(["crawl", "--quiet"])
        .env("HARVEST_CRASH_AFTER_TEXT", "3")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .expect("run harvest");
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(status.signal(), Some(9), "killed itself: {status:?}");

    let (code, report) = ws.fsck_json(false);
    assert_eq!(code, Some(0), "{report}");
    let pages = report["pages"].as_u64().expect("pages");
    let words = report["text_pages"].as_u64().expect("text pages");
    assert!(
        words > pages && pages > 0,
        "the killed batch's words are in the text index, its rows are not: {report}"
    );
    assert_eq!(report["text_marks"].as_u64(), Some(1), "{report}");
    assert_eq!(report["text_orphans"].as_u64(), Some(0), "{report}");
    // Every word of the headlines: counted as found, only pages with rows.
    let all = jsonl(&ws.harvest(&["query", "--format", "jsonl", "--limit", "1000"]));
    assert_eq!(all.len() as u64, pages);
    for text in ["表格 OR 数据", "数据"] {
        let hits = found_all(&ws, text);
        assert_eq!(counted(&ws, text), hits, "--text {text}");
    }
    let mut hits_of_all = 0;
    for word in all
        .iter()
        .flat_map(|p| tokens::tokenize(p["title"].as_str().unwrap_or_default()))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .take(40)
    {
        let hits = found_all(&ws, &word);
        assert_eq!(counted(&ws, &word), hits, "--text {word}");
        hits_of_all += hits;
    }
    assert!(hits_of_all > 40, "{hits_of_all}");

    // The next writer: the killed batch's words go, then the crawl takes it up.
    let out = ws.harvest(&["crawl", "--json"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("left without rows were removed"), "{err}");
    let (code, report) = ws.fsck_json(false);
    assert_eq!(code, Some(0), "{report}");
    assert_eq!(report["text_marks"].as_u64(), Some(0), "{report}");
    assert_eq!(report["text_orphans"].as_u64(), Some(0), "{report}");
    assert_eq!(report["text_missing"].as_u64(), Some(0), "{report}");
    assert_eq!(report["text_pages"], report["pages"], "{report}");
    assert!(report["pages"].as_u64() > Some(pages), "{report}");
    for text in ["表格 OR 数据", "数据"] {
        assert_eq!(counted(&ws, text), found_all(&ws, text), "--text {text}");
    }
}
