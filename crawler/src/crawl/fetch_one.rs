//! A fetch task: one frontier URL fetched up to its body, hop by hop through
//! its redirects. Each hop is checked against robots.txt and the
//! private-address rule, waits for its host's politeness slot and asks with the
//! history's validators; its answer is classified (redirect, 304, error status,
//! refused content type, page) into what is left for the analysis, and the
//! redirect and error answers on the way are kept as records to archive.

use std::collections::HashSet;
use std::ops::ControlFlow;
use std::sync::Arc;

use chrono::Utc;
use reqwest::header::{CONTENT_TYPE, LOCATION};
use reqwest::{Response, StatusCode};
use url::Url;

use super::fetched::{Fetched, PendingPage};
use super::shared::{finish_unhanded, Shared};
use super::stored::take_up;
use crate::charset;
use crate::event::{CrawlEvent, FailureKind, FetchedEmbed, NotModifiedPage, SentRequest};
use crate::fetch;
use crate::normalize::{host_key, parse_normalized};
use crate::politeness::HostPermit;
use crate::queue::{QueueError, QueuedUrl};
use crate::reader::PageReader;
use crate::robots::RobotsRules;
use shapes::page::{EmbedKind, TimeContext};

/// Pause of a host that answered 429/503 without `Retry-After`.
const DEFAULT_PAUSE: std::time::Duration = std::time::Duration::from_secs(30);

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

