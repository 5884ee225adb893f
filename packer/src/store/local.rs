//! `LocalPackStore`: packs in a folder of the local filesystem.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use super::api::{split_prefix, validate_path, PackEntry, PackStore, PackWriter};
use crate::error::{DiskCondition, Error, Result};

/// A [`PackStore`] over a local folder.
///
/// Appends are plain `write(2)` calls (visible to readers at once); `sync` is `fsync` of the
/// file plus, on the first sync after `create`, `fsync` of every folder whose entry was
/// created for it (the file's parent and any new ancestors), so the file itself survives a
/// crash and not just its bytes.
#[derive(Debug, Clone)]
pub struct LocalPackStore {
    root: PathBuf,
}

impl LocalPackStore {
    /// Opens (creating it and its parents if needed) a store rooted at `root`.
    pub fn open(root: impl AsRef<Path>) -> Result<Self> {
        let root = root.as_ref();
        fs::create_dir_all(root).map_err(|e| disk_error(&root.display().to_string(), root, e))?;
        let root = root
            .canonicalize()
            .map_err(|e| Error::io(root.display().to_string(), e))?;
        Ok(Self { root })
    }

    /// The absolute root folder of the store.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Validates `path` and joins it to the root.
    fn full_path(&self, path: &str) -> Result<PathBuf> {
        validate_path(path)?;
        Ok(self.root.join(path))
    }

    /// An I/O error on the store path `rel` (see [`disk_error`]).
    fn error(&self, rel: &str, e: io::Error) -> Error {
        disk_error(rel, &self.root.join(rel), e)
    }

