//! Page, URL and digest records and their cell encoding.
//!
//! Family `a` holds one qualifier per attribute. Numbers are big-endian so
//! that byte comparisons (scan filters) compare numbers; timestamps are
//! microseconds since the epoch as `i64` with the sign bit flipped (so they
//! also compare correctly); strings are UTF-8; lists are JSON arrays; absent
//! optional attributes have no cell. `topic_score` is the big-endian IEEE bits
//! (not order-comparable for negative scores).

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::store::{Cell, Row};

/// Where a WARC record lives: the packer's type, kept in the rows that point at it.
pub use shapes::PackLocation;

/// Family of the attribute cells.
pub const FAMILY_ATTRS: &str = "a";
/// Family of the index cells (index rows, and the index-row list of a data row).
pub const FAMILY_INDEX: &str = "i";
/// Both families of a page table.
pub const PAGE_FAMILIES: [&str; 2] = [FAMILY_ATTRS, FAMILY_INDEX];

/// Qualifiers of family `a`.
pub mod q {
    /// url
    pub const URL: &[u8] = b"url";
    /// title
    pub const TITLE: &[u8] = b"title";
    /// published
    pub const PUBLISHED: &[u8] = b"published";
    /// fetched
    pub const FETCHED: &[u8] = b"fetched";
    /// media
    pub const MEDIA: &[u8] = b"media";
    /// comments
    pub const COMMENTS: &[u8] = b"comments";
    /// participants
    pub const PARTICIPANTS: &[u8] = b"participants";
    /// keywords (JSON array)
    pub const KEYWORDS: &[u8] = b"keywords";
    /// topic
    pub const TOPIC: &[u8] = b"topic";
    /// topic_score
    pub const TOPIC_SCORE: &[u8] = b"topic_score";
    /// cluster
    pub const CLUSTER: &[u8] = b"cluster";
    /// pack_path
    pub const PACK_PATH: &[u8] = b"pack_path";
    /// offset
    pub const OFFSET: &[u8] = b"offset";
    /// length
    pub const LENGTH: &[u8] = b"length";
    /// digest
    pub const DIGEST: &[u8] = b"digest";
    /// record_id
    pub const RECORD_ID: &[u8] = b"record_id";
    /// simhash
    pub const SIMHASH: &[u8] = b"simhash";
    /// simhash_version
    pub const SIMHASH_VERSION: &[u8] = b"simhash_version";
    /// near_duplicate_of
    pub const NEAR_DUPLICATE_OF: &[u8] = b"near_duplicate_of";
    /// language
    pub const LANGUAGE: &[u8] = b"language";
    /// charset
    pub const CHARSET: &[u8] = b"charset";
    /// status
    pub const STATUS: &[u8] = b"status";
    /// source
    pub const SOURCE: &[u8] = b"source";
    /// revisit (one byte, 0 or 1)
    pub const REVISIT: &[u8] = b"revisit";
    /// urls table: last_capture
    pub const LAST_CAPTURE: &[u8] = b"last_capture";
    /// urls table: first_capture
    pub const FIRST_CAPTURE: &[u8] = b"first_capture";
    /// urls/digests table: captures
    pub const CAPTURES: &[u8] = b"captures";
    /// urls table: etag
    pub const ETAG: &[u8] = b"etag";
    /// urls table: last_modified
    pub const LAST_MODIFIED: &[u8] = b"last_modified";
    /// urls table: table
    pub const TABLE: &[u8] = b"table";
    /// urls table: row_key
    pub const ROW_KEY: &[u8] = b"row_key";
    /// digests table: first_url
    pub const FIRST_URL: &[u8] = b"first_url";
    /// digests table: first_date
    pub const FIRST_DATE: &[u8] = b"first_date";
    /// digests table: first_record_id
    pub const FIRST_RECORD_ID: &[u8] = b"first_record_id";
    /// digests table: sources (JSON array)
    pub const SOURCES: &[u8] = b"sources";
    /// `urls`: when the URL is due again.
    pub const NEXT_FETCH: &[u8] = b"next_fetch";
    /// `urls`: captures with a changed payload.
    pub const CHANGES: &[u8] = b"changes";
    /// `urls`: 1 for an article, 0 for a hub page.
    pub const ARTICLE: &[u8] = b"article";
    /// `urls`: revisit interval in seconds.
    pub const INTERVAL: &[u8] = b"interval";
    /// Page: first capture time of the URL (the key time without a publish time).
    pub const FIRST_SEEN: &[u8] = b"first_seen";
    /// Page: where the publish time came from (meta, jsonld, time, text, url,
    /// feed, sitemap, modified, fetch).
    pub const PUBLISHED_FROM: &[u8] = b"published_from";
    /// Page: author.
    pub const AUTHOR: &[u8] = b"author";
    /// Page: one byte 1 when the media is only the host name (absent = 0).
    pub const MEDIA_FROM_HOST: &[u8] = b"media_from_host";
    /// Page: the site that published it, as it names itself (absent: its host).
    pub const OUTLET: &[u8] = b"outlet";
}

