//! HDFS benchmarks of the pack store, printed side by side (feature `cluster`).
//!
//! (a) The small-files problem: N real HTML pages (postgresql-doc-15 and libreoffice-help
//!     zh-cn pages fetched by deploy/data/fetch-debian.sh into deploy/cache/, repeated to
//!     reach N) written into MiniDFS as packs vs one HDFS file per page: wall time, HDFS
//!     files and blocks created, random single-page read latency p50/p99.
//! (b) Pack write throughput vs a raw hdfs-native write of the same bytes.
//!
//! ```sh
//! cargo run --release -p harvest-packer --features cluster --example hdfs_bench -- [pages] [throughput MiB]
//! ```
//! Starts its own test cluster unless `HARVEST_BENCH_HDFS=hdfs://host:port` is set.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use chrono::{NaiveDate, TimeZone, Utc};
use packer::{
    encode_response, HdfsPackStore, PackKey, PackLocation, PackStore, Packer, PackerOptions,
    ResponseInput,
};

const DEFAULT_PAGES: usize = 10_000;
const DEFAULT_THROUGHPUT_MIB: usize = 256;
const HDFS_ENV: &str = "HARVEST_BENCH_HDFS";
const CLUSTERS: u32 = 8;
const SYNC_EVERY: usize = 500;
const RANDOM_READS: usize = 1_000;
/// Parallel uploader threads of the one-file-per-page variant (packs use one thread).
const FILE_WRITERS: usize = 32;
/// Alternating rounds of the throughput comparison (best of each is reported).
const THROUGHPUT_ROUNDS: usize = 2;
const MIB: f64 = (1 << 20) as f64;
/// Page sources: (folder below deploy/cache, URL prefix the pages are published under).
const SOURCES: &[(&str, &str)] = &[
    (
        "postgresql-doc-15/usr/share/doc/postgresql-doc-15/html",
        "https://www.postgresql.org/docs/15/",
    ),
    (
        "libreoffice-help-zh-cn",
        "https://help.libreoffice.org/7.4/zh-CN/",
    ),
];

type BoxResult<T> = std::result::Result<T, Box<dyn std::error::Error>>;

fn html_files(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            html_files(&path, out)?;
        } else if path
            .extension()
            .is_some_and(|e| e == "html" || e == "htm" || e == "xhp")
        {
            out.push(path);
        }
    }
    Ok(())
}

/// Real pages as (url, html), in a fixed order.
fn load_pages() -> BoxResult<Vec<(String, Vec<u8>)>> {
    let cache = Path::new(env!("CARGO_MANIFEST_DIR")).join("../deploy/cache");
    let mut pages = Vec::new();
    for (dir, url_prefix) in SOURCES {
        let root = cache.join(dir);
        let mut files = Vec::new();
        html_files(&root, &mut files)
            .map_err(|e| format!("{}: {e} (run deploy/data/fetch-debian.sh)", root.display()))?;
        files.sort();
        for f in files {
            let rel = f.strip_prefix(&root)?.to_string_lossy().replace('\\', "/");
            pages.push((format!("{url_prefix}{rel}"), std::fs::read(&f)?));
        }
    }
    if pages.is_empty() {
        return Err("no pages found under deploy/cache (run deploy/data/fetch-debian.sh)".into());
    }
    Ok(pages)
}

/// WARC response records for `n` pages (repeating the corpus), encoded up front.
fn records(pages: &[(String, Vec<u8>)], n: usize) -> Vec<packer::EncodedRecord> {
    let date = Utc
        .with_ymd_and_hms(2024, 5, 1, 8, 0, 0)
        .single()
        .unwrap_or_else(Utc::now);
    (0..n)
        .map(|i| {
            let (url, body) = &pages[i % pages.len()];
            let headers = vec![
                (
                    "Content-Type".to_string(),
                    "text/html; charset=utf-8".to_string(),
                ),
                ("Content-Length".to_string(), body.len().to_string()),
            ];
            encode_response(&ResponseInput {
                target_uri: url,
                date: date + chrono::Duration::seconds(i as i64),
                ip_address: None,
                concurrent_to: None,
                status_line: "HTTP/1.1 200 OK",
                headers: &headers,
                payload: body,
            })
        })
        .collect()
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let idx = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[idx.min(sorted.len() - 1)]
}

