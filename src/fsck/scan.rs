//! The walk over the packs: each pack read whole, each record at an offset the index
//! names checked against its rows, torn tails and damaged regions found, the records no
//! row names counted, and the rows whose record is not there collected for the repair.

use std::collections::{HashMap, HashSet};
use std::io::Write;

use anyhow::{Context, Result};
use packer::warc::{header, Resync, WarcRecord};
use packer::PackEntry;

use crate::replay::{Entry, Kind};
use crate::stores::Stores;

use super::damage::{cut_torn_pack, read_damage_file, DamageFile, RecordedRegion, DAMAGE_SUFFIX};
use super::expected::{verify, Expected};
use super::report::{DamagedRegion, FsckReport, LISTED};
use super::revisits::{capture_of, PendingRevisit};

/// Pack path -> offset -> what the index says is there.
pub(super) type References = HashMap<String, HashMap<u64, Expected>>;

/// (URL hash, payload digest) of every response capture: what revisits resolve to.
pub(super) type Originals = HashSet<([u8; 8], String)>;

/// What the walk found that the repairs and the revisit check act on.
#[derive(Default)]
pub(super) struct Scan {
    /// Rows whose record is not there.
    pub(super) dangling: Vec<Expected>,
    /// Records no row names (kept for a repair only).
    pub(super) unindexed: Vec<Entry>,
    /// Revisit captures whose original is to be found.
    pub(super) revisits: Vec<PendingRevisit>,
    /// Capture rows to write for records only a page row names (a repair only).
    pub(super) unlisted: Vec<indexer::Capture>,
    /// The packs read, in order (an [`Entry`]'s pack is an index into it).
    pub(super) paths: Vec<String>,
    /// Damage files to write once the rows pointing into them are gone: the file,
    /// its regions, how many of them are new.
    pub(super) to_record: Vec<(String, DamageFile, u64)>,
    /// The damage files there are, with their lengths.
    pub(super) damage_files: HashMap<String, u64>,
}

/// What the checks of one pack's records share: the pack, the report they add to and
/// whether they repair.
struct PackCheck<'a> {
    /// The pack's path.
    path: &'a str,
    /// The report the problems go to.
    report: &'a mut FsckReport,
    /// `fsck --repair`: collect what the repairs act on.
    repair: bool,
}

/// What one pack's walk keeps of its damaged regions.
#[derive(Default)]
struct PackDamage {
    /// The regions recorded by an earlier repair.
    known: DamageFile,
    /// The pack's damaged regions, as they are now.
    regions: Vec<RecordedRegion>,
    /// How many of them no repair recorded yet.
    new_regions: u64,
}

impl Scan {
    /// Reads every pack of `stores`, checking the records `expected` names (what is left
    /// of it names packs that do not exist).
    pub(super) fn packs(
        stores: &Stores,
        expected: &mut References,
        report: &mut FsckReport,
        repair: bool,
        progress: &mut dyn Write,
    ) -> Result<Scan> {
        let mut packs = stores.packs.list("").context("listing the packs")?;
        let damage_files: HashMap<String, u64> = packs
            .iter()
            .filter(|p| p.path.ends_with(DAMAGE_SUFFIX))
            .map(|p| (p.path.clone(), p.len))
            .collect();
        packs.retain(|p| p.path.ends_with(".warc.gz") || p.path.ends_with(".warc"));
        packs.sort_by(|a, b| a.path.cmp(&b.path));
        let mut scan = Scan {
            paths: Vec::with_capacity(packs.len()),
            damage_files,
            ..Scan::default()
        };
        for entry in &packs {
            let wanted = expected.remove(&entry.path).unwrap_or_default();
            scan.pack(stores, entry, wanted, report, repair, progress)?;
        }
        Ok(scan)
    }

