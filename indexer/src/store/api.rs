//! The `TableStore` trait: a small, HBase-shaped wide-column table API.
//!
//! # Contract (every backend must honour it; `conformance` checks it)
//!
//! * A table has a fixed set of column families and a bucket count, both given
//!   to [`TableStore::create_table`]. Creating an existing table with the same
//!   layout is a no-op; with a different layout it is an error.
//! * Row keys are arbitrary non-empty byte strings (0x00 and 0xff included) and
//!   rows are ordered by plain lexicographic byte order of their keys.
//! * [`TableStore::put`] *merges*: every cell given overwrites the cell with the
//!   same (family, qualifier); other cells of the row stay (HBase `Put`).
//!   A batch is applied atomically (embedded) or per row (HBase). When `put`
//!   returns `Ok`, the rows survive a crash of the process (see the backend for
//!   power-loss guarantees).
//! * Rows returned by `get`/`scan` carry their cells sorted by (family,
//!   qualifier); a row that has no cell in the requested families does not
//!   exist for that call.
//! * [`Scan`] reads `start <= key < stop` (an empty `stop` is unbounded), only
//!   the `families` asked for (empty = all), keeps the rows for which **every**
//!   [`CellFilter`] holds, and stops after `limit` matching rows. A filter may
//!   name a family that is not requested; it is still evaluated. A row without
//!   the filtered cell fails the filter (HBase `SingleColumnValueFilter` with
//!   `filterIfMissing = true`).
//! * [`TableStore::regions`] returns one [`Region`] per bucket, in key order,
//!   covering the whole key space: region `b` holds the keys whose first byte is
//!   `b` (the first region starts at the empty key, the last ends unbounded).
//!   These are the split points of the table (HBase pre-split regions).

use std::sync::Arc;

use crate::error::Result;

/// One cell: a value addressed by column family and qualifier.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Cell {
    /// Column family name (`[a-z0-9_]+`).
    pub family: String,
    /// Column qualifier (arbitrary bytes, may be empty).
    pub qualifier: Vec<u8>,
    /// Cell value (arbitrary bytes, may be empty).
    pub value: Vec<u8>,
}

impl Cell {
    /// Builds a cell.
    pub fn new(family: &str, qualifier: impl Into<Vec<u8>>, value: impl Into<Vec<u8>>) -> Self {
        Cell {
            family: family.to_owned(),
            qualifier: qualifier.into(),
            value: value.into(),
        }
    }
}

/// A row: its key and its cells.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Row {
    /// Row key.
    pub key: Vec<u8>,
    /// Cells of the row, sorted by (family, qualifier) when returned by a store.
    pub cells: Vec<Cell>,
}

impl Row {
    /// An empty row with the given key.
    pub fn new(key: impl Into<Vec<u8>>) -> Self {
        Row {
            key: key.into(),
            cells: Vec::new(),
        }
    }

    /// Adds a cell (builder style).
    #[must_use]
    pub fn with(
        mut self,
        family: &str,
        qualifier: impl Into<Vec<u8>>,
        value: impl Into<Vec<u8>>,
    ) -> Self {
        self.cells.push(Cell::new(family, qualifier, value));
        self
    }

    /// The value of the cell (family, qualifier), if present.
    pub fn cell(&self, family: &str, qualifier: &[u8]) -> Option<&[u8]> {
        self.cells
            .iter()
            .find(|c| c.family == family && c.qualifier == qualifier)
            .map(|c| c.value.as_slice())
    }

    /// All cells of one family.
    pub fn family<'a>(&'a self, family: &'a str) -> impl Iterator<Item = &'a Cell> + 'a {
        self.cells.iter().filter(move |c| c.family == family)
    }
}

/// Comparison done by a [`CellFilter`]; values compare as raw bytes
/// (lexicographically), so numbers must be stored big-endian.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FilterOp {
    /// cell value == filter value
    Eq,
    /// cell value >= filter value
    Ge,
    /// cell value <= filter value
    Le,
    /// the cell exists (filter value ignored)
    Exists,
}

/// A condition on one cell, evaluated by the backend during a scan
/// (maps to an HBase `SingleColumnValueFilter('fam', 'qual', op, 'binary:value', true, true)`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CellFilter {
    /// Family of the cell.
    pub family: String,
    /// Qualifier of the cell.
    pub qualifier: Vec<u8>,
    /// Comparison.
    pub op: FilterOp,
    /// Right-hand side of the comparison.
    pub value: Vec<u8>,
}

