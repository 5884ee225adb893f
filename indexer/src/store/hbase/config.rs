//! The options of an [`HbaseStore`] and its counters.

use std::time::Duration;

/// Options of [`HbaseStore::connect`](super::HbaseStore::connect). `Default` gives the documented values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HbaseOptions {
    /// Idle connections kept in the pool (more are opened under load). Default 16:
    /// a crawl's batch writes, lookups and queue reads use up to about a dozen
    /// at once, and a connection opened per burst costs the server a thread.
    pub pool_size: usize,
    /// TCP connect timeout. Default 3 s.
    pub connect_timeout: Duration,
    /// Socket read/write timeout of one call. Default 60 s.
    pub call_timeout: Duration,
    /// Upper bound of the estimated bytes sent in one `mutateRows` call (a
    /// single larger row is sent alone). Default 8 MiB (server cap ~100 MB).
    pub max_batch_bytes: usize,
    /// Rows per `mutateRows` / `getRowsWithColumns` call. Default 5,000.
    pub max_batch_rows: usize,
    /// Retries of a call after a transport error (so `retries + 1` attempts).
    /// Default 10 (about 15 s of backoff in total).
    pub retries: u32,
    /// First backoff; doubles per retry up to `max_backoff`. Default 100 ms.
    pub backoff: Duration,
    /// Longest backoff. Default 2 s.
    pub max_backoff: Duration,
    /// A pooled connection idle longer than this is validated before reuse.
    /// Default 20 s (the server drops idle connections after ~60 s).
    pub validate_after: Duration,
    /// Rows fetched per `scannerGetList` (and scanner caching). Default 1,000.
    pub scan_caching: usize,
    /// Also send [`CellFilter`]s to the server as a filter string (they are
    /// always evaluated on the client as well). Default true (verified
    /// against HBase 2.6 by the cluster tests); false = client side only.
    pub server_side_filters: bool,
    /// Address (`host:port`) of HBase's Thrift 2 server (`hbase thrift2`),
    /// used to create tables pre-split into one region per salt bucket
    /// (Thrift 1 cannot pass split keys). `None`: tables are created through
    /// Thrift 1 with a single region, and a warning says so. Default `None`.
    pub admin: Option<String>,
}

impl Default for HbaseOptions {
    fn default() -> Self {
        HbaseOptions {
            pool_size: 16,
            connect_timeout: Duration::from_secs(3),
            call_timeout: Duration::from_secs(60),
            max_batch_bytes: 8 << 20,
            max_batch_rows: 5_000,
            retries: 10,
            backoff: Duration::from_millis(100),
            max_backoff: Duration::from_secs(2),
            validate_after: Duration::from_secs(20),
            scan_caching: 1_000,
            server_side_filters: true,
            admin: None,
        }
    }
}

/// Counters of an [`HbaseStore`](super::HbaseStore) (for tests and benchmarks).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HbaseStats {
    /// Connections opened.
    pub connects: u64,
    /// Calls retried after a transport/protocol error.
    pub retries: u64,
    /// `mutateRows` calls made (after splitting batches).
    pub mutate_calls: u64,
}
