//! Indexing pages from WARC records instead of from the network, through the
//! crawl's own pipeline (extraction, classification, dedup, placement,
//! atomic index batches):
//!
//! - `harvest reindex` rebuilds a lost or broken index from the packs: every
//!   `response` and `revisit` record, in capture order, is indexed where it
//!   lies (nothing is written to the packs), keeping its pack's topic folder
//!   and cluster;
//! - `fsck --repair` indexes the records a crash left unindexed the same way;
//! - `harvest import` ([`crate::import`]) feeds another tool's records through
//!   the same [`Replay`], written into packs as a crawl would.
//!
//! What the packs do not hold is not restored: job runs and their history,
//! the crawl queue, and a publish time that came only from a feed or a
//! sitemap entry (the page's own time is used, as `reextract` does).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::Write;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use chrono::{DateTime, NaiveDate, Utc};
use crawler::archived::ArchivedResponse;
use crawler::NotModifiedPage;
use packer::warc::{self, Resync, WarcRecord};
use packer::PackLocation;
use serde::Serialize;

use crate::config::{Config, IndexBackend};
use crate::ingest::analyse::{Analyser, Stored};
use crate::ingest::store::Ingest;
use crate::stores::Stores;
use crate::summary::IngestSummary;

/// Depth given to pages that did not come from a crawl (not a seed).
pub const REPLAY_DEPTH: u32 = 1;

/// What a record is to the index.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub enum Kind {
    /// A `response` record: a page with its payload.
    Response,
    /// A `revisit` with the identical-payload profile: a page whose payload
    /// is in the record it refers to.
    Revisit,
    /// A `revisit` with the server-not-modified profile: a 304.
    NotModified,
}

impl Kind {
    /// The kind of a capture row of this record.
    pub fn capture_kind(self) -> indexer::CaptureKind {
        match self {
            Kind::Response => indexer::CaptureKind::Response,
            Kind::Revisit => indexer::CaptureKind::Revisit,
            Kind::NotModified => indexer::CaptureKind::NotModified,
        }
    }

    /// The kind of a record, or `None` for records that are not captures
    /// (warcinfo, request, metadata, resource, conversion).
    pub fn of(record: &WarcRecord) -> Option<Kind> {
        match record.record_type()? {
            t if t.eq_ignore_ascii_case("response") => Some(Kind::Response),
            t if t.eq_ignore_ascii_case("revisit") => {
                let profile = record.header("WARC-Profile").unwrap_or_default();
                Some(if profile.contains("server-not-modified") {
                    Kind::NotModified
                } else {
                    Kind::Revisit
                })
            }
            _ => None,
        }
    }
}

/// One capture record of a pack, as listed before the replay.
#[derive(Debug, Clone)]
pub struct Entry {
    pub date: DateTime<Utc>,
    pub kind: Kind,
    /// Index into the pack path list.
    pub pack: u32,
    pub offset: u64,
    pub length: u64,
    pub url: String,
    pub record_id: String,
    /// `WARC-Refers-To` of a revisit.
    pub refers_to: Option<String>,
    /// `WARC-Payload-Digest`.
    pub digest: Option<String>,
    /// `WARC-Concurrent-To` (an embed's page record).
    pub concurrent_to: Option<String>,
}

impl Entry {
    /// The entry of a capture record (`None` for other records and for a
    /// capture without target URI, record id or date).
    pub fn of(record: &WarcRecord, pack: u32, offset: u64, length: u64) -> Option<Entry> {
        Some(Entry {
            date: record_date(record)?,
            kind: Kind::of(record)?,
            pack,
            offset,
            length,
            url: record.target_uri()?.to_string(),
            record_id: record.record_id()?.to_string(),
            refers_to: record.header("WARC-Refers-To").map(str::to_string),
            digest: record.payload_digest().map(str::to_string),
            concurrent_to: record.header("WARC-Concurrent-To").map(str::to_string),
        })
    }

    /// Where the record lies, its pack named from the pack path list.
    pub fn location(&self, paths: &[String]) -> PackLocation {
        PackLocation {
            path: paths[self.pack as usize].clone(),
            offset: self.offset,
            length: self.length,
        }
    }
}

