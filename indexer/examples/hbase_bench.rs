//! Local-index search vs full-table scan on the HBase backend (test cluster).
//!
//! Loads the real news corpus (`tests/fetch-news.sh`) repeated with varied
//! URLs and dates into one `{source}_{yyyy}` table on the test cluster's
//! Thrift server (>= 100,000 pages), then times multi-attribute queries
//! through `Index::search` (local index rows, one short range per bucket)
//! against `Index::full_scan_search` (every data row, same conditions), checks
//! both give the same hits, and prints p50 latencies and their ratio.
//!
//! `cargo run --release -p harvest-indexer --features cluster --example hbase_bench`
//! (env `BENCH_COPIES`, default 27 copies of the 3,824 articles = 103,248 pages).

#[path = "../tests/util/mod.rs"]
mod util;

use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::{Datelike, TimeZone, Utc};
use indexer::{HbaseOptions, HbaseStore, Index, IndexOptions, PageRecord, Query};
use testcluster::TestCluster;

/// Source (site group) of the benchmark table.
const SOURCE: &str = "bench_news";
/// Year every copy is moved into (one table: `bench_news_2017`).
const YEAR: i32 = 2017;
const DEFAULT_COPIES: usize = 27;
const BUCKETS: u8 = 16;
const INDEX_CHUNK: usize = 2_000;
const SEARCH_RUNS: usize = 9;
const SCAN_RUNS: usize = 3;

/// Copy `c` of a page: its own URL, moved into `YEAR` and shifted by `c * 13` days.
fn variant(p: &PageRecord, c: usize) -> Option<PageRecord> {
    let mut p = p.clone();
    let shift = |t: chrono::DateTime<Utc>| -> Option<chrono::DateTime<Utc>> {
        let day = (t.ordinal0() as i64 + c as i64 * 13) % 365;
        let base = Utc.with_ymd_and_hms(YEAR, 1, 1, 0, 0, 0).single()?;
        Some(
            base + chrono::Duration::days(day)
                + (t - t.date_naive().and_hms_opt(0, 0, 0)?.and_utc()),
        )
    };
    p.fetched = shift(p.fetched)?;
    p.published = match p.published {
        Some(t) => Some(shift(t)?),
        None => None,
    };
    p.url = format!("{}?copy={c}", p.url);
    p.source = SOURCE.to_owned();
    p.record_id = format!("{}-{c}", p.record_id);
    Some(p)
}

fn p50(mut d: Vec<Duration>) -> Duration {
    d.sort();
    d[d.len() / 2]
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let copies: usize = std::env::var("BENCH_COPIES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(DEFAULT_COPIES);
    let started = Instant::now();
    let cluster = TestCluster::start()?;
    println!(
        "cluster ready in {:.1} s (thrift {})",
        started.elapsed().as_secs_f64(),
        cluster.thrift
    );
    let store = Arc::new(HbaseStore::connect(
        &cluster.thrift,
        HbaseOptions::default(),
    )?);
    let index = Index::new(store.clone(), IndexOptions { buckets: BUCKETS })?;

    let corpus = util::news_pages();
    let pages: Vec<PageRecord> = (0..copies)
        .flat_map(|c| corpus.iter().filter_map(move |p| variant(p, c)))
        .collect();
    let t = Instant::now();
    for chunk in pages.chunks(INDEX_CHUNK) {
        index.index_pages(chunk)?;
    }
    let load = t.elapsed();
    println!(
        "indexed {} pages into {SOURCE}_{YEAR} in {:.1} s ({:.0} pages/s; {} mutateRows calls)",
        pages.len(),
        load.as_secs_f64(),
        pages.len() as f64 / load.as_secs_f64(),
        store.stats().mutate_calls
    );

    let from = Utc
        .with_ymd_and_hms(YEAR, 2, 1, 0, 0, 0)
        .single()
        .ok_or("date")?;
    let to = Utc
        .with_ymd_and_hms(YEAR, 5, 1, 0, 0, 0)
        .single()
        .ok_or("date")?;
    let queries: Vec<(&str, Query)> = [
        ("military + trump, Feb-Apr", "military", "trump", None),
        (
            "politics + president, comments>=20",
            "politics",
            "president",
            Some(20),
        ),
    ]
    .into_iter()
    .map(|(name, topic, kw, min_c)| {
        let mut q = Query::new(&[SOURCE], from, to);
        q.topics.push(topic.to_owned());
        q.keywords.push(kw.to_owned());
        q.min_comments = min_c;
        (name, q)
    })
    .collect();

    println!(
        "{:<38} {:>6} {:>12} {:>12} {:>8}",
        "query", "hits", "index p50", "scan p50", "ratio"
    );
    let mut ratios = Vec::new();
    for (name, q) in &queries {
        let reference = index.full_scan_search(q)?;
        let mut fast = Vec::new();
        for _ in 0..SEARCH_RUNS {
            let t = Instant::now();
            let hits = index.search(q)?;
            fast.push(t.elapsed());
            if hits != reference {
                return Err(format!("{name}: index search differs from the full scan").into());
            }
        }
        let mut slow = Vec::new();
        for _ in 0..SCAN_RUNS {
            let t = Instant::now();
            let hits = index.full_scan_search(q)?;
            slow.push(t.elapsed());
            if hits.len() != reference.len() {
                return Err(format!("{name}: full scan not repeatable").into());
            }
        }
        let (f, s) = (p50(fast), p50(slow));
        let ratio = s.as_secs_f64() / f.as_secs_f64();
        ratios.push(ratio);
        println!(
            "{name:<38} {:>6} {:>9.1} ms {:>9.1} ms {:>7.1}x",
            reference.len(),
            f.as_secs_f64() * 1e3,
            s.as_secs_f64() * 1e3,
            ratio
        );
    }
    ratios.sort_by(f64::total_cmp);
    println!(
        "median ratio full scan / local index: {:.1}x (goal >= 10x)",
        ratios[ratios.len() / 2]
    );
    Ok(())
}
