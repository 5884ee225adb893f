//! Continuous archiving (issue 10): a job run twice on a site that changes
//! between the runs, and a crawl killed with SIGKILL and taken up again.
//! Real `harvest` processes against a loopback site that answers conditional
//! GETs with 304 and counts the requests of every path.

mod util;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::http::{header, HeaderMap, StatusCode, Uri};
use axum::response::Response;
use util::{
    assert_records_linked, assert_warcio_accepts, count_by, http_get, jsonl, start_serve,
    walk_packs, warcinfo_fields, Workspace,
};

/// A site whose pages the test changes; ETag = a hash of the body.
#[derive(Clone, Default)]
struct LiveSite {
    pages: Arc<Mutex<HashMap<String, Vec<u8>>>>,
    hits: Arc<Mutex<BTreeMap<String, u64>>>,
    delay: Arc<Mutex<Duration>>,
}

impl LiveSite {
    fn set(&self, path: &str, body: String) {
        self.pages
            .lock()
            .unwrap()
            .insert(path.to_string(), body.into_bytes());
    }

    fn set_bytes(&self, path: &str, body: Vec<u8>) {
        self.pages.lock().unwrap().insert(path.to_string(), body);
    }

    fn hits(&self) -> BTreeMap<String, u64> {
        self.hits.lock().unwrap().clone()
    }
}

fn etag(body: &[u8]) -> String {
    format!("\"{:016x}\"", xxhash_like(body))
}

/// FNV-1a: stable, enough for a test ETag.
fn xxhash_like(b: &[u8]) -> u64 {
    b.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &x| {
        (h ^ u64::from(x)).wrapping_mul(0x0100_0000_01b3)
    })
}

async fn answer(site: LiveSite, uri: Uri, headers: HeaderMap) -> Response {
    let path = uri.path().to_string();
    *site.hits.lock().unwrap().entry(path.clone()).or_default() += 1;
    let delay = *site.delay.lock().unwrap();
    if !delay.is_zero() {
        tokio::time::sleep(delay).await;
    }
    let body = site.pages.lock().unwrap().get(&path).cloned();
    let Some(body) = body else {
        return Response::builder()
            .status(StatusCode::NOT_FOUND)
            .body(Body::from("not found"))
            .unwrap();
    };
    let tag = etag(&body);
    if headers
        .get(header::IF_NONE_MATCH)
        .is_some_and(|v| v.as_bytes() == tag.as_bytes())
    {
        return Response::builder()
            .status(StatusCode::NOT_MODIFIED)
            .header(header::ETAG, tag)
            .body(Body::empty())
            .unwrap();
    }
    Response::builder()
        .status(StatusCode::OK)
        .header(header::CONTENT_TYPE, "text/html; charset=utf-8")
        .header(header::ETAG, tag)
        .body(Body::from(body))
        .unwrap()
}

struct Served {
    site: LiveSite,
    base: String,
    _rt: tokio::runtime::Runtime,
}

fn serve(site: LiveSite) -> Served {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let s2 = site.clone();
    let base = rt.block_on(async move {
        let app = axum::Router::new().fallback(move |uri: Uri, headers: HeaderMap| {
            let s = s2.clone();
            async move { answer(s, uri, headers).await }
        });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        format!("http://{addr}")
    });
    Served {
        site,
        base,
        _rt: rt,
    }
}

fn article(n: u32, comments: u32) -> String {
    format!(
        "<!DOCTYPE html><html><head><meta charset=utf-8><title>Article {n}</title>\
         <meta property=\"article:published_time\" content=\"2026-11-0{n}T08:00:00Z\"></head>\
         <body><h1>Article {n}</h1><p>Text of article number {n} about the harbour.</p>\
         <span class=\"comment-count\">{comments}</span></body></html>"
    )
}

fn section(articles: &[u32]) -> String {
    let links: String = articles
        .iter()
        .map(|n| format!("<li><a href=\"/a{n}.html\">Article {n}</a></li>"))
        .collect();
    format!(
        "<!DOCTYPE html><html><head><meta charset=utf-8><title>News</title></head>\
         <body><ul>{links}</ul></body></html>"
    )
}

fn job_run(ws: &Workspace) -> serde_json::Value {
    let out = ws.harvest(&["jobs", "run", "news", "--quiet", "--json"]);
    serde_json::from_slice(&out.stdout).expect("jobs run --json prints JSON")
}

