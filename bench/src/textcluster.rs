//! `harvest bench text-cluster`: the two designs for the cluster's text index measured on
//! one cluster with the same real texts (`NewsArticles.csv`, 3,824 articles of 9 outlets):
//!
//! * **splits** (what harvest ships, `indexer::text::split`): each write becomes small
//!   immutable tantivy indexes per (source, month) in HDFS, listed in an HBase manifest
//!   table, fetched into a local cache by the reader, BM25 over all of them;
//! * **posting rows** (the seed design's co-located postings): one HBase row per word, one
//!   cell per page holding it (value: the word's count in the page), written with the
//!   batch; a query gets the rows of its words and intersects their pages. No positions
//!   (no phrases) and no scores: the cheapest form of the design, so its figures are a
//!   lower bound of what it would cost.
//!
//! Printed per design: build time, pages/s, bytes per page in the cluster, and query
//! latency (p50 / p99 over the queries, each run `REPS` times), plus the splits' first query
//! on an empty cache (a query server that has just started). The splits are built twice:
//! with the articles in arrival order (each write holds pages of all 9 outlets, so makes
//! about 9 splits) and by outlet (each write one outlet's pages, as a crawl of one site).
//! `--copies N` indexes the corpus N times under other URLs.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use chrono::{TimeZone, Utc};
use indexer::text::split::SplitText;
use indexer::text::{TextQuery, TextScope, TextStore};
use indexer::{HbaseOptions, HbaseStore, Row, TableStore, TextDoc};
use rayon::prelude::*;

use crate::api::percentile;
use crate::cli::BenchArgs;

/// Pages per write: a crawl's storage batch.
const BATCH: usize = 100;
/// Runs of each query.
const REPS: usize = 5;
/// The posting rows' table and family.
const POSTINGS: &str = "bench_postings";
const FAMILY: &str = "p";

/// One design's figures.
struct Figures {
    design: &'static str,
    build: Duration,
    bytes: u64,
    latencies: Vec<Duration>,
    /// Pages found per query (the same order as the queries).
    found: Vec<usize>,
}

/// The texts as the pipeline indexes them: headline, subtitle and text of each article,
/// filed under its outlet and publish day.
fn documents(args: &BenchArgs) -> Result<Vec<TextDoc>> {
    let articles = harvest::newssite::read_articles(&args.news)?;
    if articles.is_empty() {
        bail!("{}: no articles", args.news.display());
    }
    let copies: Vec<(usize, &harvest::newssite::Article)> = (0..args.copies.max(1))
        .flat_map(|c| articles.iter().map(move |a| (c, a)))
        .collect();
    Ok(copies
        .par_iter()
        .map(|&(copy, a)| {
            let day = a
                .date
                .unwrap_or_else(|| chrono::NaiveDate::from_ymd_opt(2015, 1, 1).expect("date"));
            let time = Utc.from_utc_datetime(&day.and_hms_opt(12, 0, 0).expect("noon"));
            let text = format!("{}\n{}", a.subtitle, a.text);
            let url = match copy {
                0 => a.source_url.clone(),
                c => format!("{}#copy{c}", a.source_url),
            };
            TextDoc::new(
                &a.host.replace('.', "_"),
                time,
                &url,
                &a.title,
                tokens::Tokens::new(&text),
                TextDoc::han_of(&text),
            )
        })
        .collect())
}

/// The words of a document as the posting rows keep them (headline and text).
fn words(d: &TextDoc) -> HashMap<&str, u32> {
    let mut tf = HashMap::new();
    for w in d.title.iter().map(String::as_str).chain(d.body.iter()) {
        *tf.entry(w).or_insert(0) += 1;
    }
    tf
}

/// Ten queries: five words and five pairs of words (both must hold), by how many pages
/// hold them, from common to rare.
fn queries(docs: &[TextDoc]) -> Vec<Vec<String>> {
    let mut df: HashMap<&str, usize> = HashMap::new();
    for d in docs {
        for w in words(d).into_keys() {
            if w.chars().count() > 2 && w.chars().all(char::is_alphabetic) {
                *df.entry(w).or_insert(0) += 1;
            }
        }
    }
    let mut by_df: Vec<(&str, usize)> = df.into_iter().collect();
    by_df.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    let at = |i: usize| by_df[i.min(by_df.len() - 1)].0.to_string();
    let mut out: Vec<Vec<String>> = [10, 40, 160, 640, 2_560]
        .iter()
        .map(|&i| vec![at(i)])
        .collect();
    for (i, j) in [(5, 20), (30, 90), (60, 300), (100, 900), (200, 1_500)] {
        out.push(vec![at(i), at(j)]);
    }
    out
}

