//! Conformance suite for [`TableStore`] backends.
//!
//! Every function takes a store and a table name it may create (use a fresh
//! name per call); it panics with a description when the backend breaks the
//! contract documented in [`crate::store`], and returns backend errors.
//! [`run_all`] runs the whole suite with tables named `{prefix}_...`.
//! Enabled in tests and with the `conformance` feature.

use super::api::{bucket_regions, CellFilter, FilterOp, Row, Scan, TableStore};
use crate::error::{Error, Result};

const FAM_A: &str = "a";
const FAM_B: &str = "b";
const BUCKETS: u8 = 4;

fn keys_of(rows: &[Row]) -> Vec<Vec<u8>> {
    rows.iter().map(|r| r.key.clone()).collect()
}

/// Rows `[b][i]` for every bucket b and i in 0..n, family a: `n` = i (u64 BE),
/// family b: `name` = "row b/i".
fn grid(n: u8) -> Vec<Row> {
    let mut rows = Vec::new();
    for b in 0..BUCKETS {
        for i in 0..n {
            rows.push(
                Row::new(vec![b, i])
                    .with(FAM_A, b"n".to_vec(), u64::from(i).to_be_bytes())
                    .with(FAM_B, b"name".to_vec(), format!("row {b}/{i}").into_bytes()),
            );
        }
    }
    rows
}

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

/// Runs every check with tables `{prefix}_create`, `{prefix}_putget`, ...
pub fn run_all(store: &dyn TableStore, prefix: &str) -> Result<()> {
    create_is_idempotent(store, &format!("{prefix}_create"))?;
    put_get_merge(store, &format!("{prefix}_putget"))?;
    scan_ranges(store, &format!("{prefix}_ranges"))?;
    scan_filters(store, &format!("{prefix}_filters"))?;
    scan_each_matches_scan(store, &format!("{prefix}_each"))?;
    delete_rows(store, &format!("{prefix}_delete"))?;
    delete_single_cells(store, &format!("{prefix}_delcells"))?;
    regions_cover_buckets(store, &format!("{prefix}_regions"))?;
    binary_keys(store, &format!("{prefix}_binary"))?;
    large_batch(store, &format!("{prefix}_large"))?;
    Ok(())
}

/// Fails the suite (like the other checks here) when `ok` is false.
fn check(ok: bool, what: &str) -> Result<()> {
    assert!(ok, "{what}");
    Ok(())
}

