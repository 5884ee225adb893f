//! Discovery of URLs besides links: robots.txt `Sitemap:` lines, XML sitemaps
//! (sitemaps.org 0.9, with the Google News extension), sitemap indexes, and
//! RSS / Atom / JSON feeds.
//!
//! Everything here is pure: the crawl loop fetches the bytes and calls
//! [`robots_sitemaps`] on robots.txt (or [`crate::robots::RobotsRules::sitemaps`]
//! on rules it already parsed) and [`parse_document`] on every sitemap or feed it
//! fetches. [`parse_document`] sniffs the format from the content, not from the
//! file name or the Content-Type:
//!
//! * gzip is recognised by its magic bytes (`1f 8b`) and decompressed up to
//!   [`Limits::max_bytes`]; a gzip bomb stops there with
//!   [`DiscoverError::TooLarge`] having allocated at most that much;
//! * a root element `<urlset>` gives [`Document::UrlSet`] (pages, with
//!   `<lastmod>` and, from `<news:news>`, the publication date and title);
//! * `<sitemapindex>` gives [`Document::SitemapIndex`] (more sitemaps to fetch);
//! * `<rss>`, `<feed>` (Atom), `<rdf:RDF>` (RSS 1.0) or a JSON object gives
//!   [`Document::Feed`], parsed with feed-rs.
//!
//! Bad entries are not errors: a missing or unparsable `<loc>`, a non-http(s)
//! URL, entries past [`Limits::max_urls`] and implausible dates are skipped and
//! counted in [`ParseReport`]. A date is implausible when it does not parse,
//! is before [`MIN_PLAUSIBLE_YEAR`], or is more than [`MAX_FUTURE_SKEW`] after
//! the time of parsing (a publication date in the future is not a hint).
//!
//! URLs are resolved against the document URL (a relative `<loc>` is tolerated
//! although the protocol forbids it) but not otherwise filtered: the sitemaps.org
//! rule that a sitemap lists only URLs of its own host, and the crawl scope, are
//! the caller's to apply.

use std::borrow::Cow;
use std::io::Read;

use chrono::{DateTime, Datelike, NaiveDate, NaiveDateTime, TimeDelta, Utc};
use feed_rs::model::{Entry, FeedType};
use quick_xml::events::{BytesRef, Event};
use quick_xml::name::{QName, ResolveResult};
use quick_xml::NsReader;
use url::Url;

use crate::error::DiscoverError;
use crate::normalize::CRAWLABLE_SCHEMES;
use crate::robots::{resolve_sitemap_lines, ROBOTS_MAX_BYTES};

/// Default [`Limits::max_bytes`]: 50 MiB, the sitemaps.org limit for an
/// uncompressed sitemap.
pub const DEFAULT_MAX_BYTES: u64 = 50 * 1024 * 1024;
/// Default [`Limits::max_urls`]: 50,000, the sitemaps.org limit of URLs per
/// sitemap (and of sitemaps per index).
pub const DEFAULT_MAX_URLS: usize = 50_000;
/// The first two bytes of every gzip stream (RFC 1952).
pub const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];
/// Namespace of sitemaps.org 0.9 sitemaps and sitemap indexes.
pub const SITEMAP_NS: &str = "http://www.sitemaps.org/schemas/sitemap/0.9";
/// Namespace of the Google News sitemap extension.
pub const NEWS_NS: &str = "http://www.google.com/schemas/sitemap-news/0.9";
/// Dates before this year are dropped as implausible (there was no web).
pub const MIN_PLAUSIBLE_YEAR: i32 = 1990;
/// Dates later than this after the time of parsing are dropped: clocks and time
/// zones are sometimes wrong by hours, a date days ahead is not a hint.
pub const MAX_FUTURE_SKEW: TimeDelta = TimeDelta::days(1);
/// robots.txt user-agent used to read `Sitemap:` lines (they belong to no group).
const ROBOTS_ANY_AGENT: &str = "*";

// Element names (local parts) of the sitemap and news vocabularies.
const EL_URLSET: &str = "urlset";
const EL_SITEMAPINDEX: &str = "sitemapindex";
const EL_URL: &str = "url";
const EL_SITEMAP: &str = "sitemap";
const EL_LOC: &str = "loc";
const EL_LASTMOD: &str = "lastmod";
const EL_NEWS: &str = "news";
const EL_PUBLICATION_DATE: &str = "publication_date";
const EL_TITLE: &str = "title";
/// The prefix that news sitemaps use; accepted even when it is not declared.
const NEWS_PREFIX: &str = "news";
// Root elements of the feed formats feed-rs reads.
const EL_RSS: &str = "rss";
const EL_ATOM_FEED: &str = "feed";
const EL_RDF: &str = "RDF";
/// Atom link relation of the entry's own page (also the default relation).
const REL_ALTERNATE: &str = "alternate";
/// Byte-order mark in UTF-8.
const UTF8_BOM: &str = "\u{feff}";

/// Size limits applied to one document.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Largest document accepted, in bytes, applied both to the bytes given and
    /// to their gzip-decompressed content. Default [`DEFAULT_MAX_BYTES`].
    pub max_bytes: u64,
    /// Most URLs kept from one document; further entries are dropped and counted
    /// in [`ParseReport::over_limit`]. Default [`DEFAULT_MAX_URLS`].
    pub max_urls: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_bytes: DEFAULT_MAX_BYTES,
            max_urls: DEFAULT_MAX_URLS,
        }
    }
}

/// One URL found in a sitemap, sitemap index or feed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiscoveredUrl {
    /// Absolute http(s) URL (not normalised; see [`crate::normalize`]).
    pub url: Url,
    /// Last modification: sitemap `<lastmod>`, feed entry `updated` (for RSS,
    /// which has no such field, feed-rs copies `pubDate`).
    pub lastmod: Option<DateTime<Utc>>,
    /// Publication time hint: `<news:publication_date>`, RSS `pubDate`, Atom
    /// `published` (or `updated` when there is no `published`).
    pub published: Option<DateTime<Utc>>,
    /// Title: `<news:title>`, feed entry title (trimmed, never empty).
    pub title: Option<String>,
}

/// Which feed format a [`Document::Feed`] was written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FeedKind {
    /// RSS 0.9x, 1.0 (RDF) or 2.0.
    Rss,
    /// Atom 1.0.
    Atom,
    /// JSON Feed.
    Json,
}

/// What a document turned out to be, with the URLs it lists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Document {
    /// A `<urlset>` sitemap: pages.
    UrlSet(Vec<DiscoveredUrl>),
    /// A `<sitemapindex>`: child sitemaps to fetch, with their `<lastmod>`.
    SitemapIndex(Vec<DiscoveredUrl>),
    /// An RSS, Atom or JSON feed: entry pages.
    Feed {
        /// The feed format.
        kind: FeedKind,
        /// One URL per entry that has a usable link.
        entries: Vec<DiscoveredUrl>,
    },
}

