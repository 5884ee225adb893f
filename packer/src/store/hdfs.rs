//! `HdfsPackStore`: packs on HDFS through hdfs-native (feature `hdfs`).
//!
//! # Blocking over async
//! hdfs-native is async (tokio). [`PackStore`] is synchronous, so the store owns a small
//! dedicated tokio runtime ([`RUNTIME_WORKER_THREADS`] worker threads) and blocks on it for
//! every call. **Do not call the store from inside an async context**: every method
//! detects it (`tokio::runtime::Handle::try_current`) and fails with
//! [`Error::AsyncContext`] instead of panicking; use `tokio::task::spawn_blocking`.
//!
//! # Failing fast
//! hdfs-native's defaults retry an unreachable NameNode for about three minutes. The store
//! lowers its failover/retry settings ([`HdfsOptions`]) and wraps every call in a
//! `tokio::time::timeout`, so a dead NameNode gives [`Error::Unavailable`] or
//! [`Error::Timeout`] within seconds.
//!
//! # Visibility of bytes being written
//! `sync` is `hsync` (data on every DataNode of the pipeline, length recorded at the
//! NameNode): after it the bytes survive the writer dying and `len` counts them. hdfs-native
//! 0.14.8 cannot read the last block of a file that is still open: `Client::read` takes the
//! file length from `getBlockLocations`, which leaves the block under construction out
//! (`LocatedBlocksProto::file_length`), `FileReader::read_range` panics past that length, and
//! it has no `getReplicaVisibleLength` call to ask a DataNode how much of the block is
//! readable (Java's `DFSInputStream` does). Measured on the test cluster: a pack a running
//! crawl had synced 24,812 bytes into gave `read_range` 0 readable bytes from another
//! process. So:
//! - the writing process itself reads its open packs through a copy of the current block
//!   kept by the writer (at most one block, [`HdfsOptions::block_size`]);
//! - another process reads bytes in that block over WebHDFS when
//!   [`HdfsOptions::webhdfs`] names the NameNode's web server: the NameNode redirects
//!   `op=OPEN` to a DataNode, whose Java client serves the block up to its visible
//!   (acknowledged) length, which covers every byte the writer synced. Only bytes up to the
//!   length the NameNode recorded at the writer's last `hsync` are asked for, so a reader
//!   never sees an unsynced tail;
//! - without that address (or if WebHDFS serves fewer bytes) it gets
//!   [`Error::NotYetReadable`] until the pack is closed, or the dead writer's lease is
//!   recovered ([`HdfsPackStore::recover_lease`]).

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use bytes::Bytes;
use hdfs_native::file::FileReader;
use hdfs_native::{Client, ClientBuilder, HdfsError, WriteOptions};
use tokio::runtime::{Handle, Runtime};

use super::api::{split_prefix, validate_path, PackEntry, PackStore, PackWriter};
use crate::error::{Error, Result};

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
const DIR_PERMISSION: u32 = 0o755;
const FILE_PERMISSION: u32 = 0o644;
/// Pause between attempts of a failed read (multiplied by the attempt number).
const READ_RETRY_PAUSE: Duration = Duration::from_millis(100);
/// Most files whose block locations are cached for reads (the cache is cleared when full).
const READER_CACHE_ENTRIES: usize = 1024;
/// WebHDFS path prefix on the NameNode's web server.
const WEBHDFS_PREFIX: &str = "webhdfs/v1";
/// Environment variable with the HDFS user (also hdfs-native's choice).
const HADOOP_USER_ENV: &str = "HADOOP_USER_NAME";
/// Pause between polls of `recoverLease`.
const LEASE_POLL_PAUSE: Duration = Duration::from_millis(500);
/// Java exception classes the NameNode uses for missing / existing files.
const FILE_NOT_FOUND_EXCEPTION: &str = "java.io.FileNotFoundException";
const FILE_EXISTS_EXCEPTION: &str = "org.apache.hadoop.fs.FileAlreadyExistsException";
/// The NameNode's answer to an append while a dead writer's lease is being recovered.
const RECOVERY_IN_PROGRESS_EXCEPTION: &str =
    "org.apache.hadoop.hdfs.protocol.RecoveryInProgressException";

