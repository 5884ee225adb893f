//! `harvest bench ingest`: the whole pipeline (crawl → classify → pack →
//! index) on a loopback site, beside `wget --recursive --warc-file` on the
//! same site in the same run.

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
        raw.sources = vec![RawSource {
            name: "bench".into(),
            hosts: vec!["127.0.0.1".into()],
            prefixes: vec![],
        }];
        let cfg = Config::from_raw(raw)?;
        crate::demo::train_demo_model(&cfg.model)?;
        let stores = Stores::open(&cfg)?;
        let started = Instant::now();
        let summary = pipeline::run_crawl(
            &cfg,
            &stores,
            CrawlRun {
                progress: false,
                conditional: false,
            },
        )
        .await?;
        let ours = Run {
            pages: summary.pages,
            bytes: summary.bytes,
            secs: started.elapsed().as_secs_f64(),
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
