//! pywb replays our packs (issue 14, Tests): a crawl with `[crawl] requisites`
//! of a real site — the demo's LibreOffice help pages (Debian
//! `libreoffice-help-zh-cn`) served with the stylesheets, scripts and icons
//! they embed (Debian `libreoffice-help-common` and the zh-CN scripts of the
//! first package; `deploy/data/fetch-debian.sh`) — is indexed by pywb's
//! `wb-manager` and served by its `wayback` server. The entry page and every
//! archived requisite replay (`id_`, the archived bytes) with status 200 and
//! the bytes the site served; requisites the site does not have (the page
//! links three files that Debian ships in other packages) and a URL never
//! crawled answer no 200; the rewritten page replays too.
//!
//! pywb 2.10.0 (pip, pinned) lives in its own venv, `deploy/cache/pywb-venv`,
//! set up by `deploy/data/install-test-peers.sh` (`deploy/test.sh` runs it);
//! `HARVEST_PYWB_PYTHON` picks another interpreter. The test fails, never
//! skips, when pywb or the site's files are missing.
//!
//! A moved page (a `301` seeded beside the entry page, to a page only it
//! leads to) replays as a redirect into the collection whose target replays
//! the page. pywb's indexer joins each capture with the `request` record
//! that follows it and indexes one line per capture.

mod util;

use std::collections::{BTreeMap, BTreeSet};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use harvest::demo::{DEMO_DEPTH, DEMO_ENTRY};
use harvest::site::{SiteFiles, DEMO_SITE};
use util::{Site, Workspace};

/// The pinned replay peer.
const PYWB_VERSION: &str = "2.10.0";
/// The collection the packs are added to.
const COLL: &str = "harvest";
/// Crawl depth: the demo's (377 pages), each page with its requisites.
const DEPTH: u32 = DEMO_DEPTH;
/// Bounds on the peer: server start, one request.
const START_TIMEOUT: Duration = Duration::from_secs(30);
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

/// What the entry page embeds and the site has (paths after `<base href>`):
/// stylesheets, scripts, the icon, and the images `default.css` references
/// with `url()`.
const ENTRY_REQUISITES: &[&str] = &[
    "/default.css",
    "/polyfills.js",
    "/languages.js",
    "/zh-CN/langnames.js",
    "/flexsearch.debug.js",
    "/help2.js",
    "/a11y-toggle.js",
    "/paginathing.js",
    "/zh-CN/bookmarks.js",
    "/zh-CN/contents.js",
    "/help.js",
    "/media/navigation/favicon.ico",
    "/media/navigation/libo-base.svg",
    "/media/navigation/libo-basic.svg",
    "/media/navigation/libo-calc.svg",
    "/media/navigation/libo-chart.svg",
    "/media/navigation/libo-draw.svg",
    "/media/navigation/libo-impress.svg",
    "/media/navigation/libo-math.svg",
    "/media/navigation/libo-symbol-black.svg",
    "/media/navigation/libo-symbol-white.svg",
    "/media/navigation/libo-writer.svg",
];

/// What the entry page embeds and the site lacks: in Debian these are
/// symlinks into other packages (libjs-normalize.css, node-prismjs). They
/// 404 at crawl time, so nothing is archived for them.
const ENTRY_MISSING: &[&str] = &["/normalize.css", "/prism.css", "/prism.js"];

fn cache(pkg: &str) -> PathBuf {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("deploy/cache")
        .join(pkg)
        .join("usr/share/libreoffice/help");
    assert!(
        root.is_dir(),
        "{} is missing: run deploy/data/fetch-debian.sh libreoffice-help-zh-cn libreoffice-help-common",
        root.display()
    );
    root
}

/// Every regular file below `root` (symlinks left out: those of the package
/// point into other packages), keyed by URL path.
fn files_below(root: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let entries = std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        for entry in entries {
            let entry = entry.expect("directory entry");
            let path = entry.path();
            let kind = entry.file_type().expect("file type");
            if kind.is_dir() {
                stack.push(path);
            } else if kind.is_file() {
                let rel = path.strip_prefix(root).expect("below root");
                let bytes = std::fs::read(&path).expect("read site file");
                out.push((format!("/{}", rel.to_string_lossy()), bytes));
            }
        }
    }
    out
}

