//! A crawl or a job run: the crawler on tokio, the analysis stage beside it, the
//! storage thread behind a bounded channel; a crashed run taken up first.

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use crawler::{CrawlEvent, NotModifiedPage};
use tokio::sync::mpsc;

use crate::config::Config;
use crate::jobs::Recrawl;
use crate::stores::Stores;
use crate::summary::IngestSummary;

use super::write::header_value;
use super::{analyse::*, progress::*, store::*};

/// Validators for conditional GET, read from the `urls` table, and the
/// stored copy of a page (for the links of a 304), read from its pack.
struct IndexHistory(Stores);

impl crawler::UrlHistory for IndexHistory {
    fn validators(&self, url: &url::Url) -> Option<crawler::Validators> {
        // Only a remote table store's read leaves the tokio worker: an
        // embedded read (fjall, microseconds from its cache) handed the
        // worker's tasks to another thread before every fetch, which cost
        // more CPU in thread switches than the read.
        let index = &self.0.index;
        let state = crate::jobs::blocking_if(index.store().remote(), || {
            index.get_url(url.as_str()).ok().flatten()
        })?;
        if state.etag.is_none() && state.last_modified.is_none() {
            return None;
        }
        Some(crawler::Validators {
            etag: state.etag,
            last_modified: state.last_modified,
        })
    }

    fn stored_copy(&self, url: &url::Url) -> Option<crawler::StoredCopy> {
        // A plain thread, not a tokio one: the HDFS pack store refuses calls
        // made inside a runtime (its blocking pool included).
        std::thread::scope(|scope| {
            scope
                .spawn(|| self.read_stored_copy(url))
                .join()
                .ok()
                .flatten()
        })
    }
}

impl IndexHistory {
    fn read_stored_copy(&self, url: &url::Url) -> Option<crawler::StoredCopy> {
        let page = crate::read::page_by_url(&self.0, url.as_str())
            .ok()
            .flatten()?;
        match crate::read::page_response(&self.0, &page) {
            Ok(http) => Some(crawler::StoredCopy {
                content_type: header_value(&http.headers, "content-type").unwrap_or_default(),
                body: http.body,
            }),
            Err(e) => {
                tracing::warn!(url = %url, error = %format!("{e:#}"), "cannot read the stored copy");
                None
            }
        }
    }
}

/// A crawl run as a job: a durable queue in the `frontier` table and a row
/// in the `runs` table; an interrupted run of the job is taken up.
#[derive(Debug, Clone)]
pub struct JobRun {
    /// Job name.
    pub name: String,
    /// Revisit policy.
    pub recrawl: Recrawl,
}

/// Options of one crawl run on top of the config.
#[derive(Debug, Clone, Default)]
pub struct CrawlRun {
    /// Progress output on stderr.
    pub progress: Progress,
    /// Use conditional GET with validators from earlier captures.
    pub conditional: bool,
    /// Run as a job (durable queue, run record); `None`: a queue in memory.
    pub job: Option<JobRun>,
    /// Stops the run when cancelled (a forwarded command whose caller went
    /// away): fetches stop, the pages fetched so far are stored and indexed,
    /// the queue is kept and the run is recorded `cancelled`, so the next
    /// run of the job takes it up.
    pub cancel: crawler::CancellationToken,
}

/// What a run did, and which run it was.
#[derive(Debug, Clone, serde::Serialize)]
pub struct RunReport {
    /// Job name (none for an in-memory crawl).
    pub job: Option<String>,
    /// Start of the run (an interrupted run keeps its start).
    pub started: Option<chrono::DateTime<chrono::Utc>>,
    /// Times the run was taken up after an interruption.
    pub resumed: u32,
    /// Known articles not fetched because their revisit was not due.
    pub not_due: u64,
    /// Stopped on request before its queue was done (the next run of the
    /// job takes it up).
    pub cancelled: bool,
    /// The counters.
    #[serde(flatten)]
    pub summary: IngestSummary,
}

