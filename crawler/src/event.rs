//! What the crawl reports: pages, not-modified notices, failures, and the summary.

use std::collections::BTreeMap;
use std::time::Duration;

use chrono::{DateTime, Utc};
use url::Url;

use crate::charset::CharsetSource;

/// Validators remembered from an earlier capture, used for a conditional GET.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Validators {
    /// `ETag` of the earlier response, sent as `If-None-Match`.
    pub etag: Option<String>,
    /// `Last-Modified` of the earlier response, sent as `If-Modified-Since`.
    pub last_modified: Option<String>,
}

/// The stored body of an earlier capture (its links are followed after a 304).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StoredCopy {
    /// Body bytes as stored (content-decoded, in the page's charset).
    pub body: Vec<u8>,
    /// The stored `Content-Type` header value (for the charset), may be empty.
    pub content_type: String,
}

/// Earlier captures known to the caller (the binary reads its `urls` table).
pub trait UrlHistory: Send + Sync {
    /// Validators of the last capture of `url` (normalised), if any.
    fn validators(&self, url: &Url) -> Option<Validators>;

    /// The stored copy of `url`'s last capture, read when the server answers
    /// 304 so that the page's links are still followed. Default: none.
    fn stored_copy(&self, _url: &Url) -> Option<StoredCopy> {
        None
    }
}

/// A history that knows nothing: every fetch is unconditional.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoHistory;

impl UrlHistory for NoHistory {
    fn validators(&self, _url: &Url) -> Option<Validators> {
        None
    }
}

/// The HTTP request harvest sent for a capture, as handed to the HTTP client
/// ([`crate::fetch::request_headers`]): archived as a `request` record beside the response.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SentRequest {
    /// Request line: method, origin-form target and the protocol the answer came back on,
    /// e.g. `GET /doc/?q=1 HTTP/1.1`.
    pub request_line: String,
    /// Header fields in the order sent, names in lower case as the client writes them.
    pub headers: Vec<(String, String)>,
}

/// A fetched HTML page with its extracted attributes.
#[derive(Debug, Clone)]
pub struct FetchedPage<P> {
    /// The URL taken from the frontier (normalised).
    pub requested_url: String,
    /// The final URL after redirects.
    pub url: String,
    /// When the response headers arrived.
    pub fetched_at: DateTime<Utc>,
    /// HTTP status code (2xx).
    pub status: u16,
    /// Status line as it would appear on the wire, e.g. `HTTP/1.1 200 OK`
    /// (canonical reason phrase).
    pub status_line: String,
    /// Response headers **as stored**: names as received (lowercase, as hyper
    /// delivers them), in order, repeated headers kept. Because `body` is stored
    /// content-decoded, `Content-Encoding` and `Transfer-Encoding` are removed and
    /// `Content-Length` is replaced by the length of `body`, so the pair
    /// (headers, body) is a valid HTTP message.
    pub headers: Vec<(String, String)>,
    /// Body bytes after content decoding (gzip/br/deflate), still in the page's
    /// own charset.
    pub body: Vec<u8>,
    /// Media type of the response without parameters (`text/html`), empty when
    /// the server sent none.
    pub content_type: String,
    /// encoding_rs name of the charset used to decode `body` (`UTF-8`, `GBK`,
    /// `gb18030`, `Big5`, ...).
    pub charset: String,
    /// Where `charset` came from.
    pub charset_source: CharsetSource,
    /// IP address of the server, when known.
    pub ip_address: Option<String>,
    /// Link depth from the seed (seeds are 0).
    pub depth: u32,
    /// What the crawl's [`crate::PageReader`] made of the page (its extraction, and
    /// whatever else the reader does on it).
    pub extract: P,
    /// The request that fetched it; `None` for a page this crawl did not fetch (a record
    /// imported from another tool's WARC or indexed again from a pack).
    pub request: Option<SentRequest>,
}

