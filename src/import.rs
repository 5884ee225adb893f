//! `harvest import FILE.warc[.gz]…`: WARC files written by other tools
//! (wget `--warc-file`, Heritrix, warcio, Browsertrix) brought into the
//! archive as if crawled at each record's `WARC-Date`.
//!
//! - `response` records with an HTML 2xx answer: the body is de-chunked and
//!   content-decoded, then extracted, classified, deduplicated, packed (a new
//!   record in harvest's packs) and indexed by the crawl's own pipeline;
//! - `revisit` records (identical payload): the payload comes from the
//!   record they refer to in the same file, or from the archive by digest
//!   (URL-agnostic revisits too); a revisit without an HTTP head of its own
//!   takes the original's; they become revisits here too;
//! - `revisit` records of a 304 (server-not-modified): a 304 capture of a URL
//!   the archive holds;
//! - `request` records are skipped, deliberately: in harvest's packs a
//!   request record is what harvest sent for the capture before it. An
//!   imported capture was requested by another tool, so its record in our
//!   packs gets no request record (the file it came from keeps the original);
//!   harvest writes its own warcinfo at the start of each pack;
//! - `warcinfo`, `metadata`, `resource` and `conversion` records, and answers
//!   a crawl would not have kept (not HTML, not 2xx), are counted and left
//!   out: harvest archives pages and their answers.
//!
//! A file is read as a stream, one record in memory at a time, so a WARC of
//! any size imports in bounded memory. Records gzipped one member each (as
//! all these tools write them) are read in place; a file gzipped whole (one
//! stream) is first decompressed to a temporary file (in `TMPDIR`).
//!
//! Memory does not grow with a record either (issue 40): a record whose
//! block is longer than `max_body_bytes` (plus [`BLOCK_HEAD_ROOM`] for the
//! HTTP head) could not become a page, so its block is read past as it
//! streams, never held; it is counted and named (file, offset, URL, size).
//!
//! ARC files (version 1 and 2, plain or gzipped per record, `packer::arc`) are read
//! as the WARC records they stand for. Blank lines between records, `CR CR LF` line
//! ends and a block that ends inside its HTTP head are read as warcio reads them. A
//! body its headers call chunked that is not chunked is kept as it was sent (counted
//! and named, `kept raw`). A damaged region (bytes that are no record) is read past
//! to the next record that reads whole, counted and named with its file and offsets
//! (a warning, as warcio goes on past it). A file cut short is imported up to its
//! last whole record, the other files are imported, and then the import fails
//! (exit 1) naming each such file and the offset where it stops.

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use chrono::{DateTime, Utc};

use anyhow::{bail, Context, Result};
use packer::warc::{self, RecordHead, RecordReader, Streamed, WarcRecord};

use crate::config::Config;
use crate::replay::{archived_response, record_date, Kind, Replay, ReplaySummary};
use crate::stores::Stores;

/// Largest whole-file-gzipped WARC decompressed to a temporary file.
const MAX_WHOLE_GZIP_BYTES: u64 = 64 << 30;

/// Room a record's block gets over `max_body_bytes` before it is left out
/// unread: its HTTP head and a chunked body's framing. A body over
/// `max_body_bytes` is refused anyway (`ArchivedResponse::normalise`).
const BLOCK_HEAD_ROOM: u64 = 1 << 20;

/// Reason in the summary of a capture the archive holds already (a file imported again).
const SKIP_ARCHIVED: &str = "captures already in the archive (same URL and WARC-Date)";

/// Reason in the summary of a record left out for its size.
const SKIP_OVERSIZED: &str = "records larger than max_body_bytes (block read past, not held)";

/// Oversized records of a file named one by one in the progress lines; the
/// others are counted.
const NAMED_OVERSIZED: u64 = 10;

/// A WARC file opened for import: read in place, or from a decompressed
/// temporary copy when the whole file is one gzip stream.
struct Records {
    /// The handle the records are streamed from.
    stream: File,
    /// A handle of its own (its own position) to read a record back by
    /// offset while the stream goes on.
    lookup: File,
    /// The decompressed copy (removed when dropped).
    copy: Option<tempfile::NamedTempFile>,
    /// The largest block held; a longer one is read past.
    max_block: u64,
    /// Why the whole-file gzip stream broke off, and after how many
    /// decompressed bytes (the copy holds those).
    broken_gzip: Option<(u64, String)>,
    /// WARC or ARC.
    format: Format,
    /// Whether the records are gzip members (not a plain file or a decompressed copy).
    members: bool,
}

