//! The read path: archived captures read back from their packs, for the
//! command line (`harvest get`, `harvest query --format jsonl`) and the API
//! (`/api/search`, `/api/pages/{id}`, `/api/pages/{id}/raw`) alike.
//!
//! - a capture by URL, the latest or the one in force at a time
//!   ([`capture`]); an archived redirect is followed through the archive to
//!   the capture it leads to ([`MAX_REDIRECTS`] hops);
//! - a page by id ([`page_by_id`], [`page_detail`], [`page_response`]);
//! - a revisit (identical payload or 304) followed to the record that holds
//!   its payload: the first capture of its digest ([`payload_location`]);
//! - every record read through [`record_at`], at a [`PackLocation`] taken
//!   from the index (`PageRecord::location()`, a capture's, a digest's).
//!
//! And one JSON shape of a page ([`PageJson`]) for the command line's JSON
//! lines and the API's hits, which `/api/pages/{id}` extends
//! ([`PageDetailJson`]).

use anyhow::{Context, Result};
use chrono::{DateTime, Utc};
use indexer::{CaptureKind, PackLocation, PageHit, PageRecord};
use packer::warc::{HttpResponse, WarcRecord};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::stores::Stores;

/// Archived redirects [`capture`] follows before it gives up.
pub const MAX_REDIRECTS: usize = 10;

/// What [`capture`] gives back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    /// The HTTP body, a revisit's taken from the capture that holds it, an
    /// archived redirect followed.
    Payload,
    /// The capture's own WARC record as text (`--record`), not followed.
    Record,
}

/// The WARC record at a pack location.
pub fn record_at(stores: &Stores, loc: &PackLocation) -> Result<WarcRecord> {
    let raw = stores
        .packs
        .read_range(&loc.path, loc.offset, loc.length)
        .with_context(|| format!("reading {} at {}+{}", loc.path, loc.offset, loc.length))?;
    packer::warc::read_record(&raw).with_context(|| {
        format!(
            "the record at {}+{} is not valid WARC",
            loc.path, loc.offset
        )
    })
}

/// The HTTP response held by the record at `loc`.
pub fn response_at(stores: &Stores, loc: &PackLocation) -> Result<HttpResponse> {
    record_at(stores, loc)?.http_response().with_context(|| {
        format!(
            "the record at {}+{} has no HTTP response",
            loc.path, loc.offset
        )
    })
}

/// Where the payload of `digest` is: its first capture, which a revisit
/// stands for. `what` names the revisit in the error.
pub fn payload_location(stores: &Stores, digest: &str, what: &str) -> Result<PackLocation> {
    Ok(stores
        .index
        .get_digest(digest)?
        .with_context(|| format!("{what}: digest {digest} is not indexed"))?
        .first_location)
}

/// The payload (HTTP body as stored) of the archive's first capture of
/// `digest`, if the archive has one.
pub fn archived_payload(stores: &Stores, digest: &str) -> Result<Option<Vec<u8>>> {
    Ok(archived_original(stores, digest)?.map(|r| r.body))
}

/// The stored HTTP answer (status, headers, body) of the archive's first capture of
/// `digest` (`None`: no capture of it).
pub fn archived_original(stores: &Stores, digest: &str) -> Result<Option<packer::HttpResponse>> {
    let Some(entry) = stores.index.get_digest(digest)? else {
        return Ok(None);
    };
    let loc = entry.first_location;
    if loc.path.is_empty() {
        return Ok(None);
    }
    Ok(Some(record_at(stores, &loc)?.http_response()?))
}

/// The page row of `url`'s latest page capture (`None`: the URL is not a
/// page of the archive; it may still have captures, see [`capture`]).
pub fn page_by_url(stores: &Stores, url: &str) -> Result<Option<PageRecord>> {
    let Some(state) = stores.index.get_url(url)? else {
        return Ok(None);
    };
    let page = stores
        .index
        .get_page(&state.table, &state.row_key)?
        .with_context(|| format!("the index row of {url} is missing from {}", state.table))?;
    Ok(Some(page))
}