/// Encodes a timestamp so that byte order is time order (microsecond precision).
pub fn encode_time(t: DateTime<Utc>) -> [u8; 8] {
    ((t.timestamp_micros() as u64) ^ (1u64 << 63)).to_be_bytes()
}

/// Reverses [`encode_time`].
pub fn decode_time(b: &[u8]) -> Option<DateTime<Utc>> {
    let raw = u64::from_be_bytes(*b.first_chunk::<8>()?);
    if b.len() != 8 {
        return None;
    }
    DateTime::from_timestamp_micros((raw ^ (1u64 << 63)) as i64)
}

/// [`PageRecord::published_from`] of a page without a publish time.
pub const PUBLISHED_FROM_FETCH: &str = "fetch";

/// Every attribute of one archived page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PageRecord {
    /// Normalised URL.
    pub url: String,
    /// Page title.
    pub title: String,
    /// Publish time given by the page.
    pub published: Option<DateTime<Utc>>,
    /// Fetch time.
    pub fetched: DateTime<Utc>,
    /// First capture of this URL, when an earlier capture exists: a page
    /// without a publish time keeps the key time of its first capture, so a
    /// changed page replaces its row instead of adding one.
    #[serde(default)]
    pub first_seen: Option<DateTime<Utc>>,
    /// Media source (outlet) named by the page.
    pub media: Option<String>,
    /// Comment count.
    pub comments: Option<u64>,
    /// Participant count.
    pub participants: Option<u64>,
    /// Keywords (indexed lowercased).
    pub keywords: Vec<String>,
    /// Topic from the classifier.
    pub topic: String,
    /// Classifier score of the topic.
    pub topic_score: f32,
    /// K-means cluster of the pack.
    pub cluster: u32,
    /// Pack path of the WARC record.
    pub pack_path: String,
    /// Offset of the record's gzip member in the pack.
    pub offset: u64,
    /// Length of the record's gzip member.
    pub length: u64,
    /// WARC payload digest.
    pub digest: String,
    /// WARC-Record-ID.
    pub record_id: String,
    /// SimHash of the text.
    pub simhash: Option<u64>,
    /// The recipe `simhash` was made with (`classifier::simhash::FINGERPRINT_VERSION`):
    /// fingerprints of two recipes are not compared. `None` for rows written before
    /// harvest recorded it (compared with every version, as they were).
    #[serde(default)]
    pub simhash_version: Option<u32>,
    /// URL of the page this one nearly duplicates.
    pub near_duplicate_of: Option<String>,
    /// Language.
    pub language: Option<String>,
    /// Charset the page was decoded from.
    pub charset: Option<String>,
    /// HTTP status.
    pub status: u16,
    /// Configured source (site group); picks the table.
    pub source: String,
    /// Whether the record is a revisit (payload seen before).
    pub revisit: bool,
    /// Where the publish time came from: `meta`, `jsonld`, `time`, `text`,
    /// `url`, `feed`, `sitemap`, `modified` (only an update time), or `fetch` (no publish time: the key time is
    /// the capture time). `None` for rows written before harvest recorded it
    /// (see [`PageRecord::published_source`]).
    #[serde(default)]
    pub published_from: Option<String>,
    /// Author named by the page.
    #[serde(default)]
    pub author: Option<String>,
    /// `media` is only the host name: the page names no outlet.
    #[serde(default)]
    pub media_from_host: bool,
    /// The site that published the page, as it names itself (`og:site_name`, ...): unlike
    /// `media`, never an agency or paper the article credits. `None`: the page names no
    /// site, or was indexed before harvest recorded it; [`PageRecord::outlet_or_host`]
    /// then gives the URL's host.
    #[serde(default)]
    pub outlet: Option<String>,
}

