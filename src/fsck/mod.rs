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
//!
//! The modules: the rows' view of the packs ([`expected`]), the walk over the packs
//! ([`scan`]), damage a pack keeps ([`damage`]), revisits that must resolve
//! ([`revisits`]), the text index ([`text`]) and the report ([`report`]).

mod damage;
mod expected;
mod report;
mod revisits;
mod scan;
mod text;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::Write;
use std::time::Instant;

use anyhow::{Context, Result};

use crate::config::Config;
use crate::stores::Stores;

pub use damage::{DamageFile, RecordedRegion, DAMAGE_SUFFIX};
pub use report::{DamagedRegion, FsckReport, Problem};

use damage::write_damage_file;
use expected::{drop_dangling, Expected};
use revisits::unresolved;
use scan::{Originals, References, Scan};
use text::check_text;

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
    let (mut expected, originals) = references(stores, &mut report)?;
    let mut scan = Scan::packs(stores, &mut expected, &mut report, repair, progress)?;
    scan.gone(expected, &mut report);
    for r in unresolved(originals, scan.revisits) {
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
    if repair && !scan.dangling.is_empty() {
        drop_dangling(stores, &scan.dangling)?;
        report.dropped_missing = scan.dangling.len() as u64;
    }
    if repair && !scan.unlisted.is_empty() {
        stores
            .index
            .put_captures(&scan.unlisted)
            .context("recording the captures of records only page rows named")?;
        report.listed_captures = scan.unlisted.len() as u64;
    }
    // Only now that no row points into them: the regions are known.
    for (side, file, new) in scan.to_record {
        let had = scan.damage_files.contains_key(&side);
        write_damage_file(stores, &side, &file, had)?;
        report.repaired_damaged += new;
    }
    if repair && !scan.unindexed.is_empty() {
        let (indexed, history) =
            crate::replay::index_unindexed(cfg, stores, scan.unindexed, &scan.paths, progress)
                .context("indexing the unindexed records")?;
        report.reindexed = indexed;
        report.history_added = history;
    }
    check_text(stores, &mut report, repair, progress)?;
    report.secs = started.elapsed().as_secs_f64();
    Ok(report)
}

/// What the index says is in the packs: every page row's and capture row's record
/// (counted in `report`), and (URL hash, payload digest) of every response capture,
/// what revisits resolve to.
fn references(stores: &Stores, report: &mut FsckReport) -> Result<(References, Originals)> {
    let mut expected: References = HashMap::new();
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
    let mut originals: Originals = HashSet::new();
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
    Ok((expected, originals))
}
