//! Query engine and statistics.
//!
//! A [`Query`] picks the page tables of its sources whose year overlaps
//! `[from, to)` and, in each table, one key range per bucket (region). Buckets
//! are evaluated in parallel (rayon):
//! * without topic/media/keyword conditions, the bucket's data-row range is
//!   scanned, with the comment and revisit conditions pushed down as
//!   [`CellFilter`]s;
//! * with conditions, each condition scans its index-row range
//!   `[salt][0x01][attr][value][0x00][from..to)`, which yields suffixes (time +
//!   URL hash) in time order; "any of" lists are unions, conditions are
//!   intersected by merging the sorted streams; then the data rows are read
//!   and the comment conditions checked.
//!
//! With no topic/media/keyword condition the topic index rows (every page has
//! exactly one) are the stream: the distinct topics of a bucket are found by a
//! skip scan (one `limit 1` scan per value) and each is scanned over the time
//! range only. "Any keyword" lists are unions that count how many of the
//! keywords each page has (relevance).
//!
//! Every index row carries the page's revisit and near-duplicate flags and its
//! comment count ([`crate::index::index_row_value`]), so revisit, near-duplicate
//! and comment-range conditions, relevance and the comment sort are decided
//! from index keys alone; data rows are read only for the hits returned (and
//! for index rows written by older versions, which lack that information).
//! Statistics therefore count from index keys alone; grouping by media labels
//! the stream with a left merge-join against the media index rows (pages
//! without media fall in the `None` group).
//!
//! Time bounds have whole-second resolution: `from` and `to` are truncated to
//! the second, and a page matches when its key time (publish time, else fetch
//! time, truncated to the second) is in `[from, to)`.
//! [`Index::full_scan_search`] / [`Index::full_scan_stats`] are the naive
//! reference: read every data row of the tables and filter in memory.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use chrono::{DateTime, Datelike, TimeZone, Timelike, Utc};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::index::{
    decode_index_value, Index, TableFormat, FLAG_ATTRS, FLAG_EXT, FLAG_MEDIA, FLAG_NEAR_DUP,
    FLAG_REVISIT, INDEX_ROW_QUALIFIER,
};
use crate::keys::{
    self, Suffix, ATTR_KEYWORD, ATTR_MEDIA, ATTR_TOPIC, INDEX_TAG, POSTING_TAG, SUFFIX_LEN,
    TIME_LEN,
};
use crate::record::{PageRecord, FAMILY_ATTRS, FAMILY_INDEX};
use crate::search::Cursor;
use crate::store::{prefix_end, Scan};
use crate::zone::{BucketPlan, Zone};

/// Data rows read per `get` call when resolving index hits.
pub(crate) const GET_CHUNK: usize = 256;
/// Statistics keep dense per-bucket counters for groups up to this many
/// counters in all (8 bytes each), sparse ones beyond.
const MAX_DENSE_CELLS: usize = 1 << 22;
/// Up to this many labels, [`Labels`] finds an id by comparing names.
const LINEAR_LABELS: usize = 32;
/// Label id of an index entry that carries no group label.
pub(crate) const NO_LABEL: u16 = u16::MAX;

/// Order of the hits of [`Index::search_page`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Sort {
    /// Newest first (default).
    #[default]
    TimeDesc,
    /// Oldest first.
    TimeAsc,
    /// Most comments first (pages without a count last), then newest first.
    Comments,
    /// Most matched query keywords (`keywords` and `keywords_any`) first, then newest first.
    Relevance,
}

impl Sort {
    /// Parses `time` / `time_desc`, `time_asc`, `comments`, `relevance`.
    pub fn parse(s: &str) -> Result<Sort> {
        match s {
            "time" | "time_desc" => Ok(Sort::TimeDesc),
            "time_asc" => Ok(Sort::TimeAsc),
            "comments" => Ok(Sort::Comments),
            "relevance" => Ok(Sort::Relevance),
            _ => Err(Error::Invalid(format!(
                "sort {s:?}: expected time, time_asc, comments or relevance"
            ))),
        }
    }

    /// The name [`Sort::parse`] accepts.
    pub fn as_str(self) -> &'static str {
        match self {
            Sort::TimeDesc => "time",
            Sort::TimeAsc => "time_asc",
            Sort::Comments => "comments",
            Sort::Relevance => "relevance",
        }
    }

    pub(crate) fn code(self) -> u8 {
        match self {
            Sort::TimeDesc => 0,
            Sort::TimeAsc => 1,
            Sort::Comments => 2,
            Sort::Relevance => 3,
        }
    }

    pub(crate) fn from_code(c: u8) -> Option<Sort> {
        [
            Sort::TimeDesc,
            Sort::TimeAsc,
            Sort::Comments,
            Sort::Relevance,
        ]
        .into_iter()
        .find(|s| s.code() == c)
    }
}

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
    /// `text`, `url`, `feed`, `sitemap`, `fetch`; empty = any). Checked on the
    /// data row ([`PageRecord::published_source`]).
    #[serde(default)]
    pub published_from: Vec<String>,
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
        }
    }

    /// The conditions that are checked on the data row once it is read:
    /// comments, revisit, near-duplicate and publish-time provenance.
    pub(crate) fn row_match(&self, page: &PageRecord) -> bool {
        self.comments_match(page)
            && (self.include_revisits || !page.revisit)
            && !(self.collapse_near_duplicates && page.near_duplicate_of.is_some())
            && (self.published_from.is_empty()
                || page
                    .published_source()
                    .is_some_and(|f| self.published_from.iter().any(|w| w == f)))
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

    fn has_comment_filter(&self) -> bool {
        self.min_comments.is_some() || self.max_comments.is_some()
    }

    fn comments_match(&self, page: &PageRecord) -> bool {
        self.comments_in_range(page.comments)
    }

    /// A comment count (`None` = not known) meets `min_comments`/`max_comments`.
    fn comments_in_range(&self, comments: Option<u64>) -> bool {
        let min_ok = self
            .min_comments
            .is_none_or(|m| comments.is_some_and(|c| c >= m));
        let max_ok = self
            .max_comments
            .is_none_or(|m| comments.is_some_and(|c| c <= m));
        min_ok && max_ok
    }

    /// The reference predicate: does `page` match every condition?
    /// (`self` must be normalised, see [`Query::normalised`].)
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
}

/// Time bucket of statistics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Interval {
    /// `2017-01-31`
    Day,
    /// ISO week, `2017-W05`
    Week,
    /// `2017-01`
    Month,
    /// `2017`
    Year,
}

