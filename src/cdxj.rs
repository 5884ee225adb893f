//! `harvest export cdxj`: the archive's captures as a CDXJ index in the
//! format of pywb's `cdxj-indexer` and OutbackCDX:
//!
//! ```text
//! com,example)/a 20240501101112 {"url": "http://example.com/a", "mime": "text/html", "status": "200", "digest": "sha1:…", "length": "1043", "offset": "333", "filename": "news/2024/05/01/news-20240501-c0-…warc.gz"}
//! ```
//!
//! One line per `response` and `revisit` record (mime `warc/revisit`), as
//! `cdxj-indexer` indexes them; the SURT key ([`crate::surt`]), the
//! 14-digit WARC-Date, then the JSON fields in `cdxj-indexer`'s order and
//! spelling (`json.dumps`: `", "` and `": "`, non-ASCII escaped). `filename`
//! is the pack path relative to the pack store's root (`cdxj-indexer
//! --dir-root PACKS` writes the same). Lines are sorted as byte strings,
//! duplicates dropped (what `cdxj-indexer --sort` does), by an external
//! merge sort (`extsort`): at most [`SORT_BUFFER_LINES`] lines in memory,
//! sorted runs spilled to temporary files and merged.
//!
//! One deliberate difference, for replay: a 304 capture (a
//! server-not-modified `revisit` record holds the 304 answer, which pywb
//! and other replay tools serve as an empty 304) is listed at its own date
//! as the capture it confirmed: the URL's latest earlier capture of the same
//! payload, with its record's status, mime and location. So an unchanged
//! page shows its content at every date it was fetched, and its capture
//! history (`history` of `GET /api/pages/{id}`, the packs) still holds
//! every 304.
//! `--records` lists every record as it is, as `cdxj-indexer` does.
//!
//! Which captures: without filters, every capture the `captures` table
//! records (one scan); with filters (the flags of `harvest query`), every
//! capture of the pages they select (revisit rows included) and of their
//! requisites, so that the selection replays: every archived capture of
//! what a selected page embeds (images, stylesheets, scripts, icons, media,
//! read again from the page's stored HTML) and of what those stylesheets
//! reference, as the crawl follows them. A page with no recorded capture (an
//! archive from before the captures table) gets a line from its page row.

use std::cmp::Ordering;
use std::collections::HashSet;
use std::io::{self, Read, Write};

use anyhow::{Context, Result};
use chrono::{DateTime, Utc};
use extsort::{ExternalSorter, PushExternalSorter, Sortable};
use indexer::{Capture, CaptureKind, PackLocation, PageRecord};

use crate::cli::CdxjArgs;
use crate::filters::FilterSpec;
use crate::stores::Stores;

/// Lines held in memory before a sorted run is spilled to a file: about
/// 50 MiB at the ~250 bytes of a typical line (a URL of 100 characters).
pub const SORT_BUFFER_LINES: usize = 200_000;
/// Pages read per index call for a filtered export.
const PAGE_BATCH: usize = 1_000;
/// `mime` of a revisit record in `cdxj-indexer`'s output.
pub const REVISIT_MIME: &str = "warc/revisit";

/// The `mime` field `cdxj-indexer` derives from a Content-Type value: what
/// comes before the first `;` or white space.
pub fn cdx_mime(content_type: &str) -> &str {
    let v = content_type.trim();
    v.split(|c: char| c == ';' || c.is_whitespace())
        .next()
        .unwrap_or("")
        .trim()
}

/// One record to index.
#[derive(Debug, Clone)]
pub struct Entry<'a> {
    /// WARC-Target-URI.
    pub url: &'a str,
    /// WARC-Date.
    pub time: DateTime<Utc>,
    /// A `revisit` record (else `response`).
    pub revisit: bool,
    /// HTTP status of the record's HTTP head.
    pub status: u16,
    /// Content-Type of the HTTP head: `None` = no such header.
    pub content_type: Option<&'a str>,
    /// WARC-Payload-Digest (`None`: the record has none).
    pub digest: Option<&'a str>,
    /// Where the record is.
    pub location: &'a PackLocation,
}