impl<P> FetchedPage<P> {
    /// The page with `f` of what its reader made of it: the one conversion between the
    /// shapes a page takes.
    pub fn map<Q>(self, f: impl FnOnce(P) -> Q) -> FetchedPage<Q> {
        FetchedPage {
            requested_url: self.requested_url,
            url: self.url,
            fetched_at: self.fetched_at,
            status: self.status,
            status_line: self.status_line,
            headers: self.headers,
            body: self.body,
            content_type: self.content_type,
            charset: self.charset,
            charset_source: self.charset_source,
            ip_address: self.ip_address,
            depth: self.depth,
            extract: f(self.extract),
            request: self.request,
        }
    }

    /// The page with the first part of what `f` makes of its reading, and the second
    /// part apart.
    pub fn split<Q, S>(self, f: impl FnOnce(P) -> (Q, S)) -> (FetchedPage<Q>, S) {
        let mut apart = None;
        let page = self.map(|p| {
            let (q, s) = f(p);
            apart = Some(s);
            q
        });
        match apart {
            Some(s) => (page, s),
            None => unreachable!("map calls f once"),
        }
    }

    /// `body` decoded with `charset`.
    pub fn text(&self) -> String {
        crate::charset::decode_with_name(&self.body, &self.charset)
    }

    /// First value of response header `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// Now, to the microsecond (the precision of a record's `WARC-Date`: the
/// index and the pack then say the same time, and a reindex gives it back).
pub fn now_micros() -> DateTime<Utc> {
    let now = Utc::now();
    now - chrono::Duration::nanoseconds(i64::from(now.timestamp_subsec_nanos() % 1_000))
}

/// A resource embedded by a page, fetched with it (any 2xx answer; the body
/// content-decoded and the headers in stored form as for a page).
#[derive(Debug, Clone)]
pub struct FetchedEmbed {
    /// The resource's URL (normalised, after redirects).
    pub url: String,
    /// The page that embeds it (the first one of the crawl that did).
    pub page_url: String,
    /// What the page embeds it as.
    pub kind: shapes::page::EmbedKind,
    pub fetched_at: DateTime<Utc>,
    pub status: u16,
    pub status_line: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// Media type without parameters (`image/jpeg`).
    pub content_type: String,
    pub ip_address: Option<String>,
    /// The request that fetched it (`None` when not fetched by this crawl).
    pub request: Option<SentRequest>,
}

/// A 304 answer to a conditional GET (archived as a `revisit` record).
#[derive(Debug, Clone)]
pub struct NotModifiedPage {
    /// The URL taken from the frontier (normalised).
    pub requested_url: String,
    /// The URL that answered 304 (normalised, after redirects).
    pub url: String,
    /// When the answer arrived.
    pub fetched_at: DateTime<Utc>,
    /// Status line, e.g. `HTTP/1.1 304 Not Modified`.
    pub status_line: String,
    /// Response headers as received (no body).
    pub headers: Vec<(String, String)>,
    /// Link depth from the seed.
    pub depth: u32,
    /// Links found in the stored copy and offered to the frontier; `None`
    /// when no stored copy was available.
    pub links_found: Option<usize>,
    /// The conditional request answered 304 (`None` when not fetched by this crawl).
    pub request: Option<SentRequest>,
}

/// Why a URL produced no page.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FailureKind {
    /// Host name did not resolve.
    Dns,
    /// TCP/TLS connection failed.
    Connect,
    /// Connect or request timeout.
    Timeout,
    /// Non-2xx final status (after retries for 5xx).
    HttpStatus(u16),
    /// More than `max_redirects` hops.
    TooManyRedirects,
    /// A redirect chain came back to a URL it had visited.
    RedirectLoop,
    /// Media type not in `allowed_content_types`.
    NotHtml,
    /// Decoded body larger than `max_body_bytes`.
    TooLarge,
    /// robots.txt forbids the URL (or the host's robots.txt is unreachable).
    RobotsDisallowed,
    /// The connection broke while reading the body.
    Body,
    /// Content decoding (gzip/br/deflate) failed.
    Decode,
    /// A sitemap or feed could not be fetched or parsed.
    Discovery,
    /// The URL's address is private, loopback or link-local (SSRF guard).
    Refused,
    /// Anything else (redirect out of scope, bad Location, internal errors).
    Other,
}