impl Document {
    /// The URLs of the document, whatever its kind.
    pub fn urls(&self) -> &[DiscoveredUrl] {
        match self {
            Self::UrlSet(u) | Self::SitemapIndex(u) => u,
            Self::Feed { entries, .. } => entries,
        }
    }

    /// The URLs of the document, whatever its kind, by value.
    pub fn into_urls(self) -> Vec<DiscoveredUrl> {
        match self {
            Self::UrlSet(u) | Self::SitemapIndex(u) => u,
            Self::Feed { entries, .. } => entries,
        }
    }
}

/// What was skipped or dropped while parsing one document.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ParseReport {
    /// The bytes were gzip and have been decompressed.
    pub gzipped: bool,
    /// Valid entries dropped because [`Limits::max_urls`] were already kept.
    pub over_limit: usize,
    /// Entries without a URL, or whose URL does not parse.
    pub invalid_urls: usize,
    /// Entries whose URL is not http or https (`ftp:`, `mailto:`, ...).
    pub unsupported_scheme: usize,
    /// Dates (lastmod, publication) that did not parse or were implausible and
    /// were replaced by `None`. Feed dates that feed-rs could not parse are not
    /// counted: it drops them itself.
    pub dropped_dates: usize,
}

impl ParseReport {
    /// True when entries were dropped because of [`Limits::max_urls`].
    pub fn truncated(&self) -> bool {
        self.over_limit > 0
    }
}

/// A parsed document and what was skipped in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseOutcome {
    /// The document and its URLs.
    pub document: Document,
    /// Counters of skipped entries and dropped dates.
    pub report: ParseReport,
}

/// Parses a sitemap, sitemap index or feed fetched from `base` (the URL it was
/// fetched from, used to resolve relative URLs), judging dates against the
/// current time. See the [module docs](self) for what is accepted.
///
/// # Errors
///
/// [`DiscoverError`] when the document as a whole is unusable: too large (also
/// after decompression), corrupt gzip, undecodable text, malformed XML (with its
/// line and column), a feed that feed-rs rejects, no root element, or a root
/// element that is neither a sitemap nor a feed.
pub fn parse_document(
    bytes: &[u8],
    base: &Url,
    limits: &Limits,
) -> Result<ParseOutcome, DiscoverError> {
    parse_document_at(bytes, base, limits, Utc::now())
}

/// [`parse_document`] with the time against which dates in the future are
/// judged given explicitly (for tests and replays of old fetches).
///
/// # Errors
///
/// As [`parse_document`].
pub fn parse_document_at(
    bytes: &[u8],
    base: &Url,
    limits: &Limits,
    now: DateTime<Utc>,
) -> Result<ParseOutcome, DiscoverError> {
    let (data, gzipped) = gunzip(bytes, limits)?;
    let mut ctx = Ctx {
        base,
        limits,
        now,
        report: ParseReport {
            gzipped,
            ..ParseReport::default()
        },
    };
    let document = if looks_like_json(&data) {
        parse_feed(&data, &mut ctx)?
    } else {
        let text = xml_text(&data)?;
        match root_name(&text)?.as_str() {
            EL_URLSET => Document::UrlSet(parse_sitemap(&text, &mut ctx)?),
            EL_SITEMAPINDEX => Document::SitemapIndex(parse_sitemap(&text, &mut ctx)?),
            EL_RSS | EL_ATOM_FEED | EL_RDF => parse_feed(&data, &mut ctx)?,
            other => {
                return Err(DiscoverError::UnknownFormat {
                    root: other.to_string(),
                })
            }
        }
    };
    let report = ctx.report;
    tracing::debug!(
        base = %base,
        urls = document.urls().len(),
        gzipped = report.gzipped,
        over_limit = report.over_limit,
        invalid_urls = report.invalid_urls,
        unsupported_scheme = report.unsupported_scheme,
        dropped_dates = report.dropped_dates,
        "discovery document parsed"
    );
    Ok(ParseOutcome { document, report })
}

/// The `Sitemap:` URLs of a robots.txt body fetched from `robots_url`.
///
/// The field name is matched case-insensitively (texting_robots, which also
/// reads `Site-map:`); relative URLs are resolved against `robots_url`;
/// unparsable and non-http(s) URLs are skipped; duplicates are removed, first
/// occurrence kept. Only the first [`ROBOTS_MAX_BYTES`] of the body are read
/// (cut at a line end), as for the rules.
///
/// # Errors
///
/// [`DiscoverError::Robots`] when texting_robots rejects the file (a rule of
/// the `*` group that it cannot compile).
pub fn robots_sitemaps(body: &[u8], robots_url: &Url) -> Result<Vec<Url>, DiscoverError> {
    let body = cut_at_line(body, ROBOTS_MAX_BYTES);
    let robot = texting_robots::Robot::new(ROBOTS_ANY_AGENT, body)
        .map_err(|e| DiscoverError::Robots(format!("{e:#}")))?;
    Ok(resolve_sitemap_lines(
        robot.sitemaps.iter().map(String::as_str),
        robots_url,
    ))
}

/// Parses a W3C datetime (the profile of ISO 8601 that sitemaps use): `YYYY`,
/// `YYYY-MM`, `YYYY-MM-DD`, `YYYY-MM-DDThh:mmTZD`, `YYYY-MM-DDThh:mm:ss[.s]TZD`
/// with `TZD` `Z` or `+hh:mm`. Leniently also a missing `TZD` (taken as UTC), a
/// space instead of `T`, `+hhmm`, and RFC 2822 (`Tue, 10 Jun 2003 04:00:00 GMT`).
///
/// No plausibility check: see [`parse_document`] for that.
pub fn parse_w3c_datetime(text: &str) -> Option<DateTime<Utc>> {
    const WITH_OFFSET: [&str; 3] = [
        "%Y-%m-%dT%H:%M%:z",
        "%Y-%m-%dT%H:%M:%S%.f%z",
        "%Y-%m-%d %H:%M:%S%.f%:z",
    ];
    const WITHOUT_OFFSET: [&str; 3] = [
        "%Y-%m-%dT%H:%M:%S%.f",
        "%Y-%m-%dT%H:%M",
        "%Y-%m-%d %H:%M:%S%.f",
    ];
    const DATE: &str = "%Y-%m-%d";
    const YEAR_DIGITS: usize = 4;
    const YEAR_MONTH_LEN: usize = 7;

    let text = text.trim();
    if text.is_empty() {
        return None;
    }
    if let Ok(dt) = DateTime::parse_from_rfc3339(text) {
        return Some(dt.to_utc());
    }
    // chrono's %z does not take "Z": spell UTC as an offset for the formats below.
    let zulu = text
        .strip_suffix(['Z', 'z'])
        .map(|t| Cow::Owned(format!("{t}+00:00")))
        .unwrap_or(Cow::Borrowed(text));
    if let Some(dt) = WITH_OFFSET
        .iter()
        .find_map(|f| DateTime::parse_from_str(&zulu, f).ok())
    {
        return Some(dt.to_utc());
    }
    if let Some(dt) = WITHOUT_OFFSET
        .iter()
        .find_map(|f| NaiveDateTime::parse_from_str(text, f).ok())
    {
        return Some(dt.and_utc());
    }
    let date = match text.len() {
        YEAR_DIGITS => NaiveDate::parse_from_str(&format!("{text}-01-01"), DATE).ok(),
        YEAR_MONTH_LEN => NaiveDate::parse_from_str(&format!("{text}-01"), DATE).ok(),
        _ => NaiveDate::parse_from_str(text, DATE).ok(),
    };
    if let Some(d) = date {
        return d.and_hms_opt(0, 0, 0).map(|dt| dt.and_utc());
    }
    DateTime::parse_from_rfc2822(text)
        .ok()
        .map(|dt| dt.to_utc())
}

