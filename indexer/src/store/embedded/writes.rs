//! Writes: puts that merge cells into the stored blocks, deletes of rows and
//! of cells, and atomic batches (one fjall write batch for every write of
//! an index batch), each under the store's write lock.

use std::collections::BTreeMap;

use fjall::Keyspace;

use super::super::api::{Mutation, Row};
use super::cells::{decode_cells, encode_cells, merge_cells, CellMap, NewCells};
use super::database::{poisoned, EmbeddedStore};
use super::layout::keyspace_name;
use crate::error::{Error, Result};

/// A batch's view of the rows it touches: (keyspace, key) -> the keyspace
/// and the row's family block as the batch leaves it (`None`: deleted).
type Overlay = BTreeMap<(String, Vec<u8>), (Keyspace, Option<Vec<u8>>)>;

impl EmbeddedStore {
    pub(super) fn put_rows(&self, table: &str, rows: &[Row]) -> Result<()> {
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

    pub(super) fn delete_rows(&self, table: &str, keys: &[Vec<u8>]) -> Result<()> {
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

    pub(super) fn delete_row_cells(&self, table: &str, rows: &[Row]) -> Result<()> {
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
    pub(super) fn apply_batch(&self, mutations: &[Mutation]) -> Result<()> {
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
}
