//! Page budgets (issue 13): deeply nested pages parse in bounded CPU time,
//! links are capped per page and by length and counted, and a page that is
//! slow to parse does not hold its host's next request.

mod util;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crawler::{CrawlEvent, NoHistory, Url};
use extract::budget::thread_cpu_time;
use extract::{extract_with, Limits, TimeContext};
use util::{Reply, TestServer};

fn nested_divs(n: usize) -> String {
    let mut s = String::with_capacity(n * 11 + 200);
    s.push_str("<html><head><title>Deep page</title></head><body><p>Before the pit.</p>");
    s.push_str(&"<div>".repeat(n));
    s.push_str("bottom text <a href=\"/bottom.html\">bottom</a>");
    s.push_str(&"</div>".repeat(n));
    s.push_str("<a href=\"/after.html\">after</a></body></html>");
    s
}

fn url(s: &str) -> Url {
    Url::parse(s).expect("static url")
}

/// Thread CPU time of `f` (the extraction runs on this thread).
fn cpu<T>(f: impl FnOnce() -> T) -> (T, Duration) {
    let t0 = thread_cpu_time();
    let out = f();
    (out, thread_cpu_time().saturating_sub(t0))
}

/// Before issue 13 these took 1.6 s, 37 s and over 2 minutes (release): the
/// tree builder's scope checks over a 25k..200k-deep stack of open elements.
#[test]
fn nested_divs_parse_within_a_bound() {
    for (n, bound) in [
        (25_000, Duration::from_millis(1_000)),
        (100_000, Duration::from_millis(2_500)),
        (200_000, Duration::from_millis(2_500)),
    ] {
        let html = nested_divs(n);
        let (x, used) = cpu(|| {
            extract_with(
                &html,
                &url("http://deep.test/pit.html"),
                &TimeContext::default(),
            )
        });
        assert!(
            used < bound,
            "{n} nested divs ({} bytes): {used:?} of CPU, bound {bound:?}",
            html.len()
        );
        assert_eq!(x.title.as_deref(), Some("Deep page"), "{n}");
        assert!(x.limits.flattened_tags > 0, "{n}: {:?}", x.limits);
        assert!(
            x.limits.depth > 10 * Limits::default().max_depth,
            "{n}: {:?}",
            x.limits
        );
        // Links come from the tokenizer over the whole page: none is lost.
        assert_eq!(
            x.links,
            vec![
                "http://deep.test/bottom.html",
                "http://deep.test/after.html"
            ],
            "{n}"
        );
        if html.len() <= extract::LARGE_PAGE_BYTES {
            assert!(x.body_text.contains("bottom text"), "{n}");
        }
    }
}

/// Other hostile shapes: nested formatting and table elements, misnested
/// formatting tags, nested lists, self-closing divs, nested marked elements
/// (every one read for a comment count).
#[test]
fn other_hostile_shapes_stay_within_the_bound() {
    let shapes: Vec<(&str, String)> = vec![
        ("nested b", "<b>".repeat(60_000)),
        ("nested table", "<table><tr><td>".repeat(15_000)),
        ("misnested b/p", "<b><p>x</b>".repeat(30_000)),
        ("nested ul", "<ul><li>".repeat(30_000)),
        ("self-closing div", "<div/>".repeat(60_000)),
        (
            "marked divs",
            "<div class=\"comment-count\">".repeat(20_000) + "12 comments",
        ),
        ("nested svg g", format!("<svg>{}", "<g>".repeat(60_000))),
        ("nested a", "<a href=/x>".repeat(40_000)),
        (
            "font with ids",
            (0..30_000).map(|i| format!("<font id={i}>")).collect(),
        ),
    ];
    for (name, html) in shapes {
        let (x, used) =
            cpu(|| extract_with(&html, &url("http://deep.test/"), &TimeContext::default()));
        assert!(used < Duration::from_millis(2_500), "{name}: {used:?}");
        let _ = x;
    }
}

#[test]
fn ordinary_pages_are_not_flattened() {
    let dir = util::fixtures().join("../../../extract/tests/fixtures/pages");
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).expect("fixtures") {
        let path = entry.expect("entry").path();
        if path.extension().and_then(|e| e.to_str()) != Some("html") {
            continue;
        }
        let bytes = std::fs::read(&path).expect("fixture");
        let text = crawler::charset::decode(&bytes, None).text;
        let x = extract_with(
            &text,
            &url("http://news.test/a.html"),
            &TimeContext::default(),
        );
        assert_eq!(
            x.limits.flattened_tags,
            0,
            "{}: {:?}",
            path.display(),
            x.limits
        );
        assert!(!x.limits.parse_truncated, "{}", path.display());
        assert!(x.limits.depth < 64, "{}: {:?}", path.display(), x.limits);
        seen += 1;
    }
    assert!(seen >= 5, "fixtures found: {seen}");
}

