//! The [`Packer`]: one open pack per (topic, day, cluster), rollover when a pack is full,
//! the least recently written pack closed when too many are open, syncs before indexing.

use std::collections::HashMap;
use std::sync::Arc;

use shapes::PackLocation;

use crate::error::{Error, Result};
use crate::store::PackStore;
use crate::warc::{self, EncodedRecord, WarcRecord};

use super::name::new_writer_token;
use super::opener::{FamilyKey, OpenPack, Opener};
use super::options::{AppendNote, PackKey, PackerOptions, PackerStats};
use super::parallel::{map_side_by_side, side_by_side, SYNC_THREADS};

/// Families whose last part a `Packer` remembers before it forgets the closed ones (their next
/// part is then found by listing the store, as after a restart).
const MAX_REMEMBERED_FAMILIES: usize = 1 << 16;

/// Writes records into packs: layout, lazy opening, rollover and syncing.
///
/// # Durability
/// [`Packer::write`] returns a [`PackLocation`] as soon as the bytes are handed to the store; they
/// are durable only after [`Packer::sync_all`] (or [`Packer::close_all`]) returns `Ok`.
/// **Callers must index a location only after the following `sync_all` succeeded.** A pack
/// closed by rollover is synced as part of its close.
///
/// # Open packs
/// At most [`PackerOptions::max_open_packs`] packs are open. Before opening one more, the
/// pack written least recently is closed ([`PackWriter::close`]: synced and closed, as by
/// [`Packer::close_all`]), so its records are durable and, on HDFS, readable by other
/// processes. The next record of its family goes to a new part (never appended to a closed
/// pack). If that close fails with unsynced records, the next `sync_all` reports
/// [`Error::UnsyncedLoss`], as for a rollover.
///
/// # Restarts
/// The first write for a family in a process lists the parts already in the store and starts
/// a new part after the highest one, so it never appends after a tail torn by a crash.
///
/// # Names
/// Every pack it creates carries its writer token ([`Packer::writer`], drawn in
/// [`Packer::new`]) and its creation time: see [`PackName`](super::PackName).
pub struct Packer {
    store: Arc<dyn PackStore>,
    options: PackerOptions,
    /// This packer's writer token, part of every pack name it makes.
    writer: String,
    pub(super) open: HashMap<FamilyKey, OpenPack>,
    /// Highest part used per family in this process (open or closed); closed families are
    /// forgotten past `remembered_limit` entries.
    pub(super) last_part: HashMap<FamilyKey, u32>,
    pub(super) remembered_limit: usize,
    /// Counts writes: the time of [`OpenPack::last_used`].
    clock: u64,
    stats: PackerStats,
    /// A writer failed with unsynced records; reported by the next `sync_all`.
    lost: Option<Error>,
    /// Told before a pack of an earlier writer is appended to.
    append_note: Option<AppendNote>,
}

impl std::fmt::Debug for Packer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Packer")
            .field("options", &self.options)
            .field("open_packs", &self.open.len())
            .field("stats", &self.stats)
            .finish_non_exhaustive()
    }
}

impl Packer {
    /// A packer writing into `store`.
    pub fn new(store: Arc<dyn PackStore>, options: PackerOptions) -> Self {
        Self {
            store,
            options,
            writer: new_writer_token(),
            open: HashMap::new(),
            last_part: HashMap::new(),
            remembered_limit: MAX_REMEMBERED_FAMILIES,
            clock: 0,
            stats: PackerStats::default(),
            lost: None,
            append_note: None,
        }
    }

    /// Sets what is told before this packer appends to a pack it did not create
    /// ([`AppendNote`]).
    pub fn set_append_note(&mut self, note: AppendNote) {
        self.append_note = Some(note);
    }

    /// The store the packs live in.
    pub fn store(&self) -> &Arc<dyn PackStore> {
        &self.store
    }

    /// The writer token in the names of the packs this packer creates.
    pub fn writer(&self) -> &str {
        &self.writer
    }

    /// Counters since this packer was made.
    pub fn stats(&self) -> PackerStats {
        self.stats
    }

    /// Paths of the packs currently open for writing, sorted.
    pub fn open_paths(&self) -> Vec<String> {
        let mut paths: Vec<_> = self.open.values().map(|p| p.path.clone()).collect();
        paths.sort();
        paths
    }

    /// Appends `record` to the current pack of `key` (opening or rolling over as needed) and
    /// returns where it is. Not durable until [`Packer::sync_all`]. The record names the pack's
    /// warcinfo record in its `WARC-Warcinfo-ID`.
    pub fn write(&mut self, key: &PackKey, record: &EncodedRecord) -> Result<PackLocation> {
        let mut locations = self.write_all(key, &[record])?;
        match locations.pop() {
            Some(loc) => Ok(loc),
            None => unreachable!("one location per record"),
        }
    }

