//! What a query asks: its filters, sort and page ([`Query`]), the statistics asked
//! of it ([`StatsQuery`]) and the shapes of the answers.

use super::cursor::{Cursor, Sort};
use crate::error::{Error, Result};
#[cfg(doc)]
use crate::index::Index;
use crate::keys;
use crate::record::PageRecord;
use crate::zone::{Interval, Zone};
use chrono::{DateTime, TimeZone, Timelike, Utc};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeSet, HashSet};

/// A multi-attribute selection of pages.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Query {
    /// Sources to search; empty = every source.
    pub sources: Vec<String>,
    /// Inclusive lower bound of the key time.
    pub from: DateTime<Utc>,
    /// Exclusive upper bound of the key time.
    pub to: DateTime<Utc>,
    /// Topic is any of these (empty = any topic).
    pub topics: Vec<String>,
    /// Media is any of these (empty = any media, including none).
    pub media: Vec<String>,
    /// Every keyword must be present (case-insensitive).
    pub keywords: Vec<String>,
    /// Comments >= this (pages without a comment count do not match).
    pub min_comments: Option<u64>,
    /// Comments <= this (pages without a comment count do not match).
    pub max_comments: Option<u64>,
    /// Also return revisit records.
    pub include_revisits: bool,
    /// At most this many hits: [`Index::search`] returns the earliest ones,
    /// [`Index::search_page`] one page (default 20, at most 1,000). Ignored by
    /// statistics.
    pub limit: Option<usize>,
    /// At least one of these keywords must be present (case-insensitive;
    /// empty = no condition).
    #[serde(default)]
    pub keywords_any: Vec<String>,
    /// Leave out pages known to nearly duplicate another (`near_duplicate_of` set).
    #[serde(default)]
    pub collapse_near_duplicates: bool,
    /// Order of [`Index::search_page`] (ignored by [`Index::search`], which is
    /// always oldest first).
    #[serde(default)]
    pub sort: Sort,
    /// Continue after this position ([`Index::search_page`] only).
    #[serde(default)]
    pub cursor: Option<Cursor>,
    /// The publish time came from one of these (`meta`, `jsonld`, `time`,
    /// `text`, `url`, `feed`, `sitemap`, `modified`, `fetch`; empty = any). Checked on the
    /// data row ([`PageRecord::published_source`]).
    #[serde(default)]
    pub published_from: Vec<String>,
    /// The headline or text holds this text query ([`crate::text::TextQuery`]:
    /// words, "phrases", `OR`, `-exclusion`, `title:`). Decided by the index's
    /// text index ([`Index::with_text`]), not by [`Query::matches`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// The publishing site is any of these ([`PageRecord::outlet_or_host`]: its own
    /// name, else its host; empty = any). Checked on the data row.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub outlets: Vec<String>,
}

impl Query {
    /// A query over `[from, to)` of the given sources with no other condition.
    pub fn new(sources: &[&str], from: DateTime<Utc>, to: DateTime<Utc>) -> Self {
        Query {
            sources: sources.iter().map(|s| (*s).to_owned()).collect(),
            from,
            to,
            topics: Vec::new(),
            media: Vec::new(),
            keywords: Vec::new(),
            min_comments: None,
            max_comments: None,
            include_revisits: false,
            limit: None,
            keywords_any: Vec::new(),
            collapse_near_duplicates: false,
            sort: Sort::default(),
            cursor: None,
            published_from: Vec::new(),
            text: None,
            outlets: Vec::new(),
        }
    }

    /// The parsed text condition (`None`: no text condition).
    pub fn text_query(&self) -> Result<Option<crate::text::TextQuery>> {
        self.text
            .as_deref()
            .map(crate::text::TextQuery::parse)
            .transpose()
    }

