//! Checks of tables and rows: table creation, put and get, deletes of rows
//! and of single cells, regions, binary keys and a large batch. Each takes a
//! store and a fresh table name; [`super::run_all`] runs them with the scans.

use super::super::api::{bucket_regions, Row, Scan, TableStore};
use super::fixture::{grid, keys_of, BUCKETS, FAM_A, FAM_B};
use crate::error::{Error, Result};

/// Creating a table twice with the same layout succeeds; a different layout
/// fails; the table is listed; bad names are rejected.
pub fn create_is_idempotent(store: &dyn TableStore, table: &str) -> Result<()> {
    store.create_table(table, &[FAM_A, FAM_B], BUCKETS)?;
    store.create_table(table, &[FAM_B, FAM_A], BUCKETS)?;
    assert!(
        store.list_tables()?.iter().any(|t| t == table),
        "created table is listed"
    );
    assert!(
        store.create_table(table, &[FAM_A], BUCKETS).is_err(),
        "re-creating with other families must fail"
    );
    assert!(
        matches!(
            store.create_table("Bad-Name", &[FAM_A], 1),
            Err(Error::BadTableName { .. })
        ),
        "invalid table names are rejected"
    );
    assert!(
        matches!(
            store.put(
                "no_such_table_x",
                &[Row::new(b"k".to_vec()).with(FAM_A, b"q".to_vec(), b"v".to_vec())]
            ),
            Err(Error::NoSuchTable(_))
        ),
        "put into a missing table fails"
    );
    Ok(())
}

/// Put then get; puts merge cells; family selection; missing rows are `None`.
pub fn put_get_merge(store: &dyn TableStore, table: &str) -> Result<()> {
    store.create_table(table, &[FAM_A, FAM_B], BUCKETS)?;
    let k = b"page-1".to_vec();
    store.put(
        table,
        &[Row::new(k.clone())
            .with(FAM_A, b"x".to_vec(), b"1".to_vec())
            .with(FAM_B, b"y".to_vec(), b"2".to_vec())],
    )?;
    store.put(
        table,
        &[Row::new(k.clone())
            .with(FAM_A, b"x".to_vec(), b"3".to_vec())
            .with(FAM_A, b"w".to_vec(), b"4".to_vec())],
    )?;
    let got = store.get(table, &[k.clone(), b"absent".to_vec()], &[])?;
    assert_eq!(got.len(), 2, "one answer per key");
    let row = got[0].clone().expect("row exists");
    let cells: Vec<(&str, &[u8], &[u8])> = row
        .cells
        .iter()
        .map(|c| {
            (
                c.family.as_str(),
                c.qualifier.as_slice(),
                c.value.as_slice(),
            )
        })
        .collect();
    assert_eq!(
        cells,
        vec![
            (FAM_A, &b"w"[..], &b"4"[..]),
            (FAM_A, b"x", b"3"),
            (FAM_B, b"y", b"2")
        ],
        "cells merged, overwritten, sorted by family then qualifier"
    );
    assert!(got[1].is_none(), "missing row is None");
    let only_b = store.get(table, std::slice::from_ref(&k), &[FAM_B])?;
    assert_eq!(
        only_b[0].as_ref().map(|r| r.cells.len()),
        Some(1),
        "family selection"
    );
    let only_missing_family = store.get(table, &[b"absent".to_vec()], &[FAM_B])?;
    assert!(only_missing_family[0].is_none());
    assert!(
        store.get(table, &[k], &["zz"]).is_err(),
        "unknown family is an error"
    );
    Ok(())
}

/// Deleting rows removes every family; deleting missing rows is fine.
pub fn delete_rows(store: &dyn TableStore, table: &str) -> Result<()> {
    store.create_table(table, &[FAM_A, FAM_B], BUCKETS)?;
    store.put(table, &grid(3))?;
    store.delete(table, &[vec![1, 1], vec![9, 9]])?;
    assert!(
        store.get(table, &[vec![1, 1]], &[])?[0].is_none(),
        "deleted"
    );
    assert_eq!(
        store.scan(table, &Scan::default())?.len(),
        usize::from(BUCKETS) * 3 - 1
    );
    store.put(
        table,
        &[Row::new(vec![1, 1]).with(FAM_B, b"q".to_vec(), b"back".to_vec())],
    )?;
    let back = store.get(table, &[vec![1, 1]], &[])?;
    assert_eq!(
        back[0].as_ref().map(|r| r.cells.len()),
        Some(1),
        "no old cells resurrected"
    );
    Ok(())
}

