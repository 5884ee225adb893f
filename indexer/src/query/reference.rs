//! The naive reference the engine is tested against: read every data row
//! of the tables and filter in memory.

use std::collections::{BTreeMap, BTreeSet, HashSet};

use rayon::prelude::*;

use super::exec::sort_hits;
use super::stats::{finish_stats, page_group};
use super::{GroupBy, PageHit, Query, StatsQuery, StatsRow, GROUP_STORIES};
use crate::error::Result;
use crate::index::Index;
use crate::keys;
use crate::record::{PageRecord, FAMILY_ATTRS};
use crate::store::Scan;
use crate::text::TextScope;

impl Index {
    /// Reference implementation of [`Index::search`]: reads every data row of
    /// every table of the sources and filters in memory.
    pub fn full_scan_search(&self, query: &Query) -> Result<Vec<PageHit>> {
        let q = query.normalised()?;
        let text = self.text_pages(&q)?;
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
                    let holds_text = text.as_ref().is_none_or(|t| {
                        keys::split_data_key(&row.key)
                            .is_ok_and(|(_, s)| t.contains(&(table.clone(), s)))
                    });
                    if holds_text && q.matches(&page) {
                        hits.push(PageHit {
                            table: table.clone(),
                            row_key: row.key,
                            page,
                            score: None,
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

    /// The pages the text condition names, by (table, suffix), from the text
    /// index over the whole time range (`None`: no text condition).
    fn text_pages(&self, q: &Query) -> Result<Option<HashSet<(String, keys::Suffix)>>> {
        let Some(tq) = q.text_query()? else {
            return Ok(None);
        };
        let text = self.text_for_query()?;
        let scope = TextScope {
            sources: Vec::new(),
            from: i64::MIN,
            to: i64::MAX,
        };
        let mut set = HashSet::new();
        for hit in text.search(&tq, &scope)? {
            if let Some(t) = chrono::DateTime::from_timestamp(hit.page.time, 0) {
                let table = keys::table_name(&hit.page.source, chrono::Datelike::year(&t))?;
                set.insert((table, keys::suffix(t, &hit.page.hash)));
            }
        }
        Ok(Some(set))
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
                    crate::tables::neardup::story_root(&h.page).to_owned(),
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