/// The page with this id (`None`: no such row).
pub fn page_by_id(stores: &Stores, id: &str) -> Result<Option<PageHit>> {
    Ok(stores.index.get_by_id(id)?)
}

/// The WARC record of `page` (at `PageRecord::location()`); with
/// `follow_revisit`, a revisit's payload record instead.
pub fn page_record(stores: &Stores, page: &PageRecord, follow_revisit: bool) -> Result<WarcRecord> {
    let loc = if page.revisit && follow_revisit {
        payload_location(stores, &page.digest, &format!("revisit of {}", page.url))?
    } else {
        page.location()
    };
    record_at(stores, &loc)
}

/// The archived HTTP response of `page`, a revisit followed to its payload.
pub fn page_response(stores: &Stores, page: &PageRecord) -> Result<HttpResponse> {
    page_record(stores, page, true)?
        .http_response()
        .with_context(|| {
            format!(
                "the record of {} at {}+{} has no HTTP response",
                page.url, page.pack_path, page.offset
            )
        })
}

/// The archived HTML of `page` as text, decoded with the charset of its
/// `Content-Type` (else sniffed, as the crawl decodes it).
pub fn page_text(stores: &Stores, page: &PageRecord) -> Result<String> {
    let response = page_response(stores, page)?;
    let charset =
        crawler::charset::charset_from_content_type(response.header("content-type").unwrap_or(""));
    Ok(crawler::charset::decode(&response.body, charset.as_deref()).text)
}

/// The words of a stored page as the crawl gave them to the text index: its HTML read back
/// from its pack and extracted again (`fsck --repair` of the text index, benchmarks).
pub fn page_words(stores: &Stores, page: &PageRecord) -> Result<indexer::TextDoc> {
    let html = page_text(stores, page)?;
    let url = url::Url::parse(&page.url)?;
    let x = extract::extract(&html, &url);
    let han = indexer::TextDoc::han_of(x.main_text());
    Ok(indexer::TextDoc::of(page, x.tokens, han))
}

/// `harvest get URL [--at TIME] [--record]`: the capture of `url` in force
/// at `at` (the last at or before it), or without `at` its latest page
/// capture (a URL with captures but no page row, such as an image or a
/// redirect, its latest capture). `part` picks the payload or the record.
pub fn capture(
    stores: &Stores,
    url: &str,
    at: Option<DateTime<Utc>>,
    part: Part,
) -> Result<Vec<u8>> {
    if at.is_none() {
        if let Some(page) = page_by_url(stores, url)? {
            return Ok(match part {
                Part::Record => record_text(&page_record(stores, &page, false)?),
                Part::Payload => page_response(stores, &page)?.body,
            });
        }
        // Not a page: an embedded resource (image, stylesheet...) or an
        // archived redirect has captures only.
        if stores.index.captures_of(url)?.is_empty() {
            anyhow::bail!("{url} is not in the archive (try the URL exactly as crawled)");
        }
    }
    let at = at.unwrap_or_else(Utc::now);
    let mut url = url.to_string();
    let mut seen = std::collections::HashSet::new();
    loop {
        match capture_at(stores, &url, at, part)? {
            Captured::Bytes(b) => return Ok(b),
            Captured::Redirect(target) => {
                if !seen.insert(url.clone()) || seen.len() > MAX_REDIRECTS {
                    anyhow::bail!(
                        "{url}: the archived redirects loop or go on past {MAX_REDIRECTS}"
                    );
                }
                url = target;
            }
        }
    }
}

/// A capture's bytes, or the target of an archived redirect.
enum Captured {
    Bytes(Vec<u8>),
    Redirect(String),
}

