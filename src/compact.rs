//! `harvest compact` (issue 42 item 4): merges a (topic, month)'s small packs into large ones
//! and moves the index rows with them.
//!
//! Daily runs write packs per (topic, day, cluster), one part per writer and run, so an
//! archive grows by many small files (HDFS keeps every file in the NameNode's memory).
//! Compaction copies whole packs, byte for byte and one after the other (each keeps its own
//! warcinfo record first; every record — responses, revisits, requests, metadata — stays as
//! it was), into a month pack [`packer::MonthPackName`]
//! (`{topic}/{yyyy}/{mm}/{topic}-{yyyymm}-{created}-{part}-{writer}.warc.gz`). A record at
//! `offset` of an old pack is then at `base + offset` of the new one, so moving the rows is
//! rewriting path and offset ([`indexer::Index::relocate`]).
//!
//! Steps of one new pack, each safe to be killed after:
//! 1. the old packs are read and checked (every record reads, no damage, no torn tail) and
//!    appended to `_compact/{name}.part` (not a pack name: fsck, reindex and export ignore
//!    it), which is synced and closed;
//! 2. the journal `_compact/{name}.json` (new path, part path, each old pack with its base
//!    offset and length) is written under a temporary name and renamed into place;
//! 3. the part is renamed to the new pack's path;
//! 4. every row pointing into an old pack is rewritten in atomic batches;
//! 5. the old packs are deleted;
//! 6. the journal is deleted.
//!
//! A kill before 2 leaves a part that no journal names: the next `harvest compact` deletes
//! it (the rows never pointed at it). A kill after 2 leaves a journal: whoever next opens the
//! archive for writing ([`crate::stores::Stores::open_for`]), `harvest fsck` and the next
//! compact finish it ([`finish_interrupted`]): steps 3 to 6 are each done again or found
//! done (rows already moved are not in an old pack any more; an old pack already deleted is
//! not deleted again).
//!
//! Packs left out: a pack with recorded damage (`PACK.damaged`) or one that does not read
//! whole (fsck's business first), a pack already at least the target size, and a pack
//! written by a run the `runs` table has as still running (on the cluster a crawl may be
//! writing it: its writer token is in the run's record; on the embedded store the store
//! lock and, inside `harvest serve`, [`crate::jobs::compaction`] keep crawls and compaction apart). A crawl
//! appends to a day's last pack only through [`packer::PackStore::append`], which also
//! claims: compaction claims every pack before reading it and holds it until it is deleted,
//! so a crawl finds it busy and starts a new part, and a pack a crawl holds is left out.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::Write;

use anyhow::{bail, Context, Result};
use chrono::{Datelike, Timelike};
use serde::{Deserialize, Serialize};

use indexer::{Index, Moved, Relocated};
use packer::{MonthPackName, PackEntry, PackName, PackOrigin, PackStore};

/// Folder of the pack store holding parts being written and journals of compactions.
pub const COMPACT_FOLDER: &str = "_compact";
/// Suffix of a new pack while it is being written.
const PART_SUFFIX: &str = ".part";
/// Suffix of a compaction journal.
const JOURNAL_SUFFIX: &str = ".json";
/// Suffix of a journal while it is being written.
const JOURNAL_TMP_SUFFIX: &str = ".json.tmp";
/// Version of the journal format.
const JOURNAL_VERSION: u32 = 1;
/// A pack at least this large counts as large in the figures (the goal: 90% of the
/// bytes in such packs).
pub const LARGE_PACK_BYTES: u64 = 64 << 20;
/// Side file of a pack with recorded damage (see `crate::fsck`).
const DAMAGE_SUFFIX: &str = ".damaged";

