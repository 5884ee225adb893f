//! Issue 12: near-duplicates on real text.
//!
//! - Accuracy: real articles (English: NewsArticles.csv; Chinese: People's
//!   Daily 1998-01) as pages of different news sites (`bench/src/reposts.rs`
//!   templates) with the small edits of reposts, fingerprinted from what the
//!   crawler extracts of each page; every pair of pages within `k` bits is a
//!   predicted repost. Precision and recall over all pairs (so different
//!   stories of the same outlet and day, and pages sharing a template, are
//!   the negatives) are printed per k; at the default k F1 must be >= 0.9.
//! - Exact duplicates: the SpamAssassin corpus' emails with identical bodies,
//!   linked through the index (`Index::link_near_duplicates` on the embedded
//!   store): every one after the first must be found (recall 100%).
//! - End to end: a crawl of a site of reposts; `--collapse`, copies,
//!   `/api/pages/{id}/copies` and `stats --group-by story` over it.
//!
//! The corpora come from `deploy/data/fetch-neardup.sh` (pinned, hashed);
//! the tests fail pointing at it when they are missing.

// The benchmarks' repost fixture generator (`harvest-bench`), compiled into
// this test as source: its pages are this crate's `harvest::site::SiteFiles`.
#[path = "../bench/src/reposts.rs"]
#[allow(dead_code)]
mod reposts;

mod util;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use http_body_util::BodyExt;
use indexer::neardup::DEFAULT_DISTANCE;
use reposts::Story;
use serde_json::Value;
use tower::ServiceExt;
use util::{Site, Workspace};

fn cache() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("deploy/cache");
    for f in ["NewsArticles.csv", "199801.txt", "spam-assassin/spam-1"] {
        assert!(
            dir.join(f).exists(),
            "{} is missing: run deploy/data/fetch-neardup.sh",
            dir.join(f).display()
        );
    }
    dir
}

fn report(name: &str, stories: &[Story], pages: &[(usize, Option<u64>)]) -> reposts::Score {
    let missing = pages.iter().filter(|(_, f)| f.is_none()).count();
    let groups: HashSet<&str> = stories.iter().map(|s| s.group.as_str()).collect();
    println!(
        "{name}: {} stories ({} same-day groups), {} pages, {missing} without fingerprint",
        stories.len(),
        groups.len(),
        pages.len()
    );
    println!("   k   TP    FP  FP same day   FN  precision  recall     F1");
    let mut at_default = reposts::Score::default();
    for k in 0..=7 {
        let s = reposts::score(stories, pages, k);
        println!(
            "  {k}  {:>4}  {:>4}  {:>11}  {:>4}  {:>9.3}  {:>6.3}  {:>5.3}{}",
            s.tp,
            s.fp,
            s.fp_same_day,
            s.fn_,
            s.precision(),
            s.recall(),
            s.f1(),
            if k == DEFAULT_DISTANCE {
                "  <- default"
            } else {
                ""
            }
        );
        if k == DEFAULT_DISTANCE {
            at_default = s;
        }
    }
    at_default
}

/// Stories spread over the corpus: every `step`-th of those long enough.
fn spread(stories: Vec<Story>, n: usize) -> Vec<Story> {
    let step = (stories.len() / n).max(1);
    stories.into_iter().step_by(step).take(n).collect()
}