/// The demo's pages (and robots.txt) with the files they embed: the help
/// root of `libreoffice-help-common` and the zh-CN scripts of
/// `libreoffice-help-zh-cn`, as Debian installs them side by side.
fn real_site() -> SiteFiles {
    real_site_files().with_redirect(MOVED_FROM, MOVED_TO)
}

/// A page moved away: the crawl is seeded with its old address.
const MOVED_FROM: &str = "/old/moved.html";
/// Where it went: a page no other page links to.
const MOVED_TO: &str = "/new/moved.html";
const MOVED_PAGE: &str = "<!DOCTYPE html><html><head><meta charset=utf-8><title>Moved</title>\
    </head><body><p>This help page moved here.</p></body></html>";

fn real_site_files() -> SiteFiles {
    let demo = SiteFiles::from_tar_gz(DEMO_SITE).expect("demo site");
    let mut pairs: Vec<(String, Vec<u8>)> = demo
        .html_paths()
        .chain(["/robots.txt"])
        .map(|p| (p.to_string(), demo.get(p).expect("demo file").to_vec()))
        .collect();
    pairs.extend(files_below(&cache("libreoffice-help-common")));
    let zh = cache("libreoffice-help-zh-cn");
    for js in ["langnames.js", "bookmarks.js", "contents.js"] {
        let bytes = std::fs::read(zh.join("zh-CN").join(js)).expect("zh-CN script");
        pairs.push((format!("/zh-CN/{js}"), bytes));
    }
    pairs.push((MOVED_TO.to_string(), MOVED_PAGE.as_bytes().to_vec()));
    SiteFiles::from_pairs(pairs)
}

/// The interpreter with pywb; fails (with the install command) unless it
/// has the pinned version.
fn pywb_python() -> PathBuf {
    let python = std::env::var_os("HARVEST_PYWB_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("deploy/cache/pywb-venv/bin/python")
        });
    let hint = "run deploy/data/install-test-peers.sh (pip install pywb==2.10.0 into deploy/cache/pywb-venv)";
    let out = Command::new(&python)
        .args(["-c", "import pywb; print(pywb.__version__)"])
        .output()
        .unwrap_or_else(|e| panic!("{}: {e}: {hint}", python.display()));
    let version = String::from_utf8_lossy(&out.stdout).trim().to_string();
    assert!(
        out.status.success() && version == PYWB_VERSION,
        "pywb {PYWB_VERSION} is not installed for {} (found {version:?}): {hint}\n{}",
        python.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    python
}

/// One record of the packs, as the test needs it.
struct Record {
    kind: String,
    uri: String,
    id: String,
    concurrent_to: Option<String>,
    /// `WARC-Date` as pywb's 14-digit timestamp.
    timestamp: String,
}

fn records(ws: &Workspace) -> Vec<Record> {
    let mut out = Vec::new();
    for pack in ws.packs() {
        let bytes = std::fs::read(&pack).expect("read pack");
        for item in packer::warc::RecordIter::new(&bytes) {
            let (_, _, rec) = item.unwrap_or_else(|e| panic!("{}: {e}", pack.display()));
            let date = rec.header("WARC-Date").unwrap_or_default();
            out.push(Record {
                kind: rec.record_type().unwrap_or_default().to_string(),
                uri: rec.target_uri().unwrap_or_default().to_string(),
                id: rec.record_id().unwrap_or_default().to_string(),
                concurrent_to: rec.header("WARC-Concurrent-To").map(str::to_string),
                timestamp: date.chars().filter(char::is_ascii_digit).take(14).collect(),
            });
        }
    }
    out
}

