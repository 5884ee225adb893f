//! The crawl loop: a scheduler that hands frontier URLs to at most `concurrency`
//! tasks; each task checks robots.txt, waits for its host's politeness slot,
//! fetches, follows redirects hop by hop, decodes, extracts and reports.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use chrono::Utc;
use reqwest::header::{CONTENT_TYPE, LOCATION};
use reqwest::Client;
use tokio::sync::mpsc::Sender;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;
use url::Url;

use crate::charset;
use crate::config::CrawlConfig;
use crate::error::Result;
use crate::event::{
    CrawlEvent, CrawlSummary, FailureKind, FetchedEmbed, FetchedPage, NotModifiedPage, UrlHistory,
};
use crate::fetch::{self, RobotsFetch};
use crate::frontier::{Frontier, ScopeMatcher};
use crate::normalize::{host_key, parse_normalized};
use crate::politeness::Politeness;
use crate::queue::{MemoryQueue, QueueError, QueuedUrl, UrlQueue};
use crate::reader::PageReader;
use crate::robots::{self, RobotsCache, RobotsRules};
use shapes::page::{Embed, EmbedKind, LimitReport, PublishedFrom, TimeContext};

/// Pause of a host that answered 429/503 without `Retry-After`.
const DEFAULT_PAUSE: std::time::Duration = std::time::Duration::from_secs(30);

/// How many queued URLs the scheduler looks at to find one whose host is idle.
pub const SCHEDULER_SCAN_LIMIT: usize = 1024;

/// State shared by the scheduler and the fetch tasks.
struct Shared<R: PageReader> {
    cfg: CrawlConfig,
    /// Reads each fetched page.
    reader: R,
    agent: String,
    client: Client,
    frontier: Mutex<Frontier>,
    robots: RobotsCache,
    politeness: Politeness,
    history: Arc<dyn UrlHistory>,
    queue: Arc<dyn UrlQueue>,
    queue_error: Mutex<Option<QueueError>>,
    /// Publish times given by feeds and news sitemaps, by URL (normalised).
    hints: Mutex<HashMap<String, (chrono::DateTime<Utc>, PublishedFrom)>>,
    events: Sender<CrawlEvent<R::Read>>,
    summary: Mutex<CrawlSummary>,
    cancel: CancellationToken,
    /// Embed URLs fetched in this crawl.
    embeds_seen: crate::embeds::Seen,
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
    fn summary(&self) -> std::sync::MutexGuard<'_, CrawlSummary> {
        self.summary.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn frontier(&self) -> std::sync::MutexGuard<'_, Frontier> {
        self.frontier.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn count_request(&self) {
        self.summary().requests += 1;
    }

    /// Sends an event; a closed channel cancels the crawl.
    async fn emit(&self, event: CrawlEvent<R::Read>) {
        if self.events.send(event).await.is_err() {
            self.cancel.cancel();
        }
    }

