//! A page and what the index knows around it: `/api/pages/{id}` (attributes, pack
//! location, captures), its story's copies, its archived payload (sandboxed), and the
//! index's topics and sources.

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Path, RawQuery, State};
use axum::http::{header, HeaderValue};
use axum::response::Response;
use axum::Json;
use chrono::{DateTime, Utc};
use serde::Serialize;
use utoipa::ToSchema;

use crate::filters::ParamError;

use super::error::{blocking, ApiError, ApiResult};
use super::params::{Params, TOPICS_PARAMS};
use super::query::check_sources;
use super::state::AppState;

/// Header of archived pages: no scripts, no plugins, no forms, no same-origin
/// access; inline styles and data: images only.
pub const RAW_CSP: &str =
    "sandbox; default-src 'none'; img-src data:; style-src 'unsafe-inline'; frame-ancestors 'self'";

pub(super) fn no_params(raw: Option<&str>) -> Result<(), ParamError> {
    Params::parse(raw, &[]).map(|_| ())
}

pub(super) async fn page(
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

/// The copies of a page's story (near-duplicates), oldest first, and how many per
/// source and per media (the spread of the story). Fields in the order of their
/// names, as the answer had them when it was built as a `serde_json::Value`.
#[derive(Serialize, ToSchema)]
#[schema(as = Copies)]
pub(super) struct CopiesAnswer {
    /// Copies per media (the empty name: none named).
    by_media: BTreeMap<String, u64>,
    /// Copies per source.
    by_source: BTreeMap<String, u64>,
    copies: Vec<CopyJson>,
    /// Copies of the story.
    count: usize,
    /// The page asked about.
    id: String,
    /// URL of the story's first archived page.
    story: String,
}

/// One copy of a story.
#[derive(Serialize, ToSchema)]
#[schema(as = Copy)]
pub(super) struct CopyJson {
    /// Hamming distance to the nearest earlier copy it was matched with when archived
    /// (0 for the story's first page).
    distance: u32,
    fetched: DateTime<Utc>,
    id: String,
    links: CopyLinks,
    /// Media (publisher) named by the page, if any.
    media: Option<String>,
    /// An identical payload of an earlier capture (a `revisit`).
    revisit: bool,
    /// SimHash of the text, 16 hex digits.
    simhash: String,
    source: String,
    /// Key time: published, else first seen, else fetched.
    time: DateTime<Utc>,
    title: String,
    url: String,
}

/// API paths of a copy.
#[derive(Serialize, ToSchema)]
pub(super) struct CopyLinks {
    page: String,
}

/// `/api/pages/{id}/copies`: the story's copies, oldest first, and how
/// many per source and per media (the spread of the story).
pub(super) async fn copies(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
    RawQuery(raw): RawQuery,
) -> ApiResult<Json<CopiesAnswer>> {
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
    let mut by_source: BTreeMap<String, u64> = Default::default();
    let mut by_media: BTreeMap<String, u64> = Default::default();
    for c in &copies {
        *by_source.entry(c.source.clone()).or_default() += 1;
        *by_media
            .entry(c.media.clone().unwrap_or_default())
            .or_default() += 1;
    }
    Ok(Json(CopiesAnswer {
        story: indexer::neardup::story_root(&hit.page).to_string(),
        count: copies.len(),
        by_source,
        by_media,
        copies: copies
            .into_iter()
            .map(|c| CopyJson {
                links: CopyLinks {
                    page: format!("/api/pages/{}", c.id),
                },
                simhash: format!("{:016x}", c.simhash),
                id: c.id,
                url: c.url,
                title: c.title,
                source: c.source,
                media: c.media,
                time: c.time,
                fetched: c.fetched,
                distance: c.distance,
                revisit: c.revisit,
            })
            .collect(),
        id,
    }))
}

pub(super) async fn raw(
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

/// The topics of the index (of the sources asked for).
#[derive(Serialize, ToSchema)]
#[schema(as = Topics)]
pub(super) struct TopicsAnswer {
    topics: Vec<Named>,
}

/// A topic.
#[derive(Serialize, ToSchema)]
#[schema(as = Topic)]
pub(super) struct Named {
    name: String,
}

/// The sources of the index and their years.
#[derive(Serialize, ToSchema)]
#[schema(as = Sources)]
pub(super) struct SourcesAnswer {
    sources: Vec<SourceJson>,
}

/// A source of the index.
#[derive(Serialize, ToSchema)]
#[schema(as = Source)]
pub(super) struct SourceJson {
    name: String,
    /// The years it has pages of, in order.
    years: Vec<i32>,
}

pub(super) async fn topics(
    State(state): State<Arc<AppState>>,
    RawQuery(raw): RawQuery,
) -> ApiResult<Json<TopicsAnswer>> {
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
    Ok(Json(TopicsAnswer {
        topics: names.into_iter().map(|name| Named { name }).collect(),
    }))
}

pub(super) async fn sources(
    State(state): State<Arc<AppState>>,
    RawQuery(raw): RawQuery,
) -> ApiResult<Json<SourcesAnswer>> {
    no_params(raw.as_deref())?;
    let st = state.clone();
    let tables = blocking(move || Ok(st.stores.index.store().list_tables()?)).await?;
    let mut by_source: BTreeMap<String, Vec<i32>> = Default::default();
    for t in &tables {
        if let Some((s, y)) = indexer::keys::parse_table_name(t) {
            by_source.entry(s.to_string()).or_default().push(y);
        }
    }
    Ok(Json(SourcesAnswer {
        sources: by_source
            .into_iter()
            .map(|(name, years)| SourceJson { name, years })
            .collect(),
    }))
}
