//! [`HdfsPackWriter`]: one pack being written. Appends are buffered and handed to HDFS in
//! pieces; the copy of the block being filled, which HDFS cannot serve yet, is kept for
//! this process's reads and trimmed as blocks complete.

use std::future::Future;
use std::sync::Arc;

use bytes::Bytes;

use crate::error::{Error, Result};
use crate::store::api::PackWriter;

use super::client::{lock, Inner, SharedTail};

/// Writer of one pack of an [`HdfsPackStore`](super::HdfsPackStore) (holds the file's HDFS lease
/// until closed).
pub struct HdfsPackWriter {
    pub(super) inner: Arc<Inner>,
    pub(super) path: String,
    pub(super) full: String,
    /// `None` once closed.
    pub(super) writer: Option<hdfs_native::file::FileWriter>,
    /// Appended bytes not yet handed to HDFS.
    pub(super) buffer: Vec<u8>,
    /// Bytes appended so far.
    pub(super) position: u64,
    /// Bytes handed to HDFS so far.
    pub(super) handed: u64,
    /// Where this writer's first block starts: 0 for a created pack, its length before an
    /// append (whose bytes go into new blocks).
    pub(super) blocks_from: u64,
    pub(super) tail: SharedTail,
    /// Set when an HDFS call failed or timed out; the writer refuses further work.
    pub(super) failed: Option<String>,
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
