//! Reading the index as it will be once a batch being applied is in.
//!
//! An ingest batch's index writes (recorded by [`Index::record_knowing`])
//! may be applied on another thread while the next batch is looked up,
//! placed and packed ([`Index::commit`] takes about as long there as those
//! steps on HBase). That next batch must see the rows of the one being
//! applied: a digest first captured there, a URL's new state, the cluster
//! centres it moved. [`Index::overlaid`] gives a view whose reads answer
//! from the store with the batch's mutations laid over, in order, whether
//! or not the store holds them yet (every mutation is an absolute put or
//! delete, so laying a batch over a store that already holds it changes
//! nothing). Scans with cell filters or a row limit cannot be answered that
//! way (a laid-over cell may decide a filter, a limit counts rows the store
//! does not have yet): they wait until the batch is applied.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Condvar, Mutex};

use crate::batch::Mutation;
use crate::error::Result;
use crate::index::Index;
use crate::store::{Cell, Hook, Hooked, Row, Scan, TableStore};

/// A batch of index mutations handed to another thread to apply.
#[derive(Clone)]
pub struct InFlight(Arc<Shared>);

/// Row key -> where a batch touches the row, in order: (the mutation, the
/// row or key of it).
type Touches = BTreeMap<Vec<u8>, Vec<(usize, usize)>>;

struct Shared {
    mutations: Vec<Mutation>,
    /// Table -> the rows the batch touches.
    touching: HashMap<String, Touches>,
    applied: Mutex<bool>,
    ended: Condvar,
}

impl InFlight {
    /// A batch about to be applied.
    pub fn new(mutations: Vec<Mutation>) -> InFlight {
        let mut touching: HashMap<String, Touches> = HashMap::new();
        for (i, m) in mutations.iter().enumerate() {
            let keys = touching.entry(m.table().to_owned()).or_default();
            for (j, key) in touched(m).into_iter().enumerate() {
                keys.entry(key.to_vec()).or_default().push((i, j));
            }
        }
        InFlight(Arc::new(Shared {
            mutations,
            touching,
            applied: Mutex::new(false),
            ended: Condvar::new(),
        }))
    }

    /// The batch's mutations, in the order they are applied.
    pub fn mutations(&self) -> &[Mutation] {
        &self.0.mutations
    }

    /// Called by the applying thread when it is done, whether it succeeded
    /// or not (a failure is reported by that thread's owner; readers
    /// waiting here then read the store as it is).
    pub fn ended(&self) {
        if let Ok(mut applied) = self.0.applied.lock() {
            *applied = true;
        }
        self.0.ended.notify_all();
    }

    fn wait(&self) {
        let Ok(mut applied) = self.0.applied.lock() else {
            return;
        };
        while !*applied {
            applied = match self.0.ended.wait(applied) {
                Ok(a) => a,
                Err(_) => return,
            };
        }
    }
}

struct Overlay(InFlight);

fn wanted(families: &[&str], family: &str) -> bool {
    families.is_empty() || families.contains(&family)
}

/// Lays row (or key) `at` of a mutation over `row`, the row of `key` as read.
fn lay_over(m: &Mutation, at: usize, key: &[u8], families: &[&str], row: &mut Option<Row>) {
    match m {
        Mutation::Put { rows, .. } => {
            if let Some(put) = rows.get(at) {
                let target = row.get_or_insert_with(|| Row::new(key.to_vec()));
                for cell in put.cells.iter().filter(|c| wanted(families, &c.family)) {
                    match target
                        .cells
                        .iter_mut()
                        .find(|c| c.family == cell.family && c.qualifier == cell.qualifier)
                    {
                        Some(c) => c.value.clone_from(&cell.value),
                        None => target.cells.push(cell.clone()),
                    }
                }
            }
        }
        Mutation::Delete { .. } => *row = None,
        Mutation::DeleteCells { rows, .. } => {
            if let Some(gone) = rows.get(at) {
                if let Some(target) = row.as_mut() {
                    target.cells.retain(|c| {
                        !gone
                            .cells
                            .iter()
                            .any(|g| g.family == c.family && g.qualifier == c.qualifier)
                    });
                }
            }
        }
    }
    // A store returns no row without cells (of the families asked for).
    if row.as_ref().is_some_and(|r| r.cells.is_empty()) {
        *row = None;
    }
}

fn sort_cells(row: &mut Row) {
    row.cells.sort_by(|a: &Cell, b: &Cell| {
        (a.family.as_str(), &a.qualifier).cmp(&(b.family.as_str(), &b.qualifier))
    });
}