impl Interval {
    /// The bucket label of a time.
    pub fn label(self, t: DateTime<Utc>) -> String {
        match self {
            Interval::Day => t.format("%Y-%m-%d").to_string(),
            Interval::Week => {
                let w = t.iso_week();
                format!("{:04}-W{:02}", w.year(), w.week())
            }
            Interval::Month => t.format("%Y-%m").to_string(),
            Interval::Year => t.format("%Y").to_string(),
        }
    }
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
    /// Reposts: two groups per bucket, `stories` (distinct stories with a
    /// page in the bucket; a near-duplicate counts as its story root, every
    /// other page as its own story) and `copies` (pages).
    Story,
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

/// One (table, bucket) unit of parallel work.
#[derive(Debug, Clone)]
pub(crate) struct Task {
    pub(crate) table: String,
    pub(crate) source: String,
    pub(crate) year: i32,
    pub(crate) salt: u8,
    pub(crate) from: DateTime<Utc>,
    pub(crate) to: DateTime<Utc>,
    to_is_year_end: bool,
}

impl Task {
    /// `[prefix + from, prefix + to)` clipped to the table's year.
    fn range(&self, prefix: &[u8]) -> (Vec<u8>, Vec<u8>) {
        let mut start = prefix.to_vec();
        start.extend_from_slice(&keys::time_bytes(self.from));
        let stop = if self.to_is_year_end {
            prefix_end(prefix)
        } else {
            let mut s = prefix.to_vec();
            s.extend_from_slice(&keys::time_bytes(self.to));
            s
        };
        (start, stop)
    }

    /// The same task restricted to `[from, to)`; `None` when that is empty.
    pub(crate) fn clip(&self, from: DateTime<Utc>, to: DateTime<Utc>) -> Option<Task> {
        let (f, t) = (self.from.max(from), self.to.min(to));
        (f < t).then(|| Task {
            from: f,
            to: t,
            to_is_year_end: self.to_is_year_end && t == self.to,
            ..self.clone()
        })
    }
}

/// Counts of one task: `(bucket index, slot, count)` with `names[slot]`
/// the group of the slot.
#[derive(Debug, Default)]
struct TaskCounts {
    names: Vec<Option<String>>,
    counts: Vec<(usize, usize, u64)>,
    /// [`GroupBy::Story`]: (bucket, story id) of every counted page.
    stories: Vec<(usize, u64)>,
}

/// Story id of an entry (or of its data row, for values that do not tell).
fn entry_story(e: &Entry, row: Option<&PageRecord>) -> u64 {
    if let Some(p) = row {
        return u64::from_be_bytes(keys::url_hash(crate::neardup::story_root(p)));
    }
    let own = || {
        e.suffix[TIME_LEN..]
            .try_into()
            .map_or(0, u64::from_be_bytes)
    };
    match e.story {
        Some(h) => u64::from_be_bytes(h),
        None => own(),
    }
}

/// Whether statistics by story need the data row of an entry: a legacy
/// value, or a near-duplicate recorded without its story root.
fn story_needs_row(e: &Entry) -> bool {
    e.flags & FLAG_EXT == 0 || (e.flags & FLAG_NEAR_DUP != 0 && e.story.is_none())
}

/// The buckets of a plan inside one year, as key time bytes (key times
/// compare as bytes within a year, so an entry finds its bucket without
/// decoding its date).
#[derive(Debug)]
struct YearBuckets {
    /// Bucket holding the first instant of the year.
    base: usize,
    /// (start as key time bytes, bucket index) of the buckets starting
    /// inside the year, in order.
    local: Vec<([u8; TIME_LEN], usize)>,
}

impl YearBuckets {
    fn new(plan: &BucketPlan, year: i32) -> Result<Self> {
        let (ys, ny) = (year_start(year)?, year_start(year + 1)?);
        Ok(YearBuckets {
            base: plan.bucket_of(ys).unwrap_or(0),
            local: plan
                .starts
                .iter()
                .enumerate()
                .filter(|(_, s)| **s > ys && **s < ny)
                .map(|(i, s)| (keys::time_bytes(*s), i))
                .collect(),
        })
    }
}

/// Counts of one statistics group by bucket index.
#[derive(Debug)]
enum GroupCounts {
    /// One counter per bucket of the plan.
    Dense(Vec<u64>),
    /// Only the buckets counted (once the dense counters would exceed
    /// [`MAX_DENSE_CELLS`]: many groups x many buckets).
    Sparse(HashMap<usize, u64>),
}

impl GroupCounts {
    fn add(&mut self, bucket: usize, n: u64) {
        match self {
            GroupCounts::Dense(v) => {
                if let Some(c) = v.get_mut(bucket) {
                    *c += n;
                }
            }
            GroupCounts::Sparse(m) => *m.entry(bucket).or_insert(0) += n,
        }
    }

    /// The non-zero counts as (bucket index, count).
    fn into_counts(self) -> Vec<(usize, u64)> {
        match self {
            GroupCounts::Dense(v) => v.into_iter().enumerate().filter(|(_, n)| *n > 0).collect(),
            GroupCounts::Sparse(m) => m.into_iter().filter(|(_, n)| *n > 0).collect(),
        }
    }
}

/// An index hit inside one bucket: the page's suffix and what its index row
/// value says about it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Entry {
    pub(crate) suffix: Suffix,
    pub(crate) flags: u8,
    pub(crate) comments: Option<u64>,
    /// Number of `keywords_any` keywords (not also in `keywords`) the page has.
    pub(crate) score: u16,
    /// Topic id in the call's [`Labels`] ([`NO_LABEL`] = not recorded).
    pub(crate) topic: u16,
    /// Media id in the call's [`Labels`] ([`NO_LABEL`] = none or not recorded).
    pub(crate) media: u16,
    /// Url-hash of the story root of a near-duplicate, when recorded.
    pub(crate) story: Option<[u8; keys::URL_HASH_LEN]>,
}

impl Entry {
    /// Whether the index row recorded the page's topic and media.
    pub(crate) fn attrs_known(&self) -> bool {
        self.flags & FLAG_ATTRS != 0 && self.topic != NO_LABEL
    }
}

/// Interned topic and media values of one task (entries hold ids).
#[derive(Debug, Default)]
pub(crate) struct Labels {
    ids: HashMap<Vec<u8>, u16>,
    /// The values as stored (index = id).
    raw: Vec<Vec<u8>>,
    names: Vec<String>,
}

impl Labels {
    fn id(&mut self, v: &[u8]) -> u16 {
        // A task sees few distinct topics and media: comparing bytes beats
        // hashing them (this runs twice per index row).
        if self.names.len() <= LINEAR_LABELS {
            if let Some(i) = self.raw.iter().position(|n| n.as_slice() == v) {
                // position < LINEAR_LABELS < NO_LABEL
                return i as u16;
            }
        } else if let Some(&i) = self.ids.get(v) {
            return i;
        }
        let Ok(i) = u16::try_from(self.names.len()) else {
            return NO_LABEL;
        };
        if i == NO_LABEL {
            return NO_LABEL;
        }
        self.names.push(String::from_utf8_lossy(v).into_owned());
        self.raw.push(v.to_vec());
        self.ids.insert(v.to_vec(), i);
        i
    }