/// What the storage thread gathers for its next batch, and the requested
/// URLs of the batches it stored whose index rows may not be in yet.
#[derive(Default)]
struct Gathered {
    pages: Vec<Analysed>,
    not_modified: Vec<NotModifiedPage>,
    /// The requested URLs of the pages and 304s gathered.
    done: Vec<String>,
    /// By batch number ([`Ingest::batches_taken`]).
    unindexed: std::collections::VecDeque<(u64, Vec<String>)>,
}

impl Gathered {
    /// Stores what was gathered as a batch.
    fn store(&mut self, ingest: &mut Ingest) -> Result<()> {
        ingest.store_batch(
            std::mem::take(&mut self.pages),
            std::mem::take(&mut self.not_modified),
        )?;
        self.unindexed
            .push_back((ingest.batches_taken(), std::mem::take(&mut self.done)));
        Ok(())
    }

    /// The URLs of the stored batches whose index rows are now in.
    fn indexed(&mut self, ingest: &Ingest) -> Vec<Vec<String>> {
        let mut out = Vec::new();
        while let Some((n, _)) = self.unindexed.front() {
            if *n > ingest.batches_indexed() {
                break;
            }
            if let Some((_, urls)) = self.unindexed.pop_front() {
                out.push(urls);
            }
        }
        out
    }
}

/// A crawler event on its way to the storage thread: a page the crawl's reader
/// analysed, an embed being hashed (awaited in arrival order), or an event that needs
/// no analysis.
enum Staged {
    Page(Box<Analysed>),
    Embed(tokio::task::JoinHandle<AnalysedEmbed>),
    Other(CrawlEvent<Reading>),
}

/// Passes on, in arrival order, each page the crawler analysed (its reader is the
/// [`Analyser`]) and hands each embed to the blocking pool to be hashed. Ends when the
/// crawler closes its channel or the storage thread stops reading.
async fn analyse_stage(
    analyser: Analyser,
    mut events: mpsc::Receiver<CrawlEvent<Reading>>,
    staged: mpsc::Sender<Staged>,
) {
    while let Some(event) = events.recv().await {
        let next = match event {
            CrawlEvent::Page(page) => Staged::Page(Box::new(Analysed::from_crawl(*page))),
            CrawlEvent::Embed(embed) => {
                let analyser = analyser.clone();
                Staged::Embed(tokio::task::spawn_blocking(move || {
                    analyser.analyse_embed(*embed)
                }))
            }
            other => Staged::Other(other),
        };
        if staged.send(next).await.is_err() {
            break;
        }
    }
}

/// Creates this year's page tables of the seeds' sources beside the first
/// fetches (on HBase a new table takes seconds; the first batch, whose pages
/// without a publish time go there, would wait for it). Nothing to wait for:
/// a batch that needs such a table waits for its creation, and one that
/// failed here is created by the batch.
fn prepare_page_tables(stores: &Stores, cfg: &Config, seeds: &[url::Url]) {
    let mut sources: Vec<String> = seeds.iter().map(|s| cfg.source_for(s.as_str())).collect();
    sources.sort();
    sources.dedup();
    let index = stores.index.clone();
    let year = chrono::Datelike::year(&chrono::Utc::now());
    std::thread::spawn(move || {
        let names: Vec<&str> = sources.iter().map(String::as_str).collect();
        if let Err(e) = index.prepare_page_tables(&names, year) {
            tracing::debug!(error = %e, "preparing this year's page tables");
        }
    });
}

/// Crawl with the configured seeds and store everything.
pub async fn run_crawl(cfg: &Config, stores: &Stores, run: CrawlRun) -> Result<IngestSummary> {
    Ok(run_job(cfg, stores, run).await?.summary)
}

