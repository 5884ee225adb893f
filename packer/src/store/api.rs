//! The `PackStore` / `PackWriter` storage traits and the path rules every backend keeps.

use crate::error::{Error, Result};

/// URL scheme of the local-folder backend.
pub const FILE_SCHEME: &str = "file";
/// Longest store path accepted (bytes).
const MAX_PATH_BYTES: usize = 1024;

/// One file of a store, as returned by [`PackStore::list`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackEntry {
    /// Store-relative, '/'-separated path.
    pub path: String,
    /// Length in bytes at the time of listing.
    pub len: u64,
}

/// A place where packs (large append-only files) live: a local folder, HDFS, ...
///
/// # Paths
/// Every path is relative to the store root and '/'-separated (`news/2024/05/01/c3-0.warc.gz`).
/// Empty paths, absolute paths, backslashes, NUL bytes and `.`/`..`/empty segments are
/// rejected with [`Error::InvalidPath`]; a store never touches anything outside its root.
///
/// # Durability
/// Bytes appended through a [`PackWriter`] are durable (survive a crash or power loss) only
/// once [`PackWriter::sync`] or [`PackWriter::close`] has returned `Ok`. Until then a crash
/// may leave the file shorter than [`PackWriter::position`], or with a torn last record.
/// Readers of the same store are guaranteed to see appended bytes after `sync`/`close`
/// (backends may make them visible earlier). Callers must not publish (index) a location
/// before the bytes behind it are durable.
///
/// # Concurrency
/// Implementations are `Send + Sync`; any method may be called from several threads.
/// A file must have at most one writer: `create` fails when the file already exists and
/// `append` when another writer holds it, which stops two writers from racing on one path.
///
/// # Errors
/// Backends map failures onto the shared [`Error`] variants: missing file ->
/// [`Error::NotFound`], existing file -> [`Error::AlreadyExists`], range past the end ->
/// [`Error::OutOfRange`]. The [`crate::conformance`] suite checks this.
pub trait PackStore: Send + Sync {
    /// Creates a new, empty file at `path` (making parent folders) and returns its writer.
    /// Fails with [`Error::AlreadyExists`] if the file exists: packs are never overwritten.
    fn create(&self, path: &str) -> Result<Box<dyn PackWriter>>;

    /// Reads exactly `len` bytes starting at `offset`. Fails with [`Error::OutOfRange`] if
    /// the range extends past the end of the file, [`Error::NotFound`] if it does not exist.
    fn read_range(&self, path: &str, offset: u64, len: u64) -> Result<Vec<u8>>;

    /// Lists all files (recursively) whose store path starts with `prefix` (a plain string
    /// prefix, so `news/2024/05/` and `news/2024/05/01/c3-` both work; `""` lists all),
    /// sorted by path. A prefix below a folder that does not exist gives an empty list.
    fn list(&self, prefix: &str) -> Result<Vec<PackEntry>>;

    /// Current length of the file in bytes (only durable bytes are guaranteed to count).
    fn len(&self, path: &str) -> Result<u64>;

    /// Deletes the file. Fails with [`Error::NotFound`] if it does not exist.
    fn delete(&self, path: &str) -> Result<()>;

    /// Renames a file, making parent folders of `to`. Fails with [`Error::NotFound`] if
    /// `from` is missing and [`Error::AlreadyExists`] if `to` exists (never overwrites).
    fn rename(&self, from: &str, to: &str) -> Result<()>;

    /// Makes sure a file left open by a writer that died (crashed process) is closed, so that
    /// every byte up to that writer's last `sync` is readable. Returns `Ok(true)` if the file
    /// was already closed. Fences any live writer of the file: call it only for files no
    /// live process writes (the [`crate::Packer`] calls it on the highest existing part of a
    /// family before starting a new one). Default: nothing to recover (`Ok(true)` after
    /// checking the path), which is right for stores without leases such as a local folder.
    fn recover_lease(&self, path: &str) -> Result<bool> {
        validate_path(path)?;
        Ok(true)
    }

    /// Opens an existing, closed file for appending and returns its writer, positioned at the
    /// file's end. The writer owns the file until it is closed or dropped: while it lives,
    /// another `append` of the same file, from this process or another, fails with
    /// [`Error::Busy`] (a local folder: an exclusive lock on the file; HDFS: the file's lease).
    /// So `append` doubles as a claim: a caller that must keep writers out of a file while it
    /// reads and deletes it (compaction) holds one without appending. Fails with
    /// [`Error::NotFound`] if the file does not exist. Default, for a store that cannot
    /// append: [`Error::AppendUnsupported`].
    fn append(&self, path: &str) -> Result<Box<dyn PackWriter>> {
        validate_path(path)?;
        Err(Error::AppendUnsupported {
            path: path.to_string(),
        })
    }
}