/// One step of [`capture`]: the capture of `url` in force at `at`.
fn capture_at(stores: &Stores, url: &str, at: DateTime<Utc>, part: Part) -> Result<Captured> {
    let history = stores.index.captures_of(url)?;
    if history.is_empty() {
        anyhow::bail!(
            "{url} has no recorded capture history (not in the archive, or captured before harvest recorded captures); `harvest get URL` without --at gives the latest"
        );
    }
    let Some(c) = history.iter().rev().find(|c| c.time <= at) else {
        anyhow::bail!(
            "{url} was first captured at {}, after {}",
            history[0].time.to_rfc3339(),
            at.to_rfc3339()
        );
    };
    if part == Part::Record {
        return Ok(Captured::Bytes(record_text(&record_at(
            stores,
            &c.location,
        )?)));
    }
    if (300..400).contains(&c.status) && c.status != 304 {
        // An archived redirect: its own record holds the Location.
        let http = record_at(stores, &c.location)?.http_response()?;
        let location = http
            .header("location")
            .with_context(|| format!("the archived {} of {url} has no Location", c.status))?;
        let target = url::Url::parse(url)
            .and_then(|base| base.join(location.trim()))
            .with_context(|| format!("the archived redirect of {url} to {location:?}"))?;
        return Ok(Captured::Redirect(target.to_string()));
    }
    let loc = match c.kind {
        CaptureKind::Response => c.location.clone(),
        CaptureKind::Revisit | CaptureKind::NotModified => {
            let digest = c
                .digest
                .as_deref()
                .with_context(|| format!("the revisit of {url} at {} names no payload", c.time))?;
            payload_location(stores, digest, &format!("revisit of {url}"))?
        }
    };
    Ok(Captured::Bytes(response_at(stores, &loc)?.body))
}

/// Parses `--at`: an RFC 3339 time, or a date meaning the end of that day (UTC).
pub fn parse_at(text: &str) -> Result<DateTime<Utc>> {
    if let Ok(t) = DateTime::parse_from_rfc3339(text) {
        return Ok(t.with_timezone(&Utc));
    }
    let day = chrono::NaiveDate::parse_from_str(text, "%Y-%m-%d").with_context(|| {
        format!("--at {text:?}: expected YYYY-MM-DD or an RFC 3339 time like 2026-11-30T08:00:00Z")
    })?;
    let next = day
        .succ_opt()
        .and_then(|d| d.and_hms_opt(0, 0, 0))
        .with_context(|| format!("--at {text:?}: out of range"))?;
    Ok(next.and_utc() - chrono::Duration::microseconds(1))
}

/// A record as WARC text: version line, headers, blank line, block.
fn record_text(record: &WarcRecord) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(b"WARC/1.1\r\n");
    for (k, v) in &record.headers {
        out.extend_from_slice(format!("{k}: {v}\r\n").as_bytes());
    }
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(&record.block);
    out
}