fn page_id(d: &TextDoc) -> Vec<u8> {
    let mut id = d.source.as_bytes().to_vec();
    id.push(0);
    id.extend_from_slice(&d.time.timestamp().to_be_bytes());
    id.extend_from_slice(&indexer::keys::url_hash(&d.url));
    id
}

/// Removes the manifest rows a run of the splits left (its files are in its own folder).
fn clear_manifest(tables: &dyn TableStore) -> Result<()> {
    let keys: Vec<Vec<u8>> = tables
        .scan(
            indexer::text::split::SPLITS_TABLE,
            &indexer::Scan::range(Vec::new(), Vec::new()),
        )?
        .into_iter()
        .map(|r| r.key)
        .collect();
    tables.delete(indexer::text::split::SPLITS_TABLE, &keys)?;
    Ok(())
}

fn splits(
    design: &'static str,
    docs: &[&TextDoc],
    queries: &[Vec<String>],
    tables: Arc<dyn TableStore>,
    packs: Arc<dyn packer::PackStore>,
) -> Result<(Figures, Duration, usize)> {
    let files = Arc::new(harvest::stores::PackSplitFiles(packs.clone()));
    let cache = tempfile::tempdir()?;
    let writer = SplitText::open(tables.clone(), files.clone(), cache.path())?;
    let batches: Vec<Vec<TextDoc>> = docs
        .chunks(BATCH)
        .map(|b| b.iter().map(|d| (*d).clone()).collect())
        .collect();
    let started = Instant::now();
    for batch in &batches {
        writer.write(batch)?;
    }
    let build = started.elapsed();
    let published = writer.splits()?.len();
    let bytes: u64 = packs
        .list("_text")
        .context("listing the splits")?
        .iter()
        .map(|e| e.len)
        .sum();
    let scope = TextScope {
        sources: Vec::new(),
        from: i64::MIN,
        to: i64::MAX,
    };
    let parsed: Vec<TextQuery> = queries
        .iter()
        .map(|q| TextQuery::parse(&q.join(" ")))
        .collect::<indexer::Result<_>>()?;
    // A query server that has just started: an empty cache, every split fetched.
    let cold_cache = tempfile::tempdir()?;
    let reader = SplitText::open(tables, files, cold_cache.path())?;
    let started = Instant::now();
    reader.search(&parsed[0], &scope)?;
    let cold = started.elapsed();
    let mut latencies = Vec::new();
    let mut found = Vec::new();
    for q in &parsed {
        let mut n = 0;
        for _ in 0..REPS {
            let started = Instant::now();
            n = reader.search(q, &scope)?.len();
            latencies.push(started.elapsed());
        }
        found.push(n);
    }
    Ok((
        Figures {
            design,
            build,
            bytes,
            latencies,
            found,
        },
        cold,
        published,
    ))
}

fn posting_rows(
    docs: &[TextDoc],
    queries: &[Vec<String>],
    tables: &dyn TableStore,
) -> Result<Figures> {
    if !tables.list_tables()?.iter().any(|t| t == POSTINGS) {
        tables.create_table(POSTINGS, &[FAMILY], 1)?;
    }
    let mut bytes = 0u64;
    let started = Instant::now();
    for batch in docs.chunks(BATCH) {
        let mut rows: BTreeMap<&str, Row> = BTreeMap::new();
        for d in batch {
            let id = page_id(d);
            for (w, n) in words(d) {
                let row = rows.entry(w).or_insert_with(|| Row::new(w.as_bytes()));
                row.cells
                    .push(indexer::Cell::new(FAMILY, id.clone(), n.to_be_bytes()));
            }
        }
        let rows: Vec<Row> = rows.into_values().collect();
        bytes += rows
            .iter()
            .flat_map(|r| {
                r.cells
                    .iter()
                    .map(|c| (r.key.len() + c.qualifier.len() + c.value.len()) as u64)
            })
            .sum::<u64>();
        tables.put(POSTINGS, &rows)?;
    }
    let build = started.elapsed();
    let mut latencies = Vec::new();
    let mut found = Vec::new();
    for q in queries {
        let keys: Vec<Vec<u8>> = q.iter().map(|w| w.as_bytes().to_vec()).collect();
        let mut n = 0;
        for _ in 0..REPS {
            let started = Instant::now();
            let rows = tables.get(POSTINGS, &keys, &[FAMILY])?;
            let mut pages: Option<HashSet<Vec<u8>>> = None;
            for row in rows {
                let these: HashSet<Vec<u8>> = row
                    .map(|r| r.cells.into_iter().map(|c| c.qualifier).collect())
                    .unwrap_or_default();
                pages = Some(match pages {
                    None => these,
                    Some(p) => p.intersection(&these).cloned().collect(),
                });
            }
            n = pages.map_or(0, |p| p.len());
            latencies.push(started.elapsed());
        }
        found.push(n);
    }
    Ok(Figures {
        design: "posting rows",
        build,
        bytes,
        latencies,
        found,
    })
}

