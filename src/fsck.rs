//! `harvest fsck`: checks that the index and the packs agree.
//!
//! - every page row and every recorded capture points at a record that
//!   exists (pack present, a whole record starts at the offset, the length
//!   matches), whose `WARC-Target-URI` and `WARC-Record-ID` are the row's,
//!   and whose payload hashes to the row's digest (recomputed from the
//!   stored bytes for `response` records; a revisit's stated digest);
//! - every pack reads to its end: a torn last record (a crash while it was
//!   written) is reported with its offset;
//! - damage in the middle of a pack (bytes that hold no readable record, with
//!   readable records after them) is reported as a damaged region with its
//!   offset and length; the records after it are read and checked as usual
//!   (`packer::warc::Resync`). `--repair` removes the rows of the records in
//!   it and records the region in `PACK.damaged` beside the pack, which is
//!   never rewritten (the index points at offsets); a recorded region is
//!   reported as skipped, not as a problem;
//! - every `response` or `revisit` record is referenced by the index, or
//!   counted as unindexed: the tail of a batch a crash cut between its pack
//!   write and its index write (its page was fetched again by the next
//!   run).
//!
//! - every revisit listed resolves for replay: the capture of its payload
//!   (same digest) at its `WARC-Refers-To-Target-URI` (else its own URL) is
//!   listed too, as a response or as a revisit that resolves; otherwise
//!   pywb answers "Original for revisit record could not be loaded". A 304
//!   without a recorded payload digest does not resolve either;
//! - `export cdxj` would be complete: every response and revisit record
//!   has a capture row (the export lists capture rows). A record only a page
//!   row points at (written before harvest kept capture rows) is unlisted;
//!   `--repair` records its capture.
//!
//! Packs are read whole, one at a time, so each record is read once; the
//! references are held in memory (a few hundred bytes a capture).

use std::collections::BTreeMap;
use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::time::Instant;

use anyhow::{Context, Result};
use packer::warc::{header, Resync};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::config::Config;
use crate::replay::{Entry, Kind};
use crate::stores::Stores;

/// Problems listed in the report (all are counted).
const LISTED: usize = 50;
/// Suffix of the file beside a pack that records its damaged regions
/// (`PACK.damaged`, JSON [`DamageFile`]), written by `fsck --repair`.
pub const DAMAGE_SUFFIX: &str = ".damaged";

/// What the index says is at one pack offset.
#[derive(Debug, Clone)]
struct Expected {
    length: u64,
    url: String,
    record_id: String,
    digest: Option<String>,
    /// Which rows point here (for the report): `page`, `capture` or both.
    from: &'static str,
    /// The page row pointing here, if one does.
    page: Option<indexer::PageKey>,
    /// The capture row pointing here, if one does.
    capture: Option<indexer::Capture>,
    /// Where the record should be.
    location: indexer::PackLocation,
}

/// One inconsistency.
#[derive(Debug, Clone, Serialize)]
pub struct Problem {
    /// `missing`, `mismatch`, `torn`, `damaged`.
    pub kind: &'static str,
    pub pack: String,
    pub offset: u64,
    pub detail: String,
}

/// A stretch in the middle of a pack that holds no readable record, with
/// readable records after it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DamagedRegion {
    pub pack: String,
    /// Where the first unreadable record starts.
    pub offset: u64,
    /// Bytes up to the next readable record.
    pub length: u64,
    /// Why the record at `offset` is unreadable.
    pub reason: String,
    /// Recorded in `PACK.damaged` by an earlier `fsck --repair`: skipped,
    /// no problem (a row that still points into it is reported as missing).
    pub recorded: bool,
}

/// `PACK.damaged`: the damaged regions of a pack that `fsck --repair` took
/// note of (their rows removed; the bytes kept where they are).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DamageFile {
    /// The regions, by offset.
    pub regions: Vec<RecordedRegion>,
}

/// One region of a [`DamageFile`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecordedRegion {
    pub offset: u64,
    pub length: u64,
    pub reason: String,
    /// When the repair took note of it (RFC 3339).
    pub recorded_at: String,
}

