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

use std::collections::{BTreeMap, HashMap};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use hbase_thrift::hbase::{
    AlreadyExists, BatchMutation, ColumnDescriptor, HbaseSyncClient, IOError, IllegalArgument,
    Mutation, THbaseSyncClient, TRowResult, TScan,
};
use thrift::protocol::{TBinaryInputProtocol, TBinaryOutputProtocol};
use thrift::transport::{
    ReadHalf, TBufferedReadTransport, TBufferedWriteTransport, TIoChannel, TTcpChannel, WriteHalf,
};

use super::api::Mutation as BatchWrite;
use super::api::{bucket_regions, Cell, CellFilter, FilterOp, Region, Row, Scan, TableStore};
use super::embedded::checked_layout;
use super::thrift2::{bucket_split_keys, ServerType, Thrift2Admin};
use crate::error::{Error, Result};

/// Table holding the layout (bucket count, families) of every table created
/// through this store. A `.` cannot appear in a harvest table name, so it
/// never collides; it is hidden from [`TableStore::list_tables`].
pub const META_TABLE: &str = "harvest.tables";
/// Family of [`META_TABLE`].
const META_FAMILY: &str = "m";
/// Qualifier holding the bucket count (one byte).
const META_BUCKETS: &[u8] = b"buckets";
/// Qualifier holding the families (JSON list, informational).
const META_FAMILIES: &[u8] = b"families";
/// Separator of family and qualifier in a Thrift 1 column name.
const COLUMN_SEP: u8 = b':';
/// Compression and bloom filter names for new column families.
const NONE: &str = "NONE";
/// HBase's "forever" time to live.
const TTL_FOREVER: i32 = i32::MAX;
/// Estimated per-cell overhead of a mutation on the wire (field headers,
/// flags, lengths).
const MUTATION_OVERHEAD: usize = 24;
/// Most connections [`TableStore::apply`] sends a batch's writes over at once.
const APPLY_THREADS: usize = 8;
/// Prefix of the message of a Thrift "unknown method" reply.
const UNKNOWN_METHOD: &str = "unknown thrift method";
/// HBase's exception class for an existing table (inside an IOError message).
const TABLE_EXISTS: &str = "TableExistsException";
/// Name used in errors.
const SERVICE: &str = "HBase Thrift server";

type Client = HbaseSyncClient<
    TBinaryInputProtocol<TBufferedReadTransport<ReadHalf<TTcpChannel>>>,
    TBinaryOutputProtocol<TBufferedWriteTransport<WriteHalf<TTcpChannel>>>,
>;

/// Options of [`HbaseStore::connect`]. `Default` gives the documented values.
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

/// Layout of a table as known to this store.
#[derive(Debug, Clone, PartialEq, Eq)]
struct TableMeta {
    /// Sorted, deduplicated family names.
    families: Vec<String>,
    buckets: u8,
}

struct PooledClient {
    client: Client,
    idle_since: Instant,
}

/// Counters of an [`HbaseStore`] (for tests and benchmarks).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HbaseStats {
    /// Connections opened.
    pub connects: u64,
    /// Calls retried after a transport/protocol error.
    pub retries: u64,
    /// `mutateRows` calls made (after splitting batches).
    pub mutate_calls: u64,
}

/// The HBase table store (a pool of Thrift 1 clients).
pub struct HbaseStore {
    /// Thrift 2 admin for pre-split table creation ([`HbaseOptions::admin`]).
    admin: Option<Thrift2Admin>,
    addr: String,
    socket: SocketAddr,
    options: HbaseOptions,
    pool: Mutex<Vec<PooledClient>>,
    tables: Mutex<HashMap<String, TableMeta>>,
    clock: AtomicI64,
    /// Set when the server answered `mutateRowsTs` with "unknown method".
    no_ts_mutations: AtomicBool,
    /// Set once a `mutateRowsTs` call succeeded: cells then carry the
    /// timestamps this store gives them, which [`TableStore::apply`] needs to
    /// send a batch's writes side by side.
    ts_mutations_work: AtomicBool,
    stats: Mutex<HbaseStats>,
}

impl std::fmt::Debug for HbaseStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HbaseStore")
            .field("addr", &self.addr)
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

/// Whether a Thrift error means the connection is unusable (retry on a new one).
fn is_transport(e: &thrift::Error) -> bool {
    matches!(e, thrift::Error::Transport(_) | thrift::Error::Protocol(_))
}

/// A readable message for a Thrift error (user exceptions carry HBase's text).
fn describe(e: &thrift::Error) -> String {
    if let thrift::Error::Application(a) = e {
        if a.kind == thrift::ApplicationErrorKind::UnknownMethod {
            return format!("{UNKNOWN_METHOD}: {}", a.message);
        }
    }
    if let thrift::Error::User(u) = e {
        if let Some(io) = u.downcast_ref::<IOError>() {
            return format!("IOError: {}", io.message.as_deref().unwrap_or(""));
        }
        if let Some(ia) = u.downcast_ref::<IllegalArgument>() {
            return format!("IllegalArgument: {}", ia.message.as_deref().unwrap_or(""));
        }
        if let Some(ae) = u.downcast_ref::<AlreadyExists>() {
            return format!("AlreadyExists: {}", ae.message.as_deref().unwrap_or(""));
        }
    }
    e.to_string()
}

/// A Thrift error with HBase's message extracted, usable as an error source.
#[derive(Debug)]
struct ThriftError(String);

impl std::fmt::Display for ThriftError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ThriftError {}

fn backend(context: impl Into<String>, e: &thrift::Error) -> Error {
    Error::backend(context, ThriftError(describe(e)))
}

/// `family:qualifier` as a Thrift 1 column name.
fn column(family: &str, qualifier: &[u8]) -> Vec<u8> {
    let mut c = Vec::with_capacity(family.len() + 1 + qualifier.len());
    c.extend_from_slice(family.as_bytes());
    c.push(COLUMN_SEP);
    c.extend_from_slice(qualifier);
    c
}