    /// Creates the missing folders between the root and `dir`, returning the folders whose
    /// entries changed (they need an fsync for the new entries to be durable).
    fn create_dirs(&self, rel: &str, dir: &Path) -> Result<Vec<PathBuf>> {
        let mut changed = Vec::new();
        let mut missing = Vec::new();
        let mut cur = dir;
        while cur != self.root && !cur.is_dir() {
            missing.push(cur.to_path_buf());
            match cur.parent() {
                Some(parent) => cur = parent,
                None => break,
            }
        }
        for d in missing.iter().rev() {
            match fs::create_dir(d) {
                Ok(()) => {
                    if let Some(parent) = d.parent() {
                        changed.push(parent.to_path_buf());
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists && d.is_dir() => {}
                Err(e) => return Err(disk_error(rel, d, e)),
            }
        }
        Ok(changed)
    }
}

impl PackStore for LocalPackStore {
    fn create(&self, path: &str) -> Result<Box<dyn PackWriter>> {
        let full = self.full_path(path)?;
        let parent = full.parent().unwrap_or(&self.root).to_path_buf();
        let mut dirs_to_sync = self.create_dirs(path, &parent)?;
        let file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&full)
            .map_err(|e| disk_error(path, &full, e))?;
        // Held until the writer closes: an `append` of this pack elsewhere finds it busy.
        if let Err(e) = file.try_lock() {
            tracing::debug!(path, error = %e, "cannot lock a new pack");
        }
        dirs_to_sync.push(parent);
        dirs_to_sync.dedup();
        Ok(Box::new(LocalPackWriter {
            path: path.to_string(),
            full,
            file: Some(file),
            position: 0,
            created: true,
            dirs_to_sync,
        }))
    }

    /// The file is opened for writing and locked (`flock`, exclusive, not waiting); a lock
    /// held elsewhere is [`Error::Busy`]. A file deleted or replaced between the open and the
    /// lock (a compaction that held it and removed it) is [`Error::NotFound`]: what is locked
    /// must still be the file at `path`.
    fn append(&self, path: &str) -> Result<Box<dyn PackWriter>> {
        let full = self.full_path(path)?;
        let file = OpenOptions::new()
            .write(true)
            .open(&full)
            .map_err(|e| Error::io(path, e))?;
        match file.try_lock() {
            Ok(()) => {}
            Err(fs::TryLockError::WouldBlock) => {
                return Err(Error::Busy {
                    path: path.to_string(),
                })
            }
            Err(fs::TryLockError::Error(e)) => return Err(self.error(path, e)),
        }
        let held = file.metadata().map_err(|e| self.error(path, e))?;
        let still_there = fs::metadata(&full).is_ok_and(|now| same_file(&held, &now));
        if !still_there || !held.is_file() {
            return Err(Error::NotFound {
                path: path.to_string(),
            });
        }
        let mut file = file;
        let position = file
            .seek(SeekFrom::End(0))
            .map_err(|e| self.error(path, e))?;
        Ok(Box::new(LocalPackWriter {
            path: path.to_string(),
            full,
            file: Some(file),
            position,
            created: false,
            dirs_to_sync: Vec::new(),
        }))
    }

    fn read_range(&self, path: &str, offset: u64, len: u64) -> Result<Vec<u8>> {
        let full = self.full_path(path)?;
        let mut file = File::open(&full).map_err(|e| Error::io(path, e))?;
        let file_len = file.metadata().map_err(|e| Error::io(path, e))?.len();
        let out_of_range = || Error::OutOfRange {
            path: path.to_string(),
            offset,
            len,
            file_len,
        };
        let end = offset.checked_add(len).ok_or_else(out_of_range)?;
        if end > file_len {
            return Err(out_of_range());
        }
        let len_usize = usize::try_from(len).map_err(|_| out_of_range())?;
        file.seek(SeekFrom::Start(offset))
            .map_err(|e| Error::io(path, e))?;
        let mut buf = vec![0u8; len_usize];
        file.read_exact(&mut buf).map_err(|e| match e.kind() {
            // The file shrank between metadata() and the read.
            io::ErrorKind::UnexpectedEof => out_of_range(),
            _ => Error::io(path, e),
        })?;
        Ok(buf)
    }

    fn list(&self, prefix: &str) -> Result<Vec<PackEntry>> {
        let (dir, partial) = split_prefix(prefix)?;
        let start = if dir.is_empty() {
            self.root.clone()
        } else {
            self.root.join(dir)
        };
        let mut out = Vec::new();
        if start.is_dir() {
            walk(&start, dir, &mut out)?;
        }
        out.retain(|e| e.path.starts_with(prefix));
        let _ = partial; // filtering by the full prefix covers the partial name
        out.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(out)
    }

    fn len(&self, path: &str) -> Result<u64> {
        let full = self.full_path(path)?;
        let meta = fs::metadata(&full).map_err(|e| Error::io(path, e))?;
        if !meta.is_file() {
            return Err(Error::NotFound {
                path: path.to_string(),
            });
        }
        Ok(meta.len())
    }

    fn delete(&self, path: &str) -> Result<()> {
        let full = self.full_path(path)?;
        fs::remove_file(&full).map_err(|e| Error::io(path, e))
    }

    fn rename(&self, from: &str, to: &str) -> Result<()> {
        let src = self.full_path(from)?;
        let dst = self.full_path(to)?;
        if !src.is_file() {
            return Err(Error::NotFound {
                path: from.to_string(),
            });
        }
        if dst.exists() {
            return Err(Error::AlreadyExists {
                path: to.to_string(),
            });
        }
        if let Some(parent) = dst.parent() {
            self.create_dirs(to, parent)?;
        }
        fs::rename(&src, &dst).map_err(|e| self.error(from, e))
    }

    /// A local file has no lease: what a dead writer appended is readable
    /// already; it is synced here (the file and its folder) so that what is
    /// read from it next is durable too.
    fn recover_lease(&self, path: &str) -> Result<bool> {
        let full = self.full_path(path)?;
        File::open(&full)
            .and_then(|f| f.sync_all())
            .map_err(|e| self.error(path, e))?;
        if let Some(parent) = full.parent() {
            File::open(parent)
                .and_then(|d| d.sync_all())
                .map_err(|e| self.error(path, e))?;
        }
        Ok(true)
    }
}

/// Whether two metadata describe the same file (device and inode).
#[cfg(unix)]
fn same_file(a: &fs::Metadata, b: &fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    a.dev() == b.dev() && a.ino() == b.ino()
}

/// Whether two metadata describe the same file (no inode to compare: length and time).
#[cfg(not(unix))]
fn same_file(a: &fs::Metadata, b: &fs::Metadata) -> bool {
    a.len() == b.len() && a.modified().ok() == b.modified().ok()
}

/// An I/O error on the store path `rel` (on disk: `file`): a disk that refuses the write
/// (full, read-only, over quota) is [`Error::Disk`], naming the file; others as
/// [`Error::io`] maps them.
fn disk_error(rel: &str, file: &Path, e: io::Error) -> Error {
    match DiskCondition::of(&e) {
        Some(condition) => Error::Disk {
            condition,
            path: rel.to_string(),
            file: file.display().to_string(),
            source: e,
        },
        None => Error::io(rel, e),
    }
}

/// Recursively collects regular files below `dir`; `rel` is `dir`'s store path.
fn walk(dir: &Path, rel: &str, out: &mut Vec<PackEntry>) -> Result<()> {
    let entries = fs::read_dir(dir).map_err(|e| Error::io(rel, e))?;
    for entry in entries {
        let entry = entry.map_err(|e| Error::io(rel, e))?;
        let Some(name) = entry.file_name().to_str().map(str::to_string) else {
            tracing::warn!(dir = rel, "skipping non-UTF-8 file name in pack store");
            continue;
        };
        let child = if rel.is_empty() {
            name
        } else {
            format!("{rel}/{name}")
        };
        let file_type = entry.file_type().map_err(|e| Error::io(&child, e))?;
        if file_type.is_dir() {
            walk(&entry.path(), &child, out)?;
        } else if file_type.is_file() {
            let len = entry.metadata().map_err(|e| Error::io(&child, e))?.len();
            out.push(PackEntry { path: child, len });
        }
    }
    Ok(())
}

/// Writer of one file of a [`LocalPackStore`].
#[derive(Debug)]
pub struct LocalPackWriter {
    path: String,
    /// The file on disk.
    full: PathBuf,
    /// `None` once closed.
    file: Option<File>,
    position: u64,
    /// Made by `create` (not `append`): removed again if its first append fails.
    created: bool,
    /// Folders to fsync on the next sync (emptied after the first successful one).
    dirs_to_sync: Vec<PathBuf>,
}

impl LocalPackWriter {
    fn file(&mut self) -> Result<&mut File> {
        let path = &self.path;
        self.file.as_mut().ok_or_else(|| Error::Io {
            path: path.clone(),
            source: io::Error::other("writer already closed"),
        })
    }

