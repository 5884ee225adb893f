//! The text index of the cluster backend: immutable splits on the shared file store.
//!
//! Several crawl processes write and several query servers read, on other machines. Each
//! write (a pipeline batch) becomes, per (source, month of the key time) of its pages, one
//! small tantivy index, its files bundled into one file (a *split*) and written to the
//! shared file store (HDFS, beside the packs: `_text/{source}/{yyyy-mm}/{seq}-{nonce}.split`).
//! Once the file is durable, a row naming it is put in the manifest table
//! ([`SPLITS_TABLE`], HBase): the split is searchable from then on, before the batch's page
//! rows are written, as the embedded index's commit is. A reader lists the manifest on
//! every search (one small scan), fetches the splits it has not seen into its local cache
//! folder and opens them there (mmap), as Quickwit keeps tantivy splits on object storage.
//!
//! Nothing is changed in place. Every document carries the write sequence (`seq`, the
//! writer's clock in microseconds, strictly increasing in a process) of its split: a page
//! written again (a re-extraction, a replaced page) is current in its newest split only,
//! and a deleted page gets a tombstone row with the sequence of its deletion, which hides
//! every older version (Quickwit's delete opstamps). When a (source, month) holds
//! [`MERGE_AT`] splits, the writer that made the last one merges them into one, leaving
//! out the versions that are no longer current, publishes it, then removes the inputs'
//! rows and files. Two writers merging the same group at once publish the same pages
//! twice: a search returns a page once, its BM25 statistics count it twice until the
//! next merge.
//!
//! Relevance is the same as the embedded index's: BM25 with the statistics of every
//! split together ([`Bm25StatisticsProvider`]), not of each split alone.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::hash::{BuildHasher, Hasher};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use tantivy::directory::{MmapDirectory, OwnedBytes};
use tantivy::fastfield::{write_alive_bitset, AliveBitSet};
use tantivy::query::Bm25StatisticsProvider;
use tantivy::schema::{Field, Schema};
use tantivy::{BitSet, Index as TIndex, ReloadPolicy, Searcher, Term as TTerm};

use super::embedded::{legacy_schema, schema, text_err, AllHits, Fields, PageColumns};
use super::{TextDoc, TextHit, TextPage, TextQuery, TextScope, TextStore};
use crate::error::{Error, Result};
use crate::store::{Cell, Row, Scan, TableStore};

/// The manifest table: a row per published split, a row per deleted page.
pub const SPLITS_TABLE: &str = "textsplits";
/// The folder of the split files in the file store (beside the packs' topic folders;
/// a topic is never named with a leading `_`).
pub const SPLIT_FOLDER: &str = "_text";
/// Its one column family.
const FAMILY: &str = "s";
/// Key prefix of a split's row (then its file path).
const SPLIT_ROW: u8 = b's';
/// Key prefix of a deleted page's row (then the page's key).
const TOMBSTONE_ROW: u8 = b'd';
/// How old a file no manifest row names must be to count as left by a killed writer
/// (a write in progress takes seconds).
pub const UNLISTED_AFTER: std::time::Duration = std::time::Duration::from_secs(3_600);
/// Splits of one (source, month) that make the writer merge them.
pub const MERGE_AT: usize = 8;
/// First bytes of a split file.
const MAGIC: &[u8; 8] = b"HVSPLIT1";
/// Memory of a split writer's indexing arena.
const WRITER_ARENA_BYTES: usize = 32 << 20;
/// Times a search lists the manifest again when a split it names is gone (merged away
/// between the listing and the fetch).
const REFRESH_TRIES: usize = 3;

/// Where split files are kept: the shared file store.
pub trait SplitFiles: Send + Sync {
    /// Writes a whole new file, durable when this returns.
    fn put(&self, path: &str, bytes: &[u8]) -> Result<()>;
    /// Reads a whole file.
    fn get(&self, path: &str) -> Result<Vec<u8>>;
    /// Removes a file (a missing file is no error).
    fn delete(&self, path: &str) -> Result<()>;
    /// The paths of the files under the folder `prefix` (none when it does not exist).
    fn list(&self, prefix: &str) -> Result<Vec<String>>;
}

/// Split files in a local folder (one machine; tests).
#[derive(Debug, Clone)]
pub struct FolderFiles {
    root: PathBuf,
}

impl FolderFiles {
    /// Files under `root`.
    pub fn new(root: &Path) -> FolderFiles {
        FolderFiles {
            root: root.to_owned(),
        }
    }
}