/// How a file is stored, told by its first bytes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Framing {
    /// Starts with a record.
    Plain,
    /// Starts with a gzip header: a member per record, or the whole file in one.
    Gzip,
}

/// What a file's records are.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Format {
    /// WARC (1.0, 1.1).
    Warc,
    /// ARC (version 1 or 2), read as the WARC records it stands for (`packer::arc`).
    Arc,
}

impl Framing {
    /// The framing and format of `path`; an error when it is not a file or starts with
    /// neither a WARC nor an ARC record, plain or gzipped.
    fn of(path: &Path) -> Result<(Framing, Format)> {
        let meta =
            std::fs::metadata(path).with_context(|| format!("cannot read {}", path.display()))?;
        if !meta.is_file() {
            bail!("{} is not a file", path.display());
        }
        let read = || -> std::io::Result<(Vec<u8>, Vec<u8>)> {
            let mut head = Vec::with_capacity(16);
            File::open(path)?.take(16).read_to_end(&mut head)?;
            let mut inner = Vec::with_capacity(16);
            if head.starts_with(&[0x1f, 0x8b]) {
                // A damaged member reads as nothing: told by the records then.
                let _ = flate2::read::GzDecoder::new(File::open(path)?)
                    .take(16)
                    .read_to_end(&mut inner);
            }
            Ok((head, inner))
        };
        let (head, inner) = read().with_context(|| format!("cannot read {}", path.display()))?;
        let arc = packer::arc::is_arc;
        if head.starts_with(&[0x1f, 0x8b]) {
            Ok((
                Framing::Gzip,
                if arc(&inner) {
                    Format::Arc
                } else {
                    Format::Warc
                },
            ))
        } else if head.starts_with(b"WARC/") {
            Ok((Framing::Plain, Format::Warc))
        } else if arc(&head) {
            Ok((Framing::Plain, Format::Arc))
        } else {
            bail!(
                "{} is neither a WARC nor an ARC file (it starts with neither WARC/ nor \
                 filedesc:// nor a gzip header)",
                path.display()
            )
        }
    }
}

/// A file's records, each with its offset and stored length.
type RecordStream<'a> = Box<dyn Iterator<Item = packer::Result<(u64, u64, Streamed)>> + 'a>;

/// Bytes scanned at a time for the next record after a damaged region.
const RESYNC_CHUNK: usize = 1 << 20;

impl Records {
    /// Opens `path`; blocks longer than `max_block` will be read past. A
    /// file whose first record is unreadable is opened all the same: reading
    /// it reports where it stops.
    fn open(path: &Path, framing: Framing, format: Format, max_block: u64) -> Result<Records> {
        let open = || File::open(path).with_context(|| format!("cannot read {}", path.display()));
        if framing == Framing::Gzip {
            // The first record tells a member per record from one member
            // for the whole file (its block read past when long: telling
            // holds no more than reading does).
            let first = reader(format, BufReader::new(open()?), max_block).next();
            if let Some(Err(e)) = first {
                if e.to_string().contains("more than one") {
                    return Records::decompressed(path, format, max_block);
                }
            }
        }
        Ok(Records {
            stream: open()?,
            lookup: open()?,
            copy: None,
            max_block,
            broken_gzip: None,
            format,
            members: framing == Framing::Gzip,
        })
    }