#[test]
fn reposts_are_found_and_other_stories_of_the_day_are_not() {
    let dir = cache();
    let en = reposts::english_stories(&dir.join("NewsArticles.csv"), 120).expect("english");
    let zh = reposts::chinese_stories(&dir.join("199801.txt"), 250).expect("chinese");
    assert!(en.len() > 2000, "english stories: {}", en.len());
    assert!(zh.len() > 1000, "chinese stories: {}", zh.len());
    // English: spread over the corpus (its order groups outlets); Chinese:
    // the first 600 in paper order (neighbours share a day and a page). Every
    // pair of pages is a candidate, so the negatives include the other
    // stories of the outlet and day and every page sharing a template.
    let en = spread(en, 600);
    let zh: Vec<Story> = zh.into_iter().take(600).collect();
    // The fingerprint as the pipeline computes it (`ingest::fingerprint`):
    // SimHash of the article text the crawler extracts from each page (its
    // body text when it finds no article).
    let fingerprints = |texts: Vec<(usize, String)>| -> Vec<(usize, Option<u64>)> {
        texts
            .into_iter()
            .map(|(s, t)| (s, classifier::simhash::simhash(&t)))
            .collect()
    };
    let en_texts = reposts::accuracy_texts(&en, 1);
    let zh_texts = reposts::accuracy_texts(&zh, 2);
    if let Ok(path) = std::env::var("NEARDUP_DUMP") {
        // The extracted texts, for studying fingerprint recipes elsewhere.
        let dump = |stories: &[Story], texts: &[(usize, String)]| -> Vec<Value> {
            texts
                .iter()
                .map(
                    |(i, t)| serde_json::json!({"story": i, "group": stories[*i].group, "text": t}),
                )
                .collect()
        };
        let all = serde_json::json!({"en": dump(&en, &en_texts), "zh": dump(&zh, &zh_texts)});
        std::fs::write(path, all.to_string()).expect("dump");
    }
    let en_pages = fingerprints(en_texts);
    let zh_pages = fingerprints(zh_texts);
    let en_score = report("English (NewsArticles)", &en, &en_pages);
    let zh_score = report("Chinese (People's Daily 1998-01)", &zh, &zh_pages);
    for (name, s) in [("English", en_score), ("Chinese", zh_score)] {
        assert!(
            s.f1() >= 0.9,
            "{name}: F1 {:.3} < 0.9 at k = {DEFAULT_DISTANCE} (precision {:.3}, recall {:.3})",
            s.f1(),
            s.precision(),
            s.recall()
        );
    }
}

/// A notice a site prints on every page, longer than its short articles.
const SITE_NOTICE: &str = "The information contained in this article is provided for general \
informational purposes only and does not constitute legal, financial, medical or professional \
advice of any kind. While we endeavour to keep the information up to date and correct, we make \
no representations or warranties of any kind, express or implied, about the completeness, \
accuracy, reliability, suitability or availability with respect to the article or the \
information, products, services, or related graphics contained in it for any purpose. Any \
reliance you place on such information is therefore strictly at your own risk. In no event will \
we be liable for any loss or damage including without limitation, indirect or consequential \
loss or damage, or any loss or damage whatsoever arising from loss of data or profits arising \
out of, or in connection with, the use of this website. Through this website you are able to \
link to other websites which are not under our control. We have no control over the nature, \
content and availability of those sites. Reproduction of this article in whole or in part \
without the written permission of the publisher is prohibited. Opinions expressed by \
contributors are their own and do not necessarily reflect the views of the publisher.";

/// Pairs of pages whose fingerprints are within the default distance.
fn linked_pairs(fingerprints: &[Option<u64>]) -> usize {
    let mut n = 0;
    for (i, a) in fingerprints.iter().enumerate() {
        for b in &fingerprints[i + 1..] {
            if let (Some(a), Some(b)) = (a, b) {
                n += usize::from(classifier::simhash::hamming(*a, *b) <= DEFAULT_DISTANCE);
            }
        }
    }
    n
}

/// Known limitation of the body-text fingerprint (deploy/bench/README.md):
/// a long block every page shares outside its article — here a site notice
/// in an `<aside>` or a `copyright` box — outweighs short articles, and
/// different stories became near-duplicates. The pipeline's fingerprint
/// reads the article text, which leaves such blocks out.
#[test]
fn a_long_block_shared_outside_the_article_links_no_stories() {
    let dir = cache();
    let short: Vec<Story> = reposts::english_stories(&dir.join("NewsArticles.csv"), 60)
        .expect("english")
        .into_iter()
        .filter(|s| {
            let words: usize = s
                .paragraphs
                .iter()
                .map(|p| p.split_whitespace().count())
                .sum();
            words <= 150
        })
        .take(40)
        .collect();
    assert_eq!(short.len(), 40, "short real articles");
    for (name, notice) in [
        ("aside", format!("<aside><p>{SITE_NOTICE}</p></aside>")),
        (
            "div.copyright",
            format!("<div class=\"copyright\"><p>{SITE_NOTICE}</p></div>"),
        ),
    ] {
        let url = url::Url::parse("http://news.example/story.html").expect("url");
        let (mut body, mut ours) = (Vec::new(), Vec::new());
        for s in &short {
            let paragraphs: String = s
                .paragraphs
                .iter()
                .map(|p| format!("<p>{p}</p>\n"))
                .collect();
            let html = format!(
                "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{t}</title>\
                 </head><body><nav><a href=\"/\">Home</a> <a href=\"/world/\">World</a></nav>\
                 <div class=\"main\"><article><h1>{t}</h1>\n{paragraphs}</article>\n{notice}</div>\
                 </body></html>",
                t = s.title
            );
            let x = extract::extract(&html, &url);
            body.push(classifier::simhash::simhash(&x.body_text));
            ours.push(harvest::ingest::fingerprint(&x));
        }
        let (by_body, by_article) = (linked_pairs(&body), linked_pairs(&ours));
        println!(
            "site notice in {name}: pairs of different stories within {DEFAULT_DISTANCE} bits: \
             body text {by_body}, article text {by_article} (of {})",
            short.len() * (short.len() - 1) / 2
        );
        assert!(
            by_body >= 20,
            "{name}: the notice dominates the body text ({by_body} pairs): the setup is right"
        );
        assert_eq!(by_article, 0, "{name}: different stories are linked");
    }
}