/// Parsing state shared by the sitemap and feed parsers.
struct Ctx<'a> {
    base: &'a Url,
    limits: &'a Limits,
    now: DateTime<Utc>,
    report: ParseReport,
}

impl Ctx<'_> {
    /// The URL of an entry, or `None` (counted) when it is missing, unparsable,
    /// not http(s), or over the limit of `kept` URLs.
    fn accept_url(&mut self, raw: Option<&str>, kept: usize) -> Option<Url> {
        let Some(raw) = raw.map(str::trim).filter(|s| !s.is_empty()) else {
            self.report.invalid_urls += 1;
            return None;
        };
        let Ok(url) = self.base.join(raw) else {
            self.report.invalid_urls += 1;
            return None;
        };
        if !CRAWLABLE_SCHEMES.contains(&url.scheme()) {
            self.report.unsupported_scheme += 1;
            return None;
        }
        if kept >= self.limits.max_urls {
            self.report.over_limit += 1;
            return None;
        }
        Some(url)
    }

    /// `dt` if plausible, else `None` (counted).
    fn plausible(&mut self, dt: Option<DateTime<Utc>>) -> Option<DateTime<Utc>> {
        let dt = dt?;
        if dt.year() >= MIN_PLAUSIBLE_YEAR && dt <= self.now + MAX_FUTURE_SKEW {
            Some(dt)
        } else {
            self.report.dropped_dates += 1;
            None
        }
    }

    /// A sitemap date: parsed, then checked; an empty element is no date.
    fn sitemap_date(&mut self, raw: Option<&str>) -> Option<DateTime<Utc>> {
        let raw = raw.map(str::trim).filter(|s| !s.is_empty())?;
        match parse_w3c_datetime(raw) {
            Some(dt) => self.plausible(Some(dt)),
            None => {
                self.report.dropped_dates += 1;
                None
            }
        }
    }
}

/// Trimmed, non-empty title.
fn clean_title(raw: &str) -> Option<String> {
    let t = raw.trim();
    (!t.is_empty()).then(|| t.to_string())
}

/// The decompressed document (or `bytes` itself when it is not gzip), and
/// whether it was gzip.
fn gunzip<'a>(bytes: &'a [u8], limits: &Limits) -> Result<(Cow<'a, [u8]>, bool), DiscoverError> {
    if u64::try_from(bytes.len()).unwrap_or(u64::MAX) > limits.max_bytes {
        return Err(DiscoverError::TooLarge {
            limit: limits.max_bytes,
            decompressed: false,
        });
    }
    if !bytes.starts_with(&GZIP_MAGIC) {
        return Ok((Cow::Borrowed(bytes), false));
    }
    Ok((Cow::Owned(inflate_capped(bytes, limits.max_bytes)?), true))
}

/// Decompresses gzip data (one or more members) from `gz`, reading no further
/// than needed to produce `max_bytes + 1` bytes.
fn inflate_capped(gz: impl Read, max_bytes: u64) -> Result<Vec<u8>, DiscoverError> {
    let mut out = Vec::new();
    // One byte over the limit tells "exactly at the limit" from "over it".
    flate2::read::MultiGzDecoder::new(gz)
        .take(max_bytes.saturating_add(1))
        .read_to_end(&mut out)
        .map_err(|e| DiscoverError::Gzip(e.to_string()))?;
    if u64::try_from(out.len()).unwrap_or(u64::MAX) > max_bytes {
        return Err(DiscoverError::TooLarge {
            limit: max_bytes,
            decompressed: true,
        });
    }
    Ok(out)
}

/// The first `max` bytes of `body`, cut after the last line end within them.
fn cut_at_line(body: &[u8], max: u64) -> &[u8] {
    let max = usize::try_from(max).unwrap_or(usize::MAX);
    if body.len() <= max {
        return body;
    }
    let head = &body[..max];
    match head.iter().rposition(|&b| b == b'\n') {
        Some(end) => &head[..=end],
        None => head,
    }
}

/// True when the first significant character is `{` (a JSON Feed).
fn looks_like_json(data: &[u8]) -> bool {
    let data = data.strip_prefix(UTF8_BOM.as_bytes()).unwrap_or(data);
    data.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{')
}

/// The document as UTF-8 text: as is when it is UTF-8, else decoded (invalid
/// sequences replaced) with the non-UTF-8 encoding its XML declaration names.
/// A byte-order mark is removed.
fn xml_text(data: &[u8]) -> Result<Cow<'_, str>, DiscoverError> {
    let utf8_error = match std::str::from_utf8(data) {
        Ok(s) => return Ok(Cow::Borrowed(s.strip_prefix(UTF8_BOM).unwrap_or(s))),
        Err(e) => e,
    };
    let mut reader = quick_xml::Reader::from_reader(data);
    let declared = match reader.read_event() {
        Ok(Event::Decl(decl)) => decl.encoder(),
        _ => None,
    };
    match declared {
        Some(encoding) if encoding != encoding_rs::UTF_8 => {
            let (text, _, _) = encoding.decode(data);
            Ok(Cow::Owned(text.into_owned()))
        }
        _ => Err(DiscoverError::Encoding(format!(
            "not UTF-8 and no other encoding declared: {utf8_error}"
        ))),
    }
}

/// A [`DiscoverError::Xml`] at byte `pos` of `text`.
fn xml_error(text: &str, pos: u64, message: impl std::fmt::Display) -> DiscoverError {
    let pos = usize::try_from(pos).unwrap_or(usize::MAX).min(text.len());
    let before = &text.as_bytes()[..pos];
    let line_start = before
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    let column = pos - line_start + 1;
    DiscoverError::Xml {
        line: u64::try_from(line).unwrap_or(u64::MAX),
        column: u64::try_from(column).unwrap_or(u64::MAX),
        message: message.to_string(),
    }
}

