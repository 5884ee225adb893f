//! The crawl settings: `[crawl]` as written and validated, and each `[[job]]`'s
//! own, which are `[crawl]`'s with the job's keys laid over them (one struct,
//! [`RawCrawl`], for both tables).

use std::time::Duration;

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};

/// Default whole-request timeout of the crawler, seconds (`[crawl] timeout_secs`).
pub const DEFAULT_TIMEOUT_SECS: u64 = 30;
/// Default body cap: 10 MiB of decoded body.
pub const DEFAULT_MAX_BODY_BYTES: u64 = 10 << 20;

#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct RawCrawl {
    /// Start URLs. Default none (give them with `--seed`).
    pub seeds: Vec<String>,
    /// `same-host` (default), `same-domain`, or `any`.
    pub scope: Option<String>,
    /// URL prefixes that are in scope in addition to `scope`.
    pub allow_prefixes: Vec<String>,
    /// Links followed from a seed. Default unlimited.
    pub max_depth: Option<u32>,
    /// Pages fetched per crawl. Default unlimited.
    pub max_pages: Option<u64>,
    /// Delay between two requests to one host, milliseconds. Default 1000.
    pub politeness_delay_ms: Option<u64>,
    /// Requests in flight over all hosts. Default 8.
    pub concurrency: Option<usize>,
    /// User-Agent header and robots.txt agent. Default `harvest/<version>`.
    pub user_agent: Option<String>,
    /// Whole-request timeout, seconds, at least 1. Default 30.
    pub timeout_secs: Option<u64>,
    /// Largest decoded body kept, bytes. Default 10 MiB.
    pub max_body_bytes: Option<u64>,
    /// Redirect hops followed. Default 10.
    pub max_redirects: Option<usize>,
    /// Obey robots.txt. Default true.
    pub respect_robots: Option<bool>,
    /// Retries after connect errors and 5xx. Default 2.
    pub retries: Option<u32>,
    /// Allow private, loopback and link-local addresses (the SSRF guard
    /// refuses them by default; a crawl of a loopback test site sets it).
    /// Default false.
    pub allow_private: Option<bool>,
    /// Zone of publish times that pages state without an offset: an IANA
    /// name (`Asia/Shanghai`). Default: by site (`.cn`/`.hk`/`.tw` hosts
    /// Asia/Shanghai, another single-zone country's own domain its zone:
    /// `.jp` Asia/Tokyo, `.de` Europe/Berlin, `.fr` Europe/Paris, ...), else
    /// by the region of the page's locale (`lang="en-SG"`), else by language
    /// (Chinese Asia/Shanghai, Japanese Asia/Tokyo, German Europe/Berlin,
    /// Russian Europe/Moscow, ...; not English or Spanish), else UTC. An
    /// offset stated by the page always wins.
    pub publish_time_zone: Option<String>,
    /// Deepest element nesting parsed per page: deeper tags are left out of
    /// the DOM the attributes come from (the page is stored as fetched).
    /// Default 256.
    pub max_html_depth: Option<usize>,
    /// Thread CPU time one page's parse may use, milliseconds; past it the
    /// attributes come from the part parsed. Default 1000.
    pub parse_cpu_ms: Option<u64>,
    /// Most distinct links taken from one page. Default 50000.
    pub max_links_per_page: Option<usize>,
    /// Longest URL taken from a page or queued, bytes. Default 2048.
    pub max_url_length: Option<usize>,
    /// Archive the images each page embeds (`<img>`, lazy `data-src`,
    /// video posters) as response records beside the page, with their
    /// perceptual hashes for `harvest dedup`'s image groups. Default false.
    pub images: Option<bool>,
    /// Archive every requisite a page embeds (images, stylesheets and the
    /// fonts and images they reference, scripts, icons, media), so that a
    /// replay shows the page as it was. Default false.
    pub requisites: Option<bool>,
    /// Most embeds fetched per page. Default 100.
    pub max_embeds_per_page: Option<usize>,
}

/// Crawl scope, validated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScopeKind {
    SameHost,
    SameDomain,
    Any,
}

#[derive(Debug, Clone)]
pub struct CrawlSettings {
    pub seeds: Vec<String>,
    pub scope: ScopeKind,
    pub allow_prefixes: Vec<String>,
    pub max_depth: Option<u32>,
    pub max_pages: Option<u64>,
    pub politeness_delay: Duration,
    pub concurrency: usize,
    pub user_agent: String,
    pub timeout: Duration,
    pub max_body_bytes: u64,
    pub max_redirects: usize,
    pub respect_robots: bool,
    pub retries: u32,
    /// Private, loopback and link-local addresses allowed.
    pub allow_private: bool,
    /// Sitemaps read at the start of a run (jobs set them).
    pub sitemaps: Vec<String>,
    /// RSS / Atom feeds read at the start of a run (jobs set them).
    pub feeds: Vec<String>,
    /// Read the sitemaps named by the seed hosts' robots.txt.
    pub robots_sitemaps: bool,
    /// Zone of publish times without an offset (`None`: by site).
    pub publish_time_zone: Option<chrono_tz::Tz>,
    /// Budgets of one page's parse and links.
    pub page_limits: extract::Limits,
    /// Which embedded resources are archived with the pages.
    pub embeds: crawler::EmbedPolicy,
}

/// A zone for publish times without an offset: an IANA name.
pub fn parse_publish_zone(name: &str) -> Result<chrono_tz::Tz> {
    name.trim()
        .parse::<chrono_tz::Tz>()
        .map_err(|_| anyhow::anyhow!("{name:?}: expected an IANA zone name such as Asia/Shanghai"))
}

