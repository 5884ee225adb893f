//! `harvest bench api`: latency of the HTTP query API at a million pages,
//! beside a full scan answering the same question in the same run, and
//! requests/s under `wrk` from loopback.
//!
//! # Bulk loader
//!
//! The index is built from crawled pages, not from synthetic records:
//!
//! 1. The real news corpus (`NewsArticles.csv`, 3,824 articles of 9 outlets,
//!    see [`harvest::newssite`]) is served as a site on loopback.
//! 2. A topic model is trained on its ABC News / TASS sections
//!    ([`harvest::newssite::section_training_docs`]) and saved as
//!    `<dir>/topic.model`.
//! 3. The site is crawled once with the real pipeline
//!    ([`harvest::ingest::run_crawl`]: fetch, extraction, classification,
//!    dedup, WARC packs) into `<dir>/seed` (packs in `<dir>/seed/packs`).
//! 4. Every page record is read back from the seed index (a full scan), and
//!    the article pages (those with a publish time, filed under one of the
//!    outlet sources) are replicated to N pages (default 1,000,000; env
//!    `HARVEST_BENCH_PAGES`): page `i` is copy `i / articles` of article
//!    `i % articles`, with URL `…?copy=c`, a publish day drawn from a seeded
//!    RNG across 2017-2018 (time of day kept, fetch time shifted alike), the
//!    outlet's source, and comment and participant counts drawn from the RNG
//!    (none for about 1 page in 8). Title, topic, keywords, media, digest,
//!    SimHash and the pack location are the crawled page's, so
//!    `/api/pages/{id}/raw` of any copy returns the crawled bytes.
//! 5. Rows come from [`indexer::Index::rows_for_new_pages`] in batches of
//!    [`BATCH_PAGES`] (two threads) and are written with
//!    [`indexer::EmbeddedStore::ingest`] into `<dir>/index`; the store is
//!    compacted at the end. Each page's words go to the text index
//!    (`<dir>/index/text`, as a crawl writes them): the crawled article's
//!    headline and text, extracted once from the seed packs, under the copy's
//!    source, time and URL; `<dir>/text-load.json` keeps the time it took. `<dir>/loaded.json` records what was loaded: a
//!    later run with the same N reuses the folder, any other N wipes it.
//!
//! # Measurement
//!
//! The real router ([`harvest::serve::router`]) serves the loaded index and the
//! seed packs on `127.0.0.1:0` in this process. For five analysts' filter
//! sets, `/api/search` (20 hits, newest first) and `/api/stats` (day buckets
//! in Asia/Shanghai, grouped by topic) are requested over HTTP by a reqwest
//! client (2 warm-ups, then [`SEARCH_RUNS`] / [`STATS_RUNS`] timed requests);
//! one [`indexer::Index::full_scan_search_page`] /
//! [`indexer::Index::full_scan_stats`] of the same question runs beside them,
//! and the answers must be equal. The bar: p50 < 50 ms and at least 20x
//! faster than the full scan. Then `wrk -t2 -c16 -d10s` on one search URL and
//! one stats URL gives requests/s (skipped with a note when `wrk` is not
//! installed). Last, 200 concurrent clients in a child process
//! (`harvest-bench api-load`) load the API for `HARVEST_BENCH_LOAD_SECS` (10)
//! seconds, with admission off (how the server queued before) and with the
//! default admission: answers/s, p50/p99/max overall and per route beside
//! the server's own time per request, the CPU of server and clients, and the
//! overload refused with 503 + `Retry-After`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use chrono::{DateTime, TimeZone, Utc};
use indexer::{
    Durability, EmbeddedOptions, EmbeddedStore, GroupBy, Index, IndexOptions, Interval, PageRecord,
    Query, Sort, StatsQuery,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::cli::BenchArgs;
use harvest::config::{Config, RawConfig, RawSource};
use harvest::filters::FilterSpec;
use harvest::site::SiteServer;
use harvest::stores::Stores;

/// Environment variable with the number of pages to load.
pub const PAGES_ENV: &str = "HARVEST_BENCH_PAGES";
/// Pages loaded by default.
pub const DEFAULT_PAGES: u64 = 1_000_000;
/// Pages turned into rows and ingested per batch (bounds memory).
pub const BATCH_PAGES: usize = 100_000;
/// Seed of the replication RNG.
const SEED: u64 = 0x00a9_1be7_c4a5_e5ed;
/// First day of the replicated dates.
const FIRST_DAY: (i32, u32, u32) = (2017, 1, 1);
/// Days replicated pages are spread over (2017 and 2018).
const DAYS: u64 = 730;
/// One page in this many has no comment count.
const NO_COMMENTS_ONE_IN: u64 = 8;
/// Largest comment count drawn.
const MAX_COMMENTS: f64 = 3_000.0;
/// Marker of a loaded work folder.
const MARKER: &str = "loaded.json";
/// Version of the loader (2: posting rows; 3: the text index; 4: its revisit flag): a
/// marker of another version is not reused.
const LOADER_VERSION: u32 = 4;
/// What the text index's load took, beside the marker.
pub(crate) const TEXT_LOAD: &str = "text-load.json";
/// Text documents written per text index commit.
const TEXT_BATCH: usize = 25_000;
/// Untimed requests before the timed ones.
pub const WARMUPS: usize = 2;
/// Timed `/api/search` requests per filter set.
pub const SEARCH_RUNS: usize = 41;
/// Timed `/api/stats` requests per filter set.
pub const STATS_RUNS: usize = 21;
/// Hits per search page.
const LIMIT: usize = 20;
/// Time zone of the filter sets' dates and of the stats buckets.
const TZ: &str = "Asia/Shanghai";
/// The bar: p50 below this many milliseconds ...
pub const BAR_P50_MS: f64 = 50.0;
/// ... and at least this many times faster than the full scan.
pub const BAR_RATIO: f64 = 20.0;
/// `wrk` settings: threads, connections, duration.
const WRK_ARGS: [&str; 3] = ["-t2", "-c16", "-d10s"];
/// How to get `wrk`.
const WRK_INSTALL: &str = "apt-get install wrk";
/// Filter set whose URLs `wrk` loads.
const WRK_SET: usize = 0;

/// What `<dir>/loaded.json` records.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Marker {
    loader_version: u32,
    pub(crate) pages: u64,
    seed: u64,
    buckets: u8,
    /// Crawled article pages the load was replicated from.
    articles: u64,
}

/// `harvest bench api`: load (or reuse) `args.dir`, serve it, measure, print.
pub fn run(args: &BenchArgs) -> Result<()> {
    let rt = harvest::runtime()?;
    let (stores, _) = loaded(args, &rt)?;
    rt.block_on(measure(stores))
}

/// What the text index's load took (`<dir>/text-load.json`).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct TextLoad {
    /// Pages whose words were written.
    pub pages: u64,
    /// Seconds spent writing them (the rows not counted).
    pub secs: f64,
}

