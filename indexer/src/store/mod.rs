//! Where the tables live, laid out as tantivy's `directory/`: the [`TableStore`]
//! trait with its contract (`api`), a backend per folder (`embedded`: fjall on
//! this machine; `hbase`, with its `thrift2` admin for table creation: an HBase
//! cluster through its Thrift servers) and `conformance`: the checks every
//! backend passes.

mod api;
#[cfg(any(test, feature = "conformance"))]
pub mod conformance;
pub mod embedded;
#[cfg(feature = "hbase")]
pub mod hbase;

pub use api::*;
#[cfg(feature = "hbase")]
pub use hbase::thrift2;