/// Settings of an [`HdfsPackStore`]. `Default` gives the documented defaults.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HdfsOptions {
    /// Deadline of every single call (create, append flush, hsync, read, list, ...). Default 45 s:
    /// at least twice [`HdfsOptions::socket_timeout`], so that a write whose new block landed on
    /// a DataNode that does not answer can time out on it and go on with another block
    /// (hdfs-native patch (c), `vendor/hdfs-native/PATCHES.md`) inside one call.
    pub call_timeout: Duration,
    /// Deadline of the first NameNode call made by [`HdfsPackStore::connect`]. Default 10 s.
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
    /// How long [`HdfsPackStore::recover_lease`] waits for the NameNode to close a file.
    /// Default 60 s.
    pub lease_recovery_timeout: Duration,
    /// HDFS user; `None` = hdfs-native's choice (`HADOOP_USER_NAME` or the OS user).
    pub user: Option<String>,
    /// The NameNode's web server `host:port` (`dfs.namenode.http-address`, Hadoop 3 port
    /// 9870). When set, bytes another process has synced into the block it is still writing
    /// are read over WebHDFS (see the module docs); `None`: such reads fail with
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
    fn client_config(&self) -> Vec<(String, String)> {
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

/// Bytes of the block a writer of this process is filling (not readable through HDFS yet).
#[derive(Debug, Default)]
struct Tail {
    /// File offset of `bytes[0]`.
    start: u64,
    bytes: Vec<u8>,
}

impl Tail {
    fn end(&self) -> u64 {
        self.start + self.bytes.len() as u64
    }
}

type SharedTail = Arc<Mutex<Tail>>;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

struct Inner {
    /// `Some` until drop (shut down in the background so dropping never blocks or panics).
    runtime: Option<Runtime>,
    client: Client,
    /// NameNode URL, `hdfs://host:port`.
    namenode: String,
    /// Absolute root folder without trailing '/' (`""` for the file system root).
    root: String,
    options: HdfsOptions,
    /// Open writers of this store, by full HDFS path.
    tails: Mutex<HashMap<String, SharedTail>>,
    /// Block locations of recently read files, by full HDFS path (saves the NameNode round
    /// trip per read; dropped on any error, delete or rename).
    readers: Mutex<HashMap<String, Arc<FileReader>>>,
    /// HTTP client for WebHDFS reads (`Some` when [`HdfsOptions::webhdfs`] is set).
    http: Option<reqwest::Client>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        if let Some(rt) = self.runtime.take() {
            rt.shutdown_background();
        }
    }
}

impl Inner {
    /// Blocks on `fut` with a deadline, mapping hdfs-native errors for `path`.
    fn run<T>(
        &self,
        op: &'static str,
        path: &str,
        deadline: Duration,
        fut: impl Future<Output = hdfs_native::Result<T>>,
    ) -> Result<T> {
        if Handle::try_current().is_ok() {
            return Err(Error::AsyncContext { op });
        }
        let Some(rt) = self.runtime.as_ref() else {
            return Err(Error::AsyncContext { op });
        };
        let started = Instant::now();
        let result = rt.block_on(async { tokio::time::timeout(deadline, fut).await });
        tracing::trace!(
            op,
            path,
            ms = started.elapsed().as_secs_f64() * 1e3,
            "hdfs call"
        );
        match result {
            Ok(Ok(v)) => Ok(v),
            Ok(Err(e)) => Err(map_error(op, path, e)),
            Err(_) => Err(Error::Timeout {
                op,
                path: path.to_string(),
                after: deadline,
            }),
        }
    }

    fn call<T>(
        &self,
        op: &'static str,
        path: &str,
        fut: impl Future<Output = hdfs_native::Result<T>>,
    ) -> Result<T> {
        self.run(op, path, self.options.call_timeout, fut)
    }

    /// Absolute HDFS path of a validated store path.
    fn full(&self, path: &str) -> Result<String> {
        validate_path(path)?;
        Ok(format!("{}/{path}", self.root))
    }

    /// Absolute HDFS path of the root folder.
    fn root_dir(&self) -> &str {
        if self.root.is_empty() {
            "/"
        } else {
            &self.root
        }
    }

    /// Status of a regular file; folders count as missing.
    fn file_len(&self, path: &str, full: &str) -> Result<u64> {
        let status = self.call("stat", path, self.client.get_file_info(full))?;
        if status.isdir {
            return Err(Error::NotFound {
                path: path.to_string(),
            });
        }
        Ok(status.length as u64)
    }

    fn forget_reader(&self, full: &str) {
        lock(&self.readers).remove(full);
    }

    fn tail(&self, full: &str) -> Option<SharedTail> {
        lock(&self.tails).get(full).cloned()
    }