/// What `harvest fsck` found.
#[derive(Debug, Clone, Default, Serialize)]
pub struct FsckReport {
    /// Page rows read.
    pub pages: u64,
    /// Capture rows read.
    pub captures: u64,
    /// Packs read.
    pub packs: u64,
    /// Records read from the packs.
    pub records: u64,
    /// Bytes read from the packs.
    pub bytes: u64,
    /// Referenced records checked and found right.
    pub verified: u64,
    /// References to a record that is not there.
    pub missing: u64,
    /// Records whose URL, id, length or digest disagree with the index.
    pub mismatched: u64,
    /// Packs whose end is not a whole record.
    pub torn: u64,
    /// Damaged regions in the middle of packs not recorded by a repair
    /// (readable records follow them; see [`DamagedRegion`]).
    pub damaged: u64,
    /// Damaged regions recorded in `PACK.damaged` by an earlier repair:
    /// skipped, no problem.
    pub skipped_damaged: u64,
    /// Bytes of all damaged regions (recorded or not).
    pub damaged_bytes: u64,
    /// The damaged regions found (the first ones), recorded or not.
    pub damaged_regions: Vec<DamagedRegion>,
    /// Response and revisit records no row points at.
    pub unindexed: u64,
    /// Revisit captures checked for replay (their original listed).
    pub revisits: u64,
    /// Revisit captures whose original no listed capture holds: replay
    /// tools cannot load their content.
    pub unresolved_revisits: u64,
    /// Response and revisit records that a page row points at but no
    /// capture row: `export cdxj` does not list them.
    pub unlisted: u64,
    /// With `--repair`: capture rows recorded for the unlisted records.
    pub listed_captures: u64,
    /// With `--repair`: torn packs cut back to their last whole record
    /// (the original kept as `PACK.torn-TIME`).
    pub repaired_torn: u64,
    /// With `--repair`: damaged regions recorded in `PACK.damaged` (the rows
    /// of their records removed with the missing ones; the pack unchanged).
    pub repaired_damaged: u64,
    /// With `--repair`: references to missing records whose rows were
    /// removed (page rows, captures, and the URL's state, so that the next
    /// crawl fetches the page again).
    pub dropped_missing: u64,
    /// With `--repair`: unindexed records now indexed as the crawl would
    /// have (pages and 304s).
    pub reindexed: u64,
    /// With `--repair`: unindexed records of pages fetched again since,
    /// added to their capture history only.
    pub history_added: u64,
    /// Fingerprinted pages by the recipe of their fingerprint
    /// (`classifier::simhash::FINGERPRINT_VERSION`). Not a problem: fingerprints
    /// of an older recipe are only never compared with newer ones, and
    /// `harvest reindex --replace` makes them again.
    pub fingerprints: BTreeMap<u32, u64>,
    /// Fingerprinted pages whose recipe is not on record (rows written
    /// before harvest kept it).
    pub fingerprints_unrecorded: u64,
    /// Pages the text index holds (none without a text index).
    pub text_pages: u64,
    /// Page rows the text index lacks: text queries miss them. `--repair`
    /// writes their words, read again from their records.
    pub text_missing: u64,
    /// Text index entries without a page row and without a text mark (left by a
    /// version of harvest before marks, or by a writer outside a batch): searches
    /// never return them, but counts of mentions alone trust the text index and
    /// count them. `--repair` removes them.
    pub text_orphans: u64,
    /// Text marks present: writes of words whose rows are not yet durable (a
    /// writer at work, or one killed, whose marks the next writer clears).
    pub text_marks: u64,
    /// With `--repair`: pages whose words were written to the text index.
    pub repaired_text: u64,
    /// With `--repair`: text index entries without a row removed.
    pub removed_text_orphans: u64,
    /// Files of the cluster's text index that no manifest row names, begun over an hour
    /// ago (a writer killed between a split's file and its row): never read, only space
    /// (not a problem). `--repair` removes them.
    pub text_files_unlisted: u64,
    /// With `--repair`: those files removed.
    pub removed_text_files: u64,
    /// Compactions a killed `harvest compact` left half done, finished before the check
    /// (`crate::compact::finish_interrupted`).
    pub compactions_finished: u64,
    /// Wall time.
    pub secs: f64,
    /// The first problems found.
    pub problems: Vec<Problem>,
}

impl FsckReport {
    /// True when the archive is consistent (unindexed records are not an
    /// error: they are what a crash between pack and index leaves).
    pub fn clean(&self) -> bool {
        self.missing <= self.dropped_missing
            && self.mismatched == 0
            && self.torn <= self.repaired_torn
            && self.damaged <= self.repaired_damaged
            && self.text_missing <= self.repaired_text
            && self.text_orphans <= self.removed_text_orphans
            && self.unresolved_revisits == 0
            && self.unlisted <= self.listed_captures
    }

    fn problem(&mut self, kind: &'static str, pack: &str, offset: u64, detail: String) {
        match kind {
            "missing" => self.missing += 1,
            "torn" => self.torn += 1,
            "damaged" => self.damaged += 1,
            "unresolved" => self.unresolved_revisits += 1,
            "unlisted" => self.unlisted += 1,
            _ => self.mismatched += 1,
        }
        if self.problems.len() < LISTED {
            self.problems.push(Problem {
                kind,
                pack: pack.to_string(),
                offset,
                detail,
            });
        }
    }

    /// The fingerprint line: pages by recipe, and what to do about older ones.
    fn render_fingerprints(&self) -> String {
        let current = classifier::simhash::FINGERPRINT_VERSION;
        let mut parts = Vec::new();
        let mut older = 0u64;
        for (&recipe, &n) in &self.fingerprints {
            if recipe == current {
                parts.push(format!("{n} of recipe {recipe} (current)"));
            } else {
                older += n;
                parts.push(format!("{n} of recipe {recipe}"));
            }
        }
        if self.fingerprints_unrecorded > 0 {
            parts.push(format!(
                "{} of an unrecorded recipe (rows written before recipes were kept)",
                self.fingerprints_unrecorded
            ));
        }
        let mut s = format!("fingerprints: {}\n", parts.join(", "));
        if older > 0 {
            s.push_str(&format!(
                "  {older} fingerprints of another recipe are not compared with those of recipe {current}: `harvest reindex --replace` fingerprints the archive again\n"
            ));
        }
        s
    }

