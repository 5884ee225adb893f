//! The [`Index`] facade: writes page rows with their local index rows, and
//! the `urls` and `digests` tables.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, Mutex};

use chrono::{DateTime, Utc};

use crate::error::{Error, Result};
use crate::keys::{self, ATTR_KEYWORD, ATTR_MEDIA, ATTR_TOPIC};
use crate::record::{DigestEntry, PageRecord, UrlState, FAMILY_ATTRS, FAMILY_INDEX, PAGE_FAMILIES};
use crate::store::{Cell, Row, Scan, TableStore};
pub use crate::tables::{CLUSTERS_TABLE, DIGESTS_TABLE, URLS_TABLE};
use crate::text::{TextPage, TextStore};

/// Bit in an index row's value: the page is a revisit.
pub const FLAG_REVISIT: u8 = 0x01;
/// Bit in an index row's value: the page nearly duplicates another
/// (`near_duplicate_of` is set); valid only with [`FLAG_EXT`].
pub const FLAG_NEAR_DUP: u8 = 0x02;
/// Bit in an index row's value: 8 big-endian bytes of the comment count
/// follow the flags byte; valid only with [`FLAG_EXT`].
pub const FLAG_COMMENTS: u8 = 0x04;
/// Bit in an index row's value: the page's topic (and media) follow the
/// comment count: `[topic length u8][topic][media]`; valid only with [`FLAG_EXT`].
pub const FLAG_ATTRS: u8 = 0x08;
/// Bit in an index row's value: the page has a media value (the bytes after
/// the topic); valid only with [`FLAG_ATTRS`].
pub const FLAG_MEDIA: u8 = 0x10;
/// Bit in an index row's value: 8 bytes of the url-hash of the page's story
/// root (the page it nearly duplicates) follow the comment count; set with
/// [`FLAG_NEAR_DUP`] (a page without it is the first page of its own story).
/// Values written before it have [`FLAG_NEAR_DUP`] alone; statistics by
/// story then read the data row.
pub const FLAG_STORY: u8 = 0x20;
/// Bit in an index row's value: the value carries [`FLAG_NEAR_DUP`],
/// [`FLAG_COMMENTS`] and [`FLAG_ATTRS`] (of a value without it, a legacy
/// value or one that does not decode, only [`FLAG_REVISIT`] is read;
/// queries then read the data row to decide).
pub const FLAG_EXT: u8 = 0x80;

/// Value of every index row of a page: `[flags]`, then with
/// [`FLAG_COMMENTS`] the comment count (u64 big-endian), then with
/// [`FLAG_STORY`] the story root's url-hash (8 bytes), then with
/// [`FLAG_ATTRS`] `[topic length u8][topic][media]`. Lets the query engine
/// decide revisit, near-duplicate, comment, topic and media conditions (and
/// group by topic or media) from any one index row, without data rows.
pub fn index_row_value(page: &PageRecord) -> Vec<u8> {
    let mut flags = FLAG_EXT;
    if page.revisit {
        flags |= FLAG_REVISIT;
    }
    if page.near_duplicate_of.is_some() {
        flags |= FLAG_NEAR_DUP;
    }
    let media = page.media.as_deref().map(str::as_bytes);
    let mut v = Vec::with_capacity(10 + page.topic.len() + media.map_or(0, <[u8]>::len));
    v.push(flags);
    if let Some(c) = page.comments {
        v[0] |= FLAG_COMMENTS;
        v.extend_from_slice(&c.to_be_bytes());
    }
    if let Some(root) = &page.near_duplicate_of {
        v[0] |= FLAG_STORY;
        v.extend_from_slice(&keys::url_hash(root));
    }
    if let Ok(len) = u8::try_from(page.topic.len()) {
        v[0] |= FLAG_ATTRS;
        v.push(len);
        v.extend_from_slice(page.topic.as_bytes());
        if let Some(m) = media {
            v[0] |= FLAG_MEDIA;
            v.extend_from_slice(m);
        }
    }
    v
}

/// An index row's value, decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct IndexValue<'a> {
    /// `FLAG_*` bits (only [`FLAG_REVISIT`] for legacy values).
    pub flags: u8,
    /// Comment count, when recorded.
    pub comments: Option<u64>,
    /// Topic, when recorded ([`FLAG_ATTRS`]).
    pub topic: Option<&'a [u8]>,
    /// Media, when recorded and present ([`FLAG_MEDIA`]).
    pub media: Option<&'a [u8]>,
    /// Url-hash of the story root of a near-duplicate ([`FLAG_STORY`]).
    pub story: Option<[u8; keys::URL_HASH_LEN]>,
}

