//! Embedded [`TableStore`] on fjall 3.
//!
//! Layout: one fjall database per store; one keyspace per (table, family),
//! named `{table}.{family}`; the key is the row key and the value holds all
//! cells of that row in that family (`[u32 qlen][q][u32 vlen][v]...`, sorted
//! by qualifier). A keyspace `_meta` maps each table name to its layout (JSON:
//! families, bucket count). One value per (row, family) keeps scans cheap
//! (one LSM entry per row, not per cell); `put` merges by reading the current
//! value first, under a store-wide write lock.
//!
//! Durability: every `put`/`delete` is one atomic fjall write batch, and the
//! journal is persisted before the call returns: [`Durability::Process`]
//! (`PersistMode::Buffer`, survives a process crash) or
//! [`Durability::PowerLoss`] (`PersistMode::SyncData`, fdatasync, the default).

use std::collections::{BTreeMap, HashMap};
use std::ops::Bound;
use std::path::Path;
use std::sync::{Mutex, RwLock};

use fjall::{Database, Keyspace, KeyspaceCreateOptions, PersistMode};

/// Memtable size at which a keyspace is flushed to disk.
pub const MAX_MEMTABLE_BYTES: u64 = 8 * 1024 * 1024;

fn keyspace_options() -> KeyspaceCreateOptions {
    KeyspaceCreateOptions::default().max_memtable_size(MAX_MEMTABLE_BYTES)
}
use serde::{Deserialize, Serialize};

use super::api::Mutation;
use super::api::{bucket_regions, visit_rows, Cell, Region, Row, Scan, TableStore};
use crate::error::{DiskCondition, Error, Result};

/// Keyspace holding table layouts.
const META_KEYSPACE: &str = "_meta";
/// Separator between table and family in a keyspace name.
const KEYSPACE_SEP: char = '.';
/// Longest table or family name (a keyspace name must fit in 255 bytes).
const MAX_NAME_LEN: usize = 120;

/// When a write is acknowledged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Durability {
    /// Journal flushed to the OS: survives a crash of the process, not of the machine.
    Process,
    /// Journal fdatasync'ed: survives power loss. Default.
    #[default]
    PowerLoss,
}

impl Durability {
    fn persist_mode(self) -> PersistMode {
        match self {
            Durability::Process => PersistMode::Buffer,
            Durability::PowerLoss => PersistMode::SyncData,
        }
    }
}

/// Options of [`EmbeddedStore::open_with`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct EmbeddedOptions {
    /// Write acknowledgement level (default: power-loss safe).
    pub durability: Durability,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct TableMeta {
    families: Vec<String>,
    buckets: u8,
}

struct TableHandle {
    meta: TableMeta,
    families: BTreeMap<String, Keyspace>,
}

impl TableHandle {
    /// A family's stored name and keyspace (`table` names the error).
    fn family(&self, table: &str, family: &str) -> Result<(&String, &Keyspace)> {
        self.families
            .get_key_value(family)
            .ok_or_else(|| Error::NoSuchFamily {
                table: table.to_owned(),
                family: family.to_owned(),
            })
    }
}

/// The embedded table store (a folder holding a fjall database).
pub struct EmbeddedStore {
    db: Database,
    /// The store's folder (named by errors of writes to it).
    path: std::path::PathBuf,
    /// The first failed write's I/O error (kind, text): fjall refuses every
    /// write after one ("Poisoned") without saying why.
    first_failure: Mutex<Option<(std::io::ErrorKind, String)>>,
    meta: Keyspace,
    tables: RwLock<HashMap<String, std::sync::Arc<TableHandle>>>,
    write_lock: Mutex<()>,
    options: EmbeddedOptions,
}

impl std::fmt::Debug for EmbeddedStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EmbeddedStore")
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

/// Check a table layout given to `create_table` (the same rules for every
/// backend) and return its families sorted and deduplicated.
pub(crate) fn checked_layout(name: &str, families: &[&str], buckets: u8) -> Result<Vec<String>> {
    valid_name(name).map_err(|reason| Error::BadTableName {
        name: name.to_owned(),
        reason,
    })?;
    if families.is_empty() {
        return Err(Error::BadFamily {
            name: String::new(),
            reason: "a table needs at least one family",
        });
    }
    if buckets == 0 {
        return Err(Error::Invalid(format!(
            "table {name:?}: bucket count must be at least 1"
        )));
    }
    let mut fams: Vec<String> = Vec::new();
    for f in families {
        valid_name(f).map_err(|reason| Error::BadFamily {
            name: (*f).to_owned(),
            reason,
        })?;
        fams.push((*f).to_owned());
    }
    fams.sort();
    fams.dedup();
    Ok(fams)
}

/// Checks a table or family name: `[a-z0-9_]+`, at most [`MAX_NAME_LEN`] bytes.
pub(crate) fn valid_name(name: &str) -> std::result::Result<(), &'static str> {
    if name.is_empty() {
        return Err("empty");
    }
    if name.len() > MAX_NAME_LEN {
        return Err("too long");
    }
    if !name
        .bytes()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
    {
        return Err("must match [a-z0-9_]+");
    }
    Ok(())
}

fn keyspace_name(table: &str, family: &str) -> String {
    format!("{table}{KEYSPACE_SEP}{family}")
}

