//! The entry points of a crawl: [`crawl_with_queue`] checks the configuration,
//! builds the crawl's shared state around a seeded frontier, runs discovery and
//! then the scheduler, and makes the summary; [`crawl`] and
//! [`crawl_with_cancel`] are it over an in-memory queue.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use tokio::sync::mpsc::Sender;
use tokio_util::sync::CancellationToken;

use super::discovery::discover_all;
use super::schedule::Scheduler;
use super::shared::Shared;
use crate::config::CrawlConfig;
use crate::error::Result;
use crate::event::{CrawlEvent, CrawlSummary, UrlHistory};
use crate::fetch;
use crate::frontier::{Frontier, ScopeMatcher};
use crate::politeness::Politeness;
use crate::queue::{MemoryQueue, UrlQueue};
use crate::reader::PageReader;
use crate::robots::{self, RobotsCache};

/// Runs a crawl until the frontier is empty, a limit is reached, or the event
/// receiver is dropped. Fetch problems are reported as events, not errors.
pub async fn crawl<R: PageReader>(
    config: CrawlConfig,
    reader: R,
    history: Arc<dyn UrlHistory>,
    events: Sender<CrawlEvent<R::Read>>,
) -> Result<CrawlSummary> {
    crawl_with_cancel(config, reader, history, events, CancellationToken::new()).await
}

/// [`crawl`] that also stops when `cancel` is cancelled. In-flight fetches are
/// aborted; the summary counts what was reported before that.
pub async fn crawl_with_cancel<R: PageReader>(
    config: CrawlConfig,
    reader: R,
    history: Arc<dyn UrlHistory>,
    events: Sender<CrawlEvent<R::Read>>,
    cancel: CancellationToken,
) -> Result<CrawlSummary> {
    crawl_with_queue(
        config,
        reader,
        history,
        Arc::new(MemoryQueue::new()),
        events,
        cancel,
    )
    .await
}

/// [`crawl_with_cancel`] over the caller's queue, which may hold URLs of an
/// interrupted run (they are fetched before anything else at their depth).
/// The seeds are queued unless the run has seen them. The consumer calls
/// [`UrlQueue::finish`] for each [`CrawlEvent::Page`] and
/// [`CrawlEvent::NotModified`] once it has stored it (the crawl finishes the
/// URLs that produced no page itself). A failing queue stops the crawl with
/// [`crate::Error::Queue`].
pub async fn crawl_with_queue<R: PageReader>(
    config: CrawlConfig,
    reader: R,
    history: Arc<dyn UrlHistory>,
    queue: Arc<dyn UrlQueue>,
    events: Sender<CrawlEvent<R::Read>>,
    cancel: CancellationToken,
) -> Result<CrawlSummary> {
    config.validate()?;
    let started = Instant::now();
    let client = fetch::build_client(&config)?;
    let frontier = seeded_frontier(&config, queue.clone())?;
    let concurrency = config.concurrency;
    tracing::info!(
        seeds = config.seeds.len(),
        concurrency,
        delay_ms = config.politeness_delay.as_millis() as u64,
        "crawl started"
    );
    let shared = Arc::new(Shared {
        agent: robots::agent_token(&config.user_agent),
        politeness: Politeness::process_wide(config.politeness_delay),
        cfg: config,
        reader,
        client,
        frontier: Mutex::new(frontier),
        robots: RobotsCache::new(),
        history,
        queue,
        queue_error: Mutex::new(None),
        hints: Mutex::new(HashMap::new()),
        events,
        summary: Mutex::new(CrawlSummary::default()),
        cancel: cancel.child_token(),
        embeds_seen: Default::default(),
    });

    discover_all(&shared).await;

    let mut scheduler = Scheduler::new(&shared, concurrency);
    let stopped = scheduler.run().await;
    scheduler.shutdown().await;

    summarise(&shared, stopped, started)
}

/// The crawl's frontier over `queue` (its scope, depth and page limits and
/// trap filter from the configuration), with the seeds queued.
fn seeded_frontier(config: &CrawlConfig, queue: Arc<dyn UrlQueue>) -> Result<Frontier> {
    let mut frontier = Frontier::with_queue(
        queue,
        ScopeMatcher::new(config.scope.clone(), &config.seeds),
        config.max_depth,
        config.max_pages,
    )
    .with_traps(crate::guard::TrapFilter::new(
        config.traps,
        config.allow_private,
    ));
    for seed in &config.seeds {
        frontier.push_seed(seed)?;
    }
    Ok(frontier)
}

/// The crawl's result once its tasks have ended: the queue's failure, or the
/// summary (`stopped` when it was cancelled or its receiver dropped).
fn summarise<R: PageReader>(
    shared: &Shared<R>,
    stopped: bool,
    started: Instant,
) -> Result<CrawlSummary> {
    if let Some(err) = shared
        .queue_error
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .take()
    {
        return Err(err.into());
    }
    let mut summary = shared.summary().clone();
    summary.cancelled = stopped;
    summary.refused = shared
        .frontier()
        .refused()
        .iter()
        .map(|(k, v)| (k.to_string(), *v))
        .collect();
    summary.elapsed = started.elapsed();
    tracing::info!(
        pages = summary.pages,
        bytes = summary.bytes,
        not_modified = summary.not_modified,
        failures = summary.failure_count(),
        requests = summary.requests,
        cancelled = summary.cancelled,
        elapsed_ms = summary.elapsed.as_millis() as u64,
        "crawl finished"
    );
    Ok(summary)
}