    /// One attempt of `read_range`.
    fn read_once(&self, path: &str, full: &str, offset: u64, len: u64) -> Result<Vec<u8>> {
        let tail = self.tail(full);
        if tail.is_none() {
            let cached = lock(&self.readers).get(full).cloned();
            if let Some(reader) = cached {
                let end = offset.checked_add(len);
                if end.is_some_and(|e| e <= reader.file_length() as u64) && len > 0 {
                    let (Ok(o), Ok(l)) = (usize::try_from(offset), usize::try_from(len)) else {
                        return Err(Error::OutOfRange {
                            path: path.to_string(),
                            offset,
                            len,
                            file_len: reader.file_length() as u64,
                        });
                    };
                    let result = self.call("read", path, reader.read_range(o, l));
                    if result.is_err() {
                        self.forget_reader(full);
                    }
                    return result.map(|b| b.to_vec());
                }
            }
        }
        let reader = Arc::new(self.call("open", path, self.client.read(full))?);
        if tail.is_none() {
            let mut readers = lock(&self.readers);
            if readers.len() >= READER_CACHE_ENTRIES {
                readers.clear();
            }
            readers.insert(full.to_string(), Arc::clone(&reader));
        }
        let hdfs_len = reader.file_length() as u64;
        let visible = tail
            .as_ref()
            .map_or(hdfs_len, |t| hdfs_len.max(lock(t).end()));
        let end = match offset.checked_add(len) {
            Some(end) if end <= visible => end,
            _ => {
                // Maybe synced by a writer elsewhere: counted by the NameNode, not readable.
                let recorded = self.file_len(path, full)?;
                return match offset.checked_add(len) {
                    Some(end) if end <= recorded => {
                        self.read_webhdfs(path, full, offset, len, visible)
                    }
                    _ => Err(Error::OutOfRange {
                        path: path.to_string(),
                        offset,
                        len,
                        file_len: recorded.max(visible),
                    }),
                };
            }
        };
        if len == 0 {
            return Ok(Vec::new());
        }
        let to_usize = |v: u64| {
            usize::try_from(v).map_err(|_| Error::OutOfRange {
                path: path.to_string(),
                offset,
                len,
                file_len: visible,
            })
        };
        if end <= hdfs_len {
            let bytes = self.call(
                "read",
                path,
                reader.read_range(to_usize(offset)?, to_usize(len)?),
            )?;
            return Ok(bytes.to_vec());
        }
        // Part (or all) of the range is in the block this process is writing.
        let Some(tail) = tail else {
            unreachable!("visible > hdfs_len only with a tail");
        };
        let (split, from_tail) = {
            let t = lock(&tail);
            // From the tail: [max(offset, tail start), end); from HDFS: what lies before.
            let split = t.start.max(offset);
            if split > end || (split > offset && split > hdfs_len) {
                return Err(Error::NotYetReadable {
                    path: path.to_string(),
                    offset,
                    end,
                    readable: hdfs_len,
                });
            }
            let a = to_usize(split - t.start)?;
            let b = to_usize(end - t.start)?;
            (split, t.bytes[a..b].to_vec())
        };
        let mut out = if split > offset {
            self.call(
                "read",
                path,
                reader.read_range(to_usize(offset)?, to_usize(split - offset)?),
            )?
            .to_vec()
        } else {
            Vec::new()
        };
        out.extend_from_slice(&from_tail);
        Ok(out)
    }
}

impl Inner {
    /// A writer's failure is an hdfs-native I/O error that does not say whether the
    /// NameNode (`fsync`, `addBlock`, `complete`) or a DataNode refused: asks the NameNode
    /// (one `getFileInfo` of the root, [`HdfsOptions::connect_timeout`]) and, if it does not
    /// answer either, reports [`Error::Unavailable`] naming it.
    fn name_dead_namenode(&self, e: Error) -> Error {
        if !matches!(e, Error::Hdfs { .. } | Error::Timeout { .. }) {
            return e;
        }
        let root = self.root_dir().to_string();
        let probe = self.run(
            "stat",
            &root,
            self.options.connect_timeout,
            self.client.get_file_info(&root),
        );
        match probe {
            Ok(_) | Err(Error::NotFound { .. }) => e,
            Err(probe) => Error::Unavailable {
                url: self.namenode.clone(),
                reason: format!("the NameNode does not answer ({probe}); {e}"),
            },
        }
    }