/// The loaded index of `args.dir` (loaded first when it is not there, or not of the
/// pages wanted): its stores and what was loaded.
pub(crate) fn loaded(args: &BenchArgs, rt: &tokio::runtime::Runtime) -> Result<(Stores, Marker)> {
    let pages = pages_from_env(std::env::var(PAGES_ENV).ok().as_deref())?;
    std::fs::create_dir_all(&args.dir)
        .with_context(|| format!("cannot create {}", args.dir.display()))?;
    let dir = args.dir.canonicalize()?;
    let work = Work::new(&dir);
    let cfg = work.config(Vec::new(), Vec::new())?;
    let marker = read_marker(&work.marker());
    let (stores, loaded) = match marker {
        Some(m) if m == work.expected_marker(pages, cfg.buckets, m.articles) => {
            println!(
                "reusing {} pages loaded in {} (from {} crawled articles)",
                m.pages,
                dir.display(),
                m.articles
            );
            (work.open_big(&cfg)?.0, m)
        }
        _ => {
            for p in [work.seed_dir(), work.index_dir(), work.marker()] {
                if p.is_dir() {
                    std::fs::remove_dir_all(&p)?;
                } else if p.exists() {
                    std::fs::remove_file(&p)?;
                }
            }
            let seed = crawl_seed(rt, &work, &args.news)?;
            let (stores, store) = work.open_big(&cfg)?;
            let texts = seed_texts(&stores, &seed)?;
            let (m, text) = load(&stores.index, &store, &seed, &texts, pages, cfg.buckets)?;
            std::fs::write(work.dir.join(TEXT_LOAD), serde_json::to_vec_pretty(&text)?)?;
            std::fs::write(work.marker(), serde_json::to_vec_pretty(&m)?)?;
            (stores, m)
        }
    };
    println!(
        "index: {} pages in {} (embedded), packs {}",
        loaded.pages,
        work.index_dir().display(),
        work.seed_dir().join("packs").display()
    );
    Ok((stores, loaded))
}

/// The words of each crawled article page, as the crawl gave them to the text index:
/// its record read back from the seed packs and extracted again.
fn seed_texts(stores: &Stores, seed: &[PageRecord]) -> Result<Vec<indexer::TextDoc>> {
    use rayon::prelude::*;
    seed.par_iter()
        .map(|p| harvest::read::page_words(stores, p))
        .collect()
}

/// The number of pages from the environment (default [`DEFAULT_PAGES`]).
fn pages_from_env(v: Option<&str>) -> Result<u64> {
    match v.map(str::trim).filter(|v| !v.is_empty()) {
        None => Ok(DEFAULT_PAGES),
        Some(v) => {
            let n: u64 = v
                .replace('_', "")
                .parse()
                .with_context(|| format!("{PAGES_ENV}={v:?} is not a whole number"))?;
            if n == 0 {
                bail!("{PAGES_ENV} must be at least 1");
            }
            Ok(n)
        }
    }
}

fn read_marker(path: &Path) -> Option<Marker> {
    let bytes = std::fs::read(path).ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// Paths of the work folder.
pub(crate) struct Work {
    dir: PathBuf,
}

impl Work {
    fn new(dir: &Path) -> Work {
        Work {
            dir: dir.to_path_buf(),
        }
    }

    fn seed_dir(&self) -> PathBuf {
        self.dir.join("seed")
    }

    fn index_dir(&self) -> PathBuf {
        self.dir.join("index")
    }

    fn marker(&self) -> PathBuf {
        self.dir.join(MARKER)
    }

    fn model(&self) -> PathBuf {
        self.dir.join("topic.model")
    }

    fn expected_marker(&self, pages: u64, buckets: u8, articles: u64) -> Marker {
        Marker {
            loader_version: LOADER_VERSION,
            pages,
            seed: SEED,
            buckets,
            articles,
        }
    }

    /// The seed crawl's configuration (data in `<dir>/seed`).
    fn config(&self, seeds: Vec<String>, sources: Vec<RawSource>) -> Result<Config> {
        let mut raw = RawConfig {
            data_dir: Some(self.seed_dir()),
            ..Default::default()
        };
        raw.classifier.model = Some(self.model());
        raw.crawl.seeds = seeds;
        raw.crawl.politeness_delay_ms = Some(0);
        raw.crawl.allow_private = Some(true);
        raw.sources = sources;
        Config::from_raw(raw)
    }

    /// The loaded index (`<dir>/index`) with the seed packs, and the
    /// embedded store under it for bulk loading.
    fn open_big(&self, cfg: &Config) -> Result<(Stores, Arc<EmbeddedStore>)> {
        let store = Arc::new(
            EmbeddedStore::open_with(
                self.index_dir(),
                EmbeddedOptions {
                    durability: Durability::Process,
                },
            )
            .with_context(|| format!("cannot open {}", self.index_dir().display()))?,
        );
        let index = Index::new(
            store.clone(),
            IndexOptions {
                buckets: cfg.buckets,
            },
        )?;
        let text_dir = self.index_dir().join(harvest::stores::TEXT_FOLDER);
        let text = indexer::text::embedded::EmbeddedText::open(&text_dir)
            .with_context(|| format!("cannot open the text index {}", text_dir.display()))?;
        let index = index.with_text(Arc::new(text));
        let packs = harvest::stores::open_packs(cfg)
            .with_context(|| format!("cannot open the seed packs {}", cfg.packs))?;
        Ok((
            Stores {
                packs,
                index: Arc::new(index),
                read_only_copy: None,
            },
            store,
        ))
    }
}

/// Train the topic model, crawl the news site once with the real pipeline,
/// and read the article pages back.
fn crawl_seed(rt: &tokio::runtime::Runtime, work: &Work, news: &Path) -> Result<Vec<PageRecord>> {
    let articles = harvest::newssite::read_articles(news)?;
    let docs = harvest::newssite::section_training_docs(&articles);
    let started = Instant::now();
    let model = classifier::Model::train(
        &docs,
        &classifier::TrainOptions {
            trained_on: format!("{} (ABC News / TASS sections)", news.display()),
            ..Default::default()
        },
    )?;
    model.save(work.model())?;
    println!(
        "model: {} labelled articles, {} topics, trained in {:.1} s",
        docs.len(),
        model.classes.len(),
        started.elapsed().as_secs_f64()
    );
    rt.block_on(crawl_site(work, &articles))
}

async fn crawl_site(
    work: &Work,
    articles: &[harvest::newssite::Article],
) -> Result<Vec<PageRecord>> {
    let hosts: BTreeSet<String> = articles.iter().map(|a| a.host.clone()).collect();
    let server = SiteServer::start(harvest::newssite::news_site(articles)).await?;
    let sources = harvest::newssite::news_sources(&server, &hosts);
    let outlets: BTreeSet<String> = sources.iter().map(|s| s.name.clone()).collect();
    let cfg = work.config(vec![server.url("/")], sources)?;
    let (stores, summary, secs) = crate::crawl::crawl_quietly(&cfg).await?;
    println!(
        "seed crawl: {} pages ({} articles on the site) in {:.1} s, {} failures, into {}",
        summary.pages,
        articles.len(),
        secs,
        summary.failures_total(),
        work.seed_dir().display()
    );
    let mut all = Query::new(&[], DateTime::<Utc>::MIN_UTC, DateTime::<Utc>::MAX_UTC);
    all.include_revisits = true;
    let index = stores.index.clone();
    let hits = tokio::task::spawn_blocking(move || index.full_scan_search(&all)).await??;
    let pages: Vec<PageRecord> = hits
        .into_iter()
        .map(|h| h.page)
        .filter(|p| p.published.is_some() && outlets.contains(&p.source))
        .collect();
    if pages.is_empty() {
        bail!("the seed crawl stored no article pages: nothing to replicate");
    }
    println!("replicating {} crawled article pages", pages.len());
    Ok(pages)
}

/// xorshift64* (seeded, reproducible).
#[derive(Debug, Clone)]
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed.max(1))
    }

    fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