    /// A whole-file gzip, decompressed to a temporary file; a stream that
    /// breaks off (a file cut short) keeps what came before the break.
    fn decompressed(path: &Path, format: Format, max_block: u64) -> Result<Records> {
        let input = File::open(path).with_context(|| format!("cannot read {}", path.display()))?;
        let mut copy = tempfile::NamedTempFile::new()
            .context("cannot create a temporary file to decompress into")?;
        let mut gz = flate2::read::MultiGzDecoder::new(BufReader::new(input));
        let mut buf = vec![0u8; 256 * 1024];
        let mut copied = 0u64;
        let mut broken_gzip = None;
        loop {
            let n = match gz.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    broken_gzip = Some((copied, e.to_string()));
                    break;
                }
            };
            copy.as_file_mut()
                .write_all(&buf[..n])
                .context("writing the decompressed copy")?;
            copied += n as u64;
            if copied > MAX_WHOLE_GZIP_BYTES {
                bail!(
                    "{} decompresses to more than {MAX_WHOLE_GZIP_BYTES} bytes",
                    path.display()
                );
            }
        }
        let reopen = || copy.reopen().context("reading the decompressed copy");
        Ok(Records {
            stream: reopen()?,
            lookup: reopen()?,
            copy: Some(copy),
            max_block,
            broken_gzip,
            format,
            members: false,
        })
    }

    /// The records from byte `start` on, with their offsets (from the file's start) and
    /// stored lengths.
    fn iter_from(&self, start: u64) -> Result<RecordStream<'_>> {
        let mut f = &self.stream;
        f.seek(SeekFrom::Start(start))?;
        let records = reader(
            self.format,
            BufReader::with_capacity(256 * 1024, f),
            self.max_block,
        );
        Ok(Box::new(records.map(move |r| match r {
            Ok((offset, length, record)) => Ok((start + offset, length, record)),
            Err(packer::Error::CorruptRecord { offset, reason }) => {
                Err(packer::Error::CorruptRecord {
                    offset: start + offset,
                    reason,
                })
            }
            Err(e) => Err(e),
        })))
    }

    /// Where the next readable record starts after a damaged one at `from` (as warcio
    /// goes on past damage): the first place after it where a record of the file's kind
    /// starts (a gzip member, or a `WARC/1.` line, or an ARC header line) and reads whole.
    fn resync(&self, from: u64) -> Result<Option<u64>> {
        let size = self.lookup.metadata()?.len();
        let mut at = from + 1;
        let mut buf = vec![0u8; RESYNC_CHUNK];
        while at < size {
            let mut f = &self.lookup;
            f.seek(SeekFrom::Start(at))?;
            let n = read_up_to(&mut f, &mut buf)?;
            if n == 0 {
                break;
            }
            let chunk = &buf[..n];
            for i in 0..n {
                let starts = if self.members {
                    chunk[i..].starts_with(&[0x1f, 0x8b, 0x08])
                } else {
                    // A record starts a line.
                    let line_start = if i == 0 {
                        at == 0 || self.byte_at(at - 1)? == Some(b'\n')
                    } else {
                        chunk[i - 1] == b'\n'
                    };
                    line_start
                        && match self.format {
                            Format::Warc => chunk[i..].starts_with(b"WARC/1."),
                            Format::Arc => chunk[i..].starts_with(b"http"),
                        }
                };
                if starts && self.reads_at(at + i as u64)? {
                    return Ok(Some(at + i as u64));
                }
            }
            // The next chunk, overlapping by a marker's length.
            at += (n as u64).saturating_sub(8).max(1);
        }
        Ok(None)
    }

    fn byte_at(&self, at: u64) -> Result<Option<u8>> {
        let mut f = &self.lookup;
        f.seek(SeekFrom::Start(at))?;
        let mut b = [0u8; 1];
        Ok((f.read(&mut b)? == 1).then_some(b[0]))
    }

    /// Whether a whole record reads at `at`.
    fn reads_at(&self, at: u64) -> Result<bool> {
        let mut f = &self.lookup;
        f.seek(SeekFrom::Start(at))?;
        let ok = matches!(
            reader(self.format, BufReader::new(f), self.max_block).next(),
            Some(Ok(_))
        );
        Ok(ok)
    }

    /// The record stored at `offset` (`length` bytes).
    fn record_at(&self, offset: u64, length: u64) -> Result<WarcRecord> {
        let mut buf = vec![0u8; usize::try_from(length).context("record length")?];
        let mut f = &self.lookup;
        f.seek(SeekFrom::Start(offset))?;
        f.read_exact(&mut buf).context("reading a record back")?;
        Ok(match self.format {
            Format::Warc => warc::read_record(&buf)?,
            Format::Arc => packer::arc::read_arc_at(&buf)?,
        })
    }
}