/// Deterministic pseudo-random indexes (xorshift), so runs are comparable.
fn random_indexes(n: usize, count: usize) -> Vec<usize> {
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    (0..count)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % n as u64) as usize
        })
        .collect()
}

fn read_latencies(
    store: &dyn PackStore,
    locs: &[PackLocation],
    picks: &[usize],
) -> BoxResult<Vec<Duration>> {
    let mut lat = Vec::with_capacity(picks.len());
    for &i in picks {
        let loc = &locs[i];
        let started = Instant::now();
        let bytes = store.read_range(&loc.path, loc.offset, loc.length)?;
        lat.push(started.elapsed());
        if bytes.len() as u64 != loc.length {
            return Err(format!("short read of {}", loc.path).into());
        }
    }
    lat.sort();
    Ok(lat)
}

struct Figures {
    wall: Duration,
    files: usize,
    blocks: u64,
    bytes: u64,
    p50: Duration,
    p99: Duration,
}

fn namespace_figures(store: &HdfsPackStore, prefix: &str) -> BoxResult<(usize, u64, u64)> {
    let entries = store.list(prefix)?;
    let block = store.options().block_size;
    let blocks = entries.iter().map(|e| e.len.div_ceil(block)).sum();
    let bytes = entries.iter().map(|e| e.len).sum();
    Ok((entries.len(), blocks, bytes))
}

fn bench_packs(
    store: &HdfsPackStore,
    recs: &[packer::EncodedRecord],
    picks: &[usize],
) -> BoxResult<Figures> {
    let shared: Arc<dyn PackStore> = Arc::new(store.clone());
    let mut packer = Packer::new(Arc::clone(&shared), PackerOptions::default());
    let date = NaiveDate::from_ymd_opt(2024, 5, 1).ok_or("date")?;
    let started = Instant::now();
    let mut locs = Vec::with_capacity(recs.len());
    for (i, rec) in recs.iter().enumerate() {
        let key = PackKey {
            topic: "packs".into(),
            date,
            cluster: i as u32 % CLUSTERS,
        };
        locs.push(packer.write(&key, rec)?);
        if (i + 1) % SYNC_EVERY == 0 {
            packer.sync_all()?;
        }
    }
    packer.close_all()?;
    let wall = started.elapsed();
    let (files, blocks, bytes) = namespace_figures(store, "packs/")?;
    let lat = read_latencies(store, &locs, picks)?;
    Ok(Figures {
        wall,
        files,
        blocks,
        bytes,
        p50: percentile(&lat, 0.5),
        p99: percentile(&lat, 0.99),
    })
}

fn bench_files(store: &HdfsPackStore, recs: &[Vec<u8>], picks: &[usize]) -> BoxResult<Figures> {
    let started = Instant::now();
    let locs: Vec<PackLocation> = recs
        .iter()
        .enumerate()
        .map(|(i, rec)| PackLocation {
            path: format!("files/{:02}/{i:05}.warc.gz", i % 100),
            offset: 0,
            length: rec.len() as u64,
        })
        .collect();
    // Each file costs create + addBlock + complete round trips (and complete() polls until
    // the DataNode reported the block), so the uploader runs FILE_WRITERS threads.
    let failures: Vec<String> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..FILE_WRITERS)
            .map(|t| {
                let locs = &locs;
                s.spawn(move || -> Result<(), String> {
                    for i in (t..recs.len()).step_by(FILE_WRITERS) {
                        let mut w = store.create(&locs[i].path).map_err(|e| e.to_string())?;
                        w.append(&recs[i]).map_err(|e| e.to_string())?;
                        w.close().map_err(|e| e.to_string())?;
                    }
                    Ok(())
                })
            })
            .collect();
        handles
            .into_iter()
            .filter_map(|h| match h.join() {
                Ok(Ok(())) => None,
                Ok(Err(e)) => Some(e),
                Err(_) => Some("writer thread panicked".to_string()),
            })
            .collect()
    });
    if let Some(e) = failures.first() {
        return Err(e.clone().into());
    }
    let wall = started.elapsed();
    let (files, blocks, bytes) = namespace_figures(store, "files/")?;
    let lat = read_latencies(store, &locs, picks)?;
    Ok(Figures {
        wall,
        files,
        blocks,
        bytes,
        p50: percentile(&lat, 0.5),
        p99: percentile(&lat, 0.99),
    })
}

