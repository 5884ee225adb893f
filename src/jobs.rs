//! Crawl jobs: `[[job]]` tables in harvest.toml, the revisit schedule, the
//! durable crawl queue (the crawler's [`crawler::UrlQueue`] on the indexer's
//! `frontier` table) and the job runs in the `runs` table.

use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use chrono::{DateTime, Utc};
use crawler::{QueueError, QueuedUrl, Url, UrlQueue};
use indexer::batch::host_name;
/// Whether a process runs on this host (the index's writers check the same).
pub use indexer::batch::process_alive;
use indexer::{FrontierEntry, FrontierTable, Index, RunRecord, RunStatus, RunsTable};
use serde::{Deserialize, Serialize};

use crate::config::crawl::{check_http_url, CrawlSettings, RawCrawl};
pub use crate::threads::{blocking, blocking_if, off_runtime};

/// Default revisit steps of an article after its first capture.
pub const DEFAULT_REVISIT_STEPS: [&str; 4] = ["1h", "6h", "1d", "7d"];
/// A run whose heartbeat is older than this is taken to be dead.
pub const STALE_AFTER: Duration = Duration::from_secs(30);
/// Name of the job that `harvest crawl` runs.
pub const AD_HOC_JOB: &str = "crawl";

/// `[job.recrawl]` as written.
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct RawRecrawl {
    /// `schedule` (default): hub pages (seeds, pages without a publish time)
    /// every run, articles when their revisit is due. `always`: every page
    /// every run (conditional GET still saves the bytes).
    pub mode: Option<String>,
    /// Intervals between an article's captures, e.g. `["1h", "6h", "1d",
    /// "7d"]` (the default): captured, then again 1 h later, 6 h after that ...
    pub revisit_steps: Option<Vec<String>>,
    /// After the last step: `false` (default) stop revisiting; `true` go on
    /// with an interval that halves after a change and doubles after none,
    /// within `min_interval` .. `max_interval`.
    pub adaptive: Option<bool>,
    /// Shortest adaptive interval. Default `1h`.
    pub min_interval: Option<String>,
    /// Longest adaptive interval. Default `30d`.
    pub max_interval: Option<String>,
}

/// A `[[job]]`'s own keys (the rest of its table are crawl settings).
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct JobKeys {
    /// Job name (letters, digits, `-`, `_`), used by `harvest jobs run NAME`.
    pub name: String,
    /// XML sitemaps or sitemap indexes (gzipped or not, Google News
    /// sitemaps too) read at the start of every run. Default none.
    pub sitemaps: Vec<String>,
    /// RSS 2.0 / Atom feeds read at the start of every run; an entry's
    /// publish time is used when its page gives none. Default none.
    pub feeds: Vec<String>,
    /// Also read the sitemaps named by the seed hosts' robots.txt
    /// (`Sitemap:` lines). Default true.
    pub robots_sitemaps: Option<bool>,
    /// When the job runs by itself under `harvest serve`: a cron expression
    /// with seconds first (`sec min hour day-of-month month day-of-week`,
    /// e.g. `"0 0 */6 * * *"` every six hours). Default: only on request.
    pub schedule: Option<String>,
    /// Time zone of `schedule`: an IANA name (`Asia/Shanghai`). Default `UTC`.
    pub timezone: Option<String>,
    /// Revisit policy.
    pub recrawl: RawRecrawl,
}

/// One `[[job]]` table as written: the job's own keys and any `[crawl]`
/// setting, which stands for this job in place of `[crawl]`'s. Its seeds (hub
/// pages, fetched every run) are required; its `requisites` default to true (a
/// job keeps an archive that replays) unless `[crawl]` sets them.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct RawJob {
    #[serde(flatten)]
    pub job: JobKeys,
    #[serde(flatten)]
    pub crawl: RawCrawl,
}

impl RawJob {
    /// A job with a name and seeds, everything else unset.
    pub fn new(name: &str, seeds: &[&str]) -> RawJob {
        RawJob {
            job: JobKeys {
                name: name.to_string(),
                ..JobKeys::default()
            },
            crawl: RawCrawl {
                seeds: seeds.iter().map(|s| s.to_string()).collect(),
                ..RawCrawl::default()
            },
        }
    }
}