/// Splits a Thrift 1 column name at its first `:`.
fn split_column(col: &[u8]) -> Option<(String, Vec<u8>)> {
    let at = col.iter().position(|b| *b == COLUMN_SEP)?;
    let family = std::str::from_utf8(&col[..at]).ok()?.to_owned();
    Some((family, col[at + 1..].to_vec()))
}

/// Appends `bytes` as a quoted filter-language literal (`'` doubled).
fn push_quoted(out: &mut Vec<u8>, bytes: &[u8]) {
    out.push(b'\'');
    for b in bytes {
        if *b == b'\'' {
            out.push(b'\'');
        }
        out.push(*b);
    }
    out.push(b'\'');
}

/// The HBase filter-language string for AND-ed cell filters (empty if none).
pub fn filter_string(filters: &[CellFilter]) -> Vec<u8> {
    let mut out = Vec::new();
    for (i, f) in filters.iter().enumerate() {
        if i > 0 {
            out.extend_from_slice(b" AND ");
        }
        let (op, value): (&[u8], &[u8]) = match f.op {
            FilterOp::Eq => (b"=", &f.value),
            FilterOp::Ge => (b">=", &f.value),
            FilterOp::Le => (b"<=", &f.value),
            FilterOp::Exists => (b">=", &[]),
        };
        out.extend_from_slice(b"SingleColumnValueFilter(");
        push_quoted(&mut out, f.family.as_bytes());
        out.push(b',');
        push_quoted(&mut out, &f.qualifier);
        out.push(b',');
        out.extend_from_slice(op);
        out.push(b',');
        push_quoted(&mut out, &[b"binary:".as_slice(), value].concat());
        out.extend_from_slice(b",true,true)");
    }
    out
}

/// Estimated wire size of a row in a `mutateRows` call.
fn row_bytes(row: &Row) -> usize {
    row.key.len()
        + MUTATION_OVERHEAD
        + row
            .cells
            .iter()
            .map(|c| c.family.len() + 1 + c.qualifier.len() + c.value.len() + MUTATION_OVERHEAD)
            .sum::<usize>()
}

/// Splits items of the given sizes into consecutive batches of at most
/// `max_rows` items and `max_bytes` bytes (an item larger than `max_bytes`
/// forms a batch of its own). Returns the batch boundaries as ranges.
pub fn plan_batches(
    sizes: &[usize],
    max_rows: usize,
    max_bytes: usize,
) -> Vec<std::ops::Range<usize>> {
    let max_rows = max_rows.max(1);
    let mut out = Vec::new();
    let (mut start, mut bytes) = (0, 0usize);
    for (i, size) in sizes.iter().enumerate() {
        if i > start && (i - start >= max_rows || bytes + size > max_bytes) {
            out.push(start..i);
            start = i;
            bytes = 0;
        }
        bytes += size;
    }
    if start < sizes.len() {
        out.push(start..sizes.len());
    }
    out
}

/// Turns a Thrift row into a [`Row`] with cells sorted by (family, qualifier).
fn to_row(r: TRowResult) -> Row {
    let mut row = Row::new(r.row.unwrap_or_default());
    for (col, cell) in r.columns.unwrap_or_default() {
        if let Some((family, qualifier)) = split_column(&col) {
            row.cells.push(Cell {
                family,
                qualifier,
                value: cell.value.unwrap_or_default(),
            });
        }
    }
    row.cells.sort();
    row
}

fn now_millis() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

impl HbaseStore {
    /// Connects to the HBase Thrift 1 server at `addr` (`host:port`), checks
    /// that it answers (`getTableNames`) and creates [`META_TABLE`] if needed.
    /// An unreachable server fails within about `connect_timeout` with
    /// [`Error::Unavailable`] (no retries at start).
    pub fn connect(addr: &str, options: HbaseOptions) -> Result<HbaseStore> {
        let socket = super::thrift2::resolve(addr, SERVICE)?;
        let admin = match &options.admin {
            Some(a) => Some(Thrift2Admin::connect(
                a,
                options.connect_timeout,
                options.call_timeout,
            )?),
            None => None,
        };
        let store = HbaseStore {
            admin,
            addr: addr.to_owned(),
            socket,
            options,
            pool: Mutex::new(Vec::new()),
            tables: Mutex::new(HashMap::new()),
            clock: AtomicI64::new(0),
            no_ts_mutations: AtomicBool::new(false),
            ts_mutations_work: AtomicBool::new(false),
            stats: Mutex::new(HbaseStats::default()),
        };
        let mut client = store.open_client().map_err(|e| Error::Unavailable {
            service: SERVICE,
            addr: addr.to_owned(),
            attempts: 1,
            source: Box::new(ThriftError(describe(&e))),
        })?;
        let names = client.get_table_names().map_err(|e| Error::Unavailable {
            service: SERVICE,
            addr: addr.to_owned(),
            attempts: 1,
            source: Box::new(ThriftError(describe(&e))),
        })?;
        store.checkin(client);
        if !names.iter().any(|n| n == META_TABLE.as_bytes()) {
            store.create_hbase_table(META_TABLE, &[META_FAMILY.to_owned()], 1)?;
        }
        tracing::info!(addr, "connected to HBase Thrift server");
        Ok(store)
    }

    /// Counters since the store was opened.
    pub fn stats(&self) -> HbaseStats {
        self.stats.lock().map(|s| *s).unwrap_or_default()
    }

    /// The server address this store talks to.
    pub fn addr(&self) -> &str {
        &self.addr
    }

    /// The Thrift 2 admin address, when tables are created pre-split.
    pub fn admin_addr(&self) -> Option<&str> {
        self.admin.as_ref().map(|a| a.addr())
    }

