//! `harvest serve`: the analysts' HTTP API and web UI (axum).
//!
//! Routes are listed in [`ROUTES`] (method, path, summary), which the OpenAPI
//! document (`/api/openapi.json`) is generated from, and declared again with
//! their handlers in the router; `tests/api.rs` calls every GET route the
//! document lists, so a route missing from the router fails it.
//! Index and pack reads are synchronous (fjall or the HBase Thrift client),
//! so handlers run them on tokio's blocking pool.

pub mod defaults;
pub mod live;
pub mod metrics;
pub mod openapi;
pub mod params;
pub mod routes;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use axum::body::Body;
use axum::extract::{Path, RawQuery, Request, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use indexer::{GroupBy, Interval, Sort, StatsQuery, StatsRow};
use serde_json::{json, Value};

use crate::config::Config;
use crate::filters::ParamError;
use crate::stores::Stores;
use metrics::Metrics;
use params::{Params, FILTER_PARAMS, RUNS_PARAMS, SEARCH_PARAMS, STATS_PARAMS, TOPICS_PARAMS};

/// Default and largest `limit` of `/api/search`.
pub const DEFAULT_LIMIT: usize = 20;
pub const MAX_LIMIT: usize = 200;
/// How long the page count shown by `/metrics` is reused.
const PAGE_COUNT_TTL: Duration = Duration::from_secs(60);
/// Header of archived pages: no scripts, no plugins, no forms, no same-origin
/// access; inline styles and data: images only.
pub const RAW_CSP: &str =
    "sandbox; default-src 'none'; img-src data:; style-src 'unsafe-inline'; frame-ancestors 'self'";
/// The ready line printed on stdout.
pub const LISTENING: &str = "harvest serve: listening on";

/// Every route: (method, path, summary). The router and the OpenAPI
/// document are both built from this list.
pub const ROUTES: &[(&str, &str, &str)] = &[
    (
        "get",
        "/api/search",
        "Pages matching the filters, one page of results",
    ),
    (
        "get",
        "/api/stats",
        "Counts per time bucket (and group) for the filters",
    ),
    (
        "get",
        "/api/stats.csv",
        "The statistics as CSV (bucket,group,count)",
    ),
    (
        "get",
        "/api/stats.json",
        "The statistics as a JSON download",
    ),
    (
        "get",
        "/api/pages/{id}",
        "All attributes, pack location and capture history of a page",
    ),
    (
        "get",
        "/api/pages/{id}/copies",
        "Every archived copy of the page's story (near-duplicates): source, media, time",
    ),
    (
        "get",
        "/api/pages/{id}/raw",
        "The archived page, read from its pack, sandboxed",
    ),
    ("get", "/api/topics", "Topics present in the index"),
    (
        "get",
        "/api/jobs",
        "Configured crawl jobs: schedule, next run, live progress of a running run, last runs",
    ),
    ("post", "/api/jobs/{name}/run", "Start a run of the job now"),
    ("get", "/api/runs", "Recorded job runs, newest first"),
    (
        "post",
        "/api/cli",
        "Run a command line of an archive command (crawl, jobs, query, stats, get, reextract, fsck, dedup, import, compact, export) on the server's store",
    ),
    (
        "post",
        "/api/uploads",
        "Send a file for a forwarded import (kept until that import ends)",
    ),
    ("get", "/api/sources", "Sources and their years"),
    ("get", "/api/openapi.json", "This document"),
    ("get", "/healthz", "Liveness"),
    ("get", "/metrics", "Prometheus metrics"),
];

/// Options of [`serve`].
#[derive(Debug, Clone)]
pub struct ServeOptions {
    pub listen: SocketAddr,
    /// Bearer token required on `/api/*` and `/metrics` when set. Without
    /// one, the routes that act on the host (the command bridge, uploads,
    /// job runs) still need a token: the server makes one and keeps it in
    /// its private serve file, where the command line finds it.
    pub token: Option<String>,
    /// Host names (besides IP addresses and `localhost`) that requests may
    /// name in `Host` and `Origin` (`harvest serve --allow-host NAME`): a
    /// request naming another host is refused, so a web page cannot reach
    /// the server through DNS rebinding.
    pub allowed_hosts: Vec<String>,
    /// Index reads at once and the wait for a turn.
    pub admission: AdmissionLimits,
    /// The configuration: its jobs are scheduled and runnable, its data dir
    /// gets the serve file that lets the command line find this server.
    pub config: Option<Config>,
    /// The file `config` was read from: re-read when it changes (jobs
    /// added, removed or rescheduled without a restart).
    pub config_file: Option<std::path::PathBuf>,
    pub limits: ServerLimits,
}

pub use defaults::*;

/// Largest request body accepted (the API's only bodies are small JSON:
/// `/api/cli` arguments).
pub const MAX_BODY_BYTES: usize = 64 * 1024;

/// What clients can hold of the server: slow or idle connections are
/// closed after `header_timeout`, and at most `max_connections` are open at
/// once, the oldest idle one closed for a newcomer; one address holds at
/// most `max_idle_per_client` idle ones, its oldest closed for its newcomer
/// (see [`serve_connections`]). So idle connections cannot starve `/healthz`,
/// and one client's cannot push out another's.
#[derive(Debug, Clone, Copy)]
pub struct ServerLimits {
    pub max_connections: usize,
    pub header_timeout: std::time::Duration,
    pub max_idle_per_client: usize,
}

impl Default for ServerLimits {
    fn default() -> Self {
        ServerLimits {
            max_connections: DEFAULT_MAX_CONNECTIONS,
            header_timeout: std::time::Duration::from_secs(DEFAULT_HEADER_TIMEOUT_SECS),
            max_idle_per_client: DEFAULT_MAX_IDLE_PER_CLIENT,
        }
    }
}

/// What the handlers share.
pub struct AppState {
    stores: Stores,
    config: Option<live::LiveConfig>,
    token: Option<String>,
    /// The token of the routes that act on the host ([`host_route`]):
    /// `token` when given, else one made at start.
    admin_token: String,
    /// Names accepted in `Host` and `Origin` besides IP literals and `localhost`.
    allowed_hosts: Vec<String>,
    metrics: Metrics,
    page_count: Mutex<Option<(Instant, u64)>>,
    admission: Admission,
}

/// How many index reads run at once and how long a request may wait for
/// its turn (`harvest serve --max-queries`, `--queue-wait-ms`): past that,
/// or with too many waiting, a request is answered 503 with `Retry-After`
/// at once instead of queueing for seconds behind others.
#[derive(Debug, Clone, Copy)]
pub struct AdmissionLimits {
    /// Requests reading the index at once.
    pub max_queries: usize,
    /// Longest wait for a turn.
    pub queue_wait: Duration,
    /// Requests waiting at most (more are refused at once).
    pub max_waiting: usize,
}

impl Default for AdmissionLimits {
    fn default() -> Self {
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        AdmissionLimits {
            max_queries: cores,
            queue_wait: Duration::from_millis(DEFAULT_QUEUE_WAIT_MS),
            max_waiting: 32 * cores,
        }
    }
}

/// `Retry-After` (seconds) of a request refused for load.
const RETRY_AFTER_SECS: u64 = 1;

/// The turns of [`AdmissionLimits`]. Waiting requests get a turn newest
/// first: under overload the oldest waiters run out their wait and are
/// refused, while the ones answered waited little. A first-come queue would
/// instead make every answered request wait nearly `queue_wait` as soon as
/// there are more requests than the server can answer in that time.
struct Admission {
    limits: AdmissionLimits,
    turns: Arc<Turns>,
}

impl Admission {
    fn new(limits: AdmissionLimits) -> Admission {
        Admission {
            limits,
            turns: Arc::new(Turns {
                queue: Mutex::new(TurnQueue {
                    free: limits.max_queries.max(1),
                    waiting: Vec::new(),
                }),
            }),
        }
    }
}

/// Turns not held and the requests waiting for one.
struct Turns {
    queue: Mutex<TurnQueue>,
}

struct TurnQueue {
    free: usize,
    /// Oldest first; a turn goes to the last.
    waiting: Vec<tokio::sync::oneshot::Sender<Turn>>,
}

/// What [`Turns::take`] gives.
enum Taken {
    Now(Turn),
    /// Wait for a turn on this channel.
    Wait(tokio::sync::oneshot::Receiver<Turn>),
    /// Too many are waiting already.
    Refused,
}

impl Turns {
    fn queue(&self) -> std::sync::MutexGuard<'_, TurnQueue> {
        // The queue is consistent between statements: a panic elsewhere
        // while it was locked leaves nothing half-done.
        self.queue.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A free turn, else a place among at most `max_waiting` waiters.
    fn take(self: &Arc<Self>, max_waiting: usize) -> Taken {
        let mut q = self.queue();
        if q.free > 0 {
            q.free -= 1;
            return Taken::Now(Turn(Some(self.clone())));
        }
        // Waiters that gave up (timed out, or their client went away).
        q.waiting.retain(|w| !w.is_closed());
        if q.waiting.len() >= max_waiting {
            return Taken::Refused;
        }
        let (tx, rx) = tokio::sync::oneshot::channel();
        q.waiting.push(tx);
        Taken::Wait(rx)
    }

    /// A turn given back: to the newest waiter still waiting, else free.
    fn give_back(self: &Arc<Self>) {
        let mut q = self.queue();
        while let Some(waiter) = q.waiting.pop() {
            match waiter.send(Turn(Some(self.clone()))) {
                Ok(()) => return,
                // That waiter is gone: the turn is not its to give back.
                Err(mut turn) => turn.0 = None,
            }
        }
        q.free += 1;
    }
}

/// A turn held; given back when dropped, also when it was sent to a waiter
/// that went away before it took it.
struct Turn(Option<Arc<Turns>>);

impl Drop for Turn {
    fn drop(&mut self) {
        if let Some(turns) = self.0.take() {
            turns.give_back();
        }
    }
}

/// A new random token (244 bits).
pub fn new_token() -> String {
    format!(
        "{}{}",
        uuid::Uuid::new_v4().simple(),
        uuid::Uuid::new_v4().simple()
    )
}

impl AppState {
    pub fn new(stores: Stores, token: Option<String>) -> AppState {
        Self::with_config(stores, token, None)
    }

    /// A state that also knows the configuration (jobs, `/api/cli`).
    pub fn with_config(stores: Stores, token: Option<String>, config: Option<Config>) -> AppState {
        Self::with_live_config(
            stores,
            token,
            config.map(|c| live::LiveConfig::new(c, None)),
        )
    }

    /// A state whose configuration follows its file.
    ///
    /// A state is set up by value ([`AppState::with_admission`],
    /// [`AppState::allowing_hosts`]) and shared only once [`router`] takes
    /// it, so a setting cannot be lost on a state already shared.
    pub fn with_live_config(
        stores: Stores,
        token: Option<String>,
        config: Option<live::LiveConfig>,
    ) -> AppState {
        let token = token.filter(|t| !t.is_empty());
        AppState {
            stores,
            config,
            admin_token: token.clone().unwrap_or_else(new_token),
            token,
            allowed_hosts: Vec::new(),
            metrics: Metrics::default(),
            page_count: Mutex::new(None),
            admission: Admission::new(AdmissionLimits::default()),
        }
    }

    /// The same state with these admission limits.
    pub fn with_admission(mut self, limits: AdmissionLimits) -> AppState {
        self.admission = Admission::new(limits);
        self
    }

    /// The same state accepting `hosts` in `Host` and `Origin` too.
    pub fn allowing_hosts(mut self, hosts: Vec<String>) -> AppState {
        self.allowed_hosts = hosts.into_iter().map(|h| h.to_ascii_lowercase()).collect();
        self
    }

    /// The token the routes acting on the host need (the serve file keeps it).
    pub fn admin_token(&self) -> &str {
        &self.admin_token
    }
}

/// An API error: a status and a JSON body naming the parameter when there is one.
#[derive(Debug)]
pub struct ApiError {
    status: StatusCode,
    param: Option<String>,
    message: String,
}

impl ApiError {
    fn bad(e: ParamError) -> ApiError {
        ApiError {
            status: StatusCode::BAD_REQUEST,
            param: Some(e.param),
            message: e.message,
        }
    }

    fn not_found(message: String) -> ApiError {
        ApiError {
            status: StatusCode::NOT_FOUND,
            param: None,
            message,
        }
    }

    fn internal(e: anyhow::Error) -> ApiError {
        tracing::error!(error = %format!("{e:#}"), "request failed");
        ApiError {
            status: StatusCode::INTERNAL_SERVER_ERROR,
            param: None,
            message: format!("{e:#}"),
        }
    }
}

impl From<ParamError> for ApiError {
    fn from(e: ParamError) -> ApiError {
        ApiError::bad(e)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut err = json!({ "message": self.message });
        if let Some(p) = self.param {
            err["param"] = Value::String(p);
        }
        (self.status, Json(json!({ "error": err }))).into_response()
    }
}

type ApiResult<T> = std::result::Result<T, ApiError>;

/// Run `f` on the blocking pool (index and pack reads are synchronous).
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> anyhow::Result<T> + Send + 'static,
) -> ApiResult<T> {
    // On a plain thread below the blocking pool: the HDFS pack store refuses
    // calls made with a tokio context.
    tokio::task::spawn_blocking(move || crate::jobs::off_runtime(f))
        .await
        .map_err(|e| ApiError::internal(anyhow::anyhow!("worker failed: {e}")))?
        .map_err(ApiError::internal)
}

