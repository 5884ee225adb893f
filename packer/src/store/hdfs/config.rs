//! What an [`HdfsPackStore`](super::HdfsPackStore) is opened with: its URL
//! ([`parse_hdfs_url`]) and settings ([`HdfsOptions`]), and the hdfs-native configuration
//! they stand for. Plain data, no connection.

use std::time::Duration;

use crate::error::{Error, Result};
use crate::store::api::validate_path;

/// URL scheme of the HDFS backend.
pub const HDFS_SCHEME: &str = "hdfs";
/// Worker threads of the store's own tokio runtime.
pub const RUNTIME_WORKER_THREADS: usize = 2;

/// hdfs-native config key: NameNode call attempts before giving up (default 15).
pub const CONF_FAILOVER_MAX_ATTEMPTS: &str = "dfs.client.failover.max.attempts";
/// hdfs-native config key: first sleep between NameNode attempts (default 500 ms).
pub const CONF_FAILOVER_SLEEP_BASE_MILLIS: &str = "dfs.client.failover.sleep.base.millis";
/// hdfs-native config key: longest sleep between NameNode attempts (default 15 s).
pub const CONF_FAILOVER_SLEEP_MAX_MILLIS: &str = "dfs.client.failover.sleep.max.millis";
/// hdfs-native config key: DataNode connect/read timeout (default 60 s).
pub const CONF_SOCKET_TIMEOUT_MILLIS: &str = "dfs.client.socket-timeout";

/// Default HDFS block size of packs: 128 MiB (the HDFS default, stated so the writer
/// knows where blocks end).
pub const DEFAULT_BLOCK_SIZE: u64 = 128 << 20;
/// Default write buffer: appends are handed to HDFS in pieces of at least this size.
pub const DEFAULT_WRITE_BUFFER_BYTES: usize = 1 << 20;

const SCHEME_SEPARATOR: &str = "://";

/// Settings of an [`HdfsPackStore`](super::HdfsPackStore). `Default` gives the documented defaults.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HdfsOptions {
    /// Deadline of every single call (create, append flush, hsync, read, list, ...). Default 45 s:
    /// at least twice [`HdfsOptions::socket_timeout`], so that a write whose new block landed on
    /// a DataNode that does not answer can time out on it and go on with another block
    /// (hdfs-native patch (c), `vendor/hdfs-native/PATCHES.md`) inside one call.
    pub call_timeout: Duration,
    /// Deadline of the first NameNode call made by
    /// [`HdfsPackStore::connect`](super::HdfsPackStore::connect). Default 10 s.
    pub connect_timeout: Duration,
    /// NameNode call attempts (`dfs.client.failover.max.attempts`). Default 1 (hdfs-native: 15).
    pub failover_max_attempts: u32,
    /// First pause between attempts (`dfs.client.failover.sleep.base.millis`). Default 200 ms.
    pub failover_sleep_base: Duration,
    /// Longest pause between attempts (`dfs.client.failover.sleep.max.millis`). Default 2 s.
    pub failover_sleep_max: Duration,
    /// DataNode socket timeout (`dfs.client.socket-timeout`). Default 20 s.
    pub socket_timeout: Duration,
    /// Attempts of a read before its error is returned (hdfs-native issue #227: a transient
    /// "All DataNodes failed" about once in 300 reads). Default 4.
    pub read_attempts: u32,
    /// HDFS block size of new packs (also bounds the writer's copy of the open block).
    /// Default 128 MiB.
    pub block_size: u64,
    /// Replication of new packs; `None` = the cluster's default. Default `None`.
    pub replication: Option<u32>,
    /// Appends are buffered and handed to HDFS in pieces of this size. Default 1 MiB.
    pub write_buffer_bytes: usize,
    /// How long [`HdfsPackStore::recover_lease`](super::HdfsPackStore::recover_lease) waits for the
    /// NameNode to close a file. Default 60 s.
    pub lease_recovery_timeout: Duration,
    /// HDFS user; `None` = hdfs-native's choice (`HADOOP_USER_NAME` or the OS user).
    pub user: Option<String>,
    /// The NameNode's web server `host:port` (`dfs.namenode.http-address`, Hadoop 3 port
    /// 9870). When set, bytes another process has synced into the block it is still writing
    /// are read over WebHDFS (see the [module docs](super)); `None`: such reads fail with
    /// [`Error::NotYetReadable`]. Plain HTTP with `user.name` (simple authentication), no
    /// Kerberos/SPNEGO. Default `None`.
    pub webhdfs: Option<String>,
    /// Extra hdfs-native configuration (`key`, `value`), applied last. Default none.
    pub extra_config: Vec<(String, String)>,
}