    /// [`Labels::id`], trying `hint` (the id this caller got last) first:
    /// consecutive index rows mostly share their media, often their topic.
    fn id_hinted(&mut self, v: &[u8], hint: &mut u16) -> u16 {
        if self
            .raw
            .get(usize::from(*hint))
            .is_some_and(|r| r.as_slice() == v)
        {
            return *hint;
        }
        let i = self.id(v);
        *hint = i;
        i
    }

    pub(crate) fn name(&self, id: u16) -> Option<&str> {
        self.names.get(usize::from(id)).map(String::as_str)
    }
}

/// Conditions a task checks on index row values instead of scanning their
/// index ranges.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Checks {
    topic: bool,
    media: bool,
}

/// Candidates of one task.
#[derive(Debug, Default)]
pub(crate) struct Cands {
    pub(crate) entries: Vec<Entry>,
    pub(crate) labels: Labels,
    checks: Checks,
}

/// Conditions decided on each index row while it is scanned: a row whose
/// value rules its page out (a revisit, a near-duplicate, a comment count
/// out of range, a topic or media not asked for when those are checked on
/// values) is dropped before it is kept, joined or interned further. Every
/// index row of a page carries the same value, so a dropped row never
/// belongs to a page that could match.
pub(crate) struct Prefilter<'q> {
    q: &'q Query,
    checks: Checks,
    /// Per label id: whether it is one of the query's topics (`None`: not
    /// looked up yet).
    topic_ok: Vec<Option<bool>>,
    /// Per label id: whether it is one of the query's media.
    media_ok: Vec<Option<bool>>,
    /// Label ids of the last entry (consecutive entries mostly share them).
    topic_hint: u16,
    media_hint: u16,
}

impl<'q> Prefilter<'q> {
    pub(crate) fn new(q: &'q Query, checks: Checks) -> Self {
        Prefilter {
            q,
            checks,
            topic_ok: Vec::new(),
            media_ok: Vec::new(),
            topic_hint: NO_LABEL,
            media_hint: NO_LABEL,
        }
    }

    /// The entry of a page's index value, unless the value rules it out
    /// (its topic and media interned in `labels`).
    fn admit(&mut self, suffix: Suffix, value: &[u8], labels: &mut Labels) -> Option<Entry> {
        let v = decode_index_value(value);
        if value_rules_out(self.q, v.flags, v.comments) {
            return None;
        }
        let e = Entry {
            suffix,
            flags: v.flags,
            comments: v.comments,
            score: 0,
            topic: v
                .topic
                .map_or(NO_LABEL, |t| labels.id_hinted(t, &mut self.topic_hint)),
            media: v
                .media
                .map_or(NO_LABEL, |m| labels.id_hinted(m, &mut self.media_hint)),
            story: v.story,
        };
        (!self.rejects_labels(&e, labels)).then_some(e)
    }

    /// The recorded topic or media rules the page out (checked conditions only).
    fn rejects_labels(&mut self, e: &Entry, labels: &Labels) -> bool {
        if !(self.checks.topic || self.checks.media) || !e.attrs_known() {
            return false;
        }
        let q = self.q;
        if self.checks.topic && !memo(&mut self.topic_ok, e.topic, labels, &q.topics) {
            return true;
        }
        self.checks.media && !memo(&mut self.media_ok, e.media, labels, &q.media)
    }
}

/// The flags and comment count of an index value alone rule its page out
/// (revisit, near-duplicate, comment range). A legacy value (no
/// [`FLAG_EXT`]) tells only the revisit bit.
fn value_rules_out(q: &Query, flags: u8, comments: Option<u64>) -> bool {
    if !q.include_revisits && flags & FLAG_REVISIT != 0 {
        return true;
    }
    flags & FLAG_EXT != 0
        && ((q.collapse_near_duplicates && flags & FLAG_NEAR_DUP != 0)
            || !q.comments_in_range(comments))
}

/// Whether label `id` is one of `wanted`, remembered per id.
fn memo(cache: &mut Vec<Option<bool>>, id: u16, labels: &Labels, wanted: &[String]) -> bool {
    let i = usize::from(id);
    if let Some(Some(ok)) = cache.get(i) {
        return *ok;
    }
    let ok = labels
        .name(id)
        .is_some_and(|n| wanted.iter().any(|w| w == n));
    if id != NO_LABEL {
        if cache.len() <= i {
            cache.resize(i + 1, None);
        }
        cache[i] = Some(ok);
    }
    ok
}

/// What the index row value says about the conditions not scanned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    Yes,
    No,
    /// Legacy index row: read the data row to decide.
    Unknown,
}

pub(crate) fn verdict(q: &Query, e: &Entry, checks: Checks, labels: &Labels) -> Verdict {
    if value_rules_out(q, e.flags, e.comments) {
        return Verdict::No;
    }
    // A legacy value cannot decide near-duplicate or comment conditions.
    // Index values do not record the publish-time provenance: the data row decides.
    let unknown = (e.flags & FLAG_EXT == 0
        && (q.collapse_near_duplicates || q.has_comment_filter()))
        || !q.published_from.is_empty();
    if checks.topic || checks.media {
        if !e.attrs_known() {
            return Verdict::Unknown;
        }
        if checks.topic
            && !labels
                .name(e.topic)
                .is_some_and(|t| q.topics.iter().any(|x| x == t))
        {
            return Verdict::No;
        }
        if checks.media
            && !labels
                .name(e.media)
                .is_some_and(|m| q.media.iter().any(|x| x == m))
        {
            return Verdict::No;
        }
    }
    if unknown {
        Verdict::Unknown
    } else {
        Verdict::Yes
    }
}

fn combine(x: &Entry, y: &Entry, add_scores: bool) -> Entry {
    let (topic, media) = if x.attrs_known() {
        (x.topic, x.media)
    } else {
        (y.topic, y.media)
    };
    Entry {
        suffix: x.suffix,
        flags: x.flags | y.flags,
        comments: x.comments.or(y.comments),
        score: if add_scores {
            x.score.saturating_add(y.score)
        } else {
            x.score.max(y.score)
        },
        topic,
        media,
        story: x.story.or(y.story),
    }
}

/// Union of sorted lists; with `count`, each entry's score is the number of
/// lists that hold it.
fn union(mut lists: Vec<Vec<Entry>>, count: bool) -> Vec<Entry> {
    if count {
        for e in lists.iter_mut().flatten() {
            e.score = 1;
        }
    }
    if lists.len() == 1 {
        return lists.pop().unwrap_or_default();
    }
    let mut all: Vec<Entry> = lists.into_iter().flatten().collect();
    all.sort_by_key(|a| a.suffix);
    let mut out: Vec<Entry> = Vec::with_capacity(all.len());
    for e in all {
        match out.last_mut() {
            Some(last) if last.suffix == e.suffix => *last = combine(last, &e, count),
            _ => out.push(e),
        }
    }
    out
}

