//! The storage half: per batch, decide (new, changed, revisit, 304), place, write
//! the records to packs, sync, then index them; on its own OS thread.
//!
//! [`Ingest`] holds a run's storage state; each step is a module of its own
//! ([`super::decide`], [`super::place`], [`super::write`], [`super::index`]) over the
//! shapes of [`super::batch`].

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use crawler::{CrawlEvent, NotModifiedPage};
use indexer::Index;
use packer::{PackLocation, Packer};

use crate::config::Config;
use crate::jobs::Recrawl;
use crate::stores::Stores;
use crate::summary::IngestSummary;

use super::analyse::{Analysed, AnalysedEmbed, Analyser, Stored};
use super::batch::{Applying, BatchRows, PagePlace};

/// The storage half of the pipeline.
pub struct Ingest {
    pub(super) cfg: Config,
    pub(super) packer: Packer,
    pub(super) index: Arc<Index>,
    pub(super) analyser: Analyser,
    pub(super) summary: IngestSummary,
    pub(super) packs_seen: std::collections::HashSet<String>,
    pub(super) recrawl: Recrawl,
    /// Embeds waiting for the next batch (after their pages).
    pub(super) embeds: Vec<AnalysedEmbed>,
    /// Pages stored in this run: where their records went (their embeds
    /// go to the same pack, linked to the page's record).
    pub(super) page_places: HashMap<String, PagePlace>,
    /// Batches packed and synced by this process.
    pub(super) packed_batches: u64,
    /// [`CRASH_AFTER_PACKED`]: the batch after whose sync the process kills itself.
    pub(super) crash_after_packed: Option<u64>,
    /// [`CRASH_AFTER_TEXT`]: the batch after whose words the process kills itself.
    pub(super) crash_after_text: Option<u64>,
    /// Whether a batch's index rows are applied on their own thread while
    /// the next batch is looked up, placed and packed ([`Ingest::apply_behind`]).
    pub(super) apply_behind: bool,
    /// The last batch's index rows, being applied.
    pub(super) applying: Option<Applying>,
    /// Batches taken by [`Ingest::store_records`] (with something to store).
    pub(super) batches_taken: u64,
    /// The number of the last of them whose index rows are applied.
    pub(super) batches_indexed: u64,
}

/// Crash tests: `HARVEST_CRASH_AFTER_PACKED=N` makes the process kill itself
/// (SIGKILL) once its Nth batch is packed and synced, before the batch is
/// indexed: the moment a crash leaves records the index does not know.
pub const CRASH_AFTER_PACKED: &str = "HARVEST_CRASH_AFTER_PACKED";

/// Crash tests: `HARVEST_CRASH_AFTER_TEXT=N` makes the process kill itself once
/// its Nth batch's words are in the text index, before the batch's rows: the
/// moment a crash leaves words of pages that have no rows (`indexer::textmark`).
pub const CRASH_AFTER_TEXT: &str = "HARVEST_CRASH_AFTER_TEXT";

/// `isPartOf` of the packs written by an ad-hoc crawl (a job writes its name).
pub const PART_OF_CRAWL: &str = "crawl";

/// `isPartOf` of the packs written by `harvest import`.
pub const PART_OF_IMPORT: &str = "import";

/// The fields of the warcinfo record that starts every pack (after the packer's `software`,
/// `format` and `conformsTo`): `hostname` (of this machine), `operator` (`[storage]
/// operator`, when set), `isPartOf` (`part_of`: the job, [`PART_OF_CRAWL`] or
/// [`PART_OF_IMPORT`]), `robots` (`obey` or `ignore`, as `[crawl] respect_robots`) and
/// `http-header-user-agent` (the `User-Agent` every request sends).
pub fn warcinfo_fields(cfg: &Config, part_of: &str) -> Vec<(String, String)> {
    let mut fields = Vec::new();
    let host = indexer::batch::host_name();
    if !host.is_empty() {
        fields.push(("hostname".to_string(), host));
    }
    if let Some(operator) = &cfg.operator {
        fields.push(("operator".to_string(), operator.clone()));
    }
    let robots = if cfg.crawl.respect_robots {
        "obey"
    } else {
        "ignore"
    };
    fields.extend([
        ("isPartOf".to_string(), part_of.to_string()),
        ("robots".to_string(), robots.to_string()),
        (
            "http-header-user-agent".to_string(),
            cfg.crawl.user_agent.clone(),
        ),
    ]);
    fields
}

