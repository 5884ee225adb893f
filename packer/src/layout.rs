//! Pack layout and the `Packer`, which keeps one open pack per (topic, day, cluster), rolls
//! over to a new part when a pack is full, closes the least recently used pack when too many
//! are open, and never appends to a pack written by an earlier process or closed earlier.
//!
//! # Pack names
//!
//! `{topic}/{yyyy}/{mm}/{dd}/{topic}-{yyyymmdd}-c{cluster}-{created}-{part}-{writer}.warc.gz`
//! ([`PackName`]), e.g. `news/2024/05/01/news-20240501-c3-20240502101112-00000-k7q2mxa4.warc.gz`:
//!
//! - `{topic}` the sanitised topic ([`sanitize_topic`]) and `{yyyymmdd}` the day: the name
//!   repeats its folder, so two packs in different folders never share a file name;
//! - `c{cluster}` the K-means cluster of the (topic, day);
//! - `{created}` when the pack was created (UTC, `yyyymmddhhmmss`);
//! - `{part}` the part of the family, 5 digits or more: one more than the highest part of the
//!   family already in the store when a `Packer` first writes to it, then one more per rollover
//!   or reopening after the pack was closed for room ([`PackerOptions::max_open_packs`]);
//! - `{writer}` 8 characters (`a-z2-7`, 40 random bits) drawn once per [`Packer`], so two
//!   processes (or two `Packer`s) writing the same family at once make distinct names.
//!
//! Within a folder a name is unique because the store's `create` never overwrites (on
//! `AlreadyExists` the next part is tried); across folders because the name contains its
//! folder. A name never changes once written (no renaming), so a CDXJ `filename` or a replay
//! tool's collection stays valid. Packs written before this scheme are named
//! `{topic}/{yyyy}/{mm}/{dd}/c{cluster}-{part}.warc.gz` ([`legacy_pack_path`]):
//! [`PackName::parse`] reads both, the index keeps each page's pack path as it was written, and
//! a new part follows the highest part of either kind.

use std::collections::HashMap;
use std::sync::Arc;

use chrono::{Datelike, NaiveDate, NaiveDateTime, Timelike, Utc};

use crate::error::{Error, Result};
use crate::store::{PackStore, PackWriter};
use crate::warc::{self, EncodedRecord, WarcRecord};

/// File name extension of packs.
pub const PACK_EXTENSION: &str = ".warc.gz";
/// Default [`PackerOptions::max_pack_bytes`]: 1 GiB.
pub const DEFAULT_MAX_PACK_BYTES: u64 = 1 << 30;
/// Default [`PackerOptions::max_open_packs`].
pub const DEFAULT_MAX_OPEN_PACKS: usize = 64;
/// Families whose last part a `Packer` remembers before it forgets the closed ones (their next
/// part is then found by listing the store, as after a restart).
const MAX_REMEMBERED_FAMILIES: usize = 1 << 16;
/// Longest topic segment (in characters) after sanitising.
const MAX_TOPIC_CHARS: usize = 100;
/// Segment used for a topic that sanitises to nothing.
const EMPTY_TOPIC: &str = "_";
/// How many part numbers `Packer` tries when another writer keeps winning the race.
const MAX_CREATE_ATTEMPTS: u32 = 16;
/// Most threads [`Packer::sync_all`] syncs dirty packs on (and [`Packer::close_all`] closes
/// packs on) at once.
const SYNC_THREADS: usize = 8;
/// Characters of a writer token ([`PackName::writer`]).
pub const WRITER_TOKEN_CHARS: usize = 8;
/// Format of the creation time in a pack name (UTC).
const CREATED_FORMAT: &str = "%Y%m%d%H%M%S";
/// Digits a part number is zero-padded to in a pack name (so names list in part order).
const PART_DIGITS: usize = 5;

/// Settings of a [`Packer`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackerOptions {
    /// A pack is closed and the next part started when appending a record would make it
    /// larger than this (a pack always takes at least one record). Default: 1 GiB.
    pub max_pack_bytes: u64,
    /// At most this many packs are open for writing at once (file handles; leases and write
    /// pipelines on HDFS). Opening one more first closes the least recently written one,
    /// durably, exactly as at the end of a run; a later record of that (topic, day, cluster)
    /// starts its next part. 0 counts as 1. Default: 64.
    pub max_open_packs: usize,
    /// Extra `name: value` fields for the warcinfo record at the start of every pack
    /// (after `software`, `format` and `conformsTo`). Default: none.
    pub warcinfo_fields: Vec<(String, String)>,
    /// The first write of a family in this packer appends to the family's highest part in
    /// the store instead of starting a new one, when that part is smaller than
    /// `max_pack_bytes`, ends with a whole record and the store lets this packer own it
    /// ([`PackStore::append`]); its records follow a warcinfo record of their own. So the
    /// runs of a day fill its packs instead of adding small ones. Default: false.
    pub append_to_existing: bool,
}

impl Default for PackerOptions {
    fn default() -> Self {
        Self {
            max_pack_bytes: DEFAULT_MAX_PACK_BYTES,
            max_open_packs: DEFAULT_MAX_OPEN_PACKS,
            warcinfo_fields: Vec::new(),
            append_to_existing: false,
        }
    }
}

