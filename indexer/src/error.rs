//! Error type of the indexer crate.

use std::io;

/// Result alias used throughout the indexer crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong while storing or querying tables.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A table name (or a source name inside it) is not valid.
    #[error("invalid table name {name:?}: {reason}")]
    BadTableName {
        /// The offending name.
        name: String,
        /// Why it was rejected.
        reason: &'static str,
    },
    /// A column family name is not valid.
    #[error("invalid column family {name:?}: {reason}")]
    BadFamily {
        /// The offending family.
        name: String,
        /// Why it was rejected.
        reason: &'static str,
    },
    /// A row key (or a value inside one) is malformed.
    #[error("invalid row key {key:02x?}: {reason}")]
    BadKey {
        /// The offending key bytes.
        key: Vec<u8>,
        /// Why it was rejected.
        reason: &'static str,
    },
    /// The table was never created.
    #[error("table {0:?} does not exist")]
    NoSuchTable(String),
    /// A row names a column family the table does not have.
    #[error("table {table:?} has no column family {family:?}")]
    NoSuchFamily {
        /// Table name.
        table: String,
        /// Family name.
        family: String,
    },
    /// `create_table` was called again with a different layout.
    #[error("table {table:?} already exists with a different layout: {detail}")]
    TableMismatch {
        /// Table name.
        table: String,
        /// What differs.
        detail: String,
    },
    /// A stored cell could not be decoded.
    #[error("corrupt cell {qualifier:?} in row {key:02x?}: {reason}")]
    Corrupt {
        /// Row key of the cell.
        key: Vec<u8>,
        /// Qualifier of the cell (lossy UTF-8).
        qualifier: String,
        /// What is wrong with it.
        reason: String,
    },
    /// Options or a query are not valid.
    #[error("invalid argument: {0}")]
    Invalid(String),
    /// The storage backend failed.
    #[error("storage backend failed during {context}: {source}")]
    Backend {
        /// What the indexer was doing.
        context: String,
        /// The backend's own error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync + 'static>,
    },
    /// The disk under the embedded store's folder refused a write (full,
    /// read-only, over quota, failing). fjall accepts no write after a failed
    /// one ("Poisoned"); such an error names the earlier failure instead.
    #[error("cannot write the index folder {path}: {condition} ({context}){hint}: {source}", hint = condition.hint())]
    Disk {
        /// The store's folder.
        path: String,
        /// What the disk refused the write for.
        condition: DiskCondition,
        /// What the indexer was doing.
        context: String,
        /// The backend's own error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync + 'static>,
    },
    /// A remote store (the HBase Thrift server) cannot be reached.
    #[error("{service} at {addr} is unreachable after {attempts} attempt(s): {source}")]
    Unavailable {
        /// What was contacted (e.g. "HBase Thrift server").
        service: &'static str,
        /// Address that was contacted.
        addr: String,
        /// Connection attempts made.
        attempts: u32,
        /// The last connection or transport error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync + 'static>,
    },
    /// Statistics over a range that needs more buckets of the interval than
    /// [`crate::zone::MAX_BUCKETS`]: the asker's range or interval, not the store.
    #[error(
        "statistics would need more than {limit} buckets; use a longer interval or a shorter range"
    )]
    TooManyBuckets {
        /// The most buckets one call lays out.
        limit: usize,
    },
    /// A text query does not parse, or asks too much.
    #[error("invalid text query at character {position}: {reason}")]
    BadText {
        /// Character position (from 1) where the problem is.
        position: usize,
        /// What is wrong.
        reason: String,
    },
    /// A search cursor is malformed or belongs to another query.
    #[error("invalid cursor: {0}")]
    BadCursor(String),
    /// A page id is malformed.
    #[error("invalid page id {id:?}: {reason}")]
    BadPageId {
        /// The offending id.
        id: String,
        /// Why it was rejected.
        reason: &'static str,
    },
    /// (De)serialising a JSON cell failed.
    #[error("json cell: {0}")]
    Json(#[from] serde_json::Error),
}

impl Error {
    /// Wraps a backend error with a description of the operation that failed.
    pub fn backend<E>(context: impl Into<String>, source: E) -> Self
    where
        E: std::error::Error + Send + Sync + 'static,
    {
        Error::Backend {
            context: context.into(),
            source: Box::new(source),
        }
    }
}

/// Why a disk refused a write, from the operating system's error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiskCondition {
    /// `ENOSPC`: the file system is full.
    NoSpace,
    /// `EROFS`: the file system is mounted read-only.
    ReadOnly,
    /// `EDQUOT`: the user's disk quota is used up.
    QuotaExceeded,
    /// Another I/O error, or one the backend no longer names.
    Failed,
}

impl DiskCondition {
    /// The condition of an I/O error of that kind.
    pub fn of(kind: io::ErrorKind) -> DiskCondition {
        match kind {
            io::ErrorKind::StorageFull => DiskCondition::NoSpace,
            io::ErrorKind::ReadOnlyFilesystem => DiskCondition::ReadOnly,
            io::ErrorKind::QuotaExceeded => DiskCondition::QuotaExceeded,
            _ => DiskCondition::Failed,
        }
    }

    /// What to do about it, after the condition in a message.
    fn hint(self) -> &'static str {
        match self {
            DiskCondition::NoSpace | DiskCondition::QuotaExceeded => {
                "; make room and run again: an interrupted crawl is taken up"
            }
            DiskCondition::ReadOnly => "",
            DiskCondition::Failed => "; the disk may be full or failing",
        }
    }
}

impl std::fmt::Display for DiskCondition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            DiskCondition::NoSpace => "no space left on device",
            DiskCondition::ReadOnly => "read-only file system",
            DiskCondition::QuotaExceeded => "disk quota exceeded",
            DiskCondition::Failed => "write failed",
        })
    }
}
