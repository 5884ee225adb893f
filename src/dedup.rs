//! `harvest dedup`: duplicates across an existing archive (issue 12), read
//! through the same [`indexer::Index`] on the embedded store and on HBase.
//!
//! - The pages are the index rows the usual filters select (revisit rows
//!   included, nothing collapsed): [`indexer::Index::search`].
//! - Their captures come from one scan of the `captures` table
//!   ([`indexer::Index::each_capture`]), kept for the selected URLs only.
//! - **Exact groups**: captures sharing a payload digest, two or more
//!   (another URL's copy, or the same URL fetched again unchanged: a
//!   `revisit` record, or a 304 confirming it). Payload size = the HTTP
//!   body of the digest's first capture, read back from its pack; bytes
//!   saved = (captures - 1) x payload size (bytes not stored again).
//! - **Near-duplicate text groups**: the stories (`stories` table, filled
//!   at ingest by SimHash) of the selected pages with two or more copies;
//!   each lists every recorded copy, selected or not (a story's spread).
//!   Their bytes are stored in full: no bytes saved.
//! - **Near-duplicate image groups**: the images archived with the selected
//!   pages (`[crawl] images` / `requisites`, `images` table) whose pHashes
//!   are within [`classifier::imagehash::HashKind::threshold`] of their
//!   group's first image (not transitively: chains of merely similar
//!   pictures would join unrelated ones): a photo and its re-encoded,
//!   resized, recompressed copies.
//! - **Per source** (the seed's upload record): pages, captures, exact
//!   duplicates (captures of a digest captured earlier), near-duplicates
//!   (pages that repeat an earlier story), stories its pages belong to, and
//!   the stories it published first (the source of the story's first
//!   archived page, its root).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::Write;

use anyhow::Result;
use chrono::{DateTime, Utc};
use indexer::{Capture, PageRecord};
use serde::Serialize;

use crate::cli::{DedupArgs, DedupFormat};
use crate::stores::Stores;
use crate::{filters, read};

/// A group of captures with one payload digest.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct ExactGroup {
    pub digest: String,
    /// Captures of the digest (every record: response, revisit, 304).
    pub captures: u64,
    /// Distinct URLs among them.
    pub urls: u64,
    pub sources: Vec<String>,
    pub first_time: DateTime<Utc>,
    pub first_url: String,
    pub first_source: String,
    pub last_time: DateTime<Utc>,
    pub last_url: String,
    /// Bytes of the payload (HTTP body) of the first capture.
    pub payload_bytes: u64,
    /// (captures - 1) x payload_bytes.
    pub bytes_saved: u64,
}

/// A story with two or more near-duplicate copies.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct TextGroup {
    /// URL of the story's first archived page (its root).
    pub story: String,
    pub title: String,
    pub copies: u64,
    pub sources: Vec<String>,
    pub media: Vec<String>,
    /// Source and media of the root: the site that published it first.
    pub first_source: String,
    pub first_media: Option<String>,
    pub first_time: DateTime<Utc>,
    pub last_time: DateTime<Utc>,
    pub last_url: String,
}

/// One archived image of a near-duplicate image group.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct ImageCopy {
    pub url: String,
    /// The page that embedded it.
    pub page: String,
    pub source: String,
    pub time: DateTime<Utc>,
    pub digest: String,
    pub bytes: u64,
    pub width: u32,
    pub height: u32,
    /// pHash bits that differ from the group's first image.
    pub distance: u32,
}

/// Images (two or more) within the pHash threshold of each other: the same
/// photo re-encoded, resized or recompressed, across pages and sites.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct ImageGroup {
    pub images: u64,
    /// Distinct payloads among them (1: exact copies only).
    pub digests: u64,
    pub sources: Vec<String>,
    pub first_time: DateTime<Utc>,
    pub first_url: String,
    pub first_source: String,
    pub last_time: DateTime<Utc>,
    pub last_url: String,
    /// Payload bytes of all the images.
    pub bytes: u64,
    /// Bytes of exact copies not stored again (revisit records).
    pub bytes_saved: u64,
    /// Oldest first.
    pub copies: Vec<ImageCopy>,
}