/// Merge-join of two sorted lists: entries of `a` found in `b` get `b`'s
/// information; entries of `a` not in `b` are kept only with `keep_unmatched`
/// (left join) and dropped otherwise (intersection).
fn join(a: Vec<Entry>, b: Vec<Entry>, keep_unmatched: bool) -> Vec<Entry> {
    let mut out = Vec::with_capacity(if keep_unmatched {
        a.len()
    } else {
        a.len().min(b.len())
    });
    let mut bi = b.into_iter().peekable();
    for x in a {
        while bi.peek().is_some_and(|y| y.suffix < x.suffix) {
            bi.next();
        }
        match bi.peek() {
            Some(y) if y.suffix == x.suffix => out.push(combine(&x, y, false)),
            _ if keep_unmatched => out.push(x),
            _ => {}
        }
    }
    out
}

/// Merge of two suffix-sorted lists without duplicates; an entry of `a`
/// wins over one of `b` with the same suffix.
fn prefer_first(a: Vec<Entry>, b: Vec<Entry>) -> Vec<Entry> {
    if b.is_empty() {
        return a;
    }
    if a.is_empty() {
        return b;
    }
    let mut out = Vec::with_capacity(a.len() + b.len());
    let mut bi = b.into_iter().peekable();
    for x in a {
        while let Some(y) = bi.next_if(|y| y.suffix < x.suffix) {
            out.push(y);
        }
        bi.next_if(|y| y.suffix == x.suffix);
        out.push(x);
    }
    out.extend(bi);
    out
}

/// The error for a key a scan visitor stopped at (`None`: no such key).
fn no_bad_key(bad_key: Option<Vec<u8>>, reason: &'static str) -> Result<()> {
    match bad_key {
        Some(key) => Err(Error::BadKey { key, reason }),
        None => Ok(()),
    }
}

/// The suffix (last [`SUFFIX_LEN`] bytes) of a data or index key.
fn key_suffix(key: &[u8]) -> Option<Suffix> {
    key.len()
        .checked_sub(SUFFIX_LEN)
        .and_then(|at| key.get(at..))
        .and_then(|t| t.try_into().ok())
}

fn year_start(year: i32) -> Result<DateTime<Utc>> {
    Utc.with_ymd_and_hms(year, 1, 1, 0, 0, 0)
        .single()
        .ok_or_else(|| Error::Invalid(format!("year {year} out of range")))
}

pub(crate) fn sort_hits(hits: &mut [PageHit]) {
    hits.sort_by_cached_key(|h| {
        (
            truncate(h.page.key_time()),
            h.row_key.get(2..).map(<[u8]>::to_vec),
            h.table.clone(),
        )
    });
}

fn page_group(page: &PageRecord, g: Option<GroupBy>) -> Option<String> {
    match g? {
        GroupBy::Topic => Some(page.topic.clone()),
        GroupBy::Media => page.media.clone(),
        GroupBy::Source => Some(page.source.clone()),
        GroupBy::Story => Some(GROUP_COPIES.to_owned()),
    }
}

/// Counts keyed by (bucket label, group), plus zero rows when asked: every
/// bucket of the plan, except that on a side where the query is open (its
/// bound lies beyond every table of its sources, e.g. no `from` or `to` at
/// all) the filling stops at the first / last non-empty bucket, as a
/// date histogram without extended bounds does. (Otherwise a table created
/// ahead of time for next year would add a year of empty buckets.)
fn finish_stats(
    sq: &StatsQuery,
    plan: &BucketPlan,
    mut counts: BTreeMap<(String, Option<String>), u64>,
    open: (bool, bool),
) -> Vec<StatsRow> {
    if sq.fill_empty && !plan.labels.is_empty() {
        let groups: BTreeSet<Option<String>> = if sq.group_by.is_some() {
            counts.keys().map(|(_, g)| g.clone()).collect()
        } else {
            std::iter::once(None).collect()
        };
        let pos: HashMap<&str, usize> = plan
            .labels
            .iter()
            .enumerate()
            .map(|(i, l)| (l.as_str(), i))
            .collect();
        let seen: Vec<usize> = counts
            .keys()
            .filter_map(|(l, _)| pos.get(l.as_str()).copied())
            .collect();
        let lo = if open.0 {
            seen.iter().min().copied()
        } else {
            Some(0)
        };
        let hi = if open.1 {
            seen.iter().max().copied()
        } else {
            Some(plan.labels.len() - 1)
        };
        if let (Some(lo), Some(hi)) = (lo, hi) {
            for label in plan.labels.get(lo..=hi).unwrap_or_default() {
                for g in &groups {
                    counts.entry((label.clone(), g.clone())).or_insert(0);
                }
            }
        }
    }
    counts
        .into_iter()
        .map(|((bucket, group), count)| StatsRow {
            bucket,
            group,
            count,
        })
        .collect()
}

impl Index {
    /// Page tables of the query's sources that overlap `[from, to)`, with one
    /// task per region, in (table, salt) order.
    pub(crate) fn tasks(&self, q: &Query) -> Result<Vec<Task>> {
        let mut tasks = Vec::new();
        if q.from >= q.to {
            return Ok(tasks);
        }
        for table in self.store.list_tables()? {
            let Some((source, year)) = keys::parse_table_name(&table) else {
                continue;
            };
            if !q.sources.is_empty() && !q.sources.iter().any(|s| s == source) {
                continue;
            }
            let (ys, ny) = (year_start(year)?, year_start(year + 1)?);
            let (from, to) = (q.from.max(ys), q.to.min(ny));
            if from >= to {
                continue;
            }
            for (salt, _) in self.store.regions(&table)?.iter().enumerate() {
                tasks.push(Task {
                    table: table.clone(),
                    source: source.to_owned(),
                    year,
                    salt: u8::try_from(salt).map_err(|_| {
                        Error::Invalid(format!("table {table} has over 255 regions"))
                    })?,
                    from,
                    to,
                    to_is_year_end: to == ny,
                });
            }
        }
        Ok(tasks)
    }

    /// Entries of one (attribute, value) in a task's range, in suffix order,
    /// less those whose value already rules the page out (see
    /// [`Prefilter`]): the cells of its posting rows, and in a table made
    /// before posting rows also its index rows (a posting entry wins).
    fn scan_index(
        &self,
        task: &Task,
        attr: u8,
        value: &str,
        labels: &mut Labels,
        pre: &mut Prefilter<'_>,
    ) -> Result<Vec<Entry>> {
        let postings = self.scan_postings(task, attr, value, labels, pre)?;
        if self.table_format(&task.table)? == TableFormat::Postings {
            return Ok(postings);
        }
        let rows = self.scan_index_rows(task, attr, value, labels, pre)?;
        Ok(prefer_first(postings, rows))
    }

