//! A tiny loopback HTTP/1.1 server for the crawler tests: one request per
//! connection (`Connection: close`), routes given as a closure, request counts
//! per path kept server-side.
#![allow(dead_code)]

use std::collections::HashMap;
use std::io::Write;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crawler::{CrawlConfig, CrawlEvent, CrawlSummary, NoHistory, Url, UrlHistory};
use extract::Extracted;
use flate2::write::GzEncoder;
use flate2::Compression;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

mod reader;
pub use reader::Extracting;

/// What a test crawl reports: pages with their extraction.
pub type Event = CrawlEvent<Extracted>;

/// A request as the server saw it.
#[derive(Debug, Clone)]
pub struct Request {
    /// The request line as received.
    pub line: String,
    /// Path and query.
    pub path: String,
    /// Header names lowercased.
    pub headers: Vec<(String, String)>,
}

impl Request {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// What the server answers.
pub enum Reply {
    /// A complete response with Content-Length.
    Full {
        status: u16,
        headers: Vec<(String, String)>,
        body: Vec<u8>,
    },
    /// `decoded_bytes` zero bytes, gzip-compressed while being sent, no length.
    GzipBomb { decoded_bytes: u64 },
}

impl Reply {
    pub fn html(body: impl Into<Vec<u8>>) -> Self {
        Self::with_type("text/html; charset=utf-8", body)
    }

    pub fn with_type(content_type: &str, body: impl Into<Vec<u8>>) -> Self {
        Self::Full {
            status: 200,
            headers: vec![("Content-Type".into(), content_type.into())],
            body: body.into(),
        }
    }

    pub fn status(status: u16) -> Self {
        Self::Full {
            status,
            headers: vec![("Content-Type".into(), "text/html".into())],
            body: format!("<html><body>status {status}</body></html>").into_bytes(),
        }
    }

    pub fn redirect(status: u16, location: &str) -> Self {
        Self::Full {
            status,
            headers: vec![("Location".into(), location.into())],
            body: Vec::new(),
        }
    }

    pub fn text(body: &str) -> Self {
        Self::with_type("text/plain", body.as_bytes().to_vec())
    }
}

type Routes = dyn Fn(&Request) -> Reply + Send + Sync;

/// The running server; stops when dropped.
pub struct TestServer {
    pub addr: SocketAddr,
    hits: Arc<Mutex<HashMap<String, u64>>>,
    /// Decoded bytes the bomb route had produced when the client went away.
    pub bomb_bytes: Arc<AtomicU64>,
    handle: JoinHandle<()>,
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.handle.abort();
    }
}

impl TestServer {
    pub async fn start(routes: impl Fn(&Request) -> Reply + Send + Sync + 'static) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind loopback");
        let addr = listener.local_addr().expect("local addr");
        let hits = Arc::new(Mutex::new(HashMap::new()));
        let bomb_bytes = Arc::new(AtomicU64::new(0));
        let routes: Arc<Routes> = Arc::new(routes);
        let (h, b) = (hits.clone(), bomb_bytes.clone());
        let handle = tokio::spawn(async move {
            while let Ok((sock, _)) = listener.accept().await {
                let (routes, h, b) = (routes.clone(), h.clone(), b.clone());
                tokio::spawn(async move {
                    let _ = serve(sock, routes, h, b).await;
                });
            }
        });
        Self {
            addr,
            hits,
            bomb_bytes,
            handle,
        }
    }

    pub fn url(&self, path: &str) -> Url {
        Url::parse(&format!("http://{}{}", self.addr, path)).expect("test url")
    }

    pub fn hits(&self, path: &str) -> u64 {
        self.hits
            .lock()
            .expect("hits")
            .get(path)
            .copied()
            .unwrap_or(0)
    }

    pub fn all_hits(&self) -> HashMap<String, u64> {
        self.hits.lock().expect("hits").clone()
    }
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        301 => "Moved Permanently",
        302 => "Found",
        304 => "Not Modified",
        404 => "Not Found",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "Status",
    }
}