/// The keys a mutation touches.
fn touched(m: &Mutation) -> Vec<&[u8]> {
    match m {
        Mutation::Put { rows, .. } | Mutation::DeleteCells { rows, .. } => {
            rows.iter().map(|r| r.key.as_slice()).collect()
        }
        Mutation::Delete { keys, .. } => keys.iter().map(Vec::as_slice).collect(),
    }
}

impl Overlay {
    /// The rows of `table` the batch touches: key -> its mutations.
    fn touching(&self, table: &str) -> Option<&Touches> {
        self.0 .0.touching.get(table).filter(|t| !t.is_empty())
    }

    /// Lays the batch's mutations of `key` over `row`.
    fn lay(&self, at: &[(usize, usize)], key: &[u8], families: &[&str], row: &mut Option<Row>) {
        for &(i, j) in at {
            lay_over(&self.0.mutations()[i], j, key, families, row);
        }
        if let Some(r) = row.as_mut() {
            sort_cells(r);
        }
    }
}

impl Hook for Overlay {
    fn get(
        &self,
        inner: &dyn TableStore,
        table: &str,
        keys: &[Vec<u8>],
        families: &[&str],
    ) -> Result<Vec<Option<Row>>> {
        let mut rows = inner.get(table, keys, families)?;
        let Some(touching) = self.touching(table) else {
            return Ok(rows);
        };
        for (key, row) in keys.iter().zip(rows.iter_mut()) {
            if let Some(mutations) = touching.get(key) {
                self.lay(mutations, key, families, row);
            }
        }
        Ok(rows)
    }

    fn scan(&self, inner: &dyn TableStore, table: &str, scan: &Scan) -> Result<Vec<Row>> {
        let Some(touching) = self.touching(table) else {
            return inner.scan(table, scan);
        };
        if !scan.filters.is_empty() || scan.limit.is_some() {
            self.0.wait();
            return inner.scan(table, scan);
        }
        let families: Vec<&str> = scan.families.iter().map(String::as_str).collect();
        let mut rows: BTreeMap<Vec<u8>, Option<Row>> = inner
            .scan(table, scan)?
            .into_iter()
            .map(|r| (r.key.clone(), Some(r)))
            .collect();
        let stop = if scan.stop.is_empty() {
            std::ops::Bound::Unbounded
        } else if scan.stop <= scan.start {
            return Ok(rows.into_values().flatten().collect());
        } else {
            std::ops::Bound::Excluded(scan.stop.clone())
        };
        let range = (std::ops::Bound::Included(scan.start.clone()), stop);
        for (key, mutations) in touching.range(range) {
            let row = rows.entry(key.clone()).or_insert(None);
            self.lay(mutations, key, &families, row);
        }
        Ok(rows.into_values().flatten().collect())
    }

    fn passes_scans(&self) -> bool {
        false
    }
}