impl SplitFiles for FolderFiles {
    fn put(&self, path: &str, bytes: &[u8]) -> Result<()> {
        use std::io::Write;
        let full = self.root.join(path);
        let parent = full.parent().unwrap_or(&self.root);
        std::fs::create_dir_all(parent).map_err(|e| text_err(parent, "create folder", e))?;
        let part = full.with_extension("part");
        let mut f = std::fs::File::create(&part).map_err(|e| text_err(&part, "create", e))?;
        f.write_all(bytes)
            .and_then(|()| f.sync_all())
            .map_err(|e| text_err(&part, "write", e))?;
        std::fs::rename(&part, &full).map_err(|e| text_err(&full, "rename", e))
    }

    fn get(&self, path: &str) -> Result<Vec<u8>> {
        let full = self.root.join(path);
        std::fs::read(&full).map_err(|e| text_err(&full, "read", e))
    }

    fn delete(&self, path: &str) -> Result<()> {
        let full = self.root.join(path);
        match std::fs::remove_file(&full) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(text_err(&full, "remove", e)),
            _ => Ok(()),
        }
    }

    fn list(&self, prefix: &str) -> Result<Vec<String>> {
        fn walk(dir: &Path, rel: &str, out: &mut Vec<String>) -> std::io::Result<()> {
            let entries = match std::fs::read_dir(dir) {
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
                other => other?,
            };
            for entry in entries {
                let entry = entry?;
                let name = entry.file_name().to_string_lossy().into_owned();
                let path = format!("{rel}/{name}");
                if entry.file_type()?.is_dir() {
                    walk(&entry.path(), &path, out)?;
                } else {
                    out.push(path);
                }
            }
            Ok(())
        }
        let mut out = Vec::new();
        let root = self.root.join(prefix);
        walk(&root, prefix.trim_end_matches('/'), &mut out)
            .map_err(|e| text_err(&root, "list", e))?;
        Ok(out)
    }
}

/// The writer's clock (µs since the epoch) in a split file's name (`{seq:016x}-{nonce}…`).
fn seq_of_file(path: &str) -> Option<u64> {
    let name = path.rsplit('/').next()?;
    u64::from_str_radix(name.get(..16)?, 16).ok()
}

/// A split as its manifest row names it.
#[derive(Debug, Clone, PartialEq)]
struct SplitMeta {
    /// Path of its file in the file store.
    path: String,
    /// `{source}/{yyyy-mm}`: the splits merged together.
    group: String,
    source: String,
    /// Key times of its pages: `[from, to)`.
    from: i64,
    to: i64,
    docs: u64,
}

impl SplitMeta {
    fn row(&self) -> Row {
        let mut row = Row::new(split_key(&self.path));
        for (q, v) in [
            ("group", self.group.as_bytes().to_vec()),
            ("source", self.source.as_bytes().to_vec()),
            ("from", self.from.to_be_bytes().to_vec()),
            ("to", self.to.to_be_bytes().to_vec()),
            ("docs", self.docs.to_be_bytes().to_vec()),
        ] {
            row.cells.push(Cell::new(FAMILY, q, v));
        }
        row
    }

    fn of_row(row: &Row) -> Option<SplitMeta> {
        let text = |q: &str| String::from_utf8(row.cell(FAMILY, q.as_bytes())?.to_vec()).ok();
        let int = |q: &str| -> Option<[u8; 8]> { row.cell(FAMILY, q.as_bytes())?.try_into().ok() };
        Some(SplitMeta {
            path: String::from_utf8(row.key.get(1..)?.to_vec()).ok()?,
            group: text("group")?,
            source: text("source")?,
            from: i64::from_be_bytes(int("from")?),
            to: i64::from_be_bytes(int("to")?),
            docs: u64::from_be_bytes(int("docs")?),
        })
    }

    /// Its folder in the local cache.
    fn cache_name(&self) -> String {
        self.path
            .trim_end_matches(".split")
            .replace('/', "~")
            .to_string()
    }
}

/// A split opened from the local cache.
struct OpenSplit {
    meta: SplitMeta,
    index: TIndex,
    searcher: Searcher,
}

/// What a reader knows of the manifest.
#[derive(Default)]
struct State {
    splits: BTreeMap<String, OpenSplit>,
    /// The newest write sequence of each page in any split.
    latest: HashMap<TextPage, u64>,
    /// Deleted pages, with the sequence of their deletion.
    tombs: HashMap<TextPage, u64>,
    /// `latest` may name pages of splits no longer open (a refresh failed part-way):
    /// it is made anew at the next refresh.
    stale: bool,
}