/// Decodes an index row's value; a value too short for its flags is treated
/// as a legacy (flags-only) value.
pub fn decode_index_value(v: &[u8]) -> IndexValue<'_> {
    let legacy = |flags: u8| IndexValue {
        flags: flags & FLAG_REVISIT,
        ..IndexValue::default()
    };
    let Some((&flags, mut rest)) = v.split_first() else {
        return IndexValue::default();
    };
    if flags & FLAG_EXT == 0 {
        return legacy(flags);
    }
    let mut out = IndexValue {
        flags,
        ..IndexValue::default()
    };
    if flags & FLAG_COMMENTS != 0 {
        let Some((c, tail)) = rest.split_first_chunk::<8>() else {
            return legacy(flags);
        };
        out.comments = Some(u64::from_be_bytes(*c));
        rest = tail;
    }
    if flags & FLAG_STORY != 0 {
        let Some((h, tail)) = rest.split_first_chunk::<{ keys::URL_HASH_LEN }>() else {
            return legacy(flags);
        };
        out.story = Some(*h);
        rest = tail;
    }
    if flags & FLAG_ATTRS != 0 {
        let Some((&len, tail)) = rest.split_first() else {
            return legacy(flags);
        };
        let Some((topic, media)) = tail.split_at_checked(usize::from(len)) else {
            return legacy(flags);
        };
        out.topic = Some(topic);
        out.media = (flags & FLAG_MEDIA != 0).then_some(media);
    }
    out
}

/// Options of an [`Index`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IndexOptions {
    /// Salt buckets (regions) per page table, 1..=255. Default 16.
    pub buckets: u8,
}

impl Default for IndexOptions {
    fn default() -> Self {
        IndexOptions {
            buckets: keys::DEFAULT_BUCKETS,
        }
    }
}

/// Where a page is stored.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PageKey {
    /// Table `{source}_{yyyy}`.
    pub table: String,
    /// Data-row key.
    pub row_key: Vec<u8>,
}

/// The harvest index over any [`TableStore`].
pub struct Index {
    pub(crate) store: Arc<dyn TableStore>,
    /// The store itself, also in a view over another store ([`Index::with_store`]):
    /// what is written at once even in a recorded batch (text marks, [`crate::tables::textmark`]).
    pub(crate) direct: Arc<dyn TableStore>,
    pub(crate) options: IndexOptions,
    known_tables: Mutex<HashMap<String, KnownTable>>,
    /// One lock a page table, held while this index (or a view of it)
    /// creates and marks the table: a creation in flight (a table prepared
    /// ahead, [`Index::prepare_page_tables`]) is waited for, not raced.
    table_locks: TableLocks,
    /// The text index, when this index has one ([`Index::with_text`]).
    pub(crate) text: Option<Arc<dyn TextStore>>,
}

type TableLocks = Arc<Mutex<HashMap<String, Arc<Mutex<()>>>>>;

/// The stored rows some pages would replace ([`Index::stored_page_entries`]).
#[derive(Debug, Default)]
pub struct StoredPageEntries {
    rows: HashMap<(String, Vec<u8>), Row>,
}

/// What an [`Index`] learnt about a page table whose format it checked.
#[derive(Debug, Clone, Copy)]
struct KnownTable {
    /// `ensure_table` ran for it (created, format marker written if empty);
    /// otherwise the format was only checked (a table still empty may get
    /// its marker later: re-checked before this index writes).
    ensured: bool,
}

/// Qualifier (family `a`) of the format marker row's cell.
const FORMAT_QUALIFIER: &[u8] = b"format";
/// Value of the format marker of a postings table.
const FORMAT_POSTINGS: &[u8] = b"postings-1";

