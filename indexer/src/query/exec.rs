//! Query execution: the tasks of a query (one per table and bucket), the
//! scans of posting rows, the candidate stream of a task, data-row reads and
//! [`Index::search`].

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::Arc;

use chrono::{DateTime, Utc};
use rayon::prelude::*;

use super::entries::{
    join, union, verdict, Checks, Entry, Labels, Prefilter, Verdict, NO_LABEL, RANK_SCALE, UNSEEN,
};
use super::{truncate, year_start, PageHit, Query};
use crate::error::{Error, Result};
use crate::index::Index;
use crate::keys::{self, Suffix, ATTR_KEYWORD, ATTR_MEDIA, ATTR_TOPIC, POSTING_TAG, TIME_LEN};
use crate::record::{PageRecord, FAMILY_ATTRS, FAMILY_INDEX};
use crate::store::{prefix_end, Scan};

/// Data rows read per `get` call when resolving index hits.
pub(crate) const GET_CHUNK: usize = 256;
/// A bucket's text hits up to this many, with no other index condition, are
/// decided by reading their data rows; more are joined with the bucket's
/// topic rows, which one scan reads faster than that many row reads.
const TEXT_ROWS_READ: usize = 2_048;

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
    /// With a text condition: the pages of this table and bucket the text
    /// index matched, in suffix order.
    pub(crate) text: Option<Arc<Vec<TextMatch>>>,
}

/// A page the text index matched.
#[derive(Debug, Clone, Copy)]
pub(crate) struct TextMatch {
    pub(crate) suffix: Suffix,
    /// Relevance ([`RANK_SCALE`] times the score).
    pub(crate) rank: u32,
    /// Whether the page has its rows and is what the rows would count without reading
    /// them: not a revisit (unless asked for), named by no text mark
    /// ([`crate::tables::textmark`]), found in an index that keeps the revisit flag.
    pub(crate) sure: bool,
}

