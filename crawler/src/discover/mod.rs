//! Discovery of URLs besides links: robots.txt `Sitemap:` lines, XML sitemaps
//! (sitemaps.org 0.9, with the Google News extension), sitemap indexes, and
//! RSS / Atom / JSON feeds.
//!
//! Everything here is pure: the crawl loop fetches the bytes and calls
//! [`robots_sitemaps`] on robots.txt (or [`crate::robots::RobotsRules::sitemaps`]
//! on rules it already parsed) and [`parse_document`] on every sitemap or feed it
//! fetches. [`parse_document`] sniffs the format from the content, not from the
//! file name or the Content-Type:
//!
//! * gzip is recognised by its magic bytes (`1f 8b`) and decompressed up to
//!   [`Limits::max_bytes`]; a gzip bomb stops there with
//!   [`DiscoverError::TooLarge`] having allocated at most that much;
//! * a root element `<urlset>` gives [`Document::UrlSet`] (pages, with
//!   `<lastmod>` and, from `<news:news>`, the publication date and title);
//! * `<sitemapindex>` gives [`Document::SitemapIndex`] (more sitemaps to fetch);
//! * `<rss>`, `<feed>` (Atom), `<rdf:RDF>` (RSS 1.0) or a JSON object gives
//!   [`Document::Feed`], parsed with feed-rs.
//!
//! Bad entries are not errors: a missing or unparsable `<loc>`, a non-http(s)
//! URL, entries past [`Limits::max_urls`] and implausible dates are skipped and
//! counted in [`ParseReport`]. A date is implausible when it does not parse,
//! is before [`MIN_PLAUSIBLE_YEAR`], or is more than [`MAX_FUTURE_SKEW`] after
//! the time of parsing (a publication date in the future is not a hint).
//!
//! URLs are resolved against the document URL (a relative `<loc>` is tolerated
//! although the protocol forbids it) but not otherwise filtered: the sitemaps.org
//! rule that a sitemap lists only URLs of its own host, and the crawl scope, are
//! the caller's to apply.

mod ctx;
mod dates;
mod decode;
mod feed;
mod model;
mod parse;
mod robots_txt;
mod sitemap;
#[cfg(test)]
mod test_support;

pub use ctx::{MAX_FUTURE_SKEW, MIN_PLAUSIBLE_YEAR};
pub use dates::parse_w3c_datetime;
pub use decode::GZIP_MAGIC;
pub use model::{
    DiscoveredUrl, Document, FeedKind, Limits, ParseOutcome, ParseReport, DEFAULT_MAX_BYTES,
    DEFAULT_MAX_URLS,
};
pub use parse::{parse_document, parse_document_at};
pub use robots_txt::robots_sitemaps;
pub use sitemap::{NEWS_NS, SITEMAP_NS};
