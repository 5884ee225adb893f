//! The text index of the cluster backend: immutable splits on the shared file store.
//!
//! Several crawl processes write and several query servers read, on other machines. Each
//! write (a pipeline batch) becomes, per (source, month of the key time) of its pages, one
//! small tantivy index, its files bundled into one file (a *split*) and written to the
//! shared file store (HDFS, beside the packs: `_text/{source}/{yyyy-mm}/{seq}-{nonce}.split`).
//! Once the file is durable, a row naming it is put in the manifest table
//! ([`SPLITS_TABLE`], HBase): the split is searchable from then on, before the batch's page
//! rows are written, as the embedded index's commit is. A reader lists the manifest on
//! every search (one small scan), fetches the splits it has not seen into its local cache
//! folder and opens them there (mmap), as Quickwit keeps tantivy splits on object storage.
//!
//! Nothing is changed in place. Every document carries the write sequence (`seq`, the
//! writer's clock in microseconds, strictly increasing in a process) of its split: a page
//! written again (a re-extraction, a replaced page) is current in its newest split only,
//! and a deleted page gets a tombstone row with the sequence of its deletion, which hides
//! every older version (Quickwit's delete opstamps). When a (source, month) holds
//! [`MERGE_AT`] splits, the writer that made the last one merges them into one, leaving
//! out the versions that are no longer current, publishes it, then removes the inputs'
//! rows and files. Two writers merging the same group at once publish the same pages
//! twice: a search returns a page once, its BM25 statistics count it twice until the
//! next merge.
//!
//! Relevance is the same as the embedded index's: BM25 with the statistics of every
//! split together ([`Bm25StatisticsProvider`]), not of each split alone.
//!
//! The parts: `files` (the file store role and the split file names),
//! `bundle` (the split file format), `manifest` (the manifest table's rows),
//! `state` (what a reader knows of the splits), `split_text` (the index:
//! opening, refreshing, fetching and publishing splits), `merge` and
//! `text_store` (the [`TextStore`](super::TextStore) impl).
//!
//! [`Bm25StatisticsProvider`]: tantivy::query::Bm25StatisticsProvider

mod bundle;
mod files;
mod manifest;
mod merge;
mod split_text;
mod state;
#[cfg(test)]
mod tests;
mod text_store;

pub use files::{FolderFiles, SplitFiles, SPLIT_FOLDER, UNLISTED_AFTER};
pub use manifest::SPLITS_TABLE;
pub use split_text::{SplitText, MERGE_AT};