/// The upload record of one source.
#[derive(Debug, Clone, Serialize, Default, PartialEq, Eq)]
pub struct SourceRow {
    pub source: String,
    /// Selected index rows (pages, revisit rows included).
    pub pages: u64,
    /// Captures of those pages' URLs.
    pub captures: u64,
    /// Captures whose payload an earlier capture already had.
    pub exact_duplicates: u64,
    /// Pages that nearly duplicate an earlier page (another story's copy).
    pub near_duplicates: u64,
    /// Distinct stories among its fingerprinted pages.
    pub stories: u64,
    /// Stories (two copies or more) whose first archived page is this source's.
    pub stories_first: u64,
    /// Payload bytes its exact duplicates did not store again.
    pub bytes_saved: u64,
}

/// Totals over the selection.
#[derive(Debug, Clone, Serialize, Default, PartialEq, Eq)]
pub struct Totals {
    pub pages: u64,
    pub captures: u64,
    pub exact_groups: u64,
    pub exact_duplicates: u64,
    pub bytes_saved: u64,
    pub text_groups: u64,
    pub near_duplicates: u64,
    /// Archived images of the selected pages (with perceptual hashes).
    pub images: u64,
    pub image_groups: u64,
}

/// The whole report.
#[derive(Debug, Clone, Serialize, Default)]
pub struct DedupReport {
    pub totals: Totals,
    pub exact: Vec<ExactGroup>,
    pub text: Vec<TextGroup>,
    pub images: Vec<ImageGroup>,
    pub sources: Vec<SourceRow>,
}

/// Builds the report for the pages `args.filters` select.
pub fn report(stores: &Stores, args: &DedupArgs) -> Result<DedupReport> {
    let mut q = filters::build_query(&args.filters, None)?;
    q.include_revisits = true;
    q.collapse_near_duplicates = false;
    q.limit = None;
    let pages: Vec<PageRecord> = stores
        .index
        .search(&q)?
        .into_iter()
        .map(|h| h.page)
        .collect();
    let source_of: HashMap<&str, &str> = pages
        .iter()
        .map(|p| (p.url.as_str(), p.source.as_str()))
        .collect();

    let mut captures: Vec<Capture> = Vec::new();
    stores.index.each_capture(&mut |c| {
        if source_of.contains_key(c.url.as_str()) {
            captures.push(c);
        }
        true
    })?;
    captures.sort_by(|a, b| a.time.cmp(&b.time).then_with(|| a.url.cmp(&b.url)));

    let mut sources: BTreeMap<String, SourceRow> = BTreeMap::new();
    for p in &pages {
        let r = source_row(&mut sources, &p.source);
        r.pages += 1;
        if p.near_duplicate_of.is_some() {
            r.near_duplicates += 1;
        }
    }

    let exact = exact_groups(stores, &captures, &source_of, &mut sources)?;
    let text = text_groups(stores, &pages, &mut sources)?;

    // Near-duplicate image groups: the images of the selected pages.
    let mut filed: Vec<indexer::ImageEntry> = Vec::new();
    stores.index.each_image(&mut |i| {
        if source_of.contains_key(i.page_url.as_str()) {
            filed.push(i);
        }
        true
    })?;
    filed.sort_by(|a, b| a.time.cmp(&b.time).then_with(|| a.url.cmp(&b.url)));
    let images = image_groups(&filed);

    let totals = Totals {
        pages: pages.len() as u64,
        captures: captures.len() as u64,
        exact_groups: exact.len() as u64,
        exact_duplicates: exact.iter().map(|g| g.captures - 1).sum(),
        bytes_saved: exact.iter().map(|g| g.bytes_saved).sum(),
        text_groups: text.len() as u64,
        near_duplicates: pages
            .iter()
            .filter(|p| p.near_duplicate_of.is_some())
            .count() as u64,
        images: filed.len() as u64,
        image_groups: images.len() as u64,
    };
    Ok(DedupReport {
        totals,
        exact,
        text,
        images,
        sources: sources.into_values().collect(),
    })
}