    /// The report as text.
    pub fn render(&self) -> String {
        let mut s = format!(
            "checked {} page rows and {} captures against {} records in {} packs ({:.1} MB) in {:.1} s ({:.0} records/s)\n",
            self.pages,
            self.captures,
            self.records,
            self.packs,
            self.bytes as f64 / 1e6,
            self.secs,
            self.records as f64 / self.secs.max(1e-9)
        );
        s.push_str(&format!(
            "verified {}  missing {}  mismatched {}  torn packs {}  damaged regions {}  unindexed records {}\n",
            self.verified, self.missing, self.mismatched, self.torn, self.damaged, self.unindexed
        ));
        if self.skipped_damaged > 0 {
            s.push_str(&format!(
                "skipped {} damaged regions recorded by an earlier --repair (nothing points into them; the bytes are kept):\n",
                self.skipped_damaged
            ));
            for r in self.damaged_regions.iter().filter(|r| r.recorded) {
                s.push_str(&format!(
                    "  skipped  {} @ {}: {} bytes up to the next record: {}\n",
                    r.pack, r.offset, r.length, r.reason
                ));
            }
        }
        s.push_str(&format!(
            "replay: {} revisits, {} without a listed original; export cdxj lists {}\n",
            self.revisits,
            self.unresolved_revisits,
            match (self.unlisted.saturating_sub(self.listed_captures), self.unindexed) {
                (0, 0) => "every capture record".to_string(),
                (0, u) => format!("every indexed capture record ({u} unindexed: `--repair` indexes them)"),
                (n, _) => format!(
                    "not {n} records with page rows but no capture rows (`--repair` records them){}",
                    if self.unindexed > 0 {
                        format!(" nor {} unindexed ones", self.unindexed)
                    } else {
                        String::new()
                    }
                ),
            }
        ));
        if self.listed_captures > 0 {
            s.push_str(&format!(
                "repaired: {} capture rows recorded for records only page rows named\n",
                self.listed_captures
            ));
        }
        if !self.fingerprints.is_empty() || self.fingerprints_unrecorded > 0 {
            s.push_str(&self.render_fingerprints());
        }
        if self.repaired_torn + self.dropped_missing > 0 {
            s.push_str(&format!(
                "repaired: {} torn packs cut to their last whole record (originals kept as *.torn-*), {} rows of missing records removed\n",
                self.repaired_torn, self.dropped_missing
            ));
        }
        if self.repaired_damaged > 0 {
            s.push_str(&format!(
                "repaired: {} damaged regions recorded in PACK{DAMAGE_SUFFIX} (packs unchanged: the records after them stay where the index points)\n",
                self.repaired_damaged
            ));
        }
        if self.reindexed + self.history_added > 0 {
            s.push_str(&format!(
                "repaired: {} unindexed records indexed, {} added to the capture history of pages fetched again since\n",
                self.reindexed, self.history_added
            ));
        }
        if self.text_pages + self.text_missing + self.text_orphans > 0 {
            s.push_str(&format!(
                "text index: {} pages, {} page rows without text (text queries miss them), {} entries without a row (counts of mentions count them), {} writes in flight\n",
                self.text_pages, self.text_missing, self.text_orphans, self.text_marks
            ));
        }
        if self.repaired_text + self.removed_text_orphans > 0 {
            s.push_str(&format!(
                "repaired: words of {} pages written to the text index, {} text entries without a row removed\n",
                self.repaired_text, self.removed_text_orphans
            ));
        }
        if self.text_files_unlisted > 0 {
            s.push_str(&format!(
                "text index: {} split files no manifest row names (left by writers killed over an hour ago; only space){}\n",
                self.text_files_unlisted,
                if self.removed_text_files > 0 {
                    format!(", {} removed", self.removed_text_files)
                } else {
                    String::new()
                }
            ));
        }
        for p in &self.problems {
            s.push_str(&format!(
                "  {:<8} {} @ {}: {}\n",
                p.kind, p.pack, p.offset, p.detail
            ));
        }
        let listed = self.problems.len() as u64;
        let total = self.missing
            + self.mismatched
            + self.torn
            + self.damaged
            + self.text_missing
            + self.text_orphans
            + self.unresolved_revisits
            + self.unlisted;
        if total > listed {
            s.push_str(&format!("  ... and {} more\n", total - listed));
        }
        s.push_str(if self.clean() {
            "archive consistent\n"
        } else {
            "archive NOT consistent\n"
        });
        s
    }
}