    /// The cells of the posting rows of one (attribute, value) in a task's
    /// range (one row per month; cells in suffix order).
    fn scan_postings(
        &self,
        task: &Task,
        attr: u8,
        value: &str,
        labels: &mut Labels,
        pre: &mut Prefilter<'_>,
    ) -> Result<Vec<Entry>> {
        let prefix = keys::posting_prefix(task.salt, attr, value);
        let from = keys::time_bytes(task.from);
        let to = (!task.to_is_year_end).then(|| keys::time_bytes(task.to));
        let mut start = prefix.clone();
        start.push(from[0]);
        let stop = match to {
            None => prefix_end(&prefix),
            Some(t) => {
                let mut s = prefix;
                s.push(t[0].saturating_add(1));
                s
            }
        };
        let scan = Scan::range(start, stop).families(&[FAMILY_INDEX]);
        let mut out = Vec::new();
        let mut bad_key: Option<Vec<u8>> = None;
        self.store.scan_each(&task.table, &scan, &mut |row| {
            for cell in row.family(FAMILY_INDEX) {
                let Ok(suffix) = Suffix::try_from(cell.qualifier.as_slice()) else {
                    bad_key = Some(row.key.clone());
                    return false;
                };
                let t = &suffix[..TIME_LEN];
                if t < from.as_slice() {
                    continue;
                }
                if to.is_some_and(|to| t >= to.as_slice()) {
                    // Cells and rows are in time order: nothing later matches.
                    return false;
                }
                out.extend(pre.admit(suffix, &cell.value, labels));
            }
            true
        })?;
        no_bad_key(bad_key, "posting cell qualifier is not a page suffix")?;
        Ok(out)
    }

    /// Index rows (one per page, tables made before posting rows) of one
    /// (attribute, value) in a task's range.
    fn scan_index_rows(
        &self,
        task: &Task,
        attr: u8,
        value: &str,
        labels: &mut Labels,
        pre: &mut Prefilter<'_>,
    ) -> Result<Vec<Entry>> {
        let prefix = keys::index_prefix(task.salt, attr, value);
        let (start, stop) = task.range(&prefix);
        let scan = Scan::range(start, stop).families(&[FAMILY_INDEX]);
        let mut out = Vec::new();
        let mut bad_key: Option<Vec<u8>> = None;
        self.store.scan_each(&task.table, &scan, &mut |row| {
            let Some(suffix) = key_suffix(&row.key) else {
                bad_key = Some(row.key.clone());
                return false;
            };
            let value = row.cell(FAMILY_INDEX, INDEX_ROW_QUALIFIER).unwrap_or(&[]);
            out.extend(pre.admit(suffix, value, labels));
            true
        })?;
        no_bad_key(bad_key, "index key shorter than its suffix")?;
        Ok(out)
    }

    /// Distinct values of an index attribute in one bucket of a table, by a
    /// skip scan: one `limit 1` scan per value (over posting rows, and index
    /// rows in a table made before posting rows).
    pub(crate) fn attr_values(&self, table: &str, salt: u8, attr: u8) -> Result<Vec<String>> {
        let mut values = BTreeSet::new();
        self.skip_scan(table, salt, POSTING_TAG, attr, &mut values)?;
        if self.table_format(table)? == TableFormat::Mixed {
            self.skip_scan(table, salt, INDEX_TAG, attr, &mut values)?;
        }
        Ok(values.into_iter().collect())
    }

    fn skip_scan(
        &self,
        table: &str,
        salt: u8,
        tag: u8,
        attr: u8,
        values: &mut BTreeSet<String>,
    ) -> Result<()> {
        let attr_prefix = [salt, tag, attr];
        let stop = prefix_end(&attr_prefix);
        let mut start = attr_prefix.to_vec();
        loop {
            let scan = Scan::range(start, stop.clone())
                .families(&[FAMILY_INDEX])
                .limit(1);
            let Some(row) = self.store.scan(table, &scan)?.into_iter().next() else {
                break;
            };
            let value = if tag == POSTING_TAG {
                keys::split_posting_key(&row.key)?.value
            } else {
                keys::split_index_key(&row.key)?.value
            };
            start = prefix_end(&keys::tagged_prefix(salt, tag, attr, &value));
            values.insert(value);
        }
        Ok(())
    }

    /// Pages of a bucket that satisfy the conditions as far as the index
    /// rows tell, in suffix (time) order. The stream is the intersection of
    /// the keyword conditions when there are any (topic and media are then
    /// checked on the index row values), else of the media, else of the
    /// topic condition, else every topic's rows. `score` asks for the
    /// `keywords_any` counts even when they are not a condition.
    pub(crate) fn candidates(&self, task: &Task, q: &Query, score: bool) -> Result<Cands> {
        let mut labels = Labels::default();
        let mut groups: Vec<Vec<Entry>> = Vec::new();
        let all: HashSet<&String> = q.keywords.iter().collect();
        let any_extra: Vec<&String> = q.keywords_any.iter().filter(|k| !all.contains(k)).collect();
        // With an "any" keyword that is also required, the "any" condition holds.
        let any_filters = !q.keywords_any.is_empty() && any_extra.len() == q.keywords_any.len();
        let keyword_stream = !q.keywords.is_empty() || any_filters;
        let checks = Checks {
            media: keyword_stream && !q.media.is_empty(),
            topic: (keyword_stream || !q.media.is_empty()) && !q.topics.is_empty(),
        };
        let mut pre = Prefilter::new(q, checks);
        for k in &q.keywords {
            groups.push(self.scan_index(task, ATTR_KEYWORD, k, &mut labels, &mut pre)?);
        }
        let mut any_union = None;
        if any_filters || (score && !any_extra.is_empty()) {
            let lists = any_extra
                .iter()
                .map(|k| self.scan_index(task, ATTR_KEYWORD, k, &mut labels, &mut pre))
                .collect::<Result<Vec<_>>>()?;
            let u = union(lists, true);
            if any_filters {
                groups.push(u);
            } else {
                any_union = Some(u);
            }
        }
        if !q.media.is_empty() && !checks.media {
            let lists = q
                .media
                .iter()
                .map(|m| self.scan_index(task, ATTR_MEDIA, m, &mut labels, &mut pre))
                .collect::<Result<Vec<_>>>()?;
            groups.push(union(lists, false));
        }
        if !q.topics.is_empty() && !checks.topic {
            let lists = q
                .topics
                .iter()
                .map(|t| self.scan_index(task, ATTR_TOPIC, t, &mut labels, &mut pre))
                .collect::<Result<Vec<_>>>()?;
            groups.push(union(lists, false));
        }
        if groups.is_empty() {
            let mut lists = Vec::new();
            for t in self.attr_values(&task.table, task.salt, ATTR_TOPIC)? {
                lists.push(self.scan_index(task, ATTR_TOPIC, &t, &mut labels, &mut pre)?);
            }
            groups.push(union(lists, false));
        }
        groups.sort_by_key(Vec::len);
        let mut it = groups.into_iter();
        let mut acc = it.next().unwrap_or_default();
        for g in it {
            if acc.is_empty() {
                break;
            }
            acc = join(acc, g, false);
        }
        acc.retain(|e| verdict(q, e, checks, &labels) != Verdict::No);
        if let Some(u) = any_union {
            acc = join(acc, u, true);
        }
        Ok(Cands {
            entries: acc,
            labels,
            checks,
        })
    }