    /// Reads `offset..offset+len` (synced bytes of a block another client is writing) over
    /// WebHDFS; [`Error::NotYetReadable`] (with `readable`, the bytes hdfs-native can read)
    /// without a WebHDFS address or when the DataNode serves fewer bytes.
    fn read_webhdfs(
        &self,
        path: &str,
        full: &str,
        offset: u64,
        len: u64,
        readable: u64,
    ) -> Result<Vec<u8>> {
        let end = offset.saturating_add(len);
        let not_yet = |readable: u64| Error::NotYetReadable {
            path: path.to_string(),
            offset,
            end,
            readable,
        };
        let (Some(web), Some(http)) = (&self.options.webhdfs, &self.http) else {
            return Err(not_yet(readable));
        };
        let failed = |reason: String| Error::Hdfs {
            op: "webhdfs read",
            path: path.to_string(),
            source: HdfsError::OperationFailed(reason),
        };
        let mut url = reqwest::Url::parse(&format!("http://{web}/"))
            .map_err(|e| failed(format!("bad WebHDFS address {web:?}: {e}")))?;
        url.path_segments_mut()
            .map_err(|()| failed(format!("bad WebHDFS address {web:?}")))?
            .pop_if_empty()
            .extend(WEBHDFS_PREFIX.split('/'))
            .extend(full.trim_start_matches('/').split('/'));
        {
            let mut query = url.query_pairs_mut();
            query
                .append_pair("op", "OPEN")
                .append_pair("offset", &offset.to_string())
                .append_pair("length", &len.to_string());
            let user = self
                .options
                .user
                .clone()
                .or_else(|| std::env::var(HADOOP_USER_ENV).ok())
                .or_else(|| std::env::var("USER").ok());
            if let Some(user) = user {
                query.append_pair("user.name", &user);
            }
        }
        let Some(rt) = self.runtime.as_ref() else {
            return Err(Error::AsyncContext { op: "webhdfs read" });
        };
        let deadline = self.options.call_timeout;
        let answer = rt.block_on(async {
            tokio::time::timeout(deadline, async {
                // Built inside the runtime: reqwest's connector needs its reactor.
                let response = http.get(url.clone()).send().await?;
                let status = response.status();
                let body = response.bytes().await?;
                Ok::<_, reqwest::Error>((status, body))
            })
            .await
        });
        let (status, body) = match answer {
            Ok(Ok(answer)) => answer,
            Ok(Err(e)) => return Err(failed(format!("GET {url}: {e}"))),
            Err(_) => {
                return Err(Error::Timeout {
                    op: "webhdfs read",
                    path: path.to_string(),
                    after: deadline,
                })
            }
        };
        if status == reqwest::StatusCode::NOT_FOUND {
            return Err(Error::NotFound {
                path: path.to_string(),
            });
        }
        if !status.is_success() {
            let text = String::from_utf8_lossy(&body[..body.len().min(300)]).to_string();
            return Err(failed(format!("GET {url}: {status}: {text}")));
        }
        if body.len() as u64 != len {
            // The DataNode's visible length ends earlier than the NameNode's synced length.
            return Err(not_yet(offset + (body.len() as u64).min(len)));
        }
        tracing::debug!(
            path,
            offset,
            len,
            "read synced bytes of an open block over WebHDFS"
        );
        Ok(body.to_vec())
    }
}