impl CellFilter {
    /// Builds a filter.
    pub fn new(
        family: &str,
        qualifier: impl Into<Vec<u8>>,
        op: FilterOp,
        value: impl Into<Vec<u8>>,
    ) -> Self {
        CellFilter {
            family: family.to_owned(),
            qualifier: qualifier.into(),
            op,
            value: value.into(),
        }
    }

    /// Evaluates the filter on a row; a missing cell fails.
    pub fn matches(&self, row: &Row) -> bool {
        match row.cell(&self.family, &self.qualifier) {
            None => false,
            Some(v) => match self.op {
                FilterOp::Eq => v == self.value.as_slice(),
                FilterOp::Ge => v >= self.value.as_slice(),
                FilterOp::Le => v <= self.value.as_slice(),
                FilterOp::Exists => true,
            },
        }
    }
}

/// A range scan.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Scan {
    /// First key (inclusive); empty = from the beginning.
    pub start: Vec<u8>,
    /// Last key (exclusive); empty = to the end.
    pub stop: Vec<u8>,
    /// Families to return; empty = all.
    pub families: Vec<String>,
    /// Stop after this many matching rows.
    pub limit: Option<usize>,
    /// Conditions every returned row satisfies.
    pub filters: Vec<CellFilter>,
}

impl Scan {
    /// A scan of `start <= key < stop` returning all families.
    pub fn range(start: impl Into<Vec<u8>>, stop: impl Into<Vec<u8>>) -> Self {
        Scan {
            start: start.into(),
            stop: stop.into(),
            ..Scan::default()
        }
    }

    /// A scan of every key starting with `prefix`.
    pub fn prefix(prefix: &[u8]) -> Self {
        Scan::range(prefix.to_vec(), prefix_end(prefix))
    }

    /// Restricts the families returned.
    #[must_use]
    pub fn families(mut self, families: &[&str]) -> Self {
        self.families = families.iter().map(|f| (*f).to_owned()).collect();
        self
    }

    /// Sets the row limit.
    #[must_use]
    pub fn limit(mut self, limit: usize) -> Self {
        self.limit = Some(limit);
        self
    }

    /// Adds a filter.
    #[must_use]
    pub fn filter(mut self, filter: CellFilter) -> Self {
        self.filters.push(filter);
        self
    }

    /// Whether `key` lies inside `[start, stop)`.
    pub fn contains(&self, key: &[u8]) -> bool {
        key >= self.start.as_slice() && (self.stop.is_empty() || key < self.stop.as_slice())
    }
}

/// The smallest key greater than every key starting with `prefix`
/// (empty = unbounded, when the prefix is all 0xff).
pub fn prefix_end(prefix: &[u8]) -> Vec<u8> {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last < u8::MAX {
            end.push(last + 1);
            return end;
        }
    }
    Vec::new()
}

/// A key range served by one region (one salt bucket).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Region {
    /// First key (inclusive); empty for the first region.
    pub start: Vec<u8>,
    /// End key (exclusive); empty for the last region.
    pub end: Vec<u8>,
}

/// The regions of a table with `buckets` buckets: region `b` covers the keys
/// whose first byte is `b` (the first starts at the empty key, the last is
/// unbounded). Backends use this to pre-split and to answer `regions`.
pub fn bucket_regions(buckets: u8) -> Vec<Region> {
    let n = buckets.max(1);
    (0..n)
        .map(|b| Region {
            start: if b == 0 { Vec::new() } else { vec![b] },
            end: if b + 1 == n { Vec::new() } else { vec![b + 1] },
        })
        .collect()
}

/// Hands collected rows to a [`TableStore::scan_each`] visitor until it
/// returns `false` (the default `scan_each`, and backends' fallbacks).
pub fn visit_rows(rows: Vec<Row>, visit: &mut dyn FnMut(&Row) -> bool) {
    for row in rows {
        if !visit(&row) {
            break;
        }
    }
}

/// Creates `tables` (name, families, salt buckets): side by side on a
/// remote store, where each takes HBase's master about two seconds (the
/// first start of a new archive, `harvest cluster init`), one after another
/// on a local one.
pub fn create_tables(store: &dyn TableStore, tables: &[(&str, &[&str], u8)]) -> Result<()> {
    let create = |&(name, families, buckets): &(&str, &[&str], u8)| {
        store.create_table(name, families, buckets)
    };
    if !store.remote() {
        return tables.iter().try_for_each(create);
    }
    std::thread::scope(|scope| {
        let handles: Vec<_> = tables
            .iter()
            .map(|t| scope.spawn(move || create(t)))
            .collect();
        handles.into_iter().try_for_each(|h| {
            h.join().unwrap_or_else(|_| {
                Err(crate::error::Error::Invalid(
                    "a table creation thread panicked".into(),
                ))
            })
        })
    })
}

