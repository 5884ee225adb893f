//! Writes: rows and cells turned into timestamped `BatchMutation`s sent in
//! bounded calls, and index batches whose writes go out side by side.

use std::sync::atomic::Ordering;
use std::time::Instant;

use hbase_thrift::hbase::{BatchMutation, Mutation};

use super::super::api::{Mutation as BatchWrite, Row};
use super::client::HbaseStore;
use super::columns::column;
use crate::error::{Error, Result};

/// Estimated per-cell overhead of a mutation on the wire (field headers,
/// flags, lengths).
const MUTATION_OVERHEAD: usize = 24;
/// Most connections [`TableStore::apply`] sends a batch's writes over at once.
///
/// [`TableStore::apply`]: super::super::TableStore::apply
const APPLY_THREADS: usize = 8;

/// Estimated wire size of a row in a `mutateRows` call.
fn row_bytes(row: &Row) -> usize {
    row.key.len()
        + MUTATION_OVERHEAD
        + row
            .cells
            .iter()
            .map(|c| c.family.len() + 1 + c.qualifier.len() + c.value.len() + MUTATION_OVERHEAD)
            .sum::<usize>()
}

/// Splits items of the given sizes into consecutive batches of at most
/// `max_rows` items and `max_bytes` bytes (an item larger than `max_bytes`
/// forms a batch of its own). Returns the batch boundaries as ranges.
pub fn plan_batches(
    sizes: &[usize],
    max_rows: usize,
    max_bytes: usize,
) -> Vec<std::ops::Range<usize>> {
    let max_rows = max_rows.max(1);
    let mut out = Vec::new();
    let (mut start, mut bytes) = (0, 0usize);
    for (i, size) in sizes.iter().enumerate() {
        if i > start && (i - start >= max_rows || bytes + size > max_bytes) {
            out.push(start..i);
            start = i;
            bytes = 0;
        }
        bytes += size;
    }
    if start < sizes.len() {
        out.push(start..sizes.len());
    }
    out
}

impl HbaseStore {
    /// Sends row mutations in bounded batches with one timestamp.
    fn mutate(&self, table: &str, batches: Vec<(BatchMutation, usize)>, ts: i64) -> Result<()> {
        let sizes: Vec<usize> = batches.iter().map(|(_, s)| *s).collect();
        let plan = plan_batches(
            &sizes,
            self.options.max_batch_rows,
            self.options.max_batch_bytes,
        );
        let items: Vec<BatchMutation> = batches.into_iter().map(|(b, _)| b).collect();
        // Chunks go out in order, so a row given twice in one put ends with
        // its last cells (same timestamp: the later mutation wins).
        for range in plan {
            let started = Instant::now();
            let rows = range.len();
            self.mutate_rows_ts(table, &items[range], ts)?;
            tracing::trace!(
                table,
                rows,
                ms = started.elapsed().as_secs_f64() * 1e3,
                "mutate"
            );
            self.stat(|s| s.mutate_calls += 1);
        }
        Ok(())
    }
}

impl HbaseStore {
    /// Puts (or, with `delete`, deletes) the cells of `rows`, one
    /// `BatchMutation` per row, in one timestamped batch. A delete naming
    /// `family:qualifier` removes every version of that column up to the
    /// batch's timestamp (Thrift 1 `mutateRowsTs`); its value is ignored.
    pub(super) fn mutate_cells(&self, table: &str, rows: &[Row], delete: bool) -> Result<()> {
        self.mutate_cells_at(table, rows, delete, None)
    }

    /// [`HbaseStore::mutate_cells`] with the given timestamp (`None`: the
    /// next one of this store's clock).
    pub(super) fn mutate_cells_at(
        &self,
        table: &str,
        rows: &[Row],
        delete: bool,
        ts: Option<i64>,
    ) -> Result<()> {
        let meta = self.table_meta(table)?;
        let mut batches = Vec::with_capacity(rows.len());
        for row in rows {
            if row.key.is_empty() {
                return Err(Error::BadKey {
                    key: Vec::new(),
                    reason: "row keys must not be empty",
                });
            }
            Self::check_families(table, &meta, row.cells.iter().map(|c| c.family.as_str()))?;
            if row.cells.is_empty() {
                continue;
            }
            let mutations = row
                .cells
                .iter()
                .map(|c| {
                    let value = (!delete).then(|| c.value.clone());
                    Mutation::new(delete, column(&c.family, &c.qualifier), value, true)
                })
                .collect::<Vec<_>>();
            let size = row_bytes(row);
            batches.push((BatchMutation::new(row.key.clone(), mutations), size));
        }
        if batches.is_empty() {
            return Ok(());
        }
        let ts = ts.unwrap_or_else(|| self.next_ts());
        self.mutate(table, batches, ts)
    }