/// Runs pywb's collection manager in `dir`, asserting success.
fn wb_manager(python: &Path, dir: &Path, args: &[&str]) {
    let out = Command::new(python)
        .args(["-m", "pywb.manager.manager"])
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run wb-manager");
    assert!(
        out.status.success(),
        "wb-manager {args:?} failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A `wayback` server on 127.0.0.1, killed when dropped.
struct Wayback {
    child: Child,
    addr: SocketAddr,
    log: PathBuf,
}

impl Wayback {
    fn start(python: &Path, dir: &Path) -> Wayback {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("free port")
            .port();
        let log = dir.join("wayback.log");
        let file = std::fs::File::create(&log).expect("log file");
        let child = Command::new(python)
            .args(["-m", "pywb.apps.cli", "-b", "127.0.0.1", "-p"])
            .arg(port.to_string())
            .current_dir(dir)
            .stdin(Stdio::null())
            .stdout(file.try_clone().expect("log file"))
            .stderr(file)
            .spawn()
            .expect("start wayback");
        let mut server = Wayback {
            child,
            addr: SocketAddr::from(([127, 0, 0, 1], port)),
            log,
        };
        let deadline = Instant::now() + START_TIMEOUT;
        loop {
            if let Some(status) = server.child.try_wait().expect("wayback status") {
                panic!("wayback exited ({status}): {}", server.log_text());
            }
            if server.try_get(&format!("/{COLL}/")).is_ok() {
                return server;
            }
            assert!(
                Instant::now() < deadline,
                "wayback did not answer within {START_TIMEOUT:?}: {}",
                server.log_text()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// `GET path` (HTTP/1.0): status and body.
    fn try_get(&self, path: &str) -> std::io::Result<(u16, Vec<u8>)> {
        self.try_get_with_head(path)
            .map(|(status, _, body)| (status, body))
    }

    /// `GET path` (HTTP/1.0): status, response head and body.
    fn try_get_with_head(&self, path: &str) -> std::io::Result<(u16, String, Vec<u8>)> {
        let mut s = TcpStream::connect_timeout(&self.addr, REQUEST_TIMEOUT)?;
        s.set_read_timeout(Some(REQUEST_TIMEOUT))?;
        s.set_write_timeout(Some(REQUEST_TIMEOUT))?;
        write!(s, "GET {path} HTTP/1.0\r\nHost: {}\r\n\r\n", self.addr)?;
        let mut raw = Vec::new();
        s.read_to_end(&mut raw)?;
        let bad =
            |what: &str| std::io::Error::new(std::io::ErrorKind::InvalidData, what.to_string());
        let end = raw
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .ok_or_else(|| bad("no end of headers"))?;
        let head = String::from_utf8_lossy(&raw[..end]).to_string();
        let status = head
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| bad("no status"))?;
        let body = raw[end + 4..].to_vec();
        let length = head.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case("content-length")
                .then(|| v.trim().parse::<usize>().ok())
                .flatten()
        });
        if let Some(n) = length {
            if n != body.len() {
                return Err(bad(&format!("Content-Length {n}, got {}", body.len())));
            }
        }
        Ok((status, head, body))
    }

    fn get(&self, path: &str) -> (u16, Vec<u8>) {
        self.try_get(path)
            .unwrap_or_else(|e| panic!("GET {path}: {e}\n{}", self.log_text()))
    }
}

impl Drop for Wayback {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn pywb_replays_a_crawled_page_with_its_requisites() {
    let started = Instant::now();
    let python = pywb_python();
    let site = Site::serve(real_site());
    let ws = Workspace::new(&site.url(DEMO_ENTRY), "help", Some(DEPTH));
    let moved = site.url(MOVED_FROM);
    ws.configure(|raw| {
        raw.crawl.requisites = Some(true);
        raw.crawl.seeds.push(moved.clone());
    });
    let summary = ws.crawl();
    let crawled = started.elapsed();
    let records = records(&ws);
    let files = real_site();
    let served = |uri: &str| -> &[u8] {
        let path = uri
            .strip_prefix(&site.url(""))
            .unwrap_or_else(|| panic!("{uri} is not on the site"));
        files
            .get(path)
            .unwrap_or_else(|| panic!("{path} is archived but not on the site"))
    };

    // The archive side: the entry page's record and the requisites linked to
    // it, exactly those the site has.
    let entry = site.url(DEMO_ENTRY);
    let page = records
        .iter()
        .find(|r| r.kind == "response" && r.uri == entry)
        .unwrap_or_else(|| panic!("no response record for {entry}: {summary}"));
    let linked: BTreeSet<&str> = records
        .iter()
        .filter(|r| r.kind != "request" && r.concurrent_to.as_deref() == Some(page.id.as_str()))
        .map(|r| r.uri.as_str())
        .collect();
    let expected: BTreeSet<String> = ENTRY_REQUISITES.iter().map(|p| site.url(p)).collect();
    assert_eq!(
        linked,
        expected.iter().map(String::as_str).collect::<BTreeSet<_>>(),
        "requisites archived with {entry}"
    );
    // Every requisite of every page, each once: the other pages' images too.
    let requisites: Vec<&Record> = records
        .iter()
        .filter(|r| r.kind != "request" && r.concurrent_to.is_some())
        .filter(|r| r.uri != moved)
        .collect();
    assert!(
        requisites.len() > ENTRY_REQUISITES.len(),
        "only the entry page's requisites were archived: {summary}"
    );
    let kinds = util::count_by(requisites.iter().map(|r| r.kind.as_str()));

    // pywb indexes the packs of the crawl.
    let root = tempfile::tempdir().expect("tempdir");
    wb_manager(&python, root.path(), &["init", COLL]);
    let packs: Vec<String> = ws
        .packs()
        .iter()
        .map(|p| p.to_string_lossy().to_string())
        .collect();
    let mut add = vec!["add", COLL];
    add.extend(packs.iter().map(String::as_str));
    wb_manager(&python, root.path(), &add);
    // One index line per capture: pywb skipped no record.
    let index = root
        .path()
        .join("collections")
        .join(COLL)
        .join("indexes/index.cdxj");
    let lines = std::fs::read_to_string(&index)
        .unwrap_or_else(|e| panic!("{}: {e}", index.display()))
        .lines()
        .count();
    let captures = records
        .iter()
        .filter(|r| r.kind == "response" || r.kind == "revisit")
        .count();
    assert_eq!(lines, captures, "pywb's index of {} packs", packs.len());
    let wayback = Wayback::start(&python, root.path());
    let ready = started.elapsed();

    // The page, byte for byte.
    let ts = &page.timestamp;
    let (status, body) = wayback.get(&format!("/{COLL}/{ts}id_/{entry}"));
    assert_eq!(status, 200, "{entry}: {}", String::from_utf8_lossy(&body));
    assert!(body == served(&entry), "{entry}: replayed bytes differ");

    // Its requisites, as a replay of the page asks for them: at the page's
    // timestamp, archived bytes.
    for path in ENTRY_REQUISITES {
        let url = site.url(path);
        let (status, body) = wayback.get(&format!("/{COLL}/{ts}id_/{url}"));
        assert_eq!(status, 200, "{url}");
        assert!(body == served(&url), "{url}: replayed bytes differ");
    }
    // Every requisite of the crawl at its own capture time.
    let mut by_kind: BTreeMap<&str, u64> = BTreeMap::new();
    for r in &requisites {
        let (status, body) = wayback.get(&format!("/{COLL}/{}id_/{}", r.timestamp, r.uri));
        assert_eq!(status, 200, "{} ({})", r.uri, r.kind);
        assert!(body == served(&r.uri), "{}: replayed bytes differ", r.uri);
        let ext = r.uri.rsplit('.').next().unwrap_or("");
        *by_kind.entry(ext).or_insert(0) += 1;
    }

    // What was not archived does not replay: the page's requisites the site
    // lacks, a file of the site no page embeds, a path the site never had.
    let not_archived: Vec<String> = ENTRY_MISSING
        .iter()
        .chain(&["/hid2file.js", "/media/navigation/no-such.svg"])
        .map(|p| site.url(p))
        .collect();
    for url in &not_archived {
        assert!(records.iter().all(|r| &r.uri != url), "{url} was archived");
        let (status, _) = wayback.get(&format!("/{COLL}/{ts}id_/{url}"));
        assert_ne!(status, 200, "{url} was never archived but replays");
    }

    // The rewritten replay of the page (mp_: the page itself, without
    // pywb's top frame) points its requisites into the collection.
    let (status, body) = wayback.get(&format!("/{COLL}/{ts}mp_/{entry}"));
    let text = String::from_utf8_lossy(&body);
    assert_eq!(status, 200, "{text}");
    let base = format!("/{COLL}/{ts}mp_/{}", site.url("/"));
    assert!(
        text.contains(&base),
        "rewritten <base> {base} not in {text}"
    );

    // The moved page: its old address replays the archived 301 with its
    // Location rewritten into the collection, and the target replays the page.
    let old = records
        .iter()
        .find(|r| r.kind == "response" && r.uri == moved)
        .unwrap_or_else(|| panic!("the 301 of {moved} is not archived: {summary}"));
    let path = format!("/{COLL}/{}mp_/{moved}", old.timestamp);
    let (status, head, _) = wayback
        .try_get_with_head(&path)
        .unwrap_or_else(|e| panic!("GET {path}: {e}"));
    assert_eq!(status, 301, "{path}: {head}");
    let location = head
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case("location")
                .then(|| v.trim().to_string())
        })
        .unwrap_or_else(|| panic!("{path}: no Location in {head}"));
    let target = site.url(MOVED_TO);
    assert!(
        location.contains(&format!("/{COLL}/")) && location.ends_with(&target),
        "{path} redirects to {location}, not into the collection to {target}"
    );
    let next = location
        .strip_prefix(&format!("http://{}", wayback.addr))
        .unwrap_or(&location);
    let (status, body) = wayback.get(next);
    let text = String::from_utf8_lossy(&body);
    assert_eq!(status, 200, "{next}: {text}");
    assert!(
        text.contains("This help page moved here."),
        "{next}: {text}"
    );
    let exact = next.replacen("mp_/", "id_/", 1);
    assert_eq!(
        wayback.get(&exact),
        (200, MOVED_PAGE.as_bytes().to_vec()),
        "{exact}"
    );

    // What a reader opens: the page in pywb's frame.
    let (status, body) = wayback.get(&format!("/{COLL}/{ts}/{entry}"));
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&body));

    println!(
        "pywb {PYWB_VERSION}: {} packs, {} records; entry page + {} requisites at its \
         timestamp, {} requisites of {} pages at their own ({by_kind:?}; records {kinds:?}), \
         {} not archived -> no 200; crawl {:.1?}, pywb ready {:.1?}, total {:.1?}",
        packs.len(),
        records.len(),
        ENTRY_REQUISITES.len(),
        requisites.len(),
        summary["pages"],
        not_archived.len(),
        crawled,
        ready,
        started.elapsed()
    );
}