/// The router with every route, the UI and the auth and metrics layers.
pub fn router(state: impl Into<Arc<AppState>>) -> Router {
    let state: Arc<AppState> = state.into();
    let api = Router::new()
        .route("/api/search", get(search))
        .route("/api/stats", get(stats))
        .route("/api/stats.csv", get(stats_csv))
        .route("/api/stats.json", get(stats_json))
        .route("/api/pages/{id}", get(page))
        .route("/api/pages/{id}/raw", get(raw))
        .route("/api/pages/{id}/copies", get(copies))
        .route("/api/topics", get(topics))
        .route("/api/jobs", get(jobs_list))
        .route("/api/jobs/{name}/run", post(job_run))
        .route("/api/runs", get(runs_list))
        .route(crate::remote::CLI_ROUTE, post(cli_command))
        .route(crate::remote::UPLOAD_ROUTE, post(upload))
        .route("/api/sources", get(sources))
        .route("/api/openapi.json", get(openapi_doc))
        .route("/metrics", get(metrics_text))
        .layer(middleware::from_fn_with_state(state.clone(), admit))
        .layer(middleware::from_fn_with_state(state.clone(), auth));
    Router::new()
        .merge(api)
        .route("/healthz", get(|| async { "ok\n" }))
        .route("/", get(ui_index))
        .route("/assets/app.js", get(ui_js))
        .route("/assets/app.css", get(ui_css))
        .fallback(|| async { ApiError::not_found("no such route".into()) })
        .layer(middleware::from_fn_with_state(state.clone(), same_host))
        .layer(middleware::from_fn_with_state(state.clone(), observe))
        .layer(axum::extract::DefaultBodyLimit::max(MAX_BODY_BYTES))
        .with_state(state)
}

