//! `harvest fsck`: checks that the index and the packs agree.
//!
//! - every page row and every recorded capture points at a record that
//!   exists (pack present, a whole record starts at the offset, the length
//!   matches), whose `WARC-Target-URI` and `WARC-Record-ID` are the row's,
//!   and whose payload hashes to the row's digest (recomputed from the
//!   stored bytes for `response` records; a revisit's stated digest);
//! - every pack reads to its end: a torn last record (a crash while it was
//!   written) is reported with its offset;
//! - every `response` or `revisit` record is referenced by the index, or
//!   counted as unindexed: the tail of a batch a crash cut between its pack
//!   write and its index write (its page was fetched again by the next
//!   run).
//!
//! Packs are read whole, one at a time, so each record is read once; the
//! references are held in memory (a few hundred bytes a capture).

use std::collections::BTreeMap;
use std::collections::HashMap;
use std::io::Write;
use std::time::Instant;

use anyhow::{Context, Result};
use packer::warc::{header, RecordIter};
use serde::Serialize;

use crate::config::Config;
use crate::replay::{Entry, Kind};
use crate::stores::Stores;

/// Problems listed in the report (all are counted).
const LISTED: usize = 50;

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
    /// `missing`, `mismatch`, `torn`.
    pub kind: &'static str,
    pub pack: String,
    pub offset: u64,
    pub detail: String,
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
    /// Response and revisit records no row points at.
    pub unindexed: u64,
    /// With `--repair`: torn packs cut back to their last whole record
    /// (the original kept as `PACK.torn-TIME`).
    pub repaired_torn: u64,
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
    }

    fn problem(&mut self, kind: &'static str, pack: &str, offset: u64, detail: String) {
        match kind {
            "missing" => self.missing += 1,
            "torn" => self.torn += 1,
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
            "verified {}  missing {}  mismatched {}  torn packs {}  unindexed records {}\n",
            self.verified, self.missing, self.mismatched, self.torn, self.unindexed
        ));
        if !self.fingerprints.is_empty() || self.fingerprints_unrecorded > 0 {
            s.push_str(&self.render_fingerprints());
        }
        if self.repaired_torn + self.dropped_missing > 0 {
            s.push_str(&format!(
                "repaired: {} torn packs cut to their last whole record (originals kept as *.torn-*), {} rows of missing records removed\n",
                self.repaired_torn, self.dropped_missing
            ));
        }
        if self.reindexed + self.history_added > 0 {
            s.push_str(&format!(
                "repaired: {} unindexed records indexed, {} added to the capture history of pages fetched again since\n",
                self.reindexed, self.history_added
            ));
        }
        for p in &self.problems {
            s.push_str(&format!(
                "  {:<8} {} @ {}: {}\n",
                p.kind, p.pack, p.offset, p.detail
            ));
        }
        let listed = self.problems.len() as u64;
        let total = self.missing + self.mismatched + self.torn;
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
/// original file is kept beside it) and the rows of records that are gone
/// are removed; mismatches are only reported.
pub fn check(
    cfg: &Config,
    stores: &Stores,
    progress: &mut dyn Write,
    repair: bool,
) -> Result<FsckReport> {
    let started = Instant::now();
    let mut report = FsckReport::default();
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
    stores
        .index
        .each_capture(&mut |c| {
            captures += 1;
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
    packs.retain(|p| p.path.ends_with(".warc.gz") || p.path.ends_with(".warc"));
    packs.sort_by(|a, b| a.path.cmp(&b.path));
    let mut dangling: Vec<Expected> = Vec::new();
    let mut unindexed: Vec<Entry> = Vec::new();
    let mut paths: Vec<String> = Vec::with_capacity(packs.len());
    for entry in &packs {
        let bytes = stores
            .packs
            .read_range(&entry.path, 0, entry.len)
            .with_context(|| format!("reading pack {}", entry.path))?;
        report.packs += 1;
        report.bytes += bytes.len() as u64;
        let mut wanted = expected.remove(&entry.path).unwrap_or_default();
        for item in RecordIter::new(&bytes) {
            let (offset, length, record) = match item {
                Ok(r) => r,
                Err(e) => {
                    let at = match &e {
                        packer::Error::CorruptRecord { offset, .. } => *offset,
                        _ => 0,
                    };
                    report.problem(
                        "torn",
                        &entry.path,
                        at,
                        format!(
                            "{} bytes after the last whole record: {e}",
                            bytes.len() as u64 - at
                        ),
                    );
                    if repair {
                        cut_torn_pack(stores, &entry.path, &bytes[..at as usize])?;
                        report.repaired_torn += 1;
                    }
                    break;
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
        }
        let mut left: Vec<(u64, Expected)> = wanted.into_iter().collect();
        left.sort_by_key(|(o, _)| *o);
        for (offset, exp) in left {
            report.problem(
                "missing",
                &entry.path,
                offset,
                format!("no record starts here ({} row of {})", exp.from, exp.url),
            );
            dangling.push(exp);
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
    if repair && !dangling.is_empty() {
        drop_dangling(stores, &dangling)?;
        report.dropped_missing = dangling.len() as u64;
    }
    if repair && !unindexed.is_empty() {
        let (indexed, history) =
            crate::replay::index_unindexed(cfg, stores, unindexed, &paths, progress)
                .context("indexing the unindexed records")?;
        report.reindexed = indexed;
        report.history_added = history;
    }
    report.secs = started.elapsed().as_secs_f64();
    Ok(report)
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

#[cfg(test)]
mod tests {
    use super::*;

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