/// Body of a raw email: everything after the first blank line.
fn email_body(text: &str) -> &str {
    text.split_once("\n\n").map_or("", |(_, b)| b)
}

#[test]
fn identical_email_bodies_are_all_linked() {
    let dir = cache().join("spam-assassin");
    let mut mails: Vec<(String, String)> = Vec::new();
    let mut folders: Vec<_> = std::fs::read_dir(&dir)
        .expect("spam-assassin folder")
        .map(|e| e.expect("entry").path())
        .collect();
    folders.sort();
    for folder in folders {
        let mut files: Vec<_> = std::fs::read_dir(&folder)
            .expect("folder")
            .map(|e| e.expect("entry").path())
            .collect();
        files.sort();
        for f in files {
            let v: Value = serde_json::from_slice(&std::fs::read(&f).expect("read")).expect("json");
            let text = v["text"].as_str().expect("text").to_owned();
            let name = format!(
                "{}/{}",
                folder.file_name().unwrap().to_string_lossy(),
                f.file_stem().unwrap().to_string_lossy()
            );
            mails.push((name, text));
        }
    }
    assert!(mails.len() >= 6000, "{} emails", mails.len());
    // Known exact duplicates: groups of identical bodies.
    let mut by_body: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, (_, text)) in mails.iter().enumerate() {
        by_body.entry(email_body(text)).or_default().push(i);
    }
    let groups: Vec<&Vec<usize>> = by_body.values().filter(|g| g.len() > 1).collect();
    let duplicates: usize = groups.iter().map(|g| g.len() - 1).sum();
    println!(
        "SpamAssassin: {} emails, {} groups of identical bodies, {} duplicates",
        mails.len(),
        groups.len(),
        duplicates
    );
    assert!(groups.len() >= 100, "the corpus has identical bodies");

    // Through the index, in batches as the pipeline does.
    let tmp = tempfile::tempdir().expect("tempdir");
    let store = Arc::new(indexer::EmbeddedStore::open(tmp.path()).expect("store"));
    let index = indexer::Index::new(store, indexer::IndexOptions::default()).expect("index");
    let t0 = chrono::DateTime::from_timestamp(1_030_000_000, 0).expect("time");
    let mut records: Vec<indexer::PageRecord> = mails
        .iter()
        .enumerate()
        .map(|(i, (name, text))| indexer::PageRecord {
            url: format!("mail://spamassassin/{name}"),
            title: name.clone(),
            published: None,
            fetched: t0 + chrono::Duration::seconds(i as i64),
            first_seen: None,
            media: None,
            comments: None,
            participants: None,
            keywords: vec![],
            topic: "mail".into(),
            topic_score: 0.0,
            cluster: 0,
            pack_path: "mail/2002/08/22/c0-0.warc.gz".into(),
            offset: i as u64,
            length: 1,
            digest: format!("sha1:{i}"),
            record_id: format!("<urn:mail:{i}>"),
            simhash: classifier::simhash::simhash(email_body(text)),
            simhash_version: Some(classifier::simhash::FINGERPRINT_VERSION),
            near_duplicate_of: None,
            published_from: None,
            author: None,
            media_from_host: false,
            outlet: None,
            language: None,
            charset: None,
            status: 200,
            source: "spamassassin".into(),
            revisit: false,
        })
        .collect();
    let started = std::time::Instant::now();
    let mut linked = 0;
    for chunk in records.chunks_mut(256) {
        linked += index
            .link_near_duplicates(chunk, DEFAULT_DISTANCE)
            .expect("link")
            .near_duplicates;
    }
    println!(
        "linked {linked} of {} emails in {:.2} s",
        records.len(),
        started.elapsed().as_secs_f64()
    );
    let mut found = 0usize;
    let mut unfingerprinted = 0usize;
    let mut same_story = 0usize;
    for g in &groups {
        let first = &records[g[0]];
        for &i in &g[1..] {
            let r = &records[i];
            if r.simhash.is_none() {
                unfingerprinted += 1;
                continue;
            }
            assert_eq!(
                r.simhash, first.simhash,
                "identical bodies, same fingerprint"
            );
            if r.near_duplicate_of.is_some() {
                found += 1;
            }
            if indexer::neardup::story_root(r) == indexer::neardup::story_root(first) {
                same_story += 1;
            }
        }
    }
    let fingerprinted = duplicates - unfingerprinted;
    println!(
        "exact duplicates with a fingerprint: {fingerprinted}, linked {found} (recall {:.1}%), \
         in the first one's story {same_story}; too short to fingerprint: {unfingerprinted} \
         (left to the payload digest)",
        100.0 * found as f64 / fingerprinted.max(1) as f64
    );
    assert_eq!(
        found, fingerprinted,
        "recall of exact duplicates must be 100%"
    );
    assert_eq!(
        same_story, fingerprinted,
        "every copy joins its first copy's story"
    );
    assert!(
        unfingerprinted * 20 < duplicates,
        "most duplicate bodies are long enough to fingerprint"
    );
}