/// One page as the command line's JSON lines (`harvest query --format
/// jsonl`) and the API's hits (`/api/search`) show it; `/api/pages/{id}`
/// adds its capture history (`PageDetail`). Field names are the API's;
/// the JSON lines' `pack_path`, `offset` and `length` stay beside `pack`.
/// Its schema in the API document (`Hit`) is derived from this struct.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[schema(as = Hit)]
pub struct PageJson {
    /// Page id (`/api/pages/{id}`).
    pub id: String,
    /// Normalised URL.
    pub url: String,
    pub title: String,
    /// Publish time given by the page.
    pub published: Option<DateTime<Utc>>,
    /// Where the publish time came from (`meta`, `jsonld`, `time`, `script`, `text`,
    /// `url`, `feed`, `sitemap`, `modified`: only an update time; `fetch`: the
    /// page gave none).
    pub published_from: Option<String>,
    /// Capture time of this version.
    pub fetched: DateTime<Utc>,
    /// First capture of the URL, when an earlier capture exists.
    pub first_seen: Option<DateTime<Utc>>,
    /// Configured source (site group).
    pub source: String,
    /// Media outlet named by the page (or its host, see `media_from_host`).
    pub media: Option<String>,
    pub media_from_host: bool,
    /// The site that published the page as it names itself, else its host.
    pub outlet: String,
    pub author: Option<String>,
    pub topic: String,
    pub topic_score: f32,
    pub comments: Option<u64>,
    pub participants: Option<u64>,
    pub keywords: Vec<String>,
    /// K-means cluster of the page's pack.
    pub cluster: u32,
    /// The record is a revisit (its payload was archived before).
    pub revisit: bool,
    /// The page is a known near-duplicate of an earlier one.
    pub near_duplicate: bool,
    /// URL of the story's first archived page, for a near-duplicate.
    pub near_duplicate_of: Option<String>,
    /// Archived copies of the page's story (near-duplicates), itself included (1:
    /// none known).
    #[schema(minimum = 1)]
    pub copies: u64,
    pub language: Option<String>,
    /// Charset the page was decoded from.
    pub charset: Option<String>,
    /// HTTP status.
    pub status: u16,
    /// WARC payload digest.
    pub digest: String,
    /// WARC-Record-ID.
    pub record_id: String,
    /// SimHash of the text, 16 hex digits (a JSON number loses bits of a
    /// u64 in JavaScript).
    pub simhash: Option<String>,
    /// The recipe of the fingerprint `simhash`
    /// (`classifier::simhash::FINGERPRINT_VERSION`); null for rows written before
    /// harvest recorded it.
    pub simhash_version: Option<u32>,
    /// Where the page's WARC record is.
    #[schema(value_type = PackLocationSchema)]
    pub pack: PackLocation,
    /// `pack.path` again, under the name the JSON lines had first.
    pub pack_path: String,
    /// `pack.offset` again.
    pub offset: u64,
    /// `pack.length` again.
    pub length: u64,
    /// API paths of the page, its original and its story's copies.
    pub links: PageLinks,
    /// For a text query (`text=`): a passage of the page's text around the words found,
    /// HTML-escaped, the query's words in `<mark>` (absent without a text query, or when
    /// the record cannot be read).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub snippet: Option<String>,
    /// For a text query sorted by relevance (`text=` and `sort=relevance`): the page's
    /// BM25 score, to four decimals, as Elasticsearch's `_score` (absent otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub score: Option<f32>,
}

/// API paths of a page (`links` of a hit): the page, its archived original, its
/// story's copies.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct PageLinks {
    pub page: String,
    pub raw: String,
    pub copies: String,
}

impl PageJson {
    /// `hit` as shown, with `copies` archived copies of its story.
    pub fn new(hit: &PageHit, copies: u64) -> PageJson {
        let id = hit.id();
        let p = &hit.page;
        PageJson {
            links: PageLinks {
                page: format!("/api/pages/{id}"),
                raw: format!("/api/pages/{id}/raw"),
                copies: format!("/api/pages/{id}/copies"),
            },
            id,
            url: p.url.clone(),
            title: p.title.clone(),
            published: p.published,
            published_from: p.published_source().map(str::to_string),
            fetched: p.fetched,
            first_seen: p.first_seen,
            source: p.source.clone(),
            media: p.media.clone(),
            media_from_host: p.media_from_host,
            outlet: p.outlet_or_host().to_string(),
            author: p.author.clone(),
            topic: p.topic.clone(),
            topic_score: p.topic_score,
            comments: p.comments,
            participants: p.participants,
            keywords: p.keywords.clone(),
            cluster: p.cluster,
            revisit: p.revisit,
            near_duplicate: p.near_duplicate_of.is_some(),
            near_duplicate_of: p.near_duplicate_of.clone(),
            copies,
            language: p.language.clone(),
            charset: p.charset.clone(),
            status: p.status,
            digest: p.digest.clone(),
            record_id: p.record_id.clone(),
            simhash: p.simhash.map(|s| format!("{s:016x}")),
            simhash_version: p.simhash_version,
            snippet: None,
            score: hit.score,
            pack: p.location(),
            pack_path: p.pack_path.clone(),
            offset: p.offset,
            length: p.length,
        }
    }
}

/// `hits` as shown, with their stories' copy counts (one index read) and, for a
/// text query, their snippets.
pub fn pages_json(
    stores: &Stores,
    hits: &[PageHit],
    text: Option<&indexer::TextQuery>,
) -> Result<Vec<PageJson>> {
    let pages: Vec<&PageRecord> = hits.iter().map(|h| &h.page).collect();
    let copies = stores.index.copy_counts(&pages)?;
    let mut out: Vec<PageJson> = hits
        .iter()
        .zip(copies)
        .map(|(h, c)| PageJson::new(h, c))
        .collect();
    if let Some(q) = text {
        for (j, s) in out.iter_mut().zip(crate::snippet::snippets(&pages, q, |p| {
            page_text(stores, p)
        })) {
            j.snippet = s.map(|s| crate::snippet::to_html(&s));
        }
    }
    Ok(out)
}