/// Told `(path, offset)` before a [`Packer`] appends the first byte to a pack it did not
/// create: from `offset` on, the pack holds this packer's records. A run records it so that
/// taking up a crashed run reads those records too (its own packs are found by the writer
/// token in their names). An error stops the append (the pack is not written to).
pub type AppendNote = Arc<dyn Fn(&str, u64) -> Result<()> + Send + Sync>;

/// Bytes at the end of a pack read to check that it ends with a whole record before it is
/// appended to. A last record longer than this is not checked: a new part is started.
const TAIL_CHECK_BYTES: u64 = 4 << 20;

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

/// Who wrote a pack named the current way, and when it was created.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PackOrigin {
    /// Creation time (UTC, whole seconds).
    pub created: NaiveDateTime,
    /// The writer token of the [`Packer`] that created it (`a-z2-7`).
    pub writer: String,
}

/// The parts of a pack path (see the module docs for the scheme).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PackName {
    /// Sanitised topic (the first path segment).
    pub topic: String,
    /// Day of the pages.
    pub date: NaiveDate,
    /// Cluster within (topic, day).
    pub cluster: u32,
    /// Part within (topic, day, cluster).
    pub part: u32,
    /// `None` for a pack named the old way (`c{cluster}-{part}.warc.gz`).
    pub origin: Option<PackOrigin>,
}

impl PackName {
    /// Store-relative path: `{topic}/{yyyy}/{mm}/{dd}/{file_name}`.
    pub fn path(&self) -> String {
        format!("{}/{}", day_dir(&self.topic, self.date), self.file_name())
    }

    /// The file name alone: unique across folders for a current name.
    pub fn file_name(&self) -> String {
        let (topic, cluster, part) = (sanitize_topic(&self.topic), self.cluster, self.part);
        match &self.origin {
            Some(o) => format!(
                "{topic}-{}-c{cluster}-{}-{part:0width$}-{}{PACK_EXTENSION}",
                self.date.format("%Y%m%d"),
                o.created.format(CREATED_FORMAT),
                o.writer,
                width = PART_DIGITS
            ),
            None => format!("c{cluster}-{part}{PACK_EXTENSION}"),
        }
    }

    /// Reads a pack path named either way. Only the last five segments are read
    /// (`{topic}/{yyyy}/{mm}/{dd}/{file}`), so a path below a prefix parses too. `None` for
    /// anything else (a `.tmp` file, a torn-pack copy, another cluster's digits...).
    pub fn parse(path: &str) -> Option<PackName> {
        let mut segments = path.rsplit('/');
        let file = segments.next()?;
        let day: u32 = digits(segments.next()?, 2)?;
        let month: u32 = digits(segments.next()?, 2)?;
        let year: i32 = digits(segments.next()?, 4)?;
        let topic = segments.next()?;
        if topic.is_empty() || sanitize_topic(topic) != topic {
            return None;
        }
        let date = NaiveDate::from_ymd_opt(year, month, day)?;
        let stem = file.strip_suffix(PACK_EXTENSION)?;
        let name = |cluster, part, origin| PackName {
            topic: topic.to_string(),
            date,
            cluster,
            part,
            origin,
        };
        if let Some(rest) = stem.strip_prefix(&format!("{topic}-{}-c", date.format("%Y%m%d"))) {
            let (cluster, rest) = rest.split_once('-')?;
            let cluster = digits(cluster, 0)?;
            let (part, origin) = origin_fields(rest)?;
            return Some(name(cluster, part, Some(origin)));
        }
        let (cluster, part) = stem.strip_prefix('c')?.split_once('-')?;
        Some(name(digits(cluster, 0)?, digits(part, 0)?, None))
    }
}

/// The name of a pack made by merging a (topic, month)'s packs (`harvest compact`):
/// `{topic}/{yyyy}/{mm}/{topic}-{yyyymm}-{created}-{part}-{writer}.warc.gz`, in the month's
/// folder beside its day folders. It holds whole packs of that month one after the other
/// (each with its own warcinfo first), so it carries no single day or cluster; a `Packer`
/// never writes to it (its families live in the day folders). [`PackName::parse`] does not
/// read it (the month folder is no day folder); [`MonthPackName::parse`] does.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct MonthPackName {
    /// Sanitised topic (the first path segment).
    pub topic: String,
    /// Year of the month.
    pub year: i32,
    /// Month (1..=12).
    pub month: u32,
    /// Part: distinguishes the packs one writer makes for a month.
    pub part: u32,
    /// Creation time and writer token, as in [`PackOrigin`].
    pub origin: PackOrigin,
}

impl MonthPackName {
    /// Store-relative path: `{topic}/{yyyy}/{mm}/{file_name}`.
    pub fn path(&self) -> String {
        format!(
            "{}/{:04}/{:02}/{}",
            sanitize_topic(&self.topic),
            self.year,
            self.month,
            self.file_name()
        )
    }