impl std::fmt::Debug for Index {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Index")
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

/// Rows derived from one page.
struct PageRows {
    key: PageKey,
    data: Row,
    /// The page's index keys (listed in its data row's family `i`).
    index_keys: BTreeSet<Vec<u8>>,
    /// Posting row of each index entry (the cell qualifier is the suffix).
    postings: Vec<Vec<u8>>,
    suffix: keys::Suffix,
    value: Vec<u8>,
}

impl PageRows {
    /// Adds this page's posting cells to `rows` (one row per posting key).
    fn add_postings(&self, rows: &mut BTreeMap<Vec<u8>, Row>) {
        for p in &self.postings {
            rows.entry(p.clone())
                .or_insert_with(|| Row::new(p.clone()))
                .cells
                .push(Cell::new(FAMILY_INDEX, self.suffix, self.value.clone()));
        }
    }
}

impl Index {
    /// Wraps a store; creates the index's fixed tables (`urls`, `digests`,
    /// ..., the crawl state's `frontier` and `runs`) if needed.
    pub fn new(store: Arc<dyn TableStore>, options: IndexOptions) -> Result<Self> {
        if options.buckets == 0 {
            return Err(Error::Invalid(
                "IndexOptions.buckets must be at least 1".into(),
            ));
        }
        let tables = crate::tables::SHARED_TABLES;
        let tables: Vec<(&str, &[&str], u8)> = tables
            .iter()
            .map(|&(name, buckets)| (name, &[FAMILY_ATTRS][..], buckets))
            .collect();
        crate::store::create_tables(store.as_ref(), &tables)?;
        Ok(Index {
            direct: store.clone(),
            store,
            options,
            known_tables: Mutex::new(HashMap::new()),
            table_locks: Arc::default(),
            text: None,
        })
    }

    /// This index with a text index: pages are written to it
    /// ([`Index::index_texts`]) and queries with a text condition are answered.
    pub fn with_text(mut self, text: Arc<dyn TextStore>) -> Index {
        self.text = Some(text);
        self
    }

    /// The text index, if any.
    pub fn text(&self) -> Option<&Arc<dyn TextStore>> {
        self.text.as_ref()
    }

    /// The text index, which a text condition needs.
    pub(crate) fn text_for_query(&self) -> Result<&Arc<dyn TextStore>> {
        self.text.as_ref().ok_or_else(|| {
            Error::Invalid(
                "a text condition (text, keyword or any) needs a text index, and this index has none".into(),
            )
        })
    }

    /// This index over another store (the tables exist already): the
    /// recording view of [`Index::atomically`].
    pub(crate) fn with_store(&self, store: Arc<dyn TableStore>) -> Index {
        let known = self
            .known_tables
            .lock()
            .map(|k| k.clone())
            .unwrap_or_default();
        Index {
            store,
            direct: self.direct.clone(),
            options: self.options,
            known_tables: Mutex::new(known),
            table_locks: self.table_locks.clone(),
            text: self.text.clone(),
        }
    }

    /// The underlying store.
    pub fn store(&self) -> &Arc<dyn TableStore> {
        &self.store
    }

    /// The options this index was opened with.
    pub fn options(&self) -> IndexOptions {
        self.options
    }

    /// Table and data-row key of a page (validates the source name).
    pub fn page_key(&self, page: &PageRecord) -> Result<PageKey> {
        let t = page.key_time();
        let table = keys::table_name(&page.source, chrono::Datelike::year(&t))?;
        let hash = keys::url_hash(&page.url);
        let salt = keys::salt(&hash, self.options.buckets);
        Ok(PageKey {
            table,
            row_key: keys::data_key(salt, &keys::suffix(t, &hash)),
        })
    }

    fn page_rows(&self, page: &PageRecord) -> Result<PageRows> {
        let key = self.page_key(page)?;
        let (salt, suffix) = keys::split_data_key(&key.row_key)?;
        let mut entries: BTreeSet<(u8, String)> = BTreeSet::new();
        entries.insert((ATTR_TOPIC, page.topic.clone()));
        if let Some(m) = &page.media {
            entries.insert((ATTR_MEDIA, m.clone()));
        }
        for k in page.index_keywords() {
            entries.insert((ATTR_KEYWORD, k));
        }
        let mut index_keys = BTreeSet::new();
        let mut postings = Vec::with_capacity(entries.len());
        for (attr, value) in &entries {
            index_keys.insert(keys::index_key(salt, *attr, value, &suffix));
            postings.push(keys::posting_key(salt, *attr, value, suffix[0]));
        }
        let mut data = Row {
            key: key.row_key.clone(),
            cells: page.to_cells()?,
        };
        for ik in &index_keys {
            data = data.with(FAMILY_INDEX, ik.clone(), Vec::new());
        }
        Ok(PageRows {
            key,
            data,
            index_keys,
            postings,
            suffix,
            value: index_row_value(page),
        })
    }

