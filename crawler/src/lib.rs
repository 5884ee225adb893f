//! crawler stage of harvest: frontier, fetcher (reqwest), robots.txt, per-host
//! politeness, conditional GET and embeds. Each fetched page is decoded
//! (`shapes::charset`) and handed to the extraction crate (`extract`), whose links
//! the frontier takes.
//!
//! Entry point: [`crawl`] (or [`crawl_with_cancel`]). Pages and failures arrive on
//! a bounded `tokio::sync::mpsc` channel, which gives backpressure; dropping the
//! receiver stops the crawl.
//!
//! Discovery: [`discover`] finds URLs besides links in bytes the caller has
//! fetched (pure, no network): `Sitemap:` lines of robots.txt
//! ([`discover::robots_sitemaps`]), XML sitemaps and sitemap indexes (gzip,
//! Google News extension) and RSS / Atom / JSON feeds
//! ([`discover::parse_document`]), under size and URL-count limits
//! ([`discover::Limits`]).

pub mod archived;
pub mod config;
mod crawl;
pub mod discover;
pub mod embeds;
pub mod error;
pub mod event;
pub mod fetch;
pub mod frontier;
pub mod guard;
pub use shapes::{charset, normalize};
pub mod politeness;
pub mod queue;
pub mod reader;
pub mod robots;

pub use charset::CharsetSource;
pub use config::{CrawlConfig, EmbedPolicy, Scope};
pub use crawl::{crawl, crawl_with_cancel, crawl_with_queue, SCHEDULER_SCAN_LIMIT};
pub use error::{DiscoverError, Error, Result};
pub use event::{
    CrawlEvent, CrawlSummary, FailureKind, FetchedEmbed, FetchedPage, NoHistory, NotModifiedPage,
    SentRequest, StoredCopy, UrlHistory, Validators,
};
pub use queue::{MemoryQueue, QueueError, QueuedUrl, UrlQueue};
pub use reader::{read_page, PageLinks, PageReader};
pub use tokio_util::sync::CancellationToken;
pub use url::Url;

/// The extraction crate as a page reader, for the crawler's own tests (shared with
/// `tests/util`).
#[cfg(test)]
#[path = "../tests/util/reader.rs"]
mod test_reader;
#[cfg(test)]
extern crate self as crawler;