    /// Deletes whole rows (every family) at the given timestamp (`None`: the
    /// next one of this store's clock).
    pub(super) fn delete_rows_at(
        &self,
        table: &str,
        keys: &[Vec<u8>],
        ts: Option<i64>,
    ) -> Result<()> {
        let meta = self.table_meta(table)?;
        if keys.is_empty() {
            return Ok(());
        }
        let batches: Vec<(BatchMutation, usize)> = keys
            .iter()
            .map(|k| {
                let mutations = meta
                    .families
                    .iter()
                    .map(|f| Mutation::new(true, f.as_bytes().to_vec(), None, true))
                    .collect::<Vec<_>>();
                let size = k.len() + MUTATION_OVERHEAD * (1 + mutations.len());
                (BatchMutation::new(k.clone(), mutations), size)
            })
            .collect();
        let ts = ts.unwrap_or_else(|| self.next_ts());
        self.mutate(table, batches, ts)
    }
}

/// Rows of a write sent in one call of [`TableStore::apply`]: a larger write
/// (a batch's page-table put: ~1,100 rows) goes out in parts side by side,
/// each served by its own RegionServer handler.
///
/// [`TableStore::apply`]: super::super::TableStore::apply
const APPLY_PART_ROWS: usize = 300;

/// A part of one write of a batch (see [`HbaseStore::apply`]).
enum Piece<'a> {
    /// Cells put, or deleted with `delete`.
    Cells {
        table: &'a str,
        rows: &'a [Row],
        delete: bool,
    },
    /// Whole rows deleted.
    Rows { table: &'a str, keys: &'a [Vec<u8>] },
}

