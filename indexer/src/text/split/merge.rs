//! Merging the splits of one (source, month) into one, leaving out the
//! versions of pages that are no longer current.

use std::collections::HashMap;
use std::path::PathBuf;

use tantivy::directory::{MmapDirectory, OwnedBytes};
use tantivy::fastfield::{write_alive_bitset, AliveBitSet};
use tantivy::BitSet;

use super::super::embedded::text_err;
use super::manifest::{split_key, SplitMeta, SPLITS_TABLE};
use super::split_text::SplitText;
use super::state::{note_latest, visit_docs, OpenSplit, State};
use crate::error::{Error, Result};

impl SplitText {
    /// Merges the splits of `group` when there are enough of them. Only the group's
    /// splits are read (a writer does not fetch the whole archive's): every version of a
    /// page is in its own (source, month), so they alone tell which versions are current.
    pub(super) fn maybe_merge(&self, group: &str) -> Result<()> {
        let _merging = self
            .merging
            .lock()
            .map_err(|_| Error::Invalid("the text index's merge lock is poisoned".into()))?;
        let (listed, tombs) = self.manifest()?;
        let metas: Vec<SplitMeta> = listed.into_iter().filter(|m| m.group == group).collect();
        if metas.len() < self.merge_at {
            return Ok(());
        }
        let inputs: Vec<OpenSplit> = metas
            .into_iter()
            .map(|m| self.open_split(m))
            .collect::<Result<Vec<OpenSplit>>>()?
            .into_iter()
            // Segments of one schema only merge together: older splits stay as they are.
            .filter(|s| s.index.schema() == self.schema)
            .collect();
        if inputs.len() < self.merge_at {
            return Ok(());
        }
        let mut latest = HashMap::new();
        for s in &inputs {
            visit_docs(&s.searcher, |page, seq, _| {
                note_latest(&mut latest, page, seq)
            })
            .map_err(|e| text_err(&self.cache, "merge", e))?;
        }
        let st = State {
            latest,
            tombs,
            ..State::default()
        };
        let mut segments = Vec::new();
        let mut alive = Vec::new();
        let (mut from, mut to, mut docs) = (i64::MAX, i64::MIN, 0u64);
        for s in &inputs {
            from = from.min(s.meta.from);
            to = to.max(s.meta.to);
            let segs = s
                .index
                .searchable_segments()
                .map_err(|e| text_err(&self.cache, "merge", e))?;
            // Only the current version of each page goes into the merged split.
            let mut kept: Vec<BitSet> = s
                .searcher
                .segment_readers()
                .iter()
                .map(|r| BitSet::with_max_value(r.max_doc()))
                .collect();
            visit_docs(&s.searcher, |page, seq, (i, doc)| {
                if st.current(&page, seq) {
                    kept[i].insert(doc);
                    docs += 1;
                }
            })
            .map_err(|e| text_err(&self.cache, "merge", e))?;
            for (seg, bits) in segs.into_iter().zip(kept) {
                let mut bytes = Vec::new();
                write_alive_bitset(&bits, &mut bytes)
                    .map_err(|e| text_err(&self.cache, "merge", e))?;
                alive.push(Some(AliveBitSet::open(OwnedBytes::new(bytes))));
                segments.push(seg);
            }
        }
        let source = inputs[0].meta.source.clone();
        let input_paths: Vec<String> = inputs.iter().map(|s| s.meta.path.clone()).collect();
        let input_caches: Vec<PathBuf> = inputs
            .iter()
            .map(|s| self.cache.join(s.meta.cache_name()))
            .collect();
        let settings = inputs[0].index.settings().clone();
        drop(inputs);
        drop(st);
        let tmp = self.temp_dir()?;
        let dir = MmapDirectory::open(&tmp).map_err(|e| text_err(&tmp, "merge", e))?;
        let merged = tantivy::indexer::merge_filtered_segments(&segments, settings, alive, dir)
            .map_err(|e| text_err(&tmp, "merge", e))?;
        drop(merged);
        let meta = SplitMeta {
            path: self.split_path(group, self.next_seq()),
            group: group.to_owned(),
            source,
            from,
            to,
            docs,
        };
        self.store_split(&tmp, &meta)?;
        // The merged split first, then the inputs' rows: a reader in between sees the
        // pages twice and returns them once.
        self.tables.put(SPLITS_TABLE, &[meta.row()])?;
        let keys: Vec<Vec<u8>> = input_paths.iter().map(|p| split_key(p)).collect();
        self.tables.delete(SPLITS_TABLE, &keys)?;
        for p in &input_paths {
            let _ = self.files.delete(p);
        }
        // A writer that never searches would keep them for ever (a process of this
        // machine that has them open keeps reading its mapped files).
        for c in &input_caches {
            let _ = std::fs::remove_dir_all(c);
        }
        Ok(())
    }
}