/// Checks the archive of `stores`; `progress` gets a line per pack. With
/// `repair`, torn packs are cut back to their last whole record (the
/// original file is kept beside it), damaged regions in the middle of a pack
/// are recorded in `PACK.damaged` (the pack is left as it is), and the rows
/// of records that are gone or unreadable are removed; mismatches are only
/// reported.
pub fn check(
    cfg: &Config,
    stores: &Stores,
    progress: &mut dyn Write,
    repair: bool,
) -> Result<FsckReport> {
    let started = Instant::now();
    let mut report = FsckReport::default();
    if stores.read_only_copy.is_none() {
        report.compactions_finished =
            crate::compact::finish_interrupted(stores.packs.as_ref(), &stores.index)
                .context("finishing an interrupted compaction")?;
    }
    // pack path -> offset -> what should be there.
    let mut expected: HashMap<String, HashMap<u64, Expected>> = HashMap::new();
    let mut add = |loc: &indexer::PackLocation, e: Expected| {
        let slot = expected.entry(loc.path.clone()).or_default();
        match slot.get_mut(&loc.offset) {
            Some(have) => {
                if have.from != e.from {
                    have.from = "page+capture";
                }
                have.page = have.page.take().or(e.page);
                have.capture = have.capture.take().or(e.capture);
            }
            None => {
                slot.insert(loc.offset, e);
            }
        }
    };
    let mut pages = 0u64;
    let mut recipes: BTreeMap<u32, u64> = BTreeMap::new();
    let mut unrecorded = 0u64;
    stores
        .index
        .each_page(&mut |table, row_key, page| {
            pages += 1;
            match (page.simhash, page.simhash_version) {
                (Some(_), Some(v)) => *recipes.entry(v).or_default() += 1,
                (Some(_), None) => unrecorded += 1,
                (None, _) => {}
            }
            let loc = page.location();
            add(
                &loc,
                Expected {
                    length: loc.length,
                    url: page.url.clone(),
                    record_id: page.record_id.clone(),
                    digest: Some(page.digest.clone()),
                    from: "page",
                    page: Some(indexer::PageKey {
                        table: table.to_string(),
                        row_key: row_key.to_vec(),
                    }),
                    capture: None,
                    location: loc.clone(),
                },
            );
        })
        .context("reading the page rows")?;
    let mut captures = 0u64;
    // (URL hash, payload digest) of every response capture: what revisits
    // resolve to.
    let mut originals: HashSet<([u8; 8], String)> = HashSet::new();
    stores
        .index
        .each_capture(&mut |c| {
            captures += 1;
            if c.kind == indexer::CaptureKind::Response {
                if let Some(d) = &c.digest {
                    originals.insert((indexer::keys::url_hash(&c.url), d.clone()));
                }
            }
            add(
                &c.location,
                Expected {
                    length: c.location.length,
                    url: c.url.clone(),
                    record_id: c.record_id.clone(),
                    digest: c.digest.clone(),
                    from: "capture",
                    page: None,
                    capture: Some(c.clone()),
                    location: c.location.clone(),
                },
            );
            true
        })
        .context("reading the capture rows")?;
    report.pages = pages;
    report.captures = captures;
    report.fingerprints = recipes;
    report.fingerprints_unrecorded = unrecorded;

    let mut packs = stores.packs.list("").context("listing the packs")?;
    let damage_files: HashMap<String, u64> = packs
        .iter()
        .filter(|p| p.path.ends_with(DAMAGE_SUFFIX))
        .map(|p| (p.path.clone(), p.len))
        .collect();
    packs.retain(|p| p.path.ends_with(".warc.gz") || p.path.ends_with(".warc"));
    packs.sort_by(|a, b| a.path.cmp(&b.path));
    let mut dangling: Vec<Expected> = Vec::new();
    let mut unindexed: Vec<Entry> = Vec::new();
    let mut revisits: Vec<PendingRevisit> = Vec::new();
    let mut unlisted: Vec<indexer::Capture> = Vec::new();
    let mut paths: Vec<String> = Vec::with_capacity(packs.len());
    // Damage files to write once the rows pointing into them are gone.
    let mut to_record: Vec<(String, DamageFile, u64)> = Vec::new();
    for entry in &packs {
        let bytes = stores
            .packs
            .read_range(&entry.path, 0, entry.len)
            .with_context(|| format!("reading pack {}", entry.path))?;
        report.packs += 1;
        report.bytes += bytes.len() as u64;
        let mut wanted = expected.remove(&entry.path).unwrap_or_default();
        let side = format!("{}{DAMAGE_SUFFIX}", entry.path);
        let known = match damage_files.get(&side) {
            Some(&len) => read_damage_file(stores, &side, len)?,
            None => DamageFile::default(),
        };
        // This pack's damaged regions, as they are now.
        let mut regions: Vec<RecordedRegion> = Vec::new();
        let mut new_regions = 0u64;
        for item in Resync::for_pack(&entry.path, &bytes) {
            let (offset, length, record) = match item {
                Ok(r) => r,
                Err(d) if d.to_end => {
                    let at = d.offset;
                    report.problem(
                        "torn",
                        &entry.path,
                        at,
                        format!(
                            "{} bytes after the last whole record: {}",
                            d.length, d.reason
                        ),
                    );
                    if repair {
                        cut_torn_pack(stores, &entry.path, &bytes[..at as usize])?;
                        report.repaired_torn += 1;
                    }
                    break;
                }
                Err(d) => {
                    report.damaged_bytes += d.length;
                    let earlier = known
                        .regions
                        .iter()
                        .find(|r| r.offset == d.offset && r.length == d.length);
                    match earlier {
                        Some(r) => {
                            report.skipped_damaged += 1;
                            regions.push(r.clone());
                        }
                        None => {
                            report.problem(
                                "damaged",
                                &entry.path,
                                d.offset,
                                format!(
                                    "{} bytes hold no readable record, the next one starts at {}: {}",
                                    d.length,
                                    d.offset + d.length,
                                    d.reason
                                ),
                            );
                            new_regions += 1;
                            regions.push(RecordedRegion {
                                offset: d.offset,
                                length: d.length,
                                reason: d.reason.clone(),
                                recorded_at: chrono::Utc::now().to_rfc3339(),
                            });
                        }
                    }
                    if report.damaged_regions.len() < LISTED {
                        report.damaged_regions.push(DamagedRegion {
                            pack: entry.path.clone(),
                            offset: d.offset,
                            length: d.length,
                            reason: d.reason,
                            recorded: earlier.is_some(),
                        });
                    }
                    continue;
                }
            };
            report.records += 1;
            let Some(exp) = wanted.remove(&offset) else {
                if Kind::of(&record).is_some() {
                    report.unindexed += 1;
                    if !repair {
                        continue;
                    }
                    unindexed.extend(Entry::of(&record, paths.len() as u32, offset, length));
                }
                continue;
            };
            match verify(&record, length, &exp) {
                Ok(()) => report.verified += 1,
                Err(why) => report.problem(
                    "mismatch",
                    &entry.path,
                    offset,
                    format!("{} ({} row of {})", why, exp.from, exp.url),
                ),
            }
            let Some(kind) = Kind::of(&record) else {
                continue;
            };
            match &exp.capture {
                None => {
                    report.problem(
                        "unlisted",
                        &entry.path,
                        offset,
                        format!(
                            "the record of {} has a page row but no capture row: `export cdxj` leaves it out",
                            exp.url
                        ),
                    );
                    if repair {
                        unlisted.extend(capture_of(&record, kind, &exp));
                    }
                }
                Some(c) if c.kind != indexer::CaptureKind::Response => {
                    report.revisits += 1;
                    revisits.push(PendingRevisit {
                        pack: entry.path.clone(),
                        offset,
                        url: c.url.clone(),
                        target: record
                            .header(header::REFERS_TO_TARGET_URI)
                            .map(str::to_string),
                        digest: c.digest.clone(),
                    });
                }
                Some(_) => {}
            }
        }
        let mut left: Vec<(u64, Expected)> = wanted.into_iter().collect();
        left.sort_by_key(|(o, _)| *o);
        for (offset, exp) in left {
            let region = regions
                .iter()
                .find(|r| r.offset <= offset && offset < r.offset + r.length);
            let why = match region {
                Some(r) => format!(
                    "the record is unreadable, in the damaged region at {} ({} bytes)",
                    r.offset, r.length
                ),
                None => "no record starts here".to_string(),
            };
            report.problem(
                "missing",
                &entry.path,
                offset,
                format!("{why} ({} row of {})", exp.from, exp.url),
            );
            dangling.push(exp);
        }
        if repair && new_regions > 0 {
            to_record.push((side, DamageFile { regions }, new_regions));
        }
        let _ = writeln!(
            progress,
            "fsck: {} ({} records)",
            entry.path, report.records
        );
        paths.push(entry.path.clone());
    }
    let mut gone: Vec<(String, HashMap<u64, Expected>)> = expected.into_iter().collect();
    gone.sort_by(|a, b| a.0.cmp(&b.0));
    for (path, refs) in gone {
        let mut refs: Vec<(u64, Expected)> = refs.into_iter().collect();
        refs.sort_by_key(|(o, _)| *o);
        for (offset, exp) in refs {
            report.problem(
                "missing",
                &path,
                offset,
                format!("the pack does not exist ({} row of {})", exp.from, exp.url),
            );
            dangling.push(exp);
        }
    }
    for r in unresolved(originals, revisits) {
        let detail = match (&r.digest, &r.target) {
            (None, _) => format!(
                "a revisit of {} without a payload digest: replay tools cannot find its content",
                r.url
            ),
            (Some(d), target) => format!(
                "a revisit of {}: no listed capture of {} holds its payload {d}; replay tools cannot load its content",
                r.url,
                target.as_deref().unwrap_or(&r.url)
            ),
        };
        report.problem("unresolved", &r.pack, r.offset, detail);
    }
    if repair && !dangling.is_empty() {
        drop_dangling(stores, &dangling)?;
        report.dropped_missing = dangling.len() as u64;
    }
    if repair && !unlisted.is_empty() {
        stores
            .index
            .put_captures(&unlisted)
            .context("recording the captures of records only page rows named")?;
        report.listed_captures = unlisted.len() as u64;
    }
    // Only now that no row points into them: the regions are known.
    for (side, file, new) in to_record {
        let had = damage_files.contains_key(&side);
        write_damage_file(stores, &side, &file, had)?;
        report.repaired_damaged += new;
    }
    if repair && !unindexed.is_empty() {
        let (indexed, history) =
            crate::replay::index_unindexed(cfg, stores, unindexed, &paths, progress)
                .context("indexing the unindexed records")?;
        report.reindexed = indexed;
        report.history_added = history;
    }
    check_text(stores, &mut report, repair, progress)?;
    report.secs = started.elapsed().as_secs_f64();
    Ok(report)
}