fn first_day() -> DateTime<Utc> {
    let (y, m, d) = FIRST_DAY;
    Utc.with_ymd_and_hms(y, m, d, 0, 0, 0)
        .single()
        .unwrap_or_default()
}

/// Copy `copy` of a crawled page: new day (time of day kept), own URL,
/// comment counts from `rng`; everything else, pack location included, kept.
fn replicate(p: &PageRecord, copy: u64, rng: &mut Rng) -> PageRecord {
    let mut out = p.clone();
    let t = p.key_time();
    let midnight = t
        .date_naive()
        .and_hms_opt(0, 0, 0)
        .unwrap_or_default()
        .and_utc();
    let day = chrono::Duration::days((rng.next_u64() % DAYS) as i64);
    let shift = (first_day() + day + (t - midnight)) - t;
    out.published = p.published.map(|x| x + shift);
    out.fetched = p.fetched + shift;
    out.url = copy_url(&p.url, copy);
    out.near_duplicate_of = p.near_duplicate_of.as_deref().map(|u| copy_url(u, copy));
    if rng.next_u64().is_multiple_of(NO_COMMENTS_ONE_IN) {
        out.comments = None;
        out.participants = None;
    } else {
        // Heavy tail: most pages few comments, a few thousands.
        let c = (rng.unit().powi(4) * MAX_COMMENTS) as u64;
        out.comments = Some(c);
        out.participants = Some(c * (40 + rng.next_u64() % 60) / 100);
    }
    out
}

fn copy_url(url: &str, copy: u64) -> String {
    let sep = if url.contains('?') { '&' } else { '?' };
    format!("{url}{sep}copy={copy}")
}

/// Replicate `seed` to `total` pages into the embedded store, in batches.
fn load(
    index: &Index,
    store: &EmbeddedStore,
    seed: &[PageRecord],
    texts: &[indexer::TextDoc],
    total: u64,
    buckets: u8,
) -> Result<(Marker, TextLoad)> {
    let started = Instant::now();
    let mut text_secs = 0.0;
    let mut rng = Rng::new(SEED);
    let n = seed.len() as u64;
    let mut done = 0u64;
    while done < total {
        let end = (done + BATCH_PAGES as u64).min(total);
        let batch: Vec<PageRecord> = (done..end)
            .map(|i| replicate(&seed[(i % n) as usize], i / n, &mut rng))
            .collect();
        // The copies' words: the article's, under the copy's name and time.
        let t = Instant::now();
        for (k, chunk) in batch.chunks(TEXT_BATCH).enumerate() {
            let first = done + (k * TEXT_BATCH) as u64;
            let docs: Vec<indexer::TextDoc> = chunk
                .iter()
                .enumerate()
                .map(|(j, p)| {
                    let mut d = texts[((first + j as u64) % n) as usize].clone();
                    d.source = p.source.clone();
                    d.time = p.key_time();
                    d.url = p.url.clone();
                    d
                })
                .collect();
            index.index_texts(&docs)?;
        }
        text_secs += t.elapsed().as_secs_f64();
        let half = batch.len().div_ceil(2);
        let parts = std::thread::scope(|s| {
            let handles: Vec<_> = batch
                .chunks(half.max(1))
                .map(|chunk| s.spawn(move || index.rows_for_new_pages(chunk)))
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join()
                        .map_err(|_| anyhow::anyhow!("a row builder panicked"))?
                        .map_err(anyhow::Error::from)
                })
                .collect::<Result<Vec<_>>>()
        })?;
        drop(batch);
        let mut by_table: std::collections::BTreeMap<String, Vec<indexer::Row>> =
            std::collections::BTreeMap::new();
        for part in parts {
            for (table, rows) in part {
                by_table.entry(table).or_default().extend(rows);
            }
        }
        for (table, rows) in &by_table {
            store.ingest(table, rows)?;
        }
        done = end;
        let secs = started.elapsed().as_secs_f64();
        println!(
            "  loaded {done} / {total} pages ({:.0} pages/s)",
            done as f64 / secs.max(1e-9)
        );
    }
    let t = Instant::now();
    store.compact()?;
    store.persist(Durability::Process)?;
    let secs = started.elapsed().as_secs_f64();
    println!(
        "loaded {total} pages in {secs:.1} s ({:.0} pages/s; compaction {:.1} s)",
        total as f64 / secs.max(1e-9),
        t.elapsed().as_secs_f64()
    );
    println!(
        "  of which the text index: {text_secs:.1} s ({:.0} pages/s)",
        total as f64 / text_secs.max(1e-9)
    );
    Ok((
        Marker {
            loader_version: LOADER_VERSION,
            pages: total,
            seed: SEED,
            buckets,
            articles: n,
        },
        TextLoad {
            pages: total,
            secs: text_secs,
        },
    ))
}

/// One analyst's question.
#[derive(Debug, Clone)]
struct FilterSet {
    name: &'static str,
    spec: FilterSpec,
}

fn spec(from: &str, to: &str) -> FilterSpec {
    FilterSpec {
        from: Some(from.to_string()),
        to: Some(to.to_string()),
        tz: TZ.to_string(),
        ..Default::default()
    }
}

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| (*s).to_string()).collect()
}

/// The five filter sets (dates in Asia/Shanghai, `to` inclusive).
fn filter_sets() -> Vec<FilterSet> {
    let mut v = Vec::new();
    let mut s = spec("2018-12-01", "2018-12-31");
    s.sources = strings(&["bbc"]);
    v.push(FilterSet {
        name: "bbc, Dec 2018",
        spec: s,
    });
    let mut s = spec("2018-01-01", "2018-12-31");
    s.topics = strings(&["military"]);
    v.push(FilterSet {
        name: "military, 2018, all sources",
        spec: s,
    });
    let mut s = spec("2017-01-01", "2018-12-31");
    s.topics = strings(&["politics"]);
    s.keywords = strings(&["trump"]);
    s.min_comments = Some(100);
    v.push(FilterSet {
        name: "politics+trump+comments>=100, 2y",
        spec: s,
    });
    let mut s = spec("2018-01-01", "2018-03-31");
    s.sources = strings(&["aljazeera", "dw", "rte"]);
    s.any = strings(&["syria", "russia", "iran"]);
    s.collapse = true;
    v.push(FilterSet {
        name: "3 sources, any(syria,russia,iran), Q1 2018, collapsed",
        spec: s,
    });
    let mut s = spec("2017-01-01", "2018-12-31");
    s.keywords = strings(&["brexit"]);
    v.push(FilterSet {
        name: "brexit, 2y, all sources",
        spec: s,
    });
    v
}