/// Exact groups: the captures (oldest first) by payload digest, the groups of two or
/// more by bytes saved; each source's captures, exact duplicates and bytes saved counted.
fn exact_groups(
    stores: &Stores,
    captures: &[Capture],
    source_of: &HashMap<&str, &str>,
    sources: &mut BTreeMap<String, SourceRow>,
) -> Result<Vec<ExactGroup>> {
    let mut by_digest: BTreeMap<&str, Vec<&Capture>> = BTreeMap::new();
    for c in captures {
        source_row(sources, source_of[c.url.as_str()]).captures += 1;
        if let Some(d) = &c.digest {
            by_digest.entry(d.as_str()).or_default().push(c);
        }
    }
    let mut exact = Vec::new();
    for (digest, group) in &by_digest {
        if group.len() < 2 {
            continue;
        }
        let payload_bytes = payload_len(stores, digest, group)?;
        for c in &group[1..] {
            let r = source_row(sources, source_of[c.url.as_str()]);
            r.exact_duplicates += 1;
            r.bytes_saved += payload_bytes;
        }
        let (first, last) = (group[0], group[group.len() - 1]);
        let urls: BTreeSet<&str> = group.iter().map(|c| c.url.as_str()).collect();
        let srcs: BTreeSet<&str> = group.iter().map(|c| source_of[c.url.as_str()]).collect();
        exact.push(ExactGroup {
            digest: (*digest).to_owned(),
            captures: group.len() as u64,
            urls: urls.len() as u64,
            sources: srcs.into_iter().map(str::to_owned).collect(),
            first_time: first.time,
            first_url: first.url.clone(),
            first_source: source_of[first.url.as_str()].to_owned(),
            last_time: last.time,
            last_url: last.url.clone(),
            payload_bytes,
            bytes_saved: (group.len() as u64 - 1) * payload_bytes,
        });
    }
    exact.sort_by(|a, b| {
        b.bytes_saved
            .cmp(&a.bytes_saved)
            .then(b.captures.cmp(&a.captures))
            .then_with(|| a.digest.cmp(&b.digest))
    });
    Ok(exact)
}

/// Near-duplicate text groups: the stories of the fingerprinted pages with two or more
/// copies, the largest first; each source's stories and the stories it had first counted.
fn text_groups(
    stores: &Stores,
    pages: &[PageRecord],
    sources: &mut BTreeMap<String, SourceRow>,
) -> Result<Vec<TextGroup>> {
    let mut roots: BTreeSet<&str> = BTreeSet::new();
    let mut stories_of: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for p in pages.iter().filter(|p| p.simhash.is_some()) {
        let root = indexer::neardup::story_root(p);
        roots.insert(root);
        stories_of
            .entry(p.source.as_str())
            .or_default()
            .insert(root);
    }
    for (s, set) in &stories_of {
        source_row(sources, s).stories = set.len() as u64;
    }
    let roots: Vec<&str> = roots.into_iter().collect();
    let mut text = Vec::new();
    for (root, copies) in roots.iter().zip(stores.index.stories(&roots)?) {
        if copies.len() < 2 {
            continue;
        }
        let first = copies.iter().find(|c| c.url == *root).unwrap_or(&copies[0]);
        let last = copies
            .iter()
            .max_by(|a, b| a.time.cmp(&b.time).then(a.fetched.cmp(&b.fetched)))
            .unwrap_or(first);
        let first_time = copies.iter().map(|c| c.time).min().unwrap_or(first.time);
        let srcs: BTreeSet<&str> = copies.iter().map(|c| c.source.as_str()).collect();
        let media: BTreeSet<&str> = copies.iter().filter_map(|c| c.media.as_deref()).collect();
        // (A first copy outside the selection still gets its source's row.)
        source_row(sources, &first.source).stories_first += 1;
        text.push(TextGroup {
            story: (*root).to_owned(),
            title: first.title.clone(),
            copies: copies.len() as u64,
            sources: srcs.into_iter().map(str::to_owned).collect(),
            media: media.into_iter().map(str::to_owned).collect(),
            first_source: first.source.clone(),
            first_media: first.media.clone(),
            first_time,
            last_time: last.time,
            last_url: last.url.clone(),
        });
    }
    text.sort_by(|a, b| b.copies.cmp(&a.copies).then_with(|| a.story.cmp(&b.story)));
    Ok(text)
}

