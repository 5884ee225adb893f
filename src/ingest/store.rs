//! The storage half: per batch, decide (new, changed, revisit, 304), place, write
//! the records to packs, sync, then index them; on its own OS thread.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use crawler::{CrawlEvent, NotModifiedPage};
use indexer::{ClusterRow, DigestEntry, Index, PageRecord, UrlState};
use packer::warc::{self, EncodedRecord, ResponseInput, RevisitInput};
use packer::{Centre, Location, PackKey, Packer};

use crate::config::{Config, PackingMode};
use crate::jobs::Recrawl;
use crate::stores::Stores;
use crate::summary::IngestSummary;

use super::records::request_record;
use super::{analyse::*, place::*};

/// The storage half of the pipeline.
pub struct Ingest {
    cfg: Config,
    packer: Packer,
    index: Arc<Index>,
    analyser: Analyser,
    summary: IngestSummary,
    packs_seen: std::collections::HashSet<String>,
    recrawl: Recrawl,
    /// Embeds waiting for the next batch (after their pages).
    embeds: Vec<AnalysedEmbed>,
    /// Pages stored in this run: where their records went (their embeds
    /// go to the same pack, linked to the page's record).
    page_places: HashMap<String, PagePlace>,
    /// Batches packed and synced by this process.
    packed_batches: u64,
    /// [`CRASH_AFTER_PACKED`]: the batch after whose sync the process kills itself.
    crash_after_packed: Option<u64>,
    /// [`CRASH_AFTER_TEXT`]: the batch after whose words the process kills itself.
    crash_after_text: Option<u64>,
    /// Whether a batch's index rows are applied on their own thread while
    /// the next batch is looked up, placed and packed ([`Ingest::apply_behind`]).
    apply_behind: bool,
    /// The last batch's index rows, being applied.
    applying: Option<Applying>,
    /// Batches taken by [`Ingest::store_records`] (with something to store).
    batches_taken: u64,
    /// The number of the last of them whose index rows are applied.
    batches_indexed: u64,
}

/// A batch's index rows being applied on their own thread.
struct Applying {
    /// The index as it will be once they are in: what the next batch reads.
    view: Index,
    /// The batch's number ([`Ingest::batches_taken`]).
    batch: u64,
    /// Seconds the application took.
    thread: std::thread::JoinHandle<indexer::Result<f64>>,
}

/// Crash tests: `HARVEST_CRASH_AFTER_PACKED=N` makes the process kill itself
/// (SIGKILL) once its Nth batch is packed and synced, before the batch is
/// indexed: the moment a crash leaves records the index does not know.
pub const CRASH_AFTER_PACKED: &str = "HARVEST_CRASH_AFTER_PACKED";

/// Crash tests: `HARVEST_CRASH_AFTER_TEXT=N` makes the process kill itself once
/// its Nth batch's words are in the text index, before the batch's rows: the
/// moment a crash leaves words of pages that have no rows (`indexer::textmark`).
pub const CRASH_AFTER_TEXT: &str = "HARVEST_CRASH_AFTER_TEXT";

/// Where a stored page's record went.
#[derive(Debug, Clone)]
struct PagePlace {
    key: PackKey,
    record_id: String,
    source: String,
}

/// Pages remembered for their embeds (then forgotten: a late embed goes to
/// the pack its page's index row names).
const MAX_PAGE_PLACES: usize = 100_000;

/// What [`Ingest::write_embeds`] leaves to index.
#[derive(Default)]
struct WrittenEmbeds {
    captures: Vec<indexer::Capture>,
    digests: Vec<DigestEntry>,
    images: Vec<indexer::ImageEntry>,
}

/// A page of a batch, decided but not yet written.
struct Prepared {
    page: Page,
    source: String,
    topic: String,
    topic_score: f32,
    digest: String,
    vector: Vec<f32>,
    simhash: Option<u64>,
    /// Runs of Chinese characters of the main text (the text index's).
    han: String,
    /// Day of the key time (published, else fetched), UTC.
    day: chrono::NaiveDate,
    previous: Option<UrlState>,
    recapture: bool,
    encoded: EncodedRecord,
    /// The capture's `request` record (written right after `encoded`).
    request: Option<EncodedRecord>,
    digest_update: DigestEntry,
    revisit: bool,
    stored: Option<Stored>,
    body_bytes: u64,
}

