//! The server's routes, each declared once: method, path, metrics label, entry in the
//! API document (summary, answers, parameters, body), who may call it, whether it waits
//! for a turn, and its handler.
//! The router ([`super::router`]), the layers in front of the handlers and the OpenAPI
//! document (`/api/openapi.json`) are all built from [`ROUTES`]; `tests/api.rs` calls
//! every GET route the document lists.

use axum::extract::RawQuery;
use axum::routing::{get, post};
use axum::Json;
use serde_json::Value;

use super::error::ApiResult;
use super::params::{RUNS_PARAMS, SEARCH_PARAMS, STATS_PARAMS, TOPICS_PARAMS, UPLOAD_PARAMS};
use super::route::{component, Access, Body, BodySchema, Doc, Method, Reply, Route};
use super::{bridge, jobs, monitor, openapi, pages, query, ui};

/// The path parameter of a page's routes.
const PAGE_ID: &[(&str, &str)] = &[("id", "Page id from a search hit")];

/// The other answer of a page's routes.
const NO_PAGE: &[Reply] = &[Reply::error(404, "No such page")];

/// The other answers of a job run.
const JOB_RUN_REPLIES: &[Reply] = &[
    Reply::error(404, "No such job (the message lists the known ones)"),
    Reply::error(409, "The job is running in this server"),
];

/// The other answers of the command bridge: its body refused (axum's `Json`, the body
/// limit).
const CLI_REPLIES: &[Reply] = &[
    Reply::text(
        400,
        "The body is not JSON (plain text naming the error)",
        "text/plain",
    ),
    Reply::text(413, "The body is over 64 KiB", "text/plain"),
    Reply::text(
        415,
        "The body is not sent as `Content-Type: application/json`",
        "text/plain",
    ),
    Reply::text(
        422,
        "The JSON body has no `args` list of strings",
        "text/plain",
    ),
];

