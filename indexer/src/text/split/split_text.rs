//! The split index itself: opening it, its write sequence, listing the
//! manifest and keeping the open splits current, fetching a split into the
//! local cache and publishing a new one.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasher, Hasher};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use tantivy::schema::Schema;
use tantivy::{Index as TIndex, ReloadPolicy};

use super::super::embedded::{legacy_schema, schema, text_err, Fields};
use super::super::TextPage;
use super::bundle::{bundle, unbundle};
use super::files::{seq_of_file, SplitFiles, SPLIT_FOLDER};
use super::manifest::{page_of_key, SplitMeta, FAMILY, SPLITS_TABLE, SPLIT_ROW, TOMBSTONE_ROW};
use super::state::{note_latest, visit_docs, OpenSplit, State};
use crate::error::{Error, Result};
use crate::store::{Scan, TableStore};

/// Splits of one (source, month) that make the writer merge them.
pub const MERGE_AT: usize = 8;
/// Times a search lists the manifest again when a split it names is gone (merged away
/// between the listing and the fetch).
const REFRESH_TRIES: usize = 3;

/// The text index of the cluster backend.
pub struct SplitText {
    pub(super) tables: Arc<dyn TableStore>,
    pub(super) files: Arc<dyn SplitFiles>,
    pub(super) cache: PathBuf,
    pub(super) schema: Schema,
    pub(super) fields: Fields,
    pub(super) state: Mutex<State>,
    pub(super) last_seq: AtomicU64,
    pub(super) nonce: u32,
    pub(super) merge_at: usize,
    /// Held while merging: one merge at a time in a process.
    pub(super) merging: Mutex<()>,
}

impl std::fmt::Debug for SplitText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SplitText")
            .field("cache", &self.cache)
            .finish_non_exhaustive()
    }
}

impl SplitText {
    /// The split index whose manifest is in `tables`, whose files are in `files`, cached
    /// in the local folder `cache` (made when absent; it may be shared by the processes
    /// of a machine). Creates the manifest table when absent.
    pub fn open(
        tables: Arc<dyn TableStore>,
        files: Arc<dyn SplitFiles>,
        cache: &Path,
    ) -> Result<SplitText> {
        std::fs::create_dir_all(cache).map_err(|e| text_err(cache, "create cache folder", e))?;
        if !tables.list_tables()?.iter().any(|t| t == SPLITS_TABLE) {
            tables.create_table(SPLITS_TABLE, &[FAMILY], 1)?;
        }
        let (schema, fields) = schema(true);
        let nonce = std::collections::hash_map::RandomState::new()
            .build_hasher()
            .finish() as u32
            ^ std::process::id();
        Ok(SplitText {
            tables,
            files,
            cache: cache.to_owned(),
            schema,
            fields,
            state: Mutex::new(State::default()),
            last_seq: AtomicU64::new(0),
            nonce,
            merge_at: MERGE_AT,
            merging: Mutex::new(()),
        })
    }

    /// Files under the split folder that no manifest row names and that were begun more
    /// than `min_age` ago: what a writer killed between a split's file and its row leaves
    /// (a younger one may be a write in progress). Never read; `remove_unlisted` frees them.
    pub fn unlisted(&self, min_age: std::time::Duration) -> Result<Vec<String>> {
        let (listed, _) = self.manifest()?;
        let listed: HashSet<String> = listed.into_iter().map(|m| m.path).collect();
        let now = u64::try_from(chrono::Utc::now().timestamp_micros()).unwrap_or(0);
        let before = now.saturating_sub(u64::try_from(min_age.as_micros()).unwrap_or(u64::MAX));
        let mut out: Vec<String> = self
            .files
            .list(SPLIT_FOLDER)?
            .into_iter()
            .filter(|p| !listed.contains(p))
            .filter(|p| seq_of_file(p).is_some_and(|seq| seq < before))
            .collect();
        out.sort();
        Ok(out)
    }

    /// Merges a (source, month) when it holds `n` splits (tests: small).
    pub fn merge_at(mut self, n: usize) -> SplitText {
        self.merge_at = n.max(2);
        self
    }

    /// The splits published, for `fsck` and tests: (file path, pages in it).
    pub fn splits(&self) -> Result<Vec<(String, u64)>> {
        Ok(self
            .manifest()?
            .0
            .into_iter()
            .map(|m| (m.path, m.docs))
            .collect())
    }

    /// A write sequence later than any this process gave.
    pub(super) fn next_seq(&self) -> u64 {
        let now = u64::try_from(chrono::Utc::now().timestamp_micros()).unwrap_or(0);
        let mut last = self.last_seq.load(Ordering::Relaxed);
        loop {
            let next = now.max(last + 1);
            match self
                .last_seq
                .compare_exchange(last, next, Ordering::SeqCst, Ordering::Relaxed)
            {
                Ok(_) => return next,
                Err(seen) => last = seen,
            }
        }
    }