/// A page with its URL's capture history: `/api/pages/{id}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[schema(as = PageDetail)]
pub struct PageDetailJson {
    #[serde(flatten)]
    pub page: PageJson,
    /// The URL's captures: count, first and last.
    pub captures: CaptureCounts,
    /// Every capture of the URL, oldest first (`harvest get URL --at TIME`
    /// reads one back).
    pub history: Vec<CaptureJson>,
    /// Captures of the page's payload digest, when the digest is recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub payload_captures: Option<u64>,
}

/// The captures of a page's URL: count, first and last.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct CaptureCounts {
    pub count: u64,
    pub first_seen: Option<DateTime<Utc>>,
    pub last_seen: DateTime<Utc>,
}

/// One capture of a page's URL (`history` of a page).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[schema(as = Capture)]
pub struct CaptureJson {
    pub time: DateTime<Utc>,
    /// `response`, `revisit` or `not_modified`.
    #[schema(value_type = CaptureKindSchema)]
    pub kind: CaptureKind,
    pub status: u16,
    pub digest: Option<String>,
    pub record_id: String,
    #[schema(value_type = PackLocationSchema)]
    pub pack: PackLocation,
}

/// Where a WARC record is: the schema of `indexer::PackLocation` (another crate's
/// type) in the API document. `From` names every field, so a field added there
/// fails to build here; `tests/contracts.rs` checks its answers against the document.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
#[schema(as = PackLocation)]
pub struct PackLocationSchema {
    /// Pack path.
    pub path: String,
    /// Offset of the record's gzip member.
    pub offset: u64,
    /// Length of the record's gzip member.
    pub length: u64,
}

impl From<PackLocation> for PackLocationSchema {
    fn from(
        PackLocation {
            path,
            offset,
            length,
        }: PackLocation,
    ) -> Self {
        PackLocationSchema {
            path,
            offset,
            length,
        }
    }
}

/// What a capture's WARC record is: the schema of `indexer::CaptureKind` (another
/// crate's type) in the API document; `From` names every variant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
#[schema(as = CaptureKind)]
pub enum CaptureKindSchema {
    /// A `response` record holding the payload.
    Response,
    /// A `revisit` record: the same payload as an earlier capture (digest).
    Revisit,
    /// A `revisit` record for a 304 Not Modified: the payload of the capture before it.
    NotModified,
}

impl From<CaptureKind> for CaptureKindSchema {
    fn from(kind: CaptureKind) -> Self {
        match kind {
            CaptureKind::Response => CaptureKindSchema::Response,
            CaptureKind::Revisit => CaptureKindSchema::Revisit,
            CaptureKind::NotModified => CaptureKindSchema::NotModified,
        }
    }
}

