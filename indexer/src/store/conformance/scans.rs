//! Checks of scans: ranges, filters, and `scan_each` against `scan`. Each
//! takes a store and a fresh table name.

use super::super::api::{CellFilter, FilterOp, Row, Scan, TableStore};
use super::fixture::{grid, keys_of, BUCKETS, FAM_A, FAM_B};
use crate::error::Result;

/// Range scans honour start/stop (exclusive)/limit/families and key order.
pub fn scan_ranges(store: &dyn TableStore, table: &str) -> Result<()> {
    store.create_table(table, &[FAM_A, FAM_B], BUCKETS)?;
    let rows = grid(10);
    store.put(table, &rows)?;
    let all = store.scan(table, &Scan::default())?;
    assert_eq!(
        keys_of(&all),
        keys_of(&rows),
        "full scan returns all rows in key order"
    );
    let part = store.scan(table, &Scan::range(vec![1, 3], vec![2, 2]))?;
    let want: Vec<Vec<u8>> = (3..10)
        .map(|i| vec![1, i])
        .chain([vec![2, 0], vec![2, 1]])
        .collect();
    assert_eq!(keys_of(&part), want, "start inclusive, stop exclusive");
    let limited = store.scan(table, &Scan::range(vec![1], Vec::new()).limit(3))?;
    assert_eq!(
        keys_of(&limited),
        vec![vec![1, 0], vec![1, 1], vec![1, 2]],
        "limit"
    );
    let fam = store.scan(table, &Scan::prefix(&[3]).families(&[FAM_B]))?;
    assert_eq!(fam.len(), 10);
    assert!(
        fam.iter()
            .all(|r| r.cells.len() == 1 && r.cells[0].family == FAM_B),
        "families"
    );
    let empty = store.scan(table, &Scan::range(vec![2, 5], vec![2, 5]))?;
    assert!(empty.is_empty(), "empty range");
    Ok(())
}

/// Filters: Eq/Ge/Le/Exists on big-endian values, AND-ed, missing cell fails,
/// filter on a family that is not returned, combined with a limit.
pub fn scan_filters(store: &dyn TableStore, table: &str) -> Result<()> {
    store.create_table(table, &[FAM_A, FAM_B], BUCKETS)?;
    let mut rows = grid(10);
    rows.push(Row::new(vec![0, 200]).with(FAM_B, b"name".to_vec(), b"no n".to_vec()));
    store.put(table, &rows)?;
    let n = |i: u64| i.to_be_bytes().to_vec();
    let ge_le = Scan::prefix(&[0])
        .filter(CellFilter::new(FAM_A, b"n".to_vec(), FilterOp::Ge, n(3)))
        .filter(CellFilter::new(FAM_A, b"n".to_vec(), FilterOp::Le, n(5)));
    assert_eq!(
        keys_of(&store.scan(table, &ge_le)?),
        vec![vec![0, 3], vec![0, 4], vec![0, 5]],
        "Ge and Le"
    );
    let eq = Scan::default().filter(CellFilter::new(FAM_A, b"n".to_vec(), FilterOp::Eq, n(7)));
    assert_eq!(
        store.scan(table, &eq)?.len(),
        usize::from(BUCKETS),
        "Eq in every bucket"
    );
    let exists = Scan::prefix(&[0]).filter(CellFilter::new(
        FAM_A,
        b"n".to_vec(),
        FilterOp::Exists,
        Vec::new(),
    ));
    assert_eq!(
        store.scan(table, &exists)?.len(),
        10,
        "row without the cell fails the filter"
    );
    let other_family = Scan::prefix(&[2])
        .families(&[FAM_B])
        .filter(CellFilter::new(FAM_A, b"n".to_vec(), FilterOp::Ge, n(8)))
        .limit(1);
    let got = store.scan(table, &other_family)?;
    assert_eq!(
        keys_of(&got),
        vec![vec![2, 8]],
        "filter on an unreturned family, with limit"
    );
    assert!(
        got[0].cells.iter().all(|c| c.family == FAM_B),
        "only requested families returned"
    );
    Ok(())
}

/// Collects what [`TableStore::scan_each`] hands out (copies: the row is
/// only borrowed), stopping after `stop_after` rows when given.
fn visited(
    store: &dyn TableStore,
    table: &str,
    scan: &Scan,
    stop_after: Option<usize>,
) -> Result<Vec<Row>> {
    let mut out = Vec::new();
    store.scan_each(table, scan, &mut |row| {
        out.push(row.clone());
        stop_after.is_none_or(|n| out.len() < n)
    })?;
    Ok(out)
}

/// `scan_each` hands out exactly the rows of `scan` (one family, several,
/// filters, limits, rows of different sizes one after another), and stops
/// when the visitor says so.
pub fn scan_each_matches_scan(store: &dyn TableStore, table: &str) -> Result<()> {
    store.create_table(table, &[FAM_A, FAM_B], BUCKETS)?;
    let mut rows = grid(12);
    // Rows with more and fewer cells than their neighbours (a backend that
    // reuses buffers must not leak cells from one row into the next).
    rows.push(
        Row::new(vec![1, 3, 1])
            .with(FAM_A, b"n".to_vec(), 99u64.to_be_bytes())
            .with(FAM_A, b"x".to_vec(), b"extra".to_vec())
            .with(FAM_A, Vec::new(), Vec::new()),
    );
    rows.push(Row::new(vec![1, 3, 2]).with(FAM_B, b"name".to_vec(), b"only b".to_vec()));
    store.put(table, &rows)?;
    let n = |i: u64| i.to_be_bytes().to_vec();
    let scans = [
        Scan::default(),
        Scan::default().families(&[FAM_A]),
        Scan::prefix(&[1]).families(&[FAM_B]),
        Scan::range(vec![1, 2], vec![2, 5])
            .families(&[FAM_A])
            .limit(4),
        Scan::prefix(&[1])
            .families(&[FAM_A])
            .filter(CellFilter::new(FAM_A, b"n".to_vec(), FilterOp::Ge, n(9))),
        Scan::prefix(&[2])
            .families(&[FAM_B])
            .filter(CellFilter::new(FAM_A, b"n".to_vec(), FilterOp::Le, n(2))),
        Scan::range(vec![3, 9], vec![1]),
    ];
    for scan in &scans {
        let want = store.scan(table, scan)?;
        assert!(
            !want.is_empty() || scan.stop == [1],
            "scan {scan:?} finds rows"
        );
        assert_eq!(
            visited(store, table, scan, None)?,
            want,
            "scan_each {scan:?}"
        );
        let stopped = visited(store, table, scan, Some(2))?;
        assert_eq!(
            stopped.as_slice(),
            &want[..want.len().min(2)],
            "visitor stops the scan {scan:?}"
        );
    }
    Ok(())
}
