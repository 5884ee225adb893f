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
//! Statistics count from index keys alone (no data-row reads) unless the query
//! has a comment condition or groups by media without a media condition. With
//! no index condition at all, the topic index rows (every page has exactly one)
//! are the stream.
//!
//! Time bounds have whole-second resolution: `from` and `to` are truncated to
//! the second, and a page matches when its key time (publish time, else fetch
//! time, truncated to the second) is in `[from, to)`.
//! [`Index::full_scan_search`] / [`Index::full_scan_stats`] are the naive
//! reference: read every data row of the tables and filter in memory.

use std::collections::BTreeMap;

use chrono::{DateTime, Datelike, TimeZone, Timelike, Utc};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::index::{Index, FLAG_REVISIT, INDEX_ROW_QUALIFIER};
use crate::keys::{
    self, Suffix, ATTR_KEYWORD, ATTR_MEDIA, ATTR_TOPIC, DATA_TAG, INDEX_TAG, SUFFIX_LEN, TIME_LEN,
};
use crate::record::{q, PageRecord, FAMILY_ATTRS, FAMILY_INDEX};
use crate::store::{prefix_end, CellFilter, FilterOp, Scan};

/// Data rows read per `get` call when resolving index hits.
const GET_CHUNK: usize = 256;

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
    /// At most this many hits (the earliest ones); ignored by statistics.
    pub limit: Option<usize>,
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
        }
    }

    fn has_comment_filter(&self) -> bool {
        self.min_comments.is_some() || self.max_comments.is_some()
    }

    fn comments_match(&self, page: &PageRecord) -> bool {
        let min_ok = self
            .min_comments
            .is_none_or(|m| page.comments.is_some_and(|c| c >= m));
        let max_ok = self
            .max_comments
            .is_none_or(|m| page.comments.is_some_and(|c| c <= m));
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
            && self.comments_match(page)
            && (self.include_revisits || !page.revisit)
    }

    /// Bounds truncated to whole seconds, keywords lowercased.
    pub fn normalised(&self) -> Result<Query> {
        for s in &self.sources {
            keys::validate_source(s)?;
        }
        let mut q = self.clone();
        q.from = truncate(q.from);
        q.to = truncate(q.to);
        q.keywords = q.keywords.iter().map(|k| k.to_lowercase()).collect();
        Ok(q)
    }
}

fn truncate(t: DateTime<Utc>) -> DateTime<Utc> {
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
}

/// Counts of the pages a query selects, per time bucket (and group).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StatsQuery {
    /// The selection (`limit` is ignored).
    pub query: Query,
    /// Time bucket.
    pub interval: Interval,
    /// Optional grouping.
    pub group_by: Option<GroupBy>,
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
struct Task {
    table: String,
    source: String,
    year: i32,
    salt: u8,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
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

    fn time_in_range(&self, s: &Suffix) -> bool {
        let t = &s[..TIME_LEN];
        t >= keys::time_bytes(self.from).as_slice()
            && (self.to_is_year_end || t < keys::time_bytes(self.to).as_slice())
    }
}

/// An index hit inside one bucket.
#[derive(Debug, Clone)]
struct Entry {
    suffix: Suffix,
    flags: u8,
    label: Option<String>,
}

fn union(mut lists: Vec<Vec<Entry>>) -> Vec<Entry> {
    if lists.len() == 1 {
        return lists.pop().unwrap_or_default();
    }
    let mut all: Vec<Entry> = lists.into_iter().flatten().collect();
    all.sort_by_key(|a| a.suffix);
    all.dedup_by(|a, b| a.suffix == b.suffix);
    all
}

fn intersect(a: Vec<Entry>, b: Vec<Entry>) -> Vec<Entry> {
    let mut out = Vec::with_capacity(a.len().min(b.len()));
    let mut bi = b.into_iter().peekable();
    for x in a {
        while bi.peek().is_some_and(|y| y.suffix < x.suffix) {
            bi.next();
        }
        if let Some(y) = bi.peek() {
            if y.suffix == x.suffix {
                out.push(Entry {
                    suffix: x.suffix,
                    flags: x.flags | y.flags,
                    label: x.label.or_else(|| y.label.clone()),
                });
            }
        }
    }
    out
}