/// The API query string of a filter spec plus extra parameters.
fn query_string(f: &FilterSpec, extra: &[(&str, &str)]) -> String {
    let mut s = url::form_urlencoded::Serializer::new(String::new());
    for (name, list) in [
        ("source", &f.sources),
        ("topic", &f.topics),
        ("media", &f.media),
        ("keyword", &f.keywords),
        ("any", &f.any),
    ] {
        for v in list {
            s.append_pair(name, v);
        }
    }
    if let Some(v) = &f.from {
        s.append_pair("from", v);
    }
    if let Some(v) = &f.to {
        s.append_pair("to", v);
    }
    if !f.tz.is_empty() {
        s.append_pair("tz", &f.tz);
    }
    if let Some(n) = f.min_comments {
        s.append_pair("min_comments", &n.to_string());
    }
    if let Some(n) = f.max_comments {
        s.append_pair("max_comments", &n.to_string());
    }
    if f.collapse {
        s.append_pair("collapse", "true");
    }
    if f.include_revisits {
        s.append_pair("revisits", "true");
    }
    for (k, v) in extra {
        s.append_pair(k, v);
    }
    s.finish()
}

/// Parameters `/api/search` gets beside the filters.
const SEARCH_EXTRA: [(&str, &str); 2] = [("limit", "20"), ("sort", "time")];
/// Parameters `/api/stats` gets beside the filters.
const STATS_EXTRA: [(&str, &str); 2] = [("interval", "day"), ("group_by", "topic")];

/// The index questions the server builds from the same parameters.
fn questions(f: &FilterSpec) -> Result<(Query, StatsQuery)> {
    let (mut q, tz) = f
        .build(Some(LIMIT), harvest::serve::MAX_LIMIT)
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    q.sort = Sort::TimeDesc;
    let mut all = q.clone();
    all.limit = None;
    let sq = StatsQuery {
        query: all,
        interval: Interval::Day,
        group_by: Some(GroupBy::Topic),
        tz,
        fill_empty: true,
        bounds: f.bounds(),
    };
    Ok((q, sq))
}