/// One page on its way into a pack and the index.
struct Pending {
    /// None for a re-capture of an unchanged page: no new index row.
    record: Option<PageRecord>,
    /// The words of the page for the text index (with `record`).
    text: Option<indexer::TextDoc>,
    capture: indexer::Capture,
    digest_update: DigestEntry,
    url_state: UrlState,
}

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

    /// Waits until the last batch's index rows are applied; their error,
    /// if applying them failed.
    pub fn wait_applied(&mut self) -> Result<()> {
        if let Some(a) = self.applying.take() {
            let secs = a
                .thread
                .join()
                .map_err(|_| anyhow::anyhow!("the index thread panicked"))?
                .context("indexing a batch")?;
            self.summary.storage.apply_secs += secs;
            self.batches_indexed = a.batch;
        }
        Ok(())
    }

    /// The index as the next batch must read it: with the rows of a batch
    /// still being applied.
    fn reader(&self) -> &Index {
        match &self.applying {
            Some(a) => &a.view,
            None => &self.index,
        }
    }

    /// Applies a batch's recorded index rows: here, or on their own thread
    /// ([`Ingest::apply_behind`]).
    fn apply(&mut self, mutations: Vec<indexer::Mutation>) -> Result<()> {
        if !self.apply_behind {
            let t0 = Instant::now();
            self.index
                .commit(&mutations)
                .context("indexing the batch")?;
            self.summary.storage.apply_secs += t0.elapsed().as_secs_f64();
            self.batches_indexed = self.batches_taken;
            return Ok(());
        }
        let flight = indexer::InFlight::new(mutations);
        let view = self.index.overlaid(&flight);
        let index = self.index.clone();
        // A plain thread: a remote store's client may refuse a runtime's.
        let thread = std::thread::Builder::new()
            .name("harvest-index".into())
            .spawn(move || {
                let t0 = Instant::now();
                let applied = index.commit(flight.mutations());
                flight.ended();
                applied.map(|()| t0.elapsed().as_secs_f64())
            })
            .context("cannot start the index thread")?;
        self.applying = Some(Applying {
            view,
            batch: self.batches_taken,
            thread,
        });
        Ok(())
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
        let prepared = self.prepare(pages, &read)?;
        self.summary.storage.lookup_secs += lap();
        let placement = self.place(&prepared)?;
        self.summary.storage.placement_secs += lap();
        let mut pending: Vec<Pending> = Vec::with_capacity(prepared.len());
        // Where the first capture of a digest new in this batch was written.
        let mut first_locations: HashMap<String, indexer::PackLocation> = HashMap::new();
        let mut cluster_packs: HashMap<(String, chrono::NaiveDate, u32), String> = HashMap::new();
        // Old rows of pages whose key time changed (a publish time appeared).
        let mut moved: Vec<indexer::PageKey> = Vec::new();
        // The batch's new packs are opened side by side (on HDFS each is a few NameNode
        // calls); one that fails here is tried again by its first write, which reports it.
        let keys: Vec<PackKey> = prepared
            .iter()
            .zip(&placement.clusters)
            .filter(|(p, _)| p.stored.is_none())
            .map(|(p, &cluster)| PackKey {
                topic: p.topic.clone(),
                date: p.day,
                cluster,
            })
            .collect();
        if let Err(e) = self.packer.open_ahead(&keys) {
            tracing::warn!(error = %e, "opening a batch's packs ahead");
        }
        for (mut p, &cluster) in prepared.into_iter().zip(&placement.clusters) {
            let key = PackKey {
                topic: p.topic.clone(),
                date: p.day,
                cluster,
            };
            let loc = match &p.stored {
                Some(s) => s.location.clone(),
                None => self
                    .write_capture(&key, &p.encoded, p.request.as_ref())
                    .with_context(|| format!("writing the record of {}", p.page.url))?,
            };
            cluster_packs.insert((p.topic.clone(), p.day, cluster), loc.path.clone());
            if self.page_places.len() >= MAX_PAGE_PLACES {
                self.page_places.clear();
            }
            self.page_places.insert(
                p.page.url.clone(),
                PagePlace {
                    key: key.clone(),
                    record_id: p.encoded.record_id.clone(),
                    source: p.source.clone(),
                },
            );
            let mut digest_update = p.digest_update;
            settle_first_location(
                &mut digest_update,
                p.revisit,
                &pack_location(&loc),
                &first_locations,
            );
            if !p.revisit {
                first_locations.insert(p.digest.clone(), digest_update.first_location.clone());
            }
            let changed = p.previous.is_some() && !p.recapture;
            self.account(p.body_bytes, &p.topic, p.revisit, &loc);
            match (&p.previous, p.recapture) {
                (None, _) => self.summary.new += 1,
                (Some(_), true) => self.summary.unchanged += 1,
                (Some(_), false) => self.summary.changed += 1,
            }
            let mut record = page_record(
                &p.page,
                &p.source,
                p.topic,
                p.topic_score,
                &p.digest,
                &p.encoded,
                &loc,
                p.revisit,
            );
            record.cluster = cluster;
            if !p.recapture {
                record.simhash = p.simhash;
                record.simhash_version =
                    p.simhash.map(|_| classifier::simhash::FINGERPRINT_VERSION);
            }
            // A page without a publish time keeps its first capture's key
            // time: a changed page replaces its row instead of adding one.
            record.first_seen = p.previous.as_ref().and_then(|s| s.first_capture);
            let captures = p.previous.as_ref().map_or(1, |s| s.captures + 1);
            // A page that states only when it was modified (a section page's
            // `og:updated_time`) is no article: hubs are fetched every run.
            let article = p.page.extract.published.is_some()
                && p.page.extract.published_from != Some(extract::PublishedFrom::Modified)
                && p.page.depth > 0;
            let (next_fetch, interval_secs) = if article {
                self.recrawl.next(
                    captures,
                    changed,
                    p.previous.as_ref().and_then(|s| s.interval_secs),
                    p.page.fetched_at,
                )
            } else {
                (None, None)
            };
            let url_state = UrlState {
                url: p.page.url.clone(),
                last_capture: p.page.fetched_at,
                captures,
                first_capture: p
                    .previous
                    .as_ref()
                    .and_then(|s| s.first_capture)
                    .or(Some(p.page.fetched_at)),
                etag: header_value(&p.page.headers, "etag"),
                last_modified: header_value(&p.page.headers, "last-modified"),
                table: p
                    .previous
                    .as_ref()
                    .map(|s| s.table.clone())
                    .unwrap_or_default(),
                row_key: p
                    .previous
                    .as_ref()
                    .map(|s| s.row_key.clone())
                    .unwrap_or_default(),
                digest: Some(p.digest.clone()),
                next_fetch,
                changes: p.previous.as_ref().map_or(0, |s| s.changes) + u64::from(changed),
                article,
                interval_secs,
            };
            if !p.recapture {
                if let Some(prev) = &p.previous {
                    let new_key = self.index.page_key(&record)?;
                    if !prev.table.is_empty()
                        && (prev.table != new_key.table || prev.row_key != new_key.row_key)
                    {
                        moved.push(indexer::PageKey {
                            table: prev.table.clone(),
                            row_key: prev.row_key.clone(),
                        });
                    }
                }
            }
            let capture = indexer::Capture {
                url: p.page.url.clone(),
                time: p.page.fetched_at,
                kind: if p.revisit {
                    indexer::CaptureKind::Revisit
                } else {
                    indexer::CaptureKind::Response
                },
                status: p.page.status,
                digest: Some(p.digest.clone()),
                record_id: p.encoded.record_id.clone(),
                location: pack_location(&loc),
                content_type: Some(header_value(&p.page.headers, "content-type")),
            };
            let text = (!p.recapture && self.index.text().is_some()).then(|| {
                indexer::TextDoc::of(
                    &record,
                    std::mem::take(&mut p.page.extract.tokens),
                    std::mem::take(&mut p.han),
                )
            });
            if let Some(dropped) = text.as_ref().map(|t| t.dropped).filter(|&d| d > 0) {
                self.summary.pages_text_cut += 1;
                self.summary.text_words_dropped += dropped as u64;
            }
            pending.push(Pending {
                capture,
                text,
                record: (!p.recapture).then_some(record),
                digest_update,
                url_state,
            });
        }
        let (not_modified_states, not_modified_captures) = self.write_not_modified(not_modified)?;
        let written = self.write_embeds(&first_locations)?;
        self.summary.storage.write_secs += lap();
        // Durability rule: nothing is indexed before its pack is synced.
        self.packer.sync_all().context("syncing packs")?;
        self.summary.storage.sync_secs += lap();
        self.packed_batches += 1;
        if self.crash_after_packed == Some(self.packed_batches) {
            tracing::warn!(
                batch = self.packed_batches,
                "{CRASH_AFTER_PACKED}: killing this process between a batch's pack sync and its index write"
            );
            crate::crash::kill_this_process();
        }

        let mut records: Vec<PageRecord> =
            pending.iter().filter_map(|p| p.record.clone()).collect();
        let texts: Vec<indexer::TextDoc> =
            pending.iter_mut().filter_map(|p| p.text.take()).collect();
        // Pages arrive in the order their analysis ends; the earliest fetch
        // of a story is its first page (and a reindex, which replays the
        // records by time, links them the same way).
        records.sort_by(|a, b| (a.fetched, &a.url).cmp(&(b.fetched, &b.url)));
        // The last update of a digest in this batch carries the final count.
        let mut digests: HashMap<String, DigestEntry> = HashMap::new();
        for p in &pending {
            let mut d = p.digest_update.clone();
            if d.first_location.path.is_empty() {
                if let Some(first) = first_locations.get(&d.digest) {
                    d.first_location = first.clone();
                }
            }
            digests.insert(d.digest.clone(), d);
        }
        for d in written.digests {
            digests.insert(d.digest.clone(), d);
        }
        let digests: Vec<DigestEntry> = digests.into_values().collect();
        let (embed_captures, images) = (written.captures, written.images);
        let rows: Vec<ClusterRow> = placement
            .centres
            .into_iter()
            .map(|(topic, day, c)| ClusterRow {
                pack: cluster_packs
                    .get(&(topic.clone(), day, c.cluster))
                    .cloned()
                    .unwrap_or_default(),
                topic,
                day,
                cluster: c.cluster,
                centre: c.centre,
                size: c.size,
            })
            .collect();
        let near = self
            .cfg
            .dedup
            .near_duplicates
            .then_some(self.cfg.dedup.distance);
        // Every row of the batch becomes visible at once (issue 13): page
        // rows and postings, the rows they replace, digests, URL states,
        // captures, cluster centres, fingerprints.
        let remote = self.index.store().remote();
        let crash_after_text = self.crash_after_text == Some(self.packed_batches);
        // The last batch's rows are in before this one's are read and decided.
        self.wait_applied()?;
        let (linked, mutations) = self
            .index
            .record_knowing(read, |ix| {
                let mut urls = Vec::with_capacity(pending.len() + not_modified_states.len());
                let mut captures = Vec::with_capacity(pending.len() + not_modified_captures.len());
                for p in pending {
                    let mut state = p.url_state;
                    if let Some(record) = &p.record {
                        let key = ix.page_key(record)?;
                        state.table = key.table;
                        state.row_key = key.row_key;
                    }
                    urls.push(state);
                    captures.push(p.capture);
                }
                urls.extend(not_modified_states);
                captures.extend(not_modified_captures);
                captures.extend(embed_captures);
                // Two groups of tables no write of the other touches, each
                // reading before it writes: side by side on a remote store
                // (each read a round trip).
                let (linked, rest) = both(
                    remote,
                    || -> indexer::Result<_> {
                        // The rows the pages replace are read beside the
                        // fingerprints (a link keeps a page's key).
                        let keys = records
                            .iter()
                            .map(|r| ix.page_key(r))
                            .collect::<indexer::Result<Vec<_>>>()?;
                        let (linked, stored) = both(
                            remote,
                            || match near {
                                Some(distance) => {
                                    ix.link_near_duplicates(&mut records, distance).map(Some)
                                }
                                None => Ok(None),
                            },
                            || ix.stored_page_entries(&keys),
                        );
                        let linked = linked?;
                        // Text first: text without rows is never returned, rows
                        // without text would be missed by text queries.
                        ix.index_texts(&texts)?;
                        if crash_after_text {
                            tracing::warn!(
                                "{CRASH_AFTER_TEXT}: killing this process between a batch's words and its rows"
                            );
                            crate::crash::kill_this_process();
                        }
                        ix.index_pages_over(&records, stored?)?;
                        if !moved.is_empty() {
                            ix.delete_pages(&moved)?;
                        }
                        Ok(linked)
                    },
                    || -> indexer::Result<()> {
                        ix.put_digests(&digests)?;
                        ix.put_urls(&urls)?;
                        ix.put_captures(&captures)?;
                        ix.put_images(&images)?;
                        ix.put_clusters(&rows)
                    },
                );
                rest?;
                linked
            })
            .context("indexing the batch")?;
        self.summary.storage.index_secs += lap();
        self.apply(mutations)?;
        self.summary.storage.batches += 1;
        if let Some(linked) = linked {
            self.summary.near_duplicates += linked.near_duplicates;
        }
        self.summary.clusters_updated += rows.len() as u64;
        Ok(())
    }

    /// First pass over a batch: source, topic, digest, response or revisit.
    fn prepare(&mut self, pages: Vec<Analysed>, read: &indexer::ReadRows) -> Result<Vec<Prepared>> {
        let mut out: Vec<Prepared> = Vec::with_capacity(pages.len());
        // Digests first captured inside this batch are not in the table yet.
        let mut batch_digests: HashMap<String, usize> = HashMap::new();
        // The batch's URL states and digest entries, each table read once
        // (a round trip per page and table on HBase otherwise).
        let (mut previous_of, mut earlier_of) = {
            let urls: Vec<&str> = pages.iter().map(|a| a.page.url.as_str()).collect();
            // On a remote store the rows read are kept: the index step
            // reads them again to merge and would otherwise ask twice.
            let remembering;
            let index = if self.index.store().remote() {
                remembering = self.reader().remembering(read);
                &remembering
            } else {
                self.reader()
            };
            let (states, earlier) = both(
                index.store().remote(),
                || index.get_urls(&urls),
                || index.known_digests(pages.iter().map(|a| a.work.digest.as_str())),
            );
            (states?.into_iter(), earlier?)
        };
        for analysed in pages {
            let Analysed {
                page,
                stored,
                work:
                    PageAnalysis {
                        source,
                        topic,
                        topic_score,
                        digest,
                        response,
                        request,
                        vector,
                        simhash,
                        han,
                        classify_secs,
                        body_bytes,
                    },
            } = analysed;
            self.summary.classify_secs += classify_secs;
            let day = page
                .extract
                .published
                .unwrap_or(page.fetched_at)
                .date_naive();
            // The same URL with the same payload as its last capture: a
            // re-capture. Its revisit record goes into a pack (the capture
            // history), the counts go up, and the page keeps its index row.
            let previous = previous_of.next().flatten();
            let recapture = match &previous {
                Some(prev) => match &prev.digest {
                    Some(d) => *d == digest,
                    None => self
                        .reader()
                        .get_page(&prev.table, &prev.row_key)?
                        .is_some_and(|p| p.digest == digest),
                },
                None => false,
            };
            let earlier = match batch_digests.get(&digest) {
                Some(&i) => Some(out[i].digest_update.clone()),
                None => earlier_of.remove(&digest),
            };
            let response_id = response.record_id.clone();
            let (encoded, digest_update) = match earlier {
                Some(mut first) => {
                    let rec = match &stored {
                        Some(s) => s.placeholder(&digest),
                        None => warc::encode_revisit(&RevisitInput {
                            target_uri: &page.url,
                            date: page.fetched_at,
                            status_line: &page.status_line,
                            headers: &page.headers,
                            payload_digest: &digest,
                            refers_to: &first.first_record_id,
                            refers_to_target_uri: &first.first_url,
                            refers_to_date: first.first_date,
                        }),
                    };
                    first.captures += 1;
                    if !first.sources.contains(&source) {
                        first.sources.push(source.clone());
                    }
                    (rec, first)
                }
                None => {
                    let rec = response;
                    let entry = DigestEntry {
                        digest: digest.clone(),
                        first_url: page.url.clone(),
                        first_date: page.fetched_at,
                        first_record_id: rec.record_id.clone(),
                        first_location: indexer::PackLocation::default(),
                        captures: 1,
                        sources: vec![source.clone()],
                    };
                    (rec, entry)
                }
            };
            let revisit = digest_update.captures > 1;
            // The request was made concurrent to the response; a revisit is another record.
            let request = match request {
                Some(_) if encoded.record_id != response_id => {
                    request_record(page.request.as_ref(), &page.url, page.fetched_at, &encoded)
                }
                other => other,
            };
            batch_digests.insert(digest.clone(), out.len());
            out.push(Prepared {
                page,
                source,
                topic,
                topic_score,
                digest,
                vector,
                simhash,
                han,
                day,
                previous,
                recapture,
                encoded,
                request,
                digest_update,
                revisit,
                stored,
                body_bytes,
            });
        }
        Ok(out)
    }

    /// Writes the queued embeds into their pages' packs (a response record
    /// linked to the page's record by `WARC-Concurrent-To`, or a revisit of
    /// a payload seen before); returns their captures, digest updates and
    /// image hashes, to index once the packs are synced.
    fn write_embeds(
        &mut self,
        batch_firsts: &HashMap<String, indexer::PackLocation>,
    ) -> Result<WrittenEmbeds> {
        let mut out = WrittenEmbeds::default();
        let embeds = std::mem::take(&mut self.embeds);
        // Digests seen before this batch, read in one call; then the
        // batch's own first captures.
        let mut seen = self
            .reader()
            .known_digests(embeds.iter().map(|a| a.digest.as_str()))?;
        for a in embeds {
            let e = &a.embed;
            let place = match self.page_places.get(&e.page_url) {
                Some(p) => p.clone(),
                None => self.place_of_indexed_page(&e.page_url, e.fetched_at)?,
            };
            let earlier = seen.get(&a.digest).cloned();
            let (encoded, mut entry) = match earlier {
                Some(mut first) => {
                    let rec = match &a.stored {
                        Some(s) => s.placeholder(&a.digest),
                        None => warc::encode_revisit(&RevisitInput {
                            target_uri: &e.url,
                            date: e.fetched_at,
                            status_line: &e.status_line,
                            headers: &e.headers,
                            payload_digest: &a.digest,
                            refers_to: &first.first_record_id,
                            refers_to_target_uri: &first.first_url,
                            refers_to_date: first.first_date,
                        }),
                    };
                    first.captures += 1;
                    if !first.sources.contains(&place.source) {
                        first.sources.push(place.source.clone());
                    }
                    (rec, first)
                }
                None => {
                    let rec = match &a.stored {
                        Some(s) => s.placeholder(&a.digest),
                        None => warc::encode_response_with(
                            &ResponseInput {
                                target_uri: &e.url,
                                date: e.fetched_at,
                                ip_address: e.ip_address.as_deref(),
                                concurrent_to: (!place.record_id.is_empty())
                                    .then_some(place.record_id.as_str()),
                                status_line: &e.status_line,
                                headers: &e.headers,
                                payload: &e.body,
                            },
                            &a.digest,
                        ),
                    };
                    let entry = DigestEntry {
                        digest: a.digest.clone(),
                        first_url: e.url.clone(),
                        first_date: e.fetched_at,
                        first_record_id: rec.record_id.clone(),
                        first_location: indexer::PackLocation::default(),
                        captures: 1,
                        sources: vec![place.source.clone()],
                    };
                    (rec, entry)
                }
            };
            let revisit = entry.captures > 1;
            let loc = match &a.stored {
                Some(s) => s.location.clone(),
                None => {
                    let request =
                        request_record(e.request.as_ref(), &e.url, e.fetched_at, &encoded);
                    self.write_capture(&place.key, &encoded, request.as_ref())
                        .with_context(|| format!("writing the record of {}", e.url))?
                }
            };
            let here = pack_location(&loc);
            settle_first_location(&mut entry, revisit, &here, batch_firsts);
            if e.kind == extract::EmbedKind::Answer {
                self.summary.answers += 1;
            } else {
                self.summary.embeds += 1;
                self.summary.embed_bytes += e.body.len() as u64;
                self.summary.embed_duplicates += u64::from(revisit);
            }
            self.summary.pack_bytes += loc.length;
            if self.packs_seen.insert(loc.path.clone()) {
                self.summary.packs += 1;
            }
            out.captures.push(indexer::Capture {
                content_type: Some(header_value(&e.headers, "content-type")),
                url: e.url.clone(),
                time: e.fetched_at,
                kind: if revisit {
                    indexer::CaptureKind::Revisit
                } else {
                    indexer::CaptureKind::Response
                },
                status: e.status,
                digest: Some(a.digest.clone()),
                record_id: encoded.record_id.clone(),
                location: here,
            });
            // An image is filed once per (URL, payload): its first capture.
            let recapture = revisit
                && (entry.first_url == e.url
                    || self
                        .reader()
                        .captures_of(&e.url)?
                        .iter()
                        .any(|c| c.digest.as_deref() == Some(a.digest.as_str())));
            if let Some(h) = a.image.as_ref().filter(|_| !recapture) {
                self.summary.images_hashed += 1;
                out.images.push(indexer::ImageEntry {
                    url: e.url.clone(),
                    page_url: e.page_url.clone(),
                    source: place.source.clone(),
                    time: e.fetched_at,
                    digest: a.digest.clone(),
                    bytes: e.body.len() as u64,
                    width: h.width,
                    height: h.height,
                    ahash: h.ahash,
                    dhash: h.dhash,
                    phash: h.phash,
                    hash_version: classifier::imagehash::HASH_VERSION,
                    location: entry.first_location.clone(),
                });
            }
            seen.insert(a.digest.clone(), entry.clone());
            out.digests.push(entry);
        }
        Ok(out)
    }

    /// Writes a capture's record and, right after it in the same pack, the request record
    /// that goes with it; the capture's location. The request's bytes count in `pack_bytes`
    /// here (the capture's where it is accounted).
    fn write_capture(
        &mut self,
        key: &PackKey,
        capture: &EncodedRecord,
        request: Option<&EncodedRecord>,
    ) -> packer::Result<Location> {
        let mut records = vec![capture];
        records.extend(request);
        let mut locations = self.packer.write_all(key, &records)?.into_iter();
        let Some(capture) = locations.next() else {
            unreachable!("one location per record written");
        };
        self.summary.pack_bytes += locations.map(|l| l.length).sum::<u64>();
        Ok(capture)
    }

    /// The pack and record of a page stored earlier (for a late embed): its
    /// index row's place, else an `unclassified` pack of the embed's day.
    fn place_of_indexed_page(
        &self,
        page_url: &str,
        at: chrono::DateTime<chrono::Utc>,
    ) -> Result<PagePlace> {
        // No page (an error answer of its own, an imported resource): no
        // lookup (an empty row key is refused by HBase).
        let state = if page_url.is_empty() {
            None
        } else {
            self.reader().get_url(page_url)?
        };
        if let Some(state) = state {
            if let Some(page) = self.reader().get_page(&state.table, &state.row_key)? {
                return Ok(PagePlace {
                    key: PackKey {
                        topic: page.topic.clone(),
                        date: page.key_time().date_naive(),
                        cluster: page.cluster,
                    },
                    record_id: page.record_id.clone(),
                    source: page.source.clone(),
                });
            }
        }
        Ok(PagePlace {
            key: PackKey {
                topic: UNCLASSIFIED.to_string(),
                date: at.date_naive(),
                cluster: 0,
            },
            record_id: String::new(),
            source: self.cfg.source_for(page_url),
        })
    }

    /// Writes a revisit record (profile server-not-modified) for each 304 into
    /// the pack of the capture it confirms; returns the URL states to write
    /// once the packs are synced. A 304 for a URL without a stored capture
    /// (validators from elsewhere) is only counted.
    fn write_not_modified(
        &mut self,
        items: Vec<(NotModifiedPage, Option<Stored>)>,
    ) -> Result<(Vec<UrlState>, Vec<indexer::Capture>)> {
        let mut states = Vec::with_capacity(items.len());
        let mut captures = Vec::with_capacity(items.len());
        for (nm, stored) in items {
            self.summary.not_modified += 1;
            let Some(prev) = self.reader().get_url(&nm.url)? else {
                continue;
            };
            let Some(page) = self.reader().get_page(&prev.table, &prev.row_key)? else {
                continue;
            };
            let (rec, loc) = match stored {
                Some(s) => (s.placeholder(&page.digest), s.location),
                None => {
                    let rec = warc::encode_not_modified(&warc::NotModifiedInput {
                        target_uri: &nm.url,
                        date: nm.fetched_at,
                        status_line: &nm.status_line,
                        headers: &nm.headers,
                        refers_to: &page.record_id,
                        refers_to_target_uri: &page.url,
                        refers_to_date: page.fetched,
                    });
                    let key = PackKey {
                        topic: page.topic.clone(),
                        date: page.key_time().date_naive(),
                        cluster: page.cluster,
                    };
                    let request = request_record(nm.request.as_ref(), &nm.url, nm.fetched_at, &rec);
                    let loc = self
                        .write_capture(&key, &rec, request.as_ref())
                        .with_context(|| format!("writing the revisit record of {}", nm.url))?;
                    (rec, loc)
                }
            };
            self.summary.pack_bytes += loc.length;
            if self.packs_seen.insert(loc.path.clone()) {
                self.summary.packs += 1;
            }
            captures.push(indexer::Capture {
                url: nm.url.clone(),
                time: nm.fetched_at,
                kind: indexer::CaptureKind::NotModified,
                status: 304,
                digest: prev.digest.clone().or(Some(page.digest.clone())),
                record_id: rec.record_id.clone(),
                location: pack_location(&loc),
                content_type: Some(header_value(&nm.headers, "content-type")),
            });
            let count = prev.captures + 1;
            let (next_fetch, interval_secs) = if prev.article {
                self.recrawl
                    .next(count, false, prev.interval_secs, nm.fetched_at)
            } else {
                (None, None)
            };
            let mut state = prev;
            state.last_capture = nm.fetched_at;
            state.captures = count;
            if let Some(etag) = header_value(&nm.headers, "etag") {
                state.etag = Some(etag);
            }
            if let Some(lm) = header_value(&nm.headers, "last-modified") {
                state.last_modified = Some(lm);
            }
            state.next_fetch = next_fetch;
            state.interval_secs = interval_secs;
            states.push(state);
        }
        Ok((states, captures))
    }

    /// The stored cluster centres of each (topic, day), read side by side
    /// on a remote store (a scan each).
    fn read_centres(
        &self,
        groups: &[&(String, chrono::NaiveDate)],
    ) -> Result<Vec<Vec<indexer::ClusterRow>>> {
        let index = self.reader();
        let read = |(topic, day): &(String, chrono::NaiveDate)| {
            index
                .clusters(topic, *day)
                .with_context(|| format!("reading the cluster centres of {topic} {day}"))
        };
        if groups.len() < 2 || !index.store().remote() {
            return groups.iter().map(|g| read(g)).collect();
        }
        let mut out = Vec::with_capacity(groups.len());
        for chunk in groups.chunks(READ_THREADS) {
            let read = &read;
            let answers: Vec<Result<Vec<indexer::ClusterRow>>> = std::thread::scope(|scope| {
                let handles: Vec<_> = chunk.iter().map(|g| scope.spawn(move || read(g))).collect();
                handles
                    .into_iter()
                    .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
                    .collect()
            });
            for a in answers {
                out.push(a?);
            }
        }
        Ok(out)
    }

    /// The cluster (pack) of every page: per (topic, day), K-means against the
    /// stored centres of that topic/day, or arrival order.
    fn place(&self, prepared: &[Prepared]) -> Result<Placement> {
        let mut groups: BTreeMap<(String, chrono::NaiveDate), Vec<usize>> = BTreeMap::new();
        for (i, p) in prepared.iter().enumerate() {
            groups.entry((p.topic.clone(), p.day)).or_default().push(i);
        }
        let opts = &self.cfg.packing.kmeans;
        let mut clusters = vec![0u32; prepared.len()];
        let mut centres = Vec::new();
        let group_keys: Vec<&(String, chrono::NaiveDate)> = groups.keys().collect();
        let mut stored_of = self.read_centres(&group_keys)?.into_iter();
        for ((topic, day), members) in groups {
            let (kept, members): (Vec<usize>, Vec<usize>) = members
                .into_iter()
                .partition(|&i| prepared[i].stored.is_some());
            let mut stored: Vec<Centre> = stored_of
                .next()
                .unwrap_or_default()
                .into_iter()
                .map(|r| Centre {
                    cluster: r.cluster,
                    centre: r.centre,
                    size: r.size,
                })
                .collect();
            // Pages already in a pack stay in its cluster; its centre moves
            // to take them in, as it did when they were placed.
            let mut moved_centres: BTreeSet<u32> = BTreeSet::new();
            for &i in &kept {
                let cluster = prepared[i].stored.as_ref().map_or(0, |s| s.cluster);
                clusters[i] = cluster;
                fold_into_centre(&mut stored, cluster, &prepared[i].vector);
                moved_centres.insert(cluster);
            }
            centres.extend(
                stored
                    .iter()
                    .filter(|c| moved_centres.contains(&c.cluster))
                    .map(|c| (topic.clone(), day, c.clone())),
            );
            if members.is_empty() {
                continue;
            }
            let vectors: Vec<Vec<f32>> = members
                .iter()
                .map(|&i| prepared[i].vector.clone())
                .collect();
            let assignment = match self.cfg.packing.mode {
                PackingMode::Kmeans => packer::assign_batch(&vectors, &stored, opts)
                    .with_context(|| format!("clustering the pages of {topic} {day}"))?,
                PackingMode::Arrival => arrival_batch(&vectors, &stored, opts.pages_per_cluster),
            };
            for (&i, &c) in members.iter().zip(&assignment.clusters) {
                clusters[i] = c;
            }
            centres.extend(
                assignment
                    .centres
                    .into_iter()
                    .map(|c| (topic.clone(), day, c)),
            );
        }
        Ok(Placement { clusters, centres })
    }

    fn account(&mut self, body_bytes: u64, topic: &str, revisit: bool, loc: &Location) {
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

#[allow(clippy::too_many_arguments)]
fn page_record(
    page: &Page,
    source: &str,
    topic: String,
    topic_score: f32,
    digest: &str,
    encoded: &EncodedRecord,
    loc: &Location,
    revisit: bool,
) -> PageRecord {
    let x = &page.extract;
    PageRecord {
        url: page.url.clone(),
        title: x.title.clone().unwrap_or_default(),
        published: x.published,
        fetched: page.fetched_at,
        first_seen: None,
        media: x.media.clone(),
        comments: x.comments,
        participants: x.participants,
        keywords: x.keywords.clone(),
        topic,
        topic_score,
        cluster: 0,
        pack_path: loc.path.clone(),
        offset: loc.offset,
        length: loc.length,
        digest: digest.to_string(),
        record_id: encoded.record_id.clone(),
        simhash: None,
        simhash_version: None,
        near_duplicate_of: None,
        language: x.language.clone(),
        charset: Some(page.charset.clone()),
        status: page.status,
        source: source.to_string(),
        revisit,
        published_from: Some(
            x.published_from
                .map_or(indexer::PUBLISHED_FROM_FETCH, |p| p.as_str())
                .to_string(),
        ),
        author: x.author.clone(),
        media_from_host: x.media_from_host,
        outlet: x.outlet.clone(),
    }
}

pub(crate) fn header_value(headers: &[(String, String)], name: &str) -> Option<String> {
    headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.clone())
}