fn status_of(app: &axum::Router, uri: &str) -> StatusCode {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        app.clone()
            .oneshot(
                Request::builder()
                    .uri(uri)
                    .body(Body::empty())
                    .expect("request"),
            )
            .await
            .expect("answer")
            .status()
    })
}

fn get_json(app: &axum::Router, uri: &str) -> Value {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let resp = app
            .clone()
            .oneshot(
                Request::builder()
                    .uri(uri)
                    .body(Body::empty())
                    .expect("request"),
            )
            .await
            .expect("answer");
        let status = resp.status();
        let body = resp.into_body().collect().await.expect("body").to_bytes();
        assert_eq!(
            status,
            StatusCode::OK,
            "{uri}: {}",
            String::from_utf8_lossy(&body)
        );
        serde_json::from_slice(&body).expect("json")
    })
}

#[test]
fn a_crawl_links_reposts_and_counts_copies() {
    let dir = cache();
    let zh = reposts::chinese_stories(&dir.join("199801.txt"), 300).expect("chinese");
    let en = reposts::english_stories(&dir.join("NewsArticles.csv"), 150).expect("english");
    let mut stories: Vec<Story> = zh.into_iter().step_by(97).take(10).collect();
    stories.extend(en.into_iter().step_by(211).take(10));
    let (files, paths) = reposts::repost_site(&stories, 3, 12);
    let site = Site::serve(files);
    let ws = Workspace::new(&site.url("/index.html"), "reposts", Some(2));
    let summary = ws.crawl();
    // 20 stories x 3 copies on 3 sites a language + 6 site index pages + the root.
    assert_eq!(summary["pages"], 67, "{summary}");
    // Two reposts per story; the three index pages of a language list the
    // same headlines, so two of them are near-duplicates too.
    assert_eq!(summary["near_duplicates"], 44, "{summary}");

    let q = ws.harvest(&[
        "query",
        "--source",
        "reposts",
        "--from",
        "1990-01-01",
        "--format",
        "jsonl",
        "--limit",
        "1000",
    ]);
    let all: Vec<Value> = String::from_utf8_lossy(&q.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("jsonl"))
        .collect();
    assert_eq!(all.len(), 67);
    let by_url: HashMap<String, &Value> = all
        .iter()
        .map(|v| (v["url"].as_str().unwrap_or_default().to_owned(), v))
        .collect();
    // Per story: the copy archived first starts it (the crawl may reach a
    // repost site before the original's), the other two point at it.
    let mut roots: BTreeMap<String, String> = BTreeMap::new();
    for (id, copies) in &paths {
        let urls: Vec<String> = copies.iter().map(|c| site.url(c)).collect();
        let starts: Vec<&String> = urls
            .iter()
            .filter(|u| by_url[*u]["near_duplicate_of"].is_null())
            .collect();
        assert_eq!(
            starts.len(),
            1,
            "story {id}: one copy starts the story: {urls:?}"
        );
        let root = starts[0].clone();
        for u in &urls {
            // 16 hex digits, as in the API (the JSON lines had a number before issue 15).
            assert!(
                by_url[u]["simhash"].as_str().is_some_and(|s| s.len() == 16),
                "the simhash is stored: {u}"
            );
            if *u != root {
                assert_eq!(
                    by_url[u]["near_duplicate_of"].as_str(),
                    Some(root.as_str()),
                    "story {id}: {u} is a copy of {root}"
                );
            }
        }
        roots.insert(id.clone(), root);
    }
    let collapsed = ws.harvest(&[
        "query",
        "--source",
        "reposts",
        "--from",
        "1990-01-01",
        "--collapse",
        "--format",
        "jsonl",
        "--limit",
        "1000",
    ]);
    let kept: HashSet<String> = String::from_utf8_lossy(&collapsed.stdout)
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).expect("jsonl");
            v["url"].as_str().unwrap_or_default().to_owned()
        })
        .collect();
    assert_eq!(
        kept.len(),
        67 - 44,
        "--collapse leaves out the near-duplicates"
    );
    for (id, copies) in &paths {
        for c in copies {
            let u = site.url(c);
            assert_eq!(
                kept.contains(&u),
                u == roots[id],
                "--collapse keeps {u} only if it starts its story"
            );
        }
    }
    let stats = ws.harvest(&[
        "stats",
        "--source",
        "reposts",
        "--from",
        "1998-01-01",
        "--to",
        "1998-02-01",
        "--group-by",
        "story",
        "--format",
        "json",
        "--no-fill",
    ]);
    let rows: Vec<indexer::StatsRow> = serde_json::from_slice(&stats.stdout).expect("stats json");
    let mut totals: BTreeMap<String, u64> = BTreeMap::new();
    for r in &rows {
        *totals
            .entry(r.group.clone().unwrap_or_default())
            .or_default() += r.count;
    }
    assert_eq!(
        totals.get("stories"),
        Some(&10),
        "10 Chinese stories: {rows:?}"
    );
    assert_eq!(totals.get("copies"), Some(&30), "30 copies: {rows:?}");

    // The API: copies on hits and the copies of a story.
    let cfg = harvest::config::Config::load(Some(&ws.config)).expect("config");
    let stores = harvest::stores::Stores::open(&cfg).expect("stores");
    let app = harvest::serve::router(harvest::serve::AppState::new(stores, None));
    let hits = get_json(
        &app,
        "/api/search?source=reposts&from=1998-01-01&to=1998-02-01&collapse=true&limit=100",
    );
    let hits = hits["hits"].as_array().expect("hits");
    assert_eq!(hits.len(), 10, "collapsed: one hit per Chinese story");
    for h in hits {
        assert_eq!(h["copies"], 3, "{h}");
    }
    let id = hits[0]["id"].as_str().expect("id");
    let copies = get_json(&app, &format!("/api/pages/{id}/copies"));
    assert_eq!(copies["count"], 3, "{copies}");
    // Three sites (each under its own first path folder of the test
    // server) carry the story; their media label may well be the same
    // originating outlet (来源：…), as reposts name it.
    let sites: HashSet<String> = copies["copies"]
        .as_array()
        .expect("copies")
        .iter()
        .filter_map(|c| {
            let url = url::Url::parse(c["url"].as_str()?).ok()?;
            Some(url.path_segments()?.next()?.to_string())
        })
        .collect();
    assert_eq!(sites.len(), 3, "three sites carry the story: {copies}");
    assert_eq!(
        status_of(&app, "/api/pages/not-an-id/copies"),
        StatusCode::BAD_REQUEST
    );
    assert_eq!(
        status_of(&app, &format!("/api/pages/{id}/copies?limit=3")),
        StatusCode::BAD_REQUEST,
        "no parameters"
    );
    let stats = get_json(
        &app,
        "/api/stats?source=reposts&from=1998-01-01&to=1998-02-01&group_by=story",
    );
    assert_eq!(stats["group_by"], "story");
    assert_eq!(stats["total"], 30, "total counts pages once: {stats}");
    let page = get_json(&app, &format!("/api/pages/{id}"));
    assert_eq!(page["copies"], 3);
    assert!(
        page["simhash"].as_str().is_some_and(|s| s.len() == 16),
        "{page}"
    );
}
