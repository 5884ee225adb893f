//! A static site served from a `.tar.gz` on 127.0.0.1: the demo's site, the
//! end-to-end tests' site and the ingest benchmark's site.

use std::collections::HashMap;
use std::io::Read;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use anyhow::{Context, Result};
use axum::body::Body;
use axum::extract::State;
use axum::http::{header, StatusCode, Uri};
use axum::response::Response;

/// The demo site: real LibreOffice help pages (zh-CN, MPL-2.0), see
/// `deploy/demo/README.md`.
pub const DEMO_SITE: &[u8] = include_bytes!("../deploy/demo/site.tar.gz");

/// Files of a site, by URL path (`/zh-CN/text/...html`), and paths that
/// answer a redirect.
#[derive(Debug, Default)]
pub struct SiteFiles {
    files: HashMap<String, Vec<u8>>,
    /// Path -> `Location` of a `301 Moved Permanently`.
    redirects: HashMap<String, String>,
}

impl SiteFiles {
    /// Unpack a gzip-compressed tar archive into memory.
    pub fn from_tar_gz(bytes: &[u8]) -> Result<SiteFiles> {
        let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(bytes));
        let mut files = HashMap::new();
        for entry in archive.entries().context("site archive is not a tar.gz")? {
            let mut entry = entry.context("corrupt entry in site archive")?;
            if !entry.header().entry_type().is_file() {
                continue;
            }
            let path = entry.path().context("bad path in site archive")?;
            let key = format!(
                "/{}",
                path.to_string_lossy()
                    .trim_start_matches("./")
                    .trim_start_matches('/')
            );
            let mut data = Vec::with_capacity(entry.size() as usize);
            entry
                .read_to_end(&mut data)
                .context("reading site archive")?;
            files.insert(key, data);
        }
        Ok(SiteFiles {
            files,
            redirects: HashMap::new(),
        })
    }

    /// Every regular file below `root`, keyed by its path relative to `root`.
    pub fn from_dir(root: &Path) -> Result<SiteFiles> {
        let mut files = HashMap::new();
        let mut stack = vec![root.to_path_buf()];
        while let Some(dir) = stack.pop() {
            for entry in
                std::fs::read_dir(&dir).with_context(|| format!("reading {}", dir.display()))?
            {
                let entry = entry?;
                let path = entry.path();
                if entry.file_type()?.is_dir() {
                    stack.push(path);
                } else {
                    let rel = path.strip_prefix(root).unwrap_or(&path);
                    files.insert(format!("/{}", rel.to_string_lossy()), std::fs::read(&path)?);
                }
            }
        }
        Ok(SiteFiles {
            files,
            redirects: HashMap::new(),
        })
    }

    /// A site from (URL path, bytes) pairs.
    pub fn from_pairs<I: IntoIterator<Item = (String, Vec<u8>)>>(pairs: I) -> SiteFiles {
        SiteFiles {
            files: pairs.into_iter().collect(),
            redirects: HashMap::new(),
        }
    }

    /// `path` answers `301 Moved Permanently` with `Location: location` (a moved page).
    pub fn with_redirect(mut self, path: &str, location: &str) -> SiteFiles {
        self.redirects
            .insert(path.to_string(), location.to_string());
        self
    }

    pub fn len(&self) -> usize {
        self.files.len()
    }

    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// Paths of the HTML pages.
    pub fn html_paths(&self) -> impl Iterator<Item = &str> {
        self.files
            .keys()
            .map(String::as_str)
            .filter(|p| p.ends_with(".html") || p.ends_with(".htm"))
    }

    pub fn get(&self, path: &str) -> Option<&[u8]> {
        self.files.get(path).map(Vec::as_slice)
    }

    /// Total bytes of all files.
    pub fn total_bytes(&self) -> u64 {
        self.files.values().map(|v| v.len() as u64).sum()
    }

    /// Writes every file below `root` at its URL path (for a server that serves a folder;
    /// redirects are not files and are left out).
    pub fn write_to(&self, root: &Path) -> Result<()> {
        for (path, bytes) in &self.files {
            let rel = path.trim_start_matches('/');
            if rel.split('/').any(|part| part == ".." || part.is_empty()) {
                anyhow::bail!("site path {path} does not name a file below the site folder");
            }
            let file = root.join(rel);
            if let Some(dir) = file.parent() {
                std::fs::create_dir_all(dir)
                    .with_context(|| format!("cannot create {}", dir.display()))?;
            }
            std::fs::write(&file, bytes)
                .with_context(|| format!("cannot write {}", file.display()))?;
        }
        Ok(())
    }
}

struct SiteState {
    files: SiteFiles,
    requests: AtomicU64,
}

/// A running loopback server; stops when dropped.
pub struct SiteServer {
    pub addr: SocketAddr,
    state: Arc<SiteState>,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
}

impl SiteServer {
    /// Serve `files` on 127.0.0.1 on a free port, on the current tokio runtime.
    pub async fn start(files: SiteFiles) -> Result<SiteServer> {
        let state = Arc::new(SiteState {
            files,
            requests: AtomicU64::new(0),
        });
        let app = axum::Router::new()
            .fallback(serve_file)
            .with_state(state.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .context("cannot bind a loopback port for the site")?;
        let addr = listener.local_addr()?;
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        tokio::spawn(async move {
            let served = axum::serve(listener, app).with_graceful_shutdown(async {
                let _ = rx.await;
            });
            if let Err(e) = served.await {
                tracing::error!(error = %e, "site server stopped");
            }
        });
        Ok(SiteServer {
            addr,
            state,
            shutdown: Some(tx),
        })
    }

    /// `http://127.0.0.1:PORT` + `path`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{}", self.addr, path)
    }

    /// Requests answered so far.
    pub fn requests(&self) -> u64 {
        self.state.requests.load(Ordering::Relaxed)
    }
}

impl Drop for SiteServer {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
    }
}

async fn serve_file(State(state): State<Arc<SiteState>>, uri: Uri) -> Response {
    state.requests.fetch_add(1, Ordering::Relaxed);
    let path = uri.path();
    let path = if path.ends_with('/') {
        format!("{path}index.html")
    } else {
        path.to_string()
    };
    if let Some(location) = state.files.redirects.get(&path) {
        return Response::builder()
            .status(StatusCode::MOVED_PERMANENTLY)
            .header(header::LOCATION, location.as_str())
            .header(header::CONTENT_TYPE, "text/html")
            .body(Body::from(format!(
                "<html><body><a href=\"{location}\">Moved</a></body></html>"
            )))
            .unwrap_or_default();
    }
    match state.files.get(&path) {
        Some(bytes) => {
            let ctype = content_type(&path);
            Response::builder()
                .status(StatusCode::OK)
                .header(header::CONTENT_TYPE, ctype)
                .body(Body::from(bytes.to_vec()))
                .unwrap_or_default()
        }
        None => Response::builder()
            .status(StatusCode::NOT_FOUND)
            .header(header::CONTENT_TYPE, "text/plain")
            .body(Body::from("not found\n"))
            .unwrap_or_default(),
    }
}

/// Content type by extension. HTML goes out without a charset label so the
/// crawler's meta/BOM/detection path is exercised, as on many real sites.
fn content_type(path: &str) -> &'static str {
    match path.rsplit('.').next().unwrap_or("") {
        "html" | "htm" => "text/html",
        "txt" => "text/plain",
        "css" => "text/css",
        "js" => "application/javascript",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "woff2" => "font/woff2",
        "svg" => "image/svg+xml",
        _ => "application/octet-stream",
    }
}