/// The records of a file of `format` read from `input`.
fn reader<'a, R: std::io::BufRead + 'a>(
    format: Format,
    input: R,
    max_block: u64,
) -> RecordStream<'a> {
    match format {
        Format::Warc => Box::new(RecordReader::new(input).with_max_block(max_block)),
        Format::Arc => Box::new(packer::arc::reader(input).with_max_block(max_block)),
    }
}

/// Reads into `buf` until it is full or the input ends; the bytes read.
fn read_up_to(input: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match input.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// Where the payload of a revisit is: a response of the same file.
#[derive(Default)]
struct Payloads {
    by_id: HashMap<String, (u64, u64)>,
    by_digest: HashMap<String, (u64, u64)>,
}

impl Payloads {
    fn note(&mut self, record: &WarcRecord, offset: u64, length: u64) {
        if let Some(id) = record.record_id() {
            self.by_id.insert(id.to_string(), (offset, length));
        }
        if let Some(d) = record.payload_digest() {
            self.by_digest
                .entry(d.to_string())
                .or_insert((offset, length));
        }
    }

    fn find(&self, record: &WarcRecord) -> Option<(u64, u64)> {
        record
            .header("WARC-Refers-To")
            .and_then(|id| self.by_id.get(id))
            .or_else(|| record.payload_digest().and_then(|d| self.by_digest.get(d)))
            .copied()
    }
}

/// What an import keeps across its files.
/// - Revisits whose original was not found where they were read (in their file or in the
///   archive): tried again once every file is read, for an original in a later file (a
///   collection's files in another order than their captures). Bounded: a revisit record
///   holds no payload, a few hundred bytes; past [`DEFERRED_BYTES`] they are left out as
///   before, counted.
/// - The captures it took, (URL hash, second) under each name of the URL: a file given twice
///   adds nothing, and an archive that held no capture when the import began is never
///   asked (no index round trip a record: on HBase, a scan each).
#[derive(Default)]
struct Across {
    records: Vec<(String, WarcRecord)>,
    bytes: u64,
    taken: HashSet<([u8; 8], i64)>,
    archive_empty: bool,
}

/// Bytes of revisit records held for the end of an import.
const DEFERRED_BYTES: u64 = 256 << 20;
/// Why a revisit is left out.
const SKIP_NO_ORIGINAL: &str = "revisit of a payload not in the files or the archive";

impl Across {
    /// Notes a capture of `url` at `date` as taken by this import.
    fn took(&mut self, url: &str, date: DateTime<Utc>) {
        let at = date.timestamp_micros();
        for n in capture_names(url) {
            self.taken.insert((indexer::keys::url_hash(&n), at));
        }
    }

    /// Keeps `record` (of `file`, `length` bytes) for the end; false when full.
    fn keep(&mut self, file: &Path, record: WarcRecord, length: u64) -> bool {
        if self.bytes + length > DEFERRED_BYTES {
            return false;
        }
        self.bytes += length;
        self.records.push((file.display().to_string(), record));
        true
    }
}

/// The answer a revisit refers to, in stored form (status, headers, body): in this file,
/// else the archive's first capture of its digest.
fn revisit_original(
    replay: &Replay<'_>,
    stores: &Stores,
    file: Option<(&Records, &Payloads)>,
    record: &WarcRecord,
) -> Result<Option<packer::HttpResponse>> {
    let max = replay.max_body_bytes();
    if let Some((records, (offset, length))) =
        file.and_then(|(records, payloads)| Some((records, payloads.find(record)?)))
    {
        let first = records.record_at(offset, length)?;
        let url = first.target_uri().unwrap_or_default().to_string();
        let (r, _) = archived_response(&first, &url)?.normalise_or_raw(max)?;
        return Ok(Some(packer::HttpResponse {
            status: r.status,
            status_line: r.status_line,
            headers: r.headers,
            body: r.body,
        }));
    }
    match record.payload_digest() {
        Some(digest) => crate::read::archived_original(stores, digest),
        None => Ok(None),
    }
}

/// Imports `files` in order; the summary counts what went where. A file cut
/// short is imported up to its last whole record and the others are
/// imported; then the import fails, naming each such file and where it
/// stops.
pub fn import(
    cfg: &Config,
    stores: &Stores,
    files: &[PathBuf],
    progress: &mut dyn Write,
) -> Result<ReplaySummary> {
    let started = Instant::now();
    // Refuse a missing or foreign file before anything is written.
    let framings = files
        .iter()
        .map(|f| Framing::of(f))
        .collect::<Result<Vec<(Framing, Format)>>>()?;
    let mut replay = Replay::new(cfg, stores)?;
    let max_block = replay.max_body_bytes().saturating_add(BLOCK_HEAD_ROOM);
    let mut broken = Vec::new();
    let mut across = Across::default();
    let mut any = false;
    stores.index.each_capture(&mut |_| {
        any = true;
        false
    })?;
    across.archive_empty = !any;
    for (file, &(framing, format)) in files.iter().zip(&framings) {
        // A file that cannot be opened is reported with the cut ones, after
        // what the others held is stored.
        let records = match Records::open(file, framing, format, max_block) {
            Ok(records) => records,
            Err(e) => {
                let _ = writeln!(progress, "harvest: {e:#}");
                broken.push(format!("{e:#}"));
                continue;
            }
        };
        if let Some(stop) = import_file(&mut replay, stores, file, &records, &mut across, progress)?
        {
            broken.push(stop);
        }
    }
    import_deferred(&mut replay, stores, across, progress)?;
    let summary = replay.finish(started)?;
    if broken.is_empty() {
        return Ok(summary);
    }
    let _ = write!(progress, "{}", summary.render("import"));
    bail!(
        "import incomplete ({} records read, {} captures indexed): {}",
        summary.records,
        summary.replayed,
        broken.join("; ")
    )
}

/// Imports the records of `file` into `replay`. Returns where the file
/// stops being readable when it is cut short or damaged (its whole records
/// before that are imported), `None` when it was read to its end.
fn import_file(
    replay: &mut Replay<'_>,
    stores: &Stores,
    file: &Path,
    records: &Records,
    across: &mut Across,
    progress: &mut dyn Write,
) -> Result<Option<String>> {
    replay.summary.files += 1;
    let mut payloads = Payloads::default();
    let mut last_report = Instant::now();
    let mut read = 0u64;
    let mut oversized = 0u64;
    let mut stop = None;
    let mut end = 0u64;
    let mut start = 0u64;
    // Damaged regions read past: (where the damage starts, where reading resumed, why).
    let mut damaged: Vec<(u64, u64, String)> = Vec::new();
    'segments: loop {
        for item in records.iter_from(start)? {
            let (offset, length, record) = match item {
                Ok((offset, length, Streamed::Record(record))) => (offset, length, record),
                Ok((offset, length, Streamed::Oversized(head))) => {
                    read += 1;
                    end = offset + length;
                    replay.summary.records += 1;
                    replay.summary.skip(SKIP_OVERSIZED);
                    oversized += 1;
                    if oversized <= NAMED_OVERSIZED {
                        let _ = writeln!(
                            progress,
                            "harvest: {}: left out {}: over max_body_bytes ({} bytes)",
                            file.display(),
                            describe(&head, offset, records.copy.is_some()),
                            replay.max_body_bytes()
                        );
                    }
                    continue;
                }
                Err(e) => {
                    let (offset, reason) = match e {
                        packer::Error::CorruptRecord { offset, reason } => (offset, reason),
                        other => (end, other.to_string()),
                    };
                    // Damage: read on from the next whole record, if there is one.
                    if let Some(next) = records.resync(offset)? {
                        let _ = writeln!(
                            progress,
                            "harvest: {}: bytes {offset}..{next} are not a readable record \
                             ({reason}); read on from byte {next}",
                            file.display()
                        );
                        replay.summary.damaged_regions += 1;
                        replay.summary.damaged_bytes += next - offset;
                        damaged.push((offset, next, reason));
                        start = next;
                        continue 'segments;
                    }
                    stop = Some((offset, reason));
                    break 'segments;
                }
            };
            read += 1;
            end = offset + length;
            replay.summary.records += 1;
            let place = Place {
                records,
                offset,
                length,
            };
            if let Some(record) =
                import_record(replay, stores, across, &mut payloads, record, &place)?
            {
                if !across.keep(file, record, length) {
                    replay.summary.skip(SKIP_NO_ORIGINAL);
                }
            }
            if last_report.elapsed().as_secs() >= 5 {
                last_report = Instant::now();
                let _ = writeln!(
                    progress,
                    "{}: {} records, {} captures so far",
                    file.display(),
                    replay.summary.records,
                    replay.summary.replayed
                );
            }
        }
        break;
    }
    if oversized > NAMED_OVERSIZED {
        let _ = writeln!(
            progress,
            "harvest: {}: left out {} more records over max_body_bytes",
            file.display(),
            oversized - NAMED_OVERSIZED
        );
    }
    let regions = damaged
        .iter()
        .map(|(from, to, reason)| format!("bytes {from}..{to} ({reason})"))
        .collect::<Vec<_>>()
        .join(", ");
    if !damaged.is_empty() {
        // Read past, as warcio reads past them: counted and named, not an error (what the
        // regions held is not readable by any tool; every record around them was read).
        let _ = writeln!(
            progress,
            "harvest: warning: {} has {} damaged region(s) read past to the next record: \
             {regions}",
            file.display(),
            damaged.len()
        );
    }
    let stop = match (stop, &records.broken_gzip) {
        (None, None) => None,
        (Some((offset, reason)), None) => {
            let size = std::fs::metadata(file).map(|m| m.len()).unwrap_or_default();
            Some(format!(
                "{} stops at byte {offset} of {size}: no whole record there ({reason}); \
                 the file is cut short or damaged; the {read} records before it were imported \
                 (or left out as the summary counts)",
                file.display()
            ))
        }
        (stop, Some((copied, gzip))) => Some(format!(
            "{} is cut short: its gzip stream breaks off after {copied} decompressed bytes \
             ({gzip}){}; the {read} records before decompressed byte {} were imported \
             (or left out as the summary counts)",
            file.display(),
            stop.as_ref()
                .map(|(_, reason)| format!(", inside a record ({reason})"))
                .unwrap_or_default(),
            stop.as_ref().map_or(end, |(offset, _)| *offset),
        )),
    };
    if let Some(stop) = &stop {
        let _ = writeln!(progress, "harvest: {stop}");
    }
    let _ = writeln!(
        progress,
        "{}: read ({} records so far, {} captures)",
        file.display(),
        replay.summary.records,
        replay.summary.replayed
    );
    Ok(stop)
}