/// Nearest-rank percentile (`p` in 0..=1) of unsorted samples.
pub(crate) fn percentile(samples: &[Duration], p: f64) -> Duration {
    if samples.is_empty() {
        return Duration::ZERO;
    }
    let mut s = samples.to_vec();
    s.sort();
    let rank = ((p * s.len() as f64).ceil() as usize).clamp(1, s.len());
    s[rank - 1]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// p50/p99 of one endpoint beside its full scan.
#[derive(Debug, Clone)]
struct Figures {
    p50: Duration,
    p99: Duration,
    scan: Duration,
    equal: bool,
}

impl Figures {
    fn ratio(&self) -> f64 {
        self.scan.as_secs_f64() / self.p50.as_secs_f64().max(1e-9)
    }

    fn bar(&self) -> bool {
        ms(self.p50) < BAR_P50_MS && self.ratio() >= BAR_RATIO
    }

    fn cells(&self) -> String {
        format!(
            "{:>8.1} {:>8.1} {:>9.0} {:>6.0}x {:<4}{}",
            ms(self.p50),
            ms(self.p99),
            ms(self.scan),
            self.ratio(),
            if self.bar() { "yes" } else { "NO" },
            if self.equal { "" } else { " DIFFERENT" }
        )
    }
}

/// GET `url` and parse the JSON body; non-2xx is an error with the body.
async fn get_json(client: &reqwest::Client, url: &str) -> Result<Value> {
    let resp = client
        .get(url)
        .send()
        .await
        .with_context(|| format!("GET {url}"))?;
    let status = resp.status();
    let body = resp.text().await.with_context(|| format!("GET {url}"))?;
    if !status.is_success() {
        bail!("GET {url}: {status}: {body}");
    }
    serde_json::from_str(&body).with_context(|| format!("GET {url}: not JSON"))
}

/// Warm up, then time `runs` requests; the last answer and the latencies.
async fn time_requests(
    client: &reqwest::Client,
    url: &str,
    runs: usize,
) -> Result<(Value, Vec<Duration>)> {
    let mut last = Value::Null;
    for _ in 0..WARMUPS {
        last = get_json(client, url).await?;
    }
    let mut times = Vec::with_capacity(runs);
    for _ in 0..runs {
        let t = Instant::now();
        last = get_json(client, url).await?;
        times.push(t.elapsed());
    }
    Ok((last, times))
}

/// Page ids and next cursor of a `/api/search` answer.
fn search_answer(v: &Value) -> (Vec<String>, Option<String>) {
    let ids = v["hits"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|h| h["id"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    (ids, v["next_cursor"].as_str().map(str::to_string))
}

/// The parts of a `/api/stats` answer that must match (not `took_ms`).
fn stats_answer(v: &Value) -> Value {
    serde_json::json!({
        "interval": v["interval"],
        "group_by": v["group_by"],
        "tz": v["tz"],
        "buckets": v["buckets"],
        "series": v["series"],
        "total": v["total"],
    })
}

/// `/api/pages/{id}/raw` of a replicated page returns the crawled HTML
/// from the seed packs.
async fn check_raw(client: &reqwest::Client, base: &str, id: &str) -> Result<()> {
    let url = format!("{base}/api/pages/{id}/raw");
    let resp = client
        .get(&url)
        .send()
        .await
        .with_context(|| format!("GET {url}"))?;
    let status = resp.status();
    let body = resp.bytes().await.with_context(|| format!("GET {url}"))?;
    if !status.is_success() || !body.windows(5).any(|w| w.eq_ignore_ascii_case(b"<html")) {
        bail!(
            "GET {url}: {status}, {} bytes: not the archived page",
            body.len()
        );
    }
    println!(
        "raw page of a replicated hit: {status}, {} bytes of HTML read back from its pack",
        body.len()
    );
    Ok(())
}

/// One filter set measured.
struct Measured {
    name: &'static str,
    /// Id of the first hit of the search, if any.
    first_id: Option<String>,
    matched: u64,
    search: Figures,
    stats: Figures,
}

async fn measure_set(
    client: &reqwest::Client,
    base: &str,
    index: &Arc<Index>,
    set: &FilterSet,
) -> Result<Measured> {
    let (q, sq) = questions(&set.spec)?;
    let search_url = format!(
        "{base}/api/search?{}",
        query_string(&set.spec, &SEARCH_EXTRA)
    );
    let (answer, times) = time_requests(client, &search_url, SEARCH_RUNS).await?;
    let idx = index.clone();
    let t = Instant::now();
    let slow = tokio::task::spawn_blocking(move || idx.full_scan_search_page(&q)).await??;
    let scan = t.elapsed();
    let expected = (
        slow.hits.iter().map(|h| h.id()).collect::<Vec<_>>(),
        slow.next_cursor.clone(),
    );
    let first_id = expected.0.first().cloned();
    let search = Figures {
        p50: percentile(&times, 0.5),
        p99: percentile(&times, 0.99),
        scan,
        equal: search_answer(&answer) == expected,
    };

    let stats_url = format!("{base}/api/stats?{}", query_string(&set.spec, &STATS_EXTRA));
    let (answer, times) = time_requests(client, &stats_url, STATS_RUNS).await?;
    let idx = index.clone();
    let sq2 = sq.clone();
    let t = Instant::now();
    let rows = tokio::task::spawn_blocking(move || idx.full_scan_stats(&sq2)).await??;
    let scan = t.elapsed();
    let expected = harvest::serve::stats_json_body(&sq, &rows, Duration::ZERO);
    let stats = Figures {
        p50: percentile(&times, 0.5),
        p99: percentile(&times, 0.99),
        scan,
        equal: stats_answer(&answer) == stats_answer(&expected),
    };
    Ok(Measured {
        name: set.name,
        first_id,
        matched: rows.iter().map(|r| r.count).sum(),
        search,
        stats,
    })
}

/// Serve the index in-process, measure every filter set, run `wrk`.
async fn measure(stores: Stores) -> Result<()> {
    let index = stores.index.clone();
    let load_stores = stores.clone();
    let served = InProcess::serve(harvest::serve::router(harvest::serve::AppState::new(
        stores, None,
    )))
    .await?;
    let base = served.base.clone();
    println!("API on {base} (in-process, embedded backend)");
    let client = reqwest::Client::builder()
        .build()
        .context("cannot build the HTTP client")?;
    let sets = filter_sets();
    println!(
        "{:<54} {:>8} | {:>8} {:>8} {:>9} {:>7} {:<4} | {:>8} {:>8} {:>9} {:>7} {:<4}",
        "filter set (tz Asia/Shanghai)",
        "matched",
        "search50",
        "p99 ms",
        "scan ms",
        "ratio",
        "bar",
        "stats50",
        "p99 ms",
        "scan ms",
        "ratio",
        "bar"
    );
    let mut results = Vec::new();
    for set in &sets {
        let m = measure_set(&client, &base, &index, set).await?;
        println!(
            "{:<54} {:>8} | {} | {}",
            m.name,
            m.matched,
            m.search.cells(),
            m.stats.cells()
        );
        results.push(m);
    }
    let held = results
        .iter()
        .flat_map(|m| [&m.search, &m.stats])
        .filter(|f| f.bar())
        .count();
    println!(
        "bar (p50 < {BAR_P50_MS} ms and >= {BAR_RATIO}x the full scan): {held} of {} endpoint x filter set pairs hold; \
         latencies are HTTP round trips on loopback ({SEARCH_RUNS} search / {STATS_RUNS} stats requests after {WARMUPS} warm-ups), \
         the full scan is one in-process run",
        results.len() * 2
    );
    if let Some(id) = results.iter().find_map(|m| m.first_id.clone()) {
        check_raw(&client, &base, &id).await?;
    }
    if let Some(set) = sets.get(WRK_SET) {
        let urls = [
            (
                "search",
                format!(
                    "{base}/api/search?{}",
                    query_string(&set.spec, &SEARCH_EXTRA)
                ),
            ),
            (
                "stats",
                format!("{base}/api/stats?{}", query_string(&set.spec, &STATS_EXTRA)),
            ),
        ];
        match which("wrk") {
            None => println!("wrk: not installed, requests/s skipped ({WRK_INSTALL})"),
            Some(wrk) => {
                for (label, url) in &urls {
                    let out = tokio::process::Command::new(&wrk)
                        .args(WRK_ARGS)
                        .arg(url)
                        .output()
                        .await
                        .context("cannot run wrk")?;
                    let text = String::from_utf8_lossy(&out.stdout);
                    match parse_wrk(&text) {
                        Some(w) => println!(
                            "wrk {} /api/{label} ({}): {:.0} requests/s, mean latency {}, {} non-2xx",
                            WRK_ARGS.join(" "),
                            set.name,
                            w.requests_per_sec,
                            w.latency_avg,
                            w.non_2xx
                        ),
                        None => bail!(
                            "wrk gave no Requests/sec: {}{}",
                            text,
                            String::from_utf8_lossy(&out.stderr)
                        ),
                    }
                }
            }
        }
    }
    served.stop().await?;
    load_phase(&load_stores, &sets).await?;
    let differ: Vec<&str> = results
        .iter()
        .filter(|m| !m.search.equal || !m.stats.equal)
        .map(|m| m.name)
        .collect();
    if !differ.is_empty() {
        bail!(
            "the API and the full scan answer differently for: {}",
            differ.join("; ")
        );
    }
    Ok(())
}

/// The real router serving on a loopback port in this process.
struct InProcess {
    base: String,
    stop: tokio::sync::oneshot::Sender<()>,
    server: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl InProcess {
    async fn serve(app: axum::Router) -> Result<InProcess> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .context("cannot bind a loopback port for the API")?;
        let addr = listener.local_addr()?;
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let server = tokio::spawn(async move {
            axum::serve(listener, app)
                .with_graceful_shutdown(async {
                    let _ = stopped.await;
                })
                .await
        });
        Ok(InProcess {
            base: format!("http://{addr}"),
            stop,
            server,
        })
    }

    async fn stop(self) -> Result<()> {
        let _ = self.stop.send(());
        self.server.await.context("API server task")??;
        Ok(())
    }
}

/// Concurrent clients of the load phase.
const LOAD_CLIENTS: usize = 200;
/// Environment variable with the seconds each load run lasts.
pub const LOAD_SECS_ENV: &str = "HARVEST_BENCH_LOAD_SECS";
/// Seconds each load run lasts by default.
const DEFAULT_LOAD_SECS: u64 = 10;
/// The bar of the load phase: p99 of the answered searches and statistics.
pub const BAR_LOAD_P99_MS: f64 = 250.0;

/// What the load clients' process is asked, on its stdin as JSON.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoadPlan {
    /// (route, URL) pairs the clients ask in turn, each client starting at
    /// its own.
    pub urls: Vec<(String, String)>,
    /// Asked once by each client before the clock starts, so that the timed
    /// requests find their connection open (as `wrk` connects first).
    pub connect: String,
    pub clients: usize,
    pub secs: u64,
}

/// What the load clients' process answers, on its stdout as JSON.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LoadReport {
    /// Each answered (200) request: its index in [`LoadPlan::urls`] and its
    /// round trip in microseconds.
    pub ok: Vec<(usize, u64)>,
    /// Answered 503.
    pub busy: u64,
    /// Answered 503 with a `Retry-After` in seconds.
    pub busy_with_retry_after: u64,
    /// Any other answer or a failed connection.
    pub other: u64,
    pub elapsed_ms: f64,
    /// CPU time (user + system) of the clients' process.
    pub cpu_ms: f64,
}

/// [`LOAD_CLIENTS`] clients, each with its own connection, ask the five
/// filter sets' searches and statistics in turn for the load duration, once
/// against the router with admission off (every request waits for its turn:
/// how the server answered before) and once with the default admission
/// (`--max-queries`, `--queue-wait-ms`): requests/s, p50/p99/max of the
/// answers per route, the overload refused (503 with `Retry-After`), and
/// the server's own time per request beside the clients' round trips.
///
/// The clients are a child process (`harvest-bench api-load`), as `wrk`
/// would be: in this process they would share the server's runtime workers,
/// and a served answer would wait for a worker behind client tasks.
async fn load_phase(stores: &Stores, sets: &[FilterSet]) -> Result<()> {
    let secs = std::env::var(LOAD_SECS_ENV)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(DEFAULT_LOAD_SECS);
    let unbounded = harvest::serve::AdmissionLimits {
        max_queries: 1 << 20,
        queue_wait: Duration::from_secs(3600),
        max_waiting: 1 << 20,
    };
    let default = harvest::serve::AdmissionLimits::default();
    println!(
        "load: {LOAD_CLIENTS} concurrent clients (a child process) for {secs} s each, searches and statistics of the five filter sets in turn"
    );
    let mut admitted_p99 = None;
    for (label, limits) in [
        ("queued (no admission, as before)", unbounded),
        ("admitted (defaults)", default),
    ] {
        let timings = ServerTimings::default();
        let app = timings.around(harvest::serve::router(
            harvest::serve::AppState::new(stores.clone(), None).with_admission(limits),
        ));
        let served = InProcess::serve(app).await?;
        let base = served.base.clone();
        let urls: Vec<(String, String)> = sets
            .iter()
            .flat_map(|set| {
                [
                    (
                        "search".to_string(),
                        format!(
                            "{base}/api/search?{}",
                            query_string(&set.spec, &SEARCH_EXTRA)
                        ),
                    ),
                    (
                        "stats".to_string(),
                        format!("{base}/api/stats?{}", query_string(&set.spec, &STATS_EXTRA)),
                    ),
                ]
            })
            .collect();
        let plan = LoadPlan {
            urls,
            connect: format!("{base}/healthz"),
            clients: LOAD_CLIENTS,
            secs,
        };
        let cpu_before = own_cpu()?;
        let run = run_load_clients(&plan).await?;
        let server_cpu = own_cpu()? - cpu_before;
        served.stop().await?;
        let ok: Vec<Duration> = run
            .ok
            .iter()
            .map(|(_, us)| Duration::from_micros(*us))
            .collect();
        let p99 = percentile(&ok, 0.99);
        println!(
            "  {label:<34} {:>7.0} answers/s | p50 {:>7.1} ms  p99 {:>7.1} ms  max {:>7.1} ms | 503 {} ({} with Retry-After), other errors {}",
            ok.len() as f64 / (run.elapsed_ms / 1e3).max(1e-9),
            ms(percentile(&ok, 0.5)),
            ms(p99),
            ms(ok.iter().max().copied().unwrap_or_default()),
            run.busy,
            run.busy_with_retry_after,
            run.other
        );
        let server = timings.answered();
        for route in ["search", "stats"] {
            let client: Vec<Duration> = run
                .ok
                .iter()
                .filter(|(i, _)| plan.urls.get(*i).is_some_and(|(r, _)| r == route))
                .map(|(_, us)| Duration::from_micros(*us))
                .collect();
            let inside: Vec<Duration> = server
                .iter()
                .filter(|(r, _)| *r == route)
                .map(|(_, d)| *d)
                .collect();
            println!(
                "    /api/{route:<7} {:>6} answered | round trip p50 {:>7.1}  p99 {:>7.1}  max {:>7.1} ms | in the server p50 {:>7.1}  p99 {:>7.1}  max {:>7.1} ms",
                client.len(),
                ms(percentile(&client, 0.5)),
                ms(percentile(&client, 0.99)),
                ms(client.iter().max().copied().unwrap_or_default()),
                ms(percentile(&inside, 0.5)),
                ms(percentile(&inside, 0.99)),
                ms(inside.iter().max().copied().unwrap_or_default()),
            );
        }
        println!(
            "    CPU: server {:.1} s, clients {:.1} s, in {:.1} s",
            server_cpu.as_secs_f64(),
            run.cpu_ms / 1e3,
            run.elapsed_ms / 1e3
        );
        if limits.max_queries == default.max_queries {
            admitted_p99 = Some(p99);
        }
    }
    if let Some(p99) = admitted_p99 {
        println!(
            "load bar (p99 of answered requests < {BAR_LOAD_P99_MS} ms with the defaults): {}",
            if ms(p99) < BAR_LOAD_P99_MS {
                "holds"
            } else {
                "missed"
            }
        );
    }
    Ok(())
}

/// The server's time of each answered search and statistics request (from
/// the router taking it to its answer, the wait for a turn included).
#[derive(Clone, Default)]
struct ServerTimings(Arc<std::sync::Mutex<Vec<(&'static str, Duration)>>>);

impl ServerTimings {
    /// `app` with its answered `/api/search` and `/api/stats` requests timed.
    fn around(&self, app: axum::Router) -> axum::Router {
        let times = self.0.clone();
        app.layer(axum::middleware::from_fn(
            move |req: axum::extract::Request, next: axum::middleware::Next| {
                let times = times.clone();
                async move {
                    let route = match req.uri().path() {
                        "/api/search" => Some("search"),
                        "/api/stats" => Some("stats"),
                        _ => None,
                    };
                    let started = Instant::now();
                    let resp = next.run(req).await;
                    if let (Some(route), true) = (route, resp.status().is_success()) {
                        if let Ok(mut t) = times.lock() {
                            t.push((route, started.elapsed()));
                        }
                    }
                    resp
                }
            },
        ))
    }

    fn answered(&self) -> Vec<(&'static str, Duration)> {
        self.0.lock().map(|t| t.clone()).unwrap_or_default()
    }
}

/// CPU time (user + system) this process has used, from `/proc/self/stat`.
fn own_cpu() -> Result<Duration> {
    let stat = std::fs::read_to_string("/proc/self/stat").context("cannot read /proc/self/stat")?;
    cpu_of_stat(&stat).context("/proc/self/stat without utime and stime")
}

/// utime + stime of a `/proc/PID/stat` line: fields 14 and 15, counted
/// after the command name (which may hold spaces), in USER_HZ ticks, which
/// Linux fixes at 100 a second for user space.
fn cpu_of_stat(stat: &str) -> Option<Duration> {
    let (_, rest) = stat.rsplit_once(')')?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    Some(Duration::from_millis(ticks * 10))
}

/// Runs `plan` in a child process (`harvest-bench api-load`) and reads its report.
async fn run_load_clients(plan: &LoadPlan) -> Result<LoadReport> {
    use tokio::io::AsyncWriteExt;
    let me = std::env::current_exe().context("cannot locate harvest-bench's own executable")?;
    let mut child = tokio::process::Command::new(&me)
        .arg("api-load")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .with_context(|| format!("cannot run {} api-load", me.display()))?;
    let mut stdin = child
        .stdin
        .take()
        .context("no stdin for the load clients")?;
    stdin.write_all(&serde_json::to_vec(plan)?).await?;
    drop(stdin);
    let out = child.wait_with_output().await?;
    if !out.status.success() {
        bail!("the load clients failed: {}", out.status);
    }
    serde_json::from_slice(&out.stdout).context("the load clients' report")
}

/// `harvest-bench api-load`: the load clients of [`load_phase`]: reads a
/// [`LoadPlan`] on stdin, runs it, prints a [`LoadReport`] on stdout.
pub fn load_clients() -> Result<()> {
    let mut text = String::new();
    std::io::Read::read_to_string(&mut std::io::stdin(), &mut text)?;
    let plan: LoadPlan = serde_json::from_str(&text).context("the load plan on stdin")?;
    let rt = harvest::runtime()?;
    let mut report = rt.block_on(drive_load(&plan))?;
    report.cpu_ms = ms(own_cpu()?);
    println!("{}", serde_json::to_string(&report)?);
    Ok(())
}

/// Runs the clients until the plan's seconds have passed. Every client
/// opens its connection first; the clock starts when all have.
async fn drive_load(plan: &LoadPlan) -> Result<LoadReport> {
    let urls: Arc<Vec<String>> = Arc::new(plan.urls.iter().map(|(_, u)| u.clone()).collect());
    let length = Duration::from_secs(plan.secs);
    let ready = Arc::new(tokio::sync::Barrier::new(plan.clients + 1));
    let mut tasks = tokio::task::JoinSet::new();
    for client_no in 0..plan.clients {
        let (urls, ready, connect) = (urls.clone(), ready.clone(), plan.connect.clone());
        tasks.spawn(async move {
            // One connection per client, kept alive.
            let client = reqwest::Client::builder().pool_max_idle_per_host(1).build();
            let opened = match &client {
                Ok(c) => c
                    .get(&connect)
                    .send()
                    .await
                    .map(|_| ())
                    .map_err(anyhow::Error::from),
                Err(e) => Err(anyhow::anyhow!("{e}")),
            };
            // Waited for even after a failure, so the others are not held up.
            ready.wait().await;
            let client = client?;
            opened.with_context(|| format!("GET {connect}"))?;
            let deadline = Instant::now() + length;
            let mut run = LoadReport::default();
            let mut i = client_no;
            while Instant::now() < deadline {
                let at = i % urls.len();
                i += 1;
                let t = Instant::now();
                match client.get(&urls[at]).send().await {
                    Ok(r) => {
                        let status = r.status().as_u16();
                        let retry_after = r
                            .headers()
                            .get("retry-after")
                            .and_then(|v| v.to_str().ok())
                            .and_then(|v| v.trim().parse::<u64>().ok());
                        let body = r.bytes().await;
                        match (status, body) {
                            (200, Ok(_)) => run.ok.push((at, t.elapsed().as_micros() as u64)),
                            (503, _) => {
                                run.busy += 1;
                                run.busy_with_retry_after += u64::from(retry_after.is_some());
                                // A client told to come back later does.
                                tokio::time::sleep(Duration::from_secs(retry_after.unwrap_or(1)))
                                    .await;
                            }
                            _ => run.other += 1,
                        }
                    }
                    Err(_) => run.other += 1,
                }
            }
            anyhow::Ok(run)
        });
    }
    ready.wait().await;
    let started = Instant::now();
    let mut all = LoadReport::default();
    while let Some(done) = tasks.join_next().await {
        let run = done.context("a load client failed")??;
        all.ok.extend(run.ok);
        all.busy += run.busy;
        all.busy_with_retry_after += run.busy_with_retry_after;
        all.other += run.other;
    }
    all.elapsed_ms = ms(started.elapsed());
    Ok(all)
}

/// The first `name` on `PATH`.
fn which(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join(name))
            .find(|p| p.is_file())
    })
}