/// The crawl state on a store: a job run's queue survives a reopen (a crash),
/// hands out each URL once, keeps a page's links once the page is finished,
/// is cleared for a new run; runs come back newest first. `job` names the
/// jobs used (unique per call on a shared store).
pub fn crawl_state(store: std::sync::Arc<dyn TableStore>, job: &str) -> Result<()> {
    use crate::crawlstate::{FrontierEntry, FrontierTable, RunRecord, RunStatus, RunsTable};
    let e = |url: &str, depth: u32| FrontierEntry {
        url: url.to_owned(),
        depth,
        uncaptured: false,
    };
    let other = format!("{job}-other");
    {
        let q = FrontierTable::open(store.clone(), job)?;
        check(q.push(&[e("http://a/", 0)], &[])? == 1, "seed queued")?;
        check(q.take(10)? == vec![e("http://a/", 0)], "seed taken")?;
        let links = [e("http://a/2", 2), e("http://a/1", 1), e("http://a/1", 1)];
        check(q.push(&links, &["http://a/old"])? == 2, "links queued once")?;
        check(!q.mark_seen("http://a/old")?, "skipped URLs count as seen")?;
        q.finish(&["http://a/".to_owned()])?;
        check(q.take(1)? == vec![e("http://a/1", 1)], "lowest depth first")?;
        let o = FrontierTable::open(store.clone(), &other)?;
        check(
            o.push(&[e("http://a/1", 1)], &[])? == 1,
            "jobs are separate",
        )?;
        o.flush()?;
        // "crash": http://a/1 is in flight, http://a/2 queued
    }
    let q = FrontierTable::open(store.clone(), job)?;
    check(q.pending() == 2, "two URLs left after the crash")?;
    check(q.seen_count() == 4, "seen URLs survive")?;
    let mut left: Vec<String> = q.take(10)?.into_iter().map(|x| x.url).collect();
    left.sort();
    check(
        left == ["http://a/1", "http://a/2"],
        "in-flight and queued URLs come back",
    )?;
    check(
        q.push(&[e("http://a/", 0)], &[])? == 0,
        "a finished URL is not queued again",
    )?;
    check(
        FrontierTable::clear(&store, job)? == 6,
        "clear removes the run's rows",
    )?;
    check(
        FrontierTable::open(store.clone(), job)?.seen_count() == 0,
        "cleared",
    )?;
    check(
        FrontierTable::open(store.clone(), &other)?.pending() == 1,
        "the other job stays",
    )?;
    FrontierTable::clear(&store, &other)?;

    let runs = RunsTable::open(store)?;
    let t0 = chrono::DateTime::from_timestamp(1_800_000_000, 0).unwrap_or_default();
    for (secs, status) in [(0, RunStatus::Finished), (60, RunStatus::Running)] {
        runs.put(&RunRecord {
            job: job.to_owned(),
            started: t0 + chrono::Duration::seconds(secs),
            ended: None,
            status,
            heartbeat: t0,
            pid: 1,
            host: "h".into(),
            resumed: 0,
            error: None,
            summary: serde_json::json!({ "pages": secs }),
            writers: if secs == 0 {
                Vec::new()
            } else {
                vec!["abcd2345".into(), "efgh6712".into()]
            },
            appended: Vec::new(),
        })?;
    }
    let running = t0 + chrono::Duration::seconds(60);
    runs.note_appended(job, running, "news/2024/05/01/a.warc.gz", 4096)?;
    // A later put of the record (a heartbeat) keeps what was noted beside it.
    let mut again = runs.list(Some(job), 1)?.remove(0);
    again.appended.clear();
    again.heartbeat = running;
    runs.put(&again)?;
    let listed = runs.list(Some(job), 10)?;
    check(
        listed.len() == 2 && listed[0].status == RunStatus::Running,
        "runs newest first",
    )?;
    check(
        listed[0].writers == ["abcd2345", "efgh6712"] && listed[1].writers.is_empty(),
        "a run's pack writers are kept",
    )?;
    check(
        listed[0].appended == [("news/2024/05/01/a.warc.gz".to_string(), 4096)]
            && listed[1].appended.is_empty(),
        "a run's appended packs are kept beside its record",
    )?;
    Ok(())
}

