//! The `harvest` binary's glue, as a library so that the end-to-end tests can
//! drive the same code: command line, configuration, pipeline wiring and
//! demo. The stage crates know nothing of each other; this does. The
//! benchmarks are the `harvest-bench` crate (`bench/`), which uses this one.

pub mod cdxj;
pub mod cli;
pub mod commands;
pub mod compact;
pub mod config;
mod crash;
pub mod dedup;
pub mod demo;
pub mod filters;
pub mod fsck;
pub mod import;
pub mod ingest;
pub mod job_metrics;
pub mod jobs;
pub mod logline;
pub mod newssite;
pub mod outfile;
pub mod plot;
pub mod read;
pub mod reextract;
pub mod remote;
pub mod replay;
pub mod serve;
pub mod site;
pub mod snippet;
pub mod stores;
pub mod summary;
pub mod surt;
pub mod threads;

use std::path::Path;

use anyhow::{Context, Result};

use crate::cli::LogFormat;
use crate::config::Config;

/// Log lines on stderr: `warn`, or `info`/`debug` with `-v`/`-vv`; the
/// `HARVEST_LOG` filter overrides (`harvest` and `harvest-bench`).
pub fn init_tracing(verbose: u8, format: LogFormat) {
    // The lines written outside tracing follow the same format.
    logline::set_format(format);
    let default = match verbose {
        0 => "warn",
        1 => "info",
        _ => "debug",
    };
    // html5ever logs its own tree builder's limits ("foster parenting not implemented", a
    // warning a misnested table on a real page) and, at debug, every token: noise to an
    // operator. HARVEST_LOG can still ask for them.
    let filter = tracing_subscriber::EnvFilter::try_from_env("HARVEST_LOG").unwrap_or_else(|_| {
        tracing_subscriber::EnvFilter::new(format!("{default},html5ever=error"))
    });
    // Colour only on a terminal: a log file or journald gets plain text.
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(ansi);
    let _ = match format {
        LogFormat::Text => builder.try_init(),
        LogFormat::Json => builder.json().try_init(),
    };
}

/// A multi-threaded tokio runtime for the crawler and servers.
pub fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")
}

/// Load the topic model, or warn and go on without one (pages are then filed
/// under `unclassified`): archiving never waits for a classifier.
pub fn load_model_or_warn(path: &Path) -> Result<Option<classifier::Model>> {
    if !path.exists() {
        logline::say(&format!(
            "harvest: warning: no topic model at {}; pages are filed under `{}`. \
             Train one with `harvest model train --corpus SPEC --out {}`.",
            path.display(),
            ingest::UNCLASSIFIED,
            path.display()
        ));
        return Ok(None);
    }
    let model = classifier::Model::load(path)
        .with_context(|| format!("cannot load the topic model {}", path.display()))?;
    Ok(Some(model))
}

/// The crawler's configuration from ours.
pub fn crawl_config(cfg: &Config) -> Result<crawler::CrawlConfig> {
    let c = &cfg.crawl;
    let mut seeds = Vec::with_capacity(c.seeds.len());
    for s in &c.seeds {
        seeds.push(url::Url::parse(s).with_context(|| format!("bad seed URL {s:?}"))?);
    }
    let scope = if !c.allow_prefixes.is_empty() {
        let mut prefixes = c.allow_prefixes.clone();
        prefixes.extend(seeds.iter().map(|s| s.origin().ascii_serialization()));
        crawler::Scope::Prefixes(prefixes)
    } else {
        match c.scope {
            config::ScopeKind::SameHost => crawler::Scope::SameHost,
            config::ScopeKind::SameDomain => crawler::Scope::SameDomain,
            config::ScopeKind::Any => crawler::Scope::Any,
        }
    };
    let urls = |list: &[String], what: &str| -> Result<Vec<url::Url>> {
        list.iter()
            .map(|s| url::Url::parse(s).with_context(|| format!("bad {what} URL {s:?}")))
            .collect()
    };
    Ok(crawler::CrawlConfig {
        sitemaps: urls(&c.sitemaps, "sitemap")?,
        feeds: urls(&c.feeds, "feed")?,
        robots_sitemaps: c.robots_sitemaps,
        allow_private: c.allow_private,
        seeds,
        scope,
        max_depth: c.max_depth,
        max_pages: c.max_pages,
        politeness_delay: c.politeness_delay,
        concurrency: c.concurrency,
        user_agent: c.user_agent.clone(),
        request_timeout: c.timeout,
        max_body_bytes: c.max_body_bytes,
        max_redirects: u32::try_from(c.max_redirects).unwrap_or(u32::MAX),
        respect_robots: c.respect_robots,
        retries: c.retries,
        time_zone: c.publish_time_zone,
        host_time_zones: source_zones(&cfg.sources),
        page_limits: c.page_limits,
        embeds: c.embeds,
        traps: crawler::guard::TrapLimits {
            max_url_length: c.page_limits.max_url_length,
            ..crawler::guard::TrapLimits::default()
        },
        ..crawler::CrawlConfig::default()
    })
}

/// Per-host publish-time zones of the sources that set one (hosts, and the
/// hosts of prefixes).
fn source_zones(sources: &[config::Source]) -> Vec<(String, chrono_tz::Tz)> {
    let mut out = Vec::new();
    for s in sources {
        let Some(z) = s.publish_time_zone else {
            continue;
        };
        out.extend(s.hosts.iter().map(|h| (h.to_ascii_lowercase(), z)));
        out.extend(
            s.prefixes
                .iter()
                .filter_map(|p| {
                    url::Url::parse(p)
                        .ok()?
                        .host_str()
                        .map(str::to_ascii_lowercase)
                })
                .map(|h| (h, z)),
        );
    }
    out
}
