use std::io::{self, SeekFrom};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::{BufMut, Bytes, BytesMut};
use futures::stream::BoxStream;
use futures::{Stream, StreamExt, stream};
use log::warn;
use tokio::io::{AsyncRead, AsyncSeek, ReadBuf};
use tokio::runtime::Handle;

use crate::common::config::Configuration;
use crate::ec::{EcSchema, resolve_ec_policy};
use crate::hdfs::block_reader::{DeadNodes, get_block_stream};
use crate::hdfs::block_writer::{BlockWriter, PipelineSetupError};
use crate::hdfs::crypto::FileCryptoCodec;
use crate::hdfs::protocol::{LeaseTracker, NamenodeProtocol};
use crate::proto::hdfs;
use crate::{HdfsError, Result};

/// harvest patch (d): the NameNode refuses `complete` until a DataNode has reported the last
/// block, which it does a few milliseconds after the last ack: the first retry comes after
/// 50 ms (was 500 ms, so most closes took half a second), doubling, and more of them so the
/// whole wait (25.5 s) is not shorter than before (15.5 s).
const COMPLETE_RETRY_DELAY_MS: u64 = 50;
const COMPLETE_RETRIES: u32 = 9;
/// harvest patch (c): new blocks asked for again after a failed pipeline setup (Java's
/// `dfs.client.block.write.retries` default): at most 4 attempts.
const BLOCK_WRITE_RETRIES: u32 = 3;

fn io_error(error: HdfsError) -> io::Error {
    io::Error::other(error)
}

struct PendingRead {
    stream: BoxStream<'static, Result<Bytes>>,
    end_position: usize,
}

pub struct FileReader {
    protocol: Arc<NamenodeProtocol>,
    located_blocks: hdfs::LocatedBlocksProto,
    ec_schema: Option<EcSchema>,
    position: usize,
    config: Arc<Configuration>,
    handle: Handle,
    pending_read: Option<std::sync::Mutex<PendingRead>>,
    crypto: Option<Arc<FileCryptoCodec>>,
    dead_nodes: Arc<DeadNodes>,
}

impl FileReader {
    pub(crate) fn new(
        protocol: Arc<NamenodeProtocol>,
        located_blocks: hdfs::LocatedBlocksProto,
        ec_schema: Option<EcSchema>,
        config: Arc<Configuration>,
        handle: Handle,
        crypto: Option<Arc<FileCryptoCodec>>,
    ) -> Self {
        Self {
            protocol,
            located_blocks,
            ec_schema,
            position: 0,
            config,
            handle,
            pending_read: None,
            crypto,
            dead_nodes: Arc::default(),
        }
    }

    /// Returns the total size of the file
    pub fn file_length(&self) -> usize {
        self.located_blocks.file_length as usize
    }

    /// Returns the remaining bytes left based on the current cursor position.
    pub fn remaining(&self) -> usize {
        if self.position > self.file_length() {
            0
        } else {
            self.file_length() - self.position
        }
    }

    /// Sets the cursor to the position. Panics if the position is beyond the end of the file
    pub fn set_position(&mut self, pos: usize) {
        if pos > self.file_length() {
            panic!("Cannot seek beyond the end of a file");
        }
        self.pending_read = None;
        self.position = pos;
    }

    /// Returns the current cursor position in the file
    pub fn tell(&self) -> usize {
        self.position
    }

    /// Read up to `len` bytes into a new [Bytes] object, advancing the internal position in the file.
    /// An empty [Bytes] object will be returned if the end of the file has been reached.
    pub async fn read_bytes(&mut self, len: usize) -> Result<Bytes> {
        self.pending_read = None;
        if self.position >= self.file_length() {
            Ok(Bytes::new())
        } else {
            let offset = self.position;
            self.position = usize::min(self.position + len, self.file_length());
            self.read_range(offset, self.position - offset).await
        }
    }

    /// Read up to `buf.len()` bytes into the provided slice, advancing the internal position in the file.
    /// Returns the number of bytes that were read, or 0 if the end of the file has been reached.
    pub async fn read_into(&mut self, buf: &mut [u8]) -> Result<usize> {
        self.pending_read = None;
        if self.position >= self.file_length() {
            Ok(0)
        } else {
            let offset = self.position;
            self.position = usize::min(self.position + buf.len(), self.file_length());
            let read_bytes = self.position - offset;
            self.read_range_buf(&mut buf[..read_bytes], offset).await?;
            Ok(read_bytes)
        }
    }

