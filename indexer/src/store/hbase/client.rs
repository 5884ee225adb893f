//! The store and its connection to the Thrift 1 server: the pool of
//! clients, one call with retries and backoff, the store's write clock, the
//! `mutateRowsTs` call every write goes through, and the cache of table
//! layouts.

use std::collections::{BTreeMap, HashMap};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use hbase_thrift::hbase::{BatchMutation, HbaseSyncClient, THbaseSyncClient};
use thrift::protocol::{TBinaryInputProtocol, TBinaryOutputProtocol};
use thrift::transport::{
    ReadHalf, TBufferedReadTransport, TBufferedWriteTransport, TIoChannel, TTcpChannel, WriteHalf,
};

use super::config::{HbaseOptions, HbaseStats};
use super::errors::{backend, describe, is_transport, ThriftError, SERVICE, UNKNOWN_METHOD};
use super::thrift2::{ServerType, Thrift2Admin};
use crate::error::{Error, Result};

pub(super) type Client = HbaseSyncClient<
    TBinaryInputProtocol<TBufferedReadTransport<ReadHalf<TTcpChannel>>>,
    TBinaryOutputProtocol<TBufferedWriteTransport<WriteHalf<TTcpChannel>>>,
>;

/// Layout of a table as known to this store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct TableMeta {
    /// Sorted, deduplicated family names.
    pub(super) families: Vec<String>,
    pub(super) buckets: u8,
}

pub(super) struct PooledClient {
    client: Client,
    idle_since: Instant,
}

/// The HBase table store (a pool of Thrift 1 clients).
pub struct HbaseStore {
    /// Thrift 2 admin for pre-split table creation ([`HbaseOptions::admin`]).
    pub(super) admin: Option<Thrift2Admin>,
    pub(super) addr: String,
    pub(super) socket: SocketAddr,
    pub(super) options: HbaseOptions,
    pub(super) pool: Mutex<Vec<PooledClient>>,
    pub(super) tables: Mutex<HashMap<String, TableMeta>>,
    pub(super) clock: AtomicI64,
    /// Set when the server answered `mutateRowsTs` with "unknown method".
    pub(super) no_ts_mutations: AtomicBool,
    /// Set once a `mutateRowsTs` call succeeded: cells then carry the
    /// timestamps this store gives them, which [`TableStore::apply`] needs to
    /// send a batch's writes side by side.
    pub(super) ts_mutations_work: AtomicBool,
    pub(super) stats: Mutex<HbaseStats>,
}

impl std::fmt::Debug for HbaseStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HbaseStore")
            .field("addr", &self.addr)
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

pub(super) fn now_millis() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

impl HbaseStore {
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

    /// `mutateRowsTs`, or `mutateRows` on a server without it (the cells then
    /// get the server's clock; see the module docs for what that loses).
    pub(super) fn mutate_rows_ts(
        &self,
        table: &str,
        batch: &[BatchMutation],
        ts: i64,
    ) -> Result<()> {
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

    pub(super) fn stat(&self, f: impl FnOnce(&mut HbaseStats)) {
        if let Ok(mut s) = self.stats.lock() {
            f(&mut s);
        }
    }

    /// Next write timestamp: wall-clock milliseconds, strictly increasing.
    pub(super) fn next_ts(&self) -> i64 {
        let now = now_millis();
        let prev = self
            .clock
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |last| {
                Some(now.max(last + 1))
            })
            .unwrap_or(now);
        now.max(prev + 1)
    }

    pub(super) fn open_client(&self) -> thrift::Result<Client> {
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
    pub(super) fn checkout(&self) -> thrift::Result<Client> {
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

    pub(super) fn checkin(&self, client: Client) {
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
    pub(super) fn prepare_retry(&self, attempt: &mut u32) -> Duration {
        if let Ok(mut pool) = self.pool.lock() {
            pool.clear();
        }
        let wait = self.backoff(*attempt);
        *attempt += 1;
        self.stat(|s| s.retries += 1);
        wait
    }

    pub(super) fn backoff(&self, attempt: u32) -> Duration {
        let factor = 1u32 << attempt.min(16);
        self.options
            .backoff
            .saturating_mul(factor)
            .min(self.options.max_backoff)
    }

    /// Runs one Thrift call with pooling and retries on transport errors.
    pub(super) fn call<T>(
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
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
