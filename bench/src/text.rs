//! `harvest bench text`: the embedded text index at a million pages beside SQLite FTS5
//! (Python's `sqlite3`) on the same texts and the same questions, in the same run.
//!
//! The archive is `harvest bench api`'s (`<dir>`, [`crate::api::loaded`]): the real news
//! articles crawled as a site, replicated to `HARVEST_BENCH_PAGES` pages (default
//! 1,000,000) over 2017-2018, each copy's words (the article's headline and text, as the
//! crawl extracted them) in the text index beside its rows.
//!
//! Questions: ten text queries made from the corpus's own words (four words from common to
//! rare, two phrases, `OR`, an exclusion, `title:`, two words), each
//! * alone (20 hits, newest first: `Index::search_page`, as the API and `query` ask),
//! * alone, the 20 most relevant (BM25; FTS5's `ORDER BY rank`),
//! * with a source, a quarter and a topic (the most common source and topic), and
//! * as `stats`: mentions per day over 2018.
//!
//! Each is timed `RUNS` times after `WARMUPS`; p50 and p99 over all queries. FTS5 gets
//! the same pages (rowid, source, time, topic in a table beside a contentless FTS5 table
//! of headline and text, the text given as harvest's tokens joined by spaces, so both
//! segment alike) and answers the same questions in SQL. The pages each question matches
//! are printed for both (harvest also finds an English possessive under its stem).

use std::collections::{BTreeMap, HashMap};
use std::io::Write;
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use indexer::{GroupBy, Interval, PageRecord, Query, Sort, StatsQuery};
use serde::Serialize;

use crate::api::percentile;
use crate::cli::BenchArgs;
use harvest::filters::FilterSpec;
use harvest::stores::Stores;

/// Untimed runs of each question.
const WARMUPS: usize = 2;
/// Timed runs of each question.
const RUNS: usize = 11;
/// Hits per search.
const LIMIT: usize = 20;
/// The peer's script.
const PEER_SCRIPT: &str = "deploy/bench/fts5_peer.py";
/// The goal of the issue: p50 below this many milliseconds.
const GOAL_P50_MS: f64 = 50.0;

/// One text query in both languages.
#[derive(Debug, Clone, Serialize)]
struct TextCase {
    /// harvest's query language.
    harvest: String,
    /// FTS5's MATCH expression.
    fts5: String,
}

/// The filter part of the combined questions.
#[derive(Debug, Clone, Serialize)]
struct Combined {
    source: String,
    topic: String,
    /// Unix seconds, `[from, to)`.
    from: i64,
    to: i64,
}

/// What the peer is given.
#[derive(Debug, Serialize)]
struct PeerInput<'a> {
    texts: &'a Path,
    pages: &'a Path,
    db: &'a Path,
    queries: &'a [TextCase],
    combined: &'a Combined,
    /// Unix seconds of 2018's first and last instant + 1 (the stats' year).
    year: (i64, i64),
    warmups: usize,
    runs: usize,
    limit: usize,
}

fn timed(mut f: impl FnMut() -> Result<u64>) -> Result<(Vec<Duration>, u64)> {
    let mut n = 0;
    for _ in 0..WARMUPS {
        n = f()?;
    }
    let mut times = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        let t = Instant::now();
        n = f()?;
        times.push(t.elapsed());
    }
    Ok((times, n))
}

fn dir_bytes(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|e| match e.file_type() {
            Ok(t) if t.is_dir() => dir_bytes(&e.path()),
            _ => e.metadata().map(|m| m.len()).unwrap_or(0),
        })
        .sum()
}

/// The URL of the article a copy was made of (`…?copy=N` or `…&copy=N` cut off).
fn article_url(url: &str) -> &str {
    match url.rfind("copy=") {
        Some(i) if i > 0 && matches!(&url[i - 1..i], "?" | "&") => &url[..i - 1],
        _ => url,
    }
}