impl PageRecord {
    /// Where the page's WARC record is stored.
    pub fn location(&self) -> PackLocation {
        PackLocation {
            path: self.pack_path.clone(),
            offset: self.offset,
            length: self.length,
        }
    }

    /// The time used in the row key: publish time, else the URL's first
    /// capture, else fetch time.
    pub fn key_time(&self) -> DateTime<Utc> {
        self.published.or(self.first_seen).unwrap_or(self.fetched)
    }

    /// Where the publish time came from; for rows written before it was
    /// recorded, `fetch` when the page has no publish time (else `None`).
    pub fn published_source(&self) -> Option<&str> {
        self.published_from
            .as_deref()
            .or_else(|| self.published.is_none().then_some(PUBLISHED_FROM_FETCH))
    }

    /// The outlet, else the URL's host (without port or user).
    pub fn outlet_or_host(&self) -> &str {
        self.outlet
            .as_deref()
            .unwrap_or_else(|| url_host(&self.url))
    }

    /// Keywords as indexed: lowercased, deduplicated, sorted.
    pub fn index_keywords(&self) -> Vec<String> {
        let mut k: Vec<String> = self.keywords.iter().map(|k| k.to_lowercase()).collect();
        k.sort();
        k.dedup();
        k
    }

    /// Family-`a` cells of this page.
    pub fn to_cells(&self) -> Result<Vec<Cell>> {
        let mut c = CellWriter::default();
        c.str(q::URL, &self.url);
        c.str(q::TITLE, &self.title);
        c.opt_time(q::PUBLISHED, self.published);
        c.time(q::FETCHED, self.fetched);
        c.opt_time(q::FIRST_SEEN, self.first_seen);
        c.opt_str(q::MEDIA, self.media.as_deref());
        c.opt_u64(q::COMMENTS, self.comments);
        c.opt_u64(q::PARTICIPANTS, self.participants);
        c.bytes(q::KEYWORDS, serde_json::to_vec(&self.keywords)?);
        c.str(q::TOPIC, &self.topic);
        c.bytes(
            q::TOPIC_SCORE,
            self.topic_score.to_bits().to_be_bytes().to_vec(),
        );
        c.bytes(q::CLUSTER, self.cluster.to_be_bytes().to_vec());
        c.str(q::PACK_PATH, &self.pack_path);
        c.u64(q::OFFSET, self.offset);
        c.u64(q::LENGTH, self.length);
        c.str(q::DIGEST, &self.digest);
        c.str(q::RECORD_ID, &self.record_id);
        c.opt_u64(q::SIMHASH, self.simhash);
        c.opt_u64(q::SIMHASH_VERSION, self.simhash_version.map(u64::from));
        c.opt_str(q::NEAR_DUPLICATE_OF, self.near_duplicate_of.as_deref());
        c.opt_str(q::LANGUAGE, self.language.as_deref());
        c.opt_str(q::CHARSET, self.charset.as_deref());
        c.bytes(q::STATUS, self.status.to_be_bytes().to_vec());
        c.str(q::SOURCE, &self.source);
        c.bytes(q::REVISIT, vec![u8::from(self.revisit)]);
        c.opt_str(q::PUBLISHED_FROM, self.published_from.as_deref());
        c.opt_str(q::AUTHOR, self.author.as_deref());
        if self.media_from_host {
            c.bytes(q::MEDIA_FROM_HOST, vec![1]);
        }
        c.opt_str(q::OUTLET, self.outlet.as_deref());
        Ok(c.0)
    }

