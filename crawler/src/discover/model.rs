//! The vocabulary of discovery: the limits a document is parsed under
//! ([`Limits`]), what it turns out to be with the URLs it lists ([`Document`],
//! [`DiscoveredUrl`], [`FeedKind`]) and what was dropped from it
//! ([`ParseReport`]); the parsers and the callers share these types.

use chrono::{DateTime, Utc};
use url::Url;

/// Default [`Limits::max_bytes`]: 50 MiB, the sitemaps.org limit for an
/// uncompressed sitemap.
pub const DEFAULT_MAX_BYTES: u64 = 50 * 1024 * 1024;

/// Default [`Limits::max_urls`]: 50,000, the sitemaps.org limit of URLs per
/// sitemap (and of sitemaps per index).
pub const DEFAULT_MAX_URLS: usize = 50_000;

/// Size limits applied to one document.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Largest document accepted, in bytes, applied both to the bytes given and
    /// to their gzip-decompressed content. Default [`DEFAULT_MAX_BYTES`].
    pub max_bytes: u64,
    /// Most URLs kept from one document; further entries are dropped and counted
    /// in [`ParseReport::over_limit`]. Default [`DEFAULT_MAX_URLS`].
    pub max_urls: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_bytes: DEFAULT_MAX_BYTES,
            max_urls: DEFAULT_MAX_URLS,
        }
    }
}

/// One URL found in a sitemap, sitemap index or feed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiscoveredUrl {
    /// Absolute http(s) URL (not normalised; see [`crate::normalize`]).
    pub url: Url,
    /// Last modification: sitemap `<lastmod>`, feed entry `updated` (for RSS,
    /// which has no such field, feed-rs copies `pubDate`).
    pub lastmod: Option<DateTime<Utc>>,
    /// Publication time hint: `<news:publication_date>`, RSS `pubDate`, Atom
    /// `published` (or `updated` when there is no `published`).
    pub published: Option<DateTime<Utc>>,
    /// Title: `<news:title>`, feed entry title (trimmed, never empty).
    pub title: Option<String>,
}

/// Which feed format a [`Document::Feed`] was written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FeedKind {
    /// RSS 0.9x, 1.0 (RDF) or 2.0.
    Rss,
    /// Atom 1.0.
    Atom,
    /// JSON Feed.
    Json,
}

/// What a document turned out to be, with the URLs it lists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Document {
    /// A `<urlset>` sitemap: pages.
    UrlSet(Vec<DiscoveredUrl>),
    /// A `<sitemapindex>`: child sitemaps to fetch, with their `<lastmod>`.
    SitemapIndex(Vec<DiscoveredUrl>),
    /// An RSS, Atom or JSON feed: entry pages.
    Feed {
        /// The feed format.
        kind: FeedKind,
        /// One URL per entry that has a usable link.
        entries: Vec<DiscoveredUrl>,
    },
}

impl Document {
    /// The URLs of the document, whatever its kind.
    pub fn urls(&self) -> &[DiscoveredUrl] {
        match self {
            Self::UrlSet(u) | Self::SitemapIndex(u) => u,
            Self::Feed { entries, .. } => entries,
        }
    }

    /// The URLs of the document, whatever its kind, by value.
    pub fn into_urls(self) -> Vec<DiscoveredUrl> {
        match self {
            Self::UrlSet(u) | Self::SitemapIndex(u) => u,
            Self::Feed { entries, .. } => entries,
        }
    }
}

/// What was skipped or dropped while parsing one document.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ParseReport {
    /// The bytes were gzip and have been decompressed.
    pub gzipped: bool,
    /// Valid entries dropped because [`Limits::max_urls`] were already kept.
    pub over_limit: usize,
    /// Entries without a URL, or whose URL does not parse.
    pub invalid_urls: usize,
    /// Entries whose URL is not http or https (`ftp:`, `mailto:`, ...).
    pub unsupported_scheme: usize,
    /// Dates (lastmod, publication) that did not parse or were implausible and
    /// were replaced by `None`. Feed dates that feed-rs could not parse are not
    /// counted: it drops them itself.
    pub dropped_dates: usize,
}

impl ParseReport {
    /// True when entries were dropped because of [`Limits::max_urls`].
    pub fn truncated(&self) -> bool {
        self.over_limit > 0
    }
}

/// A parsed document and what was skipped in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseOutcome {
    /// The document and its URLs.
    pub document: Document,
    /// Counters of skipped entries and dropped dates.
    pub report: ParseReport,
}