    /// Read up to `len` bytes starting at `offset` into a new [Bytes] object. The returned buffer
    /// could be smaller than `len` if `offset + len` extends beyond the end of the file.
    ///
    /// Panics if the requested range is outside of the file
    pub async fn read_range(&self, offset: usize, len: usize) -> Result<Bytes> {
        let mut stream = self.read_range_stream(offset, len);
        let mut buf = BytesMut::with_capacity(len);
        while let Some(bytes) = stream.next().await.transpose()? {
            buf.put(bytes);
        }
        Ok(buf.freeze())
    }

    /// Read file data into an existing buffer
    ///
    /// Panics if the requested range is outside of the file
    pub async fn read_range_buf(&self, mut buf: &mut [u8], offset: usize) -> Result<()> {
        let mut stream = self.read_range_stream(offset, buf.len());
        while let Some(bytes) = stream.next().await.transpose()? {
            buf.put(bytes);
        }

        Ok(())
    }

    /// Return a stream of `Bytes` objects containing the content of the file
    ///
    /// Panics if the requested range is outside of the file
    pub fn read_range_stream(
        &self,
        offset: usize,
        len: usize,
    ) -> impl Stream<Item = Result<Bytes>> + use<> {
        if offset + len > self.file_length() {
            panic!("Cannot read past end of the file");
        }

        let block_streams: Vec<BoxStream<Result<Bytes>>> = self
            .located_blocks
            .blocks
            .iter()
            .flat_map(move |block| {
                let block_file_start = block.offset as usize;
                let block_file_end = block_file_start + block.b.num_bytes() as usize;

                if block_file_start < (offset + len) && block_file_end > offset {
                    // We need to read this block
                    let block_start = offset - usize::min(offset, block_file_start);
                    let block_end = usize::min(offset + len, block_file_end) - block_file_start;
                    Some(get_block_stream(
                        Arc::clone(&self.protocol),
                        block.clone(),
                        block_start,
                        block_end - block_start,
                        self.ec_schema.clone(),
                        Arc::clone(&self.config),
                        self.handle.clone(),
                        self.crypto.clone(),
                        Arc::clone(&self.dead_nodes),
                    ))
                } else {
                    // No data is needed from this block
                    None
                }
            })
            .collect();

        stream::iter(block_streams).flatten()
    }
}

impl AsyncRead for FileReader {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if buf.remaining() == 0 {
            return Poll::Ready(Ok(()));
        }

        let starting_len = buf.filled().len();

        loop {
            if self.pending_read.is_none() {
                if self.position >= self.file_length() {
                    return Poll::Ready(Ok(()));
                }

                let offset = self.position;
                let len = usize::min(buf.remaining(), self.file_length() - self.position);
                let stream = self.read_range_stream(offset, len).boxed();
                self.pending_read = Some(std::sync::Mutex::new(PendingRead {
                    stream,
                    end_position: offset + len,
                }));
            }

            let poll_result = {
                let mut pending = self.pending_read.as_ref().unwrap().lock().unwrap();
                Pin::new(&mut pending.stream).poll_next(cx)
            };

            match poll_result {
                Poll::Ready(Some(Ok(bytes))) => {
                    self.position += bytes.len();
                    buf.put_slice(&bytes);

                    if self.pending_read.as_ref().is_some_and(|pending| {
                        self.position >= pending.lock().unwrap().end_position
                    }) {
                        self.pending_read = None;
                    }

                    if buf.remaining() == 0 {
                        return Poll::Ready(Ok(()));
                    }
                }
                Poll::Ready(Some(Err(error))) => {
                    self.pending_read = None;
                    return Poll::Ready(Err(io_error(error)));
                }
                Poll::Ready(None) => {
                    self.pending_read = None;
                    return Poll::Ready(Ok(()));
                }
                Poll::Pending => {
                    if buf.filled().len() > starting_len {
                        return Poll::Ready(Ok(()));
                    }
                    return Poll::Pending;
                }
            }
        }
    }
}