/// Maps an hdfs-native error onto the shared [`Error`] variants.
fn map_error(op: &'static str, path: &str, e: HdfsError) -> Error {
    let path = path.to_string();
    match e {
        HdfsError::FileNotFound(_) => Error::NotFound { path },
        HdfsError::AlreadyExists(_) => Error::AlreadyExists { path },
        HdfsError::RPCError(ref class, _) if class == FILE_NOT_FOUND_EXCEPTION => {
            Error::NotFound { path }
        }
        HdfsError::RPCError(ref class, _) if class == FILE_EXISTS_EXCEPTION => {
            Error::AlreadyExists { path }
        }
        source => Error::Hdfs { op, path, source },
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

/// A [`PackStore`] on HDFS. Cheap to clone (shares one client and runtime).
///
/// See the [module documentation](self) for the threading rule (never call it from async
/// code), timeouts, and which bytes of an open pack can be read.
#[derive(Clone)]
pub struct HdfsPackStore {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for HdfsPackStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HdfsPackStore")
            .field("namenode", &self.inner.namenode)
            .field("root", &self.inner.root_dir())
            .finish_non_exhaustive()
    }
}

impl HdfsPackStore {
    /// Connects with default [`HdfsOptions`]: `url` is `hdfs://host:port/root/path`.
    pub fn connect(url: &str) -> Result<Self> {
        Self::connect_with(url, HdfsOptions::default())
    }

    /// Connects to the NameNode of `url` and makes the root folder (one call, bounded by
    /// [`HdfsOptions::connect_timeout`]). Fails with [`Error::Unavailable`] when the NameNode
    /// does not answer.
    pub fn connect_with(url: &str, options: HdfsOptions) -> Result<Self> {
        if Handle::try_current().is_ok() {
            return Err(Error::AsyncContext { op: "connect" });
        }
        let (namenode, root) = parse_hdfs_url(url)?;
        let unavailable = |reason: String| Error::Unavailable {
            url: url.to_string(),
            reason,
        };
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(RUNTIME_WORKER_THREADS)
            .thread_name("packer-hdfs")
            .enable_all()
            .build()
            .map_err(|e| Error::io(url, e))?;
        let mut builder = ClientBuilder::new()
            .with_url(namenode.clone())
            .with_config(options.client_config())
            .with_io_runtime(runtime.handle().clone());
        if let Some(user) = &options.user {
            builder = builder.with_user(user.clone());
        }
        let client = builder.build().map_err(|e| unavailable(e.to_string()))?;
        let http = match &options.webhdfs {
            Some(_) => Some(
                reqwest::Client::builder()
                    .connect_timeout(options.connect_timeout)
                    .timeout(options.call_timeout)
                    .build()
                    .map_err(|e| unavailable(format!("WebHDFS client: {e}")))?,
            ),
            None => None,
        };
        let inner = Inner {
            runtime: Some(runtime),
            client,
            namenode,
            root,
            options,
            tails: Mutex::new(HashMap::new()),
            readers: Mutex::new(HashMap::new()),
            http,
        };
        let root_dir = inner.root_dir().to_string();
        let started = Instant::now();
        inner
            .run(
                "connect",
                url,
                inner.options.connect_timeout,
                inner.client.mkdirs(&root_dir, DIR_PERMISSION, true),
            )
            .map_err(|e| match e {
                Error::Timeout { after, .. } => {
                    unavailable(format!("the NameNode did not answer within {after:?}"))
                }
                Error::Hdfs { source, .. } => unavailable(source.to_string()),
                other => other,
            })?;
        tracing::debug!(
            url,
            elapsed_ms = started.elapsed().as_millis() as u64,
            "connected to HDFS"
        );
        Ok(Self {
            inner: Arc::new(inner),
        })
    }

    /// NameNode URL (`hdfs://host:port`).
    pub fn namenode(&self) -> &str {
        &self.inner.namenode
    }

    /// Absolute HDFS folder the store paths are relative to.
    pub fn root(&self) -> &str {
        self.inner.root_dir()
    }

    /// The options the store was opened with.
    pub fn options(&self) -> &HdfsOptions {
        &self.inner.options
    }

    /// The underlying hdfs-native client (async; run it on your own runtime).
    pub fn client(&self) -> &Client {
        &self.inner.client
    }

    /// Recovers the lease of a file whose writer died (crashed process) and waits until the
    /// NameNode has closed it, at most [`HdfsOptions::lease_recovery_timeout`]. Afterwards the
    /// file is complete: every byte up to the writer's last `sync` is readable (bytes after
    /// it may be, as a torn tail). Returns `Ok(true)` if the file was already closed.
    ///
    /// Fences the current writer: only call it for files no live process is writing.
    pub fn recover_lease(&self, path: &str) -> Result<bool> {
        let full = self.inner.full(path)?;
        let started = Instant::now();
        let mut polls = 0u32;
        loop {
            let closed = self.inner.call(
                "recover_lease",
                path,
                self.inner.client.recover_lease(&full),
            )?;
            if closed {
                if polls > 0 {
                    tracing::info!(
                        path,
                        polls,
                        elapsed_ms = started.elapsed().as_millis() as u64,
                        "recovered lease of pack"
                    );
                }
                return Ok(polls == 0);
            }
            polls += 1;
            if started.elapsed() >= self.inner.options.lease_recovery_timeout {
                return Err(Error::Timeout {
                    op: "recover_lease",
                    path: path.to_string(),
                    after: self.inner.options.lease_recovery_timeout,
                });
            }
            std::thread::sleep(LEASE_POLL_PAUSE);
        }
    }
}

impl PackStore for HdfsPackStore {
    fn create(&self, path: &str) -> Result<Box<dyn PackWriter>> {
        let inner = &self.inner;
        let full = inner.full(path)?;
        let mut opts = WriteOptions::default()
            .block_size(inner.options.block_size)
            .permission(FILE_PERMISSION)
            .overwrite(false)
            .create_parent(true);
        if let Some(r) = inner.options.replication {
            opts = opts.replication(r);
        }
        let writer = inner
            .call("create", path, inner.client.create(&full, opts))
            .map_err(|e| inner.name_dead_namenode(e))?;
        inner.forget_reader(&full);
        let tail: SharedTail = Arc::default();
        lock(&inner.tails).insert(full.clone(), Arc::clone(&tail));
        Ok(Box::new(HdfsPackWriter {
            inner: Arc::clone(inner),
            path: path.to_string(),
            full,
            writer: Some(writer),
            buffer: Vec::new(),
            position: 0,
            handed: 0,
            blocks_from: 0,
            tail,
            failed: None,
        }))
    }

    /// The file's lease is the claim: the NameNode refuses a second append of a file under
    /// construction (`AlreadyBeingCreatedException`, or `RecoveryInProgressException` while
    /// a dead writer's lease is recovered): [`Error::Busy`]. Appended bytes go into new
    /// blocks (`APPEND | NEW_BLOCK`, vendor patch (e)): the file's last block stays complete
    /// and readable, and a new block's write pipeline is placed again past a dead DataNode as
    /// for a created pack.
    fn append(&self, path: &str) -> Result<Box<dyn PackWriter>> {
        let inner = &self.inner;
        let full = inner.full(path)?;
        let len = inner.file_len(path, &full)?;
        let busy = || Error::Busy {
            path: path.to_string(),
        };
        let appended = inner.client.append_to_new_block(&full);
        let writer = match inner.call("append", path, appended) {
            Ok(w) => w,
            Err(Error::AlreadyExists { .. }) => return Err(busy()),
            Err(Error::Hdfs {
                source: HdfsError::RPCError(ref class, _),
                ..
            }) if class == RECOVERY_IN_PROGRESS_EXCEPTION => return Err(busy()),
            Err(e) => return Err(inner.name_dead_namenode(e)),
        };
        inner.forget_reader(&full);
        let tail: SharedTail = Arc::new(Mutex::new(Tail {
            start: len,
            bytes: Vec::new(),
        }));
        lock(&inner.tails).insert(full.clone(), Arc::clone(&tail));
        let out = Box::new(HdfsPackWriter {
            inner: Arc::clone(inner),
            path: path.to_string(),
            full: full.clone(),
            writer: Some(writer),
            buffer: Vec::new(),
            position: len,
            handed: len,
            blocks_from: len,
            tail,
            failed: None,
        });
        // Another writer appended between the read of the last block and the lease.
        if inner.file_len(path, &full)? != len {
            let _ = out.close();
            return Err(busy());
        }
        Ok(out)
    }

    fn read_range(&self, path: &str, offset: u64, len: u64) -> Result<Vec<u8>> {
        let full = self.inner.full(path)?;
        let attempts = self.inner.options.read_attempts.max(1);
        let mut attempt = 1;
        loop {
            match self.inner.read_once(path, &full, offset, len) {
                Ok(bytes) => return Ok(bytes),
                Err(e @ (Error::Hdfs { .. } | Error::Timeout { .. })) if attempt < attempts => {
                    tracing::debug!(path, attempt, error = %e, "hdfs read failed, retrying");
                    std::thread::sleep(READ_RETRY_PAUSE * attempt);
                    attempt += 1;
                }
                Err(e) => return Err(e),
            }
        }
    }

    fn list(&self, prefix: &str) -> Result<Vec<PackEntry>> {
        let (dir, _partial) = split_prefix(prefix)?;
        let inner = &self.inner;
        let base = if dir.is_empty() {
            inner.root_dir().to_string()
        } else {
            inner.full(dir)?
        };
        let statuses = match inner.call("list", prefix, inner.client.list_status(&base, true)) {
            Ok(s) => s,
            Err(Error::NotFound { .. }) => return Ok(Vec::new()),
            Err(e) => return Err(inner.name_dead_namenode(e)),
        };
        let root_prefix = format!("{}/", inner.root);
        let mut out: Vec<PackEntry> = statuses
            .into_iter()
            .filter(|s| !s.isdir)
            .filter_map(|s| {
                let rel = s.path.strip_prefix(&root_prefix)?;
                rel.starts_with(prefix).then(|| PackEntry {
                    path: rel.to_string(),
                    len: s.length as u64,
                })
            })
            .collect();
        out.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(out)
    }

    fn len(&self, path: &str) -> Result<u64> {
        let full = self.inner.full(path)?;
        self.inner.file_len(path, &full)
    }

    fn delete(&self, path: &str) -> Result<()> {
        let inner = &self.inner;
        let full = inner.full(path)?;
        inner.file_len(path, &full)?;
        inner.forget_reader(&full);
        if inner.call("delete", path, inner.client.delete(&full, false))? {
            Ok(())
        } else {
            Err(Error::NotFound {
                path: path.to_string(),
            })
        }
    }

    fn rename(&self, from: &str, to: &str) -> Result<()> {
        let inner = &self.inner;
        let src = inner.full(from)?;
        let dst = inner.full(to)?;
        inner.file_len(from, &src)?;
        inner.forget_reader(&src);
        inner.forget_reader(&dst);
        match inner.call("stat", to, inner.client.get_file_info(&dst)) {
            Ok(_) => {
                return Err(Error::AlreadyExists {
                    path: to.to_string(),
                })
            }
            Err(Error::NotFound { .. }) => {}
            Err(e) => return Err(e),
        }
        if let Some((parent, _)) = dst.rsplit_once('/') {
            if !parent.is_empty() {
                inner.call(
                    "mkdirs",
                    to,
                    inner.client.mkdirs(parent, DIR_PERMISSION, true),
                )?;
            }
        }
        inner
            .call("rename", from, inner.client.rename(&src, &dst, false))
            .map_err(|e| match e {
                Error::AlreadyExists { .. } => Error::AlreadyExists {
                    path: to.to_string(),
                },
                other => other,
            })
    }

    fn recover_lease(&self, path: &str) -> Result<bool> {
        HdfsPackStore::recover_lease(self, path)
    }
}

/// Writer of one pack of an [`HdfsPackStore`] (holds the file's HDFS lease until closed).
pub struct HdfsPackWriter {
    inner: Arc<Inner>,
    path: String,
    full: String,
    /// `None` once closed.
    writer: Option<hdfs_native::file::FileWriter>,
    /// Appended bytes not yet handed to HDFS.
    buffer: Vec<u8>,
    /// Bytes appended so far.
    position: u64,
    /// Bytes handed to HDFS so far.
    handed: u64,
    /// Where this writer's first block starts: 0 for a created pack, its length before an
    /// append (whose bytes go into new blocks).
    blocks_from: u64,
    tail: SharedTail,
    /// Set when an HDFS call failed or timed out; the writer refuses further work.
    failed: Option<String>,
}

impl std::fmt::Debug for HdfsPackWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HdfsPackWriter")
            .field("path", &self.path)
            .field("position", &self.position)
            .finish_non_exhaustive()
    }
}

