//! `harvest import FILE.warc[.gz]…`: WARC files written by other tools
//! (wget `--warc-file`, Heritrix, warcio, Browsertrix) brought into the
//! archive as if crawled at each record's `WARC-Date`.
//!
//! - `response` records with an HTML 2xx answer: the body is de-chunked and
//!   content-decoded, then extracted, classified, deduplicated, packed (a new
//!   record in harvest's packs) and indexed by the crawl's own pipeline;
//! - `revisit` records (identical payload): the payload comes from the
//!   record they refer to in the same file, or from the archive by digest;
//!   they become revisits here too;
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
//! A file cut short (or damaged) is imported up to its last whole record,
//! the other files are imported, and then the import fails (exit 1) naming
//! each such file and the offset where it stops.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

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
}

/// How a WARC file is stored, told by its first bytes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Framing {
    /// Starts with `WARC/`.
    Plain,
    /// Starts with a gzip header: a member per record, or the whole file in one.
    Gzip,
}

impl Framing {
    /// The framing of `path`; an error when it is not a file or starts with neither `WARC/`
    /// nor a gzip header.
    fn of(path: &Path) -> Result<Framing> {
        let meta =
            std::fs::metadata(path).with_context(|| format!("cannot read {}", path.display()))?;
        if !meta.is_file() {
            bail!("{} is not a file", path.display());
        }
        let mut head = Vec::with_capacity(5);
        File::open(path)
            .and_then(|f| f.take(5).read_to_end(&mut head))
            .with_context(|| format!("cannot read {}", path.display()))?;
        if head.starts_with(&[0x1f, 0x8b]) {
            Ok(Framing::Gzip)
        } else if head == b"WARC/" {
            Ok(Framing::Plain)
        } else {
            bail!(
                "{} is not a WARC file (it starts with neither WARC/ nor a gzip header)",
                path.display()
            )
        }
    }
}

impl Records {
    /// Opens `path`; blocks longer than `max_block` will be read past. A
    /// file whose first record is unreadable is opened all the same: reading
    /// it reports where it stops.
    fn open(path: &Path, framing: Framing, max_block: u64) -> Result<Records> {
        let open = || File::open(path).with_context(|| format!("cannot read {}", path.display()));
        if framing == Framing::Gzip {
            // The first record tells a member per record from one member
            // for the whole file (its block read past when long: telling
            // holds no more than reading does).
            let first = RecordReader::new(BufReader::new(open()?))
                .with_max_block(max_block)
                .next();
            if let Some(Err(e)) = first {
                if e.to_string().contains("more than one record") {
                    return Records::decompressed(path, max_block);
                }
            }
        }
        Ok(Records {
            stream: open()?,
            lookup: open()?,
            copy: None,
            max_block,
            broken_gzip: None,
        })
    }

    /// A whole-file gzip, decompressed to a temporary file; a stream that
    /// breaks off (a file cut short) keeps what came before the break.
    fn decompressed(path: &Path, max_block: u64) -> Result<Records> {
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
        })
    }

    /// The records, with their offsets and stored lengths (once: the stream
    /// is consumed).
    fn iter(&self) -> RecordReader<BufReader<&File>> {
        RecordReader::new(BufReader::with_capacity(256 * 1024, &self.stream))
            .with_max_block(self.max_block)
    }

    /// The record stored at `offset` (`length` bytes).
    fn record_at(&self, offset: u64, length: u64) -> Result<WarcRecord> {
        let mut buf = vec![0u8; usize::try_from(length).context("record length")?];
        let mut f = &self.lookup;
        f.seek(SeekFrom::Start(offset))?;
        f.read_exact(&mut buf).context("reading a record back")?;
        Ok(warc::read_record(&buf)?)
    }
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