/// `delete_cells` removes exactly the named cells: other cells and families
/// of the row stay, a row left empty is gone, missing cells and rows are
/// ignored, and a cell put again afterwards is back (without old values).
pub fn delete_single_cells(store: &dyn TableStore, table: &str) -> Result<()> {
    store.create_table(table, &[FAM_A, FAM_B], BUCKETS)?;
    let wide = |key: Vec<u8>| {
        (0u8..50).fold(Row::new(key), |r, i| {
            r.with(FAM_A, vec![0x00, i, b':'], vec![i; 3])
        })
    };
    store.put(
        table,
        &[
            wide(vec![0, 1]).with(FAM_B, b"keep".to_vec(), b"b".to_vec()),
            wide(vec![0, 2]),
            Row::new(vec![0, 3]).with(FAM_A, b"only".to_vec(), b"x".to_vec()),
        ],
    )?;
    let gone: Vec<u8> = (0u8..50).filter(|i| i % 3 == 0).collect();
    let named = |key: Vec<u8>| {
        gone.iter().fold(Row::new(key), |r, i| {
            r.with(FAM_A, vec![0x00, *i, b':'], Vec::new())
        })
    };
    store.delete_cells(
        table,
        &[
            named(vec![0, 1]),
            named(vec![0, 2]).with(FAM_B, b"absent".to_vec(), Vec::new()),
            Row::new(vec![0, 3]).with(FAM_A, b"only".to_vec(), Vec::new()),
            named(vec![0, 9]),
        ],
    )?;
    let rows = store.get(
        table,
        &[vec![0, 1], vec![0, 2], vec![0, 3], vec![0, 9]],
        &[],
    )?;
    let left = |r: &Option<Row>| -> Vec<Vec<u8>> {
        r.as_ref()
            .map(|r| r.family(FAM_A).map(|c| c.qualifier.clone()).collect())
            .unwrap_or_default()
    };
    let want: Vec<Vec<u8>> = (0u8..50)
        .filter(|i| i % 3 != 0)
        .map(|i| vec![0x00, i, b':'])
        .collect();
    assert_eq!(left(&rows[0]), want, "only the named cells deleted");
    assert_eq!(
        rows[0].as_ref().and_then(|r| r.cell(FAM_B, b"keep")),
        Some(&b"b"[..]),
        "other family kept"
    );
    assert_eq!(left(&rows[1]), want, "a missing cell is ignored");
    assert!(rows[2].is_none(), "a row without cells is gone");
    assert!(rows[3].is_none(), "a missing row stays missing");
    let scanned = store.scan(table, &Scan::default())?;
    assert_eq!(keys_of(&scanned), vec![vec![0, 1], vec![0, 2]]);
    store.put(
        table,
        &[Row::new(vec![0, 1]).with(FAM_A, vec![0x00, 3, b':'], b"new".to_vec())],
    )?;
    let back = store.get(table, &[vec![0, 1]], &[FAM_A])?;
    assert_eq!(
        back[0]
            .as_ref()
            .and_then(|r| r.cell(FAM_A, &[0x00, 3, b':'])),
        Some(&b"new"[..]),
        "a deleted cell can be written again"
    );
    Ok(())
}

/// Regions: one per bucket, in order, contiguous, covering the key space.
pub fn regions_cover_buckets(store: &dyn TableStore, table: &str) -> Result<()> {
    store.create_table(table, &[FAM_A], BUCKETS)?;
    let regions = store.regions(table)?;
    assert_eq!(regions, bucket_regions(BUCKETS), "one region per bucket");
    assert!(
        regions.first().is_some_and(|r| r.start.is_empty()),
        "first region starts at the empty key"
    );
    assert!(
        regions.last().is_some_and(|r| r.end.is_empty()),
        "last region is unbounded"
    );
    for w in regions.windows(2) {
        assert_eq!(w[0].end, w[1].start, "regions are contiguous");
    }
    Ok(())
}

/// Binary keys containing 0x00 and 0xff sort and round-trip exactly.
pub fn binary_keys(store: &dyn TableStore, table: &str) -> Result<()> {
    store.create_table(table, &[FAM_A], BUCKETS)?;
    let keys: Vec<Vec<u8>> = vec![
        vec![0x00],
        vec![0x00, 0x00],
        vec![0x00, 0xff],
        vec![0x01, 0x00, 0x01],
        vec![0xff],
        vec![0xff, 0xff, 0x00],
    ];
    let rows: Vec<Row> = keys
        .iter()
        .rev()
        .map(|k| Row::new(k.clone()).with(FAM_A, vec![0x00, 0xff], k.clone()))
        .collect();
    store.put(table, &rows)?;
    let all = store.scan(table, &Scan::default())?;
    assert_eq!(keys_of(&all), keys, "byte order of binary keys");
    assert!(
        all.iter()
            .all(|r| r.cell(FAM_A, &[0x00, 0xff]) == Some(r.key.as_slice())),
        "binary qualifiers/values"
    );
    let tail = store.scan(table, &Scan::prefix(&[0xff]))?;
    assert_eq!(
        keys_of(&tail),
        vec![vec![0xff], vec![0xff, 0xff, 0x00]],
        "prefix of 0xff is unbounded above"
    );
    assert!(
        store
            .put(
                table,
                &[Row::new(Vec::new()).with(FAM_A, b"q".to_vec(), b"v".to_vec())]
            )
            .is_err(),
        "empty key rejected"
    );
    Ok(())
}

/// A batch of 20,000 rows in two families is written and read back.
pub fn large_batch(store: &dyn TableStore, table: &str) -> Result<()> {
    const ROWS: u32 = 20_000;
    store.create_table(table, &[FAM_A, FAM_B], BUCKETS)?;
    let rows: Vec<Row> = (0..ROWS)
        .map(|i| {
            let key = [&[(i % u32::from(BUCKETS)) as u8][..], &i.to_be_bytes()].concat();
            Row::new(key)
                .with(FAM_A, b"i".to_vec(), i.to_be_bytes())
                .with(FAM_B, b"t".to_vec(), format!("value {i}").into_bytes())
        })
        .collect();
    store.put(table, &rows)?;
    let all = store.scan(table, &Scan::default())?;
    assert_eq!(all.len(), ROWS as usize, "every row stored");
    assert!(all.windows(2).all(|w| w[0].key < w[1].key), "sorted");
    let per_bucket = store.scan(table, &Scan::prefix(&[1]).families(&[FAM_A]))?;
    assert_eq!(per_bucket.len(), (ROWS / u32::from(BUCKETS)) as usize);
    Ok(())
}
