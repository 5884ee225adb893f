//! robots.txt: fetched once per host (scheme, host and port), parsed with
//! texting_robots, cached for the whole crawl.
//!
//! Status handling follows RFC 9309 section 2.3.1: 2xx -> parse the rules;
//! 4xx (404, 403, 401, ...) -> "unavailable", everything allowed;
//! 5xx -> "unreachable", everything disallowed for that host (reported as
//! `RobotsDisallowed`); a network failure (DNS, connect, timeout) also disallows
//! the host but the pages are reported with that network failure kind, which
//! tells the operator more.
//! Redirects are followed up to [`ROBOTS_MAX_REDIRECTS`] hops; the file is read up
//! to [`ROBOTS_MAX_BYTES`] (the RFC's minimum parse limit).

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use texting_robots::Robot;
use tokio::sync::OnceCell;
use url::Url;

use crate::normalize::CRAWLABLE_SCHEMES;

/// Redirect hops followed when fetching robots.txt (RFC 9309: at least five).
pub const ROBOTS_MAX_REDIRECTS: u32 = 5;
/// Bytes of robots.txt read (RFC 9309: at least 500 KiB).
pub const ROBOTS_MAX_BYTES: u64 = 500 * 1024;

/// What was learnt from a host's robots.txt.
pub enum RobotsRules {
    /// No usable file (4xx): everything allowed.
    AllowAll,
    /// Server error (5xx): nothing allowed.
    DisallowAll,
    /// Network failure while fetching robots.txt: nothing allowed.
    Unreachable {
        /// How the robots.txt fetch failed.
        kind: crate::event::FailureKind,
        /// Detail of that failure.
        message: String,
    },
    /// Parsed rules for our agent.
    Parsed(Box<Robot>),
}

impl std::fmt::Debug for RobotsRules {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::AllowAll => f.write_str("AllowAll"),
            Self::DisallowAll => f.write_str("DisallowAll"),
            Self::Unreachable { kind, message } => write!(f, "Unreachable({kind:?}: {message})"),
            Self::Parsed(r) => write!(f, "Parsed(delay={:?})", r.delay),
        }
    }
}

impl RobotsRules {
    /// Builds the rules from a fetched file for `agent`; an unparsable file allows all.
    pub fn from_bytes(agent: &str, body: &[u8]) -> Self {
        match Robot::new(agent, body) {
            Ok(r) => Self::Parsed(Box::new(r)),
            Err(_) => Self::AllowAll,
        }
    }

    /// Whether `url` may be fetched.
    pub fn allowed(&self, url: &Url) -> bool {
        match self {
            Self::AllowAll => true,
            Self::DisallowAll | Self::Unreachable { .. } => false,
            Self::Parsed(r) => r.allowed(url.as_str()),
        }
    }

    /// The `Sitemap:` URLs of the file, resolved against `robots_url` (the URL
    /// the file was fetched from), http(s) only, without duplicates; none when
    /// there is no parsed file. See [`crate::discover::robots_sitemaps`] to read
    /// them from the raw bytes.
    pub fn sitemaps(&self, robots_url: &Url) -> Vec<Url> {
        match self {
            Self::Parsed(r) => {
                resolve_sitemap_lines(r.sitemaps.iter().map(String::as_str), robots_url)
            }
            _ => Vec::new(),
        }
    }

    /// The `Crawl-delay` of the file, if any (negative or NaN values ignored).
    pub fn crawl_delay(&self) -> Option<Duration> {
        match self {
            Self::Parsed(r) => r
                .delay
                .filter(|d| d.is_finite() && *d > 0.0)
                .map(|d| Duration::from_secs_f64(f64::from(d).min(86_400.0))),
            _ => None,
        }
    }
}

/// The robots.txt product token of a user agent: `harvest` for
/// `harvest/0.1 (+https://...)`.
pub fn agent_token(user_agent: &str) -> String {
    user_agent
        .split(|c: char| c == '/' || c.is_whitespace())
        .find(|s| !s.is_empty())
        .unwrap_or("*")
        .to_string()
}