/// A crawl scope by name.
pub fn parse_scope(name: &str) -> Result<ScopeKind> {
    Ok(match name {
        "same-host" => ScopeKind::SameHost,
        "same-domain" => ScopeKind::SameDomain,
        "any" => ScopeKind::Any,
        other => bail!("{other:?}: expected \"same-host\", \"same-domain\" or \"any\""),
    })
}

/// The lower-cased host of an absolute URL.
pub fn host_of(url: &str) -> Option<String> {
    let rest = url.split_once("://")?.1;
    let authority = rest.split(['/', '?', '#']).next()?;
    let authority = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let host = if authority.starts_with('[') {
        authority.split_once(']').map(|(h, _)| &h[1..])?
    } else {
        authority.split(':').next()?
    };
    Some(host.to_ascii_lowercase())
}

/// An http(s) URL with a host.
pub fn check_http_url(url: &str) -> Result<()> {
    let lower = url.to_ascii_lowercase();
    if !(lower.starts_with("http://") || lower.starts_with("https://")) {
        bail!("not an http(s) URL");
    }
    if host_of(url).is_none_or(|h| h.is_empty()) {
        bail!("URL has no host");
    }
    Ok(())
}

impl RawCrawl {
    /// These settings with every key `over` sets laid over them (a list
    /// counts as set when it is not empty).
    pub fn overlaid(&self, over: &RawCrawl) -> Result<RawCrawl> {
        let mut merged = toml::Table::try_from(self).context("crawl settings")?;
        for (key, value) in toml::Table::try_from(over).context("crawl settings")? {
            if value.as_array().is_some_and(|a| a.is_empty()) {
                continue;
            }
            merged.insert(key, value);
        }
        Ok(merged.try_into()?)
    }

    /// The names of the settings (`seeds`, `scope`, ...).
    pub fn keys() -> &'static [&'static str] {
        serde_aux::serde_introspection::serde_introspect::<RawCrawl>()
    }

    /// The settings validated, defaults filled in; errors start with
    /// `section` (`[crawl]`, `[[job]] "news":`).
    pub fn settings(&self, section: &str) -> Result<CrawlSettings> {
        let c = self;
        let scope = parse_scope(c.scope.as_deref().unwrap_or("same-host"))
            .with_context(|| format!("{section} scope"))?;
        for seed in &c.seeds {
            check_http_url(seed).with_context(|| format!("{section} seeds: {seed:?}"))?;
        }
        let concurrency = c.concurrency.unwrap_or(8);
        if concurrency == 0 {
            bail!("{section} concurrency must be at least 1");
        }
        let defaults = extract::Limits::default();
        let page_limits = extract::Limits {
            max_depth: c.max_html_depth.unwrap_or(defaults.max_depth),
            max_links: c.max_links_per_page.unwrap_or(defaults.max_links),
            max_url_length: c.max_url_length.unwrap_or(defaults.max_url_length),
            parse_cpu: c
                .parse_cpu_ms
                .map_or(defaults.parse_cpu, Duration::from_millis),
        };
        for (key, value) in [
            ("max_html_depth", page_limits.max_depth as u64),
            ("max_links_per_page", page_limits.max_links as u64),
            ("max_url_length", page_limits.max_url_length as u64),
            ("parse_cpu_ms", page_limits.parse_cpu.as_millis() as u64),
        ] {
            if value == 0 {
                bail!("{section} {key} must be at least 1");
            }
        }
        let timeout_secs = c.timeout_secs.unwrap_or(DEFAULT_TIMEOUT_SECS);
        if timeout_secs == 0 {
            bail!("{section} timeout_secs = 0: must be at least 1 (a request with no time to run fails at once)");
        }
        Ok(CrawlSettings {
            page_limits,
            seeds: c.seeds.clone(),
            scope,
            allow_prefixes: c.allow_prefixes.clone(),
            max_depth: c.max_depth,
            max_pages: c.max_pages,
            politeness_delay: Duration::from_millis(c.politeness_delay_ms.unwrap_or(1000)),
            concurrency,
            user_agent: c
                .user_agent
                .clone()
                .unwrap_or_else(|| format!("harvest/{}", env!("CARGO_PKG_VERSION"))),
            timeout: Duration::from_secs(timeout_secs),
            max_body_bytes: c.max_body_bytes.unwrap_or(DEFAULT_MAX_BODY_BYTES),
            max_redirects: c.max_redirects.unwrap_or(10),
            respect_robots: c.respect_robots.unwrap_or(true),
            retries: c.retries.unwrap_or(2),
            allow_private: c.allow_private.unwrap_or(false),
            sitemaps: Vec::new(),
            feeds: Vec::new(),
            robots_sitemaps: false,
            embeds: crawler::EmbedPolicy {
                images: c.images.unwrap_or(false),
                requisites: c.requisites.unwrap_or(false),
                max_per_page: c
                    .max_embeds_per_page
                    .unwrap_or(crawler::EmbedPolicy::default().max_per_page),
                max_bytes: c.max_body_bytes.unwrap_or(DEFAULT_MAX_BODY_BYTES),
            },
            publish_time_zone: c
                .publish_time_zone
                .as_deref()
                .map(|z| {
                    parse_publish_zone(z).with_context(|| format!("{section} publish_time_zone"))
                })
                .transpose()?,
        })
    }
}