/// [`run_crawl`] with the run's identity in the answer.
pub async fn run_job(cfg: &Config, stores: &Stores, run: CrawlRun) -> Result<RunReport> {
    let model = crate::load_model_or_warn(&cfg.model)?;
    let part_of = run.job.as_ref().map_or(PART_OF_CRAWL, |j| j.name.as_str());
    let mut ingest = Ingest::new(cfg, stores, model, part_of)?;
    // A batch's index rows are applied while the next batch is packed; the
    // storage thread lets its URLs leave the queue once they are in.
    ingest.apply_behind(true);
    let mut crawl_cfg = crate::crawl_config(cfg)?;
    prepare_page_tables(stores, cfg, &crawl_cfg.seeds);
    let history: Arc<dyn crawler::UrlHistory> = if run.conditional {
        Arc::new(IndexHistory(stores.clone()))
    } else {
        Arc::new(crawler::NoHistory)
    };
    let recrawl = run
        .job
        .as_ref()
        .map_or_else(Recrawl::always, |j| j.recrawl.clone());
    ingest.set_recrawl(recrawl.clone());
    let active = start_run(cfg, stores, &run, &mut ingest, &mut crawl_cfg).await?;
    let (table_queue, queue) = open_queue(stores, &run, recrawl).await?;
    let start = Instant::now();
    let batch_pages = cfg.packing.batch_pages;
    let capacity = batch_pages.clamp(64, 4096);
    let (tx, rx) = mpsc::channel::<CrawlEvent<Reading>>(capacity);
    // Pages are analysed (classified, hashed, encoded) on the blocking pool
    // as they arrive, in order, then handed to the storage thread.
    let (staged_tx, staged_rx) = mpsc::channel::<Staged>(capacity);
    let reader = ingest.analyser();
    let analyse_stage = tokio::spawn(analyse_stage(ingest.analyser(), rx, staged_tx));
    let bar = progress_bar(&run.progress);
    let storage = StorageThread {
        ingest,
        staged: staged_rx,
        queue: queue.clone(),
        table: table_queue.clone(),
        active,
        handle: tokio::runtime::Handle::current(),
        bar: bar.clone(),
        lines: match &run.progress {
            Progress::Lines => Some(LineSink::new(crate::logline::say)),
            Progress::To(sink) => Some(sink.clone()),
            Progress::Quiet | Progress::Bar => None,
        },
        batch_pages,
        max_wait: cfg.packing.max_batch_wait,
        start,
    };
    let storage = std::thread::Builder::new()
        .name("harvest-storage".into())
        .spawn(move || storage.run())
        .context("cannot start the storage thread")?;
    let crawl_result =
        // Pages are analysed by the crawler's task that decodes them: the
        // analyser is the crawl's reader.
        crawler::crawl_with_queue(
            crawl_cfg,
            reader,
            history,
            queue,
            tx,
            run.cancel.clone(),
        )
        .await;
    let cancelled = crawl_result.as_ref().is_ok_and(|s| s.cancelled);
    let (finished, mut active) = tokio::task::spawn_blocking(move || storage.join())
        .await
        .context("waiting for the storage thread")?
        .map_err(|_| anyhow::anyhow!("the storage thread panicked"))?;
    analyse_stage.await.context("the analysing stage failed")?;
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    let outcome = finished
        .context("storing pages")
        .and_then(|summary| with_crawl_summary(summary, crawl_result));
    if let Some(q) = &table_queue {
        let q = q.clone();
        if let Err(e) = tokio::task::spawn_blocking(move || q.flush()).await? {
            tracing::warn!(error = %format!("{e:#}"), "cannot write the rest of the crawl queue");
        }
    }
    let not_due = table_queue.as_ref().map_or(0, |q| q.not_due());
    if let Some(a) = active.as_mut() {
        let queued = table_queue.as_ref().map_or(0, |q| q.pending());
        end_run(a, &outcome, cancelled, queued);
    }
    let summary = outcome?;
    Ok(RunReport {
        job: run.job.map(|j| j.name),
        started: active.as_ref().map(|a| a.record.started),
        resumed: active.as_ref().map_or(0, |a| a.record.resumed),
        not_due,
        cancelled,
        summary,
    })
}

