//! The store itself: its fjall database and options, opening it (and the
//! tables recorded in it), the table handles and locks the other parts use,
//! flushing the journal, and the disk-aware error of a failed write.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::{Mutex, RwLock};

use fjall::{Database, Keyspace, KeyspaceCreateOptions, PersistMode};

use super::disk::{io_cause, probe_write};
use super::layout::{keyspace_name, keyspace_options, TableHandle, TableMeta, META_KEYSPACE};
use crate::error::{DiskCondition, Error, Result};

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
    pub(super) fn persist_mode(self) -> PersistMode {
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

/// The embedded table store (a folder holding a fjall database).
pub struct EmbeddedStore {
    pub(super) db: Database,
    /// The store's folder (named by errors of writes to it).
    pub(super) path: std::path::PathBuf,
    /// The first failed write's I/O error (kind, text): fjall refuses every
    /// write after one ("Poisoned") without saying why.
    pub(super) first_failure: Mutex<Option<(std::io::ErrorKind, String)>>,
    pub(super) meta: Keyspace,
    pub(super) tables: RwLock<HashMap<String, std::sync::Arc<TableHandle>>>,
    pub(super) write_lock: Mutex<()>,
    pub(super) options: EmbeddedOptions,
}

impl std::fmt::Debug for EmbeddedStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EmbeddedStore")
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

impl EmbeddedStore {
    /// Opens (or creates) a store in the folder `path`, power-loss durable.
    pub fn open(path: impl AsRef<Path>) -> Result<Self> {
        Self::open_with(path, EmbeddedOptions::default())
    }

    /// Opens (or creates) a store with explicit options.
    ///
    /// Every keyspace's memtable is flushed at [`MAX_MEMTABLE_BYTES`](super::MAX_MEMTABLE_BYTES): fjall's
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

    pub(super) fn open_families(
        db: &Database,
        table: &str,
        meta: TableMeta,
    ) -> Result<TableHandle> {
        let mut families = BTreeMap::new();
        for f in &meta.families {
            let ks = db
                .keyspace(&keyspace_name(table, f), keyspace_options)
                .map_err(|e| Error::backend(format!("open keyspace for {table}:{f}"), e))?;
            families.insert(f.clone(), ks);
        }
        Ok(TableHandle { meta, families })
    }

    pub(super) fn table(&self, name: &str) -> Result<std::sync::Arc<TableHandle>> {
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
}

impl EmbeddedStore {
    /// A failed write as [`Error::Disk`]: the store's folder, what its disk
    /// refused the write for and the cause. fjall answers every write after
    /// a failed one with `Poisoned`; that error names the first failure (or,
    /// when this store did not see it, what a probe write in the folder
    /// meets now).
    pub(super) fn write_error(&self, context: impl Into<String>, e: fjall::Error) -> Error {
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

pub(super) fn poisoned() -> Error {
    Error::Invalid("embedded store lock poisoned by a panicking thread".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A full disk is named with the store's folder, and so is fjall's
    /// "Poisoned" answer to every write after it.
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
}