/// One archive in pywb twice: a collection indexed by `export cdxj` (the
/// default, for replay) and one by `export cdxj --records` (each record as
/// it is, as `cdxj-indexer` lists it). Returns the pywb folder and the two
/// index texts.
fn collections(python: &Path, ws: &Workspace) -> (tempfile::TempDir, String, String) {
    let root = tempfile::tempdir().expect("tempdir");
    let replay = String::from_utf8(ws.harvest(&["export", "cdxj"]).stdout).unwrap();
    let records = String::from_utf8(ws.harvest(&["export", "cdxj", "--records"]).stdout).unwrap();
    for (coll, index) in [(COLL, &replay), ("records", &records)] {
        wb_manager(python, root.path(), &["init", coll]);
        let dir = root.path().join("collections").join(coll);
        for pack in ws.packs() {
            let rel = pack.strip_prefix(ws.packs_dir()).unwrap();
            let to = dir.join("archive").join(rel);
            std::fs::create_dir_all(to.parent().unwrap()).unwrap();
            std::fs::copy(&pack, &to).unwrap();
        }
        std::fs::write(dir.join("indexes/index.cdxj"), index).unwrap();
    }
    (root, replay, records)
}

/// URL -> the latest lines' timestamp and fields (several when captures share that second),
/// of a CDXJ text.
fn latest_lines(index: &str) -> BTreeMap<String, (String, Vec<serde_json::Value>)> {
    let mut out: BTreeMap<String, (String, Vec<serde_json::Value>)> = BTreeMap::new();
    for line in index.lines() {
        let mut parts = line.splitn(3, ' ');
        let (_, ts, json) = (parts.next(), parts.next().unwrap(), parts.next().unwrap());
        let fields: serde_json::Value = serde_json::from_str(json).unwrap();
        let url = fields["url"].as_str().unwrap().to_string();
        match out.get_mut(&url) {
            Some((t, lines)) if t.as_str() == ts => lines.push(fields),
            Some((t, _)) if t.as_str() > ts => {}
            _ => {
                out.insert(url, (ts.to_string(), vec![fields]));
            }
        }
    }
    out
}