/// Crash tests: `HARVEST_CRASH_COMPACT=STEP` kills the process (SIGKILL) the first time
/// compaction reaches `STEP`: `written` (part synced, no journal), `journaled` (journal in
/// place, part not renamed), `renamed` (new pack in place, no row moved), `rows` (after the
/// first batch of moved rows; batches are then 25 rows), `deleted` (after the first old
/// pack is deleted).
pub const CRASH_COMPACT: &str = "HARVEST_CRASH_COMPACT";
/// Rows a batch moves when [`CRASH_COMPACT`] is `rows` (so that a kill falls between batches).
const CRASH_BATCH_ROWS: usize = 25;

fn crash_point(step: &str) {
    if std::env::var(CRASH_COMPACT).as_deref() == Ok(step) {
        tracing::warn!(step, "{CRASH_COMPACT}: killing this process");
        crate::crash::kill_this_process();
    }
}

/// A compaction in progress, as written before any row moves.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Journal {
    version: u32,
    /// The new pack's path.
    pack: String,
    /// The path it is written under until renamed.
    part: String,
    /// The old packs, in the order they were appended.
    sources: Vec<Source>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Source {
    path: String,
    /// Offset of the old pack's first byte in the new pack.
    base: u64,
    length: u64,
}

/// What `harvest compact` is asked to do.
#[derive(Debug, Clone)]
pub struct CompactOptions {
    /// Only this topic (a label; compared after sanitising, as pack folders are named).
    pub topic: Option<String>,
    /// Only this month (year, month).
    pub month: Option<(i32, u32)>,
    /// Report what would be merged, change nothing.
    pub dry_run: bool,
    /// Size a new pack is filled up to (and under which a pack is merged).
    pub target_bytes: u64,
}

/// Count and sizes of the packs of an archive.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct PackSizes {
    pub packs: u64,
    pub bytes: u64,
    pub median_bytes: u64,
    pub p10_bytes: u64,
    /// Share of the bytes in packs of at least [`LARGE_PACK_BYTES`].
    pub large_share: f64,
}

impl PackSizes {
    /// The figures of packs of these sizes.
    pub fn of(sizes: &[u64]) -> PackSizes {
        let mut s = sizes.to_vec();
        s.sort_unstable();
        let bytes: u64 = s.iter().sum();
        let large: u64 = s.iter().filter(|&&b| b >= LARGE_PACK_BYTES).sum();
        let at = |q: f64| -> u64 {
            if s.is_empty() {
                0
            } else {
                s[((s.len() - 1) as f64 * q).floor() as usize]
            }
        };
        PackSizes {
            packs: s.len() as u64,
            bytes,
            median_bytes: at(0.5),
            p10_bytes: at(0.1),
            large_share: if bytes == 0 {
                0.0
            } else {
                large as f64 / bytes as f64
            },
        }
    }

    /// One line: packs, median, p10, share of bytes in large packs.
    pub fn render(&self) -> String {
        format!(
            "{} packs, {:.1} MB, median {:.1} KB, p10 {:.1} KB, {:.1}% of bytes in packs >= 64 MiB",
            self.packs,
            self.bytes as f64 / 1e6,
            self.median_bytes as f64 / 1e3,
            self.p10_bytes as f64 / 1e3,
            self.large_share * 100.0
        )
    }
}

/// What `harvest compact` did (or, with `--dry-run`, would do).
#[derive(Debug, Clone, Default, Serialize)]
pub struct CompactReport {
    pub dry_run: bool,
    pub target_bytes: u64,
    /// Interrupted compactions finished first.
    pub resumed: u64,
    /// Parts of a compaction killed before its journal, deleted.
    pub parts_removed: u64,
    /// (topic, month) groups with packs merged.
    pub groups: u64,
    /// Old packs merged (and deleted).
    pub merged: u64,
    /// New packs written.
    pub written: u64,
    /// Bytes copied.
    pub bytes_copied: u64,
    /// Rows moved to the new packs.
    pub rows: Relocated,
    /// Packs left out: recorded or found damage, or not read whole.
    pub skipped_damaged: u64,
    /// Packs left out: written by a run that is still running.
    pub skipped_running: u64,
    /// Packs left out: could not be read.
    pub skipped_unreadable: u64,
    /// The packs before and after.
    pub before: PackSizes,
    pub after: PackSizes,
    /// The new packs (at most 100 listed).
    pub new_packs: Vec<String>,
}