#[test]
fn links_are_capped_and_counted() {
    // 100,000 links on a 2.5 MB page (links from the tokenizer) under the
    // default cap, and 20,000 on a small one (links from the DOM) under 5,000.
    for (n, cap) in [(100_000usize, Limits::default().max_links), (20_000, 5_000)] {
        let mut html = String::from("<html><body>");
        for i in 0..n {
            html.push_str(&format!("<a href=\"/p/{i}\">{i}</a>"));
        }
        html.push_str("</body></html>");
        let limits = Limits {
            max_links: cap,
            ..Limits::default()
        };
        let x = extract::extract_limited(
            &html,
            &url("http://links.test/"),
            &TimeContext::default(),
            &limits,
        );
        assert_eq!(x.links.len(), cap, "{n}");
        assert_eq!(x.links[0], "http://links.test/p/0");
        assert_eq!(x.links[cap - 1], format!("http://links.test/p/{}", cap - 1));
        assert_eq!(x.limits.links_dropped, (n - cap) as u64, "{n}");
    }
}

#[test]
fn long_urls_are_dropped_and_counted() {
    let long = format!("/{}", "a".repeat(3_000));
    let huge = format!("/{}", "b".repeat(200_000));
    let html =
        format!("<a href=\"{long}\">long</a><a href=\"/ok\">ok</a><a href=\"{huge}\">huge</a>");
    let x = extract_with(&html, &url("http://links.test/"), &TimeContext::default());
    assert_eq!(x.links, vec!["http://links.test/ok"]);
    assert_eq!(x.limits.long_links, 2);
    let limits = Limits {
        max_url_length: 4_000,
        ..Limits::default()
    };
    let x = extract::extract_limited(
        &html,
        &url("http://links.test/"),
        &TimeContext::default(),
        &limits,
    );
    assert_eq!(x.links.len(), 2);
    assert_eq!(x.limits.long_links, 1);
}

/// A crawl of a site with a 200,000-deep page and a 100,000-link page:
/// every page arrives, the summary counts the limits, and the host's next
/// request goes out while the deep page is still being parsed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hostile_page_neither_blocks_its_host_nor_the_crawl() {
    let deep = nested_divs(200_000);
    let mut many = String::from("<html><body>");
    for i in 0..100_000 {
        many.push_str(&format!("<a href=\"/l/{i}\">{i}</a>"));
    }
    many.push_str("</body></html>");
    let requested: Arc<Mutex<Vec<(String, Instant)>>> = Arc::default();
    let log = requested.clone();
    let served = deep.clone();
    let server = TestServer::start(move |req| {
        log.lock()
            .expect("log")
            .push((req.path.clone(), Instant::now()));
        match req.path.as_str() {
            "/" => Reply::html(
                "<a href=\"/deep.html\">deep</a> <a href=\"/p1.html\">1</a> \
                 <a href=\"/many.html\">many</a> <a href=\"/p2.html\">2</a>",
            ),
            "/deep.html" => Reply::html(served.clone()),
            "/many.html" => Reply::html(many.clone()),
            "/robots.txt" => Reply::status(404),
            p => Reply::html(format!("<html><body><p>page {p}</p></body></html>")),
        }
    })
    .await;
    let mut cfg = util::test_config(vec![server.url("/")]);
    // Non-zero: one request of the host at a time (the scheduler skips busy hosts).
    cfg.politeness_delay = Duration::from_millis(1);
    cfg.max_depth = Some(1);
    let (tx, mut rx) = tokio::sync::mpsc::channel(16);
    let collector = tokio::spawn(async move {
        let mut events = Vec::new();
        while let Some(e) = rx.recv().await {
            events.push((e, Instant::now()));
        }
        events
    });
    let summary = tokio::time::timeout(
        Duration::from_secs(120),
        crawler::crawl(cfg, util::Extracting, Arc::new(NoHistory), tx),
    )
    .await
    .expect("crawl finished within 120 s")
    .expect("valid config");
    let events = collector.await.expect("collector");
    let page_at = |path: &str| {
        events.iter().find_map(|(e, t)| match e {
            CrawlEvent::Page(p) if p.url.ends_with(path) => Some((p.clone(), *t)),
            _ => None,
        })
    };
    let mut paths: Vec<String> = events
        .iter()
        .filter_map(|(e, _)| match e {
            CrawlEvent::Page(p) => Some(p.url.rsplit('/').next().unwrap_or("").to_string()),
            _ => None,
        })
        .collect();
    paths.sort();
    assert_eq!(paths, ["", "deep.html", "many.html", "p1.html", "p2.html"]);
    assert_eq!(summary.pages, 5);
    assert_eq!(summary.failure_count(), 0, "{:?}", summary.failures);
    assert_eq!(summary.pages_flattened, 1, "{summary:?}");
    assert_eq!(summary.pages_links_capped, 1, "{summary:?}");
    assert_eq!(summary.links_dropped, 50_000, "{summary:?}");
    let (deep_page, deep_done) = page_at("/deep.html").expect("deep page");
    assert_eq!(deep_page.body, deep.as_bytes(), "stored as fetched");
    assert_eq!(deep_page.extract.title.as_deref(), Some("Deep page"));
    let (many_page, _) = page_at("/many.html").expect("many page");
    assert_eq!(many_page.extract.links.len(), 50_000);
    // The host's next request left while the deep page was being parsed.
    let log = requested.lock().expect("log").clone();
    let deep_at = log
        .iter()
        .position(|(p, _)| p == "/deep.html")
        .expect("deep page requested");
    let (next_path, next_at) = log.get(deep_at + 1).expect("a request after the deep page");
    assert!(
        *next_at < deep_done,
        "{next_path} was requested {:?} after the deep page was reported",
        next_at.duration_since(deep_done)
    );
}
