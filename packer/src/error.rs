//! Error type of the packer crate.

use std::io;
use std::time::Duration;

/// Result alias used throughout the packer crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong while storing, writing or reading packs.
///
/// Every [`crate::PackStore`] backend maps its failures onto these variants so that
/// callers (and the conformance suite) can rely on them: a missing file is
/// [`Error::NotFound`], an existing one [`Error::AlreadyExists`], a read past the end
/// [`Error::OutOfRange`].
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An I/O operation on a pack (or the store root) failed.
    #[error("i/o error on {path}: {source}")]
    Io {
        /// Store-relative path (or root path) the operation was about.
        path: String,
        /// Underlying error.
        #[source]
        source: io::Error,
    },

    /// The disk under a local pack refused a write: it is full, mounted read-only or over
    /// quota. Names the file on disk.
    #[error("{condition} writing pack {file}{hint}: {source}", hint = condition.hint())]
    Disk {
        /// What the disk refused the write for.
        condition: DiskCondition,
        /// Store-relative path.
        path: String,
        /// The file (or folder) on disk.
        file: String,
        /// Underlying error.
        #[source]
        source: io::Error,
    },

    /// The pack does not exist.
    #[error("pack not found: {path}")]
    NotFound {
        /// Store-relative path.
        path: String,
    },

    /// `create` or `rename` would overwrite an existing pack.
    #[error("pack already exists: {path}")]
    AlreadyExists {
        /// Store-relative path.
        path: String,
    },

    /// A store path is not a relative, '/'-separated path below the store root.
    #[error("invalid pack path {path:?}: {reason}")]
    InvalidPath {
        /// The rejected path.
        path: String,
        /// Why it was rejected.
        reason: &'static str,
    },

    /// A byte range extends past the end of the pack.
    #[error("range {offset}+{len} is out of bounds for {path} ({file_len} bytes)")]
    OutOfRange {
        /// Store-relative path.
        path: String,
        /// Requested start.
        offset: u64,
        /// Requested length.
        len: u64,
        /// Actual length of the pack.
        file_len: u64,
    },

    /// The store URL names a scheme without a backend (yet), e.g. `hdfs://`.
    #[error(
        "unsupported pack store scheme {scheme:?} in {url:?} (supported: file://, a plain path, or hdfs:// when built with the `hdfs` feature)"
    )]
    UnsupportedScheme {
        /// The scheme, without `://`.
        scheme: String,
        /// The full URL.
        url: String,
    },

    /// The store URL is malformed (e.g. `file://host/path` or an empty path).
    #[error("invalid pack store url {url:?}: {reason}")]
    InvalidUrl {
        /// The rejected URL.
        url: String,
        /// Why it was rejected.
        reason: &'static str,
    },

    /// Bytes at `offset` are not a complete, well-formed WARC record (torn tail after
    /// a crash, corruption, or not a WARC file at all).
    #[error("corrupt WARC record at offset {offset}: {reason}")]
    CorruptRecord {
        /// Offset of the record start within the bytes that were parsed.
        offset: u64,
        /// What was wrong.
        reason: String,
    },

    /// The block of a record is not a well-formed HTTP response.
    #[error("malformed HTTP message in WARC block: {reason}")]
    MalformedHttp {
        /// What was wrong.
        reason: String,
    },

    /// A pack writer failed earlier and records appended to it since the last sync
    /// could not be made durable; they must not be indexed.
    #[error("unsynced records were lost when pack {path} failed: {reason}")]
    UnsyncedLoss {
        /// Store-relative path of the failed pack.
        path: String,
        /// The failure that caused the loss.
        reason: String,
    },

    /// A storage server (e.g. the HDFS NameNode) could not be reached or did not answer
    /// when the store was opened.
    #[error("pack store {url} is unavailable: {reason}")]
    Unavailable {
        /// Store URL.
        url: String,
        /// What went wrong (refused, timed out, ...).
        reason: String,
    },

    /// `append` on a file another writer holds (this process or another: a crawl appending
    /// to it, a compaction claiming it).
    #[error("pack {path} is being written by another writer")]
    Busy {
        /// Store-relative path.
        path: String,
    },

    /// The store cannot append to an existing file.
    #[error("this pack store cannot append to the existing pack {path}")]
    AppendUnsupported {
        /// Store-relative path.
        path: String,
    },

    /// A storage call did not finish within its deadline.
    #[error("{op} on {path} timed out after {after:?}")]
    Timeout {
        /// Operation name (`create`, `read`, `hsync`, ...).
        op: &'static str,
        /// Store-relative path (or URL).
        path: String,
        /// The deadline that passed.
        after: Duration,
    },

    /// A blocking store was called from inside an async (tokio) context, where blocking
    /// would stall or panic the caller's runtime. Call it from a plain thread
    /// (e.g. `tokio::task::spawn_blocking`).
    #[error("{op}: blocking pack store called from inside an async runtime; use spawn_blocking or a plain thread")]
    AsyncContext {
        /// Operation name.
        op: &'static str,
    },

    /// The requested bytes exist (they are counted by `len`) but cannot be read yet: on HDFS,
    /// the last block of a file another process is still writing is not readable through
    /// hdfs-native until that writer closes it or its lease is recovered, and no WebHDFS
    /// address was given (or WebHDFS served fewer bytes).
    #[error("bytes {offset}..{end} of {path} are in a block still being written by another client (readable: {readable} bytes); read again after the pack is closed or its lease recovered, or give the store the NameNode's web address ([storage] namenode_http) to read synced bytes over WebHDFS")]
    NotYetReadable {
        /// Store-relative path.
        path: String,
        /// Requested start.
        offset: u64,
        /// Requested end (exclusive).
        end: u64,
        /// Bytes readable now.
        readable: u64,
    },

    /// Any other failure reported by the HDFS client.
    #[cfg(feature = "hdfs")]
    #[error("hdfs {op} on {path}: {source}")]
    Hdfs {
        /// Operation name.
        op: &'static str,
        /// Store-relative path.
        path: String,
        /// Error from hdfs-native.
        #[source]
        source: hdfs_native::HdfsError,
    },
}