    /// Decodes a page from a row's family-`a` cells.
    pub fn from_row(row: &Row) -> Result<Self> {
        let r = CellReader(row);
        Ok(PageRecord {
            url: r.str(q::URL)?,
            title: r.str(q::TITLE)?,
            published: r.opt_time(q::PUBLISHED)?,
            fetched: r.time(q::FETCHED)?,
            first_seen: r.opt_time(q::FIRST_SEEN)?,
            media: r.opt_str(q::MEDIA)?,
            comments: r.opt_u64(q::COMMENTS)?,
            participants: r.opt_u64(q::PARTICIPANTS)?,
            keywords: serde_json::from_slice(r.req(q::KEYWORDS)?)?,
            topic: r.str(q::TOPIC)?,
            topic_score: f32::from_bits(u32::from_be_bytes(r.fixed::<4>(q::TOPIC_SCORE)?)),
            cluster: u32::from_be_bytes(r.fixed::<4>(q::CLUSTER)?),
            pack_path: r.str(q::PACK_PATH)?,
            offset: r.u64(q::OFFSET)?,
            length: r.u64(q::LENGTH)?,
            digest: r.str(q::DIGEST)?,
            record_id: r.str(q::RECORD_ID)?,
            simhash: r.opt_u64(q::SIMHASH)?,
            simhash_version: r
                .opt_u64(q::SIMHASH_VERSION)?
                .and_then(|v| u32::try_from(v).ok()),
            near_duplicate_of: r.opt_str(q::NEAR_DUPLICATE_OF)?,
            language: r.opt_str(q::LANGUAGE)?,
            charset: r.opt_str(q::CHARSET)?,
            status: u16::from_be_bytes(r.fixed::<2>(q::STATUS)?),
            source: r.str(q::SOURCE)?,
            revisit: r.fixed::<1>(q::REVISIT)? != [0],
            published_from: r.opt_str(q::PUBLISHED_FROM)?,
            author: r.opt_str(q::AUTHOR)?,
            media_from_host: r.opt(q::MEDIA_FROM_HOST).is_some_and(|b| b != [0]),
            outlet: r.opt_str(q::OUTLET)?,
        })
    }
}

/// The host of an absolute URL, lowercased as URLs are normalised: what lies
/// between `//` and the path, without user and port (`[::1]` keeps its
/// brackets).
fn url_host(url: &str) -> &str {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    if host.starts_with('[') {
        return host.split_inclusive(']').next().unwrap_or(host);
    }
    host.split(':').next().unwrap_or(host)
}

/// State of one URL in the `urls` table (row key = the normalised URL).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UrlState {
    /// Normalised URL.
    pub url: String,
    /// Time of the last capture.
    pub last_capture: DateTime<Utc>,
    /// Number of captures so far.
    pub captures: u64,
    /// Time of the first capture; `None` for rows written before harvest
    /// recorded it. [`crate::Index::put_urls`] fills it in when absent.
    #[serde(default)]
    pub first_capture: Option<DateTime<Utc>>,
    /// ETag of the last response.
    pub etag: Option<String>,
    /// Last-Modified of the last response.
    pub last_modified: Option<String>,
    /// Page table holding the last capture.
    pub table: String,
    /// Row key of the last capture in `table`.
    pub row_key: Vec<u8>,
    /// Payload digest of the last capture (`None` for rows written before
    /// harvest recorded it).
    #[serde(default)]
    pub digest: Option<String>,
    /// When the URL is due again (articles on the revisit schedule); `None`:
    /// no revisit planned (hubs are fetched every run anyway).
    #[serde(default)]
    pub next_fetch: Option<DateTime<Utc>>,
    /// Captures whose payload differed from the one before.
    #[serde(default)]
    pub changes: u64,
    /// An article (revisited on a schedule) rather than a hub page (seeds,
    /// sections: fetched every run).
    #[serde(default)]
    pub article: bool,
    /// The revisit interval that led to `next_fetch`, seconds.
    #[serde(default)]
    pub interval_secs: Option<u64>,
}