/// Encodes a family's cells (sorted by qualifier) into one value.
fn encode_cells(cells: &BTreeMap<Vec<u8>, Vec<u8>>) -> Vec<u8> {
    let size: usize = cells.iter().map(|(q, v)| 8 + q.len() + v.len()).sum();
    let mut out = Vec::with_capacity(size);
    for (q, v) in cells {
        // Lengths fit: fjall values are < 2^32 bytes.
        out.extend_from_slice(&(q.len() as u32).to_be_bytes());
        out.extend_from_slice(q);
        out.extend_from_slice(&(v.len() as u32).to_be_bytes());
        out.extend_from_slice(v);
    }
    out
}

fn take<'a>(buf: &mut &'a [u8], key: &[u8]) -> Result<&'a [u8]> {
    let corrupt = || Error::Corrupt {
        key: key.to_vec(),
        qualifier: String::new(),
        reason: "truncated cell block".into(),
    };
    let (len, rest) = buf.split_first_chunk::<4>().ok_or_else(corrupt)?;
    let len = u32::from_be_bytes(*len) as usize;
    if rest.len() < len {
        return Err(corrupt());
    }
    let (head, tail) = rest.split_at(len);
    *buf = tail;
    Ok(head)
}

/// Decodes a value written by [`encode_cells`] straight into cells of
/// `family` (the block is already sorted by qualifier).
fn decode_cells_into(key: &[u8], mut buf: &[u8], family: &str, out: &mut Vec<Cell>) -> Result<()> {
    while !buf.is_empty() {
        let q = take(&mut buf, key)?;
        let v = take(&mut buf, key)?;
        out.push(Cell {
            family: family.to_owned(),
            qualifier: q.to_vec(),
            value: v.to_vec(),
        });
    }
    Ok(())
}

/// Decodes a value written by [`encode_cells`] into `row`, reusing the
/// buffers of the cells it already holds (no allocation once they are big
/// enough): the cells of `row` become exactly the block's cells.
fn decode_cells_reuse(buf: &[u8], family: &str, row: &mut Row) -> Result<()> {
    let mut buf = buf;
    let mut n = 0usize;
    while !buf.is_empty() {
        let q = take(&mut buf, &row.key)?;
        let v = take(&mut buf, &row.key)?;
        if let Some(cell) = row.cells.get_mut(n) {
            if cell.family != family {
                cell.family.clear();
                cell.family.push_str(family);
            }
            cell.qualifier.clear();
            cell.qualifier.extend_from_slice(q);
            cell.value.clear();
            cell.value.extend_from_slice(v);
        } else {
            row.cells.push(Cell {
                family: family.to_owned(),
                qualifier: q.to_vec(),
                value: v.to_vec(),
            });
        }
        n += 1;
    }
    row.cells.truncate(n);
    Ok(())
}

/// A block written by [`encode_cells`] with `new` cells merged in (a new
/// cell replaces a stored one with the same qualifier), streamed without
/// decoding the stored block into owned cells.
fn merge_cells(key: &[u8], stored: &[u8], new: &NewCells<'_>) -> Result<Vec<u8>> {
    let extra: usize = new.iter().map(|(q, v)| 8 + q.len() + v.len()).sum();
    let mut out = Vec::with_capacity(stored.len() + extra);
    let push = |out: &mut Vec<u8>, q: &[u8], v: &[u8]| {
        // Lengths fit: fjall values are < 2^32 bytes.
        out.extend_from_slice(&(q.len() as u32).to_be_bytes());
        out.extend_from_slice(q);
        out.extend_from_slice(&(v.len() as u32).to_be_bytes());
        out.extend_from_slice(v);
    };
    let mut rest = stored;
    let mut fresh = new.iter().peekable();
    while !rest.is_empty() {
        let q = take(&mut rest, key)?;
        let v = take(&mut rest, key)?;
        while let Some((nq, nv)) = fresh.next_if(|(nq, _)| **nq < q) {
            push(&mut out, nq, nv);
        }
        match fresh.next_if(|(nq, _)| **nq == q) {
            Some((nq, nv)) => push(&mut out, nq, nv),
            None => push(&mut out, q, v),
        }
    }
    for (nq, nv) in fresh {
        push(&mut out, nq, nv);
    }
    Ok(out)
}

/// Decodes a value written by [`encode_cells`].
fn decode_cells(key: &[u8], mut buf: &[u8]) -> Result<BTreeMap<Vec<u8>, Vec<u8>>> {
    let mut cells = BTreeMap::new();
    while !buf.is_empty() {
        let q = take(&mut buf, key)?;
        let v = take(&mut buf, key)?;
        cells.insert(q.to_vec(), v.to_vec());
    }
    Ok(cells)
}

impl EmbeddedStore {
    /// Opens (or creates) a store in the folder `path`, power-loss durable.
    pub fn open(path: impl AsRef<Path>) -> Result<Self> {
        Self::open_with(path, EmbeddedOptions::default())
    }