/// A wide-column table store (embedded fjall or HBase). Synchronous; see the
/// module documentation for the full contract.
pub trait TableStore: Send + Sync {
    /// Creates a table with the given families and bucket count; idempotent.
    fn create_table(&self, name: &str, families: &[&str], buckets: u8) -> Result<()>;
    /// Names of all tables, sorted.
    fn list_tables(&self) -> Result<Vec<String>>;
    /// Writes (merges) a batch of rows.
    fn put(&self, table: &str, rows: &[Row]) -> Result<()>;
    /// Reads rows by key; one entry per key, `None` when the row is absent.
    /// `families` empty = all.
    fn get(&self, table: &str, keys: &[Vec<u8>], families: &[&str]) -> Result<Vec<Option<Row>>>;
    /// Scans a key range in key order.
    fn scan(&self, table: &str, scan: &Scan) -> Result<Vec<Row>>;
    /// Scans like [`TableStore::scan`] (same rows, same order, same `limit`)
    /// but hands each row to `visit` instead of collecting them; `visit`
    /// returns `false` to stop early. The row is borrowed for the call only:
    /// a backend may reuse its buffers for the next row, so a long scan
    /// allocates nothing per row (the embedded store does; the default
    /// implementation collects [`TableStore::scan`] and walks it).
    fn scan_each(
        &self,
        table: &str,
        scan: &Scan,
        visit: &mut dyn FnMut(&Row) -> bool,
    ) -> Result<()> {
        visit_rows(self.scan(table, scan)?, visit);
        Ok(())
    }
    /// Deletes whole rows (all families); missing rows are ignored.
    fn delete(&self, table: &str, keys: &[Vec<u8>]) -> Result<()>;
    /// Deletes single cells: for each row, the cells named by its cells'
    /// (family, qualifier) (their values are ignored); other cells of the row
    /// stay, a row left without cells is gone, missing cells are ignored.
    fn delete_cells(&self, table: &str, rows: &[Row]) -> Result<()>;
    /// The regions of the table, one per bucket, in key order.
    fn regions(&self, table: &str) -> Result<Vec<Region>>;
    /// Applies `mutations` in order, each seeing the ones before it. The
    /// default applies them one by one: not atomic (see
    /// [`TableStore::atomic_apply`] and [`crate::batch`]).
    fn apply(&self, mutations: &[Mutation]) -> Result<()> {
        apply_in_order(self, mutations)
    }
    /// Whether [`TableStore::apply`] makes a batch visible wholly or not at
    /// all, also across a crash.
    fn atomic_apply(&self) -> bool {
        false
    }
    /// Whether calls wait on a network peer (a synchronous client): async
    /// callers then move them off their worker thread. Local reads (the
    /// embedded store, from its cache) are made in place.
    fn remote(&self) -> bool {
        false
    }
}

/// What a [`Hooked`] store does with the writes and reads it takes over
/// from the store inside it; each passes the call through by default.
pub(crate) trait Hook: Send + Sync {
    fn put(&self, inner: &dyn TableStore, table: &str, rows: &[Row]) -> Result<()> {
        inner.put(table, rows)
    }
    fn get(
        &self,
        inner: &dyn TableStore,
        table: &str,
        keys: &[Vec<u8>],
        families: &[&str],
    ) -> Result<Vec<Option<Row>>> {
        inner.get(table, keys, families)
    }
    fn scan(&self, inner: &dyn TableStore, table: &str, scan: &Scan) -> Result<Vec<Row>> {
        inner.scan(table, scan)
    }
    /// Whether [`Hook::scan`] is the inner store's (its `scan_each` then
    /// streams; otherwise it visits the hook's answer).
    fn passes_scans(&self) -> bool {
        true
    }
    fn delete(&self, inner: &dyn TableStore, table: &str, keys: &[Vec<u8>]) -> Result<()> {
        inner.delete(table, keys)
    }
    fn delete_cells(&self, inner: &dyn TableStore, table: &str, rows: &[Row]) -> Result<()> {
        inner.delete_cells(table, rows)
    }
}

