//! Open pack files over a long run, with `max_open_packs` caps beside no cap (issue 15 item 5).
//!
//! Simulates months of daily crawls packed by one `Packer` in one process (a `harvest serve`
//! with scheduled jobs): each crawl day brings `pages` pages, most dated that day and some the
//! day or two before (`LAG_PERCENT`), over `topics` topics; pages are stored in batches of
//! `BATCH` as the pipeline does (each (topic, day) group of a batch takes
//! `ceil(n / PAGES_PER_CLUSTER)` of that (topic, day)'s `clusters` clusters, pages written in
//! arrival order, then `sync_all`). Every run writes the same pages into a fresh local store
//! and prints: the peak of open file descriptors of the process (`/proc/self/fd`, counted
//! after every batch's writes; the baseline before the run is subtracted), the peak of open
//! pack writers (`Packer::stats`), packs created, records per pack and pages/s (writes, syncs
//! and closes timed, the fd count not; best of two runs per cap, taken in turn).
//!
//! ```sh
//! cargo run --release -p harvest-packer --example open_packs -- [days] [pages per day] [caps...]
//! ```
//! Defaults: 120 days, 500 pages a day, caps 16, 64 (the default) and 256; `0` = no cap.
//! The store is a temporary folder under `$TMPDIR` (/dev/shm keeps fsync out of the figure).

use std::sync::Arc;
use std::time::Instant;

use chrono::{NaiveDate, TimeZone, Utc};
use packer::{
    encode_response, EncodedRecord, LocalPackStore, PackKey, PackStore, Packer, PackerOptions,
    ResponseInput, DEFAULT_MAX_OPEN_PACKS,
};

const DEFAULT_DAYS: u32 = 120;
const DEFAULT_PAGES_PER_DAY: usize = 500;
const DEFAULT_CAPS: [usize; 3] = [16, DEFAULT_MAX_OPEN_PACKS, 256];
const TOPICS: u32 = 9;
/// Clusters of a (topic, day) over all its crawls.
const CLUSTERS: u32 = 4;
/// `[packing] batch_pages` default.
const BATCH: usize = 256;
/// `[packing.kmeans] pages_per_cluster` default.
const PAGES_PER_CLUSTER: usize = 25;
/// Share of a crawl's pages dated 0, 1 and 2 days before the crawl.
const LAG_PERCENT: [u64; 3] = [80, 15, 5];
/// Runs of every cap (the fastest is printed).
const ROUNDS: usize = 2;
/// Distinct records cycled through (encoding is not what is measured).
const RECORDS: usize = 64;

type BoxResult<T> = std::result::Result<T, Box<dyn std::error::Error>>;

/// xorshift64*: deterministic, so every run packs the same pages in the same order.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// The pages of one run: (pack key, record index), in arrival order, in batches.
fn workload(days: u32, pages_per_day: usize) -> Vec<Vec<(PackKey, usize)>> {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let start = NaiveDate::from_ymd_opt(2024, 1, 1).expect("date");
    let mut batches = Vec::new();
    for day in 0..days {
        let mut pages = Vec::with_capacity(pages_per_day);
        for _ in 0..pages_per_day {
            let roll = rng.below(100);
            let lag = if roll < LAG_PERCENT[0] {
                0
            } else if roll < LAG_PERCENT[0] + LAG_PERCENT[1] {
                1
            } else {
                2
            };
            let date = start + chrono::Days::new(u64::from(day.saturating_sub(lag)));
            pages.push((rng.below(u64::from(TOPICS)) as u32, date));
        }
        for chunk in pages.chunks(BATCH) {
            // Each (topic, day) group of the batch takes ceil(n / 25) clusters of its
            // (topic, day), as K-means with the pack budget does.
            let mut groups: std::collections::BTreeMap<(u32, NaiveDate), Vec<u32>> =
                Default::default();
            for (topic, date) in chunk {
                groups.entry((*topic, *date)).or_default();
            }
            for ((topic, date), clusters) in groups.iter_mut() {
                let n = chunk
                    .iter()
                    .filter(|(t, d)| t == topic && d == date)
                    .count();
                let k = n.div_ceil(PAGES_PER_CLUSTER).min(CLUSTERS as usize);
                let first = rng.below(u64::from(CLUSTERS)) as u32;
                *clusters = (0..k as u32).map(|i| (first + i) % CLUSTERS).collect();
            }
            let batch = chunk
                .iter()
                .enumerate()
                .map(|(i, (topic, date))| {
                    let clusters = &groups[&(*topic, *date)];
                    let key = PackKey {
                        topic: format!("topic{topic}"),
                        date: *date,
                        cluster: clusters[i % clusters.len()],
                    };
                    (key, rng.below(RECORDS as u64) as usize)
                })
                .collect();
            batches.push(batch);
        }
    }
    batches
}

fn records() -> Vec<EncodedRecord> {
    let mut rng = Rng(7);
    let fetched = Utc
        .with_ymd_and_hms(2024, 1, 1, 8, 0, 0)
        .single()
        .expect("time");
    (0..RECORDS)
        .map(|i| {
            let words: Vec<String> = (0..600 + rng.below(600))
                .map(|_| format!("w{}", rng.below(5_000)))
                .collect();
            let body = format!("<html><body><p>{}</p></body></html>", words.join(" "));
            let headers = vec![
                ("Content-Type".to_string(), "text/html".to_string()),
                ("Content-Length".to_string(), body.len().to_string()),
            ];
            encode_response(&ResponseInput {
                target_uri: &format!("https://news.example/{i}.html"),
                date: fetched,
                ip_address: None,
                concurrent_to: None,
                status_line: "HTTP/1.1 200 OK",
                headers: &headers,
                payload: body.as_bytes(),
            })
        })
        .collect()
}

