//! Paged search: [`Index::search_page`], its [`Sort`] orders and the opaque
//! [`Cursor`].
//!
//! * **Time order** (newest or oldest first): the time range is walked in
//!   windows from the end (or the start): 6 h, then 4x larger each round. In a
//!   window every bucket yields its candidates from index keys in time order;
//!   the per-bucket streams are k-way merged (a heap) in the sort order and
//!   data rows are read only for the next `limit + 1` candidates. The walk
//!   stops as soon as `limit + 1` hits are found, so a page costs about one
//!   window of index keys and `limit + 1` data-row reads, however many pages
//!   match.
//! * **Comments / relevance**: every match must be ranked. Candidates come
//!   from index keys alone (the comment count and the keyword matches are in
//!   the index rows), at most [`MAX_SORTED_MATCHES`] of them (else
//!   [`Error::Invalid`]: narrow the filter); then only the page's data rows are
//!   read.
//!
//! A cursor is the position (sort key) of the last hit of a page plus the
//! sort and a fingerprint of the query; the next page holds the hits strictly
//! after it, so pages concatenate to the full answer.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use chrono::{DateTime, Duration, Utc};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::index::{Index, FLAG_EXT};
use crate::keys::{self, SUFFIX_LEN, TIME_LEN};
pub use crate::query::Cursor;
use crate::query::{truncate, Entry, PageHit, Query, Sort, SortKey, Task, RANK_SCALE};

/// Hits per page when `Query::limit` is `None`.
pub const DEFAULT_PAGE_LIMIT: usize = 20;
/// Largest page [`Index::search_page`] returns.
pub const MAX_PAGE_LIMIT: usize = 1_000;
/// Most matches a comments or relevance sort ranks.
pub const MAX_SORTED_MATCHES: usize = 200_000;
/// First time window of a time-ordered page.
const FIRST_WINDOW: Duration = Duration::hours(6);
/// Growth of the time window per round.
const WINDOW_GROWTH: i32 = 4;

/// One page of [`Index::search_page`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchPage {
    /// The hits, in the query's sort order.
    pub hits: Vec<PageHit>,
    /// Cursor of the next page (`None` on the last page).
    pub next_cursor: Option<String>,
}

/// Whether `a` comes before `b` in the sort.
fn precedes(sort: Sort, a: &SortKey, b: &SortKey) -> bool {
    match sort {
        Sort::TimeAsc => a < b,
        _ => a > b,
    }
}

fn primary_of(sort: Sort, q: &Query, page: &crate::PageRecord) -> i64 {
    match sort {
        Sort::Comments => page
            .comments
            .map_or(-1, |c| i64::try_from(c).unwrap_or(i64::MAX)),
        Sort::Relevance => i64::from(q.relevance(page)),
        Sort::TimeAsc | Sort::TimeDesc => 0,
    }
}

fn key_of_hit(sort: Sort, q: &Query, h: &PageHit) -> SortKey {
    let mut hash = [0u8; 8];
    if let Some(tail) = h.row_key.get(2 + TIME_LEN..2 + SUFFIX_LEN) {
        hash.copy_from_slice(tail);
    }
    SortKey {
        primary: primary_of(sort, q, &h.page),
        time: truncate(h.page.key_time()).timestamp(),
        hash,
        table: h.table.clone(),
    }
}

/// Validated limit, fingerprint and cursor of a paged query.
struct Paging {
    limit: usize,
    fingerprint: u64,
    after: Option<SortKey>,
}

fn paging(q: &Query) -> Result<Paging> {
    let limit = q.limit.unwrap_or(DEFAULT_PAGE_LIMIT);
    if limit == 0 || limit > MAX_PAGE_LIMIT {
        return Err(Error::Invalid(format!(
            "limit {limit}: must be between 1 and {MAX_PAGE_LIMIT}"
        )));
    }
    let fingerprint = q.fingerprint()?;
    let after = match &q.cursor {
        None => None,
        Some(c) if c.sort != q.sort => {
            return Err(Error::BadCursor(format!(
                "cursor was made for sort {}, the query sorts by {}",
                c.sort.as_str(),
                q.sort.as_str()
            )))
        }
        Some(c) if c.query != fingerprint => {
            return Err(Error::BadCursor(
                "cursor belongs to a different query (filters changed)".into(),
            ))
        }
        Some(c) => Some(c.key.clone()),
    };
    Ok(Paging {
        limit,
        fingerprint,
        after,
    })
}