    /// Opens (or creates) a store with explicit options.
    ///
    /// Every keyspace's memtable is flushed at [`MAX_MEMTABLE_BYTES`]: fjall's
    /// default (64 MiB a keyspace, a table family each) let a long crawl hold
    /// every rewritten version of its posting rows in memory.
    pub fn open_with(path: impl AsRef<Path>, options: EmbeddedOptions) -> Result<Self> {
        let path = path.as_ref();
        let db = Database::builder(path).open().map_err(|e| {
            let condition = io_cause(&e).map(|io| DiskCondition::of(io.kind()));
            match condition {
                Some(condition) => Error::Disk {
                    path: path.display().to_string(),
                    condition,
                    context: "open the fjall database".into(),
                    source: Box::new(e),
                },
                None => Error::backend(format!("open fjall database {}", path.display()), e),
            }
        })?;
        let meta = db
            .keyspace(META_KEYSPACE, KeyspaceCreateOptions::default)
            .map_err(|e| Error::backend("open meta keyspace", e))?;
        let mut tables = HashMap::new();
        for item in meta.iter() {
            let (k, v) = item
                .into_inner()
                .map_err(|e| Error::backend("read table list", e))?;
            let name = String::from_utf8_lossy(&k).into_owned();
            let tm: TableMeta = serde_json::from_slice(&v)?;
            let handle = Self::open_families(&db, &name, tm)?;
            tables.insert(name, std::sync::Arc::new(handle));
        }
        tracing::debug!(path = %path.display(), tables = tables.len(), "embedded store opened");
        Ok(EmbeddedStore {
            db,
            path: path.to_path_buf(),
            first_failure: Mutex::new(None),
            meta,
            tables: RwLock::new(tables),
            write_lock: Mutex::new(()),
            options,
        })
    }

    fn open_families(db: &Database, table: &str, meta: TableMeta) -> Result<TableHandle> {
        let mut families = BTreeMap::new();
        for f in &meta.families {
            let ks = db
                .keyspace(&keyspace_name(table, f), keyspace_options)
                .map_err(|e| Error::backend(format!("open keyspace for {table}:{f}"), e))?;
            families.insert(f.clone(), ks);
        }
        Ok(TableHandle { meta, families })
    }

    fn table(&self, name: &str) -> Result<std::sync::Arc<TableHandle>> {
        let tables = self.tables.read().map_err(|_| poisoned())?;
        tables
            .get(name)
            .cloned()
            .ok_or_else(|| Error::NoSuchTable(name.to_owned()))
    }

    /// Flushes the journal with the given durability regardless of the store's setting.
    pub fn persist(&self, durability: Durability) -> Result<()> {
        self.db
            .persist(durability.persist_mode())
            .map_err(|e| self.write_error("persist journal", e))
    }

    /// Bulk load, bypassing the journal and the memtables: each family's
    /// cells become one new sorted run on disk (fjall ingestion), so
    /// 1,000,000 pages load in minutes. Cells are merged like
    /// [`TableStore::put`] merges them: with the row's stored cells (one
    /// point read per row and family) and across rows repeated within the
    /// call. Not for live writes: a concurrent `put` to the same row may be
    /// lost (the store's write lock is held only while the runs are written).
    pub fn ingest(&self, table: &str, rows: &[Row]) -> Result<()> {
        let handle = self.table(table)?;
        // (family, key) -> the new cells (borrowed; the last value wins).
        let mut pending: BTreeMap<(&str, &[u8]), NewCells<'_>> = BTreeMap::new();
        for row in rows {
            if row.key.is_empty() {
                return Err(Error::BadKey {
                    key: Vec::new(),
                    reason: "row keys must not be empty",
                });
            }
            for cell in &row.cells {
                let (fname, _) = handle.family(table, &cell.family)?;
                pending
                    .entry((fname.as_str(), row.key.as_slice()))
                    .or_default()
                    .insert(cell.qualifier.as_slice(), cell.value.as_slice());
            }
        }
        // Merge and encode outside the lock (callers may ingest tables in parallel).
        let mut runs: Vec<(&Keyspace, Vec<KeyValue<'_>>)> = Vec::new();
        for (fname, ks) in &handle.families {
            let run: Vec<KeyValue<'_>> = pending
                .range((fname.as_str(), &[][..])..)
                .take_while(|((f, _), _)| *f == fname.as_str())
                .map(|((_, key), cells)| {
                    let stored = ks.get(key).map_err(|e| Error::backend("read row", e))?;
                    Ok((
                        *key,
                        merge_cells(key, stored.as_deref().unwrap_or_default(), cells)?,
                    ))
                })
                .collect::<Result<_>>()?;
            if !run.is_empty() {
                runs.push((ks, run));
            }
        }
        let _guard = self.write_lock.lock().map_err(|_| poisoned())?;
        for (ks, run) in runs {
            let mut ingestion = ks
                .start_ingestion()
                .map_err(|e| self.write_error("start ingestion", e))?;
            for (key, value) in run {
                ingestion
                    .write(key, value)
                    .map_err(|e| self.write_error(format!("ingest into {table}"), e))?;
            }
            ingestion
                .finish()
                .map_err(|e| self.write_error(format!("finish ingestion into {table}"), e))?;
        }
        tracing::debug!(table, rows = rows.len(), "ingested");
        Ok(())
    }

    /// Major-compacts every keyspace (one sorted run per keyspace); blocks
    /// until done. Worth calling after a bulk load: scans then read one run
    /// instead of merging many.
    pub fn compact(&self) -> Result<()> {
        let tables: Vec<std::sync::Arc<TableHandle>> = self
            .tables
            .read()
            .map_err(|_| poisoned())?
            .values()
            .cloned()
            .collect();
        for t in tables {
            for (family, ks) in &t.families {
                ks.major_compact()
                    .map_err(|e| self.write_error(format!("compact family {family}"), e))?;
            }
        }
        Ok(())
    }

    fn read_family(ks: &Keyspace, key: &[u8]) -> Result<Option<BTreeMap<Vec<u8>, Vec<u8>>>> {
        match ks.get(key).map_err(|e| Error::backend("read row", e))? {
            None => Ok(None),
            Some(v) => decode_cells(key, &v).map(Some),
        }
    }

    /// Families to read for a call: the requested ones (all if none), checked.
    fn pick_families<'a>(
        table: &str,
        handle: &'a TableHandle,
        requested: impl Iterator<Item = &'a str>,
    ) -> Result<Vec<(&'a str, &'a Keyspace)>> {
        let mut out: Vec<(&str, &Keyspace)> = Vec::new();
        for f in requested {
            let (name, ks) =
                handle
                    .families
                    .get_key_value(f)
                    .ok_or_else(|| Error::NoSuchFamily {
                        table: table.to_owned(),
                        family: f.to_owned(),
                    })?;
            if !out.iter().any(|(n, _)| *n == name.as_str()) {
                out.push((name.as_str(), ks));
            }
        }
        if out.is_empty() {
            out = handle
                .families
                .iter()
                .map(|(n, ks)| (n.as_str(), ks))
                .collect();
        }
        out.sort_by(|a, b| a.0.cmp(b.0));
        Ok(out)
    }
}