/// The `WARC-Date` of a record.
pub fn record_date(record: &WarcRecord) -> Option<DateTime<Utc>> {
    let d = record.header("WARC-Date")?;
    DateTime::parse_from_rfc3339(d.trim())
        .ok()
        .map(|t| t.with_timezone(&Utc))
}

/// Captures kept as sent named in a summary; the others are counted.
const NAMED_KEPT_RAW: usize = 10;

/// Why records were left out, counted.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ReplaySummary {
    /// Packs (or files) read.
    pub files: u64,
    /// Records read.
    pub records: u64,
    /// Capture records handed to the pipeline.
    pub replayed: u64,
    /// Records left out, by reason.
    pub skipped: BTreeMap<String, u64>,
    /// Captures whose body is not encoded as its headers say (called chunked, not chunked),
    /// kept as they were sent (as warcio and pywb read them).
    pub kept_raw: u64,
    /// The first of those, by URL.
    pub kept_raw_urls: Vec<String>,
    /// Damaged regions of the files read past to the next readable record.
    pub damaged_regions: u64,
    /// Bytes of those regions.
    pub damaged_bytes: u64,
    /// The pipeline's own summary (pages new / unchanged / duplicates…).
    pub ingest: IngestSummary,
    /// Wall time in seconds.
    pub elapsed_secs: f64,
}

impl ReplaySummary {
    pub fn skip(&mut self, reason: impl Into<String>) {
        *self.skipped.entry(reason.into()).or_default() += 1;
    }

    /// Counts a capture kept as it was sent (and names the first few).
    pub fn kept_raw(&mut self, url: &str) {
        self.kept_raw += 1;
        if self.kept_raw_urls.len() < NAMED_KEPT_RAW {
            self.kept_raw_urls.push(url.to_string());
        }
    }

    /// Pages handed to the index per second.
    pub fn rate(&self) -> f64 {
        if self.elapsed_secs > 0.0 {
            self.replayed as f64 / self.elapsed_secs
        } else {
            0.0
        }
    }

    /// Lines for a terminal.
    pub fn render(&self, what: &str) -> String {
        let mut out = format!(
            "{what}: {} records in {} files, {} captures indexed in {:.1} s ({:.0} captures/s)\n",
            self.records,
            self.files,
            self.replayed,
            self.elapsed_secs,
            self.rate()
        );
        for (reason, n) in &self.skipped {
            out.push_str(&format!("  left out {n:>8}  {reason}\n"));
        }
        if self.kept_raw > 0 {
            out.push_str(&format!(
                "  kept raw {:>8}  bodies not encoded as their headers say, stored as sent ({}{})\n",
                self.kept_raw,
                self.kept_raw_urls.join(", "),
                if self.kept_raw > self.kept_raw_urls.len() as u64 { ", ..." } else { "" }
            ));
        }
        if self.damaged_regions > 0 {
            out.push_str(&format!(
                "  damaged {:>9}  regions read past to the next record ({} bytes)\n",
                self.damaged_regions, self.damaged_bytes
            ));
        }
        out.push_str(&self.ingest.render());
        out
    }
}

/// The topic label and cluster of a pack from its path: the first folder
/// is the (sanitised) topic, the file name carries `c{cluster}` (0 for a
/// month pack of `harvest compact`).
pub fn pack_place(path: &str, labels: &[String]) -> Option<(String, u32)> {
    let (folder, _) = path.split_once('/')?;
    // A month pack (`harvest compact`) holds several days and clusters: cluster 0.
    let cluster = match packer::PackName::parse(path) {
        Some(n) => n.cluster,
        None => packer::MonthPackName::parse(path).map(|_| 0)?,
    };
    let topic = labels
        .iter()
        .find(|l| packer::sanitize_topic(l) == folder)
        .cloned()
        .unwrap_or_else(|| folder.to_string());
    Some((topic, cluster))
}

/// The day folder of a pack (`…/{yyyy}/{mm}/{dd}/file`).
pub fn pack_day(path: &str) -> Option<NaiveDate> {
    let parts: Vec<&str> = path.split('/').collect();
    if parts.len() < 5 {
        return None;
    }
    let n = parts.len();
    NaiveDate::from_ymd_opt(
        parts[n - 4].parse().ok()?,
        parts[n - 3].parse().ok()?,
        parts[n - 2].parse().ok()?,
    )
}

