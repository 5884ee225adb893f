//! The state the scheduler, the fetch tasks and the analysis tasks share
//! ([`Shared`]): the configuration, client, frontier, robots cache, politeness,
//! history, queue and event channel of one crawl, with the counters of its
//! summary and the small operations every step uses (report a failure, queue a
//! page's links, stop on a queue failure, load a host's robots.txt).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use chrono::Utc;
use reqwest::Client;
use tokio::sync::mpsc::Sender;
use tokio_util::sync::CancellationToken;
use url::Url;

use super::fetched::Fetched;
use crate::config::CrawlConfig;
use crate::event::{CrawlEvent, CrawlSummary, FailureKind, UrlHistory};
use crate::fetch::{self, RobotsFetch};
use crate::frontier::Frontier;
use crate::normalize::host_key;
use crate::politeness::Politeness;
use crate::queue::{QueueError, UrlQueue};
use crate::reader::PageReader;
use crate::robots::{self, RobotsCache, RobotsRules};
use shapes::page::{LimitReport, PublishedFrom};

/// State shared by the scheduler and the fetch tasks.
pub(super) struct Shared<R: PageReader> {
    pub(super) cfg: CrawlConfig,
    /// Reads each fetched page.
    pub(super) reader: R,
    pub(super) agent: String,
    pub(super) client: Client,
    pub(super) frontier: Mutex<Frontier>,
    pub(super) robots: RobotsCache,
    pub(super) politeness: Politeness,
    pub(super) history: Arc<dyn UrlHistory>,
    pub(super) queue: Arc<dyn UrlQueue>,
    pub(super) queue_error: Mutex<Option<QueueError>>,
    /// Publish times given by feeds and news sitemaps, by URL (normalised).
    pub(super) hints: Mutex<HashMap<String, (chrono::DateTime<Utc>, PublishedFrom)>>,
    pub(super) events: Sender<CrawlEvent<R::Read>>,
    pub(super) summary: Mutex<CrawlSummary>,
    pub(super) cancel: CancellationToken,
    /// Embed URLs fetched in this crawl.
    pub(super) embeds_seen: crate::embeds::Seen,
}

impl<R: PageReader> crate::embeds::EmbedHost for Shared<R> {
    fn cfg(&self) -> &CrawlConfig {
        &self.cfg
    }

    fn client(&self) -> &Client {
        &self.client
    }

    fn politeness(&self) -> &Politeness {
        &self.politeness
    }

    fn count_request(&self) {
        Shared::count_request(self)
    }

    async fn robots_allows(&self, url: &Url) -> bool {
        self.robots_for(url).await.allowed(url)
    }
}

impl<R: PageReader> Shared<R> {
    pub(super) fn summary(&self) -> std::sync::MutexGuard<'_, CrawlSummary> {
        self.summary.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(super) fn frontier(&self) -> std::sync::MutexGuard<'_, Frontier> {
        self.frontier.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(super) fn count_request(&self) {
        self.summary().requests += 1;
    }

    /// Sends an event; a closed channel cancels the crawl.
    pub(super) async fn emit(&self, event: CrawlEvent<R::Read>) {
        if self.events.send(event).await.is_err() {
            self.cancel.cancel();
        }
    }

    /// Reports a failure; the URL was not handed to the consumer.
    pub(super) async fn fail(&self, url: &str, kind: FailureKind, message: String) -> Fetched {
        tracing::debug!(url, kind = %kind.label(), message = %message, "fetch failed");
        *self.summary().failures.entry(kind.label()).or_default() += 1;
        self.emit(CrawlEvent::Failure {
            url: url.to_string(),
            kind,
            message,
        })
        .await;
        Fetched::Done
    }

    /// The queue's store failed: the crawl stops (a URL must not be lost).
    pub(super) fn queue_failed(&self, err: QueueError) {
        tracing::error!(error = %err, "crawl queue failed, stopping");
        let mut q = self.queue_error.lock().unwrap_or_else(|p| p.into_inner());
        q.get_or_insert(err);
        self.cancel.cancel();
    }

    /// Queues the links of a page at `depth + 1`; false when the queue failed
    /// (the crawl is then stopping).
    pub(super) fn queue_links(&self, links: &[String], depth: u32) -> bool {
        let urls: Vec<Url> = links.iter().filter_map(|l| Url::parse(l).ok()).collect();
        let pushed = self.frontier().push_all(&urls, depth + 1);
        match pushed {
            Ok(_) => true,
            Err(e) => {
                self.queue_failed(e);
                false
            }
        }
    }

    /// Adds what a page's budgets did to the summary.
    pub(super) fn count_limits(&self, l: &LimitReport) {
        if *l == LimitReport::default() {
            return;
        }
        let mut s = self.summary();
        s.pages_flattened += u64::from(l.flattened_tags > 0);
        s.pages_parse_truncated += u64::from(l.parse_truncated);
        s.pages_links_capped += u64::from(l.links_dropped > 0);
        s.links_dropped += l.links_dropped;
        s.long_links += l.long_links;
    }

    /// robots.txt rules for the host of `url`, fetched once per host.
    pub(super) async fn robots_for(&self, url: &Url) -> Arc<RobotsRules> {
        let key = host_key(url);
        self.robots
            .get_or_load(&key, || async {
                let Some(robots_url) = robots::robots_url(url) else {
                    return RobotsRules::AllowAll;
                };
                let permit = self.politeness.acquire(&key).await;
                let fetched = fetch::fetch_robots(
                    &self.client,
                    &self.cfg,
                    &robots_url,
                    robots::ROBOTS_MAX_REDIRECTS,
                    robots::ROBOTS_MAX_BYTES,
                    || self.count_request(),
                )
                .await;
                drop(permit);
                let rules = match fetched {
                    RobotsFetch::Found(body) => RobotsRules::from_bytes(&self.agent, &body),
                    RobotsFetch::Unavailable(status) => {
                        tracing::debug!(host = %key, status, "no robots.txt, all allowed");
                        RobotsRules::AllowAll
                    }
                    RobotsFetch::ServerError(msg) => {
                        tracing::warn!(host = %key, error = %msg, "robots.txt server error, host disallowed");
                        RobotsRules::DisallowAll
                    }
                    RobotsFetch::Network(kind, message) => {
                        tracing::warn!(host = %key, error = %message, "robots.txt unreachable, host disallowed");
                        RobotsRules::Unreachable { kind, message }
                    }
                };
                if let Some(delay) = rules.crawl_delay() {
                    let delay = delay.min(self.cfg.max_crawl_delay);
                    self.politeness.raise_delay(&key, delay);
                }
                rules
            })
            .await
    }
}

/// Takes a URL that produced no page out of the queue.
pub(super) fn finish_unhanded<R: PageReader>(shared: &Shared<R>, requested: &str) {
    if let Err(e) = shared.queue.finish(&[requested.to_string()]) {
        shared.queue_failed(e);
    }
}
