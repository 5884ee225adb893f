//! Pack layout (`{topic}/{yyyy}/{mm}/{dd}/c{cluster}-{part}.warc.gz`) and the `Packer`, which
//! keeps one open pack per (topic, day, cluster), rolls over to a new part when a pack is
//! full, and never appends to a pack written by an earlier process.

use std::collections::HashMap;
use std::sync::Arc;

use chrono::{Datelike, NaiveDate};

use crate::error::{Error, Result};
use crate::store::{PackStore, PackWriter};
use crate::warc::{self, EncodedRecord, WarcRecord};

/// File name extension of packs.
pub const PACK_EXTENSION: &str = ".warc.gz";
/// Default [`PackerOptions::max_pack_bytes`]: 1 GiB.
pub const DEFAULT_MAX_PACK_BYTES: u64 = 1 << 30;
/// Longest topic segment (in characters) after sanitising.
const MAX_TOPIC_CHARS: usize = 100;
/// Segment used for a topic that sanitises to nothing.
const EMPTY_TOPIC: &str = "_";
/// How many part numbers `Packer` tries when another writer keeps winning the race.
const MAX_CREATE_ATTEMPTS: u32 = 16;

/// Settings of a [`Packer`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackerOptions {
    /// A pack is closed and the next part started when appending a record would make it
    /// larger than this (a pack always takes at least one record). Default: 1 GiB.
    pub max_pack_bytes: u64,
    /// Extra `name: value` fields for the warcinfo record at the start of every pack
    /// (after `software`, `format` and `conformsTo`). Default: none.
    pub warcinfo_fields: Vec<(String, String)>,
}

impl Default for PackerOptions {
    fn default() -> Self {
        Self {
            max_pack_bytes: DEFAULT_MAX_PACK_BYTES,
            warcinfo_fields: Vec::new(),
        }
    }
}

/// Which pack family a record goes to.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PackKey {
    /// Topic label (sanitised into a path segment by [`sanitize_topic`]).
    pub topic: String,
    /// Day of the page.
    pub date: NaiveDate,
    /// Cluster number within (topic, day).
    pub cluster: u32,
}

/// Where a record was stored: enough to read it back alone.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Location {
    /// Store-relative pack path.
    pub path: String,
    /// Offset of the record's gzip member in the pack.
    pub offset: u64,
    /// Length of the gzip member.
    pub length: u64,
}

/// Turns a topic label into one safe path segment: letters and digits (any script), `-` and
/// `_` are kept, everything else becomes `_`; at most 100 characters; never empty.
pub fn sanitize_topic(topic: &str) -> String {
    let cleaned: String = topic
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .take(MAX_TOPIC_CHARS)
        .collect();
    if cleaned.is_empty() {
        EMPTY_TOPIC.to_string()
    } else {
        cleaned
    }
}

/// Folder of all parts of (topic, date): `{topic}/{yyyy}/{mm}/{dd}`.
fn day_dir(topic: &str, date: NaiveDate) -> String {
    format!(
        "{}/{:04}/{:02}/{:02}",
        sanitize_topic(topic),
        date.year(),
        date.month(),
        date.day()
    )
}

/// Path of one pack: `{topic}/{yyyy}/{mm}/{dd}/c{cluster}-{part}.warc.gz`.
pub fn pack_path(topic: &str, date: NaiveDate, cluster: u32, part: u32) -> String {
    format!("{}/c{cluster}-{part}{PACK_EXTENSION}", day_dir(topic, date))
}