impl CompactReport {
    /// The text report.
    pub fn render(&self) -> String {
        let mut s = String::new();
        if self.resumed > 0 {
            s.push_str(&format!(
                "finished {} interrupted compaction(s) first\n",
                self.resumed
            ));
        }
        s.push_str(&format!(
            "{}{} (topic, month) group(s): {} packs {} into {} ({:.1} MB)\n",
            if self.dry_run { "dry run: " } else { "" },
            self.groups,
            self.merged,
            if self.dry_run {
                "would be merged"
            } else {
                "merged"
            },
            self.written,
            self.bytes_copied as f64 / 1e6
        ));
        if !self.dry_run {
            s.push_str(&format!(
                "rows moved: {} pages, {} captures, {} digests, {} images\n",
                self.rows.pages, self.rows.captures, self.rows.digests, self.rows.images
            ));
        }
        let skipped = self.skipped_damaged + self.skipped_running + self.skipped_unreadable;
        if skipped > 0 {
            s.push_str(&format!(
                "left out: {} damaged or not whole (see harvest fsck), {} of running crawls, {} unreadable\n",
                self.skipped_damaged, self.skipped_running, self.skipped_unreadable
            ));
        }
        s.push_str(&format!("before: {}\n", self.before.render()));
        s.push_str(&format!(
            "{}: {}\n",
            if self.dry_run { "would be" } else { "after" },
            self.after.render()
        ));
        s
    }
}

/// Whether a listed file is a pack of the archive (not a part, journal, split or side file).
fn is_pack(path: &str) -> bool {
    (path.ends_with(packer::PACK_EXTENSION) || path.ends_with(".warc"))
        && !path.starts_with('_')
        && !path.contains("/_")
}

/// The figures of the packs now in `store`.
pub fn pack_sizes(store: &dyn PackStore) -> Result<PackSizes> {
    let sizes: Vec<u64> = store
        .list("")
        .context("listing the packs")?
        .into_iter()
        .filter(|p| is_pack(&p.path))
        .map(|p| p.len)
        .collect();
    Ok(PackSizes::of(&sizes))
}

/// The (topic, year, month) and writer token of a pack named by harvest.
fn month_of(path: &str) -> Option<((String, i32, u32), Option<String>)> {
    if let Some(n) = PackName::parse(path) {
        let writer = n.origin.map(|o| o.writer);
        return Some(((n.topic, n.date.year(), n.date.month()), writer));
    }
    let m = MonthPackName::parse(path)?;
    Some(((m.topic, m.year, m.month), Some(m.origin.writer)))
}

fn exists(store: &dyn PackStore, path: &str) -> Result<bool> {
    match store.len(path) {
        Ok(_) => Ok(true),
        Err(packer::Error::NotFound { .. }) => Ok(false),
        Err(e) => Err(e).with_context(|| format!("looking for {path}")),
    }
}

fn delete_if_there(store: &dyn PackStore, path: &str) -> Result<bool> {
    match store.delete(path) {
        Ok(()) => Ok(true),
        Err(packer::Error::NotFound { .. }) => Ok(false),
        Err(e) => Err(e).with_context(|| format!("deleting {path}")),
    }
}

/// Writes `bytes` as `path` whole or not at all (a temporary name, then a rename).
fn put_file(store: &dyn PackStore, path: &str, tmp: &str, bytes: &[u8]) -> Result<()> {
    delete_if_there(store, tmp)?;
    let mut w = store
        .create(tmp)
        .with_context(|| format!("creating {tmp}"))?;
    w.append(bytes).with_context(|| format!("writing {tmp}"))?;
    w.close().with_context(|| format!("closing {tmp}"))?;
    store
        .rename(tmp, path)
        .with_context(|| format!("renaming {tmp} to {path}"))
}