/// Pages go through the pipeline in batches of this many (or the
/// configured batch size when smaller).
const REPLAY_BATCH: usize = 256;

/// A page waiting for its batch: decoded and extracted at the flush.
struct PendingPage {
    response: ArchivedResponse,
    ctx: extract::TimeContext,
    stored: Option<Stored>,
}

/// A non-HTML answer waiting for its batch: kept as an embed.
struct PendingEmbed {
    response: ArchivedResponse,
    content_type: String,
    stored: Option<Stored>,
    /// The page that embeds it (`WARC-Concurrent-To`), when known.
    page_url: String,
}

/// The pipeline, fed with records.
pub struct Replay<'a> {
    cfg: &'a Config,
    crawl: crawler::CrawlConfig,
    analyser: Analyser,
    ingest: Ingest,
    labels: Vec<String>,
    pages: Vec<PendingPage>,
    embeds: Vec<PendingEmbed>,
    not_modified: Vec<(NotModifiedPage, Option<Stored>)>,
    /// URLs of the pending batch: a batch holds one capture of a URL (as a
    /// crawl's does), so that each capture sees the one before it indexed.
    pending_urls: HashSet<String>,
    batch: usize,
    pub summary: ReplaySummary,
}

impl<'a> Replay<'a> {
    pub fn new(cfg: &'a Config, stores: &Stores) -> Result<Replay<'a>> {
        let model = crate::load_model_or_warn(&cfg.model)?;
        let labels = model
            .as_ref()
            .map(|m| m.classes.clone())
            .unwrap_or_default();
        // Only an import writes packs (reindex and fsck index records where they lie).
        let ingest = Ingest::new(cfg, stores, model, crate::ingest::store::PART_OF_IMPORT)?;
        Ok(Replay {
            cfg,
            crawl: crate::crawl_config(cfg)?,
            analyser: ingest.analyser(),
            ingest,
            labels,
            pages: Vec::new(),
            embeds: Vec::new(),
            not_modified: Vec::new(),
            pending_urls: HashSet::new(),
            batch: cfg.packing.batch_pages.clamp(1, REPLAY_BATCH),
            summary: ReplaySummary::default(),
        })
    }

    /// Model labels (to map pack folders back to topics).
    pub fn labels(&self) -> &[String] {
        &self.labels
    }

    /// The largest body a page may have.
    pub fn max_body_bytes(&self) -> u64 {
        self.crawl.max_body_bytes
    }

    /// Whether the crawl would have kept a page of this media type.
    pub fn wanted_type(&self, content_type: &str) -> bool {
        wanted_type(&self.crawl.allowed_content_types, content_type)
    }

    fn time_context(&self, url: &str, fetched: DateTime<Utc>) -> extract::TimeContext {
        let host = url::Url::parse(url)
            .ok()
            .and_then(|u| u.host_str().map(str::to_ascii_lowercase));
        extract::TimeContext {
            fetched,
            zone: host
                .and_then(|h| {
                    self.crawl
                        .host_time_zones
                        .iter()
                        .find(|(k, _)| *k == h)
                        .map(|(_, z)| *z)
                })
                .or(self.crawl.time_zone),
            hint: None,
        }
    }

    /// Adds a page (a response, or a revisit with its payload filled in).
    /// Returns `false` (and counts why) when the record is not a page a
    /// crawl would have stored; decoding and extraction happen with the
    /// batch's (on every core), where unreadable bodies are counted too.
    pub fn page(
        &mut self,
        response: ArchivedResponse,
        stored: Option<Stored>,
        page_url: Option<String>,
    ) -> Result<bool> {
        let content_type = crawler::archived::content_type_of(&response.headers);
        if !(200..300).contains(&response.status) || !self.wanted_type(&content_type) {
            // Not a page: a redirect or error answer, or an image,
            // stylesheet, script... the archive keeps as an embed (a
            // capture, a digest, an image's hashes).
            self.embeds.push(PendingEmbed {
                response,
                content_type,
                stored,
                page_url: page_url.unwrap_or_default(),
            });
            if self.embeds.len() >= self.batch {
                self.flush()?;
            }
            return Ok(true);
        }
        let Some(url) = url::Url::parse(&response.url)
            .ok()
            .filter(|u| matches!(u.scheme(), "http" | "https"))
        else {
            self.summary.skip("target URI not an http(s) URL");
            return Ok(false);
        };
        let url = url.to_string();
        if !self.pending_urls.insert(url.clone()) {
            self.flush()?;
            self.pending_urls.insert(url);
        }
        let ctx = self.time_context(&response.url, response.fetched_at);
        self.pages.push(PendingPage {
            response,
            ctx,
            stored,
        });
        if self.pages.len() >= self.batch {
            self.flush()?;
        }
        Ok(true)
    }

    /// Adds a 304 revisit.
    pub fn not_modified(
        &mut self,
        url: String,
        fetched_at: DateTime<Utc>,
        status_line: String,
        headers: Vec<(String, String)>,
        stored: Option<Stored>,
    ) -> Result<()> {
        if !self.pending_urls.insert(url.clone()) {
            self.flush()?;
            self.pending_urls.insert(url.clone());
        }
        self.not_modified.push((
            NotModifiedPage {
                requested_url: url.clone(),
                url,
                fetched_at,
                status_line,
                headers,
                depth: REPLAY_DEPTH,
                links_found: None,
                // Not sent by harvest: an archived capture keeps no request record here.
                request: None,
            },
            stored,
        ));
        if self.not_modified.len() >= self.batch {
            self.flush()?;
        }
        Ok(())
    }

    /// Analyses the pending pages (on two threads) and stores the batch.
    pub fn flush(&mut self) -> Result<()> {
        let pages = std::mem::take(&mut self.pages);
        let not_modified = std::mem::take(&mut self.not_modified);
        let embeds = std::mem::take(&mut self.embeds);
        self.pending_urls.clear();
        if pages.is_empty() && not_modified.is_empty() && embeds.is_empty() {
            return Ok(());
        }
        let max_body = self.crawl.max_body_bytes;
        let analysed_embeds = par_map(embeds, |e| {
            let stored = e.stored;
            let page_url = e.page_url;
            let content_type = e.content_type;
            e.response.normalise_or_raw(max_body).map(|(r, raw)| {
                let raw_url = raw.then(|| r.url.clone());
                let kind = if !(200..300).contains(&r.status) {
                    extract::EmbedKind::Answer
                } else if content_type.starts_with("image/") {
                    extract::EmbedKind::Image
                } else if content_type == "text/css" {
                    extract::EmbedKind::Stylesheet
                } else if content_type.contains("javascript") {
                    extract::EmbedKind::Script
                } else {
                    extract::EmbedKind::Media
                };
                let embed = crawler::FetchedEmbed {
                    url: r.url,
                    page_url,
                    kind,
                    fetched_at: r.fetched_at,
                    status: r.status,
                    status_line: r.status_line,
                    headers: r.headers,
                    body: r.body,
                    content_type,
                    ip_address: r.ip_address,
                    request: None,
                };
                (self.analyser.analyse_embed_stored(embed, stored), raw_url)
            })
        });
        for a in analysed_embeds {
            match a {
                Ok((a, raw_url)) => {
                    if let Some(url) = raw_url {
                        self.summary.kept_raw(&url);
                    }
                    self.summary.replayed += 1;
                    self.ingest.queue_embed(a);
                }
                Err(e) => {
                    let reason = e.to_string();
                    self.summary
                        .skip(reason.split(':').next().unwrap_or("unreadable").to_string());
                }
            }
        }
        let (analyser, max_body, limits) = (
            &self.analyser,
            self.crawl.max_body_bytes,
            &self.crawl.page_limits,
        );
        let results = par_map(pages, |p| {
            p.response.normalise_or_raw(max_body).and_then(|(r, raw)| {
                let raw_url = raw.then(|| r.url.clone());
                r.into_page(
                    &crate::ingest::analyse::ExtractOnly,
                    REPLAY_DEPTH,
                    &p.ctx,
                    limits,
                )
                .map(|(page, _)| (analyser.analyse_stored(page, p.stored), raw_url))
            })
        });
        let mut analysed = Vec::with_capacity(results.len());
        for r in results {
            match r {
                Ok((a, raw_url)) => {
                    if let Some(url) = raw_url {
                        self.summary.kept_raw(&url);
                    }
                    analysed.push(a);
                }
                Err(e) => {
                    let reason = e.to_string();
                    self.summary
                        .skip(reason.split(':').next().unwrap_or("unreadable").to_string());
                }
            }
        }
        self.summary.replayed += (analysed.len() + not_modified.len()) as u64;
        self.ingest.store_records(analysed, not_modified)
    }

    /// Stores what is pending, closes the packs, returns the summary.
    pub fn finish(mut self, started: Instant) -> Result<ReplaySummary> {
        self.flush()?;
        let elapsed = started.elapsed();
        let mut summary = self.summary;
        summary.ingest = self.ingest.finish(elapsed)?;
        summary.elapsed_secs = elapsed.as_secs_f64();
        Ok(summary)
    }

    pub fn config(&self) -> &Config {
        self.cfg
    }
}

/// `f` over `items` on every core (in chunks, scoped threads); results
/// in order.
pub(crate) fn par_map<T: Send, U: Send>(items: Vec<T>, f: impl Fn(T) -> U + Sync) -> Vec<U> {
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .min(8);
    if threads <= 1 || items.len() < 2 {
        return items.into_iter().map(f).collect();
    }
    let per = items.len().div_ceil(threads);
    let mut chunks: Vec<Vec<T>> = Vec::new();
    let mut rest = items;
    while rest.len() > per {
        let tail = rest.split_off(per);
        chunks.push(rest);
        rest = tail;
    }
    chunks.push(rest);
    let f = &f;
    std::thread::scope(|scope| {
        let handles: Vec<_> = chunks
            .into_iter()
            .map(|chunk| scope.spawn(move || chunk.into_iter().map(f).collect::<Vec<_>>()))
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    })
}

/// The HTTP message of a record as an [`ArchivedResponse`].
pub fn archived_response(record: &WarcRecord, url: &str) -> Result<ArchivedResponse> {
    let http = record.http_response()?;
    Ok(ArchivedResponse {
        url: url.to_string(),
        fetched_at: record_date(record).context("record without a WARC-Date")?,
        status: http.status,
        status_line: http.status_line,
        headers: http.headers,
        body: http.body,
        ip_address: record.header("WARC-IP-Address").map(str::to_string),
    })
}

/// The capture records of the packs, in capture order (time; a response
/// before the revisits of the same second; pack and offset), with the pack
/// paths. Damage is read past (`packer::warc::Resync`): every intact record
/// is listed; unreadable regions and tails are left to `fsck` (counted as
/// skipped here, and logged with their offsets).
pub fn list_captures(
    stores: &Stores,
    progress: &mut dyn Write,
    summary: &mut ReplaySummary,
) -> Result<(Vec<Entry>, Vec<String>)> {
    let mut packs = stores.packs.list("").context("listing the packs")?;
    packs.retain(|p| p.path.ends_with(packer::PACK_EXTENSION) || p.path.ends_with(".warc"));
    packs.sort_by(|a, b| a.path.cmp(&b.path));
    let mut entries = Vec::new();
    let mut paths = Vec::with_capacity(packs.len());
    for (i, pack) in packs.iter().enumerate() {
        let bytes = stores
            .packs
            .read_range(&pack.path, 0, pack.len)
            .with_context(|| format!("reading {}", pack.path))?;
        summary.files += 1;
        for item in Resync::for_pack(&pack.path, &bytes) {
            let (offset, length, record) = match item {
                Ok(r) => r,
                Err(d) if d.to_end => {
                    summary.skip("torn or unreadable pack tail (see harvest fsck)");
                    tracing::warn!(pack = %pack.path, offset = d.offset, bytes = d.length, reason = %d.reason, "pack not read to its end");
                    continue;
                }
                Err(d) => {
                    summary.skip("damaged region read past (see harvest fsck)");
                    tracing::warn!(pack = %pack.path, offset = d.offset, bytes = d.length, reason = %d.reason, "damaged region skipped");
                    continue;
                }
            };
            summary.records += 1;
            if Kind::of(&record).is_none() {
                continue;
            }
            match Entry::of(&record, i as u32, offset, length) {
                Some(e) => entries.push(e),
                None => summary.skip("capture record without URI, id or date"),
            }
        }
        paths.push(pack.path.clone());
        if (i + 1) % 100 == 0 {
            let _ = writeln!(
                progress,
                "listed {} of {} packs, {} captures",
                i + 1,
                packs.len(),
                entries.len()
            );
        }
    }
    entries.sort_by(|a, b| {
        (a.date, a.kind, a.pack, a.offset).cmp(&(b.date, b.kind, b.pack, b.offset))
    });
    Ok((entries, paths))
}

/// Indexes `entries` (records already in the packs `paths`) where they lie;
/// a revisit's payload comes from the response it refers to among them,
/// else from the archive by digest.
pub fn index_stored(
    replay: &mut Replay<'_>,
    stores: &Stores,
    entries: &[Entry],
    paths: &[String],
    progress: &mut dyn Write,
) -> Result<()> {
    let responses = response_ids(entries);
    let started = Instant::now();
    let mut last_report = Instant::now();
    for (n, e) in entries.iter().enumerate() {
        let path = &paths[e.pack as usize];
        let Some((topic, cluster)) = pack_place(path, replay.labels()) else {
            replay
                .summary
                .skip("pack path not in the topic/yyyy/mm/dd/c{cluster}-… layout");
            continue;
        };
        let stored = Stored {
            location: e.location(paths),
            record_id: e.record_id.clone(),
            topic,
            cluster,
        };
        let bytes = stores.packs.read_range(path, e.offset, e.length)?;
        let record = warc::read_record(&bytes)
            .with_context(|| format!("reading the record at {path}:{}", e.offset))?;
        match e.kind {
            Kind::Response => match archived_response(&record, &e.url) {
                Ok(r) => {
                    let page_url = e
                        .concurrent_to
                        .as_ref()
                        .and_then(|id| responses.get(id))
                        .map(|&i| entries[i].url.clone());
                    replay.page(r, Some(stored), page_url)?;
                }
                Err(_) => replay.summary.skip("response without an HTTP message"),
            },
            Kind::Revisit => {
                let Some(payload) = revisit_payload(stores, e, &responses, entries, paths)? else {
                    replay.summary.skip("revisit of a payload not in the packs");
                    continue;
                };
                match archived_response(&record, &e.url) {
                    Ok(mut r) => {
                        r.body = payload;
                        // The revisit's head describes the stored form already.
                        r.headers
                            .retain(|(k, _)| !k.eq_ignore_ascii_case("content-length"));
                        replay.page(r, Some(stored), None)?;
                    }
                    Err(_) => replay.summary.skip("revisit without an HTTP head"),
                }
            }
            Kind::NotModified => match record.http_response() {
                Ok(http) => replay.not_modified(
                    e.url.clone(),
                    e.date,
                    http.status_line,
                    http.headers,
                    Some(stored),
                )?,
                Err(_) => replay.summary.skip("304 revisit without an HTTP head"),
            },
        }
        if last_report.elapsed().as_secs() >= 5 {
            last_report = Instant::now();
            let _ = writeln!(
                progress,
                "indexed {} of {} captures ({:.0}/s)",
                n + 1,
                entries.len(),
                (n + 1) as f64 / started.elapsed().as_secs_f64()
            );
        }
    }
    Ok(())
}

/// The payload of a revisit: its response among the listed records, else
/// the archive's first capture of its digest.
fn revisit_payload(
    stores: &Stores,
    e: &Entry,
    responses: &HashMap<String, usize>,
    all: &[Entry],
    paths: &[String],
) -> Result<Option<Vec<u8>>> {
    let loc = match e.refers_to.as_ref().and_then(|id| responses.get(id)) {
        Some(&i) => all[i].location(paths),
        None => match &e.digest {
            Some(d) => return crate::read::archived_payload(stores, d),
            None => return Ok(None),
        },
    };
    Ok(Some(crate::read::response_at(stores, &loc)?.body))
}

/// `fsck --repair`: indexes records no row points at (the tail of a batch
/// a crash cut between its pack write and its index write). A record of a
/// URL the index already holds at a later or equal time (the page was
/// fetched again by the next run) only joins its capture history; the
/// others are indexed as the crawl would have. Returns (indexed, history).
pub fn index_unindexed(
    cfg: &Config,
    stores: &Stores,
    mut entries: Vec<Entry>,
    paths: &[String],
    progress: &mut dyn Write,
) -> Result<(u64, u64)> {
    if entries.is_empty() {
        return Ok((0, 0));
    }
    let started = Instant::now();
    entries.sort_by(|a, b| {
        (a.date, a.kind, a.pack, a.offset).cmp(&(b.date, b.kind, b.pack, b.offset))
    });
    let mut history = Vec::new();
    let mut full = Vec::new();
    for e in entries {
        match stores.index.get_url(&e.url)? {
            Some(state) if state.last_capture >= e.date => history.push(e),
            _ => full.push(e),
        }
    }
    let mut captures = Vec::with_capacity(history.len());
    for e in &history {
        let path = &paths[e.pack as usize];
        let record = warc::read_record(&stores.packs.read_range(path, e.offset, e.length)?)?;
        let http = record.http_response().ok();
        let status = http.as_ref().map_or(0, |h| h.status);
        let content_type = http.as_ref().map(|h| {
            h.headers
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case("content-type"))
                .map(|(_, v)| v.clone())
        });
        captures.push(indexer::Capture {
            content_type,
            url: e.url.clone(),
            time: e.date,
            kind: e.kind.capture_kind(),
            status,
            digest: e.digest.clone(),
            record_id: e.record_id.clone(),
            location: e.location(paths),
        });
    }
    stores
        .index
        .put_captures(&captures)
        .context("recording the captures of re-fetched pages")?;
    let mut replay = Replay::new(cfg, stores)?;
    index_stored(&mut replay, stores, &full, paths, progress)?;
    let summary = replay.finish(started)?;
    Ok((summary.replayed, captures.len() as u64))
}