/// Runs the benchmark on the cluster named by `--hdfs` and `--thrift`.
pub fn run(args: &BenchArgs) -> Result<()> {
    let (Some(hdfs), Some(thrift)) = (&args.hdfs, &args.thrift) else {
        bail!(
            "text-cluster needs --hdfs and --thrift (deploy/bench/text-cluster.sh starts the test cluster and passes them)"
        );
    };
    let docs = documents(args)?;
    let queries = queries(&docs);
    let root = format!(
        "{}/harvest-bench-text-{}",
        hdfs.trim_end_matches('/'),
        std::process::id()
    );
    let open = |dir: &str| {
        let path = format!("{root}/{dir}");
        packer::open_store_with(&path, &packer::OpenOptions::default())
            .with_context(|| format!("cannot open {path}"))
    };
    let tables: Arc<dyn TableStore> = Arc::new(
        HbaseStore::connect(
            thrift,
            HbaseOptions {
                admin: args.thrift2.clone(),
                ..HbaseOptions::default()
            },
        )
        .with_context(|| format!("cannot reach HBase Thrift at {thrift}"))?,
    );
    eprintln!(
        "harvest: {} pages, {} queries, writes of {BATCH} pages",
        docs.len(),
        queries.len()
    );
    let arrival: Vec<&TextDoc> = docs.iter().collect();
    let mut by_source = arrival.clone();
    by_source.sort_by(|a, b| (&a.source, a.time).cmp(&(&b.source, b.time)));
    let (ours, cold, published) =
        splits("splits", &arrival, &queries, tables.clone(), open("mixed")?)?;
    clear_manifest(tables.as_ref())?;
    let (one_source, _, one_source_published) = splits(
        "splits/outlet",
        &by_source,
        &queries,
        tables.clone(),
        open("by-outlet")?,
    )?;
    let peer = posting_rows(&docs, &queries, tables.as_ref())?;
    println!(
        "{:<13} {:>7} {:>8} {:>9} {:>11} {:>13} {:>13}",
        "design", "pages", "build s", "pages/s", "bytes/page", "query p50 ms", "query p99 ms"
    );
    for f in [&ours, &one_source, &peer] {
        let secs = f.build.as_secs_f64();
        println!(
            "{:<13} {:>7} {:>8.1} {:>9.0} {:>11.0} {:>13.1} {:>13.1}",
            f.design,
            docs.len(),
            secs,
            docs.len() as f64 / secs.max(1e-9),
            f.bytes as f64 / docs.len() as f64,
            percentile(&f.latencies, 0.5).as_secs_f64() * 1e3,
            percentile(&f.latencies, 0.99).as_secs_f64() * 1e3,
        );
    }
    println!(
        "splits: {published} published after the writes in arrival order, {one_source_published} by outlet (merged at {} a source and month)",
        indexer::text::split::MERGE_AT
    );
    println!(
        "splits: first query of a reader with an empty cache (every split fetched from HDFS): {:.0} ms",
        cold.as_secs_f64() * 1e3
    );
    println!(
        "pages found per query (splits, splits by outlet, posting rows; posting rows keep no possessive forms):"
    );
    for (i, q) in queries.iter().enumerate() {
        println!(
            "  {:<28} {:>6} {:>6} {:>6}",
            q.join(" "),
            ours.found[i],
            one_source.found[i],
            peer.found[i]
        );
    }
    Ok(())
}