/// Finishes the compactions whose journals are in the pack store (a process killed after
/// writing one): returns how many. Parts no journal names are left to `harvest compact`
/// (on the cluster another compaction may be writing one now).
pub fn finish_interrupted(packs: &dyn PackStore, index: &Index) -> Result<u64> {
    let listed = match packs.list(&format!("{COMPACT_FOLDER}/")) {
        Ok(l) => l,
        Err(packer::Error::NotFound { .. }) => return Ok(0),
        Err(e) => return Err(e).context("listing the compaction journals"),
    };
    let mut done = 0;
    for entry in listed {
        if !entry.path.ends_with(JOURNAL_SUFFIX) {
            continue;
        }
        let bytes = match packs.read_range(&entry.path, 0, entry.len) {
            Ok(b) => b,
            // Finished meanwhile by another process.
            Err(packer::Error::NotFound { .. }) => continue,
            Err(e) => return Err(e).with_context(|| format!("reading {}", entry.path)),
        };
        let journal: Journal = serde_json::from_slice(&bytes)
            .with_context(|| format!("reading the compaction journal {}", entry.path))?;
        if journal.version > JOURNAL_VERSION {
            bail!(
                "{}: a compaction journal of a newer harvest (version {}); finish it with that version",
                entry.path,
                journal.version
            );
        }
        tracing::warn!(journal = %entry.path, pack = %journal.pack, "finishing an interrupted compaction");
        finish(
            packs,
            index,
            &entry.path,
            &journal,
            &mut Relocated::default(),
        )?;
        done += 1;
    }
    Ok(done)
}

/// Steps 3 to 6 of a compaction (see the module docs); each is done again or found done.
fn finish(
    packs: &dyn PackStore,
    index: &Index,
    journal_path: &str,
    journal: &Journal,
    moved: &mut Relocated,
) -> Result<()> {
    if exists(packs, &journal.part)? {
        if exists(packs, &journal.pack)? {
            bail!(
                "compaction journal {journal_path}: both {} and {} exist",
                journal.part,
                journal.pack
            );
        }
        packs
            .rename(&journal.part, &journal.pack)
            .with_context(|| format!("renaming {} to {}", journal.part, journal.pack))?;
    } else if !exists(packs, &journal.pack)? {
        bail!(
            "compaction journal {journal_path}: neither the new pack {} nor its part {} exists",
            journal.pack,
            journal.part
        );
    }
    crash_point("renamed");
    // Its rows move by offset: an old pack that grew since it was copied (a crawl appended to
    // it after a compaction died holding it) would have rows past the copy.
    for src in &journal.sources {
        match packs.len(&src.path) {
            Ok(len) if len != src.length => bail!(
                "compaction journal {journal_path}: {} grew from {} to {len} bytes since it was copied;                  its new records are not in {}. Move {journal_path} aside and run harvest fsck",
                src.path,
                src.length,
                journal.pack
            ),
            _ => {}
        }
    }
    let moves: HashMap<String, Moved> = journal
        .sources
        .iter()
        .map(|s| {
            (
                s.path.clone(),
                Moved {
                    path: journal.pack.clone(),
                    base: s.base,
                },
            )
        })
        .collect();
    let crash_rows = std::env::var(CRASH_COMPACT).as_deref() == Ok("rows");
    let batch = if crash_rows {
        CRASH_BATCH_ROWS
    } else {
        indexer::relocate::RELOCATE_BATCH
    };
    let rows = index
        .relocate(&moves, batch, &mut |_| crash_point("rows"))
        .context("moving the rows to the new pack")?;
    for (n, s) in journal.sources.iter().enumerate() {
        delete_if_there(packs, &s.path)?;
        if n == 0 {
            crash_point("deleted");
        }
    }
    delete_if_there(packs, journal_path)?;
    moved.pages += rows.pages;
    moved.captures += rows.captures;
    moved.digests += rows.digests;
    moved.images += rows.images;
    moved.batches += rows.batches;
    Ok(())
}