impl UrlState {
    pub(crate) fn to_row(&self) -> Row {
        let mut c = CellWriter::default();
        c.time(q::LAST_CAPTURE, self.last_capture);
        c.u64(q::CAPTURES, self.captures);
        c.opt_time(q::FIRST_CAPTURE, self.first_capture);
        c.opt_str(q::ETAG, self.etag.as_deref());
        c.opt_str(q::LAST_MODIFIED, self.last_modified.as_deref());
        c.str(q::TABLE, &self.table);
        c.bytes(q::ROW_KEY, self.row_key.clone());
        c.opt_str(q::DIGEST, self.digest.as_deref());
        c.opt_time(q::NEXT_FETCH, self.next_fetch);
        c.u64(q::CHANGES, self.changes);
        c.bytes(q::ARTICLE, vec![u8::from(self.article)]);
        c.opt_u64(q::INTERVAL, self.interval_secs);
        Row {
            key: self.url.as_bytes().to_vec(),
            cells: c.0,
        }
    }

    pub(crate) fn from_row(row: &Row) -> Result<Self> {
        let r = CellReader(row);
        Ok(UrlState {
            url: String::from_utf8(row.key.clone())
                .map_err(|_| r.corrupt(b"", "url key is not UTF-8"))?,
            last_capture: r.time(q::LAST_CAPTURE)?,
            captures: r.u64(q::CAPTURES)?,
            first_capture: r.opt_time(q::FIRST_CAPTURE)?,
            etag: r.opt_str(q::ETAG)?,
            last_modified: r.opt_str(q::LAST_MODIFIED)?,
            table: r.str(q::TABLE)?,
            row_key: r.req(q::ROW_KEY)?.to_vec(),
            digest: r.opt_str(q::DIGEST)?,
            next_fetch: r.opt_time(q::NEXT_FETCH)?,
            changes: r.opt_u64(q::CHANGES)?.unwrap_or(0),
            article: r.0.cell(FAMILY_ATTRS, q::ARTICLE) == Some(&[1u8][..]),
            interval_secs: r.opt_u64(q::INTERVAL)?,
        })
    }
}

/// First capture of a payload digest, in the `digests` table (row key = digest).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DigestEntry {
    /// Payload digest (e.g. `sha1:...`).
    pub digest: String,
    /// URL of the first capture.
    pub first_url: String,
    /// Date of the first capture.
    pub first_date: DateTime<Utc>,
    /// WARC-Record-ID of the first capture.
    pub first_record_id: String,
    /// Pack location of the first capture.
    pub first_location: PackLocation,
    /// Number of captures with this digest.
    pub captures: u64,
    /// Sources that captured it.
    pub sources: Vec<String>,
}

impl DigestEntry {
    pub(crate) fn to_row(&self) -> Result<Row> {
        let mut c = CellWriter::default();
        c.str(q::FIRST_URL, &self.first_url);
        c.time(q::FIRST_DATE, self.first_date);
        c.str(q::FIRST_RECORD_ID, &self.first_record_id);
        c.str(q::PACK_PATH, &self.first_location.path);
        c.u64(q::OFFSET, self.first_location.offset);
        c.u64(q::LENGTH, self.first_location.length);
        c.u64(q::CAPTURES, self.captures);
        c.bytes(q::SOURCES, serde_json::to_vec(&self.sources)?);
        Ok(Row {
            key: self.digest.as_bytes().to_vec(),
            cells: c.0,
        })
    }