impl Ingest {
    /// The storage half of a run whose packs say they are part of `part_of` (warcinfo
    /// `isPartOf`: the job's name, [`PART_OF_CRAWL`] or [`PART_OF_IMPORT`]).
    pub fn new(
        cfg: &Config,
        stores: &Stores,
        model: Option<classifier::Model>,
        part_of: &str,
    ) -> Result<Ingest> {
        let packer = Packer::new(
            stores.packs.clone(),
            packer::PackerOptions {
                max_pack_bytes: cfg.max_pack_bytes,
                max_open_packs: cfg.max_open_packs,
                warcinfo_fields: warcinfo_fields(cfg, part_of),
                append_to_existing: cfg.append_packs,
            },
        );
        Ok(Ingest {
            cfg: cfg.clone(),
            packer,
            index: stores.index.clone(),
            analyser: Analyser::new(cfg, model, &stores.index),
            summary: IngestSummary::default(),
            packs_seen: Default::default(),
            recrawl: Recrawl::default(),
            embeds: Vec::new(),
            page_places: HashMap::new(),
            packed_batches: 0,
            crash_after_packed: std::env::var(CRASH_AFTER_PACKED)
                .ok()
                .and_then(|n| n.parse().ok()),
            crash_after_text: std::env::var(CRASH_AFTER_TEXT)
                .ok()
                .and_then(|n| n.parse().ok()),
            apply_behind: false,
            applying: None,
            batches_taken: 0,
            batches_indexed: 0,
        })
    }

    /// From now on a batch's index rows are applied on their own thread
    /// while the next batch is looked up, placed and packed (its reads see
    /// them through [`Index::overlaid`]); the next batch's index step, and
    /// [`Ingest::wait_applied`], wait for them. On HBase applying a batch
    /// takes about as long as the next batch's other steps. A batch is then
    /// indexed only when [`Ingest::batches_indexed`] says so: its URLs
    /// leave a durable queue no earlier.
    pub fn apply_behind(&mut self, on: bool) {
        self.apply_behind = on;
    }

    /// Batches taken by [`Ingest::store_records`] so far (calls with
    /// nothing to store are not counted).
    pub fn batches_taken(&self) -> u64 {
        self.batches_taken
    }

    /// The number of the last batch whose index rows are applied: batches
    /// up to it are wholly indexed.
    pub fn batches_indexed(&self) -> u64 {
        self.batches_indexed
    }

    /// The per-page work that can run on other threads (see [`Analysed`]).
    pub fn analyser(&self) -> Analyser {
        self.analyser.clone()
    }

    /// The revisit schedule used for the URL states written from now on.
    pub fn set_recrawl(&mut self, recrawl: Recrawl) {
        self.recrawl = recrawl;
    }

    /// The writer token in the names of the packs this ingest writes.
    pub fn pack_writer(&self) -> &str {
        self.packer.writer()
    }

    /// Records in the `runs` table, before this run's first byte goes into a
    /// pack an earlier run wrote, where in it this run's records start: a
    /// crash of the run takes them up with those of its own packs.
    pub fn note_appends_of(
        &mut self,
        runs: indexer::RunsTable,
        job: String,
        started: chrono::DateTime<chrono::Utc>,
    ) {
        self.packer.set_append_note(Arc::new(move |path, from| {
            runs.note_appended(&job, started, path, from)
                .map_err(|e| packer::Error::Io {
                    path: path.to_string(),
                    source: std::io::Error::other(format!(
                        "cannot record in the run's record that it appends to this pack: {e}"
                    )),
                })
        }));
    }

    /// Counters carried over from an interrupted run being resumed.
    pub fn resume_from(&mut self, summary: IngestSummary) {
        self.summary = summary;
    }

    /// An embed to store with the next batch.
    pub fn queue_embed(&mut self, embed: AnalysedEmbed) {
        self.embeds.push(embed);
    }

    /// Count a crawler event that carries no page.
    pub fn note_event<P>(&mut self, event: &CrawlEvent<P>) {
        match event {
            CrawlEvent::NotModified(_) => {}
            CrawlEvent::Failure { kind, .. } => {
                *self
                    .summary
                    .failures
                    .entry(kind.label().to_string())
                    .or_default() += 1
            }
            CrawlEvent::Page(_) | CrawlEvent::Embed(_) => {}
        }
    }