/// The names a capture of `url` may be recorded under.
fn capture_names(url: &str) -> Vec<String> {
    let mut names = vec![url.to_string()];
    if let Ok(u) = url::Url::parse(url) {
        names.push(u.to_string());
        names.push(crawler::normalize::normalize(&u).to_string());
    }
    names.sort();
    names.dedup();
    names
}

/// Whether the archive holds a capture of `url` at `date` (to the microsecond, the precision
/// of a WARC-Date), or this import took one: a file imported again adds nothing.
fn already_archived(
    stores: &Stores,
    across: &Across,
    url: &str,
    date: DateTime<Utc>,
) -> Result<bool> {
    let names = capture_names(url);
    let at = date.timestamp_micros();
    if names
        .iter()
        .any(|n| across.taken.contains(&(indexer::keys::url_hash(n), at)))
    {
        return Ok(true);
    }
    if across.archive_empty {
        return Ok(false);
    }
    for name in names {
        if stores
            .index
            .captures_of(&name)?
            .iter()
            .any(|c| c.time.timestamp_micros() == at)
        {
            return Ok(true);
        }
    }
    Ok(false)
}

/// An oversized record for a message: where it is, what it is, its size.
fn describe(head: &RecordHead, offset: u64, decompressed: bool) -> String {
    format!(
        "the {} record at {}byte {offset} ({}), its block of {} bytes",
        head.record_type().unwrap_or("untyped"),
        if decompressed { "decompressed " } else { "" },
        head.target_uri()
            .map(|u| u.trim_matches(|c| c == '<' || c == '>'))
            .unwrap_or("no target URI"),
        head.block_len
    )
}