impl FailureKind {
    /// Stable label used as the key of [`CrawlSummary::failures`]:
    /// `dns`, `connect`, `timeout`, `http_404`, `too_many_redirects`,
    /// `redirect_loop`, `not_html`, `too_large`, `robots_disallowed`, `body`,
    /// `decode`, `other`.
    pub fn label(&self) -> String {
        match self {
            Self::Dns => "dns".into(),
            Self::Connect => "connect".into(),
            Self::Timeout => "timeout".into(),
            Self::HttpStatus(code) => format!("http_{code}"),
            Self::TooManyRedirects => "too_many_redirects".into(),
            Self::RedirectLoop => "redirect_loop".into(),
            Self::NotHtml => "not_html".into(),
            Self::TooLarge => "too_large".into(),
            Self::RobotsDisallowed => "robots_disallowed".into(),
            Self::Body => "body".into(),
            Self::Decode => "decode".into(),
            Self::Discovery => "discovery".into(),
            Self::Refused => "refused".into(),
            Self::Other => "other".into(),
        }
    }
}

/// One crawl outcome, sent on the event channel.
#[derive(Debug, Clone)]
pub enum CrawlEvent<P> {
    /// A fetched HTML page, with what the crawl's reader made of it.
    Page(Box<FetchedPage<P>>),
    /// The server answered 304 to a conditional GET.
    NotModified(Box<NotModifiedPage>),
    /// A resource a stored page embeds (image, stylesheet, script...).
    Embed(Box<FetchedEmbed>),
    /// The URL produced no page.
    Failure {
        /// The URL taken from the frontier (or the hop that failed).
        url: String,
        /// What went wrong.
        kind: FailureKind,
        /// Human-readable detail.
        message: String,
    },
}

/// Totals of a finished crawl.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CrawlSummary {
    /// Pages sent as [`CrawlEvent::Page`].
    pub pages: u64,
    /// Embedded resources fetched and sent as [`CrawlEvent::Embed`].
    pub embeds: u64,
    /// Redirect and error answers sent as [`CrawlEvent::Embed`] (kind
    /// `Answer`) to be archived.
    pub answers: u64,
    /// Embeds that could not be fetched (or were refused, not allowed by
    /// robots.txt, too large), by reason.
    pub embed_failures: BTreeMap<String, u64>,
    /// Sum of stored (decoded) body bytes of those pages.
    pub bytes: u64,
    /// URLs answered with 304.
    pub not_modified: u64,
    /// Queued URLs an interrupted run had already archived
    /// ([`crate::CrawlConfig::stored_in_run`]): not fetched again, their
    /// stored copies' links queued.
    pub taken_up: u64,
    /// Failures by [`FailureKind::label`].
    pub failures: BTreeMap<String, u64>,
    /// HTTP requests sent, robots.txt and retries included.
    pub requests: u64,
    /// Redirects not followed because their target was already crawled or queued.
    pub duplicate_redirects: u64,
    /// Discovered URLs not queued, by [`crate::guard::Refusal::label`]
    /// (crawler traps, private addresses).
    pub refused: BTreeMap<String, u64>,
    /// Sitemap and feed documents read.
    pub discovery_documents: u64,
    /// URLs listed by sitemaps and feeds (before scope and de-duplication).
    pub discovered_urls: u64,
    /// Pages nested deeper than `page_limits.max_depth`: parsed with the
    /// deeper tags flattened (stored as fetched).
    pub pages_flattened: u64,
    /// Pages whose parse stopped at `page_limits.parse_cpu`: attributes and
    /// links from the part parsed (stored as fetched).
    pub pages_parse_truncated: u64,
    /// Pages with more than `page_limits.max_links` links.
    pub pages_links_capped: u64,
    /// Links not taken from those pages (past the cap).
    pub links_dropped: u64,
    /// Links dropped from pages because their URL was longer than
    /// `page_limits.max_url_length` (URLs refused when queued are in
    /// `refused` as `url_too_long`).
    pub long_links: u64,
    /// True when the crawl ended early (cancelled or the receiver went away).
    pub cancelled: bool,
    /// Wall time of the crawl.
    pub elapsed: Duration,
}

impl CrawlSummary {
    /// Total number of failures.
    pub fn failure_count(&self) -> u64 {
        self.failures.values().sum()
    }
}