/// The stored-form body of the response a revisit refers to: in this file,
/// else the archive's first capture of its digest.
fn revisit_payload(
    replay: &Replay<'_>,
    stores: &Stores,
    records: &Records,
    payloads: &Payloads,
    record: &WarcRecord,
) -> Result<Option<Vec<u8>>> {
    let max = replay.max_body_bytes();
    if let Some((offset, length)) = payloads.find(record) {
        let first = records.record_at(offset, length)?;
        let url = first.target_uri().unwrap_or_default().to_string();
        let body = archived_response(&first, &url)?.normalise(max)?.body;
        return Ok(Some(body));
    }
    match record.payload_digest() {
        Some(digest) => crate::read::archived_payload(stores, digest),
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
        .collect::<Result<Vec<_>>>()?;
    let mut replay = Replay::new(cfg, stores)?;
    let max_block = replay.max_body_bytes().saturating_add(BLOCK_HEAD_ROOM);
    let mut broken = Vec::new();
    for (file, &framing) in files.iter().zip(&framings) {
        // A file that cannot be opened is reported with the cut ones, after
        // what the others held is stored.
        let records = match Records::open(file, framing, max_block) {
            Ok(records) => records,
            Err(e) => {
                let _ = writeln!(progress, "harvest: {e:#}");
                broken.push(format!("{e:#}"));
                continue;
            }
        };
        if let Some(stop) = import_file(&mut replay, stores, file, &records, progress)? {
            broken.push(stop);
        }
    }
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
    progress: &mut dyn Write,
) -> Result<Option<String>> {
    replay.summary.files += 1;
    let mut payloads = Payloads::default();
    let mut last_report = Instant::now();
    let mut read = 0u64;
    let mut oversized = 0u64;
    let mut stop = None;
    let mut end = 0u64;
    for item in records.iter() {
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
                stop = Some((offset, reason));
                break;
            }
        };
        read += 1;
        end = offset + length;
        replay.summary.records += 1;
        import_record(
            replay,
            stores,
            records,
            &mut payloads,
            record,
            offset,
            length,
        )?;
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
    if oversized > NAMED_OVERSIZED {
        let _ = writeln!(
            progress,
            "harvest: {}: left out {} more records over max_body_bytes",
            file.display(),
            oversized - NAMED_OVERSIZED
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
fn import_record(
    replay: &mut Replay<'_>,
    stores: &Stores,
    records: &Records,
    payloads: &mut Payloads,
    record: WarcRecord,
    offset: u64,
    length: u64,
) -> Result<()> {
    let Some(kind) = Kind::of(&record) else {
        let t = record
            .record_type()
            .unwrap_or("untyped")
            .to_ascii_lowercase();
        replay.summary.skip(format!("{t} records"));
        return Ok(());
    };
    let (Some(url), Some(date)) = (record.target_uri(), record_date(&record)) else {
        replay.summary.skip("capture without target URI or date");
        return Ok(());
    };
    let url = url.trim_matches(|c| c == '<' || c == '>').to_string();
    if !(url.starts_with("http://") || url.starts_with("https://")) {
        replay.summary.skip("not an http(s) capture");
        return Ok(());
    }
    match kind {
        Kind::Response => {
            payloads.note(&record, offset, length);
            match archived_response(&record, &url) {
                Ok(r) => {
                    replay.page(r, None, None)?;
                }
                Err(_) => replay.summary.skip("response without an HTTP message"),
            }
        }
        Kind::Revisit => {
            let Some(body) = revisit_payload(replay, stores, records, payloads, &record)? else {
                replay
                    .summary
                    .skip("revisit of a payload not in the file or the archive");
                return Ok(());
            };
            match archived_response(&record, &url) {
                Ok(mut r) => {
                    r.headers.retain(|(k, _)| {
                        !crawler::fetch::DROPPED_HEADERS.contains(&k.to_ascii_lowercase().as_str())
                    });
                    r.body = body;
                    replay.page(r, None, None)?;
                }
                Err(_) => replay.summary.skip("revisit without an HTTP head"),
            }
        }
        Kind::NotModified => match record.http_response() {
            Ok(http) => replay.not_modified(url, date, http.status_line, http.headers, None)?,
            Err(_) => replay.summary.skip("304 revisit without an HTTP head"),
        },
    }
    Ok(())
}