    /// The file name alone (unique across folders: it repeats topic and month).
    pub fn file_name(&self) -> String {
        format!(
            "{}-{:04}{:02}-{}-{:0width$}-{}{PACK_EXTENSION}",
            sanitize_topic(&self.topic),
            self.year,
            self.month,
            self.origin.created.format(CREATED_FORMAT),
            self.part,
            self.origin.writer,
            width = PART_DIGITS
        )
    }

    /// Reads a month pack path (only the last four segments are read, so a path below a
    /// prefix parses too). `None` for anything else (day packs included).
    pub fn parse(path: &str) -> Option<MonthPackName> {
        let mut segments = path.rsplit('/');
        let file = segments.next()?;
        let month: u32 = digits(segments.next()?, 2)?;
        let year: i32 = digits(segments.next()?, 4)?;
        let topic = segments.next()?;
        if topic.is_empty() || sanitize_topic(topic) != topic || !(1..=12).contains(&month) {
            return None;
        }
        let stem = file.strip_suffix(PACK_EXTENSION)?;
        let rest = stem.strip_prefix(&format!("{topic}-{year:04}{month:02}-"))?;
        let (part, origin) = origin_fields(rest)?;
        Some(MonthPackName {
            topic: topic.to_string(),
            year,
            month,
            part,
            origin,
        })
    }
}

/// The last fields of a pack name, `{created}-{part}-{writer}`: the part and the origin.
fn origin_fields(rest: &str) -> Option<(u32, PackOrigin)> {
    let mut fields = rest.split('-');
    let created = fields.next()?;
    if created.len() != 14 || !created.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let created = NaiveDateTime::parse_from_str(created, CREATED_FORMAT).ok()?;
    let part_field = fields.next()?;
    if part_field.len() < PART_DIGITS {
        return None;
    }
    let part = digits(part_field, 0)?;
    let writer = fields.next()?;
    if writer.is_empty()
        || !writer
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        || fields.next().is_some()
    {
        return None;
    }
    Some((
        part,
        PackOrigin {
            created,
            writer: writer.to_string(),
        },
    ))
}

/// `text` as a number if it is all ASCII digits (and exactly `len` of them, unless 0).
fn digits<T: std::str::FromStr>(text: &str, len: usize) -> Option<T> {
    if text.is_empty()
        || (len > 0 && text.len() != len)
        || !text.bytes().all(|b| b.is_ascii_digit())
    {
        return None;
    }
    text.parse().ok()
}

/// Path of a pack named the current way (see the module docs).
pub fn pack_path(
    topic: &str,
    date: NaiveDate,
    cluster: u32,
    part: u32,
    origin: PackOrigin,
) -> String {
    PackName {
        topic: sanitize_topic(topic),
        date,
        cluster,
        part,
        origin: Some(origin),
    }
    .path()
}

/// Path of a pack named the old way, `{topic}/{yyyy}/{mm}/{dd}/c{cluster}-{part}.warc.gz` (packs
/// written before unique names; tests make such archives with it).
pub fn legacy_pack_path(topic: &str, date: NaiveDate, cluster: u32, part: u32) -> String {
    PackName {
        topic: sanitize_topic(topic),
        date,
        cluster,
        part,
        origin: None,
    }
    .path()
}

/// A fresh writer token: 40 random bits (UUID v4) as 8 lower-case base32 characters.
pub fn new_writer_token() -> String {
    let id = uuid::Uuid::new_v4();
    let token = data_encoding::BASE32_NOPAD
        .encode(&id.as_bytes()[..5])
        .to_ascii_lowercase();
    debug_assert_eq!(token.len(), WRITER_TOKEN_CHARS);
    token
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
    /// `WARC-Record-ID` of the pack's warcinfo record, named by every record after it.
    warcinfo_id: String,
    writer: Box<dyn PackWriter>,
    /// Records (besides warcinfo) in this pack.
    records: u64,
    /// Appended to since the last successful sync.
    dirty: bool,
    /// [`Packer::clock`] at the last write: the smallest is closed first for room.
    last_used: u64,
    /// An earlier writer's pack this packer appends to.
    appended: bool,
}

/// Counters of a [`Packer`] since it was made.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PackerStats {
    /// Packs created.
    pub opened: u64,
    /// Packs closed because they were full (rollover).
    pub rolled_over: u64,
    /// Packs closed to make room ([`PackerOptions::max_open_packs`]).
    pub closed_for_room: u64,
    /// Most packs open at once.
    pub peak_open: usize,
    /// Packs of earlier writers appended to ([`PackerOptions::append_to_existing`]).
    pub appended: u64,
}