/// Every page of `ws` replays in pywb with the bytes `site` serves at its
/// latest capture date (a 304 or an unchanged 200 of the second run), and
/// the 304s among them replay empty from the index of records as they are.
/// Returns (pages, latest captures that are 304s).
fn pages_replay_at_their_latest_date(
    python: &Path,
    ws: &Workspace,
    site: &util::Served,
    files: &SiteFiles,
    what: &str,
) -> (usize, usize) {
    let (root, replay, records) = collections(python, ws);
    let wayback = Wayback::start(python, root.path());
    let pages: BTreeSet<String> =
        util::jsonl(&ws.harvest(&["query", "--format", "jsonl", "--to", "2100-01-01"]))
            .iter()
            .map(|p| p["url"].as_str().unwrap().to_string())
            .collect();
    let latest = latest_lines(&replay);
    let as_recorded = latest_lines(&records);
    let mut not_modified = 0;
    for url in &pages {
        let (ts, _) = &latest[url];
        let path = url.strip_prefix(&site.base).unwrap();
        let (status, body) = wayback.get(&format!("/{COLL}/{ts}id_/{url}"));
        assert_eq!(status, 200, "{what}: {url} at {ts}");
        assert!(
            body == files.get(path).unwrap(),
            "{what}: {url} at {ts} replays other bytes ({} of {})",
            body.len(),
            files.get(path).unwrap().len()
        );
        let (recorded_ts, recorded) = &as_recorded[url];
        assert_eq!(recorded_ts, ts, "{what}: {url}");
        // A 304 alone at its date (in the same second as its original, replay may pick
        // either record).
        if recorded.len() == 1 && recorded[0]["status"] == "304" {
            not_modified += 1;
            // What cdxj-indexer's listing gives replay: the 304 itself.
            let (status, body) = wayback.get(&format!("/records/{ts}id_/{url}"));
            assert!(
                status == 304 && body.is_empty(),
                "{what}: {url} replays {status} from the records' index"
            );
        }
    }
    (pages.len(), not_modified)
}