/// What `wrk` printed.
#[derive(Debug, Clone, PartialEq)]
struct WrkReport {
    requests_per_sec: f64,
    latency_avg: String,
    non_2xx: u64,
}

/// Parse `wrk`'s summary (`Requests/sec:`, the `Latency` line, and
/// `Non-2xx or 3xx responses:` when present).
fn parse_wrk(text: &str) -> Option<WrkReport> {
    let mut rps = None;
    let mut latency = String::from("?");
    let mut non_2xx = 0;
    for line in text.lines().map(str::trim) {
        if let Some(v) = line.strip_prefix("Requests/sec:") {
            rps = v.trim().parse::<f64>().ok();
        } else if let Some(v) = line.strip_prefix("Latency") {
            if let Some(avg) = v.split_whitespace().next() {
                latency = avg.to_string();
            }
        } else if let Some(v) = line.strip_prefix("Non-2xx or 3xx responses:") {
            non_2xx = v.trim().parse().unwrap_or(0);
        }
    }
    Some(WrkReport {
        requests_per_sec: rps?,
        latency_avg: latency,
        non_2xx,
    })
}

/// Day of a replicated page in the bench's two years.
#[cfg(test)]
fn in_range(t: DateTime<Utc>) -> bool {
    let first = first_day().date_naive();
    let last = first + chrono::Duration::days(DAYS as i64 - 1);
    let d: chrono::NaiveDate = t.date_naive();
    d >= first && d <= last
}

