//! The atomic batch check: [`TableStore::apply`], and the journal that
//! completes a batch a writer died in the middle of (with a store hook that
//! fails writes on purpose).

use super::super::api::{Row, Scan, TableStore};
use super::fixture::{check, keys_of, FAM_A, FAM_B};
use crate::error::{Error, Result};

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

/// Atomic index batches: [`TableStore::apply`] gives what the
/// same writes one by one give (a delete then a put of one row, cells
/// deleted then added); a batch that fails part-way on a store with atomic
/// batches leaves nothing; on one without, the batch's journal row survives
/// the failure and [`crate::Index::recover`] completes it. `tag` names the
/// tables used (unique per call on a shared store).
pub fn batches(store: std::sync::Arc<dyn TableStore>, tag: &str) -> Result<()> {
    use super::super::api::Mutation;
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
    super::super::api::apply_in_order(store.as_ref(), &mutations(&copy))?;
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