    /// Reads one pack and checks its records against `wanted` (offset -> what its rows
    /// say is there).
    fn pack(
        &mut self,
        stores: &Stores,
        entry: &PackEntry,
        mut wanted: HashMap<u64, Expected>,
        report: &mut FsckReport,
        repair: bool,
        progress: &mut dyn Write,
    ) -> Result<()> {
        let bytes = stores
            .packs
            .read_range(&entry.path, 0, entry.len)
            .with_context(|| format!("reading pack {}", entry.path))?;
        report.packs += 1;
        report.bytes += bytes.len() as u64;
        let side = format!("{}{DAMAGE_SUFFIX}", entry.path);
        let mut damage = PackDamage {
            known: match self.damage_files.get(&side) {
                Some(&len) => read_damage_file(stores, &side, len)?,
                None => DamageFile::default(),
            },
            ..PackDamage::default()
        };
        let cx = &mut PackCheck {
            path: &entry.path,
            report,
            repair,
        };
        for item in Resync::for_pack(&entry.path, &bytes) {
            let (offset, length, record) = match item {
                Ok(r) => r,
                Err(d) if d.to_end => {
                    let at = d.offset;
                    cx.report.problem(
                        "torn",
                        cx.path,
                        at,
                        format!(
                            "{} bytes after the last whole record: {}",
                            d.length, d.reason
                        ),
                    );
                    if cx.repair {
                        cut_torn_pack(stores, cx.path, &bytes[..at as usize])?;
                        cx.report.repaired_torn += 1;
                    }
                    break;
                }
                Err(d) => {
                    damage.found(cx, d);
                    continue;
                }
            };
            cx.report.records += 1;
            let Some(exp) = wanted.remove(&offset) else {
                if Kind::of(&record).is_some() {
                    cx.report.unindexed += 1;
                    if cx.repair {
                        let pack = self.paths.len() as u32;
                        self.unindexed
                            .extend(Entry::of(&record, pack, offset, length));
                    }
                }
                continue;
            };
            self.indexed(cx, offset, length, &record, &exp);
        }
        self.not_found(cx, wanted, &damage.regions);
        if repair && damage.new_regions > 0 {
            self.to_record.push((
                side,
                DamageFile {
                    regions: damage.regions,
                },
                damage.new_regions,
            ));
        }
        let _ = writeln!(
            progress,
            "fsck: {} ({} records)",
            entry.path, cx.report.records
        );
        self.paths.push(entry.path.clone());
        Ok(())
    }

    /// Checks a record the index names against its rows (`exp`): the same record, its
    /// capture listed, a revisit to resolve.
    fn indexed(
        &mut self,
        cx: &mut PackCheck<'_>,
        offset: u64,
        length: u64,
        record: &WarcRecord,
        exp: &Expected,
    ) {
        match verify(record, length, exp) {
            Ok(()) => cx.report.verified += 1,
            Err(why) => cx.report.problem(
                "mismatch",
                cx.path,
                offset,
                format!("{} ({} row of {})", why, exp.from, exp.url),
            ),
        }
        let Some(kind) = Kind::of(record) else {
            return;
        };
        match &exp.capture {
            None => {
                cx.report.problem(
                    "unlisted",
                    cx.path,
                    offset,
                    format!(
                        "the record of {} has a page row but no capture row: `export cdxj` leaves it out",
                        exp.url
                    ),
                );
                if cx.repair {
                    self.unlisted.extend(capture_of(record, kind, exp));
                }
            }
            Some(c) if c.kind != indexer::CaptureKind::Response => {
                cx.report.revisits += 1;
                self.revisits.push(PendingRevisit {
                    pack: cx.path.to_string(),
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

    /// The rows of the pack whose record was not found (`left`): missing, in a damaged
    /// region or at an offset where no record starts.
    fn not_found(
        &mut self,
        cx: &mut PackCheck<'_>,
        left: HashMap<u64, Expected>,
        regions: &[RecordedRegion],
    ) {
        let mut left: Vec<(u64, Expected)> = left.into_iter().collect();
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
            cx.report.problem(
                "missing",
                cx.path,
                offset,
                format!("{why} ({} row of {})", exp.from, exp.url),
            );
            self.dangling.push(exp);
        }
    }

    /// The rows that name packs that do not exist.
    pub(super) fn gone(&mut self, expected: References, report: &mut FsckReport) {
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
                self.dangling.push(exp);
            }
        }
    }
}

impl PackDamage {
    /// A damaged region of the pack: skipped when an earlier repair recorded it, else a
    /// problem and a region to record.
    fn found(&mut self, cx: &mut PackCheck<'_>, d: packer::warc::Damage) {
        let report = &mut *cx.report;
        report.damaged_bytes += d.length;
        let earlier = self
            .known
            .regions
            .iter()
            .find(|r| r.offset == d.offset && r.length == d.length);
        match earlier {
            Some(r) => {
                report.skipped_damaged += 1;
                self.regions.push(r.clone());
            }
            None => {
                report.problem(
                    "damaged",
                    cx.path,
                    d.offset,
                    format!(
                        "{} bytes hold no readable record, the next one starts at {}: {}",
                        d.length,
                        d.offset + d.length,
                        d.reason
                    ),
                );
                self.new_regions += 1;
                self.regions.push(RecordedRegion {
                    offset: d.offset,
                    length: d.length,
                    reason: d.reason.clone(),
                    recorded_at: chrono::Utc::now().to_rfc3339(),
                });
            }
        }
        if report.damaged_regions.len() < LISTED {
            report.damaged_regions.push(DamagedRegion {
                pack: cx.path.to_string(),
                offset: d.offset,
                length: d.length,
                reason: d.reason,
                recorded: earlier.is_some(),
            });
        }
    }
}
