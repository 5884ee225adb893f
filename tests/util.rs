//! Helpers of the end-to-end tests: a loopback site on its own runtime, a
//! scratch data folder with a config, and the `harvest` binary.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use harvest::config::{RawConfig, RawSource};
use harvest::site::{SiteFiles, SiteServer};

/// A site served on 127.0.0.1 for the length of a test.
pub struct Site {
    pub server: SiteServer,
    _rt: tokio::runtime::Runtime,
}

impl Site {
    pub fn serve(files: SiteFiles) -> Site {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("runtime");
        let server = rt.block_on(SiteServer::start(files)).expect("site server");
        Site { server, _rt: rt }
    }

    pub fn demo() -> Site {
        Site::serve(SiteFiles::from_tar_gz(harvest::site::DEMO_SITE).expect("demo site"))
    }

    pub fn url(&self, path: &str) -> String {
        self.server.url(path)
    }
}

/// A data folder with a `harvest.toml` crawling `seed` with no delay.
pub struct Workspace {
    pub dir: tempfile::TempDir,
    pub config: PathBuf,
}

impl Workspace {
    pub fn new(seed: &str, source: &str, max_depth: Option<u32>) -> Workspace {
        Workspace::with_backends(seed, source, max_depth, None, None)
    }

    /// A workspace whose packs live at `packs` (e.g. `hdfs://…/root`) and whose
    /// tables live behind the HBase Thrift server `thrift`, when given.
    pub fn with_backends(
        seed: &str,
        source: &str,
        max_depth: Option<u32>,
        packs: Option<String>,
        thrift: Option<String>,
    ) -> Workspace {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut raw = RawConfig {
            data_dir: Some(dir.path().to_path_buf()),
            ..Default::default()
        };
        raw.storage.packs = packs;
        if let Some(t) = thrift {
            raw.index.backend = Some("hbase".into());
            raw.index.thrift = Some(t);
        }
        raw.crawl.seeds = vec![seed.to_string()];
        raw.crawl.max_depth = max_depth;
        raw.crawl.politeness_delay_ms = Some(0);
        // The test sites are on loopback.
        raw.crawl.allow_private = Some(true);
        raw.sources = vec![RawSource {
            name: source.into(),
            hosts: vec!["127.0.0.1".into()],
            prefixes: vec![],
            ..RawSource::default()
        }];
        let config = dir.path().join("harvest.toml");
        std::fs::write(&config, toml::to_string(&raw).expect("toml")).expect("write config");
        Workspace { dir, config }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Change the workspace's harvest.toml.
    #[allow(dead_code)]
    pub fn configure(&self, f: impl FnOnce(&mut RawConfig)) {
        let text = std::fs::read_to_string(&self.config).expect("read config");
        let mut raw: RawConfig = toml::from_str(&text).expect("parse config");
        f(&mut raw);
        std::fs::write(&self.config, toml::to_string(&raw).expect("toml")).expect("write config");
    }

    /// Run `harvest -c CONFIG args…`, asserting success.
    pub fn harvest(&self, args: &[&str]) -> Output {
        succeeded(args, self.harvest_raw(args))
    }

    pub fn harvest_raw(&self, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_harvest"))
            .arg("-c")
            .arg(&self.config)
            .args(args)
            .output()
            .expect("run harvest")
    }

    pub fn train_demo_model(&self) {
        let model = self.path().join("models").join("topic.model");
        std::fs::create_dir_all(model.parent().unwrap()).unwrap();
        let corpus = format!(
            "tsv:{}/deploy/demo/train.tsv.gz",
            env!("CARGO_MANIFEST_DIR")
        );
        self.harvest(&[
            "model",
            "train",
            "--corpus",
            &corpus,
            "--out",
            model.to_str().unwrap(),
        ]);
    }

    /// `harvest fsck --json --quiet [--repair]`: exit code and report.
    #[allow(dead_code)]
    pub fn fsck_json(&self, repair: bool) -> (Option<i32>, serde_json::Value) {
        let mut args = vec!["fsck", "--json", "--quiet"];
        if repair {
            args.push("--repair");
        }
        let out = self.harvest_raw(&args);
        let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!("fsck --json: {e}\n{}", String::from_utf8_lossy(&out.stderr))
        });
        (out.status.code(), report)
    }

    pub fn crawl(&self) -> serde_json::Value {
        let out = self.harvest(&["crawl", "--quiet", "--json"]);
        serde_json::from_slice(&out.stdout).expect("crawl --json prints JSON")
    }

    pub fn packs_dir(&self) -> PathBuf {
        self.path().join("packs")
    }

    /// Every pack file, sorted.
    pub fn packs(&self) -> Vec<PathBuf> {
        let mut out = Vec::new();
        let mut stack = vec![self.packs_dir()];
        while let Some(d) = stack.pop() {
            let Ok(rd) = std::fs::read_dir(&d) else {
                continue;
            };
            for e in rd.flatten() {
                let p = e.path();
                if p.is_dir() {
                    stack.push(p);
                } else if p.to_string_lossy().ends_with(".warc.gz") {
                    out.push(p);
                }
            }
        }
        out.sort();
        out
    }
}