    /// What the Thrift 1 server says of itself: its type and the HBase
    /// cluster id (Thrift has no version call; `harvest cluster check` reads
    /// the version from the master's web server).
    pub fn server_info(&self) -> Result<(ServerType, String)> {
        let kind = self.call("getThriftServerType", |c| c.get_thrift_server_type())?;
        let id = self.call("getClusterId", |c| c.get_cluster_id())?;
        Ok((ServerType::from_wire(kind.0), id))
    }

    /// Whether the table's HBase regions are exactly its salt buckets (one
    /// region per bucket, as created with a Thrift 2 admin).
    pub fn is_pre_split(&self, table: &str) -> Result<bool> {
        let buckets = self.table_meta(table)?.buckets;
        Ok(self.server_regions(table)? == bucket_regions(buckets))
    }

    /// The table's physical HBase regions (`getTableRegions`), in key order.
    pub fn server_regions(&self, table: &str) -> Result<Vec<Region>> {
        self.table_meta(table)?;
        let mut regions: Vec<Region> = self
            .call("getTableRegions", |c| {
                c.get_table_regions(table.as_bytes().to_vec())
            })?
            .into_iter()
            .map(|r| Region {
                start: r.start_key.unwrap_or_default(),
                end: r.end_key.unwrap_or_default(),
            })
            .collect();
        regions.sort_by(|a, b| a.start.cmp(&b.start));
        Ok(regions)
    }

    /// Drops a table (disable + delete) and its layout row; missing tables are ignored.
    pub fn drop_table(&self, table: &str) -> Result<()> {
        if self.hbase_tables()?.iter().any(|t| t == table) {
            // Disabling an already disabled table fails; ignore that and delete.
            let _ = self.call("disableTable", |c| {
                c.disable_table(table.as_bytes().to_vec())
            });
            self.call("deleteTable", |c| c.delete_table(table.as_bytes().to_vec()))?;
        }
        let ts = self.next_ts();
        let delete = BatchMutation::new(
            table.as_bytes().to_vec(),
            vec![Mutation::new(
                true,
                META_FAMILY.as_bytes().to_vec(),
                None,
                true,
            )],
        );
        self.mutate_rows_ts(META_TABLE, &[delete], ts)?;
        self.tables.lock().map_err(|_| poisoned())?.remove(table);
        Ok(())
    }

    /// `mutateRowsTs`, or `mutateRows` on a server without it (the cells then
    /// get the server's clock; see the module docs for what that loses).
    fn mutate_rows_ts(&self, table: &str, batch: &[BatchMutation], ts: i64) -> Result<()> {
        if !self.no_ts_mutations.load(Ordering::Relaxed) {
            let r = self.call("mutateRowsTs", |c| {
                c.mutate_rows_ts(
                    table.as_bytes().to_vec(),
                    batch.to_vec(),
                    ts,
                    BTreeMap::new(),
                )
            });
            match r {
                Err(Error::Backend { source, .. })
                    if source.to_string().contains(UNKNOWN_METHOD) =>
                {
                    tracing::warn!(addr = %self.addr, "server lacks mutateRowsTs, using mutateRows");
                    self.no_ts_mutations.store(true, Ordering::Relaxed);
                }
                Ok(()) => {
                    self.ts_mutations_work.store(true, Ordering::Relaxed);
                    return Ok(());
                }
                other => return other,
            }
        }
        self.call("mutateRows", |c| {
            c.mutate_rows(table.as_bytes().to_vec(), batch.to_vec(), BTreeMap::new())
        })
    }

    fn stat(&self, f: impl FnOnce(&mut HbaseStats)) {
        if let Ok(mut s) = self.stats.lock() {
            f(&mut s);
        }
    }

