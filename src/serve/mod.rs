//! `harvest serve`: the analysts' HTTP API and web UI (axum).
//!
//! Each route is declared once, in [`ROUTES`] (method, path, metrics label, summary,
//! access, handler), from which the router, the layers in front of the handlers and
//! the OpenAPI document (`/api/openapi.json`) are built; `tests/api.rs` calls every
//! GET route the document lists. Index and pack reads are synchronous (fjall or the
//! HBase Thrift client), so handlers run them on tokio's blocking pool.
//!
//! The modules: the shared state ([`state`]), API errors ([`error`]), the connection
//! loop and its limits ([`connections`]), the checks in front of the handlers
//! ([`guard`]: host, token, turns for index reads ([`admission`]), metrics), and the
//! handlers by what they serve: searches and statistics ([`query`]), pages and the
//! index's vocabularies ([`pages`]), jobs and runs ([`jobs`]), the command bridge and
//! uploads ([`bridge`]), metrics ([`monitor`]) and the UI's files ([`ui`]).

mod admission;
mod bridge;
mod connections;
pub mod defaults;
mod error;
mod guard;
mod jobs;
pub mod live;
pub mod metrics;
mod monitor;
pub mod openapi;
mod pages;
pub mod params;
mod query;
mod route;
pub mod routes;
mod state;
mod ui;

use std::net::SocketAddr;
use std::sync::Arc;

use anyhow::{Context, Result};
use axum::middleware;
use axum::Router;

use crate::config::Config;
use crate::stores::Stores;

pub use admission::AdmissionLimits;
pub use connections::ServerLimits;
pub use error::ApiError;
pub use pages::RAW_CSP;
pub use params::{DEFAULT_LIMIT, MAX_LIMIT};
pub use query::{search_request, stats_json_body, stats_request};
pub use route::{Access, Method, Route};
pub use routes::ROUTES;
pub use state::{new_token, AppState};

/// The ready line printed on stdout.
pub const LISTENING: &str = "harvest serve: listening on";

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

/// The router with every route of [`ROUTES`]: the API's behind the token and
/// admission layers, all behind the host check, the metrics and the body limit.
pub fn router(state: impl Into<Arc<AppState>>) -> Router {
    let state: Arc<AppState> = state.into();
    let (mut api, mut open) = (Router::new(), Router::new());
    for route in ROUTES {
        if route.guarded() {
            api = api.route(route.path, (route.handler)());
        } else {
            open = open.route(route.path, (route.handler)());
        }
    }
    let api = api
        .layer(middleware::from_fn_with_state(state.clone(), guard::admit))
        .layer(middleware::from_fn_with_state(state.clone(), guard::auth));
    Router::new()
        .merge(api)
        .merge(open)
        .fallback(|| async { ApiError::not_found("no such route".into()) })
        .layer(middleware::from_fn_with_state(
            state.clone(),
            guard::same_host,
        ))
        .layer(middleware::from_fn_with_state(
            state.clone(),
            guard::observe,
        ))
        .layer(middleware::from_fn(guard::route_of))
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
        bridge::remove_stale_uploads(&cfg.data_dir.join(crate::remote::UPLOAD_DIR));
    }
    println!("{LISTENING} http://{addr}");
    use std::io::Write;
    std::io::stdout().flush()?;
    let scheduler = tokio::spawn(jobs::scheduler(state.clone()));
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
    let served =
        connections::serve_connections(listener, router(state), opts.limits, shutdown).await;
    scheduler.abort();
    if let Some(path) = &serve_file {
        crate::remote::remove_info(path);
    }
    served
}