/// Bind, print the ready line, write the serve file, run the job
/// scheduler, serve until Ctrl-C (or SIGTERM).
pub async fn serve(stores: Stores, opts: ServeOptions) -> Result<()> {
    if !opts.listen.ip().is_loopback() && opts.token.is_none() {
        tracing::warn!(listen = %opts.listen, "serving beyond loopback without a token: anyone who can reach it can read the archive");
    }
    let read_only = stores.read_only_copy.is_some();
    let live = opts
        .config
        .clone()
        .map(|c| live::LiveConfig::new(c, opts.config_file.clone()));
    let state = Arc::new(
        AppState::with_live_config(stores, opts.token.clone(), live)
            .allowing_hosts(opts.allowed_hosts.clone())
            .with_admission(opts.admission),
    );
    let listener = tokio::net::TcpListener::bind(opts.listen)
        .await
        .with_context(|| format!("cannot listen on {}", opts.listen))?;
    let addr = listener.local_addr()?;
    // On read-only media nothing can be written next to the archive, and
    // other commands open their own copy of the index: no serve file.
    let serve_file = opts
        .config
        .as_ref()
        .filter(|_| !read_only)
        .and_then(crate::remote::serve_file);
    if let Some(path) = &serve_file {
        crate::remote::write_info(
            path,
            &crate::remote::ServeInfo {
                url: format!("http://{addr}"),
                pid: std::process::id(),
                token: Some(state.admin_token().to_string()),
            },
        )?;
        if opts.token.is_none() {
            crate::logline::say(&format!(
                "harvest: job runs and commands sent to this server need the token in {} (or start it with --token)",
                path.display()
            ));
        }
    }
    // Files a forwarded import sent before a server stopped.
    if let Some(cfg) = &opts.config {
        remove_stale_uploads(&cfg.data_dir.join(crate::remote::UPLOAD_DIR));
    }
    println!("{LISTENING} http://{addr}");
    use std::io::Write;
    std::io::stdout().flush()?;
    let scheduler = tokio::spawn(scheduler(state.clone()));
    let shutdown = async {
        let term = async {
            #[cfg(unix)]
            if let Ok(mut s) =
                tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
            {
                s.recv().await;
                return;
            }
            std::future::pending::<()>().await
        };
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term => {}
        }
    };
    let served = serve_connections(listener, router(state), opts.limits, shutdown).await;
    scheduler.abort();
    if let Some(path) = &serve_file {
        crate::remote::remove_info(path);
    }
    served
}

/// Raises this process's open-files limit to its hard limit and returns it
/// (connections are file descriptors); 1024 when it cannot be read.
fn raise_open_files_limit() -> u64 {
    rlimit::increase_nofile_limit(u64::MAX).unwrap_or(1024)
}

/// File descriptors kept for the stores (packs, index files) and the like.
const RESERVED_FDS: u64 = 512;

/// One open connection, as the accept loop sees it.
struct OpenConnection {
    /// The client's address.
    peer: std::net::IpAddr,
    /// When it was accepted.
    opened: Instant,
    /// Set once the connection has sent a whole request.
    served: Arc<std::sync::atomic::AtomicBool>,
    /// Set when the connection task ends.
    closed: Arc<std::sync::atomic::AtomicBool>,
    evict: Arc<tokio::sync::Notify>,
}

/// The accept loop: one task per connection (HTTP/1.1 and HTTP/2), each
/// with a header-read timeout. At most `limits.max_connections` (and no
/// more than the open-files limit allows) are open at once; at the cap a new
/// connection closes the oldest one that never sent a whole request, so idle
/// or half-sent connections cannot keep real clients (and `/healthz`) out.
/// A client (an IP address) at `limits.max_idle_per_client` such connections
/// closes its own oldest for a new one, so a slow or flooding client cycles
/// its own connections instead of pushing out other clients'.
/// Stops accepting at `shutdown` and gives open connections a moment.
async fn serve_connections(
    listener: tokio::net::TcpListener,
    app: Router,
    limits: ServerLimits,
    shutdown: impl std::future::Future<Output = ()>,
) -> Result<()> {
    use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    let fd_room = raise_open_files_limit()
        .saturating_sub(RESERVED_FDS)
        .max(16);
    let cap = limits.max_connections.clamp(1, fd_room as usize);
    let mut builder = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout);
    builder
        .http2()
        .timer(TokioTimer::new())
        .keep_alive_interval(Some(limits.header_timeout));
    let builder = Arc::new(builder);
    let open = Arc::new(AtomicUsize::new(0));
    let mut oldest_first: std::collections::VecDeque<OpenConnection> = Default::default();
    let (closing_tx, closing_rx) = tokio::sync::watch::channel(false);
    let mut connections = tokio::task::JoinSet::new();
    tokio::pin!(shutdown);
    let mut sweep = tokio::time::interval(IDLE_SWEEP);
    sweep.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        let (stream, peer) = tokio::select! {
            _ = &mut shutdown => break,
            _ = sweep.tick() => {
                let per_client = limits.max_idle_per_client.max(1);
                evict_idle_over_cap(&mut oldest_first, per_client, None);
                continue;
            }
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                Err(e) => {
                    // Out of file descriptors and the like: wait, do not spin.
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        // Forget connections that closed or sent a request; over a
        // client's cap, close its oldest that has not (and has had
        // `IDLE_GRACE` to send it); at the global cap, the oldest of all.
        let peer = peer.ip();
        let per_client = limits.max_idle_per_client.max(1);
        // (Room for the newcomer: its client keeps at most `per_client`.)
        evict_idle_over_cap(&mut oldest_first, per_client - 1, Some(peer));
        if open.load(Ordering::Relaxed) >= cap {
            if let Some(victim) = oldest_first.pop_front() {
                victim.evict.notify_one();
            }
        }
        let _ = stream.set_nodelay(true);
        let served = Arc::new(AtomicBool::new(false));
        let closed = Arc::new(AtomicBool::new(false));
        let evict = Arc::new(tokio::sync::Notify::new());
        oldest_first.push_back(OpenConnection {
            peer,
            opened: Instant::now(),
            served: served.clone(),
            closed: closed.clone(),
            evict: evict.clone(),
        });
        open.fetch_add(1, Ordering::Relaxed);
        let app = app.clone();
        let flag = served.clone();
        let service =
            hyper::service::service_fn(move |req: hyper::Request<hyper::body::Incoming>| {
                flag.store(true, Ordering::Relaxed);
                tower::ServiceExt::oneshot(app.clone(), req.map(axum::body::Body::new))
            });
        let builder = builder.clone();
        let mut closing = closing_rx.clone();
        let open_count = open.clone();
        connections.spawn(async move {
            let conn = builder.serve_connection_with_upgrades(TokioIo::new(stream), service);
            tokio::pin!(conn);
            tokio::select! {
                _ = conn.as_mut() => {}
                _ = evict.notified() => {}
                _ = closing.changed() => {
                    conn.as_mut().graceful_shutdown();
                    let _ = tokio::time::timeout(std::time::Duration::from_secs(5), conn).await;
                }
            }
            closed.store(true, Ordering::Relaxed);
            open_count.fetch_sub(1, Ordering::Relaxed);
        });
        // Reap finished connection tasks so the set stays small.
        while connections.try_join_next().is_some() {}
    }
    let _ = closing_tx.send(true);
    drop(listener);
    let _ = tokio::time::timeout(std::time::Duration::from_secs(6), async {
        while connections.join_next().await.is_some() {}
    })
    .await;
    Ok(())
}

/// How long a new connection has to send its first request before it
/// counts against its client's idle cap: a connection pool (a reverse
/// proxy, a load generator) opening many connections at once from one
/// address has each send its request well within it, so none is closed.
const IDLE_GRACE: Duration = Duration::from_secs(2);
/// How often idle connections over their client's cap are looked for.
const IDLE_SWEEP: Duration = Duration::from_millis(250);

/// Drops closed and served connections from `oldest_first`, then closes,
/// for each client (or only `only`), its oldest idle connections past
/// `per_client`, among those open for longer than [`IDLE_GRACE`].
fn evict_idle_over_cap(
    oldest_first: &mut std::collections::VecDeque<OpenConnection>,
    per_client: usize,
    only: Option<std::net::IpAddr>,
) {
    use std::sync::atomic::Ordering;
    // Only the clients looked at are counted: on accept that is one, so
    // the map has one entry however many clients are connected.
    let mut idle: HashMap<std::net::IpAddr, usize> = HashMap::new();
    oldest_first.retain(|c| {
        let open = !c.closed.load(Ordering::Relaxed) && !c.served.load(Ordering::Relaxed);
        if open && only.is_none_or(|o| o == c.peer) {
            *idle.entry(c.peer).or_default() += 1;
        }
        open
    });
    let mut excess: HashMap<std::net::IpAddr, usize> = idle
        .into_iter()
        .filter(|(_, n)| *n > per_client)
        .map(|(peer, n)| (peer, n - per_client))
        .collect();
    if excess.is_empty() {
        return;
    }
    oldest_first.retain(|c| {
        let Some(left) = excess.get_mut(&c.peer) else {
            return true;
        };
        if *left == 0 || c.opened.elapsed() < IDLE_GRACE {
            return true;
        }
        *left -= 1;
        c.evict.notify_one();
        false
    });
}