    /// Creates a page table if this index has not seen it yet, and checks its
    /// format: a table that is empty when first seen gets the postings format
    /// marker (see [`Index::check_format`]).
    fn ensure_table(&self, table: &str) -> Result<()> {
        if self.is_ensured(table)? {
            return Ok(());
        }
        let lock = self
            .table_locks
            .lock()
            .map_err(|_| Error::Invalid("index table locks poisoned".into()))?
            .entry(table.to_owned())
            .or_default()
            .clone();
        let _creating = lock
            .lock()
            .map_err(|_| Error::Invalid("index table lock poisoned".into()))?;
        if self.is_ensured(table)? {
            return Ok(());
        }
        self.store
            .create_table(table, &PAGE_FAMILIES, self.options.buckets)?;
        self.check_format(table, true)?;
        self.known_tables()?
            .insert(table.to_owned(), KnownTable { ensured: true });
        Ok(())
    }

    fn is_ensured(&self, table: &str) -> Result<bool> {
        Ok(self.known_tables()?.get(table).is_some_and(|k| k.ensured))
    }

    /// Ensures page tables, side by side when the store is remote (a new
    /// table takes an HBase master about two seconds).
    fn ensure_tables(&self, tables: &[&str]) -> Result<()> {
        let mut todo = Vec::with_capacity(tables.len());
        for t in tables {
            if !self.is_ensured(t)? {
                todo.push(*t);
            }
        }
        if todo.len() < 2 || !self.store.remote() {
            return todo.into_iter().try_for_each(|t| self.ensure_table(t));
        }
        std::thread::scope(|scope| {
            let handles: Vec<_> = todo
                .iter()
                .map(|t| scope.spawn(move || self.ensure_table(t)))
                .collect();
            handles.into_iter().try_for_each(|h| {
                h.join().unwrap_or_else(|_| {
                    Err(Error::Invalid("a table creation thread panicked".into()))
                })
            })
        })
    }

    /// Creates (and marks) the page tables of `sources` in `year` ahead of
    /// their first pages, side by side on a remote store: a crawl starts
    /// this beside its first fetches so that its first batch does not wait
    /// for the table most of its pages go to (those without a publish time
    /// are keyed by their fetch time). A batch that needs a table being
    /// prepared waits for it.
    pub fn prepare_page_tables(&self, sources: &[&str], year: i32) -> Result<()> {
        let tables = sources
            .iter()
            .map(|s| keys::table_name(s, year))
            .collect::<Result<BTreeSet<_>>>()?;
        let tables: Vec<&str> = tables.iter().map(String::as_str).collect();
        self.ensure_tables(&tables)
    }

    /// Checks the format marker of an existing page table. A table without
    /// it is accepted while it is empty (and then marked, with `mark`); one
    /// that holds rows was made before posting rows, by a harvest that wrote
    /// one index row per page: those rows are no longer read, so the table
    /// is refused with an error naming it rather than half read.
    fn check_format(&self, table: &str, mark: bool) -> Result<()> {
        if self.read_format(table)? {
            return Ok(());
        }
        if self
            .store
            .scan(table, &Scan::default().limit(1))?
            .is_empty()
        {
            if mark {
                self.store.put(
                    table,
                    &[Row::new(keys::FORMAT_KEY).with(
                        FAMILY_ATTRS,
                        FORMAT_QUALIFIER,
                        FORMAT_POSTINGS,
                    )],
                )?;
            }
            return Ok(());
        }
        // A writer marks a table before its first page: the rows may have
        // come, marker first, after the marker was read above.
        if self.read_format(table)? {
            return Ok(());
        }
        Err(Error::Invalid(format!(
            "table {table} has no index format marker: it was written before posting rows \
             (one index row per page), which this harvest no longer reads; re-index its pages"
        )))
    }

    fn known_tables(&self) -> Result<std::sync::MutexGuard<'_, HashMap<String, KnownTable>>> {
        self.known_tables
            .lock()
            .map_err(|_| Error::Invalid("index table cache lock poisoned".into()))
    }

    /// Whether an existing table has the postings format marker (an unknown
    /// marker is an error).
    fn read_format(&self, table: &str) -> Result<bool> {
        let rows = self
            .store
            .get(table, &[keys::FORMAT_KEY.to_vec()], &[FAMILY_ATTRS])?;
        match rows.into_iter().flatten().next() {
            None => Ok(false),
            Some(r) => match r.cell(FAMILY_ATTRS, FORMAT_QUALIFIER) {
                Some(FORMAT_POSTINGS) => Ok(true),
                other => Err(Error::Invalid(format!(
                    "table {table}: unknown index format {:?} (written by a newer harvest?)",
                    other.map(String::from_utf8_lossy)
                ))),
            },
        }
    }

