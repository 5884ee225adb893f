//! `HdfsPackStore`: packs on HDFS through hdfs-native (feature `hdfs`).
//!
//! # Blocking over async
//! hdfs-native is async (tokio). [`PackStore`](crate::PackStore) is synchronous, so the store owns
//! a small dedicated tokio runtime ([`RUNTIME_WORKER_THREADS`] worker threads) and blocks on it for
//! every call. **Do not call the store from inside an async context**: every method detects it
//! (`tokio::runtime::Handle::try_current`) and fails with
//! [`Error::AsyncContext`](crate::Error::AsyncContext) instead of panicking; use
//! `tokio::task::spawn_blocking`.
//!
//! # Failing fast
//! hdfs-native's defaults retry an unreachable NameNode for about three minutes. The store lowers
//! its failover/retry settings ([`HdfsOptions`]) and wraps every call in a `tokio::time::timeout`,
//! so a dead NameNode gives [`Error::Unavailable`](crate::Error::Unavailable) or
//! [`Error::Timeout`](crate::Error::Timeout) within seconds.
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
//!   [`Error::NotYetReadable`](crate::Error::NotYetReadable) until the pack is closed, or the dead
//!   writer's lease is recovered ([`HdfsPackStore::recover_lease`]).

mod client;
mod config;
mod read;
mod store;
mod webhdfs;
mod writer;

pub use config::{
    parse_hdfs_url, HdfsOptions, CONF_FAILOVER_MAX_ATTEMPTS, CONF_FAILOVER_SLEEP_BASE_MILLIS,
    CONF_FAILOVER_SLEEP_MAX_MILLIS, CONF_SOCKET_TIMEOUT_MILLIS, DEFAULT_BLOCK_SIZE,
    DEFAULT_WRITE_BUFFER_BYTES, HDFS_SCHEME, RUNTIME_WORKER_THREADS,
};
pub use store::HdfsPackStore;
pub use writer::HdfsPackWriter;