/// Reads of a remote store sent side by side at most.
const READ_THREADS: usize = 8;

/// Runs `a` and `b`, side by side when `parallel` (two reads of a remote
/// store, each a round trip), else one after the other.
fn both<A: Send, B: Send>(
    parallel: bool,
    a: impl FnOnce() -> A + Send,
    b: impl FnOnce() -> B + Send,
) -> (A, B) {
    if !parallel {
        return (a(), b());
    }
    std::thread::scope(|scope| {
        let b = scope.spawn(b);
        let a = a();
        let b = b
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        (a, b)
    })
}

/// The index's name for a record's place in a pack.
fn pack_location(loc: &packer::Location) -> indexer::PackLocation {
    indexer::PackLocation {
        path: loc.path.clone(),
        offset: loc.offset,
        length: loc.length,
    }
}

/// The first capture a digest entry names, for pages and embeds alike: a new payload's is
/// the record just written (`here`); a revisit whose entry names none yet was first captured
/// earlier in this batch (`batch_firsts`).
fn settle_first_location(
    entry: &mut DigestEntry,
    revisit: bool,
    here: &indexer::PackLocation,
    batch_firsts: &HashMap<String, indexer::PackLocation>,
) {
    if !revisit {
        entry.first_location = here.clone();
    } else if entry.first_location.path.is_empty() {
        if let Some(first) = batch_firsts.get(&entry.digest) {
            entry.first_location = first.clone();
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;

    /// An embedded store whose first batch apply waits until a read of
    /// `digests` arrives while it is held (or 10 s), and whose reads of
    /// `digests`, once armed, wait for that hold: the next batch's lookup
    /// runs while the first batch's rows are not in the store.
    struct HeldApplies {
        inner: indexer::EmbeddedStore,
        armed: std::sync::atomic::AtomicBool,
        holding: Mutex<bool>,
        read_while_held: std::sync::Condvar,
        reads_while_held: std::sync::atomic::AtomicUsize,
    }

    impl indexer::TableStore for HeldApplies {
        fn create_table(&self, name: &str, families: &[&str], buckets: u8) -> indexer::Result<()> {
            self.inner.create_table(name, families, buckets)
        }
        fn list_tables(&self) -> indexer::Result<Vec<String>> {
            self.inner.list_tables()
        }
        fn put(&self, table: &str, rows: &[indexer::Row]) -> indexer::Result<()> {
            self.inner.put(table, rows)
        }
        fn get(
            &self,
            table: &str,
            keys: &[Vec<u8>],
            families: &[&str],
        ) -> indexer::Result<Vec<Option<indexer::Row>>> {
            if table == indexer::DIGESTS_TABLE
                && self.armed.swap(false, std::sync::atomic::Ordering::SeqCst)
            {
                let mut holding = self.holding.lock().expect("lock");
                let deadline = Instant::now() + Duration::from_secs(10);
                while !*holding && Instant::now() < deadline {
                    holding = self
                        .read_while_held
                        .wait_timeout(holding, Duration::from_millis(20))
                        .expect("wait")
                        .0;
                }
                if *holding {
                    self.reads_while_held
                        .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                }
                // The answer is read while the apply is still held.
                let rows = self.inner.get(table, keys, families);
                drop(holding);
                self.read_while_held.notify_all();
                return rows;
            }
            self.inner.get(table, keys, families)
        }
        fn scan(&self, table: &str, scan: &indexer::Scan) -> indexer::Result<Vec<indexer::Row>> {
            self.inner.scan(table, scan)
        }
        fn delete(&self, table: &str, keys: &[Vec<u8>]) -> indexer::Result<()> {
            self.inner.delete(table, keys)
        }
        fn delete_cells(&self, table: &str, rows: &[indexer::Row]) -> indexer::Result<()> {
            self.inner.delete_cells(table, rows)
        }
        fn regions(&self, table: &str) -> indexer::Result<Vec<indexer::Region>> {
            self.inner.regions(table)
        }
        fn apply(&self, mutations: &[indexer::Mutation]) -> indexer::Result<()> {
            // Only the first batch is held.
            if self
                .reads_while_held
                .load(std::sync::atomic::Ordering::SeqCst)
                > 0
            {
                return self.inner.apply(mutations);
            }
            let mut holding = self.holding.lock().expect("lock");
            *holding = true;
            self.read_while_held.notify_all();
            let before = self
                .reads_while_held
                .load(std::sync::atomic::Ordering::SeqCst);
            let deadline = Instant::now() + Duration::from_secs(10);
            while self
                .reads_while_held
                .load(std::sync::atomic::Ordering::SeqCst)
                == before
                && Instant::now() < deadline
            {
                holding = self
                    .read_while_held
                    .wait_timeout(holding, Duration::from_millis(50))
                    .expect("wait")
                    .0;
            }
            *holding = false;
            drop(holding);
            self.inner.apply(mutations)
        }
        fn atomic_apply(&self) -> bool {
            self.inner.atomic_apply()
        }
    }

    fn page(url: &str, body: &str) -> Page {
        let parsed = url::Url::parse(url).expect("url");
        crawler::FetchedPage {
            requested_url: url.to_string(),
            url: url.to_string(),
            fetched_at: chrono::Utc::now(),
            status: 200,
            status_line: "HTTP/1.1 200 OK".into(),
            headers: vec![("Content-Type".into(), "text/html; charset=utf-8".into())],
            body: body.as_bytes().to_vec(),
            content_type: "text/html".into(),
            charset: "utf-8".into(),
            charset_source: crawler::charset::CharsetSource::Header,
            ip_address: None,
            depth: 1,
            extract: extract::extract(body, &parsed),
            request: None,
        }
    }

    /// With a batch's index rows applied behind, the next batch reads them
    /// before they are in the store: the same payload under another URL one
    /// batch later is a revisit of the first capture, as when batches were
    /// indexed one after another.
    #[test]
    fn the_next_batch_sees_the_rows_still_being_applied() {
        let dir = tempfile::tempdir().expect("temp dir");
        let held = Arc::new(HeldApplies {
            inner: indexer::EmbeddedStore::open(dir.path().join("index")).expect("open"),
            armed: Default::default(),
            holding: Mutex::new(false),
            read_while_held: std::sync::Condvar::new(),
            reads_while_held: Default::default(),
        });
        let store: Arc<dyn indexer::TableStore> = held.clone();
        let index = Arc::new(Index::new(store, indexer::IndexOptions::default()).expect("index"));
        let stores = Stores {
            packs: Arc::new(packer::LocalPackStore::open(dir.path().join("packs")).expect("packs")),
            index,
            read_only_copy: None,
        };
        let raw = crate::config::RawConfig {
            data_dir: Some(dir.path().to_path_buf()),
            ..Default::default()
        };
        let cfg = Config::from_raw(raw).expect("config");
        let mut ingest = Ingest::new(&cfg, &stores, None, PART_OF_CRAWL).expect("ingest");
        ingest.apply_behind(true);
        let body = "<html><head><title>One story</title></head><body><p>The same story, \
                    served under two addresses.</p></body></html>";
        for (i, url) in ["http://example.com/a.html", "http://example.com/b.html"]
            .into_iter()
            .enumerate()
        {
            let analysed = ingest.analyser().analyse(page(url, body));
            ingest
                .store_batch(vec![analysed], Vec::new())
                .expect("store");
            held.armed
                .store(i == 0, std::sync::atomic::Ordering::SeqCst);
        }
        assert_eq!(ingest.batches_taken(), 2);
        assert_eq!(
            ingest.batches_indexed(),
            1,
            "the second batch is being applied"
        );
        let summary = ingest.finish(Duration::from_secs(1)).expect("finish");
        assert!(
            held.reads_while_held
                .load(std::sync::atomic::Ordering::SeqCst)
                >= 1,
            "the second batch looked its digests up while the first batch was held"
        );
        assert_eq!(summary.new, 2, "{summary:?}");
        assert_eq!(
            summary.duplicates, 1,
            "the second capture is a revisit: {summary:?}"
        );
        let entry = stores
            .index
            .known_digests(std::iter::once(
                stores
                    .index
                    .get_url("http://example.com/b.html")
                    .expect("read")
                    .and_then(|s| s.digest)
                    .expect("digest")
                    .as_str(),
            ))
            .expect("digests");
        let first = entry.values().next().expect("digest entry");
        assert_eq!(first.captures, 2, "{first:?}");
        assert_eq!(first.first_url, "http://example.com/a.html");
    }
}