    /// Checks the format of an existing page table before it is read (once
    /// per index, see [`Index::check_format`]).
    pub(crate) fn check_table(&self, table: &str) -> Result<()> {
        if self.known_tables()?.contains_key(table) {
            return Ok(());
        }
        self.check_format(table, false)?;
        self.known_tables()?
            .entry(table.to_owned())
            .or_insert(KnownTable { ensured: false });
        Ok(())
    }

    /// Indexes pages: per table, one batch with the data rows and their
    /// posting cells. Tables are created on demand. Re-indexing a page with
    /// the same URL and key time replaces it: the old data row and the
    /// posting cells of the index entries the new version no longer has are
    /// deleted first. Within one call the last page for a given key wins.
    pub fn index_pages(&self, pages: &[PageRecord]) -> Result<()> {
        let keys = pages
            .iter()
            .map(|p| self.page_key(p))
            .collect::<Result<Vec<_>>>()?;
        let stored = self.stored_page_entries(&keys)?;
        self.index_pages_over(pages, stored)
    }

    /// What [`Index::index_pages_over`] needs to know of the rows the pages
    /// of these keys ([`Index::page_key`]) replace: their index entries,
    /// read in one call a table (creating the tables). Can be read while the
    /// pages change in ways that keep their keys (a near-duplicate link),
    /// e.g. beside other reads.
    pub fn stored_page_entries(&self, page_keys: &[PageKey]) -> Result<StoredPageEntries> {
        let mut keys: BTreeMap<String, BTreeSet<Vec<u8>>> = BTreeMap::new();
        for key in page_keys {
            keys.entry(key.table.clone())
                .or_default()
                .insert(key.row_key.clone());
        }
        let tables: Vec<&str> = keys.keys().map(String::as_str).collect();
        self.ensure_tables(&tables)?;
        let mut rows = HashMap::new();
        for (table, keys) in keys {
            let keys: Vec<Vec<u8>> = keys.into_iter().collect();
            let existing = self.store.get(&table, &keys, &[FAMILY_INDEX])?;
            for (key, row) in keys.into_iter().zip(existing) {
                if let Some(row) = row {
                    rows.insert((table.clone(), key), row);
                }
            }
        }
        Ok(StoredPageEntries { rows })
    }

    /// [`Index::index_pages`] with the replaced rows read before
    /// ([`Index::stored_page_entries`] of pages with the same keys).
    pub fn index_pages_over(&self, pages: &[PageRecord], stored: StoredPageEntries) -> Result<()> {
        let mut by_table: BTreeMap<String, BTreeMap<Vec<u8>, PageRows>> = BTreeMap::new();
        for page in pages {
            let rows = self.page_rows(page)?;
            by_table
                .entry(rows.key.table.clone())
                .or_default()
                .insert(rows.key.row_key.clone(), rows);
        }
        let tables: Vec<&str> = by_table.keys().map(String::as_str).collect();
        self.ensure_tables(&tables)?;
        let mut stored = stored.rows;
        for (table, rows) in by_table {
            let keys: Vec<Vec<u8>> = rows.keys().cloned().collect();
            let existing: Vec<Option<Row>> = keys
                .iter()
                .map(|k| stored.remove(&(table.clone(), k.clone())))
                .collect();
            let mut stale: Vec<Vec<u8>> = Vec::new();
            let mut stale_cells: BTreeMap<Vec<u8>, Row> = BTreeMap::new();
            for (old, new) in existing.iter().zip(rows.values()) {
                let Some(old) = old else { continue };
                stale.push(new.key.row_key.clone());
                for c in old.family(FAMILY_INDEX) {
                    if new.index_keys.contains(&c.qualifier) {
                        continue;
                    }
                    let (row, suffix) = keys::posting_of(&keys::split_index_key(&c.qualifier)?);
                    stale_cells
                        .entry(row.clone())
                        .or_insert_with(|| Row::new(row))
                        .cells
                        .push(Cell::new(FAMILY_INDEX, suffix, Vec::new()));
                }
            }
            if !stale.is_empty() {
                self.store.delete(&table, &stale)?;
            }
            if !stale_cells.is_empty() {
                let cells: Vec<Row> = stale_cells.into_values().collect();
                self.store.delete_cells(&table, &cells)?;
            }
            let mut postings: BTreeMap<Vec<u8>, Row> = BTreeMap::new();
            let mut batch = Vec::with_capacity(rows.len() * 2);
            for r in rows.into_values() {
                r.add_postings(&mut postings);
                batch.push(r.data);
            }
            batch.extend(postings.into_values());
            self.store.put(&table, &batch)?;
            tracing::debug!(table = %table, pages = keys.len(), replaced = stale.len(), "pages indexed");
        }
        Ok(())
    }