impl Index {
    /// A view of this index that reads it as it will be once `batch` is
    /// applied (see the module documentation); its writes go to the store.
    pub fn overlaid(&self, batch: &InFlight) -> Index {
        self.with_store(Arc::new(Hooked {
            inner: self.store().clone(),
            hook: Overlay(batch.clone()),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::embedded::EmbeddedStore;
    use crate::store::{CellFilter, FilterOp};

    type Stores = (tempfile::TempDir, Arc<dyn TableStore>, Arc<dyn TableStore>);

    /// Two stores holding the same rows.
    fn stores() -> Result<Stores> {
        let dir = tempfile::tempdir().map_err(|e| crate::Error::Invalid(e.to_string()))?;
        let a: Arc<dyn TableStore> = Arc::new(EmbeddedStore::open(dir.path().join("a"))?);
        let b: Arc<dyn TableStore> = Arc::new(EmbeddedStore::open(dir.path().join("b"))?);
        for s in [&a, &b] {
            s.create_table("t", &["a", "i"], 4)?;
            s.create_table("other", &["a"], 4)?;
            s.put(
                "t",
                &[
                    Row::new(b"k1".to_vec())
                        .with("a", b"x".to_vec(), b"1".to_vec())
                        .with("i", b"q".to_vec(), b"".to_vec()),
                    Row::new(b"k2".to_vec()).with("a", b"x".to_vec(), b"2".to_vec()),
                    Row::new(b"k3".to_vec()).with("a", b"y".to_vec(), b"3".to_vec()),
                    Row::new(b"m1".to_vec()).with("a", b"x".to_vec(), b"9".to_vec()),
                ],
            )?;
        }
        Ok((dir, a, b))
    }

    fn batch() -> Vec<Mutation> {
        vec![
            Mutation::Put {
                table: "t".into(),
                rows: vec![
                    // A new cell over an old one, a new cell beside old ones.
                    Row::new(b"k1".to_vec())
                        .with("a", b"x".to_vec(), b"10".to_vec())
                        .with("a", b"w".to_vec(), b"new".to_vec()),
                    // A new row, only in family i.
                    Row::new(b"k4".to_vec()).with("i", b"q".to_vec(), b"".to_vec()),
                    Row::new(b"k5".to_vec()).with("a", b"x".to_vec(), b"5".to_vec()),
                ],
            },
            Mutation::Delete {
                table: "t".into(),
                keys: vec![b"k2".to_vec()],
            },
            Mutation::DeleteCells {
                table: "t".into(),
                rows: vec![Row::new(b"k3".to_vec()).with("a", b"y".to_vec(), b"".to_vec())],
            },
            // Written, then deleted, then written again within the batch.
            Mutation::Put {
                table: "t".into(),
                rows: vec![Row::new(b"k2".to_vec()).with("a", b"z".to_vec(), b"again".to_vec())],
            },
            Mutation::Put {
                table: "other".into(),
                rows: vec![Row::new(b"k1".to_vec()).with("a", b"x".to_vec(), b"no".to_vec())],
            },
        ]
    }

    fn reads(store: &dyn TableStore) -> Result<Vec<String>> {
        let keys: Vec<Vec<u8>> = ["k1", "k2", "k3", "k4", "k5", "m1", "zz"]
            .iter()
            .map(|k| k.as_bytes().to_vec())
            .collect();
        let mut out = vec![
            format!("{:?}", store.get("t", &keys, &[])?),
            format!("{:?}", store.get("t", &keys, &["a"])?),
            format!("{:?}", store.get("t", &keys, &["i"])?),
        ];
        for scan in [
            Scan::prefix(b"k"),
            Scan::prefix(b"k").families(&["a"]),
            Scan::prefix(b"k").families(&["i"]),
            Scan::range(b"k2".to_vec(), b"k5".to_vec()),
            Scan::range(Vec::new(), Vec::new()),
        ] {
            out.push(format!("{:?}", store.scan("t", &scan)?));
        }
        Ok(out)
    }

    /// The view over a store without the batch reads what a store with the
    /// batch applied holds; laid over a store that already holds it, too.
    #[test]
    fn overlay_reads_as_the_store_will_be() -> Result<()> {
        let (_dir, applied, pending) = stores()?;
        let mutations = batch();
        crate::batch::apply_in_order(applied.as_ref(), &mutations)?;
        let expected = reads(applied.as_ref())?;
        let before = reads(pending.as_ref())?;
        assert_ne!(expected, before, "the batch changes what is read");
        let flight = InFlight::new(mutations.clone());
        let index = Index::new(pending.clone(), crate::index::IndexOptions::default())?;
        let view = index.overlaid(&flight);
        assert_eq!(reads(view.store().as_ref())?, expected);
        crate::batch::apply_in_order(pending.as_ref(), &mutations)?;
        assert_eq!(reads(view.store().as_ref())?, expected);
        Ok(())
    }

    /// A filtered scan waits until the batch is applied, then reads it.
    #[test]
    fn filtered_scan_waits_for_the_batch() -> Result<()> {
        let (_dir, _applied, pending) = stores()?;
        let mutations = batch();
        let flight = InFlight::new(mutations.clone());
        let index = Index::new(pending.clone(), crate::index::IndexOptions::default())?;
        let view = index.overlaid(&flight);
        let scan = Scan::prefix(b"k").filter(CellFilter::new(
            "a",
            b"x".to_vec(),
            FilterOp::Eq,
            b"10".to_vec(),
        ));
        let applier = {
            let flight = flight.clone();
            let store = pending.clone();
            std::thread::spawn(move || {
                std::thread::sleep(std::time::Duration::from_millis(100));
                let r = crate::batch::apply_in_order(store.as_ref(), flight.mutations());
                flight.ended();
                r
            })
        };
        let rows = view.store().scan("t", &scan)?;
        applier
            .join()
            .map_err(|_| crate::Error::Invalid("applier panicked".into()))??;
        assert_eq!(rows.len(), 1, "{rows:?}");
        assert_eq!(rows[0].key, b"k1".to_vec());
        Ok(())
    }
}