fn year_start(year: i32) -> Result<DateTime<Utc>> {
    Utc.with_ymd_and_hms(year, 1, 1, 0, 0, 0)
        .single()
        .ok_or_else(|| Error::Invalid(format!("year {year} out of range")))
}

fn sort_hits(hits: &mut [PageHit]) {
    hits.sort_by_cached_key(|h| {
        (
            truncate(h.page.key_time()),
            h.row_key.get(2..).map(<[u8]>::to_vec),
            h.table.clone(),
        )
    });
}

fn count(
    rows: impl IntoIterator<Item = (String, Option<String>)>,
) -> BTreeMap<(String, Option<String>), u64> {
    let mut m = BTreeMap::new();
    for k in rows {
        *m.entry(k).or_insert(0) += 1;
    }
    m
}

fn to_stats(m: BTreeMap<(String, Option<String>), u64>) -> Vec<StatsRow> {
    m.into_iter()
        .map(|((bucket, group), count)| StatsRow {
            bucket,
            group,
            count,
        })
        .collect()
}

fn page_group(page: &PageRecord, g: Option<GroupBy>) -> Option<String> {
    match g? {
        GroupBy::Topic => Some(page.topic.clone()),
        GroupBy::Media => page.media.clone(),
        GroupBy::Source => Some(page.source.clone()),
    }
}

