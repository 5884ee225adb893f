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

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use packer::warc::{self, RecordReader, WarcRecord};

use crate::config::Config;
use crate::replay::{archived_response, record_date, Kind, Replay, ReplaySummary};
use crate::stores::Stores;

/// Largest whole-file-gzipped WARC decompressed to a temporary file.
const MAX_WHOLE_GZIP_BYTES: u64 = 64 << 30;

/// A WARC file opened for import: read in place, or from a decompressed
/// temporary copy when the whole file is one gzip stream.
struct Records {
    /// The handle the records are streamed from.
    stream: File,
    /// A handle of its own (its own position) to read a record back by
    /// offset while the stream goes on.
    lookup: File,
    /// The decompressed copy (removed when dropped).
    _copy: Option<tempfile::NamedTempFile>,
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
    fn open(path: &Path, framing: Framing) -> Result<Records> {
        let open = || File::open(path).with_context(|| format!("cannot read {}", path.display()));
        if framing == Framing::Gzip {
            let first = RecordReader::new(BufReader::new(open()?)).next();
            if let Some(Err(e)) = first {
                if !e.to_string().contains("more than one record") {
                    bail!("{}: the first record is unreadable: {e}", path.display());
                }
                let mut copy = tempfile::NamedTempFile::new()
                    .context("cannot create a temporary file to decompress into")?;
                let copied = std::io::copy(
                    &mut flate2::read::MultiGzDecoder::new(BufReader::new(open()?))
                        .take(MAX_WHOLE_GZIP_BYTES),
                    copy.as_file_mut(),
                )
                .with_context(|| format!("decompressing {}", path.display()))?;
                if copied >= MAX_WHOLE_GZIP_BYTES {
                    bail!(
                        "{} decompresses to more than {MAX_WHOLE_GZIP_BYTES} bytes",
                        path.display()
                    );
                }
                let reopen = || copy.reopen().context("reading the decompressed copy");
                return Ok(Records {
                    stream: reopen()?,
                    lookup: reopen()?,
                    _copy: Some(copy),
                });
            }
        }
        Ok(Records {
            stream: open()?,
            lookup: open()?,
            _copy: None,
        })
    }

    /// The records, with their offsets and stored lengths (once: the stream
    /// is consumed).
    fn iter(&self) -> RecordReader<BufReader<&File>> {
        RecordReader::new(BufReader::with_capacity(256 * 1024, &self.stream))
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

/// Imports `files` in order; the summary counts what went where.
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
    for (file, &framing) in files.iter().zip(&framings) {
        let records = Records::open(file, framing)?;
        replay.summary.files += 1;
        let mut payloads = Payloads::default();
        let mut last_report = Instant::now();
        for item in records.iter() {
            let (offset, length, record) = match item {
                Ok(r) => r,
                Err(e) => {
                    replay.summary.skip("unreadable tail of a file");
                    let _ = writeln!(
                        progress,
                        "harvest: {}: stopped at an unreadable record: {e}",
                        file.display()
                    );
                    break;
                }
            };
            replay.summary.records += 1;
            let Some(kind) = Kind::of(&record) else {
                let t = record
                    .record_type()
                    .unwrap_or("untyped")
                    .to_ascii_lowercase();
                replay.summary.skip(format!("{t} records"));
                continue;
            };
            let (Some(url), Some(date)) = (record.target_uri(), record_date(&record)) else {
                replay.summary.skip("capture without target URI or date");
                continue;
            };
            let url = url.trim_matches(|c| c == '<' || c == '>').to_string();
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                replay.summary.skip("not an http(s) capture");
                continue;
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
                    let Some(body) =
                        revisit_payload(&replay, stores, &records, &payloads, &record)?
                    else {
                        replay
                            .summary
                            .skip("revisit of a payload not in the file or the archive");
                        continue;
                    };
                    match archived_response(&record, &url) {
                        Ok(mut r) => {
                            r.headers.retain(|(k, _)| {
                                !crawler::fetch::DROPPED_HEADERS
                                    .contains(&k.to_ascii_lowercase().as_str())
                            });
                            r.body = body;
                            replay.page(r, None, None)?;
                        }
                        Err(_) => replay.summary.skip("revisit without an HTTP head"),
                    }
                }
                Kind::NotModified => match record.http_response() {
                    Ok(http) => {
                        replay.not_modified(url, date, http.status_line, http.headers, None)?
                    }
                    Err(_) => replay.summary.skip("304 revisit without an HTTP head"),
                },
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
        let _ = writeln!(
            progress,
            "{}: read ({} records so far, {} captures)",
            file.display(),
            replay.summary.records,
            replay.summary.replayed
        );
    }
    replay.finish(started)
}
