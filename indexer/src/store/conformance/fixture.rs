//! What the checks share: the two families and bucket count of their tables,
//! the grid of rows most of them write, and [`check`], which fails the suite
//! like an `assert!` while reading as one step of a check. Kept apart so each
//! group of checks uses it as a sibling.

use super::super::api::Row;
use crate::error::Result;

pub(super) const FAM_A: &str = "a";
pub(super) const FAM_B: &str = "b";
pub(super) const BUCKETS: u8 = 4;

pub(super) fn keys_of(rows: &[Row]) -> Vec<Vec<u8>> {
    rows.iter().map(|r| r.key.clone()).collect()
}

/// Rows `[b][i]` for every bucket b and i in 0..n, family a: `n` = i (u64 BE),
/// family b: `name` = "row b/i".
pub(super) fn grid(n: u8) -> Vec<Row> {
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

/// Fails the suite (like the other checks here) when `ok` is false.
pub(super) fn check(ok: bool, what: &str) -> Result<()> {
    assert!(ok, "{what}");
    Ok(())
}
