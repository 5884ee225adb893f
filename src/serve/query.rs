//! Searches and statistics: `/api/search` (one page of hits), `/api/stats` and its CSV
//! and JSON downloads, each read from the filters of its query string.

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::extract::{RawQuery, State};
use axum::http::{header, HeaderValue};
use axum::response::{IntoResponse, Response};
use axum::Json;
use indexer::{GroupBy, Interval, Sort, StatsQuery, StatsRow};
use serde_json::{json, Value};

use crate::filters::ParamError;
use crate::stores::Stores;

use super::error::{blocking, ApiResult};
use super::params::{Params, DEFAULT_LIMIT, FILTER_PARAMS, MAX_LIMIT, SEARCH_PARAMS, STATS_PARAMS};
use super::state::AppState;

/// Unknown sources are a 400 naming `source`.
pub(super) fn check_sources(
    stores: &Stores,
    wanted: &[String],
) -> anyhow::Result<Result<(), ParamError>> {
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
pub(super) struct SearchAnswer {
    hits: Vec<crate::read::PageJson>,
    next_cursor: Option<String>,
    warnings: Vec<Value>,
    took_ms: f64,
}

pub(super) async fn search(
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

pub(super) async fn run_stats(
    state: &Arc<AppState>,
    raw: Option<String>,
) -> ApiResult<StatsAnswer> {
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

pub(super) async fn stats(
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

pub(super) async fn stats_csv(
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

pub(super) async fn stats_json(
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