/// The robots.txt URL for the host of `url`.
pub fn robots_url(url: &Url) -> Option<Url> {
    let mut u = url.join("/robots.txt").ok()?;
    u.set_query(None);
    u.set_fragment(None);
    let _ = u.set_username("");
    let _ = u.set_password(None);
    Some(u)
}

/// One entry per host key; the first caller fetches, the others wait.
#[derive(Debug, Default)]
pub struct RobotsCache {
    entries: Mutex<HashMap<String, Arc<OnceCell<Arc<RobotsRules>>>>>,
}

impl RobotsCache {
    /// An empty cache.
    pub fn new() -> Self {
        Self::default()
    }

    /// The rules for `host_key`, running `load` once per host.
    pub async fn get_or_load<F, Fut>(&self, host_key: &str, load: F) -> Arc<RobotsRules>
    where
        F: FnOnce() -> Fut,
        Fut: std::future::Future<Output = RobotsRules>,
    {
        let cell = {
            let mut entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
            entries.entry(host_key.to_string()).or_default().clone()
        };
        cell.get_or_init(|| async { Arc::new(load().await) })
            .await
            .clone()
    }

    /// Number of hosts whose robots.txt is known.
    pub fn len(&self) -> usize {
        self.entries.lock().map(|e| e.len()).unwrap_or(0)
    }

    /// True when no host is cached.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Resolves the values of `Sitemap:` lines against `robots_url`, keeping
/// http(s) URLs only, without duplicates, in their order.
pub fn resolve_sitemap_lines<'a, I>(lines: I, robots_url: &Url) -> Vec<Url>
where
    I: IntoIterator<Item = &'a str>,
{
    let mut seen = HashSet::new();
    lines
        .into_iter()
        .filter_map(|line| robots_url.join(line.trim()).ok())
        .filter(|u| CRAWLABLE_SCHEMES.contains(&u.scheme()))
        .filter(|u| seen.insert(u.as_str().to_string()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agent_token_is_the_product_name() {
        assert_eq!(
            agent_token("harvest/0.1 (+https://example.invalid/harvest)"),
            "harvest"
        );
        assert_eq!(agent_token(""), "*");
    }

    #[test]
    fn rules_and_crawl_delay() {
        let r = RobotsRules::from_bytes(
            "harvest",
            b"User-agent: *\nDisallow: /private/\nCrawl-delay: 3\n\nUser-agent: other\nDisallow: /\n",
        );
        let ok = Url::parse("http://example.com/public/a.html").ok();
        let no = Url::parse("http://example.com/private/a.html").ok();
        assert_eq!(ok.as_ref().map(|u| r.allowed(u)), Some(true));
        assert_eq!(no.as_ref().map(|u| r.allowed(u)), Some(false));
        assert_eq!(r.crawl_delay(), Some(Duration::from_secs(3)));
        let any = Url::parse("http://example.com/").ok();
        assert_eq!(
            any.as_ref().map(|u| RobotsRules::DisallowAll.allowed(u)),
            Some(false)
        );
        assert_eq!(
            any.as_ref().map(|u| RobotsRules::AllowAll.allowed(u)),
            Some(true)
        );
    }

    #[test]
    fn robots_url_drops_path_and_query() {
        let u = Url::parse("http://user:pw@example.com:8080/a/b?q=1#f").ok();
        let r = u.as_ref().and_then(robots_url).map(|u| u.to_string());
        assert_eq!(r.as_deref(), Some("http://example.com:8080/robots.txt"));
    }

    #[tokio::test]
    async fn cache_loads_once_per_host() {
        let cache = RobotsCache::new();
        let calls = std::sync::atomic::AtomicU32::new(0);
        for _ in 0..3 {
            cache
                .get_or_load("http://a", || async {
                    calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    RobotsRules::AllowAll
                })
                .await;
        }
        assert_eq!(calls.load(std::sync::atomic::Ordering::SeqCst), 1);
        assert_eq!(cache.len(), 1);
    }
}