    /// Appends `records` one after the other to one pack of `key` (a response and its
    /// request record): a rollover happens before the first of them, never between them.
    /// Returns their locations in order.
    pub fn write_all(
        &mut self,
        key: &PackKey,
        records: &[&EncodedRecord],
    ) -> Result<Vec<PackLocation>> {
        let family = FamilyKey::new(key);
        let full = self.open.get(&family).is_some_and(|p| {
            let len: u64 = records
                .iter()
                .map(|r| r.member_len(Some(&p.warcinfo_id)))
                .sum();
            p.records > 0 && p.writer.position().saturating_add(len) > self.options.max_pack_bytes
        });
        if full {
            if let Some(pack) = self.open.remove(&family) {
                tracing::debug!(path = %pack.path, bytes = pack.writer.position(), records = pack.records, "pack full, rolling over");
                self.stats.rolled_over += 1;
                self.close_pack(pack)?;
            }
        }
        if !self.open.contains_key(&family) {
            self.make_room()?;
            let pack = self.open_next(key, &family)?;
            self.count_open(&pack);
            self.open.insert(family.clone(), pack);
            self.stats.peak_open = self.stats.peak_open.max(self.open.len());
        }
        self.clock += 1;
        let Some(pack) = self.open.get_mut(&family) else {
            unreachable!("pack inserted above");
        };
        pack.last_used = self.clock;
        let mut locations = Vec::with_capacity(records.len());
        for record in records {
            let member = record.member(Some(&pack.warcinfo_id));
            match pack.writer.append(&member) {
                Ok(offset) => {
                    pack.records += 1;
                    pack.dirty = true;
                    locations.push(PackLocation {
                        path: pack.path.clone(),
                        offset,
                        length: member.len() as u64,
                    });
                }
                Err(e) => {
                    if let Some(pack) = self.open.remove(&family) {
                        self.abandon(pack, &e);
                    }
                    return Err(e);
                }
            }
        }
        Ok(locations)
    }

    /// Reads the record stored at `loc`.
    pub fn read(&self, loc: &PackLocation) -> Result<WarcRecord> {
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
        let dirty: Vec<&mut OpenPack> = self.open.values_mut().filter(|p| p.dirty).collect();
        let synced = dirty.len();
        // Each sync waits on the disk (fsync) or on a DataNode pipeline and the NameNode
        // (hsync): the packs of a batch are synced side by side, not one after another. A
        // pack whose sync fails stays dirty (the next call syncs it again).
        let result = side_by_side(dirty, |pack| {
            pack.writer.sync()?;
            pack.dirty = false;
            Ok(())
        });
        let threads = synced.clamp(1, SYNC_THREADS);
        tracing::debug!(packs = synced, threads, "synced packs");
        result
    }

