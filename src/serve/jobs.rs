//! The configured jobs in the server: the scheduler that starts their runs, and the
//! routes that list jobs and runs and start a run now.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Path, RawQuery, State};
use axum::http::StatusCode;
use axum::Json;
use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::{json, Value};
use utoipa::ToSchema;

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

/// The configured jobs. Fields in the order of their names, as the answer had them
/// when it was built as a `serde_json::Value`.
#[derive(Serialize, ToSchema)]
#[schema(as = Jobs)]
pub(super) struct JobsAnswer {
    /// Why the configuration file, changed since the server started, could not be
    /// read (the jobs are the last good ones); null when it was.
    config_error: Option<String>,
    jobs: Vec<JobJson>,
}

/// A configured job: schedule, next run, live progress of a running run, last runs.
#[derive(Serialize, ToSchema)]
#[schema(as = Job)]
pub(super) struct JobJson {
    /// Its last runs (at most 5), newest first: records as `/api/runs` lists them.
    #[schema(value_type = Vec<Object>)]
    last_runs: Vec<Value>,
    name: String,
    /// When the schedule starts it next; null without a schedule.
    next_run: Option<DateTime<Utc>>,
    /// The summary so far of its running run; null when none runs.
    #[schema(value_type = Option<Object>)]
    progress: Option<Value>,
    /// `always` or `schedule`.
    recrawl: &'static str,
    /// Whether a run of it is running.
    running: bool,
    /// Its cron expression; null without a schedule.
    schedule: Option<String>,
    seeds: Vec<String>,
    /// The time zone of its schedule.
    timezone: Option<String>,
}

/// Recorded job runs, newest first.
#[derive(Serialize, ToSchema)]
#[schema(as = Runs)]
pub(super) struct RunsAnswer {
    /// Run records (`harvest jobs status --json` lines) with their `state`.
    #[schema(value_type = Vec<Object>)]
    runs: Vec<Value>,
}

/// A run was started.
#[derive(Serialize, ToSchema)]
#[schema(as = JobStarted)]
pub(super) struct JobStarted {
    job: String,
    /// Always true.
    started: bool,
}

pub(super) async fn jobs_list(State(state): State<Arc<AppState>>) -> ApiResult<Json<JobsAnswer>> {
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
            out.push(JobJson {
                name: job.name.clone(),
                seeds: job.crawl.seeds.clone(),
                schedule: job.schedule.as_ref().map(|s| s.expr.clone()),
                timezone: job.schedule.as_ref().map(|s| s.tz.to_string()),
                next_run: job.schedule.as_ref().and_then(|s| s.next_after(now)),
                recrawl: if job.recrawl.always {
                    "always"
                } else {
                    "schedule"
                },
                running: running.is_some(),
                progress: running.map(|r| r.summary.clone()),
                last_runs: runs.iter().map(|r| run_json(r, now)).collect(),
            });
        }
        Ok(out)
    })
    .await?;
    Ok(Json(JobsAnswer {
        config_error,
        jobs: jobs_json,
    }))
}

fn run_json(r: &indexer::RunRecord, now: chrono::DateTime<chrono::Utc>) -> Value {
    let mut v = serde_json::to_value(r).unwrap_or_default();
    v["state"] = json!(crate::jobs::status_label(r, now));
    v
}

pub(super) async fn job_run(
    State(state): State<Arc<AppState>>,
    Path(name): Path<String>,
) -> ApiResult<(StatusCode, Json<JobStarted>)> {
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
        Json(JobStarted {
            job: job.name,
            started: true,
        }),
    ))
}

pub(super) async fn runs_list(
    State(state): State<Arc<AppState>>,
    RawQuery(raw): RawQuery,
) -> ApiResult<Json<RunsAnswer>> {
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
    Ok(Json(RunsAnswer {
        runs: runs.iter().map(|r| run_json(r, now)).collect(),
    }))
}
