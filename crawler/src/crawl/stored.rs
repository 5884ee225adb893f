//! The stored-copy path: a 304 and a URL the interrupted run already archived
//! are not fetched (again), but their stored copy's links are read on the
//! blocking pool and queued, so that discovery never stops at an unchanged page.

use std::sync::Arc;

use url::Url;

use super::shared::{finish_unhanded, Shared};
use crate::charset;
use crate::event::{CrawlEvent, NotModifiedPage};
use crate::reader::PageReader;

impl<R: PageReader> Shared<R> {
    /// Links of the stored copy of `url` (for a 304), if the history has one.
    pub(super) async fn stored_links(self: &Arc<Self>, url: &Url) -> Option<Vec<String>> {
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
}

/// A queued URL the interrupted run had archived: its stored copy's links
/// are queued (as its fetch would have), nothing is fetched.
pub(super) async fn take_up<R: PageReader>(
    shared: &Arc<Shared<R>>,
    requested: &str,
    copy: &str,
    depth: u32,
) {
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
pub(super) async fn analyse_not_modified<R: PageReader>(
    shared: Arc<Shared<R>>,
    mut nm: NotModifiedPage,
) {
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