/// Near-duplicate linking on a store (the `simhash` and `stories` tables):
/// pages within `k` bits of an earlier page get the earliest page of its story
/// (across batches and inside one), the near-duplicate flag in their index
/// entries (`collapse` leaves them out), copy counts and the story's copies;
/// a page is never a near-duplicate of its own URL; distances 4..=7 are
/// found through the one-bit probes; statistics by story agree with the full
/// scan. `tag` names the source and URLs used (unique per call on a shared
/// store); the fingerprints are derived from it. The pages are dated March
/// 1999, before the years other tests on a shared store query.
pub fn near_duplicates(store: std::sync::Arc<dyn TableStore>, tag: &str) -> Result<()> {
    use crate::query::{GroupBy, Interval, Query, StatsQuery, GROUP_COPIES, GROUP_STORIES};
    use crate::record::PageRecord;
    use chrono::TimeZone;
    let index = crate::Index::new(store, crate::IndexOptions { buckets: 4 })?;
    let source = format!("nd_{}", tag.replace('-', "_"));
    let base = u64::from_be_bytes(crate::keys::url_hash(tag)) | 1;
    let day = |d: u32, h: u32| {
        chrono::Utc
            .with_ymd_and_hms(1999, 3, d, h, 0, 0)
            .single()
            .unwrap_or_default()
    };
    let page = |name: &str, fingerprint: Option<u64>, d: u32, h: u32| PageRecord {
        url: format!("http://{tag}.example/{name}"),
        title: format!("story {name}"),
        published: Some(day(d, h)),
        fetched: day(d, h),
        first_seen: None,
        media: Some(format!("media-{name}")),
        comments: None,
        participants: None,
        keywords: vec!["repost".into()],
        topic: "news".into(),
        topic_score: 0.5,
        cluster: 0,
        pack_path: "news/2019/03/01/c0-0.warc.gz".into(),
        offset: 0,
        length: 100,
        digest: format!("sha1:{name}"),
        record_id: format!("<urn:uuid:{name}>"),
        simhash: fingerprint,
        simhash_version: fingerprint.map(|_| 2),
        near_duplicate_of: Some("stale".into()),
        published_from: Some("meta".into()),
        author: None,
        media_from_host: false,
        outlet: None,
        language: Some("en".into()),
        charset: None,
        status: 200,
        source: source.clone(),
        revisit: false,
    };
    let url = |name: &str| format!("http://{tag}.example/{name}");
    let far = base.rotate_left(32) ^ 0x5555_5555_5555_5555;
    // a: first; d: far from everything; b: 2 bits from a; c: 2 bits from b,
    // 4 from a (linked through b); e: 5 bits from a (k = 3: new story).
    let a = base;
    let b = a ^ 0b11;
    let c = b ^ (0b11 << 40);
    let e = a ^ 0b1_1111 << 20;
    let mut first = vec![page("a", Some(a), 1, 8), page("d", Some(far), 1, 9)];
    let s = index.link_near_duplicates(&mut first, 3)?;
    check(
        s.fingerprinted == 2 && s.near_duplicates == 0,
        "two stories",
    )?;
    check(
        first.iter().all(|p| p.near_duplicate_of.is_none()),
        "first pages are no near-duplicates",
    )?;
    index.index_pages(&first)?;
    let mut second = vec![
        page("b", Some(b), 2, 8),
        page("c", Some(c), 2, 9),
        page("x", None, 2, 10),
    ];
    let s = index.link_near_duplicates(&mut second, 3)?;
    check(
        s.fingerprinted == 2 && s.near_duplicates == 2,
        "b and c linked",
    )?;
    check(
        second[0].near_duplicate_of.as_deref() == Some(url("a").as_str()),
        "b nearly duplicates a",
    )?;
    check(
        second[1].near_duplicate_of.as_deref() == Some(url("a").as_str()),
        "c (within 3 of b, in the same batch) gets b's story root a",
    )?;
    check(
        second[2].near_duplicate_of.as_deref() == Some("stale"),
        "a page without fingerprint is left alone",
    )?;
    second[2].near_duplicate_of = None;
    index.index_pages(&second)?;
    // A new version of a: 1 bit from its own old entry, nothing else near.
    let mut again = vec![page("a", Some(a ^ 1 << 63), 1, 8)];
    index.link_near_duplicates(&mut again, 3)?;
    check(
        again[0].near_duplicate_of.as_deref() != Some(url("a").as_str()),
        "a page is never a near-duplicate of its own URL",
    )?;
    let k3 = vec![page("e", Some(e), 3, 8)];
    index.link_near_duplicates(&mut k3.clone(), 3)?;
    check(
        {
            let mut t = k3.clone();
            t[0].url = url("e3");
            index.link_near_duplicates(&mut t, 3)?;
            t[0].near_duplicate_of.as_deref() == Some(url("e").as_str())
        },
        "an identical fingerprint of another URL is a near-duplicate",
    )?;
    // Two copies handed in later-fetched first: linked in fetch order, as a
    // rebuild from the packs (capture order) would link them.
    let q = base.rotate_left(16) ^ 0x0f0f_3c3c_0f0f_3c3c;
    let mut pair = vec![page("q2", Some(q), 4, 10), page("q1", Some(q), 4, 9)];
    index.link_near_duplicates(&mut pair, 3)?;
    check(
        pair[1].near_duplicate_of.is_none()
            && pair[0].near_duplicate_of.as_deref() == Some(url("q1").as_str()),
        "a batch is linked in fetch order, not in the order handed in",
    )?;
    let mut far_k = vec![page("f", Some(a ^ 0b111_1111 << 10), 3, 9)];
    index.link_near_duplicates(&mut far_k, 7)?;
    check(
        far_k[0].near_duplicate_of.as_deref() == Some(url("a").as_str()),
        "7 bits away is found with k = 7",
    )?;
    let mut g = vec![page("g", Some(a ^ 0b111_1111 << 30), 3, 10)];
    index.link_near_duplicates(&mut g, 3)?;
    check(
        g[0].near_duplicate_of.is_none(),
        "7 bits away is not within 3",
    )?;
    check(
        index.link_near_duplicates(&mut g, 8).is_err(),
        "k over the maximum is refused",
    )?;

    // Copies and counts.
    let copies = index.story_copies(&second[1])?;
    let names: Vec<&str> = copies.iter().map(|c| c.url.as_str()).collect();
    check(
        names.first() == Some(&url("a").as_str())
            && names.contains(&url("b").as_str())
            && names.contains(&url("c").as_str())
            && names.contains(&url("f").as_str()),
        "the story's copies: a, b, c, f",
    )?;
    check(
        copies.iter().any(|c| {
            c.url == url("b")
                && c.media.as_deref() == Some("media-b")
                && c.source == source
                && c.distance == 2
        }),
        "a copy lists source, media and distance",
    )?;
    let counts = index.copy_counts(&[&first[0], &first[1], &second[0], &second[2]])?;
    check(counts[1] == 1 && counts[3] == 1, "a lone page is one copy")?;
    check(
        counts[0] == counts[2] && counts[0] >= 4,
        "a and b count the same story",
    )?;

    // Queries: collapse leaves the near-duplicates out.
    let mut q = Query::new(&[source.as_str()], day(1, 0), day(4, 0));
    let all = index.search(&q)?;
    check(all.len() == 5, "five indexed pages")?;
    q.collapse_near_duplicates = true;
    let collapsed: Vec<String> = index.search(&q)?.into_iter().map(|h| h.page.url).collect();
    check(
        collapsed == [url("a"), url("d"), url("x")],
        "collapse keeps a, d and x",
    )?;
    let full: Vec<String> = index
        .full_scan_search(&q)?
        .into_iter()
        .map(|h| h.page.url)
        .collect();
    check(full == collapsed, "collapse == full scan")?;

    // Statistics by story: day 1 a, d (2 stories); day 2 b, c (story a), x.
    let sq = StatsQuery::new(
        Query::new(&[source.as_str()], day(1, 0), day(4, 0)),
        Interval::Day,
        Some(GroupBy::Story),
    );
    let rows = index.stats(&sq)?;
    let get = |bucket: &str, g: &str| {
        rows.iter()
            .find(|r| r.bucket == bucket && r.group.as_deref() == Some(g))
            .map_or(0, |r| r.count)
    };
    check(
        get("1999-03-01", GROUP_STORIES) == 2 && get("1999-03-01", GROUP_COPIES) == 2,
        "day 1: 2 stories, 2 copies",
    )?;
    check(
        get("1999-03-02", GROUP_STORIES) == 2 && get("1999-03-02", GROUP_COPIES) == 3,
        "day 2: 2 stories (a's, x), 3 copies",
    )?;
    check(
        index.full_scan_stats(&sq)? == rows,
        "story stats == full scan",
    )?;

    // Recipes: the pages above are of version 2. A fingerprint of another
    // recipe is never compared with them, even when equal; one not on
    // record (a row from before versions were kept) still is.
    let mut v3 = vec![page("v3", Some(far), 4, 8)];
    v3[0].simhash_version = Some(3);
    index.link_near_duplicates(&mut v3, 3)?;
    check(
        v3[0].near_duplicate_of.is_none(),
        "an equal fingerprint of another recipe is no near-duplicate",
    )?;
    let mut v3b = vec![page("v3b", Some(far ^ 1), 4, 9)];
    v3b[0].simhash_version = Some(3);
    index.link_near_duplicates(&mut v3b, 3)?;
    check(
        v3b[0].near_duplicate_of.as_deref() == Some(url("v3").as_str()),
        "fingerprints of one recipe are compared (v3b nearly duplicates v3)",
    )?;
    let mut legacy = vec![page("old", Some(far ^ 1 << 40), 4, 10)];
    legacy[0].simhash_version = None;
    index.link_near_duplicates(&mut legacy, 3)?;
    check(
        legacy[0].near_duplicate_of.as_deref() == Some(url("d").as_str()),
        "an unrecorded recipe is compared with every one (the earliest root, d)",
    )?;
    Ok(())
}