/// One record found by walking the packs: the brute-force view of the archive.
#[derive(Debug, Clone)]
pub struct PackedRecord {
    pub pack: PathBuf,
    pub kind: String,
    pub uri: String,
    pub digest: String,
    pub body: Vec<u8>,
    pub record_id: String,
    /// `WARC-Concurrent-To`, when the record has one.
    pub concurrent_to: Option<String>,
    /// HTTP status of a response or revisit record (0 for others).
    pub status: u16,
}

impl PackedRecord {
    /// A page's record (2xx), not a redirect or error answer.
    pub fn is_page_answer(&self) -> bool {
        (200..300).contains(&self.status)
    }
}

/// Run `harvest args…` without a config of the test's own, asserting success.
pub fn run_harvest(args: &[&str]) -> Output {
    let out = Command::new(env!("CARGO_BIN_EXE_harvest"))
        .args(args)
        .output()
        .expect("run harvest");
    succeeded(args, out)
}

/// `out` of `harvest args…`, after asserting that it succeeded.
fn succeeded(args: &[&str], out: Output) -> Output {
    assert!(
        out.status.success(),
        "harvest {args:?} failed: {}\n{}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    out
}

/// Walk every capture record (response, revisit) of every pack with the WARC reader;
/// warcinfo and request records are checked by [`assert_records_linked`].
pub fn walk_packs(ws: &Workspace) -> Vec<PackedRecord> {
    let mut out = Vec::new();
    for pack in ws.packs() {
        let bytes = std::fs::read(&pack).unwrap();
        for item in packer::warc::RecordIter::new(&bytes) {
            let (_offset, _len, rec) = item.unwrap_or_else(|e| panic!("{}: {e}", pack.display()));
            let kind = rec.record_type().unwrap_or_default().to_string();
            if kind == "warcinfo" || kind == "request" {
                continue;
            }
            let http = rec.http_response().ok();
            let status = http.as_ref().map_or(0, |h| h.status);
            let body = if kind == "response" {
                http.expect("http response").body
            } else {
                Vec::new()
            };
            out.push(PackedRecord {
                pack: pack.clone(),
                kind,
                uri: rec.target_uri().unwrap_or_default().to_string(),
                digest: rec
                    .header("WARC-Payload-Digest")
                    .unwrap_or_default()
                    .to_string(),
                body,
                record_id: rec.record_id().unwrap_or_default().to_string(),
                concurrent_to: rec.header("WARC-Concurrent-To").map(str::to_string),
                status,
            });
        }
    }
    out
}

/// The fields of the warcinfo record that starts `pack` (asserted to be one).
pub fn warcinfo_fields(pack: &Path) -> BTreeMap<String, String> {
    let bytes = std::fs::read(pack).unwrap();
    let (_, _, info) = packer::warc::RecordIter::new(&bytes)
        .next()
        .expect("a record")
        .expect("readable");
    assert_eq!(info.record_type(), Some("warcinfo"), "{}", pack.display());
    String::from_utf8(info.block)
        .expect("UTF-8 warc-fields")
        .lines()
        .filter_map(|l| l.split_once(": "))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// What [`assert_records_linked`] saw.
#[derive(Debug, Clone, Default)]
pub struct Links {
    /// Response and revisit records, each with its request.
    pub captures: usize,
    /// Request records: their request lines and headers (names lower case), in pack order.
    pub requests: Vec<(String, String, BTreeMap<String, String>)>,
}

impl Links {
    /// The request headers sent for `uri` (the first request of it).
    pub fn headers_of(&self, uri: &str) -> Option<&BTreeMap<String, String>> {
        self.requests
            .iter()
            .find(|(u, _, _)| u == uri)
            .map(|(_, _, h)| h)
    }
}

/// Issue 14, checked on every pack by brute force: the first record is a warcinfo and
/// every other record names the last warcinfo before it in `WARC-Warcinfo-ID` (a later
/// warcinfo, naming the pack, starts the records of a run that appended to it); every response and revisit is
/// followed, in the same pack, by exactly one request record whose `WARC-Concurrent-To`
/// names it (same target URI and date), and no request names anything else; every
/// request is a GET whose headers carry the configured user agent and a `host`.
pub fn assert_records_linked(ws: &Workspace) -> Links {
    let cfg = harvest::config::Config::load(Some(&ws.config)).expect("config");
    let user_agent = cfg.crawl.user_agent.as_str();
    let mut links = Links::default();
    let mut named: BTreeMap<String, u32> = BTreeMap::new();
    let mut captures: BTreeMap<String, PathBuf> = BTreeMap::new();
    for pack in ws.packs() {
        let bytes = std::fs::read(&pack).unwrap();
        let records: Vec<packer::WarcRecord> = packer::warc::RecordIter::new(&bytes)
            .map(|r| r.unwrap_or_else(|e| panic!("{}: {e}", pack.display())).2)
            .collect();
        let info = &records[0];
        assert_eq!(info.record_type(), Some("warcinfo"), "{}", pack.display());
        let mut info_id = info.record_id().expect("warcinfo id");
        let file_name = pack.file_name().and_then(|n| n.to_str());
        for (i, rec) in records.iter().enumerate().skip(1) {
            let kind = rec.record_type().unwrap_or_default();
            let id = rec.record_id().unwrap_or_default();
            if kind == "warcinfo" {
                // A later run appending to the pack: its records name its own.
                assert_eq!(rec.header("WARC-Filename"), file_name, "{}", pack.display());
                info_id = rec.record_id().expect("warcinfo id");
                continue;
            }
            assert_eq!(
                rec.header("WARC-Warcinfo-ID"),
                Some(info_id),
                "{} record {i} ({kind} {id}) does not name the warcinfo before it",
                pack.display()
            );
            match kind {
                "response" | "revisit" => {
                    captures.insert(id.to_string(), pack.clone());
                    let next = records.get(i + 1);
                    let request = next.filter(|n| n.record_type() == Some("request"));
                    let Some(request) = request else {
                        panic!(
                            "{}: {kind} {id} of {:?} is not followed by its request",
                            pack.display(),
                            rec.target_uri()
                        )
                    };
                    assert_eq!(request.header("WARC-Concurrent-To"), Some(id));
                    assert_eq!(request.target_uri(), rec.target_uri());
                    assert_eq!(request.header("WARC-Date"), rec.header("WARC-Date"));
                }
                "request" => {
                    let to = rec.header("WARC-Concurrent-To").expect("concurrent to");
                    *named.entry(to.to_string()).or_default() += 1;
                    assert_eq!(
                        rec.header("Content-Type"),
                        Some("application/http; msgtype=request")
                    );
                    let text = String::from_utf8(rec.block.clone()).expect("UTF-8 request");
                    let (head, rest) = text.split_once("\r\n\r\n").expect("end of headers");
                    assert_eq!(rest, "", "a GET has no body");
                    let mut lines = head.split("\r\n");
                    let line = lines.next().unwrap_or_default().to_string();
                    assert!(
                        line.starts_with("GET /") && line.ends_with(" HTTP/1.1"),
                        "{line}"
                    );
                    let headers: BTreeMap<String, String> = lines
                        .filter_map(|l| l.split_once(": "))
                        .map(|(k, v)| (k.to_ascii_lowercase(), v.to_string()))
                        .collect();
                    assert_eq!(
                        headers.get("user-agent").map(String::as_str),
                        Some(user_agent),
                        "{head}"
                    );
                    assert!(headers.contains_key("host"), "{head}");
                    let uri = rec.target_uri().unwrap_or_default().to_string();
                    links.requests.push((uri, line, headers));
                }
                other => panic!("{}: unexpected {other} record", pack.display()),
            }
        }
    }
    for (id, pack) in &captures {
        assert_eq!(
            named.get(id).copied(),
            Some(1),
            "{}: capture {id} has not exactly one request",
            pack.display()
        );
    }
    assert_eq!(
        named.len(),
        captures.len(),
        "a request names no capture of the packs"
    );
    links.captures = captures.len();
    links
}

/// `python3 -m warcio check` and `index` must accept `pack`.
pub fn assert_warcio_accepts(pack: &Path) {
    for verb in ["check", "index"] {
        let out = Command::new("python3")
            .args(["-m", "warcio.cli", verb])
            .arg(pack)
            .output()
            .expect("python3 must be installed");
        assert!(
            out.status.success(),
            "warcio {verb} rejected {} (is warcio installed? deploy/data/install-test-peers.sh puts it in deploy/cache/test-venv, which deploy/test.sh puts first on PATH): {}{}",
            pack.display(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

pub fn count_by<T: Ord, I: IntoIterator<Item = T>>(items: I) -> BTreeMap<T, u64> {
    let mut m = BTreeMap::new();
    for i in items {
        *m.entry(i).or_insert(0) += 1;
    }
    m
}

/// `harvest -c CONFIG serve --listen 127.0.0.1:0 EXTRA…` as a child: the
/// child and its base URL (`http://host:port`) from the ready line.
#[allow(dead_code)]
pub fn start_serve(config: &Path, extra: &[&str]) -> (std::process::Child, String) {
    use std::io::BufRead;
    let mut server = Command::new(env!("CARGO_BIN_EXE_harvest"))
        .arg("-c")
        .arg(config)
        .args(["serve", "--listen", "127.0.0.1:0"])
        .args(extra)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start harvest serve");
    let mut line = String::new();
    std::io::BufReader::new(server.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("ready line");
    let base = line.trim().rsplit(' ').next().expect("address").to_string();
    (server, base)
}

/// A child process killed and reaped when dropped, so a test that fails
/// does not leave its server running.
#[allow(dead_code)]
pub struct KillOnDrop(pub std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `GET path` on the server at `base` (`http://host:port` or `host:port`),
/// plain HTTP/1.0; the body as text.
#[allow(dead_code)]
pub fn http_get(base: &str, path: &str) -> String {
    use std::io::{Read, Write};
    let addr = base.trim_start_matches("http://");
    let mut s = std::net::TcpStream::connect(addr).expect("connect to harvest serve");
    write!(s, "GET {path} HTTP/1.0\r\nHost: {addr}\r\n\r\n").unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    text.split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default()
}

/// The JSON lines a command printed.
pub fn jsonl(out: &Output) -> Vec<serde_json::Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("jsonl line"))
        .collect()
}

/// A mount made for a test (needs root, as in CI); unmounted on drop.
pub struct Mount(PathBuf);

impl Mount {
    /// Runs `mount ARGS... AT`.
    fn run(args: &[&str], at: &Path) {
        let out = Command::new("mount")
            .args(args)
            .arg(at)
            .output()
            .expect("run mount");
        assert!(
            out.status.success(),
            "mount {args:?} {} failed (this test mounts file systems and needs root): {}",
            at.display(),
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// A read-only bind mount of `dir` at `at`.
    pub fn read_only(dir: &Path, at: &Path) -> Mount {
        std::fs::create_dir_all(at).expect("mount point");
        Self::run(&["--bind", dir.to_str().expect("UTF-8 path")], at);
        let mount = Mount(at.to_path_buf());
        Self::run(&["-o", "remount,bind,ro"], at);
        mount
    }

    /// A tmpfs of `size` (`1m`) at `at`.
    pub fn tmpfs(at: &Path, size: &str) -> Mount {
        std::fs::create_dir_all(at).expect("mount point");
        Self::run(&["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"], at);
        Mount(at.to_path_buf())
    }

    /// Grows (or shrinks) the tmpfs to `size`, keeping its files.
    pub fn resize(&self, size: &str) {
        Self::run(&["-o", &format!("remount,size={size}")], &self.0);
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

/// FNV-1a of the body: the ETag.
fn fnv(b: &[u8]) -> u64 {
    b.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &x| {
        (h ^ u64::from(x)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The demo site (real LibreOffice help pages), some extra pages, and
/// validators on about half of the paths: a second crawl gets 304s there and
/// unchanged 200s elsewhere.
async fn answer(
    files: std::sync::Arc<SiteFiles>,
    uri: axum::http::Uri,
    headers: axum::http::HeaderMap,
) -> axum::response::Response {
    let path = if uri.path().ends_with('/') {
        format!("{}index.html", uri.path())
    } else {
        uri.path().to_string()
    };
    let Some(body) = files.get(&path) else {
        return axum::response::Response::builder()
            .status(axum::http::StatusCode::NOT_FOUND)
            .header(axum::http::header::CONTENT_TYPE, "text/plain")
            .body(axum::body::Body::from("not found\n"))
            .unwrap();
    };
    let mut r = axum::response::Response::builder().status(axum::http::StatusCode::OK);
    if fnv(path.as_bytes()).is_multiple_of(2) {
        let tag = format!("\"{:016x}\"", fnv(body));
        if headers
            .get(axum::http::header::IF_NONE_MATCH)
            .is_some_and(|v| v.as_bytes() == tag.as_bytes())
        {
            return axum::response::Response::builder()
                .status(axum::http::StatusCode::NOT_MODIFIED)
                .header(axum::http::header::ETAG, tag)
                .body(axum::body::Body::empty())
                .unwrap();
        }
        r = r
            .header(axum::http::header::ETAG, tag)
            .header(axum::http::header::CONTENT_TYPE, "text/html; charset=utf-8");
    } else if path.ends_with(".txt") {
        r = r.header(axum::http::header::CONTENT_TYPE, "text/plain");
    } else {
        r = r.header(axum::http::header::CONTENT_TYPE, "text/html");
    }
    r.body(axum::body::Body::from(body.to_vec())).unwrap()
}

/// A site of [`serve_with_validators`].
pub struct Served {
    pub base: String,
    _rt: tokio::runtime::Runtime,
}

/// `files` on 127.0.0.1 with validators (ETag, answered with 304) on about
/// half of the paths: a second crawl gets 304s there and unchanged 200s
/// elsewhere.
pub fn serve_with_validators(files: SiteFiles) -> Served {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let files = std::sync::Arc::new(files);
    let base = rt.block_on(async move {
        let app = axum::Router::new().fallback(
            move |uri: axum::http::Uri, headers: axum::http::HeaderMap| {
                let f = files.clone();
                async move { answer(f, uri, headers).await }
            },
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        format!("http://{addr}")
    });
    Served { base, _rt: rt }
}

/// The real news corpus of the news demo (`deploy/cache/NewsArticles.csv`); fails, naming
/// the script that fetches it, when it is missing.
pub fn news_csv() -> PathBuf {
    let csv = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("deploy/cache/NewsArticles.csv");
    assert!(
        csv.exists(),
        "{} is missing: run indexer/tests/fetch-news.sh",
        csv.display()
    );
    csv
}