    /// Next write timestamp: wall-clock milliseconds, strictly increasing.
    fn next_ts(&self) -> i64 {
        let now = now_millis();
        let prev = self
            .clock
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |last| {
                Some(now.max(last + 1))
            })
            .unwrap_or(now);
        now.max(prev + 1)
    }

    fn open_client(&self) -> thrift::Result<Client> {
        let stream = TcpStream::connect_timeout(&self.socket, self.options.connect_timeout)?;
        stream.set_read_timeout(Some(self.options.call_timeout))?;
        stream.set_write_timeout(Some(self.options.call_timeout))?;
        stream.set_nodelay(true)?;
        let (r, w) = TTcpChannel::with_stream(stream).split()?;
        self.stat(|s| s.connects += 1);
        Ok(HbaseSyncClient::new(
            TBinaryInputProtocol::new(TBufferedReadTransport::new(r), true),
            TBinaryOutputProtocol::new(TBufferedWriteTransport::new(w), true),
        ))
    }

    /// A client from the pool (validated if it was idle long) or a new one.
    fn checkout(&self) -> thrift::Result<Client> {
        loop {
            let pooled = self.pool.lock().ok().and_then(|mut p| p.pop());
            let Some(mut p) = pooled else {
                return self.open_client();
            };
            if p.idle_since.elapsed() < self.options.validate_after {
                return Ok(p.client);
            }
            match p.client.get_table_names() {
                Ok(_) => return Ok(p.client),
                Err(e) => {
                    tracing::debug!(addr = %self.addr, error = %e, "dropping stale pooled connection");
                }
            }
        }
    }

    fn checkin(&self, client: Client) {
        if let Ok(mut pool) = self.pool.lock() {
            if pool.len() < self.options.pool_size {
                pool.push(PooledClient {
                    client,
                    idle_since: Instant::now(),
                });
            }
        }
    }

    /// After a transport error: drop every pooled connection (the server
    /// probably went away), count the retry, advance `attempt`, and return
    /// how long to wait before trying again.
    fn prepare_retry(&self, attempt: &mut u32) -> Duration {
        if let Ok(mut pool) = self.pool.lock() {
            pool.clear();
        }
        let wait = self.backoff(*attempt);
        *attempt += 1;
        self.stat(|s| s.retries += 1);
        wait
    }

    fn backoff(&self, attempt: u32) -> Duration {
        let factor = 1u32 << attempt.min(16);
        self.options
            .backoff
            .saturating_mul(factor)
            .min(self.options.max_backoff)
    }

    /// Runs one Thrift call with pooling and retries on transport errors.
    fn call<T>(
        &self,
        what: &str,
        mut f: impl FnMut(&mut Client) -> thrift::Result<T>,
    ) -> Result<T> {
        let mut attempt = 0u32;
        loop {
            let started = Instant::now();
            let result = self.checkout().and_then(|mut c| {
                let r = f(&mut c);
                tracing::trace!(
                    call = what,
                    ms = started.elapsed().as_secs_f64() * 1e3,
                    "thrift call"
                );
                match &r {
                    Err(e) if is_transport(e) => {}
                    _ => self.checkin(c),
                }
                r
            });
            match result {
                Ok(v) => return Ok(v),
                Err(e) if is_transport(&e) && attempt < self.options.retries => {
                    let wait = self.prepare_retry(&mut attempt);
                    tracing::warn!(call = what, attempt, error = %e, wait_ms = wait.as_millis() as u64, "thrift call failed, retrying");
                    std::thread::sleep(wait);
                }
                Err(e) if is_transport(&e) => {
                    return Err(Error::Unavailable {
                        service: SERVICE,
                        addr: self.addr.clone(),
                        attempts: attempt + 1,
                        source: Box::new(ThriftError(format!("{what}: {}", describe(&e)))),
                    })
                }
                Err(e) => return Err(backend(what, &e)),
            }
        }
    }

    fn hbase_tables(&self) -> Result<Vec<String>> {
        Ok(self
            .call("getTableNames", |c| c.get_table_names())?
            .into_iter()
            .map(|n| String::from_utf8_lossy(&n).into_owned())
            .collect())
    }

    /// Creates an HBase table, pre-split into one region per bucket through
    /// the Thrift 2 admin when there is one; `Ok(false)` if it already existed.
    fn create_hbase_table(&self, name: &str, families: &[String], buckets: u8) -> Result<bool> {
        if let Some(admin) = &self.admin {
            return admin.create_table(name, families, &bucket_split_keys(buckets));
        }
        if buckets > 1 {
            tracing::warn!(
                table = name,
                buckets,
                "creating the table with ONE region: Thrift 1 cannot pre-split; set [index] thrift2 \
                 (HBase's Thrift 2 server) or pre-split with deploy/cluster/create-tables.sh"
            );
        }
        let descriptors: Vec<ColumnDescriptor> = families
            .iter()
            .map(|f| ColumnDescriptor {
                name: Some(column(f, b"")),
                max_versions: Some(1),
                compression: Some(NONE.to_owned()),
                in_memory: Some(false),
                bloom_filter_type: Some(NONE.to_owned()),
                bloom_filter_vector_size: Some(0),
                bloom_filter_nb_hashes: Some(0),
                block_cache_enabled: Some(true),
                time_to_live: Some(TTL_FOREVER),
            })
            .collect();
        let mut attempt = 0u32;
        loop {
            let r = self.checkout().and_then(|mut c| {
                let r = c.create_table(name.as_bytes().to_vec(), descriptors.clone());
                if r.as_ref().err().is_none_or(|e| !is_transport(e)) {
                    self.checkin(c);
                }
                r
            });
            match r {
                Ok(()) => {
                    tracing::info!(table = name, families = ?families, "hbase table created");
                    return Ok(true);
                }
                // HBase 2.6's handler lets a concurrent create's
                // TableExistsException through as an IOError.
                Err(thrift::Error::User(u))
                    if u.downcast_ref::<AlreadyExists>().is_some()
                        || u.downcast_ref::<IOError>().is_some_and(|io| {
                            io.message
                                .as_deref()
                                .is_some_and(|m| m.contains(TABLE_EXISTS))
                        }) =>
                {
                    return Ok(false)
                }
                Err(e) if is_transport(&e) && attempt < self.options.retries => {
                    std::thread::sleep(self.prepare_retry(&mut attempt));
                }
                Err(e) => return Err(backend(format!("createTable {name}"), &e)),
            }
        }
    }

    /// Families of an existing HBase table, sorted.
    fn hbase_families(&self, table: &str) -> Result<Vec<String>> {
        let descs = self.call("getColumnDescriptors", |c| {
            c.get_column_descriptors(table.as_bytes().to_vec())
        })?;
        let mut fams: Vec<String> = descs
            .keys()
            .map(|n| {
                let n = n.strip_suffix(&[COLUMN_SEP]).unwrap_or(n);
                String::from_utf8_lossy(n).into_owned()
            })
            .collect();
        fams.sort();
        Ok(fams)
    }

    /// Bucket count stored in the layout table, if any.
    fn stored_buckets(&self, table: &str) -> Result<Option<u8>> {
        let rows = self.call("getRowsWithColumns", |c| {
            c.get_rows_with_columns(
                META_TABLE.as_bytes().to_vec(),
                vec![table.as_bytes().to_vec()],
                vec![column(META_FAMILY, META_BUCKETS)],
                BTreeMap::new(),
            )
        })?;
        Ok(rows.into_iter().map(to_row).find_map(|r| {
            r.cell(META_FAMILY, META_BUCKETS)
                .and_then(|v| v.first().copied())
        }))
    }

    fn store_layout(&self, table: &str, meta: &TableMeta) -> Result<()> {
        let ts = self.next_ts();
        let families = serde_json::to_vec(&meta.families)?;
        let row = BatchMutation::new(
            table.as_bytes().to_vec(),
            vec![
                Mutation::new(
                    false,
                    column(META_FAMILY, META_BUCKETS),
                    vec![meta.buckets],
                    true,
                ),
                Mutation::new(false, column(META_FAMILY, META_FAMILIES), families, true),
            ],
        );
        self.mutate_rows_ts(META_TABLE, &[row], ts)
    }

    /// The layout of a table (cached); [`Error::NoSuchTable`] if it does not exist.
    fn table_meta(&self, table: &str) -> Result<TableMeta> {
        if let Some(m) = self.tables.lock().map_err(|_| poisoned())?.get(table) {
            return Ok(m.clone());
        }
        if table == META_TABLE || !self.hbase_tables()?.iter().any(|t| t == table) {
            return Err(Error::NoSuchTable(table.to_owned()));
        }
        let families = self.hbase_families(table)?;
        // A table made outside this store (or whose layout row was lost) has one bucket.
        let buckets = self.stored_buckets(table)?.unwrap_or(1);
        let meta = TableMeta { families, buckets };
        self.tables
            .lock()
            .map_err(|_| poisoned())?
            .insert(table.to_owned(), meta.clone());
        Ok(meta)
    }

    fn check_families<'a>(
        table: &str,
        meta: &TableMeta,
        families: impl IntoIterator<Item = &'a str>,
    ) -> Result<()> {
        for f in families {
            if !meta.families.iter().any(|m| m == f) {
                return Err(Error::NoSuchFamily {
                    table: table.to_owned(),
                    family: f.to_owned(),
                });
            }
        }
        Ok(())
    }

    /// Sends row mutations in bounded batches with one timestamp.
    fn mutate(&self, table: &str, batches: Vec<(BatchMutation, usize)>, ts: i64) -> Result<()> {
        let sizes: Vec<usize> = batches.iter().map(|(_, s)| *s).collect();
        let plan = plan_batches(
            &sizes,
            self.options.max_batch_rows,
            self.options.max_batch_bytes,
        );
        let items: Vec<BatchMutation> = batches.into_iter().map(|(b, _)| b).collect();
        // Chunks go out in order, so a row given twice in one put ends with
        // its last cells (same timestamp: the later mutation wins).
        for range in plan {
            let started = Instant::now();
            let rows = range.len();
            self.mutate_rows_ts(table, &items[range], ts)?;
            tracing::trace!(
                table,
                rows,
                ms = started.elapsed().as_secs_f64() * 1e3,
                "mutate"
            );
            self.stat(|s| s.mutate_calls += 1);
        }
        Ok(())
    }

    /// One scan call sequence from `start`; appends kept rows to `out`.
    /// Returns the last key seen on error so the caller can resume.
    fn scan_once(
        &self,
        table: &str,
        tscan: &TScan,
        scan: &Scan,
        out: &mut Vec<Row>,
        last_key: &mut Option<Vec<u8>>,
    ) -> thrift::Result<()> {
        let mut client = self.checkout()?;
        let id = match client.scanner_open_with_scan(
            table.as_bytes().to_vec(),
            tscan.clone(),
            BTreeMap::new(),
        ) {
            Ok(id) => id,
            Err(e) => {
                if !is_transport(&e) {
                    self.checkin(client);
                }
                return Err(e);
            }
        };
        let result = (|| -> thrift::Result<()> {
            loop {
                let want = match scan.limit {
                    Some(l) => l.saturating_sub(out.len()).min(self.options.scan_caching),
                    None => self.options.scan_caching,
                };
                if want == 0 {
                    return Ok(());
                }
                let batch = client.scanner_get_list(id, i32::try_from(want).unwrap_or(i32::MAX))?;
                if batch.is_empty() {
                    return Ok(());
                }
                for r in batch {
                    let mut row = to_row(r);
                    *last_key = Some(row.key.clone());
                    if !scan.filters.iter().all(|f| f.matches(&row)) {
                        continue;
                    }
                    if !scan.families.is_empty() {
                        row.cells.retain(|c| scan.families.contains(&c.family));
                    }
                    if row.cells.is_empty() {
                        continue;
                    }
                    out.push(row);
                    if scan.limit.is_some_and(|l| out.len() >= l) {
                        return Ok(());
                    }
                }
            }
        })();
        match &result {
            Err(e) if is_transport(e) => {}
            _ => {
                // Always release the scanner lease; a failure here only leaks
                // a lease the server expires on its own.
                if let Err(e) = client.scanner_close(id) {
                    tracing::debug!(table, error = %e, "scannerClose failed");
                    if is_transport(&e) {
                        return result;
                    }
                }
                self.checkin(client);
            }
        }
        result
    }
}

