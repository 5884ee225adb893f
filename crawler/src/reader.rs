//! How the crawl reads the pages it fetches. The crawler fetches, decodes and follows;
//! what a page says (its headline, publish time, links...) is the extraction crate's,
//! which the crawler does not depend on: the crawl's caller gives a [`PageReader`] that
//! reads each page (in the blocking pool, off the async workers) and hands back, typed,
//! what it made of it together with the links and embeds the crawl follows. A reader may
//! do more than extract in the same task (classify, hash, encode), so a page costs one
//! handoff to the blocking pool.

use url::Url;

use shapes::charset::{self, CharsetSource};
use shapes::page::{Embed, LimitReport, Limits, TimeContext};

use crate::event::FetchedPage;

/// What the crawl follows from a page: its links (absolute, normalised, each once), what
/// it embeds, and what the page's budgets did while it was read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PageLinks {
    pub links: Vec<String>,
    pub embeds: Vec<Embed>,
    pub limits: LimitReport,
}

/// Reads the pages of a crawl.
pub trait PageReader: Send + Sync + 'static {
    /// What the reader makes of a page; it travels with the page on the event channel
    /// ([`FetchedPage::extract`]).
    type Read: Send + 'static;

    /// Reads `page`, fetched from `url` (its final URL, parsed) and whose body decodes
    /// to `text`, with `ctx` for its publish time and under `limits`: the page with what
    /// the reader made of it (the reader may drop what it no longer needs of the body,
    /// the crawl counted its bytes before), and what the crawl follows.
    fn read(
        &self,
        page: FetchedPage<()>,
        url: &Url,
        text: &str,
        ctx: &TimeContext,
        limits: &Limits,
    ) -> (FetchedPage<Self::Read>, PageLinks);

    /// The links and embeds of a page's stored copy (`text`, fetched from `url`): what a
    /// crawl follows from a page that answered 304.
    fn links(&self, text: &str, url: &Url, limits: &Limits) -> PageLinks;
}

/// Decodes `page`'s body (its `Content-Type` charset first, `header_charset`) and reads
/// it with `reader`: the work a page costs after its fetch, the same for a crawled and an
/// archived page. `url` is the page's final URL (`page.url`), parsed.
pub fn read_page<R: PageReader>(
    reader: &R,
    mut page: FetchedPage<()>,
    url: &Url,
    header_charset: Option<&str>,
    ctx: &TimeContext,
    limits: &Limits,
) -> (FetchedPage<R::Read>, PageLinks) {
    let decoded = charset::decode(&page.body, header_charset);
    page.charset = decoded.encoding.name().to_string();
    page.charset_source = decoded.source;
    reader.read(page, url, &decoded.text, ctx, limits)
}

/// The charset source a page has before it is decoded.
pub(crate) const UNDECODED: CharsetSource = CharsetSource::Default;
