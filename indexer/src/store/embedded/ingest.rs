//! Bulk loading: ingesting rows as new sorted runs past the journal, and
//! compacting every keyspace afterwards.

use std::collections::BTreeMap;

use fjall::Keyspace;

use super::super::api::Row;
use super::cells::{merge_cells, NewCells};
use super::database::{poisoned, EmbeddedStore};
use super::layout::TableHandle;
use crate::error::{Error, Result};

/// A key and its encoded cell block, ready for ingestion.
type KeyValue<'a> = (&'a [u8], Vec<u8>);

impl EmbeddedStore {
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
}

#[cfg(test)]
mod tests {
    use super::super::super::api::TableStore;
    use super::*;

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
}