/// Groups `filed` (oldest first) by pHash: each image joins the group of
/// the first image within the pHash threshold
/// ([`classifier::imagehash::HashKind::threshold`]) that leads one, so every
/// copy is within the threshold of its group's first image (no chains of
/// merely similar pictures); biggest groups first.
fn image_groups(filed: &[indexer::ImageEntry]) -> Vec<ImageGroup> {
    use classifier::imagehash::{hamming, leader_groups, HashKind};
    let hashes: Vec<u64> = filed.iter().map(|i| i.phash).collect();
    let mut out: Vec<ImageGroup> = leader_groups(&hashes, HashKind::Perceptual.threshold())
        .into_iter()
        .map(|members| {
            let first = &filed[members[0]];
            let last = &filed[*members.last().unwrap_or(&members[0])];
            // Copies and bytes per payload.
            let mut digests: BTreeMap<&str, (u64, u64)> = BTreeMap::new();
            for &m in &members {
                digests
                    .entry(filed[m].digest.as_str())
                    .or_insert((0, filed[m].bytes))
                    .0 += 1;
            }
            // Exact copies beyond a payload's first were stored as revisits.
            let bytes_saved = digests.values().map(|(n, bytes)| (n - 1) * bytes).sum();
            let sources: BTreeSet<&str> =
                members.iter().map(|&m| filed[m].source.as_str()).collect();
            ImageGroup {
                images: members.len() as u64,
                digests: digests.len() as u64,
                sources: sources.into_iter().map(str::to_owned).collect(),
                first_time: first.time,
                first_url: first.url.clone(),
                first_source: first.source.clone(),
                last_time: last.time,
                last_url: last.url.clone(),
                bytes: members.iter().map(|&m| filed[m].bytes).sum(),
                bytes_saved,
                copies: members
                    .iter()
                    .map(|&m| {
                        let i = &filed[m];
                        ImageCopy {
                            url: i.url.clone(),
                            page: i.page_url.clone(),
                            source: i.source.clone(),
                            time: i.time,
                            digest: i.digest.clone(),
                            bytes: i.bytes,
                            width: i.width,
                            height: i.height,
                            distance: hamming(first.phash, i.phash),
                        }
                    })
                    .collect(),
            }
        })
        .collect();
    out.sort_by(|a, b| {
        b.images
            .cmp(&a.images)
            .then_with(|| a.first_url.cmp(&b.first_url))
    });
    out
}

fn source_row<'a>(sources: &'a mut BTreeMap<String, SourceRow>, s: &str) -> &'a mut SourceRow {
    sources.entry(s.to_owned()).or_insert_with(|| SourceRow {
        source: s.to_owned(),
        ..SourceRow::default()
    })
}

