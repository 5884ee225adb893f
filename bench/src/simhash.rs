//! `harvest bench simhash`: near-duplicate detection (issue 12) beside its
//! peers, measured in the same run.
//!
//! 1. Fingerprinting speed (MB/s of article text, one thread): our SimHash
//!    (`classifier::simhash`: jieba / Unicode words, 2-word shingles) vs the
//!    Python `simhash` library from PyPI (pinned in
//!    `deploy/data/setup-peers.sh`), on the same real texts: English
//!    NewsArticles and Chinese People's Daily articles; the peer both with its
//!    default features (character 4-grams) and with jieba words.
//! 2. Accuracy on the repost set of `tests/neardup.rs` (the same pages,
//!    texts extracted by the crawler): our fingerprints vs the peer's
//!    (default features) on the same texts, precision / recall / F1 at k = 3.
//! 3. All pairs within k = 3 among 1,000,000 fingerprints: our multi-index
//!    (`indexer::neardup::all_pairs`) vs a brute-force pass (on a sample,
//!    extrapolated by n²) vs the peer's `SimhashIndex` (on a sample,
//!    extrapolated linearly, which favours it). The fingerprints: those of
//!    the real articles and pages above, 20% of the million as reposts of
//!    them (0-4 bits flipped, the spread seen in the accuracy set), the
//!    rest distinct pages (uniform 64-bit values: SimHashes of unrelated
//!    texts are ~32 bits apart). Pairs found are checked against the brute
//!    force on its sample.
//! 4. The same fingerprints through the archive's own index
//!    (`Index::link_near_duplicates` on the embedded store, batches of
//!    256 pages, as at ingest): pages/s.

use std::path::Path;
use std::time::Instant;

use anyhow::{bail, Context, Result};

use crate::cli::BenchArgs;
use crate::reposts::{self, Rng, Story};
use indexer::neardup::{all_pairs, all_pairs_brute_force, DEFAULT_DISTANCE};

/// Fingerprints of the all-pairs benchmark (env overrides the million).
const PAIRS_ENV: &str = "HARVEST_BENCH_SIMHASHES";
/// Brute-force sample.
const BRUTE_SAMPLE: usize = 40_000;
/// Peer index sample.
const PEER_SAMPLE: usize = 20_000;
/// Pages linked through the embedded index.
const INDEX_PAGES: usize = 200_000;

/// The peer: reads a JSON object {"texts": {"en": [...], "zh": [...]},
/// "pages": [...], "fingerprints": [...]} on the file named by argv[1],
/// prints one JSON line of results.
const PEER_SCRIPT: &str = r#"
import json, sys, time
import simhash
from simhash import Simhash, SimhashIndex
try:
    from importlib.metadata import version
    peer_version = version("simhash")
except Exception:
    peer_version = "?"
data = json.load(open(sys.argv[1], encoding="utf-8"))
out = {"version": peer_version}
def speed(texts, features):
    total = sum(len(t.encode("utf-8")) for t in texts)
    rounds, t0 = 0, time.perf_counter()
    while True:
        for t in texts:
            Simhash(features(t))
        rounds += 1
        el = time.perf_counter() - t0
        if el >= 2.0:
            return total * rounds / el / 1e6
for lang, texts in data["texts"].items():
    out["mbps_" + lang] = speed(texts, lambda t: t)
try:
    import jieba
    jieba.setLogLevel(60)
    jieba.initialize()
    out["mbps_zh_jieba"] = speed(data["texts"]["zh"], lambda t: jieba.lcut(t))
except ImportError:
    out["mbps_zh_jieba"] = None
out["pages"] = ["%016x" % Simhash(t).value for t in data["pages"]]
fps = [int(h, 16) for h in data["fingerprints"]]
t0 = time.perf_counter()
objs = [(str(i), Simhash(v)) for i, v in enumerate(fps)]
index = SimhashIndex(objs, k=3)
built = time.perf_counter() - t0
pairs = 0
for i, v in enumerate(fps):
    for j in index.get_near_dups(Simhash(v)):
        if int(j) > i:
            pairs += 1