impl<'de> Deserialize<'de> for RawJob {
    /// The table's crawl settings go to [`RawCrawl`], the rest to [`JobKeys`];
    /// a key that is neither is refused.
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<RawJob, D::Error> {
        use serde::de::Error;
        let mut table = toml::Table::deserialize(d)?;
        let mut crawl = toml::Table::new();
        for key in RawCrawl::keys() {
            if let Some(v) = table.remove(*key) {
                crawl.insert((*key).to_string(), v);
            }
        }
        let job: JobKeys = toml::Value::Table(table)
            .try_into()
            .map_err(|e: toml::de::Error| {
                D::Error::custom(format!(
                    "{}, or a [crawl] setting: {}",
                    e.message().trim_end(),
                    RawCrawl::keys().join(", ")
                ))
            })?;
        let crawl: RawCrawl = toml::Value::Table(crawl)
            .try_into()
            .map_err(|e: toml::de::Error| D::Error::custom(e.message()))?;
        Ok(RawJob { job, crawl })
    }
}

/// A validated schedule.
#[derive(Debug, Clone)]
pub struct JobSchedule {
    /// The expression as written.
    pub expr: String,
    /// Its time zone.
    pub tz: chrono_tz::Tz,
    cron: cron::Schedule,
}

impl JobSchedule {
    /// Parses `expr` in `tz` (errors name the job and the field).
    pub fn parse(job: &str, expr: &str, tz: Option<&str>) -> Result<JobSchedule> {
        let cron: cron::Schedule = expr.parse().map_err(|e| {
            anyhow::anyhow!(
                "[[job]] {job:?}: schedule = {expr:?}: {e} (6 fields, seconds first: \"0 0 */6 * * *\")"
            )
        })?;
        let tz_name = tz.unwrap_or("UTC");
        let tz: chrono_tz::Tz = tz_name.parse().map_err(|_| {
            anyhow::anyhow!("[[job]] {job:?}: timezone = {tz_name:?} is not an IANA time zone name")
        })?;
        let s = JobSchedule {
            expr: expr.to_owned(),
            tz,
            cron,
        };
        if s.next_after(Utc::now()).is_none() {
            bail!("[[job]] {job:?}: schedule = {expr:?} never fires");
        }
        Ok(s)
    }

    /// The first time after `t` at which the job is due.
    pub fn next_after(&self, t: DateTime<Utc>) -> Option<DateTime<Utc>> {
        self.cron
            .after(&t.with_timezone(&self.tz))
            .next()
            .map(|d| d.with_timezone(&Utc))
    }
}

/// How pages are revisited.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recrawl {
    /// Every page every run.
    pub always: bool,
    /// Intervals between an article's captures.
    pub steps: Vec<Duration>,
    /// Go on adaptively after the last step.
    pub adaptive: bool,
    /// Adaptive bounds.
    pub min_interval: Duration,
    /// Adaptive bounds.
    pub max_interval: Duration,
}

impl Default for Recrawl {
    fn default() -> Self {
        Recrawl {
            always: false,
            steps: DEFAULT_REVISIT_STEPS
                .iter()
                .filter_map(|s| humantime::parse_duration(s).ok())
                .collect(),
            adaptive: false,
            min_interval: Duration::from_secs(3600),
            max_interval: Duration::from_secs(30 * 86_400),
        }
    }
}

impl Recrawl {
    /// Every page every run (what `harvest crawl` does).
    pub fn always() -> Self {
        Recrawl {
            always: true,
            ..Recrawl::default()
        }
    }

    /// When an article is due after its `captures`-th capture at `at`
    /// (`changed`: its payload differed from the capture before), and the
    /// interval used (seconds). `None`: no further revisit.
    pub fn next(
        &self,
        captures: u64,
        changed: bool,
        previous_interval: Option<u64>,
        at: DateTime<Utc>,
    ) -> (Option<DateTime<Utc>>, Option<u64>) {
        let step = usize::try_from(captures.saturating_sub(1)).unwrap_or(usize::MAX);
        let interval = match self.steps.get(step) {
            Some(d) => *d,
            None if self.adaptive => {
                let base = previous_interval
                    .map(Duration::from_secs)
                    .or_else(|| self.steps.last().copied())
                    .unwrap_or(self.min_interval);
                let next = if changed { base / 2 } else { base * 2 };
                next.clamp(self.min_interval, self.max_interval)
            }
            None => return (None, None),
        };
        let due = chrono::Duration::from_std(interval)
            .ok()
            .and_then(|d| at.checked_add_signed(d));
        (due, Some(interval.as_secs()))
    }

    /// Whether a known URL is to be fetched now.
    pub fn due(&self, state: &indexer::UrlState, now: DateTime<Utc>) -> bool {
        self.always || !state.article || state.next_fetch.is_some_and(|t| t <= now)
    }
}