    /// The rows [`Index::index_pages`] would write for new pages (data rows
    /// and their posting rows, one row per posting key within the call), by
    /// table, for bulk loaders such as [`crate::EmbeddedStore::ingest`] (which
    /// merges posting cells with stored ones). Creates the tables. No
    /// stale-row handling: only for pages not indexed yet.
    pub fn rows_for_new_pages(&self, pages: &[PageRecord]) -> Result<BTreeMap<String, Vec<Row>>> {
        let mut postings: BTreeMap<String, BTreeMap<Vec<u8>, Row>> = BTreeMap::new();
        let mut out: BTreeMap<String, Vec<Row>> = BTreeMap::new();
        for page in pages {
            let r = self.page_rows(page)?;
            r.add_postings(postings.entry(r.key.table.clone()).or_default());
            out.entry(r.key.table.clone()).or_default().push(r.data);
        }
        for (table, p) in postings {
            out.entry(table).or_default().extend(p.into_values());
        }
        for table in out.keys() {
            self.ensure_table(table)?;
        }
        Ok(out)
    }

    /// Reads one page by table and data-row key.
    pub fn get_page(&self, table: &str, row_key: &[u8]) -> Result<Option<PageRecord>> {
        let rows = self
            .store
            .get(table, &[row_key.to_vec()], &[FAMILY_ATTRS])?;
        rows.into_iter()
            .flatten()
            .next()
            .map(|r| PageRecord::from_row(&r))
            .transpose()
    }

    /// Reads the state of a URL.
    pub fn get_url(&self, url: &str) -> Result<Option<UrlState>> {
        Ok(self.get_urls(&[url])?.pop().flatten())
    }

    /// Reads the states of several URLs in one call (one entry per URL).
    pub fn get_urls(&self, urls: &[&str]) -> Result<Vec<Option<UrlState>>> {
        self.get_keyed(URLS_TABLE, urls, UrlState::from_row)
    }

    /// Reads the rows of `keys` from a one-family table in one call, each
    /// decoded (one entry per key, in order).
    fn get_keyed<T>(
        &self,
        table: &str,
        keys: &[&str],
        decode: impl Fn(&Row) -> Result<T>,
    ) -> Result<Vec<Option<T>>> {
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        let keys: Vec<Vec<u8>> = keys.iter().map(|k| k.as_bytes().to_vec()).collect();
        self.store
            .get(table, &keys, &[FAMILY_ATTRS])?
            .into_iter()
            .map(|r| r.map(|r| decode(&r)).transpose())
            .collect()
    }

    /// Removes pages (their text, then their data rows and index entries), e.g. the old
    /// row of a page whose key time changed with a new capture. Missing rows are ignored.
    /// The text goes first: a page is never found by its words without its rows (a crash
    /// in between leaves rows without text, which `fsck --repair` indexes again).
    pub fn delete_pages(&self, keys: &[PageKey]) -> Result<()> {
        if let Some(text) = &self.text {
            let pages = keys.iter().map(text_page_of).collect::<Result<Vec<_>>>()?;
            text.delete(&pages)?;
        }
        let mut by_table: BTreeMap<&str, Vec<Vec<u8>>> = BTreeMap::new();
        for k in keys {
            by_table
                .entry(&k.table)
                .or_default()
                .push(k.row_key.clone());
        }
        for (table, rows) in by_table {
            self.check_table(table)?;
            let existing = self.store.get(table, &rows, &[FAMILY_INDEX])?;
            let mut whole: Vec<Vec<u8>> = Vec::new();
            let mut cells: BTreeMap<Vec<u8>, Row> = BTreeMap::new();
            for (key, old) in rows.iter().zip(existing) {
                let Some(old) = old else { continue };
                whole.push(key.clone());
                for c in old.family(FAMILY_INDEX) {
                    let (row, suffix) = keys::posting_of(&keys::split_index_key(&c.qualifier)?);
                    cells
                        .entry(row.clone())
                        .or_insert_with(|| Row::new(row))
                        .cells
                        .push(Cell::new(FAMILY_INDEX, suffix, Vec::new()));
                }
            }
            if !cells.is_empty() {
                let cells: Vec<Row> = cells.into_values().collect();
                self.store.delete_cells(table, &cells)?;
            }
            if !whole.is_empty() {
                self.store.delete(table, &whole)?;
            }
        }
        Ok(())
    }

