//! Paged search and statistics at 1,000,000 pages (embedded store) beside a
//! full scan of the same question.
//!
//! **Bulk loader.** The 3,824 real NewsArticles records (`tests/fetch-news.sh`)
//! are repeated with varied fields until `BENCH_PAGES` pages (default
//! 1,000,000) are stored in a temp dir: copy `c` of an article gets its own
//! URL (`?copy=c`), a day drawn from a seeded RNG across 2017-2018 (time of
//! day kept), the source named after its outlet (9 outlets -> 9 sources, 18
//! tables), and a comment count drawn from the RNG (absent for 1 in 8).
//! Topics, keywords, near-duplicate links and the rest come from the corpus
//! records as the tests derive them. The rows come from
//! `Index::rows_for_new_pages` and are written per table with
//! `EmbeddedStore::ingest` (one sorted run per table and family, no journal);
//! the live path (`index_pages`) does ~2,500 pages/s here, too slow for 1 M.
//!
//! Then, for five realistic filter sets, it prints p50/p99 of
//! `search_page` (limit 20, newest first) and of `stats` (day buckets in
//! Asia/Shanghai, grouped by topic, empty buckets filled), beside one
//! `full_scan_search_page` / `full_scan_stats` of the same question, checks
//! the answers are equal, and prints the ratios.
//!
//! `cargo run --release -p indexer --example scale_bench`
//! (env `BENCH_PAGES`, `BENCH_DIR` to keep/reuse a loaded store;
//! `BENCH_STATS_ONLY=1` times `stats` alone, without the full scans, for
//! quick iterations; `BENCH_FILTER=text` runs only the filter sets whose
//! name contains it).

#[path = "../tests/util/mod.rs"]
mod util;

use std::collections::BTreeMap;

use rayon::prelude::*;
use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::{TimeZone, Utc};
use indexer::{
    Durability, EmbeddedOptions, EmbeddedStore, GroupBy, Index, IndexOptions, Interval, PageRecord,
    Query, Row, Sort, StatsQuery, Zone,
};

const DEFAULT_PAGES: usize = 1_000_000;
const BATCH: usize = 20_000;
const SEARCH_RUNS: usize = 41;
const STATS_RUNS: usize = 21;
const SEED: u64 = 0x5ca1e;
/// Days in 2017-2018.
const DAYS: u64 = 730;

/// xorshift64* generator (seeded, reproducible).
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}

/// `www.aljazeera.com` -> `aljazeera`, `europe.chinadaily.com.cn` -> `chinadaily`.
fn source_of(host: &str) -> String {
    let parts: Vec<&str> = host.split('.').collect();
    let name = match parts.as_slice() {
        ["www", name, ..] | ["europe", name, ..] => name,
        [name, ..] => name,
        [] => "unknown",
    };
    name.chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .collect::<String>()
        .to_lowercase()
}

fn variant(p: &PageRecord, c: usize, rng: &mut Rng) -> PageRecord {
    let mut p = p.clone();
    let start = Utc
        .with_ymd_and_hms(2017, 1, 1, 0, 0, 0)
        .single()
        .unwrap_or_default();
    let day = chrono::Duration::days((rng.next() % DAYS) as i64);
    let t = p.key_time();
    let tod = t - t
        .date_naive()
        .and_hms_opt(0, 0, 0)
        .unwrap_or_default()
        .and_utc();
    let key = start + day + tod;
    let shift = key - t;
    p.published = p.published.map(|x| x + shift);
    p.fetched += shift;
    p.url = format!("{}?copy={c}", p.url);
    p.record_id = format!("{}-{c}", p.record_id);
    p.source = source_of(p.media.as_deref().unwrap_or("unknown"));
    p.comments = (!rng.next().is_multiple_of(8)).then(|| {
        // heavy tail: most pages few comments, some many
        let r = rng.next() % 1000;
        r * r / 2000
    });
    p.near_duplicate_of = p.near_duplicate_of.map(|u| format!("{u}?copy={c}"));
    p
}