/// Every route of the server.
pub static ROUTES: &[Route] = &[
    Route {
        method: Method::Get,
        path: "/api/search",
        label: "search",
        doc: Some(
            Doc::new(
                "Pages matching the filters, one page of results",
                Reply::json(200, "One page of hits", component::<query::SearchAnswer>),
            )
            .filters(SEARCH_PARAMS)
        ),
        access: Access::Token,
        queued: true,
        fallible: true,
        handler: || get(query::search),
    },
    Route {
        method: Method::Get,
        path: "/api/stats",
        label: "stats",
        doc: Some(
            Doc::new(
                "Counts per time bucket (and group) for the filters",
                Reply::json(200, "Counts per bucket and series", component::<query::StatsAnswerJson>),
            )
            .filters(STATS_PARAMS)
        ),
        access: Access::Token,
        queued: true,
        fallible: true,
        handler: || get(query::stats),
    },
    Route {
        method: Method::Get,
        path: "/api/stats.csv",
        label: "stats_csv",
        doc: Some(
            Doc::new(
                "The statistics as CSV (bucket,group,count)",
                Reply::text(200, "bucket,group,count rows", "text/csv"),
            )
            .filters(STATS_PARAMS)
        ),
        access: Access::Token,
        queued: true,
        fallible: true,
        handler: || get(query::stats_csv),
    },
    Route {
        method: Method::Get,
        path: "/api/stats.json",
        label: "stats_json",
        doc: Some(
            Doc::new(
                "The statistics as a JSON download",
                Reply::json(200, "Counts per bucket and series", component::<query::StatsAnswerJson>),
            )
            .filters(STATS_PARAMS)
        ),
        access: Access::Token,
        queued: true,
        fallible: true,
        handler: || get(query::stats_json),
    },
    Route {
        method: Method::Get,
        path: "/api/pages/{id}",
        label: "page",
        doc: Some(
            Doc::new(
                "All attributes, pack location and capture history of a page",
                Reply::json(200, "The page", component::<crate::read::PageDetailJson>),
            )
            .path(PAGE_ID)
            .replies(NO_PAGE)
        ),
        access: Access::Token,
        queued: true,
        fallible: true,
        handler: || get(pages::page),
    },
    Route {
        method: Method::Get,
        path: "/api/pages/{id}/copies",
        label: "page_copies",
        doc: Some(
            Doc::new(
                "Every archived copy of the page's story (near-duplicates): source, media, time",
                Reply::json(200, "The copies of the page's story", component::<pages::CopiesAnswer>),
            )
            .path(PAGE_ID)
            .replies(NO_PAGE)
        ),
        access: Access::Token,
        queued: true,
        fallible: true,
        handler: || get(pages::copies),
    },
    Route {
        method: Method::Get,
        path: "/api/pages/{id}/raw",
        label: "page_raw",
        doc: Some(
            Doc::new(
                "The archived page, read from its pack, sandboxed",
                Reply {
                    status: 200,
                    description: "The archived payload with its archived content type, sandboxed by CSP",
                    body: Body {
                        media: "*/*",
                        schema: BodySchema::Binary,
                    },
                },
            )
            .path(PAGE_ID)
            .replies(NO_PAGE)
        ),
        access: Access::Token,
        queued: true,
        fallible: true,
        handler: || get(pages::raw),
    },
    Route {
        method: Method::Get,
        path: "/api/topics",
        label: "topics",
        doc: Some(
            Doc::new(
                "Topics present in the index",
                Reply::json(200, "The topics", component::<pages::TopicsAnswer>),
            )
            .params(TOPICS_PARAMS)
        ),
        access: Access::Token,
        queued: true,
        fallible: true,
        handler: || get(pages::topics),
    },
    Route {
        method: Method::Get,
        path: "/api/jobs",
        label: "jobs",
        doc: Some(
            Doc::new(
                "Configured crawl jobs: schedule, next run, live progress of a running run, last runs",
                Reply::json(200, "The jobs", component::<jobs::JobsAnswer>),
            )
            .unchecked()
        ),
        access: Access::Token,
        queued: true,
        fallible: true,
        handler: || get(jobs::jobs_list),
    },
    Route {
        method: Method::Post,
        path: "/api/jobs/{name}/run",
        label: "job_run",
        doc: Some(
            Doc::new(
                "Start a run of the job now",
                Reply::json(
                    202,
                    "The run was started; it goes on in the server (`GET /api/jobs`, `/api/runs`)",
                    component::<jobs::JobStarted>,
                ),
            )
            .unchecked()
            .path(&[("name", "Job name ([[job]] name)")])
            .replies(JOB_RUN_REPLIES)
        ),
        access: Access::Host,
        queued: false,
        fallible: false,
        handler: || post(jobs::job_run),
    },
    Route {
        method: Method::Get,
        path: "/api/runs",
        label: "runs",
        doc: Some(
            Doc::new(
                "Recorded job runs, newest first",
                Reply::json(200, "The runs", component::<jobs::RunsAnswer>),
            )
            .params(RUNS_PARAMS)
        ),
        access: Access::Token,
        queued: true,
        fallible: true,
        handler: || get(jobs::runs_list),
    },
    Route {
        method: Method::Post,
        path: crate::remote::CLI_ROUTE,
        label: "cli",
        doc: Some(
            Doc::new(
                "Run a command line of an archive command (crawl, jobs, query, stats, get, reextract, fsck, dedup, import, compact, export) on the server's store",
                Reply::text(200, bridge::CLI_ANSWER, "application/x-ndjson"),
            )
            .unchecked()
            .request(
                "application/json",
                BodySchema::Of(component::<crate::remote::CliRequest>),
            )
            .replies(CLI_REPLIES)
        ),
        access: Access::Host,
        queued: false,
        fallible: false,
        handler: || post(bridge::cli_command),
    },
    Route {
        method: Method::Post,
        path: crate::remote::UPLOAD_ROUTE,
        label: "uploads",
        doc: Some(
            Doc::new(
                "Send a file for a forwarded import (kept until that import ends)",
                Reply::json(
                    201,
                    "Kept (201): {\"upload\": \"upload:ID/NAME\", \"bytes\": N}; a forwarded import names the file by `upload`",
                    component::<bridge::Uploaded>,
                ),
            )
            .params(UPLOAD_PARAMS)
            .request("application/octet-stream", BodySchema::Binary)
        ),
        access: Access::Host,
        queued: false,
        fallible: true,
        handler: || post(bridge::upload),
    },
    Route {
        method: Method::Get,
        path: "/api/sources",
        label: "sources",
        doc: Some(
            Doc::new(
                "Sources and their years",
                Reply::json(200, "The sources", component::<pages::SourcesAnswer>),
            )
        ),
        access: Access::Token,
        queued: true,
        fallible: true,
        handler: || get(pages::sources),
    },
    Route {
        method: Method::Get,
        path: "/api/openapi.json",
        label: "openapi",
        doc: Some(
            Doc::new(
                "This document",
                Reply {
                    status: 200,
                    description: "The OpenAPI document",
                    body: Body {
                        media: "application/json",
                        schema: BodySchema::Object,
                    },
                },
            )
        ),
        access: Access::Token,
        queued: false,
        fallible: false,
        handler: || get(openapi_doc),
    },
    Route {
        method: Method::Get,
        path: "/healthz",
        label: "healthz",
        doc: Some(
            Doc::new("Liveness", Reply::text(200, "Plain text", "text/plain"))
        ),
        access: Access::Probe,
        queued: false,
        fallible: false,
        handler: || get(|| async { "ok\n" }),
    },
    Route {
        method: Method::Get,
        path: "/metrics",
        label: "metrics",
        doc: Some(
            Doc::new(
                "Prometheus metrics",
                Reply::text(200, "Plain text", "text/plain"),
            )
            .unchecked()
        ),
        access: Access::Token,
        queued: false,
        fallible: false,
        handler: || get(monitor::metrics_text),
    },
    Route {
        method: Method::Get,
        path: "/",
        label: "ui",
        doc: None,
        access: Access::Open,
        queued: false,
        fallible: false,
        handler: || get(ui::ui_index),
    },
    Route {
        method: Method::Get,
        path: "/assets/app.js",
        label: "ui",
        doc: None,
        access: Access::Open,
        queued: false,
        fallible: false,
        handler: || get(ui::ui_js),
    },
    Route {
        method: Method::Get,
        path: "/assets/app.css",
        label: "ui",
        doc: None,
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