    /// The conditions that are checked on the data row once it is read:
    /// comments, revisit, near-duplicate, publish-time provenance and outlet.
    pub(crate) fn row_match(&self, page: &PageRecord) -> bool {
        self.comments_match(page)
            && (self.include_revisits || !page.revisit)
            && !(self.collapse_near_duplicates && page.near_duplicate_of.is_some())
            && (self.published_from.is_empty()
                || page
                    .published_source()
                    .is_some_and(|f| self.published_from.iter().any(|w| w == f)))
            && (self.outlets.is_empty() || self.outlets.iter().any(|o| o == page.outlet_or_host()))
    }

    /// Whether a condition only the data row tells is asked (publish-time provenance,
    /// outlet).
    pub(crate) fn has_row_only_filter(&self) -> bool {
        !self.published_from.is_empty() || !self.outlets.is_empty()
    }

    /// Number of distinct query keywords (`keywords` and `keywords_any`) the
    /// page has. (`self` must be normalised.)
    pub fn relevance(&self, page: &PageRecord) -> u32 {
        let have: HashSet<String> = page.keywords.iter().map(|k| k.to_lowercase()).collect();
        let wanted: BTreeSet<&String> = self.keywords.iter().chain(&self.keywords_any).collect();
        wanted.into_iter().filter(|k| have.contains(*k)).count() as u32
    }

    /// Stable fingerprint of the selection and order (not of `limit` or
    /// `cursor`): a cursor is only valid for the query it was made for.
    pub(crate) fn fingerprint(&self) -> Result<u64> {
        let mut q = self.clone();
        q.cursor = None;
        q.limit = None;
        Ok(xxhash_rust::xxh3::xxh3_64(&serde_json::to_vec(&q)?))
    }

    pub(crate) fn has_comment_filter(&self) -> bool {
        self.min_comments.is_some() || self.max_comments.is_some()
    }

    fn comments_match(&self, page: &PageRecord) -> bool {
        self.comments_in_range(page.comments)
    }

    /// A comment count (`None` = not known) meets `min_comments`/`max_comments`.
    pub(crate) fn comments_in_range(&self, comments: Option<u64>) -> bool {
        let min_ok = self
            .min_comments
            .is_none_or(|m| comments.is_some_and(|c| c >= m));
        let max_ok = self
            .max_comments
            .is_none_or(|m| comments.is_some_and(|c| c <= m));
        min_ok && max_ok
    }

    /// The reference predicate: does `page` match every condition but the
    /// text (which the text index decides)? (`self` must be normalised, see
    /// [`Query::normalised`].)
    pub fn matches(&self, page: &PageRecord) -> bool {
        let t = truncate(page.key_time());
        (self.sources.is_empty() || self.sources.contains(&page.source))
            && t >= self.from
            && t < self.to
            && (self.topics.is_empty() || self.topics.contains(&page.topic))
            && (self.media.is_empty()
                || page.media.as_ref().is_some_and(|m| self.media.contains(m)))
            && self
                .keywords
                .iter()
                .all(|k| page.keywords.iter().any(|pk| pk.to_lowercase() == *k))
            && (self.keywords_any.is_empty()
                || self
                    .keywords_any
                    .iter()
                    .any(|k| page.keywords.iter().any(|pk| pk.to_lowercase() == *k)))
            && self.row_match(page)
    }

    /// Bounds truncated to whole seconds, keywords lowercased, sorted and
    /// deduplicated.
    pub fn normalised(&self) -> Result<Query> {
        for s in &self.sources {
            keys::validate_source(s)?;
        }
        let mut q = self.clone();
        if q.text.as_deref().is_some_and(|t| t.trim().is_empty()) {
            q.text = None;
        }
        q.text_query()?;
        q.from = truncate(q.from);
        q.to = truncate(q.to);
        for list in [&mut q.keywords, &mut q.keywords_any, &mut q.published_from] {
            let mut v: Vec<String> = list.iter().map(|k| k.to_lowercase()).collect();
            v.sort();
            v.dedup();
            *list = v;
        }
        Ok(q)
    }
}

pub(crate) fn truncate(t: DateTime<Utc>) -> DateTime<Utc> {
    t.with_nanosecond(0).unwrap_or(t)
}