impl State {
    /// Whether the version of `page` written at `seq` is the one that counts.
    fn current(&self, page: &TextPage, seq: u64) -> bool {
        self.latest.get(page) == Some(&seq) && self.tombs.get(page).is_none_or(|&t| t < seq)
    }

    fn rebuild_latest(&mut self) -> tantivy::Result<()> {
        let mut latest = HashMap::new();
        for s in self.splits.values() {
            visit_docs(&s.searcher, |page, seq, _| {
                note_latest(&mut latest, page, seq)
            })?;
        }
        self.latest = latest;
        Ok(())
    }
}

fn note_latest(latest: &mut HashMap<TextPage, u64>, page: TextPage, seq: u64) {
    let slot = latest.entry(page).or_insert(seq);
    if *slot < seq {
        *slot = seq;
    }
}

/// Every document of a split: its page, write sequence and (segment, doc id).
fn visit_docs(
    searcher: &Searcher,
    mut visit: impl FnMut(TextPage, u64, (usize, u32)),
) -> tantivy::Result<()> {
    for (i, reader) in searcher.segment_readers().iter().enumerate() {
        let mut cols = PageColumns::open(reader)?;
        for doc in reader.doc_ids_alive() {
            if let Some(page) = cols.page(doc) {
                visit(page, cols.seq(doc), (i, doc));
            }
        }
    }
    Ok(())
}

/// BM25 statistics of every split together.
struct AllSplits<'a>(Vec<&'a Searcher>);

impl Bm25StatisticsProvider for AllSplits<'_> {
    fn total_num_tokens(&self, field: Field) -> tantivy::Result<u64> {
        let mut n = 0;
        for s in &self.0 {
            n += s.total_num_tokens(field)?;
        }
        Ok(n)
    }

    fn total_num_docs(&self) -> tantivy::Result<u64> {
        let mut n = 0;
        for s in &self.0 {
            n += Bm25StatisticsProvider::total_num_docs(*s)?;
        }
        Ok(n)
    }

    fn doc_freq(&self, term: &TTerm) -> tantivy::Result<u64> {
        let mut n = 0;
        for s in &self.0 {
            n += s.doc_freq(term)?;
        }
        Ok(n)
    }
}