/// How often the scheduler looks at the clock and the configuration file.
const SCHEDULER_TICK: Duration = Duration::from_secs(5);

/// Runs scheduled jobs: sleeps until the next job is due (or the next tick),
/// starts it (unless it is running already), repeats. Jobs come from the
/// configuration as it is now: a job added to the file gets its next run
/// from the moment it is seen, a rescheduled one from its new expression.
async fn scheduler(state: Arc<AppState>) {
    let Some(live) = state.config.as_ref() else {
        return;
    };
    // Job name -> (its schedule as text, its next run).
    let mut next: HashMap<String, (String, Option<chrono::DateTime<chrono::Utc>>)> = HashMap::new();
    loop {
        let cfg = live.current();
        let now = chrono::Utc::now();
        next.retain(|name, _| {
            cfg.jobs
                .iter()
                .any(|j| &j.name == name && j.schedule.is_some())
        });
        for job in &cfg.jobs {
            let Some(schedule) = &job.schedule else {
                continue;
            };
            let key = format!("{} {}", schedule.expr, schedule.tz);
            let entry = next
                .entry(job.name.clone())
                .or_insert_with(|| (String::new(), None));
            if entry.0 != key {
                *entry = (key, schedule.next_after(now));
                continue;
            }
            if entry.1.is_some_and(|t| t <= now) {
                if crate::jobs::running_here(&job.name) {
                    tracing::warn!(job = %job.name, "scheduled run skipped: the previous run is still going");
                } else {
                    tracing::info!(job = %job.name, "scheduled run");
                    start_job(&state, &cfg, job);
                }
                entry.1 = schedule.next_after(now);
            }
        }
        let wait = next
            .values()
            .filter_map(|(_, t)| *t)
            .min()
            .map(|t| (t - chrono::Utc::now()).to_std().unwrap_or_default())
            .unwrap_or(SCHEDULER_TICK)
            .min(SCHEDULER_TICK);
        tokio::time::sleep(wait.max(Duration::from_millis(50))).await;
    }
}

/// Starts a run of `job` in the background.
fn start_job(state: &Arc<AppState>, cfg: &Config, job: &crate::jobs::Job) {
    let stores = state.stores.clone();
    let mut run_cfg = cfg.clone();
    run_cfg.crawl = job.crawl.clone();
    let run = crate::ingest::CrawlRun {
        progress: crate::ingest::Progress::Quiet,
        conditional: true,
        job: Some(crate::ingest::JobRun {
            name: job.name.clone(),
            recrawl: job.recrawl.clone(),
        }),
        cancel: crawler::CancellationToken::new(),
    };
    let name = job.name.clone();
    tokio::spawn(async move {
        match crate::ingest::run_job(&run_cfg, &stores, run).await {
            Ok(r) => tracing::info!(job = %name, pages = r.summary.pages, "run finished"),
            Err(e) => tracing::error!(job = %name, error = %format!("{e:#}"), "run failed"),
        }
    });
}

fn needs_config(state: &AppState) -> ApiResult<Config> {
    state
        .config
        .as_ref()
        .map(|c| c.current())
        .ok_or_else(|| ApiError {
            status: StatusCode::SERVICE_UNAVAILABLE,
            param: None,
            message: "this server was started without a configuration".into(),
        })
}

async fn jobs_list(State(state): State<Arc<AppState>>) -> ApiResult<Json<Value>> {
    // A server without a configuration has no jobs.
    let configured = state
        .config
        .as_ref()
        .map(|c| c.current().jobs)
        .unwrap_or_default();
    let config_error = state.config.as_ref().and_then(|c| c.error());
    let st = state.clone();
    let jobs_json = blocking(move || {
        let now = chrono::Utc::now();
        let mut out = Vec::new();
        for job in &configured {
            let runs = crate::jobs::runs(&st.stores.index, Some(&job.name), 5)?;
            let running = runs
                .first()
                .filter(|r| r.status == indexer::RunStatus::Running)
                .filter(|r| {
                    crate::jobs::running_here(&job.name)
                        || !crate::jobs::status_label(r, now).starts_with("interrupted")
                });
            out.push(json!({
                "name": job.name,
                "seeds": job.crawl.seeds,
                "schedule": job.schedule.as_ref().map(|s| s.expr.clone()),
                "timezone": job.schedule.as_ref().map(|s| s.tz.to_string()),
                "next_run": job.schedule.as_ref().and_then(|s| s.next_after(now)),
                "recrawl": if job.recrawl.always { "always" } else { "schedule" },
                "running": running.is_some(),
                "progress": running.map(|r| r.summary.clone()),
                "last_runs": runs.iter().map(|r| run_json(r, now)).collect::<Vec<_>>(),
            }));
        }
        Ok(out)
    })
    .await?;
    Ok(Json(
        json!({ "jobs": jobs_json, "config_error": config_error }),
    ))
}

fn run_json(r: &indexer::RunRecord, now: chrono::DateTime<chrono::Utc>) -> Value {
    let mut v = serde_json::to_value(r).unwrap_or_default();
    v["state"] = json!(crate::jobs::status_label(r, now));
    v
}

async fn job_run(
    State(state): State<Arc<AppState>>,
    Path(name): Path<String>,
) -> ApiResult<(StatusCode, Json<Value>)> {
    let cfg = needs_config(&state)?;
    let job = crate::commands::find_job(&cfg, &name)
        .map_err(|e| ApiError::not_found(format!("{e:#}")))?
        .clone();
    if crate::jobs::running_here(&job.name) {
        return Err(ApiError {
            status: StatusCode::CONFLICT,
            param: None,
            message: format!("job {} is running", job.name),
        });
    }
    start_job(&state, &cfg, &job);
    Ok((
        StatusCode::ACCEPTED,
        Json(json!({ "job": job.name, "started": true })),
    ))
}

async fn runs_list(
    State(state): State<Arc<AppState>>,
    RawQuery(raw): RawQuery,
) -> ApiResult<Json<Value>> {
    let p = Params::parse(raw.as_deref(), &[RUNS_PARAMS])?;
    let limit = p.number::<usize>("limit")?.unwrap_or(DEFAULT_LIMIT);
    if !(1..=MAX_LIMIT).contains(&limit) {
        return Err(ParamError::new(
            "limit",
            format!("{limit}: must be between 1 and {MAX_LIMIT}"),
        )
        .into());
    }
    let job = p.one("job").map(str::to_owned);
    let st = state.clone();
    let runs = blocking(move || crate::jobs::runs(&st.stores.index, job.as_deref(), limit)).await?;
    let now = chrono::Utc::now();
    Ok(Json(json!({
        "runs": runs.iter().map(|r| run_json(r, now)).collect::<Vec<_>>(),
    })))
}

