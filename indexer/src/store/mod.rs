//! Where the tables live, laid out as tantivy's `directory/`: the [`TableStore`]
//! trait with its contract (`api`), a backend per file (`embedded`: fjall on this
//! machine; `hbase` with `thrift2` for table administration: an HBase cluster
//! through its Thrift servers) and `conformance`: the checks every backend passes.

mod api;
#[cfg(any(test, feature = "conformance"))]
pub mod conformance;
pub mod embedded;
#[cfg(feature = "hbase")]
pub mod hbase;
#[cfg(feature = "hbase")]
pub mod thrift2;

pub use api::*;