/// A job's run record, started (a run left interrupted or failed is taken up: what a
/// crashed process packed and did not index is indexed now) and knowing this run's pack
/// writer; `None` for an ad-hoc crawl.
async fn start_run(
    cfg: &Config,
    stores: &Stores,
    run: &CrawlRun,
    ingest: &mut Ingest,
    crawl_cfg: &mut crawler::CrawlConfig,
) -> Result<Option<crate::jobs::ActiveRun>> {
    let Some(job) = &run.job else {
        return Ok(None);
    };
    let index = stores.index.clone();
    let name = job.name.clone();
    let a = tokio::task::spawn_blocking(move || crate::jobs::ActiveRun::start(&index, &name))
        .await
        .context("starting the run")??;
    if a.is_resumed() {
        take_up(cfg, stores, &a, ingest, crawl_cfg).await?;
    }
    crate::job_metrics::started(&a.record.job, ingest.summary());
    // Before this run writes a pack: a crash of it is taken up so too.
    ingest.note_appends_of(a.runs_table(), a.record.job.clone(), a.record.started);
    let writer = ingest.pack_writer().to_owned();
    let mut a = a;
    let recorded = tokio::task::spawn_blocking(move || a.add_writer(&writer).map(|()| a))
        .await
        .context("recording the run's pack writer")?
        .context("recording the run's pack writer")?;
    Ok(Some(recorded))
}

/// Takes up the interrupted or failed run `a`: its counts carried over, and when its
/// process crashed, what it packed and did not index indexed now (nothing it archived is
/// fetched again).
async fn take_up(
    cfg: &Config,
    stores: &Stores,
    a: &crate::jobs::ActiveRun,
    ingest: &mut Ingest,
    crawl_cfg: &mut crawler::CrawlConfig,
) -> Result<()> {
    let mut before: IngestSummary =
        serde_json::from_value(a.record.summary.clone()).unwrap_or_default();
    let mut note = String::new();
    if a.crashed && !a.record.writers.is_empty() {
        // What the dead process packed and did not index is indexed
        // now, and nothing it archived is fetched again.
        let taken = take_up_packs(cfg, stores, &a.record.writers, &a.record.appended).await?;
        before.taken_up_indexed += taken.indexed;
        // Its last heartbeat may be seconds older than its last batch.
        before.pages = before.pages.max(taken.pages);
        before.not_modified = before.not_modified.max(taken.not_modified);
        note = format!(
            "; {} of the {} records in its {} packs indexed now",
            taken.indexed, taken.records, taken.packs
        );
        if taken.unreadable > 0 {
            note.push_str(&format!(", {} packs unreadable", taken.unreadable));
        }
        crawl_cfg.stored_in_run = Arc::new(taken.stored);
    }
    if let Some(max) = crawl_cfg.max_pages {
        crawl_cfg.max_pages = Some(max.saturating_sub(before.pages + before.not_modified));
    }
    let what = match &a.failed_on {
        Some(error) => format!("failed run (it stopped on: {error})"),
        None => "interrupted run".to_string(),
    };
    crate::logline::say(&format!(
        "harvest: taking up the {what} of job {} started {} ({} pages stored before{note})",
        a.record.job, a.record.started, before.pages
    ));
    ingest.resume_from(before);
    Ok(())
}

/// The run's crawl queue: a job's durable one (also returned as such, to flush and
/// count), else one in memory.
async fn open_queue(
    stores: &Stores,
    run: &CrawlRun,
    recrawl: Recrawl,
) -> Result<(
    Option<Arc<crate::jobs::TableQueue>>,
    Arc<dyn crawler::UrlQueue>,
)> {
    let table_queue: Option<Arc<crate::jobs::TableQueue>> = match &run.job {
        Some(job) => {
            let index = stores.index.clone();
            let name = job.name.clone();
            Some(Arc::new(
                tokio::task::spawn_blocking(move || {
                    crate::jobs::TableQueue::open(index, &name, recrawl)
                })
                .await
                .context("opening the crawl queue")??,
            ))
        }
        None => None,
    };
    let queue: Arc<dyn crawler::UrlQueue> = match &table_queue {
        Some(q) => q.clone(),
        None => Arc::new(crawler::MemoryQueue::new()),
    };
    Ok((table_queue, queue))
}