impl HdfsPackWriter {
    fn check(&self) -> Result<()> {
        if let Some(reason) = &self.failed {
            return Err(Error::Io {
                path: self.path.clone(),
                source: std::io::Error::other(format!("writer failed earlier: {reason}")),
            });
        }
        if self.writer.is_none() {
            return Err(Error::Io {
                path: self.path.clone(),
                source: std::io::Error::other("writer already closed"),
            });
        }
        Ok(())
    }

    /// Runs one HDFS call on the file writer, marking the writer failed on error.
    fn with_writer<T>(
        &mut self,
        op: &'static str,
        f: impl FnOnce(
            &mut hdfs_native::file::FileWriter,
        )
            -> std::pin::Pin<Box<dyn Future<Output = hdfs_native::Result<T>> + Send + '_>>,
    ) -> Result<T> {
        self.check()?;
        let Some(writer) = self.writer.as_mut() else {
            return Err(Error::Io {
                path: self.path.clone(),
                source: std::io::Error::other("writer already closed"),
            });
        };
        let result = self.inner.call(op, &self.path, f(writer));
        if let Err(e) = &result {
            if !matches!(e, Error::AsyncContext { .. }) {
                self.failed = Some(e.to_string());
            }
        }
        result.map_err(|e| self.inner.name_dead_namenode(e))
    }