/// Ten questions from the corpus's words: by how many articles hold them.
fn text_cases(texts: &[(String, String)]) -> Result<Vec<TextCase>> {
    let mut df: HashMap<&str, usize> = HashMap::new();
    let mut title_df: HashMap<&str, usize> = HashMap::new();
    let mut pairs: HashMap<(&str, &str), usize> = HashMap::new();
    let plain = |w: &str| w.chars().count() > 3 && w.chars().all(char::is_alphabetic);
    for (title, body) in texts {
        let words: Vec<&str> = body.split(' ').filter(|w| !w.is_empty()).collect();
        let mut seen: Vec<&str> = words.iter().copied().filter(|w| plain(w)).collect();
        seen.sort_unstable();
        seen.dedup();
        for w in seen {
            *df.entry(w).or_insert(0) += 1;
        }
        let mut seen_pairs: Vec<(&str, &str)> = words
            .windows(2)
            .map(|p| (p[0], p[1]))
            .filter(|(a, b)| plain(a) && plain(b))
            .collect();
        seen_pairs.sort_unstable();
        seen_pairs.dedup();
        for p in seen_pairs {
            *pairs.entry(p).or_insert(0) += 1;
        }
        let mut tw: Vec<&str> = title.split(' ').filter(|w| plain(w)).collect();
        tw.sort_unstable();
        tw.dedup();
        for w in tw {
            *title_df.entry(w).or_insert(0) += 1;
        }
    }
    fn ranked<K: Ord + Copy>(m: HashMap<K, usize>) -> Vec<K> {
        let mut v: Vec<(K, usize)> = m.into_iter().collect();
        v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        v.into_iter().map(|(k, _)| k).collect()
    }
    let words = ranked(df);
    let pairs = ranked(pairs);
    let titles = ranked(title_df);
    if words.len() < 2_000 || pairs.len() < 100 || titles.len() < 20 {
        bail!("the corpus has too few distinct words to make the questions");
    }
    let w = |i: usize| words[i].to_string();
    let word = |x: String| TextCase {
        fts5: format!("\"{x}\""),
        harvest: x,
    };
    let phrase = |(a, b): (&str, &str)| TextCase {
        harvest: format!("\"{a} {b}\""),
        fts5: format!("\"{a} {b}\""),
    };
    Ok(vec![
        word(w(20)),
        word(w(100)),
        word(w(400)),
        word(w(1_600)),
        phrase(pairs[10]),
        phrase(pairs[80]),
        TextCase {
            harvest: format!("{} OR {}", w(60), w(300)),
            fts5: format!("\"{}\" OR \"{}\"", w(60), w(300)),
        },
        TextCase {
            harvest: format!("{} -{}", w(30), w(10)),
            fts5: format!("\"{}\" NOT \"{}\"", w(30), w(10)),
        },
        TextCase {
            harvest: format!("title:{}", titles[15]),
            fts5: format!("title : \"{}\"", titles[15]),
        },
        TextCase {
            harvest: format!("{} {}", w(50), w(200)),
            fts5: format!("\"{}\" AND \"{}\"", w(50), w(200)),
        },
    ])
}

/// Every page of the loaded archive, newest versions only (the bench loads no revisits).
fn all_pages(stores: &Stores) -> Result<Vec<PageRecord>> {
    let all = Query::new(
        &[],
        chrono::DateTime::<chrono::Utc>::MIN_UTC,
        chrono::DateTime::<chrono::Utc>::MAX_UTC,
    );
    Ok(stores
        .index
        .full_scan_search(&all)?
        .into_iter()
        .map(|h| h.page)
        .collect())
}

/// Each article's (headline, text) tokens joined by spaces, and the two files written.
struct PeerFiles {
    texts: Vec<(String, String)>,
    texts_path: std::path::PathBuf,
    pages_path: std::path::PathBuf,
}

