//! The analysis of a fetched page, on a task that holds no host: the crawl's
//! reader decodes and reads the body on the blocking pool (under the page
//! budgets), then the page's links are queued, the page and the redirects that
//! led to it are reported, and its embeds are fetched.

use std::sync::Arc;

use url::Url;

use super::fetched::PendingPage;
use super::shared::{finish_unhanded, Shared};
use crate::event::{CrawlEvent, FailureKind, FetchedPage};
use crate::reader::PageReader;
use shapes::page::Embed;

/// Decodes a fetched page and has the crawl's reader read it on the blocking
/// pool (under the page budgets), queues its links and reports it.
pub(super) async fn analyse_page<R: PageReader>(shared: Arc<Shared<R>>, mut p: PendingPage) {
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