    /// Reports a failure; the URL was not handed to the consumer.
    async fn fail(&self, url: &str, kind: FailureKind, message: String) -> Fetched {
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
    fn queue_failed(&self, err: QueueError) {
        tracing::error!(error = %err, "crawl queue failed, stopping");
        let mut q = self.queue_error.lock().unwrap_or_else(|p| p.into_inner());
        q.get_or_insert(err);
        self.cancel.cancel();
    }

    /// Queues the links of a page at `depth + 1`; false when the queue failed
    /// (the crawl is then stopping).
    fn queue_links(&self, links: &[String], depth: u32) -> bool {
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

    /// Links of the stored copy of `url` (for a 304), if the history has one.
    async fn stored_links(self: &Arc<Self>, url: &Url) -> Option<Vec<String>> {
        let copy = self.history.stored_copy(url)?;
        let page_url = url.clone();
        let shared = self.clone();
        let found = tokio::task::spawn_blocking(move || {
            let charset = charset::charset_from_content_type(&copy.content_type);
            let decoded = charset::decode(&copy.body, charset.as_deref());
            shared
                .reader
                .links(&decoded.text, &page_url, &shared.cfg.page_limits)
        })
        .await
        .ok()?;
        self.count_limits(&found.limits);
        Some(found.links)
    }

    /// Adds what a page's budgets did to the summary.
    fn count_limits(&self, l: &LimitReport) {
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
    async fn robots_for(&self, url: &Url) -> Arc<RobotsRules> {
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
    let mut frontier = Frontier::with_queue(
        queue.clone(),
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

    // Fetch tasks hold their host until the body is read; the page is then
    // decoded, parsed and reported by an analysis task that holds no host,
    // so a page that is slow to parse never delays its host's next request.
    let mut tasks: JoinSet<Fetched> = JoinSet::new();
    let mut analyses: JoinSet<()> = JoinSet::new();
    // Host of every running task; with a politeness delay a host gets one task.
    let mut task_hosts: HashMap<tokio::task::Id, String> = HashMap::new();
    let mut busy_hosts: HashMap<String, usize> = HashMap::new();
    let mut stopped = false;
    loop {
        if shared.cancel.is_cancelled() || shared.events.is_closed() {
            stopped = true;
            break;
        }
        // Bodies waiting for analysis are bounded too: no new fetch while
        // `concurrency` pages are being analysed.
        while tasks.len() < concurrency && analyses.len() < concurrency {
            let next = shared.frontier().pop_ready(SCHEDULER_SCAN_LIMIT, |u| {
                let host = host_key(u);
                !busy_hosts.contains_key(&host) || shared.politeness.delay(&host).is_zero()
            });
            let next = match next {
                Ok(Some(next)) => next,
                Ok(None) => break,
                Err(e) => {
                    shared.queue_failed(e);
                    break;
                }
            };
            let host = host_key(&next.url);
            let s = shared.clone();
            let handle = tasks.spawn(async move { process(s, next).await });
            *busy_hosts.entry(host.clone()).or_default() += 1;
            task_hosts.insert(handle.id(), host);
        }
        if tasks.is_empty() && analyses.is_empty() {
            break;
        }
        tokio::select! {
            _ = shared.cancel.cancelled() => { stopped = true; break; }
            _ = shared.events.closed() => { stopped = true; break; }
            Some(joined) = analyses.join_next(), if !analyses.is_empty() => {
                if let Err(e) = joined {
                    if e.is_panic() {
                        tracing::error!(error = %e, "analysis task panicked");
                        *shared.summary().failures.entry(FailureKind::Other.label()).or_default() += 1;
                    }
                }
            }
            Some(joined) = tasks.join_next_with_id(), if !tasks.is_empty() => {
                let id = match joined {
                    Ok((id, fetched)) => {
                        let s = shared.clone();
                        match fetched {
                            Fetched::Done => {}
                            Fetched::Page(page) => {
                                analyses.spawn(async move { analyse_page(s, *page).await });
                            }
                            Fetched::NotModified(nm) => {
                                analyses.spawn(async move { analyse_not_modified(s, *nm).await });
                            }
                        }
                        id
                    }
                    Err(e) => {
                        if e.is_panic() {
                            tracing::error!(error = %e, "fetch task panicked");
                            *shared.summary().failures.entry(FailureKind::Other.label()).or_default() += 1;
                        }
                        e.id()
                    }
                };
                if let Some(host) = task_hosts.remove(&id) {
                    if let Some(n) = busy_hosts.get_mut(&host) {
                        *n -= 1;
                        if *n == 0 {
                            busy_hosts.remove(&host);
                        }
                    }
                }
            }
        }
    }
    tasks.abort_all();
    analyses.abort_all();
    while tasks.join_next().await.is_some() {}
    while analyses.join_next().await.is_some() {}

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

/// Accept header of sitemap and feed requests.
const ACCEPT_DISCOVERY: &str =
    "application/xml,text/xml,application/rss+xml,application/atom+xml,application/json;q=0.9,*/*;q=0.5";

/// Reads the configured sitemaps and feeds (and the seed hosts' robots.txt
/// `Sitemap:` lines) and queues their in-scope URLs at depth 1. Sitemap
/// indexes are followed, up to `max_discovery_documents` documents in all.
/// A document that cannot be fetched or parsed is a `discovery` failure.
async fn discover_all<R: PageReader>(shared: &Arc<Shared<R>>) {
    let cfg = &shared.cfg;
    let mut docs: std::collections::VecDeque<(Url, bool)> = std::collections::VecDeque::new();
    let mut seen_docs: HashSet<String> = HashSet::new();
    for u in &cfg.sitemaps {
        if seen_docs.insert(u.to_string()) {
            docs.push_back((u.clone(), false));
        }
    }
    for u in &cfg.feeds {
        if seen_docs.insert(u.to_string()) {
            docs.push_back((u.clone(), true));
        }
    }
    if cfg.robots_sitemaps {
        let mut hosts = HashSet::new();
        for seed in &cfg.seeds {
            if !hosts.insert(host_key(seed)) {
                continue;
            }
            let (Some(robots_url), rules) =
                (robots::robots_url(seed), shared.robots_for(seed).await)
            else {
                continue;
            };
            for u in rules.sitemaps(&robots_url) {
                if seen_docs.insert(u.to_string()) {
                    docs.push_back((u, false));
                }
            }
        }
    }
    let mut read = 0usize;
    while let Some((doc, is_feed)) = docs.pop_front() {
        if shared.cancel.is_cancelled() {
            return;
        }
        if read >= cfg.max_discovery_documents {
            tracing::warn!(
                limit = cfg.max_discovery_documents,
                left = docs.len() + 1,
                "discovery document limit reached"
            );
            return;
        }
        read += 1;
        let Some(children) = discover_one(shared, &doc, is_feed).await else {
            continue;
        };
        for child in children {
            if seen_docs.insert(child.to_string()) {
                docs.push_back((child, false));
            }
        }
    }
}

/// The body of a sitemap or feed (politely, decompressed, within the size
/// limit), or why not.
async fn fetch_document<R: PageReader>(
    shared: &Arc<Shared<R>>,
    doc: &Url,
) -> std::result::Result<Vec<u8>, String> {
    let cfg = &shared.cfg;
    let _permit = shared.politeness.acquire(&host_key(doc)).await;
    let (resp, _) = fetch::send(&shared.client, cfg, doc, None, ACCEPT_DISCOVERY, || {
        shared.count_request()
    })
    .await
    .map_err(|(_, msg)| msg)?;
    if !resp.status().is_success() {
        return Err(format!("HTTP status {}", resp.status()));
    }
    fetch::read_body(resp, cfg.discovery_limits.max_bytes)
        .await
        .map_err(|(_, msg)| msg)
}

/// Fetches and parses one sitemap or feed, queues its URLs; returns the
/// child sitemaps of a sitemap index (`None` when it failed).
async fn discover_one<R: PageReader>(
    shared: &Arc<Shared<R>>,
    doc: &Url,
    is_feed: bool,
) -> Option<Vec<Url>> {
    let cfg = &shared.cfg;
    let what = if is_feed { "feed" } else { "sitemap" };
    if cfg.respect_robots && !shared.robots_for(doc).await.allowed(doc) {
        shared
            .fail(
                doc.as_str(),
                FailureKind::RobotsDisallowed,
                format!("robots.txt disallows the {what} {doc}"),
            )
            .await;
        return None;
    }
    let body = match fetch_document(shared, doc).await {
        Ok(b) => b,
        Err(msg) => {
            let msg = format!("{what} {doc}: {msg}");
            shared.fail(doc.as_str(), FailureKind::Discovery, msg).await;
            return None;
        }
    };
    let base = doc.clone();
    let limits = cfg.discovery_limits;
    let parsed =
        tokio::task::spawn_blocking(move || crate::discover::parse_document(&body, &base, &limits))
            .await;
    let outcome = match parsed {
        Ok(Ok(o)) => o,
        Ok(Err(e)) => {
            shared
                .fail(
                    doc.as_str(),
                    FailureKind::Discovery,
                    format!("{what} {doc}: {e}"),
                )
                .await;
            return None;
        }
        Err(e) => {
            shared
                .fail(
                    doc.as_str(),
                    FailureKind::Other,
                    format!("{what} {doc}: {e}"),
                )
                .await;
            return None;
        }
    };
    if outcome.report.truncated() {
        tracing::warn!(document = %doc, dropped = outcome.report.over_limit, "discovery document over its URL limit");
    }
    let mut summary_urls = 0u64;
    let children = match outcome.document {
        crate::discover::Document::SitemapIndex(children) => {
            children.into_iter().map(|c| c.url).collect()
        }
        document => {
            let from = match document {
                crate::discover::Document::Feed { .. } => PublishedFrom::Feed,
                _ => PublishedFrom::Sitemap,
            };
            let entries = document.into_urls();
            summary_urls = entries.len() as u64;
            {
                let mut hints = shared.hints.lock().unwrap_or_else(|p| p.into_inner());
                for e in &entries {
                    if let Some(t) = e.published {
                        hints.insert(crate::normalize::normalize(&e.url).to_string(), (t, from));
                    }
                }
            }
            let urls: Vec<Url> = entries.into_iter().map(|e| e.url).collect();
            let pushed = shared.frontier().push_all(&urls, 1);
            if let Err(e) = pushed {
                shared.queue_failed(e);
                return None;
            }
            Vec::new()
        }
    };
    {
        let mut s = shared.summary();
        s.discovery_documents += 1;
        s.discovered_urls += summary_urls;
    }
    tracing::info!(document = %doc, kind = what, urls = summary_urls, "discovery document read");
    Some(children)
}

/// What a fetch task leaves for the analysis.
enum Fetched {
    /// Nothing more to do (a failure was reported, or a duplicate redirect).
    Done,
    /// A page to decode, extract and report.
    Page(Box<PendingPage>),
    /// A 304 whose stored copy's links are to be followed.
    NotModified(Box<NotModifiedPage>),
}

/// A fetched page before its analysis.
struct PendingPage {
    requested: String,
    url: Url,
    fetched_at: chrono::DateTime<Utc>,
    status: u16,
    status_line: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
    content_type: String,
    header_charset: Option<String>,
    ip_address: Option<String>,
    depth: u32,
    time_ctx: TimeContext,
    /// The redirect answers on the way to it (archived after the page).
    hops: Vec<FetchedEmbed>,
    /// The request it answers.
    request: crate::event::SentRequest,
}

/// Bodies of redirect and error answers are archived up to this size.
const MAX_ANSWER_BODY: u64 = 1 << 20;

/// A redirect or error answer as a record to archive (its body read up to
/// [`MAX_ANSWER_BODY`]; `None` when it cannot be read).
async fn answer_record(
    resp: reqwest::Response,
    request: crate::event::SentRequest,
    url: &Url,
    fetched_at: chrono::DateTime<Utc>,
) -> Option<FetchedEmbed> {
    crate::embeds::read_record(
        resp,
        request,
        url,
        EmbedKind::Answer,
        fetched_at,
        MAX_ANSWER_BODY,
    )
    .await
    .ok()
}

/// Reports redirect and error answers that lead to no page, to be archived.
async fn emit_answers<R: PageReader>(shared: &Shared<R>, answers: Vec<FetchedEmbed>) {
    let count = answers.len() as u64;
    for a in answers {
        shared.emit(CrawlEvent::Embed(Box::new(a))).await;
    }
    shared.summary().answers += count;
}

/// Takes a URL that produced no page out of the queue.
fn finish_unhanded<R: PageReader>(shared: &Shared<R>, requested: &str) {
    if let Err(e) = shared.queue.finish(&[requested.to_string()]) {
        shared.queue_failed(e);
    }
}

/// Fetches one frontier URL; a URL that produced no page leaves the queue
/// here, a page when the consumer has stored it.
async fn process<R: PageReader>(shared: Arc<Shared<R>>, queued: QueuedUrl) -> Fetched {
    let requested = queued.url.to_string();
    if let Some(copy) = shared.cfg.stored_in_run.get(&requested) {
        take_up(&shared, &requested, copy, queued.depth).await;
        finish_unhanded(&shared, &requested);
        return Fetched::Done;
    }
    let fetched = fetch_one(&shared, queued).await;
    if matches!(fetched, Fetched::Done) {
        finish_unhanded(&shared, &requested);
    }
    fetched
}

/// Decodes a fetched page and has the crawl's reader read it on the blocking
/// pool (under the page budgets), queues its links and reports it.
async fn analyse_page<R: PageReader>(shared: Arc<Shared<R>>, mut p: PendingPage) {
    let requested = p.requested.clone();
    let hops = std::mem::take(&mut p.hops);
    let reading = shared.clone();
    let analysed = tokio::task::spawn_blocking(move || {
        let bytes = p.body.len() as u64;
        let page = FetchedPage {
            requested_url: p.requested,
            url: p.url.to_string(),
            fetched_at: p.fetched_at,
            status: p.status,
            status_line: p.status_line,
            headers: p.headers,
            body: p.body,
            content_type: p.content_type,
            charset: String::new(),
            charset_source: crate::reader::UNDECODED,
            ip_address: p.ip_address,
            depth: p.depth,
            extract: (),
            request: Some(p.request),
        };
        let (page, found) = crate::reader::read_page(
            &reading.reader,
            page,
            &p.url,
            p.header_charset.as_deref(),
            &p.time_ctx,
            &reading.cfg.page_limits,
        );
        (page, found, bytes)
    })
    .await;
    let (page, found, bytes) = match analysed {
        Ok(a) => a,
        Err(e) => {
            let msg = format!("extraction task failed: {e}");
            shared.fail(&requested, FailureKind::Other, msg).await;
            finish_unhanded(&shared, &requested);
            return;
        }
    };
    shared.count_limits(&found.limits);
    if !shared.queue_links(&found.links, page.depth) {
        return;
    }
    {
        let mut s = shared.summary();
        s.pages += 1;
        s.bytes += bytes;
    }
    let embeds = if shared.cfg.embeds.any() {
        crate::embeds::wanted(&shared.cfg, &shared.embeds_seen, &found.embeds)
    } else {
        Vec::new()
    };
    let page_url_text = page.url.clone();
    shared.emit(CrawlEvent::Page(Box::new(page))).await;
    for mut hop in hops {
        hop.page_url = page_url_text.clone();
        shared.summary().answers += 1;
        shared.emit(CrawlEvent::Embed(Box::new(hop))).await;
    }
    fetch_embeds(&shared, &page_url_text, embeds).await;
}

/// Fetches a page's embeds one after another (and what its stylesheets
/// reference) and reports each.
async fn fetch_embeds<R: PageReader>(shared: &Arc<Shared<R>>, page_url: &str, embeds: Vec<Embed>) {
    let mut todo: Vec<(Embed, u32)> = embeds.into_iter().map(|e| (e, 0)).collect();
    todo.reverse();
    while let Some((embed, depth)) = todo.pop() {
        if shared.cancel.is_cancelled() {
            return;
        }
        let Ok(url) = Url::parse(&embed.url) else {
            continue;
        };
        match crate::embeds::fetch_embed(shared.as_ref(), &url, embed.kind, page_url).await {
            Ok(fetched) => {
                if crate::embeds::follow_style(embed.kind, depth) {
                    let css = String::from_utf8_lossy(&fetched.body);
                    let base = Url::parse(&fetched.url).unwrap_or(url);
                    let refs = crate::embeds::stylesheet_refs(&css, &base);
                    for r in crate::embeds::wanted(&shared.cfg, &shared.embeds_seen, &refs) {
                        todo.push((r, depth + 1));
                    }
                }
                shared.summary().embeds += 1;
                shared.emit(CrawlEvent::Embed(Box::new(fetched))).await;
            }
            Err(reason) => {
                tracing::debug!(url = %embed.url, reason = %reason, "embed not fetched");
                *shared.summary().embed_failures.entry(reason).or_default() += 1;
            }
        }
    }
}

/// A queued URL the interrupted run had archived: its stored copy's links
/// are queued (as its fetch would have), nothing is fetched.
async fn take_up<R: PageReader>(shared: &Arc<Shared<R>>, requested: &str, copy: &str, depth: u32) {
    tracing::debug!(
        url = requested,
        "archived before the interruption: not fetched again"
    );
    if let Ok(url) = Url::parse(copy) {
        if let Some(links) = shared.stored_links(&url).await {
            shared.queue_links(&links, depth);
        }
    }
    shared.summary().taken_up += 1;
}

/// Follows the links of a 304's stored copy and reports the 304.
async fn analyse_not_modified<R: PageReader>(shared: Arc<Shared<R>>, mut nm: NotModifiedPage) {
    // A 304 has no body: the links come from the stored copy, so that
    // discovery never stops at an unchanged page.
    let Ok(url) = Url::parse(&nm.url) else {
        finish_unhanded(&shared, &nm.requested_url);
        return;
    };
    let links = shared.stored_links(&url).await;
    nm.links_found = links.as_ref().map(Vec::len);
    if let Some(links) = &links {
        if !shared.queue_links(links, nm.depth) {
            return;
        }
    }
    shared.summary().not_modified += 1;
    shared.emit(CrawlEvent::NotModified(Box::new(nm))).await;
}

/// Fetches one URL, following redirects, up to its body: what is left to do.
async fn fetch_one<R: PageReader>(shared: &Arc<Shared<R>>, queued: QueuedUrl) -> Fetched {
    let QueuedUrl {
        url,
        depth,
        uncaptured,
    } = queued;
    let requested = url.to_string();
    let mut current = url;
    let mut chain: HashSet<String> = HashSet::from([requested.clone()]);
    let mut hops = 0u32;
    let mut answers: Vec<FetchedEmbed> = Vec::new();
    let cfg = &shared.cfg;
    loop {
        if cfg.respect_robots {
            let rules = shared.robots_for(&current).await;
            if !rules.allowed(&current) {
                let (kind, msg) = match &*rules {
                    RobotsRules::Unreachable { kind, message } => {
                        (*kind, format!("robots.txt unreachable: {message}"))
                    }
                    _ => (
                        FailureKind::RobotsDisallowed,
                        format!("robots.txt disallows {current}"),
                    ),
                };
                return shared.fail(current.as_str(), kind, msg).await;
            }
        }
        if !cfg.allow_private && !crate::guard::host_is_public(&current) {
            let msg = format!(
                "{current} is a private, loopback or link-local address (allow_private is off)"
            );
            return shared
                .fail(current.as_str(), FailureKind::Refused, msg)
                .await;
        }
        let host = host_key(&current);
        let permit = shared.politeness.acquire(&host).await;
        // A URL the queue knew no capture of has no validators (a redirect
        // target might: it is asked for).
        let validators = if uncaptured && hops == 0 {
            None
        } else {
            shared.history.validators(&current)
        };
        let (resp, request) = match fetch::send(
            &shared.client,
            cfg,
            &current,
            validators.as_ref(),
            fetch::ACCEPT_HTML,
            || shared.count_request(),
        )
        .await
        {
            Ok(r) => r,
            Err((kind, msg)) => {
                if matches!(kind, FailureKind::Connect | FailureKind::Timeout) {
                    if let Some(wait) = shared.politeness.connect_failed(&host) {
                        tracing::warn!(host = %host, wait_s = wait.as_secs(), "host keeps failing, backing off");
                    }
                }
                return shared.fail(current.as_str(), kind, msg).await;
            }
        };
        shared.politeness.answered(&host);
        let fetched_at = crate::event::now_micros();
        let status = resp.status();
        if matches!(status.as_u16(), 429 | 503) {
            // The server asks for a pause: every URL of the host waits.
            let wait = fetch::retry_after(&resp).unwrap_or(DEFAULT_PAUSE);
            tracing::warn!(host = %host, status = status.as_u16(), wait_s = wait.as_secs(), "host asked for a pause");
            shared.politeness.pause(&host, wait);
        }
        if status.is_redirection() && status.as_u16() != 304 {
            let location = resp
                .headers()
                .get(LOCATION)
                .map(|l| String::from_utf8_lossy(l.as_bytes()).into_owned());
            // The redirect is archived with the page it leads to.
            if let Some(a) = answer_record(resp, request, &current, fetched_at).await {
                answers.push(a);
            }
            drop(permit);
            let Some(location) = location else {
                emit_answers(shared, std::mem::take(&mut answers)).await;
                let msg = format!("{status} without Location");
                return shared
                    .fail(
                        current.as_str(),
                        FailureKind::HttpStatus(status.as_u16()),
                        msg,
                    )
                    .await;
            };
            let Some(next) = parse_normalized(&location, Some(&current)) else {
                emit_answers(shared, std::mem::take(&mut answers)).await;
                let msg = format!("unusable redirect Location {location:?}");
                return shared.fail(current.as_str(), FailureKind::Other, msg).await;
            };
            if !chain.insert(next.to_string()) {
                emit_answers(shared, std::mem::take(&mut answers)).await;
                let msg = format!("redirect from {current} back to {next}");
                return shared
                    .fail(&requested, FailureKind::RedirectLoop, msg)
                    .await;
            }
            hops += 1;
            if hops > cfg.max_redirects {
                emit_answers(shared, std::mem::take(&mut answers)).await;
                let msg = format!("more than {} redirects", cfg.max_redirects);
                return shared
                    .fail(&requested, FailureKind::TooManyRedirects, msg)
                    .await;
            }
            let (in_scope, new) = {
                let mut f = shared.frontier();
                let in_scope = f.in_scope(&next);
                let new = if in_scope {
                    match f.mark_seen(&next) {
                        Ok(new) => new,
                        Err(e) => {
                            drop(f);
                            shared.queue_failed(e);
                            return Fetched::Done;
                        }
                    }
                } else {
                    false
                };
                (in_scope, new)
            };
            if !in_scope {
                emit_answers(shared, std::mem::take(&mut answers)).await;
                let msg = format!("redirect to out-of-scope {next}");
                return shared.fail(&requested, FailureKind::Other, msg).await;
            }
            if !new {
                tracing::debug!(url = %requested, target = %next, "redirect target already seen");
                shared.summary().duplicate_redirects += 1;
                // The redirect is an answer of its own URL: archived, so
                // that URL replays (and `harvest get` follows it) although
                // its target is fetched under its own name.
                emit_answers(shared, std::mem::take(&mut answers)).await;
                return Fetched::Done;
            }
            current = next;
            continue;
        }
        if status.as_u16() == 304 {
            let status_line = format!("{:?} {}", resp.version(), status);
            let headers = fetch::stored_headers(resp.headers(), 0);
            drop(resp);
            drop(permit);
            return Fetched::NotModified(Box::new(NotModifiedPage {
                requested_url: requested,
                url: current.to_string(),
                fetched_at,
                status_line,
                headers,
                depth,
                links_found: None,
                request: Some(request),
            }));
        }
        if !status.is_success() {
            // An error answer is archived as fetched (with the redirects
            // that led to it); the URL still counts as a failure.
            let answer = answer_record(resp, request, &current, fetched_at).await;
            drop(permit);
            answers.extend(answer);
            emit_answers(shared, answers).await;
            let msg = format!("HTTP status {status}");
            return shared
                .fail(
                    current.as_str(),
                    FailureKind::HttpStatus(status.as_u16()),
                    msg,
                )
                .await;
        }
        let content_type_header = resp
            .headers()
            .get(CONTENT_TYPE)
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
            .unwrap_or_default();
        let content_type = fetch::media_type(&content_type_header);
        if !content_type.is_empty()
            && !cfg
                .allowed_content_types
                .iter()
                .any(|t| t.eq_ignore_ascii_case(&content_type))
        {
            drop(resp);
            let msg = format!("content type {content_type}");
            return shared
                .fail(current.as_str(), FailureKind::NotHtml, msg)
                .await;
        }
        let status_line = format!("{:?} {}", resp.version(), status);
        let ip_address = resp.remote_addr().map(|a| a.ip().to_string());
        let headers = resp.headers().clone();
        let body = match fetch::read_body(resp, cfg.max_body_bytes).await {
            Ok(b) => b,
            Err((kind, msg)) => return shared.fail(current.as_str(), kind, msg).await,
        };
        drop(permit);
        let stored_headers = fetch::stored_headers(&headers, body.len());
        let page_url = current.clone();
        let header_charset = charset::charset_from_content_type(&content_type_header);
        let time_ctx = TimeContext {
            fetched: fetched_at,
            zone: current
                .host_str()
                .and_then(|h| {
                    cfg.host_time_zones
                        .iter()
                        .find(|(host, _)| host.eq_ignore_ascii_case(h))
                        .map(|(_, z)| *z)
                })
                .or(cfg.time_zone),
            hint: shared
                .hints
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .get(current.as_str())
                .copied(),
        };
        return Fetched::Page(Box::new(PendingPage {
            requested,
            url: page_url,
            fetched_at,
            status: status.as_u16(),
            status_line,
            headers: stored_headers,
            body,
            content_type,
            header_charset,
            ip_address,
            depth,
            time_ctx,
            hops: answers,
            request,
        }));
    }
}