    /// Reads the data rows of some entries of a task (in order; `None` for a
    /// missing row, which is logged).
    pub(crate) fn fetch(&self, task: &Task, entries: &[Entry]) -> Result<Vec<Option<PageRecord>>> {
        let mut out = Vec::with_capacity(entries.len());
        let mut missing = 0usize;
        for chunk in entries.chunks(GET_CHUNK) {
            let keys: Vec<Vec<u8>> = chunk
                .iter()
                .map(|e| keys::data_key(task.salt, &e.suffix))
                .collect();
            for row in self.store.get(&task.table, &keys, &[FAMILY_ATTRS])? {
                match row {
                    Some(r) => out.push(Some(PageRecord::from_row(&r)?)),
                    None => {
                        missing += 1;
                        out.push(None);
                    }
                }
            }
        }
        if missing > 0 {
            tracing::warn!(table = %task.table, salt = task.salt, missing, "index rows without data row");
        }
        Ok(out)
    }

    /// The candidates that match, with every condition decided: data rows
    /// are read for the entries the index rows cannot decide (legacy rows)
    /// and for those `need_row` asks for; those pages are returned beside
    /// their entries (`None` for the others).
    pub(crate) fn decided(
        &self,
        task: &Task,
        q: &Query,
        cands: &mut Cands,
        need_row: impl Fn(&Entry) -> bool,
    ) -> Result<(Vec<Entry>, Vec<Option<PageRecord>>)> {
        let unknown: Vec<Entry> = cands
            .entries
            .iter()
            .filter(|e| {
                verdict(q, e, cands.checks, &cands.labels) == Verdict::Unknown || need_row(e)
            })
            .copied()
            .collect();
        if unknown.is_empty() {
            return Ok((std::mem::take(&mut cands.entries), Vec::new()));
        }
        let pages = self.fetch(task, &unknown)?;
        let mut fetched: HashMap<Suffix, Option<PageRecord>> = HashMap::new();
        for (e, p) in unknown.iter().zip(pages) {
            fetched.insert(e.suffix, p);
        }
        let mut out = Vec::with_capacity(cands.entries.len());
        let mut rows = Vec::with_capacity(cands.entries.len());
        for e in &cands.entries {
            match fetched.remove(&e.suffix) {
                None => {
                    out.push(*e);
                    rows.push(None);
                }
                Some(Some(p)) if q.matches(&p) => {
                    out.push(*e);
                    rows.push(Some(p));
                }
                Some(_) => {}
            }
        }
        Ok((out, rows))
    }