/// A store that passes every call to `inner` but the writes and reads its
/// [`Hook`] takes over (a batch's recording view, a view that keeps what it
/// read, test stores that hold or fail a call).
pub(crate) struct Hooked<H> {
    pub(crate) inner: Arc<dyn TableStore>,
    pub(crate) hook: H,
}

impl<H: Hook> TableStore for Hooked<H> {
    fn create_table(&self, name: &str, families: &[&str], buckets: u8) -> Result<()> {
        self.inner.create_table(name, families, buckets)
    }
    fn list_tables(&self) -> Result<Vec<String>> {
        self.inner.list_tables()
    }
    fn put(&self, table: &str, rows: &[Row]) -> Result<()> {
        self.hook.put(self.inner.as_ref(), table, rows)
    }
    fn get(&self, table: &str, keys: &[Vec<u8>], families: &[&str]) -> Result<Vec<Option<Row>>> {
        self.hook.get(self.inner.as_ref(), table, keys, families)
    }
    fn scan(&self, table: &str, scan: &Scan) -> Result<Vec<Row>> {
        self.hook.scan(self.inner.as_ref(), table, scan)
    }
    fn scan_each(
        &self,
        table: &str,
        scan: &Scan,
        visit: &mut dyn FnMut(&Row) -> bool,
    ) -> Result<()> {
        if self.hook.passes_scans() {
            return self.inner.scan_each(table, scan, visit);
        }
        visit_rows(self.hook.scan(self.inner.as_ref(), table, scan)?, visit);
        Ok(())
    }
    fn delete(&self, table: &str, keys: &[Vec<u8>]) -> Result<()> {
        self.hook.delete(self.inner.as_ref(), table, keys)
    }
    fn delete_cells(&self, table: &str, rows: &[Row]) -> Result<()> {
        self.hook.delete_cells(self.inner.as_ref(), table, rows)
    }
    fn regions(&self, table: &str) -> Result<Vec<Region>> {
        self.inner.regions(table)
    }
    fn remote(&self) -> bool {
        // Callers decide by it whether to read side by side.
        self.inner.remote()
    }
}

/// One write of a batch (see [`crate::batch`]).
#[derive(Debug, Clone, PartialEq)]
pub enum Mutation {
    /// [`TableStore::put`].
    Put { table: String, rows: Vec<Row> },
    /// [`TableStore::delete`].
    Delete { table: String, keys: Vec<Vec<u8>> },
    /// [`TableStore::delete_cells`].
    DeleteCells { table: String, rows: Vec<Row> },
}

impl Mutation {
    /// Applies this mutation alone.
    pub fn apply_to<S: TableStore + ?Sized>(&self, store: &S) -> Result<()> {
        match self {
            Mutation::Put { table, rows } => store.put(table, rows),
            Mutation::Delete { table, keys } => store.delete(table, keys),
            Mutation::DeleteCells { table, rows } => store.delete_cells(table, rows),
        }
    }

    /// The table the mutation writes.
    pub(crate) fn table(&self) -> &str {
        match self {
            Mutation::Put { table, .. }
            | Mutation::Delete { table, .. }
            | Mutation::DeleteCells { table, .. } => table,
        }
    }
}

/// Applies `mutations` one after the other: what a backend without atomic
/// batches does for [`TableStore::apply`].
pub fn apply_in_order<S: TableStore + ?Sized>(store: &S, mutations: &[Mutation]) -> Result<()> {
    for m in mutations {
        m.apply_to(store)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefix_end_carries_over_ff() {
        assert_eq!(prefix_end(b"ab"), b"ac".to_vec());
        assert_eq!(prefix_end(&[1, 0xff]), vec![2]);
        assert_eq!(prefix_end(&[0xff, 0xff]), Vec::<u8>::new());
    }

    #[test]
    fn regions_cover_key_space() {
        let r = bucket_regions(4);
        assert_eq!(r.len(), 4);
        assert!(r[0].start.is_empty());
        assert!(r[3].end.is_empty());
        for w in r.windows(2) {
            assert_eq!(w[0].end, w[1].start);
        }
    }

    #[test]
    fn filter_missing_cell_fails() {
        let row = Row::new(b"k".to_vec()).with("a", b"n".to_vec(), vec![5]);
        assert!(CellFilter::new("a", b"n".to_vec(), FilterOp::Ge, vec![5]).matches(&row));
        assert!(!CellFilter::new("a", b"n".to_vec(), FilterOp::Le, vec![4]).matches(&row));
        assert!(!CellFilter::new("a", b"x".to_vec(), FilterOp::Exists, vec![]).matches(&row));
    }
}