/// The I/O error at the root of a fjall error, if it has one.
fn io_cause(e: &fjall::Error) -> Option<&std::io::Error> {
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(c) = cause {
        if let Some(io) = c.downcast_ref::<std::io::Error>() {
            return Some(io);
        }
        cause = c.source();
    }
    None
}

/// Bytes a probe writes to find out why the store's folder refuses writes.
const PROBE_BYTES: usize = 64 * 1024;

/// Writes (and removes) a small file in `dir`: the I/O error that refuses
/// it, if any (e.g. `ENOSPC` on a full disk).
fn probe_write(dir: &Path) -> Option<std::io::Error> {
    use std::io::Write;
    let probe = dir.join(format!(".harvest-write-probe-{}", std::process::id()));
    let written = std::fs::File::create(&probe).and_then(|mut f| {
        f.write_all(&[0u8; PROBE_BYTES])?;
        f.sync_data()
    });
    let _ = std::fs::remove_file(&probe);
    written.err()
}

impl EmbeddedStore {
    /// A failed write as [`Error::Disk`]: the store's folder, what its disk
    /// refused the write for and the cause. fjall answers every write after
    /// a failed one with `Poisoned`; that error names the first failure (or,
    /// when this store did not see it, what a probe write in the folder
    /// meets now).
    fn write_error(&self, context: impl Into<String>, e: fjall::Error) -> Error {
        let context = context.into();
        let path = self.path.display().to_string();
        let mut first = self.first_failure.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(io) = io_cause(&e) {
            let (kind, text) = (io.kind(), io.to_string());
            first.get_or_insert_with(|| (kind, text.clone()));
            return Error::Disk {
                path,
                condition: DiskCondition::of(kind),
                context,
                source: match e {
                    fjall::Error::Io(io) => Box::new(io),
                    _ => text.into(),
                },
            };
        }
        if !matches!(e, fjall::Error::Poisoned) {
            return Error::backend(context, e);
        }
        let (condition, why) = match &*first {
            Some((kind, text)) => (
                DiskCondition::of(*kind),
                format!("an earlier write failed: {text}"),
            ),
            None => match probe_write(&self.path) {
                Some(io) => (
                    DiskCondition::of(io.kind()),
                    format!("an earlier write failed; a write there now fails too: {io}"),
                ),
                None => (DiskCondition::Failed, "an earlier write failed".to_string()),
            },
        };
        Error::Disk {
            path,
            condition,
            context,
            source: format!("fjall accepts no write after a failed one ({e}); {why}").into(),
        }
    }
}

fn poisoned() -> Error {
    Error::Invalid("embedded store lock poisoned by a panicking thread".into())
}

/// A batch's view of the rows it touches: (keyspace, key) -> the keyspace
/// and the row's family block as the batch leaves it (`None`: deleted).
type Overlay = BTreeMap<(String, Vec<u8>), (Keyspace, Option<Vec<u8>>)>;

/// Cells of one family of one row, by qualifier.
type CellMap = BTreeMap<Vec<u8>, Vec<u8>>;
/// New cells of one row, borrowed from the caller's rows (qualifier -> value).
type NewCells<'r> = BTreeMap<&'r [u8], &'r [u8]>;
/// A family's cursor in a merged scan: name, iterator, current entry.
type FamilyCursor<'a> = (&'a str, KvIter, Option<(fjall::Slice, fjall::Slice)>);

/// A key and its encoded cell block, ready for ingestion.
type KeyValue<'a> = (&'a [u8], Vec<u8>);

