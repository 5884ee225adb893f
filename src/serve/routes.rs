//! The server's routes, each declared once: method, path, metrics label, summary in
//! the API document, who may call it, whether it waits for a turn, and its handler.
//! The router ([`super::router`]), the layers in front of the handlers and the OpenAPI
//! document (`/api/openapi.json`) are all built from [`ROUTES`]; `tests/api.rs` calls
//! every GET route the document lists.

use axum::extract::RawQuery;
use axum::routing::{get, post};
use axum::Json;
use serde_json::Value;

use super::error::ApiResult;
use super::route::{Access, Method, Route};
use super::{bridge, jobs, monitor, openapi, pages, query, ui};

/// Every route of the server.
pub static ROUTES: &[Route] = &[
    Route {
        method: Method::Get,
        path: "/api/search",
        label: "search",
        summary: Some("Pages matching the filters, one page of results"),
        access: Access::Token,
        queued: true,
        fallible: true,
        handler: || get(query::search),
    },
    Route {
        method: Method::Get,
        path: "/api/stats",
        label: "stats",
        summary: Some("Counts per time bucket (and group) for the filters"),
        access: Access::Token,
        queued: true,
        fallible: true,
        handler: || get(query::stats),
    },
    Route {
        method: Method::Get,
        path: "/api/stats.csv",
        label: "stats_csv",
        summary: Some("The statistics as CSV (bucket,group,count)"),
        access: Access::Token,
        queued: true,
        fallible: true,
        handler: || get(query::stats_csv),
    },
    Route {
        method: Method::Get,
        path: "/api/stats.json",
        label: "stats_json",
        summary: Some("The statistics as a JSON download"),
        access: Access::Token,
        queued: true,
        fallible: true,
        handler: || get(query::stats_json),
    },
    Route {
        method: Method::Get,
        path: "/api/pages/{id}",
        label: "page",
        summary: Some("All attributes, pack location and capture history of a page"),
        access: Access::Token,
        queued: true,
        fallible: true,
        handler: || get(pages::page),
    },
    Route {
        method: Method::Get,
        path: "/api/pages/{id}/copies",
        label: "page_copies",
        summary: Some("Every archived copy of the page's story (near-duplicates): source, media, time"),
        access: Access::Token,
        queued: true,
        fallible: true,
        handler: || get(pages::copies),
    },
    Route {
        method: Method::Get,
        path: "/api/pages/{id}/raw",
        label: "page_raw",
        summary: Some("The archived page, read from its pack, sandboxed"),
        access: Access::Token,
        queued: true,
        fallible: true,
        handler: || get(pages::raw),
    },
    Route {
        method: Method::Get,
        path: "/api/topics",
        label: "topics",
        summary: Some("Topics present in the index"),
        access: Access::Token,
        queued: true,
        fallible: true,
        handler: || get(pages::topics),
    },
    Route {
        method: Method::Get,
        path: "/api/jobs",
        label: "jobs",
        summary: Some("Configured crawl jobs: schedule, next run, live progress of a running run, last runs"),
        access: Access::Token,
        queued: true,
        fallible: true,
        handler: || get(jobs::jobs_list),
    },
    Route {
        method: Method::Post,
        path: "/api/jobs/{name}/run",
        label: "job_run",
        summary: Some("Start a run of the job now"),
        access: Access::Host,
        queued: false,
        fallible: false,
        handler: || post(jobs::job_run),
    },
    Route {
        method: Method::Get,
        path: "/api/runs",
        label: "runs",
        summary: Some("Recorded job runs, newest first"),
        access: Access::Token,
        queued: true,
        fallible: true,
        handler: || get(jobs::runs_list),
    },
    Route {
        method: Method::Post,
        path: crate::remote::CLI_ROUTE,
        label: "cli",
        summary: Some("Run a command line of an archive command (crawl, jobs, query, stats, get, reextract, fsck, dedup, import, compact, export) on the server's store"),
        access: Access::Host,
        queued: false,
        fallible: false,
        handler: || post(bridge::cli_command),
    },
    Route {
        method: Method::Post,
        path: crate::remote::UPLOAD_ROUTE,
        label: "uploads",
        summary: Some("Send a file for a forwarded import (kept until that import ends)"),
        access: Access::Host,
        queued: false,
        fallible: true,
        handler: || post(bridge::upload),
    },
    Route {
        method: Method::Get,
        path: "/api/sources",
        label: "sources",
        summary: Some("Sources and their years"),
        access: Access::Token,
        queued: true,
        fallible: true,
        handler: || get(pages::sources),
    },
    Route {
        method: Method::Get,
        path: "/api/openapi.json",
        label: "openapi",
        summary: Some("This document"),
        access: Access::Token,
        queued: false,
        fallible: false,
        handler: || get(openapi_doc),
    },
    Route {
        method: Method::Get,
        path: "/healthz",
        label: "healthz",
        summary: Some("Liveness"),
        access: Access::Probe,
        queued: false,
        fallible: false,
        handler: || get(|| async { "ok\n" }),
    },
    Route {
        method: Method::Get,
        path: "/metrics",
        label: "metrics",
        summary: Some("Prometheus metrics"),
        access: Access::Token,
        queued: false,
        fallible: false,
        handler: || get(monitor::metrics_text),
    },
    Route {
        method: Method::Get,
        path: "/",
        label: "ui",
        summary: None,
        access: Access::Open,
        queued: false,
        fallible: false,
        handler: || get(ui::ui_index),
    },
    Route {
        method: Method::Get,
        path: "/assets/app.js",
        label: "ui",
        summary: None,
        access: Access::Open,
        queued: false,
        fallible: false,
        handler: || get(ui::ui_js),
    },
    Route {
        method: Method::Get,
        path: "/assets/app.css",
        label: "ui",
        summary: None,
        access: Access::Open,
        queued: false,
        fallible: false,
        handler: || get(ui::ui_css),
    },
];

/// `GET /api/openapi.json`: the API document of [`ROUTES`].
async fn openapi_doc(RawQuery(raw): RawQuery) -> ApiResult<Json<Value>> {
    pages::no_params(raw.as_deref())?;
    Ok(Json(openapi::document(ROUTES)))
}