    fn lock(&self) -> Result<MutexGuard<'_, State>> {
        self.state
            .lock()
            .map_err(|_| Error::Invalid("text split state lock poisoned".into()))
    }

    /// The manifest: splits and deleted pages.
    pub(super) fn manifest(&self) -> Result<(Vec<SplitMeta>, HashMap<TextPage, u64>)> {
        let splits = self
            .tables
            .scan(
                SPLITS_TABLE,
                &Scan::range(vec![SPLIT_ROW], vec![SPLIT_ROW + 1]),
            )?
            .iter()
            .filter_map(SplitMeta::of_row)
            .collect();
        let mut tombs = HashMap::new();
        for row in self.tables.scan(
            SPLITS_TABLE,
            &Scan::range(vec![TOMBSTONE_ROW], vec![TOMBSTONE_ROW + 1]),
        )? {
            let seq = row
                .cell(FAMILY, b"seq")
                .and_then(|v| <[u8; 8]>::try_from(v).ok())
                .map(u64::from_be_bytes);
            if let (Some(page), Some(seq)) = (page_of_key(&row.key[1..]), seq) {
                tombs.insert(page, seq);
            }
        }
        Ok((splits, tombs))
    }

    /// Lists the manifest and opens the splits not yet open (fetching them into the
    /// cache), forgetting those merged away.
    pub(super) fn refresh(&self) -> Result<MutexGuard<'_, State>> {
        let mut tries = 0;
        loop {
            tries += 1;
            let (metas, tombs) = self.manifest()?;
            let mut st = self.lock()?;
            match self.take_up(&mut st, metas) {
                Ok(()) => {
                    st.tombs = tombs;
                    return Ok(st);
                }
                Err(e) if tries >= REFRESH_TRIES => return Err(e),
                Err(_) => continue,
            }
        }
    }

    fn take_up(&self, st: &mut State, metas: Vec<SplitMeta>) -> Result<()> {
        let listed: HashSet<&str> = metas.iter().map(|m| m.path.as_str()).collect();
        let gone: Vec<String> = st
            .splits
            .keys()
            .filter(|p| !listed.contains(p.as_str()))
            .cloned()
            .collect();
        for path in &gone {
            if let Some(s) = st.splits.remove(path) {
                // Merged away: its cached copy is not needed again (a process still
                // reading it keeps its mapped files).
                let _ = std::fs::remove_dir_all(self.cache.join(s.meta.cache_name()));
            }
        }
        // Until this refresh has finished, `latest` is not to be trusted.
        let rebuild = !gone.is_empty() || st.stale;
        st.stale = true;
        for meta in metas {
            if !st.splits.contains_key(&meta.path) {
                let open = self.open_split(meta)?;
                visit_docs(&open.searcher, |page, seq, _| {
                    note_latest(&mut st.latest, page, seq)
                })
                .map_err(|e| text_err(&self.cache, "read split", e))?;
                st.splits.insert(open.meta.path.clone(), open);
            }
        }
        if rebuild {
            st.rebuild_latest()
                .map_err(|e| text_err(&self.cache, "read splits", e))?;
        }
        st.stale = false;
        Ok(())
    }

    /// Opens a split from the cache, fetching it first when it is not there.
    pub(super) fn open_split(&self, meta: SplitMeta) -> Result<OpenSplit> {
        let dir = self.cache.join(meta.cache_name());
        if !dir.join("meta.json").exists() {
            let bytes = self.files.get(&meta.path)?;
            let tmp = self.temp_dir()?;
            unbundle(&bytes, &tmp).map_err(|e| {
                Error::backend(
                    format!("reading the text split {}", meta.path),
                    std::io::Error::new(std::io::ErrorKind::InvalidData, e),
                )
            })?;
            if std::fs::rename(&tmp, &dir).is_err() {
                // Another process of this machine cached it first.
                let _ = std::fs::remove_dir_all(&tmp);
            }
        }
        let index = TIndex::open_in_dir(&dir).map_err(|e| text_err(&dir, "open split", e))?;
        // A split made before the revisit flag was kept is read as it is (its hits are
        // checked against the rows); merges leave it be.
        if index.schema() != self.schema && index.schema() != legacy_schema(true).0 {
            return Err(Error::Invalid(format!(
                "the text split {} has another schema (made by another version of harvest)",
                meta.path
            )));
        }
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()
            .map_err(|e| text_err(&dir, "open split reader", e))?;
        let searcher = reader.searcher();
        Ok(OpenSplit {
            meta,
            index,
            searcher,
        })
    }

    pub(super) fn temp_dir(&self) -> Result<PathBuf> {
        let dir = self.cache.join(format!(
            ".tmp-{}-{:08x}-{}",
            std::process::id(),
            self.nonce,
            self.next_seq()
        ));
        std::fs::create_dir_all(&dir).map_err(|e| text_err(&dir, "create folder", e))?;
        Ok(dir)
    }

    /// Publishes a split made in `dir` (a temporary folder of the cache): its file, then
    /// (by the caller) its manifest row; the folder becomes its cached copy.
    pub(super) fn store_split(&self, dir: &Path, meta: &SplitMeta) -> Result<()> {
        let bytes = bundle(dir).map_err(|e| text_err(dir, "bundle split", e))?;
        self.files.put(&meta.path, &bytes)?;
        let cached = self.cache.join(meta.cache_name());
        if std::fs::rename(dir, &cached).is_err() {
            let _ = std::fs::remove_dir_all(dir);
        }
        Ok(())
    }

    pub(super) fn split_path(&self, group: &str, seq: u64) -> String {
        format!("{SPLIT_FOLDER}/{group}/{seq:016x}-{:08x}.split", self.nonce)
    }
}
