//! Crawl configuration (plain data; the binary maps its TOML onto it).

use std::time::Duration;

use url::Url;

use crate::error::{Error, Result};

/// Default `User-Agent` header.
pub const DEFAULT_USER_AGENT: &str = "harvest/0.1 (+https://example.invalid/harvest)";
/// Default delay between two requests to the same host.
pub const DEFAULT_POLITENESS_DELAY: Duration = Duration::from_secs(1);
/// Default number of requests in flight over all hosts.
pub const DEFAULT_CONCURRENCY: usize = 8;
/// Default whole-request timeout (headers and body).
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// Default TCP/TLS connect timeout.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// Default cap on the decoded (decompressed) body size: 10 MiB.
pub const DEFAULT_MAX_BODY_BYTES: u64 = 10 * 1024 * 1024;
/// Default number of redirect hops followed.
pub const DEFAULT_MAX_REDIRECTS: u32 = 10;
/// Default number of retries after a connect error, timeout or 5xx.
pub const DEFAULT_RETRIES: u32 = 2;
/// Default first retry backoff (doubled for each further retry).
pub const DEFAULT_RETRY_BACKOFF: Duration = Duration::from_millis(500);
/// Default upper bound applied to a robots.txt `Crawl-delay`.
pub const DEFAULT_MAX_CRAWL_DELAY: Duration = Duration::from_secs(60);
/// Default longest `Retry-After` waited out before a retry.
pub const DEFAULT_MAX_RETRY_AFTER: Duration = Duration::from_secs(120);
/// Default number of sitemap and feed documents read per crawl.
pub const DEFAULT_MAX_DISCOVERY_DOCUMENTS: usize = 1_000;
/// Default accepted media types.
pub const DEFAULT_CONTENT_TYPES: [&str; 2] = ["text/html", "application/xhtml+xml"];

/// Which discovered links the crawl may follow.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Scope {
    /// Only URLs on the exact host (and port) of one of the seeds.
    #[default]
    SameHost,
    /// URLs on the registrable domain of a seed and its subdomains
    /// (`news.example.com` for seed `www.example.com`). The registrable domain is
    /// approximated as the last two labels, or three when the second-level label
    /// is a generic one such as `com`/`co`/`org` under a two-letter TLD
    /// (`sina.com.cn`, `bbc.co.uk`).
    SameDomain,
    /// URLs whose normalised form starts with one of these prefixes.
    Prefixes(Vec<String>),
    /// Any http/https URL.
    Any,
}