impl Index {
    /// Page tables of the query's sources that overlap `[from, to)`, with one
    /// task per region.
    fn tasks(&self, q: &Query) -> Result<Vec<Task>> {
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

    /// Index rows of one (attribute, value) in a task's range.
    fn scan_index(&self, task: &Task, attr: u8, value: &str, label: bool) -> Result<Vec<Entry>> {
        let prefix = keys::index_prefix(task.salt, attr, value);
        let (start, stop) = task.range(&prefix);
        let scan = Scan::range(start, stop).families(&[FAMILY_INDEX]);
        let rows = self.store.scan(&task.table, &scan)?;
        rows.into_iter()
            .map(|row| {
                let tail = row
                    .key
                    .len()
                    .checked_sub(SUFFIX_LEN)
                    .and_then(|at| row.key.get(at..));
                let suffix: Suffix =
                    tail.and_then(|t| t.try_into().ok())
                        .ok_or_else(|| Error::BadKey {
                            key: row.key.clone(),
                            reason: "index key shorter than its suffix",
                        })?;
                let flags = row
                    .cell(FAMILY_INDEX, INDEX_ROW_QUALIFIER)
                    .and_then(|v| v.first().copied())
                    .unwrap_or(0);
                Ok(Entry {
                    suffix,
                    flags,
                    label: label.then(|| value.to_owned()),
                })
            })
            .collect()
    }

    /// All index rows of one attribute in a task's range (any value), labelled
    /// with their value, in suffix order.
    fn scan_attr(&self, task: &Task, attr: u8) -> Result<Vec<Entry>> {
        let rows = self.store.scan(
            &task.table,
            &Scan::prefix(&[task.salt, INDEX_TAG, attr]).families(&[FAMILY_INDEX]),
        )?;
        let mut out = Vec::new();
        for row in rows {
            let ik = keys::split_index_key(&row.key)?;
            if task.time_in_range(&ik.suffix) {
                let flags = row
                    .cell(FAMILY_INDEX, INDEX_ROW_QUALIFIER)
                    .and_then(|v| v.first().copied())
                    .unwrap_or(0);
                out.push(Entry {
                    suffix: ik.suffix,
                    flags,
                    label: Some(ik.value),
                });
            }
        }
        out.sort_by_key(|a| a.suffix);
        Ok(out)
    }

    /// Suffixes of the pages of a bucket that satisfy the index conditions
    /// (and the revisit condition), in time order. `label` names the attribute
    /// whose value each entry should carry.
    fn candidates(&self, task: &Task, q: &Query, label: Option<u8>) -> Result<Vec<Entry>> {
        let mut groups: Vec<Vec<Entry>> = Vec::new();
        let no_conditions = q.topics.is_empty() && q.media.is_empty() && q.keywords.is_empty();
        if !q.topics.is_empty() {
            let lists = q
                .topics
                .iter()
                .map(|t| self.scan_index(task, ATTR_TOPIC, t, label == Some(ATTR_TOPIC)))
                .collect::<Result<Vec<_>>>()?;
            groups.push(union(lists));
        } else if label == Some(ATTR_TOPIC) || no_conditions {
            groups.push(self.scan_attr(task, ATTR_TOPIC)?);
        }
        if !q.media.is_empty() {
            let lists = q
                .media
                .iter()
                .map(|m| self.scan_index(task, ATTR_MEDIA, m, label == Some(ATTR_MEDIA)))
                .collect::<Result<Vec<_>>>()?;
            groups.push(union(lists));
        }
        for k in &q.keywords {
            groups.push(self.scan_index(task, ATTR_KEYWORD, k, false)?);
        }
        groups.sort_by_key(Vec::len);
        let mut it = groups.into_iter();
        let mut acc = it.next().unwrap_or_default();
        for g in it {
            if acc.is_empty() {
                break;
            }
            acc = intersect(acc, g);
        }
        if !q.include_revisits {
            acc.retain(|e| e.flags & FLAG_REVISIT == 0);
        }
        Ok(acc)
    }

    fn search_task(&self, task: &Task, q: &Query, limit: Option<usize>) -> Result<Vec<PageHit>> {
        let mut hits = Vec::new();
        let hit = |row: &crate::store::Row| -> Result<PageHit> {
            Ok(PageHit {
                table: task.table.clone(),
                row_key: row.key.clone(),
                page: PageRecord::from_row(row)?,
            })
        };
        if q.topics.is_empty() && q.media.is_empty() && q.keywords.is_empty() {
            let (start, stop) = task.range(&[task.salt, DATA_TAG]);
            let mut scan = Scan::range(start, stop).families(&[FAMILY_ATTRS]);
            scan.limit = limit;
            if let Some(m) = q.min_comments {
                scan = scan.filter(CellFilter::new(
                    FAMILY_ATTRS,
                    q::COMMENTS,
                    FilterOp::Ge,
                    m.to_be_bytes(),
                ));
            }
            if let Some(m) = q.max_comments {
                scan = scan.filter(CellFilter::new(
                    FAMILY_ATTRS,
                    q::COMMENTS,
                    FilterOp::Le,
                    m.to_be_bytes(),
                ));
            }
            if !q.include_revisits {
                scan = scan.filter(CellFilter::new(
                    FAMILY_ATTRS,
                    q::REVISIT,
                    FilterOp::Eq,
                    [0u8],
                ));
            }
            for row in self.store.scan(&task.table, &scan)? {
                hits.push(hit(&row)?);
            }
            return Ok(hits);
        }
        let cands = self.candidates(task, q, None)?;
        let mut missing = 0usize;
        'chunks: for chunk in cands.chunks(GET_CHUNK) {
            let keys: Vec<Vec<u8>> = chunk
                .iter()
                .map(|e| keys::data_key(task.salt, &e.suffix))
                .collect();
            for row in self.store.get(&task.table, &keys, &[FAMILY_ATTRS])? {
                let Some(row) = row else {
                    missing += 1;
                    continue;
                };
                let h = hit(&row)?;
                if q.comments_match(&h.page) {
                    hits.push(h);
                    if limit.is_some_and(|l| hits.len() >= l) {
                        break 'chunks;
                    }
                }
            }
        }
        if missing > 0 {
            tracing::warn!(table = %task.table, salt = task.salt, missing, "index rows without data row");
        }
        Ok(hits)
    }

    /// Evaluates a query; hits in key-time order (ties: URL hash, table).
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