/// A revisit capture whose original is to be found.
struct PendingRevisit {
    pack: String,
    offset: u64,
    url: String,
    /// `WARC-Refers-To-Target-URI` of its record.
    target: Option<String>,
    digest: Option<String>,
}

/// The revisits of `pending` that resolve to none of `originals` ((URL
/// hash, digest) of the response captures): pywb looks for a capture of the
/// revisit's payload at its `WARC-Refers-To-Target-URI`, else at its own URL
/// (where a revisit that resolves counts as one: a 304 after an
/// identical-payload revisit).
fn unresolved(
    mut originals: HashSet<([u8; 8], String)>,
    mut pending: Vec<PendingRevisit>,
) -> Vec<PendingRevisit> {
    loop {
        let before = pending.len();
        pending.retain(|r| {
            let Some(d) = &r.digest else { return true };
            let own = indexer::keys::url_hash(&r.url);
            let found = r
                .target
                .as_deref()
                .is_some_and(|t| originals.contains(&(indexer::keys::url_hash(t), d.clone())))
                || originals.contains(&(own, d.clone()));
            if found {
                originals.insert((own, d.clone()));
            }
            !found
        });
        if pending.len() == before {
            return pending;
        }
    }
}

/// The capture row of a record only a page row (`exp`) names.
fn capture_of(
    record: &packer::warc::WarcRecord,
    kind: Kind,
    exp: &Expected,
) -> Option<indexer::Capture> {
    let http = record.http_response().ok();
    Some(indexer::Capture {
        url: exp.url.clone(),
        time: crate::replay::record_date(record)?,
        kind: kind.capture_kind(),
        status: http.as_ref().map_or(0, |h| h.status),
        digest: record
            .payload_digest()
            .map(str::to_string)
            .or_else(|| exp.digest.clone()),
        record_id: exp.record_id.clone(),
        location: exp.location.clone(),
        content_type: http
            .as_ref()
            .map(|h| h.header("content-type").map(str::to_string)),
    })
}