impl Error {
    /// Wraps an `io::Error` for `path`, turning `NotFound`/`AlreadyExists` into the
    /// dedicated variants.
    pub(crate) fn io(path: impl Into<String>, source: io::Error) -> Self {
        let path = path.into();
        match source.kind() {
            io::ErrorKind::NotFound => Error::NotFound { path },
            io::ErrorKind::AlreadyExists => Error::AlreadyExists { path },
            _ => Error::Io { path, source },
        }
    }

    /// Builds a [`Error::CorruptRecord`].
    pub(crate) fn corrupt(offset: u64, reason: impl Into<String>) -> Self {
        Error::CorruptRecord {
            offset,
            reason: reason.into(),
        }
    }
}

/// A disk's refusal of a write, from the operating system's error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiskCondition {
    /// `ENOSPC`: the file system is full.
    NoSpace,
    /// `EROFS`: the file system is mounted read-only.
    ReadOnly,
    /// `EDQUOT`: the user's disk quota is used up.
    QuotaExceeded,
}

impl DiskCondition {
    /// The condition an I/O error reports, if it is one of these.
    pub fn of(e: &io::Error) -> Option<DiskCondition> {
        match e.kind() {
            io::ErrorKind::StorageFull => Some(DiskCondition::NoSpace),
            io::ErrorKind::ReadOnlyFilesystem => Some(DiskCondition::ReadOnly),
            io::ErrorKind::QuotaExceeded => Some(DiskCondition::QuotaExceeded),
            _ => None,
        }
    }

    /// What to do about it, after the file in a message.
    fn hint(self) -> &'static str {
        match self {
            DiskCondition::NoSpace | DiskCondition::QuotaExceeded => {
                " (make room and run again: an interrupted crawl is taken up)"
            }
            DiskCondition::ReadOnly => "",
        }
    }
}

impl std::fmt::Display for DiskCondition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            DiskCondition::NoSpace => "no space left on device",
            DiskCondition::ReadOnly => "read-only file system",
            DiskCondition::QuotaExceeded => "disk quota exceeded",
        })
    }
}