fn pct(d: &mut [Duration], p: f64) -> Duration {
    d.sort();
    d[((d.len() - 1) as f64 * p).round() as usize]
}

/// CPU time (user + system) of this process so far, from `/proc/self/stat`
/// (Linux; `None` elsewhere): on a shared machine it shows the work done,
/// whatever the wall clock says.
fn cpu_ms() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the parenthesised command name; utime and stime are the
    // 12th and 13th of them, in clock ticks (100 per second on Linux).
    let rest = stat.rsplit_once(')')?.1;
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?;
    Some(ticks * 10.0)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn load(
    index: &Index,
    store: &EmbeddedStore,
    total: usize,
) -> Result<(), Box<dyn std::error::Error>> {
    let corpus = util::news_pages();
    let mut rng = Rng(SEED);
    let started = Instant::now();
    let mut by_table: BTreeMap<String, Vec<Row>> = BTreeMap::new();
    let mut batch = Vec::with_capacity(total);
    let mut done = 0usize;
    'outer: for c in 0.. {
        for p in &corpus {
            if done == total {
                break 'outer;
            }
            batch.push(variant(p, c, &mut rng));
            done += 1;
        }
    }
    let parts = batch
        .par_chunks(BATCH)
        .map(|chunk| index.rows_for_new_pages(chunk))
        .collect::<Result<Vec<_>, _>>()?;
    drop(batch);
    for part in parts {
        for (t, rows) in part {
            by_table.entry(t).or_default().extend(rows);
        }
    }
    println!(
        "  built rows of {done} pages in {:.0} s",
        started.elapsed().as_secs_f64()
    );
    by_table
        .into_par_iter()
        .try_for_each(|(t, rows)| store.ingest(&t, &rows))?;
    let secs = started.elapsed().as_secs_f64();
    println!(
        "loaded {done} pages in {secs:.1} s ({:.0} pages/s)",
        done as f64 / secs
    );
    Ok(())
}

fn day(y: i32, m: u32, d: u32) -> chrono::DateTime<Utc> {
    Utc.with_ymd_and_hms(y, m, d, 0, 0, 0)
        .single()
        .unwrap_or_default()
}