/// A validated job.
#[derive(Debug, Clone)]
pub struct Job {
    /// Name.
    pub name: String,
    /// The crawl settings of its runs (`[crawl]` with the job's overrides).
    pub crawl: CrawlSettings,
    /// Revisit policy.
    pub recrawl: Recrawl,
    /// When `harvest serve` runs it by itself.
    pub schedule: Option<JobSchedule>,
}

fn duration(job: &str, field: &str, text: &str) -> Result<Duration> {
    let d = humantime::parse_duration(text).with_context(|| {
        format!(
            "[[job]] {job:?}: {field} = {text:?} is not a duration (e.g. \"90s\", \"6h\", \"7d\")"
        )
    })?;
    if d.is_zero() {
        bail!("[[job]] {job:?}: {field} = {text:?} must be longer than zero");
    }
    Ok(d)
}

/// Checks the `[[job]]` tables; each job's crawl settings are `[crawl]`'s (`base`)
/// with the job's own laid over them.
pub fn validate_jobs(raw: &[RawJob], base: &RawCrawl) -> Result<Vec<Job>> {
    let mut out: Vec<Job> = Vec::with_capacity(raw.len());
    for j in raw {
        let name = &j.job.name;
        if name.is_empty()
            || name.len() > 64
            || !name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        {
            bail!("[[job]] name = {name:?}: 1 to 64 letters, digits, - or _");
        }
        if name == AD_HOC_JOB {
            bail!("[[job]] name = {name:?} is reserved for `harvest crawl`");
        }
        if out.iter().any(|o| o.name == *name) {
            bail!("[[job]] name = {name:?} is defined twice");
        }
        if j.crawl.seeds.is_empty() {
            bail!("[[job]] {name:?}: seeds is empty");
        }
        for (field, list) in [("sitemaps", &j.job.sitemaps), ("feeds", &j.job.feeds)] {
            for u in list.iter() {
                check_http_url(u).with_context(|| format!("[[job]] {name:?}: {field}: {u:?}"))?;
            }
        }
        let mut crawl = base
            .overlaid(&j.crawl)?
            .settings(&format!("[[job]] {name:?}:"))?;
        crawl.sitemaps = j.job.sitemaps.clone();
        crawl.feeds = j.job.feeds.clone();
        crawl.robots_sitemaps = j.job.robots_sitemaps.unwrap_or(true);
        crawl.embeds.requisites = j.crawl.requisites.or(base.requisites).unwrap_or(true);
        let r = &j.job.recrawl;
        let always = match r.mode.as_deref().unwrap_or("schedule") {
            "schedule" => false,
            "always" => true,
            other => bail!(
                "[[job]] {name:?}: recrawl.mode = {other:?}: expected \"schedule\" or \"always\""
            ),
        };
        let mut recrawl = Recrawl {
            always,
            ..Recrawl::default()
        };
        if let Some(steps) = &r.revisit_steps {
            recrawl.steps = steps
                .iter()
                .map(|s| duration(name, "recrawl.revisit_steps", s))
                .collect::<Result<_>>()?;
        }
        recrawl.adaptive = r.adaptive.unwrap_or(false);
        if let Some(m) = &r.min_interval {
            recrawl.min_interval = duration(name, "recrawl.min_interval", m)?;
        }
        if let Some(m) = &r.max_interval {
            recrawl.max_interval = duration(name, "recrawl.max_interval", m)?;
        }
        if recrawl.min_interval > recrawl.max_interval {
            bail!("[[job]] {name:?}: recrawl.min_interval is longer than recrawl.max_interval");
        }
        let schedule = match &j.job.schedule {
            Some(expr) => Some(JobSchedule::parse(name, expr, j.job.timezone.as_deref())?),
            None if j.job.timezone.is_some() => {
                bail!("[[job]] {name:?}: timezone is set but schedule is not")
            }
            None => None,
        };
        out.push(Job {
            name: name.clone(),
            crawl,
            recrawl,
            schedule,
        });
    }
    Ok(out)
}

/// The crawler's queue on the `frontier` table: URLs survive `kill -9`, and
/// known articles that are not due (per the job's [`Recrawl`]) are recorded
/// as seen instead of being queued.
pub struct TableQueue {
    table: FrontierTable,
    index: Arc<Index>,
    recrawl: Recrawl,
    /// Known URLs left out because they were not due.
    not_due: std::sync::atomic::AtomicU64,
}