    /// Hands the buffered bytes to HDFS and trims the copy of the open block.
    fn flush_buffer(&mut self) -> Result<()> {
        if self.buffer.is_empty() {
            return Ok(());
        }
        let bytes = Bytes::from(std::mem::take(&mut self.buffer));
        let n = bytes.len() as u64;
        self.with_writer("write", move |w| Box::pin(w.write_bytes(bytes)))?;
        self.handed += n;
        // Blocks before the one holding the last handed byte are committed at the NameNode
        // (hdfs-native closes a block before starting the next), so HDFS serves them.
        let block = self.inner.options.block_size.max(1);
        let written = self
            .handed
            .saturating_sub(1)
            .saturating_sub(self.blocks_from);
        let keep_from = self.blocks_from + (written / block) * block;
        let mut tail = lock(&self.tail);
        if keep_from > tail.start {
            let drop = usize::try_from(keep_from - tail.start)
                .unwrap_or(tail.bytes.len())
                .min(tail.bytes.len());
            tail.bytes.drain(..drop);
            tail.start += drop as u64;
        }
        Ok(())
    }

    fn sync_inner(&mut self) -> Result<()> {
        self.flush_buffer()?;
        self.with_writer("hsync", |w| Box::pin(w.hsync()))
    }

    fn unregister(&self) {
        let mut tails = lock(&self.inner.tails);
        if tails
            .get(&self.full)
            .is_some_and(|t| Arc::ptr_eq(t, &self.tail))
        {
            tails.remove(&self.full);
        }
    }
}