    fn search_task(&self, task: &Task, q: &Query, limit: Option<usize>) -> Result<Vec<PageHit>> {
        let cands = self.candidates(task, q, false)?.entries;
        let mut hits = Vec::new();
        'chunks: for chunk in cands.chunks(GET_CHUNK) {
            for (e, page) in chunk.iter().zip(self.fetch(task, chunk)?) {
                let Some(page) = page else { continue };
                if q.matches(&page) {
                    hits.push(PageHit {
                        table: task.table.clone(),
                        row_key: keys::data_key(task.salt, &e.suffix),
                        page,
                    });
                    if limit.is_some_and(|l| hits.len() >= l) {
                        break 'chunks;
                    }
                }
            }
        }
        Ok(hits)
    }

    /// Evaluates a query; every hit (or the `limit` earliest) in key-time
    /// order (ties: URL hash, table). `sort` and `cursor` are ignored: see
    /// [`Index::search_page`].
    pub fn search(&self, query: &Query) -> Result<Vec<PageHit>> {
        let q = query.normalised()?;
        let tasks = self.tasks(&q)?;
        let per_task = tasks
            .par_iter()
            .map(|t| self.search_task(t, &q, q.limit))
            .collect::<Result<Vec<_>>>()?;
        let mut hits: Vec<PageHit> = per_task.into_iter().flatten().collect();
        sort_hits(&mut hits);
        if let Some(l) = q.limit {
            hits.truncate(l);
        }
        tracing::debug!(tasks = tasks.len(), hits = hits.len(), "search");
        Ok(hits)
    }

    /// The time span the tasks cover (`None` when there are none).
    pub(crate) fn extent(tasks: &[Task]) -> Option<(DateTime<Utc>, DateTime<Utc>)> {
        let from = tasks.iter().map(|t| t.from).min()?;
        let to = tasks.iter().map(|t| t.to).max()?;
        Some((from, to))
    }

    /// The buckets of a statistics call and its open sides: the years of
    /// the selected tables clipped to `[from, to)`, and with `fill_empty`
    /// out to a bound the asker gave (`sq.bounds`) even where no table
    /// covers it. A side is open when its bound lies beyond the tables and
    /// was not given. No tables and no given bounds: no buckets.
    fn stats_plan(
        sq: &StatsQuery,
        q: &Query,
        tasks: &[Task],
    ) -> Result<(BucketPlan, (bool, bool))> {
        let given = if sq.fill_empty {
            sq.bounds
        } else {
            Bounds::default()
        };
        let extent = Self::extent(tasks);
        let from = if given.from {
            Some(q.from)
        } else {
            extent.map(|(f, _)| f)
        };
        let to = if given.to {
            Some(q.to)
        } else {
            extent.map(|(_, t)| t)
        };
        let (Some(from), Some(to)) = (from, to) else {
            return Ok((
                BucketPlan::new(sq.interval, &sq.tz, q.to, q.to)?,
                (true, true),
            ));
        };
        let plan = BucketPlan::new(sq.interval, &sq.tz, from, to)?;
        Ok((plan, (q.from < from, q.to > to)))
    }

    /// Counts of one task, from index keys.
    fn stats_task(
        &self,
        task: &Task,
        q: &Query,
        sq: &StatsQuery,
        years: &HashMap<i32, YearBuckets>,
    ) -> Result<TaskCounts> {
        let mut cands = self.candidates(task, q, false)?;
        let grouped_by_attr = matches!(sq.group_by, Some(GroupBy::Topic | GroupBy::Media));
        let by_story = sq.group_by == Some(GroupBy::Story);
        let (entries, rows) = self.decided(task, q, &mut cands, |e| {
            (grouped_by_attr && !e.attrs_known()) || (by_story && story_needs_row(e))
        })?;
        // Group slots: 0 = no group, then one per label id (+1), then one per
        // group name taken from a data row (legacy index rows).
        let mut names: Vec<Option<String>> = vec![None];
        names.extend(cands.labels.names.iter().cloned().map(Some));
        let mut extra: HashMap<Option<String>, usize> = HashMap::new();
        let mut slot_of = |e: &Entry, row: Option<&PageRecord>| -> usize {
            let from_id = |id: u16| {
                if id == NO_LABEL {
                    0
                } else {
                    usize::from(id) + 1
                }
            };
            match (sq.group_by, row) {
                (None, _) => 0,
                (Some(GroupBy::Source | GroupBy::Story), _) => usize::MAX,
                (Some(g), Some(p)) if !e.attrs_known() => {
                    let name = page_group(p, Some(g));
                    *extra.entry(name.clone()).or_insert_with(|| {
                        names.push(name);
                        names.len() - 1
                    })
                }
                (Some(GroupBy::Topic), _) => from_id(e.topic),
                (Some(_), _) => {
                    if e.flags & FLAG_MEDIA != 0 {
                        from_id(e.media)
                    } else {
                        0
                    }
                }
            }
        };
        let slots: Vec<usize> = entries
            .iter()
            .enumerate()
            .map(|(i, e)| slot_of(e, rows.get(i).and_then(Option::as_ref)))
            .collect();
        if sq.group_by == Some(GroupBy::Source) {
            names = vec![Some(task.source.clone())];
        }
        if by_story {
            names = vec![Some(GROUP_COPIES.to_owned())];
        }
        let mut stories = Vec::new();
        let Some(YearBuckets { base, local }) = years.get(&task.year) else {
            return Err(Error::Invalid(format!(
                "no bucket layout for year {}",
                task.year
            )));
        };
        let base = *base;
        let mut out = Vec::new();
        let mut counts = vec![0u64; names.len()];
        let mut cur = base;
        let mut p = 0usize;
        let flush = |bucket: usize, counts: &mut [u64], out: &mut Vec<(usize, usize, u64)>| {
            for (slot, c) in counts.iter_mut().enumerate() {
                if *c > 0 {
                    out.push((bucket, slot, *c));
                    *c = 0;
                }
            }
        };
        for (i, (e, slot)) in entries.iter().zip(slots).enumerate() {
            let t = &e.suffix[..TIME_LEN];
            while p < local.len() && local[p].0.as_slice() <= t {
                p += 1;
            }
            let bucket = if p == 0 { base } else { local[p - 1].1 };
            if bucket != cur {
                flush(cur, &mut counts, &mut out);
                cur = bucket;
            }
            let slot = if slot == usize::MAX { 0 } else { slot };
            if let Some(c) = counts.get_mut(slot) {
                *c += 1;
            }
            if by_story {
                let row = rows.get(i).and_then(Option::as_ref);
                stories.push((bucket, entry_story(e, row)));
            }
        }
        flush(cur, &mut counts, &mut out);
        Ok(TaskCounts {
            names,
            counts: out,
            stories,
        })
    }

    /// Counts the pages a query selects per time bucket (and group), sorted by
    /// (bucket, group); buckets laid out and labelled in `tz`; zero rows for
    /// empty buckets with `fill_empty`.
    pub fn stats(&self, sq: &StatsQuery) -> Result<Vec<StatsRow>> {
        let q = sq.query.normalised()?;
        let tasks = self.tasks(&q)?;
        let (plan, open) = Self::stats_plan(sq, &q, &tasks)?;
        if plan.labels.is_empty() {
            return Ok(Vec::new());
        }
        let mut years = HashMap::new();
        for task in &tasks {
            if let std::collections::hash_map::Entry::Vacant(v) = years.entry(task.year) {
                v.insert(YearBuckets::new(&plan, task.year)?);
            }
        }
        let parts = tasks
            .par_iter()
            .map(|task| self.stats_task(task, &q, sq, &years))
            .collect::<Result<Vec<_>>>()?;
        // Per group, counts by bucket index: names are resolved once per
        // task, not once per count (a broad selection has ~100k (task,
        // bucket) counts).
        let buckets = plan.labels.len();
        let mut group_ids: HashMap<Option<String>, usize> = HashMap::new();
        let mut groups: Vec<(Option<String>, GroupCounts)> = Vec::new();
        let mut dense_cells = 0usize;
        let mut stories: HashSet<(usize, u64)> = HashSet::new();
        for part in parts {
            stories.extend(part.stories);
            let mut ids: Vec<Option<usize>> = vec![None; part.names.len()];
            for (bucket, slot, n) in part.counts {
                let Some(name) = part.names.get(slot) else {
                    continue;
                };
                let Some(id) = ids.get_mut(slot) else {
                    continue;
                };
                let g = *id.get_or_insert_with(|| {
                    *group_ids.entry(name.clone()).or_insert_with(|| {
                        let acc = if dense_cells + buckets <= MAX_DENSE_CELLS {
                            dense_cells += buckets;
                            GroupCounts::Dense(vec![0; buckets])
                        } else {
                            GroupCounts::Sparse(HashMap::new())
                        };
                        groups.push((name.clone(), acc));
                        groups.len() - 1
                    })
                });
                if let Some((_, acc)) = groups.get_mut(g) {
                    acc.add(bucket, n);
                }
            }
        }
        let mut total: BTreeMap<(String, Option<String>), u64> = BTreeMap::new();
        for (group, acc) in groups {
            for (bucket, n) in acc.into_counts() {
                let label = plan.labels.get(bucket).cloned().unwrap_or_default();
                *total.entry((label, group.clone())).or_insert(0) += n;
            }
        }
        for (bucket, _) in stories {
            let label = plan.labels.get(bucket).cloned().unwrap_or_default();
            *total
                .entry((label, Some(GROUP_STORIES.to_owned())))
                .or_insert(0) += 1;
        }
        tracing::debug!(tasks = tasks.len(), rows = total.len(), "stats");
        Ok(finish_stats(sq, &plan, total, open))
    }

    /// Reference implementation of [`Index::search`]: reads every data row of
    /// every table of the sources and filters in memory.
    pub fn full_scan_search(&self, query: &Query) -> Result<Vec<PageHit>> {
        let q = query.normalised()?;
        // Every region of every table of the sources, scanned in parallel.
        let mut units = Vec::new();
        for table in self.store.list_tables()? {
            let Some((source, _)) = keys::parse_table_name(&table) else {
                continue;
            };
            if !q.sources.is_empty() && !q.sources.iter().any(|s| s == source) {
                continue;
            }
            for r in self.store.regions(&table)? {
                units.push((table.clone(), r));
            }
        }
        let parts = units
            .par_iter()
            .map(|(table, region)| -> Result<Vec<PageHit>> {
                let scan =
                    Scan::range(region.start.clone(), region.end.clone()).families(&[FAMILY_ATTRS]);
                let mut hits = Vec::new();
                for row in self.store.scan(table, &scan)? {
                    if row.key.get(1) != Some(&keys::DATA_TAG) {
                        continue;
                    }
                    let page = PageRecord::from_row(&row)?;
                    if q.matches(&page) {
                        hits.push(PageHit {
                            table: table.clone(),
                            row_key: row.key,
                            page,
                        });
                    }
                }
                Ok(hits)
            })
            .collect::<Result<Vec<_>>>()?;
        let mut hits: Vec<PageHit> = parts.into_iter().flatten().collect();
        sort_hits(&mut hits);
        if let Some(l) = q.limit {
            hits.truncate(l);
        }
        Ok(hits)
    }

    /// Reference implementation of [`Index::stats`] over
    /// [`Index::full_scan_search`] (labels computed page by page).
    pub fn full_scan_stats(&self, sq: &StatsQuery) -> Result<Vec<StatsRow>> {
        let mut q = sq.query.clone();
        q.limit = None;
        let hits = self.full_scan_search(&q)?;
        let nq = q.normalised()?;
        let tasks = self.tasks(&nq)?;
        let (plan, open) = Self::stats_plan(sq, &nq, &tasks)?;
        let mut counts = BTreeMap::new();
        let mut stories = BTreeSet::new();
        for h in &hits {
            let label = sq.interval.label_in(h.page.key_time(), &sq.tz);
            if sq.group_by == Some(GroupBy::Story) {
                stories.insert((
                    label.clone(),
                    crate::neardup::story_root(&h.page).to_owned(),
                ));
            }
            *counts
                .entry((label, page_group(&h.page, sq.group_by)))
                .or_insert(0) += 1;
        }
        for (label, _) in stories {
            *counts
                .entry((label, Some(GROUP_STORIES.to_owned())))
                .or_insert(0) += 1;
        }
        Ok(finish_stats(sq, &plan, counts, open))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(s: u8, topic: u16) -> Entry {
        let mut suffix = [0u8; SUFFIX_LEN];
        suffix[4] = s;
        Entry {
            suffix,
            flags: if topic == NO_LABEL {
                0
            } else {
                FLAG_EXT | FLAG_ATTRS
            },
            comments: None,
            score: 0,
            topic,
            media: NO_LABEL,
            story: None,
        }
    }

    #[test]
    fn union_and_join_merge_sorted_streams() {
        let u = union(vec![vec![e(1, 0), e(5, 0)], vec![e(2, 1), e(5, 1)]], false);
        assert_eq!(
            u.iter().map(|x| x.suffix[4]).collect::<Vec<_>>(),
            vec![1, 2, 5]
        );
        let i = join(u.clone(), vec![e(2, 7), e(3, 7), e(5, 7)], false);
        assert_eq!(
            i.iter().map(|x| x.suffix[4]).collect::<Vec<_>>(),
            vec![2, 5]
        );
        assert_eq!(i[0].topic, 1);
        let left = join(
            vec![e(1, NO_LABEL), e(2, NO_LABEL), e(3, NO_LABEL)],
            vec![e(2, 4)],
            true,
        );
        assert_eq!(
            left.iter().map(|x| x.topic).collect::<Vec<_>>(),
            vec![NO_LABEL, 4, NO_LABEL],
            "a legacy entry takes the topic of a row that knows it"
        );
    }

    #[test]
    fn counting_union_scores_lists_holding_an_entry() {
        let u = union(
            vec![
                vec![e(1, 0), e(5, 0)],
                vec![e(5, 0)],
                vec![e(5, 0), e(9, 0)],
            ],
            true,
        );
        assert_eq!(
            u.iter().map(|x| (x.suffix[4], x.score)).collect::<Vec<_>>(),
            vec![(1, 1), (5, 3), (9, 1)]
        );
    }

    #[test]
    fn verdicts_use_extended_index_values() {
        let mut labels = Labels::default();
        let military = labels.id(b"military");
        let economy = labels.id(b"economy");
        let q = Query {
            min_comments: Some(10),
            collapse_near_duplicates: true,
            topics: vec!["military".into()],
            ..Query::new(&[], Utc::now(), Utc::now())
        };
        let checks = Checks {
            topic: true,
            media: false,
        };
        let mut x = e(1, NO_LABEL);
        assert_eq!(
            verdict(&q, &x, checks, &labels),
            Verdict::Unknown,
            "legacy row"
        );
        x = e(1, military);
        x.comments = Some(10);
        assert_eq!(verdict(&q, &x, checks, &labels), Verdict::Yes);
        x.topic = economy;
        assert_eq!(verdict(&q, &x, checks, &labels), Verdict::No, "other topic");
        x.topic = military;
        x.comments = Some(9);
        assert_eq!(verdict(&q, &x, checks, &labels), Verdict::No);
        x.comments = Some(11);
        x.flags |= FLAG_NEAR_DUP;
        assert_eq!(verdict(&q, &x, checks, &labels), Verdict::No);
        let legacy_revisit = Entry {
            flags: FLAG_REVISIT,
            ..e(1, NO_LABEL)
        };
        assert_eq!(
            verdict(&q, &legacy_revisit, checks, &labels),
            Verdict::No,
            "the revisit flag is always valid"
        );
    }

    #[test]
    fn label_ids_stay_stable_past_the_linear_search() {
        let mut labels = Labels::default();
        let values: Vec<Vec<u8>> = (0..LINEAR_LABELS * 2)
            .map(|i| format!("media-{i}").into_bytes())
            .collect();
        let ids: Vec<u16> = values.iter().map(|v| labels.id(v)).collect();
        assert_eq!(ids, (0..values.len() as u16).collect::<Vec<_>>());
        let mut hint = NO_LABEL;
        for (v, id) in values.iter().zip(&ids).rev() {
            assert_eq!(labels.id(v), *id, "id of {v:?} again");
            assert_eq!(labels.id_hinted(v, &mut hint), *id, "hinted id of {v:?}");
            assert_eq!(hint, *id);
        }
        assert_eq!(labels.name(ids[LINEAR_LABELS + 3]), Some("media-35"));
        // Non-UTF-8 values keep distinct ids even though their names are lossy.
        let (a, b) = (labels.id(&[0xff]), labels.id(&[0xfe]));
        assert_ne!(a, b);
        assert_eq!(labels.id(&[0xff]), a);
    }

    #[test]
    fn dense_and_sparse_group_counts_agree() {
        let mut dense = GroupCounts::Dense(vec![0; 10]);
        let mut sparse = GroupCounts::Sparse(HashMap::new());
        for (bucket, n) in [(3, 2), (9, 1), (3, 5), (0, 1)] {
            dense.add(bucket, n);
            sparse.add(bucket, n);
        }
        let mut s = sparse.into_counts();
        s.sort_unstable();
        assert_eq!(dense.into_counts(), vec![(0, 1), (3, 7), (9, 1)]);
        assert_eq!(s, vec![(0, 1), (3, 7), (9, 1)]);
    }

    #[test]
    fn interval_labels() {
        let t: DateTime<Utc> = "2017-01-31T10:00:00Z".parse().unwrap_or_default();
        assert_eq!(Interval::Day.label(t), "2017-01-31");
        assert_eq!(Interval::Week.label(t), "2017-W05");
        assert_eq!(Interval::Month.label(t), "2017-01");
        assert_eq!(Interval::Year.label(t), "2017");
        // ISO week of 1 Jan 2017 belongs to 2016
        let ny: DateTime<Utc> = "2017-01-01T00:00:00Z".parse().unwrap_or_default();
        assert_eq!(Interval::Week.label(ny), "2016-W52");
    }
}