impl TableQueue {
    /// Opens the queue of job `job` as the table holds it.
    pub fn open(index: Arc<Index>, job: &str, recrawl: Recrawl) -> Result<TableQueue> {
        let table = FrontierTable::open(index.store().clone(), job)
            .with_context(|| format!("cannot open the crawl queue of job {job}"))?;
        Ok(TableQueue {
            table,
            index,
            recrawl,
            not_due: Default::default(),
        })
    }

    /// URLs queued and not finished.
    pub fn pending(&self) -> u64 {
        self.table.pending()
    }

    /// Known URLs that were not due and so not queued.
    pub fn not_due(&self) -> u64 {
        self.not_due.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Writes the queue rows still buffered.
    pub fn flush(&self) -> Result<()> {
        self.table.flush().context("cannot write the crawl queue")
    }

    /// Marks stored URLs done (called after their records are durable and indexed).
    pub fn finish_stored(&self, urls: &[String]) -> Result<()> {
        self.table
            .finish(urls)
            .context("cannot update the crawl queue")
    }
}

fn queue_err(e: impl std::fmt::Display) -> QueueError {
    QueueError(e.to_string())
}

impl UrlQueue for TableQueue {
    fn push(&self, urls: Vec<QueuedUrl>) -> std::result::Result<usize, QueueError> {
        // A push reads the states of the URLs new to the run, in one call: to
        // tell which known URLs are due, and which were never captured (their
        // fetch then asks the index for no validators, a round trip a page on
        // HBase). It writes only when its buffer fills. Else, or when that
        // read is local, it stays on the caller's worker: moving the worker's
        // tasks to another thread for every page's links cost more CPU than
        // the push.
        let unseen: Vec<&str> = self.table.unseen(urls.iter().map(|q| q.url.as_str()));
        if unseen.is_empty() {
            return Ok(0);
        }
        let io = self.index.store().remote() || self.table.push_may_write(unseen.len());
        let push = || {
            let states = self.index.get_urls(&unseen).map_err(queue_err)?;
            let now = Utc::now();
            // The depth of a URL's first occurrence.
            let depths: std::collections::HashMap<&str, u32> = urls
                .iter()
                .rev()
                .map(|q| (q.url.as_str(), q.depth))
                .collect();
            let depth_of = |u: &str| depths.get(u).copied().unwrap_or(0);
            let mut queue = Vec::new();
            let mut skipped = Vec::new();
            for (url, state) in unseen.iter().zip(states) {
                let depth = depth_of(url);
                let uncaptured = state.is_none();
                let due = depth == 0 || state.is_none_or(|s| self.recrawl.due(&s, now));
                if due {
                    queue.push(FrontierEntry {
                        url: (*url).to_owned(),
                        depth,
                        uncaptured,
                    });
                } else {
                    skipped.push(*url);
                }
            }
            self.not_due
                .fetch_add(skipped.len() as u64, std::sync::atomic::Ordering::Relaxed);
            self.table.push(&queue, &skipped).map_err(queue_err)
        };
        blocking_if(io, push)
    }

    fn mark_seen(&self, url: &Url) -> std::result::Result<bool, QueueError> {
        blocking(|| self.table.mark_seen(url.as_str()).map_err(queue_err))
    }

    fn take(&self, max: usize) -> std::result::Result<Vec<QueuedUrl>, QueueError> {
        blocking(|| {
            let entries = self.table.take(max).map_err(queue_err)?;
            Ok(entries
                .into_iter()
                .filter_map(|e| {
                    Url::parse(&e.url).ok().map(|url| QueuedUrl {
                        url,
                        depth: e.depth,
                        uncaptured: e.uncaptured,
                    })
                })
                .collect())
        })
    }

    fn finish(&self, urls: &[String]) -> std::result::Result<(), QueueError> {
        blocking(|| self.table.finish(urls).map_err(queue_err))
    }

