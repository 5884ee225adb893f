//! Opening a store: connecting to the Thrift 1 server (and the Thrift 2
//! admin), checking that it answers and creating the layout table.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicI64};
use std::sync::Mutex;

use hbase_thrift::hbase::THbaseSyncClient;

use super::client::HbaseStore;
use super::config::{HbaseOptions, HbaseStats};
use super::errors::{describe, ThriftError, SERVICE};
use super::tables::{META_FAMILY, META_TABLE};
use super::thrift2::Thrift2Admin;
use crate::error::{Error, Result};

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
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::*;

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
