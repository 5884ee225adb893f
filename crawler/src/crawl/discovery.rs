//! Discovery at the start of a crawl: the configured sitemaps and feeds and
//! the seed hosts' robots.txt `Sitemap:` lines are fetched (politely, under
//! robots.txt), parsed on the blocking pool by [`crate::discover`], and their
//! URLs queued with the publish times they give as hints for the pages.

use std::collections::HashSet;
use std::sync::Arc;

use url::Url;

use super::shared::Shared;
use crate::event::FailureKind;
use crate::fetch;
use crate::normalize::host_key;
use crate::reader::PageReader;
use crate::robots;
use shapes::page::PublishedFrom;

/// Accept header of sitemap and feed requests.
const ACCEPT_DISCOVERY: &str =
    "application/xml,text/xml,application/rss+xml,application/atom+xml,application/json;q=0.9,*/*;q=0.5";

/// Reads the configured sitemaps and feeds (and the seed hosts' robots.txt
/// `Sitemap:` lines) and queues their in-scope URLs at depth 1. Sitemap
/// indexes are followed, up to `max_discovery_documents` documents in all.
/// A document that cannot be fetched or parsed is a `discovery` failure.
pub(super) async fn discover_all<R: PageReader>(shared: &Arc<Shared<R>>) {
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