fn poisoned() -> Error {
    Error::Invalid("hbase store lock poisoned by a panicking thread".into())
}

impl HbaseStore {
    /// Puts (or, with `delete`, deletes) the cells of `rows`, one
    /// `BatchMutation` per row, in one timestamped batch. A delete naming
    /// `family:qualifier` removes every version of that column up to the
    /// batch's timestamp (Thrift 1 `mutateRowsTs`); its value is ignored.
    fn mutate_cells(&self, table: &str, rows: &[Row], delete: bool) -> Result<()> {
        self.mutate_cells_at(table, rows, delete, None)
    }

    /// [`HbaseStore::mutate_cells`] with the given timestamp (`None`: the
    /// next one of this store's clock).
    fn mutate_cells_at(
        &self,
        table: &str,
        rows: &[Row],
        delete: bool,
        ts: Option<i64>,
    ) -> Result<()> {
        let meta = self.table_meta(table)?;
        let mut batches = Vec::with_capacity(rows.len());
        for row in rows {
            if row.key.is_empty() {
                return Err(Error::BadKey {
                    key: Vec::new(),
                    reason: "row keys must not be empty",
                });
            }
            Self::check_families(table, &meta, row.cells.iter().map(|c| c.family.as_str()))?;
            if row.cells.is_empty() {
                continue;
            }
            let mutations = row
                .cells
                .iter()
                .map(|c| {
                    let value = (!delete).then(|| c.value.clone());
                    Mutation::new(delete, column(&c.family, &c.qualifier), value, true)
                })
                .collect::<Vec<_>>();
            let size = row_bytes(row);
            batches.push((BatchMutation::new(row.key.clone(), mutations), size));
        }
        if batches.is_empty() {
            return Ok(());
        }
        let ts = ts.unwrap_or_else(|| self.next_ts());
        self.mutate(table, batches, ts)
    }