    /// Writes URL states (absent optional fields are cleared). A state
    /// without `first_capture` keeps the stored one; a URL seen for the first
    /// time gets its `last_capture` as `first_capture`.
    pub fn put_urls(&self, urls: &[UrlState]) -> Result<()> {
        let missing: Vec<Vec<u8>> = urls
            .iter()
            .filter(|u| u.first_capture.is_none())
            .map(|u| u.url.as_bytes().to_vec())
            .collect();
        // URL -> stored first capture, for the URLs that have a stored row.
        let mut known: HashMap<Vec<u8>, Option<DateTime<Utc>>> = HashMap::new();
        if !missing.is_empty() {
            let stored = self.store.get(URLS_TABLE, &missing, &[FAMILY_ATTRS])?;
            for (key, row) in missing.iter().zip(stored) {
                if let Some(r) = row {
                    known.insert(key.clone(), UrlState::from_row(&r)?.first_capture);
                }
            }
        }
        let rows: Vec<Row> = urls
            .iter()
            .map(|u| {
                if u.first_capture.is_some() {
                    return u.to_row();
                }
                let mut u = u.clone();
                u.first_capture = match known.get(u.url.as_bytes()) {
                    // stored row: keep its first capture (unknown for rows
                    // written before first_capture existed)
                    Some(stored) => *stored,
                    None => Some(u.last_capture),
                };
                u.to_row()
            })
            .collect();
        self.replace_rows(URLS_TABLE, rows)
    }

    /// Reads a digest entry.
    pub fn get_digest(&self, digest: &str) -> Result<Option<DigestEntry>> {
        Ok(self
            .get_keyed(DIGESTS_TABLE, &[digest], DigestEntry::from_row)?
            .pop()
            .flatten())
    }

    /// The entries of the digests among `digests` that have one, read in one
    /// call (repeats are read once).
    pub fn known_digests<'a>(
        &self,
        digests: impl IntoIterator<Item = &'a str>,
    ) -> Result<HashMap<String, DigestEntry>> {
        let mut digests: Vec<&str> = digests.into_iter().collect();
        digests.sort_unstable();
        digests.dedup();
        let entries = self.get_keyed(DIGESTS_TABLE, &digests, DigestEntry::from_row)?;
        Ok(digests
            .iter()
            .zip(entries)
            .filter_map(|(d, e)| e.map(|e| (d.to_string(), e)))
            .collect())
    }

    /// Writes digest entries (replacing earlier versions).
    pub fn put_digests(&self, entries: &[DigestEntry]) -> Result<()> {
        let rows = entries
            .iter()
            .map(DigestEntry::to_row)
            .collect::<Result<Vec<_>>>()?;
        self.replace_rows(DIGESTS_TABLE, rows)
    }

    /// Puts rows, first deleting existing rows whose cell set shrinks (so an
    /// ETag that went away does not survive a merge-put).
    fn replace_rows(&self, table: &str, rows: Vec<Row>) -> Result<()> {
        let keys: Vec<Vec<u8>> = rows.iter().map(|r| r.key.clone()).collect();
        let existing = self.store.get(table, &keys, &[FAMILY_ATTRS])?;
        let shrinking: Vec<Vec<u8>> = existing
            .iter()
            .zip(&rows)
            .filter_map(|(old, new)| {
                let old = old.as_ref()?;
                old.cells
                    .iter()
                    .any(|c| new.cell(&c.family, &c.qualifier).is_none())
                    .then(|| new.key.clone())
            })
            .collect();
        if !shrinking.is_empty() {
            self.store.delete(table, &shrinking)?;
        }
        self.store.put(table, &rows)
    }
}

/// How the text index names the page of a data row.
pub(crate) fn text_page_of(key: &PageKey) -> Result<TextPage> {
    let (source, year) = keys::parse_table_name(&key.table).ok_or_else(|| Error::BadTableName {
        name: key.table.clone(),
        reason: "not a page table",
    })?;
    let (_, suffix) = keys::split_data_key(&key.row_key)?;
    let time = keys::suffix_time(year, &suffix)?;
    let mut hash = [0u8; keys::URL_HASH_LEN];
    hash.copy_from_slice(&suffix[keys::TIME_LEN..]);
    Ok(TextPage {
        source: Arc::from(source),
        time: time.timestamp(),
        hash,
    })
}

