//! The [`TableStore`] impl of the embedded store: table creation and
//! listing here; reads and scans (`reads`) and writes and batches
//! (`writes`) are the store's methods in their own modules.

use super::super::api::{bucket_regions, Mutation, Region, Row, Scan, TableStore};
use super::database::{poisoned, EmbeddedStore};
use super::layout::{checked_layout, TableMeta};
use crate::error::{Error, Result};

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
        self.put_rows(table, rows)
    }

    fn get(&self, table: &str, keys: &[Vec<u8>], families: &[&str]) -> Result<Vec<Option<Row>>> {
        self.get_rows(table, keys, families)
    }

    fn scan(&self, table: &str, scan: &Scan) -> Result<Vec<Row>> {
        self.scan_rows(table, scan)
    }

    fn scan_each(
        &self,
        table: &str,
        scan: &Scan,
        visit: &mut dyn FnMut(&Row) -> bool,
    ) -> Result<()> {
        self.scan_each_row(table, scan, visit)
    }

    fn delete(&self, table: &str, keys: &[Vec<u8>]) -> Result<()> {
        self.delete_rows(table, keys)
    }

    fn delete_cells(&self, table: &str, rows: &[Row]) -> Result<()> {
        self.delete_row_cells(table, rows)
    }

    fn apply(&self, mutations: &[Mutation]) -> Result<()> {
        self.apply_batch(mutations)
    }

    fn atomic_apply(&self) -> bool {
        true
    }

    fn regions(&self, table: &str) -> Result<Vec<Region>> {
        Ok(bucket_regions(self.table(table)?.meta.buckets))
    }
}