/// Whether `bytes` (a whole pack) reads record by record to its end with no damage.
fn reads_whole(path: &str, bytes: &[u8]) -> bool {
    let mut end = 0u64;
    for item in packer::warc::Resync::for_pack(path, bytes) {
        match item {
            Ok((offset, length, _)) => {
                if offset != end {
                    return false;
                }
                end = offset + length;
            }
            Err(_) => return false,
        }
    }
    end > 0 && end == bytes.len() as u64
}

/// Runs `harvest compact`.
pub fn compact(
    packs: &dyn PackStore,
    index: &Index,
    options: &CompactOptions,
    progress: &mut dyn Write,
) -> Result<CompactReport> {
    let mut report = CompactReport {
        dry_run: options.dry_run,
        target_bytes: options.target_bytes,
        ..CompactReport::default()
    };
    if !options.dry_run {
        report.resumed = finish_interrupted(packs, index)?;
        // Parts of compactions killed before their journal: never pointed at.
        if let Ok(listed) = packs.list(&format!("{COMPACT_FOLDER}/")) {
            let journals: HashSet<String> = listed
                .iter()
                .filter_map(|p| p.path.strip_suffix(JOURNAL_SUFFIX).map(str::to_string))
                .collect();
            for p in &listed {
                let orphan = match p.path.strip_suffix(PART_SUFFIX) {
                    Some(stem) => !journals.contains(stem),
                    None => p.path.ends_with(JOURNAL_TMP_SUFFIX),
                };
                if orphan && delete_if_there(packs, &p.path)? {
                    report.parts_removed += 1;
                }
            }
        }
    }
    let listed = packs.list("").context("listing the packs")?;
    let damaged: HashSet<&str> = listed
        .iter()
        .filter_map(|p| p.path.strip_suffix(DAMAGE_SUFFIX))
        .collect();
    let running_runs: Vec<indexer::RunRecord> = indexer::RunsTable::open(index.store().clone())?
        .list(None, usize::MAX)?
        .into_iter()
        .filter(|r| r.status == indexer::RunStatus::Running)
        .collect();
    let running: HashSet<String> = running_runs
        .iter()
        .flat_map(|r| r.writers.iter().cloned())
        .collect();
    let appended_to: HashSet<String> = running_runs
        .iter()
        .flat_map(|r| r.appended.iter().map(|(path, _)| path.clone()))
        .collect();
    let topic = options.topic.as_deref().map(packer::sanitize_topic);
    let mut groups: BTreeMap<(String, i32, u32), Vec<PackEntry>> = BTreeMap::new();
    let mut sizes: Vec<u64> = Vec::new();
    for p in &listed {
        if !is_pack(&p.path) {
            continue;
        }
        sizes.push(p.len);
        let Some((key, writer)) = month_of(&p.path) else {
            continue;
        };
        if topic.as_ref().is_some_and(|t| *t != key.0)
            || options.month.is_some_and(|m| m != (key.1, key.2))
            || p.len >= options.target_bytes
        {
            continue;
        }
        if damaged.contains(p.path.as_str()) {
            report.skipped_damaged += 1;
            continue;
        }
        if writer.is_some_and(|w| running.contains(&w)) || appended_to.contains(&p.path) {
            report.skipped_running += 1;
            continue;
        }
        groups.entry(key).or_default().push(p.clone());
    }
    report.before = PackSizes::of(&sizes);
    // Fill new packs up to the target, in path (day) order.
    let mut plan: Vec<((String, i32, u32), Vec<PackEntry>)> = Vec::new();
    for (key, mut members) in groups {
        members.sort_by(|a, b| a.path.cmp(&b.path));
        let mut bin: Vec<PackEntry> = Vec::new();
        let mut bin_bytes = 0u64;
        let mut bins = Vec::new();
        for m in members {
            if !bin.is_empty() && bin_bytes + m.len > options.target_bytes {
                bins.push(std::mem::take(&mut bin));
                bin_bytes = 0;
            }
            bin_bytes += m.len;
            bin.push(m);
        }
        bins.push(bin);
        for b in bins.into_iter().filter(|b| b.len() >= 2) {
            plan.push((key.clone(), b));
        }
    }
    let writer = packer::new_writer_token();
    let mut touched_groups: HashSet<(String, i32, u32)> = HashSet::new();
    // Dry run: the packs that would be merged and the sizes of the new ones.
    let mut merged_paths: HashSet<String> = HashSet::new();
    let mut new_sizes: Vec<u64> = Vec::new();
    for (part, (key, bin)) in plan.into_iter().enumerate() {
        if options.dry_run {
            touched_groups.insert(key.clone());
            report.merged += bin.len() as u64;
            report.written += 1;
            let total: u64 = bin.iter().map(|p| p.len).sum();
            report.bytes_copied += total;
            merged_paths.extend(bin.iter().map(|p| p.path.clone()));
            new_sizes.push(total);
            continue;
        }
        let now = chrono::Utc::now().naive_utc();
        let name = MonthPackName {
            topic: key.0.clone(),
            year: key.1,
            month: key.2,
            part: part as u32,
            origin: PackOrigin {
                created: now.with_nanosecond(0).unwrap_or(now),
                writer: writer.clone(),
            },
        };
        if let Some(merged) = merge(packs, index, &name, &bin, &mut report, progress)? {
            touched_groups.insert(key);
            if report.new_packs.len() < 100 {
                report.new_packs.push(merged);
            }
        }
    }
    report.groups = touched_groups.len() as u64;
    report.after = if options.dry_run {
        let mut kept: Vec<u64> = listed
            .iter()
            .filter(|p| is_pack(&p.path) && !merged_paths.contains(&p.path))
            .map(|p| p.len)
            .collect();
        kept.extend(new_sizes);
        PackSizes::of(&kept)
    } else {
        pack_sizes(packs)?
    };
    Ok(report)
}

