//! Reading a pack past damage ([`Resync`]): each unreadable stretch is one [`Damage`], and
//! the next readable record of the pack is found by scanning forward. Also the tail check
//! before an append ([`ends_with_whole_record`]). Apart from [`super::read`] because finding
//! a record again is a search of its own, with its rules about which records belong.

use std::io::Read;

use super::read::record_at;
use super::record::WarcRecord;
use super::spec::{header, record_type, GZIP_MAGIC};

/// A stretch of a pack that holds no readable record, as [`Resync`] reports it: from where a
/// record should have started to the next readable record, or to the end of the pack.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{length} unreadable bytes at offset {offset}: {reason}")]
pub struct Damage {
    /// Offset of the unreadable record (where a record should start).
    pub offset: u64,
    /// Bytes from `offset` to the next readable record, or to the end of the pack.
    pub length: u64,
    /// Why the record at `offset` could not be read.
    pub reason: String,
    /// No readable record follows: the damage reaches the end of the pack (a torn tail, as a
    /// crash while writing leaves it).
    pub to_end: bool,
}

/// Start of every gzip member a resynchronisation considers: magic and deflate.
const GZIP_MEMBER_START: [u8; 3] = [0x1f, 0x8b, 0x08];
/// Start of a plain record a resynchronisation considers (at the start of a line).
const PLAIN_RECORD_START: &[u8] = b"\nWARC/1.";
/// What a record found by a resynchronisation must decompress to first.
const RECORD_START: &[u8] = b"WARC/1.";

/// [`RecordIter`] that reads past damage: at an unreadable record it yields one [`Damage`]
/// and goes on at the next readable record, so every intact record of a pack is yielded at
/// its own offset. The next readable record is found by scanning forward for the start of a
/// gzip member (`1f 8b 08`) that decompresses, CRC and length checked, to one record starting
/// `WARC/1.` (in an uncompressed pack: a line starting `WARC/1.` that parses as a record).
/// When the pack's records name a warcinfo record (`WARC-Warcinfo-ID`, as every record of a
/// harvest pack after the first does), a record found so must name the same one: a WARC file
/// archived inside a record's block is not taken for the pack's own records. A month pack
/// of `harvest compact` ([`Resync::for_pack`]) holds several packs one after the other, each
/// starting with its own warcinfo: there a record may name any warcinfo the pack has shown,
/// and a warcinfo record whose `WARC-Filename` is one of that (topic, month)'s pack names
/// starts the next of them.
///
/// Damage with no readable record after it is yielded with [`Damage::to_end`] set, and the
/// iteration ends. Records are yielded as by [`RecordIter`] until the first damage.
#[derive(Debug)]
pub struct Resync<'a> {
    data: &'a [u8],
    offset: usize,
    /// The record the last resynchronisation found at `offset`, and its length.
    found: Option<(WarcRecord, usize)>,
    /// Whether the pack's records are gzip members (known after the first readable one).
    gzipped: Option<bool>,
    /// The warcinfo records the pack's records name.
    named: Vec<String>,
    /// The ids of the warcinfo records read.
    infos: Vec<String>,
    /// The start of the file names a warcinfo record that starts a further segment of the
    /// pack names: in a month pack, of the packs it holds; in a day pack, its own name (a
    /// later run's records appended to it).
    segments: Option<String>,
    done: bool,
}

impl<'a> Resync<'a> {
    /// Iterates over `data`, a whole pack.
    pub fn new(data: &'a [u8]) -> Self {
        Self {
            data,
            offset: 0,
            found: None,
            gzipped: None,
            named: Vec::new(),
            infos: Vec::new(),
            segments: None,
            done: false,
        }
    }

    /// Iterates over `data`, the whole pack at `path`: as [`Resync::new`], and past damage
    /// into the next segment the pack holds: for a month pack ([`crate::MonthPackName`]) the
    /// next pack, for a day pack the next run's records appended to it.
    pub fn for_pack(path: &str, data: &'a [u8]) -> Self {
        let mut it = Self::new(data);
        // A day pack appended to by later runs: each run's records follow a warcinfo record
        // of its own that names this pack.
        it.segments = match crate::MonthPackName::parse(path) {
            Some(m) => Some(format!("{}-{:04}{:02}", m.topic, m.year, m.month)),
            None => path.rsplit('/').next().map(str::to_string),
        };
        it
    }