    /// Deletes whole rows (every family) at the given timestamp (`None`: the
    /// next one of this store's clock).
    fn delete_rows_at(&self, table: &str, keys: &[Vec<u8>], ts: Option<i64>) -> Result<()> {
        let meta = self.table_meta(table)?;
        if keys.is_empty() {
            return Ok(());
        }
        let batches: Vec<(BatchMutation, usize)> = keys
            .iter()
            .map(|k| {
                let mutations = meta
                    .families
                    .iter()
                    .map(|f| Mutation::new(true, f.as_bytes().to_vec(), None, true))
                    .collect::<Vec<_>>();
                let size = k.len() + MUTATION_OVERHEAD * (1 + mutations.len());
                (BatchMutation::new(k.clone(), mutations), size)
            })
            .collect();
        let ts = ts.unwrap_or_else(|| self.next_ts());
        self.mutate(table, batches, ts)
    }
}

/// Rows of a write sent in one call of [`TableStore::apply`]: a larger write
/// (a batch's page-table put: ~1,100 rows) goes out in parts side by side,
/// each served by its own RegionServer handler.
const APPLY_PART_ROWS: usize = 300;

/// A part of one write of a batch (see [`HbaseStore::apply`]).
enum Piece<'a> {
    /// Cells put, or deleted with `delete`.
    Cells {
        table: &'a str,
        rows: &'a [Row],
        delete: bool,
    },
    /// Whole rows deleted.
    Rows { table: &'a str, keys: &'a [Vec<u8>] },
}

impl<'a> Piece<'a> {
    fn of(m: &'a BatchWrite) -> Vec<Piece<'a>> {
        match m {
            BatchWrite::Put { table, rows } | BatchWrite::DeleteCells { table, rows } => {
                let delete = matches!(m, BatchWrite::DeleteCells { .. });
                // Parts land in any order: a row given twice (its last cells
                // win, written in order) keeps the write whole.
                let distinct = || {
                    let mut keys = std::collections::HashSet::with_capacity(rows.len());
                    rows.iter().all(|r| keys.insert(r.key.as_slice()))
                };
                let part = if rows.len() > APPLY_PART_ROWS && distinct() {
                    APPLY_PART_ROWS
                } else {
                    rows.len().max(1)
                };
                rows.chunks(part)
                    .map(|rows| Piece::Cells {
                        table,
                        rows,
                        delete,
                    })
                    .collect()
            }
            BatchWrite::Delete { table, keys } => vec![Piece::Rows { table, keys }],
        }
    }

    /// Cells sent (a deleted row counts one): the part's share of the server's work.
    fn weight(&self) -> usize {
        match self {
            Piece::Cells { rows, .. } => rows.iter().map(|r| r.cells.len().max(1)).sum(),
            Piece::Rows { keys, .. } => keys.len(),
        }
    }
}

impl TableStore for HbaseStore {
    fn remote(&self) -> bool {
        true
    }

    fn create_table(&self, name: &str, families: &[&str], buckets: u8) -> Result<()> {
        let fams = checked_layout(name, families, buckets)?;
        let wanted = TableMeta {
            families: fams,
            buckets,
        };
        let existing = match self.table_meta(name) {
            Ok(m) => Some(m),
            Err(Error::NoSuchTable(_)) => None,
            Err(e) => return Err(e),
        };
        let existing = match existing {
            Some(m) => Some(m),
            None => {
                if self.create_hbase_table(name, &wanted.families, buckets)? {
                    None
                } else {
                    // Created concurrently by someone else: compare with theirs.
                    Some(self.table_meta(name)?)
                }
            }
        };
        if let Some(m) = existing {
            let stored = self.stored_buckets(name)?;
            let same_families = m.families == wanted.families;
            let same_buckets = stored.is_none_or(|b| b == buckets);
            if !(same_families && same_buckets) {
                return Err(Error::TableMismatch {
                    table: name.to_owned(),
                    detail: format!(
                        "existing families {:?} buckets {}, requested {:?} buckets {}",
                        m.families,
                        stored.map_or_else(|| "?".to_owned(), |b| b.to_string()),
                        wanted.families,
                        wanted.buckets
                    ),
                });
            }
            if stored.is_some() {
                return Ok(());
            }
        }
        self.store_layout(name, &wanted)?;
        self.tables
            .lock()
            .map_err(|_| poisoned())?
            .insert(name.to_owned(), wanted);
        Ok(())
    }

    fn list_tables(&self) -> Result<Vec<String>> {
        let mut names: Vec<String> = self
            .hbase_tables()?
            .into_iter()
            .filter(|n| n != META_TABLE && !n.contains(':'))
            .collect();
        names.sort();
        Ok(names)
    }

    fn put(&self, table: &str, rows: &[Row]) -> Result<()> {
        self.mutate_cells(table, rows, false)?;
        tracing::debug!(table, rows = rows.len(), "put");
        Ok(())
    }