#[test]
fn a_job_run_twice_archives_new_and_changed_pages_once_each() {
    let served = serve(LiveSite::default());
    let site = &served.site;
    site.set("/index.html", section(&[1, 2, 3]));
    for n in 1..=3 {
        site.set(&format!("/a{n}.html"), article(n, 10 * n));
    }
    let seed = format!("{}/index.html", served.base);
    let ws = Workspace::new(&seed, "live", None);
    ws.configure(|raw| {
        raw.jobs = vec![harvest::jobs::RawJob {
            job: harvest::jobs::JobKeys {
                name: "news".into(),
                recrawl: harvest::jobs::RawRecrawl {
                    revisit_steps: Some(vec!["3s".into()]),
                    ..Default::default()
                },
                ..Default::default()
            },
            crawl: harvest::config::RawCrawl {
                seeds: vec![seed.clone()],
                ..Default::default()
            },
        }];
    });

    let first = job_run(&ws);
    assert_eq!(
        (first["pages"].as_u64(), first["new"].as_u64()),
        (Some(4), Some(4)),
        "{first}"
    );
    let between = chrono::Utc::now();
    // The site changes: a new article, a changed one (more comments).
    site.set("/index.html", section(&[1, 2, 3, 4]));
    site.set("/a1.html", article(1, 99));
    site.set("/a4.html", article(4, 1));
    std::thread::sleep(Duration::from_millis(3200)); // the articles' 3 s revisit is due
    let second = job_run(&ws);
    // A third run right away: nothing is due but the hub, whose 304 still
    // leads to its (stored) links; the articles are not requested.
    let before = site.hits();
    let third = job_run(&ws);
    let after = site.hits();
    assert_eq!(second["new"].as_u64(), Some(1), "a4: {second}");
    assert_eq!(
        second["changed"].as_u64(),
        Some(2),
        "index and a1: {second}"
    );
    assert_eq!(second["not_modified"].as_u64(), Some(2), "a2, a3: {second}");

    // One index row per URL; a1's comment count moved.
    let rows = jsonl(&ws.harvest(&["query", "--format", "jsonl", "--limit", "100"]));
    let urls: Vec<String> = rows
        .iter()
        .map(|r| r["url"].as_str().unwrap_or_default().to_string())
        .collect();
    let distinct: BTreeSet<&String> = urls.iter().collect();
    assert_eq!((urls.len(), distinct.len()), (5, 5), "{urls:?}");
    let a1 = rows
        .iter()
        .find(|r| r["url"].as_str().is_some_and(|u| u.ends_with("/a1.html")))
        .expect("a1 indexed");
    assert_eq!(a1["comments"].as_u64(), Some(99), "{a1}");

    // The packs: 4 + 3 responses, 2 + 1 revisits (server-not-modified).
    let records = walk_packs(&ws);
    let kinds = count_by(records.iter().map(|r| r.kind.as_str()));
    assert_eq!(
        kinds,
        BTreeMap::from([("response", 7), ("revisit", 3)]),
        "{kinds:?}"
    );
    for pack in ws.packs() {
        assert_warcio_accepts(&pack);
        assert_eq!(warcinfo_fields(&pack)["isPartOf"], "news", "the job");
    }
    // Every capture has its request; a 304's request is the conditional GET that was sent.
    let links = assert_records_linked(&ws);
    assert_eq!(links.captures, 10);
    let a2_url = format!("{}/a2.html", served.base);
    let a2: Vec<_> = links
        .requests
        .iter()
        .filter(|(u, _, _)| *u == a2_url)
        .map(|(_, _, h)| h)
        .collect();
    assert_eq!(a2.len(), 2, "first fetch and the 304");
    assert!(!a2[0].contains_key("if-none-match"), "{:?}", a2[0]);
    assert!(a2[1].contains_key("if-none-match"), "{:?}", a2[1]);

    // Every version can be read back: a1 before and after its change, a2
    // through its 304 revisit (the payload of the capture it confirms).
    let a1 = format!("{}/a1.html", served.base);
    let a2 = format!("{}/a2.html", served.base);
    let at = between.to_rfc3339();
    assert_eq!(
        ws.harvest(&["get", &a1, "--at", &at]).stdout,
        article(1, 10).into_bytes()
    );
    assert_eq!(
        ws.harvest(&["get", &a1]).stdout,
        article(1, 99).into_bytes()
    );
    let now = chrono::Utc::now().to_rfc3339();
    assert_eq!(
        ws.harvest(&["get", &a2, "--at", &now]).stdout,
        article(2, 20).into_bytes()
    );
    let rec = ws.harvest(&["get", &a2, "--at", &now, "--record"]).stdout;
    assert!(
        String::from_utf8_lossy(&rec).contains("revisit/server-not-modified"),
        "the 304's own record"
    );
    let early = ws.harvest_raw(&["get", &a1, "--at", "2001-01-01"]);
    assert!(String::from_utf8_lossy(&early.stderr).contains("first captured"));

    assert_eq!(third["not_modified"].as_u64(), Some(1), "{third}");
    assert_eq!(third["not_due"].as_u64(), Some(4), "{third}");
    for n in 1..=4 {
        let p = format!("/a{n}.html");
        assert_eq!(before.get(&p), after.get(&p), "{p} fetched again");
    }
    // Every run is recorded.
    let status = ws.harvest(&["jobs", "status", "news", "--json"]);
    let runs = jsonl(&status);
    assert_eq!(runs.len(), 3, "{runs:?}");
    assert!(runs.iter().all(|r| r["status"] == "finished"), "{runs:?}");
}

/// A live site of `pages` pages `/p{n}.html` ("Page {n} {text}") linked
/// from `/index.html`, each answer delayed by `delay`.
fn index_site(pages: u32, text: &str, delay: Duration) -> Served {
    let served = serve(LiveSite::default());
    let mut index = String::from("<html><body>");
    for n in 0..pages {
        index.push_str(&format!("<a href=\"/p{n}.html\">{n}</a> "));
        served.site.set(
            &format!("/p{n}.html"),
            format!("<html><head><title>page {n}</title></head><body><p>Page {n} {text}</p></body></html>"),
        );
    }
    index.push_str("</body></html>");
    served.site.set("/index.html", index);
    *served.site.delay.lock().unwrap() = delay;
    served
}

/// `harvest crawl --quiet` on `ws` as a child process (to be killed), its output discarded.
fn spawn_crawl(ws: &Workspace) -> std::process::Child {
    spawn_crawl_with(ws, std::process::Stdio::null)
}

/// `harvest crawl --quiet` on `ws` as a child process, stdout and stderr each from `output`.
fn spawn_crawl_with(ws: &Workspace, output: fn() -> std::process::Stdio) -> std::process::Child {
    std::process::Command::new(env!("CARGO_BIN_EXE_harvest"))
        .arg("-c")
        .arg(&ws.config)
        .args(["crawl", "--quiet"])
        .stdout(output())
        .stderr(output())
        .spawn()
        .expect("start harvest")
}