    /// Syncs and closes every open pack. Returns the first error (after trying all).
    pub fn close_all(&mut self) -> Result<()> {
        let mut first_err = self.lost.take();
        let mut packs: Vec<_> = self.open.drain().map(|(_, p)| p).collect();
        packs.sort_by(|a, b| a.path.cmp(&b.path));
        // A close waits on the disk, or on HDFS to complete the file: side by side, as syncs.
        let closed = side_by_side(packs, |pack| {
            let path = pack.path;
            pack.writer.close().inspect_err(|e| {
                tracing::warn!(path = %path, error = %e, "closing pack failed");
            })
        });
        if let Err(e) = closed {
            first_err.get_or_insert(e);
        }
        match first_err {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Closes packs, least recently written first, until one more may be opened.
    fn make_room(&mut self) -> Result<()> {
        let cap = self.options.max_open_packs.max(1);
        while self.open.len() >= cap {
            let Some(oldest) = self
                .open
                .iter()
                .min_by_key(|(_, p)| p.last_used)
                .map(|(family, _)| family.clone())
            else {
                break;
            };
            let Some(pack) = self.open.remove(&oldest) else {
                break;
            };
            tracing::debug!(path = %pack.path, records = pack.records, open = self.open.len() + 1, cap, "closing the least recently used pack");
            self.stats.closed_for_room += 1;
            self.close_pack(pack)?;
        }
        Ok(())
    }

    /// Syncs and closes a pack taken out of `open` (rollover, room). If the close fails with
    /// unsynced records, the next `sync_all` reports them lost.
    fn close_pack(&mut self, pack: OpenPack) -> Result<()> {
        let closed = close_writer(pack);
        self.note_close(closed)
    }

    /// The result of [`close_writer`]: a failed close of a pack with unsynced records is kept
    /// for the next `sync_all` to report.
    fn note_close(&mut self, (unsynced, path, result): (bool, String, Result<()>)) -> Result<()> {
        if let Err(e) = &result {
            if unsynced {
                self.lost.get_or_insert(Error::UnsyncedLoss {
                    path,
                    reason: e.to_string(),
                });
            }
        }
        result
    }

    /// Creates the next part of a family and writes its warcinfo record.
    fn open_next(&mut self, key: &PackKey, family: &FamilyKey) -> Result<OpenPack> {
        let known = self.last_part.get(family).copied();
        let pack = self.opener().open(key, family, known)?;
        self.remember_part(family, pack.part);
        Ok(pack)
    }

    /// What opening a pack needs of this packer (shareable across threads).
    fn opener(&self) -> Opener<'_> {
        Opener {
            store: &self.store,
            options: &self.options,
            writer: &self.writer,
            clock: self.clock,
            append_note: self.append_note.as_ref(),
        }
    }

    /// Opens the packs that the records of a batch about to be written under `keys` will
    /// need and that are not open yet, side by side (on HDFS each is a listing, a create and
    /// a block allocation at the NameNode). To make room under
    /// [`PackerOptions::max_open_packs`] the packs written least recently that the batch does
    /// not write to are closed first, also side by side (on HDFS each close waits for the
    /// NameNode to complete the file). [`Packer::write`] would close and open them one by
    /// one as the batch's records came; what it finds open it uses. Returns the first error
    /// (the packs opened without one stay open; a pack whose close failed with unsynced
    /// records is reported by the next [`Packer::sync_all`], as for any close).
    pub fn open_ahead(&mut self, keys: &[PackKey]) -> Result<()> {
        let cap = self.options.max_open_packs.max(1);
        let mut wanted: Vec<FamilyKey> = Vec::new();
        let mut todo: Vec<(FamilyKey, &PackKey, Option<u32>)> = Vec::new();
        for key in keys {
            let family = FamilyKey::new(key);
            if wanted.contains(&family) {
                continue;
            }
            wanted.push(family.clone());
            if !self.open.contains_key(&family) {
                let known = self.last_part.get(&family).copied();
                todo.push((family, key, known));
            }
        }
        // At most as many new packs as the cap leaves room for beside the batch's open ones.
        let batch_open = wanted.len() - todo.len();
        todo.truncate(cap.saturating_sub(batch_open));
        if todo.len() < 2 {
            return Ok(());
        }
        let mut first_err = None;
        let excess = (self.open.len() + todo.len()).saturating_sub(cap);
        if excess > 0 {
            let mut idle: Vec<(u64, FamilyKey)> = self
                .open
                .iter()
                .filter(|(f, _)| !wanted.contains(f))
                .map(|(f, p)| (p.last_used, f.clone()))
                .collect();
            idle.sort_by_key(|(last_used, _)| *last_used);
            let closing: Vec<OpenPack> = idle
                .into_iter()
                .take(excess)
                .filter_map(|(_, f)| self.open.remove(&f))
                .collect();
            self.stats.closed_for_room += closing.len() as u64;
            tracing::debug!(
                packs = closing.len(),
                cap,
                "closing the least recently used packs for a batch's new ones"
            );
            for closed in map_side_by_side(closing, close_writer) {
                if let Err(e) = self.note_close(closed) {
                    first_err.get_or_insert(e);
                }
            }
        }
        todo.truncate(cap.saturating_sub(self.open.len()));
        let opener = self.opener();
        let opened = map_side_by_side(todo, |(family, key, known)| {
            let pack = opener.open(key, &family, known);
            (family, pack)
        });
        for (family, pack) in opened {
            match pack {
                Ok(pack) => {
                    self.remember_part(&family, pack.part);
                    self.count_open(&pack);
                    self.open.insert(family, pack);
                }
                Err(e) => {
                    first_err.get_or_insert(e);
                }
            }
        }
        self.stats.peak_open = self.stats.peak_open.max(self.open.len());
        first_err.map_or(Ok(()), Err)
    }

    /// Counts a pack opened: created, or appended to.
    fn count_open(&mut self, pack: &OpenPack) {
        if pack.appended {
            self.stats.appended += 1;
        } else {
            self.stats.opened += 1;
        }
    }

    /// Records the highest part of a family. Past `remembered_limit` families, the closed ones
    /// are forgotten: their next part is then looked up in the store, where their packs are.
    fn remember_part(&mut self, family: &FamilyKey, part: u32) {
        self.last_part.insert(family.clone(), part);
        if self.last_part.len() > self.remembered_limit {
            let open = &self.open;
            self.last_part
                .retain(|f, _| f == family || open.contains_key(f));
            tracing::debug!(
                kept = self.last_part.len(),
                "forgot the last parts of closed pack families"
            );
        }
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

/// Syncs and closes a pack taken out of the open ones: whether it had unsynced records, its
/// path, and how the close went (see [`Packer::note_close`]).
fn close_writer(pack: OpenPack) -> (bool, String, Result<()>) {
    let unsynced = pack.dirty && pack.records > 0;
    (unsynced, pack.path, pack.writer.close())
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
