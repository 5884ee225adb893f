//! HBase [`TableStore`] over HBase's Thrift 1 server (`hbase-thrift` crate,
//! binary protocol, buffered transport; feature `hbase`).
//!
//! # Mapping
//!
//! * Cells are HBase columns `family:qualifier` (the qualifier may be empty
//!   or binary; the column is split at the first `:`). Each table keeps one
//!   version per cell (`maxVersions = 1`, compression and bloom filter `NONE`).
//! * **Timestamps** are chosen by the client: every `put`/`delete` call takes
//!   the next value of a per-store monotonic millisecond clock
//!   (`max(now, last + 1)`). A delete followed at once by a put of the same row
//!   therefore never hides the put (a delete marker hides every version up to
//!   its timestamp, and the server clock alone gives equal stamps within a
//!   millisecond), later puts always win a merge, and a retried call writes
//!   the very same cells again (idempotent).
//! * **Buckets and regions**: Thrift 1's `createTable` has no split keys and
//!   Thrift 1 offers no split call, so a table cannot be pre-split through this
//!   interface. The bucket count is kept in the store's own table
//!   [`META_TABLE`] (row = table name, `m:buckets`), and
//!   [`TableStore::regions`] answers the logical bucket regions
//!   ([`bucket_regions`]) as the embedded backend does; the query engine plans
//!   one scan per bucket either way. The physical regions are available from
//!   [`HbaseStore::server_regions`] (`getTableRegions`); pre-split with the
//!   HBase shell or Thrift 2 if region-level parallelism on the server matters.
//! * **Filters**: each [`CellFilter`] becomes
//!   `SingleColumnValueFilter('fam','qual',op,'binary:value',true,true)`
//!   (`Exists` = `>= binary:` with an empty value), AND-ed. The filter
//!   language takes raw bytes between single quotes, a quote is doubled, so
//!   any binary value is expressible. The filtered columns are added to the
//!   scan when their family is not requested and stripped from the answer.
//!   Filters are evaluated again on the client (cheap, and exact even if a
//!   server parses a value differently); [`HbaseOptions::server_side_filters`]
//!   = false evaluates them on the client only.
//! * **Batches**: `put`/`delete`/`get` are split into calls of at most
//!   [`HbaseOptions::max_batch_rows`] rows and about
//!   [`HbaseOptions::max_batch_bytes`] bytes (the server caps a message at
//!   ~100 MB). A batch is applied per row, not atomically.
//! * **Connections**: a small pool of synchronous clients. A client idle
//!   longer than [`HbaseOptions::validate_after`] is checked with
//!   `getTableNames` before reuse (the server drops idle connections after
//!   ~60 s). Transport and protocol errors empty the pool and the call is
//!   retried with doubling backoff up to [`HbaseOptions::retries`] times;
//!   scans resume after the last row received. A call that returns `Ok` was
//!   applied by the server; one that fails after the retries returns `Err`.
//!
//! The parts: `config` (options and counters), `client` (the store, its
//! connection pool and calls), `open` (connecting), `tables` (creating
//! tables, their layouts and regions), `columns` (the encoding of cells and
//! filters), `reads`, `writes` (with batches), `errors`, `table_store` (the
//! [`TableStore`] impl over them) and `thrift2` (the Thrift 2 admin that
//! creates pre-split tables).
//!
//! [`TableStore`]: super::TableStore
//! [`TableStore::regions`]: super::TableStore::regions
//! [`bucket_regions`]: super::bucket_regions
//! [`CellFilter`]: super::CellFilter

mod client;
mod columns;
mod config;
mod errors;
mod open;
mod reads;
mod table_store;
mod tables;
pub mod thrift2;
mod writes;

pub use client::HbaseStore;
pub use columns::filter_string;
pub use config::{HbaseOptions, HbaseStats};
pub use tables::META_TABLE;
pub use writes::plan_batches;