/// Hands one whole record to `replay` (or counts why it is left out).
/// Where a record was read: its file's records, and where in them.
struct Place<'a> {
    records: &'a Records,
    offset: u64,
    length: u64,
}

/// The revisits of `deferred`, once every file is read and what they held is indexed: an
/// original in a later file is found in the archive now; the others are left out, counted.
fn import_deferred(
    replay: &mut Replay<'_>,
    stores: &Stores,
    deferred: Across,
    progress: &mut dyn Write,
) -> Result<()> {
    if deferred.records.is_empty() {
        return Ok(());
    }
    replay.flush()?;
    let mut deferred = deferred;
    let records = std::mem::take(&mut deferred.records);
    let n = records.len();
    let mut found = 0;
    for (file, record) in records {
        let url = record
            .target_uri()
            .unwrap_or_default()
            .trim_matches(|c| c == '<' || c == '>')
            .to_string();
        let date = record_date(&record).with_context(|| format!("a revisit of {url} in {file}"))?;
        // The same capture taken from another file meanwhile.
        if already_archived(stores, &deferred, &url, date)? {
            replay.summary.skip(SKIP_ARCHIVED);
            continue;
        }
        let Some(original) = revisit_original(replay, stores, None, &record)? else {
            replay.summary.skip(SKIP_NO_ORIGINAL);
            continue;
        };
        found += 1;
        deferred.took(&url, date);
        import_revisit(replay, record, url, date, original)?;
    }
    let _ = writeln!(
        progress,
        "import: {found} of {n} revisits whose original was in a later file imported"
    );
    Ok(())
}

