//! Opening the packs of a [`Packer`](super::Packer): the next part of a family, or the family's
//! last part appended to, found by listing the store. Apart from the packer's bookkeeping because
//! it runs on several threads at once ([`Packer::open_ahead`](super::Packer::open_ahead)).

use std::sync::Arc;

use chrono::{NaiveDate, Timelike, Utc};

use crate::error::{Error, Result};
use crate::store::{PackStore, PackWriter};
use crate::warc::{self, EncodedRecord};

use super::name::{day_dir, pack_path, sanitize_topic, PackName, PackOrigin};
use super::options::{AppendNote, PackKey, PackerOptions};

/// How many part numbers `Packer` tries when another writer keeps winning the race.
const MAX_CREATE_ATTEMPTS: u32 = 16;

/// Bytes at the end of a pack read to check that it ends with a whole record before it is
/// appended to. A last record longer than this is not checked: a new part is started.
const TAIL_CHECK_BYTES: u64 = 4 << 20;

/// Normalised key of the pack family (so topics that sanitise alike share packs).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) struct FamilyKey {
    topic: String,
    date: NaiveDate,
    cluster: u32,
}

impl FamilyKey {
    pub(super) fn new(key: &PackKey) -> Self {
        Self {
            topic: sanitize_topic(&key.topic),
            date: key.date,
            cluster: key.cluster,
        }
    }
}

pub(super) struct OpenPack {
    pub(super) path: String,
    pub(super) part: u32,
    /// `WARC-Record-ID` of the pack's warcinfo record, named by every record after it.
    pub(super) warcinfo_id: String,
    pub(super) writer: Box<dyn PackWriter>,
    /// Records (besides warcinfo) in this pack.
    pub(super) records: u64,
    /// Appended to since the last successful sync.
    pub(super) dirty: bool,
    /// [`Packer::clock`](super::Packer::clock) at the last write: the smallest is closed first for
    /// room.
    pub(super) last_used: u64,
    /// An earlier writer's pack this packer appends to.
    pub(super) appended: bool,
}

/// Opens packs: the part of [`Packer`](super::Packer) that can run on several threads at once.
pub(super) struct Opener<'a> {
    pub(super) store: &'a Arc<dyn PackStore>,
    pub(super) options: &'a PackerOptions,
    pub(super) writer: &'a str,
    pub(super) clock: u64,
    pub(super) append_note: Option<&'a AppendNote>,
}