/// Parses the part number out of a pack file name `c{cluster}-{part}.warc.gz`.
fn parse_part(file_name: &str, cluster: u32) -> Option<u32> {
    let rest = file_name.strip_prefix(&format!("c{cluster}-"))?;
    let digits = rest.strip_suffix(PACK_EXTENSION)?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// The cluster of a pack from its path (the `c{cluster}-` of the file name).
pub fn pack_cluster(path: &str) -> Option<u32> {
    let name = path.rsplit('/').next()?;
    let rest = name.strip_prefix('c')?;
    let digits: &str = rest.split('-').next()?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// Normalised key of the pack family (so topics that sanitise alike share packs).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct FamilyKey {
    topic: String,
    date: NaiveDate,
    cluster: u32,
}

impl FamilyKey {
    fn new(key: &PackKey) -> Self {
        Self {
            topic: sanitize_topic(&key.topic),
            date: key.date,
            cluster: key.cluster,
        }
    }
}

struct OpenPack {
    path: String,
    part: u32,
    writer: Box<dyn PackWriter>,
    /// Records (besides warcinfo) in this pack.
    records: u64,
    /// Appended to since the last successful sync.
    dirty: bool,
}

/// Writes records into packs: layout, lazy opening, rollover and syncing.
///
/// # Durability
/// [`Packer::write`] returns a [`Location`] as soon as the bytes are handed to the store; they
/// are durable only after [`Packer::sync_all`] (or [`Packer::close_all`]) returns `Ok`.
/// **Callers must index a location only after the following `sync_all` succeeded.** A pack
/// closed by rollover is synced as part of its close.
///
/// # Restarts
/// The first write for a family in a process lists the parts already in the store and starts
/// a new part after the highest one, so it never appends after a tail torn by a crash.
pub struct Packer {
    store: Arc<dyn PackStore>,
    options: PackerOptions,
    open: HashMap<FamilyKey, OpenPack>,
    /// Highest part used per family in this process (open or closed).
    last_part: HashMap<FamilyKey, u32>,
    /// A writer failed with unsynced records; reported by the next `sync_all`.
    lost: Option<Error>,
}

impl std::fmt::Debug for Packer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Packer")
            .field("options", &self.options)
            .field("open_packs", &self.open.len())
            .finish_non_exhaustive()
    }
}

impl Packer {
    /// A packer writing into `store`.
    pub fn new(store: Arc<dyn PackStore>, options: PackerOptions) -> Self {
        Self {
            store,
            options,
            open: HashMap::new(),
            last_part: HashMap::new(),
            lost: None,
        }
    }

    /// The store the packs live in.
    pub fn store(&self) -> &Arc<dyn PackStore> {
        &self.store
    }

    /// Paths of the packs currently open for writing, sorted.
    pub fn open_paths(&self) -> Vec<String> {
        let mut paths: Vec<_> = self.open.values().map(|p| p.path.clone()).collect();
        paths.sort();
        paths
    }

    /// Appends `record` to the current pack of `key` (opening or rolling over as needed) and
    /// returns where it is. Not durable until [`Packer::sync_all`].
    pub fn write(&mut self, key: &PackKey, record: &EncodedRecord) -> Result<Location> {
        let family = FamilyKey::new(key);
        let len = record.bytes.len() as u64;
        let full = self.open.get(&family).is_some_and(|p| {
            p.records > 0 && p.writer.position().saturating_add(len) > self.options.max_pack_bytes
        });
        if full {
            if let Some(pack) = self.open.remove(&family) {
                tracing::debug!(path = %pack.path, bytes = pack.writer.position(), records = pack.records, "pack full, rolling over");
                let unsynced = pack.dirty && pack.records > 0;
                let path = pack.path;
                if let Err(e) = pack.writer.close() {
                    if unsynced {
                        self.lost.get_or_insert(Error::UnsyncedLoss {
                            path,
                            reason: e.to_string(),
                        });
                    }
                    return Err(e);
                }
            }
        }
        if !self.open.contains_key(&family) {
            let pack = self.open_next(key, &family)?;
            self.open.insert(family.clone(), pack);
        }
        let Some(pack) = self.open.get_mut(&family) else {
            unreachable!("pack inserted above");
        };
        match pack.writer.append(&record.bytes) {
            Ok(offset) => {
                pack.records += 1;
                pack.dirty = true;
                Ok(Location {
                    path: pack.path.clone(),
                    offset,
                    length: len,
                })
            }
            Err(e) => {
                if let Some(pack) = self.open.remove(&family) {
                    self.abandon(pack, &e);
                }
                Err(e)
            }
        }
    }