    /// Counts the pages a query selects per time bucket (and group), sorted by
    /// (bucket, group).
    pub fn stats(&self, sq: &StatsQuery) -> Result<Vec<StatsRow>> {
        let q = sq.query.normalised()?;
        let from_index = !(q.has_comment_filter()
            || (sq.group_by == Some(GroupBy::Media) && q.media.is_empty()));
        let label = match sq.group_by {
            Some(GroupBy::Topic) => Some(ATTR_TOPIC),
            Some(GroupBy::Media) => Some(ATTR_MEDIA),
            _ => None,
        };
        let tasks = self.tasks(&q)?;
        let maps = tasks
            .par_iter()
            .map(|task| -> Result<BTreeMap<(String, Option<String>), u64>> {
                if from_index {
                    let cands = self.candidates(task, &q, label)?;
                    let mut keys = Vec::with_capacity(cands.len());
                    for e in cands {
                        let t = keys::suffix_time(task.year, &e.suffix)?;
                        let group = match sq.group_by {
                            Some(GroupBy::Source) => Some(task.source.clone()),
                            Some(_) => e.label,
                            None => None,
                        };
                        keys.push((sq.interval.label(t), group));
                    }
                    Ok(count(keys))
                } else {
                    let hits = self.search_task(task, &q, None)?;
                    Ok(count(hits.iter().map(|h| {
                        (
                            sq.interval.label(h.page.key_time()),
                            page_group(&h.page, sq.group_by),
                        )
                    })))
                }
            })
            .collect::<Result<Vec<_>>>()?;
        let mut total = BTreeMap::new();
        for m in maps {
            for (k, v) in m {
                *total.entry(k).or_insert(0) += v;
            }
        }
        tracing::debug!(tasks = tasks.len(), from_index, rows = total.len(), "stats");
        Ok(to_stats(total))
    }

    /// Reference implementation of [`Index::search`]: reads every data row of
    /// every table of the sources and filters in memory.
    pub fn full_scan_search(&self, query: &Query) -> Result<Vec<PageHit>> {
        let q = query.normalised()?;
        let mut hits = Vec::new();
        for table in self.store.list_tables()? {
            let Some((source, _)) = keys::parse_table_name(&table) else {
                continue;
            };
            if !q.sources.is_empty() && !q.sources.iter().any(|s| s == source) {
                continue;
            }
            for row in self
                .store
                .scan(&table, &Scan::default().families(&[FAMILY_ATTRS]))?
            {
                let page = PageRecord::from_row(&row)?;
                if q.matches(&page) {
                    hits.push(PageHit {
                        table: table.clone(),
                        row_key: row.key,
                        page,
                    });
                }
            }
        }
        sort_hits(&mut hits);
        if let Some(l) = q.limit {
            hits.truncate(l);
        }
        Ok(hits)
    }

    /// Reference implementation of [`Index::stats`] over [`Index::full_scan_search`].
    pub fn full_scan_stats(&self, sq: &StatsQuery) -> Result<Vec<StatsRow>> {
        let mut q = sq.query.clone();
        q.limit = None;
        let hits = self.full_scan_search(&q)?;
        Ok(to_stats(count(hits.iter().map(|h| {
            (
                sq.interval.label(h.page.key_time()),
                page_group(&h.page, sq.group_by),
            )
        }))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(s: u8, label: &str) -> Entry {
        let mut suffix = [0u8; SUFFIX_LEN];
        suffix[4] = s;
        Entry {
            suffix,
            flags: 0,
            label: Some(label.to_owned()),
        }
    }

    #[test]
    fn union_and_intersect_merge_sorted_streams() {
        let u = union(vec![vec![e(1, "a"), e(5, "a")], vec![e(2, "b"), e(5, "b")]]);
        assert_eq!(
            u.iter().map(|x| x.suffix[4]).collect::<Vec<_>>(),
            vec![1, 2, 5]
        );
        let i = intersect(u, vec![e(2, "k"), e(3, "k"), e(5, "k")]);
        assert_eq!(
            i.iter().map(|x| x.suffix[4]).collect::<Vec<_>>(),
            vec![2, 5]
        );
        assert_eq!(i[0].label.as_deref(), Some("b"));
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