async fn serve(
    mut sock: TcpStream,
    routes: Arc<Routes>,
    hits: Arc<Mutex<HashMap<String, u64>>>,
    bomb_bytes: Arc<AtomicU64>,
) -> std::io::Result<()> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = sock.read(&mut chunk).await?;
        if n == 0 || buf.len() > 64 * 1024 {
            return Ok(());
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    let head = String::from_utf8_lossy(&buf).into_owned();
    let mut lines = head.split("\r\n");
    let line = lines.next().unwrap_or_default().to_string();
    let path = line.split(' ').nth(1).unwrap_or("/").to_string();
    let headers = lines
        .take_while(|l| !l.is_empty())
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    *hits.lock().expect("hits").entry(path.clone()).or_default() += 1;
    let req = Request {
        line,
        path,
        headers,
    };
    match routes(&req) {
        Reply::Full {
            status,
            headers,
            body,
        } => {
            let mut out = format!("HTTP/1.1 {status} {}\r\n", reason(status));
            for (k, v) in headers {
                out.push_str(&format!("{k}: {v}\r\n"));
            }
            out.push_str(&format!(
                "Content-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            ));
            sock.write_all(out.as_bytes()).await?;
            sock.write_all(&body).await?;
        }
        Reply::GzipBomb { decoded_bytes } => {
            let head = "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Encoding: gzip\r\nConnection: close\r\n\r\n";
            sock.write_all(head.as_bytes()).await?;
            let zeros = vec![0u8; 1024 * 1024];
            let mut enc = GzEncoder::new(Vec::new(), Compression::fast());
            let mut produced = 0u64;
            while produced < decoded_bytes {
                enc.write_all(&zeros)?;
                produced += zeros.len() as u64;
                bomb_bytes.store(produced, Ordering::SeqCst);
                let out = std::mem::take(enc.get_mut());
                if !out.is_empty() {
                    sock.write_all(&out).await?;
                }
            }
            let out = enc.finish()?;
            sock.write_all(&out).await?;
        }
    }
    sock.shutdown().await
}

/// Path of the fixtures folder.
pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("fixtures")
}

/// A config for loopback tests: no delay, no retries, short timeouts.
pub fn test_config(seeds: Vec<Url>) -> CrawlConfig {
    CrawlConfig {
        seeds,
        politeness_delay: Duration::ZERO,
        concurrency: 4,
        retries: 0,
        retry_backoff: Duration::from_millis(10),
        request_timeout: Duration::from_secs(10),
        connect_timeout: Duration::from_secs(2),
        // The test sites are on loopback.
        allow_private: true,
        ..CrawlConfig::default()
    }
}

/// Runs a crawl to the end and collects every event.
pub async fn run(config: CrawlConfig) -> (CrawlSummary, Vec<Event>) {
    run_with_history(config, Arc::new(NoHistory)).await
}

/// A crawl on `queue` (a taken-up run's queue): its result and events.
pub async fn run_with_queue(
    config: CrawlConfig,
    history: Arc<dyn UrlHistory>,
    queue: Arc<dyn crawler::UrlQueue>,
) -> (crawler::Result<CrawlSummary>, Vec<Event>) {
    let (tx, rx) = tokio::sync::mpsc::channel(16);
    let collector = tokio::spawn(collect(rx));
    let summary = crawler::crawl_with_queue(
        config,
        Extracting,
        history,
        queue,
        tx,
        crawler::CancellationToken::new(),
    )
    .await;
    (summary, collector.await.unwrap_or_default())
}

/// Every event until the channel closes.
async fn collect(mut rx: tokio::sync::mpsc::Receiver<Event>) -> Vec<Event> {
    let mut events = Vec::new();
    while let Some(e) = rx.recv().await {
        events.push(e);
    }
    events
}

/// [`run`] with a given history.
pub async fn run_with_history(
    config: CrawlConfig,
    history: Arc<dyn UrlHistory>,
) -> (CrawlSummary, Vec<Event>) {
    let (tx, rx) = tokio::sync::mpsc::channel(16);
    let collector = tokio::spawn(collect(rx));
    let summary = tokio::time::timeout(
        Duration::from_secs(60),
        crawler::crawl(config, Extracting, history, tx),
    )
    .await
    .expect("crawl finished within 60 s")
    .expect("crawl config is valid");
    let events = collector.await.expect("collector");
    (summary, events)
}

/// The pages among `events`.
pub fn pages(events: &[Event]) -> Vec<&crawler::FetchedPage<Extracted>> {
    events
        .iter()
        .filter_map(|e| match e {
            CrawlEvent::Page(p) => Some(p.as_ref()),
            _ => None,
        })
        .collect()
}

/// The failures among `events` as (url, kind).
pub fn failures(events: &[Event]) -> Vec<(String, crawler::FailureKind)> {
    events
        .iter()
        .filter_map(|e| match e {
            CrawlEvent::Failure { url, kind, .. } => Some((url.clone(), *kind)),
            _ => None,
        })
        .collect()
}