/// Fetches one frontier URL; a URL that produced no page leaves the queue
/// here, a page when the consumer has stored it.
pub(super) async fn process<R: PageReader>(shared: Arc<Shared<R>>, queued: QueuedUrl) -> Fetched {
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

/// Fetches one URL, following redirects, up to its body: what is left to do.
async fn fetch_one<R: PageReader>(shared: &Arc<Shared<R>>, queued: QueuedUrl) -> Fetched {
    let mut chase = Chase::new(queued);
    loop {
        if let Some(refused) = chase.refuse(shared).await {
            return refused;
        }
        let host = host_key(&chase.current);
        let permit = shared.politeness.acquire(&host).await;
        let (resp, request) = match chase.send(shared, &host).await {
            Ok(r) => r,
            Err(failed) => return failed,
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
        let answer = Answer {
            resp,
            request,
            fetched_at,
            status,
            permit,
        };
        if status.is_redirection() && status.as_u16() != 304 {
            match chase.follow_redirect(shared, answer).await {
                ControlFlow::Continue(()) => continue,
                ControlFlow::Break(done) => return done,
            }
        }
        if status.as_u16() == 304 {
            return chase.not_modified(answer);
        }
        if !status.is_success() {
            return chase.error_answer(shared, answer).await;
        }
        return chase.read_page(shared, answer).await;
    }
}

/// One URL on its way through its redirects: what the steps of [`fetch_one`]
/// share.
struct Chase {
    /// The URL the frontier gave.
    requested: String,
    depth: u32,
    /// The queue knew no capture of the URL.
    uncaptured: bool,
    /// The URL of this hop.
    current: Url,
    /// Every URL of the chain so far, to tell a loop.
    chain: HashSet<String>,
    /// Redirects followed so far.
    hops: u32,
    /// The redirect answers on the way, to be archived.
    answers: Vec<FetchedEmbed>,
}

/// The answer to one hop's request, with the host slot held until its body is
/// read.
struct Answer {
    resp: Response,
    request: SentRequest,
    fetched_at: chrono::DateTime<Utc>,
    status: StatusCode,
    permit: HostPermit,
}

impl Chase {
    fn new(queued: QueuedUrl) -> Self {
        let QueuedUrl {
            url,
            depth,
            uncaptured,
        } = queued;
        let requested = url.to_string();
        Self {
            chain: HashSet::from([requested.clone()]),
            requested,
            depth,
            uncaptured,
            current: url,
            hops: 0,
            answers: Vec::new(),
        }
    }

    /// The failure of this hop when robots.txt disallows it or its host is not
    /// public (and `allow_private` is off), reported; `None` when it may be
    /// fetched.
    async fn refuse<R: PageReader>(&self, shared: &Arc<Shared<R>>) -> Option<Fetched> {
        let cfg = &shared.cfg;
        let current = &self.current;
        if cfg.respect_robots {
            let rules = shared.robots_for(current).await;
            if !rules.allowed(current) {
                let (kind, msg) = match &*rules {
                    RobotsRules::Unreachable { kind, message } => {
                        (*kind, format!("robots.txt unreachable: {message}"))
                    }
                    _ => (
                        FailureKind::RobotsDisallowed,
                        format!("robots.txt disallows {current}"),
                    ),
                };
                return Some(shared.fail(current.as_str(), kind, msg).await);
            }
        }
        if !cfg.allow_private && !crate::guard::host_is_public(current) {
            let msg = format!(
                "{current} is a private, loopback or link-local address (allow_private is off)"
            );
            return Some(
                shared
                    .fail(current.as_str(), FailureKind::Refused, msg)
                    .await,
            );
        }
        None
    }

    /// Sends this hop's request (with the history's validators); a request
    /// that fails is reported, and a connection failure or timeout counts
    /// towards the host's back-off.
    async fn send<R: PageReader>(
        &self,
        shared: &Arc<Shared<R>>,
        host: &str,
    ) -> Result<(Response, SentRequest), Fetched> {
        // A URL the queue knew no capture of has no validators (a redirect
        // target might: it is asked for).
        let validators = if self.uncaptured && self.hops == 0 {
            None
        } else {
            shared.history.validators(&self.current)
        };
        match fetch::send(
            &shared.client,
            &shared.cfg,
            &self.current,
            validators.as_ref(),
            fetch::ACCEPT_HTML,
            || shared.count_request(),
        )
        .await
        {
            Ok(r) => Ok(r),
            Err((kind, msg)) => {
                if matches!(kind, FailureKind::Connect | FailureKind::Timeout) {
                    if let Some(wait) = shared.politeness.connect_failed(host) {
                        tracing::warn!(host = %host, wait_s = wait.as_secs(), "host keeps failing, backing off");
                    }
                }
                Err(shared.fail(self.current.as_str(), kind, msg).await)
            }
        }
    }

    /// A redirect: its answer is kept, and the chase goes on to its target
    /// unless that is missing, unusable, a loop, a hop too many, out of scope
    /// or already seen (then the answers so far are reported, and the failure).
    async fn follow_redirect<R: PageReader>(
        &mut self,
        shared: &Arc<Shared<R>>,
        answer: Answer,
    ) -> ControlFlow<Fetched> {
        let Answer {
            resp,
            request,
            fetched_at,
            status,
            permit,
        } = answer;
        let current = &self.current;
        let location = resp
            .headers()
            .get(LOCATION)
            .map(|l| String::from_utf8_lossy(l.as_bytes()).into_owned());
        // The redirect is archived with the page it leads to.
        if let Some(a) = answer_record(resp, request, current, fetched_at).await {
            self.answers.push(a);
        }
        drop(permit);
        let Some(location) = location else {
            let msg = format!("{status} without Location");
            let answers = std::mem::take(&mut self.answers);
            let kind = FailureKind::HttpStatus(status.as_u16());
            return ControlFlow::Break(
                fail_after(shared, answers, current.as_str(), kind, msg).await,
            );
        };
        let Some(next) = parse_normalized(&location, Some(current)) else {
            let msg = format!("unusable redirect Location {location:?}");
            let answers = std::mem::take(&mut self.answers);
            return ControlFlow::Break(
                fail_after(shared, answers, current.as_str(), FailureKind::Other, msg).await,
            );
        };
        if !self.chain.insert(next.to_string()) {
            let msg = format!("redirect from {current} back to {next}");
            let answers = std::mem::take(&mut self.answers);
            let kind = FailureKind::RedirectLoop;
            return ControlFlow::Break(
                fail_after(shared, answers, &self.requested, kind, msg).await,
            );
        }
        self.hops += 1;
        if self.hops > shared.cfg.max_redirects {
            let msg = format!("more than {} redirects", shared.cfg.max_redirects);
            let answers = std::mem::take(&mut self.answers);
            let kind = FailureKind::TooManyRedirects;
            return ControlFlow::Break(
                fail_after(shared, answers, &self.requested, kind, msg).await,
            );
        }
        let (in_scope, new) = match claim_target(shared, &next) {
            Ok(found) => found,
            Err(e) => {
                shared.queue_failed(e);
                return ControlFlow::Break(Fetched::Done);
            }
        };
        if !in_scope {
            let msg = format!("redirect to out-of-scope {next}");
            let answers = std::mem::take(&mut self.answers);
            let kind = FailureKind::Other;
            return ControlFlow::Break(
                fail_after(shared, answers, &self.requested, kind, msg).await,
            );
        }
        if !new {
            tracing::debug!(url = %self.requested, target = %next, "redirect target already seen");
            shared.summary().duplicate_redirects += 1;
            // The redirect is an answer of its own URL: archived, so
            // that URL replays (and `harvest get` follows it) although
            // its target is fetched under its own name.
            emit_answers(shared, std::mem::take(&mut self.answers)).await;
            return ControlFlow::Break(Fetched::Done);
        }
        self.current = next;
        ControlFlow::Continue(())
    }

    /// A 304: nothing to read, the stored copy stands.
    fn not_modified(self, answer: Answer) -> Fetched {
        let Answer {
            resp,
            request,
            fetched_at,
            status,
            permit,
        } = answer;
        let status_line = format!("{:?} {}", resp.version(), status);
        let headers = fetch::stored_headers(resp.headers(), 0);
        drop(resp);
        drop(permit);
        Fetched::NotModified(Box::new(NotModifiedPage {
            requested_url: self.requested,
            url: self.current.to_string(),
            fetched_at,
            status_line,
            headers,
            depth: self.depth,
            links_found: None,
            request: Some(request),
        }))
    }

    /// An error status: the answer is archived as fetched (with the redirects
    /// that led to it); the URL still counts as a failure.
    async fn error_answer<R: PageReader>(
        mut self,
        shared: &Arc<Shared<R>>,
        answer: Answer,
    ) -> Fetched {
        let Answer {
            resp,
            request,
            fetched_at,
            status,
            permit,
        } = answer;
        let record = answer_record(resp, request, &self.current, fetched_at).await;
        drop(permit);
        self.answers.extend(record);
        emit_answers(shared, self.answers).await;
        let msg = format!("HTTP status {status}");
        shared
            .fail(
                self.current.as_str(),
                FailureKind::HttpStatus(status.as_u16()),
                msg,
            )
            .await
    }

    /// A success: its body is read (within the size limit) unless its content
    /// type is not allowed, and the page is left for the analysis.
    async fn read_page<R: PageReader>(self, shared: &Arc<Shared<R>>, answer: Answer) -> Fetched {
        let cfg = &shared.cfg;
        let Answer {
            resp,
            request,
            fetched_at,
            status,
            permit,
        } = answer;
        let current = &self.current;
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
        let time_ctx = time_context(shared, current, fetched_at);
        Fetched::Page(Box::new(PendingPage {
            requested: self.requested,
            url: page_url,
            fetched_at,
            status: status.as_u16(),
            status_line,
            headers: stored_headers,
            body,
            content_type,
            header_charset,
            ip_address,
            depth: self.depth,
            time_ctx,
            hops: self.answers,
            request,
        }))
    }
}

/// Reports the answers that led to a failure, then the failure.
async fn fail_after<R: PageReader>(
    shared: &Shared<R>,
    answers: Vec<FetchedEmbed>,
    url: &str,
    kind: FailureKind,
    message: String,
) -> Fetched {
    emit_answers(shared, answers).await;
    shared.fail(url, kind, message).await
}

/// Whether a redirect target is in scope and, when it is, new to the crawl
/// (it is then marked seen), under one lock of the frontier.
fn claim_target<R: PageReader>(shared: &Shared<R>, next: &Url) -> Result<(bool, bool), QueueError> {
    let mut f = shared.frontier();
    let in_scope = f.in_scope(next);
    let new = if in_scope { f.mark_seen(next)? } else { false };
    Ok((in_scope, new))
}

/// The time context of a page fetched from `url`: when, the time zone
/// configured for its host (or the crawl's), and the publish time a feed or
/// sitemap gave for it.
fn time_context<R: PageReader>(
    shared: &Shared<R>,
    url: &Url,
    fetched_at: chrono::DateTime<Utc>,
) -> TimeContext {
    let cfg = &shared.cfg;
    TimeContext {
        fetched: fetched_at,
        zone: url
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
            .get(url.as_str())
            .copied(),
    }
}
