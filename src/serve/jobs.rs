//! The configured jobs in the server: the scheduler that starts their runs, and the
//! routes that list jobs and runs and start a run now.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Path, RawQuery, State};
use axum::http::StatusCode;
use axum::Json;
use serde_json::{json, Value};

use crate::config::Config;
use crate::filters::ParamError;

use super::error::{blocking, ApiError, ApiResult};
use super::params::{Params, DEFAULT_LIMIT, MAX_LIMIT, RUNS_PARAMS};
use super::state::AppState;

/// How often the scheduler looks at the clock and the configuration file.
const SCHEDULER_TICK: Duration = Duration::from_secs(5);

/// Runs scheduled jobs: sleeps until the next job is due (or the next tick),
/// starts it (unless it is running already), repeats. Jobs come from the
/// configuration as it is now: a job added to the file gets its next run
/// from the moment it is seen, a rescheduled one from its new expression.
pub(super) async fn scheduler(state: Arc<AppState>) {
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

pub(super) fn needs_config(state: &AppState) -> ApiResult<Config> {
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

pub(super) async fn jobs_list(State(state): State<Arc<AppState>>) -> ApiResult<Json<Value>> {
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

pub(super) async fn job_run(
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

pub(super) async fn runs_list(
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