type KvIter = Box<dyn Iterator<Item = Result<(fjall::Slice, fjall::Slice)>>>;

impl TableStore for EmbeddedStore {
    fn create_table(&self, name: &str, families: &[&str], buckets: u8) -> Result<()> {
        let fams = checked_layout(name, families, buckets)?;
        let wanted = TableMeta {
            families: fams,
            buckets,
        };
        let _guard = self.write_lock.lock().map_err(|_| poisoned())?;
        if let Ok(existing) = self.table(name) {
            if existing.meta == wanted {
                return Ok(());
            }
            return Err(Error::TableMismatch {
                table: name.to_owned(),
                detail: format!(
                    "existing families {:?} buckets {}, requested {:?} buckets {}",
                    existing.meta.families, existing.meta.buckets, wanted.families, wanted.buckets
                ),
            });
        }
        let handle = Self::open_families(&self.db, name, wanted.clone())?;
        let mut batch = self
            .db
            .batch()
            .durability(Some(self.options.durability.persist_mode()));
        batch.insert(&self.meta, name.as_bytes(), serde_json::to_vec(&wanted)?);
        batch
            .commit()
            .map_err(|e| self.write_error(format!("create table {name}"), e))?;
        self.tables
            .write()
            .map_err(|_| poisoned())?
            .insert(name.to_owned(), std::sync::Arc::new(handle));
        tracing::info!(table = name, buckets, families = ?wanted.families, "table created");
        Ok(())
    }

    fn list_tables(&self) -> Result<Vec<String>> {
        let mut names: Vec<String> = self
            .tables
            .read()
            .map_err(|_| poisoned())?
            .keys()
            .cloned()
            .collect();
        names.sort();
        Ok(names)
    }