#[cfg(test)]
mod tests {
    use super::*;
    use harvest::serve::params::{Params, FILTER_PARAMS, SEARCH_PARAMS, STATS_PARAMS};

    fn crawled() -> PageRecord {
        let published = Utc
            .with_ymd_and_hms(2017, 2, 14, 9, 30, 5)
            .single()
            .unwrap();
        PageRecord {
            url: "http://127.0.0.1:4000/www.bbc.co.uk/news/1187.html".into(),
            title: "Brexit: MPs debate the Article 50 bill".into(),
            published: Some(published),
            fetched: published + chrono::Duration::days(3000),
            first_seen: None,
            media: Some("BBC News".into()),
            comments: None,
            participants: None,
            keywords: strings(&["brexit", "article", "bill", "mps"]),
            topic: "politics".into(),
            topic_score: 0.81,
            cluster: 2,
            pack_path: "politics/2017/02/14/c2-0.warc.gz".into(),
            offset: 48_213,
            length: 5_120,
            digest: "sha1:ABCDEF".into(),
            record_id: "<urn:uuid:1>".into(),
            simhash: Some(42),
            simhash_version: Some(classifier::simhash::FINGERPRINT_VERSION),
            near_duplicate_of: Some("http://127.0.0.1:4000/www.bbc.co.uk/news/1186.html".into()),
            language: Some("en".into()),
            charset: Some("utf-8".into()),
            status: 200,
            source: "bbc".into(),
            revisit: false,
            published_from: Some("meta".into()),
            author: None,
            media_from_host: false,
            outlet: None,
        }
    }