/// Replaces the pack at `path` by its readable prefix `whole`: written to
/// a new file, synced, then the torn original is renamed aside
/// (`PATH.torn-YYYYMMDDHHMMSS`, kept: nothing archived is thrown away) and
/// the new file takes its name.
fn cut_torn_pack(stores: &Stores, path: &str, whole: &[u8]) -> Result<()> {
    let stamp = chrono::Utc::now().format("%Y%m%d%H%M%S");
    let fresh = format!("{path}.repaired-{stamp}");
    let aside = format!("{path}.torn-{stamp}");
    let mut w = stores
        .packs
        .create(&fresh)
        .with_context(|| format!("creating {fresh}"))?;
    w.append(whole)
        .with_context(|| format!("writing {fresh}"))?;
    w.sync().with_context(|| format!("syncing {fresh}"))?;
    w.close().with_context(|| format!("closing {fresh}"))?;
    stores
        .packs
        .rename(path, &aside)
        .with_context(|| format!("moving the torn {path} aside"))?;
    stores
        .packs
        .rename(&fresh, path)
        .with_context(|| format!("putting the repaired {path} in place"))?;
    Ok(())
}

/// The damage file `path` (`len` bytes).
fn read_damage_file(stores: &Stores, path: &str, len: u64) -> Result<DamageFile> {
    let bytes = stores
        .packs
        .read_range(path, 0, len)
        .with_context(|| format!("reading {path}"))?;
    serde_json::from_slice(&bytes).with_context(|| {
        format!("{path} is not a damage record of fsck --repair (move it aside to check the pack afresh)")
    })
}