/// Local name of the root element.
fn root_name(text: &str) -> Result<String, DiscoverError> {
    let mut reader = NsReader::from_str(text);
    loop {
        match reader.read_event() {
            Ok(Event::Start(e) | Event::Empty(e)) => {
                return Ok(e.name().local_name().as_ref().to_string())
            }
            Ok(Event::Eof) => return Err(DiscoverError::Empty),
            Ok(_) => {}
            Err(e) => return Err(xml_error(text, reader.error_position(), e)),
        }
    }
}

/// Elements of the sitemap vocabulary, by position; everything else is `Other`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tag {
    UrlSet,
    SitemapIndex,
    Url,
    Sitemap,
    Loc,
    Lastmod,
    News,
    NewsPublicationDate,
    NewsTitle,
    Other,
}

impl Tag {
    /// Elements whose text is collected.
    fn has_text(self) -> bool {
        matches!(
            self,
            Self::Loc | Self::Lastmod | Self::NewsPublicationDate | Self::NewsTitle
        )
    }

    /// Classifies an element from its parent, namespace and name.
    fn of(parent: Option<Tag>, ns: &ResolveResult<'_>, name: QName<'_>) -> Self {
        let prefix = name.prefix();
        // Sitemaps in the wild often lack or misspell the default namespace:
        // any unprefixed element counts as sitemap vocabulary.
        let core =
            prefix.is_none() || matches!(ns, ResolveResult::Bound(n) if n.as_ref() == SITEMAP_NS);
        // The news prefix is often used without being declared.
        let news = matches!(ns, ResolveResult::Bound(n) if n.as_ref() == NEWS_NS)
            || prefix.is_some_and(|p| p.as_ref() == NEWS_PREFIX);
        let local = name.local_name();
        match (parent, local.as_ref()) {
            (None, EL_URLSET) if core => Self::UrlSet,
            (None, EL_SITEMAPINDEX) if core => Self::SitemapIndex,
            (Some(Self::UrlSet), EL_URL) if core => Self::Url,
            (Some(Self::SitemapIndex), EL_SITEMAP) if core => Self::Sitemap,
            (Some(Self::Url | Self::Sitemap), EL_LOC) if core => Self::Loc,
            (Some(Self::Url | Self::Sitemap), EL_LASTMOD) if core => Self::Lastmod,
            (Some(Self::Url), EL_NEWS) if news => Self::News,
            (Some(Self::News), EL_PUBLICATION_DATE) if news => Self::NewsPublicationDate,
            (Some(Self::News), EL_TITLE) if news => Self::NewsTitle,
            _ => Self::Other,
        }
    }
}

/// Texts of one `<url>` or `<sitemap>` entry, as written.
#[derive(Debug, Default)]
struct RawEntry {
    loc: Option<String>,
    lastmod: Option<String>,
    published: Option<String>,
    title: Option<String>,
}

/// Appends the replacement of an entity or character reference to `out`;
/// an unknown entity is kept as written.
fn push_reference(out: &mut String, r: &BytesRef<'_>) {
    if r.is_char_ref() {
        if let Ok(Some(c)) = r.resolve_char_ref() {
            out.push(c);
            return;
        }
    } else if let Some(s) = quick_xml::escape::resolve_predefined_entity(r) {
        out.push_str(s);
        return;
    }
    out.push('&');
    out.push_str(r);
    out.push(';');
}

/// The entries of a `<urlset>` or `<sitemapindex>` (the caller has sniffed the root).
fn parse_sitemap(text: &str, ctx: &mut Ctx<'_>) -> Result<Vec<DiscoveredUrl>, DiscoverError> {
    let mut reader = NsReader::from_str(text);
    let mut stack: Vec<Tag> = Vec::new();
    let mut entry: Option<RawEntry> = None;
    let mut buf = String::new();
    let mut out = Vec::new();
    loop {
        let event = reader
            .read_event()
            .map_err(|e| xml_error(text, reader.error_position(), e))?;
        match event {
            Event::Start(e) => {
                let (ns, _) = reader.resolver().resolve_element(e.name());
                let tag = Tag::of(stack.last().copied(), &ns, e.name());
                match tag {
                    Tag::Url | Tag::Sitemap => entry = Some(RawEntry::default()),
                    t if t.has_text() => buf.clear(),
                    _ => {}
                }
                stack.push(tag);
            }
            Event::Empty(e) => {
                let (ns, _) = reader.resolver().resolve_element(e.name());
                let tag = Tag::of(stack.last().copied(), &ns, e.name());
                if matches!(tag, Tag::Url | Tag::Sitemap) {
                    finish_entry(RawEntry::default(), ctx, &mut out);
                }
            }
            Event::End(_) => match (stack.pop(), entry.as_mut()) {
                (Some(Tag::Url | Tag::Sitemap), Some(_)) => {
                    if let Some(raw) = entry.take() {
                        finish_entry(raw, ctx, &mut out);
                    }
                }
                (Some(Tag::Loc), Some(raw)) => raw.loc = Some(std::mem::take(&mut buf)),
                (Some(Tag::Lastmod), Some(raw)) => raw.lastmod = Some(std::mem::take(&mut buf)),
                (Some(Tag::NewsPublicationDate), Some(raw)) => {
                    raw.published = Some(std::mem::take(&mut buf));
                }
                (Some(Tag::NewsTitle), Some(raw)) => raw.title = Some(std::mem::take(&mut buf)),
                _ => {}
            },
            Event::Text(t) if in_text(&stack) => buf.push_str(&t.xml10_content()),
            Event::CData(c) if in_text(&stack) => buf.push_str(&c.xml10_content()),
            Event::GeneralRef(r) if in_text(&stack) => {
                push_reference(&mut buf, &r);
            }
            Event::Eof => break,
            _ => {}
        }
    }
    if !stack.is_empty() {
        return Err(xml_error(
            text,
            u64::try_from(text.len()).unwrap_or(u64::MAX),
            format!(
                "document ends inside {} unclosed element(s) (truncated?)",
                stack.len()
            ),
        ));
    }
    Ok(out)
}

/// True when the innermost open element is one whose text is collected.
fn in_text(stack: &[Tag]) -> bool {
    stack.last().is_some_and(|tag| tag.has_text())
}

/// Turns a raw sitemap entry into a [`DiscoveredUrl`], or counts why not.
fn finish_entry(raw: RawEntry, ctx: &mut Ctx<'_>, out: &mut Vec<DiscoveredUrl>) {
    let Some(url) = ctx.accept_url(raw.loc.as_deref(), out.len()) else {
        return;
    };
    let lastmod = ctx.sitemap_date(raw.lastmod.as_deref());
    let published = ctx.sitemap_date(raw.published.as_deref());
    out.push(DiscoveredUrl {
        url,
        lastmod,
        published,
        title: raw.title.as_deref().and_then(clean_title),
    });
}

