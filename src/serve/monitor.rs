//! `/metrics`: the server's and the jobs' figures in Prometheus' text format.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::extract::State;
use axum::http::{header, HeaderValue};
use axum::response::{IntoResponse, Response};
use indexer::{Interval, StatsQuery};

use super::error::{blocking, ApiResult};
use super::metrics;
use super::params::MAX_LIMIT;
use super::state::AppState;

/// How long the page count shown by `/metrics` is reused.
const PAGE_COUNT_TTL: Duration = Duration::from_secs(60);

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

pub(super) async fn metrics_text(State(state): State<Arc<AppState>>) -> ApiResult<Response> {
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
