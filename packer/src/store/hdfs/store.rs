//! [`HdfsPackStore`]: connecting to the NameNode and the [`PackStore`] operations (create,
//! append, read with retries, list, delete, rename, lease recovery).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hdfs_native::{Client, ClientBuilder, HdfsError, WriteOptions};
use tokio::runtime::Handle;

use crate::error::{Error, Result};
use crate::store::api::{split_prefix, PackEntry, PackStore, PackWriter};

use super::client::{lock, Inner, SharedTail, Tail};
use super::config::{parse_hdfs_url, HdfsOptions, RUNTIME_WORKER_THREADS};
use super::writer::HdfsPackWriter;

const DIR_PERMISSION: u32 = 0o755;
const FILE_PERMISSION: u32 = 0o644;
/// Pause between attempts of a failed read (multiplied by the attempt number).
const READ_RETRY_PAUSE: Duration = Duration::from_millis(100);

/// Pause between polls of `recoverLease`.
const LEASE_POLL_PAUSE: Duration = Duration::from_millis(500);

/// The NameNode's answer to an append while a dead writer's lease is being recovered.
const RECOVERY_IN_PROGRESS_EXCEPTION: &str =
    "org.apache.hadoop.hdfs.protocol.RecoveryInProgressException";

/// A [`PackStore`] on HDFS. Cheap to clone (shares one client and runtime).
///
/// See the [module documentation](super) for the threading rule (never call it from async
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

#[cfg(test)]
mod tests {
    use super::*;

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