/// The spinner of a run shown with a progress bar.
fn progress_bar(progress: &Progress) -> Option<indicatif::ProgressBar> {
    matches!(progress, Progress::Bar).then(|| {
        let bar = indicatif::ProgressBar::new_spinner();
        bar.set_style(
            indicatif::ProgressStyle::with_template("{spinner} {elapsed_precise} {msg}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner()),
        );
        bar.enable_steady_tick(Duration::from_millis(200));
        bar
    })
}

/// The storage summary with what the crawler counted (discovery, taken-up URLs, page
/// budgets, failures it counted without an event).
fn with_crawl_summary(
    mut summary: IngestSummary,
    crawl_result: crawler::Result<crawler::CrawlSummary>,
) -> Result<IngestSummary> {
    let crawl_summary = crawl_result.context("crawl failed")?;
    summary.discovery_documents += crawl_summary.discovery_documents;
    summary.discovered_urls += crawl_summary.discovered_urls;
    summary.taken_up_not_fetched += crawl_summary.taken_up;
    summary.add_limits(&crawl_summary);
    // Failures the crawler counted without an event (none expected) are kept.
    for (kind, n) in crawl_summary.failures {
        let e = summary.failures.entry(kind).or_default();
        *e = (*e).max(n);
    }
    Ok(summary)
}

/// Records the end of the job's run `a` (its metrics first: a reader that sees the run
/// ended in the `runs` table finds it counted).
fn end_run(
    a: &mut crate::jobs::ActiveRun,
    outcome: &Result<IngestSummary>,
    cancelled: bool,
    queued: u64,
) {
    let (status, summary, error) = match outcome {
        Ok(s) => (
            if cancelled {
                indexer::RunStatus::Cancelled
            } else {
                indexer::RunStatus::Finished
            },
            serde_json::to_value(s).unwrap_or_default(),
            None,
        ),
        Err(e) => (
            indexer::RunStatus::Failed,
            a.record.summary.clone(),
            Some(format!("{e:#}")),
        ),
    };
    let at = chrono::Utc::now();
    crate::job_metrics::ended(
        &a.record.job,
        status.label(),
        outcome.as_ref().ok(),
        queued,
        at,
    );
    if let Err(e) = a.end(status, summary, error, at) {
        tracing::error!(error = %e, "cannot record the end of the run");
    }
}

/// The storage side of a run, on its own OS thread: events gathered into batches (by
/// size or by age), each stored, its URLs let out of the queue once indexed, progress
/// reported; the packs closed at the end.
struct StorageThread {
    ingest: Ingest,
    staged: mpsc::Receiver<Staged>,
    queue: Arc<dyn crawler::UrlQueue>,
    table: Option<Arc<crate::jobs::TableQueue>>,
    active: Option<crate::jobs::ActiveRun>,
    handle: tokio::runtime::Handle,
    bar: Option<indicatif::ProgressBar>,
    lines: Option<LineSink>,
    batch_pages: usize,
    max_wait: Duration,
    start: Instant,
}

impl StorageThread {
    fn run(mut self) -> (Result<IngestSummary>, Option<crate::jobs::ActiveRun>) {
        let result = self.store_events();
        // Packs are closed here, on a plain thread: a store may be a
        // blocking client of a remote file system (HDFS refuses
        // calls from inside a tokio runtime, its blocking pool too).
        let StorageThread {
            ingest,
            active,
            start,
            ..
        } = self;
        let finished = result.and_then(|()| ingest.finish(start.elapsed()));
        (finished, active)
    }

    fn store_events(&mut self) -> Result<()> {
        let mut gathered = Gathered {
            pages: Vec::with_capacity(self.batch_pages),
            ..Gathered::default()
        };
        let mut batch_started: Option<Instant> = None;
        let mut last_report = Instant::now();
        loop {
            // Wait for the next event, but not past the batch's
            // deadline (or the next progress report when idle).
            let wait = match batch_started {
                None => PROGRESS_EVERY,
                Some(t0) => self.max_wait.saturating_sub(t0.elapsed()),
            };
            let staged = &mut self.staged;
            let event = self
                .handle
                .block_on(async { tokio::time::timeout(wait, staged.recv()).await });
            match event {
                Ok(None) => break,
                Ok(Some(Staged::Page(page))) => {
                    let page = *page;
                    batch_started.get_or_insert_with(Instant::now);
                    gathered.done.push(page.page.requested_url.clone());
                    gathered.pages.push(page);
                }
                Ok(Some(Staged::Other(CrawlEvent::NotModified(nm)))) => {
                    batch_started.get_or_insert_with(Instant::now);
                    gathered.done.push(nm.requested_url.clone());
                    gathered.not_modified.push(*nm);
                }
                Ok(Some(Staged::Embed(analysing))) => {
                    let embed = self
                        .handle
                        .block_on(analysing)
                        .context("hashing an embed")?;
                    self.ingest.queue_embed(embed);
                }
                Ok(Some(Staged::Other(other))) => self.ingest.note_event(&other),
                Err(_) => {} // timed out: the checks below
            }
            let due = batch_started.is_some_and(|t0| t0.elapsed() >= self.max_wait);
            if gathered.pages.len() + gathered.not_modified.len() >= self.batch_pages || due {
                self.store(&mut gathered)?;
                batch_started = None;
            }
            if last_report.elapsed() >= PROGRESS_EVERY
                || (self.bar.is_some() && batch_started.is_none())
            {
                report(
                    &self.ingest,
                    &self.queue,
                    &mut self.active,
                    &self.bar,
                    &self.lines,
                    self.start,
                    &mut last_report,
                );
            }
        }
        self.store(&mut gathered)?;
        self.ingest.wait_applied()?;
        self.release(&mut gathered)
    }

    /// Stores the gathered batch.
    fn store(&mut self, gathered: &mut Gathered) -> Result<()> {
        gathered.store(&mut self.ingest)?;
        self.release(gathered)
    }

    /// A batch's URLs leave the durable queue once its index rows are in.
    fn release(&self, gathered: &mut Gathered) -> Result<()> {
        for urls in gathered.indexed(&self.ingest) {
            if let Some(q) = &self.table {
                q.finish_stored(&urls)?;
            } else {
                self.queue.finish(&urls).map_err(|e| anyhow::anyhow!(e))?;
            }
        }
        Ok(())
    }
}

/// [`crate::replay::take_up_crashed_run`] on a plain thread (a remote pack
/// store refuses calls from a tokio runtime's threads).
async fn take_up_packs(
    cfg: &Config,
    stores: &Stores,
    writers: &[String],
    appended: &[(String, u64)],
) -> Result<crate::replay::TakenUp> {
    let (cfg, stores) = (cfg.clone(), stores.clone());
    let (writers, appended) = (writers.to_vec(), appended.to_vec());
    let thread = std::thread::Builder::new()
        .name("harvest-take-up".into())
        .spawn(move || {
            crate::replay::take_up_crashed_run(
                &cfg,
                &stores,
                &writers,
                &appended,
                &mut std::io::sink(),
            )
        })
        .context("cannot start the take-up thread")?;
    tokio::task::spawn_blocking(move || thread.join())
        .await
        .context("waiting for the take-up thread")?
        .map_err(|_| anyhow::anyhow!("the take-up thread panicked"))?
        .context("taking up the crashed run's packs")
}

/// Progress: the bar's message, a plain line, the run's heartbeat.
fn report(
    ingest: &Ingest,
    queue: &Arc<dyn crawler::UrlQueue>,
    active: &mut Option<crate::jobs::ActiveRun>,
    bar: &Option<indicatif::ProgressBar>,
    lines: &Option<LineSink>,
    start: Instant,
    last: &mut Instant,
) {
    let s = ingest.summary();
    let queued = queue.pending();
    if let Some(a) = active.as_ref() {
        crate::job_metrics::progress(&a.record.job, s, queued);
    }
    let line = progress_line(s, queued, start.elapsed());
    if let Some(bar) = bar {
        bar.set_message(line.trim_start().to_string());
    }
    if last.elapsed() < PROGRESS_EVERY {
        return;
    }
    *last = Instant::now();
    if let Some(sink) = lines {
        sink.send(&format!("harvest: {}", line.trim_start()));
    }
    if let Some(a) = active.as_mut() {
        if let Err(e) = a.heartbeat(serde_json::to_value(s).unwrap_or_default()) {
            tracing::warn!(error = %e, "cannot record the run's heartbeat");
        }
    }
}