impl<'a> Piece<'a> {
    fn of(m: &'a BatchWrite) -> Vec<Piece<'a>> {
        match m {
            BatchWrite::Put { table, rows } | BatchWrite::DeleteCells { table, rows } => {
                let delete = matches!(m, BatchWrite::DeleteCells { .. });
                // Parts land in any order: a row given twice (its last cells
                // win, written in order) keeps the write whole.
                let distinct = || {
                    let mut keys = std::collections::HashSet::with_capacity(rows.len());
                    rows.iter().all(|r| keys.insert(r.key.as_slice()))
                };
                let part = if rows.len() > APPLY_PART_ROWS && distinct() {
                    APPLY_PART_ROWS
                } else {
                    rows.len().max(1)
                };
                rows.chunks(part)
                    .map(|rows| Piece::Cells {
                        table,
                        rows,
                        delete,
                    })
                    .collect()
            }
            BatchWrite::Delete { table, keys } => vec![Piece::Rows { table, keys }],
        }
    }

    /// Cells sent (a deleted row counts one): the part's share of the server's work.
    fn weight(&self) -> usize {
        match self {
            Piece::Cells { rows, .. } => rows.iter().map(|r| r.cells.len().max(1)).sum(),
            Piece::Rows { keys, .. } => keys.len(),
        }
    }
}

impl HbaseStore {
    /// The writes of a batch go out side by side, over up to
    /// [`APPLY_THREADS`] connections, each a round trip to the Thrift server
    /// and its RegionServers that would otherwise wait for the one before.
    /// Their order still decides: each write gets its timestamp from this
    /// store's clock in the batch's order before any is sent, so a later
    /// write of a cell (a put after the delete of its row) wins whichever
    /// call lands first, as it does written one by one. Until a
    /// `mutateRowsTs` has worked (a server without it stamps cells itself),
    /// the writes go one by one.
    pub(super) fn apply_side_by_side(&self, mutations: &[BatchWrite]) -> Result<()> {
        if mutations.len() < 2 || !self.ts_mutations_work.load(Ordering::Relaxed) {
            return super::super::api::apply_in_order(self, mutations);
        }
        let mut stamped: Vec<(Piece<'_>, i64)> = Vec::new();
        for m in mutations {
            let ts = self.next_ts();
            stamped.extend(Piece::of(m).into_iter().map(|p| (p, ts)));
        }
        // The largest writes first: the batch waits for its longest call,
        // which should not also wait for a free connection.
        stamped.sort_by_key(|(p, _)| std::cmp::Reverse(p.weight()));
        let threads = stamped.len().min(APPLY_THREADS);
        let next = std::sync::atomic::AtomicUsize::new(0);
        let results: Vec<Result<()>> = std::thread::scope(|scope| {
            let workers: Vec<_> = (0..threads)
                .map(|_| {
                    scope.spawn(|| -> Result<()> {
                        loop {
                            let i = next.fetch_add(1, Ordering::Relaxed);
                            let Some((p, ts)) = stamped.get(i) else {
                                return Ok(());
                            };
                            match p {
                                Piece::Cells {
                                    table,
                                    rows,
                                    delete,
                                } => self.mutate_cells_at(table, rows, *delete, Some(*ts))?,
                                Piece::Rows { table, keys } => {
                                    self.delete_rows_at(table, keys, Some(*ts))?
                                }
                            }
                        }
                    })
                })
                .collect();
            workers
                .into_iter()
                .map(|w| {
                    w.join().unwrap_or_else(|_| {
                        Err(Error::Invalid("an index write thread panicked".into()))
                    })
                })
                .collect()
        });
        results.into_iter().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A large write goes out in parts of distinct rows, largest first in
    /// `apply`; a write naming a row twice (its last cells must win, which
    /// only an ordered send guarantees) and a row deletion stay whole.
    #[test]
    fn large_writes_are_cut_into_parts_unless_a_row_repeats() {
        let rows = |n: usize| -> Vec<Row> {
            (0..n)
                .map(|i| {
                    Row::new(format!("k{i:05}").into_bytes()).with("a", b"q".to_vec(), vec![1])
                })
                .collect()
        };
        let sizes = |m: &BatchWrite| -> Vec<usize> {
            Piece::of(m)
                .iter()
                .map(|p| match p {
                    Piece::Cells { rows, .. } => rows.len(),
                    Piece::Rows { keys, .. } => keys.len(),
                })
                .collect()
        };
        let put = |rows: Vec<Row>| BatchWrite::Put {
            table: "t".into(),
            rows,
        };
        assert_eq!(sizes(&put(rows(1100))), vec![300, 300, 300, 200]);
        assert_eq!(sizes(&put(rows(300))), vec![300]);
        let mut twice = rows(700);
        twice.push(twice[3].clone());
        assert_eq!(sizes(&put(twice)), vec![701]);
        let cells = BatchWrite::DeleteCells {
            table: "t".into(),
            rows: rows(301),
        };
        assert_eq!(sizes(&cells), vec![300, 1]);
        assert!(Piece::of(&cells)
            .iter()
            .all(|p| matches!(p, Piece::Cells { delete: true, .. })));
        let delete = BatchWrite::Delete {
            table: "t".into(),
            keys: rows(900).into_iter().map(|r| r.key).collect(),
        };
        assert_eq!(sizes(&delete), vec![900]);
        assert_eq!(sizes(&put(Vec::new())), Vec::<usize>::new());
        // The weight orders the parts: cells sent.
        let wide = Row::new(b"w".to_vec())
            .with("a", b"1".to_vec(), vec![])
            .with("a", b"2".to_vec(), vec![]);
        assert_eq!(Piece::of(&put(vec![wide]))[0].weight(), 2);
    }

    #[test]
    fn batches_respect_rows_and_bytes() {
        assert_eq!(plan_batches(&[10; 5], 2, 1000), vec![0..2, 2..4, 4..5]);
        assert_eq!(plan_batches(&[40, 40, 40], 10, 100), vec![0..2, 2..3]);
        // A row larger than the byte bound travels alone.
        assert_eq!(plan_batches(&[5, 500, 5], 10, 100), vec![0..1, 1..2, 2..3]);
        assert!(plan_batches(&[], 10, 100).is_empty());
    }
}