/// Merges the packs `bin` into the new pack `name`; returns its path, or `None` when fewer
/// than two of them could be taken.
fn merge(
    packs: &dyn PackStore,
    index: &Index,
    name: &MonthPackName,
    bin: &[PackEntry],
    report: &mut CompactReport,
    progress: &mut dyn Write,
) -> Result<Option<String>> {
    let pack = name.path();
    let file = name.file_name();
    let part = format!("{COMPACT_FOLDER}/{file}{PART_SUFFIX}");
    let journal_path = format!("{COMPACT_FOLDER}/{file}{JOURNAL_SUFFIX}");
    let journal_tmp = format!("{COMPACT_FOLDER}/{file}{JOURNAL_TMP_SUFFIX}");
    let mut w = packs
        .create(&part)
        .with_context(|| format!("creating {part}"))?;
    let mut sources = Vec::with_capacity(bin.len());
    // Each pack is claimed before it is read and held until it is deleted: a crawl that
    // would append to it ([`PackStore::append`]) finds it busy and starts a new part.
    let mut claims: Vec<Box<dyn packer::PackWriter>> = Vec::with_capacity(bin.len());
    for p in bin {
        let len = match packs.append(&p.path) {
            Ok(claim) => {
                let len = claim.position();
                claims.push(claim);
                len
            }
            Err(packer::Error::AppendUnsupported { .. }) => p.len,
            Err(packer::Error::Busy { .. }) => {
                tracing::info!(pack = %p.path, "a pack is being written; left out of the compaction");
                report.skipped_running += 1;
                continue;
            }
            Err(e) => {
                tracing::warn!(pack = %p.path, error = %e, "cannot claim a pack; left out of the compaction");
                report.skipped_unreadable += 1;
                continue;
            }
        };
        let bytes = match packs.read_range(&p.path, 0, len) {
            Ok(b) => b,
            Err(e) => {
                tracing::warn!(pack = %p.path, error = %e, "cannot read a pack; left out of the compaction");
                report.skipped_unreadable += 1;
                continue;
            }
        };
        if !reads_whole(&p.path, &bytes) {
            tracing::warn!(pack = %p.path, "a pack does not read whole; left out of the compaction (see harvest fsck)");
            report.skipped_damaged += 1;
            continue;
        }
        let base = w
            .append(&bytes)
            .with_context(|| format!("writing {part}"))?;
        sources.push(Source {
            path: p.path.clone(),
            base,
            length: len,
        });
    }
    if sources.len() < 2 {
        w.close().with_context(|| format!("closing {part}"))?;
        delete_if_there(packs, &part)?;
        release(claims);
        return Ok(None);
    }
    w.close().with_context(|| format!("closing {part}"))?;
    crash_point("written");
    let journal = Journal {
        version: JOURNAL_VERSION,
        pack: pack.clone(),
        part,
        sources,
    };
    put_file(
        packs,
        &journal_path,
        &journal_tmp,
        &serde_json::to_vec_pretty(&journal)?,
    )?;
    crash_point("journaled");
    let finished = finish(packs, index, &journal_path, &journal, &mut report.rows);
    release(claims);
    finished?;
    report.merged += journal.sources.len() as u64;
    report.written += 1;
    report.bytes_copied += journal.sources.iter().map(|s| s.length).sum::<u64>();
    let _ = writeln!(
        progress,
        "compacted {} packs ({:.1} MB) into {pack}",
        journal.sources.len(),
        journal.sources.iter().map(|s| s.length).sum::<u64>() as f64 / 1e6
    );
    Ok(Some(pack))
}