/// The link of a feed entry to its page: the first link without a relation or
/// with `alternate` (not `self`, `enclosure`, `replies`, ...).
fn entry_link(entry: &Entry) -> Option<&str> {
    entry
        .links
        .iter()
        .find(|l| l.rel.as_deref().is_none_or(|r| r == REL_ALTERNATE))
        .map(|l| l.href.as_str())
}

/// An RSS, Atom or JSON feed, parsed by feed-rs.
fn parse_feed(data: &[u8], ctx: &mut Ctx<'_>) -> Result<Document, DiscoverError> {
    let parser = feed_rs::parser::Builder::new()
        .base_uri(Some(ctx.base.as_str()))
        .sanitize_content(false)
        .build();
    // feed-rs (through quick-xml's decoding reader) panics on some broken
    // XML declarations ("set_encoding() called after prefix buffer was
    // drained", found by fuzz_sitemaps_and_feeds): a panic is a broken feed.
    let parsed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| parser.parse(data)))
        .map_err(|_| DiscoverError::Feed("the feed parser gave up on this document".into()))?;
    let feed = parsed.map_err(|e| DiscoverError::Feed(e.to_string()))?;
    let kind = match feed.feed_type {
        FeedType::Atom => FeedKind::Atom,
        FeedType::JSON => FeedKind::Json,
        FeedType::RSS0 | FeedType::RSS1 | FeedType::RSS2 => FeedKind::Rss,
    };
    let mut entries = Vec::new();
    for entry in &feed.entries {
        let Some(url) = ctx.accept_url(entry_link(entry), entries.len()) else {
            continue;
        };
        let lastmod = ctx.plausible(entry.updated);
        let published = match entry.published {
            Some(p) => ctx.plausible(Some(p)),
            None => lastmod,
        };
        entries.push(DiscoveredUrl {
            url,
            lastmod,
            published,
            title: entry.title.as_ref().and_then(|t| clean_title(&t.content)),
        });
    }
    Ok(Document::Feed { kind, entries })
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use chrono::TimeZone;
    use flate2::write::GzEncoder;
    use flate2::Compression;

    use super::*;
    use crate::robots::RobotsRules;

    /// The time the tests parse at.
    fn now() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2024, 6, 1, 0, 0, 0).unwrap()
    }

    fn utc(y: i32, mo: u32, d: u32, h: u32, mi: u32, s: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(y, mo, d, h, mi, s).unwrap()
    }

    fn base() -> Url {
        Url::parse("https://news.example/sitemaps/sitemap.xml").unwrap()
    }

    fn parse(doc: &[u8]) -> Result<ParseOutcome, DiscoverError> {
        parse_document_at(doc, &base(), &Limits::default(), now())
    }

    fn gzip(data: &[u8]) -> Vec<u8> {
        let mut enc = GzEncoder::new(Vec::new(), Compression::fast());
        enc.write_all(data).unwrap();
        enc.finish().unwrap()
    }

    fn urls(doc: &Document) -> Vec<&str> {
        doc.urls().iter().map(|u| u.url.as_str()).collect()
    }

    fn urlset(body: &str) -> String {
        format!(
            r#"<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"
        xmlns:news="http://www.google.com/schemas/sitemap-news/0.9"
        xmlns:image="http://www.google.com/schemas/sitemap-image/1.1">
{body}
</urlset>"#
        )
    }

    // ---- robots.txt ----

    const ROBOTS: &str = "User-agent: *\nDisallow: /private\n\
        Sitemap: https://news.example/sitemap.xml\n\
        SITEMAP: /news-sitemap.xml # the news one\n\
        sitemap:https://news.example/sitemap.xml\n\
        Sitemap: ftp://news.example/old.xml\n\
        Sitemap: https://cdn.example/feeds/atom.xml\n";

    #[test]
    fn robots_sitemap_lines_any_case_resolved_deduplicated_http_only() {
        let robots = Url::parse("https://news.example/robots.txt").unwrap();
        let got = robots_sitemaps(ROBOTS.as_bytes(), &robots).unwrap();
        let got: Vec<&str> = got.iter().map(Url::as_str).collect();
        assert_eq!(
            got,
            [
                "https://news.example/sitemap.xml",
                "https://news.example/news-sitemap.xml",
                "https://cdn.example/feeds/atom.xml",
            ]
        );
    }

    #[test]
    fn robots_rules_give_the_same_sitemaps_as_the_raw_body() {
        let robots = Url::parse("https://news.example/robots.txt").unwrap();
        let rules = RobotsRules::from_bytes("harvest", ROBOTS.as_bytes());
        assert_eq!(
            rules.sitemaps(&robots),
            robots_sitemaps(ROBOTS.as_bytes(), &robots).unwrap()
        );
        assert!(RobotsRules::AllowAll.sitemaps(&robots).is_empty());
    }

    #[test]
    fn robots_sitemap_lines_past_the_read_limit_are_ignored() {
        let robots = Url::parse("https://news.example/robots.txt").unwrap();
        let mut body = String::from("Sitemap: /first.xml\n");
        let padding = format!("# {}\n", "x".repeat(1000));
        while (body.len() as u64) < ROBOTS_MAX_BYTES {
            body.push_str(&padding);
        }
        body.push_str("Sitemap: /late.xml\n");
        let got = robots_sitemaps(body.as_bytes(), &robots).unwrap();
        assert_eq!(got, [Url::parse("https://news.example/first.xml").unwrap()]);
    }

    // ---- sitemaps ----

    #[test]
    fn urlset_entries_with_w3c_lastmod_forms_and_escaped_locs() {
        let doc = urlset(
            r#"
  <url><loc> https://news.example/a?x=1&amp;y=2 </loc><lastmod>2024-05-02</lastmod></url>
  <url><loc><![CDATA[https://news.example/b?p=1&q=2]]></loc>
       <lastmod>2024-05-02T10:30:00+02:00</lastmod><changefreq>daily</changefreq></url>
  <url><loc>https://news.example/c&#x2F;d</loc><lastmod>2024-05-03T08:00Z</lastmod></url>
  <url><loc>https://news.example/e</loc><lastmod>2024-05-03T08:00:00.500Z</lastmod></url>
  <url><loc>https://news.example/f</loc></url>"#,
        );
        let out = parse(doc.as_bytes()).unwrap();
        assert!(matches!(out.document, Document::UrlSet(_)));
        assert_eq!(
            urls(&out.document),
            [
                "https://news.example/a?x=1&y=2",
                "https://news.example/b?p=1&q=2",
                "https://news.example/c/d",
                "https://news.example/e",
                "https://news.example/f",
            ]
        );
        let lastmods: Vec<_> = out.document.urls().iter().map(|u| u.lastmod).collect();
        assert_eq!(
            lastmods,
            [
                Some(utc(2024, 5, 2, 0, 0, 0)),
                Some(utc(2024, 5, 2, 8, 30, 0)),
                Some(utc(2024, 5, 3, 8, 0, 0)),
                Some(utc(2024, 5, 3, 8, 0, 0) + TimeDelta::milliseconds(500)),
                None,
            ]
        );
        assert_eq!(out.report, ParseReport::default());
    }

    #[test]
    fn news_extension_gives_publication_date_and_title_and_image_locs_are_not_pages() {
        let doc = urlset(
            r#"
  <url>
    <loc>https://news.example/2024/05/31/story.html</loc>
    <image:image><image:loc>https://img.example/pic.jpg</image:loc></image:image>
    <news:news>
      <news:publication><news:name>The Example</news:name><news:language>en</news:language></news:publication>
      <news:publication_date>2024-05-31T18:15:00-04:00</news:publication_date>
      <news:title>  Council votes &lt;yes&gt; on budget </news:title>
    </news:news>
  </url>"#,
        );
        let out = parse(doc.as_bytes()).unwrap();
        assert_eq!(
            out.document.urls(),
            [DiscoveredUrl {
                url: Url::parse("https://news.example/2024/05/31/story.html").unwrap(),
                lastmod: None,
                published: Some(utc(2024, 5, 31, 22, 15, 0)),
                title: Some("Council votes <yes> on budget".to_string()),
            }]
        );
    }

    #[test]
    fn news_prefix_is_accepted_when_undeclared_and_sitemap_namespace_may_be_missing() {
        let doc = r#"<urlset><url><loc>https://news.example/x</loc>
            <news:news><news:publication_date>2024-05-01</news:publication_date>
            <news:title>T</news:title></news:news></url></urlset>"#;
        let out = parse(doc.as_bytes()).unwrap();
        let u = &out.document.urls()[0];
        assert_eq!(u.published, Some(utc(2024, 5, 1, 0, 0, 0)));
        assert_eq!(u.title.as_deref(), Some("T"));
    }

    #[test]
    fn sitemap_index_lists_child_sitemaps_with_lastmod() {
        let doc = r#"<?xml version="1.0" encoding="UTF-8"?>
<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <sitemap><loc>https://news.example/sitemap-2024-05.xml.gz</loc><lastmod>2024-05-31T23:00:00Z</lastmod></sitemap>
  <sitemap><loc>sitemap-news.xml</loc></sitemap>
</sitemapindex>"#;
        let out = parse(doc.as_bytes()).unwrap();
        let Document::SitemapIndex(children) = &out.document else {
            panic!("expected a sitemap index, got {:?}", out.document);
        };
        assert_eq!(
            urls(&out.document),
            [
                "https://news.example/sitemap-2024-05.xml.gz",
                "https://news.example/sitemaps/sitemap-news.xml",
            ]
        );
        assert_eq!(children[0].lastmod, Some(utc(2024, 5, 31, 23, 0, 0)));
        assert_eq!(children[1].lastmod, None);
    }

    #[test]
    fn gzip_is_detected_by_magic_bytes_not_by_name() {
        let doc = urlset("<url><loc>https://news.example/z</loc></url>");
        let gz_url = Url::parse("https://news.example/sitemap.xml.gz").unwrap();
        let plain_under_gz_name =
            parse_document_at(doc.as_bytes(), &gz_url, &Limits::default(), now()).unwrap();
        assert!(!plain_under_gz_name.report.gzipped);
        let gz_under_xml_name = parse(&gzip(doc.as_bytes())).unwrap();
        assert!(gz_under_xml_name.report.gzipped);
        assert_eq!(
            urls(&gz_under_xml_name.document),
            ["https://news.example/z"]
        );
        assert_eq!(plain_under_gz_name.document, gz_under_xml_name.document);
    }

    #[test]
    fn gzip_bomb_stops_at_the_decompressed_limit() {
        // 256 gzip members of 1 MiB of zeros each: 256 MiB once inflated, about
        // 256 KiB compressed. Decompression must stop at the 50 MiB default.
        let member = gzip(&vec![0u8; 1 << 20]);
        let bomb: Vec<u8> = member
            .iter()
            .copied()
            .cycle()
            .take(member.len() * 256)
            .collect();
        assert!((bomb.len() as u64) < DEFAULT_MAX_BYTES);
        let err = parse(&bomb).unwrap_err();
        assert_eq!(
            err,
            DiscoverError::TooLarge {
                limit: DEFAULT_MAX_BYTES,
                decompressed: true
            }
        );
        assert!(
            err.to_string().contains("after gzip decompression"),
            "{err}"
        );

        // It stops early: most of the compressed input is never read.
        let mut rest: &[u8] = &bomb;
        let err = inflate_capped(&mut rest, DEFAULT_MAX_BYTES).unwrap_err();
        assert!(matches!(err, DiscoverError::TooLarge { .. }));
        assert!(
            rest.len() > bomb.len() / 2,
            "read {} of {} compressed bytes",
            bomb.len() - rest.len(),
            bomb.len()
        );
    }

    #[test]
    fn decompressed_limit_is_inclusive() {
        let doc = urlset("<url><loc>https://news.example/z</loc></url>");
        let gz = gzip(doc.as_bytes());
        let exact = Limits {
            max_bytes: doc.len() as u64,
            ..Limits::default()
        };
        assert!(parse_document_at(&gz, &base(), &exact, now()).is_ok());
        let one_less = Limits {
            max_bytes: doc.len() as u64 - 1,
            ..Limits::default()
        };
        assert_eq!(
            parse_document_at(&gz, &base(), &one_less, now()).unwrap_err(),
            DiscoverError::TooLarge {
                limit: doc.len() as u64 - 1,
                decompressed: true
            }
        );
    }

    #[test]
    fn raw_document_over_the_limit_is_refused_before_parsing() {
        let doc = urlset("<url><loc>https://news.example/z</loc></url>");
        let limits = Limits {
            max_bytes: 64,
            ..Limits::default()
        };
        assert_eq!(
            parse_document_at(doc.as_bytes(), &base(), &limits, now()).unwrap_err(),
            DiscoverError::TooLarge {
                limit: 64,
                decompressed: false
            }
        );
    }

    #[test]
    fn corrupt_gzip_is_an_error() {
        let mut gz = gzip(urlset("<url><loc>https://news.example/z</loc></url>").as_bytes());
        gz.truncate(gz.len() / 2);
        assert!(matches!(parse(&gz), Err(DiscoverError::Gzip(_))));
        let garbage = [0x1f, 0x8b, 0xff, 0xff, 0xff, 0xff];
        assert!(matches!(parse(&garbage), Err(DiscoverError::Gzip(_))));
    }

    #[test]
    fn malformed_xml_names_line_and_column() {
        let doc = "<urlset>\n  <url><loc>https://news.example/a</loc></url>\n  <url><loc>x</lastmod></url>\n</urlset>";
        let err = parse(doc.as_bytes()).unwrap_err();
        let DiscoverError::Xml {
            line,
            column,
            message,
        } = &err
        else {
            panic!("expected an XML error, got {err:?}");
        };
        assert_eq!(*line, 3);
        assert_eq!(*column, 14, "{err}");
        assert!(message.contains("lastmod"), "{message}");
    }

    #[test]
    fn truncated_sitemap_is_an_error_not_a_short_list() {
        let doc = urlset("<url><loc>https://news.example/a</loc></url><url><loc>https://news.ex");
        let doc = &doc[..doc.find("news.ex\n").unwrap() + "news.ex".len()];
        let err = parse(doc.as_bytes()).unwrap_err();
        assert!(
            matches!(&err, DiscoverError::Xml { message, .. } if message.contains("truncated")),
            "{err:?}"
        );
    }

    #[test]
    fn hundred_thousand_urls_keep_the_first_fifty_thousand_and_count_the_rest() {
        const TOTAL: usize = 100_000;
        let mut body = String::with_capacity(TOTAL * 80);
        for i in 0..TOTAL {
            body.push_str(&format!(
                "<url><loc>https://news.example/a/{i}</loc><lastmod>2024-05-01</lastmod></url>\n"
            ));
        }
        let doc = urlset(&body);
        assert!((doc.len() as u64) < DEFAULT_MAX_BYTES);
        let out = parse(doc.as_bytes()).unwrap();
        let kept = out.document.urls();
        assert_eq!(kept.len(), DEFAULT_MAX_URLS);
        assert_eq!(kept[0].url.as_str(), "https://news.example/a/0");
        assert_eq!(
            kept[DEFAULT_MAX_URLS - 1].url.as_str(),
            format!("https://news.example/a/{}", DEFAULT_MAX_URLS - 1)
        );
        assert_eq!(out.report.over_limit, TOTAL - DEFAULT_MAX_URLS);
        assert!(out.report.truncated());
        assert_eq!(out.report.invalid_urls, 0);
    }

    #[test]
    fn implausible_dates_become_none_and_are_counted() {
        let doc = urlset(
            r#"
  <url><loc>https://news.example/ok</loc><lastmod>2024-05-31T12:00:00Z</lastmod>
    <news:news><news:publication_date>2024-06-01T12:00:00Z</news:publication_date></news:news></url>
  <url><loc>https://news.example/future</loc><lastmod>2024-05-31</lastmod>
    <news:news><news:publication_date>2024-06-03T00:00:00Z</news:publication_date></news:news></url>
  <url><loc>https://news.example/year0</loc><lastmod>0000-01-01</lastmod></url>
  <url><loc>https://news.example/year9999</loc><lastmod>9999-12-31T23:59:59Z</lastmod></url>
  <url><loc>https://news.example/garbage</loc><lastmod>yesterday</lastmod>
    <news:news><news:publication_date>2024-02-30</news:publication_date></news:news></url>"#,
        );
        let out = parse(doc.as_bytes()).unwrap();
        let dates: Vec<_> = out
            .document
            .urls()
            .iter()
            .map(|u| (u.lastmod, u.published))
            .collect();
        assert_eq!(
            dates,
            [
                // 12 hours ahead of `now`: within the allowed skew.
                (
                    Some(utc(2024, 5, 31, 12, 0, 0)),
                    Some(utc(2024, 6, 1, 12, 0, 0))
                ),
                (Some(utc(2024, 5, 31, 0, 0, 0)), None),
                (None, None),
                (None, None),
                (None, None),
            ]
        );
        assert_eq!(out.report.dropped_dates, 5);
        assert_eq!(
            out.document.urls().len(),
            5,
            "entries are kept without dates"
        );
    }

    #[test]
    fn bad_and_non_http_locs_are_skipped_and_counted() {
        let doc = urlset(
            r#"
  <url><loc>ftp://news.example/file</loc></url>
  <url><loc>mailto:desk@news.example</loc></url>
  <url><loc>http://exa mple.com/</loc></url>
  <url><loc>https://[::1</loc></url>
  <url><loc>   </loc></url>
  <url><lastmod>2024-05-01</lastmod></url>
  <url/>
  <url><loc>/relative/page.html</loc></url>
  <url><loc>https://news.example/good</loc></url>"#,
        );
        let out = parse(doc.as_bytes()).unwrap();
        assert_eq!(
            urls(&out.document),
            [
                "https://news.example/relative/page.html",
                "https://news.example/good"
            ]
        );
        assert_eq!(out.report.unsupported_scheme, 2);
        assert_eq!(out.report.invalid_urls, 5);
    }

    #[test]
    fn sitemap_in_a_declared_legacy_encoding_is_decoded() {
        let mut doc = b"<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?>\n<urlset><url><loc>https://news.example/cafe</loc><news:news><news:title>Caf".to_vec();
        doc.push(0xE9); // e acute in Latin-1, not valid UTF-8 on its own
        doc.extend_from_slice(b"</news:title></news:news></url></urlset>");
        let out = parse(&doc).unwrap();
        assert_eq!(out.document.urls()[0].title.as_deref(), Some("Caf\u{e9}"));
    }

    #[test]
    fn invalid_utf8_without_declared_encoding_is_an_error() {
        let doc = b"<urlset><url><loc>https://news.example/\xff</loc></url></urlset>";
        let err = parse(doc).unwrap_err();
        assert!(matches!(err, DiscoverError::Encoding(_)), "{err:?}");
    }

    #[test]
    fn html_or_empty_documents_are_not_sitemaps() {
        assert_eq!(
            parse(b"<!DOCTYPE html><html><body>404</body></html>").unwrap_err(),
            DiscoverError::UnknownFormat {
                root: "html".to_string()
            }
        );
        assert_eq!(
            parse(b"<?xml version=\"1.0\"?>\n  ").unwrap_err(),
            DiscoverError::Empty
        );
        assert_eq!(parse(b"").unwrap_err(), DiscoverError::Empty);
    }

    // ---- feeds ----

    const RSS: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" xmlns:atom="http://www.w3.org/2005/Atom">
<channel>
  <title>Example News</title><link>https://news.example/</link><description>d</description>
  <atom:link href="https://news.example/feeds/rss.xml" rel="self" type="application/rss+xml"/>
  <item>
    <title> First story </title>
    <link>/2024/05/31/first.html</link>
    <pubDate>Fri, 31 May 2024 18:00:00 +0200</pubDate>
  </item>
  <item>
    <title>Second</title>
    <link>https://news.example/2024/05/30/second.html</link>
    <pubDate>Mon, 01 Jan 2035 00:00:00 GMT</pubDate>
  </item>
  <item><title>No link</title><description>only text</description></item>
  <item><title>Podcast</title><link>ftp://news.example/ep.mp3</link></item>
</channel>
</rss>"#;

    #[test]
    fn rss_items_give_resolved_links_pub_dates_and_titles() {
        let feed_url = Url::parse("https://news.example/feeds/rss.xml").unwrap();
        let out = parse_document_at(RSS.as_bytes(), &feed_url, &Limits::default(), now()).unwrap();
        let Document::Feed { kind, entries } = &out.document else {
            panic!("expected a feed, got {:?}", out.document);
        };
        assert_eq!(*kind, FeedKind::Rss);
        assert_eq!(
            entries[0],
            DiscoveredUrl {
                url: Url::parse("https://news.example/2024/05/31/first.html").unwrap(),
                // feed-rs copies pubDate into `updated` when an item has none.
                lastmod: Some(utc(2024, 5, 31, 16, 0, 0)),
                published: Some(utc(2024, 5, 31, 16, 0, 0)),
                title: Some("First story".to_string()),
            }
        );
        assert_eq!(
            entries[1].url.as_str(),
            "https://news.example/2024/05/30/second.html"
        );
        assert_eq!(entries[1].published, None, "a date years ahead is no hint");
        assert_eq!(entries[1].lastmod, None);
        assert_eq!(entries.len(), 2);
        assert_eq!(out.report.dropped_dates, 2);
        assert_eq!(out.report.invalid_urls, 1);
        assert_eq!(out.report.unsupported_scheme, 1);
    }

    #[test]
    fn atom_entries_use_the_alternate_link_and_fall_back_to_updated() {
        let doc = r#"<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom">
  <title>Example</title><id>urn:example:feed</id><updated>2024-05-31T12:00:00Z</updated>
  <link rel="self" href="https://news.example/atom.xml"/>
  <entry>
    <title type="text">Published one</title><id>urn:example:1</id>
    <link rel="self" href="https://api.news.example/entries/1"/>
    <link rel="alternate" type="text/html" href="articles/1.html"/>
    <published>2024-05-30T09:00:00+01:00</published>
    <updated>2024-05-31T10:00:00Z</updated>
  </entry>
  <entry>
    <title>Updated only</title><id>urn:example:2</id>
    <link href="https://news.example/articles/2.html"/>
    <updated>2024-05-29T07:00:00Z</updated>
  </entry>
</feed>"#;
        let feed_url = Url::parse("https://news.example/feeds/atom.xml").unwrap();
        let out = parse_document_at(doc.as_bytes(), &feed_url, &Limits::default(), now()).unwrap();
        let Document::Feed { kind, entries } = &out.document else {
            panic!("expected a feed, got {:?}", out.document);
        };
        assert_eq!(*kind, FeedKind::Atom);
        assert_eq!(
            entries[0],
            DiscoveredUrl {
                url: Url::parse("https://news.example/feeds/articles/1.html").unwrap(),
                lastmod: Some(utc(2024, 5, 31, 10, 0, 0)),
                published: Some(utc(2024, 5, 30, 8, 0, 0)),
                title: Some("Published one".to_string()),
            }
        );
        assert_eq!(
            entries[1].url.as_str(),
            "https://news.example/articles/2.html"
        );
        assert_eq!(entries[1].published, Some(utc(2024, 5, 29, 7, 0, 0)));
        assert_eq!(entries.len(), 2);
    }

    #[test]
    fn json_feed_is_recognised() {
        let doc = r#"{"version": "https://jsonfeed.org/version/1.1", "title": "J",
            "items": [{"id": "1", "url": "https://news.example/j/1", "title": "One",
                       "date_published": "2024-05-30T10:00:00Z"}]}"#;
        let out = parse(doc.as_bytes()).unwrap();
        let Document::Feed { kind, entries } = &out.document else {
            panic!("expected a feed, got {:?}", out.document);
        };
        assert_eq!(*kind, FeedKind::Json);
        assert_eq!(entries[0].url.as_str(), "https://news.example/j/1");
        assert_eq!(entries[0].published, Some(utc(2024, 5, 30, 10, 0, 0)));
    }

    #[test]
    fn feed_entries_over_the_limit_are_counted() {
        let feed_url = Url::parse("https://news.example/feeds/rss.xml").unwrap();
        let limits = Limits {
            max_urls: 1,
            ..Limits::default()
        };
        let out = parse_document_at(RSS.as_bytes(), &feed_url, &limits, now()).unwrap();
        assert_eq!(out.document.urls().len(), 1);
        assert_eq!(out.report.over_limit, 1);
    }

    #[test]
    fn malformed_feed_is_an_error() {
        let doc = r#"<rss version="2.0"><channel><item><title>x</item></channel></rss>"#;
        let err = parse(doc.as_bytes()).unwrap_err();
        assert!(matches!(err, DiscoverError::Feed(_)), "{err:?}");
    }

    // ---- dates ----

    #[test]
    fn w3c_datetime_forms() {
        let cases = [
            ("1997", Some(utc(1997, 1, 1, 0, 0, 0))),
            ("1997-07", Some(utc(1997, 7, 1, 0, 0, 0))),
            ("1997-07-16", Some(utc(1997, 7, 16, 0, 0, 0))),
            ("1997-07-16T19:20+01:00", Some(utc(1997, 7, 16, 18, 20, 0))),
            ("1997-07-16T19:20Z", Some(utc(1997, 7, 16, 19, 20, 0))),
            (
                "1997-07-16T19:20:30+01:00",
                Some(utc(1997, 7, 16, 18, 20, 30)),
            ),
            (
                "1997-07-16T19:20:30+0100",
                Some(utc(1997, 7, 16, 18, 20, 30)),
            ),
            ("1997-07-16T19:20:30", Some(utc(1997, 7, 16, 19, 20, 30))),
            ("1997-07-16 19:20:30", Some(utc(1997, 7, 16, 19, 20, 30))),
            (
                "Wed, 16 Jul 1997 19:20:30 GMT",
                Some(utc(1997, 7, 16, 19, 20, 30)),
            ),
            ("", None),
            ("1997-13-01", None),
            ("16/07/1997", None),
            ("soon", None),
        ];
        for (text, want) in cases {
            assert_eq!(parse_w3c_datetime(text), want, "{text:?}");
        }
    }
}

#[cfg(test)]
mod fuzz_regressions {
    use super::*;

    /// Regression (fuzz_sitemaps_and_feeds): a second XML declaration that
    /// names an encoding made quick-xml panic ("set_encoding() called after
    /// prefix buffer was drained") inside the feed parser.
    #[test]
    fn a_second_xml_declaration_is_an_error_not_a_panic() {
        let doc = br#"<?xml version="1.0" encoding="gbk"?<?xml version="1.0" encoding="gbk"?><rss><rss version="2.0"><channel><title>t</title><item><title>x</title><link>https://news.example.com/x.html</link></item></channel></rss>"#;
        let base = Url::parse("https://news.example.com/").expect("url");
        let r = parse_document(doc, &base, &Limits::default());
        assert!(matches!(r, Err(DiscoverError::Feed(_))), "{r:?}");
    }
}