    fn error(&self, e: io::Error) -> Error {
        disk_error(&self.path, &self.full, e)
    }

    fn sync_inner(&mut self) -> Result<()> {
        let synced = self.file()?.sync_data();
        synced.map_err(|e| self.error(e))?;
        for dir in &self.dirs_to_sync {
            File::open(dir)
                .and_then(|d| d.sync_all())
                .map_err(|e| disk_error(&self.path, dir, e))?;
        }
        self.dirs_to_sync.clear();
        Ok(())
    }
}

impl PackWriter for LocalPackWriter {
    /// A failed append is cut off again: whatever part of `bytes` reached the file is
    /// truncated away, so the pack still ends with its last whole record (a full disk leaves
    /// no torn tail, and the cut gives back the room the part took). A pack created whose
    /// first append failed holds nothing and is removed.
    fn append(&mut self, bytes: &[u8]) -> Result<u64> {
        let offset = self.position;
        let file = self.file()?;
        let Err(e) = file.write_all(bytes) else {
            self.position += bytes.len() as u64;
            return Ok(offset);
        };
        let cut = file
            .set_len(offset)
            .and_then(|()| file.seek(SeekFrom::Start(offset)).map(drop));
        match cut {
            Err(cut) => tracing::warn!(
                path = %self.path,
                offset,
                error = %cut,
                "cannot cut a failed append off the pack; its tail is torn"
            ),
            Ok(()) if offset == 0 && self.created => {
                if let Err(rm) = fs::remove_file(&self.full) {
                    tracing::debug!(path = %self.path, error = %rm, "cannot remove an empty pack");
                }
            }
            Ok(()) => {}
        }
        Err(self.error(e))
    }

    fn position(&self) -> u64 {
        self.position
    }

    fn sync(&mut self) -> Result<()> {
        self.sync_inner()
    }

    fn close(mut self: Box<Self>) -> Result<()> {
        let result = self.sync_inner();
        // Closed even when the sync failed: the caller owns the error, Drop stays quiet.
        self.file = None;
        result
    }
}

impl Drop for LocalPackWriter {
    fn drop(&mut self) {
        if self.file.is_some() {
            tracing::warn!(
                path = %self.path,
                position = self.position,
                "pack writer dropped without close(); unsynced bytes may not be durable"
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::conformance;

    fn store() -> (tempfile::TempDir, LocalPackStore) {
        let dir = tempfile::tempdir().unwrap();
        let store = LocalPackStore::open(dir.path().join("root")).unwrap();
        (dir, store)
    }

    #[test]
    fn conformance_suite_passes() {
        let (_dir, store) = store();
        conformance::run_all(&store);
    }

    #[test]
    fn conformance_suite_is_rerunnable_on_the_same_store() {
        let (_dir, store) = store();
        conformance::run_all(&store);
        conformance::run_all(&store);
    }

    #[test]
    fn files_land_below_the_root() {
        let (dir, store) = store();
        let mut w = store.create("t/2024/05/01/c1-0.warc.gz").unwrap();
        w.append(b"abc").unwrap();
        w.close().unwrap();
        let on_disk = fs::read(dir.path().join("root/t/2024/05/01/c1-0.warc.gz")).unwrap();
        assert_eq!(on_disk, b"abc");
    }

    #[cfg(unix)]
    #[test]
    fn symlinked_folders_are_not_followed_by_list() {
        let (dir, store) = store();
        let outside = dir.path().join("outside");
        fs::create_dir_all(&outside).unwrap();
        fs::write(outside.join("secret"), b"x").unwrap();
        std::os::unix::fs::symlink(&outside, store.root().join("link")).unwrap();
        store.create("real").unwrap().close().unwrap();
        let paths: Vec<_> = store
            .list("")
            .unwrap()
            .into_iter()
            .map(|e| e.path)
            .collect();
        assert_eq!(paths, vec!["real".to_string()]);
    }

    #[test]
    fn open_creates_nested_root() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("a/b/c");
        let store = LocalPackStore::open(&root).unwrap();
        assert!(root.is_dir());
        assert!(store.root().is_absolute());
    }
}
