//! Tables and their layouts on the server: creating HBase tables (pre-split
//! through the Thrift 2 admin when there is one), the layout table
//! [`META_TABLE`] that keeps each table's bucket count, reading a table's
//! layout back, its regions, and dropping a table.

use std::collections::BTreeMap;

use hbase_thrift::hbase::{
    AlreadyExists, BatchMutation, ColumnDescriptor, IOError, Mutation, THbaseSyncClient,
};

use super::super::api::{bucket_regions, Region};
use super::client::{HbaseStore, TableMeta};
use super::columns::{column, to_row, COLUMN_SEP};
use super::errors::{backend, is_transport, poisoned};
use super::thrift2::bucket_split_keys;
use crate::error::{Error, Result};

/// Table holding the layout (bucket count, families) of every table created
/// through this store. A `.` cannot appear in a harvest table name, so it
/// never collides; it is hidden from [`TableStore::list_tables`].
///
/// [`TableStore::list_tables`]: super::super::TableStore::list_tables
pub const META_TABLE: &str = "harvest.tables";
/// Family of [`META_TABLE`].
pub(super) const META_FAMILY: &str = "m";
/// Qualifier holding the bucket count (one byte).
const META_BUCKETS: &[u8] = b"buckets";
/// Qualifier holding the families (JSON list, informational).
const META_FAMILIES: &[u8] = b"families";
/// Compression and bloom filter names for new column families.
const NONE: &str = "NONE";
/// HBase's "forever" time to live.
const TTL_FOREVER: i32 = i32::MAX;
/// HBase's exception class for an existing table (inside an IOError message).
const TABLE_EXISTS: &str = "TableExistsException";

impl HbaseStore {
    /// Whether the table's HBase regions are exactly its salt buckets (one
    /// region per bucket, as created with a Thrift 2 admin).
    pub fn is_pre_split(&self, table: &str) -> Result<bool> {
        let buckets = self.table_meta(table)?.buckets;
        Ok(self.server_regions(table)? == bucket_regions(buckets))
    }

    /// The table's physical HBase regions (`getTableRegions`), in key order.
    pub fn server_regions(&self, table: &str) -> Result<Vec<Region>> {
        self.table_meta(table)?;
        let mut regions: Vec<Region> = self
            .call("getTableRegions", |c| {
                c.get_table_regions(table.as_bytes().to_vec())
            })?
            .into_iter()
            .map(|r| Region {
                start: r.start_key.unwrap_or_default(),
                end: r.end_key.unwrap_or_default(),
            })
            .collect();
        regions.sort_by(|a, b| a.start.cmp(&b.start));
        Ok(regions)
    }

    /// Drops a table (disable + delete) and its layout row; missing tables are ignored.
    pub fn drop_table(&self, table: &str) -> Result<()> {
        if self.hbase_tables()?.iter().any(|t| t == table) {
            // Disabling an already disabled table fails; ignore that and delete.
            let _ = self.call("disableTable", |c| {
                c.disable_table(table.as_bytes().to_vec())
            });
            self.call("deleteTable", |c| c.delete_table(table.as_bytes().to_vec()))?;
        }
        let ts = self.next_ts();
        let delete = BatchMutation::new(
            table.as_bytes().to_vec(),
            vec![Mutation::new(
                true,
                META_FAMILY.as_bytes().to_vec(),
                None,
                true,
            )],
        );
        self.mutate_rows_ts(META_TABLE, &[delete], ts)?;
        self.tables.lock().map_err(|_| poisoned())?.remove(table);
        Ok(())
    }

    pub(super) fn hbase_tables(&self) -> Result<Vec<String>> {
        Ok(self
            .call("getTableNames", |c| c.get_table_names())?
            .into_iter()
            .map(|n| String::from_utf8_lossy(&n).into_owned())
            .collect())
    }