/// The text index of the cluster backend.
pub struct SplitText {
    tables: Arc<dyn TableStore>,
    files: Arc<dyn SplitFiles>,
    cache: PathBuf,
    schema: Schema,
    fields: Fields,
    state: Mutex<State>,
    last_seq: AtomicU64,
    nonce: u32,
    merge_at: usize,
    /// Held while merging: one merge at a time in a process.
    merging: Mutex<()>,
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
    fn next_seq(&self) -> u64 {
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
    fn manifest(&self) -> Result<(Vec<SplitMeta>, HashMap<TextPage, u64>)> {
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
    fn refresh(&self) -> Result<MutexGuard<'_, State>> {
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
    fn open_split(&self, meta: SplitMeta) -> Result<OpenSplit> {
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

    fn temp_dir(&self) -> Result<PathBuf> {
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
    fn store_split(&self, dir: &Path, meta: &SplitMeta) -> Result<()> {
        let bytes = bundle(dir).map_err(|e| text_err(dir, "bundle split", e))?;
        self.files.put(&meta.path, &bytes)?;
        let cached = self.cache.join(meta.cache_name());
        if std::fs::rename(dir, &cached).is_err() {
            let _ = std::fs::remove_dir_all(dir);
        }
        Ok(())
    }

    fn split_path(&self, group: &str, seq: u64) -> String {
        format!("{SPLIT_FOLDER}/{group}/{seq:016x}-{:08x}.split", self.nonce)
    }

    /// Merges the splits of `group` when there are enough of them. Only the group's
    /// splits are read (a writer does not fetch the whole archive's): every version of a
    /// page is in its own (source, month), so they alone tell which versions are current.
    fn maybe_merge(&self, group: &str) -> Result<()> {
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

/// The manifest row key of the split file at `path`.
fn split_key(path: &str) -> Vec<u8> {
    let mut key = vec![SPLIT_ROW];
    key.extend_from_slice(path.as_bytes());
    key
}

/// The page a page key names ([`Fields::pk`]).
fn page_of_key(key: &[u8]) -> Option<TextPage> {
    TextPage::from_key(key)
}

/// The files of a tantivy index folder in one buffer: the magic, the number of files,
/// then each file's name (u32 length first) and bytes (u64 length first).
fn bundle(dir: &Path) -> std::io::Result<Vec<u8>> {
    let mut names: Vec<String> = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if entry.file_type()?.is_file() && !name.ends_with(".lock") {
            names.push(name);
        }
    }
    names.sort();
    let mut out = MAGIC.to_vec();
    out.extend_from_slice(&(names.len() as u32).to_be_bytes());
    for name in names {
        let bytes = std::fs::read(dir.join(&name))?;
        out.extend_from_slice(&(name.len() as u32).to_be_bytes());
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(&(bytes.len() as u64).to_be_bytes());
        out.extend_from_slice(&bytes);
    }
    Ok(out)
}

/// Writes the files of a [`bundle`] into `dir`.
fn unbundle(bytes: &[u8], dir: &Path) -> std::result::Result<(), String> {
    let mut at = 0usize;
    let mut take = |n: usize| -> std::result::Result<&[u8], String> {
        let end = at.checked_add(n).filter(|&e| e <= bytes.len());
        let end = end.ok_or_else(|| format!("truncated at byte {at}"))?;
        let s = &bytes[at..end];
        at = end;
        Ok(s)
    };
    if take(MAGIC.len())? != MAGIC {
        return Err("not a text split".into());
    }
    let count = u32::from_be_bytes(take(4)?.try_into().map_err(|_| "count")?);
    for _ in 0..count {
        let len = u32::from_be_bytes(take(4)?.try_into().map_err(|_| "name length")?);
        let name = std::str::from_utf8(take(len as usize)?).map_err(|_| "file name")?;
        if name.is_empty() || name.contains(['/', '\\']) || name.starts_with("..") {
            return Err(format!("bad file name {name:?}"));
        }
        let name = name.to_owned();
        let len = u64::from_be_bytes(take(8)?.try_into().map_err(|_| "file length")?);
        let data = take(usize::try_from(len).map_err(|_| "file length")?)?;
        std::fs::write(dir.join(&name), data).map_err(|e| format!("{name}: {e}"))?;
    }
    Ok(())
}

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

#[cfg(test)]
mod tests {
    use super::super::embedded::tests::{
        doc, revisit_flags_on, scope, urls, words_phrases_scope_replace_and_delete_on,
    };
    use super::*;
    use crate::EmbeddedStore;

    struct Place {
        _dir: tempfile::TempDir,
        tables: Arc<dyn TableStore>,
        files: Arc<FolderFiles>,
        root: PathBuf,
    }

    fn place() -> Place {
        let dir = tempfile::tempdir().unwrap();
        let tables: Arc<dyn TableStore> =
            Arc::new(EmbeddedStore::open(dir.path().join("tables")).unwrap());
        let files = Arc::new(FolderFiles::new(&dir.path().join("files")));
        Place {
            root: dir.path().to_owned(),
            _dir: dir,
            tables,
            files,
        }
    }

    /// A reader or writer of the place with a cache of its own.
    fn open(p: &Place, cache: &str) -> SplitText {
        SplitText::open(p.tables.clone(), p.files.clone(), &p.root.join(cache)).unwrap()
    }

    #[test]
    fn split_hits_carry_the_revisit_flag() {
        let p = place();
        revisit_flags_on(&open(&p, "cache"));
    }

    #[test]
    fn words_phrases_scope_replace_and_delete_in_splits() {
        let p = place();
        let n = AtomicU64::new(0);
        // Every opening with an empty cache: what it finds, it fetched from the files.
        words_phrases_scope_replace_and_delete_on(&|| {
            let k = n.fetch_add(1, Ordering::SeqCst);
            Box::new(open(&p, &format!("cache{k}")))
        });
    }

    /// The file store of a place, noting the files read.
    struct Counting {
        inner: Arc<FolderFiles>,
        read: Mutex<Vec<String>>,
    }

    impl SplitFiles for Counting {
        fn put(&self, path: &str, bytes: &[u8]) -> Result<()> {
            self.inner.put(path, bytes)
        }
        fn get(&self, path: &str) -> Result<Vec<u8>> {
            self.read.lock().unwrap().push(path.to_owned());
            self.inner.get(path)
        }
        fn delete(&self, path: &str) -> Result<()> {
            self.inner.delete(path)
        }
        fn list(&self, prefix: &str) -> Result<Vec<String>> {
            self.inner.list(prefix)
        }
    }

    #[test]
    fn a_merge_reads_only_its_month_and_leaves_no_stale_cache() {
        let p = place();
        let first = open(&p, "first");
        let write = |w: &SplitText, source: &str, i: i64| {
            let url = format!("http://{source}/{i}");
            w.write(&[doc(source, 100 + i, &url, "Harbour", "ships arrived")])
                .unwrap();
        };
        // Another writer made splits of two sources (no merge yet at 8).
        for i in 0..3 {
            write(&first, "a", i);
            write(&first, "b", i);
        }
        let counting = Arc::new(Counting {
            inner: p.files.clone(),
            read: Mutex::new(Vec::new()),
        });
        let cache = p.root.join("second");
        let second = SplitText::open(p.tables.clone(), counting.clone(), &cache)
            .unwrap()
            .merge_at(4);
        write(&second, "b", 3);
        let read = counting.read.lock().unwrap().clone();
        assert_eq!(read.len(), 3, "{read:?}");
        assert!(read.iter().all(|r| r.starts_with("_text/b/")), "{read:?}");
        let listed = second.splits().unwrap();
        assert_eq!(listed.len(), 4, "3 of a, 1 merged of b: {listed:?}");
        // Only the merged split is left in the writer's cache.
        let cached = std::fs::read_dir(&cache)
            .unwrap()
            .filter(|e| e.as_ref().unwrap().path().join("meta.json").exists())
            .count();
        assert_eq!(cached, 1);
        let all = scope(0, 10_000_000);
        assert_eq!(urls(&second, "ships", &all).len(), 7);
    }

    #[test]
    fn files_a_killed_writer_left_are_found_once_old_and_removed() {
        let p = place();
        let w = open(&p, "w");
        w.write(&[doc("a", 100, "http://a/1", "Harbour", "ships")])
            .unwrap();
        let now = u64::try_from(chrono::Utc::now().timestamp_micros()).unwrap();
        let old = now - 2 * 3_600 * 1_000_000;
        let left = [
            format!("{SPLIT_FOLDER}/a/1970-01/{old:016x}-00000001.split"),
            format!("{SPLIT_FOLDER}/a/1970-01/{old:016x}-00000002.part"),
        ];
        let young = format!("{SPLIT_FOLDER}/a/1970-01/{now:016x}-00000003.split");
        for f in left.iter().chain([&young]) {
            p.files.put(f, b"HVSPLIT1 torn").unwrap();
        }
        let found = w.unlisted_files().unwrap();
        assert_eq!(
            found,
            left.to_vec(),
            "the listed split and the young file stay"
        );
        w.remove_files(&found).unwrap();
        assert!(w.unlisted_files().unwrap().is_empty());
        assert_eq!(
            p.files.list(SPLIT_FOLDER).unwrap().len(),
            2,
            "listed + young"
        );
        assert!(w.remove_files(&["packs/x.warc.gz".into()]).is_err());
        let all = scope(0, 10_000_000);
        assert_eq!(urls(&open(&p, "r"), "ships", &all).len(), 1);
    }

    #[test]
    fn a_writer_merges_a_month_and_readers_follow() {
        let p = place();
        let writer = open(&p, "w").merge_at(3);
        let reader = open(&p, "r");
        let all = scope(0, 10_000_000);
        let h = |u: &str| crate::keys::url_hash(u);
        // Five batches of one month: merged at the third, then two more.
        for i in 0..5 {
            writer
                .write(&[doc(
                    "a",
                    100 + i,
                    &format!("http://x/{i}"),
                    "Harbour news",
                    &format!("ships arrived number{i}"),
                )])
                .unwrap();
        }
        // A page written again and a page deleted: the merge keeps only what counts.
        writer
            .write(&[doc("a", 100, "http://x/0", "Harbour news", "planes left")])
            .unwrap();
        let deleted = TextPage {
            source: Arc::from("a"),
            time: 101,
            hash: h("http://x/1"),
        };
        writer.delete(std::slice::from_ref(&deleted)).unwrap();
        assert_eq!(urls(&reader, "ships", &all).len(), 3, "x/2, x/3, x/4");
        assert_eq!(urls(&reader, "planes", &all), vec![h("http://x/0")]);
        assert_eq!(reader.len().unwrap(), 4);
        // Three more writes: a second merge, of the first merge and the rest.
        for i in 5..8 {
            writer
                .write(&[doc(
                    "a",
                    100 + i,
                    &format!("http://x/{i}"),
                    "Harbour",
                    "ships",
                )])
                .unwrap();
        }
        let splits = reader.splits().unwrap();
        assert!(splits.len() < 4, "merged: {splits:?}");
        let total: u64 = splits.iter().map(|(_, n)| n).sum();
        assert_eq!(
            total, 7,
            "superseded and deleted versions left out: {splits:?}"
        );
        assert_eq!(urls(&reader, "ships", &all).len(), 6);
        assert_eq!(reader.len().unwrap(), 7);
        // Merged-away files are gone from the store and from the reader's cache.
        let on_disk = walk(&p.root.join("files"));
        assert_eq!(on_disk.len(), splits.len(), "{on_disk:?}");
        let cached = std::fs::read_dir(p.root.join("r")).unwrap().count();
        assert_eq!(cached, splits.len());
        // Another month is another split, outside a scope of the first month.
        writer
            .write(&[doc("a", 40 * 86_400, "http://y/1", "Port", "ships")])
            .unwrap();
        assert_eq!(urls(&reader, "ships", &all).len(), 7);
        assert_eq!(urls(&reader, "ships", &scope(0, 86_400)).len(), 6);
    }

    fn walk(dir: &Path) -> Vec<PathBuf> {
        let mut out = Vec::new();
        for e in std::fs::read_dir(dir).unwrap() {
            let path = e.unwrap().path();
            if path.is_dir() {
                out.extend(walk(&path));
            } else {
                out.push(path);
            }
        }
        out
    }

    #[test]
    fn scores_are_those_of_one_index_of_every_split() {
        let p = place();
        let splits = open(&p, "w");
        let dir = tempfile::tempdir().unwrap();
        let one = super::super::embedded::EmbeddedText::open(dir.path()).unwrap();
        let docs: Vec<TextDoc> = (0..30)
            .map(|i| {
                let body = format!(
                    "{} harbour {}",
                    "ships ".repeat(i % 5 + 1),
                    "news ".repeat(i % 3)
                );
                doc(
                    ["a", "b"][i % 2],
                    1_000 * i as i64,
                    &format!("http://z/{i}"),
                    "T",
                    &body,
                )
            })
            .collect();
        for chunk in docs.chunks(7) {
            splits.write(chunk).unwrap();
            one.write(chunk).unwrap();
        }
        for q in [
            "ships",
            "ships news",
            "harbour OR news",
            "\"ships harbour\"",
        ] {
            let q = TextQuery::parse(q).unwrap();
            let by_page = |store: &dyn TextStore| -> Vec<(TextPage, u32)> {
                let mut v: Vec<_> = store
                    .search(&q, &scope(0, 1_000_000))
                    .unwrap()
                    .into_iter()
                    .map(|h| (h.page, h.score.to_bits()))
                    .collect();
                v.sort_by_key(|a| (a.0.time, a.0.hash));
                v
            };
            let a = by_page(&splits);
            assert!(!a.is_empty());
            assert_eq!(a, by_page(&one), "{q:?}");
        }
    }

    #[test]
    fn a_refresh_that_fails_part_way_misses_nothing_once_it_succeeds() {
        let p = place();
        let w = open(&p, "w");
        w.write(&[doc("a", 1, "http://x/1", "T", "words")]).unwrap();
        w.write(&[doc("a", 2, "http://x/2", "T", "words")]).unwrap();
        let mut files = walk(&p.root.join("files"));
        files.sort();
        let last = files.last().unwrap().clone();
        let good = std::fs::read(&last).unwrap();
        std::fs::write(&last, b"HVSPLIT1").unwrap();
        let r = open(&p, "r");
        let q = TextQuery::parse("words").unwrap();
        assert!(r.search(&q, &scope(0, 10)).is_err());
        std::fs::write(&last, good).unwrap();
        assert_eq!(r.search(&q, &scope(0, 10)).unwrap().len(), 2);
        assert_eq!(r.len().unwrap(), 2);
    }

    #[test]
    fn a_damaged_split_file_is_an_error_naming_it() {
        let p = place();
        open(&p, "w")
            .write(&[doc("a", 1, "http://x/1", "T", "words")])
            .unwrap();
        let files = walk(&p.root.join("files"));
        std::fs::write(&files[0], b"HVSPLIT1\0\0\0\x09").unwrap();
        let err = open(&p, "r")
            .search(&TextQuery::parse("words").unwrap(), &scope(0, 10))
            .unwrap_err()
            .to_string();
        assert!(err.contains(".split"), "{err}");
        assert!(err.contains("truncated"), "{err}");
    }
}