/// What taking up a crashed run found in the packs it wrote.
#[derive(Debug, Default)]
pub struct TakenUp {
    /// Packs of the run read.
    pub packs: u64,
    /// Capture records in them.
    pub records: u64,
    /// Of those, pages (2xx HTML responses and revisits) and 304s: what the
    /// run stored, counted from its packs (its last heartbeat may be older).
    pub pages: u64,
    pub not_modified: u64,
    /// Records the index did not hold (packed before the crash, not yet
    /// indexed), now indexed.
    pub indexed: u64,
    /// Packs that could not be read (their pages are fetched again).
    pub unreadable: u64,
    /// Each URL the run archived -> the URL whose stored copy holds its
    /// links (itself; for a redirect or an embed, the page it led to).
    pub stored: HashMap<String, String>,
}

/// Taking up a run whose process died: the packs its packers wrote
/// (`writers`, [`indexer::RunRecord::writers`]) and the parts of earlier
/// packs it appended to (`appended`, [`indexer::RunRecord::appended`]: each
/// from the offset its records start at) are read; their records the
/// index does not hold (the batch that was packed when the process died,
/// before its index write) are indexed where they lie, as `fsck --repair`
/// does; and every URL the run archived is returned, so that the run does
/// not fetch it again (its links are queued from the stored copy).
pub fn take_up_crashed_run(
    cfg: &Config,
    stores: &Stores,
    writers: &[String],
    appended: &[(String, u64)],
    progress: &mut dyn Write,
) -> Result<TakenUp> {
    let mut out = TakenUp::default();
    if writers.is_empty() && appended.is_empty() {
        return Ok(out);
    }
    let mut packs: Vec<(String, u64)> = stores
        .packs
        .list("")
        .context("listing the packs")?
        .into_iter()
        .filter(|p| {
            packer::PackName::parse(&p.path)
                .and_then(|n| n.origin)
                .is_some_and(|o| writers.contains(&o.writer))
        })
        .map(|p| (p.path, 0))
        .collect();
    packs.extend(appended.iter().cloned());
    // A pack of one of the run's writers that a later writer of the run (a
    // take-up before this one) appended to is read once, whole.
    packs.sort();
    packs.dedup_by(|later, first| later.0 == first.0);
    let allowed = crate::crawl_config(cfg)?.allowed_content_types;
    let mut entries: Vec<Entry> = Vec::new();
    let mut paths: Vec<String> = Vec::with_capacity(packs.len());
    for (path, from) in &packs {
        // The dead writer's file is closed (HDFS: its lease recovered) and
        // synced: what is read from it now is durable.
        let read = stores.packs.recover_lease(path).and_then(|_| {
            let len = stores.packs.len(path)?;
            stores
                .packs
                .read_range(path, *from, len.saturating_sub(*from))
        });
        let bytes = match read {
            Ok(b) => b,
            Err(e) => {
                tracing::warn!(path = %path, error = %e, "cannot read a pack of the interrupted run; its unindexed pages are fetched again");
                out.unreadable += 1;
                continue;
            }
        };
        out.packs += 1;
        // A torn last record (the process died writing it) ends the pack;
        // damage before it is read past, as reindex does.
        for (offset, length, record) in Resync::new(&bytes).filter_map(|r| r.ok()) {
            let offset = offset + from;
            let Some(entry) = Entry::of(&record, paths.len() as u32, offset, length) else {
                continue;
            };
            match entry.kind {
                Kind::NotModified => out.not_modified += 1,
                _ if is_page_answer(&record, &allowed) => out.pages += 1,
                _ => {}
            }
            entries.push(entry);
        }
        paths.push(path.clone());
    }
    out.records = entries.len() as u64;
    let keys: Vec<(&str, DateTime<Utc>)> =
        entries.iter().map(|e| (e.url.as_str(), e.date)).collect();
    let indexed = stores
        .index
        .has_captures(&keys)
        .context("checking the interrupted run's records against the index")?;
    // Record id -> URL, for the page an embed or a redirect belongs to.
    let pages: HashMap<&str, &str> = entries
        .iter()
        .map(|e| (e.record_id.as_str(), e.url.as_str()))
        .collect();
    for e in &entries {
        let copy = e
            .concurrent_to
            .as_deref()
            .and_then(|id| pages.get(id))
            .unwrap_or(&e.url.as_str())
            .to_string();
        out.stored.entry(e.url.clone()).or_insert(copy);
    }
    drop(pages);
    let missing: Vec<Entry> = entries
        .into_iter()
        .zip(indexed)
        .filter(|(_, known)| !known)
        .map(|(e, _)| e)
        .collect();
    if !missing.is_empty() {
        let (indexed, history) = index_unindexed(cfg, stores, missing, &paths, progress)
            .context("indexing the interrupted run's last records")?;
        out.indexed = indexed + history;
    }
    Ok(out)
}

