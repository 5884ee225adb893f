//! Reads: gets of rows in batches, and scans that resume after the last row
//! received when the connection breaks.

use std::collections::{BTreeMap, HashMap};
use std::time::Instant;

use hbase_thrift::hbase::{THbaseSyncClient, TScan};

use super::super::api::{Row, Scan};
use super::client::HbaseStore;
use super::columns::{column, filter_string, to_row};
use super::errors::{backend, describe, is_transport, ThriftError, SERVICE};
use crate::error::{Error, Result};

impl HbaseStore {
    pub(super) fn get_rows(
        &self,
        table: &str,
        keys: &[Vec<u8>],
        families: &[&str],
    ) -> Result<Vec<Option<Row>>> {
        let meta = self.table_meta(table)?;
        Self::check_families(table, &meta, families.iter().copied())?;
        let mut columns: Vec<Vec<u8>> = families.iter().map(|f| f.as_bytes().to_vec()).collect();
        columns.sort();
        columns.dedup();
        let mut found: HashMap<Vec<u8>, Row> = HashMap::new();
        let started = Instant::now();
        for chunk in keys.chunks(self.options.max_batch_rows.max(1)) {
            let rows = self.call("getRowsWithColumns", |c| {
                c.get_rows_with_columns(
                    table.as_bytes().to_vec(),
                    chunk.to_vec(),
                    columns.clone(),
                    BTreeMap::new(),
                )
            })?;
            for r in rows {
                let row = to_row(r);
                if !row.cells.is_empty() {
                    found.insert(row.key.clone(), row);
                }
            }
        }
        tracing::trace!(
            table,
            rows = keys.len(),
            ms = started.elapsed().as_secs_f64() * 1e3,
            "get"
        );
        Ok(keys.iter().map(|k| found.get(k).cloned()).collect())
    }

    pub(super) fn scan_rows(&self, table: &str, scan: &Scan) -> Result<Vec<Row>> {
        let meta = self.table_meta(table)?;
        Self::check_families(
            table,
            &meta,
            scan.families
                .iter()
                .map(String::as_str)
                .chain(scan.filters.iter().map(|f| f.family.as_str())),
        )?;
        if !scan.stop.is_empty() && scan.stop <= scan.start {
            return Ok(Vec::new());
        }
        if scan.limit == Some(0) {
            return Ok(Vec::new());
        }
        let mut columns: Vec<Vec<u8>> = Vec::new();
        if !scan.families.is_empty() {
            columns.extend(scan.families.iter().map(|f| f.as_bytes().to_vec()));
            for f in &scan.filters {
                if !scan.families.contains(&f.family) {
                    columns.push(column(&f.family, &f.qualifier));
                }
            }
            columns.sort();
            columns.dedup();
        }
        let filter = if self.options.server_side_filters && !scan.filters.is_empty() {
            Some(filter_string(&scan.filters))
        } else {
            None
        };
        let caching = match scan.limit {
            Some(l) => l.min(self.options.scan_caching),
            None => self.options.scan_caching,
        };
        let mut out = Vec::new();
        let mut last_key: Option<Vec<u8>> = None;
        let mut attempt = 0u32;
        loop {
            let start = match &last_key {
                // Resume right after the last row received.
                Some(k) => [k.as_slice(), &[0u8]].concat(),
                None => scan.start.clone(),
            };
            let tscan = TScan {
                start_row: (!start.is_empty()).then_some(start),
                stop_row: (!scan.stop.is_empty()).then(|| scan.stop.clone()),
                timestamp: None,
                columns: (!columns.is_empty()).then(|| columns.clone()),
                caching: Some(i32::try_from(caching.max(1)).unwrap_or(i32::MAX)),
                filter_string: filter.clone(),
                batch_size: None,
                sort_columns: None,
                reversed: None,
                cache_blocks: None,
            };
            match self.scan_once(table, &tscan, scan, &mut out, &mut last_key) {
                Ok(()) => break,
                Err(e) if is_transport(&e) && attempt < self.options.retries => {
                    let wait = self.prepare_retry(&mut attempt);
                    tracing::warn!(table, attempt, error = %e, "scan interrupted, resuming");
                    std::thread::sleep(wait);
                }
                Err(e) if is_transport(&e) => {
                    return Err(Error::Unavailable {
                        service: SERVICE,
                        addr: self.addr.clone(),
                        attempts: attempt + 1,
                        source: Box::new(ThriftError(format!("scan {table}: {}", describe(&e)))),
                    })
                }
                Err(e) => return Err(backend(format!("scan {table}"), &e)),
            }
        }
        Ok(out)
    }

    /// One scan call sequence from `start`; appends kept rows to `out`.
    /// Returns the last key seen on error so the caller can resume.
    fn scan_once(
        &self,
        table: &str,
        tscan: &TScan,
        scan: &Scan,
        out: &mut Vec<Row>,
        last_key: &mut Option<Vec<u8>>,
    ) -> thrift::Result<()> {
        let mut client = self.checkout()?;
        let id = match client.scanner_open_with_scan(
            table.as_bytes().to_vec(),
            tscan.clone(),
            BTreeMap::new(),
        ) {
            Ok(id) => id,
            Err(e) => {
                if !is_transport(&e) {
                    self.checkin(client);
                }
                return Err(e);
            }
        };
        let result = (|| -> thrift::Result<()> {
            loop {
                let want = match scan.limit {
                    Some(l) => l.saturating_sub(out.len()).min(self.options.scan_caching),
                    None => self.options.scan_caching,
                };
                if want == 0 {
                    return Ok(());
                }
                let batch = client.scanner_get_list(id, i32::try_from(want).unwrap_or(i32::MAX))?;
                if batch.is_empty() {
                    return Ok(());
                }
                for r in batch {
                    let mut row = to_row(r);
                    *last_key = Some(row.key.clone());
                    if !scan.filters.iter().all(|f| f.matches(&row)) {
                        continue;
                    }
                    if !scan.families.is_empty() {
                        row.cells.retain(|c| scan.families.contains(&c.family));
                    }
                    if row.cells.is_empty() {
                        continue;
                    }
                    out.push(row);
                    if scan.limit.is_some_and(|l| out.len() >= l) {
                        return Ok(());
                    }
                }
            }
        })();
        match &result {
            Err(e) if is_transport(e) => {}
            _ => {
                // Always release the scanner lease; a failure here only leaks
                // a lease the server expires on its own.
                if let Err(e) = client.scanner_close(id) {
                    tracing::debug!(table, error = %e, "scannerClose failed");
                    if is_transport(&e) {
                        return result;
                    }
                }
                self.checkin(client);
            }
        }
        result
    }
}
