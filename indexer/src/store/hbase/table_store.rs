//! The [`TableStore`] impl of the HBase store: table creation and listing
//! here; reads (`reads`) and writes and batches (`writes`) are the store's
//! methods in their own modules.

use super::super::api::{bucket_regions, Mutation as BatchWrite, Region, Row, Scan, TableStore};
use super::super::embedded::checked_layout;
use super::client::{HbaseStore, TableMeta};
use super::errors::poisoned;
use super::tables::META_TABLE;
use crate::error::{Error, Result};

impl TableStore for HbaseStore {
    fn remote(&self) -> bool {
        true
    }

    fn create_table(&self, name: &str, families: &[&str], buckets: u8) -> Result<()> {
        let fams = checked_layout(name, families, buckets)?;
        let wanted = TableMeta {
            families: fams,
            buckets,
        };
        let existing = match self.table_meta(name) {
            Ok(m) => Some(m),
            Err(Error::NoSuchTable(_)) => None,
            Err(e) => return Err(e),
        };
        let existing = match existing {
            Some(m) => Some(m),
            None => {
                if self.create_hbase_table(name, &wanted.families, buckets)? {
                    None
                } else {
                    // Created concurrently by someone else: compare with theirs.
                    Some(self.table_meta(name)?)
                }
            }
        };
        if let Some(m) = existing {
            let stored = self.stored_buckets(name)?;
            let same_families = m.families == wanted.families;
            let same_buckets = stored.is_none_or(|b| b == buckets);
            if !(same_families && same_buckets) {
                return Err(Error::TableMismatch {
                    table: name.to_owned(),
                    detail: format!(
                        "existing families {:?} buckets {}, requested {:?} buckets {}",
                        m.families,
                        stored.map_or_else(|| "?".to_owned(), |b| b.to_string()),
                        wanted.families,
                        wanted.buckets
                    ),
                });
            }
            if stored.is_some() {
                return Ok(());
            }
        }
        self.store_layout(name, &wanted)?;
        self.tables
            .lock()
            .map_err(|_| poisoned())?
            .insert(name.to_owned(), wanted);
        Ok(())
    }

    fn list_tables(&self) -> Result<Vec<String>> {
        let mut names: Vec<String> = self
            .hbase_tables()?
            .into_iter()
            .filter(|n| n != META_TABLE && !n.contains(':'))
            .collect();
        names.sort();
        Ok(names)
    }

    fn put(&self, table: &str, rows: &[Row]) -> Result<()> {
        self.mutate_cells(table, rows, false)?;
        tracing::debug!(table, rows = rows.len(), "put");
        Ok(())
    }

    fn get(&self, table: &str, keys: &[Vec<u8>], families: &[&str]) -> Result<Vec<Option<Row>>> {
        self.get_rows(table, keys, families)
    }

    fn scan(&self, table: &str, scan: &Scan) -> Result<Vec<Row>> {
        self.scan_rows(table, scan)
    }

    fn delete(&self, table: &str, keys: &[Vec<u8>]) -> Result<()> {
        self.delete_rows_at(table, keys, None)
    }
    fn apply(&self, mutations: &[BatchWrite]) -> Result<()> {
        self.apply_side_by_side(mutations)
    }

    fn delete_cells(&self, table: &str, rows: &[Row]) -> Result<()> {
        self.mutate_cells(table, rows, true)
    }

    fn regions(&self, table: &str) -> Result<Vec<Region>> {
        Ok(bucket_regions(self.table_meta(table)?.buckets))
    }
}