/// `POST /api/cli`: a command line found this server in the data dir. The
/// answer streams the command's output as [`crate::remote::CliFrame`] lines
/// while it runs and ends with its exit code.
async fn cli_command(
    State(state): State<Arc<AppState>>,
    Json(req): Json<crate::remote::CliRequest>,
) -> ApiResult<Response> {
    use crate::remote::{CliFrame, FrameWriter};
    use clap::Parser;
    let cfg = needs_config(&state)?;
    let refused = |text: String| {
        let mut body = CliFrame::Stderr(text).line();
        body.extend(CliFrame::Code(2).line());
        Ok(frames_response(Body::from(body)))
    };
    let mut parsed = match crate::cli::Cli::try_parse_from(
        std::iter::once("harvest".to_string()).chain(req.args),
    ) {
        Ok(c) => c,
        Err(e) => return refused(e.render().to_string()),
    };
    if !parsed.command.uses_archive() {
        return refused(format!(
            "harvest: error: only {} run through the server\n",
            crate::commands::archive_commands_listed()
        ));
    }
    // The server reads no path a request names: a forwarded import reads
    // the files its caller sent to the upload route.
    let mut uploads = Vec::new();
    if let crate::cli::Command::Import(args) = &mut parsed.command {
        for file in &mut args.files {
            let named = file.to_string_lossy().into_owned();
            match crate::remote::upload_path(&cfg.data_dir, &named).filter(|p| p.is_file()) {
                Some(path) => {
                    if let Some(dir) = path.parent() {
                        uploads.push(dir.to_path_buf());
                    }
                    *file = path;
                }
                None => {
                    return refused(format!(
                        "harvest: error: {named}: the server imports only files sent to it first ({}; the command line does this)\n",
                        crate::remote::UPLOAD_ROUTE
                    ))
                }
            }
        }
    }
    let (tx, rx) = tokio::sync::mpsc::channel::<CliFrame>(8);
    // A crawl or job run forwarded without --quiet shows its progress lines.
    let progress = if parsed.command.quiet() {
        crate::ingest::Progress::Quiet
    } else {
        let lines = tx.clone();
        crate::ingest::Progress::To(crate::ingest::LineSink::new(move |line| {
            crate::remote::send_line(&lines, line)
        }))
    };
    // The caller going away (killed, interrupted, its connection lost) drops
    // the answer's receiver: that cancels the command (a crawl stores what it
    // fetched, keeps its queue and is recorded `cancelled`; its next run takes
    // it up). Alive frames find a lost caller of a command that writes nothing.
    let cancel = crawler::CancellationToken::new();
    let finished = crawler::CancellationToken::new();
    // Ended (and awaited) before the exit code is sent: nothing follows the code.
    let alive_frames = {
        let (tx, cancel, finished) = (tx.clone(), cancel.clone(), finished.clone());
        tokio::spawn(async move {
            let mut alive = tokio::time::interval(crate::remote::ALIVE_EVERY);
            alive.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tokio::select! {
                    biased;
                    _ = finished.cancelled() => return,
                    _ = tx.closed() => {
                        tracing::info!("the caller of a forwarded command went away: cancelling it");
                        cancel.cancel();
                        return;
                    }
                    _ = alive.tick() => {
                        let _ = tx.try_send(CliFrame::Alive);
                    }
                }
            }
        })
    };
    tokio::spawn(async move {
        let mut out = FrameWriter::stdout(tx.clone());
        let mut err = FrameWriter::stderr(tx.clone());
        let files = {
            let tx = tx.clone();
            crate::outfile::Files::Caller(Box::new(move || -> Box<dyn crate::outfile::OutFile> {
                Box::new(FrameWriter::file(tx.clone()))
            }))
        };
        let result = crate::commands::run(
            &parsed.command,
            &cfg,
            &state.stores,
            &mut out,
            &mut err,
            &files,
            progress,
            cancel,
        )
        .await;
        drop((out, err, files));
        for dir in uploads {
            let _ = std::fs::remove_dir_all(dir);
        }
        let chosen = result
            .as_ref()
            .err()
            .and_then(|e| e.downcast_ref::<crate::commands::Exit>())
            .map(|x| x.0);
        let code = match (result, chosen) {
            (Ok(()), _) => 0,
            // An exit code the command chose (fsck finding damage): its
            // report is its message ("harvest: error: exit code 1" was sent).
            (Err(_), Some(code)) => code,
            (Err(e), None) => {
                let mut msg = format!("harvest: error: {e}\n");
                for cause in e.chain().skip(1) {
                    msg.push_str(&format!("  caused by: {cause}\n"));
                }
                let _ = tx.send(CliFrame::Stderr(msg)).await;
                1
            }
        };
        finished.cancel();
        let _ = alive_frames.await;
        let _ = tx.send(CliFrame::Code(code)).await;
    });
    let frames = futures_util::stream::unfold(rx, |mut rx| async move {
        let frame = rx.recv().await?;
        Some((Ok::<_, std::convert::Infallible>(frame.line()), rx))
    });
    Ok(frames_response(Body::from_stream(frames)))
}

/// How long an uploaded file no import took is kept (a caller or server
/// that died between the upload and the command).
const STALE_UPLOAD: Duration = Duration::from_secs(24 * 3600);

/// Removes uploads older than [`STALE_UPLOAD`].
fn remove_stale_uploads(dir: &std::path::Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let old = entry
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age > STALE_UPLOAD);
        if old {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// `POST /api/uploads?name=NAME`: the body (any size, streamed to disk) is
/// kept in the data dir's upload folder for a forwarded `import`, which
/// names it by the answer's `upload` (`upload:ID/NAME`); the import removes
/// it when it ends.
async fn upload(
    State(state): State<Arc<AppState>>,
    RawQuery(raw): RawQuery,
    body: Body,
) -> ApiResult<(StatusCode, Json<Value>)> {
    use futures_util::StreamExt;
    use tokio::io::AsyncWriteExt;
    let cfg = needs_config(&state)?;
    let p = Params::parse(raw.as_deref(), &[params::UPLOAD_PARAMS])?;
    let name = p
        .one("name")
        .filter(|n| crate::remote::plain_file_name(n))
        .ok_or_else(|| ParamError::new("name", "a plain file name is required"))?
        .to_string();
    let id = uuid::Uuid::new_v4().simple().to_string();
    let dir = cfg.data_dir.join(crate::remote::UPLOAD_DIR).join(&id);
    tokio::fs::create_dir_all(&dir)
        .await
        .with_context(|| format!("creating {}", dir.display()))
        .map_err(ApiError::internal)?;
    let path = dir.join(&name);
    let written = async {
        let mut file = tokio::fs::File::create(&path)
            .await
            .with_context(|| format!("creating {}", path.display()))?;
        let mut stream = body.into_data_stream();
        let mut bytes = 0u64;
        while let Some(chunk) = stream.next().await {
            let chunk = chunk.context("reading the upload")?;
            bytes += chunk.len() as u64;
            file.write_all(&chunk)
                .await
                .with_context(|| format!("writing {}", path.display()))?;
        }
        file.sync_all()
            .await
            .with_context(|| format!("writing {}", path.display()))?;
        anyhow::Ok(bytes)
    }
    .await;
    match written {
        Ok(bytes) => Ok((
            StatusCode::CREATED,
            Json(json!({
                "upload": format!("{}{id}/{name}", crate::remote::UPLOAD_PREFIX),
                "bytes": bytes,
            })),
        )),
        Err(e) => {
            let _ = tokio::fs::remove_dir_all(&dir).await;
            Err(ApiError::internal(e))
        }
    }
}

/// An answer of command frames (JSON lines).
fn frames_response(body: Body) -> Response {
    let mut resp = Response::new(body);
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/x-ndjson"),
    );
    resp
}

/// The token of an `Authorization: Bearer TOKEN` value; the scheme name is
/// case-insensitive (RFC 9110, 11.1), spaces around the token are ignored.
fn bearer_token(value: &str) -> Option<&str> {
    let (scheme, token) = value.trim().split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| token.trim())
        .filter(|t| !t.is_empty())
}

/// Whether a request acts on the server's host rather than reading the
/// index: the command bridge, uploads and job runs. These need a token
/// always (the configured one, else the one in the serve file).
fn host_route(method: &axum::http::Method, path: &str) -> bool {
    *method == axum::http::Method::POST
        && (path == crate::remote::CLI_ROUTE
            || path == crate::remote::UPLOAD_ROUTE
            || (path.starts_with("/api/jobs/") && path.ends_with("/run")))
}

async fn auth(State(state): State<Arc<AppState>>, req: Request, next: Next) -> Response {
    let needed = if host_route(req.method(), req.uri().path()) {
        Some(state.admin_token.as_str())
    } else {
        state.token.as_deref()
    };
    if let Some(token) = needed {
        let given = req
            .headers()
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(bearer_token);
        if given != Some(token) {
            let message = if state.token.is_none() {
                "this route needs the server's token (Authorization: Bearer TOKEN): it is in the serve file of the data dir, or give one with harvest serve --token"
            } else {
                "a bearer token is required (Authorization: Bearer TOKEN)"
            };
            let mut r = ApiError {
                status: StatusCode::UNAUTHORIZED,
                param: None,
                message: message.into(),
            }
            .into_response();
            r.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Bearer realm=\"harvest\""),
            );
            return r;
        }
    }
    next.run(req).await
}