    fn pending(&self) -> u64 {
        self.table.pending()
    }
}

impl Drop for ActiveRun {
    fn drop(&mut self) {
        RUNNING
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .retain(|j| *j != self.record.job);
    }
}

/// Jobs running in this process (a server runs several; one run per job).
static RUNNING: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

/// The name a compaction holds in [`RUNNING`] while it runs: no job run starts beside it.
const COMPACTION: &str = "(compaction)";

/// This process's compaction, while it runs ([`compaction`]).
pub struct Compaction(());

impl Drop for Compaction {
    fn drop(&mut self) {
        RUNNING
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .retain(|j| j != COMPACTION);
    }
}

/// Starts a compaction in this process (`harvest compact`, forwarded to `harvest serve`):
/// refused while a job or crawl runs here, and no run starts until it ends (a run revisiting a
/// payload would write back the `digests` location the compaction moves).
pub fn compaction() -> Result<Compaction> {
    let mut running = RUNNING.lock().unwrap_or_else(|p| p.into_inner());
    if !running.is_empty() {
        bail!(
            "cannot compact while {} runs in this process; try again when it ends",
            running.join(", ")
        );
    }
    running.push(COMPACTION.to_owned());
    Ok(Compaction(()))
}

/// Whether this process is running `job` now.
pub fn running_here(job: &str) -> bool {
    RUNNING
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .iter()
        .any(|j| j == job)
}

/// A run being executed by this process.
pub struct ActiveRun {
    runs: RunsTable,
    /// The run's record as last written.
    pub record: RunRecord,
    /// This run takes up one whose process died or that failed (not one
    /// cancelled on request): the packs of [`RunRecord::writers`] may hold
    /// records the index does not.
    pub crashed: bool,
    /// The error that stopped the failed run this one takes up.
    pub failed_on: Option<String>,
}

impl ActiveRun {
    /// Starts a run of `job`, or takes up its last run if that one was
    /// interrupted (status running, heartbeat older than [`STALE_AFTER`] or
    /// its process gone), cancelled, or failed (stopped by an error, e.g. a
    /// full disk: taken up as a killed run is, its packs' unindexed tail
    /// indexed and nothing it stored fetched again).
    /// A run that is alive in another process is an error.
    pub fn start(index: &Arc<Index>, job: &str) -> Result<ActiveRun> {
        {
            let mut running = RUNNING.lock().unwrap_or_else(|p| p.into_inner());
            if running.iter().any(|j| j == job) {
                bail!("job {job} is already running in this process");
            }
            if running.iter().any(|j| j == COMPACTION) {
                bail!("job {job} cannot start while `harvest compact` runs in this process; it runs again at its next time or with `jobs run` once the compaction ends");
            }
            running.push(job.to_owned());
        }
        let started = Self::start_registered(index, job);
        if started.is_err() {
            RUNNING
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .retain(|j| j != job);
        }
        started
    }

    fn start_registered(index: &Arc<Index>, job: &str) -> Result<ActiveRun> {
        let runs = RunsTable::open(index.store().clone()).context("cannot open the runs table")?;
        let now = Utc::now();
        if let Some(mut last) = runs.last(job)? {
            // A cancelled run stopped on request with its queue intact; a
            // failed one (a write error: a full or read-only disk, a lost
            // store) stopped with its queue intact too, and like a killed one
            // may have packed records it did not index; a running one is
            // taken up only when its process is gone.
            let take_up = match last.status {
                RunStatus::Cancelled | RunStatus::Failed => true,
                RunStatus::Running => {
                    let age = (now - last.heartbeat).to_std().unwrap_or_default();
                    // On this host a dead pid settles it; elsewhere the heartbeat.
                    // (A record with this process's own id is a predecessor's:
                    // a run of this process would be in RUNNING.)
                    let dead = last.host == host_name()
                        && (last.pid == std::process::id() || !process_alive(last.pid));
                    if age < STALE_AFTER && !dead {
                        bail!(
                            "job {job} is running in another process (pid {} on {}, last heartbeat {} s ago)",
                            last.pid,
                            last.host,
                            age.as_secs()
                        );
                    }
                    true
                }
                _ => false,
            };
            if take_up {
                let was = last.status;
                if was == RunStatus::Cancelled {
                    // Its last batch was stored and indexed before it stopped.
                    last.writers.clear();
                }
                let failed_on = last.error.take();
                last.resumed += 1;
                last.status = RunStatus::Running;
                last.ended = None;
                last.pid = std::process::id();
                last.host = host_name();
                last.heartbeat = now;
                runs.put(&last)?;
                tracing::info!(job, started = %last.started, resumed = last.resumed, was = ?was, "taking up an unfinished run");
                return Ok(ActiveRun {
                    runs,
                    record: last,
                    crashed: matches!(was, RunStatus::Running | RunStatus::Failed),
                    failed_on,
                });
            }
        }
        FrontierTable::clear(index.store(), job)
            .with_context(|| format!("cannot clear the crawl queue of job {job}"))?;
        let record = RunRecord {
            job: job.to_owned(),
            started: now,
            ended: None,
            status: RunStatus::Running,
            heartbeat: now,
            pid: std::process::id(),
            host: host_name(),
            resumed: 0,
            error: None,
            summary: serde_json::Value::Null,
            writers: Vec::new(),
            appended: Vec::new(),
        };
        runs.put(&record)?;
        Ok(ActiveRun {
            runs,
            record,
            crashed: false,
            failed_on: None,
        })
    }