/// The CDXJ line of `e` (with its newline).
pub fn line(e: &Entry<'_>) -> String {
    let mut out = String::with_capacity(256);
    out.push_str(&crate::surt::surt(e.url));
    out.push(' ');
    out.push_str(&e.time.format("%Y%m%d%H%M%S").to_string());
    out.push_str(" {");
    let status = e.status.to_string();
    let length = e.location.length.to_string();
    let offset = e.location.offset.to_string();
    let mime = if e.revisit {
        Some(REVISIT_MIME)
    } else {
        e.content_type.map(cdx_mime)
    };
    let fields = [
        ("url", Some(e.url)),
        ("mime", mime),
        ("status", Some(status.as_str())),
        ("digest", e.digest),
        ("length", Some(length.as_str())),
        ("offset", Some(offset.as_str())),
        ("filename", Some(e.location.path.as_str())),
    ];
    let mut first = true;
    for (name, value) in fields {
        let Some(value) = value else { continue };
        if !first {
            out.push_str(", ");
        }
        first = false;
        push_json_string(&mut out, name);
        out.push_str(": ");
        push_json_string(&mut out, value);
    }
    out.push_str("}\n");
    out
}

/// A JSON string as Python's `json.dumps` writes it (`ensure_ascii`): `\"`,
/// `\\`, `\b \f \n \r \t`, every other character outside `' '..='~'` as
/// `\uXXXX` (UTF-16, so two escapes beyond the BMP).
fn push_json_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            ' '..='~' => out.push(c),
            _ => {
                let mut units = [0u16; 2];
                for u in c.encode_utf16(&mut units) {
                    out.push_str(&format!("\\u{u:04x}"));
                }
            }
        }
    }
    out.push('"');
}

/// One CDXJ line as `extsort` spills it: its length, then its bytes.
struct SortLine(String);

impl Sortable for SortLine {
    fn encode<W: Write>(&self, w: &mut W) -> io::Result<()> {
        w.write_all(&(self.0.len() as u64).to_le_bytes())?;
        w.write_all(self.0.as_bytes())
    }

    fn decode<R: Read>(r: &mut R) -> io::Result<SortLine> {
        let mut len = [0u8; 8];
        r.read_exact(&mut len)?;
        let mut bytes = vec![0u8; u64::from_le_bytes(len) as usize];
        r.read_exact(&mut bytes)?;
        String::from_utf8(bytes)
            .map(SortLine)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
    }
}

/// Sorts lines with bounded memory (`extsort`): runs of at most `limit`
/// lines are sorted and spilled to temporary files, then merged; equal
/// lines are written once.
pub struct LineSorter {
    sorter: PushExternalSorter<SortLine, fn(&SortLine, &SortLine) -> Ordering>,
}

impl LineSorter {
    pub fn new(limit: usize) -> LineSorter {
        let by_bytes: fn(&SortLine, &SortLine) -> Ordering = |a, b| a.0.cmp(&b.0);
        LineSorter {
            sorter: ExternalSorter::new()
                .with_segment_size(limit)
                .pushed_by(by_bytes),
        }
    }

    /// Adds one line (ending in `\n`).
    pub fn push(&mut self, line: String) -> Result<()> {
        self.sorter
            .push(SortLine(line))
            .context("spilling sorted lines to a temporary file")
    }

    /// Writes every line, sorted, each distinct line once; returns how many
    /// and the number of sorted runs that were spilled.
    pub fn finish(self, out: &mut dyn Write) -> Result<(u64, usize)> {
        let sorted = self.sorter.done().context("merging sorted lines")?;
        let runs = sorted.disk_segment_count();
        let mut written = 0u64;
        let mut last = String::new();
        for line in sorted {
            let SortLine(line) = line.context("reading back sorted lines")?;
            if line != last {
                out.write_all(line.as_bytes())?;
                written += 1;
                last = line;
            }
        }
        Ok((written, runs))
    }
}