/// Runs an index-reading request when it has a turn: at most
/// `max_queries` at once, waiters served newest first ([`Admission`]); a
/// request that waited `queue_wait`, or that finds `max_waiting` others
/// waiting, is answered 503 with `Retry-After`, so the requests that are
/// served stay fast under overload.
async fn admit(State(state): State<Arc<AppState>>, req: Request, next: Next) -> Response {
    if !routes::queued_route(req.uri().path()) {
        return next.run(req).await;
    }
    let admission = &state.admission;
    let busy = || {
        let mut r = ApiError {
            status: StatusCode::SERVICE_UNAVAILABLE,
            param: None,
            message: "the server is busy: try again shortly".into(),
        }
        .into_response();
        r.headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(RETRY_AFTER_SECS));
        r
    };
    let turn = match admission.turns.take(admission.limits.max_waiting) {
        Taken::Now(turn) => turn,
        Taken::Refused => return busy(),
        Taken::Wait(rx) => match tokio::time::timeout(admission.limits.queue_wait, rx).await {
            Ok(Ok(turn)) => turn,
            // Past the wait (a turn sent meanwhile is given back as the
            // channel drops).
            _ => return busy(),
        },
    };
    let resp = next.run(req).await;
    drop(turn);
    resp
}

/// The host part of a `Host` value or an origin's authority, lowercased,
/// without its port (and an IPv6 literal without its brackets).
fn host_name(authority: &str) -> String {
    let a = authority.trim().to_ascii_lowercase();
    if let Some(rest) = a.strip_prefix('[') {
        return rest.split(']').next().unwrap_or_default().to_string();
    }
    match a.rsplit_once(':') {
        Some((host, port)) if port.bytes().all(|b| b.is_ascii_digit()) => host.to_string(),
        _ => a,
    }
}

/// Whether `host` may be named in a request: an IP address (what a DNS
/// rebinding attack cannot make a browser send for its own name),
/// `localhost`, or a name the operator allowed.
fn allowed_host(state: &AppState, host: &str) -> bool {
    host.parse::<std::net::IpAddr>().is_ok()
        || host == "localhost"
        || host.ends_with(".localhost")
        || state.allowed_hosts.iter().any(|h| h == host)
}

/// Refuses (403) a request that names a host this server does not answer
/// for (DNS rebinding: a web page whose name was pointed at 127.0.0.1) or
/// that comes from another site's page (`Origin` not this server: a
/// cross-site request). `/healthz` is exempt (load balancers' probes).
async fn same_host(State(state): State<Arc<AppState>>, req: Request, next: Next) -> Response {
    if req.uri().path() == "/healthz" {
        return next.run(req).await;
    }
    let refuse = |message: String| {
        ApiError {
            status: StatusCode::FORBIDDEN,
            param: None,
            message,
        }
        .into_response()
    };
    let host = req
        .headers()
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
        .or_else(|| req.uri().authority().map(|a| a.to_string()));
    if let Some(host) = &host {
        let name = host_name(host);
        if !allowed_host(&state, &name) {
            return refuse(format!(
                "this server does not answer for the host {name:?} (start it with --allow-host {name} if that is its name)"
            ));
        }
    }
    if let Some(origin) = req.headers().get(header::ORIGIN) {
        let origin = origin.to_str().unwrap_or_default();
        let authority = origin
            .strip_prefix("http://")
            .or_else(|| origin.strip_prefix("https://"));
        let same = match (authority, &host) {
            (Some(a), Some(h)) => a.eq_ignore_ascii_case(h.trim()),
            _ => false,
        };
        let allowed = authority.is_some_and(|a| {
            let name = host_name(a);
            state.allowed_hosts.contains(&name)
        });
        if !same && !allowed {
            return refuse(format!(
                "requests from other sites' pages are refused (Origin {origin:?})"
            ));
        }
    }
    next.run(req).await
}

/// Route label of a path for metrics (ids collapsed).
fn route_label(path: &str) -> &'static str {
    match path {
        "/api/search" => "search",
        "/api/stats" => "stats",
        "/api/stats.csv" => "stats_csv",
        "/api/stats.json" => "stats_json",
        "/api/topics" => "topics",
        "/api/jobs" => "jobs",
        "/api/runs" => "runs",
        "/api/cli" => "cli",
        "/api/uploads" => "uploads",
        p if p.starts_with("/api/jobs/") => "job_run",
        "/api/sources" => "sources",
        "/api/openapi.json" => "openapi",
        "/healthz" => "healthz",
        "/metrics" => "metrics",
        p if p.starts_with("/api/pages/") && p.ends_with("/raw") => "page_raw",
        p if p.starts_with("/api/pages/") && p.ends_with("/copies") => "page_copies",
        p if p.starts_with("/api/pages/") => "page",
        "/" | "/assets/app.js" | "/assets/app.css" => "ui",
        _ => "other",
    }
}

async fn observe(State(state): State<Arc<AppState>>, req: Request, next: Next) -> Response {
    let route = route_label(req.uri().path());
    let started = Instant::now();
    let resp = next.run(req).await;
    state
        .metrics
        .observe(route, resp.status().as_u16(), started.elapsed());
    resp
}

/// Unknown sources are a 400 naming `source`.
fn check_sources(stores: &Stores, wanted: &[String]) -> anyhow::Result<Result<(), ParamError>> {
    if wanted.is_empty() {
        return Ok(Ok(()));
    }
    let known = stores.index.sources()?;
    for s in wanted {
        if !known.contains(s) {
            return Ok(Err(ParamError::new(
                "source",
                format!("{s:?} is not in the index (known: {})", known.join(", ")),
            )));
        }
    }
    Ok(Ok(()))
}

/// The `warnings` of an answer: topic and media values that no page of the
/// selected sources has (unknown sources are a 400 instead), each as
/// `{"param", "value", "message"}`.
fn warnings_json(stores: &Stores, q: &indexer::Query) -> anyhow::Result<Vec<Value>> {
    Ok(crate::filters::unknown_values(&stores.index, q, false)?
        .iter()
        .map(|u| json!({"param": u.param, "value": u.value, "message": u.message()}))
        .collect())
}

fn parse_sort(v: Option<&str>) -> Result<Sort, ParamError> {
    match v {
        None => Ok(Sort::TimeDesc),
        Some(s) => Sort::parse(s).map_err(|_| {
            ParamError::new(
                "sort",
                format!("{s:?}: expected time, time_asc, comments or relevance"),
            )
        }),
    }
}

/// An answer of `/api/search`, serialised as it is (through `serde_json::Value` a hit's f32
/// `topic_score` would print as its f64 widening, unlike the same page's JSON line).
#[derive(serde::Serialize)]
struct SearchAnswer {
    hits: Vec<crate::read::PageJson>,
    next_cursor: Option<String>,
    warnings: Vec<Value>,
    took_ms: f64,
}

async fn search(
    State(state): State<Arc<AppState>>,
    RawQuery(raw): RawQuery,
) -> ApiResult<Json<SearchAnswer>> {
    let started = Instant::now();
    let q = search_request(raw.as_deref())?;
    let st = state.clone();
    let (page, warnings) = blocking(move || {
        if let Err(e) = check_sources(&st.stores, &q.sources)? {
            return Ok(Err(e));
        }
        match st.stores.index.search_page(&q) {
            Err(indexer::Error::BadCursor(m)) => Ok(Err(ParamError::new("cursor", m))),
            r => {
                let page = r?;
                let text = q.text_query()?;
                let hits = crate::read::pages_json(&st.stores, &page.hits, text.as_ref())?;
                Ok(Ok((
                    (hits, page.next_cursor),
                    warnings_json(&st.stores, &q)?,
                )))
            }
        }
    })
    .await??;
    let (hits, next_cursor) = page;
    state.metrics.hits_returned(hits.len());
    Ok(Json(SearchAnswer {
        hits,
        next_cursor,
        warnings,
        took_ms: started.elapsed().as_secs_f64() * 1e3,
    }))
}

/// The index query of a `/api/search` request (its query string).
pub fn search_request(raw: Option<&str>) -> Result<indexer::Query, ParamError> {
    let p = Params::parse(raw, &[&FILTER_PARAMS[..], SEARCH_PARAMS])?;
    let limit = p.number::<usize>("limit")?.unwrap_or(DEFAULT_LIMIT);
    let (mut q, _) = p.filters()?.build(Some(limit), MAX_LIMIT)?;
    q.sort = parse_sort(p.one("sort"))?;
    if let Some(c) = p.one("cursor") {
        let cursor = indexer::Cursor::decode(c)
            .map_err(|e| ParamError::new("cursor", format!("not a cursor of this API: {e}")))?;
        if cursor.sort() != q.sort {
            return Err(ParamError::new("cursor", "was made for another sort order"));
        }
        q.cursor = Some(cursor);
    }
    Ok(q)
}