/// Imports one record; returns a revisit whose original is not found (yet).
fn import_record(
    replay: &mut Replay<'_>,
    stores: &Stores,
    across: &mut Across,
    payloads: &mut Payloads,
    record: WarcRecord,
    place: &Place<'_>,
) -> Result<Option<WarcRecord>> {
    let Place {
        records,
        offset,
        length,
        ..
    } = *place;
    let Some(kind) = Kind::of(&record) else {
        let t = record
            .record_type()
            .unwrap_or("untyped")
            .to_ascii_lowercase();
        replay.summary.skip(format!("{t} records"));
        return Ok(None);
    };
    let (Some(url), Some(date)) = (record.target_uri(), record_date(&record)) else {
        replay.summary.skip("capture without target URI or date");
        return Ok(None);
    };
    let url = url.trim_matches(|c| c == '<' || c == '>').to_string();
    if !(url.starts_with("http://") || url.starts_with("https://")) {
        replay.summary.skip("not an http(s) capture");
        return Ok(None);
    }
    if already_archived(stores, across, &url, date)? {
        replay.summary.skip(SKIP_ARCHIVED);
        return Ok(None);
    }
    match kind {
        Kind::Response => {
            across.took(&url, date);
            payloads.note(&record, offset, length);
            match archived_response(&record, &url) {
                Ok(r) => {
                    replay.page(r, None, None)?;
                }
                Err(_) => replay.summary.skip("response without an HTTP message"),
            }
        }
        Kind::Revisit => {
            let Some(original) =
                revisit_original(replay, stores, Some((records, &*payloads)), &record)?
            else {
                return Ok(Some(record));
            };
            across.took(&url, date);
            import_revisit(replay, record, url, date, original)?;
        }
        Kind::NotModified => match record.http_response() {
            Ok(http) => {
                across.took(&url, date);
                replay.not_modified(url, date, http.status_line, http.headers, None)?
            }
            Err(_) => replay.summary.skip("304 revisit without an HTTP head"),
        },
    }
    Ok(None)
}

/// Imports a revisit of `url` at `date` whose original answer is `original`.
fn import_revisit(
    replay: &mut Replay<'_>,
    record: WarcRecord,
    url: String,
    date: DateTime<Utc>,
    original: packer::HttpResponse,
) -> Result<()> {
    let mut r = match archived_response(&record, &url) {
        Ok(r) => r,
        // A revisit without an HTTP head of its own (some tools write none): the
        // original's, as pywb replays it.
        Err(_) => crawler::archived::ArchivedResponse {
            url: url.clone(),
            fetched_at: date,
            status: original.status,
            status_line: original.status_line.clone(),
            headers: original.headers.clone(),
            body: Vec::new(),
            ip_address: record.header("WARC-IP-Address").map(str::to_string),
        },
    };
    r.headers.retain(|(k, _)| {
        !crawler::fetch::DROPPED_HEADERS.contains(&k.to_ascii_lowercase().as_str())
    });
    r.body = original.body;
    replay.page(r, None, None)?;
    Ok(())
}