    pub(crate) fn from_row(row: &Row) -> Result<Self> {
        let r = CellReader(row);
        Ok(DigestEntry {
            digest: String::from_utf8(row.key.clone())
                .map_err(|_| r.corrupt(b"", "digest key is not UTF-8"))?,
            first_url: r.str(q::FIRST_URL)?,
            first_date: r.time(q::FIRST_DATE)?,
            first_record_id: r.str(q::FIRST_RECORD_ID)?,
            first_location: PackLocation {
                path: r.str(q::PACK_PATH)?,
                offset: r.u64(q::OFFSET)?,
                length: r.u64(q::LENGTH)?,
            },
            captures: r.u64(q::CAPTURES)?,
            sources: serde_json::from_slice(r.req(q::SOURCES)?)?,
        })
    }
}

#[derive(Default)]
struct CellWriter(Vec<Cell>);

impl CellWriter {
    fn bytes(&mut self, q: &[u8], v: Vec<u8>) {
        self.0.push(Cell::new(FAMILY_ATTRS, q, v));
    }
    fn str(&mut self, q: &[u8], v: &str) {
        self.bytes(q, v.as_bytes().to_vec());
    }
    fn opt_str(&mut self, q: &[u8], v: Option<&str>) {
        if let Some(v) = v {
            self.str(q, v);
        }
    }
    fn u64(&mut self, q: &[u8], v: u64) {
        self.bytes(q, v.to_be_bytes().to_vec());
    }
    fn opt_u64(&mut self, q: &[u8], v: Option<u64>) {
        if let Some(v) = v {
            self.u64(q, v);
        }
    }
    fn time(&mut self, q: &[u8], v: DateTime<Utc>) {
        self.bytes(q, encode_time(v).to_vec());
    }
    fn opt_time(&mut self, q: &[u8], v: Option<DateTime<Utc>>) {
        if let Some(v) = v {
            self.time(q, v);
        }
    }
}

struct CellReader<'a>(&'a Row);