/// The Content-Type of the HTTP head of the record at `loc` (`None` = no
/// such header): for captures recorded before the pipeline kept it.
fn content_type_in_pack(stores: &Stores, loc: &PackLocation) -> Result<Option<String>> {
    let record = crate::read::record_at(stores, loc)?;
    let http = record
        .http_response()
        .with_context(|| format!("the record at {}:{} has no HTTP head", loc.path, loc.offset))?;
    Ok(http.header("content-type").map(str::to_string))
}

/// The line of one capture, as its record is (what `cdxj-indexer` writes).
fn capture_line(stores: &Stores, c: &Capture) -> Result<String> {
    capture_line_at(stores, c, c.time)
}

/// The line of capture `c`'s record, dated `time`.
fn capture_line_at(stores: &Stores, c: &Capture, time: DateTime<Utc>) -> Result<String> {
    let revisit = c.kind != CaptureKind::Response;
    let content_type = match (&c.content_type, revisit) {
        (_, true) => None,
        (Some(known), false) => known.clone(),
        (None, false) => content_type_in_pack(stores, &c.location)?,
    };
    // A 304's revisit record has no WARC-Payload-Digest (the capture keeps
    // the unchanged payload's): cdxj-indexer writes no digest for it.
    let digest = match c.kind {
        CaptureKind::NotModified => None,
        _ => c.digest.as_deref(),
    };
    Ok(line(&Entry {
        url: &c.url,
        time,
        revisit,
        status: c.status,
        content_type: content_type.as_deref(),
        digest,
        location: &c.location,
    }))
}

/// The lines of captures in key order (URL hash, then time), as replay
/// needs them: a 304 capture (a server-not-modified revisit, which holds
/// the 304 answer: pywb would replay it as an empty 304) is listed at its
/// own date as the capture it confirmed, the URL's latest earlier capture
/// of the same payload (its record, status and mime). With `records`,
/// every capture as its record is, as `cdxj-indexer` lists it.
struct Lines {
    records: bool,
    /// URL hash of the captures seen last.
    hash: [u8; 8],
    /// (URL, payload digest) -> the latest capture holding it (a response,
    /// or a revisit replay resolves), of the URLs with hash `hash`.
    latest: std::collections::HashMap<(String, String), Capture>,
    /// 304s listed as their records: no earlier capture of their payload.
    unresolved: u64,
    /// 304s listed as the capture they confirmed.
    confirmed: u64,
}

impl Lines {
    fn new(records: bool) -> Lines {
        Lines {
            records,
            hash: [0; 8],
            latest: std::collections::HashMap::new(),
            unresolved: 0,
            confirmed: 0,
        }
    }

    /// The line of `c`, the next capture in key order.
    fn line(&mut self, stores: &Stores, c: &Capture) -> Result<String> {
        if self.records {
            return capture_line(stores, c);
        }
        let hash = indexer::keys::url_hash(&c.url);
        if hash != self.hash {
            self.hash = hash;
            self.latest.clear();
        }
        let Some(digest) = &c.digest else {
            return capture_line(stores, c);
        };
        let key = (c.url.clone(), digest.clone());
        if c.kind != CaptureKind::NotModified {
            self.latest.insert(key, c.clone());
            return capture_line(stores, c);
        }
        match self.latest.get(&key) {
            Some(original) => {
                self.confirmed += 1;
                capture_line_at(stores, original, c.time)
            }
            None => {
                self.unresolved += 1;
                capture_line(stores, c)
            }
        }
    }
}

/// The line of a page row without recorded captures.
fn page_line(stores: &Stores, p: &PageRecord) -> Result<String> {
    let location = p.location();
    let content_type = if p.revisit {
        None
    } else {
        content_type_in_pack(stores, &location)?
    };
    Ok(line(&Entry {
        url: &p.url,
        time: p.fetched,
        revisit: p.revisit,
        status: p.status,
        content_type: content_type.as_deref(),
        digest: Some(&p.digest),
        location: &location,
    }))
}