/// Lets go of the claims on merged packs (deleted by now, or left as they were).
fn release(claims: Vec<Box<dyn packer::PackWriter>>) {
    for claim in claims {
        // A deleted pack's close may fail (HDFS: no file to complete): nothing was written.
        let _ = claim.close();
    }
}

/// `YYYY-MM` as (year, month).
pub fn parse_month(text: &str) -> Result<(i32, u32)> {
    let parsed = text.split_once('-').and_then(|(y, m)| {
        let (y, m) = (y.parse::<i32>().ok()?, m.parse::<u32>().ok()?);
        (text.len() == 7 && (1..=12).contains(&m)).then_some((y, m))
    });
    parsed.with_context(|| format!("--month {text:?}: expected YYYY-MM, e.g. 2024-05"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_give_median_p10_and_large_share() {
        let mut sizes: Vec<u64> = (1..=10).map(|i| i * 1000).collect();
        sizes.push(LARGE_PACK_BYTES);
        let s = PackSizes::of(&sizes);
        assert_eq!(s.packs, 11);
        assert_eq!(s.median_bytes, 6000);
        assert_eq!(s.p10_bytes, 2000);
        let total = 55_000 + LARGE_PACK_BYTES;
        assert!((s.large_share - LARGE_PACK_BYTES as f64 / total as f64).abs() < 1e-12);
        assert_eq!(PackSizes::of(&[]).median_bytes, 0);
    }

    #[test]
    fn months_parse_strictly() {
        assert_eq!(parse_month("2024-05").unwrap(), (2024, 5));
        for bad in ["2024-5", "2024-13", "24-05", "2024/05", ""] {
            assert!(parse_month(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn only_packs_count() {
        assert!(is_pack("news/2024/05/01/x.warc.gz"));
        assert!(!is_pack("_compact/x.warc.gz.part"));
        assert!(!is_pack("_text/s/2024-05/1.split"));
        assert!(!is_pack("news/2024/05/01/x.warc.gz.damaged"));
        assert!(!is_pack("news/2024/05/01/x.warc.gz.torn-20240501"));
    }
}