/// Cuts `keyed` (in sort order, possibly one more than the limit) into a page.
fn finish(q: &Query, p: &Paging, mut keyed: Vec<(SortKey, PageHit)>) -> SearchPage {
    let next_cursor = (keyed.len() > p.limit).then(|| {
        keyed.truncate(p.limit);
        keyed.last().map(|(k, _)| {
            Cursor {
                sort: q.sort,
                query: p.fingerprint,
                key: k.clone(),
            }
            .encode()
        })
    });
    SearchPage {
        hits: keyed.into_iter().map(|(_, h)| h).collect(),
        next_cursor: next_cursor.flatten(),
    }
}

/// A candidate of a window: sort key parts and where it comes from.
struct Cand {
    key: SortKey,
    task: usize,
    entry: Entry,
}

/// Heap item of the k-way merge: the head of stream `stream`.
struct Head {
    key: SortKey,
    stream: usize,
    desc: bool,
}

impl PartialEq for Head {
    fn eq(&self, o: &Self) -> bool {
        self.key == o.key
    }
}
impl Eq for Head {}
impl PartialOrd for Head {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Head {
    /// Max-heap: the item that comes first in the sort is the greatest.
    fn cmp(&self, o: &Self) -> Ordering {
        if self.desc {
            self.key.cmp(&o.key)
        } else {
            o.key.cmp(&self.key)
        }
    }
}

impl Index {
    /// One page of hits in the query's [`Sort`] order, and the cursor of the
    /// next page. See the module documentation for the cost of each sort.
    pub fn search_page(&self, query: &Query) -> Result<SearchPage> {
        let q = query.normalised()?;
        let p = paging(&q)?;
        let tasks = self.tasks(&q)?;
        let keyed = match q.sort {
            Sort::TimeAsc | Sort::TimeDesc => self.page_by_time(&q, &p, &tasks)?,
            Sort::Comments | Sort::Relevance => self.page_by_rank(&q, &p, &tasks)?,
        };
        let page = finish(&q, &p, keyed);
        tracing::debug!(
            tasks = tasks.len(),
            hits = page.hits.len(),
            sort = q.sort.as_str(),
            "search page"
        );
        Ok(page)
    }

    fn window_streams(
        &self,
        q: &Query,
        tasks: &[Task],
        from: DateTime<Utc>,
        to: DateTime<Utc>,
        after: Option<&SortKey>,
    ) -> Result<Vec<Vec<Cand>>> {
        let desc = q.sort != Sort::TimeAsc;
        tasks
            .par_iter()
            .enumerate()
            .map(|(i, t)| -> Result<Vec<Cand>> {
                let Some(sub) = t.clip(from, to) else {
                    return Ok(Vec::new());
                };
                let cands = self.candidates(&sub, q, false, false)?.entries;
                let mut out = Vec::with_capacity(cands.len());
                for e in cands {
                    let mut hash = [0u8; 8];
                    hash.copy_from_slice(&e.suffix[TIME_LEN..]);
                    let key = SortKey {
                        primary: 0,
                        time: keys::suffix_time(t.year, &e.suffix)?.timestamp(),
                        hash,
                        table: t.table.clone(),
                    };
                    if after.is_none_or(|a| precedes(q.sort, a, &key)) {
                        out.push(Cand {
                            key,
                            task: i,
                            entry: e,
                        });
                    }
                }
                if desc {
                    out.reverse();
                }
                Ok(out)
            })
            .collect()
    }

    /// Reads the data rows of candidates (grouped by task) and keeps those
    /// that pass the row conditions, in the given order.
    fn resolve(
        &self,
        q: &Query,
        tasks: &[Task],
        cands: &[Cand],
    ) -> Result<Vec<(SortKey, PageHit)>> {
        let mut by_task: std::collections::BTreeMap<usize, Vec<usize>> = Default::default();
        for (i, c) in cands.iter().enumerate() {
            by_task.entry(c.task).or_default().push(i);
        }
        let mut pages: Vec<Option<crate::PageRecord>> = vec![None; cands.len()];
        for (t, idx) in by_task {
            let entries: Vec<Entry> = idx.iter().map(|i| cands[*i].entry).collect();
            for (i, page) in idx.into_iter().zip(self.fetch(&tasks[t], &entries)?) {
                pages[i] = page;
            }
        }
        let mut out = Vec::new();
        for (c, page) in cands.iter().zip(pages) {
            let Some(page) = page else { continue };
            if q.matches(&page) {
                let task = &tasks[c.task];
                let mut key = c.key.clone();
                // A text query's relevance is its entry's rank: the row cannot tell it.
                let text_rank = q.sort == Sort::Relevance && q.text.is_some();
                if !text_rank {
                    key.primary = primary_of(q.sort, q, &page);
                }
                out.push((
                    key,
                    PageHit {
                        table: task.table.clone(),
                        row_key: keys::data_key(task.salt, &c.entry.suffix),
                        page,
                        score: text_rank.then(|| c.entry.rank as f32 / RANK_SCALE),
                    },
                ));
            }
        }
        Ok(out)
    }