/// (pack store MiB/s, raw hdfs-native MiB/s) for the same record-sized chunks.
fn bench_throughput(
    url: &str,
    store: &HdfsPackStore,
    recs: &[Vec<u8>],
    mib: usize,
) -> BoxResult<(f64, f64, u64)> {
    let target = (mib as u64) << 20;
    let mut chunks: Vec<&[u8]> = Vec::new();
    let mut total = 0u64;
    while total < target {
        for r in recs {
            chunks.push(r);
            total += r.len() as u64;
            if total >= target {
                break;
            }
        }
    }
    // Raw hdfs-native on its own runtime: same chunks and hsyncs, default client settings.
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(packer::hdfs::RUNTIME_WORKER_THREADS)
        .enable_all()
        .build()?;
    let (namenode, root) = packer::hdfs::parse_hdfs_url(url)?;
    let client = hdfs_native::ClientBuilder::new()
        .with_url(namenode)
        .with_io_runtime(rt.handle().clone())
        .build()?;
    let block = store.options().block_size;
    let (mut pack_secs, mut raw_secs) = (f64::MAX, f64::MAX);
    // Alternate the two (raw first) and keep each one's best run: the JVM warms up.
    for round in 0..THROUGHPUT_ROUNDS {
        let owned: Vec<Bytes> = chunks.iter().map(|c| Bytes::copy_from_slice(c)).collect();
        let raw_path = format!("{root}/throughput/raw-{round}.bin");
        let secs = rt.block_on(async {
            let started = Instant::now();
            let mut f = client
                .create(
                    &raw_path,
                    hdfs_native::WriteOptions::default().block_size(block),
                )
                .await?;
            for (i, c) in owned.into_iter().enumerate() {
                f.write_bytes(c).await?;
                if (i + 1) % SYNC_EVERY == 0 {
                    f.hsync().await?;
                }
            }
            f.close().await?;
            Ok::<f64, hdfs_native::HdfsError>(started.elapsed().as_secs_f64())
        })?;
        raw_secs = raw_secs.min(secs);

        // Pack store: append every record, one sync per SYNC_EVERY records, close.
        let started = Instant::now();
        let mut w = store.create(&format!("throughput/pack-{round}.warc.gz"))?;
        for (i, c) in chunks.iter().enumerate() {
            w.append(c)?;
            if (i + 1) % SYNC_EVERY == 0 {
                w.sync()?;
            }
        }
        w.close()?;
        pack_secs = pack_secs.min(started.elapsed().as_secs_f64());
    }
    let mb = total as f64 / MIB;
    Ok((mb / pack_secs, mb / raw_secs, total))
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1e3)
}