#[cfg(test)]
mod tests {
    use chrono::{DateTime, Utc};

    use super::*;
    use crate::query::{Interval, Query, StatsQuery};
    use crate::EmbeddedStore;

    fn at(s: &str) -> DateTime<Utc> {
        s.parse().unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    /// Page tables prepared ahead of their pages are created and marked
    /// (the pages then go in as into any table), and the replaced rows read
    /// apart from the write ([`Index::stored_page_entries`] beside a
    /// near-duplicate link) leave no stale index entries behind.
    #[test]
    fn tables_prepared_ahead_and_entries_read_apart() {
        let dir = tempfile::tempdir().expect("temp dir");
        let store: Arc<dyn TableStore> =
            Arc::new(EmbeddedStore::open(dir.path()).unwrap_or_else(|e| panic!("open: {e}")));
        let ix = Index::new(store.clone(), IndexOptions { buckets: 2 }).expect("index");
        ix.prepare_page_tables(&["anglo_news", "other"], 2017)
            .expect("prepare");
        let tables = store.list_tables().expect("tables");
        for t in ["anglo_news_2017", "other_2017"] {
            assert!(tables.iter().any(|n| n == t), "{t} in {tables:?}");
            assert!(ix.read_format(t).expect("format"), "{t} marked");
        }
        assert!(ix.prepare_page_tables(&["Bad Name"], 2017).is_err());

        let q = |kw: &str| {
            let mut q = Query::new(&[], at("2017-01-01T00:00:00Z"), at("2018-01-01T00:00:00Z"));
            q.keywords = vec![kw.to_string()];
            ix.search(&q).expect("search").len()
        };
        let first = crate::record::tests::sample();
        ix.index_pages(std::slice::from_ref(&first)).expect("index");
        assert_eq!(q("brexit"), 1);
        let mut second = first.clone();
        second.keywords = vec!["parliament".into()];
        let keys = vec![ix.page_key(&second).expect("key")];
        let stored = ix.stored_page_entries(&keys).expect("stored");
        ix.index_pages_over(std::slice::from_ref(&second), stored)
            .expect("reindex");
        assert_eq!((q("brexit"), q("parliament")), (0, 1));
    }

    /// A page table that holds rows but no format marker was made before
    /// posting rows (one index row per page, no longer read): reads and
    /// writes refuse it by name instead of half reading it. An empty table
    /// without the marker (made ahead of time, as `cluster init` does) is
    /// read as empty and gets the marker with its first page.
    #[test]
    fn a_table_made_before_posting_rows_is_refused() {
        let dir = tempfile::tempdir().expect("temp dir");
        let store: Arc<dyn TableStore> =
            Arc::new(EmbeddedStore::open(dir.path()).unwrap_or_else(|e| panic!("open: {e}")));
        let options = IndexOptions { buckets: 2 };
        let page = crate::record::tests::sample();
        let table = "anglo_news_2017";
        let q = Query::new(&[], at("2017-01-01T00:00:00Z"), at("2018-01-01T00:00:00Z"));
        let ix = Index::new(store.clone(), options).expect("index");
        store
            .create_table(table, &PAGE_FAMILIES, options.buckets)
            .expect("create ahead");
        assert!(ix.search(&q).expect("search an empty table").is_empty());
        ix.index_pages(std::slice::from_ref(&page)).expect("index");
        assert_eq!(ix.search(&q).expect("search").len(), 1);

        store
            .delete(table, &[keys::FORMAT_KEY.to_vec()])
            .expect("drop the marker");
        let ix = Index::new(store, options).expect("index");
        let key = ix.page_key(&page).expect("key");
        let refusals = [
            ix.search(&q).err(),
            ix.stats(&StatsQuery::new(q.clone(), Interval::Month, None))
                .err(),
            ix.index_pages(std::slice::from_ref(&page)).err(),
            ix.delete_pages(&[key]).err(),
        ];
        for (i, err) in refusals.into_iter().enumerate() {
            let msg = err.map(|e| e.to_string()).unwrap_or_default();
            assert!(
                msg.contains(table) && msg.contains("no index format marker"),
                "#{i}: {msg:?}"
            );
        }
    }
}