#[test]
fn a_killed_crawl_is_taken_up_without_fetching_stored_pages_again() {
    const PAGES: u32 = 240;
    let served = index_site(PAGES, "of the archive test.", Duration::from_millis(15));
    let site = &served.site;
    let seed = format!("{}/index.html", served.base);
    let ws = Workspace::new(&seed, "killed", None);
    ws.configure(|raw| {
        raw.packing.batch_pages = Some(8);
        raw.crawl.concurrency = Some(2);
    });

    let mut child = spawn_crawl(&ws);
    let t0 = Instant::now();
    while site.hits().values().sum::<u64>() < u64::from(PAGES / 2) {
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "crawl made no progress"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let pid = child.id();
    child.kill().expect("SIGKILL");
    let _ = child.wait();
    eprintln!(
        "killed {pid}: /proc entry {}",
        std::path::Path::new(&format!("/proc/{pid}")).exists()
    );
    let hits_at_kill = site.hits();

    // What was acknowledged before the kill (the process is gone, the store is free).
    let stored_before: BTreeSet<String> =
        jsonl(&ws.harvest(&["query", "--format", "jsonl", "--limit", "100000"]))
            .iter()
            .map(|r| r["url"].as_str().unwrap_or_default().to_string())
            .collect();
    assert!(
        stored_before.len() > 10 && stored_before.len() < PAGES as usize,
        "killed in the middle: {} stored",
        stored_before.len()
    );

    *site.delay.lock().unwrap() = Duration::ZERO;
    let out = ws.harvest(&["crawl", "--quiet", "--json"]);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(report["resumed"].as_u64(), Some(1), "{report}");
    eprintln!("resumed run: {report}");

    // Every page archived once, no row twice.
    let rows = jsonl(&ws.harvest(&["query", "--format", "jsonl", "--limit", "100000"]));
    let urls: Vec<String> = rows
        .iter()
        .map(|r| r["url"].as_str().unwrap_or_default().to_string())
        .collect();
    let distinct: BTreeSet<&String> = urls.iter().collect();
    assert_eq!(urls.len(), distinct.len(), "duplicated index rows");
    if distinct.len() != PAGES as usize + 1 {
        let hits = site.hits();
        let missing: Vec<String> = (0..PAGES)
            .map(|n| format!("/p{n}.html"))
            .filter(|p| !distinct.contains(&format!("{}{p}", served.base)))
            .map(|p| {
                format!(
                    "{p} fetched {:?} (at kill {:?})",
                    hits.get(&p),
                    hits_at_kill.get(&p)
                )
            })
            .collect();
        let all = jsonl(&ws.harvest(&[
            "query",
            "--format",
            "jsonl",
            "--limit",
            "100000",
            "--include-revisits",
        ]));
        panic!(
            "{} archived, {} with revisits; missing: {missing:?}\nreport: {report}",
            distinct.len(),
            all.len()
        );
    }
    // No page stored before the kill was fetched again by the second process.
    let hits = site.hits();
    for url in &stored_before {
        let path = url.trim_start_matches(&served.base);
        assert_eq!(
            hits.get(path),
            hits_at_kill.get(path),
            "{path} was stored before the kill and fetched again"
        );
    }
    // Nothing archived twice: the batch the dead process had packed but not
    // indexed was indexed from its packs when the run was taken up, and its
    // pages were not fetched again.
    let records = walk_packs(&ws);
    let mut responses: BTreeMap<&str, usize> = BTreeMap::new();
    for r in records
        .iter()
        .filter(|r| r.kind == "response" && r.is_page_answer())
    {
        *responses.entry(r.uri.as_str()).or_default() += 1;
    }
    let twice: Vec<_> = responses.iter().filter(|(_, n)| **n > 1).collect();
    assert!(
        twice.is_empty(),
        "archived more than once: {twice:?}\nreport: {report}"
    );
    assert_eq!(responses.len(), PAGES as usize + 1);
    let fsck = ws.harvest_raw(&["fsck", "--json", "--quiet"]);
    let check: serde_json::Value = serde_json::from_slice(&fsck.stdout).expect("fsck json");
    assert_eq!(check["unindexed"], 0, "{check}");
    assert_eq!(check["missing"], 0, "{check}");
}

/// The narrowest moment of a crash: a batch packed and synced, its index
/// write not made (the process kills itself there, `HARVEST_CRASH_AFTER_PACKED`).
/// The run that takes it up indexes that batch from the packs and fetches
/// none of its pages again; each page is archived once and fsck finds no
/// record the index does not know.
/// `harvest crawl` of `ws` that kills itself (SIGKILL) once its `batch`th
/// batch is in the packs, before its index rows.
fn crawl_killed_after_batch(ws: &Workspace, batch: u32) {
    let status = std::process::Command::new(env!("CARGO_BIN_EXE_harvest"))
        .arg("-c")
        .arg(&ws.config)
        .args(["crawl", "--quiet"])
        .env("HARVEST_CRASH_AFTER_PACKED", batch.to_string())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .expect("run harvest");
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(status.signal(), Some(9), "killed itself: {status:?}");
}

/// No URL of `packed` was fetched since `hits_at_crash` (the take-up used
/// the stored copies).
fn assert_not_fetched_again(
    served: &Served,
    packed: &BTreeSet<String>,
    hits_at_crash: &BTreeMap<String, u64>,
) {
    let hits = served.site.hits();
    for url in packed {
        let path = url.trim_start_matches(&served.base);
        assert_eq!(
            hits.get(path),
            hits_at_crash.get(path),
            "{path} was archived before the crash and fetched again"
        );
    }
}

#[test]
fn a_crash_between_packing_and_indexing_is_taken_up_from_the_packs() {
    const PAGES: u32 = 60;
    let served = index_site(PAGES, "of the take-up test.", Duration::ZERO);
    let site = &served.site;
    let seed = format!("{}/index.html", served.base);
    let ws = Workspace::new(&seed, "takeup", None);
    ws.configure(|raw| {
        raw.packing.batch_pages = Some(8);
        raw.crawl.concurrency = Some(2);
    });
    crawl_killed_after_batch(&ws, 3);
    let hits_at_crash = site.hits();
    // In the packs: three batches; in the index: two.
    let packed: BTreeSet<String> = walk_packs(&ws)
        .iter()
        .filter(|r| r.kind == "response" && r.is_page_answer())
        .map(|r| r.uri.clone())
        .collect();
    let indexed = jsonl(&ws.harvest(&["query", "--format", "jsonl", "--limit", "1000"])).len();
    assert!(
        packed.len() > indexed && indexed >= 2,
        "{} packed, {indexed} indexed",
        packed.len()
    );

    let out = ws.harvest(&["crawl", "--quiet", "--json"]);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(report["resumed"].as_u64(), Some(1), "{report}");
    assert_eq!(
        report["taken_up_indexed"].as_u64(),
        Some((packed.len() - indexed) as u64),
        "the packed batch indexed from the packs: {report}"
    );
    // Its queued URLs are taken out without a fetch, and so may be those of
    // the batch before it: a batch's index rows are applied beside the next
    // batch's packing, and its URLs leave the queue when that batch is
    // stored (the crash came first).
    let not_fetched = report["taken_up_not_fetched"].as_u64().unwrap_or(0);
    let unindexed = (packed.len() - indexed) as u64;
    assert!(
        (unindexed..=unindexed + 8).contains(&not_fetched),
        "{unindexed} unindexed URLs taken out without a fetch (and at most a batch more): {report}"
    );
    // The run's count holds what the dead process stored (counted from its
    // packs: it died before its first heartbeat) and what this one did.
    assert_eq!(
        report["pages"].as_u64(),
        Some(u64::from(PAGES) + 1),
        "{report}"
    );
    assert_not_fetched_again(&served, &packed, &hits_at_crash);
    let mut responses: BTreeMap<String, usize> = BTreeMap::new();
    for r in walk_packs(&ws)
        .iter()
        .filter(|r| r.kind == "response" && r.is_page_answer())
    {
        *responses.entry(r.uri.clone()).or_default() += 1;
    }
    assert_eq!(responses.len(), PAGES as usize + 1, "{report}");
    assert!(
        responses.values().all(|n| *n == 1),
        "archived more than once: {responses:?}"
    );
    let rows = jsonl(&ws.harvest(&["query", "--format", "jsonl", "--limit", "1000"]));
    assert_eq!(rows.len(), PAGES as usize + 1, "one row a page");
    let fsck = ws.harvest_raw(&["fsck", "--json", "--quiet"]);
    let check: serde_json::Value = serde_json::from_slice(&fsck.stdout).expect("fsck json");
    for field in ["unindexed", "missing", "mismatched", "torn"] {
        assert_eq!(check[field], 0, "{field}: {check}");
    }
}

/// Runs of a day fill its packs: a second run of the job appends to the
/// packs the first wrote (each pack then holds a warcinfo record per run)
/// instead of adding packs; a crash of that run between packing and indexing
/// is taken up from the appended parts (the run's record names them), so
/// nothing it archived is lost or fetched again, and fsck finds the archive
/// whole. With `[storage] append_packs = false` each run writes its own.
#[test]
fn a_second_run_appends_to_the_days_packs_and_its_crash_is_taken_up_from_them() {
    const PAGES: u32 = 60;
    let served = index_site(PAGES, "first version.", Duration::ZERO);
    let site = &served.site;
    let seed = format!("{}/index.html", served.base);
    let ws = Workspace::new(&seed, "append", None);
    ws.configure(|raw| {
        raw.packing.batch_pages = Some(8);
        raw.crawl.concurrency = Some(2);
        // One pack family for the day: every batch joins the stored cluster
        // (pages that changed may otherwise start a cluster of their own).
        raw.packing.kmeans.k = Some(1);
        raw.packing.kmeans.t1 = 1000.0;
    });
    ws.harvest(&["crawl", "--quiet"]);
    let first: BTreeSet<std::path::PathBuf> = ws.packs().into_iter().collect();
    assert!(!first.is_empty());
    // Every page changes: the second run stores them all again.
    for n in 0..PAGES {
        site.set(
            &format!("/p{n}.html"),
            format!("<html><head><title>page {n}</title></head><body><p>Page {n} second version, longer than the first one.</p></body></html>"),
        );
    }
    crawl_killed_after_batch(&ws, 3);
    let hits_at_crash = site.hits();
    let second_version = |r: &util::PackedRecord| {
        r.kind == "response"
            && r.is_page_answer()
            && String::from_utf8_lossy(&r.body).contains("second version")
    };
    let records = walk_packs(&ws);
    let packed: BTreeSet<String> = records
        .iter()
        .filter(|r| second_version(r))
        .map(|r| r.uri.clone())
        .collect();
    assert!(
        packed.len() >= 16,
        "{} pages of the second run packed",
        packed.len()
    );
    let appended: BTreeSet<&std::path::PathBuf> = records
        .iter()
        .filter(|r| second_version(r) && first.contains(&r.pack))
        .map(|r| &r.pack)
        .collect();
    assert!(
        !appended.is_empty(),
        "the second run appended to none of the first run's {} packs",
        first.len()
    );

    let out = ws.harvest(&["crawl", "--quiet", "--json"]);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(report["resumed"].as_u64(), Some(1), "{report}");
    assert!(
        report["taken_up_indexed"].as_u64().unwrap_or(0) >= 1,
        "the packed batch is indexed from the appended packs: {report}"
    );
    assert_not_fetched_again(&served, &packed, &hits_at_crash);
    let records = walk_packs(&ws);
    let mut second: BTreeMap<String, usize> = BTreeMap::new();
    for r in records.iter().filter(|r| second_version(r)) {
        *second.entry(r.uri.clone()).or_default() += 1;
    }
    assert_eq!(second.len(), PAGES as usize, "every changed page stored");
    assert!(second.values().all(|n| *n == 1), "stored twice: {second:?}");
    let packs_now = ws.packs();
    let grown = packs_now.iter().filter(|p| first.contains(*p)).count();
    assert_eq!(
        grown,
        first.len(),
        "the first run's packs are all still there"
    );
    assert!(
        packs_now.len() < 2 * first.len(),
        "{} packs after two runs, {} after the first: the second added a pack per family",
        packs_now.len(),
        first.len()
    );
    for pack in &appended {
        let bytes = std::fs::read(pack).unwrap();
        let infos = packer::warc::RecordIter::new(&bytes)
            .filter(|r| r.as_ref().unwrap().2.record_type() == Some("warcinfo"))
            .count();
        assert!(infos >= 2, "{}: {infos} warcinfo records", pack.display());
    }
    for pack in &appended {
        assert_warcio_accepts(pack);
    }
    let rows = jsonl(&ws.harvest(&["query", "--format", "jsonl", "--limit", "1000"]));
    assert_eq!(rows.len(), PAGES as usize + 1, "one row a page");
    let fsck = ws.harvest_raw(&["fsck", "--json", "--quiet"]);
    let check: serde_json::Value = serde_json::from_slice(&fsck.stdout).expect("fsck json");
    for field in ["unindexed", "missing", "mismatched", "torn", "damaged"] {
        assert_eq!(check[field].as_u64().unwrap_or(0), 0, "{field}: {check}");
    }

    // Without appending, a run writes packs of its own.
    ws.configure(|raw| raw.storage.append_packs = Some(false));
    for n in 0..PAGES {
        site.set(
            &format!("/p{n}.html"),
            format!("<html><head><title>page {n}</title></head><body><p>Page {n} third.</p></body></html>"),
        );
    }
    let before: BTreeSet<std::path::PathBuf> = ws.packs().into_iter().collect();
    let sizes = |ps: &BTreeSet<std::path::PathBuf>| -> Vec<u64> {
        ps.iter()
            .map(|p| std::fs::metadata(p).unwrap().len())
            .collect()
    };
    let sizes_before = sizes(&before);
    ws.harvest(&["crawl", "--quiet"]);
    assert_eq!(sizes(&before), sizes_before, "no earlier pack grew");
    assert!(ws.packs().len() > before.len());
}

/// A crawl forwarded to `harvest serve` whose caller is killed stops in the
/// server (it used to run on to the end with nobody to report to): the run is
/// recorded `cancelled`, what was fetched is stored, and the next crawl takes
/// the run up without fetching a stored page again.
#[test]
fn a_forwarded_crawl_whose_caller_is_killed_is_cancelled_and_taken_up() {
    const PAGES: u32 = 200;
    let served = index_site(PAGES, "of the cancel test.", Duration::from_millis(100));
    let site = &served.site;
    let seed = format!("{}/index.html", served.base);
    let ws = Workspace::new(&seed, "cancelled", None);
    ws.configure(|raw| {
        raw.packing.batch_pages = Some(8);
        raw.crawl.concurrency = Some(2);
        // A server with a job creates the archive (without, it serves an
        // existing one); this job is never scheduled.
        raw.jobs = vec![harvest::jobs::RawJob {
            job: harvest::jobs::JobKeys {
                name: "idle".into(),
                ..Default::default()
            },
            crawl: harvest::config::RawCrawl {
                seeds: vec![seed.clone()],
                ..Default::default()
            },
        }];
    });
    let (mut server, base) = start_serve(&ws.config, &[]);
    // --quiet: the command writes nothing until its summary, so only the
    // server's alive frames can find out that its caller is gone.
    let mut child = spawn_crawl(&ws);
    let t0 = Instant::now();
    while site.hits().values().sum::<u64>() < 20 {
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "crawl made no progress"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().expect("SIGKILL");
    let _ = child.wait();
    let run = loop {
        let runs: serde_json::Value =
            serde_json::from_str(&http_get(&base, "/api/runs?job=crawl")).expect("runs json");
        let run = runs["runs"][0].clone();
        if run["status"] != "running" {
            break run;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "the forwarded crawl went on without its caller: {runs}"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(run["status"], "cancelled", "{run}");
    // Stopped: no more requests reach the site.
    std::thread::sleep(Duration::from_millis(500));
    let hits_at_cancel = site.hits();
    std::thread::sleep(Duration::from_millis(800));
    assert_eq!(
        site.hits(),
        hits_at_cancel,
        "fetching went on after the cancel"
    );
    let fetched: u64 = hits_at_cancel.values().sum();
    assert!(
        fetched < u64::from(PAGES),
        "{fetched} requests: cancelled too late to tell"
    );

    let stored_before = stored_urls(&ws);
    assert!(stored_before.len() > 10, "{} stored", stored_before.len());
    take_up_and_check(&ws, &served, PAGES, &stored_before, &hits_at_cancel);
    let _ = server.kill();
    let _ = server.wait();
}

fn stored_urls(ws: &Workspace) -> BTreeSet<String> {
    jsonl(&ws.harvest(&["query", "--format", "jsonl", "--limit", "100000"]))
        .iter()
        .map(|r| r["url"].as_str().unwrap_or_default().to_string())
        .collect()
}

/// The next crawl of a stopped run takes it up: every page archived once,
/// none stored before the stop fetched again.
fn take_up_and_check(
    ws: &Workspace,
    served: &Served,
    pages: u32,
    stored_before: &BTreeSet<String>,
    hits_at_stop: &BTreeMap<String, u64>,
) {
    *served.site.delay.lock().unwrap() = Duration::ZERO;
    let out = ws.harvest(&["crawl", "--quiet", "--json"]);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(report["resumed"].as_u64(), Some(1), "{report}");
    assert_eq!(report["cancelled"].as_bool(), Some(false), "{report}");
    let rows = jsonl(&ws.harvest(&["query", "--format", "jsonl", "--limit", "100000"]));
    let distinct: BTreeSet<&str> = rows.iter().filter_map(|r| r["url"].as_str()).collect();
    assert_eq!(rows.len(), distinct.len(), "duplicated index rows");
    assert_eq!(distinct.len(), pages as usize + 1, "every page archived");
    let hits = served.site.hits();
    for url in stored_before {
        let path = url.trim_start_matches(&served.base);
        assert_eq!(
            hits.get(path),
            hits_at_stop.get(path),
            "{path} was stored before the stop and fetched again"
        );
    }
}

/// Ctrl-C on a local crawl (issue 10; it used to kill the process, losing
/// the batch being written) stops it as a cancel does: no new fetches, the
/// pages fetched are stored and indexed, the summary says it stopped, the
/// exit code is 130, the run is recorded `cancelled`, and the next crawl
/// takes it up without fetching a stored page again.
#[test]
fn ctrl_c_stops_a_local_crawl_storing_what_it_fetched_and_the_next_run_takes_it_up() {
    const PAGES: u32 = 200;
    const CONCURRENCY: usize = 2;
    let served = index_site(PAGES, "of the ctrl-c test.", Duration::from_millis(40));
    let site = &served.site;
    let seed = format!("{}/index.html", served.base);
    let ws = Workspace::new(&seed, "stopped", None);
    ws.configure(|raw| {
        raw.packing.batch_pages = Some(16);
        raw.crawl.concurrency = Some(CONCURRENCY);
    });
    let mut child = spawn_crawl_with(&ws, std::process::Stdio::piped);
    let t0 = Instant::now();
    while site.hits().values().sum::<u64>() < 30 {
        if let Some(status) = child.try_wait().expect("harvest state") {
            let out = child.wait_with_output().expect("harvest output");
            panic!(
                "harvest ended before the stop ({status}): {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "crawl made no progress"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let sent = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill -INT");
    assert!(sent.success());
    let out = child.wait_with_output().expect("wait for harvest");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(130), "{stderr}\n{stdout}");
    assert!(stderr.contains("stopping"), "{stderr}");
    assert!(stdout.contains("stopped "), "{stdout}");
    let hits_at_stop = site.hits();
    let pages_fetched = hits_at_stop.keys().filter(|p| p.ends_with(".html")).count();
    assert!(
        pages_fetched < PAGES as usize,
        "{pages_fetched} pages fetched: stopped too late to tell"
    );
    // What was fetched is stored: only requests still in flight may not be.
    let stored_before = stored_urls(&ws);
    assert!(
        stored_before.len() + CONCURRENCY >= pages_fetched,
        "{pages_fetched} pages fetched, {} stored: a stopped crawl lost its batch",
        stored_before.len()
    );
    let status = ws.harvest(&["jobs", "status", "crawl", "--json"]);
    let run: serde_json::Value = serde_json::from_slice(
        status
            .stdout
            .split(|b| *b == b'\n')
            .next()
            .unwrap_or_default(),
    )
    .expect("run json");
    assert_eq!(run["status"], "cancelled", "{run}");
    take_up_and_check(&ws, &served, PAGES, &stored_before, &hits_at_stop);
}

/// Regression (issue 10): with `harvest serve` running, `harvest crawl` and
/// `harvest query` on the same data dir failed with `FjallError: Locked`.
#[test]
fn the_command_line_works_while_serve_owns_the_store_and_runs_the_schedule() {
    let served = serve(LiveSite::default());
    let site = &served.site;
    site.set("/index.html", section(&[1, 2]));
    site.set("/a1.html", article(1, 5));
    site.set("/a2.html", article(2, 7));
    let seed = format!("{}/index.html", served.base);
    let ws = Workspace::new(&seed, "live", None);
    ws.configure(|raw| {
        raw.jobs = vec![harvest::jobs::RawJob {
            job: harvest::jobs::JobKeys {
                name: "news".into(),
                schedule: Some("*/2 * * * * *".into()),
                ..Default::default()
            },
            crawl: harvest::config::RawCrawl {
                seeds: vec![seed.clone()],
                ..Default::default()
            },
        }];
    });
    let (mut server, base) = start_serve(&ws.config, &[]);
    assert!(ws.path().join("serve.json").exists(), "serve file written");

    // The scheduler runs the job by itself.
    let t0 = Instant::now();
    loop {
        let runs: serde_json::Value =
            serde_json::from_str(&http_get(&base, "/api/runs?job=news")).expect("runs json");
        if runs["runs"]
            .as_array()
            .is_some_and(|r| r.iter().any(|r| r["status"] == "finished"))
        {
            break;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(30),
            "no scheduled run finished: {runs}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    let jobs: serde_json::Value =
        serde_json::from_str(&http_get(&base, "/api/jobs")).expect("jobs json");
    assert_eq!(jobs["jobs"][0]["name"], "news", "{jobs}");
    assert!(jobs["jobs"][0]["next_run"].is_string(), "{jobs}");

    // The command line goes through the server: no "Locked".
    let crawl = ws.harvest(&["crawl", "--quiet", "--json"]);
    let report: serde_json::Value = serde_json::from_slice(&crawl.stdout).expect("crawl json");
    assert_eq!(report["job"], "crawl", "{report}");
    let rows = jsonl(&ws.harvest(&["query", "--format", "jsonl"]));
    assert_eq!(rows.len(), 3, "{rows:?}");
    let got = ws
        .harvest(&["get", &format!("{}/a1.html", served.base)])
        .stdout;
    assert_eq!(got, article(1, 5).into_bytes());
    // The page's capture history: the scheduled run and the crawl.
    let search: serde_json::Value =
        serde_json::from_str(&http_get(&base, "/api/search?limit=50")).expect("search json");
    let id = search["hits"]
        .as_array()
        .and_then(|h| {
            h.iter()
                .find(|h| h["url"].as_str().is_some_and(|u| u.ends_with("/a1.html")))
        })
        .and_then(|h| h["id"].as_str())
        .expect("a1 found")
        .to_string();
    let detail: serde_json::Value =
        serde_json::from_str(&http_get(&base, &format!("/api/pages/{id}"))).expect("page json");
    let history = detail["history"].as_array().expect("history");
    assert!(history.len() >= 2, "{detail}");
    assert_eq!(history[0]["kind"], "response", "{detail}");
    let status = ws.harvest(&["jobs", "status", "news"]);
    assert!(String::from_utf8_lossy(&status.stdout).contains("news"));
    // A bad command still fails with the server's message and exit code.
    let bad = ws.harvest_raw(&["get", "http://127.0.0.1:1/never-crawled"]);
    assert_eq!(bad.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("not in the archive"));

    // A job added to the file while the server runs is known to it at once:
    // listed, runnable from the command line (through the server).
    ws.configure(|raw| {
        raw.jobs.push(harvest::jobs::RawJob {
            job: harvest::jobs::JobKeys {
                name: "later".into(),
                ..Default::default()
            },
            crawl: harvest::config::RawCrawl {
                seeds: vec![format!("{}/a2.html", served.base)],
                ..Default::default()
            },
        })
    });
    let jobs: serde_json::Value =
        serde_json::from_str(&http_get(&base, "/api/jobs")).expect("jobs json");
    let names: Vec<&str> = jobs["jobs"]
        .as_array()
        .expect("jobs")
        .iter()
        .filter_map(|j| j["name"].as_str())
        .collect();
    assert_eq!(names, ["news", "later"], "{jobs}");
    let later = ws.harvest(&["jobs", "run", "later", "--quiet", "--json"]);
    let report: serde_json::Value = serde_json::from_slice(&later.stdout).expect("run json");
    assert_eq!(report["job"], "later", "{report}");
    // A broken file keeps the jobs loaded before and says why.
    let good = std::fs::read_to_string(&ws.config).expect("config");
    std::fs::write(
        &ws.config,
        format!("{good}\n[[job]]\nname = \"Bad Name\"\n"),
    )
    .expect("write");
    let jobs: serde_json::Value =
        serde_json::from_str(&http_get(&base, "/api/jobs")).expect("jobs json");
    assert_eq!(jobs["jobs"].as_array().map(Vec::len), Some(2), "{jobs}");
    assert!(
        jobs["config_error"]
            .as_str()
            .is_some_and(|e| e.contains("stays in effect")),
        "{jobs}"
    );
    std::fs::write(&ws.config, good).expect("write");

    // Output streams back in frames: the export equals the one read
    // without the server (below).
    let cdxj_served = ws.harvest(&["export", "cdxj"]).stdout;

    // SIGTERM: the server removes its file; the command line opens the store itself.
    let _ = std::process::Command::new("kill")
        .arg(server.id().to_string())
        .status();
    let _ = server.wait();
    assert!(!ws.path().join("serve.json").exists(), "serve file removed");
    let rows = jsonl(&ws.harvest(&["query", "--format", "jsonl"]));
    assert_eq!(rows.len(), 3);
    let cdxj = ws.harvest(&["export", "cdxj"]).stdout;
    assert!(cdxj.len() > 100, "{}", String::from_utf8_lossy(&cdxj));
    assert_eq!(
        String::from_utf8_lossy(&cdxj_served),
        String::from_utf8_lossy(&cdxj)
    );

    // kill -9: the server leaves its file behind and, until its parent
    // reaps it, a zombie under its pid. The command line opens the store
    // itself at once.
    let (mut server, _) = start_serve(&ws.config, &[]);
    server.kill().expect("kill -9 the server");
    let pid = server.id();
    let t0 = Instant::now();
    while std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
        !s.rsplit_once(')')
            .is_some_and(|(_, r)| r.trim_start().starts_with('Z'))
    }) {
        assert!(t0.elapsed() < Duration::from_secs(10), "server not killed");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        ws.path().join("serve.json").exists(),
        "a killed server leaves its file"
    );
    let out = ws.harvest(&["query", "--format", "jsonl"]);
    assert_eq!(
        jsonl(&out).len(),
        3,
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let _ = server.wait();

    // A serve file naming a live process where nothing listens (the pid
    // went to another process): the command says so and opens the store.
    let stale =
        serde_json::json!({"url": "http://127.0.0.1:1", "pid": std::process::id(), "token": null});
    std::fs::write(ws.path().join("serve.json"), stale.to_string()).expect("write serve file");
    let out = ws.harvest(&["query", "--format", "jsonl"]);
    assert_eq!(jsonl(&out).len(), 3);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("does not answer"), "{said}");
}

/// Sitemaps (named by robots.txt, gzipped, Google News) and feeds lead to
/// pages no link reaches; a feed's publish time stands in for a page's
/// missing one; a broken feed is a counted failure, not a stop.
#[test]
fn sitemaps_and_feeds_lead_to_pages_no_link_reaches() {
    use std::io::Write;
    let served = serve(LiveSite::default());
    let site = &served.site;
    let base = served.base.clone();
    site.set("/index.html", section(&[1]));
    site.set("/a1.html", article(1, 3));
    site.set(
        "/robots.txt",
        "User-agent: *\nAllow: /\nSitemap: /news-sitemap.xml.gz\n".into(),
    );
    let sitemap = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\
         <urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\" \
         xmlns:news=\"http://www.google.com/schemas/sitemap-news/0.9\">\
         <url><loc>{base}/orphan1.html</loc><news:news><news:publication_date>2026-11-20T10:00:00+08:00</news:publication_date>\
         <news:title>Orphan one</news:title></news:news></url></urlset>"
    );
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(sitemap.as_bytes()).unwrap();
    site.set_bytes("/news-sitemap.xml.gz", gz.finish().unwrap());
    site.set(
        "/feed.xml",
        format!(
            "<?xml version=\"1.0\"?><rss version=\"2.0\"><channel><title>t</title><link>{base}/</link>\
             <description>d</description><item><title>Orphan two</title><link>{base}/orphan2.html</link>\
             <pubDate>Tue, 17 Nov 2026 09:30:00 GMT</pubDate></item></channel></rss>"
        ),
    );
    site.set("/broken.xml", "<rss><channel><item>".into());
    site.set("/orphan1.html", article(5, 0));
    // No publish time in the page itself: the feed's is used.
    site.set(
        "/orphan2.html",
        "<html><head><title>Orphan two</title></head><body><p>No date here.</p></body></html>"
            .into(),
    );
    let seed = format!("{base}/index.html");
    let ws = Workspace::new(&seed, "disc", None);
    ws.configure(|raw| {
        raw.jobs = vec![harvest::jobs::RawJob {
            job: harvest::jobs::JobKeys {
                name: "news".into(),
                feeds: vec![format!("{base}/feed.xml"), format!("{base}/broken.xml")],
                ..Default::default()
            },
            crawl: harvest::config::RawCrawl {
                seeds: vec![seed.clone()],
                ..Default::default()
            },
        }];
    });
    let report = job_run(&ws);
    assert_eq!(report["discovery_documents"].as_u64(), Some(2), "{report}");
    assert_eq!(
        report["failures"]["discovery"].as_u64(),
        Some(1),
        "{report}"
    );
    assert_eq!(report["new"].as_u64(), Some(4), "{report}");
    let rows = jsonl(&ws.harvest(&["query", "--format", "jsonl"]));
    let orphan2 = rows
        .iter()
        .find(|r| {
            r["url"]
                .as_str()
                .is_some_and(|u| u.ends_with("/orphan2.html"))
        })
        .expect("orphan2 archived");
    assert_eq!(orphan2["published"], "2026-11-17T09:30:00Z", "{orphan2}");
    assert!(rows.iter().any(|r| r["url"]
        .as_str()
        .is_some_and(|u| u.ends_with("/orphan1.html"))));
}

/// Issue 13 item 3, the crash suite: a real `harvest crawl` SIGKILLed at
/// ten random moments, restarted each time, then run to its end. Nothing
/// acknowledged is lost (every page stored before a kill is still there),
/// nothing is indexed twice, and `harvest fsck` finds every row's record
/// whole and right. The seed of the moments is printed (HARVEST_CRASH_SEED
/// replays it).
#[test]
fn ten_sigkills_at_random_moments_lose_nothing_and_duplicate_nothing() {
    const PAGES: u32 = 200;
    const KILLS: u32 = 10;
    let served = index_site(
        PAGES,
        "of the crash test, a paragraph long enough to be an article of its own.",
        Duration::from_millis(10),
    );
    let site = &served.site;
    let seed = format!("{}/index.html", served.base);
    let ws = Workspace::new(&seed, "crash", None);
    ws.configure(|raw| {
        raw.packing.batch_pages = Some(8);
        raw.crawl.concurrency = Some(2);
    });
    let mut state: u64 = std::env::var("HARVEST_CRASH_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos() as u64)
                .unwrap_or(1)
        });
    eprintln!("crash suite seed {state}");
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let stored = |ws: &Workspace| -> BTreeSet<String> {
        jsonl(&ws.harvest(&["query", "--format", "jsonl", "--limit", "100000"]))
            .iter()
            .map(|r| r["url"].as_str().unwrap_or_default().to_string())
            .collect()
    };
    let mut acknowledged: BTreeSet<String> = BTreeSet::new();
    let mut finished_early = 0;
    for kill in 0..KILLS {
        let mut child = spawn_crawl(&ws);
        // Somewhere in the first ~second: start-up, discovery, mid-batch,
        // between a pack write and its index write.
        let wait = Duration::from_millis(50 + next() % 900);
        std::thread::sleep(wait);
        if child.try_wait().ok().flatten().is_some() {
            finished_early += 1;
        }
        let _ = child.kill();
        let _ = child.wait();
        let now = stored(&ws);
        for u in &acknowledged {
            assert!(
                now.contains(u),
                "kill {kill}: {u} was stored before and is gone"
            );
        }
        acknowledged = now;
    }
    *site.delay.lock().unwrap() = Duration::ZERO;
    let out = ws.harvest(&["crawl", "--quiet", "--json"]);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let rows = jsonl(&ws.harvest(&["query", "--format", "jsonl", "--limit", "100000"]));
    let urls: Vec<&str> = rows.iter().filter_map(|r| r["url"].as_str()).collect();
    let distinct: BTreeSet<&str> = urls.iter().copied().collect();
    assert_eq!(urls.len(), distinct.len(), "a URL indexed twice");
    assert_eq!(
        distinct.len(),
        PAGES as usize + 1,
        "every page archived after {KILLS} kills: {report}"
    );
    for u in &acknowledged {
        assert!(distinct.contains(u.as_str()), "{u} was lost");
    }
    let fsck = ws.harvest_raw(&["fsck", "--json", "--quiet"]);
    let check: serde_json::Value = serde_json::from_slice(&fsck.stdout).expect("fsck json");
    assert_eq!(check["missing"], 0, "{check}");
    assert_eq!(check["mismatched"], 0, "{check}");
    // Each run took up what the one before it had packed and not indexed.
    assert_eq!(check["unindexed"], 0, "{check}");
    // The repair takes what the kills left: torn tails cut, the records of
    // cut batches indexed (their pages were fetched again, so they join
    // the capture history) — and the archive then checks clean.
    let repair = ws.harvest_raw(&["fsck", "--repair", "--json", "--quiet"]);
    let repaired: serde_json::Value = serde_json::from_slice(&repair.stdout).expect("fsck json");
    assert_eq!(
        repaired["reindexed"].as_u64().unwrap() + repaired["history_added"].as_u64().unwrap(),
        check["unindexed"].as_u64().unwrap(),
        "{repaired}"
    );
    let after: serde_json::Value =
        serde_json::from_slice(&ws.harvest_raw(&["fsck", "--json", "--quiet"]).stdout)
            .expect("fsck json");
    for field in ["missing", "mismatched", "torn", "unindexed"] {
        assert_eq!(after[field], 0, "{field} after the repair: {after}");
    }
    let rows_after = jsonl(&ws.harvest(&["query", "--format", "jsonl", "--limit", "100000"]));
    assert_eq!(
        rows_after.len(),
        rows.len(),
        "the repair adds no page row twice"
    );
    eprintln!(
        "crash suite: {KILLS} SIGKILLs ({finished_early} runs had ended first), {} pages archived once each, fsck verified {} records, {} torn pack tails left by kills, {} unindexed records (cut batches; fsck --repair indexed {} and added {} to capture histories)",
        distinct.len(),
        check["verified"],
        check["torn"],
        check["unindexed"],
        repaired["reindexed"],
        repaired["history_added"],
    );
}
