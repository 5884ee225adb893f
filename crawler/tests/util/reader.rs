//! The extraction crate as the crawl's page reader, for the crawler's tests: each page's
//! extraction travels with it, its links and embeds are what the crawl follows.

use crawler::{FetchedPage, PageLinks, PageReader};
use extract::{Extracted, Limits, TimeContext};
use url::Url;

/// Reads each page with [`extract::extract_limited`].
#[derive(Debug, Clone, Copy, Default)]
pub struct Extracting;

fn found(x: &Extracted) -> PageLinks {
    PageLinks {
        links: x.links.clone(),
        embeds: x.embeds.clone(),
        limits: x.limits,
    }
}

impl PageReader for Extracting {
    type Read = Extracted;

    fn read(
        &self,
        page: FetchedPage<()>,
        url: &Url,
        text: &str,
        ctx: &TimeContext,
        limits: &Limits,
    ) -> (FetchedPage<Extracted>, PageLinks) {
        let x = extract::extract_limited(text, url, ctx, limits);
        let links = found(&x);
        (page.map(|()| x), links)
    }

    fn links(&self, text: &str, url: &Url, limits: &Limits) -> PageLinks {
        found(&extract::extract_limited(
            text,
            url,
            &TimeContext::default(),
            limits,
        ))
    }
}
