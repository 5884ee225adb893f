//! One attempt of a read of an [`HdfsPackStore`](super::HdfsPackStore): from the cached
//! block locations, from the copy of the block this process is writing, or (bytes another
//! process synced into a block it is still writing) over WebHDFS.

use std::sync::Arc;

use crate::error::{Error, Result};

use super::client::{lock, Inner};

/// Most files whose block locations are cached for reads (the cache is cleared when full).
const READER_CACHE_ENTRIES: usize = 1024;

impl Inner {
    /// One attempt of `read_range`.
    pub(super) fn read_once(
        &self,
        path: &str,
        full: &str,
        offset: u64,
        len: u64,
    ) -> Result<Vec<u8>> {
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
