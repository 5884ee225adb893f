//! Reads: point gets and scans (merging the cursors of several families, or
//! reading one family straight), and the families a read picks.

use std::collections::BTreeMap;
use std::ops::Bound;

use fjall::Keyspace;

use super::super::api::{visit_rows, Cell, Row, Scan};
use super::cells::{decode_cells, decode_cells_into, decode_cells_reuse};
use super::database::EmbeddedStore;
use super::layout::TableHandle;
use crate::error::{Error, Result};

/// A family's cursor in a merged scan: name, iterator, current entry.
type FamilyCursor<'a> = (&'a str, KvIter, Option<(fjall::Slice, fjall::Slice)>);

type KvIter = Box<dyn Iterator<Item = Result<(fjall::Slice, fjall::Slice)>>>;

impl EmbeddedStore {
    pub(super) fn read_family(
        ks: &Keyspace,
        key: &[u8],
    ) -> Result<Option<BTreeMap<Vec<u8>, Vec<u8>>>> {
        match ks.get(key).map_err(|e| Error::backend("read row", e))? {
            None => Ok(None),
            Some(v) => decode_cells(key, &v).map(Some),
        }
    }

    /// Families to read for a call: the requested ones (all if none), checked.
    pub(super) fn pick_families<'a>(
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

    pub(super) fn get_rows(
        &self,
        table: &str,
        keys: &[Vec<u8>],
        families: &[&str],
    ) -> Result<Vec<Option<Row>>> {
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

    pub(super) fn scan_rows(&self, table: &str, scan: &Scan) -> Result<Vec<Row>> {
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

    pub(super) fn scan_each_row(
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
            visit_rows(self.scan_rows(table, scan)?, visit);
            return Ok(());
        };
        if !one_family {
            visit_rows(self.scan_rows(table, scan)?, visit);
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
}
