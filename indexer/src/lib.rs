//! indexer stage of harvest: the [`TableStore`] trait and its embedded
//! backend, row-key encoding, page records, local index rows, the query
//! engine and statistics.
//!
//! Start with [`EmbeddedStore::open`] (or another [`TableStore`]), wrap it in
//! an [`Index`], call [`Index::index_pages`] once the pack records are
//! durable, and ask [`Index::search`] / [`Index::stats`].

pub mod batch;
pub mod error;
pub mod index;
pub mod keys;
pub mod overlay;
pub mod query;
pub mod record;
pub mod relocate;
pub mod search;
pub mod store;
pub mod tables;
// The table modules keep their paths (`indexer::captures`, ...).
#[cfg(any(test, feature = "conformance"))]
pub use store::conformance;
pub use store::embedded;
#[cfg(feature = "hbase")]
pub use store::hbase;
#[cfg(feature = "hbase")]
pub use store::thrift2;
pub use tables::{captures, clusters, crawlstate, images, neardup, pages, textmark};
pub mod text;
pub mod zone;

pub use batch::{Mutation, ReadRows, Recovered, JOURNAL_TABLE};
pub use captures::{Capture, CaptureKind, CAPTURES_TABLE};
pub use clusters::ClusterRow;
pub use crawlstate::{
    FrontierEntry, FrontierTable, RunRecord, RunStatus, RunsTable, FRONTIER_TABLE, RUNS_TABLE,
};
pub use embedded::{Durability, EmbeddedOptions, EmbeddedStore};
pub use error::{Error, Result};
#[cfg(feature = "hbase")]
pub use hbase::{HbaseOptions, HbaseStats, HbaseStore};
pub use images::{ImageEntry, IMAGES_TABLE};
pub use index::{
    Index, IndexOptions, PageKey, StoredPageEntries, CLUSTERS_TABLE, DIGESTS_TABLE, URLS_TABLE,
};
pub use keys::{table_name, DEFAULT_BUCKETS};
pub use neardup::{LinkSummary, StoryCopy, SIMHASH_TABLE, STORIES_TABLE};
pub use overlay::InFlight;
pub use pages::{PageDetail, PageId};
pub use query::{Bounds, Cursor, GroupBy, Interval, PageHit, Query, Sort, StatsQuery, StatsRow};
pub use record::{DigestEntry, PackLocation, PageRecord, UrlState, PUBLISHED_FROM_FETCH};
pub use relocate::{Moved, Relocated};
pub use search::{SearchPage, DEFAULT_PAGE_LIMIT, MAX_PAGE_LIMIT, MAX_SORTED_MATCHES};
pub use store::{
    bucket_regions, create_tables, prefix_end, Cell, CellFilter, FilterOp, Region, Row, Scan,
    TableStore,
};
pub use text::{TextDoc, TextQuery, TextStore};
pub use textmark::TEXT_MARKS_TABLE;
#[cfg(feature = "hbase")]
pub use thrift2::{ServerType, Thrift2Admin};
pub use zone::{BucketPlan, Zone};