/// Writes the peer's input: each article's headline and text tokens (`texts.tsv`: one
/// line per article) and each page's article, source, time and topic (`pages.tsv`).
fn peer_files(stores: &Stores, pages: &[PageRecord], dir: &Path) -> Result<PeerFiles> {
    // One page per article: its words read back from the seed packs.
    let mut first: BTreeMap<&str, &PageRecord> = BTreeMap::new();
    for p in pages {
        first.entry(article_url(&p.url)).or_insert(p);
    }
    let articles: Vec<(&str, &PageRecord)> = first.into_iter().collect();
    let texts: Vec<(String, String)> = {
        use rayon::prelude::*;
        articles
            .par_iter()
            .map(|(_, p)| -> Result<(String, String)> {
                let words = harvest::read::page_words(stores, p)?;
                Ok((
                    words.title.join(" "),
                    words.body.iter().collect::<Vec<_>>().join(" "),
                ))
            })
            .collect::<Result<_>>()?
    };
    let index_of: HashMap<&str, usize> = articles
        .iter()
        .enumerate()
        .map(|(i, (u, _))| (*u, i))
        .collect();
    std::fs::create_dir_all(dir)?;
    let texts_path = dir.join("texts.tsv");
    let mut w = std::io::BufWriter::new(std::fs::File::create(&texts_path)?);
    for (t, b) in &texts {
        writeln!(
            w,
            "{}\t{}",
            t.replace(['\t', '\n'], " "),
            b.replace(['\t', '\n'], " ")
        )?;
    }
    w.flush()?;
    let pages_path = dir.join("pages.tsv");
    let mut w = std::io::BufWriter::new(std::fs::File::create(&pages_path)?);
    for p in pages {
        let a = index_of[article_url(&p.url)];
        writeln!(
            w,
            "{a}\t{}\t{}\t{}",
            p.source,
            p.key_time().timestamp(),
            p.topic
        )?;
    }
    w.flush()?;
    Ok(PeerFiles {
        texts,
        texts_path,
        pages_path,
    })
}

fn most_common<'a>(values: impl Iterator<Item = &'a str>) -> Option<String> {
    let mut n: HashMap<&str, usize> = HashMap::new();
    for v in values {
        *n.entry(v).or_insert(0) += 1;
    }
    n.into_iter()
        .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(a.0)))
        .map(|(v, _)| v.to_string())
}

/// One kind of question's timings and matches over all queries.
#[derive(Default)]
struct Side {
    times: Vec<Duration>,
    found: Vec<u64>,
}

impl Side {
    fn p(&self, q: f64) -> f64 {
        percentile(&self.times, q).as_secs_f64() * 1e3
    }
}