/// Issue 42 item 2: a recrawled archive replays in pywb at its latest dates.
/// A site crawled twice (the second run gets 304s where the site sends
/// validators, unchanged 200s elsewhere), and a second archive that imports
/// the first one's packs twice: in both, every page replays with its
/// content at its latest capture date, 304s included; fsck finds every
/// revisit's original listed and the export complete, and the second
/// import adds nothing.
#[test]
fn recrawled_and_reimported_archives_replay_every_page_at_its_latest_date() {
    let started = Instant::now();
    let python = pywb_python();
    let files = real_site_files();
    let site = util::serve_with_validators(real_site_files());
    let ws = Workspace::new(&format!("{}{DEMO_ENTRY}", site.base), "help", Some(2));
    let first = ws.crawl();
    let second = ws.crawl();
    assert!(second["not_modified"].as_u64().unwrap() > 5, "{second}");
    let (code, report) = ws.fsck_json(false);
    assert_eq!(code, Some(0), "{report}");
    assert!(report["revisits"].as_u64().unwrap() > 10, "{report}");
    assert_eq!(report["unresolved_revisits"], 0, "{report}");
    assert_eq!(report["unlisted"], 0, "{report}");
    let (pages, not_modified) =
        pages_replay_at_their_latest_date(&python, &ws, &site, &files, "crawled twice");
    assert!(
        pages > 10 && not_modified > 5,
        "{pages} pages, {not_modified} 304s"
    );

    // The same packs imported twice into another archive.
    let imported = Workspace::new(&format!("{}{DEMO_ENTRY}", site.base), "help", Some(2));
    let packs: Vec<String> = ws
        .packs()
        .iter()
        .map(|p| p.to_string_lossy().to_string())
        .collect();
    let mut import = vec!["import", "--quiet", "--json"];
    import.extend(packs.iter().map(String::as_str));
    imported.harvest(&import);
    let before = (
        imported.packs(),
        imported.harvest(&["export", "cdxj"]).stdout,
    );
    let again: serde_json::Value =
        serde_json::from_slice(&imported.harvest(&import).stdout).unwrap();
    let after = (
        imported.packs(),
        imported.harvest(&["export", "cdxj"]).stdout,
    );
    assert!(
        before == after,
        "the second import changed the archive: {again}"
    );
    let (code, report) = imported.fsck_json(false);
    assert_eq!(code, Some(0), "{report}");
    assert!(report["revisits"].as_u64().unwrap() > 10, "{report}");
    let (imported_pages, imported_304) =
        pages_replay_at_their_latest_date(&python, &imported, &site, &files, "imported twice");
    assert_eq!(imported_pages, pages);
    assert_eq!(imported_304, not_modified);
    println!(
        "pywb {PYWB_VERSION}: {pages} pages replay their content at their latest date, \
         {not_modified} of them a 304 (empty from the records' index) — crawled twice \
         ({} then {} pages) and imported twice; {:.1?}",
        first["pages"],
        second["pages"],
        started.elapsed()
    );
}