/// One page found by a query.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PageHit {
    /// Table holding the page.
    pub table: String,
    /// Data-row key.
    pub row_key: Vec<u8>,
    /// The page.
    pub page: PageRecord,
    /// With a text query sorted by relevance: the page's BM25 score (to four
    /// decimals, the precision the sort uses). `None` otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<f32>,
}

/// Second grouping dimension of statistics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum GroupBy {
    /// By topic.
    Topic,
    /// By media (`None` group = pages without media).
    Media,
    /// By source.
    Source,
    /// By the publishing site ([`PageRecord::outlet_or_host`]; read from the data
    /// rows, so slower than by media).
    Outlet,
    /// Reposts: two groups per bucket, `stories` (distinct stories with a
    /// page in the bucket; a near-duplicate counts as its story root, every
    /// other page as its own story) and `copies` (pages).
    Story,
}

impl GroupBy {
    /// Every grouping, in the order the API documents them.
    pub const ALL: [GroupBy; 5] = [
        GroupBy::Topic,
        GroupBy::Media,
        GroupBy::Outlet,
        GroupBy::Source,
        GroupBy::Story,
    ];

    /// Its name (the API's `group_by` value, the CLI's `--group-by`).
    pub fn as_str(self) -> &'static str {
        match self {
            GroupBy::Topic => "topic",
            GroupBy::Media => "media",
            GroupBy::Outlet => "outlet",
            GroupBy::Source => "source",
            GroupBy::Story => "story",
        }
    }

    /// The grouping named `name`.
    pub fn from_name(name: &str) -> Option<GroupBy> {
        GroupBy::ALL.into_iter().find(|g| g.as_str() == name)
    }
}

/// Group of [`GroupBy::Story`] statistics: distinct stories.
pub const GROUP_STORIES: &str = "stories";
/// Group of [`GroupBy::Story`] statistics: pages (copies of those stories).
pub const GROUP_COPIES: &str = "copies";

/// Counts of the pages a query selects, per time bucket (and group).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StatsQuery {
    /// The selection (`limit`, `sort` and `cursor` are ignored).
    pub query: Query,
    /// Time bucket.
    pub interval: Interval,
    /// Optional grouping.
    pub group_by: Option<GroupBy>,
    /// Zone in which buckets are laid out and labelled (default UTC).
    #[serde(default)]
    pub tz: Zone,
    /// Also return a zero row for every bucket (and, when grouped, every
    /// group seen) between `from` and `to` that has no page. On a side
    /// named in `bounds` the filling reaches the bound, also over years
    /// without a page table; on another side it stops at the tables' years
    /// (and, when the bound lies beyond them, at the first / last counted
    /// bucket).
    #[serde(default)]
    pub fill_empty: bool,
    /// Which of `query.from` / `query.to` the asker gave (the others stand
    /// for "no bound"). Default: neither.
    #[serde(default)]
    pub bounds: Bounds,
}

/// Which bounds of a statistics query were given explicitly (a `--from` /
/// `--to`), as opposed to an open end standing for "no bound".
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Bounds {
    /// `query.from` was given.
    pub from: bool,
    /// `query.to` was given.
    pub to: bool,
}

impl StatsQuery {
    /// Statistics of `query` in UTC, without empty buckets.
    pub fn new(query: Query, interval: Interval, group_by: Option<GroupBy>) -> Self {
        StatsQuery {
            query,
            interval,
            group_by,
            tz: Zone::Utc,
            fill_empty: false,
            bounds: Bounds::default(),
        }
    }
}

/// One line of statistics.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct StatsRow {
    /// Time bucket label (`2017-01-31`, `2017-W05`, `2017-01`, `2017`).
    pub bucket: String,
    /// Group value, when grouped.
    pub group: Option<String>,
    /// Number of pages.
    pub count: u64,
}

pub(crate) fn year_start(year: i32) -> Result<DateTime<Utc>> {
    Utc.with_ymd_and_hms(year, 1, 1, 0, 0, 0)
        .single()
        .ok_or_else(|| Error::Invalid(format!("year {year} out of range")))
}
