//! Statistics: [`Index::stats`] counts the pages a query selects per time
//! bucket (and group) from index entries.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use rayon::prelude::*;

use super::entries::{Entry, NO_LABEL};
use super::exec::Task;
use super::{
    year_start, Bounds, GroupBy, Query, StatsQuery, StatsRow, GROUP_COPIES, GROUP_STORIES,
};
use crate::error::{Error, Result};
use crate::index::{Index, FLAG_EXT, FLAG_MEDIA, FLAG_NEAR_DUP};
use crate::keys::{self, TIME_LEN};
use crate::record::PageRecord;
use crate::zone::BucketPlan;

/// Statistics keep dense per-bucket counters for groups up to this many
/// counters in all (8 bytes each), sparse ones beyond.
const MAX_DENSE_CELLS: usize = 1 << 22;

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
        return u64::from_be_bytes(keys::url_hash(crate::tables::neardup::story_root(p)));
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

pub(super) fn page_group(page: &PageRecord, g: Option<GroupBy>) -> Option<String> {
    match g? {
        GroupBy::Topic => Some(page.topic.clone()),
        GroupBy::Media => page.media.clone(),
        GroupBy::Source => Some(page.source.clone()),
        GroupBy::Outlet => Some(page.outlet_or_host().to_string()),
        GroupBy::Story => Some(GROUP_COPIES.to_owned()),
    }
}

/// Counts keyed by (bucket label, group), plus zero rows when asked: every
/// bucket of the plan, except that on a side where the query is open (its
/// bound lies beyond every table of its sources, e.g. no `from` or `to` at
/// all) the filling stops at the first / last non-empty bucket, as a
/// date histogram without extended bounds does. (Otherwise a table created
/// ahead of time for next year would add a year of empty buckets.)
pub(super) fn finish_stats(
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
    /// The buckets of a statistics call and its open sides: the years of
    /// the selected tables clipped to `[from, to)`, and with `fill_empty`
    /// out to a bound the asker gave (`sq.bounds`) even where no table
    /// covers it. A side is open when its bound lies beyond the tables and
    /// was not given. No tables and no given bounds: no buckets.
    pub(super) fn stats_plan(
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
        let grouped_by_attr = matches!(sq.group_by, Some(GroupBy::Topic | GroupBy::Media));
        let by_story = sq.group_by == Some(GroupBy::Story);
        // No index value tells the outlet: every page's data row is read.
        let by_outlet = sq.group_by == Some(GroupBy::Outlet);
        // Counts by time or source need no value of a page: sure text hits are counted as
        // they are.
        let mut cands =
            self.candidates(task, q, false, !grouped_by_attr && !by_story && !by_outlet)?;
        let (entries, rows) = self.decided(task, q, &mut cands, |e| {
            by_outlet || (grouped_by_attr && !e.attrs_known()) || (by_story && story_needs_row(e))
        })?;
        // Group slots: 0 = no group, then one per label id (+1), then one per
        // group name taken from a data row (values without topic/media).
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
                (Some(g), Some(p)) if by_outlet || !e.attrs_known() => {
                    let name = page_group(p, Some(g));
                    *extra.entry(name.clone()).or_insert_with(|| {
                        names.push(name);
                        names.len() - 1
                    })
                }
                (Some(GroupBy::Outlet), None) => 0,
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
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
