//! End-to-end crawls against a loopback server: the real LibreOffice help pages
//! as a small site, robots.txt, de-duplication, redirects, status codes,
//! unreachable hosts, content types, size caps, conditional GET, cancellation.

mod util;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use crawler::{
    CharsetSource, CrawlEvent, FailureKind, MemoryQueue, QueueError, QueuedUrl, StoredCopy, Url,
    UrlHistory, UrlQueue, Validators,
};
use util::{
    failures, pages, run, run_with_history, run_with_queue, test_config, Reply, TestServer,
};

const START: &str = "/zh-TW/text/shared/optionen/macrosecurity.html";
const SITE_PAGES: [&str; 4] = [
    "/zh-TW/text/shared/optionen/macrosecurity.html",
    "/zh-TW/text/shared/optionen/macrosecurity_sl.html",
    "/zh-TW/text/shared/optionen/macrosecurity_ts.html",
    "/zh-TW/text/shared/01/securitywarning.html",
];
/// Linked from the fixture pages but not part of the fixtures.
const MISSING: [&str; 2] = [
    "/zh-TW/text/shared/05/new_help.html",
    "/zh-TW/text/shared/optionen/01030300.html",
];

/// Serves the fixture site (files under tests/fixtures/site) and `robots`.
async fn site(robots: Option<&'static str>) -> TestServer {
    let root = util::fixtures().join("site");
    let mut files = HashMap::new();
    for p in SITE_PAGES {
        let bytes = std::fs::read(root.join(p.trim_start_matches('/'))).expect("fixture page");
        files.insert(p.to_string(), bytes);
    }
    TestServer::start(move |req| {
        if req.path == "/robots.txt" {
            return match robots {
                Some(txt) => Reply::text(txt),
                None => Reply::status(404),
            };
        }
        match files.get(&req.path) {
            // No charset parameter: the page's own <meta charset> is used.
            Some(body) => Reply::with_type("text/html", body.clone()),
            None => Reply::status(404),
        }
    })
    .await
}

#[tokio::test]
async fn crawls_the_site_once_per_url() {
    let server = site(Some("User-agent: *\nDisallow: /private/\n")).await;
    // The same start page twice, spelled differently: normalised to one URL.
    let seeds = vec![
        server.url(START),
        Url::parse(&format!("HTTP://{}{}#top", server.addr, START)).expect("url"),
    ];
    let (summary, events) = run(test_config(seeds)).await;

    let got = pages(&events);
    let mut urls: Vec<String> = got
        .iter()
        .map(|p| Url::parse(&p.url).expect("url").path().to_string())
        .collect();
    urls.sort();
    let mut want: Vec<String> = SITE_PAGES.iter().map(|s| s.to_string()).collect();
    want.sort();
    assert_eq!(urls, want);
    assert_eq!(summary.pages, 4);
    assert_eq!(
        summary.failures.get("http_404"),
        Some(&2),
        "{:?}",
        summary.failures
    );
    for p in SITE_PAGES.iter().chain(MISSING.iter()) {
        assert_eq!(server.hits(p), 1, "{p} requested exactly once");
    }
    assert_eq!(server.hits("/robots.txt"), 1);
    assert_eq!(summary.requests, 7);
    assert!(!summary.cancelled);

    let start = got
        .iter()
        .find(|p| p.url.ends_with(START))
        .expect("start page");
    assert_eq!(start.depth, 0);
    assert_eq!(start.status, 200);
    assert_eq!(start.status_line, "HTTP/1.1 200 OK");
    assert_eq!(start.charset, "UTF-8");
    assert_eq!(start.charset_source, CharsetSource::Meta);
    assert_eq!(start.ip_address.as_deref(), Some("127.0.0.1"));
    assert_eq!(start.content_type, "text/html");
    assert_eq!(
        start.header("content-length"),
        Some(start.body.len().to_string().as_str())
    );
    assert_eq!(start.extract.title.as_deref(), Some("巨集安全性"));
    assert_eq!(start.extract.language.as_deref(), Some("zh"));
    assert!(start.extract.body_text.contains("當文件包含一或多個巨集時"));
    // <base href="../../../../"> makes the relative links absolute from the root.
    let sl = server
        .url("/zh-TW/text/shared/optionen/macrosecurity_sl.html")
        .to_string();
    assert!(
        start.extract.links.contains(&sl),
        "{:?}",
        start.extract.links
    );
    let warning = got
        .iter()
        .find(|p| p.url.ends_with("securitywarning.html"))
        .expect("page");
    assert_eq!(warning.depth, 1);
    assert_eq!(
        summary.bytes,
        got.iter().map(|p| p.body.len() as u64).sum::<u64>()
    );
}