/// The statistics query of a `/api/stats` request (its query string).
pub fn stats_request(raw: Option<&str>) -> Result<StatsQuery, ParamError> {
    let p = Params::parse(raw, &[&FILTER_PARAMS[..], STATS_PARAMS])?;
    let spec = p.filters()?;
    let (query, tz) = spec.build(None, MAX_LIMIT)?;
    let interval = match p.one("interval").unwrap_or("day") {
        "day" => Interval::Day,
        "week" => Interval::Week,
        "month" => Interval::Month,
        "year" => Interval::Year,
        other => {
            return Err(ParamError::new(
                "interval",
                format!("{other:?}: expected day, week, month or year"),
            ))
        }
    };
    let group_by = match p.one("group_by") {
        None => None,
        Some(name) => Some(GroupBy::from_name(name).ok_or_else(|| {
            let names: Vec<&str> = GroupBy::ALL.iter().map(|g| g.as_str()).collect();
            ParamError::new(
                "group_by",
                format!("{name:?}: expected one of {}", names.join(", ")),
            )
        })?),
    };
    Ok(StatsQuery {
        query,
        interval,
        group_by,
        tz,
        fill_empty: true,
        bounds: spec.bounds(),
    })
}

/// The statistics of a request and the warnings of its answer.
type StatsAnswer = (StatsQuery, Vec<StatsRow>, Vec<Value>);

async fn run_stats(state: &Arc<AppState>, raw: Option<String>) -> ApiResult<StatsAnswer> {
    let sq = stats_request(raw.as_deref())?;
    let st = state.clone();
    let sq2 = sq.clone();
    let (rows, warnings) = blocking(move || {
        if let Err(e) = check_sources(&st.stores, &sq2.query.sources)? {
            return Ok(Err(e));
        }
        let rows = match st.stores.index.stats(&sq2) {
            Ok(rows) => rows,
            Err(e) => match crate::filters::stats_param_error(&e, &sq2) {
                Some(p) => return Ok(Err(p)),
                None => return Err(e.into()),
            },
        };
        Ok(Ok((rows, warnings_json(&st.stores, &sq2.query)?)))
    })
    .await??;
    Ok((sq, rows, warnings))
}

/// The JSON answer of `/api/stats`: buckets in order and one series per
/// group, counts aligned to the buckets.
pub fn stats_json_body(sq: &StatsQuery, rows: &[StatsRow], took: Duration) -> Value {
    let table = crate::plot::StatsTable::from_rows(rows, sq.group_by.is_some());
    json!({
        "interval": match sq.interval {
            Interval::Day => "day",
            Interval::Week => "week",
            Interval::Month => "month",
            Interval::Year => "year",
        },
        "group_by": sq.group_by.map(GroupBy::as_str),
        "tz": sq.tz.to_string(),
        "buckets": table.buckets,
        "series": table.series.iter().map(|(name, counts)| json!({"name": name, "counts": counts})).collect::<Vec<_>>(),
        "total": table.pages(sq.group_by),
        "took_ms": took.as_secs_f64() * 1e3,
    })
}

async fn stats(
    State(state): State<Arc<AppState>>,
    RawQuery(raw): RawQuery,
) -> ApiResult<Json<Value>> {
    let started = Instant::now();
    let (sq, rows, warnings) = run_stats(&state, raw).await?;
    let mut body = stats_json_body(&sq, &rows, started.elapsed());
    body["warnings"] = json!(warnings);
    Ok(Json(body))
}

fn attachment(mut resp: Response, content_type: &'static str, filename: &'static str) -> Response {
    let h = resp.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    if let Ok(v) = HeaderValue::from_str(&format!("attachment; filename=\"{filename}\"")) {
        h.insert(header::CONTENT_DISPOSITION, v);
    }
    resp
}

async fn stats_csv(
    State(state): State<Arc<AppState>>,
    RawQuery(raw): RawQuery,
) -> ApiResult<Response> {
    let (_, rows, _) = run_stats(&state, raw).await?;
    let csv = crate::filters::stats_csv(&rows);
    Ok(attachment(
        csv.into_response(),
        "text/csv; charset=utf-8",
        "harvest-stats.csv",
    ))
}

async fn stats_json(
    State(state): State<Arc<AppState>>,
    RawQuery(raw): RawQuery,
) -> ApiResult<Response> {
    let started = Instant::now();
    let (sq, rows, warnings) = run_stats(&state, raw).await?;
    let mut body = stats_json_body(&sq, &rows, started.elapsed());
    body["warnings"] = json!(warnings);
    Ok(attachment(
        Json(body).into_response(),
        "application/json",
        "harvest-stats.json",
    ))
}

fn no_params(raw: Option<&str>) -> Result<(), ParamError> {
    Params::parse(raw, &[]).map(|_| ())
}

async fn page(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
    RawQuery(raw): RawQuery,
) -> ApiResult<Json<crate::read::PageDetailJson>> {
    no_params(raw.as_deref())?;
    indexer::PageId::parse(&id)
        .map_err(|e| ParamError::new("id", format!("{id:?} is not a page id: {e}")))?;
    let st = state.clone();
    let id2 = id.clone();
    let detail = blocking(move || crate::read::page_detail(&st.stores, &id2)).await?;
    let detail = detail.ok_or_else(|| ApiError::not_found(format!("no page {id}")))?;
    Ok(Json(detail))
}

/// `/api/pages/{id}/copies`: the story's copies, oldest first, and how
/// many per source and per media (the spread of the story).
async fn copies(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
    RawQuery(raw): RawQuery,
) -> ApiResult<Json<Value>> {
    no_params(raw.as_deref())?;
    indexer::PageId::parse(&id)
        .map_err(|e| ParamError::new("id", format!("{id:?} is not a page id: {e}")))?;
    let st = state.clone();
    let id2 = id.clone();
    let found = blocking(move || {
        let Some(hit) = crate::read::page_by_id(&st.stores, &id2)? else {
            return Ok(None);
        };
        let copies = st.stores.index.story_copies(&hit.page)?;
        Ok(Some((hit, copies)))
    })
    .await?;
    let (hit, copies) = found.ok_or_else(|| ApiError::not_found(format!("no page {id}")))?;
    let mut by_source: std::collections::BTreeMap<&str, u64> = Default::default();
    let mut by_media: std::collections::BTreeMap<&str, u64> = Default::default();
    for c in &copies {
        *by_source.entry(c.source.as_str()).or_default() += 1;
        *by_media
            .entry(c.media.as_deref().unwrap_or(""))
            .or_default() += 1;
    }
    Ok(Json(json!({
        "id": id,
        "story": indexer::neardup::story_root(&hit.page),
        "count": copies.len(),
        "by_source": by_source,
        "by_media": by_media,
        "copies": copies.iter().map(|c| json!({
            "id": c.id,
            "url": c.url,
            "title": c.title,
            "source": c.source,
            "media": c.media,
            "time": c.time,
            "fetched": c.fetched,
            "distance": c.distance,
            "revisit": c.revisit,
            "simhash": format!("{:016x}", c.simhash),
            "links": {"page": format!("/api/pages/{}", c.id)},
        })).collect::<Vec<_>>(),
    })))
}

async fn raw(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
    RawQuery(raw): RawQuery,
) -> ApiResult<Response> {
    no_params(raw.as_deref())?;
    indexer::PageId::parse(&id)
        .map_err(|e| ParamError::new("id", format!("{id:?} is not a page id: {e}")))?;
    let st = state.clone();
    let id2 = id.clone();
    let found = blocking(move || {
        let Some(hit) = crate::read::page_by_id(&st.stores, &id2)? else {
            return Ok(None);
        };
        Ok(Some(crate::read::page_response(&st.stores, &hit.page)?))
    })
    .await?;
    let http = found.ok_or_else(|| ApiError::not_found(format!("no page {id}")))?;
    state.metrics.raw_served();
    let ctype = http
        .headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("content-type"))
        .map(|(_, v)| v.clone())
        .unwrap_or_else(|| "application/octet-stream".to_string());
    let mut resp = Response::new(Body::from(http.body));
    let h = resp.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_str(&ctype)
            .unwrap_or(HeaderValue::from_static("application/octet-stream")),
    );
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(RAW_CSP),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    h.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("private, max-age=3600"),
    );
    Ok(resp)
}