/// Writes the damage file `path`: a new file, synced, that then takes the
/// place of the old one (`had`). A crash in between loses the record, and
/// the next fsck reports the regions again (exit 1) until a repair records
/// them once more; nothing else depends on it.
fn write_damage_file(stores: &Stores, path: &str, file: &DamageFile, had: bool) -> Result<()> {
    let stamp = chrono::Utc::now().format("%Y%m%d%H%M%S%f");
    let fresh = format!("{path}.new-{stamp}");
    let mut text = serde_json::to_vec_pretty(file)?;
    text.push(b'\n');
    let mut w = stores
        .packs
        .create(&fresh)
        .with_context(|| format!("creating {fresh}"))?;
    w.append(&text)
        .with_context(|| format!("writing {fresh}"))?;
    w.sync().with_context(|| format!("syncing {fresh}"))?;
    w.close().with_context(|| format!("closing {fresh}"))?;
    if had {
        stores
            .packs
            .delete(path)
            .with_context(|| format!("replacing {path}"))?;
    }
    stores
        .packs
        .rename(&fresh, path)
        .with_context(|| format!("putting {path} in place"))?;
    Ok(())
}

/// Removes the rows of records that are gone: page rows (with their index
/// entries), captures, the URL states of those pages and the digest entries
/// whose first capture was one of them, so that the next crawl fetches and
/// stores them as new; all in one atomic batch.
fn drop_dangling(stores: &Stores, dangling: &[Expected]) -> Result<()> {
    let mut digests: Vec<Vec<u8>> = Vec::new();
    for e in dangling {
        let Some(d) = &e.digest else { continue };
        if let Some(entry) = stores.index.get_digest(d)? {
            let first = &entry.first_location;
            if first.path == e.location.path && first.offset == e.location.offset {
                digests.push(d.as_bytes().to_vec());
            }
        }
    }
    digests.sort();
    digests.dedup();
    let pages: Vec<indexer::PageKey> = dangling.iter().filter_map(|e| e.page.clone()).collect();
    let captures: Vec<indexer::Capture> =
        dangling.iter().filter_map(|e| e.capture.clone()).collect();
    let urls: Vec<Vec<u8>> = dangling
        .iter()
        .filter(|e| e.page.is_some())
        .map(|e| e.url.as_bytes().to_vec())
        .collect();
    stores
        .index
        .atomically(|ix| {
            ix.delete_pages(&pages)?;
            ix.delete_captures(&captures)?;
            ix.store().delete(indexer::DIGESTS_TABLE, &digests)?;
            ix.store().delete(indexer::URLS_TABLE, &urls)
        })
        .context("removing the rows of missing records")
}

/// Why `record` is not what `exp` says, if it is not.
fn verify(
    record: &packer::warc::WarcRecord,
    length: u64,
    exp: &Expected,
) -> std::result::Result<(), String> {
    if length != exp.length {
        return Err(format!(
            "record is {length} bytes, the index says {}",
            exp.length
        ));
    }
    let uri = record.header(header::TARGET_URI).unwrap_or_default();
    if uri != exp.url {
        return Err(format!("record is of {uri:?}"));
    }
    let id = record.header(header::RECORD_ID).unwrap_or_default();
    if id != exp.record_id {
        return Err(format!(
            "record id {id} is not the index's {}",
            exp.record_id
        ));
    }
    let stated = record.payload_digest().unwrap_or_default();
    if stated.is_empty() && record.header(header::WARC_TYPE) == Some("revisit") {
        // A revisit need not state the digest of the payload it stands for.
        return Ok(());
    }
    if record.header(header::WARC_TYPE) == Some("response") {
        let body = record
            .http_response()
            .map_err(|e| format!("no HTTP response in the record: {e}"))?
            .body;
        let actual = packer::warc::payload_digest(&body);
        if actual != stated {
            return Err(format!(
                "payload hashes to {actual}, the record states {stated}"
            ));
        }
    }
    if let Some(d) = &exp.digest {
        if d != stated {
            return Err(format!("record digest {stated} is not the index's {d}"));
        }
    }
    Ok(())
}

/// Pages of a batch of text repairs.
const TEXT_REPAIR_BATCH: usize = 256;