fn open_fds() -> BoxResult<usize> {
    Ok(std::fs::read_dir("/proc/self/fd")?.count())
}

fn fd_soft_limit() -> Option<String> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = limits.lines().find(|l| l.starts_with("Max open files"))?;
    line.split_whitespace().nth(3).map(str::to_string)
}

struct Run {
    cap: usize,
    peak_fds: usize,
    peak_writers: usize,
    packs: u64,
    closed_for_room: u64,
    pages: usize,
    secs: f64,
}

fn run(cap: usize, batches: &[Vec<(PackKey, usize)>], records: &[EncodedRecord]) -> BoxResult<Run> {
    let dir = tempfile::tempdir()?;
    let store: Arc<dyn PackStore> = Arc::new(LocalPackStore::open(dir.path())?);
    let baseline = open_fds()?;
    let mut packer = Packer::new(
        Arc::clone(&store),
        PackerOptions {
            max_open_packs: if cap == 0 { usize::MAX } else { cap },
            ..PackerOptions::default()
        },
    );
    let (mut peak_fds, mut pages, mut secs) = (0, 0, 0.0);
    for batch in batches {
        let started = Instant::now();
        for (key, record) in batch {
            packer.write(key, &records[*record])?;
        }
        secs += started.elapsed().as_secs_f64();
        pages += batch.len();
        // Not timed: listing /proc/self/fd costs more the more files are open.
        peak_fds = peak_fds.max(open_fds()?.saturating_sub(baseline));
        let started = Instant::now();
        packer.sync_all()?;
        secs += started.elapsed().as_secs_f64();
    }
    let started = Instant::now();
    packer.close_all()?;
    secs += started.elapsed().as_secs_f64();
    let stats = packer.stats();
    let listed = store.list("")?.len() as u64;
    if listed != stats.opened {
        return Err(format!("{listed} packs in the store, {} opened", stats.opened).into());
    }
    Ok(Run {
        cap,
        peak_fds,
        peak_writers: stats.peak_open,
        packs: stats.opened,
        closed_for_room: stats.closed_for_room,
        pages,
        secs,
    })
}

fn main() -> BoxResult<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let days: u32 = args.first().map_or(Ok(DEFAULT_DAYS), |a| a.parse())?;
    let pages_per_day: usize = args
        .get(1)
        .map_or(Ok(DEFAULT_PAGES_PER_DAY), |a| a.parse())?;
    let mut caps: Vec<usize> = args[args.len().min(2)..]
        .iter()
        .map(|a| a.parse())
        .collect::<Result<_, _>>()?;
    if caps.is_empty() {
        caps = DEFAULT_CAPS.to_vec();
    }
    // The comparison: no cap.
    caps.retain(|&c| c != 0);
    caps.insert(0, 0);
    let batches = workload(days, pages_per_day);
    let families: Vec<usize> = batches
        .iter()
        .map(|b| {
            b.iter()
                .map(|(k, _)| k)
                .collect::<std::collections::HashSet<_>>()
                .len()
        })
        .collect();
    let records = records();
    let mean_record =
        records.iter().map(|r| r.member_len(None)).sum::<u64>() as f64 / records.len() as f64;
    println!(
        "open packs: {days} daily crawls x {pages_per_day} pages, {TOPICS} topics, {CLUSTERS} clusters per (topic, day), \
         dated 0/1/2 days back {}/{}/{} %, batches of {BATCH} ({:.1} KB records); open files soft limit {}",
        LAG_PERCENT[0],
        LAG_PERCENT[1],
        LAG_PERCENT[2],
        mean_record / 1e3,
        fd_soft_limit().unwrap_or_else(|| "?".into())
    );
    println!(
        "(topic, day, cluster) families written by one batch: mean {:.1}, max {}",
        families.iter().sum::<usize>() as f64 / families.len().max(1) as f64,
        families.iter().max().unwrap_or(&0)
    );
    println!(
        "{:>10} {:>9} {:>12} {:>8} {:>15} {:>12} {:>9}",
        "cap", "peak fds", "peak writers", "packs", "closed for room", "records/pack", "pages/s"
    );
    // Every cap runs ROUNDS times in turn; the fastest run of each is printed.
    let mut runs: Vec<Run> = Vec::new();
    for round in 0..ROUNDS {
        for (i, &cap) in caps.iter().enumerate() {
            let r = run(cap, &batches, &records)?;
            if round == 0 {
                runs.push(r);
            } else if r.secs < runs[i].secs {
                runs[i] = r;
            }
        }
    }
    for r in &runs {
        println!(
            "{:>10} {:>9} {:>12} {:>8} {:>15} {:>12.1} {:>9.0}",
            if r.cap == 0 {
                "none".to_string()
            } else {
                r.cap.to_string()
            },
            r.peak_fds,
            r.peak_writers,
            r.packs,
            r.closed_for_room,
            r.pages as f64 / r.packs as f64,
            r.pages as f64 / r.secs
        );
    }
    let none = &runs[0];
    for r in &runs[1..] {
        println!(
            "cap {}: peak open files {} vs {} without a cap ({:.0}x fewer); packs {:.2}x; pages/s {:.2}x",
            r.cap,
            r.peak_fds,
            none.peak_fds,
            none.peak_fds as f64 / r.peak_fds.max(1) as f64,
            r.packs as f64 / none.packs as f64,
            (r.pages as f64 / r.secs) / (none.pages as f64 / none.secs)
        );
    }
    Ok(())
}
