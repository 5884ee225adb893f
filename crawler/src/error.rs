//! Errors of the crawler crate.
//!
//! Only problems that stop a crawl from starting (bad configuration, a client that
//! cannot be built) are errors. Everything that goes wrong with a single URL is
//! reported as a [`crate::CrawlEvent::Failure`] and counted in the summary.

/// Errors returned by [`crate::crawl`] and the configuration checks.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The configuration is not usable (no seeds, zero concurrency, ...).
    #[error("invalid crawl configuration: {0}")]
    Config(String),
    /// The HTTP client could not be built (TLS backend, invalid user agent, ...).
    #[error("cannot build the HTTP client: {0}")]
    Client(#[from] reqwest::Error),
    /// The crawl queue's store failed; the crawl stopped so no URL is lost.
    #[error(transparent)]
    Queue(#[from] crate::queue::QueueError),
    /// A URL given in the configuration cannot be parsed.
    #[error("invalid URL {url:?}: {source}")]
    Url {
        /// The text that failed to parse.
        url: String,
        /// Why it failed.
        source: url::ParseError,
    },
}

/// Why a sitemap, feed or robots.txt could not be read by [`crate::discover`].
///
/// These are per-document problems: the crawl goes on, the caller logs or
/// counts the document as failed. Entries that are merely bad (an unparsable
/// `<loc>`, an absurd date) are not errors; they are skipped and counted in
/// [`crate::discover::ParseReport`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DiscoverError {
    /// The document, or its gzip-decompressed content, is larger than the limit.
    /// Decompression stops at the limit, so a gzip bomb costs at most
    /// `limit` bytes of memory.
    #[error(
        "document larger than the {limit}-byte limit{}",
        if *.decompressed { " after gzip decompression" } else { "" }
    )]
    TooLarge {
        /// The limit that was hit ([`crate::discover::Limits::max_bytes`]).
        limit: u64,
        /// True when the limit was hit while decompressing gzip data.
        decompressed: bool,
    },
    /// The document starts with the gzip magic bytes but does not decompress.
    #[error("corrupt gzip data: {0}")]
    Gzip(String),
    /// The document is not in UTF-8 nor in the encoding its XML declaration names.
    #[error("cannot decode the document: {0}")]
    Encoding(String),
    /// The XML is not well-formed.
    #[error("malformed XML at line {line}, column {column}: {message}")]
    Xml {
        /// 1-based line of the error (in the decompressed, UTF-8 text).
        line: u64,
        /// 1-based column of the error, in bytes.
        column: u64,
        /// What the XML parser found wrong.
        message: String,
    },
    /// An RSS, Atom or JSON feed that the feed parser rejected.
    #[error("malformed feed: {0}")]
    Feed(String),
    /// The document has no root element (empty, whitespace, or only a prolog).
    #[error("empty document: no root element")]
    Empty,
    /// The root element is neither a sitemap (`urlset`, `sitemapindex`) nor a feed
    /// (`rss`, `feed`, `RDF`); an HTML page served as a sitemap lands here.
    #[error("not a sitemap or feed: root element is <{root}>")]
    UnknownFormat {
        /// The local name of the root element.
        root: String,
    },
    /// robots.txt could not be parsed (texting_robots rejected one of its rules).
    #[error("cannot parse robots.txt: {0}")]
    Robots(String),
}

/// Result alias of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;