/// The text index against the page rows (after the repairs above, which write text as they
/// index): rows without text are a problem (text queries miss them), and so is text without
/// a row that no text mark names (counts of mentions alone would count it; a marked page's
/// rows are in flight, or its writer was killed and the next writer removes its words).
/// `repair` writes the missing pages' words, read again from their records, and removes the
/// entries without a row.
fn check_text(
    stores: &Stores,
    report: &mut FsckReport,
    repair: bool,
    progress: &mut dyn Write,
) -> Result<()> {
    let Some(text) = stores.index.text() else {
        return Ok(());
    };
    let mut rows: HashMap<indexer::text::TextPage, indexer::PageRecord> = HashMap::new();
    stores
        .index
        .each_page(&mut |_, _, page| {
            rows.insert(indexer::text::TextPage::of(&page), page);
        })
        .context("reading the page rows")?;
    let mut orphans = Vec::new();
    text.pages(&mut |p| {
        report.text_pages += 1;
        if rows.remove(&p).is_none() {
            orphans.push(p);
        }
    })
    .context("reading the text index")?;
    // Read after the text: a page whose mark is gone by now has its rows, or had them.
    let (marks, marked) = stores
        .index
        .text_marks()
        .context("reading the text marks")?;
    report.text_marks = marks;
    orphans.retain(|p| !marked.contains(&p.key()));
    report.text_orphans = orphans.len() as u64;
    for p in orphans
        .iter()
        .take(LISTED.saturating_sub(report.problems.len()))
    {
        report.problems.push(Problem {
            kind: "no row",
            pack: String::new(),
            offset: 0,
            detail: format!(
                "the text index holds words of a page of {} at {} (URL hash {}) without a page row",
                p.source,
                chrono::DateTime::from_timestamp(p.time, 0).unwrap_or_default(),
                p.hash
                    .iter()
                    .map(|b| format!("{b:02x}"))
                    .collect::<String>()
            ),
        });
    }
    report.text_missing = rows.len() as u64;
    let unlisted = text
        .unlisted_files()
        .context("listing the text index's files")?;
    report.text_files_unlisted = unlisted.len() as u64;
    for page in rows
        .values()
        .take(LISTED.saturating_sub(report.problems.len()))
    {
        report.problems.push(Problem {
            kind: "no text",
            pack: page.pack_path.clone(),
            offset: page.offset,
            detail: format!("{} is not in the text index", page.url),
        });
    }
    if !repair {
        return Ok(());
    }
    if !orphans.is_empty() {
        text.delete(&orphans)
            .context("removing text entries without a row")?;
        report.removed_text_orphans = orphans.len() as u64;
    }
    if !unlisted.is_empty() {
        text.remove_files(&unlisted)
            .context("removing the text index's unlisted files")?;
        report.removed_text_files = unlisted.len() as u64;
    }
    let missing: Vec<indexer::PageRecord> = rows.into_values().collect();
    for batch in missing.chunks(TEXT_REPAIR_BATCH) {
        let docs: Vec<indexer::TextDoc> = batch
            .par_iter()
            .filter_map(|page| crate::read::page_words(stores, page).ok())
            .collect();
        text.write(&docs).context("writing the text index")?;
        report.repaired_text += docs.len() as u64;
        writeln!(
            progress,
            "text index: {} of {} pages written",
            report.repaired_text,
            missing.len()
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn revisit(url: &str, target: Option<&str>, digest: Option<&str>) -> PendingRevisit {
        PendingRevisit {
            pack: "p.warc.gz".into(),
            offset: 0,
            url: url.into(),
            target: target.map(str::to_string),
            digest: digest.map(str::to_string),
        }
    }

    #[test]
    fn a_revisit_resolves_to_a_listed_capture_of_its_payload_where_replay_looks() {
        let h = indexer::keys::url_hash;
        let originals: HashSet<([u8; 8], String)> = [(h("http://a/"), "sha1:A".to_string())].into();
        let left = unresolved(
            originals,
            vec![
                // Same URL, same payload: resolves.
                revisit("http://a/", None, Some("sha1:A")),
                // URL-agnostic, pointing at the original: resolves.
                revisit("http://b/", Some("http://a/"), Some("sha1:A")),
                // A 304 of b after b's resolved revisit: resolves through it.
                revisit("http://b/", Some("http://b/"), Some("sha1:A")),
                // Pointing at a URL that holds another payload.
                revisit("http://c/", Some("http://c/"), Some("sha1:A")),
                // No listed capture of the payload anywhere.
                revisit("http://a/", None, Some("sha1:B")),
                // No digest: nothing to look for.
                revisit("http://a/", None, None),
            ],
        );
        let left: Vec<(&str, Option<&str>)> = left
            .iter()
            .map(|r| (r.url.as_str(), r.digest.as_deref()))
            .collect();
        assert_eq!(
            left,
            [
                ("http://c/", Some("sha1:A")),
                ("http://a/", Some("sha1:B")),
                ("http://a/", None)
            ]
        );
        let report = FsckReport {
            unresolved_revisits: 1,
            ..Default::default()
        };
        assert!(!report.clean());
        let report = FsckReport {
            unlisted: 2,
            listed_captures: 2,
            ..Default::default()
        };
        assert!(report.clean());
    }

    #[test]
    fn the_report_counts_fingerprints_by_recipe_and_says_what_to_do_about_older_ones() {
        let current = classifier::simhash::FINGERPRINT_VERSION;
        let mut r = FsckReport {
            fingerprints: [(current, 7)].into(),
            ..Default::default()
        };
        let text = r.render();
        assert!(
            text.contains(&format!("fingerprints: 7 of recipe {current} (current)\n")),
            "{text}"
        );
        assert!(!text.contains("reindex --replace"), "{text}");
        r.fingerprints.insert(current - 1, 2);
        r.fingerprints_unrecorded = 3;
        let text = r.render();
        assert!(
            text.contains(&format!("2 of recipe {}", current - 1)),
            "{text}"
        );
        assert!(text.contains("3 of an unrecorded recipe"), "{text}");
        assert!(text.contains("2 fingerprints of another recipe"), "{text}");
        assert!(text.contains("`harvest reindex --replace`"), "{text}");
        assert!(r.clean(), "older fingerprints are no inconsistency");
    }
}
