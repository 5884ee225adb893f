//! The state a store and its writers share ([`Inner`]: the tokio runtime, the hdfs-native
//! client, the open writers' copies of their current block, the cache of block locations)
//! and the blocking, deadline-bounded call every HDFS operation goes through, with the
//! mapping of hdfs-native errors.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use hdfs_native::file::FileReader;
use hdfs_native::{Client, HdfsError};
use tokio::runtime::{Handle, Runtime};

use crate::error::{Error, Result};
use crate::store::api::validate_path;

use super::config::HdfsOptions;

/// Java exception classes the NameNode uses for missing / existing files.
const FILE_NOT_FOUND_EXCEPTION: &str = "java.io.FileNotFoundException";
const FILE_EXISTS_EXCEPTION: &str = "org.apache.hadoop.fs.FileAlreadyExistsException";

/// Bytes of the block a writer of this process is filling (not readable through HDFS yet).
#[derive(Debug, Default)]
pub(super) struct Tail {
    /// File offset of `bytes[0]`.
    pub(super) start: u64,
    pub(super) bytes: Vec<u8>,
}

impl Tail {
    pub(super) fn end(&self) -> u64 {
        self.start + self.bytes.len() as u64
    }
}

pub(super) type SharedTail = Arc<Mutex<Tail>>;

pub(super) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

pub(super) struct Inner {
    /// `Some` until drop (shut down in the background so dropping never blocks or panics).
    pub(super) runtime: Option<Runtime>,
    pub(super) client: Client,
    /// NameNode URL, `hdfs://host:port`.
    pub(super) namenode: String,
    /// Absolute root folder without trailing '/' (`""` for the file system root).
    pub(super) root: String,
    pub(super) options: HdfsOptions,
    /// Open writers of this store, by full HDFS path.
    pub(super) tails: Mutex<HashMap<String, SharedTail>>,
    /// Block locations of recently read files, by full HDFS path (saves the NameNode round
    /// trip per read; dropped on any error, delete or rename).
    pub(super) readers: Mutex<HashMap<String, Arc<FileReader>>>,
    /// HTTP client for WebHDFS reads (`Some` when [`HdfsOptions::webhdfs`] is set).
    pub(super) http: Option<reqwest::Client>,
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
    pub(super) fn run<T>(
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

    pub(super) fn call<T>(
        &self,
        op: &'static str,
        path: &str,
        fut: impl Future<Output = hdfs_native::Result<T>>,
    ) -> Result<T> {
        self.run(op, path, self.options.call_timeout, fut)
    }

    /// Absolute HDFS path of a validated store path.
    pub(super) fn full(&self, path: &str) -> Result<String> {
        validate_path(path)?;
        Ok(format!("{}/{path}", self.root))
    }

    /// Absolute HDFS path of the root folder.
    pub(super) fn root_dir(&self) -> &str {
        if self.root.is_empty() {
            "/"
        } else {
            &self.root
        }
    }

    /// Status of a regular file; folders count as missing.
    pub(super) fn file_len(&self, path: &str, full: &str) -> Result<u64> {
        let status = self.call("stat", path, self.client.get_file_info(full))?;
        if status.isdir {
            return Err(Error::NotFound {
                path: path.to_string(),
            });
        }
        Ok(status.length as u64)
    }

    pub(super) fn forget_reader(&self, full: &str) {
        lock(&self.readers).remove(full);
    }

    pub(super) fn tail(&self, full: &str) -> Option<SharedTail> {
        lock(&self.tails).get(full).cloned()
    }

    /// A writer's failure is an hdfs-native I/O error that does not say whether the
    /// NameNode (`fsync`, `addBlock`, `complete`) or a DataNode refused: asks the NameNode
    /// (one `getFileInfo` of the root, [`HdfsOptions::connect_timeout`]) and, if it does not
    /// answer either, reports [`Error::Unavailable`] naming it.
    pub(super) fn name_dead_namenode(&self, e: Error) -> Error {
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