/// Everything the crawler needs to run. Build it with `CrawlConfig::default()`
/// and override fields.
#[derive(Debug, Clone)]
pub struct CrawlConfig {
    /// Start URLs (depth 0). They are always fetched, whatever the scope.
    pub seeds: Vec<Url>,
    /// Which links to follow. Default [`Scope::SameHost`].
    pub scope: Scope,
    /// Maximum link depth from a seed (seeds are depth 0). Default unlimited.
    pub max_depth: Option<u32>,
    /// Maximum number of URLs fetched (robots.txt requests and retries not
    /// counted). Default unlimited.
    pub max_pages: Option<u64>,
    /// Minimum delay between two requests to the same host. Default 1 s; zero
    /// disables per-host serialisation.
    pub politeness_delay: Duration,
    /// Requests in flight over all hosts. Default 8. When the effective delay of a
    /// host is non-zero, that host gets one request at a time.
    pub concurrency: usize,
    /// `User-Agent` header, also the agent name matched in robots.txt.
    /// Default [`DEFAULT_USER_AGENT`].
    pub user_agent: String,
    /// Whole-request timeout. Default 30 s.
    pub request_timeout: Duration,
    /// Connect timeout. Default 10 s.
    pub connect_timeout: Duration,
    /// Cap on the decoded body size; larger bodies fail with `TooLarge`.
    /// Default 10 MiB. Applied after decompression, so compression bombs stop here.
    pub max_body_bytes: u64,
    /// Redirect hops followed before `TooManyRedirects`. Default 10.
    pub max_redirects: u32,
    /// Fetch and obey robots.txt. Default true.
    pub respect_robots: bool,
    /// Retries after a connect error, timeout or 5xx status. Default 2.
    pub retries: u32,
    /// First retry backoff, doubled on each further retry. Default 500 ms.
    pub retry_backoff: Duration,
    /// Upper bound for a robots.txt `Crawl-delay`. Default 60 s.
    pub max_crawl_delay: Duration,
    /// Accepted media types (compared without parameters, case-insensitive).
    /// Default `text/html`, `application/xhtml+xml`.
    pub allowed_content_types: Vec<String>,
    /// XML sitemaps (or sitemap indexes, gzipped or not) read at the start of
    /// the crawl; their in-scope URLs are queued at depth 1. Default none.
    pub sitemaps: Vec<Url>,
    /// RSS / Atom feeds read at the start of the crawl; their entries are
    /// queued at depth 1, their publish times kept as hints. Default none.
    pub feeds: Vec<Url>,
    /// Also read the sitemaps named by the seed hosts' robots.txt
    /// (`Sitemap:` lines). Default false.
    pub robots_sitemaps: bool,
    /// Sitemap and feed documents read per crawl (sitemap indexes included).
    /// Default 1,000.
    pub max_discovery_documents: usize,
    /// Limits of one sitemap or feed document (bytes after decompression,
    /// URLs). Default 50 MiB, 50,000 URLs.
    pub discovery_limits: crate::discover::Limits,
    /// Crawler-trap limits on queued URLs. Default [`crate::guard::TrapLimits::default`].
    pub traps: crate::guard::TrapLimits,
    /// Allow private, loopback and link-local addresses (SSRF guard off).
    /// Default false: such URLs are refused, and names resolving only to such
    /// addresses fail to connect.
    pub allow_private: bool,
    /// Longest `Retry-After` (429/503) waited out before a retry; a host that
    /// asks for more is backed off for that long instead. Default 120 s.
    pub max_retry_after: Duration,
    /// Zone of publish times that pages state without an offset. Default
    /// `None`: by site (`.cn` hosts and Chinese pages Asia/Shanghai, see
    /// [`extract::page_zone (the extraction crate)`]), else UTC.
    pub time_zone: Option<chrono_tz::Tz>,
    /// Zones by host (lower case) that win over [`CrawlConfig::time_zone`]
    /// (the binary's per-source zones). Default empty.
    pub host_time_zones: Vec<(String, chrono_tz::Tz)>,
    /// Budgets of one page's extraction: nesting depth, parse CPU, links,
    /// URL length. Default [`shapes::page::Limits::default`] (256 levels,
    /// 1 s, 50,000 links, 2,048 bytes).
    pub page_limits: shapes::page::Limits,
    /// Which embedded resources of a page are fetched and reported
    /// ([`crate::CrawlEvent::Embed`]). Default none.
    pub embeds: EmbedPolicy,
    /// URLs an interrupted run already archived, for the run that takes it
    /// up: a queued URL found here is not fetched again; the links of the
    /// stored copy of the URL it maps to (itself, or a redirect's target)
    /// are queued instead, as for a 304. Default empty.
    pub stored_in_run: std::sync::Arc<std::collections::HashMap<String, String>>,
}

/// Which resources a page embeds are fetched with it (each URL once a
/// crawl, any host, under robots, the SSRF guard and host politeness).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EmbedPolicy {
    /// Images (`<img>`, lazy-loading `data-src`, `<video poster>`).
    pub images: bool,
    /// Every page requisite: images, stylesheets and what they reference
    /// (`url(...)`: fonts, backgrounds), scripts, icons, audio and video.
    pub requisites: bool,
    /// At most this many embeds fetched per page. Default 100.
    pub max_per_page: usize,
    /// Largest embed body (bytes, decoded). Default 10 MiB.
    pub max_bytes: u64,
}

impl Default for EmbedPolicy {
    fn default() -> Self {
        EmbedPolicy {
            images: false,
            requisites: false,
            max_per_page: 100,
            max_bytes: 10 * 1024 * 1024,
        }
    }
}

impl EmbedPolicy {
    /// Whether embeds of `kind` are fetched.
    pub fn wants(&self, kind: shapes::page::EmbedKind) -> bool {
        self.requisites || (self.images && kind == shapes::page::EmbedKind::Image)
    }

    /// Whether anything is fetched at all.
    pub fn any(&self) -> bool {
        self.images || self.requisites
    }
}

impl Default for CrawlConfig {
    fn default() -> Self {
        Self {
            seeds: Vec::new(),
            scope: Scope::default(),
            max_depth: None,
            max_pages: None,
            politeness_delay: DEFAULT_POLITENESS_DELAY,
            concurrency: DEFAULT_CONCURRENCY,
            user_agent: DEFAULT_USER_AGENT.to_string(),
            request_timeout: DEFAULT_REQUEST_TIMEOUT,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            max_redirects: DEFAULT_MAX_REDIRECTS,
            respect_robots: true,
            retries: DEFAULT_RETRIES,
            retry_backoff: DEFAULT_RETRY_BACKOFF,
            max_crawl_delay: DEFAULT_MAX_CRAWL_DELAY,
            allowed_content_types: DEFAULT_CONTENT_TYPES
                .iter()
                .map(|s| s.to_string())
                .collect(),
            sitemaps: Vec::new(),
            feeds: Vec::new(),
            robots_sitemaps: false,
            max_discovery_documents: DEFAULT_MAX_DISCOVERY_DOCUMENTS,
            discovery_limits: crate::discover::Limits::default(),
            traps: crate::guard::TrapLimits::default(),
            allow_private: false,
            max_retry_after: DEFAULT_MAX_RETRY_AFTER,
            time_zone: None,
            host_time_zones: Vec::new(),
            page_limits: shapes::page::Limits::default(),
            embeds: EmbedPolicy::default(),
            stored_in_run: Default::default(),
        }
    }
}