out["index_secs"] = time.perf_counter() - t0
out["index_build_secs"] = built
out["index_pairs"] = pairs
print(json.dumps(out))
"#;

fn mbps(bytes: usize, secs: f64) -> f64 {
    bytes as f64 / secs.max(1e-9) / 1e6
}

/// Our fingerprinting speed over `texts` (at least 2 s of work).
fn our_speed(texts: &[String]) -> f64 {
    let bytes: usize = texts.iter().map(String::len).sum();
    let t0 = Instant::now();
    let mut rounds = 0;
    let mut sink = 0u64;
    while rounds == 0 || t0.elapsed().as_secs_f64() < 2.0 {
        for t in texts {
            sink ^= classifier::simhash::simhash(t).unwrap_or(0);
        }
        rounds += 1;
    }
    std::hint::black_box(sink);
    mbps(bytes * rounds, t0.elapsed().as_secs_f64())
}

fn story_text(s: &Story) -> String {
    let mut t = s.title.clone();
    for p in &s.paragraphs {
        t.push('\n');
        t.push_str(p);
    }
    t
}

fn line(name: &str, ours: String, peer: String, ratio: String) {
    println!("{name:<44} {ours:>16} {peer:>16} {ratio:>9}");
}

pub fn run(args: &BenchArgs) -> Result<()> {
    let cache = args.news.parent().unwrap_or(Path::new("."));
    let en = reposts::english_stories(&args.news, 120)?;
    let zh = reposts::chinese_stories(&cache.join("199801.txt"), 250)?;
    if en.is_empty() || zh.is_empty() {
        bail!("no articles: run deploy/data/fetch-neardup.sh");
    }
    let en_texts: Vec<String> = en.iter().map(story_text).collect();
    let zh_texts: Vec<String> = zh.iter().map(story_text).collect();
    classifier::tokenize::warm_up();

    // Accuracy set (as tests/neardup.rs).
    let en_acc: Vec<Story> = {
        let step = (en.len() / 600).max(1);
        en.iter().step_by(step).take(600).cloned().collect()
    };
    let zh_acc: Vec<Story> = zh.iter().take(600).cloned().collect();
    let en_pages = reposts::accuracy_texts(&en_acc, 1);
    let zh_pages = reposts::accuracy_texts(&zh_acc, 2);

    // The million fingerprints.
    let n: usize = std::env::var(PAIRS_ENV)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000);
    let mut real: Vec<u64> = en_texts
        .iter()
        .chain(&zh_texts)
        .chain(en_pages.iter().map(|(_, t)| t))
        .chain(zh_pages.iter().map(|(_, t)| t))
        .filter_map(|t| classifier::simhash::simhash(t))
        .collect();
    real.sort_unstable();
    real.dedup();
    let mut rng = Rng(2026);
    let mut fps: Vec<u64> = Vec::with_capacity(n);
    fps.extend(real.iter().copied().take(n));
    while fps.len() < n {
        if rng.below(5) == 0 {
            let mut f = real[rng.below(real.len())];
            for _ in 0..rng.below(5) {
                f ^= 1 << rng.below(64);
            }
            fps.push(f);
        } else {
            fps.push(rng.next_u64());
        }
    }
    // Shuffle (Fisher-Yates) so the reposts are spread through the archive.
    for i in (1..fps.len()).rev() {
        fps.swap(i, rng.below(i + 1));
    }

    // The peer, in a child process, on the same data.
    if args.dir.exists() {
        std::fs::remove_dir_all(&args.dir)
            .with_context(|| format!("cannot wipe {}", args.dir.display()))?;
    }
    std::fs::create_dir_all(&args.dir)
        .with_context(|| format!("cannot create {}", args.dir.display()))?;
    let python = args.python.as_path();
    let peer: Option<serde_json::Value> = if python.exists() {
        let input = args.dir.join("peer-input.json");
        let data = serde_json::json!({
            "texts": {"en": en_texts, "zh": zh_texts},
            "pages": en_pages.iter().chain(&zh_pages).map(|(_, t)| t).collect::<Vec<_>>(),
            "fingerprints": fps[..PEER_SAMPLE.min(n)].iter().map(|f| format!("{f:016x}")).collect::<Vec<_>>(),
        });
        serde_json::to_writer(
            std::io::BufWriter::new(std::fs::File::create(&input)?),
            &data,
        )?;
        Some(crate::run_python_peer(
            python,
            PEER_SCRIPT,
            &[input.as_path()],
            "simhash",
        )?)
    } else {
        eprintln!(
            "harvest: {} missing: the Python simhash peer is skipped (deploy/data/setup-peers.sh sets it up)",
            python.display()
        );
        None
    };
    let pf = |key: &str| peer.as_ref().and_then(|p| p[key].as_f64());

    println!(
        "near-duplicates: harvest vs Python simhash {} (PyPI), same run, same data",
        peer.as_ref()
            .and_then(|p| p["version"].as_str())
            .unwrap_or("(missing)")
    );
    println!(
        "texts: {} English articles ({:.1} MB), {} Chinese articles ({:.1} MB)",
        en_texts.len(),
        en_texts.iter().map(String::len).sum::<usize>() as f64 / 1e6,
        zh_texts.len(),
        zh_texts.iter().map(String::len).sum::<usize>() as f64 / 1e6
    );
    println!();
    line("", "harvest".into(), "peer".into(), "ratio".into());
    let ratio = |a: f64, b: Option<f64>| b.map_or("-".into(), |b| format!("{:.1}x", a / b));
    let show = |v: Option<f64>, unit: &str| v.map_or("-".into(), |v| format!("{v:.2} {unit}"));
    let en_speed = our_speed(&en_texts);
    line(
        "fingerprint English, MB/s",
        format!("{en_speed:.2} MB/s"),
        show(pf("mbps_en"), "MB/s"),
        ratio(en_speed, pf("mbps_en")),
    );
    let zh_speed = our_speed(&zh_texts);
    line(
        "fingerprint Chinese, MB/s (peer: char 4-grams)",
        format!("{zh_speed:.2} MB/s"),
        show(pf("mbps_zh"), "MB/s"),
        ratio(zh_speed, pf("mbps_zh")),
    );
    line(
        "fingerprint Chinese, MB/s (peer: jieba words)",
        format!("{zh_speed:.2} MB/s"),
        show(pf("mbps_zh_jieba"), "MB/s"),
        ratio(zh_speed, pf("mbps_zh_jieba")),
    );

    // Accuracy at the default k.
    let k = DEFAULT_DISTANCE;
    let peer_pages: Option<Vec<u64>> = peer.as_ref().and_then(|p| {
        p["pages"]
            .as_array()?
            .iter()
            .map(|h| u64::from_str_radix(h.as_str()?, 16).ok())
            .collect()
    });
    for (name, stories, pages, offset) in [
        ("English", &en_acc, &en_pages, 0usize),
        ("Chinese", &zh_acc, &zh_pages, en_pages.len()),
    ] {
        let ours: Vec<(usize, Option<u64>)> = pages
            .iter()
            .map(|(s, t)| (*s, classifier::simhash::simhash(t)))
            .collect();
        let o = reposts::score(stories, &ours, k);
        let p = peer_pages.as_ref().map(|pp| {
            let theirs: Vec<(usize, Option<u64>)> = pages
                .iter()
                .enumerate()
                .map(|(i, (s, _))| (*s, pp.get(offset + i).copied()))
                .collect();
            reposts::score(stories, &theirs, k)
        });
        let fmt =
            |s: &reposts::Score| format!("{:.3}/{:.3}/{:.3}", s.precision(), s.recall(), s.f1());
        line(
            &format!("reposts {name} P/R/F1 at k={k} ({} pages)", pages.len()),
            fmt(&o),
            p.as_ref().map_or("-".into(), fmt),
            p.map_or("-".into(), |p| format!("{:+.3}", o.f1() - p.f1())),
        );
    }

    // All pairs.
    let t0 = Instant::now();
    let pairs = all_pairs(&fps, k);
    let ours_secs = t0.elapsed().as_secs_f64();
    let sample = BRUTE_SAMPLE.min(n);
    let t0 = Instant::now();
    let mut brute = all_pairs_brute_force(&fps[..sample], k);
    let brute_secs = t0.elapsed().as_secs_f64();
    let scale = (n as f64 / sample as f64).powi(2);
    let mut ours_sample = all_pairs(&fps[..sample], k);
    ours_sample.sort_unstable();
    brute.sort_unstable();
    if ours_sample != brute {
        bail!(
            "multi-index found {} pairs on the sample, brute force {}",
            ours_sample.len(),
            brute.len()
        );
    }
    println!();
    println!(
        "all pairs within k={k} among {n} fingerprints: {} pairs found in {ours_secs:.2} s (goal < 10 s); \
         the brute force agrees on a {sample} sample ({} pairs)",
        pairs.len(),
        brute.len()
    );
    line(
        "all pairs, 1M, vs brute force (s)",
        format!("{ours_secs:.2} s"),
        format!("{:.0} s", brute_secs * scale),
        format!("{:.0}x", brute_secs * scale / ours_secs),
    );
    println!(
        "  brute force: {brute_secs:.2} s for {sample} ({:.2e} pairs), x{scale:.0} for {n}",
        sample as f64 * (sample as f64 - 1.0) / 2.0
    );
    if let (Some(secs), Some(pp)) = (
        pf("index_secs"),
        peer.as_ref().and_then(|p| p["index_pairs"].as_u64()),
    ) {
        let ps = PEER_SAMPLE.min(n);
        let ours_peer_sample = all_pairs(&fps[..ps], k).len();
        line(
            "all pairs, 1M, vs Python SimhashIndex (s)",
            format!("{ours_secs:.2} s"),
            format!("{:.0} s", secs * n as f64 / ps as f64),
            format!("{:.0}x", secs * n as f64 / ps as f64 / ours_secs),
        );
        println!(
            "  SimhashIndex: {secs:.2} s for {ps} (build + one query each), x{:.0} for {n} (linear: \
             favours the peer, its buckets grow with n); pairs on that sample: peer {pp}, ours {ours_peer_sample}",
            n as f64 / ps as f64
        );
    }

    // Through the archive's own index (embedded store).
    let m = INDEX_PAGES.min(n);
    let store = std::sync::Arc::new(indexer::EmbeddedStore::open_with(
        args.dir.join("index"),
        indexer::EmbeddedOptions {
            durability: indexer::Durability::Process,
        },
    )?);
    let index = indexer::Index::new(store, indexer::IndexOptions::default())?;
    let t0 = chrono::DateTime::from_timestamp(1_500_000_000, 0).unwrap_or_default();
    let started = Instant::now();
    let mut linked = 0u64;
    for (b, chunk) in fps[..m].chunks(256).enumerate() {
        let mut records: Vec<indexer::PageRecord> = chunk
            .iter()
            .enumerate()
            .map(|(i, &f)| bench_record(b * 256 + i, f, t0))
            .collect();
        linked += index.link_near_duplicates(&mut records, k)?.near_duplicates;
    }
    let secs = started.elapsed().as_secs_f64();
    println!();
    println!(
        "archive index (embedded store, batches of 256): {m} pages linked in {secs:.1} s = {:.0} pages/s, \
         {linked} near-duplicates",
        m as f64 / secs
    );
    Ok(())
}

fn bench_record(
    i: usize,
    fingerprint: u64,
    t0: chrono::DateTime<chrono::Utc>,
) -> indexer::PageRecord {
    indexer::PageRecord {
        url: format!("https://news.example.cn/{i}.html"),
        title: format!("page {i}"),
        published: None,
        fetched: t0 + chrono::Duration::seconds(i as i64),
        first_seen: None,
        media: Some("example".into()),
        comments: None,
        participants: None,
        keywords: vec![],
        topic: "news".into(),
        topic_score: 0.0,
        cluster: 0,
        pack_path: String::new(),
        offset: 0,
        length: 0,
        digest: String::new(),
        record_id: String::new(),
        simhash: Some(fingerprint),
        simhash_version: Some(classifier::simhash::FINGERPRINT_VERSION),
        near_duplicate_of: None,
        published_from: None,
        author: None,
        media_from_host: false,
        outlet: None,
        language: None,
        charset: None,
        status: 200,
        source: "bench".into(),
        revisit: false,
    }
}