/// Payload bytes of a digest: the HTTP body of its first `response`
/// capture among `group`, else of the first capture the `digests` table
/// names (read back from its pack).
fn payload_len(stores: &Stores, digest: &str, group: &[&Capture]) -> Result<u64> {
    let location = match group
        .iter()
        .find(|c| c.kind == indexer::CaptureKind::Response)
    {
        Some(c) => c.location.clone(),
        None => read::payload_location(stores, digest, "a duplicate group")?,
    };
    let http = read::response_at(stores, &location)?;
    Ok(http.body.len() as u64)
}

/// `harvest dedup`: the report on `out` in the chosen format.
pub fn run(stores: &Stores, args: &DedupArgs, out: &mut dyn Write) -> Result<()> {
    let mut r = report(stores, args)?;
    if args.limit > 0 {
        r.exact.truncate(args.limit);
        r.text.truncate(args.limit);
        r.images.truncate(args.limit);
    }
    match args.format {
        DedupFormat::Json => {
            serde_json::to_writer_pretty(&mut *out, &r)?;
            writeln!(out)?;
        }
        DedupFormat::Csv => write_csv(&r, out)?,
        DedupFormat::Table => write_table(&r, out)?,
    }
    Ok(())
}

fn time(t: DateTime<Utc>) -> String {
    t.format("%Y-%m-%d %H:%M:%S").to_string()
}

/// CSV: three tables one after the other, each with its own header line;
/// the first column names the table (`exact`, `text`, `source`).
fn write_csv(r: &DedupReport, out: &mut dyn Write) -> Result<()> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record([
        "section",
        "digest",
        "captures",
        "urls",
        "sources",
        "first_time",
        "first_url",
        "first_source",
        "last_time",
        "last_url",
        "payload_bytes",
        "bytes_saved",
    ])?;
    for g in &r.exact {
        w.write_record([
            "exact".to_owned(),
            g.digest.clone(),
            g.captures.to_string(),
            g.urls.to_string(),
            g.sources.join(" "),
            g.first_time.to_rfc3339(),
            g.first_url.clone(),
            g.first_source.clone(),
            g.last_time.to_rfc3339(),
            g.last_url.clone(),
            g.payload_bytes.to_string(),
            g.bytes_saved.to_string(),
        ])?;
    }
    out.write_all(&w.into_inner()?)?;
    writeln!(out)?;
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record([
        "section",
        "story",
        "title",
        "copies",
        "sources",
        "media",
        "first_source",
        "first_media",
        "first_time",
        "last_time",
        "last_url",
    ])?;
    for g in &r.text {
        w.write_record([
            "text".to_owned(),
            g.story.clone(),
            g.title.clone(),
            g.copies.to_string(),
            g.sources.join(" "),
            g.media.join(" | "),
            g.first_source.clone(),
            g.first_media.clone().unwrap_or_default(),
            g.first_time.to_rfc3339(),
            g.last_time.to_rfc3339(),
            g.last_url.clone(),
        ])?;
    }
    out.write_all(&w.into_inner()?)?;
    writeln!(out)?;
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record([
        "section", "group", "url", "page", "source", "time", "digest", "bytes", "width", "height",
        "distance",
    ])?;
    for (n, g) in r.images.iter().enumerate() {
        for c in &g.copies {
            w.write_record([
                "image".to_owned(),
                (n + 1).to_string(),
                c.url.clone(),
                c.page.clone(),
                c.source.clone(),
                c.time.to_rfc3339(),
                c.digest.clone(),
                c.bytes.to_string(),
                c.width.to_string(),
                c.height.to_string(),
                c.distance.to_string(),
            ])?;
        }
    }
    out.write_all(&w.into_inner()?)?;
    writeln!(out)?;
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record([
        "section",
        "source",
        "pages",
        "captures",
        "exact_duplicates",
        "near_duplicates",
        "stories",
        "stories_first",
        "bytes_saved",
    ])?;
    for s in &r.sources {
        w.write_record([
            "source".to_owned(),
            s.source.clone(),
            s.pages.to_string(),
            s.captures.to_string(),
            s.exact_duplicates.to_string(),
            s.near_duplicates.to_string(),
            s.stories.to_string(),
            s.stories_first.to_string(),
            s.bytes_saved.to_string(),
        ])?;
    }
    out.write_all(&w.into_inner()?)?;
    Ok(())
}