impl CellReader<'_> {
    fn corrupt(&self, q: &[u8], reason: &str) -> Error {
        Error::Corrupt {
            key: self.0.key.clone(),
            qualifier: String::from_utf8_lossy(q).into_owned(),
            reason: reason.to_owned(),
        }
    }
    fn opt(&self, q: &[u8]) -> Option<&[u8]> {
        self.0.cell(FAMILY_ATTRS, q)
    }
    fn req(&self, q: &[u8]) -> Result<&[u8]> {
        self.opt(q).ok_or_else(|| self.corrupt(q, "missing"))
    }
    fn fixed<const N: usize>(&self, q: &[u8]) -> Result<[u8; N]> {
        let v = self.req(q)?;
        <[u8; N]>::try_from(v).map_err(|_| self.corrupt(q, "wrong length"))
    }
    fn opt_str(&self, q: &[u8]) -> Result<Option<String>> {
        self.opt(q)
            .map(|v| String::from_utf8(v.to_vec()).map_err(|_| self.corrupt(q, "not UTF-8")))
            .transpose()
    }
    fn str(&self, q: &[u8]) -> Result<String> {
        self.opt_str(q)?.ok_or_else(|| self.corrupt(q, "missing"))
    }
    fn opt_u64(&self, q: &[u8]) -> Result<Option<u64>> {
        match self.opt(q) {
            None => Ok(None),
            Some(_) => self.fixed::<8>(q).map(|b| Some(u64::from_be_bytes(b))),
        }
    }
    fn u64(&self, q: &[u8]) -> Result<u64> {
        self.opt_u64(q)?.ok_or_else(|| self.corrupt(q, "missing"))
    }
    fn opt_time(&self, q: &[u8]) -> Result<Option<DateTime<Utc>>> {
        self.opt(q)
            .map(|v| decode_time(v).ok_or_else(|| self.corrupt(q, "bad timestamp")))
            .transpose()
    }
    fn time(&self, q: &[u8]) -> Result<DateTime<Utc>> {
        self.opt_time(q)?.ok_or_else(|| self.corrupt(q, "missing"))
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn sample() -> PageRecord {
        PageRecord {
            url: "http://www.bbc.co.uk/news/uk-politics-38889716".into(),
            title: "Brexit: MPs back Article 50 bill".into(),
            published: "2017-02-08T19:00:00Z".parse().ok(),
            fetched: "2017-02-09T06:12:31Z".parse().unwrap_or_default(),
            first_seen: None,
            media: Some("www.bbc.co.uk".into()),
            comments: Some(1234),
            participants: None,
            keywords: vec!["Brexit".into(), "article".into()],
            topic: "politics".into(),
            topic_score: 0.82,
            cluster: 3,
            pack_path: "politics/2017/02/08/c3-0.warc.gz".into(),
            offset: 4096,
            length: 2048,
            digest: "sha1:ABCDEF".into(),
            record_id: "<urn:uuid:3f2a>".into(),
            simhash: Some(u64::MAX),
            simhash_version: Some(2),
            near_duplicate_of: None,
            language: Some("en".into()),
            charset: None,
            status: 200,
            source: "anglo_news".into(),
            revisit: false,
            published_from: Some("meta".into()),
            author: Some("Laura Kuenssberg".into()),
            media_from_host: true,
            outlet: Some("BBC News".into()),
        }
    }

    #[test]
    fn a_page_without_an_outlet_is_named_by_its_host() {
        let mut p = sample();
        assert_eq!(p.outlet_or_host(), "BBC News");
        p.outlet = None;
        for (url, host) in [
            (
                "http://www.bbc.co.uk/news/uk-politics-38889716",
                "www.bbc.co.uk",
            ),
            ("http://127.0.0.1:8080/", "127.0.0.1"),
            ("https://user@example.org:443?q#f", "example.org"),
            ("http://[::1]:9/x", "[::1]"),
        ] {
            p.url = url.into();
            assert_eq!(p.outlet_or_host(), host, "{url}");
        }
    }

    #[test]
    fn page_round_trips_through_cells() {
        let p = sample();
        let row = Row {
            key: b"k".to_vec(),
            cells: p.to_cells().expect("cells"),
        };
        assert_eq!(PageRecord::from_row(&row).expect("decode"), p);
        assert!(row.cell(FAMILY_ATTRS, q::PARTICIPANTS).is_none());
        assert_eq!(
            row.cell(FAMILY_ATTRS, q::COMMENTS),
            Some(&1234u64.to_be_bytes()[..])
        );
    }

    /// Rows written before issue 11 have no provenance, author or host flag:
    /// they still decode, and a page without a publish time reads as `fetch`.
    #[test]
    fn rows_without_the_issue_11_cells_still_decode() {
        let mut p = sample();
        p.published_from = None;
        p.author = None;
        p.media_from_host = false;
        p.outlet = None;
        let mut cells = p.to_cells().expect("cells");
        cells.retain(|c| {
            ![q::PUBLISHED_FROM, q::AUTHOR, q::MEDIA_FROM_HOST, q::OUTLET]
                .contains(&c.qualifier.as_slice())
        });
        let row = Row {
            key: b"k".to_vec(),
            cells,
        };
        let back = PageRecord::from_row(&row).expect("decode");
        assert_eq!(back, p);
        assert_eq!(back.published_source(), None);
        let undated = PageRecord {
            published: None,
            ..back
        };
        assert_eq!(undated.published_source(), Some(PUBLISHED_FROM_FETCH));
    }

    #[test]
    fn times_compare_as_bytes() {
        let a: DateTime<Utc> = "1969-12-31T23:59:59Z".parse().unwrap_or_default();
        let b: DateTime<Utc> = "2017-01-01T00:00:00Z".parse().unwrap_or_default();
        assert!(encode_time(a) < encode_time(b));
        assert_eq!(decode_time(&encode_time(a)), Some(a));
    }

    #[test]
    fn missing_required_cell_is_an_error() {
        let row = Row::new(b"k".to_vec()).with(FAMILY_ATTRS, q::URL, b"http://x".to_vec());
        assert!(matches!(
            PageRecord::from_row(&row),
            Err(Error::Corrupt { .. })
        ));
    }
}