impl PackWriter for HdfsPackWriter {
    fn append(&mut self, bytes: &[u8]) -> Result<u64> {
        self.check()?;
        let offset = self.position;
        self.buffer.extend_from_slice(bytes);
        lock(&self.tail).bytes.extend_from_slice(bytes);
        self.position += bytes.len() as u64;
        if self.buffer.len() >= self.inner.options.write_buffer_bytes {
            self.flush_buffer()?;
        }
        Ok(offset)
    }

    fn position(&self) -> u64 {
        self.position
    }

    fn sync(&mut self) -> Result<()> {
        self.sync_inner()
    }

    fn close(mut self: Box<Self>) -> Result<()> {
        let result = self
            .flush_buffer()
            .and_then(|()| self.with_writer("close", |w| Box::pin(w.close())));
        if result.is_ok() {
            // hdfs-native's own Drop stays quiet only after a successful close.
            self.writer = None;
        } else if let Some(w) = self.writer.take() {
            // Failed: leave the lease to expire (or to recover_lease); hdfs-native warns.
            drop(w);
        }
        self.unregister();
        result
    }
}

impl Drop for HdfsPackWriter {
    fn drop(&mut self) {
        if self.writer.is_some() {
            tracing::warn!(
                path = %self.path,
                position = self.position,
                "pack writer dropped without close(); bytes after the last sync may be lost and the file stays open until its lease is recovered"
            );
        }
        self.unregister();
    }
}

#[cfg(test)]
mod tests {
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
    fn client_config_lowers_retries() {
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

    #[test]
    fn error_mapping_uses_shared_variants() {
        assert!(matches!(
            map_error("stat", "a", HdfsError::FileNotFound("/r/a".into())),
            Error::NotFound { path } if path == "a"
        ));
        assert!(matches!(
            map_error(
                "rename",
                "a",
                HdfsError::RPCError(FILE_EXISTS_EXCEPTION.into(), "exists".into())
            ),
            Error::AlreadyExists { .. }
        ));
        assert!(matches!(
            map_error(
                "open",
                "a",
                HdfsError::RPCError(FILE_NOT_FOUND_EXCEPTION.into(), "no".into())
            ),
            Error::NotFound { .. }
        ));
        assert!(matches!(
            map_error("read", "a", HdfsError::ChecksumError),
            Error::Hdfs { op: "read", .. }
        ));
    }

    /// Port 1 on loopback: nothing listens there, connections are refused at once.
    const DEAD_NAMENODE: &str = "hdfs://127.0.0.1:1/packs";

    #[test]
    fn unreachable_namenode_fails_fast_with_a_clear_error() {
        let started = Instant::now();
        let err = HdfsPackStore::connect(DEAD_NAMENODE).expect_err("nothing listens on port 1");
        let elapsed = started.elapsed();
        eprintln!("refused NameNode reported after {elapsed:?}: {err}");
        assert!(matches!(err, Error::Unavailable { .. }), "got {err}");
        assert!(err.to_string().contains("127.0.0.1:1"), "{err}");
        assert!(elapsed < Duration::from_secs(15), "took {elapsed:?}");
    }

    #[test]
    fn silent_namenode_times_out_at_the_connect_deadline() {
        // Accepts TCP connections (kernel backlog) but never answers an RPC.
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let options = HdfsOptions {
            connect_timeout: Duration::from_secs(2),
            ..HdfsOptions::default()
        };
        let started = Instant::now();
        let err = HdfsPackStore::connect_with(&format!("hdfs://127.0.0.1:{port}/p"), options)
            .expect_err("the NameNode never answers");
        let elapsed = started.elapsed();
        assert!(
            matches!(&err, Error::Unavailable { reason, .. } if reason.contains("did not answer")),
            "got {err}"
        );
        assert!(elapsed >= Duration::from_secs(2), "took {elapsed:?}");
        assert!(elapsed < Duration::from_secs(8), "took {elapsed:?}");
        drop(listener);
    }

    #[test]
    fn calls_from_async_code_are_refused() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("runtime");
        let err = rt
            .block_on(async { HdfsPackStore::connect(DEAD_NAMENODE) })
            .expect_err("inside a runtime");
        assert!(
            matches!(err, Error::AsyncContext { op: "connect" }),
            "got {err}"
        );
    }
}
