//! Conformance suite for [`TableStore`] backends.
//!
//! Every function takes a store and a table name it may create (use a fresh
//! name per call); it panics with a description when the backend breaks the
//! contract documented in [`crate::store`], and returns backend errors.
//! [`run_all`] runs the whole suite with tables named `{prefix}_...`.
//! Enabled in tests and with the `conformance` feature.

//!
//! The checks come in groups, a module each: `rows` (tables, put and get,
//! deletes, regions, binary keys, a large batch), `scans`, `crawl_state`,
//! `near_duplicates` and `batches`; `fixture` holds what they share.

mod batches;
mod crawl_state;
mod fixture;
mod near_duplicates;
mod rows;
mod scans;
#[cfg(test)]
mod tests;

use super::api::TableStore;
use crate::error::Result;

pub use batches::batches;
pub use crawl_state::crawl_state;
pub use near_duplicates::near_duplicates;
pub use rows::{
    binary_keys, create_is_idempotent, delete_rows, delete_single_cells, large_batch,
    put_get_merge, regions_cover_buckets,
};
pub use scans::{scan_each_matches_scan, scan_filters, scan_ranges};

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