    fn get(&self, table: &str, keys: &[Vec<u8>], families: &[&str]) -> Result<Vec<Option<Row>>> {
        let meta = self.table_meta(table)?;
        Self::check_families(table, &meta, families.iter().copied())?;
        let mut columns: Vec<Vec<u8>> = families.iter().map(|f| f.as_bytes().to_vec()).collect();
        columns.sort();
        columns.dedup();
        let mut found: HashMap<Vec<u8>, Row> = HashMap::new();
        let started = Instant::now();
        for chunk in keys.chunks(self.options.max_batch_rows.max(1)) {
            let rows = self.call("getRowsWithColumns", |c| {
                c.get_rows_with_columns(
                    table.as_bytes().to_vec(),
                    chunk.to_vec(),
                    columns.clone(),
                    BTreeMap::new(),
                )
            })?;
            for r in rows {
                let row = to_row(r);
                if !row.cells.is_empty() {
                    found.insert(row.key.clone(), row);
                }
            }
        }
        tracing::trace!(
            table,
            rows = keys.len(),
            ms = started.elapsed().as_secs_f64() * 1e3,
            "get"
        );
        Ok(keys.iter().map(|k| found.get(k).cloned()).collect())
    }

    fn scan(&self, table: &str, scan: &Scan) -> Result<Vec<Row>> {
        let meta = self.table_meta(table)?;
        Self::check_families(
            table,
            &meta,
            scan.families
                .iter()
                .map(String::as_str)
                .chain(scan.filters.iter().map(|f| f.family.as_str())),
        )?;
        if !scan.stop.is_empty() && scan.stop <= scan.start {
            return Ok(Vec::new());
        }
        if scan.limit == Some(0) {
            return Ok(Vec::new());
        }
        let mut columns: Vec<Vec<u8>> = Vec::new();
        if !scan.families.is_empty() {
            columns.extend(scan.families.iter().map(|f| f.as_bytes().to_vec()));
            for f in &scan.filters {
                if !scan.families.contains(&f.family) {
                    columns.push(column(&f.family, &f.qualifier));
                }
            }
            columns.sort();
            columns.dedup();
        }
        let filter = if self.options.server_side_filters && !scan.filters.is_empty() {
            Some(filter_string(&scan.filters))
        } else {
            None
        };
        let caching = match scan.limit {
            Some(l) => l.min(self.options.scan_caching),
            None => self.options.scan_caching,
        };
        let mut out = Vec::new();
        let mut last_key: Option<Vec<u8>> = None;
        let mut attempt = 0u32;
        loop {
            let start = match &last_key {
                // Resume right after the last row received.
                Some(k) => [k.as_slice(), &[0u8]].concat(),
                None => scan.start.clone(),
            };
            let tscan = TScan {
                start_row: (!start.is_empty()).then_some(start),
                stop_row: (!scan.stop.is_empty()).then(|| scan.stop.clone()),
                timestamp: None,
                columns: (!columns.is_empty()).then(|| columns.clone()),
                caching: Some(i32::try_from(caching.max(1)).unwrap_or(i32::MAX)),
                filter_string: filter.clone(),
                batch_size: None,
                sort_columns: None,
                reversed: None,
                cache_blocks: None,
            };
            match self.scan_once(table, &tscan, scan, &mut out, &mut last_key) {
                Ok(()) => break,
                Err(e) if is_transport(&e) && attempt < self.options.retries => {
                    let wait = self.prepare_retry(&mut attempt);
                    tracing::warn!(table, attempt, error = %e, "scan interrupted, resuming");
                    std::thread::sleep(wait);
                }
                Err(e) if is_transport(&e) => {
                    return Err(Error::Unavailable {
                        service: SERVICE,
                        addr: self.addr.clone(),
                        attempts: attempt + 1,
                        source: Box::new(ThriftError(format!("scan {table}: {}", describe(&e)))),
                    })
                }
                Err(e) => return Err(backend(format!("scan {table}"), &e)),
            }
        }
        Ok(out)
    }

    fn delete(&self, table: &str, keys: &[Vec<u8>]) -> Result<()> {
        self.delete_rows_at(table, keys, None)
    }

