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

/// Result alias of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;