    /// Reads the record stored at `loc`.
    pub fn read(&self, loc: &Location) -> Result<WarcRecord> {
        let bytes = self.store.read_range(&loc.path, loc.offset, loc.length)?;
        warc::read_record(&bytes).map_err(|e| match e {
            Error::CorruptRecord { reason, .. } => Error::CorruptRecord {
                offset: loc.offset,
                reason: format!("{}: {reason}", loc.path),
            },
            other => other,
        })
    }

    /// Syncs every pack written to since the last sync. After `Ok`, every location returned
    /// by [`Packer::write`] so far is durable and may be indexed.
    pub fn sync_all(&mut self) -> Result<()> {
        if let Some(e) = self.lost.take() {
            return Err(e);
        }
        let mut synced = 0u32;
        for pack in self.open.values_mut().filter(|p| p.dirty) {
            pack.writer.sync()?;
            pack.dirty = false;
            synced += 1;
        }
        tracing::debug!(packs = synced, "synced packs");
        Ok(())
    }

    /// Syncs and closes every open pack. Returns the first error (after trying all).
    pub fn close_all(&mut self) -> Result<()> {
        let mut first_err = self.lost.take();
        let mut packs: Vec<_> = self.open.drain().map(|(_, p)| p).collect();
        packs.sort_by(|a, b| a.path.cmp(&b.path));
        for pack in packs {
            let path = pack.path;
            if let Err(e) = pack.writer.close() {
                tracing::warn!(path = %path, error = %e, "closing pack failed");
                first_err.get_or_insert(e);
            }
        }
        match first_err {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Creates the next part of a family and writes its warcinfo record.
    fn open_next(&mut self, key: &PackKey, family: &FamilyKey) -> Result<OpenPack> {
        let mut part = match self.last_part.get(family) {
            Some(last) => last.saturating_add(1),
            None => self.next_part_in_store(key)?,
        };
        for _ in 0..MAX_CREATE_ATTEMPTS {
            let path = pack_path(&key.topic, key.date, key.cluster, part);
            match self.store.create(&path) {
                Ok(mut writer) => {
                    self.last_part.insert(family.clone(), part);
                    let file_name = path.rsplit('/').next().unwrap_or(&path);
                    let fields: Vec<(&str, &str)> = self
                        .options
                        .warcinfo_fields
                        .iter()
                        .map(|(n, v)| (n.as_str(), v.as_str()))
                        .collect();
                    let info = warc::encode_warcinfo(file_name, &fields);
                    if let Err(e) = writer.append(&info.bytes) {
                        // Nothing of value in it yet; close quietly and report.
                        let _ = writer.close();
                        return Err(e);
                    }
                    tracing::debug!(path = %path, part, "opened pack");
                    return Ok(OpenPack {
                        path,
                        part,
                        writer,
                        records: 0,
                        dirty: true,
                    });
                }
                Err(Error::AlreadyExists { .. }) => {
                    part = part.saturating_add(1);
                }
                Err(e) => return Err(e),
            }
        }
        Err(Error::AlreadyExists {
            path: pack_path(&key.topic, key.date, key.cluster, part),
        })
    }

    /// One more than the highest part of this family already in the store (0 if none).
    /// The highest part may have been left open by a writer that died: its lease is
    /// recovered ([`PackStore::recover_lease`]) so its synced records become readable; a
    /// failed recovery is logged, not fatal (the new part does not need it).
    fn next_part_in_store(&self, key: &PackKey) -> Result<u32> {
        let dir = day_dir(&key.topic, key.date);
        let prefix = format!("{dir}/c{}-", key.cluster);
        let highest = self
            .store
            .list(&prefix)?
            .iter()
            .filter_map(|e| {
                let name = e.path.strip_prefix(&dir)?.strip_prefix('/')?;
                parse_part(name, key.cluster)
            })
            .max();
        if let Some(h) = highest {
            let path = pack_path(&key.topic, key.date, key.cluster, h);
            match self.store.recover_lease(&path) {
                Ok(true) => {}
                Ok(false) => {
                    tracing::info!(path = %path, "recovered the lease of a pack left open by an earlier writer")
                }
                Err(e) => {
                    tracing::warn!(path = %path, error = %e, "could not recover the lease of the previous part")
                }
            }
        }
        Ok(highest.map_or(0, |h| h.saturating_add(1)))
    }

    /// Drops a pack whose writer failed, trying to keep what was appended before.
    fn abandon(&mut self, pack: OpenPack, cause: &Error) {
        let path = pack.path.clone();
        let had_unsynced = pack.dirty && pack.records > 0;
        tracing::warn!(path = %path, part = pack.part, error = %cause, "pack writer failed; starting a new part on next write");
        if let Err(close_err) = pack.writer.close() {
            if had_unsynced {
                self.lost.get_or_insert(Error::UnsyncedLoss {
                    path,
                    reason: close_err.to_string(),
                });
            }
        }
    }
}

impl Drop for Packer {
    fn drop(&mut self) {
        if !self.open.is_empty() {
            tracing::warn!(
                open_packs = self.open.len(),
                "Packer dropped without close_all(); unsynced records may be lost"
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::local::LocalPackStore;

    fn date() -> NaiveDate {
        NaiveDate::from_ymd_opt(2024, 5, 1).unwrap()
    }

    #[test]
    fn pack_path_follows_layout() {
        assert_eq!(
            pack_path("military", date(), 3, 0),
            "military/2024/05/01/c3-0.warc.gz"
        );
        assert_eq!(
            pack_path("../etc/passwd", date(), 0, 12),
            "___etc_passwd/2024/05/01/c0-12.warc.gz"
        );
        assert_eq!(pack_path("", date(), 1, 1), "_/2024/05/01/c1-1.warc.gz");
        assert_eq!(
            pack_path("军事", date(), 1, 1),
            "军事/2024/05/01/c1-1.warc.gz"
        );
        assert!(crate::store::validate_path(&pack_path("a/../b", date(), 0, 0)).is_ok());
    }

    #[test]
    fn sanitize_topic_limits_length() {
        assert_eq!(sanitize_topic(&"x".repeat(500)).chars().count(), 100);
        assert_eq!(sanitize_topic("Sports-2_x"), "Sports-2_x");
        assert_eq!(sanitize_topic("a b.c"), "a_b_c");
    }

    #[test]
    fn parse_part_only_matches_own_cluster() {
        assert_eq!(parse_part("c1-0.warc.gz", 1), Some(0));
        assert_eq!(parse_part("c1-17.warc.gz", 1), Some(17));
        assert_eq!(parse_part("c10-3.warc.gz", 1), None);
        assert_eq!(parse_part("c1-.warc.gz", 1), None);
        assert_eq!(parse_part("c1-+3.warc.gz", 1), None);
        assert_eq!(parse_part("c1-3.warc.gz.tmp", 1), None);
    }

    #[test]
    fn topics_that_sanitise_alike_share_a_family() {
        let dir = tempfile::tempdir().unwrap();
        let store: Arc<dyn PackStore> = Arc::new(LocalPackStore::open(dir.path()).unwrap());
        let mut packer = Packer::new(store, PackerOptions::default());
        let rec = warc::encode_warcinfo("x", &[]);
        let a = PackKey {
            topic: "a/b".into(),
            date: date(),
            cluster: 0,
        };
        let b = PackKey {
            topic: "a_b".into(),
            ..a.clone()
        };
        let la = packer.write(&a, &rec).unwrap();
        let lb = packer.write(&b, &rec).unwrap();
        assert_eq!(la.path, lb.path);
        assert_eq!(lb.offset, la.offset + la.length);
        packer.close_all().unwrap();
    }
}