    /// Remembers what a readable record at `at` says about the pack.
    fn learn(&mut self, at: usize, record: &WarcRecord) {
        if self.gzipped.is_none() {
            self.gzipped = Some(self.data[at..].starts_with(&GZIP_MAGIC));
        }
        if let Some(id) = record.header(header::WARCINFO_ID) {
            if !self.named.iter().any(|n| n == id) {
                self.named.push(id.to_string());
            }
        }
        if record.record_type() == Some(record_type::WARCINFO) {
            if let Some(id) = record.record_id() {
                if !self.infos.iter().any(|n| n == id) {
                    self.infos.push(id.to_string());
                }
            }
        }
    }

    /// The first readable record of the pack at or after `from`: its offset, the record and
    /// its length.
    fn resync(&self, from: usize) -> Option<(usize, WarcRecord, usize)> {
        let gzip = self.gzipped != Some(false);
        let plain = self.gzipped != Some(true);
        let mut at = from;
        while at < self.data.len() {
            let member = gzip
                .then(|| find(&self.data[at..], &GZIP_MEMBER_START))
                .flatten()
                .map(|i| at + i);
            // A plain record starts a line: its `\n` is the byte before it.
            let line = plain
                .then(|| find(&self.data[at - 1..], PLAIN_RECORD_START))
                .flatten()
                .map(|i| at + i);
            let candidate = match (member, line) {
                (Some(m), Some(l)) => m.min(l),
                (Some(c), None) | (None, Some(c)) => c,
                (None, None) => return None,
            };
            if let Some((record, len)) = self.record_found_at(candidate) {
                return Some((candidate, record, len));
            }
            at = candidate + 1;
        }
        None
    }

    /// The record at `at` if one starts there that belongs to this pack.
    fn record_found_at(&self, at: usize) -> Option<(WarcRecord, usize)> {
        let data = &self.data[at..];
        if data.starts_with(&GZIP_MAGIC) {
            // Decompress the first bytes only before the whole member: most `1f 8b 08` in
            // compressed data start no member at all.
            let mut start = [0u8; RECORD_START.len()];
            flate2::bufread::GzDecoder::new(data)
                .read_exact(&mut start)
                .ok()?;
            if start != RECORD_START {
                return None;
            }
        } else if !data.starts_with(RECORD_START) {
            return None;
        }
        let (record, len) = record_at(data).ok()?;
        if self.named.is_empty() {
            return Some((record, len));
        }
        let known = |id: &str| self.named.iter().chain(&self.infos).any(|n| n == id);
        if record.header(header::WARCINFO_ID).is_some_and(known) {
            return Some((record, len));
        }
        // A month pack: the warcinfo that starts the next pack it holds.
        let starts_segment = self.segments.as_deref().is_some_and(|prefix| {
            record.record_type() == Some(record_type::WARCINFO)
                && record
                    .header(header::FILENAME)
                    .is_some_and(|f| f.starts_with(prefix) && f.ends_with(".warc.gz"))
        });
        starts_segment.then_some((record, len))
    }
}

/// Index of the first `needle` in `haystack`.
pub(super) fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    let (&first, rest) = needle.split_first()?;
    let mut from = 0;
    while let Some(i) = haystack[from..].iter().position(|&b| b == first) {
        let at = from + i;
        if haystack[at + 1..].starts_with(rest) {
            return Some(at);
        }
        from = at + 1;
    }
    None
}

impl Iterator for Resync<'_> {
    type Item = std::result::Result<(u64, u64, WarcRecord), Damage>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done || self.offset >= self.data.len() {
            return None;
        }
        let offset = self.offset;
        let read = match self.found.take() {
            Some(found) => Ok(found),
            None => record_at(&self.data[offset..]),
        };
        match read {
            Ok((record, len)) => {
                self.learn(offset, &record);
                self.offset += len;
                Some(Ok((offset as u64, len as u64, record)))
            }
            Err(reason) => {
                let (end, to_end) = match self.resync(offset + 1) {
                    Some((at, record, len)) => {
                        self.found = Some((record, len));
                        (at, false)
                    }
                    None => {
                        self.done = true;
                        (self.data.len(), true)
                    }
                };
                self.offset = end;
                Some(Err(Damage {
                    offset: offset as u64,
                    length: (end - offset) as u64,
                    reason,
                    to_end,
                }))
            }
        }
    }
}

impl std::iter::FusedIterator for Resync<'_> {}

/// Whether `tail`, the last bytes of a pack (or all of it), ends exactly where a whole
/// record ends: no torn record after the last readable one. `tail` may start inside a
/// record; the records after that are found as [`Resync`] finds them past damage.
pub fn ends_with_whole_record(tail: &[u8]) -> bool {
    let mut end = None;
    for item in Resync::new(tail) {
        match item {
            Ok((offset, length, _)) => end = Some(offset + length),
            Err(damage) if damage.to_end => return false,
            Err(_) => {}
        }
    }
    end == Some(tail.len() as u64)
}