#[tokio::test]
async fn robots_disallow_is_honoured() {
    let server = site(Some(
        "User-agent: otherbot\nDisallow: /\n\nUser-agent: harvest\nDisallow: /zh-TW/text/shared/01/\n",
    ))
    .await;
    let (summary, events) = run(test_config(vec![server.url(START)])).await;
    assert_eq!(server.hits("/zh-TW/text/shared/01/securitywarning.html"), 0);
    assert_eq!(summary.failures.get("robots_disallowed"), Some(&1));
    assert!(failures(&events)
        .iter()
        .any(|(u, k)| u.ends_with("securitywarning.html") && *k == FailureKind::RobotsDisallowed));
    assert_eq!(summary.pages, 3);

    // Ignoring robots.txt fetches it.
    let mut cfg = test_config(vec![server.url(START)]);
    cfg.respect_robots = false;
    let (summary, _) = run(cfg).await;
    assert_eq!(summary.pages, 4);
    assert_eq!(server.hits("/zh-TW/text/shared/01/securitywarning.html"), 1);
}

#[tokio::test]
async fn robots_server_error_disallows_the_host() {
    let server = TestServer::start(|req| match req.path.as_str() {
        "/robots.txt" => Reply::status(503),
        _ => Reply::html("<html><body>never</body></html>"),
    })
    .await;
    let (summary, events) = run(test_config(vec![server.url("/index.html")])).await;
    assert_eq!(server.hits("/index.html"), 0);
    assert_eq!(
        failures(&events).first().map(|f| f.1),
        Some(FailureKind::RobotsDisallowed)
    );
    assert_eq!(summary.pages, 0);
}