impl CrawlConfig {
    /// Parses seed strings into URLs (helper for callers holding text).
    pub fn parse_seeds<S: AsRef<str>>(seeds: &[S]) -> Result<Vec<Url>> {
        seeds
            .iter()
            .map(|s| {
                Url::parse(s.as_ref()).map_err(|source| Error::Url {
                    url: s.as_ref().to_string(),
                    source,
                })
            })
            .collect()
    }

    /// Checks the configuration; [`crate::crawl`] calls this first.
    pub fn validate(&self) -> Result<()> {
        if self.seeds.is_empty() {
            return Err(Error::Config("no seed URLs".into()));
        }
        if let Some(bad) = self.seeds.iter().find(|u| {
            !crate::normalize::CRAWLABLE_SCHEMES.contains(&u.scheme()) || u.host_str().is_none()
        }) {
            return Err(Error::Config(format!(
                "seed {bad} is not an http(s) URL with a host"
            )));
        }
        if !self.allow_private {
            if let Some(bad) = self.seeds.iter().find(|u| !crate::guard::host_is_public(u)) {
                return Err(Error::Config(format!(
                    "seed {bad} is a private, loopback or link-local address: refused unless allow_private is set"
                )));
            }
        }
        if self.concurrency == 0 {
            return Err(Error::Config("concurrency must be at least 1".into()));
        }
        if self.max_body_bytes == 0 {
            return Err(Error::Config("max_body_bytes must be at least 1".into()));
        }
        if self.allowed_content_types.is_empty() {
            return Err(Error::Config("allowed_content_types is empty".into()));
        }
        if self.user_agent.trim().is_empty() {
            return Err(Error::Config("user_agent is empty".into()));
        }
        let l = &self.page_limits;
        if l.max_depth == 0 || l.max_links == 0 || l.max_url_length == 0 || l.parse_cpu.is_zero() {
            return Err(Error::Config(
                "page limits (max_depth, max_links, max_url_length, parse_cpu) must be above zero"
                    .into(),
            ));
        }
        if let Scope::Prefixes(p) = &self.scope {
            if p.is_empty() {
                return Err(Error::Config("scope prefixes list is empty".into()));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_match_documentation() {
        let c = CrawlConfig::default();
        assert_eq!(c.politeness_delay, Duration::from_secs(1));
        assert_eq!(c.concurrency, 8);
        assert_eq!(c.max_body_bytes, 10 * 1024 * 1024);
        assert_eq!(c.max_redirects, 10);
        assert_eq!(c.retries, 2);
        assert!(c.respect_robots);
        assert_eq!(c.scope, Scope::SameHost);
        assert_eq!(
            c.allowed_content_types,
            vec!["text/html", "application/xhtml+xml"]
        );
    }

    #[test]
    fn validate_rejects_empty_seeds_and_zero_concurrency() {
        let c = CrawlConfig::default();
        assert!(matches!(c.validate(), Err(Error::Config(_))));
        let mut c = CrawlConfig {
            seeds: CrawlConfig::parse_seeds(&["http://example.com/"]).unwrap_or_default(),
            ..CrawlConfig::default()
        };
        assert!(c.validate().is_ok());
        let private = CrawlConfig {
            seeds: CrawlConfig::parse_seeds(&["http://127.0.0.1:8080/"]).unwrap_or_default(),
            ..CrawlConfig::default()
        };
        assert!(matches!(private.validate(), Err(Error::Config(m)) if m.contains("allow_private")));
        assert!(CrawlConfig {
            allow_private: true,
            ..private
        }
        .validate()
        .is_ok());
        assert!(c.validate().is_ok());
        c.concurrency = 0;
        assert!(matches!(c.validate(), Err(Error::Config(_))));
    }

    #[test]
    fn parse_seeds_reports_the_bad_url() {
        let err = CrawlConfig::parse_seeds(&["http://ok.example/", "not a url"]);
        assert!(matches!(err, Err(Error::Url { ref url, .. }) if url == "not a url"));
    }
}
