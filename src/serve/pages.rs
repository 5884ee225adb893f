//! A page and what the index knows around it: `/api/pages/{id}` (attributes, pack
//! location, captures), its story's copies, its archived payload (sandboxed), and the
//! index's topics and sources.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Path, RawQuery, State};
use axum::http::{header, HeaderValue};
use axum::response::Response;
use axum::Json;
use serde_json::{json, Value};

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

/// `/api/pages/{id}/copies`: the story's copies, oldest first, and how
/// many per source and per media (the spread of the story).
pub(super) async fn copies(
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

pub(super) async fn topics(
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

pub(super) async fn sources(
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