#[tokio::test]
async fn crawl_delay_from_robots_spaces_requests() {
    let server = TestServer::start(|req| match req.path.as_str() {
        "/robots.txt" => Reply::text("User-agent: *\nCrawl-delay: 1\n"),
        "/" => Reply::html(r#"<a href="/a">a</a>"#),
        _ => Reply::html("<p>leaf</p>"),
    })
    .await;
    let started = std::time::Instant::now();
    let (summary, _) = run(test_config(vec![server.url("/")])).await;
    assert_eq!(summary.pages, 2);
    // robots.txt, then "/" one second later, then "/a" one second after that.
    assert!(
        started.elapsed() >= Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn redirects_are_followed_checked_and_loops_detected() {
    let server = TestServer::start(|req| {
        let p = req.path.as_str();
        if let Some(n) = p.strip_prefix("/chain/") {
            let n: u32 = n.parse().unwrap_or(0);
            return Reply::redirect(302, &format!("/chain/{}", n + 1));
        }
        match p {
            "/robots.txt" => Reply::status(404),
            "/" => Reply::html(
                r#"<a href="/moved">m</a><a href="/loop-a">l</a><a href="/chain/0">c</a><a href="/self">s</a><a href="/away">x</a><a href="/to-start">t</a>"#,
            ),
            "/moved" => Reply::redirect(301, "/target.html"),
            "/target.html" => Reply::html("<title>Target</title><p>arrived</p>"),
            "/loop-a" => Reply::redirect(302, "/loop-b"),
            "/loop-b" => Reply::redirect(302, "/loop-a"),
            "/self" => Reply::redirect(302, "/self"),
            "/away" => Reply::redirect(302, "http://example.invalid/elsewhere"),
            "/to-start" => Reply::redirect(302, "/"),
            _ => Reply::status(404),
        }
    })
    .await;
    let mut cfg = test_config(vec![server.url("/")]);
    cfg.max_redirects = 3;
    let (summary, events) = run(cfg).await;

    let got = pages(&events);
    let moved = got
        .iter()
        .find(|p| p.requested_url.ends_with("/moved"))
        .expect("redirected page");
    assert!(moved.url.ends_with("/target.html"));
    assert_eq!(moved.extract.title.as_deref(), Some("Target"));
    let kinds: HashMap<String, FailureKind> = failures(&events)
        .into_iter()
        .map(|(u, k)| (Url::parse(&u).expect("url").path().to_string(), k))
        .collect();
    assert_eq!(kinds.get("/loop-a"), Some(&FailureKind::RedirectLoop));
    assert_eq!(kinds.get("/self"), Some(&FailureKind::RedirectLoop));
    assert_eq!(kinds.get("/chain/0"), Some(&FailureKind::TooManyRedirects));
    assert_eq!(
        kinds.get("/away"),
        Some(&FailureKind::Other),
        "out-of-scope redirect"
    );
    // /chain/0 + 3 hops followed, the 4th Location is not requested.
    assert_eq!(server.hits("/chain/3"), 1);
    assert_eq!(server.hits("/chain/4"), 0);
    assert_eq!(server.hits("/loop-b"), 1);
    assert_eq!(
        server.hits("/"),
        1,
        "a redirect to an already crawled URL is not refetched"
    );
    assert_eq!(server.hits("/target.html"), 1);
    assert_eq!(summary.duplicate_redirects, 1);
    assert_eq!(summary.pages, 2);
}

#[tokio::test]
async fn http_errors_are_counted_and_5xx_retried() {
    let server = TestServer::start(|req| match req.path.as_str() {
        "/robots.txt" => Reply::status(404),
        "/" => Reply::html(r#"<a href="/missing">m</a> <a href="/broken">b</a>"#),
        "/broken" => Reply::status(500),
        _ => Reply::status(404),
    })
    .await;
    let mut cfg = test_config(vec![server.url("/")]);
    cfg.retries = 2;
    let (summary, _) = run(cfg).await;
    assert_eq!(summary.failures.get("http_404"), Some(&1));
    assert_eq!(summary.failures.get("http_500"), Some(&1));
    assert_eq!(server.hits("/broken"), 3, "one try and two retries");
    assert_eq!(server.hits("/missing"), 1, "4xx is not retried");
}

#[tokio::test]
async fn unreachable_port_is_a_connect_failure() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    drop(listener);
    let url = Url::parse(&format!("http://{addr}/page.html")).expect("url");
    let mut cfg = test_config(vec![url]);
    cfg.retries = 1;
    let (summary, events) = run(cfg).await;
    assert_eq!(
        failures(&events).first().map(|f| f.1),
        Some(FailureKind::Connect)
    );
    assert_eq!(summary.failures.get("connect"), Some(&1));
    assert_eq!(summary.pages, 0);
}

#[tokio::test]
async fn non_html_and_oversized_bodies_fail() {
    let big = format!(
        "<html><body>{}</body></html>",
        "<p>harvest</p>".repeat(200_000)
    );
    let server = TestServer::start(move |req| match req.path.as_str() {
        "/robots.txt" => Reply::status(404),
        "/" => Reply::html(r#"<a href="/data.json">j</a><a href="/logo.png">p</a><a href="/big.html">b</a><a href="/page.xhtml">x</a>"#),
        "/data.json" => Reply::with_type("application/json", br#"{"a":1}"#.to_vec()),
        "/logo.png" => Reply::with_type("image/png", vec![0x89, b'P', b'N', b'G']),
        "/big.html" => Reply::html(big.clone()),
        "/page.xhtml" => Reply::with_type("application/xhtml+xml", "<html><title>X</title></html>"),
        _ => Reply::status(404),
    })
    .await;
    let mut cfg = test_config(vec![server.url("/")]);
    cfg.max_body_bytes = 1024 * 1024;
    let (summary, events) = run(cfg).await;
    assert_eq!(summary.failures.get("not_html"), Some(&2));
    assert_eq!(summary.failures.get("too_large"), Some(&1));
    assert!(failures(&events)
        .iter()
        .any(|(u, k)| u.ends_with("/big.html") && *k == FailureKind::TooLarge));
    assert_eq!(summary.pages, 2, "the start page and the xhtml page");
}

struct KnownEtag;

impl UrlHistory for KnownEtag {
    fn validators(&self, url: &Url) -> Option<Validators> {
        (url.path() == "/").then(|| Validators {
            etag: Some("\"v1\"".into()),
            last_modified: Some("Wed, 27 Nov 2013 08:36:32 GMT".into()),
        })
    }
}

#[tokio::test]
async fn conditional_get_reports_not_modified() {
    let received: Arc<std::sync::Mutex<Vec<util::Request>>> = Arc::default();
    let seen = received.clone();
    let server = TestServer::start(move |req| match req.path.as_str() {
        "/robots.txt" => Reply::status(404),
        "/" if req.header("if-none-match") == Some("\"v1\"")
            && req.header("if-modified-since").is_some() =>
        {
            seen.lock().unwrap().push(req.clone());
            Reply::Full {
                status: 304,
                headers: vec![],
                body: vec![],
            }
        }
        _ => Reply::html("<p>fresh</p>"),
    })
    .await;
    let (summary, events) =
        run_with_history(test_config(vec![server.url("/")]), Arc::new(KnownEtag)).await;
    assert_eq!(summary.not_modified, 1);
    assert_eq!(summary.pages, 0);
    let Some(CrawlEvent::NotModified(p)) = events.first() else {
        panic!("{events:?}");
    };
    assert!(p.url.ends_with('/'));
    // The request to archive is the one the server received, line and headers in order.
    let on_wire = received.lock().unwrap()[0].clone();
    let sent = p.request.clone().expect("the request is kept");
    assert_eq!(sent.request_line, on_wire.line);
    assert_eq!(sent.headers, on_wire.headers);
    assert_eq!(
        sent.headers
            .iter()
            .map(|(k, _)| k.as_str())
            .collect::<Vec<_>>(),
        [
            "host",
            "user-agent",
            "accept",
            "accept-encoding",
            "if-none-match",
            "if-modified-since"
        ]
    );
}

/// Knows the root page: validators and a stored copy linking to /a and /b.
struct StoredRoot;

impl UrlHistory for StoredRoot {
    fn validators(&self, url: &Url) -> Option<Validators> {
        KnownEtag.validators(url)
    }

    fn stored_copy(&self, url: &Url) -> Option<StoredCopy> {
        (url.path() == "/").then(|| StoredCopy {
            body: b"<html><body><a href=/a>a</a> <a href=/b>b</a></body></html>".to_vec(),
            content_type: "text/html; charset=utf-8".into(),
        })
    }
}

/// Regression (issue 10): a second crawl stopped at the first 304, which has
/// no body and so no links; an updated article behind an unchanged section
/// page was never fetched again.
#[tokio::test]
async fn not_modified_pages_are_followed_through_their_stored_copy() {
    let server = TestServer::start(|req| match req.path.as_str() {
        "/robots.txt" => Reply::status(404),
        "/" => Reply::Full {
            status: 304,
            headers: vec![("etag".into(), "\"v1\"".into())],
            body: vec![],
        },
        _ => Reply::html("<p>article</p>"),
    })
    .await;
    let (summary, events) =
        run_with_history(test_config(vec![server.url("/")]), Arc::new(StoredRoot)).await;
    assert_eq!(summary.not_modified, 1);
    let mut got: Vec<String> = pages(&events).iter().map(|p| p.url.clone()).collect();
    got.sort();
    assert_eq!(
        got,
        vec![server.url("/a").to_string(), server.url("/b").to_string()]
    );
    let not_modified = events.iter().find_map(|e| match e {
        CrawlEvent::NotModified(p) => Some(p),
        _ => None,
    });
    let Some(p) = not_modified else {
        panic!("no NotModified event in {events:?}")
    };
    assert_eq!(p.links_found, Some(2));
    assert!(p.status_line.contains("304"), "{}", p.status_line);
}

/// A queue that already holds URLs of an interrupted run: they are fetched,
/// and a seed the run had seen is not fetched again.
#[tokio::test]
async fn a_crawl_continues_from_the_queue_it_is_given() {
    let server = TestServer::start(|req| match req.path.as_str() {
        "/robots.txt" => Reply::status(404),
        "/" => Reply::html("<a href=/x>x</a>"),
        p => Reply::html(format!("<p>page {p}</p>")),
    })
    .await;
    let queue = Arc::new(MemoryQueue::new());
    let seed = server.url("/");
    assert_eq!(queue.mark_seen(&seed), Ok(true));
    let left = vec![
        QueuedUrl::new(server.url("/left1"), 1),
        QueuedUrl::new(server.url("/left2"), 1),
    ];
    assert_eq!(queue.push(left), Ok(2));
    let (summary, events) = run_with_queue(
        test_config(vec![seed]),
        Arc::new(crawler::NoHistory),
        queue.clone(),
    )
    .await;
    assert!(summary.is_ok(), "{summary:?}");
    let mut got: Vec<String> = pages(&events).iter().map(|p| p.url.clone()).collect();
    got.sort();
    assert_eq!(
        got,
        vec![
            server.url("/left1").to_string(),
            server.url("/left2").to_string()
        ]
    );
}

/// Hands out the URLs of a [`MemoryQueue`], those whose path starts with
/// `/new` marked as never captured (as the binary's table queue does).
struct MarkingQueue(MemoryQueue);

impl UrlQueue for MarkingQueue {
    fn push(&self, urls: Vec<QueuedUrl>) -> Result<usize, QueueError> {
        self.0.push(urls)
    }
    fn mark_seen(&self, url: &Url) -> Result<bool, QueueError> {
        self.0.mark_seen(url)
    }
    fn take(&self, max: usize) -> Result<Vec<QueuedUrl>, QueueError> {
        let mut urls = self.0.take(max)?;
        for q in &mut urls {
            q.uncaptured = q.url.path().starts_with("/new");
        }
        Ok(urls)
    }
    fn finish(&self, urls: &[String]) -> Result<(), QueueError> {
        self.0.finish(urls)
    }
    fn pending(&self) -> u64 {
        self.0.pending()
    }
}

/// Records the URLs it is asked validators for; has a stored copy of
/// `/done` that links to `/after`.
#[derive(Default)]
struct Asked(std::sync::Mutex<Vec<String>>);

impl UrlHistory for Asked {
    fn validators(&self, url: &Url) -> Option<Validators> {
        self.0.lock().unwrap().push(url.path().to_string());
        None
    }

    fn stored_copy(&self, url: &Url) -> Option<StoredCopy> {
        (url.path() == "/done").then(|| StoredCopy {
            body: b"<html><body><a href=/after>after</a></body></html>".to_vec(),
            content_type: "text/html".into(),
        })
    }
}

/// A URL the queue marks as never captured is fetched without asking the
/// history for validators (a round trip to a remote index a page); a URL an
/// interrupted run already archived (`stored_in_run`) is not fetched at all,
/// its stored copy's links are.
#[tokio::test]
async fn uncaptured_urls_skip_the_validators_and_stored_ones_the_fetch() {
    let server = TestServer::start(|req| match req.path.as_str() {
        "/robots.txt" => Reply::status(404),
        p => Reply::html(format!("<p>page {p}</p>")),
    })
    .await;
    let queue = Arc::new(MarkingQueue(MemoryQueue::new()));
    let seed = server.url("/");
    assert_eq!(queue.mark_seen(&seed), Ok(true));
    let left = ["/new1", "/known", "/done"]
        .map(|p| QueuedUrl::new(server.url(p), 1))
        .to_vec();
    assert_eq!(queue.push(left), Ok(3));
    let mut cfg = test_config(vec![seed]);
    cfg.stored_in_run = Arc::new(HashMap::from([(
        server.url("/done").to_string(),
        server.url("/done").to_string(),
    )]));
    let history = Arc::new(Asked::default());
    let (summary, events) = run_with_queue(cfg, history.clone(), queue).await;
    let summary = summary.expect("crawl");
    let mut got: Vec<String> = pages(&events)
        .iter()
        .map(|p| Url::parse(&p.url).unwrap().path().to_string())
        .collect();
    got.sort();
    assert_eq!(got, ["/after", "/known", "/new1"]);
    let mut asked = history.0.lock().unwrap().clone();
    asked.sort();
    assert_eq!(asked, ["/after", "/known"], "validators asked for");
    assert_eq!(server.hits("/done"), 0, "archived before: not fetched");
    assert_eq!(summary.taken_up, 1);
}

/// A queue whose store fails: the crawl stops with the queue's error instead
/// of going on and losing discovered URLs.
#[tokio::test]
async fn a_failing_queue_stops_the_crawl_with_its_error() {
    struct Broken;
    impl UrlQueue for Broken {
        fn push(&self, _: Vec<QueuedUrl>) -> Result<usize, QueueError> {
            Err(QueueError("disk full".into()))
        }
        fn mark_seen(&self, _: &Url) -> Result<bool, QueueError> {
            Ok(true)
        }
        fn take(&self, _: usize) -> Result<Vec<QueuedUrl>, QueueError> {
            Ok(Vec::new())
        }
        fn finish(&self, _: &[String]) -> Result<(), QueueError> {
            Ok(())
        }
        fn pending(&self) -> u64 {
            0
        }
    }
    let (tx, _rx) = tokio::sync::mpsc::channel(16);
    let result = crawler::crawl_with_queue(
        test_config(vec![
            Url::parse("http://127.0.0.1:9/").unwrap_or_else(|_| unreachable!())
        ]),
        util::Extracting,
        Arc::new(crawler::NoHistory),
        Arc::new(Broken),
        tx,
        crawler::CancellationToken::new(),
    )
    .await;
    assert!(
        matches!(&result, Err(crawler::Error::Queue(e)) if e.0 == "disk full"),
        "{result:?}"
    );
}

/// Every page links to the next five: an endless site.
async fn endless_site() -> TestServer {
    TestServer::start(|req| {
        if req.path == "/robots.txt" {
            return Reply::status(404);
        }
        let n: u64 = req.path.trim_start_matches("/p/").parse().unwrap_or(0);
        let links: String = (1..=5)
            .map(|i| format!(r#"<a href="/p/{}">next</a>"#, n * 5 + i))
            .collect();
        Reply::html(format!("<html><body><p>page {n}</p>{links}</body></html>"))
    })
    .await
}

#[tokio::test]
async fn dropping_the_receiver_stops_the_crawl() {
    let server = endless_site().await;
    let (tx, mut rx) = tokio::sync::mpsc::channel(2);
    let cfg = test_config(vec![server.url("/p/0")]);
    let crawl = tokio::spawn(crawler::crawl(
        cfg,
        util::Extracting,
        Arc::new(crawler::NoHistory),
        tx,
    ));
    for _ in 0..3 {
        assert!(rx.recv().await.is_some());
    }
    drop(rx);
    let summary = tokio::time::timeout(Duration::from_secs(10), crawl)
        .await
        .expect("crawl stops soon after the receiver is dropped")
        .expect("join")
        .expect("crawl");
    assert!(summary.cancelled);
    let total: u64 = server.all_hits().values().sum();
    assert!(
        total < 40,
        "backpressure kept the crawl small, got {total} requests"
    );
}

#[tokio::test]
async fn cancellation_token_and_limits() {
    let server = endless_site().await;
    let token = crawler::CancellationToken::new();
    let (tx, mut rx) = tokio::sync::mpsc::channel(64);
    let crawl = tokio::spawn(crawler::crawl_with_cancel(
        test_config(vec![server.url("/p/0")]),
        util::Extracting,
        Arc::new(crawler::NoHistory),
        tx,
        token.clone(),
    ));
    assert!(rx.recv().await.is_some());
    token.cancel();
    let summary = tokio::time::timeout(Duration::from_secs(10), crawl)
        .await
        .expect("cancel is prompt")
        .expect("join")
        .expect("crawl");
    assert!(summary.cancelled);

    // max_pages and max_depth bound the endless site.
    let mut cfg = test_config(vec![server.url("/p/0")]);
    cfg.max_pages = Some(7);
    let (summary, _) = run(cfg).await;
    assert_eq!(summary.pages, 7);
    let mut cfg = test_config(vec![server.url("/p/0")]);
    cfg.max_depth = Some(1);
    let (summary, events) = run(cfg).await;
    assert_eq!(summary.pages, 6, "the seed and its five links");
    assert!(pages(&events).iter().all(|p| p.depth <= 1));
}

#[tokio::test]
async fn invalid_config_is_an_error() {
    let (tx, _rx) = tokio::sync::mpsc::channel(1);
    let res = crawler::crawl(
        crawler::CrawlConfig::default(),
        util::Extracting,
        Arc::new(crawler::NoHistory),
        tx,
    )
    .await;
    assert!(matches!(res, Err(crawler::Error::Config(_))));
}

/// A host with `n` linked pages under `/p/`.
async fn fan_out_site(n: u32) -> TestServer {
    TestServer::start(move |req| match req.path.as_str() {
        "/" => Reply::html(
            (1..=n)
                .map(|i| format!(r#"<a href="/p/{i}">{i}</a>"#))
                .collect::<String>(),
        ),
        _ => Reply::html("<p>leaf</p>"),
    })
    .await
}

#[tokio::test]
async fn a_busy_host_does_not_starve_another() {
    let delay = Duration::from_millis(300);
    let busy = fan_out_site(8).await;
    let small = fan_out_site(2).await;
    let mut cfg = test_config(vec![busy.url("/"), small.url("/")]);
    cfg.politeness_delay = delay;
    cfg.respect_robots = false;
    cfg.concurrency = 4;
    let (tx, mut rx) = tokio::sync::mpsc::channel(64);
    let started = std::time::Instant::now();
    let crawl = tokio::spawn(crawler::crawl(
        cfg,
        util::Extracting,
        Arc::new(crawler::NoHistory),
        tx,
    ));
    let small_prefix = format!("http://{}/", small.addr);
    let (mut small_done, mut busy_done, mut small_pages) = (Duration::ZERO, Duration::ZERO, 0);
    while let Some(ev) = rx.recv().await {
        if let CrawlEvent::Page(p) = ev {
            if p.url.starts_with(&small_prefix) {
                small_pages += 1;
                small_done = started.elapsed();
            } else {
                busy_done = started.elapsed();
            }
        }
    }
    let summary = crawl.await.expect("join").expect("crawl");
    assert_eq!(summary.pages, 12);
    assert_eq!(small_pages, 3);
    // The busy host needs 9 requests 300 ms apart; the small one 3.
    assert!(
        busy_done >= delay * 8,
        "busy host respected its delay: {busy_done:?}"
    );
    assert!(
        small_done < delay * 5,
        "small host finished early: {small_done:?}"
    );
    for i in 1..=8 {
        assert_eq!(busy.hits(&format!("/p/{i}")), 1);
    }
}

#[tokio::test]
async fn unresolvable_host_is_a_dns_failure() {
    // `.invalid` never resolves (RFC 2606).
    let url = Url::parse("http://harvest-test.invalid/page.html").expect("url");
    let (summary, events) = run(test_config(vec![url])).await;
    assert_eq!(
        failures(&events).first().map(|f| f.1),
        Some(FailureKind::Dns),
        "{events:?}"
    );
    assert_eq!(summary.failures.get("dns"), Some(&1));
}

/// A 429 with `Retry-After: 1` is waited out and retried; the page arrives.
#[tokio::test]
async fn too_many_requests_is_retried_after_the_servers_wait() {
    let calls = Arc::new(std::sync::atomic::AtomicU32::new(0));
    let c2 = calls.clone();
    let server = TestServer::start(move |req| match req.path.as_str() {
        "/robots.txt" => Reply::status(404),
        _ => {
            if c2.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 0 {
                Reply::Full {
                    status: 429,
                    headers: vec![("Retry-After".into(), "1".into())],
                    body: b"slow down".to_vec(),
                }
            } else {
                Reply::html("<p>ok</p>")
            }
        }
    })
    .await;
    let mut cfg = test_config(vec![server.url("/")]);
    cfg.retries = 1;
    let started = std::time::Instant::now();
    let (summary, _) = run(cfg).await;
    assert_eq!(summary.pages, 1, "{summary:?}");
    assert!(
        started.elapsed() >= Duration::from_millis(950),
        "the Retry-After wait was honoured: {:?}",
        started.elapsed()
    );
}

/// The SSRF guard: without allow_private, links to loopback and private
/// addresses are refused and counted; a loopback seed is a config error.
#[tokio::test]
async fn private_addresses_are_refused_unless_allowed() {
    let mut cfg = test_config(vec![
        Url::parse("http://127.0.0.1:9/").unwrap_or_else(|_| unreachable!())
    ]);
    cfg.allow_private = false;
    let (tx, _rx) = tokio::sync::mpsc::channel(4);
    let err = crawler::crawl(cfg, util::Extracting, Arc::new(crawler::NoHistory), tx).await;
    assert!(
        matches!(&err, Err(crawler::Error::Config(m)) if m.contains("allow_private")),
        "{err:?}"
    );
    let seeds = [Url::parse("http://example.com/").unwrap_or_else(|_| unreachable!())];
    let mut f = crawler::frontier::Frontier::new(
        crawler::frontier::ScopeMatcher::new(crawler::Scope::Any, &seeds),
        None,
        None,
    )
    .with_traps(crawler::guard::TrapFilter::new(
        crawler::guard::TrapLimits::default(),
        false,
    ));
    let links: Vec<Url> = [
        "http://169.254.169.254/latest/meta-data/",
        "http://10.0.0.7/admin",
        "http://localhost/",
        "http://example.com/ok",
    ]
    .iter()
    .filter_map(|s| Url::parse(s).ok())
    .collect();
    assert_eq!(f.push_all(&links, 1), Ok(1));
    assert_eq!(f.refused().get("private_address"), Some(&3));
}

/// Issue 11: a feed's pubDate is the publish time of a page that states
/// none (provenance `feed`), and a sitemap's news publication_date likewise
/// (`sitemap`); a page's own byline wins over the feed; the configured zone
/// reads a byline without an offset.
#[tokio::test]
async fn feed_and_sitemap_times_are_candidates_with_their_provenance() {
    let server = TestServer::start(|req| match req.path.as_str() {
        "/feed.xml" => Reply::with_type(
            "application/rss+xml",
            r#"<?xml version="1.0"?><rss version="2.0"><channel><title>t</title>
            <item><title>a</title><link>/a.html</link><pubDate>Mon, 03 Jun 2024 08:15:00 +0800</pubDate></item>
            <item><title>b</title><link>/b.html</link><pubDate>Mon, 03 Jun 2024 08:15:00 +0800</pubDate></item>
            </channel></rss>"#,
        ),
        "/sitemap.xml" => Reply::with_type(
            "application/xml",
            r#"<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"
              xmlns:news="http://www.google.com/schemas/sitemap-news/0.9">
            <url><loc>/c.html</loc><news:news><news:publication><news:name>X</news:name><news:language>en</news:language></news:publication>
            <news:publication_date>2024-06-02T10:00:00Z</news:publication_date><news:title>c</news:title></news:news></url>
            </urlset>"#,
        ),
        "/" => Reply::html("<html><body><p>The hub links nothing: the pages come from the feed and the sitemap.</p></body></html>"),
        "/a.html" => Reply::html("<html><head><title>A page without a date</title></head><body><h1>A page without a date</h1><p>Text of a page that states no time at all, long enough to be an article body.</p></body></html>"),
        "/b.html" => Reply::html("<html><head><title>B page</title></head><body><h1>B page</h1><p class=\"byline\">Published: 2024-06-01 09:30</p><p>Text of a page that states its own publish time in its byline.</p></body></html>"),
        "/c.html" => Reply::html("<html><head><title>C page</title></head><body><h1>C page</h1><p>No date on this page either, only in the news sitemap that lists it.</p></body></html>"),
        _ => Reply::status(404),
    })
    .await;
    let mut cfg = test_config(vec![server.url("/")]);
    cfg.feeds = vec![server.url("/feed.xml")];
    cfg.sitemaps = vec![server.url("/sitemap.xml")];
    cfg.time_zone = Some(chrono_tz::Europe::Berlin);
    let (_, events) = run(cfg).await;
    let got: HashMap<String, (Option<String>, Option<String>)> = pages(&events)
        .into_iter()
        .map(|p| {
            (
                p.url.rsplit('/').next().unwrap_or_default().to_string(),
                (
                    p.extract.published.map(|t| t.to_rfc3339()),
                    p.extract.published_from.map(|f| f.to_string()),
                ),
            )
        })
        .collect();
    let want = |t: &str, f: &str| (Some(t.to_string()), Some(f.to_string()));
    assert_eq!(got["a.html"], want("2024-06-03T00:15:00+00:00", "feed"));
    // 09:30 in Berlin (summer time, +02:00).
    assert_eq!(got["b.html"], want("2024-06-01T07:30:00+00:00", "text"));
    assert_eq!(got["c.html"], want("2024-06-02T10:00:00+00:00", "sitemap"));
}