/// Append-only writer of one file of a [`PackStore`].
///
/// Call [`PackWriter::close`] when done. A writer dropped without `close` keeps what the
/// operating system already has, but logs a warning: the last bytes may not be durable.
pub trait PackWriter: Send {
    /// Appends `bytes` at the end of the file and returns the offset at which they start.
    /// The bytes are not durable until [`PackWriter::sync`]. If this fails, the file may
    /// hold a prefix of `bytes`; the writer should not be used for further appends.
    fn append(&mut self, bytes: &[u8]) -> Result<u64>;

    /// Offset the next append will start at (= bytes appended so far).
    fn position(&self) -> u64;

    /// Makes every byte appended so far durable (fsync on a local disk, hflush/hsync on
    /// HDFS), including the file's directory entry after `create`. After `Ok`, a crash does
    /// not lose these bytes.
    fn sync(&mut self) -> Result<()>;

    /// Syncs (as [`PackWriter::sync`]) and closes the file. Consumes the writer.
    fn close(self: Box<Self>) -> Result<()>;
}

/// Checks that `path` is a relative, '/'-separated path with only normal segments.
pub fn validate_path(path: &str) -> Result<()> {
    let reject = |reason| {
        Err(Error::InvalidPath {
            path: path.to_string(),
            reason,
        })
    };
    if path.is_empty() {
        return reject("empty path");
    }
    if path.len() > MAX_PATH_BYTES {
        return reject("path too long");
    }
    if path.starts_with('/') {
        return reject("absolute paths are not allowed");
    }
    if path.contains('\\') {
        return reject("backslashes are not allowed; use '/'");
    }
    if path.contains('\0') {
        return reject("NUL bytes are not allowed");
    }
    for segment in path.split('/') {
        match segment {
            "" => return reject("empty path segment"),
            "." | ".." => return reject("'.' and '..' segments are not allowed"),
            _ => {}
        }
    }
    Ok(())
}

/// Splits a list prefix into its folder part (validated, may be empty) and the partial
/// name after the last '/'.
pub(crate) fn split_prefix(prefix: &str) -> Result<(&str, &str)> {
    let (dir, partial) = match prefix.rfind('/') {
        Some(i) => (&prefix[..i], &prefix[i + 1..]),
        None => ("", prefix),
    };
    if !dir.is_empty() || prefix.starts_with('/') {
        validate_path(dir).map_err(|_| Error::InvalidPath {
            path: prefix.to_string(),
            reason: "prefix folder must be a valid relative path",
        })?;
    }
    if partial.contains('\\') || partial.contains('\0') {
        return Err(Error::InvalidPath {
            path: prefix.to_string(),
            reason: "backslashes and NUL bytes are not allowed",
        });
    }
    Ok((dir, partial))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validate_path_accepts_normal_relative_paths() {
        for ok in ["a", "news/2024/05/01/c3-0.warc.gz", "a/b.c/..d", "军事/x"] {
            assert!(validate_path(ok).is_ok(), "{ok} should be accepted");
        }
    }

    #[test]
    fn validate_path_rejects_traversal_and_absolute() {
        for bad in [
            "",
            "/etc/passwd",
            "../x",
            "a/../b",
            "a/./b",
            "a//b",
            "a/",
            "a\\b",
            "a\0b",
            ".",
        ] {
            assert!(
                matches!(validate_path(bad), Err(Error::InvalidPath { .. })),
                "{bad:?} should be rejected"
            );
        }
    }

    #[test]
    fn split_prefix_handles_partial_names() {
        assert_eq!(split_prefix("").unwrap(), ("", ""));
        assert_eq!(split_prefix("news").unwrap(), ("", "news"));
        assert_eq!(split_prefix("news/2024/").unwrap(), ("news/2024", ""));
        assert_eq!(split_prefix("news/2024/c3-").unwrap(), ("news/2024", "c3-"));
        assert!(split_prefix("../x").is_err());
        assert!(split_prefix("/abs/").is_err());
        assert!(split_prefix("/").is_err());
    }
}