impl AsyncSeek for FileReader {
    fn start_seek(mut self: Pin<&mut Self>, position: SeekFrom) -> io::Result<()> {
        let file_length = self.file_length() as i128;
        let current = self.tell() as i128;
        let new_pos = match position {
            SeekFrom::Start(pos) => i128::from(pos),
            SeekFrom::End(offset) => file_length + i128::from(offset),
            SeekFrom::Current(offset) => current + i128::from(offset),
        };

        if new_pos < 0 || new_pos > file_length {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "cannot seek outside of file bounds",
            ));
        }

        self.set_position(new_pos as usize);
        Ok(())
    }

    fn poll_complete(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<u64>> {
        Poll::Ready(Ok(self.tell() as u64))
    }
}

pub struct FileWriter {
    src: String,
    protocol: Arc<NamenodeProtocol>,
    status: hdfs::HdfsFileStatusProto,
    config: Arc<Configuration>,
    handle: Handle,
    block_writer: Option<BlockWriter>,
    last_block: Option<hdfs::LocatedBlockProto>,
    closed: bool,
    bytes_written: usize,
    crypto: Option<Arc<FileCryptoCodec>>,
    /// harvest patch (e): an append opened with `NEW_BLOCK`: the first write starts a new
    /// block after the file's last one instead of reopening it.
    append_new_block: bool,
}