/// `/api/pages/{id}`: the page with this id and its capture history
/// (`None`: no such page).
pub fn page_detail(stores: &Stores, id: &str) -> Result<Option<PageDetailJson>> {
    let Some(d) = stores.index.page_detail(id)? else {
        return Ok(None);
    };
    let history = stores.index.captures_of(&d.hit.page.url)?;
    let copies = stores.index.copy_counts(&[&d.hit.page])?;
    Ok(Some(PageDetailJson {
        page: PageJson::new(&d.hit, copies.first().copied().unwrap_or(1)),
        captures: CaptureCounts {
            count: d.captures,
            first_seen: d.first_seen,
            last_seen: d.last_seen,
        },
        history: history
            .into_iter()
            .map(|c| CaptureJson {
                time: c.time,
                kind: c.kind,
                status: c.status,
                digest: c.digest,
                record_id: c.record_id,
                pack: c.location,
            })
            .collect(),
        payload_captures: d.digest.map(|dg| dg.captures),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn page() -> PageRecord {
        let fetched = Utc
            .with_ymd_and_hms(2024, 5, 1, 10, 11, 12)
            .single()
            .unwrap();
        PageRecord {
            url: "http://example.com/a.html".into(),
            title: "A".into(),
            published: None,
            fetched,
            first_seen: None,
            media: Some("example.com".into()),
            comments: Some(3),
            participants: None,
            keywords: vec!["k".into()],
            topic: "news".into(),
            topic_score: 0.83,
            cluster: 2,
            pack_path: "news/2024/05/01/c2-0.warc.gz".into(),
            offset: 1234,
            length: 567,
            digest: "sha1:ABC".into(),
            record_id: "<urn:uuid:1>".into(),
            simhash: Some(0x00ff_0000_0000_0042),
            simhash_version: Some(2),
            near_duplicate_of: Some("http://example.com/first.html".into()),
            language: Some("en".into()),
            charset: Some("utf-8".into()),
            status: 200,
            source: "example".into(),
            revisit: false,
            // A row written before the field: no publish time reads as `fetch`.
            published_from: None,
            author: None,
            media_from_host: true,
            outlet: None,
        }
    }

    #[test]
    fn a_page_shows_its_id_links_location_and_hex_simhash() {
        let hit = PageHit {
            table: "example_2024".into(),
            row_key: vec![0, 1, 2],
            page: page(),
            score: None,
        };
        let v = serde_json::to_value(PageJson::new(&hit, 3)).unwrap();
        let id = hit.id();
        assert_eq!(v["id"], id.as_str());
        assert_eq!(v["links"]["raw"], format!("/api/pages/{id}/raw"));
        assert_eq!(v["links"]["copies"], format!("/api/pages/{id}/copies"));
        assert_eq!(v["simhash"], "00ff000000000042");
        assert_eq!(v["simhash_version"], 2);
        assert_eq!(v["published_from"], "fetch");
        assert_eq!(v["near_duplicate"], true);
        assert_eq!(v["copies"], 3);
        assert_eq!(
            v["pack"],
            serde_json::json!({"path": "news/2024/05/01/c2-0.warc.gz", "offset": 1234, "length": 567})
        );
        assert_eq!(v["pack_path"], v["pack"]["path"]);
        assert_eq!(v["offset"], 1234);
        assert_eq!(v["length"], 567);
        // An f32 as written, not widened to f64 digits.
        let text = serde_json::to_string(&PageJson::new(&hit, 3)).unwrap();
        assert!(text.contains(r#""topic_score":0.83,"#), "{text}");
        // The shape reads back.
        let back: PageJson = serde_json::from_value(v).unwrap();
        assert_eq!(back, PageJson::new(&hit, 3));
    }

    #[test]
    fn at_takes_a_time_or_the_end_of_a_day() {
        assert_eq!(
            parse_at("2026-11-30T08:00:00+08:00").unwrap(),
            Utc.with_ymd_and_hms(2026, 11, 30, 0, 0, 0)
                .single()
                .unwrap()
        );
        assert_eq!(
            parse_at("2026-11-30").unwrap(),
            Utc.with_ymd_and_hms(2026, 12, 1, 0, 0, 0).single().unwrap()
                - chrono::Duration::microseconds(1)
        );
        let err = parse_at("yesterday").unwrap_err().to_string();
        assert!(err.contains("--at"), "{err}");
    }

    #[test]
    fn the_schemas_of_other_crates_types_serialize_as_those_types() {
        let loc = PackLocation {
            path: "a/b.warc.gz".into(),
            offset: 7,
            length: 9,
        };
        assert_eq!(
            serde_json::to_value(PackLocationSchema::from(loc.clone())).unwrap(),
            serde_json::to_value(loc).unwrap()
        );
        for kind in [
            CaptureKind::Response,
            CaptureKind::Revisit,
            CaptureKind::NotModified,
        ] {
            assert_eq!(
                serde_json::to_value(CaptureKindSchema::from(kind)).unwrap(),
                serde_json::to_value(kind).unwrap()
            );
        }
    }
}
