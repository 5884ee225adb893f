//! Embedded [`TableStore`] on fjall 3.
//!
//! Layout: one fjall database per store; one keyspace per (table, family),
//! named `{table}.{family}`; the key is the row key and the value holds all
//! cells of that row in that family (`[u32 qlen][q][u32 vlen][v]...`, sorted
//! by qualifier). A keyspace `_meta` maps each table name to its layout (JSON:
//! families, bucket count). One value per (row, family) keeps scans cheap
//! (one LSM entry per row, not per cell); `put` merges by reading the current
//! value first, under a store-wide write lock.
//!
//! Durability: every `put`/`delete` is one atomic fjall write batch, and the
//! journal is persisted before the call returns: [`Durability::Process`]
//! (`PersistMode::Buffer`, survives a process crash) or
//! [`Durability::PowerLoss`] (`PersistMode::SyncData`, fdatasync, the default).
//!
//! The parts: `layout` (keyspace names, table layouts, name rules), `cells`
//! (the encoding of a row's cells in one family), `database` (the store, its
//! options, opening it, errors of failed writes, with `disk`), `reads` (gets
//! and scans), `writes` (puts, deletes, batches), `ingest` (bulk loads) and
//! `table_store` (the [`TableStore`] impl over them).
//!
//! [`TableStore`]: super::TableStore

mod cells;
mod database;
mod disk;
mod ingest;
mod layout;
mod reads;
mod table_store;
mod writes;

pub use database::{Durability, EmbeddedOptions, EmbeddedStore};
#[cfg(feature = "hbase")]
pub(crate) use layout::checked_layout;
pub use layout::MAX_MEMTABLE_BYTES;