    /// Store a batch: decide each record (response or revisit), place the
    /// pages of every (topic, day) into cluster packs, write the records
    /// (and a revisit record for each 304), make the packs durable, then
    /// index pages, digests, URLs and centres.
    pub fn store_batch(
        &mut self,
        pages: Vec<Analysed>,
        not_modified: Vec<NotModifiedPage>,
    ) -> Result<()> {
        let not_modified = not_modified.into_iter().map(|nm| (nm, None)).collect();
        self.store_records(pages, not_modified)
    }

    /// [`Ingest::store_batch`] where some records may already be in packs
    /// (pages analysed with [`Analyser::analyse_stored`], 304 revisits with
    /// their [`Stored`] place): those are indexed where they lie.
    ///
    /// The steps, each timed in the summary's storage times: decide
    /// ([`Ingest::decide`], the lookups), place ([`Ingest::place`]), write
    /// ([`Ingest::write`]), sync ([`Ingest::sync`]), index ([`Ingest::index_batch`],
    /// then [`Ingest::apply`]).
    pub fn store_records(
        &mut self,
        pages: Vec<Analysed>,
        not_modified: Vec<(NotModifiedPage, Option<Stored>)>,
    ) -> Result<()> {
        if pages.is_empty() && not_modified.is_empty() && self.embeds.is_empty() {
            return Ok(());
        }
        self.batches_taken += 1;
        let mut clock = Instant::now();
        let mut lap = || {
            let now = Instant::now();
            let secs = now.duration_since(clock).as_secs_f64();
            clock = now;
            secs
        };
        // The batch's lookups (URL states, digests), kept for its index step.
        let read = indexer::ReadRows::default();
        let prepared = self.decide(pages, &read)?;
        self.summary.storage.lookup_secs += lap();
        let placement = self.place(&prepared)?;
        self.summary.storage.placement_secs += lap();
        let written = self.write(prepared, placement, not_modified)?;
        self.summary.storage.write_secs += lap();
        self.sync()?;
        self.summary.storage.sync_secs += lap();
        let rows = BatchRows::of(written);
        let clusters = rows.clusters();
        let (linked, mutations) = self.index_batch(read, rows)?;
        self.summary.storage.index_secs += lap();
        self.apply(mutations)?;
        self.summary.storage.batches += 1;
        if let Some(linked) = linked {
            self.summary.near_duplicates += linked.near_duplicates;
        }
        self.summary.clusters_updated += clusters;
        Ok(())
    }

    /// The sync step: the batch's packs made durable. Durability rule: nothing is
    /// indexed before its pack is synced.
    fn sync(&mut self) -> Result<()> {
        self.packer.sync_all().context("syncing packs")?;
        self.packed_batches += 1;
        if self.crash_after_packed == Some(self.packed_batches) {
            tracing::warn!(
                batch = self.packed_batches,
                "{CRASH_AFTER_PACKED}: killing this process between a batch's pack sync and its index write"
            );
            crate::crash::kill_this_process();
        }
        Ok(())
    }

    pub(super) fn account(
        &mut self,
        body_bytes: u64,
        topic: &str,
        revisit: bool,
        loc: &PackLocation,
    ) {
        self.summary.pages += 1;
        self.summary.bytes += body_bytes;
        self.summary.pack_bytes += loc.length;
        if revisit {
            self.summary.duplicates += 1;
        } else {
            *self.summary.topics.entry(topic.to_string()).or_default() += 1;
        }
        if self.packs_seen.insert(loc.path.clone()) {
            self.summary.packs += 1;
        }
    }

    /// Close every pack and return the summary.
    pub fn finish(mut self, elapsed: Duration) -> Result<IngestSummary> {
        let applied = self.wait_applied();
        self.packer.close_all().context("closing packs")?;
        applied?;
        self.summary.elapsed_secs = elapsed.as_secs_f64();
        Ok(std::mem::take(&mut self.summary))
    }

    pub fn summary(&self) -> &IngestSummary {
        &self.summary
    }
}

impl Drop for Ingest {
    /// A run that stops on an error still waits for the batch being
    /// indexed: whoever takes the run up next must find it in.
    fn drop(&mut self) {
        if let Err(e) = self.wait_applied() {
            tracing::warn!(error = %format!("{e:#}"), "a batch's index rows, applied while the run stopped");
        }
    }
}