/// Every line of the selection into `sorter`.
fn collect(
    stores: &Stores,
    spec: &FilterSpec,
    lines: &mut Lines,
    sorter: &mut LineSorter,
) -> Result<()> {
    if spec.selects_everything() {
        let mut failed = None;
        let mut seen = 0u64;
        stores.index.each_capture(&mut |c| {
            seen += 1;
            match lines.line(stores, &c).and_then(|l| sorter.push(l)) {
                Ok(()) => true,
                Err(e) => {
                    failed = Some(e);
                    false
                }
            }
        })?;
        if let Some(e) = failed {
            return Err(e);
        }
        if seen > 0 {
            return Ok(());
        }
        // No captures table: an archive from before it; its page rows.
    }
    let (mut q, _) = spec
        .build(None, usize::MAX)
        .map_err(|e| anyhow::anyhow!(e.cli()))?;
    q.include_revisits = true;
    q.sort = indexer::Sort::TimeAsc;
    // Requisites already exported (by URL hash): a site's logo once, not once
    // a page.
    let mut requisites: HashSet<[u8; 8]> = HashSet::new();
    loop {
        q.limit = Some(PAGE_BATCH);
        let page = stores.index.search_page(&q)?;
        // Reading and tokenising the pages is most of the work: in parallel.
        let embeds = crate::replay::par_map(page.hits.iter().collect(), |hit| {
            page_embeds(stores, &hit.page)
        });
        for (hit, embeds) in page.hits.iter().zip(embeds) {
            let captures = stores.index.captures_of(&hit.page.url)?;
            if captures.is_empty() {
                sorter.push(page_line(stores, &hit.page)?)?;
            }
            for c in &captures {
                sorter.push(lines.line(stores, c)?)?;
            }
            push_requisites(stores, embeds?, &mut requisites, lines, sorter)?;
        }
        match page.next_cursor {
            Some(c) => q.cursor = Some(indexer::Cursor::decode(&c)?),
            None => return Ok(()),
        }
    }
}

/// What the stored HTML of `page` embeds.
fn page_embeds(stores: &Stores, page: &PageRecord) -> Result<Vec<extract::Embed>> {
    let Ok(url) = url::Url::parse(&page.url) else {
        return Ok(Vec::new());
    };
    let html = crate::read::page_text(stores, page)?;
    Ok(extract::stream_embeds(&html, &url))
}

/// The captures of a page's requisites not in `done` into `sorter`: its
/// `embeds` ([`page_embeds`]) and, as the crawl follows them, what those
/// stylesheets reference (read from their latest capture). URLs the archive
/// does not hold are skipped.
fn push_requisites(
    stores: &Stores,
    embeds: Vec<extract::Embed>,
    done: &mut HashSet<[u8; 8]>,
    lines: &mut Lines,
    sorter: &mut LineSorter,
) -> Result<()> {
    let mut todo: Vec<(extract::Embed, u32)> = embeds.into_iter().map(|e| (e, 0)).rev().collect();
    while let Some((embed, depth)) = todo.pop() {
        if !done.insert(indexer::keys::url_hash(&embed.url)) {
            continue;
        }
        let captures = stores.index.captures_of(&embed.url)?;
        for c in &captures {
            sorter.push(lines.line(stores, c)?)?;
        }
        if captures.is_empty() || !crawler::embeds::follow_style(embed.kind, depth) {
            continue;
        }
        let css = crate::read::capture(stores, &embed.url, None, crate::read::Part::Payload)?;
        let Ok(base) = url::Url::parse(&embed.url) else {
            continue;
        };
        for r in crawler::embeds::stylesheet_refs(&String::from_utf8_lossy(&css), &base) {
            todo.push((r, depth + 1));
        }
    }
    Ok(())
}