fn main() -> BoxResult<()> {
    let mut args = std::env::args().skip(1);
    let n: usize = args
        .next()
        .map(|a| a.parse())
        .transpose()?
        .unwrap_or(DEFAULT_PAGES);
    let mib: usize = args
        .next()
        .map(|a| a.parse())
        .transpose()?
        .unwrap_or(DEFAULT_THROUGHPUT_MIB);

    let _cluster;
    let hdfs = match std::env::var(HDFS_ENV) {
        Ok(url) => url,
        Err(_) => {
            eprintln!("starting the test cluster ...");
            let c = testcluster::TestCluster::start()?;
            let url = c.hdfs_url.clone();
            _cluster = c;
            url
        }
    };
    let url = format!(
        "{}/bench-{}",
        hdfs.trim_end_matches('/'),
        uuid::Uuid::new_v4().simple()
    );
    let store = HdfsPackStore::connect(&url)?;

    let pages = load_pages()?;
    let recs = records(&pages, n);
    // The records as gzip members on their own (the raw-file figures write these).
    let members: Vec<Vec<u8>> = recs.iter().map(|r| r.member(None)).collect();
    let record_bytes: usize = members.iter().map(Vec::len).sum();
    let html_bytes: usize = (0..n).map(|i| pages[i % pages.len()].1.len()).sum();
    println!(
        "corpus: {} distinct real pages, {n} written ({:.1} MiB HTML, {:.1} MiB as gzipped WARC records)",
        pages.len(),
        html_bytes as f64 / MIB,
        record_bytes as f64 / MIB
    );
    let picks = random_indexes(n, RANDOM_READS);

    let packs = bench_packs(&store, &recs, &picks)?;
    let files = bench_files(&store, &members, &picks)?;
    println!(
        "\n(a) small files: {n} pages, MiniDFS (1 NameNode, 1 DataNode), block size {} MiB",
        store.options().block_size >> 20
    );
    println!(
        "{:<28} {:>14} {:>18} {:>8}",
        "", "packs", "one file per page", "ratio"
    );
    println!("{:<28} {:>14} {:>18}", "writer threads", 1, FILE_WRITERS);
    println!(
        "{:<28} {:>14} {:>18} {:>7.1}x",
        "write wall time",
        format!("{:.2} s", packs.wall.as_secs_f64()),
        format!("{:.2} s", files.wall.as_secs_f64()),
        files.wall.as_secs_f64() / packs.wall.as_secs_f64()
    );
    println!(
        "{:<28} {:>14} {:>18} {:>7.0}x",
        "HDFS files created",
        packs.files,
        files.files,
        files.files as f64 / packs.files.max(1) as f64
    );
    println!(
        "{:<28} {:>14} {:>18} {:>7.0}x",
        "HDFS blocks created",
        packs.blocks,
        files.blocks,
        files.blocks as f64 / packs.blocks.max(1) as f64
    );
    println!(
        "{:<28} {:>14} {:>18}",
        "bytes stored",
        format!("{:.1} MiB", packs.bytes as f64 / MIB),
        format!("{:.1} MiB", files.bytes as f64 / MIB)
    );
    println!(
        "{:<28} {:>14} {:>18} {:>7.2}x",
        format!("random read p50 ({RANDOM_READS})"),
        ms(packs.p50),
        ms(files.p50),
        files.p50.as_secs_f64() / packs.p50.as_secs_f64()
    );
    println!(
        "{:<28} {:>14} {:>18} {:>7.2}x",
        "random read p99",
        ms(packs.p99),
        ms(files.p99),
        files.p99.as_secs_f64() / packs.p99.as_secs_f64()
    );

    let (pack_rate, raw_rate, total) = bench_throughput(&url, &store, &members, mib)?;
    println!(
        "\n(b) write throughput, {:.0} MiB in record-sized appends, hsync every {SYNC_EVERY} records, best of {THROUGHPUT_ROUNDS} alternating runs",
        total as f64 / MIB
    );
    println!(
        "{:<28} {:>14}",
        "HdfsPackStore writer",
        format!("{pack_rate:.1} MiB/s")
    );
    println!(
        "{:<28} {:>14}",
        "raw hdfs-native FileWriter",
        format!("{raw_rate:.1} MiB/s")
    );
    println!(
        "{:<28} {:>13.0}%",
        "pack / raw",
        pack_rate / raw_rate * 100.0
    );
    Ok(())
}
