//! The [`TextStore`] impl of the split index: a write becomes a split per
//! (source, month), a delete a tombstone row, a search a search of every open
//! split with their statistics together.

use std::collections::{BTreeMap, BTreeSet, HashSet};

use tantivy::Index as TIndex;

use super::super::embedded::{text_err, AllHits, Fields};
use super::super::{TextDoc, TextHit, TextPage, TextQuery, TextScope, TextStore};
use super::files::{SPLIT_FOLDER, UNLISTED_AFTER};
use super::manifest::{SplitMeta, FAMILY, SPLITS_TABLE, TOMBSTONE_ROW};
use super::split_text::SplitText;
use super::state::AllSplits;
use crate::error::{Error, Result};
use crate::store::Row;

/// Memory of a split writer's indexing arena.
const WRITER_ARENA_BYTES: usize = 32 << 20;

impl TextStore for SplitText {
    fn write(&self, docs: &[TextDoc]) -> Result<()> {
        if docs.is_empty() {
            return Ok(());
        }
        // The last version of a page in the batch; pages by (source, month).
        let mut groups: BTreeMap<String, BTreeMap<Vec<u8>, &TextDoc>> = BTreeMap::new();
        for d in docs {
            let group = format!("{}/{}", d.source, d.time.format("%Y-%m"));
            let page = TextPage::of_doc(d);
            groups
                .entry(group)
                .or_default()
                .insert(Fields::pk(&page), d);
        }
        let mut rows = Vec::with_capacity(groups.len());
        for (group, pages) in &groups {
            let seq = self.next_seq();
            let tmp = self.temp_dir()?;
            let index = TIndex::create_in_dir(&tmp, self.schema.clone())
                .map_err(|e| text_err(&tmp, "create split", e))?;
            let mut writer = index
                .writer_with_num_threads(1, WRITER_ARENA_BYTES)
                .map_err(|e| text_err(&tmp, "open split writer", e))?;
            let (mut from, mut to) = (i64::MAX, i64::MIN);
            for d in pages.values() {
                let (_, doc) = self.fields.document(d, seq);
                from = from.min(d.time.timestamp());
                to = to.max(d.time.timestamp() + 1);
                writer
                    .add_document(doc)
                    .map_err(|e| text_err(&tmp, "add page", e))?;
            }
            writer
                .commit()
                .map_err(|e| text_err(&tmp, "commit split", e))?;
            writer
                .wait_merging_threads()
                .map_err(|e| text_err(&tmp, "close split writer", e))?;
            drop(index);
            let meta = SplitMeta {
                path: self.split_path(group, seq),
                group: group.clone(),
                source: pages
                    .values()
                    .next()
                    .map(|d| d.source.clone())
                    .unwrap_or_default(),
                from,
                to,
                docs: pages.len() as u64,
            };
            self.store_split(&tmp, &meta)?;
            rows.push(meta.row());
        }
        // Searchable from here on.
        self.tables.put(SPLITS_TABLE, &rows)?;
        for group in groups.keys() {
            // Merging only saves reading time: a failed merge is tried again at the next
            // write to the group.
            let _ = self.maybe_merge(group);
        }
        Ok(())
    }

    fn delete(&self, pages: &[TextPage]) -> Result<()> {
        if pages.is_empty() {
            return Ok(());
        }
        let seq = self.next_seq();
        let rows: Vec<Row> = pages
            .iter()
            .map(|p| {
                let mut key = vec![TOMBSTONE_ROW];
                key.extend_from_slice(&Fields::pk(p));
                Row::new(key).with(FAMILY, b"seq".to_vec(), seq.to_be_bytes().to_vec())
            })
            .collect();
        self.tables.put(SPLITS_TABLE, &rows)
    }

    fn search(&self, query: &TextQuery, scope: &TextScope) -> Result<Vec<TextHit>> {
        if scope.from >= scope.to {
            return Ok(Vec::new());
        }
        let st = self.refresh()?;
        let q = self.fields.query(query, scope);
        let stats = AllSplits(st.splits.values().map(|s| &s.searcher).collect());
        let sources: BTreeSet<&str> = scope.sources.iter().map(String::as_str).collect();
        let mut seen = HashSet::new();
        let mut out = Vec::new();
        for s in st.splits.values() {
            let m = &s.meta;
            if m.to <= scope.from
                || m.from >= scope.to
                || (!sources.is_empty() && !sources.contains(m.source.as_str()))
            {
                continue;
            }
            let hits = s
                .searcher
                .search_with_statistics_provider(q.as_ref(), &AllHits { scored: true }, &stats)
                .map_err(|e| text_err(&self.cache, "search", e))?;
            for (hit, seq) in hits {
                if st.current(&hit.page, seq) && seen.insert(hit.page.clone()) {
                    out.push(hit);
                }
            }
        }
        Ok(out)
    }

    fn pages(&self, visit: &mut dyn FnMut(TextPage)) -> Result<()> {
        let st = self.refresh()?;
        for (page, &seq) in &st.latest {
            if st.current(page, seq) {
                visit(page.clone());
            }
        }
        Ok(())
    }

    fn len(&self) -> Result<u64> {
        let st = self.refresh()?;
        Ok(st
            .latest
            .iter()
            .filter(|(page, &seq)| st.current(page, seq))
            .count() as u64)
    }

    fn unlisted_files(&self) -> Result<Vec<String>> {
        self.unlisted(UNLISTED_AFTER)
    }

    fn remove_files(&self, files: &[String]) -> Result<()> {
        for f in files {
            if !f.starts_with(SPLIT_FOLDER) {
                return Err(Error::Invalid(format!("{f} is not a text split file")));
            }
            self.files.delete(f)?;
        }
        Ok(())
    }
}