/// Writes the CDXJ lines of the selection to `out` (with `records`, each
/// capture as its record is, see [`Lines`]); returns how many.
pub fn export(
    stores: &Stores,
    spec: &FilterSpec,
    records: bool,
    out: &mut dyn Write,
) -> Result<u64> {
    let mut sorter = LineSorter::new(SORT_BUFFER_LINES);
    let mut lines = Lines::new(records);
    collect(stores, spec, &mut lines, &mut sorter)?;
    let (n, runs) = sorter.finish(out)?;
    if lines.unresolved > 0 {
        tracing::warn!(
            captures = lines.unresolved,
            "304 captures without an earlier capture of their payload are listed as their revisit records (replay tools answer them with an empty 304); `harvest fsck` names them"
        );
    }
    tracing::info!(
        lines = n,
        spilled_runs = runs,
        not_modified_as_content = lines.confirmed,
        "exported CDXJ"
    );
    Ok(n)
}

/// `harvest export cdxj`: to `--out` (through `files`: a local file is
/// written under a temporary name beside it and renamed when complete) or
/// to `out`.
pub fn run(
    stores: &Stores,
    args: &CdxjArgs,
    out: &mut dyn Write,
    err: &mut dyn Write,
    files: &crate::outfile::Files,
) -> Result<()> {
    let spec = args.filters.clone();
    match &args.out {
        None => {
            export(stores, &spec, args.records, out)?;
            out.flush()?;
        }
        Some(path) => {
            let mut file = files.create(path)?;
            let n = export(stores, &spec, args.records, &mut file)?;
            file.commit()?;
            writeln!(err, "harvest: {n} CDXJ lines written to {}", path.display())?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mime_is_the_content_type_before_parameters() {
        assert_eq!(cdx_mime("text/html; charset=utf-8"), "text/html");
        assert_eq!(cdx_mime(" text/html "), "text/html");
        assert_eq!(cdx_mime("text/html;charset=utf-8"), "text/html");
        assert_eq!(cdx_mime(""), "");
    }

    #[test]
    fn json_strings_are_escaped_like_python() {
        let mut s = String::new();
        push_json_string(&mut s, "a\"b\\c\n/é军😀\u{7f}");
        assert_eq!(s, r#""a\"b\\c\n/\u00e9\u519b\ud83d\ude00\u007f""#);
    }

    #[test]
    fn a_line_has_the_fields_of_cdxj_indexer() {
        let loc = PackLocation {
            path: "t/2024/05/01/c0-0.warc.gz".into(),
            offset: 333,
            length: 1043,
        };
        let time = DateTime::parse_from_rfc3339("2024-05-01T10:11:12.5Z")
            .unwrap()
            .with_timezone(&Utc);
        let mut e = Entry {
            url: "http://www.example.com/a?b=1",
            time,
            revisit: false,
            status: 200,
            content_type: Some("text/html; charset=utf-8"),
            digest: Some("sha1:AAAA"),
            location: &loc,
        };
        assert_eq!(
            line(&e),
            "com,example)/a?b=1 20240501101112 {\"url\": \"http://www.example.com/a?b=1\", \"mime\": \"text/html\", \"status\": \"200\", \"digest\": \"sha1:AAAA\", \"length\": \"1043\", \"offset\": \"333\", \"filename\": \"t/2024/05/01/c0-0.warc.gz\"}\n"
        );
        e.content_type = None;
        assert!(!line(&e).contains("mime"));
        e.revisit = true;
        assert!(line(&e).contains("\"mime\": \"warc/revisit\""));
    }

    #[test]
    fn the_external_sort_equals_an_in_memory_sort() {
        // Lines out of order, with repeats, through runs of 100 lines.
        let mut x: u64 = 7;
        let mut lines = Vec::new();
        for _ in 0..2000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            lines.push(format!("k{} {}\n", (x >> 33) % 500, (x >> 20) % 3));
        }
        let mut sorter = LineSorter::new(100);
        for l in &lines {
            sorter.push(l.clone()).unwrap();
        }
        let mut out = Vec::new();
        let (n, runs) = sorter.finish(&mut out).unwrap();
        assert!(runs > 10, "{runs} runs");
        let mut expected = lines.clone();
        expected.sort();
        expected.dedup();
        assert_eq!(n, expected.len() as u64);
        assert_eq!(String::from_utf8(out).unwrap(), expected.concat());
    }
}