impl FileWriter {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        protocol: Arc<NamenodeProtocol>,
        src: String,
        status: hdfs::HdfsFileStatusProto,
        config: Arc<Configuration>,
        handle: Handle,
        // Some for append, None for create
        last_block: Option<hdfs::LocatedBlockProto>,
        crypto: Option<Arc<FileCryptoCodec>>,
    ) -> Self {
        protocol.add_file_lease(status.file_id(), status.namespace.clone());
        Self {
            protocol,
            src,
            status,
            config,
            handle,
            block_writer: None,
            last_block,
            closed: false,
            bytes_written: 0,
            crypto,
            append_new_block: false,
        }
    }

    /// harvest patch (e): marks an append opened with `NEW_BLOCK` (see `append_new_block`).
    pub(crate) fn starting_a_new_block(mut self) -> Self {
        self.append_new_block = true;
        self
    }

    async fn create_block_writer(&mut self) -> Result<()> {
        // harvest patch (c): the block to start from is either the partial last block of an
        // append (written into as it is: no new allocation) or a new block after `previous`.
        let previous = if let Some(last_block) = self.last_block.take() {
            // Append operation on first write. Erasure code appends always just create a new block.
            if last_block.b.num_bytes() < self.status.blocksize()
                && self.status.ec_policy.is_none()
                && !self.append_new_block
            {
                // The last block isn't full, just write data to it
                let block_writer = self.new_block_writer(last_block).await?;
                self.block_writer = Some(block_writer);
                return Ok(());
            }
            // The last block is full, so create a new block to write to
            Some(last_block.b)
        } else {
            // Not appending to an existing block, just create a new one
            // If there's an existing block writer, close it first
            if let Some(block_writer) = self.block_writer.take() {
                Some(block_writer.close().await?)
            } else {
                None
            }
        };

        // harvest patch (c): like Java's `DataStreamer.nextBlockOutputStream`, a new block whose
        // write pipeline cannot be set up (a DataNode the NameNode still thinks alive is down)
        // is abandoned and asked for again without the DataNode to blame, up to
        // `BLOCK_WRITE_RETRIES` more times. Upstream returned the first setup error, leaving
        // the block allocated with no replica, so the file could not be completed either.
        let mut excluded: Vec<hdfs::DatanodeInfoProto> = Vec::new();
        let mut retries = 0;
        loop {
            let new_block = self
                .protocol
                .add_block(&self.src, previous.clone(), self.status.file_id, &excluded)
                .await?
                .block;
            let abandoned = new_block.b.clone();
            let locs = new_block.locs.clone();
            match self.new_block_writer(new_block).await {
                Ok(block_writer) => {
                    self.block_writer = Some(block_writer);
                    return Ok(());
                }
                Err(e) => {
                    warn!(
                        "Abandoning block {} of {}: {}",
                        abandoned.block_id, self.src, e.error
                    );
                    if let Err(abandon) = self
                        .protocol
                        .abandon_block(&self.src, abandoned, self.status.file_id)
                        .await
                    {
                        warn!("Failed to abandon a block of {}: {}", self.src, abandon);
                        return Err(e.error);
                    }
                    let Some(node) = e.bad_node.and_then(|i| locs.get(i)) else {
                        return Err(e.error);
                    };
                    if retries >= BLOCK_WRITE_RETRIES {
                        return Err(e.error);
                    }
                    warn!(
                        "Excluding DataNode {}:{} for the next block of {}",
                        node.id.ip_addr, node.id.xfer_port, self.src
                    );
                    excluded.push(node.clone());
                    retries += 1;
                }
            }
        }
    }

    async fn new_block_writer(
        &self,
        block: hdfs::LocatedBlockProto,
    ) -> std::result::Result<BlockWriter, PipelineSetupError> {
        BlockWriter::new(
            Arc::clone(&self.protocol),
            block,
            self.protocol.get_cached_server_defaults().await?,
            Arc::clone(&self.config),
            self.handle.clone(),
            self.status
                .ec_policy
                .as_ref()
                .map(resolve_ec_policy)
                .transpose()?
                .as_ref(),
            &self.src,
            &self.status,
            self.crypto.clone(),
        )
        .await
    }

    async fn get_block_writer(&mut self) -> Result<&mut BlockWriter> {
        // If the current writer is full, or hasn't been created, create one
        if self.block_writer.as_ref().is_some_and(|b| b.is_full()) || self.block_writer.is_none() {
            self.create_block_writer().await?;
        }

        Ok(self.block_writer.as_mut().unwrap())
    }

    pub async fn write_bytes(&mut self, mut buf: Bytes) -> Result<usize> {
        let bytes_to_write = buf.len();
        while !buf.is_empty() {
            let block_writer = self.get_block_writer().await?;

            block_writer.write(&mut buf).await?;
        }

        self.bytes_written += bytes_to_write;

        Ok(bytes_to_write)
    }

    /// Persist all data written so far while keeping the writer open.
    ///
    /// On success, new readers can observe the synchronized length and the
    /// current replicated block has been synchronized by every DataNode in
    /// its pipeline. Erasure-coded files do not currently support this call.
    pub async fn hsync(&mut self) -> Result<()> {
        if self.closed {
            return Err(HdfsError::OperationFailed(
                "Cannot sync a closed file writer".to_string(),
            ));
        }
        let last_block_length = if let Some(block_writer) = self.block_writer.as_mut() {
            Some(block_writer.hsync().await?.num_bytes())
        } else {
            self.last_block.as_ref().map(|block| block.b.num_bytes())
        };
        self.protocol
            .fsync(&self.src, last_block_length, self.status.file_id)
            .await?;
        Ok(())
    }

    pub async fn close(&mut self) -> Result<()> {
        if !self.closed {
            let extended_block = if let Some(block_writer) = self.block_writer.take() {
                Some(block_writer.close().await?)
            } else {
                self.last_block.as_ref().map(|block| block.b.clone())
            };

            let mut retry_delay = COMPLETE_RETRY_DELAY_MS;
            let mut retries = 0;
            while retries < COMPLETE_RETRIES {
                let successful = self
                    .protocol
                    .complete(&self.src, extended_block.clone(), self.status.file_id)
                    .await?
                    .result;

                if successful {
                    self.closed = true;
                    return Ok(());
                }

                // Sleep in the provided runtime in case we are not called from a tokio runtime
                let sleep = {
                    let _guard = self.handle.enter();
                    tokio::time::sleep(Duration::from_millis(retry_delay))
                };
                sleep.await;

                retry_delay *= 2;
                retries += 1;
            }
            Err(HdfsError::OperationFailed(
                "Failed to complete file in time".to_string(),
            ))
        } else {
            Ok(())
        }
    }
}

impl Drop for FileWriter {
    fn drop(&mut self) {
        if !self.closed {
            warn!(
                "FileWriter dropped without being closed. File content may not have saved or may not be complete"
            );
        }

        self.protocol
            .remove_file_lease(self.status.file_id(), self.status.namespace.clone());
    }
}