async fn topics(
    State(state): State<Arc<AppState>>,
    RawQuery(raw): RawQuery,
) -> ApiResult<Json<Value>> {
    let p = Params::parse(raw.as_deref(), &[TOPICS_PARAMS])?;
    let sources = p.list("source");
    let st = state.clone();
    let names = blocking(move || {
        if let Err(e) = check_sources(&st.stores, &sources)? {
            return Ok(Err(e));
        }
        Ok(Ok(st.stores.index.topics(&sources)?))
    })
    .await??;
    Ok(Json(json!({
        "topics": names.into_iter().map(|n| json!({"name": n})).collect::<Vec<_>>()
    })))
}

async fn sources(
    State(state): State<Arc<AppState>>,
    RawQuery(raw): RawQuery,
) -> ApiResult<Json<Value>> {
    no_params(raw.as_deref())?;
    let st = state.clone();
    let tables = blocking(move || Ok(st.stores.index.store().list_tables()?)).await?;
    let mut by_source: std::collections::BTreeMap<String, Vec<i32>> = Default::default();
    for t in &tables {
        if let Some((s, y)) = indexer::keys::parse_table_name(t) {
            by_source.entry(s.to_string()).or_default().push(y);
        }
    }
    Ok(Json(json!({
        "sources": by_source.into_iter().map(|(name, years)| json!({"name": name, "years": years})).collect::<Vec<_>>()
    })))
}

async fn openapi_doc(RawQuery(raw): RawQuery) -> ApiResult<Json<Value>> {
    no_params(raw.as_deref())?;
    Ok(Json(openapi::document()))
}

/// The figures of every configured job and of every job that ran in this
/// process (a forwarded `harvest crawl` is the job `crawl`): the end of its
/// last run from the `runs` table (runs before this process started too),
/// the rest from [`crate::job_metrics`].
async fn job_figures(state: &Arc<AppState>) -> Vec<metrics::JobFigures> {
    let counters = crate::job_metrics::snapshot();
    let mut names: std::collections::BTreeSet<String> = counters.keys().cloned().collect();
    if let Some(live) = &state.config {
        names.extend(live.current().jobs.into_iter().map(|j| j.name));
    }
    let st = state.clone();
    let names: Vec<String> = names.into_iter().collect();
    let lookup = names.clone();
    // A runs table that cannot be read leaves the ends this process saw.
    let ended: HashMap<String, chrono::DateTime<chrono::Utc>> = blocking(move || {
        let mut ended = HashMap::new();
        for name in &lookup {
            let runs = crate::jobs::runs(&st.stores.index, Some(name), 5)?;
            if let Some(t) = runs.iter().filter_map(|r| r.ended).max() {
                ended.insert(name.clone(), t);
            }
        }
        Ok(ended)
    })
    .await
    .unwrap_or_default();
    names
        .into_iter()
        .map(|job| {
            let counters = counters.get(&job).cloned().unwrap_or_default();
            let last_end = ended.get(&job).copied().max(counters.last_end);
            metrics::JobFigures {
                running: crate::jobs::running_here(&job),
                last_end,
                counters,
                job,
            }
        })
        .collect()
}

async fn metrics_text(State(state): State<Arc<AppState>>) -> ApiResult<Response> {
    let cached = state
        .page_count
        .lock()
        .ok()
        .and_then(|c| *c)
        .filter(|(at, _)| at.elapsed() < PAGE_COUNT_TTL)
        .map(|(_, n)| n);
    let pages = match cached {
        Some(n) => Some(n),
        None => {
            let st = state.clone();
            let n = blocking(move || {
                let (q, tz) = crate::filters::FilterSpec::default().build(None, MAX_LIMIT)?;
                let rows = st.stores.index.stats(&StatsQuery {
                    query: q,
                    interval: Interval::Year,
                    group_by: None,
                    tz,
                    fill_empty: false,
                    bounds: Default::default(),
                })?;
                Ok(rows.iter().map(|r| r.count).sum::<u64>())
            })
            .await
            .ok();
            if let (Some(n), Ok(mut c)) = (n, state.page_count.lock()) {
                *c = Some((Instant::now(), n));
            }
            n
        }
    };
    let jobs = job_figures(&state).await;
    let mut resp = state.metrics.render(pages, &jobs).into_response();
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
    );
    Ok(resp)
}

const UI_HTML: &str = include_str!("../../web/index.html");
const UI_JS: &str = include_str!("../../web/app.js");
const UI_CSS: &str = include_str!("../../web/app.css");

fn asset(body: &'static str, ctype: &'static str) -> Response {
    let mut r = Response::new(Body::from(body));
    let h = r.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(ctype));
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'self'; img-src 'self' data:; frame-src 'self'; style-src 'self' 'unsafe-inline'",
        ),
    );
    r
}

async fn ui_index() -> Response {
    asset(UI_HTML, "text/html; charset=utf-8")
}

async fn ui_js() -> Response {
    asset(UI_JS, "text/javascript; charset=utf-8")
}

async fn ui_css() -> Response {
    asset(UI_CSS, "text/css; charset=utf-8")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::IpAddr;

    /// An idle connection of `peer` opened past its grace.
    fn idle(peer: IpAddr) -> OpenConnection {
        OpenConnection {
            peer,
            opened: Instant::now() - IDLE_GRACE - Duration::from_secs(1),
            served: Default::default(),
            closed: Default::default(),
            evict: Default::default(),
        }
    }

    fn turns(max_queries: usize) -> Arc<Turns> {
        Admission::new(AdmissionLimits {
            max_queries,
            queue_wait: Duration::from_millis(100),
            max_waiting: 2,
        })
        .turns
    }

    #[test]
    fn the_newest_waiter_gets_the_turn_and_at_most_max_waiting_wait() {
        let turns = turns(1);
        let Taken::Now(first) = turns.take(2) else {
            panic!("one turn free at start")
        };
        let Taken::Wait(mut older) = turns.take(2) else {
            panic!("no turn free: wait")
        };
        let Taken::Wait(mut newer) = turns.take(2) else {
            panic!("no turn free: wait")
        };
        assert!(matches!(turns.take(2), Taken::Refused), "a third waiter");
        drop(first);
        assert!(older.try_recv().is_err(), "the older waiter got the turn");
        let turn = newer.try_recv().expect("the newest waiter's turn");
        drop(turn);
        assert!(older.try_recv().is_ok(), "then the older one's");
    }

    #[test]
    fn a_turn_is_not_lost_to_waiters_that_left() {
        let turns = turns(1);
        let Taken::Now(first) = turns.take(1) else {
            panic!("one turn free at start")
        };
        let Taken::Wait(gone_before) = turns.take(1) else {
            panic!("wait")
        };
        drop(gone_before);
        let Taken::Wait(gone_after) = turns.take(1) else {
            panic!("a waiter that left frees its place")
        };
        // Handed to the waiter, which leaves without taking it.
        drop(first);
        drop(gone_after);
        assert!(matches!(turns.take(1), Taken::Now(_)), "the turn was lost");
    }

    fn held(q: &std::collections::VecDeque<OpenConnection>, peer: IpAddr) -> usize {
        q.iter().filter(|c| c.peer == peer).count()
    }

    #[test]
    fn an_accept_closes_only_its_own_clients_idle_connections_a_sweep_every_clients() {
        let (a, b) = (IpAddr::from([10, 0, 0, 1]), IpAddr::from([10, 0, 0, 2]));
        let mut q: std::collections::VecDeque<_> = [a, b, a, b, a, b].map(idle).into();
        let newest_of_a = q[4].evict.clone();
        evict_idle_over_cap(&mut q, 1, Some(a));
        assert_eq!((held(&q, a), held(&q, b)), (1, 3));
        assert!(
            q.iter().any(|c| Arc::ptr_eq(&c.evict, &newest_of_a)),
            "the oldest are closed first"
        );
        evict_idle_over_cap(&mut q, 1, None);
        assert_eq!((held(&q, a), held(&q, b)), (1, 1));
    }
}