fn write_table(r: &DedupReport, out: &mut dyn Write) -> Result<()> {
    let t = &r.totals;
    writeln!(
        out,
        "{} pages, {} captures; exact: {} groups, {} duplicate captures, {} bytes saved; near-duplicate text: {} stories with copies, {} copies; images: {} archived, {} near-duplicate groups",
        t.pages, t.captures, t.exact_groups, t.exact_duplicates, t.bytes_saved, t.text_groups, t.near_duplicates, t.images, t.image_groups
    )?;
    writeln!(out, "\nEXACT DUPLICATES (same payload digest)")?;
    writeln!(
        out,
        "{:>8} {:>5} {:<19} {:<19} {:>10} {:>11}  {:<24} FIRST URL",
        "CAPTURES", "URLS", "FIRST (UTC)", "LAST (UTC)", "PAYLOAD", "SAVED", "SOURCES"
    )?;
    for g in &r.exact {
        writeln!(
            out,
            "{:>8} {:>5} {:<19} {:<19} {:>10} {:>11}  {:<24} {}",
            g.captures,
            g.urls,
            time(g.first_time),
            time(g.last_time),
            g.payload_bytes,
            g.bytes_saved,
            filters::clip(&g.sources.join(","), 24),
            g.first_url
        )?;
    }
    writeln!(out, "\nNEAR-DUPLICATE TEXT (stories)")?;
    writeln!(
        out,
        "{:>6} {:<16} {:<19} {:<19} {:<24} {:<40} FIRST URL",
        "COPIES", "FIRST SOURCE", "FIRST (UTC)", "LAST (UTC)", "SOURCES", "TITLE"
    )?;
    for g in &r.text {
        writeln!(
            out,
            "{:>6} {:<16} {:<19} {:<19} {:<24} {:<40} {}",
            g.copies,
            filters::clip(&g.first_source, 16),
            time(g.first_time),
            time(g.last_time),
            filters::clip(&g.sources.join(","), 24),
            filters::clip(&g.title, 40),
            g.story
        )?;
    }
    writeln!(out, "\nNEAR-DUPLICATE IMAGES (pHash)")?;
    writeln!(
        out,
        "{:>6} {:>7} {:<16} {:<19} {:<19} {:>10} {:<24} FIRST URL",
        "IMAGES", "DIGESTS", "FIRST SOURCE", "FIRST (UTC)", "LAST (UTC)", "BYTES", "SOURCES"
    )?;
    for g in &r.images {
        writeln!(
            out,
            "{:>6} {:>7} {:<16} {:<19} {:<19} {:>10} {:<24} {}",
            g.images,
            g.digests,
            filters::clip(&g.first_source, 16),
            time(g.first_time),
            time(g.last_time),
            g.bytes,
            filters::clip(&g.sources.join(","), 24),
            g.first_url
        )?;
    }
    writeln!(out, "\nPER SOURCE")?;
    writeln!(
        out,
        "{:<16} {:>6} {:>8} {:>10} {:>9} {:>7} {:>13} {:>11}",
        "SOURCE",
        "PAGES",
        "CAPTURES",
        "EXACT DUPS",
        "NEAR DUPS",
        "STORIES",
        "FIRST TO PUB",
        "SAVED"
    )?;
    for s in &r.sources {
        writeln!(
            out,
            "{:<16} {:>6} {:>8} {:>10} {:>9} {:>7} {:>13} {:>11}",
            filters::clip(&s.source, 16),
            s.pages,
            s.captures,
            s.exact_duplicates,
            s.near_duplicates,
            s.stories,
            s.stories_first,
            s.bytes_saved
        )?;
    }
    Ok(())
}