impl Default for HdfsOptions {
    fn default() -> Self {
        Self {
            call_timeout: Duration::from_secs(45),
            connect_timeout: Duration::from_secs(10),
            failover_max_attempts: 1,
            failover_sleep_base: Duration::from_millis(200),
            failover_sleep_max: Duration::from_secs(2),
            socket_timeout: Duration::from_secs(20),
            read_attempts: 4,
            block_size: DEFAULT_BLOCK_SIZE,
            replication: None,
            write_buffer_bytes: DEFAULT_WRITE_BUFFER_BYTES,
            lease_recovery_timeout: Duration::from_secs(60),
            user: None,
            webhdfs: None,
            extra_config: Vec::new(),
        }
    }
}

impl HdfsOptions {
    /// The hdfs-native configuration map these options stand for.
    pub(super) fn client_config(&self) -> Vec<(String, String)> {
        let mut conf = vec![
            (
                CONF_FAILOVER_MAX_ATTEMPTS.to_string(),
                self.failover_max_attempts.to_string(),
            ),
            (
                CONF_FAILOVER_SLEEP_BASE_MILLIS.to_string(),
                self.failover_sleep_base.as_millis().to_string(),
            ),
            (
                CONF_FAILOVER_SLEEP_MAX_MILLIS.to_string(),
                self.failover_sleep_max.as_millis().to_string(),
            ),
            (
                CONF_SOCKET_TIMEOUT_MILLIS.to_string(),
                self.socket_timeout.as_millis().to_string(),
            ),
        ];
        conf.extend(self.extra_config.iter().cloned());
        conf
    }
}

/// Parses `hdfs://host:port/root/path` into (`hdfs://host:port`, `/root/path` without
/// trailing '/', `""` for the file system root).
pub fn parse_hdfs_url(url: &str) -> Result<(String, String)> {
    let invalid = |reason| Error::InvalidUrl {
        url: url.to_string(),
        reason,
    };
    let Some((scheme, rest)) = url.split_once(SCHEME_SEPARATOR) else {
        return Err(invalid("expected hdfs://host:port/path"));
    };
    if !scheme.eq_ignore_ascii_case(HDFS_SCHEME) {
        return Err(invalid("expected the hdfs:// scheme"));
    }
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    let Some((host, port)) = authority.rsplit_once(':') else {
        return Err(invalid("the NameNode address needs host:port"));
    };
    if host.is_empty() || port.parse::<u16>().is_err() {
        return Err(invalid("the NameNode address needs host:port"));
    }
    let root = path.trim_end_matches('/');
    if !root.is_empty() {
        validate_path(&root[1..])
            .map_err(|_| invalid("the root path has empty, '.' or '..' segments"))?;
    }
    Ok((format!("{HDFS_SCHEME}://{authority}"), root.to_string()))
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    #[test]
    fn parse_url_splits_namenode_and_root() {
        assert_eq!(
            parse_hdfs_url("hdfs://127.0.0.1:9000/harvest/packs/").unwrap(),
            (
                "hdfs://127.0.0.1:9000".to_string(),
                "/harvest/packs".to_string()
            )
        );
        assert_eq!(
            parse_hdfs_url("hdfs://nn:8020").unwrap(),
            ("hdfs://nn:8020".to_string(), String::new())
        );
        assert_eq!(parse_hdfs_url("HDFS://nn:8020/").unwrap().1, String::new());
        for bad in [
            "hdfs://nn/packs",
            "hdfs://:9000/x",
            "hdfs://nn:port/x",
            "file:///x",
            "hdfs://nn:9000/a/../b",
            "nn:9000",
        ] {
            assert!(
                matches!(parse_hdfs_url(bad), Err(Error::InvalidUrl { .. })),
                "{bad} should be rejected"
            );
        }
    }

    #[test]
    pub(super) fn client_config_lowers_retries() {
        let conf: HashMap<_, _> = HdfsOptions::default().client_config().into_iter().collect();
        assert_eq!(conf[CONF_FAILOVER_MAX_ATTEMPTS], "1");
        assert_eq!(conf[CONF_FAILOVER_SLEEP_BASE_MILLIS], "200");
        assert_eq!(conf[CONF_SOCKET_TIMEOUT_MILLIS], "20000");
    }

    #[test]
    fn a_call_outlasts_two_datanode_timeouts() {
        // One dead DataNode costs a write up to one socket timeout before the block is
        // asked for again without it; the call deadline must leave room for that and the
        // next attempt.
        let o = HdfsOptions::default();
        assert!(o.call_timeout >= 2 * o.socket_timeout, "{o:?}");
    }
}