    fn page_by_time(
        &self,
        q: &Query,
        p: &Paging,
        tasks: &[Task],
    ) -> Result<Vec<(SortKey, PageHit)>> {
        let desc = q.sort != Sort::TimeAsc;
        let Some((mut lo, mut hi)) = Self::extent(tasks) else {
            return Ok(Vec::new());
        };
        if let Some(a) = &p.after {
            let at = DateTime::from_timestamp(a.time, 0)
                .ok_or_else(|| Error::BadCursor("time out of range".into()))?;
            if desc {
                hi = hi.min(at + Duration::seconds(1));
            } else {
                lo = lo.max(at);
            }
        }
        let want = p.limit + 1;
        let mut out: Vec<(SortKey, PageHit)> = Vec::with_capacity(want);
        let mut window = FIRST_WINDOW;
        let mut rounds = 0u32;
        while lo < hi && out.len() < want {
            rounds += 1;
            let (wf, wt) = if desc {
                (lo.max(hi - window), hi)
            } else {
                (lo, hi.min(lo + window))
            };
            let mut streams = self.window_streams(q, tasks, wf, wt, p.after.as_ref())?;
            // k-way merge of the per-bucket streams, resolved chunk by chunk.
            let mut heap = BinaryHeap::with_capacity(streams.len());
            let mut iters: Vec<std::vec::IntoIter<Cand>> = Vec::with_capacity(streams.len());
            let mut pending: Vec<Option<Cand>> = Vec::with_capacity(streams.len());
            for (i, s) in streams.drain(..).enumerate() {
                let mut it = s.into_iter();
                let first = it.next();
                if let Some(c) = &first {
                    heap.push(Head {
                        key: c.key.clone(),
                        stream: i,
                        desc,
                    });
                }
                pending.push(first);
                iters.push(it);
            }
            while out.len() < want && !heap.is_empty() {
                let need = want - out.len();
                let mut chunk = Vec::with_capacity(need);
                while chunk.len() < need {
                    let Some(h) = heap.pop() else { break };
                    if let Some(c) = pending[h.stream].take() {
                        chunk.push(c);
                    }
                    let next = iters[h.stream].next();
                    if let Some(c) = &next {
                        heap.push(Head {
                            key: c.key.clone(),
                            stream: h.stream,
                            desc,
                        });
                    }
                    pending[h.stream] = next;
                }
                out.extend(self.resolve(q, tasks, &chunk)?);
            }
            if desc {
                hi = wf;
            } else {
                lo = wt;
            }
            window = window * WINDOW_GROWTH;
        }
        out.truncate(want);
        tracing::debug!(rounds, hits = out.len(), "time-ordered page");
        Ok(out)
    }