    /// The writes of a batch go out side by side, over up to
    /// [`APPLY_THREADS`] connections, each a round trip to the Thrift server
    /// and its RegionServers that would otherwise wait for the one before.
    /// Their order still decides: each write gets its timestamp from this
    /// store's clock in the batch's order before any is sent, so a later
    /// write of a cell (a put after the delete of its row) wins whichever
    /// call lands first, as it does written one by one. Until a
    /// `mutateRowsTs` has worked (a server without it stamps cells itself),
    /// the writes go one by one.
    fn apply(&self, mutations: &[BatchWrite]) -> Result<()> {
        if mutations.len() < 2 || !self.ts_mutations_work.load(Ordering::Relaxed) {
            return super::api::apply_in_order(self, mutations);
        }
        let mut stamped: Vec<(Piece<'_>, i64)> = Vec::new();
        for m in mutations {
            let ts = self.next_ts();
            stamped.extend(Piece::of(m).into_iter().map(|p| (p, ts)));
        }
        // The largest writes first: the batch waits for its longest call,
        // which should not also wait for a free connection.
        stamped.sort_by_key(|(p, _)| std::cmp::Reverse(p.weight()));
        let threads = stamped.len().min(APPLY_THREADS);
        let next = std::sync::atomic::AtomicUsize::new(0);
        let results: Vec<Result<()>> = std::thread::scope(|scope| {
            let workers: Vec<_> = (0..threads)
                .map(|_| {
                    scope.spawn(|| -> Result<()> {
                        loop {
                            let i = next.fetch_add(1, Ordering::Relaxed);
                            let Some((p, ts)) = stamped.get(i) else {
                                return Ok(());
                            };
                            match p {
                                Piece::Cells {
                                    table,
                                    rows,
                                    delete,
                                } => self.mutate_cells_at(table, rows, *delete, Some(*ts))?,
                                Piece::Rows { table, keys } => {
                                    self.delete_rows_at(table, keys, Some(*ts))?
                                }
                            }
                        }
                    })
                })
                .collect();
            workers
                .into_iter()
                .map(|w| {
                    w.join().unwrap_or_else(|_| {
                        Err(Error::Invalid("an index write thread panicked".into()))
                    })
                })
                .collect()
        });
        results.into_iter().collect()
    }

    fn delete_cells(&self, table: &str, rows: &[Row]) -> Result<()> {
        self.mutate_cells(table, rows, true)
    }

    fn regions(&self, table: &str) -> Result<Vec<Region>> {
        Ok(bucket_regions(self.table_meta(table)?.buckets))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A large write goes out in parts of distinct rows, largest first in
    /// `apply`; a write naming a row twice (its last cells must win, which
    /// only an ordered send guarantees) and a row deletion stay whole.
    #[test]
    fn large_writes_are_cut_into_parts_unless_a_row_repeats() {
        let rows = |n: usize| -> Vec<Row> {
            (0..n)
                .map(|i| {
                    Row::new(format!("k{i:05}").into_bytes()).with("a", b"q".to_vec(), vec![1])
                })
                .collect()
        };
        let sizes = |m: &BatchWrite| -> Vec<usize> {
            Piece::of(m)
                .iter()
                .map(|p| match p {
                    Piece::Cells { rows, .. } => rows.len(),
                    Piece::Rows { keys, .. } => keys.len(),
                })
                .collect()
        };
        let put = |rows: Vec<Row>| BatchWrite::Put {
            table: "t".into(),
            rows,
        };
        assert_eq!(sizes(&put(rows(1100))), vec![300, 300, 300, 200]);
        assert_eq!(sizes(&put(rows(300))), vec![300]);
        let mut twice = rows(700);
        twice.push(twice[3].clone());
        assert_eq!(sizes(&put(twice)), vec![701]);
        let cells = BatchWrite::DeleteCells {
            table: "t".into(),
            rows: rows(301),
        };
        assert_eq!(sizes(&cells), vec![300, 1]);
        assert!(Piece::of(&cells)
            .iter()
            .all(|p| matches!(p, Piece::Cells { delete: true, .. })));
        let delete = BatchWrite::Delete {
            table: "t".into(),
            keys: rows(900).into_iter().map(|r| r.key).collect(),
        };
        assert_eq!(sizes(&delete), vec![900]);
        assert_eq!(sizes(&put(Vec::new())), Vec::<usize>::new());
        // The weight orders the parts: cells sent.
        let wide = Row::new(b"w".to_vec())
            .with("a", b"1".to_vec(), vec![])
            .with("a", b"2".to_vec(), vec![]);
        assert_eq!(Piece::of(&put(vec![wide]))[0].weight(), 2);
    }

    #[test]
    fn batches_respect_rows_and_bytes() {
        assert_eq!(plan_batches(&[10; 5], 2, 1000), vec![0..2, 2..4, 4..5]);
        assert_eq!(plan_batches(&[40, 40, 40], 10, 100), vec![0..2, 2..3]);
        // A row larger than the byte bound travels alone.
        assert_eq!(plan_batches(&[5, 500, 5], 10, 100), vec![0..1, 1..2, 2..3]);
        assert!(plan_batches(&[], 10, 100).is_empty());
    }

    #[test]
    fn filter_string_quotes_binary_values() {
        let f = CellFilter::new("a", b"n".to_vec(), FilterOp::Ge, vec![0, b'\'', 0xff]);
        let s = filter_string(&[f]);
        let want = [
            &b"SingleColumnValueFilter('a','n',>=,'binary:"[..],
            &[0, b'\'', b'\'', 0xff],
            b"',true,true)",
        ]
        .concat();
        assert_eq!(s, want);
        let two = filter_string(&[
            CellFilter::new("a", b"x".to_vec(), FilterOp::Exists, b"ignored".to_vec()),
            CellFilter::new("b", b"y".to_vec(), FilterOp::Le, b"9".to_vec()),
        ]);
        assert_eq!(
            two,
            b"SingleColumnValueFilter('a','x',>=,'binary:',true,true) AND \
              SingleColumnValueFilter('b','y',<=,'binary:9',true,true)"
                .to_vec()
        );
    }

    #[test]
    fn columns_split_at_first_colon() {
        assert_eq!(split_column(b"i:"), Some(("i".to_owned(), Vec::new())));
        assert_eq!(
            split_column(b"a:x:y"),
            Some(("a".to_owned(), b"x:y".to_vec()))
        );
        assert_eq!(split_column(b"nocolon"), None);
        assert_eq!(column("a", &[0, 0xff]), vec![b'a', b':', 0, 0xff]);
    }

    #[test]
    fn timestamps_strictly_increase() {
        let store = HbaseStore {
            admin: None,
            addr: String::new(),
            socket: SocketAddr::from(([127, 0, 0, 1], 1)),
            options: HbaseOptions::default(),
            pool: Mutex::new(Vec::new()),
            tables: Mutex::new(HashMap::new()),
            clock: AtomicI64::new(0),
            no_ts_mutations: AtomicBool::new(false),
            ts_mutations_work: AtomicBool::new(false),
            stats: Mutex::new(HbaseStats::default()),
        };
        let stamps: Vec<i64> = (0..1000).map(|_| store.next_ts()).collect();
        assert!(stamps.windows(2).all(|w| w[0] < w[1]));
        assert!(stamps[0] >= now_millis() - 1000);
    }

    #[test]
    fn refused_connection_fails_fast_and_clearly() {
        // A port that was just free: nothing listens there.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .unwrap_or(1);
        let addr = format!("127.0.0.1:{port}");
        let started = Instant::now();
        let err = HbaseStore::connect(&addr, HbaseOptions::default()).err();
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "fails within seconds"
        );
        let msg = err.map(|e| e.to_string()).unwrap_or_default();
        assert!(
            msg.contains("unreachable") && msg.contains(&addr),
            "message: {msg}"
        );
    }
}