impl Task {
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

/// Candidates of one task.
#[derive(Debug, Default)]
pub(crate) struct Cands {
    pub(crate) entries: Vec<Entry>,
    pub(crate) labels: Labels,
    checks: Checks,
    /// The entries are the text index's hits taken as they are (no index value read):
    /// those not [`TextMatch::sure`] still carry `UNSEEN`.
    pub(crate) trusted: bool,
}

/// The error for a key a scan visitor stopped at (`None`: no such key).
fn no_bad_key(bad_key: Option<Vec<u8>>, reason: &'static str) -> Result<()> {
    match bad_key {
        Some(key) => Err(Error::BadKey { key, reason }),
        None => Ok(()),
    }
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

impl Index {
    /// Page tables of the query's sources that overlap `[from, to)`, with one
    /// task per region, in (table, salt) order.
    pub(crate) fn tasks(&self, q: &Query) -> Result<Vec<Task>> {
        let mut tasks = Vec::new();
        if q.from >= q.to {
            return Ok(tasks);
        }
        let text = self.text_hits(q)?;
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
                    text: text.as_ref().map(|t| {
                        t.get(&(table.clone(), salt as u8))
                            .cloned()
                            .unwrap_or_default()
                    }),
                });
            }
        }
        Ok(tasks)
    }

    /// The text condition's hits by (table, bucket), each list in suffix
    /// order (`None`: the query has no text condition).
    #[allow(clippy::type_complexity)]
    fn text_hits(&self, q: &Query) -> Result<Option<HashMap<(String, u8), Arc<Vec<TextMatch>>>>> {
        let Some(tq) = q.text_query()? else {
            return Ok(None);
        };
        let text = self.text_for_query()?;
        if text.is_empty()? && self.has_pages()? {
            return Err(Error::Invalid(
                "the text index holds no page but the archive does (it was indexed before text search, or the text index was lost): `harvest fsck --repair` builds it from the packs".into(),
            ));
        }
        let scope = crate::text::TextScope {
            sources: q.sources.clone(),
            from: q.from.timestamp(),
            to: q.to.timestamp(),
        };
        let mut by_task: HashMap<(String, u8), Vec<TextMatch>> = HashMap::new();
        let mut tables: HashMap<(std::sync::Arc<str>, i32), String> = HashMap::new();
        let hits = text.search(&tq, &scope)?;
        // After the search: a page found whose mark is gone has its rows.
        let marked = self.marked_text_pages()?;
        for hit in hits {
            if hit.revisit == Some(true) && !q.include_revisits {
                continue;
            }
            let sure =
                hit.revisit.is_some() && (marked.is_empty() || !marked.contains(&hit.page.key()));
            let Some(t) = DateTime::from_timestamp(hit.page.time, 0) else {
                continue;
            };
            let year = chrono::Datelike::year(&t);
            let table = match tables.get(&(hit.page.source.clone(), year)) {
                Some(name) => name.clone(),
                None => {
                    let name = keys::table_name(&hit.page.source, year)?;
                    tables.insert((hit.page.source.clone(), year), name.clone());
                    name
                }
            };
            let salt = keys::salt(&hit.page.hash, self.options.buckets);
            let rank = (hit.score.max(0.0) * RANK_SCALE).round() as u32;
            by_task.entry((table, salt)).or_default().push(TextMatch {
                suffix: keys::suffix(t, &hit.page.hash),
                rank,
                sure,
            });
        }
        Ok(Some(
            by_task
                .into_iter()
                .map(|(k, mut v)| {
                    v.sort_unstable_by_key(|e| e.suffix);
                    v.dedup_by_key(|e| e.suffix);
                    (k, Arc::new(v))
                })
                .collect(),
        ))
    }

    /// Entries of one (attribute, value) in a task's range, in suffix order,
    /// less those whose value already rules the page out (see
    /// [`Prefilter`]): the cells of its posting rows (one row per month;
    /// cells in suffix order). A table made before posting rows is refused
    /// ([`Index::check_table`]: its format is read once per index).
    fn scan_index(
        &self,
        task: &Task,
        attr: u8,
        value: &str,
        labels: &mut Labels,
        pre: &mut Prefilter<'_>,
    ) -> Result<Vec<Entry>> {
        self.check_table(&task.table)?;
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

    /// Distinct values of an index attribute in one bucket of a table, by a
    /// skip scan over its posting rows: one `limit 1` scan per value.
    pub(crate) fn attr_values(&self, table: &str, salt: u8, attr: u8) -> Result<Vec<String>> {
        self.check_table(table)?;
        let mut values = BTreeSet::new();
        self.skip_scan(table, salt, attr, &mut values)?;
        Ok(values.into_iter().collect())
    }

    fn skip_scan(
        &self,
        table: &str,
        salt: u8,
        attr: u8,
        values: &mut BTreeSet<String>,
    ) -> Result<()> {
        let attr_prefix = [salt, POSTING_TAG, attr];
        let stop = prefix_end(&attr_prefix);
        let mut start = attr_prefix.to_vec();
        loop {
            let scan = Scan::range(start, stop.clone())
                .families(&[FAMILY_INDEX])
                .limit(1);
            let Some(row) = self.store.scan(table, &scan)?.into_iter().next() else {
                break;
            };
            let value = keys::split_posting_key(&row.key)?.value;
            start = prefix_end(&keys::tagged_prefix(salt, POSTING_TAG, attr, &value));
            values.insert(value);
        }
        Ok(())
    }

    /// Pages of a bucket that satisfy the conditions as far as the index
    /// rows tell, in suffix (time) order. The stream is the intersection of
    /// the keyword conditions when there are any (topic and media are then
    /// checked on the index row values), else of the media, else of the
    /// topic condition, else every topic's rows. `score` asks for the
    /// `keywords_any` counts even when they are not a condition. `trust_text` says the
    /// caller needs no index value of a page (topic, media, comments, story): text hits
    /// alone are then taken as they are where they are sure ([`TextMatch::sure`]) and
    /// nothing else needs a page's values.
    pub(crate) fn candidates(
        &self,
        task: &Task,
        q: &Query,
        score: bool,
        trust_text: bool,
    ) -> Result<Cands> {
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
        let text_only = groups.is_empty() && task.text.is_some();
        // Text hits alone, nothing asked of a page that its index values tell, and few
        // hits whose rows must be read (an index made before the revisit flag has only
        // those: the topic rows decide them faster).
        let trusted = trust_text
            && text_only
            && !q.collapse_near_duplicates
            && !q.has_comment_filter()
            && !q.has_row_only_filter()
            && task
                .text
                .as_ref()
                .is_some_and(|t| t.iter().filter(|m| !m.sure).count() <= TEXT_ROWS_READ);
        if let Some(text) = &task.text {
            let from = keys::time_bytes(task.from);
            let to = (!task.to_is_year_end).then(|| keys::time_bytes(task.to));
            groups.push(
                text.iter()
                    .filter(|m| {
                        let t = &m.suffix[..TIME_LEN];
                        t >= &from[..] && to.is_none_or(|to| t < &to[..])
                    })
                    .map(|m| Entry {
                        suffix: m.suffix,
                        // A sure hit is decided: it has its rows and no value rules it out.
                        flags: if trusted && m.sure { 0 } else { UNSEEN },
                        comments: None,
                        score: 0,
                        rank: m.rank,
                        topic: NO_LABEL,
                        media: NO_LABEL,
                        story: None,
                    })
                    .collect(),
            );
        }
        // Text hits alone say nothing of a page's attributes: unless trusted, a few are
        // decided from their data rows, many take their index values from the bucket's
        // topic rows (the others that are not sure are read in `decided`).
        let text_alone_few = text_only && groups[0].len() <= TEXT_ROWS_READ;
        if groups.is_empty() || (text_only && !text_alone_few && !trusted) {
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
            trusted,
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
    /// are read for the entries their values cannot decide (legacy values)
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
        let cands = self.candidates(task, q, false, false)?.entries;
        let mut hits = Vec::new();
        'chunks: for chunk in cands.chunks(GET_CHUNK) {
            for (e, page) in chunk.iter().zip(self.fetch(task, chunk)?) {
                let Some(page) = page else { continue };
                if q.matches(&page) {
                    hits.push(PageHit {
                        table: task.table.clone(),
                        row_key: keys::data_key(task.salt, &e.suffix),
                        page,
                        score: None,
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
}