/// Writes records into packs: layout, lazy opening, rollover and syncing.
///
/// # Durability
/// [`Packer::write`] returns a [`Location`] as soon as the bytes are handed to the store; they
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
/// [`Packer::new`]) and its creation time: see the module docs.
pub struct Packer {
    store: Arc<dyn PackStore>,
    options: PackerOptions,
    /// This packer's writer token, part of every pack name it makes.
    writer: String,
    open: HashMap<FamilyKey, OpenPack>,
    /// Highest part used per family in this process (open or closed); closed families are
    /// forgotten past `remembered_limit` entries.
    last_part: HashMap<FamilyKey, u32>,
    remembered_limit: usize,
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
    pub fn write(&mut self, key: &PackKey, record: &EncodedRecord) -> Result<Location> {
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
    ) -> Result<Vec<Location>> {
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
                    locations.push(Location {
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

/// Opens packs: the part of [`Packer`] that can run on several threads at once.
struct Opener<'a> {
    store: &'a Arc<dyn PackStore>,
    options: &'a PackerOptions,
    writer: &'a str,
    clock: u64,
    append_note: Option<&'a AppendNote>,
}

impl Opener<'_> {
    /// Creates the next part of a family (after `known`, the highest part this process used,
    /// else after the highest in the store) and writes its warcinfo record. With
    /// [`PackerOptions::append_to_existing`], the highest part in the store is appended to
    /// instead where it can be ([`Opener::append`]).
    fn open(&self, key: &PackKey, family: &FamilyKey, known: Option<u32>) -> Result<OpenPack> {
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

/// Runs `work` on each item on up to [`SYNC_THREADS`] threads side by side (a run of
/// consecutive items a thread). Every item is tried; the first error in item order is
/// returned.
fn side_by_side<T: Send>(items: Vec<T>, work: impl Fn(T) -> Result<()> + Sync) -> Result<()> {
    map_side_by_side(items, |item| {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| work(item))).unwrap_or_else(|_| {
            Err(Error::Io {
                path: String::new(),
                source: std::io::Error::other("a pack sync or close thread panicked"),
            })
        })
    })
    .into_iter()
    .fold(Ok(()), Result::and)
}

/// `work` of each item, in item order, run on up to [`SYNC_THREADS`] threads side by side
/// (a run of consecutive items a thread).
fn map_side_by_side<T: Send, R: Send>(items: Vec<T>, work: impl Fn(T) -> R + Sync) -> Vec<R> {
    let threads = items.len().clamp(1, SYNC_THREADS);
    let per_thread = items.len().div_ceil(threads).max(1);
    let run = |group: Vec<T>| group.into_iter().map(&work).collect::<Vec<R>>();
    let mut groups: Vec<Vec<T>> = Vec::with_capacity(threads);
    let mut rest = items.into_iter().peekable();
    while rest.peek().is_some() {
        groups.push(rest.by_ref().take(per_thread).collect());
    }
    if groups.len() <= 1 {
        return groups.into_iter().flat_map(run).collect();
    }
    let run = &run;
    std::thread::scope(|scope| {
        let handles: Vec<_> = groups
            .into_iter()
            .map(|group| scope.spawn(move || run(group)))
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect()
    })
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

    #[test]
    fn month_pack_names_round_trip_and_are_no_day_names() {
        let name = MonthPackName {
            topic: "news".into(),
            year: 2024,
            month: 5,
            part: 3,
            origin: PackOrigin {
                created: NaiveDate::from_ymd_opt(2024, 6, 2)
                    .unwrap()
                    .and_hms_opt(10, 11, 12)
                    .unwrap(),
                writer: "k7q2mxa4".into(),
            },
        };
        let path = name.path();
        assert_eq!(
            path,
            "news/2024/05/news-202405-20240602101112-00003-k7q2mxa4.warc.gz"
        );
        assert_eq!(MonthPackName::parse(&path), Some(name.clone()));
        assert_eq!(MonthPackName::parse(&format!("root/{path}")), Some(name));
        assert_eq!(PackName::parse(&path), None);
        let day = "news/2024/05/01/news-20240501-c3-20240502101112-00000-k7q2mxa4.warc.gz";
        assert!(PackName::parse(day).is_some());
        assert_eq!(MonthPackName::parse(day), None);
        assert_eq!(
            MonthPackName::parse("news/2024/13/news-202413-20240602101112-00003-k7q2mxa4.warc.gz"),
            None
        );
        assert_eq!(MonthPackName::parse(&format!("{path}.part")), None);
    }

    use super::*;
    use crate::local::LocalPackStore;

    fn date() -> NaiveDate {
        NaiveDate::from_ymd_opt(2024, 5, 1).unwrap()
    }

    fn origin() -> PackOrigin {
        PackOrigin {
            created: NaiveDate::from_ymd_opt(2024, 5, 2)
                .unwrap()
                .and_hms_opt(10, 11, 12)
                .unwrap(),
            writer: "k7q2mxa4".into(),
        }
    }

    #[test]
    fn pack_path_follows_layout() {
        assert_eq!(
            pack_path("military", date(), 3, 0, origin()),
            "military/2024/05/01/military-20240501-c3-20240502101112-00000-k7q2mxa4.warc.gz"
        );
        assert_eq!(
            pack_path("../etc/passwd", date(), 0, 123456, origin()),
            "___etc_passwd/2024/05/01/___etc_passwd-20240501-c0-20240502101112-123456-k7q2mxa4.warc.gz"
        );
        assert_eq!(
            pack_path("", date(), 1, 1, origin()),
            "_/2024/05/01/_-20240501-c1-20240502101112-00001-k7q2mxa4.warc.gz"
        );
        assert_eq!(
            pack_path("军事", date(), 1, 1, origin()),
            "军事/2024/05/01/军事-20240501-c1-20240502101112-00001-k7q2mxa4.warc.gz"
        );
        assert!(crate::store::validate_path(&pack_path("a/../b", date(), 0, 0, origin())).is_ok());
        assert_eq!(
            legacy_pack_path("military", date(), 3, 0),
            "military/2024/05/01/c3-0.warc.gz"
        );
    }

    #[test]
    fn pack_names_parse_back_both_ways() {
        for topic in ["military", "Sports-2_x", "a-20240501-c1", "军事", "_"] {
            for cluster in [0, 1, 10, 4_000_000] {
                for part in [0, 7, 99_999, 123_456] {
                    let current = pack_path(topic, date(), cluster, part, origin());
                    let name = PackName::parse(&current).unwrap_or_else(|| panic!("{current}"));
                    assert_eq!(
                        (name.topic.as_str(), name.date, name.cluster, name.part),
                        (topic, date(), cluster, part)
                    );
                    assert_eq!(name.origin, Some(origin()));
                    assert_eq!(name.path(), current);
                    let legacy = legacy_pack_path(topic, date(), cluster, part);
                    let name = PackName::parse(&legacy).unwrap_or_else(|| panic!("{legacy}"));
                    assert_eq!(
                        (name.cluster, name.part, &name.origin),
                        (cluster, part, &None)
                    );
                    assert_eq!(name.path(), legacy);
                }
            }
        }
        // Below a prefix (a test namespace, an HDFS root given as a path).
        let nested = PackName::parse("ns/x/military/2024/05/01/c3-0.warc.gz").unwrap();
        assert_eq!((nested.topic.as_str(), nested.cluster), ("military", 3));
    }

    #[test]
    fn foreign_files_are_not_pack_names() {
        for path in [
            "t/2024/05/01/c1-.warc.gz",
            "t/2024/05/01/c1-+3.warc.gz",
            "t/2024/05/01/c1-3.warc.gz.tmp",
            "t/2024/05/01/c1-3.warc.gz.torn-20240501",
            "t/2024/05/01/cx-3.warc.gz",
            "t/2024/02/30/c1-3.warc.gz",
            "t/24/05/01/c1-3.warc.gz",
            "c1-3.warc.gz",
            "a b/2024/05/01/c1-3.warc.gz",
            // The name's day must be its folder's.
            "t/2024/05/01/t-20240502-c1-20240502101112-00000-k7q2mxa4.warc.gz",
            "u/2024/05/01/t-20240501-c1-20240502101112-00000-k7q2mxa4.warc.gz",
            "t/2024/05/01/t-20240501-c1-2024050210111-00000-k7q2mxa4.warc.gz",
            "t/2024/05/01/t-20240501-c1-20240502101112-0000-k7q2mxa4.warc.gz",
            "t/2024/05/01/t-20240501-c1-20240502101112-00000-.warc.gz",
            "t/2024/05/01/t-20240501-c1-20240502101112-00000-K7Q2.warc.gz",
            "t/2024/05/01/t-20240501-c1-20240502101112-00000-ab-cd.warc.gz",
        ] {
            assert_eq!(PackName::parse(path), None, "{path}");
        }
    }

    #[test]
    fn writer_tokens_are_short_and_distinct() {
        let tokens: std::collections::HashSet<String> =
            (0..1000).map(|_| new_writer_token()).collect();
        assert_eq!(tokens.len(), 1000);
        for t in &tokens {
            assert_eq!(t.len(), WRITER_TOKEN_CHARS);
            assert!(t
                .bytes()
                .all(|b| b.is_ascii_lowercase() || (b'2'..=b'7').contains(&b)));
        }
    }

    /// Issue 14: every record names the warcinfo record of the pack it landed in (records are
    /// compressed before that is known), and a response and its request stay in one pack when
    /// the pack rolls over.
    #[test]
    fn records_name_their_packs_warcinfo_and_pairs_never_split() {
        let dir = tempfile::tempdir().unwrap();
        let store: Arc<dyn PackStore> = Arc::new(LocalPackStore::open(dir.path()).unwrap());
        let mut packer = Packer::new(
            store.clone(),
            PackerOptions {
                max_pack_bytes: 3000,
                ..PackerOptions::default()
            },
        );
        let key = PackKey {
            topic: "news".into(),
            date: date(),
            cluster: 0,
        };
        let mut pairs = Vec::new();
        for i in 0..40 {
            let response = page(i, 37);
            let request = warc::encode_request(&warc::RequestInput {
                target_uri: "http://example.com/",
                date: Utc::now(),
                concurrent_to: &response.record_id,
                request_line: "GET / HTTP/1.1",
                headers: &[],
            });
            let locs = packer.write_all(&key, &[&response, &request]).unwrap();
            assert_eq!(locs.len(), 2);
            assert_eq!(locs[0].path, locs[1].path, "pair {i} split");
            assert_eq!(locs[0].offset + locs[0].length, locs[1].offset);
            pairs.push((response.record_id.clone(), locs));
        }
        packer.close_all().unwrap();
        let listed = store.list("").unwrap();
        assert!(listed.len() > 3, "rolled over: {listed:?}");
        let mut seen = 0;
        for entry in &listed {
            let bytes = store.read_range(&entry.path, 0, entry.len).unwrap();
            let mut records = warc::RecordIter::new(&bytes).map(|r| r.unwrap().2);
            let info = records.next().unwrap();
            assert_eq!(info.record_type(), Some("warcinfo"));
            assert_eq!(info.header("WARC-Warcinfo-ID"), None);
            for rec in records {
                assert_eq!(
                    rec.header("WARC-Warcinfo-ID"),
                    info.record_id(),
                    "{}",
                    entry.path
                );
                seen += 1;
            }
        }
        assert_eq!(seen, 80);
        for (id, locs) in &pairs {
            assert_eq!(
                packer.read(&locs[0]).unwrap().record_id(),
                Some(id.as_str())
            );
            let request = packer.read(&locs[1]).unwrap();
            assert_eq!(request.header("WARC-Concurrent-To"), Some(id.as_str()));
        }
    }

    /// A response record of `http://example.com/` whose page grows by `pad` bytes with `i`.
    fn page(i: usize, pad: usize) -> EncodedRecord {
        let body = format!("<p>page {i} {}</p>", "y".repeat(i * pad));
        warc::encode_response(&warc::ResponseInput {
            target_uri: "http://example.com/",
            date: Utc::now(),
            ip_address: None,
            concurrent_to: None,
            status_line: "HTTP/1.1 200 OK",
            headers: &[],
            payload: body.as_bytes(),
        })
    }

    fn appending(store: &Arc<dyn PackStore>, max_pack_bytes: u64) -> Packer {
        Packer::new(
            store.clone(),
            PackerOptions {
                max_pack_bytes,
                append_to_existing: true,
                ..PackerOptions::default()
            },
        )
    }

    /// Runs of a day fill its pack: a later packer appends to the family's last part after a
    /// warcinfo record of its own, is told where (the note), and every record reads back,
    /// each naming its run's warcinfo.
    #[test]
    fn a_later_packer_appends_to_the_last_part_after_its_own_warcinfo() {
        let dir = tempfile::tempdir().unwrap();
        let store: Arc<dyn PackStore> = Arc::new(LocalPackStore::open(dir.path()).unwrap());
        let key = PackKey {
            topic: "news".into(),
            date: date(),
            cluster: 0,
        };
        let mut locations = Vec::new();
        let noted: Arc<std::sync::Mutex<Vec<(String, u64)>>> = Arc::default();
        for run in 0..3 {
            let mut packer = appending(&store, 1 << 20);
            let seen = noted.clone();
            packer.set_append_note(Arc::new(move |path, from| {
                seen.lock().unwrap().push((path.to_string(), from));
                Ok(())
            }));
            for i in 0..5 {
                locations.push(packer.write(&key, &page(run * 10 + i, 11)).unwrap());
            }
            packer.close_all().unwrap();
            let stats = packer.stats();
            assert_eq!(
                (stats.opened, stats.appended),
                (u64::from(run == 0), u64::from(run > 0))
            );
        }
        let listed = store.list("").unwrap();
        assert_eq!(listed.len(), 1, "{listed:?}");
        let path = &listed[0].path;
        let noted = noted.lock().unwrap().clone();
        assert_eq!(noted.len(), 2);
        // Each note names where the earlier runs ended: the next run's warcinfo.
        for (p, from) in &noted {
            assert_eq!(p, path);
            let info = store.read_range(path, *from, 2).unwrap();
            assert_eq!(info, [0x1f, 0x8b]);
        }
        let bytes = store.read_range(path, 0, listed[0].len).unwrap();
        let mut infos = Vec::new();
        let mut current = None;
        let mut records = 0;
        for (offset, _, rec) in warc::RecordIter::new(&bytes).map(|r| r.unwrap()) {
            if rec.record_type() == Some("warcinfo") {
                assert_eq!(
                    rec.header("WARC-Filename"),
                    path.rsplit('/').next(),
                    "each run's warcinfo names the pack"
                );
                current = rec.record_id().map(str::to_string);
                infos.push(offset);
                continue;
            }
            assert_eq!(rec.header("WARC-Warcinfo-ID"), current.as_deref());
            records += 1;
        }
        assert_eq!(records, 15);
        assert_eq!(infos.len(), 3);
        assert_eq!(
            &infos[1..],
            &noted.iter().map(|n| n.1).collect::<Vec<_>>()[..]
        );
        let reader = Packer::new(store.clone(), PackerOptions::default());
        for loc in &locations {
            assert_eq!(reader.read(loc).unwrap().record_type(), Some("response"));
        }
        assert!(warc::Resync::for_pack(path, &bytes).all(|r| r.is_ok()));
    }

    /// A last part that is full, torn by a crash, or held by a live writer is not appended
    /// to: a new part follows it. Without the option nothing is appended to.
    #[test]
    fn full_torn_held_or_unasked_last_parts_get_a_new_part() {
        let key = PackKey {
            topic: "news".into(),
            date: date(),
            cluster: 0,
        };
        let parts = |store: &Arc<dyn PackStore>| store.list("").unwrap().len();
        let fresh = || {
            let dir = tempfile::tempdir().unwrap();
            let store: Arc<dyn PackStore> = Arc::new(LocalPackStore::open(dir.path()).unwrap());
            let mut first = appending(&store, 1 << 20);
            first.write(&key, &page(1, 11)).unwrap();
            first.close_all().unwrap();
            (dir, store)
        };

        // Full: as large as the limit allows.
        let (_d, store) = fresh();
        let len = store.list("").unwrap()[0].len;
        let mut p = appending(&store, len);
        p.write(&key, &page(2, 11)).unwrap();
        p.close_all().unwrap();
        assert_eq!((parts(&store), p.stats().appended), (2, 0), "full");

        // Torn: a record cut in half at the end.
        let (d, store) = fresh();
        let path = store.list("").unwrap()[0].path.clone();
        let half = page(3, 11).member(None);
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(d.path().join(&path))
            .unwrap();
        std::io::Write::write_all(&mut f, &half[..half.len() / 2]).unwrap();
        drop(f);
        let torn_len = store.len(&path).unwrap();
        let mut p = appending(&store, 1 << 20);
        p.write(&key, &page(4, 11)).unwrap();
        p.close_all().unwrap();
        assert_eq!((parts(&store), p.stats().appended), (2, 0), "torn");
        assert_eq!(
            store.len(&path).unwrap(),
            torn_len,
            "the torn pack is left as it is"
        );

        // Held: another writer still has it open.
        let (_d, store) = fresh();
        let path = store.list("").unwrap()[0].path.clone();
        let held = store.append(&path).unwrap();
        let mut p = appending(&store, 1 << 20);
        p.write(&key, &page(5, 11)).unwrap();
        p.close_all().unwrap();
        held.close().unwrap();
        assert_eq!((parts(&store), p.stats().appended), (2, 0), "held");

        // Not asked for.
        let (_d, store) = fresh();
        let mut p = Packer::new(store.clone(), PackerOptions::default());
        p.write(&key, &page(6, 11)).unwrap();
        p.close_all().unwrap();
        assert_eq!((parts(&store), p.stats().appended), (2, 0), "off");

        // A note that fails stops the write; nothing is appended.
        let (_d, store) = fresh();
        let before = store.list("").unwrap()[0].len;
        let mut p = appending(&store, 1 << 20);
        p.set_append_note(Arc::new(|path, _| {
            Err(Error::Busy {
                path: path.to_string(),
            })
        }));
        assert!(p.write(&key, &page(7, 11)).is_err());
        p.close_all().unwrap();
        assert_eq!(store.list("").unwrap()[0].len, before);
    }

    /// Issue 14: pack file names repeated across folders (`c0-0.warc.gz` in many days), so
    /// pywb renamed them and CDXJ `filename` fields were ambiguous.
    #[test]
    fn two_writers_and_many_folders_make_distinct_file_names() {
        let dir = tempfile::tempdir().unwrap();
        let store: Arc<dyn PackStore> = Arc::new(LocalPackStore::open(dir.path()).unwrap());
        let rec = warc::encode_warcinfo("x", &[]);
        // Two processes writing the same families at the same time, each rolling over.
        let options = PackerOptions {
            max_pack_bytes: 1,
            ..PackerOptions::default()
        };
        let mut a = Packer::new(store.clone(), options.clone());
        let mut b = Packer::new(store.clone(), options);
        assert_ne!(a.writer(), b.writer());
        let mut written = std::collections::BTreeSet::new();
        for topic in ["news", "sports", "军事"] {
            for day in [1, 2] {
                for cluster in [0, 1] {
                    let key = PackKey {
                        topic: topic.into(),
                        date: NaiveDate::from_ymd_opt(2024, 5, day).unwrap(),
                        cluster,
                    };
                    for _ in 0..2 {
                        written.insert(a.write(&key, &rec).unwrap().path);
                        written.insert(b.write(&key, &rec).unwrap().path);
                    }
                }
            }
        }
        a.close_all().unwrap();
        b.close_all().unwrap();
        let listed = store.list("").unwrap();
        assert_eq!(listed.len(), 3 * 2 * 2 * 2 * 2);
        assert_eq!(listed.len(), written.len());
        let mut file_names = std::collections::HashSet::new();
        for entry in &listed {
            let file_name = entry.path.rsplit('/').next().unwrap();
            assert!(
                file_names.insert(file_name.to_string()),
                "{file_name} twice"
            );
            let name = PackName::parse(&entry.path).unwrap();
            let origin = name.origin.as_ref().unwrap();
            assert!(origin.writer == a.writer() || origin.writer == b.writer());
            // The warcinfo record names the file.
            let bytes = store.read_range(&entry.path, 0, entry.len).unwrap();
            let (_, _, info) = warc::RecordIter::new(&bytes).next().unwrap().unwrap();
            assert_eq!(info.header("WARC-Filename"), Some(file_name));
        }
        // Concurrent writers may reach the same part of a family: the writer token keeps
        // their names apart.
        let news: Vec<PackName> = store
            .list("news/2024/05/01/")
            .unwrap()
            .iter()
            .filter_map(|e| PackName::parse(&e.path))
            .filter(|n| n.cluster == 0)
            .collect();
        assert!(
            news.iter().any(|x| news
                .iter()
                .any(|y| x.part == y.part && x.origin != y.origin)),
            "{news:?}"
        );
    }

    #[test]
    fn a_restart_continues_after_old_and_new_names() {
        let dir = tempfile::tempdir().unwrap();
        let store: Arc<dyn PackStore> = Arc::new(LocalPackStore::open(dir.path()).unwrap());
        for path in [
            legacy_pack_path("news", date(), 2, 4),
            pack_path("news", date(), 2, 6, origin()),
            // Other clusters and days do not count.
            pack_path("news", date(), 3, 9, origin()),
            legacy_pack_path("news", date(), 20, 9),
            pack_path("news", date().succ_opt().unwrap(), 2, 9, origin()),
        ] {
            store.create(&path).unwrap().close().unwrap();
        }
        let mut packer = Packer::new(store.clone(), PackerOptions::default());
        let key = PackKey {
            topic: "news".into(),
            date: date(),
            cluster: 2,
        };
        let loc = packer
            .write(&key, &warc::encode_warcinfo("x", &[]))
            .unwrap();
        packer.close_all().unwrap();
        let name = PackName::parse(&loc.path).unwrap();
        assert_eq!((name.cluster, name.part), (2, 7));
        assert_eq!(name.origin.unwrap().writer, packer.writer());
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

    /// A long run meets ever new (topic, day, cluster) families: the parts of closed ones are
    /// forgotten past a bound, and such a family reopened later still starts a new part.
    #[test]
    fn closed_families_are_forgotten_and_continue_after_their_last_part() {
        let dir = tempfile::tempdir().unwrap();
        let store: Arc<dyn PackStore> = Arc::new(LocalPackStore::open(dir.path()).unwrap());
        let mut packer = Packer::new(
            store.clone(),
            PackerOptions {
                max_open_packs: 1,
                ..PackerOptions::default()
            },
        );
        packer.remembered_limit = 3;
        let rec = warc::encode_warcinfo("x", &[]);
        let key = |cluster| PackKey {
            topic: "news".into(),
            date: date(),
            cluster,
        };
        let mut paths = std::collections::BTreeSet::new();
        for round in 0..3 {
            for cluster in 0..5 {
                let loc = packer.write(&key(cluster), &rec).unwrap();
                assert!(packer.last_part.len() <= 3, "{:?}", packer.last_part);
                let name = PackName::parse(&loc.path).unwrap();
                assert_eq!((name.cluster, name.part), (cluster, round));
                assert!(paths.insert(loc.path), "a pack was reused");
            }
        }
        packer.close_all().unwrap();
        assert_eq!(store.list("").unwrap().len(), paths.len());
    }

    /// A batch's packs opened ahead are the ones its writes then use: the parts a write
    /// would have chosen (after the store's highest, after this process's last), no pack
    /// opened twice, and never more open than the cap (the rest open as they are written).
    #[test]
    fn packs_opened_ahead_are_the_ones_written_and_respect_the_cap() {
        let dir = tempfile::tempdir().unwrap();
        let store: Arc<dyn PackStore> = Arc::new(LocalPackStore::open(dir.path()).unwrap());
        store
            .create(&pack_path("news", date(), 1, 4, origin()))
            .unwrap()
            .close()
            .unwrap();
        let mut packer = Packer::new(
            store.clone(),
            PackerOptions {
                max_open_packs: 3,
                ..PackerOptions::default()
            },
        );
        let rec = warc::encode_warcinfo("x", &[]);
        let key = |cluster| PackKey {
            topic: "news".into(),
            date: date(),
            cluster,
        };
        let keys: Vec<PackKey> = [0, 1, 0, 2, 3, 4].into_iter().map(key).collect();
        packer.open_ahead(&keys).unwrap();
        assert_eq!(packer.open.len(), 3, "{:?}", packer.open_paths());
        assert_eq!(packer.stats().opened, 3);
        let mut parts = Vec::new();
        for k in &keys {
            let loc = packer.write(k, &rec).unwrap();
            let name = PackName::parse(&loc.path).unwrap();
            parts.push((name.cluster, name.part));
        }
        assert_eq!(parts, [(0, 0), (1, 5), (0, 0), (2, 0), (3, 0), (4, 0)]);
        assert_eq!(packer.stats().opened, 5);
        assert!(packer.stats().peak_open <= 3);
        // The next batch's families were closed for room: the two packs written least
        // recently (clusters 2 and 3, not 4) are closed to open theirs, which continue after
        // their last parts.
        let closed = packer.stats().closed_for_room;
        packer.open_ahead(&[key(0), key(1)]).unwrap();
        assert_eq!(packer.stats().closed_for_room, closed + 2);
        let mut open: Vec<(u32, u32)> = packer
            .open_paths()
            .iter()
            .map(|p| PackName::parse(p).map(|n| (n.cluster, n.part)).unwrap())
            .collect();
        open.sort();
        assert_eq!(open, [(0, 1), (1, 6), (4, 0)]);
        let loc = packer.write(&key(0), &rec).unwrap();
        assert_eq!(PackName::parse(&loc.path).unwrap().part, 1);
        packer.close_all().unwrap();
        assert_eq!(store.list("").unwrap().len(), 8);
    }
}