/// Whether a crawl with these allowed media types keeps `content_type`
/// (none stated counts as kept).
fn wanted_type(allowed: &[String], content_type: &str) -> bool {
    content_type.is_empty() || allowed.iter().any(|t| t.eq_ignore_ascii_case(content_type))
}

/// Whether a capture record is a page as [`Replay::page`] takes one: a 2xx
/// answer of a media type the crawl keeps.
fn is_page_answer(record: &WarcRecord, allowed: &[String]) -> bool {
    record.http_response().is_ok_and(|h| {
        (200..300).contains(&h.status)
            && wanted_type(allowed, &crawler::archived::content_type_of(&h.headers))
    })
}

/// Record id -> entry, for the responses among `entries`.
fn response_ids(entries: &[Entry]) -> HashMap<String, usize> {
    entries
        .iter()
        .enumerate()
        .filter(|(_, e)| e.kind == Kind::Response)
        .map(|(i, e)| (e.record_id.clone(), i))
        .collect()
}

/// `harvest reindex`: the whole index from the packs, into an empty index.
pub fn reindex(cfg: &Config, stores: &Stores, progress: &mut dyn Write) -> Result<ReplaySummary> {
    let started = Instant::now();
    if stores.index.has_pages()? {
        let hint = match &cfg.index {
            IndexBackend::Embedded { path } => format!(
                "give --replace to set the index folder {} aside and build a new one",
                path.display()
            ),
            _ => "drop the archive's tables first (the HBase shell's `disable`/`drop`)".to_string(),
        };
        bail!("the index already holds pages: reindex builds an index from nothing; {hint}");
    }
    let mut replay = Replay::new(cfg, stores)?;
    let mut listing = ReplaySummary::default();
    let (entries, paths) = list_captures(stores, progress, &mut listing)?;
    let _ = writeln!(
        progress,
        "{} captures in {} packs; indexing them in capture order",
        entries.len(),
        paths.len()
    );
    index_stored(&mut replay, stores, &entries, &paths, progress)?;
    let mut summary = replay.finish(started)?;
    summary.files = listing.files;
    summary.records = listing.records;
    for (k, v) in listing.skipped {
        *summary.skipped.entry(k).or_default() += v;
    }
    Ok(summary)
}