    /// Creates an HBase table, pre-split into one region per bucket through
    /// the Thrift 2 admin when there is one; `Ok(false)` if it already existed.
    pub(super) fn create_hbase_table(
        &self,
        name: &str,
        families: &[String],
        buckets: u8,
    ) -> Result<bool> {
        if let Some(admin) = &self.admin {
            return admin.create_table(name, families, &bucket_split_keys(buckets));
        }
        if buckets > 1 {
            tracing::warn!(
                table = name,
                buckets,
                "creating the table with ONE region: Thrift 1 cannot pre-split; set [index] thrift2 \
                 (HBase's Thrift 2 server) or pre-split with deploy/cluster/create-tables.sh"
            );
        }
        let descriptors: Vec<ColumnDescriptor> = families
            .iter()
            .map(|f| ColumnDescriptor {
                name: Some(column(f, b"")),
                max_versions: Some(1),
                compression: Some(NONE.to_owned()),
                in_memory: Some(false),
                bloom_filter_type: Some(NONE.to_owned()),
                bloom_filter_vector_size: Some(0),
                bloom_filter_nb_hashes: Some(0),
                block_cache_enabled: Some(true),
                time_to_live: Some(TTL_FOREVER),
            })
            .collect();
        let mut attempt = 0u32;
        loop {
            let r = self.checkout().and_then(|mut c| {
                let r = c.create_table(name.as_bytes().to_vec(), descriptors.clone());
                if r.as_ref().err().is_none_or(|e| !is_transport(e)) {
                    self.checkin(c);
                }
                r
            });
            match r {
                Ok(()) => {
                    tracing::info!(table = name, families = ?families, "hbase table created");
                    return Ok(true);
                }
                // HBase 2.6's handler lets a concurrent create's
                // TableExistsException through as an IOError.
                Err(thrift::Error::User(u))
                    if u.downcast_ref::<AlreadyExists>().is_some()
                        || u.downcast_ref::<IOError>().is_some_and(|io| {
                            io.message
                                .as_deref()
                                .is_some_and(|m| m.contains(TABLE_EXISTS))
                        }) =>
                {
                    return Ok(false)
                }
                Err(e) if is_transport(&e) && attempt < self.options.retries => {
                    std::thread::sleep(self.prepare_retry(&mut attempt));
                }
                Err(e) => return Err(backend(format!("createTable {name}"), &e)),
            }
        }
    }

    /// Families of an existing HBase table, sorted.
    pub(super) fn hbase_families(&self, table: &str) -> Result<Vec<String>> {
        let descs = self.call("getColumnDescriptors", |c| {
            c.get_column_descriptors(table.as_bytes().to_vec())
        })?;
        let mut fams: Vec<String> = descs
            .keys()
            .map(|n| {
                let n = n.strip_suffix(&[COLUMN_SEP]).unwrap_or(n);
                String::from_utf8_lossy(n).into_owned()
            })
            .collect();
        fams.sort();
        Ok(fams)
    }

    /// Bucket count stored in the layout table, if any.
    pub(super) fn stored_buckets(&self, table: &str) -> Result<Option<u8>> {
        let rows = self.call("getRowsWithColumns", |c| {
            c.get_rows_with_columns(
                META_TABLE.as_bytes().to_vec(),
                vec![table.as_bytes().to_vec()],
                vec![column(META_FAMILY, META_BUCKETS)],
                BTreeMap::new(),
            )
        })?;
        Ok(rows.into_iter().map(to_row).find_map(|r| {
            r.cell(META_FAMILY, META_BUCKETS)
                .and_then(|v| v.first().copied())
        }))
    }

    pub(super) fn store_layout(&self, table: &str, meta: &TableMeta) -> Result<()> {
        let ts = self.next_ts();
        let families = serde_json::to_vec(&meta.families)?;
        let row = BatchMutation::new(
            table.as_bytes().to_vec(),
            vec![
                Mutation::new(
                    false,
                    column(META_FAMILY, META_BUCKETS),
                    vec![meta.buckets],
                    true,
                ),
                Mutation::new(false, column(META_FAMILY, META_FAMILIES), families, true),
            ],
        );
        self.mutate_rows_ts(META_TABLE, &[row], ts)
    }

    /// The layout of a table (cached); [`Error::NoSuchTable`] if it does not exist.
    pub(super) fn table_meta(&self, table: &str) -> Result<TableMeta> {
        if let Some(m) = self.tables.lock().map_err(|_| poisoned())?.get(table) {
            return Ok(m.clone());
        }
        if table == META_TABLE || !self.hbase_tables()?.iter().any(|t| t == table) {
            return Err(Error::NoSuchTable(table.to_owned()));
        }
        let families = self.hbase_families(table)?;
        // A table made outside this store (or whose layout row was lost) has one bucket.
        let buckets = self.stored_buckets(table)?.unwrap_or(1);
        let meta = TableMeta { families, buckets };
        self.tables
            .lock()
            .map_err(|_| poisoned())?
            .insert(table.to_owned(), meta.clone());
        Ok(meta)
    }

    pub(super) fn check_families<'a>(
        table: &str,
        meta: &TableMeta,
        families: impl IntoIterator<Item = &'a str>,
    ) -> Result<()> {
        for f in families {
            if !meta.families.iter().any(|m| m == f) {
                return Err(Error::NoSuchFamily {
                    table: table.to_owned(),
                    family: f.to_owned(),
                });
            }
        }
        Ok(())
    }
}
