//! The [`Index`] facade: writes page rows with their local index rows, and
//! the `urls` and `digests` tables.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::{Arc, Mutex};

use chrono::{DateTime, Utc};

use crate::error::{Error, Result};
use crate::keys::{self, ATTR_KEYWORD, ATTR_MEDIA, ATTR_TOPIC};
use crate::record::{DigestEntry, PageRecord, UrlState, FAMILY_ATTRS, FAMILY_INDEX, PAGE_FAMILIES};
use crate::store::{Row, TableStore};

/// Table of URL states.
pub const URLS_TABLE: &str = "urls";
/// Table of payload digests.
pub const DIGESTS_TABLE: &str = "digests";
/// Qualifier of the single cell of an index row (family `i`).
pub const INDEX_ROW_QUALIFIER: &[u8] = b"";
/// Table of K-means cluster centres (see [`crate::clusters`]).
pub const CLUSTERS_TABLE: &str = "clusters";
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
/// Bit in an index row's value: the value carries [`FLAG_NEAR_DUP`],
/// [`FLAG_COMMENTS`] and [`FLAG_ATTRS`] (rows written before these existed
/// have only [`FLAG_REVISIT`]; queries then read the data row to decide).
pub const FLAG_EXT: u8 = 0x80;

/// Value of every index row of a page: `[flags]`, then with
/// [`FLAG_COMMENTS`] the comment count (u64 big-endian), then with
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
    pub(crate) options: IndexOptions,
    known_tables: Mutex<HashSet<String>>,
}

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
    index_keys: BTreeSet<Vec<u8>>,
    value: Vec<u8>,
}

impl Index {
    /// Wraps a store; creates the `urls` and `digests` tables if needed.
    pub fn new(store: Arc<dyn TableStore>, options: IndexOptions) -> Result<Self> {
        if options.buckets == 0 {
            return Err(Error::Invalid(
                "IndexOptions.buckets must be at least 1".into(),
            ));
        }
        store.create_table(URLS_TABLE, &[FAMILY_ATTRS], 1)?;
        store.create_table(DIGESTS_TABLE, &[FAMILY_ATTRS], 1)?;
        store.create_table(CLUSTERS_TABLE, &[FAMILY_ATTRS], 1)?;
        Ok(Index {
            store,
            options,
            known_tables: Mutex::new(HashSet::new()),
        })
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
        let mut index_keys = BTreeSet::new();
        index_keys.insert(keys::index_key(salt, ATTR_TOPIC, &page.topic, &suffix));
        if let Some(m) = &page.media {
            index_keys.insert(keys::index_key(salt, ATTR_MEDIA, m, &suffix));
        }
        for k in page.index_keywords() {
            index_keys.insert(keys::index_key(salt, ATTR_KEYWORD, &k, &suffix));
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
            value: index_row_value(page),
        })
    }

    fn ensure_table(&self, table: &str) -> Result<()> {
        let mut known = self
            .known_tables
            .lock()
            .map_err(|_| Error::Invalid("index table cache lock poisoned".into()))?;
        if !known.contains(table) {
            self.store
                .create_table(table, &PAGE_FAMILIES, self.options.buckets)?;
            known.insert(table.to_owned());
        }
        Ok(())
    }

    /// Indexes pages: per table, one batch with the data rows and their index
    /// rows. Tables are created on demand. Re-indexing a page with the same
    /// URL and key time replaces it: the old data row and the index rows it
    /// listed in family `i` that the new version no longer has are deleted
    /// first. Within one call the last page for a given key wins.
    pub fn index_pages(&self, pages: &[PageRecord]) -> Result<()> {
        let mut by_table: BTreeMap<String, BTreeMap<Vec<u8>, PageRows>> = BTreeMap::new();
        for page in pages {
            let rows = self.page_rows(page)?;
            by_table
                .entry(rows.key.table.clone())
                .or_default()
                .insert(rows.key.row_key.clone(), rows);
        }
        for (table, rows) in by_table {
            self.ensure_table(&table)?;
            let keys: Vec<Vec<u8>> = rows.keys().cloned().collect();
            let existing = self.store.get(&table, &keys, &[FAMILY_INDEX])?;
            let mut stale: Vec<Vec<u8>> = Vec::new();
            for (old, new) in existing.iter().zip(rows.values()) {
                if let Some(old) = old {
                    stale.push(new.key.row_key.clone());
                    stale.extend(
                        old.family(FAMILY_INDEX)
                            .filter(|c| !new.index_keys.contains(&c.qualifier))
                            .map(|c| c.qualifier.clone()),
                    );
                }
            }
            if !stale.is_empty() {
                self.store.delete(&table, &stale)?;
            }
            let mut batch = Vec::with_capacity(rows.len() * 8);
            for r in rows.into_values() {
                for ik in &r.index_keys {
                    batch.push(Row::new(ik.clone()).with(
                        FAMILY_INDEX,
                        INDEX_ROW_QUALIFIER,
                        r.value.clone(),
                    ));
                }
                batch.push(r.data);
            }
            self.store.put(&table, &batch)?;
            tracing::debug!(table = %table, pages = keys.len(), replaced = stale.len(), "pages indexed");
        }
        Ok(())
    }

    /// The rows [`Index::index_pages`] would write for new pages (data rows
    /// and their index rows), by table, for bulk loaders such as
    /// [`crate::EmbeddedStore::ingest`]. Creates the tables. No stale-row
    /// handling: only for pages not indexed yet.
    pub fn rows_for_new_pages(&self, pages: &[PageRecord]) -> Result<BTreeMap<String, Vec<Row>>> {
        let mut out: BTreeMap<String, Vec<Row>> = BTreeMap::new();
        for page in pages {
            let r = self.page_rows(page)?;
            let rows = out.entry(r.key.table.clone()).or_default();
            for ik in &r.index_keys {
                rows.push(Row::new(ik.clone()).with(
                    FAMILY_INDEX,
                    INDEX_ROW_QUALIFIER,
                    r.value.clone(),
                ));
            }
            rows.push(r.data);
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
        let rows = self
            .store
            .get(URLS_TABLE, &[url.as_bytes().to_vec()], &[FAMILY_ATTRS])?;
        rows.into_iter()
            .flatten()
            .next()
            .map(|r| UrlState::from_row(&r))
            .transpose()
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
        let rows = self.store.get(
            DIGESTS_TABLE,
            &[digest.as_bytes().to_vec()],
            &[FAMILY_ATTRS],
        )?;
        rows.into_iter()
            .flatten()
            .next()
            .map(|r| DigestEntry::from_row(&r))
            .transpose()
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