    fn put(&self, table: &str, rows: &[Row]) -> Result<()> {
        let handle = self.table(table)?;
        // (family, key) -> the stored cell block (read on first touch) and the
        // new cells (borrowed; the last value of a qualifier wins). They are
        // merged when encoding, without decoding the stored block into owned
        // cells: posting rows hold thousands of cells and get a few new ones
        // per put.
        type Pending<'r> = (Option<fjall::UserValue>, NewCells<'r>);
        let mut pending: BTreeMap<(&str, &[u8]), Pending<'_>> = BTreeMap::new();
        let _guard = self.write_lock.lock().map_err(|_| poisoned())?;
        for row in rows {
            if row.key.is_empty() {
                return Err(Error::BadKey {
                    key: Vec::new(),
                    reason: "row keys must not be empty",
                });
            }
            for cell in &row.cells {
                let (fname, ks) = handle.family(table, &cell.family)?;
                let slot = match pending.entry((fname.as_str(), row.key.as_slice())) {
                    std::collections::btree_map::Entry::Occupied(o) => o.into_mut(),
                    std::collections::btree_map::Entry::Vacant(v) => {
                        let stored = ks
                            .get(&row.key)
                            .map_err(|e| Error::backend("read row", e))?;
                        v.insert((stored, BTreeMap::new()))
                    }
                };
                slot.1
                    .insert(cell.qualifier.as_slice(), cell.value.as_slice());
            }
        }
        if pending.is_empty() {
            return Ok(());
        }
        let mut batch = fjall::OwnedWriteBatch::with_capacity(self.db.clone(), pending.len())
            .durability(Some(self.options.durability.persist_mode()));
        for ((family, key), (stored, new)) in &pending {
            if let Some(ks) = handle.families.get(*family) {
                let value = merge_cells(key, stored.as_deref().unwrap_or_default(), new)?;
                batch.insert(ks, *key, value);
            }
        }
        batch
            .commit()
            .map_err(|e| self.write_error(format!("put {} rows into {table}", rows.len()), e))?;
        tracing::debug!(table, rows = rows.len(), "put");
        Ok(())
    }

    fn get(&self, table: &str, keys: &[Vec<u8>], families: &[&str]) -> Result<Vec<Option<Row>>> {
        let handle = self.table(table)?;
        let fams = Self::pick_families(table, &handle, families.iter().copied())?;
        let mut out = Vec::with_capacity(keys.len());
        for key in keys {
            let mut row = Row::new(key.clone());
            for (fname, ks) in &fams {
                if let Some(cells) = Self::read_family(ks, key)? {
                    row.cells.extend(cells.into_iter().map(|(q, v)| Cell {
                        family: (*fname).to_owned(),
                        qualifier: q,
                        value: v,
                    }));
                }
            }
            out.push(if row.cells.is_empty() {
                None
            } else {
                Some(row)
            });
        }
        Ok(out)
    }

    fn scan(&self, table: &str, scan: &Scan) -> Result<Vec<Row>> {
        let handle = self.table(table)?;
        let requested =
            Self::pick_families(table, &handle, scan.families.iter().map(String::as_str))?;
        let all = Self::pick_families(
            table,
            &handle,
            requested
                .iter()
                .map(|(n, _)| *n)
                .chain(scan.filters.iter().map(|f| f.family.as_str())),
        )?;
        let upper = if scan.stop.is_empty() {
            Bound::Unbounded
        } else {
            Bound::Excluded(scan.stop.as_slice())
        };
        if !scan.stop.is_empty() && scan.stop <= scan.start {
            return Ok(Vec::new());
        }
        if let [(fname, ks)] = all.as_slice() {
            // One family (the common case): no merge of cursors needed.
            let mut out = Vec::new();
            for item in ks.range::<&[u8], _>((Bound::Included(scan.start.as_slice()), upper)) {
                let (k, v) = item.into_inner().map_err(|e| Error::backend("scan", e))?;
                let mut row = Row {
                    key: k.to_vec(),
                    cells: Vec::new(),
                };
                decode_cells_into(&k, &v, fname, &mut row.cells)?;
                if row.cells.is_empty() || !scan.filters.iter().all(|f| f.matches(&row)) {
                    continue;
                }
                out.push(row);
                if scan.limit.is_some_and(|l| out.len() >= l) {
                    break;
                }
            }
            return Ok(out);
        }
        let mut iters: Vec<FamilyCursor<'_>> = Vec::new();
        for (fname, ks) in &all {
            let mut it: KvIter = Box::new(
                ks.range::<&[u8], _>((Bound::Included(scan.start.as_slice()), upper))
                    .map(|g| g.into_inner().map_err(|e| Error::backend("scan", e))),
            );
            let first = it.next().transpose()?;
            iters.push((fname, it, first));
        }
        let mut out = Vec::new();
        loop {
            let Some(min) = iters
                .iter()
                .filter_map(|(_, _, cur)| cur.as_ref().map(|(k, _)| k.clone()))
                .min()
            else {
                break;
            };
            let mut row = Row::new(min.to_vec());
            for (fname, it, cur) in iters.iter_mut() {
                if cur.as_ref().is_some_and(|(k, _)| *k == min) {
                    if let Some((_, v)) = cur.take() {
                        for (q, val) in decode_cells(&min, &v)? {
                            row.cells.push(Cell {
                                family: (*fname).to_owned(),
                                qualifier: q,
                                value: val,
                            });
                        }
                    }
                    *cur = it.next().transpose()?;
                }
            }
            if !scan.filters.iter().all(|f| f.matches(&row)) {
                continue;
            }
            if all.len() != requested.len() {
                row.cells
                    .retain(|c| requested.iter().any(|(n, _)| *n == c.family));
            }
            if row.cells.is_empty() {
                continue;
            }
            out.push(row);
            if scan.limit.is_some_and(|l| out.len() >= l) {
                break;
            }
        }
        Ok(out)
    }

    fn scan_each(
        &self,
        table: &str,
        scan: &Scan,
        visit: &mut dyn FnMut(&Row) -> bool,
    ) -> Result<()> {
        let handle = self.table(table)?;
        let requested =
            Self::pick_families(table, &handle, scan.families.iter().map(String::as_str))?;
        let one_family = requested.len() == 1
            && scan
                .filters
                .iter()
                .all(|f| requested.iter().any(|(n, _)| *n == f.family));
        let [(fname, ks)] = requested.as_slice() else {
            visit_rows(self.scan(table, scan)?, visit);
            return Ok(());
        };
        if !one_family {
            visit_rows(self.scan(table, scan)?, visit);
            return Ok(());
        }
        if !scan.stop.is_empty() && scan.stop <= scan.start {
            return Ok(());
        }
        let upper = if scan.stop.is_empty() {
            Bound::Unbounded
        } else {
            Bound::Excluded(scan.stop.as_slice())
        };
        // One row buffer for the whole scan: its key and cells are overwritten.
        let mut row = Row::default();
        let mut matched = 0usize;
        for item in ks.range::<&[u8], _>((Bound::Included(scan.start.as_slice()), upper)) {
            let (k, v) = item.into_inner().map_err(|e| Error::backend("scan", e))?;
            row.key.clear();
            row.key.extend_from_slice(&k);
            decode_cells_reuse(&v, fname, &mut row)?;
            if row.cells.is_empty() || !scan.filters.iter().all(|f| f.matches(&row)) {
                continue;
            }
            matched += 1;
            if !visit(&row) || scan.limit.is_some_and(|l| matched >= l) {
                break;
            }
        }
        Ok(())
    }

    fn delete(&self, table: &str, keys: &[Vec<u8>]) -> Result<()> {
        let handle = self.table(table)?;
        if keys.is_empty() {
            return Ok(());
        }
        let _guard = self.write_lock.lock().map_err(|_| poisoned())?;
        let mut batch = fjall::OwnedWriteBatch::with_capacity(
            self.db.clone(),
            keys.len() * handle.families.len(),
        )
        .durability(Some(self.options.durability.persist_mode()));
        for key in keys {
            for ks in handle.families.values() {
                batch.remove(ks, key.as_slice());
            }
        }
        batch
            .commit()
            .map_err(|e| self.write_error(format!("delete {} rows from {table}", keys.len()), e))
    }

    fn delete_cells(&self, table: &str, rows: &[Row]) -> Result<()> {
        let handle = self.table(table)?;
        // (family, key) -> remaining cells; seeded from the store on first touch.
        let mut pending: BTreeMap<(&str, &[u8]), Option<CellMap>> = BTreeMap::new();
        let _guard = self.write_lock.lock().map_err(|_| poisoned())?;
        for row in rows {
            for cell in &row.cells {
                let (fname, ks) = handle.family(table, &cell.family)?;
                let slot = match pending.entry((fname.as_str(), row.key.as_slice())) {
                    std::collections::btree_map::Entry::Occupied(o) => o.into_mut(),
                    std::collections::btree_map::Entry::Vacant(v) => {
                        v.insert(Self::read_family(ks, &row.key)?)
                    }
                };
                if let Some(cells) = slot {
                    cells.remove(&cell.qualifier);
                }
            }
        }
        let mut batch = fjall::OwnedWriteBatch::with_capacity(self.db.clone(), pending.len())
            .durability(Some(self.options.durability.persist_mode()));
        let mut changed = 0usize;
        for ((family, key), cells) in &pending {
            let (Some(ks), Some(cells)) = (handle.families.get(*family), cells) else {
                continue;
            };
            changed += 1;
            if cells.is_empty() {
                batch.remove(ks, *key);
            } else {
                batch.insert(ks, *key, encode_cells(cells));
            }
        }
        if changed == 0 {
            return Ok(());
        }
        batch.commit().map_err(|e| {
            self.write_error(format!("delete cells of {} rows in {table}", rows.len()), e)
        })
    }

    /// One fjall write batch across every keyspace the mutations touch:
    /// the batch is visible wholly or not at all, also after a crash. Each
    /// mutation sees the ones before it (a delete then a put of one row
    /// leaves the put's cells).
    fn apply(&self, mutations: &[Mutation]) -> Result<()> {
        // (keyspace, key) -> the row's family block as the batch leaves it
        // (`None`: deleted), read from the store on first touch.
        let mut overlay: Overlay = BTreeMap::new();
        fn slot<'o>(
            overlay: &'o mut Overlay,
            name: &str,
            ks: &Keyspace,
            key: &[u8],
        ) -> Result<&'o mut Option<Vec<u8>>> {
            let k = (name.to_owned(), key.to_vec());
            if !overlay.contains_key(&k) {
                let stored = ks
                    .get(key)
                    .map_err(|e| Error::backend("read row", e))?
                    .map(|v| v.to_vec());
                overlay.insert(k.clone(), (ks.clone(), stored));
            }
            Ok(&mut overlay.get_mut(&k).expect("inserted above").1)
        }
        let _guard = self.write_lock.lock().map_err(|_| poisoned())?;
        for m in mutations {
            match m {
                Mutation::Put { table, rows } => {
                    let handle = self.table(table)?;
                    for row in rows {
                        if row.key.is_empty() {
                            return Err(Error::BadKey {
                                key: Vec::new(),
                                reason: "row keys must not be empty",
                            });
                        }
                        let mut by_family: BTreeMap<&str, NewCells<'_>> = BTreeMap::new();
                        for cell in &row.cells {
                            by_family
                                .entry(cell.family.as_str())
                                .or_default()
                                .insert(cell.qualifier.as_slice(), cell.value.as_slice());
                        }
                        for (family, new) in by_family {
                            let (fname, ks) = handle.family(table, family)?;
                            let name = keyspace_name(table, fname);
                            let current = slot(&mut overlay, &name, ks, &row.key)?;
                            let merged = merge_cells(
                                &row.key,
                                current.as_deref().unwrap_or_default(),
                                &new,
                            )?;
                            *current = Some(merged);
                        }
                    }
                }
                Mutation::Delete { table, keys } => {
                    let handle = self.table(table)?;
                    for key in keys {
                        for (fname, ks) in &handle.families {
                            let name = keyspace_name(table, fname);
                            *slot(&mut overlay, &name, ks, key)? = None;
                        }
                    }
                }
                Mutation::DeleteCells { table, rows } => {
                    let handle = self.table(table)?;
                    for row in rows {
                        for cell in &row.cells {
                            let (fname, ks) = handle.family(table, &cell.family)?;
                            let name = keyspace_name(table, fname);
                            let current = slot(&mut overlay, &name, ks, &row.key)?;
                            let Some(block) = current.as_deref() else {
                                continue;
                            };
                            let mut cells = decode_cells(&row.key, block)?;
                            if cells.remove(&cell.qualifier).is_some() {
                                *current = (!cells.is_empty()).then(|| encode_cells(&cells));
                            }
                        }
                    }
                }
            }
        }
        if overlay.is_empty() {
            return Ok(());
        }
        let mut batch = fjall::OwnedWriteBatch::with_capacity(self.db.clone(), overlay.len())
            .durability(Some(self.options.durability.persist_mode()));
        for ((_, key), (ks, value)) in &overlay {
            match value {
                Some(v) => batch.insert(ks, key.as_slice(), v.as_slice()),
                None => batch.remove(ks, key.as_slice()),
            }
        }
        batch.commit().map_err(|e| {
            self.write_error(format!("apply a batch of {} writes", mutations.len()), e)
        })?;
        tracing::debug!(
            writes = mutations.len(),
            rows = overlay.len(),
            "batch applied"
        );
        Ok(())
    }

    fn atomic_apply(&self) -> bool {
        true
    }

    fn regions(&self, table: &str) -> Result<Vec<Region>> {
        Ok(bucket_regions(self.table(table)?.meta.buckets))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A full disk is named with the store's folder, and so is fjall's
    /// "Poisoned" answer to every write after it (issue 40 item 3).
    #[test]
    fn failed_writes_name_the_folder_and_the_disk_condition() -> Result<()> {
        let dir = tempfile::tempdir().map_err(|e| Error::backend("tempdir", e))?;
        let store = EmbeddedStore::open(dir.path())?;
        let folder = dir.path().display().to_string();
        let full = std::io::Error::from(std::io::ErrorKind::StorageFull);
        let first = store.write_error("put 3 rows into pages", fjall::Error::Io(full));
        assert!(
            matches!(&first, Error::Disk { condition: DiskCondition::NoSpace, path, .. } if *path == folder),
            "{first:?}"
        );
        let text = first.to_string();
        assert!(text.contains("no space left on device"), "{text}");
        assert!(text.contains(&format!("index folder {folder}")), "{text}");
        let later = store.write_error("apply a batch of 9 writes", fjall::Error::Poisoned);
        assert!(
            matches!(
                &later,
                Error::Disk {
                    condition: DiskCondition::NoSpace,
                    ..
                }
            ),
            "{later:?}"
        );
        let text = later.to_string();
        assert!(text.contains("apply a batch of 9 writes"), "{text}");
        assert!(text.contains("an earlier write failed"), "{text}");
        // A store that did not see the failure probes its folder: a
        // writable one is not called full.
        let other = EmbeddedStore::open(dir.path().join("other"))?;
        let unknown = other.write_error("persist journal", fjall::Error::Poisoned);
        assert!(
            matches!(
                &unknown,
                Error::Disk {
                    condition: DiskCondition::Failed,
                    ..
                }
            ),
            "{unknown:?}"
        );
        assert!(unknown.to_string().contains("may be full"), "{unknown}");
        Ok(())
    }

    #[test]
    fn cell_block_round_trips_binary() {
        let mut cells = BTreeMap::new();
        cells.insert(vec![0u8, 0xff], vec![]);
        cells.insert(b"title".to_vec(), "Berlin – Brüssel".as_bytes().to_vec());
        let enc = encode_cells(&cells);
        assert_eq!(decode_cells(b"k", &enc).ok(), Some(cells));
        assert!(decode_cells(b"k", &enc[..enc.len() - 1]).is_err());
    }

    #[test]
    fn merged_blocks_equal_merged_maps() -> Result<()> {
        let stored: CellMap = [
            (b"b".to_vec(), b"1".to_vec()),
            (b"d".to_vec(), b"2".to_vec()),
            (vec![0xff], vec![]),
        ]
        .into_iter()
        .collect();
        let block = encode_cells(&stored);
        let new: BTreeMap<&[u8], &[u8]> = [(&b"a"[..], &b"x"[..]), (b"d", b"y"), (b"e", b"")]
            .into_iter()
            .collect();
        let mut want = stored.clone();
        want.extend(new.iter().map(|(q, v)| (q.to_vec(), v.to_vec())));
        assert_eq!(merge_cells(b"k", &block, &new)?, encode_cells(&want));
        assert_eq!(
            merge_cells(b"k", &[], &new)?,
            encode_cells(&new.iter().map(|(q, v)| (q.to_vec(), v.to_vec())).collect())
        );
        assert_eq!(merge_cells(b"k", &block, &BTreeMap::new())?, block);
        assert!(
            merge_cells(b"k", &block[..block.len() - 2], &new).is_err(),
            "truncated block"
        );
        Ok(())
    }

    #[test]
    fn ingest_merges_cells_like_put() -> Result<()> {
        let dir = tempfile::tempdir().map_err(|e| Error::backend("tempdir", e))?;
        let store = EmbeddedStore::open(dir.path())?;
        store.create_table("t", &["a", "i"], 2)?;
        let row =
            |q: &[u8], v: &[u8]| Row::new(b"\x01k".to_vec()).with("i", q.to_vec(), v.to_vec());
        store.put("t", &[row(b"p", b"put")])?;
        store.ingest("t", &[row(b"x", b"1"), row(b"y", b"2")])?;
        store.ingest(
            "t",
            &[
                row(b"y", b"3"),
                Row::new(b"\x01z".to_vec()).with("a", b"q".to_vec(), b"v".to_vec()),
            ],
        )?;
        let got = store.get("t", &[b"\x01k".to_vec(), b"\x01z".to_vec()], &[])?;
        let cells = |r: &Option<Row>| -> Vec<(Vec<u8>, Vec<u8>)> {
            r.iter()
                .flat_map(|r| {
                    r.cells
                        .iter()
                        .map(|c| (c.qualifier.clone(), c.value.clone()))
                })
                .collect()
        };
        assert_eq!(
            cells(&got[0]),
            vec![
                (b"p".to_vec(), b"put".to_vec()),
                (b"x".to_vec(), b"1".to_vec()),
                (b"y".to_vec(), b"3".to_vec())
            ],
            "stored and earlier ingested cells kept, the newest value wins"
        );
        assert_eq!(cells(&got[1]), vec![(b"q".to_vec(), b"v".to_vec())]);
        Ok(())
    }

    #[test]
    fn names_are_checked() {
        assert!(valid_name("sina_news_2017").is_ok());
        assert!(valid_name("Sina").is_err());
        assert!(valid_name("a.b").is_err());
        assert!(valid_name("").is_err());
    }
}