impl Opener<'_> {
    /// Creates the next part of a family (after `known`, the highest part this process used,
    /// else after the highest in the store) and writes its warcinfo record. With
    /// [`PackerOptions::append_to_existing`], the highest part in the store is appended to
    /// instead where it can be ([`Opener::append`]).
    pub(super) fn open(
        &self,
        key: &PackKey,
        family: &FamilyKey,
        known: Option<u32>,
    ) -> Result<OpenPack> {
        let mut part = match known {
            Some(last) => last.saturating_add(1),
            None => {
                let highest = self.highest_part_in_store(family)?;
                if let Some(found) = &highest {
                    match self.append(found)? {
                        Appended::Open(pack) => return Ok(pack),
                        // Another writer holds it: it is not fenced.
                        Appended::Busy => {}
                        Appended::No => self.recover(&found.path),
                    }
                }
                highest.map_or(0, |h| h.part.saturating_add(1))
            }
        };
        let origin = PackOrigin {
            created: Utc::now()
                .naive_utc()
                .with_nanosecond(0)
                .unwrap_or_default(),
            writer: self.writer.to_owned(),
        };
        let mut path = String::new();
        for _ in 0..MAX_CREATE_ATTEMPTS {
            path = pack_path(&key.topic, key.date, key.cluster, part, origin.clone());
            match self.store.create(&path) {
                Ok(mut writer) => {
                    let info = self.warcinfo(&path);
                    if let Err(e) = writer.append(&info.member(None)) {
                        // Nothing of value in it yet; close quietly and report.
                        let _ = writer.close();
                        return Err(e);
                    }
                    tracing::debug!(path = %path, part, "opened pack");
                    return Ok(OpenPack {
                        path,
                        part,
                        warcinfo_id: info.record_id,
                        writer,
                        records: 0,
                        dirty: true,
                        last_used: self.clock,
                        appended: false,
                    });
                }
                Err(Error::AlreadyExists { .. }) => {
                    part = part.saturating_add(1);
                }
                Err(e) => return Err(e),
            }
        }
        Err(Error::AlreadyExists { path })
    }

    /// This packer's warcinfo record for the pack at `path`.
    fn warcinfo(&self, path: &str) -> EncodedRecord {
        let file_name = path.rsplit('/').next().unwrap_or(path);
        let fields: Vec<(&str, &str)> = self
            .options
            .warcinfo_fields
            .iter()
            .map(|(n, v)| (n.as_str(), v.as_str()))
            .collect();
        warc::encode_warcinfo(file_name, &fields)
    }

    /// Opens `found`, the highest part of a family in the store, for appending, if it is
    /// named the current way, smaller than [`PackerOptions::max_pack_bytes`], ends with a
    /// whole record (a crash may have torn its tail) and the store lets this packer own it
    /// ([`PackStore::append`]: not another writer's open pack, not claimed by a compaction).
    /// The [`AppendNote`] is told, then this packer's warcinfo record is appended. Otherwise
    /// a new part is started.
    fn append(&self, found: &HighestPart) -> Result<Appended> {
        let path = &found.path;
        if !self.options.append_to_existing
            || !found.current_name
            || found.len == 0
            || found.len >= self.options.max_pack_bytes
        {
            return Ok(Appended::No);
        }
        let mut writer = match self.store.append(path) {
            Ok(w) => w,
            Err(Error::Busy { .. }) => {
                tracing::debug!(path = %path, "the last part is held by another writer");
                return Ok(Appended::Busy);
            }
            Err(e) => {
                tracing::debug!(path = %path, error = %e, "not appending to the last part");
                return Ok(Appended::No);
            }
        };
        let len = writer.position();
        let window = len.min(TAIL_CHECK_BYTES);
        let whole = self
            .store
            .read_range(path, len - window, window)
            .map(|tail| warc::ends_with_whole_record(&tail));
        match whole {
            Ok(true) => {}
            Ok(false) => {
                tracing::info!(path = %path, bytes = len, "the last part does not end with a whole record; starting a new part");
                let _ = writer.close();
                return Ok(Appended::No);
            }
            Err(e) => {
                tracing::debug!(path = %path, error = %e, "cannot check the tail of the last part");
                let _ = writer.close();
                return Ok(Appended::No);
            }
        }
        if let Some(note) = self.append_note {
            if let Err(e) = note(path, len) {
                let _ = writer.close();
                return Err(e);
            }
        }
        let info = self.warcinfo(path);
        if let Err(e) = writer.append(&info.member(None)) {
            let _ = writer.close();
            return Err(e);
        }
        tracing::debug!(path = %path, from = len, "appending to the last part");
        Ok(Appended::Open(OpenPack {
            path: path.clone(),
            part: found.part,
            warcinfo_id: info.record_id,
            writer,
            records: 0,
            dirty: true,
            last_used: self.clock,
            appended: true,
        }))
    }

    /// The highest part of this family already in the store, named either way. It may have
    /// been left open by a writer that died: its lease is recovered
    /// ([`PackStore::recover_lease`]) so its synced records become readable; a failed
    /// recovery is logged, not fatal (a new part does not need it; the part is then not
    /// appended to).
    fn highest_part_in_store(&self, family: &FamilyKey) -> Result<Option<HighestPart>> {
        let dir = day_dir(&family.topic, family.date);
        let mut highest: Option<HighestPart> = None;
        for entry in self.store.list(&format!("{dir}/"))? {
            let Some(name) = PackName::parse(&entry.path) else {
                continue;
            };
            if name.topic != family.topic
                || name.date != family.date
                || name.cluster != family.cluster
                || name.path() != entry.path
            {
                continue;
            }
            if highest.as_ref().is_none_or(|h| name.part >= h.part) {
                highest = Some(HighestPart {
                    part: name.part,
                    path: entry.path,
                    len: entry.len,
                    current_name: name.origin.is_some(),
                });
            }
        }
        Ok(highest)
    }

    /// Recovers the lease of `path`, the highest part of a family, which a writer that died
    /// may have left open ([`PackStore::recover_lease`]), so its synced records become
    /// readable; a failed recovery is logged, not fatal (a new part does not need it).
    fn recover(&self, path: &str) {
        match self.store.recover_lease(path) {
            Ok(true) => {}
            Ok(false) => {
                tracing::info!(path = %path, "recovered the lease of a pack left open by an earlier writer")
            }
            Err(e) => {
                tracing::warn!(path = %path, error = %e, "could not recover the lease of the previous part")
            }
        }
    }
}

/// What [`Opener::append`] made of a family's highest part.
enum Appended {
    /// Open for appending.
    Open(OpenPack),
    /// Held by another writer (left alone: not fenced by a lease recovery).
    Busy,
    /// Not appended to (off, full, old name, torn tail, a store that cannot append).
    No,
}

/// The highest part of a family found in the store.
struct HighestPart {
    part: u32,
    path: String,
    /// Its length when listed.
    len: u64,
    /// Named with its creation time and writer (not the old `c{cluster}-{part}` way).
    current_name: bool,
}