    /// The `runs` table this run is recorded in.
    pub fn runs_table(&self) -> indexer::RunsTable {
        self.runs.clone()
    }

    /// True when this run takes up an interrupted one.
    pub fn is_resumed(&self) -> bool {
        self.record.resumed > 0
    }

    /// Records that the packer with writer token `writer` writes this run's
    /// packs (before it writes any).
    pub fn add_writer(&mut self, writer: &str) -> Result<()> {
        if !self.record.writers.iter().any(|w| w == writer) {
            self.record.writers.push(writer.to_owned());
        }
        self.record.heartbeat = Utc::now();
        Ok(self.runs.put(&self.record)?)
    }

    /// Records a sign of life and the counters so far.
    pub fn heartbeat(&mut self, summary: serde_json::Value) -> Result<()> {
        self.record.heartbeat = Utc::now();
        self.record.summary = summary;
        Ok(self.runs.put(&self.record)?)
    }

    /// Records the end of the run at `now`.
    pub fn end(
        &mut self,
        status: RunStatus,
        summary: serde_json::Value,
        error: Option<String>,
        now: DateTime<Utc>,
    ) -> Result<()> {
        self.record.heartbeat = now;
        self.record.ended = Some(now);
        self.record.status = status;
        self.record.summary = summary;
        self.record.error = error;
        Ok(self.runs.put(&self.record)?)
    }
}

/// The runs of `job` (or every job), newest first, at most `limit` per job.
pub fn runs(index: &Arc<Index>, job: Option<&str>, limit: usize) -> Result<Vec<RunRecord>> {
    RunsTable::open(index.store().clone())?
        .list(job, limit)
        .context("cannot read the runs table")
}

/// A status label that tells a dead run from a live one.
pub fn status_label(run: &RunRecord, now: DateTime<Utc>) -> String {
    match run.status {
        RunStatus::Running => {
            let age = (now - run.heartbeat).to_std().unwrap_or_default();
            if age >= STALE_AFTER || (run.host == host_name() && !process_alive(run.pid)) {
                format!(
                    "interrupted ({} s since its last heartbeat; running it again resumes it)",
                    age.as_secs()
                )
            } else {
                "running".to_string()
            }
        }
        RunStatus::Failed => "failed (running it again takes it up)".to_string(),
        other => other.label().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// No lib test but this one starts runs in this process (RUNNING is process-wide).
    #[test]
    fn a_compaction_and_the_runs_of_a_process_keep_apart() -> Result<()> {
        let dir = tempfile::tempdir()?;
        let store = Arc::new(indexer::EmbeddedStore::open(dir.path().join("index"))?);
        let index = Arc::new(Index::new(store, indexer::IndexOptions::default())?);
        let alone = compaction()?;
        let refused = ActiveRun::start(&index, "news").err().expect("refused");
        assert!(refused.to_string().contains("compact"), "{refused}");
        assert!(compaction().is_err(), "one compaction at a time");
        drop(alone);
        let run = ActiveRun::start(&index, "news")?;
        let refused = compaction().err().expect("refused");
        assert!(refused.to_string().contains("news"), "{refused}");
        drop(run);
        drop(compaction()?);
        Ok(())
    }

    fn at(s: &str) -> DateTime<Utc> {
        s.parse().unwrap_or_default()
    }

    /// A page's links go into the queue once each, at the depth of their
    /// first occurrence, whether the push stays on the tokio worker or not;
    /// a push that fills the buffer writes it (another queue on the table
    /// sees every URL).
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn pushes_queue_each_url_once_at_its_first_depth() -> Result<()> {
        let dir = tempfile::tempdir()?;
        let store = Arc::new(indexer::EmbeddedStore::open(dir.path().join("index"))?);
        let index = Arc::new(Index::new(store, indexer::IndexOptions::default())?);
        let queue = TableQueue::open(index.clone(), "news", Recrawl::default())?;
        let link = |i: usize, depth: u32| {
            QueuedUrl::new(
                Url::parse(&format!("http://example.com/{i}")).expect("url"),
                depth,
            )
        };
        assert_eq!(queue.push(vec![link(1, 2), link(2, 1), link(1, 1)])?, 2);
        assert_eq!(queue.push(vec![link(2, 0)])?, 0);
        let taken: Vec<(String, u32)> = queue
            .take(10)?
            .into_iter()
            .map(|q| (q.url.path().to_string(), q.depth))
            .collect();
        assert_eq!(taken, [("/2".to_string(), 1), ("/1".to_string(), 2)]);
        let many: Vec<QueuedUrl> = (10..3_000).map(|i| link(i, 3)).collect();
        assert!(queue.table.push_may_write(many.len()));
        assert_eq!(queue.push(many)?, 2_990);
        let other = TableQueue::open(index, "news", Recrawl::default())?;
        assert_eq!(other.take(10_000)?.len(), 2_992);
        Ok(())
    }

    #[test]
    fn articles_follow_the_steps_then_stop() {
        let r = Recrawl::default();
        let t = at("2026-01-01T00:00:00Z");
        assert_eq!(
            r.next(1, false, None, t).0,
            Some(at("2026-01-01T01:00:00Z"))
        );
        assert_eq!(r.next(2, true, None, t).0, Some(at("2026-01-01T06:00:00Z")));
        assert_eq!(r.next(4, false, None, t).1, Some(7 * 86_400));
        assert_eq!(r.next(5, false, None, t), (None, None));
    }

    #[test]
    fn adaptive_interval_halves_after_a_change_and_doubles_after_none() {
        let r = Recrawl {
            adaptive: true,
            steps: vec![Duration::from_secs(3600)],
            min_interval: Duration::from_secs(1800),
            max_interval: Duration::from_secs(4 * 3600),
            ..Recrawl::default()
        };
        let t = at("2026-01-01T00:00:00Z");
        assert_eq!(r.next(2, false, Some(3600), t).1, Some(7200));
        assert_eq!(r.next(3, false, Some(7200), t).1, Some(4 * 3600));
        assert_eq!(r.next(4, false, Some(4 * 3600), t).1, Some(4 * 3600), "max");
        assert_eq!(r.next(5, true, Some(3600), t).1, Some(1800));
        assert_eq!(r.next(6, true, Some(1800), t).1, Some(1800), "min");
    }

    #[test]
    fn hubs_are_always_due_articles_when_their_time_comes() {
        let r = Recrawl::default();
        let now = at("2026-01-01T12:00:00Z");
        let mut s = indexer::UrlState {
            url: "http://a/".into(),
            last_capture: now,
            captures: 1,
            first_capture: None,
            etag: None,
            last_modified: None,
            table: String::new(),
            row_key: Vec::new(),
            digest: None,
            next_fetch: None,
            changes: 0,
            article: false,
            interval_secs: None,
        };
        assert!(r.due(&s, now), "hub");
        s.article = true;
        assert!(!r.due(&s, now), "article with no revisit left");
        s.next_fetch = Some(at("2026-01-01T13:00:00Z"));
        assert!(!r.due(&s, now));
        s.next_fetch = Some(at("2026-01-01T11:00:00Z"));
        assert!(r.due(&s, now));
        assert!(Recrawl::always().due(
            &indexer::UrlState {
                next_fetch: None,
                ..s
            },
            now
        ));
    }

    #[test]
    fn jobs_archive_requisites_unless_told_otherwise() {
        let requisites = |job: Option<bool>, crawl: Option<bool>| {
            let mut j = RawJob::new("news", &["http://127.0.0.1/"]);
            j.crawl.requisites = job;
            let base = RawCrawl {
                requisites: crawl,
                ..RawCrawl::default()
            };
            validate_jobs(&[j], &base).expect("valid job")[0]
                .crawl
                .embeds
                .requisites
        };
        assert!(requisites(None, None), "an archiving job's default");
        assert!(!requisites(None, Some(false)), "[crawl] requisites = false");
        assert!(!requisites(Some(false), None));
        assert!(requisites(Some(true), Some(false)));
        // An ad-hoc crawl keeps [crawl]'s default: pages only.
        let base = crate::config::Config::from_raw(crate::config::RawConfig::default())
            .map(|c| c.crawl)
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(!base.embeds.requisites);
    }

    #[test]
    fn a_job_takes_any_crawl_setting_over_the_crawl_tables() {
        let text = r#"
            [crawl]
            user_agent = "base-agent"
            timeout_secs = 5
            politeness_delay_ms = 200
            allow_prefixes = ["http://a.example/"]

            [[job]]
            name = "news"
            seeds = ["http://news.example/"]
            schedule = "0 0 6 * * *"
            user_agent = "news-agent"
            max_pages = 9

            [job.recrawl]
            mode = "always"
        "#;
        let raw: crate::config::RawConfig = toml::from_str(text).unwrap_or_else(|e| panic!("{e}"));
        // Written back (tests and `config init` write configs), it reads the same.
        let written = toml::to_string(&raw).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            toml::from_str::<crate::config::RawConfig>(&written).ok(),
            Some(raw.clone()),
            "{written}"
        );
        let cfg = crate::config::Config::from_raw(raw).unwrap_or_else(|e| panic!("{e:#}"));
        let job = &cfg.jobs[0];
        assert_eq!(job.crawl.user_agent, "news-agent", "the job's own");
        assert_eq!(job.crawl.max_pages, Some(9));
        assert_eq!(job.crawl.timeout, Duration::from_secs(5), "[crawl]'s");
        assert_eq!(job.crawl.politeness_delay, Duration::from_millis(200));
        assert_eq!(
            job.crawl.allow_prefixes,
            vec!["http://a.example/".to_string()]
        );
        assert_eq!(job.crawl.seeds, vec!["http://news.example/".to_string()]);
        assert!(job.recrawl.always);
        assert!(job.schedule.is_some());
        assert_eq!(
            cfg.crawl.user_agent, "base-agent",
            "[crawl] itself unchanged"
        );

        let bad = text.replace("max_pages = 9", "max_pagez = 9");
        let e = toml::from_str::<crate::config::RawConfig>(&bad)
            .map(|_| ())
            .unwrap_err()
            .to_string();
        assert!(e.contains("max_pagez") && e.contains("max_pages"), "{e}");
        let bad = text.replace("timeout_secs = 5", "timeout_secs = 5\nschedule = \"x\"");
        assert!(
            toml::from_str::<crate::config::RawConfig>(&bad).is_err(),
            "a job's own key is not a [crawl] setting"
        );
        let bad = text.replace("max_pages = 9", "concurrency = 0");
        let raw: crate::config::RawConfig = toml::from_str(&bad).unwrap_or_else(|e| panic!("{e}"));
        let e = format!("{:#}", crate::config::Config::from_raw(raw).unwrap_err());
        assert!(
            e.contains("[[job]] \"news\": concurrency must be at least 1"),
            "{e}"
        );
    }

    #[test]
    fn bad_job_tables_name_the_job_and_field() {
        let job = |f: &dyn Fn(&mut RawJob)| {
            let mut j = RawJob::new("news", &["http://127.0.0.1/"]);
            f(&mut j);
            validate_jobs(&[j], &RawCrawl::default())
                .err()
                .map(|e| format!("{e:#}"))
                .unwrap_or_default()
        };
        assert!(job(&|_| {}).is_empty());
        assert!(job(&|j| j.job.name = "a b".into()).contains("name"));
        assert!(job(&|j| j.crawl.seeds.clear()).contains("\"news\": seeds"));
        assert!(job(&|j| j.crawl.seeds = vec!["ftp://x/".into()]).contains("seeds"));
        let e = job(&|j| j.job.feeds = vec!["not a url".into()]);
        assert!(e.contains("\"news\": feeds: \"not a url\""), "{e}");
        let e = job(&|j| j.job.recrawl.revisit_steps = Some(vec!["soon".into()]));
        assert!(
            e.contains("\"news\": recrawl.revisit_steps = \"soon\""),
            "{e}"
        );
        let e = job(&|j| j.job.recrawl.mode = Some("never".into()));
        assert!(e.contains("recrawl.mode"), "{e}");
        let e = job(&|j| j.job.schedule = Some("every hour".into()));
        assert!(e.contains("\"news\": schedule = \"every hour\""), "{e}");
        let e = job(&|j| j.job.schedule = Some("0 0 * * *".into()));
        assert!(e.contains("schedule"), "five fields: {e}");
        let e = job(&|j| {
            j.job.schedule = Some("0 0 6 * * *".into());
            j.job.timezone = Some("Mars/Olympus".into());
        });
        assert!(e.contains("timezone = \"Mars/Olympus\""), "{e}");
        assert!(job(&|j| j.job.timezone = Some("UTC".into())).contains("timezone"));
    }

    #[test]
    fn schedules_fire_in_their_time_zone() {
        let s = JobSchedule::parse("news", "0 0 6 * * *", Some("Asia/Shanghai"))
            .unwrap_or_else(|e| panic!("{e}"));
        let t = at("2026-01-01T00:00:00Z");
        // 06:00 in Shanghai is 22:00 UTC the day before.
        assert_eq!(s.next_after(t), Some(at("2026-01-01T22:00:00Z")));
    }
}