fn filter_sets() -> Vec<(&'static str, Query)> {
    let mut v = Vec::new();
    let q = Query::new(&["bbc"], day(2018, 12, 1), day(2019, 1, 1));
    v.push(("bbc, Dec 2018", q));
    let mut q = Query::new(&[], day(2018, 1, 1), day(2019, 1, 1));
    q.topics = vec!["military".into()];
    v.push(("military, 2018, all sources", q));
    let mut q = Query::new(&[], day(2017, 1, 1), day(2019, 1, 1));
    q.topics = vec!["politics".into()];
    q.keywords = vec!["trump".into()];
    q.min_comments = Some(100);
    v.push(("politics+trump+comments>=100, 2y", q));
    let mut q = Query::new(
        &["aljazeera", "dw", "rte"],
        day(2018, 1, 1),
        day(2018, 4, 1),
    );
    q.keywords_any = vec!["syria".into(), "russia".into(), "iran".into()];
    q.collapse_near_duplicates = true;
    v.push(("3 sources, any(syria,russia,iran), Q1 2018, collapsed", q));
    let mut q = Query::new(&[], day(2017, 1, 1), day(2019, 1, 1));
    q.keywords = vec!["brexit".into()];
    v.push(("brexit, 2y, all sources", q));
    v
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let total: usize = std::env::var("BENCH_PAGES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(DEFAULT_PAGES);
    let tmp = tempfile::tempdir()?;
    let dir = std::env::var("BENCH_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|_| tmp.path().to_path_buf());
    let fresh = !dir.join("_loaded").exists();
    let store = Arc::new(EmbeddedStore::open_with(
        &dir,
        EmbeddedOptions {
            durability: Durability::Process,
        },
    )?);
    let index = Index::new(store.clone(), IndexOptions::default())?;
    if fresh {
        load(&index, &store, total)?;
        std::fs::write(dir.join("_loaded"), total.to_string())?;
    } else {
        println!("reusing the store in {}", dir.display());
    }
    let shanghai = Zone::parse("Asia/Shanghai")?;
    println!(
        "{:<52} {:>9} {:>9} {:>10} {:>7} | {:>9} {:>9} {:>10} {:>7}",
        "filter set",
        "page p50",
        "p99",
        "full scan",
        "ratio",
        "stats p50",
        "p99",
        "full scan",
        "ratio"
    );
    let stats_only = std::env::var("BENCH_STATS_ONLY").is_ok_and(|v| v == "1");
    let only = std::env::var("BENCH_FILTER").unwrap_or_default();
    for (name, mut q) in filter_sets() {
        if !name.contains(only.as_str()) {
            continue;
        }
        if stats_only {
            let mut sq = StatsQuery::new(q.clone(), Interval::Day, Some(GroupBy::Topic));
            sq.tz = shanghai;
            sq.fill_empty = true;
            let mut stimes = Vec::new();
            let mut rows = Vec::new();
            let cpu0 = cpu_ms();
            for _ in 0..STATS_RUNS {
                let t = Instant::now();
                rows = index.stats(&sq)?;
                stimes.push(t.elapsed());
            }
            let cpu = cpu_ms().zip(cpu0).map(|(b, a)| (b - a) / STATS_RUNS as f64);
            let (s50, s99) = (pct(&mut stimes, 0.5), pct(&mut stimes, 0.99));
            let matched: u64 = rows.iter().map(|r| r.count).sum();
            println!(
                "{name:<52} stats {:>7.1}ms {:>7.1}ms cpu {:>6.1}ms/call ({matched} pages, {} rows, digest {:016x})",
                ms(s50),
                ms(s99),
                cpu.unwrap_or(f64::NAN),
                rows.len(),
                xxhash_rust::xxh3::xxh3_64(format!("{rows:?}").as_bytes())
            );
            continue;
        }
        q.limit = Some(20);
        q.sort = Sort::TimeDesc;
        let mut times = Vec::new();
        let mut page = None;
        for _ in 0..SEARCH_RUNS {
            let t = Instant::now();
            page = Some(index.search_page(&q)?);
            times.push(t.elapsed());
        }
        let t = Instant::now();
        let slow_page = index.full_scan_search_page(&q)?;
        let scan = t.elapsed();
        assert_eq!(
            page.as_ref().map(|p| &p.hits),
            Some(&slow_page.hits),
            "{name}: pages differ"
        );
        let (p50, p99) = (pct(&mut times, 0.5), pct(&mut times, 0.99));

        let mut sq = StatsQuery::new(q.clone(), Interval::Day, Some(GroupBy::Topic));
        sq.tz = shanghai;
        sq.fill_empty = true;
        let mut stimes = Vec::new();
        let mut rows = Vec::new();
        for _ in 0..STATS_RUNS {
            let t = Instant::now();
            rows = index.stats(&sq)?;
            stimes.push(t.elapsed());
        }
        let t = Instant::now();
        let slow_rows = index.full_scan_stats(&sq)?;
        let sscan = t.elapsed();
        assert_eq!(rows, slow_rows, "{name}: stats differ");
        let (s50, s99) = (pct(&mut stimes, 0.5), pct(&mut stimes, 0.99));
        let matched: u64 = rows.iter().map(|r| r.count).sum();
        println!(
            "{:<52} {:>7.1}ms {:>7.1}ms {:>8.0}ms {:>6.0}x | {:>7.1}ms {:>7.1}ms {:>8.0}ms {:>6.0}x  ({matched} pages, {} rows)",
            name,
            ms(p50),
            ms(p99),
            ms(scan),
            scan.as_secs_f64() / p50.as_secs_f64(),
            ms(s50),
            ms(s99),
            ms(sscan),
            sscan.as_secs_f64() / s50.as_secs_f64(),
            rows.len()
        );
    }
    Ok(())
}
