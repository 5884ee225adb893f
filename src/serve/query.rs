//! Searches and statistics: `/api/search` (one page of hits), `/api/stats` and its CSV
//! and JSON downloads, each read from the filters of its query string.

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::extract::{RawQuery, State};
use axum::http::{header, HeaderValue};
use axum::response::{IntoResponse, Response};
use axum::Json;
use indexer::{GroupBy, Interval, Sort, StatsQuery, StatsRow};
use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;

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

/// A filter value no page of the selected sources has (topic, media): the answer is
/// empty or narrower for that reason. (An unknown source is a 400 instead.)
#[derive(Debug, Serialize, ToSchema)]
pub(super) struct Warning {
    message: String,
    param: WarningParam,
    value: String,
}

/// The parameter of a [`Warning`].
#[derive(Debug, Clone, Copy, Serialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub(super) enum WarningParam {
    Topic,
    Media,
}

/// The `warnings` of an answer: topic and media values that no page of the
/// selected sources has.
fn warnings_json(stores: &Stores, q: &indexer::Query) -> anyhow::Result<Vec<Warning>> {
    Ok(crate::filters::unknown_values(&stores.index, q, false)?
        .iter()
        .filter_map(|u| {
            let param = match u.param {
                "topic" => WarningParam::Topic,
                "media" => WarningParam::Media,
                _ => return None,
            };
            Some(Warning {
                message: u.message(),
                param,
                value: u.value.clone(),
            })
        })
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

/// One page of hits: an answer of `/api/search`, serialised as it is (through
/// `serde_json::Value` a hit's f32 `topic_score` would print as its f64 widening,
/// unlike the same page's JSON line).
#[derive(Serialize, ToSchema)]
#[schema(as = SearchPage)]
pub(super) struct SearchAnswer {
    hits: Vec<crate::read::PageJson>,
    /// The `cursor` of the next page; null on the last.
    next_cursor: Option<String>,
    warnings: Vec<Warning>,
    /// Time the server took, in milliseconds.
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
type StatsAnswer = (StatsQuery, Vec<StatsRow>, Vec<Warning>);

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

/// Counts per bucket and series: the answer of `/api/stats` (and `/api/stats.json`).
/// Fields in the order of their names, as the answer had them when it was built as a
/// `serde_json::Value`.
#[derive(Serialize, ToSchema)]
#[schema(as = Stats)]
pub(super) struct StatsAnswerJson {
    /// The time buckets, in order.
    buckets: Vec<String>,
    /// `group_by` as asked; null without one.
    group_by: Option<&'static str>,
    /// `day`, `week`, `month` or `year`.
    interval: &'static str,
    /// One series per group (one, `all`, without `group_by`), counts aligned to
    /// `buckets`.
    series: Vec<Series>,
    /// Time the server took, in milliseconds.
    took_ms: f64,
    /// Pages counted (with `group_by=story`: the `copies` series' sum; `stories` counts
    /// the same pages again, by story).
    total: u64,
    /// The time zone the buckets are cut in.
    tz: String,
    warnings: Vec<Warning>,
}

/// One series of the statistics: a group's counts.
#[derive(Serialize, ToSchema)]
pub(super) struct Series {
    counts: Vec<u64>,
    name: String,
}

/// The answer of `/api/stats`: buckets in order and one series per group, counts
/// aligned to the buckets.
fn stats_answer(
    sq: &StatsQuery,
    rows: &[StatsRow],
    took: Duration,
    warnings: Vec<Warning>,
) -> StatsAnswerJson {
    let table = crate::plot::StatsTable::from_rows(rows, sq.group_by.is_some());
    StatsAnswerJson {
        interval: match sq.interval {
            Interval::Day => "day",
            Interval::Week => "week",
            Interval::Month => "month",
            Interval::Year => "year",
        },
        group_by: sq.group_by.map(GroupBy::as_str),
        tz: sq.tz.to_string(),
        total: table.pages(sq.group_by),
        buckets: table.buckets,
        series: table
            .series
            .into_iter()
            .map(|(name, counts)| Series { counts, name })
            .collect(),
        took_ms: took.as_secs_f64() * 1e3,
        warnings,
    }
}

/// The JSON answer of `/api/stats` without warnings (`warnings` is empty).
pub fn stats_json_body(sq: &StatsQuery, rows: &[StatsRow], took: Duration) -> Value {
    serde_json::to_value(stats_answer(sq, rows, took, Vec::new())).unwrap_or_default()
}

pub(super) async fn stats(
    State(state): State<Arc<AppState>>,
    RawQuery(raw): RawQuery,
) -> ApiResult<Json<StatsAnswerJson>> {
    let started = Instant::now();
    let (sq, rows, warnings) = run_stats(&state, raw).await?;
    Ok(Json(stats_answer(&sq, &rows, started.elapsed(), warnings)))
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
    let body = stats_answer(&sq, &rows, started.elapsed(), warnings);
    Ok(attachment(
        Json(body).into_response(),
        "application/json",
        "harvest-stats.json",
    ))
}