    fn page_by_rank(
        &self,
        q: &Query,
        p: &Paging,
        tasks: &[Task],
    ) -> Result<Vec<(SortKey, PageHit)>> {
        let relevance = q.sort == Sort::Relevance;
        let comments = q.sort == Sort::Comments;
        let per_task = tasks
            .par_iter()
            .enumerate()
            .map(|(i, t)| -> Result<Vec<Cand>> {
                // By relevance over text alone, the text index's sure hits are ranked as
                // they are: only the page's hits are read, so any number may match.
                let mut cands = self.candidates(t, q, relevance, relevance)?;
                let unread = cands.trusted;
                if cands.entries.len() > MAX_SORTED_MATCHES && !unread {
                    return Err(too_many());
                }
                // Legacy values (no FLAG_EXT) carry no comment count: read those rows.
                let (cands, rows) =
                    self.decided(t, q, &mut cands, |e| comments && e.flags & FLAG_EXT == 0)?;
                let mut out = Vec::with_capacity(cands.len());
                for (j, e) in cands.into_iter().enumerate() {
                    let row = rows.get(j).and_then(Option::as_ref);
                    let primary = match (q.sort, row) {
                        (Sort::Comments, Some(page)) => primary_of(q.sort, q, page),
                        (Sort::Comments, None) => e
                            .comments
                            .map_or(-1, |c| i64::try_from(c).unwrap_or(i64::MAX)),
                        _ if q.text.is_some() => i64::from(e.rank),
                        _ => i64::from(e.score) + q.keywords.len() as i64,
                    };
                    let mut hash = [0u8; 8];
                    hash.copy_from_slice(&e.suffix[TIME_LEN..]);
                    let key = SortKey {
                        primary,
                        time: keys::suffix_time(t.year, &e.suffix)?.timestamp(),
                        hash,
                        table: t.table.clone(),
                    };
                    if p.after.as_ref().is_none_or(|a| precedes(q.sort, a, &key)) {
                        out.push(Cand {
                            key,
                            task: i,
                            entry: e,
                        });
                    }
                }
                // Of hits taken as they are, only a page's worth can be on the page.
                let want = p.limit + 1;
                if unread && out.len() > want {
                    out.select_nth_unstable_by(want - 1, |a, b| b.key.cmp(&a.key));
                    out.truncate(want);
                }
                Ok(out)
            })
            .collect::<Result<Vec<_>>>()?;
        let total: usize = per_task.iter().map(Vec::len).sum();
        if total > MAX_SORTED_MATCHES {
            return Err(too_many());
        }
        let mut all: Vec<Cand> = per_task.into_iter().flatten().collect();
        all.sort_unstable_by(|a, b| b.key.cmp(&a.key));
        let want = p.limit + 1;
        let mut out = Vec::with_capacity(want);
        let mut start = 0;
        while out.len() < want && start < all.len() {
            let end = (start + want - out.len()).min(all.len());
            out.extend(self.resolve(q, tasks, &all[start..end])?);
            start = end;
        }
        Ok(out)
    }

    /// Reference implementation of [`Index::search_page`] over
    /// [`Index::full_scan_search`]: every match read, sorted, cut after the cursor.
    pub fn full_scan_search_page(&self, query: &Query) -> Result<SearchPage> {
        let q = query.normalised()?;
        let p = paging(&q)?;
        let mut all = q.clone();
        all.limit = None;
        let mut keyed: Vec<(SortKey, PageHit)> = self
            .full_scan_search(&all)?
            .into_iter()
            .map(|h| (key_of_hit(q.sort, &q, &h), h))
            .filter(|(k, _)| p.after.as_ref().is_none_or(|a| precedes(q.sort, a, k)))
            .collect();
        match q.sort {
            Sort::TimeAsc => keyed.sort_by(|a, b| a.0.cmp(&b.0)),
            _ => keyed.sort_by(|a, b| b.0.cmp(&a.0)),
        }
        keyed.truncate(p.limit + 1);
        Ok(finish(&q, &p, keyed))
    }
}

fn too_many() -> Error {
    Error::Invalid(format!(
        "more than {MAX_SORTED_MATCHES} pages match; sorting by comments or relevance needs a narrower filter"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cursor() -> Cursor {
        Cursor {
            sort: Sort::Comments,
            query: 0xdead_beef,
            key: SortKey {
                primary: -1,
                time: 1_485_000_000,
                hash: [0, 1, 2, 3, 0xfc, 0xfd, 0xfe, 0xff],
                table: "anglo_news_2017".into(),
            },
        }
    }

    #[test]
    fn cursor_round_trips_as_url_safe_text() {
        let c = cursor();
        let s = c.encode();
        assert!(s
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'));
        assert_eq!(Cursor::decode(&s).ok(), Some(c));
    }

    #[test]
    fn bad_cursors_are_clear_errors() {
        let s = cursor().encode();
        for bad in ["", "!!!", &s[..s.len() - 20], "AQ"] {
            assert!(
                matches!(Cursor::decode(bad), Err(Error::BadCursor(_))),
                "{bad:?} accepted"
            );
        }
        let mut c = cursor();
        c.key.table = "urls".into();
        assert!(matches!(
            Cursor::decode(&c.encode()),
            Err(Error::BadCursor(_))
        ));
    }

    #[test]
    fn descending_sorts_precede_by_greater_keys() {
        let a = cursor().key;
        let mut b = a.clone();
        b.time += 1;
        assert!(precedes(Sort::TimeDesc, &b, &a));
        assert!(precedes(Sort::TimeAsc, &a, &b));
    }
}