/// Passes reads and table creation through, fails the `fail_at`-th write
/// (counting from 0) and every one after: a writer that dies in the middle
/// of a batch, on a backend without atomic batches.
struct FailingWrites {
    writes: std::sync::atomic::AtomicUsize,
    fail_at: usize,
}

impl FailingWrites {
    fn write(&self) -> Result<()> {
        let n = self
            .writes
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        if n >= self.fail_at {
            return Err(Error::Invalid(format!("injected failure of write {n}")));
        }
        Ok(())
    }
}

impl crate::store::Hook for FailingWrites {
    fn put(&self, inner: &dyn TableStore, table: &str, rows: &[Row]) -> Result<()> {
        self.write()?;
        inner.put(table, rows)
    }
    fn delete(&self, inner: &dyn TableStore, table: &str, keys: &[Vec<u8>]) -> Result<()> {
        self.write()?;
        inner.delete(table, keys)
    }
    fn delete_cells(&self, inner: &dyn TableStore, table: &str, rows: &[Row]) -> Result<()> {
        self.write()?;
        inner.delete_cells(table, rows)
    }
}

/// Atomic index batches (issue 13): [`TableStore::apply`] gives what the
/// same writes one by one give (a delete then a put of one row, cells
/// deleted then added); a batch that fails part-way on a store with atomic
/// batches leaves nothing; on one without, the batch's journal row survives
/// the failure and [`crate::Index::recover`] completes it. `tag` names the
/// tables used (unique per call on a shared store).
pub fn batches(store: std::sync::Arc<dyn TableStore>, tag: &str) -> Result<()> {
    use super::api::Mutation;
    let table = format!("{tag}_batch");
    let copy = format!("{tag}_batch_seq");
    let seed = || {
        vec![
            Row::new(b"k1".to_vec())
                .with(FAM_A, b"x".to_vec(), b"1".to_vec())
                .with(FAM_B, b"y".to_vec(), b"2".to_vec()),
            Row::new(b"k2".to_vec())
                .with(FAM_A, b"x".to_vec(), b"old".to_vec())
                .with(FAM_A, b"keep".to_vec(), b"k".to_vec()),
            Row::new(b"k3".to_vec()).with(FAM_B, b"only".to_vec(), b"v".to_vec()),
        ]
    };
    let mutations = |t: &str| {
        vec![
            Mutation::Delete {
                table: t.to_string(),
                keys: vec![b"k1".to_vec()],
            },
            Mutation::Put {
                table: t.to_string(),
                rows: vec![Row::new(b"k1".to_vec()).with(FAM_A, b"z".to_vec(), b"3".to_vec())],
            },
            Mutation::DeleteCells {
                table: t.to_string(),
                rows: vec![
                    Row::new(b"k2".to_vec()).with(FAM_A, b"x".to_vec(), Vec::new()),
                    Row::new(b"k3".to_vec()).with(FAM_B, b"only".to_vec(), Vec::new()),
                ],
            },
            Mutation::Put {
                table: t.to_string(),
                rows: vec![
                    Row::new(b"k2".to_vec()).with(FAM_B, b"w".to_vec(), b"new".to_vec()),
                    Row::new(b"k4".to_vec()).with(FAM_A, b"n".to_vec(), b"4".to_vec()),
                ],
            },
        ]
    };
    for t in [&table, &copy] {
        store.create_table(t, &[FAM_A, FAM_B], 1)?;
        store.put(t, &seed())?;
    }
    store.apply(&mutations(&table))?;
    super::api::apply_in_order(store.as_ref(), &mutations(&copy))?;
    let all = |t: &str| store.scan(t, &Scan::default());
    let got = all(&table)?;
    check(
        got == all(&copy)?,
        "apply gives what the same writes one by one give",
    )?;
    check(
        keys_of(&got) == [b"k1".to_vec(), b"k2".to_vec(), b"k4".to_vec()],
        "k3 lost its only cell and is gone",
    )?;
    check(
        got[0].cells.len() == 1 && got[0].cell(FAM_A, b"z") == Some(b"3".as_slice()),
        "k1 deleted then put holds only the put",
    )?;
    check(
        got[1].cell(FAM_A, b"x").is_none()
            && got[1].cell(FAM_A, b"keep").is_some()
            && got[1].cell(FAM_B, b"w") == Some(b"new".as_slice()),
        "k2 lost one cell and gained one",
    )?;

    // A batch that fails part-way.
    let fresh = format!("{tag}_batch_fail");
    store.create_table(&fresh, &[FAM_A, FAM_B], 1)?;
    store.put(&fresh, &seed())?;
    let before = store.scan(&fresh, &Scan::default())?;
    if store.atomic_apply() {
        let mut bad = mutations(&fresh);
        bad.insert(
            2,
            Mutation::Put {
                table: format!("{tag}_no_such_table"),
                rows: vec![Row::new(b"k".to_vec()).with(FAM_A, b"q".to_vec(), b"v".to_vec())],
            },
        );
        check(
            store.apply(&bad).is_err(),
            "a write to a missing table fails",
        )?;
        let left = store.scan(&fresh, &Scan::default())?;
        check(left == before, "a failed atomic batch leaves nothing")?;
    }
    // Through the journal: the writer dies after two of its four writes.
    let failing: std::sync::Arc<dyn TableStore> = std::sync::Arc::new(crate::store::Hooked {
        inner: store.clone(),
        hook: FailingWrites {
            writes: std::sync::atomic::AtomicUsize::new(0),
            fail_at: 3, // the journal row, then two of the batch's writes
        },
    });
    let index = crate::Index::new(failing, crate::IndexOptions { buckets: 1 })?;
    check(
        index.commit(&mutations(&fresh)).is_err(),
        "the injected failure is reported",
    )?;
    drop(index);
    let half = store.scan(&fresh, &Scan::default())?;
    check(half != got && half != before, "the batch was cut part-way")?;
    let index = crate::Index::new(store.clone(), crate::IndexOptions { buckets: 1 })?;
    let recovered = index.recover()?;
    check(recovered.batches >= 1, "the journal row was found")?;
    let done = store.scan(&fresh, &Scan::default())?;
    check(done == got, "recovery completes the batch")?;
    check(
        index.recover()?.batches == 0,
        "the journal row is gone after recovery",
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn embedded_store_keeps_the_crawl_state() -> crate::Result<()> {
        let dir = tempfile::tempdir().map_err(|e| crate::Error::backend("tempdir", e))?;
        let store = std::sync::Arc::new(crate::EmbeddedStore::open(dir.path())?);
        super::crawl_state(store, "conf-job")
    }

    #[test]
    fn embedded_store_links_near_duplicates() -> crate::Result<()> {
        let dir = tempfile::tempdir().map_err(|e| crate::Error::backend("tempdir", e))?;
        let store = std::sync::Arc::new(crate::EmbeddedStore::open(dir.path())?);
        super::near_duplicates(store, "conf-nd")
    }

    #[test]
    fn embedded_store_applies_batches_atomically() -> crate::Result<()> {
        let dir = tempfile::tempdir().map_err(|e| crate::Error::backend("tempdir", e))?;
        let store = std::sync::Arc::new(crate::EmbeddedStore::open(dir.path())?);
        super::batches(store, "conf")
    }

    #[test]
    fn embedded_store_conforms() -> crate::Result<()> {
        let dir = tempfile::tempdir().map_err(|e| crate::Error::backend("tempdir", e))?;
        let store = crate::EmbeddedStore::open(dir.path())?;
        super::run_all(&store, "conf")
    }
}