/// Runs the benchmark and prints harvest's figures beside FTS5's.
pub fn run(args: &BenchArgs) -> Result<()> {
    let rt = harvest::runtime()?;
    let (stores, marker) = crate::api::loaded(args, &rt)?;
    let dir = args.dir.canonicalize()?;
    let load: crate::api::TextLoad = serde_json::from_slice(
        &std::fs::read(dir.join(crate::api::TEXT_LOAD)).context("the text index's load figures")?,
    )?;
    let text_bytes = dir_bytes(&dir.join("index").join(harvest::stores::TEXT_FOLDER));
    eprintln!("harvest: reading every page of the archive (for the peer's input)");
    let pages = all_pages(&stores)?;
    let PeerFiles {
        texts,
        texts_path,
        pages_path,
    } = peer_files(&stores, &pages, &dir.join("fts5"))?;
    let cases = text_cases(&texts)?;
    let combined = Combined {
        source: most_common(pages.iter().map(|p| p.source.as_str())).unwrap_or_default(),
        topic: most_common(pages.iter().map(|p| p.topic.as_str())).unwrap_or_default(),
        from: chrono::NaiveDate::from_ymd_opt(2018, 1, 1)
            .and_then(|d| d.and_hms_opt(0, 0, 0))
            .map(|t| t.and_utc().timestamp())
            .unwrap_or_default(),
        to: chrono::NaiveDate::from_ymd_opt(2018, 4, 1)
            .and_then(|d| d.and_hms_opt(0, 0, 0))
            .map(|t| t.and_utc().timestamp())
            .unwrap_or_default(),
    };
    let year = (
        combined.from,
        chrono::NaiveDate::from_ymd_opt(2019, 1, 1)
            .and_then(|d| d.and_hms_opt(0, 0, 0))
            .map(|t| t.and_utc().timestamp())
            .unwrap_or_default(),
    );
    drop(pages);

    // harvest, through the command line's filters.
    let (mut alone, mut with, mut stats) = (Side::default(), Side::default(), Side::default());
    let mut ranked = Side::default();
    for c in &cases {
        let spec = FilterSpec {
            text: Some(c.harvest.clone()),
            tz: "UTC".into(),
            ..Default::default()
        };
        let (mut q, tz) = spec
            .build(Some(LIMIT), harvest::serve::MAX_LIMIT)
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        q.sort = Sort::TimeDesc;
        let zone = tz;
        let count = |q: &Query| -> Result<u64> {
            let mut all = q.clone();
            all.limit = None;
            let rows = stores.index.stats(&StatsQuery {
                query: all,
                interval: Interval::Year,
                group_by: None,
                tz: zone,
                fill_empty: false,
                bounds: indexer::Bounds::default(),
            })?;
            Ok(rows.iter().map(|r| r.count).sum())
        };
        let (t, _) = timed(|| Ok(stores.index.search_page(&q)?.hits.len() as u64))?;
        alone.times.extend(t);
        alone.found.push(count(&q)?);
        // The 20 most relevant (BM25), however many match.
        let mut qr = q.clone();
        qr.sort = Sort::Relevance;
        let (t, n) = timed(|| Ok(stores.index.search_page(&qr)?.hits.len() as u64))?;
        ranked.times.extend(t);
        ranked.found.push(n);
        let mut qc = q.clone();
        qc.sources = vec![combined.source.clone()];
        qc.topics = vec![combined.topic.clone()];
        qc.from = chrono::DateTime::from_timestamp(combined.from, 0).unwrap_or_default();
        qc.to = chrono::DateTime::from_timestamp(combined.to, 0).unwrap_or_default();
        let (t, _) = timed(|| Ok(stores.index.search_page(&qc)?.hits.len() as u64))?;
        with.times.extend(t);
        with.found.push(count(&qc)?);
        let mut qy = q.clone();
        qy.limit = None;
        qy.from = chrono::DateTime::from_timestamp(year.0, 0).unwrap_or_default();
        qy.to = chrono::DateTime::from_timestamp(year.1, 0).unwrap_or_default();
        let sq = StatsQuery {
            query: qy,
            interval: Interval::Day,
            group_by: None::<GroupBy>,
            tz,
            fill_empty: true,
            bounds: indexer::Bounds {
                from: true,
                to: true,
            },
        };
        let (t, n) = timed(|| Ok(stores.index.stats(&sq)?.iter().map(|r| r.count).sum()))?;
        stats.times.extend(t);
        stats.found.push(n);
    }

    // The peer.
    // sqlite3 is in Python's standard library: the system's Python will do.
    let python = if args.python.exists() {
        args.python.clone()
    } else {
        std::path::PathBuf::from("python3")
    };
    let python = python.as_path();
    let peer = if python.exists() || python == Path::new("python3") {
        let input = dir.join("fts5").join("input.json");
        let db = dir.join("fts5").join("pages.db");
        let data = PeerInput {
            texts: &texts_path,
            pages: &pages_path,
            db: &db,
            queries: &cases,
            combined: &combined,
            year,
            warmups: WARMUPS,
            runs: RUNS,
            limit: LIMIT,
        };
        std::fs::write(&input, serde_json::to_vec(&data)?)?;
        let script = std::fs::read_to_string(PEER_SCRIPT)
            .with_context(|| format!("cannot read {PEER_SCRIPT} (run from the repository)"))?;
        Some(crate::run_python_peer(
            python,
            &script,
            &[input.as_path()],
            "sqlite3 (standard library)",
        )?)
    } else {
        eprintln!(
            "harvest: {} missing: the FTS5 peer is skipped (deploy/data/setup-peers.sh sets it up)",
            python.display()
        );
        None
    };
    let pf = |k: &str| peer.as_ref().and_then(|p| p[k].as_f64());
    let pv = |k: &str, i: usize| {
        peer.as_ref()
            .and_then(|p| p[k][i].as_u64())
            .map_or("-".to_string(), |n| n.to_string())
    };
    let show = |v: Option<f64>, digits: usize| v.map_or("-".into(), |x| format!("{x:.digits$}"));

    let pages = marker.pages as f64;
    println!(
        "text index: harvest (tantivy, embedded) vs SQLite FTS5 {} (Python sqlite3), same run, {} pages",
        peer.as_ref()
            .and_then(|p| p["sqlite_version"].as_str())
            .unwrap_or("-"),
        marker.pages
    );
    println!("{:<36} {:>12} {:>12}", "", "harvest", "FTS5");
    println!(
        "{:<36} {:>12.0} {:>12}",
        "build pages/s",
        load.pages as f64 / load.secs.max(1e-9),
        show(pf("build_pages_per_s"), 0)
    );
    println!(
        "{:<36} {:>12.0} {:>12}",
        "bytes per page",
        text_bytes as f64 / pages,
        show(pf("bytes").map(|b| b / pages), 0)
    );
    for (name, side, key) in [
        ("alone (20 newest)", &alone, "alone"),
        ("alone (20 most relevant)", &ranked, "relevance"),
        ("+ source, quarter, topic", &with, "combined"),
        ("stats: per day over 2018", &stats, "stats"),
    ] {
        println!(
            "{:<36} {:>12.1} {:>12}",
            format!("{name} p50 ms"),
            side.p(0.5),
            show(pf(&format!("{key}_p50_ms")), 1)
        );
        println!(
            "{:<36} {:>12.1} {:>12}",
            format!("{name} p99 ms"),
            side.p(0.99),
            show(pf(&format!("{key}_p99_ms")), 1)
        );
    }
    println!(
        "goal: p50 < {GOAL_P50_MS:.0} ms: alone {}, combined {}, stats {}",
        if alone.p(0.5) < GOAL_P50_MS {
            "met"
        } else {
            "NOT met"
        },
        if with.p(0.5) < GOAL_P50_MS {
            "met"
        } else {
            "NOT met"
        },
        if stats.p(0.5) < GOAL_P50_MS {
            "met"
        } else {
            "NOT met"
        },
    );
    println!(
        "combined: source {}, topic {}, 2018-01-01..2018-03-31",
        combined.source, combined.topic
    );
    println!(
        "{:<30} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}",
        "pages matched", "alone", "FTS5", "combined", "FTS5", "2018", "FTS5"
    );
    for (i, c) in cases.iter().enumerate() {
        println!(
            "{:<30} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}",
            c.harvest,
            alone.found[i],
            pv("alone_found", i),
            with.found[i],
            pv("combined_found", i),
            stats.found[i],
            pv("stats_found", i)
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_copy_names_its_article() {
        assert_eq!(article_url("http://h/a?copy=3"), "http://h/a");
        assert_eq!(article_url("http://h/a?x=1&copy=12"), "http://h/a?x=1");
        assert_eq!(article_url("http://h/a"), "http://h/a");
        assert_eq!(article_url("http://h/scopy=1"), "http://h/scopy=1");
    }
}