    #[test]
    fn copies_keep_time_of_day_pack_location_and_get_own_urls() {
        let p = crawled();
        let mut rng = Rng::new(SEED);
        let mut urls = BTreeSet::new();
        let mut days = BTreeSet::new();
        let mut without = 0;
        for c in 0..400 {
            let r = replicate(&p, c, &mut rng);
            let t = r.published.unwrap();
            assert_eq!(t.time(), p.published.unwrap().time());
            assert!(in_range(t), "{t} outside the two years");
            assert_eq!(r.fetched - t, p.fetched - p.published.unwrap());
            assert_eq!(
                (r.pack_path.as_str(), r.offset, r.length),
                (p.pack_path.as_str(), p.offset, p.length)
            );
            assert_eq!(
                (&r.topic, &r.keywords, &r.source),
                (&p.topic, &p.keywords, &p.source)
            );
            assert_eq!(r.url, format!("{}?copy={c}", p.url));
            assert_eq!(
                r.near_duplicate_of.as_deref(),
                Some(
                    format!("http://127.0.0.1:4000/www.bbc.co.uk/news/1186.html?copy={c}").as_str()
                )
            );
            match (r.comments, r.participants) {
                (None, None) => without += 1,
                (Some(c), Some(pa)) => assert!(c as f64 <= MAX_COMMENTS && pa <= c),
                other => panic!("comments and participants disagree: {other:?}"),
            }
            urls.insert(r.url);
            days.insert(t.date_naive());
        }
        assert_eq!(urls.len(), 400);
        assert!(days.len() > 250, "only {} distinct days", days.len());
        assert!(
            (20..=90).contains(&without),
            "{without} of 400 without comments"
        );
    }

    #[test]
    fn replication_is_reproducible() {
        let p = crawled();
        let (mut a, mut b) = (Rng::new(SEED), Rng::new(SEED));
        for c in 0..50 {
            assert_eq!(replicate(&p, c, &mut a), replicate(&p, c, &mut b));
        }
        assert_eq!(copy_url("http://h/p?x=1", 3), "http://h/p?x=1&copy=3");
    }

    #[test]
    fn query_strings_parse_back_to_the_same_filters() {
        for set in filter_sets() {
            for (extra, allowed) in [(&SEARCH_EXTRA, SEARCH_PARAMS), (&STATS_EXTRA, STATS_PARAMS)] {
                let qs = query_string(&set.spec, extra);
                let p = Params::parse(Some(&qs), &[&FILTER_PARAMS[..], allowed]).unwrap();
                assert_eq!(p.filters().unwrap(), set.spec, "{}: {qs}", set.name);
            }
            let (q, sq) = questions(&set.spec).unwrap();
            assert_eq!(q.limit, Some(LIMIT));
            assert_eq!(sq.query.limit, None);
            assert_eq!(sq.tz.to_string(), TZ);
        }
        let qs = query_string(&filter_sets()[3].spec, &SEARCH_EXTRA);
        assert!(qs.contains("any=syria&any=russia&any=iran"), "{qs}");
        assert!(
            qs.contains("collapse=true") && qs.ends_with("limit=20&sort=time"),
            "{qs}"
        );
    }

    #[test]
    fn shanghai_dates_shift_the_utc_range() {
        let (q, _) = questions(&filter_sets()[0].spec).unwrap();
        assert_eq!(
            q.from,
            Utc.with_ymd_and_hms(2018, 11, 30, 16, 0, 0).unwrap()
        );
        assert_eq!(q.to, Utc.with_ymd_and_hms(2018, 12, 31, 16, 0, 0).unwrap());
        assert_eq!(q.sources, ["bbc"]);
    }

    #[test]
    fn percentiles_are_nearest_rank() {
        let d: Vec<Duration> = (1..=100).rev().map(Duration::from_millis).collect();
        assert_eq!(percentile(&d, 0.5), Duration::from_millis(50));
        assert_eq!(percentile(&d, 0.99), Duration::from_millis(99));
        let few: Vec<Duration> = (1..=21).map(Duration::from_millis).collect();
        assert_eq!(percentile(&few, 0.5), Duration::from_millis(11));
        assert_eq!(percentile(&few, 0.99), Duration::from_millis(21));
        assert_eq!(percentile(&[], 0.5), Duration::ZERO);
    }

    #[test]
    fn the_bar_needs_both_conditions() {
        let f = |p50, scan| Figures {
            p50: Duration::from_millis(p50),
            p99: Duration::from_millis(p50),
            scan: Duration::from_millis(scan),
            equal: true,
        };
        assert!(f(10, 300).bar());
        assert!(!f(10, 150).bar(), "15x is below the ratio");
        assert!(!f(60, 6000).bar(), "60 ms is above the p50 bar");
    }

    #[test]
    fn wrk_output_is_parsed() {
        let out = "Running 10s test @ http://127.0.0.1:40111/api/search?source=bbc\n  \
                   2 threads and 16 connections\n  Thread Stats   Avg      Stdev     Max   +/- Stdev\n    \
                   Latency     3.21ms    1.02ms  20.11ms   80.00%\n    Req/Sec     2.50k   210.00     3.00k    70.00%\n  \
                   49812 requests in 10.01s, 120.33MB read\n  Non-2xx or 3xx responses: 3\n\
                   Requests/sec:   4976.32\nTransfer/sec:     12.02MB\n";
        let w = parse_wrk(out).unwrap();
        assert_eq!(w.requests_per_sec, 4976.32);
        assert_eq!(w.latency_avg, "3.21ms");
        assert_eq!(w.non_2xx, 3);
        assert_eq!(parse_wrk("connection refused"), None);
    }

    #[test]
    fn cpu_time_is_read_after_a_command_name_with_spaces() {
        let stat =
            "4242 (harvest-bench) x) S 1 4242 4242 0 -1 4194560 900 0 3 0 250 31 0 0 20 0 9 0";
        assert_eq!(cpu_of_stat(stat), Some(Duration::from_millis(2_810)));
        assert_eq!(cpu_of_stat("4242 (cut"), None);
    }

    #[test]
    fn page_count_comes_from_the_environment() {
        assert_eq!(pages_from_env(None).unwrap(), DEFAULT_PAGES);
        assert_eq!(pages_from_env(Some("50_000")).unwrap(), 50_000);
        assert!(pages_from_env(Some("0")).is_err());
        assert!(pages_from_env(Some("lots")).is_err());
    }

    #[test]
    fn a_marker_of_other_settings_is_not_reused() {
        let dir = tempfile::tempdir().unwrap();
        let w = Work::new(dir.path());
        let m = w.expected_marker(50_000, 16, 3_800);
        std::fs::write(w.marker(), serde_json::to_vec(&m).unwrap()).unwrap();
        let read = read_marker(&w.marker()).unwrap();
        assert_eq!(read, m);
        assert_ne!(read, w.expected_marker(1_000_000, 16, 3_800));
        assert_ne!(read, w.expected_marker(50_000, 8, 3_800));
        std::fs::write(w.marker(), b"{not json").unwrap();
        assert_eq!(read_marker(&w.marker()), None);
    }
}
